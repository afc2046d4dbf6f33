// The power-law matrix of the gather probes (gather_probe.cu, gather_rows_probe.cu):
// coal_gen_powerlaw(2^20 rows, mean 12, gamma 2.5, seed 1), as `coalesce bench spmv` and
// `coalesce bench spmm` use it, as host CSR arrays with each column's rank by popularity (most
// used first), and an upload helper.
#pragma once
#include "coalesce.h"
#include "probe_util.h"

#include <cstdint>

struct probe_powerlaw {
  int64_t m, n, nnz;
  std::vector<int> rp, col, rank;
  std::vector<double> val;
};

static probe_powerlaw probe_powerlaw_load() {
  coal_ctx ctx;
  coal_mat A;
  CK(coal_ctx_create(COAL_BACKEND_HOST, &ctx));
  CK(coal_gen_powerlaw(ctx, 1 << 20, 12.0, 2.5, 1, COAL_F64, &A));
  probe_powerlaw P;
  CK(coal_mat_size(A, &P.m, &P.n, &P.nnz));
  std::vector<int64_t> rp64(P.m + 1);
  P.rp.resize(P.m + 1), P.col.resize(P.nnz), P.val.resize(P.nnz), P.rank.resize(P.n);
  CK(coal_mat_get_csr(A, rp64.data(), P.col.data(), P.val.data()));
  for (int64_t i = 0; i <= P.m; i++) P.rp[i] = (int)rp64[i];
  std::vector<int64_t> cnt(P.n, 0);
  for (int64_t p = 0; p < P.nnz; p++) cnt[P.col[p]]++;
  std::vector<int> order(P.n);
  for (int i = 0; i < P.n; i++) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return cnt[a] > cnt[b]; });
  for (int i = 0; i < P.n; i++) P.rank[order[i]] = i;
  coal_mat_destroy(&A);
  coal_ctx_destroy(&ctx);
  return P;
}

/* A device copy of h (checked). */
template <class T> static T *probe_upload(const std::vector<T> &h) {
  T *d = nullptr;
  CK(cudaMalloc(&d, sizeof(T) * h.size() + 1));
  CK(cudaMemcpy(d, h.data(), sizeof(T) * h.size(), cudaMemcpyHostToDevice));
  return d;
}

/* The sum of the n doubles at d (device), on the host. */
static double probe_sum(const double *d, size_t n) {
  std::vector<double> h(n);
  CK(cudaMemcpy(h.data(), d, 8 * n, cudaMemcpyDeviceToHost));
  double s = 0;
  for (double v : h) s += v;
  return s;
}
