/* seqaijswift against PETSc's own AIJ: every product, after every way of changing values or
 * structure, with the outputs poisoned before each product. Backend: -mat_swift_backend or
 * COALESCE_BACKEND (host in CI, cuda on a GPU machine). */
#include <math.h>
#include <petscmat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coalesce_device.h"
#include "coalesce_petsc.h"
#include "petsc_check.h"

static PetscReal mdiff(Mat a, Mat b) {
  Mat d;
  PetscReal nd, na;
  PetscCallAbort(PETSC_COMM_SELF, MatConvert(b, MATSEQAIJ, MAT_INITIAL_MATRIX, &d));
  PetscCallAbort(PETSC_COMM_SELF, MatAXPY(d, -1.0, a, DIFFERENT_NONZERO_PATTERN));
  PetscCallAbort(PETSC_COMM_SELF, MatNorm(d, NORM_FROBENIUS, &nd));
  PetscCallAbort(PETSC_COMM_SELF, MatNorm(a, NORM_FROBENIUS, &na));
  PetscCallAbort(PETSC_COMM_SELF, MatDestroy(&d));
  if (nd != nd) return INFINITY;
  return nd / (na > 0 ? na : 1.0);
}

/* random m x n AIJ with about `per_row` entries per row, some rows empty; symmetric when asked
 * (then diagonally dominant, so SPD) */
static PetscErrorCode random_aij(PetscInt m, PetscInt n, PetscInt per_row, PetscBool spd,
                                 PetscRandom r, Mat *A) {
  PetscFunctionBeginUser;
  PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, m, n, 2 * per_row + 2, NULL, A));
  PetscCall(MatSetOption(*A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  for (PetscInt i = 0; i < m; i++) {
    if (!spd && i % 17 == 5) continue; /* empty rows */
    for (PetscInt k = 0; k < per_row; k++) {
      PetscReal u, v;
      PetscCall(PetscRandomGetValueReal(r, &u));
      PetscCall(PetscRandomGetValueReal(r, &v));
      PetscInt j = (PetscInt)(u * n);
      if (j >= n) j = n - 1;
      PetscScalar a = spd ? -v : 2 * v - 1;
      PetscCall(MatSetValue(*A, i, j, a, ADD_VALUES));
      if (spd) PetscCall(MatSetValue(*A, j, i, a, ADD_VALUES));
    }
    if (spd) PetscCall(MatSetValue(*A, i, i, 4.0 * per_row + 1.0, ADD_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

static PetscErrorCode poison(Vec v) {
  PetscFunctionBeginUser;
  PetscCall(VecSet(v, NAN));
  PetscFunctionReturn(0);
}

/* All four vector products of S against A. */
static PetscErrorCode compare_products(Mat A, Mat S, PetscRandom r, const char *when) {
  Vec x, y, xt, yt, z1, z2, w1, w2;
  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(MatCreateVecs(A, &yt, &xt)); /* transposed: x has the rows' length */
  PetscCall(VecSetRandom(x, r));
  PetscCall(VecSetRandom(y, r));
  PetscCall(VecSetRandom(xt, r));
  PetscCall(VecSetRandom(yt, r));
  PetscCall(VecDuplicate(y, &z1));
  PetscCall(VecDuplicate(y, &z2));
  PetscCall(VecDuplicate(yt, &w1));
  PetscCall(VecDuplicate(yt, &w2));
  /* MatMult */
  PetscCall(MatMult(A, x, z1));
  PetscCall(poison(z2));
  PetscCall(MatMult(S, x, z2));
  EXPECT(vdiff(z1, z2) < 1e-13, "%s: MatMult differs by %g", when, (double)vdiff(z1, z2));
  /* MatMultAdd, z != y and z == y */
  PetscCall(MatMultAdd(A, x, y, z1));
  PetscCall(poison(z2));
  PetscCall(MatMultAdd(S, x, y, z2));
  EXPECT(vdiff(z1, z2) < 1e-13, "%s: MatMultAdd differs by %g", when, (double)vdiff(z1, z2));
  PetscCall(VecCopy(y, z2));
  PetscCall(MatMultAdd(S, x, z2, z2));
  EXPECT(vdiff(z1, z2) < 1e-13, "%s: MatMultAdd in place differs by %g", when,
         (double)vdiff(z1, z2));
  /* MatMultTranspose(Add) */
  PetscCall(MatMultTranspose(A, xt, w1));
  PetscCall(poison(w2));
  PetscCall(MatMultTranspose(S, xt, w2));
  EXPECT(vdiff(w1, w2) < 1e-13, "%s: MatMultTranspose differs by %g", when, (double)vdiff(w1, w2));
  PetscCall(MatMultTransposeAdd(A, xt, yt, w1));
  PetscCall(poison(w2));
  PetscCall(MatMultTransposeAdd(S, xt, yt, w2));
  EXPECT(vdiff(w1, w2) < 1e-13, "%s: MatMultTransposeAdd differs by %g", when,
         (double)vdiff(w1, w2));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&xt));
  PetscCall(VecDestroy(&yt));
  PetscCall(VecDestroy(&z1));
  PetscCall(VecDestroy(&z2));
  PetscCall(VecDestroy(&w1));
  PetscCall(VecDestroy(&w2));
  PetscFunctionReturn(0);
}

/* MatScale(S, a) and a MatMult: the coalesce copy keeps its device structure, so the product
 * uploads the values only (nnz * sizeof(PetscScalar) bytes, one values-only upload); on the host
 * backend nothing moves (coal_device_stats_get on the plugin's context). */
static PetscErrorCode refresh_uploads(Mat S, PetscScalar a) {
  coal_ctx ctx = NULL;
  coal_device_stats s0, s1;
  MatInfo info;
  Vec x, y;
  PetscFunctionBeginUser;
  PetscCall(coal_petsc_context(&ctx));
  PetscCall(MatCreateVecs(S, &x, &y));
  PetscCall(VecSet(x, 1.0));
  PetscCall(MatMult(S, x, y)); /* the device copy exists and is current */
  EXPECT(coal_device_stats_get(ctx, &s0) == COAL_SUCCESS, "coal_device_stats_get");
  PetscCall(MatScale(S, a));
  PetscCall(MatMult(S, x, y));
  EXPECT(coal_device_stats_get(ctx, &s1) == COAL_SUCCESS, "coal_device_stats_get");
  PetscCall(MatGetInfo(S, MAT_LOCAL, &info));
  const int cuda = coal_ctx_backend(ctx) == COAL_BACKEND_CUDA;
  const uint64_t want = cuda ? (uint64_t)info.nz_used * sizeof(PetscScalar) : 0;
  const uint64_t bytes = s1.upload_bytes - s0.upload_bytes;
  const char *hb = getenv("COALESCE_FASTLOAD_HOST_BUILD"); /* a format is uploaded too */
  EXPECT(hb && !strcmp(hb, "1") ? bytes >= want : bytes == want,
         "MatScale: %llu bytes uploaded, expected %llu", (unsigned long long)bytes,
         (unsigned long long)want);
  EXPECT(s1.full_uploads == s0.full_uploads &&
             s1.values_uploads - s0.values_uploads == (uint64_t)cuda,
         "MatScale: %llu full and %llu values-only uploads",
         (unsigned long long)(s1.full_uploads - s0.full_uploads),
         (unsigned long long)(s1.values_uploads - s0.values_uploads));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscFunctionReturn(0);
}

static PetscErrorCode test_vector_products(PetscInt m, PetscInt n, PetscRandom r) {
  Mat A, S, B;
  PetscBool is;
  char when[64];
  PetscFunctionBeginUser;
  PetscCall(random_aij(m, n, 6, PETSC_FALSE, r, &A));
  PetscCall(MatConvert(A, MATSEQAIJSWIFT, MAT_INITIAL_MATRIX, &S));
  PetscCall(PetscObjectTypeCompare((PetscObject)S, MATSEQAIJSWIFT, &is));
  EXPECT(is, "MatConvert gave %s", tname(S));
  snprintf(when, sizeof when, "%dx%d fresh", (int)m, (int)n);
  PetscCall(compare_products(A, S, r, when));
  /* values changed without an assembly: MatScale, MatDiagonalScale, MatAXPY, array access */
  PetscCall(MatScale(A, 2.5));
  PetscCall(refresh_uploads(S, 2.5));
  PetscCall(compare_products(A, S, r, "after MatScale"));
  Vec l, rr;
  PetscCall(MatCreateVecs(A, &rr, &l));
  PetscCall(VecSetRandom(l, r));
  PetscCall(VecSetRandom(rr, r));
  PetscCall(MatDiagonalScale(A, l, rr));
  PetscCall(MatDiagonalScale(S, l, rr));
  PetscCall(compare_products(A, S, r, "after MatDiagonalScale"));
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &B));
  PetscCall(MatAXPY(A, 0.5, B, SAME_NONZERO_PATTERN));
  PetscCall(MatAXPY(S, 0.5, B, SAME_NONZERO_PATTERN));
  PetscCall(compare_products(A, S, r, "after MatAXPY"));
  PetscScalar *va;
  PetscCall(MatSeqAIJGetArray(A, &va));
  va[0] += 3.0;
  PetscCall(MatSeqAIJRestoreArray(A, &va));
  PetscCall(MatSeqAIJGetArray(S, &va));
  va[0] += 3.0;
  PetscCall(MatSeqAIJRestoreArray(S, &va));
  PetscCall(compare_products(A, S, r, "after array access"));
  /* new nonzeros: the structure changes */
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatSetOption(S, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  for (PetscInt i = 0; i < m; i += 7) {
    PetscCall(MatSetValue(A, i, (i * 13) % n, 1.0 + i, ADD_VALUES));
    PetscCall(MatSetValue(S, i, (i * 13) % n, 1.0 + i, ADD_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyBegin(S, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(S, MAT_FINAL_ASSEMBLY));
  PetscCall(compare_products(A, S, r, "after new nonzeros"));
  /* duplicate keeps the type; conversion back to AIJ keeps the values */
  Mat D;
  PetscCall(MatDuplicate(S, MAT_COPY_VALUES, &D));
  PetscCall(PetscObjectTypeCompare((PetscObject)D, MATSEQAIJSWIFT, &is));
  EXPECT(is, "MatDuplicate gave %s", tname(D));
  PetscCall(compare_products(A, D, r, "duplicate"));
  PetscCall(MatConvert(D, MATSEQAIJ, MAT_INPLACE_MATRIX, &D));
  PetscCall(PetscObjectTypeCompare((PetscObject)D, MATSEQAIJ, &is));
  EXPECT(is, "MatConvert to seqaij gave %s", tname(D));
  PetscCall(compare_products(A, D, r, "converted back"));
  PetscCall(MatDestroy(&D));
  PetscCall(VecDestroy(&l));
  PetscCall(VecDestroy(&rr));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&S));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

static PetscErrorCode test_mat_products(PetscRandom r) {
  Mat A, S, P, Q, C1, C2, Bd, D1, D2;
  PetscBool is;
  PetscFunctionBeginUser;
  /* sparse x dense (SpMM), with a leading dimension larger than the rows */
  PetscCall(random_aij(300, 240, 8, PETSC_FALSE, r, &A));
  PetscCall(MatConvert(A, MATSEQAIJSWIFT, MAT_INITIAL_MATRIX, &S));
  PetscCall(MatCreateSeqDense(PETSC_COMM_SELF, 240, 7, NULL, &Bd));
  PetscCall(MatSetRandom(Bd, r));
  PetscCall(MatMatMult(A, Bd, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &D1));
  PetscCall(MatMatMult(S, Bd, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &D2));
  EXPECT(mdiff(D1, D2) < 1e-13, "A*dense differs by %g", (double)mdiff(D1, D2));
  PetscCall(MatScale(S, -2.0));
  PetscCall(MatScale(A, -2.0));
  PetscCall(MatZeroEntries(D2));
  PetscCall(MatMatMult(A, Bd, MAT_REUSE_MATRIX, PETSC_DEFAULT, &D1));
  PetscCall(MatMatMult(S, Bd, MAT_REUSE_MATRIX, PETSC_DEFAULT, &D2));
  EXPECT(mdiff(D1, D2) < 1e-13, "A*dense (reuse) differs by %g", (double)mdiff(D1, D2));
  PetscCall(MatDestroy(&D1));
  PetscCall(MatDestroy(&D2));
  PetscCall(MatDestroy(&Bd));
  {
    Mat Bl; /* dense with lda > rows: a submatrix view */
    PetscScalar *buf;
    PetscCall(PetscMalloc1(250 * 5, &buf));
    for (int i = 0; i < 250 * 5; i++) buf[i] = sin(0.37 * i);
    PetscCall(MatCreateSeqDense(PETSC_COMM_SELF, 240, 5, buf, &Bl));
    PetscCall(MatDenseSetLDA(Bl, 250));
    PetscCall(MatMatMult(A, Bl, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &D1));
    PetscCall(MatMatMult(S, Bl, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &D2));
    EXPECT(mdiff(D1, D2) < 1e-13, "A*dense(lda) differs by %g", (double)mdiff(D1, D2));
    PetscCall(MatDestroy(&D1));
    PetscCall(MatDestroy(&D2));
    PetscCall(MatDestroy(&Bl));
    PetscCall(PetscFree(buf));
  }
  /* sparse x sparse: A*Q with Q plain AIJ and with Q swift; values changed then reuse */
  PetscCall(random_aij(240, 90, 4, PETSC_FALSE, r, &Q));
  PetscCall(MatMatMult(A, Q, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C1));
  PetscCall(MatMatMult(S, Q, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C2));
  PetscCall(PetscObjectTypeCompare((PetscObject)C2, MATSEQAIJSWIFT, &is));
  EXPECT(is, "A*Q gave %s", tname(C2));
  EXPECT(mdiff(C1, C2) < 1e-13, "A*Q differs by %g", (double)mdiff(C1, C2));
  PetscCall(MatScale(A, 0.25));
  PetscCall(MatScale(S, 0.25));
  PetscCall(MatMatMult(A, Q, MAT_REUSE_MATRIX, PETSC_DEFAULT, &C1));
  PetscCall(MatMatMult(S, Q, MAT_REUSE_MATRIX, PETSC_DEFAULT, &C2));
  EXPECT(mdiff(C1, C2) < 1e-13, "A*Q (reuse) differs by %g", (double)mdiff(C1, C2));
  PetscCall(MatDestroy(&C1));
  PetscCall(MatDestroy(&C2));
  PetscCall(MatDestroy(&S));
  PetscCall(MatDestroy(&A));
  /* Galerkin product P^T A P with A SPD */
  PetscCall(random_aij(400, 400, 5, PETSC_TRUE, r, &A));
  PetscCall(MatConvert(A, MATSEQAIJSWIFT, MAT_INITIAL_MATRIX, &S));
  PetscCall(random_aij(400, 60, 2, PETSC_FALSE, r, &P));
  PetscCall(MatPtAP(A, P, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C1));
  PetscCall(MatPtAP(S, P, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C2));
  PetscCall(PetscObjectTypeCompare((PetscObject)C2, MATSEQAIJSWIFT, &is));
  EXPECT(is, "PtAP gave %s", tname(C2));
  EXPECT(mdiff(C1, C2) < 1e-13, "PtAP differs by %g", (double)mdiff(C1, C2));
  PetscCall(MatScale(A, 3.0));
  PetscCall(MatScale(S, 3.0));
  PetscCall(MatPtAP(A, P, MAT_REUSE_MATRIX, PETSC_DEFAULT, &C1));
  PetscCall(MatPtAP(S, P, MAT_REUSE_MATRIX, PETSC_DEFAULT, &C2));
  EXPECT(mdiff(C1, C2) < 1e-13, "PtAP (reuse) differs by %g", (double)mdiff(C1, C2));
  /* the product is itself a working seqaijswift */
  PetscCall(compare_products(C1, C2, r, "PtAP result"));
  PetscCall(MatDestroy(&C1));
  PetscCall(MatDestroy(&C2));
  PetscCall(MatDestroy(&P));
  PetscCall(MatDestroy(&Q));
  PetscCall(MatDestroy(&S));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

/* MatSetType("swift") resolves to seqaijswift on one rank, and the view names the backend. */
static PetscErrorCode test_root_name(void) {
  Mat A;
  PetscBool is;
  PetscFunctionBeginUser;
  PetscCall(MatCreate(PETSC_COMM_SELF, &A));
  PetscCall(MatSetSizes(A, 10, 10, 10, 10));
  PetscCall(MatSetType(A, MATSWIFT));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQAIJSWIFT, &is));
  EXPECT(is, "swift resolved to %s", tname(A));
  PetscCall(MatSeqAIJSetPreallocation(A, 3, NULL));
  for (PetscInt i = 0; i < 10; i++) PetscCall(MatSetValue(A, i, i, 2.0, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscViewerPushFormat(PETSC_VIEWER_STDOUT_SELF, PETSC_VIEWER_ASCII_INFO));
  PetscCall(MatView(A, PETSC_VIEWER_STDOUT_SELF));
  PetscCall(PetscViewerPopFormat(PETSC_VIEWER_STDOUT_SELF));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv) {
  if (skip_without_gpu()) return 77;
  PetscRandom r;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(coal_petsc_register());
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r));
  PetscCall(PetscRandomSetSeed(r, 20261121));
  PetscCall(PetscRandomSeed(r));
  PetscCall(test_root_name());
  PetscCall(test_vector_products(500, 500, r));
  PetscCall(test_vector_products(333, 120, r));
  PetscCall(test_vector_products(64, 900, r));
  PetscCall(test_mat_products(r));
  PetscCall(PetscRandomDestroy(&r));
  printf("test_swift: %d checks, %d failures\n", checks, failures);
  PetscCall(PetscFinalize());
  return failures ? 1 : 0;
}
