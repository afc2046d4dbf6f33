/* Host twin of TileSpGEMM (kernels/spgemm.h): the three steps on the tile formats, and the host
 * backend's product operations. The CUDA kernels (kernels/cuda/spgemm_tile.cu) produce the same
 * arrays; the twin uses a merge for the set intersection where the GPU binary-searches the
 * shorter list (same pairs, same ascending order). */
#include "../spgemm.h"

#include <string.h>

static inline double ldv(const void *v, coal_dtype dt, int64_t i) {
  return dt == COAL_F64 ? ((const double *)v)[i] : (double)((const float *)v)[i];
}
static inline void stv(void *v, coal_dtype dt, int64_t i, double x) {
  if (dt == COAL_F64)
    ((double *)v)[i] = x;
  else
    ((float *)v)[i] = (float)x;
}

/* ---- step 1: tile layout of C = symbolic product of the layouts -------------------------- */
coal_status coal_spgemm_step1_host(coal_ctx ctx, const coal_tile *A, const coal_tile *B,
                                   coal_tile **C) {
  *C = NULL;
  const int32_t tm = A->tm, tn = B->tn;
  int32_t *mark = NULL;
  coal_tile *c = NULL;
  coal_status st;
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * ((size_t)tn + 1), (void **)&mark), done);
  for (int32_t J = 0; J < tn; J++) mark[J] = -1;
  int64_t total = 0;
  for (int32_t I = 0; I < tm; I++)
    for (int32_t q = A->tile_ptr[I]; q < A->tile_ptr[I + 1]; q++) {
      const int32_t K = A->tile_col[q];
      for (int32_t s = B->tile_ptr[K]; s < B->tile_ptr[K + 1]; s++)
        if (mark[B->tile_col[s]] != I) mark[B->tile_col[s]] = I, total++;
    }
  if (total > INT32_MAX) {
    st = COAL_ERROR(ctx, COAL_ERR_OVERFLOW, "the product has %lld tiles, beyond 2^31-1",
                    (long long)total);
    goto done;
  }
  COAL_CALL_GOTO(st, coal_tile_alloc_layout(ctx, A->nrows, B->ncols, (int32_t)total, A->dtype, &c),
                 done);
  for (int32_t J = 0; J < tn; J++) mark[J] = -1;
  int32_t w = 0;
  for (int32_t I = 0; I < tm; I++) {
    const int32_t w0 = w;
    for (int32_t q = A->tile_ptr[I]; q < A->tile_ptr[I + 1]; q++) {
      const int32_t K = A->tile_col[q];
      for (int32_t s = B->tile_ptr[K]; s < B->tile_ptr[K + 1]; s++)
        if (mark[B->tile_col[s]] != I) mark[B->tile_col[s]] = I, c->tile_col[w++] = B->tile_col[s];
    }
    if (w - w0 > 1) qsort(c->tile_col + w0, (size_t)(w - w0), sizeof(int32_t), coal_cmp_i32);
    c->tile_ptr[I + 1] = w;
  }
  st = COAL_SUCCESS;
done:
  coal_free(mark);
  if (st == COAL_SUCCESS)
    *C = c;
  else
    coal_tile_free(c);
  return st;
}

/* ---- set intersection -------------------------------------------------------------------- */
/* Pairs (tile of A, tile of B) with equal K between tile row I of A and tile column J of B,
 * ascending K; their count. pa/pb hold at least the tile count of row I of A. */
static int32_t intersect(const coal_tile *A, int32_t I, const coal_tile *B, int32_t J, int32_t *pa,
                         int32_t *pb) {
  int32_t p = A->tile_ptr[I], p1 = A->tile_ptr[I + 1], q = B->csc_ptr[J], q1 = B->csc_ptr[J + 1];
  int32_t n = 0;
  while (p < p1 && q < q1) {
    const int32_t ka = A->tile_col[p], kb = B->csc_row[q];
    if (ka < kb)
      p++;
    else if (kb < ka)
      q++;
    else
      pa[n] = p++, pb[n++] = B->csc_id[q++];
  }
  return n;
}

/* Scratch for the pairs of one tile of C: the longest tile row of A bounds their number. */
static coal_status pair_scratch(coal_ctx ctx, const coal_tile *A, int32_t **pa, int32_t **pb) {
  int32_t mx = 1;
  for (int32_t I = 0; I < A->tm; I++)
    if (A->tile_ptr[I + 1] - A->tile_ptr[I] > mx) mx = A->tile_ptr[I + 1] - A->tile_ptr[I];
  *pa = NULL, *pb = NULL;
  COAL_CALL(coal_malloc(ctx, sizeof(int32_t) * (size_t)mx, (void **)pa));
  coal_status st = coal_malloc(ctx, sizeof(int32_t) * (size_t)mx, (void **)pb);
  if (st) coal_free(*pa), *pa = NULL;
  return st;
}

/* First nonzero of local row r of tile q, and its row mask. */
static inline int64_t row_start(const coal_tile *T, int32_t q, int r) {
  return (int64_t)T->tile_nnz[q] + T->row_ptr[(size_t)q * COAL_TILE_DIM + (size_t)r];
}
static inline unsigned row_mask(const coal_tile *T, int32_t q, int r) {
  return T->mask[(size_t)q * COAL_TILE_DIM + (size_t)r];
}

/* ---- step 2: masks, row offsets and nonzero counts of C's tiles --------------------------- */
coal_status coal_spgemm_step2_host(coal_ctx ctx, const coal_tile *A, const coal_tile *B,
                                   coal_tile *C) {
  COAL_CHECK(ctx, B->csc_ptr, COAL_ERR_STATE, "B has no tile CSC index");
  int32_t *pa = NULL, *pb = NULL;
  COAL_CALL(pair_scratch(ctx, A, &pa, &pb));
  int64_t nz = 0;
  for (int32_t I = 0; I < C->tm; I++)
    for (int32_t t = C->tile_ptr[I]; t < C->tile_ptr[I + 1]; t++) {
      const int32_t np = intersect(A, I, B, C->tile_col[t], pa, pb);
      unsigned m[COAL_TILE_DIM] = {0};
      for (int32_t u = 0; u < np; u++)
        for (int r = 0; r < COAL_TILE_DIM; r++) {
          const int64_t e0 = row_start(A, pa[u], r);
          const int64_t e1 = e0 + __builtin_popcount(row_mask(A, pa[u], r));
          for (int64_t e = e0; e < e1; e++) m[r] |= row_mask(B, pb[u], A->idx[e] & 15);
        }
      C->tile_nnz[t] = (int32_t)(nz < INT32_MAX ? nz : INT32_MAX);
      int off = 0;
      for (int r = 0; r < COAL_TILE_DIM; r++) {
        C->mask[(size_t)t * COAL_TILE_DIM + (size_t)r] = (uint16_t)m[r];
        C->row_ptr[(size_t)t * COAL_TILE_DIM + (size_t)r] = (uint8_t)off;
        off += __builtin_popcount(m[r]);
      }
      nz += off;
    }
  coal_free(pa), coal_free(pb);
  COAL_CHECK(ctx, nz <= INT32_MAX, COAL_ERR_OVERFLOW,
             "the product has %lld nonzeros, beyond 2^31-1 (32-bit row offsets)", (long long)nz);
  C->tile_nnz[C->ntiles] = (int32_t)nz;
  C->nnz = nz;
  return COAL_SUCCESS;
}

/* ---- step 3: numeric ------------------------------------------------------------------------ */
/* Dense accumulator: acc[16r + c] for every cell; B_KJ expanded to bd (its packed index is the
 * cell number r*16 + c); only cells in B's mask are read, so bd needs no clearing. */
static void tile_dense(const coal_tile *A, const coal_tile *B, const int32_t *pa, const int32_t *pb,
                       int32_t np, const uint16_t *mc, double *acc) {
  double bd[COAL_TILE_DIM * COAL_TILE_DIM];
  for (int i = 0; i < COAL_TILE_DIM * COAL_TILE_DIM; i++) acc[i] = 0.0;
  for (int32_t u = 0; u < np; u++) {
    for (int64_t e = B->tile_nnz[pb[u]]; e < B->tile_nnz[pb[u] + 1]; e++)
      bd[B->idx[e]] = ldv(B->val, B->dtype, e);
    for (int r = 0; r < COAL_TILE_DIM; r++) {
      if (!mc[r]) continue;
      const int64_t e0 = row_start(A, pa[u], r);
      const int64_t e1 = e0 + __builtin_popcount(row_mask(A, pa[u], r));
      for (int64_t e = e0; e < e1; e++) {
        const int k = A->idx[e] & 15;
        const double a = ldv(A->val, A->dtype, e);
        for (unsigned mb = row_mask(B, pb[u], k); mb; mb &= mb - 1) {
          const int c = __builtin_ctz(mb);
          acc[r * COAL_TILE_DIM + c] += a * bd[k * COAL_TILE_DIM + c];
        }
      }
    }
  }
}

/* Sparse accumulator: one sum per nonzero (r, c) of C's tile; b_kc at its rank in B's row k. */
static double entry_sparse(const coal_tile *A, const coal_tile *B, const int32_t *pa,
                           const int32_t *pb, int32_t np, int r, int c) {
  double acc = 0.0;
  for (int32_t u = 0; u < np; u++) {
    const int64_t e0 = row_start(A, pa[u], r);
    const int64_t e1 = e0 + __builtin_popcount(row_mask(A, pa[u], r));
    for (int64_t e = e0; e < e1; e++) {
      const int k = A->idx[e] & 15;
      const unsigned mb = row_mask(B, pb[u], k);
      if (!((mb >> c) & 1u)) continue;
      const int64_t f = row_start(B, pb[u], k) + __builtin_popcount(mb & ((1u << c) - 1u));
      acc += ldv(A->val, A->dtype, e) * ldv(B->val, B->dtype, f);
    }
  }
  return acc;
}

coal_status coal_spgemm_step3_host(coal_ctx ctx, const coal_tile *A, const coal_tile *B,
                                   const coal_tile *C, const int32_t *pos, void *cval,
                                   int dense_threshold) {
  COAL_CHECK(ctx, A->val && B->val && B->csc_ptr, COAL_ERR_STATE,
             "tile operands without values or CSC index");
  int32_t *pa = NULL, *pb = NULL;
  COAL_CALL(pair_scratch(ctx, A, &pa, &pb));
  double acc[COAL_TILE_DIM * COAL_TILE_DIM];
  for (int32_t I = 0; I < C->tm; I++)
    for (int32_t t = C->tile_ptr[I]; t < C->tile_ptr[I + 1]; t++) {
      const int32_t nnz = C->tile_nnz[t + 1] - C->tile_nnz[t];
      if (!nnz) continue;
      const int32_t np = intersect(A, I, B, C->tile_col[t], pa, pb);
      const uint16_t *mc = C->mask + (size_t)t * COAL_TILE_DIM;
      const int dense = nnz > dense_threshold;
      if (dense) tile_dense(A, B, pa, pb, np, mc, acc);
      for (int r = 0; r < COAL_TILE_DIM; r++) {
        int64_t o = pos[(size_t)t * COAL_TILE_DIM + (size_t)r];
        for (unsigned m = mc[r]; m; m &= m - 1, o++) {
          const int c = __builtin_ctz(m);
          stv(cval, C->dtype, o,
              dense ? acc[r * COAL_TILE_DIM + c] : entry_sparse(A, B, pa, pb, np, r, c));
        }
      }
    }
  coal_free(pa), coal_free(pb);
  return COAL_SUCCESS;
}

coal_status coal_spgemm_tile_stats_host(coal_ctx ctx, const coal_tile *A, const coal_tile *B,
                                        const coal_tile *C, int dense_threshold,
                                        coal_spgemm_stats *st) {
  int32_t *pa = NULL, *pb = NULL;
  COAL_CALL(pair_scratch(ctx, A, &pa, &pb));
  int64_t np = 0, nd = 0, ne = 0;
  for (int32_t I = 0; I < C->tm; I++)
    for (int32_t t = C->tile_ptr[I]; t < C->tile_ptr[I + 1]; t++) {
      const int32_t nz = C->tile_nnz[t + 1] - C->tile_nnz[t];
      np += intersect(A, I, B, C->tile_col[t], pa, pb);
      nd += nz > dense_threshold;
      ne += nz == 0;
    }
  coal_free(pa), coal_free(pb);
  st->tile_pairs = np, st->dense_tiles_c = nd, st->empty_tiles_c = ne;
  return COAL_SUCCESS;
}

/* ---- the host instance's spgemm entries --------------------------------------------------------
 */
static void host_release(coal_spgemm p) {
  if (p->tb != p->ta) coal_tile_free(p->tb);
  coal_tile_free(p->ta);
  coal_tile_free(p->tc);
  coal_free(p->c_pos);
  p->ta = p->tb = p->tc = NULL, p->c_pos = NULL;
}

static coal_status host_symbolic(coal_spgemm p) {
  coal_ctx ctx = p->ctx;
  coal_mat A = p->A, B = p->B;
  COAL_CALL(coal_tile_build_host(A, &p->ta));
  if (B == A)
    p->tb = p->ta;
  else
    COAL_CALL(coal_tile_build_host(B, &p->tb));
  COAL_CALL(coal_tile_build_csc(ctx, p->tb));
  COAL_CALL(coal_spgemm_step1_host(ctx, p->ta, p->tb, &p->tc));
  COAL_CALL(coal_spgemm_step2_host(ctx, p->ta, p->tb, p->tc));
  const size_t nt = (size_t)p->tc->ntiles;
  COAL_CALL(coal_malloc(ctx, sizeof(int32_t) * COAL_TILE_DIM * nt, (void **)&p->c_pos));
  int32_t *rp = NULL, *ci = NULL;
  void *v = NULL;
  COAL_CALL(coal_tile_csr_structure(ctx, p->tc, &rp, &ci, p->c_pos));
  coal_status st = coal_calloc(ctx, coal_dtype_size(A->dtype) * (size_t)p->tc->nnz, &v);
  if (st) {
    coal_free(rp), coal_free(ci);
    return st;
  }
  COAL_CALL(coal_mat_wrap_csr(ctx, A->nrows, B->ncols, rp, ci, v, A->dtype, &p->C));
  p->a_state = A->state, p->b_state = B->state;
  p->stats.ntiles_a = p->ta->ntiles, p->stats.ntiles_b = p->tb->ntiles;
  p->stats.ntiles_c = p->tc->ntiles;
  p->stats.temp_bytes = coal_tile_bytes(p->ta) + (p->tb != p->ta ? coal_tile_bytes(p->tb) : 0) +
                        coal_tile_bytes(p->tc) + sizeof(int32_t) * COAL_TILE_DIM * nt;
  return COAL_SUCCESS;
}

static coal_status host_numeric(coal_spgemm p, int download) {
  (void)download; /* host values are the only copy */
  if (p->A->state != p->a_state) {
    coal_tile_refresh_values(p->ta, p->A->values);
    p->a_state = p->A->state;
  }
  if (p->tb != p->ta && p->B->state != p->b_state) {
    coal_tile_refresh_values(p->tb, p->B->values);
    p->b_state = p->B->state;
  }
  COAL_CALL(coal_spgemm_step3_host(p->ctx, p->ta, p->tb, p->tc, p->c_pos, p->C->values,
                                   p->dense_threshold));
  coal_mat_invalidate(p->C); /* derived formats of C held the old values */
  return COAL_SUCCESS;
}

static coal_status host_tile_stats(coal_spgemm p) {
  return coal_spgemm_tile_stats_host(p->ctx, p->ta, p->tb, p->tc, p->dense_threshold, &p->stats);
}

/* The host instance's spgemm entries serve both algorithms: TILE here, ROWS in
 * spgemm_rows.c. */
coal_status coal_spgemm_symbolic_host(coal_spgemm p) {
  return p->algo == COAL_SPGEMM_ROWS ? coal_spgemm_rows_symbolic_host(p) : host_symbolic(p);
}
coal_status coal_spgemm_numeric_host(coal_spgemm p, int download) {
  return p->algo == COAL_SPGEMM_ROWS ? coal_spgemm_rows_numeric_host(p) : host_numeric(p, download);
}
coal_status coal_spgemm_stats_host(coal_spgemm p) {
  return p->algo == COAL_SPGEMM_ROWS ? COAL_SUCCESS : host_tile_stats(p);
}
void coal_spgemm_release_host(coal_spgemm p) {
  if (p->algo == COAL_SPGEMM_ROWS)
    coal_spgemm_rows_release_host(p);
  else
    host_release(p);
}
