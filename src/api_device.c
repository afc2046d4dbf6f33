/* The public device arrays of coalesce_device.h: memory of a context's backend and the
 * single-vector operations of the PETSc vector type, each a thin front end over the backend
 * tables (argument checks here, the work in the backend). */
#include "backend.h"

/* The length of a single-vector operation: n >= 0 entries. */
#define CHECK_N(ctx, n)                                                                            \
  COAL_CHECK((ctx), (n) >= 0, COAL_ERR_ARG, "negative length %lld", (long long)(n))

coal_status coal_device_alloc(coal_ctx ctx, size_t bytes, void **p) {
  if (!ctx) return COAL_ERR_ARG;
  COAL_CHECK(ctx, p, COAL_ERR_ARG, "NULL output");
  *p = NULL;
  return coal_backend(ctx)->mem.alloc(ctx, bytes, p);
}

void coal_device_free(coal_ctx ctx, void *p) {
  if (ctx && p) coal_backend(ctx)->mem.release(ctx, p);
}

coal_status coal_device_upload(coal_ctx ctx, void *dst, const void *src, size_t bytes) {
  if (!ctx) return COAL_ERR_ARG;
  COAL_CHECK(ctx, (dst && src) || !bytes, COAL_ERR_ARG, "NULL array");
  return coal_backend(ctx)->mem.upload(ctx, dst, src, bytes);
}

coal_status coal_device_download(coal_ctx ctx, void *dst, const void *src, size_t bytes) {
  if (!ctx) return COAL_ERR_ARG;
  COAL_CHECK(ctx, (dst && src) || !bytes, COAL_ERR_ARG, "NULL array");
  return coal_backend(ctx)->mem.download(ctx, dst, src, bytes);
}

coal_status coal_device_copy(coal_ctx ctx, void *dst, const void *src, size_t bytes) {
  if (!ctx) return COAL_ERR_ARG;
  COAL_CHECK(ctx, (dst && src) || !bytes, COAL_ERR_ARG, "NULL array");
  return coal_backend(ctx)->mem.copy(ctx, dst, src, bytes);
}

coal_status coal_device_stats_get(coal_ctx ctx, coal_device_stats *s) {
  if (!ctx) return COAL_ERR_ARG;
  COAL_CHECK(ctx, s, COAL_ERR_ARG, "NULL output");
  *s = ctx->stats;
  return COAL_SUCCESS;
}

coal_status coal_host_register(coal_ctx ctx, void *p, size_t bytes) {
  if (!ctx) return COAL_ERR_ARG;
  /* host memory gains nothing from page-locking: only a backend with a host_register entry (CUDA)
   * registers */
  const coal_mem_ops *mem = &coal_backend(ctx)->mem;
  COAL_CHECK(ctx, mem->host_register, COAL_ERR_UNSUPPORTED,
             "page-locking needs a CUDA context");
  return mem->host_register(ctx, p, bytes);
}

/* No context: memory is page-locked only by the CUDA backend (coal_host_register), so its table's
 * entry undoes it; without a CUDA table nothing was registered. */
void coal_host_unregister(void *p) {
  const coal_backend_ops *cuda = coal_backend_table(COAL_BACKEND_CUDA);
  if (p && cuda && cuda->mem.host_unregister) cuda->mem.host_unregister(p);
}

coal_status coal_device_axpbypcz(coal_ctx ctx, int64_t n, double a, const double *x, double b,
                                 const double *y, double c, double *z, double d) {
  if (!ctx) return COAL_ERR_ARG;
  CHECK_N(ctx, n);
  COAL_CHECK(ctx, z || n == 0, COAL_ERR_ARG, "NULL array");
  return coal_backend(ctx)->blas.vec_axpbypcz(ctx, n, a, x, b, y, c, z, d);
}

coal_status coal_device_pointwise(coal_ctx ctx, int64_t n, coal_pointwise_op op, const double *x,
                                  const double *y, double *w) {
  if (!ctx) return COAL_ERR_ARG;
  CHECK_N(ctx, n);
  COAL_CHECK(ctx, op == COAL_POINTWISE_MULT || op == COAL_POINTWISE_DIV, COAL_ERR_ARG,
             "unknown pointwise operation %d", (int)op);
  COAL_CHECK(ctx, (x && y && w) || n == 0, COAL_ERR_ARG, "NULL array");
  return coal_backend(ctx)->blas.vec_pointwise(
      ctx, n, op == COAL_POINTWISE_DIV ? COAL_VEC_DIV : COAL_VEC_MULT, x, y, w);
}

coal_status coal_device_dots(coal_ctx ctx, int64_t n, int64_t k, const double *x,
                             const double *const *ys, double *out) {
  if (!ctx) return COAL_ERR_ARG;
  CHECK_N(ctx, n);
  COAL_CHECK(ctx, k >= 0 && (k == 0 || (ys && out)), COAL_ERR_ARG, "bad dot request (k = %lld)",
             (long long)k);
  return coal_backend(ctx)->blas.vec_dots(ctx, n, k, x, ys, out);
}

coal_status coal_device_norms(coal_ctx ctx, int64_t n, const double *x, double s, double *out) {
  if (!ctx) return COAL_ERR_ARG;
  CHECK_N(ctx, n);
  COAL_CHECK(ctx, out && (x || n == 0), COAL_ERR_ARG, "NULL array");
  return coal_backend(ctx)->blas.vec_norms(ctx, n, x, s, out);
}
