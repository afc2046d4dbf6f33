/* FastLoad formats built on the GPU from the device CSR (kernels/fastload.h documents the format,
 * kernels/host/fastload_build.c (coal_fastload_build_host) is the host twin: the arrays built here
 * are bit-identical to its arrays, and the gather schedule to coal_fastload_schedule_host's).
 *
 * Lane structure: the CSR of A for the gather format, its CSC for the scatter format. The CSC
 * is a stable radix sort of the CSR positions by column (rows stay ascending inside each
 * column, as with the host's counting-sort transpose), column pointers from the sorted keys,
 * and the row of every CSR position; the element pass reads each entry's row and value through
 * its CSR position. Then, all on the context's stream:
 *  1. keys = nnz - count per lane; a stable radix sort with the lane ids as values gives the
 *     lanes by count, descending and stable (values: perm, keys: the sorted counts).
 *  2. A warp per 32-lane group (count pass): the group's staircase is known in closed form.
 *     With c_j the sorted counts (non-increasing) and c_32 = 0, lane j "owns" the rounds
 *     [c_{j+1}, c_j): they form ceil((c_j - c_{j+1}) / H) blocks of j+1 lanes (heights H, ...,
 *     H, remainder), and the group's blocks are these intervals for j = 31 down to 0. Blocks,
 *     elements, gather tasks and prescale rows per group, plus the identity test.
 *  3. One exclusive scan over the groups gives every group's first block, element, task and
 *     prescale row, and (extra zero item at the end) the totals: the only host read.
 *  4. A warp per group writes the block descriptors, the gather tasks and the prescale rows; a
 *     warp per block copies its elements (lane l reads its lane's entries from rounds r0.. and
 *     writes them at blk_ptr + r*len + l) and, for scatter, seg (segment runs with a ballot)
 *     and the class.
 * Temporaries live in one workspace allocated per build; the format lives in one arena
 * (struct coal_fastload_dev.arena). The whole build, allocations included, is timed with
 * events into build_ms. */
#include "../bench.h"
#include "cuda_internal.h"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace {

constexpr int kWarpsPerCta = COAL_CUDA_CTA / 32;
constexpr int kRounds = COAL_FLT_TASK_ROUNDS;

/* Per-group quantities; scanned exclusively over the groups they become offsets. */
struct GroupTot {
  int32_t blocks, elems, tasks, pre, nonid;
};

struct GroupTotSum {
  __host__ __device__ GroupTot operator()(const GroupTot &a, const GroupTot &b) const {
    return GroupTot{a.blocks + b.blocks, a.elems + b.elems, a.tasks + b.tasks, a.pre + b.pre,
                    a.nonid + b.nonid};
  }
};

__device__ __forceinline__ int ceil_div(int a, int b) { return a / b + (a % b != 0); }

__device__ __forceinline__ int warp_sum(int v) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(COAL_FULL_MASK, v, off);
  return v;
}

/* The group's lanes as seen by lane `lane` of its warp: count c (0 past the end), count of the
 * next lane cn (0 for the last), and the rounds this lane owns, d = c - cn. */
struct GroupLanes {
  int64_t s0;
  int len0, c, cn, d;
};

__device__ __forceinline__ GroupLanes group_lanes(int64_t g, int32_t nl, int c_in, int lane) {
  GroupLanes G;
  G.s0 = g * 32;
  G.len0 = nl - G.s0 < 32 ? (int)(nl - G.s0) : 32;
  G.c = c_in;
  G.cn = __shfl_down_sync(COAL_FULL_MASK, G.c, 1);
  if (lane == 31) G.cn = 0;
  G.d = G.c - G.cn;
  return G;
}

/* Gather: is the group stored by one warp without atomics (coal_fastload_schedule_host's "whole"
 * group, or its only block COMPLETE)? Non-store groups pre-scale all their lanes, store groups
 * their empty lanes. */
struct GroupStore {
  int nz; /* lanes with entries (a prefix) */
  int c0; /* largest count = rounds of the group */
  bool complete, store;
};

__device__ __forceinline__ GroupStore group_store(int c, int H) {
  GroupStore S;
  S.nz = __popc(__ballot_sync(COAL_FULL_MASK, c > 0));
  S.c0 = __shfl_sync(COAL_FULL_MASK, c, 0);
  const int clast = __shfl_sync(COAL_FULL_MASK, c, S.nz > 0 ? S.nz - 1 : 0);
  /* the single block at r0 = 0 holds every lane whole */
  S.complete = S.nz > 0 && S.c0 == clast && S.c0 <= H;
  S.store = S.nz > 0 && (S.c0 <= kRounds || S.complete);
  return S;
}

/* The gather schedule's greedy packing (coal_fastload_schedule_host): a task takes consecutive
 * blocks of the group while their rounds add up to at most kRounds (at least one block). The walk
 * is warp-uniform; run() adds m blocks of height hh, and with task != NULL the lanes write the
 * entries of the tasks that start in this run. */
struct TaskWalk {
  int open = 0, r = 0, nt = 0, b = 0; /* task open, its rounds, tasks so far, next block */

  __device__ void run(int m, int hh, int32_t *task, int32_t b_group, uint32_t flag, int lane) {
    if (m == 0) return;
    if (open && r + hh <= kRounds) {
      const int a = min(m, (kRounds - r) / hh);
      r += a * hh, m -= a, b += a;
      if (m == 0) return;
    }
    const int k = hh <= kRounds ? kRounds / hh : 1; /* blocks per new task */
    const int n = (m + k - 1) / k;
    if (task)
      for (int t = lane; t < n; t += 32)
        task[nt + t] = (int32_t)((uint32_t)(b_group + b + t * k) | flag);
    r = (m - (n - 1) * k) * hh, open = 1, nt += n, b += m;
  }
};

template <typename F> __device__ __forceinline__ void walk_group(int d, int H, F &&run) {
  for (int l = 31; l >= 0; l--) {
    const int dl = __shfl_sync(COAL_FULL_MASK, d, l);
    if (dl == 0) continue; /* uniform */
    run(dl / H, H);
    if (dl % H) run(1, dl % H);
  }
}

/* ---- lane structure of the scatter format: CSC of A ------------------------------------- */
__global__ void tr_init_kernel(int64_t nnz, const int32_t *__restrict__ colind,
                               uint32_t *__restrict__ keys, int32_t *__restrict__ vals) {
  for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < nnz;
       e += (int64_t)gridDim.x * blockDim.x) {
    keys[e] = (uint32_t)colind[e];
    vals[e] = (int32_t)e;
  }
}

/* cptr[c] = first sorted position of column c, from the sorted column keys. */
__global__ void tr_ptr_kernel(int64_t nnz, int32_t ncols, const uint32_t *__restrict__ skeys,
                              int32_t *__restrict__ cptr) {
  for (int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; q < nnz;
       q += (int64_t)gridDim.x * blockDim.x) {
    const int64_t k = skeys[q], kp = q > 0 ? (int64_t)skeys[q - 1] : -1;
    for (int64_t c = kp + 1; c <= k; c++) cptr[c] = (int32_t)q;
    if (q == nnz - 1)
      for (int64_t c = k + 1; c <= ncols; c++) cptr[c] = (int32_t)nnz;
  }
}

__global__ void tr_rowid_kernel(int32_t nrows, const int32_t *__restrict__ rowptr,
                                int32_t *__restrict__ rowid) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nrows;
       i += (int64_t)gridDim.x * blockDim.x)
    for (int32_t e = rowptr[i]; e < rowptr[i + 1]; e++) rowid[e] = (int32_t)i;
}

/* ---- FastLoad build ---------------------------------------------------------------------- */
__global__ void lane_keys_kernel(int32_t nl, uint32_t M, const int32_t *__restrict__ lptr,
                                 uint32_t *__restrict__ keys, int32_t *__restrict__ vals) {
  for (int64_t l = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; l < nl;
       l += (int64_t)gridDim.x * blockDim.x) {
    keys[l] = M - (uint32_t)(lptr[l + 1] - lptr[l]);
    vals[l] = (int32_t)l;
  }
}

/* Count pass, a warp per group. Turns the sorted keys into sorted counts in place. */
__global__ __launch_bounds__(COAL_CUDA_CTA) void group_count_kernel(
    int32_t nl, uint32_t M, int H, int gather, uint32_t *__restrict__ keys_cnt,
    const int32_t *__restrict__ perm, GroupTot *__restrict__ gin) {
  const int64_t g = ((int64_t)blockIdx.x * COAL_CUDA_CTA + threadIdx.x) >> 5;
  if (g >= ((int64_t)nl + 31) / 32) return; /* whole warp */
  const int lane = (int)(threadIdx.x & 31);
  const int64_t s0 = g * 32;
  int c = 0, p = 0;
  if (s0 + lane < nl) {
    c = (int)(M - keys_cnt[s0 + lane]);
    keys_cnt[s0 + lane] = (uint32_t)c;
    p = perm[s0 + lane];
  }
  const GroupLanes G = group_lanes(g, nl, c, lane);
  GroupTot t;
  t.blocks = warp_sum(ceil_div(G.d, H));
  t.elems = warp_sum(c);
  t.nonid = __popc(__ballot_sync(COAL_FULL_MASK, lane < G.len0 && p != s0 + lane));
  t.tasks = t.pre = 0;
  if (gather) {
    const GroupStore S = group_store(c, H);
    TaskWalk w;
    walk_group(G.d, H, [&](int m, int hh) { w.run(m, hh, nullptr, 0, 0u, lane); });
    t.tasks = w.nt;
    t.pre = S.store ? G.len0 - S.nz : G.len0;
  }
  if (lane == 0) gin[g] = t;
}

/* Fill pass, a warp per group: block descriptors (and the gather classes), gather tasks and
 * prescale rows. */
__global__ __launch_bounds__(COAL_CUDA_CTA) void group_fill_kernel(
    int32_t nl, int H, int gather, const int32_t *__restrict__ cnt,
    const int32_t *__restrict__ perm, const GroupTot *__restrict__ gout,
    int32_t *__restrict__ blk_ptr, int32_t *__restrict__ blk_col, uint8_t *__restrict__ blk_len,
    uint8_t *__restrict__ blk_height, uint8_t *__restrict__ blk_class, int32_t *__restrict__ task,
    int32_t *__restrict__ pre) {
  const int64_t g = ((int64_t)blockIdx.x * COAL_CUDA_CTA + threadIdx.x) >> 5;
  if (g >= ((int64_t)nl + 31) / 32) return; /* whole warp */
  const int lane = (int)(threadIdx.x & 31);
  const int64_t s0 = g * 32;
  const int c = s0 + lane < nl ? cnt[s0 + lane] : 0;
  const GroupLanes G = group_lanes(g, nl, c, lane);
  const GroupTot go = gout[g];
  /* blocks and elements of the intervals owned by the lanes after this one */
  const int nb = ceil_div(G.d, H), ne = (lane + 1) * G.d;
  int sb = nb, se = ne;
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    const int tb = __shfl_down_sync(COAL_FULL_MASK, sb, off);
    const int te = __shfl_down_sync(COAL_FULL_MASK, se, off);
    if (lane + off < 32) sb += tb, se += te;
  }
  sb -= nb, se -= ne;
  const GroupStore S = group_store(c, H);
  for (int l = 31; l >= 0; l--) {
    const int dl = __shfl_sync(COAL_FULL_MASK, G.d, l);
    const int bl = __shfl_sync(COAL_FULL_MASK, sb, l), el = __shfl_sync(COAL_FULL_MASK, se, l);
    const int cnl = __shfl_sync(COAL_FULL_MASK, G.cn, l), cl = __shfl_sync(COAL_FULL_MASK, c, l);
    if (dl == 0) continue; /* uniform */
    const int nbl = ceil_div(dl, H);
    const int cls = l + 1 < 32 ? COAL_FL_PARTIAL : 0;
    for (int k = lane; k < nbl; k += 32) {
      const int64_t b = (int64_t)go.blocks + bl + k;
      const int r0 = cnl + k * H, h = min(H, dl - k * H);
      blk_ptr[b] = go.elems + el + k * H * (l + 1);
      blk_col[b] = (int32_t)s0;
      blk_len[b] = (uint8_t)(l + 1);
      blk_height[b] = (uint8_t)h;
      if (gather)
        blk_class[b] = (uint8_t)(cls | (r0 == 0 && S.c0 == cl && S.c0 <= H ? COAL_FL_COMPLETE : 0));
    }
  }
  if (!gather) return;
  const uint32_t flag = S.store ? 0u : COAL_FLT_TASK_ATOMIC;
  TaskWalk w;
  walk_group(G.d, H, [&](int m, int hh) { w.run(m, hh, task + go.tasks, go.blocks, flag, lane); });
  if (lane < G.len0) {
    const int32_t p = perm[s0 + lane];
    if (!S.store)
      pre[go.pre + lane] = p;
    else if (lane >= S.nz)
      pre[go.pre + lane - S.nz] = p;
  }
}

/* Element pass, a warp per block. The block's first round r0 follows from its descriptor: the
 * block belongs to the interval of lane len-1, whose rounds start at cnext (count of lane len),
 * and whose elements start after sum_j min(c_j, cnext) elements of the group.
 * W: an unsigned word of the value size (values are copied bit for bit). SCATTER: the lanes
 * are the columns of A, lidx holds for each CSC position the CSR position e of the entry (row
 * rowid[e], value lval[e]), and seg and the class are computed; otherwise lidx and lval are
 * the lane structure's own arrays (CSR of A). */
template <typename W, bool SCATTER>
__global__ __launch_bounds__(COAL_CUDA_CTA) void fill_kernel(
    int32_t nblocks, int32_t nl, const int32_t *__restrict__ blk_ptr,
    const int32_t *__restrict__ blk_col, const uint8_t *__restrict__ blk_len,
    const uint8_t *__restrict__ blk_height, const int32_t *__restrict__ cnt,
    const int32_t *__restrict__ perm, const GroupTot *__restrict__ gout,
    const int32_t *__restrict__ lptr, const int32_t *__restrict__ lidx,
    const int32_t *__restrict__ rowid, const W *__restrict__ lval, int32_t *__restrict__ idx,
    W *__restrict__ val, uint8_t *__restrict__ seg, uint8_t *__restrict__ blk_class) {
  const int64_t b = ((int64_t)blockIdx.x * COAL_CUDA_CTA + threadIdx.x) >> 5;
  if (b >= nblocks) return; /* whole warp */
  const int lane = (int)(threadIdx.x & 31);
  const int32_t ptr = blk_ptr[b], s0 = blk_col[b];
  const int len = blk_len[b], h = blk_height[b];
  const int c = s0 + lane < nl ? cnt[s0 + lane] : 0;
  int cnext = __shfl_sync(COAL_FULL_MASK, c, len & 31);
  if (len == 32) cnext = 0;
  const int before = warp_sum(min(c, cnext));
  const int r0 = cnext + (ptr - gout[s0 >> 5].elems - before) / len;
  int64_t base = 0;
  if (lane < len) base = (int64_t)lptr[perm[s0 + lane]] + r0;
  bool runs = false;
  int seg0 = 0;
#pragma unroll 4
  for (int r = 0; r < h; r++) {
    const int64_t q = (int64_t)ptr + (int64_t)r * len + lane;
    int32_t x = -1 - lane; /* distinct from every index and every other idle lane */
    if (lane < len) {
      if (SCATTER) {
        const int32_t e = lidx[base + r];
        x = rowid[e];
        val[q] = lval[e];
      } else {
        x = lidx[base + r];
        val[q] = lval[base + r];
      }
      idx[q] = x;
    }
    if (SCATTER) {
      const int32_t nxt = __shfl_down_sync(COAL_FULL_MASK, x, 1);
      const unsigned brk = __ballot_sync(COAL_FULL_MASK, lane >= len - 1 || x != nxt);
      const int s = __ffs(brk >> lane); /* lanes to the end of the run, this one included */
      if (lane < len) {
        seg[q] = (uint8_t)s;
        runs |= s > 1;
      }
      if (r == 0) seg0 = __shfl_sync(COAL_FULL_MASK, s, 0);
    }
  }
  if (!SCATTER) return;
  const bool any_run = __any_sync(COAL_FULL_MASK, runs);
  if (lane == 0) {
    int cls = len < 32 ? COAL_FL_PARTIAL : 0;
    if (h == 1 && len > 1 && seg0 == len)
      cls |= COAL_FL_ONE_ROW;
    else
      cls |= any_run ? COAL_FL_SEGMENTED : COAL_FL_DISTINCT;
    blk_class[b] = (uint8_t)cls;
  }
}

__global__ void set_int_kernel(int32_t *p, int32_t v) { *p = v; }

/* ---- host side ------------------------------------------------------------------------------ */
size_t align256(size_t x) { return (x + 255) & ~(size_t)255; }

/* Carves consecutive 256-byte aligned pieces out of one allocation (base NULL: sizing only). */
struct Carver {
  char *base;
  size_t off;
  template <typename T> T *take(size_t count) {
    T *p = base ? (T *)(base + off) : nullptr;
    off += align256(sizeof(T) * count);
    return p;
  }
};

unsigned grid_stride(coal_ctx ctx, int64_t n) {
  const int64_t g = (n + COAL_CUDA_CTA - 1) / COAL_CUDA_CTA, cap = (int64_t)ctx->cuda->sm_count * 8;
  return (unsigned)(g < cap ? g : cap);
}

unsigned grid_warps(int64_t warps) { return (unsigned)((warps + kWarpsPerCta - 1) / kWarpsPerCta); }

int bit_length(uint64_t v) {
  int n = 0;
  while (v) n++, v >>= 1;
  return n;
}

/* Key bits of the two sorts: columns of A (0..ncols-1), nnz - count (0..nnz). */
int column_bits(coal_mat A) { return bit_length((uint64_t)(A->ncols > 1 ? A->ncols - 1 : 1)); }
int count_bits(uint32_t M) { return M > 0 ? bit_length(M) : 1; }

/* Everything one build holds; released by the caller. */
struct Build {
  coal_mat A;
  int transposed;
  void *ws; /* workspace, freed at the end of every build */
  cudaEvent_t ev0, ev1;
};

/* Workspace pieces. */
struct Work {
  void *cub_tmp;
  size_t cub_bytes;
  /* scatter: CSC of A (column pointers, CSR position of each entry, row of each CSR entry) */
  uint32_t *tk[2];
  int32_t *tv[2];
  int32_t *cptr;
  /* lane sort and groups */
  uint32_t *lk[2];
  int32_t *lv[2];
  GroupTot *gin, *gout;
};

coal_status carve_work(Build &B, int64_t nnz, int32_t nl, int64_t ngroups, Work &w) {
  coal_mat A = B.A;
  coal_ctx ctx = A->ctx;
  cudaStream_t s = coal_stream(ctx);
  const int scatter = !B.transposed;
  /* CUB temporary sizes (host-side queries, nothing runs) */
  size_t t_tr = 0, t_lane = 0, t_scan = 0;
  if (scatter && nnz > 0) {
    cub::DoubleBuffer<uint32_t> k(nullptr, nullptr);
    cub::DoubleBuffer<int32_t> v(nullptr, nullptr);
    COAL_CUDA_CALL(
        ctx, cub::DeviceRadixSort::SortPairs(nullptr, t_tr, k, v, (int)nnz, 0, column_bits(A), s));
  }
  if (nl > 0) {
    cub::DoubleBuffer<uint32_t> k(nullptr, nullptr);
    cub::DoubleBuffer<int32_t> v(nullptr, nullptr);
    COAL_CUDA_CALL(ctx, cub::DeviceRadixSort::SortPairs(nullptr, t_lane, k, v, nl, 0,
                                                        count_bits((uint32_t)nnz), s));
    COAL_CUDA_CALL(ctx, cub::DeviceScan::ExclusiveScan(
                            nullptr, t_scan, (GroupTot *)nullptr, (GroupTot *)nullptr,
                            GroupTotSum(), GroupTot{0, 0, 0, 0, 0}, (int)(ngroups + 1), s));
  }
  w.cub_bytes = t_tr > t_lane ? t_tr : t_lane;
  if (t_scan > w.cub_bytes) w.cub_bytes = t_scan;
  for (int pass = 0; pass < 2; pass++) {
    Carver cv{(char *)B.ws, 0};
    w.cub_tmp = cv.take<char>(w.cub_bytes);
    const size_t ntr = scatter ? (size_t)nnz : 0;
    w.tk[0] = cv.take<uint32_t>(ntr), w.tk[1] = cv.take<uint32_t>(ntr);
    w.tv[0] = cv.take<int32_t>(ntr), w.tv[1] = cv.take<int32_t>(ntr);
    w.cptr = cv.take<int32_t>(scatter ? (size_t)A->ncols + 1 : 0);
    w.lk[0] = cv.take<uint32_t>((size_t)nl), w.lk[1] = cv.take<uint32_t>((size_t)nl);
    w.lv[0] = cv.take<int32_t>((size_t)nl), w.lv[1] = cv.take<int32_t>((size_t)nl);
    w.gin = cv.take<GroupTot>((size_t)ngroups + 1);
    w.gout = cv.take<GroupTot>((size_t)ngroups + 1);
    if (pass == 0) COAL_CALL(coal_cuda_malloc(ctx, cv.off, &B.ws));
  }
  return COAL_SUCCESS;
}

/* CSC of A in the workspace: column pointers, for each CSC position the CSR position e of the
 * entry (rows ascending inside each column), and the row of every CSR position. */
coal_status transpose(Build &B, const struct coal_mat_cuda *d, Work &w, const int32_t **cptr,
                      const int32_t **src, const int32_t **rowid) {
  coal_mat A = B.A;
  coal_ctx ctx = A->ctx;
  cudaStream_t s = coal_stream(ctx);
  const int64_t nnz = A->nnz;
  *cptr = w.cptr, *src = w.tv[0], *rowid = (const int32_t *)w.tk[1];
  if (nnz == 0) {
    COAL_CUDA_CALL(ctx, cudaMemsetAsync(w.cptr, 0, sizeof(int32_t) * ((size_t)A->ncols + 1), s));
    return COAL_SUCCESS;
  }
  tr_init_kernel<<<grid_stride(ctx, nnz), COAL_CUDA_CTA, 0, s>>>(nnz, d->colind, w.tk[0], w.tv[0]);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  cub::DoubleBuffer<uint32_t> k(w.tk[0], w.tk[1]);
  cub::DoubleBuffer<int32_t> v(w.tv[0], w.tv[1]);
  size_t bytes = w.cub_bytes;
  COAL_CUDA_CALL(
      ctx, cub::DeviceRadixSort::SortPairs(w.cub_tmp, bytes, k, v, (int)nnz, 0, column_bits(A), s));
  tr_ptr_kernel<<<grid_stride(ctx, nnz), COAL_CUDA_CTA, 0, s>>>(nnz, A->ncols, k.Current(), w.cptr);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  int32_t *rid = (int32_t *)k.Alternate(); /* free after the sort */
  if (A->nrows > 0) {
    tr_rowid_kernel<<<grid_stride(ctx, A->nrows), COAL_CUDA_CTA, 0, s>>>(A->nrows, d->rowptr, rid);
    COAL_CUDA_LAUNCH_CHECK(ctx);
  }
  *src = v.Current(), *rowid = rid;
  return COAL_SUCCESS;
}

coal_status build_body(Build &B, struct coal_fastload_dev *out) {
  coal_mat A = B.A;
  coal_ctx ctx = A->ctx;
  cudaStream_t s = coal_stream(ctx);
  struct coal_mat_cuda *d = NULL;
  COAL_CALL(coal_cuda_mat(A, &d));
  const int gather = B.transposed, H = coal_fastload_height(A);
  COAL_CHECK(ctx, H >= 1 && H <= 255, COAL_ERR_ARG, "FastLoad height %d outside 1..255", H);
  const int32_t nl = gather ? A->nrows : A->ncols;
  const int64_t nnz = A->nnz, ngroups = ((int64_t)nl + 31) / 32;
  const size_t es = coal_dtype_size(A->dtype);
  COAL_CHECK(ctx, nnz <= INT32_MAX, COAL_ERR_OVERFLOW, "%lld nonzeros", (long long)nnz);
  out->nlanes = nl, out->nother = gather ? A->ncols : A->nrows, out->nnz = nnz;

  Work w;
  memset(&w, 0, sizeof w);
  COAL_CALL(carve_work(B, nnz, nl, ngroups, w));

  const int32_t *lptr = d->rowptr, *lidx = d->colind, *rowid = NULL;
  if (!gather) COAL_CALL(transpose(B, d, w, &lptr, &lidx, &rowid));

  /* 1. lanes by count, descending, stable */
  const uint32_t M = (uint32_t)nnz; /* every count is <= nnz */
  const int32_t *perm = w.lv[0];
  int32_t *cnt = (int32_t *)w.lk[0];
  GroupTot tot = {0, 0, 0, 0, 0};
  if (nl > 0) {
    lane_keys_kernel<<<grid_stride(ctx, nl), COAL_CUDA_CTA, 0, s>>>(nl, M, lptr, w.lk[0], w.lv[0]);
    COAL_CUDA_LAUNCH_CHECK(ctx);
    cub::DoubleBuffer<uint32_t> k(w.lk[0], w.lk[1]);
    cub::DoubleBuffer<int32_t> v(w.lv[0], w.lv[1]);
    size_t bytes = w.cub_bytes;
    COAL_CUDA_CALL(
        ctx, cub::DeviceRadixSort::SortPairs(w.cub_tmp, bytes, k, v, nl, 0, count_bits(M), s));
    perm = v.Current(), cnt = (int32_t *)k.Current();
    /* 2. per-group counts; 3. offsets and totals */
    group_count_kernel<<<grid_warps(ngroups), COAL_CUDA_CTA, 0, s>>>(nl, M, H, gather,
                                                                     (uint32_t *)cnt, perm, w.gin);
    COAL_CUDA_LAUNCH_CHECK(ctx);
    COAL_CUDA_CALL(ctx, cudaMemsetAsync(w.gin + ngroups, 0, sizeof(GroupTot), s));
    bytes = w.cub_bytes;
    COAL_CUDA_CALL(ctx,
                   cub::DeviceScan::ExclusiveScan(w.cub_tmp, bytes, w.gin, w.gout, GroupTotSum(),
                                                  GroupTot{0, 0, 0, 0, 0}, (int)(ngroups + 1), s));
    COAL_CUDA_CALL(ctx,
                   cudaMemcpyAsync(&tot, w.gout + ngroups, sizeof tot, cudaMemcpyDeviceToHost, s));
    COAL_CUDA_CALL(ctx, cudaStreamSynchronize(s));
  }
  COAL_CHECK(ctx, tot.elems == nnz && tot.blocks >= 0 && tot.tasks >= 0 && tot.pre >= 0,
             COAL_ERR_STATE, "internal: GPU FastLoad blocks hold %d elements, expected %lld",
             tot.elems, (long long)nnz);

  /* the format's arrays, in one arena */
  const size_t nb = (size_t)tot.blocks, nz = (size_t)nnz;
  for (int pass = 0; pass < 2; pass++) {
    Carver cv{(char *)out->arena, 0};
    out->val = cv.take<char>(nz * es);
    out->idx = cv.take<int32_t>(nz);
    out->perm = cv.take<int32_t>((size_t)nl);
    out->blk_ptr = cv.take<int32_t>(nb);
    out->blk_col = cv.take<int32_t>(nb);
    out->blk_len = cv.take<uint8_t>(nb);
    out->blk_height = cv.take<uint8_t>(nb);
    out->blk_class = cv.take<uint8_t>(nb);
    out->seg = gather ? nullptr : cv.take<uint8_t>(nz);
    out->task = gather ? cv.take<int32_t>((size_t)tot.tasks + 1) : nullptr;
    out->prescale = gather ? cv.take<int32_t>((size_t)tot.pre + 1) : nullptr;
    if (pass == 0) COAL_CALL(coal_cuda_malloc(ctx, cv.off, &out->arena));
  }
  out->nblocks = tot.blocks;
  out->identity_perm = tot.nonid == 0;
  out->ntasks = gather ? tot.tasks : 0;
  out->nprescale = gather ? tot.pre : 0;

  /* 4. descriptors, schedule, elements */
  if (nl > 0) {
    COAL_CUDA_CALL(ctx, cudaMemcpyAsync(out->perm, perm, sizeof(int32_t) * (size_t)nl,
                                        cudaMemcpyDeviceToDevice, s));
    group_fill_kernel<<<grid_warps(ngroups), COAL_CUDA_CTA, 0, s>>>(
        nl, H, gather, cnt, out->perm, w.gout, out->blk_ptr, out->blk_col, out->blk_len,
        out->blk_height, out->blk_class, out->task, out->prescale);
    COAL_CUDA_LAUNCH_CHECK(ctx);
  }
  if (nb > 0) {
    const unsigned grid = grid_warps((int64_t)nb);
#define COAL_FILL(W, SC)                                                                           \
  fill_kernel<W, SC><<<grid, COAL_CUDA_CTA, 0, s>>>(                                               \
      tot.blocks, nl, out->blk_ptr, out->blk_col, out->blk_len, out->blk_height, cnt, out->perm,   \
      w.gout, lptr, lidx, rowid, (const W *)d->values, out->idx, (W *)out->val, out->seg,          \
      out->blk_class)
    if (es == 8 && gather)
      COAL_FILL(uint64_t, false);
    else if (es == 8)
      COAL_FILL(uint64_t, true);
    else if (gather)
      COAL_FILL(uint32_t, false);
    else
      COAL_FILL(uint32_t, true);
#undef COAL_FILL
    COAL_CUDA_LAUNCH_CHECK(ctx);
  }
  if (gather) {
    set_int_kernel<<<1, 1, 0, s>>>(out->task + tot.tasks, tot.blocks);
    COAL_CUDA_LAUNCH_CHECK(ctx);
  }
  /* the workspace is released inside the timed region */
  COAL_CUDA_CALL(ctx, cudaStreamSynchronize(s));
  const cudaError_t fe = cudaFree(B.ws);
  B.ws = NULL;
  COAL_CUDA_CALL(ctx, fe);
  return COAL_SUCCESS;
}

} // namespace

coal_status coal_fastload_build_cuda(coal_mat A, int transposed, struct coal_fastload_dev *out) {
  if (!A || !out) return COAL_ERR_ARG;
  coal_ctx ctx = A->ctx;
  memset(out, 0, sizeof *out);
  Build B;
  memset(&B, 0, sizeof B);
  B.A = A, B.transposed = transposed;
  cudaStream_t s = coal_stream(ctx);
  COAL_CUDA_CALL(ctx, cudaEventCreate(&B.ev0));
  coal_status st = COAL_SUCCESS;
  cudaError_t e = cudaEventCreate(&B.ev1);
  if (e == cudaSuccess) e = cudaEventRecord(B.ev0, s);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    st = COAL_ERROR(ctx, COAL_ERR_CUDA, "FastLoad build events: %s", cudaGetErrorString(e));
  }
  if (st == COAL_SUCCESS) st = build_body(B, out);
  if (st == COAL_SUCCESS) {
    float ms = 0;
    e = cudaEventRecord(B.ev1, s);
    if (e == cudaSuccess) e = cudaEventSynchronize(B.ev1);
    if (e == cudaSuccess) e = cudaEventElapsedTime(&ms, B.ev0, B.ev1);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      st = COAL_ERROR(ctx, COAL_ERR_CUDA, "FastLoad build timing: %s", cudaGetErrorString(e));
    }
    out->build_ms = ms;
  }
  if (st != COAL_SUCCESS) {
    /* no kernel of this build may still use the memory being released */
    (void)cudaStreamSynchronize(s);
    coal_cuda_free(out->arena);
    memset(out, 0, sizeof *out);
  }
  coal_cuda_free(B.ws);
  if (B.ev0) (void)cudaEventDestroy(B.ev0);
  if (B.ev1) (void)cudaEventDestroy(B.ev1);
  (void)cudaGetLastError();
  return st;
}

/* ---- test and benchmark hooks (kernels/bench.h) -------------------------------------------- */
coal_status coal_cuda_fastload_download(coal_mat A, int transposed, coal_fastload **out,
                                        int32_t **task, int32_t *ntasks, int32_t **prescale,
                                        int32_t *nprescale) {
  if (!A || !out) return COAL_ERR_ARG;
  coal_ctx ctx = A->ctx;
  *out = NULL;
  COAL_CHECK(ctx, ctx->backend == COAL_BACKEND_CUDA, COAL_ERR_ARG, "needs a CUDA matrix");
  COAL_CALL(coal_mat_prepare_cuda(A));
  const struct coal_fastload_dev *fd = NULL;
  COAL_CALL(coal_cuda_fastload_upload(A, transposed, &fd));
  coal_fastload *f = NULL;
  int32_t *t = NULL, *p = NULL;
  coal_status st;
  const size_t nl = (size_t)fd->nlanes, nb = (size_t)fd->nblocks, nz = (size_t)fd->nnz;
  const size_t es = coal_dtype_size(A->dtype);
  COAL_CALL(coal_calloc(ctx, sizeof *f, (void **)&f));
  f->nlanes = fd->nlanes, f->nother = fd->nother, f->height_limit = coal_fastload_height(A);
  f->identity_perm = fd->identity_perm, f->nblocks = fd->nblocks, f->nnz = fd->nnz;
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * nl, (void **)&f->perm), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * nb, (void **)&f->blk_ptr), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * nb, (void **)&f->blk_col), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, nb, (void **)&f->blk_len), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, nb, (void **)&f->blk_height), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, nb, (void **)&f->blk_class), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * nz, (void **)&f->idx), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, es * nz, &f->val), fail);
  if (fd->seg) COAL_CALL_GOTO(st, coal_malloc(ctx, nz, (void **)&f->seg), fail);
  if (transposed) {
    COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * ((size_t)fd->ntasks + 1), (void **)&t),
                   fail);
    COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * ((size_t)fd->nprescale + 1), (void **)&p),
                   fail);
  }
  {
    struct {
      void *dst;
      const void *src;
      size_t bytes;
    } cp[] = {{f->perm, fd->perm, sizeof(int32_t) * nl},
              {f->blk_ptr, fd->blk_ptr, sizeof(int32_t) * nb},
              {f->blk_col, fd->blk_col, sizeof(int32_t) * nb},
              {f->blk_len, fd->blk_len, nb},
              {f->blk_height, fd->blk_height, nb},
              {f->blk_class, fd->blk_class, nb},
              {f->idx, fd->idx, sizeof(int32_t) * nz},
              {f->val, fd->val, es * nz},
              {f->seg, fd->seg, nz},
              {t, fd->task, sizeof(int32_t) * ((size_t)fd->ntasks + 1)},
              {p, fd->prescale, sizeof(int32_t) * (size_t)fd->nprescale}};
    for (size_t i = 0; i < sizeof cp / sizeof cp[0]; i++) {
      if (!cp[i].dst || !cp[i].bytes) continue;
      if (!cp[i].src) { /* host-built upload with the identity order keeps no perm */
        if (cp[i].dst != f->perm || !fd->identity_perm) {
          st = COAL_ERROR(ctx, COAL_ERR_STATE, "device FastLoad array %zu missing", i);
          goto fail;
        }
        for (size_t l = 0; l < nl; l++) f->perm[l] = (int32_t)l;
        continue;
      }
      COAL_CALL_GOTO(st, coal_mem_download_cuda(ctx, cp[i].dst, cp[i].src, cp[i].bytes), fail);
    }
  }
  *out = f;
  if (task)
    *task = t;
  else
    coal_free(t);
  if (prescale)
    *prescale = p;
  else
    coal_free(p);
  if (ntasks) *ntasks = fd->ntasks;
  if (nprescale) *nprescale = fd->nprescale;
  return COAL_SUCCESS;
fail:
  coal_fastload_free(f);
  coal_free(t), coal_free(p);
  return st;
}
