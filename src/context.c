/* Context: backend choice, device handles (through the CUDA backend), last error. */
#include "backend.h"

#include <stdio.h>
#include <string.h>

const char *coal_backend_name(coal_backend b) {
  switch (b) {
  case COAL_BACKEND_AUTO: return "auto";
  case COAL_BACKEND_HOST: return "host";
  case COAL_BACKEND_CUDA: return "cuda";
  }
  return "unknown";
}

coal_status coal_backend_parse(const char *name, coal_backend *b) {
  if (!name || !b) return COAL_ERR_ARG;
  if (!strcmp(name, "auto"))
    *b = COAL_BACKEND_AUTO;
  else if (!strcmp(name, "host"))
    *b = COAL_BACKEND_HOST;
  else if (!strcmp(name, "cuda"))
    *b = COAL_BACKEND_CUDA;
  else
    return COAL_ERR_ARG;
  return COAL_SUCCESS;
}

int coal_cuda_available(void) { return coal_cuda_compiled() && coal_cuda_device_count() > 0; }

coal_status coal_ctx_create(coal_backend b, coal_ctx *out) {
  if (!out) return COAL_ERR_ARG;
  *out = NULL;
  if (b == COAL_BACKEND_AUTO) {
    const char *env = getenv("COALESCE_BACKEND");
    if (env && *env) {
      if (coal_backend_parse(env, &b) != COAL_SUCCESS) return COAL_ERR_ARG;
    }
    if (b == COAL_BACKEND_AUTO) b = coal_cuda_available() ? COAL_BACKEND_CUDA : COAL_BACKEND_HOST;
  }
  if (b != COAL_BACKEND_HOST && b != COAL_BACKEND_CUDA) return COAL_ERR_ARG;
  coal_ctx ctx = calloc(1, sizeof *ctx);
  if (!ctx) return COAL_ERR_MEMORY;
  ctx->backend = b;
  snprintf(ctx->device_name, sizeof ctx->device_name, "host CPU");
  if (b == COAL_BACKEND_CUDA) {
    coal_status st = coal_cuda_ctx_init(ctx);
    if (st != COAL_SUCCESS) {
      free(ctx);
      return st;
    }
  }
  *out = ctx;
  return COAL_SUCCESS;
}

coal_status coal_ctx_destroy(coal_ctx *ctx) {
  if (!ctx || !*ctx) return COAL_SUCCESS;
  if ((*ctx)->backend == COAL_BACKEND_CUDA) coal_cuda_ctx_free(*ctx);
  free(*ctx);
  *ctx = NULL;
  return COAL_SUCCESS;
}

coal_backend coal_ctx_backend(coal_ctx ctx) { return ctx ? ctx->backend : COAL_BACKEND_HOST; }
const char *coal_ctx_last_error(coal_ctx ctx) { return ctx ? ctx->errmsg : "no context"; }
const char *coal_ctx_device_name(coal_ctx ctx) { return ctx ? ctx->device_name : "none"; }

coal_status coal_ctx_sync(coal_ctx ctx) {
  if (!ctx) return COAL_ERR_ARG;
  return coal_ops(ctx)->sync(ctx);
}
