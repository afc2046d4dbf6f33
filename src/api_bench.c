/* Public read access that the consumers on top (the CLI's reports and benchmarks) need besides
 * the object functions: a matrix's host CSR in place and the lane order of its FastLoad
 * formats and its FastLoad height (coalesce.h). The benchmark timing and the cuSPARSE references of
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

coal_status coal_mat_get_fastload_height(coal_mat A, int *height) {
  if (!A) return COAL_ERR_ARG;
  COAL_CHECK(A->ctx, height, COAL_ERR_ARG, "NULL output");
  *height = A->fastload_height;
  return COAL_SUCCESS;
}

coal_status coal_mat_fastload_order(coal_mat A, int transposed, const int32_t **perm) {
  if (!A) return COAL_ERR_ARG;
  COAL_CHECK(A->ctx, perm, COAL_ERR_ARG, "NULL output");
  const coal_fastload *f = NULL;
  COAL_CALL(coal_mat_fastload(A, transposed ? 1 : 0, &f));
  *perm = f->perm;
  return COAL_SUCCESS;
}
