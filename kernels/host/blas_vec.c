/* Host twins of the single-vector operations (kernels/blas.h, vec_*): plain loops, sums in
 * double in index order. They define the results the CUDA versions are tested against. */
#include "../blas.h"

#include <math.h>

coal_status coal_blas_vec_axpbypcz_host(coal_ctx ctx, int64_t n, double a, const double *x,
                                        double b, const double *y, double c, double *z, double d) {
  (void)ctx;
  /* x, y and z may be one array: entry i is read before it is written */
  for (int64_t i = 0; i < n; i++) {
    double v = x ? a * x[i] : 0.0;
    if (y) v += b * y[i];
    if (c != 0.0) v += c * z[i];
    z[i] = v + d;
  }
  return COAL_SUCCESS;
}

coal_status coal_blas_vec_pointwise_host(coal_ctx ctx, int64_t n, int op, const double *x,
                                         const double *y, double *w) {
  COAL_CHECK(ctx, op == COAL_VEC_MULT || op == COAL_VEC_DIV, COAL_ERR_ARG,
             "vec_pointwise: unknown op %d", op);
  if (op == COAL_VEC_MULT)
    for (int64_t i = 0; i < n; i++) w[i] = x[i] * y[i];
  else
    for (int64_t i = 0; i < n; i++) w[i] = y[i] != 0.0 ? x[i] / y[i] : 0.0;
  return COAL_SUCCESS;
}

coal_status coal_blas_vec_dots_host(coal_ctx ctx, int64_t n, int64_t k, const double *x,
                                    const double *const *ys, double *out) {
  (void)ctx;
  for (int64_t j = 0; j < k; j++) {
    const double *y = ys[j];
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) s += x[i] * y[i];
    out[j] = s;
  }
  return COAL_SUCCESS;
}

coal_status coal_blas_vec_norms_host(coal_ctx ctx, int64_t n, const double *x, double s,
                                     double *out) {
  (void)ctx;
  double s1 = 0.0, s2 = 0.0, m = 0.0;
  for (int64_t i = 0; i < n; i++) {
    const double a = fabs(x[i]), t = s * x[i];
    s1 += a;
    s2 += t * t;
    m = (a > m || a != a) ? a : m; /* NaN, once seen, stays */
  }
  out[0] = s1, out[1] = s2, out[2] = m;
  return COAL_SUCCESS;
}
