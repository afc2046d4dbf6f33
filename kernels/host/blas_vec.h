/* Host twins of the single-vector operations of kernels/blas.h (vec_axpbypcz, vec_pointwise,
 * vec_dots, vec_norms), defined in kernels/host/blas_vec.c and listed in coal_blas_host
 * (kernels/host/blas.c). */
#ifndef COAL_KERNELS_HOST_BLAS_VEC_H
#define COAL_KERNELS_HOST_BLAS_VEC_H

#include "../blas.h"

coal_status coal_host_vec_axpbypcz(coal_ctx ctx, int64_t n, double a, const double *x, double b,
                                   const double *y, double c, double *z, double d);
coal_status coal_host_vec_pointwise(coal_ctx ctx, int64_t n, int op, const double *x,
                                    const double *y, double *w);
coal_status coal_host_vec_dots(coal_ctx ctx, int64_t n, int64_t k, const double *x,
                               const double *const *ys, double *out);
coal_status coal_host_vec_norms(coal_ctx ctx, int64_t n, const double *x, double s, double *out);

#endif
