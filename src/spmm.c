/* SpMM front end: argument checks, kernel selection, dispatch. The backend ops table has no
 * SpMM entry yet: the host twins are called directly and the CUDA backend answers
 * COAL_ERR_UNSUPPORTED until its kernels exist. */
#include "backend.h"
#include "../kernels/spmm.h"

#include <string.h>

static const char *const kernel_names[COAL_SPMM_NKERNELS] = {"auto", "swift", "rowsplit", "merge"};

static const coal_spmm_fn host_kernels[COAL_SPMM_NKERNELS] = {
    NULL, coal_spmm_swift_host, coal_spmm_rowsplit_host, coal_spmm_merge_host};

const char *coal_spmm_kernel_name(coal_spmm_kernel k) {
  return (k >= 0 && k < COAL_SPMM_NKERNELS) ? kernel_names[k] : "unknown";
}

coal_status coal_spmm_kernel_parse(const char *name, coal_spmm_kernel *k) {
  if (!name || !k) return COAL_ERR_ARG;
  for (int i = 0; i < COAL_SPMM_NKERNELS; i++)
    if (!strcmp(name, kernel_names[i])) {
      *k = (coal_spmm_kernel)i;
      return COAL_SUCCESS;
    }
  return COAL_ERR_ARG;
}

/* Mean nonzeros per row below which merge-based beats row-split (paper 001, section 5.4). */
#define SPMM_MERGE_MEAN_ROW 9.35

/* Selection, O(1). Host: the row loop of row-split (no atomics, no format to build).
 * CUDA (provisional until the kernels are measured, see issue 3): Swift on column-major
 * blocks, which its coalesced loads of X need; on row-major blocks the heuristic of paper 001,
 * merge-based when the mean row length is below 9.35, row-split otherwise. k does not enter
 * the rule yet. */
coal_spmm_kernel coal_spmm_select(coal_mat A, int64_t k, coal_layout layout) {
  (void)k;
  if (!A || A->ctx->backend != COAL_BACKEND_CUDA) return COAL_SPMM_ROWSPLIT;
  if (layout == COAL_COL_MAJOR) return COAL_SPMM_SWIFT;
  double mean = A->nrows > 0 ? (double)A->nnz / (double)A->nrows : 0.0;
  return mean < SPMM_MERGE_MEAN_ROW ? COAL_SPMM_MERGE : COAL_SPMM_ROWSPLIT;
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
  if (ctx->backend == COAL_BACKEND_CUDA)
    return COAL_ERROR(ctx, COAL_ERR_UNSUPPORTED,
                      "SpMM kernels are not implemented on the CUDA backend yet");
  if (X->k == 0 || A->nrows == 0) return COAL_SUCCESS;
  if (kernel == COAL_SPMM_AUTO) kernel = coal_spmm_select(A, X->k, X->layout);
  return host_kernels[kernel](A, alpha, X, beta, Y);
}
