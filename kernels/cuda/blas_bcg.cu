/* CUDA versions of the Block-CG steps of kernels/blas.h (bcg_gram, bcg_update, bcg_dir); the
 * host twins in kernels/host/blas.c define the results.
 *
 * Blocks of at most 32 columns (the tile path): a CTA walks tiles of 32 rows, loads each
 * block's tile once into shared memory (coalesced, the whole tile of a tight row-major block
 * is one contiguous range), zero-padded to 32 x 32, and does the small products on the fp64
 * tensor cores (mma.sync m16n8k8 on sm_90, four m8n8k4 before): the updates R -= Q C,
 * Y = diag(d) X1 C1 + X2 C2 and X3 += X2 C3 as 16 x 8 output tiles, and the Gram matrices
 * A^T diag(w) B as 16 x 8 tiles accumulated in registers over every row tile the CTA visits. So
 * each block crosses DRAM once per call, which is the point: the Block-CG iteration is bound by
 * memory traffic, and these steps replace several separate cuBLAS passes (solvers/blockcg.c
 * counts them).
 *
 * Sums are deterministic: each CTA of a grid fixed by n and the SM count writes its partial
 * Gram matrices (and column sums of squares) to ws_part, and a second kernel adds the partials
 * of every entry in a fixed order. Wider blocks go through the cuBLAS-based operations of
 * kernels/cuda/blas.cu, one pass per step (same results to rounding).
 *
 * Shared-memory rows are kLd = 36 doubles apart: 288 bytes keeps rows 16-byte aligned (the
 * cp.async pieces, the double2 stores) and spreads the 8-byte fragment loads of a half-warp (4
 * rows x 4 columns) over distinct banks. */
#include "../blas.h"
#include "cuda_internal.h"
#include "spmm_util.cuh"

#include <cuda_pipeline.h>

#include <string.h>

namespace {

constexpr int kW = 32;             /* widest block of the tile path */
constexpr int kRows = 32;          /* rows per tile */
constexpr int kLd = 36;            /* shared-memory row stride (doubles) */
constexpr int kTile = kRows * kLd; /* doubles of one row tile in shared memory */
constexpr int kCoef = kW * kLd;    /* doubles of one 32 x 32 coefficient matrix */
constexpr int kThreads = 256;
constexpr int kGram = kW * kW; /* one Gram matrix in the partials (32 x 32, ld 32) */

/* d += a b on the fp64 tensor cores, shape m16n8k8. Per lane, with g = lane / 4, t = lane % 4:
 * a[i] = A(g + 8 (i % 2), t + 4 (i / 2)) of the 16 x 8 left operand, b[i] = B(t + 4 i, g) of the
 * 8 x 8 right operand, d[i] = D(g + 8 (i / 2), 2 t + i % 2) of the 16 x 8 result (layouts checked
 * by bench/mma_probe.cu). sm_90 runs the shape faster than m8n8k4 (same probe;
 * bench/RESULTS.md, rule dmma); older GPUs, which lack it, take four m8n8k4 with the same
 * fragments. */
__device__ __forceinline__ void dmma(double (&d)[4], const double (&a)[4], const double (&b)[2]) {
#if __CUDA_ARCH__ >= 900
  asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
#else
#pragma unroll
  for (int h = 0; h < 2; h++)   /* k = 0-3, then 4-7 */
#pragma unroll
    for (int r = 0; r < 2; r++) /* rows g, then g + 8 */
      asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
          : "+d"(d[2 * r]), "+d"(d[2 * r + 1])
          : "d"(a[2 * h + r]), "d"(b[h]));
#endif
}

__device__ __forceinline__ int lane_g() { return (int)(threadIdx.x & 31) >> 2; }
__device__ __forceinline__ int lane_t() { return (int)(threadIdx.x & 3); }

/* Fragments out of shared-memory tiles (row stride kLd; the stride keeps each half-warp's 16
 * loads on distinct banks). load_a: A(m, k) = p[m kLd + k]; load_at: A(m, k) = p[k kLd + m], the
 * transpose of a stored tile; load_b: B(k, n) = p[k kLd + n]. p points at the fragment's corner. */
__device__ __forceinline__ void load_a(double (&a)[4], const double *p) {
  const int g = lane_g(), t = lane_t();
#pragma unroll
  for (int i = 0; i < 4; i++) a[i] = p[(g + 8 * (i % 2)) * kLd + t + 4 * (i / 2)];
}
__device__ __forceinline__ void load_at(double (&a)[4], const double *p) {
  const int g = lane_g(), t = lane_t();
#pragma unroll
  for (int i = 0; i < 4; i++) a[i] = p[(t + 4 * (i / 2)) * kLd + g + 8 * (i % 2)];
}
__device__ __forceinline__ void load_b(double (&b)[2], const double *p) {
  const int g = lane_g(), t = lane_t();
  b[0] = p[t * kLd + g], b[1] = p[(t + 4) * kLd + g];
}

/* Issues the asynchronous copy (cp.async) of rows [r0, r0 + nr) of a tight n x w block (w <=
 * 32) into a 32-row tile; rows >= nr are zero-filled, columns >= w are not touched (zero from
 * the kernel's start). Each warp copies 4 rows: two at a time in 16-byte pieces (w even), or
 * one at a time in 8-byte pieces. */
__device__ __forceinline__ void copy_tile_async(double *sm, const double *__restrict__ g,
                                                int64_t r0, int nr, int w) {
  const int lane = (int)(threadIdx.x & 31), warp = (int)(threadIdx.x >> 5);
  if ((w & 1) == 0) {
    const int c = 2 * (lane & 15);
    if (c >= w) return;
#pragma unroll
    for (int i = 0; i < 2; i++) {
      const int r = warp * 4 + 2 * i + (lane >> 4);
      const bool ok = r < nr;
      __pipeline_memcpy_async(sm + r * kLd + c, ok ? g + (r0 + r) * w + c : g, 16, ok ? 0 : 16);
    }
  } else {
    if (lane >= w) return;
#pragma unroll
    for (int i = 0; i < 4; i++) {
      const int r = warp * 4 + i;
      const bool ok = r < nr;
      __pipeline_memcpy_async(sm + r * kLd + lane, ok ? g + (r0 + r) * w + lane : g, 8, ok ? 0 : 8);
    }
  }
}

/* The asynchronous copy of entries [r0, r0 + nr) of a vector (a diagonal scaling) into kRows
 * doubles of shared memory, zero-filled past nr. */
__device__ __forceinline__ void copy_diag_async(double *sm, const double *__restrict__ d,
                                                int64_t r0, int nr) {
  if (threadIdx.x >= kRows) return;
  const bool ok = (int)threadIdx.x < nr;
  __pipeline_memcpy_async(sm + threadIdx.x, ok ? d + r0 + threadIdx.x : d, 8, ok ? 0 : 8);
}

/* The tile's diagonal scaling d (copy_diag_async) replaced by its inverse, 0 where d = 0 (rows
 * past the block's end), by the threads that copied it, once their copies are complete: the
 * barrier that follows publishes it. */
__device__ __forceinline__ void invert_diag(double *sm) {
  if (threadIdx.x >= kRows) return;
  const double d = sm[threadIdx.x];
  sm[threadIdx.x] = d != 0.0 ? 1.0 / d : 0.0;
}

/* A p x q tight coefficient matrix into a zero-padded 32 x 32 one (once per CTA). */
__device__ __forceinline__ void load_coef(double *sm, const double *__restrict__ g, int p, int q) {
  for (int f = (int)threadIdx.x; f < p * q; f += kThreads) {
    const int r = f / q, c = f - r * q;
    sm[r * kLd + c] = g[f];
  }
}

__device__ __forceinline__ void zero_shared(double *sm, int count) {
  for (int f = (int)threadIdx.x; f < count; f += kThreads) sm[f] = 0.0;
}

__device__ __forceinline__ int tile_rows(int64_t n, int64_t t) {
  return (int)(n - t * kRows < kRows ? n - t * kRows : kRows);
}

/* The right-operand fragments of a coefficient matrix in shared memory (zero-padded 32 x 32)
 * for the column tiles nt0 + j and the four k steps: loaded once per CTA, kept in registers, so
 * the per-tile products read only their left operand from shared memory. */
template <int NT>
__device__ __forceinline__ void coef_frags(double (&cb)[NT][4][2], const double *Bs, int nt0) {
#pragma unroll
  for (int j = 0; j < NT; j++)
#pragma unroll
    for (int ks = 0; ks < 4; ks++) load_b(cb[j][ks], Bs + ks * 8 * kLd + (nt0 + j) * 8);
}

/* c[j] += diag(ds) A (rows 16 mt to 16 mt + 15, kdim columns) B (kdim x 32) on the column tiles
 * nt0 + j (j < NT, only those with 8 (nt0 + j) < q; ds == NULL: no scaling, else ds holds the
 * tile's row scales), with B's fragments in registers (coef_frags): one A fragment per k step
 * feeds every column tile. */
template <int NT>
__device__ __forceinline__ void row_mma_reg(double (&c)[NT][4], const double *As,
                                            const double (&cb)[NT][4][2], int mt, int nt0, int kdim,
                                            int q, const double *ds) {
  double d0 = 1.0, d1 = 1.0; /* scales of rows g and g + 8 */
  if (ds) d0 = ds[mt * 16 + lane_g()], d1 = ds[mt * 16 + lane_g() + 8];
#pragma unroll
  for (int ks = 0; ks < 4; ks++) {
    if (ks * 8 >= kdim) break;
    double a[4];
    load_a(a, As + mt * 16 * kLd + ks * 8);
    if (ds) a[0] *= d0, a[1] *= d1, a[2] *= d0, a[3] *= d1;
#pragma unroll
    for (int j = 0; j < NT; j++)
      if ((nt0 + j) * 8 < q) dmma(c[j], a, cb[j][ks]);
  }
}

/* Stores the values v0, v1 of columns c, c + 1 of row r (< nr) of a tight n x w block from an
 * accumulator fragment (16 bytes at once when w is even: c is even, so the pair is aligned). */
__device__ __forceinline__ void store_pair(double *__restrict__ g, int64_t r, int c, int w,
                                           double v0, double v1) {
  double *p = g + r * w + c;
  if ((w & 1) == 0) {
    if (c < w) *(double2 *)p = make_double2(v0, v1);
  } else {
    if (c < w) p[0] = v0;
    if (c + 1 < w) p[1] = v1;
  }
}

/* Row weights of the Grams A^T diag(w) B: none, w = ws (a tile of dinv, or of its inverse after
 * invert_diag), or w = 1 / ws (rows with ws = 0 get weight 0). */
enum { kWtNone = 0, kWtMul = 1, kWtInv = 2 };
template <int WT> __device__ __forceinline__ double row_weight(const double *ws, int k) {
  if (WT == kWtNone) return 1.0;
  const double d = ws[k];
  return WT == kWtMul ? d : d != 0.0 ? 1.0 / d : 0.0;
}

/* The weights of the B fragment rows k0 + t and k0 + t + 4 (load_b's), 1 for kWtNone. */
template <int WT>
__device__ __forceinline__ void b_weights(double (&w)[2], const double *ws, int k0) {
  w[0] = w[1] = 1.0;
  if (WT != kWtNone)
    w[0] = row_weight<WT>(ws, k0 + lane_t()), w[1] = row_weight<WT>(ws, k0 + lane_t() + 4);
}

/* row[j] += A^T diag(w) B over the 32 rows of the tiles (w of kind WT from ws), on output rows
 * 16 mt to 16 mt + 15 (columns of A, only if 16 mt < p) and the column tiles nt0 + j (j < NT) of
 * B (8 (nt0 + j) < q). */
template <int NT, int WT>
__device__ __forceinline__ void gram_row(double (&row)[NT][4], const double *As, const double *Bs,
                                         int mt, int nt0, int p, int q, const double *ws) {
  if (mt * 16 >= p) return;
#pragma unroll
  for (int k0 = 0; k0 < kRows; k0 += 8) {
    double a[4], w[2];
    load_at(a, As + k0 * kLd + mt * 16);
    b_weights<WT>(w, ws, k0);
#pragma unroll
    for (int j = 0; j < NT; j++) {
      if ((nt0 + j) * 8 >= q) continue;
      double b[2];
      load_b(b, Bs + k0 * kLd + (nt0 + j) * 8);
      if (WT != kWtNone) b[0] *= w[0], b[1] *= w[1];
      dmma(row[j], a, b);
    }
  }
}

/* The 16 x 8 tiles (mt, nt) of a 32 x 32 symmetric Gram that hold its upper triangle: row tile 0
 * with every column tile, row tile 1 with column tiles 2 and 3. Symmetric Grams (P^T P, R^T Z)
 * are summed there only and mirrored on the host (unpack_sym). Warp w < 6 takes tile w. */
constexpr int kSymTiles = 6;
__device__ __forceinline__ void upper_tile(int u, int &mt, int &nt) {
  mt = u < 4 ? 0 : 1;
  nt = u < 4 ? u : u - 2;
}

/* sym += B^T diag(w) B on upper tile u (none if u >= kSymTiles or the tile lies past column q). */
template <int WT>
__device__ __forceinline__ void gram_sym(double (&sym)[4], const double *Bs, int q, int u,
                                         const double *ws) {
  if (u >= kSymTiles) return;
  int mt, nt;
  upper_tile(u, mt, nt);
  if (nt * 8 >= q) return;
#pragma unroll
  for (int k0 = 0; k0 < kRows; k0 += 8) {
    double a[4], b[2], w[2];
    load_at(a, Bs + k0 * kLd + mt * 16);
    load_b(b, Bs + k0 * kLd + nt * 8);
    b_weights<WT>(w, ws, k0);
    if (WT != kWtNone) b[0] *= w[0], b[1] *= w[1];
    dmma(sym, a, b);
  }
}

/* Writes a 16 x 8 accumulator tile (mt, nt) into a 32 x 32 matrix of row stride ld. */
__device__ __forceinline__ void store_acc(double *G, int ld, const double (&d)[4], int mt, int nt) {
  double *p = G + (mt * 16 + lane_g()) * ld + nt * 8 + 2 * lane_t();
  *(double2 *)p = make_double2(d[0], d[1]);
  *(double2 *)(p + 8 * ld) = make_double2(d[2], d[3]);
}

/* This CTA's partials [P^T Q | P^T P (upper tiles) | P^T R] (3 * kGram doubles) from the warp's
 * accumulators: row tile (w % 4) / 2, column tiles 2 (w % 2) and 2 (w % 2) + 1 of P^T Q (w < 4)
 * or P^T R (w >= 4), and upper tile w of P^T P. */
__device__ __forceinline__ void store_gram3(double *part, const double (&row)[2][4],
                                            const double (&sym)[4], int warp) {
  const int isr = warp >> 2, mt = (warp & 3) >> 1, nt0 = 2 * (warp & 1);
  double *pp = part + (int64_t)blockIdx.x * 3 * kGram;
  store_acc(pp + (isr ? 2 : 0) * kGram, kW, row[0], mt, nt0);
  store_acc(pp + (isr ? 2 : 0) * kGram, kW, row[1], mt, nt0 + 1);
  if (warp < kSymTiles) {
    int um, un;
    upper_tile(warp, um, un);
    store_acc(pp + kGram, kW, sym, um, un);
  }
}

/* ---- G = P^T Q, PP = P^T diag(dinv)^-1 P, PR = P^T R -------------------------------------- */
/* partials per CTA: [P^T Q | P^T P (upper tiles) | P^T R], 3 * kGram doubles. Warp w: row tile
 * (w % 4) / 2 and column tiles 2 (w % 2), 2 (w % 2) + 1 of P^T Q (w < 4) or P^T R (w >= 4), and
 * upper tile w of P^T P (weighted by 1 / dinv when DINV). Tiles are double-buffered: the next
 * tile's copy is in flight while this one is summed. */
constexpr int kGramBuf = 3 * kTile + kRows;
constexpr size_t kGramShared = sizeof(double) * 2 * kGramBuf;

template <bool DINV>
__device__ __forceinline__ void gram_issue(double *buf, int64_t n, int64_t t, int s, int m,
                                           const double *P, const double *Q, const double *R,
                                           const double *dinv) {
  const int64_t r0 = t * kRows;
  const int nr = tile_rows(n, t);
  copy_tile_async(buf, P, r0, nr, s);
  copy_tile_async(buf + kTile, Q, r0, nr, s);
  copy_tile_async(buf + 2 * kTile, R, r0, nr, m);
  if (DINV) copy_diag_async(buf + 3 * kTile, dinv, r0, nr);
}

/* One row tile's part of the three Grams, once its tiles of P, Q, R and dinv have arrived (this
 * thread's copies waited for): dinv inverted in place, a barrier, P^T diag(dinv)^-1 P on warp w's
 * upper tile, P^T Q (w < 4) or P^T R (w >= 4) on its row tile (w % 4) / 2 and column tiles
 * 2 (w % 2), 2 (w % 2) + 1, then a barrier before the tiles are refilled. */
template <bool DINV>
__device__ __forceinline__ void gram3_tile(double (&row)[2][4], double (&sym)[4], const double *Ps,
                                           const double *Qs, const double *Rs, double *ds, int s,
                                           int m, int warp) {
  const int isr = warp >> 2, mt = (warp & 3) >> 1, nt0 = 2 * (warp & 1);
  if (DINV) invert_diag(ds);
  __syncthreads();
  gram_sym<DINV ? kWtMul : kWtNone>(sym, Ps, s, warp, ds); /* P^T diag(dinv)^-1 P */
  gram_row<2, kWtNone>(row, Ps, isr ? Rs : Qs, mt, nt0, s, isr ? m : s, nullptr);
  __syncthreads();
}

template <bool DINV>
__global__ __launch_bounds__(kThreads, 3) void bcg_gram_kernel(
    int64_t n, int s, int m, const double *__restrict__ P, const double *__restrict__ Q,
    const double *__restrict__ R, const double *__restrict__ dinv, double *__restrict__ part) {
  extern __shared__ __align__(128) double sm[];
  zero_shared(sm, 2 * kGramBuf);
  __syncthreads();
  const int warp = (int)(threadIdx.x >> 5);
  double row[2][4] = {{0.0, 0.0, 0.0, 0.0}, {0.0, 0.0, 0.0, 0.0}};
  double sym[4] = {0.0, 0.0, 0.0, 0.0};
  const int64_t ntiles = (n + kRows - 1) / kRows;
  int64_t t = blockIdx.x;
  if (t < ntiles) gram_issue<DINV>(sm, n, t, s, m, P, Q, R, dinv);
  __pipeline_commit();
  for (int b = 0; t < ntiles; t += gridDim.x, b ^= 1) {
    const int64_t tn = t + gridDim.x;
    if (tn < ntiles) gram_issue<DINV>(sm + (b ^ 1) * kGramBuf, n, tn, s, m, P, Q, R, dinv);
    __pipeline_commit();
    __pipeline_wait_prior(1);
    double *Ps = sm + b * kGramBuf;
    gram3_tile<DINV>(row, sym, Ps, Ps + kTile, Ps + 2 * kTile, Ps + 3 * kTile, s, m, warp);
  }
  store_gram3(part, row, sym, warp);
}

/* ---- Q = A P with G = P^T Q, PP = P^T diag(dinv)^-1 P, PR = P^T R --------------------------- */
/* The Block-CG product and its Grams in one pass (bcg_spmm_gram in kernels/blas.h): per tile of
 * 32 rows, the CTA computes the tile's rows of Q with a row-split gather (a group of W lanes per
 * row, V columns per lane; sg_gather below), writes them to memory and to a
 * shared tile, and sums the tile's part of the three Grams on the tensor cores as
 * bcg_gram_kernel does (same partials, same warp roles). The tiles of P and R are copied in
 * (cp.async) while the rows of Q are gathered; P's rows were just gathered for the product, so
 * they come from L2. Traffic per pass: A, P gathered (once from memory), Q written, R read;
 * against SpMM and bcg_gram separately: Q and P are not read again from memory.
 * One pass was faster than the two steps, and the solve with it (bench/RESULTS.md, rule
 * bcg-fused). Tried and slower: three CTAs per SM (74 registers); double-buffered tiles (55 KB
 * of shared memory per CTA, likely because the larger shared-memory carve-out leaves less L1
 * for the gathered rows of P). */
constexpr int kSgBuf = 3 * kTile + kRows; /* the tiles of P, Q, R and dinv */
constexpr size_t kSgShared = sizeof(double) * kSgBuf;
constexpr int kSgCtas = 4; /* CTAs per SM: at most 64 registers */
#ifndef COAL_SG_LOADS
#define COAL_SG_LOADS 16
#endif
/* Doubles of P per lane in flight in the gather (sg_gather's L): 16, i.e. eight rows of P at two
 * columns a lane, twice the row-split kernel's (rs_row), which made the pass and the Block-CG
 * solve faster. rs_row with 16 in flight was slower (and slowed the row-split SpMM at k = 8
 * and 128); two rows per lane group in step spilled at 64 registers and at three CTAs per SM
 * was no faster. One column a lane (odd s) keeps 8: at 16 it spills (bench/RESULTS.md, rule
 * bcg-sg-loads). */
constexpr int kSgLoads = COAL_SG_LOADS;

/* acc = row i of A P for the group of W lanes that owns row i (lane: columns ja .. ja + V - 1 of
 * P, when ina): the row's entries p0 .. p0 + len - 1 are loaded kRsChunk at a time (coalesced
 * over the group) and broadcast by shuffles, and the rows of P of U = L / V entries are loaded at
 * once (L doubles per lane in flight). maxlen is the longest row of the warp (uniform loop bounds
 * and shuffles). Products are summed in the row's entry order, as the host twin does. */
template <int W, int V, int L>
__device__ __forceinline__ void
sg_gather(const int32_t *__restrict__ col, const double *__restrict__ val,
          const double *__restrict__ P, int s, int32_t p0, int len, int maxlen, int lane, int ja,
          bool ina, double (&acc)[V]) {
  constexpr int M = coal_spmm_dev::kRsChunk / W;
  constexpr int U = V >= L ? 1 : L / V;
  for (int c0 = 0; c0 < maxlen; c0 += coal_spmm_dev::kRsChunk) {
    int32_t mc[M];
    double mv[M];
#pragma unroll
    for (int m = 0; m < M; m++) {
      const int e = c0 + lane + m * W;
      mc[m] = 0, mv[m] = 0.0;
      if (e < len) mc[m] = coal_ld_stream(col + p0 + e), mv[m] = coal_ld_stream(val + p0 + e);
    }
    const int cn = maxlen - c0 < coal_spmm_dev::kRsChunk ? maxlen - c0 : coal_spmm_dev::kRsChunk;
#pragma unroll
    for (int t0 = 0; t0 < coal_spmm_dev::kRsChunk; t0 += U) {
      if (t0 >= cn) break; /* uniform */
      double a[U], xv[U][V];
#pragma unroll
      for (int u = 0; u < U; u++) { /* entries past the row: a = 0 and x = 0 add nothing */
        const int t = t0 + u;
        const int32_t cc = __shfl_sync(COAL_FULL_MASK, mc[t / W], t % W, W);
        a[u] = __shfl_sync(COAL_FULL_MASK, mv[t / W], t % W, W);
        /* 32-bit byte offsets into P (s <= COAL_BCG_FUSED_MAX columns) */
        if (c0 + t < len && ina)
          coal_spmm_dev::load_x<double, V, true, true>(P, s, cc, ja, xv[u]);
        else
#pragma unroll
          for (int v = 0; v < V; v++) xv[u][v] = 0.0;
      }
#pragma unroll
      for (int u = 0; u < U; u++)
#pragma unroll
        for (int v = 0; v < V; v++) acc[v] = fma(a[u], xv[u][v], acc[v]);
    }
  }
}

template <int W, int V, bool DINV>
__global__ __launch_bounds__(kThreads, kSgCtas) void bcg_spmm_gram_kernel(
    int64_t n, const int32_t *__restrict__ rowptr, const int32_t *__restrict__ col,
    const double *__restrict__ val, int s, int m, const double *__restrict__ P,
    double *__restrict__ Q, const double *__restrict__ R, const double *__restrict__ dinv,
    double *__restrict__ part) {
  extern __shared__ __align__(128) double sm[];
  double *Ps = sm, *Qs = sm + kTile, *Rs = sm + 2 * kTile, *ds = sm + 3 * kTile;
  zero_shared(sm, kSgBuf);
  __syncthreads();
  constexpr int G = kThreads / W; /* rows of Q in flight per CTA */
  constexpr int L = V > 1 ? kSgLoads : 8;
  const int warp = (int)(threadIdx.x >> 5);
  const int lane = (int)(threadIdx.x % W), grp = (int)(threadIdx.x / W), ja = lane * V;
  const bool ina = ja < s; /* V == 2 only for even s: then ja < s covers ja + 1 */
  double row[2][4] = {{0.0, 0.0, 0.0, 0.0}, {0.0, 0.0, 0.0, 0.0}};
  double sym[4] = {0.0, 0.0, 0.0, 0.0};
  const int64_t ntiles = (n + kRows - 1) / kRows;
  for (int64_t t = blockIdx.x; t < ntiles; t += gridDim.x) {
    const int64_t r0 = t * kRows;
    const int nr = tile_rows(n, t);
    copy_tile_async(Ps, P, r0, nr, s);
    copy_tile_async(Rs, R, r0, nr, m);
    if (DINV) copy_diag_async(ds, dinv, r0, nr);
    __pipeline_commit();
#pragma unroll 1
    for (int i = grp; i < kRows; i += G) { /* uniform over a warp: 32 / W rows each */
      const bool valid = i < nr;
      int32_t p0 = 0, len = 0;
      if (valid) {
        p0 = __ldg(rowptr + r0 + i);
        len = __ldg(rowptr + r0 + i + 1) - p0;
      }
      const int maxlen = (int)__reduce_max_sync(COAL_FULL_MASK, (unsigned)len);
      double acc[V];
#pragma unroll
      for (int v = 0; v < V; v++) acc[v] = 0.0;
      sg_gather<W, V, L>(col, val, P, s, p0, len, maxlen, lane, ja, ina, acc);
      if (ina) {
#pragma unroll
        for (int v = 0; v < V; v++) Qs[i * kLd + ja + v] = valid ? acc[v] : 0.0;
        if (valid)
          coal_spmm_dev::store_y<double, V>(Q, s, true, V > 1, (int32_t)(r0 + i), ja, s, acc, 1.0,
                                            0.0);
      }
    }
    __pipeline_wait_prior(0);
    gram3_tile<DINV>(row, sym, Ps, Qs, Rs, ds, s, m, warp);
  }
  store_gram3(part, row, sym, warp);
}

/* ---- R -= Q C; with Z = dinv R: Q^T Z, R^T Z, column norms of R --------------------------- */
/* partials per CTA: [Q^T Z | R^T Z (upper tiles) | column sums of R^2], kUpdPart doubles.
 * Double-buffered tiles of Q, R and dinv; C's fragments in registers. Warp w owns the 16 x 8
 * tile (w / 4, w % 4) of R and of Q^T Z, and upper tile w of R^T Z. The new R goes from the
 * accumulators to memory, its squares are summed on the way, and Z = diag(dinv) R goes back
 * into the warp's part of the R tile (8-byte accesses: the 16-byte ones conflict on kLd's banks),
 * so Q^T Z reads Z unweighted and Z is never written to memory: faster than a tile that kept
 * R and weighted its rows by dinv as the Gram read them; 16-byte accesses, and Q^T Z split over
 * the warps by half the rows, were slower (bench/RESULTS.md, rule bcg-update-z).
 * (Until the solver deferred X += P C to bcg_dir, this pass also updated X and summed P^T Z:
 * six blocks of traffic against three now.) */
constexpr int kUpdPart = 2 * kGram + kW;
constexpr int kUpdBuf = 2 * kTile + kRows;
#ifndef COAL_UPD_STAGES
#define COAL_UPD_STAGES 2
#endif
#ifndef COAL_UPD_CTAS
#define COAL_UPD_CTAS 3
#endif
/* Tiles in flight per CTA (this one included) and CTAs per SM: three CTAs (78-80 registers)
 * faster than two; four stages instead of two no faster (bench/RESULTS.md, rule bcg-ctas). */
constexpr int kUpdStages = COAL_UPD_STAGES;
constexpr int kUpdCtas = COAL_UPD_CTAS;
constexpr size_t kUpdShared = sizeof(double) * (kUpdStages * kUpdBuf + kCoef);

template <bool DINV>
__device__ __forceinline__ void update_issue(double *buf, int64_t n, int64_t t, int s, int m,
                                             const double *Q, const double *R, const double *dinv) {
  const int64_t r0 = t * kRows;
  const int nr = tile_rows(n, t);
  if (s > 0) copy_tile_async(buf, Q, r0, nr, s);
  copy_tile_async(buf + kTile, R, r0, nr, m);
  if (DINV) copy_diag_async(buf + 2 * kTile, dinv, r0, nr);
}

template <bool DINV>
__global__ __launch_bounds__(kThreads, kUpdCtas) void bcg_update_kernel(
    int64_t n, int s, int m, const double *__restrict__ Q, const double *__restrict__ C,
    double *__restrict__ R, const double *__restrict__ dinv, int want_rz,
    double *__restrict__ part) {
  extern __shared__ __align__(128) double sm[];
  double *Cs = sm + kUpdStages * kUpdBuf;
  zero_shared(sm, kUpdStages * kUpdBuf + kCoef);
  __syncthreads();
  if (s > 0) load_coef(Cs, C, s, m);
  __syncthreads();
  const int tid = (int)threadIdx.x, warp = tid >> 5, mt = warp >> 2, nt = warp & 3;
  const int g = lane_g(), col = nt * 8 + 2 * lane_t();
  double cb[1][4][2]; /* C's fragments for this warp's column tile */
  coef_frags<1>(cb, Cs, nt);
  double qz[1][4] = {{0.0, 0.0, 0.0, 0.0}};
  double sym[4] = {0.0, 0.0, 0.0, 0.0};
  double nrm[2] = {0.0, 0.0}; /* columns col, col + 1 */
  const int64_t ntiles = (n + kRows - 1) / kRows;
  int64_t t = blockIdx.x;
  for (int b = 0; b < kUpdStages - 1; b++) { /* the first tiles in flight */
    const int64_t tb = t + (int64_t)b * gridDim.x;
    if (tb < ntiles) update_issue<DINV>(sm + b * kUpdBuf, n, tb, s, m, Q, R, dinv);
    __pipeline_commit();
  }
  for (int b = 0; t < ntiles; t += gridDim.x, b = b + 1 == kUpdStages ? 0 : b + 1) {
    const int64_t tn = t + (int64_t)(kUpdStages - 1) * gridDim.x;
    const int bn = b == 0 ? kUpdStages - 1 : b - 1; /* the buffer freed by the last tile */
    if (tn < ntiles) update_issue<DINV>(sm + bn * kUpdBuf, n, tn, s, m, Q, R, dinv);
    __pipeline_commit();
    __pipeline_wait_prior(kUpdStages - 1);
    __syncthreads();
    double *Qs = sm + b * kUpdBuf, *Zs = Qs + kTile, *ds = Zs + kTile;
    const int64_t r0 = t * kRows;
    const int nr = tile_rows(n, t);
    if (nt * 8 < m) { /* R -= Q C on the warp's 16 x 8 part (rows past nr and columns past m
                         are zero on both sides and stay zero); Z = diag(dinv) R replaces R in
                         the tile */
      double c[1][4] = {{0.0, 0.0, 0.0, 0.0}};
      if (s > 0) row_mma_reg<1>(c, Qs, cb, mt, nt, s, m, nullptr);
#pragma unroll
      for (int h = 0; h < 2; h++) { /* rows g, g + 8 of the warp's row tile */
        const int r = mt * 16 + g + 8 * h;
        double *y = Zs + r * kLd + col;
        const double v0 = y[0] - c[0][2 * h], v1 = y[1] - c[0][2 * h + 1];
        nrm[0] = fma(v0, v0, nrm[0]), nrm[1] = fma(v1, v1, nrm[1]);
        if (s > 0 && r < nr) store_pair(R, r0 + r, col, m, v0, v1);
        const double w = DINV ? ds[r] : 1.0;
        y[0] = DINV ? w * v0 : v0, y[1] = DINV ? w * v1 : v1;
      }
    }
    __syncthreads();
    gram_row<1, kWtNone>(qz, Qs, Zs, mt, nt, s, m, nullptr); /* Q^T Z */
    /* R^T Z as Z^T diag(dinv)^-1 Z (a row with dinv = 0 has Z = 0 and weight 0) */
    if (want_rz) gram_sym<DINV ? kWtInv : kWtNone>(sym, Zs, m, warp, ds);
    __syncthreads(); /* the buffer is refilled by the next iteration */
  }
  double *pp = part + (int64_t)blockIdx.x * kUpdPart;
  store_acc(pp, kW, qz[0], mt, nt);
  if (warp < kSymTiles) {
    int um, un;
    upper_tile(warp, um, un);
    store_acc(pp + kGram, kW, sym, um, un);
  }
  /* column sums of squares in a fixed order: over the 8 lane rows g (shuffles), then the two
   * row tiles, through Cs (free since the fragments were taken) */
#pragma unroll
  for (int e = 0; e < 2; e++) {
    double v = nrm[e];
#pragma unroll
    for (int o = 4; o < 32; o <<= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if (g == 0) Cs[mt * kW + col + e] = v;
  }
  __syncthreads();
  if (tid < kW) pp[2 * kGram + tid] = Cs[tid] + Cs[kW + tid];
}

/* ---- Y = diag(d) X1 C1 + X2 C2, X3 += X2 C3 ------------------------------------------------ */
/* Double-buffered tiles of X1, X2, X3 and d. Warp w owns the 16 x 8 tile (w / 4, w % 4) of Y
 * and of X3. The coefficients are staged through the tile buffers once, before the first copy,
 * and their fragments stay in registers; Y and the new X3 go from the accumulators to memory.
 * (The pass used to offer Y^T Y and Y^T X1 as well; the solver stopped asking for them, and
 * their accumulators made room for X3's.) */
constexpr int kDirBuf = 3 * kTile + kRows;
#ifndef COAL_DIR_STAGES
#define COAL_DIR_STAGES 2
#endif
#ifndef COAL_DIR_CTAS
#define COAL_DIR_CTAS 2
#endif
/* Measured as for the update: three CTAs per SM (80 registers, 16 bytes spilled) were slower
 * than two; three stages no faster (bench/RESULTS.md, rule bcg-ctas). */
constexpr int kDirCtas = COAL_DIR_CTAS;
constexpr int kDirStages = COAL_DIR_STAGES; /* tiles in flight per CTA, this one included */
constexpr size_t kDirShared = sizeof(double) * kDirStages * kDirBuf;
static_assert(3 * kCoef <= kDirStages * kDirBuf, "the coefficients are staged in the buffers");

__device__ __forceinline__ void dir_issue(double *buf, int64_t n, int64_t t, int p1, int p2, int q,
                                          const double *X1, const double *d, const double *X2,
                                          const double *X3) {
  const int64_t r0 = t * kRows;
  const int nr = tile_rows(n, t);
  if (q > 0) copy_tile_async(buf, X1, r0, nr, p1);
  if (p2 > 0) copy_tile_async(buf + kTile, X2, r0, nr, p2);
  if (X3) copy_tile_async(buf + 2 * kTile, X3, r0, nr, p1);
  if (d) copy_diag_async(buf + 3 * kTile, d, r0, nr);
}

__global__ __launch_bounds__(kThreads, kDirCtas) void bcg_dir_kernel(
    int64_t n, int p1, int p2, int q, const double *__restrict__ X1, const double *__restrict__ d,
    const double *__restrict__ C1, const double *__restrict__ X2, const double *__restrict__ C2,
    double *__restrict__ Y, const double *__restrict__ C3, double *__restrict__ X3) {
  extern __shared__ __align__(128) double sm[];
  zero_shared(sm, kDirStages * kDirBuf);
  __syncthreads();
  load_coef(sm, C1, p1, q);
  if (p2 > 0) load_coef(sm + kCoef, C2, p2, q);
  if (X3) load_coef(sm + 2 * kCoef, C3, p2, p1);
  __syncthreads();
  const int warp = (int)(threadIdx.x >> 5), mt = warp >> 2, nt = warp & 3;
  double cb1[1][4][2], cb2[1][4][2], cb3[1][4][2]; /* fragments for column tile nt */
  coef_frags<1>(cb1, sm, nt);
  coef_frags<1>(cb2, sm + kCoef, nt);
  coef_frags<1>(cb3, sm + 2 * kCoef, nt);
  __syncthreads();
  zero_shared(sm, kDirStages * kDirBuf); /* the tiles' padding columns must read as zero */
  __syncthreads();
  const int64_t ntiles = (n + kRows - 1) / kRows;
  const int r = mt * 16 + lane_g(), col = nt * 8 + 2 * lane_t();
  int64_t t = blockIdx.x;
  for (int b = 0; b < kDirStages - 1; b++) { /* the first tiles in flight */
    const int64_t tb = t + (int64_t)b * gridDim.x;
    if (tb < ntiles) dir_issue(sm + b * kDirBuf, n, tb, p1, p2, q, X1, d, X2, X3);
    __pipeline_commit();
  }
  for (int b = 0; t < ntiles; t += gridDim.x, b = b + 1 == kDirStages ? 0 : b + 1) {
    const int64_t tn = t + (int64_t)(kDirStages - 1) * gridDim.x;
    const int bn = b == 0 ? kDirStages - 1 : b - 1; /* the buffer freed by the last tile */
    if (tn < ntiles) dir_issue(sm + bn * kDirBuf, n, tn, p1, p2, q, X1, d, X2, X3);
    __pipeline_commit();
    __pipeline_wait_prior(kDirStages - 1);
    __syncthreads();
    const double *X1s = sm + b * kDirBuf, *X2s = X1s + kTile, *X3s = X2s + kTile;
    const double *ds = X3s + kTile;
    const int64_t r0 = t * kRows;
    const int nr = tile_rows(n, t);
    if (nt * 8 < q) { /* the warp's 16 x 8 part of Y */
      double c[1][4] = {{0.0, 0.0, 0.0, 0.0}};
      row_mma_reg<1>(c, X1s, cb1, mt, nt, p1, q, d ? ds : nullptr);
      if (p2 > 0) row_mma_reg<1>(c, X2s, cb2, mt, nt, p2, q, nullptr);
      if (r < nr) store_pair(Y, r0 + r, col, q, c[0][0], c[0][1]);
      if (r + 8 < nr) store_pair(Y, r0 + r + 8, col, q, c[0][2], c[0][3]);
    }
    if (X3 && nt * 8 < p1) { /* the warp's 16 x 8 part of X3 += X2 C3 */
      double c[1][4] = {{0.0, 0.0, 0.0, 0.0}};
      row_mma_reg<1>(c, X2s, cb3, mt, nt, p2, p1, nullptr);
      const double *x = X3s + r * kLd + col;
      if (r < nr) store_pair(X3, r0 + r, col, p1, x[0] + c[0][0], x[1] + c[0][1]);
      if (r + 8 < nr)
        store_pair(X3, r0 + r + 8, col, p1, x[8 * kLd] + c[0][2], x[8 * kLd + 1] + c[0][3]);
    }
    __syncthreads();
  }
}

/* S = diag(d)^-1 P for an n x s tight block (the wide path of bcg_gram). */
__global__ void inv_scale_kernel(int64_t n, int64_t s, const double *__restrict__ d,
                                 const double *__restrict__ P, double *__restrict__ S) {
  const int64_t total = n * s, stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride)
    S[e] = P[e] / d[e / s];
}

/* out[e] = sum over b < nb of part[b * E + e], in order of b within each of the 8 rows of
 * threads, then the 8 sums in order: deterministic. CTAs of 32 x 8 threads, 32 entries each. */
__global__ __launch_bounds__(kThreads) void sum_parts_kernel(const double *__restrict__ part,
                                                             int nb, int E,
                                                             double *__restrict__ out) {
  __shared__ double sh[8][32];
  const int e = (int)blockIdx.x * 32 + (int)threadIdx.x, y = (int)threadIdx.y;
  double v = 0.0;
  if (e < E) {
    int b = y;
    for (; b + 24 < nb; b += 32) { /* four loads in flight */
      const double a0 = part[(int64_t)b * E + e], a1 = part[(int64_t)(b + 8) * E + e];
      const double a2 = part[(int64_t)(b + 16) * E + e], a3 = part[(int64_t)(b + 24) * E + e];
      v += a0, v += a1, v += a2, v += a3;
    }
    for (; b < nb; b += 8) v += part[(int64_t)b * E + e];
  }
  sh[y][threadIdx.x] = v;
  __syncthreads();
  if (y == 0 && e < E) {
    double t = 0.0;
    for (int i = 0; i < 8; i++) t += sh[i][threadIdx.x];
    out[e] = t;
  }
}

/* CTAs of a tile kernel: resident CTAs on every SM, at most one per row tile. */
unsigned tile_grid(coal_ctx ctx, int64_t n, int per_sm) {
  const int64_t tiles = (n + kRows - 1) / kRows;
  const int64_t cap = (int64_t)ctx->cuda->sm_count * per_sm;
  return (unsigned)(tiles < cap ? tiles : cap);
}

/* Adds the nb partials of E entries on the device and downloads the sums (pinned) into *host. */
coal_status sum_and_download(coal_ctx ctx, const double *part, int nb, int E, double **host) {
  void *outd = NULL, *outh = NULL;
  COAL_CALL(coal_ws_small(ctx, sizeof(double) * (size_t)E, &outd));
  COAL_CALL(coal_ws_pinned(ctx, sizeof(double) * (size_t)E, &outh));
  dim3 block(32, 8);
  sum_parts_kernel<<<(unsigned)((E + 31) / 32), block, 0, coal_stream(ctx)>>>(part, nb, E,
                                                                              (double *)outd);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  COAL_CUDA_CALL(ctx, cudaMemcpyAsync(outh, outd, sizeof(double) * (size_t)E,
                                      cudaMemcpyDeviceToHost, coal_stream(ctx)));
  COAL_CUDA_CALL(ctx, cudaStreamSynchronize(coal_stream(ctx)));
  *host = (double *)outh;
  return COAL_SUCCESS;
}

/* Copies the p x q corner of a 32 x 32 partial-sum matrix into a tight host matrix. */
void unpack(const double *g, int64_t p, int64_t q, double *out) {
  for (int64_t a = 0; a < p; a++) memcpy(out + a * q, g + a * kW, sizeof(double) * (size_t)q);
}

/* The same for a symmetric Gram summed on its upper 16 x 8 tiles only (upper_tile): the entries
 * of rows 16-31 in columns 0-15 come from their mirror. */
void unpack_sym(const double *g, int64_t p, double *out) {
  for (int64_t a = 0; a < p; a++)
    for (int64_t b = 0; b < p; b++)
      out[a * p + b] = a < 16 || b >= 16 ? g[a * kW + b] : g[b * kW + a];
}

/* Uploads `count` doubles from pageable host memory into ws_small at offset `off` (doubles);
 * returns once they are staged. */
coal_status upload(coal_ctx ctx, const double *h, size_t count, void *base, size_t off) {
  if (count == 0) return COAL_SUCCESS;
  COAL_CUDA_CALL(ctx, cudaMemcpyAsync((double *)base + off, h, sizeof(double) * count,
                                      cudaMemcpyHostToDevice, coal_stream(ctx)));
  return COAL_SUCCESS;
}

void zero_host(double *a, int64_t count) {
  for (int64_t i = 0; i < count; i++) a[i] = 0.0;
}

/* Sums the partials of store_gram3 and unpacks G (s x s), PP (s x s) and PR (s x m). */
coal_status gram3_download(coal_ctx ctx, const double *part, unsigned grid, int64_t s, int64_t m,
                           double *G, double *PP, double *PR) {
  double *h = NULL;
  COAL_CALL(sum_and_download(ctx, part, (int)grid, 3 * kGram, &h));
  unpack(h, s, s, G);
  unpack_sym(h + kGram, s, PP);
  unpack(h + 2 * kGram, s, m, PR);
  return COAL_SUCCESS;
}

} // namespace

/* ---- operations ---------------------------------------------------------------------------- */
coal_status coal_blas_bcg_gram_cuda(coal_ctx ctx, int64_t n, int64_t s, int64_t m, const double *P,
                                    const double *Q, const double *R, const double *dinv, double *S,
                                    double *G, double *PP, double *PR) {
  if (s == 0) return COAL_SUCCESS;
  if (n == 0) {
    zero_host(G, s * s), zero_host(PP, s * s), zero_host(PR, s * m);
    return COAL_SUCCESS;
  }
  if (s > kW || m > kW) {
    COAL_CALL(coal_blas_gram_cuda(ctx, n, s, s, P, s, Q, s, G, s));
    if (dinv) { /* S = diag(dinv)^-1 P, then P^T S */
      COAL_CHECK(ctx, S != NULL, COAL_ERR_ARG, "bcg_gram: a scaled Gram of %lld columns needs S",
                 (long long)s);
      inv_scale_kernel<<<coal_cuda_grid(n * s, kThreads), kThreads, 0, coal_stream(ctx)>>>(
          n, s, dinv, P, S);
      COAL_CUDA_LAUNCH_CHECK(ctx);
    }
    COAL_CALL(coal_blas_gram_cuda(ctx, n, s, s, P, s, dinv ? S : P, s, PP, s));
    return coal_blas_gram_cuda(ctx, n, s, m, P, s, R, m, PR, m);
  }
  const unsigned grid = tile_grid(ctx, n, 3);
  double *part = NULL;
  COAL_CALL(coal_ws_part(ctx, (size_t)grid * 3 * kGram, &part));
  if (dinv) {
    COAL_CUDA_CALL(ctx, cudaFuncSetAttribute(bcg_gram_kernel<true>,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             (int)kGramShared));
    bcg_gram_kernel<true>
        <<<grid, kThreads, kGramShared, coal_stream(ctx)>>>(n, (int)s, (int)m, P, Q, R, dinv, part);
  } else {
    COAL_CUDA_CALL(ctx, cudaFuncSetAttribute(bcg_gram_kernel<false>,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             (int)kGramShared));
    bcg_gram_kernel<false>
        <<<grid, kThreads, kGramShared, coal_stream(ctx)>>>(n, (int)s, (int)m, P, Q, R, dinv, part);
  }
  COAL_CUDA_LAUNCH_CHECK(ctx);
  return gram3_download(ctx, part, grid, s, m, G, PP, PR);
}

coal_status coal_blas_bcg_update_cuda(coal_ctx ctx, int64_t n, int64_t s, int64_t m,
                                      const double *Q, const double *C, double *R,
                                      const double *dinv, double *Z, double *nrm2, double *QZ,
                                      double *RZ) {
  if (m == 0) return COAL_SUCCESS;
  if (n == 0) {
    zero_host(nrm2, m), zero_host(QZ, s * m), zero_host(RZ, m * m);
    return COAL_SUCCESS;
  }
  if (s > kW || m > kW) { /* one pass per step */
    if (s > 0) COAL_CALL(coal_blas_gemm_cuda(ctx, n, s, m, -1.0, Q, s, C, m, 1.0, R, m));
    COAL_CALL(coal_blas_dscale_cuda(ctx, n, m, dinv, R, m, Z, m, nrm2));
    if (s > 0) COAL_CALL(coal_blas_gram_cuda(ctx, n, s, m, Q, s, Z, m, QZ, m));
    return RZ ? coal_blas_gram_cuda(ctx, n, m, m, R, m, Z, m, RZ, m) : COAL_SUCCESS;
  }
  void *cd = NULL;
  COAL_CALL(coal_ws_small(ctx, sizeof(double) * (size_t)(s * m + kUpdPart), &cd));
  const unsigned grid = tile_grid(ctx, n, kUpdCtas);
  double *part = NULL;
  COAL_CALL(coal_ws_part(ctx, (size_t)grid * kUpdPart, &part));
  /* C goes behind the space sum_and_download uses for the sums (both in ws_small) */
  COAL_CALL(upload(ctx, C, (size_t)(s * m), cd, kUpdPart));
  const double *Cd = (const double *)cd + kUpdPart;
  if (dinv) {
    COAL_CUDA_CALL(ctx, cudaFuncSetAttribute(bcg_update_kernel<true>,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             (int)kUpdShared));
    bcg_update_kernel<true><<<grid, kThreads, kUpdShared, coal_stream(ctx)>>>(
        n, (int)s, (int)m, Q, Cd, R, dinv, RZ != NULL, part);
  } else {
    COAL_CUDA_CALL(ctx, cudaFuncSetAttribute(bcg_update_kernel<false>,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             (int)kUpdShared));
    bcg_update_kernel<false><<<grid, kThreads, kUpdShared, coal_stream(ctx)>>>(
        n, (int)s, (int)m, Q, Cd, R, dinv, RZ != NULL, part);
  }
  COAL_CUDA_LAUNCH_CHECK(ctx);
  double *h = NULL;
  COAL_CALL(sum_and_download(ctx, part, (int)grid, kUpdPart, &h));
  unpack(h, s, m, QZ);
  if (RZ) unpack_sym(h + kGram, m, RZ);
  memcpy(nrm2, h + 2 * kGram, sizeof(double) * (size_t)m);
  return COAL_SUCCESS;
}

coal_status coal_blas_bcg_dir_cuda(coal_ctx ctx, int64_t n, int64_t p1, int64_t p2, int64_t q,
                                   const double *X1, const double *d, const double *C1,
                                   const double *X2, const double *C2, double *Y, const double *C3,
                                   double *X3) {
  if (p2 == 0) X3 = NULL; /* no deferred update without X2 */
  if (n == 0 || (q == 0 && !X3)) return COAL_SUCCESS;
  if (p1 > kW || p2 > kW || q > kW || p1 == 0) { /* one pass per step */
    if (X3) COAL_CALL(coal_blas_gemm_cuda(ctx, n, p2, p1, 1.0, X2, p2, C3, p1, 1.0, X3, p1));
    if (q == 0) return COAL_SUCCESS;
    COAL_CALL(coal_blas_gemm_cuda(ctx, n, p1, q, 1.0, X1, p1, C1, q, 0.0, Y, q));
    if (d) COAL_CALL(coal_blas_dscale_cuda(ctx, n, q, d, Y, q, Y, q, NULL));
    if (p2 > 0) COAL_CALL(coal_blas_gemm_cuda(ctx, n, p2, q, 1.0, X2, p2, C2, q, 1.0, Y, q));
    return COAL_SUCCESS;
  }
  void *cd = NULL;
  const size_t n1 = (size_t)(p1 * q), n2 = (size_t)(p2 * q), n3 = X3 ? (size_t)(p2 * p1) : 0;
  COAL_CALL(coal_ws_small(ctx, sizeof(double) * (n1 + n2 + n3), &cd));
  COAL_CALL(upload(ctx, C1, n1, cd, 0));
  COAL_CALL(upload(ctx, C2, n2, cd, n1));
  COAL_CALL(upload(ctx, C3, n3, cd, n1 + n2));
  const double *C1d = (const double *)cd, *C2d = C1d + n1, *C3d = C2d + n2;
  const unsigned grid = tile_grid(ctx, n, kDirCtas);
  COAL_CUDA_CALL(ctx,
                 cudaFuncSetAttribute(bcg_dir_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      (int)kDirShared));
  bcg_dir_kernel<<<grid, kThreads, kDirShared, coal_stream(ctx)>>>(n, (int)p1, (int)p2, (int)q, X1,
                                                                   d, C1d, X2, C2d, Y, C3d, X3);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  return COAL_SUCCESS;
}

coal_status coal_blas_bcg_spmm_gram_cuda(coal_mat A, coal_bvec Pv, coal_bvec Qv, int64_t m,
                                         const double *R, const double *dinv, double *G, double *PP,
                                         double *PR) {
  if (!A || !Pv || !Qv) return COAL_ERR_ARG;
  coal_ctx ctx = A->ctx;
  const int64_t n = A->nrows, s = Pv->k;
  COAL_CHECK(ctx,
             A->dtype == COAL_F64 && A->ncols == n && Pv->n == n && Qv->n == n && Qv->k == s &&
                 Pv->layout == COAL_ROW_MAJOR && Qv->layout == COAL_ROW_MAJOR && Pv->ld == s &&
                 Qv->ld == s && s >= COAL_BCG_FUSED_MIN && s <= COAL_BCG_FUSED_MAX && m >= 0 &&
                 m <= COAL_BCG_FUSED_MAX,
             COAL_ERR_UNSUPPORTED,
             "fused Block-CG product: A %d x %d, P %lld x %lld, m = %lld outside its shapes",
             A->nrows, A->ncols, (long long)Pv->n, (long long)s, (long long)m);
  const double *P = (const double *)Pv->data;
  double *Q = (double *)Qv->data;
  if (n == 0) {
    zero_host(G, s * s), zero_host(PP, s * s), zero_host(PR, s * m);
    return COAL_SUCCESS;
  }
  struct coal_mat_cuda *d = NULL;
  COAL_CALL(coal_mat_prepare_cuda(A));
  COAL_CALL(coal_cuda_mat(A, &d));
  const unsigned grid = tile_grid(ctx, n, kSgCtas);
  double *part = NULL;
  COAL_CALL(coal_ws_part(ctx, (size_t)grid * 3 * kGram, &part));
  /* 16-byte rows of P and Q (two columns a lane) when s is even, else a lane per column */
  const bool two = s % 2 == 0 && (uintptr_t)P % 16 == 0 && (uintptr_t)Q % 16 == 0;
  const double *val = (const double *)d->values;
  const int si = (int)s, mi = (int)m;
  cudaStream_t st = coal_stream(ctx);
  if (two && dinv)
    bcg_spmm_gram_kernel<16, 2, true><<<grid, kThreads, kSgShared, st>>>(
        n, d->rowptr, d->colind, val, si, mi, P, Q, R, dinv, part);
  else if (two)
    bcg_spmm_gram_kernel<16, 2, false><<<grid, kThreads, kSgShared, st>>>(
        n, d->rowptr, d->colind, val, si, mi, P, Q, R, dinv, part);
  else if (dinv)
    bcg_spmm_gram_kernel<32, 1, true><<<grid, kThreads, kSgShared, st>>>(
        n, d->rowptr, d->colind, val, si, mi, P, Q, R, dinv, part);
  else
    bcg_spmm_gram_kernel<32, 1, false><<<grid, kThreads, kSgShared, st>>>(
        n, d->rowptr, d->colind, val, si, mi, P, Q, R, dinv, part);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  return gram3_download(ctx, part, grid, s, m, G, PP, PR);
}
