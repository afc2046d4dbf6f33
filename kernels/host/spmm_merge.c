/* Host twin of the merge-based CSR SpMM kernel ([YANG18], section 4.2, with the merge-path
 * partition of Merrill and Garland that the SpMV kernel uses). The path merges the row ends
 * with the nonzeros; it is cut into parts of COAL_MERGE_ITEMS items, one per CTA, each found
 * with coal_merge_path_search, so every CTA gets an equal share of nonzeros plus row ends.
 * A part walks its items: a nonzero adds val * X[col, :] to the running sums of all k
 * columns, a row end stores alpha*sums + beta*Y[row, :] and clears them. What is left when
 * the part ends is its carry-out (last row, k partial sums); a fix-up pass adds alpha*carry
 * to those rows after all parts, as the GPU's second kernel does. Sums are kept in double. */
#include "../spmv.h" /* the merge-path partition */
#include "../spmm.h"

#include <string.h>

#define MG_DEFINE(T, S)                                                                            \
  static void merge_##S(coal_mat A, double alpha, coal_bvec X, double beta, coal_bvec Y,           \
                        int64_t nparts, int32_t *carry_row, double *carry, double *acc) {          \
    const T *v_ = (const T *)A->values;                                                            \
    const T *x_ = (const T *)X->data;                                                              \
    T *y_ = (T *)Y->data;                                                                          \
    const int32_t *row_end = A->rowptr + 1;                                                        \
    int32_t nrows = A->nrows;                                                                      \
    int64_t k = X->k, nnz = A->nnz, total = (int64_t)nrows + nnz;                                  \
    for (int64_t p = 0; p < nparts; p++) {                                                         \
      int64_t d0 = p * COAL_MERGE_ITEMS;                                                           \
      int64_t d1 = d0 + COAL_MERGE_ITEMS < total ? d0 + COAL_MERGE_ITEMS : total;                  \
      int32_t row;                                                                                 \
      int64_t nz;                                                                                  \
      coal_merge_path_search(d0, row_end, nrows, nnz, &row, &nz);                                  \
      memset(acc, 0, sizeof(double) * (size_t)k);                                                  \
      for (int64_t d = d0; d < d1; d++) {                                                          \
        if (nz < row_end[row]) {                                                                   \
          double a = (double)v_[nz];                                                               \
          int32_t col = A->colind[nz];                                                             \
          for (int64_t j = 0; j < k; j++)                                                          \
            acc[j] += a * (double)x_[coal_block_index(X->layout, X->ld, col, j)];                  \
          nz++;                                                                                    \
        } else {                                                                                   \
          for (int64_t j = 0; j < k; j++) {                                                        \
            int64_t q = coal_block_index(Y->layout, Y->ld, row, j);                                \
            y_[q] = (T)(beta == 0.0 ? alpha * acc[j] : alpha * acc[j] + beta * (double)y_[q]);     \
            acc[j] = 0.0;                                                                          \
          }                                                                                        \
          row++;                                                                                   \
        }                                                                                          \
      }                                                                                            \
      carry_row[p] = row;                                                                          \
      memcpy(carry + p * k, acc, sizeof(double) * (size_t)k);                                      \
    }                                                                                              \
    for (int64_t p = 0; p < nparts; p++) /* carry-out fix-up */                                    \
      if (carry_row[p] < nrows)                                                                    \
        for (int64_t j = 0; j < k; j++) {                                                          \
          int64_t q = coal_block_index(Y->layout, Y->ld, carry_row[p], j);                         \
          y_[q] = (T)((double)y_[q] + alpha * carry[p * k + j]);                                   \
        }                                                                                          \
  }

MG_DEFINE(double, f64)
MG_DEFINE(float, f32)

coal_status coal_spmm_merge_host(coal_mat A, double alpha, coal_bvec X, double beta, coal_bvec Y) {
  int64_t total = (int64_t)A->nrows + A->nnz;
  int64_t nparts = (total + COAL_MERGE_ITEMS - 1) / COAL_MERGE_ITEMS;
  size_t k = (size_t)X->k;
  coal_status st;
  int32_t *carry_row = NULL;
  double *carry = NULL, *acc = NULL;
  COAL_CALL_GOTO(st, coal_malloc(A->ctx, sizeof(int32_t) * (size_t)nparts, (void **)&carry_row),
                 done);
  COAL_CALL_GOTO(st, coal_malloc(A->ctx, sizeof(double) * (size_t)nparts * k, (void **)&carry),
                 done);
  COAL_CALL_GOTO(st, coal_malloc(A->ctx, sizeof(double) * k, (void **)&acc), done);
  if (A->dtype == COAL_F64)
    merge_f64(A, alpha, X, beta, Y, nparts, carry_row, carry, acc);
  else
    merge_f32(A, alpha, X, beta, Y, nparts, carry_row, carry, acc);
done:
  coal_free(carry_row), coal_free(carry), coal_free(acc);
  return st;
}
