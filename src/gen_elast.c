/* 3-D linear elasticity on a box (coal_gen_elast3d) and rigid-body modes (coal_rigid_body_modes).
 *
 * The unit cube is cut into n^3 cubes of side h = 1/n, each a trilinear hexahedron (Q1): nodes
 * (i, j, k), 0 <= i, j, k <= n, at (i h, j h, k h), three unknowns a node (u_x, u_y, u_z), the
 * node's unknowns together and nodes in x-fastest order. Isotropic material, Young's modulus 1
 * and Poisson ratio nu: Lame lambda = nu / ((1 + nu)(1 - 2 nu)), mu = 1 / (2 (1 + nu)); stress
 * = D strain with the strain (e_xx, e_yy, e_zz, g_xy, g_yz, g_xz). Every element has the same
 * 24 x 24 stiffness K_e = sum over the 2 x 2 x 2 Gauss points of B^T D B det J (exact for the
 * trilinear shape functions' polynomial degree), det J = (h/2)^3, B the strain-displacement
 * matrix of the shape functions N_a = (1 +- xi)(1 +- eta)(1 +- zeta) / 8, local node
 * a = a_x + 2 a_y + 4 a_z (a_x = i - i_element, ...). The global entry of nodes p and q is the
 * sum of K_e's blocks over the elements that hold both (at most 8 for p = q, 1 for a corner
 * neighbour), computed row by row from the grid: no COO triples, columns sorted (neighbours in
 * (dz, dy, dx) order, then the component). Up to 27 x 3 = 81 entries a row.
 *
 * clamped: the nodes of the face x = 0 are fixed (removed): SPD. Free: the matrix is singular
 * with the six rigid-body modes as its null space, the check of the element and the assembly
 * (tests/test_generators.c). Memory of the result only; O(rows x 81 x 8) flops. */
#include "internal.h"

#include <math.h>
#include <string.h>

/* The element stiffness, row-major 24 x 24, for side h and Poisson ratio nu (E = 1). */
static void element_stiffness(double h, double nu, double Ke[24 * 24]) {
  const double lam = nu / ((1.0 + nu) * (1.0 - 2.0 * nu)), mu = 1.0 / (2.0 * (1.0 + nu));
  const double g = 1.0 / sqrt(3.0), detj = h * h * h / 8.0, inv = 2.0 / h;
  memset(Ke, 0, sizeof(double) * 24 * 24);
  for (int gp = 0; gp < 8; gp++) {
    const double xi[3] = {(gp & 1) ? g : -g, (gp & 2) ? g : -g, (gp & 4) ? g : -g};
    double dn[8][3]; /* dN_a / dx_d */
    for (int a = 0; a < 8; a++) {
      const double s[3] = {(a & 1) ? 1.0 : -1.0, (a & 2) ? 1.0 : -1.0, (a & 4) ? 1.0 : -1.0};
      const double f[3] = {1.0 + s[0] * xi[0], 1.0 + s[1] * xi[1], 1.0 + s[2] * xi[2]};
      dn[a][0] = s[0] * f[1] * f[2] / 8.0 * inv;
      dn[a][1] = f[0] * s[1] * f[2] / 8.0 * inv;
      dn[a][2] = f[0] * f[1] * s[2] / 8.0 * inv;
    }
    double B[6][24];
    memset(B, 0, sizeof B);
    for (int a = 0; a < 8; a++) {
      const double *d = dn[a];
      B[0][3 * a] = d[0], B[1][3 * a + 1] = d[1], B[2][3 * a + 2] = d[2];
      B[3][3 * a] = d[1], B[3][3 * a + 1] = d[0];
      B[4][3 * a + 1] = d[2], B[4][3 * a + 2] = d[1];
      B[5][3 * a] = d[2], B[5][3 * a + 2] = d[0];
    }
    double DB[6][24]; /* D B: D = lam 1 1^T + 2 mu on the normal block, mu on the shears */
    for (int c = 0; c < 24; c++) {
      const double tr = B[0][c] + B[1][c] + B[2][c];
      for (int r = 0; r < 3; r++) DB[r][c] = lam * tr + 2.0 * mu * B[r][c];
      for (int r = 3; r < 6; r++) DB[r][c] = mu * B[r][c];
    }
    for (int r = 0; r < 24; r++)
      for (int c = 0; c < 24; c++) {
        double s = 0.0;
        for (int k = 0; k < 6; k++) s += B[k][r] * DB[k][c];
        Ke[r * 24 + c] += s * detj;
      }
  }
  /* symmetric to the bit (the sums above round r, c and c, r apart): then every global pair of
   * entries sums the same terms in the same order, and A is exactly symmetric */
  for (int r = 0; r < 24; r++)
    for (int c = 0; c < r; c++)
      Ke[r * 24 + c] = Ke[c * 24 + r] = 0.5 * (Ke[r * 24 + c] + Ke[c * 24 + r]);
}

/* Free nodes along x: i0..n (i0 = 1 when the face x = 0 is clamped). */
static coal_status elast_size(coal_ctx ctx, int64_t n, int clamped, int64_t *nodes) {
  COAL_CHECK(ctx, n >= 1, COAL_ERR_ARG, "elasticity box of %lld elements a side: at least 1",
             (long long)n);
  const double rows = 3.0 * (double)(n + 1 - (clamped != 0)) * (double)(n + 1) * (double)(n + 1);
  COAL_CHECK(ctx, rows <= (double)INT32_MAX && 81.0 * rows <= (double)INT32_MAX, COAL_ERR_OVERFLOW,
             "elasticity box of %lld elements a side: %.0f rows beyond 32-bit indices",
             (long long)n, rows);
  *nodes = (n + 1 - (clamped != 0)) * (n + 1) * (n + 1);
  return COAL_SUCCESS;
}

coal_status coal_gen_elast3d(coal_ctx ctx, int64_t n, double nu, int clamped, coal_dtype dtype,
                             coal_mat *A) {
  if (!ctx) return COAL_ERR_ARG;
  COAL_CALL(coal_gen_check_out(ctx, dtype, A));
  COAL_CHECK(ctx, nu >= 0.0 && nu < 0.5, COAL_ERR_ARG, "Poisson ratio %g outside [0, 0.5)", nu);
  int64_t nodes = 0;
  COAL_CALL(elast_size(ctx, n, clamped, &nodes));
  const int64_t i0 = clamped ? 1 : 0, nx = n + 1 - i0, np = n + 1, rows = 3 * nodes;
  double Ke[24 * 24];
  element_stiffness(1.0 / (double)n, nu, Ke);
  /* entries: per node, its grid neighbours (x among the free nodes) times 3 x 3 */
  int64_t nnz = 0;
  for (int64_t k = 0; k < np; k++)
    for (int64_t j = 0; j < np; j++)
      for (int64_t i = i0; i < np; i++) {
        const int64_t cx = (i > i0) + 1 + (i < n), cy = (j > 0) + 1 + (j < n),
                      cz = (k > 0) + 1 + (k < n);
        nnz += 9 * cx * cy * cz;
      }
  int32_t *rp = NULL, *ci = NULL;
  void *v = NULL;
  COAL_CALL(coal_gen_alloc_csr(ctx, rows, nnz, dtype, &rp, &ci, &v));
  int64_t p = 0;
  for (int64_t k = 0; k < np; k++)
    for (int64_t j = 0; j < np; j++)
      for (int64_t i = i0; i < np; i++) {
        const int64_t node = (i - i0) + nx * (j + np * k);
        double blk[27][9]; /* the 3 x 3 blocks of the neighbours, (dz, dy, dx) order */
        int64_t col[27];
        int nb = 0;
        for (int dz = -1; dz <= 1; dz++)
          for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
              const int64_t ii = i + dx, jj = j + dy, kk = k + dz;
              if (ii < i0 || ii > n || jj < 0 || jj > n || kk < 0 || kk > n) continue;
              double *b = blk[nb];
              memset(b, 0, sizeof blk[0]);
              /* elements (ex, ey, ez) holding both nodes: e in {i-1, i} and {ii-1, ii}, inside */
              for (int64_t ez = (k > kk ? k : kk) - 1; ez <= (k < kk ? k : kk); ez++)
                for (int64_t ey = (j > jj ? j : jj) - 1; ey <= (j < jj ? j : jj); ey++)
                  for (int64_t ex = (i > ii ? i : ii) - 1; ex <= (i < ii ? i : ii); ex++) {
                    if (ex < 0 || ex >= n || ey < 0 || ey >= n || ez < 0 || ez >= n) continue;
                    const int la = (int)((i - ex) + 2 * (j - ey) + 4 * (k - ez));
                    const int lb = (int)((ii - ex) + 2 * (jj - ey) + 4 * (kk - ez));
                    for (int a = 0; a < 3; a++)
                      for (int c = 0; c < 3; c++)
                        b[3 * a + c] += Ke[(3 * la + a) * 24 + 3 * lb + c];
                  }
              col[nb++] = (ii - i0) + nx * (jj + np * kk);
            }
        for (int a = 0; a < 3; a++) {
          for (int s = 0; s < nb; s++)
            for (int c = 0; c < 3; c++) {
              ci[p] = (int32_t)(3 * col[s] + c);
              coal_gen_store(v, dtype, p, blk[s][3 * a + c]);
              p++;
            }
          rp[3 * node + a + 1] = (int32_t)p;
        }
      }
  COAL_CALL(coal_mat_wrap_csr(ctx, (int32_t)rows, (int32_t)rows, rp, ci, v, dtype, A));
  (*A)->symmetric = 1; /* K_e is symmetric and every entry pair sums the same terms */
  return COAL_SUCCESS;
}

coal_status coal_gen_elast3d_coords(coal_ctx ctx, int64_t n, int clamped, double *coords) {
  if (!ctx) return COAL_ERR_ARG;
  COAL_CHECK(ctx, coords, COAL_ERR_ARG, "NULL coordinates");
  int64_t nodes = 0;
  COAL_CALL(elast_size(ctx, n, clamped, &nodes));
  const int64_t i0 = clamped ? 1 : 0, np = n + 1;
  const double h = 1.0 / (double)n;
  int64_t q = 0;
  for (int64_t k = 0; k < np; k++)
    for (int64_t j = 0; j < np; j++)
      for (int64_t i = i0; i < np; i++, q++)
        coords[3 * q] = (double)i * h, coords[3 * q + 1] = (double)j * h,
                   coords[3 * q + 2] = (double)k * h;
  return COAL_SUCCESS;
}

/* Translations, then rotations about the nodes' centroid (the same span as about the origin,
 * better conditioned): dim 3: e_x, e_y, e_z, and r x e for the axes, i.e. (-y, x, 0), (0, -z, y),
 * (z, 0, -x) with coordinates relative to the centroid; dim 2: e_x, e_y, (-y, x). */
coal_status coal_rigid_body_modes(coal_ctx ctx, int64_t nnodes, int dim, const double *coords,
                                  double *B) {
  if (!ctx) return COAL_ERR_ARG;
  COAL_CHECK(ctx, dim == 2 || dim == 3, COAL_ERR_ARG, "rigid-body modes in %d dimensions", dim);
  COAL_CHECK(ctx, nnodes >= 0 && (nnodes == 0 || (coords && B)), COAL_ERR_ARG,
             "NULL coordinates or modes");
  const int64_t rows = (int64_t)dim * nnodes;
  const int m = dim == 3 ? 6 : 3;
  double c[3] = {0.0, 0.0, 0.0};
  for (int64_t q = 0; q < nnodes; q++)
    for (int d = 0; d < dim; d++) c[d] += coords[dim * q + d];
  for (int d = 0; d < dim && nnodes > 0; d++) c[d] /= (double)nnodes;
  memset(B, 0, sizeof(double) * (size_t)rows * (size_t)m);
  for (int64_t q = 0; q < nnodes; q++) {
    const double x = coords[dim * q] - c[0], y = coords[dim * q + 1] - c[1],
                 z = dim == 3 ? coords[dim * q + 2] - c[2] : 0.0;
    const int64_t r = dim * q;
    for (int d = 0; d < dim; d++) B[(int64_t)d * rows + r + d] = 1.0;
    double *R = B + (int64_t)dim * rows; /* the rotations' columns */
    if (dim == 2) {
      R[r] = -y, R[r + 1] = x;
    } else {
      R[r] = -y, R[r + 1] = x;                       /* about z */
      R[rows + r + 1] = -z, R[rows + r + 2] = y;     /* about x */
      R[2 * rows + r] = z, R[2 * rows + r + 2] = -x; /* about y */
    }
  }
  return COAL_SUCCESS;
}
