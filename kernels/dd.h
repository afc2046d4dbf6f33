/* Double-double accumulation for the solvers' true residual (resid_dd in kernels/blas.h),
 * shared by the host twin and the CUDA kernel so that both run the same operations.
 *
 * A sum s = s_hi + s_lo carries about 106 bits. Subtracting a product a*x: TwoProd gives
 * a*x = p + e exactly (e = fma(a, x, -p)), TwoSum gives s_hi - p = t + f exactly, so
 * s_hi - a*x = t + (f - e): t becomes s_hi and f - e adds into s_lo. After q terms the error
 * is about q * 2^-104 * sum |a x|, so a residual whose true size is far below
 * 2^-53 * sum |a x| (where the fp64 sum is all rounding) still comes out with most of its
 * digits. Neither TwoSum nor the low-part sums hold a product, so contraction into fma cannot
 * change them; the code must not be built with reassociating options (-ffast-math).
 * [DEKKER71], [ORO05] (docs/REFERENCES.md). */
#ifndef COAL_DD_H
#define COAL_DD_H

#include <math.h>

#ifdef __CUDACC__
#define COAL_DD_FN __host__ __device__ static inline
#else
#define COAL_DD_FN static inline
#endif

/* (*hi, *lo) -= a * x */
COAL_DD_FN void coal_dd_sub_prod(double *hi, double *lo, double a, double x) {
#ifdef __CUDA_ARCH__
  const double p = __dmul_rn(a, x); /* never contracted into the subtraction below */
#else
  const double p = a * x;
#endif
  const double e = fma(a, x, -p);
  const double t = *hi - p, bb = t - *hi;
  const double f = (*hi - (t - bb)) + (-p - bb);
  *hi = t;
  *lo += f - e;
}

#endif
