/* coal_petsc_shell_create: a coalesce matrix as a PETSc MatShell, so that any PETSc solver
 * can apply it (MatMult, MatMultAdd, MatMultTranspose, MatGetDiagonal, MatProduct AB with a
 * dense matrix). */
#include "swift_impl.h"

#include <stdlib.h>

typedef struct {
  coal_mat A;  /* the user's; not owned */
  coal_mat At; /* A^T, built at the first transpose product (owned) */
  swift_ws ws;
} swift_shell;

static PetscErrorCode shell_ctx(Mat S, swift_shell **sh) {
  PetscFunctionBegin;
  PetscCall(MatShellGetContext(S, sh));
  PetscFunctionReturn(0);
}

static PetscErrorCode shell_apply(Mat S, PetscBool trans, Vec x, Vec y, Vec z) {
  swift_shell *sh;
  PetscFunctionBegin;
  PetscCall(shell_ctx(S, &sh));
  coal_mat M = sh->A;
  if (trans) {
    if (!sh->At) SWIFT_CALL(coal_mat_ctx(sh->A), coal_mat_transpose(sh->A, &sh->At));
    M = sh->At;
  }
  PetscCall(swift_apply_vec(M, &sh->ws, x, y, z));
  PetscFunctionReturn(0);
}

static PetscErrorCode shell_mult(Mat S, Vec x, Vec y) {
  PetscFunctionBegin;
  PetscCall(shell_apply(S, PETSC_FALSE, x, NULL, y));
  PetscFunctionReturn(0);
}
static PetscErrorCode shell_mult_add(Mat S, Vec x, Vec y, Vec z) {
  PetscFunctionBegin;
  PetscCall(shell_apply(S, PETSC_FALSE, x, y, z));
  PetscFunctionReturn(0);
}
static PetscErrorCode shell_mult_transpose(Mat S, Vec x, Vec y) {
  PetscFunctionBegin;
  PetscCall(shell_apply(S, PETSC_TRUE, x, NULL, y));
  PetscFunctionReturn(0);
}

/* The diagonal from the CSR each time (the user may change A's values between calls). */
static PetscErrorCode shell_get_diagonal(Mat S, Vec d) {
  swift_shell *sh;
  int64_t m, n, nnz, *rp = NULL;
  int32_t *cj = NULL;
  double *v = NULL;
  PetscScalar *da;
  PetscFunctionBegin;
  PetscCall(shell_ctx(S, &sh));
  coal_ctx ctx = coal_mat_ctx(sh->A);
  SWIFT_CALL(ctx, coal_mat_size(sh->A, &m, &n, &nnz));
  PetscCall(PetscMalloc3(m + 1, &rp, nnz, &cj, nnz, &v));
  coal_status st = coal_mat_get_csr(sh->A, rp, cj, v);
  if (st == COAL_SUCCESS) {
    PetscCall(VecGetArrayWrite(d, &da));
    for (int64_t i = 0; i < m; i++) {
      da[i] = 0.0;
      for (int64_t k = rp[i]; k < rp[i + 1]; k++)
        if (cj[k] == i) da[i] += v[k];
    }
    PetscCall(VecRestoreArrayWrite(d, &da));
  }
  PetscCall(PetscFree3(rp, cj, v));
  if (st != COAL_SUCCESS) return coal_petsc_error(ctx, st, "coal_mat_get_csr");
  PetscFunctionReturn(0);
}

static PetscErrorCode shell_destroy(Mat S) {
  swift_shell *sh;
  PetscFunctionBegin;
  PetscCall(shell_ctx(S, &sh));
  if (sh) {
    (void)coal_mat_destroy(&sh->At);
    swift_ws_free(coal_mat_ctx(sh->A), &sh->ws);
    PetscCall(PetscFree(sh));
  }
  PetscCall(MatShellSetContext(S, NULL));
  PetscFunctionReturn(0);
}

static PetscErrorCode shell_dense_symbolic(Mat S, Mat B, Mat C, void **data) {
  PetscFunctionBegin;
  (void)S, (void)B;
  *data = NULL;
  PetscCall(MatSetUp(C));
  PetscFunctionReturn(0);
}

static PetscErrorCode shell_dense_numeric(Mat S, Mat B, Mat C, void *data) {
  swift_shell *sh;
  const PetscScalar *b;
  PetscScalar *c;
  PetscInt ldb, ldc, k;
  PetscFunctionBegin;
  (void)data;
  PetscCall(shell_ctx(S, &sh));
  PetscCall(MatGetSize(B, NULL, &k));
  PetscCall(MatDenseGetLDA(B, &ldb));
  PetscCall(MatDenseGetLDA(C, &ldc));
  PetscCall(MatDenseGetArrayRead(B, &b));
  PetscCall(MatDenseGetArrayWrite(C, &c));
  PetscErrorCode ierr = swift_apply_block(sh->A, &sh->ws, k, b, ldb, c, ldc);
  PetscCall(MatDenseRestoreArrayWrite(C, &c));
  PetscCall(MatDenseRestoreArrayRead(B, &b));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

PetscErrorCode coal_petsc_shell_create(coal_mat A, Mat *S) {
  int64_t m, n, nnz;
  swift_shell *sh;
  PetscFunctionBegin;
  PetscValidPointer(S, 2);
  PetscCheck(A, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "NULL coalesce matrix");
  PetscCheck(coal_mat_dtype(A) == COAL_F64, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG,
             "the MatShell wrapper needs an fp64 coalesce matrix (PetscScalar is double)");
  SWIFT_CALL(coal_mat_ctx(A), coal_mat_size(A, &m, &n, &nnz));
  PetscCheck(m <= PETSC_MAX_INT && n <= PETSC_MAX_INT, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "matrix too large for PetscInt");
  PetscCall(coal_petsc_register()); /* log events */
  PetscCall(PetscNew(&sh));
  sh->A = A;
  PetscCall(
      MatCreateShell(PETSC_COMM_SELF, (PetscInt)m, (PetscInt)n, (PetscInt)m, (PetscInt)n, sh, S));
  PetscCall(MatShellSetOperation(*S, MATOP_MULT, (void (*)(void))shell_mult));
  PetscCall(MatShellSetOperation(*S, MATOP_MULT_ADD, (void (*)(void))shell_mult_add));
  PetscCall(MatShellSetOperation(*S, MATOP_MULT_TRANSPOSE, (void (*)(void))shell_mult_transpose));
  PetscCall(MatShellSetOperation(*S, MATOP_GET_DIAGONAL, (void (*)(void))shell_get_diagonal));
  PetscCall(MatShellSetOperation(*S, MATOP_DESTROY, (void (*)(void))shell_destroy));
  PetscCall(MatShellSetMatProductOperation(*S, MATPRODUCT_AB, shell_dense_symbolic,
                                           shell_dense_numeric, NULL, MATSEQDENSE, MATSEQDENSE));
  PetscFunctionReturn(0);
}
