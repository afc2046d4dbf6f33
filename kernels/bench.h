/* Support for `coalesce bench` and the probes: event timing, copy bandwidth, the cuSPARSE
 * references in the same process, the FastLoad build time.
 *
 * The functions named here without a backend suffix are the front ends (kernels/bench.c): they
 * check their arguments and dispatch through the bench sub-table of the context's backend table
 * (struct coal_bench_ops, src/backend.h); where the backend has no entry (the host has only the
 * timing) they answer COAL_ERR_UNSUPPORTED. The implementations are coal_bench_time_host
 * (kernels/host/bench.c) and the *_cuda functions below (kernels/cuda/bench_cusparse.cu,
 * spgemm_cusparse.cu). */
#ifndef COAL_KERNELS_BENCH_H
#define COAL_KERNELS_BENCH_H

#include "../src/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/* cuSPARSE SpGEMM reference (kernels/cuda/spgemm_cusparse.cu): C = A*B with cuSPARSE's generic
 * SpGEMM on the device CSR of A and B (one CUDA context; the descriptors point at A's and B's
 * device copies, which must stay current: do not change their values meanwhile). run: the whole
 * product as a user calls it (descriptors of C, workEstimation, compute, allocations, copy; the
 * buffers freed, C kept until the next run). reuse_setup: the structure by the
 * cusparseSpGEMMreuse_* path once, then its first numeric; reuse_compute: the numeric-only
 * product. result: the last C as a new host-CSR matrix on the context, and peak_bytes (the
 * buffers of run plus C). */
typedef struct coal_cusparse_spgemm coal_cusparse_spgemm;
coal_status coal_cusparse_spgemm_create(coal_mat A, coal_mat B, coal_cusparse_spgemm **h);
coal_status coal_cusparse_spgemm_run(coal_cusparse_spgemm *h);
coal_status coal_cusparse_spgemm_reuse_setup(coal_cusparse_spgemm *h);
coal_status coal_cusparse_spgemm_reuse_compute(coal_cusparse_spgemm *h);
coal_status coal_cusparse_spgemm_result(coal_cusparse_spgemm *h, coal_mat *C, size_t *peak_bytes);
void coal_cusparse_spgemm_destroy(coal_cusparse_spgemm *h);

/* ---- the implementations (entries of the bench sub-table) ---------------------------------- */
/* host clock (kernels/host/bench.c) */
coal_status coal_bench_time_host(coal_ctx ctx, coal_bench_fn fn, void *arg, double *us);
/* CUDA (kernels/cuda/bench_cusparse.cu, spgemm_cusparse.cu) */
coal_status coal_bench_time_cuda(coal_ctx ctx, coal_bench_fn fn, void *arg, double *us);
coal_status coal_bench_copy_bandwidth_cuda(coal_ctx ctx, size_t bytes, double *gbps);
coal_status coal_cusparse_spmv_create_cuda(coal_mat A, int alg, const void *x, void *y,
                                           coal_cusparse_spmv **out);
coal_status coal_cusparse_spmv_run_cuda(coal_cusparse_spmv *h, double alpha, double beta);
void coal_cusparse_spmv_destroy_cuda(coal_cusparse_spmv *h);
coal_status coal_cusparse_spmm_create_cuda(coal_mat A, int alg, int64_t k, coal_layout layout,
                                           const void *X, int64_t ldx, void *Y, int64_t ldy,
                                           coal_cusparse_spmm **out);
coal_status coal_cusparse_spmm_run_cuda(coal_cusparse_spmm *h, double alpha, double beta);
void coal_cusparse_spmm_destroy_cuda(coal_cusparse_spmm *h);
coal_status coal_cusparse_spgemm_create_cuda(coal_mat A, coal_mat B, coal_cusparse_spgemm **h);
coal_status coal_cusparse_spgemm_run_cuda(coal_cusparse_spgemm *h);
coal_status coal_cusparse_spgemm_reuse_setup_cuda(coal_cusparse_spgemm *h);
coal_status coal_cusparse_spgemm_reuse_compute_cuda(coal_cusparse_spgemm *h);
coal_status coal_cusparse_spgemm_result_cuda(coal_cusparse_spgemm *h, coal_mat *C,
                                             size_t *peak_bytes);
void coal_cusparse_spgemm_destroy_cuda(coal_cusparse_spgemm *h);
coal_status coal_fastload_build_time_cuda(coal_mat A, int transposed, double *ms);

/* ---- CUDA test hooks (CUDA build only; the cuda test suite is built only then) -------------
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

#ifdef __cplusplus
}
#endif
#endif
