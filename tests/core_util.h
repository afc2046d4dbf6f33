/* Helpers shared by the core-object tests (test_core.c, test_bvec.c): a test-local random
 * generator, random COO matrices, dense views of matrices and comparisons. */
#ifndef COAL_TEST_CORE_UTIL_H
#define COAL_TEST_CORE_UTIL_H

#include "check.h"

#include <stdint.h>

static uint64_t rng_state = 0x1234567ull;
static inline double rnd(void) { /* uniform [-1,1), test-local LCG */
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(rng_state >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}
static inline int rndi(int n) { return (int)((rnd() + 1.0) * 0.5 * n) % n; }

/* Random COO with density about `dens` plus some duplicates; dense sum in d (n x m). */
static inline int64_t rand_coo(int n, int m, double dens, int32_t *ri, int32_t *ci, double *v,
                               double *d) {
  int64_t nnz = 0;
  memset(d, 0, sizeof(double) * (size_t)(n * m));
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      if ((rnd() + 1.0) * 0.5 < dens) {
        ri[nnz] = i, ci[nnz] = j, v[nnz] = rnd();
        d[i * m + j] += v[nnz++];
      }
  int64_t base = nnz;
  for (int64_t e = 0; e < base / 4; e++) { /* duplicates of existing entries */
    int64_t s = rndi((int)base);
    ri[nnz] = ri[s], ci[nnz] = ci[s], v[nnz] = rnd();
    d[ri[s] * m + ci[s]] += v[nnz++];
  }
  for (int64_t e = nnz - 1; e > 0; e--) { /* shuffle */
    int64_t s = rndi((int)(e + 1));
    int32_t t = ri[e];
    ri[e] = ri[s], ri[s] = t;
    t = ci[e], ci[e] = ci[s], ci[s] = t;
    double u = v[e];
    v[e] = v[s], v[s] = u;
  }
  return nnz;
}

/* Dense copy of a matrix (values widened to double); checks canonical CSR on the way. */
static inline double *mat_dense(coal_ctx ctx, coal_mat A, int *canonical) {
  int64_t n, m, nnz;
  CHECK_OK(ctx, coal_mat_size(A, &n, &m, &nnz));
  int64_t *rp = malloc(sizeof(int64_t) * (size_t)(n + 1));
  int32_t *ci = malloc(sizeof(int32_t) * (size_t)(nnz + 1));
  double *v = malloc(sizeof(double) * (size_t)(nnz + 1));
  double *d = calloc((size_t)(n * m) + 1, sizeof(double));
  CHECK_OK(ctx, coal_mat_get_csr(A, rp, ci, v));
  int canon = rp[0] == 0 && rp[n] == nnz;
  for (int64_t i = 0; i < n; i++)
    for (int64_t p = rp[i]; p < rp[i + 1]; p++) {
      double x = coal_mat_dtype(A) == COAL_F32 ? ((float *)v)[p] : v[p];
      if (ci[p] < 0 || ci[p] >= m || (p > rp[i] && ci[p] <= ci[p - 1]))
        canon = 0;
      else
        d[i * m + ci[p]] += x;
    }
  if (canonical) *canonical = canon;
  free(rp), free(ci), free(v);
  return d;
}

/* 1 if A and B hold identical CSR arrays (sizes, dtype, offsets, columns, value bits). */
static inline int same_csr(coal_mat A, coal_mat B) {
  int64_t n[2], m[2], nz[2];
  coal_mat X[2] = {A, B};
  int64_t *rp[2];
  int32_t *ci[2];
  double *v[2];
  for (int t = 0; t < 2; t++) {
    coal_mat_size(X[t], &n[t], &m[t], &nz[t]);
    rp[t] = calloc((size_t)n[t] + 1, sizeof(int64_t));
    ci[t] = calloc((size_t)nz[t] + 1, sizeof(int32_t));
    v[t] = calloc((size_t)nz[t] + 1, sizeof(double));
    coal_mat_get_csr(X[t], rp[t], ci[t], v[t]);
  }
  size_t es = coal_mat_dtype(A) == COAL_F32 ? 4 : 8;
  int same = n[0] == n[1] && m[0] == m[1] && nz[0] == nz[1] &&
             coal_mat_dtype(A) == coal_mat_dtype(B) &&
             !memcmp(rp[0], rp[1], sizeof(int64_t) * (size_t)(n[0] + 1)) &&
             !memcmp(ci[0], ci[1], sizeof(int32_t) * (size_t)nz[0]) &&
             !memcmp(v[0], v[1], es * (size_t)nz[0]);
  for (int t = 0; t < 2; t++) free(rp[t]), free(ci[t]), free(v[t]);
  return same;
}

static inline double max_abs_diff(const double *a, const double *b, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; i++) {
    double d = fabs(a[i] - b[i]);
    if (!(d <= m)) m = d; /* NaN propagates */
  }
  return m;
}

/* ---- contexts ------------------------------------------------------------------------------ */

/* Asking for cuda: NOT_COMPILED without the backend, NO_DEVICE without a GPU, else a context. */
static inline void check_cuda_answer(coal_status st, coal_ctx ctx, const char *what) {
  coal_status want = !coal_cuda_compiled()    ? COAL_ERR_NOT_COMPILED
                     : !coal_cuda_available() ? COAL_ERR_NO_DEVICE
                                              : COAL_SUCCESS;
  CHECK(st == want && (st ? ctx == NULL : coal_ctx_backend(ctx) == COAL_BACKEND_CUDA),
        "%s: %s, expected %s", what, coal_status_string(st), coal_status_string(want));
}

#endif
