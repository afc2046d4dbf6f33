/* Row-split over tiles of grid lines in several planes, with the CTA's own rows of X staged in
 * shared memory (spmm_rowsplit.cu launches it; its header describes the tiles).
 *
 * A CTA of the lines-and-planes launch computes a brick of rows: gs consecutive rows of a line
 * (one segment), rpg lines down the plane, np planes; rows base + p*plane + i*line + x for
 * p < np, i < rpg, x < gs. On a structured grid most of the X rows that these rows read are the
 * brick's own rows (the row itself, its neighbours along the line, the next and previous line,
 * the next and previous plane). Through L1 alone they are fetched from L2 several times: the
 * five CTAs of an SM walk more rows of X than its L1 holds (the 7-point at k = 32 hit L1 51%
 * of the time, bound by L2 -> SM traffic; bench/spmm_notes.md). Here the CTA copies its brick's
 * rows of X into shared memory once (cp.async, 16 bytes a lane), and every entry whose column
 * is a row of the brick reads shared memory; the other entries (the brick's halo) read global
 * memory through L1 as before.
 *
 * Which entries hit: the lane that loads an entry (column c of row r = base + pg*plane +
 * i*line + xg) writes c - r = dz*plane + dy*line + dx with dz, dy rounded quotients (float
 * reciprocals), and the entry is slot ((pg+dz)*rpg + i+dy)*gs + xg+dx when all three indices
 * fall inside the brick. The slot's row is base + (pg+dz)*plane + (i+dy)*line + (xg+dx) = c
 * exactly, whatever the rounding (which only decides whether an entry is found): so any matrix
 * and any strides give the twin's result. The arithmetic is unsigned 32-bit (wrapping): the
 * launcher keeps base + np*plane + rpg*line + gs below 2^32, and c < 2^31, so equality modulo
 * 2^32 is equality. Slots whose row is past X's last row are not filled (no column matches
 * them).
 *
 * Each entry's column and slot travel in one int through the broadcast shuffle (the column
 * when >= 0, else ~slot). Sums are in the row's nonzero order, in double, as the host twin. */
#ifndef COAL_CUDA_SPMM_STAGE_CUH
#define COAL_CUDA_SPMM_STAGE_CUH

#include "spmm_util.cuh"

#include <cuda_pipeline_primitives.h>

namespace coal_spmm_dev {

constexpr int kStageUB = 4; /* elements of X a lane has in flight (rs_row's UB) */

/* The brick's shape, the same for every CTA (kernel parameters: read from the constant bank,
 * no registers held): rows base + p*plane + i*line + x for p < np, i < rpg, x < gs; span =
 * np*plane; rline, rplane = 1/line, 1/plane. */
struct rs_brick {
  uint32_t line, plane, span;
  int gs, rpg;
  float rline, rplane;
};

/* The slot of column c in the brick at base, or -1: e = c - base = p*plane + i*line + x with
 * quotients taken in float (offsets under np*plane, at most 8 planes: exact enough that an
 * entry of the brick is found; a wrong quotient can only miss, as the reconstruction below is
 * exact). */
__device__ __forceinline__ int rs_stage_slot(const rs_brick &b, uint32_t base, uint32_t c) {
  const uint32_t e = c - base;
  if (e >= b.span) return -1;
  const uint32_t p = (uint32_t)(((float)e + 0.5f) * b.rplane);
  const uint32_t r = e - p * b.plane; /* wraps to a large value if p is one too many */
  if (r >= b.plane) return -1;
  const uint32_t i = (uint32_t)(((float)r + 0.5f) * b.rline);
  if (i >= (uint32_t)b.rpg) return -1;
  const uint32_t x = r - i * b.line;
  if (x >= (uint32_t)b.gs) return -1;
  return (int)((p * (uint32_t)b.rpg + i) * (uint32_t)b.gs + x);
}

/* rs_row (spmm_util.cuh) with one sub-group, where an entry's X row is read from the staged
 * slots xs (k elements a slot) when it is one of the brick's (at base). */
template <typename T, int W, int V, int NT, int UB, int CH>
__device__ __forceinline__ void
rs_row_staged(const int32_t *__restrict__ col, const T *__restrict__ val, const T *__restrict__ x,
              int64_t ldx, const T *xs, const rs_brick &b, uint32_t base, int32_t p0, int len,
              int maxlen, int lane, int k, int nt, double (&acc)[NT][V]) {
  typedef typename vec_t<T, V>::type VT;
  constexpr int M = CH / W;
  constexpr int U0 = V >= UB ? 1 : UB / V;
  constexpr int U = U0 > CH ? CH : U0;
  static_assert(W <= 32 && CH % W == 0 && CH % U == 0, "staged row-split group shape");
  constexpr int TW = W * V;
  for (int c0 = 0; c0 < maxlen; c0 += CH) {
    int32_t mc[M]; /* column (>= 0) or ~slot */
    T mv[M];
#pragma unroll
    for (int m = 0; m < M; m++) {
      const int e = c0 + lane + m * W;
      mc[m] = 0, mv[m] = T(0);
      if (e < len) {
        const int32_t c = coal_ld_stream(col + p0 + e);
        mv[m] = coal_ld_stream(val + p0 + e);
        const int s = rs_stage_slot(b, base, (uint32_t)c);
        mc[m] = s >= 0 ? ~s : c;
      }
    }
    const int cn = maxlen - c0 < CH ? maxlen - c0 : CH;
#pragma unroll
    for (int t0 = 0; t0 < CH; t0 += U) {
      if (t0 >= cn) break; /* uniform */
      int32_t cc[U];
      double a[U];
      bool on[U];
#pragma unroll
      for (int u = 0; u < U; u++) {
        const int tb = t0 + u;
        cc[u] = __shfl_sync(COAL_FULL_MASK, mc[tb / W], tb % W, W);
        a[u] = (double)__shfl_sync(COAL_FULL_MASK, mv[tb / W], tb % W, W);
        on[u] = c0 + tb < len;
      }
#pragma unroll
      for (int t = 0; t < NT; t++) {
        if (t >= nt) break; /* uniform */
        const int j = t * TW + lane * V;
        const bool in = j < k;
        double xv[U][V];
#pragma unroll
        for (int u = 0; u < U; u++) {
          if (on[u] && in && cc[u] < 0)
            unpack(*reinterpret_cast<const VT *>(xs + (int64_t)(~cc[u]) * k + j), xv[u]);
          else if (on[u] && in)
            load_x<T, V, true>(x, ldx, cc[u], j, xv[u]);
          else
#pragma unroll
            for (int v = 0; v < V; v++) xv[u][v] = 0;
        }
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
          for (int v = 0; v < V; v++) acc[t][v] += a[u] * xv[u][v];
      }
    }
  }
}

/* The staged kernel: row-major X with 16-byte vector loads (V*sizeof(T) == 16), every column
 * in one pass (k <= NT*W*V), tiles of lines in planes (the mapping of rs_cols in
 * spmm_rowsplit.cu: segs segments of b.gs = G/np rows a line, nlc tiles of b.rpg lines a
 * plane). Dynamic shared memory: np*rpg*gs*k elements. Long rows (len > lmax) store beta*y
 * only. */
template <typename T, int W, int V, int NT, int CH, int MINB>
__global__ __launch_bounds__(COAL_CUDA_CTA, MINB) void rs_stage_kernel(
    int32_t nrows, int32_t ncols, const int32_t *__restrict__ rowptr,
    const int32_t *__restrict__ col, const T *__restrict__ val, const T *__restrict__ x,
    int64_t ldx, T *__restrict__ y, int64_t ldy, bool yrow, bool yvec, int k, const rs_brick b,
    int segs, unsigned nlc, int32_t lmax, double alpha, double beta) {
  static_assert(V * sizeof(T) == 16, "staged rows are copied 16 bytes at a time");
  extern __shared__ __align__(16) unsigned char rs_stage_smem[];
  T *xs = reinterpret_cast<T *>(rs_stage_smem);
  constexpr int TW = W * V, G = COAL_CUDA_CTA / W;
  const int lane = (int)(threadIdx.x % W), g = (int)(threadIdx.x / W);
  const int xg = g % b.gs, pg = g / b.gs;
  const unsigned seg = blockIdx.x % (unsigned)segs, tile = blockIdx.x / (unsigned)segs;
  const uint32_t np = (uint32_t)(G / b.gs);
  const uint32_t q0 = (tile % nlc) * (uint32_t)b.rpg * b.line + seg * (uint32_t)b.gs;
  const uint32_t base = (tile / nlc) * np * b.plane + q0;
  /* the brick's rows of X into shared memory, 16 bytes a copy */
  const int kv = k / V, nslot = G * b.rpg;
  for (int e = (int)threadIdx.x; e < nslot * kv; e += COAL_CUDA_CTA) {
    const int s = e / kv, jv = e - s * kv;
    const int sx = s % b.gs, si = (s / b.gs) % b.rpg, sp = s / (b.gs * b.rpg);
    const uint32_t c = base + (uint32_t)sp * b.plane + (uint32_t)si * b.line + (uint32_t)sx;
    if (c < (uint32_t)ncols)
      __pipeline_memcpy_async(xs + (int64_t)s * k + jv * V, x + (int64_t)c * ldx + jv * V, 16);
  }
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  const uint32_t q = q0 + (uint32_t)xg, off = seg * (uint32_t)b.gs + (uint32_t)xg;
  const uint32_t first = base + (uint32_t)pg * b.plane + (uint32_t)xg;
  const bool lane_on = off < b.line;
  const int nt = (k + TW - 1) / TW; /* <= NT: one pass */
  for (int i = 0; i < b.rpg; i++) {
    const uint32_t row = first + (uint32_t)i * b.line;
    const bool valid = lane_on && row < (uint32_t)nrows && q + (uint32_t)i * b.line < b.plane;
    if (!__any_sync(COAL_FULL_MASK, valid)) break; /* uniform (as in rs_cols) */
    int32_t p0 = 0, len = 0;
    if (valid) {
      p0 = __ldg(rowptr + row);
      len = __ldg(rowptr + row + 1) - p0;
      if (len > lmax) len = 0; /* a long row: beta*y here, its products in spmm_long.cu */
    }
    const int maxlen = (int)__reduce_max_sync(COAL_FULL_MASK, (unsigned)len);
    double acc[NT][V];
#pragma unroll
    for (int t = 0; t < NT; t++)
#pragma unroll
      for (int v = 0; v < V; v++) acc[t][v] = 0;
    rs_row_staged<T, W, V, NT, kStageUB, CH>(col, val, x, ldx, xs, b, base, p0, len, maxlen, lane,
                                             k, nt, acc);
    if (valid) {
#pragma unroll
      for (int t = 0; t < NT; t++) {
        const int j = t * TW + lane * V;
        if (t < nt && j < k)
          store_y<T, V>(y, ldy, yrow, yvec, (int32_t)row, j, k, acc[t], alpha, beta);
      }
    }
  }
}

} // namespace coal_spmm_dev

#endif
