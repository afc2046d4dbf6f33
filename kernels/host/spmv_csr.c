/* Host twin of the CSR vector kernel: a plain row loop. Products are accumulated in double
 * for both dtypes; the result is rounded once to the matrix dtype when stored. */
#include "../spmv.h"

/* Row i's running sum starts at START, adds a_ij x_j in stored (column) order, and y[i] = STORE
 * (an expression of `sum`). */
#define CSR_ROWS(T, START, STORE)                                                                  \
  do {                                                                                             \
    const T *v_ = (const T *)A->values;                                                            \
    const T *x_ = (const T *)x;                                                                    \
    T *y_ = (T *)y;                                                                                \
    for (int32_t i = 0; i < A->nrows; i++) {                                                       \
      double sum = (START);                                                                        \
      for (int32_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)                                    \
        sum += (double)v_[p] * (double)x_[A->colind[p]];                                           \
      y_[i] = (T)(STORE);                                                                          \
    }                                                                                              \
  } while (0)

/* y[i] = alpha*sum + beta*y[i]; beta == 0 does not read y. With alpha = beta = 1 (y += A x) the
 * row's sum starts from y[i] instead: y_i <- ((y_i + a_{i,j1} x_{j1}) + a_{i,j2} x_{j2}) + ...
 * in stored order, every addition rounded as it happens (in double; fp32 rounds once when
 * stored). For fp64 that is the order of PETSc's MatMultAdd_SeqAIJ, so that the PETSc plugin's
 * products on the host backend round as AIJ's do (docs/petsc.md, Arithmetic); the value is the
 * same to rounding. */
#define CSR_AXPBY(T)                                                                               \
  CSR_ROWS(T, 0.0, beta == 0.0 ? alpha * sum : alpha * sum + beta * (double)y_[i])
#define CSR_ONTO_Y(T) CSR_ROWS(T, (double)y_[i], sum)

coal_status coal_spmv_csr_vector_host(coal_mat A, double alpha, const void *x, double beta,
                                      void *y) {
  const int onto_y = alpha == 1.0 && beta == 1.0;
  if (A->dtype == COAL_F64) {
    if (onto_y)
      CSR_ONTO_Y(double);
    else
      CSR_AXPBY(double);
  } else {
    if (onto_y)
      CSR_ONTO_Y(float);
    else
      CSR_AXPBY(float);
  }
  return COAL_SUCCESS;
}
