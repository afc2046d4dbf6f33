/* Pieces shared by the AMG setup kernels on the GPU (amg_strength.cu, amg_aggregate.cu,
 * amg_tentative.cu): grid sizes, launch checks, an int32 inclusive scan on pool memory and the
 * small downloads of totals. */
#ifndef COAL_CUDA_AMG_UTIL_CUH
#define COAL_CUDA_AMG_UTIL_CUH

#define COAL_AMG_HD __host__ __device__
#include "../amg.h"
#include "cuda_internal.h"

#include <cub/device/device_scan.cuh>

namespace coal_amg_dev {

constexpr int kCta = 256;

static inline unsigned grid(int64_t n) {
  const int64_t g = (n + kCta - 1) / kCta;
  return (unsigned)(g < 1 ? 1 : g);
}

/* In-place inclusive sum of x[0..n-1] (int32; a total beyond 2^31-1 is the caller's check),
 * its CUB workspace from the pool and back. */
static inline coal_status scan_inplace(coal_ctx ctx, int32_t *x, int32_t n) {
  if (n <= 0) return COAL_SUCCESS;
  cudaStream_t s = coal_stream(ctx);
  size_t bytes = 0;
  COAL_CUDA_CALL(ctx, cub::DeviceScan::InclusiveSum(nullptr, bytes, x, x, n, s));
  void *tmp = NULL;
  COAL_CALL(coal_cuda_pool_alloc(ctx, bytes, &tmp));
  cudaError_t e = cub::DeviceScan::InclusiveSum(tmp, bytes, x, x, n, s);
  coal_cuda_pool_free(ctx, tmp);
  COAL_CUDA_CALL(ctx, e);
  return COAL_SUCCESS;
}

/* Copies bytes from device memory to the host and waits for them (the stream's earlier work
 * included). */
static inline coal_status fetch(coal_ctx ctx, void *dst, const void *src, size_t bytes) {
  cudaStream_t s = coal_stream(ctx);
  COAL_CUDA_CALL(ctx, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s));
  COAL_CUDA_CALL(ctx, cudaStreamSynchronize(s));
  return COAL_SUCCESS;
}

} // namespace coal_amg_dev

#define COAL_AMG_LAUNCHED(ctx) COAL_CUDA_LAUNCH_CHECK(ctx)

#endif
