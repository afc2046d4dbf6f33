/* `coalesce`: command-line front end of the library (info, demo, solve, eigs, amg, bench). */
#include "cli.h"

#include <string.h>

/* The usage, one section per command: `coalesce help` prints them all, `coalesce CMD --help`
 * (or -h, or `coalesce help CMD`) that command's alone, each followed by the common options.
 * A section is a printf format that may use one int, the default CG check interval. */
typedef struct {
  const char *name, *text;
} help_section;

static const help_section sections[] = {
    {"demo",
     "  demo [--n N] [--nrhs K]  3-D Poisson (7-point, N^3; N = 128 on a GPU, 32 on the\n"
     "                          host) with K = 32 random right-hand sides: Block-CG against\n"
     "                          K single-RHS CG solves, timed and checked\n"
     "      --pc jacobi|amg|both   preconditioners side by side (default both; where AMG\n"
     "                          fails on a backend the demo says so and keeps Jacobi)\n"
     "      --amg-*             AMG options as for amg\n"},
    {"info",
     "  info SPEC...            sizes, row lengths, symmetry, FastLoad format statistics and\n"
     "                          the kernel the library picks; --height H as for bench spmv\n"},
    {"bench spmv",
     "  bench spmv [SPEC...]    SpMV kernels against each other and cuSPARSE; options:\n"
     "      --matrices DIR      also every *.mtx.gz in DIR\n"
     "      --large             also lap3d:128, lap3d27:100, powerlaw:1048576:12\n"
     "      --reps N            timed repetitions (default 100, after 10 warm-up runs)\n"
     "      --height H          FastLoad block height limit (default 8)\n"
     "      --csv FILE          one row per matrix and kernel\n"
     "      --json FILE         the same as JSON\n"},
    {"bench spmm",
     "  bench spmm [SPEC...]    SpMM (Y = A X, X n x k) kernels in each block layout against\n"
     "                          cuSPARSE, and how well the kernel selection does; options:\n"
     "      --matrices DIR, --large, --csv FILE, --json FILE   as for bench spmv\n"
     "      --k LIST            numbers of columns (default 1,4,8,16,32,64,128)\n"
     "      --layout row|col|both   block layouts of our kernels (default both)\n"
     "      --reps N            timed repetitions (default 30, after 5 warm-up runs)\n"
     "      --height H          Swift block height limit (default 8)\n"},
    {"bench spgemm",
     "  bench spgemm [SPEC...]  TileSpGEMM (A*A, A*A^T; P^T A P on lap3d specs) against\n"
     "                          cuSPARSE SpGEMM, checked against the host twin; options:\n"
     "      --matrices DIR, --csv FILE   as for bench spmv\n"
     "      --large             also lap3d:128, lap3d27:64, powerlaw:1048576:12\n"
     "      --reps N            timed repetitions (default 10, after 2 warm-up runs)\n"},
    {"solve",
     "  solve SPEC [options]    A X = B by Block-CG or CG (SPEC: a .mtx file or a generator)\n"
     "      --rhs B.mtx         right-hand sides (array or coordinate file), or\n"
     "      --nrhs K            K random right-hand sides (default 1)\n"
     "      --method blockcg|cg (default blockcg; cg solves the columns one by one)\n"
     "      --pc none|jacobi|amg   preconditioner (default none); amg: one V-cycle of\n"
     "                          smoothed-aggregation AMG, options --amg-* as for amg\n"
     "      --rtol R --atol A   converged when the true residual ||b-Ax|| <= max(R ||b||, A)\n"
     "                          (default 1e-8, 0); a column whose recursive residual meets it\n"
     "                          and true residual does not restarts from the true residual, up\n"
     "                          to 3 times, else it ends 'stagnated'\n"
     "      --maxit N           iteration limit per column, restarts included (default 10000)\n"
     "      --check-every N     CG: convergence check interval (default %d)\n"
     "      --out X.mtx         write the solution (Matrix Market array)\n"
     "      --history FILE      residual norms per iteration and column (CSV)\n"
     "                          exit status 1 when a column did not converge\n"},
    {"bench solve",
     "  bench solve [SPEC...]   Block-CG against sequential CG and one SpMV per iteration;\n"
     "      --nrhs K (default 32), --pc, --amg-*, --rtol, --maxit, --csv FILE; --large:\n"
     "                          lap3d:128\n"},
    {"amg",
     "  amg SPEC [options]      the smoothed-aggregation AMG hierarchy of A: levels, rows,\n"
     "                          nonzeros and bytes per level, grid and operator complexity,\n"
     "                          memory against A, setup time per phase, MIS rounds, rho\n"
     "      --amg-theta T       strength threshold in [0, 1) (default 0.02)\n"
     "      --amg-smoother chebyshev|l1-jacobi   (default chebyshev)\n"
     "      --amg-degree D      Chebyshev degree or l1-Jacobi sweeps, 1..16 (default 2)\n"
     "      --amg-coarse-size N coarsest level at most N rows (default 1000)\n"
     "      --amg-max-levels L  at most L levels, 1..24 (default 24)\n"
     "      --amg-cycle v|w     (default v)\n"},
    {"bench amg",
     "  bench amg [SPEC...]     AMG timed (median after a warm-up): setup, one V-cycle at\n"
     "                          k = 1 and 32, PCG+AMG against CG+Jacobi (1 RHS, rtol 1e-8),\n"
     "                          Block-CG+AMG (32 RHS), LOBPCG+AMG (16 smallest to 1e-6),\n"
     "                          memory; MET / NOT met for the targets (default lap3d:32)\n"
     "      --large             lap3d:128, lap3d:100, lap3d27:100, aniso:100:1:1:1e-3\n"
     "      --nrhs K            columns of Block-CG and the wide V-cycle (default 32)\n"
     "      --rtol R --maxit N  solver tolerance (default 1e-8) and iteration limit (10000)\n"
     "      --reps N            timed repetitions (default 5); --eig-reps N for LOBPCG (1)\n"
     "      --no-eigs, --no-block   skip LOBPCG, Block-CG\n"
     "      --spd-set           CG+AMG against CG+Jacobi on each SPD matrix of --matrices DIR\n"
     "      --amg-*             AMG options as for amg; --csv FILE, --json FILE\n"},
    {"eigs",
     "  eigs SPEC [options]     the nev smallest (or largest) eigenpairs by LOBPCG; on lap2d,\n"
     "                          lap3d and aniso also the closed-form eigenvalues and errors\n"
     "      --nev N             number of eigenpairs (default 16)\n"
     "      --block N           block size >= nev (default nev + max(4, nev/4))\n"
     "      --which smallest|largest   (default smallest)\n"
     "      --tol T             converged when ||Ax - lambda Mx|| <= T |lambda| ||x|| (1e-6;\n"
     "                          a residual at the rounding level of A also counts)\n"
     "      --maxit N           iteration limit (default 1000)\n"
     "      --pc none|jacobi|amg   preconditioner (default none); --amg-* as for amg\n"
     "      --mass M            the generalized problem A x = lambda M x (file or generator)\n"
     "      --seed S            seed of the random starting block (default 1)\n"
     "      --out V.mtx         write the eigenvectors (Matrix Market array, one per column)\n"
     "      --history FILE      residual estimates per iteration and pair (CSV)\n"},
    {"bench eigs",
     "  bench eigs [SPEC...]    LOBPCG timed (median of --reps N, default 3; default matrix\n"
     "                          lap3d:100) and the target: its 16 smallest eigenpairs to 1e-6\n"
     "                          with Jacobi in <= 2 s, eigenvalues within 1e-8 of the exact\n"
     "      --nev, --block, --which, --tol, --maxit, --seed as for eigs; --pc (default jacobi);\n"
     "      --matrices DIR, --csv FILE, --json FILE as for bench spmv\n"},
    {"version", "  version                 version and backends\n"},
    {"help", "  help [COMMAND]          this text, or one command's (also COMMAND --help)\n"},
};
enum { NSECTIONS = sizeof sections / sizeof sections[0] };

static const char common_help[] =
    "Common options:\n"
    "  --backend host|cuda|auto   default auto: $COALESCE_BACKEND, else cuda when a GPU is\n"
    "                             present, else host\n"
    "  --dtype f64|f32            value precision (default f64)\n"
    "  --help, -h                 this command's usage\n"
    "\n";

static void print_section(FILE *f, const help_section *h) {
  fprintf(f, h->text, COAL_CG_CHECK_EVERY);
}

/* "bench" names every benchmark's section */
static int matches(const char *name, const char *section) {
  return !strcmp(name, section) || (!strcmp(name, "bench") && !strncmp(section, "bench ", 6));
}

/* name == NULL: every command */
static void print_help(FILE *f, const char *name) {
  if (!name)
    fprintf(f,
            "coalesce %d.%d.%d: GPU iterative solvers for sparse symmetric systems\n\n"
            "Usage: coalesce COMMAND [OPTIONS] [SPEC...]\n\nCommands:\n",
            COAL_VERSION_MAJOR, COAL_VERSION_MINOR, COAL_VERSION_PATCH);
  else
    fprintf(f, "Usage: coalesce %s\n", name);
  for (int i = 0; i < NSECTIONS; i++)
    if (!name || matches(name, sections[i].name)) print_section(f, &sections[i]);
  fprintf(f, "\n%s%s\nExit status: 0 success, 1 runtime failure or failed check, 2 usage error.\n",
          common_help, cli_spec_help);
}

/* `coalesce help NAME...`, `coalesce NAME... --help`: NAME is "cmd" or "bench kind". */
static int help_for(const char *cmd, const char *sub) {
  char name[64];
  snprintf(name, sizeof name, "%s%s%s", cmd, sub ? " " : "", sub ? sub : "");
  for (int i = 0; i < NSECTIONS; i++)
    if (matches(name, sections[i].name)) {
      print_help(stdout, name);
      return CLI_OK;
    }
  return cli_usage_error("no help for '%s': unknown command", name);
}

static int asks_help(int argc, char **argv) {
  for (int i = 2; i < argc; i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return 1;
  return 0;
}

static int cmd_version(void) {
  printf("coalesce %d.%d.%d\n", COAL_VERSION_MAJOR, COAL_VERSION_MINOR, COAL_VERSION_PATCH);
  printf("backends: host, cuda (%s)\n", !coal_cuda_compiled()   ? "not compiled in this build"
                                        : coal_cuda_available() ? "compiled, GPU present"
                                                                : "compiled, no GPU found");
  return CLI_OK;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    print_help(stderr, NULL);
    return CLI_USAGE;
  }
  const char *cmd = argv[1];
  /* subcommands see argv[0] = their own name */
  int sub_argc = argc - 1;
  char **sub_argv = argv + 1;
  if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
    if (argc < 3) {
      print_help(stdout, NULL);
      return CLI_OK;
    }
    return help_for(argv[2], !strcmp(argv[2], "bench") && argc > 3 ? argv[3] : NULL);
  }
  if (asks_help(argc, argv)) {
    const int bench = !strcmp(cmd, "bench") && argc > 2 && argv[2][0] != '-';
    return help_for(cmd, bench ? argv[2] : NULL);
  }
  if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) return cmd_version();
  if (!strcmp(cmd, "info")) return cli_info(sub_argc, sub_argv);
  if (!strcmp(cmd, "demo")) return cli_demo(sub_argc, sub_argv);
  if (!strcmp(cmd, "bench")) {
    if (argc < 3)
      return cli_usage_error(
          "bench needs a benchmark name: bench spmv|spmm|spgemm|solve|eigs|amg ...");
    if (!strcmp(argv[2], "spmm")) return cli_bench_spmm(argc - 2, argv + 2);
    if (!strcmp(argv[2], "solve")) return cli_bench_solve(argc - 2, argv + 2);
    if (!strcmp(argv[2], "spgemm")) return cli_bench_spgemm(argc - 2, argv + 2);
    if (!strcmp(argv[2], "eigs")) return cli_bench_eigs(argc - 2, argv + 2);
    if (!strcmp(argv[2], "amg")) return cli_bench_amg(argc - 2, argv + 2);
    if (strcmp(argv[2], "spmv"))
      return cli_usage_error(
          "unknown benchmark '%s' (available: spmv, spmm, spgemm, solve, eigs, amg)", argv[2]);
    return cli_bench(sub_argc, sub_argv);
  }
  if (!strcmp(cmd, "solve")) return cli_solve(sub_argc, sub_argv);
  if (!strcmp(cmd, "amg")) return cli_amg(sub_argc, sub_argv);
  if (!strcmp(cmd, "eigs")) return cli_eigs(sub_argc, sub_argv);
  return cli_usage_error("unknown command '%s'", cmd);
}
