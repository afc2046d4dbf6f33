/* Host twin of the merge-path CSR kernel [MERGEPATH]. The path merges the row ends
 * row_end[i] = rowptr[i+1] with the nonzero indices 0..nnz-1; a step at (row, nz) consumes
 * nonzero nz while nz < row_end[row], else it ends the row. The path is cut into parts of
 * COAL_MERGE_ITEMS items, as the GPU cuts it into CTAs. Each part walks its items, stores
 * the rows it ends and leaves a carry-out (its last row and the partial sum of that row);
 * a fix-up pass then adds alpha*carry to those rows. Sums are kept in double. */
#include "../spmv.h"

void coal_merge_path_search(int64_t diagonal, const int32_t *row_end, int32_t nrows, int64_t nnz,
                            int32_t *row_out, int64_t *nz_out) {
  int64_t lo = diagonal - nnz > 0 ? diagonal - nnz : 0;
  int64_t hi = diagonal < nrows ? diagonal : nrows;
  /* find the first row whose end lies past the nonzero at the diagonal's other coordinate:
   * rows [0, lo) are consumed, and row_end[pivot] <= diagonal - pivot - 1 means row pivot
   * ends before nonzero diagonal - pivot - 1 is taken */
  while (lo < hi) {
    int64_t pivot = lo + (hi - lo) / 2;
    if ((int64_t)row_end[pivot] <= diagonal - pivot - 1)
      lo = pivot + 1;
    else
      hi = pivot;
  }
  *row_out = (int32_t)lo;
  *nz_out = diagonal - lo;
}

typedef struct {
  int32_t row; /* row the part stops in (nrows if none) */
  double sum;  /* partial sum of that row from this part */
} merge_carry;

#define MERGE_PARTS(T)                                                                             \
  do {                                                                                             \
    const T *v_ = (const T *)A->values;                                                            \
    const T *x_ = (const T *)x;                                                                    \
    T *y_ = (T *)y;                                                                                \
    for (int64_t p = 0; p < nparts; p++) {                                                         \
      int64_t d0 = p * COAL_MERGE_ITEMS;                                                           \
      int64_t d1 = d0 + COAL_MERGE_ITEMS < total ? d0 + COAL_MERGE_ITEMS : total;                  \
      int32_t row;                                                                                 \
      int64_t nz;                                                                                  \
      coal_merge_path_search(d0, row_end, nrows, nnz, &row, &nz);                                  \
      double sum = 0.0;                                                                            \
      for (int64_t d = d0; d < d1; d++) {                                                          \
        if (nz < row_end[row]) {                                                                   \
          sum += (double)v_[nz] * (double)x_[A->colind[nz]];                                       \
          nz++;                                                                                    \
        } else {                                                                                   \
          y_[row] = (T)(beta == 0.0 ? alpha * sum : alpha * sum + beta * (double)y_[row]);         \
          sum = 0.0;                                                                               \
          row++;                                                                                   \
        }                                                                                          \
      }                                                                                            \
      carry[p].row = row;                                                                          \
      carry[p].sum = sum;                                                                          \
    }                                                                                              \
    for (int64_t p = 0; p < nparts; p++)                                                           \
      if (carry[p].row < nrows)                                                                    \
        y_[carry[p].row] = (T)((double)y_[carry[p].row] + alpha * carry[p].sum);                   \
  } while (0)

coal_status coal_spmv_csr_merge_host(coal_mat A, double alpha, const void *x, double beta,
                                     void *y) {
  int32_t nrows = A->nrows;
  int64_t nnz = A->nnz;
  int64_t total = (int64_t)nrows + nnz;
  int64_t nparts = (total + COAL_MERGE_ITEMS - 1) / COAL_MERGE_ITEMS;
  const int32_t *row_end = A->rowptr + 1;
  merge_carry *carry = NULL;
  COAL_CALL(coal_malloc(A->ctx, sizeof *carry * (size_t)nparts, (void **)&carry));
  if (A->dtype == COAL_F64)
    MERGE_PARTS(double);
  else
    MERGE_PARTS(float);
  coal_free(carry);
  return COAL_SUCCESS;
}
