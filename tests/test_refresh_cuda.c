/* Values-only refresh and device fills (suite "cuda", exit 77 without a GPU).
 *
 * Refresh: each matrix (7-point Laplacian 20^3, a power-law matrix with hubs; fp64 and fp32) is
 * made on a host and a CUDA context. Three rounds: the first product uploads the whole CSR;
 * then twice new values (coal_mat_set_values, the same on both contexts), after which the next
 * product must upload nnz * sizeof(value) bytes and nothing else (coal_device_stats_get), the
 * device CSR structure and the structure-only entries of the matrix's cache (merge-path tile
 * starts, long-row segment lists) must be the same allocations as before, and the formats that hold
 * values (FastLoad scatter and gather, Swift) must be rebuilt once each. In every round every SpMV
 * and SpMM kernel runs on both contexts with the outputs poisoned (NaN) and is compared with the
 * host twin against the product's scale (fp64 1e-12, fp32 1e-5; docs/TESTING.md).
 *
 * Fills: coal_bvec_set_random and coal_bvec_set_value on the GPU (blas.fill) against the host
 * twin, bit for bit over the whole storage (padding included), both dtypes and layouts, padded
 * leading dimensions, an empty block and (not with COALESCE_TEST_QUICK) one of more entries
 * than the kernel's grid covers in one sweep. */
#include "check.h"
#include "coalesce_device.h"
#include "internal.h"

#include <stdint.h>

#if !COAL_TEST_HAVE_CUDA
int main(void) {
  printf("CUDA backend not compiled: skipped\n");
  return 77;
}
#else
#define COAL_TEST_CUDA_INTERNALS
#include "check_cuda.h"

enum { K = 8 }; /* columns of the SpMM blocks */

/* The same matrix on both contexts. */
static int make(const ctx_pair *C, int which, coal_dtype dt, coal_mat *Ah, coal_mat *Ad) {
  *Ah = *Ad = NULL;
  if (which == 0) {
    CHECK_OK(C->h, coal_gen_laplace3d(C->h, 20, 20, 20, 7, dt, Ah));
    CHECK_OK(C->d, coal_gen_laplace3d(C->d, 20, 20, 20, 7, dt, Ad));
  } else {
    CHECK_OK(C->h, coal_gen_powerlaw(C->h, 5000, 8.0, 2.2, 9, dt, Ah));
    CHECK_OK(C->d, coal_gen_powerlaw(C->d, 5000, 8.0, 2.2, 9, dt, Ad));
  }
  return *Ah && *Ad;
}

/* Row sums of |a_ij| times max |x|: bounds the scale of every product below (|x| <= 1). */
static double abs_row_max(coal_mat A) {
  double m = 0;
  for (int32_t i = 0; i < A->nrows; i++) {
    double s = 0;
    for (int32_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
      s += fabs(A->dtype == COAL_F64 ? ((double *)A->values)[p] : ((float *)A->values)[p]);
    m = fmax(m, s);
  }
  return m;
}

/* Max |a - b| over n entries of dtype dt; NaN anywhere gives infinity. */
static double max_diff(const void *a, const void *b, int64_t n, coal_dtype dt) {
  double e = 0;
  for (int64_t q = 0; q < n; q++) {
    const double x = dt == COAL_F64 ? ((const double *)a)[q] : ((const float *)a)[q];
    const double y = dt == COAL_F64 ? ((const double *)b)[q] : ((const float *)b)[q];
    const double d = fabs(x - y);
    if (d != d) return INFINITY;
    e = fmax(e, d);
  }
  return e;
}

/* Every SpMV and SpMM kernel on both contexts, outputs poisoned, against the host twin:
 * y = 1.5 A x - 0.5 y0 and Y = 1.5 A X (beta 0 over NaN). */
static void compare_products(const ctx_pair *C, coal_mat Ah, coal_mat Ad, const char *what) {
  const coal_dtype dt = Ah->dtype;
  const size_t es = coal_dtype_size(dt);
  const double tol = (dt == COAL_F64 ? 1e-12 : 1e-5) * (1.5 * abs_row_max(Ah) + 0.5);
  const int64_t n = Ah->nrows, m = Ah->ncols;
  coal_bvec xh = NULL, xd = NULL, yh = NULL, yd = NULL, Xh = NULL, Xd = NULL, Yh = NULL, Yd = NULL;
  CHECK_OK(C->h, coal_bvec_create(C->h, m, 1, dt, COAL_COL_MAJOR, 0, &xh));
  CHECK_OK(C->d, coal_bvec_create(C->d, m, 1, dt, COAL_COL_MAJOR, 0, &xd));
  CHECK_OK(C->h, coal_bvec_create(C->h, n, 1, dt, COAL_COL_MAJOR, 0, &yh));
  CHECK_OK(C->d, coal_bvec_create(C->d, n, 1, dt, COAL_COL_MAJOR, 0, &yd));
  CHECK_OK(C->h, coal_bvec_create(C->h, m, K, dt, COAL_ROW_MAJOR, 0, &Xh));
  CHECK_OK(C->d, coal_bvec_create(C->d, m, K, dt, COAL_ROW_MAJOR, 0, &Xd));
  CHECK_OK(C->h, coal_bvec_create(C->h, n, K, dt, COAL_ROW_MAJOR, 0, &Yh));
  CHECK_OK(C->d, coal_bvec_create(C->d, n, K, dt, COAL_ROW_MAJOR, 0, &Yd));
  void *a = malloc(es * (size_t)(n * K + 1)), *b = malloc(es * (size_t)(n * K + 1));
  if (xh && xd && yh && yd && Xh && Xd && Yh && Yd && a && b) {
    CHECK_OK(C->h, coal_bvec_set_random(xh, 21));
    CHECK_OK(C->d, coal_bvec_set_random(xd, 21));
    CHECK_OK(C->h, coal_bvec_set_random(Xh, 22));
    CHECK_OK(C->d, coal_bvec_set_random(Xd, 22));
    for (int k = 1; k < COAL_SPMV_NKERNELS; k++) {
      CHECK_OK(C->h, coal_bvec_set_random(yh, 23));
      CHECK_OK(C->d, coal_bvec_set_random(yd, 23));
      CHECK_OK(C->h, coal_spmv(Ah, (coal_spmv_kernel)k, 1.5, xh, -0.5, yh));
      CHECK_OK(C->d, coal_spmv(Ad, (coal_spmv_kernel)k, 1.5, xd, -0.5, yd));
      CHECK_OK(C->h, coal_bvec_get_host(yh, a, COAL_COL_MAJOR, 0));
      CHECK_OK(C->d, coal_bvec_get_host(yd, b, COAL_COL_MAJOR, 0));
      const double e = max_diff(a, b, n, dt);
      CHECK(e <= tol, "%s: SpMV %s differs from the host twin by %g (tolerance %g)", what,
            coal_spmv_kernel_name((coal_spmv_kernel)k), e, tol);
    }
    for (int k = 1; k < COAL_SPMM_NKERNELS; k++) {
      CHECK_OK(C->h, coal_bvec_set_value(Yh, NAN));
      CHECK_OK(C->d, coal_bvec_set_value(Yd, NAN));
      CHECK_OK(C->h, coal_spmm(Ah, (coal_spmm_kernel)k, 1.5, Xh, 0.0, Yh));
      CHECK_OK(C->d, coal_spmm(Ad, (coal_spmm_kernel)k, 1.5, Xd, 0.0, Yd));
      CHECK_OK(C->h, coal_bvec_get_host(Yh, a, COAL_ROW_MAJOR, 0));
      CHECK_OK(C->d, coal_bvec_get_host(Yd, b, COAL_ROW_MAJOR, 0));
      const double e = max_diff(a, b, n * K, dt);
      CHECK(e <= tol, "%s: SpMM %s differs from the host twin by %g (tolerance %g)", what,
            coal_spmm_kernel_name((coal_spmm_kernel)k), e, tol);
    }
  }
  free(a), free(b);
  coal_bvec_destroy(&xh), coal_bvec_destroy(&xd), coal_bvec_destroy(&yh), coal_bvec_destroy(&yd);
  coal_bvec_destroy(&Xh), coal_bvec_destroy(&Xd), coal_bvec_destroy(&Yh), coal_bvec_destroy(&Yd);
}

/* New values v_p (1 + 0.5 r_p), r from the round's stream, on both contexts. */
static void new_values(const ctx_pair *C, coal_mat Ah, coal_mat Ad, uint64_t seed) {
  const size_t es = coal_dtype_size(Ah->dtype);
  void *v = malloc(es * (size_t)(Ah->nnz + 1));
  if (!v) return;
  CHECK_OK(C->h, coal_mat_get_csr(Ah, NULL, NULL, v));
  for (int64_t p = 0; p < Ah->nnz; p++) {
    const double f = 1.0 + 0.5 * coal_random_uniform(seed, (uint64_t)p);
    if (Ah->dtype == COAL_F64)
      ((double *)v)[p] *= f;
    else
      ((float *)v)[p] = (float)(((float *)v)[p] * f);
  }
  CHECK_OK(C->h, coal_mat_set_values(Ah, v));
  CHECK_OK(C->d, coal_mat_set_values(Ad, v));
  free(v);
}

static void test_refresh(const ctx_pair *C, int which, coal_dtype dt) {
  coal_mat Ah = NULL, Ad = NULL;
  if (!make(C, which, dt, &Ah, &Ad)) {
    coal_mat_destroy(&Ah), coal_mat_destroy(&Ad);
    return;
  }
  const char *mname = which == 0 ? "lap3d:20" : "powerlaw:5000";
  const size_t es = coal_dtype_size(dt);
  const uint64_t nnz = (uint64_t)Ad->nnz;
  struct coal_mat_cuda *dev = NULL;
  const void *rp = NULL, *ci = NULL, *vals = NULL, *mrow = NULL, *segs = NULL;
  for (int round = 0; round < 3; round++) {
    char what[96];
    snprintf(what, sizeof what, "%s %s round %d", mname, dt == COAL_F64 ? "f64" : "f32", round);
    coal_device_stats s0, s1, s2;
    CHECK_OK(C->d, coal_device_stats_get(C->d, &s0));
    if (round > 0) {
      new_values(C, Ah, Ad, 100 + (uint64_t)round);
      CHECK(Ad->dev == dev, "%s: set_values released the device copy", what);
    }
    /* the product that refreshes: csr-vector needs no derived format */
    coal_bvec x = NULL, y = NULL;
    CHECK_OK(C->d, coal_bvec_create(C->d, Ad->ncols, 1, dt, COAL_COL_MAJOR, 0, &x));
    CHECK_OK(C->d, coal_bvec_create(C->d, Ad->nrows, 1, dt, COAL_COL_MAJOR, 0, &y));
    if (x && y) CHECK_OK(C->d, coal_spmv(Ad, COAL_SPMV_CSR_VECTOR, 1.0, x, 0.0, y));
    coal_bvec_destroy(&x), coal_bvec_destroy(&y);
    CHECK_OK(C->d, coal_device_stats_get(C->d, &s1));
    const uint64_t want = round == 0 ? 4 * ((uint64_t)Ad->nrows + 1) + (4 + es) * nnz : es * nnz;
    CHECK(s1.upload_bytes - s0.upload_bytes == want, "%s: %llu bytes uploaded, expected %llu", what,
          (unsigned long long)(s1.upload_bytes - s0.upload_bytes), (unsigned long long)want);
    CHECK(s1.full_uploads - s0.full_uploads == (round == 0) &&
              s1.values_uploads - s0.values_uploads == (round > 0),
          "%s: %llu full and %llu values-only uploads", what,
          (unsigned long long)(s1.full_uploads - s0.full_uploads),
          (unsigned long long)(s1.values_uploads - s0.values_uploads));
    if (round > 0 && Ad->dev) {
      const struct coal_mat_cuda *d = Ad->dev;
      CHECK(d->rowptr == rp && d->colind == ci && d->values == vals,
            "%s: the device CSR was reallocated", what);
      CHECK(coal_mat_format_get(Ad, COAL_FMT_CUDA_MERGE) == mrow &&
                coal_mat_format_get(Ad, COAL_FMT_CUDA_LONG_ROWS) == segs,
            "%s: structure-only arrays were rebuilt", what);
    }
    compare_products(C, Ah, Ad, what);
    CHECK_OK(C->d, coal_device_stats_get(C->d, &s2));
    /* FastLoad scatter, FastLoad gather and Swift hold values: built again in every round */
    CHECK(s2.formats_built - s1.formats_built == 3, "%s: %llu formats built, expected 3", what,
          (unsigned long long)(s2.formats_built - s1.formats_built));
    CHECK(s2.full_uploads == s1.full_uploads && s2.values_uploads == s1.values_uploads,
          "%s: the products uploaded the matrix again", what);
    dev = Ad->dev;
    if (dev) {
      rp = dev->rowptr, ci = dev->colind, vals = dev->values;
      mrow = coal_mat_format_get(Ad, COAL_FMT_CUDA_MERGE);
      segs = coal_mat_format_get(Ad, COAL_FMT_CUDA_LONG_ROWS);
    }
  }
  coal_mat_destroy(&Ah), coal_mat_destroy(&Ad);
}

/* One block shape: set_random, then set_value, on both contexts; the whole storage compared. */
static void fill_case(const ctx_pair *C, int64_t n, int64_t k, coal_dtype dt, coal_layout lay,
                      int64_t ld) {
  coal_bvec Xh = NULL, Xd = NULL;
  CHECK_OK(C->h, coal_bvec_create(C->h, n, k, dt, lay, ld, &Xh));
  CHECK_OK(C->d, coal_bvec_create(C->d, n, k, dt, lay, ld, &Xd));
  if (Xh && Xd) {
    const int64_t ldx = coal_bvec_ld(Xh);
    const size_t bytes =
        coal_dtype_size(dt) * (size_t)ldx * (size_t)(lay == COAL_COL_MAJOR ? k : n);
    unsigned char *a = malloc(bytes + 1), *b = malloc(bytes + 1);
    for (int f = 0; f < 2 && a && b; f++) {
      if (f == 0) {
        CHECK_OK(C->h, coal_bvec_set_random(Xh, 0x5eed + (uint64_t)n));
        CHECK_OK(C->d, coal_bvec_set_random(Xd, 0x5eed + (uint64_t)n));
      } else {
        CHECK_OK(C->h, coal_bvec_set_value(Xh, -0.3));
        CHECK_OK(C->d, coal_bvec_set_value(Xd, -0.3));
      }
      CHECK_OK(C->h, coal_device_download(C->h, a, coal_bvec_data(Xh), bytes));
      CHECK_OK(C->d, coal_device_download(C->d, b, coal_bvec_data(Xd), bytes));
      CHECK(!memcmp(a, b, bytes), "%s %lld x %lld %s ld %lld %s: GPU differs from the host twin",
            f ? "set_value" : "set_random", (long long)n, (long long)k,
            dt == COAL_F64 ? "f64" : "f32", (long long)ldx,
            lay == COAL_COL_MAJOR ? "col-major" : "row-major");
    }
    free(a), free(b);
  }
  coal_bvec_destroy(&Xh), coal_bvec_destroy(&Xd);
}

static void test_fill(const ctx_pair *C) {
  for (int t = 0; t < 2; t++) {
    const coal_dtype dt = t ? COAL_F32 : COAL_F64;
    for (int l = 0; l < 2; l++) {
      const coal_layout lay = (coal_layout)l;
      fill_case(C, 1000, 1, dt, lay, 0);
      fill_case(C, 777, 5, dt, lay, lay == COAL_COL_MAJOR ? 800 : 7);
      fill_case(C, 513, 33, dt, lay, 0);
      fill_case(C, 0, 3, dt, lay, 0);
    }
  }
  const char *quick = getenv("COALESCE_TEST_QUICK");
  if (!(quick && *quick && strcmp(quick, "0"))) /* more than 65535 CTAs of 256: grid-stride */
    fill_case(C, 65535LL * 256 + 1001, 1, COAL_F32, COAL_COL_MAJOR, 0);
}

int main(void) {
  ctx_pair C;
  const int rc = check_ctx_pair(&C, NULL);
  if (rc) return rc;
  test_fill(&C);
  for (int which = 0; which < 2; which++)
    for (int t = 0; t < 2; t++) test_refresh(&C, which, t ? COAL_F32 : COAL_F64);
  coal_device_stats s;
  CHECK_OK(C.h, coal_device_stats_get(C.h, &s));
  CHECK(s.upload_bytes == 0 && s.full_uploads == 0 && s.values_uploads == 0 && s.formats_built == 0,
        "the host context counted uploads");
  coal_ctx_destroy(&C.h), coal_ctx_destroy(&C.d);
  return check_finish();
}
#endif
