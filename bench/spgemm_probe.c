/* SpGEMM phase timing driver (not installed): where the time of the ROWS product goes on the
 * 3-D 7-point Laplacian (default 128^3) for A*A and P^T A P with the aggregation prolongator of
 * `coalesce bench spgemm` (3 x 3 x 3 nodes per aggregate). Each case is timed whole with CUDA
 * events (coal_bench_time: median of reps, create + destroy of the product and of C, as the
 * benchmark times it), then its pieces (P^T, A*P, P^T*(AP), numeric-only), P^T A P with the
 * smoothed prolongator (I - 2/3 D^-1 A) P as well, then once with the symbolic pass's phase hook
 * (a stream wait and a clock at each phase boundary, so these phases add up to more than the
 * untraced run). The hook is coal_spgemm_trace_phase below (kernels/cuda/spgemm_trace.h): the
 * probe links its own copy of the row-wise SpGEMM compiled with COAL_SPGEMM_TRACE
 * (bench/meson.build); outside the traced run it returns at once.
 *
 *   spgemm_probe [N] [ptap|smoothed]   grid N^3 (default 128); ptap: the P^T A P pieces only;
 *                                      smoothed: P^T A P with the smoothed P only
 */
#include "backend.h"
#include "bench.h"
#include "coalesce.h"
#include "cuda/spgemm_trace.h"
#include "spgemm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  coal_ctx ctx;
  coal_mat A, B;
  coal_product_type type;
  coal_spgemm prod; /* kept one, for the numeric-only runs */
} probe;

static coal_status run_create(void *arg) {
  probe *a = arg;
  coal_spgemm p = NULL;
  coal_mat C = NULL;
  coal_status st = coal_spgemm_create_algo(a->type, a->A, a->B, COAL_SPGEMM_ROWS, &p, &C);
  coal_spgemm_destroy(&p);
  coal_mat_destroy(&C);
  return st;
}
static coal_status run_numeric(void *arg) { return coal_spgemm_numeric(((probe *)arg)->prod); }
static coal_status run_transpose(void *arg) {
  probe *a = arg;
  coal_mat T = NULL;
  coal_status st = coal_spgemm_transpose_cuda(a->B, &T);
  coal_mat_destroy(&T);
  return st;
}

static double t_last;
static int tracing; /* the hook reports only during the traced run */
static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}
void coal_spgemm_trace_phase(coal_ctx ctx, const char *phase) {
  if (!tracing) return;
  (void)coal_ctx_sync(ctx);
  const double t = now();
  printf("    %-14s %8.1f us\n", phase, (t - t_last) * 1e6);
  t_last = now();
}

static void time_case(probe *a, const char *name) {
  double us = 0, num = 0;
  coal_mat C = NULL;
  if (coal_bench_time(a->ctx, run_create, a, 2, 15, &us, NULL) ||
      coal_spgemm_create_algo(a->type, a->A, a->B, COAL_SPGEMM_ROWS, &a->prod, &C) ||
      coal_bench_time(a->ctx, run_numeric, a, 2, 15, &num, NULL)) {
    printf("%s: failed: %s\n", name, coal_ctx_last_error(a->ctx));
    exit(1);
  }
  printf("%-22s create+destroy %9.1f us   numeric %9.1f us   nnz(C) %lld\n", name, us, num,
         (long long)C->nnz);
  coal_spgemm_destroy(&a->prod);
  coal_mat_destroy(&C);
  { /* one traced run */
    tracing = 1;
    (void)coal_ctx_sync(a->ctx);
    t_last = now();
    coal_spgemm p = NULL;
    if (coal_spgemm_create_algo(a->type, a->A, a->B, COAL_SPGEMM_ROWS, &p, &C) == COAL_SUCCESS)
      coal_spgemm_trace_phase(a->ctx, "numeric");
    tracing = 0;
    const double t0 = now();
    coal_spgemm_destroy(&p);
    coal_mat_destroy(&C);
    (void)coal_ctx_sync(a->ctx);
    printf("    %-14s %8.1f us\n", "destroy", (now() - t0) * 1e6);
  }
}

int main(int argc, char **argv) {
  const int64_t n = argc > 1 ? atoll(argv[1]) : 128;
  probe a;
  memset(&a, 0, sizeof a);
  if (coal_ctx_create(COAL_BACKEND_CUDA, &a.ctx)) {
    printf("no GPU\n");
    return 77;
  }
  coal_mat A = NULL, P = NULL, Pt = NULL, AP = NULL;
  const int64_t m = n * n * n, g = (n + 2) / 3;
  int32_t *r = malloc(sizeof(int32_t) * (size_t)m), *c = malloc(sizeof(int32_t) * (size_t)m);
  double *v = malloc(sizeof(double) * (size_t)m);
  if (!r || !c || !v) return 1;
  for (int64_t i = 0; i < m; i++) {
    const int64_t x = i % n, y = (i / n) % n, z = i / (n * n);
    r[i] = (int32_t)i, c[i] = (int32_t)(x / 3 + g * (y / 3 + g * (z / 3))), v[i] = 1.0;
  }
  if (coal_gen_laplace3d(a.ctx, n, n, n, 7, COAL_F64, &A) ||
      coal_mat_create_coo(a.ctx, m, g * g * g, m, r, c, v, COAL_F64, &P) ||
      coal_spgemm_transpose_cuda(P, &Pt) || coal_mat_multiply(A, P, &AP)) {
    printf("setup failed: %s\n", coal_ctx_last_error(a.ctx));
    return 1;
  }
  free(r), free(c), free(v);
  printf("lap3d:%lld, %s\n", (long long)n, coal_ctx_device_name(a.ctx));
  const int only_ptap = argc > 2 && !strcmp(argv[2], "ptap");
  const int only_smoothed = argc > 2 && !strcmp(argv[2], "smoothed");
  a.type = COAL_PRODUCT_AB, a.A = A, a.B = A;
  if (!only_ptap && !only_smoothed) time_case(&a, "A*A");
  a.type = COAL_PRODUCT_PTAP, a.A = A, a.B = P;
  if (!only_smoothed) time_case(&a, "PtAP");
  double us = 0;
  a.B = P;
  if (coal_bench_time(a.ctx, run_transpose, &a, 2, 15, &us, NULL) == COAL_SUCCESS)
    printf("%-22s %9.1f us\n", "P^T (csr2csc)", us);
  { /* smoothed: S = P - (2/3) D^-1 A P, D = 6 (A*P contains P's pattern: A's diagonal) */
    coal_mat S = NULL, APh = NULL;
    double *sv = NULL;
    if (coal_mat_host(AP) == COAL_SUCCESS && coal_mat_convert(AP, COAL_F64, &APh) == COAL_SUCCESS &&
        (sv = malloc(sizeof(double) * (size_t)APh->nnz))) {
      for (int32_t i = 0; i < APh->nrows; i++)
        for (int32_t q = APh->rowptr[i]; q < APh->rowptr[i + 1]; q++) {
          const int64_t x = i % n, y = (i / n) % n, z = i / (n * n);
          const int32_t agg = (int32_t)(x / 3 + g * (y / 3 + g * (z / 3)));
          sv[q] =
              (APh->colind[q] == agg ? 1.0 : 0.0) - (2.0 / 3.0) / 6.0 * ((double *)APh->values)[q];
        }
      if (coal_mat_set_values(APh, sv) == COAL_SUCCESS) S = APh, APh = NULL;
    }
    free(sv);
    coal_mat_destroy(&APh);
    if (!S) {
      printf("smoothed P failed: %s\n", coal_ctx_last_error(a.ctx));
      return 1;
    }
    a.type = COAL_PRODUCT_PTAP, a.A = A, a.B = S;
    time_case(&a, "PtAP smoothed");
    coal_mat_destroy(&S);
  }
  if (only_smoothed) goto done;
  a.type = COAL_PRODUCT_AB, a.A = A, a.B = P;
  time_case(&a, "A*P");
  a.A = Pt, a.B = AP;
  time_case(&a, "P^T*(AP)");
done:
  coal_mat_destroy(&A), coal_mat_destroy(&P), coal_mat_destroy(&Pt), coal_mat_destroy(&AP);
  coal_ctx_destroy(&a.ctx);
  return 0;
}
