/* Pieces shared by the deterministic reductions of kernels/cuda/blas.cu and blas_vec.cu: the
 * grid of a reduction pass, the 16-byte alignment test of the vectorised paths, and the CTA
 * stage (warp shuffles, then the warp results in order). Included by .cu files only. */
#ifndef COAL_CUDA_REDUCE_CUH
#define COAL_CUDA_REDUCE_CUH

#include "cuda_internal.h"

#include <stdint.h>

namespace coal_reduce {

constexpr int kThreads = COAL_CUDA_CTA; /* 256 */
constexpr int kWarps = kThreads / 32;
constexpr int kMaxPart = 1024; /* most CTAs (partials) of a reduction */

/* Grid of a reduction over `units` work items: bounded by kMaxPart and 8 CTAs per SM. */
inline int reduce_grid(coal_ctx ctx, int64_t units) {
  int64_t cap = (int64_t)ctx->cuda->sm_count * 8;
  if (cap > kMaxPart) cap = kMaxPart;
  const int64_t g = (units + kThreads - 1) / kThreads;
  return (int)(g < 1 ? 1 : g > cap ? cap : g);
}

inline bool aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

/* Maximum that keeps NaN: a NaN operand wins on either side. */
__device__ __forceinline__ double nan_max(double m, double a) { return (a > m || a != a) ? a : m; }

/* Combines v over the CTA (1D, kThreads threads) in a fixed order: entries c < NS are summed,
 * the others combined by nan_max (their values are >= 0, so 0 is neutral). Thread 0 gets the
 * results. */
template <int NV, int NS> __device__ __forceinline__ void cta_reduce(double (&v)[NV]) {
  __shared__ double sh[NV][kWarps];
  const int lane = (int)(threadIdx.x & 31), warp = (int)(threadIdx.x >> 5);
#pragma unroll
  for (int c = 0; c < NV; c++) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
      const double t = __shfl_down_sync(COAL_FULL_MASK, v[c], off);
      v[c] = c < NS ? v[c] + t : nan_max(v[c], t);
    }
    if (lane == 0) sh[c][warp] = v[c];
  }
  __syncthreads();
  if (warp == 0) {
#pragma unroll
    for (int c = 0; c < NV; c++) {
      double t = lane < kWarps ? sh[c][lane] : 0.0;
#pragma unroll
      for (int off = kWarps / 2; off > 0; off >>= 1) {
        const double u = __shfl_down_sync(COAL_FULL_MASK, t, off);
        t = c < NS ? t + u : nan_max(t, u);
      }
      v[c] = t;
    }
  }
}

} // namespace coal_reduce

#endif
