// Helpers shared by the CUDA probes in bench/ (mma_probe.cu, the gather probes): a checking
// macro for CUDA and cuBLAS calls (both return 0 on success), the median of 30 timed runs after 5
// warm-ups with CUDA events, and a deterministic fill with values in [-0.5, 0.5).
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                                      \
  do {                                                                                             \
    if ((int)(x) != 0) {                                                                           \
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
