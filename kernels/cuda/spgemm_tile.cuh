/* TileSpGEMM on the GPU, internal interface between the kernels (spgemm_kernels.cu) and the
 * product driver (spgemm_tile.cu). The arrays mean what they mean in src/tile.h and
 * kernels/spgemm.h. */
#ifndef COAL_CUDA_SPGEMM_TILE_CUH
#define COAL_CUDA_SPGEMM_TILE_CUH

#include "../spgemm.h"
#include "cuda_internal.h"

#include <cub/device/device_scan.cuh>

/* Device copy of a tile matrix (src/tile.h), operands A and B of a product. */
struct coal_tile_dev {
  int32_t nrows, ncols, tm, tn, ntiles;
  int64_t nnz;
  int32_t *tile_ptr, *tile_col, *tile_nnz;
  uint8_t *row_ptr;
  uint16_t *mask;
  uint8_t *idx;
  void *val;
  int32_t *csr_pos;                    /* CSR index of each entry (value refresh) */
  int32_t *csc_ptr, *csc_row, *csc_id; /* B only */
};

/* Device state of one product C = A*B (struct coal_spgemm_s::dev). */
struct coal_spgemm_cuda {
  struct coal_tile_dev a, b; /* b aliases a when B == A (b_is_a) */
  int b_is_a;
  uint64_t a_state, b_state; /* operand states the device tile values were taken at */
  /* C's tile structure (steps 1 and 2) and the CSR map */
  int32_t tm, tn, ntiles;
  int64_t nnz;
  int32_t *c_tile_ptr, *c_tile_col, *c_tile_row, *c_tile_nnz;
  uint8_t *c_row_ptr;
  uint16_t *c_mask;
  int32_t *c_pos;               /* [16 * ntiles] CSR index of local row r of tile t */
  void *c_val;                  /* [nnz] C's values in CSR order (step 3 output) */
  void *a_stage, *b_stage;      /* new CSR values of A / B are uploaded here, then gathered into
                                   tile order (allocated at the first numeric-only refresh) */
  int32_t *c_rowptr, *c_colind; /* C's device CSR structure until handed to C (first numeric) */
  unsigned long long *d_total;  /* one device counter (sizes of steps 1 and 2) */
  void *cub_tmp;                /* scan workspace, sized at the symbolic step */
  size_t cub_bytes;
  size_t held, peak; /* device bytes the product holds now / at most (temp_bytes) */
};

/* Step 1, two passes over the tile rows of A (a CTA per tile row, bitmap accumulator over
 * windows of tile columns). count: cnt[I] = tiles of tile row I of C, *total += all;
 * fill: tile_col and tile_row of C from its tile_ptr. */
coal_status coal_spgemm_step1_count_cuda(coal_ctx ctx, const struct coal_tile_dev *a,
                                         const struct coal_tile_dev *b, int32_t *cnt,
                                         unsigned long long *total);
coal_status coal_spgemm_step1_fill_cuda(coal_ctx ctx, const struct coal_tile_dev *a,
                                        const struct coal_tile_dev *b, const int32_t *c_tile_ptr,
                                        int32_t *c_tile_col, int32_t *c_tile_row);
/* Step 2: a warp per tile of C: masks, 8-bit row offsets, cnt[t] = nonzeros of tile t,
 * *total += all. */
coal_status coal_spgemm_step2_cuda(coal_ctx ctx, const struct coal_tile_dev *a,
                                   const struct coal_tile_dev *b, int32_t ntiles,
                                   const int32_t *c_tile_row, const int32_t *c_tile_col,
                                   uint16_t *c_mask, uint8_t *c_row_ptr, int32_t *cnt,
                                   unsigned long long *total);
/* C's CSR structure: len[i] = length of row i (rows of tile row I from its masks); then, with
 * rowptr scanned, colind and pos. */
coal_status coal_spgemm_row_len_cuda(coal_ctx ctx, int32_t nrows, const int32_t *c_tile_ptr,
                                     const uint16_t *c_mask, int32_t *len);
coal_status coal_spgemm_row_fill_cuda(coal_ctx ctx, int32_t nrows, const int32_t *c_tile_ptr,
                                      const int32_t *c_tile_col, const uint16_t *c_mask,
                                      const int32_t *rowptr, int32_t *colind, int32_t *pos);
/* Step 3 into cval (CSR order), dtype of the operands. */
coal_status coal_spgemm_step3_cuda(coal_ctx ctx, coal_dtype dt, const struct coal_tile_dev *a,
                                   const struct coal_tile_dev *b, const struct coal_spgemm_cuda *d,
                                   void *cval, int dense_threshold);
/* dst[e] = src[map[e]] for e < n (values of dtype dt). */
coal_status coal_spgemm_gather_cuda(coal_ctx ctx, coal_dtype dt, int64_t n, const int32_t *map,
                                    const void *src, void *dst);

/* ---- device memory of a product: every allocation counted in held / peak ------------------ */
namespace coal_spgemm_dev {

typedef struct coal_spgemm_cuda Dev;

inline coal_status dalloc(coal_ctx ctx, Dev *d, size_t bytes, void **p) {
  COAL_CALL(coal_cuda_malloc(ctx, bytes, p));
  d->held += bytes;
  if (d->held > d->peak) d->peak = d->held;
  return COAL_SUCCESS;
}
template <typename P> inline coal_status dalloc_n(coal_ctx ctx, Dev *d, size_t n, P **p) {
  void *q = NULL;
  COAL_CALL(dalloc(ctx, d, sizeof(P) * n, &q));
  *p = (P *)q;
  return COAL_SUCCESS;
}
template <typename P> inline void dfree(Dev *d, P **p, size_t n) {
  if (!*p) return;
  coal_cuda_free(*p);
  d->held -= sizeof(P) * n < d->held ? sizeof(P) * n : d->held;
  *p = NULL;
}

template <typename P> coal_status dup(coal_ctx ctx, Dev *d, P **dst, const void *src, size_t n) {
  COAL_CALL(dalloc_n(ctx, d, n, dst));
  if (n)
    COAL_CUDA_CALL(
        ctx, cudaMemcpyAsync(*dst, src, sizeof(P) * n, cudaMemcpyHostToDevice, coal_stream(ctx)));
  return COAL_SUCCESS;
}

/* out[0..n) = exclusive prefix sums of in[0..n) (int32; the caller has bounded the total). */
inline coal_status scan(coal_ctx ctx, Dev *d, const int32_t *in, int32_t *out, int64_t n) {
  COAL_CHECK(ctx, n <= INT32_MAX, COAL_ERR_OVERFLOW, "scan of %lld items", (long long)n);
  size_t bytes = 0;
  cudaStream_t s = coal_stream(ctx);
  COAL_CUDA_CALL(ctx, cub::DeviceScan::ExclusiveSum(nullptr, bytes, in, out, (int)n, s));
  if (bytes > d->cub_bytes) {
    char *p = (char *)d->cub_tmp;
    dfree(d, &p, d->cub_bytes);
    d->cub_tmp = NULL, d->cub_bytes = 0;
    COAL_CALL(dalloc(ctx, d, bytes, &d->cub_tmp));
    d->cub_bytes = bytes;
  }
  bytes = d->cub_bytes;
  COAL_CUDA_CALL(ctx, cub::DeviceScan::ExclusiveSum(d->cub_tmp, bytes, in, out, (int)n, s));
  return COAL_SUCCESS;
}

inline coal_status zero(coal_ctx ctx, void *p, size_t bytes) {
  if (bytes) COAL_CUDA_CALL(ctx, cudaMemsetAsync(p, 0, bytes, coal_stream(ctx)));
  return COAL_SUCCESS;
}
inline coal_status d2h(coal_ctx ctx, void *dst, const void *src, size_t bytes) {
  if (bytes)
    COAL_CUDA_CALL(ctx, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, coal_stream(ctx)));
  return COAL_SUCCESS;
}
inline coal_status sync(coal_ctx ctx) {
  COAL_CUDA_CALL(ctx, cudaStreamSynchronize(coal_stream(ctx)));
  return COAL_SUCCESS;
}

/* A status from a CUDA error code (for use with COAL_CALL_GOTO); clears the thread's error. */
inline coal_status cuda_call(coal_ctx ctx, cudaError_t e) {
  if (e == cudaSuccess) return COAL_SUCCESS;
  (void)cudaGetLastError();
  return COAL_ERROR(ctx, e == cudaErrorMemoryAllocation ? COAL_ERR_DEVICE_MEMORY : COAL_ERR_CUDA,
                    "CUDA: %s", cudaGetErrorString(e));
}
inline coal_status launch_check(coal_ctx ctx) { return cuda_call(ctx, cudaGetLastError()); }

/* Reads the device counter d->d_total (waits for the stream: every queued kernel is done)
 * and clears it for the next use. */
inline coal_status read_total(coal_ctx ctx, Dev *d, int64_t *v) {
  unsigned long long h = 0;
  COAL_CALL(d2h(ctx, &h, d->d_total, sizeof h));
  COAL_CALL(sync(ctx));
  COAL_CALL(zero(ctx, d->d_total, sizeof h));
  *v = (int64_t)h;
  return COAL_SUCCESS;
}

} // namespace coal_spgemm_dev

/* CSR -> tiles on the GPU from A's device CSR (made current here), bit-identical to
 * coal_tile_build_host: values, local indices, csr_pos, and the CSC index when with_csc.
 * Allocations are counted in d (d->d_total must exist). kernels/cuda/tile_build.cu */
coal_status coal_tile_build_cuda(coal_mat A, coal_spgemm_dev::Dev *d, int with_csc,
                                 struct coal_tile_dev *t);
/* Tiles -> CSR on the GPU into device arrays rowptr[nrows + 1], colind[nnz], val[nnz]. */
coal_status coal_tile_to_csr_cuda(coal_ctx ctx, coal_spgemm_dev::Dev *d,
                                  const struct coal_tile_dev *t, coal_dtype dt, int32_t *rowptr,
                                  int32_t *colind, void *val);
/* Frees the arrays of a device tile matrix and zeroes it. */
void coal_tile_dev_free(struct coal_tile_dev *t);

#endif
