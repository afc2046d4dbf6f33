/* `coalesce bench amg`: smoothed-aggregation AMG measured on a list of matrices, medians after
 * a warm-up (wall clock around synchronised calls; the V-cycle with coal_bench_time): setup
 * from a matrix already on the backend, one V-cycle at k = 1 and k = K, PCG+AMG and CG+Jacobi
 * with one right-hand side (iterations, solve time after setup, true relative residual
 * recomputed here), Block-CG+AMG with K right-hand sides (setup included and excluded),
 * LOBPCG+AMG for the 16 smallest eigenpairs to 1e-6, and the hierarchy's memory against A.
 * Prints MET / NOT met for the targets of issue 32. --spd-set compares CG+AMG with CG+Jacobi
 * on each SPD matrix of the matrices folder (cli/cli_bench_amg_spd.c). */
#include "cli_bench_amg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define AMG_SEED       2032
#define VCYCLE_FACTOR  10   /* V-cycle repetitions per --reps */
#define RESIDUAL_SLACK 10.0 /* recomputed true residual may exceed rtol by rounding */

/* ---- timed runs -------------------------------------------------------------------------- */

/* max_j ||b_j - A x_j|| / ||b_j||, summed in long double from A's host CSR and the n x k
 * blocks B, X (downloaded here); NaN when out of memory or a download fails. */
static double true_relres(coal_mat A, coal_bvec B, coal_bvec X) {
  int64_t n = 0, k = 0;
  coal_bvec_size(B, &n, &k);
  double *b = malloc(sizeof *b * (size_t)(n * k + 1)), *x = malloc(sizeof *x * (size_t)(n * k + 1));
  double worst = NAN;
  cli_csr c;
  if (b && x && !coal_bvec_get_host(B, b, COAL_COL_MAJOR, 0) &&
      !coal_bvec_get_host(X, x, COAL_COL_MAJOR, 0) && !cli_csr_get(A, &c)) {
    worst = 0;
    for (int64_t j = 0; j < k; j++) {
      const double *bj = b + j * n, *xj = x + j * n;
      long double rr = 0, bb = 0;
      for (int64_t i = 0; i < n; i++) {
        long double s = bj[i];
        for (int32_t p = c.rowptr[i]; p < c.rowptr[i + 1]; p++)
          s -= (long double)cli_csr_value(&c, p) * xj[c.colind[p]];
        rr += s * s, bb += (long double)bj[i] * bj[i];
      }
      double rel = bb > 0 ? (double)sqrtl(rr / bb) : (double)sqrtl(rr);
      worst = isnan(rel) ? NAN : fmax(worst, rel);
    }
  }
  free(b);
  free(x);
  return worst;
}

/* AMG_WARMUP + reps solves of A X = B (B: k random columns, X = 0 each time) with o: medians of
 * setup, solve and their sum; iterations and convergence of the last run, its true residual
 * recomputed. CLI_OK, or CLI_FAIL (message printed). */
static int timed_solves(coal_mat A, const cli_solve_opts *o, int64_t k, int64_t reps,
                        amg_solve_stat *s) {
  coal_ctx ctx = coal_mat_ctx(A);
  int64_t n = 0;
  coal_mat_size(A, &n, NULL, NULL);
  coal_bvec B = NULL, X = NULL;
  coal_status st;
  double *t = malloc(sizeof *t * 3 * (size_t)reps);
  int rc = t ? CLI_OK : cli_fail(NULL, COAL_ERR_MEMORY, "timings");
  if (rc == CLI_OK && ((st = coal_bvec_create(ctx, n, k, COAL_F64, COAL_DEFAULT_LAYOUT, 0, &B)) ||
                       (st = coal_bvec_create(ctx, n, k, COAL_F64, COAL_DEFAULT_LAYOUT, 0, &X)) ||
                       (st = coal_bvec_set_random(B, AMG_SEED))))
    rc = cli_fail(ctx, st, "creating %lld right-hand sides", (long long)k);
  cli_solve_result res = {0};
  for (int64_t r = -AMG_WARMUP; rc == CLI_OK && r < reps; r++) {
    cli_solve_result_free(&res);
    if ((st = coal_bvec_set_value(X, 0.0))) rc = cli_fail(ctx, st, "zeroing X");
    if (rc == CLI_OK) rc = cli_solve_run(A, B, X, o, &res);
    if (rc == CLI_OK && r >= 0)
      t[r] = res.setup_s, t[reps + r] = res.solve_s, t[2 * reps + r] = res.setup_s + res.solve_s;
  }
  if (rc == CLI_OK) {
    s->ran = 1;
    s->setup_s = cli_median(t, reps), s->solve_s = cli_median(t + reps, reps);
    s->total_s = cli_median(t + 2 * reps, reps);
    s->its = res.iterations;
    s->relres = true_relres(A, B, X);
    s->converged = res.all_converged && s->relres <= RESIDUAL_SLACK * o->rtol;
  }
  cli_solve_result_free(&res);
  free(t);
  coal_bvec_destroy(&B);
  coal_bvec_destroy(&X);
  return rc;
}

typedef struct {
  coal_amg amg;
  coal_bvec R, Z;
} vcycle_arg;

static coal_status vcycle_run(void *arg) {
  vcycle_arg *a = arg;
  return coal_amg_apply(a->amg, a->R, a->Z);
}

/* One V-cycle on k random columns: median in ms (NaN on failure, message printed). */
static double vcycle_ms(coal_mat A, coal_amg amg, int64_t k, int64_t reps) {
  coal_ctx ctx = coal_mat_ctx(A);
  int64_t n = 0;
  coal_mat_size(A, &n, NULL, NULL);
  vcycle_arg a = {amg, NULL, NULL};
  double med = NAN, mn = NAN;
  coal_status st;
  if ((st = coal_bvec_create(ctx, n, k, COAL_F64, COAL_DEFAULT_LAYOUT, 0, &a.R)) ||
      (st = coal_bvec_create(ctx, n, k, COAL_F64, COAL_DEFAULT_LAYOUT, 0, &a.Z)) ||
      (st = coal_bvec_set_random(a.R, AMG_SEED)) ||
      (st = coal_bench_time(ctx, vcycle_run, &a, 3, (int)(VCYCLE_FACTOR * reps), &med, &mn)))
    cli_fail(ctx, st, "V-cycle on %lld columns", (long long)k), med = NAN;
  coal_bvec_destroy(&a.R);
  coal_bvec_destroy(&a.Z);
  return 1e-3 * med;
}

/* AMG_WARMUP + reps hierarchies, each created and set up from A on the backend (cli_amg_build
 * synchronises) and destroyed outside the timing: median and minimum in ms, and the
 * information of the last, which stays in *amg for the V-cycle. */
static int timed_setup(amg_bench *R, coal_mat A, amg_row *w, coal_amg *amg) {
  coal_status st;
  double *t = malloc(sizeof *t * (size_t)R->b.reps);
  if (!t) return cli_fail(NULL, COAL_ERR_MEMORY, "timings");
  int rc = CLI_OK;
  for (int64_t r = -AMG_WARMUP; rc == CLI_OK && r < R->b.reps; r++) {
    coal_amg_destroy(amg);
    double t0 = coal_now_seconds();
    rc = cli_amg_build(A, &R->amg, amg);
    if (r >= 0) t[r] = 1e3 * (coal_now_seconds() - t0);
  }
  if (rc == CLI_OK && (st = coal_amg_get_info(*amg, &w->info)))
    rc = cli_fail(coal_mat_ctx(A), st, "AMG information");
  if (rc == CLI_OK) {
    w->setup_min_ms = t[0];
    for (int64_t r = 1; r < R->b.reps; r++) w->setup_min_ms = fmin(w->setup_min_ms, t[r]);
    w->setup_ms = cli_median(t, R->b.reps);
    w->mem_ratio = (double)w->info.hierarchy_bytes / cli_amg_a_bytes(w->n, w->nnz);
    w->have_info = 1;
  }
  free(t);
  return rc;
}

/* A's values times f (exact for powers of two), uploaded by one product outside any timing. */
static coal_status scale_values(coal_mat A, double f, coal_bvec x, coal_bvec y) {
  int64_t n = 0, nnz = 0;
  coal_mat_size(A, &n, NULL, &nnz);
  double *v = malloc(sizeof *v * (size_t)(nnz + 1));
  if (!v) return COAL_ERR_MEMORY;
  coal_status st = coal_mat_get_csr(A, NULL, NULL, v);
  for (int64_t p = 0; !st && p < nnz; p++) v[p] *= f;
  if (!st) st = coal_mat_set_values(A, v);
  free(v);
  if (!st) st = coal_spmv(A, COAL_SPMV_CSR_VECTOR, 1.0, x, 0.0, y);
  return st ? st : coal_ctx_sync(coal_mat_ctx(A));
}

/* The numeric-only re-setup (coal_amg_set_reuse, coal_amg_resetup) after new values on the same
 * pattern, A times 2 and back by turns (exact: the same aggregates stay right), each upload
 * outside the timing: median in ms of AMG_WARMUP + reps re-setups. A keeps its values. */
static int timed_resetup(amg_bench *R, coal_mat A, amg_row *w) {
  coal_ctx ctx = coal_mat_ctx(A);
  coal_amg amg = NULL;
  coal_bvec x = NULL, y = NULL;
  coal_status st = COAL_SUCCESS;
  double *t = malloc(sizeof *t * (size_t)R->b.reps);
  int rc = t ? cli_amg_build(A, &R->amg, &amg) : cli_fail(NULL, COAL_ERR_MEMORY, "timings");
  if (rc == CLI_OK && ((st = coal_amg_set_reuse(amg, 1)) || (st = coal_amg_setup(amg)) ||
                       (st = coal_bvec_create(ctx, w->n, 1, COAL_F64, COAL_COL_MAJOR, 0, &x)) ||
                       (st = coal_bvec_create(ctx, w->n, 1, COAL_F64, COAL_COL_MAJOR, 0, &y)) ||
                       (st = coal_bvec_set_random(x, 1))))
    rc = cli_fail(ctx, st, "AMG setup for re-setup");
  int doubled = 0; /* A holds 2 A */
  for (int64_t r = -AMG_WARMUP; rc == CLI_OK && r < R->b.reps; r++) {
    if ((st = scale_values(A, doubled ? 0.5 : 2.0, x, y))) {
      rc = cli_fail(ctx, st, "new values of %s", w->sp->name);
      break;
    }
    doubled = !doubled;
    double t0 = coal_now_seconds();
    if ((st = coal_amg_resetup(amg))) rc = cli_fail(ctx, st, "AMG re-setup");
    if (r >= 0) t[r] = 1e3 * (coal_now_seconds() - t0);
  }
  if (rc == CLI_OK && (st = coal_amg_get_info(amg, &w->resetup_info)))
    rc = cli_fail(ctx, st, "AMG information");
  if (rc == CLI_OK && !w->resetup_info.numeric_only)
    rc = cli_fail(ctx, COAL_ERR_STATE, "the re-setup was not numeric-only");
  if (rc == CLI_OK) w->resetup_ms = cli_median(t, R->b.reps);
  if (doubled && scale_values(A, 0.5, x, y)) /* back */
    rc = cli_fail(ctx, COAL_ERR_STATE, "restoring the values of %s", w->sp->name);
  coal_bvec_destroy(&x);
  coal_bvec_destroy(&y);
  coal_amg_destroy(&amg);
  free(t);
  return rc;
}

/* LOBPCG+AMG for the AMG_EIG_NEV smallest to AMG_EIG_TOL: eig_reps runs, each with a new
 * eigensolver (the AMG setup included), median wall time. */
static int timed_eigs(amg_bench *R, coal_mat A, amg_row *w) {
  coal_ctx ctx = coal_mat_ctx(A);
  cli_eig_opts o;
  cli_eig_opts_default(&o);
  o.nev = AMG_EIG_NEV, o.tol = AMG_EIG_TOL, o.pc = COAL_PC_AMG, o.amg = R->amg;
  double *t = malloc(sizeof *t * (size_t)R->eig_reps), exact[AMG_EIG_NEV];
  if (!t) return cli_fail(NULL, COAL_ERR_MEMORY, "timings");
  cli_eig_result res = {0};
  int rc = CLI_OK;
  for (int64_t r = 0; rc == CLI_OK && r < R->eig_reps; r++) {
    coal_eigen E = NULL;
    coal_amg amg = NULL;
    cli_eig_result_free(&res);
    double t0 = coal_now_seconds();
    rc = cli_eig_create(A, NULL, &o, 0, &E, &amg);
    if (rc == CLI_OK) rc = cli_eig_solve(E, ctx, o.nev, &res);
    t[r] = coal_now_seconds() - t0;
    coal_eigen_destroy(&E);
    coal_amg_destroy(&amg);
  }
  if (rc == CLI_OK) {
    w->eig.ran = 1;
    w->eig.seconds = cli_median(t, R->eig_reps);
    w->eig.its = res.stats.iterations, w->eig.converged = res.nconverged;
    w->eig.max_res = res.max_res;
    if (cli_eig_exact(w->sp, o.nev, o.which, exact) > 0) {
      w->eig.err = 0;
      for (int j = 0; j < o.nev; j++)
        w->eig.err = fmax(w->eig.err, cli_eig_relerr(res.info[j].value, exact[j]));
    }
  }
  cli_eig_result_free(&res);
  free(t);
  return rc;
}

/* ---- one matrix -------------------------------------------------------------------------- */

static void status_add(amg_row *w, const char *what) {
  size_t len = strlen(w->status);
  snprintf(w->status + len, sizeof w->status - len, "%s%s", len ? "; " : "", what);
}

int amg_bench_matrix(amg_bench *R, const cli_spec *sp, int full, amg_row *w) {
  coal_ctx ctx = R->ctx;
  coal_mat A = NULL;
  coal_amg amg = NULL;
  coal_status st;
  memset(w, 0, sizeof *w);
  w->sp = sp;
  w->setup_ms = w->setup_min_ms = w->v1_ms = w->vk_ms = w->mem_ratio = w->resetup_ms = NAN;
  w->eig.err = NAN;
  if ((st = cli_spec_load(ctx, sp, COAL_F64, &A))) {
    cli_fail(ctx, st, "loading %s", sp->text);
    status_add(w, "load failed");
    return CLI_FAIL;
  }
  coal_mat_size(A, &w->n, NULL, &w->nnz);
  int sym = 0;
  coal_mat_is_symmetric(A, &sym);
  if (!sym) {
    status_add(w, "not symmetric");
    coal_mat_destroy(&A);
    return CLI_FAIL;
  }
  /* one product puts A on the backend: the setup is timed from there */
  coal_bvec x = NULL, y = NULL;
  if ((st = coal_bvec_create(ctx, w->n, 1, COAL_F64, COAL_COL_MAJOR, 0, &x)) ||
      (st = coal_bvec_create(ctx, w->n, 1, COAL_F64, COAL_COL_MAJOR, 0, &y)) ||
      (st = coal_bvec_set_random(x, 1)) || (st = coal_spmv(A, COAL_SPMV_AUTO, 1.0, x, 0.0, y)) ||
      (st = coal_ctx_sync(ctx)))
    cli_fail(ctx, st, "a first product with %s", sp->name);
  coal_bvec_destroy(&x);
  coal_bvec_destroy(&y);
  if (st) {
    status_add(w, "first product failed");
    coal_mat_destroy(&A);
    return CLI_FAIL;
  }
  int amg_ok = timed_setup(R, A, w, &amg) == CLI_OK;
  if (!amg_ok) status_add(w, "AMG setup failed");
  if (amg_ok && full) {
    if ((st = coal_amg_reserve(amg, R->nrhs > 1 ? R->nrhs : 1)))
      cli_fail(ctx, st, "AMG cycle blocks");
    w->v1_ms = st ? NAN : vcycle_ms(A, amg, 1, R->b.reps);
    w->vk_ms = st ? NAN : vcycle_ms(A, amg, R->nrhs, R->b.reps);
    if (isnan(w->v1_ms) || isnan(w->vk_ms)) status_add(w, "V-cycle failed");
  }
  coal_amg_destroy(&amg); /* the solves below build their own */
  if (amg_ok && full && timed_resetup(R, A, w) != CLI_OK) status_add(w, "AMG re-setup failed");
  cli_solve_opts o;
  cli_solve_opts_default(&o);
  o.rtol = R->rtol, o.maxit = R->maxit, o.method = COAL_METHOD_CG, o.amg = R->amg;
  if (amg_ok) {
    o.pc = COAL_PC_AMG, o.check_every = 1; /* exact iterations; a check is cheap beside a cycle */
    if (timed_solves(A, &o, 1, R->b.reps, &w->pcg) != CLI_OK)
      status_add(w, "PCG+AMG failed");
    else if (!w->pcg.converged)
      status_add(w, "PCG+AMG not converged");
  }
  o.pc = COAL_PC_JACOBI, o.check_every = 0; /* CG's own check interval */
  if (timed_solves(A, &o, 1, R->b.reps, &w->jac) != CLI_OK)
    status_add(w, "CG+Jacobi failed");
  else if (!w->jac.converged)
    status_add(w, "CG+Jacobi not converged");
  if (amg_ok && full && !R->no_block) {
    o.pc = COAL_PC_AMG, o.method = COAL_METHOD_BLOCKCG;
    if (timed_solves(A, &o, R->nrhs, R->b.reps, &w->bcg) != CLI_OK)
      status_add(w, "Block-CG+AMG failed");
    else if (!w->bcg.converged)
      status_add(w, "Block-CG+AMG not converged");
  }
  if (amg_ok && full && !R->no_eigs && w->n > 2 * AMG_EIG_NEV) {
    if (timed_eigs(R, A, w) != CLI_OK)
      status_add(w, "LOBPCG+AMG failed");
    else if (w->eig.converged < AMG_EIG_NEV)
      status_add(w, "LOBPCG+AMG not converged");
  }
  coal_mat_destroy(&A);
  if (!w->status[0]) snprintf(w->status, sizeof w->status, "ok");
  return strcmp(w->status, "ok") ? CLI_FAIL : CLI_OK;
}

/* ---- targets ----------------------------------------------------------------------------- */

/* Issue 32's targets: value <= limit on the 7-point Laplacian of `grid`^3. */
static const struct {
  const char *what, *unit;
  double limit;
  int grid;
} target_def[AMG_NTARGETS] = {
    {"AMG setup, 7-point 128^3", "ms", 10.0, 128},
    {"PCG+AMG iterations to 1e-8, 7-point 128^3", "its", 15.0, 128},
    {"V-cycle, 1 RHS, 7-point 128^3", "ms", 0.5, 128},
    {"PCG+AMG solve after setup, 7-point 128^3", "ms", 10.0, 128},
    {"Block-CG+AMG 32 RHS, setup included, 7-point 128^3", "s", 0.1, 128},
    {"LOBPCG+AMG 16 smallest to 1e-6, 7-point 100^3", "s", 0.3, 100},
    {"hierarchy memory / A, 7-point 128^3", "x", 2.5, 128},
};

/* The row's value for target t (NaN: not measured or not converged). */
static double target_value(const amg_bench *R, const amg_row *w, int t) {
  const int rtol_ok = R->rtol <= 1e-8;
  switch (t) {
  case 0: return w->setup_ms;
  case 1: return w->pcg.converged && rtol_ok ? w->pcg.its : NAN;
  case 2: return w->v1_ms;
  case 3: return w->pcg.converged && rtol_ok ? 1e3 * w->pcg.solve_s : NAN;
  case 4: return w->bcg.converged && rtol_ok && R->nrhs == 32 ? w->bcg.total_s : NAN;
  case 5: return w->eig.ran && w->eig.converged == AMG_EIG_NEV ? w->eig.seconds : NAN;
  default: return w->mem_ratio;
  }
}

void amg_targets_update(amg_bench *R, const amg_row *w) {
  for (int t = 0; t < AMG_NTARGETS; t++)
    if (w->sp->kind == CLI_SPEC_LAP3D && w->sp->n == target_def[t].grid) {
      double v = target_value(R, w, t);
      R->target[t].ran = 1, R->target[t].value = v;
      R->target[t].met = v <= target_def[t].limit; /* NaN: not met */
    }
}

void amg_targets_print(const amg_bench *R) {
  printf("targets (issue 32):\n");
  for (int t = 0; t < AMG_NTARGETS; t++) {
    char v[32];
    cli_fmt_num(v, sizeof v, R->target[t].value, "%.4g");
    if (R->target[t].ran)
      printf("  %-52s <= %g %-2s %s (%s %s)\n", target_def[t].what, target_def[t].limit,
             target_def[t].unit, R->target[t].met ? "MET" : "NOT met", v, target_def[t].unit);
    else
      printf("  %-52s <= %g %-2s not in this run (lap3d:%d, --large)\n", target_def[t].what,
             target_def[t].limit, target_def[t].unit, target_def[t].grid);
  }
}

void amg_targets_json(const amg_bench *R, FILE *f) {
  fputs("  \"targets\": [", f);
  for (int t = 0; t < AMG_NTARGETS; t++) {
    fprintf(f, "%s\n    {\"target\": ", t ? "," : "");
    cli_json_str(f, target_def[t].what);
    fprintf(f, ", \"limit\": %g, \"unit\": \"%s\", \"ran\": %s, \"value\": ", target_def[t].limit,
            target_def[t].unit, R->target[t].ran ? "true" : "false");
    cli_json_num(f, R->target[t].value);
    fprintf(f, ", \"met\": %s}", R->target[t].ran ? (R->target[t].met ? "true" : "false") : "null");
  }
  fputs("\n  ]\n", f);
}
