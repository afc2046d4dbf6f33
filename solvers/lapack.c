/* Wrappers over LAPACK's Fortran dsygvd (row-major), dpotrf and dpstrf (solvers/lapack.h).
 *
 * Small problems run on one thread. OpenBLAS's threads busy-wait for work after each parallel
 * call: on the LOBPCG's Rayleigh-Ritz problems (order 3 x the block, about 60) a 16-thread
 * OpenBLAS spent more system time spinning than the solve's whole wall time (issue 35). Where
 * the LAPACK in use is OpenBLAS (its thread-count functions, weak symbols: absent elsewhere), a
 * problem of order at most COAL_LAPACK_SERIAL_N runs with one thread and the caller's count is
 * restored after it; larger ones (the AMG's coarsest factor of up to 5000 rows) keep every
 * thread. The count is process-wide: a BLAS call of another thread during such a call runs on
 * one thread too. */
#include "lapack.h"

#include <string.h>

#define COAL_LAPACK_SERIAL_N 512

extern int openblas_get_num_threads(void) __attribute__((weak));
extern void openblas_set_num_threads(int n) __attribute__((weak));

/* One thread for an order-n problem where that applies: returns the count to restore (0: none). */
static int serial_begin(int n) {
  if (n > COAL_LAPACK_SERIAL_N || !openblas_get_num_threads || !openblas_set_num_threads) return 0;
  const int t = openblas_get_num_threads();
  if (t <= 1) return 0;
  openblas_set_num_threads(1);
  return t;
}
static void serial_end(int t) {
  if (t > 1) openblas_set_num_threads(t);
}

int coal_lapack_threads(void) { return openblas_get_num_threads ? openblas_get_num_threads() : 1; }

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
  const int t = serial_begin(n);
  if (n > 0) dpotrf_("L", &n, A, &lda, &info, 1);
  serial_end(t);
  return info;
}

int coal_lapack_pstrf(int n, double *A, int lda, int *piv, int *rank, double tol, double *work) {
  int info = 0;
  *rank = 0;
  const int t = serial_begin(n);
  if (n > 0) dpstrf_("L", &n, A, &lda, piv, rank, &tol, work, &info, 1);
  serial_end(t);
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
  const int t = serial_begin(m);
  dsygvd_(&itype, "V", "U", &m, A, &m, B, &m, w, work, &lwork, iwork, &liwork, &info, 1, 1);
  serial_end(t);
  if (info) return info;
  /* A now holds the eigenvectors column-major: vector j at A[j*m .. j*m+m) */
  for (int i = 0; i < m; i++)
    for (int j = 0; j < m; j++) C[i * m + j] = A[j * m + i];
  return 0;
}
