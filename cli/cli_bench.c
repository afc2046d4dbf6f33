/* `coalesce bench spmv`: every SpMV kernel of the library, and cuSPARSE ALG1/ALG2 on the cuda
 * backend, on a list of matrices. Each kernel runs once into a NaN-poisoned y and is checked
 * against the host CSR product of a separate host copy of the matrix, then timed with
 * coal_bench_time (median). See bench/README.md for the columns. */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_WARMUP 10
#define BENCH_SEED   7
#define COPY_BYTES   ((size_t)256 << 20)

enum {
  K_VECTOR,
  K_MERGE,
  K_FL,
  K_FLT,
  K_CUSP1,
  K_CUSP2,
  K_FL_SORTED,
  K_FLT_SORTED,
  K_AUTO,
  K_COUNT
};
static const char *const kname[K_COUNT] = {
    "csr-vector",    "csr-merge",        "fastload",           "fastload-t", "cusparse-alg1",
    "cusparse-alg2", "fastload(sorted)", "fastload-t(sorted)", "auto"};
static const coal_spmv_kernel kkernel[K_COUNT] = {
    COAL_SPMV_CSR_VECTOR, COAL_SPMV_CSR_MERGE,  COAL_SPMV_FASTLOAD,
    COAL_SPMV_FASTLOAD_T, COAL_SPMV_AUTO,       COAL_SPMV_AUTO,
    COAL_SPMV_FASTLOAD,   COAL_SPMV_FASTLOAD_T, COAL_SPMV_AUTO};

typedef struct {
  int ran;   /* checked and timed */
  int error; /* a library call failed (message printed) */
  int ok;    /* check passed */
  double err, us, us_min;
} kres;

typedef struct {
  cli_bench_opts o;
  int64_t height;
  coal_ctx ctx, hctx; /* benchmark context, host context of the reference */
  double copy_gbps;   /* NAN on host */
  FILE *csv, *json;
  int json_first;
  int failed;
} bench_run;

typedef struct {
  coal_cusparse_spmv *h;
} cusp_arg;

static coal_status cusp_run(void *p) {
  return coal_cusparse_spmv_run(((cusp_arg *)p)->h, 1.0, 0.0);
}

/* ---- one kernel -------------------------------------------------------------------------- */

/* Poisons y with NaN, runs fn once, checks y against ref, then times fn. */
static void measure(bench_run *R, const char *mname, int k, coal_bench_fn fn, void *arg,
                    coal_bvec y, const double *ref, double *ybuf, kres *r) {
  coal_ctx ctx = R->ctx;
  int64_t n = 0;
  coal_bvec_size(y, &n, NULL);
  coal_status st;
  memset(r, 0, sizeof *r);
  r->err = r->us = r->us_min = NAN;
  if ((st = coal_bvec_set_value(y, NAN)) || (st = fn(arg)) || (st = coal_ctx_sync(ctx)) ||
      (st = cli_bvec_get(y, ybuf))) {
    cli_fail(ctx, st, "%s: %s", mname, kname[k]);
    r->error = 1;
    return;
  }
  r->err = cli_rel_err(ybuf, ref, n);
  r->ok = r->err < cli_tolerance(R->o.c.dtype);
  if ((st = coal_bench_time(ctx, fn, arg, BENCH_WARMUP, (int)R->o.reps, &r->us, &r->us_min))) {
    cli_fail(ctx, st, "%s: timing %s", mname, kname[k]);
    r->error = 1;
    return;
  }
  r->ran = 1;
}

/* ---- reporting --------------------------------------------------------------------------- */

typedef struct {
  const cli_spec *sp;
  int64_t rows, cols, nnz;
  int sym;
  double floor_b;
  coal_fastload_stats fs[2]; /* scatter, gather */
  int gpu_build;             /* fs[].build_seconds: GPU build (cuda), else host build */
  kres res[K_COUNT];
  int present[K_COUNT];
  coal_spmv_kernel picked; /* what coal_spmv_select chose (the auto row) */
} mat_report;

/* Row label: the auto row names the kernel it picked. */
static const char *klabel(const mat_report *m, int k, char *buf, size_t n) {
  if (k != K_AUTO) return kname[k];
  snprintf(buf, n, "auto=%s", coal_spmv_kernel_name(m->picked));
  return buf;
}

static double best_cusparse(const mat_report *m) {
  double b = NAN;
  for (int k = K_CUSP1; k <= K_CUSP2; k++)
    if (m->present[k] && m->res[k].ran && m->res[k].ok && !(m->res[k].us >= b)) b = m->res[k].us;
  return b;
}

static void report(bench_run *R, const mat_report *m) {
  char lb[48];
  double bc = best_cusparse(m);
  double build_ms[2] = {m->fs[0].build_seconds * 1e3, m->fs[1].build_seconds * 1e3};
  double per[2] = {build_ms[0] * 1e3 / bc, build_ms[1] * 1e3 / bc};
  char a[32], b[32], c2[32], d[32];

  printf("\n== %s: %lld x %lld, %lld nonzeros, %s%s, byte floor %.2f MB\n", m->sp->name,
         (long long)m->rows, (long long)m->cols, (long long)m->nnz, cli_dtype_name(R->o.c.dtype),
         m->sym ? ", symmetric" : "", m->floor_b / 1e6);
  cli_fmt_num(a, sizeof a, per[0], "%.1f");
  cli_fmt_num(b, sizeof b, per[1], "%.1f");
  printf("   FastLoad build on the %s (H=%lld): scatter %.3f ms (build/SpMV %s), gather %.3f ms "
         "(build/SpMV %s)\n",
         m->gpu_build ? "GPU" : "host", (long long)R->height, build_ms[0], a, build_ms[1], b);
  printf("   %-20s %10s %9s %7s %7s  %s\n", "kernel", "us", "GB/s", "%copy", "ratio", "check");
  int best = -1, best_sorted = -1;
  for (int k = 0; k < K_COUNT; k++) {
    if (!m->present[k]) continue;
    const kres *r = &m->res[k];
    if (r->error) {
      printf("   %-20s %10s %9s %7s %7s  ERROR\n", klabel(m, k, lb, sizeof lb), "-", "-", "-", "-");
      continue;
    }
    double gbps = m->floor_b / (r->us * 1e3);
    double pct = 100.0 * gbps / R->copy_gbps;
    double ratio = bc / r->us;
    cli_fmt_num(a, sizeof a, r->us, "%.2f");
    cli_fmt_num(b, sizeof b, gbps, "%.2f");
    cli_fmt_num(c2, sizeof c2, pct, "%.1f%%");
    cli_fmt_num(d, sizeof d, ratio, "%.2fx");
    printf("   %-20s %10s %9s %7s %7s  %s (%.1e)\n", klabel(m, k, lb, sizeof lb), a, b, c2, d,
           r->ok ? "ok" : "FAIL", r->err);
    if (!r->ok) continue;
    if (k <= K_FLT && (best < 0 || r->us < m->res[best].us)) best = k;
    if (k >= K_FL_SORTED && k <= K_FLT_SORTED &&
        (best_sorted < 0 || r->us < m->res[best_sorted].us))
      best_sorted = k;
  }
  printf("   summary %s: ", m->sp->name);
  if (best < 0)
    printf("no kernel of ours passed");
  else {
    printf("best %s %.2f us, %.2f GB/s", kname[best], m->res[best].us,
           m->floor_b / (m->res[best].us * 1e3));
    if (isfinite(bc))
      printf(", %.2fx the best cuSPARSE (%.2f us)", bc / m->res[best].us, bc);
    else
      printf(" (no cuSPARSE on the %s backend)", coal_backend_name(coal_ctx_backend(R->ctx)));
  }
  if (best_sorted >= 0) {
    printf("; sorted order: %s %.2f us", kname[best_sorted], m->res[best_sorted].us);
    if (isfinite(bc)) printf(", %.2fx", bc / m->res[best_sorted].us);
  }
  if (m->present[K_AUTO] && m->res[K_AUTO].ok) {
    printf("; %s %.2f us", klabel(m, K_AUTO, lb, sizeof lb), m->res[K_AUTO].us);
    if (isfinite(bc)) printf(", %.2fx", bc / m->res[K_AUTO].us);
  }
  printf("\n");

  const char *dev = coal_ctx_device_name(R->ctx);
  const char *backend = coal_backend_name(coal_ctx_backend(R->ctx));
  if (R->csv) {
    for (int k = 0; k < K_COUNT; k++) {
      if (!m->present[k]) continue;
      const kres *r = &m->res[k];
      double gbps = m->floor_b / (r->us * 1e3);
      FILE *f = R->csv;
      cli_csv_str(f, m->sp->name);
      fprintf(f, ",%lld,%lld,%lld,%s,%s,", (long long)m->rows, (long long)m->cols,
              (long long)m->nnz, cli_dtype_name(R->o.c.dtype), backend);
      cli_csv_str(f, dev);
      fprintf(f, ",%s,", klabel(m, k, lb, sizeof lb));
      cli_csv_num(f, r->us, "%.4f"), fputc(',', f);
      cli_csv_num(f, r->us_min, "%.4f"), fputc(',', f);
      cli_csv_num(f, gbps, "%.4f"), fputc(',', f);
      cli_csv_num(f, 100.0 * gbps / R->copy_gbps, "%.3f"), fputc(',', f);
      cli_csv_num(f, bc / r->us, "%.4f"), fputc(',', f);
      fprintf(f, "%s,", r->error ? "ERROR" : r->ok ? "ok" : "FAIL");
      cli_csv_num(f, r->err, "%.3e"), fputc(',', f);
      fprintf(f, "%.0f,", m->floor_b);
      cli_csv_num(f, R->copy_gbps, "%.3f"), fputc(',', f);
      fprintf(f, "%.4f,%.4f,", build_ms[0], build_ms[1]);
      cli_csv_num(f, per[0], "%.3f"), fputc(',', f);
      cli_csv_num(f, per[1], "%.3f"), fputc(',', f);
      fprintf(f, "%lld,%lld\n", (long long)R->height, (long long)R->o.reps);
    }
    fflush(R->csv);
  }
  if (R->json) {
    FILE *f = R->json;
    fprintf(f, "%s\n    {\"matrix\": ", R->json_first ? "" : ",");
    R->json_first = 0;
    cli_json_str(f, m->sp->name);
    fprintf(f, ", \"spec\": ");
    cli_json_str(f, m->sp->text);
    fprintf(f, ", \"rows\": %lld, \"cols\": %lld, \"nnz\": %lld, \"symmetric\": %s,",
            (long long)m->rows, (long long)m->cols, (long long)m->nnz, m->sym ? "true" : "false");
    fprintf(f, " \"floor_bytes\": %.0f, \"build_scatter_ms\": ", m->floor_b);
    cli_json_num(f, build_ms[0]);
    fprintf(f, ", \"build_gather_ms\": ");
    cli_json_num(f, build_ms[1]);
    fprintf(f, ", \"build_scatter_per_spmv\": ");
    cli_json_num(f, per[0]);
    fprintf(f, ", \"build_gather_per_spmv\": ");
    cli_json_num(f, per[1]);
    fprintf(f, ", \"best_cusparse_us\": ");
    cli_json_num(f, bc);
    fprintf(f, ",\n     \"kernels\": [");
    int first = 1;
    for (int k = 0; k < K_COUNT; k++) {
      if (!m->present[k]) continue;
      const kres *r = &m->res[k];
      double gbps = m->floor_b / (r->us * 1e3);
      fprintf(f, "%s\n       {\"kernel\": \"%s\", \"us\": ", first ? "" : ",",
              klabel(m, k, lb, sizeof lb));
      first = 0;
      cli_json_num(f, r->us);
      fprintf(f, ", \"us_min\": ");
      cli_json_num(f, r->us_min);
      fprintf(f, ", \"gbps\": ");
      cli_json_num(f, gbps);
      fprintf(f, ", \"pct_copy\": ");
      cli_json_num(f, 100.0 * gbps / R->copy_gbps);
      fprintf(f, ", \"ratio_vs_cusparse\": ");
      cli_json_num(f, bc / r->us);
      fprintf(f, ", \"check\": \"%s\", \"rel_err\": ", r->error ? "ERROR" : r->ok ? "ok" : "FAIL");
      cli_json_num(f, r->err);
      fputc('}', f);
    }
    fprintf(f, "]}");
    fflush(f);
  }
}

/* ---- one matrix -------------------------------------------------------------------------- */

typedef struct {
  coal_mat A, Ah, B, Bh;
  coal_bvec x, y, xh, yh;
  void *xv;
  double *ref, *ybuf;
} mat_state;

static void mat_state_free(mat_state *s) {
  coal_mat_destroy(&s->A), coal_mat_destroy(&s->Ah);
  coal_mat_destroy(&s->B), coal_mat_destroy(&s->Bh);
  coal_bvec_destroy(&s->x), coal_bvec_destroy(&s->y);
  coal_bvec_destroy(&s->xh), coal_bvec_destroy(&s->yh);
  free(s->xv), free(s->ref), free(s->ybuf);
}

/* Host CSR reference of M (host context) on xh into ref. */
static coal_status host_reference(mat_state *s, coal_mat M) {
  CLI_CALL(coal_spmv(M, COAL_SPMV_CSR_VECTOR, 1.0, s->xh, 0.0, s->yh));
  return cli_bvec_get(s->yh, s->ref);
}

/* Our kernels on M (benchmark context) for the slots first..last of kkernel. */
static void run_ours(bench_run *R, mat_state *s, mat_report *m, coal_mat M, int first, int last) {
  for (int k = first; k <= last; k++) {
    cli_spmv_arg arg = {M, kkernel[k], coal_bvec_data(s->x), coal_bvec_data(s->y)};
    measure(R, m->sp->name, k, cli_spmv_run, &arg, s->y, s->ref, s->ybuf, &m->res[k]);
    m->present[k] = 1;
  }
}

/* Runs every kernel on one matrix. A file found by --matrices that the library does not handle
 * (complex values) is skipped with a note instead of failing the run. */
static int bench_matrix(bench_run *R, const cli_spec *sp, int from_dir) {
  mat_state s;
  mat_report m;
  memset(&s, 0, sizeof s);
  memset(&m, 0, sizeof m);
  m.sp = sp;
  coal_dtype dt = R->o.c.dtype;
  coal_status st;
  int rc = CLI_FAIL;
  if ((st = cli_spec_load(R->ctx, sp, dt, &s.A))) {
    if (from_dir && st == COAL_ERR_UNSUPPORTED) {
      printf("\n== %s: skipped (%s)\n", sp->name, coal_ctx_last_error(R->ctx));
      rc = CLI_OK;
    } else {
      cli_fail(R->ctx, st, "cannot load '%s'", sp->text);
    }
    goto done;
  }
  if ((st = cli_spec_load(R->hctx, sp, dt, &s.Ah))) {
    cli_fail(R->hctx, st, "cannot load '%s' on the host", sp->text);
    goto done;
  }
  coal_mat_size(s.A, &m.rows, &m.cols, &m.nnz);
  m.floor_b = cli_byte_floor(m.rows, m.cols, m.nnz, dt);
  if ((st = coal_mat_is_symmetric(s.Ah, &m.sym))) {
    cli_fail(R->hctx, st, "%s: symmetry test", sp->name);
    goto done;
  }
  int64_t nmax = m.rows > m.cols ? m.rows : m.cols;
  s.xv = cli_random_vector(m.cols, dt, BENCH_SEED);
  s.ref = malloc(sizeof(double) * (size_t)(nmax + 1));
  s.ybuf = malloc(sizeof(double) * (size_t)(nmax + 1));
  if (!s.xv || !s.ref || !s.ybuf) {
    cli_fail(NULL, COAL_ERR_MEMORY, "%s: vectors", sp->name);
    goto done;
  }
  if ((st = coal_bvec_create(R->ctx, m.cols, 1, dt, COAL_COL_MAJOR, 0, &s.x)) ||
      (st = coal_bvec_create(R->ctx, m.rows, 1, dt, COAL_COL_MAJOR, 0, &s.y)) ||
      (st = coal_bvec_set_host(s.x, s.xv, COAL_COL_MAJOR, 0))) {
    cli_fail(R->ctx, st, "%s: vectors", sp->name);
    goto done;
  }
  if ((st = coal_bvec_create(R->hctx, m.cols, 1, dt, COAL_COL_MAJOR, 0, &s.xh)) ||
      (st = coal_bvec_create(R->hctx, m.rows, 1, dt, COAL_COL_MAJOR, 0, &s.yh)) ||
      (st = coal_bvec_set_host(s.xh, s.xv, COAL_COL_MAJOR, 0)) || (st = host_reference(&s, s.Ah))) {
    cli_fail(R->hctx, st, "%s: host reference", sp->name);
    goto done;
  }
  /* FastLoad formats first, so that their build time is measured on its own */
  if ((st = coal_mat_set_fastload_height(s.A, (int)R->height)) ||
      (st = coal_mat_fastload_stats(s.A, 0, &m.fs[0])) ||
      (st = coal_mat_fastload_stats(s.A, 1, &m.fs[1]))) {
    cli_fail(R->ctx, st, "%s: FastLoad build", sp->name);
    goto done;
  }
  if (coal_ctx_backend(R->ctx) == COAL_BACKEND_CUDA) { /* the device formats are built there */
    double ms[2];
    if ((st = coal_cuda_fastload_build_time(s.A, 0, &ms[0])) ||
        (st = coal_cuda_fastload_build_time(s.A, 1, &ms[1]))) {
      cli_fail(R->ctx, st, "%s: FastLoad build on the GPU", sp->name);
      goto done;
    }
    m.fs[0].build_seconds = ms[0] * 1e-3, m.fs[1].build_seconds = ms[1] * 1e-3;
    m.gpu_build = 1;
  }
  run_ours(R, &s, &m, s.A, K_VECTOR, K_FLT);
  m.picked = coal_spmv_select(s.A);
  run_ours(R, &s, &m, s.A, K_AUTO, K_AUTO);

  if (coal_ctx_backend(R->ctx) == COAL_BACKEND_CUDA) {
    for (int k = K_CUSP1; k <= K_CUSP2; k++) {
      cusp_arg ca = {NULL};
      m.present[k] = 1;
      st = coal_cusparse_spmv_create(s.A, k == K_CUSP1 ? 1 : 2, coal_bvec_data(s.x),
                                     coal_bvec_data(s.y), &ca.h);
      if (st) {
        cli_fail(R->ctx, st, "%s: %s", sp->name, kname[k]);
        m.res[k].error = 1;
        m.res[k].us = m.res[k].us_min = m.res[k].err = NAN;
        continue;
      }
      measure(R, sp->name, k, cusp_run, &ca, s.y, s.ref, s.ybuf, &m.res[k]);
      coal_cusparse_spmv_destroy(ca.h);
    }
  }

  /* Sorted order: B = P A P^T with P the gather format's lane order, so that B's sorted order
   * is the identity and the FastLoad kernels need no gather of x or scatter of y. */
  int sorted_failed = 0;
  if (m.rows == m.cols) {
    const int32_t *perm = NULL;
    coal_fastload_stats fs; /* builds B's formats before the timed runs */
    if ((st = coal_mat_fastload_order(s.A, 1, &perm)) || (st = coal_mat_permute(s.A, perm, &s.B)) ||
        (st = coal_mat_set_fastload_height(s.B, (int)R->height)) ||
        (st = coal_mat_fastload_stats(s.B, 0, &fs)) ||
        (st = coal_mat_fastload_stats(s.B, 1, &fs))) {
      cli_fail(R->ctx, st, "%s: sorted-order matrix", sp->name);
      sorted_failed = 1;
    } else if ((st = coal_mat_fastload_order(s.A, 1, &perm)) ||
               (st = coal_mat_permute(s.Ah, perm, &s.Bh)) || (st = host_reference(&s, s.Bh))) {
      cli_fail(R->hctx, st, "%s: sorted-order host reference", sp->name);
      sorted_failed = 1;
    } else {
      run_ours(R, &s, &m, s.B, K_FL_SORTED, K_FLT_SORTED);
    }
  }
  rc = sorted_failed ? CLI_FAIL : CLI_OK;
  for (int k = 0; k < K_COUNT; k++)
    if (m.present[k] && (m.res[k].error || !m.res[k].ok)) rc = CLI_FAIL;
  report(R, &m);
done:
  mat_state_free(&s);
  return rc;
}

/* ---- driver ------------------------------------------------------------------------------ */

static int bench_spmv(int argc, char **argv) {
  bench_run R;
  memset(&R, 0, sizeof R);
  cli_bench_opts *o = &R.o;
  o->c.backend = COAL_BACKEND_AUTO, o->c.dtype = COAL_F64, o->reps = 100;
  R.height = 8, R.json_first = 1, R.copy_gbps = NAN;
  int rc = CLI_USAGE;
  if (!(o->list.specs = calloc((size_t)argc + 3, sizeof(cli_spec))))
    return cli_fail(NULL, COAL_ERR_MEMORY, "bench");
  for (int i = 1; i < argc; i++) {
    const char *v = NULL;
    int r = cli_bench_opt(argc, argv, &i, o);
    if (r < 0) goto out;
    if (r > 0) continue;
    if ((r = cli_opt_value(argc, argv, &i, "--height", &v))) {
      if (r < 0) goto out;
      if (cli_parse_i64(v, &R.height) || R.height < 1 || R.height > 255) {
        cli_usage_error("--height: '%s' is not an integer in 1..255", v);
        goto out;
      }
    } else {
      cli_usage_error("bench spmv: unknown option '%s'", argv[i]);
      goto out;
    }
  }
  if (o->list.n == 0 && !o->dir && !o->large) {
    cli_usage_error("bench spmv: no matrices (give SPECs, --matrices DIR or --large)");
    goto out;
  }
  rc = CLI_FAIL;
  if (cli_matrix_list_finish(&o->list, o->dir, o->large) != CLI_OK ||
      cli_ctx_create(o->c.backend, &R.ctx) != CLI_OK ||
      cli_ctx_create(COAL_BACKEND_HOST, &R.hctx) != CLI_OK ||
      (o->csv_path && !(R.csv = cli_open_output(o->csv_path))) ||
      (o->json_path && !(R.json = cli_open_output(o->json_path))))
    goto out;
  int cuda = coal_ctx_backend(R.ctx) == COAL_BACKEND_CUDA, ns = o->list.n;
  coal_status st;
  if (cuda && (st = coal_bench_copy_bandwidth(R.ctx, COPY_BYTES, &R.copy_gbps))) {
    cli_fail(R.ctx, st, "copy bandwidth");
    R.copy_gbps = NAN, R.failed = 1;
  }
  char bw[32];
  cli_fmt_num(bw, sizeof bw, R.copy_gbps, "%.1f GB/s");
  const char *dev = coal_ctx_device_name(R.ctx), *be = coal_backend_name(coal_ctx_backend(R.ctx));
  printf("coalesce bench spmv: %d matri%s, backend %s (%s), %s, %lld reps after %d warm-up "
         "runs, FastLoad H=%lld\n",
         ns, ns == 1 ? "x" : "ces", be, dev, cli_dtype_name(o->c.dtype), (long long)o->reps,
         BENCH_WARMUP, (long long)R.height);
  printf("copy bandwidth (256 MiB device copy, read + write): %s%s\n", bw,
         cuda ? "" : " (host backend: not measured)");
  if (R.csv)
    fprintf(R.csv, "matrix,rows,cols,nnz,dtype,backend,device,kernel,us_median,us_min,gbps,"
                   "pct_copy,ratio_vs_cusparse,check,rel_err,floor_bytes,copy_gbps,"
                   "build_scatter_ms,build_gather_ms,build_scatter_per_spmv,"
                   "build_gather_per_spmv,height,reps\n");
  if (R.json) {
    fprintf(R.json, "{\"device\": ");
    cli_json_str(R.json, dev);
    fprintf(R.json, ", \"backend\": \"%s\", \"dtype\": \"%s\", \"copy_gbps\": ", be,
            cli_dtype_name(o->c.dtype));
    cli_json_num(R.json, R.copy_gbps);
    fprintf(R.json, ", \"reps\": %lld, \"warmup\": %d, \"height\": %lld,\n  \"matrices\": [",
            (long long)o->reps, BENCH_WARMUP, (long long)R.height);
  }
  for (int s = 0; s < ns; s++)
    if (bench_matrix(&R, &o->list.specs[s], cli_matrix_list_from_dir(&o->list, s)) != CLI_OK)
      R.failed = 1;
  if (R.json) fprintf(R.json, "\n  ]\n}\n");
  rc = R.failed ? CLI_FAIL : CLI_OK;
  if (R.failed) fprintf(stderr, "coalesce bench spmv: some kernels failed (see above)\n");
out:
  if (R.csv && fclose(R.csv)) rc = CLI_FAIL;
  if (R.json && fclose(R.json)) rc = CLI_FAIL;
  coal_ctx_destroy(&R.ctx), coal_ctx_destroy(&R.hctx);
  cli_matrix_list_free(&o->list);
  return rc;
}

int cli_bench(int argc, char **argv) {
  if (argc < 2) return cli_usage_error("bench needs a benchmark name: bench spmv ...");
  if (!strcmp(argv[1], "spmv")) return bench_spmv(argc - 1, argv + 1);
  return cli_usage_error("unknown benchmark '%s' (available: spmv)", argv[1]);
}
