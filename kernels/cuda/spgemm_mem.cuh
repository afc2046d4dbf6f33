/* Pieces shared by the row-wise products on the GPU (spgemm_rows.cu, spgemm_ptap.cu): error
 * mapping, grid sizes, the products' pool memory with its held / peak count, the scan
 * workspace, and the shared-memory hash insertion. */
#ifndef COAL_CUDA_SPGEMM_MEM_CUH
#define COAL_CUDA_SPGEMM_MEM_CUH

#include "../spgemm.h"
#include "cuda_internal.h"

#include <cub/block/block_reduce.cuh>
#include <cub/device/device_scan.cuh>

namespace coal_spgemm_dev {

constexpr int kEmpty = -1; /* an empty slot of a hash table */

/* Memory a product holds now and at most (stats.temp_bytes), and its scan workspace. */
struct Held {
  size_t held, peak;
  void *scan_tmp;
  size_t scan_bytes;
};

static inline unsigned grid_of(int64_t n, int per) {
  int64_t g = (n + per - 1) / per;
  return (unsigned)(g < 1 ? 1 : g > 65535 * 64 ? 65535 * 64 : g);
}

static inline coal_status cuda_status(coal_ctx ctx, cudaError_t e, const char *what) {
  if (e == cudaSuccess) return COAL_SUCCESS;
  (void)cudaGetLastError();
  return COAL_ERROR(ctx, e == cudaErrorMemoryAllocation ? COAL_ERR_DEVICE_MEMORY : COAL_ERR_CUDA,
                    "%s: %s", what, cudaGetErrorString(e));
}
/* Phase boundaries of the symbolic passes: nothing in the library; the probe's own copy of
 * these files is compiled with COAL_SPGEMM_TRACE and calls its hook there (spgemm_trace.h). */
#ifdef COAL_SPGEMM_TRACE
#include "spgemm_trace.h"
#define TRACE(ctx, what) coal_spgemm_trace_phase((ctx), (what))
#else
#define TRACE(ctx, what) ((void)0)
#endif
#define LAUNCHED(ctx, what)                                                                        \
  COAL_CALL(coal_spgemm_dev::cuda_status((ctx), cudaGetLastError(), (what)))

/* From the context's stream-ordered pool (no device-wide wait on release), counted. */
static inline coal_status ralloc(coal_ctx ctx, Held *h, size_t bytes, void **p) {
  COAL_CALL(coal_cuda_pool_alloc(ctx, bytes, p));
  h->held += bytes;
  if (h->held > h->peak) h->peak = h->held;
  return COAL_SUCCESS;
}
static inline void rfree(coal_ctx ctx, Held *h, void **p, size_t bytes) {
  if (!*p) return;
  coal_cuda_pool_free(ctx, *p);
  *p = NULL;
  h->held -= bytes < h->held ? bytes : h->held;
}

/* Exclusive scan of n int32 with the product's workspace (grown when needed). */
static inline coal_status rscan(coal_ctx ctx, Held *h, const int32_t *in, int32_t *out, int64_t n) {
  size_t bytes = 0;
  cudaStream_t s = coal_stream(ctx);
  COAL_CHECK(ctx, n <= INT32_MAX, COAL_ERR_OVERFLOW, "scan of %lld items", (long long)n);
  COAL_CALL(
      cuda_status(ctx, cub::DeviceScan::ExclusiveSum(nullptr, bytes, in, out, (int)n, s), "scan"));
  if (bytes > h->scan_bytes) {
    rfree(ctx, h, &h->scan_tmp, h->scan_bytes);
    h->scan_bytes = 0;
    COAL_CALL(ralloc(ctx, h, bytes, &h->scan_tmp));
    h->scan_bytes = bytes;
  }
  bytes = h->scan_bytes;
  return cuda_status(ctx, cub::DeviceScan::ExclusiveSum(h->scan_tmp, bytes, in, out, (int)n, s),
                     "scan");
}

__device__ __forceinline__ unsigned hash_of(int j, int ts) {
  return ((unsigned)j * 2654435761u) & (unsigned)(ts - 1);
}

/* Inserts j into keys[ts] (ts a power of two, never full); returns its slot and sets *fresh
 * when this call put it there. Every probe is an atomic compare-and-swap (no plain read races
 * with another lane's insertion). */
__device__ __forceinline__ int insert(int *keys, int ts, int j, bool *fresh) {
  unsigned s = hash_of(j, ts);
  while (true) {
    const int old = atomicCAS(&keys[s], kEmpty, j);
    if (old == kEmpty || old == j) {
      *fresh = old == kEmpty;
      return (int)s;
    }
    s = (s + 1) & (unsigned)(ts - 1);
  }
}

/* The current device CSR of the product's operands p->A and p->B (uploaded if needed). */
static inline coal_status device_operands(coal_spgemm p, struct coal_mat_cuda **a,
                                          struct coal_mat_cuda **b) {
  COAL_CALL(coal_mat_prepare_cuda(p->A));
  COAL_CALL(coal_mat_prepare_cuda(p->B));
  COAL_CALL(coal_cuda_mat(p->A, a));
  return coal_cuda_mat(p->B, b);
}

/* Sorts keys[0 .. n) ascending in place: a bitonic network over the next power of two (keys
 * has room for it; the padding is INT32_MAX), run by `lanes` lanes of which this is `lane`;
 * sync() orders the steps among them. */
template <typename Sync>
__device__ __forceinline__ void bitonic_sort(int *keys, int n, int lane, int lanes, Sync sync) {
  int np = 1;
  while (np < n) np *= 2;
  for (int t = n + lane; t < np; t += lanes) keys[t] = INT32_MAX;
  sync();
  for (int k = 2; k <= np; k *= 2) {
    for (int j = k / 2; j > 0; j /= 2) {
      for (int t = lane; t < np / 2; t += lanes) {
        const int lo = 2 * t - (t & (j - 1)), hi = lo + j; /* lo has bit j clear */
        const int x = keys[lo], y = keys[hi];
        if ((x > y) == ((lo & k) == 0)) keys[lo] = y, keys[hi] = x;
      }
      sync();
    }
  }
}

/* Number of set bits of bm[0 .. nwords) over a CTA of CTA threads, which also clears them;
 * the count is valid on thread 0. */
template <int CTA> __device__ __forceinline__ int count_clear_bits(unsigned *bm, int32_t nwords) {
  typedef cub::BlockReduce<int, CTA> Reduce;
  __shared__ typename Reduce::TempStorage tmp;
  int c = 0;
  for (int32_t w = threadIdx.x; w < nwords; w += blockDim.x) {
    c += __popc(bm[w]);
    bm[w] = 0u;
  }
  return Reduce(tmp).Sum(c);
}

} // namespace coal_spgemm_dev

#endif
