/* Row-wise hash SpGEMM on the GPU (kernels/cuda/spgemm_rows.cu): device state of a product. */
#ifndef COAL_CUDA_SPGEMM_ROWS_CUH
#define COAL_CUDA_SPGEMM_ROWS_CUH

#include "../spgemm.h"
#include "cuda_internal.h"
#include "spgemm_mem.cuh"

namespace coal_spgemm_rows_dev {

/* struct coal_spgemm_s::dev of a product with algo COAL_SPGEMM_ROWS. */
struct Rows {
  /* operands' device CSR (refreshed before each pass) */
  const int32_t *arp, *aci, *brp, *bci;
  const void *av, *bv;
  int lanes;             /* lanes per row group of the small tables: 4..32 */
  int first;             /* the next numeric is the first: it also writes C's columns */
  int32_t num_count[14]; /* rows per numeric bin (sorted rows of 8 .. 128 products,
                          * hash tables of 16..2048 slots, then long rows) */
  int32_t *num_rows;     /* rows in bin order, NULL when every row is in one short bin */
  size_t num_rows_bytes;
  int32_t ncols;     /* columns of B (and C) */
  int32_t nwords;    /* words of a long-row bitmap: ceil(ncols(B) / 32) */
  unsigned *bitmaps; /* [kLongSlots x nwords], zero between uses */
  double *scratch;   /* [kLongSlots x scratch_len] long-row accumulators */
  int32_t scratch_len;
  int32_t *cta_cnt, *cta_off; /* binning: per CTA and bin counts and their scan */
  int32_t *h_off;             /* pinned: bin offsets read by the host */
  coal_spgemm_dev::Held mem;  /* device bytes held now / at most (stats.temp_bytes), scan space */
};

} // namespace coal_spgemm_rows_dev

#endif
