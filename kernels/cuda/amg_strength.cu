/* AMG setup on the GPU: the diagonal, the smoother's inverse diagonal, the strength graph and the
 * filtered matrix; CUDA twins of kernels/host/amg_strength.c (kernels/amg.h defines the
 * results). A thread per row walks the row in the host's order, so every sum and comparison is
 * the host's, bit for bit. Traffic per call as in kernels/amg.h (A's arrays read once per pass;
 * the per-entry gathers of diag[j] and b[j] hit L2 for banded matrices). */
#include "amg_util.cuh"

using namespace coal_amg_dev;

namespace {

__global__ void diagonal_kernel(int32_t n, const int32_t *__restrict__ rp,
                                const int32_t *__restrict__ ci, const double *__restrict__ v,
                                double *__restrict__ diag) {
  const int32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double d = 0.0;
  for (int32_t p = rp[i]; p < rp[i + 1]; p++)
    if (ci[p] == i) d = v[p];
  diag[i] = d;
}

/* bad: the smallest row with a_ii not positive and finite (atomicMin; n when none) */
__global__ void dinv_kernel(int32_t n, const int32_t *__restrict__ rp,
                            const int32_t *__restrict__ ci, const double *__restrict__ v, int l1,
                            double *__restrict__ dinv, unsigned long long *bad) {
  const int32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double d = 0.0, s = 0.0;
  for (int32_t p = rp[i]; p < rp[i + 1]; p++) {
    if (ci[p] == i) d = v[p];
    s = __dadd_rn(s, fabs(v[p]));
  }
  if (!(d > 0.0 && isfinite(d))) {
    atomicMin(bad, (unsigned long long)i);
    dinv[i] = d;
  } else {
    dinv[i] = __ddiv_rn(1.0, l1 ? s : d);
  }
}

__device__ __forceinline__ bool strong(double aij, double t2, double di, double dj) {
  return aij != 0.0 && __dmul_rn(aij, aij) >= __dmul_rn(__dmul_rn(t2, fabs(di)), fabs(dj));
}

/* cnt[i + 1] = the strong entries of row i; cnt[0] = 0 (the caller scans cnt + 1) */
__global__ void count_kernel(int32_t n, const int32_t *__restrict__ rp,
                             const int32_t *__restrict__ ci, const double *__restrict__ v,
                             const double *__restrict__ diag, double t2,
                             int32_t *__restrict__ cnt) {
  const int32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0) cnt[0] = 0;
  if (i >= n) return;
  const double di = diag[i];
  int32_t c = 0;
  for (int32_t p = rp[i]; p < rp[i + 1]; p++) {
    const int32_t j = ci[p];
    c += j != i && strong(v[p], t2, di, diag[j]);
  }
  cnt[i + 1] = c;
}

__global__ void fill_kernel(int32_t n, const int32_t *__restrict__ rp,
                            const int32_t *__restrict__ ci, const double *__restrict__ v,
                            const double *__restrict__ diag, double t2,
                            const int32_t *__restrict__ srp, int32_t *__restrict__ sci,
                            double *__restrict__ sval) {
  const int32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const double di = diag[i];
  int32_t q = srp[i];
  for (int32_t p = rp[i]; p < rp[i + 1]; p++) {
    const int32_t j = ci[p];
    const double dj = diag[j];
    if (j == i || !strong(v[p], t2, di, dj)) continue;
    sci[q] = j;
    if (sval) sval[q] = __ddiv_rn(fabs(v[p]), __dsqrt_rn(__dmul_rn(fabs(di), fabs(dj))));
    q++;
  }
}

__global__ void filter_kernel(int32_t n, const int32_t *__restrict__ rp,
                              const int32_t *__restrict__ ci, const double *__restrict__ v,
                              const double *__restrict__ b, const int32_t *__restrict__ srp,
                              const int32_t *__restrict__ sci, int32_t *__restrict__ frp,
                              int32_t *__restrict__ fci, double *__restrict__ fval) {
  const int32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > n) return;
  frp[i] = srp[i] + i;
  if (i == n) return;
  int32_t q = srp[i], f = srp[i] + i, fd = -1;
  const int32_t qend = srp[i + 1];
  double d = 0.0, w = 0.0;
  for (int32_t p = rp[i]; p < rp[i + 1]; p++) {
    const int32_t j = ci[p];
    if (j > i && fd < 0) fd = f++;
    if (j == i) {
      d = v[p];
      fd = f++;
    } else if (q < qend && sci[q] == j) {
      fci[f] = j, fval[f] = v[p];
      f++, q++;
    } else {
      w = __dadd_rn(w, __dmul_rn(v[p], b[j]));
    }
  }
  if (fd < 0) fd = f++;
  fci[fd] = i, fval[fd] = __dadd_rn(d, __ddiv_rn(w, b[i]));
}

} // namespace

extern "C" {

coal_status coal_amg_diagonal_cuda(coal_ctx ctx, int32_t n, const int32_t *rowptr,
                                   const int32_t *colind, const double *val, double *diag) {
  if (n <= 0) return COAL_SUCCESS;
  diagonal_kernel<<<grid(n), kCta, 0, coal_stream(ctx)>>>(n, rowptr, colind, val, diag);
  COAL_AMG_LAUNCHED(ctx);
  return COAL_SUCCESS;
}

coal_status coal_amg_dinv_cuda(coal_ctx ctx, int32_t n, const int32_t *rowptr,
                               const int32_t *colind, const double *val, int l1, double *dinv,
                               int64_t *bad) {
  *bad = -1;
  if (n <= 0) return COAL_SUCCESS;
  unsigned long long *d_bad = NULL, h_bad = 0;
  COAL_CALL(coal_cuda_pool_alloc(ctx, sizeof *d_bad, (void **)&d_bad));
  coal_status st = COAL_SUCCESS;
  cudaError_t e = cudaMemsetAsync(d_bad, 0xff, sizeof *d_bad, coal_stream(ctx));
  if (e == cudaSuccess) {
    dinv_kernel<<<grid(n), kCta, 0, coal_stream(ctx)>>>(n, rowptr, colind, val, l1, dinv, d_bad);
    e = cudaGetLastError();
  }
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    st = COAL_ERROR(ctx, COAL_ERR_CUDA, "AMG inverse diagonal: %s", cudaGetErrorString(e));
  }
  if (st == COAL_SUCCESS) st = fetch(ctx, &h_bad, d_bad, sizeof h_bad);
  coal_cuda_pool_free(ctx, d_bad);
  if (st == COAL_SUCCESS && h_bad < (unsigned long long)n) *bad = (int64_t)h_bad;
  return st;
}

coal_status coal_amg_strength_count_cuda(coal_ctx ctx, int32_t n, const int32_t *rowptr,
                                         const int32_t *colind, const double *val,
                                         const double *diag, double theta, int32_t *srowptr) {
  count_kernel<<<grid(n > 0 ? n : 1), kCta, 0, coal_stream(ctx)>>>(n, rowptr, colind, val, diag,
                                                                   theta * theta, srowptr);
  COAL_AMG_LAUNCHED(ctx);
  return scan_inplace(ctx, srowptr + 1, n);
}

coal_status coal_amg_strength_fill_cuda(coal_ctx ctx, int32_t n, const int32_t *rowptr,
                                        const int32_t *colind, const double *val,
                                        const double *diag, double theta, const int32_t *srowptr,
                                        int32_t *scolind, double *sval) {
  if (n <= 0) return COAL_SUCCESS;
  fill_kernel<<<grid(n), kCta, 0, coal_stream(ctx)>>>(n, rowptr, colind, val, diag, theta * theta,
                                                      srowptr, scolind, sval);
  COAL_AMG_LAUNCHED(ctx);
  return COAL_SUCCESS;
}

coal_status coal_amg_filter_cuda(coal_ctx ctx, int32_t n, const int32_t *rowptr,
                                 const int32_t *colind, const double *val, const double *b,
                                 const int32_t *srowptr, const int32_t *scolind, int32_t *frowptr,
                                 int32_t *fcolind, double *fval) {
  filter_kernel<<<grid((int64_t)n + 1), kCta, 0, coal_stream(ctx)>>>(
      n, rowptr, colind, val, b, srowptr, scolind, frowptr, fcolind, fval);
  COAL_AMG_LAUNCHED(ctx);
  return COAL_SUCCESS;
}

} // extern "C"
