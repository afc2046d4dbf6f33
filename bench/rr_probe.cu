// Probe for LOBPCG's dense step: the generalized symmetric eigenproblem of order m (60..96 in
// practice) on the host (LAPACK dsygvd) against the device (cuSOLVER dsygvd and the Jacobi
// dsygvj), each including what LOBPCG would have to move: upload of the two Gram matrices,
// download of eigenvalues and eigenvectors. Median of 50 runs after 5 warm-ups. Built with
// -Dprobes=true as build/bench/rr_probe (with cuSOLVER and LAPACK).
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

extern "C" void dsygvd_(const int *, const char *, const char *, const int *, double *, const int *,
                        double *, const int *, double *, double *, const int *, int *, const int *,
                        int *, size_t, size_t);

#define CK(x)                                                                                      \
  do {                                                                                             \
    if ((x) != 0) {                                                                                \
      fprintf(stderr, "%s failed at line %d\n", #x, __LINE__);                                     \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main() {
  const int sizes[] = {24, 60, 96, 192};
  cusolverDnHandle_t h;
  CK(cusolverDnCreate(&h));
  syevjInfo_t params;
  CK(cusolverDnCreateSyevjInfo(&params));
  printf("%6s %12s %12s %12s %10s\n", "m", "host_ms", "cusolver_ms", "syevj_ms", "max_dlam");
  for (int m : sizes) {
    // A: symmetric random with a spread spectrum; B: identity plus 1e-10 noise (as V^T M V)
    std::vector<double> A(m * m), B(m * m);
    srand(7);
    for (int i = 0; i < m; i++)
      for (int j = 0; j <= i; j++) {
        double a = (rand() / (double)RAND_MAX - 0.5) + (i == j ? i : 0);
        double b = (i == j ? 1.0 : 0.0) + 1e-10 * (rand() / (double)RAND_MAX - 0.5);
        A[i * m + j] = A[j * m + i] = a;
        B[i * m + j] = B[j * m + i] = b;
      }
    // host
    const int itype = 1, lwork = 1 + 6 * m + 2 * m * m, liwork = 3 + 5 * m;
    std::vector<double> a(m * m), b(m * m), w(m), wh(m), work(lwork);
    std::vector<int> iwork(liwork);
    std::vector<double> th, td, tj;
    for (int r = 0; r < 55; r++) {
      a = A, b = B;
      int info = 0;
      double t0 = now();
      dsygvd_(&itype, "V", "U", &m, a.data(), &m, b.data(), &m, wh.data(), work.data(), &lwork,
              iwork.data(), &liwork, &info, 1, 1);
      if (r >= 5) th.push_back(now() - t0);
      CK(info);
    }
    // device: cuSOLVER dsygvd and dsygvj, with the transfers
    double *dA, *dB, *dW, *dwork;
    int *dinfo, lw1 = 0, lw2 = 0;
    CK(cudaMalloc(&dA, sizeof(double) * m * m));
    CK(cudaMalloc(&dB, sizeof(double) * m * m));
    CK(cudaMalloc(&dW, sizeof(double) * m));
    CK(cudaMalloc(&dinfo, sizeof(int)));
    CK(cusolverDnDsygvd_bufferSize(h, CUSOLVER_EIG_TYPE_1, CUSOLVER_EIG_MODE_VECTOR,
                                   CUBLAS_FILL_MODE_UPPER, m, dA, m, dB, m, dW, &lw1));
    CK(cusolverDnDsygvj_bufferSize(h, CUSOLVER_EIG_TYPE_1, CUSOLVER_EIG_MODE_VECTOR,
                                   CUBLAS_FILL_MODE_UPPER, m, dA, m, dB, m, dW, &lw2, params));
    CK(cudaMalloc(&dwork, sizeof(double) * std::max(lw1, lw2)));
    std::vector<double> vecs(m * m);
    for (int which = 0; which < 2; which++)
      for (int r = 0; r < 55; r++) {
        double t0 = now();
        CK(cudaMemcpy(dA, A.data(), sizeof(double) * m * m, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dB, B.data(), sizeof(double) * m * m, cudaMemcpyHostToDevice));
        if (which == 0)
          CK(cusolverDnDsygvd(h, CUSOLVER_EIG_TYPE_1, CUSOLVER_EIG_MODE_VECTOR,
                              CUBLAS_FILL_MODE_UPPER, m, dA, m, dB, m, dW, dwork, lw1, dinfo));
        else
          CK(cusolverDnDsygvj(h, CUSOLVER_EIG_TYPE_1, CUSOLVER_EIG_MODE_VECTOR,
                              CUBLAS_FILL_MODE_UPPER, m, dA, m, dB, m, dW, dwork, lw2, dinfo,
                              params));
        CK(cudaMemcpy(w.data(), dW, sizeof(double) * m, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(vecs.data(), dA, sizeof(double) * m * m, cudaMemcpyDeviceToHost));
        if (r >= 5) (which ? tj : td).push_back(now() - t0);
      }
    double dl = 0;
    for (int i = 0; i < m; i++) dl = std::max(dl, std::fabs(w[i] - wh[i]) / (1 + std::fabs(wh[i])));
    printf("%6d %12.3f %12.3f %12.3f %10.2e\n", m, 1e3 * median(th), 1e3 * median(td),
           1e3 * median(tj), dl);
    CK(cudaFree(dA));
    CK(cudaFree(dB));
    CK(cudaFree(dW));
    CK(cudaFree(dinfo));
    CK(cudaFree(dwork));
  }
  CK(cusolverDnDestroySyevjInfo(params));
  CK(cusolverDnDestroy(h));
  return 0;
}
