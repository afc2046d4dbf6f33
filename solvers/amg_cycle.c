/* The AMG cycle, its smoothers and the Lanczos estimate of rho(D^-1 A), written only against
 * backend-generic operations, so that they run unchanged wherever the blocks live: every
 * product through coal_spmm (AUTO: one column goes to the SpMV kernel) or coal_spmv_raw, and the
 * block operations of the backend's table, reached through the helpers of the first section and
 * nowhere else. The coarsest level's dense solve is amg_coarse.c.
 *
 * Blocks are n_l x k, row-major with leading dimension k (tight): a block is then n_l k
 * contiguous doubles, which the single-vector operations (vec_axpbypcz) sweep as one vector.
 * Every level owns its blocks (allocated at setup for the reserved width, coal_amg_blocks_alloc)
 * and views over them that each apply repoints (no allocation in the cycle):
 *   B right-hand side (level 0: the caller's R), X solution (level 0: the caller's Z),
 *   R residual, D Chebyshev direction, T the scaled residual D^-1 r.
 *
 * V-cycle on level l (W: the coarse correction twice, except above the coarsest level, whose
 * solve is exact), zero initial guess on the way down:
 *   x = S(b)                   pre-smoothing from zero; r = b - A x
 *   b' = R r                   restriction (R = P^T kept explicitly: one SpMM)
 *   x' = cycle(l + 1, b')      (coarsest: the dense solve)
 *   x += P x'                  prolongation (SpMM with beta = 1)
 *   x += S(b - A x)            post-smoothing, the same polynomial
 * S is a polynomial in D^-1 A times D^-1 (Chebyshev) or sweeps of D_l1^-1 (l1-Jacobi), so its
 * error propagator is self-adjoint in the A inner product, and pre- and post-smoothing with the
 * same S make the cycle a symmetric operator; it is positive definite when S reduces the A-norm
 * of the error (Chebyshev on an interval that holds the spectrum's top: COAL_AMG_CHEB_HI x the
 * Lanczos estimate, which lies below rho; l1-Jacobi always), which makes it a CG preconditioner.
 *
 * Chebyshev of degree m on [lo, hi] (theta = (hi + lo)/2, delta = (hi - lo)/2, sigma =
 * theta/delta, rho_0 = 1/sigma), from x with r = b - A x:
 *   step 1:   d = D^-1 r / theta;                                x += d
 *   step j:   r -= A d;  rho_j = 1/(2 sigma - rho_{j-1});
 *             d = rho_j rho_{j-1} d + (2 rho_j / delta) D^-1 r;   x += d
 * (and r -= A d after the last step when the residual is wanted). Each step is one fused pass of
 * the backend (amg.cheb_step, kernels/amg.h): the product with A and the row-local updates,
 * with the directions alternating between the D and T blocks (the pass gathers the old one).
 * Passes over n_l x k blocks per level and V-cycle, degree 2, counting an SpMM as A plus its
 * gathered input and its output:
 *   pre (from zero):  step 1 (b, dinv read; d, x written), step 2 (A with d gathered; b, dinv,
 *                     d, x read; r, d', x written), r -= A d' (SpMM)
 *   restriction R r, prolongation x += P x' (SpMMs)
 *   post: r = b (2), r -= A x (SpMM), step 1 (r, dinv, x read; d, x written), step 2 (A with
 *         d gathered; r, dinv, d, x read; x written)
 * 5 products with A_l (4 of them fused with the vector updates), one each with R_l and P_l,
 * and about 20 block passes besides, against 45 passes and 6 products unfused. l1-Jacobi, one
 * sweep: pre dscale b->x (2), r = b, r -= A x (5); post r = b, r -= A x (5), r = D^-1 r (2),
 * x += r (3): 17 passes and 2 SpMMs. */
#include "amg_impl.h"

#include <math.h>

/* ---- the backend's block operations (kernels/blas.h), in one place ------------------------- */
static const coal_blas_ops *blas_of(coal_amg amg) { return &coal_backend(amg->ctx)->blas; }

/* z = a x + b y + c z over len contiguous doubles (x or y NULL: no term; c = 0: z not read). */
static coal_status lin3(coal_amg amg, int64_t len, double a, const double *x, double b,
                        const double *y, double c, double *z) {
  return blas_of(amg)->vec_axpbypcz(amg->ctx, len, a, x, b, y, c, z, 0.0);
}
/* Y = diag(d) X over n x k row-major tight blocks (Y may be X). */
static coal_status dscale(coal_amg amg, int64_t n, int64_t k, const double *d, const double *X,
                          double *Y) {
  return blas_of(amg)->dscale(amg->ctx, n, k, d, X, k, Y, k, NULL);
}
/* x^T y of two n-vectors, on the host when it returns. */
static coal_status dot(coal_amg amg, int64_t n, const double *x, const double *y, double *out) {
  const double *ys[1] = {y};
  return blas_of(amg)->vec_dots(amg->ctx, n, 1, x, ys, out);
}
/* Row-major tight copy of a block of any layout, and back. */
coal_status coal_amg_copy_in(coal_amg amg, coal_bvec V, double *dst) {
  return blas_of(amg)->copy_cols(amg->ctx, V->n, V->k, (const double *)V->data, V->layout, V->ld,
                                 NULL, dst, COAL_ROW_MAJOR, V->k, NULL);
}
coal_status coal_amg_copy_out(coal_amg amg, const double *src, coal_bvec V) {
  return blas_of(amg)->copy_cols(amg->ctx, V->n, V->k, src, COAL_ROW_MAJOR, V->k, NULL,
                                 (double *)V->data, V->layout, V->ld, NULL);
}

/* ---- workspace ------------------------------------------------------------------------------ */
static int level_needs(const coal_amg amg, int l, int b) {
  const int coarsest = l == amg->nlevels - 1, smoothed = !coarsest || !amg->direct;
  if (b == AMG_B || b == AMG_X) return l > 0 || amg->has_b0;
  if (!smoothed) return 0;
  return b == AMG_R || amg->smoother == COAL_AMG_CHEBYSHEV; /* D and T: Chebyshev only */
}

void coal_amg_blocks_free(coal_amg amg) {
  for (int l = 0; l < COAL_AMG_MAX_LEVELS; l++)
    for (int b = 0; b < AMG_NBLK; b++) {
      if (amg->lev[l].blk[b]) coal_backend(amg->ctx)->mem.release(amg->ctx, amg->lev[l].blk[b]);
      amg->lev[l].blk[b] = NULL;
      coal_bvec_destroy(&amg->lev[l].view[b]);
    }
  amg->kcap = 0;
  amg->info.workspace_bytes = 0;
}

coal_status coal_amg_blocks_alloc(coal_amg amg, int64_t k) {
  coal_ctx ctx = amg->ctx;
  const int has_b0 = amg->has_b0;
  coal_amg_blocks_free(amg);
  amg->has_b0 = has_b0;
  size_t total = 0;
  for (int l = 0; l < amg->nlevels; l++) {
    coal_amg_level *L = &amg->lev[l];
    const int64_t n = L->A->nrows;
    for (int b = 0; b < AMG_NBLK; b++) {
      if (!level_needs(amg, l, b)) continue;
      const size_t bytes = sizeof(double) * (size_t)(n > 0 ? n : 1) * (size_t)k;
      COAL_CALL(coal_backend(ctx)->mem.alloc(ctx, bytes, (void **)&L->blk[b]));
      COAL_CALL(coal_bvec_view(ctx, n, k, COAL_F64, COAL_ROW_MAJOR, k, L->blk[b], &L->view[b]));
      total += bytes;
    }
  }
  COAL_CALL(coal_amg_coarse_buffers(amg, k));
  amg->kcap = k;
  amg->info.workspace_bytes = total + 2 * sizeof(double) * (size_t)amg->nc * (size_t)k;
  return COAL_SUCCESS;
}

/* Every level's views at k columns (the storage holds kcap >= k). */
static void views_at(coal_amg amg, int64_t k) {
  for (int l = 0; l < amg->nlevels; l++)
    for (int b = 0; b < AMG_NBLK; b++) {
      coal_bvec v = amg->lev[l].view[b];
      if (v) v->k = k, v->ld = k > 0 ? k : 1, v->data = amg->lev[l].blk[b];
    }
}

/* ---- smoothers ------------------------------------------------------------------------------ */
static coal_status spmm(coal_mat M, double alpha, coal_bvec X, double beta, coal_bvec Y) {
  return coal_spmm(M, COAL_SPMM_AUTO, alpha, X, beta, Y);
}

/* r = b - A x on level l. */
static coal_status residual(coal_amg amg, int l, int64_t k, coal_bvec b, coal_bvec x) {
  coal_amg_level *L = &amg->lev[l];
  coal_bvec r = L->view[AMG_R];
  COAL_CALL(
      lin3(amg, L->A->nrows * k, 1.0, (const double *)b->data, 0.0, NULL, 0.0, (double *)r->data));
  return spmm(L->A, -1.0, x, 1.0, r);
}

static coal_status chebyshev(coal_amg amg, int l, int64_t k, coal_bvec b, coal_bvec x, int zero,
                             int want_res) {
  const coal_amg_ops *ops = &coal_backend(amg->ctx)->amg;
  coal_amg_level *L = &amg->lev[l];
  coal_bvec r = L->view[AMG_R], dv[2] = {L->view[AMG_D], L->view[AMG_T]};
  double *rd = (double *)r->data, *xd = (double *)x->data;
  const double *bd = (const double *)b->data;
  const double hi = amg->cheb_hi * L->rho, lo = amg->cheb_lo * L->rho;
  const double theta = 0.5 * (hi + lo), delta = 0.5 * (hi - lo), sigma = theta / delta;
  double rho_prev = 1.0 / sigma;
  const double *rin = bd; /* the current residual */
  if (!zero) {
    COAL_CALL(residual(amg, l, k, b, x));
    rin = rd;
  }
  /* step 1: d = D^-1 r / theta, x += d (x = d from zero) */
  int cur = 0; /* dv[cur] holds the last direction */
  const int m = amg->degree;
  COAL_CALL(ops->cheb_step(L->A, k, 0.0, 1.0 / theta, L->dinv, rin, NULL, NULL,
                           m > 1 || want_res ? (double *)dv[0]->data : NULL, zero ? NULL : xd, xd));
  for (int j = 2; j <= m; j++) { /* r -= A d; d = c2 D^-1 r + c1 d; x += d */
    const double rho = 1.0 / (2.0 * sigma - rho_prev), c1 = rho * rho_prev, c2 = 2.0 * rho / delta;
    const int keep = j < m || want_res;
    COAL_CALL(ops->cheb_step(L->A, k, c1, c2, L->dinv, rin, keep ? rd : NULL,
                             (const double *)dv[cur]->data,
                             keep ? (double *)dv[1 - cur]->data : NULL, xd, xd));
    if (keep) rin = rd, cur = 1 - cur;
    rho_prev = rho;
  }
  if (want_res) { /* r -= A d (r = b first when it was b itself) */
    if (rin != rd) COAL_CALL(lin3(amg, L->A->nrows * k, 1.0, bd, 0.0, NULL, 0.0, rd));
    COAL_CALL(spmm(L->A, -1.0, dv[cur], 1.0, r));
  }
  return COAL_SUCCESS;
}

static coal_status l1_jacobi(coal_amg amg, int l, int64_t k, coal_bvec b, coal_bvec x, int zero,
                             int want_res) {
  coal_amg_level *L = &amg->lev[l];
  const int64_t n = L->A->nrows;
  double *rd = (double *)L->view[AMG_R]->data, *xd = (double *)x->data;
  for (int s = 1; s <= amg->degree; s++) {
    if (s == 1 && zero) {
      COAL_CALL(dscale(amg, n, k, L->dinv, (const double *)b->data, xd));
      continue;
    }
    COAL_CALL(residual(amg, l, k, b, x));
    COAL_CALL(dscale(amg, n, k, L->dinv, rd, rd));
    COAL_CALL(lin3(amg, n * k, 1.0, rd, 0.0, NULL, 1.0, xd));
  }
  return want_res ? residual(amg, l, k, b, x) : COAL_SUCCESS;
}

static coal_status smooth(coal_amg amg, int l, int64_t k, coal_bvec b, coal_bvec x, int zero,
                          int want_res) {
  return amg->smoother == COAL_AMG_CHEBYSHEV ? chebyshev(amg, l, k, b, x, zero, want_res)
                                             : l1_jacobi(amg, l, k, b, x, zero, want_res);
}

/* ---- the cycle --------------------------------------------------------------------------------
 */
static coal_status coarsest(coal_amg amg, int64_t k, coal_bvec b, coal_bvec x) {
  const int l = amg->nlevels - 1;
  if (amg->direct) return coal_amg_coarse_solve(amg, k, (const double *)b->data, (double *)x->data);
  COAL_CALL(smooth(amg, l, k, b, x, 1, 0)); /* too large for the dense factor: smoothed twice */
  return smooth(amg, l, k, b, x, 0, 0);
}

static coal_status cycle(coal_amg amg, int l, int64_t k, coal_bvec b, coal_bvec x) {
  if (l == amg->nlevels - 1) return coarsest(amg, k, b, x);
  coal_amg_level *L = &amg->lev[l], *C = &amg->lev[l + 1];
  const int visits = amg->cycle == COAL_AMG_W_CYCLE && l + 2 < amg->nlevels ? 2 : 1;
  COAL_CALL(smooth(amg, l, k, b, x, 1, 1)); /* r = b - A x on return */
  for (int g = 0; g < visits; g++) {
    if (g > 0) COAL_CALL(residual(amg, l, k, b, x));
    COAL_CALL(spmm(L->R, 1.0, L->view[AMG_R], 0.0, C->view[AMG_B]));
    COAL_CALL(cycle(amg, l + 1, k, C->view[AMG_B], C->view[AMG_X]));
    COAL_CALL(spmm(L->P, 1.0, C->view[AMG_X], 1.0, x));
  }
  return smooth(amg, l, k, b, x, 0, 0);
}

coal_status coal_amg_cycle_run(coal_amg amg, coal_bvec B, coal_bvec X, int64_t k) {
  views_at(amg, k);
  return cycle(amg, 0, k, B, X);
}

/* ---- rho(D^-1 A) ------------------------------------------------------------------------------
 */
/* Number of eigenvalues below x of the symmetric tridiagonal matrix (a on the diagonal, b off
 * it): the Sturm count from the LDL^T pivots. */
static int sturm_below(int m, const double *a, const double *b, double x) {
  int c = 0;
  double d = a[0] - x;
  c += d < 0.0;
  for (int i = 1; i < m; i++) {
    if (d == 0.0) d = 1e-300;
    d = a[i] - x - b[i - 1] * b[i - 1] / d;
    c += d < 0.0;
  }
  return c;
}

/* The largest eigenvalue of that matrix by bisection on its Gershgorin interval. */
static double tridiag_max(int m, const double *a, const double *b) {
  double lo = INFINITY, hi = -INFINITY;
  for (int i = 0; i < m; i++) {
    const double r = (i > 0 ? fabs(b[i - 1]) : 0.0) + (i + 1 < m ? fabs(b[i]) : 0.0);
    lo = fmin(lo, a[i] - r), hi = fmax(hi, a[i] + r);
  }
  for (int it = 0; it < 200 && hi - lo > 1e-15 * fmax(fabs(hi), fabs(lo)); it++) {
    const double mid = 0.5 * (lo + hi);
    if (sturm_below(m, a, b, mid) == m)
      hi = mid; /* every eigenvalue lies below mid */
    else
      lo = mid;
  }
  return hi;
}

/* Lanczos on D^-1 A in the D inner product, carrying q = D v along with v so that only dinv is
 * needed: u = A v_j; alpha = v_j^T u; q' = u - alpha q_j - beta q_{j-1} (= D w); w = D^-1 q';
 * beta' = sqrt(w^T q'); v_{j+1} = w / beta', q_{j+1} = q' / beta'. Start: q_1 random (the same
 * numbers on every backend), v_1 = D^-1 q_1, normalised. Stops early when beta' vanishes (the
 * Krylov space is invariant: the Ritz values are exact). Per step one SpMV, two dot products
 * (host round trips) and 8 vector passes. */
coal_status coal_amg_lanczos_rho(coal_amg amg, coal_mat A, const double *dinv, int steps,
                                 double *scratch, double *rho) {
  coal_ctx ctx = amg->ctx;
  const int64_t n = A->nrows;
  *rho = 0.0;
  if (n == 0 || steps < 1) return COAL_SUCCESS;
  double *v0 = scratch, *v1 = scratch + n, *q0 = scratch + 2 * n, *q1 = scratch + 3 * n,
         *u = scratch + 4 * n;
  double al[64], be[64], a = 0.0, bb = 0.0, beta = 0.0;
  if (steps > 64) steps = 64;
  coal_bvec view = NULL;
  COAL_CALL(coal_bvec_view(ctx, n, 1, COAL_F64, COAL_ROW_MAJOR, 1, q1, &view));
  coal_status st = coal_bvec_set_random(view, COAL_AMG_SEED);
  coal_bvec_destroy(&view);
  COAL_CALL(st);
  COAL_CALL(dscale(amg, n, 1, dinv, q1, v1));
  COAL_CALL(dot(amg, n, v1, q1, &bb));
  if (!(bb > 0.0)) return COAL_SUCCESS;
  COAL_CALL(lin3(amg, n, 0.0, NULL, 0.0, NULL, 1.0 / sqrt(bb), v1));
  COAL_CALL(lin3(amg, n, 0.0, NULL, 0.0, NULL, 1.0 / sqrt(bb), q1));
  COAL_CALL(lin3(amg, n, 0.0, NULL, 0.0, NULL, 0.0, q0));
  int m = 0;
  for (int j = 0; j < steps; j++) {
    /* CSR-vector: no derived format is built for an estimate of ten products */
    COAL_CALL(coal_spmv_raw(A, COAL_SPMV_CSR_VECTOR, 1.0, v1, 0.0, u));
    COAL_CALL(dot(amg, n, v1, u, &a));
    al[m++] = a;
    if (j + 1 == steps) break;
    COAL_CALL(lin3(amg, n, 1.0, u, -a, q1, -beta, q0)); /* q0 = D w */
    COAL_CALL(dscale(amg, n, 1, dinv, q0, v0));         /* v0 = w */
    COAL_CALL(dot(amg, n, v0, q0, &bb));
    const double bnew = sqrt(fmax(bb, 0.0));
    if (!(bnew > 1e-10 * fabs(a))) break; /* invariant subspace (or not finite) */
    be[m - 1] = bnew;
    COAL_CALL(lin3(amg, n, 0.0, NULL, 0.0, NULL, 1.0 / bnew, v0));
    COAL_CALL(lin3(amg, n, 0.0, NULL, 0.0, NULL, 1.0 / bnew, q0));
    double *s = v0;
    v0 = v1, v1 = s, s = q0, q0 = q1, q1 = s;
    beta = bnew;
  }
  COAL_CHECK(ctx, isfinite(al[m - 1]), COAL_ERR_NOT_SPD,
             "AMG: the estimate of rho(D^-1 A) on a %lld-row level is not finite", (long long)n);
  *rho = tridiag_max(m, al, be);
  return COAL_SUCCESS;
}
