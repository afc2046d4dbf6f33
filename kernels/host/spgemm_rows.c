/* Gustavson's row-by-row product C = A*B on the host CSR: for every row i of A, row i of C is
 * the sum of the rows k of B scaled by a_ik, gathered in a dense accumulator of B's width with
 * a marker of the columns met. Sums in double, in ascending k (A's columns are sorted), rounded
 * once: the order the tiled product follows too. O(products + nnz(C) log) time, O(ncols(B))
 * extra memory. The reference of the tests and a fallback. */
#include "../spgemm.h"

#include <string.h>

int64_t coal_spgemm_products(coal_mat A, coal_mat B) {
  int64_t n = 0;
  for (int64_t p = 0; p < A->nnz; p++) {
    const int32_t k = A->colind[p];
    n += B->rowptr[k + 1] - B->rowptr[k];
  }
  return n;
}

coal_status coal_spgemm_rows_product_host(coal_mat A, coal_mat B, coal_mat *C) {
  coal_ctx ctx = A->ctx;
  *C = NULL;
  const int32_t m = A->nrows, n = B->ncols;
  const coal_dtype dt = A->dtype;
  const size_t es = coal_dtype_size(dt);
  int32_t *mark = NULL, *rp = NULL, *ci = NULL;
  double *acc = NULL;
  void *v = NULL;
  coal_status st;
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * ((size_t)n + 1), (void **)&mark), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(double) * ((size_t)n + 1), (void **)&acc), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * ((size_t)m + 1), (void **)&rp), fail);
  for (int32_t j = 0; j < n; j++) mark[j] = -1;
  /* symbolic: distinct columns per row */
  int64_t nz = 0;
  rp[0] = 0;
  for (int32_t i = 0; i < m; i++) {
    for (int32_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
      const int32_t k = A->colind[p];
      for (int32_t q = B->rowptr[k]; q < B->rowptr[k + 1]; q++)
        if (mark[B->colind[q]] != i) mark[B->colind[q]] = i, nz++;
    }
    if (nz > INT32_MAX) {
      st = COAL_ERROR(ctx, COAL_ERR_OVERFLOW,
                      "the product has more than 2^31-1 nonzeros (32-bit row offsets)");
      goto fail;
    }
    rp[i + 1] = (int32_t)nz;
  }
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * (size_t)nz, (void **)&ci), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, es * (size_t)nz, &v), fail);
  for (int32_t j = 0; j < n; j++) mark[j] = -1;
  /* numeric: columns of the row in ci (then sorted), sums in acc */
  for (int32_t i = 0; i < m; i++) {
    int32_t w = rp[i];
    for (int32_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
      const int32_t k = A->colind[p];
      const double a =
          dt == COAL_F64 ? ((const double *)A->values)[p] : (double)((const float *)A->values)[p];
      for (int32_t q = B->rowptr[k]; q < B->rowptr[k + 1]; q++) {
        const int32_t j = B->colind[q];
        const double b =
            dt == COAL_F64 ? ((const double *)B->values)[q] : (double)((const float *)B->values)[q];
        if (mark[j] != i) mark[j] = i, acc[j] = 0.0, ci[w++] = j;
        acc[j] += a * b;
      }
    }
    if (w - rp[i] > 1) qsort(ci + rp[i], (size_t)(w - rp[i]), sizeof(int32_t), coal_cmp_i32);
    for (int32_t q = rp[i]; q < w; q++) {
      if (dt == COAL_F64)
        ((double *)v)[q] = acc[ci[q]];
      else
        ((float *)v)[q] = (float)acc[ci[q]];
    }
  }
  coal_free(mark), coal_free(acc);
  return coal_mat_wrap_csr(ctx, m, n, rp, ci, v, dt, C);
fail:
  coal_free(mark), coal_free(acc), coal_free(rp), coal_free(ci), coal_free(v);
  return st;
}

/* ---- ROWS algorithm on the host backend: Gustavson ------------------------------------------ *
 * Symbolic = the whole product (C made with its values); numeric = the values again into C's
 * structure, with the accumulator and marker kept on the product (p->dev). */
typedef struct {
  int32_t *mark; /* [ncols(B)] last row that met the column */
  double *acc;   /* [ncols(B)] */
  int fresh;     /* C's values are current from the symbolic step */
} rows_host;

void coal_spgemm_rows_release_host(coal_spgemm p) {
  rows_host *r = p->dev;
  if (!r) return;
  coal_free(r->mark), coal_free(r->acc), coal_free(r);
  p->dev = NULL;
}

coal_status coal_spgemm_rows_symbolic_host(coal_spgemm p) {
  coal_ctx ctx = p->ctx;
  rows_host *r = NULL;
  COAL_CALL(coal_calloc(ctx, sizeof *r, (void **)&r));
  p->dev = r;
  const size_t n1 = (size_t)p->B->ncols + 1;
  COAL_CALL(coal_malloc(ctx, sizeof(int32_t) * n1, (void **)&r->mark));
  COAL_CALL(coal_malloc(ctx, sizeof(double) * n1, (void **)&r->acc));
  COAL_CALL(coal_spgemm_rows_product_host(p->A, p->B, &p->C));
  r->fresh = 1;
  p->a_state = p->A->state, p->b_state = p->B->state;
  p->stats.temp_bytes = (sizeof(int32_t) + sizeof(double)) * n1;
  return COAL_SUCCESS;
}

coal_status coal_spgemm_rows_numeric_host(coal_spgemm p) {
  rows_host *r = p->dev;
  COAL_CHECK(p->ctx, r, COAL_ERR_STATE, "product without state");
  coal_mat A = p->A, B = p->B, C = p->C;
  if (r->fresh && A->state == p->a_state && B->state == p->b_state) {
    r->fresh = 0;
    return COAL_SUCCESS;
  }
  r->fresh = 0;
  const coal_dtype dt = A->dtype;
  for (int32_t j = 0; j < B->ncols; j++) r->mark[j] = -1;
  for (int32_t i = 0; i < A->nrows; i++) {
    for (int32_t p2 = A->rowptr[i]; p2 < A->rowptr[i + 1]; p2++) {
      const int32_t k = A->colind[p2];
      const double a =
          dt == COAL_F64 ? ((const double *)A->values)[p2] : (double)((const float *)A->values)[p2];
      for (int32_t q = B->rowptr[k]; q < B->rowptr[k + 1]; q++) {
        const int32_t j = B->colind[q];
        const double b =
            dt == COAL_F64 ? ((const double *)B->values)[q] : (double)((const float *)B->values)[q];
        if (r->mark[j] != i) r->mark[j] = i, r->acc[j] = 0.0;
        r->acc[j] += a * b;
      }
    }
    for (int32_t q = C->rowptr[i]; q < C->rowptr[i + 1]; q++) {
      if (dt == COAL_F64)
        ((double *)C->values)[q] = r->acc[C->colind[q]];
      else
        ((float *)C->values)[q] = (float)r->acc[C->colind[q]];
    }
  }
  p->a_state = A->state, p->b_state = B->state;
  coal_mat_invalidate(C); /* derived formats of C held the old values */
  return COAL_SUCCESS;
}
