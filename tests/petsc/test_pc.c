/* PC type swiftamg (coalesce's smoothed-aggregation AMG) driven through PETSc's PC and KSP, on
 * seqaij and seqaijswift matrices: CG converges in far fewer iterations than with Jacobi; after
 * new values (MatScale: a numeric-only re-setup), after a new nonzero pattern, with another Pmat of
 * the same nonzero state and after a change of type in place, PCSetUp gives exactly the cycle of a
 * PC built afresh on that matrix (a stale hierarchy or copy fails); PCMatApply and KSPMatSolve
 * (preonly) equal PCApply column by column; seqswift vectors give PCApply's result (and a norm of
 * the result cached before the apply is not reused); a non-symmetric matrix and a bad option value
 * fail with PETSc errors. */
#include <math.h>
#include <petscksp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coalesce_petsc.h"
#include "petsc_check.h"

/* 2-D 5-point Laplacian on a side x side grid, seqaij */
static PetscErrorCode laplacian(PetscInt side, Mat *A) {
  PetscInt n = side * side;
  PetscFunctionBeginUser;
  PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, n, n, 5, NULL, A));
  for (PetscInt i = 0; i < side; i++)
    for (PetscInt j = 0; j < side; j++) {
      PetscInt r = i * side + j;
      PetscCall(MatSetValue(*A, r, r, 4.0, INSERT_VALUES));
      if (i > 0) PetscCall(MatSetValue(*A, r, r - side, -1.0, INSERT_VALUES));
      if (i < side - 1) PetscCall(MatSetValue(*A, r, r + side, -1.0, INSERT_VALUES));
      if (j > 0) PetscCall(MatSetValue(*A, r, r - 1, -1.0, INSERT_VALUES));
      if (j < side - 1) PetscCall(MatSetValue(*A, r, r + 1, -1.0, INSERT_VALUES));
    }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

static PetscErrorCode make_pc(Mat A, PC *pc) {
  PetscFunctionBeginUser;
  PetscCall(PCCreate(PETSC_COMM_SELF, pc));
  PetscCall(PCSetOperators(*pc, A, A));
  PetscCall(PCSetType(*pc, PCSWIFTAMG));
  PetscCall(PCSetFromOptions(*pc));
  PetscCall(PCSetUp(*pc));
  PetscFunctionReturn(0);
}

/* z of a PC built afresh on A */
static PetscErrorCode fresh_apply(Mat A, Vec r, Vec z) {
  PC pc;
  PetscFunctionBeginUser;
  PetscCall(make_pc(A, &pc));
  PetscCall(PCApply(pc, r, z));
  PetscCall(PCDestroy(&pc));
  PetscFunctionReturn(0);
}

static PetscErrorCode cg_iterations(Mat A, PCType type, Vec b, PetscInt *its) {
  KSP ksp;
  PC pc;
  Vec x;
  KSPConvergedReason reason;
  PetscFunctionBeginUser;
  PetscCall(VecDuplicate(b, &x));
  PetscCall(KSPCreate(PETSC_COMM_SELF, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, type));
  PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, 2000));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetIterationNumber(ksp, its));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  EXPECT(reason > 0, "%s: CG did not converge: %s", type, KSPConvergedReasons[reason]);
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscFunctionReturn(0);
}

static PetscErrorCode run(PetscBool swift) {
  const char *t = swift ? "seqaijswift" : "seqaij";
  Mat A;
  Vec r, z, z2, zf;
  PC pc;
  PetscReal d;
  PetscFunctionBeginUser;
  PetscCall(laplacian(60, &A));
  if (swift) PetscCall(MatConvert(A, MATSWIFT, MAT_INPLACE_MATRIX, &A));
  PetscCall(MatCreateVecs(A, &r, &z));
  PetscCall(VecDuplicate(z, &z2));
  PetscCall(VecDuplicate(z, &zf));
  PetscRandom rnd;
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &rnd));
  PetscCall(VecSetRandom(r, rnd));

  PetscInt its_amg, its_jac;
  PetscCall(cg_iterations(A, PCSWIFTAMG, r, &its_amg));
  PetscCall(cg_iterations(A, PCJACOBI, r, &its_jac));
  EXPECT(its_amg * 5 <= its_jac, "%s: CG + swiftamg %d iterations, + jacobi %d", t, (int)its_amg,
         (int)its_jac);

  PetscCall(make_pc(A, &pc));
  PetscCall(PCApply(pc, r, z));
  PetscCall(VecNorm(z, NORM_INFINITY, &d));
  EXPECT(d > 0 && d == d, "%s: PCApply gives |z| = %g", t, (double)d);

  /* new values: the cycle of a fresh hierarchy, which is the old one halved; the PC re-set up
   * numerically (PCView says so), which on values scaled by 2 gives the fresh bits */
  PetscCall(MatScale(A, 2.0));
  PetscCall(PCSetUp(pc));
  PetscCall(PCApply(pc, r, z2));
  PetscCall(fresh_apply(A, r, zf));
  d = vdiff(zf, z2);
  EXPECT(d == 0, "%s: after MatScale, PCApply differs from a fresh PC's by %g", t, (double)d);
  {
    char path[] = "/tmp/coal_pcview_XXXXXX", text[4096] = "";
    const int fd = mkstemp(path);
    EXPECT(fd >= 0, "mkstemp failed");
    if (fd >= 0) {
      close(fd);
      PetscViewer av;
      PetscCall(PetscViewerASCIIOpen(PETSC_COMM_SELF, path, &av));
      PetscCall(PCView(pc, av));
      PetscCall(PetscViewerDestroy(&av));
      FILE *f = fopen(path, "r");
      const size_t got = f ? fread(text, 1, sizeof text - 1, f) : 0;
      text[got] = 0;
      if (f) fclose(f);
      remove(path);
      EXPECT(strstr(text, "numeric-only re-setup") != NULL,
             "%s: after MatScale the PC was not re-set up numerically: %s", t, text);
    }
  }
  PetscCall(VecScale(z, 0.5));
  d = vdiff(z, z2);
  EXPECT(d < 1e-10, "%s: after MatScale(2), PCApply is not half the old one (%g)", t, (double)d);

  /* new nonzero pattern: a symmetric coupling of the first and the last unknowns */
  PetscInt n, first = 0, last;
  PetscCall(MatGetSize(A, &n, NULL));
  last = n - 1;
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatSetValue(A, first, last, -0.5, INSERT_VALUES));
  PetscCall(MatSetValue(A, last, first, -0.5, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(PCSetUp(pc));
  PetscCall(PCApply(pc, r, z2));
  PetscCall(fresh_apply(A, r, zf));
  d = vdiff(zf, z2);
  EXPECT(d == 0, "%s: after a new pattern, PCApply differs from a fresh PC's by %g", t, (double)d);

  /* another Pmat of the same size and the same nonzero state but other entries (seqaij, also
   * after a seqaijswift one): only its identity tells that the copy must be made anew */
  Mat A2;
  PetscObjectState nzA, nz2;
  PetscCall(laplacian(60, &A2));
  PetscCall(MatSetOption(A2, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatGetNonzeroState(A, &nzA));
  PetscCall(MatGetNonzeroState(A2, &nz2));
  for (PetscInt j = 1; nz2 < nzA; j++) { /* a coupling per assembly, the same count as A's */
    PetscCall(MatSetValue(A2, j, n - 1 - j, -0.25, INSERT_VALUES));
    PetscCall(MatSetValue(A2, n - 1 - j, j, -0.25, INSERT_VALUES));
    PetscCall(MatAssemblyBegin(A2, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A2, MAT_FINAL_ASSEMBLY));
    PetscCall(MatGetNonzeroState(A2, &nz2));
  }
  EXPECT(nz2 == nzA, "%s: nonzero states %d and %d", t, (int)nzA, (int)nz2);
  PetscCall(PCSetOperators(pc, A2, A2));
  PetscCall(PCSetUp(pc));
  PetscCall(PCApply(pc, r, z2));
  PetscCall(fresh_apply(A2, r, zf));
  d = vdiff(zf, z2);
  EXPECT(d == 0, "%s: with another Pmat, PCApply differs from a fresh PC's by %g", t, (double)d);
  PetscCall(PCSetOperators(pc, A, A));
  PetscCall(MatDestroy(&A2));

  /* A changes type in place, with new values, and back */
  const MatType other[2] = {swift ? MATSEQAIJ : MATSWIFT, swift ? MATSWIFT : MATSEQAIJ};
  for (int c = 0; c < 2; c++) {
    PetscCall(MatConvert(A, other[c], MAT_INPLACE_MATRIX, &A));
    PetscCall(MatScale(A, c ? 0.5 : 2.0));
    PetscCall(PCSetUp(pc));
    PetscCall(PCApply(pc, r, z2));
    PetscCall(fresh_apply(A, r, zf));
    d = vdiff(zf, z2);
    EXPECT(d == 0, "%s: as %s, PCApply differs from a fresh PC's by %g", t, tname(A), (double)d);
  }

  /* a block of 5 columns: PCMatApply and KSPMatSolve (preonly) against PCApply per column */
  Mat B, X, Y;
  const PetscInt k = 5;
  PetscCall(MatCreateSeqDense(PETSC_COMM_SELF, n, k, NULL, &B));
  PetscCall(MatSetRandom(B, rnd));
  PetscCall(MatDuplicate(B, MAT_DO_NOT_COPY_VALUES, &X));
  PetscCall(MatDuplicate(B, MAT_DO_NOT_COPY_VALUES, &Y));
  PetscCall(PCMatApply(pc, B, X));
  KSP ksp;
  PetscCall(KSPCreate(PETSC_COMM_SELF, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPPREONLY));
  PetscCall(KSPSetPC(ksp, pc));
  PetscCall(KSPMatSolve(ksp, B, Y));
  PetscCall(KSPDestroy(&ksp));
  PetscReal worst = 0, worst_ksp = 0;
  for (PetscInt j = 0; j < k; j++) {
    Vec bj, xj, yj;
    PetscCall(MatDenseGetColumnVecRead(B, j, &bj));
    PetscCall(PCApply(pc, bj, zf));
    PetscCall(MatDenseRestoreColumnVecRead(B, j, &bj));
    PetscCall(MatDenseGetColumnVecRead(X, j, &xj));
    worst = PetscMax(worst, vdiff(zf, xj));
    PetscCall(MatDenseRestoreColumnVecRead(X, j, &xj));
    PetscCall(MatDenseGetColumnVecRead(Y, j, &yj));
    worst_ksp = PetscMax(worst_ksp, vdiff(zf, yj));
    PetscCall(MatDenseRestoreColumnVecRead(Y, j, &yj));
  }
  EXPECT(worst < 1e-12, "%s: PCMatApply differs from PCApply by %g", t, (double)worst);
  EXPECT(worst_ksp < 1e-12, "%s: KSPMatSolve differs from PCApply by %g", t, (double)worst_ksp);
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&X));
  PetscCall(MatDestroy(&Y));

  /* seqswift vectors: the cycle on their backend copies */
  Vec rs, zs;
  PetscCall(VecCreate(PETSC_COMM_SELF, &rs));
  PetscCall(VecSetSizes(rs, n, n));
  PetscCall(VecSetType(rs, VECSEQSWIFT));
  PetscCall(VecDuplicate(rs, &zs));
  PetscCall(VecCopy(r, rs));
  PetscCall(VecScale(rs, 1.0)); /* on the backend copy: only that one is current */
  PetscReal nzs, nzf;
  PetscCall(VecNorm(zs, NORM_2, &nzs)); /* cached: the apply must make it stale */
  PetscCall(PCApply(pc, r, zf));
  PetscCall(PCApply(pc, rs, zs));
  d = vdiff(zf, zs);
  EXPECT(d == 0, "%s: PCApply on seqswift vectors differs by %g", t, (double)d);
  PetscCall(VecNorm(zs, NORM_2, &nzs));
  PetscCall(VecNorm(zf, NORM_2, &nzf));
  EXPECT(nzs == nzf, "%s: |z| on seqswift %g, on VECSEQ %g (a stale cached norm)", t, (double)nzs,
         (double)nzf);
  PetscCall(VecDestroy(&rs));
  PetscCall(VecDestroy(&zs));

  PetscCall(PCDestroy(&pc));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(VecDestroy(&r));
  PetscCall(VecDestroy(&z));
  PetscCall(VecDestroy(&z2));
  PetscCall(VecDestroy(&zf));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

/* PCSetUp on A with the option set (name NULL: none) fails with a PETSc error */
static PetscErrorCode expect_setup_error(Mat A, const char *name, const char *value,
                                         const char *what) {
  PC pc = NULL;
  PetscFunctionBeginUser;
  if (name) PetscCall(PetscOptionsSetValue(NULL, name, value));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  PetscErrorCode ierr = make_pc(A, &pc);
  PetscCall(PetscPopErrorHandler());
  EXPECT(ierr != 0, "%s was accepted", what);
  PetscCall(PCDestroy(&pc));
  if (name) PetscCall(PetscOptionsClearValue(NULL, name));
  PetscFunctionReturn(0);
}

/* errors come back as PETSc errors, not crashes */
static PetscErrorCode errors(void) {
  Mat A;
  PetscFunctionBeginUser;
  PetscCall(laplacian(10, &A));
  PetscCall(
      expect_setup_error(A, "-pc_swiftamg_smoother", "gauss-seidel", "smoother gauss-seidel"));
  PetscCall(expect_setup_error(A, "-pc_swiftamg_degree", "17", "degree 17"));
  PetscCall(expect_setup_error(A, "-pc_swiftamg_theta", "1.5", "theta 1.5"));
  PetscCall(MatSetValue(A, 0, 1, -2.0, INSERT_VALUES)); /* not symmetric any more */
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(expect_setup_error(A, NULL, NULL, "a non-symmetric matrix"));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv) {
  int fails;
  if (skip_without_gpu()) return 77;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(coal_petsc_register());
  PetscCall(run(PETSC_FALSE));
  PetscCall(run(PETSC_TRUE));
  PetscCall(errors());
  PetscCall(report_world("petsc_pc", &fails));
  PetscCall(PetscFinalize());
  return fails ? 1 : 0;
}
