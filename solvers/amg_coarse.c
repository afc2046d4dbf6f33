/* The coarsest level of the AMG cycle: a dense Cholesky factorisation on the host, made once at
 * setup and used by every cycle.
 *
 * Factor: the nc x nc matrix A_c from its CSR, column-major, LAPACK dpotrf (lower). When it fails
 * or its smallest pivot l_jj^2 is at the rounding level (<= nc eps max a_ii, LAPACK's rank rule),
 * A_c is numerically singular (a pure Neumann problem, whose constant vector the coarse levels
 * keep): the factorisation is redone with dpstrf (complete pivoting) and the pivots below that
 * level are dropped: with Pi^T A_c Pi = L L^T and L11 its leading rank x rank block, the solve is
 *     x = Pi [ (L11 L11^T)^-1 y1 ; 0 ],  y = Pi^T b,
 * a symmetric positive semi-definite reflexive generalised inverse G (G A_c G = G): for a
 * consistent right-hand side it solves A_c x = b, and the coarse correction P G P^T A stays an
 * A-orthogonal projector, so the cycle is still symmetric and positive semi-definite and CG
 * converges on a consistent singular system (tests/test_amg.c, Neumann Laplacian).
 *
 * The factor and the permutation are uploaded once to the backend's memory; each cycle's solve is
 * the backend's amg.coarse_solve (kernels/amg.h: a gather, the two triangular solves with the
 * leading rank x rank block, a scatter; cuBLAS on a GPU), so nothing crosses the bus per cycle. */
#include "amg_impl.h"
#include "lapack.h"

#include <float.h>
#include <math.h>
#include <string.h>

static void backend_free(coal_amg amg, void *p) {
  if (p) coal_backend(amg->ctx)->mem.release(amg->ctx, p);
}

void coal_amg_coarse_free(coal_amg amg) {
  coal_free(amg->fac);
  coal_free(amg->perm);
  backend_free(amg, amg->fac_b);
  backend_free(amg, amg->perm_b);
  backend_free(amg, amg->cwork);
  amg->fac = NULL, amg->perm = NULL, amg->fac_b = amg->cwork = NULL, amg->perm_b = NULL;
  amg->nc = amg->rank = amg->direct = 0;
}

/* The factor and perm in backend memory (perm is int: 32 bits here). */
_Static_assert(sizeof(int) == sizeof(int32_t), "perm is uploaded as int32");
static coal_status upload_factor(coal_amg amg, int n) {
  coal_ctx ctx = amg->ctx;
  const coal_mem_ops *mem = &coal_backend(ctx)->mem;
  const size_t fb = sizeof(double) * (size_t)n * (size_t)n, pb = sizeof(int32_t) * (size_t)n;
  if (!amg->fac_b) COAL_CALL(mem->alloc(ctx, fb, (void **)&amg->fac_b));
  if (!amg->perm_b) COAL_CALL(mem->alloc(ctx, pb, (void **)&amg->perm_b));
  COAL_CALL(mem->upload(ctx, amg->fac_b, amg->fac, fb));
  return mem->upload(ctx, amg->perm_b, amg->perm, pb);
}

static void fill_dense(coal_mat Ac, double *F) {
  const int32_t n = Ac->nrows;
  const double *v = (const double *)Ac->values;
  memset(F, 0, sizeof(double) * (size_t)n * (size_t)n);
  for (int32_t i = 0; i < n;
       i++) /* row i of A_c is column i of F: F = A_c^T, equal up to rounding */
    for (int32_t p = Ac->rowptr[i]; p < Ac->rowptr[i + 1]; p++)
      F[(size_t)i * n + Ac->colind[p]] = v[p];
}

coal_status coal_amg_coarse_factor(coal_amg amg, coal_mat Ac) {
  coal_ctx ctx = amg->ctx;
  const int n = Ac->nrows;
  /* a numeric re-setup refactors a coarsest matrix of the same size into the same buffers (the
   * host and backend copies of the factor, the permutation, the solve's work) */
  const int again = amg->fac && amg->direct && amg->nc == n;
  if (!again) coal_amg_coarse_free(amg);
  COAL_CALL(coal_mat_host(Ac));
  coal_status st;
  double *work = NULL;
  if (!again) {
    COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(double) * (size_t)n * (size_t)n, (void **)&amg->fac),
                   fail);
    COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int) * (size_t)n, (void **)&amg->perm), fail);
  }
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(double) * 2 * (size_t)n, (void **)&work), fail);
  fill_dense(Ac, amg->fac);
  double dmax = 0.0;
  for (int i = 0; i < n; i++) {
    work[i] = amg->fac[(size_t)i * n + i];
    dmax = fmax(dmax, work[i]);
  }
  const double tol = (double)n * DBL_EPSILON * dmax;
  int info = coal_lapack_potrf(n, amg->fac, n);
  double pmin = INFINITY;
  for (int i = 0; info == 0 && i < n; i++) {
    const double l = amg->fac[(size_t)i * n + i];
    pmin = fmin(pmin, l * l);
  }
  for (int i = 0; i < n; i++) amg->perm[i] = i;
  amg->rank = n;
  if (info != 0 || !(pmin > tol)) { /* singular to rounding: pivoted, the null space dropped */
    fill_dense(Ac, amg->fac);
    int rank = 0;
    info = coal_lapack_pstrf(n, amg->fac, n, amg->perm, &rank, tol, work);
    if (info < 0 || rank < 1) {
      st = COAL_ERROR(ctx, COAL_ERR_NOT_SPD,
                      "AMG: the coarsest matrix (%d rows) has no positive pivot (dpstrf info %d)",
                      n, info);
      goto fail;
    }
    for (int i = 0; i < n; i++) amg->perm[i] -= 1; /* 1-based */
    amg->rank = rank;
  }
  coal_free(work), work = NULL;
  amg->nc = n, amg->direct = 1;
  COAL_CALL_GOTO(st, upload_factor(amg, n), fail);
  return COAL_SUCCESS;
fail:
  coal_free(work);
  coal_amg_coarse_free(amg);
  return st;
}

coal_status coal_amg_coarse_buffers(coal_amg amg, int64_t k) {
  backend_free(amg, amg->cwork);
  amg->cwork = NULL;
  if (!amg->direct) return COAL_SUCCESS;
  const size_t bytes = sizeof(double) * (size_t)amg->nc * (size_t)(k > 0 ? k : 1);
  return coal_backend(amg->ctx)->mem.alloc(amg->ctx, bytes, (void **)&amg->cwork);
}

coal_status coal_amg_coarse_solve(coal_amg amg, int64_t k, const double *B, double *X) {
  return coal_backend(amg->ctx)->amg.coarse_solve(amg->ctx, amg->nc, amg->rank, amg->fac_b,
                                                  amg->perm_b, k, B, X, amg->cwork);
}
