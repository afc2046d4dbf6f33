/* Built when the CUDA backend is not compiled: every CUDA op answers "not compiled". */
#include "backend.h"

int coal_cuda_compiled(void) { return 0; }
int coal_cuda_device_count(void) { return 0; }

coal_status coal_cuda_ctx_init(coal_ctx ctx) {
  (void)ctx;
  return COAL_ERR_NOT_COMPILED;
}
void coal_cuda_ctx_free(coal_ctx ctx) { (void)ctx; }

#define NC(ctx)                                                                                    \
  COAL_ERROR((ctx), COAL_ERR_NOT_COMPILED, "the CUDA backend is not compiled in this build")

static coal_status nc_alloc(coal_ctx ctx, size_t b, void **p) {
  (void)b, (void)p;
  return NC(ctx);
}
static void nc_release(coal_ctx ctx, void *p) { (void)ctx, (void)p; }
static coal_status nc_copy(coal_ctx ctx, void *d, const void *s, size_t b) {
  (void)d, (void)s, (void)b;
  return NC(ctx);
}
static coal_status nc_sync(coal_ctx ctx) { return NC(ctx); }
static coal_status nc_prepare(coal_mat A) { return NC(A->ctx); }
static void nc_mat_release(coal_mat A) { (void)A; }
static coal_status nc_spmv(coal_mat A, double a, const void *x, double b, void *y) {
  (void)a, (void)x, (void)b, (void)y;
  return NC(A->ctx);
}
static coal_status nc_spmm(coal_mat A, double a, coal_bvec X, double b, coal_bvec Y) {
  (void)a, (void)X, (void)b, (void)Y;
  return NC(A->ctx);
}

const coal_backend_ops coal_cuda_ops = {
    .name = "cuda",
    .alloc = nc_alloc,
    .release = nc_release,
    .upload = nc_copy,
    .download = nc_copy,
    .copy = nc_copy,
    .sync = nc_sync,
    .mat_prepare = nc_prepare,
    .mat_release = nc_mat_release,
    .spmv = {NULL, nc_spmv, nc_spmv, nc_spmv, nc_spmv},
    .spmm = {NULL, nc_spmm, nc_spmm, nc_spmm},
};
