/* Matrix Market I/O: every shared matrix against an independent sscanf reader, write/read
 * round trips (plain and gzip), dense arrays, hand-computed symmetric / skew / duplicate
 * cases, and one check per malformed-input rule (code, file name and line in the message). */
#include "check.h"

#include <stdint.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

static coal_ctx ctx;
static char tmpdir[256];

/* ---- independent reference reader (zlib gzgets + sscanf, for well-formed files) ---------- */
typedef struct {
  int32_t i, j;
  double v;
} trip;

static int trip_cmp(const void *a, const void *b) {
  const trip *x = a, *y = b;
  if (x->i != y->i) return x->i < y->i ? -1 : 1;
  return (x->j > y->j) - (x->j < y->j);
}

/* Returns the number of (sorted, duplicate-summed) entries, or -1; *sym gets 1/2 for
 * symmetric / skew, *field 'r', 'i' or 'p'; *stored the entry count on the size line. */
static int64_t ref_read(const char *path, int64_t *m, int64_t *n, int64_t *stored, int *sym,
                        char *field, trip **out) {
  gzFile g = gzopen(path, "rb");
  if (!g) return -1;
  char line[1024], obj[64], fmt[64], fld[64], sy[64];
  int64_t cnt = 0, cap = 0, nd = -1, e = 0;
  trip *t = NULL;
  *sym = 0;
  if (!gzgets(g, line, sizeof line) ||
      sscanf(line, "%%%%MatrixMarket %63s %63s %63s %63s", obj, fmt, fld, sy) != 4)
    goto bad;
  *field = (char)(fld[0] | 0x20);
  *sym = (sy[0] | 0x20) == 's' ? ((sy[1] | 0x20) == 'k' ? 2 : 1) : 0;
  while (gzgets(g, line, sizeof line)) {
    if (line[0] == '%' || line[0] == '\n') continue;
    long long a, b, c;
    if (nd < 0) {
      if (sscanf(line, "%lld %lld %lld", &a, &b, &c) != 3) goto bad;
      *m = a, *n = b, *stored = nd = c;
      cap = 2 * nd + 1;
      t = malloc(sizeof(trip) * (size_t)cap);
      continue;
    }
    int i, j;
    double v = 1.0;
    if (e == nd) goto bad;
    if (*field == 'p' ? sscanf(line, "%d %d", &i, &j) != 2
                      : sscanf(line, "%d %d %lf", &i, &j, &v) != 3)
      goto bad;
    t[cnt++] = (trip){i - 1, j - 1, v};
    if (*sym && i != j) t[cnt++] = (trip){j - 1, i - 1, *sym == 2 ? -v : v};
    e++;
  }
  gzclose(g);
  if (e != nd) {
    free(t);
    return -1;
  }
  qsort(t, (size_t)cnt, sizeof(trip), trip_cmp);
  int64_t w = 0;
  for (int64_t k = 0; k < cnt; k++) {
    if (w > 0 && t[w - 1].i == t[k].i && t[w - 1].j == t[k].j)
      t[w - 1].v += t[k].v;
    else
      t[w++] = t[k];
  }
  *out = t;
  return w;
bad:
  gzclose(g);
  free(t);
  return -1;
}

/* 1 when A holds exactly the triples (structure and bit patterns of the values). */
static int mat_equals(coal_mat A, int64_t m, int64_t n, const trip *t, int64_t cnt) {
  int64_t am, an, annz;
  coal_mat_size(A, &am, &an, &annz);
  if (am != m || an != n || annz != cnt) return 0;
  int64_t *rp = malloc(sizeof(int64_t) * (size_t)(m + 1));
  int32_t *ci = malloc(sizeof(int32_t) * (size_t)(cnt + 1));
  double *v = malloc(sizeof(double) * (size_t)(cnt + 1));
  coal_mat_get_csr(A, rp, ci, v);
  int ok = 1;
  for (int64_t i = 0; i < m && ok; i++)
    for (int64_t p = rp[i]; p < rp[i + 1] && ok; p++)
      ok = t[p].i == i && t[p].j == ci[p] && memcmp(&t[p].v, &v[p], sizeof(double)) == 0;
  free(rp), free(ci), free(v);
  return ok;
}

/* Two matrices with identical CSR arrays (values compared bit for bit). */
static int mat_same(coal_mat A, coal_mat B) {
  int64_t m, n, nnz, m2, n2, nnz2;
  coal_mat_size(A, &m, &n, &nnz);
  coal_mat_size(B, &m2, &n2, &nnz2);
  if (m != m2 || n != n2 || nnz != nnz2 || coal_mat_dtype(A) != coal_mat_dtype(B)) return 0;
  size_t es = coal_mat_dtype(A) == COAL_F64 ? 8 : 4;
  int64_t *r1 = malloc(8 * (size_t)(m + 1)), *r2 = malloc(8 * (size_t)(m + 1));
  int32_t *c1 = malloc(4 * (size_t)(nnz + 1)), *c2 = malloc(4 * (size_t)(nnz + 1));
  char *v1 = malloc(es * (size_t)(nnz + 1)), *v2 = malloc(es * (size_t)(nnz + 1));
  coal_mat_get_csr(A, r1, c1, v1);
  coal_mat_get_csr(B, r2, c2, v2);
  int ok = !memcmp(r1, r2, 8 * (size_t)(m + 1)) && !memcmp(c1, c2, 4 * (size_t)nnz) &&
           !memcmp(v1, v2, es * (size_t)nnz);
  free(r1), free(r2), free(c1), free(c2), free(v1), free(v2);
  return ok;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void mpath(char *out, size_t n, const char *name) {
  snprintf(out, n, "%s/%s.mtx.gz", check_matrices_dir(), name);
}

static void test_shared_matrices(void) {
  char **paths;
  int files = check_list_matrices(&paths, 53); /* 53 files in ../shared/matrices */
  for (int f = 0; f < files; f++) {
    const char *path = paths[f];
    coal_mat A = NULL;
    coal_status st = coal_mat_read_mm(ctx, path, COAL_F64, &A);
    if (!strcmp(check_basename(path), "mhd1280b.mtx.gz")) { /* the one complex Hermitian file */
      CHECK(st == COAL_ERR_UNSUPPORTED && strstr(coal_ctx_last_error(ctx), "complex"), "%s: %s",
            path, coal_ctx_last_error(ctx));
      continue;
    }
    CHECK(st == COAL_SUCCESS, "%s: %s", path, coal_ctx_last_error(ctx));
    int64_t m = 0, n = 0, stored = 0, cnt;
    int sym = 0;
    char field = 0;
    trip *t = NULL;
    cnt = ref_read(path, &m, &n, &stored, &sym, &field, &t);
    CHECK(cnt >= 0, "reference reader failed on %s", path);
    if (st == COAL_SUCCESS && cnt >= 0) {
      CHECK(cnt >= stored && cnt <= (sym ? 2 * stored : stored), "%s: %lld entries from %lld", path,
            (long long)cnt, (long long)stored);
      CHECK(mat_equals(A, m, n, t, cnt), "%s differs from the reference reader", path);
    }
    free(t);
    coal_mat_destroy(&A);
  }
  check_free_matrices(paths, files);
}

/* Counts after mirroring, from the diagonal counts of the files (n + 2 * strict lower). */
static void test_known_counts(void) {
  struct {
    const char *name;
    int64_t m, n, nnz;
    double first; /* value of the first stored entry of row 1 (NaN: skip) */
  } k[] = {
      {"nos4", 100, 100, 594, 0.17155418},        /* 347 stored, 100 diagonal */
      {"1138_bus", 1138, 1138, 4054, NAN},        /* 2596 stored, 1138 diagonal */
      {"jgl009", 9, 9, 50, 1.0},                  /* general pattern */
      {"ca-GrQc", 5242, 5242, 28980, NAN},        /* 14496 stored, 12 diagonal */
      {"Trefethen_2000", 2000, 2000, 41906, 2.0}, /* integer, 21953 stored, 2000 diagonal */
      {"lp_afiro", 27, 51, 102, NAN},             /* rectangular */
  };
  for (size_t q = 0; q < sizeof k / sizeof k[0]; q++) {
    char path[1024];
    mpath(path, sizeof path, k[q].name);
    coal_mat A = NULL;
    CHECK_OK(ctx, coal_mat_read_mm(ctx, path, COAL_F64, &A));
    if (!A) continue;
    int64_t m, n, nnz;
    coal_mat_size(A, &m, &n, &nnz);
    CHECK(m == k[q].m && n == k[q].n && nnz == k[q].nnz, "%s: %lld x %lld, %lld nonzeros",
          k[q].name, (long long)m, (long long)n, (long long)nnz);
    double *v = malloc(sizeof(double) * (size_t)nnz);
    coal_mat_get_csr(A, NULL, NULL, v);
    if (!isnan(k[q].first)) CHECK(v[0] == k[q].first, "%s: first value %.17g", k[q].name, v[0]);
    if (!strcmp(k[q].name, "jgl009") || !strcmp(k[q].name, "ca-GrQc")) {
      int ones = 1;
      for (int64_t p = 0; p < nnz; p++) ones &= v[p] == 1.0;
      CHECK(ones, "%s: pattern values must be 1", k[q].name);
    }
    int sym = -1;
    coal_mat_is_symmetric(A, &sym);
    CHECK(sym == (k[q].m == k[q].n && strcmp(k[q].name, "jgl009") != 0), "%s: symmetric %d",
          k[q].name, sym);
    free(v);
    coal_mat_destroy(&A);
  }
  /* speed: the parser is linear; the largest files must read quickly */
  const char *big[] = {"bodyy5", "wathen100"};
  for (int q = 0; q < 2; q++) {
    char path[1024];
    mpath(path, sizeof path, big[q]);
    coal_mat A = NULL;
    double t0 = now();
    CHECK_OK(ctx, coal_mat_read_mm(ctx, path, COAL_F64, &A));
    double dt = now() - t0;
    printf("read %s: %.3f s\n", big[q], dt);
    CHECK(dt < 10.0, "reading %s took %.2f s", big[q], dt);
    coal_mat_destroy(&A);
  }
}

static void test_round_trip(void) {
  const char *names[] = {"nos4",           "jgl009",   "west0067", "lp_afiro",
                         "Trefethen_2000", "bcsstk04", "cage5",    "illc1850"};
  for (size_t q = 0; q < sizeof names / sizeof names[0]; q++) {
    for (int dt = 0; dt < 2; dt++) {
      coal_dtype dtype = dt ? COAL_F32 : COAL_F64;
      char path[1024];
      mpath(path, sizeof path, names[q]);
      coal_mat A = NULL;
      CHECK_OK(ctx, coal_mat_read_mm(ctx, path, dtype, &A));
      if (!A) continue;
      for (int gz = 0; gz < 2; gz++) {
        char out[512];
        snprintf(out, sizeof out, "%s/%s.mtx%s", tmpdir, names[q], gz ? ".gz" : "");
        CHECK_OK(ctx, coal_mat_write_mm(A, out));
        unsigned char head[16] = {0};
        FILE *f = fopen(out, "rb");
        size_t got = f ? fread(head, 1, sizeof head, f) : 0;
        if (f) fclose(f);
        if (gz)
          CHECK(got >= 2 && head[0] == 0x1f && head[1] == 0x8b, "%s is not gzip", out);
        else
          CHECK(got == 16 && !memcmp(head, "%%MatrixMarket m", 16), "%s: bad banner", out);
        coal_mat B = NULL;
        CHECK_OK(ctx, coal_mat_read_mm(ctx, out, dtype, &B));
        if (B) CHECK(mat_same(A, B), "%s (dtype %d, gz %d): round trip differs", names[q], dt, gz);
        coal_mat_destroy(&B);
        unlink(out);
      }
      coal_mat_destroy(&A);
    }
  }
}

static void test_dense_round_trip(void) {
  const int64_t n = 7, k = 3;
  for (int dt = 0; dt < 2; dt++)
    for (int lay = 0; lay < 2; lay++) {
      coal_dtype dtype = dt ? COAL_F32 : COAL_F64;
      coal_layout layout = lay ? COAL_ROW_MAJOR : COAL_COL_MAJOR;
      size_t es = dt ? 4 : 8;
      coal_bvec X = NULL;
      CHECK_OK(ctx, coal_bvec_create(ctx, n, k, dtype, layout, lay ? 5 : 10, &X));
      if (!X) continue;
      CHECK_OK(ctx, coal_bvec_set_random(X, 42 + (uint64_t)dt));
      char *ref = malloc(es * (size_t)(n * k)), *got = malloc(es * (size_t)(n * k));
      CHECK_OK(ctx, coal_bvec_get_host(X, ref, COAL_COL_MAJOR, 0));
      for (int gz = 0; gz < 2; gz++) {
        char out[512];
        snprintf(out, sizeof out, "%s/dense%d%d.mtx%s", tmpdir, dt, lay, gz ? ".gz" : "");
        CHECK_OK(ctx, coal_bvec_write_mm(X, out));
        for (int rl = 0; rl < 2; rl++) {
          coal_bvec Y = NULL;
          CHECK_OK(ctx,
                   coal_bvec_read_mm(ctx, out, dtype, rl ? COAL_ROW_MAJOR : COAL_COL_MAJOR, &Y));
          if (!Y) continue;
          int64_t yn, yk;
          coal_bvec_size(Y, &yn, &yk);
          CHECK(yn == n && yk == k && coal_bvec_layout(Y) == (rl ? COAL_ROW_MAJOR : COAL_COL_MAJOR),
                "dense size %lld x %lld", (long long)yn, (long long)yk);
          memset(got, 0, es * (size_t)(n * k));
          CHECK_OK(ctx, coal_bvec_get_host(Y, got, COAL_COL_MAJOR, 0));
          CHECK(!memcmp(ref, got, es * (size_t)(n * k)), "dense round trip dt %d layout %d gz %d",
                dt, lay, gz);
          coal_bvec_destroy(&Y);
        }
        if (!gz) { /* the text itself: banner, size line, first value column-major */
          FILE *f = fopen(out, "r");
          char l1[128] = "", l2[128] = "", l3[128] = "";
          if (f) {
            if (!fgets(l1, sizeof l1, f) || !fgets(l2, sizeof l2, f) || !fgets(l3, sizeof l3, f))
              l1[0] = '\0';
            fclose(f);
          }
          int same = dt ? (float)strtod(l3, NULL) == ((float *)ref)[0]
                        : strtod(l3, NULL) == ((double *)ref)[0];
          CHECK(!strcmp(l1, "%%MatrixMarket matrix array real general\n") && !strcmp(l2, "7 3\n") &&
                    same,
                "dense file text: %s%s%s", l1, l2, l3);
        }
        unlink(out);
      }
      free(ref), free(got);
      coal_bvec_destroy(&X);
    }
}

/* ---- hand-computed small inputs ------------------------------------------------------- */
static coal_mat rd(const char *text) {
  size_t len = strlen(text);
  char *b = malloc(len ? len : 1); /* exact size, no terminator: ASan sees any over-read */
  memcpy(b, text, len);
  coal_mat A = NULL;
  CHECK_OK(ctx, coal_mat_read_mm_buffer(ctx, "small.mtx", b, len, COAL_F64, &A));
  free(b);
  return A;
}

/* Compares A with a dense row-major reference; explicit entries must match `nnz`. */
static void expect_dense(coal_mat A, int64_t m, int64_t n, const double *ref, int64_t nnz,
                         const char *what) {
  CHECK(A != NULL, "%s: not read", what);
  if (!A) return;
  int64_t am, an, annz;
  coal_mat_size(A, &am, &an, &annz);
  CHECK(am == m && an == n && annz == nnz, "%s: %lld x %lld, %lld nonzeros", what, (long long)am,
        (long long)an, (long long)annz);
  if (am != m || an != n) return;
  int64_t rp[16];
  int32_t ci[64];
  double v[64], dense[64] = {0};
  if (m > 15 || annz > 64) return;
  coal_mat_get_csr(A, rp, ci, v);
  for (int64_t i = 0; i < m; i++)
    for (int64_t p = rp[i]; p < rp[i + 1]; p++) dense[i * n + ci[p]] = v[p];
  int ok = 1;
  for (int64_t t = 0; t < m * n; t++) ok &= dense[t] == ref[t];
  CHECK(ok, "%s: values differ", what);
}

#define MMC "%%MatrixMarket matrix coordinate "
#define MMA "%%MatrixMarket matrix array "

static void test_small(void) {
  coal_mat A;
  A = rd(MMC "real general\n% comment\n3 4 5\n1 1 1.5\n3 4 -2\n1 1 2.25\n2 3 1e-3\n3 4 0.5\n");
  expect_dense(A, 3, 4, (double[]){3.75, 0, 0, 0, 0, 0, 1e-3, 0, 0, 0, 0, -1.5}, 3, "duplicates");
  coal_mat_destroy(&A);
  A = rd(MMC "real symmetric\n3 3 4\n1 1 4\n2 1 -1\n3 2 -2\n3 3 5\n");
  expect_dense(A, 3, 3, (double[]){4, -1, 0, -1, 0, -2, 0, -2, 5}, 6, "symmetric");
  coal_mat_destroy(&A);
  A = rd(MMC "real skew-symmetric\n3 3 4\n2 1 2\n3 1 -3\n3 2 4\n1 1 0\n");
  expect_dense(A, 3, 3, (double[]){0, -2, 3, 2, 0, -4, -3, 4, 0}, 7, "skew-symmetric");
  coal_mat_destroy(&A);
  A = rd(MMC "pattern general\n2 3 3\n1 2\n2 1\n2 3\n");
  expect_dense(A, 2, 3, (double[]){0, 1, 0, 1, 0, 1}, 3, "pattern");
  coal_mat_destroy(&A);
  A = rd(MMC "pattern symmetric\n3 3 2\n2 1\n3 3\n");
  expect_dense(A, 3, 3, (double[]){0, 1, 0, 1, 0, 0, 0, 0, 1}, 3, "pattern symmetric");
  coal_mat_destroy(&A);
  A = rd(MMC "integer general\n2 2 3\n1 1 7\n2 2 -3\n1 1 +2\n");
  expect_dense(A, 2, 2, (double[]){9, 0, 0, -3}, 2, "integer");
  coal_mat_destroy(&A);
  /* CRLF, tabs, blank and comment lines among the entries, mixed case, no final newline */
  A = rd("%%MatrixMarket Matrix Coordinate REAL General\r\n%c\r\n\r\n 2\t2  2 \r\n\r\n% x\r\n"
         "1 2 -0.5\r\n  2\t1\t.25");
  expect_dense(A, 2, 2, (double[]){0, -0.5, 0.25, 0}, 2, "CRLF and blanks");
  coal_mat_destroy(&A);
  A = rd(MMC "real general\n0 0 0\n");
  expect_dense(A, 0, 0, NULL, 0, "empty");
  coal_mat_destroy(&A);
  /* array files given to the sparse reader keep their nonzeros only */
  A = rd(MMA "real general\n2 3\n1\n0\n0\n2\n3\n0\n");
  expect_dense(A, 2, 3, (double[]){1, 0, 3, 0, 2, 0}, 3, "array -> sparse");
  coal_mat_destroy(&A);
  A = rd(MMA "real symmetric\n3 3\n1\n2\n0\n4\n5\n6\n");
  expect_dense(A, 3, 3, (double[]){1, 2, 0, 2, 4, 5, 0, 5, 6}, 7, "array symmetric -> sparse");
  coal_mat_destroy(&A);
  /* single precision: values rounded once from the decimal text */
  {
    coal_mat B = NULL;
    const char *t = MMC "real general\n1 1 1\n1 1 0.1\n";
    CHECK_OK(ctx, coal_mat_read_mm_buffer(ctx, "f32.mtx", t, strlen(t), COAL_F32, &B));
    float v = 0;
    if (B) coal_mat_get_csr(B, NULL, NULL, &v);
    CHECK(B && coal_mat_dtype(B) == COAL_F32 && v == 0.1f, "f32 value %.9g", (double)v);
    coal_mat_destroy(&B);
  }
}

static void expect_block(const char *text, coal_layout layout, int64_t n, int64_t k,
                         const double *colmajor, const char *what) {
  coal_bvec X = NULL;
  CHECK_OK(ctx, coal_bvec_read_mm_buffer(ctx, "blk.mtx", text, strlen(text), COAL_F64, layout, &X));
  if (!X) return;
  int64_t xn, xk;
  coal_bvec_size(X, &xn, &xk);
  CHECK(xn == n && xk == k && coal_bvec_layout(X) == layout, "%s: %lld x %lld", what, (long long)xn,
        (long long)xk);
  double got[32] = {0};
  if (xn == n && xk == k && n * k <= 32) {
    CHECK_OK(ctx, coal_bvec_get_host(X, got, COAL_COL_MAJOR, 0));
    int ok = 1;
    for (int64_t t = 0; t < n * k; t++) ok &= got[t] == colmajor[t];
    CHECK(ok, "%s: values differ", what);
  }
  coal_bvec_destroy(&X);
}

static void test_blocks(void) {
  for (int lay = 0; lay < 2; lay++) {
    coal_layout l = lay ? COAL_ROW_MAJOR : COAL_COL_MAJOR;
    expect_block(MMA "real general\n3 2\n1\n2\n3\n4\n5\n6\n", l, 3, 2, (double[]){1, 2, 3, 4, 5, 6},
                 "array general");
    expect_block(MMA "real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n", l, 3, 3,
                 (double[]){1, 2, 3, 2, 4, 5, 3, 5, 6}, "array symmetric");
    expect_block(MMA "integer skew-symmetric\n3 3\n1\n2\n3\n", l, 3, 3,
                 (double[]){0, 1, 2, -1, 0, 3, -2, -3, 0}, "array skew");
    expect_block(MMC "real general\n3 2 3\n1 1 1\n3 2 2\n3 2 0.5\n", l, 3, 2,
                 (double[]){1, 0, 0, 0, 0, 2.5}, "coordinate -> dense");
    expect_block(MMC "real symmetric\n2 2 2\n2 1 7\n2 2 1\n", l, 2, 2, (double[]){0, 7, 7, 1},
                 "coordinate symmetric -> dense");
    expect_block(MMA "real general\n0 3\n", l, 0, 3, NULL, "empty block");
  }
}

/* ---- malformed inputs ----------------------------------------------------------------- */
typedef struct {
  const char *text;
  coal_status code;
  int line;        /* expected "line N" in the message */
  const char *msg; /* expected substring, or NULL */
} bad_case;

static void test_bad(void) {
  static const bad_case cases[] = {
      {"", COAL_ERR_FORMAT, 1, "banner"},
      {"hello\n1 1 1\n", COAL_ERR_FORMAT, 1, "banner"},
      {"%%MatrixMarketX matrix coordinate real general\n1 1 0\n", COAL_ERR_FORMAT, 1, "banner"},
      {"%%MatrixMarket vector coordinate real general\n1 1 0\n", COAL_ERR_FORMAT, 1, "object"},
      {"%%MatrixMarket matrix sparse real general\n1 1 0\n", COAL_ERR_FORMAT, 1, "format"},
      {MMC "float general\n1 1 0\n", COAL_ERR_FORMAT, 1, "field"},
      {MMC "real upper\n1 1 0\n", COAL_ERR_FORMAT, 1, "symmetry"},
      {MMC "real\n1 1 0\n", COAL_ERR_FORMAT, 1, "incomplete"},
      {MMC "real general extra\n1 1 0\n", COAL_ERR_FORMAT, 1, "extra"},
      {MMA "pattern general\n1 1\n", COAL_ERR_FORMAT, 1, "pattern"},
      {MMC "complex general\n1 1 1\n1 1 1 0\n", COAL_ERR_UNSUPPORTED, 1, "complex"},
      {MMC "complex hermitian\n1 1 1\n1 1 1 0\n", COAL_ERR_UNSUPPORTED, 1, "complex"},
      {MMC "real hermitian\n1 1 0\n", COAL_ERR_UNSUPPORTED, 1, "complex"},
      {MMC "real general\n% only comments\n\n", COAL_ERR_FORMAT, 4, "missing size line"},
      {MMC "real general", COAL_ERR_FORMAT, 2, "missing size line"},
      {MMC "real general\n3 x 2\n", COAL_ERR_FORMAT, 2, "not an integer"},
      {MMC "real general\n3 3\n", COAL_ERR_FORMAT, 2, "found 2"},
      {MMC "real general\n-3 3 1\n1 1 1\n", COAL_ERR_FORMAT, 2, "negative"},
      {MMC "real general\n3 3 -1\n", COAL_ERR_FORMAT, 2, "negative"},
      {MMC "real general\n3000000000 3 1\n1 1 1\n", COAL_ERR_OVERFLOW, 2, "2^31-1"},
      {MMC "real general\n3 99999999999999999999 1\n", COAL_ERR_OVERFLOW, 2, "too large"},
      {MMC "real general\n2 2 5\n", COAL_ERR_FORMAT, 2, "do not fit"},
      {MMC "real general\n100000 100000 3000000000\n", COAL_ERR_OVERFLOW, 2, "2^31-1"},
      {MMC "real symmetric\n2 2 4\n", COAL_ERR_FORMAT, 2, "do not fit"},
      {MMC "real symmetric\n1000000000 1000000000 2000000000\n", COAL_ERR_OVERFLOW, 2, "mirroring"},
      {MMC "real symmetric\n2 3 1\n1 1 1\n", COAL_ERR_FORMAT, 2, "square"},
      {MMA "real skew-symmetric\n2 3\n1\n", COAL_ERR_FORMAT, 2, "square"},
      {MMC "real general\n2 2 1\n3 1 1.0\n", COAL_ERR_FORMAT, 3, "out of range"},
      {MMC "real general\n2 2 1\n0 1 1.0\n", COAL_ERR_FORMAT, 3, "out of range"},
      {MMC "real general\n2 2 1\n1 -1 1.0\n", COAL_ERR_FORMAT, 3, "out of range"},
      {MMC "real general\n2 2 1\n1 99999999999999999999 1\n", COAL_ERR_FORMAT, 3, "out of range"},
      {MMC "real general\n2 2 1\nx 1 1.0\n", COAL_ERR_FORMAT, 3, "not an integer"},
      {MMC "real general\n2 2 1\n1.0 1 1.0\n", COAL_ERR_FORMAT, 3, "not an integer"},
      {MMC "real general\n2 2 1\n1 1 abc\n", COAL_ERR_FORMAT, 3, "not a number"},
      {MMC "real general\n2 2 1\n1 1 1.0.0\n", COAL_ERR_FORMAT, 3, "not a number"},
      {MMC "real general\n2 2 1\n1 1 1e\n", COAL_ERR_FORMAT, 3, "not a number"},
      {MMC "real general\n2 2 1\n1 1 0x10\n", COAL_ERR_FORMAT, 3, "not a number"},
      {MMC "real general\n2 2 1\n1 1 nan\n", COAL_ERR_FORMAT, 3, "NaN/Inf"},
      {MMC "real general\n2 2 1\n1 1 -Inf\n", COAL_ERR_FORMAT, 3, "NaN/Inf"},
      {MMC "real general\n2 2 1\n1 1 1e999\n", COAL_ERR_FORMAT, 3, "NaN/Inf"},
      {MMA "real general\n1 1\nNaN\n", COAL_ERR_FORMAT, 3, "NaN/Inf"},
      {MMC "real general\n2 2 3\n1 1 1\n\n2 2 1\n", COAL_ERR_FORMAT, 6,
       "expected 3 entries, found 2"},
      {MMC "real general\n2 2 1\n1 1 1\n2 2 1\n", COAL_ERR_FORMAT, 4, "more entries"},
      {MMC "real general\n2 2 1\n1 1 1\n% ok\n\n  \nz\n", COAL_ERR_FORMAT, 7, "more entries"},
      {MMC "real symmetric\n2 2 1\n1 2 3.0\n", COAL_ERR_FORMAT, 3, "upper triangle"},
      {MMC "real skew-symmetric\n2 2 1\n1 2 3.0\n", COAL_ERR_FORMAT, 3, "upper triangle"},
      {MMC "real skew-symmetric\n2 2 1\n2 2 3.0\n", COAL_ERR_FORMAT, 3, "diagonal"},
      {MMC "real general\n2 2 1\n1 2 3.0 xyz\n", COAL_ERR_FORMAT, 3, "found 4"},
      {MMC "real general\n2 2 1\n1 2\n", COAL_ERR_FORMAT, 3, "found 2"},
      {MMC "pattern general\n2 2 1\n1 2 3\n", COAL_ERR_FORMAT, 3, "found 3"},
      {MMC "integer general\n2 2 1\n1 2 1.5\n", COAL_ERR_FORMAT, 3, "not an integer"},
      {MMC "integer general\n2 2 1\n1 2 99999999999999999999\n", COAL_ERR_FORMAT, 3, "range"},
      {MMA "real general\n2 1\n1 2\n", COAL_ERR_FORMAT, 3, "found 2"},
      {MMA "real general\n2 1\n1\n", COAL_ERR_FORMAT, 4, "expected 2 values, found 1"},
      {MMA "real general\n1 1\n1\n2\n", COAL_ERR_FORMAT, 4, "more values"},
      {MMA "real symmetric\n2 2\n1\n2\n3\n4\n", COAL_ERR_FORMAT, 6, "more values"},
      {MMC "real general\n1 1 1\n1 1 1\0\n", COAL_ERR_FORMAT, 3, "not a number"},
  };
  size_t sizes[sizeof cases / sizeof cases[0]];
  for (size_t q = 0; q < sizeof cases / sizeof cases[0]; q++) sizes[q] = strlen(cases[q].text);
  sizes[sizeof cases / sizeof cases[0] - 1] += 2; /* the case with an embedded NUL */
  for (size_t q = 0; q < sizeof cases / sizeof cases[0]; q++) {
    const bad_case *b = &cases[q];
    char *buf = malloc(sizes[q] ? sizes[q] : 1); /* exact size: over-reads trip ASan */
    memcpy(buf, b->text, sizes[q]);
    char want[32];
    snprintf(want, sizeof want, "line %d:", b->line);
    for (int r = 0; r < 2; r++) {
      coal_mat A = NULL;
      coal_bvec X = NULL;
      coal_status st = r == 0 ? coal_mat_read_mm_buffer(ctx, "bad.mtx", buf, sizes[q], COAL_F64, &A)
                              : coal_bvec_read_mm_buffer(ctx, "bad.mtx", buf, sizes[q], COAL_F64,
                                                         COAL_COL_MAJOR, &X);
      const char *msg = coal_ctx_last_error(ctx);
      CHECK(st == b->code && A == NULL && X == NULL, "case %zu (%s reader): %s, expected %s: %s", q,
            r ? "bvec" : "mat", coal_status_string(st), coal_status_string(b->code), msg);
      CHECK(strstr(msg, "bad.mtx") && strstr(msg, want) && (!b->msg || strstr(msg, b->msg)),
            "case %zu: message '%s' lacks 'bad.mtx', '%s' or '%s'", q, msg, want,
            b->msg ? b->msg : "");
      coal_mat_destroy(&A);
      coal_bvec_destroy(&X);
    }
    free(buf);
  }
  /* single-precision range, and dense blocks too large to allocate */
  const char *big = MMC "real general\n1 1 1\n1 1 1e39\n";
  coal_mat A = NULL;
  CHECK_ERR(ctx, coal_mat_read_mm_buffer(ctx, "f.mtx", big, strlen(big), COAL_F32, &A),
            COAL_ERR_OVERFLOW);
  CHECK(strstr(coal_ctx_last_error(ctx), "f.mtx line 3:"), "%s", coal_ctx_last_error(ctx));
  CHECK_OK(ctx, coal_mat_read_mm_buffer(ctx, "f.mtx", big, strlen(big), COAL_F64, &A));
  coal_mat_destroy(&A);
  coal_bvec X = NULL;
  const char *huge = MMC "real general\n2000000000 2000000000 0\n";
  CHECK_ERR(
      ctx, coal_bvec_read_mm_buffer(ctx, "h.mtx", huge, strlen(huge), COAL_F64, COAL_COL_MAJOR, &X),
      COAL_ERR_OVERFLOW);
  CHECK(X == NULL && strstr(coal_ctx_last_error(ctx), "h.mtx line 2:"), "%s",
        coal_ctx_last_error(ctx));
}

static void test_io_errors(void) {
  coal_mat A = NULL;
  coal_bvec X = NULL;
  char p[512];
  snprintf(p, sizeof p, "%s/does-not-exist.mtx", tmpdir);
  CHECK_ERR(ctx, coal_mat_read_mm(ctx, p, COAL_F64, &A), COAL_ERR_IO);
  CHECK(strstr(coal_ctx_last_error(ctx), "does-not-exist.mtx"), "%s", coal_ctx_last_error(ctx));
  CHECK_ERR(ctx, coal_bvec_read_mm(ctx, p, COAL_F64, COAL_COL_MAJOR, &X), COAL_ERR_IO);
  CHECK_ERR(ctx, coal_mat_read_mm(ctx, tmpdir, COAL_F64, &A), COAL_ERR_IO);
  /* a gzip stream cut in half */
  char src[1024], cut[512];
  mpath(src, sizeof src, "nos4");
  snprintf(cut, sizeof cut, "%s/cut.mtx.gz", tmpdir);
  FILE *in = fopen(src, "rb"), *out = fopen(cut, "wb");
  char tmp[1024];
  size_t n = in ? fread(tmp, 1, sizeof tmp, in) : 0;
  if (out) fwrite(tmp, 1, n, out), fclose(out);
  if (in) fclose(in);
  CHECK_ERR(ctx, coal_mat_read_mm(ctx, cut, COAL_F64, &A), COAL_ERR_IO);
  CHECK(strstr(coal_ctx_last_error(ctx), "cut.mtx.gz"), "%s", coal_ctx_last_error(ctx));
  unlink(cut);
  /* writing into a missing folder */
  const char *t = MMC "real general\n1 1 1\n1 1 2\n";
  CHECK_OK(ctx, coal_mat_read_mm_buffer(ctx, "w.mtx", t, strlen(t), COAL_F64, &A));
  snprintf(p, sizeof p, "%s/no/such/dir/out.mtx", tmpdir);
  if (A) CHECK_ERR(ctx, coal_mat_write_mm(A, p), COAL_ERR_IO);
  snprintf(p, sizeof p, "%s/no/such/dir/out.mtx.gz", tmpdir);
  if (A) CHECK_ERR(ctx, coal_mat_write_mm(A, p), COAL_ERR_IO);
  CHECK_OK(ctx, coal_bvec_create(ctx, 2, 2, COAL_F64, COAL_COL_MAJOR, 0, &X));
  if (X) CHECK_ERR(ctx, coal_bvec_write_mm(X, p), COAL_ERR_IO);
  /* a device that accepts no data: the failure shows at flush or close */
  if (A && access("/dev/full", W_OK) == 0)
    CHECK_ERR(ctx, coal_mat_write_mm(A, "/dev/full"), COAL_ERR_IO);
  if (X && access("/dev/full", W_OK) == 0)
    CHECK_ERR(ctx, coal_bvec_write_mm(X, "/dev/full"), COAL_ERR_IO);
  coal_bvec_destroy(&X);
  coal_mat_destroy(&A);
  /* bad arguments */
  CHECK_ERR(NULL, coal_mat_read_mm_buffer(NULL, "x", t, strlen(t), COAL_F64, &A), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_mat_read_mm_buffer(ctx, "x", NULL, 5, COAL_F64, &A), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_mat_read_mm(ctx, NULL, COAL_F64, &A), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_mat_write_mm(NULL, "x.mtx"), COAL_ERR_ARG);
  CHECK_ERR(NULL, coal_bvec_write_mm(NULL, "x.mtx"), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_bvec_read_mm_buffer(ctx, "x", t, strlen(t), COAL_F64, (coal_layout)7, &X),
            COAL_ERR_ARG);
  coal_mat_destroy(&A);
}

int main(void) {
  if (coal_ctx_create(COAL_BACKEND_HOST, &ctx) != COAL_SUCCESS) {
    fprintf(stderr, "cannot create a host context\n");
    return 1;
  }
  const char *base = getenv("TMPDIR");
  snprintf(tmpdir, sizeof tmpdir, "%s/coal_mmio_XXXXXX", base && *base ? base : "/tmp");
  if (!mkdtemp(tmpdir)) {
    perror("mkdtemp");
    return 1;
  }
  test_small();
  test_blocks();
  test_bad();
  test_io_errors();
  test_dense_round_trip();
  test_round_trip();
  test_known_counts();
  test_shared_matrices();
  rmdir(tmpdir);
  coal_ctx_destroy(&ctx);
  return check_finish();
}
