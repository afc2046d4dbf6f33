/* Host TileSpGEMM (suite host): the tile format and the tiled product against independent
 * references.
 *  - tile format: invariants (offsets, masks, local indices, CSC index, csr_pos) and the round
 *    trip CSR -> tiles -> CSR, exact, on generated, edge and every shared matrix;
 *  - Gustavson (the reference) against a dense triple loop on small matrices, pattern and
 *    values;
 *  - the tiled product (and, for its numeric path, Gustavson as a product object) against
 * Gustavson: structure exact, values 1e-13 relative (normwise; in practice bit-identical, both sum
 * in ascending k), with the dense accumulator threshold at 0, 192 and 257 (every tile dense / mixed
 * / every tile sparse); A*A on every shared square matrix, A*A^T on every shared matrix, fp32 on a
 * subset; edge cases (empty matrices, empty rows, columns and tiles, a full 16 x 16 tile, sizes not
 *    multiples of 16, tall and wide operands);
 *  - P^T A P with piecewise-constant aggregates of 3 x 3 x 3 nodes on 3-D Laplacians and the
 *    smoothed prolongator (I - w D^-1 A) P, against Gustavson on an explicit transpose;
 *  - numeric-only recomputation after new values of A (and P), argument errors, stats. */
#include "check.h"
#include "../kernels/spgemm.h"

/* the algorithm of the product objects under test: TILE (the tiled host twin), or ROWS
 * (Gustavson, whose numeric-only recomputation is what is tested then) */
static coal_spgemm_algo algo = COAL_SPGEMM_TILE;

static const char *dtname(coal_dtype dt) { return dt == COAL_F64 ? "f64" : "f32"; }
static double getv(coal_mat M, int64_t p) {
  return M->dtype == COAL_F64 ? ((double *)M->values)[p] : ((float *)M->values)[p];
}

/* Structure exact and values within tol (normwise relative), else a failed check. */
static void compare_mats(coal_mat got, coal_mat ref, double tol, const char *what) {
  CHECK(got && ref, "%s: missing matrix", what);
  if (!got || !ref) return;
  int same = got->nrows == ref->nrows && got->ncols == ref->ncols && got->nnz == ref->nnz &&
             got->dtype == ref->dtype;
  same = same && !memcmp(got->rowptr, ref->rowptr, sizeof(int32_t) * ((size_t)ref->nrows + 1)) &&
         !memcmp(got->colind, ref->colind, sizeof(int32_t) * (size_t)ref->nnz);
  CHECK(same, "%s: structure differs (%d x %d, %lld nnz against %d x %d, %lld nnz)", what,
        got->nrows, got->ncols, (long long)got->nnz, ref->nrows, ref->ncols, (long long)ref->nnz);
  if (!same) return;
  double num = 0, den = 0;
  for (int64_t p = 0; p < ref->nnz; p++) {
    double a = getv(got, p), b = getv(ref, p);
    if (isnan(a) != isnan(b)) num = INFINITY;
    if (fabs(a - b) > num) num = fabs(a - b);
    if (fabs(b) > den) den = fabs(b);
  }
  double rel = den > 0 ? num / den : num;
  CHECK(rel <= tol, "%s: values differ by %.3g (relative)", what, rel);
}

/* ---- tile format ----------------------------------------------------------------------------- */
static void check_tile(coal_mat A, const char *name) {
  coal_ctx ctx = A->ctx;
  coal_tile *t = NULL;
  CHECK_OK(ctx, coal_tile_build_host(A, &t));
  if (!t) return;
  CHECK_OK(ctx, coal_tile_build_csc(ctx, t));
  int ok = t->tm == (A->nrows + 15) / 16 && t->tn == (A->ncols + 15) / 16 && t->nnz == A->nnz &&
           t->tile_ptr[0] == 0 && t->tile_ptr[t->tm] == t->ntiles &&
           t->tile_nnz[t->ntiles] == A->nnz;
  size_t es = coal_dtype_size(A->dtype);
  for (int32_t I = 0; ok && I < t->tm; I++)
    for (int32_t q = t->tile_ptr[I]; ok && q < t->tile_ptr[I + 1]; q++) {
      if (q > t->tile_ptr[I] && t->tile_col[q] <= t->tile_col[q - 1]) ok = 0;
      int off = 0;
      for (int r = 0; r < 16; r++) {
        unsigned m = t->mask[16 * (size_t)q + r];
        if (t->row_ptr[16 * (size_t)q + r] != off) ok = 0;
        for (; m; m &= m - 1, off++) {
          int64_t e = t->tile_nnz[q] + off;
          int c = __builtin_ctz(m);
          int32_t p = t->csr_pos[e], i = 16 * I + r;
          /* the entry is the CSR entry csr_pos says, with its value */
          if (t->idx[e] != (uint8_t)(r * 16 + c) || p < A->rowptr[i] || p >= A->rowptr[i + 1] ||
              A->colind[p] != 16 * t->tile_col[q] + c ||
              memcmp((char *)t->val + es * e, (char *)A->values + es * p, es))
            ok = 0;
        }
      }
      if (off == 0 || t->tile_nnz[q + 1] - t->tile_nnz[q] != off) ok = 0; /* no empty tile */
    }
  CHECK(ok, "%s: tile format invariants", name);
  /* CSC index: every tile once, rows ascending per column */
  int cok = t->csc_ptr[t->tn] == t->ntiles;
  for (int32_t J = 0; cok && J < t->tn; J++)
    for (int32_t s = t->csc_ptr[J]; cok && s < t->csc_ptr[J + 1]; s++) {
      int32_t q = t->csc_id[s], I = t->csc_row[s];
      if (t->tile_col[q] != J || q < t->tile_ptr[I] || q >= t->tile_ptr[I + 1] ||
          (s > t->csc_ptr[J] && I <= t->csc_row[s - 1]))
        cok = 0;
    }
  CHECK(cok, "%s: tile CSC index", name);
  /* round trip */
  int32_t *rp = NULL, *ci = NULL, *rp2 = NULL, *ci2 = NULL;
  void *v = NULL;
  CHECK_OK(ctx, coal_tile_to_csr_host(ctx, t, &rp, &ci, &v));
  if (rp) {
    int same = !memcmp(rp, A->rowptr, sizeof(int32_t) * ((size_t)A->nrows + 1)) &&
               !memcmp(ci, A->colind, sizeof(int32_t) * (size_t)A->nnz) &&
               !memcmp(v, A->values, es * (size_t)A->nnz);
    CHECK(same, "%s: CSR -> tiles -> CSR not exact", name);
  }
  int32_t *pos = malloc(sizeof(int32_t) * (16 * (size_t)t->ntiles + 1));
  CHECK_OK(ctx, coal_tile_csr_structure(ctx, t, &rp2, &ci2, pos));
  if (rp2) {
    int same = !memcmp(rp2, A->rowptr, sizeof(int32_t) * ((size_t)A->nrows + 1)) &&
               !memcmp(ci2, A->colind, sizeof(int32_t) * (size_t)A->nnz);
    for (int32_t q = 0; same && q < t->ntiles; q++)
      for (int r = 0; r < 16; r++) {
        int64_t e = t->tile_nnz[q] + t->row_ptr[16 * (size_t)q + r];
        if (t->mask[16 * (size_t)q + r] && pos[16 * (size_t)q + r] != t->csr_pos[e]) same = 0;
      }
    CHECK(same, "%s: CSR structure from masks", name);
  }
  free(pos);
  coal_free(rp), coal_free(ci), coal_free(v), coal_free(rp2), coal_free(ci2);
  coal_tile_free(t);
}

/* ---- products ----------------------------------------------------------------------------------
 */
/* Gustavson against a dense triple loop (m, k, n small): pattern = where a product exists. */
static void check_gustavson_dense(coal_mat A, coal_mat B, const char *name) {
  coal_mat C = NULL;
  CHECK_OK(A->ctx, coal_spgemm_rows_product_host(A, B, &C));
  if (!C) return;
  int m = A->nrows, k = A->ncols, n = B->ncols;
  double *D = calloc((size_t)m * n + 1, sizeof(double));
  char *pat = calloc((size_t)m * n + 1, 1);
  for (int i = 0; i < m; i++)
    for (int32_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
      for (int32_t q = B->rowptr[A->colind[p]]; q < B->rowptr[A->colind[p] + 1]; q++) {
        D[(size_t)i * n + B->colind[q]] += getv(A, p) * getv(B, q);
        pat[(size_t)i * n + B->colind[q]] = 1;
      }
  (void)k;
  int ok = 1;
  double num = 0, den = 0;
  int64_t cnt = 0;
  for (int i = 0; i < m; i++) {
    for (int32_t p = C->rowptr[i]; p < C->rowptr[i + 1]; p++) {
      size_t x = (size_t)i * n + C->colind[p];
      if (!pat[x] || (p > C->rowptr[i] && C->colind[p] <= C->colind[p - 1])) ok = 0;
      if (fabs(getv(C, p) - D[x]) > num) num = fabs(getv(C, p) - D[x]);
      if (fabs(D[x]) > den) den = fabs(D[x]);
      cnt++;
    }
  }
  for (size_t x = 0; x < (size_t)m * n; x++) cnt -= pat[x];
  CHECK(ok && cnt == 0, "%s: Gustavson pattern differs from the dense product", name);
  double tol = A->dtype == COAL_F64 ? 1e-14 : 1e-6;
  CHECK((den > 0 ? num / den : num) <= tol, "%s: Gustavson values differ from the dense product",
        name);
  free(D), free(pat);
  coal_mat_destroy(&C);
}

/* C = A*B by the tiled product against Gustavson: one product object, numeric again with the
 * dense threshold at 0 and 256 (every non-empty tile dense / every tile sparse). */
static void check_product(coal_mat A, coal_mat B, const char *name) {
  coal_ctx ctx = A->ctx;
  char what[256];
  coal_mat R = NULL, C = NULL;
  coal_spgemm p = NULL;
  CHECK_OK(ctx, coal_spgemm_rows_product_host(A, B, &R));
  CHECK_OK(ctx, coal_spgemm_create_algo(COAL_PRODUCT_AB, A, B, algo, &p, &C));
  const int thr[3] = {COAL_SPGEMM_DENSE_NNZ, 0, 256};
  for (int s = 0; s < 3 && p && R; s++) {
    if (s > 0) {
      CHECK_OK(ctx, coal_spgemm_set_dense_threshold(p, thr[s]));
      CHECK_OK(ctx, coal_spgemm_numeric(p));
    }
    snprintf(what, sizeof what, "%s (%s, dense above %d)", name, dtname(A->dtype), thr[s]);
    compare_mats(C, R, 1e-13, what);
  }
  coal_spgemm_stats st;
  if (p && R && coal_spgemm_get_stats(p, &st) == COAL_SUCCESS)
    CHECK(st.nnz_c == R->nnz && st.products == coal_spgemm_products(A, B) &&
              st.ntiles_c >= st.empty_tiles_c && st.tile_pairs >= st.ntiles_c - st.empty_tiles_c,
          "%s: stats", name);
  coal_spgemm_destroy(&p);
  coal_mat_destroy(&C);
  coal_mat_destroy(&R);
}

/* Products beyond this many intermediate products are skipped (and named): a hub row times a
 * hub column makes C dense (bloweybq: A*A has 10^8 nonzeros), too slow for the host suite. */
#define MAX_PRODUCTS 20000000
static int nskipped = 0;

static void product_or_skip(coal_mat A, coal_mat B, const char *name) {
  int64_t np = coal_spgemm_products(A, B);
  if (np > MAX_PRODUCTS) {
    printf("skipped %s: %lld intermediate products\n", name, (long long)np);
    nskipped++;
    return;
  }
  check_product(A, B, name);
}

/* A*A (square) and A*A^T, with the tile format checks. */
static void check_matrix(coal_mat A, const char *name) {
  char buf[256];
  check_tile(A, name);
  if (A->nrows == A->ncols) {
    snprintf(buf, sizeof buf, "%s A*A", name);
    product_or_skip(A, A, buf);
  }
  coal_mat T = NULL;
  CHECK_OK(A->ctx, coal_mat_transpose(A, &T));
  snprintf(buf, sizeof buf, "%s A*A^T", name);
  if (T) product_or_skip(A, T, buf);
  coal_mat_destroy(&T);
}

static coal_mat coo(coal_ctx ctx, int m, int n, int nz, const int32_t *r, const int32_t *c,
                    coal_dtype dt) {
  double *v = malloc(sizeof(double) * (size_t)(nz + 1));
  for (int e = 0; e < nz; e++) v[e] = coal_random_uniform(77, (uint64_t)e) + (e % 3 == 0 ? 2 : 0);
  coal_mat M = NULL;
  CHECK_OK(ctx, coal_mat_create_coo(ctx, m, n, nz, r, c, v, dt, &M));
  free(v);
  return M;
}

/* Random m x n pattern of density d (deterministic), with the rows in skip_rows emptied. */
static coal_mat random_mat(coal_ctx ctx, int m, int n, double d, uint64_t seed, int skip_mod,
                           coal_dtype dt) {
  int cap = (int)((double)m * n * d) + 16, nz = 0;
  int32_t *r = malloc(sizeof(int32_t) * (size_t)cap), *c = malloc(sizeof(int32_t) * (size_t)cap);
  uint64_t s = 0;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++)
      if (nz < cap && (skip_mod == 0 || i % skip_mod != 1) &&
          coal_random_uniform(seed, s++) * 0.5 + 0.5 < d)
        r[nz] = i, c[nz] = j, nz++;
  coal_mat M = coo(ctx, m, n, nz, r, c, dt);
  free(r), free(c);
  return M;
}

static void check_edges(coal_ctx ctx, coal_dtype dt) {
  /* sizes not multiples of 16, tall, wide, empty rows (every 5th row, so some tiles of C are
   * empty), and the dense-triple-loop check of Gustavson itself */
  const int dims[][4] = {{17, 33, 5, 0},   {1, 1, 1, 0},     {40, 16, 70, 5}, {16, 16, 16, 0},
                         {3, 200, 3, 0},   {200, 3, 200, 0}, {47, 31, 29, 5}, {64, 64, 64, 7},
                         {100, 90, 80, 0}, {33, 48, 17, 3}};
  const double dens[] = {0.3, 1.0, 0.05, 1.0, 0.5, 0.5, 0.2, 0.03, 0.1, 0.15};
  for (int c = 0; c < (int)(sizeof dens / sizeof dens[0]); c++) {
    char name[128];
    snprintf(name, sizeof name, "random %dx%d * %dx%d d=%.2f", dims[c][0], dims[c][1], dims[c][1],
             dims[c][2], dens[c]);
    coal_mat A = random_mat(ctx, dims[c][0], dims[c][1], dens[c], 100 + c, dims[c][3], dt);
    coal_mat B = random_mat(ctx, dims[c][1], dims[c][2], dens[c], 200 + c, dims[c][3], dt);
    if (A && B) {
      check_tile(A, name);
      check_gustavson_dense(A, B, name);
      check_product(A, B, name);
    }
    coal_mat_destroy(&A), coal_mat_destroy(&B);
  }
  /* a full 16 x 16 tile of C from two full tiles (dense accumulator at 192), and from a
   * column times a row (every pair is a single product) */
  {
    int32_t r[256], c[256];
    for (int e = 0; e < 256; e++) r[e] = e / 16, c[e] = e % 16;
    coal_mat F = coo(ctx, 16, 16, 256, r, c, dt);
    int32_t rc[16], cc[16], z[16];
    for (int e = 0; e < 16; e++) rc[e] = e, cc[e] = e, z[e] = 0;
    coal_mat Col = coo(ctx, 16, 1, 16, rc, z, dt), Row = coo(ctx, 1, 16, 16, z, cc, dt);
    check_product(F, F, "full tile * full tile");
    if (F) check_gustavson_dense(F, F, "full tile");
    check_product(Col, Row, "column * row");
    check_product(Row, Col, "row * column");
    coal_mat_destroy(&F), coal_mat_destroy(&Col), coal_mat_destroy(&Row);
  }
  /* empty operands: 0 x 0, 0 rows, 0 columns, no nonzeros; and tiles of C that stay empty:
   * A's tile (0,0) only has column 0, B's tile (0,0) only row 1 */
  {
    coal_mat E00 = coo(ctx, 0, 0, 0, NULL, NULL, dt), E05 = coo(ctx, 0, 5, 0, NULL, NULL, dt);
    coal_mat E50 = coo(ctx, 5, 0, 0, NULL, NULL, dt), Z = coo(ctx, 20, 20, 0, NULL, NULL, dt);
    coal_mat M57 = random_mat(ctx, 5, 7, 0.5, 9, 0, dt);
    check_product(E00, E00, "0x0 * 0x0");
    check_product(E05, M57, "0x5 * 5x7");
    check_product(E50, E05, "5x0 * 0x5");
    coal_mat E70 = coo(ctx, 7, 0, 0, NULL, NULL, dt);
    check_product(M57, E70, "5x7 * 7x0");
    coal_mat_destroy(&E70);
    check_product(Z, Z, "zero 20x20");
    int32_t ar[3] = {0, 3, 17}, ac[3] = {0, 0, 1}, br[3] = {1, 1, 0}, bc[3] = {2, 18, 17};
    coal_mat A = coo(ctx, 20, 20, 3, ar, ac, dt), B = coo(ctx, 20, 20, 3, br, bc, dt);
    check_product(A, B, "empty tiles of C");
    coal_spgemm p = NULL;
    coal_mat C = NULL;
    CHECK_OK(ctx, coal_spgemm_create_algo(COAL_PRODUCT_AB, A, B, algo, &p, &C));
    coal_spgemm_stats st;
    if (p && algo == COAL_SPGEMM_TILE && coal_spgemm_get_stats(p, &st) == COAL_SUCCESS)
      CHECK(st.empty_tiles_c == 1 && st.ntiles_c == 4 && C->nnz == 4,
            "empty tiles of C: %lld of %lld empty, nnz %lld", (long long)st.empty_tiles_c,
            (long long)st.ntiles_c, (long long)C->nnz);
    coal_spgemm_destroy(&p), coal_mat_destroy(&C);
    coal_mat_destroy(&E00), coal_mat_destroy(&E05), coal_mat_destroy(&E50), coal_mat_destroy(&Z);
    coal_mat_destroy(&M57), coal_mat_destroy(&A), coal_mat_destroy(&B);
  }
}

/* ---- P^T A P ----------------------------------------------------------------------------------
 */
/* Piecewise-constant aggregation on an nx x ny x nz grid (node x + nx*(y + ny*z)): aggregates of
 * 3 x 3 x 3 nodes (smaller at the far faces), P[i, aggregate(i)] = 1. */
static coal_mat aggregation(coal_ctx ctx, int nx, int ny, int nz, coal_dtype dt) {
  int n = nx * ny * nz, ax = (nx + 2) / 3, ay = (ny + 2) / 3, az = (nz + 2) / 3;
  int32_t *r = malloc(sizeof(int32_t) * (size_t)n), *c = malloc(sizeof(int32_t) * (size_t)n);
  double *v = malloc(sizeof(double) * (size_t)n);
  for (int z = 0; z < nz; z++)
    for (int y = 0; y < ny; y++)
      for (int x = 0; x < nx; x++) {
        int i = x + nx * (y + ny * z);
        r[i] = i, c[i] = x / 3 + ax * (y / 3 + ay * (z / 3)), v[i] = 1.0;
      }
  coal_mat P = NULL;
  CHECK_OK(ctx, coal_mat_create_coo(ctx, n, ax * ay * az, n, r, c, v, dt, &P));
  free(r), free(c), free(v);
  return P;
}

/* (I - w D^-1 A) P, the smoothed prolongator, with w = 2/3. */
static coal_mat smoothed(coal_mat A, coal_mat P) {
  coal_ctx ctx = A->ctx;
  int n = A->nrows;
  int64_t nz = A->nnz + n;
  int32_t *r = malloc(sizeof(int32_t) * (size_t)nz), *c = malloc(sizeof(int32_t) * (size_t)nz);
  double *v = malloc(sizeof(double) * (size_t)nz);
  int64_t w = 0;
  for (int i = 0; i < n; i++) {
    double d = 0;
    for (int32_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
      if (A->colind[p] == i) d = getv(A, p);
    r[w] = i, c[w] = i, v[w++] = 1.0;
    for (int32_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
      r[w] = i, c[w] = A->colind[p], v[w++] = -(2.0 / 3.0) * getv(A, p) / d;
  }
  coal_mat S = NULL, SP = NULL;
  CHECK_OK(ctx, coal_mat_create_coo(ctx, n, n, w, r, c, v, A->dtype, &S));
  free(r), free(c), free(v);
  if (S) CHECK_OK(ctx, coal_mat_multiply(S, P, &SP));
  coal_mat_destroy(&S);
  return SP;
}

/* Reference P^T (A P) by Gustavson on an explicit transpose. */
static coal_mat ptap_reference(coal_mat A, coal_mat P) {
  coal_mat Pt = NULL, AP = NULL, R = NULL;
  CHECK_OK(A->ctx, coal_mat_transpose(P, &Pt));
  CHECK_OK(A->ctx, coal_spgemm_rows_product_host(A, P, &AP));
  if (Pt && AP) CHECK_OK(A->ctx, coal_spgemm_rows_product_host(Pt, AP, &R));
  coal_mat_destroy(&Pt), coal_mat_destroy(&AP);
  return R;
}

/* New values: every value v becomes v * (1 + 0.25 * u) with u in [-1, 1). */
static void perturb(coal_mat M, uint64_t seed) {
  size_t es = coal_dtype_size(M->dtype);
  void *v = malloc(es * (size_t)(M->nnz + 1));
  for (int64_t p = 0; p < M->nnz; p++) {
    double x = getv(M, p) * (1.0 + 0.25 * coal_random_uniform(seed, (uint64_t)p));
    if (M->dtype == COAL_F64)
      ((double *)v)[p] = x;
    else
      ((float *)v)[p] = (float)x;
  }
  CHECK_OK(M->ctx, coal_mat_set_values(M, v));
  free(v);
}

static void check_ptap(coal_ctx ctx, int nx, int ny, int nz, int stencil, coal_dtype dt) {
  char name[128];
  coal_mat A = NULL;
  CHECK_OK(ctx, coal_gen_laplace3d(ctx, nx, ny, nz, stencil, dt, &A));
  coal_mat P = aggregation(ctx, nx, ny, nz, dt);
  coal_mat S = A && P ? smoothed(A, P) : NULL;
  for (int smooth = 0; smooth < 2 && A && P && S; smooth++) {
    coal_mat Q = smooth ? S : P;
    snprintf(name, sizeof name, "PtAP %d-point %dx%dx%d%s (%s)", stencil, nx, ny, nz,
             smooth ? " smoothed" : "", dtname(dt));
    coal_mat R = ptap_reference(A, Q), C = NULL;
    coal_spgemm p = NULL;
    CHECK_OK(ctx, coal_spgemm_create_algo(COAL_PRODUCT_PTAP, A, Q, algo, &p, &C));
    coal_spgemm_destroy(&p);
    compare_mats(C, R, 1e-13, name);
    coal_mat_destroy(&C), coal_mat_destroy(&R);
    /* reusable object: numeric after new values of A, then of A and P */
    CHECK_OK(ctx, coal_spgemm_create_algo(COAL_PRODUCT_PTAP, A, Q, algo, &p, &C));
    for (int round = 0; round < 2 && p; round++) {
      perturb(A, 300 + round);
      if (round) perturb(Q, 400);
      CHECK_OK(ctx, coal_spgemm_numeric(p));
      R = ptap_reference(A, Q);
      char what[300];
      snprintf(what, sizeof what, "%s numeric-only after new values of A%s", name,
               round ? " and P" : "");
      compare_mats(C, R, 1e-13, what);
      coal_mat_destroy(&R);
    }
    coal_spgemm_stats st;
    if (p && coal_spgemm_get_stats(p, &st) == COAL_SUCCESS)
      CHECK(st.nnz_c == C->nnz && st.temp_bytes > 0 && st.c_bytes > 0, "%s: stats", name);
    coal_spgemm_destroy(&p), coal_mat_destroy(&C);
  }
  coal_mat_destroy(&A), coal_mat_destroy(&P), coal_mat_destroy(&S);
}

/* AB object: numeric-only after new values of A, of B, of both (A != B), and of A == B. */
static void check_numeric(coal_ctx ctx, coal_dtype dt) {
  coal_mat A = NULL, B = NULL;
  CHECK_OK(ctx, coal_gen_powerlaw(ctx, 3000, 6, 2.5, 11, dt, &A));
  CHECK_OK(ctx, coal_gen_random_spd(ctx, 3000, 8, 12, dt, &B));
  if (!A || !B) goto done;
  for (int same = 0; same < 2; same++) {
    coal_mat X = same ? B : A;
    coal_spgemm p = NULL;
    coal_mat C = NULL;
    CHECK_OK(ctx, coal_spgemm_create_algo(COAL_PRODUCT_AB, X, B, algo, &p, &C));
    for (int round = 0; round < 3 && p; round++) {
      if (round != 1) perturb(X, 500 + round);
      if (round >= 1 && !same) perturb(B, 600 + round);
      CHECK_OK(ctx, coal_spgemm_numeric(p));
      coal_mat R = NULL;
      CHECK_OK(ctx, coal_spgemm_rows_product_host(X, B, &R));
      char what[128];
      snprintf(what, sizeof what, "numeric-only %s round %d (%s)", same ? "B*B" : "A*B", round,
               dtname(dt));
      compare_mats(C, R, 1e-13, what);
      coal_mat_destroy(&R);
    }
    coal_spgemm_destroy(&p), coal_mat_destroy(&C);
  }
done:
  coal_mat_destroy(&A), coal_mat_destroy(&B);
}

static void check_errors(coal_ctx ctx) {
  coal_ctx other = NULL;
  CHECK_OK(NULL, coal_ctx_create(COAL_BACKEND_HOST, &other));
  coal_mat A = NULL, B = NULL, F = NULL, O = NULL, C = NULL;
  CHECK_OK(ctx, coal_gen_laplace2d(ctx, 5, 4, COAL_F64, &A)); /* 20 x 20 */
  B = random_mat(ctx, 7, 20, 0.3, 5, 0, COAL_F64);            /* 7 x 20 */
  CHECK_OK(ctx, coal_gen_laplace2d(ctx, 5, 4, COAL_F32, &F));
  if (other) CHECK_OK(other, coal_gen_laplace2d(other, 5, 4, COAL_F64, &O));
  coal_spgemm p = NULL;
  CHECK_ERR(ctx, coal_mat_multiply(A, B, &C), COAL_ERR_ARG); /* 20x20 * 7x20 */
  CHECK(C == NULL, "no result on failure");
  CHECK_ERR(ctx, coal_mat_multiply(A, F, &C), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_mat_multiply(A, O, &C), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_mat_multiply(A, NULL, &C), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_mat_multiply(NULL, A, &C), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_mat_multiply(A, A, NULL), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_mat_ptap(B, A, &C), COAL_ERR_ARG); /* B not square */
  CHECK_ERR(ctx, coal_mat_ptap(A, B, &C), COAL_ERR_ARG); /* P has 7 rows, A 20 */
  CHECK_ERR(ctx, coal_spgemm_create((coal_product_type)7, A, A, &p, &C), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_spgemm_create_algo(COAL_PRODUCT_AB, A, A, (coal_spgemm_algo)9, &p, &C),
            COAL_ERR_ARG);
  CHECK(p == NULL && C == NULL, "no product object on failure");
  CHECK_ERR(ctx, coal_spgemm_numeric(NULL), COAL_ERR_ARG);
  CHECK_OK(ctx, coal_spgemm_destroy(NULL));
  CHECK_OK(ctx, coal_spgemm_create(COAL_PRODUCT_AB, A, A, &p, &C));
  CHECK_ERR(ctx, coal_spgemm_set_dense_threshold(p, 257), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_spgemm_set_dense_threshold(p, -1), COAL_ERR_ARG);
  coal_spgemm_destroy(&p);
  CHECK(p == NULL, "destroy clears the handle");
  coal_mat_destroy(&C);
  /* B^T B through ptap: B is 7 x 20, so P^T A P with A = I(7) and P = B */
  coal_mat I7 = NULL;
  {
    int32_t r[7];
    for (int i = 0; i < 7; i++) r[i] = i;
    I7 = coo(ctx, 7, 7, 7, r, r, COAL_F64);
  }
  CHECK_OK(ctx, coal_mat_ptap(I7, B, &C));
  if (C) CHECK(C->nrows == 20 && C->ncols == 20, "P^T I P is 20 x 20");
  coal_mat_destroy(&C), coal_mat_destroy(&I7);
  coal_mat_destroy(&A), coal_mat_destroy(&B), coal_mat_destroy(&F), coal_mat_destroy(&O);
  coal_ctx_destroy(&other);
}

static void check_generated(coal_ctx ctx) {
  struct {
    const char *name;
    coal_mat A;
  } g[5] = {{"laplace3d 7-point 20^3", NULL},
            {"laplace3d 27-point 12^3", NULL},
            {"powerlaw 4000", NULL},
            {"random spd 3000", NULL},
            {"laplace2d 37x29", NULL}};
  CHECK_OK(ctx, coal_gen_laplace3d(ctx, 20, 20, 20, 7, COAL_F64, &g[0].A));
  CHECK_OK(ctx, coal_gen_laplace3d(ctx, 12, 12, 12, 27, COAL_F64, &g[1].A));
  CHECK_OK(ctx, coal_gen_powerlaw(ctx, 4000, 8, 2.5, 3, COAL_F64, &g[2].A));
  CHECK_OK(ctx, coal_gen_random_spd(ctx, 3000, 10, 4, COAL_F64, &g[3].A));
  CHECK_OK(ctx, coal_gen_laplace2d(ctx, 37, 29, COAL_F64, &g[4].A));
  for (int i = 0; i < 5; i++) {
    if (g[i].A) check_matrix(g[i].A, g[i].name);
    if (g[i].A && i == 2) { /* fp32 */
      coal_mat F = NULL;
      CHECK_OK(ctx, coal_mat_convert(g[i].A, COAL_F32, &F));
      if (F) check_matrix(F, "powerlaw 4000 f32");
      coal_mat_destroy(&F);
    }
    coal_mat_destroy(&g[i].A);
  }
}

/* Every shared matrix: A*A when square, A*A^T always; fp32 on every fourth. */
static void check_shared(coal_ctx ctx) {
  char **paths = NULL;
  int n = check_list_matrices(&paths, 1);
  for (int f = 0; f < n; f++) {
    coal_mat A = NULL;
    coal_status st = coal_mat_read_mm(ctx, paths[f], COAL_F64, &A);
    if (st == COAL_ERR_UNSUPPORTED) continue; /* complex */
    CHECK_OK(ctx, st);
    if (!A) continue;
    double t0 = coal_now_seconds();
    check_matrix(A, check_basename(paths[f]));
    if (getenv("SPGEMM_TIMES"))
      printf("%s %d x %d nnz %lld: %.2f s\n", check_basename(paths[f]), A->nrows, A->ncols,
             (long long)A->nnz, coal_now_seconds() - t0);
    if (f % 4 == 0) {
      coal_mat F = NULL;
      CHECK_OK(ctx, coal_mat_convert(A, COAL_F32, &F));
      char buf[160];
      snprintf(buf, sizeof buf, "%s f32", check_basename(paths[f]));
      if (F) check_matrix(F, buf);
      coal_mat_destroy(&F);
    }
    coal_mat_destroy(&A);
  }
  printf("%d shared matrices, %d products skipped\n", n, nskipped);
  check_free_matrices(paths, n);
}

int main(void) {
  coal_ctx ctx = NULL;
  CHECK_OK(NULL, coal_ctx_create(COAL_BACKEND_HOST, &ctx));
  if (!ctx) return check_finish();
  double t0 = coal_now_seconds(), t1;
#define PHASE(expr)                                                                                \
  do {                                                                                             \
    expr;                                                                                          \
    t1 = coal_now_seconds();                                                                       \
    printf("%-40s %6.2f s\n", #expr, t1 - t0);                                                     \
    t0 = t1;                                                                                       \
  } while (0)
  PHASE(check_edges(ctx, COAL_F64));
  PHASE(check_edges(ctx, COAL_F32));
  PHASE(check_errors(ctx));
  PHASE(check_numeric(ctx, COAL_F64));
  PHASE(check_numeric(ctx, COAL_F32));
  PHASE(check_ptap(ctx, 12, 12, 12, 7, COAL_F64));
  PHASE(check_ptap(ctx, 10, 7, 8, 27, COAL_F64)); /* grid sizes not multiples of 3 */
  PHASE(check_ptap(ctx, 9, 9, 9, 7, COAL_F32));
  PHASE(check_generated(ctx));
  PHASE(check_shared(ctx));
  /* ROWS: Gustavson; the products against the references, and its numeric-only path */
  algo = COAL_SPGEMM_ROWS;
  PHASE(check_edges(ctx, COAL_F64));
  PHASE(check_numeric(ctx, COAL_F64));
  PHASE(check_numeric(ctx, COAL_F32));
  PHASE(check_ptap(ctx, 12, 12, 12, 7, COAL_F64));
  PHASE(check_ptap(ctx, 9, 9, 9, 7, COAL_F32));
  coal_ctx_destroy(&ctx);
  return check_finish();
}
