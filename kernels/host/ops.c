/* Host backend operations table: memory is plain malloc, matrices are always current.
 * Matrices of a host context are always host-resident (their CSR arrays exist and are current;
 * only a CUDA context can hold a device-only matrix), so the host kernels read A->rowptr,
 * A->colind and A->values directly, without coal_mat_host. */
#include "../../src/backend.h"

#include <string.h>

static coal_status host_alloc(coal_ctx ctx, size_t bytes, void **p) {
  return coal_calloc(ctx, bytes, p);
}
static void host_release(coal_ctx ctx, void *p) {
  (void)ctx;
  coal_free(p);
}
static coal_status host_copy(coal_ctx ctx, void *dst, const void *src, size_t bytes) {
  (void)ctx;
  if (bytes) memmove(dst, src, bytes);
  return COAL_SUCCESS;
}
static coal_status host_sync(coal_ctx ctx) {
  (void)ctx;
  return COAL_SUCCESS;
}
static coal_status host_mat_prepare(coal_mat A) {
  (void)A;
  return COAL_SUCCESS;
}
static void host_mat_release(coal_mat A) { (void)A; }
/* The backend's copy is the host CSR itself: copies it into arrays other than A's own. */
static coal_status host_mat_download(coal_mat A, int32_t *rowptr, int32_t *colind, void *values) {
  COAL_CHECK(A->ctx, A->rowptr, COAL_ERR_STATE, "host matrix without host arrays");
  if (rowptr && rowptr != A->rowptr)
    memcpy(rowptr, A->rowptr, sizeof(int32_t) * ((size_t)A->nrows + 1));
  if (colind && colind != A->colind && A->nnz)
    memcpy(colind, A->colind, sizeof(int32_t) * (size_t)A->nnz);
  if (values && values != A->values && A->nnz)
    memcpy(values, A->values, coal_dtype_size(A->dtype) * (size_t)A->nnz);
  return COAL_SUCCESS;
}
static void host_mat_drop_formats(coal_mat A) { (void)A; }

const coal_backend_ops coal_host_ops = {
    .name = "host",
    .alloc = host_alloc,
    .release = host_release,
    .upload = host_copy,
    .download = host_copy,
    .copy = host_copy,
    .sync = host_sync,
    .mat_prepare = host_mat_prepare,
    .mat_release = host_mat_release,
    .mat_download = host_mat_download,
    .mat_drop_formats = host_mat_drop_formats,
    .spmv = {NULL, coal_spmv_csr_vector_host, coal_spmv_csr_merge_host, coal_spmv_fastload_host,
             coal_spmv_fastload_t_host},
    .spmm = {NULL, coal_spmm_swift_host, coal_spmm_rowsplit_host, coal_spmm_merge_host},
};
