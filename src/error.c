/* Status codes, error recording and host allocation. */
#include "internal.h"
#include "random.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *coal_status_string(coal_status s) {
  switch (s) {
  case COAL_SUCCESS: return "success";
  case COAL_ERR_ARG: return "invalid argument";
  case COAL_ERR_MEMORY: return "out of host memory";
  case COAL_ERR_DEVICE_MEMORY: return "out of device memory";
  case COAL_ERR_IO: return "I/O error";
  case COAL_ERR_FORMAT: return "malformed input";
  case COAL_ERR_UNSUPPORTED: return "unsupported input";
  case COAL_ERR_NOT_COMPILED: return "not compiled in this build";
  case COAL_ERR_NO_DEVICE: return "no usable GPU";
  case COAL_ERR_CUDA: return "CUDA library error";
  case COAL_ERR_OVERFLOW: return "size beyond the supported index range";
  case COAL_ERR_STATE: return "object in the wrong state";
  case COAL_ERR_NOT_SPD: return "operator not symmetric positive definite";
  }
  return "unknown status";
}

coal_status coal_error_set(coal_ctx ctx, coal_status code, const char *file, int line,
                           const char *func, const char *fmt, ...) {
  if (!ctx) return code;
  const char *base = strrchr(file, '/');
  base = base ? base + 1 : file;
  int n = snprintf(ctx->errmsg, sizeof ctx->errmsg, "%s: ", coal_status_string(code));
  if (n < 0 || (size_t)n >= sizeof ctx->errmsg) return code;
  va_list ap;
  va_start(ap, fmt);
  int m = vsnprintf(ctx->errmsg + n, sizeof ctx->errmsg - (size_t)n, fmt, ap);
  va_end(ap);
  if (m < 0) return code;
  size_t used = strlen(ctx->errmsg);
  if (used + 1 < sizeof ctx->errmsg)
    snprintf(ctx->errmsg + used, sizeof ctx->errmsg - used, " [%s:%d %s]", base, line, func);
  return code;
}

coal_status coal_malloc(coal_ctx ctx, size_t bytes, void **p) {
  *p = malloc(bytes ? bytes : 1);
  if (!*p) return COAL_ERROR(ctx, COAL_ERR_MEMORY, "cannot allocate %zu bytes", bytes);
  return COAL_SUCCESS;
}

coal_status coal_calloc(coal_ctx ctx, size_t bytes, void **p) {
  *p = calloc(bytes ? bytes : 1, 1);
  if (!*p) return COAL_ERROR(ctx, COAL_ERR_MEMORY, "cannot allocate %zu bytes", bytes);
  return COAL_SUCCESS;
}

void coal_free(void *p) { free(p); }

double coal_random_uniform(uint64_t seed, uint64_t i) { return coal_random_at(seed, i); }
