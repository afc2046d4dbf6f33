/* Sorted rows of the row-wise SpGEMM (kernels/cuda/spgemm_rows.cu, its only includer): the
 * symbolic and numeric kernels for rows of at most kSortMaxProducts intermediate products. */
#ifndef COAL_CUDA_SPGEMM_SORTED_CUH
#define COAL_CUDA_SPGEMM_SORTED_CUH

#include <stdint.h>

namespace {

constexpr int kSortCta = 256; /* threads per CTA */
constexpr int kSortBins = 5;  /* sorted rows of at most 8, 16, 32, 64, 128 products */
/* at most 8 << (kSortBins - 1) products, and B at most 2^kSortColBits columns (a numeric key is
 * column << kSortPBits | product) */
constexpr int kSortMaxProducts = 8 << (kSortBins - 1);
constexpr int kSortPBits = 7;
constexpr int kSortColBits = 24;
static_assert(kSortMaxProducts <= (1 << kSortPBits) && kSortColBits + kSortPBits < 32, "keys");

/* ---- sorted rows ------------------------------------------------------------------------------
 * Rows of at most 128 products: a group of G lanes per row. Staging: the group's lanes take
 * the entries of the row of A (G at a time); a scan of B's row lengths numbers the products
 * p = 0, 1, ... in the order of the row of A, and each lane writes the keys of its row of B to
 * shared memory. Each lane then holds R keys (element e = lane * R + s, G * R >= products,
 * unused ones = kNoKey) and the group sorts them with a bitonic network (in-register steps
 * where the partner is in the same lane, shuffles otherwise), so equal columns end up side by
 * side. Symbolic keys are columns and the first element of each run is counted. Numeric keys
 * are column << kSortPBits | p, so a run lists its products in ascending p, i.e. ascending
 * entry of A: the first lane of a run sums them in that order from 0.0 (in double, no fused
 * multiply-add), as Gustavson does, and writes the entry at its rank (columns ascending). */
constexpr uint32_t kNoKey = 0xffffffffu;

constexpr int ilog2(int x) { return x <= 1 ? 0 : 1 + ilog2(x / 2); }

/* lanes per row (G) and keys per lane (R) of sorted bin B: 8, 16, 32, 64, 128 products */
template <int B> struct SortShape;
template <> struct SortShape<0> { static constexpr int G = 4, R = 2; };
template <> struct SortShape<1> { static constexpr int G = 4, R = 4; };
template <> struct SortShape<2> { static constexpr int G = 8, R = 4; };
template <> struct SortShape<3> { static constexpr int G = 8, R = 8; };
template <> struct SortShape<4> { static constexpr int G = 16, R = 8; };
static_assert(SortShape<kSortBins - 1>::G * SortShape<kSortBins - 1>::R == kSortMaxProducts,
              "the last sorted bin holds the most products");

template <int G, int R>
__device__ __forceinline__ void group_bitonic(uint32_t (&v)[R], int lane, unsigned gmask) {
#pragma unroll
  for (int lk = 1; lk <= ilog2(G * R); lk++) {
    const int k = 1 << lk;
#pragma unroll
    for (int lj = lk - 1; lj >= 0; lj--) {
      const int j = 1 << lj;
      if (j < R) { /* partner in the same lane */
#pragma unroll
        for (int s = 0; s < R; s++) {
          if (s & j) continue;
          const bool asc = ((lane * R + s) & k) == 0;
          const uint32_t x = v[s], y = v[s | j];
          const uint32_t lo = x < y ? x : y, hi = x < y ? y : x;
          v[s] = asc ? lo : hi;
          v[s | j] = asc ? hi : lo;
        }
      } else { /* partner lane ^ (j / R), same register */
        const int lj2 = j / R;
        const bool lower = (lane & lj2) == 0;
#pragma unroll
        for (int s = 0; s < R; s++) {
          const bool asc = ((lane * R + s) & k) == 0;
          const uint32_t y = __shfl_xor_sync(gmask, v[s], lj2, G);
          v[s] = lower == asc ? (v[s] < y ? v[s] : y) : (v[s] < y ? y : v[s]);
        }
      }
    }
  }
}

/* Stages the keys of row i in keys[0 .. G * R) (NUM: products' values in vals[p]), then loads
 * and sorts the lane's R keys. */
template <typename T, int G, int R, bool NUM>
__device__ __forceinline__ void
sort_row(int32_t i, int lane, unsigned gmask, const int32_t *__restrict__ arp,
         const int32_t *__restrict__ aci, const T *__restrict__ av, const int32_t *__restrict__ brp,
         const int32_t *__restrict__ bci, const T *__restrict__ bv, uint32_t *keys, double *vals,
         uint32_t (&key)[R]) {
  const int32_t a0 = arp[i], a1 = arp[i + 1];
  int32_t base = 0;
  for (int32_t pc = a0; pc < a1; pc += G) {
    int32_t bs = 0, bl = 0;
    double a = 0.0;
    if (pc + lane < a1) {
      const int32_t k = aci[pc + lane];
      bs = brp[k], bl = brp[k + 1] - bs;
      if (NUM) a = (double)av[pc + lane];
    }
    int32_t inc = bl;
#pragma unroll
    for (int o = 1; o < G; o <<= 1) {
      const int32_t y = __shfl_up_sync(gmask, inc, o, G);
      if (lane >= o) inc += y;
    }
    uint32_t p = (uint32_t)(base + inc - bl);
    for (int32_t q = bs; q < bs + bl; q++, p++) {
      const uint32_t j = (uint32_t)bci[q];
      if (NUM) {
        vals[p] = __dmul_rn(a, (double)bv[q]);
        keys[p] = j << kSortPBits | p;
      } else {
        keys[p] = j;
      }
    }
    base += __shfl_sync(gmask, inc, G - 1, G);
  }
  for (int p = base + lane; p < G * R; p += G) keys[p] = kNoKey;
  __syncwarp(gmask);
#pragma unroll
  for (int s = 0; s < R; s++) key[s] = keys[lane * R + s];
  group_bitonic<G, R>(key, lane, gmask);
}

/* Bit s set: sorted element lane * R + s starts a run of equal keys >> SHIFT. */
template <int G, int R, int SHIFT>
__device__ __forceinline__ unsigned run_heads(const uint32_t (&key)[R], int lane, unsigned gmask) {
  const uint32_t before = __shfl_up_sync(gmask, key[R - 1], 1, G);
  unsigned h = 0;
#pragma unroll
  for (int s = 0; s < R; s++) {
    const uint32_t prev = s ? key[s - 1] : before;
    const bool first = lane == 0 && s == 0;
    if (key[s] != kNoKey && (first || (key[s] >> SHIFT) != (prev >> SHIFT))) h |= 1u << s;
  }
  return h;
}

template <int G> __device__ __forceinline__ unsigned group_mask() {
  return G == 32 ? 0xffffffffu : ((1u << G) - 1u) << (threadIdx.x & 31 & ~(G - 1));
}

template <int B>
__global__ __launch_bounds__(kSortCta, 4) void sym_sort_kernel(
    int32_t nrows, const int32_t *__restrict__ rows, const int32_t *__restrict__ arp,
    const int32_t *__restrict__ aci, const int32_t *__restrict__ brp,
    const int32_t *__restrict__ bci, int32_t *__restrict__ len) {
  constexpr int G = SortShape<B>::G, R = SortShape<B>::R, groups = kSortCta / G;
  __shared__ uint32_t s_keys[groups][G * R];
  const int lane = threadIdx.x % G, g = threadIdx.x / G;
  const unsigned gmask = group_mask<G>();
  for (int64_t r = (int64_t)blockIdx.x * groups + g; r < nrows; r += (int64_t)gridDim.x * groups) {
    const int32_t i = rows ? rows[r] : (int32_t)r;
    uint32_t key[R];
    sort_row<double, G, R, false>(i, lane, gmask, arp, aci, nullptr, brp, bci, nullptr, s_keys[g],
                                  nullptr, key);
    int c = __popc(run_heads<G, R, 0>(key, lane, gmask));
#pragma unroll
    for (int o = G / 2; o > 0; o >>= 1) c += __shfl_down_sync(gmask, c, o, G);
    if (lane == 0) len[i] = c;
    __syncwarp(gmask);
  }
}

template <typename T, int B>
__global__ __launch_bounds__(kSortCta, 4) void num_sort_kernel(
    int32_t nrows, const int32_t *__restrict__ rows, const int32_t *__restrict__ arp,
    const int32_t *__restrict__ aci, const T *__restrict__ av, const int32_t *__restrict__ brp,
    const int32_t *__restrict__ bci, const T *__restrict__ bv, const int32_t *__restrict__ crp,
    int32_t *__restrict__ cci, T *__restrict__ cv) {
  constexpr int G = SortShape<B>::G, R = SortShape<B>::R, N = G * R, groups = kSortCta / G;
  __shared__ double s_vals[groups][N];
  __shared__ uint32_t s_keys[groups][N];
  const int lane = threadIdx.x % G, g = threadIdx.x / G;
  const unsigned gmask = group_mask<G>();
  uint32_t *keys = s_keys[g];
  const double *vals = s_vals[g];
  for (int64_t r = (int64_t)blockIdx.x * groups + g; r < nrows; r += (int64_t)gridDim.x * groups) {
    const int32_t i = rows ? rows[r] : (int32_t)r;
    uint32_t key[R];
    sort_row<T, G, R, true>(i, lane, gmask, arp, aci, av, brp, bci, bv, keys, s_vals[g], key);
    const unsigned h = run_heads<G, R, kSortPBits>(key, lane, gmask);
#pragma unroll
    for (int s = 0; s < R; s++) keys[lane * R + s] = key[s]; /* each lane its own elements */
    int below = __popc(h); /* heads of this lane and the ones below, then exclusive */
#pragma unroll
    for (int o = 1; o < G; o <<= 1) {
      const int y = __shfl_up_sync(gmask, below, o, G);
      if (lane >= o) below += y;
    }
    below -= __popc(h);
    __syncwarp(gmask);
    const int32_t c0 = crp[i];
#pragma unroll
    for (int s = 0; s < R; s++) {
      if (!(h >> s & 1u)) continue;
      const uint32_t col = key[s] >> kSortPBits;
      double acc = 0.0;
      for (int e = lane * R + s; e < N && keys[e] >> kSortPBits == col; e++)
        acc = __dadd_rn(acc, vals[keys[e] & ((1u << kSortPBits) - 1u)]);
      const int32_t o = c0 + below + __popc(h & ((1u << s) - 1u));
      cci[o] = (int32_t)col;
      cv[o] = (T)acc;
    }
    __syncwarp(gmask);
  }
}

} // namespace

#endif
