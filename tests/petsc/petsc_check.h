/* Shared by the petsc suite's programs: counted checks and a poison-aware vector difference. */
#ifndef COAL_PETSC_CHECK_H
#define COAL_PETSC_CHECK_H

#include <math.h>
#include <petscmat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coalesce.h"
#include "coalesce_petsc.h"

static int failures, checks;

#define EXPECT(cond, ...)                                                                          \
  do {                                                                                             \
    checks++;                                                                                      \
    if (!(cond)) {                                                                                 \
      failures++;                                                                                  \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                  \
      printf(__VA_ARGS__);                                                                         \
      printf("\n");                                                                                \
    }                                                                                              \
  } while (0)

static inline const char *tname(Mat M) {
  MatType t = NULL;
  PetscCallAbort(PETSC_COMM_SELF, MatGetType(M, &t));
  return t ? t : "(none)";
}

/* relative difference of two vectors; a NaN anywhere gives +inf */
static inline PetscReal vdiff(Vec a, Vec b) {
  Vec d;
  PetscReal nd, na;
  PetscCallAbort(PETSC_COMM_SELF, VecDuplicate(a, &d));
  PetscCallAbort(PETSC_COMM_SELF, VecWAXPY(d, -1.0, a, b));
  PetscCallAbort(PETSC_COMM_SELF, VecNorm(d, NORM_INFINITY, &nd));
  PetscCallAbort(PETSC_COMM_SELF, VecNorm(a, NORM_INFINITY, &na));
  PetscCallAbort(PETSC_COMM_SELF, VecDestroy(&d));
  if (nd != nd) return INFINITY;
  return nd / (na > 0 ? na : 1.0);
}

/* both local blocks of an mpiaijswift matrix are seqaijswift */
static inline PetscErrorCode expect_swift_blocks(Mat S, const char *when) {
  Mat Ad, Ao;
  PetscBool d, o;
  PetscFunctionBeginUser;
  PetscCall(MatMPIAIJGetSeqAIJ(S, &Ad, &Ao, NULL));
  PetscCall(PetscObjectTypeCompare((PetscObject)Ad, MATSEQAIJSWIFT, &d));
  PetscCall(PetscObjectTypeCompare((PetscObject)Ao, MATSEQAIJSWIFT, &o));
  EXPECT(d && o, "%s: blocks are %s and %s", when, tname(Ad), tname(Ao));
  PetscFunctionReturn(0);
}

/* checks and failures summed over PETSC_COMM_WORLD, printed once; *fails on every rank */
static inline PetscErrorCode report_world(const char *name, int *fails) {
  PetscMPIInt size;
  int all = checks;
  PetscFunctionBeginUser;
  *fails = failures;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, fails, 1, MPI_INT, MPI_SUM, PETSC_COMM_WORLD));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_SUM, PETSC_COMM_WORLD));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: %d ranks, %d checks, %d failures\n", name, (int)size,
                        all, *fails));
  PetscFunctionReturn(0);
}

/* 77 (meson's "skipped") when the CUDA backend is asked for and no GPU answers */
static inline int skip_without_gpu(void) {
  const char *want = getenv("COALESCE_BACKEND");
  if (want && !strcmp(want, "cuda") && !coal_cuda_available()) {
    printf("no GPU: skipped\n");
    return 1;
  }
  return 0;
}

#endif
