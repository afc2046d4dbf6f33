/* CUDA SpMM kernels against their host twins (suite "cuda", exit 77 without a GPU).
 *
 * Every kernel (swift, rowsplit, merge, auto) on generated matrices (Laplacians, power-law,
 * random SPD; a 64^3 Laplacian large enough for the launches of large matrices), on the edge cases
 * of test_spmm_host.c (empty, 1x1, empty rows and columns, a dense row, a dense column, tall, wide,
 * equal columns, identical rows, a band, hubs, a row spanning several merge tiles) and on every
 * shared SuiteSparse matrix, in fp64 and fp32: k in {1, 4, 5, 8, 16, 32, 33, 64, 128}, both layouts
 * of X and Y and mixed ones, leading dimensions above the tight value (the padding must keep its
 * sentinel), Y = NaN with beta = 0 and alpha = -1.5, beta = 0.25 over a random Y. The reference is
 * the same product with the twin on a host context; errors are measured against the product's scale
 * max |alpha| sum_j |a_ij x_jc| + |beta y0_ic| (as tests/test_spmv_cuda.c). Also: a repeated
 * beta = 0 product, new values (device copies refreshed), Swift heights 1, 3 and 32, row-split
 * with 1, 2, 4 and 8 sub-groups per row and with 8 loads in flight (small matrices), a row-major
 * X whose rows are 2^31 bytes or more apart (row-split hands it to merge-based), and the
 * cuSPARSE SpMM reference against the host.
 * COALESCE_TEST_QUICK=1 runs the generated matrices and edge cases with fewer cases, in fp64
 * (for compute-sanitizer); COALESCE_TEST_KERNEL=name runs that kernel only. */
#include "backend.h"
#include "bench.h"
#include "check_cuda.h"
#include "swift.h"
#include "cuda/spmm_tune.h"

#define CM COAL_COL_MAJOR
#define RM COAL_ROW_MAJOR

static uint64_t seed_counter = 5000;
static int nproducts = 0, quick = 0, only_kernel = -1;

static double tol(coal_dtype dt) { return dt == COAL_F64 ? 1e-12 : 1e-5; }
static const char *dtname(coal_dtype dt) { return dt == COAL_F64 ? "f64" : "f32"; }
static double get_val(const void *v, coal_dtype dt, int64_t i) {
  return dt == COAL_F64 ? ((const double *)v)[i] : ((const float *)v)[i];
}
static void set_val(void *v, coal_dtype dt, int64_t i, double x) {
  if (dt == COAL_F64)
    ((double *)v)[i] = x;
  else
    ((float *)v)[i] = (float)x;
}

typedef struct {
  int64_t k;
  coal_layout xl, yl;
  int64_t xpad, ypad;
} spmm_case;

static const spmm_case all_cases[] = {
    {1, CM, CM, 0, 0},   {1, RM, RM, 0, 0},  {1, RM, CM, 2, 3},  {4, RM, RM, 3, 5},
    {4, CM, RM, 0, 0},   {5, RM, RM, 0, 0},  {8, RM, RM, 0, 0},  {8, RM, RM, 1, 0},
    {16, RM, RM, 0, 0},  {32, RM, RM, 0, 0}, {32, CM, CM, 0, 0}, {32, CM, RM, 7, 2},
    {33, RM, CM, 0, 11}, {33, CM, CM, 5, 0}, {64, RM, RM, 0, 4}, {128, RM, RM, 0, 0},
    {128, RM, RM, 1, 3}, {128, CM, RM, 0, 0}};
#define NCASES ((int)(sizeof all_cases / sizeof all_cases[0]))
/* quick mode: k = 1 row-major, 4 mixed, 33 mixed with padding, 128 row-major, 32 column-major */
#define QUICK_CASES ((1u << 1) | (1u << 4) | (1u << 12) | (1u << 15) | (1u << 10))

static const coal_spmm_kernel kernels[] = {COAL_SPMM_SWIFT, COAL_SPMM_ROWSPLIT, COAL_SPMM_MERGE,
                                           COAL_SPMM_AUTO};
#define NKERNELS ((int)(sizeof kernels / sizeof kernels[0]))
static const double SENTINEL = 12345.0;

typedef struct {
  coal_mat h, d;
} mat_pair;

static void pair_destroy(mat_pair *M) {
  coal_mat_destroy(&M->h);
  coal_mat_destroy(&M->d);
}

static int64_t storage_len(coal_bvec B) { return B->ld * (B->layout == CM ? B->k : B->n); }
static int is_entry(coal_bvec B, int64_t q) {
  return B->layout == CM ? q % B->ld < B->n : q % B->ld < B->k;
}

/* A block of the case's layout and padding holding the n x k column-major host array v, with
 * SENTINEL in the padding (the whole storage is uploaded at once: coal_bvec_set_host writes
 * the padding too). */
static coal_bvec make_block(coal_ctx ctx, int64_t n, int64_t k, coal_dtype dt, coal_layout l,
                            int64_t pad, const void *v) {
  int64_t tight = l == CM ? n : k;
  coal_bvec B = NULL;
  CHECK_OK(ctx, coal_bvec_create(ctx, n, k, dt, l, (tight > 0 ? tight : 1) + pad, &B));
  if (!B) return NULL;
  size_t es = coal_dtype_size(dt), len = (size_t)storage_len(B);
  void *s = malloc(es * (len + 1));
  for (size_t q = 0; q < len; q++) set_val(s, dt, (int64_t)q, SENTINEL);
  for (int64_t j = 0; j < k; j++)
    for (int64_t i = 0; i < n; i++)
      set_val(s, dt, l == CM ? i + j * B->ld : i * B->ld + j, get_val(v, dt, i + j * n));
  CHECK_OK(ctx, coal_backend(ctx)->mem.upload(ctx, B->data, s, es * len));
  free(s);
  return B;
}

/* Padding of B still holds SENTINEL. */
static int padding_kept(coal_bvec B) {
  coal_ctx ctx = B->ctx;
  size_t es = coal_dtype_size(B->dtype), len = (size_t)storage_len(B);
  void *s = malloc(es * (len + 1));
  int ok = coal_backend(ctx)->mem.download(ctx, s, B->data, es * len) == COAL_SUCCESS;
  for (size_t q = 0; ok && q < len; q++)
    if (!is_entry(B, (int64_t)q) && get_val(s, B->dtype, (int64_t)q) != SENTINEL) ok = 0;
  free(s);
  return ok;
}

/* max over entries of |got - ref| / scale (NaN: +inf). */
static double scaled_diff(const void *got, const void *ref, coal_dtype dt, int64_t n,
                          double scale) {
  double d = 0;
  for (int64_t i = 0; i < n; i++) {
    double a = get_val(got, dt, i), b = get_val(ref, dt, i);
    if (isnan(a) || isnan(b)) return INFINITY;
    if (fabs(a - b) > d) d = fabs(a - b);
  }
  return scale > 0 ? d / scale : d;
}

/* Normwise scale of the product (see the header). */
static double product_scale(coal_mat A, double alpha, const void *x, double beta, const void *y0,
                            int64_t k) {
  double s = 0;
  for (int64_t j = 0; j < k; j++)
    for (int32_t i = 0; i < A->nrows; i++) {
      double r = 0;
      for (int32_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
        r += fabs(get_val(A->values, A->dtype, p) *
                  get_val(x, A->dtype, A->colind[p] + j * A->ncols));
      r = fabs(alpha) * r +
          (beta != 0.0 ? fabs(beta * get_val(y0, A->dtype, i + j * A->nrows)) : 0);
      if (r > s) s = r;
    }
  return s;
}

/* One product with kernel kern on both contexts (host: its twin; auto: the twin of the kernel
 * AUTO picks on the GPU), same X and Y0. */
static void compare(mat_pair *M, const char *name, coal_spmm_kernel kern, const spmm_case *c,
                    double alpha, double beta) {
  coal_ctx hc = M->h->ctx, dc = M->d->ctx;
  coal_dtype dt = M->h->dtype;
  int64_t m = M->h->nrows, n = M->h->ncols, k = c->k;
  size_t es = coal_dtype_size(dt);
  void *x = malloc(es * (size_t)(n * k + 1)), *y0 = malloc(es * (size_t)(m * k + 1));
  void *ref = malloc(es * (size_t)(m * k + 1)), *got = malloc(es * (size_t)(m * k + 1));
  uint64_t sx = seed_counter++, sy = seed_counter++;
  for (int64_t i = 0; i < n * k; i++) set_val(x, dt, i, coal_random_uniform(sx, (uint64_t)i));
  for (int64_t i = 0; i < m * k; i++)
    set_val(y0, dt, i, beta == 0.0 ? NAN : coal_random_uniform(sy, (uint64_t)i));
  coal_bvec Xh = make_block(hc, n, k, dt, c->xl, c->xpad, x);
  coal_bvec Xd = make_block(dc, n, k, dt, c->xl, c->xpad, x);
  coal_bvec Yh = make_block(hc, m, k, dt, c->yl, c->ypad, y0);
  coal_bvec Yd = make_block(dc, m, k, dt, c->yl, c->ypad, y0);
  if (Xh && Xd && Yh && Yd) {
    const double scale = product_scale(M->h, alpha, x, beta, y0, k);
    coal_spmm_kernel twin = kern == COAL_SPMM_AUTO ? coal_spmm_select(M->d, k, c->xl) : kern;
    CHECK_OK(hc, coal_spmm(M->h, twin, alpha, Xh, beta, Yh));
    CHECK_OK(dc, coal_spmm(M->d, kern, alpha, Xd, beta, Yd));
    nproducts++;
    CHECK_OK(hc, coal_bvec_get_host(Yh, ref, CM, 0));
    CHECK_OK(dc, coal_bvec_get_host(Yd, got, CM, 0));
    const double d = scaled_diff(got, ref, dt, m * k, scale);
    const int pad = padding_kept(Yd);
    CHECK(d <= tol(dt) && pad,
          "%s %s %s k=%lld X %s+%lld Y %s+%lld alpha=%g beta=%g H=%d: cuda vs host twin %.3g, "
          "padding %s",
          name, dtname(dt), coal_spmm_kernel_name(kern), (long long)k, c->xl == CM ? "col" : "row",
          (long long)c->xpad, c->yl == CM ? "col" : "row", (long long)c->ypad, alpha, beta,
          coal_swift_height(M->d), d, pad ? "kept" : "WRITTEN");
    if (beta == 0.0) { /* again over the result: beta = 0 must overwrite it */
      CHECK_OK(dc, coal_spmm(M->d, kern, alpha, Xd, beta, Yd));
      CHECK_OK(dc, coal_bvec_get_host(Yd, ref, CM, 0));
      const double r = scaled_diff(ref, got, dt, m * k, scale);
      CHECK(r <= tol(dt), "%s %s %s k=%lld: repeated product differs by %.3g", name, dtname(dt),
            coal_spmm_kernel_name(kern), (long long)k, r);
    }
  }
  coal_bvec_destroy(&Xh), coal_bvec_destroy(&Xd), coal_bvec_destroy(&Yh), coal_bvec_destroy(&Yd);
  free(x), free(y0), free(ref), free(got);
}

static void compare_cases(mat_pair *M, const char *name, unsigned mask) {
  if (quick) mask &= QUICK_CASES;
  int flip = 0;
  for (int kk = 0; kk < NKERNELS; kk++) {
    if (only_kernel >= 0 && kernels[kk] != (coal_spmm_kernel)only_kernel) continue;
    for (int c = 0; c < NCASES; c++) {
      if (!(mask >> c & 1u)) continue;
      if (quick) { /* one setting per case, alternating */
        compare(M, name, kernels[kk], &all_cases[c], flip ? -1.5 : 1.0, flip ? 0.25 : 0.0);
        flip ^= 1;
      } else {
        compare(M, name, kernels[kk], &all_cases[c], 1.0, 0.0);
        compare(M, name, kernels[kk], &all_cases[c], -1.5, 0.25);
      }
    }
  }
}

/* ---- matrices ------------------------------------------------------------------------------ */
typedef struct {
  int32_t m, n;
  int32_t *ri, *ci;
  double *v;
  int64_t nnz, cap;
} coo;

static void coo_add(coo *c, int32_t i, int32_t j, double v) {
  if (c->nnz == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 256;
    c->ri = realloc(c->ri, sizeof(int32_t) * (size_t)c->cap);
    c->ci = realloc(c->ci, sizeof(int32_t) * (size_t)c->cap);
    c->v = realloc(c->v, sizeof(double) * (size_t)c->cap);
    if (!c->ri || !c->ci || !c->v) abort(); /* test harness only */
  }
  c->ri[c->nnz] = i, c->ci[c->nnz] = j, c->v[c->nnz] = v, c->nnz++;
}

static uint64_t lcg(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return *s >> 33;
}

enum { NGEN = 5, GEN_LARGE = 4 };
static const char *const gen_names[NGEN] = {"laplace3d-7pt-17^3", "laplace3d-27pt-9^3",
                                            "powerlaw-5000", "random-spd-3000",
                                            "laplace3d-7pt-64^3"};
static coal_status gen(coal_ctx ctx, int id, coal_dtype dt, coal_mat *A) {
  switch (id) {
  case 0: return coal_gen_laplace3d(ctx, 17, 17, 17, 7, dt, A);
  case 1: return coal_gen_laplace3d(ctx, 9, 9, 9, 27, dt, A);
  case 2: return coal_gen_powerlaw(ctx, 5000, 12.0, 2.5, 7, dt, A);
  case 3: return coal_gen_random_spd(ctx, 3000, 8.0, 11, dt, A);
  default: return coal_gen_laplace3d(ctx, 64, 64, 64, 7, dt, A);
  }
}

enum { NEDGE = 17 };
static const char *const edge_names[NEDGE] = {"0x0",
                                              "0x5",
                                              "5x0",
                                              "40x40 empty",
                                              "1x1",
                                              "empty rows/cols",
                                              "dense column",
                                              "dense row",
                                              "1x2000 dense",
                                              "500x1 dense",
                                              "tall 500x37",
                                              "wide 37x500",
                                              "equal columns 70x64",
                                              "dense 65x40",
                                              "band 700",
                                              "power-law graph",
                                              "long row over merge tiles"};

static void build_edge(int id, coo *c) {
  uint64_t s = 7 + (uint64_t)id;
  switch (id) {
  case 0: c->m = c->n = 0; break;
  case 1: c->m = 0, c->n = 5; break;
  case 2: c->m = 5, c->n = 0; break;
  case 3: c->m = c->n = 40; break;
  case 4: c->m = c->n = 1, coo_add(c, 0, 0, 2.5); break;
  case 5:
    c->m = 100, c->n = 90;
    for (int e = 0; e < 900; e++) {
      int32_t i = (int32_t)(lcg(&s) % 100), j = (int32_t)(lcg(&s) % 90);
      if (i % 7 == 3 || j % 5 == 2) continue;
      coo_add(c, i, j, e % 17 == 0 ? 0.0 : coal_random_uniform(11, (uint64_t)e));
    }
    break;
  case 6:
  case 7:
    c->m = c->n = 300;
    for (int32_t i = 0; i < 300; i++) {
      coo_add(c, i, i, 4.0);
      if (id == 6)
        coo_add(c, i, 7, -1.0 - i % 5);
      else
        coo_add(c, 11, i, 0.5 + i % 3);
    }
    break;
  case 8:
    c->m = 1, c->n = 2000;
    for (int32_t j = 0; j < 2000; j++) coo_add(c, 0, j, coal_random_uniform(12, (uint64_t)j));
    break;
  case 9:
    c->m = 500, c->n = 1;
    for (int32_t i = 0; i < 500; i++) coo_add(c, i, 0, coal_random_uniform(13, (uint64_t)i));
    break;
  case 10:
  case 11:
    c->m = id == 10 ? 500 : 37, c->n = id == 10 ? 37 : 500;
    for (int e = 0; e < 2500; e++)
      coo_add(c, (int32_t)(lcg(&s) % (uint64_t)c->m), (int32_t)(lcg(&s) % (uint64_t)c->n),
              coal_random_uniform(14, (uint64_t)e));
    break;
  case 12:
    c->m = 70, c->n = 64;
    for (int32_t j = 0; j < 64; j++)
      for (int32_t t = 0; t < 5; t++)
        coo_add(c, (j * 13 + t * 29) % 70, j, coal_random_uniform(16, (uint64_t)(j * 5 + t)));
    break;
  case 13:
    c->m = 65, c->n = 40;
    for (int32_t i = 0; i < 65; i++)
      for (int32_t j = 0; j < 40; j++)
        coo_add(c, i, j, coal_random_uniform(17, (uint64_t)(i * 40 + j)));
    break;
  case 14:
    c->m = c->n = 700;
    for (int32_t i = 0; i < 700; i++)
      for (int32_t j = i - 3; j <= i + 3; j++)
        if (j >= 0 && j < 700) coo_add(c, i, j, j == i ? 6.0 : -1.0 + 0.01 * (i % 7));
    break;
  case 15:
    c->m = c->n = 1200;
    for (int32_t i = 0; i < 1200; i++) {
      int32_t deg = (int32_t)(500 / (1 + lcg(&s) % 250)) + (i % 13 == 0 ? 0 : 1);
      if (i % 29 == 0) deg = 0;
      for (int32_t e = 0; e < deg; e++) {
        int32_t j = (int32_t)((lcg(&s) % 1200u) * (lcg(&s) % 1200u) / 1200u);
        if (j % 29 == 0) continue;
        coo_add(c, i, j, coal_random_uniform(18, (uint64_t)e)), coo_add(c, j, i, 1.0);
      }
    }
    break;
  default: /* row 3: 3000 entries (several merge tiles); one row in 100 has one entry */
    c->m = c->n = 10000;
    for (int32_t j = 0; j < 3000; j++)
      coo_add(c, 3, 3 * j + 1, coal_random_uniform(19, (uint64_t)j));
    for (int32_t i = 0; i < 10000; i += 100) coo_add(c, i, (int32_t)(lcg(&s) % 10000u), 0.5);
    break;
  }
}

static int make_pair(ctx_pair *C, int edge, int id, coal_dtype dt, mat_pair *M) {
  M->h = M->d = NULL;
  if (!edge) {
    CHECK_OK(C->h, gen(C->h, id, dt, &M->h));
    CHECK_OK(C->d, gen(C->d, id, dt, &M->d));
  } else {
    coo c = {0};
    build_edge(id, &c);
    CHECK_OK(C->h, coal_mat_create_coo(C->h, c.m, c.n, c.nnz, c.ri, c.ci, c.v, dt, &M->h));
    CHECK_OK(C->d, coal_mat_create_coo(C->d, c.m, c.n, c.nnz, c.ri, c.ci, c.v, dt, &M->d));
    free(c.ri), free(c.ci), free(c.v);
  }
  if (M->h && M->d) return 1;
  pair_destroy(M);
  return 0;
}

/* ---- special checks ------------------------------------------------------------------------ */
static void check_heights(mat_pair *M, const char *name) {
  static const int hs[] = {1, 3, 32};
  const int saved = only_kernel;
  if (only_kernel >= 0 && only_kernel != COAL_SPMM_SWIFT) return;
  only_kernel = COAL_SPMM_SWIFT;
  for (int i = 0; i < 3; i++) {
    CHECK_OK(M->h->ctx, coal_mat_set_swift_height(M->h, hs[i]));
    CHECK_OK(M->d->ctx, coal_mat_set_swift_height(M->d, hs[i]));
    compare_cases(M, name, (1u << 2) | (1u << 10) | (1u << 12));
  }
  only_kernel = saved;
  CHECK_OK(M->h->ctx, coal_mat_set_swift_height(M->h, COAL_SWIFT_DEFAULT_HEIGHT));
  CHECK_OK(M->d->ctx, coal_mat_set_swift_height(M->d, COAL_SWIFT_DEFAULT_HEIGHT));
}

/* Row-split with every number of sub-groups per row on small matrices (1, 2, 4, 8; clamped to
 * 32 lanes), and with 8 elements of X in flight instead of 16 (the large launch), also at 5
 * CTAs per SM (its other kernel, which loads a row's entries one per lane at a time: rows
 * longer than the group take several chunks): k = 8 (also with padding), 16, 32, 33, and with
 * 5 CTAs 64 and 128 (padded) too. */
static void check_subgroups(mat_pair *M, const char *name) {
  coal_ctx dc = M->d->ctx; /* the knobs are set on the device context */
  const int saved = only_kernel;
  if (only_kernel >= 0 && only_kernel != COAL_SPMM_ROWSPLIT) return;
  only_kernel = COAL_SPMM_ROWSPLIT;
  for (int s = 0; s <= 5; s++) {
    CHECK_OK(dc, coal_spmm_cuda_tune(dc, s < 4 ? COAL_SPMM_TUNE_RS_S : COAL_SPMM_TUNE_RS_UB,
                                     s < 4 ? 1 << s : 8));
    if (s == 5) CHECK_OK(dc, coal_spmm_cuda_tune(dc, COAL_SPMM_TUNE_RS_OCC, 2));
    char nm[160];
    snprintf(nm, sizeof nm, "%s (%s %d)", name,
             s < 4   ? "sub-groups"
             : s < 5 ? "in flight"
                     : "in flight, 5 CTAs per SM,",
             s < 4 ? 1 << s : 8);
    compare_cases(M, nm,
                  (1u << 6) | (1u << 7) | (1u << 8) | (1u << 9) | (1u << 12) |
                      (s == 5 ? (1u << 14) | (1u << 16) : 0u));
    coal_spmm_cuda_tune(dc, COAL_SPMM_TUNE_RS_S, 0);
    coal_spmm_cuda_tune(dc, COAL_SPMM_TUNE_RS_UB, 0);
    coal_spmm_cuda_tune(dc, COAL_SPMM_TUNE_RS_OCC, 0);
  }
  only_kernel = saved;
}

/* Row-split with the rows longer than a threshold in a CTA each (spmm_long.cu) and the rest in
 * the row-split kernel: thresholds 2 (nearly every row long), 5 and 40, and none (knob 1); every
 * case (k <= 4 runs the entry-lane kernel, which keeps every row). Small launches take rows of
 * one segment in CTAs of their own launch (the store there must honour beta, including
 * beta == 0 on a poisoned Y); thresholds 2 and 5 again with that off (a second launch); then
 * thresholds changing from one product to the next. */
static void check_long(mat_pair *M, const char *name) {
  coal_ctx dc = M->d->ctx; /* the knobs are set on the device context */
  const int saved = only_kernel;
  if (only_kernel >= 0 && only_kernel != COAL_SPMM_ROWSPLIT) return;
  only_kernel = COAL_SPMM_ROWSPLIT;
  static const int thr[] = {2, 5, 40, 1, 2, 5};
  for (int i = 0; i < 6; i++) {
    CHECK_OK(dc, coal_spmm_cuda_tune(dc, COAL_SPMM_TUNE_RS_LONG, thr[i]));
    CHECK_OK(dc, coal_spmm_cuda_tune(dc, COAL_SPMM_TUNE_RS_FUSE, i >= 4));
    char nm[160];
    snprintf(nm, sizeof nm, "%s (long rows > %d%s)", name, thr[i], i >= 4 ? ", second launch" : "");
    compare_cases(M, nm, (1u << NCASES) - 1u);
  }
  coal_spmm_cuda_tune(dc, COAL_SPMM_TUNE_RS_FUSE, 0);
  /* three thresholds in turn, one product each (k = 8 and 32): the matrix keeps the segment
   * lists of the last two, so this both finds a kept list and replaces one */
  for (int r = 0; r < 6; r++) {
    CHECK_OK(dc, coal_spmm_cuda_tune(dc, COAL_SPMM_TUNE_RS_LONG, thr[r % 3]));
    char nm[160];
    snprintf(nm, sizeof nm, "%s (long rows > %d, in turn)", name, thr[r % 3]);
    compare_cases(M, nm, (1u << 6) | (1u << 9));
  }
  coal_spmm_cuda_tune(dc, COAL_SPMM_TUNE_RS_LONG, 0);
  only_kernel = saved;
}

/* Row-split over tiles of grid lines (any stride is a permutation of the rows, so every row
 * must come out as the twin's): strides forced by the knob, the matrix's own line and ones
 * that leave partial segments, lines and tiles; the tile height (rows per group) too; and
 * tiles in several planes at once (the default number, 2, 4, 8), with plane strides that are
 * not multiples of the line, leave a partial group of planes, or exceed n. */
static void check_lines(mat_pair *M, const char *name) {
  coal_ctx dc = M->d->ctx; /* the knobs are set on the device context */
  const int saved = only_kernel;
  if (only_kernel >= 0 && only_kernel != COAL_SPMM_ROWSPLIT) return;
  only_kernel = COAL_SPMM_ROWSPLIT;
  const int32_t n = M->h->nrows;
  const int strides[] = {16, 17, 37, 100, n - 1, n, n + 5};
  for (size_t i = 0; i < sizeof strides / sizeof strides[0]; i++) {
    if (strides[i] < 2) continue;
    CHECK_OK(dc, coal_spmm_cuda_tune(dc, COAL_SPMM_TUNE_RS_LINE, strides[i]));
    CHECK_OK(dc, coal_spmm_cuda_tune(dc, COAL_SPMM_TUNE_RS_ROWS, i % 3 == 1 ? 3 : 0));
    /* row numbers in 64 and in 32 bits, alternately (the default picks by the group width) */
    CHECK_OK(dc, coal_spmm_cuda_tune(dc, COAL_SPMM_TUNE_RS_ROW64, 1 + (int)(i % 2)));
    const int64_t s = strides[i];
    const int64_t planes[] = {0, 2 * s, 5 * s + 3, (int64_t)n / 2 + 1, (int64_t)n + 7};
    for (size_t j = 0; j < sizeof planes / sizeof planes[0]; j++) {
      if (planes[j] > INT32_MAX || (j > 0 && planes[j] < 2 * s)) continue;
      CHECK_OK(dc, coal_spmm_cuda_tune(dc, COAL_SPMM_TUNE_RS_PLANE, (int)planes[j]));
      /* planes a CTA takes at once: the default, then 2, 4 and 8 in turn */
      const int np = (int)((i + j) % 4) == 0 ? 0 : 1 << (int)((i + j) % 4);
      CHECK_OK(dc, coal_spmm_cuda_tune(dc, COAL_SPMM_TUNE_RS_NP, np));
      char nm[160];
      snprintf(nm, sizeof nm, "%s (lines of %d, planes of %lld, %d at once)", name, strides[i],
               (long long)planes[j], np);
      /* row-major X: k = 32, 33 (mixed, padded), 64 and 128 (padded); fewer with planes */
      compare_cases(M, nm,
                    j == 0 ? (1u << 9) | (1u << 12) | (1u << 14) | (1u << 16)
                           : (j % 2 ? (1u << 12) | (1u << 14) : (1u << 9) | (1u << 16)));
    }
  }
  coal_spmm_cuda_tune(dc, COAL_SPMM_TUNE_RS_PLANE, 0);
  coal_spmm_cuda_tune(dc, COAL_SPMM_TUNE_RS_NP, 0);
  coal_spmm_cuda_tune(dc, COAL_SPMM_TUNE_RS_LINE, 0);
  coal_spmm_cuda_tune(dc, COAL_SPMM_TUNE_RS_ROWS, 0);
  coal_spmm_cuda_tune(dc, COAL_SPMM_TUNE_RS_ROW64, 0);
  only_kernel = saved;
}

static void check_set_values(mat_pair *M, const char *name) {
  coal_dtype dt = M->h->dtype;
  int64_t nnz = M->h->nnz;
  void *v = malloc(coal_dtype_size(dt) * (size_t)(nnz + 1));
  for (int64_t p = 0; p < nnz; p++)
    set_val(v, dt, p, -2.0 * get_val(M->h->values, dt, p) + 0.125 * (double)(p % 7));
  CHECK_OK(M->h->ctx, coal_mat_set_values(M->h, v));
  CHECK_OK(M->d->ctx, coal_mat_set_values(M->d, v));
  free(v);
  char nm[160];
  snprintf(nm, sizeof nm, "%s (new values)", name);
  compare_cases(M, nm, (1u << 3) | (1u << 9) | (1u << 13));
}

/* cuSPARSE SpMM (algorithms 1-3, both layouts) against the host row-split twin. */
static void check_cusparse(mat_pair *M, const char *name) {
  coal_ctx hc = M->h->ctx, dc = M->d->ctx;
  coal_dtype dt = M->h->dtype;
  int64_t m = M->h->nrows, n = M->h->ncols, k = 12;
  size_t es = coal_dtype_size(dt);
  void *x = malloc(es * (size_t)(n * k)), *y0 = malloc(es * (size_t)(m * k));
  void *ref = malloc(es * (size_t)(m * k)), *got = malloc(es * (size_t)(m * k));
  for (int64_t i = 0; i < n * k; i++) set_val(x, dt, i, coal_random_uniform(91, (uint64_t)i));
  for (int64_t i = 0; i < m * k; i++) set_val(y0, dt, i, coal_random_uniform(92, (uint64_t)i));
  for (int alg = 1; alg <= 3; alg++)
    for (int l = 0; l < 2; l++) {
      coal_layout lay = (coal_layout)l;
      coal_bvec Xh = make_block(hc, n, k, dt, lay, 0, x), Yh = make_block(hc, m, k, dt, lay, 0, y0);
      coal_bvec Xd = make_block(dc, n, k, dt, lay, 0, x), Yd = make_block(dc, m, k, dt, lay, 0, y0);
      coal_cusparse_spmm *h = NULL;
      coal_status st = COAL_ERR_ARG;
      if (Xh && Yh && Xd && Yd)
        st = coal_cusparse_spmm_create(M->d, alg, k, lay, Xd->data, Xd->ld, Yd->data, Yd->ld, &h);
      if (st == COAL_ERR_UNSUPPORTED) {
        printf("cuSPARSE SpMM alg %d %s-major %s: unsupported (%s)\n", alg, l ? "row" : "col",
               dtname(dt), coal_ctx_last_error(dc));
      } else {
        CHECK(st == COAL_SUCCESS, "cusparse create alg %d: %s", alg, coal_ctx_last_error(dc));
        if (h) {
          CHECK_OK(dc, coal_cusparse_spmm_run(h, -1.5, 0.25));
          CHECK_OK(hc, coal_spmm(M->h, COAL_SPMM_ROWSPLIT, -1.5, Xh, 0.25, Yh));
          CHECK_OK(hc, coal_bvec_get_host(Yh, ref, CM, 0));
          CHECK_OK(dc, coal_bvec_get_host(Yd, got, CM, 0));
          double d = scaled_diff(got, ref, dt, m * k, product_scale(M->h, -1.5, x, 0.25, y0, k));
          CHECK(d <= tol(dt), "%s %s cuSPARSE alg %d %s-major vs host: %.3g", name, dtname(dt), alg,
                l ? "row" : "col", d);
        }
      }
      coal_cusparse_spmm_destroy(h);
      coal_bvec_destroy(&Xh), coal_bvec_destroy(&Yh), coal_bvec_destroy(&Xd),
          coal_bvec_destroy(&Yd);
    }
  free(x), free(y0), free(ref), free(got);
}

/* ---- shared matrices ----------------------------------------------------------------------- */
static void check_shared(ctx_pair *C) {
  char **paths;
  int nn = check_list_matrices(&paths, 1);
  if (!paths) return;
  int used = 0;
  for (int i = 0; i < nn; i++) {
    const char *path = paths[i], *name = check_basename(path);
    for (int t = 0; t < 2; t++) {
      coal_dtype dt = t ? COAL_F32 : COAL_F64;
      mat_pair M = {NULL, NULL};
      coal_status sh = coal_mat_read_mm(C->h, path, dt, &M.h);
      coal_status sd = coal_mat_read_mm(C->d, path, dt, &M.d);
      CHECK(sh == sd, "%s: host read %s, cuda read %s", name, coal_status_string(sh),
            coal_status_string(sd));
      CHECK(sh == COAL_SUCCESS || sh == COAL_ERR_UNSUPPORTED, "%s: %s", name,
            coal_ctx_last_error(C->h));
      if (sh == COAL_SUCCESS && M.h && M.d) {
        /* fp64: k = 4 row-major, 33 mixed, 32 column-major; fp32: 8 (ld 9) and 16 row-major */
        compare_cases(&M, name, t ? (1u << 7) | (1u << 8) : (1u << 3) | (1u << 12) | (1u << 10));
        used += t == 0;
      }
      pair_destroy(&M);
    }
  }
  check_free_matrices(paths, nn);
  printf("%d shared matrices compared\n", used);
}

/* Row-major X whose rows are 2^31 bytes or more apart (a one-row view with a huge leading
 * dimension over a small buffer): past row-split's 32-bit offsets, so it hands the product to
 * merge-based; every kernel must give Y = A X = 3 * X, leaving the rest of the buffer alone. */
static void check_huge_stride(ctx_pair *C) {
  const int64_t rp[2] = {0, 1};
  const int32_t ci[1] = {0};
  const double v[1] = {3.0};
  coal_mat A = NULL;
  coal_bvec B = NULL, X = NULL, Y = NULL;
  CHECK_OK(C->d, coal_mat_create_csr(C->d, 1, 1, rp, ci, v, COAL_F64, &A));
  CHECK_OK(C->d, coal_bvec_create(C->d, 1, 64, COAL_F64, RM, 64, &B));
  if (!A || !B) goto done;
  /* Y = entries 0..3 of the buffer, X = entries 32..35 viewed with ld = 2^28 + 4 (> 2^31
   * bytes); only row 0 of X exists */
  CHECK_OK(C->d, coal_bvec_view(C->d, 1, 4, COAL_F64, RM, 4, B->data, &Y));
  CHECK_OK(C->d, coal_bvec_view(C->d, 1, 4, COAL_F64, RM, ((int64_t)1 << 28) + 4,
                                (double *)B->data + 32, &X));
  if (!X || !Y) goto done;
  for (int kk = 0; kk < NKERNELS; kk++) {
    if (only_kernel >= 0 && (int)kernels[kk] != only_kernel) continue;
    double h[64];
    for (int i = 0; i < 64; i++) h[i] = i >= 32 && i < 36 ? (double)(i - 31) : NAN;
    CHECK_OK(C->d, coal_bvec_set_host(B, h, RM, 64));
    CHECK_OK(C->d, coal_spmm(A, kernels[kk], 1.0, X, 0.0, Y));
    CHECK_OK(C->d, coal_bvec_get_host(B, h, RM, 64));
    int bad = 0;
    for (int i = 0; i < 64; i++) {
      const double want = i < 4 ? 3.0 * (i + 1) : i >= 32 && i < 36 ? (double)(i - 31) : NAN;
      if (!(h[i] == want || (isnan(want) && isnan(h[i])))) bad = 1;
    }
    CHECK(!bad, "huge row stride of X (2^28 + 4 doubles), kernel %d: wrong product or buffer",
          (int)kernels[kk]);
  }
done:
  coal_bvec_destroy(&X);
  coal_bvec_destroy(&Y);
  coal_bvec_destroy(&B);
  coal_mat_destroy(&A);
}

int main(void) {
  const char *q = getenv("COALESCE_TEST_QUICK"), *kn = getenv("COALESCE_TEST_KERNEL");
  quick = q && !strcmp(q, "1");
  if (kn && *kn) {
    coal_spmm_kernel k;
    if (coal_spmm_kernel_parse(kn, &k) != COAL_SUCCESS) {
      fprintf(stderr, "COALESCE_TEST_KERNEL=%s: unknown kernel\n", kn);
      return 2;
    }
    only_kernel = (int)k;
  }
  ctx_pair C;
  const int rc = check_ctx_pair(&C, quick ? " (quick)" : NULL);
  if (rc) return rc;
  for (int t = 0; t < (quick ? 1 : 2); t++) {
    coal_dtype dt = t ? COAL_F32 : COAL_F64;
    for (int edge = 0; edge < 2; edge++)
      for (int id = 0; id < (edge ? NEDGE : NGEN); id++) {
        if (!edge && id == GEN_LARGE && quick) continue;
        mat_pair M;
        if (!make_pair(&C, edge, id, dt, &M)) continue;
        const char *name = edge ? edge_names[id] : gen_names[id];
        /* the large Laplacian (262144 rows) fills the GPU: the row-split launch for large
         * matrices (several rows per group, two column tiles per pass); k = 8, 32 (both
         * layouts), 33 mixed, 64, 128 with padding */
        const unsigned large =
            (1u << 6) | (1u << 9) | (1u << 10) | (1u << 12) | (1u << 14) | (1u << 16);
        compare_cases(&M, name, !edge && id == GEN_LARGE ? large : (1u << NCASES) - 1u);
        if ((!edge && id == 2) || (edge && (id == 6 || id == 7 || id == 15)))
          check_heights(&M, name);
        if (!edge && (id == 0 || id == 2)) check_set_values(&M, name);
        if ((!edge && id == 1) || (edge && (id == 8 || id == 15))) check_subgroups(&M, name);
        if (!edge && (id == 0 || id == 1 || id == 2)) check_lines(&M, name);
        if ((!edge && (id == 2 || id == 3)) ||
            (edge && (id == 5 || id == 7 || id == 8 || id == 13 || id == 15 || id == 16)))
          check_long(&M, name);
        if (!quick && ((!edge && (id == 0 || id == 2)) || (edge && id == 10)))
          check_cusparse(&M, name);
        pair_destroy(&M);
      }
  }
  check_huge_stride(&C);
  if (!quick) check_shared(&C);
  CHECK_OK(C.d, coal_ctx_sync(C.d));
  printf("%d products compared\n", nproducts);
  coal_ctx_destroy(&C.d);
  coal_ctx_destroy(&C.h);
  return check_finish();
}
