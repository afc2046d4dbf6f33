/* Public read access that the consumers on top (the CLI's reports and benchmarks) need besides
 * the object functions: a matrix's host CSR in place (coalesce.h; the FastLoad height and lane
 * order: kernels/spmv.c). The benchmark timing and the cuSPARSE references of
 * coalesce.h's "benchmark support" section are implemented by the backends. */
#include "internal.h"

coal_status coal_mat_host_csr(coal_mat A, const int32_t **rowptr, const int32_t **colind,
                              const void **values) {
  if (!A) return COAL_ERR_ARG;
  COAL_CALL(coal_mat_host(A));
  if (rowptr) *rowptr = A->rowptr;
  if (colind) *colind = A->colind;
  if (values) *values = A->values;
  return COAL_SUCCESS;
}
