/* Merge-based CSR SpMM ([YANG18], section 4.2, on the merge-path partition of Merrill and
 * Garland that the SpMV kernel uses): Y = alpha*A*X + beta*Y with an equal share of the merge
 * path (row ends + nonzeros) per CTA, whatever the row lengths (power-law hubs included).
 *
 * CTA c owns the path items [c*TILE, (c+1)*TILE) (TILE = COAL_MERGE_ITEMS = 896, the host
 * twin's part; tile starts computed once per structure, coal_cuda_merge_workspace). It loads
 * the tile's column indices, values and row ends into shared memory (coalesced, streaming),
 * then splits the tile among NG = 128/W groups of W lanes, IPG = TILE/NG items each. A group
 * finds its start by binary search in shared memory and walks its items row by row: the
 * nonzeros of a row are processed U at a time (U = 16/V for k <= 32 on vector loads, else
 * 8/V) with their X loads in flight (lane l owns columns l*V .. l*V+V-1 of a tile of TW = W*V
 * columns, one coalesced read of an X row per nonzero on row-major blocks); a row end stores
 * y = alpha*sum + beta*y (beta == 0: not read). The first row a group ends may have started in
 * earlier groups: it is stored after a barrier, with their partial sums (shared memory) added;
 * the row still open at the end of the tile leaves the CTA as its carry-out (row, k partial
 * sums in double), which a fix-up kernel adds into Y with atomics after every row has been
 * stored (stream order), as the twin's fix-up pass does. For k > TW the groups walk their items
 * again for each further tile of columns (A stays in shared memory). W = smallest power of two
 * >= k/V in [1, 32]: for k = 1 every thread walks 7 items, as the SpMV kernel.
 *
 * Traffic: A streamed once (nnz*(sizeof(T)+4) + 4*nrows), X rows gathered (k*sizeof(T) per
 * nonzero), Y written once (read when beta != 0); per CTA 8 bytes of partition and 4+8k bytes
 * of carry-out, i.e. about (8k+12)/896 bytes per path item.
 */
#include "spmm_util.cuh"

using namespace coal_spmm_dev;

namespace {

constexpr int kThreads = COAL_MERGE_THREADS;
constexpr int kTile = COAL_MERGE_ITEMS;

template <typename T, int W, int V, bool XROW, int UB>
__global__ __launch_bounds__(kThreads) void mg_kernel(
    const int32_t *__restrict__ row_end, const int32_t *__restrict__ col, const T *__restrict__ val,
    const T *__restrict__ x, int64_t ldx, T *__restrict__ y, int64_t ldy, bool yrow, bool yvec,
    int k, const int32_t *__restrict__ prow, const int32_t *__restrict__ pnz,
    int32_t *__restrict__ carry_row, double *__restrict__ carry, double alpha, double beta) {
  constexpr int TW = W * V, NG = kThreads / W, IPG = kTile / NG;
  constexpr int U = V >= UB ? 1 : UB / V; /* nonzeros whose X loads are in flight together */
  static_assert(kTile % NG == 0, "tile not divisible among groups");
  __shared__ int32_t s_col[kTile];
  __shared__ T s_val[kTile];
  __shared__ int32_t s_end[kTile];
  __shared__ double s_tval[NG * TW]; /* partial sums of the row open at each group's end */
  __shared__ int32_t s_trow[NG];     /* that row, -1 if none */
  __shared__ uint8_t s_closed[NG];   /* the group ended at least one row */

  const int tid = (int)threadIdx.x, c = (int)blockIdx.x;
  const int32_t row0 = prow[c], nz0 = pnz[c];
  const int rows_t = prow[c + 1] - row0, nnz_t = pnz[c + 1] - nz0;
  const int items = rows_t + nnz_t;
  for (int e = tid; e < nnz_t; e += kThreads) {
    s_col[e] = coal_ld_stream(col + nz0 + e);
    s_val[e] = coal_ld_stream(val + nz0 + e);
  }
  for (int i = tid; i < rows_t; i += kThreads) s_end[i] = __ldg(row_end + row0 + i) - nz0;
  __syncthreads();

  const int g = tid / W, lane = tid % W;
  const int d0 = g * IPG < items ? g * IPG : items;
  const int d1 = d0 + IPG < items ? d0 + IPG : items;
  int lo = d0 > nnz_t ? d0 - nnz_t : 0, hi = d0 < rows_t ? d0 : rows_t;
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if (s_end[mid] <= d0 - mid - 1)
      lo = mid + 1;
    else
      hi = mid;
  }
  const int r_start = lo, z_start = d0 - lo;
  const int32_t head_row = row0 + r_start;
  const int last = (items - 1) / IPG; /* last group holding items (items >= 1) */

  /* column tiles: blockIdx.y takes every gridDim.y-th one (uniform over the CTA) */
  for (int j0 = (int)blockIdx.y * TW; j0 < k; j0 += (int)gridDim.y * TW) {
    const int j = j0 + lane * V;
    const bool in = j < k;
    double acc[V], head[V];
#pragma unroll
    for (int v = 0; v < V; v++) acc[v] = 0, head[v] = 0;
    bool closed = false, open = false;
    int r = r_start, z = z_start, d = d0;
    int end_r = r < rows_t ? s_end[r] : INT32_MAX;
    while (d < d1) {
      /* nonzeros of row r inside this group's range, then (if inside) the row's end */
      const int zs = end_r < z + (d1 - d) ? end_r : z + (d1 - d);
      for (int zz = z; zz < zs; zz += U) {
        double a[U], xv[U][V];
#pragma unroll
        for (int u = 0; u < U; u++) {
          a[u] = 0;
#pragma unroll
          for (int v = 0; v < V; v++) xv[u][v] = 0;
          if (zz + u < zs && in) {
            a[u] = (double)s_val[zz + u];
            load_x<T, V, XROW, false>(x, ldx, s_col[zz + u], j, xv[u]);
          }
        }
#pragma unroll
        for (int u = 0; u < U; u++)
          if (zz + u < zs)
#pragma unroll
            for (int v = 0; v < V; v++) acc[v] += a[u] * xv[u][v];
      }
      if (zs > z) open = true;
      d += zs - z;
      z = zs;
      if (d < d1) { /* row end of r */
        if (closed) {
          if (in) store_y<T, V>(y, ldy, yrow, yvec, row0 + r, j, k, acc, alpha, beta);
        } else {
#pragma unroll
          for (int v = 0; v < V; v++) head[v] = acc[v];
          closed = true;
        }
#pragma unroll
        for (int v = 0; v < V; v++) acc[v] = 0;
        open = false;
        r++, d++;
        end_r = r < rows_t ? s_end[r] : INT32_MAX;
      }
    }
    if (lane == 0) {
      s_trow[g] = open ? row0 + r : -1;
      s_closed[g] = closed;
    }
#pragma unroll
    for (int v = 0; v < V; v++) s_tval[g * TW + lane * V + v] = acc[v];
    __syncthreads();
    if (closed) { /* first row ended here: add the partial sums of the groups before */
      for (int u = g - 1; u >= 0 && s_trow[u] == head_row; u--) {
#pragma unroll
        for (int v = 0; v < V; v++) head[v] += s_tval[u * TW + lane * V + v];
        if (s_closed[u]) break;
      }
      if (in) store_y<T, V>(y, ldy, yrow, yvec, head_row, j, k, head, alpha, beta);
    }
    if (g == last) { /* the row open at the end of the tile: carry-out */
      const int32_t cr = s_trow[last];
      double tot[V];
#pragma unroll
      for (int v = 0; v < V; v++) tot[v] = 0;
      if (cr >= 0)
        for (int u = last; u >= 0 && s_trow[u] == cr; u--) {
#pragma unroll
          for (int v = 0; v < V; v++) tot[v] += s_tval[u * TW + lane * V + v];
          if (s_closed[u]) break;
        }
      if (lane == 0 && j0 == 0) carry_row[c] = cr;
#pragma unroll
      for (int v = 0; v < V; v++)
        if (j + v < k) carry[(int64_t)c * k + j + v] = tot[v];
    }
    __syncthreads(); /* s_trow / s_tval are rewritten by the next tile */
  }
}

/* Y[carry_row[c], j] += alpha * carry[c, j] for the first n tiles (the last never carries). */
template <typename T>
__global__ void mg_fixup_kernel(int32_t n, int k, const int32_t *__restrict__ carry_row,
                                const double *__restrict__ carry, T *__restrict__ y, int64_t ldy,
                                bool yrow, double alpha) {
  const int64_t total = (int64_t)n * k;
  for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total;
       e += (int64_t)gridDim.x * blockDim.x) {
    const int64_t c = e / k, j = e % k;
    const int32_t r = carry_row[c];
    if (r < 0) continue;
    atomicAdd(y + (yrow ? (int64_t)r * ldy + j : (int64_t)r + j * ldy), (T)(alpha * carry[e]));
  }
}

struct mg_args {
  int32_t nctas;
  const int32_t *row_end, *col, *prow, *pnz;
  int32_t *carry_row;
  double *carry;
  const void *val, *x;
  void *y;
  int64_t ldx, ldy;
  bool yrow, yvec;
  int k;
  unsigned ny; /* CTAs over column tiles */
  double alpha, beta;
};

template <typename T, int W, int V, bool XROW, int UB>
void launch_ub(coal_ctx ctx, const mg_args &a) {
  mg_kernel<T, W, V, XROW, UB><<<dim3((unsigned)a.nctas, a.ny), kThreads, 0, coal_stream(ctx)>>>(
      a.row_end, a.col, (const T *)a.val, (const T *)a.x, a.ldx, (T *)a.y, a.ldy, a.yrow, a.yvec,
      a.k, a.prow, a.pnz, a.carry_row, a.carry, a.alpha, a.beta);
}

/* Elements of X in flight per lane: 16 for k <= 32 on vector loads of a row-major X, else 8
 * (16 faster up to k = 32, 8 at k = 128: bench/RESULTS.md, rule mg-ub). The MG_UB knob (8 or
 * 16) overrides. */
template <typename T, int W, int V, bool XROW> coal_status launch(coal_ctx ctx, const mg_args &a) {
  const int knob = coal_spmm_knob(ctx, COAL_SPMM_TUNE_MG_UB);
  const int ub = knob == 8 || knob == 16 ? knob : a.k <= 32 ? 16 : 8;
  if (XROW && V > 1 && ub == 16)
    launch_ub<T, W, V, XROW, 16>(ctx, a);
  else
    launch_ub<T, W, V, XROW, 8>(ctx, a);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  return COAL_SUCCESS;
}

template <typename T, int V, bool XROW>
coal_status launch_w(coal_ctx ctx, const mg_args &a, int w) {
  switch (w) {
  case 1: return launch<T, 1, V, XROW>(ctx, a);
  case 2: return launch<T, 2, V, XROW>(ctx, a);
  case 4: return launch<T, 4, V, XROW>(ctx, a);
  case 8: return launch<T, 8, V, XROW>(ctx, a);
  case 16: return launch<T, 16, V, XROW>(ctx, a);
  default: return launch<T, 32, V, XROW>(ctx, a);
  }
}

/* Carry-out sums for max(k, COAL_SPMM_CARRY_MIN_K) columns of every tile: allocated at the
 * first product (or the first with a larger k), then reused. */
coal_status carry_workspace(coal_ctx ctx, struct coal_merge_dev *m, int64_t k) {
  if (m->spmm_carry && m->spmm_carry_k >= k) return COAL_SUCCESS;
  const int64_t kc = k > COAL_SPMM_CARRY_MIN_K ? k : COAL_SPMM_CARRY_MIN_K;
  coal_cuda_free(m->spmm_carry);
  m->spmm_carry = NULL, m->spmm_carry_k = 0;
  COAL_CALL(coal_cuda_malloc(ctx, sizeof(double) * (size_t)m->merge_ctas * (size_t)kc,
                             (void **)&m->spmm_carry));
  m->spmm_carry_k = kc;
  return COAL_SUCCESS;
}

template <typename T>
coal_status merge(coal_mat A, struct coal_mat_cuda *d, double alpha, coal_bvec X, double beta,
                  coal_bvec Y) {
  coal_ctx ctx = A->ctx;
  struct coal_merge_dev *m = NULL;
  COAL_CALL(coal_cuda_merge_workspace(A, d, &m));
  COAL_CALL(carry_workspace(ctx, m, X->k));
  const bool xrow = X->layout == COAL_ROW_MAJOR;
  mg_args a;
  a.nctas = m->merge_ctas, a.row_end = d->rowptr + 1, a.col = d->colind;
  a.prow = m->merge_row, a.pnz = m->merge_nz, a.carry_row = m->carry_row, a.carry = m->spmm_carry;
  a.val = d->values, a.x = X->data, a.y = Y->data, a.ldx = X->ld, a.ldy = Y->ld;
  a.yrow = Y->layout == COAL_ROW_MAJOR;
  a.k = (int)X->k, a.alpha = alpha, a.beta = beta;
  const int v = xrow ? vec_width(X, sizeof(T)) : 1;
  int w = pow2_clamp((a.k + v - 1) / v, 1, 32);
  /* few tiles: narrower groups (more groups per tile, more column tiles over gridDim.y) until
   * the GPU has target CTAs; a group then walks fewer items */
  const int64_t target = (int64_t)ctx->cuda->sm_count * 16;
  while (w > 4 && (int64_t)a.nctas * ((a.k + w * v - 1) / (w * v)) < target) w /= 2;
  int64_t ny = (a.k + w * v - 1) / (w * v), want = (target + a.nctas - 1) / a.nctas;
  ny = ny < want ? ny : want;
  a.ny = (unsigned)(ny < 1 ? 1 : ny < 65535 ? ny : 65535);
  a.yvec = v > 1 && vec_width(Y, sizeof(T)) >= v;
  coal_status st;
  if (!xrow)
    st = launch_w<T, 1, false>(ctx, a, w);
  else if (v == 1)
    st = launch_w<T, 1, true>(ctx, a, w);
  else
    st = launch_w<T, 16 / sizeof(T), true>(ctx, a, w);
  if (st != COAL_SUCCESS || a.nctas <= 1) return st;
  const int64_t n = (int64_t)(a.nctas - 1) * a.k;
  const int64_t g = (n + COAL_CUDA_CTA - 1) / COAL_CUDA_CTA,
                cap = (int64_t)ctx->cuda->sm_count * 16;
  mg_fixup_kernel<T><<<(unsigned)(g < cap ? g : cap), COAL_CUDA_CTA, 0, coal_stream(ctx)>>>(
      a.nctas - 1, a.k, a.carry_row, a.carry, (T *)a.y, a.ldy, a.yrow, alpha);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  return COAL_SUCCESS;
}

} // namespace

coal_status coal_spmm_merge_cuda(coal_mat A, double alpha, coal_bvec X, double beta, coal_bvec Y) {
  if (!A) return COAL_ERR_ARG;
  if (A->nrows == 0 || X->k == 0) return COAL_SUCCESS;
  struct coal_mat_cuda *d = NULL;
  COAL_CALL(coal_cuda_mat(A, &d));
  return A->dtype == COAL_F64 ? merge<double>(A, d, alpha, X, beta, Y)
                              : merge<float>(A, d, alpha, X, beta, Y);
}
