/* Numeric-only re-setup of the smoothed-aggregation hierarchy (coal_amg_resetup): after new
 * values of A on the same pattern, every level's values are recomputed on the structure of the
 * last full setup, which coal_amg_set_reuse kept. Per level l, in order (level l+1's matrix is
 * level l's last result):
 *   1. D^-1 = 1/diag(A_l); a non-positive diagonal entry is the setup's error;
 *   2. A_F's values: the filter over the kept strong graph (the pattern of A_F does not change;
 *      the entries that are no longer strong are not re-tested), the weak entries lumped against
 *      the kept near-nullspace vector b, so A_F b = A b still holds;
 *   3. rho(D^-1 A_l) by the setup's Lanczos steps;
 *   4. P's values: the numeric pass of the kept product A_F T into P, then the setup's in-place
 *      smoothing P = T - omega D^-1 (A_F T), omega = 4 / (3 rho); R = P^T's values (the
 *      backend's transpose_values; the host transposes again and copies the values);
 *   5. A_{l+1}'s values: the numeric pass of the kept product P^T A P;
 *   6. the smoother's diagonal (l1 or 1/a_ii), rho of a coarsest level that is smoothed, and the
 *      dense factor of a coarsest level that is solved (into its buffers: same size).
 * Memory traffic per level: two passes over A_l (diagonal, filter), the Lanczos products, the
 * two numeric products and a pass over P and R; none of the strength test, MIS-2, aggregation,
 * T or the symbolic products. Nothing of O(n) crosses the bus on a GPU except an fp32 A's
 * conversion into its fp64 copy (on the host) and, for a coarse product run by TileSpGEMM
 * (small levels), that level's operands. */
#include "amg_impl.h"

#include <string.h>

void coal_amg_reuse_free(coal_amg amg) {
  for (int l = 0; l < COAL_AMG_MAX_LEVELS; l++) {
    coal_amg_level *L = &amg->lev[l];
    coal_spgemm_destroy(&L->smooth_prod);
    coal_spgemm_destroy(&L->galerkin_prod);
    coal_mat_destroy(&L->AF);
    coal_mat_destroy(&L->T);
    coal_amg_release(amg, L->srp);
    coal_amg_release(amg, L->sci);
    coal_amg_release(amg, L->agg);
    coal_amg_release(amg, L->b);
    L->srp = L->sci = L->agg = NULL, L->b = NULL;
  }
}

size_t coal_amg_reuse_bytes(const coal_amg amg) {
  size_t s = 0;
  for (int l = 0; l + 1 < amg->nlevels; l++) {
    const coal_amg_level *L = &amg->lev[l];
    if (!L->AF) continue;
    const size_t n = (size_t)L->A->nrows, m = (size_t)L->AF->nnz - n;
    s += (sizeof(int32_t) + sizeof(double)) * (size_t)L->AF->nnz + sizeof(int32_t) * (n + 1);
    s += (sizeof(int32_t) + sizeof(double)) * n + sizeof(int32_t) * (n + 1); /* T */
    s += sizeof(int32_t) * (n + 1 + m) + sizeof(int32_t) * n + sizeof(double) * n;
  }
  return s;
}

/* R's values from P's (same transposed pattern). */
static coal_status restriction_values(coal_amg amg, coal_amg_level *L) {
  const coal_backend_ops *be = coal_backend(amg->ctx);
  if (be->spgemm.transpose_values) return be->spgemm.transpose_values(L->P, L->R);
  coal_mat Rt = NULL;
  COAL_CALL(coal_mat_transpose(L->P, &Rt));
  coal_status st = coal_mat_host(L->R);
  if (!st) {
    memcpy(L->R->values, Rt->values, sizeof(double) * (size_t)Rt->nnz);
    coal_mat_invalidate(L->R);
  }
  coal_mat_destroy(&Rt);
  return st;
}

/* An fp32 A's fp64 copy (level 0) takes A's new values: converted on the host. */
static coal_status refresh_a64(coal_amg amg) {
  coal_mat A = amg->A, A64 = amg->A64;
  COAL_CALL(coal_mat_host(A));
  COAL_CALL(coal_mat_host(A64));
  const float *s = (const float *)A->values;
  double *d = (double *)A64->values;
  for (int64_t p = 0; p < A->nnz; p++) d[p] = (double)s[p];
  coal_mat_invalidate(A64);
  return COAL_SUCCESS;
}

static coal_status level_resetup(coal_amg amg, int l, double *scratch, double *jd, double *t) {
  coal_ctx ctx = amg->ctx;
  const coal_backend_ops *be = coal_backend(ctx);
  const coal_amg_ops *ops = &be->amg;
  coal_amg_level *L = &amg->lev[l];
  coal_mat A = L->A;
  const int32_t n = A->nrows;
  const int last = l + 1 == amg->nlevels;
  const int32_t *arp = NULL, *aci = NULL;
  const double *av = NULL;
  int64_t bad = -1;
  COAL_CALL(coal_amg_level_csr(A, &arp, &aci, &av));
  COAL_CALL(ops->dinv(ctx, n, arp, aci, av, 0, jd, &bad));
  if (bad >= 0) return coal_amg_bad_diagonal(amg, l, jd, bad);
  coal_amg_phase_add(amg, COAL_AMG_PHASE_STRENGTH, t);
  if (!last) {
    const int32_t *frp = NULL, *fci = NULL, *prp = NULL, *pci = NULL, *trp = NULL, *tci = NULL;
    void *fv = NULL, *pv = NULL, *tv = NULL;
    COAL_CALL(be->mat.csr(L->AF, &frp, &fci, &fv));
    COAL_CALL(ops->filter(ctx, n, arp, aci, av, L->b, L->srp, L->sci, (int32_t *)frp,
                          (int32_t *)fci, (double *)fv));
    be->mat.values_changed(L->AF);
    coal_amg_phase_add(amg, COAL_AMG_PHASE_STRENGTH, t);
    COAL_CALL(coal_amg_lanczos_rho(amg, A, jd, amg->lanczos_steps, scratch, &L->rho));
    coal_amg_phase_add(amg, COAL_AMG_PHASE_RHO, t);
    COAL_CALL(coal_spgemm_numeric(L->smooth_prod)); /* P = A_F T */
    COAL_CALL(be->mat.csr(L->P, &prp, &pci, &pv));
    COAL_CALL(be->mat.csr(L->T, &trp, &tci, &tv));
    COAL_CALL(ops->smooth(ctx, n, prp, pci, (double *)pv, jd, L->agg, (const double *)tv,
                          4.0 / (3.0 * L->rho)));
    be->mat.values_changed(L->P);
    COAL_CALL(restriction_values(amg, L));
    coal_amg_phase_add(amg, COAL_AMG_PHASE_SMOOTH, t);
    COAL_CALL(coal_spgemm_numeric(L->galerkin_prod)); /* A_{l+1} = P^T A P */
    coal_amg_phase_add(amg, COAL_AMG_PHASE_GALERKIN, t);
  }
  if (last && amg->direct) return COAL_SUCCESS; /* the dense factor, after the loop */
  if (amg->smoother == COAL_AMG_CHEBYSHEV) {
    if (last) {
      COAL_CALL(coal_amg_lanczos_rho(amg, A, jd, amg->lanczos_steps, scratch, &L->rho));
      coal_amg_phase_add(amg, COAL_AMG_PHASE_RHO, t);
    }
    if (jd != L->dinv) /* L->dinv = jd */
      COAL_CALL(be->blas.vec_axpbypcz(ctx, n, 1.0, jd, 0.0, NULL, 0.0, L->dinv, 0.0));
  } else {
    COAL_CALL(ops->dinv(ctx, n, arp, aci, av, 1, L->dinv, &bad));
  }
  coal_amg_phase_add(amg, COAL_AMG_PHASE_OTHER, t);
  return COAL_SUCCESS;
}

coal_status coal_amg_resetup(coal_amg amg) {
  if (!amg) return COAL_ERR_ARG;
  if (!amg->reuse || !amg->setup_done || (amg->nlevels > 1 && !amg->lev[0].galerkin_prod))
    return coal_amg_setup(amg);
  memset(amg->info.phase_seconds, 0, sizeof amg->info.phase_seconds);
  const double t0 = coal_amg_tick(amg);
  double t = t0, *scratch = NULL;
  coal_status st = coal_amg_check_matrix(amg);
  if (st) goto fail;
  coal_amg_phase_add(amg, COAL_AMG_PHASE_CHECK, &t);
  if (amg->A64) COAL_CALL_GOTO(st, refresh_a64(amg), fail);
  const int64_t n = amg->lev[0].A->nrows;
  /* Lanczos's 5 vectors and D^-1 (of the largest level: every level fits) */
  COAL_CALL_GOTO(st, coal_amg_alloc(amg, sizeof(double) * 6 * (size_t)n, (void **)&scratch), fail);
  for (int l = 0; l < amg->nlevels; l++) {
    coal_amg_level *L = &amg->lev[l];
    double *jd = amg->smoother == COAL_AMG_CHEBYSHEV && L->dinv ? L->dinv : scratch + 5 * n;
    COAL_CALL_GOTO(st, level_resetup(amg, l, scratch, jd, &t), fail);
  }
  coal_amg_release(amg, scratch), scratch = NULL;
  if (amg->direct) {
    COAL_CALL_GOTO(st, coal_amg_coarse_factor(amg, amg->lev[amg->nlevels - 1].A), fail);
    coal_amg_phase_add(amg, COAL_AMG_PHASE_COARSE, &t);
  }
  coal_amg_fill_info(amg);
  amg->info.numeric_only = 1;
  amg->info.reuse_bytes = coal_amg_reuse_bytes(amg);
  amg->info.setup_seconds = coal_amg_tick(amg) - t0;
  amg->a_state = amg->A->state;
  return COAL_SUCCESS;
fail:
  coal_amg_release(amg, scratch);
  /* the hierarchy is half old, half new: gone, as after a failed setup */
  amg->setup_done = 0;
  coal_amg_hierarchy_free(amg);
  return st;
}
