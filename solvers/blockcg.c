/* Breakdown-free block CG (in the spirit of Ji & Li 2017, BFBCG): the search block is
 * orthonormalised with a rank-revealing (pivoted) Cholesky-QR, so duplicate, zero or nearly
 * dependent residual columns shrink the block instead of making P^T A P singular.
 *
 * The search block is kept as W (n x kw, one column per column active when it was formed) and
 * its orthonormalising factor T (kw x s, s = rank) on the host: P = W T is never formed. Every
 * product with P goes through T on the host (A P = (A W) T, P^T R = T^T (W^T R), ...), so the
 * orthonormalisation costs no pass and its Gram W^T M W is measured, not derived. M is the inner
 * product the block is orthonormal in: diag(dinv)^-1 with Jacobi (the symmetrically scaled
 * system's Euclidean one), I otherwise.
 *
 * Blocks are n x m row-major with tight leading dimension; ka active columns. With no
 * preconditioner or Jacobi (M^-1 = diag(dinv)), one iteration is three passes over the blocks
 * and two host round trips:
 *   1. bcg_update: R -= Y CA (Y = A W, CA = T alpha), the column norms of R and Y^T Z with
 *      Z = M^-1 R (not stored). Converged columns leave the block (the Krylov space is kept:
 *      each remaining column is still orthogonal to all earlier directions).
 *   host: beta = -G^-1 T^T (Y^T Z), CB = T beta.
 *   2. bcg_dir: W' = Z + W CB (= Z + P beta), and the deferred X += W CA (= P alpha) while W is
 *      read anyway (no sums: no round trip).
 *   3. bcg_spmm_gram: Y = A W' and the Grams W'^T Y, W'^T M W', W'^T R in one pass (the SpMM and
 *      bcg_gram where the backend has no fused pass or would not run the row-split kernel).
 *   host: T from the pivoted Cholesky of W'^T M W' (dependent directions dropped); G = T^T (W'^T
 *      Y) T = P^T A P = L L^T; alpha = G^-1 T^T (W'^T R); CA = T alpha.
 * Traffic per iteration in blocks of n x k doubles: update 3 (read Y, R; write R), bcg_dir 5
 * (read R, W, X; write W', X), the fused pass 3 (W gathered, Y written, R read): 11. A user or
 * AMG preconditioner needs Z stored: the update is split around its call and bcg_dir reads Z.
 *
 * The Grams are measured on the blocks, never derived on the host from other Grams and the
 * coefficients: a derived Gram misses the rounding of R's update (bench/RESULTS.md, rule
 * bcg-measured-grams). */
#include "dense.h"
#include "solver_impl.h"

#include <math.h>
#include <string.h>

typedef struct {
  double *Xa, *R, *Z, *Sp, *W, *Y; /* backend blocks, n x k each (Z: user preconditioner only) */
  /* host, k x k each unless noted: L (G = P^T A P, then its Cholesky factor, s x s), Gw = W^T Y,
   * Mw = W^T M W (kw x kw), Hw = W^T R (kw x ka), T (kw x s, ld kw), Tt (T tight), H (s x ka:
   * P^T R, then alpha), CA = T alpha and CB = T beta (kw x ka), YZ = Y^T Z (kw x ka), Bt (s x
   * ka: P^T A Z, then beta), Id (ka x ka identity), work (2k^2 + 2k) */
  double *L, *Gw, *Mw, *Hw, *T, *Tt, *H, *CA, *CB, *YZ, *Bt, *Id, *work, *nrm, *norm0, *tol;
  int32_t *act, *keep, *gone, *gone_to, *piv;
  int pending; /* Xa += W CA is owed: bcg_dir or settle() pays it */
  int s_prev;  /* > 0: the last search block kept s_prev < ka directions; the next update
                  measures the rank of Z on the same columns (collapsed()) */
  int streak;  /* consecutive iterations whose search block had collapsed */
} bcg_work;

enum { BCG_KK = 12 }; /* k x k host matrices */

static void bcg_free(coal_solver S, bcg_work *w) {
  double *dev[] = {w->Xa, w->R, w->Z, w->Sp, w->W, w->Y};
  for (int i = 0; i < 6; i++) coal_solver_release(S, dev[i]);
  coal_free(w->L); /* one host allocation holds every small array */
}

static coal_status bcg_alloc(coal_solver S, bcg_work *w) {
  size_t nk = (size_t)S->n * (size_t)S->k, k = (size_t)S->k, kk = k * k;
  double **dev[] = {&w->Xa, &w->R, &w->Z, &w->Sp, &w->W, &w->Y};
  for (int i = 0; i < 6; i++) COAL_CALL(coal_solver_alloc(S, nk, dev[i]));
  size_t nd = BCG_KK * kk + (2 * kk + 2 * k) + 3 * k, ni = 5 * k;
  COAL_CALL(coal_malloc(S->ctx, sizeof(double) * nd + sizeof(int32_t) * ni, (void **)&w->L));
  double **small[] = {&w->Gw, &w->Mw, &w->Hw, &w->T,  &w->Tt, &w->H,
                      &w->CA, &w->CB, &w->YZ, &w->Bt, &w->Id, &w->work};
  for (int i = 0; i < BCG_KK; i++) *small[i] = w->L + (size_t)(i + 1) * kk;
  w->nrm = w->work + 2 * kk + 2 * k, w->norm0 = w->nrm + k, w->tol = w->norm0 + k;
  w->act = (int32_t *)(w->tol + k), w->keep = w->act + k, w->gone = w->keep + k;
  w->gone_to = w->gone + k, w->piv = w->gone_to + k;
  return COAL_SUCCESS;
}

/* C (p x q, ldc) = A^T B: A r x p (lda), B r x q (ldb); host. Each entry is summed in index
 * order; the loops run over rows of B innermost so that they vectorise. */
static void dense_atb(int r, int p, int q, const double *A, int lda, const double *B, int ldb,
                      double *C, int ldc) {
  for (int a = 0; a < p; a++)
    for (int b = 0; b < q; b++) C[a * ldc + b] = 0.0;
  for (int i = 0; i < r; i++)
    for (int a = 0; a < p; a++) {
      const double v = A[i * lda + a];
      for (int b = 0; b < q; b++) C[a * ldc + b] += v * B[i * ldb + b];
    }
}

/* C (p x q, ldc) = A B: A p x r (lda), B r x q (ldb); same summation order. */
static void dense_ab(int p, int r, int q, const double *A, int lda, const double *B, int ldb,
                     double *C, int ldc) {
  for (int a = 0; a < p; a++) {
    double *c = C + a * ldc;
    for (int b = 0; b < q; b++) c[b] = 0.0;
    for (int i = 0; i < r; i++) {
      const double v = A[a * lda + i];
      for (int b = 0; b < q; b++) c[b] += v * B[i * ldb + b];
    }
  }
}

/* Y = alpha A X + beta Y over backend blocks (n x m row-major tight). */
static coal_status block_spmm(coal_solver S, double alpha, const double *X, double beta, double *Y,
                              int64_t m) {
  coal_bvec Xv, Yv;
  COAL_CALL(coal_solver_views(S, X, Y, m, &Xv, &Yv));
  return coal_spmm(S->A, COAL_SPMM_AUTO, alpha, Xv, beta, Yv);
}

/* Y = A W with Gw = W^T Y, Mw = W^T M W and Hw = W^T R: one fused pass where the backend has one
 * and the product would run the row-split kernel anyway, else the SpMM and bcg_gram (the spare
 * block, free at this point, is its scratch). */
static coal_status product_grams(coal_solver S, bcg_work *w, int64_t kw, int64_t ka) {
  const coal_blas_ops *b = &coal_backend(S->ctx)->blas;
  const double *dinv = coal_pc_is_operator(S->pc) ? NULL : S->dinv; /* M = diag(dinv)^-1 or I */
  if (b->bcg_spmm_gram && kw >= COAL_BCG_FUSED_MIN && kw <= COAL_BCG_FUSED_MAX &&
      ka <= COAL_BCG_FUSED_MAX &&
      coal_spmm_select(S->A, kw, COAL_ROW_MAJOR) == COAL_SPMM_ROWSPLIT) {
    coal_bvec Wv, Yv;
    COAL_CALL(coal_solver_views(S, w->W, w->Y, kw, &Wv, &Yv));
    return b->bcg_spmm_gram(S->A, Wv, Yv, ka, w->R, dinv, w->Gw, w->Mw, w->Hw);
  }
  COAL_CALL(block_spmm(S, 1.0, w->W, 0.0, w->Y, kw));
  return b->bcg_gram(S->ctx, S->n, kw, ka, w->W, w->Y, w->R, dinv, w->Sp, w->Gw, w->Mw, w->Hw);
}

/* Pays the deferred Xa += W CA (kw directions, ka columns) before columns leave the block. */
static coal_status settle(coal_solver S, bcg_work *w, int64_t kw, int64_t ka) {
  if (!w->pending) return COAL_SUCCESS;
  w->pending = 0;
  return coal_backend(S->ctx)->blas.bcg_dir(S->ctx, S->n, ka, kw, 0, NULL, NULL, NULL, w->W, NULL,
                                            NULL, w->CA, w->Xa);
}

static void swap(double **a, double **b) {
  double *t = *a;
  *a = *b, *b = t;
}

/* Writes the columns marked in w->gone to the caller's X (after the deferred update) and
 * compacts Xa, R and Z to the columns in w->keep (through the spare block). */
static coal_status retire(coal_solver S, bcg_work *w, coal_bvec X, int64_t kw, int64_t ka,
                          int ngone, int nkeep) {
  coal_ctx ctx = S->ctx;
  const coal_blas_ops *b = &coal_backend(ctx)->blas;
  if (!ngone) return COAL_SUCCESS;
  COAL_CALL(settle(S, w, kw, ka));
  COAL_CALL(b->copy_cols(ctx, S->n, ngone, w->Xa, COAL_ROW_MAJOR, ka, w->gone, (double *)X->data,
                         X->layout, X->ld, w->gone_to));
  if (!nkeep) return COAL_SUCCESS;
  double **blocks[] = {&w->Xa, &w->R, &w->Z};
  for (int i = 0; i < (coal_pc_is_operator(S->pc) ? 3 : 2); i++) { /* Z: operator pc only */
    COAL_CALL(b->copy_cols(ctx, S->n, nkeep, *blocks[i], COAL_ROW_MAJOR, ka, w->keep, w->Sp,
                           COAL_ROW_MAJOR, nkeep, NULL));
    swap(blocks[i], &w->Sp);
  }
  for (int a = 0; a < nkeep; a++) w->act[a] = w->act[w->keep[a]];
  /* YZ (kw x ka) keeps the same columns, tight */
  for (int64_t a = 0; a < kw; a++)
    for (int c = 0; c < nkeep; c++) w->YZ[a * nkeep + c] = w->YZ[a * ka + w->keep[c]];
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
static coal_status retire_all(coal_solver S, bcg_work *w, coal_bvec X, int64_t kw, int64_t ka,
                              int it, coal_solve_reason r) {
  int ngone, nkeep;
  classify(S, w, ka, it, r, &ngone, &nkeep);
  return retire(S, w, X, kw, ka, ngone, nkeep);
}

/* R -= Y CA, Z = M^-1 R, the column norms of R and YZ = Y^T Z: bcg_update (Z is scratch); a
 * user preconditioner splits the pass around its call and keeps Z. X waits for bcg_dir. */
static coal_status update(coal_solver S, bcg_work *w, int64_t kw, int64_t ka) {
  coal_ctx ctx = S->ctx;
  const coal_blas_ops *b = &coal_backend(ctx)->blas;
  int64_t n = S->n;
  double *RZ = w->s_prev ? w->Id : NULL; /* Id is free until the direction pass refills it */
  if (!coal_pc_is_operator(S->pc))
    return b->bcg_update(ctx, n, kw, ka, w->Y, w->CA, w->R, S->dinv, w->Z, w->nrm, w->YZ, RZ);
  if (kw > 0) COAL_CALL(b->gemm(ctx, n, kw, ka, -1.0, w->Y, kw, w->CA, ka, 1.0, w->R, ka));
  COAL_CALL(coal_solver_apply_pc(S, ka, w->R, w->Z, w->nrm));
  if (RZ) COAL_CALL(b->gram(ctx, n, ka, ka, w->R, ka, w->Z, ka, RZ, ka));
  return kw > 0 ? b->gram(ctx, n, kw, ka, w->Y, kw, w->Z, ka, w->YZ, ka) : COAL_SUCCESS;
}

/* Rank collapse of the search block. W' = Z + P beta is orthonormalised from its own Gram;
 * in long ill-conditioned runs P beta outgrows Z by 1e7 and more, every column of W' lies
 * within ~1e-7 rad of span(P), and the Gram (which squares those sines to the rounding
 * level) drops directions that carry Z's new information: the block's rank falls while the
 * residuals stay independent, and cannot recover (beam:300: 8 to 2 with 8 columns active;
 * bench/RESULTS.md). In exact arithmetic rank(W') = rank(Z). So after a search block that
 * kept s < ka directions, the next update measures Z^T M Z on the same ka columns (its Gram
 * comes out of the same pass) and its rank, counting only directions with a squared sine above
 * COAL_BCG_COLLAPSE_TOL (a margin over the drop rule, so that columns at the edge of the drop
 * rule do not count); more independent residuals than kept directions is a collapse. Returns 1
 * then. Uses Bt and work as scratch. A single collapse heals (the repeated product on P = W T
 * restores the rank the next iteration: 1138_bus with 32 columns, 494_bus); the handoff waits for
 * COAL_BCG_COLLAPSE_STREAK in a row. */
static int collapsed(bcg_work *w, int64_t ka64) {
  const int ka = (int)ka64, s = w->s_prev;
  int rz = 0;
  double minp;
  w->s_prev = 0;
  coal_dense_symmetrize(ka, w->Id, ka);
  if (coal_dense_orth_factor_pivot(ka, w->Id, ka, COAL_BCG_COLLAPSE_TOL, w->Bt, ka, &rz, w->work,
                                   w->piv, &minp))
    return 0; /* a non-finite Gram: the iteration reports it */
  return rz > s;
}

/* After the update: beta = -G^-1 T^T YZ (s x ka) and CB = T beta (kw x ka). */
static void next_coef(bcg_work *w, int64_t kw64, int64_t s64, int64_t ka64) {
  const int kw = (int)kw64, s = (int)s64, ka = (int)ka64;
  dense_atb(kw, s, ka, w->Tt, s, w->YZ, ka, w->Bt, ka);
  coal_dense_chol_solve(s, w->L, s, ka, w->Bt, ka);
  for (int i = 0; i < s * ka; i++) w->Bt[i] = -w->Bt[i];
  dense_ab(kw, s, ka, w->Tt, s, w->Bt, ka, w->CB, ka);
}

/* After the product: T (kw x s) from Mw, G = T^T Gw T into L, H = T^T Hw. Returns the rank s, 0
 * when W has no direction left or its Gram is not finite; *minp = the smallest pivot of the
 * factorisation (the squared sine of the last kept direction to those before it). */
static int orth_grams(bcg_work *w, int64_t kw64, int64_t ka64, double *minp) {
  const int kw = (int)kw64, ka = (int)ka64;
  int s = 0;
  coal_dense_symmetrize(kw, w->Mw, kw);
  if (coal_dense_orth_factor_pivot(kw, w->Mw, kw, COAL_BCG_DROP_TOL, w->T, kw, &s, w->work, w->piv,
                                   minp) ||
      s == 0)
    return 0;
  for (int a = 0; a < kw; a++) memcpy(w->Tt + a * s, w->T + a * kw, sizeof(double) * (size_t)s);
  dense_ab(kw, kw, s, w->Gw, kw, w->Tt, s, w->work, s); /* Gw T */
  dense_atb(kw, s, s, w->Tt, s, w->work, s, w->L, s);
  coal_dense_symmetrize(s, w->L, s);
  dense_atb(kw, s, ka, w->Tt, s, w->Hw, ka, w->H, ka);
  return s;
}

coal_status coal_blockcg_solve(coal_solver S, coal_bvec B, coal_bvec X) {
  coal_ctx ctx = S->ctx;
  const coal_blas_ops *b = &coal_backend(ctx)->blas;
  int64_t n = S->n, k = S->k, ka = k, kw = 0, s = 0;
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
    /* R -= Y CA (kw > 0); Z = M^-1 R, norms, Y^T Z; converged columns leave */
    const int check = w.s_prev > 0;
    COAL_CALL_GOTO(st, update(S, &w, kw, ka), done);
    w.streak = check && collapsed(&w, ka) ? w.streak + 1 : 0;
    if (w.streak >= COAL_BCG_COLLAPSE_STREAK) { /* the columns go on with CG (solver.c) */
      S->handoffs += (int)ka;
      COAL_CALL_GOTO(st, retire_all(S, &w, X, kw, ka, it, COAL_SOLVE_HANDOFF), done);
      break;
    }
    int ngone, nkeep;
    classify(S, &w, ka, it, COAL_SOLVE_NOT_RUN, &ngone, &nkeep);
    S->iterations = it;
    int stop = coal_solver_monitor(S, it);
    COAL_CALL_GOTO(st, retire(S, &w, X, kw, ka, ngone, nkeep), done);
    ka = nkeep;
    if (stop && ka) COAL_CALL_GOTO(st, retire_all(S, &w, X, kw, ka, it, COAL_SOLVE_STOPPED), done);
    if (stop || ka == 0) break;

    /* W' = Z + W CB (Z = M^-1 R from the stored Z or from R and dinv), X += W CA if owed */
    if (kw > 0) next_coef(&w, kw, s, ka);
    for (int64_t i = 0; i < ka * ka; i++) w.Id[i] = i % (ka + 1) == 0 ? 1.0 : 0.0;
    const int user = coal_pc_is_operator(S->pc);
    st = b->bcg_dir(ctx, n, ka, kw, ka, user ? w.Z : w.R, user ? NULL : S->dinv, w.Id, w.W, w.CB,
                    w.Sp, w.pending ? w.CA : NULL, w.pending ? w.Xa : NULL);
    if (st) goto done;
    w.pending = 0;
    swap(&w.W, &w.Sp);
    kw = ka;

    /* Y = A W with its Grams; T from W^T M W; G = P^T A P = L L^T; alpha = G^-1 P^T R */
    COAL_CALL_GOTO(st, product_grams(S, &w, kw, ka), done);
    double minp = 1.0;
    s = orth_grams(&w, kw, ka, &minp);
    if (s > 0 && minp < COAL_BCG_REORTH_TOL) { /* form P = W T and measure again on it */
      COAL_CALL_GOTO(
          st, b->bcg_dir(ctx, n, kw, 0, s, w.W, NULL, w.Tt, NULL, NULL, w.Sp, NULL, NULL), done);
      swap(&w.W, &w.Sp);
      kw = s;
      S->reorth++;
      COAL_CALL_GOTO(st, product_grams(S, &w, kw, ka), done);
      s = orth_grams(&w, kw, ka, &minp);
    }
    if (s == 0) {
      COAL_CALL_GOTO(st, retire_all(S, &w, X, kw, ka, it, COAL_SOLVE_BREAKDOWN), done);
      break;
    }
    w.s_prev = s < ka ? (int)s : 0;
    if (coal_dense_cholesky((int)s, w.L, (int)s)) {
      int nan = 0;
      for (int64_t i = 0; i < s; i++) nan |= isnan(w.L[i * s + i]);
      COAL_CALL_GOTO(
          st, retire_all(S, &w, X, kw, ka, it + 1, nan ? COAL_SOLVE_BREAKDOWN : COAL_SOLVE_NOT_SPD),
          done);
      break;
    }
    coal_dense_chol_solve((int)s, w.L, (int)s, (int)ka, w.H, (int)ka);
    dense_ab((int)kw, (int)s, (int)ka, w.Tt, (int)s, w.H, (int)ka, w.CA, (int)ka);
    w.pending = 1;
  }
done:
  bcg_free(S, &w);
  return st;
}
