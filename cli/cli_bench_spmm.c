/* `coalesce bench spmm`: every SpMM kernel of the library in each block layout, and cuSPARSE
 * SpMM (CSR ALG1 column-major, ALG2/ALG3 row-major) on the cuda backend, for a list of
 * matrices and numbers of columns k. Each run writes into a NaN-poisoned Y (beta = 0) and is
 * checked against a plain CSR loop on a host copy of the matrix, then timed with
 * coal_bench_time (median). Also reports how often coal_spmm_select picks the fastest of our
 * kernels (the oracle) and the time lost when it does not. See bench/README.md. */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define WARMUP     5
#define SEED       11
#define COPY_BYTES ((size_t)256 << 20)
#define MAX_KS     32
#define K_LIMIT    4096
#define REF_WORK   ((double)(1 << 27)) /* nnz*k (and n*k) above which the reference is cut */
#define REF_COLS   8                   /* to this many columns spread over k */

/* Variants, grouped by layout: our kernels (alg 0), then the cuSPARSE algorithms. */
#define NV    11
#define COL   COAL_COL_MAJOR
#define ROW   COAL_ROW_MAJOR
#define AUTO  COAL_SPMM_AUTO
#define SWIFT COAL_SPMM_SWIFT
#define SPLIT COAL_SPMM_ROWSPLIT
static const struct {
  const char *name;
  coal_spmm_kernel kernel;
  int alg;
  coal_layout layout;
} var[NV] = {
    // clang-format off
    {"swift", SWIFT, 0, COL}, {"rowsplit", SPLIT, 0, COL}, {"merge", COAL_SPMM_MERGE, 0, COL},
    {"auto", AUTO, 0, COL}, {"cusparse-alg1", AUTO, 1, COL},
    {"swift", SWIFT, 0, ROW}, {"rowsplit", SPLIT, 0, ROW}, {"merge", COAL_SPMM_MERGE, 0, ROW},
    {"auto", AUTO, 0, ROW}, {"cusparse-alg2", AUTO, 2, ROW}, {"cusparse-alg3", AUTO, 3, ROW}};
// clang-format on
static const char *const lname[2] = {"col", "row"};

typedef enum { R_NONE, R_UNSUPPORTED, R_ERROR, R_DONE } rstate;
static const char *const state_name[] = {"", "unsupported", "ERROR", "done"};
typedef struct {
  rstate state;
  int ok;
  double err, us, us_min;
} vres;

/* One line of the final summary per matrix, at the target k. */
typedef struct {
  const char *name;
  int have, best_v; /* a kernel of ours passed at the target k: the fastest */
  double us, pct, ratio, spmv4, col_row, min_ratio;
  int64_t min_ratio_k;
} msum;

typedef struct {
  cli_bench_opts o;
  int64_t height, ks[MAX_KS], ktarget;
  int nk, lay[2]; /* layouts of our kernels */
  coal_ctx ctx, hctx;
  int cuda, failed, json_first;
  double copy_gbps; /* NAN on host */
  FILE *csv, *json;
  /* selection report */
  int cases, matches, unavailable;
  double t_pick, t_oracle, worst;
  char worst_case[192];
} spmm_run;

/* One matrix at one k. */
typedef struct {
  const cli_spec *sp;
  coal_mat A, Ah;
  int64_t rows, cols, nnz, k;
  double floor_b;
  vres spmv; /* SpMV with COAL_SPMV_AUTO: the yardstick of the SpMV/4 column */
  coal_bvec X[2], Y[2];
  void *buf;                /* host download of a block, max(rows, cols) * k values */
  double *xr, *ref, *scale; /* checked columns: X row-major, reference, |A||X| scale */
  int64_t *cj, nc;          /* checked column indices */
  vres res[NV];
  int oracle[2], pick_v[2]; /* variant indices (-1: none) */
  double lost[2];           /* time lost by the pick vs the oracle, % */
} mstate;

typedef struct {
  coal_mat A;
  coal_spmm_kernel kernel;
  coal_bvec X, Y;
  coal_cusparse_spmm *h;
  int spmv; /* coal_spmv with COAL_SPMV_AUTO instead */
} run_arg;

static coal_status run_once(void *p) {
  run_arg *a = p;
  if (a->h) return coal_cusparse_spmm_run(a->h, 1.0, 0.0);
  if (a->spmv) return coal_spmv(a->A, COAL_SPMV_AUTO, 1.0, a->X, 0.0, a->Y);
  return coal_spmm(a->A, a->kernel, 1.0, a->X, 0.0, a->Y);
}

/* ---- reference and check ----------------------------------------------------------------- */

static double buf_at(const void *buf, coal_dtype dt, size_t i) {
  return dt == COAL_F64 ? ((const double *)buf)[i] : (double)((const float *)buf)[i];
}

/* Plain CSR loop in double over the host copy A, one pass over A for all nc columns:
 * ref (rows x nc, row-major) = A * xr (cols x nc, row-major); scale[j] = max_i sum |a x|. */
static int reference(mstate *s, const cli_csr *A) {
  int64_t nc = s->nc;
  double *ab = calloc((size_t)nc, sizeof *ab);
  if (!ab) return -1;
  for (int64_t j = 0; j < nc; j++) s->scale[j] = 0;
  for (int64_t i = 0; i < A->nrows; i++) {
    double *r = s->ref + (size_t)i * (size_t)nc;
    for (int64_t j = 0; j < nc; j++) r[j] = ab[j] = 0;
    for (int32_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
      double a = cli_csr_value(A, p);
      const double *x = s->xr + (size_t)A->colind[p] * (size_t)nc;
      for (int64_t j = 0; j < nc; j++) {
        double t = a * x[j];
        r[j] += t;
        ab[j] += fabs(t);
      }
    }
    for (int64_t j = 0; j < nc; j++)
      if (ab[j] > s->scale[j]) s->scale[j] = ab[j];
  }
  free(ab);
  return 0;
}

/* Error of the downloaded Y (s->buf, column-major rows x k): max over the checked columns of
 * |y - ref| / scale; +inf when any entry of Y (checked or not) is NaN. */
static double check(const mstate *s, coal_dtype dt) {
  size_t n = (size_t)s->rows * (size_t)s->k;
  for (size_t i = 0; i < n; i++)
    if (isnan(buf_at(s->buf, dt, i))) return INFINITY;
  double e = 0;
  for (int64_t j = 0; j < s->nc; j++)
    for (int64_t i = 0; i < s->rows; i++) {
      double y = buf_at(s->buf, dt, (size_t)(i + s->cj[j] * s->rows));
      double d = fabs(y - s->ref[(size_t)i * (size_t)s->nc + (size_t)j]);
      if (s->scale[j] > 0) d /= s->scale[j];
      if (!(d <= e)) e = d;
    }
  return e;
}

/* Poisons Y with NaN, runs once (COAL_ERR_UNSUPPORTED: skipped), checks, then times. */
static void measure(spmm_run *R, mstate *s, const char *what, run_arg *a, vres *r) {
  r->err = r->us = r->us_min = NAN;
  coal_status st = coal_bvec_set_value(a->Y, NAN);
  if (!st && (st = run_once(a)) == COAL_ERR_UNSUPPORTED) {
    r->state = R_UNSUPPORTED;
    return;
  }
  if (!st && !(st = coal_ctx_sync(R->ctx)) &&
      !(st = coal_bvec_get_host(a->Y, s->buf, COAL_COL_MAJOR, 0))) {
    r->err = check(s, R->o.c.dtype);
    r->ok = r->err < cli_tolerance(R->o.c.dtype);
    st = coal_bench_time(R->ctx, run_once, a, WARMUP, (int)R->o.reps, &r->us, &r->us_min);
  }
  r->state = st ? R_ERROR : R_DONE;
  if (st) cli_fail(R->ctx, st, "%s: k=%lld %s", s->sp->name, (long long)s->k, what);
  if (st || !r->ok) R->failed = 1;
}

static int passed(const mstate *s, int v) { return s->res[v].state == R_DONE && s->res[v].ok; }

/* Fastest passing variant among ours (cusp = 0, AUTO excluded) or cuSPARSE (cusp = 1), in
 * layout lay (-1: any); -1 when none. */
static int fastest(const mstate *s, int cusp, int lay) {
  int b = -1;
  for (int v = 0; v < NV; v++) {
    if ((var[v].alg != 0) != cusp || (!cusp && var[v].kernel == COAL_SPMM_AUTO)) continue;
    if ((lay >= 0 && (int)var[v].layout != lay) || !passed(s, v)) continue;
    if (b < 0 || s->res[v].us < s->res[b].us) b = v;
  }
  return b;
}

static double us_of(const mstate *s, int v) { return v >= 0 ? s->res[v].us : NAN; }

/* ---- one k ------------------------------------------------------------------------------- */

static const char *label(const mstate *s, int v, char *buf, size_t n) {
  if (var[v].alg || var[v].kernel != COAL_SPMM_AUTO) return var[v].name;
  snprintf(buf, n, "auto=%s", coal_spmm_kernel_name(coal_spmm_select(s->A, s->k, var[v].layout)));
  return buf;
}

/* The columns of a CSV row, the fields of a JSON row: NSTR strings, then NNUM numbers. */
enum { NSTR = 10, NNUM = 20 };
static const char col_names[] =
    "matrix,kernel,layout,check,selected,oracle,spmv_kernel,dtype,backend,device,k,rows,cols,nnz,"
    "us,us_min,gbps,pct_copy,us_per_rhs,ratio_vs_cusparse,spmv4,rel_err,lost_pct,spmv_us,"
    "spmv_rel_err,checked_cols,floor_bytes,copy_gbps,height,reps";

static void emit_row(spmm_run *R, const char *const *str, const double *num) {
  FILE *f = R->csv;
  for (int i = 0; f && i < NSTR + NNUM; i++) {
    if (i) fputc(',', f);
    if (i >= NSTR)
      cli_put_num(f, num[i - NSTR], "");
    else if (i == 0 || i == NSTR - 1) /* matrix and device names */
      cli_csv_str(f, str[i]);
    else
      fputs(str[i], f);
  }
  if (f) fputc('\n', f);
  if (!(f = R->json)) return;
  fprintf(f, "%s\n    {", R->json_first ? "" : ",");
  R->json_first = 0;
  const char *p = col_names;
  for (int i = 0; i < NSTR + NNUM; i++, p += strcspn(p, ",") + 1) {
    fprintf(f, "%s\"%.*s\": ", i ? ", " : "", (int)strcspn(p, ","), p);
    if (i < NSTR)
      cli_json_str(f, str[i]);
    else
      cli_put_num(f, num[i - NSTR], "null");
  }
  fputc('}', f);
}

/* Table rows, selection lines, CSV and JSON rows for one k; bc: best cuSPARSE time. */
static void report_k(spmm_run *R, mstate *s, double bc) {
  char lb[48], c[6][32];
  const char *dev = coal_ctx_device_name(R->ctx), *be = coal_backend_name(coal_ctx_backend(R->ctx));
  for (int v = 0; v < NV; v++) {
    const vres *r = &s->res[v];
    if (r->state == R_NONE) continue;
    int L = (int)var[v].layout, ours = var[v].alg == 0;
    double gbps = s->floor_b / (r->us * 1e3), per = r->us / (double)s->k;
    // clang-format off
    double num[NNUM] = {(double)s->k, (double)s->rows, (double)s->cols, (double)s->nnz, r->us,
        r->us_min, gbps, 100.0 * gbps / R->copy_gbps, per, bc / r->us, per / (s->spmv.us / 4.0),
        r->err, ours ? s->lost[L] : NAN, s->spmv.us, s->spmv.err, (double)s->nc, s->floor_b,
        R->copy_gbps, (double)R->height, (double)R->o.reps};
    // clang-format on
    const char *chk = r->state == R_DONE ? (r->ok ? "ok" : "FAIL") : state_name[r->state];
    const char *fmt[6] = {"%.2f", "%.2f", "%.1f%%", "%.3f", "%.2fx", "%.2f"};
    for (int i = 0; i < 6; i++) cli_fmt_num(c[i], sizeof c[i], num[i ? 5 + i : 4], fmt[i]);
    printf("   %5lld  %-16s %-6s %10s %9s %7s %9s %7s %7s  ", (long long)s->k,
           label(s, v, lb, sizeof lb), lname[L], c[0], c[1], c[2], c[3], c[4], c[5]);
    if (r->state == R_DONE)
      printf("%s (%.1e)\n", chk, r->err);
    else
      printf("%s\n", r->state == R_ERROR ? "ERROR" : "-");
    // clang-format off
    const char *str[NSTR] = {s->sp->name, label(s, v, lb, sizeof lb), lname[L], chk,
        ours ? coal_spmm_kernel_name(coal_spmm_select(s->A, s->k, var[v].layout)) : "",
        ours && s->oracle[L] >= 0 ? var[s->oracle[L]].name : "",
        coal_spmv_kernel_name(coal_spmv_select(s->A)), cli_dtype_name(R->o.c.dtype), be, dev};
    // clang-format on
    emit_row(R, str, num);
  }
  for (int L = 0; L < 2; L++) {
    if (!R->lay[L]) continue;
    int o = s->oracle[L], p = s->pick_v[L];
    const char *pn = coal_spmm_kernel_name(coal_spmm_select(s->A, s->k, (coal_layout)L));
    printf("          k=%lld %s: ", (long long)s->k, lname[L]);
    if (o < 0) {
      printf("no kernel of ours passed\n");
      continue;
    }
    printf("oracle %s %.2f us, auto picks %s", var[o].name, us_of(s, o), pn);
    if (p == o)
      printf(": match\n");
    else if (isfinite(s->lost[L]))
      printf(" %.2f us: %.1f%% lost\n", us_of(s, p), s->lost[L]);
    else
      printf(", which did not run\n");
  }
}

/* Checked columns: all, or REF_COLS spread over 0..k-1 (first and last included) when the
 * product is large. Downloads X and computes the reference. */
static coal_status prepare_reference(spmm_run *R, mstate *s, coal_bvec X) {
  int64_t k = s->k, nmax = s->rows > s->cols ? s->rows : s->cols;
  double work = (double)k * (double)(s->nnz > nmax ? s->nnz : nmax);
  s->nc = (work > REF_WORK && k > REF_COLS) ? REF_COLS : k;
  size_t vs = cli_dtype_size(R->o.c.dtype);
  s->buf = malloc(vs * (size_t)(nmax > 0 ? nmax : 1) * (size_t)k);
  s->cj = malloc(sizeof *s->cj * (size_t)s->nc);
  s->xr = malloc(sizeof *s->xr * ((size_t)s->cols * (size_t)s->nc + 1));
  s->ref = malloc(sizeof *s->ref * ((size_t)s->rows * (size_t)s->nc + 1));
  s->scale = malloc(sizeof *s->scale * (size_t)s->nc);
  if (!s->buf || !s->cj || !s->xr || !s->ref || !s->scale) return COAL_ERR_MEMORY;
  for (int64_t j = 0; j < s->nc; j++)
    s->cj[j] = s->nc == k ? j : (j * (k - 1) + (s->nc - 1) / 2) / (s->nc - 1);
  CLI_CALL(coal_bvec_get_host(X, s->buf, COAL_COL_MAJOR, 0));
  for (int64_t i = 0; i < s->cols; i++)
    for (int64_t j = 0; j < s->nc; j++)
      s->xr[(size_t)i * (size_t)s->nc + (size_t)j] =
          buf_at(s->buf, R->o.c.dtype, (size_t)(i + s->cj[j] * s->cols));
  cli_csr A;
  CLI_CALL(cli_csr_get(s->Ah, &A)); /* reference() reads its host CSR */
  if (reference(s, &A)) return COAL_ERR_MEMORY;
  if (s->nc < k)
    printf("          k=%lld: reference on %lld columns spread over 0..%lld, NaN scan on all\n",
           (long long)k, (long long)s->nc, (long long)k - 1);
  return COAL_SUCCESS;
}

static void free_k(mstate *s) {
  for (int L = 0; L < 2; L++) coal_bvec_destroy(&s->X[L]), coal_bvec_destroy(&s->Y[L]);
  free(s->buf), free(s->cj), free(s->xr), free(s->ref), free(s->scale);
  s->buf = NULL, s->cj = NULL, s->xr = s->ref = s->scale = NULL;
}

/* Random X and Y of s->k columns in the layouts flagged in need[], and the reference. */
static coal_status prepare_k(spmm_run *R, mstate *s, const int need[2]) {
  coal_dtype dt = R->o.c.dtype;
  for (int L = 0; L < 2; L++)
    if (need[L]) {
      CLI_CALL(coal_bvec_create(R->ctx, s->cols, s->k, dt, (coal_layout)L, 0, &s->X[L]));
      CLI_CALL(coal_bvec_create(R->ctx, s->rows, s->k, dt, (coal_layout)L, 0, &s->Y[L]));
      CLI_CALL(coal_bvec_set_random(s->X[L], SEED));
    }
  return prepare_reference(R, s, s->X[need[0] ? 0 : 1]);
}

/* The oracle and the pick of coal_spmm_select per layout, added to the selection report. */
static void selection(spmm_run *R, mstate *s) {
  for (int L = 0; L < 2; L++) {
    s->oracle[L] = s->pick_v[L] = -1;
    s->lost[L] = NAN;
    if (!R->lay[L]) continue;
    coal_spmm_kernel pk = coal_spmm_select(s->A, s->k, (coal_layout)L);
    for (int v = 0; v < NV; v++)
      if (var[v].alg == 0 && var[v].kernel == pk && (int)var[v].layout == L) s->pick_v[L] = v;
    int o = s->oracle[L] = fastest(s, 0, L), p = s->pick_v[L];
    if (o < 0) continue;
    R->cases++;
    if (p < 0 || !passed(s, p)) {
      R->unavailable++;
      continue;
    }
    s->lost[L] = 100.0 * (s->res[p].us / s->res[o].us - 1.0);
    R->matches += p == o;
    R->t_pick += s->res[p].us, R->t_oracle += s->res[o].us;
    if (s->lost[L] > R->worst || !R->worst_case[0]) {
      R->worst = s->lost[L];
      snprintf(R->worst_case, sizeof R->worst_case, "%s k=%lld %s", s->sp->name, (long long)s->k,
               lname[L]);
    }
  }
}

static void bench_k(spmm_run *R, mstate *s, int64_t k, msum *m) {
  char what[64];
  coal_status st;
  s->k = k;
  s->floor_b = cli_byte_floor(s->rows, s->cols, s->nnz, R->o.c.dtype) +
               (double)(k - 1) * (double)(s->rows + s->cols) * (double)cli_dtype_size(R->o.c.dtype);
  memset(s->res, 0, sizeof s->res);
  for (int v = 0; v < NV; v++) s->res[v].us = s->res[v].us_min = s->res[v].err = NAN;
  int need[2] = {R->lay[0] || R->cuda, R->lay[1] || R->cuda};
  if ((st = prepare_k(R, s, need))) {
    R->failed = 1,
    cli_fail(R->ctx, st, "%s: k=%lld blocks and reference", s->sp->name, (long long)k);
    free_k(s);
    return;
  }
  for (int v = 0; v < NV; v++) {
    int L = (int)var[v].layout;
    run_arg a = {s->A, var[v].kernel, s->X[L], s->Y[L], NULL, 0};
    snprintf(what, sizeof what, "%s/%s", var[v].name, lname[L]);
    if (var[v].alg == 0 ? !R->lay[L] : !R->cuda) continue;
    if (var[v].alg &&
        (st = coal_cusparse_spmm_create(s->A, var[v].alg, k, (coal_layout)L,
                                        coal_bvec_data(s->X[L]), coal_bvec_ld(s->X[L]),
                                        coal_bvec_data(s->Y[L]), coal_bvec_ld(s->Y[L]), &a.h))) {
      s->res[v].state = st == COAL_ERR_UNSUPPORTED ? R_UNSUPPORTED : R_ERROR;
      if (st != COAL_ERR_UNSUPPORTED)
        R->failed = 1, cli_fail(R->ctx, st, "%s: k=%lld %s", s->sp->name, (long long)k, what);
      continue;
    }
    measure(R, s, what, &a, &s->res[v]);
    if (a.h) coal_cusparse_spmm_destroy(a.h);
  }
  selection(R, s);
  int ob = fastest(s, 0, -1);
  double bc = us_of(s, fastest(s, 1, -1)), ratio = bc / us_of(s, ob);
  report_k(R, s, bc);
  if (isfinite(ratio) && !(ratio >= m->min_ratio)) m->min_ratio = ratio, m->min_ratio_k = k;
  if (k == R->ktarget && ob >= 0) {
    m->have = 1, m->best_v = ob, m->us = s->res[ob].us, m->ratio = ratio;
    m->pct = 100.0 * s->floor_b / (m->us * 1e3) / R->copy_gbps;
    m->spmv4 = m->us / (double)k / (s->spmv.us / 4.0);
    m->col_row = us_of(s, fastest(s, 0, 0)) / us_of(s, fastest(s, 0, 1));
  }
  free_k(s);
}

/* ---- one matrix -------------------------------------------------------------------------- */

static void bench_matrix(spmm_run *R, const cli_spec *sp, int from_dir, msum *m) {
  mstate s;
  memset(&s, 0, sizeof s);
  s.sp = sp;
  m->name = sp->name, m->min_ratio = NAN;
  coal_status st;
  if ((st = cli_spec_load(R->ctx, sp, R->o.c.dtype, &s.A))) {
    if (from_dir && st == COAL_ERR_UNSUPPORTED)
      printf("\n== %s: skipped (%s)\n", sp->name, coal_ctx_last_error(R->ctx));
    else
      R->failed = 1, cli_fail(R->ctx, st, "cannot load '%s'", sp->text);
    goto done;
  }
  if ((st = cli_spec_load(R->hctx, sp, R->o.c.dtype, &s.Ah))) {
    R->failed = 1, cli_fail(R->hctx, st, "cannot load '%s' on the host", sp->text);
    goto done;
  }
  coal_mat_size(s.A, &s.rows, &s.cols, &s.nnz);
  /* SpMV with COAL_SPMV_AUTO on a one-column block, checked like the SpMM runs */
  int need[2] = {1, 0};
  s.k = 1;
  if ((st = coal_mat_set_swift_height(s.A, (int)R->height)) || (st = prepare_k(R, &s, need))) {
    R->failed = 1, cli_fail(R->ctx, st, "%s: SpMV", sp->name);
    free_k(&s);
    goto done;
  }
  run_arg a = {s.A, AUTO, s.X[0], s.Y[0], NULL, 1};
  measure(R, &s, "SpMV", &a, &s.spmv);
  free_k(&s);
  printf("\n== %s: %lld x %lld, %lld nonzeros, %s\n", sp->name, (long long)s.rows,
         (long long)s.cols, (long long)s.nnz, cli_dtype_name(R->o.c.dtype));
  printf("   SpMV auto=%s: %.2f us, check %s (%.1e)\n",
         coal_spmv_kernel_name(coal_spmv_select(s.A)), s.spmv.us, s.spmv.ok ? "ok" : "FAIL",
         s.spmv.err);
  printf("   %5s  %-16s %-6s %10s %9s %7s %9s %7s %7s  %s\n", "k", "kernel", "layout", "us", "GB/s",
         "%copy", "us/RHS", "ratio", "SpMV/4", "check");
  for (int i = 0; i < R->nk; i++) bench_k(R, &s, R->ks[i], m);
  fflush(NULL);
done:
  coal_mat_destroy(&s.A), coal_mat_destroy(&s.Ah);
}

/* ---- driver ------------------------------------------------------------------------------ */

static void summary(spmm_run *R, const msum *ms, int n) {
  char c[7][48];
  printf("\n== summary at k = %lld (best of our kernels in any layout; ratio = best cuSPARSE "
         "time / ours; min ratio over all k)\n",
         (long long)R->ktarget);
  printf("   %-24s %-14s %10s %9s %7s %7s %7s %7s  %s\n", "matrix", "best", "us", "us/RHS", "%copy",
         "ratio", "SpMV/4", "col/row", "min ratio (k)");
  if (R->json) fprintf(R->json, "\n  ],\n  \"summary\": [");
  for (int i = 0, first = 1; i < n; i++) {
    const msum *m = &ms[i];
    if (!m->have) continue;
    const char *bn = var[m->best_v].name, *bl = lname[var[m->best_v].layout];
    double num[7] = {
        m->us, m->us / (double)R->ktarget, m->pct, m->ratio, m->spmv4, m->col_row, m->min_ratio};
    const char *fmt[7] = {"%.2f", "%.3f", "%.1f%%", "%.2fx", "%.2f", "%.2f", "%.2fx"};
    for (int j = 0; j < 7; j++) cli_fmt_num(c[j], sizeof c[j], num[j], fmt[j]);
    printf("   %-24s %-9s%-5s %10s %9s %7s %7s %7s %7s  %s", m->name, bn, bl, c[0], c[1], c[2],
           c[3], c[4], c[5], c[6]);
    printf(m->min_ratio_k ? " (k=%lld)\n" : "\n", (long long)m->min_ratio_k);
    if (!R->json) continue;
    fprintf(R->json, "%s\n    {\"matrix\": ", first ? "" : ",");
    cli_json_str(R->json, m->name);
    fprintf(R->json, ", \"k\": %lld, \"best\": \"%s\", \"layout\": \"%s\"", (long long)R->ktarget,
            bn, bl);
    const char *key[7] = {"us",    "us_per_rhs",   "pct_copy", "ratio_vs_cusparse",
                          "spmv4", "col_over_row", "min_ratio"};
    for (int j = 0; j < 7; j++)
      fprintf(R->json, ", \"%s\": ", key[j]), cli_put_num(R->json, num[j], "null");
    fprintf(R->json, ", \"min_ratio_k\": %lld}", (long long)m->min_ratio_k);
    first = 0;
  }
  double sel[3] = {R->cases ? 100.0 * R->matches / R->cases : NAN,
                   R->t_oracle > 0 ? 100.0 * (R->t_pick / R->t_oracle - 1.0) : NAN,
                   R->worst_case[0] ? R->worst : NAN};
  for (int j = 0; j < 3; j++) cli_fmt_num(c[j], sizeof c[j], sel[j], "%.1f%%");
  printf("selection (coal_spmm_select against the oracle, the fastest of swift, rowsplit and "
         "merge for each matrix, k and layout):\n   %d cases, auto == oracle in %d (%s); time "
         "lost vs the oracle: total %s, worst %s (%s)",
         R->cases, R->matches, c[0], c[1], c[2], R->worst_case[0] ? R->worst_case : "-");
  if (R->unavailable) printf("; in %d cases the picked kernel did not run", R->unavailable);
  printf("\n");
  if (R->json) {
    fprintf(R->json, "],\n  \"selection\": {\"cases\": %d, \"matches\": %d, \"unavailable\": %d",
            R->cases, R->matches, R->unavailable);
    const char *key[3] = {"accuracy_pct", "total_lost_pct", "worst_lost_pct"};
    for (int j = 0; j < 3; j++)
      fprintf(R->json, ", \"%s\": ", key[j]), cli_put_num(R->json, sel[j], "null");
    fprintf(R->json, ", \"worst_case\": ");
    cli_json_str(R->json, R->worst_case);
    fprintf(R->json, "}\n}\n");
  }
}

int cli_bench_spmm(int argc, char **argv) {
  spmm_run R;
  memset(&R, 0, sizeof R);
  cli_bench_opts *o = &R.o;
  o->c.backend = COAL_BACKEND_AUTO, o->c.dtype = COAL_F64, o->reps = 30;
  R.height = 8, R.json_first = 1, R.copy_gbps = NAN, R.lay[0] = R.lay[1] = 1;
  R.nk = cli_parse_i64_list("1,4,8,16,32,64,128", 1, K_LIMIT, R.ks, MAX_KS);
  int rc = CLI_USAGE;
  msum *ms = NULL;
  if (!(o->list.specs = calloc((size_t)argc + 3, sizeof(cli_spec))))
    return cli_fail(NULL, COAL_ERR_MEMORY, "bench spmm");
  for (int i = 1; i < argc; i++) {
    const char *v = NULL;
    int r = cli_bench_opt(argc, argv, &i, o);
    if (r < 0) goto out;
    if (r > 0) continue;
    if ((r = cli_opt_value(argc, argv, &i, "--height", &v))) {
      if (r < 0) goto out;
      if (cli_parse_i64(v, &R.height) || R.height < 1 || R.height > 32) {
        cli_usage_error("--height: '%s' is not an integer in 1..32", v);
        goto out;
      }
    } else if ((r = cli_opt_value(argc, argv, &i, "--k", &v))) {
      if (r < 0) goto out;
      if ((R.nk = cli_parse_i64_list(v, 1, K_LIMIT, R.ks, MAX_KS)) < 0) {
        cli_usage_error("--k: '%s' is not a list of distinct integers in 1..%d (at most %d)", v,
                        K_LIMIT, MAX_KS);
        goto out;
      }
    } else if ((r = cli_opt_value(argc, argv, &i, "--layout", &v))) {
      if (r < 0) goto out;
      int col = !strcmp(v, "col"), row = !strcmp(v, "row"), both = !strcmp(v, "both");
      if (!col && !row && !both) {
        cli_usage_error("--layout: '%s' is not row, col or both", v);
        goto out;
      }
      R.lay[0] = col || both, R.lay[1] = row || both;
    } else {
      cli_usage_error("bench spmm: unknown option '%s'", argv[i]);
      goto out;
    }
  }
  if (o->list.n == 0 && !o->dir && !o->large) {
    cli_usage_error("bench spmm: no matrices (give SPECs, --matrices DIR or --large)");
    goto out;
  }
  rc = CLI_FAIL;
  R.ktarget = R.ks[0];
  for (int i = 0; i < R.nk; i++)
    if (R.ks[i] == 32 || (R.ktarget != 32 && R.ks[i] > R.ktarget)) R.ktarget = R.ks[i];
  if (cli_matrix_list_finish(&o->list, o->dir, o->large) != CLI_OK ||
      !(ms = calloc((size_t)o->list.n + 1, sizeof *ms)) ||
      cli_ctx_create(o->c.backend, &R.ctx) != CLI_OK ||
      cli_ctx_create(COAL_BACKEND_HOST, &R.hctx) != CLI_OK ||
      (o->csv_path && !(R.csv = cli_open_output(o->csv_path))) ||
      (o->json_path && !(R.json = cli_open_output(o->json_path))))
    goto out;
  R.cuda = coal_ctx_backend(R.ctx) == COAL_BACKEND_CUDA;
  coal_status st;
  if (R.cuda && (st = coal_bench_copy_bandwidth(R.ctx, COPY_BYTES, &R.copy_gbps))) {
    cli_fail(R.ctx, st, "copy bandwidth");
    R.copy_gbps = NAN, R.failed = 1;
  }
  char bw[32], kl[MAX_KS * 6] = "";
  for (int i = 0; i < R.nk; i++)
    snprintf(kl + strlen(kl), sizeof kl - strlen(kl), "%s%lld", i ? "," : "", (long long)R.ks[i]);
  cli_fmt_num(bw, sizeof bw, R.copy_gbps, "%.1f GB/s");
  const char *dev = coal_ctx_device_name(R.ctx), *be = coal_backend_name(coal_ctx_backend(R.ctx));
  printf("coalesce bench spmm: %d matri%s, k = %s, layouts %s, backend %s (%s), %s, %lld reps "
         "after %d warm-up runs, Swift H=%lld\n",
         o->list.n, o->list.n == 1 ? "x" : "ces", kl,
         R.lay[0] && R.lay[1] ? "col,row" : lname[R.lay[1]], be, dev, cli_dtype_name(o->c.dtype),
         (long long)o->reps, WARMUP, (long long)R.height);
  printf("copy bandwidth (256 MiB device copy, read + write): %s%s\n", bw,
         R.cuda ? "" : " (host backend: not measured, no cuSPARSE)");
  if (R.csv) fprintf(R.csv, "%s\n", col_names);
  if (R.json) {
    fprintf(R.json, "{\"device\": ");
    cli_json_str(R.json, dev);
    fprintf(R.json, ", \"backend\": \"%s\", \"dtype\": \"%s\", \"copy_gbps\": ", be,
            cli_dtype_name(o->c.dtype));
    cli_put_num(R.json, R.copy_gbps, "null");
    fprintf(R.json,
            ", \"reps\": %lld, \"warmup\": %d, \"height\": %lld, \"k\": [%s],\n"
            "  \"results\": [",
            (long long)o->reps, WARMUP, (long long)R.height, kl);
  }
  for (int i = 0; i < o->list.n; i++)
    bench_matrix(&R, &o->list.specs[i], cli_matrix_list_from_dir(&o->list, i), &ms[i]);
  summary(&R, ms, o->list.n);
  rc = R.failed ? CLI_FAIL : CLI_OK;
  if (R.failed) fprintf(stderr, "coalesce bench spmm: some kernels failed (see above)\n");
out:
  if (R.csv && fclose(R.csv)) rc = CLI_FAIL;
  if (R.json && fclose(R.json)) rc = CLI_FAIL;
  coal_ctx_destroy(&R.ctx), coal_ctx_destroy(&R.hctx);
  cli_matrix_list_free(&o->list);
  free(ms);
  return rc;
}
