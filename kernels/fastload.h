/* The FastLoad format ([FASTLOAD]): its struct, the host builder (kernels/host/fastload_build.c,
 * coal_fastload_build_host, whose twin on the GPU is kernels/cuda/fastload_build.cu,
 * coal_fastload_build_cuda) and the matrix's lazily built host formats. */
#ifndef COAL_KERNELS_FASTLOAD_H
#define COAL_KERNELS_FASTLOAD_H

#include "../src/internal.h"
#include "formats.h"

#ifdef __cplusplus
extern "C" {
#endif

/* FastLoad format ([FASTLOAD]). Built from a compressed-by-lane structure: for the scatter
 * kernel the lanes are the columns of A (CSC), for the transposed (gather) kernel the lanes
 * are the rows of A (CSR).
 *
 * Lanes (columns) are sorted by nonzero count, descending, stable: sorted position s holds
 * lane perm[s]. Consecutive groups of 32 sorted lanes are cut into rectangular blocks: a block
 * covers lanes [col, col+len) of its group and rounds [r0, r0+height) of each of them, where
 * every lane in the block has at least r0+height entries (counts are non-increasing inside a
 * group, so the active lanes of a round are a prefix) and height <= H. Blocks therefore carry
 * no padding. Element (round r, lane l) of a block sits at blk_ptr + r*len + l ("zigzag").
 * For each element, idx holds the other index (the row of A for scatter, the column of A for
 * gather) and val the value. seg holds, for the scatter kernel's segment sum, the number of
 * lanes from this one to the end of its run of equal idx within the same round (1..32); the
 * first lane of a run (lane 0, or idx differs from the lane before) is its head and adds the
 * run's sum to y[idx] (one atomic). Every group's blocks start at its first sorted lane, so
 * blk_col is a multiple of 32. The gather format has no seg; its base class is always
 * DISTINCT (every lane is its own row of A), plus the PARTIAL and COMPLETE flags. */
enum {
  COAL_FL_DISTINCT = 0,  /* every element of each round has its own row: plain atomics */
  COAL_FL_ONE_ROW = 1,   /* one round, all lanes share one row: warp reduction, 1 atomic */
  COAL_FL_SEGMENTED = 2, /* runs of equal rows inside rounds: segment sums, atomics at heads */
  COAL_FL_PARTIAL = 4,   /* flag: fewer than 32 lanes */
  COAL_FL_COMPLETE = 8,  /* gather: every lane's whole row lies in this block (r0 == 0 and
                            each lane has exactly height entries): plain store, no atomic */
};

typedef struct coal_fastload {
  int32_t nlanes; /* columns of A (scatter) or rows of A (gather) */
  int32_t nother; /* rows of A (scatter) or columns of A (gather) */
  int32_t height_limit;
  int identity_perm; /* perm[s] == s for every s: the kernel skips the gather/scatter map */
  int32_t *perm;     /* [nlanes] original lane index of sorted position s */
  int32_t nblocks;
  int32_t *blk_ptr;    /* [nblocks] first element of the block */
  int32_t *blk_col;    /* [nblocks] first sorted lane */
  uint8_t *blk_len;    /* [nblocks] lanes, 1..32 */
  uint8_t *blk_height; /* [nblocks] rounds, 1..H */
  uint8_t *blk_class;  /* [nblocks] COAL_FL_* */
  int64_t nnz;
  int32_t *idx;     /* [nnz] row of A (scatter) / column of A (gather) */
  void *val;        /* [nnz] values, the matrix dtype */
  uint8_t *seg;     /* [nnz] scatter only: run length remaining in the round (1..32) */
  int32_t nsplit;   /* gather: rows not stored whole by one COMPLETE block, i.e. rows in
                       non-complete blocks, and empty rows (in no block at all) */
  int32_t *split;   /* [nsplit] original row ids, ascending: the kernel first sets
                       y = beta*y there (0 if beta == 0), then non-complete blocks add */
  int64_t natomics; /* atomics per product: scatter, run heads; gather, the (lane, block)
                       pairs of non-complete blocks */
  double build_seconds;
} coal_fastload;

/* Gather (FastLoad-T) schedule of the CUDA kernel: one warp runs consecutive blocks of one
 * 32-lane group up to COAL_FLT_TASK_ROUNDS rounds in total; a group that fits is finished by one
 * warp (plain stores). Built on the GPU by coal_fastload_build_cuda (kernels/cuda/
 * fastload_build.cu) and by its host twin coal_fastload_schedule_host, which defines it:
 * task[t] = first block of warp task t (bit 31, COAL_FLT_TASK_ATOMIC: the task's lanes add with
 * atomics), task[ntasks] = nblocks; prescale lists the rows set to beta*y before the gather
 * (original row ids). *task and *prescale are coal_malloc'd. */
#define COAL_FLT_TASK_ROUNDS 32
#define COAL_FLT_TASK_ATOMIC 0x80000000u
coal_status coal_fastload_schedule_host(coal_ctx ctx, const coal_fastload *f, int32_t **task,
                                        int32_t *ntasks, int32_t **prescale, int32_t *nprescale);

/* Block height limit of A's FastLoad formats (coal_mat_set_fastload_height; default 8). */
#define COAL_FASTLOAD_DEFAULT_HEIGHT 8
static inline int coal_fastload_height(coal_mat A) {
  return coal_mat_setting(A, COAL_FMT_FASTLOAD_HEIGHT, COAL_FASTLOAD_DEFAULT_HEIGHT);
}

/* Builds the format from a compressed-by-lane structure (ptr[nlanes+1], idx, val of dtype).
 * with_seg != 0 computes the segment runs (scatter kernel). */
coal_status coal_fastload_build_host(coal_ctx ctx, int32_t nlanes, int32_t nother,
                                     const int32_t *ptr, const int32_t *idx, const void *val,
                                     coal_dtype dtype, int height, int with_seg,
                                     coal_fastload **out);
void coal_fastload_free(coal_fastload *f);
/* A's host format, built at first use and kept in A's cache (COAL_FMT_FASTLOAD: scatter,
 * transposed = 0; COAL_FMT_FASTLOAD_T: gather, transposed = 1). */
coal_status coal_mat_fastload(coal_mat A, int transposed, const coal_fastload **f);

#ifdef __cplusplus
}
#endif
#endif
