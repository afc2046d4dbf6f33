/* SpMM front end: argument checks, kernel selection, dispatch to the backend's op
 * (coal_backend(ctx)->spmm[kernel]). */
#include "spmm.h"
#include "swift.h"

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

/* Selection on the host: the row loop of row-split (no atomics, no format to build). */
coal_spmm_kernel coal_spmm_select_host(coal_mat A, int64_t k, coal_layout layout) {
  (void)A, (void)k, (void)layout;
  return COAL_SPMM_ROWSPLIT;
}

/* Selection on CUDA, O(1) after the first call (the longest row and, for large matrices, the
 * grid-line stride are computed once per matrix), fp64 measurements; k = 1 with contiguous X
 * and Y never gets here: coal_spmm runs the SpMV kernel of coal_spmv_select
 * (select.spmm_vector_as_spmv):
 *  - hubs (longest row > 32*mean + 256): merge-based on large matrices (nnz >= 2^20); smaller
 *    hub matrices take row-split, whose long rows get a CTA per segment (spmm_long.cu);
 *  - column-major blocks, k >= 32, nnz >= 2^20: Swift. Small matrices keep row-split on
 *    column-major blocks too (their strided rows of X stay in cache);
 *  - moderately long rows: row-split at every k, since its long rows have CTAs of their own;
 *  - large matrices (nnz >= 2^20) with short rows (mean < 8) at k >= 32: merge-based, unless
 *    the matrix is in a structured-grid order (coal_mat_line_stride_compute) and the block
 *    row-major: row-split walks tiles of grid lines there;
 *  - otherwise row-split.
 * Fitted to the shared matrix set: with these rules no (matrix, k) cell fell below 0.9x the
 * best cuSPARSE in the sweeps that interleave the variants' repetitions. The figures behind
 * each rule and the sweeps: bench/RESULTS.md, rule spmm-select. */
#define SPMM_HUB(mean, mx) ((double)(mx) > 32.0 * (mean) + 256.0)
#define SPMM_HUB_MERGE_NNZ (1 << 20)
#define SPMM_SHORT_MIN_K   32
#define SPMM_SHORT_MIN_NNZ (1 << 20)
#define SPMM_SHORT_MEAN    8.0
#define SPMM_SWIFT_MIN_K   32
#define SPMM_SWIFT_MIN_NNZ (1 << 20)

coal_spmm_kernel coal_spmm_select_cuda(coal_mat A, int64_t k, coal_layout layout) {
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

/* The rule reads the longest row and, on large matrices, the grid-line stride: computed before
 * an AUTO product so that a failure propagates. */
coal_status coal_spmm_select_prepare_cuda(coal_mat A) {
  COAL_CALL(coal_mat_max_row_len_compute(A, NULL));
  if (A->nnz >= SPMM_SHORT_MIN_NNZ) COAL_CALL(coal_mat_line_stride_compute(A, NULL));
  return COAL_SUCCESS;
}

coal_spmm_kernel coal_spmm_select(coal_mat A, int64_t k, coal_layout layout) {
  if (!A) return COAL_SPMM_ROWSPLIT;
  return coal_backend(A->ctx)->select.spmm(A, k, layout);
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
  const coal_backend_ops *ops = coal_backend(ctx);
  COAL_CALL(ops->mat.prepare(A));
  if (kernel == COAL_SPMM_AUTO) {
    if (ops->select.spmm_prepare) COAL_CALL(ops->select.spmm_prepare(A));
    /* one column on the GPU: the SpMV kernels (FastLoad-T on large matrices) are faster than
     * any SpMM kernel at k = 1 */
    if (ops->select.spmm_vector_as_spmv && is_vector(X) && is_vector(Y))
      return ops->spmv[ops->select.spmv(A)](A, alpha, X->data, beta, Y->data);
    kernel = ops->select.spmm(A, X->k, X->layout);
  }
  return ops->spmm[kernel](A, alpha, X, beta, Y);
}

coal_status coal_mat_set_swift_height(coal_mat A, int height) {
  if (!A) return COAL_ERR_ARG;
  COAL_CHECK(A->ctx, height >= 1 && height <= COAL_SWIFT_MAX_HEIGHT, COAL_ERR_ARG,
             "Swift height %d outside 1..%d", height, COAL_SWIFT_MAX_HEIGHT);
  if (height != coal_swift_height(A)) { /* only the Swift formats depend on it */
    COAL_CALL(coal_mat_setting_set(A, COAL_FMT_SWIFT_HEIGHT, height));
    coal_mat_format_drop_key(A, COAL_FMT_SWIFT);
    coal_mat_format_drop_key(A, COAL_FMT_CUDA_SWIFT);
  }
  return COAL_SUCCESS;
}
