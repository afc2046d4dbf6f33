// Lower bounds for SpMM on the power-law matrix at k = 32 (issue 3), the analogue of
// gather_probe.cu for blocks: how long the GPU needs just to stream A's indices and values and
// to gather one row of a row-major X (n x 32 doubles, 256 bytes a row) per nonzero, with perfect
// load balance (a group of 16 lanes, 16 bytes a lane, takes every T-th chunk of 16 nonzeros,
// eight rows of X in flight) and nothing else (no row offsets, no segment sums, no Y). A kernel
// that reads X's row once per nonzero (row-split, merge-based, cuSPARSE's CSR algorithms) can be
// no faster than "stream + gather". Measured next to cuSPARSE SpMM (CSR ALG2 and ALG3 on
// row-major blocks, preprocessed) on the same matrix in the same process:
//   stream        sum of val[p] * col[p]                        (A's bytes only)
//   gather        sum of val[p] * X[col[p], :]                  (the user's column order)
//   gather-pop    the same with columns renumbered by popularity (most used first)
//   gather-seq    sum of val[p] * X[q % n, :], q = p / 16       (X read in order, one row a
//                                                                chunk: after the first, from L1)
// Matrix: coal_gen_powerlaw(2^20 rows, mean 12, gamma 2.5, seed 1), as `coalesce bench spmm`.
// Built with CUDA and -Dprobes=true as build/bench/gather_rows_probe (not installed).
#include <cusparse.h>

#include "probe_powerlaw.h"

#include <cmath>
#include <cstdint>

constexpr int kK = 32;         /* columns of X */
constexpr int kLanes = kK / 2; /* lanes of a group: one double2 each */
enum { kStream = 0, kGather = 1, kGatherSeq = 2 };

/* Group g takes the chunks q = g, g + T, ... of kLanes consecutive nonzeros: lane l loads entry
 * kLanes*q + l (coalesced), the group broadcasts the chunk's entries with shuffles (as the
 * row-split and merge-based kernels do) and has eight rows of X in flight at a time. n is a
 * power of two (the seq mode's row is q & (n - 1)). */
template <int MODE>
__global__ __launch_bounds__(256) void probe(int64_t nnz, int n, const int *__restrict__ col,
                                             const double *__restrict__ val,
                                             const double2 *__restrict__ x,
                                             double *__restrict__ out) {
  const int64_t gid = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / kLanes;
  const int lane = (int)(threadIdx.x % kLanes);
  const int64_t T = (int64_t)gridDim.x * blockDim.x / kLanes;
  const int64_t nchunks = (nnz + kLanes - 1) / kLanes;
  double a0 = 0, a1 = 0;
  /* uniform over the warp: its two groups run the same number of chunks (rounded up) */
  const int64_t wq = gid - gid % (32 / kLanes);
  for (int64_t q = gid; wq + (q - gid) < nchunks; q += T) {
    const int64_t e = q * kLanes + lane;
    const bool on = q < nchunks && e < nnz;
    const int mc = on ? __ldcs(col + e) : 0;
    const double mv = on ? __ldcs(val + e) : 0.0;
#pragma unroll
    for (int u0 = 0; u0 < kLanes; u0 += 8) {
      double v[8];
      double2 xv[8];
#pragma unroll
      for (int u = 0; u < 8; u++) {
        const int c = __shfl_sync(0xffffffffu, mc, u0 + u, kLanes);
        v[u] = __shfl_sync(0xffffffffu, mv, u0 + u, kLanes);
        if (MODE == kStream) xv[u] = make_double2((double)c, (double)lane);
        if (MODE == kGather) xv[u] = __ldg(x + (int64_t)c * kLanes + lane);
        if (MODE == kGatherSeq) xv[u] = __ldg(x + (q & (int64_t)(n - 1)) * kLanes + lane);
      }
#pragma unroll
      for (int u = 0; u < 8; u++) a0 += v[u] * xv[u].x, a1 += v[u] * xv[u].y;
    }
  }
  out[(int64_t)blockIdx.x * blockDim.x + threadIdx.x] = a0 + a1;
}

int main() {
  const probe_powerlaw P = probe_powerlaw_load();
  const int64_t m = P.m, n = P.n, nnz = P.nnz;
  const std::vector<int> &col = P.col, &rank = P.rank;
  const std::vector<double> &val = P.val;
  if ((n & (n - 1)) != 0) return 1; /* the seq mode masks with n - 1 */
  // X, its copy with rows in the popularity order and the matching column indices, row sums
  std::vector<double> x((size_t)n * kK), xp(x.size()), rowsum(n, 0.0);
  for (size_t i = 0; i < x.size(); i++) x[i] = (double)((i * 2654435761u) % 1000) / 1000.0 - 0.5;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < kK; j++) {
      xp[(size_t)rank[i] * kK + j] = x[(size_t)i * kK + j];
      rowsum[i] += x[(size_t)i * kK + j];
    }
  std::vector<int> colp(nnz);
  for (int64_t p = 0; p < nnz; p++) colp[p] = rank[col[p]];

  const int threads = 256, blocks = 132 * 8;
  int *dcol = probe_upload(col), *dcolp = probe_upload(colp), *drp = probe_upload(P.rp);
  double *dval = probe_upload(val), *dx = probe_upload(x), *dxp = probe_upload(xp);
  double *dy, *dout;
  const size_t xb = 8 * x.size(), yb = 8 * (size_t)m * kK;
  CK(cudaMalloc(&dy, yb));
  CK(cudaMalloc(&dout, 8 * (size_t)threads * blocks));

  // check: both gathers give the host's sum over all nonzeros of val * (sum of X's row)
  double ref = 0, mag = 0;
  for (int64_t p = 0; p < nnz; p++) ref += val[p] * rowsum[col[p]], mag += fabs(val[p]) * 16;
  const size_t nout = (size_t)threads * blocks;
  auto total = [&]() { return probe_sum(dout, nout); };
  const double2 *x2 = (const double2 *)dx, *xp2 = (const double2 *)dxp;
  CK(cudaMemset(dout, 0xff, 8 * nout)); /* NaN: a thread that writes nothing shows */
  probe<kGather><<<blocks, threads>>>(nnz, (int)n, dcol, dval, x2, dout);
  const double s1 = total();
  CK(cudaMemset(dout, 0xff, 8 * nout));
  probe<kGather><<<blocks, threads>>>(nnz, (int)n, dcolp, dval, xp2, dout);
  const double s2 = total();
  const double tol = 1e-12 * mag;
  const bool ok = fabs(s1 - ref) <= tol && fabs(s2 - ref) <= tol;
  printf("power-law n %lld nnz %lld, k %d: gather sums %s (%.12g %.12g, host %.12g)\n",
         (long long)n, (long long)nnz, kK, ok ? "agree" : "DIFFER", s1, s2, ref);

  const double t_stream =
      median_ms([&] { probe<kStream><<<blocks, threads>>>(nnz, (int)n, dcol, dval, x2, dout); });
  const double t_gather =
      median_ms([&] { probe<kGather><<<blocks, threads>>>(nnz, (int)n, dcol, dval, x2, dout); });
  const double t_pop =
      median_ms([&] { probe<kGather><<<blocks, threads>>>(nnz, (int)n, dcolp, dval, xp2, dout); });
  const double t_seq =
      median_ms([&] { probe<kGatherSeq><<<blocks, threads>>>(nnz, (int)n, dcol, dval, x2, dout); });

  // cuSPARSE SpMM, same matrix, Y = A X on row-major blocks
  cusparseHandle_t h;
  CK(cusparseCreate(&h));
  cusparseSpMatDescr_t mA;
  cusparseDnMatDescr_t mX, mY;
  CK(cusparseCreateCsr(&mA, m, n, nnz, drp, dcol, dval, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                       CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
  CK(cusparseCreateDnMat(&mX, n, kK, kK, dx, CUDA_R_64F, CUSPARSE_ORDER_ROW));
  CK(cusparseCreateDnMat(&mY, m, kK, kK, dy, CUDA_R_64F, CUSPARSE_ORDER_ROW));
  const double one = 1, zero = 0;
  double t_cs[2];
  const cusparseSpMMAlg_t algs[2] = {CUSPARSE_SPMM_CSR_ALG2, CUSPARSE_SPMM_CSR_ALG3};
  const cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;
  for (int a = 0; a < 2; a++) {
    size_t sz = 0;
    void *buf = nullptr;
    CK(cusparseSpMM_bufferSize(h, op, op, &one, mA, mX, &zero, mY, CUDA_R_64F, algs[a], &sz));
    CK(cudaMalloc(&buf, sz + 1));
    CK(cusparseSpMM_preprocess(h, op, op, &one, mA, mX, &zero, mY, CUDA_R_64F, algs[a], buf));
    t_cs[a] = median_ms(
        [&] { CK(cusparseSpMM(h, op, op, &one, mA, mX, &zero, mY, CUDA_R_64F, algs[a], buf)); });
    CK(cudaFree(buf));
  }
  const double best = std::min(t_cs[0], t_cs[1]);
  printf("cuSPARSE SpMM ALG2 %.1f us, ALG3 %.1f us; 2.5x of the better needs <= %.1f us\n",
         t_cs[0] * 1e3, t_cs[1] * 1e3, best * 1e3 / 2.5);
  printf("stream only      %7.1f us  (A: %.1f MB)\n", t_stream * 1e3, nnz * 12e-6);
  printf("stream + gather  %7.1f us  (user's column order; X rows of %d bytes, %.1f MB)\n",
         t_gather * 1e3, 8 * kK, xb * 1e-6);
  printf("stream + gather  %7.1f us  (columns renumbered by popularity)\n", t_pop * 1e3);
  printf("stream + X seq   %7.1f us  (one row of X a chunk of 16, in order: no gather)\n",
         t_seq * 1e3);
  CK(cusparseDestroySpMat(mA));
  CK(cusparseDestroyDnMat(mX));
  CK(cusparseDestroyDnMat(mY));
  CK(cusparseDestroy(h));
  for (void *p : {(void *)dcol, (void *)dcolp, (void *)drp, (void *)dval, (void *)dx, (void *)dxp,
                  (void *)dy, (void *)dout})
    CK(cudaFree(p));
  return ok ? 0 : 1;
}
