/* Dense block operations: the host twins and the CUDA versions of the entries of the table's
 * blas sub-table (struct coal_blas_ops, src/backend.h, where each operation's maths and memory
 * traffic are documented), under one name per operation: coal_blas_<op>_host /
 * coal_blas_<op>_cuda.
 *
 * Host twins in kernels/host/, CUDA versions in kernels/cuda/, under one stem: blas.c / .cu
 * (block and CG steps), blas_bcg (Block-CG steps), blas_vec (single vectors), blas_fill (random
 * and constant fills). The host has no fused bcg_spmm_gram (its entry is NULL). */
#ifndef COAL_KERNELS_BLAS_H
#define COAL_KERNELS_BLAS_H

#include "../src/backend.h"
#include "spmm.h" /* coal_block_index */

#ifdef __cplusplus
extern "C" {
#endif

/* Declares coal_blas_<op><SUFFIX> for every operation both backends have. */
#define COAL_BLAS_DECLARE(SUFFIX)                                                                  \
  coal_status coal_blas_gram##SUFFIX(coal_ctx ctx, int64_t n, int64_t p, int64_t q,                \
                                     const double *X, int64_t ldx, const double *Y, int64_t ldy,   \
                                     double *G, int64_t ldg);                                      \
  coal_status coal_blas_gemm##SUFFIX(coal_ctx ctx, int64_t n, int64_t p, int64_t q, double a,      \
                                     const double *X, int64_t ldx, const double *C, int64_t ldc,   \
                                     double beta, double *Y, int64_t ldy);                         \
  coal_status coal_blas_dscale##SUFFIX(coal_ctx ctx, int64_t n, int64_t k, const double *d,        \
                                       const double *X, int64_t ldx, double *Y, int64_t ldy,       \
                                       double *nrm2);                                              \
  coal_status coal_blas_copy_cols##SUFFIX(                                                         \
      coal_ctx ctx, int64_t n, int64_t q, const double *X, coal_layout lx, int64_t ldx,            \
      const int32_t *xcols, double *Y, coal_layout ly, int64_t ldy, const int32_t *ycols);         \
  coal_status coal_blas_eig_resid##SUFFIX(coal_ctx ctx, int64_t n, int64_t q, const double *AX,    \
                                          const double *MX, int64_t ldx, const int32_t *cols,      \
                                          const double *lam, const double *d, double *W,           \
                                          int64_t ldw, double *nrm2);                              \
  coal_status coal_blas_cg_dot##SUFFIX(coal_ctx ctx, int64_t n, const double *x, const double *y,  \
                                       double *sc, int slot);                                      \
  coal_status coal_blas_cg_update_xr##SUFFIX(coal_ctx ctx, int64_t n, double *sc, int par,         \
                                             double *x, double *r, const double *p,                \
                                             const double *q, const double *dinv);                 \
  coal_status coal_blas_cg_update_p##SUFFIX(coal_ctx ctx, int64_t n, const double *sc, int par,    \
                                            double *p, const double *r, const double *dinv);       \
  coal_status coal_blas_jacobi##SUFFIX(coal_mat A, double *dinv, int64_t *bad);                    \
  coal_status coal_blas_resid_dd##SUFFIX(coal_mat A, int64_t k, const double *B, coal_layout lb,   \
                                         int64_t ldb, const double *X, coal_layout lx,             \
                                         int64_t ldx, double *R);                                  \
  coal_status coal_blas_bcg_gram##SUFFIX(                                                          \
      coal_ctx ctx, int64_t n, int64_t s, int64_t m, const double *P, const double *Q,             \
      const double *R, const double *dinv, double *S, double *G, double *PP, double *PR);          \
  coal_status coal_blas_bcg_update##SUFFIX(                                                        \
      coal_ctx ctx, int64_t n, int64_t s, int64_t m, const double *Q, const double *C, double *R,  \
      const double *dinv, double *Z, double *nrm2, double *QZ, double *RZ);                        \
  coal_status coal_blas_bcg_dir##SUFFIX(coal_ctx ctx, int64_t n, int64_t p1, int64_t p2,           \
                                        int64_t q, const double *X1, const double *d,              \
                                        const double *C1, const double *X2, const double *C2,      \
                                        double *Y, const double *C3, double *X3);                  \
  coal_status coal_blas_fill##SUFFIX(coal_ctx ctx, int64_t n, int64_t k, coal_dtype dtype,         \
                                     coal_layout layout, int64_t ld, void *X, int random,          \
                                     uint64_t seed, double v);                                     \
  coal_status coal_blas_vec_axpbypcz##SUFFIX(coal_ctx ctx, int64_t n, double a, const double *x,   \
                                             double b, const double *y, double c, double *z,       \
                                             double d);                                            \
  coal_status coal_blas_vec_pointwise##SUFFIX(coal_ctx ctx, int64_t n, int op, const double *x,    \
                                              const double *y, double *w);                         \
  coal_status coal_blas_vec_dots##SUFFIX(coal_ctx ctx, int64_t n, int64_t k, const double *x,      \
                                         const double *const *ys, double *out);                    \
  coal_status coal_blas_vec_norms##SUFFIX(coal_ctx ctx, int64_t n, const double *x, double s,      \
                                          double *out);

COAL_BLAS_DECLARE(_host)
COAL_BLAS_DECLARE(_cuda)
#undef COAL_BLAS_DECLARE

/* The fused Block-CG product (bcg_spmm_gram), CUDA only. */
coal_status coal_blas_bcg_spmm_gram_cuda(coal_mat A, coal_bvec Pv, coal_bvec Qv, int64_t m,
                                         const double *R, const double *dinv, double *G, double *PP,
                                         double *PR);

#ifdef __cplusplus
}
#endif
#endif
