/* mpiaijswift does AIJ's arithmetic on several ranks: the same solves with MPIAIJ and with
 * mpiaijswift (the host backend) must give bit for bit the same numbers. AIJ's MatMult_MPIAIJ
 * computes y = A_d x_local and then MatMultAdd(A_o, x_ghost, y, y), whose rows continue from
 * y_i in column order; its MPIAIJ x MPIDense product instead sums the off-diagonal block's row
 * from 0 and adds it at the end. A product that rounds either way differently makes CG and
 * LOBPCG drift apart. Checked here: the four vector products and A times a dense block,
 * bitwise; CG + Jacobi, the iteration counts, residual histories and solutions bitwise; with
 * SLEPc, LOBPCG's iteration counts and eigenvalues bitwise. The matrix is irregular on purpose
 * (weights spread over six decades, couplings at several distances, every row with entries in
 * the other rank's columns) so that the order of a row's additions shows in the last bits.
 * Runs on the host backend (set here); run with mpiexec -n 2, it also runs on one rank. */
#include <petscksp.h>
#if defined(COAL_TEST_SLEPC)
#include <slepceps.h>
#endif

#include "coalesce_petsc.h"
#include "petsc_check.h"

/* a deterministic value in [0, 1) for the pair (i, j) (splitmix64) */
static double hash01(PetscInt i, PetscInt j) {
  uint64_t z = (uint64_t)i * 0x9E3779B97F4A7C15ull + (uint64_t)j * 0xBF58476D1CE4E5B9ull + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (double)(z >> 11) * 0x1.0p-53;
}

/* weight of the edge {i, j}: 1e-3 .. 1e3, log-uniform */
static double weight(PetscInt i, PetscInt j) {
  PetscInt a = i < j ? i : j, b = i < j ? j : i;
  return pow(10.0, 6.0 * hash01(a, b) - 3.0);
}

/* A weighted graph Laplacian plus a small diagonal shift (SPD): row i couples to i +- 1, 7,
 * 331 and N/2 (the last always in the other half of the rows). */
static PetscErrorCode build(PetscInt N, Mat *A) {
  const PetscInt off[] = {1, 7, 331, N / 2};
  PetscInt lo, hi;
  PetscFunctionBeginUser;
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, N, N, 9, NULL, 9, NULL, A));
  PetscCall(MatGetOwnershipRange(*A, &lo, &hi));
  for (PetscInt i = lo; i < hi; i++) {
    PetscInt cols[9], n = 0;
    PetscScalar vals[9], diag = 1e-4 * (1.0 + hash01(i, i));
    for (size_t k = 0; k < sizeof off / sizeof off[0]; k++)
      for (int s = -1; s <= 1; s += 2) {
        PetscInt j = i + s * off[k];
        if (k == 3 && (s > 0) != (i < N / 2)) continue; /* the partner in the other half, once */
        if (j < 0 || j >= N) continue;
        cols[n] = j, vals[n] = -weight(i, j), diag += weight(i, j), n++;
      }
    cols[n] = i, vals[n] = diag, n++;
    PetscCall(MatSetValues(*A, 1, &i, n, cols, vals, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* entries of a and b whose bits differ (summed over ranks), and the largest difference */
static PetscErrorCode bitdiff(Vec a, Vec b, PetscInt *ndiff, PetscReal *maxd) {
  const PetscScalar *pa, *pb;
  PetscInt n;
  PetscFunctionBeginUser;
  PetscCall(VecGetLocalSize(a, &n));
  PetscCall(VecGetArrayRead(a, &pa));
  PetscCall(VecGetArrayRead(b, &pb));
  *ndiff = 0, *maxd = 0;
  for (PetscInt i = 0; i < n; i++)
    if (memcmp(&pa[i], &pb[i], sizeof pa[i])) {
      (*ndiff)++;
      PetscReal d = PetscAbsScalar(pa[i] - pb[i]);
      *maxd = d > *maxd || d != d ? d : *maxd;
    }
  PetscCall(VecRestoreArrayRead(a, &pa));
  PetscCall(VecRestoreArrayRead(b, &pb));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, ndiff, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, maxd, 1, MPIU_REAL, MPI_MAX, PETSC_COMM_WORLD));
  PetscFunctionReturn(0);
}

#define EXPECT_SAME(va, vb, what)                                                                  \
  do {                                                                                             \
    PetscInt nd_;                                                                                  \
    PetscReal md_;                                                                                 \
    PetscCall(bitdiff(va, vb, &nd_, &md_));                                                        \
    EXPECT(nd_ == 0, "%s: %" PetscInt_FMT " entries differ (largest by %g)", what, nd_,            \
           (double)md_);                                                                           \
  } while (0)

/* the same product with AIJ (k = 0) and swift (k = 1): outputs bit for bit */
#define BOTH(what, call)                                                                           \
  do {                                                                                             \
    for (int k = 0; k < 2; k++) PetscCall(call);                                                   \
    EXPECT_SAME(out[0], out[1], what);                                                             \
  } while (0)

static PetscErrorCode products(Mat A, Mat S) {
  Mat M[2] = {A, S}, X, Y[2] = {NULL, NULL};
  Vec x, y, z[2], w[2], c[2], *out = z;
  PetscRandom r;
  PetscInt n, N;
  PetscFunctionBeginUser;
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &r));
  PetscCall(PetscRandomSetInterval(r, -1.0, 1.0));
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecSetRandom(x, r));
  PetscCall(VecSetRandom(y, r));
  for (int k = 0; k < 2; k++) {
    PetscCall(VecDuplicate(y, &z[k]));
    PetscCall(VecDuplicate(x, &w[k]));
  }
  BOTH("MatMult", MatMult(M[k], x, z[k]));
  BOTH("MatMultAdd", MatMultAdd(M[k], x, y, z[k]));
  BOTH("MatMultAdd in place", MatMultAdd(M[k], x, z[k], z[k]));
  out = w;
  BOTH("MatMultTranspose", MatMultTranspose(M[k], y, w[k]));
  BOTH("MatMultTransposeAdd", MatMultTransposeAdd(M[k], y, x, w[k]));
  /* A times a dense block: SLEPc's BV multiplies whole blocks this way */
  PetscCall(VecGetLocalSize(x, &n));
  PetscCall(VecGetSize(x, &N));
  PetscCall(MatCreateDense(PETSC_COMM_WORLD, n, PETSC_DECIDE, N, 5, NULL, &X));
  PetscCall(MatSetRandom(X, r));
  for (int k = 0; k < 2; k++)
    PetscCall(MatMatMult(M[k], X, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &Y[k]));
  out = c;
  for (PetscInt j = 0; j < 5; j++) {
    char what[64];
    PetscCall(PetscSNPrintf(what, sizeof what, "MatMatMult with dense, column %" PetscInt_FMT, j));
    BOTH(what, MatDenseGetColumnVecRead(Y[k], j, &c[k]));
    for (int k = 0; k < 2; k++) PetscCall(MatDenseRestoreColumnVecRead(Y[k], j, &c[k]));
  }
  for (int k = 0; k < 2; k++) {
    PetscCall(MatDestroy(&Y[k]));
    PetscCall(VecDestroy(&z[k]));
    PetscCall(VecDestroy(&w[k]));
  }
  PetscCall(MatDestroy(&X));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(PetscRandomDestroy(&r));
  PetscFunctionReturn(0);
}

#define MAXIT 3000

/* CG + Jacobi from x = 0 on b = A 1: iterations, residual history and solution */
static PetscErrorCode cg(Mat M, PetscInt *its, PetscReal hist[MAXIT + 1], PetscInt *nh, Vec x) {
  KSP ksp;
  PC pc;
  Vec b, one;
  KSPConvergedReason reason;
  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(M, &one, &b));
  PetscCall(VecSet(one, 1.0));
  PetscCall(MatMult(M, one, b));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, M, M));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, MAXIT));
  PetscCall(KSPSetResidualHistory(ksp, hist, MAXIT + 1, PETSC_TRUE));
  PetscCall(VecSet(x, 0.0));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetIterationNumber(ksp, its));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  EXPECT(reason > 0, "CG on %s did not converge (reason %d)", tname(M), (int)reason);
  PetscCall(KSPGetResidualHistory(ksp, NULL, nh));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&one));
  PetscFunctionReturn(0);
}

static PetscErrorCode compare_cg(Mat A, Mat S) {
  static PetscReal ha[MAXIT + 1], hs[MAXIT + 1];
  PetscInt ia, is, na, ns;
  Vec xa, xs;
  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(A, &xa, NULL));
  PetscCall(VecDuplicate(xa, &xs));
  PetscCall(cg(A, &ia, ha, &na, xa));
  PetscCall(cg(S, &is, hs, &ns, xs));
  EXPECT(ia == is && na == ns,
         "CG + Jacobi: %" PetscInt_FMT " iterations with AIJ, %" PetscInt_FMT " with swift", ia,
         is);
  PetscInt first = -1, n = na < ns ? na : ns;
  for (PetscInt k = 0; k < n && first < 0; k++)
    if (memcmp(&ha[k], &hs[k], sizeof ha[k])) first = k;
  EXPECT(first < 0,
         "CG + Jacobi: residual histories differ from iteration %" PetscInt_FMT
         " (%.17g with AIJ, %.17g with swift)",
         first, first < 0 ? 0.0 : (double)ha[first], first < 0 ? 0.0 : (double)hs[first]);
  EXPECT_SAME(xa, xs, "CG + Jacobi solution");
  PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                        "CG + Jacobi: AIJ %" PetscInt_FMT " iterations, final residual %.17g; "
                        "swift %" PetscInt_FMT " iterations, final residual %.17g\n",
                        ia, (double)ha[na - 1], is, (double)hs[ns - 1]));
  PetscCall(VecDestroy(&xa));
  PetscCall(VecDestroy(&xs));
  PetscFunctionReturn(0);
}

#if defined(COAL_TEST_SLEPC)
#define NEV 4
static PetscErrorCode lobpcg(Mat M, PetscInt *its, PetscInt *nconv, PetscScalar ev[NEV]) {
  EPS eps;
  Vec v0;
  PetscFunctionBeginUser;
  PetscCall(EPSCreate(PETSC_COMM_WORLD, &eps));
  PetscCall(EPSSetOperators(eps, M, NULL));
  PetscCall(EPSSetProblemType(eps, EPS_HEP));
  PetscCall(EPSSetType(eps, EPSLOBPCG));
  PetscCall(EPSSetWhichEigenpairs(eps, EPS_SMALLEST_REAL));
  PetscCall(EPSSetDimensions(eps, NEV, PETSC_DEFAULT, PETSC_DEFAULT));
  PetscCall(EPSSetTolerances(eps, 1e-6, 400));
  PetscCall(MatCreateVecs(M, &v0, NULL));
  PetscCall(VecSet(v0, 1.0));
  PetscCall(EPSSetInitialSpace(eps, 1, &v0));
  PetscCall(EPSSolve(eps));
  PetscCall(EPSGetIterationNumber(eps, its));
  PetscCall(EPSGetConverged(eps, nconv));
  for (PetscInt k = 0; k < NEV; k++) {
    ev[k] = 0;
    if (k < *nconv) PetscCall(EPSGetEigenvalue(eps, k, &ev[k], NULL));
  }
  PetscCall(VecDestroy(&v0));
  PetscCall(EPSDestroy(&eps));
  PetscFunctionReturn(0);
}

static PetscErrorCode compare_lobpcg(Mat A, Mat S) {
  PetscInt ia, is, ca, cs;
  PetscScalar ea[NEV], es[NEV];
  PetscFunctionBeginUser;
  PetscCall(lobpcg(A, &ia, &ca, ea));
  PetscCall(lobpcg(S, &is, &cs, es));
  EXPECT(ca >= NEV, "LOBPCG with AIJ: %" PetscInt_FMT " eigenvalues converged", ca);
  EXPECT(ia == is && ca == cs,
         "LOBPCG: %" PetscInt_FMT " iterations (%" PetscInt_FMT
         " converged) with AIJ, %" PetscInt_FMT " (%" PetscInt_FMT ") with swift",
         ia, ca, is, cs);
  for (PetscInt k = 0; k < NEV; k++)
    EXPECT(!memcmp(&ea[k], &es[k], sizeof ea[k]),
           "LOBPCG eigenvalue %" PetscInt_FMT ": %.17g with AIJ, %.17g with swift", k,
           (double)ea[k], (double)es[k]);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                        "LOBPCG: AIJ %" PetscInt_FMT
                        " iterations, smallest %.17g; swift %" PetscInt_FMT
                        " iterations, smallest %.17g\n",
                        ia, (double)ea[0], is, (double)es[0]));
  PetscFunctionReturn(0);
}
#endif

int main(int argc, char **argv) {
  Mat A, S;
  PetscMPIInt size;
#if defined(COAL_TEST_SLEPC)
  PetscCall(SlepcInitialize(&argc, &argv, NULL, NULL));
#else
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
#endif
  /* bitwise equality is a property of the host backend (docs/petsc.md), whatever
   * COALESCE_BACKEND says */
  PetscCall(PetscOptionsSetValue(NULL, "-mat_swift_backend", "host"));
  PetscCall(coal_petsc_register());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(build(2000, &A));
  PetscCall(MatConvert(A, MATSWIFT, MAT_INITIAL_MATRIX, &S));
  if (size > 1) PetscCall(expect_swift_blocks(S, "MatConvert"));
  PetscCall(products(A, S));
  PetscCall(compare_cg(A, S));
#if defined(COAL_TEST_SLEPC)
  PetscCall(compare_lobpcg(A, S));
#endif
  PetscCall(MatDestroy(&S));
  PetscCall(MatDestroy(&A));
  int fails;
  PetscCall(report_world("test_mpi_bitwise", &fails));
#if defined(COAL_TEST_SLEPC)
  PetscCall(SlepcFinalize());
#else
  PetscCall(PetscFinalize());
#endif
  return fails ? 1 : 0;
}
