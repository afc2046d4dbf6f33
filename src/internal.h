/* Internal definitions shared by the core, the host backend and the CUDA backend. */
#ifndef COAL_INTERNAL_H
#define COAL_INTERNAL_H

#include "coalesce.h"

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

struct coal_cuda_ctx; /* defined by the CUDA backend */

struct coal_ctx_s {
  coal_backend backend; /* resolved: HOST or CUDA */
  char errmsg[COAL_ERRMSG_LEN];
  char device_name[256];
  struct coal_cuda_ctx *cuda; /* stream, library handles, device properties */
};

/* ---- matrix -------------------------------------------------------------------------- */
enum { COAL_MEM_HOST = 1u, COAL_MEM_DEVICE = 2u };

/* FastLoad format (paper 003). Built from a compressed-by-lane structure: for the scatter
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

struct coal_mat_cuda; /* device copies, defined by the CUDA backend */

struct coal_mat_s {
  coal_ctx ctx;
  int32_t nrows, ncols;
  int64_t nnz;
  coal_dtype dtype;
  int32_t *rowptr; /* [nrows+1] host CSR, always valid */
  int32_t *colind; /* [nnz] sorted and unique within each row */
  void *values;    /* [nnz] dtype */
  unsigned valid;  /* COAL_MEM_* where the values are current */
  uint64_t state;  /* bumped on every value change */
  int fastload_height;
  coal_fastload *fl;  /* scatter format (lanes = columns), built lazily */
  coal_fastload *flt; /* gather format (lanes = rows), built lazily */
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
/* Drops derived formats and device copies after a value change (structure unchanged). */
void coal_mat_invalidate(coal_mat A);

/* ---- FastLoad builder (host code shared by both backends) ------------------------------- */
/* Builds the format from a compressed-by-lane structure (ptr[nlanes+1], idx, val of dtype).
 * with_seg != 0 computes the segment runs (scatter kernel). */
coal_status coal_fastload_build(coal_ctx ctx, int32_t nlanes, int32_t nother, const int32_t *ptr,
                                const int32_t *idx, const void *val, coal_dtype dtype, int height,
                                int with_seg, coal_fastload **out);
void coal_fastload_free(coal_fastload *f);
/* Lazily builds and caches A->fl (transposed = 0) or A->flt (transposed = 1). */
coal_status coal_mat_fastload(coal_mat A, int transposed, const coal_fastload **f);

/* ---- block vector ---------------------------------------------------------------------- */
struct coal_bvec_s {
  coal_ctx ctx;
  int64_t n, k, ld;
  coal_dtype dtype;
  coal_layout layout;
  unsigned loc; /* COAL_MEM_HOST or COAL_MEM_DEVICE */
  void *data;
};

/* Deterministic uniform [-1,1) value number i of stream `seed` (splitmix64). */
double coal_random_uniform(uint64_t seed, uint64_t i);

#ifdef __cplusplus
}
#endif
#endif
