/* Row-wise (Gustavson) sparse x sparse product on the GPU: the CUDA product for matrices
 * whose 16 x 16 tiles are sparse (stencils in natural order, graphs, aggregation
 * prolongators), where the tile layout of C lists many near-empty tiles.
 *
 * C = A*B, A m x k, B k x n, device CSR in, device CSR out (C is a device-only matrix: its host
 * copy is made on demand, coal_mat_host; its arrays come from the context's pool). Two passes
 * over the rows of A, rows binned by ub[i], the products of row i (sum of B's row lengths over
 * row i of A):
 *  - sorted rows (ub <= 128, B at most 2^24 columns): a group of 4..16 lanes per row stages
 *    the row's products in shared memory and sorts their keys across the group's registers
 *    (bitonic network, kernels/cuda/spgemm_sorted.cuh). Symbolic counts the distinct
 *    columns; numeric sums each run of equal columns in ascending k and writes C's row in
 *    column order.
 *  - hash rows (128 < ub <= 1024, or wider B): hash tables of 16..2048 slots in shared memory
 *    (at most half full); a group of G lanes per row inserts the columns (lanes over the
 *    entries of row i of A, each walking its row of B) and counts the new ones. Numeric: rows
 *    binned again by their length in C; a group walks row i of A in order and its lanes take
 *    the entries of the row of B (distinct columns), so each entry of C is summed in double in
 *    ascending k with no atomics (__syncwarp orders the steps), then written in column order
 *    (rank of its key among the table's keys).
 *  - long rows (ub > 1024): a CTA per row sets the row's columns in a bitmap over C's columns
 *    (in shared memory up to 384000 columns, else in global memory, 64 rows in flight) and
 *    counts them; numeric reads the columns from the bitmap in order, and adds the products
 *    with double atomics into a dense row of sums in shared memory indexed by column (up to
 *    20480 columns) or into a scratch row found by binary search (global memory). The
 *    summation order varies with the run there (error within a few ulps of the row's sum of
 *    |a_ik b_kj|).
 * Sorted and hash rows give bitwise the host Gustavson product's values (double sums in
 * ascending k, no fused multiply-add). Between the passes, row lengths are scanned into C's
 * row offsets; the host reads the bin sizes (one wait) and nnz(C) (one wait) and allocates C.
 * When every row is a sorted row the numeric bins are the symbolic ones (no third wait).
 * G, the lanes of a hash group, follows the mean length of B's rows (4..32); groups of one CTA
 * share its shared memory (at most 48 KB).
 *
 * State kept for numeric-only recomputation: the numeric bins (row lists), the long-row
 * scratch. Temporary memory: ub and bins, 4 B per row each, the scan workspace, the global
 * bitmaps (kLongSlots x n bits) and the scratch where used; reported in stats.temp_bytes. */
#include "spgemm_rows.cuh"
#include "spgemm_sorted.cuh"

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>
#include <string.h>

namespace {
using coal_spgemm_rows_dev::Rows;
using namespace coal_spgemm_dev; /* grid_of, cuda_status, ralloc, rfree, rscan, insert */

constexpr int kCta = 256;
constexpr int kMinTable = 16; /* slots of the smallest table (bin kSortBins) */
constexpr int kShortBins = 8; /* tables of 16 .. 2048 slots */
constexpr int kLongBin = kSortBins + kShortBins;
constexpr int kBins = kLongBin + 1;
static_assert(sizeof(((Rows *)0)->num_count) == kBins * sizeof(int32_t), "bins");
constexpr int kMaxShortKey = (kMinTable << (kShortBins - 1)) / 2; /* 1024 */
constexpr int kLongSlots = 64; /* long rows in flight with bitmaps and scratch in global memory */
/* Long rows of a B with at most kSmemBitmapWords * 32 columns keep their column bitmap in
 * shared memory (47 KB), and at most kDenseCols columns their sums in a dense shared-memory
 * row (160 KB, within the opt-in limit of sm_80 and sm_90): no global scratch, no search, and
 * as many rows in flight as the GPU holds CTAs (up to kLongCtas). */
constexpr int kSmemBitmapWords = 12000;
constexpr int kDenseCols = 20480;
constexpr int kLongCtas = 1024;
constexpr int kSmemBudget = 24 * 1024; /* per CTA: 9 CTAs fit an SM */

/* Binning key of a row: products (>= 0) for the hash tables, -1 - products for a sorted row. */
__device__ __forceinline__ int bin_of(int key) {
  if (key < 0) {
    int b = 0;
    while ((8 << b) < -1 - key) b++;
    return b;
  }
  if (key > kMaxShortKey) return kLongBin;
  int b = 0;
  while ((kMinTable << b) < 2 * key) b++;
  return kSortBins + b;
}

/* ---- products per row and binning ---------------------------------------------------------- */
/* ub[i]: the binning key of row i (bin_of); sortable: B's columns fit a sort key. */
__global__ void ub_kernel(int32_t m, const int32_t *__restrict__ arp,
                          const int32_t *__restrict__ aci, const int32_t *__restrict__ brp,
                          int sortable, int32_t *__restrict__ ub) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= m) return;
  int64_t s = 0;
  for (int32_t p = arp[i]; p < arp[i + 1]; p++) {
    const int32_t k = aci[p];
    s += brp[k + 1] - brp[k];
  }
  if (sortable && s <= kSortMaxProducts)
    ub[i] = -1 - (int32_t)s;
  else
    ub[i] = (int32_t)(s < INT32_MAX ? s : INT32_MAX);
}

/* Numeric binning key: sorted rows keep theirs, the others bin by their length in C. */
__global__ void num_key_kernel(int32_t m, const int32_t *__restrict__ len,
                               int32_t *__restrict__ key) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < m && key[i] >= 0) key[i] = len[i];
}

/* cnt[b] += rows of this CTA in bin b; base[blockIdx][b] = the CTA's offset inside bin b (in
 * CTA order after the scan kernel): rows of one CTA stay in ascending order in their bin. */
__global__ void bin_count_kernel(int32_t m, const int32_t *__restrict__ key,
                                 int32_t *__restrict__ cta_cnt) {
  __shared__ int c[kBins];
  if (threadIdx.x < kBins) c[threadIdx.x] = 0;
  __syncthreads();
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < m) atomicAdd(&c[bin_of(key[i])], 1);
  __syncthreads();
  if (threadIdx.x < kBins) cta_cnt[(size_t)threadIdx.x * gridDim.x + blockIdx.x] = c[threadIdx.x];
}

/* After an exclusive scan of cta_cnt (bin-major), rows go to their place: the rank of a row
 * among the rows of its bin in its CTA by a CTA-wide scan of the bin flags. CTA 0 also copies
 * where each bin starts (and the total) to starts[0 .. kBins], for the host. */
__global__ void bin_fill_kernel(int32_t m, const int32_t *__restrict__ key,
                                const int32_t *__restrict__ cta_off, int32_t *__restrict__ rows,
                                int32_t *__restrict__ starts) {
  typedef cub::BlockScan<int, kCta> Scan;
  __shared__ typename Scan::TempStorage tmp;
  if (blockIdx.x == 0 && threadIdx.x <= kBins)
    starts[threadIdx.x] = cta_off[(size_t)threadIdx.x * gridDim.x];
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const int b = i < m ? bin_of(key[i]) : -1;
  for (int bb = 0; bb < kBins; bb++) {
    /* bins no row is in are skipped (the same test on every thread of the CTA) */
    if (cta_off[(size_t)(bb + 1) * gridDim.x] == cta_off[(size_t)bb * gridDim.x]) continue;
    int flag = b == bb, rank = 0, total = 0;
    Scan(tmp).ExclusiveSum(flag, rank, total);
    __syncthreads();
    if (flag) rows[cta_off[(size_t)bb * gridDim.x + blockIdx.x] + rank] = (int32_t)i;
    (void)total;
  }
}

/* *out = max over the listed rows of their length in C (out zeroed before). */
__global__ void maxlen_kernel(int32_t n, const int32_t *__restrict__ rows,
                              const int32_t *__restrict__ crp, int32_t *__restrict__ out) {
  const int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (r < n) atomicMax(out, crp[rows[r] + 1] - crp[rows[r]]);
}

/* ---- symbolic: unique columns per row ------------------------------------------------------ */
template <int G>
__global__ __launch_bounds__(kCta) void sym_short_kernel(
    int32_t nrows, const int32_t *__restrict__ rows, int ts, const int32_t *__restrict__ arp,
    const int32_t *__restrict__ aci, const int32_t *__restrict__ brp,
    const int32_t *__restrict__ bci, int32_t *__restrict__ len) {
  extern __shared__ int smem[];
  const int groups = blockDim.x / G, g = threadIdx.x / G, lane = threadIdx.x % G;
  const unsigned gmask =
      G == 32 ? 0xffffffffu : (((1u << G) - 1u) << (threadIdx.x & 31 & ~(G - 1)));
  int *keys = smem + (size_t)g * (ts + 1); /* odd stride: groups on different banks */
  for (int64_t r = (int64_t)blockIdx.x * groups + g; r < nrows; r += (int64_t)gridDim.x * groups) {
    const int32_t i = rows ? rows[r] : (int32_t)r;
    for (int s = lane; s < ts; s += G) keys[s] = kEmpty;
    __syncwarp(gmask);
    int cnt = 0;
    for (int32_t p = arp[i] + lane; p < arp[i + 1]; p += G) {
      const int32_t k = aci[p];
      for (int32_t q = brp[k]; q < brp[k + 1]; q++) {
        bool fresh;
        insert(keys, ts, bci[q], &fresh);
        cnt += fresh;
      }
    }
#pragma unroll
    for (int o = G / 2; o > 0; o /= 2) cnt += __shfl_down_sync(gmask, cnt, o, G);
    if (lane == 0) len[i] = cnt;
    __syncwarp(gmask);
  }
}

/* The columns of row i of C as bits of bm: a warp per entry of row i of A, its lanes over the
 * row of B. */
__device__ __forceinline__ void set_row_bits(int32_t i, const int32_t *__restrict__ arp,
                                             const int32_t *__restrict__ aci,
                                             const int32_t *__restrict__ brp,
                                             const int32_t *__restrict__ bci, unsigned *bm) {
  for (int32_t p = arp[i] + (int32_t)(threadIdx.x >> 5); p < arp[i + 1]; p += kCta / 32) {
    const int32_t k = aci[p];
    for (int32_t q = brp[k] + (int32_t)(threadIdx.x & 31); q < brp[k + 1]; q += 32) {
      const int32_t j = bci[q];
      atomicOr(&bm[j >> 5], 1u << (j & 31));
    }
  }
}

/* The CTA's bitmap of a long row: in shared memory (dynamic, zeroed here) or its slot of the
 * global bitmaps (zero between uses). */
template <bool SMEM>
__device__ __forceinline__ unsigned *long_bitmap(unsigned *bitmaps, int32_t nwords) {
  extern __shared__ unsigned sbm[];
  if (SMEM) {
    for (int32_t w = threadIdx.x; w < nwords; w += blockDim.x) sbm[w] = 0u;
    __syncthreads();
  }
  return SMEM ? sbm : bitmaps + (size_t)blockIdx.x * nwords;
}

/* Long rows: a CTA per row at a time, columns set in its bitmap (words of 32 columns), then
 * counted; the count pass clears the bitmap for the next row. */
template <bool SMEM>
__global__ __launch_bounds__(kCta) void sym_long_kernel(
    int32_t nrows, const int32_t *__restrict__ rows, int32_t nwords, unsigned *__restrict__ bitmaps,
    const int32_t *__restrict__ arp, const int32_t *__restrict__ aci,
    const int32_t *__restrict__ brp, const int32_t *__restrict__ bci, int32_t *__restrict__ len) {
  unsigned *bm = long_bitmap<SMEM>(bitmaps, nwords);
  for (int32_t r = blockIdx.x; r < nrows; r += gridDim.x) {
    const int32_t i = rows[r];
    set_row_bits(i, arp, aci, brp, bci, bm);
    __syncthreads();
    const int c = count_clear_bits<kCta>(bm, nwords);
    if (threadIdx.x == 0) len[i] = c;
    __syncthreads();
  }
}

/* ---- numeric -------------------------------------------------------------------------------- */
template <typename T, int G>
__global__ __launch_bounds__(kCta) void num_short_kernel(
    int32_t nrows, const int32_t *__restrict__ rows, int ts, const int32_t *__restrict__ arp,
    const int32_t *__restrict__ aci, const T *__restrict__ av, const int32_t *__restrict__ brp,
    const int32_t *__restrict__ bci, const T *__restrict__ bv, const int32_t *__restrict__ crp,
    int32_t *__restrict__ cci, T *__restrict__ cv) {
  extern __shared__ double dsmem[];
  const int groups = blockDim.x / G, g = threadIdx.x / G, lane = threadIdx.x % G;
  const int wshift = threadIdx.x & 31 & ~(G - 1);
  const unsigned gmask = G == 32 ? 0xffffffffu : (((1u << G) - 1u) << wshift);
  /* per group: vals[ts + 1] (double), keys[ts + 1], ckeys[ts / 2] (the compacted keys); odd
   * strides keep the groups of a warp on different banks */
  double *vals = dsmem + (size_t)g * (ts + 1);
  int *keys = (int *)(dsmem + (size_t)groups * (ts + 1)) + (size_t)g * (ts + 1);
  int *ckeys = (int *)(dsmem + (size_t)groups * (ts + 1)) + (size_t)groups * (ts + 1) +
               (size_t)g * (ts / 2 + 1);
  for (int64_t r = (int64_t)blockIdx.x * groups + g; r < nrows; r += (int64_t)gridDim.x * groups) {
    const int32_t i = rows ? rows[r] : (int32_t)r;
    for (int s = lane; s < ts; s += G) keys[s] = kEmpty;
    __syncwarp(gmask);
    const int32_t a0 = arp[i], a1 = arp[i + 1];
    for (int32_t pc = a0; pc < a1; pc += G) {
      /* a chunk of row i of A: lane e holds entry pc + e */
      int32_t bs = 0, be = 0;
      double a = 0.0;
      if (pc + lane < a1) {
        const int32_t k = aci[pc + lane];
        bs = brp[k], be = brp[k + 1], a = (double)av[pc + lane];
      }
      const int n = a1 - pc < G ? a1 - pc : G;
      /* the first G entries of the row of B of entry e + 1 are loaded while entry e is added
       * (the steps are serial: one latency per step otherwise) */
      int32_t s0n = __shfl_sync(gmask, bs, 0, G), s1n = __shfl_sync(gmask, be, 0, G);
      int32_t jn = 0;
      double bn = 0.0;
      if (s0n + lane < s1n) jn = bci[s0n + lane], bn = (double)bv[s0n + lane];
      for (int e = 0; e < n; e++) {
        const int32_t s0 = s0n, s1 = s1n, jc = jn;
        const double ae = __shfl_sync(gmask, a, e, G), bc = bn;
        if (e + 1 < n) {
          s0n = __shfl_sync(gmask, bs, e + 1, G), s1n = __shfl_sync(gmask, be, e + 1, G);
          if (s0n + lane < s1n) jn = bci[s0n + lane], bn = (double)bv[s0n + lane];
        }
        for (int32_t q = s0 + lane; q < s1; q += G) {
          bool fresh;
          const int32_t j = q == s0 + lane ? jc : bci[q];
          const double b = q == s0 + lane ? bc : (double)bv[q];
          const int s = insert(keys, ts, j, &fresh);
          /* from 0.0 when fresh, as Gustavson's accumulator */
          vals[s] = __dadd_rn(fresh ? 0.0 : vals[s], __dmul_rn(ae, b));
        }
        __syncwarp(gmask);
      }
    }
    /* compact the keys (ballot order), sort them (bitonic network in shared memory over the
     * next power of two, padded with INT32_MAX; at most ts / 2 since the table is at most half
     * full), then write the entries in column order, each value found by its key's probe */
    int nnz = 0;
    for (int base = 0; base < ts; base += G) {
      const bool occ = base + lane < ts && keys[base + lane] != kEmpty; /* G may exceed ts */
      const unsigned m =
          (__ballot_sync(gmask, occ) >> wshift) & (G == 32 ? 0xffffffffu : (1u << G) - 1u);
      if (occ) ckeys[nnz + __popc(m & ((1u << lane) - 1u))] = keys[base + lane];
      nnz += __popc(m);
    }
    bitonic_sort(ckeys, nnz, lane, G, [&] { __syncwarp(gmask); });
    const int32_t c0 = crp[i];
    for (int t = lane; t < nnz; t += G) {
      const int j = ckeys[t];
      unsigned s = hash_of(j, ts);
      while (keys[s] != j) s = (s + 1) & (unsigned)(ts - 1);
      cci[c0 + t] = j;
      cv[c0 + t] = (T)vals[s];
    }
    __syncwarp(gmask);
  }
}

/* Long rows, columns: the bitmap is set again and read in word order (a CTA-wide scan of the
 * words' popcounts places each column), clearing it. */
template <bool SMEM>
__global__ __launch_bounds__(kCta) void cols_long_kernel(
    int32_t nrows, const int32_t *__restrict__ rows, int32_t nwords, unsigned *__restrict__ bitmaps,
    const int32_t *__restrict__ arp, const int32_t *__restrict__ aci,
    const int32_t *__restrict__ brp, const int32_t *__restrict__ bci,
    const int32_t *__restrict__ crp, int32_t *__restrict__ cci) {
  typedef cub::BlockScan<int, kCta> Scan;
  __shared__ typename Scan::TempStorage tmp;
  unsigned *bm = long_bitmap<SMEM>(bitmaps, nwords);
  for (int32_t r = blockIdx.x; r < nrows; r += gridDim.x) {
    const int32_t i = rows[r];
    set_row_bits(i, arp, aci, brp, bci, bm);
    __syncthreads();
    int32_t base = crp[i];
    for (int32_t w0 = 0; w0 < nwords; w0 += blockDim.x) {
      const int32_t w = w0 + threadIdx.x;
      unsigned bits = w < nwords ? bm[w] : 0u;
      int off = 0, total = 0;
      Scan(tmp).ExclusiveSum(__popc(bits), off, total);
      if (w < nwords) bm[w] = 0u;
      for (int32_t o = base + off; bits; bits &= bits - 1u)
        cci[o++] = (w << 5) + __ffs((int)bits) - 1;
      base += total;
      __syncthreads();
    }
  }
}

/* Long rows, values: products added into the row's scratch (double) at the column's place. */
template <typename T>
__global__ __launch_bounds__(kCta) void num_long_kernel(
    int32_t nrows, const int32_t *__restrict__ rows, const int32_t *__restrict__ arp,
    const int32_t *__restrict__ aci, const T *__restrict__ av, const int32_t *__restrict__ brp,
    const int32_t *__restrict__ bci, const T *__restrict__ bv, const int32_t *__restrict__ crp,
    const int32_t *__restrict__ cci, double *__restrict__ scratch, int32_t scratch_len,
    T *__restrict__ cv) {
  double *acc = scratch + (size_t)blockIdx.x * scratch_len;
  for (int32_t r = blockIdx.x; r < nrows; r += gridDim.x) {
    const int32_t i = rows[r], c0 = crp[i], len = crp[i + 1] - c0;
    for (int32_t s = threadIdx.x; s < len; s += blockDim.x) acc[s] = 0.0;
    __syncthreads();
    for (int32_t p = arp[i] + (int32_t)(threadIdx.x >> 5); p < arp[i + 1]; p += kCta / 32) {
      const int32_t k = aci[p];
      const double a = (double)av[p];
      for (int32_t q = brp[k] + (int32_t)(threadIdx.x & 31); q < brp[k + 1]; q += 32) {
        const int32_t j = bci[q];
        int32_t lo = 0, hi = len - 1;
        while (lo < hi) {
          const int32_t mid = (lo + hi) >> 1;
          if (cci[c0 + mid] < j)
            lo = mid + 1;
          else
            hi = mid;
        }
        atomicAdd(&acc[lo], __dmul_rn(a, (double)bv[q]));
      }
    }
    __syncthreads();
    for (int32_t s = threadIdx.x; s < len; s += blockDim.x) cv[c0 + s] = (T)acc[s];
    __syncthreads();
  }
}

/* Long rows, values, B of at most kDenseCols columns: the products are added (atomically) into
 * a dense row of sums in shared memory indexed by column, read back at C's columns, which
 * clears them for the next row. */
template <typename T>
__global__ __launch_bounds__(kCta) void num_long_dense_kernel(
    int32_t nrows, const int32_t *__restrict__ rows, int32_t ncols, const int32_t *__restrict__ arp,
    const int32_t *__restrict__ aci, const T *__restrict__ av, const int32_t *__restrict__ brp,
    const int32_t *__restrict__ bci, const T *__restrict__ bv, const int32_t *__restrict__ crp,
    const int32_t *__restrict__ cci, T *__restrict__ cv) {
  extern __shared__ double acc[];
  for (int32_t j = threadIdx.x; j < ncols; j += blockDim.x) acc[j] = 0.0;
  __syncthreads();
  for (int32_t r = blockIdx.x; r < nrows; r += gridDim.x) {
    const int32_t i = rows[r];
    for (int32_t p = arp[i] + (int32_t)(threadIdx.x >> 5); p < arp[i + 1]; p += kCta / 32) {
      const int32_t k = aci[p];
      const double a = (double)av[p];
      for (int32_t q = brp[k] + (int32_t)(threadIdx.x & 31); q < brp[k + 1]; q += 32)
        atomicAdd(&acc[bci[q]], __dmul_rn(a, (double)bv[q]));
    }
    __syncthreads();
    const int32_t c0 = crp[i], len = crp[i + 1] - c0;
    for (int32_t s = threadIdx.x; s < len; s += blockDim.x) {
      const int32_t j = cci[c0 + s];
      cv[c0 + s] = (T)acc[j];
      acc[j] = 0.0;
    }
    __syncthreads();
  }
}

/* ---- host side ------------------------------------------------------------------------------ */

/* rows[] ordered by bin of key[] (ascending row inside each CTA's share), counts[b] on the
 * host. Needs d->cta_cnt sized for ceil(m / kCta) * kBins + 1 entries. One wait (counts). */
coal_status bin_rows(coal_ctx ctx, Rows *d, int32_t m, const int32_t *key, int32_t *rows,
                     int32_t counts[kBins]) {
  cudaStream_t s = coal_stream(ctx);
  const unsigned nb = grid_of(m, kCta);
  const int64_t nc = (int64_t)nb * kBins;
  COAL_CALL(cuda_status(ctx, cudaMemsetAsync(d->cta_cnt + nc, 0, sizeof(int32_t), s), "bins"));
  bin_count_kernel<<<nb, kCta, 0, s>>>(m, key, d->cta_cnt);
  LAUNCHED(ctx, "bin count");
  COAL_CALL(rscan(ctx, &d->mem, d->cta_cnt, d->cta_off, nc + 1));
  /* bin b starts at cta_off[b * nb]; the last entry holds the total. The fill kernel gathers
   * them into cta_cnt (free after the scan), one copy brings them over. */
  int32_t *h = d->h_off;
  bin_fill_kernel<<<nb, kCta, 0, s>>>(m, key, d->cta_off, rows, d->cta_cnt);
  LAUNCHED(ctx, "bin fill");
  COAL_CALL(cuda_status(
      ctx, cudaMemcpyAsync(h, d->cta_cnt, sizeof(int32_t) * (kBins + 1), cudaMemcpyDeviceToHost, s),
      "bin offsets"));
  COAL_CALL(cuda_status(ctx, cudaStreamSynchronize(s), "bin offsets"));
  for (int b = 0; b < kBins; b++) counts[b] = h[b + 1] - h[b];
  return COAL_SUCCESS;
}

/* Shared memory of one group: symbolic keys[ts + 1]; numeric vals[ts + 1] (double),
 * keys[ts + 1], ckeys[ts / 2 + 1]. */
size_t sym_group_bytes(int ts) { return sizeof(int) * ((size_t)ts + 1); }
size_t num_group_bytes(int ts) {
  return sizeof(double) * ((size_t)ts + 1) + sizeof(int) * ((size_t)ts + 1 + (size_t)ts / 2 + 1);
}

int groups_per_cta(int g, size_t group_bytes) {
  int per = kCta / g;
  int fit = (int)(kSmemBudget / group_bytes);
  return fit < per ? (fit < 1 ? 1 : fit) : per;
}

template <int G>
coal_status launch_sym(coal_ctx ctx, int32_t n, const int32_t *rows, int ts, const Rows *d,
                       int32_t *len) {
  const int gpc = groups_per_cta(G, sym_group_bytes(ts));
  const size_t sm = (size_t)gpc * sym_group_bytes(ts);
  sym_short_kernel<G><<<grid_of(n, gpc), gpc * G, sm, coal_stream(ctx)>>>(
      n, rows, ts, d->arp, d->aci, d->brp, d->bci, len);
  LAUNCHED(ctx, "symbolic");
  return COAL_SUCCESS;
}

template <typename T, int G>
coal_status launch_num(coal_ctx ctx, int32_t n, const int32_t *rows, int ts, const Rows *d,
                       const int32_t *crp, int32_t *cci, void *cv) {
  const int gpc = groups_per_cta(G, num_group_bytes(ts));
  const size_t sm = (size_t)gpc * num_group_bytes(ts);
  num_short_kernel<T, G><<<grid_of(n, gpc), gpc * G, sm, coal_stream(ctx)>>>(
      n, rows, ts, d->arp, d->aci, (const T *)d->av, d->brp, d->bci, (const T *)d->bv, crp, cci,
      (T *)cv);
  LAUNCHED(ctx, "numeric");
  return COAL_SUCCESS;
}

/* Lanes of a hash group: a warp from 128 slots on (the steps over the row of A are serial, so
 * the row of B is taken G entries at a time), else by the mean length of B's rows. */
int lanes_for(const Rows *d, int ts) {
  if (ts >= 128) return 32;
  return d->lanes;
}

template <int B>
coal_status launch_sym_sort(coal_ctx ctx, int32_t n, const int32_t *rows, const Rows *d,
                            int32_t *len) {
  sym_sort_kernel<B><<<grid_of(n, kSortCta / SortShape<B>::G), kSortCta, 0, coal_stream(ctx)>>>(
      n, rows, d->arp, d->aci, d->brp, d->bci, len);
  LAUNCHED(ctx, "symbolic (sorted rows)");
  return COAL_SUCCESS;
}

template <typename T, int B>
coal_status launch_num_sort(coal_ctx ctx, int32_t n, const int32_t *rows, const Rows *d,
                            const int32_t *crp, int32_t *cci, void *cv) {
  num_sort_kernel<T, B><<<grid_of(n, kSortCta / SortShape<B>::G), kSortCta, 0, coal_stream(ctx)>>>(
      n, rows, d->arp, d->aci, (const T *)d->av, d->brp, d->bci, (const T *)d->bv, crp, cci,
      (T *)cv);
  LAUNCHED(ctx, "numeric (sorted rows)");
  return COAL_SUCCESS;
}

coal_status sym_bin(coal_ctx ctx, Rows *d, int b, int32_t n, const int32_t *rows, int32_t *len) {
  if (!n) return COAL_SUCCESS;
  switch (b) {
  case 0: return launch_sym_sort<0>(ctx, n, rows, d, len);
  case 1: return launch_sym_sort<1>(ctx, n, rows, d, len);
  case 2: return launch_sym_sort<2>(ctx, n, rows, d, len);
  case 3: return launch_sym_sort<3>(ctx, n, rows, d, len);
  case 4: return launch_sym_sort<4>(ctx, n, rows, d, len);
  default: break;
  }
  static_assert(kSortBins == 5, "sorted bins");
  if (b == kLongBin) {
    if (d->nwords <= kSmemBitmapWords)
      sym_long_kernel<true>
          <<<(unsigned)(n < kLongCtas ? n : kLongCtas), kCta, sizeof(unsigned) * (size_t)d->nwords,
             coal_stream(ctx)>>>(n, rows, d->nwords, NULL, d->arp, d->aci, d->brp, d->bci, len);
    else
      sym_long_kernel<false>
          <<<(unsigned)(n < kLongSlots ? n : kLongSlots), kCta, 0, coal_stream(ctx)>>>(
              n, rows, d->nwords, d->bitmaps, d->arp, d->aci, d->brp, d->bci, len);
    LAUNCHED(ctx, "symbolic (long rows)");
    return COAL_SUCCESS;
  }
  const int ts = kMinTable << (b - kSortBins);
  switch (lanes_for(d, ts)) {
  case 4: return launch_sym<4>(ctx, n, rows, ts, d, len);
  case 8: return launch_sym<8>(ctx, n, rows, ts, d, len);
  case 16: return launch_sym<16>(ctx, n, rows, ts, d, len);
  default: return launch_sym<32>(ctx, n, rows, ts, d, len);
  }
}

template <typename T>
coal_status num_bin(coal_ctx ctx, Rows *d, int b, int32_t n, const int32_t *rows,
                    const int32_t *crp, int32_t *cci, void *cv, int cols_long) {
  if (!n) return COAL_SUCCESS;
  switch (b) {
  case 0: return launch_num_sort<T, 0>(ctx, n, rows, d, crp, cci, cv);
  case 1: return launch_num_sort<T, 1>(ctx, n, rows, d, crp, cci, cv);
  case 2: return launch_num_sort<T, 2>(ctx, n, rows, d, crp, cci, cv);
  case 3: return launch_num_sort<T, 3>(ctx, n, rows, d, crp, cci, cv);
  case 4: return launch_num_sort<T, 4>(ctx, n, rows, d, crp, cci, cv);
  default: break;
  }
  cudaStream_t s = coal_stream(ctx);
  if (b == kLongBin) {
    const unsigned g = (unsigned)(n < kLongSlots ? n : kLongSlots);
    const unsigned gs = (unsigned)(n < kLongCtas ? n : kLongCtas);
    if (cols_long && d->nwords <= kSmemBitmapWords) {
      cols_long_kernel<true><<<gs, kCta, sizeof(unsigned) * (size_t)d->nwords, s>>>(
          n, rows, d->nwords, NULL, d->arp, d->aci, d->brp, d->bci, crp, cci);
      LAUNCHED(ctx, "columns (long rows)");
    } else if (cols_long) {
      cols_long_kernel<false><<<g, kCta, 0, s>>>(n, rows, d->nwords, d->bitmaps, d->arp, d->aci,
                                                 d->brp, d->bci, crp, cci);
      LAUNCHED(ctx, "columns (long rows)");
    }
    if (d->ncols <= kDenseCols) {
      const size_t sm = sizeof(double) * (size_t)d->ncols;
      COAL_CALL(cuda_status(ctx,
                            cudaFuncSetAttribute(num_long_dense_kernel<T>,
                                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                 (int)(sm > 48 * 1024 ? sm : 48 * 1024)),
                            "numeric (long rows)"));
      num_long_dense_kernel<T><<<gs, kCta, sm, s>>>(n, rows, d->ncols, d->arp, d->aci,
                                                    (const T *)d->av, d->brp, d->bci,
                                                    (const T *)d->bv, crp, cci, (T *)cv);
    } else {
      num_long_kernel<T><<<g, kCta, 0, s>>>(n, rows, d->arp, d->aci, (const T *)d->av, d->brp,
                                            d->bci, (const T *)d->bv, crp, cci, d->scratch,
                                            d->scratch_len, (T *)cv);
    }
    LAUNCHED(ctx, "numeric (long rows)");
    return COAL_SUCCESS;
  }
  const int ts = kMinTable << (b - kSortBins);
  switch (lanes_for(d, ts)) {
  case 4: return launch_num<T, 4>(ctx, n, rows, ts, d, crp, cci, cv);
  case 8: return launch_num<T, 8>(ctx, n, rows, ts, d, crp, cci, cv);
  case 16: return launch_num<T, 16>(ctx, n, rows, ts, d, crp, cci, cv);
  default: return launch_num<T, 32>(ctx, n, rows, ts, d, crp, cci, cv);
  }
}

/* The long rows' bitmaps in global memory (kLongSlots of them), zeroed. */
coal_status global_bitmaps(coal_ctx ctx, Rows *d) {
  const size_t bytes = sizeof(unsigned) * (size_t)d->nwords * kLongSlots;
  COAL_CALL(ralloc(ctx, &d->mem, bytes, (void **)&d->bitmaps));
  return cuda_status(ctx, cudaMemsetAsync(d->bitmaps, 0, bytes, coal_stream(ctx)), "bitmaps");
}

/* Current device CSR of A and B into d. */
coal_status operands(coal_spgemm p, Rows *d) {
  struct coal_mat_cuda *a = NULL, *b = NULL;
  COAL_CALL(device_operands(p, &a, &b));
  d->arp = a->rowptr, d->aci = a->colind, d->av = a->values;
  d->brp = b->rowptr, d->bci = b->colind, d->bv = b->values;
  return COAL_SUCCESS;
}

coal_status numeric_pass(coal_spgemm p, Rows *d, int cols_long) {
  coal_ctx ctx = p->ctx;
  struct coal_mat_cuda *c = NULL;
  COAL_CALL(coal_cuda_mat(p->C, &c));
  int32_t off = 0;
  for (int b = 0; b < kBins; b++) {
    const int32_t *rows = d->num_rows ? d->num_rows + off : NULL;
    COAL_CALL(p->A->dtype == COAL_F64 ? num_bin<double>(ctx, d, b, d->num_count[b], rows, c->rowptr,
                                                        c->colind, c->values, cols_long)
                                      : num_bin<float>(ctx, d, b, d->num_count[b], rows, c->rowptr,
                                                       c->colind, c->values, cols_long));
    off += d->num_count[b];
  }
  return COAL_SUCCESS;
}

} // namespace

void coal_spgemm_rows_release_cuda(coal_spgemm p) {
  Rows *d = (Rows *)p->dev;
  if (!d) return;
  coal_ctx ctx = p->ctx;
  coal_cuda_pool_free(ctx, d->num_rows), coal_cuda_pool_free(ctx, d->bitmaps),
      coal_cuda_pool_free(ctx, d->scratch);
  coal_cuda_pool_free(ctx, d->mem.scan_tmp), coal_cuda_pool_free(ctx, d->cta_cnt),
      coal_cuda_pool_free(ctx, d->cta_off);
  coal_free(d);
  p->dev = NULL;
}

coal_status coal_spgemm_rows_symbolic_cuda(coal_spgemm p) {
  coal_ctx ctx = p->ctx;
  coal_mat A = p->A, B = p->B;
  Rows *d = NULL;
  COAL_CALL(coal_calloc(ctx, sizeof *d, (void **)&d));
  p->dev = d;
  COAL_CALL(operands(p, d));
  const int32_t m = A->nrows;
  /* lanes of a group: the power of two at or above B's mean row length, 4..32 */
  const double mean = B->nrows ? (double)B->nnz / B->nrows : 0.0;
  d->lanes = 4;
  while (d->lanes < 32 && d->lanes < mean) d->lanes *= 2;
  d->nwords = (B->ncols + 31) / 32;
  d->ncols = B->ncols;
  const int global_bits = d->nwords > kSmemBitmapWords; /* long rows' bitmaps in global memory */
  cudaStream_t s = coal_stream(ctx);
  const size_t m1 = (size_t)m + 1, nb = grid_of(m, kCta);
  int32_t *ub = NULL, *rows = NULL, *len = NULL;
  coal_status st;
  {
    /* the bin offsets come back through the context's pinned staging buffer */
    struct coal_cuda_ctx *cc = ctx->cuda;
    const size_t need = sizeof(int32_t) * (kBins + 2);
    if (cc->ws_pinned_cap < need) { /* rare: the buffer is made at 4 KB at least */
      COAL_CALL(cuda_status(ctx, cudaStreamSynchronize(s), "pinned staging"));
      if (cc->ws_pinned) (void)cudaFreeHost(cc->ws_pinned);
      cc->ws_pinned = NULL, cc->ws_pinned_cap = 0;
      COAL_CALL(cuda_status(ctx, cudaMallocHost(&cc->ws_pinned, 4096), "pinned staging"));
      cc->ws_pinned_cap = 4096;
    }
    d->h_off = (int32_t *)cc->ws_pinned;
  }
  COAL_CALL(ralloc(ctx, &d->mem, sizeof(int32_t) * (nb * kBins + 1), (void **)&d->cta_cnt));
  COAL_CALL(ralloc(ctx, &d->mem, sizeof(int32_t) * (nb * kBins + 1), (void **)&d->cta_off));
  COAL_CALL(ralloc(ctx, &d->mem, sizeof(int32_t) * m1, (void **)&ub));
  COAL_CALL_GOTO(st, ralloc(ctx, &d->mem, sizeof(int32_t) * m1, (void **)&rows), done);
  COAL_CALL_GOTO(st, ralloc(ctx, &d->mem, sizeof(int32_t) * m1, (void **)&len), done);
  TRACE(ctx, "setup");
  ub_kernel<<<grid_of(m, kCta), kCta, 0, s>>>(m, d->arp, d->aci, d->brp,
                                              B->ncols <= (1 << kSortColBits), ub);
  COAL_CALL_GOTO(st, cuda_status(ctx, cudaGetLastError(), "products per row"), done);
  int32_t cnt[kBins];
  TRACE(ctx, "products");
  COAL_CALL_GOTO(st, bin_rows(ctx, d, m, ub, rows, cnt), done);
  TRACE(ctx, "bins");
  if (cnt[kLongBin] && global_bits) COAL_CALL_GOTO(st, global_bitmaps(ctx, d), done);
  {
    int32_t off = 0;
    for (int b = 0; b < kBins; b++) {
      /* all rows in one bin: the identity order (no list) */
      const int32_t *r = cnt[b] == m && b != kLongBin ? NULL : rows + off;
      COAL_CALL_GOTO(st, sym_bin(ctx, d, b, cnt[b], r, len), done);
      off += cnt[b];
    }
  }
  TRACE(ctx, "symbolic");
  /* C's row offsets; nnz(C) and the numeric bins (by row length) */
  {
    struct coal_mat_cuda *c = NULL;
    COAL_CALL_GOTO(st, coal_calloc(ctx, sizeof *c, (void **)&c), done);
    c->pooled = ctx->cuda->pool != NULL; /* no device-wide wait when C goes */
    st = coal_cuda_pool_alloc(ctx, sizeof(int32_t) * m1, (void **)&c->rowptr);
    if (st == COAL_SUCCESS)
      st = cuda_status(ctx, cudaMemsetAsync(len + m, 0, sizeof(int32_t), s), "row lengths");
    if (st == COAL_SUCCESS) st = rscan(ctx, &d->mem, len, c->rowptr, (int64_t)m1);
    int32_t nnz = 0;
    if (st == COAL_SUCCESS)
      st = cuda_status(
          ctx, cudaMemcpyAsync(&nnz, c->rowptr + m, sizeof nnz, cudaMemcpyDeviceToHost, s), "nnz");
    if (st == COAL_SUCCESS) st = cuda_status(ctx, cudaStreamSynchronize(s), "nnz");
    /* the scan is int32: a total beyond 2^31-1 wraps negative */
    if (st == COAL_SUCCESS && nnz < 0)
      st = COAL_ERROR(ctx, COAL_ERR_OVERFLOW,
                      "the product has more than 2^31-1 nonzeros (32-bit offsets)");
    TRACE(ctx, "offsets");
    if (st == COAL_SUCCESS)
      st = coal_cuda_pool_alloc(ctx, sizeof(int32_t) * (size_t)nnz, (void **)&c->colind);
    if (st == COAL_SUCCESS)
      st = coal_cuda_pool_alloc(ctx, coal_dtype_size(A->dtype) * (size_t)nnz, &c->values);
    if (st != COAL_SUCCESS) {
      coal_cuda_pool_free(ctx, c->rowptr), coal_cuda_pool_free(ctx, c->colind),
          coal_cuda_pool_free(ctx, c->values);
      coal_free(c);
      goto done;
    }
    COAL_CALL_GOTO(st, coal_mat_wrap_device(ctx, m, B->ncols, nnz, A->dtype, c, &p->C), done);
  }
  TRACE(ctx, "C allocated");
  /* numeric bins: sorted rows stay in theirs, the others go by C's row length (len still holds
   * it); when every row is sorted the symbolic bins are the numeric ones */
  {
    int hashed = 0;
    for (int b = kSortBins; b < kBins; b++) hashed |= cnt[b] != 0;
    if (hashed) {
      num_key_kernel<<<grid_of(m, kCta), kCta, 0, s>>>(m, len, ub);
      COAL_CALL_GOTO(st, cuda_status(ctx, cudaGetLastError(), "numeric bins"), done);
      COAL_CALL_GOTO(st, bin_rows(ctx, d, m, ub, rows, d->num_count), done);
    } else {
      memcpy(d->num_count, cnt, sizeof cnt);
    }
  }
  {
    int single = 0;
    for (int b = 0; b < kLongBin; b++) single |= d->num_count[b] == m;
    if (!single) {
      d->num_rows = rows, rows = NULL; /* kept for the numerics */
      d->num_rows_bytes = sizeof(int32_t) * m1;
    }
  }
  if (d->num_count[kLongBin] && global_bits && !d->bitmaps)
    COAL_CALL_GOTO(st, global_bitmaps(ctx, d), done);
  if (d->num_count[kLongBin] && d->ncols > kDenseCols) {
    /* scratch: kLongSlots rows of the longest long row */
    int32_t longest = 0;
    {
      const int32_t nl = d->num_count[kLongBin];
      const int32_t *lrows = (d->num_rows ? d->num_rows : rows) + (m - nl);
      COAL_CALL_GOTO(
          st, cuda_status(ctx, cudaMemsetAsync(d->cta_cnt, 0, sizeof(int32_t), s), "max"), done);
      maxlen_kernel<<<grid_of(nl, kCta), kCta, 0, s>>>(nl, lrows, p->C->dev->rowptr, d->cta_cnt);
      COAL_CALL_GOTO(st, cuda_status(ctx, cudaGetLastError(), "longest row"), done);
      COAL_CALL_GOTO(st,
                     cuda_status(ctx,
                                 cudaMemcpyAsync(&longest, d->cta_cnt, sizeof longest,
                                                 cudaMemcpyDeviceToHost, s),
                                 "longest row"),
                     done);
      COAL_CALL_GOTO(st, cuda_status(ctx, cudaStreamSynchronize(s), "longest row"), done);
    }
    d->scratch_len = longest;
    COAL_CALL_GOTO(
        st,
        ralloc(ctx, &d->mem, sizeof(double) * (size_t)longest * kLongSlots, (void **)&d->scratch),
        done);
  }
  TRACE(ctx, "numeric bins");
  d->first = 1;
  p->stats.temp_bytes = d->mem.peak;
done:
  rfree(ctx, &d->mem, (void **)&ub, sizeof(int32_t) * m1);
  rfree(ctx, &d->mem, (void **)&rows, sizeof(int32_t) * m1);
  rfree(ctx, &d->mem, (void **)&len, sizeof(int32_t) * m1);
  return st;
}

coal_status coal_spgemm_rows_numeric_cuda(coal_spgemm p) {
  Rows *d = (Rows *)p->dev;
  COAL_CHECK(p->ctx, d, COAL_ERR_STATE, "product without device state");
  COAL_CALL(operands(p, d));
  /* the first numeric also writes C's columns; later ones rewrite them identically for the
   * short rows (same keys, same ranks) and skip the long rows' column pass */
  COAL_CALL(numeric_pass(p, d, d->first));
  d->first = 0;
  coal_mat_device_values_changed(p->C);
  return COAL_SUCCESS;
}

/* P^T on the device (cusparseCsr2cscEx2), as a device-only matrix. */
static coal_status transpose_into(coal_mat P, struct coal_mat_cuda *t) {
  coal_ctx ctx = P->ctx;
  struct coal_mat_cuda *pd = NULL;
  COAL_CALL(coal_mat_prepare_cuda(P));
  COAL_CALL(coal_cuda_mat(P, &pd));
  const cudaDataType dt = P->dtype == COAL_F64 ? CUDA_R_64F : CUDA_R_32F;
  size_t bytes = 0;
  COAL_CUSPARSE_CALL(
      ctx, cusparseCsr2cscEx2_bufferSize(ctx->cuda->sparse, P->nrows, P->ncols, (int)P->nnz,
                                         pd->values, pd->rowptr, pd->colind, t->values, t->rowptr,
                                         t->colind, dt, CUSPARSE_ACTION_NUMERIC,
                                         CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1, &bytes));
  void *buf = NULL;
  COAL_CALL(coal_cuda_pool_alloc(ctx, bytes, &buf));
  cusparseStatus_t cs =
      cusparseCsr2cscEx2(ctx->cuda->sparse, P->nrows, P->ncols, (int)P->nnz, pd->values, pd->rowptr,
                         pd->colind, t->values, t->rowptr, t->colind, dt, CUSPARSE_ACTION_NUMERIC,
                         CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1, buf);
  coal_cuda_pool_free(ctx, buf); /* in stream order, after the call */
  COAL_CHECK(ctx, cs == CUSPARSE_STATUS_SUCCESS, COAL_ERR_CUDA, "cusparseCsr2cscEx2: %s",
             cusparseGetErrorString(cs));
  return COAL_SUCCESS;
}

coal_status coal_spgemm_transpose_cuda(coal_mat P, coal_mat *Pt) {
  coal_ctx ctx = P->ctx;
  *Pt = NULL;
  struct coal_mat_cuda *t = NULL;
  COAL_CALL(coal_calloc(ctx, sizeof *t, (void **)&t));
  t->pooled = ctx->cuda->pool != NULL;
  coal_status st =
      coal_cuda_pool_alloc(ctx, sizeof(int32_t) * ((size_t)P->ncols + 1), (void **)&t->rowptr);
  if (st == COAL_SUCCESS)
    st = coal_cuda_pool_alloc(ctx, sizeof(int32_t) * (size_t)P->nnz, (void **)&t->colind);
  if (st == COAL_SUCCESS)
    st = coal_cuda_pool_alloc(ctx, coal_dtype_size(P->dtype) * (size_t)P->nnz, &t->values);
  if (st == COAL_SUCCESS) st = transpose_into(P, t);
  if (st != COAL_SUCCESS) {
    coal_cuda_pool_free(ctx, t->rowptr), coal_cuda_pool_free(ctx, t->colind);
    coal_cuda_pool_free(ctx, t->values);
    coal_free(t);
    return st;
  }
  return coal_mat_wrap_device(ctx, P->ncols, P->nrows, P->nnz, P->dtype, t, Pt);
}

coal_status coal_spgemm_transpose_values_cuda(coal_mat P, coal_mat Pt) {
  struct coal_mat_cuda *t = NULL;
  COAL_CALL(coal_cuda_mat(Pt, &t));
  COAL_CALL(transpose_into(P, t));
  coal_mat_device_values_changed(Pt);
  return COAL_SUCCESS;
}
