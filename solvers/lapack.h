/* The LAPACK routines the eigensolver and the AMG coarsest level use, through the Fortran interface
 * (no LAPACKE), with row-major wrappers. Symmetric matrices are the same in both orders, so only
 * the eigenvector output is transposed. */
#ifndef COAL_SOLVERS_LAPACK_H
#define COAL_SOLVERS_LAPACK_H

#include <stddef.h>

/* Workspace (in doubles and ints) for coal_lapack_sygv on matrices of order up to m. */
size_t coal_lapack_sygv_dwork(int m);
size_t coal_lapack_sygv_iwork(int m);
/* Generalized symmetric-definite eigenproblem A c = lambda B c (dsygvd, itype 1): A and B m x m
 * row-major (ld m, both triangles read as the upper one); on return w holds the eigenvalues in
 * ascending order and C (m x m row-major, ld m) the B-orthonormal eigenvectors as columns. A
 * and B are overwritten. work/iwork: the sizes above. Returns LAPACK's info: 0 success; in
 * 1..m the QR iteration failed; > m B is not positive definite (leading minor info - m). */
int coal_lapack_sygv(int m, double *A, double *B, double *w, double *C, double *work, int *iwork);

/* Cholesky factorisation A = L L^T of an n x n column-major SPD matrix, lower triangle (lda):
 * dpotrf. Returns LAPACK's info (j > 0: the leading minor of order j is not positive). */
int coal_lapack_potrf(int n, double *A, int lda);
/* Pivoted Cholesky of a symmetric positive semi-definite matrix, lower (dpstrf):
 * P^T A P = L L^T with P the permutation piv (1-based, n entries), *rank the number of pivots
 * above tol (tol < 0: LAPACK's n eps max a_ii); L's leading rank x rank block is the factor.
 * work: 2 n doubles. Returns info (1: rank deficient, which is not an error here). */
int coal_lapack_pstrf(int n, double *A, int lda, int *piv, int *rank, double tol, double *work);

/* Threads of the BLAS/LAPACK in use (OpenBLAS's count; 1 where it cannot be asked): problems of
 * order at most 512 run on one thread whatever this is, and leave it as it was. */
int coal_lapack_threads(void);

#endif
