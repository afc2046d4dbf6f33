/* The CUDA backend's table, coal_backend_cuda (a C file, compiled only when CUDA is: the
 * registry kernels/backend.c then hands it to CUDA contexts). Every entry is a function of
 * kernels/cuda/ (declared in cuda_internal.h for memory, residency and the context life cycle,
 * in the family headers for the rest); the selection rules are plain C in the front ends. */
#include "../amg.h"
#include "../bench.h"
#include "../blas.h"
#include "../spgemm.h"
#include "cuda_internal.h"

const coal_backend_ops coal_backend_cuda = {
    .name = "cuda",
    .ctx_init = coal_ctx_init_cuda,
    .ctx_free = coal_ctx_free_cuda,
    .device_count = coal_device_count_cuda,
    .mem =
        {
            .space = COAL_MEM_DEVICE,
            .alloc = coal_mem_alloc_cuda,
            .release = coal_mem_release_cuda,
            .upload = coal_mem_upload_cuda,
            .download = coal_mem_download_cuda,
            .copy = coal_mem_copy_cuda,
            .sync = coal_mem_sync_cuda,
            .host_register = coal_mem_host_register_cuda,
            .host_unregister = coal_mem_host_unregister_cuda,
            .pool_alloc = coal_cuda_pool_alloc,
            .pool_release = coal_cuda_pool_free,
        },
    .mat =
        {
            .prepare = coal_mat_prepare_cuda,
            .release = coal_mat_release_cuda,
            .download = coal_mat_download_cuda,
            .wrap = coal_mat_wrap_cuda,
            .csr = coal_mat_csr_cuda,
            .values_changed = coal_mat_device_values_changed,
            .asymmetry = coal_mat_asymmetry_cuda,
        },
    .select =
        {
            .spmv = coal_spmv_select_cuda,
            .spmm = coal_spmm_select_cuda,
            .spmv_prepare = coal_spmv_select_prepare_cuda,
            .spmm_prepare = coal_spmm_select_prepare_cuda,
            .spmm_vector_as_spmv = 1,
            .ptap_tile_rows = 2048, /* rule amg-tile-ptap */
        },
    .spmv =
        {
            [COAL_SPMV_CSR_VECTOR] = coal_spmv_csr_vector_cuda,
            [COAL_SPMV_CSR_MERGE] = coal_spmv_csr_merge_cuda,
            [COAL_SPMV_FASTLOAD] = coal_spmv_fastload_cuda,
            [COAL_SPMV_FASTLOAD_T] = coal_spmv_fastload_t_cuda,
        },
    .spmm =
        {
            [COAL_SPMM_SWIFT] = coal_spmm_swift_cuda,
            [COAL_SPMM_ROWSPLIT] = coal_spmm_rowsplit_cuda,
            [COAL_SPMM_MERGE] = coal_spmm_merge_cuda,
        },
    .spgemm =
        {
            .symbolic = coal_spgemm_symbolic_cuda,
            .numeric = coal_spgemm_numeric_cuda,
            .tile_stats = coal_spgemm_stats_cuda,
            .release = coal_spgemm_release_cuda,
            .ptap_symbolic = coal_spgemm_ptap_symbolic_cuda,
            .ptap_numeric = coal_spgemm_ptap_numeric_cuda,
            .ptap_release = coal_spgemm_ptap_release_cuda,
            .transpose = coal_spgemm_transpose_cuda,
            .transpose_values = coal_spgemm_transpose_values_cuda,
        },
    .amg =
        {
            .diagonal = coal_amg_diagonal_cuda,
            .dinv = coal_amg_dinv_cuda,
            .strength_count = coal_amg_strength_count_cuda,
            .strength_fill = coal_amg_strength_fill_cuda,
            .filter = coal_amg_filter_cuda,
            .mis2 = coal_amg_mis2_cuda,
            .aggregate = coal_amg_aggregate_cuda,
            .tentative = coal_amg_tentative_cuda,
            .smooth = coal_amg_smooth_cuda,
            .coarse_solve = coal_amg_coarse_solve_cuda,
            .cheb_step = coal_amg_cheb_step_cuda,
        },
    .blas =
        {
            .gram = coal_blas_gram_cuda,
            .gemm = coal_blas_gemm_cuda,
            .dscale = coal_blas_dscale_cuda,
            .copy_cols = coal_blas_copy_cols_cuda,
            .eig_resid = coal_blas_eig_resid_cuda,
            .cg_dot = coal_blas_cg_dot_cuda,
            .cg_update_xr = coal_blas_cg_update_xr_cuda,
            .cg_update_p = coal_blas_cg_update_p_cuda,
            .jacobi = coal_blas_jacobi_cuda,
            .resid_dd = coal_blas_resid_dd_cuda,
            .bcg_gram = coal_blas_bcg_gram_cuda,
            .bcg_update = coal_blas_bcg_update_cuda,
            .bcg_dir = coal_blas_bcg_dir_cuda,
            .bcg_spmm_gram = coal_blas_bcg_spmm_gram_cuda,
            .fill = coal_blas_fill_cuda,
            .vec_axpbypcz = coal_blas_vec_axpbypcz_cuda,
            .vec_pointwise = coal_blas_vec_pointwise_cuda,
            .vec_dots = coal_blas_vec_dots_cuda,
            .vec_norms = coal_blas_vec_norms_cuda,
        },
    .bench =
        {
            .time = coal_bench_time_cuda,
            .copy_bandwidth = coal_bench_copy_bandwidth_cuda,
            .cusparse_spmv_create = coal_cusparse_spmv_create_cuda,
            .cusparse_spmv_run = coal_cusparse_spmv_run_cuda,
            .cusparse_spmv_destroy = coal_cusparse_spmv_destroy_cuda,
            .cusparse_spmm_create = coal_cusparse_spmm_create_cuda,
            .cusparse_spmm_run = coal_cusparse_spmm_run_cuda,
            .cusparse_spmm_destroy = coal_cusparse_spmm_destroy_cuda,
            .cusparse_spgemm_create = coal_cusparse_spgemm_create_cuda,
            .cusparse_spgemm_run = coal_cusparse_spgemm_run_cuda,
            .cusparse_spgemm_reuse_setup = coal_cusparse_spgemm_reuse_setup_cuda,
            .cusparse_spgemm_reuse_compute = coal_cusparse_spgemm_reuse_compute_cuda,
            .cusparse_spgemm_result = coal_cusparse_spgemm_result_cuda,
            .cusparse_spgemm_destroy = coal_cusparse_spgemm_destroy_cuda,
            .fastload_build_time = coal_fastload_build_time_cuda,
        },
};
