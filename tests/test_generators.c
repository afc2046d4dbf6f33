/* Generators: exact sizes from closed forms, every entry of small stencils against a dense
 * reference built from grid coordinates, symmetry, row sums, diagonal dominance, SPD via a
 * dense Cholesky, the beam and plate (Laplacian squared) against a dense square and their
 * closed-form eigenpairs, determinism of the random generators, power-law statistics, and the
 * generation time of the large sizes; 3-D elasticity against rigid-body modes, a patch test and the
 * strain energy. */
#include "check.h"

#include <stdint.h>
#include <time.h>

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Host copy of a matrix with values widened to double. */
typedef struct {
  int64_t n, m, nnz;
  int64_t *rp;
  int32_t *ci;
  double *v;
} csr;

static int csr_get(coal_ctx ctx, coal_mat A, csr *c) {
  memset(c, 0, sizeof *c);
  CHECK_OK(ctx, coal_mat_size(A, &c->n, &c->m, &c->nnz));
  c->rp = malloc(sizeof(int64_t) * (size_t)(c->n + 1));
  c->ci = malloc(sizeof(int32_t) * (size_t)(c->nnz + 1));
  c->v = malloc(sizeof(double) * (size_t)(c->nnz + 1));
  void *raw = malloc((coal_mat_dtype(A) == COAL_F32 ? 4 : 8) * (size_t)(c->nnz + 1));
  if (!c->rp || !c->ci || !c->v || !raw) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  CHECK_OK(ctx, coal_mat_get_csr(A, c->rp, c->ci, raw));
  for (int64_t p = 0; p < c->nnz; p++)
    c->v[p] = coal_mat_dtype(A) == COAL_F32 ? ((float *)raw)[p] : ((double *)raw)[p];
  free(raw);
  return 1;
}

static void csr_free(csr *c) {
  free(c->rp), free(c->ci), free(c->v);
  memset(c, 0, sizeof *c);
}

/* Columns strictly increasing and in range in every row (canonical CSR). */
static int csr_canonical(const csr *c) {
  if (c->rp[0] != 0 || c->rp[c->n] != c->nnz) return 0;
  for (int64_t i = 0; i < c->n; i++) {
    if (c->rp[i + 1] < c->rp[i]) return 0;
    for (int64_t p = c->rp[i]; p < c->rp[i + 1]; p++) {
      if (c->ci[p] < 0 || c->ci[p] >= c->m) return 0;
      if (p > c->rp[i] && c->ci[p] <= c->ci[p - 1]) return 0;
    }
  }
  return 1;
}

static double *csr_dense(const csr *c) {
  double *d = calloc((size_t)(c->n * c->m) + 1, sizeof(double));
  for (int64_t i = 0; i < c->n; i++)
    for (int64_t p = c->rp[i]; p < c->rp[i + 1]; p++) d[i * c->m + c->ci[p]] += c->v[p];
  return d;
}

/* Dense Cholesky of a copy; 1 if every pivot is positive. */
static int dense_spd(const double *a, int64_t n) {
  double *l = malloc(sizeof(double) * (size_t)(n * n) + 1);
  memcpy(l, a, sizeof(double) * (size_t)(n * n));
  int ok = 1;
  for (int64_t j = 0; j < n && ok; j++) {
    double d = l[j * n + j];
    for (int64_t k = 0; k < j; k++) d -= l[j * n + k] * l[j * n + k];
    if (!(d > 0)) {
      ok = 0;
      break;
    }
    d = sqrt(d);
    l[j * n + j] = d;
    for (int64_t i = j + 1; i < n; i++) {
      double s = l[i * n + j];
      for (int64_t k = 0; k < j; k++) s -= l[i * n + k] * l[j * n + k];
      l[i * n + j] = s / d;
    }
  }
  free(l);
  return ok;
}

/* Reference operator from grid coordinates: kind 5 (2-D, nz = 1), 7 (weights ex, ey, ez)
 * or 27. Natural ordering, x fastest. */
static double *ref_stencil(int64_t nx, int64_t ny, int64_t nz, int kind, double ex, double ey,
                           double ez) {
  int64_t n = nx * ny * nz;
  double *d = calloc((size_t)(n * n) + 1, sizeof(double));
  for (int64_t k = 0; k < nz; k++)
    for (int64_t j = 0; j < ny; j++)
      for (int64_t i = 0; i < nx; i++) {
        int64_t r = i + nx * (j + ny * k);
        d[r * n + r] = kind == 5 ? 4.0 : kind == 27 ? 26.0 : 2.0 * (ex + ey + ez);
        for (int dz = -1; dz <= 1; dz++)
          for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
              int nzero = (dx != 0) + (dy != 0) + (dz != 0);
              if (nzero == 0) continue;
              if (kind != 27 && nzero != 1) continue;
              if (kind == 5 && dz != 0) continue;
              int64_t ii = i + dx, jj = j + dy, kk = k + dz;
              if (ii < 0 || ii >= nx || jj < 0 || jj >= ny || kk < 0 || kk >= nz) continue;
              double w = kind == 7 ? -(dx ? ex : dy ? ey : ez) : -1.0;
              d[r * n + (ii + nx * (jj + ny * kk))] = w;
            }
      }
  return d;
}

static int64_t nnz_formula(int64_t nx, int64_t ny, int64_t nz, int kind) {
  int64_t n = nx * ny * nz;
  if (n == 0) return 0;
  if (kind == 5) return 5 * n - 2 * (nx + ny);
  if (kind == 7) return 7 * n - 2 * (ny * nz + nx * nz + nx * ny);
  return (3 * nx - 2) * (3 * ny - 2) * (3 * nz - 2);
}

static coal_status gen(coal_ctx ctx, int kind, int64_t nx, int64_t ny, int64_t nz, double ex,
                       double ey, double ez, coal_dtype dt, coal_mat *A) {
  if (kind == 5) return coal_gen_laplace2d(ctx, nx, ny, dt, A);
  if (kind == 27) return coal_gen_laplace3d(ctx, nx, ny, nz, 27, dt, A);
  if (ex == 1 && ey == 1 && ez == 1) return coal_gen_laplace3d(ctx, nx, ny, nz, 7, dt, A);
  return coal_gen_aniso3d(ctx, nx, ny, nz, ex, ey, ez, dt, A);
}

/* Beam and plate: L^2 of the 1-D / 2-D Dirichlet Laplacian. Every entry against the dense
 * square of a reference L built from grid coordinates, canonical CSR, symmetry, SPD (dense
 * Cholesky), f32 equal to f64 (integer entries); then, on sizes too large for dense checks, the
 * closed-form extreme eigenpairs (sines; simply supported ends) to rounding, which also pins the
 * condition number the solver tests rely on (beam:300 above 1e9). */
static void test_bilaplace(coal_ctx ctx) {
  static const int64_t dims[][2] = {{1, 1}, {2, 1}, {3, 1}, {5, 1}, {17, 1}, {1, 4},
                                    {3, 4}, {5, 5}, {6, 2}, {7, 7}, {2, 9}};
  for (size_t t = 0; t < sizeof dims / sizeof dims[0]; t++)
    for (int plate = 0; plate < 2; plate++) {
      int64_t nx = dims[t][0], ny = plate ? dims[t][1] : 1, n = nx * ny;
      if (!plate && dims[t][1] != 1) continue;
      double *L = plate ? ref_stencil(nx, ny, 1, 5, 1, 1, 1) : calloc((size_t)(n * n), 8);
      for (int64_t i = 0; i < n && !plate; i++) {
        L[i * n + i] = 2.0;
        if (i > 0) L[i * n + i - 1] = L[(i - 1) * n + i] = -1.0;
      }
      double *ref = calloc((size_t)(n * n), sizeof(double));
      int64_t nnz_ref = 0;
      for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
          for (int64_t k = 0; k < n; k++) ref[i * n + j] += L[i * n + k] * L[k * n + j];
          nnz_ref += ref[i * n + j] != 0.0;
        }
      for (int f = 0; f < 2; f++) {
        coal_dtype dt = f ? COAL_F32 : COAL_F64;
        coal_mat A = NULL;
        CHECK_OK(ctx,
                 plate ? coal_gen_plate2d(ctx, nx, ny, dt, &A) : coal_gen_beam(ctx, nx, dt, &A));
        if (!A) continue;
        csr c;
        csr_get(ctx, A, &c);
        double *d = csr_dense(&c);
        int same = c.n == n && c.m == n && c.nnz == nnz_ref && csr_canonical(&c), sym = 1;
        for (int64_t i = 0; i < n * n && same; i++) same = d[i] == ref[i];
        for (int64_t i = 0; i < n; i++)
          for (int64_t j = 0; j < i; j++) sym &= d[i * n + j] == d[j * n + i];
        CHECK(same, "%s %lld x %lld (%s): not L^2 (%lld nonzeros, expected %lld)",
              plate ? "plate" : "beam", (long long)nx, (long long)ny, f ? "f32" : "f64",
              (long long)c.nnz, (long long)nnz_ref);
        CHECK(sym && dense_spd(d, n), "%s %lld x %lld: not symmetric positive definite",
              plate ? "plate" : "beam", (long long)nx, (long long)ny);
        free(d);
        csr_free(&c);
        coal_mat_destroy(&A);
      }
      free(L), free(ref);
    }
  /* closed-form extreme eigenpairs: v = prod_d sin(pi i_d x_d / (n_d + 1)) with i_d = 1 or
   * n_d, lambda = (sum_d 4 sin^2(pi i_d / 2(n_d + 1)))^2 */
  const double pi = 3.14159265358979323846;
  static const int64_t big[][2] = {{300, 1}, {600, 1}, {40, 30}, {32, 32}};
  for (size_t t = 0; t < sizeof big / sizeof big[0]; t++) {
    int64_t nx = big[t][0], ny = big[t][1], n = nx * ny;
    coal_mat A = NULL;
    CHECK_OK(ctx, ny == 1 ? coal_gen_beam(ctx, nx, COAL_F64, &A)
                          : coal_gen_plate2d(ctx, nx, ny, COAL_F64, &A));
    if (!A) continue;
    csr c;
    csr_get(ctx, A, &c);
    double lam[2];
    for (int top = 0; top < 2; top++) {
      int64_t ix = top ? nx : 1, iy = top ? ny : 1;
      double sx = sin(pi * (double)ix / (2.0 * (double)(nx + 1))),
             sy = sin(pi * (double)iy / (2.0 * (double)(ny + 1)));
      double l = 4.0 * sx * sx + (ny > 1 ? 4.0 * sy * sy : 0.0);
      lam[top] = l * l;
      double *v = malloc(sizeof(double) * (size_t)n), rr = 0.0, vv = 0.0;
      for (int64_t j = 0; j < ny; j++)
        for (int64_t i = 0; i < nx; i++)
          v[i + nx * j] = sin(pi * (double)(ix * (i + 1)) / (double)(nx + 1)) *
                          (ny > 1 ? sin(pi * (double)(iy * (j + 1)) / (double)(ny + 1)) : 1.0);
      for (int64_t i = 0; i < n; i++) {
        double s = -lam[top] * v[i];
        for (int64_t p = c.rp[i]; p < c.rp[i + 1]; p++) s += c.v[p] * v[c.ci[p]];
        rr += s * s, vv += v[i] * v[i];
      }
      CHECK(sqrt(rr / vv) <= 1e-12 * 64.0, "%lld x %lld: eigenpair %d residual %.3e (lambda %.6e)",
            (long long)nx, (long long)ny, top, sqrt(rr / vv), lam[top]);
      free(v);
    }
    double cond = lam[1] / lam[0], N = (double)nx + 1.0;
    CHECK((ny != 1 && ny != nx) || (cond > 0.15 * N * N * N * N && cond < 0.17 * N * N * N * N),
          "%lld x %lld: condition number %.3e, expected about 0.16 (N+1)^4", (long long)nx,
          (long long)ny, cond);
    if (nx == 300) CHECK(cond > 1e9, "beam 300: condition number %.3e", cond);
    csr_free(&c);
    coal_mat_destroy(&A);
  }
  coal_mat A = NULL;
  CHECK_ERR(ctx, coal_gen_beam(ctx, -1, COAL_F64, &A), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_gen_plate2d(ctx, 3, -2, COAL_F64, &A), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_gen_plate2d(ctx, 3, 3, COAL_F64, NULL), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_gen_plate2d(ctx, 65536, 65536, COAL_F64, &A), COAL_ERR_OVERFLOW);
}

/* Small grids: size, canonical CSR, every entry, symmetry, row sums, dominance, SPD. */
static void test_stencils_small(coal_ctx ctx) {
  static const int64_t dims[][3] = {{1, 1, 1}, {2, 1, 1}, {1, 5, 3}, {3, 4, 2},
                                    {4, 3, 5}, {5, 5, 5}, {2, 7, 1}, {6, 2, 3}};
  static const struct {
    int kind;
    double ex, ey, ez;
  } kinds[] = {{5, 1, 1, 1}, {7, 1, 1, 1}, {27, 1, 1, 1}, {7, 1.0, 0.01, 100.0}, {7, 0.5, 2, 3}};
  for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++)
    for (size_t s = 0; s < sizeof kinds / sizeof kinds[0]; s++)
      for (int dt = 0; dt < 2; dt++) {
        int kind = kinds[s].kind;
        int64_t nx = dims[d][0], ny = dims[d][1], nz = kind == 5 ? 1 : dims[d][2];
        double ex = kinds[s].ex, ey = kinds[s].ey, ez = kinds[s].ez;
        coal_mat A = NULL;
        CHECK_OK(ctx, gen(ctx, kind, nx, ny, nz, ex, ey, ez, (coal_dtype)dt, &A));
        if (!A) continue;
        CHECK(coal_mat_dtype(A) == (coal_dtype)dt, "dtype");
        csr c;
        csr_get(ctx, A, &c);
        int64_t n = nx * ny * nz;
        CHECK(c.n == n && c.m == n, "kind %d %lldx%lldx%lld: %lld rows", kind, (long long)nx,
              (long long)ny, (long long)nz, (long long)c.n);
        CHECK(c.nnz == nnz_formula(nx, ny, nz, kind), "kind %d %lldx%lldx%lld: nnz %lld vs %lld",
              kind, (long long)nx, (long long)ny, (long long)nz, (long long)c.nnz,
              (long long)nnz_formula(nx, ny, nz, kind));
        CHECK(csr_canonical(&c), "kind %d: columns not sorted/unique", kind);
        double *ref = ref_stencil(nx, ny, nz, kind, ex, ey, ez);
        double *got = csr_dense(&c);
        double maxd = 0;
        int zeros = 0;
        for (int64_t q = 0; q < n * n; q++) {
          double r = dt == COAL_F32 ? (double)(float)ref[q] : ref[q];
          if (fabs(got[q] - r) > maxd) maxd = fabs(got[q] - r);
        }
        for (int64_t p = 0; p < c.nnz; p++) zeros += c.v[p] == 0.0;
        CHECK(maxd == 0.0 && zeros == 0, "kind %d %lldx%lldx%lld dt %d: entries differ by %g", kind,
              (long long)nx, (long long)ny, (long long)nz, dt, maxd);
        int sym = -1;
        CHECK_OK(ctx, coal_mat_is_symmetric(A, &sym));
        CHECK(sym == 1, "kind %d: not symmetric", kind);
        /* row sums: 0 on interior rows, > 0 on boundary rows; diagonal dominance */
        int bad_sum = 0, bad_dom = 0;
        for (int64_t k = 0; k < nz; k++)
          for (int64_t j = 0; j < ny; j++)
            for (int64_t i = 0; i < nx; i++) {
              int64_t r = i + nx * (j + ny * k);
              int interior = i > 0 && i < nx - 1 && j > 0 && j < ny - 1 &&
                             (kind == 5 || (k > 0 && k < nz - 1));
              double sum = 0, off = 0, diag = 0;
              for (int64_t p = c.rp[r]; p < c.rp[r + 1]; p++) {
                sum += c.v[p];
                if (c.ci[p] == r)
                  diag = c.v[p];
                else
                  off += fabs(c.v[p]);
              }
              double tol = 1e-5 * diag;
              if (interior ? fabs(sum) > tol : !(sum > tol)) bad_sum++;
              if (diag < off - tol || (!interior && !(diag > off))) bad_dom++;
            }
        CHECK(bad_sum == 0, "kind %d: %d rows with wrong row sum", kind, bad_sum);
        CHECK(bad_dom == 0, "kind %d: %d rows not diagonally dominant", kind, bad_dom);
        if (n <= 150)
          CHECK(dense_spd(got, n), "kind %d %lld rows: Cholesky fails", kind, (long long)n);
        free(ref), free(got);
        csr_free(&c);
        coal_mat_destroy(&A);
        CHECK(A == NULL, "destroy clears the handle");
      }
}

static void test_stencil_errors(coal_ctx ctx) {
  coal_mat A = (coal_mat)(uintptr_t)1;
  CHECK_ERR(ctx, coal_gen_laplace3d(ctx, 4, 4, 4, 9, COAL_F64, &A), COAL_ERR_ARG);
  CHECK(A == NULL, "output cleared on failure");
  CHECK(strlen(coal_ctx_last_error(ctx)) > 0, "message recorded");
  CHECK_ERR(ctx, coal_gen_laplace3d(ctx, 4, 4, 4, 5, COAL_F64, &A), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_gen_laplace3d(ctx, -1, 4, 4, 7, COAL_F64, &A), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_gen_laplace2d(ctx, 3, -2, COAL_F64, &A), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_gen_laplace2d(ctx, 3, 3, (coal_dtype)7, &A), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_gen_laplace2d(ctx, 3, 3, COAL_F64, NULL), COAL_ERR_ARG);
  CHECK_ERR(NULL, coal_gen_laplace2d(NULL, 3, 3, COAL_F64, &A), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_gen_aniso3d(ctx, 3, 3, 3, 1, 0, 1, COAL_F64, &A), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_gen_aniso3d(ctx, 3, 3, 3, 1, 1, -2, COAL_F64, &A), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_gen_aniso3d(ctx, 3, 3, 3, NAN, 1, 1, COAL_F64, &A), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_gen_aniso3d(ctx, 3, 3, 3, 1, INFINITY, 1, COAL_F64, &A), COAL_ERR_ARG);
  /* rows beyond 2^31-1 (the product would overflow 64 bits if formed naively) */
  CHECK_ERR(ctx, coal_gen_laplace3d(ctx, 2000, 2000, 2000, 7, COAL_F64, &A), COAL_ERR_OVERFLOW);
  CHECK_ERR(ctx,
            coal_gen_laplace3d(ctx, INT64_C(1) << 40, INT64_C(1) << 40, INT64_C(1) << 40, 27,
                               COAL_F64, &A),
            COAL_ERR_OVERFLOW);
  CHECK_ERR(ctx, coal_gen_laplace2d(ctx, 1000000, 1000000, COAL_F32, &A), COAL_ERR_OVERFLOW);
  /* rows fit (10^9) but nonzeros do not: refused before anything is allocated */
  CHECK_ERR(ctx, coal_gen_laplace3d(ctx, 1000, 1000, 1000, 7, COAL_F64, &A), COAL_ERR_OVERFLOW);
  CHECK_ERR(ctx, coal_gen_aniso3d(ctx, 1000, 1000, 1000, 1, 2, 3, COAL_F32, &A), COAL_ERR_OVERFLOW);
  CHECK_ERR(ctx, coal_gen_laplace2d(ctx, 40000, 40000, COAL_F64, &A), COAL_ERR_OVERFLOW);
  /* empty grids are valid empty matrices */
  int64_t n = -1, m = -1, nnz = -1;
  CHECK_OK(ctx, coal_gen_laplace3d(ctx, 0, 5, 5, 27, COAL_F64, &A));
  CHECK_OK(ctx, coal_mat_size(A, &n, &m, &nnz));
  CHECK(n == 0 && m == 0 && nnz == 0, "empty 3-D grid: %lld x %lld, %lld", (long long)n,
        (long long)m, (long long)nnz);
  coal_mat_destroy(&A);
  CHECK_OK(ctx, coal_gen_laplace2d(ctx, 7, 0, COAL_F32, &A));
  CHECK_OK(ctx, coal_mat_size(A, &n, &m, &nnz));
  CHECK(n == 0 && nnz == 0, "empty 2-D grid");
  coal_mat_destroy(&A);
}

/* ---- random generators ------------------------------------------------------------------ */

static int csr_equal(const csr *a, const csr *b) {
  if (a->n != b->n || a->m != b->m || a->nnz != b->nnz) return 0;
  return !memcmp(a->rp, b->rp, sizeof(int64_t) * (size_t)(a->n + 1)) &&
         !memcmp(a->ci, b->ci, sizeof(int32_t) * (size_t)a->nnz) &&
         !memcmp(a->v, b->v, sizeof(double) * (size_t)a->nnz);
}

/* Row and column degree statistics. */
static void degree_stats(const csr *c, int64_t *maxrow, int64_t *maxcol) {
  int64_t *cc = calloc((size_t)c->m + 1, sizeof(int64_t));
  *maxrow = 0, *maxcol = 0;
  for (int64_t i = 0; i < c->n; i++) {
    if (c->rp[i + 1] - c->rp[i] > *maxrow) *maxrow = c->rp[i + 1] - c->rp[i];
    for (int64_t p = c->rp[i]; p < c->rp[i + 1]; p++) cc[c->ci[p]]++;
  }
  for (int64_t j = 0; j < c->m; j++)
    if (cc[j] > *maxcol) *maxcol = cc[j];
  free(cc);
}

static void check_powerlaw(coal_ctx ctx, int64_t n, double mean, double gamma, uint64_t seed,
                           double heavy) {
  coal_mat A = NULL, B = NULL;
  CHECK_OK(ctx, coal_gen_powerlaw(ctx, n, mean, gamma, seed, COAL_F64, &A));
  CHECK_OK(ctx, coal_gen_powerlaw(ctx, n, mean, gamma, seed, COAL_F32, &B));
  if (!A || !B) return;
  csr a, b;
  csr_get(ctx, A, &a);
  csr_get(ctx, B, &b);
  CHECK(a.n == n && a.m == n, "power law size");
  CHECK(csr_canonical(&a), "power law: columns not sorted/unique");
  double got = (double)a.nnz / (double)n;
  CHECK(fabs(got - mean) <= 0.10 * mean, "power law n=%lld: mean row length %.3f, asked %.3f",
        (long long)n, got, mean);
  int diag_ok = 1, val_ok = 1;
  for (int64_t i = 0; i < n; i++) {
    int has = 0;
    for (int64_t p = a.rp[i]; p < a.rp[i + 1]; p++) has |= a.ci[p] == i;
    diag_ok &= has;
  }
  for (int64_t p = 0; p < a.nnz; p++) val_ok &= a.v[p] > 0.0 && a.v[p] <= 1.0;
  CHECK(diag_ok, "power law: every row holds its diagonal");
  CHECK(val_ok, "power law: values in (0,1]");
  int64_t maxrow, maxcol;
  degree_stats(&a, &maxrow, &maxcol);
  CHECK(maxrow > heavy * mean && maxcol > heavy * mean,
        "power law n=%lld: max row %lld, max column %lld, mean %.1f: no heavy tail", (long long)n,
        (long long)maxrow, (long long)maxcol, mean);
  CHECK(maxrow <= (int64_t)(sqrt((double)n) * mean) + 1, "power law: max row %lld above the cap",
        (long long)maxrow);
  /* f32: same structure, values rounded from the f64 ones, still in (0,1] */
  int same = a.nnz == b.nnz && !memcmp(a.rp, b.rp, sizeof(int64_t) * (size_t)(n + 1)) &&
             !memcmp(a.ci, b.ci, sizeof(int32_t) * (size_t)a.nnz);
  CHECK(same, "power law: f32 structure differs from f64");
  if (same) {
    int ok = 1;
    for (int64_t p = 0; p < a.nnz; p++) ok &= b.v[p] == (double)(float)a.v[p] && b.v[p] > 0;
    CHECK(ok, "power law: f32 values are not the rounded f64 values");
  }
  csr_free(&a), csr_free(&b);
  coal_mat_destroy(&A), coal_mat_destroy(&B);
}

static void test_powerlaw(coal_ctx ctx) {
  check_powerlaw(ctx, 10000, 8.0, 2.5, 1, 5.0);
  check_powerlaw(ctx, 20000, 16.0, 2.2, 99, 5.0);
  check_powerlaw(ctx, 5000, 4.0, 3.0, 7, 3.0);
  /* determinism */
  coal_mat A = NULL, B = NULL, C = NULL;
  CHECK_OK(ctx, coal_gen_powerlaw(ctx, 3000, 6.0, 2.5, 42, COAL_F64, &A));
  CHECK_OK(ctx, coal_gen_powerlaw(ctx, 3000, 6.0, 2.5, 42, COAL_F64, &B));
  CHECK_OK(ctx, coal_gen_powerlaw(ctx, 3000, 6.0, 2.5, 43, COAL_F64, &C));
  if (A && B && C) {
    csr a, b, c;
    csr_get(ctx, A, &a), csr_get(ctx, B, &b), csr_get(ctx, C, &c);
    CHECK(csr_equal(&a, &b), "power law: same seed gives different matrices");
    CHECK(!csr_equal(&a, &c), "power law: different seeds give the same matrix");
    csr_free(&a), csr_free(&b), csr_free(&c);
  }
  coal_mat_destroy(&A), coal_mat_destroy(&B), coal_mat_destroy(&C);
  /* edge cases */
  int64_t n, m, nnz;
  CHECK_OK(ctx, coal_gen_powerlaw(ctx, 0, 1.0, 2.5, 1, COAL_F64, &A));
  CHECK_OK(ctx, coal_mat_size(A, &n, &m, &nnz));
  CHECK(n == 0 && nnz == 0, "power law: empty");
  coal_mat_destroy(&A);
  CHECK_OK(ctx, coal_gen_powerlaw(ctx, 50, 1.0, 2.5, 1, COAL_F64, &A));
  CHECK_OK(ctx, coal_mat_size(A, &n, &m, &nnz));
  CHECK(n == 50 && nnz == 50, "power law mean 1: diagonal only (%lld)", (long long)nnz);
  coal_mat_destroy(&A);
  CHECK_OK(ctx, coal_gen_powerlaw(ctx, 8, 8.0, 2.5, 1, COAL_F64, &A));
  CHECK_OK(ctx, coal_mat_size(A, &n, &m, &nnz));
  CHECK(nnz <= 64 && nnz >= 8, "power law dense request: %lld", (long long)nnz);
  coal_mat_destroy(&A);
  CHECK_ERR(ctx, coal_gen_powerlaw(ctx, 100, 4.0, 2.0, 1, COAL_F64, &A), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_gen_powerlaw(ctx, 100, 4.0, NAN, 1, COAL_F64, &A), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_gen_powerlaw(ctx, 100, 0.5, 2.5, 1, COAL_F64, &A), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_gen_powerlaw(ctx, 100, 101.0, 2.5, 1, COAL_F64, &A), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_gen_powerlaw(ctx, -5, 4.0, 2.5, 1, COAL_F64, &A), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_gen_powerlaw(ctx, INT64_C(1) << 31, 4.0, 2.5, 1, COAL_F64, &A),
            COAL_ERR_OVERFLOW);
  CHECK_ERR(ctx, coal_gen_powerlaw(ctx, INT64_C(1) << 30, 12.0, 2.5, 1, COAL_F64, &A),
            COAL_ERR_OVERFLOW);
  CHECK_ERR(ctx, coal_gen_powerlaw(ctx, 100, 4.0, 2.5, 1, COAL_F64, NULL), COAL_ERR_ARG);
}

static void check_spd(coal_ctx ctx, int64_t n, double mean, uint64_t seed, int dense) {
  coal_mat A = NULL, B = NULL;
  CHECK_OK(ctx, coal_gen_random_spd(ctx, n, mean, seed, COAL_F64, &A));
  CHECK_OK(ctx, coal_gen_random_spd(ctx, n, mean, seed, COAL_F32, &B));
  if (!A || !B) return;
  csr a, b;
  csr_get(ctx, A, &a);
  csr_get(ctx, B, &b);
  CHECK(csr_canonical(&a), "spd: columns not sorted/unique");
  int sym = 0;
  CHECK_OK(ctx, coal_mat_is_symmetric(A, &sym));
  CHECK(sym == 1, "spd f64 not symmetric");
  CHECK_OK(ctx, coal_mat_is_symmetric(B, &sym));
  CHECK(sym == 1, "spd f32 not symmetric");
  double offmean = (double)(a.nnz - n) / (double)n;
  if (mean <= 0.25 * (double)n) /* denser requests saturate: repeated pairs are kept once */
    CHECK(fabs(offmean - mean) <= 0.10 * mean + 0.05,
          "spd n=%lld: %.3f off-diagonals per row, asked %.3f", (long long)n, offmean, mean);
  for (int t = 0; t < 2; t++) {
    const csr *c = t ? &b : &a;
    int bad_range = 0, bad_diag = 0;
    for (int64_t i = 0; i < n; i++) {
      double off = 0, diag = -1;
      for (int64_t p = c->rp[i]; p < c->rp[i + 1]; p++) {
        if (c->ci[p] == i)
          diag = c->v[p];
        else {
          off += fabs(c->v[p]);
          bad_range += !(c->v[p] >= -1.0 && c->v[p] < 1.0);
        }
      }
      double want = t ? (double)(float)(off + 1.0) : off + 1.0;
      bad_diag += !(diag == want && diag > off);
    }
    CHECK(bad_range == 0, "spd %s: %d values outside [-1,1)", t ? "f32" : "f64", bad_range);
    CHECK(bad_diag == 0, "spd %s: %d diagonals differ from sum|offdiag| + 1", t ? "f32" : "f64",
          bad_diag);
  }
  int same = a.nnz == b.nnz && !memcmp(a.ci, b.ci, sizeof(int32_t) * (size_t)a.nnz);
  CHECK(same, "spd: f32 structure differs from f64");
  if (dense) {
    double *d = csr_dense(&a);
    CHECK(dense_spd(d, n), "spd n=%lld: Cholesky fails", (long long)n);
    free(d);
    d = csr_dense(&b);
    CHECK(dense_spd(d, n), "spd f32 n=%lld: Cholesky fails", (long long)n);
    free(d);
  }
  csr_free(&a), csr_free(&b);
  coal_mat_destroy(&A), coal_mat_destroy(&B);
}

static void test_random_spd(coal_ctx ctx) {
  check_spd(ctx, 60, 6.0, 3, 1);
  check_spd(ctx, 120, 3.0, 4, 1);
  check_spd(ctx, 9, 8.0, 5, 1); /* pattern saturates: duplicates dropped, still SPD */
  check_spd(ctx, 20000, 12.0, 6, 0);
  check_spd(ctx, 20001, 7.3, 7, 0);
  coal_mat A = NULL, B = NULL, C = NULL;
  CHECK_OK(ctx, coal_gen_random_spd(ctx, 500, 5.0, 11, COAL_F64, &A));
  CHECK_OK(ctx, coal_gen_random_spd(ctx, 500, 5.0, 11, COAL_F64, &B));
  CHECK_OK(ctx, coal_gen_random_spd(ctx, 500, 5.0, 12, COAL_F64, &C));
  if (A && B && C) {
    csr a, b, c;
    csr_get(ctx, A, &a), csr_get(ctx, B, &b), csr_get(ctx, C, &c);
    CHECK(csr_equal(&a, &b), "spd: same seed gives different matrices");
    CHECK(!csr_equal(&a, &c), "spd: different seeds give the same matrix");
    csr_free(&a), csr_free(&b), csr_free(&c);
  }
  coal_mat_destroy(&A), coal_mat_destroy(&B), coal_mat_destroy(&C);
  int64_t n, m, nnz;
  CHECK_OK(ctx, coal_gen_random_spd(ctx, 0, 0.0, 1, COAL_F64, &A));
  CHECK_OK(ctx, coal_mat_size(A, &n, &m, &nnz));
  CHECK(n == 0 && nnz == 0, "spd: empty");
  coal_mat_destroy(&A);
  CHECK_OK(ctx, coal_gen_random_spd(ctx, 30, 0.0, 1, COAL_F32, &A));
  CHECK_OK(ctx, coal_mat_size(A, &n, &m, &nnz));
  CHECK(n == 30 && nnz == 30, "spd mean 0: diagonal only");
  coal_mat_destroy(&A);
  CHECK_ERR(ctx, coal_gen_random_spd(ctx, 10, 10.0, 1, COAL_F64, &A), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_gen_random_spd(ctx, 10, -1.0, 1, COAL_F64, &A), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_gen_random_spd(ctx, 10, NAN, 1, COAL_F64, &A), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_gen_random_spd(ctx, -10, 1.0, 1, COAL_F64, &A), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_gen_random_spd(ctx, 10, 1.0, 1, (coal_dtype)3, &A), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_gen_random_spd(ctx, INT64_C(1) << 29, 12.0, 1, COAL_F64, &A),
            COAL_ERR_OVERFLOW);
}

/* ---- large sizes: nonzero counts and generation time ----------------------------------- */
static void test_large(coal_ctx ctx) {
  coal_mat A = NULL;
  int64_t n, m, nnz;
  double t0 = now_s();
  CHECK_OK(ctx, coal_gen_laplace3d(ctx, 128, 128, 128, 7, COAL_F64, &A));
  double t1 = now_s();
  CHECK_OK(ctx, coal_mat_size(A, &n, &m, &nnz));
  CHECK(n == 2097152 && nnz == nnz_formula(128, 128, 128, 7) && nnz == 14581760,
        "7-point 128^3: %lld rows, %lld nonzeros", (long long)n, (long long)nnz);
  coal_mat_destroy(&A);
  double t2 = now_s();
  CHECK_OK(ctx, coal_gen_laplace3d(ctx, 100, 100, 100, 27, COAL_F64, &A));
  double t3 = now_s();
  CHECK_OK(ctx, coal_mat_size(A, &n, &m, &nnz));
  CHECK(n == 1000000 && nnz == nnz_formula(100, 100, 100, 27) && nnz == 26463592,
        "27-point 100^3: %lld rows, %lld nonzeros", (long long)n, (long long)nnz);
  coal_mat_destroy(&A);
  double t4 = now_s();
  CHECK_OK(ctx, coal_gen_powerlaw(ctx, INT64_C(1) << 20, 12.0, 2.5, 2024, COAL_F64, &A));
  double t5 = now_s();
  if (A) {
    csr a;
    csr_get(ctx, A, &a);
    double mean = (double)a.nnz / (double)a.n;
    int64_t maxrow, maxcol;
    degree_stats(&a, &maxrow, &maxcol);
    CHECK(fabs(mean - 12.0) <= 1.2, "power law 2^20: mean row length %.3f", mean);
    CHECK(maxrow > 100 * 12 && maxcol > 100 * 12, "power law 2^20: max row %lld, column %lld",
          (long long)maxrow, (long long)maxcol);
    CHECK(csr_canonical(&a), "power law 2^20: not canonical");
    printf("power law 2^20: %lld nonzeros, mean %.3f, max row %lld, max column %lld\n",
           (long long)a.nnz, mean, (long long)maxrow, (long long)maxcol);
    csr_free(&a);
  }
  coal_mat_destroy(&A);
  printf("generation: 7-point 128^3 %.3f s, 27-point 100^3 %.3f s, power law 2^20 %.3f s\n",
         t1 - t0, t3 - t2, t5 - t4);
}

/* ---- 3-D elasticity --------------------------------------------------------------------- */
/* y = A x (host CSR), in long double. */
static void csr_apply(const csr *c, const double *x, long double *y) {
  for (int64_t i = 0; i < c->n; i++) {
    long double s = 0;
    for (int64_t p = c->rp[i]; p < c->rp[i + 1]; p++) s += (long double)c->v[p] * x[c->ci[p]];
    y[i] = s;
  }
}

/* The free box's operator: the six rigid-body modes (coal_rigid_body_modes) in its null space;
 * a linear displacement (uniform strain e) gives zero force on every interior node (the patch
 * test) and the energy u^T K u = e^T D e (volume 1, exact quadrature); the clamped box's: sizes,
 * canonical, symmetric, SPD (dense Cholesky), 81 entries on an interior row, 24 on a free
 * corner's; bad input. */
static void test_elast(coal_ctx ctx) {
  for (int64_t n = 1; n <= 4; n++) {
    const double nu = 0.3;
    coal_mat A = NULL;
    CHECK_OK(ctx, coal_gen_elast3d(ctx, n, nu, 0, COAL_F64, &A));
    if (!A) continue;
    csr c;
    csr_get(ctx, A, &c);
    const int64_t nodes = (n + 1) * (n + 1) * (n + 1), rows = 3 * nodes;
    CHECK(c.n == rows && c.m == rows && csr_canonical(&c), "elast3d:%lld free: %lld rows",
          (long long)n, (long long)c.n);
    double *xyz = malloc(sizeof(double) * 3 * (size_t)nodes),
           *B = malloc(sizeof(double) * 6 * (size_t)rows),
           *u = malloc(sizeof(double) * (size_t)rows);
    long double *y = malloc(sizeof(long double) * (size_t)rows);
    CHECK_OK(ctx, coal_gen_elast3d_coords(ctx, n, 0, xyz));
    CHECK_OK(ctx, coal_rigid_body_modes(ctx, nodes, 3, xyz, B));
    double amax = 0;
    for (int64_t p = 0; p < c.nnz; p++) amax = fmax(amax, fabs(c.v[p]));
    for (int m = 0; m < 6; m++) {
      csr_apply(&c, B + m * rows, y);
      long double worst = 0, bmax = 0;
      for (int64_t i = 0; i < rows; i++)
        worst = fmaxl(worst, fabsl(y[i])), bmax = fmaxl(bmax, fabsl((long double)B[m * rows + i]));
      CHECK(worst <= 1e-13L * amax * bmax * 81, "elast3d:%lld: rigid-body mode %d: |K b| = %Lg",
            (long long)n, m, worst);
    }
    /* uniform strain: u = E x with E = [[.1, .02, -.03], [.04, -.2, .05], [.01, .06, .3]] */
    const double E[3][3] = {{0.1, 0.02, -0.03}, {0.04, -0.2, 0.05}, {0.01, 0.06, 0.3}};
    for (int64_t q = 0; q < nodes; q++)
      for (int d = 0; d < 3; d++)
        u[3 * q + d] = E[d][0] * xyz[3 * q] + E[d][1] * xyz[3 * q + 1] + E[d][2] * xyz[3 * q + 2];
    csr_apply(&c, u, y);
    long double interior = 0, energy = 0;
    for (int64_t q = 0; q < nodes; q++) {
      const int64_t i = q % (n + 1), j = (q / (n + 1)) % (n + 1), k = q / ((n + 1) * (n + 1));
      const int inside = i > 0 && i < n && j > 0 && j < n && k > 0 && k < n;
      for (int d = 0; d < 3; d++) {
        if (inside) interior = fmaxl(interior, fabsl(y[3 * q + d]));
        energy += (long double)u[3 * q + d] * y[3 * q + d];
      }
    }
    const double lam = nu / ((1 + nu) * (1 - 2 * nu)), mu = 1 / (2 * (1 + nu));
    const double exx = E[0][0], eyy = E[1][1], ezz = E[2][2], gxy = E[0][1] + E[1][0],
                 gyz = E[1][2] + E[2][1], gxz = E[0][2] + E[2][0], tr = exx + eyy + ezz;
    const double ref = lam * tr * tr + 2 * mu * (exx * exx + eyy * eyy + ezz * ezz) +
                       mu * (gxy * gxy + gyz * gyz + gxz * gxz);
    CHECK(interior <= 1e-13L * amax, "elast3d:%lld: interior force %Lg under a uniform strain",
          (long long)n, interior);
    CHECK(fabsl(energy - ref) <= 1e-12L * ref, "elast3d:%lld: energy %.17Lg, expected %.17g",
          (long long)n, energy, ref);
    free(xyz), free(B), free(u), free(y);
    csr_free(&c);
    coal_mat_destroy(&A);
  }
  for (int64_t n = 1; n <= 3; n++) {
    coal_mat A = NULL;
    CHECK_OK(ctx, coal_gen_elast3d(ctx, n, 0.25, 1, COAL_F64, &A));
    if (!A) continue;
    csr c;
    csr_get(ctx, A, &c);
    const int64_t rows = 3 * n * (n + 1) * (n + 1);
    CHECK(c.n == rows && csr_canonical(&c), "elast3d:%lld clamped: %lld rows, expected %lld",
          (long long)n, (long long)c.n, (long long)rows);
    double *d = csr_dense(&c);
    int sym = 1;
    for (int64_t i = 0; i < rows && sym; i++)
      for (int64_t j = 0; j < i; j++)
        if (fabs(d[i * rows + j] - d[j * rows + i]) > 1e-15 * fabs(d[i * rows + i])) sym = 0;
    int exact = 0;
    CHECK_OK(ctx, coal_mat_is_symmetric(A, &exact));
    CHECK(sym && exact && dense_spd(d, rows),
          "elast3d:%lld clamped: not symmetric (bit for bit: %d) positive definite", (long long)n,
          exact);
    free(d);
    /* row lengths: the node at the far corner (n, n, n) has 8 neighbours (n > 1), an interior 27 */
    const int64_t last = rows - 1;
    const int64_t corner = 3 * (n > 1 ? 2 : 1) * 2 * 2; /* n = 1: x's neighbour is clamped */
    CHECK(c.rp[last + 1] - c.rp[last] == corner, "elast3d:%lld: corner row has %lld entries",
          (long long)n, (long long)(c.rp[last + 1] - c.rp[last]));
    if (n == 3) { /* node (2, 1, 1): i = 2 of the free 1..3, interior */
      const int64_t node = (2 - 1) + 3 * (1 + 4 * 1), r = 3 * node;
      CHECK(c.rp[r + 1] - c.rp[r] == 81, "elast3d:3: interior row has %lld entries",
            (long long)(c.rp[r + 1] - c.rp[r]));
    }
    csr_free(&c);
    coal_mat_destroy(&A);
  }
  coal_mat A = NULL;
  CHECK_ERR(ctx, coal_gen_elast3d(ctx, 0, 0.3, 1, COAL_F64, &A), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_gen_elast3d(ctx, 4, 0.5, 1, COAL_F64, &A), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_gen_elast3d(ctx, 4, -0.1, 1, COAL_F64, &A), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_gen_elast3d(ctx, 2000, 0.3, 1, COAL_F64, &A), COAL_ERR_OVERFLOW);
  CHECK_ERR(ctx, coal_rigid_body_modes(ctx, 4, 1, NULL, NULL), COAL_ERR_ARG);
}

int main(void) {
  coal_ctx ctx = NULL;
  coal_status st = coal_ctx_create(COAL_BACKEND_HOST, &ctx);
  CHECK(st == COAL_SUCCESS, "host context: %s", coal_status_string(st));
  if (!ctx) return check_finish();
  test_stencils_small(ctx);
  test_stencil_errors(ctx);
  test_bilaplace(ctx);
  test_powerlaw(ctx);
  test_random_spd(ctx);
  test_elast(ctx);
  test_large(ctx);
  coal_ctx_destroy(&ctx);
  return check_finish();
}
