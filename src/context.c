/* Context: backend choice (its table, looked up once), device handles (through the backend's
 * ctx_init), last error. */
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

/* Whether a backend was compiled is answered by its table (coal_backend_table, NULL when not). */
int coal_cuda_compiled(void) { return coal_backend_table(COAL_BACKEND_CUDA) != NULL; }

int coal_cuda_available(void) {
  const coal_backend_ops *cu = coal_backend_table(COAL_BACKEND_CUDA);
  return cu && cu->device_count && cu->device_count() > 0;
}

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
  /* the one lookup of the table: every later operation loads ctx->ops */
  const coal_backend_ops *ops = coal_backend_table(b);
  if (!ops) return COAL_ERR_NOT_COMPILED;
  coal_ctx ctx = calloc(1, sizeof *ctx);
  if (!ctx) return COAL_ERR_MEMORY;
  ctx->backend = b;
  ctx->ops = ops;
  snprintf(ctx->device_name, sizeof ctx->device_name, "host CPU");
  if (ops->ctx_init) {
    coal_status st = ops->ctx_init(ctx);
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
  if ((*ctx)->ops->ctx_free) (*ctx)->ops->ctx_free(*ctx);
  free(*ctx);
  *ctx = NULL;
  return COAL_SUCCESS;
}

coal_backend coal_ctx_backend(coal_ctx ctx) { return ctx ? ctx->backend : COAL_BACKEND_HOST; }
const char *coal_ctx_last_error(coal_ctx ctx) { return ctx ? ctx->errmsg : "no context"; }
const char *coal_ctx_device_name(coal_ctx ctx) { return ctx ? ctx->device_name : "none"; }

coal_status coal_ctx_sync(coal_ctx ctx) {
  if (!ctx) return COAL_ERR_ARG;
  return coal_backend(ctx)->mem.sync(ctx);
}
