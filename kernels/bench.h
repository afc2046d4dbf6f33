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

/* FastLoad format built on the GPU from A's device CSR (kernels/cuda/fastload_build.cu):
 * rebuilds A's scatter (transposed = 0) or gather (1) device format, replacing the cached one,
 * and writes the build time in milliseconds (CUDA events; workspace and format allocations
 * included). One untimed build first, so that one-time module loading is not counted. */
coal_status coal_cuda_fastload_build_time(coal_mat A, int transposed, double *ms);

/* Test hooks (CUDA build; a host-only build answers COAL_ERR_NOT_COMPILED).
 * coal_cuda_fastload_download: A's device format as used by the kernels (built at first use),
 * downloaded into a host coal_fastload (free with coal_fastload_free; nsplit, split and
 * natomics are not set), and for the gather format its schedule: task[ntasks + 1] and
 * prescale[nprescale] (coal_malloc'd; task and prescale may be NULL when not wanted).
 * coal_cuda_gather_schedule_host: the host definition of the gather schedule for a host
 * format (kernels/cuda/ops.cu). */
coal_status coal_cuda_fastload_download(coal_mat A, int transposed, coal_fastload **f,
                                        int32_t **task, int32_t *ntasks, int32_t **prescale,
                                        int32_t *nprescale);
coal_status coal_cuda_gather_schedule_host(coal_ctx ctx, const coal_fastload *f, int32_t **task,
                                           int32_t *ntasks, int32_t **prescale, int32_t *nprescale);

/* cuSPARSE SpMM on A's device CSR: Y = alpha*A*X + beta*Y with X (ncols x k) and Y (nrows x k)
 * dense device blocks of A's dtype in `layout` with leading dimensions ldx, ldy.
 * alg: 1 = CUSPARSE_SPMM_CSR_ALG1 (column-major), 2 = CSR_ALG2 and 3 = CSR_ALG3 (row-major);
 * cusparseSpMM_preprocess is done at creation (where the algorithm has one). A combination
 * cuSPARSE refuses gives COAL_ERR_UNSUPPORTED, so the caller can skip it. */
typedef struct coal_cusparse_spmm coal_cusparse_spmm;
coal_status coal_cusparse_spmm_create(coal_mat A, int alg, int64_t k, coal_layout layout,
                                      const void *X, int64_t ldx, void *Y, int64_t ldy,
                                      coal_cusparse_spmm **out);
coal_status coal_cusparse_spmm_run(coal_cusparse_spmm *h, double alpha, double beta);
void coal_cusparse_spmm_destroy(coal_cusparse_spmm *h);

#ifdef __cplusplus
}
#endif
#endif
