/* mat.asymmetry on the host (the twin of kernels/cuda/mat_symmetry.cu): the first stored
 * off-diagonal entry a_ij, in row order, whose mirror a_ji is not stored or differs by more than
 * tol * max(|a_ij|, |a_ji|). The mirror is found by binary search in row j (columns sorted),
 * so the check allocates nothing: nnz searches, each reading one short row. */
#include "../../src/backend.h"

#include <math.h>

static double value_at(const void *v, coal_dtype dt, int64_t p) {
  return dt == COAL_F64 ? ((const double *)v)[p] : (double)((const float *)v)[p];
}

/* Position of column c in row r of the CSR, or -1. */
static int64_t find(const int32_t *rp, const int32_t *ci, int32_t r, int32_t c) {
  int32_t lo = rp[r], hi = rp[r + 1];
  while (lo < hi) {
    const int32_t mid = lo + (hi - lo) / 2;
    if (ci[mid] < c)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < rp[r + 1] && ci[lo] == c ? lo : -1;
}

coal_status coal_mat_asymmetry_host(coal_mat A, double tol, int64_t *row, int64_t *col) {
  *row = *col = -1;
  COAL_CALL(coal_mat_host(A));
  const int32_t *rp = A->rowptr, *ci = A->colind;
  for (int32_t i = 0; i < A->nrows; i++)
    for (int32_t p = rp[i]; p < rp[i + 1]; p++) {
      const int32_t j = ci[p];
      if (j == i) continue;
      const int64_t q = j < A->nrows ? find(rp, ci, j, i) : -1;
      const double x = value_at(A->values, A->dtype, p);
      const double y = q >= 0 ? value_at(A->values, A->dtype, q) : NAN;
      if (!(fabs(x - y) <= tol * fmax(fabs(x), fabs(y)))) {
        *row = i, *col = j;
        return COAL_SUCCESS;
      }
    }
  return COAL_SUCCESS;
}
