/* CUDA dense block operations (kernels/cuda/blas.cu) against their host twins (suite "cuda",
 * exit 77 without a GPU).
 *
 * Every op on fresh random inputs, both sides from the same data, outputs poisoned (NaN)
 * beforehand: n in {0, 1, 7, 1000, 100003, 2^21+5} (the largest for some ops), widths in
 * {0, 1, 3, 8, 32, 33, 64, 128}, leading dimensions above the tight value (input padding holds
 * NaN, which must not be read; output padding holds a sentinel, which must be kept). gram and
 * gram also with Y = X (one block as both operands); gemm (a = 1 / -1, beta = 0 over
 * NaN, 1, 0.5; C overwritten right after the call returns), dscale (d NULL or not; Y separate, in
 * place or NULL; nrm2 or not), copy_cols (every layout pair, column maps NULL or random, unmapped
 * columns kept), eig_resid (random column maps and shifts, d NULL or not, W or only the norms), the
 * CG steps over several iterations with par alternating (dinv NULL or not, vectors 16-byte aligned
 * or not; sc slots and vectors compared after each step, both sides restarted from the host state
 * at each iteration). Sums are compared relative to their scale (1e-12); copies and scalings
 * exactly. The single-vector operations (vec_*) at n in {0, 1, 3, 1000, 2^20+3, 2^21+5}, vectors
 * 16-byte aligned or one double off (and, for vec_dots, mixed): vec_axpbypcz for every combination
 * of x / y present, c zero or not, z aliasing x, y or both; vec_pointwise both ops, w separate or
 * aliasing x or y (zeros in y for x ./ y); vec_dots for k = 0..9 (one y is x, one repeated);
 * vec_norms on random entries, with NaN / inf at the start, middle or end, and on entries of size
 * 1e200 and 1e-200 with s = 1 and s = 1/max (NaN must win the maximum in every reduction stage).
 * At the end, the CG steps are timed at n = 2^21 (GB/s printed, not checked).
 * COALESCE_TEST_QUICK=1 leaves out the largest sizes and the timing (for compute-sanitizer). */
#include "backend.h"
#include "blas.h"
#include "check.h"

#define RM COAL_ROW_MAJOR
#define CM COAL_COL_MAJOR

static const double SENT = 12345.0;
static const double TOL = 1e-12;
static uint64_t seed_counter = 9001;
static int quick = 0;
static coal_ctx H, D; /* host and CUDA contexts */
#define HB (&coal_backend_host.blas)
#define DB (&coal_backend(D)->blas)

static const int64_t widths[] = {0, 1, 3, 8, 32, 33, 64, 128};
#define NW ((int)(sizeof widths / sizeof widths[0]))
static const int64_t BIG = (1 << 21) + 5;

/* ---- memory -------------------------------------------------------------------------------- */
static double *hmalloc(size_t count) {
  double *p = malloc(sizeof(double) * (count ? count : 1));
  if (!p) abort(); /* test harness only */
  return p;
}
static void *dalloc(size_t bytes) {
  void *p = NULL;
  CHECK_OK(D, coal_backend(D)->mem.alloc(D, bytes ? bytes : 8, &p));
  return p;
}
static void dfree(void *p) {
  if (p) coal_backend(D)->mem.release(D, p);
}
static void up(void *d, const void *h, size_t bytes) {
  if (d) CHECK_OK(D, coal_backend(D)->mem.upload(D, d, h, bytes));
}
static void down(void *h, const void *d, size_t bytes) {
  if (d) CHECK_OK(D, coal_backend(D)->mem.download(D, h, d, bytes));
}
/* device copy of a host array of count doubles */
static double *dcopy(const double *h, size_t count) {
  double *d = dalloc(sizeof(double) * count);
  up(d, h, sizeof(double) * count);
  return d;
}

static int64_t ld_of(int64_t tight, int64_t pad) { return (tight > 0 ? tight : 1) + pad; }
/* storage length of an n x k block with layout l and leading dimension ld */
static size_t slen(coal_layout l, int64_t n, int64_t k, int64_t ld) {
  return (size_t)(ld * (l == CM ? k : n));
}
static int is_entry(coal_layout l, int64_t n, int64_t k, int64_t ld, size_t s) {
  return l == CM ? (int64_t)(s % (size_t)ld) < n : (int64_t)(s % (size_t)ld) < k;
}
/* Fills a block: entries random uniform [-1, 1) (or `entry` when not NaN-free: NaN poisons),
 * padding `pad`. */
static void fill(double *a, coal_layout l, int64_t n, int64_t k, int64_t ld, int random,
                 double entry, double pad) {
  const uint64_t seed = seed_counter++;
  const size_t len = slen(l, n, k, ld);
  for (size_t s = 0; s < len; s++)
    a[s] = !is_entry(l, n, k, ld, s) ? pad : random ? coal_random_uniform(seed, s) : entry;
}

/* max |got - ref| / scale over entries (NaN: inf), and whether the padding of got holds SENT. */
static double block_diff(const double *got, const double *ref, coal_layout l, int64_t n, int64_t k,
                         int64_t ld, double scale, int *pad_ok) {
  double d = 0;
  *pad_ok = 1;
  const size_t len = slen(l, n, k, ld);
  for (size_t s = 0; s < len; s++) {
    if (!is_entry(l, n, k, ld, s)) {
      if (got[s] != SENT) *pad_ok = 0;
      continue;
    }
    if (isnan(got[s]) || isnan(ref[s])) return INFINITY;
    if (fabs(got[s] - ref[s]) > d) d = fabs(got[s] - ref[s]);
  }
  return scale > 0 ? d / scale : d;
}

static double col_norm_max(const double *a, int64_t n, int64_t k, int64_t ld) {
  double m = 0;
  for (int64_t j = 0; j < k; j++) {
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += a[i * ld + j] * a[i * ld + j];
    if (s > m) m = s;
  }
  return sqrt(m);
}

/* ---- gram ---------------------------------------------------------------------------------- */
/* pady < 0: Y is X itself (q = p): the same storage as both operands */
static void t_gram(int64_t n, int64_t p, int64_t q, int64_t padx, int64_t pady) {
  const int same = pady < 0;
  if (same) q = p;
  const int64_t ldx = ld_of(p, padx), ldy = same ? ldx : ld_of(q, pady), ldg = q + 2;
  double *X = hmalloc(slen(RM, n, p, ldx)), *Y = hmalloc(slen(RM, n, q, ldy));
  fill(X, RM, n, p, ldx, 1, 0, NAN);
  fill(Y, RM, n, q, ldy, 1, 0, NAN);
  if (same) memcpy(Y, X, sizeof(double) * slen(RM, n, p, ldx));
  double *Xd = dcopy(X, slen(RM, n, p, ldx)), *Yd = same ? Xd : dcopy(Y, slen(RM, n, q, ldy));
  double *ref = hmalloc(slen(RM, p, q, ldg)), *got = hmalloc(slen(RM, p, q, ldg));
  fill(ref, RM, p, q, ldg, 0, NAN, SENT);
  fill(got, RM, p, q, ldg, 0, NAN, SENT);
  CHECK_OK(H, HB->gram(H, n, p, q, X, ldx, Y, ldy, ref, ldg));
  CHECK_OK(D, DB->gram(D, n, p, q, Xd, ldx, Yd, ldy, got, ldg));
  int pad;
  const double scale = col_norm_max(X, n, p, ldx) * col_norm_max(Y, n, q, ldy);
  const double d = block_diff(got, ref, RM, p, q, ldg, scale, &pad);
  CHECK(d <= TOL && pad, "gram n=%lld p=%lld q=%lld ldx=%lld ldy=%lld%s: diff %.3g, padding %s",
        (long long)n, (long long)p, (long long)q, (long long)ldx, (long long)ldy,
        same ? " (Y = X)" : "", d, pad ? "kept" : "WRITTEN");
  free(X), free(Y), free(ref), free(got), dfree(Xd);
  if (!same) dfree(Yd);
}

/* ---- gemm ---------------------------------------------------------------------------------- */
static void t_gemm(int64_t n, int64_t p, int64_t q, double a, double beta, int64_t padx,
                   int64_t pady) {
  const int64_t ldx = ld_of(p, padx), ldy = ld_of(q, pady), ldc = q + 1;
  const size_t lx = slen(RM, n, p, ldx), ly = slen(RM, n, q, ldy);
  double *X = hmalloc(lx), *Cm = hmalloc(slen(RM, p, q, ldc)), *Y0 = hmalloc(ly);
  double *ref = hmalloc(ly), *got = hmalloc(ly);
  fill(X, RM, n, p, ldx, 1, 0, NAN);
  fill(Cm, RM, p, q, ldc, 1, 0, NAN);
  fill(Y0, RM, n, q, ldy, beta != 0.0, NAN, SENT);
  memcpy(ref, Y0, sizeof(double) * (ly ? ly : 1));
  double *Xd = dcopy(X, lx), *Yd = dcopy(Y0, ly);
  CHECK_OK(H, HB->gemm(H, n, p, q, a, X, ldx, Cm, ldc, beta, ref, ldy));
  CHECK_OK(D, DB->gemm(D, n, p, q, a, Xd, ldx, Cm, ldc, beta, Yd, ldy));
  double cmax = 0;
  for (int64_t i = 0; i < p; i++)
    for (int64_t j = 0; j < q; j++) cmax = fmax(cmax, fabs(Cm[i * ldc + j]));
  /* C may be reused as soon as the call returns */
  for (size_t s = 0; s < slen(RM, p, q, ldc); s++) Cm[s] = NAN;
  down(got, Yd, sizeof(double) * ly);
  int pad;
  const double scale = fabs(a) * (double)p * cmax + fabs(beta); /* |x|, |y0| < 1 */
  const double d = block_diff(got, ref, RM, n, q, ldy, scale, &pad);
  CHECK(d <= TOL && pad, "gemm n=%lld p=%lld q=%lld a=%g beta=%g: diff %.3g, padding %s",
        (long long)n, (long long)p, (long long)q, a, beta, d, pad ? "kept" : "WRITTEN");
  free(X), free(Cm), free(Y0), free(ref), free(got), dfree(Xd), dfree(Yd);
}

/* ---- dscale -------------------------------------------------------------------------------- */
/* mode 0: Y separate, 1: in place (Y = X), 2: Y NULL */
static void t_dscale(int64_t n, int64_t k, int use_d, int mode, int nrm, int64_t padx,
                     int64_t pady) {
  const int64_t ldx = ld_of(k, padx), ldy = mode == 1 ? ldx : ld_of(k, pady);
  const size_t lx = slen(RM, n, k, ldx), ly = slen(RM, n, k, ldy);
  double *X = hmalloc(lx), *dv = hmalloc((size_t)n), *Yr = hmalloc(ly);
  double *Yg = hmalloc(lx > ly ? lx : ly);
  double *nr = hmalloc((size_t)k + 1), *ng = hmalloc((size_t)k + 1);
  fill(X, RM, n, k, ldx, 1, 0, mode == 1 ? SENT : NAN);
  const uint64_t sd = seed_counter++;
  for (int64_t i = 0; i < n; i++) dv[i] = 2.0 * coal_random_uniform(sd, (uint64_t)i);
  fill(Yr, RM, n, k, ldy, 0, NAN, SENT);
  for (int64_t j = 0; j <= k; j++) nr[j] = ng[j] = j < k ? NAN : SENT;
  double *Xd = dcopy(X, lx), *dd = use_d ? dcopy(dv, (size_t)n) : NULL;
  double *Yd = mode == 0 ? dcopy(Yr, ly) : mode == 1 ? Xd : NULL;
  double *Yh = mode == 0 ? Yr : mode == 1 ? X : NULL;
  CHECK_OK(H, HB->dscale(H, n, k, use_d ? dv : NULL, X, ldx, Yh, ldy, nrm ? nr : NULL));
  CHECK_OK(D, DB->dscale(D, n, k, dd, Xd, ldx, Yd, ldy, nrm ? ng : NULL));
  const char *mname = mode == 0 ? "Y" : mode == 1 ? "in place" : "Y NULL";
  int pad = 1;
  double dy = 0;
  if (mode == 0) {
    down(Yg, Yd, sizeof(double) * ly);
    dy = block_diff(Yg, Yr, RM, n, k, ldy, 1.0, &pad);
  } else { /* in place: X holds the result; Y NULL: X unchanged (X still holds X) */
    down(Yg, Xd, sizeof(double) * lx);
    dy = block_diff(Yg, X, RM, n, k, ldx, 1.0, &pad);
    if (mode == 2) pad = 1; /* NaN padding, checked as entries below */
    for (size_t s = 0; mode == 2 && s < lx; s++)
      if (!is_entry(RM, n, k, ldx, s) && !isnan(Yg[s])) pad = 0;
  }
  CHECK(dy == 0 && pad, "dscale n=%lld k=%lld d=%d %s nrm=%d: Y diff %.3g, padding %s",
        (long long)n, (long long)k, use_d, mname, nrm, dy, pad ? "kept" : "WRITTEN");
  if (nrm) {
    double dn = ng[k] == SENT ? 0 : INFINITY;
    for (int64_t j = 0; j < k; j++) {
      double e = fabs(ng[j] - nr[j]) / (nr[j] > 0 ? nr[j] : 1.0);
      if (isnan(e) || e > dn) dn = isnan(e) ? INFINITY : e;
    }
    CHECK(dn <= TOL, "dscale n=%lld k=%lld d=%d %s: nrm2 diff %.3g", (long long)n, (long long)k,
          use_d, mname, dn);
  }
  free(X), free(dv), free(Yr), free(Yg), free(nr), free(ng);
  dfree(Xd), dfree(dd);
  if (mode == 0) dfree(Yd);
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

static void t_copy(int64_t n, int64_t q, coal_layout lx, coal_layout ly, int maps, int64_t padx,
                   int64_t pady) {
  const int64_t kx = maps & 1 ? q + 5 : q, ky = maps & 2 ? q + 3 : q;
  const int64_t ldx = ld_of(lx == CM ? n : kx, padx), ldy = ld_of(ly == CM ? n : ky, pady);
  const size_t sx = slen(lx, n, kx, ldx), sy = slen(ly, n, ky, ldy);
  double *X = hmalloc(sx), *Yr = hmalloc(sy), *Yg = hmalloc(sy);
  fill(X, lx, n, kx, ldx, 1, 0, NAN);
  fill(Yr, ly, n, ky, ldy, 1, 0, SENT);
  int32_t *xc = maps & 1 ? rand_map(q, kx) : NULL, *yc = maps & 2 ? rand_map(q, ky) : NULL;
  double *Xd = dcopy(X, sx), *Yd = dcopy(Yr, sy);
  CHECK_OK(H, HB->copy_cols(H, n, q, X, lx, ldx, xc, Yr, ly, ldy, yc));
  CHECK_OK(D, DB->copy_cols(D, n, q, Xd, lx, ldx, xc, Yd, ly, ldy, yc));
  /* the maps may be reused as soon as the call returns */
  for (int64_t j = 0; j < q; j++) {
    if (xc) xc[j] = -1;
    if (yc) yc[j] = -1;
  }
  down(Yg, Yd, sizeof(double) * sy);
  int pad;
  const double d = block_diff(Yg, Yr, ly, n, ky, ldy, 1.0, &pad);
  CHECK(d == 0 && pad, "copy_cols n=%lld q=%lld %s->%s maps=%d: diff %.3g, padding %s",
        (long long)n, (long long)q, lx == RM ? "row" : "col", ly == RM ? "row" : "col", maps, d,
        pad ? "kept" : "WRITTEN");
  free(X), free(Yr), free(Yg), free(xc), free(yc), dfree(Xd), dfree(Yd);
}

/* ---- eig_resid ----------------------------------------------------------------------------- */
/* q residual columns picked (random map) from AX / MX of width kx; W separate or NULL. */
static void t_eig_resid(int64_t n, int64_t kx, int64_t q, int use_d, int with_w) {
  const int64_t ldx = ld_of(kx, 1 + kx % 2), ldw = ld_of(q, q % 3);
  const size_t lx = slen(RM, n, kx, ldx), lw = slen(RM, n, q, ldw);
  double *AX = hmalloc(lx), *MX = hmalloc(lx), *Wr = hmalloc(lw), *Wg = hmalloc(lw);
  double *dv = hmalloc((size_t)n), *lam = hmalloc((size_t)q + 1);
  double *nr = hmalloc((size_t)q + 1), *ng = hmalloc((size_t)q + 1);
  fill(AX, RM, n, kx, ldx, 1, 0, NAN);
  fill(MX, RM, n, kx, ldx, 1, 0, NAN);
  fill(Wr, RM, n, q, ldw, 0, NAN, SENT);
  int32_t *cols = rand_map(q, kx);
  const uint64_t sd = seed_counter++;
  for (int64_t i = 0; i < n; i++) dv[i] = 3.0 * coal_random_uniform(sd, (uint64_t)i);
  for (int64_t a = 0; a <= q; a++) {
    lam[a] = 2.0 * coal_random_uniform(sd + 1, (uint64_t)a);
    nr[a] = ng[a] = a < q ? NAN : SENT;
  }
  double *AXd = dcopy(AX, lx), *MXd = dcopy(MX, lx), *Wd = with_w ? dcopy(Wr, lw) : NULL;
  double *dd = use_d ? dcopy(dv, (size_t)n) : NULL;
  CHECK_OK(H, HB->eig_resid(H, n, q, AX, MX, ldx, cols, lam, use_d ? dv : NULL, with_w ? Wr : NULL,
                            ldw, nr));
  CHECK_OK(D, DB->eig_resid(D, n, q, AXd, MXd, ldx, cols, lam, dd, Wd, ldw, ng));
  int pad = 1;
  double dw = 0;
  if (with_w) {
    down(Wg, Wd, sizeof(double) * lw);
    dw = block_diff(Wg, Wr, RM, n, q, ldw, 1.0, &pad);
  }
  double dn = ng[q] == SENT ? 0 : INFINITY;
  for (int64_t a = 0; a < q; a++) {
    double e = fabs(ng[a] - nr[a]) / (nr[a] > 0 ? nr[a] : 1.0);
    if (isnan(e) || e > dn) dn = isnan(e) ? INFINITY : e;
  }
  CHECK(dw == 0 && pad && dn <= TOL,
        "eig_resid n=%lld kx=%lld q=%lld d=%d W=%d: W diff %.3g, padding %s, nrm2 diff %.3g",
        (long long)n, (long long)kx, (long long)q, use_d, with_w, dw, pad ? "kept" : "WRITTEN", dn);
  free(AX), free(MX), free(Wr), free(Wg), free(dv), free(lam), free(nr), free(ng), free(cols);
  dfree(AXd), dfree(MXd), dfree(Wd), dfree(dd);
}

/* ---- CG steps ------------------------------------------------------------------------------ */
static double rel(double got, double ref) {
  if (isnan(got) || isnan(ref)) return INFINITY;
  return fabs(got - ref) / (fabs(ref) > 0 ? fabs(ref) : 1.0);
}

/* cg_dot on random-sign vectors (also x == y), judged against sum |x_i y_i|. */
static void t_dot(int64_t n, int off) {
  double *x = hmalloc((size_t)n + 1), *y = hmalloc((size_t)n + 1);
  const uint64_t s1 = seed_counter++, s2 = seed_counter++;
  for (int64_t i = 0; i <= n; i++)
    x[i] = coal_random_uniform(s1, (uint64_t)i), y[i] = coal_random_uniform(s2, (uint64_t)i);
  double *xd = dcopy(x, (size_t)n + 1), *yd = dcopy(y, (size_t)n + 1), *scd = dalloc(32);
  for (int same = 0; same < 2; same++) {
    const double *yh = same ? x : y, *ydv = same ? xd : yd;
    double sh[4] = {NAN, NAN, NAN, NAN}, sg[4], scale = 0;
    up(scd, sh, sizeof sh);
    for (int64_t i = 0; i < n; i++) scale += fabs(x[off + i] * yh[off + i]);
    CHECK_OK(H, HB->cg_dot(H, n, x + off, yh + off, sh, COAL_CG_RR));
    CHECK_OK(D, DB->cg_dot(D, n, xd + off, ydv + off, scd, COAL_CG_RR));
    down(sg, scd, sizeof sg);
    const double d = isnan(sg[COAL_CG_RR])
                         ? INFINITY
                         : fabs(sg[COAL_CG_RR] - sh[COAL_CG_RR]) / (scale > 0 ? scale : 1.0);
    CHECK(d <= TOL && isnan(sg[0]) && isnan(sg[1]) && isnan(sg[2]) && (n > 0 || sg[3] == 0.0),
          "cg_dot n=%lld off=%d x%sy: %.17g vs %.17g (diff %.3g), other slots written",
          (long long)n, off, same ? "==" : "!=", sg[COAL_CG_RR], sh[COAL_CG_RR], d);
  }
  free(x), free(y), dfree(xd), dfree(yd), dfree(scd);
}

/* max |got - ref| / scale over n entries (NaN: inf). */
static double vec_diff(const double *got, const double *ref, int64_t n, double scale) {
  double d = 0;
  for (int64_t i = 0; i < n; i++) {
    if (isnan(got[i]) || isnan(ref[i])) return INFINITY;
    if (fabs(got[i] - ref[i]) > d) d = fabs(got[i] - ref[i]);
  }
  return scale > 0 ? d / scale : d;
}

/* CG on a diagonal system (A = diag(a), q = A p computed on the host and given to both) for
 * `iters` iterations, par alternating. Every step starts both sides from the same state (the
 * host's, uploaded), so that each is judged alone: near convergence r is rounding noise, which
 * two summation orders do not reproduce. Errors are measured against the step's scale
 * (|x| + |alpha p|, |r| + |alpha q|, their squares summed, |z| + |beta p|). off = 1: the vectors
 * start 8 bytes past an allocation (not 16-byte aligned). */
static void t_cg(int64_t n, int use_dinv, int off, int iters) {
  const size_t len = (size_t)n + 1, bytes = sizeof(double) * len;
  double *x = hmalloc(len), *r = hmalloc(len), *p = hmalloc(len), *q = hmalloc(len);
  double *dinv = hmalloc(len), *A = hmalloc(len), *tmp = hmalloc(len);
  const uint64_t sa = seed_counter++, sb = seed_counter++;
  for (size_t i = 0; i < len; i++) {
    A[i] = 2.0 + coal_random_uniform(sa, i); /* [1, 3) */
    dinv[i] = use_dinv ? 1.0 / (A[i] * (1.0 + 0.1 * coal_random_uniform(sa + 7, i))) : 1.0;
    x[i] = 0.0;
    r[i] = coal_random_uniform(sb, i);
    p[i] = dinv[i] * r[i];
    q[i] = NAN;
  }
  double sc[4] = {NAN, NAN, NAN, NAN}, sg[4];
  double *xd = dalloc(bytes), *rd = dalloc(bytes), *pd = dalloc(bytes), *qd = dalloc(bytes);
  double *dd = use_dinv ? dcopy(dinv, len) : NULL, *scd = dalloc(sizeof sc);
  const double *dh = use_dinv ? dinv + off : NULL, *ddv = use_dinv ? dd + off : NULL;
  const double *ph = p + off, *qh = q + off, *rh = r + off, *xh = x + off, *zh = dinv + off;
  /* sc[RZ+0] = r.z */
  up(rd, r, bytes), up(pd, p, bytes), up(scd, sc, sizeof sc);
  CHECK_OK(H, HB->cg_dot(H, n, r + off, p + off, sc, COAL_CG_RZ));
  CHECK_OK(D, DB->cg_dot(D, n, rd + off, pd + off, scd, COAL_CG_RZ));
  down(sg, scd, sizeof sg);
  CHECK(rel(sg[COAL_CG_RZ], sc[COAL_CG_RZ]) <= TOL, "cg n=%lld: initial r.z %.17g vs %.17g",
        (long long)n, sg[COAL_CG_RZ], sc[COAL_CG_RZ]);
  for (int it = 0; it < iters; it++) {
    const int par = it & 1;
    if (n > 0 && sc[COAL_CG_RZ + par] == 0.0) break;     /* converged (n = 1): alpha would be 0/0 */
    for (size_t i = 0; i < len; i++) q[i] = A[i] * p[i]; /* the "SpMV" */
    /* p.q (a sum of positive terms) */
    sc[COAL_CG_PQ] = sc[COAL_CG_RZ + 1 - par] = sc[COAL_CG_RR] = NAN;
    up(xd, x, bytes), up(rd, r, bytes), up(pd, p, bytes), up(qd, q, bytes);
    up(scd, sc, sizeof sc);
    CHECK_OK(H, HB->cg_dot(H, n, p + off, q + off, sc, COAL_CG_PQ));
    CHECK_OK(D, DB->cg_dot(D, n, pd + off, qd + off, scd, COAL_CG_PQ));
    down(sg, scd, sizeof sg);
    CHECK(rel(sg[COAL_CG_PQ], sc[COAL_CG_PQ]) <= TOL && isnan(sg[COAL_CG_RR]) &&
              isnan(sg[COAL_CG_RZ + 1 - par]),
          "cg n=%lld dinv=%d off=%d it=%d: p.q %.17g vs %.17g", (long long)n, use_dinv, off, it,
          sg[COAL_CG_PQ], sc[COAL_CG_PQ]);
    /* x, r and the new r.z, r.r, from the host's sc */
    up(scd, sc, sizeof sc);
    const double alpha = sc[COAL_CG_RZ + par] / sc[COAL_CG_PQ];
    double sx = 0, sr = 0, srr = 0, srz = 0;
    for (int64_t i = 0; i < n; i++) {
      const double er = fabs(rh[i]) + fabs(alpha * qh[i]);
      sx = fmax(sx, fabs(xh[i]) + fabs(alpha * ph[i]));
      sr = fmax(sr, er);
      srr += er * er;
      srz += er * er * zh[i];
    }
    CHECK_OK(H, HB->cg_update_xr(H, n, sc, par, x + off, r + off, p + off, q + off, dh));
    CHECK_OK(D, DB->cg_update_xr(D, n, scd, par, xd + off, rd + off, pd + off, qd + off, ddv));
    down(sg, scd, sizeof sg);
    const double drz =
        fabs(sg[COAL_CG_RZ + 1 - par] - sc[COAL_CG_RZ + 1 - par]) / (srz > 0 ? srz : 1.0);
    const double drr = fabs(sg[COAL_CG_RR] - sc[COAL_CG_RR]) / (srr > 0 ? srr : 1.0);
    const int kept =
        sg[COAL_CG_RZ + par] == sc[COAL_CG_RZ + par] && sg[COAL_CG_PQ] == sc[COAL_CG_PQ];
    down(tmp, xd, bytes);
    const double dx = vec_diff(tmp + off, x + off, n, sx);
    const int outside = off ? tmp[0] == x[0] : tmp[n] == x[n]; /* past the vector: untouched */
    down(tmp, rd, bytes);
    const double dr = vec_diff(tmp + off, r + off, n, sr);
    CHECK(drz <= TOL && drr <= TOL && kept && dx <= TOL && dr <= TOL && outside &&
              (n > 0 || (sg[COAL_CG_RZ + 1 - par] == 0.0 && sg[COAL_CG_RR] == 0.0)),
          "cg n=%lld dinv=%d off=%d it=%d par=%d: update_xr rz %.3g rr %.3g x %.3g r %.3g, other "
          "slots %s, outside %s",
          (long long)n, use_dinv, off, it, par, drz, drr, dx, dr, kept ? "kept" : "CHANGED",
          outside ? "kept" : "WRITTEN");
    /* p, from the host's r and sc */
    up(rd, r, bytes), up(scd, sc, sizeof sc);
    const double beta = sc[COAL_CG_RZ + 1 - par] / sc[COAL_CG_RZ + par];
    double sp = 0;
    for (int64_t i = 0; i < n; i++) sp = fmax(sp, fabs(zh[i] * rh[i]) + fabs(beta * ph[i]));
    CHECK_OK(H, HB->cg_update_p(H, n, sc, par, p + off, r + off, dh));
    CHECK_OK(D, DB->cg_update_p(D, n, scd, par, pd + off, rd + off, ddv));
    down(tmp, pd, bytes);
    const double dp = vec_diff(tmp + off, p + off, n, sp);
    CHECK(dp <= TOL && (off ? tmp[0] == p[0] : tmp[n] == p[n]),
          "cg n=%lld dinv=%d off=%d it=%d par=%d: update_p diff %.3g", (long long)n, use_dinv, off,
          it, par, dp);
  }
  free(x), free(r), free(p), free(q), free(dinv), free(A), free(tmp);
  dfree(xd), dfree(rd), dfree(pd), dfree(qd), dfree(dd), dfree(scd);
}

/* ---- single vectors (vec_*) ---------------------------------------------------------------- */
/* n random entries stored from entry `off` of n + 1 doubles (off = 1: not 16-byte aligned); the
 * other slot holds SENT, which no op may write. */
static double *vrand(int64_t n, int off) {
  double *v = hmalloc((size_t)n + 1);
  const uint64_t s = seed_counter++;
  for (int64_t i = 0; i <= n; i++) v[i] = coal_random_uniform(s, (uint64_t)i);
  v[off ? 0 : n] = SENT;
  return v;
}
/* max over len entries of rel(got, ref) (got downloaded from dev) */
static double vrel(const double *dev, const double *ref, int64_t len) {
  double *g = hmalloc((size_t)len), e = 0;
  down(g, dev, sizeof(double) * (size_t)len);
  for (int64_t i = 0; i < len; i++) e = fmax(e, rel(g[i], ref[i]));
  free(g);
  return e;
}

/* vec_axpbypcz for every combination of x / y present and c zero or not, d 0 or not; alias 0:
 * separate arrays (z NaN when c == 0: it must not be read), 1: z is x, 2: z is y, 3: all three
 * one array. Compared over the n + 1 slots, relative to max_i (|a x| + |b y| + |c z| + |d|);
 * inputs other than z unchanged. */
static void t_vaxpy(int64_t n, int off) {
  const double a = 1.5, b = -0.75;
  const int64_t len = n + 1;
  const size_t bytes = sizeof(double) * (size_t)len;
  double *tmp = hmalloc((size_t)len);
  for (int combo = 0; combo < 8; combo++)
    for (int alias = 0; alias < 4; alias++) {
      const int hx = combo & 1, hy = (combo >> 1) & 1;
      const double c = combo & 4 ? -2.5 : 0.0, d = (combo + alias) & 1 ? -0.5 : 0.0;
      if ((alias == 1 && !hx) || (alias == 2 && !hy) || (alias == 3 && !(hx && hy))) continue;
      double *x = vrand(n, off), *y = alias == 3 ? x : vrand(n, off);
      double *z = alias == 1 || alias == 3 ? x : alias == 2 ? y : vrand(n, off);
      for (int64_t i = 0; alias == 0 && c == 0.0 && i < n; i++) z[off + i] = NAN;
      double *xd = dcopy(x, (size_t)len), *yd = y == x ? xd : dcopy(y, (size_t)len);
      double *zd = z == x ? xd : z == y ? yd : dcopy(z, (size_t)len);
      double scale = 0;
      for (int64_t i = off; i < off + n; i++)
        scale = fmax(scale, (hx ? fabs(a * x[i]) : 0) + (hy ? fabs(b * y[i]) : 0) +
                                (c != 0.0 ? fabs(c * z[i]) : 0) + fabs(d));
      CHECK_OK(
          H, HB->vec_axpbypcz(H, n, a, hx ? x + off : NULL, b, hy ? y + off : NULL, c, z + off, d));
      CHECK_OK(D, DB->vec_axpbypcz(D, n, a, hx ? xd + off : NULL, b, hy ? yd + off : NULL, c,
                                   zd + off, d));
      down(tmp, zd, bytes);
      double e = vec_diff(tmp, z, len, scale);
      if (x != z) down(tmp, xd, bytes), e = fmax(e, vec_diff(tmp, x, len, 1.0));
      if (y != z) down(tmp, yd, bytes), e = fmax(e, vec_diff(tmp, y, len, 1.0));
      CHECK(e <= TOL, "vec_axpbypcz n=%lld off=%d x=%d y=%d c=%g d=%g alias=%d: diff %.3g",
            (long long)n, off, hx, hy, c, d, alias, e);
      if (zd != xd && zd != yd) dfree(zd);
      if (yd != xd) dfree(yd);
      dfree(xd);
      if (z != x && z != y) free(z);
      if (y != x) free(y);
      free(x);
    }
  free(tmp);
}

/* vec_pointwise, both ops (x ./ y with zeros in every third entry of y); alias 0: w separate (NaN
 * before), 1: w is x, 2: w is y. Entry by entry relative to the host's result; inputs other than
 * w unchanged. */
static void t_vpointwise(int64_t n, int off) {
  const int64_t len = n + 1;
  for (int op = 0; op < 2; op++)
    for (int alias = 0; alias < 3; alias++) {
      double *x = vrand(n, off), *y = vrand(n, off);
      for (int64_t i = 0; op == COAL_VEC_DIV && i < n; i += 3) y[off + i] = 0.0;
      double *w = alias == 1 ? x : alias == 2 ? y : vrand(n, off);
      for (int64_t i = 0; alias == 0 && i < n; i++) w[off + i] = NAN;
      double *xd = dcopy(x, (size_t)len), *yd = dcopy(y, (size_t)len);
      double *wd = alias == 1 ? xd : alias == 2 ? yd : dcopy(w, (size_t)len);
      double *x0 = hmalloc((size_t)len), *y0 = hmalloc((size_t)len);
      memcpy(x0, x, sizeof(double) * (size_t)len), memcpy(y0, y, sizeof(double) * (size_t)len);
      CHECK_OK(H, HB->vec_pointwise(H, n, op, x + off, y + off, w + off));
      CHECK_OK(D, DB->vec_pointwise(D, n, op, xd + off, yd + off, wd + off));
      double e = vrel(wd, w, len);
      if (alias != 1) e = fmax(e, vrel(xd, x0, len));
      if (alias != 2) e = fmax(e, vrel(yd, y0, len));
      CHECK(e <= TOL, "vec_pointwise n=%lld off=%d op=%d alias=%d: diff %.3g", (long long)n, off,
            op, alias, e);
      if (alias == 0) free(w), dfree(wd);
      free(x), free(y), free(x0), free(y0), dfree(xd), dfree(yd);
    }
}

/* vec_dots with k vectors (ys[2] is x, ys[7] repeats ys[0]); off 0: all 16-byte aligned, 1: none,
 * 2: x aligned, the odd-numbered y not (mixed). Relative to sum_i |x_i y_i|; out[k] kept. */
static void t_vdots(int64_t n, int off, int64_t k) {
  const int offx = off == 1;
  double *x = vrand(n, offx), *own[10], *ownd[10];
  double *ref = hmalloc((size_t)k + 1), *got = hmalloc((size_t)k + 1);
  double *xd = dcopy(x, (size_t)n + 1);
  const double *yh[10], *ydv[10];
  for (int64_t j = 0; j < k; j++) {
    const int oj = off == 2 ? (int)(j & 1) : off;
    own[j] = vrand(n, oj), ownd[j] = dcopy(own[j], (size_t)n + 1);
    yh[j] = j == 2 ? x + offx : j == 7 ? yh[0] : own[j] + oj;
    ydv[j] = j == 2 ? xd + offx : j == 7 ? ydv[0] : ownd[j] + oj;
    ref[j] = got[j] = NAN;
  }
  ref[k] = got[k] = SENT;
  CHECK_OK(H, HB->vec_dots(H, n, k, x + offx, yh, ref));
  CHECK_OK(D, DB->vec_dots(D, n, k, xd + offx, ydv, got));
  double e = got[k] == SENT ? 0 : INFINITY;
  for (int64_t j = 0; j < k; j++) {
    double sa = 0;
    for (int64_t i = 0; i < n; i++) sa += fabs(x[offx + i] * yh[j][i]);
    e = fmax(e, n == 0          ? (got[j] == 0.0 ? 0 : INFINITY)
                : isnan(got[j]) ? INFINITY
                                : fabs(got[j] - ref[j]) / sa);
  }
  CHECK(e <= TOL, "vec_dots n=%lld off=%d k=%lld: diff %.3g", (long long)n, off, (long long)k, e);
  for (int64_t j = 0; j < k; j++) free(own[j]), dfree(ownd[j]);
  free(x), free(ref), free(got), dfree(xd);
}

/* vec_norms with s = 1 and s = 1/max. mode 0: random entries; 1: a NaN at entry p; 2: -inf at p;
 * 3: entries times 1e200 (with s = 1 the sum of squares overflows); 4: entries times 1e-200 (it
 * underflows); 5: a NaN at p and +inf at n-1-p. The sums relative to the host's (sums of
 * magnitudes), the maximum exactly; NaN where the host has NaN, the same infinity where it has
 * one. */
static void t_vnorms(int64_t n, int off, int mode, int64_t p) {
  double *x = vrand(n, off);
  for (int64_t i = 0; i < n; i++) x[off + i] *= mode == 3 ? 1e200 : mode == 4 ? 1e-200 : 1.0;
  if (n > 0 && mode == 5) x[off + n - 1 - p] = INFINITY;
  if (n > 0 && (mode == 1 || mode == 2 || mode == 5)) x[off + p] = mode == 2 ? -INFINITY : NAN;
  double *xd = dcopy(x, (size_t)n + 1), mx = 0;
  for (int64_t i = 0; i < n; i++) mx = fmax(mx, fabs(x[off + i]));
  for (int pass = 0; pass < 2; pass++) {
    const double s = pass == 1 && mx > 0 && isfinite(mx) ? 1.0 / mx : 1.0;
    double ref[4] = {NAN, NAN, NAN, SENT}, got[4] = {NAN, NAN, NAN, SENT};
    CHECK_OK(H, HB->vec_norms(H, n, x + off, s, ref));
    CHECK_OK(D, DB->vec_norms(D, n, xd + off, s, got));
    int ok = got[3] == SENT && (isnan(ref[2]) ? isnan(got[2]) : got[2] == ref[2]);
    for (int c = 0; c < 2; c++)
      ok &= isnan(ref[c])   ? isnan(got[c])
            : isinf(ref[c]) ? got[c] == ref[c]
                            : rel(got[c], ref[c]) <= TOL;
    CHECK(ok, "vec_norms n=%lld off=%d mode=%d p=%lld s=%g: %.17g %.17g %.17g vs %.17g %.17g %.17g",
          (long long)n, off, mode, (long long)p, s, got[0], got[1], got[2], ref[0], ref[1], ref[2]);
  }
  free(x), dfree(xd);
}

/* ---- timing -------------------------------------------------------------------------------- */
/* Device time per call of the CG steps at n (no check but success), and the DRAM traffic they
 * imply: 7, 4 and 2 vectors. */
static void time_cg(int64_t n) {
  const size_t bytes = sizeof(double) * (size_t)n;
  double *h = hmalloc((size_t)n), *v[5];
  for (int t = 0; t < 5; t++) {
    for (int64_t i = 0; i < n; i++) h[i] = t == 4 ? 1.0 : coal_random_uniform(77 + t, (uint64_t)i);
    v[t] = dcopy(h, (size_t)n);
  }
  double sc[4] = {1e6, 1e-3, 1e-3, 0}, *scd = dcopy(sc, 4);
  const int reps = 200;
  int bad = 0;
  double gbs[3];
  for (int op = 0; op < 3; op++) {
    for (int rep = -10; rep < reps; rep++) {
      if (rep == 0) {
        CHECK_OK(D, coal_ctx_sync(D));
        gbs[op] = coal_now_seconds();
      }
      /* par 0 for x, r (alpha = 1e-9 stays), 1 for p (beta = 1e-3 / r.z small) */
      if (op == 0)
        bad += DB->cg_update_xr(D, n, scd, 0, v[0], v[1], v[2], v[3], v[4]) != COAL_SUCCESS;
      else if (op == 1)
        bad += DB->cg_update_p(D, n, scd, 1, v[2], v[1], v[4]) != COAL_SUCCESS;
      else
        bad += DB->cg_dot(D, n, v[2], v[3], scd, COAL_CG_RR) != COAL_SUCCESS;
    }
    CHECK_OK(D, coal_ctx_sync(D));
    const double s = (coal_now_seconds() - gbs[op]) / reps;
    gbs[op] = (op == 0 ? 7.0 : op == 1 ? 4.0 : 2.0) * (double)bytes / s * 1e-9;
    printf("  %-13s n=%lld: %7.2f us, %6.0f GB/s\n",
           op == 0   ? "cg_update_xr"
           : op == 1 ? "cg_update_p"
                     : "cg_dot",
           (long long)n, s * 1e6, gbs[op]);
  }
  CHECK(bad == 0, "timing: %d calls failed", bad);
  for (int t = 0; t < 5; t++) dfree(v[t]);
  dfree(scd), free(h);
}

/* ---- Block-CG steps ------------------------------------------------------------------------ */
/* random tight n x k block (k may be 0) */
static double *rblock(int64_t n, int64_t k) {
  double *a = hmalloc((size_t)(n * k));
  if (k > 0) fill(a, RM, n, k, k, 1, 0, 0);
  return a;
}
static double *nblock(int64_t count) { /* NaN-poisoned */
  double *a = hmalloc((size_t)count);
  for (int64_t i = 0; i < count; i++) a[i] = NAN;
  return a;
}
/* max |got - ref| / (scale * max(1, max |ref|)) over count entries; NaN: inf */
static double arr_diff(const double *got, const double *ref, int64_t count) {
  double d = 0, m = 1;
  for (int64_t i = 0; i < count; i++) {
    if (isnan(got[i]) || isnan(ref[i])) return INFINITY;
    if (fabs(ref[i]) > m) m = fabs(ref[i]);
    if (fabs(got[i] - ref[i]) > d) d = fabs(got[i] - ref[i]);
  }
  return d / m;
}

/* bcg_update, bcg_gram (with and without its weights) and bcg_dir (with and without the
 * deferred update of X3) against the host twins, outputs poisoned with NaN. Gram entries are
 * compared relative to the largest entry of their matrix (sums of n products). */
static void t_bcg(int64_t n, int64_t s, int64_t m, int use_d) {
  const int64_t ns = n * s, nm = n * m;
  double *P = rblock(n, s), *Q = rblock(n, s), *C = rblock(s, m), *X = rblock(n, m);
  double *R = rblock(n, m), *d = rblock(n, 1);
  for (int64_t i = 0; i < n; i++) d[i] += 1.5;
  double *Pd = dcopy(P, (size_t)ns), *Qd = dcopy(Q, (size_t)ns), *Xd = dcopy(X, (size_t)nm);
  double *Rd = dcopy(R, (size_t)nm), *dd = dcopy(d, (size_t)n);
  const int64_t nsm = ns > nm ? ns : nm; /* Z: n x m; S: the wide bcg_gram's n x s scratch */
  double *Zh = nblock(nsm), *Zd = dcopy(Zh, (size_t)nm), *Sd = dcopy(Zh, (size_t)nsm);
  double *out[2][2], *nrm[2];
  for (int b = 0; b < 2; b++)
    out[b][0] = nblock(s * m), out[b][1] = nblock(m * m), nrm[b] = nblock(m);
  const double *dh = use_d ? d : NULL, *ddv = use_d ? dd : NULL;
  CHECK_OK(H, HB->bcg_update(H, n, s, m, Q, C, R, dh, Zh, nrm[0], out[0][0], out[0][1]));
  CHECK_OK(D, DB->bcg_update(D, n, s, m, Qd, C, Rd, ddv, Zd, nrm[1], out[1][0], out[1][1]));
  double *g = hmalloc((size_t)(nm > ns ? (nm > 0 ? nm : 1) : (ns > 0 ? ns : 1)));
  double e = 0, t;
  down(g, Rd, sizeof(double) * (size_t)nm);
  if ((t = arr_diff(g, R, nm)) > e) e = t;
  double eg = arr_diff(nrm[1], nrm[0], m);
  if ((t = arr_diff(out[1][0], out[0][0], s * m)) > eg) eg = t;
  if ((t = arr_diff(out[1][1], out[0][1], m * m)) > eg) eg = t;
  CHECK(e <= TOL && eg <= TOL, "bcg_update n=%lld s=%lld m=%lld d=%d: R %.3g, sums %.3g",
        (long long)n, (long long)s, (long long)m, use_d, e, eg);

  /* bcg_gram on P, Q, R (PP weighted by 1 / d when use_d; Sd is the wide path's scratch) */
  double *G[2] = {nblock(s * s), nblock(s * s)}, *PP[2] = {nblock(s * s), nblock(s * s)};
  double *PR[2] = {nblock(s * m), nblock(s * m)};
  CHECK_OK(H, HB->bcg_gram(H, n, s, m, P, Q, R, dh, NULL, G[0], PP[0], PR[0]));
  CHECK_OK(D, DB->bcg_gram(D, n, s, m, Pd, Qd, Rd, ddv, Sd, G[1], PP[1], PR[1]));
  eg = arr_diff(G[1], G[0], s * s);
  if ((t = arr_diff(PP[1], PP[0], s * s)) > eg) eg = t;
  if ((t = arr_diff(PR[1], PR[0], s * m)) > eg) eg = t;
  CHECK(eg <= TOL, "bcg_gram n=%lld s=%lld m=%lld d=%d: %.3g", (long long)n, (long long)s,
        (long long)m, use_d, eg);

  /* bcg_dir: Y = diag(d) X C1 + P C2 (n x s) with X3 += P C3 (X3 n x m), then with p2 = 0:
   * Y = diag(d) X C1 and X3 untouched */
  double *C1 = rblock(m, s), *C2 = rblock(s, s), *C3 = rblock(s, m), *Yh = nblock(ns);
  double *Yd = dcopy(Yh, (size_t)ns), *X3 = rblock(n, m), *X3d = dcopy(X3, (size_t)nm);
  for (int two = 1; two >= 0; two--) {
    const int64_t p2 = two ? s : 0;
    for (int64_t i = 0; i < ns; i++) Yh[i] = NAN;
    up(Yd, Yh, sizeof(double) * (size_t)ns);
    CHECK_OK(H, HB->bcg_dir(H, n, m, p2, s, X, dh, C1, P, C2, Yh, C3, X3));
    CHECK_OK(D, DB->bcg_dir(D, n, m, p2, s, Xd, ddv, C1, Pd, C2, Yd, C3, X3d));
    down(g, Yd, sizeof(double) * (size_t)ns);
    e = arr_diff(g, Yh, ns);
    down(g, X3d, sizeof(double) * (size_t)nm);
    const double ex = arr_diff(g, X3, nm);
    CHECK(e <= TOL && ex <= TOL, "bcg_dir n=%lld p1=%lld p2=%lld q=%lld d=%d: Y %.3g, X3 %.3g",
          (long long)n, (long long)m, (long long)p2, (long long)s, use_d, e, ex);
  }
  /* q = 0: X3 += P C3 alone (the solver's settle before columns retire) */
  CHECK_OK(H, HB->bcg_dir(H, n, m, s, 0, NULL, NULL, NULL, P, NULL, NULL, C3, X3));
  CHECK_OK(D, DB->bcg_dir(D, n, m, s, 0, NULL, NULL, NULL, Pd, NULL, NULL, C3, X3d));
  down(g, X3d, sizeof(double) * (size_t)nm);
  e = arr_diff(g, X3, nm);
  CHECK(e <= TOL, "bcg_dir n=%lld p1=%lld p2=%lld q=0: X3 %.3g", (long long)n, (long long)m,
        (long long)s, e);
  free(P), free(Q), free(C), free(X), free(R), free(d), free(Zh), free(g), free(C1), free(C2);
  free(C3), free(Yh), free(X3);
  for (int b = 0; b < 2; b++) {
    free(out[b][0]), free(out[b][1]);
    free(nrm[b]), free(G[b]), free(PP[b]), free(PR[b]);
  }
  dfree(Pd), dfree(Qd), dfree(Xd), dfree(Rd), dfree(dd), dfree(Zd), dfree(Sd), dfree(Yd);
  dfree(X3d);
}

/* A test matrix on both contexts: 0 lap3d 17^3 7-point, 1 lap3d 9^3 27-point, 2 power-law
 * (long rows), 3 random SPD, 4 a 70-row matrix with empty rows and one full row. */
static coal_status sg_matrix(coal_ctx ctx, int id, coal_mat *A) {
  switch (id) {
  case 0: return coal_gen_laplace3d(ctx, 17, 17, 17, 7, COAL_F64, A);
  case 1: return coal_gen_laplace3d(ctx, 9, 9, 9, 27, COAL_F64, A);
  case 2: return coal_gen_powerlaw(ctx, 5000, 12.0, 2.5, 7, COAL_F64, A);
  case 3: return coal_gen_random_spd(ctx, 3000, 8.0, 11, COAL_F64, A);
  default: break;
  }
  enum { N = 70 };
  int64_t rp[N + 1];
  int32_t ci[4 * N];
  double v[4 * N];
  int64_t nz = 0;
  for (int i = 0; i < N; i++) {
    rp[i] = nz;
    if (i % 3 == 1) continue; /* empty row */
    const int len = i == 40 ? N : 1 + i % 4;
    for (int e = 0; e < len && nz < 4 * N; e++) {
      ci[nz] = (int32_t)(i == 40 ? e : (i + 7 * e) % N);
      v[nz++] = 1.0 / (1.0 + (double)((i + e) % 5));
    }
  }
  rp[N] = nz;
  return coal_mat_create_csr(ctx, N, N, rp, ci, v, COAL_F64, A);
}

/* Matrix `id` on the host and on the device; its rows, or -1 (both destroyed) on a failure. */
static int64_t sg_pair(int id, coal_mat *Ah, coal_mat *Ad) {
  int64_t n = 0;
  CHECK_OK(H, sg_matrix(H, id, Ah));
  CHECK_OK(D, sg_matrix(D, id, Ad));
  if (!*Ah || !*Ad) {
    coal_mat_destroy(Ah), coal_mat_destroy(Ad);
    return -1;
  }
  coal_mat_size(*Ah, &n, NULL, NULL);
  return n;
}

/* bcg_spmm_gram (the fused product and Grams) against its host twin, coal_spmm_rowsplit_host
 * followed by bcg_gram: Q NaN-poisoned, the Grams too; then the shapes it refuses. */
static void t_spmm_gram(int id, int64_t s, int64_t m) {
  coal_mat Ah = NULL, Ad = NULL;
  int64_t n = sg_pair(id, &Ah, &Ad);
  if (n < 0) return;
  const int64_t ns = n * s, nm = n * m;
  double *P = rblock(n, s), *R = rblock(n, m), *Qh = nblock(ns), *d = rblock(n, 1);
  for (int64_t i = 0; i < n; i++) d[i] += 1.5;
  double *Pd = dcopy(P, (size_t)ns), *Rd = dcopy(R, (size_t)nm), *Qd = dcopy(Qh, (size_t)ns);
  double *dd = dcopy(d, (size_t)n);
  const int use_d = (int)((id + s + m) & 1); /* PP = P^T diag(d)^-1 P on half the cases */
  const double *dh = use_d ? d : NULL, *ddv = use_d ? dd : NULL;
  coal_bvec Ph = NULL, Qhv = NULL, Pdv = NULL, Qdv = NULL;
  CHECK_OK(H, coal_bvec_view(H, n, s, COAL_F64, RM, s, P, &Ph));
  CHECK_OK(H, coal_bvec_view(H, n, s, COAL_F64, RM, s, Qh, &Qhv));
  CHECK_OK(D, coal_bvec_view(D, n, s, COAL_F64, RM, s, Pd, &Pdv));
  CHECK_OK(D, coal_bvec_view(D, n, s, COAL_F64, RM, s, Qd, &Qdv));
  double *G[2] = {nblock(s * s), nblock(s * s)}, *PP[2] = {nblock(s * s), nblock(s * s)};
  double *PR[2] = {nblock(s * m), nblock(s * m)};
  CHECK_OK(H, coal_spmm_rowsplit_host(Ah, 1.0, Ph, 0.0, Qhv));
  CHECK_OK(H, HB->bcg_gram(H, n, s, m, P, Qh, R, dh, NULL, G[0], PP[0], PR[0]));
  CHECK_OK(D, DB->bcg_spmm_gram(Ad, Pdv, Qdv, m, Rd, ddv, G[1], PP[1], PR[1]));
  double *q = hmalloc((size_t)ns);
  down(q, Qd, sizeof(double) * (size_t)ns);
  const double e = arr_diff(q, Qh, ns);
  double eg = arr_diff(G[1], G[0], s * s), t;
  if ((t = arr_diff(PP[1], PP[0], s * s)) > eg) eg = t;
  if ((t = arr_diff(PR[1], PR[0], s * m)) > eg) eg = t;
  CHECK(e <= TOL && eg <= TOL,
        "bcg_spmm_gram matrix %d n=%lld s=%lld m=%lld d=%d: Q %.3g, Grams %.3g", id, (long long)n,
        (long long)s, (long long)m, use_d, e, eg);
  /* refused: s outside [COAL_BCG_FUSED_MIN, COAL_BCG_FUSED_MAX] (views of fewer columns) */
  if (id == 0 && s == 16) { /* once: the refusals do not depend on the matrix */
    coal_bvec Pn = NULL, Qn = NULL;
    CHECK_OK(D, coal_bvec_view(D, n, COAL_BCG_FUSED_MIN - 1, COAL_F64, RM, COAL_BCG_FUSED_MIN - 1,
                               Pd, &Pn));
    CHECK_OK(D, coal_bvec_view(D, n, COAL_BCG_FUSED_MIN - 1, COAL_F64, RM, COAL_BCG_FUSED_MIN - 1,
                               Qd, &Qn));
    CHECK(DB->bcg_spmm_gram(Ad, Pn, Qn, m, Rd, ddv, G[1], PP[1], PR[1]) == COAL_ERR_UNSUPPORTED,
          "bcg_spmm_gram accepted s = %d", COAL_BCG_FUSED_MIN - 1);
    CHECK(DB->bcg_spmm_gram(Ad, Pdv, Qdv, COAL_BCG_FUSED_MAX + 1, Rd, ddv, G[1], PP[1], PR[1]) ==
              COAL_ERR_UNSUPPORTED,
          "bcg_spmm_gram accepted m = %d", COAL_BCG_FUSED_MAX + 1);
    coal_bvec_destroy(&Pn), coal_bvec_destroy(&Qn);
  }
  coal_bvec_destroy(&Ph), coal_bvec_destroy(&Qhv), coal_bvec_destroy(&Pdv);
  coal_bvec_destroy(&Qdv);
  for (int b = 0; b < 2; b++) free(G[b]), free(PP[b]), free(PR[b]);
  free(P), free(R), free(Qh), free(q), free(d);
  dfree(Pd), dfree(Rd), dfree(Qd), dfree(dd);
  coal_mat_destroy(&Ah), coal_mat_destroy(&Ad);
}

/* jacobi against its host twin (the same divisions: equal bit for bit), dinv poisoned; the
 * matrix with empty rows has no diagonal in row 1, which both must report, the Laplacians and
 * the SPD matrix none (the power-law matrix: whatever the host finds). */
static void t_jacobi(int id) {
  coal_mat Ah = NULL, Ad = NULL;
  CHECK_OK(H, sg_matrix(H, id, &Ah));
  CHECK_OK(D, sg_matrix(D, id, &Ad));
  if (!Ah || !Ad) return;
  int64_t n = 0, bad[2] = {-2, -2};
  coal_mat_size(Ah, &n, NULL, NULL);
  double *dh = nblock(n), *g = hmalloc((size_t)n), *dd = dcopy(dh, (size_t)n);
  CHECK_OK(H, HB->jacobi(Ah, dh, &bad[0]));
  CHECK_OK(D, DB->jacobi(Ad, dd, &bad[1]));
  down(g, dd, sizeof(double) * (size_t)n);
  int64_t diff = 0;
  for (int64_t i = 0; i < n; i++) diff += memcmp(&g[i], &dh[i], sizeof(double)) != 0;
  CHECK(diff == 0 && bad[0] == bad[1] && (id == 2 || bad[0] == (id == 4 ? 1 : -1)),
        "jacobi matrix %d: %lld entries differ, first bad row %lld (host %lld)", id,
        (long long)diff, (long long)bad[1], (long long)bad[0]);
  free(dh), free(g), dfree(dd);
  coal_mat_destroy(&Ah), coal_mat_destroy(&Ad);
}

/* resid_dd against its host twin: the same double-double operations in the same order, so
 * equal bit for bit; R poisoned, B and X in both layouts with padded leading dimensions. */
static void t_resid_dd(int id, int64_t k, coal_layout lb, coal_layout lx) {
  coal_mat Ah = NULL, Ad = NULL;
  int64_t n = sg_pair(id, &Ah, &Ad);
  if (n < 0) return;
  const int64_t ldb = ld_of(lb == RM ? k : n, 1), ldx = ld_of(lx == RM ? k : n, 2);
  double *B = hmalloc(slen(lb, n, k, ldb) + 1), *X = hmalloc(slen(lx, n, k, ldx) + 1);
  fill(B, lb, n, k, ldb, 1, 0, SENT), fill(X, lx, n, k, ldx, 1, 0, SENT);
  double *Rh = nblock(n * k + 1), *g = hmalloc((size_t)(n * k + 1));
  double *Bd = dcopy(B, slen(lb, n, k, ldb) + 1), *Xd = dcopy(X, slen(lx, n, k, ldx) + 1);
  double *Rd = dcopy(Rh, (size_t)(n * k + 1));
  CHECK_OK(H, HB->resid_dd(Ah, k, B, lb, ldb, X, lx, ldx, Rh));
  CHECK_OK(D, DB->resid_dd(Ad, k, Bd, lb, ldb, Xd, lx, ldx, Rd));
  down(g, Rd, sizeof(double) * (size_t)(n * k));
  int64_t diff = 0;
  for (int64_t i = 0; i < n * k; i++)
    diff += memcmp(&g[i], &Rh[i], sizeof(double)) != 0 || isnan(g[i]);
  CHECK(diff == 0, "resid_dd matrix %d k=%lld layouts %d/%d: %lld entries differ", id, (long long)k,
        (int)lb, (int)lx, (long long)diff);
  free(B), free(X), free(Rh), free(g), dfree(Bd), dfree(Xd), dfree(Rd);
  coal_mat_destroy(&Ah), coal_mat_destroy(&Ad);
}

int main(void) {
  if (!coal_cuda_available()) {
    printf("no GPU: skipped\n");
    return 77;
  }
  const char *qe = getenv("COALESCE_TEST_QUICK");
  quick = qe && !strcmp(qe, "1");
  CHECK_OK(NULL, coal_ctx_create(COAL_BACKEND_HOST, &H));
  CHECK_OK(NULL, coal_ctx_create(COAL_BACKEND_CUDA, &D));
  if (!H || !D) return check_finish();
  printf("device: %s%s\n", coal_ctx_device_name(D), quick ? " (quick)" : "");
  const int64_t small_n[] = {0, 1, 7, 1000};

  /* gram: every width pair for small n, some for the large ones */
  for (int a = 0; a < 4; a++)
    for (int i = 0; i < NW; i++)
      for (int j = 0; j < NW; j++)
        t_gram(small_n[a], widths[i], widths[j], (i + j) % 3, (i * j) % 4);
  for (int i = 0; i < NW; i++) {
    t_gram(1000, widths[i], widths[i], i % 3, -1);
    if (widths[i] <= 64) t_gram(100003, widths[i], widths[i], (i + 1) % 2, -1);
  }
  t_gram(100003, 1, 1, 0, 0);
  t_gram(100003, 8, 33, 1, 0);
  t_gram(100003, 64, 3, 0, 2);
  if (!quick) t_gram(100003, 128, 32, 0, 0), t_gram(BIG, 3, 8, 1, 1), t_gram(BIG, 1, 1, 0, 0);

  for (int id = 0; id < 5; id++) t_jacobi(id);
  for (int id = 0; id < 5; id++)
    for (int c = 0; c < 4; c++)
      t_resid_dd(id, c == 0 ? 1 : c == 1 ? 8 : 33, c & 1 ? RM : CM, c & 2 ? RM : CM);

  /* the fused Block-CG product: every matrix, odd and even widths (a lane or two columns) */
  static const int64_t sg_w[][2] = {{5, 5}, {8, 8}, {7, 32}, {31, 1}, {32, 32}, {32, 0}, {16, 8}};
  for (int id = 0; id < 5; id++)
    for (int c = 0; c < (int)(sizeof sg_w / sizeof sg_w[0]); c++)
      if (!quick || c % 2 == 0) t_spmm_gram(id, sg_w[c][0], sg_w[c][1]);

  /* gemm */
  static const double ab[3][2] = {{1.0, 0.0}, {-1.0, 1.0}, {1.0, 0.5}};
  for (int a = 0; a < 4; a++)
    for (int i = 0; i < NW; i++)
      for (int j = 0; j < NW; j++)
        for (int c = 0; c < 3; c++)
          t_gemm(small_n[a], widths[i], widths[j], ab[c][0], ab[c][1], (i + c) % 3, (j + c) % 2);
  for (int c = 0; c < 3; c++) {
    t_gemm(100003, 8, 8, ab[c][0], ab[c][1], 0, 1);
    t_gemm(100003, 33, 64, ab[c][0], ab[c][1], 1, 0);
    t_gemm(100003, 0, 5, ab[c][0], ab[c][1], 0, 0);
    if (!quick) {
      t_gemm(100003, 128, 3, ab[c][0], ab[c][1], 0, 0);
      t_gemm(BIG, 3, 8, ab[c][0], ab[c][1], 1, 1);
    }
  }

  /* dscale */
  const int64_t dn[] = {0, 1, 7, 1000, 100003};
  for (int a = 0; a < 5; a++)
    for (int i = 0; i < NW; i++) {
      if (a == 4 && widths[i] > 33) continue;
      for (int use_d = 0; use_d < 2; use_d++)
        for (int mode = 0; mode < 3; mode++)
          for (int nrm = 0; nrm < 2; nrm++)
            t_dscale(dn[a], widths[i], use_d, mode, nrm, (i + mode) % 3, (i + nrm) % 2);
    }
  if (!quick)
    for (int mode = 0; mode < 3; mode++) {
      t_dscale(BIG, 1, 1, mode, 1, 0, 0);
      t_dscale(BIG, 3, mode != 1, mode, mode != 0, 1, 0);
    }

  /* copy_cols */
  for (int a = 0; a < 5; a++)
    for (int i = 0; i < NW; i++) {
      if (a == 4 && widths[i] != 1 && widths[i] != 3 && widths[i] != 33) continue;
      for (int l = 0; l < 4; l++)
        for (int maps = 0; maps < 4; maps++)
          t_copy(dn[a], widths[i], l & 1 ? RM : CM, l & 2 ? RM : CM, maps, (i + maps) % 3,
                 (l + maps) % 2);
    }
  if (!quick)
    for (int l = 0; l < 4; l++) t_copy(BIG, 3, l & 1 ? RM : CM, l & 2 ? RM : CM, l, 1, 0);

  /* eig_resid */
  for (int a = 0; a < 5; a++)
    for (int i = 0; i < NW; i++) {
      if (a == 4 && widths[i] > 33) continue;
      for (int use_d = 0; use_d < 2; use_d++)
        for (int with_w = 0; with_w < 2; with_w++)
          t_eig_resid(dn[a], widths[i] + 2, widths[i] / 2 + (i & 1), use_d, with_w);
    }
  if (!quick) t_eig_resid(BIG, 40, 20, 1, 1);

  /* Block-CG steps: the tile path (widths <= 32) and the cuBLAS path (wider) */
  {
    const int64_t bn[] = {0, 1, 7, 33, 1000, 100003};
    const int64_t bw[] = {0, 1, 5, 8, 31, 32, 33};
    for (int a = 0; a < 6; a++)
      for (int i = 0; i < 7; i++)
        for (int j = 1; j < 7; j++) {
          if (a == 5 && (i + j) % 3) continue;
          t_bcg(bn[a], bw[i], bw[j], (i + j + a) & 1);
        }
    t_bcg(1000, 40, 20, 1), t_bcg(1000, 20, 64, 0);
    if (!quick) t_bcg(BIG, 32, 32, 1), t_bcg(BIG, 7, 32, 0);
  }

  /* CG steps */
  const int64_t cn[] = {0, 1, 7, 1000, 100003, BIG};
  for (int a = 0; a < (quick ? 5 : 6); a++)
    for (int off = 0; off < 2; off++) {
      t_dot(cn[a], off);
      for (int use_dinv = 0; use_dinv < 2; use_dinv++) t_cg(cn[a], use_dinv, off, 5);
    }

  /* single vectors: n past 1024 CTAs' worth of double2 (grid-stride), odd n for the tail */
  const int64_t vn[] = {0, 1, 3, 1000, (1 << 20) + 3, BIG};
  for (int a = 0; a < (quick ? 5 : 6); a++) {
    const int64_t n = vn[a];
    for (int off = 0; off < 2; off++) t_vaxpy(n, off), t_vpointwise(n, off);
    for (int off = 0; off < 3; off++)
      for (int64_t k = 0; k <= 9; k++)
        if (n < 100000 || k == 1 || k == 3 || k == 4 || k == 5 || k == 9) t_vdots(n, off, k);
    for (int off = 0; off < 2; off++)
      for (int mode = 0; mode < 6; mode++) {
        t_vnorms(n, off, mode, 0);
        if (n > 1 && (mode == 1 || mode == 2 || mode == 5))
          t_vnorms(n, off, mode, n / 2), t_vnorms(n, off, mode, n - 1);
      }
  }

  CHECK_OK(D, coal_ctx_sync(D));
  if (!quick) time_cg(1 << 21);
  coal_ctx_destroy(&D);
  coal_ctx_destroy(&H);
  return check_finish();
}
