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

struct coal_mat_cuda;     /* device copies, defined by the CUDA backend */
struct coal_format_entry; /* the derived-format cache (below) */

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
  int32_t *rowptr;      /* [nrows+1] */
  int32_t *colind;      /* [nnz] sorted and unique within each row */
  void *values;         /* [nnz] dtype */
  unsigned valid;       /* COAL_MEM_* where the values are current (never 0; HOST only with rowptr,
                           DEVICE only with dev) */
  uint64_t state;       /* bumped on every value change */
  int symmetric;        /* 1: known exactly symmetric (generator, symmetric Matrix Market file);
                           0: unknown. Cleared when the values change. */
  int32_t max_row_len;  /* longest row, -1 until computed (structure never changes) */
  int32_t line_stride;  /* grid-line stride of the ordering, 0 none, -1 until computed */
  int32_t plane_stride; /* grid-plane stride (with line_stride), 0 none */
  /* What the kernels derive from the matrix (formats, schedules, workspaces, their settings),
   * keyed entries of one cache (coal_mat_format_*): no field here belongs to one kernel. */
  struct coal_format_entry *formats;
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
/* Generator helpers (src/generators.c), shared with src/gen_elast.c: the output and dtype
 * checked (*A = NULL); CSR arrays for n rows and nnz entries (rp[0] = 0; nothing left on
 * failure); entry p of a value array of dtype. */
coal_status coal_gen_check_out(coal_ctx ctx, coal_dtype dtype, coal_mat *A);
coal_status coal_gen_alloc_csr(coal_ctx ctx, int64_t n, int64_t nnz, coal_dtype dtype, int32_t **rp,
                               int32_t **ci, void **v);
void coal_gen_store(void *v, coal_dtype dtype, int64_t p, double x);
/* mat.asymmetry's twins (kernels/host/mat_symmetry.c, kernels/cuda/mat_symmetry.cu). */
coal_status coal_mat_asymmetry_host(coal_mat A, double tol, int64_t *row, int64_t *col);
coal_status coal_mat_asymmetry_cuda(coal_mat A, double tol, int64_t *row, int64_t *col);

/* ---- derived formats: one cache per matrix ---------------------------------------------- *
 * Kernels hang what they derive from a matrix (a format, a schedule, a workspace, a setting of
 * theirs) on it as an entry: a key (an int the kernels define, kernels/formats.h; the core does
 * not interpret it), flags that say when the entry is dropped, the data and the function that
 * frees it. The core drops the entries with COAL_FORMAT_VALUES when the values change
 * (coal_mat_invalidate, coal_mat_device_values_changed), the backend drops those with
 * COAL_FORMAT_DEVICE with the device copy (mat.release), coal_mat_destroy drops every one.
 * Entries without either flag (structure-only host data, settings) live as long as the matrix.
 * A lookup walks a list of a few entries: no cost next to a product. */
enum {
  COAL_FORMAT_VALUES = 1u, /* holds (or is derived from) the values */
  COAL_FORMAT_DEVICE = 2u, /* holds device memory of the matrix's device copy */
};
typedef void (*coal_format_free_fn)(coal_ctx ctx, void *data);
/* The data of A's entry key, NULL when there is none. */
void *coal_mat_format_get(coal_mat A, int key);
/* Stores data under key (replacing and freeing an entry of that key). free_fn (may be NULL:
 * nothing to free) releases data when the entry is dropped. Out of host memory: data is freed
 * at once and COAL_ERR_MEMORY returned. */
coal_status coal_mat_format_put(coal_mat A, int key, unsigned flags, void *data,
                                coal_format_free_fn free_fn);
/* Drops and frees the entry of key (nothing if none). */
void coal_mat_format_drop_key(coal_mat A, int key);
/* Drops and frees every entry whose flags share a bit with mask. */
void coal_mat_format_drop(coal_mat A, unsigned mask);
/* An int setting of a kernel stored in the cache (flags 0: kept until destruction), def while
 * unset. */
int coal_mat_setting(coal_mat A, int key, int def);
coal_status coal_mat_setting_set(coal_mat A, int key, int value);

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
