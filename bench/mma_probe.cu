// Probe for the fp64 tensor-core shapes that the Block-CG tile kernels (kernels/cuda/blas_bcg.cu)
// could use on sm_90, and for the memory ceiling of their tile structure.
//  1. Fragment layouts of mma.sync m8n8k4, m16n8k4, m16n8k8 and m16n8k16 (f64): each shape
//     multiplies random 16 x K and K x 8 matrices loaded with the layout assumed here; the result
//     is compared with a host product (exit 1 on a mismatch).
//  2. Throughput of each shape: 8 warps per CTA, 4 independent accumulators per warp, TFLOP/s.
//  3. The streaming skeleton of bcg_update: 4 n x 32 blocks in, 3 out, 32-row tiles through
//     shared memory with cp.async, STAGES tiles in flight per CTA, no arithmetic beyond a copy,
//     against a plain device copy. GB/s over the bytes moved.
// Median of 30 runs after 5 warm-ups, CUDA events. Built with -Dprobes=true as
// build/bench/mma_probe; the m16n8kK shapes need sm_90 (on older GPUs only m8n8k4 is run).
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include "probe_util.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

/* ---- shapes: lane g = lane / 4, t = lane % 4 ------------------------------------------------ */
/* Device code compiled for a GPU without the shape traps (the host does not launch it there). */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define MMA_SM80 0
#else
#define MMA_SM80 1
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define MMA_SM90 0
#else
#define MMA_SM90 1
#endif
__device__ __forceinline__ void mma884(double (&d)[2], double a, double b) {
#if MMA_SM80
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
               : "+d"(d[0]), "+d"(d[1])
               : "d"(a), "d"(b));
#else
  (void)d, (void)a, (void)b;
  __trap();
#endif
}
__device__ __forceinline__ void mma1684(double (&d)[4], const double (&a)[2], double b) {
#if MMA_SM90
  asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
               "{%0,%1,%2,%3};\n"
               : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
               : "d"(a[0]), "d"(a[1]), "d"(b));
#else
  (void)d, (void)a, (void)b;
  __trap();
#endif
}
__device__ __forceinline__ void mma1688(double (&d)[4], const double (&a)[4],
                                        const double (&b)[2]) {
#if MMA_SM90
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
               "{%8,%9}, {%0,%1,%2,%3};\n"
               : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
               : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
#else
  (void)d, (void)a, (void)b;
  __trap();
#endif
}
__device__ __forceinline__ void mma16816(double (&d)[4], const double (&a)[8],
                                         const double (&b)[4]) {
#if MMA_SM90
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, "
               "{%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, {%0,%1,%2,%3};\n"
               : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
               : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]),
                 "d"(a[7]), "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
#else
  (void)d, (void)a, (void)b;
  __trap();
#endif
}

/* D (16 x 8, row-major) = A (16 x K, row-major) B (K x 8, row-major), one warp. Assumed layouts:
 * A element i: row g + 8 (i % 2), column t + 4 (i / 2); B element i: row t + 4 i, column g;
 * D element i: row g + 8 (i / 2), column 2 t + i % 2. m8n8k4: rows 0-7 only. */
template <int K> __global__ void layout_kernel(const double *A, const double *B, double *D) {
  const int lane = threadIdx.x, g = lane >> 2, t = lane & 3;
  double d[4] = {0, 0, 0, 0};
  if constexpr (K == 0) { /* m8n8k4 */
    double d2[2] = {0, 0};
    mma884(d2, A[g * 4 + t], B[t * 8 + g]);
    D[g * 8 + 2 * t] = d2[0], D[g * 8 + 2 * t + 1] = d2[1];
    return;
  } else {
    double a[K / 2], b[K / 4];
#pragma unroll
    for (int i = 0; i < K / 2; i++) a[i] = A[(g + 8 * (i % 2)) * K + t + 4 * (i / 2)];
#pragma unroll
    for (int i = 0; i < K / 4; i++) b[i] = B[(t + 4 * i) * 8 + g];
    if constexpr (K == 4) mma1684(d, (double(&)[2])a, b[0]);
    if constexpr (K == 8) mma1688(d, (double(&)[4])a, (double(&)[2])b);
    if constexpr (K == 16) mma16816(d, (double(&)[8])a, (double(&)[4])b);
#pragma unroll
    for (int i = 0; i < 4; i++) D[(g + 8 * (i / 2)) * 8 + 2 * t + i % 2] = d[i];
  }
}

static int check_layout(int K) {
  const int Kr = K == 0 ? 4 : K, M = K == 0 ? 8 : 16;
  std::vector<double> A(16 * 16), B(16 * 8), D(16 * 8, NAN), R(16 * 8, 0.0);
  srand(7 + K);
  for (auto &v : A) v = (double)(rand() % 1000) / 999.0 - 0.5;
  for (auto &v : B) v = (double)(rand() % 1000) / 999.0 - 0.5;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < 8; j++)
      for (int k = 0; k < Kr; k++) R[i * 8 + j] += A[i * Kr + k] * B[k * 8 + j];
  double *dA, *dB, *dD;
  CK(cudaMalloc(&dA, 8 * A.size()));
  CK(cudaMalloc(&dB, 8 * B.size()));
  CK(cudaMalloc(&dD, 8 * D.size()));
  CK(cudaMemcpy(dA, A.data(), 8 * A.size(), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dB, B.data(), 8 * B.size(), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dD, D.data(), 8 * D.size(), cudaMemcpyHostToDevice));
  if (K == 0) layout_kernel<0><<<1, 32>>>(dA, dB, dD);
  if (K == 4) layout_kernel<4><<<1, 32>>>(dA, dB, dD);
  if (K == 8) layout_kernel<8><<<1, 32>>>(dA, dB, dD);
  if (K == 16) layout_kernel<16><<<1, 32>>>(dA, dB, dD);
  CK(cudaGetLastError());
  CK(cudaMemcpy(D.data(), dD, 8 * D.size(), cudaMemcpyDeviceToHost));
  double err = 0.0;
  for (int i = 0; i < M * 8; i++) err = std::max(err, std::fabs(D[i] - R[i]));
  printf("layout %-8s max error %.3g %s\n",
         K == 0   ? "m8n8k4"
         : K == 4 ? "m16n8k4"
         : K == 8 ? "m16n8k8"
                  : "m16n8k16",
         err, err < 1e-13 ? "ok" : "WRONG");
  CK(cudaFree(dA));
  CK(cudaFree(dB));
  CK(cudaFree(dD));
  return err < 1e-13 ? 0 : 1;
}

/* ---- throughput --------------------------------------------------------------------------- */
template <int K> __global__ __launch_bounds__(256) void tput_kernel(int iters, double *out) {
  const double x = threadIdx.x * 1e-3;
  double acc[4][4] = {};
  double a[8], b[4];
#pragma unroll
  for (int i = 0; i < 8; i++) a[i] = x + i;
#pragma unroll
  for (int i = 0; i < 4; i++) b[i] = x - i;
  for (int it = 0; it < iters; it++) {
#pragma unroll
    for (int j = 0; j < 4; j++) {
      if constexpr (K == 0) mma884((double(&)[2])acc[j], a[0], b[0]);
      if constexpr (K == 4) mma1684(acc[j], (double(&)[2])a, b[0]);
      if constexpr (K == 8) mma1688(acc[j], (double(&)[4])a, (double(&)[2])b);
      if constexpr (K == 16) mma16816(acc[j], a, b);
    }
  }
  double s = 0;
#pragma unroll
  for (int j = 0; j < 4; j++) s += acc[j][0] + acc[j][1] + acc[j][2] + acc[j][3];
  if (s == 12345.678) out[0] = s;
}

template <int K> static void tput(int sms) {
  double *o;
  CK(cudaMalloc(&o, 8));
  const int iters = 4096;
  const double ms = median_ms([&] { tput_kernel<K><<<sms * 4, 256>>>(iters, o); });
  CK(cudaGetLastError());
  const double flop_per = K == 0 ? 512.0 : 2.0 * 16 * 8 * K;
  const double flops = (double)sms * 4 * 8 * iters * 4 * flop_per;
  printf("throughput %-8s %.3f ms  %.1f TFLOP/s  (%.1f G mma/s)\n",
         K == 0   ? "m8n8k4"
         : K == 4 ? "m16n8k4"
         : K == 8 ? "m16n8k8"
                  : "m16n8k16",
         ms, flops / ms * 1e-9, (double)sms * 4 * 8 * iters * 4 / ms * 1e-6);
  CK(cudaFree(o));
}

/* ---- streaming skeleton ------------------------------------------------------------------- */
constexpr int kLd = 36, kRows = 32, kTile = kRows * kLd;

__device__ __forceinline__ void copy_in(double *sm, const double *__restrict__ g, int64_t r0) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, c = 2 * (lane & 15);
  const int nw = blockDim.x >> 5, rows_per = kRows / nw;
  for (int i = 0; i < rows_per / 2; i++) {
    const int r = warp * rows_per + 2 * i + (lane >> 4);
    __pipeline_memcpy_async(sm + r * kLd + c, g + (r0 + r) * 32 + c, 16);
  }
}
__device__ __forceinline__ void copy_out(double *__restrict__ g, const double *sm, int64_t r0) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, c = 2 * (lane & 15);
  const int nw = blockDim.x >> 5, rows_per = kRows / nw;
  for (int i = 0; i < rows_per / 2; i++) {
    const int r = warp * rows_per + 2 * i + (lane >> 4);
    *(double2 *)(g + (r0 + r) * 32 + c) = make_double2(sm[r * kLd + c], sm[r * kLd + c + 1]);
  }
}

/* 4 blocks in, 3 out (out_j = in_j + in_3), STAGES tiles of each input in flight. */
template <int STAGES>
__global__ void stream_kernel(int64_t ntiles, const double *__restrict__ I0,
                              const double *__restrict__ I1, const double *__restrict__ I2,
                              const double *__restrict__ I3, double *__restrict__ O0,
                              double *__restrict__ O1, double *__restrict__ O2) {
  extern __shared__ __align__(128) double sm[];
  const int64_t G = gridDim.x;
  int64_t t = blockIdx.x;
  for (int s = 0; s < STAGES - 1; s++) {
    const int64_t ts = t + s * G;
    if (ts < ntiles) {
      double *b = sm + s * 4 * kTile;
      copy_in(b, I0, ts * kRows), copy_in(b + kTile, I1, ts * kRows);
      copy_in(b + 2 * kTile, I2, ts * kRows), copy_in(b + 3 * kTile, I3, ts * kRows);
    }
    __pipeline_commit();
  }
  for (int s = 0; t < ntiles; t += G, s = (s + 1) % STAGES) {
    const int64_t tn = t + (STAGES - 1) * G;
    if (tn < ntiles) {
      double *b = sm + ((s + STAGES - 1) % STAGES) * 4 * kTile;
      copy_in(b, I0, tn * kRows), copy_in(b + kTile, I1, tn * kRows);
      copy_in(b + 2 * kTile, I2, tn * kRows), copy_in(b + 3 * kTile, I3, tn * kRows);
    }
    __pipeline_commit();
    __pipeline_wait_prior(STAGES - 1);
    __syncthreads();
    double *b = sm + s * 4 * kTile;
    for (int f = threadIdx.x; f < kRows * 32; f += blockDim.x) {
      const int r = f >> 5, c = f & 31;
      const double v3 = b[3 * kTile + r * kLd + c];
      b[r * kLd + c] += v3, b[kTile + r * kLd + c] += v3, b[2 * kTile + r * kLd + c] += v3;
    }
    __syncthreads();
    copy_out(O0, b, t * kRows), copy_out(O1, b + kTile, t * kRows);
    copy_out(O2, b + 2 * kTile, t * kRows);
    __syncthreads();
  }
}

template <int STAGES>
static void stream(int sms, int per_sm, int threads, int64_t n, double *const *B) {
  const int64_t ntiles = n / kRows;
  const size_t shm = sizeof(double) * STAGES * 4 * kTile;
  CK(cudaFuncSetAttribute(stream_kernel<STAGES>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                          (int)shm));
  const unsigned grid = (unsigned)std::min<int64_t>(ntiles, (int64_t)sms * per_sm);
  const double ms = median_ms([&] {
    stream_kernel<STAGES><<<grid, threads, shm>>>(ntiles, B[0], B[1], B[2], B[3], B[4], B[5], B[6]);
  });
  CK(cudaGetLastError());
  const double bytes = 7.0 * n * 32 * 8;
  printf("stream stages %d, %d CTAs/SM x %3d threads, %6.1f KB smem: %.3f ms  %.0f GB/s\n", STAGES,
         per_sm, threads, shm / 1024.0, ms, bytes / ms * 1e-6);
}

int main() {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("%s, %d SMs\n", prop.name, prop.multiProcessorCount);
  if (prop.major < 8) {
    printf("fp64 mma needs sm_80 or newer\n");
    return 77;
  }
  const bool sm90 = prop.major >= 9; /* the m16n8kK shapes */
  if (!sm90) printf("m16n8k4, m16n8k8, m16n8k16: need sm_90, not run\n");
  int bad = 0;
  for (int K : {0, 4, 8, 16})
    if (K == 0 || sm90) bad += check_layout(K);
  const int sms = prop.multiProcessorCount;
  tput<0>(sms);
  if (sm90) {
    tput<4>(sms);
    tput<8>(sms);
    tput<16>(sms);
  }
  const int64_t n = (int64_t)1 << 21;
  double *B[7];
  for (int i = 0; i < 7; i++) {
    CK(cudaMalloc(&B[i], sizeof(double) * n * 32));
    fill<<<1024, 256>>>(B[i], (size_t)n * 32, 17u + i);
  }
  CK(cudaDeviceSynchronize());
  const double cms = median_ms(
      [&] { CK(cudaMemcpyAsync(B[4], B[0], sizeof(double) * n * 32, cudaMemcpyDeviceToDevice)); });
  printf("device copy: %.3f ms  %.0f GB/s\n", cms, 2.0 * n * 32 * 8 / cms * 1e-6);
  stream<2>(sms, 1, 256, n, B);
  stream<2>(sms, 2, 256, n, B);
  stream<3>(sms, 1, 256, n, B);
  stream<3>(sms, 2, 256, n, B);
  stream<4>(sms, 1, 256, n, B);
  stream<2>(sms, 2, 512, n, B);
  stream<3>(sms, 1, 512, n, B);
  stream<5>(sms, 1, 256, n, B);
  return bad ? 1 : 0;
}
