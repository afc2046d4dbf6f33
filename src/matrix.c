/* Sparse matrix object: CSR on the host and/or the device (host copy made lazily for a
 * device-only matrix), cached derived formats. */
#include "backend.h"

#include <math.h>
#include <string.h>

static coal_status check_dims(coal_ctx ctx, int64_t nrows, int64_t ncols, int64_t nnz) {
  COAL_CHECK(ctx, nrows >= 0 && ncols >= 0 && nnz >= 0, COAL_ERR_ARG,
             "negative size (%lld x %lld, %lld nonzeros)", (long long)nrows, (long long)ncols,
             (long long)nnz);
  COAL_CHECK(ctx, nrows <= INT32_MAX && ncols <= INT32_MAX, COAL_ERR_OVERFLOW,
             "%lld x %lld exceeds 2^31-1 rows or columns (32-bit indices)", (long long)nrows,
             (long long)ncols);
  COAL_CHECK(ctx, nnz <= INT32_MAX, COAL_ERR_OVERFLOW,
             "%lld nonzeros exceed 2^31-1: this build uses 32-bit row offsets", (long long)nnz);
  return COAL_SUCCESS;
}

coal_status coal_mat_wrap_csr(coal_ctx ctx, int32_t nrows, int32_t ncols, int32_t *rowptr,
                              int32_t *colind, void *values, coal_dtype dtype, coal_mat *out) {
  coal_mat A;
  coal_status st = coal_calloc(ctx, sizeof *A, (void **)&A);
  if (st) {
    coal_free(rowptr), coal_free(colind), coal_free(values);
    return st;
  }
  A->ctx = ctx;
  A->nrows = nrows;
  A->ncols = ncols;
  A->nnz = rowptr[nrows];
  A->dtype = dtype;
  A->rowptr = rowptr;
  A->colind = colind;
  A->values = values;
  A->valid = COAL_MEM_HOST;
  A->max_row_len = -1;
  A->line_stride = -1;
  *out = A;
  return COAL_SUCCESS;
}

/* Releases a device copy that no matrix owns yet (through a temporary matrix: the backend's
 * mat.release frees the arrays and the struct). The CUDA table even on a wrong context: dev is
 * CUDA's. Without CUDA in the build no device arrays can exist, and a struct handed over is
 * host memory (coal_calloc). */
static void release_orphan_device(coal_ctx ctx, struct coal_mat_cuda *dev) {
  if (!dev) return;
  const coal_backend_ops *cuda = coal_backend_table(COAL_BACKEND_CUDA);
  if (!cuda) {
    coal_free(dev);
    return;
  }
  struct coal_mat_s tmp;
  memset(&tmp, 0, sizeof tmp);
  tmp.ctx = ctx;
  tmp.dev = dev;
  cuda->mat.release(&tmp);
}

coal_status coal_mat_wrap_device(coal_ctx ctx, int32_t nrows, int32_t ncols, int64_t nnz,
                                 coal_dtype dtype, struct coal_mat_cuda *dev, coal_mat *out) {
  if (!ctx || !out) {
    release_orphan_device(ctx, dev);
    return COAL_ERR_ARG;
  }
  *out = NULL;
  coal_status st = COAL_SUCCESS;
  if (!dev)
    st = COAL_ERROR(ctx, COAL_ERR_ARG, "NULL device CSR");
  else if (coal_backend(ctx)->mem.space != COAL_MEM_DEVICE)
    st = COAL_ERROR(ctx, COAL_ERR_ARG, "a device-resident matrix needs a CUDA context");
  else if (dtype != COAL_F64 && dtype != COAL_F32)
    st = COAL_ERROR(ctx, COAL_ERR_ARG, "bad dtype %d", (int)dtype);
  else
    st = check_dims(ctx, nrows, ncols, nnz);
  coal_mat A = NULL;
  if (st == COAL_SUCCESS) st = coal_calloc(ctx, sizeof *A, (void **)&A);
  if (st != COAL_SUCCESS) {
    release_orphan_device(ctx, dev);
    return st;
  }
  A->ctx = ctx;
  A->nrows = nrows;
  A->ncols = ncols;
  A->nnz = nnz;
  A->dtype = dtype;
  A->dev = dev;
  A->valid = COAL_MEM_DEVICE;
  A->max_row_len = -1;
  A->line_stride = -1;
  *out = A;
  return COAL_SUCCESS;
}

/* Two counting sorts (by column, then by row) give rows with sorted columns in O(nnz + n);
 * duplicates are then adjacent and summed in place. */
coal_status coal_csr_from_coo(coal_ctx ctx, int64_t nrows, int64_t ncols, int64_t nnz,
                              const int32_t *ri, const int32_t *ci, const double *v,
                              coal_dtype dtype, coal_mat *out) {
  COAL_CALL(check_dims(ctx, nrows, ncols, nnz));
  COAL_CHECK(ctx, nnz == 0 || (ri && ci && v), COAL_ERR_ARG, "NULL COO arrays");
  for (int64_t e = 0; e < nnz; e++)
    COAL_CHECK(ctx, ri[e] >= 0 && ri[e] < nrows && ci[e] >= 0 && ci[e] < ncols, COAL_ERR_ARG,
               "entry %lld at (%d, %d) outside %lld x %lld", (long long)e, ri[e], ci[e],
               (long long)nrows, (long long)ncols);
  coal_status st = COAL_SUCCESS;
  int32_t *cptr = NULL, *tr = NULL, *rowptr = NULL, *colind = NULL;
  double *tv = NULL, *dv = NULL;
  void *values = NULL;
  COAL_CALL_GOTO(st, coal_calloc(ctx, sizeof(int32_t) * ((size_t)ncols + 1), (void **)&cptr), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * (size_t)nnz, (void **)&tr), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(double) * (size_t)nnz, (void **)&tv), fail);
  COAL_CALL_GOTO(st, coal_calloc(ctx, sizeof(int32_t) * ((size_t)nrows + 1), (void **)&rowptr),
                 fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * (size_t)nnz, (void **)&colind), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(double) * (size_t)nnz, (void **)&dv), fail);
  for (int64_t e = 0; e < nnz; e++) cptr[ci[e] + 1]++;
  for (int64_t j = 0; j < ncols; j++) cptr[j + 1] += cptr[j];
  /* stable scatter by column: CSC with rows in input order */
  {
    int32_t *next = NULL;
    COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * ((size_t)ncols + 1), (void **)&next),
                   fail);
    memcpy(next, cptr, sizeof(int32_t) * ((size_t)ncols + 1));
    for (int64_t e = 0; e < nnz; e++) {
      int32_t p = next[ci[e]]++;
      tr[p] = ri[e];
      tv[p] = v[e];
    }
    coal_free(next);
  }
  /* scatter CSC by row: columns come out sorted within each row */
  for (int64_t e = 0; e < nnz; e++) rowptr[tr[e] + 1]++;
  for (int64_t i = 0; i < nrows; i++) rowptr[i + 1] += rowptr[i];
  {
    int32_t *next = NULL;
    COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * ((size_t)nrows + 1), (void **)&next),
                   fail);
    memcpy(next, rowptr, sizeof(int32_t) * ((size_t)nrows + 1));
    for (int64_t j = 0; j < ncols; j++)
      for (int32_t p = cptr[j]; p < cptr[j + 1]; p++) {
        int32_t q = next[tr[p]]++;
        colind[q] = (int32_t)j;
        dv[q] = tv[p];
      }
    coal_free(next);
  }
  coal_free(cptr), cptr = NULL;
  coal_free(tr), tr = NULL;
  coal_free(tv), tv = NULL;
  /* sum duplicates (adjacent now) and compact */
  {
    int32_t w = 0, start = 0;
    for (int64_t i = 0; i < nrows; i++) {
      int32_t end = rowptr[i + 1];
      int32_t rowstart = w;
      for (int32_t p = start; p < end; p++) {
        if (w > rowstart && colind[w - 1] == colind[p])
          dv[w - 1] += dv[p];
        else {
          colind[w] = colind[p];
          dv[w] = dv[p];
          w++;
        }
      }
      start = end;
      rowptr[i + 1] = w;
    }
  }
  {
    int64_t nz = rowptr[nrows];
    COAL_CALL_GOTO(st, coal_malloc(ctx, coal_dtype_size(dtype) * (size_t)nz, &values), fail);
    if (dtype == COAL_F64)
      memcpy(values, dv, sizeof(double) * (size_t)nz);
    else
      for (int64_t p = 0; p < nz; p++) ((float *)values)[p] = (float)dv[p];
  }
  coal_free(dv);
  return coal_mat_wrap_csr(ctx, (int32_t)nrows, (int32_t)ncols, rowptr, colind, values, dtype, out);
fail:
  coal_free(cptr), coal_free(tr), coal_free(tv), coal_free(rowptr), coal_free(colind);
  coal_free(dv), coal_free(values);
  return st;
}

coal_status coal_mat_create_coo(coal_ctx ctx, int64_t nrows, int64_t ncols, int64_t nnz,
                                const int32_t *rows, const int32_t *cols, const double *values,
                                coal_dtype dtype, coal_mat *A) {
  if (!ctx) return COAL_ERR_ARG;
  COAL_CHECK(ctx, A && (dtype == COAL_F64 || dtype == COAL_F32), COAL_ERR_ARG, "bad argument");
  *A = NULL;
  return coal_csr_from_coo(ctx, nrows, ncols, nnz, rows, cols, values, dtype, A);
}

coal_status coal_mat_create_csr(coal_ctx ctx, int64_t nrows, int64_t ncols, const int64_t *rowptr,
                                const int32_t *colind, const void *values, coal_dtype dtype,
                                coal_mat *A) {
  if (!ctx) return COAL_ERR_ARG;
  COAL_CHECK(ctx, A && rowptr && (dtype == COAL_F64 || dtype == COAL_F32), COAL_ERR_ARG,
             "NULL argument or bad dtype");
  *A = NULL;
  COAL_CALL(check_dims(ctx, nrows, ncols, 0));
  COAL_CHECK(ctx, rowptr[0] == 0, COAL_ERR_ARG, "rowptr[0] = %lld, expected 0",
             (long long)rowptr[0]);
  for (int64_t i = 0; i < nrows; i++)
    COAL_CHECK(ctx, rowptr[i + 1] >= rowptr[i], COAL_ERR_ARG, "rowptr decreases at row %lld",
               (long long)i);
  int64_t nnz = rowptr[nrows];
  COAL_CALL(check_dims(ctx, nrows, ncols, nnz));
  COAL_CHECK(ctx, nnz == 0 || (colind && values), COAL_ERR_ARG, "NULL colind or values");
  int32_t *ri = NULL;
  double *dv = NULL;
  coal_status st = coal_malloc(ctx, sizeof(int32_t) * (size_t)nnz, (void **)&ri);
  if (st) return st;
  st = coal_malloc(ctx, sizeof(double) * (size_t)nnz, (void **)&dv);
  if (st) {
    coal_free(ri);
    return st;
  }
  for (int64_t i = 0; i < nrows; i++)
    for (int64_t p = rowptr[i]; p < rowptr[i + 1]; p++) {
      ri[p] = (int32_t)i;
      dv[p] = dtype == COAL_F64 ? ((const double *)values)[p] : ((const float *)values)[p];
    }
  st = coal_csr_from_coo(ctx, nrows, ncols, nnz, ri, colind, dv, dtype, A);
  coal_free(ri);
  coal_free(dv);
  return st;
}

/* ---- the derived-format cache ------------------------------------------------------------ */
struct coal_format_entry {
  int key;
  unsigned flags;
  void *data;
  coal_format_free_fn free_fn;
  struct coal_format_entry *next;
};

void *coal_mat_format_get(coal_mat A, int key) {
  for (const struct coal_format_entry *e = A->formats; e; e = e->next)
    if (e->key == key) return e->data;
  return NULL;
}

/* Unlinks and frees every entry (all), those sharing a flag with mask (mask != 0), or the one of
 * key. */
static void drop_where(coal_mat A, int key, unsigned mask, int all) {
  struct coal_format_entry **pe = &A->formats;
  while (*pe) {
    struct coal_format_entry *e = *pe;
    if (all || (mask ? (e->flags & mask) != 0 : e->key == key)) {
      *pe = e->next;
      if (e->free_fn) e->free_fn(A->ctx, e->data);
      coal_free(e);
    } else {
      pe = &e->next;
    }
  }
}

void coal_mat_format_drop_key(coal_mat A, int key) { drop_where(A, key, 0, 0); }
void coal_mat_format_drop(coal_mat A, unsigned mask) {
  if (mask) drop_where(A, 0, mask, 0);
}

coal_status coal_mat_format_put(coal_mat A, int key, unsigned flags, void *data,
                                coal_format_free_fn free_fn) {
  coal_mat_format_drop_key(A, key);
  struct coal_format_entry *e = NULL;
  coal_status st = coal_malloc(A->ctx, sizeof *e, (void **)&e);
  if (st != COAL_SUCCESS) {
    if (free_fn) free_fn(A->ctx, data);
    return st;
  }
  e->key = key, e->flags = flags, e->data = data, e->free_fn = free_fn;
  e->next = A->formats;
  A->formats = e;
  return COAL_SUCCESS;
}

static void free_setting(coal_ctx ctx, void *p) {
  (void)ctx;
  coal_free(p);
}

int coal_mat_setting(coal_mat A, int key, int def) {
  const int *v = (const int *)coal_mat_format_get(A, key);
  return v ? *v : def;
}

coal_status coal_mat_setting_set(coal_mat A, int key, int value) {
  int *v = (int *)coal_mat_format_get(A, key);
  if (!v) {
    COAL_CALL(coal_malloc(A->ctx, sizeof *v, (void **)&v));
    COAL_CALL(coal_mat_format_put(A, key, 0, v, free_setting));
  }
  *v = value;
  return COAL_SUCCESS;
}

/* A values-only change: the device keeps the CSR structure and the structure-only arrays, the
 * next mat.prepare uploads the values (nnz * sizeof(value) bytes), and the formats that hold
 * values are rebuilt at their next use. A device-only matrix has no host values that could
 * have changed, and valid must not claim host arrays that do not exist (new device values:
 * coal_mat_device_values_changed). */
void coal_mat_invalidate(coal_mat A) {
  coal_mat_format_drop(A, COAL_FORMAT_VALUES);
  if (A->rowptr) A->valid = COAL_MEM_HOST;
  A->state++;
}

void coal_mat_device_values_changed(coal_mat A) {
  if (!A || !A->dev) return; /* no device copy: nothing there can have changed */
  coal_mat_format_drop(A, COAL_FORMAT_VALUES);
  A->valid = COAL_MEM_DEVICE;
  A->symmetric = 0;
  A->state++;
}

coal_status coal_mat_destroy(coal_mat *A) {
  if (!A || !*A) return COAL_SUCCESS;
  coal_mat M = *A;
  if (M->dev) coal_backend(M->ctx)->mat.release(M); /* drops the DEVICE entries */
  drop_where(M, 0, 0, 1);
  coal_free(M->rowptr), coal_free(M->colind), coal_free(M->values); /* NULL if device-only */
  coal_free(M);
  *A = NULL;
  return COAL_SUCCESS;
}

coal_status coal_mat_size(coal_mat A, int64_t *nrows, int64_t *ncols, int64_t *nnz) {
  if (!A) return COAL_ERR_ARG;
  if (nrows) *nrows = A->nrows;
  if (ncols) *ncols = A->ncols;
  if (nnz) *nnz = A->nnz;
  return COAL_SUCCESS;
}

coal_dtype coal_mat_dtype(coal_mat A) { return A ? A->dtype : COAL_F64; }
coal_ctx coal_mat_ctx(coal_mat A) { return A ? A->ctx : NULL; }

static coal_status mat_copy_layout(coal_mat A, coal_dtype dtype, int32_t **rp, int32_t **ci,
                                   void **v) {
  coal_ctx ctx = A->ctx;
  *rp = NULL, *ci = NULL, *v = NULL;
  coal_status st;
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * ((size_t)A->nrows + 1), (void **)rp), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * (size_t)A->nnz, (void **)ci), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, coal_dtype_size(dtype) * (size_t)A->nnz, v), fail);
  return COAL_SUCCESS;
fail:
  coal_free(*rp), coal_free(*ci), coal_free(*v);
  *rp = NULL, *ci = NULL, *v = NULL;
  return st;
}

coal_status coal_mat_host(coal_mat A) {
  if (!A) return COAL_ERR_ARG;
  if (A->rowptr && (A->valid & COAL_MEM_HOST)) return COAL_SUCCESS;
  const coal_backend_ops *ops = coal_backend(A->ctx);
  if (A->rowptr) { /* the device values are newer */
    COAL_CALL(ops->mat.download(A, NULL, NULL, A->values));
  } else {
    int32_t *rp, *ci;
    void *v;
    COAL_CALL(mat_copy_layout(A, A->dtype, &rp, &ci, &v));
    coal_status st = ops->mat.download(A, rp, ci, v);
    if (st != COAL_SUCCESS) {
      coal_free(rp), coal_free(ci), coal_free(v);
      return st;
    }
    A->rowptr = rp, A->colind = ci, A->values = v;
  }
  A->valid |= COAL_MEM_HOST;
  return COAL_SUCCESS;
}

coal_status coal_mat_get_csr(coal_mat A, int64_t *rowptr, int32_t *colind, void *values) {
  if (!A) return COAL_ERR_ARG;
  COAL_CALL(coal_mat_host(A));
  if (rowptr)
    for (int64_t i = 0; i <= A->nrows; i++) rowptr[i] = A->rowptr[i];
  if (colind) memcpy(colind, A->colind, sizeof(int32_t) * (size_t)A->nnz);
  if (values) memcpy(values, A->values, coal_dtype_size(A->dtype) * (size_t)A->nnz);
  return COAL_SUCCESS;
}

coal_status coal_mat_set_values(coal_mat A, const void *values) {
  if (!A) return COAL_ERR_ARG;
  COAL_CHECK(A->ctx, values || A->nnz == 0, COAL_ERR_ARG, "NULL values");
  /* the structure must be on the host (the device keeps its copy, only its values go stale);
   * the old values are downloaded with it, then overwritten */
  COAL_CALL(coal_mat_host(A));
  if (A->nnz) memcpy(A->values, values, coal_dtype_size(A->dtype) * (size_t)A->nnz);
  A->symmetric = 0;
  coal_mat_invalidate(A);
  return COAL_SUCCESS;
}

coal_status coal_mat_convert(coal_mat A, coal_dtype dtype, coal_mat *B) {
  if (!A || !B) return COAL_ERR_ARG;
  /* an unknown dtype would otherwise be stored as float in 8-byte slots */
  COAL_CHECK(A->ctx, dtype == COAL_F64 || dtype == COAL_F32, COAL_ERR_ARG, "bad dtype %d",
             (int)dtype);
  COAL_CALL(coal_mat_host(A));
  int32_t *rp, *ci;
  void *v;
  COAL_CALL(mat_copy_layout(A, dtype, &rp, &ci, &v));
  memcpy(rp, A->rowptr, sizeof(int32_t) * ((size_t)A->nrows + 1));
  memcpy(ci, A->colind, sizeof(int32_t) * (size_t)A->nnz);
  for (int64_t p = 0; p < A->nnz; p++) {
    double x = A->dtype == COAL_F64 ? ((double *)A->values)[p] : ((float *)A->values)[p];
    if (dtype == COAL_F64)
      ((double *)v)[p] = x;
    else
      ((float *)v)[p] = (float)x;
  }
  return coal_mat_wrap_csr(A->ctx, A->nrows, A->ncols, rp, ci, v, dtype, B);
}

/* Counting sort by column: O(nnz + n); rows come out sorted within each new row. */
coal_status coal_mat_transpose(coal_mat A, coal_mat *B) {
  if (!A || !B) return COAL_ERR_ARG;
  coal_ctx ctx = A->ctx;
  COAL_CALL(coal_mat_host(A));
  int32_t *rp = NULL, *ci = NULL;
  void *v = NULL;
  coal_status st;
  COAL_CALL_GOTO(st, coal_calloc(ctx, sizeof(int32_t) * ((size_t)A->ncols + 1), (void **)&rp),
                 fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * (size_t)A->nnz, (void **)&ci), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, coal_dtype_size(A->dtype) * (size_t)A->nnz, &v), fail);
  for (int64_t p = 0; p < A->nnz; p++) rp[A->colind[p] + 1]++;
  for (int64_t j = 0; j < A->ncols; j++) rp[j + 1] += rp[j];
  {
    int32_t *next = NULL;
    COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * ((size_t)A->ncols + 1), (void **)&next),
                   fail);
    memcpy(next, rp, sizeof(int32_t) * ((size_t)A->ncols + 1));
    size_t es = coal_dtype_size(A->dtype);
    for (int32_t i = 0; i < A->nrows; i++)
      for (int32_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
        int32_t q = next[A->colind[p]]++;
        ci[q] = i;
        memcpy((char *)v + es * (size_t)q, (const char *)A->values + es * (size_t)p, es);
      }
    coal_free(next);
  }
  return coal_mat_wrap_csr(ctx, A->ncols, A->nrows, rp, ci, v, A->dtype, B);
fail:
  coal_free(rp), coal_free(ci), coal_free(v);
  return st;
}

coal_status coal_mat_permute(coal_mat A, const int32_t *perm, coal_mat *B) {
  if (!A || !B) return COAL_ERR_ARG;
  coal_ctx ctx = A->ctx;
  COAL_CHECK(ctx, perm, COAL_ERR_ARG, "NULL permutation");
  COAL_CHECK(ctx, A->nrows == A->ncols, COAL_ERR_ARG,
             "symmetric permutation needs a square matrix");
  COAL_CALL(coal_mat_host(A));
  int32_t n = A->nrows;
  int32_t *inv = NULL;
  COAL_CALL(coal_malloc(ctx, sizeof(int32_t) * (size_t)n, (void **)&inv));
  for (int32_t i = 0; i < n; i++) inv[i] = -1;
  for (int32_t i = 0; i < n; i++) {
    if (perm[i] < 0 || perm[i] >= n || inv[perm[i]] >= 0) {
      coal_free(inv);
      return COAL_ERROR(ctx, COAL_ERR_ARG, "perm is not a permutation (entry %d)", i);
    }
    inv[perm[i]] = i;
  }
  int32_t *ri = NULL, *cj = NULL;
  double *dv = NULL;
  coal_status st;
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * (size_t)A->nnz, (void **)&ri), done);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * (size_t)A->nnz, (void **)&cj), done);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(double) * (size_t)A->nnz, (void **)&dv), done);
  for (int32_t i = 0; i < n; i++)
    for (int32_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
      ri[p] = inv[i];
      cj[p] = inv[A->colind[p]];
      dv[p] = A->dtype == COAL_F64 ? ((double *)A->values)[p] : ((float *)A->values)[p];
    }
  st = coal_csr_from_coo(ctx, n, n, A->nnz, ri, cj, dv, A->dtype, B);
done:
  coal_free(inv), coal_free(ri), coal_free(cj), coal_free(dv);
  return st;
}

coal_status coal_mat_is_symmetric(coal_mat A, int *sym) {
  if (!A || !sym) return COAL_ERR_ARG;
  *sym = 0;
  if (A->nrows != A->ncols) return COAL_SUCCESS;
  coal_mat T = NULL;
  COAL_CALL(coal_mat_transpose(A, &T)); /* makes A's host copy current */
  int s = memcmp(T->rowptr, A->rowptr, sizeof(int32_t) * ((size_t)A->nrows + 1)) == 0 &&
          memcmp(T->colind, A->colind, sizeof(int32_t) * (size_t)A->nnz) == 0 &&
          memcmp(T->values, A->values, coal_dtype_size(A->dtype) * (size_t)A->nnz) == 0;
  coal_mat_destroy(&T);
  *sym = s;
  return COAL_SUCCESS;
}

/* The row offsets on the host: A's own, or (a device-only matrix) a downloaded copy that the
 * caller releases with put_rowptr. Only the offsets travel, not the whole CSR. */
static coal_status get_rowptr(coal_mat A, int32_t **rp) {
  *rp = A->rowptr;
  if (*rp) return COAL_SUCCESS;
  COAL_CALL(coal_malloc(A->ctx, sizeof(int32_t) * ((size_t)A->nrows + 1), (void **)rp));
  coal_status st = coal_backend(A->ctx)->mat.download(A, *rp, NULL, NULL);
  if (st != COAL_SUCCESS) {
    coal_free(*rp);
    *rp = NULL;
  }
  return st;
}
static void put_rowptr(coal_mat A, int32_t *rp) {
  if (rp != A->rowptr) coal_free(rp);
}

coal_status coal_mat_max_row_len_compute(coal_mat A, int32_t *len) {
  if (A->max_row_len < 0) {
    int32_t *rp = NULL;
    COAL_CALL(get_rowptr(A, &rp));
    int32_t m = 0;
    for (int32_t i = 0; i < A->nrows; i++)
      if (rp[i + 1] - rp[i] > m) m = rp[i + 1] - rp[i];
    put_rowptr(A, rp);
    A->max_row_len = m;
  }
  if (len) *len = A->max_row_len;
  return COAL_SUCCESS;
}

coal_status coal_mat_long_row_segments(coal_mat A, int32_t thr, int32_t seg, int32_t **out,
                                       int32_t *n) {
  *out = NULL, *n = 0;
  COAL_CHECK(A->ctx, thr >= 0 && seg > 0, COAL_ERR_ARG, "bad long-row threshold %d or segment %d",
             (int)thr, (int)seg);
  int32_t *rp = NULL;
  COAL_CALL(get_rowptr(A, &rp));
  int64_t c = 0;
  for (int32_t i = 0; i < A->nrows; i++) {
    const int32_t len = rp[i + 1] - rp[i];
    if (len > thr) c += (len + (int64_t)seg - 1) / seg;
  }
  coal_status st = COAL_SUCCESS;
  if (c > INT32_MAX / 2)
    st = COAL_ERROR(A->ctx, COAL_ERR_OVERFLOW, "%lld row segments", (long long)c);
  if (st == COAL_SUCCESS && c > 0 &&
      (st = coal_malloc(A->ctx, sizeof(int32_t) * 2 * (size_t)c, (void **)out)) == COAL_SUCCESS) {
    int32_t q = 0;
    for (int32_t i = 0; i < A->nrows; i++) {
      const int32_t len = rp[i + 1] - rp[i];
      if (len > thr)
        for (int32_t s = 0; (int64_t)s * seg < len; s++) (*out)[q] = i, (*out)[c + q] = s, q++;
    }
    *n = (int32_t)c;
  }
  put_rowptr(A, rp);
  return st;
}

/* Grid-line stride: for each of up to kLineSamples evenly spaced rows r, the smallest column
 * offset c - r >= COAL_LINE_MIN among the row's entries; the most frequent of these, if at
 * least half the sampled rows have it (a structured-grid ordering: 128 on the 7-point
 * Laplacian 128^3, 99 on the 27-point 100^3), else 0.
 * Plane stride (with a line stride s only): per sampled row the midpoint of the least and the
 * greatest column offset >= 2s, the most frequent of these under the same rule (16384 on the
 * 7-point 128^3, 10000 on the 27-point 100^3: the midpoint centres the 3x3 block above). */
enum { kLineSamples = 4096 };

/* the most frequent of the nc candidates if at least half of the ns samples have it, else 0 */
static int32_t mode_of(int32_t *cand, int32_t nc, int32_t ns) {
  qsort(cand, (size_t)nc, sizeof *cand, coal_cmp_i32);
  int32_t best = 0, bestn = 0;
  for (int32_t i = 0; i < nc;) {
    int32_t j = i;
    while (j < nc && cand[j] == cand[i]) j++;
    if (j - i > bestn) best = cand[i], bestn = j - i;
    i = j;
  }
  return ns > 0 && 2 * (int64_t)bestn >= ns ? best : 0;
}

/* the s-th of ns evenly spaced sample rows */
static int32_t sample_row(int32_t s, int32_t nrows, int32_t ns) {
  return (int32_t)(((int64_t)s * nrows + nrows / 2) / ns);
}

static void grid_strides_of(const int32_t *rp, const int32_t *ci, int32_t nrows, int32_t *cand,
                            int32_t *line, int32_t *plane) {
  const int32_t ns = nrows < kLineSamples ? nrows : kLineSamples;
  int32_t nc = 0;
  for (int32_t s = 0; s < ns; s++) {
    const int32_t r = sample_row(s, nrows, ns);
    for (int32_t p = rp[r]; p < rp[r + 1]; p++)
      if ((int64_t)ci[p] - r >= COAL_LINE_MIN) { /* sorted columns: the first one is the least */
        cand[nc++] = ci[p] - r;
        break;
      }
  }
  *line = mode_of(cand, nc, ns), *plane = 0;
  if (*line <= 0) return;
  nc = 0;
  for (int32_t s = 0; s < ns; s++) {
    const int32_t r = sample_row(s, nrows, ns);
    const int64_t hi = rp[r + 1] > rp[r] ? (int64_t)ci[rp[r + 1] - 1] - r : 0;
    if (hi < 2 * (int64_t)*line) continue;
    for (int32_t p = rp[r]; p < rp[r + 1]; p++)
      if ((int64_t)ci[p] - r >= 2 * (int64_t)*line) {
        cand[nc++] = (int32_t)((ci[p] - r + hi) / 2);
        break;
      }
  }
  *plane = mode_of(cand, nc, ns);
}

coal_status coal_mat_line_stride_compute(coal_mat A, int32_t *stride) {
  if (A->line_stride < 0) {
    int32_t *rp = A->rowptr, *ci = A->colind, *cand = NULL;
    coal_status st = COAL_SUCCESS;
    if (!rp) { /* a device-only matrix: its structure, once */
      st = coal_malloc(A->ctx, sizeof(int32_t) * ((size_t)A->nrows + 1), (void **)&rp);
      if (st == COAL_SUCCESS)
        st = coal_malloc(A->ctx, sizeof(int32_t) * ((size_t)A->nnz + 1), (void **)&ci);
      if (st == COAL_SUCCESS) st = coal_backend(A->ctx)->mat.download(A, rp, ci, NULL);
    }
    if (st == COAL_SUCCESS)
      st = coal_malloc(A->ctx, sizeof(int32_t) * kLineSamples, (void **)&cand);
    if (st == COAL_SUCCESS)
      grid_strides_of(rp, ci, A->nrows, cand, &A->line_stride, &A->plane_stride);
    coal_free(cand);
    if (rp != A->rowptr) coal_free(rp), coal_free(ci);
    if (st != COAL_SUCCESS) return st;
  }
  if (stride) *stride = A->line_stride;
  return COAL_SUCCESS;
}

coal_status coal_mat_plane_stride_compute(coal_mat A, int32_t *stride) {
  COAL_CALL(coal_mat_line_stride_compute(A, NULL));
  if (stride) *stride = A->plane_stride;
  return COAL_SUCCESS;
}

int32_t coal_mat_line_stride(coal_mat A) {
  int32_t s = 0;
  if (coal_mat_line_stride_compute(A, &s) != COAL_SUCCESS) return 0;
  return s;
}

int32_t coal_mat_max_row_len(coal_mat A) {
  int32_t m = -1;
  if (coal_mat_max_row_len_compute(A, &m) != COAL_SUCCESS) return -1;
  return m;
}
