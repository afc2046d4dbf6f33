/* mpiaijswift: PETSc's MPIAIJ whose local diagonal and off-diagonal blocks are seqaijswift.
 * Only installed headers are at hand (MPIAIJ's private struct is not), so the blocks are
 * reached through MatMPIAIJGetSeqAIJ and converted in place after each final assembly (MPIAIJ
 * creates them as plain SeqAIJ at preallocation and may re-create the off-diagonal one when new
 * nonzeros arrive). PETSc keeps doing the halo exchange; MatMult_MPIAIJ calls the blocks'
 * mult and multadd, which are coalesce's. */
#include "swift_impl.h"

PETSC_EXTERN PetscErrorCode MatCreate_MPIAIJ(Mat);

typedef struct {
  struct _MatOps parent;
} Mat_MPIAIJSwift;

static PetscErrorCode swift_convert_blocks(Mat A) {
  Mat blocks[2];
  PetscFunctionBegin;
  PetscCall(MatMPIAIJGetSeqAIJ(A, &blocks[0], &blocks[1], NULL));
  for (int b = 0; b < 2; b++) {
    PetscBool ours;
    if (!blocks[b]) continue;
    PetscCall(PetscObjectTypeCompare((PetscObject)blocks[b], MATSEQAIJSWIFT, &ours));
    if (!ours) PetscCall(MatConvert(blocks[b], MATSEQAIJSWIFT, MAT_INPLACE_MATRIX, &blocks[b]));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode MatAssemblyEnd_MPIAIJSwift(Mat A, MatAssemblyType t) {
  Mat_MPIAIJSwift *s = (Mat_MPIAIJSwift *)A->spptr;
  PetscFunctionBegin;
  PetscCall(s->parent.assemblyend(A, t));
  if (t == MAT_FINAL_ASSEMBLY) PetscCall(swift_convert_blocks(A));
  PetscFunctionReturn(0);
}

static PetscErrorCode swift_mpi_compose(Mat B, PetscBool on);

static PetscErrorCode MatDestroy_MPIAIJSwift(Mat A) {
  Mat_MPIAIJSwift *s = (Mat_MPIAIJSwift *)A->spptr;
  PetscErrorCode (*destroy)(Mat) = s->parent.destroy;
  PetscFunctionBegin;
  PetscCall(swift_mpi_compose(A, PETSC_FALSE));
  PetscCall(PetscFree(A->spptr));
  PetscCall((*destroy)(A));
  PetscFunctionReturn(0);
}

/* Products with an MPIDense B: PETSc's own MPIAIJ x MPIDense implementation, which the dense
 * type publishes (MatProductSetFromOptions_mpiaij_mpidense_C) for the type name mpiaij only.
 * For AB it multiplies the diagonal block by B's local rows through the block's product
 * (seqaijswift x seqdense: coal_spmm, each row's sum from 0 in column order) and then adds the
 * off-diagonal block times the ghost rows W with AIJ's kernel on the block's arrays:
 * C_i = (A_d B)_i + (sum_j (A_o)_ij W_j, from 0 in column order). Without it PETSc falls back to
 * one MatMult per column, whose rows start the off-diagonal sum from (A_d B)_i
 * (MatMult_MPIAIJ's order): the same product rounded differently, which AIJ's LOBPCG does not
 * do. Product types the function does not take are left to PETSc's fallback. */
static PetscErrorCode swift_mpi_product_dense(Mat C) {
  PetscErrorCode (*f)(Mat) = NULL;
  PetscFunctionBegin;
  PetscCall(PetscObjectQueryFunction((PetscObject)C->product->B,
                                     "MatProductSetFromOptions_mpiaij_mpidense_C", &f));
  if (f) PetscCall((*f)(C));
  PetscFunctionReturn(0);
}

static PetscErrorCode swift_mpi_compose(Mat B, PetscBool on) {
  PetscFunctionBegin;
  PetscCall(swift_republish(B, "MatConvert_mpiaij_hypre_C", "MatConvert_mpiaijswift_hypre_C", on));
  PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatConvert_mpiaij_mpiaijswift_C",
                                       on ? MatConvert_MPIAIJ_MPIAIJSwift : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)B,
                                       "MatProductSetFromOptions_mpiaijswift_mpidense_C",
                                       on ? swift_mpi_product_dense : NULL));
  PetscFunctionReturn(0);
}

PetscErrorCode MatConvert_MPIAIJ_MPIAIJSwift(Mat A, MatType type, MatReuse reuse, Mat *newmat) {
  Mat B;
  Mat_MPIAIJSwift *s;
  PetscFunctionBegin;
  (void)type;
  PetscCall(swift_convert_target(A, reuse, newmat));
  B = *newmat;
  PetscBool ours;
  PetscCall(PetscObjectTypeCompare((PetscObject)B, MATMPIAIJSWIFT, &ours));
  if (ours) PetscFunctionReturn(0);
  PetscCheck(!B->spptr, PETSC_COMM_SELF, PETSC_ERR_SUP, "cannot convert a %s to mpiaijswift",
             ((PetscObject)B)->type_name);
  PetscCall(PetscNew(&s));
  s->parent = *B->ops;
  B->spptr = s;
  B->ops->assemblyend = MatAssemblyEnd_MPIAIJSwift;
  B->ops->destroy = MatDestroy_MPIAIJSwift;
  PetscCall(swift_mpi_compose(B, PETSC_TRUE));
  PetscCall(PetscObjectChangeTypeName((PetscObject)B, MATMPIAIJSWIFT));
  if (B->assembled) PetscCall(swift_convert_blocks(B));
  PetscFunctionReturn(0);
}

PetscErrorCode MatCreate_MPIAIJSwift(Mat B) {
  PetscFunctionBegin;
  PetscCall(MatCreate_MPIAIJ(B));
  PetscCall(MatConvert_MPIAIJ_MPIAIJSwift(B, MATMPIAIJSWIFT, MAT_INPLACE_MATRIX, &B));
  PetscFunctionReturn(0);
}
