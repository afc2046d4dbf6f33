/* coalesce: GPU iterative solvers for sparse symmetric systems with many right-hand sides.
 *
 * Public C API. Every function returns a coal_status; on failure the context keeps a
 * readable message (coal_ctx_last_error). The library never prints, exits or aborts.
 *
 * Objects are opaque handles. A context chooses the backend (host or CUDA); matrices and
 * block vectors belong to one context and live in that backend's memory.
 */
#ifndef COALESCE_H
#define COALESCE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define COAL_VERSION_MAJOR 0
#define COAL_VERSION_MINOR 1
#define COAL_VERSION_PATCH 0

typedef enum {
  COAL_SUCCESS = 0,
  COAL_ERR_ARG = 1,           /* invalid argument (NULL, size mismatch, bad option) */
  COAL_ERR_MEMORY = 2,        /* host allocation failed */
  COAL_ERR_DEVICE_MEMORY = 3, /* device allocation failed (out of GPU memory) */
  COAL_ERR_IO = 4,            /* file could not be opened, read or written */
  COAL_ERR_FORMAT = 5,        /* malformed input (file name and line in the message) */
  COAL_ERR_UNSUPPORTED = 6,   /* valid input this library does not handle (e.g. complex) */
  COAL_ERR_NOT_COMPILED = 7,  /* backend or feature not compiled into this build */
  COAL_ERR_NO_DEVICE = 8,     /* CUDA compiled, but no usable GPU at run time */
  COAL_ERR_CUDA = 9,          /* CUDA, cuBLAS or cuSPARSE call failed */
  COAL_ERR_OVERFLOW = 10,     /* sizes beyond the supported index range */
  COAL_ERR_STATE = 11,        /* object in the wrong state for this call */
  COAL_ERR_NOT_SPD = 12,      /* the solver needs a symmetric positive definite operator */
} coal_status;

typedef enum {
  COAL_BACKEND_AUTO = 0, /* COALESCE_BACKEND env var if set, else cuda when a GPU is present */
  COAL_BACKEND_HOST = 1,
  COAL_BACKEND_CUDA = 2,
} coal_backend;

typedef enum { COAL_F64 = 0, COAL_F32 = 1 } coal_dtype;

/* Dense block layout: column-major (entry (i,j) at i + j*ld) or row-major (i*ld + j). */
typedef enum { COAL_COL_MAJOR = 0, COAL_ROW_MAJOR = 1 } coal_layout;
/* The layout the solvers use for blocks of vectors: row-major, where both our SpMM and
 * cuSPARSE's run several times faster than on column-major blocks (bench/RESULTS.md, rule
 * layout). */
#define COAL_DEFAULT_LAYOUT COAL_ROW_MAJOR

/* SpMV kernels. AUTO picks from cheap matrix statistics. */
typedef enum {
  COAL_SPMV_AUTO = 0,
  COAL_SPMV_CSR_VECTOR = 1, /* CSR, a (sub-)warp per row */
  COAL_SPMV_CSR_MERGE = 2,  /* CSR, merge-path: equal share of rows+nonzeros per thread */
  COAL_SPMV_FASTLOAD = 3,   /* FastLoad [FASTLOAD]: sorted CSC blocks, segment sums, atomics */
  COAL_SPMV_FASTLOAD_T = 4, /* FastLoad layout of A^T: sorted rows, lanes own rows, no atomics */
  COAL_SPMV_NKERNELS = 5
} coal_spmv_kernel;

typedef struct coal_ctx_s *coal_ctx;
typedef struct coal_mat_s *coal_mat;
typedef struct coal_bvec_s *coal_bvec;

/* ---- status and context ---------------------------------------------------------------- */
const char *coal_status_string(coal_status s);
const char *coal_backend_name(coal_backend b);
const char *coal_spmv_kernel_name(coal_spmv_kernel k);
/* Parses "host", "cuda", "auto" (case-sensitive). */
coal_status coal_backend_parse(const char *name, coal_backend *b);
coal_status coal_spmv_kernel_parse(const char *name, coal_spmv_kernel *k);

/* 1 when the CUDA backend was compiled into this build. */
int coal_cuda_compiled(void);
/* 1 when CUDA is compiled and at least one GPU answers. */
int coal_cuda_available(void);

/* Creates a context. AUTO resolves through the COALESCE_BACKEND environment variable
 * (host|cuda|auto), then to cuda when a GPU is present, else host. Asking for cuda explicitly
 * fails with COAL_ERR_NOT_COMPILED or COAL_ERR_NO_DEVICE; *ctx is NULL on failure. */
coal_status coal_ctx_create(coal_backend b, coal_ctx *ctx);
coal_status coal_ctx_destroy(coal_ctx *ctx);
coal_backend coal_ctx_backend(coal_ctx ctx);
/* The last error message recorded on this context ("" if none). */
const char *coal_ctx_last_error(coal_ctx ctx);
/* Waits for all work queued on the context (no-op on host). */
coal_status coal_ctx_sync(coal_ctx ctx);
/* Human-readable device description ("host CPU" or "NVIDIA H100 ..., sm_90"). */
const char *coal_ctx_device_name(coal_ctx ctx);

/* ---- utilities ------------------------------------------------------------------------- */
/* Monotonic clock in seconds (wall time; the library's own timings use it). */
double coal_now_seconds(void);
/* Deterministic uniform value in [-1,1): number i of stream `seed` (splitmix64), the numbers
 * behind coal_bvec_set_random and the random generators. */
double coal_random_uniform(uint64_t seed, uint64_t i);

/* ---- sparse matrix (CSR) --------------------------------------------------------------- *
 * Canonical storage is CSR with 32-bit column indices and 32-bit row offsets. Matrices with
 * more than 2^31-1 rows, columns or nonzeros are refused with COAL_ERR_OVERFLOW at creation.
 * Column indices within a row are sorted and unique after creation (duplicates are summed).
 */
/* Copies host CSR arrays (rowptr[nrows+1], colind[nnz], values[nnz] of dtype). Column indices
 * need not be sorted; duplicates are summed. */
coal_status coal_mat_create_csr(coal_ctx ctx, int64_t nrows, int64_t ncols, const int64_t *rowptr,
                                const int32_t *colind, const void *values, coal_dtype dtype,
                                coal_mat *A);
/* Copies host COO triples (0-based); duplicates are summed. */
coal_status coal_mat_create_coo(coal_ctx ctx, int64_t nrows, int64_t ncols, int64_t nnz,
                                const int32_t *rows, const int32_t *cols, const double *values,
                                coal_dtype dtype, coal_mat *A);
coal_status coal_mat_destroy(coal_mat *A);
coal_status coal_mat_size(coal_mat A, int64_t *nrows, int64_t *ncols, int64_t *nnz);
coal_dtype coal_mat_dtype(coal_mat A);
coal_ctx coal_mat_ctx(coal_mat A);
/* Copies of the host CSR arrays (caller-provided, sized nrows+1 / nnz / nnz). Any may be NULL. */
coal_status coal_mat_get_csr(coal_mat A, int64_t *rowptr, int32_t *colind, void *values);
/* A's own host CSR arrays, read-only and without a copy: rowptr [nrows+1], colind [nnz] (sorted
 * and unique per row) and values [nnz] of A's dtype. They are made current first (a matrix
 * that lives on the device is downloaded, as for coal_mat_get_csr); when the host copy is
 * current this costs two tests. The arrays belong to A and keep their address while A lives;
 * the values are those of the call: after A's values change, call again. Any output may be
 * NULL. */
coal_status coal_mat_host_csr(coal_mat A, const int32_t **rowptr, const int32_t **colind,
                              const void **values);
/* Replaces the values (same structure, same dtype, host array of nnz in CSR order). Derived
 * formats and device copies are refreshed at the next use. */
coal_status coal_mat_set_values(coal_mat A, const void *values);
/* New matrix B = P A P^T where row/column i of B is row/column perm[i] of A (square A). */
coal_status coal_mat_permute(coal_mat A, const int32_t *perm, coal_mat *B);
/* New matrix holding A^T. */
coal_status coal_mat_transpose(coal_mat A, coal_mat *B);
/* Converts the values to another precision (new matrix). */
coal_status coal_mat_convert(coal_mat A, coal_dtype dtype, coal_mat *B);
/* 1 if the pattern and values are symmetric (exact comparison), else 0. */
coal_status coal_mat_is_symmetric(coal_mat A, int *sym);

/* FastLoad tuning: block height limit H ([FASTLOAD]: 1..8 best). Default 8. Drops cached format. */
coal_status coal_mat_set_fastload_height(coal_mat A, int height);
/* The FastLoad block height limit A's formats are built with. */
coal_status coal_mat_get_fastload_height(coal_mat A, int *height);
/* Statistics of the FastLoad formats, building them if needed. Any pointer may be NULL. */
typedef struct {
  int64_t nblocks; /* warp blocks */
  int64_t nblocks_one_row, nblocks_segmented, nblocks_distinct, nblocks_partial;
  int64_t natomics; /* atomic updates per product (scatter: segment heads) */
  double build_seconds;
} coal_fastload_stats;
coal_status coal_mat_fastload_stats(coal_mat A, int transposed, coal_fastload_stats *st);
/* Lane order of a FastLoad format, building it if needed: (*perm)[s] is the lane at sorted
 * position s (lanes sorted by entry count, descending, stable). transposed 0: the scatter
 * format, lanes are the ncols columns; 1: the gather format, lanes are the nrows rows. Owned
 * by A: valid until the format is dropped (a value or height change) or A is destroyed.
 * coal_mat_permute(A, perm, &B) with the gather order gives a B whose rows are in that order. */
coal_status coal_mat_fastload_order(coal_mat A, int transposed, const int32_t **perm);

/* ---- Matrix Market I/O ----------------------------------------------------------------- *
 * Reads .mtx and .mtx.gz. Coordinate (real, integer, pattern; general, symmetric,
 * skew-symmetric) into a sparse matrix; array format into a dense block vector. Errors name
 * the file and line. */
coal_status coal_mat_read_mm(coal_ctx ctx, const char *path, coal_dtype dtype, coal_mat *A);
/* Same from a buffer in memory; name is used in error messages. */
coal_status coal_mat_read_mm_buffer(coal_ctx ctx, const char *name, const char *buf, size_t len,
                                    coal_dtype dtype, coal_mat *A);
/* Writes coordinate real general (a ".gz" suffix compresses). */
coal_status coal_mat_write_mm(coal_mat A, const char *path);
/* Dense: array (real general) or coordinate file into an n x k block in the given layout. */
coal_status coal_bvec_read_mm(coal_ctx ctx, const char *path, coal_dtype dtype, coal_layout layout,
                              coal_bvec *X);
coal_status coal_bvec_read_mm_buffer(coal_ctx ctx, const char *name, const char *buf, size_t len,
                                     coal_dtype dtype, coal_layout layout, coal_bvec *X);
coal_status coal_bvec_write_mm(coal_bvec X, const char *path);

/* ---- generators (deterministic) -------------------------------------------------------- */
/* 2-D 5-point Laplacian on an nx x ny grid, Dirichlet boundary (diag 4, offdiag -1). */
coal_status coal_gen_laplace2d(coal_ctx ctx, int64_t nx, int64_t ny, coal_dtype dtype, coal_mat *A);
/* 3-D Laplacian, stencil 7 (diag 6, -1) or 27 (diag 26, -1), Dirichlet boundary. */
coal_status coal_gen_laplace3d(coal_ctx ctx, int64_t nx, int64_t ny, int64_t nz, int stencil,
                               coal_dtype dtype, coal_mat *A);
/* 3-D 7-point anisotropic Laplacian: -(ex u_xx + ey u_yy + ez u_zz), coefficients > 0. */
coal_status coal_gen_aniso3d(coal_ctx ctx, int64_t nx, int64_t ny, int64_t nz, double ex, double ey,
                             double ez, coal_dtype dtype, coal_mat *A);
/* Thin structures in bending, simply supported: the square of the Dirichlet Laplacian. Beam:
 * n nodes, tridiag(-1, 2, -1)^2 (5-point: 1, -4, 6, -4, 1; 5 at the ends). Plate: nx x ny grid,
 * coal_gen_laplace2d's matrix squared (13-point biharmonic; diagonal 20 inside, 16 + the node's
 * number of neighbours on the edges). SPD, condition number about 0.16 (N+1)^4 with N nodes a side
 * (1.3e9 for a beam of 300 nodes): long CG runs from a small matrix. */
coal_status coal_gen_beam(coal_ctx ctx, int64_t n, coal_dtype dtype, coal_mat *A);
coal_status coal_gen_plate2d(coal_ctx ctx, int64_t nx, int64_t ny, coal_dtype dtype, coal_mat *A);
/* 3-D linear elasticity (src/gen_elast.c): the unit cube in n^3 trilinear hexahedra, Young's
 * modulus 1, Poisson ratio 0 <= nu < 0.5, three unknowns a node (x, y, z together; nodes in
 * x-fastest order), up to 81 entries a row. clamped != 0: the face x = 0 is fixed, 3 n (n+1)^2
 * rows, SPD; clamped = 0: 3 (n+1)^3 rows, singular, the six rigid-body modes its null space.
 * coal_gen_elast3d_coords: the nodes' coordinates (3 doubles a node, rows / 3 nodes). */
coal_status coal_gen_elast3d(coal_ctx ctx, int64_t n, double nu, int clamped, coal_dtype dtype,
                             coal_mat *A);
coal_status coal_gen_elast3d_coords(coal_ctx ctx, int64_t n, int clamped, double *coords);
/* The rigid-body modes of nnodes nodes at coords (dim = 2 or 3 doubles a node; dim unknowns a
 * node, together): B, column-major with leading dimension dim * nnodes, gets m = 3 (2-D) or 6
 * (3-D) columns: the translations, then the rotations about the nodes' centroid (3-D: about z,
 * x, y). The near-nullspace of elasticity for smoothed aggregation. */
coal_status coal_rigid_body_modes(coal_ctx ctx, int64_t nnodes, int dim, const double *coords,
                                  double *B);
/* Random power-law (Chung-Lu style) n x n matrix with the given mean nonzeros per row,
 * degree exponent gamma (> 2; 2.5 typical) and seed. Values in (0,1]; not symmetric. */
coal_status coal_gen_powerlaw(coal_ctx ctx, int64_t n, double mean_degree, double gamma,
                              uint64_t seed, coal_dtype dtype, coal_mat *A);
/* Random sparse SPD: symmetric random pattern with about mean_degree off-diagonals per row,
 * values in [-1,1), diagonal = row sum of |offdiag| + 1 (strictly diagonally dominant). */
coal_status coal_gen_random_spd(coal_ctx ctx, int64_t n, double mean_degree, uint64_t seed,
                                coal_dtype dtype, coal_mat *A);

/* ---- block vectors --------------------------------------------------------------------- *
 * n x k dense block in the context's memory (host or device). ld >= n (column-major) or
 * ld >= k (row-major); 0 picks the tight value. */
coal_status coal_bvec_create(coal_ctx ctx, int64_t n, int64_t k, coal_dtype dtype,
                             coal_layout layout, int64_t ld, coal_bvec *X);
coal_status coal_bvec_destroy(coal_bvec *X);
coal_status coal_bvec_size(coal_bvec X, int64_t *n, int64_t *k);
coal_layout coal_bvec_layout(coal_bvec X);
coal_dtype coal_bvec_dtype(coal_bvec X);
int64_t coal_bvec_ld(coal_bvec X);
/* Raw pointer in the context's memory space (device pointer on CUDA). */
void *coal_bvec_data(coal_bvec X);
/* Copies from / to a host array of the block's dtype, in layout `layout` with leading
 * dimension ld (0 = tight). */
coal_status coal_bvec_set_host(coal_bvec X, const void *src, coal_layout layout, int64_t ld);
coal_status coal_bvec_get_host(coal_bvec X, void *dst, coal_layout layout, int64_t ld);
/* Fills with uniform values in [-1,1) from a seed: entry (i, j) is coal_random_uniform(seed,
 * j*n + i) rounded to the dtype, whatever the layout (deterministic, the same bits on every
 * backend). Both fills run where the block lives (on the GPU for a CUDA context), with no host
 * buffer and no upload; queued on the context's stream. */
coal_status coal_bvec_set_random(coal_bvec X, uint64_t seed);
coal_status coal_bvec_set_value(coal_bvec X, double v);

/* ---- sparse matrix-vector product ------------------------------------------------------ *
 * y = alpha*A*x + beta*y for every column of x/y (x: ncols x k, y: nrows x k, same dtype as A).
 * beta = 0 overwrites y (NaN already in y does not survive). */
coal_status coal_spmv(coal_mat A, coal_spmv_kernel kernel, double alpha, coal_bvec x, double beta,
                      coal_bvec y);
/* Same with raw vectors in the context's memory space (one column). */
coal_status coal_spmv_raw(coal_mat A, coal_spmv_kernel kernel, double alpha, const void *x,
                          double beta, void *y);
/* The kernel that AUTO picks for A on its context's backend. */
coal_spmv_kernel coal_spmv_select(coal_mat A);

/* ---- sparse matrix times dense block (SpMM) -------------------------------------------- */
typedef enum {
  COAL_SPMM_AUTO = 0,
  COAL_SPMM_SWIFT = 1,    /* Swift [SWIFT]: sorted CSC, 32-wide regular blocks with segment sums
                             in shared memory, irregular sub-blocks of at most 32 nonzeros */
  COAL_SPMM_ROWSPLIT = 2, /* CSR, a warp per row, shuffle broadcast of column indices */
  COAL_SPMM_MERGE = 3,    /* CSR merge-based: equal share of the merge path per CTA, carry-out */
  COAL_SPMM_NKERNELS = 4
} coal_spmm_kernel;

const char *coal_spmm_kernel_name(coal_spmm_kernel k);
/* Parses "auto", "swift", "rowsplit", "merge" (case-sensitive). */
coal_status coal_spmm_kernel_parse(const char *name, coal_spmm_kernel *k);
/* Y = alpha*A*X + beta*Y with X ncols x k and Y nrows x k (any k >= 0), same dtype as A,
 * either layout and any leading dimension; X and Y may differ in layout and must not overlap.
 * beta = 0 overwrites Y without reading it. On CUDA, row-split and merge-based are fastest on
 * row-major blocks, Swift on column-major ones; AUTO with one column (k = 1, contiguous X and
 * Y) runs the SpMV kernel that coal_spmv_select picks. */
coal_status coal_spmm(coal_mat A, coal_spmm_kernel kernel, double alpha, coal_bvec X, double beta,
                      coal_bvec Y);
/* The kernel that AUTO picks for A, k columns and the layout of X, on A's backend. */
coal_spmm_kernel coal_spmm_select(coal_mat A, int64_t k, coal_layout layout);
/* Swift tuning: block height limit (1..32, default 8). Drops the cached Swift format. */
coal_status coal_mat_set_swift_height(coal_mat A, int height);

/* ---- solvers: CG and Block-CG for A X = B (A symmetric positive definite, fp64) ---------- *
 * A solver object belongs to one matrix. Setup checks that A is square, fp64 and symmetric
 * (values equal to 1e-12 relative, else COAL_ERR_NOT_SPD) and builds the preconditioner;
 * solve runs on A's backend, every column of B at once (Block-CG) or one after the other
 * (CG). Column j has converged when its true residual ||b_j - A x_j|| <= max(rtol ||b_j||,
 * atol) (2-norm). The method iterates on its recursively updated residual; when that meets
 * the tolerance, the true residual is computed (one product per column). If it misses, the
 * column is restarted from R = B - A X (a residual replacement; Block-CG starts a fresh
 * search block), at most 3 times; a column whose true residual a replacement does not at
 * least halve, or that still misses after the last, ends COAL_SOLVE_STAGNATED, with both
 * norms reported. Iterations and the limit maxit count every run of a column. A zero column
 * b_j has the solution x_j = 0 and converges at once.
 * Failures of the method (an indefinite operator, a breakdown, the iteration limit) are not
 * errors: coal_solver_solve returns COAL_SUCCESS and each column carries its reason. */
typedef enum { COAL_METHOD_CG = 0, COAL_METHOD_BLOCKCG = 1 } coal_method;
typedef enum {
  COAL_PC_NONE = 0,
  COAL_PC_JACOBI = 1, /* z = D^-1 r; needs a positive diagonal (else COAL_ERR_NOT_SPD) */
  COAL_PC_USER = 2,   /* set with coal_solver_set_pc_user */
  COAL_PC_AMG = 3,    /* one V-cycle of smoothed-aggregation AMG (coal_amg, default options),
                         built at setup and kept for later solves of the same matrix */
} coal_pc_type;
typedef enum {
  COAL_SOLVE_CONVERGED = 0,
  COAL_SOLVE_ITERATION_LIMIT = 1,
  COAL_SOLVE_BREAKDOWN = 2, /* a non-finite value or a search space that collapsed */
  COAL_SOLVE_NOT_SPD = 3,   /* p^T A p <= 0 (or P^T A P not positive definite) was met */
  COAL_SOLVE_DIVERGED = 4,  /* residual grew beyond 1e10 times its start */
  COAL_SOLVE_STOPPED = 5,   /* the monitor asked to stop */
  COAL_SOLVE_NOT_RUN = 6,
  COAL_SOLVE_STAGNATED = 7, /* the recursive residual met the tolerance, the true one did not,
                               and residual replacements could not close the gap */
} coal_solve_reason;

typedef struct {
  coal_solve_reason reason;
  int iterations;     /* iterations that updated this column */
  double resnorm;     /* true residual ||b - A x|| at the end */
  double rhsnorm;     /* ||b|| */
  double rec_resnorm; /* the solver's recursive residual norm at its last check */
  int replacements;   /* restarts from the true residual (see above) */
} coal_solve_info;

typedef struct coal_solver_s *coal_solver;

/* Default CG convergence-check interval (see bench/RESULTS.md for the measurement). */
#define COAL_CG_CHECK_EVERY 8

/* Monitor: called at each convergence check with the iteration number and the residual
 * norms of all k columns (a retired column keeps its last value). Return nonzero to stop. */
typedef int (*coal_monitor_fn)(void *user, int iteration, int64_t k, const double *resnorms);
/* User preconditioner: Z = M^-1 R for a block of columns (n x m, row-major, in the backend's
 * memory; m changes as columns converge). Must be SPD for CG. */
typedef coal_status (*coal_pc_apply_fn)(void *user, coal_bvec R, coal_bvec Z);

const char *coal_solve_reason_name(coal_solve_reason r);
const char *coal_method_name(coal_method m);
const char *coal_pc_name(coal_pc_type p);
/* Parse "cg" / "blockcg" and "none" / "jacobi" / "amg". */
coal_status coal_method_parse(const char *name, coal_method *m);
coal_status coal_pc_parse(const char *name, coal_pc_type *p);

coal_status coal_solver_create(coal_mat A, coal_solver *S);
coal_status coal_solver_destroy(coal_solver *S);
coal_status coal_solver_set_method(coal_solver S, coal_method m); /* default Block-CG */
/* rtol >= 0, atol >= 0 (not both 0), maxit >= 0. Defaults 1e-8, 0, 10000. */
coal_status coal_solver_set_tolerances(coal_solver S, double rtol, double atol, int maxit);
coal_status coal_solver_set_pc(coal_solver S, coal_pc_type pc); /* default none */
coal_status coal_solver_set_pc_user(coal_solver S, coal_pc_apply_fn apply, void *user);
coal_status coal_solver_set_monitor(coal_solver S, coal_monitor_fn fn, void *user);
/* CG: check convergence every `every` iterations (one host synchronisation each); default
 * COAL_CG_CHECK_EVERY. Block-CG checks every iteration. */
coal_status coal_solver_set_check_every(coal_solver S, int every);
/* Builds the preconditioner and checks A (called by solve when not done). */
coal_status coal_solver_setup(coal_solver S);
/* Solves A X = B. B and X are n x k blocks in A's context (any layout); X holds the initial
 * guess on entry and the solution on return. */
coal_status coal_solver_solve(coal_solver S, coal_bvec B, coal_bvec X);
/* Result of column j of the last solve. */
coal_status coal_solver_get_info(coal_solver S, int64_t j, coal_solve_info *info);
/* Iterations of the last solve (Block-CG: block iterations; CG: the sum over columns). */
int coal_solver_iterations(coal_solver S);

/* ---- smoothed-aggregation algebraic multigrid ------------------------------------------ *
 * A preconditioner B ~ A^-1 for a symmetric positive (semi-)definite fp64 matrix A, applied to
 * whole n x k blocks. Setup, per level: symmetric strength of connection |a_ij| >= theta
 * sqrt(a_ii a_jj); aggregates from a distance-2 maximal independent set of the strong graph
 * (hashed Luby rounds: deterministic, the same on every run); the tentative prolongator T from
 * the constant vector, normalised per aggregate; rho(D^-1 A) by Lanczos; P = (I - 4/(3 rho)
 * D^-1 A) T and R = P^T; A_c = P^T A P; until the level has at most coarse_size rows, max_levels
 * levels, or coarsening stalls (more than 0.8 of the rows left). The coarsest level is solved by
 * a dense Cholesky factorisation (pivoted, dropping the null space, when it is singular, as for
 * a pure Neumann problem: the cycle then stays symmetric positive semi-definite and CG still
 * converges on a consistent system). Smoothers: Chebyshev (default, degree 2, on D^-1 A) or
 * l1-Jacobi (degree = sweeps), the same before and after the coarse correction, so that the
 * cycle is symmetric and positive definite: a valid CG preconditioner.
 * Errors: COAL_ERR_ARG (not square, bad option), COAL_ERR_NOT_SPD (not symmetric to 1e-12
 * relative, a diagonal entry not positive), COAL_ERR_DEVICE_MEMORY (out of GPU memory during the
 * setup), COAL_ERR_STATE (apply before setup). A failed setup frees what it built; the object
 * stays usable. The library never prints. */
typedef struct coal_amg_s *coal_amg;
typedef enum { COAL_AMG_CHEBYSHEV = 0, COAL_AMG_L1_JACOBI = 1 } coal_amg_smoother;
typedef enum { COAL_AMG_V_CYCLE = 0, COAL_AMG_W_CYCLE = 1 } coal_amg_cycle;
#define COAL_AMG_MAX_LEVELS 24
/* Defaults, chosen by measurement (docs/amg.md). */
#define COAL_AMG_DEFAULT_THETA  0.02
#define COAL_AMG_DEFAULT_COARSE 1000

/* Setup phases timed by coal_amg_get_info (wall clock, synchronised). */
typedef enum {
  COAL_AMG_PHASE_CHECK = 0,     /* symmetry and diagonal checks of A */
  COAL_AMG_PHASE_STRENGTH = 1,  /* diagonal, strength graph */
  COAL_AMG_PHASE_AGGREGATE = 2, /* distance-2 MIS and aggregates */
  COAL_AMG_PHASE_TENTATIVE = 3, /* T */
  COAL_AMG_PHASE_RHO = 4,       /* Lanczos estimates of rho(D^-1 A) */
  COAL_AMG_PHASE_SMOOTH = 5,    /* A T (SpGEMM), P = T - omega D^-1 A T, R = P^T */
  COAL_AMG_PHASE_GALERKIN = 6,  /* A_c = P^T A P (SpGEMM PtAP) */
  COAL_AMG_PHASE_COARSE = 7,    /* dense factorisation of the coarsest matrix */
  COAL_AMG_PHASE_OTHER = 8,     /* smoother diagonals, cycle workspace */
  COAL_AMG_NPHASES = 9
} coal_amg_phase;

typedef struct {
  int levels;                          /* levels including the coarsest */
  int64_t rows[COAL_AMG_MAX_LEVELS];   /* rows of A_l */
  int64_t nnz[COAL_AMG_MAX_LEVELS];    /* nonzeros of A_l */
  int64_t p_nnz[COAL_AMG_MAX_LEVELS];  /* nonzeros of P_l (0 on the coarsest) */
  size_t bytes[COAL_AMG_MAX_LEVELS];   /* CSR bytes of A_l, P_l and R_l (level 0: A counted) */
  double rho[COAL_AMG_MAX_LEVELS];     /* estimate of rho(D^-1 A_l) (0 where not needed) */
  int mis_rounds[COAL_AMG_MAX_LEVELS]; /* rounds of the distance-2 MIS that built level l+1 */
  double grid_complexity;              /* sum of rows / rows of A */
  double operator_complexity;          /* sum of nonzeros / nonzeros of A */
  size_t hierarchy_bytes;              /* all levels' A, P and R (A itself included) */
  size_t coarse_bytes;                 /* the dense factor of the coarsest level */
  size_t workspace_bytes;              /* the cycle's blocks at the current block width */
  int coarse_rank;                     /* rank of the coarsest matrix found by its factorisation */
  int coarse_direct;                   /* 1: the coarsest level is solved by the dense factor;
                                          0: it was too large (coarsening stalled) and is only
                                          smoothed */
  double setup_seconds;                /* the whole setup */
  double phase_seconds[COAL_AMG_NPHASES];
  /* the SpGEMM algorithm of the Galerkin product that built level l+1 (COAL_SPGEMM_ROWS or
   * COAL_SPGEMM_TILE; 0 on the coarsest level) */
  int galerkin_algo[COAL_AMG_MAX_LEVELS];
  int numeric_only;   /* 1: the last setup was coal_amg_resetup's numeric-only one */
  size_t reuse_bytes; /* what the numeric-only re-setup keeps besides the hierarchy (0 unless
                         coal_amg_set_reuse): strong graphs, aggregates, T, A_F, the products'
                         symbolic state is not counted */
} coal_amg_info;

const char *coal_amg_phase_name(coal_amg_phase p);
const char *coal_amg_smoother_name(coal_amg_smoother s);
/* Parses "chebyshev" / "l1-jacobi". */
coal_status coal_amg_smoother_parse(const char *name, coal_amg_smoother *s);

/* A must outlive the object (and keep its values: after coal_mat_set_values, coal_amg_setup or
 * coal_amg_resetup again). A square, symmetric matrix with a positive diagonal, fp64 or fp32 (an
 * fp32 A gets an fp64 hierarchy, built from an fp64 copy of A that the object keeps). The setup
 * runs on A's backend (every step on the GPU for a CUDA context). The blocks of apply are fp64. */
coal_status coal_amg_create(coal_mat A, coal_amg *amg);
coal_status coal_amg_destroy(coal_amg *amg);
/* Strength threshold, 0 <= theta < 1 (default COAL_AMG_DEFAULT_THETA). */
coal_status coal_amg_set_theta(coal_amg amg, double theta);
/* Smoother and its degree: Chebyshev polynomial degree 1..16 (default 2), l1-Jacobi sweeps
 * 1..16. */
coal_status coal_amg_set_smoother(coal_amg amg, coal_amg_smoother s, int degree);
/* Levels stop coarsening at <= coarse_size rows (>= 1; default COAL_AMG_DEFAULT_COARSE). */
coal_status coal_amg_set_coarse_size(coal_amg amg, int64_t coarse_size);
/* At most max_levels levels (1..COAL_AMG_MAX_LEVELS, default COAL_AMG_MAX_LEVELS). */
coal_status coal_amg_set_max_levels(coal_amg amg, int max_levels);
coal_status coal_amg_set_cycle(coal_amg amg, coal_amg_cycle c); /* default V */
/* Builds the hierarchy (again, from A's current values, when called a second time). */
coal_status coal_amg_setup(coal_amg amg);
/* Keep (keep = 1) what a numeric-only re-setup needs: per level the strong graph, the
 * aggregates, the near-nullspace vector, T, the filtered matrix A_F and the two product objects
 * (A_F T and P^T A P, with their symbolic state). Default 0. Takes effect at the next setup. */
coal_status coal_amg_set_reuse(coal_amg amg, int keep);
/* After new values of A on the same pattern (coal_mat_set_values): recomputes the diagonals,
 * the spectral estimates, A_F's and P's values, R, every P^T A P numerically and the coarse
 * factor, on the aggregates and patterns of the last full setup (whose strength test is not
 * repeated). Allocates only the setup's scratch vectors (from the backend's pool) and moves no
 * O(n) data across the bus (an fp32 A: its fp64 copy's values are converted on the host).
 * Without a kept state (coal_amg_set_reuse(amg, 0), or no setup yet) it is coal_amg_setup.
 * Errors as coal_amg_setup's; after an error the hierarchy is freed (set up again). */
coal_status coal_amg_resetup(coal_amg amg);
/* Z = B R: one cycle with a zero initial guess on R (n x k, any k >= 0, any layout; Z n x k,
 * not overlapping R). The cycle's blocks are allocated by setup for the block width of the
 * last coal_amg_reserve (1 by default); a wider R grows them once. */
coal_status coal_amg_apply(coal_amg amg, coal_bvec R, coal_bvec Z);
/* Sizes the cycle's workspace for blocks of up to k columns now, so that apply allocates
 * nothing (the solvers call it with their block width). */
coal_status coal_amg_reserve(coal_amg amg, int64_t k);
coal_status coal_amg_get_info(coal_amg amg, coal_amg_info *info);
/* coal_amg_apply with the signature of a user preconditioner: pass it to
 * coal_solver_set_pc_user / coal_eigen_set_pc_user with the coal_amg as `user` to use a
 * hierarchy built with other options. */
coal_status coal_amg_pc_apply(void *amg, coal_bvec R, coal_bvec Z);

/* ---- sparse x sparse products (TileSpGEMM) --------------------------------------------- *
 * C = A*B for general rectangular A (m x k) and B (k x n), and the Galerkin product
 * C = P^T A P (A square n x n, P n x nc; P^T is formed explicitly). Both operands belong to
 * one context and have one dtype (fp64 or fp32); C is a new matrix on that context, CSR with
 * sorted unique columns. The structure is symbolic: an entry exists where some product
 * a_ik * b_kj exists, even when the sum is zero. Each entry is summed in double in ascending k
 * and rounded once, on both backends. Errors: COAL_ERR_ARG (NULL, dimensions, contexts,
 * dtypes), COAL_ERR_OVERFLOW (C beyond 2^31-1 nonzeros), COAL_ERR_MEMORY /
 * COAL_ERR_DEVICE_MEMORY (out of host / GPU memory). */
coal_status coal_mat_multiply(coal_mat A, coal_mat B, coal_mat *C);
coal_status coal_mat_ptap(coal_mat A, coal_mat P, coal_mat *C);

/* Reusable product (AMG re-setup, PETSc MatProductNumeric): create does the symbolic and the
 * numeric work and keeps what a numeric-only recomputation needs; after new values of the
 * operands (coal_mat_set_values, same structure) coal_spgemm_numeric recomputes C's values in
 * place, allocating nothing. A, B (P) and C must outlive the object and keep their structure;
 * C is owned by the caller (destroy it after or before the object, but numeric needs it).
 * type COAL_PRODUCT_AB: C = A*B; COAL_PRODUCT_PTAP: C = B^T A B (B plays P). */
typedef enum { COAL_PRODUCT_AB = 0, COAL_PRODUCT_PTAP = 1 } coal_product_type;
typedef struct coal_spgemm_s *coal_spgemm;
coal_status coal_spgemm_create(coal_product_type type, coal_mat A, coal_mat B, coal_spgemm *prod,
                               coal_mat *C);
/* Algorithms. TILE: TileSpGEMM [TILESPGEMM] (16 x 16 tiles with bit masks). ROWS: row-by-row
 * Gustavson with hash accumulators (on the GPU C stays on the device). AUTO picks ROWS on both
 * backends, the faster on every matrix of `coalesce bench spgemm` (docs/spgemm.md). */
typedef enum { COAL_SPGEMM_AUTO = 0, COAL_SPGEMM_TILE = 1, COAL_SPGEMM_ROWS = 2 } coal_spgemm_algo;
/* coal_spgemm_create with a chosen algorithm (tests and benchmarks; AUTO is coal_spgemm_create).
 * An unknown algo: COAL_ERR_ARG. */
coal_status coal_spgemm_create_algo(coal_product_type type, coal_mat A, coal_mat B,
                                    coal_spgemm_algo algo, coal_spgemm *prod, coal_mat *C);
coal_status coal_spgemm_numeric(coal_spgemm prod);
coal_status coal_spgemm_destroy(coal_spgemm *prod);

/* What a product object measured (PtAP: both products together). */
typedef struct {
  int64_t nnz_c;    /* nonzeros of C */
  int64_t products; /* intermediate products a_ik * b_kj (flops = 2 * products) */
  int64_t ntiles_a, ntiles_b, ntiles_c; /* non-empty 16 x 16 tiles of A, B; listed tiles of C */
  int64_t empty_tiles_c;                /* tiles of C's layout with no nonzero */
  int64_t tile_pairs;                   /* (A_IK, B_KJ) tile pairs multiplied */
  int64_t dense_tiles_c;                /* tiles of C using the dense accumulator */
  size_t temp_bytes;       /* memory the object holds besides A, B and C, in the backend's
                              space (tile formats, C's tile structure, scan workspace; PtAP:
                              also P^T and A*P) */
  size_t c_bytes;          /* C's CSR (row offsets, columns, values) */
  double symbolic_seconds; /* wall time of create (symbolic + first numeric) */
} coal_spgemm_stats;
coal_status coal_spgemm_get_stats(coal_spgemm prod, coal_spgemm_stats *st);

/* ---- eigenpairs: LOBPCG ---------------------------------------------------------------- *
 * The nev smallest (or largest) eigenpairs of A x = lambda x, or of A x = lambda M x with M
 * symmetric positive definite, by LOBPCG [LOBPCG] with a block of bs >= nev columns.
 * A (and M) must be square, fp64, symmetric (1e-12 relative, else COAL_ERR_NOT_SPD; A itself
 * may be indefinite) and of one context; every block product runs on that backend.
 * Eigenvectors are M-orthonormal (x_i^T M x_j = delta_ij). Pair j has converged when
 *   ||A x_j - lambda_j M x_j||_2 <= max(tol |lambda_j|, 10 u sigma_j) ||x_j||_2
 * with u the unit roundoff and sigma_j = ||A||_inf + |lambda_j| ||M||_inf: relative to the
 * eigenvalue, except that a residual at the rounding level of the operator counts as converged
 * (a zero eigenvalue converges). The reported residual is ||r_j|| / (max(|lambda_j|,
 * 10 u sigma_j / tol) ||x_j||), so converged <=> resnorm <= tol. Converged columns are
 * soft-locked: they stay in the Rayleigh-Ritz basis but get no new search directions, and are
 * unlocked again if their residual rises above tol. Failing to converge within maxit is not an
 * error: the solve returns COAL_SUCCESS and each pair says whether it converged; the reported
 * residuals are the true ones, recomputed at the end. */
typedef enum { COAL_EIG_SMALLEST = 0, COAL_EIG_LARGEST = 1 } coal_eig_which;
typedef struct coal_eigen_s *coal_eigen;

typedef struct {
  double value;   /* eigenvalue (Ritz value of the final basis) */
  double resnorm; /* ||A x - lambda M x|| / (max(|lambda|, floor) ||x||) as defined above:
                     the true residual, recomputed at the end */
  int converged;  /* resnorm <= tol */
  int iterations; /* the iteration at which it was last found converged, else the total */
} coal_eig_info;

typedef struct {
  int iterations;    /* LOBPCG iterations (Rayleigh-Ritz steps after the first) */
  int restarts;      /* basis degenerated: P (and if need be W) dropped */
  int dropped;       /* search directions dropped as linearly dependent */
  int64_t spmm_a;    /* columns multiplied by A (sum over the block products) */
  int64_t spmm_m;    /* columns multiplied by M */
  double seconds;    /* wall time of the last solve (synchronised) */
  double rr_seconds; /* of which: the small dense eigenproblems on the host */
} coal_eigen_stats;

const char *coal_eig_which_name(coal_eig_which w);
/* Parses "smallest" / "largest". */
coal_status coal_eig_which_parse(const char *name, coal_eig_which *w);

/* M may be NULL (standard problem). A and M must outlive the object. */
coal_status coal_eigen_create(coal_mat A, coal_mat M, coal_eigen *E);
coal_status coal_eigen_destroy(coal_eigen *E);
/* nev >= 1; blocksize 0 picks nev + max(4, nev/4) (at most n); else nev <= blocksize <= n.
 * Default nev 1. */
coal_status coal_eigen_set_nev(coal_eigen E, int nev, int blocksize);
coal_status coal_eigen_set_which(coal_eigen E, coal_eig_which w); /* default smallest */
/* tol > 0, maxit >= 0. Defaults 1e-6, 1000. */
coal_status coal_eigen_set_tolerances(coal_eigen E, double tol, int maxit);
/* Preconditioner T ~ A^-1 applied to the residuals: none (default), Jacobi (diag(A)^-1, needs a
 * positive diagonal), AMG (one V-cycle of coal_amg on A, which must then be positive
 * (semi-)definite; built at the first solve and kept) or a user function (as for the linear
 * solvers; R and Z are n x m row-major blocks in the backend's memory). */
coal_status coal_eigen_set_pc(coal_eigen E, coal_pc_type pc);
coal_status coal_eigen_set_pc_user(coal_eigen E, coal_pc_apply_fn apply, void *user);
/* Starting block: X0 (n x k0, any layout, A's context) gives the first min(k0, bs) columns
 * (copied at solve); the rest, and any column found linearly dependent, are random from the
 * seed (default seed 1). X0 must outlive the next solve; NULL: all random. */
coal_status coal_eigen_set_initial(coal_eigen E, coal_bvec X0);
coal_status coal_eigen_set_seed(coal_eigen E, uint64_t seed);
/* Records the residual estimates of the nev wanted pairs at every iteration. */
coal_status coal_eigen_set_history(coal_eigen E, int on);
/* Runs LOBPCG. Errors: COAL_ERR_ARG / COAL_ERR_UNSUPPORTED (bad sizes, dtype, contexts),
 * COAL_ERR_NOT_SPD (A or M not symmetric, M not positive definite, Jacobi on a non-positive
 * diagonal), memory and device errors. */
coal_status coal_eigen_solve(coal_eigen E);
/* Pair j (0 <= j < nev) of the last solve, in the order of `which` (ascending for smallest,
 * descending for largest). */
coal_status coal_eigen_get_info(coal_eigen E, int j, coal_eig_info *info);
/* Copies the first k eigenvectors (k = V's columns, k <= nev) into V (n x k, any layout). */
coal_status coal_eigen_get_vectors(coal_eigen E, coal_bvec V);
coal_status coal_eigen_get_stats(coal_eigen E, coal_eigen_stats *st);
/* Residual history: *nit rows of nev estimates (row it: pairs 0..nev-1 after iteration it; a
 * locked pair keeps its last value); NULL unless set_history was on. Valid until the next
 * solve or destroy. */
coal_status coal_eigen_get_history(coal_eigen E, int *nit, int *nev, const double **res);
/* Number of the nev wanted pairs that converged in the last solve. */
int coal_eigen_nconverged(coal_eigen E);

/* ---- benchmark support (`coalesce bench`, the probes) ---------------------------------- *
 * Timing in the library's own terms and the vendor references measured in the same process.
 * Not needed to use the library. coal_bench_time runs on both backends; the copy bandwidth,
 * the GPU FastLoad build time and the cuSPARSE references need a CUDA context, and a host-only
 * build answers COAL_ERR_NOT_COMPILED for them. */
typedef coal_status (*coal_bench_fn)(void *arg);

/* Runs fn `warmup` times, then `reps` times, each timed on its own (CUDA events on the
 * context's stream for the cuda backend, a monotonic clock on host); writes the median and
 * the minimum in microseconds. */
coal_status coal_bench_time(coal_ctx ctx, coal_bench_fn fn, void *arg, int warmup, int reps,
                            double *median_us, double *min_us);

/* Device-to-device copy bandwidth, counting bytes read plus bytes written, in GB/s
 * (median of several copies of `bytes` bytes). CUDA contexts only. */
coal_status coal_bench_copy_bandwidth(coal_ctx ctx, size_t bytes, double *gbps);

/* FastLoad format built on the GPU from A's device CSR: rebuilds A's scatter (transposed = 0)
 * or gather (1) device format, replacing the cached one, and writes the build time in
 * milliseconds (CUDA events; workspace and format allocations included). One untimed build
 * first, so that one-time module loading is not counted. */
coal_status coal_cuda_fastload_build_time(coal_mat A, int transposed, double *ms);

/* cuSPARSE SpMV on A's device CSR (alg 1 = CUSPARSE_SPMV_CSR_ALG1, 2 = ALG2), with
 * cusparseSpMV_preprocess done at creation. x and y are device vectors of A's dtype. */
typedef struct coal_cusparse_spmv coal_cusparse_spmv;
coal_status coal_cusparse_spmv_create(coal_mat A, int alg, const void *x, void *y,
                                      coal_cusparse_spmv **out);
coal_status coal_cusparse_spmv_run(coal_cusparse_spmv *h, double alpha, double beta);
void coal_cusparse_spmv_destroy(coal_cusparse_spmv *h);

/* cuSPARSE SpMM on A's device CSR: Y = alpha*A*X + beta*Y with X (ncols x k) and Y (nrows x k)
 * dense device blocks of A's dtype in `layout` with leading dimensions ldx, ldy.
 * alg: 1 = CUSPARSE_SPMM_CSR_ALG1 (column-major), 2 = CSR_ALG2 and 3 = CSR_ALG3 (row-major);
 * cusparseSpMM_preprocess is done at creation (where the algorithm has one). A combination
 * cuSPARSE refuses gives COAL_ERR_UNSUPPORTED, so the caller can skip it. */
typedef struct coal_cusparse_spmm coal_cusparse_spmm;
coal_status coal_cusparse_spmm_create(coal_mat A, int alg, int64_t k, coal_layout layout,
                                      const void *X, int64_t ldx, void *Y, int64_t ldy,
                                      coal_cusparse_spmm **out);
coal_status coal_cusparse_spmm_run(coal_cusparse_spmm *h, double alpha, double beta);
void coal_cusparse_spmm_destroy(coal_cusparse_spmm *h);

/* cuSPARSE SpGEMM: C = A*B with cuSPARSE's generic SpGEMM on the device CSR of A and B (one
 * CUDA context; the descriptors point at A's and B's device copies, which must stay current:
 * do not change their values meanwhile). run: the whole product as a user calls it
 * (descriptors of C, workEstimation, compute, allocations, copy; the buffers freed, C kept
 * until the next run). reuse_setup: the structure by the cusparseSpGEMMreuse_* path once, then
 * its first numeric; reuse_compute: the numeric-only product. result: the last C as a new
 * host-CSR matrix on the context, and peak_bytes (the buffers of run plus C). */
typedef struct coal_cusparse_spgemm coal_cusparse_spgemm;
coal_status coal_cusparse_spgemm_create(coal_mat A, coal_mat B, coal_cusparse_spgemm **h);
coal_status coal_cusparse_spgemm_run(coal_cusparse_spgemm *h);
coal_status coal_cusparse_spgemm_reuse_setup(coal_cusparse_spgemm *h);
coal_status coal_cusparse_spgemm_reuse_compute(coal_cusparse_spgemm *h);
coal_status coal_cusparse_spgemm_result(coal_cusparse_spgemm *h, coal_mat *C, size_t *peak_bytes);
void coal_cusparse_spgemm_destroy(coal_cusparse_spgemm *h);

#ifdef __cplusplus
}
#endif
#endif
