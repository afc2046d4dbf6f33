/* Matrix Market I/O: file reading (plain or gzip through zlib), conversion of the parsed
 * data to sparse matrices and dense block vectors, and the writers.
 *
 * Choices: symmetric and skew-symmetric coordinate files must store the lower triangle only
 * (an upper-triangle entry is a format error, so (i,j) and (j,i) can never both be stored and
 * doubled by the mirroring); explicit zeros in coordinate files are kept; an array file read
 * as a sparse matrix keeps its nonzero values only; a coordinate file read as a block vector
 * leaves missing entries at zero. Duplicates are summed everywhere. */
#include "backend.h"
#include "mmio_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

static const char *errtext(int err, char *buf, size_t n) {
  if (err == 0) return "unknown error";
  if (strerror_r(err, buf, n) != 0) snprintf(buf, n, "error %d", err);
  return buf;
}

/* Reads a whole file, gunzipping it when it is gzip data (zlib reads plain files as is). */
static coal_status read_file(coal_ctx ctx, const char *path, char **out, size_t *outlen) {
  char eb[128];
  *out = NULL, *outlen = 0;
  errno = 0;
  gzFile g = gzopen(path, "rb");
  if (!g)
    return COAL_ERROR(ctx, COAL_ERR_IO, "cannot open '%s': %s", path,
                      errtext(errno, eb, sizeof eb));
  gzbuffer(g, 1u << 17);
  size_t cap = (size_t)1 << 20, n = 0;
  char *buf = malloc(cap);
  coal_status st = COAL_SUCCESS;
  if (!buf) {
    st = COAL_ERROR(ctx, COAL_ERR_MEMORY, "cannot allocate %zu bytes to read '%s'", cap, path);
    goto done;
  }
  for (;;) {
    if (cap - n < ((size_t)1 << 16)) {
      char *nb = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
      if (!nb) {
        st = COAL_ERROR(ctx, COAL_ERR_MEMORY, "cannot allocate %zu bytes to read '%s'", cap * 2,
                        path);
        goto done;
      }
      buf = nb, cap *= 2;
    }
    size_t want = cap - n;
    if (want > ((size_t)1 << 30)) want = (size_t)1 << 30;
    errno = 0;
    int r = gzread(g, buf + n, (unsigned)want);
    if (r < 0) {
      int zerr = 0;
      const char *m = gzerror(g, &zerr);
      st = COAL_ERROR(ctx, COAL_ERR_IO, "cannot read '%s': %s", path,
                      zerr == Z_ERRNO ? errtext(errno, eb, sizeof eb) : m);
      goto done;
    }
    if (r == 0) break;
    n += (size_t)r;
  }
  {
    int zerr = Z_OK;
    const char *m = gzerror(g, &zerr);
    if (zerr != Z_OK) {
      st = COAL_ERROR(ctx, COAL_ERR_IO, "cannot read '%s': %s (corrupt or truncated gzip data)",
                      path, m);
      goto done;
    }
  }
done:
  if (gzclose_r(g) != Z_OK && st == COAL_SUCCESS)
    st = COAL_ERROR(ctx, COAL_ERR_IO, "cannot read '%s': corrupt or truncated gzip data", path);
  if (st) {
    free(buf);
    return st;
  }
  *out = buf, *outlen = n;
  return COAL_SUCCESS;
}

/* Walks the (row, column) positions of an array file's values: column-major, whole columns
 * (general), from the diagonal down (symmetric) or from below the diagonal (skew). */
typedef struct {
  const coal_mm *mm;
  int64_t i, j;
} array_walk;

static int64_t col_start(const coal_mm *mm, int64_t j) {
  return mm->symmetry == COAL_MM_GENERAL ? 0 : mm->symmetry == COAL_MM_SYMMETRIC ? j : j + 1;
}
static void walk_init(array_walk *w, const coal_mm *mm) {
  w->mm = mm, w->j = 0, w->i = col_start(mm, 0) - 1;
}
/* Only called as many times as there are values, so it never runs past the last column. */
static void walk_next(array_walk *w) {
  w->i++;
  while (w->i >= w->mm->nrows) w->j++, w->i = col_start(w->mm, w->j);
}

/* Array values -> COO of the nonzeros, mirrored for symmetric / skew-symmetric. */
static coal_status array_to_coo(coal_ctx ctx, const char *name, coal_mm *mm) {
  int64_t nz = 0;
  array_walk w;
  walk_init(&w, mm);
  for (int64_t t = 0; t < mm->n; t++) {
    walk_next(&w);
    if (mm->v[t] != 0) nz += (mm->symmetry != COAL_MM_GENERAL && w.i != w.j) ? 2 : 1;
  }
  if (nz > INT32_MAX)
    return COAL_ERROR(ctx, COAL_ERR_OVERFLOW, "%.300s line %lld: %lld nonzeros exceed 2^31-1", name,
                      (long long)mm->size_line, (long long)nz);
  int32_t *ri = NULL, *ci = NULL;
  double *v = NULL;
  coal_status st;
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * (size_t)nz, (void **)&ri), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * (size_t)nz, (void **)&ci), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(double) * (size_t)nz, (void **)&v), fail);
  int64_t e = 0;
  walk_init(&w, mm);
  for (int64_t t = 0; t < mm->n; t++) {
    walk_next(&w);
    double x = mm->v[t];
    if (x == 0) continue;
    ri[e] = (int32_t)w.i, ci[e] = (int32_t)w.j, v[e] = x, e++;
    if (mm->symmetry != COAL_MM_GENERAL && w.i != w.j) {
      ri[e] = (int32_t)w.j, ci[e] = (int32_t)w.i;
      v[e] = mm->symmetry == COAL_MM_SKEW ? -x : x;
      e++;
    }
  }
  coal_mm_free(mm);
  mm->ri = ri, mm->ci = ci, mm->v = v, mm->n = mm->cap = nz;
  return COAL_SUCCESS;
fail:
  coal_free(ri), coal_free(ci), coal_free(v);
  return st;
}

coal_status coal_mat_read_mm_buffer(coal_ctx ctx, const char *name, const char *buf, size_t len,
                                    coal_dtype dtype, coal_mat *A) {
  if (!ctx) return COAL_ERR_ARG;
  COAL_CHECK(ctx, A, COAL_ERR_ARG, "NULL output matrix");
  *A = NULL;
  COAL_CHECK(ctx, buf || len == 0, COAL_ERR_ARG, "NULL buffer with length %zu", len);
  COAL_CHECK(ctx, dtype == COAL_F64 || dtype == COAL_F32, COAL_ERR_ARG, "bad dtype");
  if (!name) name = "<buffer>";
  coal_mm mm;
  COAL_CALL(coal_mm_parse(ctx, name, buf, len, dtype, &mm));
  coal_status st = COAL_SUCCESS;
  if (mm.format == COAL_MM_ARRAY) st = array_to_coo(ctx, name, &mm);
  if (!st) st = coal_csr_from_coo(ctx, mm.nrows, mm.ncols, mm.n, mm.ri, mm.ci, mm.v, dtype, A);
  if (!st && mm.symmetry == COAL_MM_SYMMETRIC) (*A)->symmetric = 1; /* mirrored exactly */
  coal_mm_free(&mm);
  return st;
}

coal_status coal_mat_read_mm(coal_ctx ctx, const char *path, coal_dtype dtype, coal_mat *A) {
  if (!ctx) return COAL_ERR_ARG;
  COAL_CHECK(ctx, A && path, COAL_ERR_ARG, "NULL path or output matrix");
  *A = NULL;
  COAL_CHECK(ctx, dtype == COAL_F64 || dtype == COAL_F32, COAL_ERR_ARG, "bad dtype");
  char *buf;
  size_t len;
  COAL_CALL(read_file(ctx, path, &buf, &len));
  coal_status st = coal_mat_read_mm_buffer(ctx, path, buf, len, dtype, A);
  free(buf);
  return st;
}

coal_status coal_bvec_read_mm_buffer(coal_ctx ctx, const char *name, const char *buf, size_t len,
                                     coal_dtype dtype, coal_layout layout, coal_bvec *X) {
  if (!ctx) return COAL_ERR_ARG;
  COAL_CHECK(ctx, X, COAL_ERR_ARG, "NULL output block vector");
  *X = NULL;
  COAL_CHECK(ctx, buf || len == 0, COAL_ERR_ARG, "NULL buffer with length %zu", len);
  COAL_CHECK(ctx, dtype == COAL_F64 || dtype == COAL_F32, COAL_ERR_ARG, "bad dtype");
  COAL_CHECK(ctx, layout == COAL_COL_MAJOR || layout == COAL_ROW_MAJOR, COAL_ERR_ARG, "bad layout");
  if (!name) name = "<buffer>";
  coal_mm mm;
  COAL_CALL(coal_mm_parse(ctx, name, buf, len, dtype, &mm));
  int64_t n = mm.nrows, k = mm.ncols, total = n * k; /* < 2^62 */
  coal_status st = COAL_SUCCESS;
  double *d = NULL;
  float *f = NULL;
  if ((uint64_t)total > SIZE_MAX / sizeof(double) || total > COAL_MM_MAX_DENSE) {
    st = COAL_ERROR(ctx, COAL_ERR_OVERFLOW,
                    "%.300s line %lld: a dense %lld x %lld block is too large", name,
                    (long long)mm.size_line, (long long)n, (long long)k);
    goto done;
  }
  COAL_CALL_GOTO(st, coal_calloc(ctx, sizeof(double) * (size_t)total, (void **)&d), done);
  if (mm.format == COAL_MM_COORDINATE) {
    for (int64_t e = 0; e < mm.n; e++) d[mm.ri[e] + (int64_t)mm.ci[e] * n] += mm.v[e];
  } else {
    array_walk w;
    walk_init(&w, &mm);
    for (int64_t t = 0; t < mm.n; t++) {
      walk_next(&w);
      d[w.i + w.j * n] = mm.v[t];
      if (mm.symmetry != COAL_MM_GENERAL && w.i != w.j)
        d[w.j + w.i * n] = mm.symmetry == COAL_MM_SKEW ? -mm.v[t] : mm.v[t];
    }
  }
  coal_mm_free(&mm);
  if (dtype == COAL_F32) {
    COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(float) * (size_t)total, (void **)&f), done);
    for (int64_t t = 0; t < total; t++) f[t] = (float)d[t];
  }
  {
    int64_t tight = layout == COAL_COL_MAJOR ? n : k;
    COAL_CALL_GOTO(st, coal_bvec_create(ctx, n, k, dtype, layout, tight > 0 ? tight : 1, X), done);
    st = coal_bvec_set_host(*X, f ? (const void *)f : (const void *)d, COAL_COL_MAJOR,
                            n > 0 ? n : 1);
    if (st) coal_bvec_destroy(X);
  }
done:
  coal_mm_free(&mm);
  coal_free(d);
  coal_free(f);
  return st;
}

coal_status coal_bvec_read_mm(coal_ctx ctx, const char *path, coal_dtype dtype, coal_layout layout,
                              coal_bvec *X) {
  if (!ctx) return COAL_ERR_ARG;
  COAL_CHECK(ctx, X && path, COAL_ERR_ARG, "NULL path or output block vector");
  *X = NULL;
  char *buf;
  size_t len;
  COAL_CALL(read_file(ctx, path, &buf, &len));
  coal_status st = coal_bvec_read_mm_buffer(ctx, path, buf, len, dtype, layout, X);
  free(buf);
  return st;
}

/* ---- writers ------------------------------------------------------------------------- */
typedef struct {
  coal_ctx ctx;
  const char *path;
  FILE *f;
  gzFile gz;
  char *buf;
  size_t n, cap;
  int err; /* errno of the first failure, or -1 for a zlib failure */
} mm_writer;

static coal_status writer_open(mm_writer *w, coal_ctx ctx, const char *path) {
  char eb[128];
  memset(w, 0, sizeof *w);
  w->ctx = ctx, w->path = path, w->cap = (size_t)1 << 16;
  COAL_CALL(coal_malloc(ctx, w->cap, (void **)&w->buf));
  size_t len = strlen(path);
  errno = 0;
  if (len >= 3 && strcmp(path + len - 3, ".gz") == 0)
    w->gz = gzopen(path, "wb");
  else
    w->f = fopen(path, "wb");
  if (!w->gz && !w->f) {
    coal_free(w->buf);
    return COAL_ERROR(ctx, COAL_ERR_IO, "cannot create '%s': %s", path,
                      errtext(errno, eb, sizeof eb));
  }
  return COAL_SUCCESS;
}

static void writer_flush(mm_writer *w) {
  if (w->n && !w->err) {
    errno = 0;
    if (w->gz) {
      if (gzwrite(w->gz, w->buf, (unsigned)w->n) != (int)w->n) w->err = errno ? errno : -1;
    } else if (fwrite(w->buf, 1, w->n, w->f) != w->n) {
      w->err = errno ? errno : EIO;
    }
  }
  w->n = 0;
}

static void writer_printf(mm_writer *w, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void writer_printf(mm_writer *w, const char *fmt, ...) {
  for (int attempt = 0; attempt < 2; attempt++) {
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(w->buf + w->n, w->cap - w->n, fmt, ap);
    va_end(ap);
    if (m >= 0 && (size_t)m < w->cap - w->n) {
      w->n += (size_t)m;
      return;
    }
    writer_flush(w); /* lines are far shorter than the buffer: the retry fits */
  }
  if (!w->err) w->err = EOVERFLOW;
}

static coal_status writer_close(mm_writer *w) {
  char eb[128];
  writer_flush(w);
  int err = w->err;
  errno = 0;
  if (w->gz) {
    if (gzclose_w(w->gz) != Z_OK && !err) err = errno ? errno : -1;
  } else if (fclose(w->f) != 0 && !err) {
    err = errno ? errno : EIO;
  }
  coal_free(w->buf);
  if (!err) return COAL_SUCCESS;
  /* the partial file is left in place: path may name something that must not be unlinked */
  return COAL_ERROR(w->ctx, COAL_ERR_IO, "cannot write '%s': %s", w->path,
                    err > 0 ? errtext(err, eb, sizeof eb) : "zlib error");
}

coal_status coal_mat_write_mm(coal_mat A, const char *path) {
  if (!A) return COAL_ERR_ARG;
  COAL_CHECK(A->ctx, path, COAL_ERR_ARG, "NULL path");
  COAL_CALL(coal_mat_host(A));
  mm_writer w;
  COAL_CALL(writer_open(&w, A->ctx, path));
  writer_printf(&w, "%%%%MatrixMarket matrix coordinate real general\n");
  writer_printf(&w, "%d %d %lld\n", A->nrows, A->ncols, (long long)A->nnz);
  for (int32_t i = 0; i < A->nrows && !w.err; i++)
    for (int32_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
      if (A->dtype == COAL_F64)
        writer_printf(&w, "%d %d %.17g\n", i + 1, A->colind[p] + 1, ((const double *)A->values)[p]);
      else
        writer_printf(&w, "%d %d %.9g\n", i + 1, A->colind[p] + 1,
                      (double)((const float *)A->values)[p]);
    }
  return writer_close(&w);
}

coal_status coal_bvec_write_mm(coal_bvec X, const char *path) {
  if (!X) return COAL_ERR_ARG;
  coal_ctx ctx = X->ctx;
  COAL_CHECK(ctx, path, COAL_ERR_ARG, "NULL path");
  size_t total = (size_t)X->n * (size_t)X->k, es = coal_dtype_size(X->dtype);
  void *h = NULL;
  COAL_CALL(coal_malloc(ctx, total * es, &h));
  coal_status st = coal_bvec_get_host(X, h, COAL_COL_MAJOR, X->n > 0 ? X->n : 1);
  if (st) {
    coal_free(h);
    return st;
  }
  mm_writer w;
  st = writer_open(&w, ctx, path);
  if (st) {
    coal_free(h);
    return st;
  }
  writer_printf(&w, "%%%%MatrixMarket matrix array real general\n");
  writer_printf(&w, "%lld %lld\n", (long long)X->n, (long long)X->k);
  for (size_t t = 0; t < total && !w.err; t++) {
    if (X->dtype == COAL_F64)
      writer_printf(&w, "%.17g\n", ((const double *)h)[t]);
    else
      writer_printf(&w, "%.9g\n", (double)((const float *)h)[t]);
  }
  coal_free(h);
  return writer_close(&w);
}
