/* Internals of the PETSc plugin (matrix types seqaijswift / mpiaijswift, the vector types
 * seqswift / swift, the PC type swiftamg and the MatShell wrapper). The plugin is linked into
 * libcoalesce but is a consumer on top of it: it uses the public headers only, coalesce.h,
 * coalesce_petsc.h and coalesce_device.h (arrays in the context's memory for its vectors and
 * workspaces; the layer test, tests/test_layers.py, checks it). It also uses PETSc's installed
 * private headers matimpl.h, vecimpl.h and pcimpl.h (the ops tables and Mat_Product), as PETSc's
 * own GPU types do. */
#ifndef COAL_SWIFT_IMPL_H
#define COAL_SWIFT_IMPL_H

/* PETSc's private headers have unused parameters in inline functions */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <petsc/private/matimpl.h>
#pragma GCC diagnostic pop

#include "coalesce_device.h"
#include "coalesce_petsc.h"

#if !defined(PETSC_USE_REAL_DOUBLE) || defined(PETSC_USE_COMPLEX)
#error "the coalesce PETSc plugin needs a real double-precision PETSc"
#endif

/* A coalesce status as a PETSc error carrying the library's message. */
PetscErrorCode coal_petsc_error(coal_ctx ctx, coal_status st, const char *what);
#define SWIFT_CALL(ctx, expr)                                                                      \
  do {                                                                                             \
    coal_status swift_st_ = (expr);                                                                \
    if (swift_st_ != COAL_SUCCESS) return coal_petsc_error((ctx), swift_st_, #expr);               \
  } while (0)

/* coal_petsc_context (coalesce_petsc.h): the one coalesce context of the process. */
/* Whether ctx is the plugin's context and still alive (a vector destroyed after PetscFinalize
 * must not release memory through a destroyed context). */
PetscBool swift_ctx_alive(coal_ctx ctx);

/* Log events: the copies of PETSc's host vectors to and from the GPU, and our kernels. */
typedef struct {
  PetscLogEvent copy_in, copy_out, spmv, spmm, spgemm, build, amg_setup, amg_apply;
} swift_events;
extern swift_events coal_swift_ev;

/* Device workspaces for products with host vectors (CUDA backend): x and y of one product,
 * grown on demand and kept, so a solve allocates nothing after its first product. On the host
 * backend the vectors are used in place and these stay empty. */
typedef struct {
  void *x, *y;
  size_t xcap, ycap; /* bytes */
} swift_ws;
/* Waits for the context's GPU work when PETSc logging is on (see swift_core.c). */
PetscErrorCode swift_log_sync(coal_ctx ctx);
/* Composes under `to` the function B has under `from` (on), or removes `to` (off): AIJ's
 * converters re-published under our type names. */
PetscErrorCode swift_republish(Mat B, const char *from, const char *to, PetscBool on);
/* The matrix a conversion to our types works on: a copy of A (MAT_INITIAL_MATRIX), *newmat
 * refilled from A (MAT_REUSE_MATRIX), or A itself (MAT_INPLACE_MATRIX, *newmat == A). */
PetscErrorCode swift_convert_target(Mat A, MatReuse reuse, Mat *newmat);
PetscErrorCode swift_ws_reserve(coal_ctx ctx, swift_ws *w, size_t xbytes, size_t ybytes);
void swift_ws_free(coal_ctx ctx, swift_ws *w);

/* y = A x + (add ? y0 : 0) with PETSc's host arrays, on A's backend; y may equal y0. When vx,
 * vy are given, their arrays may be page-locked once (see swift_pin) for faster copies. */
PetscErrorCode swift_apply(coal_mat A, swift_ws *w, const PetscScalar *x, const PetscScalar *y0,
                           PetscScalar *y, Vec vx, Vec vy);
/* z = A x (+ y) with PETSc vectors (y NULL: no addition; y may be z). */
PetscErrorCode swift_apply_vec(coal_mat A, swift_ws *w, Vec x, Vec y, Vec z);
/* Y = op(X) for column-major blocks X (nx x k, ldx) and Y (ny x k, ldy), fp64, timed by event
 * ev: arrays in the backend's memory (dev), or PETSc's host arrays, used in place on the host
 * backend and copied through w on the CUDA backend. A failing op is reported as `what`. */
typedef coal_status (*swift_block_op)(void *user, coal_bvec X, coal_bvec Y);
PetscErrorCode swift_block_run(coal_ctx ctx, swift_ws *w, int64_t nx, int64_t ny, PetscInt k,
                               const PetscScalar *X, PetscInt ldx, PetscScalar *Y, PetscInt ldy,
                               PetscBool dev, swift_block_op op, void *user, PetscLogEvent ev,
                               const char *what);
/* Y = A X for column-major host blocks X (ncols x k, ldx) and Y (nrows x k, ldy) on SpMM. */
PetscErrorCode swift_apply_block(coal_mat A, swift_ws *w, PetscInt k, const PetscScalar *X,
                                 PetscInt ldx, PetscScalar *Y, PetscInt ldy);

/* Page-locks the array of v (>= 1 MiB, CUDA backend) the first time it is seen and keeps it
 * registered until v is destroyed; *pinned says whether `array` is that registered array. */
PetscErrorCode swift_pin(coal_ctx ctx, Vec v, const void *array, size_t bytes, PetscBool *pinned);

/* The vector types (swift_vec.c). A seqswift vector keeps a copy of its entries in the backend's
 * memory; these give that copy to the products: current for reading, or to be written (keep:
 * current first, for y += A x) after which it is the only current copy. */
PETSC_INTERN PetscErrorCode VecCreate_SeqSwift(Vec);
PETSC_INTERN PetscErrorCode VecCreate_Swift(Vec);
coal_ctx swift_vec_ctx(Vec v); /* NULL when v is not a seqswift vector */
PetscErrorCode swift_vec_dev_read(Vec v, const double **d);
PetscErrorCode swift_vec_dev_write(Vec v, PetscBool keep, double **d);

/* Per-matrix data of seqaijswift (A->spptr). */
typedef struct {
  coal_ctx ctx;             /* set when cm is first built */
  coal_mat cm;              /* coalesce copy of the CSR, rebuilt on a structure change */
  coal_mat cmt;             /* A^T for the transpose products, built on demand */
  PetscObjectState state;   /* object state when cm's values were last refreshed */
  PetscObjectState nzstate; /* nonzero state when cm was built */
  PetscBool viewed;         /* -mat_swift_view printed */
  swift_ws ws;
  /* AIJ's own operations, called for what we do not handle */
  struct _MatOps parent;
} Mat_SeqAIJSwift;

PETSC_INTERN PetscErrorCode MatCreate_SeqAIJSwift(Mat);
PETSC_INTERN PetscErrorCode MatCreate_MPIAIJSwift(Mat);
PETSC_INTERN PetscErrorCode MatConvert_SeqAIJ_SeqAIJSwift(Mat, MatType, MatReuse, Mat *);
PETSC_INTERN PetscErrorCode MatConvert_MPIAIJ_MPIAIJSwift(Mat, MatType, MatReuse, Mat *);
/* The coalesce matrix of a seqaijswift matrix, with values current. */
PetscErrorCode swift_seq_sync(Mat A, coal_mat *cm);
/* A coalesce copy of a (sequential) AIJ matrix's CSR, and a refresh of its values from the
 * same structure. */
PetscErrorCode swift_mat_from_aij(Mat A, coal_ctx ctx, coal_mat *cm);
PetscErrorCode swift_mat_refresh(Mat A, coal_mat cm);
/* The PC type swiftamg (swift_pc.c). */
PETSC_INTERN PetscErrorCode PCCreate_SwiftAMG(PC);
/* Product dispatch for seqaijswift (swift_product.c). */
PetscErrorCode swift_product_setfromoptions(Mat C);

#endif
