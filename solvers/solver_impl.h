/* Solver object internals shared by solvers/solver.c (interface), cg.c and blockcg.c. The
 * solvers call only the backend-neutral operations: coal_spmv_raw / coal_spmm, and through the
 * context's table (src/backend.h) the block operations (blas) and the memory ops (mem). */
#ifndef COAL_SOLVER_IMPL_H
#define COAL_SOLVER_IMPL_H

#include "../src/backend.h"

/* Block-CG drops a new search direction whose squared sine to the span of the directions
 * already kept (columns scaled to unit norm) is below this, i.e. at an angle under 1e-7 rad.
 * Near convergence the residual columns all lean towards the slowest eigenvectors and become
 * nearly parallel without being dependent: on 494_bus (Jacobi, 4 columns) a threshold of
 * 1e-10 cut the block to rank 1 and took 646 iterations, 1e-12 took 235, 1e-14 214 (CG: 416
 * per column). Below ~1e-14 the squared sine is within rounding of the Gram matrix for large
 * n. Repeated and nearly dependent columns (1e-9 apart) are still dropped (tests). */
#define COAL_BCG_DROP_TOL 1e-14
/* Block-CG keeps its search block as W with an orthonormalising factor T on the host
 * (solvers/blockcg.c). When the smallest pivot of W's Gram (the squared sine of the last kept
 * direction to those before it) falls below this, T's products on the host would lose more than
 * 1e-12 of relative accuracy, and the solver forms P = W T and measures its Grams again (one
 * extra product). On 1138_bus with 32 columns and Jacobi, no threshold took 486 iterations, 1e-4
 * took 35 and 1e-2 34 (33 when P was always formed); lap3d with 32 columns kept its pivots above
 * 2e-3 and never needed it. */
#define COAL_BCG_REORTH_TOL 1e-4
/* Residual replacements a column may get when the method calls it converged and its true
 * residual misses (solver.c, settle_verdicts). Each one restarts the method from the true
 * residual; when one does not halve the true residual, the column has reached the accuracy
 * the arithmetic allows and ends `stagnated`. */
#define COAL_MAX_REPLACEMENTS 3
/* Internal reason: Block-CG's search block collapsed (blockcg.c, collapsed()); solver.c
 * finishes these columns with CG from their current X. Never reported. */
#define COAL_SOLVE_HANDOFF ((coal_solve_reason)100)
/* Block-CG hands its active columns to CG after this many consecutive iterations whose search
 * block kept fewer directions than the residual block has independent columns (blockcg.c,
 * collapsed()). On the shared SPD set a collapse never lasted more than one iteration; on
 * beam:300 and beam:600 (the thin-beam reproducer) it lasts until the end. */
#define COAL_BCG_COLLAPSE_STREAK 3
/* The residual block's rank in that test counts directions whose squared sine to the others
 * is above this, 100 times the drop rule: right-hand sides 1e-9 apart give residual directions
 * at 1e-14 to 4e-14, which the drop rule keeps or drops by rounding (host and GPU differed);
 * on beam:300 the lost directions sit at 1e-12 and above, on beam:600 at 1e-9. */
#define COAL_BCG_COLLAPSE_TOL 1e-12
/* Divergence: the residual norm of a column grew beyond this factor of its start. */
#define COAL_DIVERGENCE_FACTOR 1e10

/* The preconditioner is an operator applied to whole blocks (a user function or AMG): the
 * methods keep Z = M^-1 R and take their Grams in the Euclidean product. Otherwise (none,
 * Jacobi) it is the diagonal dinv fused into their passes. */
static inline int coal_pc_is_operator(coal_pc_type pc) {
  return pc == COAL_PC_USER || pc == COAL_PC_AMG;
}

struct coal_solver_s {
  coal_mat A;
  coal_ctx ctx;
  int64_t n;
  coal_method method;
  coal_pc_type pc;
  coal_pc_apply_fn pc_apply;
  void *pc_user;
  coal_monitor_fn monitor;
  void *monitor_user;
  double rtol, atol;
  int maxit, check_every;
  int setup_done;
  double *dinv;       /* [n] backend memory: Jacobi's inverse diagonal, NULL otherwise */
  coal_amg amg;       /* COAL_PC_AMG: the hierarchy of A, built at setup */
  uint64_t amg_state; /* A->state it was built from: a solve after new values builds it again */
  /* last solve */
  int64_t k;
  coal_solve_info *info; /* [k] */
  double *mon_norms;     /* [k] what the monitor sees */
  int iterations;
  int reorth;        /* Block-CG: products repeated on P = W T (COAL_BCG_REORTH_TOL) */
  int handoffs;      /* Block-CG: columns finished by CG after a collapse of the block */
  coal_bvec view[2]; /* reusable views over workspace blocks (coal_solver_views) */
  /* during a residual replacement the method runs on some columns: map[a] is the caller's
   * column of run column a, norms the caller's k monitor norms, offset the iterations before */
  struct {
    const int32_t *map;
    double *norms;
    int64_t k;
    int offset;
  } sub;
};

/* Runs the method on the columns of B / X (n x k, user layout); X holds the initial guess. Fill
 * S->info[j].reason, iterations, rec_resnorm, rhsnorm; solver.c computes the true residuals
 * afterwards. */
coal_status coal_cg_solve(coal_solver S, coal_bvec B, coal_bvec X);
coal_status coal_blockcg_solve(coal_solver S, coal_bvec B, coal_bvec X);

/* Applies the preconditioner to an n x m row-major block (tight) in backend memory: Z = M^-1 R
 * (R == Z allowed for Jacobi and none, not for a user PC). With nrm2 != NULL also returns the
 * column sums of squares of R (host). */
coal_status coal_solver_apply_pc(coal_solver S, int64_t m, const double *R, double *Z,
                                 double *nrm2);
/* Points the solver's two reusable block objects at X and Y (n x m, row-major, tight) for
 * coal_spmm and user preconditioners: created once per solver, so an iteration allocates
 * nothing. The objects stay owned by the solver. */
coal_status coal_solver_views(coal_solver S, const double *X, double *Y, int64_t m, coal_bvec *Xv,
                              coal_bvec *Yv);
/* Calls the monitor (if any) with S->mon_norms; returns 1 when it asks to stop. */
int coal_solver_monitor(coal_solver S, int iteration);
/* Checks that A is symmetric (pattern, and values equal to 1e-12 relative; skipped when A is
 * known symmetric from its origin): COAL_ERR_NOT_SPD naming `name` and the first entry that
 * differs. */
coal_status coal_check_symmetric(coal_mat A, const char *name);
/* Jacobi: *dinv = 1 ./ diag(A) in A's backend memory (n doubles, release with the backend's
 * release); COAL_ERR_NOT_SPD when a diagonal entry is not positive. */
coal_status coal_jacobi_setup(coal_mat A, double **dinv);
/* COAL_PC_AMG (CG, Block-CG, LOBPCG): creates *amg for A when NULL and builds its hierarchy
 * from A's current values, default options (solvers/amg.c); *state = A->state. */
coal_status coal_amg_pc_setup(coal_mat A, coal_amg *amg, uint64_t *state);
/* Backend allocation of `count` doubles. */
coal_status coal_solver_alloc(coal_solver S, size_t count, double **p);
void coal_solver_release(coal_solver S, double *p);

#endif
