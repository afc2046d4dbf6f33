/* CSR SpMV, a sub-warp of W lanes per row (CSR-vector).
 *
 * y[i] = alpha * sum_{p in row i} val[p] * x[col[p]] + beta * y[i]
 *
 * Lanes of a sub-warp read consecutive entries of their row (coalesced val/col), gather x
 * (up to U entries a lane in flight, U from the longest row: launch_w), and reduce with shuffles
 * inside the sub-warp; lane 0 writes. W is the smallest power of two >= the mean row length
 * (2..32), so short rows do not leave most of a warp idle.
 *
 * Memory traffic per product: nnz*(sizeof(T)+4) matrix bytes streamed once (evict-first),
 * 4*(nrows+1) row offsets, x gathered (>= 8*ncols, L2-resident when it fits), y written
 * (and read when beta != 0): 8*nrows or 16*nrows.
 */
#include "cuda_internal.h"

namespace {

template <typename T, int W, int U>
__global__ __launch_bounds__(COAL_CUDA_CTA) void csr_vector_kernel(
    int32_t nrows, const int32_t *__restrict__ rowptr, const int32_t *__restrict__ col,
    const T *__restrict__ val, const T *__restrict__ x, T *__restrict__ y, double alpha,
    double beta) {
  const int64_t gt = (int64_t)blockIdx.x * COAL_CUDA_CTA + threadIdx.x;
  const int64_t row = gt / W;
  const int lane = (int)(threadIdx.x & (W - 1));
  double sum = 0; /* double for both dtypes, as the host twin */
  if (row < nrows) {
    const int32_t p0 = coal_ld_ro(rowptr + row), p1 = coal_ld_ro(rowptr + row + 1);
    /* U entries per lane in flight in every step, the last step predicated: a row of up to
     * U*W entries takes one round of gathers */
    for (int32_t p = p0 + lane; p < p1; p += U * W) {
      int32_t c[U];
      T v[U];
#pragma unroll
      for (int j = 0; j < U; j++) {
        const bool on = p + j * W < p1;
        c[j] = on ? coal_ld_stream(col + p + j * W) : 0;
        v[j] = on ? coal_ld_stream(val + p + j * W) : T(0);
      }
      /* all U gathers issued before the products (inside the sum the compiler issued them one
       * after the other: bloweybq took 337 us against 90) */
      double xs[U];
#pragma unroll
      for (int j = 0; j < U; j++) xs[j] = p + j * W < p1 ? (double)coal_ld_ro(x + c[j]) : 0.0;
      double s = 0;
#pragma unroll
      for (int j = 0; j < U; j++) s += (double)v[j] * xs[j];
      sum += s;
    }
  }
  /* every lane of the warp reaches the shuffles (rows past the end contribute 0) */
#pragma unroll
  for (int off = W / 2; off > 0; off >>= 1) sum += __shfl_down_sync(COAL_FULL_MASK, sum, off, W);
  if (row < nrows && lane == 0)
    y[row] = (T)(beta == 0.0 ? alpha * sum : alpha * sum + beta * (double)y[row]);
}

/* Entries a lane has in flight: 1 when no row is longer than W (one step a row), 2 up to 2W,
 * else 4 (bench/RESULTS.md, rule csrv-inflight, and its SpMV section). mx: the longest row. */
template <typename T, int W>
coal_status launch_w(coal_mat A, const struct coal_mat_cuda *d, int32_t mx, double alpha,
                     const T *x, double beta, T *y) {
  coal_ctx ctx = A->ctx;
  unsigned grid = coal_cuda_grid((int64_t)A->nrows * W, COAL_CUDA_CTA);
  auto kern = mx <= W       ? csr_vector_kernel<T, W, 1>
              : mx <= 2 * W ? csr_vector_kernel<T, W, 2>
                            : csr_vector_kernel<T, W, 4>;
  kern<<<grid, COAL_CUDA_CTA, 0, coal_stream(ctx)>>>(A->nrows, d->rowptr, d->colind,
                                                     (const T *)d->values, x, y, alpha, beta);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  return COAL_SUCCESS;
}

template <typename T>
coal_status launch(coal_mat A, const struct coal_mat_cuda *d, double alpha, const void *x,
                   double beta, void *y) {
  int32_t mx = 0;
  COAL_CALL(coal_mat_max_row_len_compute(A, &mx)); /* once per matrix (cached) */
  /* smallest power of two >= mean row length, in 2..32 */
  double mean = (double)A->nnz / (double)A->nrows;
  int w = 2;
  while (w < 32 && w < mean) w *= 2;
  const T *xv = (const T *)x;
  T *yv = (T *)y;
  switch (w) {
  case 2: return launch_w<T, 2>(A, d, mx, alpha, xv, beta, yv);
  case 4: return launch_w<T, 4>(A, d, mx, alpha, xv, beta, yv);
  case 8: return launch_w<T, 8>(A, d, mx, alpha, xv, beta, yv);
  case 16: return launch_w<T, 16>(A, d, mx, alpha, xv, beta, yv);
  default: return launch_w<T, 32>(A, d, mx, alpha, xv, beta, yv);
  }
}

} // namespace

coal_status coal_spmv_csr_vector_cuda(coal_mat A, double alpha, const void *x, double beta,
                                      void *y) {
  if (!A) return COAL_ERR_ARG;
  if (A->nrows == 0) return COAL_SUCCESS;
  struct coal_mat_cuda *d = NULL;
  COAL_CALL(coal_cuda_mat(A, &d));
  /* nnz == 0 still runs: every row gets alpha*0 + beta*y (beta == 0: 0) */
  return A->dtype == COAL_F64 ? launch<double>(A, d, alpha, x, beta, y)
                              : launch<float>(A, d, alpha, x, beta, y);
}
