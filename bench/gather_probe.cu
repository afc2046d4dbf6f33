// Lower bounds for SpMV on the power-law matrix (issue 2): how long the GPU needs just to stream
// A's indices and values, and to gather x once per nonzero, with perfect load balance (every
// thread takes every T-th nonzero, four in flight) and nothing else (no row offsets, no segment
// sums, no y). A CSR- or FastLoad-style kernel that reads x once per nonzero can be no faster
// than "stream + gather". Measured next to cuSPARSE SpMV (CSR ALG1 and ALG2, preprocessed) on the
// same matrix in the same process:
//   stream        sum of val[p] * col[p]                   (A's bytes only)
//   gather        sum of val[p] * x[col[p]]                (the user's column order)
//   gather-pop    sum of val[p] * xp[colp[p]]              (columns renumbered by popularity,
//                                                           most used first: best locality)
//   gather-seq    sum of val[p] * x[p % n]                 (x read in order: no gather cost)
// Matrix: coal_gen_powerlaw(2^20 rows, mean 12, gamma 2.5, seed 1), as `coalesce bench spmv`.
// Built with CUDA and -Dprobes=true as build/bench/gather_probe (not installed).
#include <cusparse.h>

#include "probe_powerlaw.h"

#include <cstdint>
#include <cmath>

/* the popularity order runs kGather on the renumbered indices and the permuted x */
enum { kStream = 0, kGather = 1, kGatherSeq = 2 };

template <int MODE>
__global__ __launch_bounds__(256) void probe(int64_t nnz, int n, const int *__restrict__ col,
                                             const double *__restrict__ val,
                                             const double *__restrict__ x,
                                             double *__restrict__ out) {
  const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const int64_t T = (int64_t)gridDim.x * blockDim.x;
  double acc = 0;
  int64_t p = t;
  for (; p + 3 * T < nnz; p += 4 * T) {
    int c[4];
    double v[4], xv[4];
#pragma unroll
    for (int u = 0; u < 4; u++) c[u] = __ldcs(col + p + u * T), v[u] = __ldcs(val + p + u * T);
#pragma unroll
    for (int u = 0; u < 4; u++) {
      if (MODE == kStream) xv[u] = (double)c[u];
      if (MODE == kGather) xv[u] = __ldg(x + c[u]);
      if (MODE == kGatherSeq) xv[u] = __ldg(x + (p + u * T) % n);
    }
#pragma unroll
    for (int u = 0; u < 4; u++) acc += v[u] * xv[u];
  }
  for (; p < nnz; p += T) {
    const int c = col[p];
    const double xv = MODE == kStream ? (double)c : MODE == kGather ? x[c] : x[p % n];
    acc += val[p] * xv;
  }
  out[t] = acc;
}

int main() {
  const probe_powerlaw P = probe_powerlaw_load();
  const int64_t m = P.m, n = P.n, nnz = P.nnz;
  const std::vector<int> &col = P.col, &rank = P.rank;
  const std::vector<double> &val = P.val;
  // x, and its copy in the popularity order with the matching column indices
  std::vector<double> x(n), xp(n);
  for (int i = 0; i < n; i++) x[i] = (double)((i * 2654435761u) % 1000) / 1000.0 - 0.5;
  for (int i = 0; i < n; i++) xp[rank[i]] = x[i];
  std::vector<int> colp(nnz);
  for (int64_t p = 0; p < nnz; p++) colp[p] = rank[col[p]];

  const int threads = 256, blocks = 132 * 8;
  int *dcol = probe_upload(col), *dcolp = probe_upload(colp), *drp = probe_upload(P.rp);
  double *dval = probe_upload(val), *dx = probe_upload(x), *dxp = probe_upload(xp);
  double *dy, *dout;
  CK(cudaMalloc(&dy, 8 * m));
  CK(cudaMalloc(&dout, 8 * (size_t)threads * blocks));

  // check: the gather variants give the same total (sum over all nonzeros of val * x)
  double ref = 0;
  for (int64_t p = 0; p < nnz; p++) ref += val[p] * x[col[p]];
  const size_t nout = (size_t)threads * blocks;
  auto total = [&]() { return probe_sum(dout, nout); };
  probe<kGather><<<blocks, threads>>>(nnz, n, dcol, dval, dx, dout);
  const double s1 = total();
  probe<kGather><<<blocks, threads>>>(nnz, n, dcolp, dval, dxp, dout);
  const double s2 = total();
  const bool ok =
      fabs(s1 - ref) <= 1e-9 * fabs(ref) + 1e-9 && fabs(s2 - ref) <= 1e-9 * fabs(ref) + 1e-9;
  printf("power-law n %lld nnz %lld: gather sums %s (%.12g %.12g, host %.12g)\n", (long long)n,
         (long long)nnz, ok ? "agree" : "DIFFER", s1, s2, ref);

  const double t_stream =
      median_ms([&] { probe<kStream><<<blocks, threads>>>(nnz, n, dcol, dval, dx, dout); });
  const double t_gather =
      median_ms([&] { probe<kGather><<<blocks, threads>>>(nnz, n, dcol, dval, dx, dout); });
  const double t_pop =
      median_ms([&] { probe<kGather><<<blocks, threads>>>(nnz, n, dcolp, dval, dxp, dout); });
  const double t_seq =
      median_ms([&] { probe<kGatherSeq><<<blocks, threads>>>(nnz, n, dcol, dval, dx, dout); });

  // cuSPARSE SpMV, same matrix, y = A x
  cusparseHandle_t h;
  CK(cusparseCreate(&h));
  cusparseSpMatDescr_t mA;
  cusparseDnVecDescr_t vx, vy;
  CK(cusparseCreateCsr(&mA, m, n, nnz, drp, dcol, dval, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                       CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
  CK(cusparseCreateDnVec(&vx, n, dx, CUDA_R_64F));
  CK(cusparseCreateDnVec(&vy, m, dy, CUDA_R_64F));
  const double one = 1, zero = 0;
  double t_cs[2];
  const cusparseSpMVAlg_t algs[2] = {CUSPARSE_SPMV_CSR_ALG1, CUSPARSE_SPMV_CSR_ALG2};
  for (int a = 0; a < 2; a++) {
    size_t sz = 0;
    void *buf = nullptr;
    CK(cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mA, vx, &zero, vy,
                               CUDA_R_64F, algs[a], &sz));
    CK(cudaMalloc(&buf, sz + 1));
    CK(cusparseSpMV_preprocess(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mA, vx, &zero, vy,
                               CUDA_R_64F, algs[a], buf));
    t_cs[a] = median_ms([&] {
      CK(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mA, vx, &zero, vy, CUDA_R_64F,
                      algs[a], buf));
    });
    CK(cudaFree(buf));
  }
  const double best = std::min(t_cs[0], t_cs[1]);
  printf("cuSPARSE SpMV ALG1 %.1f us, ALG2 %.1f us; 1.3x of the better needs <= %.1f us\n",
         t_cs[0] * 1e3, t_cs[1] * 1e3, best * 1e3 / 1.3);
  printf("stream only      %7.1f us  (A: %.1f MB)\n", t_stream * 1e3, nnz * 12e-6);
  printf("stream + gather  %7.1f us  (user's column order)\n", t_gather * 1e3);
  printf("stream + gather  %7.1f us  (columns renumbered by popularity)\n", t_pop * 1e3);
  printf("stream + x seq   %7.1f us  (x read in order)\n", t_seq * 1e3);
  CK(cusparseDestroySpMat(mA));
  CK(cusparseDestroyDnVec(vx));
  CK(cusparseDestroyDnVec(vy));
  CK(cusparseDestroy(h));
  for (void *p : {(void *)dcol, (void *)dcolp, (void *)drp, (void *)dval, (void *)dx, (void *)dxp,
                  (void *)dy, (void *)dout})
    CK(cudaFree(p));
  return ok ? 0 : 1;
}
