/* Preconditioned CG, one right-hand side at a time, the whole iteration on the backend.
 *
 * Per iteration (Jacobi or none; n-vectors, 8 bytes per entry):
 *   q = A p                                  SpMV (matrix + p read, q written)
 *   sc[PQ] = p.q                             read p, q                      2 vectors
 *   alpha = rz/pq; x += alpha p; r -= alpha q;
 *   sc[RZ'] = r.(D^-1 r), sc[RR] = r.r        read x r p q dinv, write x r   7 vectors
 *   beta = rz'/rz; p = D^-1 r + beta p        read r dinv p, write p         4 vectors
 * i.e. one SpMV plus 13 vector passes, and no host synchronisation: the scalars stay in
 * device memory (kernels/blas.h). Every `check_every` iterations the four scalars are copied
 * to the host to test convergence, p^T A p > 0 (else the operator is not SPD) and finiteness;
 * a converged column may therefore run up to check_every - 1 extra iterations, which only
 * lowers its residual. With a user or AMG preconditioner, z = M^-1 r is applied after the update
 * and r.z computed separately (z is then passed as r with no diagonal). */
#include "solver_impl.h"

#include <math.h>

typedef struct {
  double *x, *r, *p, *q, *z, *sc;
} cg_work;

static void cg_work_free(coal_solver S, cg_work *w) {
  coal_solver_release(S, w->x);
  coal_solver_release(S, w->r);
  coal_solver_release(S, w->p);
  coal_solver_release(S, w->q);
  coal_solver_release(S, w->z);
  coal_solver_release(S, w->sc);
}

static coal_status cg_work_alloc(coal_solver S, cg_work *w) {
  size_t n = (size_t)S->n;
  COAL_CALL(coal_solver_alloc(S, n, &w->x));
  COAL_CALL(coal_solver_alloc(S, n, &w->r));
  COAL_CALL(coal_solver_alloc(S, n, &w->p));
  COAL_CALL(coal_solver_alloc(S, n, &w->q));
  if (coal_pc_is_operator(S->pc)) COAL_CALL(coal_solver_alloc(S, n, &w->z));
  COAL_CALL(coal_solver_alloc(S, COAL_CG_NSCALARS, &w->sc));
  return COAL_SUCCESS;
}

static coal_status get_scalars(coal_solver S, const cg_work *w, double *h) {
  return coal_backend(S->ctx)->mem.download(S->ctx, h, w->sc, sizeof(double) * COAL_CG_NSCALARS);
}

/* z = M^-1 r into w->z (user) or w->p-style target `dst` (Jacobi / none); sc[slot] = r.z. */
static coal_status precondition(coal_solver S, cg_work *w, double *dst, int slot) {
  const coal_blas_ops *b = &coal_backend(S->ctx)->blas;
  COAL_CALL(coal_solver_apply_pc(S, 1, w->r, dst, NULL));
  return b->cg_dot(S->ctx, S->n, w->r, dst, w->sc, slot);
}

static coal_status cg_column(coal_solver S, cg_work *w, int64_t j) {
  coal_ctx ctx = S->ctx;
  const coal_blas_ops *b = &coal_backend(ctx)->blas;
  coal_mat A = S->A;
  int64_t n = S->n;
  coal_solve_info *inf = &S->info[j];
  int user = coal_pc_is_operator(S->pc);
  const double *dinv = user ? NULL : S->dinv;
  double h[COAL_CG_NSCALARS];

  COAL_CALL(coal_spmv_raw(A, COAL_SPMV_AUTO, -1.0, w->x, 1.0, w->r)); /* r = b - A x */
  COAL_CALL(precondition(S, w, user ? w->z : w->p, COAL_CG_RZ));
  if (user) COAL_CALL(coal_backend(ctx)->mem.copy(ctx, w->p, w->z, sizeof(double) * (size_t)n));
  COAL_CALL(b->cg_dot(ctx, n, w->r, w->r, w->sc, COAL_CG_RR));
  COAL_CALL(get_scalars(S, w, h));
  double norm0 = sqrt(h[COAL_CG_RR]), tol = fmax(S->rtol * inf->rhsnorm, S->atol);
  inf->rec_resnorm = S->mon_norms[j] = norm0;
  inf->reason = COAL_SOLVE_ITERATION_LIMIT;
  if (!isfinite(norm0)) {
    inf->reason = COAL_SOLVE_BREAKDOWN;
    return COAL_SUCCESS;
  }
  if (coal_solver_monitor(S, 0)) {
    inf->reason = COAL_SOLVE_STOPPED;
    return COAL_SUCCESS;
  }
  if (norm0 <= tol) {
    inf->reason = COAL_SOLVE_CONVERGED;
    return COAL_SUCCESS;
  }
  int par = 0;
  for (int it = 1; it <= S->maxit; it++) {
    COAL_CALL(coal_spmv_raw(A, COAL_SPMV_AUTO, 1.0, w->p, 0.0, w->q));
    COAL_CALL(b->cg_dot(ctx, n, w->p, w->q, w->sc, COAL_CG_PQ));
    COAL_CALL(b->cg_update_xr(ctx, n, w->sc, par, w->x, w->r, w->p, w->q, dinv));
    if (user) COAL_CALL(precondition(S, w, w->z, COAL_CG_RZ + 1 - par));
    inf->iterations = it;
    if (it % S->check_every == 0 || it == S->maxit || S->monitor) {
      COAL_CALL(get_scalars(S, w, h));
      double norm = sqrt(h[COAL_CG_RR]), pq = h[COAL_CG_PQ];
      inf->rec_resnorm = S->mon_norms[j] = norm;
      if (isnan(pq) || !isfinite(norm)) {
        inf->reason = COAL_SOLVE_BREAKDOWN;
        break;
      }
      if (!(pq > 0.0)) {
        inf->reason = COAL_SOLVE_NOT_SPD;
        break;
      }
      if (coal_solver_monitor(S, it)) {
        inf->reason = COAL_SOLVE_STOPPED;
        break;
      }
      if (norm <= tol) {
        inf->reason = COAL_SOLVE_CONVERGED;
        break;
      }
      if (norm > COAL_DIVERGENCE_FACTOR * norm0) {
        inf->reason = COAL_SOLVE_DIVERGED;
        break;
      }
      if (!(h[COAL_CG_RZ + 1 - par] > 0.0)) { /* r != 0 but r.M^-1 r <= 0: M not SPD */
        inf->reason = COAL_SOLVE_NOT_SPD;
        break;
      }
    }
    COAL_CALL(b->cg_update_p(ctx, n, w->sc, par, w->p, user ? w->z : w->r, dinv));
    par ^= 1;
  }
  return COAL_SUCCESS;
}

coal_status coal_cg_solve(coal_solver S, coal_bvec B, coal_bvec X) {
  coal_ctx ctx = S->ctx;
  const coal_blas_ops *b = &coal_backend(ctx)->blas;
  cg_work w = {0};
  coal_status st = cg_work_alloc(S, &w);
  for (int64_t j = 0; j < S->k; j++) S->mon_norms[j] = S->info[j].rhsnorm;
  for (int64_t j = 0; !st && j < S->k; j++) {
    int32_t c = (int32_t)j, z = 0;
    st = b->copy_cols(ctx, S->n, 1, (const double *)X->data, X->layout, X->ld, &c, w.x,
                      COAL_ROW_MAJOR, 1, &z);
    if (!st)
      st = b->copy_cols(ctx, S->n, 1, (const double *)B->data, B->layout, B->ld, &c, w.r,
                        COAL_ROW_MAJOR, 1, &z);
    if (!st) st = cg_column(S, &w, j);
    if (!st)
      st = b->copy_cols(ctx, S->n, 1, w.x, COAL_ROW_MAJOR, 1, &z, (double *)X->data, X->layout,
                        X->ld, &c);
    S->iterations += S->info[j].iterations;
  }
  cg_work_free(S, &w);
  return st;
}
