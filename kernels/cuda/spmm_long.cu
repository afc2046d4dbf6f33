/* Long rows of row-split SpMM (spmm_rowsplit.cu): Y(r, :) += alpha*A(r, :)*X for the rows r
 * with more than `thr` entries, launched after the row-split kernel, which has stored
 * Y(r, :) = beta*Y(r, :) for them (a long row is an empty row there).
 *
 * Why: a row-split group walks its row alone, about len/U dependent round trips to L2, so one
 * long row sets the time of a whole product (power-law graphs, circuit matrices with a ground
 * node). Here a long row is cut into segments of at most kSeg entries, one CTA per segment and
 * column tile. The G = 256/W groups of a CTA take one contiguous slice of ceil(seg/G) entries
 * each, walk it with the row-split inner loop (rs_row: 32 entries loaded coalesced and
 * broadcast, U = 16/V loads of X in flight per lane), and their sums meet in the CTA: shuffles
 * across the groups of a warp, then shared memory across the 8 warps; TW = W*V threads add the
 * tile to Y. A segment then costs about seg/(G*U) round trips plus one per 32 entries of a
 * slice. A row of one segment is added with a plain read-modify-write (the summation order is
 * fixed, so repeated products agree bit for bit); the segments of a longer row are added with
 * atomics (their order, and so the last bits, may change from run to run). Either way the order
 * differs from the host twin's by rounding only.
 *
 * W = the row-split width (k/V lanes, 4..32), narrowed while the launch (segments x column
 * tiles) holds fewer CTAs than 8 per SM, so that a few long rows spread over more CTAs.
 *
 * The segment list is built on the host from the row offsets at the first product with a given
 * threshold (coal_mat_long_rows) and kept with the matrix's device state. */
#include "spmm_util.cuh"

using namespace coal_spmm_dev;

namespace {

constexpr int32_t kSeg = 1024; /* entries of a long row per CTA */

template <typename T, int W, int V, bool XROW>
__global__ __launch_bounds__(COAL_CUDA_CTA) void rs_long_kernel(
    const int32_t *__restrict__ rows, const int32_t *__restrict__ segs,
    const int32_t *__restrict__ rowptr, const int32_t *__restrict__ col, const T *__restrict__ val,
    const T *__restrict__ x, int64_t ldx, T *__restrict__ y, int64_t ldy, bool yrow, int k,
    double alpha) {
  constexpr int TW = W * V, G = COAL_CUDA_CTA / W, NWARP = COAL_CUDA_CTA / 32;
  __shared__ double s_part[NWARP][TW];
  const int tid = (int)threadIdx.x, lane = tid % W, g = tid / W, warp = tid / 32;
  const int32_t row = __ldg(rows + blockIdx.x), b0 = __ldg(segs + blockIdx.x) * kSeg;
  const int32_t p0 = __ldg(rowptr + row), len = __ldg(rowptr + row + 1) - p0;
  const bool multi = len > kSeg; /* uniform: other CTAs add to the same row */
  const int n = len - b0 < kSeg ? len - b0 : kSeg;
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
      if (multi)
        atomicAdd(p, (T)(alpha * s));
      else
        *p = (T)((double)*p + alpha * s);
    }
    __syncthreads(); /* s_part is rewritten by the next tile */
  }
}

template <typename T, int W, int V, bool XROW>
void launch(coal_ctx ctx, const struct coal_mat_cuda *d, double alpha, coal_bvec X, coal_bvec Y,
            unsigned ny) {
  rs_long_kernel<T, W, V, XROW>
      <<<dim3((unsigned)d->nlong, ny), COAL_CUDA_CTA, 0, coal_stream(ctx)>>>(
          d->long_rows, d->long_rows + d->nlong, d->rowptr, d->colind, (const T *)d->values,
          (const T *)X->data, X->ld, (T *)Y->data, Y->ld, Y->layout == COAL_ROW_MAJOR, (int)X->k,
          alpha);
}

template <typename T, int V, bool XROW>
void launch_w(coal_ctx ctx, const struct coal_mat_cuda *d, double alpha, coal_bvec X, coal_bvec Y,
              unsigned ny, int w) {
  switch (w) {
  case 4: return launch<T, 4, V, XROW>(ctx, d, alpha, X, Y, ny);
  case 8: return launch<T, 8, V, XROW>(ctx, d, alpha, X, Y, ny);
  case 16: return launch<T, 16, V, XROW>(ctx, d, alpha, X, Y, ny);
  default: return launch<T, 32, V, XROW>(ctx, d, alpha, X, Y, ny);
  }
}

/* The segments of the rows longer than thr on the device, once per threshold: nlong CTAs,
 * long_rows[c] the row of CTA c and long_rows[nlong + c] its segment. */
coal_status build_segments(coal_mat A, struct coal_mat_cuda *d, int32_t thr) {
  if (d->long_thr == thr) return COAL_SUCCESS;
  coal_ctx ctx = A->ctx;
  coal_cuda_free(d->long_rows);
  d->long_rows = NULL, d->nlong = 0, d->long_thr = 0;
  int32_t *h = NULL, n = 0;
  COAL_CALL(coal_mat_long_row_segments(A, thr, kSeg, &h, &n));
  coal_status st = COAL_SUCCESS;
  if (n > 0) {
    const size_t bytes = sizeof(int32_t) * 2 * (size_t)n;
    st = coal_cuda_malloc(ctx, bytes, (void **)&d->long_rows);
    if (st == COAL_SUCCESS) st = coal_ops(ctx)->upload(ctx, d->long_rows, h, bytes); /* synced */
    if (st != COAL_SUCCESS) coal_cuda_free(d->long_rows), d->long_rows = NULL;
  }
  coal_free(h);
  if (st == COAL_SUCCESS) d->nlong = d->long_rows ? n : 0, d->long_thr = thr;
  return st;
}

template <typename T>
coal_status run(coal_mat A, struct coal_mat_cuda *d, int v, double alpha, coal_bvec X,
                coal_bvec Y) {
  coal_ctx ctx = A->ctx;
  const int64_t k = X->k, target = (int64_t)ctx->cuda->sm_count * 8;
  int w = pow2_clamp((k + v - 1) / v, 4, 32);
  while (w > 4 && (int64_t)d->nlong * ((k + w * v - 1) / (w * v)) < target) w /= 2;
  const int64_t nt = (k + w * v - 1) / (w * v);
  const unsigned ny = (unsigned)(nt < 65535 ? nt : 65535);
  const bool xrow = X->layout == COAL_ROW_MAJOR;
  if (!xrow)
    launch_w<T, 1, false>(ctx, d, alpha, X, Y, ny, w);
  else if (v == 1)
    launch_w<T, 1, true>(ctx, d, alpha, X, Y, ny, w);
  else if (v == 2)
    launch_w<T, 2, true>(ctx, d, alpha, X, Y, ny, w);
  else
    launch_w<T, 16 / sizeof(T), true>(ctx, d, alpha, X, Y, ny, w);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  return COAL_SUCCESS;
}

} // namespace

coal_status coal_spmm_long_rows_cuda(coal_mat A, struct coal_mat_cuda *d, int32_t thr, int v,
                                     double alpha, coal_bvec X, coal_bvec Y) {
  COAL_CALL(build_segments(A, d, thr));
  if (d->nlong == 0 || alpha == 0.0) return COAL_SUCCESS;
  return A->dtype == COAL_F64 ? run<double>(A, d, v, alpha, X, Y)
                              : run<float>(A, d, v, alpha, X, Y);
}
