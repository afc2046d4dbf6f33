/* Wrappers over LAPACK's Fortran dsygvd (row-major), dpotrf and dpstrf (solvers/lapack.h). */
#include "lapack.h"

#include <string.h>

/* Fortran LAPACK; the hidden lengths of the one-character arguments are passed as 1. */
extern void dsygvd_(const int *itype, const char *jobz, const char *uplo, const int *n, double *a,
                    const int *lda, double *b, const int *ldb, double *w, double *work,
                    const int *lwork, int *iwork, const int *liwork, int *info, size_t ljobz,
                    size_t luplo);

extern void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info,
                    size_t luplo);
extern void dpstrf_(const char *uplo, const int *n, double *a, const int *lda, int *piv, int *rank,
                    const double *tol, double *work, int *info, size_t luplo);

int coal_lapack_potrf(int n, double *A, int lda) {
  int info = 0;
  if (n > 0) dpotrf_("L", &n, A, &lda, &info, 1);
  return info;
}

int coal_lapack_pstrf(int n, double *A, int lda, int *piv, int *rank, double tol, double *work) {
  int info = 0;
  *rank = 0;
  if (n > 0) dpstrf_("L", &n, A, &lda, piv, rank, &tol, work, &info, 1);
  return info;
}

size_t coal_lapack_sygv_dwork(int m) {
  size_t s = (size_t)(m > 1 ? m : 1);
  return 1 + 6 * s + 2 * s * s; /* dsygvd with jobz = 'V' */
}

size_t coal_lapack_sygv_iwork(int m) { return 3 + 5 * (size_t)(m > 1 ? m : 1); }

int coal_lapack_sygv(int m, double *A, double *B, double *w, double *C, double *work, int *iwork) {
  if (m == 0) return 0;
  const int itype = 1, lwork = (int)coal_lapack_sygv_dwork(m),
            liwork = (int)coal_lapack_sygv_iwork(m);
  int info = 0;
  /* a symmetric row-major matrix is its own column-major transpose: the 'U' triangle read by
   * LAPACK is the row-major lower one, equal to the upper */
  dsygvd_(&itype, "V", "U", &m, A, &m, B, &m, w, work, &lwork, iwork, &liwork, &info, 1, 1);
  if (info) return info;
  /* A now holds the eigenvectors column-major: vector j at A[j*m .. j*m+m) */
  for (int i = 0; i < m; i++)
    for (int j = 0; j < m; j++) C[i * m + j] = A[j * m + i];
  return 0;
}
