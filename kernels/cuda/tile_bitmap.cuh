/* Device helpers shared by the TileSpGEMM kernels (spgemm_kernels.cu) and the GPU tile builder
 * (tile_build.cu): block reductions and scans for CTAs of COAL_TB_THREADS threads, and the
 * bitmap accumulator that lists the distinct tile columns of one tile row in ascending order. */
#ifndef COAL_CUDA_TILE_BITMAP_CUH
#define COAL_CUDA_TILE_BITMAP_CUH

#include <limits.h>
#include <stdint.h>

namespace coal_tile_bitmap {

constexpr int kThreads = 128; /* threads per CTA (one tile row) */
constexpr int kWarps = kThreads / 32;
constexpr int kWords = 1024; /* bitmap window: 32768 tile columns, 4 KB of shared memory */
constexpr int kBits = kWords * 32;
constexpr int kWordsPerThread = kWords / kThreads;

struct MinOp {
  __device__ int32_t operator()(int32_t a, int32_t b) const { return a < b ? a : b; }
};
struct MaxOp {
  __device__ int32_t operator()(int32_t a, int32_t b) const { return a > b ? a : b; }
};

/* Value of op over the block; every thread gets it. Starts with a barrier, so the caller may
 * reuse red (and any shared data read before the call) right after. */
template <typename Op> __device__ int32_t block_reduce(int32_t v, int32_t *red, Op op) {
  for (int o = 16; o; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  __syncthreads();
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
  __syncthreads();
  v = red[0];
  for (int w = 1; w < kWarps; w++) v = op(v, red[w]);
  return v;
}

/* Exclusive prefix sum of v over the block (thread order) and the block total. */
__device__ inline void block_scan(int32_t v, int32_t *red, int32_t *excl, int32_t *total) {
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  int32_t incl = v;
  for (int o = 1; o < 32; o <<= 1) {
    const int32_t y = __shfl_up_sync(0xffffffffu, incl, o);
    if (lane >= o) incl += y;
  }
  __syncthreads();
  if (lane == 31) red[w] = incl;
  __syncthreads();
  int32_t before = 0, all = 0;
  for (int i = 0; i < kWarps; i++) {
    if (i < w) before += red[i];
    all += red[i];
  }
  *excl = before + incl - v;
  *total = all;
}

/* The distinct candidate tile columns of tile row I, in [lo, hi] (block-uniform bounds; lo >
 * hi: none), counted or written. visit(mark) makes every thread call mark(J) for its share of
 * the candidates (repeats allowed). The candidates are marked in a shared bitmap window of kBits
 * columns starting at the smallest candidate not yet listed; a row whose candidates span more
 * moves the window to the next candidate beyond it (empty stretches cost nothing), so visit
 * runs once per window. FILL = false: returns the count (every thread); FILL = true: also
 * writes the columns in ascending order to out_col[base ...] and I to out_row[...] (a block
 * scan of the per-thread popcounts gives each thread its offset). */
template <bool FILL, typename Visit>
__device__ int32_t bitmap_collect(int32_t I, int32_t lo, int32_t hi, Visit &&visit, uint32_t *bits,
                                  int32_t *red, int64_t base, int32_t *__restrict__ out_col,
                                  int32_t *__restrict__ out_row) {
  const int tid = (int)threadIdx.x;
  int32_t done = 0;
  for (int32_t w0 = lo; w0 <= hi;) {
    const int64_t span = (int64_t)hi - w0 + 1;
    const int nw = span >= kBits ? kWords : (int)((span + 31) >> 5);
    for (int i = tid; i < nw; i += kThreads) bits[i] = 0u;
    __syncthreads();
    int32_t next = INT_MAX;
    visit([&](int32_t J) {
      const int64_t d = (int64_t)J - w0;
      if (d >= 0 && d < kBits)
        atomicOr(&bits[d >> 5], 1u << (d & 31));
      else if (d >= kBits && J < next)
        next = J;
    });
    __syncthreads();
    const int wb = tid * kWordsPerThread;
    int32_t mine = 0;
#pragma unroll
    for (int i = 0; i < kWordsPerThread; i++)
      if (wb + i < nw) mine += __popc(bits[wb + i]);
    int32_t excl = 0, tot = 0;
    block_scan(mine, red, &excl, &tot);
    if (FILL) {
      int64_t o = base + done + excl;
      for (int i = 0; i < kWordsPerThread && wb + i < nw; i++)
        for (uint32_t m = bits[wb + i]; m; m &= m - 1u, o++) {
          out_col[o] = w0 + (wb + i) * 32 + (__ffs((int)m) - 1);
          if (out_row) out_row[o] = I;
        }
    }
    done += tot;
    w0 = block_reduce(next, red, MinOp()); /* its barrier ends every read of bits */
  }
  return done;
}

} // namespace coal_tile_bitmap

#endif
