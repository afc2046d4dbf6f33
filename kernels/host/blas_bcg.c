/* Host twins of the Block-CG steps (kernels/blas.h: bcg_gram, bcg_update, bcg_dir; the CUDA
 * versions are in kernels/cuda/blas_bcg.cu): plain loops, sums in double in row order. They
 * define the results the CUDA versions are tested against. */
#include "../blas.h"

static void zero(double *a, int64_t count) {
  for (int64_t i = 0; i < count; i++) a[i] = 0.0;
}

/* G += x^T y for one row: x p entries, y q entries, G p x q tight. */
static void rank1(int64_t p, int64_t q, const double *x, const double *y, double *G) {
  for (int64_t a = 0; a < p; a++) {
    const double xa = x[a];
    double *g = G + a * q;
    for (int64_t b = 0; b < q; b++) g[b] += xa * y[b];
  }
}

/* The same for the scaled rows dx x and dy y, each entry scaled as it is used (the products
 * round as those of a stored scaled row would). */
static void rank1s(int64_t p, int64_t q, double dx, const double *x, double dy, const double *y,
                   double *G) {
  for (int64_t a = 0; a < p; a++) {
    const double xa = dx * x[a];
    double *g = G + a * q;
    for (int64_t b = 0; b < q; b++) g[b] += xa * (dy * y[b]);
  }
}

/* y (q entries) = sum over c < p of x[c] * C[c, :], in index order. */
static void row_times(int64_t p, int64_t q, const double *x, const double *C, double *y) {
  for (int64_t b = 0; b < q; b++) y[b] = 0.0;
  for (int64_t c = 0; c < p; c++) {
    const double xc = x[c];
    const double *cr = C + c * q;
    for (int64_t b = 0; b < q; b++) y[b] += xc * cr[b];
  }
}

coal_status coal_blas_bcg_gram_host(coal_ctx ctx, int64_t n, int64_t s, int64_t m, const double *P,
                                    const double *Q, const double *R, const double *dinv, double *S,
                                    double *G, double *PP, double *PR) {
  (void)ctx, (void)S;
  zero(G, s * s), zero(PP, s * s), zero(PR, s * m);
  for (int64_t i = 0; i < n; i++) {
    rank1(s, s, P + i * s, Q + i * s, G);
    rank1s(s, s, dinv ? 1.0 / dinv[i] : 1.0, P + i * s, 1.0, P + i * s, PP);
    rank1(s, m, P + i * s, R + i * m, PR);
  }
  return COAL_SUCCESS;
}

/* Rows of at most this many columns are updated through a stack buffer; wider blocks update R
 * by coal_blas_gemm_host first (no allocation either way). */
#define BCG_ROW 256

coal_status coal_blas_bcg_update_host(coal_ctx ctx, int64_t n, int64_t s, int64_t m,
                                      const double *Q, const double *C, double *R,
                                      const double *dinv, double *Z, double *nrm2, double *QZ,
                                      double *RZ) {
  (void)Z;
  if (m > BCG_ROW && s > 0)
    COAL_CALL(coal_blas_gemm_host(ctx, n, s, m, -1.0, Q, s, C, m, 1.0, R, m));
  double t[BCG_ROW];
  zero(nrm2, m), zero(QZ, s * m);
  if (RZ) zero(RZ, m * m);
  for (int64_t i = 0; i < n; i++) {
    double *r = R + i * m;
    const double *q = Q + i * s;
    if (s > 0 && m <= BCG_ROW) {
      row_times(s, m, q, C, t);
      for (int64_t j = 0; j < m; j++) r[j] -= t[j];
    }
    const double di = dinv ? dinv[i] : 1.0; /* z = di r */
    for (int64_t j = 0; j < m; j++) nrm2[j] += r[j] * r[j];
    rank1s(s, m, 1.0, q, di, r, QZ);
    if (RZ) rank1s(m, m, 1.0, r, di, r, RZ);
  }
  return COAL_SUCCESS;
}

coal_status coal_blas_bcg_dir_host(coal_ctx ctx, int64_t n, int64_t p1, int64_t p2, int64_t q,
                                   const double *X1, const double *d, const double *C1,
                                   const double *X2, const double *C2, double *Y, const double *C3,
                                   double *X3) {
  (void)ctx;
  for (int64_t i = 0; i < n && q > 0; i++) {
    double *y = Y + i * q;
    const double *x1 = X1 + i * p1, di = d ? d[i] : 1.0;
    for (int64_t b = 0; b < q; b++) y[b] = 0.0;
    for (int64_t c = 0; c < p1; c++) {
      const double xc = di * x1[c];
      for (int64_t b = 0; b < q; b++) y[b] += xc * C1[c * q + b];
    }
    for (int64_t c = 0; c < p2; c++) {
      const double xc = X2[i * p2 + c];
      for (int64_t b = 0; b < q; b++) y[b] += xc * C2[c * q + b];
    }
  }
  for (int64_t i = 0; i < n && X3 && p2 > 0; i++) { /* x3 += x2 C3, the increment summed first */
    double *x3 = X3 + i * p1;
    for (int64_t b = 0; b < p1; b++) {
      double acc = 0.0;
      for (int64_t c = 0; c < p2; c++) acc += X2[i * p2 + c] * C3[c * p1 + b];
      x3[b] += acc;
    }
  }
  return COAL_SUCCESS;
}
