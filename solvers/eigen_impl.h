/* Eigensolver object internals shared by solvers/eigen.c (options, results) and
 * solvers/lobpcg.c (the iteration). */
#ifndef COAL_EIGEN_IMPL_H
#define COAL_EIGEN_IMPL_H

#include "../src/backend.h"

/* A new search direction is dropped when its squared sine to the span of those already kept
 * (columns scaled to unit M-norm) is below this (as COAL_BCG_DROP_TOL for Block-CG). */
#define COAL_EIG_DROP_TOL 1e-14
/* W is orthonormalised in one pass when the pass lost at most this share of any column's
 * squared norm to the projection and its Gram's smallest pivot is above it; else in two. */
#define COAL_EIG_ONE_PASS 1e-2
/* The basis [X P W] is M-orthonormal by construction; a Gram matrix V^T M V further than this
 * from the identity (max entry) means it degenerated: P is dropped and X re-orthonormalised. */
#define COAL_EIG_ORTH_TOL 1e-8
/* Rounding floor of the convergence test: a residual below COAL_EIG_FLOOR * u * sigma * ||x||
 * (u the unit roundoff, sigma = ||A||_inf + |lambda| ||M||_inf) counts as converged. */
#define COAL_EIG_FLOOR 10.0
/* Attempts at completing a starting block of full rank with fresh random columns. */
#define COAL_EIG_INIT_TRIES 5

struct coal_eigen_s {
  coal_mat A, M; /* M NULL: standard problem */
  coal_ctx ctx;
  int64_t n;
  int nev, bs, bs_user; /* bs_user 0: automatic */
  coal_eig_which which;
  double tol;
  int maxit;
  coal_pc_type pc;
  coal_pc_apply_fn pc_apply;
  void *pc_user;
  coal_bvec X0;
  uint64_t seed;
  int history_on;
  int setup_done;
  double *dinv;        /* [n] backend memory: Jacobi, else NULL */
  coal_amg amg;        /* COAL_PC_AMG: the hierarchy of A, built at setup */
  uint64_t amg_state;  /* A->state it was built from */
  double anorm, mnorm; /* ||A||_inf, ||M||_inf (1 without M), from setup */
  /* results of the last solve */
  int solved;
  coal_eig_info *info; /* [nev] */
  double *vectors;     /* backend memory, n x nev row-major (tight) */
  double *history;     /* [hist_cap * nev] host */
  int hist_len, hist_cap;
  coal_eigen_stats stats;
};

/* Runs LOBPCG on E (setup done): fills E->info, E->vectors, E->history, E->stats. */
coal_status coal_lobpcg_run(coal_eigen E);

#endif
