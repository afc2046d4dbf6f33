/* SpMM front end: argument checks, kernel selection, dispatch to the backend's op
 * (coal_ops(ctx)->spmm[kernel]). */
#include "backend.h"

static const char *const kernel_names[COAL_SPMM_NKERNELS] = {"auto", "swift", "rowsplit", "merge"};

const char *coal_spmm_kernel_name(coal_spmm_kernel k) {
  return (k >= 0 && k < COAL_SPMM_NKERNELS) ? kernel_names[k] : "unknown";
}

coal_status coal_spmm_kernel_parse(const char *name, coal_spmm_kernel *k) {
  int i = coal_name_lookup(kernel_names, COAL_SPMM_NKERNELS, name);
  if (i < 0 || !k) return COAL_ERR_ARG;
  *k = (coal_spmm_kernel)i;
  return COAL_SUCCESS;
}

/* Selection, O(1) after the first call (the longest row and, for large matrices, the grid-line
 * stride are computed once per matrix).
 * Host: the row loop of row-split (no atomics, no format to build).
 * CUDA, measured on an H200 (fp64, bench/spmm_notes.md; k = 1 with contiguous X and Y never
 * gets here: coal_spmm runs the SpMV kernel of coal_spmv_select):
 *  - hubs (longest row > 32*mean + 256): merge-based on large matrices (nnz >= 2^20).
 *    Power-law 2^20 at k = 32: 795 us merge-based, 985 us row-split with its long rows in CTAs
 *    of their own (3495 without), cuSPARSE 1264. Smaller hub matrices: row-split, whose long
 *    rows get a CTA per segment (spmm_long.cu): adder_dcop_05 at k = 8..128 11.7-14.1 us
 *    against 18.0-20.2 merge-based, bloweybq (a dense row) 13.7-18.9 against 15.8-28.2
 *    (2026-11-26).
 *  - column-major blocks, k >= 32, nnz >= 2^20: Swift (7-point 128^3 at k = 32: 2039 us against
 *    3594 us for row-split on the strided block; 27-point 100^3: 3039 against 3892). Small
 *    matrices keep row-split on column-major blocks too (their strided rows of X stay in
 *    cache: it beat Swift in 358 of 364 (matrix, k) cells of the shared set).
 *  - moderately long rows: row-split at every k since its long rows have CTAs of their own
 *    (PGPgiantcompo at k = 64, 128: 17.4 and 22.9 us against 27.2 and 40.0 merge-based,
 *    mbeacxc 15.4 and 18.1 against 21.7 and 24.1; before, merge-based took k >= 64 there).
 *  - large matrices (nnz >= 2^20) with short rows (mean < 8) at k >= 32: merge-based (7-point
 *    128^3 at k = 32: 580-651 us against 675-700 us with row-split in six runs on
 *    2026-11-22; at k = 8 row-split and merge-based are level), unless the matrix is in a
 *    structured-grid order (coal_mat_line_stride_compute) and the block row-major: row-split
 *    walks tiles of grid lines there (7-point at k = 64: 1109-1122 us against 1237-1240
 *    merge-based, at k = 128: 2236 against 2520; at k = 32 565-574 us against 580-609 since
 *    row-major X rows are addressed with 32-bit offsets, 2026-11-26; before that change
 *    merge-based took 580-582 us and row-split with lines 581-624, and kept k = 32).
 *  - otherwise row-split (27-point 100^3: 714 us at k = 32 against 792 us merge-based).
 * Fitted to the shared set on an H200; with it, row-split's long rows and the small-launch
 * rules of 2026-11-26 (long rows in the launch's own CTAs, sub-groups by waves), no cell of the
 * 364 (matrix, k) is below 0.9x the best cuSPARSE in the two sweeps whose repetitions are
 * interleaved over the variants (worst 0.92x and 0.93x; geometric mean 1.22-1.23x); sweeps
 * timing one variant after the other had 0-7 such cells, each a noisy median of a 6-15 us
 * cell that the same kernel run outside auto did not repeat (11, worst 0.59x, at 35f5299; 31
 * on 2026-11-22 at commit 7af2b6a; bench/RESULTS.md). */
#define SPMM_HUB(mean, mx) ((double)(mx) > 32.0 * (mean) + 256.0)
#define SPMM_HUB_MERGE_NNZ (1 << 20)
#define SPMM_SHORT_MIN_K   32
#define SPMM_SHORT_MIN_NNZ (1 << 20)
#define SPMM_SHORT_MEAN    8.0
#define SPMM_SWIFT_MIN_K   32
#define SPMM_SWIFT_MIN_NNZ (1 << 20)

coal_spmm_kernel coal_spmm_select(coal_mat A, int64_t k, coal_layout layout) {
  if (!A || A->ctx->backend != COAL_BACKEND_CUDA) return COAL_SPMM_ROWSPLIT;
  const double mean = A->nrows > 0 ? (double)A->nnz / (double)A->nrows : 0.0;
  const int32_t mx = coal_mat_max_row_len(A);
  if (SPMM_HUB(mean, mx) && A->nnz >= SPMM_HUB_MERGE_NNZ) return COAL_SPMM_MERGE;
  if (layout == COAL_COL_MAJOR && k >= SPMM_SWIFT_MIN_K && A->nnz >= SPMM_SWIFT_MIN_NNZ)
    return COAL_SPMM_SWIFT;
  /* ... unless in a grid order with a row-major block: row-split's tiles of grid lines */
  if (k >= SPMM_SHORT_MIN_K && A->nnz >= SPMM_SHORT_MIN_NNZ && mean < SPMM_SHORT_MEAN &&
      !(layout == COAL_ROW_MAJOR && coal_mat_line_stride(A) > 0))
    return COAL_SPMM_MERGE;
  return COAL_SPMM_ROWSPLIT;
}

/* A one-column block stored as a contiguous vector (column-major, or row-major with ld 1). */
static int is_vector(coal_bvec B) {
  return B->k == 1 && (B->layout == COAL_COL_MAJOR || B->ld == 1);
}

/* Bytes spanned by the storage of a block (0 when it holds no entry). */
static size_t block_span(coal_bvec X) {
  if (X->n == 0 || X->k == 0) return 0;
  int64_t outer = X->layout == COAL_COL_MAJOR ? X->k : X->n;
  return (size_t)X->ld * (size_t)outer * coal_dtype_size(X->dtype);
}

coal_status coal_spmm(coal_mat A, coal_spmm_kernel kernel, double alpha, coal_bvec X, double beta,
                      coal_bvec Y) {
  if (!A) return COAL_ERR_ARG;
  coal_ctx ctx = A->ctx;
  COAL_CHECK(ctx, kernel >= 0 && kernel < COAL_SPMM_NKERNELS, COAL_ERR_ARG, "bad SpMM kernel %d",
             (int)kernel);
  COAL_CHECK(ctx, X && Y, COAL_ERR_ARG, "NULL block vector");
  COAL_CHECK(ctx, X->ctx == ctx && Y->ctx == ctx, COAL_ERR_ARG,
             "matrix and blocks belong to different contexts");
  COAL_CHECK(ctx, X->dtype == A->dtype && Y->dtype == A->dtype, COAL_ERR_ARG,
             "block dtype differs from the matrix dtype");
  COAL_CHECK(ctx, X->n == A->ncols && Y->n == A->nrows && X->k == Y->k, COAL_ERR_ARG,
             "sizes: A is %d x %d, X is %lld x %lld, Y is %lld x %lld", A->nrows, A->ncols,
             (long long)X->n, (long long)X->k, (long long)Y->n, (long long)Y->k);
  size_t xs = block_span(X), ys = block_span(Y);
  if (xs && ys) {
    uintptr_t x0 = (uintptr_t)X->data, y0 = (uintptr_t)Y->data;
    COAL_CHECK(ctx, x0 + xs <= y0 || y0 + ys <= x0, COAL_ERR_ARG, "X and Y overlap");
  }
  if (X->k == 0 || A->nrows == 0) return COAL_SUCCESS;
  const coal_backend_ops *ops = coal_ops(ctx);
  COAL_CALL(ops->mat_prepare(A));
  if (kernel == COAL_SPMM_AUTO) {
    /* the selection reads the longest row: computed here so that a failure propagates */
    if (ctx->backend == COAL_BACKEND_CUDA) {
      COAL_CALL(coal_mat_max_row_len_compute(A, NULL));
      if (A->nnz >= SPMM_SHORT_MIN_NNZ) COAL_CALL(coal_mat_line_stride_compute(A, NULL));
    }
    /* one column on the GPU: the SpMV kernels (FastLoad-T on large matrices) are faster than
     * any SpMM kernel at k = 1 */
    if (ctx->backend == COAL_BACKEND_CUDA && is_vector(X) && is_vector(Y))
      return ops->spmv[coal_spmv_select(A)](A, alpha, X->data, beta, Y->data);
    kernel = coal_spmm_select(A, X->k, X->layout);
  }
  return ops->spmm[kernel](A, alpha, X, beta, Y);
}
