/* Small dense host routines for Block-CG and LOBPCG (solvers/dense.h). */
#include "dense.h"

#include <math.h>
#include <string.h>

int coal_dense_cholesky(int m, double *G, int ldg) {
  for (int j = 0; j < m; j++) {
    double d = G[j * ldg + j];
    for (int l = 0; l < j; l++) d -= G[j * ldg + l] * G[j * ldg + l];
    if (!(d > 0.0) || !isfinite(d)) return j + 1;
    double ljj = sqrt(d);
    G[j * ldg + j] = ljj;
    for (int i = j + 1; i < m; i++) {
      double s = G[i * ldg + j];
      for (int l = 0; l < j; l++) s -= G[i * ldg + l] * G[j * ldg + l];
      G[i * ldg + j] = s / ljj;
    }
  }
  return 0;
}

void coal_dense_chol_solve(int m, const double *L, int ldl, int q, double *B, int ldb) {
  /* row operations over the q columns (vectorisable); every entry sees the same sequence of
   * operations as a column-by-column substitution */
  for (int i = 0; i < m; i++) { /* L y = b */
    double *bi = B + i * ldb;
    for (int l = 0; l < i; l++) {
      const double v = L[i * ldl + l], *bl = B + l * ldb;
      for (int c = 0; c < q; c++) bi[c] -= v * bl[c];
    }
    const double d = L[i * ldl + i];
    for (int c = 0; c < q; c++) bi[c] /= d;
  }
  for (int i = m - 1; i >= 0; i--) { /* L^T x = y */
    double *bi = B + i * ldb;
    for (int l = i + 1; l < m; l++) {
      const double v = L[l * ldl + i], *bl = B + l * ldb;
      for (int c = 0; c < q; c++) bi[c] -= v * bl[c];
    }
    const double d = L[i * ldl + i];
    for (int c = 0; c < q; c++) bi[c] /= d;
  }
}

void coal_dense_symmetrize(int m, double *G, int ldg) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < i; j++) {
      double v = 0.5 * (G[i * ldg + j] + G[j * ldg + i]);
      G[i * ldg + j] = G[j * ldg + i] = v;
    }
}

/* Pivoted Cholesky of the unit-diagonal Gram S = D^-1/2 G D^-1/2: S(piv, piv) = L L^T over the
 * kept columns; then W D^-1/2 Pi_r L_r^-T is orthonormal. */
int coal_dense_orth_factor(int m, const double *G, int ldg, double drop_tol, double *T, int ldt,
                           int *rank, double *work, int *piv) {
  double mp;
  return coal_dense_orth_factor_pivot(m, G, ldg, drop_tol, T, ldt, rank, work, piv, &mp);
}

int coal_dense_orth_factor_pivot(int m, const double *G, int ldg, double drop_tol, double *T,
                                 int ldt, int *rank, double *work, int *piv, double *min_pivot) {
  double *S = work;         /* m x m scaled Gram */
  double *L = work + m * m; /* m x m pivoted factor, row a = pivot position a */
  double *sc = L + m * m;   /* m column scales 1/||w_j|| (0 for zero columns) */
  double *d = sc + m;       /* m residual diagonal */
  *rank = 0;
  *min_pivot = 0.0;
  for (int j = 0; j < m; j++) {
    double g = G[j * ldg + j];
    if (!isfinite(g)) return -1;
    sc[j] = g > 0.0 ? 1.0 / sqrt(g) : 0.0;
  }
  for (int i = 0; i < m; i++)
    for (int j = 0; j < m; j++) {
      double v = G[i * ldg + j];
      if (!isfinite(v)) return -1;
      S[i * m + j] = v * sc[i] * sc[j];
    }
  for (int j = 0; j < m; j++) {
    piv[j] = j;
    d[j] = sc[j] > 0.0 ? 1.0 : 0.0;
  }
  memset(L, 0, sizeof(double) * (size_t)m * (size_t)m);
  int r = 0;
  for (; r < m; r++) {
    int best = r;
    for (int a = r + 1; a < m; a++)
      if (d[piv[a]] > d[piv[best]]) best = a;
    if (!(d[piv[best]] > drop_tol)) break;
    int t = piv[r];
    piv[r] = piv[best], piv[best] = t;
    /* swap the rows of L built so far, so that row a always belongs to pivot position a */
    for (int l = 0; l < r; l++) {
      double v = L[r * m + l];
      L[r * m + l] = L[best * m + l], L[best * m + l] = v;
    }
    *min_pivot = r == 0 ? d[piv[r]] : fmin(*min_pivot, d[piv[r]]);
    double lrr = sqrt(d[piv[r]]);
    L[r * m + r] = lrr;
    for (int a = r + 1; a < m; a++) {
      double s = S[piv[a] * m + piv[r]];
      for (int l = 0; l < r; l++) s -= L[a * m + l] * L[r * m + l];
      L[a * m + r] = s / lrr;
      d[piv[a]] -= L[a * m + r] * L[a * m + r];
    }
  }
  /* V = L_r^-1 (lower triangular) in S's place (S is not read again), row by row: row i of V is
   * (e_i - sum over l < i of L(i, l) V(l, :)) / L(i, i), so the inner loops run along rows and
   * vectorise (a column-by-column substitution with the scales inside took most of the time) */
  double *V = S;
  for (int i = 0; i < r; i++) {
    double *vi = V + i * m;
    for (int c = 0; c < r; c++) vi[c] = c == i ? 1.0 : 0.0;
    for (int l = 0; l < i; l++) {
      const double v = L[i * m + l], *vl = V + l * m;
      for (int c = 0; c <= l; c++) vi[c] -= v * vl[c];
    }
    const double dd = L[i * m + i];
    for (int c = 0; c <= i; c++) vi[c] /= dd;
  }
  /* T(piv[a], c) = sc[piv[a]] (L_r^-T)(a, c) = sc[piv[a]] V(c, a), zero for c < a and for the
   * dropped columns */
  for (int i = 0; i < m; i++)
    for (int c = 0; c < r; c++) T[i * ldt + c] = 0.0;
  for (int a = 0; a < r; a++) {
    double *t = T + piv[a] * ldt;
    const double sa = sc[piv[a]];
    for (int c = a; c < r; c++) t[c] = sa * V[c * m + a];
  }
  *rank = r;
  return 0;
}
