/* CUDA versions of the Block-CG steps of kernels/blas.h (bcg_gram, bcg_update, gemm2); the
 * host twins in kernels/host/blas.c define the results.
 *
 * Blocks of at most 32 columns (the tile path): a CTA walks tiles of 32 rows, loads each
 * block's tile once into shared memory (coalesced, the whole tile of a tight row-major block
 * is one contiguous range), zero-padded to 32 x 32, and does the small products on the fp64
 * tensor cores (WMMA m8n8k4): the updates X += P C, R -= Q C and Y = X1 C1 + X2 C2 as 8 x 8
 * output tiles, and the Gram matrices A^T B as 8 x 8 tiles accumulated in registers over every
 * row tile the CTA visits. So each block crosses DRAM once per call, which is the point: the
 * Block-CG iteration is bound by memory traffic, and these steps replace 5 to 6 separate
 * cuBLAS passes (solvers/blockcg.c counts them).
 *
 * Sums are deterministic: each CTA of a grid fixed by n and the SM count writes its partial
 * Gram matrices (and column sums of squares) to ws_part, and a second kernel adds the partials
 * of every entry in a fixed order. Wider blocks go through the cuBLAS-based operations of
 * kernels/cuda/blas.cu, one pass per step (same results to rounding).
 *
 * Shared-memory rows are kLd = 36 doubles apart: 288 bytes keeps every fragment pointer 32-byte
 * aligned (WMMA's requirement) and spreads the 8-byte fragment loads of a half-warp (4 rows x
 * 4 columns, or 4 rows x 8 columns) over distinct banks. */
#include "../blas.h"
#include "cuda_internal.h"

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

/* d += a b on the fp64 tensor cores (mma m8n8k4): per lane, with g = lane / 4, t = lane % 4,
 * a = A(g, t) of the 8 x 4 left operand, b = B(t, g) of the 4 x 8 right operand, and d holds
 * D(g, 2t) and D(g, 2t + 1) of the 8 x 8 result. */
__device__ __forceinline__ void dmma(double (&d)[2], double a, double b) {
  asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
      : "+d"(d[0]), "+d"(d[1])
      : "d"(a), "d"(b));
}

__device__ __forceinline__ int lane_g() { return (int)(threadIdx.x & 31) >> 2; }
__device__ __forceinline__ int lane_t() { return (int)(threadIdx.x & 3); }

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

/* Rows [r0, r0 + nr) of a 32-row tile back to a tight n x w block (same mapping). */
__device__ __forceinline__ void store_tile(double *__restrict__ g, const double *sm, int64_t r0,
                                           int nr, int w) {
  const int lane = (int)(threadIdx.x & 31), warp = (int)(threadIdx.x >> 5);
  if ((w & 1) == 0) {
    const int c = 2 * (lane & 15);
    if (c >= w) return;
#pragma unroll
    for (int i = 0; i < 2; i++) {
      const int r = warp * 4 + 2 * i + (lane >> 4);
      if (r < nr)
        *(double2 *)(g + (r0 + r) * w + c) = make_double2(sm[r * kLd + c], sm[r * kLd + c + 1]);
    }
  } else {
    if (lane >= w) return;
#pragma unroll
    for (int i = 0; i < 4; i++) {
      const int r = warp * 4 + i;
      if (r < nr) g[(r0 + r) * w + lane] = sm[r * kLd + lane];
    }
  }
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

/* c[ct] (column tiles ct < 4 with ct*8 < q) += A (row tile rt, kdim columns) * B (kdim x 32):
 * one A fragment per k step feeds four independent accumulators. */
__device__ __forceinline__ void row_mma(double (&c)[4][2], const double *As, const double *Bs,
                                        int rt, int kdim, int q) {
  const double *ap = As + (rt * 8 + lane_g()) * kLd + lane_t();
  const double *bp = Bs + lane_t() * kLd + lane_g();
#pragma unroll
  for (int k0 = 0; k0 < kW; k0 += 4) {
    if (k0 >= kdim) break;
    const double a = ap[k0];
#pragma unroll
    for (int ct = 0; ct < 4; ct++)
      if (ct * 8 < q) dmma(c[ct], a, bp[k0 * kLd + ct * 8]);
  }
}

/* The upper triangle of a 4 x 4 grid of 8 x 8 tiles (mt <= nt), in a fixed order: symmetric
 * Gram matrices (P^T P, Z^T Z) are summed there only and mirrored on the host. Warp w takes
 * tiles w and w + 8. */
__device__ __forceinline__ void upper_tile(int i, int &mt, int &nt) {
  mt = i < 4 ? 0 : i < 7 ? 1 : i < 9 ? 2 : 3;
  nt = i - (mt == 0 ? 0 : mt == 1 ? 3 : mt == 2 ? 5 : 6);
}

/* row[nt] += A^T B over the 32 rows of the tiles, for row tile mt of A and the column tiles
 * nt*8 < q of B; the left fragments are A^T's, A(k0 + t, mt*8 + g). */
__device__ __forceinline__ void gram_row(double (&row)[4][2], const double *As, const double *Bs,
                                         int mt, int q) {
  const int g = lane_g(), t = lane_t();
#pragma unroll
  for (int k0 = 0; k0 < kRows; k0 += 4) {
    const double a = As[(k0 + t) * kLd + mt * 8 + g];
#pragma unroll
    for (int nt = 0; nt < 4; nt++)
      if (nt * 8 < q) dmma(row[nt], a, Bs[(k0 + t) * kLd + nt * 8 + g]);
  }
}

/* sym[i] += B^T B on the upper tiles u0, u1 (u < 0: none; only tiles below q). */
__device__ __forceinline__ void gram_sym(double (&sym)[2][2], const double *Bs, int q, int u0,
                                         int u1) {
  const int g = lane_g(), t = lane_t();
  int um0 = 0, un0 = 0, um1 = 0, un1 = 0; /* column offsets of the upper tiles */
  if (u0 >= 0) upper_tile(u0, um0, un0), um0 *= 8, un0 *= 8;
  if (u1 >= 0) upper_tile(u1, um1, un1), um1 *= 8, un1 *= 8;
  const bool do0 = u0 >= 0 && un0 < q, do1 = u1 >= 0 && un1 < q;
#pragma unroll
  for (int k0 = 0; k0 < kRows; k0 += 4) {
    const double *br = Bs + (k0 + t) * kLd + g;
    if (do0) dmma(sym[0], br[um0], br[un0]);
    if (do1) dmma(sym[1], br[um1], br[un1]);
  }
}

/* Writes an 8 x 8 accumulator tile (mt, nt) into a 32 x 32 partial Gram (ld 32). */
__device__ __forceinline__ void store_acc(double *G, const double (&d)[2], int mt, int nt) {
  *(double2 *)(G + (mt * 8 + lane_g()) * kW + nt * 8 + 2 * lane_t()) = make_double2(d[0], d[1]);
}

/* ---- G = P^T Q, PP = P^T P, PR = P^T R ------------------------------------------------------ */
/* partials per CTA: [P^T Q | P^T P (upper tiles) | P^T R], 3 * kGram doubles. Warp w: row tile
 * w % 4 of P^T Q (w < 4) or P^T R (w >= 4), and its upper tiles of P^T P. Tiles are
 * double-buffered: the next tile's copy is in flight while this one is summed. */
constexpr int kGramBuf = 3 * kTile;
constexpr size_t kGramShared = sizeof(double) * 2 * kGramBuf;

__global__ __launch_bounds__(kThreads, 3) void bcg_gram_kernel(int64_t n, int s, int m,
                                                               const double *__restrict__ P,
                                                               const double *__restrict__ Q,
                                                               const double *__restrict__ R,
                                                               double *__restrict__ part) {
  extern __shared__ __align__(128) double sm[];
  zero_shared(sm, 2 * kGramBuf);
  __syncthreads();
  const int warp = (int)(threadIdx.x >> 5), mt = warp & 3, isr = warp >> 2;
  double row[4][2] = {{0.0, 0.0}, {0.0, 0.0}, {0.0, 0.0}, {0.0, 0.0}};
  double sym[2][2] = {{0.0, 0.0}, {0.0, 0.0}};
  const int64_t ntiles = (n + kRows - 1) / kRows;
  int64_t t = blockIdx.x;
  if (t < ntiles) {
    const int nr = tile_rows(n, t);
    copy_tile_async(sm, P, t * kRows, nr, s);
    copy_tile_async(sm + kTile, Q, t * kRows, nr, s);
    copy_tile_async(sm + 2 * kTile, R, t * kRows, nr, m);
  }
  __pipeline_commit();
  for (int b = 0; t < ntiles; t += gridDim.x, b ^= 1) {
    const int64_t tn = t + gridDim.x;
    if (tn < ntiles) {
      double *nb = sm + (b ^ 1) * kGramBuf;
      const int nr = tile_rows(n, tn);
      copy_tile_async(nb, P, tn * kRows, nr, s);
      copy_tile_async(nb + kTile, Q, tn * kRows, nr, s);
      copy_tile_async(nb + 2 * kTile, R, tn * kRows, nr, m);
    }
    __pipeline_commit();
    __pipeline_wait_prior(1);
    __syncthreads();
    const double *Ps = sm + b * kGramBuf, *Qs = Ps + kTile, *Rs = Qs + kTile;
    /* P^T Q or P^T R: right operand Q or R; P^T P: its own tiles of P (as "B^T B" with B = P) */
    gram_sym(sym, Ps, s, warp, warp + 8 < 10 ? warp + 8 : -1); /* P^T P */
    if (mt * 8 < s) gram_row(row, Ps, isr ? Rs : Qs, mt, isr ? m : s);
    __syncthreads(); /* the buffer is refilled by the next iteration */
  }
  double *pp = part + (int64_t)blockIdx.x * 3 * kGram;
#pragma unroll
  for (int nt = 0; nt < 4; nt++) store_acc(pp + (isr ? 2 : 0) * kGram, row[nt], mt, nt);
  int um, un;
  upper_tile(warp, um, un);
  store_acc(pp + kGram, sym[0], um, un);
  if (warp + 8 < 10) {
    upper_tile(warp + 8, um, un);
    store_acc(pp + kGram, sym[1], um, un);
  }
}

/* ---- X += P C, R -= Q C, Z = dinv R, Grams ------------------------------------------------ */
/* partials per CTA: [Q^T Z | P^T Z | Z^T Z (upper tiles) | column sums of R^2], kUpdPart
 * doubles. Double-buffered tiles of P, Q, X, R and dinv; Z and C single. Warp w owns row tile
 * w % 4 of X and of Q^T Z (w < 4), or of R and of P^T Z (w >= 4), and its upper tiles of
 * Z^T Z. */
constexpr int kUpdPart = 3 * kGram + kW;
constexpr int kUpdBuf = 4 * kTile + kRows;
constexpr size_t kUpdShared = sizeof(double) * (2 * kUpdBuf + kTile + kCoef);

template <bool DINV>
__device__ __forceinline__ void update_issue(double *buf, int64_t n, int64_t t, int s, int m,
                                             const double *P, const double *Q, const double *X,
                                             const double *R, const double *dinv) {
  const int64_t r0 = t * kRows;
  const int nr = tile_rows(n, t);
  if (s > 0) {
    copy_tile_async(buf, P, r0, nr, s);
    copy_tile_async(buf + kTile, Q, r0, nr, s);
    copy_tile_async(buf + 2 * kTile, X, r0, nr, m);
  }
  copy_tile_async(buf + 3 * kTile, R, r0, nr, m);
  if (DINV && threadIdx.x < kRows) {
    const bool ok = (int)threadIdx.x < nr;
    __pipeline_memcpy_async(buf + 4 * kTile + threadIdx.x, ok ? dinv + r0 + threadIdx.x : dinv, 8,
                            ok ? 0 : 8);
  }
}

template <bool DINV>
__global__ __launch_bounds__(kThreads, 2) void bcg_update_kernel(
    int64_t n, int s, int m, const double *__restrict__ P, const double *__restrict__ Q,
    const double *__restrict__ C, double *__restrict__ X, double *__restrict__ R,
    const double *__restrict__ dinv, double *__restrict__ Z, double *__restrict__ part) {
  extern __shared__ __align__(128) double sm[];
  double *Zs = sm + 2 * kUpdBuf, *Cs = Zs + kTile;
  zero_shared(sm, 2 * kUpdBuf + kTile + kCoef);
  __syncthreads();
  if (s > 0) load_coef(Cs, C, s, m);
  const int tid = (int)threadIdx.x, warp = tid >> 5, rt = warp & 3, isr = warp >> 2;
  const int u1 = warp + 8 < 10 ? warp + 8 : -1; /* second upper tile of Z^T Z */
  double row[4][2] = {{0.0, 0.0}, {0.0, 0.0}, {0.0, 0.0}, {0.0, 0.0}};
  double sym[2][2] = {{0.0, 0.0}, {0.0, 0.0}};
  double nrm = 0.0; /* column tid % 32, rows tid / 32 + 8 i */
  const int64_t ntiles = (n + kRows - 1) / kRows;
  int64_t t = blockIdx.x;
  if (t < ntiles) update_issue<DINV>(sm, n, t, s, m, P, Q, X, R, dinv);
  __pipeline_commit();
  for (int b = 0; t < ntiles; t += gridDim.x, b ^= 1) {
    const int64_t tn = t + gridDim.x;
    if (tn < ntiles) update_issue<DINV>(sm + (b ^ 1) * kUpdBuf, n, tn, s, m, P, Q, X, R, dinv);
    __pipeline_commit();
    __pipeline_wait_prior(1);
    __syncthreads();
    double *Ps = sm + b * kUpdBuf, *Qs = Ps + kTile, *Xs = Qs + kTile, *Rs = Xs + kTile;
    const double *ds = Rs + kTile;
    const int64_t r0 = t * kRows;
    const int nr = tile_rows(n, t);
    if (s > 0) { /* X += P C (warps 0-3), R -= Q C (warps 4-7) */
      double c[4][2] = {{0.0, 0.0}, {0.0, 0.0}, {0.0, 0.0}, {0.0, 0.0}};
      row_mma(c, isr ? Qs : Ps, Cs, rt, s, m);
      double *y = (isr ? Rs : Xs) + (rt * 8 + lane_g()) * kLd + 2 * lane_t();
#pragma unroll
      for (int ct = 0; ct < 4; ct++) {
        if (ct * 8 >= m) continue;
        y[ct * 8] = isr ? y[ct * 8] - c[ct][0] : y[ct * 8] + c[ct][0];
        y[ct * 8 + 1] = isr ? y[ct * 8 + 1] - c[ct][1] : y[ct * 8 + 1] + c[ct][1];
      }
      __syncthreads();
    }
    {
      const int c = tid & 31;
#pragma unroll
      for (int r = tid >> 5; r < kRows; r += kThreads / 32) {
        const double v = Rs[r * kLd + c];
        nrm = fma(v, v, nrm);
        Zs[r * kLd + c] = DINV ? ds[r] * v : v;
      }
    }
    __syncthreads();
    if (rt * 8 < s) gram_row(row, isr ? Ps : Qs, Zs, rt, m);
    gram_sym(sym, Zs, m, warp, u1);
    if (s > 0) store_tile(X, Xs, r0, nr, m);
    store_tile(R, Rs, r0, nr, m);
    store_tile(Z, Zs, r0, nr, m);
    __syncthreads(); /* the buffer and Zs are refilled by the next iteration */
  }
  double *pp = part + (int64_t)blockIdx.x * kUpdPart;
#pragma unroll
  for (int nt = 0; nt < 4; nt++) store_acc(pp + isr * kGram, row[nt], rt, nt);
  int um, un;
  upper_tile(warp, um, un);
  store_acc(pp + 2 * kGram, sym[0], um, un);
  if (u1 >= 0) {
    upper_tile(u1, um, un);
    store_acc(pp + 2 * kGram, sym[1], um, un);
  }
  Zs[tid] = nrm; /* Zs is free: the column sums of squares, in a fixed order */
  __syncthreads();
  if (tid < kW) {
    double v = 0.0;
    for (int w = 0; w < kThreads / 32; w++) v += Zs[w * 32 + tid];
    pp[3 * kGram + tid] = v;
  }
}

/* ---- Y = X1 C1 + X2 C2 ----------------------------------------------------------------------- */
/* Double-buffered X1, X2 tiles; warp w owns row tile w / 2, column tiles 2 (w % 2) and
 * 2 (w % 2) + 1. */
constexpr int kGemm2Buf = 2 * kTile;
constexpr size_t kGemm2Shared = sizeof(double) * (2 * kGemm2Buf + kTile + 2 * kCoef);

__global__ __launch_bounds__(kThreads) void gemm2_kernel(
    int64_t n, int p1, int p2, int q, const double *__restrict__ X1, const double *__restrict__ C1,
    const double *__restrict__ X2, const double *__restrict__ C2, double *__restrict__ Y) {
  extern __shared__ __align__(128) double sm[];
  double *Ys = sm + 2 * kGemm2Buf, *C1s = Ys + kTile, *C2s = C1s + kCoef;
  zero_shared(sm, 2 * kGemm2Buf + kTile + 2 * kCoef);
  __syncthreads();
  load_coef(C1s, C1, p1, q);
  if (p2 > 0) load_coef(C2s, C2, p2, q);
  const int warp = (int)(threadIdx.x >> 5), rt = warp >> 1, ct0 = 2 * (warp & 1);
  const int64_t ntiles = (n + kRows - 1) / kRows;
  int64_t t = blockIdx.x;
  if (t < ntiles) {
    const int nr = tile_rows(n, t);
    copy_tile_async(sm, X1, t * kRows, nr, p1);
    if (p2 > 0) copy_tile_async(sm + kTile, X2, t * kRows, nr, p2);
  }
  __pipeline_commit();
  for (int b = 0; t < ntiles; t += gridDim.x, b ^= 1) {
    const int64_t tn = t + gridDim.x;
    if (tn < ntiles) {
      double *nb = sm + (b ^ 1) * kGemm2Buf;
      const int nr = tile_rows(n, tn);
      copy_tile_async(nb, X1, tn * kRows, nr, p1);
      if (p2 > 0) copy_tile_async(nb + kTile, X2, tn * kRows, nr, p2);
    }
    __pipeline_commit();
    __pipeline_wait_prior(1);
    __syncthreads();
    const double *As = sm + b * kGemm2Buf;
    double c[2][2] = {{0.0, 0.0}, {0.0, 0.0}};
    const double *bp1 = C1s + lane_t() * kLd + lane_g(), *bp2 = C2s + lane_t() * kLd + lane_g();
    const double *ap1 = As + (rt * 8 + lane_g()) * kLd + lane_t(), *ap2 = ap1 + kTile;
    if (ct0 * 8 < q) {
#pragma unroll
      for (int k0 = 0; k0 < kW; k0 += 4) {
        if (k0 < p1) {
          const double a = ap1[k0];
          dmma(c[0], a, bp1[k0 * kLd + ct0 * 8]);
          if ((ct0 + 1) * 8 < q) dmma(c[1], a, bp1[k0 * kLd + (ct0 + 1) * 8]);
        }
        if (k0 < p2) {
          const double a = ap2[k0];
          dmma(c[0], a, bp2[k0 * kLd + ct0 * 8]);
          if ((ct0 + 1) * 8 < q) dmma(c[1], a, bp2[k0 * kLd + (ct0 + 1) * 8]);
        }
      }
      double *y = Ys + (rt * 8 + lane_g()) * kLd + ct0 * 8 + 2 * lane_t();
      y[0] = c[0][0], y[1] = c[0][1];
      y[8] = c[1][0], y[9] = c[1][1];
    }
    __syncthreads();
    store_tile(Y, Ys, t * kRows, tile_rows(n, t), q);
    __syncthreads();
  }
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

/* The same for a symmetric Gram summed on its upper tiles only (mt <= nt): entries below the
 * diagonal tiles come from their mirror. */
void unpack_sym(const double *g, int64_t p, double *out) {
  for (int64_t a = 0; a < p; a++)
    for (int64_t b = 0; b < p; b++) out[a * p + b] = a / 8 <= b / 8 ? g[a * kW + b] : g[b * kW + a];
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

} // namespace

/* ---- operations ---------------------------------------------------------------------------- */
coal_status coal_cu_bcg_gram(coal_ctx ctx, int64_t n, int64_t s, int64_t m, const double *P,
                             const double *Q, const double *R, double *G, double *PP, double *PR) {
  if (s == 0) return COAL_SUCCESS;
  if (n == 0) {
    zero_host(G, s * s), zero_host(PP, s * s), zero_host(PR, s * m);
    return COAL_SUCCESS;
  }
  if (s > kW || m > kW) {
    const coal_blas_ops *b = &coal_blas_cuda;
    COAL_CALL(b->gram(ctx, n, s, s, P, s, Q, s, G, s));
    COAL_CALL(b->gram(ctx, n, s, s, P, s, P, s, PP, s));
    return b->gram(ctx, n, s, m, P, s, R, m, PR, m);
  }
  const unsigned grid = tile_grid(ctx, n, 3);
  double *part = NULL;
  COAL_CALL(coal_ws_part(ctx, (size_t)grid * 3 * kGram, &part));
  COAL_CUDA_CALL(ctx,
                 cudaFuncSetAttribute(bcg_gram_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      (int)kGramShared));
  bcg_gram_kernel<<<grid, kThreads, kGramShared, coal_stream(ctx)>>>(n, (int)s, (int)m, P, Q, R,
                                                                     part);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  double *h = NULL;
  COAL_CALL(sum_and_download(ctx, part, (int)grid, 3 * kGram, &h));
  unpack(h, s, s, G);
  unpack_sym(h + kGram, s, PP);
  unpack(h + 2 * kGram, s, m, PR);
  return COAL_SUCCESS;
}

coal_status coal_cu_bcg_update(coal_ctx ctx, int64_t n, int64_t s, int64_t m, const double *P,
                               const double *Q, const double *C, double *X, double *R,
                               const double *dinv, double *Z, double *nrm2, double *QZ, double *PZ,
                               double *ZZ) {
  if (m == 0) return COAL_SUCCESS;
  if (n == 0) {
    zero_host(nrm2, m), zero_host(QZ, s * m), zero_host(PZ, s * m);
    zero_host(ZZ, m * m);
    return COAL_SUCCESS;
  }
  const coal_blas_ops *b = &coal_blas_cuda;
  if (s > kW || m > kW) { /* one pass per step */
    if (s > 0) {
      COAL_CALL(b->gemm(ctx, n, s, m, 1.0, P, s, C, m, 1.0, X, m));
      COAL_CALL(b->gemm(ctx, n, s, m, -1.0, Q, s, C, m, 1.0, R, m));
    }
    COAL_CALL(b->dscale(ctx, n, m, dinv, R, m, Z, m, nrm2));
    if (s > 0) {
      COAL_CALL(b->gram(ctx, n, s, m, Q, s, Z, m, QZ, m));
      COAL_CALL(b->gram(ctx, n, s, m, P, s, Z, m, PZ, m));
    }
    return b->gram(ctx, n, m, m, Z, m, Z, m, ZZ, m);
  }
  void *cd = NULL;
  COAL_CALL(coal_ws_small(ctx, sizeof(double) * (size_t)(s * m + kUpdPart), &cd));
  const unsigned grid = tile_grid(ctx, n, 2);
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
        n, (int)s, (int)m, P, Q, Cd, X, R, dinv, Z, part);
  } else {
    COAL_CUDA_CALL(ctx, cudaFuncSetAttribute(bcg_update_kernel<false>,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             (int)kUpdShared));
    bcg_update_kernel<false><<<grid, kThreads, kUpdShared, coal_stream(ctx)>>>(
        n, (int)s, (int)m, P, Q, Cd, X, R, dinv, Z, part);
  }
  COAL_CUDA_LAUNCH_CHECK(ctx);
  double *h = NULL;
  COAL_CALL(sum_and_download(ctx, part, (int)grid, kUpdPart, &h));
  unpack(h, s, m, QZ);
  unpack(h + kGram, s, m, PZ);
  unpack_sym(h + 2 * kGram, m, ZZ);
  memcpy(nrm2, h + 3 * kGram, sizeof(double) * (size_t)m);
  return COAL_SUCCESS;
}

coal_status coal_cu_gemm2(coal_ctx ctx, int64_t n, int64_t p1, int64_t p2, int64_t q,
                          const double *X1, const double *C1, const double *X2, const double *C2,
                          double *Y) {
  if (n == 0 || q == 0) return COAL_SUCCESS;
  const coal_blas_ops *b = &coal_blas_cuda;
  if (p1 > kW || p2 > kW || q > kW || p1 == 0) {
    COAL_CALL(b->gemm(ctx, n, p1, q, 1.0, X1, p1, C1, q, 0.0, Y, q));
    if (p2 > 0) COAL_CALL(b->gemm(ctx, n, p2, q, 1.0, X2, p2, C2, q, 1.0, Y, q));
    return COAL_SUCCESS;
  }
  void *cd = NULL;
  COAL_CALL(coal_ws_small(ctx, sizeof(double) * (size_t)((p1 + p2) * q), &cd));
  COAL_CALL(upload(ctx, C1, (size_t)(p1 * q), cd, 0));
  COAL_CALL(upload(ctx, C2, (size_t)(p2 * q), cd, (size_t)(p1 * q)));
  const double *C1d = (const double *)cd, *C2d = C1d + p1 * q;
  COAL_CUDA_CALL(ctx,
                 cudaFuncSetAttribute(gemm2_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      (int)kGemm2Shared));
  gemm2_kernel<<<tile_grid(ctx, n, 3), kThreads, kGemm2Shared, coal_stream(ctx)>>>(
      n, (int)p1, (int)p2, (int)q, X1, C1d, X2, C2d, Y);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  return COAL_SUCCESS;
}
