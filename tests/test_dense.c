/* Host suite: the small dense routines of solvers/dense.c that Block-CG and LOBPCG call every
 * iteration (Cholesky, its solve, the pivoted orthonormalising factor), checked against
 * residuals computed here in long double: L L^T = G, G X = B, and W T orthonormal with W's
 * columns in its span, on blocks with exactly dependent, zero and nearly dependent columns. */
#include "check.h"
#include "dense.h"
#include "lapack.h"

#include <stdint.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double urand(void) { /* uniform in [-1, 1) */
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (double)(rng >> 11) / 4503599627370496.0 - 1.0;
}

/* G (m x m) = W^T W for W n x m row-major, summed in long double. */
static void gram(int n, int m, const double *W, double *G) {
  for (int a = 0; a < m; a++)
    for (int b = 0; b < m; b++) {
      long double s = 0;
      for (int i = 0; i < n; i++) s += (long double)W[i * m + a] * W[i * m + b];
      G[a * m + b] = (double)s;
    }
}

static void test_cholesky(void) {
  enum { M = 20, N = 30, Q = 7 };
  double B[N * M], G[M * M], L[M * M], R[M * Q], X[M * Q];
  for (int i = 0; i < N * M; i++) B[i] = urand();
  gram(N, M, B, G);
  for (int j = 0; j < M; j++) G[j * M + j] += 1.0;
  memcpy(L, G, sizeof G);
  CHECK(coal_dense_cholesky(M, L, M) == 0, "cholesky of an SPD matrix failed");
  double err = 0, gmax = 0;
  for (int a = 0; a < M; a++)
    for (int b = 0; b <= a; b++) {
      long double s = 0;
      for (int l = 0; l <= b; l++) s += (long double)L[a * M + l] * L[b * M + l];
      err = fmax(err, fabs((double)(s - G[a * M + b])));
      gmax = fmax(gmax, fabs(G[a * M + b]));
    }
  CHECK(err <= 1e-14 * M * gmax, "L L^T - G: %.3e (max |G| %.3e)", err, gmax);
  for (int i = 0; i < M * Q; i++) R[i] = X[i] = urand();
  coal_dense_chol_solve(M, L, M, Q, X, Q);
  double res = 0, rmax = 0;
  for (int a = 0; a < M; a++)
    for (int c = 0; c < Q; c++) {
      long double s = 0;
      for (int l = 0; l < M; l++) s += (long double)G[a * M + l] * X[l * Q + c];
      res = fmax(res, fabs((double)(s - R[a * Q + c])));
      rmax = fmax(rmax, fabs(R[a * Q + c]));
    }
  CHECK(res <= 1e-12 * rmax, "G X - B after chol_solve: %.3e", res);
  /* a negative and a NaN pivot are reported at their (1-based) position */
  double D[4 * 4] = {4, 0, 0, 0, 0, 1, 0, 0, 0, 0, -2, 0, 0, 0, 0, 3};
  CHECK(coal_dense_cholesky(4, D, 4) == 3, "negative pivot 3 not reported");
  double E[2 * 2] = {1, 0, 0, NAN};
  CHECK(coal_dense_cholesky(2, E, 2) == 2, "NaN pivot 2 not reported");
}

/* Checks T from the pivoted factor of W's Gram: W T orthonormal to tol, each column of W in the
 * span of W T to tol (relative), rows of T zero exactly for `ndrop` columns (and for column
 * `zero_col` when >= 0). */
static void check_factor(const char *name, int n, int m, const double *W, const double *T, int rank,
                         int ndrop, int zero_col, double tol) {
  CHECK(rank == m - ndrop, "%s: rank %d, expected %d", name, rank, m - ndrop);
  double *Qm = malloc(sizeof(double) * (size_t)n * (size_t)(rank > 0 ? rank : 1));
  for (int i = 0; i < n; i++)
    for (int c = 0; c < rank; c++) {
      long double s = 0;
      for (int a = 0; a < m; a++) s += (long double)W[i * m + a] * T[a * m + c];
      Qm[i * rank + c] = (double)s;
    }
  double orth = 0;
  for (int a = 0; a < rank; a++)
    for (int b = 0; b < rank; b++) {
      long double s = 0;
      for (int i = 0; i < n; i++) s += (long double)Qm[i * rank + a] * Qm[i * rank + b];
      orth = fmax(orth, fabs((double)s - (a == b)));
    }
  CHECK(orth <= tol, "%s: |Q^T Q - I| = %.3e", name, orth);
  double span = 0, *c = malloc(sizeof(double) * (size_t)(rank > 0 ? rank : 1));
  for (int j = 0; j < m; j++) { /* || w_j - Q Q^T w_j || / ||w_j|| */
    long double nw = 0, r2 = 0;
    for (int a = 0; a < rank; a++) {
      long double s = 0;
      for (int i = 0; i < n; i++) s += (long double)Qm[i * rank + a] * W[i * m + j];
      c[a] = (double)s;
    }
    for (int i = 0; i < n; i++) {
      long double p = 0;
      for (int a = 0; a < rank; a++) p += (long double)Qm[i * rank + a] * c[a];
      r2 += (W[i * m + j] - p) * (W[i * m + j] - p);
      nw += (long double)W[i * m + j] * W[i * m + j];
    }
    if (nw > 0) span = fmax(span, sqrt((double)(r2 / nw)));
  }
  free(c);
  CHECK(span <= tol, "%s: a column of W lies %.3e outside span(W T)", name, span);
  int zero_rows = 0;
  for (int a = 0; a < m; a++) {
    int z = 1;
    for (int c = 0; c < rank; c++) z &= T[a * m + c] == 0.0;
    zero_rows += z;
    if (a == zero_col) CHECK(z, "%s: row %d of T (a zero column) is not zero", name, a);
  }
  CHECK(zero_rows == ndrop, "%s: %d zero rows of T, expected %d", name, zero_rows, ndrop);
  free(Qm);
}

static void test_orth_factor(void) {
  enum { N = 200, M = 16 };
  static double W[N * M], G[M * M], T[M * M], T2[M * M], work[2 * M * M + 2 * M];
  int piv[M], rank = -1, rank2 = -1;
  double minp = -1;
  /* independent random columns, then: 3 = 2.5 * 1, 6 = 0, 10 = 4 + 8, 12 = 0 + 1e-9 noise
   * (dropped: squared sine ~1e-18 < 1e-14), 13 = 0 + 1e-4 noise (kept: squared sine ~1e-8) */
  for (int i = 0; i < N; i++) {
    double *w = W + i * M;
    for (int j = 0; j < M; j++) w[j] = urand();
    w[3] = 2.5 * w[1], w[6] = 0.0, w[10] = w[4] + w[8];
    w[12] = w[0] + 1e-9 * urand(), w[13] = w[0] + 1e-4 * urand();
  }
  gram(N, M, W, G);
  CHECK(coal_dense_orth_factor_pivot(M, G, M, 1e-14, T, M, &rank, work, piv, &minp) == 0,
        "orth factor failed");
  /* the kept column 13 costs its squared sine, about 1e-8 (the noise's share of its norm);
   * orthonormality holds to the Gram's rounding over that pivot */
  check_factor("dependent block", N, M, W, T, rank, 4, 6, 1e-6);
  CHECK(minp > 1e-10 && minp < 1e-6, "smallest pivot %.3e, expected about 1e-8", minp);
  CHECK(coal_dense_orth_factor(M, G, M, 1e-14, T2, M, &rank2, work, piv) == 0 && rank2 == rank &&
            memcmp(T, T2, sizeof T) == 0,
        "the factor without the pivot report differs");

  /* orthogonal columns of different lengths: rank m, pivot 1, W T orthonormal to rounding */
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++) W[i * M + j] = i % M == j ? (double)(j + 1) : 0.0;
  gram(N, M, W, G);
  CHECK(coal_dense_orth_factor_pivot(M, G, M, 1e-14, T, M, &rank, work, piv, &minp) == 0,
        "orth factor of orthogonal columns failed");
  check_factor("orthogonal block", N, M, W, T, rank, 0, -1, 1e-14);
  CHECK(fabs(minp - 1.0) <= 1e-14, "orthogonal block: smallest pivot %.17g", minp);

  /* random well-conditioned block with no dependence */
  for (int i = 0; i < N * M; i++) W[i] = urand();
  gram(N, M, W, G);
  CHECK(coal_dense_orth_factor_pivot(M, G, M, 1e-14, T, M, &rank, work, piv, &minp) == 0,
        "orth factor of a random block failed");
  check_factor("random block", N, M, W, T, rank, 0, -1, 1e-12);

  /* zero Gram: rank 0, pivot 0; a non-finite Gram is refused */
  memset(G, 0, sizeof G);
  CHECK(coal_dense_orth_factor_pivot(M, G, M, 1e-14, T, M, &rank, work, piv, &minp) == 0 &&
            rank == 0 && minp == 0.0,
        "zero Gram: rank %d, pivot %g", rank, minp);
  gram(N, M, W, G);
  G[2 * M + 5] = G[5 * M + 2] = NAN;
  CHECK(coal_dense_orth_factor_pivot(M, G, M, 1e-14, T, M, &rank, work, piv, &minp) == -1,
        "a NaN in the Gram not refused");
  gram(N, M, W, G);
  G[7 * M + 7] = INFINITY;
  CHECK(coal_dense_orth_factor_pivot(M, G, M, 1e-14, T, M, &rank, work, piv, &minp) == -1,
        "an infinite diagonal not refused");
}

/* The generalised eigenproblem of the Rayleigh-Ritz step (order 60, LOBPCG's with a block of
 * 20): residuals ||A c - lambda B c|| and B-orthonormality in long double; the BLAS thread
 * count the same before and after (small problems run on one thread and restore it). */
static void test_sygv(void) {
  enum { M = 60 };
  static double A[M * M], B[M * M], A0[M * M], B0[M * M], W[M * M], C[M * M], w[M];
  for (int i = 0; i < M * M; i++) W[i] = urand();
  gram(M, M, W, B0);
  for (int i = 0; i < M; i++) B0[i * M + i] += M; /* SPD, well conditioned */
  for (int i = 0; i < M; i++)
    for (int j = 0; j <= i; j++) A0[i * M + j] = A0[j * M + i] = urand();
  memcpy(A, A0, sizeof A), memcpy(B, B0, sizeof B);
  const int threads = coal_lapack_threads();
  double *work = malloc(sizeof(double) * coal_lapack_sygv_dwork(M));
  int *iwork = malloc(sizeof(int) * coal_lapack_sygv_iwork(M));
  const int info = coal_lapack_sygv(M, A, B, w, C, work, iwork);
  CHECK(info == 0, "dsygvd info %d", info);
  CHECK(coal_lapack_threads() == threads, "BLAS threads %d before, %d after", threads,
        coal_lapack_threads());
  long double worst = 0, orth = 0;
  for (int j = 0; j < M; j++) {
    for (int i = 0; i < M; i++) {
      long double r = 0;
      for (int k = 0; k < M; k++)
        r += ((long double)A0[i * M + k] - (long double)w[j] * B0[i * M + k]) * C[k * M + j];
      worst = fmaxl(worst, fabsl(r));
    }
    for (int l = 0; l < M; l++) {
      long double s = 0;
      for (int i = 0; i < M; i++)
        for (int k = 0; k < M; k++) s += (long double)C[i * M + j] * B0[i * M + k] * C[k * M + l];
      orth = fmaxl(orth, fabsl(s - (j == l)));
    }
  }
  CHECK(worst < 1e-10 && orth < 1e-10, "dsygvd: residual %Lg, B-orthonormality %Lg", worst, orth);
  CHECK(w[0] <= w[M - 1], "eigenvalues not ascending");
  free(work), free(iwork);
}

int main(void) {
  test_cholesky();
  test_orth_factor();
  test_sygv();
  return check_finish();
}
