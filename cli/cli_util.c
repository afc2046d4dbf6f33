/* Helpers of the `coalesce` tool: option parsing, matrix specs, contexts, errors, checks. */
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- option parsing ---------------------------------------------------------------------- */

int cli_usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("coalesce: ", stderr);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputs("\n(run 'coalesce help' for the usage)\n", stderr);
  return CLI_USAGE;
}

int cli_opt_value(int argc, char **argv, int *i, const char *name, const char **val) {
  const char *a = argv[*i];
  size_t len = strlen(name);
  if (strncmp(a, name, len) != 0) return 0;
  if (a[len] == '=') {
    *val = a + len + 1;
    return 1;
  }
  if (a[len] != '\0') return 0;
  if (*i + 1 >= argc) {
    cli_usage_error("option %s needs a value", name);
    return -1;
  }
  *i += 1;
  *val = argv[*i];
  return 1;
}

int cli_parse_common(int argc, char **argv, int *i, cli_common *c) {
  const char *v = NULL;
  int r = cli_opt_value(argc, argv, i, "--backend", &v);
  if (r < 0) return -1;
  if (r > 0) {
    if (coal_backend_parse(v, &c->backend) != COAL_SUCCESS) {
      cli_usage_error("unknown backend '%s' (expected host, cuda or auto)", v);
      return -1;
    }
    return 1;
  }
  r = cli_opt_value(argc, argv, i, "--dtype", &v);
  if (r < 0) return -1;
  if (r > 0) {
    if (!strcmp(v, "f64"))
      c->dtype = COAL_F64;
    else if (!strcmp(v, "f32"))
      c->dtype = COAL_F32;
    else {
      cli_usage_error("unknown dtype '%s' (expected f64 or f32)", v);
      return -1;
    }
    return 1;
  }
  return 0;
}

int cli_int_opt(int argc, char **argv, int *i, const char *name, int64_t min, int64_t max,
                int64_t *x) {
  const char *v = NULL;
  int r = cli_opt_value(argc, argv, i, name, &v);
  if (r > 0 && (cli_parse_i64(v, x) || *x < min || *x > max)) {
    cli_usage_error("%s: '%s' is not an integer in %lld..%lld", name, v, (long long)min,
                    (long long)max);
    return -1;
  }
  return r;
}

int cli_parse_i64(const char *s, int64_t *v) {
  if (!s || !*s) return -1;
  char *end = NULL;
  errno = 0;
  long long x = strtoll(s, &end, 10);
  if (errno || *end != '\0') return -1;
  *v = (int64_t)x;
  return 0;
}

int cli_parse_f64(const char *s, double *v) {
  if (!s || !*s) return -1;
  char *end = NULL;
  errno = 0;
  double x = strtod(s, &end);
  if (errno || *end != '\0' || !isfinite(x)) return -1;
  *v = x;
  return 0;
}

int cli_parse_i64_list(const char *s, int64_t min, int64_t max, int64_t *out, int cap) {
  int n = 0;
  for (const char *p = s ? s : "";;) {
    char tok[32];
    size_t len = strcspn(p, ",");
    int64_t v;
    if (len == 0 || len >= sizeof tok || n == cap) return -1;
    memcpy(tok, p, len);
    tok[len] = '\0';
    if (cli_parse_i64(tok, &v) || v < min || v > max) return -1;
    for (int i = 0; i < n; i++)
      if (out[i] == v) return -1;
    out[n++] = v;
    if (!p[len]) return n;
    p += len + 1;
  }
}

/* ---- matrix specs ------------------------------------------------------------------------ */

const char cli_spec_help[] =
    "Matrix specs (wherever a matrix is expected):\n"
    "  FILE.mtx, FILE.mtx.gz        Matrix Market file (coordinate real/integer/pattern)\n"
    "  lap2d:N                      2-D 5-point Laplacian on an N x N grid\n"
    "  beam:N                       thin beam in bending, N nodes: the 1-D Laplacian squared\n"
    "                               (5-point; condition 0.16 (N+1)^4: 1.3e9 at N = 300)\n"
    "  plate:N                      thin plate in bending on an N x N grid: lap2d:N squared\n"
    "                               (13-point biharmonic; condition 0.16 (N+1)^4)\n"
    "  lap3d:N                      3-D 7-point Laplacian on an N^3 grid\n"
    "  lap3d27:N                    3-D 27-point Laplacian on an N^3 grid\n"
    "  aniso:N:ex:ey:ez             3-D 7-point anisotropic Laplacian, coefficients > 0\n"
    "  powerlaw:ROWS:MEAN[:SEED]    random power-law matrix (gamma 2.5), MEAN nonzeros/row\n"
    "  spd:ROWS:MEAN[:SEED]         random sparse SPD, about MEAN off-diagonals per row\n"
    "  elast3d:N[:NU]               3-D linear elasticity, N^3 trilinear hexahedra on the unit\n"
    "                               cube, face x = 0 clamped, Poisson ratio NU (0.3); 3 N (N+1)^2\n"
    "                               rows, 3 unknowns a node (about 6 million rows at N = 125)\n";

static const struct {
  const char *prefix;
  cli_spec_kind kind;
  int min_fields, max_fields; /* fields after the prefix */
  const char *form;
} generators[] = {
    {"lap2d", CLI_SPEC_LAP2D, 1, 1, "lap2d:N"},
    {"beam", CLI_SPEC_BEAM, 1, 1, "beam:N"},
    {"plate", CLI_SPEC_PLATE, 1, 1, "plate:N"},
    {"lap3d", CLI_SPEC_LAP3D, 1, 1, "lap3d:N"},
    {"lap3d27", CLI_SPEC_LAP3D27, 1, 1, "lap3d27:N"},
    {"aniso", CLI_SPEC_ANISO, 4, 4, "aniso:N:ex:ey:ez"},
    {"powerlaw", CLI_SPEC_POWERLAW, 2, 3, "powerlaw:ROWS:MEAN[:SEED]"},
    {"spd", CLI_SPEC_SPD, 2, 3, "spd:ROWS:MEAN[:SEED]"},
    {"elast3d", CLI_SPEC_ELAST3D, 1, 2, "elast3d:N[:NU]"},
};
#define NGEN ((int)(sizeof generators / sizeof generators[0]))
#define MAXF 4

static int spec_error(const char *text, const char *form, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "coalesce: bad matrix spec '%s': ", text);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  if (form) fprintf(stderr, " (expected %s)", form);
  fputc('\n', stderr);
  return CLI_USAGE;
}

static int ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && !strcmp(s + a - b, suffix);
}

static void file_name(const char *path, char *out, size_t len) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  snprintf(out, len, "%s", base);
  char *dot = strstr(out, ".mtx");
  if (dot && (!strcmp(dot, ".mtx") || !strcmp(dot, ".mtx.gz"))) *dot = '\0';
  if (!out[0]) snprintf(out, len, "%s", path);
}

/* Size limit so that the generated matrix stays within 32-bit indices (checked again by the
 * library, which reports COAL_ERR_OVERFLOW). */
static int grid_ok(int64_t n, int dims) {
  double rows = pow((double)n, dims);
  return n >= 1 && rows <= (double)INT32_MAX;
}

int cli_spec_parse(const char *text, cli_spec *sp) {
  memset(sp, 0, sizeof *sp);
  sp->text = text;
  sp->seed = 1;
  if (!text || !*text) return spec_error("", NULL, "empty");
  const char *colon = strchr(text, ':');
  /* An existing file wins, whatever its name; so do names that look like files. */
  if (!colon || access(text, F_OK) == 0 || ends_with(text, ".mtx") || ends_with(text, ".mtx.gz") ||
      strchr(text, '/')) {
    for (int g = 0; g < NGEN && !colon; g++)
      if (!strcmp(text, generators[g].prefix) && access(text, F_OK) != 0)
        return spec_error(text, generators[g].form, "the generator needs parameters");
    sp->kind = CLI_SPEC_FILE;
    file_name(text, sp->name, sizeof sp->name);
    return CLI_OK;
  }
  size_t plen = (size_t)(colon - text);
  int g = 0;
  while (g < NGEN &&
         !(strlen(generators[g].prefix) == plen && !strncmp(generators[g].prefix, text, plen)))
    g++;
  if (g == NGEN)
    return spec_error(text, NULL,
                      "unknown generator '%.*s' (known: lap2d, beam, plate, lap3d, lap3d27, "
                      "aniso, powerlaw, spd, elast3d; files end in .mtx or .mtx.gz)",
                      (int)plen, text);
  const char *form = generators[g].form;
  /* split the fields after the prefix */
  char buf[256];
  if (strlen(colon + 1) >= sizeof buf) return spec_error(text, form, "too long");
  snprintf(buf, sizeof buf, "%s", colon + 1);
  char *field[MAXF + 1];
  int nf = 0;
  char *p = buf;
  for (;;) {
    if (nf > MAXF) break;
    field[nf++] = p;
    char *c = strchr(p, ':');
    if (!c) break;
    *c = '\0';
    p = c + 1;
  }
  if (nf < generators[g].min_fields || nf > generators[g].max_fields)
    return spec_error(text, form, "%d parameter%s given", nf, nf == 1 ? "" : "s");
  sp->kind = generators[g].kind;
  snprintf(sp->name, sizeof sp->name, "%s", text);
  int64_t n;
  if (cli_parse_i64(field[0], &n) || n < 1)
    return spec_error(text, form, "'%s' is not a positive integer", field[0]);
  sp->n = n;
  switch (sp->kind) {
  case CLI_SPEC_BEAM:
    if (!grid_ok(n, 1)) return spec_error(text, form, "N = %lld is too large", (long long)n);
    break;
  case CLI_SPEC_LAP2D:
  case CLI_SPEC_PLATE:
    if (!grid_ok(n, 2)) return spec_error(text, form, "N = %lld is too large", (long long)n);
    break;
  case CLI_SPEC_LAP3D:
  case CLI_SPEC_LAP3D27:
    if (!grid_ok(n, 3)) return spec_error(text, form, "N = %lld is too large", (long long)n);
    break;
  case CLI_SPEC_ANISO:
    if (!grid_ok(n, 3)) return spec_error(text, form, "N = %lld is too large", (long long)n);
    for (int k = 0; k < 3; k++)
      if (cli_parse_f64(field[1 + k], &sp->e[k]) || !(sp->e[k] > 0))
        return spec_error(text, form, "coefficient '%s' is not a positive number", field[1 + k]);
    break;
  case CLI_SPEC_ELAST3D:
    /* 81 entries a row at most: rows and nonzeros within 32-bit indices */
    if (81.0 * 3.0 * (double)n * (double)(n + 1) * (double)(n + 1) > (double)INT32_MAX)
      return spec_error(text, form, "N = %lld is too large", (long long)n);
    sp->e[0] = 0.3;
    if (nf == 2 && (cli_parse_f64(field[1], &sp->e[0]) || !(sp->e[0] >= 0 && sp->e[0] < 0.5)))
      return spec_error(text, form, "Poisson ratio '%s' is not a number in [0, 0.5)", field[1]);
    break;
  case CLI_SPEC_POWERLAW:
  case CLI_SPEC_SPD:
    if (n > INT32_MAX) return spec_error(text, form, "ROWS = %lld is too large", (long long)n);
    if (cli_parse_f64(field[1], &sp->mean) || !(sp->mean > 0) || sp->mean > (double)n)
      return spec_error(text, form, "MEAN '%s' is not a number in (0, ROWS]", field[1]);
    if (nf == 3) {
      int64_t s;
      if (cli_parse_i64(field[2], &s) || s < 0)
        return spec_error(text, form, "SEED '%s' is not a non-negative integer", field[2]);
      sp->seed = (uint64_t)s;
    }
    break;
  case CLI_SPEC_FILE: break;
  }
  return CLI_OK;
}

coal_status cli_spec_load(coal_ctx ctx, const cli_spec *sp, coal_dtype dtype, coal_mat *A) {
  int64_t n = sp->n;
  switch (sp->kind) {
  case CLI_SPEC_FILE: return coal_mat_read_mm(ctx, sp->text, dtype, A);
  case CLI_SPEC_LAP2D: return coal_gen_laplace2d(ctx, n, n, dtype, A);
  case CLI_SPEC_BEAM: return coal_gen_beam(ctx, n, dtype, A);
  case CLI_SPEC_PLATE: return coal_gen_plate2d(ctx, n, n, dtype, A);
  case CLI_SPEC_LAP3D: return coal_gen_laplace3d(ctx, n, n, n, 7, dtype, A);
  case CLI_SPEC_LAP3D27: return coal_gen_laplace3d(ctx, n, n, n, 27, dtype, A);
  case CLI_SPEC_ANISO:
    return coal_gen_aniso3d(ctx, n, n, n, sp->e[0], sp->e[1], sp->e[2], dtype, A);
  case CLI_SPEC_POWERLAW: return coal_gen_powerlaw(ctx, n, sp->mean, 2.5, sp->seed, dtype, A);
  case CLI_SPEC_SPD: return coal_gen_random_spd(ctx, n, sp->mean, sp->seed, dtype, A);
  case CLI_SPEC_ELAST3D: return coal_gen_elast3d(ctx, n, sp->e[0], 1, dtype, A);
  }
  return COAL_ERR_ARG;
}

void cli_spec_describe(const cli_spec *sp, char *buf, size_t len) {
  long long n = (long long)sp->n;
  switch (sp->kind) {
  case CLI_SPEC_FILE: snprintf(buf, len, "Matrix Market file %s", sp->text); break;
  case CLI_SPEC_LAP2D: snprintf(buf, len, "2-D 5-point Laplacian, %lld x %lld grid", n, n); break;
  case CLI_SPEC_BEAM:
    snprintf(buf, len, "thin beam (5-point biharmonic, 1-D Laplacian squared), %lld nodes", n);
    break;
  case CLI_SPEC_PLATE:
    snprintf(buf, len, "thin plate (13-point biharmonic, lap2d squared), %lld x %lld grid", n, n);
    break;
  case CLI_SPEC_LAP3D: snprintf(buf, len, "3-D 7-point Laplacian, %lld^3 grid", n); break;
  case CLI_SPEC_LAP3D27: snprintf(buf, len, "3-D 27-point Laplacian, %lld^3 grid", n); break;
  case CLI_SPEC_ANISO:
    snprintf(buf, len, "3-D anisotropic Laplacian (%g, %g, %g), %lld^3 grid", sp->e[0], sp->e[1],
             sp->e[2], n);
    break;
  case CLI_SPEC_POWERLAW:
    snprintf(buf, len, "random power-law matrix, gamma 2.5, mean %g per row, seed %llu", sp->mean,
             (unsigned long long)sp->seed);
    break;
  case CLI_SPEC_SPD:
    snprintf(buf, len, "random sparse SPD matrix, mean %g off-diagonals per row, seed %llu",
             sp->mean, (unsigned long long)sp->seed);
    break;
  case CLI_SPEC_ELAST3D:
    snprintf(buf, len,
             "3-D linear elasticity, %lld^3 trilinear hexahedra, face x = 0 clamped, Poisson "
             "ratio %g",
             n, sp->e[0]);
    break;
  }
}

/* ---- contexts and errors ----------------------------------------------------------------- */

int cli_ctx_create(coal_backend b, coal_ctx *ctx) {
  coal_status st = coal_ctx_create(b, ctx);
  if (st == COAL_SUCCESS) return CLI_OK;
  const char *env = getenv("COALESCE_BACKEND");
  if (b == COAL_BACKEND_AUTO && st == COAL_ERR_ARG && env)
    fprintf(stderr, "coalesce: COALESCE_BACKEND='%s' is not host, cuda or auto\n", env);
  else if (st == COAL_ERR_NOT_COMPILED)
    fprintf(stderr, "coalesce: cannot use the %s backend: this build has no CUDA support\n",
            coal_backend_name(b == COAL_BACKEND_AUTO ? COAL_BACKEND_CUDA : b));
  else if (st == COAL_ERR_NO_DEVICE)
    fprintf(stderr, "coalesce: cannot use the cuda backend: no usable GPU\n");
  else
    fprintf(stderr, "coalesce: cannot create a %s context: %s\n", coal_backend_name(b),
            coal_status_string(st));
  return CLI_FAIL;
}

int cli_fail(coal_ctx ctx, coal_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("coalesce: ", stderr);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  /* The context's message starts with the status string when it belongs to this failure; an
   * older message (or none) is not shown. */
  const char *msg = ctx ? coal_ctx_last_error(ctx) : "";
  const char *ss = coal_status_string(st);
  if (msg && !strncmp(msg, ss, strlen(ss)))
    fprintf(stderr, ": %s\n", msg);
  else
    fprintf(stderr, ": %s\n", ss);
  return CLI_FAIL;
}

/* ---- numerics ---------------------------------------------------------------------------- */

const char *cli_dtype_name(coal_dtype d) { return d == COAL_F32 ? "f32" : "f64"; }

size_t cli_dtype_size(coal_dtype d) { return d == COAL_F32 ? 4 : 8; }

double cli_byte_floor(int64_t nrows, int64_t ncols, int64_t nnz, coal_dtype dtype) {
  double v = (double)cli_dtype_size(dtype);
  return (double)nnz * (v + 4.0) + 4.0 * ((double)nrows + 1.0) +
         v * ((double)ncols + (double)nrows);
}

double cli_rel_err(const double *y, const double *ref, int64_t n) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < n; i++) {
    if (isnan(y[i]) || isnan(ref[i])) return INFINITY;
    double d = fabs(y[i] - ref[i]);
    if (d > num) num = d;
    if (fabs(ref[i]) > den) den = fabs(ref[i]);
  }
  return den > 0 ? num / den : num;
}

double cli_tolerance(coal_dtype dtype) { return dtype == COAL_F32 ? 1e-5 : 1e-12; }

coal_status cli_bvec_get(coal_bvec X, double *dst) {
  int64_t n = 0;
  CLI_CALL(coal_bvec_size(X, &n, NULL));
  coal_dtype dt = coal_bvec_dtype(X);
  if (dt == COAL_F64) return coal_bvec_get_host(X, dst, COAL_COL_MAJOR, 0);
  float *tmp = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
  if (!tmp) return COAL_ERR_MEMORY;
  coal_status st = coal_bvec_get_host(X, tmp, COAL_COL_MAJOR, 0);
  if (!st)
    for (int64_t i = 0; i < n; i++) dst[i] = tmp[i];
  free(tmp);
  return st;
}

void *cli_random_vector(int64_t n, coal_dtype dtype, uint64_t seed) {
  void *v = malloc(cli_dtype_size(dtype) * (size_t)(n > 0 ? n : 1));
  if (!v) return NULL;
  for (int64_t i = 0; i < n; i++) {
    double r = coal_random_uniform(seed, (uint64_t)i);
    if (dtype == COAL_F64)
      ((double *)v)[i] = r;
    else
      ((float *)v)[i] = (float)r;
  }
  return v;
}

coal_status cli_csr_get(coal_mat A, cli_csr *c) {
  CLI_CALL(coal_mat_size(A, &c->nrows, &c->ncols, &c->nnz));
  c->dtype = coal_mat_dtype(A);
  return coal_mat_host_csr(A, &c->rowptr, &c->colind, &c->values);
}

coal_status cli_csr_reference(coal_mat A, const double *x, double *y) {
  cli_csr c;
  CLI_CALL(cli_csr_get(A, &c));
  for (int64_t i = 0; i < c.nrows; i++) {
    double s = 0;
    for (int32_t p = c.rowptr[i]; p < c.rowptr[i + 1]; p++)
      s += cli_csr_value(&c, p) * x[c.colind[p]];
    y[i] = s;
  }
  return COAL_SUCCESS;
}

coal_status cli_spmv_run(void *arg) {
  const cli_spmv_arg *a = arg;
  return coal_spmv_raw(a->A, a->kernel, 1.0, a->x, 0.0, a->y);
}

/* ---- benchmark output and matrix lists --------------------------------------------------- */

void cli_csv_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

void cli_csv_num(FILE *f, double v, const char *fmt) {
  if (isfinite(v)) fprintf(f, fmt, v);
}

void cli_json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      fprintf(f, "\\%c", ch);
    else if (ch < 0x20)
      fprintf(f, "\\u%04x", ch);
    else
      fputc(ch, f);
  }
  fputc('"', f);
}

void cli_json_num(FILE *f, double v) {
  if (isfinite(v))
    fprintf(f, "%.6g", v);
  else
    fputs("null", f);
}

void cli_put_num(FILE *f, double v, const char *none) {
  if (!isfinite(v))
    fputs(none, f);
  else
    fprintf(f, v == floor(v) && fabs(v) < 1e15 ? "%.0f" : "%.6g", v);
}

void cli_fmt_num(char *buf, size_t len, double v, const char *fmt) {
  if (isfinite(v))
    snprintf(buf, len, fmt, v);
  else
    snprintf(buf, len, "-");
}

FILE *cli_open_output(const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) fprintf(stderr, "coalesce: cannot write '%s': %s\n", path, strerror(errno));
  return f;
}

const char *const cli_large_specs[3] = {"lap3d:128", "lap3d27:100", "powerlaw:1048576:12"};

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* DIR/NAME for every NAME ending in .mtx.gz, sorted. */
static int scan_dir(const char *dir, char ***paths, int *npaths) {
  DIR *d = opendir(dir);
  if (!d) {
    fprintf(stderr, "coalesce: cannot open matrix folder '%s': %s\n", dir, strerror(errno));
    return CLI_FAIL;
  }
  struct dirent *e;
  int cap = 0, rc = CLI_OK;
  while ((e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (len <= 7 || strcmp(e->d_name + len - 7, ".mtx.gz")) continue;
    if (*npaths == cap) {
      cap = cap ? 2 * cap : 64;
      char **p = realloc(*paths, sizeof(char *) * (size_t)cap);
      if (!p) {
        rc = CLI_FAIL;
        break;
      }
      *paths = p;
    }
    size_t n = strlen(dir) + len + 2;
    char *s = malloc(n);
    if (!s) {
      rc = CLI_FAIL;
      break;
    }
    snprintf(s, n, "%s/%s", dir, e->d_name);
    (*paths)[(*npaths)++] = s;
  }
  closedir(d);
  if (rc != CLI_OK) fprintf(stderr, "coalesce: out of memory listing '%s'\n", dir);
  if (*npaths > 1) qsort(*paths, (size_t)*npaths, sizeof(char *), cmp_str);
  return rc;
}

int cli_matrix_list_finish(cli_matrix_list *L, const char *dir, int large) {
  L->nargs = L->n;
  if (dir && scan_dir(dir, &L->paths, &L->ndir) != CLI_OK) return CLI_FAIL;
  cli_spec *all = realloc(L->specs, sizeof *all * ((size_t)L->n + (size_t)L->ndir + 3));
  if (!all) {
    fprintf(stderr, "coalesce: out of memory\n");
    return CLI_FAIL;
  }
  L->specs = all;
  for (int p = 0; p < L->ndir; p++) cli_spec_parse(L->paths[p], &L->specs[L->n++]);
  if (large)
    for (int p = 0; p < 3; p++) cli_spec_parse(cli_large_specs[p], &L->specs[L->n++]);
  return CLI_OK;
}

int cli_matrix_list_add(cli_matrix_list *L, const char *spec) {
  cli_spec *all = realloc(L->specs, sizeof *all * ((size_t)L->n + 1));
  if (!all) {
    fprintf(stderr, "coalesce: out of memory\n");
    return CLI_FAIL;
  }
  L->specs = all;
  return cli_spec_parse(spec, &L->specs[L->n++]) == CLI_OK ? CLI_OK : CLI_FAIL;
}

int cli_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double cli_median(double *v, int64_t n) {
  if (n <= 0) return NAN;
  qsort(v, (size_t)n, sizeof *v, cli_cmp_double);
  int64_t h = n / 2;
  return n % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

int cli_matrix_list_from_dir(const cli_matrix_list *L, int i) {
  return i >= L->nargs && i < L->nargs + L->ndir;
}

void cli_matrix_list_free(cli_matrix_list *L) {
  for (int p = 0; p < L->ndir; p++) free(L->paths[p]);
  free(L->paths);
  free(L->specs);
  memset(L, 0, sizeof *L);
}

int cli_bench_end(cli_bench_opts *b, FILE *csv, FILE *json, coal_ctx *ctx, int rc) {
  if (csv && fclose(csv) && rc == CLI_OK) rc = cli_fail(NULL, COAL_ERR_IO, "writing the CSV");
  if (json && fclose(json) && rc == CLI_OK) rc = cli_fail(NULL, COAL_ERR_IO, "writing the JSON");
  coal_ctx_destroy(ctx);
  cli_matrix_list_free(&b->list); /* frees the specs too */
  return rc;
}

int cli_bench_opt(int argc, char **argv, int *i, cli_bench_opts *o) {
  const char *v = NULL;
  int r = cli_parse_common(argc, argv, i, &o->c);
  if (r) return r;
  if ((r = cli_opt_value(argc, argv, i, "--reps", &v))) {
    if (r > 0 && (cli_parse_i64(v, &o->reps) || o->reps < 1 || o->reps > 1000000)) {
      cli_usage_error("--reps: '%s' is not an integer in 1..1000000", v);
      return -1;
    }
    return r;
  }
  if ((r = cli_opt_value(argc, argv, i, "--matrices", &o->dir))) return r;
  if ((r = cli_opt_value(argc, argv, i, "--csv", &o->csv_path))) return r;
  if ((r = cli_opt_value(argc, argv, i, "--json", &o->json_path))) return r;
  if (!strcmp(argv[*i], "--large")) return o->large = 1;
  if (!strncmp(argv[*i], "--", 2)) return 0;
  return cli_spec_parse(argv[*i], &o->list.specs[o->list.n++]) == CLI_OK ? 1 : -1;
}
