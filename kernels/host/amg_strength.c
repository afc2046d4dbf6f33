/* Host twins of the AMG diagonal and strength-of-connection kernels (kernels/amg.h): one sweep
 * over the rows each, row i reading only its own row and the diagonal. */
#include "../amg.h"

#include <math.h>

coal_status coal_amg_diagonal_host(coal_ctx ctx, int32_t n, const int32_t *rowptr,
                                   const int32_t *colind, const double *val, double *diag) {
  (void)ctx;
  for (int32_t i = 0; i < n; i++) {
    double d = 0.0;
    for (int32_t p = rowptr[i]; p < rowptr[i + 1]; p++)
      if (colind[p] == i) d = val[p];
    diag[i] = d;
  }
  return COAL_SUCCESS;
}

coal_status coal_amg_dinv_host(coal_ctx ctx, int32_t n, const int32_t *rowptr,
                               const int32_t *colind, const double *val, int l1, double *dinv,
                               int64_t *bad) {
  (void)ctx;
  *bad = -1;
  for (int32_t i = 0; i < n; i++) {
    double d = 0.0, s = 0.0;
    for (int32_t p = rowptr[i]; p < rowptr[i + 1]; p++) {
      if (colind[p] == i) d = val[p];
      s += fabs(val[p]); /* in row order */
    }
    if (!(d > 0.0 && isfinite(d))) { /* the row keeps its a_ii for the caller's message */
      if (*bad < 0) *bad = i;
      dinv[i] = d;
    } else {
      dinv[i] = 1.0 / (l1 ? s : d);
    }
  }
  return COAL_SUCCESS;
}

/* Strong: a_ij != 0 and a_ij^2 >= (theta^2 |a_ii|) |a_jj|, products in that order. */
static inline int strong(double aij, double t2, double di, double dj) {
  const double lhs = aij * aij, rhs = (t2 * fabs(di)) * fabs(dj);
  return aij != 0.0 && lhs >= rhs;
}

coal_status coal_amg_strength_count_host(coal_ctx ctx, int32_t n, const int32_t *rowptr,
                                         const int32_t *colind, const double *val,
                                         const double *diag, double theta, int32_t *srowptr) {
  (void)ctx;
  const double t2 = theta * theta;
  srowptr[0] = 0;
  for (int32_t i = 0; i < n; i++) {
    int32_t c = 0;
    for (int32_t p = rowptr[i]; p < rowptr[i + 1]; p++) {
      const int32_t j = colind[p];
      c += j != i && strong(val[p], t2, diag[i], diag[j]);
    }
    srowptr[i + 1] = srowptr[i] + c; /* the scan, in the same sweep on the host */
  }
  return COAL_SUCCESS;
}

coal_status coal_amg_strength_fill_host(coal_ctx ctx, int32_t n, const int32_t *rowptr,
                                        const int32_t *colind, const double *val,
                                        const double *diag, double theta, const int32_t *srowptr,
                                        int32_t *scolind, double *sval) {
  (void)ctx;
  const double t2 = theta * theta;
  for (int32_t i = 0; i < n; i++) {
    int32_t q = srowptr[i];
    for (int32_t p = rowptr[i]; p < rowptr[i + 1]; p++) {
      const int32_t j = colind[p];
      if (j == i || !strong(val[p], t2, diag[i], diag[j])) continue;
      scolind[q] = j;
      if (sval) sval[q] = fabs(val[p]) / sqrt(fabs(diag[i]) * fabs(diag[j]));
      q++;
    }
  }
  return COAL_SUCCESS;
}

coal_status coal_amg_filter_host(coal_ctx ctx, int32_t n, const int32_t *rowptr,
                                 const int32_t *colind, const double *val, const double *b,
                                 const int32_t *srowptr, const int32_t *scolind, int32_t *frowptr,
                                 int32_t *fcolind, double *fval) {
  (void)ctx;
  for (int32_t i = 0; i <= n; i++) frowptr[i] = srowptr[i] + i;
  for (int32_t i = 0; i < n; i++) {
    /* the strong columns are a subsequence of the row's: one merge walk */
    int32_t q = srowptr[i], f = frowptr[i], fd = -1;
    const int32_t qend = srowptr[i + 1];
    double d = 0.0, w = 0.0;
    for (int32_t p = rowptr[i]; p < rowptr[i + 1]; p++) {
      const int32_t j = colind[p];
      if (j > i && fd < 0) fd = f++; /* the diagonal's place, A storing none */
      if (j == i) {
        d = val[p];
        fd = f++;
      } else if (q < qend && scolind[q] == j) {
        fcolind[f] = j, fval[f] = val[p];
        f++, q++;
      } else {
        w += val[p] * b[j]; /* weak or zero: lumped */
      }
    }
    if (fd < 0) fd = f++;
    fcolind[fd] = i, fval[fd] = d + w / b[i];
  }
  return COAL_SUCCESS;
}
