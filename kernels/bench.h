/* Support for `coalesce bench` and the probes besides the public one. The front ends of the
 * timing and the cuSPARSE references (coal_bench_time, coal_bench_copy_bandwidth,
 * coal_cuda_fastload_build_time, coal_cusparse_spmv_*, _spmm_*, _spgemm_*) are declared in
 * coalesce.h, section "benchmark support", and defined in kernels/bench.c: they check their
 * arguments and dispatch through the bench sub-table of the context's backend table (struct
 * coal_bench_ops, src/backend.h); where the backend has no entry (the host has only the timing)
 * they answer COAL_ERR_UNSUPPORTED. Declared here: the implementations, coal_bench_time_host
 * (kernels/host/bench.c) and the *_cuda functions (kernels/cuda/bench.cu,
 * spgemm_cusparse.cu), and the CUDA test hooks. The SpMM tuning knobs are in
 * kernels/cuda/spmm_tune.h. */
#ifndef COAL_KERNELS_BENCH_H
#define COAL_KERNELS_BENCH_H

#include "../src/backend.h"
#include "fastload.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the implementations (entries of the bench sub-table) ---------------------------------- */
/* host clock (kernels/host/bench.c) */
coal_status coal_bench_time_host(coal_ctx ctx, coal_bench_fn fn, void *arg, double *us);
/* CUDA (kernels/cuda/bench.cu, spgemm_cusparse.cu) */
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
 * prescale[nprescale] (coal_malloc'd; task and prescale may be NULL when not wanted); the
 * host definition of the schedule is coal_fastload_schedule_host (kernels/fastload.h). */
coal_status coal_cuda_fastload_download(coal_mat A, int transposed, coal_fastload **f,
                                        int32_t **task, int32_t *ntasks, int32_t **prescale,
                                        int32_t *nprescale);

#ifdef __cplusplus
}
#endif
#endif
