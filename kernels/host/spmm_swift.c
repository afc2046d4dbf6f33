/* Host twin of the Swift SpMM kernels ([SWIFT], Algorithms 2 and 3) on the format of
 * kernels/swift.h. The GPU first scales Y (Y = beta*Y, or 0 when beta == 0), then runs:
 *  - regular part: a CTA per group of 8 blocks (a warp per block, a lane per sorted column)
 *    and tile of columns of X; for every column j each element writes val * X[perm[col], j]
 *    to shared[reg_pos[e]], the CTA synchronises, each segment head (slot_seg > 0) sums its
 *    run of slots and adds alpha*sum to Y[slot_row, j] with one atomic;
 *  - irregular part: a warp per sub-block, a lane per entry, one atomic add of
 *    alpha*val*X[col, j] to Y[row, j] per column j.
 * The twin runs the groups, columns, slots and sub-blocks in that order. Products and
 * segment sums are kept in double; each update of Y (an atomic on the GPU) is rounded to the
 * matrix dtype. */
#include "../spmm.h"
#include "../swift.h"

#define SW_DEFINE(T, S)                                                                            \
  static void swift_##S(const coal_swift *f, double alpha, coal_bvec X, double beta, coal_bvec Y,  \
                        double *shared) {                                                          \
    const T *x_ = (const T *)X->data;                                                              \
    T *y_ = (T *)Y->data;                                                                          \
    int64_t k = X->k;                                                                              \
    for (int64_t j = 0; j < k; j++) /* Y = beta*Y */                                               \
      for (int32_t i = 0; i < f->nrows; i++) {                                                     \
        int64_t q = coal_block_index(Y->layout, Y->ld, i, j);                                      \
        y_[q] = (T)(beta == 0.0 ? 0.0 : beta * (double)y_[q]);                                     \
      }                                                                                            \
    const T *rv = (const T *)f->reg_val;                                                           \
    for (int32_t c = 0; c < f->ncta; c++) {                                                        \
      int32_t b0 = c * COAL_SWIFT_CTA_BLOCKS;                                                      \
      int32_t b1 =                                                                                 \
          b0 + COAL_SWIFT_CTA_BLOCKS < f->nblocks ? b0 + COAL_SWIFT_CTA_BLOCKS : f->nblocks;       \
      int32_t base = f->blk_ptr[b0], nslots = f->blk_ptr[b1] - base;                               \
      for (int64_t j = 0; j < k; j++) {                                                            \
        for (int32_t b = b0; b < b1; b++) /* warp b - b0, lane l, rounds r */                      \
          for (int32_t e = f->blk_ptr[b]; e < f->blk_ptr[b + 1]; e++) {                            \
            int32_t s = f->blk_col[b] + (e - f->blk_ptr[b]) % COAL_SWIFT_WARP;                     \
            int32_t xr = f->identity_perm ? s : f->perm[s];                                        \
            shared[f->reg_pos[e]] =                                                                \
                (double)rv[e] * (double)x_[coal_block_index(X->layout, X->ld, xr, j)];             \
          }                                                                                        \
        for (int32_t t = 0; t < nslots; t++) { /* __syncthreads, then segment heads */             \
          int32_t len = f->slot_seg[base + t];                                                     \
          if (!len) continue;                                                                      \
          double sum = 0.0;                                                                        \
          for (int32_t u = t; u < t + len; u++) sum += shared[u];                                  \
          int64_t q = coal_block_index(Y->layout, Y->ld, f->slot_row[base + t], j);                \
          y_[q] = (T)((double)y_[q] + alpha * sum);                                                \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
    const T *iv = (const T *)f->irr_val;                                                           \
    for (int32_t b = 0; b < f->irr_nblk; b++) {                                                    \
      int32_t col = f->irr_blk_col[b];                                                             \
      for (int32_t e = f->irr_blk_start[b]; e < f->irr_blk_stop[b]; e++) { /* lanes */             \
        double a = (double)iv[e];                                                                  \
        int32_t row = f->irr_row[e];                                                               \
        for (int64_t j = 0; j < k; j++) {                                                          \
          int64_t q = coal_block_index(Y->layout, Y->ld, row, j);                                  \
          y_[q] = (T)((double)y_[q] +                                                              \
                      alpha * (a * (double)x_[coal_block_index(X->layout, X->ld, col, j)]));       \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
  }

SW_DEFINE(double, f64)
SW_DEFINE(float, f32)

coal_status coal_spmm_swift_host(coal_mat A, double alpha, coal_bvec X, double beta, coal_bvec Y) {
  const coal_swift *f;
  COAL_CALL(coal_mat_swift(A, &f));
  double *shared = NULL; /* one CTA group's slots, as the kernel's shared memory */
  size_t slots = (size_t)COAL_SWIFT_CTA_BLOCKS * COAL_SWIFT_WARP * (size_t)f->height_limit;
  COAL_CALL(coal_malloc(A->ctx, sizeof(double) * slots, (void **)&shared));
  if (A->dtype == COAL_F64)
    swift_f64(f, alpha, X, beta, Y, shared);
  else
    swift_f32(f, alpha, X, beta, Y, shared);
  coal_free(shared);
  return COAL_SUCCESS;
}
