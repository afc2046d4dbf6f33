/* SpMV front end: argument checks, kernel selection, dispatch to the backend's op. */
#include "spmv.h"
#include "fastload.h"

#include <string.h>

static const char *const kernel_names[COAL_SPMV_NKERNELS] = {"auto", "csr-vector", "csr-merge",
                                                             "fastload", "fastload-t"};

const char *coal_spmv_kernel_name(coal_spmv_kernel k) {
  return (k >= 0 && k < COAL_SPMV_NKERNELS) ? kernel_names[k] : "unknown";
}

coal_status coal_spmv_kernel_parse(const char *name, coal_spmv_kernel *k) {
  int i = coal_name_lookup(kernel_names, COAL_SPMV_NKERNELS, name);
  if (i < 0 || !k) return COAL_ERR_ARG;
  *k = (coal_spmv_kernel)i;
  return COAL_SUCCESS;
}

/* Selection on the host: the plain row loop. */
coal_spmv_kernel coal_spmv_select_host(coal_mat A) {
  (void)A;
  return COAL_SPMV_CSR_VECTOR;
}

/* Selection on CUDA, from two statistics (nnz and the longest row, computed once per matrix):
 *  - small matrices are launch-bound: csr-vector, one launch (fastload-t pays a second one for
 *    the pre-scale of the rows that blocks cut);
 *  - above COAL_SPMV_SMALL_NNZ nonzeros fastload-t, which reaches the copy bandwidth on the
 *    large Laplacians; the cut lies between the sizes where each was measured best;
 *  - a row far longer than the rest (longest > 32*mean + 256) makes one sub-warp walk it alone
 *    in csr-vector; FastLoad's scatter kernel spreads it over warps. In fp32 its atomics round
 *    every partial sum to float, so the result depends on the order of the atomics along a
 *    dense row: fp32 takes csr-merge there (one carry per CTA of 896 path items).
 * The figures behind each cut: bench/RESULTS.md, rule spmv-select. */
#define COAL_SPMV_SMALL_NNZ (1 << 19)

coal_spmv_kernel coal_spmv_select_cuda(coal_mat A) {
  if (A->nnz > COAL_SPMV_SMALL_NNZ) return COAL_SPMV_FASTLOAD_T;
  double mean = A->nrows ? (double)A->nnz / (double)A->nrows : 0.0;
  if ((double)coal_mat_max_row_len(A) > 32.0 * mean + 256.0)
    return A->dtype == COAL_F64 ? COAL_SPMV_FASTLOAD : COAL_SPMV_CSR_MERGE;
  return COAL_SPMV_CSR_VECTOR;
}

/* The rule reads the longest row: computed before an AUTO product so that a failure (the
 * download of a device-only matrix's row offsets) propagates. */
coal_status coal_spmv_select_prepare_cuda(coal_mat A) {
  return coal_mat_max_row_len_compute(A, NULL);
}

coal_spmv_kernel coal_spmv_select(coal_mat A) {
  if (!A) return COAL_SPMV_CSR_VECTOR;
  return coal_backend(A->ctx)->select.spmv(A);
}

coal_status coal_spmv_raw(coal_mat A, coal_spmv_kernel kernel, double alpha, const void *x,
                          double beta, void *y) {
  if (!A) return COAL_ERR_ARG;
  coal_ctx ctx = A->ctx;
  COAL_CHECK(ctx, kernel >= 0 && kernel < COAL_SPMV_NKERNELS, COAL_ERR_ARG, "bad kernel %d",
             (int)kernel);
  COAL_CHECK(ctx, (x || A->ncols == 0) && (y || A->nrows == 0), COAL_ERR_ARG, "NULL vector");
  const coal_backend_ops *ops = coal_backend(ctx);
  if (kernel == COAL_SPMV_AUTO) {
    if (ops->select.spmv_prepare) COAL_CALL(ops->select.spmv_prepare(A));
    kernel = ops->select.spmv(A);
  }
  COAL_CALL(ops->mat.prepare(A));
  return ops->spmv[kernel](A, alpha, x, beta, y);
}

coal_status coal_spmv(coal_mat A, coal_spmv_kernel kernel, double alpha, coal_bvec x, double beta,
                      coal_bvec y) {
  if (!A) return COAL_ERR_ARG;
  coal_ctx ctx = A->ctx;
  COAL_CHECK(ctx, x && y, COAL_ERR_ARG, "NULL block vector");
  COAL_CHECK(ctx, x->ctx == ctx && y->ctx == ctx, COAL_ERR_ARG,
             "matrix and vectors belong to different contexts");
  COAL_CHECK(ctx, x->dtype == A->dtype && y->dtype == A->dtype, COAL_ERR_ARG,
             "vector dtype differs from the matrix dtype");
  COAL_CHECK(ctx, x->n == A->ncols && y->n == A->nrows && x->k == y->k, COAL_ERR_ARG,
             "sizes: A is %d x %d, x is %lld x %lld, y is %lld x %lld", A->nrows, A->ncols,
             (long long)x->n, (long long)x->k, (long long)y->n, (long long)y->k);
  COAL_CHECK(ctx, x->data != y->data || x->n * x->k == 0, COAL_ERR_ARG, "x and y alias");
  if (x->k == 0) return COAL_SUCCESS;
  COAL_CHECK(ctx, x->k == 1 || (x->layout == COAL_COL_MAJOR && y->layout == COAL_COL_MAJOR),
             COAL_ERR_UNSUPPORTED, "SpMV on several columns needs column-major blocks (use SpMM)");
  size_t es = coal_dtype_size(A->dtype);
  for (int64_t j = 0; j < x->k; j++)
    COAL_CALL(coal_spmv_raw(A, kernel, alpha, (const char *)x->data + (size_t)(j * x->ld) * es,
                            beta, (char *)y->data + (size_t)(j * y->ld) * es));
  return COAL_SUCCESS;
}

/* ---- the FastLoad settings and statistics of a matrix (coalesce.h) ------------------------ */
coal_status coal_mat_set_fastload_height(coal_mat A, int height) {
  if (!A) return COAL_ERR_ARG;
  COAL_CHECK(A->ctx, height >= 1 && height <= 255, COAL_ERR_ARG,
             "FastLoad height %d outside 1..255", height);
  if (height != coal_fastload_height(A)) {
    /* only the FastLoad formats depend on the height: drop them (host and device) */
    COAL_CALL(coal_mat_setting_set(A, COAL_FMT_FASTLOAD_HEIGHT, height));
    const int keys[] = {COAL_FMT_FASTLOAD, COAL_FMT_FASTLOAD_T, COAL_FMT_CUDA_FASTLOAD,
                        COAL_FMT_CUDA_FASTLOAD_T};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) coal_mat_format_drop_key(A, keys[i]);
  }
  return COAL_SUCCESS;
}

coal_status coal_mat_get_fastload_height(coal_mat A, int *height) {
  if (!A) return COAL_ERR_ARG;
  COAL_CHECK(A->ctx, height, COAL_ERR_ARG, "NULL output");
  *height = coal_fastload_height(A);
  return COAL_SUCCESS;
}

coal_status coal_mat_fastload_order(coal_mat A, int transposed, const int32_t **perm) {
  if (!A) return COAL_ERR_ARG;
  COAL_CHECK(A->ctx, perm, COAL_ERR_ARG, "NULL output");
  const coal_fastload *f = NULL;
  COAL_CALL(coal_mat_fastload(A, transposed ? 1 : 0, &f));
  *perm = f->perm;
  return COAL_SUCCESS;
}

coal_status coal_mat_fastload_stats(coal_mat A, int transposed, coal_fastload_stats *st) {
  if (!A || !st) return COAL_ERR_ARG;
  const coal_fastload *f;
  COAL_CALL(coal_mat_fastload(A, transposed, &f));
  memset(st, 0, sizeof *st);
  st->nblocks = f->nblocks;
  for (int32_t b = 0; b < f->nblocks; b++) {
    int c = f->blk_class[b] & 3;
    if (c == COAL_FL_ONE_ROW)
      st->nblocks_one_row++;
    else if (c == COAL_FL_SEGMENTED)
      st->nblocks_segmented++;
    else
      st->nblocks_distinct++;
    if (f->blk_class[b] & COAL_FL_PARTIAL) st->nblocks_partial++;
  }
  st->natomics = f->natomics;
  st->build_seconds = f->build_seconds;
  return COAL_SUCCESS;
}
