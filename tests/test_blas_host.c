/* Host dense block operations (kernels/host/blas.c) against formulas written here: sums in long
 * double with the loops in another order (column by column), index arithmetic spelt out per
 * layout. n in {0, 1, 7, 100, 1000, 5003}, widths in {0, 1, 3, 8, 32, 33, 64, 128}, leading
 * dimensions above the tight value (input padding NaN: never read; output padding a sentinel:
 * kept), beta = 0 over NaN, a = -1, dscale with d NULL or not, in place, Y NULL, nrm2 or not,
 * copy_cols with every layout pair and random column maps (other columns kept), eig_resid
 * (random column map and shifts, d NULL or not, W or only the norms), empty sizes
 * (n = 0: G = 0, nrm2 = 0, p = 0: Y = beta*Y, nothing written when q = 0). The CG steps: a
 * hand-computed case with exact (dyadic) numbers, both parities, dinv NULL or not; and several
 * iterations on random vectors against long-double formulas, par alternating. The single-vector
 * operations (n in {0, 1, 7, 1000}): vec_axpbypcz for every combination of x / y present, c zero
 * or not and d, z aliasing x, y or both (z NaN when c == 0 and separate: not read);
 * vec_pointwise (w separate, w = x, w = y; x ./ y with zeros in y gives 0 there); vec_dots for k =
 * 0..9 (one y is x, one repeats another); vec_norms on random entries, with a NaN or -inf at the
 * start, middle or end (also a NaN and an inf), and on entries of size 1e200 and 1e-200 with s = 1
 * (overflow / underflow) and s = 1/max. Entries past the end are never written, inputs other than
 * the output are kept. */
#include "blas.h"
#include "check.h"

#include <float.h>

#define RM COAL_ROW_MAJOR
#define CM COAL_COL_MAJOR

static const double SENT = 12345.0;
static const double TOL = 1e-13;
static uint64_t seed_counter = 4242;
static coal_ctx H;
#define HB (&coal_backend(H)->blas)

static const int64_t widths[] = {0, 1, 3, 8, 32, 33, 64, 128};
#define NW ((int)(sizeof widths / sizeof widths[0]))

static double *hmalloc(size_t count) {
  double *p = malloc(sizeof(double) * (count ? count : 1));
  if (!p) abort(); /* test harness only */
  return p;
}
static int64_t ld_of(int64_t tight, int64_t pad) { return (tight > 0 ? tight : 1) + pad; }
/* entry (i, j) of a block, written out per layout */
static int64_t at(coal_layout l, int64_t ld, int64_t i, int64_t j) {
  if (l == RM) return i * ld + j;
  return j * ld + i;
}
static size_t slen(coal_layout l, int64_t n, int64_t k, int64_t ld) {
  return (size_t)(ld * (l == CM ? k : n));
}
/* Storage of a block: every slot `pad`, then the entries random uniform [-1, 1) (random) or
 * `entry`. */
static double *block(coal_layout l, int64_t n, int64_t k, int64_t ld, int random, double entry,
                     double pad) {
  const size_t len = slen(l, n, k, ld);
  double *a = hmalloc(len);
  for (size_t s = 0; s < len; s++) a[s] = pad;
  const uint64_t seed = seed_counter++;
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < k; j++)
      a[at(l, ld, i, j)] = random ? coal_random_uniform(seed, (uint64_t)(i * k + j)) : entry;
  return a;
}
/* Padding slots (not entries) of a block all hold SENT. */
static int pad_kept(const double *a, coal_layout l, int64_t n, int64_t k, int64_t ld) {
  const size_t len = slen(l, n, k, ld);
  char *is = calloc(len + 1, 1);
  if (!is) abort();
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < k; j++) is[at(l, ld, i, j)] = 1;
  int ok = 1;
  for (size_t s = 0; s < len; s++)
    if (!is[s] && a[s] != SENT) ok = 0;
  free(is);
  return ok;
}
/* |got - ref| / scale, NaN: inf */
static double err(double got, long double ref, long double scale) {
  if (isnan(got) || isnan((double)ref)) return INFINITY;
  long double e = fabsl((long double)got - ref);
  return (double)(scale > 0 ? e / scale : e);
}

/* ---- gram ---------------------------------------------------------------------------------- */
static void t_gram(int64_t n, int64_t p, int64_t q) {
  const int64_t ldx = ld_of(p, (p + 1) % 3), ldy = ld_of(q, q % 2), ldg = q + 3;
  double *X = block(RM, n, p, ldx, 1, 0, NAN), *Y = block(RM, n, q, ldy, 1, 0, NAN);
  double *G = block(RM, p, q, ldg, 0, NAN, SENT);
  CHECK_OK(H, HB->gram(H, n, p, q, X, ldx, Y, ldy, G, ldg));
  double worst = 0;
  for (int64_t a = 0; a < p; a++)
    for (int64_t b = 0; b < q; b++) {
      long double s = 0, nx = 0, ny = 0;
      for (int64_t i = n - 1; i >= 0; i--) { /* backwards, in long double */
        const long double xa = X[i * ldx + a], yb = Y[i * ldy + b];
        s += xa * yb, nx += xa * xa, ny += yb * yb;
      }
      const double e =
          n == 0 ? (G[a * ldg + b] == 0.0 ? 0 : INFINITY) : err(G[a * ldg + b], s, sqrtl(nx * ny));
      if (e > worst) worst = e;
    }
  const int pad = pad_kept(G, RM, p, q, ldg);
  CHECK(worst <= TOL && pad, "gram n=%lld p=%lld q=%lld: error %.3g, padding %s", (long long)n,
        (long long)p, (long long)q, worst, pad ? "kept" : "WRITTEN");
  free(X), free(Y), free(G);
}

/* ---- gemm ---------------------------------------------------------------------------------- */
static void t_gemm(int64_t n, int64_t p, int64_t q, double a, double beta) {
  const int64_t ldx = ld_of(p, (p + 2) % 3), ldy = ld_of(q, (q + 1) % 2), ldc = q + 2;
  double *X = block(RM, n, p, ldx, 1, 0, NAN), *C = block(RM, p, q, ldc, 1, 0, NAN);
  double *Y = block(RM, n, q, ldy, beta != 0.0, NAN, SENT);
  double *Y0 = hmalloc(slen(RM, n, q, ldy));
  memcpy(Y0, Y, sizeof(double) * slen(RM, n, q, ldy));
  CHECK_OK(H, HB->gemm(H, n, p, q, a, X, ldx, C, ldc, beta, Y, ldy));
  double worst = 0;
  for (int64_t b = 0; b < q; b++)
    for (int64_t i = 0; i < n; i++) {
      long double s = 0, sa = 0;
      for (int64_t c = p - 1; c >= 0; c--) {
        s += (long double)X[i * ldx + c] * C[c * ldc + b];
        sa += fabsl((long double)X[i * ldx + c] * C[c * ldc + b]);
      }
      long double ref = (long double)a * s, scale = fabsl((long double)a) * sa;
      if (beta != 0.0) {
        ref += (long double)beta * Y0[i * ldy + b];
        scale += fabsl((long double)beta * Y0[i * ldy + b]);
      }
      const double e = err(Y[i * ldy + b], ref, scale);
      if (e > worst) worst = e;
    }
  const int pad = pad_kept(Y, RM, n, q, ldy);
  CHECK(worst <= TOL && pad, "gemm n=%lld p=%lld q=%lld a=%g beta=%g: error %.3g, padding %s",
        (long long)n, (long long)p, (long long)q, a, beta, worst, pad ? "kept" : "WRITTEN");
  free(X), free(C), free(Y), free(Y0);
}

/* ---- dscale -------------------------------------------------------------------------------- */
/* mode 0: Y separate, 1: in place, 2: Y NULL */
static void t_dscale(int64_t n, int64_t k, int use_d, int mode, int nrm) {
  const int64_t ldx = ld_of(k, (k + mode) % 3), ldy = mode == 1 ? ldx : ld_of(k, 1 + k % 2);
  double *X = block(RM, n, k, ldx, 1, 0, mode == 1 ? SENT : NAN);
  double *X0 = hmalloc(slen(RM, n, k, ldx)), *d = hmalloc((size_t)n);
  memcpy(X0, X, sizeof(double) * slen(RM, n, k, ldx));
  const uint64_t sd = seed_counter++;
  for (int64_t i = 0; i < n; i++) d[i] = 3.0 * coal_random_uniform(sd, (uint64_t)i);
  double *Y = mode == 0 ? block(RM, n, k, ldy, 0, NAN, SENT) : mode == 1 ? X : NULL;
  double *nr = hmalloc((size_t)k + 1);
  for (int64_t j = 0; j <= k; j++) nr[j] = j < k ? NAN : SENT;
  CHECK_OK(H, HB->dscale(H, n, k, use_d ? d : NULL, X, ldx, Y, ldy, nrm ? nr : NULL));
  int ok = 1;
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < k; j++) {
      const double x0 = X0[i * ldx + j];
      if (Y && Y[i * ldy + j] != (use_d ? d[i] * x0 : x0)) ok = 0;
      if (mode != 1 && X[i * ldx + j] != x0) ok = 0; /* X read only */
    }
  if (Y && !pad_kept(Y, RM, n, k, ldy)) ok = 0;
  double worst = nr[k] == SENT ? 0 : INFINITY;
  for (int64_t j = 0; nrm && j < k; j++) {
    long double s = 0;
    for (int64_t i = n - 1; i >= 0; i--) s += (long double)X0[i * ldx + j] * X0[i * ldx + j];
    const double e = n == 0 ? (nr[j] == 0.0 ? 0 : INFINITY) : err(nr[j], s, s);
    if (e > worst) worst = e;
  }
  if (!nrm)
    for (int64_t j = 0; j < k; j++)
      if (!isnan(nr[j])) worst = INFINITY;
  CHECK(ok && worst <= TOL, "dscale n=%lld k=%lld d=%d mode=%d nrm=%d: Y %s, nrm2 error %.3g",
        (long long)n, (long long)k, use_d, mode, nrm, ok ? "ok" : "WRONG", worst);
  free(X), free(X0), free(d), free(nr);
  if (mode == 0) free(Y);
}

/* ---- copy_cols ----------------------------------------------------------------------------- */
/* m distinct random indices of [0, range) */
static int32_t *rand_map(int64_t m, int64_t range) {
  int32_t *all = malloc(sizeof(int32_t) * (size_t)(range + 1));
  if (!all) abort();
  for (int64_t i = 0; i < range; i++) all[i] = (int32_t)i;
  const uint64_t s = seed_counter++;
  for (int64_t i = 0; i < m; i++) {
    int64_t j =
        i + (int64_t)((coal_random_uniform(s, (uint64_t)i) + 1.0) * 0.5 * (double)(range - i));
    if (j >= range) j = range - 1;
    int32_t t = all[i];
    all[i] = all[j], all[j] = t;
  }
  return all;
}

static void t_copy(int64_t n, int64_t q, coal_layout lx, coal_layout ly, int maps) {
  const int64_t kx = maps & 1 ? q + 4 : q, ky = maps & 2 ? q + 2 : q;
  const int64_t ldx = ld_of(lx == CM ? n : kx, maps % 2 + 1), ldy = ld_of(ly == CM ? n : ky, 2);
  double *X = block(lx, n, kx, ldx, 1, 0, NAN), *Y = block(ly, n, ky, ldy, 1, 0, SENT);
  const size_t sy = slen(ly, n, ky, ldy);
  double *Y0 = hmalloc(sy);
  memcpy(Y0, Y, sizeof(double) * sy);
  int32_t *xc = maps & 1 ? rand_map(q, kx) : NULL, *yc = maps & 2 ? rand_map(q, ky) : NULL;
  CHECK_OK(H, HB->copy_cols(H, n, q, X, lx, ldx, xc, Y, ly, ldy, yc));
  /* expected: Y0 with column yc[j] replaced by column xc[j] of X */
  for (int64_t j = 0; j < q; j++) {
    const int64_t cx = xc ? xc[j] : j, cy = yc ? yc[j] : j;
    for (int64_t i = 0; i < n; i++)
      Y0[ly == RM ? i * ldy + cy : cy * ldy + i] = X[lx == RM ? i * ldx + cx : cx * ldx + i];
  }
  int ok = 1;
  for (size_t s = 0; s < sy; s++)
    if (!(Y[s] == Y0[s])) ok = 0;
  CHECK(ok, "copy_cols n=%lld q=%lld %s->%s maps=%d: wrong", (long long)n, (long long)q,
        lx == RM ? "row" : "col", ly == RM ? "row" : "col", maps);
  free(X), free(Y), free(Y0), free(xc), free(yc);
}

/* ---- eig_resid ----------------------------------------------------------------------------- */
/* q residual columns picked (random map) from AX / MX of width kx; W separate or NULL. */
static void t_eig_resid(int64_t n, int64_t kx, int64_t q, int use_d, int with_w) {
  const int64_t ldx = ld_of(kx, 1 + kx % 2), ldw = ld_of(q, q % 3);
  double *AX = block(RM, n, kx, ldx, 1, 0, NAN), *MX = block(RM, n, kx, ldx, 1, 0, NAN);
  double *W = with_w ? block(RM, n, q, ldw, 0, NAN, SENT) : NULL, *d = hmalloc((size_t)n);
  double *lam = hmalloc((size_t)q + 1), *nr = hmalloc((size_t)q + 1);
  int32_t *cols = rand_map(q, kx);
  const uint64_t sd = seed_counter++;
  for (int64_t i = 0; i < n; i++) d[i] = 3.0 * coal_random_uniform(sd, (uint64_t)i);
  for (int64_t a = 0; a <= q; a++) {
    lam[a] = 2.0 * coal_random_uniform(sd + 1, (uint64_t)a);
    nr[a] = a < q ? NAN : SENT;
  }
  CHECK_OK(H, HB->eig_resid(H, n, q, AX, MX, ldx, cols, lam, use_d ? d : NULL, W, ldw, nr));
  double worst = nr[q] == SENT ? 0 : INFINITY;
  int ok = 1;
  for (int64_t a = 0; a < q; a++) {
    long double s = 0;
    for (int64_t i = 0; i < n; i++) {
      const long double r =
          (long double)AX[i * ldx + cols[a]] - (long double)lam[a] * MX[i * ldx + cols[a]];
      s += r * r;
      const long double want = use_d ? d[i] * r : r;
      if (W && !(fabsl(W[i * ldw + a] - want) <= 1e-15L * (1 + fabsl(want)))) ok = 0;
    }
    const double e = n == 0 ? (nr[a] == 0.0 ? 0 : INFINITY) : err(nr[a], s, s);
    if (e > worst) worst = e;
  }
  if (W && !pad_kept(W, RM, n, q, ldw)) ok = 0;
  CHECK(ok && worst <= TOL, "eig_resid n=%lld kx=%lld q=%lld d=%d W=%d: W %s, nrm2 error %.3g",
        (long long)n, (long long)kx, (long long)q, use_d, with_w, ok ? "ok" : "WRONG", worst);
  free(AX), free(MX), free(W), free(d), free(lam), free(nr), free(cols);
}

/* ---- CG steps ------------------------------------------------------------------------------ */
/* Numbers chosen so that every operation is exact: p.q = 6.5, alpha = 13 / 6.5 = 2,
 * x + 2p = (2, 1, -2, 3), r - 2q = (-3, -4, 1.5, 0), r.z = 9/2 + 16*17/16 + 2.25*2 + 0 = 26,
 * r.r = 27.25, beta = 26 / 13 = 2, z + 2p = (0.5, -4.25, 1, 4). Without dinv r.z = r.r = 27.25
 * and p = r + (27.25/13) p. */
static void t_cg_hand(int par, int use_dinv) {
  double x[4] = {0, 1, 0, -1}, r[4] = {1, -2, 0.5, 4}, p[4] = {1, 0, -1, 2}, q[4] = {2, 1, -0.5, 2};
  const double dinv[4] = {0.5, 1.0625, 2, 0.25};
  double sc[4] = {NAN, NAN, NAN, NAN};
  sc[COAL_CG_RZ + par] = 13.0;
  CHECK_OK(H, HB->cg_dot(H, 4, p, q, sc, COAL_CG_PQ));
  CHECK(sc[COAL_CG_PQ] == 6.5 && isnan(sc[COAL_CG_RZ + 1 - par]) && isnan(sc[COAL_CG_RR]),
        "cg_dot hand case: %g, expected 6.5 (other slots untouched)", sc[COAL_CG_PQ]);
  CHECK_OK(H, HB->cg_update_xr(H, 4, sc, par, x, r, p, q, use_dinv ? dinv : NULL));
  const double xe[4] = {2, 1, -2, 3}, re[4] = {-3, -4, 1.5, 0};
  int ok = sc[COAL_CG_PQ] == 6.5 && sc[COAL_CG_RZ + par] == 13.0;
  for (int i = 0; i < 4; i++) ok &= x[i] == xe[i] && r[i] == re[i];
  const double rz = use_dinv ? 26.0 : 27.25;
  CHECK(ok && sc[COAL_CG_RZ + 1 - par] == rz && sc[COAL_CG_RR] == 27.25,
        "cg_update_xr hand case par=%d dinv=%d: r.z %g (expected %g), r.r %g (27.25), x/r %s", par,
        use_dinv, sc[COAL_CG_RZ + 1 - par], rz, sc[COAL_CG_RR], ok ? "ok" : "WRONG");
  CHECK_OK(H, HB->cg_update_p(H, 4, sc, par, p, r, use_dinv ? dinv : NULL));
  const double p0[4] = {1, 0, -1, 2}, pe[4] = {0.5, -4.25, 1, 4};
  double e = 0;
  for (int i = 0; i < 4; i++) {
    const long double ref = use_dinv ? (long double)pe[i] : re[i] + 27.25L / 13.0L * p0[i];
    const double ei = err(p[i], ref, 1.0L);
    if (ei > e) e = ei;
  }
  CHECK(e <= (use_dinv ? 0.0 : 1e-14), "cg_update_p hand case par=%d dinv=%d: error %.3g", par,
        use_dinv, e);
}

/* Iterations on random vectors (q = A p with A diagonal), against long double formulas applied
 * to the same inputs at each step. */
static void t_cg_random(int64_t n, int use_dinv, int iters) {
  double *x = hmalloc((size_t)n), *r = hmalloc((size_t)n), *p = hmalloc((size_t)n);
  double *q = hmalloc((size_t)n), *dinv = hmalloc((size_t)n), *A = hmalloc((size_t)n);
  const uint64_t s = seed_counter++;
  for (int64_t i = 0; i < n; i++) {
    A[i] = 2.0 + coal_random_uniform(s, (uint64_t)i);
    dinv[i] = 1.0 / A[i];
    x[i] = coal_random_uniform(s + 1, (uint64_t)i);
    r[i] = coal_random_uniform(s + 2, (uint64_t)i);
    p[i] = (use_dinv ? dinv[i] : 1.0) * r[i];
  }
  const double *dv = use_dinv ? dinv : NULL;
  double sc[4] = {NAN, NAN, NAN, NAN};
  CHECK_OK(H, HB->cg_dot(H, n, r, p, sc, COAL_CG_RZ));
  for (int it = 0; it < iters; it++) {
    const int par = it & 1;
    if (n > 0 && sc[COAL_CG_RZ + par] == 0.0) break; /* converged (n = 1): alpha would be 0/0 */
    for (int64_t i = 0; i < n; i++) q[i] = A[i] * p[i];
    long double pq = 0;
    for (int64_t i = n - 1; i >= 0; i--) pq += (long double)p[i] * q[i];
    CHECK_OK(H, HB->cg_dot(H, n, p, q, sc, COAL_CG_PQ));
    double worst = err(sc[COAL_CG_PQ], pq, pq > 0 ? pq : 1);
    /* x, r from the double alpha; each new r_i is off by up to ~eps (|r_i| + |alpha q_i|) */
    const double alpha = sc[COAL_CG_RZ + par] / sc[COAL_CG_PQ];
    long double *xl = malloc(sizeof(long double) * 2 * (size_t)(n + 1));
    if (!xl) abort();
    long double *rl = xl + n, rz = 0, rr = 0, srz = 0, srr = 0;
    double sx = 0, sr = 0;
    for (int64_t i = n - 1; i >= 0; i--) {
      const long double w = use_dinv ? dinv[i] : 1.0, e = fabs(r[i]) + fabs(alpha * q[i]);
      xl[i] = x[i] + (long double)alpha * p[i];
      rl[i] = r[i] - (long double)alpha * q[i];
      sx = fmax(sx, fabs(x[i]) + fabs(alpha * p[i]));
      sr = fmax(sr, (double)e);
      rz += rl[i] * rl[i] * w, rr += rl[i] * rl[i];
      srz += e * e * w, srr += e * e;
    }
    sc[COAL_CG_RZ + 1 - par] = sc[COAL_CG_RR] = NAN;
    CHECK_OK(H, HB->cg_update_xr(H, n, sc, par, x, r, p, q, dv));
    for (int64_t i = 0; i < n; i++) {
      worst = fmax(worst, err(x[i], xl[i], sx));
      worst = fmax(worst, err(r[i], rl[i], sr));
    }
    worst = fmax(worst, err(sc[COAL_CG_RZ + 1 - par], rz, srz > 0 ? srz : 1));
    worst = fmax(worst, err(sc[COAL_CG_RR], rr, srr > 0 ? srr : 1));
    /* p from the double beta */
    const double beta = sc[COAL_CG_RZ + 1 - par] / sc[COAL_CG_RZ + par];
    double sp = 0;
    for (int64_t i = 0; i < n; i++) {
      xl[i] = (long double)(use_dinv ? dinv[i] : 1.0) * r[i] + (long double)beta * p[i];
      sp = fmax(sp, fabs((use_dinv ? dinv[i] : 1.0) * r[i]) + fabs(beta * p[i]));
    }
    CHECK_OK(H, HB->cg_update_p(H, n, sc, par, p, r, dv));
    for (int64_t i = 0; i < n; i++) worst = fmax(worst, err(p[i], xl[i], sp));
    CHECK(worst <= TOL && (n > 0 || (sc[COAL_CG_PQ] == 0 && sc[COAL_CG_RR] == 0)),
          "cg n=%lld dinv=%d it=%d par=%d: error %.3g", (long long)n, use_dinv, it, par, worst);
    free(xl);
  }
  free(x), free(r), free(p), free(q), free(dinv), free(A);
}

/* ---- Block-CG steps ------------------------------------------------------------------------ */
/* max over (a, b) of |G[a,b] - sum_i A[i,a] B[i,b]| / sqrt(sum A^2 sum B^2), tight blocks; sums
 * in long double, backwards */
static double gram_err(int64_t n, int64_t p, int64_t q, const double *A, const double *B,
                       const double *G) {
  double worst = 0;
  for (int64_t a = 0; a < p; a++)
    for (int64_t b = 0; b < q; b++) {
      long double s = 0, na = 0, nb = 0;
      for (int64_t i = n - 1; i >= 0; i--) {
        const long double x = A[i * p + a], y = B[i * q + b];
        s += x * y, na += x * x, nb += y * y;
      }
      const double e =
          n == 0 ? (G[a * q + b] == 0.0 ? 0 : INFINITY) : err(G[a * q + b], s, sqrtl(na * nb));
      if (e > worst) worst = e;
    }
  return worst;
}

/* Y (n x q) against Y0 + sgn * X C (long double), scale 1 + sum |X||C| */
static double upd_err(int64_t n, int64_t p, int64_t q, const double *Y0, double sgn,
                      const double *X, const double *C, const double *Y) {
  double worst = 0;
  for (int64_t i = 0; i < n; i++)
    for (int64_t b = 0; b < q; b++) {
      long double s = Y0 ? Y0[i * q + b] : 0, sc = 1;
      for (int64_t c = p - 1; c >= 0; c--)
        s += sgn * (long double)X[i * p + c] * C[c * q + b],
            sc += fabsl((long double)X[i * p + c] * C[c * q + b]);
      const double e = err(Y[i * q + b], s, sc);
      if (e > worst) worst = e;
    }
  return worst;
}

/* bcg_update, bcg_gram (with and without its weights), and bcg_dir with and without the
 * deferred update of X3. */
static void t_bcg(int64_t n, int64_t s, int64_t m, int use_d) {
  double *P = block(RM, n, s, s, 1, 0, 0), *Q = block(RM, n, s, s, 1, 0, 0);
  double *C = block(RM, s, m, m, 1, 0, 0), *X = block(RM, n, m, m, 1, 0, 0);
  double *R = block(RM, n, m, m, 1, 0, 0), *d = block(RM, n, 1, 1, 1, 0, 0);
  for (int64_t i = 0; i < n; i++) d[i] = 1.5 + d[i];
  double *R0 = hmalloc((size_t)(n * m));
  memcpy(R0, R, sizeof(double) * (size_t)(n * m));
  double *Z = block(RM, n, m, m, 0, NAN, NAN), *nrm = block(RM, 1, m, m, 0, NAN, NAN);
  double *QZ = block(RM, s, m, m, 0, NAN, NAN), *RZ = block(RM, m, m, m, 0, NAN, NAN);
  CHECK_OK(H, HB->bcg_update(H, n, s, m, Q, C, R, use_d ? d : NULL, Z, nrm, QZ, RZ));
  double e = upd_err(n, s, m, R0, -1.0, Q, C, R);
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < m; j++) /* the reference for the Grams */
      Z[i * m + j] = (use_d ? d[i] : 1.0) * R[i * m + j];
  for (int64_t j = 0; j < m; j++) {
    long double t = 0;
    for (int64_t i = 0; i < n; i++) t += (long double)R[i * m + j] * R[i * m + j];
    const double ej = err(nrm[j], t, t > 0 ? t : 1);
    if (ej > e) e = ej;
  }
  double g = gram_err(n, s, m, Q, Z, QZ), t;
  if ((t = gram_err(n, m, m, R, Z, RZ)) > g) g = t;
  CHECK(e <= TOL && g <= TOL, "bcg_update n=%lld s=%lld m=%lld d=%d: update error %.3g, Gram %.3g",
        (long long)n, (long long)s, (long long)m, use_d, e, g);
  /* bcg_gram on the same P, Q: PP = P^T diag(d)^-1 P against the Gram of P and P ./ d */
  double *G = block(RM, s, s, s, 0, NAN, NAN), *PP = block(RM, s, s, s, 0, NAN, NAN);
  double *PR = block(RM, s, m, m, 0, NAN, NAN), *Pd = block(RM, n, s, s, 0, NAN, NAN);
  for (int64_t i = 0; i < n; i++)
    for (int64_t c = 0; c < s; c++) Pd[i * s + c] = P[i * s + c] / (use_d ? d[i] : 1.0);
  CHECK_OK(H, HB->bcg_gram(H, n, s, m, P, Q, R, use_d ? d : NULL, Z, G, PP, PR));
  g = gram_err(n, s, s, P, Q, G);
  if ((t = gram_err(n, s, s, P, Pd, PP)) > g) g = t;
  if ((t = gram_err(n, s, m, P, R, PR)) > g) g = t;
  CHECK(g <= TOL, "bcg_gram n=%lld s=%lld d=%d: error %.3g", (long long)n, (long long)s, use_d, g);
  /* bcg_dir: Y = diag(d) X C1 + P C2 with X (n x m), C1 (m x s), P (n x s), C2 (s x s), and
   * X3 += P C3 (X3 n x m, C3 s x m); then p2 = 0 (Y = diag(d) X C1, X3 untouched) */
  double *C1 = block(RM, m, s, s, 1, 0, 0), *C2 = block(RM, s, s, s, 1, 0, 0);
  double *C3 = block(RM, s, m, m, 1, 0, 0), *X3 = block(RM, n, m, m, 1, 0, 0);
  double *Y = block(RM, n, s, s, 0, NAN, NAN), *X30 = hmalloc((size_t)(n * m));
  for (int p2 = s; p2 >= 0; p2 -= s > 0 ? s : 1) {
    for (int64_t i = 0; i < n * s; i++) Y[i] = NAN;
    memcpy(X30, X3, sizeof(double) * (size_t)(n * m));
    CHECK_OK(H, HB->bcg_dir(H, n, m, p2, s, X, use_d ? d : NULL, C1, P, C2, Y, C3, X3));
    e = 0;
    for (int64_t i = 0; i < n; i++)
      for (int64_t b = 0; b < s; b++) {
        long double ref = 0, sc = 1;
        const long double di = use_d ? d[i] : 1.0;
        for (int64_t c = 0; c < m; c++)
          ref += di * X[i * m + c] * C1[c * s + b], sc += fabsl(di * X[i * m + c] * C1[c * s + b]);
        for (int64_t c = 0; c < p2; c++)
          ref += (long double)P[i * s + c] * C2[c * s + b],
              sc += fabsl((long double)P[i * s + c] * C2[c * s + b]);
        const double ei = err(Y[i * s + b], ref, sc);
        if (ei > e) e = ei;
      }
    const double ex = upd_err(n, p2, m, X30, 1.0, P, C3, X3); /* p2 = 0: X3 unchanged */
    CHECK(e <= TOL && ex <= TOL, "bcg_dir n=%lld p1=%lld p2=%d q=%lld d=%d: Y %.3g, X3 %.3g",
          (long long)n, (long long)m, p2, (long long)s, use_d, e, ex);
    if (p2 == 0) break;
  }
  /* q = 0: X3 += P C3 alone (the solver's settle before columns retire) */
  memcpy(X30, X3, sizeof(double) * (size_t)(n * m));
  CHECK_OK(H, HB->bcg_dir(H, n, m, s, 0, NULL, NULL, NULL, P, NULL, NULL, C3, X3));
  e = upd_err(n, s, m, X30, 1.0, P, C3, X3);
  CHECK(e <= TOL, "bcg_dir n=%lld p1=%lld p2=%lld q=0: X3 %.3g", (long long)n, (long long)m,
        (long long)s, e);
  free(P), free(Q), free(C), free(X), free(R), free(d), free(R0), free(Z), free(nrm), free(QZ);
  free(RZ), free(G), free(PP), free(PR), free(Pd), free(C1), free(C2), free(C3), free(X3), free(Y);
  free(X30);
}

/* ---- single vectors (vec_*) ---------------------------------------------------------------- */
/* n random entries in [-1, 1), then SENT (one past the end: never written) */
static double *rvec(int64_t n) {
  double *v = hmalloc((size_t)n + 1);
  const uint64_t s = seed_counter++;
  for (int64_t i = 0; i < n; i++) v[i] = coal_random_uniform(s, (uint64_t)i);
  v[n] = SENT;
  return v;
}
static double *vdup(const double *v, int64_t n) {
  double *c = hmalloc((size_t)n + 1);
  memcpy(c, v, sizeof(double) * ((size_t)n + 1));
  return c;
}
static int vsame(const double *a, const double *b, int64_t n) {
  return memcmp(a, b, sizeof(double) * ((size_t)n + 1)) == 0;
}

/* z = a x + b y + c z + d for every combination of x / y present and c zero or not; alias 0:
 * separate arrays (z NaN when c == 0: it must not be read), 1: z is x, 2: z is y, 3: all three
 * one array. */
static void t_vaxpy(int64_t n, double d) {
  const double a = 1.5, b = -0.75;
  for (int combo = 0; combo < 8; combo++)
    for (int alias = 0; alias < 4; alias++) {
      const int hx = combo & 1, hy = (combo >> 1) & 1;
      const double c = combo & 4 ? -2.5 : 0.0;
      if ((alias == 1 && !hx) || (alias == 2 && !hy) || (alias == 3 && !(hx && hy))) continue;
      double *x = rvec(n), *y = alias == 3 ? x : rvec(n);
      double *z = alias == 1 || alias == 3 ? x : alias == 2 ? y : rvec(n);
      for (int64_t i = 0; alias == 0 && c == 0.0 && i < n; i++) z[i] = NAN;
      double *x0 = vdup(x, n), *y0 = vdup(y, n), *z0 = vdup(z, n);
      CHECK_OK(H, HB->vec_axpbypcz(H, n, a, hx ? x : NULL, b, hy ? y : NULL, c, z, d));
      double worst = 0;
      for (int64_t i = 0; i < n; i++) {
        long double ref = d, sc = fabs(d);
        if (hx) ref += (long double)a * x0[i], sc += fabsl((long double)a * x0[i]);
        if (hy) ref += (long double)b * y0[i], sc += fabsl((long double)b * y0[i]);
        if (c != 0.0) ref += (long double)c * z0[i], sc += fabsl((long double)c * z0[i]);
        worst = fmax(worst, err(z[i], ref, sc > 0 ? sc : 1));
      }
      /* the inputs that are not z are read only */
      const int kept = z[n] == SENT && (z == x || vsame(x, x0, n)) && (z == y || vsame(y, y0, n));
      CHECK(worst <= TOL && kept,
            "vec_axpbypcz n=%lld x=%d y=%d c=%g d=%g alias=%d: error %.3g, %s", (long long)n, hx,
            hy, c, d, alias, worst, kept ? "inputs and end kept" : "inputs or end WRITTEN");
      if (z != x && z != y) free(z);
      if (y != x) free(y);
      free(x), free(x0), free(y0), free(z0);
    }
}

/* w = x .* y or x ./ y (0 where y is 0: every third entry); alias 0: w separate (NaN before),
 * 1: w is x, 2: w is y. */
static void t_vpointwise(int64_t n, int op, int alias) {
  double *x = rvec(n), *y = rvec(n);
  for (int64_t i = 0; op == COAL_VEC_DIV && i < n; i += 3) y[i] = 0.0;
  double *x0 = vdup(x, n), *y0 = vdup(y, n), *w = alias == 1 ? x : alias == 2 ? y : rvec(n);
  for (int64_t i = 0; alias == 0 && i < n; i++) w[i] = NAN;
  CHECK_OK(H, HB->vec_pointwise(H, n, op, x, y, w));
  double worst = 0;
  for (int64_t i = 0; i < n; i++) {
    const long double ref = op == COAL_VEC_MULT ? (long double)x0[i] * y0[i]
                            : y0[i] == 0.0      ? 0.0L
                                                : (long double)x0[i] / y0[i];
    worst = fmax(worst, err(w[i], ref, fabsl(ref) > 0 ? fabsl(ref) : 1));
    if (op == COAL_VEC_DIV && y0[i] == 0.0 && w[i] != 0.0) worst = INFINITY;
  }
  const int kept = w[n] == SENT && (w == x || vsame(x, x0, n)) && (w == y || vsame(y, y0, n));
  CHECK(worst <= TOL && kept, "vec_pointwise n=%lld op=%d alias=%d: error %.3g, %s", (long long)n,
        op, alias, worst, kept ? "inputs and end kept" : "inputs or end WRITTEN");
  if (alias == 0) free(w);
  free(x), free(y), free(x0), free(y0);
}

/* out[j] = x . ys[j] for k vectors; ys[2] is x itself, ys[7] repeats ys[0]. */
static void t_vdots(int64_t n, int64_t k) {
  double *x = rvec(n), *own[10], *out = hmalloc((size_t)k + 1);
  const double *ys[10];
  for (int64_t j = 0; j < k; j++) {
    own[j] = rvec(n);
    ys[j] = j == 2 ? x : j == 7 ? ys[0] : own[j];
    out[j] = NAN;
  }
  out[k] = SENT;
  CHECK_OK(H, HB->vec_dots(H, n, k, x, ys, out));
  double worst = out[k] == SENT ? 0 : INFINITY;
  for (int64_t j = 0; j < k; j++) {
    long double s = 0, sa = 0;
    for (int64_t i = n - 1; i >= 0; i--) {
      s += (long double)x[i] * ys[j][i];
      sa += fabsl((long double)x[i] * ys[j][i]);
    }
    worst = fmax(worst, n == 0 ? (out[j] == 0.0 ? 0 : INFINITY) : err(out[j], s, sa));
  }
  CHECK(worst <= TOL, "vec_dots n=%lld k=%lld: error %.3g", (long long)n, (long long)k, worst);
  for (int64_t j = 0; j < k; j++) free(own[j]);
  free(x), free(out);
}

/* err within TOL, or both the same infinity */
static int close_or_inf(double got, long double ref, long double scale) {
  if (isinf((double)ref)) return got == (double)ref;
  return err(got, ref, scale > 0 ? scale : 1) <= TOL;
}

/* vec_norms with s = 1 and s = 1/max. mode 0: random entries; 1: a NaN at entry p; 2: -inf at p;
 * 3: entries times 1e200 (with s = 1 the sum of squares overflows); 4: entries times 1e-200 (with
 * s = 1 it underflows); 5: a NaN at p and +inf at n-1-p (NaN wins the maximum). */
static void t_vnorms(int64_t n, int mode, int64_t p) {
  double *x = rvec(n);
  for (int64_t i = 0; i < n; i++) x[i] *= mode == 3 ? 1e200 : mode == 4 ? 1e-200 : 1.0;
  if (n > 0 && mode == 5) x[n - 1 - p] = INFINITY;
  if (n > 0 && (mode == 1 || mode == 2 || mode == 5)) x[p] = mode == 2 ? -INFINITY : NAN;
  long double s1 = 0, mx = 0;
  for (int64_t i = n - 1; i >= 0; i--) {
    const long double a = fabsl((long double)x[i]);
    s1 += a;
    if (a > mx) mx = a;
  }
  for (int pass = 0; pass < 2; pass++) {
    const double s = pass == 1 && mx > 0 && isfinite((double)mx) ? 1.0 / (double)mx : 1.0;
    double out[4] = {NAN, NAN, NAN, SENT};
    CHECK_OK(H, HB->vec_norms(H, n, x, s, out));
    long double s2 = 0;
    for (int64_t i = n - 1; i >= 0; i--) s2 += ((long double)s * x[i]) * ((long double)s * x[i]);
    int ok = out[3] == SENT;
    if ((mode == 1 || mode == 5) && n > 0)
      ok &= isnan(out[0]) && isnan(out[1]) && isnan(out[2]);
    else {
      ok &= close_or_inf(out[0], s1, s1) && out[2] == (double)mx;
      if (s2 > (long double)DBL_MAX)
        ok &= isinf(out[1]);
      else if (s2 < 1e-290L) /* lost to underflow: the caller retries with s = 1/max */
        ok &= out[1] >= 0 && out[1] < 1e-290;
      else
        ok &= close_or_inf(out[1], s2, s2);
    }
    CHECK(ok, "vec_norms n=%lld mode=%d p=%lld s=%g: %.17g %.17g %.17g", (long long)n, mode,
          (long long)p, s, out[0], out[1], out[2]);
  }
  free(x);
}

/* resid_dd: residuals the fp64 sum loses entirely. A = [1 1; 1/3 1] (fp64 third).
 * x = (2^53, 1), b_0 = 2^53: r_0 = -1, where fp64 rounds 2^53 + 1 to 2^53 and gives 0.
 * x = (3, 0), b_1 = 1: r_1 = 1 - 3 fl(1/3) = 2^-54 exactly, where fp64 rounds the product to 1.
 * One column (k = 1), every pair of layouts. */
static void t_resid_dd(coal_layout lb, coal_layout lx) {
  const double third = 1.0 / 3.0;
  int32_t ri[4] = {0, 0, 1, 1}, ci[4] = {0, 1, 0, 1};
  double v[4] = {1.0, 1.0, third, 1.0};
  coal_mat A = NULL;
  CHECK_OK(H, coal_mat_create_coo(H, 2, 2, 4, ri, ci, v, COAL_F64, &A));
  const int64_t ldb = lb == RM ? 1 : 2, ldx = lx == RM ? 1 : 2;
  double b[2] = {0x1p53, 1.0}, x0[2] = {0x1p53, 1.0}, x1[2] = {3.0, 0.0}, R[2] = {NAN, NAN};
  CHECK_OK(H, coal_backend(H)->blas.resid_dd(A, 1, b, lb, ldb, x0, lx, ldx, R));
  CHECK(R[0] == -1.0, "resid_dd row 0: %.17g, want -1", R[0]);
  R[1] = NAN;
  CHECK_OK(H, coal_backend(H)->blas.resid_dd(A, 1, b, lb, ldb, x1, lx, ldx, R));
  const long double exact = 1.0L - 3.0L * (long double)third;
  CHECK(R[1] == (double)exact && exact == 0x1p-54L, "resid_dd row 1: %.17g, want %.17Lg", R[1],
        exact);
  coal_mat_destroy(&A);
}

int main(void) {
  CHECK_OK(NULL, coal_ctx_create(COAL_BACKEND_HOST, &H));
  if (!H) return check_finish();
  CHECK(coal_backend(H) == &coal_backend_host, "coal_backend(host context) is not the host table");

  for (int l = 0; l < 4; l++) t_resid_dd(l & 1 ? RM : CM, l & 2 ? RM : CM);

  const int64_t ns[] = {0, 1, 7, 100};
  for (int a = 0; a < 4; a++)
    for (int i = 0; i < NW; i++)
      for (int j = 0; j < NW; j++) {
        t_gram(ns[a], widths[i], widths[j]);
        t_gemm(ns[a], widths[i], widths[j], 1.0, 0.0);
        t_gemm(ns[a], widths[i], widths[j], -1.0, 1.0);
        t_gemm(ns[a], widths[i], widths[j], 1.0, 0.5);
      }
  t_gram(1000, 33, 8), t_gram(5003, 3, 64), t_gram(5003, 128, 1);
  t_gemm(1000, 0, 7, -1.0, 0.5), t_gemm(1000, 64, 33, -1.0, 0.0), t_gemm(5003, 8, 3, 1.0, 0.5);

  const int64_t dn[] = {0, 1, 7, 100, 1000};
  for (int a = 0; a < 5; a++)
    for (int i = 0; i < NW; i++)
      for (int use_d = 0; use_d < 2; use_d++)
        for (int mode = 0; mode < 3; mode++)
          for (int nrm = 0; nrm < 2; nrm++) t_dscale(dn[a], widths[i], use_d, mode, nrm);

  for (int a = 0; a < 5; a++)
    for (int i = 0; i < NW; i++)
      for (int l = 0; l < 4; l++)
        for (int maps = 0; maps < 4; maps++)
          t_copy(dn[a], widths[i], l & 1 ? RM : CM, l & 2 ? RM : CM, maps);

  for (int a = 0; a < 5; a++)
    for (int i = 0; i < NW; i++)
      for (int use_d = 0; use_d < 2; use_d++)
        for (int with_w = 0; with_w < 2; with_w++)
          t_eig_resid(dn[a], widths[i] + 2, widths[i] / 2 + (i & 1), use_d, with_w);

  for (int par = 0; par < 2; par++)
    for (int use_dinv = 0; use_dinv < 2; use_dinv++) t_cg_hand(par, use_dinv);
  const int64_t cn[] = {0, 1, 7, 1000, 5003};
  for (int a = 0; a < 5; a++)
    for (int use_dinv = 0; use_dinv < 2; use_dinv++) t_cg_random(cn[a], use_dinv, 6);

  const int64_t bn[] = {0, 1, 7, 100, 1000};
  const int64_t bw[] = {0, 1, 5, 32, 33};
  for (int a = 0; a < 5; a++)
    for (int i = 0; i < 5; i++)
      for (int j = 1; j < 5; j++) t_bcg(bn[a], bw[i], bw[j], (i + j) & 1);
  t_bcg(7, 3, 300, 1), t_bcg(7, 0, 300, 0); /* the pass-by-pass path of wide blocks */

  const int64_t vn[] = {0, 1, 7, 1000};
  for (int a = 0; a < 4; a++) {
    t_vaxpy(vn[a], 0.0), t_vaxpy(vn[a], -0.5);
    for (int op = 0; op < 2; op++)
      for (int alias = 0; alias < 3; alias++) t_vpointwise(vn[a], op, alias);
    for (int64_t k = 0; k <= 9; k++) t_vdots(vn[a], k);
    for (int mode = 0; mode < 6; mode++) {
      t_vnorms(vn[a], mode, 0);
      if (vn[a] > 1 && (mode == 1 || mode == 2 || mode == 5))
        t_vnorms(vn[a], mode, vn[a] / 2), t_vnorms(vn[a], mode, vn[a] - 1);
    }
  }
  {
    double v[2] = {1, 2};
    CHECK_ERR(H, HB->vec_pointwise(H, 2, 2, v, v, v), COAL_ERR_ARG);
  }

  coal_ctx_destroy(&H);
  return check_finish();
}
