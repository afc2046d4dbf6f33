/* TileSpGEMM kernels ([TILESPGEMM], section 3.3; kernels/spgemm.h gives the maths). Each kernel's
 * output equals the host twin's (kernels/host/spgemm_tile.c) bit for bit:
 *
 *  step 1  a CTA per tile row I of A. The candidate tile columns of row I of C are the tile
 *          columns of the rows K of B' for every tile (I, K) of A'. They are marked in a bitmap
 *          of 32768 tile columns in shared memory (a window starting at the smallest candidate;
 *          a row whose candidates span more moves the window to the next candidate beyond it,
 *          so empty stretches cost nothing), then counted (popcounts) or written in ascending
 *          order (a block scan of the popcounts gives each thread its output offset).
 *          Traffic: B' rows read once per tile of A' (tile indices only), per pass.
 *  step 2  a warp per tile of C: intersection of the tile columns of row I of A with the tile
 *          rows of column J of B (each lane binary-searches one key of the shorter list in the
 *          longer one, matches in ascending K by ballot); per pair, lane r of one half-warp ORs
 *          the masks of B's rows k over the nonzeros (r, k) of A_IK (the halves take
 *          alternate pairs, then combine): no atomics. Popcounts and a 16-lane scan give the
 *          tile's nonzero count and 8-bit row offsets.
 *  step 3  a warp per tile of C, the same intersection; per pair the warp stages A_IK (values,
 *          local indices, masks, offsets) and B_KJ in shared memory. Dense accumulator (tile
 *          nonzeros > threshold): lane owns the 8 cells (r = lane/2, c = 8*(lane&1) + j) in
 *          registers and B_KJ is expanded to a dense 16 x 16 tile (cell = packed index, only
 *          cells in B's mask are read, so no clearing). Sparse accumulator: lane owns C's
 *          nonzeros lane, lane+32, ... (at most 8 below the threshold cap of 256), each located
 *          from C's masks; b_kc found by a popcount of B's row mask. Each owner sums its
 *          products in ascending (K, k) with __dadd_rn(__dmul_rn()) (no FMA: same bits as the
 *          host) and stores once, straight to C's CSR position. No atomics anywhere.
 */
#include "spgemm_tile.cuh"
#include "tile_bitmap.cuh"

#include <limits.h>

namespace {

using namespace coal_tile_bitmap;

constexpr int kWarpsPerCta = 4; /* tiles of C per CTA in steps 2 and 3 */
constexpr int kTile = COAL_TILE_DIM;
static_assert(kTile == 16, "the kernels assume 16 x 16 tiles (8-bit indices, 16-bit masks)");

/* ---- step 1 ------------------------------------------------------------------------------- */
template <bool FILL>
__global__ __launch_bounds__(kThreads) void step1_kernel(
    const int32_t *__restrict__ a_ptr, const int32_t *__restrict__ a_col,
    const int32_t *__restrict__ b_ptr, const int32_t *__restrict__ b_col, int32_t *__restrict__ cnt,
    unsigned long long *__restrict__ total, const int32_t *__restrict__ c_ptr,
    int32_t *__restrict__ c_col, int32_t *__restrict__ c_row) {
  __shared__ uint32_t bits[kWords];
  __shared__ int32_t red[kWarps];
  const int32_t I = (int32_t)blockIdx.x;
  const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int32_t pa0 = a_ptr[I], pa1 = a_ptr[I + 1];
  /* candidate range: B's rows are sorted, so their first and last tile columns bound it */
  int32_t lo = INT_MAX, hi = -1;
  for (int32_t q = pa0 + tid; q < pa1; q += kThreads) {
    const int32_t K = a_col[q], s0 = b_ptr[K], s1 = b_ptr[K + 1];
    if (s0 < s1) {
      lo = min(lo, b_col[s0]);
      hi = max(hi, b_col[s1 - 1]);
    }
  }
  lo = block_reduce(lo, red, MinOp());
  hi = block_reduce(hi, red, MaxOp());
  /* candidates: warps over the tiles (I, K) of A, lanes over row K of B' */
  const int32_t n = bitmap_collect<FILL>(
      I, lo, hi,
      [&](auto &&mark) {
        for (int32_t q = pa0 + warp; q < pa1; q += kWarps) {
          const int32_t K = a_col[q], s1 = b_ptr[K + 1];
          for (int32_t s = b_ptr[K] + lane; s < s1; s += 32) mark(b_col[s]);
        }
      },
      bits, red, FILL ? (int64_t)c_ptr[I] : 0, c_col, c_row);
  if (!FILL && tid == 0) {
    cnt[I] = n;
    if (n) atomicAdd(total, (unsigned long long)n);
  }
}

/* ---- set intersection (steps 2 and 3) ---------------------------------------------------- */
/* Calls f(ta, tb) for every pair of a tile ta of tile row I of A (positions [pa0, pa1), tile
 * columns a_col) and a tile tb of tile column J of B (CSC positions [pb0, pb1), tile rows b_row,
 * tile numbers b_id) with equal K, in ascending K. Warp-uniform: every lane calls f for every
 * pair. The lanes take 32 keys of the shorter list at a time and binary-search them in the
 * longer one from just past the last match (keys ascend, so matches do too). */
template <typename F>
__device__ __forceinline__ void for_each_pair(const int32_t *__restrict__ a_col, int32_t pa0,
                                              int32_t pa1, const int32_t *__restrict__ b_row,
                                              const int32_t *__restrict__ b_id, int32_t pb0,
                                              int32_t pb1, int lane, F &&f) {
  if (pa0 >= pa1 || pb0 >= pb1) return;
  const bool a_short = pa1 - pa0 <= pb1 - pb0;
  const int32_t *skey = a_short ? a_col : b_row, *lkey = a_short ? b_row : a_col;
  const int32_t s1 = a_short ? pa1 : pb1, l1 = a_short ? pb1 : pa1;
  int32_t lo = a_short ? pb0 : pa0;
  for (int32_t base = a_short ? pa0 : pb0; base < s1 && lo < l1; base += 32) {
    const int32_t p = base + lane;
    int32_t found = -1;
    if (p < s1) {
      const int32_t key = skey[p];
      int32_t x = lo, y = l1;
      while (x < y) {
        const int32_t mid = x + ((y - x) >> 1);
        if (lkey[mid] < key)
          x = mid + 1;
        else
          y = mid;
      }
      if (x < l1 && lkey[x] == key) found = x;
    }
    unsigned bal = __ballot_sync(COAL_FULL_MASK, found >= 0);
    if (bal) lo = __shfl_sync(COAL_FULL_MASK, found, 31 - __clz((int)bal)) + 1;
    while (bal) {
      const int src = __ffs((int)bal) - 1;
      bal &= bal - 1u;
      const int32_t ps = __shfl_sync(COAL_FULL_MASK, p, src);
      const int32_t pl = __shfl_sync(COAL_FULL_MASK, found, src);
      f(a_short ? ps : pl, a_short ? b_id[pl] : b_id[ps]);
    }
  }
}

/* ---- step 2 ------------------------------------------------------------------------------- */
__global__ __launch_bounds__(kWarpsPerCta * 32) void step2_kernel(
    int32_t ntiles, const int32_t *__restrict__ c_row, const int32_t *__restrict__ c_col,
    const int32_t *__restrict__ a_ptr, const int32_t *__restrict__ a_col,
    const int32_t *__restrict__ a_nnz, const uint8_t *__restrict__ a_rp,
    const uint16_t *__restrict__ a_mask, const uint8_t *__restrict__ a_idx,
    const int32_t *__restrict__ b_cptr, const int32_t *__restrict__ b_crow,
    const int32_t *__restrict__ b_cid, const uint16_t *__restrict__ b_mask,
    uint16_t *__restrict__ c_mask, uint8_t *__restrict__ c_rp, int32_t *__restrict__ cnt,
    unsigned long long *__restrict__ total) {
  __shared__ int32_t wsum[kWarpsPerCta];
  const int lane = (int)(threadIdx.x & 31), warp = (int)(threadIdx.x >> 5);
  const int64_t t = (int64_t)blockIdx.x * kWarpsPerCta + warp;
  int32_t tot = 0;
  if (t < ntiles) {
    const int32_t I = c_row[t], J = c_col[t];
    uint32_t m = 0;
    int half = 0;
    for_each_pair(a_col, a_ptr[I], a_ptr[I + 1], b_crow, b_cid, b_cptr[J], b_cptr[J + 1], lane,
                  [&](int32_t ta, int32_t tb) {
                    if ((lane >> 4) == half) {
                      const size_t tr = (size_t)ta * kTile + (size_t)(lane & 15);
                      const uint32_t am = a_mask[tr];
                      const int32_t e0 = a_nnz[ta] + a_rp[tr], e1 = e0 + __popc(am);
                      const uint16_t *bm = b_mask + (size_t)tb * kTile;
                      for (int32_t e = e0; e < e1; e++) m |= bm[a_idx[e] & 15];
                    }
                    half ^= 1;
                  });
    m |= __shfl_xor_sync(COAL_FULL_MASK, m, 16);
    const int32_t c = lane < 16 ? __popc(m) : 0;
    int32_t incl = c;
    for (int o = 1; o < 16; o <<= 1) {
      const int32_t y = __shfl_up_sync(COAL_FULL_MASK, incl, o);
      if (lane >= o) incl += y;
    }
    tot = __shfl_sync(COAL_FULL_MASK, incl, 15);
    if (lane < 16) {
      c_mask[(size_t)t * kTile + lane] = (uint16_t)m;
      c_rp[(size_t)t * kTile + lane] = (uint8_t)(incl - c);
    }
    if (lane == 0) cnt[t] = tot;
  }
  if (lane == 0) wsum[warp] = tot;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long s = 0;
    for (int w = 0; w < kWarpsPerCta; w++) s += (unsigned long long)wsum[w];
    if (s) atomicAdd(total, s);
  }
}

/* ---- step 3 ------------------------------------------------------------------------------- */
template <typename T> struct S3Warp {
  T a_val[kTile * kTile];
  T b_val[kTile * kTile]; /* dense: by cell (packed index); sparse: by entry */
  uint8_t a_idx[kTile * kTile];
  uint16_t a_mask[kTile], b_mask[kTile], c_mask[kTile];
  uint8_t a_rp[kTile], b_rp[kTile], c_rp[kTile];
};

struct S3Args {
  int32_t ntiles;
  const int32_t *c_row, *c_col, *c_nnz, *c_pos;
  const uint8_t *c_rp;
  const uint16_t *c_mask;
  const int32_t *a_ptr, *a_col, *a_nnz;
  const uint8_t *a_rp, *a_idx;
  const uint16_t *a_mask;
  const void *a_val;
  const int32_t *b_cptr, *b_crow, *b_cid, *b_nnz;
  const uint8_t *b_rp, *b_idx;
  const uint16_t *b_mask;
  const void *b_val;
  void *cval;
  int threshold;
};

__device__ __forceinline__ double madd(double acc, double a, double b) {
  return __dadd_rn(acc, __dmul_rn(a, b)); /* no FMA: the host twin rounds twice too */
}

template <typename T> __global__ __launch_bounds__(kWarpsPerCta * 32) void step3_kernel(S3Args g) {
  __shared__ S3Warp<T> smem[kWarpsPerCta];
  const int lane = (int)(threadIdx.x & 31), warp = (int)(threadIdx.x >> 5);
  const int64_t t = (int64_t)blockIdx.x * kWarpsPerCta + warp;
  if (t >= g.ntiles) return; /* warp-uniform; no block barrier below */
  const int32_t nz = g.c_nnz[t + 1] - g.c_nnz[t];
  if (nz == 0) return;
  S3Warp<T> &s = smem[warp];
  const T *__restrict__ av = (const T *)g.a_val;
  const T *__restrict__ bv = (const T *)g.b_val;
  if (lane < kTile) {
    s.c_mask[lane] = g.c_mask[(size_t)t * kTile + lane];
    s.c_rp[lane] = g.c_rp[(size_t)t * kTile + lane];
  }
  __syncwarp();
  const bool dense = nz > g.threshold;
  /* outputs of this lane: out[j] = (r << 4) | c for the bits j of own */
  uint8_t out[8];
  unsigned own = 0;
  const int dr = lane >> 1, dc0 = (lane & 1) * 8;
  if (dense) {
    own = ((unsigned)s.c_mask[dr] >> dc0) & 0xffu;
#pragma unroll
    for (int j = 0; j < 8; j++) out[j] = (uint8_t)((dr << 4) | (dc0 + j));
  } else {
#pragma unroll
    for (int j = 0; j < 8; j++) {
      out[j] = 0;
      const int o = lane + 32 * j;
      if (o >= nz) continue;
      int r = 0; /* the row holding nonzero o: the last r with c_rp[r] <= o */
      for (int q = 1; q < kTile; q++)
        if (s.c_rp[q] <= o) r = q;
      unsigned m = s.c_mask[r];
      for (int k = o - s.c_rp[r]; k > 0; k--) m &= m - 1u;
      out[j] = (uint8_t)((r << 4) | (__ffs((int)m) - 1));
      own |= 1u << j;
    }
  }
  double acc[8];
#pragma unroll
  for (int j = 0; j < 8; j++) acc[j] = 0.0;
  const int32_t I = g.c_row[t], J = g.c_col[t];
  for_each_pair(g.a_col, g.a_ptr[I], g.a_ptr[I + 1], g.b_crow, g.b_cid, g.b_cptr[J],
                g.b_cptr[J + 1], lane, [&](int32_t ta, int32_t tb) {
                  __syncwarp(); /* every lane is done with the previous pair's tiles */
                  const int32_t a0 = g.a_nnz[ta], na = g.a_nnz[ta + 1] - a0;
                  const int32_t b0 = g.b_nnz[tb], nb = g.b_nnz[tb + 1] - b0;
                  for (int32_t e = lane; e < na; e += 32) {
                    s.a_val[e] = av[a0 + e];
                    s.a_idx[e] = g.a_idx[a0 + e];
                  }
                  if (dense)
                    for (int32_t e = lane; e < nb; e += 32) s.b_val[g.b_idx[b0 + e]] = bv[b0 + e];
                  else
                    for (int32_t e = lane; e < nb; e += 32) s.b_val[e] = bv[b0 + e];
                  if (lane < kTile) {
                    s.a_mask[lane] = g.a_mask[(size_t)ta * kTile + lane];
                    s.a_rp[lane] = g.a_rp[(size_t)ta * kTile + lane];
                    s.b_mask[lane] = g.b_mask[(size_t)tb * kTile + lane];
                    s.b_rp[lane] = g.b_rp[(size_t)tb * kTile + lane];
                  }
                  __syncwarp();
                  if (dense) {
                    if (!own) return;
                    const int e0 = s.a_rp[dr], e1 = e0 + __popc((unsigned)s.a_mask[dr]);
                    for (int e = e0; e < e1; e++) {
                      const int k = s.a_idx[e] & 15;
                      const unsigned mb = ((unsigned)s.b_mask[k] >> dc0) & own;
                      if (!mb) continue;
                      const double a = (double)s.a_val[e];
                      const T *brow = s.b_val + k * kTile + dc0;
#pragma unroll
                      for (int j = 0; j < 8; j++)
                        if ((mb >> j) & 1u) acc[j] = madd(acc[j], a, (double)brow[j]);
                    }
                  } else {
#pragma unroll
                    for (int j = 0; j < 8; j++) {
                      if (!((own >> j) & 1u)) continue;
                      const int r = out[j] >> 4, c = out[j] & 15;
                      const int e0 = s.a_rp[r], e1 = e0 + __popc((unsigned)s.a_mask[r]);
                      for (int e = e0; e < e1; e++) {
                        const int k = s.a_idx[e] & 15;
                        const unsigned mb = s.b_mask[k];
                        if (!((mb >> c) & 1u)) continue;
                        const int f = s.b_rp[k] + __popc(mb & ((1u << c) - 1u));
                        acc[j] = madd(acc[j], (double)s.a_val[e], (double)s.b_val[f]);
                      }
                    }
                  }
                });
  T *__restrict__ cv = (T *)g.cval;
#pragma unroll
  for (int j = 0; j < 8; j++) {
    if (!((own >> j) & 1u)) continue;
    const int r = out[j] >> 4, c = out[j] & 15;
    const int64_t o = (int64_t)g.c_pos[(size_t)t * kTile + (size_t)r] +
                      __popc((unsigned)s.c_mask[r] & ((1u << c) - 1u));
    cv[o] = (T)acc[j];
  }
}

/* ---- C's CSR structure, value gather ------------------------------------------------------- */
__global__ void row_len_kernel(int32_t nrows, const int32_t *__restrict__ c_ptr,
                               const uint16_t *__restrict__ c_mask, int32_t *__restrict__ len) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= nrows) return;
  const int32_t I = (int32_t)(i >> 4), r = (int32_t)(i & 15);
  int32_t n = 0;
  for (int32_t q = c_ptr[I]; q < c_ptr[I + 1]; q++)
    n += __popc((unsigned)c_mask[(size_t)q * kTile + r]);
  len[i] = n;
}

__global__ void row_fill_kernel(int32_t nrows, const int32_t *__restrict__ c_ptr,
                                const int32_t *__restrict__ c_col,
                                const uint16_t *__restrict__ c_mask,
                                const int32_t *__restrict__ rowptr, int32_t *__restrict__ colind,
                                int32_t *__restrict__ pos) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= nrows) return;
  const int32_t I = (int32_t)(i >> 4), r = (int32_t)(i & 15);
  int32_t o = rowptr[i];
  for (int32_t q = c_ptr[I]; q < c_ptr[I + 1]; q++) {
    const size_t qr = (size_t)q * kTile + (size_t)r;
    pos[qr] = o;
    const int32_t base = c_col[q] * kTile;
    for (unsigned m = c_mask[qr]; m; m &= m - 1u) colind[o++] = base + (__ffs((int)m) - 1);
  }
}

template <typename T>
__global__ void gather_kernel(int64_t n, const int32_t *__restrict__ map, const T *__restrict__ src,
                              T *__restrict__ dst) {
  for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < n;
       e += (int64_t)gridDim.x * blockDim.x)
    dst[e] = src[map[e]];
}

unsigned grid_of(int64_t work, int64_t per) {
  const int64_t g = (work + per - 1) / per;
  return (unsigned)(g < 1 ? 1 : g);
}

} // namespace

coal_status coal_spgemm_step1_count_cuda(coal_ctx ctx, const struct coal_tile_dev *a,
                                         const struct coal_tile_dev *b, int32_t *cnt,
                                         unsigned long long *total) {
  if (a->tm == 0) return COAL_SUCCESS;
  step1_kernel<false><<<(unsigned)a->tm, kThreads, 0, coal_stream(ctx)>>>(
      a->tile_ptr, a->tile_col, b->tile_ptr, b->tile_col, cnt, total, nullptr, nullptr, nullptr);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  return COAL_SUCCESS;
}

coal_status coal_spgemm_step1_fill_cuda(coal_ctx ctx, const struct coal_tile_dev *a,
                                        const struct coal_tile_dev *b, const int32_t *c_tile_ptr,
                                        int32_t *c_tile_col, int32_t *c_tile_row) {
  if (a->tm == 0) return COAL_SUCCESS;
  step1_kernel<true><<<(unsigned)a->tm, kThreads, 0, coal_stream(ctx)>>>(
      a->tile_ptr, a->tile_col, b->tile_ptr, b->tile_col, nullptr, nullptr, c_tile_ptr, c_tile_col,
      c_tile_row);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  return COAL_SUCCESS;
}

coal_status coal_spgemm_step2_cuda(coal_ctx ctx, const struct coal_tile_dev *a,
                                   const struct coal_tile_dev *b, int32_t ntiles,
                                   const int32_t *c_tile_row, const int32_t *c_tile_col,
                                   uint16_t *c_mask, uint8_t *c_row_ptr, int32_t *cnt,
                                   unsigned long long *total) {
  if (ntiles == 0) return COAL_SUCCESS;
  step2_kernel<<<grid_of(ntiles, kWarpsPerCta), kWarpsPerCta * 32, 0, coal_stream(ctx)>>>(
      ntiles, c_tile_row, c_tile_col, a->tile_ptr, a->tile_col, a->tile_nnz, a->row_ptr, a->mask,
      a->idx, b->csc_ptr, b->csc_row, b->csc_id, b->mask, c_mask, c_row_ptr, cnt, total);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  return COAL_SUCCESS;
}

coal_status coal_spgemm_row_len_cuda(coal_ctx ctx, int32_t nrows, const int32_t *c_tile_ptr,
                                     const uint16_t *c_mask, int32_t *len) {
  if (nrows == 0) return COAL_SUCCESS;
  row_len_kernel<<<grid_of(nrows, COAL_CUDA_CTA), COAL_CUDA_CTA, 0, coal_stream(ctx)>>>(
      nrows, c_tile_ptr, c_mask, len);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  return COAL_SUCCESS;
}

coal_status coal_spgemm_row_fill_cuda(coal_ctx ctx, int32_t nrows, const int32_t *c_tile_ptr,
                                      const int32_t *c_tile_col, const uint16_t *c_mask,
                                      const int32_t *rowptr, int32_t *colind, int32_t *pos) {
  if (nrows == 0) return COAL_SUCCESS;
  row_fill_kernel<<<grid_of(nrows, COAL_CUDA_CTA), COAL_CUDA_CTA, 0, coal_stream(ctx)>>>(
      nrows, c_tile_ptr, c_tile_col, c_mask, rowptr, colind, pos);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  return COAL_SUCCESS;
}

coal_status coal_spgemm_step3_cuda(coal_ctx ctx, coal_dtype dt, const struct coal_tile_dev *a,
                                   const struct coal_tile_dev *b, const struct coal_spgemm_cuda *d,
                                   void *cval, int dense_threshold) {
  if (d->ntiles == 0 || d->nnz == 0) return COAL_SUCCESS;
  S3Args g;
  g.ntiles = d->ntiles;
  g.c_row = d->c_tile_row, g.c_col = d->c_tile_col, g.c_nnz = d->c_tile_nnz, g.c_pos = d->c_pos;
  g.c_rp = d->c_row_ptr, g.c_mask = d->c_mask;
  g.a_ptr = a->tile_ptr, g.a_col = a->tile_col, g.a_nnz = a->tile_nnz;
  g.a_rp = a->row_ptr, g.a_idx = a->idx, g.a_mask = a->mask, g.a_val = a->val;
  g.b_cptr = b->csc_ptr, g.b_crow = b->csc_row, g.b_cid = b->csc_id, g.b_nnz = b->tile_nnz;
  g.b_rp = b->row_ptr, g.b_idx = b->idx, g.b_mask = b->mask, g.b_val = b->val;
  g.cval = cval;
  /* the sparse accumulator holds at most 8 nonzeros per lane: 256 per tile */
  g.threshold = dense_threshold < kTile * kTile ? dense_threshold : kTile * kTile;
  const unsigned grid = grid_of(d->ntiles, kWarpsPerCta);
  if (dt == COAL_F64)
    step3_kernel<double><<<grid, kWarpsPerCta * 32, 0, coal_stream(ctx)>>>(g);
  else
    step3_kernel<float><<<grid, kWarpsPerCta * 32, 0, coal_stream(ctx)>>>(g);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  return COAL_SUCCESS;
}

coal_status coal_spgemm_gather_cuda(coal_ctx ctx, coal_dtype dt, int64_t n, const int32_t *map,
                                    const void *src, void *dst) {
  if (n == 0) return COAL_SUCCESS;
  int64_t g = (n + COAL_CUDA_CTA - 1) / COAL_CUDA_CTA, cap = (int64_t)ctx->cuda->sm_count * 32;
  if (g > cap) g = cap;
  if (dt == COAL_F64)
    gather_kernel<double><<<(unsigned)g, COAL_CUDA_CTA, 0, coal_stream(ctx)>>>(
        n, map, (const double *)src, (double *)dst);
  else
    gather_kernel<float><<<(unsigned)g, COAL_CUDA_CTA, 0, coal_stream(ctx)>>>(
        n, map, (const float *)src, (float *)dst);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  return COAL_SUCCESS;
}
