/* The `coalesce` command-line tool: shared declarations of the subcommands and helpers.
 *
 * A consumer on top of the library: it uses the public header coalesce.h only (the layer test,
 * tests/test_layers.py, checks it), no internal header and no object field.
 *
 * Exit codes: 0 success, 1 runtime failure (a library call failed, a check failed), 2 usage
 * error (unknown subcommand or option, malformed matrix spec). Results go to stdout, errors to
 * stderr with the library's message (coal_ctx_last_error). */
#ifndef COAL_CLI_H
#define COAL_CLI_H

#include "coalesce.h"

#include <stdint.h>
#include <stdio.h>

enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

/* Returns a failing library status from the calling function (which returns coal_status). */
#define CLI_CALL(expr)                                                                             \
  do {                                                                                             \
    coal_status cli_call_st_ = (expr);                                                             \
    if (cli_call_st_ != COAL_SUCCESS) return cli_call_st_;                                         \
  } while (0)

/* Options every subcommand accepts. */
typedef struct {
  coal_backend backend; /* default AUTO */
  coal_dtype dtype;     /* default F64 */
} cli_common;

/* ---- option parsing ---------------------------------------------------------------------- */
/* If argv[*i] is option `name` ("--name VALUE" or "--name=VALUE"), stores its value, moves *i
 * to the last argument consumed and returns 1; returns 0 when argv[*i] is not that option and
 * -1 (message printed) when the value is missing. */
int cli_opt_value(int argc, char **argv, int *i, const char *name, const char **val);
/* Tries --backend and --dtype at argv[*i]: 1 consumed, 0 not a common option, -1 usage error
 * (message printed). */
int cli_parse_common(int argc, char **argv, int *i, cli_common *c);
/* Strict integer / real parsing of a whole string: 0 on success, -1 otherwise. */
int cli_parse_i64(const char *s, int64_t *v);
int cli_parse_f64(const char *s, double *v);
/* Comma-separated list of distinct integers in [min, max], at most cap: the count, or -1. */
int cli_parse_i64_list(const char *s, int64_t min, int64_t max, int64_t *out, int cap);
/* Integer option `name` in [min, max] at argv[*i]: as cli_opt_value, and -1 (message printed)
 * also for a bad value. */
int cli_int_opt(int argc, char **argv, int *i, const char *name, int64_t min, int64_t max,
                int64_t *x);
/* Usage error: prints "coalesce: MESSAGE" and a hint to stderr, returns CLI_USAGE. */
int cli_usage_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* ---- matrix specs ------------------------------------------------------------------------ */
typedef enum {
  CLI_SPEC_FILE,     /* Matrix Market file (.mtx, .mtx.gz) */
  CLI_SPEC_LAP2D,    /* lap2d:N        N x N grid, 5-point */
  CLI_SPEC_BEAM,     /* beam:N         N nodes, 5-point biharmonic (1-D Laplacian squared) */
  CLI_SPEC_PLATE,    /* plate:N        N x N grid, 13-point biharmonic (lap2d squared) */
  CLI_SPEC_LAP3D,    /* lap3d:N        N^3 grid, 7-point */
  CLI_SPEC_LAP3D27,  /* lap3d27:N      N^3 grid, 27-point */
  CLI_SPEC_ANISO,    /* aniso:N:ex:ey:ez */
  CLI_SPEC_POWERLAW, /* powerlaw:ROWS:MEAN[:SEED], gamma 2.5 */
  CLI_SPEC_SPD,      /* spd:ROWS:MEAN[:SEED] */
  CLI_SPEC_ELAST3D,  /* elast3d:N[:NU]  3-D elasticity, N^3 hexahedra, face x = 0 clamped */
} cli_spec_kind;

typedef struct {
  cli_spec_kind kind;
  const char *text; /* as given on the command line (not copied) */
  char name[128];   /* short name for tables: file name without .mtx[.gz], or the spec */
  int64_t n;        /* grid size or number of rows */
  double e[3];      /* anisotropy coefficients; elast3d: e[0] the Poisson ratio */
  double mean;      /* mean nonzeros per row */
  uint64_t seed;
} cli_spec;

/* Parses a spec; on error prints a message naming the spec and returns CLI_USAGE. */
int cli_spec_parse(const char *text, cli_spec *sp);
/* Reads or generates the matrix on ctx. */
coal_status cli_spec_load(coal_ctx ctx, const cli_spec *sp, coal_dtype dtype, coal_mat *A);
/* One-line description, e.g. "3-D 7-point Laplacian, 48^3 grid". */
void cli_spec_describe(const cli_spec *sp, char *buf, size_t len);
/* The spec help text (for `coalesce help`). */
extern const char cli_spec_help[];

/* ---- contexts and errors ----------------------------------------------------------------- */
/* Creates a context; on failure prints why and returns CLI_FAIL (CLI_OK on success). */
int cli_ctx_create(coal_backend b, coal_ctx *ctx);
/* Prints "coalesce: WHAT: MESSAGE" with the library's message for st; returns CLI_FAIL. */
int cli_fail(coal_ctx ctx, coal_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ---- numerics ---------------------------------------------------------------------------- */
/* Bytes an SpMV must move at least: nnz*(val+4) + 4*(nrows+1) + val*(ncols+nrows). */
double cli_byte_floor(int64_t nrows, int64_t ncols, int64_t nnz, coal_dtype dtype);
/* ||y - ref||_inf / ||ref||_inf (absolute when ref is 0); NaN anywhere gives +inf. */
double cli_rel_err(const double *y, const double *ref, int64_t n);
/* Relative error allowed by the checks: 1e-12 for f64, 1e-5 for f32. */
double cli_tolerance(coal_dtype dtype);
/* Copies the first column of X (n entries) into a host double array. */
coal_status cli_bvec_get(coal_bvec X, double *dst);
/* Deterministic x in [-1,1) as a host array of dtype (n entries, caller frees with free). */
void *cli_random_vector(int64_t n, coal_dtype dtype, uint64_t seed);
/* A matrix's host CSR as the library shows it (coal_mat_host_csr: A's own arrays, current,
 * read-only; valid while A lives and its values do not change). */
typedef struct {
  int64_t nrows, ncols, nnz;
  coal_dtype dtype;
  const int32_t *rowptr, *colind;
  const void *values;
} cli_csr;
coal_status cli_csr_get(coal_mat A, cli_csr *c);
/* Value p of the CSR as a double. */
static inline double cli_csr_value(const cli_csr *c, int64_t p) {
  return c->dtype == COAL_F64 ? ((const double *)c->values)[p]
                              : (double)((const float *)c->values)[p];
}
/* Plain host CSR loop y = A*x in double, from A's host CSR arrays (cli_csr_get, whose status
 * it returns). */
coal_status cli_csr_reference(coal_mat A, const double *x, double *y);
const char *cli_dtype_name(coal_dtype d);
/* Bytes of one value: 8 (f64) or 4 (f32). */
size_t cli_dtype_size(coal_dtype d);

/* Argument of cli_spmv_run, a coal_bench_fn computing y = A*x (alpha 1, beta 0) with one
 * kernel on raw vectors of A's context. */
typedef struct {
  coal_mat A;
  coal_spmv_kernel kernel;
  const void *x;
  void *y;
} cli_spmv_arg;
coal_status cli_spmv_run(void *arg);

/* ---- benchmark output and matrix lists (bench spmv, bench spmm) -------------------------- */
/* CSV field: quoted string; number (empty when not finite). */
void cli_csv_str(FILE *f, const char *s);
void cli_csv_num(FILE *f, double v, const char *fmt);
/* JSON string; number ("%.6g", null when not finite). */
void cli_json_str(FILE *f, const char *s);
void cli_json_num(FILE *f, double v);
/* A CSV or JSON number: integers exactly, others with 6 digits, `none` ("" or "null") when
 * not finite. */
void cli_put_num(FILE *f, double v, const char *none);
/* Table cell: v with fmt, or "-" when not finite. */
void cli_fmt_num(char *buf, size_t len, double v, const char *fmt);
/* Opens FILE for writing; on failure prints why and returns NULL. */
FILE *cli_open_output(const char *path);

/* The matrices of a benchmark: the SPECs given (parsed by the caller into specs[0..nargs)),
 * then every *.mtx.gz of a folder (sorted by name), then with --large the three target
 * matrices (cli_large_specs). */
extern const char *const cli_large_specs[3];
typedef struct {
  cli_spec *specs; /* capacity: the caller's argc + 3 before cli_matrix_list_finish */
  int n, nargs, ndir;
  char **paths; /* the folder's files, owned by the list */
} cli_matrix_list;
/* Appends the folder's files (dir may be NULL) and the large matrices; CLI_OK or CLI_FAIL
 * (message printed). */
int cli_matrix_list_finish(cli_matrix_list *L, const char *dir, int large);
/* Appends one more spec after cli_matrix_list_finish; CLI_OK or CLI_FAIL (message printed). */
int cli_matrix_list_add(cli_matrix_list *L, const char *spec);
/* Median of v[0..n) (sorts v); NaN when n is 0. */
double cli_median(double *v, int64_t n);
/* Ascending order of doubles, for qsort. */
int cli_cmp_double(const void *a, const void *b);
/* 1 when specs[i] came from the folder (files the library does not handle are skipped). */
int cli_matrix_list_from_dir(const cli_matrix_list *L, int i);
void cli_matrix_list_free(cli_matrix_list *L);

/* Options every benchmark takes. */
typedef struct {
  cli_common c;
  int64_t reps; /* the caller sets the default */
  const char *dir, *csv_path, *json_path;
  int large;
  cli_matrix_list list; /* list.specs: allocated by the caller with argc + 3 entries */
} cli_bench_opts;
/* The end of a benchmark: closes csv and json (either may be NULL; a failed write turns an OK
 * rc into CLI_FAIL, message printed), destroys *ctx and frees b's matrix list; returns rc. */
int cli_bench_end(cli_bench_opts *b, FILE *csv, FILE *json, coal_ctx *ctx, int rc);
/* Tries argv[*i] as --backend, --dtype, --reps N, --matrices DIR, --csv FILE, --json FILE,
 * --large or a SPEC (appended to o->list): 1 consumed, 0 another option ("--..."), -1 usage
 * error (message printed). */
int cli_bench_opt(int argc, char **argv, int *i, cli_bench_opts *o);

/* ---- AMG options and hierarchy (cli/cli_amg.c) ----------------------------------------- */
/* The --amg-* options. Without any, --pc amg is the library's COAL_PC_AMG (default options,
 * hierarchy built by the solver's setup); with one, the tool builds the hierarchy itself with
 * these options and hands it to the solver as a user preconditioner (coal_amg_pc_apply). */
typedef struct {
  int given; /* an --amg-* option was given */
  double theta;
  coal_amg_smoother smoother;
  int degree; /* Chebyshev degree or l1-Jacobi sweeps */
  int64_t coarse_size;
  int max_levels;
  coal_amg_cycle cycle;
} cli_amg_opts;
void cli_amg_opts_default(cli_amg_opts *o);
/* Tries --amg-theta, --amg-smoother, --amg-degree, --amg-coarse-size, --amg-max-levels,
 * --amg-cycle at argv[*i]: 1 consumed, 0 not one of them, -1 usage error (message printed). */
int cli_amg_opt(int argc, char **argv, int *i, cli_amg_opts *o);
/* CLI_USAGE (message printed) when --amg-* options were given and pc is not AMG. */
int cli_amg_check(const cli_amg_opts *o, coal_pc_type pc);
/* "theta 0.02, chebyshev degree 2, coarse size 1000, max levels 24, V-cycle" */
void cli_amg_describe(const cli_amg_opts *o, char *buf, size_t len);
/* Creates the hierarchy of A with o and sets it up: CLI_OK, or CLI_FAIL with the message
 * printed (*amg NULL). */
int cli_amg_build(coal_mat A, const cli_amg_opts *o, coal_amg *amg);
/* AMG as the preconditioner of the solver S or (S NULL) the eigensolver E of A: COAL_PC_AMG
 * without --amg-* options, else a hierarchy built here (*amg, which the caller destroys after
 * the solver), its cycle blocks reserved for `width` columns. CLI_OK, or CLI_FAIL with the
 * message printed. */
int cli_amg_attach(coal_solver S, coal_eigen E, coal_mat A, const cli_amg_opts *o, int64_t width,
                   coal_amg *amg);
/* Bytes of A's CSR (32-bit indices, fp64 values), the yardstick of the hierarchy's memory. */
double cli_amg_a_bytes(int64_t rows, int64_t nnz);
/* The hierarchy table: per level rows, nonzeros, P's nonzeros, bytes, rho, MIS rounds; the
 * complexities, the memory against A, the coarsest level and the setup time per phase. */
void cli_amg_print_info(const coal_amg_info *in);

/* ---- solves (solve, demo, bench solve) --------------------------------------------------- */
typedef struct {
  coal_method method;
  coal_pc_type pc;
  cli_amg_opts amg; /* with pc AMG */
  double rtol, atol;
  int maxit, check_every; /* check_every 0: the library default */
  FILE *history;          /* residual history as CSV, or NULL */
} cli_solve_opts;
void cli_solve_opts_default(cli_solve_opts *o);
/* Tries --rtol, --atol, --maxit, --check-every, --pc, --method and the --amg-* options at
 * argv[*i]: 1 consumed, 0 not one of them, -1 usage error (message printed). */
int cli_solve_opt(int argc, char **argv, int *i, cli_solve_opts *o);
typedef struct {
  int64_t k;
  int iterations, max_its, sum_its, all_converged;
  double setup_s, solve_s, max_rel; /* wall seconds (synchronised); largest ||b-Ax||/||b|| */
  coal_solve_info *info;            /* [k] */
} cli_solve_result;
/* Creates a solver for A with o, runs setup and solve (X holds the initial guess) and fills
 * res (free with cli_solve_result_free). CLI_OK, or CLI_FAIL with the message printed. */
int cli_solve_run(coal_mat A, coal_bvec B, coal_bvec X, const cli_solve_opts *o,
                  cli_solve_result *res);
void cli_solve_result_free(cli_solve_result *r);
/* K deterministic random right-hand sides solved by Block-CG and (run_seq) by K sequential CG
 * solves at CG's own check interval, from X = 0 each (cli/cli_bench_solve.c). A is put on
 * the backend first (one product, upload_s), so that neither timed run pays its upload.
 * exact_its: the K CG solves again, checking every iteration, for exact iteration counts
 * (seq_exact, and block_more from them; otherwise block_more compares with seq). */
typedef struct {
  cli_solve_result block, seq, seq_exact;
  int have_seq, have_exact;
  int block_more; /* columns where Block-CG needed more iterations than CG */
  double upload_s;
} cli_solve_compare_result;
int cli_solve_compare(coal_mat A, int64_t k, const cli_solve_opts *o, int run_seq, int exact_its,
                      cli_solve_compare_result *r);
void cli_solve_compare_free(cli_solve_compare_result *r);

/* ---- eigenpairs (eigs, bench eigs; cli/cli_eigs.c) ---------------------------------- */
typedef struct {
  int nev, block, maxit; /* block 0: the library's choice */
  double tol;
  coal_eig_which which;
  coal_pc_type pc;
  cli_amg_opts amg; /* with pc AMG */
  uint64_t seed;
} cli_eig_opts;
void cli_eig_opts_default(cli_eig_opts *o);
/* Tries --nev, --block, --tol, --maxit, --which, --pc, --seed and the --amg-* options at
 * argv[*i]: 1 consumed, 0 not one of them, -1 usage error (message printed). */
int cli_eig_opt(int argc, char **argv, int *i, cli_eig_opts *o);
/* Checks the options against each other and against the matrix size n (n < 0: not yet known):
 * CLI_OK or CLI_USAGE (message printed). */
int cli_eig_check(const cli_eig_opts *o, int64_t n);
/* The block size LOBPCG runs with on an n-row matrix (the library's rule when o->block is 0). */
int cli_eig_blocksize(const cli_eig_opts *o, int64_t n);
/* Creates the eigensolver for A (M: NULL or the mass matrix) configured by o; CLI_OK, or
 * CLI_FAIL with the message printed. With AMG and --amg-* options the hierarchy is built here
 * into *amg (destroy it after E; amg may be NULL only when o->pc is not AMG). */
int cli_eig_create(coal_mat A, coal_mat M, const cli_eig_opts *o, int history, coal_eigen *E,
                   coal_amg *amg);
typedef struct {
  int nev, nconverged;
  double seconds; /* wall time of coal_eigen_solve, synchronised */
  double max_res; /* largest relative residual of the nev pairs */
  coal_eigen_stats stats;
  coal_eig_info *info; /* [nev] */
} cli_eig_result;
/* One timed solve; fills res (free with cli_eig_result_free). CLI_OK, or CLI_FAIL with the
 * message printed. */
int cli_eig_solve(coal_eigen E, coal_ctx ctx, int nev, cli_eig_result *res);
void cli_eig_result_free(cli_eig_result *r);
/* Closed-form eigenvalues of the 7-point / 5-point Laplacians (lap2d, lap3d, aniso specs): the
 * nev smallest ascending or the nev largest descending into exact[nev] (nev <= rows). Returns
 * 1, 0 when the spec has no closed form here, -1 when out of memory. */
int cli_eig_exact(const cli_spec *sp, int nev, coal_eig_which which, double *exact);
/* |value - exact| / |exact| (absolute when exact is 0). */
double cli_eig_relerr(double value, double exact);

/* ---- subcommands ------------------------------------------------------------------------- */
int cli_solve(int argc, char **argv);
/* `amg SPEC`: the hierarchy (cli/cli_amg.c). */
int cli_amg(int argc, char **argv);
/* `bench amg`: argv[0] is "amg" (cli/cli_bench_amg.c). */
int cli_bench_amg(int argc, char **argv);
/* `eigs SPEC`: eigenpairs by LOBPCG (cli/cli_eigs.c). */
int cli_eigs(int argc, char **argv);
/* `bench eigs`: argv[0] is "eigs" (cli/cli_bench_eigs.c). */
int cli_bench_eigs(int argc, char **argv);
/* `bench solve`: argv[0] is "solve" (cli/cli_bench_solve.c). */
int cli_bench_solve(int argc, char **argv);
int cli_info(int argc, char **argv);
int cli_demo(int argc, char **argv);
int cli_bench(int argc, char **argv);
/* `bench spmm`: argv[0] is "spmm" (cli/cli_bench_spmm.c). */
int cli_bench_spmm(int argc, char **argv);
/* `bench spgemm`: argv[0] is "spgemm" (cli/cli_bench_spgemm.c). */
int cli_bench_spgemm(int argc, char **argv);

#endif
