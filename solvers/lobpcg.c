/* LOBPCG (Knyazev 2001) with the basis handling of Hetmaniuk & Lehoucq 2006 and Duersch, Shao,
 * Yang & Gu 2018, for A x = lambda M x (M = I when absent).
 *
 * The basis V = [X | P | W] (bs + rp + rw columns) lives in one n x L row-major block (L = 3 bs)
 * with its products AV and MV (MV is V itself when M = I), so that the Rayleigh-Ritz matrices
 * V^T A V and V^T M V are one Gram product each. Every iteration:
 *   R = A X - M X Lambda on the active (not converged) columns, W = T R (preconditioner), with
 *       the residual norms in the same pass;
 *   W is made M-orthogonal to X and P and M-orthonormal within itself, twice (classical
 *       Gram-Schmidt and a pivoted Cholesky-QR: directions whose squared sine to the others is
 *       below COAL_EIG_DROP_TOL are dropped), then AW = A W;
 *   Rayleigh-Ritz: (V^T A V) C = (V^T M V) C Theta on the host (LAPACK dsygvd; V^T M V is the
 *       identity up to rounding, and its distance from it is the condition check: beyond
 *       COAL_EIG_ORTH_TOL, or when its Cholesky fails, the basis degenerated and the iteration
 *       restarts from X alone, re-orthonormalised);
 *   X <- V C_x; the new P is V Z, where Z spans the W and P parts of the active columns of C_x
 *       made orthogonal to C_x and orthonormal (in V^T M V) in the small space (Duersch et al.):
 *       [X, P] then spans the classical [x_new, x_old] without forming the nearly dependent
 *       difference, and P comes out M-orthonormal and M-orthogonal to X with no extra product.
 *   AX, AP (and MX, MP) are updated by the same coefficients: no product with A beyond AW.
 * Converged columns are soft-locked: they stay in X (and in every Rayleigh-Ritz step) but get
 * no W or P. When the wanted pairs all look converged, their true residuals are computed from
 * fresh products; a pair that fails is unlocked, AV and MV are recomputed, and the iteration
 * goes on. */
#include "dense.h"
#include "eigen_impl.h"
#include "lapack.h"
#include "solver_impl.h" /* coal_pc_is_operator */

#include <float.h>
#include <math.h>
#include <string.h>

typedef struct {
  int64_t n, L;
  int bs;
  double *V, *AV, *MV, *Vn, *AVn, *MVn; /* backend, n x L (ld L); MV == V when M = I */
  double *R, *T;                        /* backend, n x bs tight */
  coal_bvec vx, vy;                     /* reusable views for SpMM and the preconditioner */
  /* host, one allocation */
  double *gA, *gB, *gA2, *gB2, *C, *coef, *H, *Y, *Z, *tmp, *G, *Tf, *owork, *lwork;
  double *theta, *lam, *res, *nrm, *xn;
  int *iwork, *piv, *conv, *conv_it, *act, *sel;
  int32_t *cols;
} lob_work;

/* ---- small dense helpers (host, row-major) ------------------------------------------------ */
/* Cm (m x q, ldc) = A (m x k, lda) * B (k x q, ldb) [+ Cm when acc] */
static void mm(int m, int k, int q, const double *A, int lda, const double *B, int ldb, double *Cm,
               int ldc, int acc) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < q; j++) {
      double s = acc ? Cm[i * ldc + j] : 0.0;
      for (int l = 0; l < k; l++) s += A[i * lda + l] * B[l * ldb + j];
      Cm[i * ldc + j] = s;
    }
}

/* Cm (k x q) = A^T (A: m x k, lda) * B (m x q, ldb) */
static void mtm(int m, int k, int q, const double *A, int lda, const double *B, int ldb, double *Cm,
                int ldc) {
  for (int i = 0; i < k; i++)
    for (int j = 0; j < q; j++) {
      double s = 0.0;
      for (int l = 0; l < m; l++) s += A[l * lda + i] * B[l * ldb + j];
      Cm[i * ldc + j] = s;
    }
}

static int all_finite(const double *a, size_t cnt) {
  for (size_t i = 0; i < cnt; i++)
    if (!isfinite(a[i])) return 0;
  return 1;
}

/* ---- workspace ----------------------------------------------------------------------------- */
static coal_status lob_alloc(coal_eigen E, lob_work *w) {
  coal_ctx ctx = E->ctx;
  const coal_mem_ops *o = &coal_backend(ctx)->mem;
  const int64_t n = E->n, L = 3 * (int64_t)E->bs, bs = E->bs;
  w->n = n, w->L = L, w->bs = E->bs;
  const size_t big = sizeof(double) * (size_t)n * (size_t)L,
               small = sizeof(double) * (size_t)n * (size_t)bs;
  COAL_CALL(o->alloc(ctx, big, (void **)&w->V));
  COAL_CALL(o->alloc(ctx, big, (void **)&w->AV));
  COAL_CALL(o->alloc(ctx, big, (void **)&w->Vn));
  COAL_CALL(o->alloc(ctx, big, (void **)&w->AVn));
  if (E->M) {
    COAL_CALL(o->alloc(ctx, big, (void **)&w->MV));
    COAL_CALL(o->alloc(ctx, big, (void **)&w->MVn));
  } else {
    w->MV = w->V, w->MVn = w->Vn;
  }
  COAL_CALL(o->alloc(ctx, small, (void **)&w->R));
  COAL_CALL(o->alloc(ctx, small, (void **)&w->T));
  COAL_CALL(coal_bvec_view(ctx, n, 1, COAL_F64, COAL_ROW_MAJOR, L, w->V, &w->vx));
  COAL_CALL(coal_bvec_view(ctx, n, 1, COAL_F64, COAL_ROW_MAJOR, L, w->AV, &w->vy));
  const size_t L2 = (size_t)L * (size_t)L, Lb = (size_t)L * (size_t)bs;
  const size_t nd =
      7 * L2 + 4 * Lb + (2 * L2 + 2 * (size_t)L) + coal_lapack_sygv_dwork((int)L) + 5 * (size_t)L;
  const size_t ni = coal_lapack_sygv_iwork((int)L) + 6 * (size_t)L;
  double *h;
  COAL_CALL(coal_malloc(ctx, sizeof(double) * nd + sizeof(int) * ni, (void **)&h));
  w->gA = h, w->gB = h + L2, w->gA2 = h + 2 * L2, w->gB2 = h + 3 * L2, w->C = h + 4 * L2;
  w->coef = h + 5 * L2, w->Tf = h + 6 * L2;
  h += 7 * L2;
  w->H = h, w->Y = h + Lb, w->Z = h + 2 * Lb, w->tmp = h + 3 * Lb;
  h += 4 * Lb;
  w->G = w->gA2; /* orthonormalisation Grams reuse the Rayleigh-Ritz scratch */
  w->owork = h;
  h += 2 * L2 + 2 * (size_t)L;
  w->lwork = h;
  h += coal_lapack_sygv_dwork((int)L);
  w->theta = h, w->lam = h + L, w->res = h + 2 * L, w->nrm = h + 3 * L, w->xn = h + 4 * L;
  h += 5 * (size_t)L;
  int *ip = (int *)h;
  w->iwork = ip;
  ip += coal_lapack_sygv_iwork((int)L);
  w->piv = ip, w->conv = ip + L, w->conv_it = ip + 2 * L, w->act = ip + 3 * L, w->sel = ip + 4 * L;
  w->cols = (int32_t *)(ip + 5 * L);
  return COAL_SUCCESS;
}

static void lob_free(coal_eigen E, lob_work *w) {
  const coal_mem_ops *o = &coal_backend(E->ctx)->mem;
  double *b[] = {w->V, w->AV, w->Vn, w->AVn, w->R, w->T};
  for (int i = 0; i < 6; i++)
    if (b[i]) o->release(E->ctx, b[i]);
  if (E->M) {
    if (w->MV) o->release(E->ctx, w->MV);
    if (w->MVn) o->release(E->ctx, w->MVn);
  }
  coal_bvec_destroy(&w->vx);
  coal_bvec_destroy(&w->vy);
  coal_free(w->gA);
}

/* Y (ldy) = B X (ldx) over q columns; B is A or M. */
static coal_status spmm(coal_eigen E, lob_work *w, coal_mat B, const double *X, int64_t ldx,
                        int64_t q, double *Y, int64_t ldy) {
  if (q == 0) return COAL_SUCCESS;
  w->vx->data = (void *)X, w->vx->k = q, w->vx->ld = ldx;
  w->vy->data = Y, w->vy->k = q, w->vy->ld = ldy;
  if (B == E->A)
    E->stats.spmm_a += q;
  else
    E->stats.spmm_m += q;
  return coal_spmm(B, COAL_SPMM_AUTO, 1.0, w->vx, 0.0, w->vy);
}

/* Makes the q columns of V at c0 (W) M-orthogonal to columns [0, c0) (V_c, M-orthonormal)
 * and M-orthonormal, dropping dependent ones; the kept ones are compacted (MV follows; AV is
 * not touched). One pass: a single Gram K = [M V_c, M W]^T W gives H = (M V_c)^T W and
 * W^T M W; the projected Gram is G = W^T M W - H^T H; its pivoted Cholesky gives F, and
 * W <- (W - V_c H) F = V[:, 0:c0+q] [-H F; F] in one product. A column whose part outside V_c
 * has a squared relative norm below COAL_EIG_DROP_TOL is dropped. A second pass repeats it
 * when the first cancelled (a squared norm ratio or a pivot below COAL_EIG_ONE_PASS: the
 * projected Gram then loses accuracy), unless its K shows W orthonormal and orthogonal to V_c
 * within 1e-12. *rank: the columns kept; COAL_ERR_STATE
 * (no message) on a non-finite Gram. */
static coal_status orth_block(coal_eigen E, lob_work *w, int c0, int q, int *rank) {
  coal_ctx ctx = E->ctx;
  const coal_blas_ops *b = &coal_backend(ctx)->blas;
  const int64_t n = w->n, L = w->L;
  double *W = w->V + c0, *MW = w->MV + c0;
  *rank = 0;
  if (E->M) COAL_CALL(spmm(E, w, E->M, W, L, q, MW, L));
  for (int pass = 0; pass < 2 && q > 0; pass++) {
    const int c = c0 + q;
    double *K = w->H, *G = w->G, *F = w->Z;
    COAL_CALL(b->gram(ctx, n, c, q, w->MV, L, W, L, K, q));
    if (!all_finite(K, (size_t)c * (size_t)q)) return COAL_ERR_STATE;
    double dev = 0.0;
    for (int i = 0; i < c; i++)
      for (int j = 0; j < q; j++) dev = fmax(dev, fabs(K[i * q + j] - (i - c0 == j ? 1.0 : 0.0)));
    if (pass == 1 && dev <= 1e-12) break;
    for (int i = 0; i < q; i++)
      for (int j = 0; j < q; j++) {
        double g = K[(c0 + i) * q + j];
        for (int l = 0; l < c0; l++) g -= K[l * q + i] * K[l * q + j];
        G[i * q + j] = g;
      }
    coal_dense_symmetrize(q, G, q);
    double kept = 1.0; /* smallest squared norm ratio after / before the projection */
    for (int j = 0; j < q; j++) {
      const double ratio = G[j * q + j] / K[(c0 + j) * q + j];
      if (!(ratio > COAL_EIG_DROP_TOL)) /* nothing new outside V_c: drop (zero row, column) */
        for (int l = 0; l < q; l++) G[j * q + l] = G[l * q + j] = 0.0;
      else
        kept = fmin(kept, ratio);
    }
    int r = 0;
    double pivot = 0.0;
    if (coal_dense_orth_factor_pivot(q, G, q, COAL_EIG_DROP_TOL, w->Tf, q, &r, w->owork, w->piv,
                                     &pivot))
      return COAL_ERR_STATE;
    E->stats.dropped += q - r;
    if (r > 0) {
      for (int i = 0; i < c0; i++) /* F = [-H Tf; Tf], c x r */
        for (int j = 0; j < r; j++) {
          double t = 0.0;
          for (int l = 0; l < q; l++) t -= K[i * q + l] * w->Tf[l * q + j];
          F[i * r + j] = t;
        }
      for (int i = 0; i < q; i++)
        for (int j = 0; j < r; j++) F[(c0 + i) * r + j] = w->Tf[i * q + j];
      double *dst[2] = {W, MW}, *src[2] = {w->V, w->MV};
      for (int t = 0; t < (E->M ? 2 : 1); t++) {
        COAL_CALL(b->gemm(ctx, n, c, r, 1.0, src[t], L, F, r, 0.0, w->T, r));
        COAL_CALL(b->copy_cols(ctx, n, r, w->T, COAL_ROW_MAJOR, r, NULL, dst[t], COAL_ROW_MAJOR, L,
                               NULL));
      }
    }
    q = r;
    /* one pass is accurate when neither the projection nor the factorisation cancelled much:
     * orthogonality errors are then ~ u / kept and ~ u / pivot */
    if (pass == 0 && r > 0 && kept >= COAL_EIG_ONE_PASS && pivot >= COAL_EIG_ONE_PASS) break;
  }
  *rank = q;
  return COAL_SUCCESS;
}

/* Rayleigh-Ritz over the first m columns of V: theta (ascending), C (m x m, ld m). Returns 0,
 * 1 when the basis degenerated (restart), -1 on non-finite values. */
static int rayleigh_ritz(coal_eigen E, lob_work *w, int m, coal_status *st) {
  coal_ctx ctx = E->ctx;
  const coal_blas_ops *b = &coal_backend(ctx)->blas;
  *st = b->gram(ctx, w->n, m, m, w->V, w->L, w->AV, w->L, w->gA, m);
  if (!*st) *st = b->gram(ctx, w->n, m, m, w->V, w->L, w->MV, w->L, w->gB, m);
  if (*st) return -1;
  const size_t mm2 = (size_t)m * (size_t)m;
  if (!all_finite(w->gA, mm2) || !all_finite(w->gB, mm2)) return -1;
  coal_dense_symmetrize(m, w->gA, m);
  coal_dense_symmetrize(m, w->gB, m);
  double dev = 0.0;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < m; j++) dev = fmax(dev, fabs(w->gB[i * m + j] - (i == j ? 1.0 : 0.0)));
  if (dev > COAL_EIG_ORTH_TOL) return 1;
  const double t0 = coal_now_seconds();
  memcpy(w->gA2, w->gA, sizeof(double) * mm2);
  memcpy(w->gB2, w->gB, sizeof(double) * mm2);
  int info = coal_lapack_sygv(m, w->gA2, w->gB2, w->theta, w->C, w->lwork, w->iwork);
  E->stats.rr_seconds += coal_now_seconds() - t0;
  if (info > m) return 1;
  if (info != 0 || !all_finite(w->theta, (size_t)m)) return -1;
  return 0;
}

/* The new P coefficients: the W and P rows of the active Ritz columns, made gB-orthogonal to
 * C_x and gB-orthonormal (twice). C_x is coef's first bs columns (ld ldc); Z goes to coef's
 * columns bs.. ; returns the rank. */
static int p_coefficients(coal_eigen E, lob_work *w, int m, int ka, int ldc) {
  const int bs = w->bs;
  double *Y = w->Y; /* m x ka, ld ka */
  for (int i = 0; i < m; i++)
    for (int a = 0; a < ka; a++) Y[i * ka + a] = i < bs ? 0.0 : w->coef[i * ldc + w->act[a]];
  int q = ka;
  for (int pass = 0; pass < 2 && q > 0; pass++) {
    mm(m, m, q, w->gB, m, Y, q, w->tmp, q, 0);       /* tmp = gB Y */
    mtm(m, bs, q, w->coef, ldc, w->tmp, q, w->H, q); /* H = Cx^T gB Y */
    for (int i = 0; i < m; i++)                      /* Y -= Cx H */
      for (int a = 0; a < q; a++) {
        double s = 0.0;
        for (int l = 0; l < bs; l++) s += w->coef[i * ldc + l] * w->H[l * q + a];
        Y[i * q + a] -= s;
      }
    mm(m, m, q, w->gB, m, Y, q, w->tmp, q, 0);
    mtm(m, q, q, Y, q, w->tmp, q, w->G, q); /* G = Y^T gB Y */
    coal_dense_symmetrize(q, w->G, q);
    int r = 0;
    if (coal_dense_orth_factor(q, w->G, q, COAL_EIG_DROP_TOL, w->Tf, q, &r, w->owork, w->piv))
      return 0;
    E->stats.dropped += q - r;
    mm(m, q, r, Y, q, w->Tf, q, w->Z, r, 0);
    memcpy(Y, w->Z, sizeof(double) * (size_t)m * (size_t)r);
    q = r;
  }
  for (int i = 0; i < m; i++)
    for (int a = 0; a < q; a++) w->coef[i * ldc + bs + a] = Y[i * q + a];
  return q;
}

/* After a Rayleigh-Ritz step over m columns: picks the bs wanted Ritz pairs, builds P for the
 * ka active columns (w->act) and moves [X | P] (and their A and M products) to the front.
 * Returns the new rp. */
static coal_status update_basis(coal_eigen E, lob_work *w, int m, int ka, int *rp) {
  coal_ctx ctx = E->ctx;
  const coal_blas_ops *b = &coal_backend(ctx)->blas;
  const int bs = w->bs, ldc = 2 * bs;
  for (int j = 0; j < bs; j++) {
    int s = E->which == COAL_EIG_SMALLEST ? j : m - 1 - j;
    w->lam[j] = w->theta[s];
    for (int i = 0; i < m; i++) w->coef[i * ldc + j] = w->C[i * m + s];
  }
  int r = ka > 0 ? p_coefficients(E, w, m, ka, ldc) : 0;
  /* coef is m x (bs + r) with leading dimension ldc */
  const int q = bs + r;
  double *src[3] = {w->V, w->AV, w->MV}, *dst[3] = {w->Vn, w->AVn, w->MVn};
  for (int i = 0; i < (E->M ? 3 : 2); i++)
    COAL_CALL(b->gemm(ctx, w->n, m, q, 1.0, src[i], w->L, w->coef, ldc, 0.0, dst[i], w->L));
  double *t;
  t = w->V, w->V = w->Vn, w->Vn = t;
  t = w->AV, w->AV = w->AVn, w->AVn = t;
  if (E->M) {
    t = w->MV, w->MV = w->MVn, w->MVn = t;
  } else {
    w->MV = w->V, w->MVn = w->Vn;
  }
  *rp = r;
  return COAL_SUCCESS;
}

/* Fills columns [c0, bs) of X with random values (seed), keeping columns [0, c0). */
static coal_status random_cols(coal_eigen E, lob_work *w, int c0, uint64_t seed) {
  const int q = w->bs - c0;
  if (q <= 0) return COAL_SUCCESS;
  coal_bvec Rv = NULL;
  COAL_CALL(coal_bvec_view(E->ctx, w->n, q, COAL_F64, COAL_ROW_MAJOR, q, w->R, &Rv));
  coal_status st = coal_bvec_set_random(Rv, seed);
  coal_bvec_destroy(&Rv);
  COAL_CALL(st);
  return coal_backend(E->ctx)->blas.copy_cols(E->ctx, w->n, q, w->R, COAL_ROW_MAJOR, q, NULL,
                                              w->V + c0, COAL_ROW_MAJOR, w->L, NULL);
}

/* X := an M-orthonormal block of full rank bs whose leading columns span what X held in its
 * first `keep` columns (as far as they are independent); dependent or missing columns are
 * replaced by random ones. Then AX = A X and a Rayleigh-Ritz step on X alone. */
static coal_status start_block(coal_eigen E, lob_work *w, int keep, uint64_t seed) {
  int r = 0;
  COAL_CALL(random_cols(E, w, keep, seed));
  for (int t = 0; t < COAL_EIG_INIT_TRIES && r < w->bs; t++) {
    int add = 0;
    if (t > 0) COAL_CALL(random_cols(E, w, r, seed + 0x9e3779b97f4a7c15ull * (uint64_t)t));
    coal_status st = orth_block(E, w, r, w->bs - r, &add);
    if (st == COAL_ERR_STATE)
      return COAL_ERROR(E->ctx, COAL_ERR_NOT_SPD,
                        "LOBPCG: the starting block has a non-finite Gram matrix%s",
                        E->M ? " (is M positive definite?)" : "");
    COAL_CALL(st);
    r += add;
  }
  if (r < w->bs)
    return COAL_ERROR(E->ctx, E->M ? COAL_ERR_NOT_SPD : COAL_ERR_STATE,
                      "LOBPCG: could not build an M-orthonormal starting block of %d columns "
                      "(rank %d)%s",
                      w->bs, r, E->M ? ": M is not positive definite" : "");
  COAL_CALL(spmm(E, w, E->A, w->V, w->L, w->bs, w->AV, w->L));
  coal_status st = COAL_SUCCESS;
  int rr = rayleigh_ritz(E, w, w->bs, &st);
  COAL_CALL(st);
  if (rr != 0)
    return COAL_ERROR(E->ctx, rr > 0 && E->M ? COAL_ERR_NOT_SPD : COAL_ERR_STATE,
                      "LOBPCG: the Rayleigh-Ritz step on the starting block failed%s",
                      rr > 0 && E->M ? " (is M positive definite?)" : " (non-finite values)");
  int rp;
  return update_basis(E, w, w->bs, 0, &rp);
}

/* Relative residual of pair j from its squared residual norm: ||r|| / (max(|lambda|, floor)
 * ||x||) with floor = COAL_EIG_FLOOR u sigma / tol, so that resnorm <= tol holds exactly when
 * ||r|| <= max(tol |lambda|, COAL_EIG_FLOOR u sigma) ||x|| (a zero eigenvalue converges). */
static double rel_res(coal_eigen E, lob_work *w, int j, double nrm2) {
  const double lam = fabs(w->lam[j]), sigma = E->anorm + lam * E->mnorm;
  const double floor = COAL_EIG_FLOOR * DBL_EPSILON * 0.5 * sigma / E->tol;
  const double den = fmax(lam, floor) * w->xn[j];
  return den > 0.0 ? sqrt(nrm2) / den : (nrm2 > 0.0 ? INFINITY : 0.0);
}

/* Column norms of X (w->xn): 1 for M = I (X is orthonormal), measured otherwise. */
static coal_status x_norms(coal_eigen E, lob_work *w, int q) {
  if (!E->M) {
    for (int j = 0; j < q; j++) w->xn[j] = 1.0;
    return COAL_SUCCESS;
  }
  COAL_CALL(
      coal_backend(E->ctx)->blas.dscale(E->ctx, w->n, q, NULL, w->V, w->L, NULL, w->L, w->nrm));
  for (int j = 0; j < q; j++) w->xn[j] = sqrt(w->nrm[j]);
  return COAL_SUCCESS;
}

/* True relative residuals of the first q pairs from fresh products, into out[q]. */
static coal_status true_residuals(coal_eigen E, lob_work *w, int q, double *out) {
  coal_ctx ctx = E->ctx;
  /* R = A X and T = M X side by side would need 2q columns: q <= bs fits R and T separately,
   * so A X goes to R and M X to T, both with leading dimension q */
  COAL_CALL(spmm(E, w, E->A, w->V, w->L, q, w->R, q));
  const double *MX = w->V;
  if (E->M) {
    COAL_CALL(spmm(E, w, E->M, w->V, w->L, q, w->T, q));
    MX = w->T;
  } else {
    COAL_CALL(coal_backend(ctx)->blas.copy_cols(ctx, w->n, q, w->V, COAL_ROW_MAJOR, w->L, NULL,
                                                w->T, COAL_ROW_MAJOR, q, NULL));
    MX = w->T;
  }
  for (int j = 0; j < q; j++) w->cols[j] = j;
  COAL_CALL(coal_backend(ctx)->blas.eig_resid(ctx, w->n, q, w->R, MX, q, w->cols, w->lam, NULL,
                                              NULL, 0, out));
  COAL_CALL(x_norms(E, w, q));
  for (int j = 0; j < q; j++) out[j] = rel_res(E, w, j, out[j]);
  return COAL_SUCCESS;
}

/* AV and MV of [X | P] recomputed from V (after an unlock: the recurrences drift). */
static coal_status refresh_products(coal_eigen E, lob_work *w, int c) {
  COAL_CALL(spmm(E, w, E->A, w->V, w->L, c, w->AV, w->L));
  if (E->M) COAL_CALL(spmm(E, w, E->M, w->V, w->L, c, w->MV, w->L));
  return COAL_SUCCESS;
}

/* Residuals of the ka active columns (w->act) and W = T R written at column c0 of V, with the
 * squared residual norms in w->nrm[0..ka): one pass for no or Jacobi preconditioning. */
static coal_status residuals_and_w(coal_eigen E, lob_work *w, int ka, int c0) {
  coal_ctx ctx = E->ctx;
  const coal_blas_ops *b = &coal_backend(ctx)->blas;
  for (int a = 0; a < ka; a++) w->cols[a] = w->act[a], w->tmp[a] = w->lam[w->act[a]];
  if (!coal_pc_is_operator(E->pc))
    return b->eig_resid(ctx, w->n, ka, w->AV, w->MV, w->L, w->cols, w->tmp, E->dinv, w->V + c0,
                        w->L, w->nrm);
  COAL_CALL(
      b->eig_resid(ctx, w->n, ka, w->AV, w->MV, w->L, w->cols, w->tmp, NULL, w->R, ka, w->nrm));
  /* the SpMM views, pointed at R and T: no allocation per iteration */
  w->vx->data = w->R, w->vx->k = ka, w->vx->ld = ka > 0 ? ka : 1;
  w->vy->data = w->T, w->vy->k = ka, w->vy->ld = ka > 0 ? ka : 1;
  coal_status st = E->pc == COAL_PC_AMG ? coal_amg_apply(E->amg, w->vx, w->vy)
                                        : E->pc_apply(E->pc_user, w->vx, w->vy);
  if (st && E->pc != COAL_PC_AMG) /* AMG records its own message */
    return COAL_ERROR(ctx, st, "the user preconditioner failed: %s", coal_status_string(st));
  if (st) return st;
  return b->copy_cols(ctx, w->n, ka, w->T, COAL_ROW_MAJOR, ka, NULL, w->V + c0, COAL_ROW_MAJOR,
                      w->L, NULL);
}

static coal_status record_history(coal_eigen E, lob_work *w) {
  if (!E->history_on) return COAL_SUCCESS;
  if (E->hist_len == E->hist_cap) {
    int cap = E->hist_cap ? 2 * E->hist_cap : 64;
    double *h = NULL;
    COAL_CALL(coal_malloc(E->ctx, sizeof(double) * (size_t)cap * (size_t)E->nev, (void **)&h));
    if (E->history) memcpy(h, E->history, sizeof(double) * (size_t)E->hist_len * (size_t)E->nev);
    coal_free(E->history);
    E->history = h, E->hist_cap = cap;
  }
  memcpy(E->history + (size_t)E->hist_len * (size_t)E->nev, w->res,
         sizeof(double) * (size_t)E->nev);
  E->hist_len++;
  return COAL_SUCCESS;
}

/* Final results: true residuals, infos and the vectors. */
static coal_status finish(coal_eigen E, lob_work *w, int it) {
  const int nev = E->nev;
  COAL_CALL(true_residuals(E, w, nev, w->res));
  for (int j = 0; j < nev; j++) {
    coal_eig_info *inf = &E->info[j];
    inf->value = w->lam[j];
    inf->resnorm = w->res[j];
    inf->converged = w->res[j] <= E->tol;
    inf->iterations = inf->converged && w->conv[j] ? w->conv_it[j] : it;
  }
  COAL_CALL(coal_backend(E->ctx)->mem.alloc(E->ctx, sizeof(double) * (size_t)E->n * (size_t)nev,
                                            (void **)&E->vectors));
  return coal_backend(E->ctx)->blas.copy_cols(E->ctx, E->n, nev, w->V, COAL_ROW_MAJOR, w->L, NULL,
                                              E->vectors, COAL_ROW_MAJOR, nev, NULL);
}

static coal_status lobpcg_iterate(coal_eigen E, lob_work *w) {
  const int bs = w->bs, nev = E->nev;
  int keep = 0;
  if (E->X0) {
    keep = E->X0->k < bs ? (int)E->X0->k : bs;
    COAL_CALL(coal_backend(E->ctx)->blas.copy_cols(E->ctx, w->n, keep, (const double *)E->X0->data,
                                                   E->X0->layout, E->X0->ld, NULL, w->V,
                                                   COAL_ROW_MAJOR, w->L, NULL));
  }
  COAL_CALL(start_block(E, w, keep, E->seed));
  for (int j = 0; j < bs; j++) w->conv[j] = 0, w->conv_it[j] = 0, w->res[j] = INFINITY;
  int rp = 0, it = 0, fails = 0;
  for (;; it++) {
    /* residuals of the active columns, W = T R behind [X | P] */
    int ka = 0;
    for (int j = 0; j < bs; j++)
      if (!w->conv[j]) w->act[ka++] = j;
    const int c0 = bs + rp;
    COAL_CALL(residuals_and_w(E, w, ka, c0));
    for (int a = 0; a < ka; a++) w->tmp[a] = w->nrm[a];
    COAL_CALL(x_norms(E, w, bs));
    for (int a = 0; a < ka; a++) {
      int j = w->act[a];
      w->res[j] = rel_res(E, w, j, w->tmp[a]);
      if (w->res[j] <= E->tol) w->conv[j] = 1, w->conv_it[j] = it;
    }
    COAL_CALL(record_history(E, w));
    int wanted = 1;
    for (int j = 0; j < nev; j++) wanted &= w->conv[j];
    if (wanted) { /* verify with fresh products; unlock what fails */
      COAL_CALL(true_residuals(E, w, nev, w->tmp));
      int bad = 0;
      for (int j = 0; j < nev; j++)
        if (w->tmp[j] > E->tol) w->conv[j] = 0, w->res[j] = w->tmp[j], bad = 1;
      if (!bad) break;
      COAL_CALL(refresh_products(E, w, bs + rp));
    }
    if (it >= E->maxit) break;
    if (wanted) continue; /* unlocked pairs: recompute their residuals first */
    /* W: orthonormal, orthogonal to [X | P] */
    int rw = 0;
    coal_status st = orth_block(E, w, c0, ka, &rw);
    if (st == COAL_ERR_STATE) break; /* non-finite: keep the last good pairs */
    COAL_CALL(st);
    if (rw == 0 && rp == 0) break; /* no new direction at all: stagnation */
    COAL_CALL(spmm(E, w, E->A, w->V + c0, w->L, rw, w->AV + c0, w->L));
    const int m = c0 + rw;
    int rr = rayleigh_ritz(E, w, m, &st);
    COAL_CALL(st);
    if (rr < 0) break;
    if (rr > 0) { /* degenerate basis: restart from X alone */
      E->stats.restarts++;
      if (++fails > 3) break;
      COAL_CALL(start_block(E, w, bs, E->seed + (uint64_t)it + 1));
      rp = 0;
      continue;
    }
    fails = 0;
    COAL_CALL(update_basis(E, w, m, ka, &rp));
    E->stats.iterations = it + 1;
  }
  return finish(E, w, it);
}

coal_status coal_lobpcg_run(coal_eigen E) {
  lob_work w;
  memset(&w, 0, sizeof w);
  coal_status st = lob_alloc(E, &w);
  if (!st) st = lobpcg_iterate(E, &w);
  lob_free(E, &w);
  return st;
}
