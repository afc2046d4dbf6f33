/* Breakdown-free block CG (in the spirit of Ji & Li 2017, BFBCG): the search block is
 * orthonormalised with a rank-revealing (pivoted) Cholesky-QR, so duplicate, zero or nearly
 * dependent residual columns shrink the block instead of making P^T A P singular.
 *
 * Blocks are n x m row-major with tight leading dimension; ka active columns, s directions:
 *   Q = A P                               SpMM
 *   G = P^T Q (s x s), H = P^T R (s x ka)  host: G = L L^T, alpha = G^-1 H
 *   X += P alpha,  R -= Q alpha            (R stays orthogonal to every P so far)
 *   Z = M^-1 R, ||r_j||                    one pass; converged columns are written to the
 *                                          caller's X and leave the block (the Krylov space
 *                                          is kept: each remaining column is still orthogonal
 *                                          to all earlier directions)
 *   beta = -G^-1 (Q^T Z);  W = Z + P beta  W is A-orthogonal to P
 *   W^T W -> pivoted Cholesky -> T;  P = W T   (orthonormal, rank r <= ka)
 * Memory traffic per iteration (in blocks of n x k doubles): SpMM 2 + matrix, Grams 3 + 2 +
 * 1, updates 3 + 3, preconditioner 2, W 3, P 2: about 21 blocks. The small matrices go to the
 * host (five synchronisations per iteration); a k = 32 factorisation costs a few
 * microseconds there. */
#include "dense.h"
#include "solver_impl.h"

#include <math.h>
#include <string.h>

typedef struct {
  double *Xa, *R, *Z, *Sp, *P, *Q; /* backend blocks, n x k each */
  double *G, *L, *H, *T, *work, *nrm, *norm0, *tol;
  int32_t *act, *keep, *gone, *gone_to, *piv;
} bcg_work;

static void bcg_free(coal_solver S, bcg_work *w) {
  double *dev[] = {w->Xa, w->R, w->Z, w->Sp, w->P, w->Q};
  for (int i = 0; i < 6; i++) coal_solver_release(S, dev[i]);
  coal_free(w->G); /* one host allocation holds every small array */
}

static coal_status bcg_alloc(coal_solver S, bcg_work *w) {
  size_t nk = (size_t)S->n * (size_t)S->k, k = (size_t)S->k;
  double **dev[] = {&w->Xa, &w->R, &w->Z, &w->Sp, &w->P, &w->Q};
  for (int i = 0; i < 6; i++) COAL_CALL(coal_solver_alloc(S, nk, dev[i]));
  size_t nd = 4 * k * k + (2 * k * k + 2 * k) + 3 * k, ni = 5 * k;
  COAL_CALL(coal_malloc(S->ctx, sizeof(double) * nd + sizeof(int32_t) * ni, (void **)&w->G));
  w->L = w->G + k * k, w->H = w->L + k * k, w->T = w->H + k * k, w->work = w->T + k * k;
  w->nrm = w->work + 2 * k * k + 2 * k, w->norm0 = w->nrm + k, w->tol = w->norm0 + k;
  w->act = (int32_t *)(w->tol + k), w->keep = w->act + k, w->gone = w->keep + k;
  w->gone_to = w->gone + k, w->piv = w->gone_to + k;
  return COAL_SUCCESS;
}

/* Y = alpha A X + beta Y over backend blocks (n x m row-major tight). */
static coal_status block_spmm(coal_solver S, double alpha, const double *X, double beta, double *Y,
                              int64_t m) {
  coal_bvec Xv, Yv;
  COAL_CALL(coal_solver_views(S, X, Y, m, &Xv, &Yv));
  return coal_spmm(S->A, COAL_SPMM_AUTO, alpha, Xv, beta, Yv);
}

static void swap(double **a, double **b) {
  double *t = *a;
  *a = *b, *b = t;
}

/* Writes the columns marked in w->gone to the caller's X and compacts Xa, R and Z to the
 * columns in w->keep (through the spare block). */
static coal_status retire(coal_solver S, bcg_work *w, coal_bvec X, int64_t ka, int ngone,
                          int nkeep) {
  coal_ctx ctx = S->ctx;
  const coal_blas_ops *b = coal_blas(ctx);
  if (ngone)
    COAL_CALL(b->copy_cols(ctx, S->n, ngone, w->Xa, COAL_ROW_MAJOR, ka, w->gone, (double *)X->data,
                           X->layout, X->ld, w->gone_to));
  if (!ngone || !nkeep) return COAL_SUCCESS;
  double **blocks[] = {&w->Xa, &w->R, &w->Z};
  for (int i = 0; i < 3; i++) {
    COAL_CALL(b->copy_cols(ctx, S->n, nkeep, *blocks[i], COAL_ROW_MAJOR, ka, w->keep, w->Sp,
                           COAL_ROW_MAJOR, nkeep, NULL));
    swap(blocks[i], &w->Sp);
  }
  for (int a = 0; a < nkeep; a++) w->act[a] = w->act[w->keep[a]];
  return COAL_SUCCESS;
}

/* Convergence test of the ka active columns after iteration `it` (squared norms in w->nrm);
 * fills keep / gone. `all` != COAL_SOLVE_NOT_RUN retires every column with that reason and
 * leaves the norms of the last check. */
static void classify(coal_solver S, bcg_work *w, int64_t ka, int it, coal_solve_reason all,
                     int *ngone, int *nkeep) {
  *ngone = *nkeep = 0;
  for (int64_t a = 0; a < ka; a++) {
    int32_t j = w->act[a];
    coal_solve_info *inf = &S->info[j];
    double norm = sqrt(w->nrm[a]);
    coal_solve_reason r = all;
    inf->iterations = it;
    if (r == COAL_SOLVE_NOT_RUN) { /* a fresh check: w->nrm holds this block's norms */
      if (it == 0) w->norm0[j] = norm;
      inf->rec_resnorm = S->mon_norms[j] = norm;
      if (!isfinite(norm))
        r = COAL_SOLVE_BREAKDOWN;
      else if (norm <= w->tol[j])
        r = COAL_SOLVE_CONVERGED;
      else if (norm > COAL_DIVERGENCE_FACTOR * w->norm0[j])
        r = COAL_SOLVE_DIVERGED;
      else if (it >= S->maxit)
        r = COAL_SOLVE_ITERATION_LIMIT;
    }
    if (r != COAL_SOLVE_NOT_RUN) {
      inf->reason = r;
      w->gone[*ngone] = (int32_t)a, w->gone_to[*ngone] = j, (*ngone)++;
    } else {
      w->keep[(*nkeep)++] = (int32_t)a;
    }
  }
}

/* Retires every active column with reason r (after a failure of the whole block). */
static coal_status retire_all(coal_solver S, bcg_work *w, coal_bvec X, int64_t ka, int it,
                              coal_solve_reason r) {
  int ngone, nkeep;
  classify(S, w, ka, it, r, &ngone, &nkeep);
  return retire(S, w, X, ka, ngone, nkeep);
}

coal_status coal_blockcg_solve(coal_solver S, coal_bvec B, coal_bvec X) {
  coal_ctx ctx = S->ctx;
  const coal_blas_ops *b = coal_blas(ctx);
  int64_t n = S->n, k = S->k, ka = k, s = 0;
  bcg_work w;
  memset(&w, 0, sizeof w);
  coal_status st = bcg_alloc(S, &w);
  if (st) goto done;
  for (int64_t j = 0; j < k; j++) {
    w.act[j] = (int32_t)j;
    w.tol[j] = fmax(S->rtol * S->info[j].rhsnorm, S->atol);
  }
  /* Xa = X, R = B - A X */
  COAL_CALL_GOTO(
      st, b->copy_cols(ctx, n, k, X->data, X->layout, X->ld, NULL, w.Xa, COAL_ROW_MAJOR, k, NULL),
      done);
  COAL_CALL_GOTO(
      st, b->copy_cols(ctx, n, k, B->data, B->layout, B->ld, NULL, w.R, COAL_ROW_MAJOR, k, NULL),
      done);
  COAL_CALL_GOTO(st, block_spmm(S, -1.0, w.Xa, 1.0, w.R, k), done);

  for (int it = 0;; it++) {
    /* Z = M^-1 R with the residual norms; converged columns leave */
    COAL_CALL_GOTO(st, coal_solver_apply_pc(S, ka, w.R, w.Z, w.nrm), done);
    int ngone, nkeep;
    classify(S, &w, ka, it, COAL_SOLVE_NOT_RUN, &ngone, &nkeep);
    S->iterations = it;
    int stop = coal_solver_monitor(S, it);
    COAL_CALL_GOTO(st, retire(S, &w, X, ka, ngone, nkeep), done);
    ka = nkeep;
    if (stop && ka) COAL_CALL_GOTO(st, retire_all(S, &w, X, ka, it, COAL_SOLVE_STOPPED), done);
    if (stop || ka == 0) break;

    /* W = Z + P beta, beta = -G^-1 Q^T Z (G's factor is in L from the last iteration) */
    if (s > 0) {
      COAL_CALL_GOTO(st, b->gram(ctx, n, s, ka, w.Q, s, w.Z, ka, w.H, ka), done);
      coal_dense_chol_solve((int)s, w.L, (int)s, (int)ka, w.H, (int)ka);
      for (int64_t i = 0; i < s * ka; i++) w.H[i] = -w.H[i];
      COAL_CALL_GOTO(st, b->gemm(ctx, n, s, ka, 1.0, w.P, s, w.H, ka, 1.0, w.Z, ka), done);
    }
    /* P = W T, orthonormal, dependent directions dropped */
    COAL_CALL_GOTO(st, b->gram(ctx, n, ka, ka, w.Z, ka, w.Z, ka, w.G, ka), done);
    int rank = 0;
    if (coal_dense_orth_factor((int)ka, w.G, (int)ka, COAL_BCG_DROP_TOL, w.T, (int)ka, &rank,
                               w.work, w.piv) ||
        rank == 0) {
      COAL_CALL_GOTO(st, retire_all(S, &w, X, ka, it, COAL_SOLVE_BREAKDOWN), done);
      break;
    }
    s = rank;
    COAL_CALL_GOTO(st, b->gemm(ctx, n, ka, s, 1.0, w.Z, ka, w.T, ka, 0.0, w.P, s), done);

    /* Q = A P; alpha = (P^T Q)^-1 P^T R; X += P alpha; R -= Q alpha */
    COAL_CALL_GOTO(st, block_spmm(S, 1.0, w.P, 0.0, w.Q, s), done);
    COAL_CALL_GOTO(st, b->gram(ctx, n, s, s, w.P, s, w.Q, s, w.L, s), done);
    coal_dense_symmetrize((int)s, w.L, (int)s);
    if (coal_dense_cholesky((int)s, w.L, (int)s)) {
      int nan = 0;
      for (int64_t i = 0; i < s; i++) nan |= isnan(w.L[i * s + i]);
      COAL_CALL_GOTO(
          st, retire_all(S, &w, X, ka, it + 1, nan ? COAL_SOLVE_BREAKDOWN : COAL_SOLVE_NOT_SPD),
          done);
      break;
    }
    COAL_CALL_GOTO(st, b->gram(ctx, n, s, ka, w.P, s, w.R, ka, w.H, ka), done);
    coal_dense_chol_solve((int)s, w.L, (int)s, (int)ka, w.H, (int)ka);
    COAL_CALL_GOTO(st, b->gemm(ctx, n, s, ka, 1.0, w.P, s, w.H, ka, 1.0, w.Xa, ka), done);
    COAL_CALL_GOTO(st, b->gemm(ctx, n, s, ka, -1.0, w.Q, s, w.H, ka, 1.0, w.R, ka), done);
  }
done:
  bcg_free(S, &w);
  return st;
}
