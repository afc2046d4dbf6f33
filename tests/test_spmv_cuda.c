/* CUDA SpMV kernels against their host twins (suite "cuda", exit 77 without a GPU).
 *
 * Every kernel (csr-vector, csr-merge, fastload, fastload-t, auto) on generated matrices, on
 * awkward COO-built ones (empty rows and columns, a dense row, a dense column, 1x1, 0x0,
 * 7x0, 0x7, tall, wide, sizes that are not multiples of 32, explicit zeros, no entries, a long
 * row among empty ones) and on every shared SuiteSparse matrix, in fp64 and fp32, with
 * y = NaN and beta = 0 and with alpha = -1.5, beta = 0.25 over a random y; the same product on
 * the host context with the same kernel is the reference. Also: repeated calls, new values
 * after coal_mat_set_values, FastLoad heights 1/4/8/32, the symmetrically permuted operator
 * (identity FastLoad permutation), and a refused giant allocation that leaves the context
 * usable. Under compute-sanitizer pass --report-api-errors no: that allocation fails on
 * purpose. */
#include "check_cuda.h"
#include "fastload.h"
#include "internal.h"

#include <stdint.h>

static uint64_t seed_counter = 1000;
static int nproducts = 0;

static const coal_spmv_kernel all_kernels[] = {COAL_SPMV_CSR_VECTOR, COAL_SPMV_CSR_MERGE,
                                               COAL_SPMV_FASTLOAD, COAL_SPMV_FASTLOAD_T,
                                               COAL_SPMV_AUTO};
#define NKERNELS (sizeof all_kernels / sizeof all_kernels[0])

/* Tolerance between the GPU and the host twin, relative to the product's scale (see
 * product_scale; both sum in double; atomics add in the matrix dtype in another order). */
static double tol(coal_dtype dt) { return dt == COAL_F64 ? 1e-12 : 1e-5; }
static const char *dtname(coal_dtype dt) { return dt == COAL_F64 ? "f64" : "f32"; }

typedef struct {
  coal_mat h, d; /* the same matrix on the host and on the CUDA context */
} mat_pair;

static void pair_destroy(mat_pair *M) {
  coal_mat_destroy(&M->h);
  coal_mat_destroy(&M->d);
}

/* Block vector of length n (one column) downloaded into doubles. */
static int get_double(coal_bvec v, int64_t n, double *out) {
  coal_dtype dt = coal_bvec_dtype(v);
  void *tmp = malloc(coal_dtype_size(dt) * ((size_t)n + 1));
  if (!tmp) return 0;
  coal_status st = coal_bvec_get_host(v, tmp, COAL_COL_MAJOR, 0);
  for (int64_t i = 0; st == COAL_SUCCESS && i < n; i++)
    out[i] = dt == COAL_F64 ? ((double *)tmp)[i] : ((float *)tmp)[i];
  free(tmp);
  return st == COAL_SUCCESS;
}

/* Normwise scale of the product: max_i |alpha| sum_j |a_ij x_j| + |beta y0_i|. Rounding
 * errors of any summation order are bounded by a multiple of eps times this, so errors are
 * measured against it rather than against |y|, which cancellation can make tiny (a long row
 * of random signs) while the sums in float stay correct. */
static double product_scale(coal_mat A, double alpha, const double *x, double beta,
                            const double *y0) {
  double s = 0;
  for (int32_t i = 0; i < A->nrows; i++) {
    double r = 0;
    for (int32_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
      double a = A->dtype == COAL_F64 ? ((double *)A->values)[p] : ((float *)A->values)[p];
      r += fabs(a * x[A->colind[p]]);
    }
    r = fabs(alpha) * r + (beta != 0.0 ? fabs(beta * y0[i]) : 0.0);
    if (r > s) s = r;
  }
  return s;
}

/* max |a - b| / scale; NaN anywhere gives +inf. */
static double scaled_diff(const double *a, const double *b, int64_t n, double scale) {
  double d = 0;
  for (int64_t i = 0; i < n; i++) {
    if (isnan(a[i]) || isnan(b[i])) return INFINITY;
    if (fabs(a[i] - b[i]) > d) d = fabs(a[i] - b[i]);
  }
  return scale > 0 ? d / scale : d;
}

static int has_nan(const double *a, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    if (isnan(a[i])) return 1;
  return 0;
}

/* One product y = alpha*A*x + beta*y with kernel k on both contexts, same x and y0. With
 * beta == 0, y0 is NaN (it must not survive) and the GPU product is repeated. */
static void compare(mat_pair *M, const char *name, coal_spmv_kernel k, double alpha, double beta) {
  coal_ctx hc = coal_mat_ctx(M->h), dc = coal_mat_ctx(M->d);
  coal_dtype dt = coal_mat_dtype(M->h);
  int64_t m = 0, n = 0;
  coal_mat_size(M->h, &m, &n, NULL);
  coal_bvec xh = NULL, xd = NULL, yh = NULL, yd = NULL;
  double *ref = malloc(sizeof(double) * ((size_t)m + 1));
  double *got = malloc(sizeof(double) * ((size_t)m + 1));
  double *again = malloc(sizeof(double) * ((size_t)m + 1));
  double *xs = malloc(sizeof(double) * ((size_t)n + 1));
  double *y0 = malloc(sizeof(double) * ((size_t)m + 1));
  uint64_t sx = seed_counter++, sy = seed_counter++;
  CHECK_OK(hc, coal_bvec_create(hc, n, 1, dt, COAL_COL_MAJOR, 0, &xh));
  CHECK_OK(dc, coal_bvec_create(dc, n, 1, dt, COAL_COL_MAJOR, 0, &xd));
  CHECK_OK(hc, coal_bvec_create(hc, m, 1, dt, COAL_COL_MAJOR, 0, &yh));
  CHECK_OK(dc, coal_bvec_create(dc, m, 1, dt, COAL_COL_MAJOR, 0, &yd));
  if (!xh || !xd || !yh || !yd || !ref || !got || !again || !xs || !y0) goto done;
  CHECK_OK(hc, coal_bvec_set_random(xh, sx));
  CHECK_OK(dc, coal_bvec_set_random(xd, sx));
  if (beta == 0.0) {
    CHECK_OK(hc, coal_bvec_set_value(yh, NAN));
    CHECK_OK(dc, coal_bvec_set_value(yd, NAN));
  } else {
    CHECK_OK(hc, coal_bvec_set_random(yh, sy));
    CHECK_OK(dc, coal_bvec_set_random(yd, sy));
  }
  if (!get_double(xh, n, xs) || !get_double(yh, m, y0)) {
    CHECK(0, "%s %s: reading x/y0 failed", name, dtname(dt));
    goto done;
  }
  const double scale = product_scale(M->h, alpha, xs, beta, y0);
  CHECK_OK(hc, coal_spmv(M->h, k, alpha, xh, beta, yh));
  CHECK_OK(dc, coal_spmv(M->d, k, alpha, xd, beta, yd));
  nproducts++;
  if (!get_double(yh, m, ref) || !get_double(yd, m, got)) {
    CHECK(0, "%s %s: download failed: %s", name, dtname(dt), coal_ctx_last_error(dc));
    goto done;
  }
  double d = scaled_diff(got, ref, m, scale);
  CHECK(d <= tol(dt), "%s %s H=%d %s alpha=%g beta=%g: cuda vs host twin %.3g%s%s", name,
        dtname(dt), coal_fastload_height(M->h), coal_spmv_kernel_name(k), alpha, beta, d,
        has_nan(got, m) ? " (NaN in the GPU result)" : "",
        has_nan(ref, m) ? " (NaN in the host result)" : "");
  if (beta == 0.0) {
    /* the same product again (y now holds the result; beta = 0 overwrites it) */
    CHECK_OK(dc, coal_spmv(M->d, k, alpha, xd, beta, yd));
    if (get_double(yd, m, again)) {
      double r = scaled_diff(again, got, m, scale);
      CHECK(r <= tol(dt), "%s %s %s: repeated product differs by %.3g", name, dtname(dt),
            coal_spmv_kernel_name(k), r);
    }
  }
done:
  coal_bvec_destroy(&xh), coal_bvec_destroy(&xd), coal_bvec_destroy(&yh), coal_bvec_destroy(&yd);
  free(ref), free(got), free(again), free(xs), free(y0);
}

static void compare_kernel(mat_pair *M, const char *name, coal_spmv_kernel k) {
  compare(M, name, k, 1.0, 0.0);
  compare(M, name, k, -1.5, 0.25);
}

static void compare_all(mat_pair *M, const char *name) {
  for (size_t k = 0; k < NKERNELS; k++) compare_kernel(M, name, all_kernels[k]);
}

/* ---- matrices ----------------------------------------------------------------------------- */
typedef struct {
  int64_t m, n, nnz, cap;
  int32_t *ri, *ci;
  double *v;
} coo;

static void coo_add(coo *c, int64_t i, int64_t j, double v) {
  if (c->nnz == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 256;
    c->ri = realloc(c->ri, sizeof(int32_t) * (size_t)c->cap);
    c->ci = realloc(c->ci, sizeof(int32_t) * (size_t)c->cap);
    c->v = realloc(c->v, sizeof(double) * (size_t)c->cap);
    if (!c->ri || !c->ci || !c->v) abort(); /* test harness only */
  }
  c->ri[c->nnz] = (int32_t)i, c->ci[c->nnz] = (int32_t)j, c->v[c->nnz] = v;
  c->nnz++;
}

static double rnd(uint64_t seed, uint64_t i) { return coal_random_uniform(seed, i); }
/* Uniform integer in [0, n). */
static int64_t rndi(uint64_t seed, uint64_t i, int64_t n) {
  int64_t r = (int64_t)((rnd(seed, i) + 1.0) * 0.5 * (double)n);
  return r < n ? r : n - 1;
}

/* Entry (i, random column < n, random value); k counts the random numbers drawn. */
static void coo_add_random(coo *c, uint64_t s, uint64_t *k, int64_t i, int64_t n) {
  int64_t j = rndi(s, *k, n);
  coo_add(c, i, j, rnd(s, *k + 1));
  *k += 2;
}

typedef enum {
  M_LAPLACE7,
  M_LAPLACE27,
  M_LAPLACE2D,
  M_POWERLAW,
  M_SPD,
  M_EMPTY_ROWS_COLS,
  M_DENSE_ROW,
  M_DENSE_COL,
  M_ONE,
  M_ZERO,
  M_ROWS_NO_COLS,
  M_COLS_NO_ROWS,
  M_TALL,
  M_WIDE,
  M_TRIDIAG1007,
  M_RANDOM33,
  M_RANDOM31,
  M_EXPLICIT_ZEROS,
  M_NO_ENTRIES,
  M_LONG_ROW_EMPTIES,
  M_COUNT
} matrix_id;

static const char *const matrix_names[M_COUNT] = {"laplace3d-7pt-17^3",
                                                  "laplace3d-27pt-9^3",
                                                  "laplace2d-40x37",
                                                  "powerlaw-5000",
                                                  "random-spd-3000",
                                                  "empty-rows-cols",
                                                  "dense-row",
                                                  "dense-col",
                                                  "1x1",
                                                  "0x0",
                                                  "7x0",
                                                  "0x7",
                                                  "tall-3000x40",
                                                  "wide-40x3000",
                                                  "tridiag-1007",
                                                  "random-33",
                                                  "random-31",
                                                  "explicit-zeros",
                                                  "no-entries-50",
                                                  "long-row-among-empty"};

static void build_coo(matrix_id id, coo *c) {
  uint64_t s = 77 + (uint64_t)id;
  uint64_t k = 0;
  switch (id) {
  case M_EMPTY_ROWS_COLS: /* rows i%3 == 1 and columns j%5 == 2 stay empty */
    c->m = 300, c->n = 200;
    for (int64_t i = 0; i < c->m; i++) {
      if (i % 3 == 1) continue;
      for (int e = 0; e < 4; e++) {
        int64_t j = rndi(s, k++, c->n);
        if (j % 5 == 2) j = (j + 1) % c->n;
        coo_add(c, i, j, rnd(s, k++));
      }
    }
    break;
  case M_DENSE_ROW:
  case M_DENSE_COL: /* diagonal plus one full row / column of 5000 entries */
    c->m = c->n = 5000;
    for (int64_t i = 0; i < c->m; i++) coo_add(c, i, i, 2.0 + rnd(s, k++));
    for (int64_t j = 0; j < c->n; j++) {
      if (id == M_DENSE_ROW)
        coo_add(c, 1234, j, rnd(s, k++));
      else
        coo_add(c, j, 77, rnd(s, k++));
    }
    break;
  case M_ONE: c->m = c->n = 1, coo_add(c, 0, 0, 2.5); break;
  case M_ZERO: c->m = c->n = 0; break;
  case M_ROWS_NO_COLS: c->m = 7, c->n = 0; break;
  case M_COLS_NO_ROWS: c->m = 0, c->n = 7; break;
  case M_TALL:
  case M_WIDE:
    c->m = id == M_TALL ? 3000 : 40, c->n = id == M_TALL ? 40 : 3000;
    for (int64_t i = 0; i < c->m; i++)
      for (int e = 0; e < (id == M_TALL ? 5 : 150); e++) coo_add_random(c, s, &k, i, c->n);
    break;
  case M_TRIDIAG1007:
  case M_EXPLICIT_ZEROS: /* explicit zeros: every third stored value is 0.0 */
    c->m = c->n = id == M_TRIDIAG1007 ? 1007 : 500;
    for (int64_t i = 0; i < c->m; i++)
      for (int64_t j = i - 1; j <= i + 1; j++)
        if (j >= 0 && j < c->n) {
          double v = j == i ? 2.0 : -1.0 + 0.1 * rnd(s, k++);
          if (id == M_EXPLICIT_ZEROS && c->nnz % 3 == 0) v = 0.0;
          coo_add(c, i, j, v);
        }
    break;
  case M_RANDOM33:
  case M_RANDOM31:
    c->m = c->n = id == M_RANDOM33 ? 33 : 31;
    for (int64_t i = 0; i < c->m; i++)
      for (int e = 0; e < 3; e++) coo_add_random(c, s, &k, i, c->n);
    break;
  case M_NO_ENTRIES: c->m = c->n = 50; break;
  case M_LONG_ROW_EMPTIES: /* row 3 has 3000 entries (several merge tiles); 1 row in 100 has one */
    c->m = c->n = 10000;
    for (int64_t j = 0; j < 3000; j++) coo_add(c, 3, 3 * j + 1, rnd(s, k++));
    for (int64_t i = 0; i < c->m; i += 100) coo_add_random(c, s, &k, i, c->n);
    break;
  default: break;
  }
}

static coal_status make_matrix(coal_ctx ctx, matrix_id id, coal_dtype dt, coal_mat *A) {
  switch (id) {
  case M_LAPLACE7: return coal_gen_laplace3d(ctx, 17, 17, 17, 7, dt, A);
  case M_LAPLACE27: return coal_gen_laplace3d(ctx, 9, 9, 9, 27, dt, A);
  case M_LAPLACE2D: return coal_gen_laplace2d(ctx, 40, 37, dt, A);
  case M_POWERLAW: return coal_gen_powerlaw(ctx, 5000, 12.0, 2.5, 7, dt, A);
  case M_SPD: return coal_gen_random_spd(ctx, 3000, 8.0, 11, dt, A);
  default: {
    coo c = {0};
    build_coo(id, &c);
    coal_status st = coal_mat_create_coo(ctx, c.m, c.n, c.nnz, c.ri, c.ci, c.v, dt, A);
    free(c.ri), free(c.ci), free(c.v);
    return st;
  }
  }
}

static int make_pair(ctx_pair *C, matrix_id id, coal_dtype dt, mat_pair *M) {
  M->h = M->d = NULL;
  CHECK_OK(C->h, make_matrix(C->h, id, dt, &M->h));
  CHECK_OK(C->d, make_matrix(C->d, id, dt, &M->d));
  if (M->h && M->d) return 1;
  pair_destroy(M);
  return 0;
}

/* ---- special checks ------------------------------------------------------------------------ */
/* New values on both contexts; the GPU must use them (its copies are refreshed). */
static void check_set_values(mat_pair *M, const char *name) {
  int64_t nnz = 0;
  coal_mat_size(M->h, NULL, NULL, &nnz);
  coal_dtype dt = coal_mat_dtype(M->h);
  size_t es = coal_dtype_size(dt);
  void *v = malloc(es * ((size_t)nnz + 1));
  if (!v) return;
  CHECK_OK(coal_mat_ctx(M->h), coal_mat_get_csr(M->h, NULL, NULL, v));
  for (int64_t p = 0; p < nnz; p++) {
    double a = dt == COAL_F64 ? ((double *)v)[p] : ((float *)v)[p];
    a = -2.0 * a + 0.125 * (double)(p % 7);
    if (dt == COAL_F64)
      ((double *)v)[p] = a;
    else
      ((float *)v)[p] = (float)a;
  }
  CHECK_OK(coal_mat_ctx(M->h), coal_mat_set_values(M->h, v));
  CHECK_OK(coal_mat_ctx(M->d), coal_mat_set_values(M->d, v));
  free(v);
  char nm[160];
  snprintf(nm, sizeof nm, "%s (new values)", name);
  compare_all(M, nm);
}

static void check_heights(mat_pair *M, const char *name) {
  const int hs[] = {1, 4, 8, 32};
  for (size_t i = 0; i < sizeof hs / sizeof hs[0]; i++) {
    CHECK_OK(coal_mat_ctx(M->h), coal_mat_set_fastload_height(M->h, hs[i]));
    CHECK_OK(coal_mat_ctx(M->d), coal_mat_set_fastload_height(M->d, hs[i]));
    compare_kernel(M, name, COAL_SPMV_FASTLOAD);
    compare_kernel(M, name, COAL_SPMV_FASTLOAD_T);
    compare_kernel(M, name, COAL_SPMV_AUTO);
  }
  CHECK_OK(coal_mat_ctx(M->h), coal_mat_set_fastload_height(M->h, 8));
  CHECK_OK(coal_mat_ctx(M->d), coal_mat_set_fastload_height(M->d, 8));
}

/* B = P A P^T with the FastLoad column order of (symmetric) A: B's lanes are already sorted,
 * both formats of B have the identity permutation and the kernels skip the gather map. */
static void check_permuted(mat_pair *M, const char *name) {
  const coal_fastload *f = NULL;
  CHECK_OK(coal_mat_ctx(M->h), coal_mat_fastload(M->h, 0, &f));
  if (!f) return;
  int32_t n = f->nlanes;
  int32_t *perm = malloc(sizeof(int32_t) * ((size_t)n + 1));
  if (!perm) return;
  for (int32_t i = 0; i < n; i++) perm[i] = f->identity_perm || !f->perm ? i : f->perm[i];
  mat_pair B = {NULL, NULL};
  CHECK_OK(coal_mat_ctx(M->h), coal_mat_permute(M->h, perm, &B.h));
  CHECK_OK(coal_mat_ctx(M->d), coal_mat_permute(M->d, perm, &B.d));
  free(perm);
  if (B.h && B.d) {
    const coal_fastload *fb = NULL, *fbt = NULL;
    CHECK_OK(coal_mat_ctx(B.h), coal_mat_fastload(B.h, 0, &fb));
    CHECK_OK(coal_mat_ctx(B.h), coal_mat_fastload(B.h, 1, &fbt));
    CHECK(fb && fb->identity_perm, "%s permuted: scatter format not in identity order", name);
    CHECK(fbt && fbt->identity_perm, "%s permuted: gather format not in identity order", name);
    char nm[160];
    snprintf(nm, sizeof nm, "%s (permuted)", name);
    compare_all(&B, nm);
  }
  pair_destroy(&B);
}

/* A giant block is refused with an error (never a crash) and the context stays usable. */
static void check_out_of_memory(ctx_pair *C) {
  coal_bvec X = NULL;
  coal_status st =
      coal_bvec_create(C->d, INT32_MAX, (int64_t)1 << 20, COAL_F64, COAL_COL_MAJOR, 0, &X);
  CHECK(st == COAL_ERR_DEVICE_MEMORY || st == COAL_ERR_ARG || st == COAL_ERR_OVERFLOW,
        "giant block: %s", coal_status_string(st));
  CHECK(X == NULL, "giant block: handle set on failure");
  CHECK(strlen(coal_ctx_last_error(C->d)) > 0, "giant block: no error message recorded");
  printf("giant block refused: %s\n", coal_ctx_last_error(C->d));
  coal_bvec_destroy(&X);
  mat_pair M;
  if (make_pair(C, M_LAPLACE7, COAL_F64, &M)) {
    compare_all(&M, "after out-of-memory");
    pair_destroy(&M);
  }
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
      if (sh == COAL_ERR_UNSUPPORTED) { /* complex values: not handled by this library */
        pair_destroy(&M);
        continue;
      }
      CHECK(sh == COAL_SUCCESS, "%s: %s", name, coal_ctx_last_error(C->h));
      if (M.h && M.d) {
        compare_all(&M, name);
        used += t == 0;
      }
      pair_destroy(&M);
    }
  }
  check_free_matrices(paths, nn);
  printf("%d shared matrices compared\n", used);
}

int main(void) {
  ctx_pair C;
  const int rc = check_ctx_pair(&C, NULL);
  if (rc) return rc;
  CHECK(strstr(coal_ctx_device_name(C.d), "sm_") != NULL, "device name \"%s\"",
        coal_ctx_device_name(C.d));

  for (int t = 0; t < 2; t++) {
    coal_dtype dt = t ? COAL_F32 : COAL_F64;
    for (int id = 0; id < M_COUNT; id++) {
      mat_pair M;
      if (!make_pair(&C, (matrix_id)id, dt, &M)) continue;
      compare_all(&M, matrix_names[id]);
      if (id == M_LAPLACE27 || id == M_POWERLAW || id == M_DENSE_ROW || id == M_DENSE_COL ||
          id == M_LONG_ROW_EMPTIES)
        check_heights(&M, matrix_names[id]);
      if (id == M_LAPLACE7 || id == M_SPD || id == M_LAPLACE27)
        check_permuted(&M, matrix_names[id]);
      if (id == M_LAPLACE7 || id == M_POWERLAW || id == M_DENSE_ROW || id == M_EXPLICIT_ZEROS)
        check_set_values(&M, matrix_names[id]);
      pair_destroy(&M);
    }
  }
  check_shared(&C);
  check_out_of_memory(&C);

  /* a vector of the other context is refused */
  {
    mat_pair M;
    if (make_pair(&C, M_TRIDIAG1007, COAL_F64, &M)) {
      coal_bvec xh = NULL, yd = NULL;
      CHECK_OK(C.h, coal_bvec_create(C.h, 1007, 1, COAL_F64, COAL_COL_MAJOR, 0, &xh));
      CHECK_OK(C.d, coal_bvec_create(C.d, 1007, 1, COAL_F64, COAL_COL_MAJOR, 0, &yd));
      CHECK_ERR(C.d, coal_spmv(M.d, COAL_SPMV_AUTO, 1.0, xh, 0.0, yd), COAL_ERR_ARG);
      coal_bvec_destroy(&xh), coal_bvec_destroy(&yd);
      pair_destroy(&M);
    }
  }
  CHECK_OK(C.d, coal_ctx_sync(C.d));
  printf("%d products compared\n", nproducts);
  coal_ctx_destroy(&C.d);
  coal_ctx_destroy(&C.h);
  return check_finish();
}
