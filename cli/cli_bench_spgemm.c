/* `coalesce bench spgemm`: TileSpGEMM against cuSPARSE SpGEMM on a list of matrices.
 *
 * Cases per matrix: A*A (square A), A*A^T, and on 3-D Laplacian specs (lap3d:N, lap3d27:N)
 * P^T A P with piecewise-constant aggregates of 3 x 3 x 3 nodes and with the smoothed
 * prolongator (I - w D^-1 A) P, w = 2/3. Each product is made once on the benchmark context and
 * checked against the host twin (structure exact, values 1e-13 relative in fp64), then timed
 * with coal_bench_time (median; CUDA events on the GPU):
 *   ours      coal_spgemm_create + destroy of the product object and of C: symbolic, numeric,
 *             every allocation included (AUTO: the row-wise product, whose C stays on the GPU
 *             as a device-only matrix);
 *   numeric   coal_spgemm_numeric on a kept object (values of C recomputed);
 *   cusparse  cuSPARSE generic SpGEMM as a user calls it (descriptors, workEstimation,
 *             compute, allocations, copy, buffers freed; C stays on the GPU), checked once;
 *   reuse     cuSPARSE's cusparseSpGEMMreuse_compute on a structure made once.
 * For P^T A P, cuSPARSE runs the two products A*P and P^T*(AP) with P^T and AP given (their
 * making is not timed); ours is the whole product (on the GPU the fused one, which forms
 * neither P^T nor A*P, kernels/cuda/spgemm_ptap.cu).
 * GFLOP/s count 2 flops per intermediate product. Memory: ours, the product object's peak
 * (tile formats, C's tile structure, workspaces; excluding C); cuSPARSE, its two external
 * buffers (excluding C); both also as a ratio to C's CSR size. */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define WARMUP 2
#define MB     (1024.0 * 1024.0)

static const char *const large_specs[3] = {"lap3d:128", "lap3d27:64", "powerlaw:1048576:12"};
static const char col_names[] =
    "matrix,case,dtype,nrows,ncols,nnz_c,products,check,ours_ms,ours_gflops,tile_ms,tile_check,"
    "numeric_ms,"
    "cusparse_ms,cusparse_gflops,reuse_ms,speedup,numeric_speedup,temp_mb,c_mb,temp_over_c,"
    "cusparse_temp_mb,cusparse_check";

typedef struct {
  cli_bench_opts o;
  coal_ctx ctx, hctx;
  int cuda, failed;
  FILE *csv;
} sg_run;

typedef struct {
  coal_product_type type;
  coal_mat A, B;
  coal_spgemm_algo algo;
} full_arg;

static coal_status run_full(void *p) {
  full_arg *a = p;
  coal_spgemm prod = NULL;
  coal_mat C = NULL;
  coal_status st = coal_spgemm_create_algo(a->type, a->A, a->B, a->algo, &prod, &C);
  coal_spgemm_destroy(&prod);
  coal_mat_destroy(&C);
  return st;
}
static coal_status run_numeric(void *p) { return coal_spgemm_numeric((coal_spgemm)p); }

typedef struct {
  coal_cusparse_spgemm *h[2];
  int n, reuse;
} cusp_arg;

static coal_status run_cusp(void *p) {
  cusp_arg *a = p;
  for (int i = 0; i < a->n; i++)
    CLI_CALL(a->reuse ? coal_cusparse_spgemm_reuse_compute(a->h[i])
                      : coal_cusparse_spgemm_run(a->h[i]));
  return COAL_SUCCESS;
}

/* max |C - R| / max |R| with equal structure, else +inf. */
static double mat_err(coal_mat C, coal_mat R) {
  cli_csr hc, hr;
  if (!C || !R || cli_csr_get(C, &hc) != COAL_SUCCESS || cli_csr_get(R, &hr) != COAL_SUCCESS ||
      hc.nrows != hr.nrows || hc.ncols != hr.ncols || hc.nnz != hr.nnz ||
      memcmp(hc.rowptr, hr.rowptr, sizeof(int32_t) * ((size_t)hr.nrows + 1)) ||
      memcmp(hc.colind, hr.colind, sizeof(int32_t) * (size_t)hr.nnz))
    return INFINITY;
  double num = 0, den = 0;
  for (int64_t p = 0; p < hr.nnz; p++) {
    double c = cli_csr_value(&hc, p);
    double r = cli_csr_value(&hr, p);
    if (isnan(c) != isnan(r)) return INFINITY;
    if (fabs(c - r) > num) num = fabs(c - r);
    if (fabs(r) > den) den = fabs(r);
  }
  return den > 0 ? num / den : num;
}

/* A copy of host matrix H on ctx. */
static coal_status copy_to(coal_mat H, coal_ctx ctx, coal_mat *M) {
  cli_csr h;
  CLI_CALL(cli_csr_get(H, &h));
  int64_t *rp = malloc(sizeof(int64_t) * ((size_t)h.nrows + 1));
  if (!rp) return COAL_ERR_MEMORY;
  for (int64_t i = 0; i <= h.nrows; i++) rp[i] = h.rowptr[i];
  coal_status st = coal_mat_create_csr(ctx, h.nrows, h.ncols, rp, h.colind, h.values, h.dtype, M);
  free(rp);
  return st;
}

/* Aggregation P (3 x 3 x 3 nodes per aggregate) on an n^3 grid, and its smoothed version. */
static coal_status prolongators(coal_mat hA, int64_t n, coal_mat *P, coal_mat *S) {
  coal_ctx ctx = coal_mat_ctx(hA);
  cli_csr A;
  CLI_CALL(cli_csr_get(hA, &A));
  const int64_t m = n * n * n, a = (n + 2) / 3;
  int32_t *r = malloc(sizeof(int32_t) * (size_t)(m + A.nnz + 1));
  int32_t *c = malloc(sizeof(int32_t) * (size_t)(m + A.nnz + 1));
  double *v = malloc(sizeof(double) * (size_t)(m + A.nnz + 1));
  coal_status st = COAL_ERR_MEMORY;
  coal_mat M = NULL;
  if (!r || !c || !v) goto done;
  for (int64_t i = 0; i < m; i++) {
    const int64_t x = i % n, y = (i / n) % n, z = i / (n * n);
    r[i] = (int32_t)i, c[i] = (int32_t)(x / 3 + a * (y / 3 + a * (z / 3))), v[i] = 1.0;
  }
  if ((st = coal_mat_create_coo(ctx, m, a * a * a, m, r, c, v, A.dtype, P))) goto done;
  /* M = I - (2/3) D^-1 A */
  int64_t w = 0;
  for (int32_t i = 0; i < (int32_t)A.nrows; i++) {
    double d = 1;
    for (int32_t p = A.rowptr[i]; p < A.rowptr[i + 1]; p++)
      if (A.colind[p] == i) d = cli_csr_value(&A, p);
    r[w] = i, c[w] = i, v[w++] = 1.0;
    for (int32_t p = A.rowptr[i]; p < A.rowptr[i + 1]; p++) {
      double x = cli_csr_value(&A, p);
      r[w] = i, c[w] = A.colind[p], v[w++] = -(2.0 / 3.0) * x / d;
    }
  }
  if ((st = coal_mat_create_coo(ctx, A.nrows, A.ncols, w, r, c, v, A.dtype, &M))) goto done;
  st = coal_mat_multiply(M, *P, S);
done:
  coal_mat_destroy(&M);
  free(r), free(c), free(v);
  return st;
}

/* One case: reference, check, timings, output. hA/hB on the host context, dA/dB on the
 * benchmark context. */
static void bench_case(sg_run *R, const char *mname, const char *cname, coal_product_type type,
                       coal_mat hA, coal_mat hB, coal_mat dA, coal_mat dB) {
  const cli_bench_opts *o = &R->o;
  coal_spgemm href = NULL, prod = NULL;
  coal_mat Ref = NULL, C = NULL, CC = NULL, cPt = NULL, cAP = NULL;
  coal_spgemm_stats st;
  memset(&st, 0, sizeof st);
  cusp_arg ca;
  memset(&ca, 0, sizeof ca);
  double ours = NAN, num = NAN, cus = NAN, reuse = NAN, err = INFINITY, cerr = NAN;
  double ctemp = NAN, tile = NAN, terr = NAN;
  coal_status s;
  /* the reference: Gustavson on the host (the tiled host twin is checked by the tests) */
  if ((s = coal_spgemm_create_algo(type, hA, hB, COAL_SPGEMM_ROWS, &href, &Ref))) {
    if (s == COAL_ERR_OVERFLOW) { /* beyond 32-bit CSR offsets on every backend: a skip */
      printf("%-24s %-14s skipped: the product has more than 2^31-1 nonzeros\n", mname, cname);
      if (R->csv) {
        cli_csv_str(R->csv, mname), fputc(',', R->csv), cli_csv_str(R->csv, cname);
        fprintf(R->csv, ",%s,,,,,too large", cli_dtype_name(o->c.dtype));
        for (int i = 0; i < 15; i++) fputc(',', R->csv);
        fputc('\n', R->csv);
      }
      return;
    }
    cli_fail(R->hctx, s, "%s %s: host reference", mname, cname);
    goto fail;
  }
  if ((s = coal_spgemm_create(type, dA, dB, &prod, &C))) {
    cli_fail(R->ctx, s, "%s %s: product", mname, cname);
    goto fail;
  }
  err = mat_err(C, Ref);
  if ((s = coal_spgemm_get_stats(prod, &st))) {
    cli_fail(R->ctx, s, "%s %s: stats", mname, cname);
    goto fail;
  }
  full_arg fa = {type, dA, dB, COAL_SPGEMM_AUTO};
  if ((s = coal_bench_time(R->ctx, run_full, &fa, WARMUP, (int)o->reps, &ours, NULL)) ||
      (s = coal_bench_time(R->ctx, run_numeric, prod, WARMUP, (int)o->reps, &num, NULL))) {
    cli_fail(R->ctx, s, "%s %s: timing", mname, cname);
    goto fail;
  }
  /* the tiled product (TileSpGEMM) as well, checked, when its tile layout fits */
  {
    coal_spgemm tp = NULL;
    coal_mat TC = NULL;
    if (coal_spgemm_create_algo(type, dA, dB, COAL_SPGEMM_TILE, &tp, &TC) == COAL_SUCCESS) {
      terr = mat_err(TC, Ref);
      full_arg ft = {type, dA, dB, COAL_SPGEMM_TILE};
      if (coal_bench_time(R->ctx, run_full, &ft, WARMUP, (int)o->reps, &tile, NULL)) tile = NAN;
    }
    coal_spgemm_destroy(&tp);
    coal_mat_destroy(&TC);
  }
  if (R->cuda) {
    coal_mat X = dA, Y = dB;
    if (type == COAL_PRODUCT_PTAP) { /* A*P, then P^T (AP) on given P^T and AP */
      coal_mat hPt = NULL;
      if ((s = coal_mat_transpose(hB, &hPt)) == COAL_SUCCESS) s = copy_to(hPt, R->ctx, &cPt);
      coal_mat_destroy(&hPt);
      if (s == COAL_SUCCESS) s = coal_mat_multiply(dA, dB, &cAP);
      if (s == COAL_SUCCESS) s = coal_cusparse_spgemm_create(dA, dB, &ca.h[ca.n++]);
      X = cPt, Y = cAP;
    } else {
      s = COAL_SUCCESS;
    }
    if (s == COAL_SUCCESS) s = coal_cusparse_spgemm_create(X, Y, &ca.h[ca.n++]);
    if (s == COAL_SUCCESS) s = run_cusp(&ca);
    size_t peak = 0;
    if (s == COAL_SUCCESS) s = coal_cusparse_spgemm_result(ca.h[ca.n - 1], &CC, &peak);
    if (s == COAL_SUCCESS) {
      cerr = mat_err(CC, Ref);
      ctemp = ((double)peak - (double)st.c_bytes) / MB;
      s = coal_bench_time(R->ctx, run_cusp, &ca, WARMUP, (int)o->reps, &cus, NULL);
    }
    for (int i = 0; i < ca.n && s == COAL_SUCCESS; i++)
      s = coal_cusparse_spgemm_reuse_setup(ca.h[i]);
    ca.reuse = 1;
    if (s == COAL_SUCCESS)
      s = coal_bench_time(R->ctx, run_cusp, &ca, WARMUP, (int)o->reps, &reuse, NULL);
    if (s) {
      cli_fail(R->ctx, s, "%s %s: cuSPARSE", mname, cname);
      R->failed = 1;
    }
  }
  goto report;
fail:
  R->failed = 1;
report:;
  const double tol = o->c.dtype == COAL_F64 ? 1e-13 : 1e-6;
  const int ok = err <= tol;
  if (!ok) R->failed = 1;
  const double gf = 2.0 * (double)st.products * 1e-6; /* GFLOP per ms */
  const double cmb = (double)st.c_bytes / MB, tmb = (double)st.temp_bytes / MB;
  char c1[32], c2[32], c3[32], c4[32], c5[32], c6[32], c7[32], c8[32];
  cli_fmt_num(c1, sizeof c1, ours * 1e-3, "%.3f");
  cli_fmt_num(c8, sizeof c8, tile * 1e-3, "%.3f");
  cli_fmt_num(c2, sizeof c2, gf / (ours * 1e-3), "%.1f");
  cli_fmt_num(c3, sizeof c3, num * 1e-3, "%.3f");
  cli_fmt_num(c4, sizeof c4, cus * 1e-3, "%.3f");
  cli_fmt_num(c5, sizeof c5, reuse * 1e-3, "%.3f");
  cli_fmt_num(c6, sizeof c6, cus / ours, "%.2fx");
  cli_fmt_num(c7, sizeof c7, ctemp, "%.1f");
  const int tok = isnan(terr) || terr <= tol; /* NaN: the tiled product did not run */
  if (!tok) R->failed = 1;
  printf("%-24s %-14s %11lld %8s %8s %8s %8s %8s %8s %7s %8.1f %6.2f %9s %s%s\n", mname, cname,
         (long long)st.nnz_c, c1, c2, c8, c3, c4, c5, c6, tmb, cmb > 0 ? tmb / cmb : 0.0, c7,
         ok ? "ok" : "CHECK FAILED", tok ? "" : " (TILE CHECK FAILED)");
  if (R->cuda && !(cerr <= 1e-12))
    printf("    note: cuSPARSE result differs from the host twin (%.3g)\n", cerr);
  if (R->csv) {
    FILE *f = R->csv;
    cli_csv_str(f, mname), fputc(',', f), cli_csv_str(f, cname);
    int64_t cm = 0, cn = 0;
    if (C) coal_mat_size(C, &cm, &cn, NULL);
    fprintf(f, ",%s,%lld,%lld,%lld,%lld,%s", cli_dtype_name(o->c.dtype), (long long)cm,
            (long long)cn, (long long)st.nnz_c, (long long)st.products, ok ? "ok" : "failed");
    fputc(',', f), cli_put_num(f, ours * 1e-3, "");
    fputc(',', f), cli_put_num(f, gf / (ours * 1e-3), "");
    fputc(',', f), cli_put_num(f, tile * 1e-3, "");
    fprintf(f, ",%s", isnan(terr) ? "not run" : tok ? "ok" : "failed");
    const double vals[10] = {
        num * 1e-3, cus * 1e-3, gf / (cus * 1e-3),         reuse * 1e-3, cus / ours, reuse / num,
        tmb,        cmb,        cmb > 0 ? tmb / cmb : NAN, ctemp};
    for (int i = 0; i < 10; i++) fputc(',', f), cli_put_num(f, vals[i], "");
    fprintf(f, ",%s\n", !R->cuda ? "" : cerr <= 1e-12 ? "ok" : "differs");
  }
  for (int i = 0; i < ca.n; i++) coal_cusparse_spgemm_destroy(ca.h[i]);
  coal_spgemm_destroy(&href), coal_spgemm_destroy(&prod);
  coal_mat_destroy(&Ref), coal_mat_destroy(&C), coal_mat_destroy(&CC);
  coal_mat_destroy(&cPt), coal_mat_destroy(&cAP);
}

static void bench_matrix(sg_run *R, int idx) {
  const cli_spec *sp = &R->o.list.specs[idx];
  coal_dtype dt = R->o.c.dtype;
  coal_mat hA = NULL, hT = NULL, dA = NULL, dT = NULL, hP = NULL, hS = NULL, dP = NULL, dS = NULL;
  coal_status s = cli_spec_load(R->hctx, sp, dt, &hA);
  if (s) {
    if (!(cli_matrix_list_from_dir(&R->o.list, idx) && s == COAL_ERR_UNSUPPORTED)) {
      cli_fail(R->hctx, s, "%s", sp->name);
      R->failed = 1;
    }
    return;
  }
  if ((s = copy_to(hA, R->ctx, &dA)) || (s = coal_mat_transpose(hA, &hT)) ||
      (s = copy_to(hT, R->ctx, &dT))) {
    cli_fail(R->ctx, s, "%s", sp->name);
    R->failed = 1;
    goto done;
  }
  int64_t am = 0, an = 0;
  coal_mat_size(hA, &am, &an, NULL);
  if (am == an) bench_case(R, sp->name, "A*A", COAL_PRODUCT_AB, hA, hA, dA, dA);
  bench_case(R, sp->name, "A*A^T", COAL_PRODUCT_AB, hA, hT, dA, dT);
  if (sp->kind == CLI_SPEC_LAP3D || sp->kind == CLI_SPEC_LAP3D27) {
    if ((s = prolongators(hA, sp->n, &hP, &hS)) || (s = copy_to(hP, R->ctx, &dP)) ||
        (s = copy_to(hS, R->ctx, &dS))) {
      cli_fail(R->hctx, s, "%s: prolongators", sp->name);
      R->failed = 1;
      goto done;
    }
    bench_case(R, sp->name, "PtAP", COAL_PRODUCT_PTAP, hA, hP, dA, dP);
    bench_case(R, sp->name, "PtAP smoothed", COAL_PRODUCT_PTAP, hA, hS, dA, dS);
  }
done:
  coal_mat_destroy(&hA), coal_mat_destroy(&hT), coal_mat_destroy(&dA), coal_mat_destroy(&dT);
  coal_mat_destroy(&hP), coal_mat_destroy(&hS), coal_mat_destroy(&dP), coal_mat_destroy(&dS);
}

int cli_bench_spgemm(int argc, char **argv) {
  sg_run R;
  memset(&R, 0, sizeof R);
  cli_bench_opts *o = &R.o;
  o->c.backend = COAL_BACKEND_AUTO, o->c.dtype = COAL_F64, o->reps = 10;
  int rc = CLI_USAGE;
  if (!(o->list.specs = calloc((size_t)argc + 3, sizeof(cli_spec))))
    return cli_fail(NULL, COAL_ERR_MEMORY, "bench spgemm");
  for (int i = 1; i < argc; i++) {
    int r = cli_bench_opt(argc, argv, &i, o);
    if (r < 0) goto out;
    if (r == 0) {
      cli_usage_error("bench spgemm: unknown option '%s'", argv[i]);
      goto out;
    }
  }
  if (o->json_path) {
    cli_usage_error("bench spgemm: --json is not supported (use --csv)");
    goto out;
  }
  if (o->list.n == 0 && !o->dir && !o->large) {
    cli_usage_error("bench spgemm: no matrices (give SPECs, --matrices DIR or --large)");
    goto out;
  }
  rc = CLI_FAIL;
  /* --large: the targets (lap3d:128, lap3d27:64) and a power-law graph */
  if (cli_matrix_list_finish(&o->list, o->dir, 0) != CLI_OK) goto out;
  for (int p = 0; o->large && p < 3; p++)
    if (cli_spec_parse(large_specs[p], &o->list.specs[o->list.n++]) != CLI_OK) goto out;
  if (cli_ctx_create(o->c.backend, &R.ctx) != CLI_OK ||
      cli_ctx_create(COAL_BACKEND_HOST, &R.hctx) != CLI_OK ||
      (o->csv_path && !(R.csv = cli_open_output(o->csv_path))))
    goto out;
  R.cuda = coal_ctx_backend(R.ctx) == COAL_BACKEND_CUDA;
  printf("coalesce bench spgemm: %d matri%s, backend %s (%s), %s, median of %lld after %d "
         "warm-up runs%s\n",
         o->list.n, o->list.n == 1 ? "x" : "ces", coal_backend_name(coal_ctx_backend(R.ctx)),
         coal_ctx_device_name(R.ctx), cli_dtype_name(o->c.dtype), (long long)o->reps, WARMUP,
         R.cuda ? "" : " (host backend: no cuSPARSE)");
  printf("%-24s %-14s %11s %8s %8s %8s %8s %8s %8s %7s %8s %6s %9s %s\n", "matrix", "case",
         "nnz(C)", "ours ms", "GFLOP/s", "tile ms", "numeric", "cusp ms", "reuse", "speedup",
         "temp MB", "temp/C", "cusp tmp", "check");
  if (R.csv) fprintf(R.csv, "%s\n", col_names);
  for (int i = 0; i < o->list.n; i++) bench_matrix(&R, i);
  rc = R.failed ? CLI_FAIL : CLI_OK;
  if (R.failed) fprintf(stderr, "coalesce bench spgemm: some products failed (see above)\n");
out:
  if (R.csv && fclose(R.csv)) rc = CLI_FAIL;
  coal_ctx_destroy(&R.ctx), coal_ctx_destroy(&R.hctx);
  cli_matrix_list_free(&o->list);
  return rc;
}
