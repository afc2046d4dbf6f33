/* Measurement support besides the public one. The timing and the cuSPARSE references of
 * `coalesce bench` (coal_bench_time, coal_bench_copy_bandwidth, coal_cuda_fastload_build_time,
 * coal_cusparse_spmv_* and coal_cusparse_spmm_*) are declared in coalesce.h, section
 * "benchmark support", and implemented by the backends (kernels/cuda/, src/bench_stub.c).
 * Declared here: the test hooks and the SpMM tuning knobs. CUDA-only parts answer
 * COAL_ERR_NOT_COMPILED in a host-only build (src/bench_stub.c). */
#ifndef COAL_KERNELS_BENCH_H
#define COAL_KERNELS_BENCH_H

#include "../src/internal.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/* Tuning knobs of the CUDA SpMM kernels, for measurements (bench/spmm_probe.c): process-wide,
 * value 0 = the default. RS_VEC = 1: row-split reads X one element per lane (no vector loads);
 * RS_ROWS = r: each row-split group walks r rows (interleaved over the CTA's groups; default 4
 * on large matrices, 1 on small ones); RS_W, RS_UB, RS_S, MG_UB: see the enum. A host-only build
 * answers COAL_ERR_NOT_COMPILED. */
enum {
  COAL_SPMM_TUNE_RS_VEC = 0,  /* 1: scalar X loads */
  COAL_SPMM_TUNE_RS_ROWS = 1, /* rows walked per group (0: chosen at launch) */
  COAL_SPMM_TUNE_RS_W = 2,    /* lanes per row (0: chosen at launch) */
  COAL_SPMM_TUNE_RS_UB = 3, /* 8: small matrices keep 8 elements of X in flight per lane, not 16 */
  COAL_SPMM_TUNE_RS_S = 4,  /* sub-groups sharing a row on small matrices, 1..8 (0: chosen) */
  COAL_SPMM_TUNE_MG_UB = 5, /* merge-based elements of X in flight per lane, 8 or 16 (0: 16
                               for k <= 32, else 8) */
  COAL_SPMM_TUNE_RS_LINE = 6,   /* row-split grid-line stride: 1 none, >= 2 this one at any k,
                                   also on small matrices (0: the matrix's, on large matrices at
                                   k >= 32, coal_mat_line_stride_compute) */
  COAL_SPMM_TUNE_RS_PLANE = 7,  /* row-split grid-plane stride: 1 none, >= 2 this one (with a
                                   forced line stride only, any k), 0: the matrix's (k <= 64) */
  COAL_SPMM_TUNE_RS_LONG = 8,   /* row-split rows longer than this many entries get a CTA each
                                   (>= 2), 1: none (0: the default threshold) */
  COAL_SPMM_TUNE_RS_OCC = 9,    /* row-split's large launch at 5 CTAs per SM: 1 never, 2 always
                                   (0: rows of mean < 8) */
  COAL_SPMM_TUNE_RS_FUSE = 10,  /* row-split long rows in the small launch's own CTAs: 1 never
                                   (a second launch), 0: when every long row is one segment */
  COAL_SPMM_TUNE_RS_WAVES = 11, /* small launches: 1 sub-groups from the longest row only, 0:
                                   fewer where they would need more waves of CTAs */
  COAL_SPMM_TUNE_RS_ROW64 = 12, /* row-split's large launch (not at 5 CTAs per SM) with 64-bit
                                   row numbers: 1 always, 2 never, 0: except at W = 8 */
  COAL_SPMM_TUNE_MG_W = 13,     /* merge-based lanes per group (1..32, a power of two) with
                                   every column tile in its own CTAs over gridDim.y, so the
                                   GPU walks X one slice of columns at a time (0: chosen) */
  COAL_SPMM_TUNE_RS_NP = 14,    /* row-split's tiles of lines: planes a CTA takes at once, 2,
                                   4 or 8 (0: 4 for rows of mean >= 8, else 2) */
  COAL_SPMM_TUNE_RS_SLICE = 15, /* row-split's large launch: 1 one tile of columns per CTA,
                                   the tiles over gridDim.y (0: two tiles a pass) */
  COAL_SPMM_TUNE_NKNOBS = 16
};
coal_status coal_spmm_cuda_tune(int what, int value);

#ifdef __cplusplus
}
#endif
#endif
