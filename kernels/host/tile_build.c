/* Sparse tile format (kernels/tile.h): CSR <-> tiles on the host, the tile CSC index, value
 * refresh. Every conversion is a few linear passes; the only sort is that of the tile columns
 * met by each tile row (a few per row on stencil matrices). */
#include "../tile.h"

#include <string.h>

void coal_tile_free(coal_tile *t) {
  if (!t) return;
  coal_free(t->tile_ptr), coal_free(t->tile_col), coal_free(t->tile_nnz);
  coal_free(t->row_ptr), coal_free(t->mask), coal_free(t->idx), coal_free(t->val);
  coal_free(t->csr_pos), coal_free(t->csc_ptr), coal_free(t->csc_row), coal_free(t->csc_id);
  coal_free(t);
}

size_t coal_tile_bytes(const coal_tile *t) {
  if (!t) return 0;
  const size_t nt = (size_t)t->ntiles, nz = (size_t)t->nnz;
  size_t b = sizeof(int32_t) * ((size_t)t->tm + 1 + nt + nt + 1) +
             (sizeof(uint8_t) + sizeof(uint16_t)) * COAL_TILE_DIM * nt;
  if (t->idx) b += nz;
  if (t->val) b += coal_dtype_size(t->dtype) * nz;
  if (t->csr_pos) b += sizeof(int32_t) * nz;
  if (t->csc_ptr) b += sizeof(int32_t) * ((size_t)t->tn + 1 + 2 * nt);
  return b;
}

coal_status coal_tile_alloc_layout(coal_ctx ctx, int32_t nrows, int32_t ncols, int32_t ntiles,
                                   coal_dtype dtype, coal_tile **out) {
  *out = NULL;
  coal_tile *t = NULL;
  COAL_CALL(coal_calloc(ctx, sizeof *t, (void **)&t));
  t->nrows = nrows, t->ncols = ncols, t->dtype = dtype, t->ntiles = ntiles;
  t->tm = coal_tile_count(nrows), t->tn = coal_tile_count(ncols);
  size_t nt = (size_t)ntiles;
  coal_status st;
  COAL_CALL_GOTO(st, coal_calloc(ctx, sizeof(int32_t) * ((size_t)t->tm + 1), (void **)&t->tile_ptr),
                 fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * nt, (void **)&t->tile_col), fail);
  COAL_CALL_GOTO(st, coal_calloc(ctx, sizeof(int32_t) * (nt + 1), (void **)&t->tile_nnz), fail);
  COAL_CALL_GOTO(st, coal_calloc(ctx, COAL_TILE_DIM * nt, (void **)&t->row_ptr), fail);
  COAL_CALL_GOTO(st, coal_calloc(ctx, sizeof(uint16_t) * COAL_TILE_DIM * nt, (void **)&t->mask),
                 fail);
  *out = t;
  return COAL_SUCCESS;
fail:
  coal_tile_free(t);
  return st;
}

/* Tiles per tile row: a tile column is counted once per tile row (mark[J] remembers the last
 * tile row that met J). Returns the total in *ntiles (int64: checked by the caller). */
static void count_tiles(int32_t nrows, int32_t tm, const int32_t *rowptr, const int32_t *colind,
                        int32_t *mark, int32_t *tile_ptr, int64_t *ntiles) {
  int64_t total = 0;
  for (int32_t I = 0; I < tm; I++) {
    int32_t r1 = (I + 1) * COAL_TILE_DIM < nrows ? (I + 1) * COAL_TILE_DIM : nrows;
    for (int32_t i = I * COAL_TILE_DIM; i < r1; i++)
      for (int32_t p = rowptr[i]; p < rowptr[i + 1]; p++) {
        int32_t J = colind[p] / COAL_TILE_DIM;
        if (mark[J] != I) mark[J] = I, total++;
      }
    tile_ptr[I + 1] = (int32_t)(total < INT32_MAX ? total : INT32_MAX);
  }
  *ntiles = total;
}

coal_status coal_tile_from_csr(coal_ctx ctx, int32_t nrows, int32_t ncols, const int32_t *rowptr,
                               const int32_t *colind, const void *val, coal_dtype dtype,
                               int with_pos, coal_tile **out) {
  *out = NULL;
  const int32_t tm = coal_tile_count(nrows), tn = coal_tile_count(ncols);
  const int64_t nnz = rowptr[nrows];
  const size_t es = coal_dtype_size(dtype);
  int32_t *mark = NULL, *slot = NULL, *fill = NULL, *tp = NULL;
  coal_tile *t = NULL;
  coal_status st;
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * ((size_t)tn + 1), (void **)&mark), done);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * ((size_t)tn + 1), (void **)&slot), done);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * ((size_t)tn + 1), (void **)&fill), done);
  COAL_CALL_GOTO(st, coal_calloc(ctx, sizeof(int32_t) * ((size_t)tm + 1), (void **)&tp), done);
  for (int32_t J = 0; J < tn; J++) mark[J] = -1;
  int64_t ntiles = 0;
  count_tiles(nrows, tm, rowptr, colind, mark, tp, &ntiles);
  if (ntiles > INT32_MAX) {
    st = COAL_ERROR(ctx, COAL_ERR_OVERFLOW, "%lld tiles exceed 2^31-1", (long long)ntiles);
    goto done;
  }
  COAL_CALL_GOTO(st, coal_tile_alloc_layout(ctx, nrows, ncols, (int32_t)ntiles, dtype, &t), done);
  memcpy(t->tile_ptr, tp, sizeof(int32_t) * ((size_t)tm + 1));
  t->nnz = nnz;
  COAL_CALL_GOTO(st, coal_malloc(ctx, (size_t)nnz, (void **)&t->idx), done);
  if (val) COAL_CALL_GOTO(st, coal_malloc(ctx, es * (size_t)nnz, &t->val), done);
  if (with_pos)
    COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * (size_t)nnz, (void **)&t->csr_pos), done);
  for (int32_t J = 0; J < tn; J++) mark[J] = -1;
  /* Per tile row: (1) its tile columns, sorted, and the tile number slot[J] of each; (2) the
   * row masks, hence the 8-bit row offsets and each tile's first nonzero; (3) the fill: rows
   * come in order and columns ascend within a row, so every tile receives its entries in its
   * own storage order and a running count fill[J] per tile places them. */
  int64_t nz = 0;
  for (int32_t I = 0; I < tm; I++) {
    const int32_t t0 = t->tile_ptr[I], t1 = t->tile_ptr[I + 1];
    const int32_t i0 = I * COAL_TILE_DIM;
    const int32_t i1 = i0 + COAL_TILE_DIM < nrows ? i0 + COAL_TILE_DIM : nrows;
    int32_t k = t0;
    for (int32_t i = i0; i < i1; i++)
      for (int32_t p = rowptr[i]; p < rowptr[i + 1]; p++) {
        int32_t J = colind[p] / COAL_TILE_DIM;
        if (mark[J] != I) mark[J] = I, t->tile_col[k++] = J;
      }
    if (t1 - t0 > 1) qsort(t->tile_col + t0, (size_t)(t1 - t0), sizeof(int32_t), coal_cmp_i32);
    for (int32_t q = t0; q < t1; q++) slot[t->tile_col[q]] = q, fill[t->tile_col[q]] = 0;
    for (int32_t i = i0; i < i1; i++)
      for (int32_t p = rowptr[i]; p < rowptr[i + 1]; p++) {
        int32_t q = slot[colind[p] / COAL_TILE_DIM];
        t->mask[(size_t)q * COAL_TILE_DIM + (size_t)(i - i0)] |=
            (uint16_t)(1u << (colind[p] % COAL_TILE_DIM));
      }
    for (int32_t q = t0; q < t1; q++) {
      t->tile_nnz[q] = (int32_t)nz;
      const uint16_t *m = t->mask + (size_t)q * COAL_TILE_DIM;
      int off = 0;
      for (int r = 0; r < COAL_TILE_DIM; r++) {
        t->row_ptr[(size_t)q * COAL_TILE_DIM + (size_t)r] = (uint8_t)off;
        off += __builtin_popcount(m[r]);
      }
      nz += off;
    }
    for (int32_t i = i0; i < i1; i++)
      for (int32_t p = rowptr[i]; p < rowptr[i + 1]; p++) {
        int32_t J = colind[p] / COAL_TILE_DIM;
        int64_t e = (int64_t)t->tile_nnz[slot[J]] + fill[J]++;
        t->idx[e] = (uint8_t)(((i - i0) << 4) | (colind[p] % COAL_TILE_DIM));
        if (val) memcpy((char *)t->val + es * (size_t)e, (const char *)val + es * (size_t)p, es);
        if (with_pos) t->csr_pos[e] = p;
      }
  }
  t->tile_nnz[t->ntiles] = (int32_t)nz;
  st = COAL_SUCCESS;
done:
  coal_free(mark), coal_free(slot), coal_free(fill), coal_free(tp);
  if (st == COAL_SUCCESS)
    *out = t;
  else
    coal_tile_free(t);
  return st;
}

coal_status coal_tile_build_host(coal_mat A, coal_tile **out) {
  return coal_tile_from_csr(A->ctx, A->nrows, A->ncols, A->rowptr, A->colind, A->values, A->dtype,
                            1, out);
}

/* Row i = 16I + r of the matrix is the concatenation, over the tiles of tile row I in tile
 * column order, of their local row r: columns ascend because tile columns do. */
coal_status coal_tile_to_csr_host(coal_ctx ctx, const coal_tile *t, int32_t **rowptr,
                                  int32_t **colind, void **values) {
  *rowptr = NULL, *colind = NULL, *values = NULL;
  COAL_CHECK(ctx, t->idx || t->nnz == 0, COAL_ERR_STATE, "tile matrix has no local indices");
  const size_t es = coal_dtype_size(t->dtype);
  int32_t *rp = NULL, *ci = NULL;
  void *v = NULL;
  coal_status st;
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * ((size_t)t->nrows + 1), (void **)&rp),
                 fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * (size_t)t->nnz, (void **)&ci), fail);
  if (t->val) COAL_CALL_GOTO(st, coal_malloc(ctx, es * (size_t)t->nnz, &v), fail);
  int64_t w = 0;
  rp[0] = 0;
  for (int32_t i = 0; i < t->nrows; i++) {
    const int32_t I = i / COAL_TILE_DIM, r = i % COAL_TILE_DIM;
    for (int32_t q = t->tile_ptr[I]; q < t->tile_ptr[I + 1]; q++) {
      const size_t qr = (size_t)q * COAL_TILE_DIM + (size_t)r;
      int64_t e0 = (int64_t)t->tile_nnz[q] + t->row_ptr[qr];
      int64_t e1 = e0 + __builtin_popcount(t->mask[qr]);
      for (int64_t e = e0; e < e1; e++, w++) {
        ci[w] = t->tile_col[q] * COAL_TILE_DIM + (t->idx[e] & 15);
        if (v) memcpy((char *)v + es * (size_t)w, (const char *)t->val + es * (size_t)e, es);
      }
    }
    rp[i + 1] = (int32_t)w;
  }
  *rowptr = rp, *colind = ci, *values = v;
  return COAL_SUCCESS;
fail:
  coal_free(rp), coal_free(ci), coal_free(v);
  return st;
}

coal_status coal_tile_csr_structure(coal_ctx ctx, const coal_tile *t, int32_t **rowptr,
                                    int32_t **colind, int32_t *pos) {
  *rowptr = NULL, *colind = NULL;
  int32_t *rp = NULL, *ci = NULL;
  COAL_CALL(coal_malloc(ctx, sizeof(int32_t) * ((size_t)t->nrows + 1), (void **)&rp));
  int64_t w = 0;
  rp[0] = 0;
  for (int32_t i = 0; i < t->nrows; i++) {
    const int32_t I = i / COAL_TILE_DIM, r = i % COAL_TILE_DIM;
    for (int32_t q = t->tile_ptr[I]; q < t->tile_ptr[I + 1]; q++) {
      const size_t qr = (size_t)q * COAL_TILE_DIM + (size_t)r;
      if (pos) pos[qr] = (int32_t)(w < INT32_MAX ? w : INT32_MAX);
      w += __builtin_popcount(t->mask[qr]);
    }
    if (w > INT32_MAX) {
      coal_free(rp);
      return COAL_ERROR(ctx, COAL_ERR_OVERFLOW,
                        "the product has more than 2^31-1 nonzeros (32-bit row offsets)");
    }
    rp[i + 1] = (int32_t)w;
  }
  coal_status st = coal_malloc(ctx, sizeof(int32_t) * (size_t)w, (void **)&ci);
  if (st) {
    coal_free(rp);
    return st;
  }
  for (int32_t i = 0; i < t->nrows; i++) {
    const int32_t I = i / COAL_TILE_DIM, r = i % COAL_TILE_DIM;
    int32_t o = rp[i];
    for (int32_t q = t->tile_ptr[I]; q < t->tile_ptr[I + 1]; q++) {
      unsigned m = t->mask[(size_t)q * COAL_TILE_DIM + (size_t)r];
      while (m) {
        ci[o++] = t->tile_col[q] * COAL_TILE_DIM + __builtin_ctz(m);
        m &= m - 1;
      }
    }
  }
  *rowptr = rp, *colind = ci;
  return COAL_SUCCESS;
}

coal_status coal_tile_build_csc(coal_ctx ctx, coal_tile *t) {
  if (t->csc_ptr) return COAL_SUCCESS;
  int32_t *cp = NULL, *cr = NULL, *cid = NULL, *next = NULL;
  coal_status st;
  const size_t nt = (size_t)t->ntiles;
  COAL_CALL_GOTO(st, coal_calloc(ctx, sizeof(int32_t) * ((size_t)t->tn + 1), (void **)&cp), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * nt, (void **)&cr), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * nt, (void **)&cid), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * ((size_t)t->tn + 1), (void **)&next), fail);
  for (size_t q = 0; q < nt; q++) cp[t->tile_col[q] + 1]++;
  for (int32_t J = 0; J < t->tn; J++) cp[J + 1] += cp[J];
  memcpy(next, cp, sizeof(int32_t) * ((size_t)t->tn + 1));
  for (int32_t I = 0; I < t->tm; I++)
    for (int32_t q = t->tile_ptr[I]; q < t->tile_ptr[I + 1]; q++) {
      int32_t o = next[t->tile_col[q]]++;
      cr[o] = I, cid[o] = q;
    }
  coal_free(next);
  t->csc_ptr = cp, t->csc_row = cr, t->csc_id = cid;
  return COAL_SUCCESS;
fail:
  coal_free(cp), coal_free(cr), coal_free(cid), coal_free(next);
  return st;
}

void coal_tile_refresh_values(coal_tile *t, const void *csr_values) {
  if (!t->val || !t->csr_pos) return;
  if (t->dtype == COAL_F64) {
    const double *s = (const double *)csr_values;
    double *d = (double *)t->val;
    for (int64_t e = 0; e < t->nnz; e++) d[e] = s[t->csr_pos[e]];
  } else {
    const float *s = (const float *)csr_values;
    float *d = (float *)t->val;
    for (int64_t e = 0; e < t->nnz; e++) d[e] = s[t->csr_pos[e]];
  }
}
