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

/* Tuning knobs of the CUDA SpMM kernels, for measurements (bench/spmm_probe.c): process-wide,
 * value 0 = the default. RS_ROWS = r: each row-split group walks r rows (interleaved over the
 * CTA's groups; default 4 on large matrices, 1 on small ones); RS_W, RS_UB, RS_S, MG_UB: see the
 * enum. A host-only build answers COAL_ERR_NOT_COMPILED. */
enum {
  COAL_SPMM_TUNE_RS_ROWS = 0, /* rows walked per group (0: chosen at launch) */
  COAL_SPMM_TUNE_RS_W = 1,    /* lanes per row (0: chosen at launch) */
  COAL_SPMM_TUNE_RS_UB = 2, /* 8: small matrices keep 8 elements of X in flight per lane, not 16 */
  COAL_SPMM_TUNE_RS_S = 3,  /* sub-groups sharing a row on small matrices, 1..8 (0: chosen) */
  COAL_SPMM_TUNE_MG_UB = 4, /* merge-based elements of X in flight per lane, 8 or 16 (0: 16
                               for k <= 32, else 8) */
  COAL_SPMM_TUNE_RS_LINE = 5,   /* row-split grid-line stride: 1 none, >= 2 this one at any k,
                                   also on small matrices (0: the matrix's, on large matrices at
                                   k >= 32, coal_mat_line_stride_compute) */
  COAL_SPMM_TUNE_RS_PLANE = 6,  /* row-split grid-plane stride: 1 none, >= 2 this one (with a
                                   forced line stride only, any k), 0: the matrix's (k <= 64) */
  COAL_SPMM_TUNE_RS_LONG = 7,   /* row-split rows longer than this many entries get a CTA each
                                   (>= 2), 1: none (0: the default threshold) */
  COAL_SPMM_TUNE_RS_OCC = 8,    /* row-split's large launch at 5 CTAs per SM: 1 never, 2 always
                                   (0: rows of mean < 8) */
  COAL_SPMM_TUNE_RS_FUSE = 9,   /* row-split long rows in the small launch's own CTAs: 1 never
                                   (a second launch), 0: when every long row is one segment */
  COAL_SPMM_TUNE_RS_WAVES = 10, /* small launches: 1 sub-groups from the longest row only, 0:
                                   fewer where they would need more waves of CTAs */
  COAL_SPMM_TUNE_RS_ROW64 = 11, /* row-split's large launch (not at 5 CTAs per SM) with 64-bit
                                   row numbers: 1 always, 2 never, 0: except at W = 8 */
  COAL_SPMM_TUNE_RS_NP = 12,    /* row-split's tiles of lines: planes a CTA takes at once, 2,
                                   4 or 8 (0: 4 for rows of mean >= 8, else 2) */
  COAL_SPMM_TUNE_NKNOBS = 13
};
coal_status coal_spmm_cuda_tune(int what, int value);

#ifdef __cplusplus
}
#endif
#endif
