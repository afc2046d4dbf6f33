/* CUDA backend, the mem and mat entries of its table (kernels/cuda/backend.c): device memory,
 * transfers on the context's stream, matrix residency (device CSR, the FastLoad device formats in
 * the matrix's cache; device-only matrices whose host CSR is downloaded on demand). */
#include "../bench.h"
#include "cuda_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- memory ------------------------------------------------------------------------------ */
coal_status coal_cuda_malloc(coal_ctx ctx, size_t bytes, void **p) {
  *p = NULL;
  /* 0 bytes still gives a distinct valid pointer (256 B keeps any vector load aligned) */
  cudaError_t e = cudaMalloc(p, bytes ? bytes : 256);
  cudaMemPool_t pool = ctx && ctx->backend == COAL_BACKEND_CUDA && ctx->cuda ? ctx->cuda->pool : 0;
  if (e == cudaErrorMemoryAllocation && pool) {
    /* memory the context's pool keeps cached goes back to the device, then one more try */
    (void)cudaGetLastError();
    if (cudaStreamSynchronize(coal_stream(ctx)) == cudaSuccess &&
        cudaMemPoolTrimTo(pool, 0) == cudaSuccess)
      e = cudaMalloc(p, bytes ? bytes : 256);
  }
  if (e != cudaSuccess) {
    (void)cudaGetLastError(); /* cudaMalloc leaves its code as the last error */
    *p = NULL;
    return COAL_ERROR(ctx, e == cudaErrorMemoryAllocation ? COAL_ERR_DEVICE_MEMORY : COAL_ERR_CUDA,
                      "cannot allocate %zu bytes on the GPU: %s", bytes, cudaGetErrorString(e));
  }
  return COAL_SUCCESS;
}

void coal_cuda_free(void *p) {
  if (p && cudaFree(p) != cudaSuccess) (void)cudaGetLastError();
}

coal_status coal_cuda_pool_alloc(coal_ctx ctx, size_t bytes, void **p) {
  *p = NULL;
  cudaMemPool_t pool = ctx->cuda->pool;
  if (!pool) return coal_cuda_malloc(ctx, bytes, p);
  cudaError_t e = cudaMallocFromPoolAsync(p, bytes ? bytes : 256, pool, coal_stream(ctx));
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    *p = NULL;
    return COAL_ERROR(ctx, e == cudaErrorMemoryAllocation ? COAL_ERR_DEVICE_MEMORY : COAL_ERR_CUDA,
                      "cannot allocate %zu bytes on the GPU: %s", bytes, cudaGetErrorString(e));
  }
  return COAL_SUCCESS;
}

void coal_cuda_pool_free(coal_ctx ctx, void *p) {
  if (!p) return;
  const int cuda = ctx && ctx->backend == COAL_BACKEND_CUDA && ctx->cuda;
  if (cuda && !ctx->cuda->pool) {
    coal_cuda_free(p);
    return;
  }
  /* without the context's stream (an orphan released through a wrong context): after
   * everything queued */
  cudaStream_t s = 0;
  if (cuda)
    s = coal_stream(ctx);
  else
    (void)cudaDeviceSynchronize();
  if (cudaFreeAsync(p, s) != cudaSuccess) (void)cudaGetLastError();
}

/* Fresh memory is zeroed, as on the host backend (calloc), so that both backends start from
 * the same state. Ordered on the stream before any later use; no host synchronisation. */
coal_status coal_mem_alloc_cuda(coal_ctx ctx, size_t bytes, void **p) {
  COAL_CALL(coal_cuda_malloc(ctx, bytes, p));
  if (bytes) {
    cudaError_t e = cudaMemsetAsync(*p, 0, bytes, coal_stream(ctx));
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      coal_cuda_free(*p);
      *p = NULL;
      return COAL_ERROR(ctx, COAL_ERR_CUDA, "cudaMemsetAsync of %zu bytes: %s", bytes,
                        cudaGetErrorString(e));
    }
  }
  return COAL_SUCCESS;
}

void coal_mem_release_cuda(coal_ctx ctx, void *p) {
  (void)ctx;
  coal_cuda_free(p);
}

coal_status coal_mem_upload_cuda(coal_ctx ctx, void *dst, const void *src, size_t bytes) {
  if (!bytes) return COAL_SUCCESS;
  COAL_CUDA_CALL(ctx, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, coal_stream(ctx)));
  COAL_CUDA_CALL(ctx, cudaStreamSynchronize(coal_stream(ctx)));
  return COAL_SUCCESS;
}

coal_status coal_mem_download_cuda(coal_ctx ctx, void *dst, const void *src, size_t bytes) {
  if (!bytes) return COAL_SUCCESS;
  COAL_CUDA_CALL(ctx, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, coal_stream(ctx)));
  COAL_CUDA_CALL(ctx, cudaStreamSynchronize(coal_stream(ctx)));
  return COAL_SUCCESS;
}

coal_status coal_mem_copy_cuda(coal_ctx ctx, void *dst, const void *src, size_t bytes) {
  if (!bytes || dst == src) return COAL_SUCCESS;
  COAL_CUDA_CALL(ctx, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, coal_stream(ctx)));
  return COAL_SUCCESS;
}

coal_status coal_mem_sync_cuda(coal_ctx ctx) {
  COAL_CUDA_CALL(ctx, cudaStreamSynchronize(coal_stream(ctx)));
  return COAL_SUCCESS;
}

coal_status coal_cuda_upload_new(coal_ctx ctx, void **dst, const void *src, size_t bytes) {
  COAL_CALL(coal_cuda_malloc(ctx, bytes, dst));
  if (bytes)
    COAL_CUDA_CALL(ctx,
                   cudaMemcpyAsync(*dst, src, bytes, cudaMemcpyHostToDevice, coal_stream(ctx)));
  ctx->stats.upload_bytes += bytes;
  return COAL_SUCCESS;
}
static inline coal_status dup_async(coal_ctx ctx, void **dst, const void *src, size_t bytes) {
  return coal_cuda_upload_new(ctx, dst, src, bytes);
}

/* ---- matrix residency -------------------------------------------------------------------- */
void coal_cuda_fastload_dev_free(struct coal_fastload_dev *f) {
  if (f->arena) {
    coal_cuda_free(f->arena);
  } else {
    coal_cuda_free(f->perm), coal_cuda_free(f->blk_ptr), coal_cuda_free(f->blk_col);
    coal_cuda_free(f->blk_len), coal_cuda_free(f->blk_height), coal_cuda_free(f->blk_class);
    coal_cuda_free(f->idx), coal_cuda_free(f->val), coal_cuda_free(f->seg);
    coal_cuda_free(f->task), coal_cuda_free(f->prescale);
  }
  memset(f, 0, sizeof *f);
}

void coal_mat_release_cuda(coal_mat A) {
  struct coal_mat_cuda *d = A->dev;
  if (!d) return;
  coal_mat_format_drop(A, COAL_FORMAT_DEVICE); /* the kernels' device formats and workspaces */
  if (d->pooled) {
    coal_cuda_pool_free(A->ctx, d->rowptr), coal_cuda_pool_free(A->ctx, d->colind);
    coal_cuda_pool_free(A->ctx, d->values);
  } else {
    coal_cuda_free(d->rowptr), coal_cuda_free(d->colind), coal_cuda_free(d->values);
  }
  coal_free(d);
  A->dev = NULL;
  A->valid &= ~(unsigned)COAL_MEM_DEVICE;
}

static coal_status upload_csr(coal_mat A, struct coal_mat_cuda *d) {
  coal_ctx ctx = A->ctx;
  size_t es = coal_dtype_size(A->dtype);
  ctx->stats.full_uploads++;
  COAL_CALL(
      dup_async(ctx, (void **)&d->rowptr, A->rowptr, sizeof(int32_t) * ((size_t)A->nrows + 1)));
  COAL_CALL(dup_async(ctx, (void **)&d->colind, A->colind, sizeof(int32_t) * (size_t)A->nnz));
  COAL_CALL(dup_async(ctx, &d->values, A->values, es * (size_t)A->nnz));
  COAL_CUDA_CALL(ctx, cudaStreamSynchronize(coal_stream(ctx)));
  return COAL_SUCCESS;
}

/* Makes the device CSR current: full upload the first time, values only after a change
 * (coal_mat_invalidate keeps the device structure; nnz * sizeof(value) bytes).
 * Cheap when nothing changed (two field tests), so every product may call it. A device-only
 * matrix (coal_mat_wrap_device) has a current device copy and is never uploaded. */
coal_status coal_mat_prepare_cuda(coal_mat A) {
  coal_ctx ctx = A->ctx;
  if (!A->dev) {
    COAL_CHECK(ctx, A->rowptr && (A->valid & COAL_MEM_HOST), COAL_ERR_STATE,
               "matrix has neither a host nor a device copy");
    struct coal_mat_cuda *d = NULL;
    COAL_CALL(coal_calloc(ctx, sizeof *d, (void **)&d));
    A->dev = d;
    coal_status st = upload_csr(A, d);
    if (st != COAL_SUCCESS) {
      coal_mat_release_cuda(A);
      return st;
    }
    A->valid |= COAL_MEM_DEVICE;
    return COAL_SUCCESS;
  }
  if (!(A->valid & COAL_MEM_DEVICE)) {
    COAL_CHECK(ctx, A->rowptr && (A->valid & COAL_MEM_HOST), COAL_ERR_STATE,
               "device values are stale and the matrix has no current host copy");
    /* the derived formats that hold values went with the change (coal_mat_invalidate) */
    const size_t bytes = coal_dtype_size(A->dtype) * (size_t)A->nnz;
    COAL_CALL(coal_mem_upload_cuda(ctx, A->dev->values, A->values, bytes));
    ctx->stats.values_uploads++;
    ctx->stats.upload_bytes += bytes;
    A->valid |= COAL_MEM_DEVICE;
  }
  return COAL_SUCCESS;
}

/* Downloads the requested parts of the device CSR on the stream. The stream is synchronised
 * even after a failed enqueue: no copy may still write the caller's arrays once this returns. */
coal_status coal_mat_download_cuda(coal_mat A, int32_t *rowptr, int32_t *colind, void *values) {
  coal_ctx ctx = A->ctx;
  const struct coal_mat_cuda *d = A->dev;
  COAL_CHECK(ctx, d, COAL_ERR_STATE, "matrix has no device copy to download");
  COAL_CHECK(ctx, !values || (A->valid & COAL_MEM_DEVICE), COAL_ERR_STATE,
             "the device values are not current");
  const size_t nz = (size_t)A->nnz;
  const struct {
    void *dst;
    const void *src;
    size_t bytes;
  } cp[] = {{rowptr, d->rowptr, sizeof(int32_t) * ((size_t)A->nrows + 1)},
            {colind, d->colind, sizeof(int32_t) * nz},
            {values, d->values, coal_dtype_size(A->dtype) * nz}};
  cudaStream_t s = coal_stream(ctx);
  cudaError_t e = cudaSuccess;
  for (size_t i = 0; i < sizeof cp / sizeof cp[0] && e == cudaSuccess; i++)
    if (cp[i].dst && cp[i].bytes)
      e = cudaMemcpyAsync(cp[i].dst, cp[i].src, cp[i].bytes, cudaMemcpyDeviceToHost, s);
  cudaError_t es = cudaStreamSynchronize(s);
  if (e == cudaSuccess) e = es;
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return COAL_ERROR(ctx, COAL_ERR_CUDA, "download of a %d x %d matrix's device CSR: %s", A->nrows,
                      A->ncols, cudaGetErrorString(e));
  }
  return COAL_SUCCESS;
}

coal_status coal_cuda_mat(coal_mat A, struct coal_mat_cuda **d) {
  COAL_CHECK(A->ctx, A->dev && (A->valid & COAL_MEM_DEVICE), COAL_ERR_STATE,
             "matrix has no current device copy (mat_prepare not called)");
  *d = A->dev;
  return COAL_SUCCESS;
}

/* mat.wrap: a device-only matrix over CSR arrays from coal_cuda_pool_alloc (pooled, so that
 * their release waits for no device-wide synchronisation). */
coal_status coal_mat_wrap_cuda(coal_ctx ctx, int32_t nrows, int32_t ncols, int64_t nnz,
                               int32_t *rowptr, int32_t *colind, double *values, coal_mat *A) {
  *A = NULL;
  struct coal_mat_cuda *d = NULL;
  coal_status st = coal_calloc(ctx, sizeof *d, (void **)&d);
  if (st) {
    coal_cuda_pool_free(ctx, rowptr), coal_cuda_pool_free(ctx, colind);
    coal_cuda_pool_free(ctx, values);
    return st;
  }
  d->pooled = 1, d->rowptr = rowptr, d->colind = colind, d->values = values;
  return coal_mat_wrap_device(ctx, nrows, ncols, nnz, COAL_F64, d, A);
}

/* mat.csr: the device CSR, uploaded first when the host copy is newer. */
coal_status coal_mat_csr_cuda(coal_mat A, const int32_t **rowptr, const int32_t **colind,
                              void **values) {
  struct coal_mat_cuda *d = NULL;
  COAL_CALL(coal_mat_prepare_cuda(A));
  COAL_CALL(coal_cuda_mat(A, &d));
  if (rowptr) *rowptr = d->rowptr;
  if (colind) *colind = d->colind;
  if (values) *values = d->values;
  return COAL_SUCCESS;
}

/* ---- FastLoad upload ----------------------------------------------------------------------- */
static coal_status upload_fastload(coal_ctx ctx, const coal_fastload *f, int transposed,
                                   coal_dtype dtype, struct coal_fastload_dev *fd) {
  size_t nb = (size_t)f->nblocks, nz = (size_t)f->nnz;
  fd->nlanes = f->nlanes, fd->nother = f->nother, fd->identity_perm = f->identity_perm;
  fd->nnz = f->nnz, fd->nblocks = f->nblocks;
  if (!f->identity_perm)
    COAL_CALL(dup_async(ctx, (void **)&fd->perm, f->perm, sizeof(int32_t) * (size_t)f->nlanes));
  COAL_CALL(dup_async(ctx, (void **)&fd->blk_ptr, f->blk_ptr, sizeof(int32_t) * nb));
  COAL_CALL(dup_async(ctx, (void **)&fd->blk_col, f->blk_col, sizeof(int32_t) * nb));
  COAL_CALL(dup_async(ctx, (void **)&fd->blk_len, f->blk_len, nb));
  COAL_CALL(dup_async(ctx, (void **)&fd->blk_height, f->blk_height, nb));
  COAL_CALL(dup_async(ctx, (void **)&fd->blk_class, f->blk_class, nb));
  COAL_CALL(dup_async(ctx, (void **)&fd->idx, f->idx, sizeof(int32_t) * nz));
  COAL_CALL(dup_async(ctx, &fd->val, f->val, coal_dtype_size(dtype) * nz));
  if (!transposed) {
    COAL_CHECK(ctx, f->seg || nz == 0, COAL_ERR_STATE, "FastLoad scatter format without seg");
    COAL_CALL(dup_async(ctx, (void **)&fd->seg, f->seg, nz));
    COAL_CUDA_CALL(ctx, cudaStreamSynchronize(coal_stream(ctx)));
    return COAL_SUCCESS;
  }
  int32_t *task = NULL, *pre = NULL;
  COAL_CALL(coal_fastload_schedule_host(ctx, f, &task, &fd->ntasks, &pre, &fd->nprescale));
  coal_status st =
      dup_async(ctx, (void **)&fd->task, task, sizeof(int32_t) * ((size_t)fd->ntasks + 1));
  if (st == COAL_SUCCESS)
    st = dup_async(ctx, (void **)&fd->prescale, pre, sizeof(int32_t) * (size_t)fd->nprescale);
  if (st == COAL_SUCCESS) {
    /* the host arrays must outlive the copies */
    cudaError_t e = cudaStreamSynchronize(coal_stream(ctx));
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      st = COAL_ERROR(ctx, COAL_ERR_CUDA, "cudaStreamSynchronize: %s", cudaGetErrorString(e));
    }
  }
  coal_free(task), coal_free(pre);
  return st;
}

static void fastload_entry_free(coal_ctx ctx, void *p) {
  (void)ctx;
  coal_cuda_fastload_dev_free((struct coal_fastload_dev *)p);
  coal_free(p);
}

coal_status coal_cuda_fastload_entry(coal_mat A, int transposed, struct coal_fastload_dev **out) {
  const int key = transposed ? COAL_FMT_CUDA_FASTLOAD_T : COAL_FMT_CUDA_FASTLOAD;
  struct coal_fastload_dev *fd = (struct coal_fastload_dev *)coal_mat_format_get(A, key);
  if (!fd) {
    COAL_CALL(coal_calloc(A->ctx, sizeof *fd, (void **)&fd));
    COAL_CALL(coal_mat_format_put(A, key, COAL_FORMAT_DEVICE | COAL_FORMAT_VALUES, fd,
                                  fastload_entry_free));
  }
  *out = fd;
  return COAL_SUCCESS;
}

coal_status coal_cuda_fastload_upload(coal_mat A, int transposed,
                                      const struct coal_fastload_dev **out) {
  struct coal_mat_cuda *d = NULL;
  COAL_CALL(coal_cuda_mat(A, &d));
  struct coal_fastload_dev *fd = NULL;
  COAL_CALL(coal_cuda_fastload_entry(A, transposed, &fd));
  if (!fd->built) {
    coal_status st;
    const char *host = getenv("COALESCE_FASTLOAD_HOST_BUILD");
    if (host && !strcmp(host, "1")) { /* host twin: build there, then upload */
      const coal_fastload *f = NULL;
      COAL_CALL(coal_mat_fastload(A, transposed, &f));
      COAL_CHECK(A->ctx, f->nlanes == (transposed ? A->nrows : A->ncols) && f->nnz == A->nnz,
                 COAL_ERR_STATE, "FastLoad format does not match the matrix (%d lanes, %lld nnz)",
                 f->nlanes, (long long)f->nnz);
      st = upload_fastload(A->ctx, f, transposed, A->dtype, fd);
    } else {
      st = coal_fastload_build_cuda(A, transposed, fd);
    }
    if (st != COAL_SUCCESS) {
      coal_cuda_fastload_dev_free(fd);
      return st;
    }
    fd->built = 1;
    A->ctx->stats.formats_built++;
  }
  *out = fd;
  return COAL_SUCCESS;
}
