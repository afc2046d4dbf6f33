/* Long rows of row-split SpMM (spmm_rowsplit.cu): Y(r, :) += alpha*A(r, :)*X for the rows r
 * with more than `thr` entries, launched after the row-split kernel, which has stored
 * Y(r, :) = beta*Y(r, :) for them (a long row is an empty row there).
 *
 * Why: a row-split group walks its row alone, about len/U dependent round trips to L2, so one
 * long row sets the time of a whole product (power-law graphs, circuit matrices with a ground
 * node). Here a long row is cut into segments of at most kLongSeg (1024) entries, one CTA per
 * segment and column tile. The G = 256/W groups of a CTA take one contiguous slice of ceil(seg/G)
 * entries each, walk it with the row-split inner loop (rs_row: 32 entries loaded coalesced and
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
 * threshold (coal_mat_long_row_segments) and kept with the matrix's device state.
 *
 * Small row-split launches run the segments of rows of one segment in CTAs of their own launch
 * instead (spmm_rowsplit.cu, launch_small); the device body is in spmm_long.cuh. */
#include "spmm_long.cuh"

using namespace coal_spmm_dev;

namespace {

template <typename T, int W, int V, bool XROW>
__global__ __launch_bounds__(COAL_CUDA_CTA) void rs_long_kernel(
    const int32_t *__restrict__ rows, const int32_t *__restrict__ segs,
    const int32_t *__restrict__ rowptr, const int32_t *__restrict__ col, const T *__restrict__ val,
    const T *__restrict__ x, int64_t ldx, T *__restrict__ y, int64_t ldy, bool yrow, int k,
    double alpha) {
  const int32_t row = __ldg(rows + blockIdx.x), seg = __ldg(segs + blockIdx.x);
  /* uniform: a row of several segments has other CTAs adding to it */
  const bool multi = __ldg(rowptr + row + 1) - __ldg(rowptr + row) > kLongSeg;
  rs_long_segment<T, W, V, XROW>(row, seg * kLongSeg, multi ? kLongAtomic : kLongAdd, rowptr, col,
                                 val, x, ldx, y, ldy, yrow, k, alpha, 1.0);
}

template <typename T, int W, int V, bool XROW>
void launch(coal_ctx ctx, const struct coal_mat_cuda *d, const struct coal_spmm_segs *sg,
            double alpha, coal_bvec X, coal_bvec Y, unsigned ny) {
  rs_long_kernel<T, W, V, XROW><<<dim3((unsigned)sg->n, ny), COAL_CUDA_CTA, 0, coal_stream(ctx)>>>(
      sg->rows, sg->rows + sg->n, d->rowptr, d->colind, (const T *)d->values, (const T *)X->data,
      X->ld, (T *)Y->data, Y->ld, Y->layout == COAL_ROW_MAJOR, (int)X->k, alpha);
}

template <typename T, int V, bool XROW>
void launch_w(coal_ctx ctx, const struct coal_mat_cuda *d, const struct coal_spmm_segs *sg,
              double alpha, coal_bvec X, coal_bvec Y, unsigned ny, int w) {
  switch (w) {
  case 4: return launch<T, 4, V, XROW>(ctx, d, sg, alpha, X, Y, ny);
  case 8: return launch<T, 8, V, XROW>(ctx, d, sg, alpha, X, Y, ny);
  case 16: return launch<T, 16, V, XROW>(ctx, d, sg, alpha, X, Y, ny);
  default: return launch<T, 32, V, XROW>(ctx, d, sg, alpha, X, Y, ny);
  }
}

} // namespace

/* The segments of the rows longer than thr on the device, once per threshold; the lists of
 * the last two thresholds are kept, the one returned moved to the front. */
static void long_rows_free(coal_ctx ctx, void *p) {
  (void)ctx;
  struct coal_long_rows_dev *l = (struct coal_long_rows_dev *)p;
  coal_cuda_free(l->segs[0].rows), coal_cuda_free(l->segs[1].rows);
  coal_free(l);
}

coal_status coal_spmm_long_rows_build(coal_mat A, struct coal_mat_cuda *d, int32_t thr,
                                      const struct coal_spmm_segs **segs) {
  (void)d;
  struct coal_long_rows_dev *l =
      (struct coal_long_rows_dev *)coal_mat_format_get(A, COAL_FMT_CUDA_LONG_ROWS);
  if (!l) { /* structure only: new values keep it, it goes with the device copy */
    COAL_CALL(coal_calloc(A->ctx, sizeof *l, (void **)&l));
    COAL_CALL(
        coal_mat_format_put(A, COAL_FMT_CUDA_LONG_ROWS, COAL_FORMAT_DEVICE, l, long_rows_free));
  }
  struct coal_spmm_segs *c = l->segs; /* thresholds are >= 2; thr 0 marks an empty slot */
  if (c[1].thr == thr) {
    const struct coal_spmm_segs t = c[0];
    c[0] = c[1], c[1] = t;
  }
  if (c[0].thr != thr) {
    coal_ctx ctx = A->ctx;
    coal_cuda_free(c[1].rows); /* the least recent list makes room */
    c[1] = c[0];
    c[0].rows = NULL, c[0].n = 0, c[0].thr = 0;
    int32_t *h = NULL, n = 0;
    COAL_CALL(coal_mat_long_row_segments(A, thr, kLongSeg, &h, &n));
    coal_status st = COAL_SUCCESS;
    if (n > 0) {
      const size_t bytes = sizeof(int32_t) * 2 * (size_t)n;
      st = coal_cuda_malloc(ctx, bytes, (void **)&c[0].rows);
      if (st == COAL_SUCCESS) st = coal_mem_upload_cuda(ctx, c[0].rows, h, bytes); /* synced */
      if (st != COAL_SUCCESS) coal_cuda_free(c[0].rows), c[0].rows = NULL;
    }
    coal_free(h);
    COAL_CALL(st);
    c[0].n = c[0].rows ? n : 0, c[0].thr = thr;
  }
  *segs = &c[0];
  return COAL_SUCCESS;
}

namespace {

template <typename T>
coal_status run(coal_mat A, const struct coal_mat_cuda *d, const struct coal_spmm_segs *sg, int v,
                double alpha, coal_bvec X, coal_bvec Y) {
  coal_ctx ctx = A->ctx;
  const int64_t k = X->k, target = (int64_t)ctx->cuda->sm_count * 8;
  int w = pow2_clamp((k + v - 1) / v, 4, 32);
  while (w > 4 && (int64_t)sg->n * ((k + w * v - 1) / (w * v)) < target) w /= 2;
  const int64_t nt = (k + w * v - 1) / (w * v);
  const unsigned ny = (unsigned)(nt < 65535 ? nt : 65535);
  const bool xrow = X->layout == COAL_ROW_MAJOR;
  if (!xrow)
    launch_w<T, 1, false>(ctx, d, sg, alpha, X, Y, ny, w);
  else if (v == 1)
    launch_w<T, 1, true>(ctx, d, sg, alpha, X, Y, ny, w);
  else if (v == 2)
    launch_w<T, 2, true>(ctx, d, sg, alpha, X, Y, ny, w);
  else
    launch_w<T, 16 / sizeof(T), true>(ctx, d, sg, alpha, X, Y, ny, w);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  return COAL_SUCCESS;
}

} // namespace

coal_status coal_spmm_long_rows_cuda(coal_mat A, struct coal_mat_cuda *d, int32_t thr, int v,
                                     double alpha, coal_bvec X, coal_bvec Y) {
  const struct coal_spmm_segs *sg = NULL;
  COAL_CALL(coal_spmm_long_rows_build(A, d, thr, &sg));
  if (sg->n == 0 || alpha == 0.0) return COAL_SUCCESS;
  return A->dtype == COAL_F64 ? run<double>(A, d, sg, v, alpha, X, Y)
                              : run<float>(A, d, sg, v, alpha, X, Y);
}
