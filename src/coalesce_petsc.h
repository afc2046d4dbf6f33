/* coalesce for PETSc programs (built when the `petsc` option finds PETSc).
 *
 * Unmodified programs: load the library with -dll_append <prefix>/lib/libcoalesce.so and pick
 * the matrix type with -mat_type swift. "swift" is a root name: seqaijswift on one rank,
 * mpiaijswift on several. Both are PETSc's AIJ with the products swapped: MatMult(Add),
 * MatMultTranspose(Add) on coalesce's SpMV, MatProduct AB with a dense matrix on SpMM, and
 * MatProduct AB and PtAP with AIJ matrices on coalesce's sparse x sparse product. Everything
 * else is AIJ's. Options:
 *   -mat_swift_backend host|cuda|auto   where the kernels run (default auto: COALESCE_BACKEND,
 *                                       else the GPU when one answers)
 *   -mat_swift_pin <bool>               page-lock the arrays of the vectors the products see,
 *                                       for faster copies to the GPU (default true)
 *   -mat_swift_view                     print the backend and kernel of each matrix once
 * -info reports the same through PetscInfo.
 * With -vec_type swift as well (one rank), PETSc's vectors keep their entries on the backend
 * too: the vector operations of the solvers run there and the products copy nothing. */
#ifndef COALESCE_PETSC_H
#define COALESCE_PETSC_H

#include <petscmat.h>
#include <petscpc.h>

#include "coalesce.h"

#define MATSWIFT       "swift"
#define MATSEQAIJSWIFT "seqaijswift"
#define MATMPIAIJSWIFT "mpiaijswift"
/* -vec_type swift: vectors whose entries also live in coalesce's backend memory (the GPU), so
 * that a Krylov solve with -mat_type swift runs with no copy per product. One MPI rank. */
#define VECSWIFT    "swift"
#define VECSEQSWIFT "seqswift"
/* -pc_type swiftamg: coalesce's smoothed-aggregation AMG (one cycle per application) on a
 * sequential seqaij or seqaijswift Pmat; on several ranks as -pc_type bjacobi -sub_pc_type
 * swiftamg. Options -pc_swiftamg_theta, _smoother chebyshev|l1-jacobi, _degree, _coarse_size,
 * _max_levels, _cycle v|w (docs/petsc.md). */
#define PCSWIFTAMG "swiftamg"

/* Registers the matrix, vector and PC types (idempotent). For programs linked with libcoalesce
 * directly; -dll_append calls it through PetscDLLibraryRegister_coalesce. Call after
 * PetscInitialize. */
PETSC_EXTERN PetscErrorCode coal_petsc_register(void);
PETSC_EXTERN PetscErrorCode PetscDLLibraryRegister_coalesce(void);

/* The one coalesce context that every swift matrix and vector of the process works on, created
 * at first use: backend from the option -mat_swift_backend host|cuda|auto (default auto, which
 * honours COALESCE_BACKEND), destroyed by PetscFinalize (do not destroy it yourself). For
 * reading its state, e.g. coal_device_stats_get (coalesce_device.h): what the plugin's products
 * uploaded. */
PETSC_EXTERN PetscErrorCode coal_petsc_context(coal_ctx *ctx);

/* A PETSc MatShell (on PETSC_COMM_SELF) that applies the coalesce matrix A (fp64, any
 * backend): MatMult, MatMultTranspose, MatMultAdd, MatGetDiagonal, and MatProduct AB with a
 * sequential dense matrix. A must outlive the shell; the shell keeps workspaces that its
 * MatDestroy frees. */
PETSC_EXTERN PetscErrorCode coal_petsc_shell_create(coal_mat A, Mat *S);

#endif
