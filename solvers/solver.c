/* Solver object: options, setup (symmetry check, Jacobi), the solve driver with the true
 * residuals, results, and the helpers the methods share. */
#include "solver_impl.h"

#include <math.h>
#include <string.h>

static const char *const method_names[] = {"cg", "blockcg"};
static const char *const pc_names[] = {"none", "jacobi", "user", "amg"};
static const char *const reason_names[] = {"converged", "iteration-limit", "breakdown",
                                           "not-spd",   "diverged",        "stopped",
                                           "not-run",   "stagnated"};

const char *coal_method_name(coal_method m) {
  return (unsigned)m < 2 ? method_names[m] : "unknown";
}
const char *coal_pc_name(coal_pc_type p) { return (unsigned)p < 4 ? pc_names[p] : "unknown"; }
const char *coal_solve_reason_name(coal_solve_reason r) {
  return (unsigned)r < 8 ? reason_names[r] : "unknown";
}
coal_status coal_method_parse(const char *name, coal_method *m) {
  int i = name && m ? coal_name_lookup(method_names, 2, name) : -1;
  if (i < 0) return COAL_ERR_ARG;
  *m = (coal_method)i;
  return COAL_SUCCESS;
}
coal_status coal_pc_parse(const char *name, coal_pc_type *p) {
  int i = name && p ? coal_name_lookup(pc_names, 4, name) : -1;
  if (i < 0 || i == COAL_PC_USER) return COAL_ERR_ARG; /* "user" is not parsed */
  *p = (coal_pc_type)i;
  return COAL_SUCCESS;
}

coal_status coal_solver_alloc(coal_solver S, size_t count, double **p) {
  return coal_backend(S->ctx)->mem.alloc(S->ctx, count * sizeof(double), (void **)p);
}
void coal_solver_release(coal_solver S, double *p) {
  if (p) coal_backend(S->ctx)->mem.release(S->ctx, p);
}

coal_status coal_solver_create(coal_mat A, coal_solver *out) {
  if (!A) return COAL_ERR_ARG;
  COAL_CHECK(A->ctx, out, COAL_ERR_ARG, "NULL output");
  *out = NULL;
  coal_solver S;
  COAL_CALL(coal_calloc(A->ctx, sizeof *S, (void **)&S));
  S->A = A, S->ctx = A->ctx, S->n = A->nrows;
  S->method = COAL_METHOD_BLOCKCG, S->pc = COAL_PC_NONE;
  S->rtol = 1e-8, S->atol = 0.0, S->maxit = 10000, S->check_every = COAL_CG_CHECK_EVERY;
  *out = S;
  return COAL_SUCCESS;
}

coal_status coal_solver_destroy(coal_solver *S) {
  if (!S || !*S) return COAL_SUCCESS;
  coal_solver_release(*S, (*S)->dinv);
  coal_amg_destroy(&(*S)->amg);
  coal_bvec_destroy(&(*S)->view[0]);
  coal_bvec_destroy(&(*S)->view[1]);
  coal_free((*S)->info);
  coal_free((*S)->mon_norms);
  coal_free(*S);
  *S = NULL;
  return COAL_SUCCESS;
}

coal_status coal_solver_set_method(coal_solver S, coal_method m) {
  if (!S) return COAL_ERR_ARG;
  COAL_CHECK(S->ctx, m == COAL_METHOD_CG || m == COAL_METHOD_BLOCKCG, COAL_ERR_ARG,
             "unknown method %d", (int)m);
  S->method = m;
  return COAL_SUCCESS;
}

coal_status coal_solver_set_tolerances(coal_solver S, double rtol, double atol, int maxit) {
  if (!S) return COAL_ERR_ARG;
  COAL_CHECK(S->ctx, rtol >= 0 && atol >= 0 && (rtol > 0 || atol > 0) && maxit >= 0, COAL_ERR_ARG,
             "bad tolerances rtol %g atol %g maxit %d", rtol, atol, maxit);
  S->rtol = rtol, S->atol = atol, S->maxit = maxit;
  return COAL_SUCCESS;
}

coal_status coal_solver_set_pc(coal_solver S, coal_pc_type pc) {
  if (!S) return COAL_ERR_ARG;
  COAL_CHECK(S->ctx, pc == COAL_PC_NONE || pc == COAL_PC_JACOBI || pc == COAL_PC_AMG, COAL_ERR_ARG,
             "preconditioner %d: use coal_solver_set_pc_user for a user preconditioner", (int)pc);
  if (pc != S->pc) S->setup_done = 0;
  S->pc = pc;
  return COAL_SUCCESS;
}

coal_status coal_solver_set_pc_user(coal_solver S, coal_pc_apply_fn apply, void *user) {
  if (!S) return COAL_ERR_ARG;
  COAL_CHECK(S->ctx, apply, COAL_ERR_ARG, "NULL preconditioner function");
  S->pc = COAL_PC_USER, S->pc_apply = apply, S->pc_user = user, S->setup_done = 0;
  return COAL_SUCCESS;
}

coal_status coal_solver_set_monitor(coal_solver S, coal_monitor_fn fn, void *user) {
  if (!S) return COAL_ERR_ARG;
  S->monitor = fn, S->monitor_user = user;
  return COAL_SUCCESS;
}

coal_status coal_solver_set_check_every(coal_solver S, int every) {
  if (!S) return COAL_ERR_ARG;
  COAL_CHECK(S->ctx, every >= 1, COAL_ERR_ARG, "check interval %d below 1", every);
  S->check_every = every;
  return COAL_SUCCESS;
}

/* Values equal to 1e-12 relative: files that store both triangles may round them apart. The
 * backend's mat.asymmetry reads its own copy (on a GPU: a kernel, no host round trip). */
coal_status coal_check_symmetric(coal_mat A, const char *name) {
  coal_ctx ctx = A->ctx;
  if (A->symmetric) return COAL_SUCCESS; /* known from its origin: skip the O(nnz) check */
  COAL_CHECK(ctx, A->nrows == A->ncols, COAL_ERR_NOT_SPD, "%s is not square (%d x %d)", name,
             A->nrows, A->ncols);
  int64_t i = -1, j = -1;
  COAL_CALL(coal_backend(ctx)->mat.asymmetry(A, 1e-12, &i, &j));
  COAL_CHECK(ctx, i < 0, COAL_ERR_NOT_SPD,
             "%s is not symmetric: (%lld,%lld) has no equal mirror (%lld,%lld)", name,
             (long long)i + 1, (long long)j + 1, (long long)j + 1, (long long)i + 1);
  return COAL_SUCCESS;
}

coal_status coal_jacobi_setup(coal_mat A, double **dinv) {
  coal_ctx ctx = A->ctx;
  const coal_mem_ops *mem = &coal_backend(ctx)->mem;
  int64_t n = A->nrows, bad = -1;
  *dinv = NULL;
  COAL_CHECK(ctx, A->dtype == COAL_F64 && A->nrows == A->ncols, COAL_ERR_UNSUPPORTED,
             "Jacobi needs a square fp64 matrix");
  COAL_CALL(mem->alloc(ctx, sizeof(double) * (size_t)(n > 0 ? n : 1), (void **)dinv));
  coal_status st =
      coal_backend(ctx)->blas.jacobi(A, *dinv, &bad); /* on the backend, where A lives */
  if (!st && bad >= 0) {
    double di = 0.0;
    st = mem->download(ctx, &di, *dinv + bad, sizeof(double));
    if (!st)
      st = COAL_ERROR(ctx, COAL_ERR_NOT_SPD,
                      "Jacobi: diagonal entry %lld is %g; an SPD matrix has a positive diagonal",
                      (long long)bad + 1, di);
  }
  if (st) {
    mem->release(ctx, *dinv);
    *dinv = NULL;
  }
  return st;
}

coal_status coal_solver_setup(coal_solver S) {
  if (!S) return COAL_ERR_ARG;
  coal_mat A = S->A;
  COAL_CHECK(S->ctx, A->nrows == A->ncols, COAL_ERR_ARG, "A is %d x %d: CG needs a square matrix",
             A->nrows, A->ncols);
  COAL_CHECK(S->ctx, A->dtype == COAL_F64, COAL_ERR_UNSUPPORTED,
             "the solvers run in fp64; convert A with coal_mat_convert");
  COAL_CALL(coal_check_symmetric(A, "A"));
  coal_solver_release(S, S->dinv);
  S->dinv = NULL;
  if (S->pc == COAL_PC_JACOBI) COAL_CALL(coal_jacobi_setup(A, &S->dinv));
  if (S->pc == COAL_PC_AMG) COAL_CALL(coal_amg_pc_setup(A, &S->amg, &S->amg_state));
  COAL_CALL(coal_backend(S->ctx)->mat.prepare(A));
  S->setup_done = 1;
  return COAL_SUCCESS;
}

coal_status coal_solver_views(coal_solver S, const double *X, double *Y, int64_t m, coal_bvec *Xv,
                              coal_bvec *Yv) {
  double *d[2] = {(double *)X, Y};
  for (int i = 0; i < 2; i++) {
    if (!S->view[i])
      COAL_CALL(coal_bvec_view(S->ctx, S->n, m, COAL_F64, COAL_ROW_MAJOR, m, d[i], &S->view[i]));
    S->view[i]->data = d[i], S->view[i]->k = m, S->view[i]->ld = m > 0 ? m : 1;
  }
  *Xv = S->view[0], *Yv = S->view[1];
  return COAL_SUCCESS;
}

coal_status coal_solver_apply_pc(coal_solver S, int64_t m, const double *R, double *Z,
                                 double *nrm2) {
  const coal_blas_ops *b = &coal_backend(S->ctx)->blas;
  if (!coal_pc_is_operator(S->pc)) return b->dscale(S->ctx, S->n, m, S->dinv, R, m, Z, m, nrm2);
  if (nrm2) COAL_CALL(b->dscale(S->ctx, S->n, m, NULL, R, m, NULL, m, nrm2));
  coal_bvec Rv, Zv;
  COAL_CALL(coal_solver_views(S, R, Z, m, &Rv, &Zv));
  if (S->pc == COAL_PC_AMG) return coal_amg_apply(S->amg, Rv, Zv); /* its message is recorded */
  coal_status st = S->pc_apply(S->pc_user, Rv, Zv);
  if (st)
    return COAL_ERROR(S->ctx, st, "the user preconditioner failed: %s", coal_status_string(st));
  return COAL_SUCCESS;
}

int coal_solver_monitor(coal_solver S, int iteration) {
  if (!S->monitor) return 0;
  if (!S->sub.map) return S->monitor(S->monitor_user, iteration, S->k, S->mon_norms) != 0;
  /* a replacement run on some columns: the monitor still sees all of them */
  for (int64_t a = 0; a < S->k; a++) S->sub.norms[S->sub.map[a]] = S->mon_norms[a];
  return S->monitor(S->monitor_user, iteration + S->sub.offset, S->sub.k, S->sub.norms) != 0;
}

/* R = B (row-major copy); with A: R = B - A X, the true residual that decides the verdict,
 * summed in double-double (resid_dd) so that it is exact to one rounding per entry even at
 * tolerances near the rounding level of the fp64 product. Column norms into nrm (host, k). */
static coal_status residual_norms(coal_solver S, coal_bvec B, coal_bvec X, double *R, int with_ax,
                                  double *nrm) {
  coal_ctx ctx = S->ctx;
  int64_t k = S->k;
  const coal_blas_ops *b = &coal_backend(ctx)->blas;
  if (with_ax)
    COAL_CALL(b->resid_dd(S->A, k, (const double *)B->data, B->layout, B->ld,
                          (const double *)X->data, X->layout, X->ld, R));
  else
    COAL_CALL(b->copy_cols(ctx, S->n, k, (const double *)B->data, B->layout, B->ld, NULL, R,
                           COAL_ROW_MAJOR, k, NULL));
  COAL_CALL(b->dscale(ctx, S->n, k, NULL, R, k, NULL, k, nrm));
  for (int64_t j = 0; j < k; j++) nrm[j] = sqrt(nrm[j]);
  return COAL_SUCCESS;
}

static coal_status check_block(coal_solver S, coal_bvec V, const char *what) {
  COAL_CHECK(S->ctx, V, COAL_ERR_ARG, "NULL %s", what);
  COAL_CHECK(S->ctx, V->ctx == S->ctx, COAL_ERR_ARG, "%s belongs to another context", what);
  COAL_CHECK(S->ctx, V->dtype == COAL_F64, COAL_ERR_UNSUPPORTED, "%s must be fp64", what);
  COAL_CHECK(S->ctx, V->n == S->n, COAL_ERR_ARG, "%s has %lld rows, A has %lld", what,
             (long long)V->n, (long long)S->n);
  return COAL_SUCCESS;
}

static coal_status finish_handoffs(coal_solver S, coal_bvec B, coal_bvec X, double *nrm);

/* Runs the method on all S->k columns of B / X (CG finishing what Block-CG hands off) and sets
 * every column's true residual. */
static coal_status run_and_check(coal_solver S, coal_bvec B, coal_bvec X, double *nrm) {
  double *R = NULL;
  coal_status st = S->method == COAL_METHOD_CG || S->k == 1 ? coal_cg_solve(S, B, X)
                                                            : coal_blockcg_solve(S, B, X);
  if (!st) st = finish_handoffs(S, B, X, nrm);
  if (!st) st = coal_solver_alloc(S, (size_t)S->n * (size_t)S->k, &R);
  if (!st) st = residual_norms(S, B, X, R, 1, nrm);
  for (int64_t j = 0; !st && j < S->k; j++) S->info[j].resnorm = nrm[j];
  coal_solver_release(S, R);
  return st;
}

static double column_tol(const coal_solver S, const coal_solve_info *in) {
  return fmax(S->rtol * in->rhsnorm, S->atol);
}

/* One residual replacement: the m columns cols[] (reason converged, true residual above the
 * tolerance) are solved again from their current X, so the method starts from R = B - A X
 * and (Block-CG) a fresh search block. Their iterations and replacements add up; the
 * iteration limit holds for each column's total. The monitor sees all columns throughout. */
static coal_status replace_columns(coal_solver S, coal_bvec B, coal_bvec X, const int32_t *cols,
                                   int64_t m, int replacement, double *nrm) {
  coal_ctx ctx = S->ctx;
  const coal_blas_ops *b = &coal_backend(ctx)->blas;
  int64_t k = S->k, n = S->n;
  int used = 0;
  for (int64_t a = 0; a < m; a++)
    used = S->info[cols[a]].iterations > used ? S->info[cols[a]].iterations : used;
  double *Bd = NULL, *Xd = NULL;
  coal_bvec Bs = NULL, Xs = NULL;
  coal_solve_info *full = S->info, *sub = NULL;
  double *full_norms = S->mon_norms, *sub_norms = NULL;
  int full_its = S->iterations, maxit = S->maxit;
  coal_status st = coal_solver_alloc(S, (size_t)n * (size_t)m, &Bd);
  if (!st) st = coal_solver_alloc(S, (size_t)n * (size_t)m, &Xd);
  if (!st) st = coal_calloc(ctx, sizeof *sub * (size_t)m, (void **)&sub);
  if (!st) st = coal_calloc(ctx, sizeof(double) * (size_t)m, (void **)&sub_norms);
  if (!st) st = coal_bvec_view(ctx, n, m, COAL_F64, COAL_ROW_MAJOR, m, Bd, &Bs);
  if (!st) st = coal_bvec_view(ctx, n, m, COAL_F64, COAL_ROW_MAJOR, m, Xd, &Xs);
  if (!st)
    st = b->copy_cols(ctx, n, m, (const double *)B->data, B->layout, B->ld, cols, Bd,
                      COAL_ROW_MAJOR, m, NULL);
  if (!st)
    st = b->copy_cols(ctx, n, m, (const double *)X->data, X->layout, X->ld, cols, Xd,
                      COAL_ROW_MAJOR, m, NULL);
  if (!st) {
    for (int64_t a = 0; a < m; a++) {
      sub[a].reason = COAL_SOLVE_NOT_RUN, sub[a].rhsnorm = full[cols[a]].rhsnorm;
      sub_norms[a] = full_norms[cols[a]];
    }
    S->info = sub, S->mon_norms = sub_norms, S->k = m, S->iterations = 0;
    S->maxit = maxit - used;
    /* the monitor's iteration numbers go on from the column's (CG) or the block's count */
    int block = S->method == COAL_METHOD_BLOCKCG && k > 1;
    S->sub.map = cols, S->sub.norms = full_norms, S->sub.k = k;
    S->sub.offset = block ? full_its : used;
    st = run_and_check(S, Bs, Xs, nrm);
    S->sub.map = NULL;
    S->info = full, S->mon_norms = full_norms, S->k = k, S->maxit = maxit;
    S->iterations += full_its;
  }
  if (!st)
    st = b->copy_cols(ctx, n, m, Xd, COAL_ROW_MAJOR, m, NULL, (double *)X->data, X->layout, X->ld,
                      cols);
  for (int64_t a = 0; !st && a < m; a++) {
    coal_solve_info *in = &full[cols[a]];
    in->reason = sub[a].reason, in->iterations += sub[a].iterations;
    in->rec_resnorm = sub[a].rec_resnorm, in->resnorm = sub[a].resnorm;
    in->replacements += replacement;
  }
  coal_bvec_destroy(&Bs);
  coal_bvec_destroy(&Xs);
  coal_solver_release(S, Bd);
  coal_solver_release(S, Xd);
  coal_free(sub);
  coal_free(sub_norms);
  return st;
}

/* The verdict is the true residual. A column the method calls converged whose true residual
 * misses its tolerance gets a residual replacement (replace_columns), at most
 * COAL_MAX_REPLACEMENTS times; it ends `stagnated` when a replacement does not at least halve
 * its true residual, or after the last one still misses. A column with no iterations left ends
 * at the iteration limit. A normal solve pays only the one true residual of every column. */
static coal_status settle_verdicts(coal_solver S, coal_bvec B, coal_bvec X, double *nrm) {
  int64_t k = S->k;
  int32_t *cols = NULL;
  double *prev = NULL;
  coal_status st =
      coal_malloc(S->ctx, (sizeof(int32_t) + sizeof(double)) * (size_t)k, (void **)&prev);
  if (st) return st;
  cols = (int32_t *)(prev + k);
  for (int64_t j = 0; j < k; j++) prev[j] = S->info[j].resnorm;
  for (int rep = 0; !st; rep++) {
    int64_t m = 0;
    for (int64_t j = 0; j < k; j++) {
      coal_solve_info *in = &S->info[j];
      if (in->reason != COAL_SOLVE_CONVERGED || in->resnorm <= column_tol(S, in)) continue;
      if (rep == COAL_MAX_REPLACEMENTS || (rep > 0 && !(in->resnorm <= 0.5 * prev[j])))
        in->reason = COAL_SOLVE_STAGNATED;
      else if (in->iterations >= S->maxit)
        in->reason = COAL_SOLVE_ITERATION_LIMIT;
      else
        cols[m++] = (int32_t)j, prev[j] = in->resnorm;
    }
    if (m == 0) break;
    /* once Block-CG's search block has collapsed on this problem, replacements run CG */
    coal_method method = S->method;
    if (S->handoffs) S->method = COAL_METHOD_CG;
    st = replace_columns(S, B, X, cols, m, 1, nrm);
    S->method = method;
  }
  coal_free(prev);
  return st;
}

/* Columns that Block-CG handed off after a collapse of its search block go on with CG from
 * their current X; their iterations add up and the limit holds for the total. */
static coal_status finish_handoffs(coal_solver S, coal_bvec B, coal_bvec X, double *nrm) {
  int64_t m = 0;
  int32_t *cols = NULL;
  for (int64_t j = 0; j < S->k; j++) m += S->info[j].reason == COAL_SOLVE_HANDOFF;
  if (m == 0) return COAL_SUCCESS;
  COAL_CALL(coal_malloc(S->ctx, sizeof(int32_t) * (size_t)m, (void **)&cols));
  m = 0;
  for (int64_t j = 0; j < S->k; j++)
    if (S->info[j].reason == COAL_SOLVE_HANDOFF) {
      if (S->info[j].iterations >= S->maxit)
        S->info[j].reason = COAL_SOLVE_ITERATION_LIMIT;
      else
        cols[m++] = (int32_t)j;
    }
  coal_status st = COAL_SUCCESS;
  if (m > 0) {
    coal_method method = S->method;
    S->method = COAL_METHOD_CG;
    st = replace_columns(S, B, X, cols, m, 0, nrm);
    S->method = method;
  }
  coal_free(cols);
  return st;
}

coal_status coal_solver_solve(coal_solver S, coal_bvec B, coal_bvec X) {
  if (!S) return COAL_ERR_ARG;
  COAL_CALL(check_block(S, B, "B"));
  COAL_CALL(check_block(S, X, "X"));
  COAL_CHECK(S->ctx, B->k == X->k, COAL_ERR_ARG, "B has %lld columns, X has %lld", (long long)B->k,
             (long long)X->k);
  COAL_CHECK(S->ctx, B->data != X->data, COAL_ERR_ARG, "B and X must not share storage");
  if (!S->setup_done || (S->pc == COAL_PC_AMG && S->amg_state != S->A->state))
    COAL_CALL(coal_solver_setup(S));
  int64_t k = B->k;
  if (S->pc == COAL_PC_AMG) /* the cycle's blocks for the widest application: none in the loop */
    COAL_CALL(coal_amg_reserve(S->amg, S->method == COAL_METHOD_CG ? 1 : k));
  coal_free(S->info);
  coal_free(S->mon_norms);
  S->info = NULL, S->mon_norms = NULL, S->k = k, S->iterations = 0, S->reorth = 0;
  S->handoffs = 0;
  COAL_CALL(coal_calloc(S->ctx, sizeof(coal_solve_info) * (size_t)(k + 1), (void **)&S->info));
  COAL_CALL(coal_calloc(S->ctx, sizeof(double) * (size_t)(k + 1), (void **)&S->mon_norms));
  for (int64_t j = 0; j < k; j++) S->info[j].reason = COAL_SOLVE_NOT_RUN;
  if (k == 0) return COAL_SUCCESS;

  double *R = NULL, *nrm = NULL;
  coal_status st = coal_solver_alloc(S, (size_t)S->n * (size_t)k, &R);
  if (!st) st = coal_malloc(S->ctx, sizeof(double) * (size_t)k, (void **)&nrm);
  /* ||b_j||; a zero right-hand side has the solution 0: set it so that r_j = 0 exactly */
  if (!st) st = residual_norms(S, B, X, R, 0, nrm);
  for (int64_t j = 0; !st && j < k; j++) {
    S->info[j].rhsnorm = nrm[j];
    if (nrm[j] == 0.0) {
      int32_t c = (int32_t)j;
      st = coal_backend(S->ctx)->blas.copy_cols(S->ctx, S->n, 1, R, COAL_ROW_MAJOR, k, &c,
                                                (double *)X->data, X->layout, X->ld, &c);
    }
  }
  /* the method allocates its own workspace: give R back first (it is as large as a block) */
  coal_solver_release(S, R);
  if (!st) st = run_and_check(S, B, X, nrm);
  if (!st) st = settle_verdicts(S, B, X, nrm);
  coal_free(nrm);
  return st;
}

coal_status coal_solver_get_info(coal_solver S, int64_t j, coal_solve_info *info) {
  if (!S) return COAL_ERR_ARG;
  COAL_CHECK(S->ctx, info && S->info && j >= 0 && j < S->k, COAL_ERR_ARG,
             "no result for column %lld (last solve had %lld columns)", (long long)j,
             (long long)S->k);
  *info = S->info[j];
  return COAL_SUCCESS;
}

int coal_solver_iterations(coal_solver S) { return S ? S->iterations : 0; }
