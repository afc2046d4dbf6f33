/* The LAPACK routines the eigensolver uses, through the Fortran interface (no LAPACKE), with
 * row-major wrappers. Symmetric matrices are the same in both orders, so only the eigenvector
 * output is transposed. */
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

#endif
