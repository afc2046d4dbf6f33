/* The Swift SpMM format ([SWIFT]): its struct, the host builder (kernels/host/swift_build.c,
 * coal_swift_build_host; the CUDA backend uploads it, kernels/cuda/spmm_swift.cu) and the
 * matrix's lazily built format. */
#ifndef COAL_KERNELS_SWIFT_H
#define COAL_KERNELS_SWIFT_H

#include "../src/internal.h"
#include "formats.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Swift SpMM format ([SWIFT], section IV) ------------------------------------------
 * Built from CSC (lanes = columns of A) in O(nnz + n); host code shared by both backends.
 *
 * Columns are sorted by nonzero count, descending and stable: sorted position s holds column
 * perm[s] (the row of X that lane s reads). The sorted columns are cut into warp groups of 32
 * consecutive positions; a full group g (positions [32g, 32g+32)) has a regular height R_g =
 * the count of its last (shortest) column, and rounds [0, R_g) of its 32 columns form the
 * regular part. Everything else is the irregular part: the entries of each column beyond
 * its group's R_g (all entries of the last, partial group, whose R is 0). This is the
 * paper's layered cutting (a layer keeps 32*floor(width/32) columns regular, the remainder
 * goes to the residual) written per group; sorting descending puts the residual of the
 * longest columns first and the partial group last.
 *
 * Regular blocks: the rounds [0, R_g) of a group are cut into blocks of at most height_limit
 * rounds (COAL_SWIFT_MAX_HEIGHT at most, so that a CTA group fits shared memory). A block has
 * exactly 32 lanes and h = (blk_ptr[b+1] - blk_ptr[b]) / 32 rounds; element (round r, lane l)
 * is reg_val[blk_ptr[b] + 32*r + l], lane l being sorted column blk_col[b] + l. No padding:
 * every block element is a nonzero. The blocks of a group are consecutive, rounds ascending.
 *
 * CTA groups (segment sums, paper Fig. 7 and Algorithm 2): CTA group c owns the blocks
 * [8c, min(8c+8, nblocks)) and therefore the elements and slots [blk_ptr[8c], blk_ptr[end]).
 * Its elements are sorted by row of A (stable in element order); reg_pos[e] is the slot of
 * element e counted from the group's first element (the paper's positionIdx: the kernel
 * writes val*x to shared[reg_pos[e]]). Slot arrays are indexed by group base + slot:
 * slot_row holds the row of the slot (non-decreasing inside a group) and slot_seg the
 * segment length at the first slot of each run of equal rows, 0 at the other slots (the
 * paper's offsetIdx, stored as a length: the head sums shared[slot .. slot+len) and makes one
 * atomic add to Y[row, j]). nsegments is the number of heads, i.e. the regular atomics per
 * column of X. Slots per group are at most 8*32*height_limit <= 8192, so uint16 suffices.
 *
 * Irregular part (paper Algorithm 3): the residual columns, in sorted order, in CSC arrays
 * (irr_col, irr_ptr, irr_row, irr_val; rows ascending within a column), cut into sub-blocks
 * of at most 32 consecutive entries of one column: a warp per sub-block, a lane per entry,
 * one atomic per entry and column of X (a column holds each row once). irr_blk_col is the
 * original column (row of X); irr_blk_start/stop index irr_row and irr_val. */
#define COAL_SWIFT_WARP           32
#define COAL_SWIFT_CTA_BLOCKS     8 /* blocks per CTA group, as in the paper (32 x 8 threads) */
#define COAL_SWIFT_DEFAULT_HEIGHT 8
#define COAL_SWIFT_MAX_HEIGHT     32

typedef struct coal_swift coal_swift;
struct coal_swift {
  int32_t nrows, ncols; /* of A */
  int32_t height_limit;
  int identity_perm; /* perm[s] == s for every s */
  int32_t *perm;     /* [ncols] original column of sorted position s */
  /* regular part */
  int32_t nblocks;
  int32_t *blk_ptr;   /* [nblocks+1] first element of each block; blk_ptr[nblocks] = nreg */
  int32_t *blk_col;   /* [nblocks] first sorted column, a multiple of 32 */
  int64_t nreg;       /* regular elements */
  void *reg_val;      /* [nreg] values, the matrix dtype */
  uint16_t *reg_pos;  /* [nreg] slot of the element within its CTA group */
  int32_t ncta;       /* CTA groups: ceil(nblocks / COAL_SWIFT_CTA_BLOCKS) */
  int32_t *slot_row;  /* [nreg] row of A of each slot */
  uint16_t *slot_seg; /* [nreg] run length at a segment head, 0 elsewhere */
  int64_t nsegments;  /* segment heads (regular atomics per column of X) */
  /* irregular part */
  int32_t irr_ncols;
  int32_t *irr_col; /* [irr_ncols] original column ids, in sorted order */
  int32_t *irr_ptr; /* [irr_ncols+1] */
  int64_t nirr;
  int32_t *irr_row; /* [nirr] */
  void *irr_val;    /* [nirr] */
  int32_t irr_nblk;
  int32_t *irr_blk_col;   /* [irr_nblk] original column (row of X) */
  int32_t *irr_blk_start; /* [irr_nblk] first entry in irr_row / irr_val */
  int32_t *irr_blk_stop;  /* [irr_nblk] one past the last; 1..32 entries */
  double build_seconds;
};

/* Builds the format from CSC (colptr[ncols+1], rowidx, val of dtype) with block height limit
 * height (1..COAL_SWIFT_MAX_HEIGHT). */
coal_status coal_swift_build_host(coal_ctx ctx, int32_t nrows, int32_t ncols, const int32_t *colptr,
                                  const int32_t *rowidx, const void *val, coal_dtype dtype,
                                  int height, coal_swift **out);
void coal_swift_free(coal_swift *s);
/* A's format, built at first use and kept in A's cache (COAL_FMT_SWIFT). */
coal_status coal_mat_swift(coal_mat A, const coal_swift **s);

/* Block height limit of A's Swift format (coal_mat_set_swift_height). */
static inline int coal_swift_height(coal_mat A) {
  return coal_mat_setting(A, COAL_FMT_SWIFT_HEIGHT, COAL_SWIFT_DEFAULT_HEIGHT);
}

#ifdef __cplusplus
}
#endif
#endif
