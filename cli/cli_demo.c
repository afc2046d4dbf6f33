/* `coalesce demo`: the main job of the README. The 3-D Poisson problem (7-point Laplacian,
 * 128^3 = 2.1M unknowns on a GPU) with 32 random right-hand sides, solved by Block-CG on the
 * best backend and compared with 32 single-RHS CG solves, with Jacobi and with AMG side by
 * side (--pc jacobi|amg|both): times, iterations and true residuals. Without a GPU it says so
 * and runs 32^3 on the host. Where the AMG run fails (a backend without AMG setup) it says so
 * and keeps Jacobi's. Exit status 1 when a column does not reach the tolerance in true
 * residual. */
#include "cli.h"

#include <string.h>

#define DEMO_N_GPU  128
#define DEMO_N_HOST 32
#define DEMO_K      32
#define DEMO_RTOL   1e-8
/* The true residual may exceed the recursive one by rounding: allowed margin. */
#define DEMO_MARGIN 10.0

/* Which preconditioners the demo compares (--pc). */
enum { DEMO_JACOBI = 1, DEMO_AMG = 2, DEMO_BOTH = 3 };

/* Block-CG against k CG solves with one preconditioner, printed. *ok: every column within the
 * tolerance; *total: Block-CG's time, setup included. CLI_FAIL when a run did not complete
 * (message printed). */
static int demo_pc(coal_mat A, int64_t k, const cli_solve_opts *o, int cuda, int *ok,
                   double *total) {
  cli_solve_compare_result r;
  memset(&r, 0, sizeof r);
  int rc = cli_solve_compare(A, k, o, 1, 0, &r);
  if (rc != CLI_OK) {
    cli_solve_compare_free(&r);
    return rc;
  }
  double tb = r.block.setup_s + r.block.solve_s, ts = r.seq.setup_s + r.seq.solve_s;
  printf("  %-10s %.3f s (setup %.3f s, solve %.3f s), %d block iterations, largest "
         "||b-Ax||/||b|| %.2e\n",
         "Block-CG", tb, r.block.setup_s, r.block.solve_s, r.block.iterations, r.block.max_rel);
  printf("  %-10s %.3f s for %lld solves, %.1f iterations each on average (at most %d), "
         "largest ||b-Ax||/||b|| %.2e\n",
         "CG", ts, (long long)k, (double)r.seq.sum_its / (double)k, r.seq.max_its, r.seq.max_rel);
  printf("  %-10s %.2fx (time of the %lld CG solves / time of Block-CG)%s\n", "speed-up", ts / tb,
         (long long)k,
         cuda || o->pc != COAL_PC_JACOBI
             ? ""
             : "; on the host Block-CG's dense k x k work is compute-bound, on a GPU "
               "the whole iteration is bandwidth-bound");
  *ok = r.block.all_converged && r.seq.all_converged &&
        r.block.max_rel <= DEMO_MARGIN * DEMO_RTOL && r.seq.max_rel <= DEMO_MARGIN * DEMO_RTOL;
  *total = tb;
  cli_solve_compare_free(&r);
  return CLI_OK;
}

static int demo_run(coal_ctx ctx, int64_t n, int64_t k, int pcs, const cli_amg_opts *amg,
                    int auto_note) {
  int cuda = coal_ctx_backend(ctx) == COAL_BACKEND_CUDA;
  if (n <= 0) n = cuda ? DEMO_N_GPU : DEMO_N_HOST;
  printf("coalesce demo: 3-D Poisson, %lld right-hand sides, Block-CG against %lld single-RHS "
         "CG solves\n",
         (long long)k, (long long)k);
  if (auto_note)
    printf("  no GPU available: running on the host backend with N = %lld (N = %d on a GPU)\n",
           (long long)n, DEMO_N_GPU);
  coal_mat A = NULL;
  coal_status st;
  if ((st = coal_gen_laplace3d(ctx, n, n, n, 7, COAL_F64, &A)))
    return cli_fail(ctx, st, "generating the %lld^3 Laplacian", (long long)n);
  int64_t rows, nnz;
  coal_mat_size(A, &rows, NULL, &nnz);
  char opts[160];
  cli_amg_describe(amg, opts, sizeof opts);
  printf("  %-10s 7-point Laplacian, %lld^3 grid: %lld rows, %lld nonzeros\n", "problem",
         (long long)n, (long long)rows, (long long)nnz);
  printf("  %-10s %s (%s)\n", "backend", coal_backend_name(coal_ctx_backend(ctx)),
         coal_ctx_device_name(ctx));
  printf("  %-10s rtol %.0e, x0 = 0, b random in [-1,1); preconditioner %s\n", "solver", DEMO_RTOL,
         pcs == DEMO_BOTH  ? "Jacobi, then AMG"
         : pcs == DEMO_AMG ? "AMG"
                           : "Jacobi");
  cli_solve_opts o;
  cli_solve_opts_default(&o);
  o.rtol = DEMO_RTOL, o.amg = *amg;
  int rc = CLI_OK, ok = 1, ok_pc = 1;
  double t_jac = 0, t_amg = 0;
  if (pcs & DEMO_JACOBI) {
    printf("  -- Jacobi\n");
    o.pc = COAL_PC_JACOBI;
    rc = demo_pc(A, k, &o, cuda, &ok_pc, &t_jac);
    ok &= ok_pc;
  }
  if (rc == CLI_OK && (pcs & DEMO_AMG)) {
    printf("  -- AMG (smoothed aggregation: %s)\n", opts);
    o.pc = COAL_PC_AMG;
    int r = demo_pc(A, k, &o, cuda, &ok_pc, &t_amg);
    if (r == CLI_OK) {
      ok &= ok_pc;
    } else if (pcs == DEMO_BOTH) { /* e.g. no AMG setup on this backend: Jacobi stands */
      printf("  %-10s failed on the %s backend (message on stderr): Jacobi only\n", "AMG",
             coal_backend_name(coal_ctx_backend(ctx)));
      t_amg = 0;
    } else {
      rc = r;
    }
  }
  coal_mat_destroy(&A);
  if (rc != CLI_OK) return rc;
  if (t_jac > 0 && t_amg > 0)
    printf("  %-10s Block-CG with AMG %.3f s against %.3f s with Jacobi: %.2fx\n", "AMG/Jacobi",
           t_amg, t_jac, t_jac / t_amg);
  printf("  %-10s every column %s the tolerance in true residual\n", "check",
         ok ? "reached" : "did NOT reach");
  if (!ok) {
    fprintf(stderr, "coalesce demo: a column did not converge to %.0e\n", DEMO_RTOL);
    return CLI_FAIL;
  }
  return CLI_OK;
}

int cli_demo(int argc, char **argv) {
  cli_common c = {COAL_BACKEND_AUTO, COAL_F64};
  int64_t n = 0, k = DEMO_K;
  int pcs = DEMO_BOTH;
  cli_amg_opts amg;
  cli_amg_opts_default(&amg);
  for (int i = 1; i < argc; i++) {
    const char *v = NULL;
    int r = cli_parse_common(argc, argv, &i, &c);
    if (!r) r = cli_amg_opt(argc, argv, &i, &amg);
    if (r < 0) return CLI_USAGE;
    if (r > 0) continue;
    if ((r = cli_opt_value(argc, argv, &i, "--n", &v)) != 0) {
      if (r < 0) return CLI_USAGE;
      if (cli_parse_i64(v, &n) || n < 1 || n > 1290)
        return cli_usage_error("--n: '%s' is not an integer in 1..1290", v);
      continue;
    }
    if ((r = cli_opt_value(argc, argv, &i, "--nrhs", &v)) != 0) {
      if (r < 0) return CLI_USAGE;
      if (cli_parse_i64(v, &k) || k < 1 || k > 1024)
        return cli_usage_error("--nrhs: '%s' is not an integer in 1..1024", v);
      continue;
    }
    if ((r = cli_opt_value(argc, argv, &i, "--pc", &v)) != 0) {
      if (r < 0) return CLI_USAGE;
      if (!strcmp(v, "jacobi"))
        pcs = DEMO_JACOBI;
      else if (!strcmp(v, "amg"))
        pcs = DEMO_AMG;
      else if (!strcmp(v, "both"))
        pcs = DEMO_BOTH;
      else
        return cli_usage_error("--pc: '%s' is not jacobi, amg or both", v);
      continue;
    }
    return cli_usage_error("demo: unexpected argument '%s'", argv[i]);
  }
  if (c.dtype != COAL_F64) return cli_usage_error("demo: the solvers run in fp64");
  if (cli_amg_check(&amg, pcs & DEMO_AMG ? COAL_PC_AMG : COAL_PC_JACOBI) != CLI_OK)
    return CLI_USAGE;
  coal_ctx ctx = NULL;
  if (cli_ctx_create(c.backend, &ctx) != CLI_OK) return CLI_FAIL;
  /* say so when auto fell back to the host because there is no GPU */
  int auto_note = c.backend == COAL_BACKEND_AUTO && coal_ctx_backend(ctx) == COAL_BACKEND_HOST &&
                  !coal_cuda_available();
  int rc = demo_run(ctx, n, k, pcs, &amg, auto_note);
  coal_ctx_destroy(&ctx);
  return rc;
}
