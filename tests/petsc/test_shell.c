/* coal_petsc_shell_create: a coalesce matrix driven by PETSc's KSP through a MatShell. The
 * shell's products are checked against PETSc's AIJ built from the same CSR, and CG with Jacobi
 * (which reads the shell's diagonal) must solve to the requested accuracy in the same number
 * of iterations as with the AIJ matrix. */
#include <math.h>
#include <petscksp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coalesce_petsc.h"
#include "petsc_check.h"

static PetscErrorCode solve(Mat A, Vec b, Vec x, PetscInt *its) {
  KSP ksp;
  PC pc;
  PetscFunctionBeginUser;
  PetscCall(KSPCreate(PETSC_COMM_SELF, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, 2000));
  PetscCall(VecSet(x, 0.0));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetIterationNumber(ksp, its));
  KSPConvergedReason reason;
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  EXPECT(reason > 0, "KSP did not converge: %s", KSPConvergedReasons[reason]);
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv) {
  if (skip_without_gpu()) return 77;
  coal_ctx ctx;
  coal_mat cA;
  Mat S, A;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  /* anisotropic 3-D Laplacian: SPD with a non-constant diagonal, so Jacobi matters */
  if (coal_ctx_create(COAL_BACKEND_AUTO, &ctx) != COAL_SUCCESS ||
      coal_gen_aniso3d(ctx, 20, 18, 16, 1.0, 4.0, 0.5, COAL_F64, &cA) != COAL_SUCCESS) {
    printf("FAIL: cannot create the coalesce matrix\n");
    return 1;
  }
  printf("backend %s\n", coal_backend_name(coal_ctx_backend(ctx)));
  PetscCall(coal_petsc_shell_create(cA, &S));

  /* the same matrix as AIJ, from the CSR */
  int64_t m, n, nnz;
  coal_mat_size(cA, &m, &n, &nnz);
  int64_t *rp64;
  int32_t *cj32;
  PetscInt *ri, *cj;
  PetscScalar *v;
  PetscCall(PetscMalloc5(m + 1, &rp64, nnz, &cj32, m + 1, &ri, nnz, &cj, nnz, &v));
  EXPECT(coal_mat_get_csr(cA, rp64, cj32, v) == COAL_SUCCESS, "get_csr");
  for (int64_t i = 0; i <= m; i++) ri[i] = (PetscInt)rp64[i];
  for (int64_t k = 0; k < nnz; k++) cj[k] = cj32[k];
  PetscCall(MatCreateSeqAIJWithArrays(PETSC_COMM_SELF, (PetscInt)m, (PetscInt)n, ri, cj, v, &A));

  Vec x, y1, y2, b, d1, d2;
  PetscRandom r;
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r));
  PetscCall(MatCreateVecs(A, &x, &y1));
  PetscCall(VecDuplicate(y1, &y2));
  PetscCall(VecDuplicate(y1, &b));
  PetscCall(VecSetRandom(x, r));
  PetscCall(VecSetRandom(b, r));
  PetscCall(MatMult(A, x, y1));
  PetscCall(VecSet(y2, NAN));
  PetscCall(MatMult(S, x, y2));
  EXPECT(vdiff(y1, y2) < 1e-13, "MatMult differs by %g", (double)vdiff(y1, y2));
  PetscCall(VecSet(y2, NAN));
  PetscCall(MatMultTranspose(S, x, y2));
  EXPECT(vdiff(y1, y2) < 1e-13, "MatMultTranspose differs by %g", (double)vdiff(y1, y2));
  PetscCall(MatMultAdd(A, x, b, y1));
  PetscCall(VecSet(y2, NAN));
  PetscCall(MatMultAdd(S, x, b, y2));
  EXPECT(vdiff(y1, y2) < 1e-13, "MatMultAdd differs by %g", (double)vdiff(y1, y2));
  PetscCall(VecDuplicate(y1, &d1));
  PetscCall(VecDuplicate(y1, &d2));
  PetscCall(MatGetDiagonal(A, d1));
  PetscCall(VecSet(d2, NAN));
  PetscCall(MatGetDiagonal(S, d2));
  EXPECT(vdiff(d1, d2) == 0, "MatGetDiagonal differs by %g", (double)vdiff(d1, d2));

  /* MatProduct AB with a dense block */
  Mat X, Y1, Y2;
  PetscCall(MatCreateSeqDense(PETSC_COMM_SELF, (PetscInt)n, 6, NULL, &X));
  PetscCall(MatSetRandom(X, r));
  PetscCall(MatMatMult(A, X, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &Y1));
  PetscCall(MatMatMult(S, X, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &Y2));
  PetscCall(MatAXPY(Y2, -1.0, Y1, SAME_NONZERO_PATTERN));
  PetscReal nd, na;
  PetscCall(MatNorm(Y2, NORM_FROBENIUS, &nd));
  PetscCall(MatNorm(Y1, NORM_FROBENIUS, &na));
  EXPECT(nd <= 1e-13 * na, "MatMatMult differs by %g", (double)(nd / na));

  /* KSP: the same iterations and the solution to the tolerance */
  PetscInt its_a, its_s;
  Vec xs, xa, xstar;
  PetscCall(VecDuplicate(x, &xs));
  PetscCall(VecDuplicate(x, &xa));
  PetscCall(VecDuplicate(x, &xstar));
  PetscCall(VecSetRandom(xstar, r));
  PetscCall(MatMult(A, xstar, b));
  PetscCall(solve(A, b, xa, &its_a));
  PetscCall(solve(S, b, xs, &its_s));
  PetscReal err = vdiff(xstar, xs);
  printf("CG + Jacobi: AIJ %d iterations, shell %d iterations, shell error %.3g\n", (int)its_a,
         (int)its_s, (double)err);
  EXPECT(its_s >= its_a - 1 && its_s <= its_a + 1, "iterations %d vs %d", (int)its_s, (int)its_a);
  EXPECT(err < 1e-7, "solution error %g", (double)err);

  PetscCall(VecDestroy(&xs));
  PetscCall(VecDestroy(&xa));
  PetscCall(VecDestroy(&xstar));
  PetscCall(MatDestroy(&X));
  PetscCall(MatDestroy(&Y1));
  PetscCall(MatDestroy(&Y2));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y1));
  PetscCall(VecDestroy(&y2));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&d1));
  PetscCall(VecDestroy(&d2));
  PetscCall(PetscRandomDestroy(&r));
  PetscCall(MatDestroy(&S));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFree5(rp64, cj32, ri, cj, v));
  coal_mat_destroy(&cA);
  coal_ctx_destroy(&ctx);
  printf("test_shell: %d checks, %d failures\n", checks, failures);
  PetscCall(PetscFinalize());
  return failures ? 1 : 0;
}
