/* Host twins of the dense block operations (kernels/blas.h): plain loops, sums in double in
 * index order. They define the results the CUDA versions are tested against. */
#include "../blas.h"
#include "../dd.h"

#include <math.h>
#include <string.h>

coal_status coal_blas_gram_host(coal_ctx ctx, int64_t n, int64_t p, int64_t q, const double *X,
                                int64_t ldx, const double *Y, int64_t ldy, double *G, int64_t ldg) {
  (void)ctx;
  for (int64_t a = 0; a < p; a++)
    for (int64_t b = 0; b < q; b++) G[a * ldg + b] = 0.0;
  /* row by row: each row of X and Y is read once (row-major blocks) */
  for (int64_t i = 0; i < n; i++) {
    const double *x = X + i * ldx, *y = Y + i * ldy;
    for (int64_t a = 0; a < p; a++) {
      double xa = x[a];
      double *g = G + a * ldg;
      for (int64_t b = 0; b < q; b++) g[b] += xa * y[b];
    }
  }
  return COAL_SUCCESS;
}

/* Columns of Y summed at a time in a stack buffer (no allocation per call). */
#define GEMM_COLS 256

coal_status coal_blas_gemm_host(coal_ctx ctx, int64_t n, int64_t p, int64_t q, double a,
                                const double *X, int64_t ldx, const double *C, int64_t ldc,
                                double beta, double *Y, int64_t ldy) {
  (void)ctx;
  double s[GEMM_COLS];
  for (int64_t i = 0; i < n; i++) {
    const double *x = X + i * ldx;
    double *y = Y + i * ldy;
    for (int64_t b0 = 0; b0 < q; b0 += GEMM_COLS) {
      int64_t nb = q - b0 < GEMM_COLS ? q - b0 : GEMM_COLS;
      /* s = x^T C(:, b0..b0+nb), summed over c in index order for every column */
      for (int64_t b = 0; b < nb; b++) s[b] = 0.0;
      for (int64_t c = 0; c < p; c++) {
        double xc = x[c];
        const double *cr = C + c * ldc + b0;
        for (int64_t b = 0; b < nb; b++) s[b] += xc * cr[b];
      }
      for (int64_t b = 0; b < nb; b++)
        y[b0 + b] = beta == 0.0 ? a * s[b] : a * s[b] + beta * y[b0 + b];
    }
  }
  return COAL_SUCCESS;
}

coal_status coal_blas_dscale_host(coal_ctx ctx, int64_t n, int64_t k, const double *d,
                                  const double *X, int64_t ldx, double *Y, int64_t ldy,
                                  double *nrm2) {
  (void)ctx;
  if (nrm2)
    for (int64_t j = 0; j < k; j++) nrm2[j] = 0.0;
  for (int64_t i = 0; i < n; i++) {
    const double *x = X + i * ldx;
    double di = d ? d[i] : 1.0;
    if (nrm2)
      for (int64_t j = 0; j < k; j++) nrm2[j] += x[j] * x[j];
    if (Y) {
      double *y = Y + i * ldy;
      for (int64_t j = 0; j < k; j++) y[j] = di * x[j];
    }
  }
  return COAL_SUCCESS;
}

coal_status coal_blas_copy_cols_host(coal_ctx ctx, int64_t n, int64_t q, const double *X,
                                     coal_layout lx, int64_t ldx, const int32_t *xcols, double *Y,
                                     coal_layout ly, int64_t ldy, const int32_t *ycols) {
  (void)ctx;
  for (int64_t j = 0; j < q; j++) {
    int64_t xj = xcols ? xcols[j] : j, yj = ycols ? ycols[j] : j;
    for (int64_t i = 0; i < n; i++)
      Y[coal_block_index(ly, ldy, i, yj)] = X[coal_block_index(lx, ldx, i, xj)];
  }
  return COAL_SUCCESS;
}

coal_status coal_blas_eig_resid_host(coal_ctx ctx, int64_t n, int64_t q, const double *AX,
                                     const double *MX, int64_t ldx, const int32_t *cols,
                                     const double *lam, const double *d, double *W, int64_t ldw,
                                     double *nrm2) {
  (void)ctx;
  for (int64_t a = 0; a < q; a++) nrm2[a] = 0.0;
  for (int64_t i = 0; i < n; i++) {
    const double *ax = AX + i * ldx, *mx = MX + i * ldx;
    const double di = d ? d[i] : 1.0;
    for (int64_t a = 0; a < q; a++) {
      const double r = ax[cols[a]] - lam[a] * mx[cols[a]];
      nrm2[a] += r * r;
      if (W) W[i * ldw + a] = di * r;
    }
  }
  return COAL_SUCCESS;
}

coal_status coal_blas_cg_dot_host(coal_ctx ctx, int64_t n, const double *x, const double *y,
                                  double *sc, int slot) {
  (void)ctx;
  double s = 0.0;
  for (int64_t i = 0; i < n; i++) s += x[i] * y[i];
  sc[slot] = s;
  return COAL_SUCCESS;
}

coal_status coal_blas_cg_update_xr_host(coal_ctx ctx, int64_t n, double *sc, int par, double *x,
                                        double *r, const double *p, const double *q,
                                        const double *dinv) {
  (void)ctx;
  double alpha = sc[COAL_CG_RZ + par] / sc[COAL_CG_PQ];
  double rz = 0.0, rr = 0.0;
  for (int64_t i = 0; i < n; i++) {
    x[i] += alpha * p[i];
    double ri = r[i] - alpha * q[i];
    r[i] = ri;
    rz += ri * ri * (dinv ? dinv[i] : 1.0);
    rr += ri * ri;
  }
  sc[COAL_CG_RZ + 1 - par] = rz;
  sc[COAL_CG_RR] = rr;
  return COAL_SUCCESS;
}

coal_status coal_blas_cg_update_p_host(coal_ctx ctx, int64_t n, const double *sc, int par,
                                       double *p, const double *r, const double *dinv) {
  (void)ctx;
  double beta = sc[COAL_CG_RZ + 1 - par] / sc[COAL_CG_RZ + par];
  for (int64_t i = 0; i < n; i++) p[i] = (dinv ? dinv[i] : 1.0) * r[i] + beta * p[i];
  return COAL_SUCCESS;
}

coal_status coal_blas_jacobi_host(coal_mat A, double *dinv, int64_t *bad) {
  COAL_CALL(coal_mat_host(A));
  const double *v = (const double *)A->values;
  *bad = -1;
  for (int32_t i = 0; i < A->nrows; i++) {
    double di = 0.0;
    for (int32_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
      if (A->colind[p] == i) di = v[p];
    const int ok = di > 0.0 && isfinite(di);
    dinv[i] = ok ? 1.0 / di : di;
    if (!ok && *bad < 0) *bad = i;
  }
  return COAL_SUCCESS;
}

coal_status coal_blas_resid_dd_host(coal_mat A, int64_t k, const double *B, coal_layout lb,
                                    int64_t ldb, const double *X, coal_layout lx, int64_t ldx,
                                    double *R) {
  COAL_CALL(coal_mat_host(A));
  const double *v = (const double *)A->values;
  const int bcol = lb == COAL_COL_MAJOR, xcol = lx == COAL_COL_MAJOR;
  for (int32_t i = 0; i < A->nrows; i++)
    for (int64_t j = 0; j < k; j++) {
      double hi = B[bcol ? j * ldb + i : i * ldb + j], lo = 0.0;
      for (int32_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
        const int64_t c = A->colind[p];
        coal_dd_sub_prod(&hi, &lo, v[p], X[xcol ? j * ldx + c : c * ldx + j]);
      }
      R[(int64_t)i * k + j] = hi + lo;
    }
  return COAL_SUCCESS;
}
