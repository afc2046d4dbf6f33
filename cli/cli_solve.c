/* `coalesce solve`: A X = B with CG or Block-CG, and the run helper that demo and bench solve
 * share (cli_solve_run: setup and solve timed separately, per-column results). */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SOLVE_SEED 2025

/* Monitor writing "iteration,column,resnorm" lines (the --history file). */
static int history_monitor(void *user, int it, int64_t k, const double *r) {
  FILE *f = (FILE *)user;
  for (int64_t j = 0; j < k; j++) fprintf(f, "%d,%lld,%.6e\n", it, (long long)j, r[j]);
  return 0;
}

int cli_solve_run(coal_mat A, coal_bvec B, coal_bvec X, const cli_solve_opts *o,
                  cli_solve_result *res) {
  coal_ctx ctx = coal_mat_ctx(A);
  coal_solver S = NULL;
  coal_amg amg = NULL; /* built here with --amg-* options: destroyed after S */
  coal_status st;
  memset(res, 0, sizeof *res);
  int64_t k = 0;
  coal_bvec_size(B, NULL, &k);
  res->k = k;
  res->info = calloc((size_t)k + 1, sizeof *res->info);
  if (!res->info) return cli_fail(NULL, COAL_ERR_MEMORY, "solver results");
  if ((st = coal_solver_create(A, &S)) || (st = coal_solver_set_method(S, o->method)) ||
      (o->pc != COAL_PC_AMG && (st = coal_solver_set_pc(S, o->pc))) ||
      (st = coal_solver_set_tolerances(S, o->rtol, o->atol, o->maxit)) ||
      (o->check_every > 0 && (st = coal_solver_set_check_every(S, o->check_every))) ||
      (o->history && (st = coal_solver_set_monitor(S, history_monitor, o->history)))) {
    coal_solver_destroy(&S);
    return cli_fail(ctx, st, "configuring the solver");
  }
  /* the setup time includes the hierarchy's, whoever builds it */
  double t0 = coal_now_seconds();
  int64_t width = o->method == COAL_METHOD_CG ? 1 : k;
  if (o->pc == COAL_PC_AMG && cli_amg_attach(S, NULL, A, &o->amg, width, &amg) != CLI_OK) {
    coal_solver_destroy(&S);
    return CLI_FAIL;
  }
  if ((st = coal_solver_setup(S)) || (st = coal_ctx_sync(ctx))) {
    coal_solver_destroy(&S);
    coal_amg_destroy(&amg);
    return cli_fail(ctx, st, "solver setup");
  }
  double t1 = coal_now_seconds();
  if ((st = coal_solver_solve(S, B, X)) || (st = coal_ctx_sync(ctx))) {
    coal_solver_destroy(&S);
    coal_amg_destroy(&amg);
    return cli_fail(ctx, st, "solve");
  }
  double t2 = coal_now_seconds();
  res->setup_s = t1 - t0, res->solve_s = t2 - t1;
  res->iterations = coal_solver_iterations(S);
  res->all_converged = 1;
  res->max_rel = 0.0;
  res->max_its = 0, res->sum_its = 0;
  for (int64_t j = 0; j < k; j++) {
    coal_solver_get_info(S, j, &res->info[j]);
    coal_solve_info *in = &res->info[j];
    double rel = in->rhsnorm > 0 ? in->resnorm / in->rhsnorm : in->resnorm;
    res->max_rel = fmax(res->max_rel, rel);
    if (in->reason != COAL_SOLVE_CONVERGED) res->all_converged = 0;
    if (in->iterations > res->max_its) res->max_its = in->iterations;
    res->sum_its += in->iterations;
  }
  coal_solver_destroy(&S);
  coal_amg_destroy(&amg);
  return CLI_OK;
}

void cli_solve_result_free(cli_solve_result *r) {
  free(r->info);
  r->info = NULL;
}

/* Right-hand sides: --rhs FILE, else k deterministic random columns. */
static int load_rhs(coal_ctx ctx, const char *path, int64_t k, int64_t n, coal_bvec *B) {
  coal_status st;
  if (path) {
    if ((st = coal_bvec_read_mm(ctx, path, COAL_F64, COAL_DEFAULT_LAYOUT, B)))
      return cli_fail(ctx, st, "reading the right-hand sides %s", path);
    int64_t bn = 0;
    coal_bvec_size(*B, &bn, NULL);
    if (bn != n) {
      fprintf(stderr, "coalesce solve: %s has %lld rows, the matrix has %lld\n", path,
              (long long)bn, (long long)n);
      return CLI_FAIL;
    }
    return CLI_OK;
  }
  if ((st = coal_bvec_create(ctx, n, k, COAL_F64, COAL_DEFAULT_LAYOUT, 0, B)) ||
      (st = coal_bvec_set_random(*B, SOLVE_SEED)))
    return cli_fail(ctx, st, "creating %lld random right-hand sides", (long long)k);
  return CLI_OK;
}

int cli_solve_opt(int argc, char **argv, int *i, cli_solve_opts *o) {
  const char *v = NULL;
  int r = cli_amg_opt(argc, argv, i, &o->amg);
  if (r) return r;
  if ((r = cli_opt_value(argc, argv, i, "--rtol", &v)) != 0) {
    if (r > 0 && (cli_parse_f64(v, &o->rtol) || !(o->rtol >= 0 && o->rtol < 1))) {
      cli_usage_error("--rtol: '%s' is not a number in [0, 1)", v);
      return -1;
    }
    return r;
  }
  if ((r = cli_opt_value(argc, argv, i, "--atol", &v)) != 0) {
    if (r > 0 && (cli_parse_f64(v, &o->atol) || !(o->atol >= 0))) {
      cli_usage_error("--atol: '%s' is not a number >= 0", v);
      return -1;
    }
    return r;
  }
  int64_t x;
  if ((r = cli_opt_value(argc, argv, i, "--maxit", &v)) != 0) {
    if (r > 0 && (cli_parse_i64(v, &x) || x < 0 || x > 100000000)) {
      cli_usage_error("--maxit: '%s' is not an integer in 0..1e8", v);
      return -1;
    }
    if (r > 0) o->maxit = (int)x;
    return r;
  }
  if ((r = cli_opt_value(argc, argv, i, "--check-every", &v)) != 0) {
    if (r > 0 && (cli_parse_i64(v, &x) || x < 1 || x > 1000000)) {
      cli_usage_error("--check-every: '%s' is not an integer in 1..1e6", v);
      return -1;
    }
    if (r > 0) o->check_every = (int)x;
    return r;
  }
  if ((r = cli_opt_value(argc, argv, i, "--pc", &v)) != 0) {
    if (r > 0 && coal_pc_parse(v, &o->pc)) {
      cli_usage_error("--pc: '%s' is not none, jacobi or amg", v);
      return -1;
    }
    return r;
  }
  if ((r = cli_opt_value(argc, argv, i, "--method", &v)) != 0) {
    if (r > 0 && coal_method_parse(v, &o->method)) {
      cli_usage_error("--method: '%s' is not cg or blockcg", v);
      return -1;
    }
    return r;
  }
  return 0;
}

void cli_solve_opts_default(cli_solve_opts *o) {
  memset(o, 0, sizeof *o);
  o->method = COAL_METHOD_BLOCKCG, o->pc = COAL_PC_NONE;
  o->rtol = 1e-8, o->atol = 0.0, o->maxit = 10000, o->check_every = 0;
  cli_amg_opts_default(&o->amg);
}

/* One row per column: its verdict (the true residual decides), iterations over every run,
 * residual replacements, the true residual and the solver's recursive one at its last check. */
static int solve_print(const cli_solve_result *r, int method_cg, const char *out) {
  printf("  %-12s %d%s\n", "iterations", r->iterations,
         r->k <= 1   ? ""
         : method_cg ? " (sum over columns)"
                     : " (block iterations; per column below)");
  printf("  %-12s setup %.3f s, solve %.3f s\n", "time", r->setup_s, r->solve_s);
  printf("  %-6s %-16s %10s %8s %14s %14s %14s\n", "column", "status", "iterations", "restarts",
         "||b-Ax||", "||b-Ax||/||b||", "recursive/||b||");
  for (int64_t j = 0; j < r->k; j++) {
    const coal_solve_info *in = &r->info[j];
    double bn = in->rhsnorm > 0 ? in->rhsnorm : 1.0;
    printf("  %-6lld %-16s %10d %8d %14.3e %14.3e %14.3e\n", (long long)j,
           coal_solve_reason_name(in->reason), in->iterations, in->replacements, in->resnorm,
           in->resnorm / bn, in->rec_resnorm / bn);
  }
  printf("  %-12s %s; largest relative true residual %.3e\n", "result",
         r->all_converged ? "all columns converged" : "NOT all columns converged", r->max_rel);
  if (out) printf("  %-12s solution written to %s\n", "output", out);
  return r->all_converged ? CLI_OK : CLI_FAIL;
}

int cli_solve(int argc, char **argv) {
  cli_common c = {COAL_BACKEND_AUTO, COAL_F64};
  cli_solve_opts o;
  cli_solve_opts_default(&o);
  const char *rhs = NULL, *out = NULL, *hist = NULL, *spec_text = NULL;
  int64_t k = 1;
  int k_given = 0;
  for (int i = 1; i < argc; i++) {
    const char *v = NULL;
    int r = cli_parse_common(argc, argv, &i, &c);
    if (!r) r = cli_solve_opt(argc, argv, &i, &o);
    if (r < 0) return CLI_USAGE;
    if (r > 0) continue;
    if ((r = cli_opt_value(argc, argv, &i, "--nrhs", &v)) != 0) {
      if (r < 0) return CLI_USAGE;
      if (cli_parse_i64(v, &k) || k < 1 || k > 100000)
        return cli_usage_error("--nrhs: '%s' is not an integer in 1..100000", v);
      k_given = 1;
      continue;
    }
    if ((r = cli_opt_value(argc, argv, &i, "--rhs", &rhs)) ||
        (r = cli_opt_value(argc, argv, &i, "--out", &out)) ||
        (r = cli_opt_value(argc, argv, &i, "--history", &hist))) {
      if (r < 0) return CLI_USAGE;
      continue;
    }
    if (!strncmp(argv[i], "--", 2)) return cli_usage_error("solve: unknown option '%s'", argv[i]);
    if (spec_text) return cli_usage_error("solve: one matrix only ('%s' is extra)", argv[i]);
    spec_text = argv[i];
  }
  if (!spec_text) return cli_usage_error("solve needs a matrix: coalesce solve A.mtx [options]");
  if (rhs && k_given) return cli_usage_error("solve: give --rhs or --nrhs, not both");
  if (c.dtype != COAL_F64) return cli_usage_error("solve: the solvers run in fp64");
  if (cli_amg_check(&o.amg, o.pc) != CLI_OK) return CLI_USAGE;
  cli_spec sp;
  if (cli_spec_parse(spec_text, &sp) != CLI_OK) return CLI_USAGE;

  coal_ctx ctx = NULL;
  coal_mat A = NULL;
  coal_bvec B = NULL, X = NULL;
  cli_solve_result res = {0};
  int rc = cli_ctx_create(c.backend, &ctx);
  coal_status st;
  int64_t n = 0, nnz = 0;
  if (rc == CLI_OK && (st = cli_spec_load(ctx, &sp, COAL_F64, &A)))
    rc = cli_fail(ctx, st, "loading %s", sp.text);
  if (rc == CLI_OK) coal_mat_size(A, &n, NULL, &nnz);
  if (rc == CLI_OK) rc = load_rhs(ctx, rhs, k, n, &B);
  if (rc == CLI_OK) {
    coal_bvec_size(B, NULL, &k);
    if ((st = coal_bvec_create(ctx, n, k, COAL_F64, COAL_DEFAULT_LAYOUT, 0, &X)))
      rc = cli_fail(ctx, st, "allocating X");
  }
  if (rc == CLI_OK && hist && !(o.history = cli_open_output(hist))) rc = CLI_FAIL;
  if (rc == CLI_OK) {
    if (o.history) fprintf(o.history, "iteration,column,resnorm\n");
    printf("coalesce solve: %s, %lld rows, %lld nonzeros, %lld right-hand side%s\n", sp.name,
           (long long)n, (long long)nnz, (long long)k, k == 1 ? "" : "s");
    printf("  %-12s %s, preconditioner %s, rtol %.1e, backend %s (%s)\n", "method",
           coal_method_name(o.method), coal_pc_name(o.pc), o.rtol,
           coal_backend_name(coal_ctx_backend(ctx)), coal_ctx_device_name(ctx));
    if (o.pc == COAL_PC_AMG) {
      char opts[160];
      cli_amg_describe(&o.amg, opts, sizeof opts);
      printf("  %-12s %s (%s)\n", "amg", opts,
             o.amg.given ? "built here, a user preconditioner" : "the library's defaults");
    }
    rc = cli_solve_run(A, B, X, &o, &res);
  }
  if (o.history && fclose(o.history) && rc == CLI_OK) {
    fprintf(stderr, "coalesce solve: cannot write %s\n", hist);
    rc = CLI_FAIL;
  }
  if (rc == CLI_OK && out && (st = coal_bvec_write_mm(X, out)))
    rc = cli_fail(ctx, st, "writing %s", out);
  if (rc == CLI_OK) rc = solve_print(&res, o.method == COAL_METHOD_CG, out);
  cli_solve_result_free(&res);
  coal_bvec_destroy(&B);
  coal_bvec_destroy(&X);
  coal_mat_destroy(&A);
  coal_ctx_destroy(&ctx);
  return rc;
}
