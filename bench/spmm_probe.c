/* SpMM measurement driver (not installed): every CUDA SpMM kernel and layout, and cuSPARSE
 * SpMM (CSR ALG1 column-major, ALG2/ALG3 row-major, ALG1 row-major, preprocessed), fp64.
 * Each variant is first checked against the cuSPARSE result of its layout (Y poisoned with NaN,
 * max |y - ref| / max |ref| <= 1e-10), then timed with CUDA events (coal_bench_time), the
 * repetitions of a cell interleaved over its variants, median.
 *
 *   spmm_probe big [-m IDS] [K...]  lap3d:128, lap3d27:100, powerlaw:1048576:12 (or those of
 *                              IDS, a comma list of lap3d, lap3d27, powerlaw) at k in K
 *                              (default 1 8 32 128), plus the SpMV fastload-t time
 *   spmm_probe shared DIR [K...]  every *.mtx.gz of DIR at k in K (default 1 4 8 16 32 64
 *                              128)
 *
 * Environment: SPMM_PROBE_PIPE=R times R products back to back per repetition (per product);
 * SPMM_PROBE_ONLY=a,b,... runs only the row-major variants of those names; SPMM_PROBE_REPS=N
 * timed repetitions per shared cell (default 20; the median of 6-15 us cells moves by 10-20%
 * between sweeps at 20).
 *
 * Output: a table on stdout, one CSV line per measurement in $OUT/spmm_probe.csv (or ./).
 * Byte floor: nnz*(8+4) + 4*(n+1) + k*(n+m)*8; % copy is floor / time over the measured
 * device-to-device copy bandwidth. */
#include "backend.h"
#include "bench.h"
#include "cuda/spmm_tune.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static coal_ctx ctx;
static double copy_gbps;
static FILE *csv;
static int nfail;

typedef struct {
  coal_mat A;
  coal_spmm_kernel kern;
  coal_bvec X, Y;
  coal_cusparse_spmm *cs;
  coal_spmv_kernel vk;
  void *x, *y;
} arg_t;

static coal_status run_ours(void *p) {
  arg_t *a = p;
  return coal_spmm(a->A, a->kern, 1.0, a->X, 0.0, a->Y);
}
static coal_status run_cs(void *p) { return coal_cusparse_spmm_run(((arg_t *)p)->cs, 1.0, 0.0); }
static coal_status run_spmv(void *p) {
  arg_t *a = p;
  return coal_spmv_raw(a->A, a->vk, 1.0, a->x, 0.0, a->y);
}

/* SPMM_PROBE_PIPE=R: each timed repetition runs R products back to back (launches queued
 * while the GPU works), reported per product: the GPU's time without the idle gap of a launch. */
static int pipe_n = 1;
static int shared_reps = 20;
static coal_bench_fn pipe_fn;
static coal_status run_pipe(void *p) {
  for (int i = 0; i < pipe_n; i++) COAL_CALL(pipe_fn(p));
  return COAL_SUCCESS;
}

/* SPMM_PROBE_ONLY=a,b,...: only the row-major variants of these names (the first, cuSPARSE
 * ALG2, is the reference: name it too). Opt-in variants run only when named there. */
static int wanted(const char *name, int layout, int optin) {
  const char *only = getenv("SPMM_PROBE_ONLY");
  if (!only || !*only) return !optin;
  if (!layout) return 0;
  char key[64];
  snprintf(key, sizeof key, ",%s,", name);
  char list[1024];
  snprintf(list, sizeof list, ",%s,", only);
  return strstr(list, key) != NULL;
}

static double *download(coal_bvec Y) {
  double *h = malloc(sizeof(double) * (size_t)(Y->n * Y->k + 1));
  if (h && coal_bvec_get_host(Y, h, COAL_COL_MAJOR, 0) != COAL_SUCCESS) {
    free(h);
    return NULL;
  }
  return h;
}

static double rel_err(coal_bvec Y, const double *ref) {
  double *h = download(Y);
  if (!h || !ref) return INFINITY;
  double num = 0, den = 0;
  for (int64_t i = 0; i < Y->n * Y->k; i++) {
    if (isnan(h[i])) {
      num = INFINITY;
      break;
    }
    if (fabs(h[i] - ref[i]) > num) num = fabs(h[i] - ref[i]);
    if (fabs(ref[i]) > den) den = fabs(ref[i]);
  }
  free(h);
  return den > 0 ? num / den : num;
}

typedef struct {
  const char *name;
  int layout; /* 0 col, 1 row */
  int kern;   /* coal_spmm_kernel, or the cuSPARSE algorithm when cs */
  int cs;     /* cuSPARSE */
  int rows;   /* row-split rows walked per group (0: default) */
  int maxk;   /* skipped above this k (slow layouts), 0 = never */
  int w;      /* row-split lanes per row (0: default) */
  int ub;     /* row-split X elements in flight per lane on small matrices (0: default) */
  int sub;    /* row-split sub-groups per row on small matrices (0: default) */
  int line;   /* row-split grid-line stride knob (0: the matrix's, 1: none, -1: the matrix's
                 lines, one plane at a time) */
  int lng;    /* row-split long-row threshold knob (0: default, 1: no long rows) */
  int occ;    /* row-split large launch at 5 CTAs per SM (0: default, 1: never, 2: always) */
  int fuse;   /* row-split long rows in the small launch (0: default, 1: never) */
  int waves;  /* row-split sub-groups limited by waves of CTAs (0: default, 1: never) */
  int r64;    /* row-split large launch with 64-bit row numbers (0: default, 1: always,
                 2: never) */
  int np;     /* row-split planes a CTA takes at once (0: default) */
  int optin;  /* a measured-and-dropped experiment: timed only when SPMM_PROBE_ONLY names it */
} variant;

/* cuSPARSE first in each layout: its result is the reference of the layout */
static const variant big_variants[] = {
    {.name = "cusparse-alg2", .layout = 1, .kern = 2, .cs = 1},
    {.name = "cusparse-alg3", .layout = 1, .kern = 3, .cs = 1},
    {.name = "cusparse-alg1", .layout = 1, .kern = 1, .cs = 1, .maxk = 8},
    {.name = "rowsplit", .layout = 1, .kern = COAL_SPMM_ROWSPLIT},
    {.name = "rowsplit-r1", .layout = 1, .kern = COAL_SPMM_ROWSPLIT, .rows = 1},
    {.name = "rs-nolines", .layout = 1, .kern = COAL_SPMM_ROWSPLIT, .line = 1},
    {.name = "rs-1plane", .layout = 1, .kern = COAL_SPMM_ROWSPLIT, .line = -1},
    {.name = "merge", .layout = 1, .kern = COAL_SPMM_MERGE},
    {.name = "merge-u8", .layout = 1, .kern = COAL_SPMM_MERGE, .ub = 8},
    {.name = "rs-p2", .layout = 1, .kern = COAL_SPMM_ROWSPLIT, .np = 2},
    {.name = "rs-p4", .layout = 1, .kern = COAL_SPMM_ROWSPLIT, .np = 4},
    {.name = "rs-p8", .layout = 1, .kern = COAL_SPMM_ROWSPLIT, .np = 8, .optin = 1},
    {.name = "rs-nolong", .layout = 1, .kern = COAL_SPMM_ROWSPLIT, .lng = 1},
    {.name = "rs-occ1", .layout = 1, .kern = COAL_SPMM_ROWSPLIT, .occ = 1},
    {.name = "rs-occ2", .layout = 1, .kern = COAL_SPMM_ROWSPLIT, .occ = 2},
    {.name = "rs-l32", .layout = 1, .kern = COAL_SPMM_ROWSPLIT, .lng = 32},
    {.name = "rs-l256", .layout = 1, .kern = COAL_SPMM_ROWSPLIT, .lng = 256},
    {.name = "rs-l1024", .layout = 1, .kern = COAL_SPMM_ROWSPLIT, .lng = 1024},
    {.name = "rs-r64", .layout = 1, .kern = COAL_SPMM_ROWSPLIT, .r64 = 1},
    {.name = "rs-r32", .layout = 1, .kern = COAL_SPMM_ROWSPLIT, .r64 = 2},
    {.name = "rs-g2", .layout = 1, .kern = COAL_SPMM_ROWSPLIT, .rows = 2},
    {.name = "rs-g6", .layout = 1, .kern = COAL_SPMM_ROWSPLIT, .rows = 6},
    {.name = "rs-g8", .layout = 1, .kern = COAL_SPMM_ROWSPLIT, .rows = 8},
    {.name = "swift", .layout = 1, .kern = COAL_SPMM_SWIFT, .maxk = 8},
    {.name = "auto", .layout = 1, .kern = COAL_SPMM_AUTO},
    {.name = "cusparse-alg1", .layout = 0, .kern = 1, .cs = 1},
    {.name = "rowsplit", .layout = 0, .kern = COAL_SPMM_ROWSPLIT, .maxk = 8},
    {.name = "merge", .layout = 0, .kern = COAL_SPMM_MERGE, .maxk = 8},
    {.name = "swift", .layout = 0, .kern = COAL_SPMM_SWIFT},
    {.name = "auto", .layout = 0, .kern = COAL_SPMM_AUTO},
};
#define NBIG ((int)(sizeof big_variants / sizeof big_variants[0]))

static const variant shared_variants[] = {
    {.name = "cusparse-alg2", .layout = 1, .kern = 2, .cs = 1},
    {.name = "cusparse-alg3", .layout = 1, .kern = 3, .cs = 1},
    {.name = "cusparse-alg1", .layout = 0, .kern = 1, .cs = 1},
    {.name = "rowsplit", .layout = 1, .kern = COAL_SPMM_ROWSPLIT},
    {.name = "merge", .layout = 1, .kern = COAL_SPMM_MERGE},
    {.name = "swift", .layout = 1, .kern = COAL_SPMM_SWIFT},
    {.name = "auto", .layout = 1, .kern = COAL_SPMM_AUTO},
    {.name = "swift", .layout = 0, .kern = COAL_SPMM_SWIFT},
    {.name = "auto", .layout = 0, .kern = COAL_SPMM_AUTO},
    {.name = "rowsplit-u8", .layout = 1, .kern = COAL_SPMM_ROWSPLIT, .ub = 8},
    {.name = "rs-s1", .layout = 1, .kern = COAL_SPMM_ROWSPLIT, .sub = 1},
    {.name = "rs-s2", .layout = 1, .kern = COAL_SPMM_ROWSPLIT, .sub = 2},
    {.name = "rs-s4", .layout = 1, .kern = COAL_SPMM_ROWSPLIT, .sub = 4},
    {.name = "rs-s8", .layout = 1, .kern = COAL_SPMM_ROWSPLIT, .sub = 8},
    {.name = "rs-w16", .layout = 1, .kern = COAL_SPMM_ROWSPLIT, .w = 16},
    {.name = "rs-w8", .layout = 1, .kern = COAL_SPMM_ROWSPLIT, .w = 8},
    {.name = "merge-u8", .layout = 1, .kern = COAL_SPMM_MERGE, .ub = 8},
    {.name = "merge-u16", .layout = 1, .kern = COAL_SPMM_MERGE, .ub = 16},
    {.name = "rs-nolong", .layout = 1, .kern = COAL_SPMM_ROWSPLIT, .lng = 1},
    {.name = "rs-l32", .layout = 1, .kern = COAL_SPMM_ROWSPLIT, .lng = 32},
    {.name = "rs-l128", .layout = 1, .kern = COAL_SPMM_ROWSPLIT, .lng = 128},
    {.name = "rs-l16", .layout = 1, .kern = COAL_SPMM_ROWSPLIT, .lng = 16},
    {.name = "rs-l24", .layout = 1, .kern = COAL_SPMM_ROWSPLIT, .lng = 24},
    {.name = "rs-l48", .layout = 1, .kern = COAL_SPMM_ROWSPLIT, .lng = 48},
    {.name = "rs-l64", .layout = 1, .kern = COAL_SPMM_ROWSPLIT, .lng = 64},
    {.name = "rs-nofuse", .layout = 1, .kern = COAL_SPMM_ROWSPLIT, .fuse = 1},
    {.name = "rs-nowave", .layout = 1, .kern = COAL_SPMM_ROWSPLIT, .waves = 1},
    {.name = "rs-old", .layout = 1, .kern = COAL_SPMM_ROWSPLIT, .fuse = 1, .waves = 1},
    {.name = "rs-r64", .layout = 1, .kern = COAL_SPMM_ROWSPLIT, .r64 = 1},
    {.name = "rs-l256", .layout = 1, .kern = COAL_SPMM_ROWSPLIT, .lng = 256},
};
enum { SH_RS = 3, SH_MG = 4, SH_SW = 5, SH_AUTO_ROW = 6, SH_AUTO_COL = 8 };
#define NSHARED ((int)(sizeof shared_variants / sizeof shared_variants[0]))

/* The variant's tuning knobs on the probe's context (0 = default for those it does not set). */
static void set_knobs(const variant *va) {
  /* line -1: the matrix's lines in one plane at a time */
  const int kv[][2] = {{COAL_SPMM_TUNE_RS_ROWS, va->rows},
                       {COAL_SPMM_TUNE_RS_W, va->w},
                       {COAL_SPMM_TUNE_RS_UB, va->ub},
                       {COAL_SPMM_TUNE_MG_UB, va->ub},
                       {COAL_SPMM_TUNE_RS_S, va->sub},
                       {COAL_SPMM_TUNE_RS_LONG, va->lng},
                       {COAL_SPMM_TUNE_RS_OCC, va->occ},
                       {COAL_SPMM_TUNE_RS_FUSE, va->fuse},
                       {COAL_SPMM_TUNE_RS_WAVES, va->waves},
                       {COAL_SPMM_TUNE_RS_ROW64, va->r64},
                       {COAL_SPMM_TUNE_RS_NP, va->np},
                       {COAL_SPMM_TUNE_RS_LINE, va->line < 0 ? 0 : va->line},
                       {COAL_SPMM_TUNE_RS_PLANE, va->line < 0 ? 1 : 0}};
  for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++)
    coal_spmm_cuda_tune(ctx, kv[i][0], kv[i][1]);
}

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Times every variant of `vs` on A at k; t[v] = median us (INFINITY: failed/unsupported). The
 * references are the first cuSPARSE variant of each layout. Each variant is checked first;
 * then the repetitions are interleaved (repetition r of every variant, then r + 1), so that a
 * slow spell of the machine falls on all variants alike rather than on one. */
static void measure(const char *mname, coal_mat A, int64_t k, const variant *vs, int nv, int reps,
                    double *t) {
  int64_t m = A->nrows, n = A->ncols;
  coal_bvec X[2] = {NULL, NULL}, Y[2] = {NULL, NULL};
  double *ref[2] = {NULL, NULL}, *err = calloc((size_t)nv, sizeof(double));
  double *us = malloc(sizeof(double) * (size_t)nv * (size_t)reps);
  arg_t *args = calloc((size_t)nv, sizeof(arg_t));
  int *ok = calloc((size_t)nv, sizeof(int));
  for (int v = 0; v < nv; v++) t[v] = INFINITY;
  if (!err || !us || !args || !ok) {
    printf("%s k=%lld: out of host memory\n", mname, (long long)k);
    goto done;
  }
  for (int l = 0; l < 2; l++) {
    if (coal_bvec_create(ctx, n, k, COAL_F64, (coal_layout)l, 0, &X[l]) ||
        coal_bvec_create(ctx, m, k, COAL_F64, (coal_layout)l, 0, &Y[l]) ||
        coal_bvec_set_random(X[l], 100 + (uint64_t)(k * 2 + l))) {
      printf("%s k=%lld: block allocation failed: %s\n", mname, (long long)k,
             coal_ctx_last_error(ctx));
      goto done;
    }
  }
  const double floor_b =
      (double)A->nnz * 12.0 + 4.0 * (double)(m + 1) + (double)k * (double)(n + m) * 8.0;
  /* check each variant (Y poisoned first) */
  for (int v = 0; v < nv; v++) {
    const variant *va = &vs[v];
    int l = va->layout;
    args[v] =
        (arg_t){A, (coal_spmm_kernel)(va->cs ? 0 : va->kern), X[l], Y[l], NULL, 0, NULL, NULL};
    if (va->maxk && k > va->maxk) continue;
    if (!wanted(va->name, l, va->optin)) continue;
    set_knobs(va);
    coal_status st = COAL_SUCCESS;
    if (va->cs)
      st = coal_cusparse_spmm_create(A, va->kern, k, (coal_layout)l, X[l]->data, X[l]->ld,
                                     Y[l]->data, Y[l]->ld, &args[v].cs);
    if (st == COAL_ERR_UNSUPPORTED) {
      fprintf(csv, "%s,%lld,%lld,%lld,%s,%s,unsupported\n", mname, (long long)m, (long long)A->nnz,
              (long long)k, l ? "row" : "col", va->name);
      continue;
    }
    coal_bench_fn fn = va->cs ? run_cs : run_ours;
    if (st == COAL_SUCCESS) st = coal_bvec_set_value(Y[l], NAN);
    if (st == COAL_SUCCESS) st = fn(&args[v]);
    if (st == COAL_SUCCESS) st = coal_ctx_sync(ctx);
    if (st == COAL_SUCCESS) {
      if (!ref[l]) { /* the first result of the layout (cuSPARSE) is its reference */
        ref[l] = download(Y[l]);
        if (!va->cs) printf("note: %s k=%lld reference is %s\n", mname, (long long)k, va->name);
      } else {
        err[v] = rel_err(Y[l], ref[l]);
      }
    }
    ok[v] = st == COAL_SUCCESS && err[v] <= 1e-10;
    if (!ok[v]) {
      nfail++;
      printf("FAIL %s k=%lld %s-major %s: %s, error %.3g\n", mname, (long long)k, l ? "row" : "col",
             va->name, st ? coal_ctx_last_error(ctx) : "wrong result", err[v]);
    }
  }
  /* warm-up, then the interleaved repetitions */
  for (int r = -2; r < reps; r++)
    for (int v = 0; v < nv; v++) {
      if (!ok[v]) continue;
      set_knobs(&vs[v]);
      pipe_fn = vs[v].cs ? run_cs : run_ours;
      double med = INFINITY;
      coal_status st =
          coal_bench_time(ctx, pipe_n > 1 ? run_pipe : pipe_fn, &args[v], 0, 1, &med, NULL);
      if (st != COAL_SUCCESS) {
        ok[v] = 0, nfail++;
        printf("FAIL %s k=%lld %s: timing: %s\n", mname, (long long)k, vs[v].name,
               coal_ctx_last_error(ctx));
        continue;
      }
      if (r >= 0) us[(size_t)v * (size_t)reps + (size_t)r] = med / pipe_n;
    }
  for (int v = 0; v < nv; v++) {
    if (!ok[v]) continue;
    double *u = us + (size_t)v * (size_t)reps;
    qsort(u, (size_t)reps, sizeof(double), cmp_dbl);
    const double med = u[reps / 2], mn = u[0];
    t[v] = med;
    fprintf(csv, "%s,%lld,%lld,%lld,%s,%s,%.2f,%.2f,%.1f,%.1f,%.2g\n", mname, (long long)m,
            (long long)A->nnz, (long long)k, vs[v].layout ? "row" : "col", vs[v].name, med, mn,
            floor_b / med * 1e-3, 100.0 * floor_b / med * 1e-3 / copy_gbps, err[v]);
  }
done:
  for (int v = 0; args && v < nv; v++) coal_cusparse_spmm_destroy(args[v].cs);
  set_knobs(&(variant){.name = ""});
  for (int l = 0; l < 2; l++) coal_bvec_destroy(&X[l]), coal_bvec_destroy(&Y[l]), free(ref[l]);
  free(err), free(us), free(args), free(ok);
}

static double best_cusparse(const variant *vs, int nv, const double *t, int layout) {
  double b = INFINITY;
  for (int v = 0; v < nv; v++)
    if (vs[v].cs && (layout < 0 || vs[v].layout == layout) && t[v] < b) b = t[v];
  return b;
}

static void big(const char *which, int nk, const int64_t *ks) {
  const char *names[3] = {"lap3d:128", "lap3d27:100", "powerlaw:1048576:12"};
  const char *ids[3] = {"lap3d", "lap3d27", "powerlaw"};
  for (int i = 0; i < 3; i++) {
    char key[32];
    snprintf(key, sizeof key, ",%s,", ids[i]);
    if (which && !strstr(which, key)) continue;
    coal_mat A = NULL;
    coal_status st = i == 0   ? coal_gen_laplace3d(ctx, 128, 128, 128, 7, COAL_F64, &A)
                     : i == 1 ? coal_gen_laplace3d(ctx, 100, 100, 100, 27, COAL_F64, &A)
                              : coal_gen_powerlaw(ctx, 1048576, 12.0, 2.5, 1, COAL_F64, &A);
    if (st) {
      printf("%s: %s\n", names[i], coal_ctx_last_error(ctx));
      continue;
    }
    int32_t mx = 0;
    for (int32_t r = 0; r < A->nrows; r++)
      if (A->rowptr[r + 1] - A->rowptr[r] > mx) mx = A->rowptr[r + 1] - A->rowptr[r];
    int32_t line = 0, plane = 0;
    if (coal_mat_line_stride_compute(A, &line)) line = -1;
    if (coal_mat_plane_stride_compute(A, &plane)) plane = -1;
    /* one SpMV (fastload-t, the library's fastest on these) for the per-RHS criterion */
    coal_bvec x = NULL, y = NULL;
    double spmv = INFINITY;
    if (!coal_bvec_create(ctx, A->ncols, 1, COAL_F64, COAL_COL_MAJOR, 0, &x) &&
        !coal_bvec_create(ctx, A->nrows, 1, COAL_F64, COAL_COL_MAJOR, 0, &y) &&
        !coal_bvec_set_random(x, 3)) {
      arg_t a = {A, COAL_SPMM_AUTO, NULL, NULL, NULL, COAL_SPMV_FASTLOAD_T, x->data, y->data};
      if (coal_bench_time(ctx, run_spmv, &a, 3, 20, &spmv, NULL)) spmv = INFINITY;
    }
    coal_bvec_destroy(&x), coal_bvec_destroy(&y);
    printf("\n== %s: n %d, nnz %lld, mean row %.2f, max row %d, grid line %d, plane %d; "
           "SpMV fastload-t %.1f us\n",
           names[i], A->nrows, (long long)A->nnz, (double)A->nnz / A->nrows, mx, line, plane, spmv);
    for (int q = 0; q < nk; q++) {
      int64_t k = ks[q];
      double t[NBIG];
      measure(names[i], A, k, big_variants, NBIG, k >= 128 ? 6 : 12, t);
      const double fl =
          (double)A->nnz * 12.0 + 4.0 * (A->nrows + 1.0) + (double)k * 2.0 * A->nrows * 8.0;
      const double bc = best_cusparse(big_variants, NBIG, t, -1);
      printf("k=%-4lld %-6s %-14s %10s %8s %7s %9s %8s\n", (long long)k, "layout", "variant", "us",
             "%copy", "x best", "us/rhs", "rhs/spmv");
      for (int v = 0; v < NBIG; v++) {
        if (!isfinite(t[v])) continue;
        printf("       %-6s %-14s %10.1f %7.1f%% %6.2fx %9.2f %8.3f\n",
               big_variants[v].layout ? "row" : "col", big_variants[v].name, t[v],
               100.0 * fl / t[v] * 1e-3 / copy_gbps, bc / t[v], t[v] / (double)k,
               t[v] / (double)k / spmv);
      }
    }
    coal_mat_destroy(&A);
  }
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void shared(const char *dir, int nk, const int64_t *ks) {
  DIR *d = opendir(dir);
  if (!d) {
    printf("cannot open %s\n", dir);
    return;
  }
  char *names[512];
  int nn = 0;
  struct dirent *e;
  while ((e = readdir(d)) && nn < 512) {
    size_t l = strlen(e->d_name);
    if (l > 7 && !strcmp(e->d_name + l - 7, ".mtx.gz")) names[nn++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(names, (size_t)nn, sizeof(char *), cmp_str);
  int cells = 0, below_row = 0, below_col = 0, oracle_hit = 0;
  double lost = 0, worst_row = INFINITY, worst_col = INFINITY;
  printf("\n== shared matrices: auto / best cuSPARSE (any layout) per k; oracle = fastest of our "
         "row-major kernels\n%-18s %9s",
         "matrix", "nnz");
  for (int q = 0; q < nk; q++) printf(" %6lld", (long long)ks[q]);
  printf("  (row-major auto; col-major auto min)\n");
  for (int i = 0; i < nn; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    coal_mat A = NULL;
    if (coal_mat_read_mm(ctx, path, COAL_F64, &A) != COAL_SUCCESS) {
      free(names[i]);
      continue;
    }
    printf("%-18.18s %9lld", names[i], (long long)A->nnz);
    double colmin = INFINITY;
    for (int q = 0; q < nk; q++) {
      double t[NSHARED];
      measure(names[i], A, ks[q], shared_variants, NSHARED, shared_reps, t);
      const double bc = best_cusparse(shared_variants, NSHARED, t, -1);
      const double ar = bc / t[SH_AUTO_ROW], ac = bc / t[SH_AUTO_COL];
      printf(" %6.2f", ar);
      if (ac < colmin) colmin = ac;
      cells++;
      below_row += ar < 0.9, below_col += ac < 0.9;
      if (ar < worst_row) worst_row = ar;
      if (ac < worst_col) worst_col = ac;
      double orc = fmin(t[SH_RS], fmin(t[SH_MG], t[SH_SW]));
      oracle_hit += t[SH_AUTO_ROW] <= orc * 1.02; /* auto ran the oracle's kernel (within noise) */
      lost += t[SH_AUTO_ROW] / orc - 1.0;
    }
    printf("  %6.2f\n", colmin);
    coal_mat_destroy(&A);
    free(names[i]);
  }
  if (cells)
    printf(
        "cells %d: row-major auto < 0.9x best cuSPARSE in %d (worst %.2fx), column-major auto in "
        "%d (worst %.2fx); auto within 2%% of the oracle in %d (%.1f%%), mean time lost %.1f%%\n",
        cells, below_row, worst_row, below_col, worst_col, oracle_hit, 100.0 * oracle_hit / cells,
        100.0 * lost / cells);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr,
            "usage: spmm_probe big [-m lap3d,lap3d27,powerlaw] [K...] | shared DIR [K...]\n");
    return 2;
  }
  if (getenv("SPMM_PROBE_PIPE") && atoi(getenv("SPMM_PROBE_PIPE")) > 1)
    pipe_n = atoi(getenv("SPMM_PROBE_PIPE"));
  if (getenv("SPMM_PROBE_REPS") && atoi(getenv("SPMM_PROBE_REPS")) > 0)
    shared_reps = atoi(getenv("SPMM_PROBE_REPS"));
  if (coal_ctx_create(COAL_BACKEND_CUDA, &ctx) != COAL_SUCCESS) {
    printf("no CUDA context\n");
    return 77;
  }
  /* big: optional "-m lap3d,lap3d27,powerlaw" then the k values */
  int argi = 2;
  char which[256] = "";
  if (!strcmp(argv[1], "big") && argc > 3 && !strcmp(argv[2], "-m")) {
    snprintf(which, sizeof which, ",%s,", argv[3]);
    argi = 4;
  }
  const char *out = getenv("OUT");
  char path[4096];
  snprintf(path, sizeof path, "%s/spmm_probe_%s%s.csv", out && *out ? out : ".", argv[1],
           which[0] ? which : "");
  for (char *p = path + strlen(path) - 4; p > path && *p != '/'; p--)
    if (*p == ',') *p = '_';
  csv = fopen(path, "w");
  if (!csv) csv = stdout;
  fprintf(csv, "matrix,n,nnz,k,layout,variant,us,us_min,gbps_floor,pct_copy,err\n");
  if (coal_bench_copy_bandwidth(ctx, (size_t)256 << 20, &copy_gbps)) copy_gbps = 1;
  printf("device %s, copy %.0f GB/s\n", coal_ctx_device_name(ctx), copy_gbps);
  if (!strcmp(argv[1], "big")) {
    int64_t ks[16] = {1, 8, 32, 128};
    int nk = 4;
    if (argc > argi)
      for (nk = 0; nk < argc - argi && nk < 16; nk++) ks[nk] = atoll(argv[argi + nk]);
    big(which[0] ? which : NULL, nk, ks);
  } else if (!strcmp(argv[1], "shared") && argc > 2) {
    int64_t ks[16] = {1, 4, 8, 16, 32, 64, 128};
    int nk = 7;
    if (argc > 3)
      for (nk = 0; nk < argc - 3 && nk < 16; nk++) ks[nk] = atoll(argv[3 + nk]);
    shared(argv[2], nk, ks);
  }
  if (csv != stdout) fclose(csv);
  coal_ctx_destroy(&ctx);
  printf("%d failures\n", nfail);
  return nfail ? 1 : 0;
}
