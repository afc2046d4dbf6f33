/* CUDA versions of the single-vector operations of kernels/blas.h (vec_axpbypcz, vec_pointwise,
 * vec_dots, vec_norms), used by the PETSc vector type; the host twins in
 * kernels/host/blas_vec.c define the results.
 *
 * Conventions of kernels/cuda/blas.cu: CTAs of COAL_CUDA_CTA threads, grid-stride loops over at
 * most min(1024, 8*SMs) CTAs, 16-byte loads and stores (double2) when every vector of the call is
 * 16-byte aligned (the odd last entry then by thread 0), 8-byte ones otherwise. The elementwise
 * operations do not synchronise. Their vectors may be one array, so those kernels use neither
 * __restrict__ nor read-only loads: each entry is read by the thread that writes it, before it
 * writes it.
 *
 * Sums are deterministic, in two stages: each CTA of a grid fixed by n, the alignment and the SM
 * count writes its partials to ws_part (warp shuffles, then the warp results in order), and one
 * CTA per result combines them in a fixed order into ws_small. All results of a call come back in
 * one download through ws_pinned and one stream synchronisation. The maximum of vec_norms
 * propagates NaN through both stages. */
#include "../blas.h"
#include "cuda_internal.h"
#include "reduce.cuh"

#include <limits.h>
#include <stdint.h>
#include <string.h>

namespace {

using namespace coal_reduce; /* kThreads, kMaxPart, reduce_grid, aligned16, nan_max, cta_reduce */
constexpr int kGroup = 4;    /* y vectors per vec_dots pass: x is read once per group */

/* Second stage, one CTA per group of NV results: out[r*NV + c] combines (as cta_reduce)
 * part[(r*NV + c)*npart + b] over b < npart, r = blockIdx.x. */
template <int NV, int NS>
__global__ __launch_bounds__(kThreads) void final_kernel(const double *__restrict__ part, int npart,
                                                         double *__restrict__ out) {
  const double *p = part + (int64_t)blockIdx.x * NV * npart;
  double v[NV];
#pragma unroll
  for (int c = 0; c < NV; c++) {
    v[c] = 0.0;
    for (int b = (int)threadIdx.x; b < npart; b += kThreads)
      v[c] = c < NS ? v[c] + p[c * npart + b] : nan_max(v[c], p[c * npart + b]);
  }
  cta_reduce<NV, NS>(v);
  if (threadIdx.x == 0) {
#pragma unroll
    for (int c = 0; c < NV; c++) out[(int64_t)blockIdx.x * NV + c] = v[c];
  }
}

/* ---- elementwise kernels ------------------------------------------------------------------- */
/* a*x + b*y + c*z + d without the absent terms (HX: x given, HY: y given, RZ: c != 0). */
template <bool HX, bool HY, bool RZ>
__device__ __forceinline__ double axpbypcz1(double a, double xv, double b, double yv, double c,
                                            double zv, double d) {
  double v = HX ? a * xv : 0.0;
  if (HY) v += b * yv;
  if (RZ) v += c * zv;
  return v + d;
}

template <bool HX, bool HY, bool RZ, bool VEC>
__global__ __launch_bounds__(kThreads) void axpbypcz_kernel(int64_t n, double a, const double *x,
                                                            double b, const double *y, double c,
                                                            double *z, double d) {
  const int64_t t0 = (int64_t)blockIdx.x * kThreads + threadIdx.x;
  const int64_t st = (int64_t)gridDim.x * kThreads;
  int64_t i0 = t0;
  if (VEC) {
    const double2 *x2 = (const double2 *)x, *y2 = (const double2 *)y;
    double2 *z2 = (double2 *)z;
    const double2 zero = make_double2(0.0, 0.0);
    for (int64_t i = t0; i < n / 2; i += st) {
      const double2 xv = HX ? x2[i] : zero, yv = HY ? y2[i] : zero, zv = RZ ? z2[i] : zero;
      z2[i] = make_double2(axpbypcz1<HX, HY, RZ>(a, xv.x, b, yv.x, c, zv.x, d),
                           axpbypcz1<HX, HY, RZ>(a, xv.y, b, yv.y, c, zv.y, d));
    }
    i0 = (n & 1) && t0 == 0 ? n - 1 : n; /* the odd last entry, by thread 0 */
  }
  for (int64_t i = i0; i < n; i += st)
    z[i] = axpbypcz1<HX, HY, RZ>(a, HX ? x[i] : 0.0, b, HY ? y[i] : 0.0, c, RZ ? z[i] : 0.0, d);
}

/* x .* y, or x ./ y with 0 where y is 0 */
template <bool DIV> __device__ __forceinline__ double pointwise1(double xv, double yv) {
  return DIV ? (yv != 0.0 ? xv / yv : 0.0) : xv * yv;
}

template <bool DIV, bool VEC>
__global__ __launch_bounds__(kThreads) void pointwise_kernel(int64_t n, const double *x,
                                                             const double *y, double *w) {
  const int64_t t0 = (int64_t)blockIdx.x * kThreads + threadIdx.x;
  const int64_t st = (int64_t)gridDim.x * kThreads;
  int64_t i0 = t0;
  if (VEC) {
    const double2 *x2 = (const double2 *)x, *y2 = (const double2 *)y;
    double2 *w2 = (double2 *)w;
    for (int64_t i = t0; i < n / 2; i += st) {
      const double2 xv = x2[i], yv = y2[i];
      w2[i] = make_double2(pointwise1<DIV>(xv.x, yv.x), pointwise1<DIV>(xv.y, yv.y));
    }
    i0 = (n & 1) && t0 == 0 ? n - 1 : n;
  }
  for (int64_t i = i0; i < n; i += st) w[i] = pointwise1<DIV>(x[i], y[i]);
}

/* ---- reduction kernels --------------------------------------------------------------------- */
struct YGroup {
  const double *p[kGroup];
};

/* G dot products x.y_c at once: the CTA's partials to part[c*gridDim.x + blockIdx.x]. Nothing
 * is written, so x and the y_c may be one array (read-only loads). */
template <bool VEC, int G>
__global__ __launch_bounds__(kThreads) void dots_kernel(int64_t n, const double *x, YGroup ys,
                                                        double *__restrict__ part) {
  const int64_t t0 = (int64_t)blockIdx.x * kThreads + threadIdx.x;
  const int64_t st = (int64_t)gridDim.x * kThreads;
  double v[G];
#pragma unroll
  for (int c = 0; c < G; c++) v[c] = 0.0;
  int64_t i0 = t0;
  if (VEC) {
    for (int64_t i = t0; i < n / 2; i += st) {
      const double2 a = __ldg((const double2 *)x + i);
#pragma unroll
      for (int c = 0; c < G; c++) {
        const double2 b = __ldg((const double2 *)ys.p[c] + i);
        v[c] = fma(a.y, b.y, fma(a.x, b.x, v[c]));
      }
    }
    i0 = (n & 1) && t0 == 0 ? n - 1 : n;
  }
  for (int64_t i = i0; i < n; i += st) {
    const double a = __ldg(x + i);
#pragma unroll
    for (int c = 0; c < G; c++) v[c] = fma(a, __ldg(ys.p[c] + i), v[c]);
  }
  cta_reduce<G, G>(v);
  if (threadIdx.x == 0) {
#pragma unroll
    for (int c = 0; c < G; c++) part[c * gridDim.x + blockIdx.x] = v[c];
  }
}

__device__ __forceinline__ void norms1(double (&v)[3], double xv, double s) {
  const double a = fabs(xv), t = s * xv;
  v[0] += a;
  v[1] = fma(t, t, v[1]);
  v[2] = nan_max(v[2], a);
}

/* sum |x|, sum (s x)^2, max |x| (NaN kept): the CTA's partials to part[c*gridDim.x + blockIdx.x].
 */
template <bool VEC>
__global__ __launch_bounds__(kThreads) void norms_kernel(int64_t n, const double *__restrict__ x,
                                                         double s, double *__restrict__ part) {
  const int64_t t0 = (int64_t)blockIdx.x * kThreads + threadIdx.x;
  const int64_t st = (int64_t)gridDim.x * kThreads;
  double v[3] = {0.0, 0.0, 0.0};
  int64_t i0 = t0;
  if (VEC) {
    for (int64_t i = t0; i < n / 2; i += st) {
      const double2 a = __ldg((const double2 *)x + i);
      norms1(v, a.x, s);
      norms1(v, a.y, s);
    }
    i0 = (n & 1) && t0 == 0 ? n - 1 : n;
  }
  for (int64_t i = i0; i < n; i += st) norms1(v, __ldg(x + i), s);
  cta_reduce<3, 2>(v);
  if (threadIdx.x == 0) {
#pragma unroll
    for (int c = 0; c < 3; c++) part[c * gridDim.x + blockIdx.x] = v[c];
  }
}

/* ---- launchers ----------------------------------------------------------------------------- */
using AxpbypczLaunch = void (*)(int, cudaStream_t, int64_t, double, const double *, double,
                                const double *, double, double *, double);
template <bool HX, bool HY, bool RZ, bool VEC>
void launch_axpbypcz(int g, cudaStream_t s, int64_t n, double a, const double *x, double b,
                     const double *y, double c, double *z, double d) {
  axpbypcz_kernel<HX, HY, RZ, VEC><<<g, kThreads, 0, s>>>(n, a, x, b, y, c, z, d);
}
template <bool VEC> AxpbypczLaunch pick_axpbypcz(bool hx, bool hy, bool rz) {
  static const AxpbypczLaunch t[8] = {
      launch_axpbypcz<false, false, false, VEC>, launch_axpbypcz<false, false, true, VEC>,
      launch_axpbypcz<false, true, false, VEC>,  launch_axpbypcz<false, true, true, VEC>,
      launch_axpbypcz<true, false, false, VEC>,  launch_axpbypcz<true, false, true, VEC>,
      launch_axpbypcz<true, true, false, VEC>,   launch_axpbypcz<true, true, true, VEC>,
  };
  return t[(hx ? 4 : 0) + (hy ? 2 : 0) + (rz ? 1 : 0)];
}

template <bool DIV, bool VEC>
void launch_pointwise(int g, cudaStream_t s, int64_t n, const double *x, const double *y,
                      double *w) {
  pointwise_kernel<DIV, VEC><<<g, kThreads, 0, s>>>(n, x, y, w);
}

using DotsLaunch = void (*)(int, cudaStream_t, int64_t, const double *, const YGroup &, double *);
template <bool VEC, int G>
void launch_dots(int g, cudaStream_t s, int64_t n, const double *x, const YGroup &ys,
                 double *part) {
  dots_kernel<VEC, G><<<g, kThreads, 0, s>>>(n, x, ys, part);
}
static_assert(kGroup == 4, "launch table of vec_dots");
const DotsLaunch dots_table[2][kGroup] = {
    {launch_dots<false, 1>, launch_dots<false, 2>, launch_dots<false, 3>, launch_dots<false, 4>},
    {launch_dots<true, 1>, launch_dots<true, 2>, launch_dots<true, 3>, launch_dots<true, 4>},
};

} // namespace

/* ---- operations ---------------------------------------------------------------------------- */
coal_status coal_blas_vec_axpbypcz_cuda(coal_ctx ctx, int64_t n, double a, const double *x,
                                        double b, const double *y, double c, double *z, double d) {
  if (n == 0) return COAL_SUCCESS;
  const bool hx = x != NULL, hy = y != NULL, rz = c != 0.0;
  const bool vec = aligned16(z) && (!hx || aligned16(x)) && (!hy || aligned16(y));
  const int g = reduce_grid(ctx, vec ? (n + 1) / 2 : n);
  (vec ? pick_axpbypcz<true> : pick_axpbypcz<false>)(hx, hy, rz)(g, coal_stream(ctx), n, a, x, b, y,
                                                                 c, z, d);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  return COAL_SUCCESS;
}

coal_status coal_blas_vec_pointwise_cuda(coal_ctx ctx, int64_t n, int op, const double *x,
                                         const double *y, double *w) {
  COAL_CHECK(ctx, op == COAL_VEC_MULT || op == COAL_VEC_DIV, COAL_ERR_ARG,
             "vec_pointwise: unknown op %d", op);
  if (n == 0) return COAL_SUCCESS;
  const bool vec = aligned16(x) && aligned16(y) && aligned16(w), div = op == COAL_VEC_DIV;
  const int g = reduce_grid(ctx, vec ? (n + 1) / 2 : n);
  cudaStream_t s = coal_stream(ctx);
  if (vec)
    (div ? launch_pointwise<true, true> : launch_pointwise<false, true>)(g, s, n, x, y, w);
  else
    (div ? launch_pointwise<true, false> : launch_pointwise<false, false>)(g, s, n, x, y, w);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  return COAL_SUCCESS;
}

coal_status coal_blas_vec_dots_cuda(coal_ctx ctx, int64_t n, int64_t k, const double *x,
                                    const double *const *ys, double *out) {
  if (k == 0) return COAL_SUCCESS;
  if (n == 0) {
    for (int64_t j = 0; j < k; j++) out[j] = 0.0;
    return COAL_SUCCESS;
  }
  COAL_CHECK(ctx, k <= INT_MAX, COAL_ERR_ARG, "vec_dots: too many vectors (%lld)", (long long)k);
  bool vec = aligned16(x);
  for (int64_t j = 0; j < k; j++) vec = vec && aligned16(ys[j]);
  const int g = reduce_grid(ctx, vec ? (n + 1) / 2 : n);
  const size_t bytes = sizeof(double) * (size_t)k;
  double *part = NULL;
  void *res = NULL, *resh = NULL;
  COAL_CALL(coal_ws_part(ctx, (size_t)k * (size_t)g, &part));
  COAL_CALL(coal_ws_small(ctx, bytes, &res));
  COAL_CALL(coal_ws_pinned(ctx, bytes, &resh));
  cudaStream_t s = coal_stream(ctx);
  /* partials of y_j at part[j*g + b] */
  for (int64_t j0 = 0; j0 < k; j0 += kGroup) {
    const int G = (int)(k - j0 < kGroup ? k - j0 : kGroup);
    YGroup grp = {};
    for (int c = 0; c < G; c++) grp.p[c] = ys[j0 + c];
    dots_table[vec ? 1 : 0][G - 1](g, s, n, x, grp, part + j0 * g);
    COAL_CUDA_LAUNCH_CHECK(ctx);
  }
  final_kernel<1, 1><<<(unsigned)k, kThreads, 0, s>>>(part, g, (double *)res);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  COAL_CUDA_CALL(ctx, cudaMemcpyAsync(resh, res, bytes, cudaMemcpyDeviceToHost, s));
  COAL_CUDA_CALL(ctx, cudaStreamSynchronize(s));
  memcpy(out, resh, bytes);
  return COAL_SUCCESS;
}

coal_status coal_blas_vec_norms_cuda(coal_ctx ctx, int64_t n, const double *x, double s,
                                     double *out) {
  if (n == 0) {
    out[0] = out[1] = out[2] = 0.0;
    return COAL_SUCCESS;
  }
  const bool vec = aligned16(x);
  const int g = reduce_grid(ctx, vec ? (n + 1) / 2 : n);
  const size_t bytes = 3 * sizeof(double);
  double *part = NULL;
  void *res = NULL, *resh = NULL;
  COAL_CALL(coal_ws_part(ctx, 3 * (size_t)g, &part));
  COAL_CALL(coal_ws_small(ctx, bytes, &res));
  COAL_CALL(coal_ws_pinned(ctx, bytes, &resh));
  cudaStream_t st = coal_stream(ctx);
  if (vec)
    norms_kernel<true><<<g, kThreads, 0, st>>>(n, x, s, part);
  else
    norms_kernel<false><<<g, kThreads, 0, st>>>(n, x, s, part);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  final_kernel<3, 2><<<1, kThreads, 0, st>>>(part, g, (double *)res);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  COAL_CUDA_CALL(ctx, cudaMemcpyAsync(resh, res, bytes, cudaMemcpyDeviceToHost, st));
  COAL_CUDA_CALL(ctx, cudaStreamSynchronize(st));
  memcpy(out, resh, bytes);
  return COAL_SUCCESS;
}
