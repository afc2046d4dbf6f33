/* Deterministic test-matrix generators.
 *
 * Stencil Laplacians on regular grids are written straight into CSR: rows come in natural
 * lexicographic order (x fastest: idx = i + nx*(j + ny*k)) and the stencil offsets are listed
 * in (dz, dy, dx) order, so every row's columns come out sorted and no sort is needed. The
 * number of nonzeros is known in closed form before anything is allocated: an offset
 * (ox, oy, oz) contributes prod_d (n_d - |o_d|) entries (Dirichlet: neighbours outside the
 * grid are dropped, the diagonal keeps its full value).
 *
 * The random generators draw every number from coal_random_uniform(stream, counter) with
 * separate streams per purpose, and run sequentially: the output depends only on the
 * arguments and the seed.
 */
#include "internal.h"

#include <math.h>
#include <string.h>

/* ---- shared helpers ------------------------------------------------------------------- */

coal_status coal_gen_check_out(coal_ctx ctx, coal_dtype dtype, coal_mat *A) {
  COAL_CHECK(ctx, A, COAL_ERR_ARG, "NULL output matrix");
  *A = NULL;
  COAL_CHECK(ctx, dtype == COAL_F64 || dtype == COAL_F32, COAL_ERR_ARG, "bad dtype %d", (int)dtype);
  return COAL_SUCCESS;
}

/* Independent random stream number s of a seed. */
static uint64_t stream_seed(uint64_t seed, uint64_t s) { return seed + s * 0xA24BAED4963EE407ull; }

/* Uniform in [0,1). */
static double uniform01(uint64_t seed, uint64_t i) {
  return 0.5 * (coal_random_uniform(seed, i) + 1.0);
}

/* Allocates CSR arrays for n rows and nnz entries. On failure nothing is left allocated. */
coal_status coal_gen_alloc_csr(coal_ctx ctx, int64_t n, int64_t nnz, coal_dtype dtype, int32_t **rp,
                               int32_t **ci, void **v) {
  *rp = NULL, *ci = NULL, *v = NULL;
  coal_status st;
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * ((size_t)n + 1), (void **)rp), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * (size_t)nnz, (void **)ci), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, coal_dtype_size(dtype) * (size_t)nnz, v), fail);
  (*rp)[0] = 0;
  return COAL_SUCCESS;
fail:
  coal_free(*rp), coal_free(*ci), coal_free(*v);
  *rp = NULL, *ci = NULL, *v = NULL;
  return st;
}

void coal_gen_store(void *v, coal_dtype dtype, int64_t p, double x) {
  if (dtype == COAL_F64)
    ((double *)v)[p] = x;
  else
    ((float *)v)[p] = (float)x;
}

static void sort_i32(int32_t *a, int64_t len);

/* ---- stencils -------------------------------------------------------------------------- */

typedef struct {
  int dx, dy, dz;
  double v;
} stencil_pt;

/* Grid dimensions to a row count; each dimension is checked before the product is formed, so
 * the 64-bit arithmetic cannot overflow. */
static coal_status grid_rows(coal_ctx ctx, int64_t nx, int64_t ny, int64_t nz, int64_t *n) {
  COAL_CHECK(ctx, nx >= 0 && ny >= 0 && nz >= 0, COAL_ERR_ARG,
             "negative grid size %lld x %lld x %lld", (long long)nx, (long long)ny, (long long)nz);
  *n = 0;
  if (nx == 0 || ny == 0 || nz == 0) return COAL_SUCCESS;
  COAL_CHECK(ctx, nx <= INT32_MAX && ny <= INT32_MAX && nz <= INT32_MAX, COAL_ERR_OVERFLOW,
             "grid %lld x %lld x %lld exceeds 2^31-1 rows", (long long)nx, (long long)ny,
             (long long)nz);
  int64_t nxy = nx * ny;
  COAL_CHECK(ctx, nxy <= INT32_MAX && nxy * nz <= INT32_MAX, COAL_ERR_OVERFLOW,
             "grid %lld x %lld x %lld exceeds 2^31-1 rows", (long long)nx, (long long)ny,
             (long long)nz);
  *n = nxy * nz;
  return COAL_SUCCESS;
}

static int64_t span(int64_t len, int o) {
  return len > (o < 0 ? -o : o) ? len - (o < 0 ? -o : o) : 0;
}

/* pts[m] must be in (dz, dy, dx) lexicographic order with offsets in {-1, 0, 1}. */
static coal_status gen_stencil(coal_ctx ctx, int64_t nx, int64_t ny, int64_t nz,
                               const stencil_pt *pts, int m, coal_dtype dtype, coal_mat *A) {
  int64_t n = 0;
  COAL_CALL(grid_rows(ctx, nx, ny, nz, &n));
  int64_t nnz = 0;
  if (n > 0)
    for (int s = 0; s < m; s++)
      nnz += span(nx, pts[s].dx) * span(ny, pts[s].dy) * span(nz, pts[s].dz);
  COAL_CHECK(ctx, nnz <= INT32_MAX, COAL_ERR_OVERFLOW,
             "%lld nonzeros exceed 2^31-1: this build uses 32-bit row offsets", (long long)nnz);
  int32_t *rp, *ci;
  void *v;
  COAL_CALL(coal_gen_alloc_csr(ctx, n, nnz, dtype, &rp, &ci, &v));
  double *vd = dtype == COAL_F64 ? (double *)v : NULL;
  float *vf = dtype == COAL_F32 ? (float *)v : NULL;
  struct {
    int64_t off;
    int dx;
    double v;
    float f;
  } act[27];
  int64_t p = 0;
  for (int64_t k = 0; k < nz; k++)
    for (int64_t j = 0; j < ny; j++) {
      /* offsets whose y and z neighbour exists on this grid line */
      int na = 0;
      for (int s = 0; s < m; s++) {
        int64_t jj = j + pts[s].dy, kk = k + pts[s].dz;
        if (jj < 0 || jj >= ny || kk < 0 || kk >= nz) continue;
        act[na].off = pts[s].dx + nx * (pts[s].dy + ny * pts[s].dz);
        act[na].dx = pts[s].dx;
        act[na].v = pts[s].v;
        act[na].f = (float)pts[s].v;
        na++;
      }
      int64_t row = nx * (j + ny * k);
      for (int64_t i = 0; i < nx; i++, row++) {
        for (int a = 0; a < na; a++) {
          if ((act[a].dx < 0 && i == 0) || (act[a].dx > 0 && i == nx - 1)) continue;
          ci[p] = (int32_t)(row + act[a].off);
          if (vd)
            vd[p] = act[a].v;
          else
            vf[p] = act[a].f;
          p++;
        }
        rp[row + 1] = (int32_t)p;
      }
    }
  COAL_CALL(coal_mat_wrap_csr(ctx, (int32_t)n, (int32_t)n, rp, ci, v, dtype, A));
  (*A)->symmetric = 1; /* symmetric stencils (solver setup then skips its check) */
  return COAL_SUCCESS;
}

coal_status coal_gen_laplace2d(coal_ctx ctx, int64_t nx, int64_t ny, coal_dtype dtype,
                               coal_mat *A) {
  if (!ctx) return COAL_ERR_ARG;
  COAL_CALL(coal_gen_check_out(ctx, dtype, A));
  const stencil_pt pts[5] = {
      {0, -1, 0, -1.0}, {-1, 0, 0, -1.0}, {0, 0, 0, 4.0}, {1, 0, 0, -1.0}, {0, 1, 0, -1.0}};
  return gen_stencil(ctx, nx, ny, 1, pts, 5, dtype, A);
}

/* The 7-point stencil with weights ex, ey, ez (diagonal 2(ex+ey+ez)). */
static void seven_point(double ex, double ey, double ez, stencil_pt pts[7]) {
  const stencil_pt p[7] = {
      {0, 0, -1, -ez}, {0, -1, 0, -ey}, {-1, 0, 0, -ex}, {0, 0, 0, 2.0 * (ex + ey + ez)},
      {1, 0, 0, -ex},  {0, 1, 0, -ey},  {0, 0, 1, -ez}};
  memcpy(pts, p, sizeof p);
}

coal_status coal_gen_laplace3d(coal_ctx ctx, int64_t nx, int64_t ny, int64_t nz, int stencil,
                               coal_dtype dtype, coal_mat *A) {
  if (!ctx) return COAL_ERR_ARG;
  COAL_CALL(coal_gen_check_out(ctx, dtype, A));
  COAL_CHECK(ctx, stencil == 7 || stencil == 27, COAL_ERR_ARG,
             "3-D Laplacian stencil %d: expected 7 or 27", stencil);
  stencil_pt pts[27];
  int m = 0;
  if (stencil == 7) {
    seven_point(1.0, 1.0, 1.0, pts);
    m = 7;
  } else {
    for (int dz = -1; dz <= 1; dz++)
      for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) {
          stencil_pt q = {dx, dy, dz, (dx || dy || dz) ? -1.0 : 26.0};
          pts[m++] = q;
        }
  }
  return gen_stencil(ctx, nx, ny, nz, pts, m, dtype, A);
}

coal_status coal_gen_aniso3d(coal_ctx ctx, int64_t nx, int64_t ny, int64_t nz, double ex, double ey,
                             double ez, coal_dtype dtype, coal_mat *A) {
  if (!ctx) return COAL_ERR_ARG;
  COAL_CALL(coal_gen_check_out(ctx, dtype, A));
  COAL_CHECK(ctx, ex > 0 && ey > 0 && ez > 0 && isfinite(ex) && isfinite(ey) && isfinite(ez),
             COAL_ERR_ARG, "anisotropy coefficients must be finite and > 0 (%g, %g, %g)", ex, ey,
             ez);
  stencil_pt pts[7];
  seven_point(ex, ey, ez, pts);
  return gen_stencil(ctx, nx, ny, nz, pts, 7, dtype, A);
}

/* ---- thin beam and thin plate (biharmonic) --------------------------------------------- *
 * The square L^2 of the Dirichlet Laplacian L on a grid of d = 1 or 2 dimensions (d = 2: the
 * matrix of coal_gen_laplace2d; d = 1: tridiag(-1, 2, -1)): the finite-difference Euler-
 * Bernoulli beam and Kirchhoff plate in bending with simply supported ends or edges (u = 0 and,
 * through the mirrored ghost nodes, u'' = 0), unit bending stiffness, h^4 scaled out. With c =
 * 2d the diagonal of L, (L^2)_ij = sum_k L_ik L_kj over grid nodes k gives
 *   one step along an axis: -2c (two paths), two steps along an axis: 1 (one path),
 *   one step along each axis (d = 2): 2 (two paths), diagonal: c^2 + the number of grid
 *   neighbours of the node (every neighbour k adds L_ik^2 = 1).
 * Every path between two nodes runs inside their bounding box, so an entry exists exactly when
 * its node does: a 5-point (beam) or 13-point (plate) stencil. Eigenvalues: the squares of
 * L's, (sum_d 4 sin^2(pi i_d / 2(n_d + 1)))^2, so with N nodes a side the condition number is
 * (4 (N+1)^2 / pi^2)^2 ~ 0.16 (N+1)^4 in both: 1.35e9 for a beam of 300 nodes, the range of a thin
 * shell's stiffness matrix (bending stiffness ~ t^3 against membrane stiffness ~ t). */
static coal_status gen_bilaplace(coal_ctx ctx, int64_t nx, int64_t ny, int dims, coal_dtype dtype,
                                 coal_mat *A) {
  if (!ctx) return COAL_ERR_ARG;
  COAL_CALL(coal_gen_check_out(ctx, dtype, A));
  int64_t n = 0;
  COAL_CALL(grid_rows(ctx, nx, ny, 1, &n));
  const double c = 2.0 * dims;
  /* offsets in (dy, dx) lexicographic order, so columns come out sorted; v = 0 marks the
   * diagonal */
  const struct {
    int dx, dy;
    double v;
  } pts[13] = {{0, -2, 1.0},      {-1, -1, 2.0}, {0, -1, -2.0 * c}, {1, -1, 2.0}, {-2, 0, 1.0},
               {-1, 0, -2.0 * c}, {0, 0, 0.0},   {1, 0, -2.0 * c},  {2, 0, 1.0},  {-1, 1, 2.0},
               {0, 1, -2.0 * c},  {1, 1, 2.0},   {0, 2, 1.0}};
  int64_t nnz = 0;
  for (int s = 0; s < 13 && n > 0; s++)
    if (dims == 2 || pts[s].dy == 0) nnz += span(nx, pts[s].dx) * span(ny, pts[s].dy);
  COAL_CHECK(ctx, nnz <= INT32_MAX, COAL_ERR_OVERFLOW,
             "%lld nonzeros exceed 2^31-1: this build uses 32-bit row offsets", (long long)nnz);
  int32_t *rp, *ci;
  void *v;
  COAL_CALL(coal_gen_alloc_csr(ctx, n, nnz, dtype, &rp, &ci, &v));
  int64_t p = 0;
  for (int64_t j = 0; j < ny; j++)
    for (int64_t i = 0; i < nx; i++) {
      const int nb = (i > 0) + (i < nx - 1) + (dims == 2 ? (j > 0) + (j < ny - 1) : 0);
      for (int s = 0; s < 13; s++) {
        const int64_t ii = i + pts[s].dx, jj = j + pts[s].dy;
        if ((dims == 1 && pts[s].dy) || ii < 0 || ii >= nx || jj < 0 || jj >= ny) continue;
        ci[p] = (int32_t)(ii + nx * jj);
        coal_gen_store(v, dtype, p, pts[s].v != 0.0 ? pts[s].v : c * c + nb);
        p++;
      }
      rp[i + nx * j + 1] = (int32_t)p;
    }
  COAL_CALL(coal_mat_wrap_csr(ctx, (int32_t)n, (int32_t)n, rp, ci, v, dtype, A));
  (*A)->symmetric = 1;
  return COAL_SUCCESS;
}

coal_status coal_gen_beam(coal_ctx ctx, int64_t n, coal_dtype dtype, coal_mat *A) {
  return gen_bilaplace(ctx, n, 1, 1, dtype, A);
}

coal_status coal_gen_plate2d(coal_ctx ctx, int64_t nx, int64_t ny, coal_dtype dtype, coal_mat *A) {
  return gen_bilaplace(ctx, nx, ny, 2, dtype, A);
}

/* ---- power law (Chung-Lu) ------------------------------------------------------------- *
 * Vertex ranks t = 0..n-1 get weights w_t = s * (t+1)^(-1/(gamma-1)) (a degree sequence with
 * tail P(deg >= d) ~ d^(1-gamma)), scaled so that sum w = (mean_degree - 1) * n off-diagonal
 * entries, and capped at C = min(n-1, floor(sqrt(n) * mean_degree)): weights above C are
 * clipped and s is re-solved over the rest (water filling), so the mean is kept. The cap
 * stands in for the structural cut-off of real graphs (for n = 2^20, mean 12: C = 12288,
 * about 1000x the mean). Ranks are mapped to row/column labels by a seeded random
 * permutation so hubs are scattered over the index range.
 *
 * Row r (of rank t) receives deg_t = floor(w_t) or floor(w_t)+1 (stochastic rounding, mean
 * w_t) off-diagonal entries plus its diagonal. Columns are drawn with probability
 * proportional to the same weights (alias table), the diagonal and columns already in the
 * row are redrawn, so rows hold distinct columns and the mean row length matches the
 * request (a row gives up after 64*deg + 256 draws, which only matters in degenerate cases).
 * Values are uniform in (0,1]. The matrix is not symmetric. */

typedef struct {
  double prob;   /* keep the slot's own column when the coin is below prob */
  int32_t col;   /* label of the slot's rank */
  int32_t alias; /* label of the alias rank */
} alias_slot;

/* Vose's alias method over w[0..n) (sum wsum > 0), with ranks mapped to labels. */
static coal_status build_alias(coal_ctx ctx, int64_t n, const double *w, double wsum,
                               const int32_t *lab, alias_slot *tab) {
  int32_t *small = NULL, *large = NULL;
  coal_status st;
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * (size_t)n, (void **)&small), done);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * (size_t)n, (void **)&large), done);
  int64_t ns = 0, nl = 0;
  for (int64_t t = 0; t < n; t++) {
    tab[t].prob = w[t] * (double)n / wsum;
    tab[t].col = lab[t];
    tab[t].alias = lab[t];
    if (tab[t].prob < 1.0)
      small[ns++] = (int32_t)t;
    else
      large[nl++] = (int32_t)t;
  }
  while (ns > 0 && nl > 0) {
    int32_t s = small[--ns], l = large[nl - 1];
    tab[s].alias = lab[l];
    tab[l].prob -= 1.0 - tab[s].prob;
    if (tab[l].prob < 1.0) {
      nl--;
      small[ns++] = l;
    }
  }
  /* leftovers are 1 up to rounding */
  while (nl > 0) tab[large[--nl]].prob = 1.0;
  while (ns > 0) tab[small[--ns]].prob = 1.0;
done:
  coal_free(small), coal_free(large);
  return st;
}

coal_status coal_gen_powerlaw(coal_ctx ctx, int64_t n, double mean_degree, double gamma,
                              uint64_t seed, coal_dtype dtype, coal_mat *A) {
  if (!ctx) return COAL_ERR_ARG;
  COAL_CALL(coal_gen_check_out(ctx, dtype, A));
  COAL_CHECK(ctx, n >= 0, COAL_ERR_ARG, "negative size %lld", (long long)n);
  COAL_CHECK(ctx, n <= INT32_MAX, COAL_ERR_OVERFLOW, "%lld rows exceed 2^31-1", (long long)n);
  COAL_CHECK(ctx, gamma > 2.0 && isfinite(gamma), COAL_ERR_ARG,
             "power-law exponent gamma = %g, expected > 2", gamma);
  COAL_CHECK(ctx, mean_degree >= 1.0 && mean_degree <= (double)(n > 0 ? n : 1), COAL_ERR_ARG,
             "mean degree %g outside [1, n = %lld] (the diagonal counts as one)", mean_degree,
             (long long)n);
  /* rough bound first so a hopeless request allocates nothing (rounding adds O(sqrt n)) */
  COAL_CHECK(ctx, (double)n * mean_degree + 8.0 * sqrt((double)n) + 64.0 <= (double)INT32_MAX,
             COAL_ERR_OVERFLOW, "about %.0f nonzeros exceed 2^31-1", (double)n * mean_degree);
  if (n == 0) {
    int32_t *rp, *ci;
    void *v;
    COAL_CALL(coal_gen_alloc_csr(ctx, 0, 0, dtype, &rp, &ci, &v));
    return coal_mat_wrap_csr(ctx, 0, 0, rp, ci, v, dtype, A);
  }
  const uint64_t s_perm = stream_seed(seed, 1), s_round = stream_seed(seed, 2),
                 s_col = stream_seed(seed, 3), s_val = stream_seed(seed, 4);
  coal_status st = COAL_SUCCESS;
  double *w = NULL;
  int32_t *lab = NULL, *deg = NULL, *mark = NULL, *rp = NULL, *ci = NULL;
  alias_slot *tab = NULL;
  void *v = NULL;
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(double) * (size_t)n, (void **)&w), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * (size_t)n, (void **)&lab), fail);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * (size_t)n, (void **)&deg), fail);

  /* weights by rank, water-filled under the cap */
  const double target = (mean_degree - 1.0) * (double)n;
  const double cap = fmin((double)(n - 1), floor(sqrt((double)n) * mean_degree));
  const double expo = -1.0 / (gamma - 1.0);
  double rest = 0.0;
  for (int64_t t = n - 1; t >= 0; t--) rest += (w[t] = pow((double)(t + 1), expo));
  int64_t nclip = 0;
  double scale = 0.0;
  if (target > 0) {
    for (;;) {
      scale = (target - (double)nclip * cap) / rest;
      if (nclip == n - 1 || scale * w[nclip] <= cap) break;
      rest -= w[nclip++];
    }
  }
  double wsum = 0.0;
  for (int64_t t = 0; t < n; t++) wsum += (w[t] = t < nclip ? cap : scale * w[t]);

  /* labels: a seeded Fisher-Yates shuffle of the ranks */
  for (int64_t t = 0; t < n; t++) lab[t] = (int32_t)t;
  for (int64_t t = n - 1; t > 0; t--) {
    int64_t u = (int64_t)(uniform01(s_perm, (uint64_t)t) * (double)(t + 1));
    if (u > t) u = t;
    int32_t tmp = lab[t];
    lab[t] = lab[u], lab[u] = tmp;
  }
  /* planned degree of each label (stochastic rounding of its weight) */
  int64_t planned = n;
  for (int64_t t = 0; t < n; t++) {
    double f = floor(w[t]);
    int64_t d = (int64_t)f + (uniform01(s_round, (uint64_t)t) < w[t] - f);
    if (d > n - 1) d = n - 1;
    deg[lab[t]] = (int32_t)d;
    planned += d;
  }
  if (planned > INT32_MAX) {
    st = COAL_ERROR(ctx, COAL_ERR_OVERFLOW, "%lld nonzeros exceed 2^31-1", (long long)planned);
    goto fail;
  }
  if (wsum > 0) {
    COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(alias_slot) * (size_t)n, (void **)&tab), fail);
    COAL_CALL_GOTO(st, build_alias(ctx, n, w, wsum, lab, tab), fail);
  }
  coal_free(w), w = NULL;
  coal_free(lab), lab = NULL;
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * (size_t)n, (void **)&mark), fail);
  memset(mark, 0xff, sizeof(int32_t) * (size_t)n);
  COAL_CALL_GOTO(st, coal_gen_alloc_csr(ctx, n, planned, dtype, &rp, &ci, &v), fail);

  /* rows in order; p never passes the planned start of the row, so writing is in place */
  int64_t p = 0;
  uint64_t draw = 0;
  const double dn = (double)n;
  for (int64_t r = 0; r < n; r++) {
    int64_t start = p;
    ci[p++] = (int32_t)r;
    mark[r] = (int32_t)r;
    int64_t need = deg[r], got = 0, tries = 64 * (int64_t)deg[r] + 256;
    while (got < need && tries-- > 0) {
      double x = uniform01(s_col, draw++) * dn;
      int64_t t = (int64_t)x;
      if (t >= n) t = n - 1;
      const alias_slot *a = &tab[t];
      int32_t c = (x - (double)t) < a->prob ? a->col : a->alias;
      if (mark[c] == (int32_t)r) continue;
      mark[c] = (int32_t)r;
      ci[p++] = c;
      got++;
    }
    sort_i32(ci + start, p - start);
    rp[r + 1] = (int32_t)p;
  }
  for (int64_t q = 0; q < p; q++) coal_gen_store(v, dtype, q, 1.0 - uniform01(s_val, (uint64_t)q));
  coal_free(deg), coal_free(mark), coal_free(tab);
  return coal_mat_wrap_csr(ctx, (int32_t)n, (int32_t)n, rp, ci, v, dtype, A);
fail:
  coal_free(w), coal_free(lab), coal_free(deg), coal_free(mark), coal_free(tab);
  coal_free(rp), coal_free(ci), coal_free(v);
  return st;
}

/* ---- random SPD ------------------------------------------------------------------------ *
 * Each row i draws k_i (stochastic rounding of mean_degree/2) partners j != i uniformly; every
 * draw makes the pair {i, j}, stored in both rows, so a row holds about mean_degree
 * off-diagonals. Pairs drawn twice are kept once. The value of {i, j} is a hash of the
 * unordered pair (uniform in [-1,1)), so the matrix is symmetric by construction; the
 * diagonal is the row's sum of |offdiag| (in the stored precision) plus 1. */

static void sort_i32(int32_t *a, int64_t len) {
  if (len <= 24) {
    for (int64_t i = 1; i < len; i++) {
      int32_t x = a[i];
      int64_t j = i;
      while (j > 0 && a[j - 1] > x) a[j] = a[j - 1], j--;
      a[j] = x;
    }
    return;
  }
  /* heap sort: long rows are rare, and this keeps the worst case O(len log len) */
  for (int64_t s = len / 2 - 1;; s--) {
    for (int64_t r = s;;) {
      int64_t c = 2 * r + 1;
      if (c >= len) break;
      if (c + 1 < len && a[c + 1] > a[c]) c++;
      if (a[r] >= a[c]) break;
      int32_t t = a[r];
      a[r] = a[c], a[c] = t, r = c;
    }
    if (s == 0) break;
  }
  for (int64_t e = len - 1; e > 0; e--) {
    int32_t t = a[0];
    a[0] = a[e], a[e] = t;
    for (int64_t r = 0;;) {
      int64_t c = 2 * r + 1;
      if (c >= e) break;
      if (c + 1 < e && a[c + 1] > a[c]) c++;
      if (a[r] >= a[c]) break;
      int32_t u = a[r];
      a[r] = a[c], a[c] = u, r = c;
    }
  }
}

coal_status coal_gen_random_spd(coal_ctx ctx, int64_t n, double mean_degree, uint64_t seed,
                                coal_dtype dtype, coal_mat *A) {
  if (!ctx) return COAL_ERR_ARG;
  COAL_CALL(coal_gen_check_out(ctx, dtype, A));
  COAL_CHECK(ctx, n >= 0, COAL_ERR_ARG, "negative size %lld", (long long)n);
  COAL_CHECK(ctx, n <= INT32_MAX, COAL_ERR_OVERFLOW, "%lld rows exceed 2^31-1", (long long)n);
  COAL_CHECK(ctx, mean_degree >= 0.0 && mean_degree <= (double)(n > 1 ? n - 1 : 0), COAL_ERR_ARG,
             "mean off-diagonal degree %g outside [0, n-1 = %lld]", mean_degree,
             (long long)(n > 1 ? n - 1 : 0));
  COAL_CHECK(
      ctx, (double)n * (mean_degree + 1.0) + 8.0 * sqrt((double)n) + 64.0 <= (double)INT32_MAX,
      COAL_ERR_OVERFLOW, "about %.0f nonzeros exceed 2^31-1", (double)n * (mean_degree + 1.0));
  const uint64_t s_round = stream_seed(seed, 1), s_col = stream_seed(seed, 2),
                 s_val = stream_seed(seed, 3);
  const double half = 0.5 * mean_degree, fh = floor(half);
  coal_status st = COAL_SUCCESS;
  int32_t *kdeg = NULL, *partner = NULL, *cnt = NULL, *rp = NULL, *ci = NULL;
  void *v = NULL;
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * ((size_t)n + 1), (void **)&kdeg), fail);
  int64_t ndraw = 0;
  for (int64_t i = 0; i < n; i++) {
    kdeg[i] = (int32_t)fh + (uniform01(s_round, (uint64_t)i) < half - fh);
    ndraw += kdeg[i];
  }
  int64_t planned = n + 2 * ndraw;
  if (planned > INT32_MAX) {
    st = COAL_ERROR(ctx, COAL_ERR_OVERFLOW, "%lld nonzeros exceed 2^31-1", (long long)planned);
    goto fail;
  }
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * (size_t)ndraw, (void **)&partner), fail);
  COAL_CALL_GOTO(st, coal_calloc(ctx, sizeof(int32_t) * ((size_t)n + 1), (void **)&cnt), fail);
  /* draws and row counts (diagonal + own draws + incoming draws) */
  int64_t d = 0;
  for (int64_t i = 0; i < n; i++) {
    cnt[i] += 1 + kdeg[i];
    for (int32_t q = 0; q < kdeg[i]; q++, d++) {
      int64_t j = (int64_t)(uniform01(s_col, (uint64_t)d) * (double)(n - 1));
      if (j > n - 2) j = n - 2;
      if (j >= i) j++;
      partner[d] = (int32_t)j;
      cnt[j]++;
    }
  }
  COAL_CALL_GOTO(st, coal_gen_alloc_csr(ctx, n, planned, dtype, &rp, &ci, &v), fail);
  for (int64_t i = 0; i < n; i++) rp[i + 1] = rp[i] + cnt[i];
  for (int64_t i = 0; i < n; i++) cnt[i] = rp[i]; /* insertion cursors */
  d = 0;
  for (int64_t i = 0; i < n; i++) {
    ci[cnt[i]++] = (int32_t)i;
    for (int32_t q = 0; q < kdeg[i]; q++, d++) {
      int32_t j = partner[d];
      ci[cnt[i]++] = j;
      ci[cnt[j]++] = (int32_t)i;
    }
  }
  coal_free(partner), partner = NULL;
  coal_free(cnt), cnt = NULL;
  coal_free(kdeg), kdeg = NULL;
  /* sort, drop repeated pairs (compacting in place), then values */
  int64_t w = 0, start = 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t end = rp[i + 1];
    sort_i32(ci + start, end - start);
    int64_t row0 = w, diag = -1;
    double asum = 0.0;
    for (int64_t q = start; q < end; q++) {
      int32_t c = ci[q];
      if (w > row0 && ci[w - 1] == c) continue;
      ci[w] = c;
      if (c == (int32_t)i)
        diag = w;
      else {
        int64_t lo = c < i ? c : i, hi = c < i ? i : c;
        double x = coal_random_uniform(s_val, (uint64_t)(lo * n + hi));
        if (dtype == COAL_F32) { /* round as stored; keep it below 1 */
          float f = (float)x;
          x = f < 1.0f ? (double)f : (double)nextafterf(1.0f, 0.0f);
        }
        coal_gen_store(v, dtype, w, x);
        asum += fabs(x);
      }
      w++;
    }
    coal_gen_store(v, dtype, diag, asum + 1.0);
    start = end;
    rp[i + 1] = (int32_t)w;
  }
  COAL_CALL(coal_mat_wrap_csr(ctx, (int32_t)n, (int32_t)n, rp, ci, v, dtype, A));
  (*A)->symmetric = 1;
  return COAL_SUCCESS;
fail:
  coal_free(kdeg), coal_free(partner), coal_free(cnt);
  coal_free(rp), coal_free(ci), coal_free(v);
  return st;
}
