/* CUDA context life cycle (the ctx_init, ctx_free and device_count entries of the CUDA table):
 * device choice, stream, cuSPARSE/cuBLAS handles bound to the stream, timing events and the
 * device properties the kernels size their grids with; page-locking of host ranges. */
#include "cuda_internal.h"

#include <errno.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>

int coal_device_count_cuda(void) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

/* COALESCE_DEVICE picks the GPU (default 0). */
static coal_status pick_device(coal_ctx ctx, int count, int *dev) {
  *dev = 0;
  const char *env = getenv("COALESCE_DEVICE");
  if (!env || !*env) return COAL_SUCCESS;
  char *end = NULL;
  errno = 0;
  long v = strtol(env, &end, 10);
  COAL_CHECK(ctx, errno == 0 && end && *end == '\0' && v >= 0, COAL_ERR_ARG,
             "COALESCE_DEVICE=\"%s\" is not a device number", env);
  COAL_CHECK(ctx, v < count, COAL_ERR_NO_DEVICE, "COALESCE_DEVICE=%ld but only %d GPU(s) found", v,
             count);
  *dev = (int)v;
  return COAL_SUCCESS;
}

/* Bytes the context's pool keeps cached after a synchronisation: COALESCE_POOL_KEEP_MB, else a
 * quarter of the device's memory. */
static coal_status pool_keep(coal_ctx ctx, uint64_t *keep) {
  size_t free_b = 0, total_b = 0;
  COAL_CUDA_CALL(ctx, cudaMemGetInfo(&free_b, &total_b));
  *keep = (uint64_t)total_b / 4;
  const char *env = getenv("COALESCE_POOL_KEEP_MB");
  if (!env || !*env) return COAL_SUCCESS;
  char *end = NULL;
  errno = 0;
  long long v = strtoll(env, &end, 10);
  COAL_CHECK(ctx, errno == 0 && end && *end == '\0' && v >= 0 && v < (1ll << 40), COAL_ERR_ARG,
             "COALESCE_POOL_KEEP_MB=\"%s\" is not a size in MB", env);
  *keep = (uint64_t)v << 20;
  return COAL_SUCCESS;
}

static coal_status init_handles(coal_ctx ctx, struct coal_cuda_ctx *c) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return COAL_ERROR(ctx, COAL_ERR_NO_DEVICE, "no usable GPU: %s", cudaGetErrorString(e));
  }
  COAL_CHECK(ctx, count > 0, COAL_ERR_NO_DEVICE, "no GPU found");
  COAL_CALL(pick_device(ctx, count, &c->device));
  COAL_CUDA_CALL(ctx, cudaSetDevice(c->device));

  cudaDeviceProp prop;
  COAL_CUDA_CALL(ctx, cudaGetDeviceProperties(&prop, c->device));
  int sms = 0, l2 = 0, major = 0, minor = 0;
  COAL_CUDA_CALL(ctx, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, c->device));
  COAL_CUDA_CALL(ctx, cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, c->device));
  COAL_CUDA_CALL(ctx, cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, c->device));
  COAL_CUDA_CALL(ctx, cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, c->device));
  c->sm_count = sms > 0 ? sms : 1;
  c->l2_bytes = l2 > 0 ? (size_t)l2 : 0;
  snprintf(ctx->device_name, sizeof ctx->device_name, "%.200s, sm_%d%d, %d SMs", prop.name, major,
           minor, sms);

  COAL_CUDA_CALL(ctx, cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
  COAL_CUSPARSE_CALL(ctx, cusparseCreate(&c->sparse));
  COAL_CUSPARSE_CALL(ctx, cusparseSetStream(c->sparse, c->stream));
  COAL_CUSPARSE_CALL(ctx, cusparseSetPointerMode(c->sparse, CUSPARSE_POINTER_MODE_HOST));
  COAL_CUBLAS_CALL(ctx, cublasCreate(&c->blas));
  COAL_CUBLAS_CALL(ctx, cublasSetStream(c->blas, c->stream));
  COAL_CUBLAS_CALL(ctx, cublasSetPointerMode(c->blas, CUBLAS_POINTER_MODE_HOST));
  COAL_CUDA_CALL(ctx, cudaEventCreate(&c->ev_start));
  COAL_CUDA_CALL(ctx, cudaEventCreate(&c->ev_stop));
  int pools = 0;
  COAL_CUDA_CALL(ctx, cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, c->device));
  if (pools) {
    cudaMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = c->device;
    COAL_CUDA_CALL(ctx, cudaMemPoolCreate(&c->pool, &props));
    uint64_t keep = 0;
    COAL_CALL(pool_keep(ctx, &keep));
    COAL_CUDA_CALL(ctx, cudaMemPoolSetAttribute(c->pool, cudaMemPoolAttrReleaseThreshold, &keep));
  }
  return COAL_SUCCESS;
}

/* Releases whatever init_handles made and the workspaces of blas.cu; every member may still
 * be NULL. */
static void free_handles(struct coal_cuda_ctx *c) {
  if (c->stream) (void)cudaStreamSynchronize(c->stream);
  coal_cuda_free(c->ws_small);
  coal_cuda_free(c->ws_part);
  if (c->ws_pinned) (void)cudaFreeHost(c->ws_pinned);
  c->ws_small = NULL, c->ws_part = NULL, c->ws_pinned = NULL;
  c->ws_small_cap = c->ws_part_cap = c->ws_pinned_cap = 0;
  if (c->ev_start) (void)cudaEventDestroy(c->ev_start);
  if (c->ev_stop) (void)cudaEventDestroy(c->ev_stop);
  if (c->pool) (void)cudaMemPoolDestroy(c->pool);
  c->pool = NULL;
  if (c->blas) (void)cublasDestroy(c->blas);
  if (c->sparse) (void)cusparseDestroy(c->sparse);
  if (c->stream) (void)cudaStreamDestroy(c->stream);
  (void)cudaGetLastError();
}

coal_status coal_ctx_init_cuda(coal_ctx ctx) {
  if (!ctx) return COAL_ERR_ARG;
  struct coal_cuda_ctx *c = NULL;
  COAL_CALL(coal_calloc(ctx, sizeof *c, (void **)&c));
  coal_status st = init_handles(ctx, c);
  if (st != COAL_SUCCESS) {
    free_handles(c);
    coal_free(c);
    ctx->cuda = NULL;
    return st;
  }
  ctx->cuda = c;
  return COAL_SUCCESS;
}

void coal_ctx_free_cuda(coal_ctx ctx) {
  if (!ctx || !ctx->cuda) return;
  free_handles(ctx->cuda);
  coal_free(ctx->cuda);
  ctx->cuda = NULL;
}

coal_status coal_mem_host_register_cuda(coal_ctx ctx, void *p, size_t bytes) {
  if (!ctx || !p || !bytes) return COAL_ERR_ARG;
  cudaError_t e = cudaHostRegister(p, bytes, cudaHostRegisterDefault);
  if (e != cudaSuccess) {
    (void)cudaGetLastError(); /* not sticky: clear it so that later checks do not see it */
    return COAL_ERROR(ctx, COAL_ERR_UNSUPPORTED, "cudaHostRegister of %zu bytes: %s", bytes,
                      cudaGetErrorString(e));
  }
  return COAL_SUCCESS;
}

void coal_mem_host_unregister_cuda(void *p) {
  if (p && cudaHostUnregister(p) != cudaSuccess) (void)cudaGetLastError();
}
