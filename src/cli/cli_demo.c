/* `coalesce demo`: the main job of the README with no arguments. Until the solvers land it is
 * one sparse matrix-vector product on the 3-D 7-point Laplacian with the auto-selected kernel
 * on the best backend, checked against a plain host CSR loop and timed. */
#include "../../kernels/bench.h"
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEMO_N_GPU  128
#define DEMO_N_HOST 48
#define DEMO_WARMUP 10
#define DEMO_REPS   100
#define DEMO_SEED   2024

typedef struct {
  coal_ctx ctx;
  coal_mat A;
  coal_bvec x, y;
  void *xh;
  double *xd, *yd, *ref;
} demo_state;

static void demo_free(demo_state *s) {
  coal_bvec_destroy(&s->x);
  coal_bvec_destroy(&s->y);
  coal_mat_destroy(&s->A);
  coal_ctx_destroy(&s->ctx);
  free(s->xh), free(s->xd), free(s->yd), free(s->ref);
}

static int demo_run(demo_state *s, const cli_common *c, int64_t n, int auto_note) {
  coal_ctx ctx = s->ctx;
  coal_status st;
  int cuda = coal_ctx_backend(ctx) == COAL_BACKEND_CUDA;
  if (n <= 0) n = cuda ? DEMO_N_GPU : DEMO_N_HOST;

  printf("coalesce demo: y = A*x with the 3-D Laplacian (one SpMV; the solvers are not in this "
         "version yet)\n");
  if (auto_note)
    printf("  no GPU available: running on the host backend with N = %lld (N = %d on a GPU)\n",
           (long long)n, DEMO_N_GPU);

  if ((st = coal_gen_laplace3d(ctx, n, n, n, 7, c->dtype, &s->A)))
    return cli_fail(ctx, st, "generating the %lld^3 Laplacian", (long long)n);
  int64_t rows, cols, nnz;
  coal_mat_size(s->A, &rows, &cols, &nnz);

  if ((st = coal_bvec_create(ctx, cols, 1, c->dtype, COAL_COL_MAJOR, 0, &s->x)) ||
      (st = coal_bvec_create(ctx, rows, 1, c->dtype, COAL_COL_MAJOR, 0, &s->y)))
    return cli_fail(ctx, st, "allocating x and y");
  s->xh = cli_random_vector(cols, c->dtype, DEMO_SEED);
  s->xd = malloc(sizeof(double) * (size_t)(cols + 1));
  s->yd = malloc(sizeof(double) * (size_t)(rows + 1));
  s->ref = malloc(sizeof(double) * (size_t)(rows + 1));
  if (!s->xh || !s->xd || !s->yd || !s->ref) return cli_fail(NULL, COAL_ERR_MEMORY, "demo vectors");
  for (int64_t i = 0; i < cols; i++)
    s->xd[i] = c->dtype == COAL_F64 ? ((double *)s->xh)[i] : ((float *)s->xh)[i];
  if ((st = coal_bvec_set_host(s->x, s->xh, COAL_COL_MAJOR, 0)))
    return cli_fail(ctx, st, "copying x to the %s backend",
                    coal_backend_name(coal_ctx_backend(ctx)));

  /* one product with the auto-selected kernel into a NaN-poisoned y, then the check */
  coal_spmv_kernel k = coal_spmv_select(s->A);
  if ((st = coal_bvec_set_value(s->y, NAN))) return cli_fail(ctx, st, "initializing y");
  if ((st = coal_spmv(s->A, COAL_SPMV_AUTO, 1.0, s->x, 0.0, s->y)))
    return cli_fail(ctx, st, "SpMV with kernel %s", coal_spmv_kernel_name(k));
  if ((st = coal_ctx_sync(ctx)) || (st = cli_bvec_get(s->y, s->yd)))
    return cli_fail(ctx, st, "copying y back");
  cli_csr_reference(s->A, s->xd, s->ref);
  double err = cli_rel_err(s->yd, s->ref, rows);
  double tol = cli_tolerance(c->dtype);

  cli_spmv_arg arg = {s->A, k, coal_bvec_data(s->x), coal_bvec_data(s->y)};
  double med = 0, mn = 0;
  if ((st = coal_bench_time(ctx, cli_spmv_run, &arg, DEMO_WARMUP, DEMO_REPS, &med, &mn)))
    return cli_fail(ctx, st, "timing SpMV with kernel %s", coal_spmv_kernel_name(k));
  double floor_b = cli_byte_floor(rows, cols, nnz, c->dtype);

  printf("  %-10s 3-D 7-point Laplacian, %lld^3 grid: %lld rows, %lld nonzeros, %s\n", "problem",
         (long long)n, (long long)rows, (long long)nnz, cli_dtype_name(c->dtype));
  printf("  %-10s %s (%s)\n", "backend", coal_backend_name(coal_ctx_backend(ctx)),
         coal_ctx_device_name(ctx));
  printf("  %-10s %s (picked by coal_spmv_select)\n", "kernel", coal_spmv_kernel_name(k));
  printf("  %-10s %.2f us per SpMV (median of %d after %d warm-up runs; min %.2f us)\n", "time",
         med, DEMO_REPS, DEMO_WARMUP, mn);
  printf("  %-10s %.2f GB/s effective over the byte floor of %.2f MB\n", "bandwidth",
         med > 0 ? floor_b / (med * 1e3) : 0.0, floor_b / 1e6);
  int ok = err < tol;
  printf("  %-10s relative error %.2e against the host CSR product (limit %.0e): %s\n", "check",
         err, tol, ok ? "ok" : "FAILED");
  if (!ok) {
    fprintf(stderr,
            "coalesce demo: the %s result differs from the host CSR product (relative "
            "error %.3e >= %.0e)\n",
            coal_spmv_kernel_name(k), err, tol);
    return CLI_FAIL;
  }
  return CLI_OK;
}

int cli_demo(int argc, char **argv) {
  cli_common c = {COAL_BACKEND_AUTO, COAL_F64};
  int64_t n = 0;
  for (int i = 1; i < argc; i++) {
    const char *v = NULL;
    int r = cli_parse_common(argc, argv, &i, &c);
    if (r < 0) return CLI_USAGE;
    if (r > 0) continue;
    if ((r = cli_opt_value(argc, argv, &i, "--n", &v)) != 0) {
      if (r < 0) return CLI_USAGE;
      if (cli_parse_i64(v, &n) || n < 1 || n > 1290)
        return cli_usage_error("--n: '%s' is not an integer in 1..1290", v);
      continue;
    }
    return cli_usage_error("demo: unexpected argument '%s'", argv[i]);
  }
  demo_state s;
  memset(&s, 0, sizeof s);
  if (cli_ctx_create(c.backend, &s.ctx) != CLI_OK) return CLI_FAIL;
  /* say so when auto fell back to the host because there is no GPU */
  int auto_note = c.backend == COAL_BACKEND_AUTO && coal_ctx_backend(s.ctx) == COAL_BACKEND_HOST &&
                  !coal_cuda_available();
  int rc = demo_run(&s, &c, n, auto_note);
  demo_free(&s);
  return rc;
}
