/* Swift SpMM ([SWIFT], Algorithms 2 and 3) on the format documented in kernels/swift.h
 * (struct coal_swift, built on the host and uploaded once; rebuilt when the matrix's Swift
 * height changes). Y = alpha*A*X + beta*Y in three launches, as the host twin:
 *
 *  1. Y = beta*Y (zeros when beta == 0, nothing read; skipped when beta == 1).
 *  2. Regular part, a CTA of 8 warps per CTA group of 8 blocks (warp w: block 8c+w, lane l:
 *     sorted column blk_col+l, i.e. row perm[blk_col+l] of X) and chunk of columns of X
 *     (blockIdx.y; a chunk is every column when there are enough groups to fill the GPU). The
 *     block's values and slots (reg_pos, at most H rounds) and the CTA's segment heads (slot
 *     t + 256*i of thread t: row and run length) stay in registers over the columns. For each
 *     column j, each element writes val * X[perm[col], j] to its slot in shared memory, the CTA
 *     synchronises, and each segment head sums its run of slots in slot order (double) and adds
 *     alpha*sum to Y[row, j] with one atomic. Two shared buffers alternate between columns, so
 *     one barrier per column suffices (a buffer is rewritten only after the barrier that
 *     follows every read of it). The next column's X value is loaded before the current
 *     column's shared-memory work.
 *  3. Irregular part (residual columns), a warp per sub-block of at most 32 entries of one
 *     column, a lane per entry: for every column j of X one atomic add of
 *     alpha*(val*X[col, j]) to Y[row, j] (X[col, j] is the same address for all lanes).
 *
 * Column-major X is the fast path (lanes read consecutive rows of X, coalesced when the
 * column order is the identity); a row-major X is read with stride ldx per lane (correct,
 * slower). Y may have either layout. Atomics add in the matrix dtype (the twin rounds each
 * update to it too; only their order differs).
 *
 * Traffic: A's regular part streamed once per chunk of columns (val, 2-byte slot, and per slot
 * 4-byte row + 2-byte length: about sizeof(T) + 8 bytes per nonzero), X read once per column
 * (ncols*k values), Y read and written by the scaling, then nsegments*k + nirr*k atomics in L2.
 */
#include "../swift.h"
#include "spmm_util.cuh"

#include <string.h>

using namespace coal_spmm_dev;

namespace {

constexpr int kCta = COAL_SWIFT_WARP * COAL_SWIFT_CTA_BLOCKS; /* 256 threads */

template <typename T, bool XROW>
__device__ __forceinline__ double x_at(const T *__restrict__ x, int64_t ldx, int32_t row, int j) {
  return (double)__ldg(x + (XROW ? (int64_t)row * ldx + j : (int64_t)row + (int64_t)j * ldx));
}

template <typename T>
__device__ __forceinline__ T *y_at(T *y, int64_t ldy, bool yrow, int32_t row, int j) {
  return y + (yrow ? (int64_t)row * ldy + j : (int64_t)row + (int64_t)j * ldy);
}

template <typename T, int H, bool IDENT, bool XROW>
__global__ __launch_bounds__(kCta) void sw_regular_kernel(
    int32_t nblocks, const int32_t *__restrict__ blk_ptr, const int32_t *__restrict__ blk_col,
    const int32_t *__restrict__ perm, const T *__restrict__ reg_val,
    const uint16_t *__restrict__ reg_pos, const int32_t *__restrict__ slot_row,
    const uint16_t *__restrict__ slot_seg, const T *__restrict__ x, int64_t ldx, T *__restrict__ y,
    int64_t ldy, bool yrow, int k, int kc, double alpha) {
  extern __shared__ double s_buf[]; /* 2 buffers of kCta*H slots */
  constexpr int NS = kCta * H;
  const int tid = (int)threadIdx.x, w = tid >> 5, lane = tid & 31;
  const int32_t b0 = (int32_t)blockIdx.x * COAL_SWIFT_CTA_BLOCKS;
  const int32_t b1 = b0 + COAL_SWIFT_CTA_BLOCKS < nblocks ? b0 + COAL_SWIFT_CTA_BLOCKS : nblocks;
  const int32_t base = __ldg(blk_ptr + b0), nslots = __ldg(blk_ptr + b1) - base;
  const int32_t b = b0 + w;
  const bool has_block = b < b1;
  T v[H];
  uint16_t pos[H];
  int h = 0;
  int32_t xr = 0;
  if (has_block) {
    const int32_t e0 = __ldg(blk_ptr + b);
    h = (__ldg(blk_ptr + b + 1) - e0) / COAL_SWIFT_WARP;
    const int32_t s = __ldg(blk_col + b) + lane;
    xr = IDENT ? s : __ldg(perm + s);
#pragma unroll
    for (int r = 0; r < H; r++) {
      v[r] = T(0), pos[r] = 0;
      if (r < h) {
        v[r] = coal_ld_stream(reg_val + e0 + r * COAL_SWIFT_WARP + lane);
        pos[r] = coal_ld_stream(reg_pos + e0 + r * COAL_SWIFT_WARP + lane);
      }
    }
  }
  int32_t hrow[H];
  uint16_t hlen[H];
#pragma unroll
  for (int i = 0; i < H; i++) {
    const int t = tid + kCta * i;
    hrow[i] = 0, hlen[i] = 0;
    if (t < nslots) {
      hlen[i] = coal_ld_stream(slot_seg + base + t);
      if (hlen[i]) hrow[i] = coal_ld_stream(slot_row + base + t);
    }
  }
  const int ja = (int)blockIdx.y * kc, jb = ja + kc < k ? ja + kc : k;
  double xn = has_block && ja < jb ? x_at<T, XROW>(x, ldx, xr, ja) : 0.0;
  for (int j = ja; j < jb; j++) {
    const double xv = xn;
    if (has_block && j + 1 < jb) xn = x_at<T, XROW>(x, ldx, xr, j + 1);
    double *buf = s_buf + ((j - ja) & 1) * NS;
#pragma unroll
    for (int r = 0; r < H; r++)
      if (r < h) buf[pos[r]] = (double)v[r] * xv;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < H; i++) {
      if (!hlen[i]) continue;
      const int t = tid + kCta * i;
      double sum = 0;
      for (int u = t; u < t + hlen[i]; u++) sum += buf[u];
      atomicAdd(y_at(y, ldy, yrow, hrow[i], j), (T)(alpha * sum));
    }
  }
}

template <typename T, bool XROW>
__global__ __launch_bounds__(COAL_CUDA_CTA) void sw_irregular_kernel(
    int32_t nblk, const int32_t *__restrict__ blk_col, const int32_t *__restrict__ blk_start,
    const int32_t *__restrict__ blk_stop, const int32_t *__restrict__ irr_row,
    const T *__restrict__ irr_val, const T *__restrict__ x, int64_t ldx, T *__restrict__ y,
    int64_t ldy, bool yrow, int k, double alpha) {
  const int64_t b = ((int64_t)blockIdx.x * COAL_CUDA_CTA + threadIdx.x) >> 5;
  if (b >= nblk) return;
  const int lane = (int)(threadIdx.x & 31);
  const int32_t e = __ldg(blk_start + b) + lane, col = __ldg(blk_col + b);
  if (e >= __ldg(blk_stop + b)) return; /* no shuffles below: lanes may leave */
  const int32_t row = coal_ld_stream(irr_row + e);
  const double a = (double)coal_ld_stream(irr_val + e);
  constexpr int U = 4;
  for (int j0 = 0; j0 < k; j0 += U) {
    double xv[U];
#pragma unroll
    for (int u = 0; u < U; u++) xv[u] = j0 + u < k ? x_at<T, XROW>(x, ldx, col, j0 + u) : 0.0;
#pragma unroll
    for (int u = 0; u < U; u++)
      if (j0 + u < k) atomicAdd(y_at(y, ldy, yrow, row, j0 + u), (T)(alpha * (a * xv[u])));
  }
}

/* Device mirror of the Swift SpMM format (struct coal_swift, kernels/swift.h): the arrays the
 * kernels read, uploaded once from the host format and kept in the matrix's COAL_FMT_CUDA_SWIFT
 * entry. height is the block height limit it was built with: a different limit on the matrix
 * rebuilds it. */
struct coal_swift_dev {
  int built, height, identity_perm;
  int32_t nblocks, ncta, irr_nblk;
  int64_t nreg, nirr;
  int32_t *perm; /* [ncols], NULL when identity_perm */
  int32_t *blk_ptr, *blk_col;
  void *reg_val;
  uint16_t *reg_pos;
  int32_t *slot_row;
  uint16_t *slot_seg;
  int32_t *irr_blk_col, *irr_blk_start, *irr_blk_stop, *irr_row;
  void *irr_val;
};

/* ---- device format --------------------------------------------------------------------- */
template <typename P> coal_status dup(coal_ctx ctx, P **dst, const void *src, size_t bytes) {
  void *p = NULL;
  const coal_status st = coal_cuda_upload_new(ctx, &p, src, bytes);
  *dst = (P *)p;
  return st;
}

coal_status upload(coal_ctx ctx, const coal_swift *f, size_t es, struct coal_swift_dev *s) {
  const size_t nr = (size_t)f->nreg, ni = (size_t)f->nirr, nb = (size_t)f->irr_nblk;
  s->identity_perm = f->identity_perm;
  s->nblocks = f->nblocks, s->ncta = f->ncta, s->irr_nblk = f->irr_nblk;
  s->nreg = f->nreg, s->nirr = f->nirr;
  if (!f->identity_perm) COAL_CALL(dup(ctx, &s->perm, f->perm, sizeof(int32_t) * (size_t)f->ncols));
  COAL_CALL(dup(ctx, &s->blk_ptr, f->blk_ptr, sizeof(int32_t) * ((size_t)f->nblocks + 1)));
  COAL_CALL(dup(ctx, &s->blk_col, f->blk_col, sizeof(int32_t) * (size_t)f->nblocks));
  COAL_CALL(dup(ctx, &s->reg_val, f->reg_val, es * nr));
  COAL_CALL(dup(ctx, &s->reg_pos, f->reg_pos, sizeof(uint16_t) * nr));
  COAL_CALL(dup(ctx, &s->slot_row, f->slot_row, sizeof(int32_t) * nr));
  COAL_CALL(dup(ctx, &s->slot_seg, f->slot_seg, sizeof(uint16_t) * nr));
  COAL_CALL(dup(ctx, &s->irr_blk_col, f->irr_blk_col, sizeof(int32_t) * nb));
  COAL_CALL(dup(ctx, &s->irr_blk_start, f->irr_blk_start, sizeof(int32_t) * nb));
  COAL_CALL(dup(ctx, &s->irr_blk_stop, f->irr_blk_stop, sizeof(int32_t) * nb));
  COAL_CALL(dup(ctx, &s->irr_row, f->irr_row, sizeof(int32_t) * ni));
  COAL_CALL(dup(ctx, &s->irr_val, f->irr_val, es * ni));
  /* the host format outlives the copies; synchronise once so that errors surface here */
  COAL_CUDA_CALL(ctx, cudaStreamSynchronize(coal_stream(ctx)));
  return COAL_SUCCESS;
}

void swift_dev_free(struct coal_swift_dev *s) {
  coal_cuda_free(s->perm), coal_cuda_free(s->blk_ptr), coal_cuda_free(s->blk_col);
  coal_cuda_free(s->reg_val), coal_cuda_free(s->reg_pos), coal_cuda_free(s->slot_row);
  coal_cuda_free(s->slot_seg), coal_cuda_free(s->irr_blk_col), coal_cuda_free(s->irr_blk_start);
  coal_cuda_free(s->irr_blk_stop), coal_cuda_free(s->irr_row), coal_cuda_free(s->irr_val);
}

void swift_entry_free(coal_ctx ctx, void *p) {
  (void)ctx;
  swift_dev_free((struct coal_swift_dev *)p);
  coal_free(p);
}

/* A's device format (entry COAL_FMT_CUDA_SWIFT), uploaded from the host format at first use
 * and after a change of the height limit. */
coal_status swift_dev(coal_mat A, const struct coal_swift_dev **out) {
  const int h = coal_swift_height(A);
  struct coal_swift_dev *s = (struct coal_swift_dev *)coal_mat_format_get(A, COAL_FMT_CUDA_SWIFT);
  if (!s || !s->built || s->height != h) {
    coal_mat_format_drop_key(A, COAL_FMT_CUDA_SWIFT);
    const coal_swift *f = NULL;
    COAL_CALL(coal_mat_swift(A, &f));
    COAL_CHECK(A->ctx, f->nrows == A->nrows && f->ncols == A->ncols && f->nreg + f->nirr == A->nnz,
               COAL_ERR_STATE, "Swift format does not match the matrix");
    COAL_CALL(coal_calloc(A->ctx, sizeof *s, (void **)&s));
    coal_status st = upload(A->ctx, f, coal_dtype_size(A->dtype), s);
    if (st != COAL_SUCCESS) {
      swift_entry_free(A->ctx, s);
      return st;
    }
    s->built = 1, s->height = f->height_limit;
    A->ctx->stats.formats_built++;
    COAL_CALL(coal_mat_format_put(A, COAL_FMT_CUDA_SWIFT, COAL_FORMAT_DEVICE | COAL_FORMAT_VALUES,
                                  s, swift_entry_free));
  }
  *out = s;
  return COAL_SUCCESS;
}

/* ---- launch ---------------------------------------------------------------------------- */
template <typename T, int H, bool IDENT, bool XROW>
coal_status launch_regular(coal_ctx ctx, const struct coal_swift_dev *s, double alpha, coal_bvec X,
                           coal_bvec Y) {
  const int k = (int)X->k;
  /* chunks of columns: one per CTA when the groups alone fill the GPU (A read once) */
  const int64_t target = (int64_t)ctx->cuda->sm_count * 8;
  int64_t chunks = (target + s->ncta - 1) / s->ncta, cmax = (k + 3) / 4;
  if (chunks > cmax) chunks = cmax;
  if (chunks > 65535) chunks = 65535;
  if (chunks < 1) chunks = 1;
  const int kc = (int)((k + chunks - 1) / chunks);
  chunks = (k + kc - 1) / kc;
  const size_t smem = sizeof(double) * 2 * kCta * H;
  auto kern = sw_regular_kernel<T, H, IDENT, XROW>;
  if (smem > 48 * 1024)
    COAL_CUDA_CALL(
        ctx, cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  kern<<<dim3((unsigned)s->ncta, (unsigned)chunks), kCta, smem, coal_stream(ctx)>>>(
      s->nblocks, s->blk_ptr, s->blk_col, s->perm, (const T *)s->reg_val, s->reg_pos, s->slot_row,
      s->slot_seg, (const T *)X->data, X->ld, (T *)Y->data, Y->ld, Y->layout == COAL_ROW_MAJOR, k,
      kc, alpha);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  return COAL_SUCCESS;
}

template <typename T, int H>
coal_status launch_regular_h(coal_ctx ctx, const struct coal_swift_dev *s, double alpha,
                             coal_bvec X, coal_bvec Y) {
  const bool xrow = X->layout == COAL_ROW_MAJOR;
  if (s->identity_perm)
    return xrow ? launch_regular<T, H, true, true>(ctx, s, alpha, X, Y)
                : launch_regular<T, H, true, false>(ctx, s, alpha, X, Y);
  return xrow ? launch_regular<T, H, false, true>(ctx, s, alpha, X, Y)
              : launch_regular<T, H, false, false>(ctx, s, alpha, X, Y);
}

template <typename T>
coal_status swift(coal_mat A, double alpha, coal_bvec X, double beta, coal_bvec Y) {
  coal_ctx ctx = A->ctx;
  const struct coal_swift_dev *s = NULL;
  COAL_CALL(swift_dev(A, &s));
  COAL_CALL(scale_block<T>(ctx, Y, beta));
  if (s->nblocks > 0) {
    const coal_status st = s->height <= 8
                               ? launch_regular_h<T, 8>(ctx, s, alpha, X, Y)
                               : launch_regular_h<T, COAL_SWIFT_MAX_HEIGHT>(ctx, s, alpha, X, Y);
    if (st != COAL_SUCCESS) return st;
  }
  if (s->irr_nblk > 0) {
    const unsigned grid = coal_cuda_grid((int64_t)s->irr_nblk * 32, COAL_CUDA_CTA);
    const bool xrow = X->layout == COAL_ROW_MAJOR, yrow = Y->layout == COAL_ROW_MAJOR;
    if (xrow)
      sw_irregular_kernel<T, true><<<grid, COAL_CUDA_CTA, 0, coal_stream(ctx)>>>(
          s->irr_nblk, s->irr_blk_col, s->irr_blk_start, s->irr_blk_stop, s->irr_row,
          (const T *)s->irr_val, (const T *)X->data, X->ld, (T *)Y->data, Y->ld, yrow, (int)X->k,
          alpha);
    else
      sw_irregular_kernel<T, false><<<grid, COAL_CUDA_CTA, 0, coal_stream(ctx)>>>(
          s->irr_nblk, s->irr_blk_col, s->irr_blk_start, s->irr_blk_stop, s->irr_row,
          (const T *)s->irr_val, (const T *)X->data, X->ld, (T *)Y->data, Y->ld, yrow, (int)X->k,
          alpha);
    COAL_CUDA_LAUNCH_CHECK(ctx);
  }
  return COAL_SUCCESS;
}

} // namespace

coal_status coal_spmm_swift_cuda(coal_mat A, double alpha, coal_bvec X, double beta, coal_bvec Y) {
  if (!A) return COAL_ERR_ARG;
  if (A->nrows == 0 || X->k == 0) return COAL_SUCCESS;
  struct coal_mat_cuda *d = NULL;
  COAL_CALL(coal_cuda_mat(A, &d)); /* the device copy is current (the format is uploaded) */
  return A->dtype == COAL_F64 ? swift<double>(A, alpha, X, beta, Y)
                              : swift<float>(A, alpha, X, beta, Y);
}
