/* Dense block operations the solvers are written against, declared once for every backend.
 *
 * All work on fp64 data in the backend's memory. A block is n x k, stored row-major (entry
 * (i, j) at i*ld + j, ld >= k) unless a layout argument says otherwise: the solvers keep
 * their blocks in COAL_DEFAULT_LAYOUT. Small dense matrices (coefficients, Gram matrices,
 * column maps, norms) live in host memory, row-major: the solvers factorise them on the host,
 * where a k x k problem (k <= a few hundred) costs microseconds.
 *
 * The host twins (kernels/host/blas.c, blas_vec.c) define the results: sums in double, in
 * index order. The CUDA versions (kernels/cuda/blas.cu, blas_bcg.cu, blas_vec.cu) may sum in
 * another order (tree reductions, cuBLAS), so results agree to rounding, not bit for bit. The front
 * ends in solvers/ check the arguments; n == 0 or an empty column set is valid and does nothing
 * (outputs of sums are then zero).
 *
 * Single-vector CG keeps its scalars on the device, in an array `sc` of COAL_CG_NSCALARS
 * doubles in the backend's memory, so that an iteration needs no host synchronisation:
 *   sc[COAL_CG_PQ]       p.q
 *   sc[COAL_CG_RZ + 0/1] r.z of the current and next iteration (z = dinv .* r), indexed by
 *                        the iteration's parity `par`
 *   sc[COAL_CG_RR]       r.r after the last update
 */
#ifndef COAL_KERNELS_BLAS_H
#define COAL_KERNELS_BLAS_H

#include "../src/internal.h"
#include "spmm.h" /* coal_block_index */

#ifdef __cplusplus
extern "C" {
#endif

/* Widths of the fused Block-CG product (bcg_spmm_gram). */
#define COAL_BCG_FUSED_MIN 5
#define COAL_BCG_FUSED_MAX 32

enum { COAL_CG_PQ = 0, COAL_CG_RZ = 1, COAL_CG_RR = 3, COAL_CG_NSCALARS = 4 };

typedef struct coal_blas_ops {
  /* G = X^T Y: X n x p (row-major, ldx), Y n x q (ldy); G p x q in host memory, row-major
   * with leading dimension ldg >= q. Returns when G is on the host. */
  coal_status (*gram)(coal_ctx ctx, int64_t n, int64_t p, int64_t q, const double *X, int64_t ldx,
                      const double *Y, int64_t ldy, double *G, int64_t ldg);
  /* Y = a*X*C + beta*Y: X n x p (ldx), C p x q in host memory (row-major, ldc >= q), Y n x q
   * (ldy). beta == 0 overwrites Y without reading it. X and Y do not overlap. C may be
   * reused by the caller as soon as the call returns. */
  coal_status (*gemm)(coal_ctx ctx, int64_t n, int64_t p, int64_t q, double a, const double *X,
                      int64_t ldx, const double *C, int64_t ldc, double beta, double *Y,
                      int64_t ldy);
  /* Y = diag(d) X (Y[i,j] = d[i]*X[i,j]; d == NULL: plain copy), X and Y n x k (Y may be
   * X: in place; Y == NULL: nothing written). When nrm2 (host, k entries) is not NULL it
   * receives the column sums of squares of X (before scaling): nrm2[j] = sum_i X[i,j]^2, and
   * the call returns when they are on the host. */
  coal_status (*dscale)(coal_ctx ctx, int64_t n, int64_t k, const double *d, const double *X,
                        int64_t ldx, double *Y, int64_t ldy, double *nrm2);
  /* Column copy with layout change: Y[:, ycols[j]] = X[:, xcols[j]] for j < q, X and Y n x
   * (any number of columns) in their own layouts and leading dimensions. xcols / ycols are
   * host arrays; NULL means the identity (column j). X and Y do not overlap. */
  coal_status (*copy_cols)(coal_ctx ctx, int64_t n, int64_t q, const double *X, coal_layout lx,
                           int64_t ldx, const int32_t *xcols, double *Y, coal_layout ly,
                           int64_t ldy, const int32_t *ycols);
  /* LOBPCG residuals, one pass: for a < q with j = cols[a] (host array),
   *   r = AX[:, j] - lam[a] * MX[:, j],  W[:, a] = d .* r (d == NULL: r; W == NULL: not
   *   written),  nrm2[a] = sum_i r_i^2 (host; returns when they are there).
   * AX and MX are n x (any) with the same leading dimension ldx (MX may be AX's twin block or
   * any other), W n x q with ldw; W does not overlap AX or MX. */
  coal_status (*eig_resid)(coal_ctx ctx, int64_t n, int64_t q, const double *AX, const double *MX,
                           int64_t ldx, const int32_t *cols, const double *lam, const double *d,
                           double *W, int64_t ldw, double *nrm2);
  /* sc[slot] = x.y (n-vectors, contiguous). No host synchronisation. */
  coal_status (*cg_dot)(coal_ctx ctx, int64_t n, const double *x, const double *y, double *sc,
                        int slot);
  /* CG update, one pass: alpha = sc[RZ+par] / sc[PQ]; x += alpha*p; r -= alpha*q; then
   * sc[RZ+1-par] = sum r_i^2 dinv_i (dinv == NULL: 1) and sc[RR] = sum r_i^2 with the
   * updated r. Traffic: read x, r, p, q, dinv; write x, r (7 vectors). */
  coal_status (*cg_update_xr)(coal_ctx ctx, int64_t n, double *sc, int par, double *x, double *r,
                              const double *p, const double *q, const double *dinv);
  /* CG direction, one pass: beta = sc[RZ+1-par] / sc[RZ+par]; p = dinv.*r + beta*p
   * (dinv == NULL: r + beta*p). Traffic: read r, dinv, p; write p (4 vectors). */
  coal_status (*cg_update_p)(coal_ctx ctx, int64_t n, const double *sc, int par, double *p,
                             const double *r, const double *dinv);
  /* Jacobi: dinv[i] = 1 / a_ii for the n rows of the square fp64 matrix A (a missing diagonal
   * entry is 0); *bad = the first row whose a_ii is not positive and finite, -1 if none, and
   * dinv[*bad] then holds that a_ii (for the caller's message). dinv: n doubles in the backend's
   * memory. Returns once *bad is on the host. */
  coal_status (*jacobi)(coal_mat A, double *dinv, int64_t *bad);
  /* The solvers' true residual, for their verdict: R = B - A X (A square fp64, X and B n x k in
   * their own layouts and leading dimensions, R n x k row-major tight; R does not overlap B or
   * X), each entry b_ij - sum_p a_ip x_pj accumulated in double-double in row order (kernels/
   * dd.h) and rounded once, so that R is the exact residual to one rounding per entry even
   * where the fp64 sum would be all rounding error. Traffic: A read once per column, X
   * gathered, B read, R written; it runs once per solve. */
  coal_status (*resid_dd)(coal_mat A, int64_t k, const double *B, coal_layout lb, int64_t ldb,
                          const double *X, coal_layout lx, int64_t ldx, double *R);
  /* Block-CG steps (solvers/blockcg.c). Every block is row-major with a tight leading
   * dimension (its width); small results are host arrays, row-major and tight. Each returns
   * when its sums are on the host. dinv, where given, is a positive diagonal scaling (Jacobi's
   * inverse diagonal), n entries in the backend's memory; NULL means the identity.
   * G = P^T Q, PP = P^T diag(dinv)^-1 P (s x s; P^T P when dinv is NULL) and PR = P^T R (s x m),
   * one pass over P, Q (n x s) and R (n x m). S: n x s scratch, which the pass-by-pass path of
   * wide blocks may overwrite (unused otherwise; may be NULL when dinv is NULL). */
  coal_status (*bcg_gram)(coal_ctx ctx, int64_t n, int64_t s, int64_t m, const double *P,
                          const double *Q, const double *R, const double *dinv, double *S,
                          double *G, double *PP, double *PR);
  /* One pass: R -= Q C (s == 0: R is left as it is), then with Z = diag(dinv) R of the updated R:
   * nrm2[j] = sum_i R_ij^2 (m), QZ = Q^T Z (s x m) and, when RZ is not NULL, RZ = R^T Z (m x m,
   * symmetric; it is Z^T diag(dinv)^-1 Z). Q n x s, R n x m, C s x m (host). Z: n x m scratch,
   * which the pass-by-pass path of wide blocks overwrites (Z itself is not an output). Traffic:
   * read Q, R, dinv; write R. */
  coal_status (*bcg_update)(coal_ctx ctx, int64_t n, int64_t s, int64_t m, const double *Q,
                            const double *C, double *R, const double *dinv, double *Z, double *nrm2,
                            double *QZ, double *RZ);
  /* The next search block and the deferred solution update, one pass: Y = diag(d) X1 C1 + X2 C2
   * (d == NULL: X1 C1 + X2 C2) and, when X3 is not NULL, X3 += X2 C3. X1 n x p1, d n, X2 n x p2
   * (p2 == 0: X2, C2, C3 and X3 unused), Y n x q, X3 n x p1; C1 p1 x q, C2 p2 x q and C3 p2 x p1
   * on the host. q == 0: only X3's update (X1, d, C1, C2 and Y unused). Y and X3 overlap none of
   * the other blocks. Traffic: read X1, d, X2 (and X3); write Y (and X3). */
  coal_status (*bcg_dir)(coal_ctx ctx, int64_t n, int64_t p1, int64_t p2, int64_t q,
                         const double *X1, const double *d, const double *C1, const double *X2,
                         const double *C2, double *Y, const double *C3, double *X3);
  /* Q = A P and then the Grams of bcg_gram (G = P^T Q, PP = P^T diag(dinv)^-1 P, PR = P^T R), in
   * one pass over the blocks: A square fp64 (n x n), Pv and Qv views of tight row-major n x s
   * blocks with COAL_BCG_FUSED_MIN <= s <= COAL_BCG_FUSED_MAX, R n x m with m <=
   * COAL_BCG_FUSED_MAX (other shapes: COAL_ERR_UNSUPPORTED). Q equals the row-split product
   * (coal_spmm with COAL_SPMM_ROWSPLIT), the Grams bcg_gram's to rounding: the host twin is the
   * two calls. NULL where a backend has no fused version (the host); the solver then makes the
   * two calls, as it does where coal_spmm_select picks another kernel than row-split. Traffic:
   * A, P gathered, Q written, R and dinv read (P and Q are not read again). */
  coal_status (*bcg_spmm_gram)(coal_mat A, coal_bvec Pv, coal_bvec Qv, int64_t m, const double *R,
                               const double *dinv, double *G, double *PP, double *PR);
  /* Single vectors of the PETSc vector type (src/petsc/swift_vec.c): n contiguous entries.
   * z = a*x + b*y + c*z + d, entry by entry. x == NULL: no a*x term; y == NULL: no b*y term;
   * c == 0: z is written without being read (NaN in z does not survive). x, y and z may be the
   * same array (each entry is read before it is written). No host synchronisation. */
  coal_status (*vec_axpbypcz)(coal_ctx ctx, int64_t n, double a, const double *x, double b,
                              const double *y, double c, double *z, double d);
  /* w = x .* y (op COAL_VEC_MULT) or w = x ./ y with w_i = 0 where y_i == 0 (COAL_VEC_DIV), as
   * PETSc's VecPointwiseDivide. w may be x or y. No host synchronisation. */
  coal_status (*vec_pointwise)(coal_ctx ctx, int64_t n, int op, const double *x, const double *y,
                               double *w);
  /* out[j] = sum_i x_i * ys[j][i] for j < k: ys is a host array of k vectors, out a host array.
   * Returns when out is on the host. */
  coal_status (*vec_dots)(coal_ctx ctx, int64_t n, int64_t k, const double *x,
                          const double *const *ys, double *out);
  /* out[0] = sum_i |x_i|, out[1] = sum_i (s*x_i)^2, out[2] = max_i |x_i|, NaN when some x_i is
   * NaN (out is a host array of 3). s rescales the sum of squares against overflow and underflow
   * (the caller retries with s = 1/max when the first sum is not usable). Returns when out is on
   * the host. */
  coal_status (*vec_norms)(coal_ctx ctx, int64_t n, const double *x, double s, double *out);
} coal_blas_ops;

enum { COAL_VEC_MULT = 0, COAL_VEC_DIV = 1 };

extern const coal_blas_ops coal_blas_host;
extern const coal_blas_ops coal_blas_cuda; /* answers COAL_ERR_NOT_COMPILED when not built */

static inline const coal_blas_ops *coal_blas(coal_ctx ctx) {
  return ctx->backend == COAL_BACKEND_CUDA ? &coal_blas_cuda : &coal_blas_host;
}

#ifdef __cplusplus
}
#endif
#endif
