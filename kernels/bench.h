/* Support for `coalesce bench`: event timing and the cuSPARSE reference, in the same process.
 * CUDA-only parts answer COAL_ERR_NOT_COMPILED in a host-only build (src/bench_stub.c). */
#ifndef COAL_KERNELS_BENCH_H
#define COAL_KERNELS_BENCH_H

#include "../src/internal.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef coal_status (*coal_bench_fn)(void *arg);

/* Runs fn `warmup` times, then `reps` times, each timed on its own (CUDA events on the
 * context's stream for the cuda backend, a monotonic clock on host); writes the median and
 * the minimum in microseconds. */
coal_status coal_bench_time(coal_ctx ctx, coal_bench_fn fn, void *arg, int warmup, int reps,
                            double *median_us, double *min_us);

/* Device-to-device copy bandwidth, counting bytes read plus bytes written, in GB/s
 * (median of several copies of `bytes` bytes). */
coal_status coal_bench_copy_bandwidth(coal_ctx ctx, size_t bytes, double *gbps);

/* cuSPARSE SpMV on A's device CSR (alg 1 = CUSPARSE_SPMV_CSR_ALG1, 2 = ALG2), with
 * cusparseSpMV_preprocess done at creation. x and y are device vectors of A's dtype. */
typedef struct coal_cusparse_spmv coal_cusparse_spmv;
coal_status coal_cusparse_spmv_create(coal_mat A, int alg, const void *x, void *y,
                                      coal_cusparse_spmv **out);
coal_status coal_cusparse_spmv_run(coal_cusparse_spmv *h, double alpha, double beta);
void coal_cusparse_spmv_destroy(coal_cusparse_spmv *h);

#ifdef __cplusplus
}
#endif
#endif
