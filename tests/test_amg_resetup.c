/* AMG numeric-only re-setup and reproducible runs (suite host; built again with TEST_CUDA as
 * amg_resetup_cuda, suite cuda):
 *   - after coal_mat_set_values on the same pattern, with new values for which a fresh setup
 *     keeps the strong graph and the aggregates (a A + c I on constant-coefficient Laplacians,
 *     a A on an anisotropic matrix: the strength test and the order of a row's strengths do not
 *     change), coal_amg_resetup's hierarchy equals a fresh setup of a matrix holding the new
 *     values: the same levels and patterns, every level's A, P and R and rho to rounding, the
 *     same PCG iteration count and solutions to rounding; Chebyshev and l1-Jacobi; fp64 and
 *     fp32 A (whose fp64 copy takes the new values);
 *   - the re-setup says numeric_only, keeps its state over several re-setups (back to the first
 *     values: the first hierarchy again), and without coal_amg_set_reuse it is a full setup;
 *   - a re-setup onto values with a non-positive diagonal fails with COAL_ERR_NOT_SPD and frees
 *     the hierarchy (apply: COAL_ERR_STATE); the next re-setup builds it again;
 *   - reproducible runs: two setups of one matrix give bitwise identical hierarchies; PCG + AMG
 *     and Block-CG + AMG run twice give bitwise identical solutions and residual histories. */
#include "amg_impl.h"
#include "check.h"
#ifdef TEST_CUDA
#include <stdlib.h>
#endif

#include <stdint.h>

static coal_ctx ctx;

/* ---- host copies and comparisons --------------------------------------------------------- */
typedef struct {
  int64_t n, nnz, *rp;
  int32_t *ci;
  double *v;
} hcsr;

static hcsr host_of(coal_mat M) {
  hcsr h = {0};
  int64_t n, nnz;
  coal_mat_size(M, &n, NULL, &nnz);
  h.n = n, h.nnz = nnz;
  h.rp = malloc(sizeof(int64_t) * (size_t)(n + 1));
  h.ci = malloc(sizeof(int32_t) * (size_t)(nnz + 1));
  h.v = malloc(sizeof(double) * (size_t)(nnz + 1));
  if (M->dtype == COAL_F64) {
    CHECK_OK(ctx, coal_mat_get_csr(M, h.rp, h.ci, h.v));
  } else {
    float *f = malloc(sizeof(float) * (size_t)(nnz + 1));
    CHECK_OK(ctx, coal_mat_get_csr(M, h.rp, h.ci, f));
    for (int64_t p = 0; p < nnz; p++) h.v[p] = f[p];
    free(f);
  }
  return h;
}
static void hfree(hcsr *h) { free(h->rp), free(h->ci), free(h->v); }

/* Same pattern, values within tol of the largest |y| (tol 0: the same bits). */
static int same_mat(coal_mat X, coal_mat Y, double tol, const char *what, int l) {
  if (!X || !Y) {
    CHECK(!X && !Y, "%s of level %d exists in one hierarchy only", what, l);
    return !X && !Y;
  }
  hcsr x = host_of(X), y = host_of(Y);
  int ok = x.n == y.n && x.nnz == y.nnz;
  for (int64_t i = 0; ok && i <= x.n; i++) ok = x.rp[i] == y.rp[i];
  for (int64_t p = 0; ok && p < x.nnz; p++) ok = x.ci[p] == y.ci[p];
  CHECK(ok, "%s of level %d: patterns differ (%lld / %lld rows, %lld / %lld nonzeros)", what, l,
        (long long)x.n, (long long)y.n, (long long)x.nnz, (long long)y.nnz);
  double dmax = 0, ymax = 0;
  int bits = 1;
  for (int64_t p = 0; ok && p < x.nnz; p++) {
    dmax = fmax(dmax, fabs(x.v[p] - y.v[p])), ymax = fmax(ymax, fabs(y.v[p]));
    bits &= memcmp(&x.v[p], &y.v[p], sizeof(double)) == 0;
  }
  if (ok) {
    if (tol == 0.0)
      CHECK(bits, "%s of level %d: values differ in their bits (largest difference %g)", what, l,
            dmax);
    else
      CHECK(dmax <= tol * ymax, "%s of level %d: values differ by %g (of %g)", what, l, dmax, ymax);
  }
  hfree(&x), hfree(&y);
  return ok;
}

static void same_hierarchy(coal_amg a, coal_amg b, double tol, const char *what) {
  CHECK(a->nlevels == b->nlevels, "%s: %d levels against %d", what, a->nlevels, b->nlevels);
  if (a->nlevels != b->nlevels) return;
  for (int l = 0; l < a->nlevels; l++) {
    const coal_amg_level *x = &a->lev[l], *y = &b->lev[l];
    same_mat(x->A, y->A, tol, "A", l);
    same_mat(x->P, y->P, tol, "P", l);
    same_mat(x->R, y->R, tol, "R", l);
    CHECK(fabs(x->rho - y->rho) <= (tol > 0 ? tol : 0.0) * fabs(y->rho),
          "%s: rho of level %d %.17g, %.17g", what, l, x->rho, y->rho);
  }
  CHECK(a->direct == b->direct && a->rank == b->rank, "%s: coarse solve %d/%d, rank %d/%d", what,
        a->direct, b->direct, a->rank, b->rank);
}

/* ---- solves ---------------------------------------------------------------------------------- */
typedef struct {
  int n;
  double r[512];
} history;

static int record(void *user, int it, int64_t k, const double *res) {
  (void)it;
  history *h = (history *)user;
  for (int64_t j = 0; j < k && h->n < 512; j++) h->r[h->n++] = res[j];
  return 0;
}

static uint64_t lcg(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return *s >> 11;
}

/* PCG (k = 1) or Block-CG (k > 1) preconditioned by `amg` to 1e-8 from x0 = 0 on a fixed random
 * B; returns the iterations (-1: not converged), X on the host (n k, row-major) and the
 * residual history. */
static int solve_amg(coal_mat A, coal_amg amg, int64_t k, double *Xh, history *h) {
  int64_t n;
  coal_mat_size(A, &n, NULL, NULL);
  double *Bh = malloc(sizeof(double) * (size_t)(n * k));
  uint64_t s = 12345;
  for (int64_t i = 0; i < n * k; i++) Bh[i] = (double)lcg(&s) / 9007199254740992.0 - 0.5;
  coal_solver S = NULL;
  coal_bvec B = NULL, X = NULL;
  CHECK_OK(ctx, coal_solver_create(A, &S));
  CHECK_OK(ctx, coal_solver_set_method(S, k == 1 ? COAL_METHOD_CG : COAL_METHOD_BLOCKCG));
  CHECK_OK(ctx, coal_solver_set_pc_user(S, coal_amg_pc_apply, amg));
  CHECK_OK(ctx, coal_solver_set_tolerances(S, 1e-8, 0.0, 500));
  CHECK_OK(ctx, coal_solver_set_check_every(S, 1));
  h->n = 0;
  CHECK_OK(ctx, coal_solver_set_monitor(S, record, h));
  CHECK_OK(ctx, coal_bvec_create(ctx, n, k, COAL_F64, COAL_ROW_MAJOR, 0, &B));
  CHECK_OK(ctx, coal_bvec_create(ctx, n, k, COAL_F64, COAL_ROW_MAJOR, 0, &X));
  CHECK_OK(ctx, coal_bvec_set_host(B, Bh, COAL_ROW_MAJOR, k));
  CHECK_OK(ctx, coal_bvec_set_value(X, 0.0));
  CHECK_OK(ctx, coal_amg_reserve(amg, k));
  coal_status st = coal_solver_solve(S, B, X);
  CHECK(st == COAL_SUCCESS, "solve: %s: %s", coal_status_string(st), coal_ctx_last_error(ctx));
  int conv = 1;
  for (int64_t j = 0; j < k; j++) {
    coal_solve_info in;
    coal_solver_get_info(S, j, &in);
    conv &= in.reason == COAL_SOLVE_CONVERGED;
  }
  const int its = conv && !st ? coal_solver_iterations(S) : -1;
  CHECK_OK(ctx, coal_bvec_get_host(X, Xh, COAL_ROW_MAJOR, k));
  coal_bvec_destroy(&B), coal_bvec_destroy(&X);
  coal_solver_destroy(&S);
  free(Bh);
  return its;
}

static double rel_diff(const double *x, const double *y, int64_t m) {
  double d = 0, s = 0;
  for (int64_t i = 0; i < m; i++) d = fmax(d, fabs(x[i] - y[i])), s = fmax(s, fabs(y[i]));
  return s > 0 ? d / s : d;
}

/* ---- re-setup ------------------------------------------------------------------------------ */
/* A's values from h (converted to A's dtype). */
static void set_values_from(coal_mat A, const hcsr *h) {
  if (A->dtype == COAL_F64) {
    CHECK_OK(ctx, coal_mat_set_values(A, h->v));
    return;
  }
  float *f = malloc(sizeof(float) * (size_t)(h->nnz + 1));
  for (int64_t p = 0; p < h->nnz; p++) f[p] = (float)h->v[p];
  CHECK_OK(ctx, coal_mat_set_values(A, f));
  free(f);
}

/* A's values become a * A + c I (A's pattern holds the diagonal). */
static void new_values(coal_mat A, double a, double c) {
  hcsr h = host_of(A);
  for (int64_t i = 0; i < h.n; i++)
    for (int64_t p = h.rp[i]; p < h.rp[i + 1]; p++) h.v[p] = a * h.v[p] + (h.ci[p] == i ? c : 0.0);
  set_values_from(A, &h);
  hfree(&h);
}

typedef coal_status (*gen_fn)(coal_dtype dt, coal_mat *A);
static coal_status gen_lap3d(coal_dtype dt, coal_mat *A) {
  return coal_gen_laplace3d(ctx, 16, 16, 16, 7, dt, A);
}
static coal_status gen_lap2d(coal_dtype dt, coal_mat *A) {
  return coal_gen_laplace2d(ctx, 48, 48, dt, A);
}
static coal_status gen_aniso(coal_dtype dt, coal_mat *A) {
  return coal_gen_aniso3d(ctx, 14, 14, 14, 1.0, 1.0, 1e-3, dt, A);
}

static coal_amg make_amg(coal_mat A, coal_amg_smoother sm, int reuse, int64_t coarse) {
  coal_amg amg = NULL;
  CHECK_OK(ctx, coal_amg_create(A, &amg));
  CHECK_OK(ctx, coal_amg_set_coarse_size(amg, coarse));
  CHECK_OK(ctx, coal_amg_set_smoother(amg, sm, sm == COAL_AMG_CHEBYSHEV ? 2 : 1));
  CHECK_OK(ctx, coal_amg_set_reuse(amg, reuse));
  CHECK_OK(ctx, coal_amg_setup(amg));
  return amg;
}

/* coarse: the coarse size. A shift c != 0 keeps the strength test and the order of strengths
 * on level 0 of a constant-coefficient Laplacian, not on the coarser levels (their values
 * change shape): two levels then. A scaling by a power of two changes no rounding: every
 * level's aggregates stay. */
static void resetup_case(const char *name, gen_fn gen, coal_dtype dt, coal_amg_smoother sm,
                         double a, double c, int64_t coarse, int min_levels) {
  coal_mat A = NULL, A0 = NULL, A2 = NULL; /* re-set up; the first values; the new values */
  CHECK_OK(ctx, gen(dt, &A));
  CHECK_OK(ctx, gen(dt, &A0));
  CHECK_OK(ctx, gen(dt, &A2));
  if (!A || !A0 || !A2) return;
  int64_t n;
  coal_mat_size(A, &n, NULL, NULL);
  coal_amg amg = make_amg(A, sm, 1, coarse), first = make_amg(A0, sm, 0, coarse);
  coal_amg_info in;
  CHECK_OK(ctx, coal_amg_get_info(amg, &in));
  CHECK(in.levels >= min_levels && !in.numeric_only && in.reuse_bytes > 0,
        "%s: %d levels, numeric_only %d, reuse bytes %zu", name, in.levels, in.numeric_only,
        in.reuse_bytes);
  /* new values: the re-setup against a fresh setup of a matrix that holds them */
  new_values(A, a, c);
  new_values(A2, a, c);
  CHECK_ERR(ctx, coal_amg_apply(amg, NULL, NULL), COAL_ERR_STATE); /* stale */
  CHECK_OK(ctx, coal_amg_resetup(amg));
  coal_amg fresh = make_amg(A2, sm, 0, coarse);
  CHECK_OK(ctx, coal_amg_get_info(amg, &in));
  CHECK(in.numeric_only == 1, "%s: the re-setup was not numeric-only", name);
  same_hierarchy(amg, fresh, 1e-12, name);
  double *x1 = malloc(sizeof(double) * (size_t)n), *x2 = malloc(sizeof(double) * (size_t)n);
  history h1, h2;
  coal_mat S1 = A, S2 = A2; /* the solvers run in fp64 */
  if (dt != COAL_F64) {
    CHECK_OK(ctx, coal_mat_convert(A, COAL_F64, &S1));
    CHECK_OK(ctx, coal_mat_convert(A2, COAL_F64, &S2));
  }
  const int i1 = solve_amg(S1, amg, 1, x1, &h1), i2 = solve_amg(S2, fresh, 1, x2, &h2);
  if (dt != COAL_F64) coal_mat_destroy(&S1), coal_mat_destroy(&S2);
  CHECK(i1 > 0 && i1 == i2, "%s: PCG + AMG %d iterations after the re-setup, %d after a setup",
        name, i1, i2);
  CHECK(rel_diff(x1, x2, n) <= 1e-9, "%s: solutions differ by %g", name, rel_diff(x1, x2, n));
  /* back to the first values: the first hierarchy again */
  coal_amg_destroy(&fresh);
  hcsr h = host_of(A0);
  set_values_from(A, &h);
  hfree(&h);
  CHECK_OK(ctx, coal_amg_resetup(amg));
  same_hierarchy(amg, first, 1e-12, name);
  free(x1), free(x2);
  coal_amg_destroy(&amg), coal_amg_destroy(&first);
  coal_mat_destroy(&A), coal_mat_destroy(&A0), coal_mat_destroy(&A2);
}

static void test_resetup(void) {
  resetup_case("lap3d:16 x 2", gen_lap3d, COAL_F64, COAL_AMG_CHEBYSHEV, 2.0, 0.0, 20, 3);
  resetup_case("lap3d:16 x 2.5 + 0.3 I", gen_lap3d, COAL_F64, COAL_AMG_CHEBYSHEV, 2.5, 0.3, 400, 2);
  resetup_case("lap3d:16 x 0.5, l1-jacobi", gen_lap3d, COAL_F64, COAL_AMG_L1_JACOBI, 0.5, 0.0, 20,
               3);
  resetup_case("lap3d:16 x 0.75 + 0.1 I, l1-jacobi", gen_lap3d, COAL_F64, COAL_AMG_L1_JACOBI, 0.75,
               0.1, 400, 2);
  resetup_case("aniso:14:1:1:1e-3 x 4", gen_aniso, COAL_F64, COAL_AMG_CHEBYSHEV, 4.0, 0.0, 20, 3);
  resetup_case("lap2d:48 fp32 x 2 + 0.5 I", gen_lap2d, COAL_F32, COAL_AMG_CHEBYSHEV, 2.0, 0.5, 400,
               2);
  resetup_case("lap2d:48 fp32 x 2", gen_lap2d, COAL_F32, COAL_AMG_CHEBYSHEV, 2.0, 0.0, 20, 3);
}

/* Without coal_amg_set_reuse the re-setup is a full setup; an error frees the hierarchy. */
static void test_resetup_edges(void) {
  coal_mat A = NULL;
  CHECK_OK(ctx, gen_lap3d(COAL_F64, &A));
  if (!A) return;
  coal_amg amg = make_amg(A, COAL_AMG_CHEBYSHEV, 0, 60);
  coal_amg_info in;
  new_values(A, 2.0, 0.0);
  CHECK_OK(ctx, coal_amg_resetup(amg));
  CHECK_OK(ctx, coal_amg_get_info(amg, &in));
  CHECK(!in.numeric_only && in.reuse_bytes == 0, "without reuse: numeric_only %d, %zu bytes",
        in.numeric_only, in.reuse_bytes);
  coal_amg_destroy(&amg);
  /* a negative diagonal entry: the re-setup's error, the hierarchy gone, then built again */
  amg = make_amg(A, COAL_AMG_CHEBYSHEV, 1, 60);
  hcsr h = host_of(A);
  double *good = malloc(sizeof(double) * (size_t)(h.nnz + 1));
  memcpy(good, h.v, sizeof(double) * (size_t)h.nnz);
  for (int64_t p = h.rp[7]; p < h.rp[8]; p++)
    if (h.ci[p] == 7) h.v[p] = -1.0;
  CHECK_OK(ctx, coal_mat_set_values(A, h.v));
  CHECK_ERR(ctx, coal_amg_resetup(amg), COAL_ERR_NOT_SPD);
  CHECK_ERR(ctx, coal_amg_get_info(amg, &in), COAL_ERR_STATE);
  CHECK_OK(ctx, coal_mat_set_values(A, good));
  CHECK_OK(ctx, coal_amg_resetup(amg));
  CHECK_OK(ctx, coal_amg_get_info(amg, &in));
  CHECK(!in.numeric_only && in.levels >= 3, "after the error: numeric_only %d, %d levels",
        in.numeric_only, in.levels);
  CHECK_OK(ctx, coal_amg_resetup(amg));
  CHECK_OK(ctx, coal_amg_get_info(amg, &in));
  CHECK(in.numeric_only == 1, "the second re-setup after the error was not numeric-only");
  hfree(&h), free(good);
  coal_amg_destroy(&amg);
  coal_mat_destroy(&A);
}

/* ---- the symmetry check (mat.asymmetry; the re-setup's first step) ----------------------------
 */
/* A random symmetric n x n pattern with a diagonal, values in (-1, 1) and 4 on the diagonal;
 * then `how`: 0 as is, 1 a_ij of one entry moved by 1e-9 relative, 2 one mirror missing,
 * 3 a_ij moved by 1e-14 relative (within the tolerance). *ei, *ej: the entry changed. */
static coal_mat asym_matrix(int32_t n, coal_dtype dt, int how, uint64_t seed, int64_t *ei,
                            int64_t *ej) {
  int32_t *rows = malloc(sizeof(int32_t) * (size_t)(9 * n)),
          *cols = malloc(sizeof(int32_t) * (size_t)(9 * n));
  double *vals = malloc(sizeof(double) * (size_t)(9 * n));
  int64_t m = 0;
  for (int32_t i = 0; i < n; i++) rows[m] = cols[m] = i, vals[m++] = 4.0;
  for (int32_t e = 0; e < 4 * n; e++) {
    const int32_t i = (int32_t)(lcg(&seed) % (uint64_t)n), j = (int32_t)(lcg(&seed) % (uint64_t)n);
    if (i == j) continue;
    const double v = (double)(lcg(&seed) % 1000) / 1000.0 - 0.5;
    rows[m] = i, cols[m] = j, vals[m++] = v;
    rows[m] = j, cols[m] = i, vals[m++] = v;
  }
  /* the changed entry: a stored off-diagonal one, by index */
  int64_t q = n + 2 * (int64_t)(lcg(&seed) % (uint64_t)((m - n) / 2));
  *ei = rows[q], *ej = cols[q];
  if (how == 1) vals[q] *= 1.0 + 1e-9;
  if (how == 3) vals[q] *= 1.0 + 1e-14;
  if (how == 2) { /* drop every copy of (i, j), keep (j, i) */
    int64_t k = 0;
    for (int64_t p = 0; p < m; p++)
      if (!(rows[p] == *ei && cols[p] == *ej))
        rows[k] = rows[p], cols[k] = cols[p], vals[k++] = vals[p];
    m = k;
  }
  coal_mat A = NULL;
  CHECK_OK(ctx, coal_mat_create_coo(ctx, n, n, m, rows, cols, vals, dt, &A));
  free(rows), free(cols), free(vals);
  return A;
}

static void test_symmetry_check(void) {
  const coal_backend_ops *be = coal_backend(ctx);
  for (int dtc = 0; dtc < 2; dtc++) {
    const coal_dtype dt = dtc ? COAL_F32 : COAL_F64;
    for (int how = 0; how < 4; how++)
      for (uint64_t seed = 1; seed <= 3; seed++) {
        int64_t ei, ej, r = -2, c = -2;
        coal_mat A =
            asym_matrix(3000 + (int32_t)seed * 77, dt, how, seed * 31 + (uint64_t)how, &ei, &ej);
        if (!A) continue;
        if (dt == COAL_F32 && how == 1) { /* 1e-9 is below fp32's rounding: use the pattern case */
          coal_mat_destroy(&A);
          continue;
        }
        CHECK_OK(ctx, be->mat.asymmetry(A, 1e-12, &r, &c));
        int64_t er = -1, ec = -1; /* expected: the first of (i, j) and (j, i) in row order */
        if (how == 1) er = ei < ej ? ei : ej, ec = ei < ej ? ej : ei;
        if (how == 2) er = ej, ec = ei; /* only (j, i) is stored */
        CHECK(r == er && c == ec,
              "%s, case %d, seed %llu: asymmetry (%lld, %lld), expected (%lld, %lld)",
              dt == COAL_F64 ? "fp64" : "fp32", how, (unsigned long long)seed, (long long)r,
              (long long)c, (long long)er, (long long)ec);
        int64_t hr = -2, hc = -2; /* the host twin on the same matrix */
        CHECK_OK(ctx, coal_mat_asymmetry_host(A, 1e-12, &hr, &hc));
        CHECK(hr == r && hc == c, "host twin (%lld, %lld), backend (%lld, %lld)", (long long)hr,
              (long long)hc, (long long)r, (long long)c);
        coal_mat_destroy(&A);
      }
  }
}

/* ---- reproducible runs ----------------------------------------------------------------------- */
static void test_reproducible(void) {
  coal_mat A = NULL;
  CHECK_OK(ctx, coal_gen_laplace3d(ctx, 20, 20, 20, 7, COAL_F64, &A));
  if (!A) return;
  int64_t n;
  coal_mat_size(A, &n, NULL, NULL);
  coal_amg a1 = make_amg(A, COAL_AMG_CHEBYSHEV, 0, 60), a2 = make_amg(A, COAL_AMG_CHEBYSHEV, 1, 60);
  same_hierarchy(a1, a2, 0.0, "two setups");
  CHECK_OK(ctx, coal_amg_resetup(a2)); /* the same values again: the same bits */
  same_hierarchy(a1, a2, 0.0, "setup and re-setup");
  for (int64_t k = 1; k <= 8; k += 7) {
    double *x1 = malloc(sizeof(double) * (size_t)(n * k)),
           *x2 = malloc(sizeof(double) * (size_t)(n * k));
    history h1, h2;
    const int i1 = solve_amg(A, a1, k, x1, &h1), i2 = solve_amg(A, a2, k, x2, &h2);
    CHECK(i1 > 0 && i1 == i2 && h1.n == h2.n, "k = %lld: %d / %d iterations, %d / %d residuals",
          (long long)k, i1, i2, h1.n, h2.n);
    CHECK(h1.n == h2.n && !memcmp(h1.r, h2.r, sizeof(double) * (size_t)h1.n),
          "k = %lld: residual histories differ", (long long)k);
    CHECK(!memcmp(x1, x2, sizeof(double) * (size_t)(n * k)),
          "k = %lld: solutions differ in their bits (by %g)", (long long)k,
          rel_diff(x1, x2, n * k));
    free(x1), free(x2);
  }
  coal_amg_destroy(&a1), coal_amg_destroy(&a2);
  coal_mat_destroy(&A);
}

int main(void) {
  const int rc = check_context(&ctx);
  if (rc) return rc;
  test_symmetry_check();
  test_resetup();
  test_resetup_edges();
  test_reproducible();
  coal_ctx_destroy(&ctx);
  return check_finish();
}
