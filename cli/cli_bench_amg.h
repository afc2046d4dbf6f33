/* `coalesce bench amg`, shared by its two files: the measurements of one matrix and the
 * targets (cli/cli_bench_amg.c), the command, its output, CSV and JSON
 * (cli/cli_bench_amg_report.c). */
#ifndef COAL_CLI_BENCH_AMG_H
#define COAL_CLI_BENCH_AMG_H

#include "cli.h"

enum { AMG_NTARGETS = 7 };
#define AMG_WARMUP 1 /* untimed runs before the timed ones (setup, solves) */
/* LOBPCG+AMG: the AMG_EIG_NEV smallest eigenpairs to AMG_EIG_TOL. */
#define AMG_EIG_NEV 16
#define AMG_EIG_TOL 1e-6

/* Medians of timed solves (seconds) and the last run's results. */
typedef struct {
  int ran, its, converged; /* converged: the solver's verdict and relres <= 10 rtol */
  double setup_s, solve_s, total_s;
  double relres; /* largest true ||b - A x|| / ||b||, recomputed by the tool */
} amg_solve_stat;

/* One matrix. NaN (or ran 0) where not measured. */
typedef struct {
  const cli_spec *sp;
  int64_t n, nnz;
  int have_info;
  coal_amg_info info;
  double setup_ms, setup_min_ms; /* AMG setup, median and minimum */
  double resetup_ms;             /* numeric-only re-setup after new values (issue 33), median */
  coal_amg_info resetup_info;    /* the last re-setup's phases */
  double v1_ms, vk_ms;           /* one V-cycle on 1 and on nrhs columns */
  double mem_ratio;              /* hierarchy bytes / A's CSR bytes */
  amg_solve_stat pcg, jac, bcg;  /* CG+AMG, CG+Jacobi (1 RHS), Block-CG+AMG (nrhs) */
  struct {
    int ran, its, converged;
    double seconds, max_res, err; /* err: largest eigenvalue error against the closed form */
  } eig;
  char status[160]; /* "ok" or what failed, "; "-separated */
} amg_row;

typedef struct {
  cli_bench_opts b; /* b.reps: timed repetitions */
  cli_amg_opts amg;
  double rtol;
  int maxit, no_eigs, no_block, spd_set;
  int64_t nrhs, eig_reps;
  coal_ctx ctx;
  FILE *csv, *json;
  int rows_written;
  struct {
    int ran, met;
    double value;
  } target[AMG_NTARGETS];
} amg_bench;

/* Measures sp: full = 1 everything (the matrix list), 0 the AMG setup, PCG+AMG and CG+Jacobi
 * only (--spd-set). Fills w (status "ok" or what failed); CLI_OK when everything ran and
 * converged. */
int amg_bench_matrix(amg_bench *R, const cli_spec *sp, int full, amg_row *w);
/* Records w's values for the targets that its matrix is the subject of. */
void amg_targets_update(amg_bench *R, const amg_row *w);
void amg_targets_print(const amg_bench *R);
void amg_targets_json(const amg_bench *R, FILE *f);

#endif
