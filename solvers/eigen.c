/* Eigensolver object: options, setup (checks of A and M, Jacobi), results. The iteration is
 * in solvers/lobpcg.c. */
#include "eigen_impl.h"
#include "solver_impl.h"

#include <math.h>
#include <string.h>

static const char *const which_names[] = {"smallest", "largest"};

const char *coal_eig_which_name(coal_eig_which w) {
  return (unsigned)w < 2 ? which_names[w] : "unknown";
}

coal_status coal_eig_which_parse(const char *name, coal_eig_which *w) {
  int i = name && w ? coal_name_lookup(which_names, 2, name) : -1;
  if (i < 0) return COAL_ERR_ARG;
  *w = (coal_eig_which)i;
  return COAL_SUCCESS;
}

static void release_results(coal_eigen E) {
  if (E->vectors) coal_backend(E->ctx)->mem.release(E->ctx, E->vectors);
  coal_free(E->info);
  coal_free(E->history);
  E->vectors = NULL, E->info = NULL, E->history = NULL;
  E->hist_len = E->hist_cap = 0, E->solved = 0;
}

coal_status coal_eigen_create(coal_mat A, coal_mat M, coal_eigen *out) {
  if (!A) return COAL_ERR_ARG;
  coal_ctx ctx = A->ctx;
  COAL_CHECK(ctx, out, COAL_ERR_ARG, "NULL output");
  *out = NULL;
  COAL_CHECK(ctx, !M || M->ctx == ctx, COAL_ERR_ARG, "M belongs to another context than A");
  coal_eigen E;
  COAL_CALL(coal_calloc(ctx, sizeof *E, (void **)&E));
  E->A = A, E->M = M, E->ctx = ctx, E->n = A->nrows;
  E->nev = 1, E->which = COAL_EIG_SMALLEST, E->tol = 1e-6, E->maxit = 1000;
  E->pc = COAL_PC_NONE, E->seed = 1;
  *out = E;
  return COAL_SUCCESS;
}

coal_status coal_eigen_destroy(coal_eigen *E) {
  if (!E || !*E) return COAL_SUCCESS;
  release_results(*E);
  if ((*E)->dinv) coal_backend((*E)->ctx)->mem.release((*E)->ctx, (*E)->dinv);
  coal_amg_destroy(&(*E)->amg);
  coal_free(*E);
  *E = NULL;
  return COAL_SUCCESS;
}

coal_status coal_eigen_set_nev(coal_eigen E, int nev, int blocksize) {
  if (!E) return COAL_ERR_ARG;
  COAL_CHECK(E->ctx, nev >= 1 && nev <= E->n, COAL_ERR_ARG, "nev %d: need 1 <= nev <= n = %lld",
             nev, (long long)E->n);
  COAL_CHECK(E->ctx, blocksize == 0 || (blocksize >= nev && blocksize <= E->n), COAL_ERR_ARG,
             "block size %d: need 0 (automatic) or nev = %d <= block size <= n = %lld", blocksize,
             nev, (long long)E->n);
  E->nev = nev, E->bs_user = blocksize;
  return COAL_SUCCESS;
}

coal_status coal_eigen_set_which(coal_eigen E, coal_eig_which w) {
  if (!E) return COAL_ERR_ARG;
  COAL_CHECK(E->ctx, w == COAL_EIG_SMALLEST || w == COAL_EIG_LARGEST, COAL_ERR_ARG,
             "unknown eigenvalue selection %d", (int)w);
  E->which = w;
  return COAL_SUCCESS;
}

coal_status coal_eigen_set_tolerances(coal_eigen E, double tol, int maxit) {
  if (!E) return COAL_ERR_ARG;
  COAL_CHECK(E->ctx, tol > 0 && isfinite(tol) && maxit >= 0, COAL_ERR_ARG,
             "bad tolerances tol %g maxit %d", tol, maxit);
  E->tol = tol, E->maxit = maxit;
  return COAL_SUCCESS;
}

coal_status coal_eigen_set_pc(coal_eigen E, coal_pc_type pc) {
  if (!E) return COAL_ERR_ARG;
  COAL_CHECK(E->ctx, pc == COAL_PC_NONE || pc == COAL_PC_JACOBI || pc == COAL_PC_AMG, COAL_ERR_ARG,
             "preconditioner %d: use coal_eigen_set_pc_user for a user preconditioner", (int)pc);
  if (pc != E->pc) E->setup_done = 0;
  E->pc = pc;
  return COAL_SUCCESS;
}

coal_status coal_eigen_set_pc_user(coal_eigen E, coal_pc_apply_fn apply, void *user) {
  if (!E) return COAL_ERR_ARG;
  COAL_CHECK(E->ctx, apply, COAL_ERR_ARG, "NULL preconditioner function");
  E->pc = COAL_PC_USER, E->pc_apply = apply, E->pc_user = user, E->setup_done = 0;
  return COAL_SUCCESS;
}

coal_status coal_eigen_set_initial(coal_eigen E, coal_bvec X0) {
  if (!E) return COAL_ERR_ARG;
  if (X0) {
    COAL_CHECK(E->ctx, X0->ctx == E->ctx, COAL_ERR_ARG, "X0 belongs to another context");
    COAL_CHECK(E->ctx, X0->dtype == COAL_F64, COAL_ERR_UNSUPPORTED, "X0 must be fp64");
    COAL_CHECK(E->ctx, X0->n == E->n, COAL_ERR_ARG, "X0 has %lld rows, A has %lld",
               (long long)X0->n, (long long)E->n);
  }
  E->X0 = X0;
  return COAL_SUCCESS;
}

coal_status coal_eigen_set_seed(coal_eigen E, uint64_t seed) {
  if (!E) return COAL_ERR_ARG;
  E->seed = seed;
  return COAL_SUCCESS;
}

coal_status coal_eigen_set_history(coal_eigen E, int on) {
  if (!E) return COAL_ERR_ARG;
  E->history_on = on != 0;
  return COAL_SUCCESS;
}

/* ||B||_inf from the host CSR. */
static double norm_inf(coal_mat B) {
  const double *v = (const double *)B->values;
  double m = 0.0;
  for (int32_t i = 0; i < B->nrows; i++) {
    double s = 0.0;
    for (int32_t p = B->rowptr[i]; p < B->rowptr[i + 1]; p++) s += fabs(v[p]);
    m = fmax(m, s);
  }
  return m;
}

static coal_status check_operator(coal_eigen E, coal_mat B, const char *name) {
  COAL_CHECK(E->ctx, B->nrows == B->ncols, COAL_ERR_ARG, "%s is %d x %d: need a square matrix",
             name, B->nrows, B->ncols);
  COAL_CHECK(E->ctx, B->nrows == E->n, COAL_ERR_ARG, "%s has %d rows, A has %lld", name, B->nrows,
             (long long)E->n);
  COAL_CHECK(E->ctx, B->dtype == COAL_F64, COAL_ERR_UNSUPPORTED,
             "the eigensolver runs in fp64; convert %s with coal_mat_convert", name);
  COAL_CALL(coal_check_symmetric(B, name));
  return coal_backend(E->ctx)->mat.prepare(B);
}

/* Checks A and M and builds the preconditioner. M's positive definiteness shows when the
 * first block is M-orthonormalised (lobpcg.c). */
static coal_status eigen_setup(coal_eigen E) {
  COAL_CALL(check_operator(E, E->A, "A"));
  if (E->M) {
    COAL_CALL(check_operator(E, E->M, "M"));
    /* a positive definite M has a positive diagonal: a cheap early answer */
    COAL_CALL(coal_mat_host(E->M));
    const double *v = (const double *)E->M->values;
    for (int32_t i = 0; i < E->M->nrows; i++) {
      double d = 0.0;
      for (int32_t p = E->M->rowptr[i]; p < E->M->rowptr[i + 1]; p++)
        if (E->M->colind[p] == i) d = v[p];
      COAL_CHECK(E->ctx, d > 0.0 && isfinite(d), COAL_ERR_NOT_SPD,
                 "M is not positive definite: diagonal entry %d is %g", i + 1, d);
    }
  }
  COAL_CALL(coal_mat_host(E->A));
  E->anorm = norm_inf(E->A);
  E->mnorm = E->M ? norm_inf(E->M) : 1.0;
  if (E->dinv) coal_backend(E->ctx)->mem.release(E->ctx, E->dinv);
  E->dinv = NULL;
  if (E->pc == COAL_PC_JACOBI) COAL_CALL(coal_jacobi_setup(E->A, &E->dinv));
  if (E->pc == COAL_PC_AMG) COAL_CALL(coal_amg_pc_setup(E->A, &E->amg, &E->amg_state));
  E->setup_done = 1;
  return COAL_SUCCESS;
}

coal_status coal_eigen_solve(coal_eigen E) {
  if (!E) return COAL_ERR_ARG;
  COAL_CHECK(E->ctx, E->nev <= E->n, COAL_ERR_ARG, "nev %d exceeds n = %lld", E->nev,
             (long long)E->n);
  if (!E->setup_done || (E->pc == COAL_PC_AMG && E->amg_state != E->A->state))
    COAL_CALL(eigen_setup(E));
  release_results(E);
  memset(&E->stats, 0, sizeof E->stats);
  int bs = E->bs_user;
  if (bs == 0) {
    int extra = E->nev / 4 > 4 ? E->nev / 4 : 4;
    bs = E->nev + extra;
    if (bs > E->n) bs = (int)E->n;
  }
  E->bs = bs;
  if (E->pc == COAL_PC_AMG) COAL_CALL(coal_amg_reserve(E->amg, bs)); /* none in the loop */
  COAL_CALL(coal_calloc(E->ctx, sizeof(coal_eig_info) * (size_t)E->nev, (void **)&E->info));
  const double t0 = coal_now_seconds();
  coal_status st = coal_lobpcg_run(E);
  if (!st) st = coal_ctx_sync(E->ctx);
  E->stats.seconds = coal_now_seconds() - t0;
  if (st) {
    release_results(E);
    return st;
  }
  E->solved = 1;
  return COAL_SUCCESS;
}

coal_status coal_eigen_get_info(coal_eigen E, int j, coal_eig_info *info) {
  if (!E) return COAL_ERR_ARG;
  COAL_CHECK(E->ctx, E->solved, COAL_ERR_STATE, "no solve has completed");
  COAL_CHECK(E->ctx, info && j >= 0 && j < E->nev, COAL_ERR_ARG,
             "no eigenpair %d (the last solve computed %d)", j, E->nev);
  *info = E->info[j];
  return COAL_SUCCESS;
}

coal_status coal_eigen_get_vectors(coal_eigen E, coal_bvec V) {
  if (!E) return COAL_ERR_ARG;
  COAL_CHECK(E->ctx, E->solved, COAL_ERR_STATE, "no solve has completed");
  COAL_CHECK(E->ctx, V, COAL_ERR_ARG, "NULL block");
  COAL_CHECK(E->ctx, V->ctx == E->ctx, COAL_ERR_ARG, "V belongs to another context");
  COAL_CHECK(E->ctx, V->dtype == COAL_F64, COAL_ERR_UNSUPPORTED, "V must be fp64");
  COAL_CHECK(E->ctx, V->n == E->n && V->k <= E->nev, COAL_ERR_ARG,
             "V is %lld x %lld: need %lld rows and at most nev = %d columns", (long long)V->n,
             (long long)V->k, (long long)E->n, E->nev);
  return coal_backend(E->ctx)->blas.copy_cols(E->ctx, E->n, V->k, E->vectors, COAL_ROW_MAJOR,
                                              E->nev, NULL, (double *)V->data, V->layout, V->ld,
                                              NULL);
}

coal_status coal_eigen_get_stats(coal_eigen E, coal_eigen_stats *st) {
  if (!E) return COAL_ERR_ARG;
  COAL_CHECK(E->ctx, st, COAL_ERR_ARG, "NULL output");
  *st = E->stats;
  return COAL_SUCCESS;
}

coal_status coal_eigen_get_history(coal_eigen E, int *nit, int *nev, const double **res) {
  if (!E) return COAL_ERR_ARG;
  COAL_CHECK(E->ctx, nit && nev && res, COAL_ERR_ARG, "NULL output");
  *nit = E->solved ? E->hist_len : 0;
  *nev = E->nev;
  *res = E->solved ? E->history : NULL;
  return COAL_SUCCESS;
}

int coal_eigen_nconverged(coal_eigen E) {
  if (!E || !E->solved) return 0;
  int c = 0;
  for (int j = 0; j < E->nev; j++) c += E->info[j].converged != 0;
  return c;
}
