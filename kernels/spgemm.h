/* Sparse x sparse products (TileSpGEMM, [TILESPGEMM]), declared once for every backend.
 *
 * A product object (struct coal_spgemm_s, public handle coal_spgemm) holds what the numeric
 * step needs, so that a numeric-only recomputation (values of A or B changed, structure not)
 * allocates nothing: the tile formats of A and B, the tile structure of C and the map from
 * C's tiles to C's CSR. The front end (kernels/spgemm.c) checks arguments and drives the spgemm
 * sub-table of the context's backend table (struct coal_spgemm_ops, src/backend.h).
 *
 * The three steps of C = A*B (A, B and C in the tile format of kernels/tile.h):
 *  1. tile layout of C: the symbolic product of the tile layouts, C' = A' B' (a tile of C is
 *     listed when some A_IK and B_KJ are both non-empty). Tile columns ascend per tile row.
 *  2. per tile C_IJ: the pairs (A_IK, B_KJ) by intersecting the tile columns of tile row I of A
 *     with the tile rows of tile column J of B (binary search of the shorter list in the
 *     longer; pairs come out in ascending K), and the row masks of C_IJ:
 *        mask_C[r] = OR over pairs, over the nonzeros (r, k) of A_IK, of mask_B_KJ[k];
 *     their popcounts give the tile's nonzero count and 8-bit row offsets, and the offsets of
 *     all tiles (one scan) size C, which is allocated once.
 *  3. numeric: per tile of C, c_rc = sum over pairs, over the nonzeros (r, k) of A_IK with
 *     (k, c) a nonzero of B_KJ, of a_rk * b_kc, accumulated in double and rounded once to the
 *     dtype. A tile with more than dense_threshold nonzeros uses a dense 16 x 16 accumulator
 *     (B_KJ expanded to a dense tile, one cell per product); a sparser tile a sparse one (each
 *     nonzero of C found from C's masks, each b_kc found by a popcount in B's row mask). Both
 *     add the products of an entry in the same order, ascending k over the whole row of A,
 *     which is also Gustavson's order: the host tiled product, the host Gustavson product and
 *     the CUDA product (no fused multiply-add) give the same bits. Values go straight to C's
 *     CSR: entry (r, c) of tile t is C.values[pos[16t + r] + popcount(mask_C[r] & ((1<<c)-1))].
 *
 * The structure is symbolic: an entry is kept when a product a_ik * b_kj exists, even if the
 * sum cancels to zero (as cuSPARSE and Gustavson do).
 */
#ifndef COAL_KERNELS_SPGEMM_H
#define COAL_KERNELS_SPGEMM_H

#include "tile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Tiles of C with more nonzeros than this use the dense accumulator ([TILESPGEMM]: 192, i.e. 75% of
 * the 256 cells). Any value in 0..256 gives the same result; only speed differs. */
#define COAL_SPGEMM_DENSE_NNZ 192

/* Algorithms (coal_spgemm_algo, coalesce.h). TILE: TileSpGEMM (the three steps above; host
 * twin kernels/host/spgemm_tile.c). ROWS: row-by-row Gustavson with hash accumulators (CUDA:
 * kernels/cuda/spgemm_rows.cu, C stays on the GPU; host: Gustavson,
 * kernels/host/spgemm_rows.c). AUTO picks ROWS on both backends: measured faster on every
 * matrix of `coalesce bench spgemm` (docs/spgemm.md). */

struct coal_spgemm_s {
  coal_ctx ctx;
  coal_product_type type;
  coal_spgemm_algo algo; /* TILE or ROWS (resolved at creation) */
  coal_mat A, B, C;      /* AB: the caller's A and B, the result C (owned by the caller) */
  int dense_threshold;   /* COAL_SPGEMM_DENSE_NNZ unless tuned */
  coal_spgemm_stats stats;
  /* AB, host data (the CUDA backend keeps its own copies in dev) */
  uint64_t a_state, b_state; /* A->state, B->state when the tile values were taken */
  coal_tile *ta, *tb;        /* tile formats of A and B (csr_pos set; tb with its CSC index;
                                tb == ta when B == A) */
  coal_tile *tc;             /* tile structure of C (no idx, no values) */
  int32_t *c_pos;            /* [16 * ntiles(C)] CSR index of local row r of tile t */
  void *dev;                 /* backend state (CUDA: struct coal_spgemm_cuda) */
  /* B is the result of this product (PtAP: the outer product's B is the inner A*P), whose
   * current values may live on the backend only (numeric with download = 0); NULL otherwise.
   * The CUDA backend then refreshes B's tile values from that product's device values. */
  struct coal_spgemm_s *b_producer;
  /* PTAP on the GPU with ROWS: fused (one product, kernels/cuda/spgemm_ptap.cu, state in dev);
   * otherwise C = Pt * (A P) with Pt = P^T held explicitly */
  int fused;
  struct coal_spgemm_s *inner, *outer; /* A*P and Pt*(AP) */
  coal_mat Pt, AP;                     /* owned by the product */
  int32_t *pt_src;                     /* [nnz(P)] entry of P that entry q of Pt holds */
  uint64_t p_state;                    /* P->state when Pt's values were taken */
};

/* Pt = P^T made where P's current copy lives: by the backend's transpose where it has one (the
 * GPU: Pt device-only, no host round trip), else coal_mat_transpose on the host CSR. */
coal_status coal_mat_transpose_backend(coal_mat P, coal_mat *Pt);

/* The entries of the table's spgemm sub-table (struct coal_spgemm_ops, src/backend.h): each
 * backend's instance serves both algorithms and dispatches on p->algo (host:
 * kernels/host/spgemm_tile.c, TILE there and ROWS in spgemm_rows.c; CUDA:
 * kernels/cuda/spgemm_tile.cu, TILE there and ROWS in spgemm_rows.cu). */
coal_status coal_spgemm_symbolic_host(coal_spgemm p);
coal_status coal_spgemm_numeric_host(coal_spgemm p, int download);
coal_status coal_spgemm_stats_host(coal_spgemm p);
void coal_spgemm_release_host(coal_spgemm p);
coal_status coal_spgemm_symbolic_cuda(coal_spgemm p);
coal_status coal_spgemm_numeric_cuda(coal_spgemm p, int download);
coal_status coal_spgemm_stats_cuda(coal_spgemm p);
void coal_spgemm_release_cuda(coal_spgemm p);

/* Sets the dense-accumulator threshold of p (and of both products of a PtAP object), 0..256:
 * for measurements and tests; the result does not depend on it. */
coal_status coal_spgemm_set_dense_threshold(coal_spgemm p, int threshold);

/* ---- host twin (kernels/host/spgemm_tile.c) ----------------------------------------------- */
/* Step 1: allocates *C (coal_tile_alloc_layout) with the tile layout of A*B. B needs no CSC
 * index here. */
coal_status coal_spgemm_step1_host(coal_ctx ctx, const coal_tile *A, const coal_tile *B,
                                   coal_tile **C);
/* Step 2: C's masks, row offsets and tile_nnz (offsets, C->nnz set). B needs its CSC index.
 * COAL_ERR_OVERFLOW beyond 2^31-1 nonzeros. */
coal_status coal_spgemm_step2_host(coal_ctx ctx, const coal_tile *A, const coal_tile *B,
                                   coal_tile *C);
/* Step 3: C's values in CSR order into cval (pos as coal_tile_csr_structure gives it). */
coal_status coal_spgemm_step3_host(coal_ctx ctx, const coal_tile *A, const coal_tile *B,
                                   const coal_tile *C, const int32_t *pos, void *cval,
                                   int dense_threshold);
/* Statistics of a tile structure of C (steps 1 and 2 done): st->tile_pairs (pairs (A_IK,
 * B_KJ) over all tiles of C), st->dense_tiles_c (tiles with more than dense_threshold
 * nonzeros) and st->empty_tiles_c. */
coal_status coal_spgemm_tile_stats_host(coal_ctx ctx, const coal_tile *A, const coal_tile *B,
                                        const coal_tile *C, int dense_threshold,
                                        coal_spgemm_stats *st);

/* Gustavson's row-by-row product C = A*B on the host CSR (kernels/host/spgemm_rows.c):
 * the reference of the tests and a fallback. Structure symbolic, columns sorted; each entry
 * summed in double in ascending k and rounded once. A and B of one dtype, A->ncols ==
 * B->nrows (not checked here). C is a host-CSR matrix on A's context. */
coal_status coal_spgemm_rows_product_host(coal_mat A, coal_mat B, coal_mat *C);
/* Intermediate products sum_i sum_{k in row i of A} nnz(row k of B) (flops / 2). */
int64_t coal_spgemm_products(coal_mat A, coal_mat B);

/* ---- ROWS algorithm ------------------------------------------------------------------------- *
 * Host (kernels/host/spgemm_rows.c) and CUDA (kernels/cuda/spgemm_rows.cu) versions of
 * the spgemm entries, which dispatch on p->algo. CUDA: C is a device-only matrix. */
coal_status coal_spgemm_rows_symbolic_host(coal_spgemm p);
coal_status coal_spgemm_rows_numeric_host(coal_spgemm p);
void coal_spgemm_rows_release_host(coal_spgemm p);
coal_status coal_spgemm_rows_symbolic_cuda(coal_spgemm p);
coal_status coal_spgemm_rows_numeric_cuda(coal_spgemm p);
void coal_spgemm_rows_release_cuda(coal_spgemm p);
/* Fused P^T A P on the GPU (kernels/cuda/spgemm_ptap.cu; the CUDA instance's spgemm.ptap_*
 * entries), p->A = A, p->B = P: the symbolic
 * step creates p->C (device-only) and the state in p->dev and sets *fused, or, for shapes it
 * does not handle (rows of C longer than 4096; more than 384000 columns when a row has more
 * than 1024 products), returns COAL_SUCCESS with *fused = 0 and nothing made. The numeric step
 * writes C's columns and values; release frees p->dev. */
coal_status coal_spgemm_ptap_symbolic_cuda(coal_spgemm p, int *fused);
coal_status coal_spgemm_ptap_numeric_cuda(coal_spgemm p);
void coal_spgemm_ptap_release_cuda(coal_spgemm p);
/* P^T of a CUDA-context matrix made on the GPU (cuSPARSE csr2csc), a device-only matrix, and
 * its values recomputed after P's values changed (structure kept): the CUDA instance's
 * spgemm.transpose and spgemm.transpose_values. */
coal_status coal_spgemm_transpose_cuda(coal_mat P, coal_mat *Pt);
coal_status coal_spgemm_transpose_values_cuda(coal_mat P, coal_mat Pt);

/* ---- CUDA test hooks (kernels/cuda/spgemm_tile.cu, tile_build.cu; CUDA build only) -------- */
/* Downloads the device tile structure of C of an AB product made on a CUDA context (steps 1
 * and 2: tile_ptr, tile_col, tile_nnz, row_ptr, mask; no idx, no values) into a new host
 * coal_tile, and the CSR map pos (coal_malloc'd, 16 * ntiles entries) when pos != NULL. */
coal_status coal_spgemm_download_cuda(coal_spgemm p, coal_tile **tc, int32_t **pos);
/* Tile format of A (CUDA context) built on the GPU from A's device CSR, downloaded (val, idx,
 * csr_pos and the CSC index included: compare with coal_tile_build_host + coal_tile_build_csc),
 * and the CSR converted back from those tiles on the GPU, downloaded (coal_malloc'd). */
coal_status coal_tile_roundtrip_cuda(coal_mat A, coal_tile **t, int32_t **rowptr, int32_t **colind,
                                     void **values);

/* The cuSPARSE SpGEMM reference of the benchmark (coal_cusparse_spgemm_*, declared in
 * coalesce.h, section "benchmark support") is kernels/cuda/spgemm_cusparse.cu. */

#ifdef __cplusplus
}
#endif
#endif
