/* Host twin of the CSR vector kernel: a plain row loop. Products are accumulated in double
 * for both dtypes; the result is rounded once to the matrix dtype when stored. */
#include "../../src/backend.h"

/* y[i] = alpha*sum + beta*y[i]; beta == 0 does not read y. */
#define CSR_ROWS(T)                                                                                \
  do {                                                                                             \
    const T *v_ = (const T *)A->values;                                                            \
    const T *x_ = (const T *)x;                                                                    \
    T *y_ = (T *)y;                                                                                \
    for (int32_t i = 0; i < A->nrows; i++) {                                                       \
      double sum = 0.0;                                                                            \
      for (int32_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)                                    \
        sum += (double)v_[p] * (double)x_[A->colind[p]];                                           \
      y_[i] = (T)(beta == 0.0 ? alpha * sum : alpha * sum + beta * (double)y_[i]);                 \
    }                                                                                              \
  } while (0)

coal_status coal_spmv_csr_vector_host(coal_mat A, double alpha, const void *x, double beta,
                                      void *y) {
  if (A->dtype == COAL_F64)
    CSR_ROWS(double);
  else
    CSR_ROWS(float);
  return COAL_SUCCESS;
}
