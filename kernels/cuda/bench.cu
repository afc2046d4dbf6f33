/* Benchmark support of the CUDA backend (the bench sub-table; front ends in kernels/bench.c):
 * event timing on the context's stream, device copy bandwidth, the cuSPARSE SpMV and SpMM
 * references on the matrix's own device CSR, the FastLoad build time. */
#include "../bench.h"
#include "cuda_internal.h"

#include <stdlib.h>

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* One timed call in microseconds: CUDA events around it on the context's stream. */
coal_status coal_bench_time_cuda(coal_ctx ctx, coal_bench_fn fn, void *arg, double *us) {
  struct coal_cuda_ctx *c = ctx->cuda;
  COAL_CUDA_CALL(ctx, cudaEventRecord(c->ev_start, c->stream));
  COAL_CALL(fn(arg));
  COAL_CUDA_CALL(ctx, cudaEventRecord(c->ev_stop, c->stream));
  COAL_CUDA_CALL(ctx, cudaEventSynchronize(c->ev_stop));
  float ms = 0;
  COAL_CUDA_CALL(ctx, cudaEventElapsedTime(&ms, c->ev_start, c->ev_stop));
  *us = (double)ms * 1e3;
  return COAL_SUCCESS;
}

/* ---- copy bandwidth ------------------------------------------------------------------------ */
static coal_status copy_timings(coal_ctx ctx, void *dst, void *src, size_t bytes, double *ms_sorted,
                                int reps) {
  struct coal_cuda_ctx *c = ctx->cuda;
  COAL_CUDA_CALL(ctx, cudaMemsetAsync(src, 1, bytes, c->stream));
  for (int i = 0; i < 3; i++)
    COAL_CUDA_CALL(ctx, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, c->stream));
  for (int i = 0; i < reps; i++) {
    COAL_CUDA_CALL(ctx, cudaEventRecord(c->ev_start, c->stream));
    COAL_CUDA_CALL(ctx, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, c->stream));
    COAL_CUDA_CALL(ctx, cudaEventRecord(c->ev_stop, c->stream));
    COAL_CUDA_CALL(ctx, cudaEventSynchronize(c->ev_stop));
    float ms = 0;
    COAL_CUDA_CALL(ctx, cudaEventElapsedTime(&ms, c->ev_start, c->ev_stop));
    ms_sorted[i] = ms;
  }
  qsort(ms_sorted, (size_t)reps, sizeof(double), cmp_double);
  return COAL_SUCCESS;
}

coal_status coal_bench_copy_bandwidth_cuda(coal_ctx ctx, size_t bytes, double *gbps) {
  enum { REPS = 20 };
  double ms[REPS];
  void *a = NULL, *b = NULL;
  coal_status st;
  COAL_CALL_GOTO(st, coal_cuda_malloc(ctx, bytes, &a), done);
  COAL_CALL_GOTO(st, coal_cuda_malloc(ctx, bytes, &b), done);
  COAL_CALL_GOTO(st, copy_timings(ctx, b, a, bytes, ms, REPS), done);
  /* bytes read + bytes written */
  *gbps = ms[REPS / 2] > 0 ? 2.0 * (double)bytes / (ms[REPS / 2] * 1e-3) / 1e9 : 0.0;
done:
  coal_cuda_free(a);
  coal_cuda_free(b);
  return st;
}

/* ---- cuSPARSE reference -------------------------------------------------------------------- *
 * The descriptor points at A's own device CSR (no copy): it stays valid while A's device state
 * does, i.e. until A's values or FastLoad height change or A is destroyed. */
struct coal_cusparse_spmv {
  coal_ctx ctx;
  cudaDataType type;
  cusparseSpMVAlg_t alg;
  cusparseSpMatDescr_t mat;
  cusparseConstDnVecDescr_t x;
  cusparseDnVecDescr_t y;
  void *buffer;
};

static coal_status cusparse_setup(coal_mat A, coal_cusparse_spmv *h, const void *x, void *y) {
  coal_ctx ctx = A->ctx;
  COAL_CALL(coal_mat_prepare_cuda(A));
  struct coal_mat_cuda *d = NULL;
  COAL_CALL(coal_cuda_mat(A, &d));
  cusparseHandle_t sp = ctx->cuda->sparse;
  COAL_CUSPARSE_CALL(ctx, cusparseCreateCsr(&h->mat, A->nrows, A->ncols, A->nnz, d->rowptr,
                                            d->colind, d->values, CUSPARSE_INDEX_32I,
                                            CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, h->type));
  COAL_CUSPARSE_CALL(ctx, cusparseCreateConstDnVec(&h->x, A->ncols, x, h->type));
  COAL_CUSPARSE_CALL(ctx, cusparseCreateDnVec(&h->y, A->nrows, y, h->type));
  double one = 1.0, zero = 0.0;
  float onef = 1.0f, zerof = 0.0f;
  const void *al = h->type == CUDA_R_64F ? (const void *)&one : (const void *)&onef;
  const void *be = h->type == CUDA_R_64F ? (const void *)&zero : (const void *)&zerof;
  size_t bytes = 0;
  COAL_CUSPARSE_CALL(ctx, cusparseSpMV_bufferSize(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, al, h->mat,
                                                  h->x, be, h->y, h->type, h->alg, &bytes));
  COAL_CALL(coal_cuda_malloc(ctx, bytes, &h->buffer));
  COAL_CUSPARSE_CALL(ctx, cusparseSpMV_preprocess(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, al, h->mat,
                                                  h->x, be, h->y, h->type, h->alg, h->buffer));
  return COAL_SUCCESS;
}

coal_status coal_cusparse_spmv_create_cuda(coal_mat A, int alg, const void *x, void *y,
                                           coal_cusparse_spmv **out) {
  if (!A || !out) return COAL_ERR_ARG;
  coal_ctx ctx = A->ctx;
  *out = NULL;
  COAL_CHECK(ctx, alg == 1 || alg == 2, COAL_ERR_ARG, "cuSPARSE CSR algorithm %d (1 or 2)", alg);
  COAL_CHECK(ctx, (x || A->ncols == 0) && (y || A->nrows == 0), COAL_ERR_ARG, "NULL vector");
  coal_cusparse_spmv *h = NULL;
  COAL_CALL(coal_calloc(ctx, sizeof *h, (void **)&h));
  h->ctx = ctx;
  h->type = A->dtype == COAL_F64 ? CUDA_R_64F : CUDA_R_32F;
  h->alg = alg == 1 ? CUSPARSE_SPMV_CSR_ALG1 : CUSPARSE_SPMV_CSR_ALG2;
  coal_status st = cusparse_setup(A, h, x, y);
  if (st != COAL_SUCCESS) {
    coal_cusparse_spmv_destroy_cuda(h);
    return st;
  }
  *out = h;
  return COAL_SUCCESS;
}

coal_status coal_cusparse_spmv_run_cuda(coal_cusparse_spmv *h, double alpha, double beta) {
  if (!h) return COAL_ERR_ARG;
  coal_ctx ctx = h->ctx;
  float af = (float)alpha, bf = (float)beta;
  const void *al = h->type == CUDA_R_64F ? (const void *)&alpha : (const void *)&af;
  const void *be = h->type == CUDA_R_64F ? (const void *)&beta : (const void *)&bf;
  COAL_CUSPARSE_CALL(ctx, cusparseSpMV(ctx->cuda->sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, al,
                                       h->mat, h->x, be, h->y, h->type, h->alg, h->buffer));
  return COAL_SUCCESS;
}

void coal_cusparse_spmv_destroy_cuda(coal_cusparse_spmv *h) {
  if (!h) return;
  if (h->mat) (void)cusparseDestroySpMat(h->mat);
  if (h->x) (void)cusparseDestroyDnVec(h->x);
  if (h->y) (void)cusparseDestroyDnVec(h->y);
  coal_cuda_free(h->buffer);
  coal_free(h);
}

/* ---- FastLoad build on the GPU ------------------------------------------------------------- */
coal_status coal_fastload_build_time_cuda(coal_mat A, int transposed, double *ms) {
  if (!A || !ms) return COAL_ERR_ARG;
  COAL_CALL(coal_mat_prepare_cuda(A));
  struct coal_mat_cuda *d = NULL;
  COAL_CALL(coal_cuda_mat(A, &d));
  struct coal_fastload_dev *fd = NULL;
  COAL_CALL(coal_cuda_fastload_entry(A, transposed, &fd));
  for (int rep = 0; rep < 2; rep++) { /* the first build is the untimed warm-up */
    coal_cuda_fastload_dev_free(fd);
    COAL_CALL(coal_fastload_build_cuda(A, transposed, fd));
    fd->built = 1;
  }
  *ms = fd->build_ms;
  return COAL_SUCCESS;
}

/* ---- cuSPARSE SpMM reference --------------------------------------------------------------- *
 * Like the SpMV reference, the descriptor points at A's own device CSR. */
struct coal_cusparse_spmm {
  coal_ctx ctx;
  cudaDataType type;
  cusparseSpMMAlg_t alg;
  cusparseSpMatDescr_t mat;
  cusparseConstDnMatDescr_t x;
  cusparseDnMatDescr_t y;
  void *buffer;
};

/* A cuSPARSE refusal of the combination (algorithm, layout, sizes) is COAL_ERR_UNSUPPORTED. */
#define COAL_CUSPARSE_SPMM_CALL(ctx, expr)                                                         \
  do {                                                                                             \
    cusparseStatus_t coal_spmm_err_ = (expr);                                                      \
    if (coal_spmm_err_ == CUSPARSE_STATUS_NOT_SUPPORTED ||                                         \
        coal_spmm_err_ == CUSPARSE_STATUS_INVALID_VALUE)                                           \
      return COAL_ERROR((ctx), COAL_ERR_UNSUPPORTED, "%s: %s", #expr,                              \
                        cusparseGetErrorString(coal_spmm_err_));                                   \
    if (coal_spmm_err_ != CUSPARSE_STATUS_SUCCESS)                                                 \
      return COAL_ERROR((ctx),                                                                     \
                        coal_spmm_err_ == CUSPARSE_STATUS_ALLOC_FAILED ? COAL_ERR_DEVICE_MEMORY    \
                                                                       : COAL_ERR_CUDA,            \
                        "%s: %s", #expr, cusparseGetErrorString(coal_spmm_err_));                  \
  } while (0)

static coal_status cusparse_spmm_setup(coal_mat A, coal_cusparse_spmm *h, int64_t k,
                                       coal_layout layout, const void *X, int64_t ldx, void *Y,
                                       int64_t ldy) {
  coal_ctx ctx = A->ctx;
  COAL_CALL(coal_mat_prepare_cuda(A));
  struct coal_mat_cuda *d = NULL;
  COAL_CALL(coal_cuda_mat(A, &d));
  cusparseHandle_t sp = ctx->cuda->sparse;
  const cusparseOrder_t order = layout == COAL_ROW_MAJOR ? CUSPARSE_ORDER_ROW : CUSPARSE_ORDER_COL;
  COAL_CUSPARSE_CALL(ctx, cusparseCreateCsr(&h->mat, A->nrows, A->ncols, A->nnz, d->rowptr,
                                            d->colind, d->values, CUSPARSE_INDEX_32I,
                                            CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, h->type));
  COAL_CUSPARSE_SPMM_CALL(ctx,
                          cusparseCreateConstDnMat(&h->x, A->ncols, k, ldx, X, h->type, order));
  COAL_CUSPARSE_SPMM_CALL(ctx, cusparseCreateDnMat(&h->y, A->nrows, k, ldy, Y, h->type, order));
  double one = 1.0, zero = 0.0;
  float onef = 1.0f, zerof = 0.0f;
  const void *al = h->type == CUDA_R_64F ? (const void *)&one : (const void *)&onef;
  const void *be = h->type == CUDA_R_64F ? (const void *)&zero : (const void *)&zerof;
  const cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;
  size_t bytes = 0;
  COAL_CUSPARSE_SPMM_CALL(ctx, cusparseSpMM_bufferSize(sp, op, op, al, h->mat, h->x, be, h->y,
                                                       h->type, h->alg, &bytes));
  COAL_CALL(coal_cuda_malloc(ctx, bytes, &h->buffer));
  /* preprocessing helps ALG1 and ALG3; an algorithm without it may refuse: run unprepared */
  const cusparseStatus_t pst =
      cusparseSpMM_preprocess(sp, op, op, al, h->mat, h->x, be, h->y, h->type, h->alg, h->buffer);
  if (pst != CUSPARSE_STATUS_NOT_SUPPORTED) COAL_CUSPARSE_SPMM_CALL(ctx, pst);
  return COAL_SUCCESS;
}

coal_status coal_cusparse_spmm_create_cuda(coal_mat A, int alg, int64_t k, coal_layout layout,
                                           const void *X, int64_t ldx, void *Y, int64_t ldy,
                                           coal_cusparse_spmm **out) {
  if (!A || !out) return COAL_ERR_ARG;
  coal_ctx ctx = A->ctx;
  *out = NULL;
  COAL_CHECK(ctx, alg >= 1 && alg <= 3, COAL_ERR_ARG, "cuSPARSE SpMM CSR algorithm %d (1..3)", alg);
  COAL_CHECK(ctx, k >= 1 && (X || A->ncols == 0) && (Y || A->nrows == 0), COAL_ERR_ARG,
             "bad SpMM block (k = %lld)", (long long)k);
  COAL_CHECK(ctx, layout == COAL_COL_MAJOR || layout == COAL_ROW_MAJOR, COAL_ERR_ARG, "bad layout");
  coal_cusparse_spmm *h = NULL;
  COAL_CALL(coal_calloc(ctx, sizeof *h, (void **)&h));
  h->ctx = ctx;
  h->type = A->dtype == COAL_F64 ? CUDA_R_64F : CUDA_R_32F;
  h->alg = alg == 1   ? CUSPARSE_SPMM_CSR_ALG1
           : alg == 2 ? CUSPARSE_SPMM_CSR_ALG2
                      : CUSPARSE_SPMM_CSR_ALG3;
  coal_status st = cusparse_spmm_setup(A, h, k, layout, X, ldx, Y, ldy);
  if (st != COAL_SUCCESS) {
    coal_cusparse_spmm_destroy_cuda(h);
    return st;
  }
  *out = h;
  return COAL_SUCCESS;
}

coal_status coal_cusparse_spmm_run_cuda(coal_cusparse_spmm *h, double alpha, double beta) {
  if (!h) return COAL_ERR_ARG;
  coal_ctx ctx = h->ctx;
  float af = (float)alpha, bf = (float)beta;
  const void *al = h->type == CUDA_R_64F ? (const void *)&alpha : (const void *)&af;
  const void *be = h->type == CUDA_R_64F ? (const void *)&beta : (const void *)&bf;
  const cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;
  COAL_CUSPARSE_CALL(ctx, cusparseSpMM(ctx->cuda->sparse, op, op, al, h->mat, h->x, be, h->y,
                                       h->type, h->alg, h->buffer));
  return COAL_SUCCESS;
}

void coal_cusparse_spmm_destroy_cuda(coal_cusparse_spmm *h) {
  if (!h) return;
  if (h->mat) (void)cusparseDestroySpMat(h->mat);
  if (h->x) (void)cusparseDestroyDnMat(h->x);
  if (h->y) (void)cusparseDestroyDnMat(h->y);
  coal_cuda_free(h->buffer);
  coal_free(h);
}
