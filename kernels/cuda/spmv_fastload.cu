/* FastLoad SpMV ([FASTLOAD], section IV) on the format documented in kernels/fastload.h.
 *
 * Scatter (coal_spmv_fastload_cuda, lanes = columns of A): the paper's kernel. y is
 * first scaled by beta; then a warp per block: lane l owns sorted column blk_col+l, loads
 * x of that column once (coalesced when the permutation is the identity), and for every
 * round multiplies its element (coalesced "zigzag" load at blk_ptr + r*len + l) and adds the
 * product into y[row] by the block's class: ONE_ROW (warp sum, one atomic), SEGMENTED
 * (segmented suffix sums over the runs of equal rows given by seg, one atomic per run),
 * DISTINCT (one atomic per lane).
 * Traffic: nnz*(sizeof(T)+4 [+1 seg]) streamed, x read once per column (sizeof(T)*ncols),
 * y read+written by the scaling and then updated by atomics in L2.
 *
 * Gather (coal_spmv_fastload_t_cuda, lanes = rows of A): lane l accumulates its row
 * over the rounds with coalesced val/idx loads and gathers of x. The warp schedule made
 * with the format (coal_fastload_schedule_host) lets one warp run consecutive blocks of a 32-row
 * group: a group finished by one warp is stored without atomics (y = alpha*sum + beta*y,
 * beta == 0: no read); longer groups are split over warps that add with atomics into rows
 * that were pre-scaled to beta*y (as were rows with no entries).
 * Traffic: nnz*(sizeof(T)+4) streamed, 4*nrows of permutation, x gathered, y written once
 * (read when beta != 0) for stored rows, block descriptors ~11 bytes per 32 rows.
 */
#include "../fastload.h"
#include "cuda_internal.h"

namespace {

/* Gather rounds whose loads are issued together (independent loads in flight per lane); 4 was
 * slower than 8 (bench/RESULTS.md, rule flt-tuning). */
#ifndef COAL_FLT_UNROLL
#define COAL_FLT_UNROLL 8
#endif
/* Gather tasks per warp (1..31). Several amortise the schedule and descriptor loads but run
 * their blocks one after the other; 1 was fastest, so it is the default (bench/RESULTS.md,
 * rule flt-tuning). */
#ifndef COAL_FLT_TASKS_PER_WARP
#define COAL_FLT_TASKS_PER_WARP 1
#endif
/* Gather CTAs per SM asked of the register allocator: 8 x 256 threads = full occupancy (32
 * registers, no spills in fp64): many warps in flight hide the chain of dependent loads
 * (schedule -> descriptors -> val/idx -> x); 64 registers were much slower
 * (bench/RESULTS.md, rule flt-tuning). */
#ifndef COAL_FLT_MIN_CTAS
#define COAL_FLT_MIN_CTAS (COAL_CUDA_THREADS_PER_SM / COAL_CUDA_CTA)
#endif
/* fp32 (double sums, conversions) needs 40 registers to stay free of spills: 6 CTAs per SM */
#ifndef COAL_FLT_MIN_CTAS_F32
#define COAL_FLT_MIN_CTAS_F32 (COAL_FLT_MIN_CTAS < 6 ? COAL_FLT_MIN_CTAS : 6)
#endif
constexpr int kScatterUnroll = 4;
constexpr int kGatherUnroll = COAL_FLT_UNROLL;
constexpr int kFltTasksPerWarp = COAL_FLT_TASKS_PER_WARP;
template <typename T>
constexpr int kGatherMinCtas = sizeof(T) == 8 ? COAL_FLT_MIN_CTAS : COAL_FLT_MIN_CTAS_F32;

template <typename T> __global__ void scale_kernel(int32_t n, T *__restrict__ y, double beta) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    y[i] = beta == 0.0 ? T(0) : (T)(beta * (double)y[i]);
}

template <typename T>
__global__ void scale_list_kernel(int32_t n, const int32_t *__restrict__ rows, T *__restrict__ y,
                                  double beta) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    const int32_t r = rows[i];
    y[r] = beta == 0.0 ? T(0) : (T)(beta * (double)y[r]);
  }
}

template <typename T, bool IDENT>
__global__ __launch_bounds__(COAL_CUDA_CTA) void scatter_kernel(
    int32_t nblocks, const int32_t *__restrict__ blk_ptr, const int32_t *__restrict__ blk_col,
    const uint8_t *__restrict__ blk_len, const uint8_t *__restrict__ blk_height,
    const uint8_t *__restrict__ blk_class, const int32_t *__restrict__ perm,
    const int32_t *__restrict__ idx, const T *__restrict__ val, const uint8_t *__restrict__ seg,
    const T *__restrict__ x, T *__restrict__ y, double alpha) {
  const int64_t b = ((int64_t)blockIdx.x * COAL_CUDA_CTA + threadIdx.x) >> 5;
  if (b >= nblocks) return; /* the whole warp leaves: later full-mask shuffles stay valid */
  const int lane = (int)(threadIdx.x & 31);
  const int32_t ptr = coal_ld_ro(blk_ptr + b), col = coal_ld_ro(blk_col + b);
  const int len = coal_ld_ro(blk_len + b), h = coal_ld_ro(blk_height + b);
  const int cls = coal_ld_ro(blk_class + b) & 3;
  const bool active = lane < len;
  /* alpha folded into the column's x value: the products are alpha*a_ij*x_j, summed in
   * double for both dtypes (as the host twin) */
  double xv = 0;
  if (active) xv = alpha * coal_ld_ro(x + (IDENT ? col + lane : coal_ld_ro(perm + col + lane)));

  for (int r0 = 0; r0 < h; r0 += kScatterUnroll) {
    T v[kScatterUnroll];
    int32_t row[kScatterUnroll];
    int s[kScatterUnroll];
#pragma unroll
    for (int u = 0; u < kScatterUnroll; u++) {
      v[u] = 0, row[u] = -1, s[u] = 1; /* inactive lanes: product 0, run of 1 */
      if (active && r0 + u < h) {
        const int32_t e = ptr + (r0 + u) * len + lane;
        v[u] = coal_ld_stream(val + e);
        row[u] = coal_ld_stream(idx + e);
        if (cls == COAL_FL_SEGMENTED) s[u] = coal_ld_stream(seg + e);
      }
    }
#pragma unroll
    for (int u = 0; u < kScatterUnroll; u++) {
      if (r0 + u >= h) break; /* uniform across the warp */
      double p = (double)v[u] * xv;
      if (cls == COAL_FL_ONE_ROW) {
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) p += __shfl_xor_sync(COAL_FULL_MASK, p, off);
        if (lane == 0) atomicAdd(y + row[u], (T)p);
      } else if (cls == COAL_FL_SEGMENTED) {
        /* suffix sum inside each run: s = lanes from this one to the end of its run */
#pragma unroll
        for (int off = 1; off < 32; off <<= 1) {
          const double t = __shfl_down_sync(COAL_FULL_MASK, p, off);
          if (off < s[u]) p += t;
        }
        const int32_t prev = __shfl_up_sync(COAL_FULL_MASK, row[u], 1);
        if (active && (lane == 0 || prev != row[u])) atomicAdd(y + row[u], (T)p);
      } else if (active) {
        atomicAdd(y + row[u], (T)p);
      }
    }
  }
}

/* A warp runs kFltTasksPerWarp consecutive tasks of the schedule. Their blocks are consecutive,
 * so the warp walks one block range: descriptors of 32 blocks come in one coalesced load and
 * are broadcast; at each task boundary the lanes store (or add) their rows. */
template <typename T, bool IDENT>
__global__ __launch_bounds__(COAL_CUDA_CTA, kGatherMinCtas<T>) void gather_kernel(
    int32_t ntasks, const int32_t *__restrict__ task, const int32_t *__restrict__ blk_ptr,
    const int32_t *__restrict__ blk_col, const uint8_t *__restrict__ blk_len,
    const uint8_t *__restrict__ blk_height, const int32_t *__restrict__ perm,
    const int32_t *__restrict__ idx, const T *__restrict__ val, const T *__restrict__ x,
    T *__restrict__ y, double alpha, double beta) {
  const int64_t tw0 = (((int64_t)blockIdx.x * COAL_CUDA_CTA + threadIdx.x) >> 5) * kFltTasksPerWarp;
  if (tw0 >= ntasks) return; /* whole warp */
  const int lane = (int)(threadIdx.x & 31);
  const int ntw = ntasks - tw0 < kFltTasksPerWarp ? (int)(ntasks - tw0) : kFltTasksPerWarp;
  /* lane j holds entry tw0 + j of the schedule, j = 0..ntw */
  const uint32_t my_task = lane <= ntw ? (uint32_t)coal_ld_ro(task + tw0 + lane) : 0u;
  const uint32_t mask = ~COAL_FLT_TASK_ATOMIC;
  const int32_t B0 = (int32_t)(__shfl_sync(COAL_FULL_MASK, my_task, 0) & mask);
  const int32_t B1 = (int32_t)(__shfl_sync(COAL_FULL_MASK, my_task, ntw) & mask);
  int cur = 0;
  bool atomic = (__shfl_sync(COAL_FULL_MASK, my_task, 0) & COAL_FLT_TASK_ATOMIC) != 0;
  int32_t next_b = (int32_t)(__shfl_sync(COAL_FULL_MASK, my_task, 1) & mask);
  int32_t col = 0;
  double sum = 0; /* double for both dtypes, as the host twin */
  bool touched = false;
  /* lane's row of the task just finished: stored whole, or added (pre-scaled rows) */
  auto flush = [&]() {
    if (!touched) return;
    const int32_t row = IDENT ? col + lane : coal_ld_ro(perm + col + lane);
    const double a = alpha * sum;
    if (atomic)
      atomicAdd(y + row, (T)a);
    else
      y[row] = (T)(beta == 0.0 ? a : a + beta * (double)y[row]);
  };
  for (int32_t bb = B0; bb < B1; bb += 32) {
    const int nb = B1 - bb < 32 ? B1 - bb : 32;
    int32_t my_ptr = 0, my_col = 0;
    int my_lh = 0;
    if (lane < nb) {
      my_ptr = coal_ld_ro(blk_ptr + bb + lane);
      my_col = coal_ld_ro(blk_col + bb + lane);
      my_lh = coal_ld_ro(blk_len + bb + lane) | (coal_ld_ro(blk_height + bb + lane) << 8);
    }
    for (int k = 0; k < nb; k++) {
      if (bb + k == next_b) { /* uniform: the next task starts at this block */
        flush();
        cur++;
        const uint32_t tk = __shfl_sync(COAL_FULL_MASK, my_task, cur);
        atomic = (tk & COAL_FLT_TASK_ATOMIC) != 0;
        next_b = (int32_t)(__shfl_sync(COAL_FULL_MASK, my_task, cur + 1) & mask);
        sum = 0, touched = false;
      }
      const int32_t ptr = __shfl_sync(COAL_FULL_MASK, my_ptr, k);
      col = __shfl_sync(COAL_FULL_MASK, my_col, k);
      const int lh = __shfl_sync(COAL_FULL_MASK, my_lh, k);
      const int len = lh & 255, h = lh >> 8;
      if (lane < len) {
        touched = true;
        const int32_t e0 = ptr + lane;
        for (int r0 = 0; r0 < h; r0 += kGatherUnroll) {
          int32_t c[kGatherUnroll];
          T v[kGatherUnroll];
#pragma unroll
          for (int u = 0; u < kGatherUnroll; u++) {
            c[u] = 0, v[u] = 0;
            if (r0 + u < h) {
              c[u] = coal_ld_stream(idx + e0 + (r0 + u) * len);
              v[u] = coal_ld_stream(val + e0 + (r0 + u) * len);
            }
          }
#pragma unroll
          for (int u = 0; u < kGatherUnroll; u++)
            if (r0 + u < h) sum += (double)v[u] * coal_ld_ro(x + c[u]);
        }
      }
    }
  }
  flush();
}

/* Grid-stride kernels over n items: enough CTAs to fill the device, no more. */
unsigned stride_grid(coal_ctx ctx, int64_t n) {
  int64_t g = (n + COAL_CUDA_CTA - 1) / COAL_CUDA_CTA, cap = (int64_t)ctx->cuda->sm_count * 8;
  return (unsigned)(g < cap ? g : cap);
}

template <typename T>
coal_status scatter(coal_mat A, const struct coal_fastload_dev *f, double alpha, const void *x,
                    double beta, void *y) {
  coal_ctx ctx = A->ctx;
  cudaStream_t s = coal_stream(ctx);
  if (beta != 1.0) {
    scale_kernel<T><<<stride_grid(ctx, A->nrows), COAL_CUDA_CTA, 0, s>>>(A->nrows, (T *)y, beta);
    COAL_CUDA_LAUNCH_CHECK(ctx);
  }
  if (f->nblocks == 0) return COAL_SUCCESS;
  const unsigned grid = coal_cuda_grid((int64_t)f->nblocks * 32, COAL_CUDA_CTA);
  if (f->identity_perm)
    scatter_kernel<T, true><<<grid, COAL_CUDA_CTA, 0, s>>>(
        f->nblocks, f->blk_ptr, f->blk_col, f->blk_len, f->blk_height, f->blk_class, f->perm,
        f->idx, (const T *)f->val, f->seg, (const T *)x, (T *)y, alpha);
  else
    scatter_kernel<T, false><<<grid, COAL_CUDA_CTA, 0, s>>>(
        f->nblocks, f->blk_ptr, f->blk_col, f->blk_len, f->blk_height, f->blk_class, f->perm,
        f->idx, (const T *)f->val, f->seg, (const T *)x, (T *)y, alpha);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  return COAL_SUCCESS;
}

template <typename T>
coal_status gather(coal_mat A, const struct coal_fastload_dev *f, double alpha, const void *x,
                   double beta, void *y) {
  coal_ctx ctx = A->ctx;
  cudaStream_t s = coal_stream(ctx);
  if (beta != 1.0 && f->nprescale > 0) {
    scale_list_kernel<T><<<stride_grid(ctx, f->nprescale), COAL_CUDA_CTA, 0, s>>>(
        f->nprescale, f->prescale, (T *)y, beta);
    COAL_CUDA_LAUNCH_CHECK(ctx);
  }
  if (f->ntasks == 0) return COAL_SUCCESS;
  const int64_t warps = (f->ntasks + kFltTasksPerWarp - 1) / kFltTasksPerWarp;
  const unsigned grid = coal_cuda_grid(warps * 32, COAL_CUDA_CTA);
  if (f->identity_perm)
    gather_kernel<T, true><<<grid, COAL_CUDA_CTA, 0, s>>>(
        f->ntasks, f->task, f->blk_ptr, f->blk_col, f->blk_len, f->blk_height, f->perm, f->idx,
        (const T *)f->val, (const T *)x, (T *)y, alpha, beta);
  else
    gather_kernel<T, false><<<grid, COAL_CUDA_CTA, 0, s>>>(
        f->ntasks, f->task, f->blk_ptr, f->blk_col, f->blk_len, f->blk_height, f->perm, f->idx,
        (const T *)f->val, (const T *)x, (T *)y, alpha, beta);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  return COAL_SUCCESS;
}

} // namespace

coal_status coal_spmv_fastload_cuda(coal_mat A, double alpha, const void *x, double beta, void *y) {
  if (!A) return COAL_ERR_ARG;
  if (A->nrows == 0) return COAL_SUCCESS;
  const struct coal_fastload_dev *f = NULL;
  COAL_CALL(coal_cuda_fastload_upload(A, 0, &f));
  return A->dtype == COAL_F64 ? scatter<double>(A, f, alpha, x, beta, y)
                              : scatter<float>(A, f, alpha, x, beta, y);
}

coal_status coal_spmv_fastload_t_cuda(coal_mat A, double alpha, const void *x, double beta,
                                      void *y) {
  if (!A) return COAL_ERR_ARG;
  if (A->nrows == 0) return COAL_SUCCESS;
  const struct coal_fastload_dev *f = NULL;
  COAL_CALL(coal_cuda_fastload_upload(A, 1, &f));
  return A->dtype == COAL_F64 ? gather<double>(A, f, alpha, x, beta, y)
                              : gather<float>(A, f, alpha, x, beta, y);
}
