/* Host twins of the AMG prolongator kernels (kernels/amg.h): the tentative prolongator from the
 * constant near-nullspace and its smoothing by one damped Jacobi step. */
#include "../amg.h"

#include <math.h>

coal_status coal_amg_tentative_host(coal_ctx ctx, int32_t n, int32_t nagg, const int32_t *agg,
                                    const double *b, int32_t *aggptr, int32_t *members,
                                    int32_t *trowptr, int32_t *tcolind, double *tval, double *bc) {
  (void)ctx;
  for (int32_t a = 0; a <= nagg; a++) aggptr[a] = 0;
  for (int32_t i = 0; i < n; i++) aggptr[agg[i] + 1]++;
  for (int32_t a = 0; a < nagg; a++) aggptr[a + 1] += aggptr[a];
  for (int32_t i = 0; i < n; i++) members[aggptr[agg[i]]++] = i; /* stable: ascending i */
  for (int32_t a = nagg; a > 0; a--) aggptr[a] = aggptr[a - 1];
  aggptr[0] = 0;
  for (int32_t a = 0; a < nagg; a++) {
    double s = 0.0;
    for (int32_t q = aggptr[a]; q < aggptr[a + 1]; q++) s += b[members[q]] * b[members[q]];
    bc[a] = sqrt(s);
  }
  for (int32_t i = 0; i <= n; i++) trowptr[i] = i;
  for (int32_t i = 0; i < n; i++) {
    tcolind[i] = agg[i];
    tval[i] = b[i] / bc[agg[i]];
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
