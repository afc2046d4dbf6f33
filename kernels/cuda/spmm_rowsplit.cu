/* Row-split CSR SpMM ([YANG18], section 4.1): Y = alpha*A*X + beta*Y, one (sub-)warp per row,
 * no atomics, Y written once.
 *
 * Column lanes (k >= 5): a group of W lanes owns a row; lane l owns the V consecutive columns
 * j = l*V .. l*V+V-1 of each tile of TW = W*V columns, so that one row of X is read by the group
 * as one coalesced access of TW elements (V = 16 bytes / element when the row-major block
 * allows vector loads). The row's column indices and values are loaded 32 at a time, coalesced
 * over the group, and broadcast one by one with shuffles; U broadcast entries have their X loads
 * in flight together. Two tiles (2*TW columns) are accumulated per pass over A, so A's entries
 * are read once for k <= 2*TW (k <= 128 for row-major fp64); beyond that A is read again for
 * each further pair of tiles. W = smallest power of two >= k/V in [4, 32]: with W < 32 a warp
 * holds 32/W rows at once. Loop bounds are uniform over the warp (the longest of its rows) so
 * that every shuffle has all 32 lanes. Per column the products are summed in the row's
 * nonzero order, in double, as the host twin does.
 *
 * Small matrices (fewer CTAs than 8 per SM): the product is latency-bound, a row costing about
 * len/U dependent round trips to L2. There each lane keeps 16 elements of X in flight (U =
 * 16/V entries, not 8/V), and on row-major blocks with vector loads S sub-groups of W lanes
 * share a row (sub-group s takes entries s, s+S, ...; their sums are added with shuffles before
 * the store, so the summation order differs from the twin's), S = the largest power of two <= 8
 * with S*U <= the longest row, halved while that needs more waves of resident CTAs than half
 * as many (two waves allowed where a long tail of rows sets the time); when S*W > 32 and the
 * launch holds fewer CTAs than SMs, W shrinks to 32/S (>= 4) and the column tiles spread over
 * gridDim.y. One tile per pass; column passes over gridDim.y fill the GPU.
 *
 * Tiles of grid lines (large matrices in a structured-grid order, row-major X with vector
 * loads, k >= 32): rows r and r + s, s the grid-line stride of the ordering (the least column
 * offset >= 8 shared by most rows, coal_mat_line_stride_compute), read mostly the same rows of
 * X. A CTA then takes one segment of G = 256/W consecutive rows of a line and walks rpg lines
 * (4, or 8 from k = 64) down the grid, so that X rows fetched for one line are found in L1 by
 * the next; W = k/(2V) so that both tiles of a pass are in use and G is as large as it can be.
 * With a plane stride as well (the grid's plane, coal_mat_plane_stride_compute; k <= 64), a
 * CTA takes G/np rows of a line in each of np neighbouring planes (np = 2, or 4 for rows of
 * mean >= 8) and walks them together, so that the rows of X between the planes are read by
 * both sides while in L1.
 * Any stride is correct (the mapping covers every row once); the stride only decides speed.
 *
 * Long rows: a row-split group walks its row alone, so one long row would set the time
 * of the whole product. Rows longer than a threshold (long_threshold) are empty rows here (y =
 * beta*y is stored) and a second launch adds their products, a CTA per segment of such a row
 * (spmm_long.cu). A small launch whose long rows are one segment each (at most kLongSeg
 * entries) takes them in CTAs of its own instead, one per row after the row CTAs, which store
 * the whole y = alpha*A(r,:)*X + beta*y of the row (fused_threshold: more rows pay off there).
 *
 * Row numbers are formed in 32-bit unsigned arithmetic where that measured faster (R32; the
 * launcher keeps every value below 2^32) and in 64 bits elsewhere (launch_kernel).
 *
 * Entry lanes (k <= 4): a group of W lanes (W = smallest power of two >= the mean row length,
 * 2..32) shares a row's entries (lane l takes entries l, l+W, ...), each lane reads the k
 * entries of X's row for its entries, and the group reduces its k sums with shuffles
 * (CSR-vector applied to k columns at once). Sums in double; the order differs from the twin
 * by the reduction only (well inside the tests' tolerance).
 *
 * Traffic per product: A (nnz*(sizeof(T)+4) + 4*(nrows+1)) streamed once for k <= 2*TW, X rows
 * gathered (k*sizeof(T) per nonzero from L1/L2; rows reused by neighbouring rows of A stay in
 * cache), Y written once (read too when beta != 0).
 *
 * Row-major X is the fast path (coalesced rows of X). Column-major X is read with stride ldx
 * per lane (correct, slower); Y may have either layout.
 */
#include "spmm_long.cuh"

#include <type_traits>

using namespace coal_spmm_dev;

namespace {

#define RS_COLS_PARAMS                                                                             \
  int32_t nrows, const int32_t *__restrict__ rowptr, const int32_t *__restrict__ col,              \
      const T *__restrict__ val, const T *__restrict__ x, int64_t ldx, T *__restrict__ y,          \
      int64_t ldy, bool yrow, bool yvec, int k, int rpg, int tiles, int32_t line, int segs,        \
      int32_t plane, int np, unsigned nlc, int32_t lmax, const int32_t *__restrict__ lrows,        \
      int32_t nfused, double alpha, double beta
#define RS_COLS_ARGS                                                                               \
  nrows, rowptr, col, val, x, ldx, y, ldy, yrow, yvec, k, rpg, tiles, line, segs, plane, np, nlc,  \
      lmax, lrows, nfused, alpha, beta

/* The body of the column-lane kernel; two kernels below wrap it with different occupancy. */
template <typename T, int W, int V, int NT, bool XROW, int UB, int S, bool R32, int CH = kRsChunk>
__device__ __forceinline__ void rs_cols(RS_COLS_PARAMS) {
  constexpr int TW = W * V;             /* columns per tile */
  constexpr int GW = W * S;             /* lanes per row: S sub-groups of W lanes */
  constexpr int G = COAL_CUDA_CTA / GW; /* groups (rows in flight) per CTA */
  const int lane = (int)(threadIdx.x % W), sub = (int)(threadIdx.x % GW) / W;
  const int g = (int)(threadIdx.x / GW);
  /* the group's i-th row is first + i*step: G consecutive rows per step, or (line > 0) the
   * G consecutive rows of one segment of `line` rows, rpg lines in a row (a tile), or
   * (plane > 0 too) G/np such rows in each of np planes: rows q + i*line (q < plane) of
   * planes np*P .. np*P + np - 1, nlc tiles per plane */
  /* R32: row numbers in 32-bit unsigned arithmetic (the launcher keeps every value formed
   * below 2^32), else in 64 bits */
  typedef typename std::conditional<R32, uint32_t, int64_t>::type rowt;
  rowt first = (rowt)blockIdx.x * (rowt)(G * rpg) + (rowt)g, step = G, q = 0, qend = 1;
  bool lane_on = true;
  if (line > 0) {
    const int gs = plane > 0 ? G / np : G, gg = g % gs;
    const rowt off = (rowt)(blockIdx.x % (unsigned)segs) * (rowt)gs + (rowt)gg;
    const unsigned tile = blockIdx.x / (unsigned)segs;
    lane_on = off < (rowt)line, step = (rowt)line;
    if (plane > 0) {
      q = (rowt)(tile % nlc) * (rowt)rpg * (rowt)line + off, qend = (rowt)plane;
      first = (rowt)(tile / nlc) * (rowt)np * (rowt)plane + (rowt)(g / gs) * (rowt)plane + q;
    } else {
      first = (rowt)tile * (rowt)rpg * (rowt)line + off;
    }
  }
  for (int i = 0; i < rpg; i++) {
    const rowt row = first + (rowt)i * step;
    /* q: the row's offset in its plane (0 < 1 without planes) */
    const bool valid =
        lane_on && row < (rowt)nrows && q + (plane > 0 ? (rowt)i * (rowt)line : (rowt)0) < qend;
    /* uniform: a lane's later rows are larger (and lanes off the line stay off) */
    if (!__any_sync(COAL_FULL_MASK, valid)) break;
    int32_t p0 = 0, len = 0;
    bool store = valid;
    if (valid) {
      p0 = __ldg(rowptr + row);
      len = __ldg(rowptr + row + 1) - p0;
      /* a long row: beta*y here and the products in spmm_long.cu, or (nfused) nothing here
       * and all of it in the launch's own long-row CTAs */
      if (len > lmax) len = 0, store = nfused == 0;
    }
    const int maxlen = (int)__reduce_max_sync(COAL_FULL_MASK, (unsigned)len);
    /* passes of `tiles` (<= NT) tiles; blockIdx.y picks every gridDim.y-th pass (uniform) */
    for (int j0 = (int)blockIdx.y * tiles * TW; j0 < k; j0 += (int)gridDim.y * tiles * TW) {
      const int left = (k - j0 + TW - 1) / TW;
      const int nt = left < tiles ? left : tiles; /* uniform: tiles in this pass */
      double acc[NT][V];
#pragma unroll
      for (int t = 0; t < NT; t++)
#pragma unroll
        for (int v = 0; v < V; v++) acc[t][v] = 0;
      rs_row<T, W, V, NT, XROW, UB, S, CH>(col, val, x, ldx, p0, len, maxlen, lane, sub, j0, k, nt,
                                           acc);
      /* sum of the S sub-groups (all 32 lanes take part) */
#pragma unroll
      for (int off = W; off < GW; off *= 2)
#pragma unroll
        for (int t = 0; t < NT; t++)
#pragma unroll
          for (int v = 0; v < V; v++)
            acc[t][v] += __shfl_xor_sync(COAL_FULL_MASK, acc[t][v], off, GW);
      if (store && sub == 0) {
#pragma unroll
        for (int t = 0; t < NT; t++) {
          const int j = j0 + t * TW + lane * V;
          if (t < nt && j < k)
            store_y<T, V>(y, ldy, yrow, yvec, (int32_t)row, j, k, acc[t], alpha, beta);
        }
      }
    }
  }
}

/* Small launches (UB 16) may carry nfused long rows of one segment each: the last nfused CTAs
 * of the grid take one such row each (rows lrows[0 .. nfused-1]) and store its whole product,
 * rather than a second launch adding it after this one. */
template <typename T, int W, int V, int NT, bool XROW, int UB, int S, bool R32 = true>
__global__ __launch_bounds__(COAL_CUDA_CTA) void rs_cols_kernel(RS_COLS_PARAMS) {
  if constexpr (UB == 16) {
    const unsigned mgrid = gridDim.x - (unsigned)nfused; /* uniform over the CTA */
    if (blockIdx.x >= mgrid) {
      rs_long_segment<T, W, V, XROW>(__ldg(lrows + (blockIdx.x - mgrid)), 0, kLongStore, rowptr,
                                     col, val, x, ldx, y, ldy, yrow, k, alpha, beta);
      return;
    }
  }
  rs_cols<T, W, V, NT, XROW, UB, S, R32>(RS_COLS_ARGS);
}

/* The same with at least kOccCtas CTAs per SM, for the large launch on short rows (mean <
 * kOccMean), and loading a row's entries W*S at a time (one per lane; rs_row's CH) rather than
 * 32: 48 registers a thread and nothing spilled at W = 8 and 16 (with chunks of 32 the kernel
 * spilled, and lost at k = 8 and 128). 6 CTAs (40 registers, 28 bytes spilled) lost; the
 * 27-point (mean 26.5, four chunks of 8 a row) lost with it at every k. Without grid lines only
 * where no row is over kOccSpread times the mean (PGPgiantcompo, mean 4.6 and longest row
 * 205, was slower with it at k = 128). Figures: bench/RESULTS.md, rule rs-occ. */
constexpr int kOccCtas = 5;
constexpr double kOccMean = 8.0;
constexpr double kOccSpread = 4.0;
template <typename T, int W, int V, int NT, bool XROW, int UB, int S>
__global__ __launch_bounds__(COAL_CUDA_CTA, kOccCtas) void rs_cols_occ_kernel(RS_COLS_PARAMS) {
  rs_cols<T, W, V, NT, XROW, UB, S, true, W * S>(RS_COLS_ARGS);
}
#undef RS_COLS_PARAMS
#undef RS_COLS_ARGS

constexpr int kEntryMaxK = 4;  /* entry lanes are used for k <= kEntryMaxK */
constexpr int kLineMinK = 32;  /* tiles of grid lines from this k */
constexpr int kPlaneMaxK = 64; /* several planes at once up to this k (measured at 32, 64) */

template <typename T, bool XROW>
__device__ __forceinline__ void entry_fma(const T *__restrict__ x, int64_t ldx, int k, int32_t c,
                                          double a, double *acc) {
#pragma unroll
  for (int j = 0; j < kEntryMaxK; j++)
    if (j < k)
      acc[j] += a * (double)__ldg(x + (XROW ? (int64_t)c * ldx + j : (int64_t)c + j * ldx));
}

template <typename T, int W, bool XROW>
__global__ __launch_bounds__(COAL_CUDA_CTA) void rs_entries_kernel(
    int32_t nrows, const int32_t *__restrict__ rowptr, const int32_t *__restrict__ col,
    const T *__restrict__ val, const T *__restrict__ x, int64_t ldx, T *__restrict__ y, int64_t ldy,
    bool yrow, int k, int32_t lmax, double alpha, double beta) {
  const int64_t row = ((int64_t)blockIdx.x * COAL_CUDA_CTA + threadIdx.x) / W;
  const int lane = (int)(threadIdx.x & (W - 1));
  double acc[kEntryMaxK] = {0, 0, 0, 0};
  if (row < nrows) {
    const int32_t p0 = __ldg(rowptr + row);
    int32_t p1 = __ldg(rowptr + row + 1);
    if (p1 - p0 > lmax) p1 = p0; /* a long row: beta*y here, the products in spmm_long.cu */
    int32_t p = p0 + lane;
    for (; p + W < p1; p += 2 * W) { /* two entries per lane in flight */
      const int32_t c0 = coal_ld_stream(col + p), c1 = coal_ld_stream(col + p + W);
      const double a0 = (double)coal_ld_stream(val + p), a1 = (double)coal_ld_stream(val + p + W);
      entry_fma<T, XROW>(x, ldx, k, c0, a0, acc);
      entry_fma<T, XROW>(x, ldx, k, c1, a1, acc);
    }
    if (p < p1)
      entry_fma<T, XROW>(x, ldx, k, coal_ld_stream(col + p), coal_ld_stream(val + p), acc);
  }
  /* every lane reaches the shuffles (rows past the end hold zeros) */
#pragma unroll
  for (int j = 0; j < kEntryMaxK; j++)
#pragma unroll
    for (int off = W / 2; off > 0; off >>= 1)
      acc[j] += __shfl_xor_sync(COAL_FULL_MASK, acc[j], off, W);
  if (row < nrows && lane < k) {
    double s = acc[0];
#pragma unroll
    for (int j = 1; j < kEntryMaxK; j++)
      if (lane == j) s = acc[j];
    T *p = y + (yrow ? (int64_t)row * ldy + lane : (int64_t)row + (int64_t)lane * ldy);
    *p = (T)(beta == 0.0 ? alpha * s : alpha * s + beta * (double)*p);
  }
}

struct rs_args {
  int32_t nrows;
  const int32_t *rowptr, *col;
  const void *val, *x;
  void *y;
  int64_t ldx, ldy;
  bool yrow, yvec;
  int k, rpg, tiles;
  int32_t line;         /* grid-line stride for tiles of lines (0: consecutive rows) */
  int segs;             /* segments of G rows (G/np with planes) per line */
  int32_t plane;        /* grid-plane stride: tiles of lines in np planes at once (0: one plane) */
  int np;               /* planes a CTA takes at once (with plane) */
  unsigned nlc;         /* tiles of lines per plane (with planes) */
  unsigned ny;          /* CTAs over column passes */
  int32_t lmax;         /* rows longer than this get beta*y only (their products: spmm_long.cu) */
  int occ;              /* kOccCtas CTAs a SM: rowsplit() 1 over lines, 2 any; launch: 1 on */
  int sub;              /* sub-groups per row on small matrices (0: one) */
  bool subwave;         /* sub-groups chosen by the rule: fewer where they need more waves */
  bool longtail;        /* longest row (up to lmax) over kTailRatio times the mean */
  const int32_t *lrows; /* long rows a small launch may take in CTAs of its own (NULL: none) */
  int32_t nlong;        /* their number */
  bool fused;           /* set by launch_small: it took the long rows */
  bool row64;           /* the large launch (not at kOccCtas) with 64-bit row numbers */
  double alpha, beta;
};

/* CTAs of a small launch: the target number of CTAs (8 per SM) of the GPU, and column passes
 * of one tile over gridDim.y up to that target (at most one per tile). */
static inline int64_t rs_target(coal_ctx ctx) { return (int64_t)ctx->cuda->sm_count * 8; }
static inline unsigned rs_column_spread(int64_t target, unsigned grid, int64_t ntiles) {
  int64_t ny = (target + grid - 1) / grid;
  ny = ny < ntiles ? ny : ntiles;
  return (unsigned)(ny < 1 ? 1 : ny < 65535 ? ny : 65535);
}

/* OCC: rs_cols_occ_kernel when b.occ (the large launch only: it alone instantiates both).
 * Row numbers in 32 bits (R32) or 64: 32 bits were faster at W = 8 and in the 5-CTA kernel and
 * slower at the other widths, so 32 bits at W = 8 only (b.row64) and in the
 * 5-CTA kernel (bench/RESULTS.md, rule rs-r32). */
template <typename T, int W, int V, int NT, bool XROW, int UB, int S, bool OCC = false>
void launch_kernel(coal_ctx ctx, const rs_args &b, unsigned grid) {
  auto kern = rs_cols_kernel<T, W, V, NT, XROW, UB, S>;
  if constexpr (OCC) {
    if (b.occ)
      kern = rs_cols_occ_kernel<T, W, V, NT, XROW, UB, S>;
    else if (b.row64)
      kern = rs_cols_kernel<T, W, V, NT, XROW, UB, S, false>;
  }
  const int32_t nf = b.fused ? b.nlong : 0;
  kern<<<dim3(grid + (unsigned)nf, b.ny), COAL_CUDA_CTA, 0, coal_stream(ctx)>>>(
      b.nrows, b.rowptr, b.col, (const T *)b.val, (const T *)b.x, b.ldx, (T *)b.y, b.ldy, b.yrow,
      b.yvec, b.k, b.rpg, b.tiles, b.line, b.segs, b.plane, b.np, b.nlc, b.lmax, b.lrows, nf,
      b.alpha, b.beta);
}

/* CTAs of the small row-split kernel resident on the GPU at once (occupancy queried once per
 * context, whose device it depends on). */
template <typename T, int W, int V, bool XROW> static int64_t small_resident(coal_ctx ctx) {
  /* one slot per (T, W in 4..32, V in 1..4, XROW) */
  constexpr int wi = (W >= 8) + (W >= 16) + (W >= 32), vi = (V >= 2) + (V >= 4);
  constexpr int slot = (((sizeof(T) == 8 ? 4 : 0) + wi) * 3 + vi) * 2 + (XROW ? 1 : 0);
  static_assert(slot < COAL_CUDA_RS_RESIDENT_SLOTS, "one slot per instantiation");
  int &per_sm = ctx->cuda->spmm_rs_resident[slot];
  if (per_sm == 0 &&
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(
          &per_sm, rs_cols_kernel<T, W, V, 1, XROW, 16, 1>, COAL_CUDA_CTA, 0) != cudaSuccess) {
    (void)cudaGetLastError();
    per_sm = 4; /* 64 registers a thread (ptxas) */
  }
  return (int64_t)per_sm * ctx->cuda->sm_count;
}

/* Small matrices (fewer CTAs than the GPU holds at once): latency-bound, so a row's dependent
 * round trips are cut twice: 16 elements of X in flight per lane (not 8), and S sub-groups of
 * W lanes share the row's entries (S*W <= 32; vector loads of a row-major X only). */
template <typename T, int W, int V, bool XROW>
void launch_small(coal_ctx ctx, rs_args &a, rs_args b, int s) {
  constexpr bool SUB = XROW && V > 1;
  if (!SUB || s > 32 / W) s = SUB ? 32 / W : 1;
  /* sub-groups that would need more waves of CTAs than half as many: halved (one wave, or two
   * for a long tail of rows, whose longest rows set the time). Fitted to forced sub-group
   * counts over the shared set (bench/RESULTS.md, rule rs-waves); ca-GrQc and PGPgiantcompo
   * (long tails) keep two sub-groups in two waves. */
  if (b.subwave && coal_spmm_knob(ctx, COAL_SPMM_TUNE_RS_WAVES) != 1) {
    const int64_t cap = small_resident<T, W, V, XROW>(ctx) * (b.longtail ? 2 : 1);
    while (s > 1 &&
           (int64_t)coal_cuda_grid(b.nrows, (int64_t)(COAL_CUDA_CTA / (W * s)) * b.rpg) > cap)
      s /= 2;
  }
  const int64_t ntiles = (b.k + W * V - 1) / (W * V);
  const unsigned grid = coal_cuda_grid(b.nrows, (int64_t)(COAL_CUDA_CTA / (W * s)) * b.rpg);
  b.tiles = 1, b.ny = rs_column_spread(rs_target(ctx), grid, ntiles);
  b.line = 0, b.segs = 1, b.plane = 0, b.np = 1, b.nlc = 1;
  /* the long rows (each of one segment) in CTAs of this launch */
  b.fused = a.fused = b.lrows != NULL && b.nlong > 0;
  if constexpr (SUB && W <= 4)
    if (s == 8) return launch_kernel<T, W, V, 1, XROW, 16, 8>(ctx, b, grid);
  if constexpr (SUB && W <= 8)
    if (s == 4) return launch_kernel<T, W, V, 1, XROW, 16, 4>(ctx, b, grid);
  if constexpr (SUB && W <= 16)
    if (s == 2) return launch_kernel<T, W, V, 1, XROW, 16, 2>(ctx, b, grid);
  launch_kernel<T, W, V, 1, XROW, 16, 1>(ctx, b, grid);
}

template <typename T, int W, int V, int NT, bool XROW>
coal_status launch_cols(coal_ctx ctx, rs_args &a) {
  constexpr int G = COAL_CUDA_CTA / W;
  const int64_t target = rs_target(ctx), ntiles = (a.k + W * V - 1) / (W * V);
  rs_args b = a;
  /* rows per group: 4 when there are rows enough for 4x the target CTAs (faster on the
   * large Laplacians: bench/RESULTS.md, rule rs-rows) */
  const bool large = (int64_t)a.nrows >= 4 * target * G;
  /* tiles of grid lines (line stride >= G; on small matrices only when the knob asks): a CTA
   * walks rpg lines of one segment of G rows */
  bool lines = a.line >= G && (large || coal_spmm_knob(ctx, COAL_SPMM_TUNE_RS_LINE) > 1);
  if (b.rpg <= 0) b.rpg = lines ? (a.k >= 64 ? 8 : 4) : large ? 4 : 1;
  /* planes a CTA takes at once (at least 4 rows in each): 4 for rows of mean >= kOccMean, 2
   * for shorter ones, where 4 was slower (bench/RESULTS.md, rule rs-planes); the RS_NP knob
   * forces 2, 4 or 8 */
  const int pkn = coal_spmm_knob(ctx, COAL_SPMM_TUNE_RS_NP);
  int np = pkn == 2 || pkn == 4 || pkn == 8 ? pkn : a.occ == 0 ? 4 : 2;
  while (np > 2 && G / np < 4) np /= 2;
  /* rs_cols forms row numbers in 32 bits: over lines and planes they reach less than
   * nrows + 2*np*plane + (2*rpg + 1)*line + G*rpg; lines only where that stays below 2^32 */
  if (lines && (int64_t)a.nrows + 2 * np * (int64_t)a.plane + (2 * (int64_t)b.rpg + 2) * a.line +
                       2 * (int64_t)G * b.rpg >=
                   ((int64_t)1 << 32))
    lines = false;
  /* np planes at once: a plane at least two lines long */
  const bool planes = lines && a.plane >= 2 * (int64_t)a.line;
  const int gs = planes ? G / np : G;
  b.line = lines ? a.line : 0, b.segs = lines ? (a.line + gs - 1) / gs : 1;
  /* more CTAs per SM for short rows (rs_cols_occ_kernel): over lines, or any large launch when
   * the rows are even (a.occ 2); RS_OCC knob: 1 never, 2 any large launch */
  const int ok = coal_spmm_knob(ctx, COAL_SPMM_TUNE_RS_OCC);
  b.occ = ok == 2 || (ok != 1 && (a.occ == 2 || (a.occ == 1 && lines)));
  /* row numbers in 32 bits at W = 8 only: the compiler's code for the other widths was slower
   * with them (launch_kernel) */
  const int rk = coal_spmm_knob(ctx, COAL_SPMM_TUNE_RS_ROW64);
  b.row64 = rk == 1 || (rk == 0 && W != 8);
  b.plane = planes ? a.plane : 0, b.np = planes ? np : 1;
  b.nlc = planes ? coal_cuda_grid(((int64_t)a.plane + a.line - 1) / a.line, b.rpg) : 1;
  const unsigned grid =
      planes  ? (unsigned)b.segs * b.nlc * coal_cuda_grid(a.nrows, np * (int64_t)a.plane)
      : lines ? (unsigned)b.segs * coal_cuda_grid((a.nrows + a.line - 1) / a.line, b.rpg)
              : coal_cuda_grid(a.nrows, (int64_t)G * b.rpg);
  if (!lines && (int64_t)grid < target && coal_spmm_knob(ctx, COAL_SPMM_TUNE_RS_UB) != 8) {
    launch_small<T, W, V, XROW>(ctx, a, b, b.sub > 0 ? b.sub : 1);
  } else {
    /* few rows (UB knob 8 only): column passes of one tile spread over gridDim.y */
    b.tiles = NT, b.ny = 1, b.fused = false;
    if ((int64_t)grid < target && ntiles > 1)
      b.tiles = 1, b.ny = rs_column_spread(target, grid, ntiles);
    launch_kernel<T, W, V, NT, XROW, 8, 1, true>(ctx, b, grid);
  }
  COAL_CUDA_LAUNCH_CHECK(ctx);
  return COAL_SUCCESS;
}

/* W lanes per row, two tiles per pass (four were measured and lost: bench/RESULTS.md, rule
 * rs-tiles) */
template <typename T, int V, bool XROW> coal_status launch_cols_w(coal_ctx ctx, rs_args &a, int w) {
  switch (w) {
  case 4: return launch_cols<T, 4, V, 2, XROW>(ctx, a);
  case 8: return launch_cols<T, 8, V, 2, XROW>(ctx, a);
  case 16: return launch_cols<T, 16, V, 2, XROW>(ctx, a);
  default: return launch_cols<T, 32, V, 2, XROW>(ctx, a);
  }
}

template <typename T, int W, bool XROW> coal_status launch_entries(coal_ctx ctx, const rs_args &a) {
  const unsigned grid = coal_cuda_grid((int64_t)a.nrows * W, COAL_CUDA_CTA);
  rs_entries_kernel<T, W, XROW><<<grid, COAL_CUDA_CTA, 0, coal_stream(ctx)>>>(
      a.nrows, a.rowptr, a.col, (const T *)a.val, (const T *)a.x, a.ldx, (T *)a.y, a.ldy, a.yrow,
      a.k, a.lmax, a.alpha, a.beta);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  return COAL_SUCCESS;
}

template <typename T, bool XROW>
coal_status launch_entries_w(coal_ctx ctx, const rs_args &a, int w) {
  switch (w) {
  case 2: return launch_entries<T, 2, XROW>(ctx, a);
  case 4: return launch_entries<T, 4, XROW>(ctx, a);
  case 8: return launch_entries<T, 8, XROW>(ctx, a);
  case 16: return launch_entries<T, 16, XROW>(ctx, a);
  default: return launch_entries<T, 32, XROW>(ctx, a);
  }
}

/* Long rows (spmm_long.cu): the rows of more than thr entries, thr =
 * max(kLongMin, kLongMean * mean), when the longest row is more than twice thr (a second launch
 * pays off only when it cuts the row-split kernel's longest row well down); on matrices of
 * fewer rows than 8 per SM with a mean row of kLongDenseMean or more, every row of more than
 * kLongDenseThr entries (one warp per row would leave most of the GPU idle).
 * Measured faster with them on adder_dcop_05, PGPgiantcompo and mbeacxc; ca-GrQc (9 rows of
 * 65-81, mean 5.5) lost with them (the second launch costs more than the shorter row
 * saves), and bcsstk13-18 and ex6 (hundreds of rows of 33-95) lost with a CTA for every row
 * over 32 (bench/RESULTS.md, rule rs-long). Returns INT32_MAX for none. */
constexpr int32_t kLongMin = 64, kLongDenseThr = 32;
constexpr double kLongMean = 8.0, kLongDenseMean = 32.0;
/* The rule with t = max(tmin, tmean * mean) (long_threshold and fused_threshold). */
static int32_t threshold_rule(coal_mat A, double mean, int32_t mx, int64_t sms, int32_t tmin,
                              double tmean) {
  if ((int64_t)A->nrows <= 8 * sms && mean >= kLongDenseMean && mx > kLongDenseThr)
    return kLongDenseThr;
  const double t = tmean * mean > (double)tmin ? tmean * mean : (double)tmin;
  return (double)mx > 2.0 * t ? (int32_t)t : INT32_MAX;
}
static int32_t long_threshold(coal_mat A, double mean, int32_t mx, int64_t sms) {
  return threshold_rule(A, mean, mx, sms, kLongMin, kLongMean);
}

/* Long rows taken by a small launch's own CTAs (no second launch to pay for, so more rows pay
 * off than with long_threshold): on matrices of few rows with a long mean row, every row of
 * more than kLongDenseThr as there; else every row of more than t = max(kFuseMin,
 * kFuseMean * mean) entries when the longest is over twice t. Fitted to forced thresholds
 * 16..256 over the small shared cells (bench/RESULTS.md, rule rs-fuse). */
constexpr int32_t kFuseMin = 32;
constexpr double kFuseMean = 2.0;
static int32_t fused_threshold(coal_mat A, double mean, int32_t mx, int64_t sms) {
  return threshold_rule(A, mean, mx, sms, kFuseMin, kFuseMean);
}

/* A long tail of rows (the longest, up to the long-row threshold, over kTailRatio times the
 * mean): the longest rows set the time of a small launch, which may then take two waves of
 * CTAs for more sub-groups per row (launch_small). */
constexpr double kTailRatio = 8.0;

template <typename T>
coal_status rowsplit(coal_mat A, struct coal_mat_cuda *d, double alpha, coal_bvec X, double beta,
                     coal_bvec Y) {
  coal_ctx ctx = A->ctx;
  const size_t es = sizeof(T);
  const bool xrow = X->layout == COAL_ROW_MAJOR;
  /* rows of X 2^31 bytes or more apart: beyond the 32-bit offsets of load_x; merge-based
   * addresses X with 64-bit offsets */
  if (!xrow_stride_ok(X, es)) return coal_spmm_merge_cuda(A, alpha, X, beta, Y);
  rs_args a;
  a.nrows = A->nrows, a.rowptr = d->rowptr, a.col = d->colind, a.val = d->values;
  a.x = X->data, a.y = Y->data, a.ldx = X->ld, a.ldy = Y->ld;
  a.yrow = Y->layout == COAL_ROW_MAJOR, a.yvec = false;
  a.k = (int)X->k, a.alpha = alpha, a.beta = beta, a.tiles = 2, a.ny = 1;
  a.rpg = coal_spmm_knob(ctx, COAL_SPMM_TUNE_RS_ROWS); /* 0: chosen at launch */
  a.sub = coal_spmm_knob(ctx, COAL_SPMM_TUNE_RS_S);    /* 0: chosen below */
  a.line = 0, a.segs = 1, a.plane = 0, a.nlc = 1, a.lmax = INT32_MAX;
  const double mean = A->nrows ? (double)A->nnz / (double)A->nrows : 0.0;
  a.lrows = NULL, a.nlong = 0, a.fused = false;
  /* rows longer than the threshold: beta*y in the row-split kernel, then a CTA per segment
   * (spmm_long.cu); on small launches whose long rows are one segment each, those CTAs are in
   * the row-split launch itself */
  int32_t mx = 0;
  COAL_CALL(coal_mat_max_row_len_compute(A, &mx)); /* once per matrix (cached) */
  /* short rows (mean < kOccMean): the large launch at kOccCtas CTAs per SM (launch_cols), over
   * grid lines or, when no row is over kOccSpread times the mean, any large launch */
  a.occ = mean >= kOccMean ? 0 : (double)mx <= kOccSpread * mean ? 2 : 1;
  const int lg = coal_spmm_knob(ctx, COAL_SPMM_TUNE_RS_LONG);
  if (a.k <= kEntryMaxK) {
    const int32_t thr = lg >= 2   ? lg
                        : lg == 1 ? INT32_MAX
                                  : long_threshold(A, mean, mx, ctx->cuda->sm_count);
    if (mx > thr) a.lmax = thr;
    /* lanes 0..k-1 of a group store the k sums: W >= k */
    const int w = pow2_clamp((int64_t)ceil(mean), a.k > 2 ? 4 : 2, 32);
    coal_status st =
        xrow ? launch_entries_w<T, true>(ctx, a, w) : launch_entries_w<T, false>(ctx, a, w);
    if (st != COAL_SUCCESS || a.lmax == INT32_MAX) return st;
    return coal_spmm_long_rows_cuda(A, d, a.lmax, 1, alpha, X, Y);
  }
  int v = xrow ? vec_width(X, es) : 1;
  while (v > 1 && a.k / v < 4) v /= 2; /* at least 4 lanes of work per row */
  int w = pow2_clamp((a.k + v - 1) / v, 4, 32);
  const int wk = coal_spmm_knob(ctx, COAL_SPMM_TUNE_RS_W);
  if (wk) w = pow2_clamp(wk, 4, 32);
  a.yvec = v > 1 && vec_width(Y, es) >= v;
  const int64_t target = rs_target(ctx);
  /* the launch will be small (launch_cols): fewer CTAs than the target */
  const bool small = coal_spmm_knob(ctx, COAL_SPMM_TUNE_RS_UB) != 8 &&
                     (int64_t)a.nrows < target * (COAL_CUDA_CTA / w);
  const bool fuse = small && mx <= kLongSeg && coal_spmm_knob(ctx, COAL_SPMM_TUNE_RS_FUSE) != 1;
  const int32_t thr = lg >= 2   ? lg
                      : lg == 1 ? INT32_MAX
                      : fuse    ? fused_threshold(A, mean, mx, ctx->cuda->sm_count)
                                : long_threshold(A, mean, mx, ctx->cuda->sm_count);
  if (mx > thr) {
    a.lmax = thr, mx = thr;
    if (fuse) {
      const struct coal_spmm_segs *sg = NULL;
      COAL_CALL(coal_spmm_long_rows_build(A, d, thr, &sg));
      a.lrows = sg->rows, a.nlong = sg->n;
    }
  }
  a.longtail = (double)mx > kTailRatio * mean;
  /* small matrices (the launch holds fewer CTAs than the GPU, see launch_cols) with vector
   * loads: S sub-groups per row, the largest power of two <= 8 with S*U <= the longest row
   * (U = 16/V entries in flight per sub-group); when S*W > 32 and the launch would hold fewer
   * CTAs than the GPU has SMs, narrower groups (W = 32/S >= 4, more column tiles over
   * gridDim.y) so that long rows still get S sub-groups (on larger launches the extra passes
   * over A cost more than they save). Figures: bench/RESULTS.md, rule rs-narrow. */
  a.subwave = false;
  if (xrow && v > 1 && a.sub == 0 && small) {
    a.subwave = true;
    int s = 1;
    while (s < 8 && 2 * s * (16 / v) <= mx) s *= 2;
    a.sub = s;
    /* fewer CTAs than SMs with the sub-groups that fit in W (under-filled GPU) */
    const int fit = s < 32 / w ? s : 32 / w;
    const bool narrow =
        (int64_t)a.nrows < (int64_t)ctx->cuda->sm_count * (COAL_CUDA_CTA / (w * fit));
    if (narrow && !wk && w * s > 32) w = 32 / s < 4 ? 4 : 32 / s;
  }
  /* Grid lines (large matrices in a structured-grid order, row-major X with vector loads,
   * k >= kLineMinK): groups of W = k/(2V) lanes, both tiles of a pass in use, so that a CTA
   * step holds G = 256/W consecutive rows of a line, and a CTA walks 4 lines (8 from k = 64)
   * of one segment: rows one line apart reuse each other's rows of X in L1. Not below k = 32,
   * where lines were slower. The knob forces a stride (any k).
   * With a plane stride too (k <= kPlaneMaxK), a CTA takes G/np rows of a line in each of np
   * neighbouring planes, which share the rows of X between them (np in launch_cols). Not
   * measured at k = 128, where a CTA step holds only 8 rows (4 per plane): one plane there.
   * The plane knob forces one (with a forced line). Tried and slower: the next row's entries
   * loaded during a row's products, into registers or into shared memory.
   * Figures: bench/RESULTS.md, rule rs-lines. */
  const int lk = coal_spmm_knob(ctx, COAL_SPMM_TUNE_RS_LINE);
  const int pk = coal_spmm_knob(ctx, COAL_SPMM_TUNE_RS_PLANE);
  if (lk > 1) {
    a.line = lk, a.plane = pk > 1 ? pk : 0;
  } else if (lk == 0 && xrow && v > 1 && a.k >= kLineMinK) {
    const int wl = pow2_clamp((a.k + 2 * v - 1) / (2 * v), 4, 32);
    if ((int64_t)a.nrows >= 4 * target * (COAL_CUDA_CTA / wl)) {
      COAL_CALL(coal_mat_line_stride_compute(A, &a.line));
      COAL_CALL(coal_mat_plane_stride_compute(A, &a.plane));
      if (pk == 1 || a.k > kPlaneMaxK) a.plane = 0;
      if (a.line < COAL_CUDA_CTA / wl)
        a.line = 0; /* lines shorter than a step: rows in order */
      else if (!wk)
        w = wl;
    }
  }
  coal_status st = !xrow    ? launch_cols_w<T, 1, false>(ctx, a, w)
                   : v == 1 ? launch_cols_w<T, 1, true>(ctx, a, w)
                   : v == 2 ? launch_cols_w<T, 2, true>(ctx, a, w)
                            : launch_cols_w<T, 16 / sizeof(T), true>(ctx, a, w);
  if (st != COAL_SUCCESS || a.lmax == INT32_MAX || a.fused) return st;
  return coal_spmm_long_rows_cuda(A, d, a.lmax, v, alpha, X, Y);
}

} // namespace

coal_status coal_spmm_rowsplit_cuda(coal_mat A, double alpha, coal_bvec X, double beta,
                                    coal_bvec Y) {
  if (!A) return COAL_ERR_ARG;
  if (A->nrows == 0 || X->k == 0) return COAL_SUCCESS;
  struct coal_mat_cuda *d = NULL;
  COAL_CALL(coal_cuda_mat(A, &d));
  return A->dtype == COAL_F64 ? rowsplit<double>(A, d, alpha, X, beta, Y)
                              : rowsplit<float>(A, d, alpha, X, beta, Y);
}

coal_status coal_spmm_cuda_tune(coal_ctx ctx, int what, int value) {
  if (!ctx) return COAL_ERR_ARG;
  COAL_CHECK(ctx, ctx->cuda != NULL, COAL_ERR_ARG, "SpMM tuning knobs need a CUDA context");
  COAL_CHECK(ctx, what >= 0 && what < COAL_SPMM_TUNE_NKNOBS && value >= 0, COAL_ERR_ARG,
             "SpMM tuning knob %d = %d: no such knob or a negative value", what, value);
  ctx->cuda->spmm_tune[what] = value;
  return COAL_SUCCESS;
}
