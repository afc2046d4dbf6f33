/* TileSpGEMM product driver on the GPU (the CUDA instance's spgemm entries, kernels/spgemm.h).
 *
 * Symbolic (once per product): the tile formats of A and B are built by the host builder
 * (kernels/host/tile_build.c) and uploaded once; step 1 (count, scan, fill), step 2 (masks and
 * counts, scan) and C's CSR structure (row lengths, scan, columns and the tile -> CSR map) run on
 * the stream; the host waits twice for a size (number of tiles of C, nonzeros of C: both allocate)
 * and once for C's structure, which it needs (the host CSR of a matrix is always valid).
 *
 * Numeric (every call): new operand values are gathered into tile order on the host (through
 * csr_pos) and uploaded into the kept tile arrays, or, for the B of a PtAP outer product,
 * gathered on the device from the inner product's values; then step 3 writes C's values (CSR
 * order) into a kept buffer, which is downloaded into C. Nothing is allocated. The first
 * numeric also hands C a device copy (its structure was built here; values copied), so that
 * C is ready for GPU products without an upload.
 *
 * Device memory held by a product (stats.temp_bytes, the peak): A's and B's tiles (per
 * nonzero 1 B index + value, B also 4 B csr_pos when needed; per tile 56 B), C's tile
 * structure (per tile of C: 4+4+4 B layout, 16 B row offsets, 32 B masks, 64 B CSR map),
 * C's values, plus during the symbolic step the scan workspace and C's structure. */
#include "spgemm_tile.cuh"

#include <string.h>

namespace {
using namespace coal_spgemm_dev;

/* Step 1: C's tile layout (d->ntiles, c_tile_ptr, c_tile_col, c_tile_row). */
coal_status step1(coal_ctx ctx, Dev *d) {
  int32_t *cnt = NULL;
  const size_t tm1 = (size_t)d->tm + 1;
  int64_t ntiles = 0;
  coal_status st;
  COAL_CALL(dalloc_n(ctx, d, tm1, &d->c_tile_ptr));
  COAL_CALL(dalloc_n(ctx, d, tm1, &cnt));
  COAL_CALL_GOTO(st, zero(ctx, cnt, sizeof(int32_t) * tm1), done);
  COAL_CALL_GOTO(st, coal_spgemm_step1_count_cuda(ctx, &d->a, &d->b, cnt, d->d_total), done);
  COAL_CALL_GOTO(st, scan(ctx, d, cnt, d->c_tile_ptr, (int64_t)tm1), done);
  COAL_CALL_GOTO(st, read_total(ctx, d, &ntiles), done);
done:
  dfree(d, &cnt, tm1);
  COAL_CALL(st);
  COAL_CHECK(ctx, ntiles < INT32_MAX, COAL_ERR_OVERFLOW,
             "the product has %lld tiles, beyond 2^31-2", (long long)ntiles);
  d->ntiles = (int32_t)ntiles;
  COAL_CALL(dalloc_n(ctx, d, (size_t)ntiles, &d->c_tile_col));
  COAL_CALL(dalloc_n(ctx, d, (size_t)ntiles, &d->c_tile_row));
  return coal_spgemm_step1_fill_cuda(ctx, &d->a, &d->b, d->c_tile_ptr, d->c_tile_col,
                                     d->c_tile_row);
}

/* Step 2: masks, row offsets and tile_nnz of C's tiles; d->nnz. */
coal_status step2(coal_ctx ctx, Dev *d) {
  const size_t nt = (size_t)d->ntiles;
  int32_t *cnt = NULL;
  int64_t nnz = 0;
  coal_status st;
  COAL_CALL(dalloc_n(ctx, d, COAL_TILE_DIM * nt, &d->c_mask));
  COAL_CALL(dalloc_n(ctx, d, COAL_TILE_DIM * nt, &d->c_row_ptr));
  COAL_CALL(dalloc_n(ctx, d, nt + 1, &d->c_tile_nnz));
  COAL_CALL(dalloc_n(ctx, d, nt + 1, &cnt));
  COAL_CALL_GOTO(st, zero(ctx, cnt, sizeof(int32_t) * (nt + 1)), done);
  COAL_CALL_GOTO(st,
                 coal_spgemm_step2_cuda(ctx, &d->a, &d->b, d->ntiles, d->c_tile_row, d->c_tile_col,
                                        d->c_mask, d->c_row_ptr, cnt, d->d_total),
                 done);
  COAL_CALL_GOTO(st, scan(ctx, d, cnt, d->c_tile_nnz, (int64_t)nt + 1), done);
  COAL_CALL_GOTO(st, read_total(ctx, d, &nnz), done);
done:
  dfree(d, &cnt, nt + 1);
  COAL_CALL(st);
  COAL_CHECK(ctx, nnz <= INT32_MAX, COAL_ERR_OVERFLOW,
             "the product has %lld nonzeros, beyond 2^31-1 (32-bit row offsets)", (long long)nnz);
  d->nnz = nnz;
  return COAL_SUCCESS;
}

/* C's CSR structure on the device (c_rowptr, c_colind, c_pos), downloaded into new host
 * arrays *rp and *ci. */
coal_status csr_structure(coal_ctx ctx, Dev *d, int32_t nrows, int32_t **rp, int32_t **ci) {
  const size_t n1 = (size_t)nrows + 1, nz = (size_t)d->nnz;
  int32_t *len = NULL;
  coal_status st;
  *rp = NULL, *ci = NULL;
  /* C's own arrays (handed to C later) are not counted in held/peak */
  COAL_CALL(coal_cuda_malloc(ctx, sizeof(int32_t) * n1, (void **)&d->c_rowptr));
  COAL_CALL(dalloc_n(ctx, d, n1, &len));
  COAL_CALL_GOTO(st, zero(ctx, len, sizeof(int32_t) * n1), done);
  COAL_CALL_GOTO(st, coal_spgemm_row_len_cuda(ctx, nrows, d->c_tile_ptr, d->c_mask, len), done);
  COAL_CALL_GOTO(st, scan(ctx, d, len, d->c_rowptr, (int64_t)n1), done);
  COAL_CALL_GOTO(st, sync(ctx), done);
done:
  dfree(d, &len, n1);
  COAL_CALL(st);
  COAL_CALL(coal_cuda_malloc(ctx, sizeof(int32_t) * nz, (void **)&d->c_colind));
  COAL_CALL(dalloc_n(ctx, d, COAL_TILE_DIM * (size_t)d->ntiles, &d->c_pos));
  COAL_CALL(coal_spgemm_row_fill_cuda(ctx, nrows, d->c_tile_ptr, d->c_tile_col, d->c_mask,
                                      d->c_rowptr, d->c_colind, d->c_pos));
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * n1, (void **)rp), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * nz, (void **)ci), fail);
  COAL_CALL_GOTO(st, d2h(ctx, *rp, d->c_rowptr, sizeof(int32_t) * n1), fail);
  COAL_CALL_GOTO(st, d2h(ctx, *ci, d->c_colind, sizeof(int32_t) * nz), fail);
  COAL_CALL_GOTO(st, sync(ctx), fail);
  return COAL_SUCCESS;
fail:
  coal_free(*rp), coal_free(*ci);
  *rp = NULL, *ci = NULL;
  return st;
}

void cu_release(coal_spgemm p) {
  Dev *d = (Dev *)p->dev;
  if (!d) return;
  if (!d->b_is_a) coal_tile_dev_free(&d->b);
  coal_tile_dev_free(&d->a);
  coal_cuda_free(d->c_tile_ptr), coal_cuda_free(d->c_tile_col), coal_cuda_free(d->c_tile_row);
  coal_cuda_free(d->c_tile_nnz), coal_cuda_free(d->c_row_ptr), coal_cuda_free(d->c_mask);
  coal_cuda_free(d->c_pos), coal_cuda_free(d->c_val), coal_cuda_free(d->c_rowptr);
  coal_cuda_free(d->c_colind), coal_cuda_free(d->d_total), coal_cuda_free(d->cub_tmp);
  coal_cuda_free(d->a_stage), coal_cuda_free(d->b_stage);
  coal_free(d);
  p->dev = NULL;
}

coal_status cu_symbolic(coal_spgemm p) {
  coal_ctx ctx = p->ctx;
  coal_mat A = p->A, B = p->B;
  Dev *d = NULL;
  COAL_CALL(coal_calloc(ctx, sizeof *d, (void **)&d));
  p->dev = d;
  COAL_CALL(dalloc_n(ctx, d, 1, &d->d_total));
  COAL_CALL(zero(ctx, d->d_total, sizeof(unsigned long long)));
  /* tile formats, built on the GPU from the device CSR (B's with its CSC index; B == A shares
   * one copy) */
  COAL_CALL(coal_tile_build_cuda(A, d, B == A, &d->a));
  if (B == A)
    d->b = d->a, d->b_is_a = 1;
  else
    COAL_CALL(coal_tile_build_cuda(B, d, 1, &d->b));
  d->a_state = A->state, d->b_state = B->state;
  d->tm = d->a.tm, d->tn = d->b.tn;
  COAL_CALL(step1(ctx, d));
  COAL_CALL(step2(ctx, d));
  int32_t *rp = NULL, *ci = NULL;
  COAL_CALL(csr_structure(ctx, d, A->nrows, &rp, &ci));
  const size_t es = coal_dtype_size(A->dtype);
  void *v = NULL;
  coal_status st = coal_calloc(ctx, es * (size_t)d->nnz, &v);
  if (st != COAL_SUCCESS) {
    coal_free(rp), coal_free(ci);
    return st;
  }
  COAL_CALL(coal_mat_wrap_csr(ctx, A->nrows, B->ncols, rp, ci, v, A->dtype, &p->C));
  char *cv = NULL;
  COAL_CALL(dalloc_n(ctx, d, es * (size_t)d->nnz, &cv));
  d->c_val = cv;
  p->stats.ntiles_a = d->a.ntiles, p->stats.ntiles_b = d->b.ntiles;
  p->stats.ntiles_c = d->ntiles;
  p->stats.temp_bytes = d->peak;
  return COAL_SUCCESS;
}

/* New host values of an operand M (tile matrix t): uploaded in CSR order into *stage (made
 * at the first refresh and kept), then gathered into tile order through csr_pos. */
coal_status refresh_host(coal_ctx ctx, Dev *d, coal_mat M, struct coal_tile_dev *t, void **stage) {
  const size_t bytes = coal_dtype_size(M->dtype) * (size_t)M->nnz;
  if (!bytes) return COAL_SUCCESS;
  COAL_CALL(coal_mat_host(M)); /* new values made on the device reach the host copy first */
  if (!*stage) COAL_CALL(dalloc(ctx, d, bytes, stage));
  COAL_CUDA_CALL(
      ctx, cudaMemcpyAsync(*stage, M->values, bytes, cudaMemcpyHostToDevice, coal_stream(ctx)));
  return coal_spgemm_gather_cuda(ctx, M->dtype, t->nnz, t->csr_pos, *stage, t->val);
}

/* Hands C its device CSR (structure built here, values copied from c_val). */
coal_status give_device_copy(coal_ctx ctx, Dev *d, coal_mat C) {
  const size_t es = coal_dtype_size(C->dtype), nz = (size_t)d->nnz;
  struct coal_mat_cuda *m = NULL;
  COAL_CALL(coal_calloc(ctx, sizeof *m, (void **)&m));
  coal_status st = coal_cuda_malloc(ctx, es * nz, &m->values);
  if (st == COAL_SUCCESS && nz &&
      cudaMemcpyAsync(m->values, d->c_val, es * nz, cudaMemcpyDeviceToDevice, coal_stream(ctx)) !=
          cudaSuccess) {
    (void)cudaGetLastError();
    st = COAL_ERROR(ctx, COAL_ERR_CUDA, "copy of C's values");
  }
  if (st != COAL_SUCCESS) {
    coal_cuda_free(m->values);
    coal_free(m);
    return st;
  }
  m->rowptr = d->c_rowptr, m->colind = d->c_colind;
  d->c_rowptr = NULL, d->c_colind = NULL; /* C owns them now */
  C->dev = m;
  C->valid |= COAL_MEM_DEVICE;
  return COAL_SUCCESS;
}

coal_status cu_numeric(coal_spgemm p, int download) {
  coal_ctx ctx = p->ctx;
  Dev *d = (Dev *)p->dev;
  COAL_CHECK(ctx, d, COAL_ERR_STATE, "product without device state");
  if (p->A->state != d->a_state) {
    COAL_CALL(refresh_host(ctx, d, p->A, &d->a, &d->a_stage));
    d->a_state = p->A->state;
  }
  if (!d->b_is_a && p->B->state != d->b_state) {
    if (p->b_producer) {
      const Dev *pd = (const Dev *)p->b_producer->dev;
      COAL_CHECK(ctx, pd && pd->nnz == d->b.nnz, COAL_ERR_STATE, "B's producer does not match");
      COAL_CALL(
          coal_spgemm_gather_cuda(ctx, p->B->dtype, d->b.nnz, d->b.csr_pos, pd->c_val, d->b.val));
    } else {
      COAL_CALL(refresh_host(ctx, d, p->B, &d->b, &d->b_stage));
    }
    d->b_state = p->B->state;
  }
  COAL_CALL(
      coal_spgemm_step3_cuda(ctx, p->A->dtype, &d->a, &d->b, d, d->c_val, p->dense_threshold));
  coal_mat C = p->C;
  const size_t bytes = coal_dtype_size(C->dtype) * (size_t)d->nnz;
  if (download) {
    COAL_CALL(d2h(ctx, C->values, d->c_val, bytes));
    COAL_CALL(sync(ctx));
  }
  /* new values: C's derived formats and device copy are stale. Without download C's host
   * values are stale too: only a PtAP object's private A*P gets here, read by the outer
   * product from c_val. */
  coal_mat_invalidate(C);
  if (d->c_rowptr) {           /* first numeric: C's device structure is here already */
    if (download && !C->dev) { /* (a device copy made in between keeps its structure) */
      COAL_CALL(give_device_copy(ctx, d, C));
    } else {
      coal_cuda_free(d->c_rowptr), coal_cuda_free(d->c_colind);
      d->c_rowptr = NULL, d->c_colind = NULL;
    }
  }
  return COAL_SUCCESS;
}

/* Host copy of C's tile structure (steps 1 and 2) and, when pos != NULL, the CSR map. */
coal_status download_structure(coal_spgemm p, coal_tile **out, int32_t **pos) {
  coal_ctx ctx = p->ctx;
  Dev *d = (Dev *)p->dev;
  *out = NULL;
  if (pos) *pos = NULL;
  coal_tile *t = NULL;
  COAL_CALL(coal_tile_alloc_layout(ctx, p->A->nrows, p->B->ncols, d->ntiles, p->A->dtype, &t));
  const size_t nt = (size_t)d->ntiles;
  int32_t *hp = NULL;
  coal_status st = COAL_SUCCESS;
  if (pos)
    COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * COAL_TILE_DIM * nt, (void **)&hp), fail);
  COAL_CALL_GOTO(st, d2h(ctx, t->tile_ptr, d->c_tile_ptr, sizeof(int32_t) * ((size_t)d->tm + 1)),
                 fail);
  COAL_CALL_GOTO(st, d2h(ctx, t->tile_col, d->c_tile_col, sizeof(int32_t) * nt), fail);
  COAL_CALL_GOTO(st, d2h(ctx, t->tile_nnz, d->c_tile_nnz, sizeof(int32_t) * (nt + 1)), fail);
  COAL_CALL_GOTO(st, d2h(ctx, t->row_ptr, d->c_row_ptr, COAL_TILE_DIM * nt), fail);
  COAL_CALL_GOTO(st, d2h(ctx, t->mask, d->c_mask, sizeof(uint16_t) * COAL_TILE_DIM * nt), fail);
  if (pos) COAL_CALL_GOTO(st, d2h(ctx, hp, d->c_pos, sizeof(int32_t) * COAL_TILE_DIM * nt), fail);
  COAL_CALL_GOTO(st, sync(ctx), fail);
  t->nnz = d->nnz;
  *out = t;
  if (pos) *pos = hp;
  return COAL_SUCCESS;
fail:
  coal_tile_free(t);
  coal_free(hp);
  return st;
}

/* Statistics from C's downloaded tile structure and host tile formats of A and B (built here:
 * the product keeps none on the host). */
coal_status cu_tile_stats(coal_spgemm p) {
  coal_tile *t = NULL, *ta = NULL, *tb = NULL;
  coal_status st;
  COAL_CALL_GOTO(st, download_structure(p, &t, NULL), done);
  COAL_CALL_GOTO(st,
                 coal_tile_from_csr(p->ctx, p->A->nrows, p->A->ncols, p->A->rowptr, p->A->colind,
                                    NULL, p->A->dtype, 0, &ta),
                 done);
  COAL_CALL_GOTO(st,
                 coal_tile_from_csr(p->ctx, p->B->nrows, p->B->ncols, p->B->rowptr, p->B->colind,
                                    NULL, p->B->dtype, 0, &tb),
                 done);
  COAL_CALL_GOTO(st, coal_tile_build_csc(p->ctx, tb), done);
  st = coal_spgemm_tile_stats_host(p->ctx, ta, tb, t, p->dense_threshold, &p->stats);
done:
  coal_tile_free(t), coal_tile_free(ta), coal_tile_free(tb);
  return st;
}

} // namespace

/* The CUDA instance's spgemm entries serve both algorithms: TILE here, ROWS in spgemm_rows.cu. */
coal_status coal_spgemm_symbolic_cuda(coal_spgemm p) {
  return p->algo == COAL_SPGEMM_ROWS ? coal_spgemm_rows_symbolic_cuda(p) : cu_symbolic(p);
}
coal_status coal_spgemm_numeric_cuda(coal_spgemm p, int download) {
  return p->algo == COAL_SPGEMM_ROWS ? coal_spgemm_rows_numeric_cuda(p) : cu_numeric(p, download);
}
coal_status coal_spgemm_stats_cuda(coal_spgemm p) {
  return p->algo == COAL_SPGEMM_ROWS ? COAL_SUCCESS : cu_tile_stats(p);
}
void coal_spgemm_release_cuda(coal_spgemm p) {
  if (p->algo == COAL_SPGEMM_ROWS)
    coal_spgemm_rows_release_cuda(p);
  else
    cu_release(p);
}

coal_status coal_spgemm_download_cuda(coal_spgemm p, coal_tile **tc, int32_t **pos) {
  if (!p || !tc) return COAL_ERR_ARG;
  COAL_CHECK(p->ctx, p->type == COAL_PRODUCT_AB && p->dev && p->ctx->backend == COAL_BACKEND_CUDA,
             COAL_ERR_ARG, "not a product C = A*B on the CUDA backend");
  return download_structure(p, tc, pos);
}
