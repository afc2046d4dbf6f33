/* Host twins of the AMG prolongator kernels (kernels/amg.h): the tentative prolongator from the
 * constant near-nullspace and its smoothing by one damped Jacobi step. */
#include "../amg.h"

#include <math.h>

coal_status coal_amg_tentative_host(coal_ctx ctx, int32_t n, int32_t nagg, const int32_t *agg,
                                    int32_t *size, int32_t *trowptr, int32_t *tcolind,
                                    double *tval) {
  (void)ctx;
  for (int32_t a = 0; a < nagg; a++) size[a] = 0;
  for (int32_t i = 0; i < n; i++) size[agg[i]]++;
  for (int32_t i = 0; i <= n; i++) trowptr[i] = i;
  for (int32_t i = 0; i < n; i++) {
    tcolind[i] = agg[i];
    tval[i] = 1.0 / sqrt((double)size[agg[i]]);
  }
  return COAL_SUCCESS;
}

coal_status coal_amg_smooth_host(coal_ctx ctx, int32_t n, const int32_t *rowptr,
                                 const int32_t *colind, double *val, const double *dinv,
                                 const int32_t *agg, const double *tval, double omega) {
  (void)ctx;
  for (int32_t i = 0; i < n; i++) {
    const double w = omega * dinv[i];
    for (int32_t p = rowptr[i]; p < rowptr[i + 1]; p++) {
      const double t = colind[p] == agg[i] ? tval[i] : 0.0;
      val[p] = t - w * val[p];
    }
  }
  return COAL_SUCCESS;
}
