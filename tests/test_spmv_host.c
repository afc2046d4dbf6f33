/* Host SpMV kernels: csr-merge, fastload and fastload-t against csr-vector, and csr-vector
 * against a plain loop written here, on edge cases and on every shared matrix, for both
 * dtypes, several FastLoad heights, beta = 0 over NaN and general alpha/beta; and y += A x in
 * AIJ's order (csr-vector with alpha = beta = 1). */
#include "check.h"
#include "internal.h"
#include "fastload.h"
#include "spmv.h"

static uint64_t seed_counter = 1;

/* Relative tolerance against the csr-vector result. */
static double tol(coal_dtype dt) { return dt == COAL_F64 ? 1e-14 : 1e-5; }

static void to_double(const void *src, coal_dtype dt, double *dst, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    dst[i] = dt == COAL_F64 ? ((const double *)src)[i] : ((const float *)src)[i];
}

static void fill(void *dst, coal_dtype dt, int64_t n, uint64_t seed, double nan_or_random) {
  for (int64_t i = 0; i < n; i++) {
    double v = isnan(nan_or_random) ? NAN : coal_random_uniform(seed, (uint64_t)i);
    if (dt == COAL_F64)
      ((double *)dst)[i] = v;
    else
      ((float *)dst)[i] = (float)v;
  }
}

/* Runs every kernel on A with one (alpha, beta, x, y0); compares to csr-vector, and
 * csr-vector to a plain double loop. */
static void check_case(coal_mat A, const char *name, double alpha, double beta) {
  coal_ctx ctx = A->ctx;
  coal_dtype dt = A->dtype;
  size_t es = coal_dtype_size(dt);
  int32_t m = A->nrows, n = A->ncols;
  void *x = malloc(es * ((size_t)n + 1)), *y0 = malloc(es * ((size_t)m + 1));
  void *y = malloc(es * ((size_t)m + 1));
  double *ref = malloc(sizeof(double) * ((size_t)m + 1)),
         *got = malloc(sizeof(double) * ((size_t)m + 1));
  double *xd = malloc(sizeof(double) * ((size_t)n + 1)),
         *y0d = malloc(sizeof(double) * ((size_t)m + 1));
  uint64_t sx = seed_counter++, sy = seed_counter++;
  fill(x, dt, n, sx, 0.0);
  fill(y0, dt, m, sy, beta == 0.0 ? NAN : 0.0);
  to_double(x, dt, xd, n);
  to_double(y0, dt, y0d, m);
  /* plain loop reference */
  for (int32_t i = 0; i < m; i++) {
    double s = 0;
    for (int32_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
      double a = dt == COAL_F64 ? ((double *)A->values)[p] : ((float *)A->values)[p];
      s += a * xd[A->colind[p]];
    }
    ref[i] = beta == 0.0 ? alpha * s : alpha * s + beta * y0d[i];
  }
  const coal_spmv_kernel ks[] = {COAL_SPMV_CSR_VECTOR, COAL_SPMV_CSR_MERGE, COAL_SPMV_FASTLOAD,
                                 COAL_SPMV_FASTLOAD_T, COAL_SPMV_AUTO};
  double *vec = malloc(sizeof(double) * ((size_t)m + 1));
  for (size_t k = 0; k < sizeof ks / sizeof ks[0]; k++) {
    memcpy(y, y0, es * (size_t)m);
    CHECK_OK(ctx, coal_spmv_raw(A, ks[k], alpha, x, beta, y));
    to_double(y, dt, got, m);
    if (k == 0) {
      memcpy(vec, got, sizeof(double) * (size_t)m);
      double d = check_rel_diff(got, ref, (size_t)m);
      CHECK(d <= tol(dt), "%s %s H=%d alpha=%g beta=%g: csr-vector vs loop %.3g", name,
            dt == COAL_F64 ? "f64" : "f32", coal_fastload_height(A), alpha, beta, d);
    } else {
      double d = check_rel_diff(got, vec, (size_t)m);
      CHECK(d <= tol(dt), "%s %s H=%d alpha=%g beta=%g: %s vs csr-vector %.3g", name,
            dt == COAL_F64 ? "f64" : "f32", coal_fastload_height(A), alpha, beta,
            coal_spmv_kernel_name(ks[k]), d);
    }
  }
  free(x), free(y0), free(y), free(ref), free(got), free(xd), free(y0d), free(vec);
}

/* y += A x with csr-vector at alpha = beta = 1: each row's sum started from y_i (PETSc's AIJ
 * order) against that order written here, bit for bit after rounding to the dtype, and against
 * csr-merge, which adds y at the end, to rounding. */
static void check_onto_y(coal_mat A, const char *name) {
  coal_dtype dt = A->dtype;
  size_t es = coal_dtype_size(dt);
  int32_t m = A->nrows, n = A->ncols;
  void *x = malloc(es * ((size_t)n + 1)), *y = malloc(es * ((size_t)m + 1));
  void *yv = malloc(es * ((size_t)m + 1)), *want = malloc(es * ((size_t)m + 1));
  double *xd = malloc(sizeof(double) * ((size_t)n + 1)),
         *got = malloc(sizeof(double) * ((size_t)m + 1)),
         *vec = malloc(sizeof(double) * ((size_t)m + 1));
  fill(x, dt, n, seed_counter++, 0.0);
  fill(y, dt, m, seed_counter++, 0.0);
  to_double(x, dt, xd, n);
  memcpy(yv, y, es * (size_t)m);
  for (int32_t i = 0; i < m; i++) {
    double s = dt == COAL_F64 ? ((double *)y)[i] : ((float *)y)[i];
    for (int32_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
      s += (dt == COAL_F64 ? ((double *)A->values)[p] : ((float *)A->values)[p]) * xd[A->colind[p]];
    if (dt == COAL_F64)
      ((double *)want)[i] = s;
    else
      ((float *)want)[i] = (float)s;
  }
  CHECK_OK(A->ctx, coal_spmv_raw(A, COAL_SPMV_CSR_VECTOR, 1.0, x, 1.0, y));
  CHECK(!memcmp(y, want, es * (size_t)m), "%s %s: y += A x differs from y_i-first sums", name,
        dt == COAL_F64 ? "f64" : "f32");
  CHECK_OK(A->ctx, coal_spmv_raw(A, COAL_SPMV_CSR_MERGE, 1.0, x, 1.0, yv));
  to_double(y, dt, got, m);
  to_double(yv, dt, vec, m);
  double d = check_rel_diff(got, vec, (size_t)m);
  CHECK(d <= tol(dt), "%s %s: y += A x, csr-vector vs csr-merge %.3g", name,
        dt == COAL_F64 ? "f64" : "f32", d);
  free(x), free(y), free(yv), free(want), free(xd), free(got), free(vec);
}

/* coal_merge_path_search against the path walked step by step, at every diagonal. */
static void check_merge_search(coal_mat A, const char *name) {
  const int32_t *row_end = A->rowptr + 1;
  int32_t row = 0;
  int64_t nz = 0, total = (int64_t)A->nrows + A->nnz;
  int ok = 1;
  for (int64_t d = 0; d <= total && ok; d++) {
    int32_t r;
    int64_t z;
    coal_merge_path_search(d, row_end, A->nrows, A->nnz, &r, &z);
    if (r != row || z != nz) ok = 0;
    if (d == total) break;
    if (row < A->nrows && nz >= row_end[row])
      row++; /* a row ends before its next nonzero */
    else
      nz++;
  }
  CHECK(ok && row == A->nrows && nz == A->nnz, "%s: merge-path search differs from the walk", name);
}

static void check_mat(coal_mat A, const char *name, int all_heights) {
  check_merge_search(A, name);
  check_onto_y(A, name);
  static const int hs[] = {8, 1, 2, 4, 32};
  int nh = all_heights ? 5 : 2;
  for (int h = 0; h < nh; h++) {
    CHECK_OK(A->ctx, coal_mat_set_fastload_height(A, hs[h]));
    check_case(A, name, 1.0, 0.0);
    check_case(A, name, -1.5, 0.25);
    if (h == 0) check_case(A, name, 0.5, 1.0);
  }
}

/* Builds the matrix from COO in both dtypes and checks it. */
static void check_coo(coal_ctx ctx, const char *name, int32_t m, int32_t n, int64_t nnz,
                      const int32_t *ri, const int32_t *ci, const double *v) {
  for (int dt = 0; dt < 2; dt++) {
    coal_mat A = NULL;
    CHECK_OK(ctx, coal_mat_create_coo(ctx, m, n, nnz, ri, ci, v, (coal_dtype)dt, &A));
    if (A) check_mat(A, name, 1);
    coal_mat_destroy(&A);
  }
}

typedef struct {
  int32_t *ri, *ci;
  double *v;
  int64_t n, cap;
} coo;

static void coo_add(coo *c, int32_t i, int32_t j, double v) {
  if (c->n == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 256;
    c->ri = realloc(c->ri, sizeof(int32_t) * (size_t)c->cap);
    c->ci = realloc(c->ci, sizeof(int32_t) * (size_t)c->cap);
    c->v = realloc(c->v, sizeof(double) * (size_t)c->cap);
  }
  c->ri[c->n] = i, c->ci[c->n] = j, c->v[c->n] = v, c->n++;
}

static void coo_check(coal_ctx ctx, const char *name, int32_t m, int32_t n, coo *c) {
  check_coo(ctx, name, m, n, c->n, c->ri, c->ci, c->v);
  free(c->ri), free(c->ci), free(c->v);
  memset(c, 0, sizeof *c);
}

static uint64_t rnd(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return *s >> 33;
}

static void test_edge_cases(coal_ctx ctx) {
  coo c = {0};
  uint64_t s = 42;
  check_coo(ctx, "0x0", 0, 0, 0, NULL, NULL, NULL);
  check_coo(ctx, "0x5", 0, 5, 0, NULL, NULL, NULL);
  check_coo(ctx, "5x0", 5, 0, 0, NULL, NULL, NULL);
  check_coo(ctx, "3x3 empty", 3, 3, 0, NULL, NULL, NULL);
  coo_add(&c, 0, 0, 2.5);
  coo_check(ctx, "1x1", 1, 1, &c);
  /* random with empty rows and columns (every third row/col empty) and explicit zeros */
  for (int k = 0; k < 400; k++) {
    int32_t i = (int32_t)(rnd(&s) % 70), j = (int32_t)(rnd(&s) % 45);
    if (i % 3 == 1 || j % 3 == 2) continue;
    coo_add(&c, i, j, k % 17 == 0 ? 0.0 : coal_random_uniform(1, (uint64_t)k));
  }
  coo_check(ctx, "empty rows/cols", 70, 45, &c);
  /* dense row and dense column on top of a diagonal */
  for (int32_t i = 0; i < 300; i++) coo_add(&c, i, i, 4.0), coo_add(&c, 7, i, 0.5 + i % 3);
  coo_check(ctx, "dense row", 300, 300, &c);
  for (int32_t i = 0; i < 300; i++) coo_add(&c, i, i, 4.0), coo_add(&c, i, 11, -1.0 - i % 5);
  coo_check(ctx, "dense column", 300, 300, &c);
  for (int32_t j = 0; j < 1000; j++) coo_add(&c, 0, j, coal_random_uniform(2, (uint64_t)j));
  coo_check(ctx, "1x1000 dense", 1, 1000, &c);
  for (int32_t i = 0; i < 1000; i++) coo_add(&c, i, 0, coal_random_uniform(3, (uint64_t)i));
  coo_check(ctx, "1000x1 dense", 1000, 1, &c);
  /* diagonal: merge-path parts end on corners of the path */
  for (int32_t i = 0; i < 5000; i++) coo_add(&c, i, i, 1.0 + coal_random_uniform(8, (uint64_t)i));
  coo_check(ctx, "diagonal 5000", 5000, 5000, &c);
  /* rectangular, tall and wide, sizes not multiples of 32 */
  for (int k = 0; k < 2000; k++)
    coo_add(&c, (int32_t)(rnd(&s) % 333), (int32_t)(rnd(&s) % 37),
            coal_random_uniform(4, (uint64_t)k));
  coo_check(ctx, "tall 333x37", 333, 37, &c);
  for (int k = 0; k < 2000; k++)
    coo_add(&c, (int32_t)(rnd(&s) % 37), (int32_t)(rnd(&s) % 333),
            coal_random_uniform(5, (uint64_t)k));
  coo_check(ctx, "wide 37x333", 37, 333, &c);
  /* every row has 33 entries (rows longer than any small H: split rows in fastload-t) */
  for (int32_t i = 0; i < 77; i++)
    for (int32_t k = 0; k < 33; k++)
      coo_add(&c, i, (i * 7 + k) % 101, coal_random_uniform(6, (uint64_t)(i * 33 + k)));
  coo_check(ctx, "rows of 33", 77, 101, &c);
  /* rows of decreasing length (identity permutation in fastload-t) */
  for (int32_t i = 0; i < 70; i++)
    for (int32_t j = i; j < 70; j++) coo_add(&c, i, j, 1.0 + 0.01 * j);
  coo_check(ctx, "upper triangle", 70, 70, &c);
  /* every row identical: long runs of equal rows inside rounds (segment sums) */
  for (int32_t i = 0; i < 65; i++)
    for (int32_t j = 0; j < 40; j++)
      coo_add(&c, i, j, coal_random_uniform(7, (uint64_t)(i * 40 + j)));
  coo_check(ctx, "dense 65x40", 65, 40, &c);
  /* banded: neighbouring columns share rows */
  for (int32_t i = 0; i < 500; i++)
    for (int32_t j = i - 3; j <= i + 3; j++)
      if (j >= 0 && j < 500) coo_add(&c, i, j, j == i ? 6.0 : -1.0);
  coo_check(ctx, "band 500", 500, 500, &c);
  /* ca-GrQc-like: symmetric power-law graph with hubs and isolated vertices */
  {
    int32_t n = 1500;
    for (int32_t i = 0; i < n; i++) {
      int32_t deg = (int32_t)(600 / (1 + rnd(&s) % 300)) + (i % 13 == 0 ? 0 : 1);
      if (i % 29 == 0) deg = 0;
      for (int32_t k = 0; k < deg; k++) {
        int32_t j = (int32_t)((rnd(&s) % (uint64_t)n) * (rnd(&s) % (uint64_t)n) / (uint64_t)n);
        if (j % 29 == 0) continue;
        coo_add(&c, i, j, 1.0), coo_add(&c, j, i, 1.0);
      }
    }
    coo_check(ctx, "power-law graph", n, n, &c);
  }
}

/* 7-point Laplacian (CSR built here, independent of the generators). */
static void test_laplace(coal_ctx ctx, int32_t n) {
  coo c = {0};
  for (int32_t z = 0; z < n; z++)
    for (int32_t y = 0; y < n; y++)
      for (int32_t x = 0; x < n; x++) {
        int32_t i = (z * n + y) * n + x;
        coo_add(&c, i, i, 6.0);
        if (x > 0) coo_add(&c, i, i - 1, -1.0);
        if (x < n - 1) coo_add(&c, i, i + 1, -1.0);
        if (y > 0) coo_add(&c, i, i - n, -1.0);
        if (y < n - 1) coo_add(&c, i, i + n, -1.0);
        if (z > 0) coo_add(&c, i, i - n * n, -1.0);
        if (z < n - 1) coo_add(&c, i, i + n * n, -1.0);
      }
  coo_check(ctx, "laplace3d", n * n * n, n * n * n, &c);
}

static void test_files(coal_ctx ctx) {
  char **paths;
  int nf = check_list_matrices(&paths, 1);
  for (int i = 0; i < nf; i++) {
    const char *path = paths[i], *name = check_basename(path);
    for (int dt = 0; dt < 2; dt++) {
      coal_mat A = NULL;
      coal_status st = coal_mat_read_mm(ctx, path, (coal_dtype)dt, &A);
      if (st == COAL_ERR_UNSUPPORTED) break; /* complex */
      CHECK(st == COAL_SUCCESS, "read %s: %s", path, coal_ctx_last_error(ctx));
      if (A) check_mat(A, name, dt == COAL_F64);
      coal_mat_destroy(&A);
    }
  }
  check_free_matrices(paths, nf);
}

int main(void) {
  coal_ctx ctx = NULL;
  CHECK_OK(ctx, coal_ctx_create(COAL_BACKEND_HOST, &ctx));
  if (!ctx) return check_finish();
  test_edge_cases(ctx);
  test_laplace(ctx, 13);
  test_files(ctx);
  coal_ctx_destroy(&ctx);
  return check_finish();
}
