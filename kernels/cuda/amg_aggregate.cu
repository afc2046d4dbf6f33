/* AMG setup on the GPU: the distance-2 maximal independent set and the aggregates; CUDA twins
 * of kernels/host/amg_aggregate.c (kernels/amg.h defines the rounds and the passes).
 *
 * MIS round = two launches. Sweep 1 (fresh priorities) is folded into sweep 2: an undecided
 * vertex's priority is a function of (vertex, round), so low_kernel computes a neighbour's
 * priority from its id whatever state it reads (the old priority or the new one); it also
 * writes each undecided vertex's new priority. decide_kernel reads only low and the vertex's
 * own state, as on the host. The rounds run in batches of kBatch with one download of the
 * batch's undecided counts: a round after the last is a no-op (no undecided vertex), and the
 * first round whose count is 0 gives the host's number of rounds. Traffic per round: the graph
 * read twice, state and low gathered per edge. */
#include "amg_util.cuh"

using namespace coal_amg_dev;

namespace {

constexpr int kBatch = 4;

__device__ __forceinline__ bool undecided(uint64_t s) {
  return s != COAL_AMG_IN && s != COAL_AMG_OUT;
}

__device__ __forceinline__ uint64_t priority(int32_t v, int round) {
  const uint32_t h = coal_amg_hash((uint32_t)v + 0x9E3779B9U * (uint32_t)(round + 1));
  return (((uint64_t)h << 32) | (uint32_t)v) + 1;
}

__global__ void init_kernel(int32_t n, uint64_t *state) {
  const int32_t v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < n) state[v] = COAL_AMG_OUT - 1;
}

__global__ void low_kernel(int32_t n, int round, const int32_t *__restrict__ rp,
                           const int32_t *__restrict__ ci, uint64_t *state,
                           uint64_t *__restrict__ low) {
  const int32_t v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n) return;
  uint64_t m = state[v];
  if (undecided(m)) {
    m = priority(v, round);
    state[v] = m;
  }
  for (int32_t p = rp[v]; p < rp[v + 1]; p++) {
    const int32_t w = ci[p];
    uint64_t s = state[w];
    if (undecided(s)) s = priority(w, round);
    m = s < m ? s : m;
  }
  low[v] = m;
}

__global__ void decide_kernel(int32_t n, const int32_t *__restrict__ rp,
                              const int32_t *__restrict__ ci, uint64_t *__restrict__ state,
                              const uint64_t *__restrict__ low, unsigned *left) {
  const int32_t v = blockIdx.x * blockDim.x + threadIdx.x;
  int still = 0;
  if (v < n) {
    const uint64_t sv = state[v];
    if (undecided(sv)) {
      uint64_t m = low[v];
      for (int32_t p = rp[v]; p < rp[v + 1]; p++) {
        const uint64_t s = low[ci[p]];
        m = s < m ? s : m;
      }
      if (m == COAL_AMG_IN)
        state[v] = COAL_AMG_OUT;
      else if (m == sv)
        state[v] = COAL_AMG_IN;
      else
        still = 1;
    }
  }
  const unsigned c = __syncthreads_count(still);
  if (threadIdx.x == 0 && c) atomicAdd(left, c);
}

/* agg[v] = 1 for a root, 0 otherwise (scanned next) */
__global__ void root_flag_kernel(int32_t n, const uint64_t *__restrict__ state,
                                 int32_t *__restrict__ agg) {
  const int32_t v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < n) agg[v] = state[v] == COAL_AMG_IN;
}

/* from the inclusive scan: roots numbered in order, others -1; then pass 1 in a second launch */
__global__ void root_number_kernel(int32_t n, const uint64_t *__restrict__ state,
                                   int32_t *__restrict__ agg) {
  const int32_t v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < n) agg[v] = state[v] == COAL_AMG_IN ? agg[v] - 1 : -1;
}

__global__ void pass1_kernel(int32_t n, const int32_t *__restrict__ rp,
                             const int32_t *__restrict__ ci, const uint64_t *__restrict__ state,
                             int32_t *agg) {
  const int32_t v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n || state[v] == COAL_AMG_IN) return;
  for (int32_t p = rp[v]; p < rp[v + 1]; p++) {
    const int32_t w = ci[p];
    if (state[w] == COAL_AMG_IN) {
      agg[v] = agg[w]; /* a root's number, written by the previous launch */
      break;
    }
  }
}

/* Reads pass-1 results only: a vertex written in this pass holds -2 - a < 0, as unassigned
 * ones (-1) do, and both are skipped, whichever a racing read sees. */
__global__ void pass2_kernel(int32_t n, const int32_t *__restrict__ rp,
                             const int32_t *__restrict__ ci, const double *__restrict__ sval,
                             int32_t *agg, unsigned *orphans) {
  const int32_t v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n || agg[v] != -1) return;
  int32_t best = -1;
  double bs = 0.0;
  for (int32_t p = rp[v]; p < rp[v + 1]; p++) {
    const int32_t a = agg[ci[p]];
    if (a < 0) continue;
    const double s = sval ? sval[p] : 0.0;
    if (best < 0 || s > bs || (s == bs && a < best)) best = a, bs = s;
  }
  if (best < 0) atomicAdd(orphans, 1u);
  agg[v] = -2 - best;
}

__global__ void final_kernel(int32_t n, int32_t *agg) {
  const int32_t v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < n && agg[v] < -1) agg[v] = -2 - agg[v];
}

} // namespace

extern "C" {

coal_status coal_amg_mis2_cuda(coal_ctx ctx, int32_t n, const int32_t *srowptr,
                               const int32_t *scolind, uint64_t *state, uint64_t *low,
                               int *rounds) {
  *rounds = 0;
  if (n <= 0) return COAL_SUCCESS;
  cudaStream_t s = coal_stream(ctx);
  unsigned *left = NULL, h[kBatch];
  COAL_CALL(coal_cuda_pool_alloc(ctx, sizeof(unsigned) * kBatch, (void **)&left));
  coal_status st = COAL_SUCCESS;
  init_kernel<<<grid(n), kCta, 0, s>>>(n, state);
  cudaError_t e = cudaGetLastError();
  /* each round decides at least one vertex: at most n rounds */
  for (int r0 = 0; e == cudaSuccess && st == COAL_SUCCESS; r0 += kBatch) {
    e = cudaMemsetAsync(left, 0, sizeof(unsigned) * kBatch, s);
    for (int b = 0; b < kBatch && e == cudaSuccess; b++) {
      low_kernel<<<grid(n), kCta, 0, s>>>(n, r0 + b, srowptr, scolind, state, low);
      decide_kernel<<<grid(n), kCta, 0, s>>>(n, srowptr, scolind, state, low, left + b);
      e = cudaGetLastError();
    }
    if (e != cudaSuccess) break;
    st = fetch(ctx, h, left, sizeof h);
    int done = -1;
    for (int b = 0; b < kBatch && done < 0; b++)
      if (h[b] == 0) done = b;
    if (st == COAL_SUCCESS && done >= 0) {
      *rounds = r0 + done + 1;
      break;
    }
    if (st == COAL_SUCCESS && r0 > n)
      st = COAL_ERROR(ctx, COAL_ERR_STATE, "distance-2 MIS did not finish in %d rounds", n);
  }
  coal_cuda_pool_free(ctx, left);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return COAL_ERROR(ctx, COAL_ERR_CUDA, "distance-2 MIS: %s", cudaGetErrorString(e));
  }
  return st;
}

coal_status coal_amg_aggregate_cuda(coal_ctx ctx, int32_t n, const int32_t *srowptr,
                                    const int32_t *scolind, const double *sval,
                                    const uint64_t *state, int32_t *agg, int32_t *nagg) {
  *nagg = 0;
  if (n <= 0) return COAL_SUCCESS;
  cudaStream_t s = coal_stream(ctx);
  root_flag_kernel<<<grid(n), kCta, 0, s>>>(n, state, agg);
  COAL_AMG_LAUNCHED(ctx);
  COAL_CALL(scan_inplace(ctx, agg, n));
  unsigned *orphans = NULL;
  COAL_CALL(coal_cuda_pool_alloc(ctx, sizeof(unsigned) * 2, (void **)&orphans));
  coal_status st = COAL_SUCCESS;
  cudaError_t e = cudaMemcpyAsync(orphans + 1, agg + n - 1, sizeof(int32_t),
                                  cudaMemcpyDeviceToDevice, s); /* the number of roots */
  if (e == cudaSuccess) e = cudaMemsetAsync(orphans, 0, sizeof(unsigned), s);
  if (e == cudaSuccess) {
    root_number_kernel<<<grid(n), kCta, 0, s>>>(n, state, agg);
    pass1_kernel<<<grid(n), kCta, 0, s>>>(n, srowptr, scolind, state, agg);
    pass2_kernel<<<grid(n), kCta, 0, s>>>(n, srowptr, scolind, sval, agg, orphans);
    final_kernel<<<grid(n), kCta, 0, s>>>(n, agg);
    e = cudaGetLastError();
  }
  unsigned h[2] = {0, 0};
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    st = COAL_ERROR(ctx, COAL_ERR_CUDA, "aggregation: %s", cudaGetErrorString(e));
  } else {
    st = fetch(ctx, h, orphans, sizeof h);
  }
  coal_cuda_pool_free(ctx, orphans);
  if (st) return st;
  COAL_CHECK(ctx, h[0] == 0, COAL_ERR_ARG,
             "aggregation: %u vertices have no aggregate next to them (the strength graph is "
             "not symmetric, or the set is not its distance-2 MIS)",
             h[0]);
  *nagg = (int32_t)h[1];
  return COAL_SUCCESS;
}

} // extern "C"
