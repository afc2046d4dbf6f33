/* Setup kernels of smoothed-aggregation AMG (solvers/amg.c), declared once for every backend.
 *
 * Every step works on plain CSR arrays (int32 row offsets and columns, double values) in the
 * backend's memory, so that a CUDA twin coal_amg_X_cuda takes the same arguments. The host
 * twins (kernels/host/amg_*.c) define the results: each is a fixed sequence of sweeps over the
 * rows in which row i reads only what earlier sweeps wrote, so a GPU (a thread or a warp per
 * row, one launch per sweep) computes the same integers and the same bits. Outputs whose size
 * depends on the data are made in two calls (count into row offsets with their exclusive scan,
 * then fill), so that the caller allocates in between; on a GPU the scan is one library call
 * and the total one 4-byte download.
 *
 * Memory traffic is given per call with n rows and nnz entries of A (4-byte indices, 8-byte
 * values); m is the number of entries of the strength graph.
 */
#ifndef COAL_KERNELS_AMG_H
#define COAL_KERNELS_AMG_H

#include "../src/internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the smoother's diagonal --------------------------------------------------------------- *
 * dinv[i] = 1 / a_ii (l1 = 0: Jacobi and Chebyshev) or 1 / sum_j |a_ij| (l1 = 1: l1-Jacobi;
 * the diagonal counted once), for the n rows of a square matrix. A missing diagonal entry is 0.
 * *bad = the first row whose a_ii is not positive and finite (-1 if none); dinv[*bad] then holds
 * that a_ii for the caller's message. Traffic: rowptr, colind, values read once; dinv written. */
coal_status coal_amg_dinv_host(coal_ctx ctx, int32_t n, const int32_t *rowptr,
                               const int32_t *colind, const double *val, int l1, double *dinv,
                               int64_t *bad);

/* ---- strength of connection ---------------------------------------------------------------- *
 * Symmetric strength: j != i is a strong neighbour of i when a_ij != 0 and
 *     a_ij * a_ij >= (theta * theta) * |a_ii| * |a_jj|        (|a_ij| >= theta sqrt(a_ii a_jj))
 * with the products rounded in that order (a GPU twin uses __dmul_rn so that no fused
 * multiply-add changes the comparison). The diagonal is not part of the graph; explicit zeros
 * never are strong. For a symmetric A the graph is symmetric. With theta = 0 every stored
 * nonzero off-diagonal entry is strong.
 * count: srowptr[0..n] = the exclusive scan of the strong counts (srowptr[n] = m). Traffic:
 *   A read once plus the diagonal gathered per entry (a_jj), srowptr written.
 * fill: scolind[m] (ascending within a row, as in A) and, when sval is not NULL, the strength
 *   sval[e] = |a_ij| / sqrt(|a_ii| |a_jj|) of each edge (the second pass of the aggregation
 *   uses it; +inf where a diagonal is 0). Traffic: A and the diagonal again, the graph written.
 * diag: the n diagonal entries a_ii (coal_amg_diagonal_host), read per entry for a_jj. */
coal_status coal_amg_strength_count_host(coal_ctx ctx, int32_t n, const int32_t *rowptr,
                                         const int32_t *colind, const double *val,
                                         const double *diag, double theta, int32_t *srowptr);
coal_status coal_amg_strength_fill_host(coal_ctx ctx, int32_t n, const int32_t *rowptr,
                                        const int32_t *colind, const double *val,
                                        const double *diag, double theta, const int32_t *srowptr,
                                        int32_t *scolind, double *sval);
/* The strength kernels' diagonal: diag[i] = a_ii (0 when absent). Traffic: A read once. */
coal_status coal_amg_diagonal_host(coal_ctx ctx, int32_t n, const int32_t *rowptr,
                                   const int32_t *colind, const double *val, double *diag);

/* ---- filtered matrix ------------------------------------------------------------------------ *
 * A_F, the operator the prolongator is smoothed with (Vanek, Mandel and Brezina): the strong
 * entries of A, and on the diagonal a_ii + (sum of a_ij b_j over the row's other off-diagonal
 * entries: weak ones and explicit zeros) / b_i, the sum in row order: the weak part is lumped
 * so that A_F b = A b for the level's near-nullspace vector b (b = 1 on the finest level: A_F
 * keeps A's row sums). Columns ascending, the diagonal in its place even when A stores none;
 * frowptr[i] = srowptr[i] + i (no scan). A_F = A, values and pattern, when every stored
 * off-diagonal entry is strong (theta = 0 and no explicit zeros). Why: the SpGEMM's structure
 * is symbolic, so a row of A that is dense in its pattern (bloweybq: 10000 explicit zeros in
 * row 1) made P's row dense and the next level's matrix full (operator complexity 38.9; 1.17
 * filtered); on anisotropic and structural problems the weak entries only add fill (aniso
 * 32^3, 1e-3: 2.03 to 1.55). Traffic: A, b, srowptr and scolind read, A_F written. */
coal_status coal_amg_filter_host(coal_ctx ctx, int32_t n, const int32_t *rowptr,
                                 const int32_t *colind, const double *val, const double *b,
                                 const int32_t *srowptr, const int32_t *scolind, int32_t *frowptr,
                                 int32_t *fcolind, double *fval);

/* ---- aggregation: distance-2 maximal independent set ---------------------------------------- *
 * Luby-style rounds with hashed priorities (Kelley and Rajamanickam, IPDPS 2022) on the strong
 * graph G (symmetric, no diagonal). Each vertex has a 64-bit state: COAL_AMG_IN (0) < undecided
 * < COAL_AMG_OUT (all ones). Round r = 0, 1, ... is three sweeps:
 *   1. every undecided v gets the priority  state[v] = ((uint64)h(v, r) << 32 | v) + 1,
 *      h(v, r) = coal_amg_hash((uint32)v + 0x9E3779B9 * (uint32)(r + 1))   (unique: v breaks ties);
 *   2. every v: low[v] = min of state over v and its neighbours;
 *   3. every undecided v: m = min of low over v and its neighbours (the minimum of state over
 *      the distance-2 neighbourhood); m == IN: some vertex within distance 2 is in the set, v
 *      becomes OUT; else m == state[v]: v is the smallest in its distance-2 neighbourhood and
 *      becomes IN. (Sweep 3 reads only low and v's own state, so it may update state in place.)
 * Until no vertex is undecided. Two vertices that join in the same round are more than 2 apart
 * (each is the unique minimum of the other's neighbourhood), and later rounds never admit a
 * vertex within distance 2 of one already in: the set is distance-2 independent; it is maximal
 * because a vertex leaves only with an IN within distance 2. A vertex without neighbours joins
 * in round 0. Each round makes at least the smallest undecided vertex decide, so at most n
 * rounds (7-point Laplacians need about 10, bench figures in docs/amg.md).
 * state: n entries (output: IN or OUT), low: n scratch; *rounds: rounds run.
 * Traffic per round: the graph read twice, state and low read per entry (gathers), written per
 * vertex; the undecided count (a reduction, one host wait per round on a GPU). */
#define COAL_AMG_IN  ((uint64_t)0)
#define COAL_AMG_OUT (~(uint64_t)0)
#ifndef COAL_AMG_HD
#define COAL_AMG_HD
#endif
static inline COAL_AMG_HD uint32_t
coal_amg_hash(uint32_t x) { /* "lowbias32" integer hash (C. Wellons) */
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}
coal_status coal_amg_mis2_host(coal_ctx ctx, int32_t n, const int32_t *srowptr,
                               const int32_t *scolind, uint64_t *state, uint64_t *low, int *rounds);

/* Aggregates from the distance-2 MIS (state from coal_amg_mis2_host):
 *   roots: agg[root] = the number of roots before it (an exclusive scan of the root flags:
 *          aggregates are numbered in the order of their roots);
 *   pass 1: a vertex next to a root joins that root's aggregate (roots are at least 3 apart, so
 *          the root is unique);
 *   pass 2: every other vertex (distance 2 from the set, by maximality) joins the aggregate of
 *          the neighbour assigned in pass 1 with the largest strength sval (sval NULL: all
 *          equal), ties to the lowest aggregate number. Pass 2 reads only pass-1 results
 *          (it writes -2 - a, which a later final sweep turns into a), so the order of the rows
 *          does not matter.
 * A vertex without neighbours is a root: it stays alone, an aggregate of its own. *nagg = the
 * number of aggregates (roots). agg: n entries. Traffic: state read, the graph read twice,
 * agg written three times. */
coal_status coal_amg_aggregate_host(coal_ctx ctx, int32_t n, const int32_t *srowptr,
                                    const int32_t *scolind, const double *sval,
                                    const uint64_t *state, int32_t *agg, int32_t *nagg);

/* ---- tentative prolongator ------------------------------------------------------------------- *
 * T (n x nagg) from the level's near-nullspace vector b (the constant on the finest level),
 * normalised per aggregate, and the next level's vector bc (standard SA, one vector):
 *     bc[a] = sqrt(sum of b_j^2 over the members j of aggregate a, ascending j),
 *     T(i, agg[i]) = b_i / bc[agg[i]]                  (one entry a row),
 * so that T^T T = I and T bc = b: the coarse levels keep the near-nullspace exactly (a pure
 * Neumann problem's coarse matrices keep their null vector: A_c bc = P^T A b = 0). Each sum runs
 * over the aggregate's members in ascending order (aggptr / members: the aggregates as lists,
 * a stable counting sort of agg: T^T's structure), so a GPU (a thread per aggregate after a
 * stable transpose) gives the same bits; with b = 1 it is sqrt(|a|) exactly. Writes aggptr
 * [0..nagg], members [n], trowptr[0..n] = 0..n, tcolind[i] = agg[i], tval[i], bc[nagg].
 * Traffic: agg read twice, b read twice (gathered by aggregate), T, bc and the lists written. */
coal_status coal_amg_tentative_host(coal_ctx ctx, int32_t n, int32_t nagg, const int32_t *agg,
                                    const double *b, int32_t *aggptr, int32_t *members,
                                    int32_t *trowptr, int32_t *tcolind, double *tval, double *bc);

/* ---- prolongator smoothing ------------------------------------------------------------------ *
 * P = (I - omega D^-1 A_F) T from the product AT = A_F T (the SpGEMM's result, whose pattern
 * holds T's: (AT)_{i,agg[i]} includes the diagonal entry of A_F times t_i), D = diag(A): in
 * place over AT's values, row i,
 *     v[p] = (colind[p] == agg[i] ? tval[i] : 0) - (omega * dinv[i]) * v[p]
 * with dinv[i] = 1 / a_ii (rounded in that order: a GPU twin writes it with __dmul_rn /
 * __dsub_rn). Traffic: AT's pattern and values read, values written; dinv, agg, tval read. */
coal_status coal_amg_smooth_host(coal_ctx ctx, int32_t n, const int32_t *rowptr,
                                 const int32_t *colind, double *val, const double *dinv,
                                 const int32_t *agg, const double *tval, double omega);

/* ---- the smoother's fused Chebyshev step (solvers/amg_cycle.c) ------------------------------ *
 * One pass over the rows of A (square fp64, n rows) and n x k row-major tight blocks:
 *     s    = rin - A dprev                          (dprev NULL: s = rin)
 *     rout = s                                      (rout NULL: not written)
 *     dnew = c2 * dinv .* s + c1 * dprev            (dprev NULL: no c1 term; dnew NULL: not
 * written) xout = xin + dnew                             (xin NULL: xout = dnew) entry by entry
 * (row i, column c), the product summed in double in row order (the host twin; a GPU sums in
 * another order: results agree to rounding). rout may be rin and xout may be xin (each entry is
 * read before it is written, by its own row); dprev, gathered by every row, is none of the outputs.
 * One step of the cycle's Chebyshev smoother: the residual update, the scaling, the direction and
 * the solution update, which are four block operations and eleven block passes apart, cost one
 * product with A plus the row-local streams (rin, dinv, xin read; rout, dnew, xout written). */
coal_status coal_amg_cheb_step_host(coal_mat A, int64_t k, double c1, double c2, const double *dinv,
                                    const double *rin, double *rout, const double *dprev,
                                    double *dnew, const double *xin, double *xout);

/* ---- the coarsest level's dense solve (solvers/amg_coarse.c) ------------------------------- *
 * X = Pi [ (L11 L11^T)^-1 y1 ; 0 ],  y = Pi^T B: fac is the nc x nc lower Cholesky factor of the
 * permuted coarse matrix Pi^T A_c Pi (column-major, leading dimension nc; only its leading
 * rank x rank block L11 is used), perm[i] the row of A_c that row i of the factor is; B and X
 * nc x k row-major tight; work nc x k (column-major scratch). Host twin: forward and backward
 * substitution per column, sums in index order; the GPU (cuBLAS triangular solves) agrees to
 * rounding. Traffic: the factor read twice per call (rank^2 doubles), B read, X written. */
coal_status coal_amg_coarse_solve_host(coal_ctx ctx, int32_t nc, int32_t rank, const double *fac,
                                       const int32_t *perm, int64_t k, const double *B, double *X,
                                       double *work);

/* ---- the CUDA twins (kernels/cuda/amg_*.cu), same arguments in device memory ---------------- *
 * A thread per row (or vertex, or aggregate) runs the host twin's loop body, so that each row's
 * sums run in the same order; products and sums are written with __dmul_rn / __dadd_rn where
 * the host's expression could otherwise be contracted into a fused multiply-add. Scans are CUB
 * calls on pool memory; totals (m, nagg, the undecided count) come back in 4- to 8-byte
 * downloads. */
coal_status coal_amg_diagonal_cuda(coal_ctx ctx, int32_t n, const int32_t *rowptr,
                                   const int32_t *colind, const double *val, double *diag);
coal_status coal_amg_dinv_cuda(coal_ctx ctx, int32_t n, const int32_t *rowptr,
                               const int32_t *colind, const double *val, int l1, double *dinv,
                               int64_t *bad);
coal_status coal_amg_strength_count_cuda(coal_ctx ctx, int32_t n, const int32_t *rowptr,
                                         const int32_t *colind, const double *val,
                                         const double *diag, double theta, int32_t *srowptr);
coal_status coal_amg_strength_fill_cuda(coal_ctx ctx, int32_t n, const int32_t *rowptr,
                                        const int32_t *colind, const double *val,
                                        const double *diag, double theta, const int32_t *srowptr,
                                        int32_t *scolind, double *sval);
coal_status coal_amg_filter_cuda(coal_ctx ctx, int32_t n, const int32_t *rowptr,
                                 const int32_t *colind, const double *val, const double *b,
                                 const int32_t *srowptr, const int32_t *scolind, int32_t *frowptr,
                                 int32_t *fcolind, double *fval);
coal_status coal_amg_mis2_cuda(coal_ctx ctx, int32_t n, const int32_t *srowptr,
                               const int32_t *scolind, uint64_t *state, uint64_t *low, int *rounds);
coal_status coal_amg_aggregate_cuda(coal_ctx ctx, int32_t n, const int32_t *srowptr,
                                    const int32_t *scolind, const double *sval,
                                    const uint64_t *state, int32_t *agg, int32_t *nagg);
coal_status coal_amg_tentative_cuda(coal_ctx ctx, int32_t n, int32_t nagg, const int32_t *agg,
                                    const double *b, int32_t *aggptr, int32_t *members,
                                    int32_t *trowptr, int32_t *tcolind, double *tval, double *bc);
coal_status coal_amg_smooth_cuda(coal_ctx ctx, int32_t n, const int32_t *rowptr,
                                 const int32_t *colind, double *val, const double *dinv,
                                 const int32_t *agg, const double *tval, double omega);
coal_status coal_amg_coarse_solve_cuda(coal_ctx ctx, int32_t nc, int32_t rank, const double *fac,
                                       const int32_t *perm, int64_t k, const double *B, double *X,
                                       double *work);
coal_status coal_amg_cheb_step_cuda(coal_mat A, int64_t k, double c1, double c2, const double *dinv,
                                    const double *rin, double *rout, const double *dprev,
                                    double *dnew, const double *xin, double *xout);

#ifdef __cplusplus
}
#endif
#endif
