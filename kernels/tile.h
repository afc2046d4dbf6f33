/* Sparse tile format of TileSpGEMM ([TILESPGEMM], section 3.2): host code shared by both backends.
 *
 * The matrix is cut into 16 x 16 tiles; only non-empty tiles are stored (C of a product may
 * hold empty tiles, see below). Two levels:
 *
 *  - tile layout, CSR over tiles: tile row I (rows 16I .. 16I+15) holds the tiles
 *    [tile_ptr[I], tile_ptr[I+1]) with tile columns tile_col[], ascending. Tiles are numbered
 *    in this row-major order. tile_nnz[t] is the first nonzero of tile t (tile_nnz[ntiles] =
 *    nnz): the nonzeros of tile t are [tile_nnz[t], tile_nnz[t+1]), at most 256.
 *  - inside a tile, CSR with 8-bit pointers: the nonzeros are stored row by row, columns
 *    ascending; idx[e] = (local row << 4) | local column (both 0..15, one byte). row_ptr[16t+r]
 *    is the offset of local row r from tile_nnz[t]: 16 entries per tile, the 17th (the tile's
 *    nonzero count) being tile_nnz[t+1] - tile_nnz[t]; an offset is at most 240, so it fits a
 *    byte even when the tile is full (256 nonzeros). mask[16t+r] has bit c set when (r, c) is a
 *    nonzero of tile t: the symbolic step ORs B's row masks instead of touching B's nonzeros.
 *
 * Optional parts: val (values, the matrix dtype; NULL for a structure-only tile matrix such as
 * C before its numeric step), csr_pos[e] (the CSR index of nonzero e in the source matrix: the
 * tile -> CSR map, used to refresh values without redoing the conversion), and the tile CSC
 * index (csc_ptr, csc_row, csc_id: the tiles of each tile column, tile rows ascending, with
 * their tile numbers), which the product reads for B (set intersection of a tile row of A with
 * a tile column of B).
 *
 * Empty tiles: a tile listed in the layout may hold no nonzero (tile_nnz[t+1] == tile_nnz[t],
 * masks 0). Conversion from CSR never makes one; the tile layout of a product can (a pair of
 * tiles A_ik, B_kj can be non-empty while no column of A_ik meets a non-empty row of B_kj),
 * as in the paper, which keeps them. Conversion to CSR skips them. */
#ifndef COAL_TILE_H
#define COAL_TILE_H

#include "../src/internal.h"

#ifdef __cplusplus
extern "C" {
#endif

#define COAL_TILE_DIM 16 /* tile size: 8-bit local indices and pointers, 16-bit row masks */

typedef struct coal_tile {
  int32_t nrows, ncols; /* of the matrix */
  int32_t tm, tn;       /* tile rows and tile columns: ceil(nrows / 16), ceil(ncols / 16) */
  int32_t ntiles;
  int64_t nnz;
  coal_dtype dtype;
  int32_t *tile_ptr; /* [tm + 1] */
  int32_t *tile_col; /* [ntiles] ascending within a tile row */
  int32_t *tile_nnz; /* [ntiles + 1] first nonzero of each tile */
  uint8_t *row_ptr;  /* [16 * ntiles] offset of each local row within its tile */
  uint16_t *mask;    /* [16 * ntiles] bit c of mask[16t + r]: (r, c) is a nonzero of tile t */
  uint8_t *idx;      /* [nnz] (local row << 4) | local column; NULL for structure only */
  void *val;         /* [nnz] values in tile order, or NULL */
  int32_t *csr_pos;  /* [nnz] CSR index of each nonzero in the source matrix, or NULL */
  int32_t *csc_ptr;  /* [tn + 1] tile CSC index, or NULL (coal_tile_build_csc) */
  int32_t *csc_row;  /* [ntiles] tile row, ascending within a tile column */
  int32_t *csc_id;   /* [ntiles] tile number of that tile */
} coal_tile;

/* Number of tiles covering n rows or columns. */
static inline int32_t coal_tile_count(int32_t n) {
  return (int32_t)(((int64_t)n + COAL_TILE_DIM - 1) / COAL_TILE_DIM);
}

/* Builds the tile format of a CSR matrix (sorted, unique columns per row) in O(nnz + tiles)
 * plus one sort of the tile columns of each tile row. val may be NULL (structure only: then
 * val of the result is NULL too); with_pos != 0 fills csr_pos. */
coal_status coal_tile_from_csr(coal_ctx ctx, int32_t nrows, int32_t ncols, const int32_t *rowptr,
                               const int32_t *colind, const void *val, coal_dtype dtype,
                               int with_pos, coal_tile **out);
/* Tile format of a matrix (values and csr_pos included). */
coal_status coal_tile_build_host(coal_mat A, coal_tile **out);
/* Back to CSR: rowptr[nrows + 1], colind[nnz] and, when t->val is set, values[nnz] (else
 * *values = NULL), allocated with coal_malloc (ready for coal_mat_wrap_csr). Needs idx. */
coal_status coal_tile_to_csr_host(coal_ctx ctx, const coal_tile *t, int32_t **rowptr,
                                  int32_t **colind, void **values);
/* CSR structure from the tile layout and masks alone (no idx needed): rowptr[nrows + 1],
 * colind[nnz] (coal_malloc'd), and pos[16t + r] = CSR index of the first entry of local row r
 * of tile t (the entry (r, c) of tile t then sits at pos[16t + r] + popcount(mask[16t + r] &
 * ((1 << c) - 1))). pos may be NULL. Fails with COAL_ERR_OVERFLOW beyond 2^31-1 nonzeros. */
coal_status coal_tile_csr_structure(coal_ctx ctx, const coal_tile *t, int32_t **rowptr,
                                    int32_t **colind, int32_t *pos);
/* Builds the tile CSC index (csc_ptr, csc_row, csc_id) by a counting sort over tile columns. */
coal_status coal_tile_build_csc(coal_ctx ctx, coal_tile *t);
/* val[e] = csr_values[csr_pos[e]]: the tile values after the source matrix's values changed
 * (same structure). Needs val and csr_pos. */
void coal_tile_refresh_values(coal_tile *t, const void *csr_values);
/* Allocates the layout arrays of a tile matrix with ntiles tiles and no nonzero arrays:
 * tile_ptr (zeroed), tile_col, tile_nnz, row_ptr, mask (zeroed). */
coal_status coal_tile_alloc_layout(coal_ctx ctx, int32_t nrows, int32_t ncols, int32_t ntiles,
                                   coal_dtype dtype, coal_tile **out);
void coal_tile_free(coal_tile *t);
/* Bytes held by the arrays of t (0 for NULL). */
size_t coal_tile_bytes(const coal_tile *t);

#ifdef __cplusplus
}
#endif
#endif
