/* CUDA backend internals: context and matrix device state, error-checking macros. */
#ifndef COAL_CUDA_INTERNAL_H
#define COAL_CUDA_INTERNAL_H

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include "../../src/backend.h"

struct coal_cuda_ctx {
  int device;
  int sm_count;
  size_t l2_bytes;
  cudaStream_t stream;
  cusparseHandle_t sparse;
  cublasHandle_t blas;
  cudaEvent_t ev_start, ev_stop; /* bench timing */
};

/* Device arrays mirroring a host coal_fastload (same meaning, same lengths). */
struct coal_fastload_dev {
  int built;
  int32_t nblocks;
  int32_t *perm;
  int32_t *blk_ptr, *blk_col;
  uint8_t *blk_len, *blk_height, *blk_class;
  int32_t *idx;
  void *val;
  uint8_t *seg;
  int32_t nsplit;
  int32_t *split;
};

struct coal_mat_cuda {
  int32_t *rowptr; /* [nrows+1] device CSR */
  int32_t *colind; /* [nnz] */
  void *values;    /* [nnz] */
  struct coal_fastload_dev fl, flt;
  /* merge-path partition starts, sized at first use and kept */
  int32_t nparts;
  int32_t *part_row;
  int32_t *part_nz;
  void *carry_val; /* [nparts] partial sums of rows that cross a partition end */
  int32_t *carry_row;
};

#define COAL_CUDA_CALL(ctx, expr)                                                              \
  do {                                                                                         \
    cudaError_t coal_cu_err_ = (expr);                                                         \
    if (coal_cu_err_ != cudaSuccess)                                                           \
      return COAL_ERROR((ctx),                                                                 \
                        coal_cu_err_ == cudaErrorMemoryAllocation ? COAL_ERR_DEVICE_MEMORY     \
                                                                  : COAL_ERR_CUDA,             \
                        "%s: %s", #expr, cudaGetErrorString(coal_cu_err_));                    \
  } while (0)

/* After a kernel launch: launch-configuration errors surface here. */
#define COAL_CUDA_LAUNCH_CHECK(ctx) COAL_CUDA_CALL((ctx), cudaGetLastError())

#define COAL_CUSPARSE_CALL(ctx, expr)                                                          \
  do {                                                                                         \
    cusparseStatus_t coal_sp_err_ = (expr);                                                    \
    if (coal_sp_err_ != CUSPARSE_STATUS_SUCCESS)                                               \
      return COAL_ERROR((ctx), COAL_ERR_CUDA, "%s: %s", #expr,                                 \
                        cusparseGetErrorString(coal_sp_err_));                                 \
  } while (0)

#define COAL_CUBLAS_CALL(ctx, expr)                                                            \
  do {                                                                                         \
    cublasStatus_t coal_bl_err_ = (expr);                                                      \
    if (coal_bl_err_ != CUBLAS_STATUS_SUCCESS)                                                 \
      return COAL_ERROR((ctx), COAL_ERR_CUDA, "%s: cuBLAS status %d", #expr, (int)coal_bl_err_); \
  } while (0)

static inline cudaStream_t coal_stream(coal_ctx ctx) { return ctx->cuda->stream; }

#endif
