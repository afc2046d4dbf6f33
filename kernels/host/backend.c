/* The host backend's table, coal_backend_host: memory is plain malloc, matrices are always
 * current. Matrices of a host context are always host-resident (their CSR arrays exist and are
 * current; only a CUDA context can hold a device-only matrix), so the host kernels read
 * A->rowptr, A->colind and A->values directly, without coal_mat_host. The kernels, solver steps
 * and products the table points at are the host twins of kernels/host/ (declared in the family
 * headers). */
#include "../amg.h"
#include "../bench.h"
#include "../blas.h"
#include "../spgemm.h"
#include "../spmm.h"
#include "../spmv.h"

#include <string.h>

static coal_status host_alloc(coal_ctx ctx, size_t bytes, void **p) {
  return coal_calloc(ctx, bytes, p);
}
static void host_release(coal_ctx ctx, void *p) {
  (void)ctx;
  coal_free(p);
}
static coal_status host_copy(coal_ctx ctx, void *dst, const void *src, size_t bytes) {
  (void)ctx;
  if (bytes) memmove(dst, src, bytes);
  return COAL_SUCCESS;
}
static coal_status host_sync(coal_ctx ctx) {
  (void)ctx;
  return COAL_SUCCESS;
}
static coal_status host_mat_prepare(coal_mat A) {
  (void)A;
  return COAL_SUCCESS;
}
static void host_mat_release(coal_mat A) { (void)A; }
/* The backend's copy is the host CSR itself: copies it into arrays other than A's own. */
static coal_status host_mat_download(coal_mat A, int32_t *rowptr, int32_t *colind, void *values) {
  COAL_CHECK(A->ctx, A->rowptr, COAL_ERR_STATE, "host matrix without host arrays");
  if (rowptr && rowptr != A->rowptr)
    memcpy(rowptr, A->rowptr, sizeof(int32_t) * ((size_t)A->nrows + 1));
  if (colind && colind != A->colind && A->nnz)
    memcpy(colind, A->colind, sizeof(int32_t) * (size_t)A->nnz);
  if (values && values != A->values && A->nnz)
    memcpy(values, A->values, coal_dtype_size(A->dtype) * (size_t)A->nnz);
  return COAL_SUCCESS;
}
/* mat.wrap: the arrays (from host_pool_alloc, coal_malloc) become the host CSR. */
static coal_status host_mat_wrap(coal_ctx ctx, int32_t nrows, int32_t ncols, int64_t nnz,
                                 int32_t *rowptr, int32_t *colind, double *values, coal_mat *A) {
  (void)nnz; /* rowptr[nrows] */
  return coal_mat_wrap_csr(ctx, nrows, ncols, rowptr, colind, values, COAL_F64, A);
}
/* mat.csr: the host CSR is the backend's. */
static coal_status host_mat_csr(coal_mat A, const int32_t **rowptr, const int32_t **colind,
                                void **values) {
  COAL_CHECK(A->ctx, A->rowptr, COAL_ERR_STATE, "host matrix without host arrays");
  if (rowptr) *rowptr = A->rowptr;
  if (colind) *colind = A->colind;
  if (values) *values = A->values;
  return COAL_SUCCESS;
}
/* mem.pool_alloc: plain malloc (contents undefined, as on a device pool). */
static coal_status host_pool_alloc(coal_ctx ctx, size_t bytes, void **p) {
  return coal_malloc(ctx, bytes, p);
}

const coal_backend_ops coal_backend_host = {
    .name = "host",
    .ctx_init = NULL, /* nothing beyond the context itself */
    .ctx_free = NULL,
    .device_count = NULL,
    .mem =
        {
            .space = COAL_MEM_HOST,
            .alloc = host_alloc,
            .release = host_release,
            .upload = host_copy,
            .download = host_copy,
            .copy = host_copy,
            .sync = host_sync,
            .host_register = NULL, /* host memory needs no page-locking */
            .host_unregister = NULL,
            .pool_alloc = host_pool_alloc,
            .pool_release = host_release,
        },
    .mat =
        {
            .prepare = host_mat_prepare,
            .release = host_mat_release,
            .download = host_mat_download,
            .wrap = host_mat_wrap,
            .csr = host_mat_csr,
            .values_changed = coal_mat_invalidate,
            .asymmetry = coal_mat_asymmetry_host,
        },
    .select =
        {
            .spmv = coal_spmv_select_host,
            .spmm = coal_spmm_select_host,
            .spmv_prepare = NULL, /* the host rules read no statistics */
            .spmm_prepare = NULL,
            .spmm_vector_as_spmv = 0,
            .ptap_tile_rows = 0, /* the host's tiles are slower than its row products */
        },
    .spmv =
        {
            [COAL_SPMV_CSR_VECTOR] = coal_spmv_csr_vector_host,
            [COAL_SPMV_CSR_MERGE] = coal_spmv_csr_merge_host,
            [COAL_SPMV_FASTLOAD] = coal_spmv_fastload_host,
            [COAL_SPMV_FASTLOAD_T] = coal_spmv_fastload_t_host,
        },
    .spmm =
        {
            [COAL_SPMM_SWIFT] = coal_spmm_swift_host,
            [COAL_SPMM_ROWSPLIT] = coal_spmm_rowsplit_host,
            [COAL_SPMM_MERGE] = coal_spmm_merge_host,
        },
    .spgemm =
        {
            .symbolic = coal_spgemm_symbolic_host,
            .numeric = coal_spgemm_numeric_host,
            .tile_stats = coal_spgemm_stats_host,
            .release = coal_spgemm_release_host,
            .ptap_symbolic = NULL, /* PtAP as P^T (made here, with a map) and two products */
            .ptap_numeric = NULL,
            .ptap_release = NULL,
            .transpose = NULL,
            .transpose_values = NULL,
        },
    .amg =
        {
            .diagonal = coal_amg_diagonal_host,
            .dinv = coal_amg_dinv_host,
            .strength_count = coal_amg_strength_count_host,
            .strength_fill = coal_amg_strength_fill_host,
            .filter = coal_amg_filter_host,
            .mis2 = coal_amg_mis2_host,
            .aggregate = coal_amg_aggregate_host,
            .tentative = coal_amg_tentative_host,
            .smooth = coal_amg_smooth_host,
            .coarse_solve = coal_amg_coarse_solve_host,
            .cheb_step = coal_amg_cheb_step_host,
        },
    .blas =
        {
            .gram = coal_blas_gram_host,
            .gemm = coal_blas_gemm_host,
            .dscale = coal_blas_dscale_host,
            .copy_cols = coal_blas_copy_cols_host,
            .eig_resid = coal_blas_eig_resid_host,
            .cg_dot = coal_blas_cg_dot_host,
            .cg_update_xr = coal_blas_cg_update_xr_host,
            .cg_update_p = coal_blas_cg_update_p_host,
            .jacobi = coal_blas_jacobi_host,
            .resid_dd = coal_blas_resid_dd_host,
            .bcg_gram = coal_blas_bcg_gram_host,
            .bcg_update = coal_blas_bcg_update_host,
            .bcg_dir = coal_blas_bcg_dir_host,
            .bcg_spmm_gram = NULL, /* the solver calls coal_spmm and bcg_gram */
            .fill = coal_blas_fill_host,
            .vec_axpbypcz = coal_blas_vec_axpbypcz_host,
            .vec_pointwise = coal_blas_vec_pointwise_host,
            .vec_dots = coal_blas_vec_dots_host,
            .vec_norms = coal_blas_vec_norms_host,
        },
    .bench =
        {
            .time = coal_bench_time_host, /* no device: the references and bandwidth are NULL */
        },
};
