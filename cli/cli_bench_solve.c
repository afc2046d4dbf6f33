/* `coalesce bench solve`: for each matrix, K random right-hand sides solved by Block-CG and by
 * K sequential single-RHS CG solves, plus one single-RHS CG timed against the SpMV it is built
 * on (per-iteration time against one SpMV and the vector traffic of an iteration). Times are
 * wall clock around synchronised calls, setup and solve separately. The comparison is shared
 * with `coalesce demo` (cli_solve_compare). */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_SEED 2026
/* Vector passes of one Jacobi-CG iteration besides the SpMV (solvers/cg.c). */
#define CG_VECTOR_PASSES 13

int cli_solve_compare(coal_mat A, int64_t k, const cli_solve_opts *o, int run_seq, int exact_its,
                      cli_solve_compare_result *r) {
  coal_ctx ctx = coal_mat_ctx(A);
  int64_t n = 0;
  coal_status st;
  memset(r, 0, sizeof *r);
  coal_mat_size(A, &n, NULL, NULL);
  coal_bvec B = NULL, X = NULL;
  int rc = CLI_OK;
  if ((st = coal_bvec_create(ctx, n, k, COAL_F64, COAL_DEFAULT_LAYOUT, 0, &B)) ||
      (st = coal_bvec_create(ctx, n, k, COAL_F64, COAL_DEFAULT_LAYOUT, 0, &X)) ||
      (st = coal_bvec_set_random(B, BENCH_SEED)))
    rc = cli_fail(ctx, st, "creating %lld right-hand sides", (long long)k);
  /* one product puts A on the backend: both timed runs then start from the same state */
  double t0 = coal_now_seconds();
  if (rc == CLI_OK &&
      ((st = coal_spmm(A, COAL_SPMM_AUTO, 1.0, B, 0.0, X)) || (st = coal_ctx_sync(ctx))))
    rc = cli_fail(ctx, st, "a first product with A");
  r->upload_s = coal_now_seconds() - t0;
  cli_solve_opts ob = *o, oc = *o, oe = *o;
  ob.method = COAL_METHOD_BLOCKCG, oc.method = oe.method = COAL_METHOD_CG, oe.check_every = 1;
  if (rc == CLI_OK && (st = coal_bvec_set_value(X, 0.0))) rc = cli_fail(ctx, st, "zeroing X");
  if (rc == CLI_OK) rc = cli_solve_run(A, B, X, &ob, &r->block);
  if (rc == CLI_OK && run_seq) {
    if ((st = coal_bvec_set_value(X, 0.0))) rc = cli_fail(ctx, st, "zeroing X");
    if (rc == CLI_OK) rc = cli_solve_run(A, B, X, &oc, &r->seq);
    r->have_seq = rc == CLI_OK;
  }
  if (rc == CLI_OK && run_seq && exact_its) {
    if ((st = coal_bvec_set_value(X, 0.0))) rc = cli_fail(ctx, st, "zeroing X");
    if (rc == CLI_OK) rc = cli_solve_run(A, B, X, &oe, &r->seq_exact);
    r->have_exact = rc == CLI_OK;
  }
  /* Block-CG should need at most the iterations of CG on every column */
  const cli_solve_result *ref = r->have_exact ? &r->seq_exact : &r->seq;
  if (rc == CLI_OK && r->have_seq)
    for (int64_t j = 0; j < k; j++)
      if (r->block.info[j].iterations > ref->info[j].iterations) r->block_more++;
  coal_bvec_destroy(&B);
  coal_bvec_destroy(&X);
  return rc;
}

void cli_solve_compare_free(cli_solve_compare_result *r) {
  cli_solve_result_free(&r->block);
  cli_solve_result_free(&r->seq);
  cli_solve_result_free(&r->seq_exact);
}

/* One single-RHS CG solve with a given check interval, and the SpMV time for comparison. */
static int single_cg(coal_mat A, const cli_solve_opts *o, int every, cli_solve_result *res) {
  coal_ctx ctx = coal_mat_ctx(A);
  int64_t n = 0;
  coal_mat_size(A, &n, NULL, NULL);
  coal_bvec b = NULL, x = NULL;
  coal_status st;
  int rc = CLI_OK;
  if ((st = coal_bvec_create(ctx, n, 1, COAL_F64, COAL_DEFAULT_LAYOUT, 0, &b)) ||
      (st = coal_bvec_create(ctx, n, 1, COAL_F64, COAL_DEFAULT_LAYOUT, 0, &x)) ||
      (st = coal_bvec_set_random(b, BENCH_SEED)))
    rc = cli_fail(ctx, st, "creating b and x");
  cli_solve_opts oc = *o;
  oc.method = COAL_METHOD_CG, oc.check_every = every;
  if (rc == CLI_OK) rc = cli_solve_run(A, b, x, &oc, res);
  coal_bvec_destroy(&b);
  coal_bvec_destroy(&x);
  return rc;
}

static double spmv_us(coal_mat A) {
  coal_ctx ctx = coal_mat_ctx(A);
  int64_t n = 0;
  coal_mat_size(A, &n, NULL, NULL);
  coal_bvec x = NULL, y = NULL;
  double med = NAN, mn = 0;
  if (!coal_bvec_create(ctx, n, 1, COAL_F64, COAL_COL_MAJOR, 0, &x) &&
      !coal_bvec_create(ctx, n, 1, COAL_F64, COAL_COL_MAJOR, 0, &y) &&
      !coal_bvec_set_random(x, 3)) {
    cli_spmv_arg arg = {A, COAL_SPMV_AUTO, coal_bvec_data(x), coal_bvec_data(y)};
    if (coal_bench_time(ctx, cli_spmv_run, &arg, 5, 50, &med, &mn)) med = NAN;
  }
  coal_bvec_destroy(&x);
  coal_bvec_destroy(&y);
  return med;
}

static const char *const CSV_HEAD =
    "matrix,backend,device,rows,nnz,k,pc,rtol,block_setup_s,block_solve_s,block_its,"
    "block_col_its_max,block_col_its_mean,block_max_rel,seq_solve_s,seq_col_its_max,"
    "seq_col_its_mean,seq_max_rel,speedup,block_more_cols,cg1_solve_s,cg1_its,cg1_us_per_it,"
    "cg1_every1_solve_s,spmv_us,vector_floor_us\n";

int cli_bench_solve(int argc, char **argv) {
  cli_bench_opts b;
  memset(&b, 0, sizeof b);
  b.c.backend = COAL_BACKEND_AUTO, b.c.dtype = COAL_F64;
  cli_solve_opts o;
  cli_solve_opts_default(&o);
  o.pc = COAL_PC_JACOBI;
  int64_t k = 32;
  int no_seq = 0;
  b.list.specs = calloc((size_t)argc + 4, sizeof(cli_spec));
  if (!b.list.specs) return cli_fail(NULL, COAL_ERR_MEMORY, "matrix list");
  int rc = CLI_OK;
  for (int i = 1; i < argc && rc == CLI_OK; i++) {
    const char *v = NULL;
    int r = cli_solve_opt(argc, argv, &i, &o);
    if (!r) r = cli_bench_opt(argc, argv, &i, &b);
    if (r < 0) rc = CLI_USAGE;
    if (r) continue;
    if ((r = cli_opt_value(argc, argv, &i, "--nrhs", &v)) != 0) {
      if (r < 0 || cli_parse_i64(v, &k) || k < 1 || k > 4096)
        rc = cli_usage_error("--nrhs: '%s' is not an integer in 1..4096", v ? v : "");
      continue;
    }
    if (!strcmp(argv[i], "--no-seq")) {
      no_seq = 1;
      continue;
    }
    rc = cli_usage_error("bench solve: unknown option '%s'", argv[i]);
  }
  if (rc == CLI_OK && b.c.dtype != COAL_F64) rc = cli_usage_error("bench solve runs in fp64");
  if (rc == CLI_OK) rc = cli_amg_check(&o.amg, o.pc);
  if (rc == CLI_OK && b.list.n == 0 && !b.dir && !b.large)
    rc = cli_spec_parse("lap3d:32", &b.list.specs[b.list.n++]); /* a quick default */
  if (rc == CLI_OK) rc = cli_matrix_list_finish(&b.list, b.dir, 0);
  if (rc == CLI_OK && b.large) rc = cli_spec_parse("lap3d:128", &b.list.specs[b.list.n++]);
  coal_ctx ctx = NULL;
  if (rc == CLI_OK) rc = cli_ctx_create(b.c.backend, &ctx);
  FILE *csv = NULL;
  if (rc == CLI_OK && b.csv_path && !(csv = cli_open_output(b.csv_path))) rc = CLI_FAIL;
  if (csv) fputs(CSV_HEAD, csv);
  if (rc == CLI_OK)
    printf("bench solve: %lld right-hand sides, %s, rtol %.0e, backend %s (%s)\n", (long long)k,
           coal_pc_name(o.pc), o.rtol, coal_backend_name(coal_ctx_backend(ctx)),
           coal_ctx_device_name(ctx));
  for (int m = 0; rc == CLI_OK && m < b.list.n; m++) {
    cli_spec *sp = &b.list.specs[m];
    coal_mat A = NULL;
    coal_status st;
    if ((st = cli_spec_load(ctx, sp, COAL_F64, &A))) {
      rc = cli_fail(ctx, st, "loading %s", sp->text);
      break;
    }
    int64_t n = 0, nnz = 0;
    coal_mat_size(A, &n, NULL, &nnz);
    int sym = 0, from_dir = cli_matrix_list_from_dir(&b.list, m);
    coal_mat_is_symmetric(A, &sym);
    if (!sym) { /* coal_mat_is_symmetric also says 0 for a rectangular matrix */
      printf("%s: skipped (not a symmetric matrix)\n", sp->name);
      coal_mat_destroy(&A);
      if (!from_dir) rc = CLI_FAIL;
      continue;
    }
    cli_solve_compare_result cmp;
    cli_solve_result c1 = {0}, c1e = {0};
    memset(&cmp, 0, sizeof cmp);
    rc = cli_solve_compare(A, k, &o, !no_seq, 1, &cmp);
    if (rc == CLI_OK) rc = single_cg(A, &o, 0, &c1);
    if (rc == CLI_OK) rc = single_cg(A, &o, 1, &c1e);
    if (rc != CLI_OK && from_dir) { /* e.g. Jacobi on a zero diagonal: reported, go on */
      printf("%s: skipped (the solver refused it, see above)\n", sp->name);
      rc = CLI_OK;
      cli_solve_compare_free(&cmp);
      cli_solve_result_free(&c1);
      cli_solve_result_free(&c1e);
      coal_mat_destroy(&A);
      continue;
    }
    double spmv = spmv_us(A);
    double floor_us = CG_VECTOR_PASSES * 8.0 * (double)n / 4.0e6; /* us at 4 TB/s, for scale */
    if (rc == CLI_OK) {
      double bt = cmp.block.setup_s + cmp.block.solve_s;
      double st_seq = cmp.have_seq ? cmp.seq.setup_s + cmp.seq.solve_s : NAN;
      double per_it = c1.iterations ? 1e6 * c1.solve_s / c1.iterations : NAN;
      printf("%s: %lld rows, %lld nonzeros\n", sp->name, (long long)n, (long long)nnz);
      printf("  Block-CG   %3lld RHS: setup %.3f s + solve %.3f s = %.3f s, %d block iterations"
             " (per column max %d, mean %.1f), max rel. true residual %.2e%s\n",
             (long long)k, cmp.block.setup_s, cmp.block.solve_s, bt, cmp.block.iterations,
             cmp.block.max_its, (double)cmp.block.sum_its / (double)k, cmp.block.max_rel,
             cmp.block.all_converged ? "" : " NOT CONVERGED");
      if (cmp.have_seq)
        printf("  CG x %lld sequential (check every %d): %.3f s, per column max %d, mean %.1f "
               "iterations, max rel. %.2e%s; speed-up of Block-CG %.2fx\n",
               (long long)k, o.check_every > 0 ? o.check_every : COAL_CG_CHECK_EVERY, st_seq,
               cmp.seq.max_its, (double)cmp.seq.sum_its / (double)k, cmp.seq.max_rel,
               cmp.seq.all_converged ? "" : " NOT CONVERGED", st_seq / bt);
      if (cmp.have_exact)
        printf("  CG x %lld checking every iteration: %.3f s (speed-up %.2fx), per column max %d, "
               "mean %.1f iterations; Block-CG needs more iterations than CG on %d column(s)\n",
               (long long)k, cmp.seq_exact.setup_s + cmp.seq_exact.solve_s,
               (cmp.seq_exact.setup_s + cmp.seq_exact.solve_s) / bt, cmp.seq_exact.max_its,
               (double)cmp.seq_exact.sum_its / (double)k, cmp.block_more);
      printf("  A to the backend before the timed runs (one product): %.3f s\n", cmp.upload_s);
      printf("  CG 1 RHS: %.4f s solve (check every %d), %d iterations, %.1f us per iteration;"
             " check every 1: %.4f s; one SpMV %.1f us, %d vector passes >= %.1f us at 4 TB/s\n",
             c1.solve_s, COAL_CG_CHECK_EVERY, c1.iterations, per_it, c1e.solve_s, spmv,
             CG_VECTOR_PASSES, floor_us);
      if (csv) {
        fprintf(csv, "%s,%s,", sp->name, coal_backend_name(coal_ctx_backend(ctx)));
        cli_csv_str(csv, coal_ctx_device_name(ctx));
        fprintf(csv, ",%lld,%lld,%lld,%s,%g,%.6f,%.6f,%d,%d,%.2f,%.3e,", (long long)n,
                (long long)nnz, (long long)k, coal_pc_name(o.pc), o.rtol, cmp.block.setup_s,
                cmp.block.solve_s, cmp.block.iterations, cmp.block.max_its,
                (double)cmp.block.sum_its / (double)k, cmp.block.max_rel);
        if (cmp.have_seq)
          fprintf(csv, "%.6f,%d,%.2f,%.3e,%.3f,%d,", st_seq, cmp.seq.max_its,
                  (double)cmp.seq.sum_its / (double)k, cmp.seq.max_rel, st_seq / bt,
                  cmp.block_more);
        else
          fputs(",,,,,,", csv);
        fprintf(csv, "%.6f,%d,%.2f,%.6f,%.2f,%.2f\n", c1.solve_s, c1.iterations, per_it,
                c1e.solve_s, spmv, floor_us);
      }
      /* a folder may hold symmetric indefinite matrices: reported above, not a failure */
      if (!from_dir && (!cmp.block.all_converged || (cmp.have_seq && !cmp.seq.all_converged) ||
                        !c1.all_converged))
        rc = CLI_FAIL;
    }
    cli_solve_compare_free(&cmp);
    cli_solve_result_free(&c1);
    cli_solve_result_free(&c1e);
    coal_mat_destroy(&A);
  }
  return cli_bench_end(&b, csv, NULL, &ctx, rc);
}
