/* Smoothed-aggregation AMG: the object, its options, the setup of the hierarchy, apply and
 * info. The setup kernels are kernels/amg.h (called through the setup_* helpers below, the one
 * place that picks the backend's twin), the products the library's SpGEMM, the cycle
 * amg_cycle.c and the coarsest level amg_coarse.c.
 *
 * Setup, per level l with matrix A (n rows), until the coarsest level (n <= coarse_size, the
 * level max_levels, or coarsening stalled):
 *   1. diag(A) and D^-1 (coal_amg_diagonal_host, coal_amg_dinv_host): a non-positive diagonal
 *      is an error (level 0: the caller's matrix is not SPD);
 *   2. the strong graph (count, scan, fill), theta, and the filtered matrix A_F (the strong
 *      entries, the others lumped into the diagonal against the level's near-nullspace vector
 *      b: coal_amg_filter_host, kernels/amg.h);
 *   3. the distance-2 MIS and the aggregates; nagg > COAL_AMG_STALL n (or 0): coarsening
 *      stalled, this level is the coarsest;
 *   4. T (n x nagg), one entry a row, from b normalised per aggregate, and the next level's
 *      b_c (b = 1 on level 0; T b_c = b, so every level keeps the near-nullspace);
 *   5. rho = rho(D^-1 A) by COAL_AMG_LANCZOS_STEPS Lanczos steps (amg_cycle.c);
 *   6. A_F T by the SpGEMM front end (coal_spgemm_create, AB), then in place over its values
 *      P = T - omega D^-1 (A_F T), omega = 4 / (3 rho) (coal_amg_smooth_host: the pattern of
 *      A_F T holds T's, so P keeps its pattern); R = P^T (coal_mat_transpose, kept for the
 *      cycle's restriction). A_F = A when every off-diagonal entry is strong;
 *   7. A_c = P^T A P by the SpGEMM front end's PtAP (coal_spgemm_create_algo, PTAP), the next
 *      level: TILE when A_c has at most the backend's select.ptap_tile_rows rows (the GPU's
 *      rule; the host never), else ROWS.
 * The product objects are released once their result is taken, unless coal_amg_set_reuse asked
 * to keep them with the strong graph, aggregates, b, T and A_F for coal_amg_resetup
 * (amg_resetup.c). The coarsest level gets the dense factor (amg_coarse.c) when it has
 * at most COAL_AMG_DENSE_MAX rows. Every level that is smoothed keeps the smoother's inverse
 * diagonal (1/a_ii for Chebyshev, 1/sum_j |a_ij| for l1-Jacobi) in backend memory, and its rho
 * for Chebyshev. */
#include "amg_impl.h"
#include "solver_impl.h"       /* coal_check_symmetric */
#include "../kernels/spgemm.h" /* coal_mat_transpose_backend */

#include <math.h>
#include <string.h>

static const char *const smoother_names[] = {"chebyshev", "l1-jacobi"};
static const char *const phase_names[] = {"check",  "strength", "aggregate", "tentative", "rho",
                                          "smooth", "galerkin", "coarse",    "other"};

const char *coal_amg_smoother_name(coal_amg_smoother s) {
  return (unsigned)s < 2 ? smoother_names[s] : "unknown";
}
const char *coal_amg_phase_name(coal_amg_phase p) {
  return (unsigned)p < COAL_AMG_NPHASES ? phase_names[p] : "unknown";
}
coal_status coal_amg_smoother_parse(const char *name, coal_amg_smoother *s) {
  int i = name && s ? coal_name_lookup(smoother_names, 2, name) : -1;
  if (i < 0) return COAL_ERR_ARG;
  *s = (coal_amg_smoother)i;
  return COAL_SUCCESS;
}

/* ---- the setup kernels of the context's backend -------------------------------------------- */
coal_status coal_amg_alloc(coal_amg amg, size_t bytes, void **p) {
  return coal_backend(amg->ctx)->mem.pool_alloc(amg->ctx, bytes > 0 ? bytes : 1, p);
}
void coal_amg_release(coal_amg amg, void *p) {
  if (p) coal_backend(amg->ctx)->mem.pool_release(amg->ctx, p);
}
#define setup_alloc   coal_amg_alloc
#define setup_release coal_amg_release
/* x = v on n doubles of backend memory (the backend's vector operation). */
static coal_status lin_fill(coal_amg amg, int64_t n, double v, double *x) {
  return coal_backend(amg->ctx)->blas.vec_axpbypcz(amg->ctx, n, 0.0, NULL, 0.0, NULL, 0.0, x, v);
}

/* ---- object ------------------------------------------------------------------------------- */
void coal_amg_hierarchy_free(coal_amg amg) {
  coal_amg_reuse_free(amg);
  coal_amg_blocks_free(amg);
  coal_amg_coarse_free(amg);
  if (amg->A64) amg->lev[0].A = NULL;
  coal_mat_destroy(&amg->A64);
  for (int l = 0; l < COAL_AMG_MAX_LEVELS; l++) {
    coal_amg_level *L = &amg->lev[l];
    if (l > 0) coal_mat_destroy(&L->A);
    coal_mat_destroy(&L->P);
    coal_mat_destroy(&L->R);
    setup_release(amg, L->dinv);
    memset(L, 0, sizeof *L);
  }
  amg->nlevels = 0, amg->setup_done = 0;
}

coal_status coal_amg_create(coal_mat A, coal_amg *out) {
  if (!A) return COAL_ERR_ARG;
  COAL_CHECK(A->ctx, out, COAL_ERR_ARG, "NULL output");
  *out = NULL;
  coal_amg amg;
  COAL_CALL(coal_calloc(A->ctx, sizeof *amg, (void **)&amg));
  amg->A = A, amg->ctx = A->ctx;
  amg->theta = COAL_AMG_DEFAULT_THETA, amg->smoother = COAL_AMG_CHEBYSHEV, amg->degree = 2;
  amg->coarse_size = COAL_AMG_DEFAULT_COARSE, amg->max_levels = COAL_AMG_MAX_LEVELS;
  amg->cycle = COAL_AMG_V_CYCLE, amg->kwant = 1;
  amg->cheb_lo = COAL_AMG_CHEB_LO, amg->cheb_hi = COAL_AMG_CHEB_HI;
  amg->lanczos_steps = COAL_AMG_LANCZOS_STEPS;
  *out = amg;
  return COAL_SUCCESS;
}

coal_status coal_amg_destroy(coal_amg *amg) {
  if (!amg || !*amg) return COAL_SUCCESS;
  coal_amg_hierarchy_free(*amg);
  coal_free(*amg);
  *amg = NULL;
  return COAL_SUCCESS;
}

coal_status coal_amg_set_theta(coal_amg amg, double theta) {
  if (!amg) return COAL_ERR_ARG;
  COAL_CHECK(amg->ctx, theta >= 0.0 && theta < 1.0, COAL_ERR_ARG,
             "AMG strength threshold %g outside [0, 1)", theta);
  if (theta != amg->theta) amg->theta = theta, amg->setup_done = 0;
  return COAL_SUCCESS;
}

coal_status coal_amg_set_smoother(coal_amg amg, coal_amg_smoother s, int degree) {
  if (!amg) return COAL_ERR_ARG;
  COAL_CHECK(amg->ctx, s == COAL_AMG_CHEBYSHEV || s == COAL_AMG_L1_JACOBI, COAL_ERR_ARG,
             "unknown AMG smoother %d", (int)s);
  COAL_CHECK(amg->ctx, degree >= 1 && degree <= 16, COAL_ERR_ARG,
             "AMG smoother degree %d outside 1..16", degree);
  if (s != amg->smoother || degree != amg->degree) /* a new hierarchy (its diagonals, rho) */
    amg->smoother = s, amg->degree = degree, amg->setup_done = 0;
  return COAL_SUCCESS;
}

coal_status coal_amg_set_coarse_size(coal_amg amg, int64_t coarse_size) {
  if (!amg) return COAL_ERR_ARG;
  COAL_CHECK(amg->ctx, coarse_size >= 1, COAL_ERR_ARG, "AMG coarse size %lld below 1",
             (long long)coarse_size);
  if (coarse_size != amg->coarse_size) amg->coarse_size = coarse_size, amg->setup_done = 0;
  return COAL_SUCCESS;
}

coal_status coal_amg_set_max_levels(coal_amg amg, int max_levels) {
  if (!amg) return COAL_ERR_ARG;
  COAL_CHECK(amg->ctx, max_levels >= 1 && max_levels <= COAL_AMG_MAX_LEVELS, COAL_ERR_ARG,
             "AMG max levels %d outside 1..%d", max_levels, COAL_AMG_MAX_LEVELS);
  if (max_levels != amg->max_levels) amg->max_levels = max_levels, amg->setup_done = 0;
  return COAL_SUCCESS;
}

coal_status coal_amg_set_cycle(coal_amg amg, coal_amg_cycle c) {
  if (!amg) return COAL_ERR_ARG;
  COAL_CHECK(amg->ctx, c == COAL_AMG_V_CYCLE || c == COAL_AMG_W_CYCLE, COAL_ERR_ARG,
             "unknown AMG cycle %d", (int)c);
  amg->cycle = c; /* the hierarchy does not depend on it */
  return COAL_SUCCESS;
}

coal_status coal_amg_set_tuning(coal_amg amg, double cheb_lo, double cheb_hi, int lanczos_steps) {
  if (!amg) return COAL_ERR_ARG;
  if (cheb_lo > 0) amg->cheb_lo = cheb_lo;
  if (cheb_hi > 0) amg->cheb_hi = cheb_hi;
  if (lanczos_steps > 0) amg->lanczos_steps = lanczos_steps > 64 ? 64 : lanczos_steps;
  COAL_CHECK(amg->ctx, amg->cheb_lo < amg->cheb_hi, COAL_ERR_ARG,
             "Chebyshev interval [%g, %g] x rho is empty", amg->cheb_lo, amg->cheb_hi);
  amg->setup_done = 0;
  return COAL_SUCCESS;
}

coal_status coal_amg_set_reuse(coal_amg amg, int keep) {
  if (!amg) return COAL_ERR_ARG;
  if ((keep != 0) != amg->reuse) amg->reuse = keep != 0, amg->setup_done = 0;
  return COAL_SUCCESS;
}

/* ---- setup -------------------------------------------------------------------------------- */
double coal_amg_tick(coal_amg amg) {
  coal_ctx_sync(amg->ctx);
  return coal_now_seconds();
}
#define tick coal_amg_tick

void coal_amg_phase_add(coal_amg amg, coal_amg_phase p, double *t) {
  const double now = tick(amg);
  amg->info.phase_seconds[p] += now - *t;
  *t = now;
}
#define phase_add coal_amg_phase_add

static size_t csr_bytes(coal_mat M) {
  return M ? sizeof(int32_t) * ((size_t)M->nrows + 1 + (size_t)M->nnz) +
                 sizeof(double) * (size_t)M->nnz
           : 0;
}

coal_status coal_amg_check_matrix(coal_amg amg) {
  coal_ctx ctx = amg->ctx;
  coal_mat A = amg->A;
  COAL_CHECK(ctx, A->nrows == A->ncols, COAL_ERR_ARG, "AMG needs a square matrix; A is %d x %d",
             A->nrows, A->ncols);
  return coal_check_symmetric(A, "A");
}

coal_status coal_amg_level_csr(coal_mat A, const int32_t **rp, const int32_t **ci,
                               const double **v) {
  void *vv = NULL;
  COAL_CALL(coal_backend(A->ctx)->mat.csr(A, rp, ci, &vv));
  *v = (const double *)vv;
  return COAL_SUCCESS;
}

/* One int32 of backend memory on the host (a total at the end of a scan). */
static coal_status fetch_i32(coal_amg amg, const int32_t *src, int32_t *dst) {
  return coal_backend(amg->ctx)->mem.download(amg->ctx, dst, src, sizeof *dst);
}

/* A new matrix over CSR arrays of the setup (setup_alloc'd): the matrix owns them. */
static coal_status wrap(coal_amg amg, int32_t nrows, int32_t ncols, int64_t nnz, int32_t **rp,
                        int32_t **ci, double **v, coal_mat *M) {
  coal_status st = coal_backend(amg->ctx)->mat.wrap(amg->ctx, nrows, ncols, nnz, *rp, *ci, *v, M);
  *rp = *ci = NULL, *v = NULL; /* owned by M, or released by the failed wrap */
  return st;
}

/* One coarsening step from level l (diag and jd = 1/diag in backend memory): levels l+1 and
 * P, R, rho of level l; *stalled = 1 (and nothing made) when the aggregates would keep more
 * than COAL_AMG_STALL of the rows. Every array lives in the backend's memory; what comes to the
 * host is the totals (m, nagg) and the MIS's round counts. */
static coal_status coarsen(coal_amg amg, int l, const double *diag, const double *jd, double **b,
                           double *scratch, int *stalled, double *t) {
  coal_ctx ctx = amg->ctx;
  const coal_amg_ops *ops = &coal_backend(ctx)->amg;
  coal_amg_level *L = &amg->lev[l];
  coal_mat A = L->A, T = NULL, AF = NULL, AT = NULL, Ac = NULL;
  coal_spgemm prod = NULL;
  const int32_t n = A->nrows;
  const int32_t *arp = NULL, *aci = NULL;
  const double *av = NULL;
  int32_t *srp = NULL, *sci = NULL, *agg = NULL, *aggptr = NULL, *members = NULL, *trp = NULL;
  int32_t *tci = NULL, *frp = NULL, *fci = NULL;
  double *sval = NULL, *tval = NULL, *fval = NULL, *bc = NULL;
  uint64_t *state = NULL, *low = NULL;
  int32_t nagg = 0, m = 0;
  coal_status st;
  *stalled = 0;
  COAL_CALL(coal_amg_level_csr(A, &arp, &aci, &av));
  /* 2. strength */
  COAL_CALL_GOTO(st, setup_alloc(amg, sizeof(int32_t) * ((size_t)n + 1), (void **)&srp), done);
  COAL_CALL_GOTO(st, ops->strength_count(ctx, n, arp, aci, av, diag, amg->theta, srp), done);
  COAL_CALL_GOTO(st, fetch_i32(amg, srp + n, &m), done);
  if (m < 0 || (int64_t)m + n > INT32_MAX) {
    st = COAL_ERROR(ctx, COAL_ERR_OVERFLOW, "AMG strength graph of level %d beyond 2^31-1 entries",
                    l);
    goto done;
  }
  COAL_CALL_GOTO(st, setup_alloc(amg, sizeof(int32_t) * (size_t)m, (void **)&sci), done);
  COAL_CALL_GOTO(st, setup_alloc(amg, sizeof(double) * (size_t)m, (void **)&sval), done);
  COAL_CALL_GOTO(st, ops->strength_fill(ctx, n, arp, aci, av, diag, amg->theta, srp, sci, sval),
                 done);
  /* A_F: its arrays go to the matrix object */
  COAL_CALL_GOTO(st, setup_alloc(amg, sizeof(int32_t) * ((size_t)n + 1), (void **)&frp), done);
  COAL_CALL_GOTO(st, setup_alloc(amg, sizeof(int32_t) * ((size_t)m + n), (void **)&fci), done);
  COAL_CALL_GOTO(st, setup_alloc(amg, sizeof(double) * ((size_t)m + n), (void **)&fval), done);
  COAL_CALL_GOTO(st, ops->filter(ctx, n, arp, aci, av, *b, srp, sci, frp, fci, fval), done);
  COAL_CALL_GOTO(st, wrap(amg, n, n, (int64_t)m + n, &frp, &fci, &fval, &AF), done);
  phase_add(amg, COAL_AMG_PHASE_STRENGTH, t);
  /* 3. aggregates */
  COAL_CALL_GOTO(st, setup_alloc(amg, sizeof(uint64_t) * (size_t)n, (void **)&state), done);
  COAL_CALL_GOTO(st, setup_alloc(amg, sizeof(uint64_t) * (size_t)n, (void **)&low), done);
  COAL_CALL_GOTO(st, setup_alloc(amg, sizeof(int32_t) * (size_t)n, (void **)&agg), done);
  COAL_CALL_GOTO(st, ops->mis2(ctx, n, srp, sci, state, low, &L->mis_rounds), done);
  COAL_CALL_GOTO(st, ops->aggregate(ctx, n, srp, sci, sval, state, agg, &nagg), done);
  phase_add(amg, COAL_AMG_PHASE_AGGREGATE, t);
  if (nagg == 0 || (double)nagg > COAL_AMG_STALL * (double)n) {
    *stalled = 1;
    st = COAL_SUCCESS;
    goto done;
  }
  /* 4. T: its arrays go to the matrix object */
  COAL_CALL_GOTO(st, setup_alloc(amg, sizeof(int32_t) * ((size_t)nagg + 1), (void **)&aggptr),
                 done);
  COAL_CALL_GOTO(st, setup_alloc(amg, sizeof(int32_t) * (size_t)n, (void **)&members), done);
  COAL_CALL_GOTO(st, setup_alloc(amg, sizeof(double) * (size_t)nagg, (void **)&bc), done);
  COAL_CALL_GOTO(st, setup_alloc(amg, sizeof(int32_t) * ((size_t)n + 1), (void **)&trp), done);
  COAL_CALL_GOTO(st, setup_alloc(amg, sizeof(int32_t) * (size_t)n, (void **)&tci), done);
  COAL_CALL_GOTO(st, setup_alloc(amg, sizeof(double) * (size_t)n, (void **)&tval), done);
  COAL_CALL_GOTO(st, ops->tentative(ctx, n, nagg, agg, *b, aggptr, members, trp, tci, tval, bc),
                 done);
  {
    const double *tv = tval; /* T's values, read by the smoothing below */
    COAL_CALL_GOTO(st, wrap(amg, n, nagg, n, &trp, &tci, &tval, &T), done);
    tval = NULL;
    phase_add(amg, COAL_AMG_PHASE_TENTATIVE, t);
    /* 5. rho(D^-1 A) */
    COAL_CALL_GOTO(st, coal_amg_lanczos_rho(amg, A, jd, amg->lanczos_steps, scratch, &L->rho),
                   done);
    phase_add(amg, COAL_AMG_PHASE_RHO, t);
    /* 6. P = (I - omega D^-1 A_F) T over the pattern of A_F T, in place where the product
     * left it, and R = P^T made there too */
    COAL_CALL_GOTO(st, coal_spgemm_create(COAL_PRODUCT_AB, AF, T, &prod, &AT), done);
    if (amg->reuse)
      L->smooth_prod = prod, prod = NULL;
    else
      coal_spgemm_destroy(&prod);
    const int32_t *prp = NULL, *pci = NULL;
    void *pv = NULL;
    COAL_CALL_GOTO(st, coal_backend(ctx)->mat.csr(AT, &prp, &pci, &pv), done);
    COAL_CALL_GOTO(
        st, ops->smooth(ctx, n, prp, pci, (double *)pv, jd, agg, tv, 4.0 / (3.0 * L->rho)), done);
  }
  coal_backend(ctx)->mat.values_changed(AT);
  L->P = AT, AT = NULL;
  COAL_CALL_GOTO(st, coal_mat_transpose_backend(L->P, &L->R), done);
  phase_add(amg, COAL_AMG_PHASE_SMOOTH, t);
  /* 7. A_c = P^T A P */
  L->galerkin_algo =
      L->P->ncols <= coal_backend(ctx)->select.ptap_tile_rows ? COAL_SPGEMM_TILE : COAL_SPGEMM_ROWS;
  COAL_CALL_GOTO(st,
                 coal_spgemm_create_algo(COAL_PRODUCT_PTAP, A, L->P,
                                         (coal_spgemm_algo)L->galerkin_algo, &prod, &Ac),
                 done);
  amg->lev[l + 1].A = Ac;
  amg->nlevels = l + 2;
  if (amg->reuse) { /* what the numeric-only re-setup needs */
    L->galerkin_prod = prod, prod = NULL;
    L->AF = AF, AF = NULL, L->T = T, T = NULL;
    L->srp = srp, srp = NULL, L->sci = sci, sci = NULL, L->agg = agg, agg = NULL;
    L->b = *b;
  } else {
    coal_spgemm_destroy(&prod);
    setup_release(amg, *b);
  }
  *b = bc, bc = NULL; /* the next level's near-nullspace */
  phase_add(amg, COAL_AMG_PHASE_GALERKIN, t);
done:
  coal_spgemm_destroy(&prod);
  coal_mat_destroy(&T);
  coal_mat_destroy(&AF);
  coal_mat_destroy(&AT);
  void *tmp[] = {srp, sci, sval, state, low, agg, aggptr, members,
                 bc,  trp, tci,  tval,  frp, fci, fval};
  for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++) setup_release(amg, tmp[i]);
  return st;
}

coal_status coal_amg_bad_diagonal(coal_amg amg, int l, const double *jd, int64_t bad) {
  coal_ctx ctx = amg->ctx;
  double d = 0.0;
  COAL_CALL(coal_backend(ctx)->mem.download(ctx, &d, jd + bad, sizeof(double)));
  return l == 0 ? COAL_ERROR(ctx, COAL_ERR_NOT_SPD,
                             "AMG: diagonal entry %lld of A is %g; an SPD matrix has a positive "
                             "diagonal",
                             (long long)bad + 1, d)
                : COAL_ERROR(ctx, COAL_ERR_NOT_SPD,
                             "AMG: diagonal entry %lld of the level-%d matrix is %g (A is not "
                             "positive semi-definite)",
                             (long long)bad + 1, l, d);
}

/* Level l (its matrix made): diagonal checks, the coarsening step unless it is the coarsest, the
 * smoother's diagonal and rho. *last = 1 when l is the coarsest level. */
static coal_status level_setup(coal_amg amg, int l, double **b, double *scratch, int *last,
                               double *t) {
  coal_ctx ctx = amg->ctx;
  const coal_amg_ops *ops = &coal_backend(ctx)->amg;
  coal_amg_level *L = &amg->lev[l];
  coal_mat A = L->A;
  const int32_t n = A->nrows;
  const int32_t *arp = NULL, *aci = NULL;
  const double *av = NULL;
  double *diag = NULL, *jd = NULL;
  int64_t bad = -1;
  coal_status st;
  COAL_CALL(coal_amg_level_csr(A, &arp, &aci, &av));
  COAL_CALL_GOTO(st, setup_alloc(amg, sizeof(double) * (size_t)n, (void **)&diag), done);
  COAL_CALL_GOTO(st, setup_alloc(amg, sizeof(double) * (size_t)n, (void **)&jd), done);
  COAL_CALL_GOTO(st, ops->diagonal(ctx, n, arp, aci, av, diag), done);
  COAL_CALL_GOTO(st, ops->dinv(ctx, n, arp, aci, av, 0, jd, &bad), done);
  if (bad >= 0) {
    st = coal_amg_bad_diagonal(amg, l, jd, bad);
    goto done;
  }
  phase_add(amg, COAL_AMG_PHASE_STRENGTH, t);
  int stalled = 1;
  if (n > amg->coarse_size && l + 1 < amg->max_levels)
    COAL_CALL_GOTO(st, coarsen(amg, l, diag, jd, b, scratch, &stalled, t), done);
  *last = stalled;
  const int direct = *last && n <= COAL_AMG_DENSE_MAX;
  if (direct) {
    st = COAL_SUCCESS;
    goto done; /* solved by the dense factor: no smoother */
  }
  if (amg->smoother == COAL_AMG_CHEBYSHEV) {
    if (L->rho == 0.0) {
      COAL_CALL_GOTO(st, coal_amg_lanczos_rho(amg, A, jd, amg->lanczos_steps, scratch, &L->rho),
                     done);
      phase_add(amg, COAL_AMG_PHASE_RHO, t);
    }
    L->dinv = jd, jd = NULL;
  } else {
    COAL_CALL_GOTO(st, setup_alloc(amg, sizeof(double) * (size_t)n, (void **)&L->dinv), done);
    COAL_CALL_GOTO(st, ops->dinv(ctx, n, arp, aci, av, 1, L->dinv, &bad), done);
  }
  phase_add(amg, COAL_AMG_PHASE_OTHER, t);
done:
  setup_release(amg, diag);
  setup_release(amg, jd);
  return st;
}

void coal_amg_fill_info(coal_amg amg) {
  coal_amg_info *in = &amg->info;
  in->levels = amg->nlevels;
  double rows = 0, nnz = 0;
  in->hierarchy_bytes = 0;
  for (int l = 0; l < amg->nlevels; l++) {
    const coal_amg_level *L = &amg->lev[l];
    in->rows[l] = L->A->nrows, in->nnz[l] = L->A->nnz;
    in->p_nnz[l] = L->P ? L->P->nnz : 0;
    in->bytes[l] = csr_bytes(L->A) + csr_bytes(L->P) + csr_bytes(L->R);
    in->rho[l] = L->rho;
    in->mis_rounds[l] = L->mis_rounds;
    in->galerkin_algo[l] = L->P ? L->galerkin_algo : 0;
    in->hierarchy_bytes += in->bytes[l];
    rows += (double)L->A->nrows, nnz += (double)L->A->nnz;
  }
  const coal_mat A = amg->A;
  in->grid_complexity = A->nrows > 0 ? rows / (double)A->nrows : 1.0;
  in->operator_complexity = A->nnz > 0 ? nnz / (double)A->nnz : 1.0;
  in->coarse_bytes = sizeof(double) * (size_t)amg->nc * (size_t)amg->nc;
  in->coarse_rank = amg->rank;
  in->coarse_direct = amg->direct;
}

coal_status coal_amg_setup(coal_amg amg) {
  if (!amg) return COAL_ERR_ARG;
  coal_amg_hierarchy_free(amg);
  memset(&amg->info, 0, sizeof amg->info);
  const double t0 = tick(amg);
  double t = t0, *scratch = NULL, *b = NULL;
  coal_status st = coal_amg_check_matrix(amg);
  if (st) return st;
  phase_add(amg, COAL_AMG_PHASE_CHECK, &t);
  /* the hierarchy is fp64: an fp32 A's level 0 is its fp64 copy */
  if (amg->A->dtype != COAL_F64)
    COAL_CALL_GOTO(st, coal_mat_convert(amg->A, COAL_F64, &amg->A64), fail);
  amg->lev[0].A = amg->A64 ? amg->A64 : amg->A;
  amg->nlevels = 1;
  const int64_t n = amg->A->nrows;
  COAL_CALL_GOTO(st, setup_alloc(amg, sizeof(double) * 5 * (size_t)n, (void **)&scratch), fail);
  COAL_CALL_GOTO(st, setup_alloc(amg, sizeof(double) * (size_t)n, (void **)&b), fail);
  COAL_CALL_GOTO(st, lin_fill(amg, n, 1.0, b), fail); /* b = 1 */
  int last = 0;
  for (int l = 0; !last; l++) COAL_CALL_GOTO(st, level_setup(amg, l, &b, scratch, &last, &t), fail);
  setup_release(amg, scratch), scratch = NULL;
  setup_release(amg, b), b = NULL;
  coal_mat Ac = amg->lev[amg->nlevels - 1].A;
  if (Ac->nrows <= COAL_AMG_DENSE_MAX) {
    COAL_CALL_GOTO(st, coal_amg_coarse_factor(amg, Ac), fail);
    phase_add(amg, COAL_AMG_PHASE_COARSE, &t);
  }
  COAL_CALL_GOTO(st, coal_amg_blocks_alloc(amg, amg->kwant), fail);
  phase_add(amg, COAL_AMG_PHASE_OTHER, &t);
  coal_amg_fill_info(amg);
  amg->info.reuse_bytes = coal_amg_reuse_bytes(amg);
  amg->info.setup_seconds = tick(amg) - t0;
  amg->a_state = amg->A->state;
  amg->setup_done = 1;
  return COAL_SUCCESS;
fail:
  setup_release(amg, scratch);
  setup_release(amg, b);
  coal_amg_hierarchy_free(amg);
  return st;
}

/* ---- apply -------------------------------------------------------------------------------- */
static size_t block_bytes(coal_bvec V) {
  const int64_t outer = V->layout == COAL_COL_MAJOR ? V->k : V->n;
  return (size_t)V->ld * (size_t)outer * sizeof(double);
}

/* Row-major tight, or one column-major column: the vector passes sweep it as n k doubles. */
static int tight(coal_bvec V) {
  return (V->layout == COAL_ROW_MAJOR && V->ld == V->k) ||
         (V->layout == COAL_COL_MAJOR && V->k == 1);
}

static coal_status check_block(coal_amg amg, coal_bvec V, const char *what) {
  COAL_CHECK(amg->ctx, V, COAL_ERR_ARG, "NULL %s", what);
  COAL_CHECK(amg->ctx, V->ctx == amg->ctx, COAL_ERR_ARG, "%s belongs to another context", what);
  COAL_CHECK(amg->ctx, V->dtype == COAL_F64, COAL_ERR_UNSUPPORTED, "%s must be fp64", what);
  COAL_CHECK(amg->ctx, V->n == amg->A->nrows, COAL_ERR_ARG, "%s has %lld rows, A has %d", what,
             (long long)V->n, amg->A->nrows);
  return COAL_SUCCESS;
}

coal_status coal_amg_reserve(coal_amg amg, int64_t k) {
  if (!amg) return COAL_ERR_ARG;
  COAL_CHECK(amg->ctx, k >= 0, COAL_ERR_ARG, "negative block width %lld", (long long)k);
  if (k > amg->kwant) amg->kwant = k;
  if (amg->setup_done && amg->kwant > amg->kcap) COAL_CALL(coal_amg_blocks_alloc(amg, amg->kwant));
  return COAL_SUCCESS;
}

coal_status coal_amg_apply(coal_amg amg, coal_bvec R, coal_bvec Z) {
  if (!amg) return COAL_ERR_ARG;
  coal_ctx ctx = amg->ctx;
  COAL_CHECK(ctx, amg->setup_done, COAL_ERR_STATE, "coal_amg_apply before coal_amg_setup");
  COAL_CHECK(ctx, amg->A->state == amg->a_state, COAL_ERR_STATE,
             "the values of A changed since the AMG setup: call coal_amg_setup again");
  COAL_CALL(check_block(amg, R, "R"));
  COAL_CALL(check_block(amg, Z, "Z"));
  COAL_CHECK(ctx, R->k == Z->k, COAL_ERR_ARG, "R has %lld columns, Z has %lld", (long long)R->k,
             (long long)Z->k);
  const int64_t k = R->k;
  if (k == 0 || R->n == 0) return COAL_SUCCESS;
  const char *r0 = (const char *)R->data, *z0 = (const char *)Z->data;
  COAL_CHECK(ctx, r0 + block_bytes(R) <= z0 || z0 + block_bytes(Z) <= r0, COAL_ERR_ARG,
             "R and Z must not overlap");
  const int tr = tight(R), tz = tight(Z);
  if ((!tr || !tz) && !amg->has_b0) { /* first block that is not tight: level 0's B and X */
    amg->has_b0 = 1;
    COAL_CALL(coal_amg_blocks_alloc(amg, k > amg->kcap ? k : amg->kcap));
  } else if (k > amg->kcap) {
    COAL_CALL(coal_amg_blocks_alloc(amg, k));
  }
  coal_amg_level *L0 = &amg->lev[0];
  coal_bvec B = R, X = Z;
  if (!tr) {
    COAL_CALL(coal_amg_copy_in(amg, R, L0->blk[AMG_B]));
    B = L0->view[AMG_B];
  }
  if (!tz) X = L0->view[AMG_X];
  COAL_CALL(coal_amg_cycle_run(amg, B, X, k));
  if (!tz) COAL_CALL(coal_amg_copy_out(amg, L0->blk[AMG_X], Z));
  return COAL_SUCCESS;
}

coal_status coal_amg_pc_setup(coal_mat A, coal_amg *amg, uint64_t *state) {
  if (!*amg) COAL_CALL(coal_amg_create(A, amg));
  COAL_CALL(coal_amg_resetup(*amg)); /* a full setup unless coal_amg_set_reuse */
  *state = A->state;
  return COAL_SUCCESS;
}

coal_status coal_amg_pc_apply(void *amg, coal_bvec R, coal_bvec Z) {
  return coal_amg_apply((coal_amg)amg, R, Z);
}

coal_status coal_amg_get_info(coal_amg amg, coal_amg_info *info) {
  if (!amg) return COAL_ERR_ARG;
  COAL_CHECK(amg->ctx, info, COAL_ERR_ARG, "NULL info");
  COAL_CHECK(amg->ctx, amg->setup_done, COAL_ERR_STATE, "no AMG setup has completed");
  *info = amg->info;
  return COAL_SUCCESS;
}
