/* CUDA versions of the dense block operations (kernels/blas.h; host twins in
 * kernels/host/blas.c define the results).
 *
 * cuBLAS mapping: a row-major n x p block with leading dimension ld is the column-major p x n
 * matrix X^T with the same ld. So G = X^T Y (row-major p x q) is, column-major, G^T = Y^T X,
 * i.e. dgemm(N, T, q, p, n) on (Y^T, X^T), written tight (ld q) to a device workspace and
 * downloaded through a pinned buffer into G (ldg). Y = a X C + beta Y is, column-major,
 * Y^T = a C^T X^T + beta Y^T, i.e. dgemm(N, N, q, n, p) with C^T = C (row-major, uploaded tight
 * with ld q). cuBLAS does not read C when beta == 0 (BLAS rule), so NaN in Y does not survive.
 * Empty inner dimensions are handled here, not by cuBLAS: n == 0 gives G = 0 (no device work),
 * p == 0 gives Y = beta*Y (0 when beta == 0) with a small kernel. n is cut into chunks of at most
 * 2^30 rows for the 32-bit cuBLAS interface (Gram chunks accumulate with beta = 1).
 *
 * Workspaces (struct coal_cuda_ctx): ws_small (device; C, column maps, Gram / norm results),
 * ws_part (device; per-CTA partial sums), ws_pinned (host; small downloads). Grown when a call
 * needs more, so steady state allocates nothing; growing synchronises the stream first (work
 * still queued may use the old buffer). Uploads from the caller's (pageable) host arrays return
 * once the data is staged, so the caller may reuse them; stream order protects the workspaces.
 *
 * Reductions are deterministic, in two stages: each CTA of a grid of fixed size (a function of
 * n and the SM count only) writes its partial sums (warp shuffles, then the warp sums in
 * order), and a one-CTA kernel (or, for column norms, one thread per column) adds the partials
 * in a fixed order. The single-vector CG steps keep alpha/beta and their sums on the device
 * (sc): no host synchronisation; they use 16-byte loads when every vector is 16-byte aligned
 * and grid-stride loops over at most min(1024, 8*SMs) CTAs.
 */
#include "../blas.h"
#include "../dd.h"
#include "cuda_internal.h"
#include "reduce.cuh"

#include <limits.h>
#include <stdint.h>
#include <string.h>

/* ---- workspaces ---------------------------------------------------------------------------- */
static coal_status ws_grow(coal_ctx ctx, void **buf, size_t *cap, size_t bytes, bool pinned) {
  if (*buf && bytes <= *cap) return COAL_SUCCESS;
  size_t want = bytes > 2 * *cap ? bytes : 2 * *cap;
  if (want < 4096) want = 4096;
  /* queued work may still use the old buffer (stream order); growing is rare */
  COAL_CUDA_CALL(ctx, cudaStreamSynchronize(coal_stream(ctx)));
  if (pinned) {
    if (*buf && cudaFreeHost(*buf) != cudaSuccess) (void)cudaGetLastError();
  } else {
    coal_cuda_free(*buf);
  }
  *buf = NULL, *cap = 0;
  if (pinned)
    COAL_CUDA_CALL(ctx, cudaMallocHost(buf, want));
  else
    COAL_CALL(coal_cuda_malloc(ctx, want, buf));
  *cap = want;
  return COAL_SUCCESS;
}

coal_status coal_ws_small(coal_ctx ctx, size_t bytes, void **p) {
  struct coal_cuda_ctx *c = ctx->cuda;
  COAL_CALL(ws_grow(ctx, &c->ws_small, &c->ws_small_cap, bytes, false));
  *p = c->ws_small;
  return COAL_SUCCESS;
}

coal_status coal_ws_part(coal_ctx ctx, size_t count, double **p) {
  struct coal_cuda_ctx *c = ctx->cuda;
  void *b = c->ws_part;
  COAL_CALL(ws_grow(ctx, &b, &c->ws_part_cap, sizeof(double) * count, false));
  c->ws_part = (double *)b;
  *p = c->ws_part;
  return COAL_SUCCESS;
}

coal_status coal_ws_pinned(coal_ctx ctx, size_t bytes, void **p) {
  struct coal_cuda_ctx *c = ctx->cuda;
  COAL_CALL(ws_grow(ctx, &c->ws_pinned, &c->ws_pinned_cap, bytes, true));
  *p = c->ws_pinned;
  return COAL_SUCCESS;
}

namespace {

using namespace coal_reduce;          /* kThreads, kMaxPart, reduce_grid, aligned16, cta_reduce */
constexpr int64_t kChunk = 1ll << 30; /* rows per cuBLAS call (32-bit sizes) */
constexpr int64_t kMaxGridY = 65535;

/* Columns per CTA row of the 2D block kernels: smallest power of two >= k, at most 32. */
int block_tx(int64_t k) {
  int tx = 1;
  while (tx < 32 && tx < k) tx *= 2;
  return tx;
}

/* ---- reductions ---------------------------------------------------------------------------- */
/* Second stage: out_c = sum of part[c*npart + b] over b < npart (npart == 0: 0). One CTA. */
template <int NV>
__global__ __launch_bounds__(kThreads) void final_sum_kernel(const double *__restrict__ part,
                                                             int npart, double *out0,
                                                             double *out1) {
  double v[NV];
#pragma unroll
  for (int c = 0; c < NV; c++) {
    v[c] = 0.0;
    for (int b = (int)threadIdx.x; b < npart; b += kThreads) v[c] += part[c * npart + b];
  }
  cta_reduce<NV, NV>(v);
  if (threadIdx.x == 0) {
    *out0 = v[0];
    if (NV > 1) *out1 = v[NV - 1];
  }
}

/* ---- CG steps ------------------------------------------------------------------------------ */
template <bool VEC>
__global__ __launch_bounds__(kThreads) void dot_kernel(int64_t n, const double *__restrict__ x,
                                                       const double *__restrict__ y,
                                                       double *__restrict__ part) {
  const int64_t t0 = (int64_t)blockIdx.x * kThreads + threadIdx.x;
  const int64_t st = (int64_t)gridDim.x * kThreads;
  double s0 = 0.0, s1 = 0.0;
  if (VEC) {
    const double2 *x2 = (const double2 *)x, *y2 = (const double2 *)y;
    for (int64_t i = t0; i < n / 2; i += st) {
      const double2 a = __ldg(x2 + i), b = __ldg(y2 + i);
      s0 = fma(a.x, b.x, s0);
      s1 = fma(a.y, b.y, s1);
    }
    if ((n & 1) && t0 == 0) s0 = fma(x[n - 1], y[n - 1], s0);
  } else {
    for (int64_t i = t0; i < n; i += st) s0 = fma(__ldg(x + i), __ldg(y + i), s0);
  }
  double v[1] = {s0 + s1};
  cta_reduce<1, 1>(v);
  if (threadIdx.x == 0) part[blockIdx.x] = v[0];
}

/* x += alpha p; r -= alpha q; partials of sum r^2 dinv and sum r^2 (updated r). */
template <bool VEC, bool DINV>
__global__ __launch_bounds__(kThreads) void update_xr_kernel(
    int64_t n, const double *__restrict__ sc, int par, double *__restrict__ x,
    double *__restrict__ r, const double *__restrict__ p, const double *__restrict__ q,
    const double *__restrict__ dinv, double *__restrict__ part) {
  const double alpha = sc[COAL_CG_RZ + par] / sc[COAL_CG_PQ];
  const int64_t t0 = (int64_t)blockIdx.x * kThreads + threadIdx.x;
  const int64_t st = (int64_t)gridDim.x * kThreads;
  double rz = 0.0, rr = 0.0;
  int64_t i0 = t0;
  if (VEC) {
    double2 *x2 = (double2 *)x, *r2 = (double2 *)r;
    const double2 *p2 = (const double2 *)p, *q2 = (const double2 *)q, *d2 = (const double2 *)dinv;
    for (int64_t i = t0; i < n / 2; i += st) {
      double2 xv = x2[i], rv = r2[i];
      const double2 pv = __ldg(p2 + i), qv = __ldg(q2 + i);
      xv.x = fma(alpha, pv.x, xv.x);
      xv.y = fma(alpha, pv.y, xv.y);
      rv.x = fma(-alpha, qv.x, rv.x);
      rv.y = fma(-alpha, qv.y, rv.y);
      x2[i] = xv;
      r2[i] = rv;
      const double a = rv.x * rv.x, b = rv.y * rv.y;
      rr += a + b;
      if (DINV) {
        const double2 dv = __ldg(d2 + i);
        rz = fma(a, dv.x, rz);
        rz = fma(b, dv.y, rz);
      }
    }
    i0 = (n & 1) && t0 == 0 ? n - 1 : n; /* the odd last entry, by thread 0 */
  }
  for (int64_t i = i0; i < n; i += st) {
    const double xi = fma(alpha, __ldg(p + i), x[i]), ri = fma(-alpha, __ldg(q + i), r[i]);
    x[i] = xi;
    r[i] = ri;
    rr = fma(ri, ri, rr);
    if (DINV) rz = fma(ri * ri, __ldg(dinv + i), rz);
  }
  double v[2] = {DINV ? rz : rr, rr};
  cta_reduce<2, 2>(v);
  if (threadIdx.x == 0) {
    part[blockIdx.x] = v[0];
    part[gridDim.x + blockIdx.x] = v[1];
  }
}

/* p = dinv.*r + beta p, beta = sc[RZ+1-par] / sc[RZ+par]. */
template <bool VEC, bool DINV>
__global__ __launch_bounds__(kThreads) void update_p_kernel(int64_t n,
                                                            const double *__restrict__ sc, int par,
                                                            double *__restrict__ p,
                                                            const double *__restrict__ r,
                                                            const double *__restrict__ dinv) {
  const double beta = sc[COAL_CG_RZ + 1 - par] / sc[COAL_CG_RZ + par];
  const int64_t t0 = (int64_t)blockIdx.x * kThreads + threadIdx.x;
  const int64_t st = (int64_t)gridDim.x * kThreads;
  int64_t i0 = t0;
  if (VEC) {
    double2 *p2 = (double2 *)p;
    const double2 *r2 = (const double2 *)r, *d2 = (const double2 *)dinv;
    for (int64_t i = t0; i < n / 2; i += st) {
      double2 pv = p2[i], rv = __ldg(r2 + i);
      if (DINV) {
        const double2 dv = __ldg(d2 + i);
        rv.x *= dv.x;
        rv.y *= dv.y;
      }
      pv.x = fma(beta, pv.x, rv.x);
      pv.y = fma(beta, pv.y, rv.y);
      p2[i] = pv;
    }
    i0 = (n & 1) && t0 == 0 ? n - 1 : n;
  }
  for (int64_t i = i0; i < n; i += st) {
    const double z = DINV ? __ldg(dinv + i) * __ldg(r + i) : __ldg(r + i);
    p[i] = fma(beta, p[i], z);
  }
}

/* ---- block kernels ------------------------------------------------------------------------- */
/* 2D CTAs (TX columns x TY rows, TX*TY = kThreads): column j = blockIdx.y*TX + tx, rows
 * grid-strided. Y = diag(d) X (Y == NULL: no write; Y may be X) and, with NRM, the CTA's
 * column sums of squares of X into part[blockIdx.x*k + j]. */
template <bool NRM>
__global__ __launch_bounds__(kThreads) void dscale_kernel(int64_t n, int64_t k,
                                                          const double *__restrict__ d,
                                                          const double *X, int64_t ldx, double *Y,
                                                          int64_t ldy, double *__restrict__ part) {
  const int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
  const int TX = (int)blockDim.x, TY = (int)blockDim.y;
  const int64_t j = (int64_t)blockIdx.y * TX + tx;
  double s = 0.0;
  if (j < k) {
    for (int64_t i = (int64_t)blockIdx.x * TY + ty; i < n; i += (int64_t)gridDim.x * TY) {
      const double v = X[i * ldx + j];
      if (NRM) s = fma(v, v, s);
      if (Y) Y[i * ldy + j] = d ? __ldg(d + i) * v : v;
    }
  }
  if (NRM) {
    __shared__ double sh[kThreads];
    sh[ty * TX + tx] = s;
    __syncthreads();
    if (ty == 0 && j < k) {
      double t = 0.0;
      for (int m = 0; m < TY; m++) t += sh[m * TX + tx];
      part[(int64_t)blockIdx.x * k + j] = t;
    }
  }
}

/* LOBPCG residuals (kernels/blas.h eig_resid): CTAs as dscale_kernel over the q columns;
 * cols / lam in device memory. The CTA's column sums of squares of r go to part. */
__global__ __launch_bounds__(kThreads) void eig_resid_kernel(
    int64_t n, int64_t q, const double *__restrict__ AX, const double *__restrict__ MX, int64_t ldx,
    const int32_t *__restrict__ cols, const double *__restrict__ lam, const double *__restrict__ d,
    double *__restrict__ W, int64_t ldw, double *__restrict__ part) {
  const int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
  const int TX = (int)blockDim.x, TY = (int)blockDim.y;
  const int64_t a = (int64_t)blockIdx.y * TX + tx;
  double s = 0.0;
  if (a < q) {
    const int64_t j = cols[a];
    const double l = lam[a];
    for (int64_t i = (int64_t)blockIdx.x * TY + ty; i < n; i += (int64_t)gridDim.x * TY) {
      /* no contraction into an FMA: r is then bit-identical to the host twin's */
      const double r = __dsub_rn(AX[i * ldx + j], __dmul_rn(l, MX[i * ldx + j]));
      s = fma(r, r, s);
      if (W) W[i * ldw + a] = d ? __ldg(d + i) * r : r;
    }
  }
  __shared__ double sh[kThreads];
  sh[ty * TX + tx] = s;
  __syncthreads();
  if (ty == 0 && a < q) {
    double t = 0.0;
    for (int m = 0; m < TY; m++) t += sh[m * TX + tx];
    part[(int64_t)blockIdx.x * q + a] = t;
  }
}

/* out[j] = sum of part[b*k + j] over b < nb, in order. */
__global__ __launch_bounds__(kThreads) void colsum_kernel(const double *__restrict__ part, int nb,
                                                          int64_t k, double *__restrict__ out) {
  const int64_t j = (int64_t)blockIdx.x * kThreads + threadIdx.x;
  if (j >= k) return;
  double t = 0.0;
  for (int b = 0; b < nb; b++) t += part[(int64_t)b * k + j];
  out[j] = t;
}

/* Y = beta*Y (beta == 0: 0, Y not read), row-major n x q; CTAs as dscale_kernel. */
__global__ __launch_bounds__(kThreads) void scale_kernel(int64_t n, int64_t q, double beta,
                                                         double *__restrict__ Y, int64_t ldy) {
  const int64_t j = (int64_t)blockIdx.y * blockDim.x + threadIdx.x;
  if (j >= q) return;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.y + threadIdx.y; i < n;
       i += (int64_t)gridDim.x * blockDim.y)
    Y[i * ldy + j] = beta == 0.0 ? 0.0 : beta * Y[i * ldy + j];
}

/* Row-major to row-major column copy; CTAs as dscale_kernel over the q copied columns. */
__global__ __launch_bounds__(kThreads) void copy_rr_kernel(
    int64_t n, int64_t q, const double *__restrict__ X, int64_t ldx, const int32_t *__restrict__ xc,
    double *__restrict__ Y, int64_t ldy, const int32_t *__restrict__ yc) {
  const int64_t j = (int64_t)blockIdx.y * blockDim.x + threadIdx.x;
  if (j >= q) return;
  const int64_t cx = xc ? xc[j] : j, cy = yc ? yc[j] : j;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.y + threadIdx.y; i < n;
       i += (int64_t)gridDim.x * blockDim.y)
    Y[i * ldy + cy] = X[i * ldx + cx];
}

/* Column-major to column-major: threads along the rows of one column per blockIdx.y. */
__global__ __launch_bounds__(kThreads) void copy_cc_kernel(
    int64_t n, int64_t q, const double *__restrict__ X, int64_t ldx, const int32_t *__restrict__ xc,
    double *__restrict__ Y, int64_t ldy, const int32_t *__restrict__ yc) {
  for (int64_t j = blockIdx.y; j < q; j += gridDim.y) {
    const int64_t cx = xc ? xc[j] : j, cy = yc ? yc[j] : j;
    const double *x = X + cx * ldx;
    double *y = Y + cy * ldy;
    for (int64_t i = (int64_t)blockIdx.x * kThreads + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * kThreads)
      y[i] = x[i];
  }
}

/* Mixed layouts: 32 x 32 tiles through shared memory, each side read / written along its
 * contiguous dimension. CTA 32 x 8; column tile blockIdx.y, row tiles grid-strided. */
__global__ __launch_bounds__(kThreads) void copy_tile_kernel(
    int64_t n, int64_t q, const double *__restrict__ X, bool xrow, int64_t ldx,
    const int32_t *__restrict__ xc, double *__restrict__ Y, bool yrow, int64_t ldy,
    const int32_t *__restrict__ yc) {
  __shared__ double t[32][33];
  const int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
  const int64_t j0 = (int64_t)blockIdx.y * 32, ntiles = (n + 31) / 32;
  for (int64_t rt = blockIdx.x; rt < ntiles; rt += gridDim.x) {
    const int64_t i0 = rt * 32;
    for (int m = ty; m < 32; m += 8) {
      const int a = xrow ? m : tx, b = xrow ? tx : m; /* tile row / column */
      const int64_t i = i0 + a, j = j0 + b;
      if (i < n && j < q) {
        const int64_t c = xc ? xc[j] : j;
        t[a][b] = X[xrow ? i * ldx + c : i + c * ldx];
      }
    }
    __syncthreads();
    for (int m = ty; m < 32; m += 8) {
      const int a = yrow ? m : tx, b = yrow ? tx : m;
      const int64_t i = i0 + a, j = j0 + b;
      if (i < n && j < q) {
        const int64_t c = yc ? yc[j] : j;
        Y[yrow ? i * ldy + c : i + c * ldy] = t[a][b];
      }
    }
    __syncthreads();
  }
}

/* Grid of the 2D block kernels: gy column blocks, row blocks up to 8 CTAs per SM in all. */
unsigned rows_grid(coal_ctx ctx, int64_t n, int rows_per_cta, int64_t gy, int64_t cap) {
  int64_t g = (n + rows_per_cta - 1) / rows_per_cta;
  int64_t lim = (int64_t)ctx->cuda->sm_count * 8 / gy;
  if (lim < 1) lim = 1;
  if (cap > 0 && lim > cap) lim = cap;
  return (unsigned)(g < 1 ? 1 : g > lim ? lim : g);
}

template <bool VEC, bool DINV>
void launch_xr(int g, cudaStream_t s, int64_t n, double *sc, int par, double *x, double *r,
               const double *p, const double *q, const double *dinv, double *part) {
  update_xr_kernel<VEC, DINV><<<g, kThreads, 0, s>>>(n, sc, par, x, r, p, q, dinv, part);
}

template <bool VEC, bool DINV>
void launch_p(int g, cudaStream_t s, int64_t n, const double *sc, int par, double *p,
              const double *r, const double *dinv) {
  update_p_kernel<VEC, DINV><<<g, kThreads, 0, s>>>(n, sc, par, p, r, dinv);
}

/* dinv[i] = 1 / a_ii, or a_ii itself where it is not positive and finite; *bad = the smallest
 * such row (atomicMin; starts at n, which means none). A thread per row. */
__global__ void jacobi_kernel(int32_t n, const int32_t *__restrict__ rowptr,
                              const int32_t *__restrict__ col, const double *__restrict__ val,
                              double *__restrict__ dinv, int32_t *__restrict__ bad) {
  const int32_t i = (int32_t)(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  double di = 0.0;
  for (int32_t p = rowptr[i]; p < rowptr[i + 1]; p++)
    if (col[p] == i) di = val[p];
  const bool ok = di > 0.0 && isfinite(di);
  dinv[i] = ok ? 1.0 / di : di;
  if (!ok) atomicMin(bad, i);
}

/* R = B - A X in double-double (kernels/dd.h), the host twin's operations in the same order.
 * A thread per entry (i, j), j fastest: the threads of a row share its entries of A through the
 * cache and read neighbouring entries of row-major X and B. */
__global__ void resid_dd_kernel(int32_t n, int64_t k, const int32_t *__restrict__ rowptr,
                                const int32_t *__restrict__ col, const double *__restrict__ val,
                                const double *__restrict__ B, int bcol, int64_t ldb,
                                const double *__restrict__ X, int xcol, int64_t ldx,
                                double *__restrict__ R) {
  const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (int64_t)n * k) return;
  const int64_t i = t / k, j = t - i * k;
  double hi = B[bcol ? j * ldb + i : i * ldb + j], lo = 0.0;
  for (int32_t p = rowptr[i]; p < rowptr[i + 1]; p++) {
    const int64_t c = col[p];
    coal_dd_sub_prod(&hi, &lo, val[p], X[xcol ? j * ldx + c : c * ldx + j]);
  }
  R[t] = hi + lo;
}

} // namespace

/* ---- operations ---------------------------------------------------------------------------- */
coal_status coal_blas_gram_cuda(coal_ctx ctx, int64_t n, int64_t p, int64_t q, const double *X,
                                int64_t ldx, const double *Y, int64_t ldy, double *G, int64_t ldg) {
  if (p == 0 || q == 0) return COAL_SUCCESS;
  if (n == 0) {
    for (int64_t a = 0; a < p; a++)
      for (int64_t b = 0; b < q; b++) G[a * ldg + b] = 0.0;
    return COAL_SUCCESS;
  }
  COAL_CHECK(ctx, p <= INT_MAX && q <= INT_MAX && ldx <= INT_MAX && ldy <= INT_MAX, COAL_ERR_ARG,
             "gram: sizes beyond the cuBLAS 32-bit interface (p=%lld q=%lld ldx=%lld ldy=%lld)",
             (long long)p, (long long)q, (long long)ldx, (long long)ldy);
  const size_t bytes = sizeof(double) * (size_t)p * (size_t)q;
  void *gd = NULL, *gh = NULL;
  COAL_CALL(coal_ws_small(ctx, bytes, &gd));
  COAL_CALL(coal_ws_pinned(ctx, bytes, &gh));
  const double one = 1.0, zero = 0.0;
  /* X^T X (Y == X) also goes through dgemm: cublasDsyrk on tall-skinny blocks was many times
   * slower than the dgemm, so the half-work triangle is not worth it (bench/RESULTS.md, rule
   * gram-dsyrk) */
  for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
    const int64_t nb = n - i0 < kChunk ? n - i0 : kChunk;
    /* column-major: G^T (q x p, ld q) = Y^T (q x nb, ld ldy) * (X^T (p x nb, ld ldx))^T */
    COAL_CUBLAS_CALL(ctx, cublasDgemm(ctx->cuda->blas, CUBLAS_OP_N, CUBLAS_OP_T, (int)q, (int)p,
                                      (int)nb, &one, Y + i0 * ldy, (int)ldy, X + i0 * ldx, (int)ldx,
                                      i0 ? &one : &zero, (double *)gd, (int)q));
  }
  COAL_CUDA_CALL(ctx, cudaMemcpyAsync(gh, gd, bytes, cudaMemcpyDeviceToHost, coal_stream(ctx)));
  COAL_CUDA_CALL(ctx, cudaStreamSynchronize(coal_stream(ctx)));
  const double *g = (const double *)gh;
  for (int64_t a = 0; a < p; a++) memcpy(G + a * ldg, g + a * q, sizeof(double) * (size_t)q);
  return COAL_SUCCESS;
}

coal_status coal_blas_gemm_cuda(coal_ctx ctx, int64_t n, int64_t p, int64_t q, double a,
                                const double *X, int64_t ldx, const double *C, int64_t ldc,
                                double beta, double *Y, int64_t ldy) {
  if (n == 0 || q == 0) return COAL_SUCCESS;
  if (p == 0) { /* empty sum: Y = beta*Y */
    const int tx = block_tx(q), ty = kThreads / tx;
    const int64_t gy = (q + tx - 1) / tx;
    COAL_CHECK(ctx, gy <= kMaxGridY, COAL_ERR_ARG, "gemm: too many columns (%lld)", (long long)q);
    dim3 grid(rows_grid(ctx, n, ty, gy, 0), (unsigned)gy), block((unsigned)tx, (unsigned)ty);
    scale_kernel<<<grid, block, 0, coal_stream(ctx)>>>(n, q, beta, Y, ldy);
    COAL_CUDA_LAUNCH_CHECK(ctx);
    return COAL_SUCCESS;
  }
  COAL_CHECK(ctx, p <= INT_MAX && q <= INT_MAX && ldx <= INT_MAX && ldy <= INT_MAX, COAL_ERR_ARG,
             "gemm: sizes beyond the cuBLAS 32-bit interface (p=%lld q=%lld ldx=%lld ldy=%lld)",
             (long long)p, (long long)q, (long long)ldx, (long long)ldy);
  void *cd = NULL;
  COAL_CALL(coal_ws_small(ctx, sizeof(double) * (size_t)p * (size_t)q, &cd));
  /* pageable source: returns once C is staged, so the caller may reuse it */
  COAL_CUDA_CALL(ctx, cudaMemcpy2DAsync(cd, sizeof(double) * (size_t)q, C,
                                        sizeof(double) * (size_t)ldc, sizeof(double) * (size_t)q,
                                        (size_t)p, cudaMemcpyHostToDevice, coal_stream(ctx)));
  for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
    const int64_t nb = n - i0 < kChunk ? n - i0 : kChunk;
    /* column-major: Y^T (q x nb) = a C^T (q x p, ld q) X^T (p x nb, ld ldx) + beta Y^T */
    COAL_CUBLAS_CALL(ctx, cublasDgemm(ctx->cuda->blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)q, (int)nb,
                                      (int)p, &a, (const double *)cd, (int)q, X + i0 * ldx,
                                      (int)ldx, &beta, Y + i0 * ldy, (int)ldy));
  }
  return COAL_SUCCESS;
}

coal_status coal_blas_dscale_cuda(coal_ctx ctx, int64_t n, int64_t k, const double *d,
                                  const double *X, int64_t ldx, double *Y, int64_t ldy,
                                  double *nrm2) {
  if (k == 0) return COAL_SUCCESS;
  if (n == 0) {
    if (nrm2)
      for (int64_t j = 0; j < k; j++) nrm2[j] = 0.0;
    return COAL_SUCCESS;
  }
  if (Y == X && !d) Y = NULL; /* in-place copy: nothing to write */
  if (!Y && !nrm2) return COAL_SUCCESS;
  const int tx = block_tx(k), ty = kThreads / tx;
  const int64_t gy = (k + tx - 1) / tx;
  COAL_CHECK(ctx, gy <= kMaxGridY, COAL_ERR_ARG, "dscale: too many columns (%lld)", (long long)k);
  const unsigned gx = rows_grid(ctx, n, ty, gy, nrm2 ? kMaxPart : 0);
  dim3 grid(gx, (unsigned)gy), block((unsigned)tx, (unsigned)ty);
  cudaStream_t s = coal_stream(ctx);
  if (!nrm2) {
    dscale_kernel<false><<<grid, block, 0, s>>>(n, k, d, X, ldx, Y, ldy, NULL);
    COAL_CUDA_LAUNCH_CHECK(ctx);
    return COAL_SUCCESS;
  }
  const size_t bytes = sizeof(double) * (size_t)k;
  double *part = NULL;
  void *out = NULL, *outh = NULL;
  COAL_CALL(coal_ws_part(ctx, (size_t)gx * (size_t)k, &part));
  COAL_CALL(coal_ws_small(ctx, bytes, &out));
  COAL_CALL(coal_ws_pinned(ctx, bytes, &outh));
  dscale_kernel<true><<<grid, block, 0, s>>>(n, k, d, X, ldx, Y, ldy, part);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  colsum_kernel<<<coal_cuda_grid(k, kThreads), kThreads, 0, s>>>(part, (int)gx, k, (double *)out);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  COAL_CUDA_CALL(ctx, cudaMemcpyAsync(outh, out, bytes, cudaMemcpyDeviceToHost, s));
  COAL_CUDA_CALL(ctx, cudaStreamSynchronize(s));
  memcpy(nrm2, outh, bytes);
  return COAL_SUCCESS;
}

coal_status coal_blas_eig_resid_cuda(coal_ctx ctx, int64_t n, int64_t q, const double *AX,
                                     const double *MX, int64_t ldx, const int32_t *cols,
                                     const double *lam, const double *d, double *W, int64_t ldw,
                                     double *nrm2) {
  if (q == 0) return COAL_SUCCESS;
  if (n == 0) {
    for (int64_t a = 0; a < q; a++) nrm2[a] = 0.0;
    return COAL_SUCCESS;
  }
  const int tx = block_tx(q), ty = kThreads / tx;
  const int64_t gy = (q + tx - 1) / tx;
  COAL_CHECK(ctx, gy <= kMaxGridY, COAL_ERR_ARG, "eig_resid: too many columns (%lld)",
             (long long)q);
  const unsigned gx = rows_grid(ctx, n, ty, gy, kMaxPart);
  cudaStream_t s = coal_stream(ctx);
  /* device staging: [cols (q int32, padded to 256 B) | lam (q) | out (q)] */
  const size_t cb = (sizeof(int32_t) * (size_t)q + 255) / 256 * 256,
               db = sizeof(double) * (size_t)q;
  void *ws = NULL, *outh = NULL;
  double *part = NULL;
  COAL_CALL(coal_ws_small(ctx, cb + 2 * db, &ws));
  COAL_CALL(coal_ws_part(ctx, (size_t)gx * (size_t)q, &part));
  COAL_CALL(coal_ws_pinned(ctx, db, &outh));
  int32_t *cd = (int32_t *)ws;
  double *ld = (double *)((char *)ws + cb), *out = ld + q;
  /* pageable sources: staged before return */
  COAL_CUDA_CALL(ctx,
                 cudaMemcpyAsync(cd, cols, sizeof(int32_t) * (size_t)q, cudaMemcpyHostToDevice, s));
  COAL_CUDA_CALL(ctx, cudaMemcpyAsync(ld, lam, db, cudaMemcpyHostToDevice, s));
  dim3 grid(gx, (unsigned)gy), block((unsigned)tx, (unsigned)ty);
  eig_resid_kernel<<<grid, block, 0, s>>>(n, q, AX, MX, ldx, cd, ld, d, W, ldw, part);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  colsum_kernel<<<coal_cuda_grid(q, kThreads), kThreads, 0, s>>>(part, (int)gx, q, out);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  COAL_CUDA_CALL(ctx, cudaMemcpyAsync(outh, out, db, cudaMemcpyDeviceToHost, s));
  COAL_CUDA_CALL(ctx, cudaStreamSynchronize(s));
  memcpy(nrm2, outh, db);
  return COAL_SUCCESS;
}

coal_status coal_blas_copy_cols_cuda(coal_ctx ctx, int64_t n, int64_t q, const double *X,
                                     coal_layout lx, int64_t ldx, const int32_t *xcols, double *Y,
                                     coal_layout ly, int64_t ldy, const int32_t *ycols) {
  if (n == 0 || q == 0) return COAL_SUCCESS;
  cudaStream_t s = coal_stream(ctx);
  const int32_t *xc = NULL, *yc = NULL;
  if (xcols || ycols) {
    const size_t mb = sizeof(int32_t) * (size_t)q, off = (mb + 255) / 256 * 256;
    void *w = NULL;
    COAL_CALL(coal_ws_small(ctx, off + mb, &w));
    /* pageable sources: staged before return */
    if (xcols) {
      COAL_CUDA_CALL(ctx, cudaMemcpyAsync(w, xcols, mb, cudaMemcpyHostToDevice, s));
      xc = (const int32_t *)w;
    }
    if (ycols) {
      COAL_CUDA_CALL(ctx, cudaMemcpyAsync((char *)w + off, ycols, mb, cudaMemcpyHostToDevice, s));
      yc = (const int32_t *)((char *)w + off);
    }
  }
  const bool xrow = lx == COAL_ROW_MAJOR, yrow = ly == COAL_ROW_MAJOR;
  if (xrow && yrow) {
    const int tx = block_tx(q), ty = kThreads / tx;
    const int64_t gy = (q + tx - 1) / tx;
    COAL_CHECK(ctx, gy <= kMaxGridY, COAL_ERR_ARG, "copy_cols: too many columns (%lld)",
               (long long)q);
    dim3 grid(rows_grid(ctx, n, ty, gy, 0), (unsigned)gy), block((unsigned)tx, (unsigned)ty);
    copy_rr_kernel<<<grid, block, 0, s>>>(n, q, X, ldx, xc, Y, ldy, yc);
  } else if (!xrow && !yrow) {
    const int64_t gy = q < kMaxGridY ? q : kMaxGridY;
    dim3 grid(rows_grid(ctx, n, kThreads, gy, 0), (unsigned)gy);
    copy_cc_kernel<<<grid, kThreads, 0, s>>>(n, q, X, ldx, xc, Y, ldy, yc);
  } else {
    const int64_t gy = (q + 31) / 32;
    COAL_CHECK(ctx, gy <= kMaxGridY, COAL_ERR_ARG, "copy_cols: too many columns (%lld)",
               (long long)q);
    dim3 grid(rows_grid(ctx, n, 32, gy, 0), (unsigned)gy), block(32, kThreads / 32);
    copy_tile_kernel<<<grid, block, 0, s>>>(n, q, X, xrow, ldx, xc, Y, yrow, ldy, yc);
  }
  COAL_CUDA_LAUNCH_CHECK(ctx);
  return COAL_SUCCESS;
}

coal_status coal_blas_cg_dot_cuda(coal_ctx ctx, int64_t n, const double *x, const double *y,
                                  double *sc, int slot) {
  cudaStream_t s = coal_stream(ctx);
  const bool vec = aligned16(x) && aligned16(y);
  const int g = n > 0 ? reduce_grid(ctx, vec ? (n + 1) / 2 : n) : 0;
  double *part = NULL;
  COAL_CALL(coal_ws_part(ctx, 2 * kMaxPart, &part)); /* the size cg_update_xr needs */
  if (g > 0) {
    if (vec)
      dot_kernel<true><<<g, kThreads, 0, s>>>(n, x, y, part);
    else
      dot_kernel<false><<<g, kThreads, 0, s>>>(n, x, y, part);
    COAL_CUDA_LAUNCH_CHECK(ctx);
  }
  final_sum_kernel<1><<<1, kThreads, 0, s>>>(part, g, sc + slot, NULL);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  return COAL_SUCCESS;
}

coal_status coal_blas_cg_update_xr_cuda(coal_ctx ctx, int64_t n, double *sc, int par, double *x,
                                        double *r, const double *p, const double *q,
                                        const double *dinv) {
  cudaStream_t s = coal_stream(ctx);
  const bool vec =
      aligned16(x) && aligned16(r) && aligned16(p) && aligned16(q) && (!dinv || aligned16(dinv));
  const int g = n > 0 ? reduce_grid(ctx, vec ? (n + 1) / 2 : n) : 0;
  double *part = NULL;
  COAL_CALL(coal_ws_part(ctx, 2 * kMaxPart, &part));
  if (g > 0) {
    if (vec)
      (dinv ? launch_xr<true, true> : launch_xr<true, false>)(g, s, n, sc, par, x, r, p, q, dinv,
                                                              part);
    else
      (dinv ? launch_xr<false, true> : launch_xr<false, false>)(g, s, n, sc, par, x, r, p, q, dinv,
                                                                part);
    COAL_CUDA_LAUNCH_CHECK(ctx);
  }
  final_sum_kernel<2><<<1, kThreads, 0, s>>>(part, g, sc + COAL_CG_RZ + 1 - par, sc + COAL_CG_RR);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  return COAL_SUCCESS;
}

coal_status coal_blas_cg_update_p_cuda(coal_ctx ctx, int64_t n, const double *sc, int par,
                                       double *p, const double *r, const double *dinv) {
  if (n == 0) return COAL_SUCCESS;
  const bool vec = aligned16(p) && aligned16(r) && (!dinv || aligned16(dinv));
  const int g = reduce_grid(ctx, vec ? (n + 1) / 2 : n);
  cudaStream_t s = coal_stream(ctx);
  if (vec)
    (dinv ? launch_p<true, true> : launch_p<true, false>)(g, s, n, sc, par, p, r, dinv);
  else
    (dinv ? launch_p<false, true> : launch_p<false, false>)(g, s, n, sc, par, p, r, dinv);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  return COAL_SUCCESS;
}

coal_status coal_blas_jacobi_cuda(coal_mat A, double *dinv, int64_t *bad) {
  coal_ctx ctx = A->ctx;
  const int32_t n = A->nrows;
  *bad = -1;
  if (n == 0) return COAL_SUCCESS;
  struct coal_mat_cuda *d = NULL;
  COAL_CALL(coal_mat_prepare_cuda(A));
  COAL_CALL(coal_cuda_mat(A, &d));
  void *flag = NULL, *h = NULL;
  COAL_CALL(coal_ws_small(ctx, sizeof(int32_t), &flag));
  COAL_CALL(coal_ws_pinned(ctx, sizeof(int32_t), &h));
  COAL_CUDA_CALL(
      ctx, cudaMemcpyAsync(flag, &n, sizeof(int32_t), cudaMemcpyHostToDevice, coal_stream(ctx)));
  jacobi_kernel<<<coal_cuda_grid(n, 256), 256, 0, coal_stream(ctx)>>>(
      n, d->rowptr, d->colind, (const double *)d->values, dinv, (int32_t *)flag);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  COAL_CUDA_CALL(
      ctx, cudaMemcpyAsync(h, flag, sizeof(int32_t), cudaMemcpyDeviceToHost, coal_stream(ctx)));
  COAL_CUDA_CALL(ctx, cudaStreamSynchronize(coal_stream(ctx)));
  const int32_t b = *(const int32_t *)h;
  *bad = b < n ? b : -1;
  return COAL_SUCCESS;
}

coal_status coal_blas_resid_dd_cuda(coal_mat A, int64_t k, const double *B, coal_layout lb,
                                    int64_t ldb, const double *X, coal_layout lx, int64_t ldx,
                                    double *R) {
  coal_ctx ctx = A->ctx;
  const int32_t n = A->nrows;
  if (n == 0 || k == 0) return COAL_SUCCESS;
  struct coal_mat_cuda *d = NULL;
  COAL_CALL(coal_mat_prepare_cuda(A));
  COAL_CALL(coal_cuda_mat(A, &d));
  const int64_t total = (int64_t)n * k;
  resid_dd_kernel<<<(unsigned)((total + 255) / 256), 256, 0, coal_stream(ctx)>>>(
      n, k, d->rowptr, d->colind, (const double *)d->values, B, lb == COAL_COL_MAJOR, ldb, X,
      lx == COAL_COL_MAJOR, ldx, R);
  COAL_CUDA_LAUNCH_CHECK(ctx);
  return COAL_SUCCESS;
}
