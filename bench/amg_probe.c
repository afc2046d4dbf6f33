/* AMG measurement driver (docs/amg.md): builds the hierarchy of one matrix, prints it, and
 * solves A X = B (B random, X0 = 0) with CG (k = 1) or Block-CG preconditioned by Jacobi and by
 * AMG, reporting iterations, the worst true relative residual and times.
 *
 *   amg_probe SPEC [--theta T] [--coarse N] [--smoother chebyshev|l1-jacobi] [--degree D]
 *                  [--cheb-lo F] [--cheb-hi F] [--lanczos S] [--cycle v|w] [--k K]
 *                  [--rtol R] [--no-jacobi] [--rho-ref S] [--repeat N]
 *                  [--algos] [--ops]
 * SPEC: lap2d:N, lap3d:N, lap3d27:N, aniso:N:EX:EY:EZ or a Matrix Market file.
 * --rho-ref S also prints each level's Lanczos estimate with S steps (the reference for the
 * choice of COAL_AMG_LANCZOS_STEPS; host backend only). --repeat N times N more setups, N
 * V-cycles at k = 1 and k = 32 and N solves with AMG, and prints the medians (wall clock with
 * the context synchronised; the first run of each is a warm-up). Best backend
 * (COALESCE_BACKEND decides otherwise). --algos times, on every level, the two SpGEMM
 * algorithms (ROWS, TILE) on the level's products P^T A P and A P (medians of 3 creations, each
 * from matrices already on the backend), the measurement behind the front end's choice. --ops
 * times the cycle's operations one by one on every level at k = 1 and 32 (coal_bench_time
 * medians): the product with A, the fused Chebyshev step with and without a direction, R and P,
 * one block pass (vec_axpbypcz) and the coarse solve. */
#include "amg_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static coal_status load(coal_ctx ctx, const char *spec, coal_mat *A) {
  long n = 0;
  double ex, ey, ez;
  if (sscanf(spec, "lap2d:%ld", &n) == 1) return coal_gen_laplace2d(ctx, n, n, COAL_F64, A);
  if (sscanf(spec, "lap3d27:%ld", &n) == 1)
    return coal_gen_laplace3d(ctx, n, n, n, 27, COAL_F64, A);
  if (sscanf(spec, "lap3d:%ld", &n) == 1) return coal_gen_laplace3d(ctx, n, n, n, 7, COAL_F64, A);
  if (sscanf(spec, "aniso:%ld:%lf:%lf:%lf", &n, &ex, &ey, &ez) == 4)
    return coal_gen_aniso3d(ctx, n, n, n, ex, ey, ez, COAL_F64, A);
  return coal_mat_read_mm(ctx, spec, COAL_F64, A);
}

static int fail(coal_ctx ctx, const char *what, coal_status st) {
  fprintf(stderr, "amg_probe: %s: %s: %s\n", what, coal_status_string(st),
          coal_ctx_last_error(ctx));
  return 1;
}

/* One solve from x0 = 0; returns iterations, prints a line. */
static int solve(coal_mat A, coal_bvec B, coal_pc_type pc, coal_amg amg, coal_method m, double rtol,
                 const char *label) {
  coal_ctx ctx = coal_mat_ctx(A);
  int64_t n, k;
  coal_bvec_size(B, &n, &k);
  coal_solver S = NULL;
  coal_bvec X = NULL;
  coal_status st = coal_solver_create(A, &S);
  if (!st) st = coal_solver_set_method(S, m);
  if (!st) st = coal_solver_set_tolerances(S, rtol, 0.0, 20000);
  if (!st) st = coal_solver_set_check_every(S, 1); /* exact iteration counts */
  if (!st && pc == COAL_PC_USER) st = coal_solver_set_pc_user(S, coal_amg_pc_apply, amg);
  if (!st && pc != COAL_PC_USER) st = coal_solver_set_pc(S, pc);
  if (!st) st = coal_bvec_create(ctx, n, k, COAL_F64, COAL_ROW_MAJOR, 0, &X);
  if (!st) st = coal_bvec_set_value(X, 0.0);
  double t0 = coal_now_seconds(), t1 = 0, t2 = 0;
  if (!st) st = coal_solver_setup(S);
  t1 = coal_now_seconds();
  if (!st) st = coal_solver_solve(S, B, X);
  t2 = coal_now_seconds();
  int its = -1;
  if (!st) {
    double worst = 0;
    int conv = 1;
    for (int64_t j = 0; j < k; j++) {
      coal_solve_info in;
      coal_solver_get_info(S, j, &in);
      double r = in.rhsnorm > 0 ? in.resnorm / in.rhsnorm : in.resnorm;
      worst = r > worst ? r : worst;
      conv &= in.reason == COAL_SOLVE_CONVERGED;
    }
    its = coal_solver_iterations(S);
    printf("%-10s %-8s k=%-3lld its %5d  true rel res %.2e %s  setup %.3f s  solve %.3f s\n", label,
           coal_method_name(m), (long long)k, its, worst, conv ? "converged" : "NOT CONVERGED",
           t1 - t0, t2 - t1);
  } else {
    fail(ctx, label, st);
  }
  coal_bvec_destroy(&X);
  coal_solver_destroy(&S);
  return its;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static double median(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, cmp_double);
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* --repeat: medians of setup, one cycle at k = 1 and 32, and the solve with AMG. */
static int timings(coal_mat A, coal_amg amg, coal_bvec B, coal_method m, double rtol, int reps) {
  coal_ctx ctx = coal_mat_ctx(A);
  int64_t n;
  coal_mat_size(A, &n, NULL, NULL);
  double t[256];
  if (reps > 255) reps = 255;
  coal_amg_info in;
  for (int r = 0; r < reps; r++) {
    if (coal_amg_setup(amg) || coal_amg_get_info(amg, &in)) return 1;
    t[r] = in.setup_seconds;
  }
  printf("timing: setup median %.3f ms over %d\n", 1e3 * median(t, reps), reps);
  printf("  last setup phases (ms):");
  for (int p = 0; p < COAL_AMG_NPHASES; p++)
    printf(" %s %.3f", coal_amg_phase_name((coal_amg_phase)p), 1e3 * in.phase_seconds[p]);
  printf("\n");
  const int64_t ks[2] = {1, 32};
  for (int c = 0; c < 2; c++) {
    const int64_t k = ks[c];
    coal_bvec R = NULL, Z = NULL;
    if (coal_bvec_create(ctx, n, k, COAL_F64, COAL_ROW_MAJOR, 0, &R) ||
        coal_bvec_create(ctx, n, k, COAL_F64, COAL_ROW_MAJOR, 0, &Z) ||
        coal_bvec_set_random(R, 3) || coal_amg_reserve(amg, k))
      return 1;
    for (int r = -2; r < reps; r++) {
      coal_ctx_sync(ctx);
      const double t0 = coal_now_seconds();
      if (coal_amg_apply(amg, R, Z)) return 1;
      coal_ctx_sync(ctx);
      if (r >= 0) t[r] = coal_now_seconds() - t0;
    }
    printf("timing: V-cycle k = %lld median %.3f ms (%.3f ms per column)\n", (long long)k,
           1e3 * median(t, reps), 1e3 * median(t, reps) / (double)k);
    coal_bvec_destroy(&R);
    coal_bvec_destroy(&Z);
  }
  for (int r = 0; r < 3 && r < reps; r++) solve(A, B, COAL_PC_USER, amg, m, rtol, "amg (repeat)");
  return 0;
}

/* Median seconds of 3 creations (after one warm-up) of a product with one algorithm; a negative
 * value when the algorithm fails on it. */
static double time_product(coal_product_type type, coal_mat A, coal_mat B, coal_spgemm_algo algo,
                           double *numeric) {
  coal_ctx ctx = coal_mat_ctx(A);
  double t[3], tn[3];
  for (int r = -1; r < 3; r++) {
    coal_spgemm p = NULL;
    coal_mat C = NULL;
    coal_ctx_sync(ctx);
    const double t0 = coal_now_seconds();
    coal_status st = coal_spgemm_create_algo(type, A, B, algo, &p, &C);
    coal_ctx_sync(ctx);
    const double t1 = coal_now_seconds();
    if (!st) st = coal_spgemm_numeric(p);
    coal_ctx_sync(ctx);
    if (r >= 0) t[r] = t1 - t0, tn[r] = coal_now_seconds() - t1;
    coal_spgemm_destroy(&p);
    if (st) return -1.0;
  }
  if (numeric) *numeric = median(tn, 3);
  return median(t, 3);
}

static void algos(coal_amg amg) {
  for (int l = 0; l + 1 < amg->nlevels; l++) {
    coal_amg_level *L = &amg->lev[l];
    double prn = 0, ptn = 0;
    const double pr = time_product(COAL_PRODUCT_PTAP, L->A, L->P, COAL_SPGEMM_ROWS, &prn),
                 pt = time_product(COAL_PRODUCT_PTAP, L->A, L->P, COAL_SPGEMM_TILE, &ptn),
                 ar = time_product(COAL_PRODUCT_AB, L->A, L->P, COAL_SPGEMM_ROWS, NULL),
                 at = time_product(COAL_PRODUCT_AB, L->A, L->P, COAL_SPGEMM_TILE, NULL);
    printf("algos: level %d  PtAP rows %.3f ms (numeric again %.3f) tile %.3f ms (%.3f)  AP rows "
           "%.3f ms tile %.3f ms\n",
           l, 1e3 * pr, 1e3 * prn, 1e3 * pt, 1e3 * ptn, 1e3 * ar, 1e3 * at);
  }
}

/* --ops: one operation of the cycle, timed by coal_bench_time. */
typedef struct {
  int what; /* 0 A product, 1 Chebyshev step, 2 step without direction, 3 R, 4 P, 5 block pass,
               6 coarse solve, 7 A product by a kernel without a derived format (CSR-vector
               SpMV at k = 1, row-split SpMM above) */
  coal_amg amg;
  int l;
  int64_t k;
  coal_bvec v[4];                /* level l: R, D, x; level l + 1: B */
  double *blk[AMG_NBLK], *x, *b; /* level l's blocks; x and b of the probe's own */
} op_arg;

static coal_status run_op(void *p) {
  op_arg *a = (op_arg *)p;
  coal_amg_level *L = &a->amg->lev[a->l];
  const coal_amg_ops *ops = &coal_backend(a->amg->ctx)->amg;
  double **b = a->blk;
  switch (a->what) {
  case 0: return coal_spmm(L->A, COAL_SPMM_AUTO, -1.0, a->v[1], 1.0, a->v[0]);
  case 1:
    return ops->cheb_step(L->A, a->k, 0.3, 1.1, L->dinv, b[AMG_R], b[AMG_R], b[AMG_D], b[AMG_T],
                          a->x, a->x);
  case 2:
    return ops->cheb_step(L->A, a->k, 0.0, 1.1, L->dinv, a->b, NULL, NULL, b[AMG_D], NULL, a->x);
  case 3: return coal_spmm(L->R, COAL_SPMM_AUTO, 1.0, a->v[0], 0.0, a->v[3]);
  case 4: return coal_spmm(L->P, COAL_SPMM_AUTO, 1.0, a->v[3], 1.0, a->v[2]);
  case 5:
    return coal_backend(a->amg->ctx)
        ->blas.vec_axpbypcz(a->amg->ctx, L->A->nrows * a->k, 1.0, b[AMG_D], 0.0, NULL, 1.0, a->x,
                            0.0);
  case 7:
    return a->k == 1
               ? coal_spmv_raw(L->A, COAL_SPMV_CSR_VECTOR, -1.0, a->blk[AMG_D], 1.0, a->blk[AMG_R])
               : coal_spmm(L->A, COAL_SPMM_ROWSPLIT, -1.0, a->v[1], 1.0, a->v[0]);
  default: return coal_amg_coarse_solve(a->amg, a->k, a->b, a->x);
  }
}

static int ops_timing(coal_amg amg) {
  coal_ctx ctx = amg->ctx;
  static const char *names[] = {"A", "cheb", "cheb0", "R", "P", "pass", "coarse", "A-csr"};
  const int64_t ks[2] = {1, 32};
  for (int c = 0; c < 2; c++) {
    const int64_t k = ks[c];
    if (coal_amg_reserve(amg, k)) return 1;
    for (int l = 0; l < amg->nlevels; l++) {
      coal_amg_level *L = &amg->lev[l];
      const int last = l + 1 == amg->nlevels;
      op_arg a = {0};
      a.amg = amg, a.l = l, a.k = k;
      for (int q = 0; q < AMG_NBLK; q++) {
        a.blk[q] = L->blk[q];
        if (L->blk[q]) /* fresh values: no timing on zeros */
          coal_backend(ctx)->blas.vec_axpbypcz(ctx, L->A->nrows * k, 0.0, NULL, 0.0, NULL, 0.0,
                                               L->blk[q], 0.5 + 0.1 * q);
      }
      const int64_t n = L->A->nrows;
      const size_t bytes = sizeof(double) * (size_t)(n * k > 0 ? n * k : 1);
      if (coal_backend(ctx)->mem.alloc(ctx, bytes, (void **)&a.x) ||
          coal_backend(ctx)->mem.alloc(ctx, bytes, (void **)&a.b))
        return 1;
      coal_backend(ctx)->blas.vec_axpbypcz(ctx, n * k, 0.0, NULL, 0.0, NULL, 0.0, a.x, 0.3);
      coal_backend(ctx)->blas.vec_axpbypcz(ctx, n * k, 0.0, NULL, 0.0, NULL, 0.0, a.b, 0.7);
      double *vb[4] = {L->blk[AMG_R], L->blk[AMG_D], a.x, last ? NULL : amg->lev[l + 1].blk[AMG_B]};
      for (int q = 0; q < 4; q++)
        if (vb[q])
          coal_bvec_view(ctx, q == 3 ? amg->lev[l + 1].A->nrows : n, k, COAL_F64, COAL_ROW_MAJOR, k,
                         vb[q], &a.v[q]);
      printf("ops: k %2lld level %d (%lld rows):", (long long)k, l, (long long)n);
      for (int w = 0; w < 8; w++) {
        if ((w >= 3 && w <= 4 && last) || (w == 6 && (!last || !amg->direct)) ||
            (w != 6 && (!L->blk[AMG_D] || !L->dinv)))
          continue;
        a.what = w;
        double us = 0;
        if (coal_bench_time(ctx, run_op, &a, 3, 20, &us, NULL) == COAL_SUCCESS)
          printf("  %s %.1f us", names[w], us);
        else
          printf("  %s failed", names[w]);
      }
      printf("\n");
      for (int q = 0; q < 4; q++) coal_bvec_destroy(&a.v[q]);
      coal_backend(ctx)->mem.release(ctx, a.x);
      coal_backend(ctx)->mem.release(ctx, a.b);
    }
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: amg_probe SPEC [options]\n");
    return 2;
  }
  double theta = -1, cheb_lo = 0, cheb_hi = 0, rtol = 1e-8;
  long coarse = 0, k = 1, rho_ref = 0;
  int repeat = 0, do_algos = 0, do_ops = 0;
  int degree = 2, lanczos = 0, jacobi = 1, blockcg = 0;
  coal_amg_smoother sm = COAL_AMG_CHEBYSHEV;
  coal_amg_cycle cyc = COAL_AMG_V_CYCLE;
  for (int i = 2; i < argc; i++) {
    const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
    if (!strcmp(o, "--theta"))
      theta = atof(v), i++;
    else if (!strcmp(o, "--coarse"))
      coarse = atol(v), i++;
    else if (!strcmp(o, "--smoother"))
      coal_amg_smoother_parse(v, &sm), i++;
    else if (!strcmp(o, "--degree"))
      degree = atoi(v), i++;
    else if (!strcmp(o, "--cheb-lo"))
      cheb_lo = atof(v), i++;
    else if (!strcmp(o, "--cheb-hi"))
      cheb_hi = atof(v), i++;
    else if (!strcmp(o, "--lanczos"))
      lanczos = atoi(v), i++;
    else if (!strcmp(o, "--cycle"))
      cyc = v[0] == 'w' ? COAL_AMG_W_CYCLE : COAL_AMG_V_CYCLE, i++;
    else if (!strcmp(o, "--k"))
      k = atol(v), i++;
    else if (!strcmp(o, "--rtol"))
      rtol = atof(v), i++;
    else if (!strcmp(o, "--ops"))
      do_ops = 1;
    else if (!strcmp(o, "--algos"))
      do_algos = 1;
    else if (!strcmp(o, "--repeat"))
      repeat = atoi(v), i++;
    else if (!strcmp(o, "--rho-ref"))
      rho_ref = atol(v), i++;
    else if (!strcmp(o, "--no-jacobi"))
      jacobi = 0;
    else if (!strcmp(o, "--blockcg"))
      blockcg = 1;
    else {
      fprintf(stderr, "amg_probe: unknown option %s\n", o);
      return 2;
    }
  }
  coal_ctx ctx = NULL;
  coal_mat A = NULL;
  coal_amg amg = NULL;
  coal_status st = coal_ctx_create(COAL_BACKEND_AUTO, &ctx);
  if (st) return fail(ctx, "context", st);
  if ((st = load(ctx, argv[1], &A))) return fail(ctx, argv[1], st);
  int64_t n, nnz;
  coal_mat_size(A, &n, NULL, &nnz);
  printf("%s: %lld rows, %lld nonzeros\n", argv[1], (long long)n, (long long)nnz);
  if ((st = coal_amg_create(A, &amg))) return fail(ctx, "amg create", st);
  if (theta >= 0 && (st = coal_amg_set_theta(amg, theta))) return fail(ctx, "theta", st);
  if (coarse > 0 && (st = coal_amg_set_coarse_size(amg, coarse))) return fail(ctx, "coarse", st);
  if ((st = coal_amg_set_smoother(amg, sm, degree))) return fail(ctx, "smoother", st);
  if ((st = coal_amg_set_cycle(amg, cyc))) return fail(ctx, "cycle", st);
  if ((st = coal_amg_set_tuning(amg, cheb_lo, cheb_hi, lanczos))) return fail(ctx, "tuning", st);
  if ((st = coal_amg_reserve(amg, k))) return fail(ctx, "reserve", st);
  if ((st = coal_amg_setup(amg))) return fail(ctx, "amg setup", st);
  coal_amg_info in;
  coal_amg_get_info(amg, &in);
  printf("levels %d  grid complexity %.3f  operator complexity %.3f  hierarchy %.1f MB (A %.1f MB)"
         "  coarse %s rank %d  setup %.3f s\n",
         in.levels, in.grid_complexity, in.operator_complexity, in.hierarchy_bytes / 1e6,
         (double)(sizeof(int32_t) * (size_t)(n + 1 + nnz) + 8 * (size_t)nnz) / 1e6,
         in.coarse_direct ? "direct" : "smoothed", in.coarse_rank, in.setup_seconds);
  for (int l = 0; l < in.levels; l++) {
    printf("  level %2d: rows %9lld  nnz %10lld  nnz/row %6.1f  P nnz %9lld  rho %.4f  MIS rounds "
           "%d",
           l, (long long)in.rows[l], (long long)in.nnz[l],
           in.rows[l] ? (double)in.nnz[l] / (double)in.rows[l] : 0.0, (long long)in.p_nnz[l],
           in.rho[l], in.mis_rounds[l]);
    if (rho_ref > 0 && in.rho[l] > 0 && coal_ctx_backend(ctx) == COAL_BACKEND_HOST) {
      coal_amg_level *L = &amg->lev[l];
      double *scratch = malloc(sizeof(double) * 5 * (size_t)in.rows[l]),
             *jd = malloc(sizeof(double) * (size_t)in.rows[l]);
      int64_t bad;
      coal_amg_dinv_host(ctx, L->A->nrows, L->A->rowptr, L->A->colind, L->A->values, 0, jd, &bad);
      double r = 0;
      coal_amg_lanczos_rho(amg, L->A, jd, (int)rho_ref, scratch, &r);
      printf("  rho(%ld steps) %.4f  ratio %.4f", rho_ref, r, in.rho[l] / r);
      free(scratch), free(jd);
    }
    printf("\n");
  }
  printf("  phases:");
  for (int p = 0; p < COAL_AMG_NPHASES; p++)
    printf(" %s %.3f", coal_amg_phase_name((coal_amg_phase)p), in.phase_seconds[p]);
  printf("\n");
  coal_bvec B = NULL;
  if ((st = coal_bvec_create(ctx, n, k, COAL_F64, COAL_ROW_MAJOR, 0, &B)))
    return fail(ctx, "B", st);
  coal_bvec_set_random(B, 7);
  coal_method m = blockcg || k > 1 ? COAL_METHOD_BLOCKCG : COAL_METHOD_CG;
  if (jacobi) solve(A, B, COAL_PC_JACOBI, NULL, m, rtol, "jacobi");
  solve(A, B, COAL_PC_USER, amg, m, rtol, "amg");
  if (do_algos) algos(amg);
  if (do_ops && ops_timing(amg)) return fail(ctx, "ops", COAL_ERR_CUDA);
  if (repeat > 0 && timings(A, amg, B, m, rtol, repeat)) return fail(ctx, "timings", COAL_ERR_CUDA);
  coal_bvec_destroy(&B);
  coal_amg_destroy(&amg);
  coal_mat_destroy(&A);
  coal_ctx_destroy(&ctx);
  return 0;
}
