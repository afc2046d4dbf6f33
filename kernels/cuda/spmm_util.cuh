/* Helpers shared by the CUDA SpMM kernels (spmm_rowsplit.cu, spmm_merge.cu, spmm_swift.cu):
 * vector loads of V consecutive entries of a row-major block, widened to double, the store of
 * V results (y = alpha*acc + beta*y, beta == 0 without reading y), and the launch-side view of
 * a block (pointer, leading dimension, layout). */
#ifndef COAL_CUDA_SPMM_UTIL_CUH
#define COAL_CUDA_SPMM_UTIL_CUH

#include "../spmm.h"
#include "cuda_internal.h" /* with the tuning knobs (spmm_tune.h, coal_spmm_knob) */

namespace coal_spmm_dev {

/* Vector type of V elements of T (16-byte loads: double2, float4; 8 bytes: float2). */
template <typename T, int V> struct vec_t;
template <> struct vec_t<double, 1> { typedef double type; };
template <> struct vec_t<double, 2> { typedef double2 type; };
template <> struct vec_t<float, 1> { typedef float type; };
template <> struct vec_t<float, 2> { typedef float2 type; };
template <> struct vec_t<float, 4> { typedef float4 type; };

__device__ __forceinline__ void unpack(double v, double *o) { o[0] = v; }
__device__ __forceinline__ void unpack(double2 v, double *o) { o[0] = v.x, o[1] = v.y; }
__device__ __forceinline__ void unpack(float v, double *o) { o[0] = v; }
__device__ __forceinline__ void unpack(float2 v, double *o) { o[0] = v.x, o[1] = v.y; }
__device__ __forceinline__ void unpack(float4 v, double *o) {
  o[0] = v.x, o[1] = v.y, o[2] = v.z, o[3] = v.w;
}
__device__ __forceinline__ void pack(const double *o, double &v) { v = o[0]; }
__device__ __forceinline__ void pack(const double *o, double2 &v) { v.x = o[0], v.y = o[1]; }
__device__ __forceinline__ void pack(const double *o, float &v) { v = (float)o[0]; }
__device__ __forceinline__ void pack(const double *o, float2 &v) {
  v.x = (float)o[0], v.y = (float)o[1];
}
__device__ __forceinline__ void pack(const double *o, float4 &v) {
  v.x = (float)o[0], v.y = (float)o[1], v.z = (float)o[2], v.w = (float)o[3];
}

/* V entries (row, j .. j+V-1) of X, read-only path. XROW: row-major (then V consecutive
 * entries, one vector load; the launcher guarantees alignment); else column-major (V == 1).
 * O32 (row-major): the row's offset is one 32x32-bit wide multiply-add on a byte stride of
 * less than 2^31 (the launcher checks xrow_stride_ok); with the 64-bit stride each load costs
 * about ten integer instructions. Row-split is faster with it; merge-based was slower with it,
 * so it keeps the 64-bit stride (bench/RESULTS.md, rule x-o32). */
template <typename T, int V, bool XROW, bool O32 = true>
__device__ __forceinline__ void load_x(const T *__restrict__ x, int64_t ldx, int32_t row, int j,
                                       double *o) {
  if (XROW && O32) {
    typedef typename vec_t<T, V>::type VT;
    const int32_t ldb = (int32_t)(ldx * (int64_t)sizeof(T)); /* bytes per row of X */
    const char *xj = reinterpret_cast<const char *>(x + j);
    unpack(__ldg(reinterpret_cast<const VT *>(xj + (int64_t)row * ldb)), o);
  } else if (XROW) {
    typedef typename vec_t<T, V>::type VT;
    unpack(__ldg(reinterpret_cast<const VT *>(x + (int64_t)row * ldx + j)), o);
  } else {
#pragma unroll
    for (int v = 0; v < V; v++) o[v] = (double)__ldg(x + (int64_t)row + (int64_t)(j + v) * ldx);
  }
}

/* Stores y(row, j .. j+V-1) = alpha*acc + beta*y; entries at j+v >= k are skipped. yvec: Y is
 * row-major with an aligned vector at (row, j) and j + V <= k (one vector access). Results are
 * written with streaming stores: Y is not read again by the product. */
template <typename T, int V>
__device__ __forceinline__ void store_y(T *__restrict__ y, int64_t ldy, bool yrow, bool yvec,
                                        int32_t row, int j, int k, const double *acc, double alpha,
                                        double beta) {
  if (yvec) {
    typedef typename vec_t<T, V>::type VT;
    VT *p = reinterpret_cast<VT *>(y + (int64_t)row * ldy + j);
    double o[V];
    if (beta != 0.0) {
      double old[V];
      unpack(*p, old);
#pragma unroll
      for (int v = 0; v < V; v++) o[v] = alpha * acc[v] + beta * old[v];
    } else {
#pragma unroll
      for (int v = 0; v < V; v++) o[v] = alpha * acc[v];
    }
    VT w;
    pack(o, w);
    __stcs(p, w);
    return;
  }
#pragma unroll
  for (int v = 0; v < V; v++) {
    if (j + v >= k) break;
    T *p = y + (yrow ? (int64_t)row * ldy + j + v : (int64_t)row + (int64_t)(j + v) * ldy);
    const double r = beta == 0.0 ? alpha * acc[v] : alpha * acc[v] + beta * (double)*p;
    __stcs(p, (T)r);
  }
}

constexpr int kRsChunk = 32; /* row-split: entries of A loaded per pass of a group */

/* The row-split inner loop (spmm_rowsplit.cu, which describes it): the group of S*W lanes that
 * owns a row is S sub-groups of W lanes; sub-group `sub` takes the entries sub, sub+S, ... of the
 * row and accumulates their products into acc[t] (columns j0 + t*W*V + lane*V .. +V-1 of X) for
 * the nt <= NT tiles of this pass (nt uniform over the warp); the caller sums the S sub-groups.
 * The row's entries are p0 .. p0+len-1; maxlen is the longest row of the warp, so that the loop
 * bounds and every shuffle are uniform over its 32 lanes. The broadcast entries (index and value,
 * shuffled once) serve all NT tiles: more tiles per lane mean fewer shuffles per multiply-add.
 * U = UB/V entries per sub-group (UB elements of X per lane) have their loads in flight together,
 * so a row takes about len/(S*U) dependent round trips. The entries are loaded CH at a time
 * (CH/(S*W) per lane, held in registers while they are broadcast): kRsChunk, or S*W for short
 * rows where registers are scarce (a row of CH or fewer entries is one chunk either way). */
template <typename T, int W, int V, int NT, bool XROW, int UB = 8, int S = 1, int CH = kRsChunk>
__device__ __forceinline__ void rs_row(const int32_t *__restrict__ col, const T *__restrict__ val,
                                       const T *__restrict__ x, int64_t ldx, int32_t p0, int len,
                                       int maxlen, int lane, int sub, int j0, int k, int nt,
                                       double (&acc)[NT][V]) {
  constexpr int GW = W * S;                    /* lanes of the group */
  constexpr int M = CH / GW;                   /* entries of a chunk held per lane */
  constexpr int U0 = V >= UB ? 1 : UB / V;     /* X loads in flight per sub-group */
  constexpr int U = U0 * S > CH ? CH / S : U0; /* a step stays inside the chunk */
  static_assert(GW <= 32 && CH % GW == 0 && CH % (U * S) == 0, "row-split group shape");
  constexpr int TW = W * V;
  const int gl = sub * W + lane; /* lane inside the group */
  for (int c0 = 0; c0 < maxlen; c0 += CH) {
    int32_t mc[M];
    T mv[M];
#pragma unroll
    for (int m = 0; m < M; m++) {
      const int e = c0 + gl + m * GW;
      mc[m] = 0, mv[m] = T(0);
      if (e < len) {
        mc[m] = coal_ld_stream(col + p0 + e);
        mv[m] = coal_ld_stream(val + p0 + e);
      }
    }
    const int cn = maxlen - c0 < CH ? maxlen - c0 : CH;
#pragma unroll
    for (int t0 = 0; t0 < CH; t0 += U * S) {
      if (t0 >= cn) break; /* uniform */
      int32_t cc[U];
      double a[U];
      bool on[U];
#pragma unroll
      for (int u = 0; u < U; u++) {
        /* entry t0 + u*S + sub: held by lane (t0 + u*S) % GW + sub of the group, in register
         * (t0 + u*S) / GW (the same for every sub-group, as GW is a multiple of S) */
        const int tb = t0 + u * S;
        cc[u] = __shfl_sync(COAL_FULL_MASK, mc[tb / GW], tb % GW + sub, GW);
        a[u] = (double)__shfl_sync(COAL_FULL_MASK, mv[tb / GW], tb % GW + sub, GW);
        on[u] = c0 + tb + sub < len;
      }
      /* one tile after the other, sharing xv (the U loads of a tile are in flight together) */
#pragma unroll
      for (int t = 0; t < NT; t++) {
        if (t >= nt) break; /* uniform */
        const int j = j0 + t * TW + lane * V;
        const bool in = j < k;
        double xv[U][V];
#pragma unroll
        for (int u = 0; u < U; u++) {
          if (on[u] && in)
            load_x<T, V, XROW>(x, ldx, cc[u], j, xv[u]);
          else
#pragma unroll
            for (int v = 0; v < V; v++) xv[u][v] = 0;
        }
        /* entries past the row's end have a == 0 and xv == 0: no select needed */
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
          for (int v = 0; v < V; v++) acc[t][v] += a[u] * xv[u][v];
      }
    }
  }
}

/* Y = beta*Y over the n x k entries of a block (beta == 0: zeros, nothing read); padding
 * between ld and the tight size is left alone. */
template <typename T>
__global__ void scale_block_kernel(int64_t n, int64_t k, T *__restrict__ y, int64_t ldy, bool yrow,
                                   double beta) {
  const int64_t total = n * k;
  for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total;
       e += (int64_t)gridDim.x * blockDim.x) {
    const int64_t i = yrow ? e / k : e % n, j = yrow ? e % k : e / n;
    T *p = y + (yrow ? i * ldy + j : i + j * ldy);
    *p = beta == 0.0 ? T(0) : (T)(beta * (double)*p);
  }
}

/* Launches scale_block_kernel on the context's stream (nothing when beta == 1). */
template <typename T> coal_status scale_block(coal_ctx ctx, coal_bvec Y, double beta) {
  if (beta == 1.0 || Y->n == 0 || Y->k == 0) return COAL_SUCCESS;
  const int64_t total = Y->n * Y->k;
  int64_t g = (total + COAL_CUDA_CTA - 1) / COAL_CUDA_CTA, cap = (int64_t)ctx->cuda->sm_count * 16;
  scale_block_kernel<T><<<(unsigned)(g < cap ? g : cap), COAL_CUDA_CTA, 0, coal_stream(ctx)>>>(
      Y->n, Y->k, (T *)Y->data, Y->ld, Y->layout == COAL_ROW_MAJOR, beta);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  return COAL_SUCCESS;
}

/* Elements per vector load of a row-major block: 16 bytes when the block's pointer and leading
 * dimension allow it and k is a multiple, else 1. */
static inline int vec_width(coal_bvec B, size_t es) {
  const int v = (int)(16 / es);
  if (B->layout != COAL_ROW_MAJOR || B->k % v != 0 || B->ld % v != 0) return 1;
  if ((uintptr_t)B->data % 16 != 0) return 1;
  return v;
}

/* The row stride of a row-major block in bytes fits load_x's 32-bit offset arithmetic. */
static inline bool xrow_stride_ok(coal_bvec B, size_t es) {
  return B->layout != COAL_ROW_MAJOR || B->ld <= (int64_t)(INT32_MAX / (int64_t)es);
}

/* Smallest power of two >= v, clamped to [lo, hi]. */
static inline int pow2_clamp(int64_t v, int lo, int hi) {
  int w = lo;
  while (w < hi && w < v) w *= 2;
  return w;
}

} // namespace coal_spmm_dev

#endif
