/* Host-only build: benchmark timing on the host clock; the cuSPARSE reference is absent. */
#include "../kernels/bench.h"
#include "../kernels/cuda/spmm_tune.h"
#include "backend.h"

#include <time.h>

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

coal_status coal_bench_time(coal_ctx ctx, coal_bench_fn fn, void *arg, int warmup, int reps,
                            double *median_us, double *min_us) {
  COAL_CHECK(ctx, fn && reps > 0, COAL_ERR_ARG, "bad timing request");
  COAL_CHECK(ctx, ctx->backend == COAL_BACKEND_HOST, COAL_ERR_NOT_COMPILED,
             "the CUDA backend is not compiled in this build");
  for (int i = 0; i < warmup; i++) COAL_CALL(fn(arg));
  double *t;
  COAL_CALL(coal_malloc(ctx, sizeof(double) * (size_t)reps, (void **)&t));
  for (int i = 0; i < reps; i++) {
    double t0 = now_us();
    coal_status st = fn(arg);
    if (st) {
      coal_free(t);
      return st;
    }
    t[i] = now_us() - t0;
  }
  qsort(t, (size_t)reps, sizeof(double), cmp_double);
  if (median_us) *median_us = t[reps / 2];
  if (min_us) *min_us = t[0];
  coal_free(t);
  return COAL_SUCCESS;
}

coal_status coal_bench_copy_bandwidth(coal_ctx ctx, size_t bytes, double *gbps) {
  (void)bytes, (void)gbps;
  return COAL_ERROR(ctx, COAL_ERR_NOT_COMPILED, "the CUDA backend is not compiled in this build");
}

coal_status coal_cusparse_spmv_create(coal_mat A, int alg, const void *x, void *y,
                                      coal_cusparse_spmv **out) {
  (void)alg, (void)x, (void)y, (void)out;
  return COAL_ERROR(A->ctx, COAL_ERR_NOT_COMPILED, "cuSPARSE is not compiled in this build");
}
coal_status coal_cusparse_spmv_run(coal_cusparse_spmv *h, double alpha, double beta) {
  (void)h, (void)alpha, (void)beta;
  return COAL_ERR_NOT_COMPILED;
}
void coal_cusparse_spmv_destroy(coal_cusparse_spmv *h) { (void)h; }

coal_status coal_cusparse_spmm_create(coal_mat A, int alg, int64_t k, coal_layout layout,
                                      const void *X, int64_t ldx, void *Y, int64_t ldy,
                                      coal_cusparse_spmm **out) {
  (void)alg, (void)k, (void)layout, (void)X, (void)ldx, (void)Y, (void)ldy, (void)out;
  return COAL_ERROR(A->ctx, COAL_ERR_NOT_COMPILED, "cuSPARSE is not compiled in this build");
}
coal_status coal_cusparse_spmm_run(coal_cusparse_spmm *h, double alpha, double beta) {
  (void)h, (void)alpha, (void)beta;
  return COAL_ERR_NOT_COMPILED;
}
void coal_cusparse_spmm_destroy(coal_cusparse_spmm *h) { (void)h; }
coal_status coal_spmm_cuda_tune(coal_ctx ctx, int what, int value) {
  (void)ctx, (void)what, (void)value;
  return COAL_ERR_NOT_COMPILED;
}

coal_status coal_cuda_fastload_build_time(coal_mat A, int transposed, double *ms) {
  (void)transposed, (void)ms;
  return COAL_ERROR(A->ctx, COAL_ERR_NOT_COMPILED,
                    "the CUDA backend is not compiled in this build");
}
coal_status coal_cuda_fastload_download(coal_mat A, int transposed, coal_fastload **f,
                                        int32_t **task, int32_t *ntasks, int32_t **prescale,
                                        int32_t *nprescale) {
  (void)transposed, (void)f, (void)task, (void)ntasks, (void)prescale, (void)nprescale;
  return COAL_ERROR(A->ctx, COAL_ERR_NOT_COMPILED,
                    "the CUDA backend is not compiled in this build");
}
coal_status coal_cuda_gather_schedule_host(coal_ctx ctx, const coal_fastload *f, int32_t **task,
                                           int32_t *ntasks, int32_t **prescale,
                                           int32_t *nprescale) {
  (void)f, (void)task, (void)ntasks, (void)prescale, (void)nprescale;
  return COAL_ERROR(ctx, COAL_ERR_NOT_COMPILED, "the CUDA backend is not compiled in this build");
}
