/* The backend interface: ONE table type (libCEED style), one instance per backend.
 *
 * A context stores its backend's table at creation (ctx->ops, found by coal_backend_table in
 * kernels/backend.c, the one place that knows which backends this build has); every front end
 * checks its arguments, then calls coal_backend(ctx)->sub.op. A backend that was not compiled
 * has no table: coal_ctx_create answers COAL_ERR_NOT_COMPILED, so no stub exists.
 *
 * Instances: coal_backend_host (kernels/host/backend.c) and coal_backend_cuda
 * (kernels/cuda/backend.c, compiled only with CUDA). The functions an instance points at are
 * declared in the family headers (kernels/spmv.h, spmm.h, blas.h, spgemm.h, amg.h, bench.h:
 * coal_X_host and coal_X_cuda) and, for the CUDA memory, residency and context entries, in
 * kernels/cuda/cuda_internal.h.
 *
 * Entries that may be NULL, where a backend has no version of its own (the front end then does
 * the documented fallback): ctx_init, ctx_free, device_count, mem.host_register,
 * mem.host_unregister, select.spmv_prepare, select.spmm_prepare, spgemm.ptap_*,
 * spgemm.transpose*, blas.bcg_spmm_gram and every bench entry but bench.time. Every other entry
 * is set in every instance. spmv[COAL_SPMV_AUTO] and spmm[COAL_SPMM_AUTO] are unused (NULL).
 *
 * This header is core: it includes only internal.h / coalesce.h. Types of the kernels' own
 * objects appear as opaque struct pointers. */
#ifndef COAL_BACKEND_H
#define COAL_BACKEND_H

#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* y = alpha*A*x + beta*y for one vector in the backend's memory (kernels/spmv.h). */
typedef coal_status (*coal_spmv_fn)(coal_mat A, double alpha, const void *x, double beta, void *y);
/* Y = alpha*A*X + beta*Y for a dense block in the backend's memory (kernels/spmm.h). */
typedef coal_status (*coal_spmm_fn)(coal_mat A, double alpha, coal_bvec X, double beta,
                                    coal_bvec Y);
/* coal_bench_fn, one timed repetition of a benchmark: coalesce.h (benchmark support). */

/* ---- memory in the backend's space ------------------------------------------------------- */
typedef struct coal_mem_ops {
  unsigned space; /* COAL_MEM_HOST or COAL_MEM_DEVICE: where alloc's memory lives */
  /* Fresh memory is zeroed on every backend (calloc), so that both start from the same state. */
  coal_status (*alloc)(coal_ctx ctx, size_t bytes, void **p);
  void (*release)(coal_ctx ctx, void *p);
  coal_status (*upload)(coal_ctx ctx, void *dst, const void *src, size_t bytes); /* host->backend */
  coal_status (*download)(coal_ctx ctx, void *dst, const void *src,
                          size_t bytes);                                       /* backend->host */
  coal_status (*copy)(coal_ctx ctx, void *dst, const void *src, size_t bytes); /* within backend */
  coal_status (*sync)(coal_ctx ctx);
  /* Page-locks an existing host range for fast transfers (cudaHostRegister), so that copies from
   * and to it run at the bus speed instead of through the driver's pageable staging. The caller
   * keeps the range alive and unregisters it before it is freed. COAL_ERR_UNSUPPORTED when the
   * range cannot be registered (already registered): the caller then copies from pageable
   * memory, which is slower but correct. NULL where transfers need no page-locking (the host). */
  coal_status (*host_register)(coal_ctx ctx, void *p, size_t bytes);
  void (*host_unregister)(void *p);
  /* Scratch and results of a setup (the AMG's): memory whose contents start undefined, from the
   * context's stream-ordered pool where the backend has one (no device-wide wait to allocate
   * or free), else as alloc. Memory of pool_alloc goes back through pool_release, or to a
   * matrix made by mat.wrap, which then owns it. */
  coal_status (*pool_alloc)(coal_ctx ctx, size_t bytes, void **p);
  void (*pool_release)(coal_ctx ctx, void *p);
} coal_mem_ops;

/* ---- matrix residency: make device copies current / drop them ---------------------------- */
typedef struct coal_mat_ops {
  coal_status (*prepare)(coal_mat A);
  /* Frees A's device copy, after dropping A's COAL_FORMAT_DEVICE cache entries (the formats
   * that hold values go with coal_mat_format_drop, src/internal.h: no entry of their own). */
  void (*release)(coal_mat A);
  /* Copies A's backend CSR into host arrays: each of rowptr [nrows+1], colind [nnz] and values
   * [nnz] that is not NULL (values need the backend's values current). Synchronous. */
  coal_status (*download)(coal_mat A, int32_t *rowptr, int32_t *colind, void *values);
  /* A new fp64 matrix (nrows x ncols, nnz entries) that owns the CSR arrays rowptr, colind and
   * values: backend memory from mem.pool_alloc, sorted unique columns in each row (not checked),
   * written in order before later work on the context's stream. The backend's copy is the
   * current one (a CUDA matrix is device-only until coal_mat_host). On failure the arrays are
   * released and *A is NULL. */
  coal_status (*wrap)(coal_ctx ctx, int32_t nrows, int32_t ncols, int64_t nnz, int32_t *rowptr,
                      int32_t *colind, double *values, coal_mat *A);
  /* The backend's CSR arrays of A, made current first (prepare): pointers that stay valid until
   * A is released or destroyed. Any output may be NULL. */
  coal_status (*csr)(coal_mat A, const int32_t **rowptr, const int32_t **colind, void **values);
  /* The backend's values of A were rewritten in place (by a setup kernel; structure unchanged):
   * the backend's copy becomes the current one, formats that hold values are dropped and
   * A->state is bumped (coal_mat_invalidate on the host, coal_mat_device_values_changed on a
   * device). */
  void (*values_changed)(coal_mat A);
  /* The first stored off-diagonal entry (*row, *col, 0-based; row order) of a square A (fp64 or
   * fp32) whose mirror is not stored or differs by more than tol * max(|a_ij|, |a_ji|); -1, -1
   * when A is symmetric to tol. Reads the backend's copy (made current first); synchronous. */
  coal_status (*asymmetry)(coal_mat A, double tol, int64_t *row, int64_t *col);
} coal_mat_ops;

/* ---- kernel selection for COAL_SPMV_AUTO / COAL_SPMM_AUTO --------------------------------- *
 * The backend's rules (kernels/spmv.c, kernels/spmm.c: coal_spmv_select_host / _cuda,
 * coal_spmm_select_host / _cuda), the answers of coal_spmv_select / coal_spmm_select. A rule
 * reads statistics of A cached on the matrix (computed at first use); the prepare entries compute
 * them before an AUTO product so that a failure propagates from the front end (NULL: the rules
 * read none). */
typedef struct coal_select_ops {
  coal_spmv_kernel (*spmv)(coal_mat A);
  coal_spmm_kernel (*spmm)(coal_mat A, int64_t k, coal_layout layout);
  coal_status (*spmv_prepare)(coal_mat A);
  coal_status (*spmm_prepare)(coal_mat A);
  /* Nonzero: an AUTO SpMM of one contiguous column (k = 1, column-major or ld 1) runs
   * spmv[select.spmv(A)] instead of an SpMM kernel (the SpMV kernels are faster there). */
  int spmm_vector_as_spmv;
  /* P^T A P with at most this many rows (P's columns) runs TileSpGEMM rather than the row-wise
   * product where the AMG setup builds its coarse levels (solvers/amg.c); 0: never. The
   * backend's rule, from its measurements (bench/RESULTS.md, rule amg-tile-ptap). */
  int32_t ptap_tile_rows;
} coal_select_ops;

/* ---- sparse x sparse products (kernels/spgemm.h: product object, algorithms) -------------- */
typedef struct coal_spgemm_ops {
  /* Steps 1 and 2 of C = p->A * p->B and C's CSR structure: creates p->C (values zero, host
   * CSR valid) and fills the backend's part of p and the stats it knows. */
  coal_status (*symbolic)(coal_spgemm p);
  /* Step 3 from the current values of A and B into p->C. download != 0: C's host values are
   * current on return (always so on host); 0 leaves them stale (only for products private to
   * a PtAP object, whose consumer reads the device copy). */
  coal_status (*numeric)(coal_spgemm p, int download);
  /* Fills the statistics that need a pass over C's tiles: empty_tiles_c, tile_pairs and
   * dense_tiles_c (at the current threshold). Called on request only. */
  coal_status (*tile_stats)(coal_spgemm p);
  /* Frees the backend's part of p (not p, not C). */
  void (*release)(coal_spgemm p);
  /* Fused P^T A P of the ROWS algorithm, p->A = A, p->B = P: the symbolic step creates p->C
   * (device-only) and the state in p->dev and sets *fused, or, for shapes it does not handle,
   * returns COAL_SUCCESS with *fused = 0 and nothing made. The numeric step writes C's columns
   * and values; release frees p->dev. NULL where the backend has no fused product (the host):
   * the front end then makes P^T and two products. */
  coal_status (*ptap_symbolic)(coal_spgemm p, int *fused);
  coal_status (*ptap_numeric)(coal_spgemm p);
  void (*ptap_release)(coal_spgemm p);
  /* P^T made by the backend (a matrix of P's context, its values recomputed after P's values
   * changed, structure kept), for ROWS PtAP. NULL where the front end transposes on the host
   * with a map for new values of P (the host; TILE on every backend). */
  coal_status (*transpose)(coal_mat P, coal_mat *Pt);
  coal_status (*transpose_values)(coal_mat P, coal_mat Pt);
} coal_spgemm_ops;

/* ---- dense block operations the solvers are written against ------------------------------ *
 * All work on fp64 data in the backend's memory. A block is n x k, stored row-major (entry
 * (i, j) at i*ld + j, ld >= k) unless a layout argument says otherwise: the solvers keep
 * their blocks in COAL_DEFAULT_LAYOUT. Small dense matrices (coefficients, Gram matrices,
 * column maps, norms) live in host memory, row-major: the solvers factorise them on the host,
 * where a k x k problem (k <= a few hundred) costs microseconds.
 *
 * The host twins (kernels/host/blas.c, blas_vec.c) define the results: sums in double, in
 * index order. The CUDA versions (kernels/cuda/blas.cu, blas_bcg.cu, blas_vec.cu) may sum in
 * another order (tree reductions, cuBLAS), so results agree to rounding, not bit for bit. The
 * front ends in solvers/ check the arguments; n == 0 or an empty column set is valid and does
 * nothing (outputs of sums are then zero).
 *
 * Single-vector CG keeps its scalars on the device, in an array `sc` of COAL_CG_NSCALARS
 * doubles in the backend's memory, so that an iteration needs no host synchronisation:
 *   sc[COAL_CG_PQ]       p.q
 *   sc[COAL_CG_RZ + 0/1] r.z of the current and next iteration (z = dinv .* r), indexed by
 *                        the iteration's parity `par`
 *   sc[COAL_CG_RR]       r.r after the last update
 */
enum { COAL_CG_PQ = 0, COAL_CG_RZ = 1, COAL_CG_RR = 3, COAL_CG_NSCALARS = 4 };

/* Widths of the fused Block-CG product (bcg_spmm_gram). */
#define COAL_BCG_FUSED_MIN 5
#define COAL_BCG_FUSED_MAX 32

/* op of vec_pointwise */
enum { COAL_VEC_MULT = 0, COAL_VEC_DIV = 1 };

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
  /* Fills an n x k block X of dtype (f64 or f32) in layout with leading dimension ld: entry
   * (i, j) = coal_random_at(seed, j*n + i) (src/random.h) when random != 0, else v, rounded to
   * dtype. The counter is the entry's column-major index whatever the layout, so a block holds
   * the same numbers in every layout and on every backend, bit for bit; padding is left alone.
   * Traffic: X written once. No host synchronisation. */
  coal_status (*fill)(coal_ctx ctx, int64_t n, int64_t k, coal_dtype dtype, coal_layout layout,
                      int64_t ld, void *X, int random, uint64_t seed, double v);
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

/* ---- setup kernels of smoothed-aggregation AMG (kernels/amg.h, solvers/amg.c) ------------- *
 * Every entry has the arguments of its host twin coal_amg_X_host in kernels/amg.h, where the
 * results are defined; arrays are in the backend's memory, scalars that the caller needs at once
 * (*bad, *rounds, *nagg) on the host. The CUDA twins (kernels/cuda/amg_*.cu) give the same
 * integers and the same bits; coarse_solve and cheb_step agree to rounding. */
typedef struct coal_amg_ops {
  coal_status (*diagonal)(coal_ctx ctx, int32_t n, const int32_t *rowptr, const int32_t *colind,
                          const double *val, double *diag);
  coal_status (*dinv)(coal_ctx ctx, int32_t n, const int32_t *rowptr, const int32_t *colind,
                      const double *val, int l1, double *dinv, int64_t *bad);
  coal_status (*strength_count)(coal_ctx ctx, int32_t n, const int32_t *rowptr,
                                const int32_t *colind, const double *val, const double *diag,
                                double theta, int32_t *srowptr);
  coal_status (*strength_fill)(coal_ctx ctx, int32_t n, const int32_t *rowptr,
                               const int32_t *colind, const double *val, const double *diag,
                               double theta, const int32_t *srowptr, int32_t *scolind,
                               double *sval);
  coal_status (*filter)(coal_ctx ctx, int32_t n, const int32_t *rowptr, const int32_t *colind,
                        const double *val, const double *b, const int32_t *srowptr,
                        const int32_t *scolind, int32_t *frowptr, int32_t *fcolind, double *fval);
  coal_status (*mis2)(coal_ctx ctx, int32_t n, const int32_t *srowptr, const int32_t *scolind,
                      uint64_t *state, uint64_t *low, int *rounds);
  coal_status (*aggregate)(coal_ctx ctx, int32_t n, const int32_t *srowptr, const int32_t *scolind,
                           const double *sval, const uint64_t *state, int32_t *agg, int32_t *nagg);
  coal_status (*tentative)(coal_ctx ctx, int32_t n, int32_t nagg, const int32_t *agg,
                           const double *b, int32_t *aggptr, int32_t *members, int32_t *trowptr,
                           int32_t *tcolind, double *tval, double *bc);
  coal_status (*smooth)(coal_ctx ctx, int32_t n, const int32_t *rowptr, const int32_t *colind,
                        double *val, const double *dinv, const int32_t *agg, const double *tval,
                        double omega);
  /* the coarsest level's dense solve (coal_amg_coarse_solve_host: the results to rounding) */
  coal_status (*coarse_solve)(coal_ctx ctx, int32_t nc, int32_t rank, const double *fac,
                              const int32_t *perm, int64_t k, const double *B, double *X,
                              double *work);
  /* the cycle's fused Chebyshev step (coal_amg_cheb_step_host: the results to rounding) */
  coal_status (*cheb_step)(coal_mat A, int64_t k, double c1, double c2, const double *dinv,
                           const double *rin, double *rout, const double *dprev, double *dnew,
                           const double *xin, double *xout);
} coal_amg_ops;

/* ---- benchmark support (`coalesce bench`, the probes) ------------------------------------- *
 * Front ends with the public names (coal_bench_time, coal_cusparse_spmv_create, ...:
 * kernels/bench.c, declared in kernels/bench.h, where the meaning of each is documented) check
 * the arguments and call these; a NULL entry answers COAL_ERR_UNSUPPORTED there. Every handle a
 * backend makes (struct coal_cusparse_*) starts with its context (first member `coal_ctx ctx`),
 * so that the front end of run / destroy finds the backend of a handle. */
struct coal_cusparse_spmv;
struct coal_cusparse_spmm;
struct coal_cusparse_spgemm;
typedef struct coal_bench_ops {
  /* One timed call of fn, *us in microseconds (set on every backend: CUDA events around it on
   * the context's stream, a monotonic clock on the host). The front end repeats it. */
  coal_status (*time)(coal_ctx ctx, coal_bench_fn fn, void *arg, double *us);
  coal_status (*copy_bandwidth)(coal_ctx ctx, size_t bytes, double *gbps);
  /* the cuSPARSE references */
  coal_status (*cusparse_spmv_create)(coal_mat A, int alg, const void *x, void *y,
                                      struct coal_cusparse_spmv **out);
  coal_status (*cusparse_spmv_run)(struct coal_cusparse_spmv *h, double alpha, double beta);
  void (*cusparse_spmv_destroy)(struct coal_cusparse_spmv *h);
  coal_status (*cusparse_spmm_create)(coal_mat A, int alg, int64_t k, coal_layout layout,
                                      const void *X, int64_t ldx, void *Y, int64_t ldy,
                                      struct coal_cusparse_spmm **out);
  coal_status (*cusparse_spmm_run)(struct coal_cusparse_spmm *h, double alpha, double beta);
  void (*cusparse_spmm_destroy)(struct coal_cusparse_spmm *h);
  coal_status (*cusparse_spgemm_create)(coal_mat A, coal_mat B, struct coal_cusparse_spgemm **h);
  coal_status (*cusparse_spgemm_run)(struct coal_cusparse_spgemm *h);
  coal_status (*cusparse_spgemm_reuse_setup)(struct coal_cusparse_spgemm *h);
  coal_status (*cusparse_spgemm_reuse_compute)(struct coal_cusparse_spgemm *h);
  coal_status (*cusparse_spgemm_result)(struct coal_cusparse_spgemm *h, coal_mat *C,
                                        size_t *peak_bytes);
  void (*cusparse_spgemm_destroy)(struct coal_cusparse_spgemm *h);
  /* FastLoad format built on the backend, timed in milliseconds */
  coal_status (*fastload_build_time)(coal_mat A, int transposed, double *ms);
} coal_bench_ops;

/* ---- the table ---------------------------------------------------------------------------- */
typedef struct coal_backend_ops {
  const char *name;
  /* context life cycle: ctx_init makes the backend's part of a new context (device, stream,
   * library handles; ctx->device_name), ctx_free releases it; device_count is the number of
   * devices the backend can use (coal_cuda_available). NULL: nothing to make, no device. */
  coal_status (*ctx_init)(coal_ctx ctx);
  void (*ctx_free)(coal_ctx ctx);
  int (*device_count)(void);
  coal_mem_ops mem;
  coal_mat_ops mat;
  coal_select_ops select;
  coal_spmv_fn spmv[COAL_SPMV_NKERNELS]; /* indexed by coal_spmv_kernel; [AUTO] unused */
  coal_spmm_fn spmm[COAL_SPMM_NKERNELS]; /* indexed by coal_spmm_kernel; [AUTO] unused */
  coal_spgemm_ops spgemm;
  coal_amg_ops amg;
  coal_blas_ops blas;
  coal_bench_ops bench;
} coal_backend_ops;

/* The table of backend b, or NULL when b was not compiled in this build (kernels/backend.c). */
const coal_backend_ops *coal_backend_table(coal_backend b);

/* The context's table: one pointer load. A macro because coal_backend also names the public
 * enum type; a function-like macro expands only before a parenthesis, so the type name stays. */
#define coal_backend(ctx) ((ctx)->ops)

/* The instances (reach them through coal_backend_table; coal_backend_cuda exists only in a
 * CUDA build). */
extern const coal_backend_ops coal_backend_host;
extern const coal_backend_ops coal_backend_cuda;

#ifdef __cplusplus
}
#endif
#endif
