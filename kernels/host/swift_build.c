/* Swift SpMM format builder ([SWIFT], sections IV-A to IV-C), in O(nnz + n). The layout is
 * documented with struct coal_swift in kernels/swift.h.
 *
 * 1. Columns are sorted by entry count, descending and stable, with one counting sort.
 * 2. Each full group of 32 sorted columns keeps rounds [0, R_g) regular, R_g being the count
 *    of its last column; those rounds are cut into blocks of at most H rounds. The entries
 *    past R_g (and every entry of the partial last group) form the irregular part.
 * 3. Segment information per CTA group of 8 blocks: the regular elements are sorted by
 *    (CTA group, row, element) with two stable counting sorts (by row over all elements, then
 *    by group), which gives each element its slot and each slot its row without a per-group
 *    pass over the rows; runs of equal rows inside a group are the segments.
 * 4. The residual entries are stored column by column (CSC) and cut into sub-blocks of at
 *    most 32 entries. */
#include "../swift.h"

#include <string.h>

#define SW_WARP COAL_SWIFT_WARP
#define SW_CTA  COAL_SWIFT_CTA_BLOCKS

void coal_swift_free(coal_swift *s) {
  if (!s) return;
  coal_free(s->perm);
  coal_free(s->blk_ptr);
  coal_free(s->blk_col);
  coal_free(s->reg_val);
  coal_free(s->reg_pos);
  coal_free(s->slot_row);
  coal_free(s->slot_seg);
  coal_free(s->irr_col);
  coal_free(s->irr_ptr);
  coal_free(s->irr_row);
  coal_free(s->irr_val);
  coal_free(s->irr_blk_col);
  coal_free(s->irr_blk_start);
  coal_free(s->irr_blk_stop);
  coal_free(s);
}

static inline void sw_copy(void *dst, int64_t d, const void *src, int64_t s, size_t es) {
  if (es == 8)
    ((double *)dst)[d] = ((const double *)src)[s];
  else
    ((float *)dst)[d] = ((const float *)src)[s];
}

/* Regular rounds of sorted position s: its group's R if the group is full, else 0. */
static inline int32_t sw_regular_rounds(const int32_t *ptr, const int32_t *perm, int32_t ncols,
                                        int32_t s) {
  int32_t last = (s / SW_WARP) * SW_WARP + SW_WARP - 1;
  if (last >= ncols) return 0;
  return ptr[perm[last] + 1] - ptr[perm[last]];
}

/* Copies the regular rounds into blocks; rows of the elements go to erow. */
static void sw_fill_blocks(coal_swift *s, const int32_t *ptr, const int32_t *idx, const void *val,
                           size_t es, int32_t *erow) {
  int32_t nfull = s->ncols / SW_WARP, b = 0, H = s->height_limit;
  int64_t e = 0;
  for (int32_t g = 0; g < nfull; g++) {
    int32_t s0 = g * SW_WARP;
    int32_t R = sw_regular_rounds(ptr, s->perm, s->ncols, s0);
    for (int32_t r0 = 0; r0 < R; r0 += H) {
      int32_t h = R - r0 < H ? R - r0 : H;
      s->blk_ptr[b] = (int32_t)e;
      s->blk_col[b] = s0;
      b++;
      for (int32_t r = 0; r < h; r++)
        for (int32_t l = 0; l < SW_WARP; l++, e++) {
          int64_t src = (int64_t)ptr[s->perm[s0 + l]] + r0 + r;
          erow[e] = idx[src];
          sw_copy(s->reg_val, e, val, src, es);
        }
    }
  }
  s->blk_ptr[b] = (int32_t)e;
}

/* Slots and segments of every CTA group (step 3). */
static coal_status sw_segments(coal_ctx ctx, coal_swift *s, const int32_t *erow) {
  int64_t nreg = s->nreg;
  int32_t nrows = s->nrows, ncta = s->ncta;
  coal_status st = COAL_SUCCESS;
  int32_t *ecta = NULL, *order = NULL, *rstart = NULL, *next = NULL;
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * (size_t)nreg, (void **)&ecta), done);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * (size_t)nreg, (void **)&order), done);
  COAL_CALL_GOTO(st, coal_calloc(ctx, sizeof(int32_t) * ((size_t)nrows + 1), (void **)&rstart),
                 done);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * (size_t)ncta, (void **)&next), done);
  for (int32_t c = 0; c < ncta; c++) {
    int32_t b1 = (c + 1) * SW_CTA < s->nblocks ? (c + 1) * SW_CTA : s->nblocks;
    next[c] = s->blk_ptr[c * SW_CTA];
    for (int32_t e = s->blk_ptr[c * SW_CTA]; e < s->blk_ptr[b1]; e++) ecta[e] = c;
  }
  /* stable counting sort by row */
  for (int64_t e = 0; e < nreg; e++) rstart[erow[e] + 1]++;
  for (int32_t i = 0; i < nrows; i++) rstart[i + 1] += rstart[i];
  for (int64_t e = 0; e < nreg; e++) order[rstart[erow[e]]++] = (int32_t)e;
  /* stable by group: slots of a group come out sorted by (row, element) */
  for (int64_t t = 0; t < nreg; t++) {
    int32_t e = order[t], c = ecta[e];
    int32_t slot = next[c]++;
    s->reg_pos[e] = (uint16_t)(slot - s->blk_ptr[c * SW_CTA]);
    s->slot_row[slot] = erow[e];
  }
  /* runs of equal rows inside each group */
  s->nsegments = 0;
  for (int32_t c = 0; c < ncta; c++) {
    int32_t b1 = (c + 1) * SW_CTA < s->nblocks ? (c + 1) * SW_CTA : s->nblocks;
    int32_t lo = s->blk_ptr[c * SW_CTA], hi = s->blk_ptr[b1];
    for (int32_t p = lo; p < hi;) {
      int32_t q = p + 1;
      while (q < hi && s->slot_row[q] == s->slot_row[p]) s->slot_seg[q++] = 0;
      s->slot_seg[p] = (uint16_t)(q - p);
      s->nsegments++;
      p = q;
    }
  }
done:
  coal_free(ecta), coal_free(order), coal_free(rstart), coal_free(next);
  return st;
}

/* Residual entries in CSC and their sub-blocks (step 4). */
static void sw_fill_irregular(coal_swift *s, const int32_t *ptr, const int32_t *idx,
                              const void *val, size_t es) {
  int32_t c = 0, nb = 0;
  int64_t e = 0;
  s->irr_ptr[0] = 0;
  for (int32_t p = 0; p < s->ncols; p++) {
    int32_t j = s->perm[p];
    int32_t lo = ptr[j] + sw_regular_rounds(ptr, s->perm, s->ncols, p), hi = ptr[j + 1];
    if (lo >= hi) continue;
    s->irr_col[c] = j;
    for (int32_t q = lo; q < hi; q += SW_WARP) {
      int32_t q1 = hi - q < SW_WARP ? hi : q + SW_WARP;
      s->irr_blk_col[nb] = j;
      s->irr_blk_start[nb] = (int32_t)(e + (q - lo));
      s->irr_blk_stop[nb] = (int32_t)(e + (q1 - lo));
      nb++;
    }
    for (int32_t q = lo; q < hi; q++, e++) {
      s->irr_row[e] = idx[q];
      sw_copy(s->irr_val, e, val, q, es);
    }
    s->irr_ptr[++c] = (int32_t)e;
  }
}

coal_status coal_swift_build_host(coal_ctx ctx, int32_t nrows, int32_t ncols, const int32_t *colptr,
                                  const int32_t *rowidx, const void *val, coal_dtype dtype,
                                  int height, coal_swift **out) {
  if (!ctx) return COAL_ERR_ARG;
  COAL_CHECK(ctx, out, COAL_ERR_ARG, "NULL output");
  *out = NULL;
  double t0 = coal_now_seconds();
  COAL_CHECK(ctx, nrows >= 0 && ncols >= 0 && colptr, COAL_ERR_ARG,
             "bad CSC structure (%d rows, %d columns, colptr %p)", nrows, ncols,
             (const void *)colptr);
  COAL_CHECK(ctx, dtype == COAL_F64 || dtype == COAL_F32, COAL_ERR_ARG, "bad dtype %d", (int)dtype);
  COAL_CHECK(ctx, height >= 1 && height <= COAL_SWIFT_MAX_HEIGHT, COAL_ERR_ARG,
             "Swift height %d outside 1..%d", height, COAL_SWIFT_MAX_HEIGHT);
  COAL_CHECK(ctx, colptr[0] == 0, COAL_ERR_ARG, "colptr[0] = %d, expected 0", colptr[0]);
  for (int32_t j = 0; j < ncols; j++)
    COAL_CHECK(ctx, colptr[j + 1] >= colptr[j], COAL_ERR_ARG, "colptr decreases at column %d", j);
  int64_t nnz = colptr[ncols];
  COAL_CHECK(ctx, nnz == 0 || (rowidx && val), COAL_ERR_ARG, "NULL rowidx or val");
  for (int64_t e = 0; e < nnz; e++)
    COAL_CHECK(ctx, rowidx[e] >= 0 && rowidx[e] < nrows, COAL_ERR_ARG,
               "row %d of entry %lld outside 0..%d", rowidx[e], (long long)e, nrows - 1);

  coal_status st;
  coal_swift *s = NULL;
  int32_t *erow = NULL;
  size_t es = coal_dtype_size(dtype);
  COAL_CALL(coal_calloc(ctx, sizeof *s, (void **)&s));
  s->nrows = nrows, s->ncols = ncols, s->height_limit = height;
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * (size_t)ncols, (void **)&s->perm), fail);
  COAL_CALL_GOTO(st, coal_sort_by_count_desc(ctx, ncols, colptr, s->perm), fail);
  s->identity_perm = 1;
  for (int32_t p = 0; p < ncols && s->identity_perm; p++) s->identity_perm = s->perm[p] == p;

  /* sizes of both parts */
  int64_t nblocks = 0;
  for (int32_t g = 0; g < ncols / SW_WARP; g++) {
    int32_t R = sw_regular_rounds(colptr, s->perm, ncols, g * SW_WARP);
    nblocks += (R + height - 1) / height;
    s->nreg += (int64_t)SW_WARP * R;
  }
  for (int32_t p = 0; p < ncols; p++) {
    int32_t j = s->perm[p];
    int32_t res = colptr[j + 1] - colptr[j] - sw_regular_rounds(colptr, s->perm, ncols, p);
    if (res <= 0) continue;
    s->irr_ncols++;
    s->nirr += res;
    s->irr_nblk += (res + SW_WARP - 1) / SW_WARP;
  }
  if (s->nreg + s->nirr != nnz) {
    st = COAL_ERROR(ctx, COAL_ERR_STATE, "internal: Swift parts hold %lld + %lld entries, not %lld",
                    (long long)s->nreg, (long long)s->nirr, (long long)nnz);
    goto fail;
  }
  s->nblocks = (int32_t)nblocks;
  s->ncta = (int32_t)((nblocks + SW_CTA - 1) / SW_CTA);
  size_t nr = (size_t)s->nreg, ni = (size_t)s->nirr, nb = (size_t)s->irr_nblk;
  COAL_CALL_GOTO(
      st, coal_malloc(ctx, sizeof(int32_t) * ((size_t)nblocks + 1), (void **)&s->blk_ptr), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * (size_t)nblocks, (void **)&s->blk_col),
                 fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, es * nr, &s->reg_val), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(uint16_t) * nr, (void **)&s->reg_pos), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * nr, (void **)&s->slot_row), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(uint16_t) * nr, (void **)&s->slot_seg), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * nr, (void **)&erow), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * (size_t)s->irr_ncols, (void **)&s->irr_col),
                 fail);
  COAL_CALL_GOTO(
      st, coal_malloc(ctx, sizeof(int32_t) * ((size_t)s->irr_ncols + 1), (void **)&s->irr_ptr),
      fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * ni, (void **)&s->irr_row), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, es * ni, &s->irr_val), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * nb, (void **)&s->irr_blk_col), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * nb, (void **)&s->irr_blk_start), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * nb, (void **)&s->irr_blk_stop), fail);

  sw_fill_blocks(s, colptr, rowidx, val, es, erow);
  COAL_CALL_GOTO(st, sw_segments(ctx, s, erow), fail);
  coal_free(erow), erow = NULL;
  sw_fill_irregular(s, colptr, rowidx, val, es);
  s->build_seconds = coal_now_seconds() - t0;
  *out = s;
  return COAL_SUCCESS;
fail:
  coal_free(erow);
  coal_swift_free(s);
  return st;
}

static void swift_free_entry(coal_ctx ctx, void *s) {
  (void)ctx;
  coal_swift_free((coal_swift *)s);
}

coal_status coal_mat_swift(coal_mat A, const coal_swift **out) {
  coal_swift *s = (coal_swift *)coal_mat_format_get(A, COAL_FMT_SWIFT);
  if (!s) {
    coal_mat T = NULL;
    COAL_CALL(coal_mat_host(A)); /* built on the host, from a device-only matrix too */
    COAL_CALL(coal_mat_transpose(A, &T));
    coal_status st = coal_swift_build_host(A->ctx, A->nrows, A->ncols, T->rowptr, T->colind,
                                           T->values, A->dtype, coal_swift_height(A), &s);
    coal_mat_destroy(&T);
    if (st) return st;
    COAL_CALL(coal_mat_format_put(A, COAL_FMT_SWIFT, COAL_FORMAT_VALUES, s, swift_free_entry));
  }
  *out = s;
  return COAL_SUCCESS;
}
