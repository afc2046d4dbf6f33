/* cuSPARSE SpGEMM reference for `coalesce bench spgemm` (kernels/bench.h; front ends in
 * kernels/bench.c).
 *
 * run: C = A*B exactly as a user calls cuSPARSE (generic API, CUSPARSE_SPGEMM_DEFAULT): C's
 * and the SpGEMM descriptors, workEstimation (size query, buffer, call), compute (size query,
 * buffer, call), C's arrays, copy; everything but C freed at the end, C kept for the check
 * (and freed by the next run or destroy). A's and B's descriptors point at their device CSR
 * and are made once. peak_bytes: the two external buffers plus C.
 * reuse: the numeric-only path (cusparseSpGEMMreuse_*): the structure once (reuse_setup), then
 * reuse_compute per call. */
#include "../bench.h"
#include "spgemm_tile.cuh"

#include <string.h>

struct coal_cusparse_spgemm {
  coal_ctx ctx;
  coal_mat A, B;
  cudaDataType type;
  cusparseSpMatDescr_t a, b;
  /* result of the last run (or of reuse_setup) */
  cusparseSpMatDescr_t c;
  cusparseSpGEMMDescr_t desc;
  int64_t m, n, nnz;
  int32_t *c_rowptr, *c_colind;
  void *c_val;
  size_t peak_bytes;
  void *buf[5]; /* reuse path: buffers kept for reuse_compute */
};

namespace {

const void *scalar(cudaDataType t, int one) {
  static const double d1 = 1.0, d0 = 0.0;
  static const float f1 = 1.0f, f0 = 0.0f;
  if (t == CUDA_R_64F) return one ? (const void *)&d1 : (const void *)&d0;
  return one ? (const void *)&f1 : (const void *)&f0;
}

void drop_result(coal_cusparse_spgemm *h) {
  if (h->c) (void)cusparseDestroySpMat(h->c);
  if (h->desc) (void)cusparseSpGEMM_destroyDescr(h->desc);
  h->c = NULL, h->desc = NULL;
  coal_cuda_free(h->c_rowptr), coal_cuda_free(h->c_colind), coal_cuda_free(h->c_val);
  h->c_rowptr = NULL, h->c_colind = NULL, h->c_val = NULL;
  for (int i = 0; i < 5; i++) coal_cuda_free(h->buf[i]), h->buf[i] = NULL;
  h->nnz = 0;
}

/* C's descriptor (empty) and the SpGEMM descriptor; C's row offsets allocated. */
coal_status new_result(coal_cusparse_spgemm *h) {
  coal_ctx ctx = h->ctx;
  drop_result(h);
  COAL_CALL(coal_cuda_malloc(ctx, sizeof(int32_t) * ((size_t)h->m + 1), (void **)&h->c_rowptr));
  COAL_CUSPARSE_CALL(ctx, cusparseCreateCsr(&h->c, h->m, h->n, 0, h->c_rowptr, NULL, NULL,
                                            CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                            CUSPARSE_INDEX_BASE_ZERO, h->type));
  COAL_CUSPARSE_CALL(ctx, cusparseSpGEMM_createDescr(&h->desc));
  return COAL_SUCCESS;
}

/* C's column and value arrays at the size cuSPARSE reports, attached to its descriptor. */
coal_status attach_result(coal_cusparse_spgemm *h) {
  coal_ctx ctx = h->ctx;
  int64_t rows = 0, cols = 0, nnz = 0;
  COAL_CUSPARSE_CALL(ctx, cusparseSpMatGetSize(h->c, &rows, &cols, &nnz));
  h->nnz = nnz;
  COAL_CALL(coal_cuda_malloc(ctx, sizeof(int32_t) * (size_t)nnz, (void **)&h->c_colind));
  COAL_CALL(coal_cuda_malloc(ctx, coal_dtype_size(h->A->dtype) * (size_t)nnz, &h->c_val));
  COAL_CUSPARSE_CALL(ctx, cusparseCsrSetPointers(h->c, h->c_rowptr, h->c_colind, h->c_val));
  return COAL_SUCCESS;
}

const cusparseOperation_t kOp = CUSPARSE_OPERATION_NON_TRANSPOSE;
const cusparseSpGEMMAlg_t kAlg = CUSPARSE_SPGEMM_DEFAULT;

} // namespace

coal_status coal_cusparse_spgemm_create_cuda(coal_mat A, coal_mat B, coal_cusparse_spgemm **out) {
  if (!A || !B || !out) return COAL_ERR_ARG;
  coal_ctx ctx = A->ctx;
  *out = NULL;
  COAL_CHECK(ctx, B->ctx == ctx, COAL_ERR_ARG,
             "the cuSPARSE reference needs two matrices on one CUDA context");
  COAL_CHECK(ctx, A->ncols == B->nrows && A->dtype == B->dtype, COAL_ERR_ARG,
             "cuSPARSE SpGEMM: incompatible operands");
  COAL_CALL(coal_mat_prepare_cuda(A));
  COAL_CALL(coal_mat_prepare_cuda(B));
  coal_cusparse_spgemm *h = NULL;
  COAL_CALL(coal_calloc(ctx, sizeof *h, (void **)&h));
  h->ctx = ctx, h->A = A, h->B = B, h->m = A->nrows, h->n = B->ncols;
  h->type = A->dtype == COAL_F64 ? CUDA_R_64F : CUDA_R_32F;
  cusparseStatus_t s1 = cusparseCreateCsr(&h->a, A->nrows, A->ncols, A->nnz, A->dev->rowptr,
                                          A->dev->colind, A->dev->values, CUSPARSE_INDEX_32I,
                                          CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, h->type);
  cusparseStatus_t s2 = cusparseCreateCsr(&h->b, B->nrows, B->ncols, B->nnz, B->dev->rowptr,
                                          B->dev->colind, B->dev->values, CUSPARSE_INDEX_32I,
                                          CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, h->type);
  if (s1 != CUSPARSE_STATUS_SUCCESS || s2 != CUSPARSE_STATUS_SUCCESS) {
    coal_cusparse_spgemm_destroy_cuda(h);
    return COAL_ERROR(ctx, COAL_ERR_CUDA, "cusparseCreateCsr: %s",
                      cusparseGetErrorString(s1 != CUSPARSE_STATUS_SUCCESS ? s1 : s2));
  }
  *out = h;
  return COAL_SUCCESS;
}

coal_status coal_cusparse_spgemm_run_cuda(coal_cusparse_spgemm *h) {
  if (!h) return COAL_ERR_ARG;
  coal_ctx ctx = h->ctx;
  cusparseHandle_t sp = ctx->cuda->sparse;
  const void *one = scalar(h->type, 1), *zero = scalar(h->type, 0);
  COAL_CALL(new_result(h));
  size_t s1 = 0, s2 = 0;
  COAL_CUSPARSE_CALL(ctx, cusparseSpGEMM_workEstimation(sp, kOp, kOp, one, h->a, h->b, zero, h->c,
                                                        h->type, kAlg, h->desc, &s1, NULL));
  COAL_CALL(coal_cuda_malloc(ctx, s1, &h->buf[0]));
  COAL_CUSPARSE_CALL(ctx, cusparseSpGEMM_workEstimation(sp, kOp, kOp, one, h->a, h->b, zero, h->c,
                                                        h->type, kAlg, h->desc, &s1, h->buf[0]));
  COAL_CUSPARSE_CALL(ctx, cusparseSpGEMM_compute(sp, kOp, kOp, one, h->a, h->b, zero, h->c, h->type,
                                                 kAlg, h->desc, &s2, NULL));
  COAL_CALL(coal_cuda_malloc(ctx, s2, &h->buf[1]));
  COAL_CUSPARSE_CALL(ctx, cusparseSpGEMM_compute(sp, kOp, kOp, one, h->a, h->b, zero, h->c, h->type,
                                                 kAlg, h->desc, &s2, h->buf[1]));
  COAL_CALL(attach_result(h));
  COAL_CUSPARSE_CALL(
      ctx, cusparseSpGEMM_copy(sp, kOp, kOp, one, h->a, h->b, zero, h->c, h->type, kAlg, h->desc));
  const size_t cb = sizeof(int32_t) * ((size_t)h->m + 1 + (size_t)h->nnz) +
                    coal_dtype_size(h->A->dtype) * (size_t)h->nnz;
  h->peak_bytes = s1 + s2 + cb;
  coal_cuda_free(h->buf[0]), coal_cuda_free(h->buf[1]);
  h->buf[0] = h->buf[1] = NULL;
  return COAL_SUCCESS;
}

coal_status coal_cusparse_spgemm_reuse_setup_cuda(coal_cusparse_spgemm *h) {
  if (!h) return COAL_ERR_ARG;
  coal_ctx ctx = h->ctx;
  cusparseHandle_t sp = ctx->cuda->sparse;
  COAL_CALL(new_result(h));
  size_t s[5] = {0, 0, 0, 0, 0};
  COAL_CUSPARSE_CALL(ctx, cusparseSpGEMMreuse_workEstimation(sp, kOp, kOp, h->a, h->b, h->c, kAlg,
                                                             h->desc, &s[0], NULL));
  COAL_CALL(coal_cuda_malloc(ctx, s[0], &h->buf[0]));
  COAL_CUSPARSE_CALL(ctx, cusparseSpGEMMreuse_workEstimation(sp, kOp, kOp, h->a, h->b, h->c, kAlg,
                                                             h->desc, &s[0], h->buf[0]));
  COAL_CUSPARSE_CALL(ctx, cusparseSpGEMMreuse_nnz(sp, kOp, kOp, h->a, h->b, h->c, kAlg, h->desc,
                                                  &s[1], NULL, &s[2], NULL, &s[3], NULL));
  for (int i = 1; i < 4; i++) COAL_CALL(coal_cuda_malloc(ctx, s[i], &h->buf[i]));
  COAL_CUSPARSE_CALL(ctx,
                     cusparseSpGEMMreuse_nnz(sp, kOp, kOp, h->a, h->b, h->c, kAlg, h->desc, &s[1],
                                             h->buf[1], &s[2], h->buf[2], &s[3], h->buf[3]));
  COAL_CALL(attach_result(h));
  COAL_CUSPARSE_CALL(
      ctx, cusparseSpGEMMreuse_copy(sp, kOp, kOp, h->a, h->b, h->c, kAlg, h->desc, &s[4], NULL));
  COAL_CALL(coal_cuda_malloc(ctx, s[4], &h->buf[4]));
  COAL_CUSPARSE_CALL(ctx, cusparseSpGEMMreuse_copy(sp, kOp, kOp, h->a, h->b, h->c, kAlg, h->desc,
                                                   &s[4], h->buf[4]));
  COAL_CUDA_CALL(ctx, cudaStreamSynchronize(coal_stream(ctx)));
  /* as in the cuSPARSE sample: buffers 1, 2 and 3 are not needed by reuse_compute */
  for (int i = 0; i < 3; i++) coal_cuda_free(h->buf[i]), h->buf[i] = NULL;
  return coal_cusparse_spgemm_reuse_compute_cuda(h);
}

coal_status coal_cusparse_spgemm_reuse_compute_cuda(coal_cusparse_spgemm *h) {
  if (!h) return COAL_ERR_ARG;
  coal_ctx ctx = h->ctx;
  COAL_CHECK(ctx, h->buf[4], COAL_ERR_STATE, "cuSPARSE reuse path not set up");
  COAL_CUSPARSE_CALL(
      ctx, cusparseSpGEMMreuse_compute(ctx->cuda->sparse, kOp, kOp, scalar(h->type, 1), h->a, h->b,
                                       scalar(h->type, 0), h->c, h->type, kAlg, h->desc));
  return COAL_SUCCESS;
}

coal_status coal_cusparse_spgemm_result_cuda(coal_cusparse_spgemm *h, coal_mat *C, size_t *peak) {
  if (!h || !C) return COAL_ERR_ARG;
  coal_ctx ctx = h->ctx;
  *C = NULL;
  COAL_CHECK(ctx, h->c, COAL_ERR_STATE, "no cuSPARSE result");
  const size_t es = coal_dtype_size(h->A->dtype), nz = (size_t)h->nnz;
  int32_t *rp = NULL, *ci = NULL;
  void *v = NULL;
  coal_status st;
  cudaStream_t s = coal_stream(ctx);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * ((size_t)h->m + 1), (void **)&rp), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * nz, (void **)&ci), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, es * nz, &v), fail);
  COAL_CALL_GOTO(st, coal_spgemm_dev::d2h(ctx, rp, h->c_rowptr, sizeof(int32_t) * (h->m + 1)),
                 fail);
  COAL_CALL_GOTO(st, coal_spgemm_dev::d2h(ctx, ci, h->c_colind, sizeof(int32_t) * nz), fail);
  COAL_CALL_GOTO(st, coal_spgemm_dev::d2h(ctx, v, h->c_val, es * nz), fail);
  COAL_CALL_GOTO(st, coal_spgemm_dev::cuda_call(ctx, cudaStreamSynchronize(s)), fail);
  if (peak) *peak = h->peak_bytes;
  {
    /* through the public constructor, which sorts columns (cuSPARSE does not promise it) */
    int64_t *rp64 = NULL;
    COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int64_t) * ((size_t)h->m + 1), (void **)&rp64),
                   fail);
    for (int64_t i = 0; i <= h->m; i++) rp64[i] = rp[i];
    st = coal_mat_create_csr(ctx, h->m, h->n, rp64, ci, v, h->A->dtype, C);
    coal_free(rp64);
  }
fail:
  coal_free(rp), coal_free(ci), coal_free(v);
  return st;
}

void coal_cusparse_spgemm_destroy_cuda(coal_cusparse_spgemm *h) {
  if (!h) return;
  drop_result(h);
  if (h->a) (void)cusparseDestroySpMat(h->a);
  if (h->b) (void)cusparseDestroySpMat(h->b);
  coal_free(h);
}
