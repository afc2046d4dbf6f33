/* Benchmark support, front ends (kernels/bench.h): argument checks, then the bench sub-table of
 * the context's backend table. A backend without an entry answers COAL_ERR_UNSUPPORTED. A
 * handle (struct coal_cusparse_*) starts with its context, which leads run and destroy to the
 * backend that made it. */
#include "bench.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The context a backend's handle starts with. */
static coal_ctx handle_ctx(const void *h) { return *(const coal_ctx *)h; }

#define NO_ENTRY(ctx, what)                                                                        \
  COAL_ERROR((ctx), COAL_ERR_UNSUPPORTED, "the %s backend has no %s", coal_backend(ctx)->name,     \
             (what))

coal_status coal_bench_time(coal_ctx ctx, coal_bench_fn fn, void *arg, int warmup, int reps,
                            double *median_us, double *min_us) {
  if (!ctx) return COAL_ERR_ARG;
  COAL_CHECK(ctx, fn && reps > 0 && warmup >= 0, COAL_ERR_ARG, "bad timing request");
  const coal_backend_ops *ops = coal_backend(ctx);
  for (int i = 0; i < warmup; i++) COAL_CALL(fn(arg));
  COAL_CALL(ops->mem.sync(ctx)); /* the warm-up's work is not timed */
  double *t = NULL;
  COAL_CALL(coal_malloc(ctx, sizeof(double) * (size_t)reps, (void **)&t));
  for (int i = 0; i < reps; i++) {
    coal_status st = ops->bench.time(ctx, fn, arg, &t[i]);
    if (st != COAL_SUCCESS) {
      coal_free(t);
      return st;
    }
  }
  qsort(t, (size_t)reps, sizeof(double), cmp_double);
  if (median_us) *median_us = t[reps / 2];
  if (min_us) *min_us = t[0];
  coal_free(t);
  return COAL_SUCCESS;
}

coal_status coal_bench_copy_bandwidth(coal_ctx ctx, size_t bytes, double *gbps) {
  if (!ctx) return COAL_ERR_ARG;
  COAL_CHECK(ctx, gbps && bytes > 0, COAL_ERR_ARG, "bad bandwidth request");
  const coal_bench_ops *b = &coal_backend(ctx)->bench;
  if (!b->copy_bandwidth) return NO_ENTRY(ctx, "device copy bandwidth");
  return b->copy_bandwidth(ctx, bytes, gbps);
}

coal_status coal_cusparse_spmv_create(coal_mat A, int alg, const void *x, void *y,
                                      coal_cusparse_spmv **out) {
  if (!A || !out) return COAL_ERR_ARG;
  *out = NULL;
  const coal_bench_ops *b = &coal_backend(A->ctx)->bench;
  if (!b->cusparse_spmv_create) return NO_ENTRY(A->ctx, "cuSPARSE SpMV reference");
  return b->cusparse_spmv_create(A, alg, x, y, out);
}

coal_status coal_cusparse_spmv_run(coal_cusparse_spmv *h, double alpha, double beta) {
  if (!h) return COAL_ERR_ARG;
  return coal_backend(handle_ctx(h))->bench.cusparse_spmv_run(h, alpha, beta);
}

void coal_cusparse_spmv_destroy(coal_cusparse_spmv *h) {
  if (h) coal_backend(handle_ctx(h))->bench.cusparse_spmv_destroy(h);
}

coal_status coal_cusparse_spmm_create(coal_mat A, int alg, int64_t k, coal_layout layout,
                                      const void *X, int64_t ldx, void *Y, int64_t ldy,
                                      coal_cusparse_spmm **out) {
  if (!A || !out) return COAL_ERR_ARG;
  *out = NULL;
  const coal_bench_ops *b = &coal_backend(A->ctx)->bench;
  if (!b->cusparse_spmm_create) return NO_ENTRY(A->ctx, "cuSPARSE SpMM reference");
  return b->cusparse_spmm_create(A, alg, k, layout, X, ldx, Y, ldy, out);
}

coal_status coal_cusparse_spmm_run(coal_cusparse_spmm *h, double alpha, double beta) {
  if (!h) return COAL_ERR_ARG;
  return coal_backend(handle_ctx(h))->bench.cusparse_spmm_run(h, alpha, beta);
}

void coal_cusparse_spmm_destroy(coal_cusparse_spmm *h) {
  if (h) coal_backend(handle_ctx(h))->bench.cusparse_spmm_destroy(h);
}

coal_status coal_cusparse_spgemm_create(coal_mat A, coal_mat B, coal_cusparse_spgemm **h) {
  if (!A || !B || !h) return COAL_ERR_ARG;
  *h = NULL;
  const coal_bench_ops *b = &coal_backend(A->ctx)->bench;
  if (!b->cusparse_spgemm_create) return NO_ENTRY(A->ctx, "cuSPARSE SpGEMM reference");
  return b->cusparse_spgemm_create(A, B, h);
}

coal_status coal_cusparse_spgemm_run(coal_cusparse_spgemm *h) {
  if (!h) return COAL_ERR_ARG;
  return coal_backend(handle_ctx(h))->bench.cusparse_spgemm_run(h);
}

coal_status coal_cusparse_spgemm_reuse_setup(coal_cusparse_spgemm *h) {
  if (!h) return COAL_ERR_ARG;
  return coal_backend(handle_ctx(h))->bench.cusparse_spgemm_reuse_setup(h);
}

coal_status coal_cusparse_spgemm_reuse_compute(coal_cusparse_spgemm *h) {
  if (!h) return COAL_ERR_ARG;
  return coal_backend(handle_ctx(h))->bench.cusparse_spgemm_reuse_compute(h);
}

coal_status coal_cusparse_spgemm_result(coal_cusparse_spgemm *h, coal_mat *C, size_t *peak_bytes) {
  if (!h) return COAL_ERR_ARG;
  return coal_backend(handle_ctx(h))->bench.cusparse_spgemm_result(h, C, peak_bytes);
}

void coal_cusparse_spgemm_destroy(coal_cusparse_spgemm *h) {
  if (h) coal_backend(handle_ctx(h))->bench.cusparse_spgemm_destroy(h);
}

coal_status coal_cuda_fastload_build_time(coal_mat A, int transposed, double *ms) {
  if (!A) return COAL_ERR_ARG;
  const coal_bench_ops *b = &coal_backend(A->ctx)->bench;
  if (!b->fastload_build_time) return NO_ENTRY(A->ctx, "FastLoad build on the device");
  return b->fastload_build_time(A, transposed, ms);
}
