/* `coalesce bench amg`: options, the matrix list and the --spd-set list, the printed report,
 * CSV and JSON (one row per matrix, the same fields in both). The measurements are in
 * cli/cli_bench_amg.c. */
#include "cli_bench_amg.h"

#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const large_specs[] = {"lap3d:128", "lap3d:100", "lap3d27:100",
                                          "aniso:100:1:1:1e-3"};
/* The SPD matrices of ../shared/matrices/SOURCES.md (section "Symmetric positive definite",
 * without the mass matrices lund_b and bcsstm26): file names without .mtx.gz. */
static const char *const spd_patterns[] = {"bcsstk*",        "nos*",     "*_bus",  "gr_30_30",
                                           "Trefethen_2000", "mhd4800b", "bodyy5", "wathen100",
                                           "bloweybq",       "lund_a"};

/* ---- one row: fields for the CSV and the JSON -------------------------------------------- */

static const char *const FIELDS[] = {"rows",
                                     "nnz",
                                     "levels",
                                     "grid_complexity",
                                     "op_complexity",
                                     "hierarchy_bytes",
                                     "a_bytes",
                                     "memory_ratio",
                                     "coarse_rows",
                                     "setup_ms",
                                     "setup_ms_min",
                                     "resetup_ms",
                                     "vcycle_1_ms",
                                     "nrhs",
                                     "vcycle_nrhs_ms",
                                     "pcg_amg_its",
                                     "pcg_amg_converged",
                                     "pcg_amg_setup_s",
                                     "pcg_amg_solve_s",
                                     "pcg_amg_relres",
                                     "cg_jacobi_its",
                                     "cg_jacobi_converged",
                                     "cg_jacobi_solve_s",
                                     "cg_jacobi_relres",
                                     "bcg_amg_its",
                                     "bcg_amg_converged",
                                     "bcg_amg_setup_s",
                                     "bcg_amg_solve_s",
                                     "bcg_amg_total_s",
                                     "bcg_amg_relres",
                                     "lobpcg_amg_its",
                                     "lobpcg_amg_converged",
                                     "lobpcg_amg_s",
                                     "lobpcg_amg_max_res",
                                     "lobpcg_amg_eig_err"};
enum { NFIELDS = sizeof FIELDS / sizeof FIELDS[0] };

/* A solve's iterations, verdict, times and residual (NaN where it did not run). */
static double *put_solve(double *v, const amg_solve_stat *s, int setup, int total) {
  *v++ = s->ran ? s->its : NAN;
  *v++ = s->ran ? s->converged : NAN;
  if (setup) *v++ = s->ran ? s->setup_s : NAN;
  *v++ = s->ran ? s->solve_s : NAN;
  if (total) *v++ = s->ran ? s->total_s : NAN;
  *v++ = s->ran ? s->relres : NAN;
  return v;
}

static void row_values(const amg_bench *R, const amg_row *w, double v[NFIELDS]) {
  const coal_amg_info *in = &w->info;
  const int h = w->have_info;
  double *p = v;
  *p++ = (double)w->n, *p++ = (double)w->nnz;
  *p++ = h ? in->levels : NAN, *p++ = h ? in->grid_complexity : NAN;
  *p++ = h ? in->operator_complexity : NAN, *p++ = h ? (double)in->hierarchy_bytes : NAN;
  *p++ = cli_amg_a_bytes(w->n, w->nnz), *p++ = w->mem_ratio;
  *p++ = h ? (double)in->rows[in->levels - 1] : NAN;
  *p++ = w->setup_ms, *p++ = w->setup_min_ms, *p++ = w->resetup_ms, *p++ = w->v1_ms;
  *p++ = (double)R->nrhs;
  *p++ = w->vk_ms;
  p = put_solve(p, &w->pcg, 1, 0);
  p = put_solve(p, &w->jac, 0, 0);
  p = put_solve(p, &w->bcg, 1, 1);
  *p++ = w->eig.ran ? w->eig.its : NAN, *p++ = w->eig.ran ? w->eig.converged : NAN;
  *p++ = w->eig.ran ? w->eig.seconds : NAN, *p++ = w->eig.ran ? w->eig.max_res : NAN;
  *p++ = w->eig.ran ? w->eig.err : NAN;
}

/* Time to a solution of one right-hand side, setup included: "amg", "jacobi" or "none". */
static const char *winner(const amg_row *w) {
  const int a = w->pcg.converged, j = w->jac.converged;
  if (!a && !j) return "none";
  if (a != j) return a ? "amg" : "jacobi";
  return w->pcg.total_s < w->jac.total_s ? "amg" : "jacobi";
}

static void put_csv_row(amg_bench *R, const amg_row *w, const char *set) {
  FILE *f = R->csv;
  double v[NFIELDS];
  row_values(R, w, v);
  cli_csv_str(f, w->sp->name);
  fprintf(f, ",%s,%s,", set, coal_backend_name(coal_ctx_backend(R->ctx)));
  cli_csv_str(f, coal_ctx_device_name(R->ctx));
  for (int i = 0; i < NFIELDS; i++) {
    fputc(',', f);
    cli_put_num(f, v[i], "");
  }
  fprintf(f, ",%s,", winner(w));
  cli_csv_str(f, w->status);
  fputc('\n', f);
}

static void put_json_row(amg_bench *R, const amg_row *w, const char *set) {
  FILE *f = R->json;
  double v[NFIELDS];
  row_values(R, w, v);
  fprintf(f, "%s\n    {\"matrix\": ", R->rows_written ? "," : "");
  cli_json_str(f, w->sp->name);
  fprintf(f, ", \"set\": \"%s\"", set);
  for (int i = 0; i < NFIELDS; i++) {
    fprintf(f, ", \"%s\": ", FIELDS[i]);
    cli_put_num(f, v[i], "null");
  }
  fprintf(f, ", \"winner\": \"%s\", \"status\": ", winner(w));
  cli_json_str(f, w->status);
  fputc('}', f);
}

static void write_row(amg_bench *R, const amg_row *w, const char *set) {
  if (R->csv) put_csv_row(R, w, set);
  if (R->json) put_json_row(R, w, set);
  R->rows_written++;
}

/* ---- printed report ---------------------------------------------------------------------- */

static const char *verdict(const amg_solve_stat *s) { return s->converged ? "" : " NOT CONVERGED"; }

static void print_full(const amg_bench *R, const amg_row *w) {
  const coal_amg_info *in = &w->info;
  printf("== %s: %lld rows, %lld nonzeros\n", w->sp->name, (long long)w->n, (long long)w->nnz);
  if (w->have_info) {
    printf("  %-13s %d levels (rows", "hierarchy", in->levels);
    for (int l = 0; l < in->levels; l++) printf("%s%lld", l ? ", " : " ", (long long)in->rows[l]);
    printf("), grid %.3f, operator %.3f, memory %.2fx A\n", in->grid_complexity,
           in->operator_complexity, w->mem_ratio);
    printf("  %-13s %.3f ms median (min %.3f ms); phases of the last:", "AMG setup", w->setup_ms,
           w->setup_min_ms);
    for (int p = 0; p < COAL_AMG_NPHASES; p++)
      printf("%s %s %.3f", p ? "," : "", coal_amg_phase_name((coal_amg_phase)p),
             1e3 * in->phase_seconds[p]);
    printf(" ms\n");
  }
  if (!isnan(w->resetup_ms)) {
    const coal_amg_info *ri = &w->resetup_info;
    printf("  %-13s %.3f ms median (%.2f of the setup), numeric only; phases of the last:",
           "AMG re-setup", w->resetup_ms, w->resetup_ms / w->setup_ms);
    for (int p = 0; p < COAL_AMG_NPHASES; p++)
      printf("%s %s %.3f", p ? "," : "", coal_amg_phase_name((coal_amg_phase)p),
             1e3 * ri->phase_seconds[p]);
    printf(" ms; kept %.1f MB\n", (double)ri->reuse_bytes / 1e6);
  }
  if (!isnan(w->v1_ms))
    printf("  %-13s 1 RHS %.3f ms; %lld RHS %.3f ms (%.4f ms per RHS)\n", "V-cycle", w->v1_ms,
           (long long)R->nrhs, w->vk_ms, w->vk_ms / (double)R->nrhs);
  if (w->pcg.ran)
    printf("  %-13s %d iterations, solve %.3f ms after setup (setup %.3f ms), true rel. residual "
           "%.2e%s\n",
           "PCG+AMG", w->pcg.its, 1e3 * w->pcg.solve_s, 1e3 * w->pcg.setup_s, w->pcg.relres,
           verdict(&w->pcg));
  if (w->jac.ran) {
    printf("  %-13s %d iterations (checked every %d), solve %.3f ms, true rel. residual %.2e%s",
           "CG+Jacobi", w->jac.its, COAL_CG_CHECK_EVERY, 1e3 * w->jac.solve_s, w->jac.relres,
           verdict(&w->jac));
    if (w->pcg.ran)
      printf("; time CG+Jacobi / PCG+AMG: solve %.2f, setup included %.2f",
             w->jac.solve_s / w->pcg.solve_s, w->jac.total_s / w->pcg.total_s);
    putchar('\n');
  }
  if (w->bcg.ran)
    printf("  %-13s %lld RHS: %d block iterations, setup included %.4f s, excluded %.4f s, "
           "largest true rel. residual %.2e%s\n",
           "Block-CG+AMG", (long long)R->nrhs, w->bcg.its, w->bcg.total_s, w->bcg.solve_s,
           w->bcg.relres, verdict(&w->bcg));
  if (w->eig.ran)
    printf("  %-13s %d smallest to %.0e: %d iterations, %d converged, %.3f s (AMG setup "
           "included), largest residual %.2e, eigenvalue error %.2e\n",
           "LOBPCG+AMG", AMG_EIG_NEV, AMG_EIG_TOL, w->eig.its, w->eig.converged, w->eig.seconds,
           w->eig.max_res, w->eig.err);
  printf("  %-13s %s\n", "status", w->status);
}

static void print_spd_head(const amg_bench *R) {
  printf("spd-set: CG+AMG against CG+Jacobi, 1 RHS, rtol %.0e in true residual; winner: the "
         "shorter time to solution, AMG setup included (medians of %lld after %d warm-up)\n",
         R->rtol, (long long)R->b.reps, AMG_WARMUP);
  printf("  %-16s %8s %9s %3s %6s | %7s %9s %9s | %7s %9s | %-6s %s\n", "matrix", "rows", "nnz",
         "lev", "op.cx", "AMG its", "setup s", "solve s", "Jac its", "solve s", "winner", "status");
}

static void print_spd(const amg_row *w) {
  char lev[8], cx[16], ai[16], as[16], ao[16], ji[16], js[16];
  cli_fmt_num(lev, sizeof lev, w->have_info ? w->info.levels : NAN, "%.0f");
  cli_fmt_num(cx, sizeof cx, w->have_info ? w->info.operator_complexity : NAN, "%.3f");
  cli_fmt_num(ai, sizeof ai, w->pcg.ran ? w->pcg.its : NAN, "%.0f");
  cli_fmt_num(as, sizeof as, w->pcg.ran ? w->pcg.setup_s : NAN, "%.4f");
  cli_fmt_num(ao, sizeof ao, w->pcg.ran ? w->pcg.solve_s : NAN, "%.4f");
  cli_fmt_num(ji, sizeof ji, w->jac.ran ? w->jac.its : NAN, "%.0f");
  cli_fmt_num(js, sizeof js, w->jac.ran ? w->jac.solve_s : NAN, "%.4f");
  printf("  %-16s %8lld %9lld %3s %6s | %7s %9s %9s | %7s %9s | %-6s %s\n", w->sp->name,
         (long long)w->n, (long long)w->nnz, lev, cx, ai, as, ao, ji, js, winner(w), w->status);
}

/* ---- the command ------------------------------------------------------------------------- */

static int parse(amg_bench *R, int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    const char *v = NULL;
    int64_t x = 0;
    int r = cli_amg_opt(argc, argv, &i, &R->amg);
    if (!r) r = cli_bench_opt(argc, argv, &i, &R->b);
    if (r < 0) return CLI_USAGE;
    if (r > 0) continue;
    if ((r = cli_int_opt(argc, argv, &i, "--nrhs", 1, 4096, &R->nrhs)) ||
        (r = cli_int_opt(argc, argv, &i, "--eig-reps", 1, 1000, &R->eig_reps))) {
      if (r < 0) return CLI_USAGE;
      continue;
    }
    if ((r = cli_int_opt(argc, argv, &i, "--maxit", 1, 100000000, &x))) {
      if (r < 0) return CLI_USAGE;
      R->maxit = (int)x;
      continue;
    }
    if ((r = cli_opt_value(argc, argv, &i, "--rtol", &v))) {
      if (r < 0) return CLI_USAGE;
      if (cli_parse_f64(v, &R->rtol) || !(R->rtol > 0 && R->rtol < 1))
        return cli_usage_error("--rtol: '%s' is not a number in (0, 1)", v);
      continue;
    }
    int *flag = !strcmp(argv[i], "--no-eigs")    ? &R->no_eigs
                : !strcmp(argv[i], "--no-block") ? &R->no_block
                : !strcmp(argv[i], "--spd-set")  ? &R->spd_set
                                                 : NULL;
    if (flag) {
      *flag = 1;
      continue;
    }
    return cli_usage_error("bench amg: unknown option '%s'", argv[i]);
  }
  if (R->b.c.dtype != COAL_F64) return cli_usage_error("bench amg runs in fp64");
  if (R->spd_set && !R->b.dir) return cli_usage_error("bench amg: --spd-set needs --matrices DIR");
  if (R->b.dir && !R->spd_set)
    return cli_usage_error("bench amg: --matrices DIR is the folder of --spd-set");
  return CLI_OK;
}

static int spd_name(const char *name) {
  for (size_t p = 0; p < sizeof spd_patterns / sizeof spd_patterns[0]; p++)
    if (!fnmatch(spd_patterns[p], name, 0)) return 1;
  return 0;
}

/* The SPD matrices of the folder: one row each, failures reported in the row. */
static void run_spd_set(amg_bench *R) {
  cli_matrix_list L;
  memset(&L, 0, sizeof L);
  if (cli_matrix_list_finish(&L, R->b.dir, 0) != CLI_OK) {
    cli_matrix_list_free(&L);
    return;
  }
  print_spd_head(R);
  int count = 0;
  for (int m = 0; m < L.n; m++) {
    if (!spd_name(L.specs[m].name)) continue;
    amg_row w;
    amg_bench_matrix(R, &L.specs[m], 0, &w);
    print_spd(&w);
    write_row(R, &w, "spd");
    count++;
  }
  if (!count) printf("  no SPD matrix of the list in %s\n", R->b.dir);
  cli_matrix_list_free(&L);
}

static void print_head(amg_bench *R) {
  char opts[160];
  cli_amg_describe(&R->amg, opts, sizeof opts);
  printf("coalesce bench amg: %s; rtol %.0e, %lld RHS for Block-CG and the wide V-cycle, median "
         "of %lld after %d warm-up, backend %s (%s)\n",
         opts, R->rtol, (long long)R->nrhs, (long long)R->b.reps, AMG_WARMUP,
         coal_backend_name(coal_ctx_backend(R->ctx)), coal_ctx_device_name(R->ctx));
  if (R->csv) {
    fputs("matrix,set,backend,device", R->csv);
    for (int i = 0; i < NFIELDS; i++) fprintf(R->csv, ",%s", FIELDS[i]);
    fputs(",winner,status\n", R->csv);
  }
  if (R->json) {
    fprintf(R->json, "{\"benchmark\": \"amg\", \"backend\": \"%s\", \"device\": ",
            coal_backend_name(coal_ctx_backend(R->ctx)));
    cli_json_str(R->json, coal_ctx_device_name(R->ctx));
    fputs(", \"amg\": ", R->json);
    cli_json_str(R->json, opts);
    fprintf(R->json, ", \"rtol\": %g, \"nrhs\": %lld, \"reps\": %lld, \"eig_reps\": %lld,\n",
            R->rtol, (long long)R->nrhs, (long long)R->b.reps, (long long)R->eig_reps);
    fputs("  \"results\": [", R->json);
  }
}

int cli_bench_amg(int argc, char **argv) {
  amg_bench R;
  memset(&R, 0, sizeof R);
  R.b.c.backend = COAL_BACKEND_AUTO, R.b.c.dtype = COAL_F64, R.b.reps = 5;
  R.rtol = 1e-8, R.maxit = 10000, R.nrhs = 32, R.eig_reps = 1;
  cli_amg_opts_default(&R.amg);
  R.b.list.specs = calloc((size_t)argc + 1, sizeof(cli_spec));
  if (!R.b.list.specs) return cli_fail(NULL, COAL_ERR_MEMORY, "matrix list");
  int rc = parse(&R, argc, argv), failed = 0;
  if (rc == CLI_OK && R.b.list.n == 0 && !R.b.large && !R.spd_set)
    rc = cli_spec_parse("lap3d:32", &R.b.list.specs[R.b.list.n++]); /* quick on the host */
  if (rc == CLI_OK) rc = cli_matrix_list_finish(&R.b.list, NULL, 0);
  for (size_t p = 0; rc == CLI_OK && R.b.large && p < sizeof large_specs / sizeof *large_specs; p++)
    rc = cli_matrix_list_add(&R.b.list, large_specs[p]);
  if (rc == CLI_OK) rc = cli_ctx_create(R.b.c.backend, &R.ctx);
  if (rc == CLI_OK && R.b.csv_path && !(R.csv = cli_open_output(R.b.csv_path))) rc = CLI_FAIL;
  if (rc == CLI_OK && R.b.json_path && !(R.json = cli_open_output(R.b.json_path))) rc = CLI_FAIL;
  if (rc == CLI_OK) {
    print_head(&R);
    for (int m = 0; m < R.b.list.n; m++) {
      amg_row w;
      if (amg_bench_matrix(&R, &R.b.list.specs[m], 1, &w) != CLI_OK) failed = 1;
      print_full(&R, &w);
      write_row(&R, &w, "list");
      amg_targets_update(&R, &w);
    }
    if (R.b.list.n) amg_targets_print(&R);
    if (R.spd_set) run_spd_set(&R);
    if (R.json) {
      fputs("\n  ],\n", R.json);
      amg_targets_json(&R, R.json);
      fputs("}\n", R.json);
    }
    rc = failed ? CLI_FAIL : CLI_OK;
  }
  return cli_bench_end(&R.b, R.csv, R.json, &R.ctx, rc);
}
