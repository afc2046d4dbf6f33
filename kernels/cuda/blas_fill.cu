/* CUDA version of blas.fill (src/backend.h): a thread per entry, grid-stride, entries taken in
 * storage order (row-major blocks by rows, column-major ones by columns) so that the stores are
 * coalesced; each entry draws coal_random_at(seed, j*n + i) itself, as the host twin
 * (kernels/host/blas_fill.c) does, so both write the same bits. Traffic: X written once. */
#include "../../src/random.h"
#include "../blas.h"
#include "cuda_internal.h"

namespace {

template <typename T>
__global__ void fill_kernel(int64_t n, int64_t k, bool rowmajor, int64_t ld, T *__restrict__ x,
                            bool random, uint64_t seed, double v) {
  const int64_t total = n * k;
  for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total;
       e += (int64_t)gridDim.x * blockDim.x) {
    const int64_t i = rowmajor ? e / k : e % n, j = rowmajor ? e % k : e / n;
    const double r = random ? coal_random_at(seed, (uint64_t)(j * n + i)) : v;
    x[rowmajor ? i * ld + j : i + j * ld] = (T)r;
  }
}

} // namespace

coal_status coal_blas_fill_cuda(coal_ctx ctx, int64_t n, int64_t k, coal_dtype dtype,
                                coal_layout layout, int64_t ld, void *X, int random, uint64_t seed,
                                double v) {
  if (n <= 0 || k <= 0) return COAL_SUCCESS;
  const int64_t ctas = (n * k + COAL_CUDA_CTA - 1) / COAL_CUDA_CTA;
  const unsigned grid = ctas < 65535 ? (unsigned)ctas : 65535u; /* grid-stride beyond */
  const bool rm = layout == COAL_ROW_MAJOR;
  if (dtype == COAL_F64)
    fill_kernel<double><<<grid, COAL_CUDA_CTA, 0, coal_stream(ctx)>>>(n, k, rm, ld, (double *)X,
                                                                      random != 0, seed, v);
  else
    fill_kernel<float><<<grid, COAL_CUDA_CTA, 0, coal_stream(ctx)>>>(n, k, rm, ld, (float *)X,
                                                                     random != 0, seed, v);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  return COAL_SUCCESS;
}
