/* The AMG coarsest level's dense solve on the GPU, CUDA twin of kernels/host/amg_coarse.c
 * (kernels/amg.h defines it): a gather into column-major work (y = Pi^T B), two cuBLAS
 * triangular solves with L11 and L11^T over the k columns, and a scatter back (x = Pi w, the
 * rows past the rank zero). Nothing leaves the device: the cycle needs no host wait here. */
#include "amg_util.cuh"

using namespace coal_amg_dev;

namespace {

__global__ void gather_kernel(int32_t nc, int64_t k, const int32_t *__restrict__ perm,
                              const double *__restrict__ B, double *__restrict__ W) {
  const int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; /* e = j * nc + i */
  if (e >= (int64_t)nc * k) return;
  const int64_t j = e / nc, i = e - j * nc;
  W[e] = B[(int64_t)perm[i] * k + j];
}

__global__ void scatter_kernel(int32_t nc, int32_t rank, int64_t k,
                               const int32_t *__restrict__ perm, const double *__restrict__ W,
                               double *__restrict__ X) {
  const int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= (int64_t)nc * k) return;
  const int64_t j = e / nc, i = e - j * nc;
  X[(int64_t)perm[i] * k + j] = i < rank ? W[e] : 0.0;
}

} // namespace

extern "C" coal_status coal_amg_coarse_solve_cuda(coal_ctx ctx, int32_t nc, int32_t rank,
                                                  const double *fac, const int32_t *perm, int64_t k,
                                                  const double *B, double *X, double *work) {
  if (nc <= 0 || k <= 0) return COAL_SUCCESS;
  COAL_CHECK(ctx, k <= INT32_MAX, COAL_ERR_OVERFLOW, "coarse solve of %lld columns", (long long)k);
  cudaStream_t s = coal_stream(ctx);
  const int64_t len = (int64_t)nc * k;
  gather_kernel<<<grid(len), kCta, 0, s>>>(nc, k, perm, B, work);
  COAL_AMG_LAUNCHED(ctx);
  if (rank > 0) {
    cublasHandle_t h = ctx->cuda->blas;
    const double one = 1.0;
    /* the context's handle works on its stream with host scalars (context.cu) */
    COAL_CUBLAS_CALL(ctx, cublasDtrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                                      CUBLAS_DIAG_NON_UNIT, rank, (int)k, &one, fac, nc, work, nc));
    COAL_CUBLAS_CALL(ctx, cublasDtrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T,
                                      CUBLAS_DIAG_NON_UNIT, rank, (int)k, &one, fac, nc, work, nc));
  }
  scatter_kernel<<<grid(len), kCta, 0, s>>>(nc, rank, k, perm, work, X);
  COAL_AMG_LAUNCHED(ctx);
  return COAL_SUCCESS;
}
