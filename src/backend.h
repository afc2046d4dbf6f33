/* Typed backend operations table (libCEED style): the front end checks arguments, then calls
 * the op of the context's backend. A backend that was not compiled has a table whose entries
 * answer COAL_ERR_NOT_COMPILED. */
#ifndef COAL_BACKEND_H
#define COAL_BACKEND_H

#include "internal.h"
#include "../kernels/spmm.h"
#include "../kernels/spmv.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct coal_backend_ops {
  const char *name;
  /* memory in the backend's space */
  coal_status (*alloc)(coal_ctx ctx, size_t bytes, void **p);
  void (*release)(coal_ctx ctx, void *p);
  coal_status (*upload)(coal_ctx ctx, void *dst, const void *src, size_t bytes); /* host->backend */
  coal_status (*download)(coal_ctx ctx, void *dst, const void *src,
                          size_t bytes);                                       /* backend->host */
  coal_status (*copy)(coal_ctx ctx, void *dst, const void *src, size_t bytes); /* within backend */
  coal_status (*sync)(coal_ctx ctx);
  /* matrix residency: make device copies current / drop them */
  coal_status (*mat_prepare)(coal_mat A);
  void (*mat_release)(coal_mat A);
  /* Copies A's backend CSR into host arrays: each of rowptr [nrows+1], colind [nnz] and values
   * [nnz] that is not NULL (values need the backend's values current). Synchronous. */
  coal_status (*mat_download)(coal_mat A, int32_t *rowptr, int32_t *colind, void *values);
  /* Drops the backend's derived formats of A that hold values (FastLoad, Swift); keeps the CSR
   * copy and the structure-only arrays. Nothing to do without a device copy. */
  void (*mat_drop_formats)(coal_mat A);
  coal_spmv_fn spmv[COAL_SPMV_NKERNELS]; /* indexed by coal_spmv_kernel; [AUTO] unused */
  coal_spmm_fn spmm[COAL_SPMM_NKERNELS]; /* indexed by coal_spmm_kernel; [AUTO] unused */
} coal_backend_ops;

extern const coal_backend_ops coal_host_ops;
extern const coal_backend_ops coal_cuda_ops;

static inline const coal_backend_ops *coal_ops(coal_ctx ctx) {
  return ctx->backend == COAL_BACKEND_CUDA ? &coal_cuda_ops : &coal_host_ops;
}

/* CUDA context life cycle (kernels/cuda/context.cu, or the stub when not compiled). */
coal_status coal_cuda_ctx_init(coal_ctx ctx);
void coal_cuda_ctx_free(coal_ctx ctx);
int coal_cuda_device_count(void);
/* Page-locks an existing host range for fast transfers (cudaHostRegister), so that copies from
 * and to it run at the bus speed instead of through the driver's pageable staging. The caller
 * keeps the range alive and unregisters it before it is freed. COAL_ERR_UNSUPPORTED when the
 * range cannot be registered (already registered, not a CUDA build): the caller then copies
 * from pageable memory, which is slower but correct. */
coal_status coal_cuda_host_register(coal_ctx ctx, void *p, size_t bytes);
void coal_cuda_host_unregister(void *p);

#ifdef __cplusplus
}
#endif
#endif
