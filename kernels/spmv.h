/* SpMV entry points, declared once for every backend.
 *
 * All compute y = alpha*A*x + beta*y for one vector; x and y live in the backend's memory
 * (host arrays for _host, device arrays for _cuda) and have A's dtype. beta == 0 overwrites y
 * without reading it. Host twins define correctness; each CUDA kernel is tested against its
 * twin on the same inputs.
 */
#ifndef COAL_KERNELS_SPMV_H
#define COAL_KERNELS_SPMV_H

#include "../src/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* CSR, (sub-)warp per row: host twin is a plain row loop (with alpha = beta = 1 each row's sum
 * starts from y[i], PETSc AIJ's MatMultAdd order). */
coal_status coal_spmv_csr_vector_host(coal_mat A, double alpha, const void *x, double beta,
                                      void *y);
/* CSR merge-path: host twin walks the same merge path in the same partitions. */
coal_status coal_spmv_csr_merge_host(coal_mat A, double alpha, const void *x, double beta, void *y);
/* FastLoad scatter and gather (kernels/fastload.h: coal_mat_fastload). */
coal_status coal_spmv_fastload_host(coal_mat A, double alpha, const void *x, double beta, void *y);
coal_status coal_spmv_fastload_t_host(coal_mat A, double alpha, const void *x, double beta,
                                      void *y);

coal_status coal_spmv_csr_vector_cuda(coal_mat A, double alpha, const void *x, double beta,
                                      void *y);
coal_status coal_spmv_csr_merge_cuda(coal_mat A, double alpha, const void *x, double beta, void *y);
coal_status coal_spmv_fastload_cuda(coal_mat A, double alpha, const void *x, double beta, void *y);
coal_status coal_spmv_fastload_t_cuda(coal_mat A, double alpha, const void *x, double beta,
                                      void *y);

/* Kernel selection for COAL_SPMV_AUTO, each backend's rule (kernels/spmv.c; the table's
 * select.spmv and select.spmv_prepare entries). The CUDA rule reads the longest row, which
 * prepare computes. */
coal_spmv_kernel coal_spmv_select_host(coal_mat A);
coal_spmv_kernel coal_spmv_select_cuda(coal_mat A);
coal_status coal_spmv_select_prepare_cuda(coal_mat A);

/* Merge-path tile: a CTA of COAL_MERGE_THREADS threads consumes COAL_MERGE_ITEMS_PER_THREAD
 * path items per thread, i.e. COAL_MERGE_ITEMS items per part (the host twin uses the same
 * parts, then the same carry-out fix-up). */
#define COAL_MERGE_ITEMS_PER_THREAD 7
#define COAL_MERGE_THREADS          128
#define COAL_MERGE_ITEMS            (COAL_MERGE_ITEMS_PER_THREAD * COAL_MERGE_THREADS)

/* Merge-path partitioning shared by both backends: the merge of row ends (nrows items) and
 * nonzeros (nnz items) is cut into pieces of `items_per_part` items; part p starts at the
 * path coordinate found by this binary search (diagonal d = p * items_per_part). */
void coal_merge_path_search(int64_t diagonal, const int32_t *row_end, int32_t nrows, int64_t nnz,
                            int32_t *row_out, int64_t *nz_out);

#ifdef __cplusplus
}
#endif
#endif
