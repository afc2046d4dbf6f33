/* FastLoad format builder ([FASTLOAD], section IV-B), in O(nnz + n).
 *
 * 1. Lanes are sorted by entry count, descending and stable, with one counting sort.
 * 2. Each group of 32 sorted lanes is cut into rectangular blocks: the active lanes of round
 *    r0 are a prefix of the group (counts are non-increasing), the block height is the
 *    remaining count of the last active lane, capped at H.
 * 3. Blocks are laid out one after the other, element (round r, lane l) at
 *    blk_ptr + r*len + l, so the format holds exactly nnz elements.
 * The cutting runs twice: once to count blocks (and size the arrays), once to fill them. */
#include "../fastload.h"

#include <string.h>

#define FL_WARP 32

void coal_fastload_free(coal_fastload *f) {
  if (!f) return;
  coal_free(f->perm);
  coal_free(f->blk_ptr);
  coal_free(f->blk_col);
  coal_free(f->blk_len);
  coal_free(f->blk_height);
  coal_free(f->blk_class);
  coal_free(f->idx);
  coal_free(f->val);
  coal_free(f->seg);
  coal_free(f->split);
  coal_free(f);
}

/* Everything the cutting pass needs; the fill arrays are NULL during the counting pass. */
typedef struct {
  int32_t nlanes, height;
  const int32_t *ptr, *idx;
  const void *val;
  size_t es;
  int with_seg;
  const int32_t *perm;
  coal_fastload *f;  /* NULL while counting */
  uint8_t *in_split; /* [nlanes] original lane id -> 1 if in a non-complete block (fill) */
  int64_t nblocks, nelems, natomics;
} fl_cut;

/* Fills block b: elements, seg, class; returns the atomics it costs. */
static int64_t fl_fill_block(fl_cut *c, int64_t b, int32_t s0, int32_t len, int32_t r0, int32_t h,
                             int64_t e0, const int32_t *base) {
  coal_fastload *f = c->f;
  f->blk_ptr[b] = (int32_t)e0;
  f->blk_col[b] = s0;
  f->blk_len[b] = (uint8_t)len;
  f->blk_height[b] = (uint8_t)h;
  int32_t *didx = f->idx + e0;
  for (int32_t r = 0; r < h; r++)
    for (int32_t l = 0; l < len; l++) didx[(int64_t)r * len + l] = c->idx[base[l] + r0 + r];
  if (c->es == 8) {
    double *dv = (double *)f->val + e0;
    const double *sv = (const double *)c->val;
    for (int32_t r = 0; r < h; r++)
      for (int32_t l = 0; l < len; l++) dv[(int64_t)r * len + l] = sv[base[l] + r0 + r];
  } else {
    float *dv = (float *)f->val + e0;
    const float *sv = (const float *)c->val;
    for (int32_t r = 0; r < h; r++)
      for (int32_t l = 0; l < len; l++) dv[(int64_t)r * len + l] = sv[base[l] + r0 + r];
  }
  int cls = len < FL_WARP ? COAL_FL_PARTIAL : 0;
  int64_t atomics = 0;
  if (c->with_seg) {
    uint8_t *dseg = f->seg + e0;
    int runs = 0; /* some run longer than one lane */
    for (int32_t r = 0; r < h; r++) {
      const int32_t *ri = didx + (int64_t)r * len;
      uint8_t *rs = dseg + (int64_t)r * len;
      rs[len - 1] = 1;
      for (int32_t l = len - 2; l >= 0; l--) {
        rs[l] = ri[l] == ri[l + 1] ? (uint8_t)(rs[l + 1] + 1) : 1;
        if (rs[l] > 1) runs = 1;
      }
      for (int32_t l = 0; l < len; l += rs[l]) atomics++;
    }
    if (h == 1 && len > 1 && dseg[0] == len)
      cls |= COAL_FL_ONE_ROW;
    else if (runs)
      cls |= COAL_FL_SEGMENTED;
    else
      cls |= COAL_FL_DISTINCT;
  } else {
    /* gather: lanes are distinct rows, so the base class is always DISTINCT */
    int complete = r0 == 0;
    for (int32_t l = 0; l < len && complete; l++)
      complete = c->ptr[c->perm[s0 + l] + 1] - base[l] == h;
    if (complete)
      cls |= COAL_FL_COMPLETE;
    else {
      atomics = len;
      for (int32_t l = 0; l < len; l++) c->in_split[c->perm[s0 + l]] = 1;
    }
  }
  f->blk_class[b] = (uint8_t)cls;
  return atomics;
}

/* Cuts every group into blocks; fills them when c->f is set. */
static void fl_cut_all(fl_cut *c) {
  int32_t base[FL_WARP], cnt[FL_WARP];
  c->nblocks = 0, c->nelems = 0, c->natomics = 0;
  for (int64_t s0 = 0; s0 < c->nlanes; s0 += FL_WARP) {
    int32_t len = (int32_t)(c->nlanes - s0 < FL_WARP ? c->nlanes - s0 : FL_WARP);
    for (int32_t l = 0; l < len; l++) {
      int32_t lane = c->perm[s0 + l];
      base[l] = c->ptr[lane];
      cnt[l] = c->ptr[lane + 1] - base[l];
    }
    int32_t r0 = 0;
    for (;;) {
      while (len > 0 && cnt[len - 1] <= r0) len--;
      if (len == 0) break;
      int32_t h = cnt[len - 1] - r0;
      if (h > c->height) h = c->height;
      if (c->f)
        c->natomics += fl_fill_block(c, c->nblocks, (int32_t)s0, len, r0, h, c->nelems, base);
      c->nblocks++;
      c->nelems += (int64_t)len * h;
      r0 += h;
    }
  }
}

coal_status coal_fastload_build_host(coal_ctx ctx, int32_t nlanes, int32_t nother,
                                     const int32_t *ptr, const int32_t *idx, const void *val,
                                     coal_dtype dtype, int height, int with_seg,
                                     coal_fastload **out) {
  if (!ctx) return COAL_ERR_ARG;
  COAL_CHECK(ctx, out, COAL_ERR_ARG, "NULL output");
  *out = NULL;
  double t0 = coal_now_seconds();
  COAL_CHECK(ctx, nlanes >= 0 && nother >= 0 && ptr, COAL_ERR_ARG,
             "bad lane structure (%d lanes, %d others, ptr %p)", nlanes, nother, (const void *)ptr);
  COAL_CHECK(ctx, dtype == COAL_F64 || dtype == COAL_F32, COAL_ERR_ARG, "bad dtype %d", (int)dtype);
  COAL_CHECK(ctx, height >= 1 && height <= 255, COAL_ERR_ARG, "FastLoad height %d outside 1..255",
             height);
  COAL_CHECK(ctx, ptr[0] == 0, COAL_ERR_ARG, "ptr[0] = %d, expected 0", ptr[0]);
  for (int32_t l = 0; l < nlanes; l++)
    COAL_CHECK(ctx, ptr[l + 1] >= ptr[l], COAL_ERR_ARG, "ptr decreases at lane %d", l);
  int64_t nnz = ptr[nlanes];
  COAL_CHECK(ctx, nnz == 0 || (idx && val), COAL_ERR_ARG, "NULL idx or val");
  for (int64_t e = 0; e < nnz; e++)
    COAL_CHECK(ctx, idx[e] >= 0 && idx[e] < nother, COAL_ERR_ARG,
               "index %d of entry %lld outside 0..%d", idx[e], (long long)e, nother - 1);

  coal_status st;
  coal_fastload *f = NULL;
  uint8_t *in_split = NULL;
  COAL_CALL(coal_calloc(ctx, sizeof *f, (void **)&f));
  f->nlanes = nlanes;
  f->nother = nother;
  f->height_limit = height;
  f->nnz = nnz;
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * (size_t)nlanes, (void **)&f->perm), fail);
  COAL_CALL_GOTO(st, coal_sort_by_count_desc(ctx, nlanes, ptr, f->perm), fail);
  f->identity_perm = 1;
  for (int32_t s = 0; s < nlanes && f->identity_perm; s++) f->identity_perm = f->perm[s] == s;

  fl_cut c = {.nlanes = nlanes,
              .height = height,
              .ptr = ptr,
              .idx = idx,
              .val = val,
              .es = coal_dtype_size(dtype),
              .with_seg = with_seg,
              .perm = f->perm};
  fl_cut_all(&c); /* counting pass */
  if (c.nelems != nnz) {
    st = COAL_ERROR(ctx, COAL_ERR_STATE, "internal: blocks hold %lld elements, expected %lld",
                    (long long)c.nelems, (long long)nnz);
    goto fail;
  }
  size_t nb = (size_t)c.nblocks;
  f->nblocks = (int32_t)c.nblocks;
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * nb, (void **)&f->blk_ptr), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * nb, (void **)&f->blk_col), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, nb, (void **)&f->blk_len), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, nb, (void **)&f->blk_height), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, nb, (void **)&f->blk_class), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * (size_t)nnz, (void **)&f->idx), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, c.es * (size_t)nnz, &f->val), fail);
  if (with_seg)
    COAL_CALL_GOTO(st, coal_malloc(ctx, (size_t)nnz, (void **)&f->seg), fail);
  else
    COAL_CALL_GOTO(st, coal_calloc(ctx, (size_t)nlanes, (void **)&in_split), fail);
  c.f = f;
  c.in_split = in_split;
  fl_cut_all(&c); /* filling pass */
  f->natomics = c.natomics;

  if (!with_seg) {
    /* rows not stored whole by a COMPLETE block: cut rows and empty rows */
    int32_t ns = 0;
    for (int32_t l = 0; l < nlanes; l++) {
      if (ptr[l + 1] == ptr[l]) in_split[l] = 1;
      ns += in_split[l];
    }
    COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * (size_t)ns, (void **)&f->split), fail);
    f->nsplit = 0;
    for (int32_t l = 0; l < nlanes; l++)
      if (in_split[l]) f->split[f->nsplit++] = l;
    coal_free(in_split);
  }
  f->build_seconds = coal_now_seconds() - t0;
  *out = f;
  return COAL_SUCCESS;
fail:
  coal_free(in_split);
  coal_fastload_free(f);
  return st;
}

/* Gather schedule, the definition (coal_fastload_build_cuda builds the same arrays on the GPU;
 * test fastload_build_cuda compares them). Blocks of one 32-lane group share blk_col. A warp task
 * is a run of consecutive blocks of one group with at most COAL_FLT_TASK_ROUNDS rounds in total (or
 * a single higher block). When one task covers a whole group (and the group's blocks are
 * contiguous), every lane's row is complete in that warp: plain store y = alpha*sum + beta*y.
 * Otherwise the task's lanes add with atomics, and their rows are pre-scaled (beta*y) first.
 * Lanes with no entries are covered by no block: they are pre-scaled too. */
coal_status coal_fastload_schedule_host(coal_ctx ctx, const coal_fastload *f, int32_t **task_out,
                                        int32_t *ntasks_out, int32_t **pre_out, int32_t *npre_out) {
  int32_t nb = f->nblocks, nl = f->nlanes;
  int32_t *task = NULL, *pre = NULL, *runs = NULL;
  uint8_t *mark = NULL; /* per lane: 0 no entries, 1 stored whole, 3 atomic */
  coal_status st;
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * ((size_t)nb + 1), (void **)&task), fail);
  COAL_CALL_GOTO(st, coal_calloc(ctx, sizeof(int32_t) * ((size_t)nl + 1), (void **)&runs), fail);
  COAL_CALL_GOTO(st, coal_calloc(ctx, (size_t)nl + 1, (void **)&mark), fail);
  /* runs[col]: number of separate runs of blocks that start at lane col */
  for (int32_t b = 0; b < nb; b++)
    if (b == 0 || f->blk_col[b] != f->blk_col[b - 1]) runs[f->blk_col[b]]++;
  {
    int32_t nt = 0;
    for (int32_t b0 = 0; b0 < nb;) {
      int32_t col = f->blk_col[b0], b1 = b0;
      while (b1 < nb && f->blk_col[b1] == col) b1++; /* group run [b0, b1) */
      int32_t rounds = 0;
      for (int32_t b = b0; b < b1; b++) rounds += f->blk_height[b];
      int whole = runs[col] == 1 && rounds <= COAL_FLT_TASK_ROUNDS;
      for (int32_t t0 = b0; t0 < b1;) {
        int32_t t1 = t0 + 1, r = f->blk_height[t0];
        while (t1 < b1 && r + f->blk_height[t1] <= COAL_FLT_TASK_ROUNDS) r += f->blk_height[t1++];
        int store = whole || (t1 == t0 + 1 && (f->blk_class[t0] & COAL_FL_COMPLETE));
        task[nt++] = (int32_t)((uint32_t)t0 | (store ? 0u : COAL_FLT_TASK_ATOMIC));
        for (int32_t b = t0; b < t1; b++)
          for (int32_t l = 0; l < f->blk_len[b]; l++) mark[col + l] |= store ? 1 : 3;
        t0 = t1;
      }
      b0 = b1;
    }
    task[nt] = nb;
    *ntasks_out = nt;
  }
  {
    int32_t np = 0;
    for (int32_t s = 0; s < nl; s++) np += mark[s] != 1;
    COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * ((size_t)np + 1), (void **)&pre), fail);
    np = 0;
    for (int32_t s = 0; s < nl; s++)
      if (mark[s] != 1) pre[np++] = f->identity_perm ? s : f->perm[s];
    *npre_out = np;
  }
  coal_free(runs), coal_free(mark);
  *task_out = task, *pre_out = pre;
  return COAL_SUCCESS;
fail:
  coal_free(task), coal_free(pre), coal_free(runs), coal_free(mark);
  return st;
}

static void fastload_free_entry(coal_ctx ctx, void *f) {
  (void)ctx;
  coal_fastload_free((coal_fastload *)f);
}

coal_status coal_mat_fastload(coal_mat A, int transposed, const coal_fastload **out) {
  const int key = transposed ? COAL_FMT_FASTLOAD_T : COAL_FMT_FASTLOAD;
  coal_fastload *f = (coal_fastload *)coal_mat_format_get(A, key);
  if (!f) {
    COAL_CALL(coal_mat_host(A));
    if (transposed) {
      COAL_CALL(coal_fastload_build_host(A->ctx, A->nrows, A->ncols, A->rowptr, A->colind,
                                         A->values, A->dtype, coal_fastload_height(A), 0, &f));
    } else {
      coal_mat T = NULL;
      COAL_CALL(coal_mat_transpose(A, &T));
      coal_status st =
          coal_fastload_build_host(A->ctx, A->ncols, A->nrows, T->rowptr, T->colind, T->values,
                                   A->dtype, coal_fastload_height(A), 1, &f);
      coal_mat_destroy(&T);
      if (st) return st;
    }
    COAL_CALL(coal_mat_format_put(A, key, COAL_FORMAT_VALUES, f, fastload_free_entry));
  }
  *out = f;
  return COAL_SUCCESS;
}
