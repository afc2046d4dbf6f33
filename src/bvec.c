/* Block vector: n x k dense block, column- or row-major, in the context's memory. */
#include "backend.h"

#include <string.h>

coal_status coal_bvec_create(coal_ctx ctx, int64_t n, int64_t k, coal_dtype dtype,
                             coal_layout layout, int64_t ld, coal_bvec *out) {
  if (!ctx) return COAL_ERR_ARG;
  COAL_CHECK(ctx, out, COAL_ERR_ARG, "NULL output");
  *out = NULL;
  COAL_CHECK(ctx, n >= 0 && k >= 0 && n <= INT32_MAX && k <= INT32_MAX, COAL_ERR_ARG,
             "bad block size %lld x %lld", (long long)n, (long long)k);
  COAL_CHECK(ctx, dtype == COAL_F64 || dtype == COAL_F32, COAL_ERR_ARG, "bad dtype");
  COAL_CHECK(ctx, layout == COAL_COL_MAJOR || layout == COAL_ROW_MAJOR, COAL_ERR_ARG, "bad layout");
  int64_t tight = layout == COAL_COL_MAJOR ? n : k;
  /* an empty dimension has tight ld 0; storage still needs ld >= 1 (an n = 0 column-major
   * block is a valid empty block and must not be refused) */
  if (ld == 0) ld = tight > 0 ? tight : 1;
  COAL_CHECK(ctx, ld >= tight && ld >= 1, COAL_ERR_ARG, "leading dimension %lld below %lld",
             (long long)ld, (long long)tight);
  int64_t outer = layout == COAL_COL_MAJOR ? k : n;
  size_t bytes = (size_t)ld * (size_t)outer * coal_dtype_size(dtype);
  coal_bvec X;
  COAL_CALL(coal_calloc(ctx, sizeof *X, (void **)&X));
  X->ctx = ctx, X->n = n, X->k = k, X->ld = ld, X->dtype = dtype, X->layout = layout;
  X->loc = coal_backend(ctx)->mem.space;
  coal_status st = coal_backend(ctx)->mem.alloc(ctx, bytes, &X->data);
  if (st) {
    coal_free(X);
    return st;
  }
  *out = X;
  return COAL_SUCCESS;
}

coal_status coal_bvec_view(coal_ctx ctx, int64_t n, int64_t k, coal_dtype dtype, coal_layout layout,
                           int64_t ld, void *data, coal_bvec *out) {
  if (!ctx) return COAL_ERR_ARG;
  COAL_CHECK(ctx, out && (data || n * k == 0), COAL_ERR_ARG, "NULL view argument");
  int64_t tight = layout == COAL_COL_MAJOR ? n : k;
  if (ld == 0) ld = tight > 0 ? tight : 1;
  COAL_CHECK(ctx, n >= 0 && k >= 0 && ld >= tight, COAL_ERR_ARG, "bad view %lld x %lld, ld %lld",
             (long long)n, (long long)k, (long long)ld);
  coal_bvec X;
  COAL_CALL(coal_calloc(ctx, sizeof *X, (void **)&X));
  X->ctx = ctx, X->n = n, X->k = k, X->ld = ld, X->dtype = dtype, X->layout = layout;
  X->loc = coal_backend(ctx)->mem.space;
  X->data = data, X->view = 1;
  *out = X;
  return COAL_SUCCESS;
}

coal_status coal_bvec_destroy(coal_bvec *X) {
  if (!X || !*X) return COAL_SUCCESS;
  if (!(*X)->view) coal_backend((*X)->ctx)->mem.release((*X)->ctx, (*X)->data);
  coal_free(*X);
  *X = NULL;
  return COAL_SUCCESS;
}

coal_status coal_bvec_size(coal_bvec X, int64_t *n, int64_t *k) {
  if (!X) return COAL_ERR_ARG;
  if (n) *n = X->n;
  if (k) *k = X->k;
  return COAL_SUCCESS;
}
coal_layout coal_bvec_layout(coal_bvec X) { return X ? X->layout : COAL_COL_MAJOR; }
coal_dtype coal_bvec_dtype(coal_bvec X) { return X ? X->dtype : COAL_F64; }
int64_t coal_bvec_ld(coal_bvec X) { return X ? X->ld : 0; }
void *coal_bvec_data(coal_bvec X) { return X ? X->data : NULL; }

static size_t storage_elems(coal_bvec X) {
  return (size_t)X->ld * (size_t)(X->layout == COAL_COL_MAJOR ? X->k : X->n);
}

/* Copies between the block's storage (on host, staged) and a host array of any layout. */
static void repack(const coal_bvec X, void *dst, coal_layout dl, int64_t dld, const void *src,
                   coal_layout sl, int64_t sld) {
  size_t es = coal_dtype_size(X->dtype);
  for (int64_t i = 0; i < X->n; i++)
    for (int64_t j = 0; j < X->k; j++) {
      size_t s = sl == COAL_COL_MAJOR ? (size_t)(i + j * sld) : (size_t)(i * sld + j);
      size_t d = dl == COAL_COL_MAJOR ? (size_t)(i + j * dld) : (size_t)(i * dld + j);
      memcpy((char *)dst + d * es, (const char *)src + s * es, es);
    }
}

static coal_status check_host_ld(coal_bvec X, coal_layout layout, int64_t *ld) {
  int64_t tight = layout == COAL_COL_MAJOR ? X->n : X->k;
  if (*ld == 0) *ld = tight > 0 ? tight : 1;
  COAL_CHECK(X->ctx, *ld >= tight, COAL_ERR_ARG, "host leading dimension %lld below %lld",
             (long long)*ld, (long long)tight);
  return COAL_SUCCESS;
}

coal_status coal_bvec_set_host(coal_bvec X, const void *src, coal_layout layout, int64_t ld) {
  if (!X) return COAL_ERR_ARG;
  COAL_CHECK(X->ctx, src || X->n * X->k == 0, COAL_ERR_ARG, "NULL source");
  COAL_CALL(check_host_ld(X, layout, &ld));
  size_t bytes = storage_elems(X) * coal_dtype_size(X->dtype);
  if (X->loc == COAL_MEM_HOST) {
    repack(X, X->data, X->layout, X->ld, src, layout, ld);
    return COAL_SUCCESS;
  }
  void *stage;
  COAL_CALL(coal_calloc(X->ctx, bytes, &stage));
  repack(X, stage, X->layout, X->ld, src, layout, ld);
  coal_status st = coal_backend(X->ctx)->mem.upload(X->ctx, X->data, stage, bytes);
  coal_free(stage);
  return st;
}

coal_status coal_bvec_get_host(coal_bvec X, void *dst, coal_layout layout, int64_t ld) {
  if (!X) return COAL_ERR_ARG;
  COAL_CHECK(X->ctx, dst || X->n * X->k == 0, COAL_ERR_ARG, "NULL destination");
  COAL_CALL(check_host_ld(X, layout, &ld));
  size_t bytes = storage_elems(X) * coal_dtype_size(X->dtype);
  if (X->loc == COAL_MEM_HOST) {
    repack(X, dst, layout, ld, X->data, X->layout, X->ld);
    return COAL_SUCCESS;
  }
  void *stage;
  COAL_CALL(coal_malloc(X->ctx, bytes, &stage));
  coal_status st = coal_backend(X->ctx)->mem.download(X->ctx, stage, X->data, bytes);
  if (!st) repack(X, dst, layout, ld, stage, X->layout, X->ld);
  coal_free(stage);
  return st;
}

/* Generated where the block lives (blas.fill): no host buffer, no upload. */
static coal_status fill(coal_bvec X, int random, uint64_t seed, double v) {
  return coal_backend(X->ctx)->blas.fill(X->ctx, X->n, X->k, X->dtype, X->layout, X->ld, X->data,
                                         random, seed, v);
}

coal_status coal_bvec_set_random(coal_bvec X, uint64_t seed) {
  if (!X) return COAL_ERR_ARG;
  return fill(X, 1, seed, 0);
}

coal_status coal_bvec_set_value(coal_bvec X, double v) {
  if (!X) return COAL_ERR_ARG;
  return fill(X, 0, 0, v);
}
