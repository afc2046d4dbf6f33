/* AMG setup on the GPU: the tentative prolongator and the prolongator smoothing; CUDA twins of
 * kernels/host/amg_tentative.c (kernels/amg.h defines the results).
 *
 * Tentative: the aggregates as lists (aggptr, members) are T^T's structure: aggptr by a
 * histogram and a scan, members by a stable radix sort of (agg[i], i) (CUB's is stable, so each
 * list is ascending, as the host's counting sort makes it); then a thread per aggregate sums
 * b_j^2 over its list in that order, and a thread per row writes T's entry. Traffic: agg read
 * three times (histogram, sort, T), b gathered twice, the lists and T written.
 * Smooth: a thread per row of A_F T, in place. */
#include "amg_util.cuh"

#include <cub/device/device_radix_sort.cuh>

using namespace coal_amg_dev;

namespace {

__global__ void hist_iota_kernel(int32_t n, const int32_t *__restrict__ agg, int32_t *aggptr,
                                 int32_t *__restrict__ iota) {
  const int32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  atomicAdd(aggptr + agg[i] + 1, 1);
  iota[i] = i;
}

__global__ void bc_kernel(int32_t nagg, const int32_t *__restrict__ aggptr,
                          const int32_t *__restrict__ members, const double *__restrict__ b,
                          double *__restrict__ bc) {
  const int32_t a = blockIdx.x * blockDim.x + threadIdx.x;
  if (a >= nagg) return;
  double s = 0.0;
  for (int32_t q = aggptr[a]; q < aggptr[a + 1]; q++) {
    const double x = b[members[q]];
    s = __dadd_rn(s, __dmul_rn(x, x));
  }
  bc[a] = __dsqrt_rn(s);
}

__global__ void t_kernel(int32_t n, const int32_t *__restrict__ agg, const double *__restrict__ b,
                         const double *__restrict__ bc, int32_t *__restrict__ trp,
                         int32_t *__restrict__ tci, double *__restrict__ tval) {
  const int32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > n) return;
  trp[i] = i;
  if (i == n) return;
  const int32_t a = agg[i];
  tci[i] = a;
  tval[i] = __ddiv_rn(b[i], bc[a]);
}

__global__ void smooth_kernel(int32_t n, const int32_t *__restrict__ rp,
                              const int32_t *__restrict__ ci, double *__restrict__ v,
                              const double *__restrict__ dinv, const int32_t *__restrict__ agg,
                              const double *__restrict__ tval, double omega) {
  const int32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const double w = __dmul_rn(omega, dinv[i]);
  const int32_t a = agg[i];
  const double ti = tval[i];
  for (int32_t p = rp[i]; p < rp[i + 1]; p++) {
    const double t = ci[p] == a ? ti : 0.0;
    v[p] = __dsub_rn(t, __dmul_rn(w, v[p]));
  }
}

} // namespace

extern "C" {

coal_status coal_amg_tentative_cuda(coal_ctx ctx, int32_t n, int32_t nagg, const int32_t *agg,
                                    const double *b, int32_t *aggptr, int32_t *members,
                                    int32_t *trowptr, int32_t *tcolind, double *tval, double *bc) {
  cudaStream_t s = coal_stream(ctx);
  COAL_CUDA_CALL(ctx, cudaMemsetAsync(aggptr, 0, sizeof(int32_t) * ((size_t)nagg + 1), s));
  if (n <= 0) {
    t_kernel<<<1, kCta, 0, s>>>(0, agg, b, bc, trowptr, tcolind, tval);
    COAL_AMG_LAUNCHED(ctx);
    return COAL_SUCCESS;
  }
  int32_t *iota = NULL, *keys = NULL;
  void *tmp = NULL;
  coal_status st = COAL_SUCCESS;
  COAL_CALL_GOTO(st, coal_cuda_pool_alloc(ctx, sizeof(int32_t) * (size_t)n, (void **)&iota), done);
  COAL_CALL_GOTO(st, coal_cuda_pool_alloc(ctx, sizeof(int32_t) * (size_t)n, (void **)&keys), done);
  {
    hist_iota_kernel<<<grid(n), kCta, 0, s>>>(n, agg, aggptr, iota);
    cudaError_t e = cudaGetLastError();
    int bits = 1;
    while (bits < 31 && (1LL << bits) < (int64_t)nagg) bits++;
    size_t bytes = 0;
    if (e == cudaSuccess)
      e = cub::DeviceRadixSort::SortPairs(nullptr, bytes, agg, keys, iota, members, n, 0, bits, s);
    if (e == cudaSuccess) {
      st = coal_cuda_pool_alloc(ctx, bytes, &tmp);
      if (st) goto done;
      e = cub::DeviceRadixSort::SortPairs(tmp, bytes, agg, keys, iota, members, n, 0, bits, s);
    }
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      st = COAL_ERROR(ctx, COAL_ERR_CUDA, "tentative prolongator: %s", cudaGetErrorString(e));
      goto done;
    }
  }
  COAL_CALL_GOTO(st, scan_inplace(ctx, aggptr + 1, nagg), done);
  bc_kernel<<<grid(nagg), kCta, 0, s>>>(nagg, aggptr, members, b, bc);
  t_kernel<<<grid((int64_t)n + 1), kCta, 0, s>>>(n, agg, b, bc, trowptr, tcolind, tval);
  if (cudaGetLastError() != cudaSuccess)
    st = COAL_ERROR(ctx, COAL_ERR_CUDA, "tentative prolongator: launch failed");
done:
  coal_cuda_pool_free(ctx, tmp);
  coal_cuda_pool_free(ctx, keys);
  coal_cuda_pool_free(ctx, iota);
  return st;
}

coal_status coal_amg_smooth_cuda(coal_ctx ctx, int32_t n, const int32_t *rowptr,
                                 const int32_t *colind, double *val, const double *dinv,
                                 const int32_t *agg, const double *tval, double omega) {
  if (n <= 0) return COAL_SUCCESS;
  smooth_kernel<<<grid(n), kCta, 0, coal_stream(ctx)>>>(n, rowptr, colind, val, dinv, agg, tval,
                                                        omega);
  COAL_AMG_LAUNCHED(ctx);
  return COAL_SUCCESS;
}

} // extern "C"
