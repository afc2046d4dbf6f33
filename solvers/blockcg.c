/* Breakdown-free block CG (in the spirit of Ji & Li 2017, BFBCG): the search block is
 * orthonormalised with a rank-revealing (pivoted) Cholesky-QR, so duplicate, zero or nearly
 * dependent residual columns shrink the block instead of making P^T A P singular.
 *
 * Blocks are n x m row-major with tight leading dimension; ka active columns, s directions.
 * With no preconditioner or Jacobi (M^-1 = diag(dinv)), one iteration is four passes over the
 * blocks and two host round trips:
 *   1. bcg_update: X += P alpha, R -= Q alpha, Z = M^-1 R (not stored), the column norms of R
 *      and the Grams Q^T Z, P^T Z, Z^T Z, in one pass (R stays orthogonal to every P so far).
 *      Converged columns are written to the caller's X and leave the block (the Krylov space
 *      is kept: each remaining column is still orthogonal to all earlier directions).
 *   host: beta = -G^-1 (Q^T Z); the new search block W = Z + P beta is never formed: its Gram
 *      W^T W = Z^T Z + (P^T Z)^T beta + beta^T (P^T Z) + beta^T (P^T P) beta comes from the
 *      Grams above, and its pivoted Cholesky gives T (ka x r, dependent directions dropped).
 *   2. bcg_dir: P = (M^-1 R) T + P (beta T) = W T, orthonormal, rank r (no sums: no round
 *      trip).
 *   3. SpMM: Q = A P.
 *   4. bcg_gram: G = P^T Q, P^T P (keeps the W^T W formula exact when P is orthonormal only to
 *      rounding) and H = P^T R, one pass over P, Q and R.
 *   (3 and 4 are one pass, bcg_spmm_gram, where the backend offers it (CUDA, 5 to 32 columns)
 *   and the SpMM would run the row-split kernel anyway: Q is summed into the Grams from shared
 *   memory, so Q and P are not read back; on an H200, lap3d:128 with 32 columns, 1.01-1.06 ms
 *   against 0.62 + 0.43 ms.)
 *   host: G = L L^T; alpha = G^-1 H.
 * (P^T P and H used to come with bcg_dir, from its output tile: one pass fewer over R, but a
 * third round trip and a slower direction pass; on an H200, lap3d:128 with 32 columns, the
 * split costs 405 + 444 us per iteration against 584 + 276 us, and the solve 0.64 s against
 * 0.67-0.69 s, bench/RESULTS.md.)
 * H is measured, not taken as T^T (Z^T R) (equal in exact arithmetic since the old P is
 * orthogonal to R): T grows like the inverse of W's smallest kept singular value, and with 32
 * columns on 1138_bus that form lost enough accuracy to diverge, where the measured H takes
 * the 33 iterations of the explicit method.
 * Traffic per iteration in blocks of n x k doubles: update 6 (read P, Q, X, R; write X, R),
 * bcg_dir 3 (read R, P; write P), SpMM 2 + the matrix, bcg_gram 3: 14 (12 with the fused pass:
 * P gathered, Q written, R read). A user preconditioner
 * needs Z stored: the update is split around its call and bcg_dir reads Z. */
#include "dense.h"
#include "solver_impl.h"

#include <math.h>
#include <string.h>

typedef struct {
  double *Xa, *R, *Z, *Sp, *P, *Q; /* backend blocks, n x k each (Z: user preconditioner only) */
  /* host, k x k each unless noted: L = chol(P^T Q), PP = P^T P, QZ, PZ (s x ka), ZZ
   * (ka x ka), H (s x ka: P^T R, then alpha), Bt (beta, s x ka), WW, T (ka x r, ld ka), Tt (T
   * tight), BT (beta T, s x r), work (2k^2 + 2k) */
  double *L, *PP, *QZ, *PZ, *ZZ, *H, *Bt, *WW, *T, *Tt, *BT, *work, *nrm, *norm0, *tol;
  int32_t *act, *keep, *gone, *gone_to, *piv;
} bcg_work;

enum { BCG_KK = 11 }; /* k x k host matrices */

static void bcg_free(coal_solver S, bcg_work *w) {
  double *dev[] = {w->Xa, w->R, w->Z, w->Sp, w->P, w->Q};
  for (int i = 0; i < 6; i++) coal_solver_release(S, dev[i]);
  coal_free(w->L); /* one host allocation holds every small array */
}

static coal_status bcg_alloc(coal_solver S, bcg_work *w) {
  size_t nk = (size_t)S->n * (size_t)S->k, k = (size_t)S->k, kk = k * k;
  double **dev[] = {&w->Xa, &w->R, &w->Z, &w->Sp, &w->P, &w->Q};
  for (int i = 0; i < 6; i++) COAL_CALL(coal_solver_alloc(S, nk, dev[i]));
  size_t nd = BCG_KK * kk + (2 * kk + 2 * k) + 3 * k, ni = 5 * k;
  COAL_CALL(coal_malloc(S->ctx, sizeof(double) * nd + sizeof(int32_t) * ni, (void **)&w->L));
  double **small[] = {&w->PP, &w->QZ, &w->PZ, &w->ZZ, &w->H,   &w->Bt,
                      &w->WW, &w->T,  &w->Tt, &w->BT, &w->work};
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

/* Q = A P with G = P^T Q (into L), PP = P^T P and H = P^T R: one fused pass where the backend
 * has one and the product would run the row-split kernel anyway, else the SpMM and bcg_gram. */
static coal_status product_grams(coal_solver S, bcg_work *w, int64_t s, int64_t ka) {
  const coal_blas_ops *b = coal_blas(S->ctx);
  if (b->bcg_spmm_gram && s >= COAL_BCG_FUSED_MIN && s <= COAL_BCG_FUSED_MAX &&
      ka <= COAL_BCG_FUSED_MAX && coal_spmm_select(S->A, s, COAL_ROW_MAJOR) == COAL_SPMM_ROWSPLIT) {
    coal_bvec Pv, Qv;
    COAL_CALL(coal_solver_views(S, w->P, w->Q, s, &Pv, &Qv));
    return b->bcg_spmm_gram(S->A, Pv, Qv, ka, w->R, w->L, w->PP, w->H);
  }
  COAL_CALL(block_spmm(S, 1.0, w->P, 0.0, w->Q, s));
  return b->bcg_gram(S->ctx, S->n, s, ka, w->P, w->Q, w->R, w->L, w->PP, w->H);
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
  for (int i = 0; i < (S->pc == COAL_PC_USER ? 3 : 2); i++) { /* Z is kept for a user pc only */
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

/* Keeps the columns w->keep[0..nkeep) of the ka-column host Grams: QZ, PZ (s x ka) and ZZ
 * (ka x ka, rows and columns), tight. */
static void compact_small(bcg_work *w, int64_t s, int64_t ka, int nkeep) {
  double *cols[] = {w->QZ, w->PZ};
  for (int m = 0; m < 2; m++)
    for (int64_t a = 0; a < s; a++)
      for (int b = 0; b < nkeep; b++) cols[m][a * nkeep + b] = cols[m][a * ka + w->keep[b]];
  for (int a = 0; a < nkeep; a++)
    for (int b = 0; b < nkeep; b++)
      w->ZZ[a * nkeep + b] = w->ZZ[(int64_t)w->keep[a] * ka + w->keep[b]];
}

/* X += P alpha, R -= Q alpha, Z = M^-1 R with the norms and Grams of bcg_update (Z not kept: the
 * block is scratch); a user preconditioner splits the pass around its call and keeps Z. */
static coal_status update(coal_solver S, bcg_work *w, int64_t s, int64_t ka) {
  coal_ctx ctx = S->ctx;
  const coal_blas_ops *b = coal_blas(ctx);
  int64_t n = S->n;
  if (S->pc != COAL_PC_USER)
    return b->bcg_update(ctx, n, s, ka, w->P, w->Q, w->H, w->Xa, w->R, S->dinv, w->Z, 0, w->nrm,
                         w->QZ, w->PZ, w->ZZ);
  if (s > 0) {
    COAL_CALL(b->gemm(ctx, n, s, ka, 1.0, w->P, s, w->H, ka, 1.0, w->Xa, ka));
    COAL_CALL(b->gemm(ctx, n, s, ka, -1.0, w->Q, s, w->H, ka, 1.0, w->R, ka));
  }
  COAL_CALL(coal_solver_apply_pc(S, ka, w->R, w->Z, w->nrm));
  if (s > 0) {
    COAL_CALL(b->gram(ctx, n, s, ka, w->Q, s, w->Z, ka, w->QZ, ka));
    COAL_CALL(b->gram(ctx, n, s, ka, w->P, s, w->Z, ka, w->PZ, ka));
  }
  return b->gram(ctx, n, ka, ka, w->Z, ka, w->Z, ka, w->ZZ, ka);
}

/* beta = -G^-1 QZ and WW = W^T W for W = Z + P beta, from the Grams (s x ka, ka x ka). */
static void next_gram(bcg_work *w, int64_t s64, int64_t ka64) {
  const int s = (int)s64, ka = (int)ka64;
  memcpy(w->WW, w->ZZ, sizeof(double) * (size_t)(ka * ka));
  if (s == 0) return;
  memcpy(w->Bt, w->QZ, sizeof(double) * (size_t)(s * ka));
  coal_dense_chol_solve(s, w->L, s, ka, w->Bt, ka);
  for (int i = 0; i < s * ka; i++) w->Bt[i] = -w->Bt[i];
  /* work = PZ^T beta (ka x ka); WW += work + work^T */
  dense_atb(s, ka, ka, w->PZ, ka, w->Bt, ka, w->work, ka);
  for (int a = 0; a < ka; a++)
    for (int c = 0; c < ka; c++) w->WW[a * ka + c] += w->work[a * ka + c] + w->work[c * ka + a];
  /* WW += beta^T (PP beta) */
  dense_ab(s, s, ka, w->PP, s, w->Bt, ka, w->work, ka);
  double *t = w->work + (size_t)s * ka;
  dense_atb(s, ka, ka, w->Bt, ka, w->work, ka, t, ka);
  for (int i = 0; i < ka * ka; i++) w->WW[i] += t[i];
  coal_dense_symmetrize(ka, w->WW, ka);
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
    /* X += P alpha, R -= Q alpha (s > 0); Z = M^-1 R, norms, Grams; converged columns leave */
    COAL_CALL_GOTO(st, update(S, &w, s, ka), done);
    int ngone, nkeep;
    classify(S, &w, ka, it, COAL_SOLVE_NOT_RUN, &ngone, &nkeep);
    S->iterations = it;
    int stop = coal_solver_monitor(S, it);
    COAL_CALL_GOTO(st, retire(S, &w, X, ka, ngone, nkeep), done);
    if (ngone && nkeep) compact_small(&w, s, ka, nkeep);
    ka = nkeep;
    if (stop && ka) COAL_CALL_GOTO(st, retire_all(S, &w, X, ka, it, COAL_SOLVE_STOPPED), done);
    if (stop || ka == 0) break;

    /* P = W T with W = Z + P beta, orthonormal, dependent directions dropped */
    next_gram(&w, s, ka);
    int rank = 0;
    if (coal_dense_orth_factor((int)ka, w.WW, (int)ka, COAL_BCG_DROP_TOL, w.T, (int)ka, &rank,
                               w.work, w.piv) ||
        rank == 0) {
      COAL_CALL_GOTO(st, retire_all(S, &w, X, ka, it, COAL_SOLVE_BREAKDOWN), done);
      break;
    }
    for (int64_t a = 0; a < ka; a++)
      memcpy(w.Tt + a * rank, w.T + a * ka, sizeof(double) * (size_t)rank);
    if (s > 0) dense_ab((int)s, (int)ka, rank, w.Bt, (int)ka, w.Tt, rank, w.BT, rank);
    /* (M^-1 R) T from the stored Z (user preconditioner) or from R and dinv (NULL without a
     * preconditioner); P^T P and H = P^T R are measured after the SpMM, with P^T Q */
    const int user = S->pc == COAL_PC_USER;
    st = b->bcg_dir(ctx, n, ka, s, rank, user ? w.Z : w.R, user ? NULL : S->dinv, w.Tt, w.P, w.BT,
                    w.Sp, NULL, NULL);
    if (st) goto done;
    swap(&w.P, &w.Sp);
    s = rank;

    /* Q = A P; G = P^T Q = L L^T; alpha = G^-1 H */
    COAL_CALL_GOTO(st, product_grams(S, &w, s, ka), done);
    coal_dense_symmetrize((int)s, w.L, (int)s);
    if (coal_dense_cholesky((int)s, w.L, (int)s)) {
      int nan = 0;
      for (int64_t i = 0; i < s; i++) nan |= isnan(w.L[i * s + i]);
      COAL_CALL_GOTO(
          st, retire_all(S, &w, X, ka, it + 1, nan ? COAL_SOLVE_BREAKDOWN : COAL_SOLVE_NOT_SPD),
          done);
      break;
    }
    coal_dense_chol_solve((int)s, w.L, (int)s, (int)ka, w.H, (int)ka);
  }
done:
  bcg_free(S, &w);
  return st;
}
