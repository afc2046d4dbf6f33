// Probe for Block-CG's tall-skinny block products (n = 2^21 rows, k = 32 columns, row-major
// blocks as the solver keeps them): the Gram G = P^T Q as one cuBLAS dgemm over all n rows (what
// kernels/cuda/blas.cu does) against a manual split over row chunks (strided-batched dgemm into
// partial Grams, then one dgemv summing them), and the update Y += P H, against the device copy
// bandwidth. Checks every variant against the single dgemm. Median of 30 runs after 5 warm-ups,
// CUDA events. Not part of the build; on a GPU machine:
//   nvcc -O2 -arch=sm_90 bench/gram_probe.cu -o gram_probe -lcublas && ./gram_probe
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "probe_util.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

// The warp-per-row update of kernels/cuda/blas.cu (gemm_small_kernel), with ROWS rows per warp
// iteration as a parameter: Y = a X C + beta Y, row-major, p = q = k <= 32, C (k x k) on device.
template <int ROWS>
__global__ __launch_bounds__(256) void gemm_small(int64_t n, int p, int q, double a,
                                                  const double *__restrict__ X, int64_t ldx,
                                                  const double *__restrict__ C, double beta,
                                                  double *__restrict__ Y, int64_t ldy) {
  const int lane = threadIdx.x & 31;
  double c[32];
#pragma unroll
  for (int t = 0; t < 32; t++) c[t] = (t < p && lane < q) ? C[t * q + lane] : 0.0;
  const int64_t w = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const int64_t nw = ((int64_t)gridDim.x * blockDim.x) >> 5;
  for (int64_t i0 = w * ROWS; i0 < n; i0 += nw * ROWS) {
    double x[ROWS], y[ROWS], acc[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; r++) {
      const int64_t i = i0 + r;
      x[r] = (i < n && lane < p) ? X[i * ldx + lane] : 0.0;
      y[r] = (beta != 0.0 && i < n && lane < q) ? Y[i * ldy + lane] : 0.0;
      acc[r] = 0.0;
    }
#pragma unroll
    for (int t = 0; t < 32; t++)
#pragma unroll
      for (int r = 0; r < ROWS; r++) acc[r] = fma(__shfl_sync(0xffffffffu, x[r], t), c[t], acc[r]);
#pragma unroll
    for (int r = 0; r < ROWS; r++) {
      const int64_t i = i0 + r;
      if (i < n && lane < q)
        Y[i * ldy + lane] = beta != 0.0 ? fma(a, acc[r], beta * y[r]) : a * acc[r];
    }
  }
}

int main(int argc, char **argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 1 << 21, k = argc > 2 ? atoi(argv[2]) : 32;
  const size_t nk = (size_t)n * k;
  double *P, *Q, *Y, *G, *G2, *part, *ones, *H;
  CK(cudaMalloc(&P, nk * 8));
  CK(cudaMalloc(&Q, nk * 8));
  CK(cudaMalloc(&Y, nk * 8));
  CK(cudaMalloc(&G, k * k * 8));
  CK(cudaMalloc(&G2, k * k * 8));
  CK(cudaMalloc(&H, k * k * 8));
  const int max_chunks = 4096;
  CK(cudaMalloc(&part, (size_t)max_chunks * k * k * 8));
  CK(cudaMalloc(&ones, max_chunks * 8));
  fill<<<1024, 256>>>(P, nk, 1);
  fill<<<1024, 256>>>(Q, nk, 2);
  fill<<<1024, 256>>>(Y, nk, 3);
  fill<<<4, 256>>>(H, k * k, 4);
  std::vector<double> h1(max_chunks, 1.0);
  CK(cudaMemcpy(ones, h1.data(), max_chunks * 8, cudaMemcpyHostToDevice));
  cublasHandle_t cb;
  CK(cublasCreate(&cb));
  const double one = 1.0, zero = 0.0;
  const double block_gb = nk * 8 / 1e9;

  double t_copy = median_ms([&] { CK(cudaMemcpyAsync(Y, Q, nk * 8, cudaMemcpyDeviceToDevice)); });
  printf("n=%d k=%d block %.3f GB; copy (read+write one block) %.3f ms = %.0f GB/s\n", n, k,
         block_gb, t_copy, 2 * block_gb / t_copy * 1e3);

  // the current gram: column-major G^T (k x k) = Q^T-ish (k x n, ld k) * (P (k x n, ld k))^T
  auto gram_one = [&](double *out) {
    CK(cublasDgemm(cb, CUBLAS_OP_N, CUBLAS_OP_T, k, k, n, &one, Q, k, P, k, &zero, out, k));
  };
  double t1 = median_ms([&] { gram_one(G); });
  printf("gram single dgemm:          %.3f ms = %.0f GB/s (2 blocks read)\n", t1,
         2 * block_gb / t1 * 1e3);
  std::vector<double> ref(k * k), got(k * k);
  CK(cudaMemcpy(ref.data(), G, k * k * 8, cudaMemcpyDeviceToHost));

  for (int chunk : {2048, 4096, 8192, 16384, 32768, 65536}) {
    const int nc = n / chunk; // n is a multiple of the chunk in this probe
    if (nc > max_chunks || nc * chunk != n) continue;
    auto gram_split = [&] {
      CK(cublasDgemmStridedBatched(cb, CUBLAS_OP_N, CUBLAS_OP_T, k, k, chunk, &one, Q, k,
                                   (long long)chunk * k, P, k, (long long)chunk * k, &zero, part, k,
                                   (long long)k * k, nc));
      CK(cublasDgemv(cb, CUBLAS_OP_N, k * k, nc, &one, part, k * k, ones, 1, &zero, G2, 1));
    };
    double t = median_ms(gram_split);
    CK(cudaMemcpy(got.data(), G2, k * k * 8, cudaMemcpyDeviceToHost));
    double err = 0, nrm = 0;
    for (int i = 0; i < k * k; i++)
      err = std::max(err, std::fabs(got[i] - ref[i])), nrm = std::max(nrm, std::fabs(ref[i]));
    printf("gram split, chunk %6d:    %.3f ms = %.0f GB/s, %.2fx the single dgemm, max rel diff "
           "%.1e\n",
           chunk, t, 2 * block_gb / t * 1e3, t1 / t, err / nrm);
  }

  // Y += P H: column-major Y^T (k x n) += H^T (k x k) * P^T (k x n)
  double t2 = median_ms([&] {
    CK(cublasDgemm(cb, CUBLAS_OP_N, CUBLAS_OP_N, k, n, k, &one, H, k, P, k, &one, Y, k));
  });
  printf("update Y += P H (dgemm):    %.3f ms = %.0f GB/s (3 blocks moved)\n", t2,
         3 * block_gb / t2 * 1e3);
  // the same update by the warp-per-row kernel, checked against cuBLAS on a fresh copy
  if (k <= 32) {
    double *Y0, *Yc;
    CK(cudaMalloc(&Y0, nk * 8));
    CK(cudaMalloc(&Yc, nk * 8));
    fill<<<1024, 256>>>(Y0, nk, 5);
    CK(cudaMemcpy(Yc, Y0, nk * 8, cudaMemcpyDeviceToDevice));
    CK(cublasDgemm(cb, CUBLAS_OP_N, CUBLAS_OP_N, k, n, k, &one, H, k, P, k, &one, Yc, k));
    std::vector<double> yc(nk), ys(nk);
    CK(cudaMemcpy(yc.data(), Yc, nk * 8, cudaMemcpyDeviceToHost));
    int sm;
    CK(cudaDeviceGetAttribute(&sm, cudaDevAttrMultiProcessorCount, 0));
    auto run = [&](auto kern, int rows, double *Yt) {
      int64_t g = (n + 8 * rows - 1) / (8 * rows);
      if (g > sm * 8) g = sm * 8;
      kern<<<(unsigned)g, 256>>>(n, k, k, 1.0, P, k, H, 1.0, Yt, k);
    };
    auto report = [&](auto kern, int rows) {
      CK(cudaMemcpy(Y, Y0, nk * 8, cudaMemcpyDeviceToDevice));
      run(kern, rows, Y);
      CK(cudaGetLastError());
      CK(cudaMemcpy(ys.data(), Y, nk * 8, cudaMemcpyDeviceToHost));
      double err = 0;
      for (size_t i = 0; i < nk; i++) err = std::max(err, std::fabs(ys[i] - yc[i]));
      double t = median_ms([&] { run(kern, rows, Y); });
      printf("update, warp per row, %d rows: %.3f ms = %.0f GB/s, %.2fx cuBLAS, max diff %.1e\n",
             rows, t, 3 * block_gb / t * 1e3, t2 / t, err);
    };
    report(gemm_small<1>, 1);
    report(gemm_small<2>, 2);
    report(gemm_small<4>, 4);
    report(gemm_small<8>, 8);
    CK(cudaFree(Y0));
    CK(cudaFree(Yc));
  }
  CK(cublasDestroy(cb));
  return 0;
}
