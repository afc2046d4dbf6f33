/* The AMG smoother's fused Chebyshev step, host twin (kernels/amg.h defines it). */
#include "../amg.h"

coal_status coal_amg_cheb_step_host(coal_mat A, int64_t k, double c1, double c2, const double *dinv,
                                    const double *rin, double *rout, const double *dprev,
                                    double *dnew, const double *xin, double *xout) {
  const int32_t n = A->nrows, *rp = A->rowptr, *ci = A->colind;
  const double *v = (const double *)A->values;
  for (int32_t i = 0; i < n; i++)
    for (int64_t c = 0; c < k; c++) {
      const int64_t e = (int64_t)i * k + c;
      double s = 0.0;
      if (dprev)
        for (int32_t p = rp[i]; p < rp[i + 1]; p++) s += v[p] * dprev[(int64_t)ci[p] * k + c];
      s = rin[e] - s;
      if (rout) rout[e] = s;
      double d = c2 * dinv[i] * s;
      if (dprev) d += c1 * dprev[e];
      if (dnew) dnew[e] = d;
      xout[e] = (xin ? xin[e] : 0.0) + d;
    }
  return COAL_SUCCESS;
}
