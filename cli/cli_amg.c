/* `coalesce amg SPEC`: the smoothed-aggregation AMG hierarchy of a matrix (levels, sizes,
 * memory, complexities, setup time per phase), and the AMG helpers that solve, eigs, demo and
 * bench amg share: the --amg-* options and attaching a hierarchy to a solver. */
#include "cli.h"

#include <math.h>
#include <string.h>

/* ---- options ----------------------------------------------------------------------------- */

void cli_amg_opts_default(cli_amg_opts *o) {
  memset(o, 0, sizeof *o);
  o->theta = COAL_AMG_DEFAULT_THETA, o->smoother = COAL_AMG_CHEBYSHEV, o->degree = 2;
  o->coarse_size = COAL_AMG_DEFAULT_COARSE, o->max_levels = COAL_AMG_MAX_LEVELS;
  o->cycle = COAL_AMG_V_CYCLE;
}

/* The options taking one value, parsed into o; -1 (message printed) for a bad value. */
static int amg_value(const char *name, const char *v, cli_amg_opts *o) {
  if (!strcmp(name, "--amg-theta")) {
    if (cli_parse_f64(v, &o->theta) || !(o->theta >= 0 && o->theta < 1)) {
      cli_usage_error("--amg-theta: '%s' is not a number in [0, 1)", v);
      return -1;
    }
  } else if (!strcmp(name, "--amg-smoother")) {
    if (coal_amg_smoother_parse(v, &o->smoother)) {
      cli_usage_error("--amg-smoother: '%s' is not chebyshev or l1-jacobi", v);
      return -1;
    }
  } else { /* --amg-cycle */
    if (strcmp(v, "v") && strcmp(v, "w")) {
      cli_usage_error("--amg-cycle: '%s' is not v or w", v);
      return -1;
    }
    o->cycle = v[0] == 'w' ? COAL_AMG_W_CYCLE : COAL_AMG_V_CYCLE;
  }
  return 1;
}

int cli_amg_opt(int argc, char **argv, int *i, cli_amg_opts *o) {
  static const char *const valued[] = {"--amg-theta", "--amg-smoother", "--amg-cycle"};
  const char *v = NULL;
  int64_t x = 0;
  int r;
  if (strncmp(argv[*i], "--amg-", 6)) return 0;
  for (int p = 0; p < 3; p++)
    if ((r = cli_opt_value(argc, argv, i, valued[p], &v)) != 0) {
      if (r > 0) r = amg_value(valued[p], v, o);
      o->given |= r > 0;
      return r;
    }
  if ((r = cli_int_opt(argc, argv, i, "--amg-degree", 1, 16, &x)) != 0) {
    if (r > 0) o->degree = (int)x;
  } else if ((r = cli_int_opt(argc, argv, i, "--amg-coarse-size", 1, INT32_MAX, &x)) != 0) {
    if (r > 0) o->coarse_size = x;
  } else if ((r = cli_int_opt(argc, argv, i, "--amg-max-levels", 1, COAL_AMG_MAX_LEVELS, &x)) !=
             0) {
    if (r > 0) o->max_levels = (int)x;
  }
  o->given |= r > 0;
  return r;
}

int cli_amg_check(const cli_amg_opts *o, coal_pc_type pc) {
  if (o->given && pc != COAL_PC_AMG) return cli_usage_error("the --amg-* options need --pc amg");
  return CLI_OK;
}

void cli_amg_describe(const cli_amg_opts *o, char *buf, size_t len) {
  snprintf(buf, len, "theta %g, %s degree %d, coarse size %lld, max levels %d, %s-cycle", o->theta,
           coal_amg_smoother_name(o->smoother), o->degree, (long long)o->coarse_size, o->max_levels,
           o->cycle == COAL_AMG_W_CYCLE ? "W" : "V");
}

/* ---- building and attaching -------------------------------------------------------------- */

int cli_amg_build(coal_mat A, const cli_amg_opts *o, coal_amg *amg) {
  coal_ctx ctx = coal_mat_ctx(A);
  coal_status st;
  *amg = NULL;
  if ((st = coal_amg_create(A, amg)) || (st = coal_amg_set_theta(*amg, o->theta)) ||
      (st = coal_amg_set_smoother(*amg, o->smoother, o->degree)) ||
      (st = coal_amg_set_coarse_size(*amg, o->coarse_size)) ||
      (st = coal_amg_set_max_levels(*amg, o->max_levels)) ||
      (st = coal_amg_set_cycle(*amg, o->cycle)) || (st = coal_amg_setup(*amg)) ||
      (st = coal_ctx_sync(ctx))) {
    coal_amg_destroy(amg);
    return cli_fail(ctx, st, "AMG setup");
  }
  return CLI_OK;
}

/* The hierarchy of o->given options, reserved for `width` columns, into *amg. */
static int build_reserved(coal_mat A, const cli_amg_opts *o, int64_t width, coal_amg *amg) {
  coal_status st;
  if (cli_amg_build(A, o, amg) != CLI_OK) return CLI_FAIL;
  if ((st = coal_amg_reserve(*amg, width))) {
    coal_amg_destroy(amg);
    return cli_fail(coal_mat_ctx(A), st, "AMG cycle blocks for %lld columns", (long long)width);
  }
  return CLI_OK;
}

int cli_amg_attach(coal_solver S, coal_eigen E, coal_mat A, const cli_amg_opts *o, int64_t width,
                   coal_amg *amg) {
  coal_status st;
  if (o->given && build_reserved(A, o, width, amg) != CLI_OK) return CLI_FAIL;
  if (!o->given)
    st = S ? coal_solver_set_pc(S, COAL_PC_AMG) : coal_eigen_set_pc(E, COAL_PC_AMG);
  else if (S)
    st = coal_solver_set_pc_user(S, coal_amg_pc_apply, *amg);
  else
    st = coal_eigen_set_pc_user(E, coal_amg_pc_apply, *amg);
  return st ? cli_fail(coal_mat_ctx(A), st, "AMG preconditioner") : CLI_OK;
}

/* ---- the hierarchy ----------------------------------------------------------------------- */

double cli_amg_a_bytes(int64_t rows, int64_t nnz) {
  return 4.0 * (double)(rows + 1) + 12.0 * (double)nnz;
}

void cli_amg_print_info(const coal_amg_info *in) {
  const double mb = 1e-6, a_bytes = cli_amg_a_bytes(in->rows[0], in->nnz[0]);
  printf("  %-5s %10s %11s %8s %11s %10s %8s %5s %6s\n", "level", "rows", "nnz", "nnz/row", "P nnz",
         "MB", "rho", "MIS", "PtAP");
  for (int l = 0; l < in->levels; l++) {
    const int last = l == in->levels - 1;
    char rho[32], mis[16];
    cli_fmt_num(rho, sizeof rho, in->rho[l] > 0 ? in->rho[l] : (double)NAN, "%.3f");
    if (last)
      snprintf(mis, sizeof mis, "-");
    else
      snprintf(mis, sizeof mis, "%d", in->mis_rounds[l]);
    const char *algo = last ? "-" : in->galerkin_algo[l] == (int)COAL_SPGEMM_TILE ? "tile" : "rows";
    printf("  %-5d %10lld %11lld %8.2f %11lld %10.3f %8s %5s %6s\n", l, (long long)in->rows[l],
           (long long)in->nnz[l], in->rows[l] ? (double)in->nnz[l] / (double)in->rows[l] : 0.0,
           (long long)in->p_nnz[l], mb * (double)in->bytes[l], rho, mis, algo);
  }
  printf("  (bytes: A_l, P_l and R_l = P_l^T as CSR; rho: Lanczos estimate of rho(D^-1 A_l); MIS:"
         " rounds of the distance-2 MIS that built level l+1; PtAP: the SpGEMM algorithm of the "
         "Galerkin"
         " product that built level l+1)\n");
  printf("  %-11s grid %.3f, operator %.3f\n", "complexity", in->grid_complexity,
         in->operator_complexity);
  printf("  %-11s hierarchy %.3f MB = %.2fx A (%.3f MB); coarse factor %.3f MB; cycle blocks "
         "%.3f MB\n",
         "memory", mb * (double)in->hierarchy_bytes, (double)in->hierarchy_bytes / a_bytes,
         mb * a_bytes, mb * (double)in->coarse_bytes, mb * (double)in->workspace_bytes);
  const int64_t nc = in->rows[in->levels - 1];
  if (in->coarse_direct)
    printf("  %-11s %lld rows, dense Cholesky factor, rank %d\n", "coarsest", (long long)nc,
           in->coarse_rank);
  else
    printf("  %-11s %lld rows, too large for the dense factor: smoothed only\n", "coarsest",
           (long long)nc);
  printf("  %-11s %.4f s:", "setup", in->setup_seconds);
  for (int p = 0; p < COAL_AMG_NPHASES; p++)
    printf("%s %s %.4f", p ? "," : "", coal_amg_phase_name((coal_amg_phase)p),
           in->phase_seconds[p]);
  putchar('\n');
}

/* ---- coalesce amg ------------------------------------------------------------------------ */

int cli_amg(int argc, char **argv) {
  cli_common c = {COAL_BACKEND_AUTO, COAL_F64};
  cli_amg_opts o;
  cli_amg_opts_default(&o);
  const char *spec_text = NULL;
  for (int i = 1; i < argc; i++) {
    int r = cli_parse_common(argc, argv, &i, &c);
    if (!r) r = cli_amg_opt(argc, argv, &i, &o);
    if (r < 0) return CLI_USAGE;
    if (r > 0) continue;
    if (!strncmp(argv[i], "--", 2)) return cli_usage_error("amg: unknown option '%s'", argv[i]);
    if (spec_text) return cli_usage_error("amg: one matrix only ('%s' is extra)", argv[i]);
    spec_text = argv[i];
  }
  if (!spec_text) return cli_usage_error("amg needs a matrix: coalesce amg A.mtx [options]");
  if (c.dtype != COAL_F64) return cli_usage_error("amg: the hierarchy is built in fp64");
  cli_spec sp;
  if (cli_spec_parse(spec_text, &sp) != CLI_OK) return CLI_USAGE;
  coal_ctx ctx = NULL;
  coal_mat A = NULL;
  coal_amg amg = NULL;
  coal_amg_info in;
  coal_status st;
  int64_t n = 0, nnz = 0;
  int rc = cli_ctx_create(c.backend, &ctx);
  if (rc == CLI_OK && (st = cli_spec_load(ctx, &sp, COAL_F64, &A)))
    rc = cli_fail(ctx, st, "loading %s", sp.text);
  if (rc == CLI_OK) {
    char desc[256], opts[160];
    coal_mat_size(A, &n, NULL, &nnz);
    cli_spec_describe(&sp, desc, sizeof desc);
    cli_amg_describe(&o, opts, sizeof opts);
    printf("coalesce amg: %s, %lld rows, %lld nonzeros\n", sp.name, (long long)n, (long long)nnz);
    printf("  %-11s %s\n", "matrix", desc);
    printf("  %-11s smoothed aggregation, %s\n", "options", opts);
    printf("  %-11s %s (%s)\n", "backend", coal_backend_name(coal_ctx_backend(ctx)),
           coal_ctx_device_name(ctx));
    rc = cli_amg_build(A, &o, &amg);
  }
  if (rc == CLI_OK && (st = coal_amg_get_info(amg, &in))) rc = cli_fail(ctx, st, "AMG information");
  if (rc == CLI_OK) cli_amg_print_info(&in);
  coal_amg_destroy(&amg);
  coal_mat_destroy(&A);
  coal_ctx_destroy(&ctx);
  return rc;
}
