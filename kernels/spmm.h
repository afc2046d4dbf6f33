/* SpMM entry points, declared once for every backend.
 *
 * All compute Y = alpha*A*X + beta*Y for a dense block X (ncols x k) and Y (nrows x k) in the
 * backend's memory, with A's dtype, either layout and any leading dimension (X and Y may
 * differ in layout). beta == 0 overwrites Y without reading it. The front end (kernels/spmm.c)
 * has checked sizes, dtypes, contexts and aliasing, and k > 0. Host twins define
 * correctness: each follows the order of work of its GPU kernel, keeps sums in double and
 * rounds once per store (or per atomic update) to the matrix dtype; each CUDA kernel is
 * tested against its twin on the same inputs.
 */
#ifndef COAL_KERNELS_SPMM_H
#define COAL_KERNELS_SPMM_H

#include "../src/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Index of entry (i, j) of a block stored with `layout` and leading dimension ld. */
static inline int64_t coal_block_index(coal_layout layout, int64_t ld, int64_t i, int64_t j) {
  return layout == COAL_COL_MAJOR ? i + j * ld : i * ld + j;
}

/* Swift (swift.h): Y = beta*Y first; then per CTA group of regular blocks and column j of X,
 * every element writes val*X[perm[col], j] to its slot, each segment head sums its run and
 * adds alpha*sum to Y[row, j] (one atomic); then every irregular sub-block adds
 * alpha*val*X[col, j] per entry (atomics). */
coal_status coal_spmm_swift_host(coal_mat A, double alpha, coal_bvec X, double beta, coal_bvec Y);
/* Row-split: a warp per row and per tile of 32 columns of Y; the row's nonzeros are loaded 32
 * at a time (a lane each) and broadcast one by one; lane l accumulates column l of the tile.
 * (The CUDA kernel uses groups of W lanes with V columns each, tiles of W*V columns, and for
 * k <= 4 lanes over the row's entries with a reduction; each column's sum is the same sum of
 * the row's products in double.) */
coal_status coal_spmm_rowsplit_host(coal_mat A, double alpha, coal_bvec X, double beta,
                                    coal_bvec Y);
/* Merge-based: the merge path of row ends and nonzeros is cut into parts of COAL_MERGE_ITEMS
 * items (kernels/spmv.h); each part stores the rows it ends and leaves a carry-out (last row,
 * partial sums of its k columns) that a fix-up pass adds to Y. */
coal_status coal_spmm_merge_host(coal_mat A, double alpha, coal_bvec X, double beta, coal_bvec Y);

/* CUDA kernels (kernels/cuda/spmm_*.cu). Row-split and merge-based take row-major blocks as
 * their fast path (coalesced rows of X), Swift column-major ones; every layout pair is correct. */
coal_status coal_spmm_swift_cuda(coal_mat A, double alpha, coal_bvec X, double beta, coal_bvec Y);
coal_status coal_spmm_rowsplit_cuda(coal_mat A, double alpha, coal_bvec X, double beta,
                                    coal_bvec Y);
coal_status coal_spmm_merge_cuda(coal_mat A, double alpha, coal_bvec X, double beta, coal_bvec Y);

/* Kernel selection for COAL_SPMM_AUTO, each backend's rule (kernels/spmm.c; the table's
 * select.spmm and select.spmm_prepare entries). The CUDA rule reads the longest row and, on
 * large matrices, the grid-line stride, which prepare computes. */
coal_spmm_kernel coal_spmm_select_host(coal_mat A, int64_t k, coal_layout layout);
coal_spmm_kernel coal_spmm_select_cuda(coal_mat A, int64_t k, coal_layout layout);
coal_status coal_spmm_select_prepare_cuda(coal_mat A);

#ifdef __cplusplus
}
#endif
#endif
