/* Internal definitions shared by the core, the host backend and the CUDA backend. */
#ifndef COAL_INTERNAL_H
#define COAL_INTERNAL_H

#include "coalesce.h"
#include "coalesce_device.h" /* coal_bvec_view and the arrays of a context's memory */

#include <stdint.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- errors ------------------------------------------------------------------------------
 * COAL_CHECK raises: records "file:line (func): message" on the context and returns the code.
 * COAL_CALL propagates a failing status unchanged (the message is already recorded). */
coal_status coal_error_set(coal_ctx ctx, coal_status code, const char *file, int line,
                           const char *func, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;

#define COAL_ERROR(ctx, code, ...)                                                                 \
  coal_error_set((ctx), (code), __FILE__, __LINE__, __func__, __VA_ARGS__)

#define COAL_CHECK(ctx, cond, code, ...)                                                           \
  do {                                                                                             \
    if (!(cond)) return COAL_ERROR((ctx), (code), __VA_ARGS__);                                    \
  } while (0)

#define COAL_CALL(expr)                                                                            \
  do {                                                                                             \
    coal_status coal_call_st_ = (expr);                                                            \
    if (coal_call_st_ != COAL_SUCCESS) return coal_call_st_;                                       \
  } while (0)

/* Like COAL_CALL but jumps to a cleanup label after storing the status in `st`. */
#define COAL_CALL_GOTO(st, expr, label)                                                            \
  do {                                                                                             \
    (st) = (expr);                                                                                 \
    if ((st) != COAL_SUCCESS) goto label;                                                          \
  } while (0)

/* Host allocation helpers: they record COAL_ERR_MEMORY on the context. bytes == 0 returns a
 * valid (non-NULL) minimal allocation so callers need no special case. */
coal_status coal_malloc(coal_ctx ctx, size_t bytes, void **p);
coal_status coal_calloc(coal_ctx ctx, size_t bytes, void **p);
void coal_free(void *p);

static inline size_t coal_dtype_size(coal_dtype t) { return t == COAL_F32 ? 4 : 8; }

/* ---- context ------------------------------------------------------------------------- */
#define COAL_ERRMSG_LEN 1024

struct coal_cuda_ctx;    /* defined by the CUDA backend */
struct coal_backend_ops; /* the backend table (backend.h) */

struct coal_ctx_s {
  coal_backend backend;               /* resolved: HOST or CUDA */
  const struct coal_backend_ops *ops; /* its table, set once at creation (coal_backend(ctx)) */
  char errmsg[COAL_ERRMSG_LEN];
  char device_name[256];
  struct coal_cuda_ctx *cuda; /* stream, library handles, device properties */
  coal_device_stats stats;    /* residency counters (coal_device_stats_get): the backend adds */
};

/* ---- matrix -------------------------------------------------------------------------- */
enum { COAL_MEM_HOST = 1u, COAL_MEM_DEVICE = 2u };

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

struct coal_mat_cuda;                 /* device copies, defined by the CUDA backend */
typedef struct coal_swift coal_swift; /* Swift SpMM format, defined below */

struct coal_mat_s {
  coal_ctx ctx;
  int32_t nrows, ncols;
  int64_t nnz;
  coal_dtype dtype;
  /* Host CSR, made lazily. A matrix of a host context always has it (host-resident). A matrix
   * of a CUDA context may be device-resident only (coal_mat_wrap_device): rowptr, colind and
   * values are then NULL until coal_mat_host allocates them and downloads the device copy.
   * Once allocated they stay until destruction (the structure never changes); the values are
   * current on the host only while valid has COAL_MEM_HOST. Code that reads these arrays
   * calls coal_mat_host first (the host backend's kernels excepted: they only see matrices of
   * a host context). rowptr != NULL implies colind and values != NULL. */
  int32_t *rowptr; /* [nrows+1] */
  int32_t *colind; /* [nnz] sorted and unique within each row */
  void *values;    /* [nnz] dtype */
  unsigned valid;  /* COAL_MEM_* where the values are current (never 0; HOST only with rowptr,
                      DEVICE only with dev) */
  uint64_t state;  /* bumped on every value change */
  int symmetric;   /* 1: known exactly symmetric (generator, symmetric Matrix Market file);
                      0: unknown. Cleared when the values change. */
  int fastload_height;
  int32_t max_row_len;  /* longest row, -1 until computed (structure never changes) */
  int32_t line_stride;  /* grid-line stride of the ordering, 0 none, -1 until computed */
  int32_t plane_stride; /* grid-plane stride (with line_stride), 0 none */
  coal_fastload *fl;    /* scatter format (lanes = columns), built lazily */
  coal_fastload *flt;   /* gather format (lanes = rows), built lazily */
  int swift_height;     /* Swift block height limit; 0 = COAL_SWIFT_DEFAULT_HEIGHT */
  coal_swift *sw;       /* Swift SpMM format, built lazily */
  struct coal_mat_cuda *dev;
};

/* Creates a matrix object that takes ownership of host CSR arrays allocated with
 * coal_malloc (sorted, unique columns required: the caller guarantees it). */
coal_status coal_mat_wrap_csr(coal_ctx ctx, int32_t nrows, int32_t ncols, int32_t *rowptr,
                              int32_t *colind, void *values, coal_dtype dtype, coal_mat *A);
/* Builds sorted, duplicate-summed CSR from COO triples with double values; size checks
 * included. Does not free its inputs. */
coal_status coal_csr_from_coo(coal_ctx ctx, int64_t nrows, int64_t ncols, int64_t nnz,
                              const int32_t *ri, const int32_t *ci, const double *v,
                              coal_dtype dtype, coal_mat *A);
/* After a change of the host values (structure unchanged): drops the derived formats that hold
 * values, host and device; the device CSR structure and the structure-only arrays stay, and
 * valid becomes COAL_MEM_HOST, so the next mat.prepare uploads the values only. On a
 * device-only matrix (rowptr == NULL) there are no host values to have changed: it then only
 * drops the derived formats and bumps state (valid unchanged). */
void coal_mat_invalidate(coal_mat A);

/* ---- device-resident matrices ----------------------------------------------------------- */
/* New matrix of the CUDA context ctx that takes ownership of dev: a coal_calloc'd struct
 * coal_mat_cuda whose rowptr [nrows+1], colind [nnz] and values [nnz] (dtype) are device
 * arrays from coal_cuda_malloc holding a CSR with sorted, unique columns in each row (the
 * caller guarantees it; it is not checked), written in order before later work on the
 * context's stream. The host arrays stay NULL until coal_mat_host; valid = COAL_MEM_DEVICE.
 * On failure dev and its arrays are released and *A is NULL. */
coal_status coal_mat_wrap_device(coal_ctx ctx, int32_t nrows, int32_t ncols, int64_t nnz,
                                 coal_dtype dtype, struct coal_mat_cuda *dev, coal_mat *A);
/* Makes the host CSR current: allocates and downloads the structure and values of a
 * device-only matrix, or downloads the values when the device ones are newer. Two tests when
 * already current (always on a host context). Out of host memory: COAL_ERR_MEMORY, A
 * unchanged. */
coal_status coal_mat_host(coal_mat A);
/* The device values of A were rewritten (by a GPU kernel, structure unchanged): drops the
 * derived formats on both sides (FastLoad, Swift; the device CSR and merge-path arrays stay),
 * valid = COAL_MEM_DEVICE (host values, if any, are stale until coal_mat_host), symmetric = 0,
 * state++. The writes must be ordered before later work on the context's stream. Does nothing
 * on a matrix without a device copy. */
void coal_mat_device_values_changed(coal_mat A);

/* ---- FastLoad builder (host code shared by both backends) ------------------------------- */
/* Builds the format from a compressed-by-lane structure (ptr[nlanes+1], idx, val of dtype).
 * with_seg != 0 computes the segment runs (scatter kernel). */
coal_status coal_fastload_build(coal_ctx ctx, int32_t nlanes, int32_t nother, const int32_t *ptr,
                                const int32_t *idx, const void *val, coal_dtype dtype, int height,
                                int with_seg, coal_fastload **out);
void coal_fastload_free(coal_fastload *f);
/* Lazily builds and caches A->fl (transposed = 0) or A->flt (transposed = 1). */
coal_status coal_mat_fastload(coal_mat A, int transposed, const coal_fastload **f);

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
coal_status coal_swift_build(coal_ctx ctx, int32_t nrows, int32_t ncols, const int32_t *colptr,
                             const int32_t *rowidx, const void *val, coal_dtype dtype, int height,
                             coal_swift **out);
void coal_swift_free(coal_swift *s);
/* Lazily builds and caches A->sw. */
coal_status coal_mat_swift(coal_mat A, const coal_swift **s);

/* ---- block vector ---------------------------------------------------------------------- */
struct coal_bvec_s {
  coal_ctx ctx;
  int64_t n, k, ld;
  coal_dtype dtype;
  coal_layout layout;
  unsigned loc; /* COAL_MEM_HOST or COAL_MEM_DEVICE */
  void *data;
  int view; /* 1: data belongs to someone else (coal_bvec_view); destroy leaves it */
};

/* coal_bvec_view (coalesce_device.h): the solvers hand parts of their workspaces to SpMM and
 * to preconditioners as views. */

/* Index of `name` in names[0..n), or -1. */
int coal_name_lookup(const char *const *names, int n, const char *name);
/* Longest row of A, computed once and cached (the structure never changes). On a
 * device-only matrix the first call downloads the device rowptr (not the whole CSR). */
coal_status coal_mat_max_row_len_compute(coal_mat A, int32_t *len);
/* The rows of A with more than thr entries cut into segments of at most seg entries, in order:
 * *n segments, (*out)[q] the row of segment q and (*out)[*n + q] its index in the row
 * (coal_malloc'd, NULL when none). A device-only matrix downloads its row offsets. */
coal_status coal_mat_long_row_segments(coal_mat A, int32_t thr, int32_t seg, int32_t **out,
                                       int32_t *n);
/* The same value without a status, for the kernel selectors: -1 if computing it failed (the
 * error is recorded on the context). The front ends (coal_spmv_raw, coal_spmm) call
 * coal_mat_max_row_len_compute first, so a failure propagates from them. */
int32_t coal_mat_max_row_len(coal_mat A);
/* Stride of the grid lines of a structured-grid ordering (the most frequent least column
 * offset >= COAL_LINE_MIN of sampled rows, when at least half of them share it), 0 if none;
 * computed once from the structure and cached (a device-only matrix downloads its structure
 * for it). Row-split SpMM walks such lines in tiles (spmm_rowsplit.cu). */
#define COAL_LINE_MIN 8
coal_status coal_mat_line_stride_compute(coal_mat A, int32_t *stride);
/* The same for the selectors: 0 if computing it failed (the error is recorded on the context;
 * coal_spmm computes it first for large matrices, so a failure propagates from there). */
int32_t coal_mat_line_stride(coal_mat A);
/* The plane stride found with the line stride (the midpoint of the least and greatest column
 * offsets >= twice the line stride, under the same majority rule), 0 if none. */
coal_status coal_mat_plane_stride_compute(coal_mat A, int32_t *stride);

/* Stable sort of lanes 0..n-1 by entry count ptr[l+1]-ptr[l], descending: perm[s] is the lane
 * at sorted position s. O(n + max count). */
coal_status coal_sort_by_count_desc(coal_ctx ctx, int32_t n, const int32_t *ptr, int32_t *perm);
/* qsort comparator of int32_t, ascending. */
int coal_cmp_i32(const void *a, const void *b);

#ifdef __cplusplus
}
#endif
#endif
