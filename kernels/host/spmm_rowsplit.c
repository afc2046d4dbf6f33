/* Host twin of the row-split CSR SpMM kernel ([YANG18], section 4.1). The GPU assigns a
 * warp to each row of A and each tile of 32 columns of Y; the warp loads the row's column
 * indices and values 32 at a time (a lane each), then broadcasts them one by one (shuffle)
 * while every lane reads its column of the broadcast row of X and accumulates. The twin
 * walks the same tiles and chunks; sums are kept in double and rounded once when stored. */
#include "../spmm.h"

#define RS_WARP 32

#define RS_DEFINE(T, S)                                                                            \
  static void rowsplit_##S(coal_mat A, double alpha, coal_bvec X, double beta, coal_bvec Y) {      \
    const T *v_ = (const T *)A->values;                                                            \
    const T *x_ = (const T *)X->data;                                                              \
    T *y_ = (T *)Y->data;                                                                          \
    for (int32_t i = 0; i < A->nrows; i++) {                                                       \
      int32_t p0 = A->rowptr[i], p1 = A->rowptr[i + 1];                                            \
      for (int64_t jt = 0; jt < X->k; jt += RS_WARP) {                                             \
        int32_t nj = (int32_t)(X->k - jt < RS_WARP ? X->k - jt : RS_WARP);                         \
        double acc[RS_WARP] = {0};                                                                 \
        for (int32_t c0 = p0; c0 < p1; c0 += RS_WARP) { /* one coalesced load of A */              \
          int32_t cn = p1 - c0 < RS_WARP ? p1 - c0 : RS_WARP;                                      \
          for (int32_t t = 0; t < cn; t++) { /* broadcast of lane t */                             \
            int32_t col = A->colind[c0 + t];                                                       \
            double a = (double)v_[c0 + t];                                                         \
            for (int32_t l = 0; l < nj; l++) /* lane l: column jt + l */                           \
              acc[l] += a * (double)x_[coal_block_index(X->layout, X->ld, col, jt + l)];           \
          }                                                                                        \
        }                                                                                          \
        for (int32_t l = 0; l < nj; l++) {                                                         \
          int64_t q = coal_block_index(Y->layout, Y->ld, i, jt + l);                               \
          y_[q] = (T)(beta == 0.0 ? alpha * acc[l] : alpha * acc[l] + beta * (double)y_[q]);       \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
  }

RS_DEFINE(double, f64)
RS_DEFINE(float, f32)

coal_status coal_spmm_rowsplit_host(coal_mat A, double alpha, coal_bvec X, double beta,
                                    coal_bvec Y) {
  if (A->dtype == COAL_F64)
    rowsplit_f64(A, alpha, X, beta, Y);
  else
    rowsplit_f32(A, alpha, X, beta, Y);
  return COAL_SUCCESS;
}
