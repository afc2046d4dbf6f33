/* CSR SpMV by merge-path [MERGEPATH]: every thread gets the same number of items of the
 * merge of the row ends (nrows items) with the nonzeros (nnz items), whatever the row lengths.
 *
 * Thread t of the grid owns items [t*IPT, (t+1)*IPT) of the path (IPT =
 * COAL_MERGE_ITEMS_PER_THREAD), the same partition as the host twin; a CTA of
 * COAL_MERGE_THREADS threads owns one tile of TILE = IPT*THREADS consecutive items.
 *
 *  1. Tile starts (path coordinates (row, nz) at diagonals c*TILE) depend only on the
 *     structure: computed once at first use by merge_partition_kernel and kept.
 *  2. merge_kernel, per CTA: loads the tile's nonzeros with coalesced streaming loads and
 *     stores the products val*x[col] in shared memory (all gathers of x in flight at once),
 *     loads the tile's row ends, then each thread finds its start inside the tile with the
 *     same binary search as coal_merge_path_search (restricted to the tile) and walks its IPT
 *     items: a row that ends in its range is written y[row] = alpha*sum + beta*y[row]
 *     (beta == 0: no read), where sum holds the nonzeros of that row the thread saw. Partial
 *     sums of rows that cross thread boundaries are combined in shared memory: the thread
 *     that ends a row adds the partial sums of the preceding threads of the CTA that stopped
 *     inside that row. Only the row still open at the end of the tile leaves the CTA, as a
 *     carry-out (carry_row[c], carry_val[c]; row -1 if none).
 *  3. merge_fixup_kernel adds alpha*carry_val[c] into y[carry_row[c]] with atomics, after
 *     every row has been written once (stream order). A row spanning several tiles gets one
 *     carry per tile.
 *
 * Memory traffic per product: nnz*(sizeof(T)+4) matrix bytes streamed once (coalesced,
 * evict-first); 4*nrows row ends read once; x gathered (>= sizeof(T)*ncols); y written once
 * (and read once when beta != 0); per tile 8 bytes of partition and 4+sizeof(T) of carry
 * written and read: about 20/896 bytes per item, negligible.
 */
#include "cuda_internal.h"

namespace {

constexpr int kThreads = COAL_MERGE_THREADS;
constexpr int kItems = COAL_MERGE_ITEMS_PER_THREAD;
constexpr int kTile = COAL_MERGE_TILE;

/* Device twin of coal_merge_path_search: the number of row ends (row) and nonzeros (nz)
 * before diagonal d of the merge. Row end i precedes nonzero j when row_end[i] <= j. */
__device__ __forceinline__ void merge_path_search(int64_t diagonal, const int32_t *row_end,
                                                  int32_t nrows, int64_t nnz, int32_t *row_out,
                                                  int64_t *nz_out) {
  int64_t lo = diagonal > nnz ? diagonal - nnz : 0;
  int64_t hi = diagonal < nrows ? diagonal : nrows;
  while (lo < hi) {
    int64_t mid = (lo + hi) >> 1;
    if ((int64_t)row_end[mid] <= diagonal - mid - 1)
      lo = mid + 1;
    else
      hi = mid;
  }
  *row_out = (int32_t)lo;
  *nz_out = diagonal - lo;
}

__global__ void merge_partition_kernel(int32_t nctas, int32_t nrows, int64_t nnz,
                                       const int32_t *__restrict__ row_end, int32_t *prow,
                                       int32_t *pnz) {
  int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (c > nctas) return;
  int64_t total = (int64_t)nrows + nnz;
  int64_t d = c * kTile < total ? c * kTile : total;
  int32_t r;
  int64_t z;
  merge_path_search(d, row_end, nrows, nnz, &r, &z);
  prow[c] = r;
  pnz[c] = (int32_t)z;
}

template <typename T>
__global__ __launch_bounds__(kThreads) void merge_kernel(
    const int32_t *__restrict__ row_end, const int32_t *__restrict__ col, const T *__restrict__ val,
    const T *__restrict__ x, T *__restrict__ y, const int32_t *__restrict__ prow,
    const int32_t *__restrict__ pnz, int32_t *__restrict__ carry_row,
    double *__restrict__ carry_val, double alpha, double beta) {
  /* sums in double for both dtypes, as the host twin */
  __shared__ double s_prod[kTile];    /* products of the tile's nonzeros */
  __shared__ int32_t s_end[kTile];    /* row ends of the tile's rows, relative to nz0 */
  __shared__ double s_tval[kThreads]; /* partial sum of the row open at each thread's end */
  __shared__ int32_t s_trow[kThreads];
  __shared__ uint8_t s_closed[kThreads];

  const int tid = threadIdx.x, c = blockIdx.x;
  const int32_t row0 = prow[c], nz0 = pnz[c];
  const int rows_t = prow[c + 1] - row0, nnz_t = pnz[c + 1] - nz0;
  const int items = rows_t + nnz_t;

  /* 1. coalesced loads of the tile: all val/col first, then all x gathers */
  {
    int32_t cc[kItems];
    T vv[kItems];
#pragma unroll
    for (int k = 0; k < kItems; k++) {
      const int e = tid + k * kThreads;
      cc[k] = 0, vv[k] = 0;
      if (e < nnz_t) {
        cc[k] = coal_ld_stream(col + nz0 + e);
        vv[k] = coal_ld_stream(val + nz0 + e);
      }
    }
#pragma unroll
    for (int k = 0; k < kItems; k++) {
      const int e = tid + k * kThreads;
      if (e < nnz_t) s_prod[e] = (double)vv[k] * coal_ld_ro(x + cc[k]);
    }
#pragma unroll
    for (int k = 0; k < kItems; k++) {
      const int i = tid + k * kThreads;
      if (i < rows_t) s_end[i] = coal_ld_ro(row_end + row0 + i) - nz0;
    }
  }
  __syncthreads();

  /* 2. this thread's items [d0, d1) of the tile; start by binary search in shared memory */
  const int d0 = tid * kItems < items ? tid * kItems : items;
  const int d1 = d0 + kItems < items ? d0 + kItems : items;
  int lo = d0 > nnz_t ? d0 - nnz_t : 0, hi = d0 < rows_t ? d0 : rows_t;
  while (lo < hi) {
    int mid = (lo + hi) >> 1;
    if (s_end[mid] <= d0 - mid - 1)
      lo = mid + 1;
    else
      hi = mid;
  }
  int r = lo, z = d0 - lo;
  const int32_t head_row = row0 + r;
  double sum = 0, head = 0;
  bool closed = false, open = false;
  int end_r = r < rows_t ? s_end[r] : INT32_MAX; /* end of row r, kept in a register */
#pragma unroll
  for (int k = 0; k < kItems; k++) {
    if (d0 + k < d1) {
      if (end_r <= z) { /* row end */
        if (closed) {
          const int32_t row = row0 + r;
          y[row] = (T)(beta == 0.0 ? alpha * sum : alpha * sum + beta * (double)y[row]);
        } else {
          head = sum; /* first row ended here: written after the carries are known */
          closed = true;
        }
        sum = 0, open = false, r++;
        end_r = r < rows_t ? s_end[r] : INT32_MAX;
      } else {
        sum += s_prod[z];
        z++, open = true;
      }
    }
  }
  s_trow[tid] = open ? row0 + r : -1;
  s_tval[tid] = sum;
  s_closed[tid] = closed;
  __syncthreads();

  /* 3. the first row this thread ended also collects the partial sums of the preceding threads
   * that stopped inside it (a chain that ends at a thread which ended an earlier row) */
  if (closed) {
    double acc = 0;
    for (int u = tid - 1; u >= 0 && s_trow[u] == head_row; u--) {
      acc += s_tval[u];
      if (s_closed[u]) break;
    }
    acc += head;
    y[head_row] = (T)(beta == 0.0 ? alpha * acc : alpha * acc + beta * (double)y[head_row]);
  }
  /* the row open at the end of the tile leaves as the CTA's carry-out */
  const int last = (items - 1) / kItems;
  if (tid == last) {
    const int32_t cr = s_trow[last];
    double acc = 0;
    if (cr >= 0)
      for (int u = last; u >= 0 && s_trow[u] == cr; u--) {
        acc += s_tval[u];
        if (s_closed[u]) break;
      }
    carry_row[c] = cr;
    carry_val[c] = acc;
  }
}

template <typename T>
__global__ void merge_fixup_kernel(int32_t n, const int32_t *__restrict__ carry_row,
                                   const double *__restrict__ carry_val, T *__restrict__ y,
                                   double alpha) {
  const int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= n) return;
  const int32_t r = carry_row[c];
  if (r >= 0) atomicAdd(y + r, (T)(alpha * carry_val[c]));
}

} // namespace

static void merge_dev_free(coal_ctx ctx, void *p) {
  (void)ctx;
  struct coal_merge_dev *m = (struct coal_merge_dev *)p;
  coal_cuda_free(m->merge_row), coal_cuda_free(m->merge_nz);
  coal_cuda_free(m->carry_row), coal_cuda_free(m->carry_val);
  coal_cuda_free(m->spmm_carry);
  coal_free(m);
}

/* Tile starts and carry arrays, sized once per structure and kept in A's cache (structure
 * only: new values keep them; they go with the device copy). */
coal_status coal_cuda_merge_workspace(coal_mat A, struct coal_mat_cuda *d,
                                      struct coal_merge_dev **out) {
  *out = (struct coal_merge_dev *)coal_mat_format_get(A, COAL_FMT_CUDA_MERGE);
  if (*out) return COAL_SUCCESS;
  coal_ctx ctx = A->ctx;
  const int64_t total = (int64_t)A->nrows + A->nnz;
  const int64_t nctas = (total + kTile - 1) / kTile;
  COAL_CHECK(ctx, nctas < INT32_MAX, COAL_ERR_OVERFLOW, "merge path of %lld items too long",
             (long long)total);
  const size_t n1 = (size_t)nctas + 1;
  struct coal_merge_dev *m = NULL;
  COAL_CALL(coal_calloc(ctx, sizeof *m, (void **)&m));
  coal_status st = COAL_SUCCESS;
  COAL_CALL_GOTO(st, coal_cuda_malloc(ctx, sizeof(int32_t) * n1, (void **)&m->merge_row), fail);
  COAL_CALL_GOTO(st, coal_cuda_malloc(ctx, sizeof(int32_t) * n1, (void **)&m->merge_nz), fail);
  COAL_CALL_GOTO(st, coal_cuda_malloc(ctx, sizeof(int32_t) * n1, (void **)&m->carry_row), fail);
  COAL_CALL_GOTO(st, coal_cuda_malloc(ctx, sizeof(double) * n1, (void **)&m->carry_val), fail);
  merge_partition_kernel<<<coal_cuda_grid((int64_t)n1, COAL_CUDA_CTA), COAL_CUDA_CTA, 0,
                           coal_stream(ctx)>>>((int32_t)nctas, A->nrows, A->nnz, d->rowptr + 1,
                                               m->merge_row, m->merge_nz);
  {
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
      st = COAL_ERROR(ctx, COAL_ERR_CUDA, "merge_partition_kernel: %s", cudaGetErrorString(e));
      goto fail;
    }
  }
  m->merge_ctas = (int32_t)nctas;
  COAL_CALL(coal_mat_format_put(A, COAL_FMT_CUDA_MERGE, COAL_FORMAT_DEVICE, m, merge_dev_free));
  *out = m;
  return COAL_SUCCESS;
fail:
  merge_dev_free(ctx, m);
  return st;
}

namespace {

template <typename T>
coal_status launch(coal_mat A, const struct coal_mat_cuda *d, const struct coal_merge_dev *m,
                   double alpha, const void *x, double beta, void *y) {
  coal_ctx ctx = A->ctx;
  cudaStream_t s = coal_stream(ctx);
  const int32_t nctas = m->merge_ctas;
  merge_kernel<T><<<(unsigned)nctas, kThreads, 0, s>>>(
      d->rowptr + 1, d->colind, (const T *)d->values, (const T *)x, (T *)y, m->merge_row,
      m->merge_nz, m->carry_row, (double *)m->carry_val, alpha, beta);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  /* the last tile ends with the last row end: it never carries */
  if (nctas > 1) {
    merge_fixup_kernel<T><<<coal_cuda_grid(nctas - 1, COAL_CUDA_CTA), COAL_CUDA_CTA, 0, s>>>(
        nctas - 1, m->carry_row, (const double *)m->carry_val, (T *)y, alpha);
    COAL_CUDA_LAUNCH_CHECK(ctx);
  }
  return COAL_SUCCESS;
}

} // namespace

coal_status coal_spmv_csr_merge_cuda(coal_mat A, double alpha, const void *x, double beta,
                                     void *y) {
  if (!A) return COAL_ERR_ARG;
  if (A->nrows == 0) return COAL_SUCCESS;
  struct coal_mat_cuda *d = NULL;
  COAL_CALL(coal_cuda_mat(A, &d));
  struct coal_merge_dev *m = NULL;
  COAL_CALL(coal_cuda_merge_workspace(A, d, &m));
  return A->dtype == COAL_F64 ? launch<double>(A, d, m, alpha, x, beta, y)
                              : launch<float>(A, d, m, alpha, x, beta, y);
}
