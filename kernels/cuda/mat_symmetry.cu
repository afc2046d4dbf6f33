/* mat.asymmetry on the GPU (twin: kernels/host/mat_symmetry.c): the first stored off-diagonal
 * entry a_ij, in row order, whose mirror a_ji is missing or differs by more than
 * tol * max(|a_ij|, |a_ji|). One thread per row; each entry's mirror by binary search in row j
 * (columns sorted). The first offender is the minimum of the keys (i << 32 | j) by atomicMin, so
 * the answer does not depend on the order in which threads run. Traffic: A's CSR once plus one
 * short row per entry (mostly cached neighbours); one 8-byte download. */
#include "cuda_internal.h"

#include <climits>

namespace {

template <typename T>
__global__ void asym_kernel(int32_t n, const int32_t *__restrict__ rp,
                            const int32_t *__restrict__ ci, const T *__restrict__ v, double tol,
                            unsigned long long *first) {
  for (int32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    for (int32_t p = rp[i]; p < rp[i + 1]; p++) {
      const int32_t j = ci[p];
      if (j == i) continue;
      int32_t lo = 0, hi = 0, q = -1;
      if (j >= 0 && j < n) {
        lo = rp[j], hi = rp[j + 1];
        const int32_t end = hi;
        while (lo < hi) {
          const int32_t mid = lo + (hi - lo) / 2;
          if (ci[mid] < i)
            lo = mid + 1;
          else
            hi = mid;
        }
        if (lo < end && ci[lo] == i) q = lo;
      }
      const double x = (double)v[p], y = q >= 0 ? (double)v[q] : nan("");
      if (!(fabs(x - y) <= tol * fmax(fabs(x), fabs(y)))) {
        atomicMin(first, ((unsigned long long)i << 32) | (unsigned long long)(uint32_t)j);
        break; /* a later entry of this row has a larger key */
      }
    }
  }
}

} // namespace

coal_status coal_mat_asymmetry_cuda(coal_mat A, double tol, int64_t *row, int64_t *col) {
  coal_ctx ctx = A->ctx;
  *row = *col = -1;
  const int32_t *rp = NULL, *ci = NULL;
  void *v = NULL;
  COAL_CALL(coal_mat_csr_cuda(A, &rp, &ci, &v));
  if (A->nrows == 0 || A->nnz == 0) return COAL_SUCCESS;
  unsigned long long *d = NULL, h = ULLONG_MAX;
  COAL_CALL(coal_cuda_pool_alloc(ctx, sizeof h, (void **)&d));
  cudaStream_t s = coal_stream(ctx);
  coal_status st = COAL_SUCCESS;
  cudaError_t e = cudaMemsetAsync(d, 0xFF, sizeof h, s);
  if (e == cudaSuccess) {
    const int threads = 256;
    const int blocks =
        (int)((A->nrows + threads - 1) / threads < 65536 ? (A->nrows + threads - 1) / threads
                                                         : 65536);
    if (A->dtype == COAL_F64)
      asym_kernel<double><<<blocks, threads, 0, s>>>(A->nrows, rp, ci, (const double *)v, tol, d);
    else
      asym_kernel<float><<<blocks, threads, 0, s>>>(A->nrows, rp, ci, (const float *)v, tol, d);
    e = cudaGetLastError();
  }
  if (e == cudaSuccess) e = cudaMemcpyAsync(&h, d, sizeof h, cudaMemcpyDeviceToHost, s);
  if (e == cudaSuccess) e = cudaStreamSynchronize(s);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    st = COAL_ERROR(ctx, COAL_ERR_CUDA, "symmetry check: %s", cudaGetErrorString(e));
  }
  coal_cuda_pool_free(ctx, d);
  if (!st && h != ULLONG_MAX) *row = (int64_t)(h >> 32), *col = (int64_t)(uint32_t)h;
  return st;
}
