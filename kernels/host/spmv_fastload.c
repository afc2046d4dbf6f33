/* Host twins of the FastLoad kernels; they walk the format exactly as a warp does (one block
 * per warp, one lane per sorted lane, one round per iteration). Sums are kept in double; the
 * updates of y (atomics on the GPU) are done in the matrix dtype, in block order.
 *
 * Scatter (lanes = columns of A): y = beta*y first; then in every round each lane
 * forms val * x[column], the runs of equal rows (seg) are summed and the run head adds
 * alpha*sum to y[row].
 * Gather (lanes = rows of A): y = beta*y on the split rows first; a lane of a
 * COMPLETE block holds its whole row and stores alpha*sum + beta*y, a lane of any other block
 * adds alpha*(its partial sum) to y[row]. */
#include "../fastload.h"
#include "../spmv.h"

#define FL_SCATTER(T)                                                                              \
  do {                                                                                             \
    const T *v_ = (const T *)f->val;                                                               \
    const T *x_ = (const T *)x;                                                                    \
    T *y_ = (T *)y;                                                                                \
    for (int32_t i = 0; i < f->nother; i++) y_[i] = (T)(beta == 0.0 ? 0.0 : beta * (double)y_[i]); \
    for (int32_t b = 0; b < f->nblocks; b++) {                                                     \
      int32_t len = f->blk_len[b], h = f->blk_height[b], col = f->blk_col[b];                      \
      double prod[32];                                                                             \
      for (int32_t r = 0; r < h; r++) {                                                            \
        int64_t e0 = (int64_t)f->blk_ptr[b] + (int64_t)r * len;                                    \
        for (int32_t l = 0; l < len; l++) {                                                        \
          int32_t j = f->identity_perm ? col + l : f->perm[col + l];                               \
          prod[l] = (double)v_[e0 + l] * (double)x_[j];                                            \
        }                                                                                          \
        for (int32_t l = 0; l < len;) {                                                            \
          int32_t run = f->seg[e0 + l];                                                            \
          double sum = 0.0;                                                                        \
          for (int32_t k = l; k < l + run; k++) sum += prod[k];                                    \
          int32_t i = f->idx[e0 + l];                                                              \
          y_[i] = (T)((double)y_[i] + alpha * sum);                                                \
          l += run;                                                                                \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
  } while (0)

coal_status coal_spmv_fastload_host(coal_mat A, double alpha, const void *x, double beta, void *y) {
  const coal_fastload *f;
  COAL_CALL(coal_mat_fastload(A, 0, &f));
  if (A->dtype == COAL_F64)
    FL_SCATTER(double);
  else
    FL_SCATTER(float);
  return COAL_SUCCESS;
}

#define FL_GATHER(T)                                                                               \
  do {                                                                                             \
    const T *v_ = (const T *)f->val;                                                               \
    const T *x_ = (const T *)x;                                                                    \
    T *y_ = (T *)y;                                                                                \
    for (int32_t s = 0; s < f->nsplit; s++) {                                                      \
      int32_t i = f->split[s];                                                                     \
      y_[i] = (T)(beta == 0.0 ? 0.0 : beta * (double)y_[i]);                                       \
    }                                                                                              \
    for (int32_t b = 0; b < f->nblocks; b++) {                                                     \
      int32_t len = f->blk_len[b], h = f->blk_height[b], col = f->blk_col[b];                      \
      int complete = (f->blk_class[b] & COAL_FL_COMPLETE) != 0;                                    \
      int64_t e0 = f->blk_ptr[b];                                                                  \
      for (int32_t l = 0; l < len; l++) {                                                          \
        double sum = 0.0;                                                                          \
        for (int32_t r = 0; r < h; r++) {                                                          \
          int64_t e = e0 + (int64_t)r * len + l;                                                   \
          sum += (double)v_[e] * (double)x_[f->idx[e]];                                            \
        }                                                                                          \
        int32_t i = f->identity_perm ? col + l : f->perm[col + l];                                 \
        if (!complete)                                                                             \
          y_[i] = (T)((double)y_[i] + alpha * sum);                                                \
        else if (beta == 0.0)                                                                      \
          y_[i] = (T)(alpha * sum);                                                                \
        else                                                                                       \
          y_[i] = (T)(alpha * sum + beta * (double)y_[i]);                                         \
      }                                                                                            \
    }                                                                                              \
  } while (0)

coal_status coal_spmv_fastload_t_host(coal_mat A, double alpha, const void *x, double beta,
                                      void *y) {
  const coal_fastload *f;
  COAL_CALL(coal_mat_fastload(A, 1, &f));
  if (A->dtype == COAL_F64)
    FL_GATHER(double);
  else
    FL_GATHER(float);
  return COAL_SUCCESS;
}
