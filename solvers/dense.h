/* Small dense linear algebra on the host for the block solvers: k x k Gram matrices and
 * coefficient blocks (k up to a few hundred), row-major. O(k^3) with k <= 128 costs at most a
 * few hundred microseconds, far below one block product at the problem sizes the GPU path
 * is for, and it needs no LAPACK. */
#ifndef COAL_SOLVERS_DENSE_H
#define COAL_SOLVERS_DENSE_H

#include <stdint.h>

/* In-place lower Cholesky G = L L^T of an m x m SPD matrix (lower triangle read, L written
 * there). Returns 0, or j+1 when pivot j is not positive or not finite. */
int coal_dense_cholesky(int m, double *G, int ldg);
/* Solves (L L^T) Y = B in place: B m x q, row-major with ldb. */
void coal_dense_chol_solve(int m, const double *L, int ldl, int q, double *B, int ldb);
/* Orthonormalising factor of a block W (n x m) from its Gram matrix G = W^T W: columns are
 * scaled to unit norm, then a Cholesky factorisation with diagonal pivoting keeps the
 * columns whose remaining squared sine to the span of those already kept is above drop_tol
 * (a zero column is always dropped). Writes T (m x rank, row-major, ldt >= m; rows of dropped
 * columns zero) so that W*T has orthonormal columns (up to rounding in the Gram), and the
 * rank. work: 2*m*m + 2*m doubles, piv: m ints. Returns 0, or -1 on a non-finite Gram. */
int coal_dense_orth_factor(int m, const double *G, int ldg, double drop_tol, double *T, int ldt,
                           int *rank, double *work, int *piv);
/* The same, also returning the smallest pivot taken (the squared sine of the last kept column
 * to the span of those before it, 1 for orthonormal columns; 0 when rank is 0). */
int coal_dense_orth_factor_pivot(int m, const double *G, int ldg, double drop_tol, double *T,
                                 int ldt, int *rank, double *work, int *piv, double *min_pivot);
/* (G + G^T)/2 in place: Gram matrices of A-products are symmetric only up to rounding. */
void coal_dense_symmetrize(int m, double *G, int ldg);

#endif
