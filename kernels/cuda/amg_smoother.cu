/* The AMG smoother's fused Chebyshev step on the GPU, CUDA twin of kernels/host/amg_smoother.c
 * (kernels/amg.h defines it). A thread per entry (row i, column c) of the row-major blocks, so
 * that a warp's gathers of dprev read consecutive columns of one row (k >= 32) or a few rows
 * (k < 32), and its row updates are coalesced; for k = 1 that is a thread per row (on stencil
 * rows a sub-warp per row, whose epilogue runs on one lane in W, was slower: bench/RESULTS.md,
 * rule amg-cheb-k1). Rows of more than 16 entries on average at k = 1 take a warp per row
 * (entries read coalesced, shuffled sum, lane 0's epilogue). Traffic: A streamed once (plus the
 * gathers of dprev), rin, dinv, xin read, rout, dnew, xout written: the pass replaces four block
 * operations.
 */
#include "amg_util.cuh"

using namespace coal_amg_dev;

namespace {

struct Step {
  double c1, c2;
  const double *dinv, *rin;
  double *rout;
  const double *dprev;
  double *dnew;
  const double *xin;
  double *xout;
};

__device__ __forceinline__ void epilogue(const Step &q, int64_t e, int32_t i, double sum) {
  const double s = q.rin[e] - sum;
  if (q.rout) q.rout[e] = s;
  double d = q.c2 * q.dinv[i] * s;
  if (q.dprev) d += q.c1 * q.dprev[e];
  if (q.dnew) q.dnew[e] = d;
  q.xout[e] = (q.xin ? q.xin[e] : 0.0) + d;
}

template <int W>
__global__ void step1_kernel(int32_t n, const int32_t *__restrict__ rp,
                             const int32_t *__restrict__ ci, const double *__restrict__ v, Step q) {
  const int64_t gt = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const int64_t row = gt / W;
  const int lane = (int)(threadIdx.x & (W - 1));
  double sum = 0.0;
  if (row < n && q.dprev)
    for (int32_t p = rp[row] + lane; p < rp[row + 1]; p += W)
      sum += __ldcs(v + p) * __ldg(q.dprev + __ldcs(ci + p));
#pragma unroll
  for (int off = W / 2; off > 0; off >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, off, W);
  if (row < n && lane == 0) epilogue(q, row, (int32_t)row, sum);
}

__global__ void stepk_kernel(int32_t n, int64_t k, const int32_t *__restrict__ rp,
                             const int32_t *__restrict__ ci, const double *__restrict__ v, Step q) {
  const int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= (int64_t)n * k) return;
  const int32_t i = (int32_t)(e / k);
  const int64_t c = e - (int64_t)i * k;
  double sum = 0.0;
  if (q.dprev)
    for (int32_t p = rp[i]; p < rp[i + 1]; p++) sum += v[p] * q.dprev[(int64_t)ci[p] * k + c];
  epilogue(q, e, i, sum);
}

template <int W>
void launch1(cudaStream_t s, int32_t n, const int32_t *rp, const int32_t *ci, const double *v,
             const Step &q) {
  const int64_t threads = (int64_t)n * W;
  step1_kernel<W><<<grid(threads), kCta, 0, s>>>(n, rp, ci, v, q);
}

} // namespace

extern "C" coal_status coal_amg_cheb_step_cuda(coal_mat A, int64_t k, double c1, double c2,
                                               const double *dinv, const double *rin, double *rout,
                                               const double *dprev, double *dnew, const double *xin,
                                               double *xout) {
  coal_ctx ctx = A->ctx;
  const int32_t n = A->nrows;
  if (n == 0 || k == 0) return COAL_SUCCESS;
  const int32_t *rp = NULL, *ci = NULL;
  void *vv = NULL;
  COAL_CALL(coal_mat_csr_cuda(A, &rp, &ci, &vv));
  const double *v = (const double *)vv;
  const Step q = {c1, c2, dinv, rin, rout, dprev, dnew, xin, xout};
  cudaStream_t s = coal_stream(ctx);
  const double mean = (double)A->nnz / (double)n;
  if (k == 1 && dprev && mean > 16) { /* long rows: a warp per row, shuffles */
    launch1<32>(s, n, rp, ci, v, q);
  } else { /* short rows (stencils), or no product: a thread per row, coalesced row updates */
    stepk_kernel<<<grid((int64_t)n * k), kCta, 0, s>>>(n, k, rp, ci, v, q);
  }
  COAL_AMG_LAUNCHED(ctx);
  return COAL_SUCCESS;
}
