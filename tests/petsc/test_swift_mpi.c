/* mpiaijswift against MPIAIJ on several ranks: MatConvert and MatSetType("swift"), the vector
 * products after value changes and after new off-process nonzeros (MPIAIJ then rebuilds its
 * off-diagonal block, which the next assembly must convert again), and the block types.
 * Run with mpiexec -n 2 (or more). */
#include <petscmat.h>

#include "coalesce_petsc.h"
#include "petsc_check.h"

static PetscErrorCode fill(Mat A, PetscInt N, PetscInt shift) {
  PetscInt lo, hi;
  PetscFunctionBeginUser;
  PetscCall(MatGetOwnershipRange(A, &lo, &hi));
  for (PetscInt i = lo; i < hi; i++) {
    PetscCall(MatSetValue(A, i, i, 4.0 + 0.01 * (double)(i % 7), INSERT_VALUES));
    PetscCall(MatSetValue(A, i, (i + 1 + shift) % N, -1.0, INSERT_VALUES));
    PetscCall(MatSetValue(A, i, (i + N / 2) % N, -0.5 - 0.001 * (double)i, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

static PetscErrorCode compare(Mat A, Mat S, PetscRandom r, const char *when) {
  Vec x, y, z1, z2, w1, w2;
  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecSetRandom(x, r));
  PetscCall(VecSetRandom(y, r));
  PetscCall(VecDuplicate(y, &z1));
  PetscCall(VecDuplicate(y, &z2));
  PetscCall(VecDuplicate(x, &w1));
  PetscCall(VecDuplicate(x, &w2));
  PetscCall(MatMult(A, x, z1));
  PetscCall(VecSet(z2, NAN));
  PetscCall(MatMult(S, x, z2));
  EXPECT(vdiff(z1, z2) < 1e-13, "%s: MatMult differs by %g", when, (double)vdiff(z1, z2));
  PetscCall(MatMultAdd(A, x, y, z1));
  PetscCall(VecSet(z2, NAN));
  PetscCall(MatMultAdd(S, x, y, z2));
  EXPECT(vdiff(z1, z2) < 1e-13, "%s: MatMultAdd differs by %g", when, (double)vdiff(z1, z2));
  PetscCall(MatMultTranspose(A, y, w1));
  PetscCall(VecSet(w2, NAN));
  PetscCall(MatMultTranspose(S, y, w2));
  EXPECT(vdiff(w1, w2) < 1e-13, "%s: MatMultTranspose differs by %g", when, (double)vdiff(w1, w2));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&z1));
  PetscCall(VecDestroy(&z2));
  PetscCall(VecDestroy(&w1));
  PetscCall(VecDestroy(&w2));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv) {
  const PetscInt N = 2000;
  Mat A, S, T;
  PetscRandom r;
  PetscMPIInt size;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  if (skip_without_gpu()) {
    PetscCall(PetscFinalize());
    return 77;
  }
  PetscCall(coal_petsc_register());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &r));
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, N, N, 5, NULL, 5, NULL, &A));
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(fill(A, N, 0));
  /* MatConvert of an assembled MPIAIJ */
  PetscCall(MatConvert(A, MATMPIAIJSWIFT, MAT_INITIAL_MATRIX, &S));
  EXPECT(!strcmp(tname(S), MATMPIAIJSWIFT), "MatConvert gave %s", tname(S));
  PetscCall(expect_swift_blocks(S, "converted"));
  PetscCall(compare(A, S, r, "converted"));
  PetscCall(MatScale(A, -1.5));
  PetscCall(MatScale(S, -1.5));
  PetscCall(compare(A, S, r, "after MatScale"));
  /* new nonzeros in other ranks' columns: MPIAIJ re-creates the off-diagonal block */
  PetscCall(MatSetOption(S, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(fill(A, N, 37));
  PetscCall(fill(S, N, 37));
  PetscCall(expect_swift_blocks(S, "after new nonzeros"));
  PetscCall(compare(A, S, r, "after new nonzeros"));
  /* created through the root name, as -mat_type swift does, against a fresh MPIAIJ */
  Mat B;
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, N, N, 5, NULL, 5, NULL, &B));
  PetscCall(fill(B, N, 37));
  PetscCall(MatCreate(PETSC_COMM_WORLD, &T));
  PetscCall(MatSetSizes(T, PETSC_DECIDE, PETSC_DECIDE, N, N));
  PetscCall(MatSetType(T, MATSWIFT));
  EXPECT(!strcmp(tname(T), size > 1 ? MATMPIAIJSWIFT : MATSEQAIJSWIFT), "swift resolved to %s",
         tname(T));
  PetscCall(MatMPIAIJSetPreallocation(T, 5, NULL, 5, NULL));
  PetscCall(MatSeqAIJSetPreallocation(T, 10, NULL));
  PetscCall(fill(T, N, 37));
  if (size > 1) PetscCall(expect_swift_blocks(T, "MatSetType(swift)"));
  PetscCall(compare(B, T, r, "MatSetType(swift)"));
  PetscCall(MatDestroy(&T));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&S));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscRandomDestroy(&r));
  int fails;
  PetscCall(report_world("test_swift_mpi", &fails));
  PetscCall(PetscFinalize());
  return fails ? 1 : 0;
}
