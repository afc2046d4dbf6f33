// Probe for Block-CG's tall-skinny block products (n = 2^21 rows, k = 32 columns, row-major
// blocks as the solver keeps them): the Gram G = P^T Q as one cuBLAS dgemm over all n rows (what
// kernels/cuda/blas.cu does) against a manual split over row chunks (strided-batched dgemm into
// partial Grams, then one dgemv summing them), and the update Y += P H, against the device copy
// bandwidth. Checks every variant against the single dgemm. Median of 30 runs after 5 warm-ups,
// CUDA events. Not part of the build; on a GPU machine:
//   nvcc -O2 -arch=sm_90 bench/gram_probe.cu -o gram_probe -lcublas && ./gram_probe
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                                      \
  do {                                                                                             \
    if ((x) != 0) {                                                                                \
      fprintf(stderr, "%s failed at line %d\n", #x, __LINE__);                                     \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

template <class F> static double median_ms(F f) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<float> t;
  for (int r = 0; r < 35; r++) {
    CK(cudaEventRecord(a));
    f();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    if (r >= 5) t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  return t[t.size() / 2];
}

__global__ void fill(double *x, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)(i * 2654435761u) ^ seed;
    h ^= h >> 13, h *= 0x5bd1e995u, h ^= h >> 15;
    x[i] = (double)(h & 0xffffff) / 16777216.0 - 0.5;
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
  CK(cublasDestroy(cb));
  return 0;
}
