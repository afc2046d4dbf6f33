/* Block-CG step timing driver (not installed): each step of one Block-CG iteration on the
 * 3-D 7-point Laplacian (default 128^3) with k = 32 columns, timed with CUDA events
 * (coal_bench_time: median of reps, each call including its own host round trip), then the
 * three steps back to back as one iteration, then the alternatives (the direction step without
 * X's update; the SpMM and the Grams as two passes). Compares with the solver's time per
 * iteration (bench solve) to show how much of it is outside the kernels.
 *
 *   bcg_probe [N] [K]   grid N^3 (default 128), K columns (default 32, at most 32)
 */
#include "backend.h"
#include "bench.h"
#include "blas.h"
#include "coalesce.h"
#include "solver_impl.h" /* the repeated products (S->reorth) */

#include <stdio.h>
#include <stdlib.h>

typedef struct {
  coal_ctx ctx;
  coal_mat A;
  int64_t n, k;
  double *P, *Q, *X, *R, *Z, *Y, *dinv;
  coal_bvec Pv, Qv;
  double *C, *C2, *out; /* host: k x k coefficients, 4 k x k + k results */
} probe;

static coal_status run_update(void *p) {
  probe *a = p;
  double *o = a->out;
  const int64_t kk = a->k * a->k;
  return coal_backend(a->ctx)->blas.bcg_update(a->ctx, a->n, a->k, a->k, a->Q, a->C, a->R, a->dinv,
                                               a->Z, o, o + a->k, o + a->k + kk);
}
static coal_status run_dir(void *p) { /* with the deferred X += P alpha, as in the solve */
  probe *a = p;
  return coal_backend(a->ctx)->blas.bcg_dir(a->ctx, a->n, a->k, a->k, a->k, a->R, a->dinv, a->C,
                                            a->P, a->C2, a->Y, a->C, a->X);
}
static coal_status run_dir_nox(void *p) {
  probe *a = p;
  return coal_backend(a->ctx)->blas.bcg_dir(a->ctx, a->n, a->k, a->k, a->k, a->R, a->dinv, a->C,
                                            a->P, a->C2, a->Y, NULL, NULL);
}
static coal_status run_gram3(void *p) {
  probe *a = p;
  int64_t kk = a->k * a->k;
  return coal_backend(a->ctx)->blas.bcg_gram(a->ctx, a->n, a->k, a->k, a->P, a->Q, a->R, a->dinv,
                                             a->Z, a->out, a->out + kk, a->out + 2 * kk);
}
static coal_status run_spmm(void *p) {
  probe *a = p;
  return coal_spmm(a->A, COAL_SPMM_AUTO, 1.0, a->Pv, 0.0, a->Qv);
}
static int fused_offered(const probe *a) {
  return coal_backend(a->ctx)->blas.bcg_spmm_gram && a->k >= COAL_BCG_FUSED_MIN;
}
static coal_status run_spmm_gram(void *p) {
  probe *a = p;
  int64_t kk = a->k * a->k;
  if (!fused_offered(a)) return COAL_SUCCESS; /* not offered */
  return coal_backend(a->ctx)->blas.bcg_spmm_gram(a->A, a->Pv, a->Qv, a->k, a->R, a->dinv, a->out,
                                                  a->out + kk, a->out + 2 * kk);
}
static coal_status run_all(void *p) { /* one iteration's passes, as the solver makes them */
  coal_status st = run_update(p);
  if (!st) st = run_dir(p);
  if (!st && fused_offered(p)) return run_spmm_gram(p);
  if (!st) st = run_spmm(p);
  if (!st) st = run_gram3(p);
  return st;
}

static coal_bvec block(probe *a, int64_t k, uint64_t seed, double **data) {
  coal_bvec B = NULL;
  if (coal_bvec_create(a->ctx, a->n, k, COAL_F64, COAL_ROW_MAJOR, 0, &B) ||
      coal_bvec_set_random(B, seed)) {
    fprintf(stderr, "bcg_probe: block: %s\n", coal_ctx_last_error(a->ctx));
    exit(1);
  }
  *data = coal_bvec_data(B);
  return B;
}

/* Host clock at each monitor call of a Block-CG solve (Jacobi, rtol 1e-8, x0 = 0): where the
 * solve's time goes between the kernels' own times (start-up before the first check, each
 * iteration, the end after the last). */
enum { TL_MAX = 4096 };
typedef struct {
  double t[TL_MAX];
  int n;
} tl_rec;
static int tl_monitor(void *user, int it, int64_t k, const double *r) {
  tl_rec *t = user;
  (void)it, (void)k, (void)r;
  if (t->n < TL_MAX) t->t[t->n++] = coal_now_seconds();
  return 0;
}
static int cmp_d(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}
static void timeline(probe *a, coal_bvec X, coal_bvec B) {
  static tl_rec rec;
  static double d[TL_MAX];
  coal_solver S = NULL;
  rec.n = 0;
  double t0 = 0, t1 = 0, t2 = 0;
  if (coal_bvec_set_random(B, 11) || coal_bvec_set_value(X, 0.0) || coal_solver_create(a->A, &S) ||
      coal_solver_set_pc(S, COAL_PC_JACOBI) || coal_solver_set_tolerances(S, 1e-8, 0.0, 2000) ||
      coal_solver_set_monitor(S, tl_monitor, &rec) || (t0 = coal_now_seconds(), 0) ||
      coal_solver_setup(S) || coal_ctx_sync(a->ctx) || (t1 = coal_now_seconds(), 0) ||
      coal_solver_solve(S, B, X) || coal_ctx_sync(a->ctx)) {
    fprintf(stderr, "bcg_probe: timeline: %s\n", coal_ctx_last_error(a->ctx));
    coal_solver_destroy(&S);
    return;
  }
  t2 = coal_now_seconds();
  int its = coal_solver_iterations(S), reorth = S->reorth;
  coal_solver_destroy(&S);
  if (rec.n < 2) return;
  for (int i = 1; i < rec.n; i++) d[i - 1] = rec.t[i] - rec.t[i - 1];
  qsort(d, (size_t)(rec.n - 1), sizeof(double), cmp_d);
  const double med = d[(rec.n - 1) / 2];
  double slow = 0;
  int nslow = 0;
  for (int i = 1; i < rec.n; i++) {
    const double x = rec.t[i] - rec.t[i - 1];
    if (x > 1.1 * med) slow += x - med, nslow++;
  }
  printf("timeline (Block-CG, Jacobi, 1e-8, %d iterations, %d repeated products): setup %.1f ms; "
         "solve %.1f ms = start "
         "%.1f ms (to the first check) + %d steps (median %.1f us, min %.1f, max %.1f; %d steps "
         "above 1.1x the median, %.1f ms over it) + end %.1f ms\n",
         its, reorth, 1e3 * (t1 - t0), 1e3 * (t2 - t1), 1e3 * (rec.t[0] - t1), rec.n - 1, 1e6 * med,
         1e6 * d[0], 1e6 * d[rec.n - 2], nslow, 1e3 * slow, 1e3 * (t2 - rec.t[rec.n - 1]));
}

int main(int argc, char **argv) {
  int64_t N = argc > 1 ? atoll(argv[1]) : 128, k = argc > 2 ? atoll(argv[2]) : 32;
  if (N < 2 || k < 1 || k > 32) {
    fprintf(stderr, "usage: bcg_probe [N >= 2] [K in 1..32]\n");
    return 2;
  }
  probe a = {0};
  a.k = k;
  if (coal_ctx_create(COAL_BACKEND_CUDA, &a.ctx) ||
      coal_gen_laplace3d(a.ctx, N, N, N, 7, COAL_F64, &a.A)) {
    fprintf(stderr, "bcg_probe: %s\n", a.ctx ? coal_ctx_last_error(a.ctx) : "no context");
    return 1;
  }
  a.n = N * N * N;
  coal_bvec B[7];
  B[0] = a.Pv = block(&a, k, 1, &a.P);
  B[1] = a.Qv = block(&a, k, 2, &a.Q);
  B[2] = block(&a, k, 3, &a.X);
  B[3] = block(&a, k, 4, &a.R);
  B[4] = block(&a, k, 5, &a.Z);
  B[5] = block(&a, k, 6, &a.Y);
  B[6] = block(&a, 1, 7, &a.dinv);
  if (coal_bvec_set_value(B[6], 1.0 / 6.0)) { /* a Jacobi scaling is positive */
    fprintf(stderr, "bcg_probe: %s\n", coal_ctx_last_error(a.ctx));
    return 1;
  }
  a.C = malloc(sizeof(double) * (size_t)(k * k));
  a.C2 = malloc(sizeof(double) * (size_t)(k * k));
  a.out = malloc(sizeof(double) * (size_t)(4 * k * k + k));
  /* small coefficients: the blocks stay bounded over the repetitions */
  for (int64_t i = 0; i < k * k; i++) a.C[i] = 1e-3 * (double)((i * 7) % 13 - 6), a.C2[i] = 0.0;
  struct {
    const char *name;
    coal_bench_fn fn;
  } steps[] = {{"bcg_update", run_update},
               {"bcg_dir with X", run_dir},
               {"fused spmm + bcg_gram", run_spmm_gram},
               {"iteration (all three)", run_all},
               {"bcg_dir without X", run_dir_nox},
               {"spmm A*P", run_spmm},
               {"bcg_gram P^T [Q P R]", run_gram3}};
  printf("bcg_probe: lap3d %lld^3 (n = %lld), k = %lld, %s\n", (long long)N, (long long)a.n,
         (long long)k, coal_ctx_device_name(a.ctx));
  double sum = 0;
  for (int s = 0; s < (int)(sizeof steps / sizeof steps[0]); s++) {
    double med = 0, mn = 0;
    if (coal_bench_time(a.ctx, steps[s].fn, &a, 3, 30, &med, &mn)) {
      fprintf(stderr, "bcg_probe: %s: %s\n", steps[s].name, coal_ctx_last_error(a.ctx));
      return 1;
    }
    if (s < 3) sum += med;
    printf("  %-22s median %8.1f us, min %8.1f us%s\n", steps[s].name, med, mn,
           s == 3 ? "" : "  (with its host round trip)");
    if (s == 3) printf("  %-22s %8.1f us\n", "sum of the three", sum);
  }
  timeline(&a, B[2], B[3]);
  for (int i = 0; i < 7; i++) coal_bvec_destroy(&B[i]);
  coal_mat_destroy(&a.A);
  coal_ctx_destroy(&a.ctx);
  free(a.C), free(a.C2), free(a.out);
  return 0;
}
