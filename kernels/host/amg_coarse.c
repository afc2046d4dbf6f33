/* The AMG coarsest level's dense solve, host twin (kernels/amg.h defines it). */
#include "../amg.h"

coal_status coal_amg_coarse_solve_host(coal_ctx ctx, int32_t nc, int32_t rank, const double *fac,
                                       const int32_t *perm, int64_t k, const double *B, double *X,
                                       double *work) {
  (void)ctx;
  for (int64_t j = 0; j < k; j++) {
    double *y = work + j * nc;
    for (int32_t i = 0; i < nc; i++) y[i] = B[(int64_t)perm[i] * k + j]; /* y = Pi^T b */
    for (int32_t i = 0; i < rank; i++) {                                 /* L11 z = y1 */
      double s = y[i];
      for (int32_t p = 0; p < i; p++) s -= fac[(int64_t)p * nc + i] * y[p];
      y[i] = s / fac[(int64_t)i * nc + i];
    }
    for (int32_t i = rank - 1; i >= 0; i--) { /* L11^T w = z */
      double s = y[i];
      for (int32_t p = i + 1; p < rank; p++) s -= fac[(int64_t)i * nc + p] * y[p];
      y[i] = s / fac[(int64_t)i * nc + i];
    }
    for (int32_t i = rank; i < nc; i++) y[i] = 0.0; /* the dropped null space */
    for (int32_t i = 0; i < nc; i++) X[(int64_t)perm[i] * k + j] = y[i]; /* x = Pi w */
  }
  return COAL_SUCCESS;
}
