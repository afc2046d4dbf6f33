/* Tuning knobs of the CUDA SpMM kernels, for the probes (bench/spmm_probe.c) and the tests that
 * force a variant (tests/test_spmm_cuda.c). Plain C.
 *
 * The knobs are fields of the CUDA context (struct coal_cuda_ctx, spmm_tune[]), zero at its
 * creation; the kernels read them from the context of the matrix they work on. Value 0 is the
 * production rule, so a context nobody tunes runs exactly the launches the rules choose, and a
 * knob set on one context changes the products of that context's matrices only. Each knob
 * forces one of the variants that the production rules themselves choose between. */
#ifndef COAL_CUDA_SPMM_TUNE_H
#define COAL_CUDA_SPMM_TUNE_H

#include "../../src/coalesce.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
  COAL_SPMM_TUNE_RS_ROWS = 0,   /* row-split: rows walked per group, interleaved over the CTA's
                                   groups (0: chosen at launch: 4 on large matrices, 8 over grid
                                   lines from k = 64, else 1) */
  COAL_SPMM_TUNE_RS_W = 1,      /* row-split: lanes per row (0: chosen at launch) */
  COAL_SPMM_TUNE_RS_UB = 2,     /* row-split: 8 = small matrices take the large launch (8 elements
                                   of X in flight per lane, not 16) */
  COAL_SPMM_TUNE_RS_S = 3,      /* row-split: sub-groups sharing a row on small matrices, 1..8
                                   (0: chosen) */
  COAL_SPMM_TUNE_MG_UB = 4,     /* merge-based: elements of X in flight per lane, 8 or 16 (0: 16
                                   for k <= 32, else 8) */
  COAL_SPMM_TUNE_RS_LINE = 5,   /* row-split grid-line stride: 1 none, >= 2 this one at any k, also
                                   on small matrices (0: the matrix's, on large matrices at
                                   k >= 32, coal_mat_line_stride_compute) */
  COAL_SPMM_TUNE_RS_PLANE = 6,  /* row-split grid-plane stride: 1 none, >= 2 this one (with a
                                   forced line stride only, any k), 0: the matrix's (k <= 64) */
  COAL_SPMM_TUNE_RS_LONG = 7,   /* row-split: rows longer than this many entries get a CTA each
                                   (>= 2), 1: none (0: the default threshold) */
  COAL_SPMM_TUNE_RS_OCC = 8,    /* row-split's large launch at 5 CTAs per SM: 1 never, 2 always
                                   (0: rows of mean < 8) */
  COAL_SPMM_TUNE_RS_FUSE = 9,   /* row-split long rows in the small launch's own CTAs: 1 never
                                   (a second launch), 0: when every long row is one segment */
  COAL_SPMM_TUNE_RS_WAVES = 10, /* row-split small launches: 1 sub-groups from the longest row
                                   only, 0: fewer where they would need more waves of CTAs */
  COAL_SPMM_TUNE_RS_ROW64 = 11, /* row-split's large launch (not at 5 CTAs per SM) with 64-bit
                                   row numbers: 1 always, 2 never, 0: except at W = 8 */
  COAL_SPMM_TUNE_RS_NP = 12,    /* row-split's tiles of lines: planes a CTA takes at once, 2, 4
                                   or 8 (0: 4 for rows of mean >= 8, else 2) */
  COAL_SPMM_TUNE_NKNOBS = 13
};

/* Sets knob `what` of ctx's CUDA SpMM kernels to value (0: the production rule). COAL_ERR_ARG
 * for a context without the CUDA backend, an unknown knob or a negative value; a build without
 * CUDA does not define it (the probe and the cuda tests using it are built with CUDA only). */
coal_status coal_spmm_cuda_tune(coal_ctx ctx, int what, int value);

#ifdef __cplusplus
}
#endif
#endif
