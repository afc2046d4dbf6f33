/* Sparse x sparse products, front end: argument checks, product objects, PtAP as two products,
 * dispatch to the spgemm entries of the context's backend table (src/backend.h; the product
 * object and the algorithms: kernels/spgemm.h). */
#include "../src/backend.h"
#include "spgemm.h"

#include <string.h>

static coal_status check_operands(coal_mat A, coal_mat B) {
  if (!A) return COAL_ERR_ARG;
  coal_ctx ctx = A->ctx;
  COAL_CHECK(ctx, B, COAL_ERR_ARG, "NULL matrix");
  COAL_CHECK(ctx, B->ctx == ctx, COAL_ERR_ARG, "the matrices belong to different contexts");
  COAL_CHECK(ctx, B->dtype == A->dtype, COAL_ERR_ARG, "the matrices have different dtypes");
  return COAL_SUCCESS;
}

static void product_free(coal_spgemm p) {
  if (!p) return;
  const coal_spgemm_ops *ops = &coal_backend(p->ctx)->spgemm;
  if (p->type == COAL_PRODUCT_PTAP && p->fused) {
    ops->ptap_release(p);
  } else if (p->type == COAL_PRODUCT_PTAP) {
    product_free(p->inner);
    product_free(p->outer);
    coal_mat_destroy(&p->Pt);
    coal_mat_destroy(&p->AP);
    coal_free(p->pt_src);
  } else {
    ops->release(p);
  }
  coal_free(p);
}

static void add_stats(coal_spgemm_stats *s, const coal_spgemm_stats *t) {
  s->nnz_c = t->nnz_c, s->c_bytes = t->c_bytes; /* the last product's C is the result */
  s->products += t->products;
  s->ntiles_a += t->ntiles_a, s->ntiles_b += t->ntiles_b, s->ntiles_c += t->ntiles_c;
  s->empty_tiles_c += t->empty_tiles_c;
  s->tile_pairs += t->tile_pairs;
  s->dense_tiles_c += t->dense_tiles_c;
  s->temp_bytes += t->temp_bytes;
}

static size_t csr_bytes(coal_mat M) {
  return sizeof(int32_t) * ((size_t)M->nrows + 1 + (size_t)M->nnz) +
         coal_dtype_size(M->dtype) * (size_t)M->nnz;
}

/* C = A*B: symbolic, then the first numeric (C's host values always current after create).
 * producer: the product whose result B is (PtAP), or NULL. */
static coal_status create_ab(coal_mat A, coal_mat B, coal_spgemm_algo algo, coal_spgemm producer,
                             coal_spgemm *out) {
  coal_ctx ctx = A->ctx;
  *out = NULL;
  COAL_CHECK(ctx, A->ncols == B->nrows, COAL_ERR_ARG, "product of a %d x %d and a %d x %d matrix",
             A->nrows, A->ncols, B->nrows, B->ncols);
  coal_spgemm p = NULL;
  COAL_CALL(coal_calloc(ctx, sizeof *p, (void **)&p));
  p->ctx = ctx, p->type = COAL_PRODUCT_AB, p->A = A, p->B = B, p->b_producer = producer;
  p->algo = algo;
  p->dense_threshold = COAL_SPGEMM_DENSE_NNZ;
  const coal_spgemm_ops *ops = &coal_backend(ctx)->spgemm;
  const double t0 = coal_now_seconds();
  coal_status st = ops->symbolic(p);
  if (st == COAL_SUCCESS) st = ops->numeric(p, 1);
  if (st != COAL_SUCCESS) {
    coal_mat_destroy(&p->C);
    product_free(p);
    return st;
  }
  p->stats.symbolic_seconds = coal_now_seconds() - t0;
  p->stats.nnz_c = p->C->nnz;
  p->stats.c_bytes = csr_bytes(p->C);
  *out = p;
  return COAL_SUCCESS;
}

/* Pt = P^T by a counting sort over P's columns, with src[q] = the entry of P that entry q of Pt
 * holds (so that new values of P reach Pt by a gather). */
static coal_status transpose_map(coal_mat P, coal_mat *Pt, int32_t **src) {
  coal_ctx ctx = P->ctx;
  const size_t es = coal_dtype_size(P->dtype), nz = (size_t)P->nnz;
  int32_t *rp = NULL, *ci = NULL, *s = NULL, *next = NULL;
  void *v = NULL;
  coal_status st;
  COAL_CALL_GOTO(st, coal_calloc(ctx, sizeof(int32_t) * ((size_t)P->ncols + 1), (void **)&rp),
                 fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * nz, (void **)&ci), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * nz, (void **)&s), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, es * nz, &v), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * ((size_t)P->ncols + 1), (void **)&next),
                 fail);
  for (size_t p = 0; p < nz; p++) rp[P->colind[p] + 1]++;
  for (int32_t j = 0; j < P->ncols; j++) rp[j + 1] += rp[j];
  memcpy(next, rp, sizeof(int32_t) * ((size_t)P->ncols + 1));
  for (int32_t i = 0; i < P->nrows; i++)
    for (int32_t p = P->rowptr[i]; p < P->rowptr[i + 1]; p++) {
      const int32_t q = next[P->colind[p]]++;
      ci[q] = i, s[q] = p;
      memcpy((char *)v + es * (size_t)q, (const char *)P->values + es * (size_t)p, es);
    }
  coal_free(next), next = NULL;
  COAL_CALL_GOTO(st, coal_mat_wrap_csr(ctx, P->ncols, P->nrows, rp, ci, v, P->dtype, Pt), fail_s);
  *src = s;
  return COAL_SUCCESS;
fail:
  coal_free(rp), coal_free(ci), coal_free(v), coal_free(next);
fail_s:
  coal_free(s);
  return st;
}

static coal_status refresh_pt(coal_spgemm p) {
  coal_mat P = p->B, Pt = p->Pt;
  if (!p->pt_src) { /* made by the backend */
    COAL_CALL(coal_backend(p->ctx)->spgemm.transpose_values(P, Pt));
    p->p_state = P->state;
    return COAL_SUCCESS;
  }
  COAL_CALL(coal_mat_host(P));
  const size_t es = coal_dtype_size(P->dtype);
  for (int64_t q = 0; q < Pt->nnz; q++)
    memcpy((char *)Pt->values + es * (size_t)q, (const char *)P->values + es * (size_t)p->pt_src[q],
           es);
  coal_mat_invalidate(Pt);
  p->p_state = P->state;
  return COAL_SUCCESS;
}

/* C = P^T (A P): the inner product A*P keeps its result on the backend, the outer one
 * Pt*(AP) delivers C. */
static coal_status create_ptap(coal_mat A, coal_mat P, coal_spgemm_algo algo, coal_spgemm *out) {
  coal_ctx ctx = A->ctx;
  *out = NULL;
  COAL_CHECK(ctx, A->nrows == A->ncols, COAL_ERR_ARG, "P^T A P needs a square A (%d x %d)",
             A->nrows, A->ncols);
  COAL_CHECK(ctx, P->nrows == A->nrows, COAL_ERR_ARG, "P^T A P: A is %d x %d, P is %d x %d",
             A->nrows, A->ncols, P->nrows, P->ncols);
  coal_spgemm p = NULL;
  COAL_CALL(coal_calloc(ctx, sizeof *p, (void **)&p));
  p->ctx = ctx, p->type = COAL_PRODUCT_PTAP, p->A = A, p->B = P, p->algo = algo;
  p->dense_threshold = COAL_SPGEMM_DENSE_NNZ;
  const double t0 = coal_now_seconds();
  coal_status st;
  /* ROWS on a backend that transposes (the GPU): one fused product (P^T's pattern only, no A*P)
   * where it applies, else P^T, A*P and the result on the backend. TILE (and a backend without
   * a transpose: the host): P^T made on the host with a map for new values of P. */
  const coal_spgemm_ops *ops = &coal_backend(ctx)->spgemm;
  const int on_dev = algo == COAL_SPGEMM_ROWS && ops->transpose;
  if (on_dev && ops->ptap_symbolic) {
    COAL_CALL_GOTO(st, ops->ptap_symbolic(p, &p->fused), fail);
    if (p->fused) {
      COAL_CALL_GOTO(st, ops->ptap_numeric(p), fail_c);
      p->stats.symbolic_seconds = coal_now_seconds() - t0;
      p->stats.nnz_c = p->C->nnz;
      p->stats.c_bytes = csr_bytes(p->C);
      *out = p;
      return COAL_SUCCESS;
    }
  }
  if (on_dev) {
    COAL_CALL_GOTO(st, ops->transpose(P, &p->Pt), fail);
  } else {
    COAL_CALL_GOTO(st, coal_mat_host(P), fail);
    COAL_CALL_GOTO(st, transpose_map(P, &p->Pt, &p->pt_src), fail);
  }
  p->p_state = P->state;
  COAL_CALL_GOTO(st, create_ab(A, P, algo, NULL, &p->inner), fail);
  p->AP = p->inner->C; /* owned by p from here on */
  /* TILE: later numerics leave AP's values on the backend, where the outer product reads them;
   * ROWS: AP's device copy is current after each numeric of the inner product */
  COAL_CALL_GOTO(st, create_ab(p->Pt, p->AP, algo, on_dev ? NULL : p->inner, &p->outer), fail);
  if (algo == COAL_SPGEMM_TILE) {
    /* the outer product has its own copies: AP's and Pt's device copies (if any) go */
    coal_backend(ctx)->mat.release(p->AP);
    coal_backend(ctx)->mat.release(p->Pt);
  }
  p->C = p->outer->C;
  p->stats.symbolic_seconds = coal_now_seconds() - t0;
  *out = p;
  return COAL_SUCCESS;
fail_c:
  coal_mat_destroy(&p->C);
fail:
  product_free(p);
  return st;
}

coal_status coal_spgemm_create_algo(coal_product_type type, coal_mat A, coal_mat B,
                                    coal_spgemm_algo algo, coal_spgemm *prod, coal_mat *C) {
  if (prod) *prod = NULL;
  if (C) *C = NULL;
  COAL_CALL(check_operands(A, B));
  coal_ctx ctx = A->ctx;
  COAL_CHECK(ctx, prod && C, COAL_ERR_ARG, "NULL output");
  COAL_CHECK(ctx, type == COAL_PRODUCT_AB || type == COAL_PRODUCT_PTAP, COAL_ERR_ARG,
             "unknown product type %d", (int)type);
  COAL_CHECK(ctx, algo >= COAL_SPGEMM_AUTO && algo <= COAL_SPGEMM_ROWS, COAL_ERR_ARG,
             "unknown algorithm %d", (int)algo);
  if (algo == COAL_SPGEMM_AUTO) algo = COAL_SPGEMM_ROWS;
  if (algo == COAL_SPGEMM_TILE) { /* the tile builders read the host CSR */
    COAL_CALL(coal_mat_host(A));
    COAL_CALL(coal_mat_host(B));
  }
  coal_spgemm p = NULL;
  COAL_CALL(type == COAL_PRODUCT_AB ? create_ab(A, B, algo, NULL, &p)
                                    : create_ptap(A, B, algo, &p));
  *prod = p;
  *C = p->C;
  return COAL_SUCCESS;
}

coal_status coal_spgemm_create(coal_product_type type, coal_mat A, coal_mat B, coal_spgemm *prod,
                               coal_mat *C) {
  return coal_spgemm_create_algo(type, A, B, COAL_SPGEMM_AUTO, prod, C);
}

static coal_status numeric(coal_spgemm p, int download) {
  if (p->type == COAL_PRODUCT_AB) {
    COAL_CHECK(p->ctx, p->C->nnz == p->stats.nnz_c, COAL_ERR_STATE,
               "the product's result changed structure (%lld nonzeros, expected %lld)",
               (long long)p->C->nnz, (long long)p->stats.nnz_c);
    return coal_backend(p->ctx)->spgemm.numeric(p, download);
  }
  if (p->fused) return coal_backend(p->ctx)->spgemm.ptap_numeric(p);
  if (p->B->state != p->p_state) COAL_CALL(refresh_pt(p));
  COAL_CALL(numeric(p->inner, 0));
  return numeric(p->outer, download);
}

coal_status coal_spgemm_numeric(coal_spgemm prod) {
  if (!prod) return COAL_ERR_ARG;
  return numeric(prod, 1);
}

coal_status coal_spgemm_destroy(coal_spgemm *prod) {
  if (!prod || !*prod) return COAL_SUCCESS;
  product_free(*prod);
  *prod = NULL;
  return COAL_SUCCESS;
}

/* Intermediate products of A*P and P^T*(AP), the two products the fused P^T A P stands for:
 * products(A, P) + sum over r of nnz(P(r,:)) nnz(AP(r,:)), row lengths of AP counted with a
 * marker per column of P. */
static coal_status ptap_products(coal_mat A, coal_mat P, int64_t *out) {
  int32_t *mark = NULL;
  COAL_CALL(coal_malloc(A->ctx, sizeof(int32_t) * ((size_t)P->ncols + 1), (void **)&mark));
  for (int32_t j = 0; j < P->ncols; j++) mark[j] = -1;
  int64_t s = 0;
  for (int32_t r = 0; r < A->nrows; r++) {
    int64_t len = 0;
    for (int32_t p = A->rowptr[r]; p < A->rowptr[r + 1]; p++) {
      const int32_t c = A->colind[p];
      s += P->rowptr[c + 1] - P->rowptr[c];
      for (int32_t q = P->rowptr[c]; q < P->rowptr[c + 1]; q++)
        if (mark[P->colind[q]] != r) mark[P->colind[q]] = r, len++;
    }
    s += len * (P->rowptr[r + 1] - P->rowptr[r]);
  }
  coal_free(mark);
  *out = s;
  return COAL_SUCCESS;
}

static coal_status get_stats(coal_spgemm p) {
  if (p->type == COAL_PRODUCT_AB) {
    /* counted here, not at creation: it reads the host CSR of both operands */
    COAL_CALL(coal_mat_host(p->A));
    COAL_CALL(coal_mat_host(p->B));
    p->stats.products = coal_spgemm_products(p->A, p->B);
    return coal_backend(p->ctx)->spgemm.tile_stats(p);
  }
  if (p->fused) {
    COAL_CALL(coal_mat_host(p->A));
    COAL_CALL(coal_mat_host(p->B));
    return ptap_products(p->A, p->B, &p->stats.products);
  }
  COAL_CALL(get_stats(p->inner));
  COAL_CALL(get_stats(p->outer));
  const double t = p->stats.symbolic_seconds;
  memset(&p->stats, 0, sizeof p->stats);
  add_stats(&p->stats, &p->inner->stats);
  add_stats(&p->stats, &p->outer->stats);
  p->stats.temp_bytes += csr_bytes(p->Pt) + csr_bytes(p->AP);
  p->stats.symbolic_seconds = t;
  return COAL_SUCCESS;
}

coal_status coal_spgemm_get_stats(coal_spgemm prod, coal_spgemm_stats *st) {
  if (!prod) return COAL_ERR_ARG;
  COAL_CHECK(prod->ctx, st, COAL_ERR_ARG, "NULL stats");
  COAL_CALL(get_stats(prod));
  *st = prod->stats;
  return COAL_SUCCESS;
}

coal_status coal_spgemm_set_dense_threshold(coal_spgemm p, int threshold) {
  if (!p) return COAL_ERR_ARG;
  COAL_CHECK(p->ctx, threshold >= 0 && threshold <= COAL_TILE_DIM * COAL_TILE_DIM, COAL_ERR_ARG,
             "dense threshold %d outside 0..256", threshold);
  p->dense_threshold = threshold;
  if (p->inner) COAL_CALL(coal_spgemm_set_dense_threshold(p->inner, threshold));
  if (p->outer) COAL_CALL(coal_spgemm_set_dense_threshold(p->outer, threshold));
  return COAL_SUCCESS;
}

static coal_status multiply(coal_product_type type, coal_mat A, coal_mat B, coal_mat *C) {
  if (C) *C = NULL;
  COAL_CALL(check_operands(A, B));
  COAL_CHECK(A->ctx, C, COAL_ERR_ARG, "NULL output");
  coal_spgemm p = NULL;
  coal_mat R = NULL;
  COAL_CALL(coal_spgemm_create(type, A, B, &p, &R));
  product_free(p);
  *C = R;
  return COAL_SUCCESS;
}

coal_status coal_mat_multiply(coal_mat A, coal_mat B, coal_mat *C) {
  return multiply(COAL_PRODUCT_AB, A, B, C);
}

coal_status coal_mat_ptap(coal_mat A, coal_mat P, coal_mat *C) {
  return multiply(COAL_PRODUCT_PTAP, A, P, C);
}

coal_status coal_mat_transpose_backend(coal_mat P, coal_mat *Pt) {
  if (!P || !Pt) return COAL_ERR_ARG;
  const coal_backend_ops *ops = coal_backend(P->ctx);
  if (!ops->spgemm.transpose) return coal_mat_transpose(P, Pt);
  COAL_CALL(ops->mat.prepare(P));
  return ops->spgemm.transpose(P, Pt);
}
