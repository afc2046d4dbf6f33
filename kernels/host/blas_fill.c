/* Host twin of blas.fill (src/backend.h): random and constant fills of a block, entry by entry
 * from the counter-based generator, so the CUDA version (kernels/cuda/blas_fill.cu) matches it
 * bit for bit. */
#include "../../src/random.h"
#include "../blas.h"

coal_status coal_blas_fill_host(coal_ctx ctx, int64_t n, int64_t k, coal_dtype dtype,
                                coal_layout layout, int64_t ld, void *X, int random, uint64_t seed,
                                double v) {
  (void)ctx;
  for (int64_t j = 0; j < k; j++)
    for (int64_t i = 0; i < n; i++) {
      const double x = random ? coal_random_at(seed, (uint64_t)(j * n + i)) : v;
      const size_t at = layout == COAL_COL_MAJOR ? (size_t)(i + j * ld) : (size_t)(i * ld + j);
      if (dtype == COAL_F64)
        ((double *)X)[at] = x;
      else
        ((float *)X)[at] = (float)x;
    }
  return COAL_SUCCESS;
}
