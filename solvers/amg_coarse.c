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
 * Solve, per cycle: the k right-hand sides (nc x k, row-major, backend memory) are downloaded,
 * permuted and transposed to column-major, solved by dpotrs on the leading rank rows, and
 * written back (uploaded). That is 2 nc k doubles over the bus and 2 nc^2 k flops on the host:
 * with nc <= COAL_AMG_DENSE_MAX and the default coarse size, microseconds to a millisecond. */
#include "amg_impl.h"
#include "lapack.h"

#include <float.h>
#include <math.h>
#include <string.h>

void coal_amg_coarse_free(coal_amg amg) {
  coal_free(amg->fac);
  coal_free(amg->perm);
  coal_free(amg->cbuf);
  coal_free(amg->cbuf2);
  amg->fac = amg->cbuf = amg->cbuf2 = NULL, amg->perm = NULL;
  amg->nc = amg->rank = amg->direct = 0;
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
  coal_amg_coarse_free(amg);
  COAL_CALL(coal_mat_host(Ac));
  coal_status st;
  double *work = NULL;
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(double) * (size_t)n * (size_t)n, (void **)&amg->fac),
                 fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int) * (size_t)n, (void **)&amg->perm), fail);
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
  coal_free(work);
  amg->nc = n, amg->direct = 1;
  return COAL_SUCCESS;
fail:
  coal_free(work);
  coal_amg_coarse_free(amg);
  return st;
}

coal_status coal_amg_coarse_buffers(coal_amg amg, int64_t k) {
  coal_free(amg->cbuf);
  coal_free(amg->cbuf2);
  amg->cbuf = amg->cbuf2 = NULL;
  if (!amg->direct) return COAL_SUCCESS;
  const size_t bytes = sizeof(double) * (size_t)amg->nc * (size_t)k;
  COAL_CALL(coal_malloc(amg->ctx, bytes, (void **)&amg->cbuf));
  return coal_malloc(amg->ctx, bytes, (void **)&amg->cbuf2);
}

coal_status coal_amg_coarse_solve(coal_amg amg, int64_t k, const double *B, double *X) {
  coal_ctx ctx = amg->ctx;
  const int n = amg->nc, r = amg->rank;
  const size_t bytes = sizeof(double) * (size_t)n * (size_t)k;
  double *b = amg->cbuf, *y = amg->cbuf2;
  COAL_CALL(coal_backend(ctx)->mem.download(ctx, b, B, bytes));
  for (int i = 0; i < n; i++) { /* y = Pi^T b, column-major */
    const double *src = b + (size_t)amg->perm[i] * (size_t)k;
    for (int64_t j = 0; j < k; j++) y[(size_t)j * n + i] = src[j];
  }
  int info = coal_lapack_potrs(r, (int)k, amg->fac, n, y, n);
  COAL_CHECK(ctx, info == 0, COAL_ERR_ARG, "AMG coarse solve: dpotrs info %d", info);
  for (int64_t j = 0; j < k; j++)
    for (int i = r; i < n; i++) y[(size_t)j * n + i] = 0.0; /* the dropped null space */
  for (int i = 0; i < n; i++) {                             /* x = Pi y, row-major */
    double *dst = b + (size_t)amg->perm[i] * (size_t)k;
    for (int64_t j = 0; j < k; j++) dst[j] = y[(size_t)j * n + i];
  }
  return coal_backend(ctx)->mem.upload(ctx, X, b, bytes);
}
