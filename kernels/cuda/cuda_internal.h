/* CUDA backend internals: context and matrix device state, error-checking macros, load
 * helpers shared by the kernels, and the declarations of the memory, residency and context
 * entries of the CUDA table. Included by the .cu files (C++) and by kernels/cuda/backend.c (C,
 * the table), so every declaration has C linkage. */
#ifndef COAL_CUDA_INTERNAL_H
#define COAL_CUDA_INTERNAL_H

/* Compiled as C (by the table's file) the CUDA headers are not system headers, and gcc warns
 * about the deprecated cuSPARSE types they declare. */
#if !defined(__CUDACC__) && defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>
#if !defined(__CUDACC__) && defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#include "../../src/backend.h"
#include "../spmm.h"
#include "../spmv.h"
#include "../fastload.h" /* the gather schedule's constants */
#include "../formats.h"
#include "spmm_tune.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Merge-path partition size, shared with the host twin (kernels/spmv.h). */
#define COAL_MERGE_TILE (COAL_MERGE_ITEMS_PER_THREAD * COAL_MERGE_THREADS)

/* Threads per CTA of the row and warp kernels. */
#define COAL_CUDA_CTA 256
/* Resident threads per SM of the architecture being compiled (for __launch_bounds__ minimum
 * CTA counts, which ptxas rejects when they exceed it). */
#if defined(__CUDA_ARCH__) &&                                                                      \
    (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 890 || __CUDA_ARCH__ >= 1200)
#define COAL_CUDA_THREADS_PER_SM 1536
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define COAL_CUDA_THREADS_PER_SM 1024
#else
#define COAL_CUDA_THREADS_PER_SM 2048
#endif
/* Instantiations of row-split's small kernel whose occupancy the context keeps: 2 value types
 * x 4 group widths x 3 vector widths x 2 layouts of X. */
#define COAL_CUDA_RS_RESIDENT_SLOTS 48

struct coal_cuda_ctx {
  int device;
  int sm_count;
  size_t l2_bytes;
  cudaStream_t stream;
  cusparseHandle_t sparse;
  cublasHandle_t blas;
  cudaEvent_t ev_start, ev_stop; /* bench timing */
  /* Workspaces of the dense block operations (kernels/cuda/blas.cu), grown when a call needs
   * more (never shrunk), freed with the context. Used in stream order only. */
  void *ws_small;       /* device: uploaded coefficients / column maps, Gram and norm results */
  size_t ws_small_cap;  /* bytes */
  double *ws_part;      /* device: per-CTA partial sums of the two-stage reductions */
  size_t ws_part_cap;   /* bytes */
  void *ws_pinned;      /* pinned host: staging of small results downloaded to the host */
  size_t ws_pinned_cap; /* bytes */
  /* Stream-ordered pool for the temporaries of multi-step operations and the results of the
   * sparse products (SpGEMM's C, P^T, A*P): allocation and release in stream order without a
   * device-wide wait; keeps up to a quarter of the device memory cached between calls
   * (COALESCE_POOL_KEEP_MB), handed back when a cudaMalloc runs out. NULL where the device
   * has no memory pools (plain cudaMalloc then). */
  cudaMemPool_t pool;
  /* SpMM tuning knobs (kernels/cuda/spmm_tune.h, coal_spmm_cuda_tune): 0 = the production
   * rule; only the probes and the tests set them, on their own contexts. */
  int spmm_tune[COAL_SPMM_TUNE_NKNOBS];
  /* CTAs of each instantiation of row-split's small kernel resident per SM on this device
   * (kernels/cuda/spmm_rowsplit.cu, small_resident): 0 until queried. */
  int spmm_rs_resident[COAL_CUDA_RS_RESIDENT_SLOTS];
};

/* Knob `what` of ctx's SpMM kernels (0: the production rule). */
static inline int coal_spmm_knob(coal_ctx ctx, int what) { return ctx->cuda->spmm_tune[what]; }

/* Device arrays mirroring a host coal_fastload (same meaning, same lengths), plus the gather
 * kernel's schedule, built once by coal_cuda_fastload_upload. */
struct coal_fastload_dev {
  int built;
  void *arena;     /* GPU build: every array below lives in this one allocation */
  double build_ms; /* GPU build: wall time of the build, allocations included (events) */
  int32_t nlanes, nother;
  int identity_perm;
  int64_t nnz;
  int32_t nblocks;
  int32_t *perm;
  int32_t *blk_ptr, *blk_col;
  uint8_t *blk_len, *blk_height, *blk_class;
  int32_t *idx;
  void *val;
  uint8_t *seg; /* scatter only */
  /* gather only: task[t] = first block of warp task t (bit 31: atomic lanes), task[ntasks]
   * = nblocks. prescale lists the rows set to beta*y before the gather: rows of lanes that
   * accumulate with atomics and rows with no entries (no block covers them). */
  int32_t ntasks;
  int32_t *task;
  int32_t nprescale;
  int32_t *prescale;
};

/* Row-split SpMM's long-row segments for one threshold (thr 0: none built): n CTAs, rows[c]
 * the row of CTA c and rows[n + c] its segment in the row. */
struct coal_spmm_segs {
  int32_t thr, n;
  int32_t *rows; /* [2*n] */
};
/* The entry COAL_FMT_CUDA_LONG_ROWS (structure only): the lists of the last two thresholds
 * (small and large launches of one matrix use different thresholds), most recent first. */
struct coal_long_rows_dev {
  struct coal_spmm_segs segs[2];
};

/* The entry COAL_FMT_CUDA_MERGE (structure only): merge-path coordinates where each CTA tile
 * starts and one carry-out per CTA, sized and computed at first use (spmv_merge.cu), shared by
 * the SpMV and SpMM kernels. */
struct coal_merge_dev {
  int32_t merge_ctas; /* CTA tiles */
  int32_t *merge_row; /* [merge_ctas+1] */
  int32_t *merge_nz;  /* [merge_ctas+1] */
  int32_t *carry_row; /* [merge_ctas] row still open at the tile end, -1 if none */
  double *carry_val;  /* [merge_ctas] its partial sum (double for both dtypes) */
  /* merge-based SpMM: carry-out sums of every CTA tile, [merge_ctas x spmm_carry_k] (double),
   * sized at first use for max(k, COAL_SPMM_CARRY_MIN_K) columns, grown only for a larger k */
  int64_t spmm_carry_k;
  double *spmm_carry;
};

/* A matrix's device CSR: made by mat_prepare (upload), or handed over by its producer
 * (coal_mat_wrap_device: a coal_calloc'd struct with coal_cuda_malloc'd CSR arrays, or
 * coal_cuda_pool_alloc'd ones with pooled = 1). Freed whole by mat_release, which first drops the
 * matrix's COAL_FORMAT_DEVICE cache entries (the kernels' device formats and workspaces,
 * kernels/formats.h). */
struct coal_mat_cuda {
  int pooled;      /* rowptr, colind and values come from the context's pool */
  int32_t *rowptr; /* [nrows+1] device CSR */
  int32_t *colind; /* [nnz] */
  void *values;    /* [nnz] */
};

/* Columns of X the merge SpMM carry buffer is first sized for (one allocation for k <= it). */
#define COAL_SPMM_CARRY_MIN_K 128

/* A failed call can leave its code as the thread's "last error" (cudaMalloc does); it is
 * cleared so that a later launch check does not report it again. Sticky errors stay. */
#define COAL_CUDA_CALL(ctx, expr)                                                                  \
  do {                                                                                             \
    cudaError_t coal_cu_err_ = (expr);                                                             \
    if (coal_cu_err_ != cudaSuccess) {                                                             \
      (void)cudaGetLastError();                                                                    \
      return COAL_ERROR((ctx),                                                                     \
                        coal_cu_err_ == cudaErrorMemoryAllocation ? COAL_ERR_DEVICE_MEMORY         \
                                                                  : COAL_ERR_CUDA,                 \
                        "%s: %s", #expr, cudaGetErrorString(coal_cu_err_));                        \
    }                                                                                              \
  } while (0)

/* After a kernel launch: launch-configuration errors surface here. */
#define COAL_CUDA_LAUNCH_CHECK(ctx) COAL_CUDA_CALL((ctx), cudaGetLastError())

#define COAL_CUSPARSE_CALL(ctx, expr)                                                              \
  do {                                                                                             \
    cusparseStatus_t coal_sp_err_ = (expr);                                                        \
    if (coal_sp_err_ != CUSPARSE_STATUS_SUCCESS)                                                   \
      return COAL_ERROR((ctx),                                                                     \
                        coal_sp_err_ == CUSPARSE_STATUS_ALLOC_FAILED ? COAL_ERR_DEVICE_MEMORY      \
                                                                     : COAL_ERR_CUDA,              \
                        "%s: %s", #expr, cusparseGetErrorString(coal_sp_err_));                    \
  } while (0)

#define COAL_CUBLAS_CALL(ctx, expr)                                                                \
  do {                                                                                             \
    cublasStatus_t coal_bl_err_ = (expr);                                                          \
    if (coal_bl_err_ != CUBLAS_STATUS_SUCCESS)                                                     \
      return COAL_ERROR((ctx), COAL_ERR_CUDA, "%s: cuBLAS status %d", #expr, (int)coal_bl_err_);   \
  } while (0)

static inline cudaStream_t coal_stream(coal_ctx ctx) { return ctx->cuda->stream; }

/* Number of CTAs of `per_cta` work items covering `work` items (work > 0). */
static inline unsigned coal_cuda_grid(int64_t work, int64_t per_cta) {
  return (unsigned)((work + per_cta - 1) / per_cta);
}

/* cudaMalloc that records the size on failure; bytes == 0 still gives a valid pointer. */
coal_status coal_cuda_malloc(coal_ctx ctx, size_t bytes, void **p);
/* cudaFree of a possibly NULL pointer; errors are dropped (used on cleanup paths). */
void coal_cuda_free(void *p);
/* Stream-ordered allocation from the context's pool (cudaMallocFromPoolAsync on its stream;
 * coal_cuda_malloc where the device has no pools), and its release (cudaFreeAsync on the
 * stream; NULL is ignored). Memory of one must go back through the other. */
coal_status coal_cuda_pool_alloc(coal_ctx ctx, size_t bytes, void **p);
void coal_cuda_pool_free(coal_ctx ctx, void *p);
/* Allocates *dst and queues the host -> device copy of a matrix's data (CSR, or a format built
 * on the host) on the stream without synchronising (the caller synchronises once, and the
 * source must live until then). The bytes count in ctx->stats.upload_bytes. */
coal_status coal_cuda_upload_new(coal_ctx ctx, void **dst, const void *src, size_t bytes);
/* A's device state (after mat_prepare), or COAL_ERR_STATE. */
coal_status coal_cuda_mat(coal_mat A, struct coal_mat_cuda **d);
/* A's device FastLoad format, built once on the GPU (coal_fastload_build_cuda) and kept in A's
 * cache (COAL_FMT_CUDA_FASTLOAD: scatter, COAL_FMT_CUDA_FASTLOAD_T: gather, with its warp
 * schedule). With the environment variable COALESCE_FASTLOAD_HOST_BUILD=1 (read at each build)
 * it builds the host format (coal_mat_fastload) and the schedule on the host and uploads them
 * instead. */
coal_status coal_cuda_fastload_upload(coal_mat A, int transposed,
                                      const struct coal_fastload_dev **out);
/* A's cache entry for the device FastLoad format, created empty (built = 0) when absent; an
 * existing one is returned as it is. */
coal_status coal_cuda_fastload_entry(coal_mat A, int transposed, struct coal_fastload_dev **out);
/* Builds A's scatter (transposed = 0: lanes = columns) or gather (1: lanes = rows) format
 * from A's device CSR on the context's stream, bit-identical to the host builder, with the
 * gather schedule; *out must hold nothing (it is overwritten). On failure nothing is kept. */
coal_status coal_fastload_build_cuda(coal_mat A, int transposed, struct coal_fastload_dev *out);
/* Releases a device format's arrays (GPU-built or uploaded) and zeroes it. */
void coal_cuda_fastload_dev_free(struct coal_fastload_dev *f);
/* A's merge-path state (COAL_FMT_CUDA_MERGE), computed once per structure on the stream
 * (kernels/cuda/spmv_merge.cu); shared by the SpMV and SpMM kernels. */
coal_status coal_cuda_merge_workspace(coal_mat A, struct coal_mat_cuda *d,
                                      struct coal_merge_dev **m);
/* Row-split SpMM's long rows (spmm_long.cu): Y += alpha*A*X on the rows of more than thr
 * entries only (a CTA per segment of such a row), with V-element loads of X (the row-split
 * kernel's v); after the row-split kernel has stored beta*Y on those rows. */
coal_status coal_spmm_long_rows_cuda(coal_mat A, struct coal_mat_cuda *d, int32_t thr, int v,
                                     double alpha, coal_bvec X, coal_bvec Y);
/* The segment list of the rows longer than thr (kept in A's COAL_FMT_CUDA_LONG_ROWS entry,
 * built once per threshold); coal_spmm_long_rows_cuda finds it itself. */
coal_status coal_spmm_long_rows_build(coal_mat A, struct coal_mat_cuda *d, int32_t thr,
                                      const struct coal_spmm_segs **segs);

/* Workspaces of the dense block operations (struct coal_cuda_ctx), grown when a call needs
 * more; growing synchronises the stream first (kernels/cuda/blas.cu). */
coal_status coal_ws_small(coal_ctx ctx, size_t bytes, void **p);
coal_status coal_ws_part(coal_ctx ctx, size_t count, double **p);
coal_status coal_ws_pinned(coal_ctx ctx, size_t bytes, void **p);
/* ---- entries of the CUDA table (kernels/cuda/backend.c; meaning: src/backend.h) ----------- */
/* context life cycle (kernels/cuda/context.cu) */
coal_status coal_ctx_init_cuda(coal_ctx ctx);
void coal_ctx_free_cuda(coal_ctx ctx);
int coal_device_count_cuda(void);
/* memory (kernels/cuda/ops.cu; host page-locking: context.cu) */
coal_status coal_mem_alloc_cuda(coal_ctx ctx, size_t bytes, void **p);
void coal_mem_release_cuda(coal_ctx ctx, void *p);
coal_status coal_mem_upload_cuda(coal_ctx ctx, void *dst, const void *src, size_t bytes);
coal_status coal_mem_download_cuda(coal_ctx ctx, void *dst, const void *src, size_t bytes);
coal_status coal_mem_copy_cuda(coal_ctx ctx, void *dst, const void *src, size_t bytes);
coal_status coal_mem_sync_cuda(coal_ctx ctx);
coal_status coal_mem_host_register_cuda(coal_ctx ctx, void *p, size_t bytes);
void coal_mem_host_unregister_cuda(void *p);
/* matrix residency (kernels/cuda/ops.cu) */
coal_status coal_mat_prepare_cuda(coal_mat A);
void coal_mat_release_cuda(coal_mat A);
coal_status coal_mat_download_cuda(coal_mat A, int32_t *rowptr, int32_t *colind, void *values);
coal_status coal_mat_wrap_cuda(coal_ctx ctx, int32_t nrows, int32_t ncols, int64_t nnz,
                               int32_t *rowptr, int32_t *colind, double *values, coal_mat *A);
coal_status coal_mat_csr_cuda(coal_mat A, const int32_t **rowptr, const int32_t **colind,
                              void **values);

#ifdef __cplusplus
}
#endif

#ifdef __CUDACC__
/* Matrix data is read exactly once per product: cache-streaming loads (ld.global.cs, evict-first
 * in L1 and L2) so that x, which is gathered repeatedly, keeps its place in L2. */
template <typename T> __device__ __forceinline__ T coal_ld_stream(const T *p) { return __ldcs(p); }
/* Read-only path for x and other reused data. */
template <typename T> __device__ __forceinline__ T coal_ld_ro(const T *p) { return __ldg(p); }

#define COAL_FULL_MASK 0xffffffffu
#endif

#endif
