/* The Galerkin product C = P^T A P on the GPU as one fused row-wise product: A*P and P^T are
 * never formed, so the memory held besides C is the pattern of P^T and a few words per row of
 * C (the two-product path held P^T and A*P: 19.8x C on lap3d:128 with aggregation).
 *
 * Row I of C (A n x n, P n x m, C m x m):
 *     C(I,:) = sum over r in column I of P, over c in row r of A, of P(r,I) A(r,c) P(c,:).
 * Steps:
 *  - the pattern of P^T (rows of P per column of P, in no particular order): a count, a scan
 *    and a fill with atomic cursors. 4 bytes per nonzero of P plus the row offsets. The count
 *    pass also adds up ub[I], the products of row I (sum over r and c of nnz(P(c,:))), from
 *    the products of each row r of A*P (8 bytes per row of C while it runs).
 *  - the rows binned by ub:
 *    ub <= 1024: a warp per row inserts its columns into a hash table of 16..2048 slots in
 *    shared memory (at most half full) and counts the new ones; longer rows: a CTA per row sets
 *    them in a bitmap over C's columns in shared memory (up to 384000 columns) and counts them.
 *  - C's row offsets (scan), the rows binned again by their length in C, one wait for the bin
 *    sizes and nnz(C), C allocated from the context's pool.
 *  - numeric (every call; the first also writes C's columns, later ones rewrite them alike):
 *    rows of at most 1024 entries take a warp and a table of 16..2048 slots, longer ones (up
 *    to 4096) a CTA and a table of 4096 or 8192 slots; keys inserted with compare-and-swap,
 *    products P(r,I) A(r,c) P(c,j) formed in double (no fused multiply-add) and added with
 *    double atomics in shared memory (tables of at most 256 slots: a copy of the sums per
 *    subgroup, see `copies`), then the keys sorted (bitonic network) and C's row written in
 *    column order, each value rounded once to the dtype.
 * In a row the team's lanes split into subgroups of g lanes (g: A's mean row length rounded up
 * to a power of two, 4..32): a subgroup per r, a lane per entry c of row r of A, each lane
 * walking row c of P. P(r,I) is found by binary search in row r of P (sorted columns).
 *
 * The summation order of an entry varies with the run (atomics): results agree with the host
 * product (two Gustavson products) to a few ulps of the entry's sum of |terms| in double; in
 * single precision the host rounds A*P to float first, this product rounds only C.
 *
 * Not handled here (the caller falls back to the two products): C with more than 384000
 * columns when some row has more than 1024 products, and rows of C longer than 4096. */
#include "../spgemm.h"
#include "cuda_internal.h"
#include "spgemm_mem.cuh"

#include <cub/block/block_reduce.cuh>

namespace {
using namespace coal_spgemm_dev;

constexpr int kCta = 256;
constexpr int kMinTable = 16;     /* slots of the smallest warp table */
constexpr int kWarpBins = 8;      /* warp tables of 16 .. 2048 slots */
constexpr int kMaxWarpKey = 1024; /* products (symbolic) or entries (numeric) of a warp row */
constexpr int kMidCtaLen = 2048;  /* entries of a CTA row with a table of 4096 slots */
constexpr int kMaxCtaLen = 4096;  /* entries of a CTA row (table of 8192 slots) */
/* bins: warp tables 0..7; kWarpBins: symbolic bitmap rows, numeric rows of 1025..2048
 * entries; kWarpBins + 1: numeric rows of 2049..4096 entries; kWarpBins + 2: longer rows */
constexpr int kBins = kWarpBins + 3;
constexpr int kSmemBitmapWords = 12000; /* 47 KB: C of at most 384000 columns */
constexpr int kWarpSmem = 48 * 1024;    /* shared memory of a CTA of warp rows */

struct Ptap {
  int32_t *ptp, *pti;   /* pattern of P^T: [m + 1] offsets, [nnz(P)] rows of P */
  int32_t *rows;        /* [m] rows of C in numeric bin order */
  int32_t count[kBins]; /* rows per numeric bin */
  int32_t *bins;        /* device: [kBins] counts, [kBins] cursors */
  int g;                /* lanes per row r of A */
  Held mem;
};

/* The operands' device CSR. */
struct Ops {
  const int32_t *arp, *aci, *prp, *pci, *ptp, *pti;
  const void *av, *pv;
};

__device__ __forceinline__ int bin_of(int key, bool symbolic) {
  if (key <= kMaxWarpKey) {
    int b = 0;
    while ((kMinTable << b) < 2 * key) b++;
    return b;
  }
  if (symbolic || key <= kMidCtaLen) return kWarpBins;
  return key <= kMaxCtaLen ? kWarpBins + 1 : kWarpBins + 2;
}

/* ---- pattern of P^T and products per row of C ---------------------------------------------- */
/* Per row r of P (a thread each): w, the products of row r of A*P; for each entry (r, I) of P,
 * cnt[I] += 1 (entries of column I) and ub[I] += w (products of row I of C). */
__global__ void count_kernel(int32_t n, Ops o, int32_t *__restrict__ cnt,
                             unsigned long long *__restrict__ ub) {
  const int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= n || o.prp[r] == o.prp[r + 1]) return;
  unsigned long long w = 0;
  for (int32_t p = o.arp[r]; p < o.arp[r + 1]; p++) {
    const int32_t c = o.aci[p];
    w += (unsigned long long)(o.prp[c + 1] - o.prp[c]);
  }
  for (int32_t q = o.prp[r]; q < o.prp[r + 1]; q++) {
    const int32_t I = o.pci[q];
    atomicAdd(&cnt[I], 1);
    atomicAdd(&ub[I], w);
  }
}

/* key[I] = ub[I] clamped to INT32_MAX. */
__global__ void clamp_kernel(int32_t m, const unsigned long long *__restrict__ ub,
                             int32_t *__restrict__ key) {
  const int64_t I = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (I < m) key[I] = (int32_t)(ub[I] < INT32_MAX ? ub[I] : INT32_MAX);
}

/* cur zeroed: entry q of P (row r, column I) goes to ptp[I] + (its arrival at column I). */
__global__ void pt_fill_kernel(int32_t n, const int32_t *__restrict__ prp,
                               const int32_t *__restrict__ pci, const int32_t *__restrict__ ptp,
                               int32_t *__restrict__ cur, int32_t *__restrict__ pti) {
  const int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= n) return;
  for (int32_t q = prp[r]; q < prp[r + 1]; q++) {
    const int32_t I = pci[q];
    pti[ptp[I] + atomicAdd(&cur[I], 1)] = (int32_t)r;
  }
}

/* ---- binning: counts, then each row to its bin (order inside a bin arbitrary) --------------- */
__global__ void bin_count_kernel(int32_t m, const int32_t *__restrict__ key, int symbolic,
                                 int32_t *__restrict__ cnt) {
  __shared__ int c[kBins];
  if (threadIdx.x < kBins) c[threadIdx.x] = 0;
  __syncthreads();
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < m) atomicAdd(&c[bin_of(key[i], symbolic)], 1);
  __syncthreads();
  if (threadIdx.x < kBins && c[threadIdx.x]) atomicAdd(&cnt[threadIdx.x], c[threadIdx.x]);
}

/* cnt[kBins + b] = where bin b starts (the cursor of the fill). */
__global__ void bin_start_kernel(int32_t *cnt) {
  int32_t off = 0;
  for (int b = 0; b < kBins; b++) cnt[kBins + b] = off, off += cnt[b];
}

__global__ void bin_fill_kernel(int32_t m, const int32_t *__restrict__ key, int symbolic,
                                int32_t *__restrict__ cnt, int32_t *__restrict__ rows) {
  __shared__ int c[kBins], base[kBins];
  if (threadIdx.x < kBins) c[threadIdx.x] = 0;
  __syncthreads();
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  int b = -1, rank = 0;
  if (i < m) b = bin_of(key[i], symbolic), rank = atomicAdd(&c[b], 1);
  __syncthreads();
  if (threadIdx.x < kBins && c[threadIdx.x])
    base[threadIdx.x] = atomicAdd(&cnt[kBins + threadIdx.x], c[threadIdx.x]);
  __syncthreads();
  if (b >= 0) rows[base[b] + rank] = (int32_t)i;
}

/* ---- the products of a row ----------------------------------------------------------------- */
/* Calls f(j, x, sub) for each product of row I, x = P(r,I) A(r,c) P(c,j) (0 unless VALS), on
 * lane `lane` of a team of W lanes: subgroups (sub) of g lanes per r, a lane per entry c. */
template <typename T, bool VALS, int W, typename F>
__device__ __forceinline__ void products(int32_t I, int lane, int g, const Ops &o, F f) {
  const int sub = lane / g, sl = lane % g, nsub = W / g;
  const T *av = (const T *)o.av, *pv = (const T *)o.pv;
  const int32_t q1 = o.ptp[I + 1];
  int32_t q = o.ptp[I] + sub;
  int32_t r = q < q1 ? o.pti[q] : 0;
  while (q < q1) {
    const int32_t rn = q + nsub < q1 ? o.pti[q + nsub] : 0; /* the next r, loaded early */
    bool have_w = false;
    double w = 0.0;
    for (int32_t p = o.arp[r] + sl; p < o.arp[r + 1]; p += g) {
      const int32_t c = o.aci[p];
      const int32_t t0 = o.prp[c], t1 = o.prp[c + 1];
      const double a = VALS ? (double)av[p] : 0.0;
      if (VALS && !have_w) {
        /* P(r,I): binary search in row r of P, while row c's bounds are on their way */
        int32_t lo = o.prp[r], hi = o.prp[r + 1] - 1;
        while (lo < hi) {
          const int32_t mid = (lo + hi) >> 1;
          if (o.pci[mid] < I)
            lo = mid + 1;
          else
            hi = mid;
        }
        w = (double)pv[lo], have_w = true;
      }
      const double wa = VALS ? __dmul_rn(w, a) : 0.0;
      /* lanes start at different entries of row c (rows of neighbouring c are alike): fewer
       * lanes on one accumulator at a time */
      const int32_t len = t1 - t0;
      int32_t t = t0 + (len ? lane % len : 0);
      for (int32_t k = 0; k < len; k++) {
        f(o.pci[t], VALS ? __dmul_rn(wa, (double)pv[t]) : 0.0, sub);
        if (++t == t1) t = t0;
      }
    }
    q += nsub, r = rn;
  }
}

/* ---- symbolic ------------------------------------------------------------------------------- */
/* Rows of at most kMaxWarpKey products: a warp per row, a table of ts slots. */
__global__ __launch_bounds__(kCta) void sym_warp_kernel(int32_t nrows,
                                                        const int32_t *__restrict__ rows, int ts,
                                                        int g, Ops o, int32_t *__restrict__ len) {
  extern __shared__ int smem[];
  const int groups = blockDim.x / 32, wid = threadIdx.x / 32, lane = threadIdx.x % 32;
  int *keys = smem + (size_t)wid * (ts + 1);
  for (int64_t k = (int64_t)blockIdx.x * groups + wid; k < nrows;
       k += (int64_t)gridDim.x * groups) {
    const int32_t I = rows[k];
    for (int s = lane; s < ts; s += 32) keys[s] = kEmpty;
    __syncwarp();
    int cnt = 0;
    products<double, false, 32>(I, lane, g, o, [&](int32_t j, double, int) {
      bool fresh;
      insert(keys, ts, j, &fresh);
      cnt += fresh;
    });
#pragma unroll
    for (int d = 16; d > 0; d /= 2) cnt += __shfl_down_sync(0xffffffffu, cnt, d);
    if (lane == 0) len[I] = cnt;
    __syncwarp();
  }
}

/* Longer rows: a CTA per row, its columns as bits of a bitmap over C's columns (nwords words
 * in shared memory), counted and cleared. */
__global__ __launch_bounds__(kCta) void sym_bitmap_kernel(int32_t nrows,
                                                          const int32_t *__restrict__ rows,
                                                          int32_t nwords, int g, Ops o,
                                                          int32_t *__restrict__ len) {
  extern __shared__ unsigned bm[];
  for (int32_t w = threadIdx.x; w < nwords; w += blockDim.x) bm[w] = 0u;
  __syncthreads();
  for (int32_t k = blockIdx.x; k < nrows; k += gridDim.x) {
    const int32_t I = rows[k];
    products<double, false, kCta>(I, threadIdx.x, g, o, [=](int32_t j, double, int) {
      atomicOr(&bm[j >> 5], 1u << (j & 31));
    });
    __syncthreads();
    const int c = count_clear_bits<kCta>(bm, nwords);
    if (threadIdx.x == 0) len[I] = c;
    __syncthreads();
  }
}

/* ---- numeric -------------------------------------------------------------------------------- */
template <int W> __device__ __forceinline__ void team_sync() {
  if (W == 32)
    __syncwarp();
  else
    __syncthreads();
}

/* Copies of a warp row's sums: one per subgroup (W / g) for tables of at most kCopyMaxTable
 * slots, each subgroup adding into its own (fewer lanes on one double atomic, a compare-and-
 * swap loop in shared memory; faster on the smoothed P: bench/RESULTS.md, rule ptap-copies),
 * summed in order at the end. */
constexpr int kCopyMaxTable = 256;
__host__ __device__ constexpr int copies(int ts, int g) { return ts <= kCopyMaxTable ? 32 / g : 1; }

/* Shared memory of a team with a table of ts slots: vals[nk][ts] (double), keys[ts],
 * ckeys[ts / 2] (the row's keys, compacted and sorted), a counter. */
__host__ __device__ constexpr size_t num_team_bytes(int ts, int nk = 1) {
  return sizeof(double) * (size_t)ts * nk + sizeof(int) * ((size_t)ts + (size_t)ts / 2 + 2);
}

/* Row I of C by a team of W lanes (a warp, or the CTA): ts slots (>= 2 len, power of two),
 * nk copies of the sums. */
template <typename T, int W>
__device__ __forceinline__ void num_row(int32_t I, int lane, int ts, int g, const Ops &o,
                                        double *vals, int *keys, int *ckeys, int *count,
                                        const int32_t *__restrict__ crp, int32_t *__restrict__ cci,
                                        T *__restrict__ cv, int nk = 1) {
  for (int s = lane; s < ts; s += W) keys[s] = kEmpty;
  for (int s = lane; s < ts * nk; s += W) vals[s] = 0.0;
  if (lane == 0) *count = 0;
  team_sync<W>();
  products<T, true, W>(I, lane, g, o, [=](int32_t j, double x, int sub) {
    bool fresh;
    atomicAdd(&vals[(sub % nk) * ts + insert(keys, ts, j, &fresh)], x);
  });
  team_sync<W>();
  for (int s = lane; s < ts; s += W)
    if (keys[s] != kEmpty) ckeys[atomicAdd(count, 1)] = keys[s];
  team_sync<W>();
  const int32_t c0 = crp[I], nnz = crp[I + 1] - c0;
  bitonic_sort(ckeys, nnz, lane, W, [] { team_sync<W>(); });
  for (int t = lane; t < nnz; t += W) {
    const int j = ckeys[t];
    unsigned s = hash_of(j, ts);
    while (keys[s] != j) s = (s + 1) & (unsigned)(ts - 1);
    cci[c0 + t] = j;
    double v = vals[s];
    for (int k = 1; k < nk; k++) v += vals[k * ts + s];
    cv[c0 + t] = (T)v;
  }
  team_sync<W>();
}

template <typename T>
__global__ __launch_bounds__(kCta) void num_warp_kernel(int32_t nrows,
                                                        const int32_t *__restrict__ rows, int ts,
                                                        int g, Ops o, const int32_t *crp,
                                                        int32_t *cci, T *cv) {
  extern __shared__ double dsm[];
  const int groups = blockDim.x / 32, wid = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int nk = copies(ts, g);
  char *base = (char *)dsm + num_team_bytes(ts, nk) * (size_t)wid;
  double *vals = (double *)base;
  int *keys = (int *)(vals + ts * nk), *ckeys = keys + ts, *count = ckeys + ts / 2 + 1;
  for (int64_t k = (int64_t)blockIdx.x * groups + wid; k < nrows; k += (int64_t)gridDim.x * groups)
    num_row<T, 32>(rows[k], lane, ts, g, o, vals, keys, ckeys, count, crp, cci, cv, nk);
}

template <typename T>
__global__
__launch_bounds__(kCta) void num_cta_kernel(int32_t nrows, const int32_t *__restrict__ rows, int ts,
                                            int g, Ops o, const int32_t *crp, int32_t *cci, T *cv) {
  extern __shared__ double dsm[];
  double *vals = dsm;
  int *keys = (int *)(vals + ts), *ckeys = keys + ts, *count = ckeys + ts / 2 + 1;
  for (int32_t k = blockIdx.x; k < nrows; k += gridDim.x)
    num_row<T, kCta>(rows[k], threadIdx.x, ts, g, o, vals, keys, ckeys, count, crp, cci, cv);
}

/* ---- host side ------------------------------------------------------------------------------ */
coal_status operands(coal_spgemm p, Ptap *d, Ops *o) {
  struct coal_mat_cuda *a = NULL, *b = NULL;
  COAL_CALL(device_operands(p, &a, &b));
  o->arp = a->rowptr, o->aci = a->colind, o->av = a->values;
  o->prp = b->rowptr, o->pci = b->colind, o->pv = b->values;
  o->ptp = d->ptp, o->pti = d->pti;
  return COAL_SUCCESS;
}

/* rows[] in bin order of key[] (bin_of), the bin sizes into d->bins (device, not waited for). */
coal_status bin_rows(coal_ctx ctx, Ptap *d, int32_t m, const int32_t *key, int symbolic,
                     int32_t *rows) {
  cudaStream_t s = coal_stream(ctx);
  COAL_CALL(cuda_status(ctx, cudaMemsetAsync(d->bins, 0, sizeof(int32_t) * 2 * kBins, s), "bins"));
  if (!m) return COAL_SUCCESS;
  bin_count_kernel<<<grid_of(m, kCta), kCta, 0, s>>>(m, key, symbolic, d->bins);
  LAUNCHED(ctx, "bin count");
  bin_start_kernel<<<1, 1, 0, s>>>(d->bins);
  LAUNCHED(ctx, "bin starts");
  bin_fill_kernel<<<grid_of(m, kCta), kCta, 0, s>>>(m, key, symbolic, d->bins, rows);
  LAUNCHED(ctx, "bin fill");
  return COAL_SUCCESS;
}

/* The bin sizes to the host buffer h (pinned), not waited for. */
coal_status fetch_bins(coal_ctx ctx, const Ptap *d, int32_t *h) {
  return cuda_status(ctx,
                     cudaMemcpyAsync(h, d->bins, sizeof(int32_t) * kBins, cudaMemcpyDeviceToHost,
                                     coal_stream(ctx)),
                     "bins");
}

/* A warp per row, tables of ts slots: warps per CTA as many as fit kWarpSmem (8 at most). */
int warps_per_cta(size_t team_bytes) {
  const int fit = (int)(kWarpSmem / team_bytes);
  return fit < 1 ? 1 : fit > kCta / 32 ? kCta / 32 : fit;
}

coal_status symbolic_bins(coal_ctx ctx, const Ptap *d, const Ops &o, int32_t nwords,
                          const int32_t *counts, const int32_t *rows, int32_t *len) {
  cudaStream_t s = coal_stream(ctx);
  int32_t off = 0;
  for (int b = 0; b <= kWarpBins; b++) {
    const int32_t n = counts[b];
    if (n && b < kWarpBins) {
      const int ts = kMinTable << b;
      const int wpc = warps_per_cta(sizeof(int) * ((size_t)ts + 1));
      sym_warp_kernel<<<grid_of(n, wpc), 32 * wpc, sizeof(int) * ((size_t)ts + 1) * wpc, s>>>(
          n, rows + off, ts, d->g, o, len);
      LAUNCHED(ctx, "P^T A P symbolic");
    } else if (n) {
      const unsigned grid = (unsigned)(n < 4096 ? n : 4096);
      sym_bitmap_kernel<<<grid, kCta, sizeof(unsigned) * (size_t)nwords, s>>>(n, rows + off, nwords,
                                                                              d->g, o, len);
      LAUNCHED(ctx, "P^T A P symbolic (long rows)");
    }
    off += n;
  }
  return COAL_SUCCESS;
}

template <typename T>
coal_status numeric_bins(coal_ctx ctx, const Ptap *d, const Ops &o, struct coal_mat_cuda *c) {
  cudaStream_t s = coal_stream(ctx);
  int32_t off = 0;
  for (int b = 0; b < kWarpBins + 2; b++) {
    const int32_t n = d->count[b];
    if (!n) continue;
    const int32_t *rows = d->rows + off;
    off += n;
    if (b < kWarpBins) {
      const int ts = kMinTable << b;
      const int nk = copies(ts, d->g);
      const int wpc = warps_per_cta(num_team_bytes(ts, nk));
      num_warp_kernel<T><<<grid_of(n, wpc), 32 * wpc, num_team_bytes(ts, nk) * wpc, s>>>(
          n, rows, ts, d->g, o, c->rowptr, c->colind, (T *)c->values);
      LAUNCHED(ctx, "P^T A P numeric");
    } else {
      const int ts = 2 * (b == kWarpBins ? kMidCtaLen : kMaxCtaLen);
      const size_t sm = num_team_bytes(ts);
      COAL_CALL(
          cuda_status(ctx,
                      cudaFuncSetAttribute(num_cta_kernel<T>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sm),
                      "P^T A P numeric (long rows)"));
      const unsigned grid = (unsigned)(n < 4096 ? n : 4096);
      num_cta_kernel<T>
          <<<grid, kCta, sm, s>>>(n, rows, ts, d->g, o, c->rowptr, c->colind, (T *)c->values);
      LAUNCHED(ctx, "P^T A P numeric (long rows)");
    }
  }
  return COAL_SUCCESS;
}

void release_state(coal_ctx ctx, Ptap *d) {
  coal_cuda_pool_free(ctx, d->ptp), coal_cuda_pool_free(ctx, d->pti);
  coal_cuda_pool_free(ctx, d->rows), coal_cuda_pool_free(ctx, d->bins);
  coal_cuda_pool_free(ctx, d->mem.scan_tmp);
  coal_free(d);
}

} // namespace

void coal_spgemm_ptap_release_cuda(coal_spgemm p) {
  if (!p->dev) return;
  release_state(p->ctx, (Ptap *)p->dev);
  p->dev = NULL;
}

coal_status coal_spgemm_ptap_symbolic_cuda(coal_spgemm p, int *fused) {
  coal_ctx ctx = p->ctx;
  coal_mat A = p->A, P = p->B;
  *fused = 0;
  COAL_CHECK(ctx, A->nrows == A->ncols && P->nrows == A->nrows, COAL_ERR_ARG,
             "P^T A P: A is %d x %d, P is %d x %d", A->nrows, A->ncols, P->nrows, P->ncols);
  Ptap *d = NULL;
  COAL_CALL(coal_calloc(ctx, sizeof *d, (void **)&d));
  const int32_t n = A->nrows, m = P->ncols;
  const size_t m1 = (size_t)m + 1;
  const int32_t nwords = (m + 31) / 32;
  const double mean = n ? (double)A->nnz / n : 0.0;
  d->g = 4;
  while (d->g < 32 && d->g < mean) d->g *= 2;
  cudaStream_t s = coal_stream(ctx);
  int32_t *key = NULL, *h = NULL;
  unsigned long long *ub = NULL;
  struct coal_mat_cuda *c = NULL;
  int32_t cnt[kBins], nnz = 0;
  Ops o;
  coal_status st;
  COAL_CALL_GOTO(st, ralloc(ctx, &d->mem, sizeof(int32_t) * m1, (void **)&d->ptp), fail);
  COAL_CALL_GOTO(st, ralloc(ctx, &d->mem, sizeof(int32_t) * (size_t)(P->nnz + 1), (void **)&d->pti),
                 fail);
  COAL_CALL_GOTO(st, ralloc(ctx, &d->mem, sizeof(int32_t) * m1, (void **)&d->rows), fail);
  COAL_CALL_GOTO(st, ralloc(ctx, &d->mem, sizeof(int32_t) * 2 * kBins, (void **)&d->bins), fail);
  /* C's row offsets (part of C, not a temporary) serve first as the working array key: the
   * counts of P^T, the fill's cursors, the products per row, then the row lengths, scanned in
   * place into the offsets */
  COAL_CALL_GOTO(st, coal_calloc(ctx, sizeof *c, (void **)&c), fail);
  c->pooled = ctx->cuda->pool != NULL; /* no device-wide wait when C goes */
  COAL_CALL_GOTO(st, coal_cuda_pool_alloc(ctx, sizeof(int32_t) * m1, (void **)&c->rowptr), fail);
  key = c->rowptr;
  COAL_CALL_GOTO(st, coal_ws_pinned(ctx, sizeof(int32_t) * (kBins + 1), (void **)&h), fail);
  COAL_CALL_GOTO(st, operands(p, d, &o), fail);
  TRACE(ctx, "setup");
  /* pattern of P^T and products per row: counts in key and ub, offsets in ptp, key zeroed
   * again as the fill's cursors, then the products (clamped) into key */
  COAL_CALL_GOTO(st, ralloc(ctx, &d->mem, sizeof(unsigned long long) * m1, (void **)&ub), fail);
  COAL_CALL_GOTO(st, cuda_status(ctx, cudaMemsetAsync(key, 0, sizeof(int32_t) * m1, s), "P^T"),
                 fail);
  COAL_CALL_GOTO(
      st, cuda_status(ctx, cudaMemsetAsync(ub, 0, sizeof(unsigned long long) * m1, s), "P^T"),
      fail);
  if (n) {
    count_kernel<<<grid_of(n, kCta), kCta, 0, s>>>(n, o, key, ub);
    COAL_CALL_GOTO(st, cuda_status(ctx, cudaGetLastError(), "P^T count"), fail);
  }
  COAL_CALL_GOTO(st, rscan(ctx, &d->mem, key, d->ptp, (int64_t)m1), fail);
  COAL_CALL_GOTO(st, cuda_status(ctx, cudaMemsetAsync(key, 0, sizeof(int32_t) * m1, s), "P^T"),
                 fail);
  if (n) {
    pt_fill_kernel<<<grid_of(n, kCta), kCta, 0, s>>>(n, o.prp, o.pci, d->ptp, key, d->pti);
    COAL_CALL_GOTO(st, cuda_status(ctx, cudaGetLastError(), "P^T fill"), fail);
  }
  if (m) {
    clamp_kernel<<<grid_of(m, kCta), kCta, 0, s>>>(m, ub, key);
    COAL_CALL_GOTO(st, cuda_status(ctx, cudaGetLastError(), "P^T A P products"), fail);
  }
  rfree(ctx, &d->mem, (void **)&ub, sizeof(unsigned long long) * m1);
  TRACE(ctx, "P^T pattern, products");
  /* symbolic bins (one wait) */
  COAL_CALL_GOTO(st, bin_rows(ctx, d, m, key, 1, d->rows), fail);
  COAL_CALL_GOTO(st, fetch_bins(ctx, d, h), fail);
  COAL_CALL_GOTO(st, cuda_status(ctx, cudaStreamSynchronize(s), "bins"), fail);
  memcpy(cnt, h, sizeof cnt);
  TRACE(ctx, "bins");
  if (cnt[kWarpBins] && nwords > kSmemBitmapWords) goto not_fused;
  /* row lengths of C into key (the bins are made), numeric bins, C's row offsets: one wait
   * for the bin sizes and nnz(C) */
  COAL_CALL_GOTO(st, symbolic_bins(ctx, d, o, nwords, cnt, d->rows, key), fail);
  TRACE(ctx, "symbolic");
  COAL_CALL_GOTO(st, bin_rows(ctx, d, m, key, 0, d->rows), fail);
  COAL_CALL_GOTO(
      st, cuda_status(ctx, cudaMemsetAsync(key + m, 0, sizeof(int32_t), s), "row lengths"), fail);
  COAL_CALL_GOTO(st, rscan(ctx, &d->mem, key, c->rowptr, (int64_t)m1), fail); /* in place */
  COAL_CALL_GOTO(st, fetch_bins(ctx, d, h), fail);
  COAL_CALL_GOTO(st,
                 cuda_status(ctx,
                             cudaMemcpyAsync(h + kBins, c->rowptr + m, sizeof(int32_t),
                                             cudaMemcpyDeviceToHost, s),
                             "nnz"),
                 fail);
  COAL_CALL_GOTO(st, cuda_status(ctx, cudaStreamSynchronize(s), "nnz"), fail);
  memcpy(d->count, h, sizeof d->count);
  nnz = h[kBins];
  if (d->count[kWarpBins + 2]) goto not_fused; /* rows beyond kMaxCtaLen */
  /* the scan is int32: a total beyond 2^31-1 wraps negative */
  if (nnz < 0) {
    st = COAL_ERROR(ctx, COAL_ERR_OVERFLOW,
                    "the product has more than 2^31-1 nonzeros (32-bit offsets)");
    goto fail;
  }
  COAL_CALL_GOTO(st, coal_cuda_pool_alloc(ctx, sizeof(int32_t) * (size_t)nnz, (void **)&c->colind),
                 fail);
  COAL_CALL_GOTO(st, coal_cuda_pool_alloc(ctx, coal_dtype_size(A->dtype) * (size_t)nnz, &c->values),
                 fail);
  COAL_CALL_GOTO(st, coal_mat_wrap_device(ctx, m, m, nnz, A->dtype, c, &p->C), fail);
  c = NULL; /* p->C owns it */
  p->dev = d;
  p->stats.temp_bytes = d->mem.peak;
  TRACE(ctx, "offsets, bins, C");
  *fused = 1;
  return COAL_SUCCESS;
not_fused:
  st = COAL_SUCCESS;
fail:
  coal_cuda_pool_free(ctx, ub);
  if (c) {
    coal_cuda_pool_free(ctx, c->rowptr), coal_cuda_pool_free(ctx, c->colind);
    coal_cuda_pool_free(ctx, c->values);
    coal_free(c);
  }
  release_state(ctx, d);
  return st;
}

coal_status coal_spgemm_ptap_numeric_cuda(coal_spgemm p) {
  Ptap *d = (Ptap *)p->dev;
  COAL_CHECK(p->ctx, d, COAL_ERR_STATE, "P^T A P without device state");
  Ops o;
  COAL_CALL(operands(p, d, &o));
  struct coal_mat_cuda *c = NULL;
  COAL_CALL(coal_cuda_mat(p->C, &c));
  COAL_CALL(p->A->dtype == COAL_F64 ? numeric_bins<double>(p->ctx, d, o, c)
                                    : numeric_bins<float>(p->ctx, d, o, c));
  coal_mat_device_values_changed(p->C);
  return COAL_SUCCESS;
}
