/* Shared by the petsc suite's programs: counted checks and a poison-aware vector difference. */
#ifndef COAL_PETSC_CHECK_H
#define COAL_PETSC_CHECK_H

#include <math.h>
#include <petscmat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coalesce.h"

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
