/* Smoothed-aggregation AMG internals shared by solvers/amg.c (object, setup), amg_cycle.c (the
 * cycle, the smoothers and the Lanczos estimate, written against backend-generic operations
 * only) and amg_coarse.c (the dense coarsest-level solve on the host). */
#ifndef COAL_SOLVERS_AMG_IMPL_H
#define COAL_SOLVERS_AMG_IMPL_H

#include "../kernels/amg.h"
#include "../src/backend.h"

/* Coarsening has stalled when a level keeps more than this share of its rows: that level is
 * the coarsest. */
#define COAL_AMG_STALL 0.8
/* Lanczos steps of the estimate of rho(D^-1 A) per level (the largest Ritz value, always below
 * rho). Measured against 200 steps on Laplacians and the shared SPD matrices (docs/amg.md): 10
 * steps came within 0.955-1.0 of it, which COAL_AMG_CHEB_HI covers; 5 steps fell to 0.83 and made
 * the cycle indefinite (bcsstk16), 7 was the fewest that passed everywhere. */
#define COAL_AMG_LANCZOS_STEPS 10
/* Chebyshev interval on the spectrum of D^-1 A: [COAL_AMG_CHEB_LO, COAL_AMG_CHEB_HI] x the
 * estimate. Lower factors 0.05 / 0.1 / 0.2 / 0.3 took 140 / 136 / 140 / 150 CG iterations summed
 * over seven Laplacians and shared matrices (docs/amg.md). */
#define COAL_AMG_CHEB_HI 1.1
#define COAL_AMG_CHEB_LO 0.1
/* A coarsest level with more rows than this (coarsening stalled, or max_levels reached) gets no
 * dense factor (its n^2 doubles and n^3/3 flops) and is only smoothed, twice per visit. */
#define COAL_AMG_DENSE_MAX 5000
/* Seed of the Lanczos start vector (coal_bvec_set_random: the same on every backend). */
#define COAL_AMG_SEED 0x5A6Dull

enum { AMG_B, AMG_X, AMG_R, AMG_D, AMG_T, AMG_NBLK }; /* the cycle's blocks of a level */

typedef struct {
  coal_mat A;               /* level 0: the caller's matrix (not owned) */
  coal_mat P, R;            /* prolongation (n x n_next) and R = P^T; NULL on the coarsest level */
  double *dinv;             /* backend, n: the smoother's inverse diagonal (1/a_ii or l1) */
  double rho;               /* Lanczos estimate of rho(D^-1 A), D = diag(A); 0 where not needed */
  int mis_rounds;           /* rounds of the distance-2 MIS that made the next level */
  int galerkin_algo;        /* the SpGEMM algorithm of the product that made the next level */
  double *blk[AMG_NBLK];    /* backend, n x kcap each (level 0: B and X only for layout copies) */
  coal_bvec view[AMG_NBLK]; /* views over blk, repointed at every apply (no allocation) */
  /* kept for the numeric-only re-setup (coal_amg_set_reuse; NULL otherwise and on the coarsest
   * level): the strong graph, the aggregates and T depend on the values only through the
   * strength test, which the re-setup does not repeat */
  coal_mat AF, T;            /* filtered matrix (its pattern is the strong graph's + diagonal) */
  int32_t *srp, *sci;        /* backend: the strong graph (n + 1, m), the filter's input */
  int32_t *agg;              /* backend, n: aggregate of each row */
  double *b;                 /* backend, n: the level's near-nullspace vector */
  coal_spgemm smooth_prod;   /* A_F T, whose result is P (smoothed in place) */
  coal_spgemm galerkin_prod; /* P^T A P, whose result is level l+1's A */
} coal_amg_level;

struct coal_amg_s {
  coal_mat A;
  coal_ctx ctx;
  coal_mat A64; /* an fp32 A's fp64 copy, level 0 of the hierarchy (NULL for an fp64 A) */
  /* options */
  double theta;
  coal_amg_smoother smoother;
  int degree;
  int64_t coarse_size;
  int max_levels;
  coal_amg_cycle cycle;
  double cheb_lo, cheb_hi; /* COAL_AMG_CHEB_LO / _HI unless tuned */
  int lanczos_steps;       /* COAL_AMG_LANCZOS_STEPS unless tuned */
  int reuse;               /* keep what coal_amg_resetup needs (coal_amg_set_reuse) */
  /* hierarchy */
  int setup_done;
  uint64_t a_state; /* A->state at setup */
  int nlevels;
  coal_amg_level lev[COAL_AMG_MAX_LEVELS];
  int64_t kcap;  /* width of the allocated cycle blocks (>= 1) */
  int64_t kwant; /* width asked for by coal_amg_reserve */
  int has_b0;    /* level 0's B and X blocks exist (an apply on blocks that are not tight) */
  /* coarsest level, host: dense factor of the permuted matrix, column-major, lower */
  int nc, direct, rank;
  double *fac;     /* nc x nc */
  int *perm;       /* nc: row i of the factor is row perm[i] of A_c (0-based) */
  double *fac_b;   /* the factor in backend memory (uploaded once) */
  int32_t *perm_b; /* perm in backend memory */
  double *cwork;   /* backend, nc x kcap: the solve's column-major work */
  coal_amg_info info;
};

/* Measurement hook (bench/amg_probe.c, tests): the Chebyshev interval factors and the Lanczos
 * steps (1..64); values <= 0 keep the current ones. Takes effect at the next setup. */
coal_status coal_amg_set_tuning(coal_amg amg, double cheb_lo, double cheb_hi, int lanczos_steps);

/* ---- amg.c, shared with amg_resetup.c ------------------------------------------------------ */
/* Synchronised wall clock; adds the time since *t to phase p and moves *t. */
double coal_amg_tick(coal_amg amg);
void coal_amg_phase_add(coal_amg amg, coal_amg_phase p, double *t);
/* A square and symmetric (to 1e-12 relative). */
coal_status coal_amg_check_matrix(coal_amg amg);
/* Level l's CSR in backend memory (made current there first). */
coal_status coal_amg_level_csr(coal_mat A, const int32_t **rp, const int32_t **ci,
                               const double **v);
/* The per-level figures of coal_amg_info from the hierarchy. */
void coal_amg_fill_info(coal_amg amg);
/* Backend (pool) memory for the setup's arrays, and its release (NULL is a no-op). */
coal_status coal_amg_alloc(coal_amg amg, size_t bytes, void **p);
void coal_amg_release(coal_amg amg, void *p);
/* Frees the hierarchy (levels, products kept for re-setup, coarse factor, blocks). */
void coal_amg_hierarchy_free(coal_amg amg);
/* The diagonal-check error for row `bad` of level l (its 1/a_ii slot holds a_ii). */
coal_status coal_amg_bad_diagonal(coal_amg amg, int l, const double *jd, int64_t bad);

/* ---- amg_resetup.c ------------------------------------------------------------------------ */
/* Frees what the numeric-only re-setup keeps on every level. */
void coal_amg_reuse_free(coal_amg amg);
/* Bytes kept for it (strong graphs, aggregates, b, T, A_F; not the products' symbolic state). */
size_t coal_amg_reuse_bytes(const coal_amg amg);

/* ---- amg_cycle.c -------------------------------------------------------------------------- */
/* The cycle on k columns: B and X are views (row-major tight, backend) of level 0's right-hand
 * side and solution; the level blocks are allocated for at least k columns. */
coal_status coal_amg_cycle_run(coal_amg amg, coal_bvec B, coal_bvec X, int64_t k);
/* Largest Ritz value of `steps` Lanczos steps on D^-1 A (self-adjoint in the D inner product),
 * A = level l's matrix, dinv = 1/diag(A) (backend); scratch: 5 n doubles in backend memory. */
coal_status coal_amg_lanczos_rho(coal_amg amg, coal_mat A, const double *dinv, int steps,
                                 double *scratch, double *rho);
/* (Re)allocates every level's cycle blocks for k columns and points the views at them. */
coal_status coal_amg_blocks_alloc(coal_amg amg, int64_t k);
void coal_amg_blocks_free(coal_amg amg);
/* Copies between a caller's block of any layout and a row-major tight one (level 0). */
coal_status coal_amg_copy_in(coal_amg amg, coal_bvec V, double *dst);
coal_status coal_amg_copy_out(coal_amg amg, const double *src, coal_bvec V);

/* ---- amg_coarse.c ------------------------------------------------------------------------- */
/* Factorises the coarsest matrix A_c (host CSR): LAPACK dpotrf; when it fails or a pivot is at
 * the rounding level (at most nc eps max a_ii), the pivoted dpstrf, whose rank drops the null
 * space. Allocates fac, perm and their backend copies fac_b, perm_b; the work cwork comes with
 * the blocks (coal_amg_coarse_buffers). */
coal_status coal_amg_coarse_factor(coal_amg amg, coal_mat Ac);
coal_status coal_amg_coarse_buffers(coal_amg amg, int64_t k);
/* X = A_c^+ B on k columns (row-major tight, backend memory): the backend's amg.coarse_solve. */
coal_status coal_amg_coarse_solve(coal_amg amg, int64_t k, const double *B, double *X);
void coal_amg_coarse_free(coal_amg amg);

#endif
