/* Shared by the CUDA twin tests (test_*_cuda.c): a host and a CUDA context side by side, and the
 * CUDA headers for the tests that reach the CUDA backend's internals. */
#ifndef COAL_TEST_CHECK_CUDA_H
#define COAL_TEST_CHECK_CUDA_H

#include "check.h"

/* The host twin's context and the GPU's. */
typedef struct {
  coal_ctx h, d;
} ctx_pair;

/* Creates both contexts and prints the device ("device: NAME" and `note`). 0, or the test's exit
 * status: 77 (skipped) without a GPU, the failure count's when a context could not be made. */
static inline int check_ctx_pair(ctx_pair *C, const char *note) {
  C->h = C->d = NULL;
  if (!coal_cuda_available()) {
    printf("no GPU: skipped\n");
    return 77;
  }
  CHECK_OK(NULL, coal_ctx_create(COAL_BACKEND_HOST, &C->h));
  CHECK_OK(NULL, coal_ctx_create(COAL_BACKEND_CUDA, &C->d));
  if (!C->h || !C->d) return check_finish();
  printf("device: %s%s\n", coal_ctx_device_name(C->d), note ? note : "");
  return 0;
}

#ifdef COAL_TEST_CUDA_INTERNALS
/* The CUDA headers, compiled as C with -I (not as system headers), declare deprecated cuSPARSE
 * types: included first with that warning off; cuda_internal.h then finds them included. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>
#pragma GCC diagnostic pop

#include "cuda/cuda_internal.h"
#endif

#endif
