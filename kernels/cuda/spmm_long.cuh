/* One segment of a long row of row-split SpMM: the device body shared by the second launch
 * (spmm_long.cu, which describes the method) and by the small row-split launch, whose extra
 * CTAs take the long rows in the same launch (spmm_rowsplit.cu). */
#ifndef COAL_CUDA_SPMM_LONG_CUH
#define COAL_CUDA_SPMM_LONG_CUH

#include "spmm_util.cuh"

namespace coal_spmm_dev {

constexpr int32_t kLongSeg = 1024; /* entries of a long row per CTA */

/* How a CTA's sum meets Y: added to a Y that already holds beta*Y (the row's only segment,
 * read-modify-write), added with atomics (one of several segments), or stored as
 * alpha*sum + beta*Y (a row that no other launch touches; beta == 0 does not read Y). */
enum rs_long_mode { kLongAdd, kLongAtomic, kLongStore };

/* Y(row, :) (+)= alpha * (entries b0 .. b0+kLongSeg-1 of the row) * X over the column tiles
 * blockIdx.y, blockIdx.y + gridDim.y, ...: the G = 256/W groups of the CTA take contiguous
 * slices of the segment (rs_row, 16 elements of X in flight per lane); their sums meet through
 * shuffles, then shared memory. Called by every thread of the CTA (it has barriers). */
template <typename T, int W, int V, bool XROW>
__device__ __forceinline__ void
rs_long_segment(int32_t row, int32_t b0, rs_long_mode mode, const int32_t *__restrict__ rowptr,
                const int32_t *__restrict__ col, const T *__restrict__ val, const T *__restrict__ x,
                int64_t ldx, T *__restrict__ y, int64_t ldy, bool yrow, int k, double alpha,
                double beta) {
  constexpr int TW = W * V, G = COAL_CUDA_CTA / W, NWARP = COAL_CUDA_CTA / 32;
  __shared__ double s_part[NWARP][TW];
  const int tid = (int)threadIdx.x, lane = tid % W, g = tid / W, warp = tid / 32;
  const int32_t p0 = __ldg(rowptr + row), len = __ldg(rowptr + row + 1) - p0;
  const int n = len - b0 < kLongSeg ? len - b0 : kLongSeg;
  const int slice = (n + G - 1) / G; /* uniform over the CTA */
  const int s0 = g * slice;
  const int mine = n - s0 < slice ? (n - s0 > 0 ? n - s0 : 0) : slice;
  for (int j0 = (int)blockIdx.y * TW; j0 < k; j0 += (int)gridDim.y * TW) {
    double acc[1][V];
#pragma unroll
    for (int v = 0; v < V; v++) acc[0][v] = 0;
    rs_row<T, W, V, 1, XROW, 16, 1>(col, val, x, ldx, p0 + b0 + s0, mine, slice, lane, 0, j0, k, 1,
                                    acc);
    /* the groups of a warp, then the warps */
#pragma unroll
    for (int off = W; off < 32; off *= 2)
#pragma unroll
      for (int v = 0; v < V; v++) acc[0][v] += __shfl_xor_sync(COAL_FULL_MASK, acc[0][v], off);
    if (tid % 32 < W)
#pragma unroll
      for (int v = 0; v < V; v++) s_part[warp][lane * V + v] = acc[0][v];
    __syncthreads();
    if (tid < TW && j0 + tid < k) {
      double s = 0;
#pragma unroll
      for (int w = 0; w < NWARP; w++) s += s_part[w][tid];
      const int64_t jj = j0 + tid;
      T *p = y + (yrow ? (int64_t)row * ldy + jj : (int64_t)row + jj * ldy);
      if (mode == kLongAtomic)
        atomicAdd(p, (T)(alpha * s));
      else if (mode == kLongAdd)
        *p = (T)((double)*p + alpha * s);
      else
        *p = (T)(beta == 0.0 ? alpha * s : alpha * s + beta * (double)*p);
    }
    __syncthreads(); /* s_part is rewritten by the next tile */
  }
}

} // namespace coal_spmm_dev

#endif
