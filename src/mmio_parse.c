/* Matrix Market text parser. Works on a bounded buffer that need not be NUL-terminated:
 * every read is checked against len, numbers are converted from bounded, NUL-terminated
 * copies of their tokens, and storage grows with the entries actually present (the declared
 * count only caps the first reservation). One pass, linear in the input size. */
#include "mmio_internal.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *p;
  size_t n;
} mm_tok;

typedef struct {
  coal_ctx ctx;
  const char *name;
  const char *buf;
  size_t len, pos;
  int64_t line;        /* number of the line last returned by next_line (1-based) */
  const char *ls, *le; /* that line, without its newline and trailing carriage returns */
} mm_cursor;

/* Records "NAME line N: message" on the context and returns code. */
static coal_status fail(const mm_cursor *c, int64_t line, coal_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static coal_status fail(const mm_cursor *c, int64_t line, coal_status code, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return COAL_ERROR(c->ctx, code, "%.300s line %lld: %s", c->name, (long long)line, msg);
}

/* Printable, truncated copy of a token for messages (input bytes may be anything). */
static const char *show(mm_tok t, char out[48]) {
  size_t k = 0;
  for (size_t i = 0; i < t.n && k < 40; i++) {
    unsigned char ch = (unsigned char)t.p[i];
    out[k++] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : '?';
  }
  if (t.n > 40) out[k++] = '.', out[k++] = '.', out[k++] = '.';
  out[k] = '\0';
  return out;
}

static int is_space(char ch) {
  return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f';
}

static int next_line(mm_cursor *c) {
  if (c->pos >= c->len) return 0;
  const char *s = c->buf + c->pos;
  size_t rem = c->len - c->pos;
  const char *nl = memchr(s, '\n', rem);
  size_t n = nl ? (size_t)(nl - s) : rem;
  c->pos += nl ? n + 1 : n;
  c->line++;
  c->ls = s;
  c->le = s + n;
  while (c->le > c->ls && c->le[-1] == '\r') c->le--;
  return 1;
}

/* Next line that is neither blank nor a comment ('%' as first non-blank character). */
static int content_line(mm_cursor *c) {
  while (next_line(c)) {
    const char *p = c->ls;
    while (p < c->le && is_space(*p)) p++;
    if (p < c->le && *p != '%') return 1;
  }
  return 0;
}

/* Splits [s, e) at blanks; stores up to maxt tokens and returns the total count. */
static int split(const char *s, const char *e, mm_tok *t, int maxt) {
  int count = 0;
  while (s < e) {
    while (s < e && is_space(*s)) s++;
    if (s == e) break;
    const char *b = s;
    while (s < e && !is_space(*s)) s++;
    if (count < maxt) t[count].p = b, t[count].n = (size_t)(s - b);
    if (count < 1000000) count++;
  }
  return count;
}

static int tok_is(mm_tok t, const char *word) {
  size_t n = strlen(word);
  if (t.n != n) return 0;
  for (size_t i = 0; i < n; i++) {
    char a = t.p[i];
    if (a >= 'A' && a <= 'Z') a = (char)(a - 'A' + 'a');
    if (a != word[i]) return 0;
  }
  return 1;
}

enum { NUM_OK = 0, NUM_BAD = 1, NUM_RANGE = 2, NUM_NONFINITE = 3 };

/* Decimal integer with optional sign; NUM_RANGE beyond int64. */
static int parse_i64(mm_tok t, int64_t *out) {
  size_t k = 0;
  int neg = 0, ovf = 0;
  if (k < t.n && (t.p[k] == '+' || t.p[k] == '-')) neg = t.p[k++] == '-';
  if (k == t.n) return NUM_BAD;
  uint64_t acc = 0;
  for (; k < t.n; k++) {
    unsigned d = (unsigned)((unsigned char)t.p[k] - '0');
    if (d > 9) return NUM_BAD;
    if (acc > (UINT64_MAX - d) / 10)
      ovf = 1;
    else
      acc = acc * 10 + d;
  }
  if (ovf || acc > (uint64_t)INT64_MAX + (uint64_t)neg) return NUM_RANGE;
  if (neg)
    *out = acc == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)acc;
  else
    *out = (int64_t)acc;
  return NUM_OK;
}

/* Decimal floating point (digits, sign, point, exponent). "nan"/"inf" spellings and values
 * that overflow double give NUM_NONFINITE. */
static int parse_real(mm_tok t, double *out) {
  char tmp[256];
  size_t k = 0;
  if (t.n >= sizeof tmp) return NUM_BAD;
  if (k < t.n && (t.p[k] == '+' || t.p[k] == '-')) k++;
  mm_tok rest = {t.p + k, t.n - k};
  if (tok_is(rest, "nan") || tok_is(rest, "inf") || tok_is(rest, "infinity")) return NUM_NONFINITE;
  for (size_t i = 0; i < t.n; i++) {
    char ch = t.p[i];
    if (!((ch >= '0' && ch <= '9') || ch == '.' || ch == '+' || ch == '-' || ch == 'e' ||
          ch == 'E'))
      return NUM_BAD;
  }
  memcpy(tmp, t.p, t.n);
  tmp[t.n] = '\0';
  char *end = NULL;
  double x = strtod(tmp, &end);
  if (t.n == 0 || end != tmp + t.n) return NUM_BAD;
  if (!isfinite(x)) return NUM_NONFINITE;
  *out = x;
  return NUM_OK;
}

static coal_status parse_banner(mm_cursor *c, coal_mm *mm) {
  static const char magic[] = "%%MatrixMarket";
  const size_t ml = sizeof magic - 1;
  if (!next_line(c))
    return fail(c, 1, COAL_ERR_FORMAT, "empty input: missing %%%%MatrixMarket banner");
  size_t n = (size_t)(c->le - c->ls);
  if (n < ml || memcmp(c->ls, magic, ml) != 0 || (n > ml && !is_space(c->ls[ml])))
    return fail(c, c->line, COAL_ERR_FORMAT,
                "missing banner: the first line must start with %%%%MatrixMarket");
  mm_tok t[5];
  char s[48];
  int nt = split(c->ls + ml, c->le, t, 5);
  if (nt < 4)
    return fail(c, c->line, COAL_ERR_FORMAT,
                "incomplete banner: expected '%%%%MatrixMarket matrix FORMAT FIELD SYMMETRY'");
  if (nt > 4)
    return fail(c, c->line, COAL_ERR_FORMAT, "unexpected text '%s' after the banner",
                show(t[4], s));
  if (!tok_is(t[0], "matrix"))
    return fail(c, c->line, COAL_ERR_FORMAT, "unknown object '%s' (expected 'matrix')",
                show(t[0], s));
  if (tok_is(t[1], "coordinate"))
    mm->format = COAL_MM_COORDINATE;
  else if (tok_is(t[1], "array"))
    mm->format = COAL_MM_ARRAY;
  else
    return fail(c, c->line, COAL_ERR_FORMAT, "unknown format '%s' (expected coordinate or array)",
                show(t[1], s));
  int complex_field = 0, hermitian = 0;
  if (tok_is(t[2], "real") || tok_is(t[2], "double"))
    mm->field = COAL_MM_REAL;
  else if (tok_is(t[2], "integer"))
    mm->field = COAL_MM_INTEGER;
  else if (tok_is(t[2], "pattern"))
    mm->field = COAL_MM_PATTERN;
  else if (tok_is(t[2], "complex"))
    complex_field = 1;
  else
    return fail(c, c->line, COAL_ERR_FORMAT,
                "unknown field '%s' (expected real, integer, pattern or complex)", show(t[2], s));
  if (tok_is(t[3], "general"))
    mm->symmetry = COAL_MM_GENERAL;
  else if (tok_is(t[3], "symmetric"))
    mm->symmetry = COAL_MM_SYMMETRIC;
  else if (tok_is(t[3], "skew-symmetric"))
    mm->symmetry = COAL_MM_SKEW;
  else if (tok_is(t[3], "hermitian"))
    hermitian = 1;
  else
    return fail(c, c->line, COAL_ERR_FORMAT,
                "unknown symmetry '%s' (expected general, symmetric, skew-symmetric or "
                "hermitian)",
                show(t[3], s));
  if (complex_field || hermitian)
    return fail(c, c->line, COAL_ERR_UNSUPPORTED,
                "complex matrices are not supported (%s field, %s symmetry)",
                complex_field ? "complex" : "real", hermitian ? "hermitian" : "non-hermitian");
  if (mm->format == COAL_MM_ARRAY && mm->field == COAL_MM_PATTERN)
    return fail(c, c->line, COAL_ERR_FORMAT, "the pattern field is not allowed in array format");
  return COAL_SUCCESS;
}

static coal_status parse_size(mm_cursor *c, coal_mm *mm) {
  static const char *const what[3] = {"rows", "columns", "entries"};
  int want = mm->format == COAL_MM_COORDINATE ? 3 : 2;
  if (!content_line(c))
    return fail(c, c->line + 1, COAL_ERR_FORMAT, "missing size line (end of input)");
  mm_tok t[3];
  char s[48];
  int nt = split(c->ls, c->le, t, 3);
  if (nt != want)
    return fail(c, c->line, COAL_ERR_FORMAT, "size line: expected %d numbers (%s), found %d fields",
                want, want == 3 ? "rows columns entries" : "rows columns", nt);
  int64_t v[3] = {0, 0, 0};
  for (int k = 0; k < want; k++) {
    int r = parse_i64(t[k], &v[k]);
    if (r == NUM_BAD)
      return fail(c, c->line, COAL_ERR_FORMAT, "size line: %s '%s' is not an integer", what[k],
                  show(t[k], s));
    if (r == NUM_RANGE)
      return fail(c, c->line, COAL_ERR_OVERFLOW, "size line: %s '%s' is too large", what[k],
                  show(t[k], s));
    if (v[k] < 0)
      return fail(c, c->line, COAL_ERR_FORMAT, "size line: negative %s (%lld)", what[k],
                  (long long)v[k]);
  }
  for (int k = 0; k < 2; k++) {
    if (v[k] > INT32_MAX)
      return fail(c, c->line, COAL_ERR_OVERFLOW, "size line: %lld %s exceed 2^31-1",
                  (long long)v[k], what[k]);
    if (v[k] > COAL_MM_MAX_DIM)
      return fail(c, c->line, COAL_ERR_OVERFLOW, "size line: %lld %s exceed the limit %lld",
                  (long long)v[k], what[k], (long long)COAL_MM_MAX_DIM);
  }
  mm->nrows = v[0], mm->ncols = v[1];
  if (mm->symmetry != COAL_MM_GENERAL && mm->nrows != mm->ncols)
    return fail(c, c->line, COAL_ERR_FORMAT, "a %s matrix must be square, not %lld x %lld",
                mm->symmetry == COAL_MM_SYMMETRIC ? "symmetric" : "skew-symmetric",
                (long long)mm->nrows, (long long)mm->ncols);
  int64_t n = mm->nrows;
  /* dimensions are below 2^31, so these products fit in int64 */
  int64_t full = mm->nrows * mm->ncols, lower = n * (n + 1) / 2;
  if (mm->format == COAL_MM_ARRAY) {
    mm->declared = mm->symmetry == COAL_MM_GENERAL     ? full
                   : mm->symmetry == COAL_MM_SYMMETRIC ? lower
                                                       : lower - n;
    return COAL_SUCCESS;
  }
  mm->declared = v[2];
  if (v[2] > INT32_MAX)
    return fail(c, c->line, COAL_ERR_OVERFLOW, "size line: %lld entries exceed 2^31-1",
                (long long)v[2]);
  /* at most n of the stored entries are diagonal: every other one is mirrored */
  if (mm->symmetry != COAL_MM_GENERAL && v[2] + (v[2] > n ? v[2] - n : 0) > INT32_MAX)
    return fail(c, c->line, COAL_ERR_OVERFLOW,
                "size line: %lld entries give more than 2^31-1 after mirroring the triangle",
                (long long)v[2]);
  int64_t most = mm->symmetry == COAL_MM_GENERAL ? full : lower;
  if (v[2] > most)
    return fail(c, c->line, COAL_ERR_FORMAT,
                "size line: %lld entries do not fit in a %s %lld x %lld matrix (at most %lld)",
                (long long)v[2], mm->symmetry == COAL_MM_GENERAL ? "general" : "triangle of a",
                (long long)mm->nrows, (long long)mm->ncols, (long long)most);
  return COAL_SUCCESS;
}

static coal_status reserve(mm_cursor *c, coal_mm *mm, int64_t need) {
  if (need <= mm->cap) return COAL_SUCCESS;
  int64_t cap = mm->cap < 1024 ? 1024 : mm->cap * 2;
  if (cap < need) cap = need;
  if ((uint64_t)cap > SIZE_MAX / sizeof(double)) goto nomem;
  size_t n = (size_t)cap;
  double *v = realloc(mm->v, n * sizeof(double));
  if (!v) goto nomem;
  mm->v = v;
  if (mm->format == COAL_MM_COORDINATE) {
    int32_t *ri = realloc(mm->ri, n * sizeof(int32_t));
    if (!ri) goto nomem;
    mm->ri = ri;
    int32_t *ci = realloc(mm->ci, n * sizeof(int32_t));
    if (!ci) goto nomem;
    mm->ci = ci;
  }
  mm->cap = cap;
  return COAL_SUCCESS;
nomem:
  return fail(c, c->line, COAL_ERR_MEMORY, "cannot allocate storage for %lld entries",
              (long long)cap);
}

/* Parses one value token of the file's field into *v (range-checked for dtype). */
static coal_status parse_value(mm_cursor *c, const coal_mm *mm, mm_tok t, coal_dtype dtype,
                               double *v) {
  char s[48];
  if (mm->field == COAL_MM_INTEGER) {
    int64_t x = 0;
    int r = parse_i64(t, &x);
    if (r == NUM_BAD)
      return fail(c, c->line, COAL_ERR_FORMAT, "value '%s' is not an integer (integer field)",
                  show(t, s));
    if (r == NUM_RANGE)
      return fail(c, c->line, COAL_ERR_FORMAT, "integer value '%s' is out of range", show(t, s));
    *v = (double)x;
  } else {
    int r = parse_real(t, v);
    if (r == NUM_NONFINITE)
      return fail(c, c->line, COAL_ERR_FORMAT,
                  "value '%s': NaN/Inf where not allowed (or beyond double range)", show(t, s));
    if (r != NUM_OK)
      return fail(c, c->line, COAL_ERR_FORMAT, "value '%s' is not a number", show(t, s));
  }
  /* values below this bound round to at most FLT_MAX in single precision */
  if (dtype == COAL_F32 && fabs(*v) >= (double)FLT_MAX + 0x1p103)
    return fail(c, c->line, COAL_ERR_OVERFLOW, "value '%s' exceeds the single-precision range",
                show(t, s));
  return COAL_SUCCESS;
}

static coal_status parse_index(mm_cursor *c, mm_tok t, int64_t n, const char *what, int32_t *out) {
  char s[48];
  int64_t x = 0;
  int r = parse_i64(t, &x);
  if (r == NUM_BAD)
    return fail(c, c->line, COAL_ERR_FORMAT, "%s index '%s' is not an integer", what, show(t, s));
  if (r == NUM_RANGE || x < 1 || x > n)
    return fail(c, c->line, COAL_ERR_FORMAT, "%s index %s out of range 1..%lld", what, show(t, s),
                (long long)n);
  *out = (int32_t)(x - 1);
  return COAL_SUCCESS;
}

static coal_status parse_coordinate(mm_cursor *c, coal_mm *mm, coal_dtype dtype) {
  int nf = mm->field == COAL_MM_PATTERN ? 2 : 3;
  const char *fields = nf == 2 ? "row column" : "row column value";
  int64_t seen = 0;
  while (content_line(c)) {
    if (seen == mm->declared)
      return fail(c, c->line, COAL_ERR_FORMAT,
                  "more entries than the %lld declared on the size line", (long long)mm->declared);
    mm_tok t[3];
    int nt = split(c->ls, c->le, t, 3);
    if (nt != nf)
      return fail(c, c->line, COAL_ERR_FORMAT, "expected %d fields (%s), found %d", nf, fields, nt);
    int32_t i, j;
    double v = 1.0;
    COAL_CALL(parse_index(c, t[0], mm->nrows, "row", &i));
    COAL_CALL(parse_index(c, t[1], mm->ncols, "column", &j));
    if (nf == 3) COAL_CALL(parse_value(c, mm, t[2], dtype, &v));
    int mirror = 0;
    if (mm->symmetry != COAL_MM_GENERAL) {
      if (i < j)
        return fail(c, c->line, COAL_ERR_FORMAT,
                    "entry (%d, %d) lies in the upper triangle: a %s file stores only the lower "
                    "triangle",
                    i + 1, j + 1,
                    mm->symmetry == COAL_MM_SYMMETRIC ? "symmetric" : "skew-symmetric");
      if (i == j && mm->symmetry == COAL_MM_SKEW && v != 0)
        return fail(c, c->line, COAL_ERR_FORMAT,
                    "nonzero diagonal entry (%d, %d) in a skew-symmetric matrix", i + 1, j + 1);
      mirror = i != j;
    }
    if (mm->n + 1 + mirror > INT32_MAX)
      return fail(c, c->line, COAL_ERR_OVERFLOW,
                  "more than 2^31-1 entries after mirroring the symmetric triangle");
    COAL_CALL(reserve(c, mm, mm->n + 1 + mirror));
    mm->ri[mm->n] = i, mm->ci[mm->n] = j, mm->v[mm->n] = v;
    mm->n++;
    if (mirror) {
      mm->ri[mm->n] = j, mm->ci[mm->n] = i;
      mm->v[mm->n] = mm->symmetry == COAL_MM_SKEW ? -v : v;
      mm->n++;
    }
    seen++;
  }
  if (seen < mm->declared)
    return fail(c, c->line + 1, COAL_ERR_FORMAT,
                "expected %lld entries, found %lld (truncated input)", (long long)mm->declared,
                (long long)seen);
  return COAL_SUCCESS;
}

static coal_status parse_array(mm_cursor *c, coal_mm *mm, coal_dtype dtype) {
  while (content_line(c)) {
    if (mm->n == mm->declared)
      return fail(c, c->line, COAL_ERR_FORMAT, "more values than the %lld the size line implies",
                  (long long)mm->declared);
    mm_tok t[1];
    int nt = split(c->ls, c->le, t, 1);
    if (nt != 1)
      return fail(c, c->line, COAL_ERR_FORMAT, "expected 1 field (one value per line), found %d",
                  nt);
    double v;
    COAL_CALL(parse_value(c, mm, t[0], dtype, &v));
    COAL_CALL(reserve(c, mm, mm->n + 1));
    mm->v[mm->n++] = v;
  }
  if (mm->n < mm->declared)
    return fail(c, c->line + 1, COAL_ERR_FORMAT,
                "expected %lld values, found %lld (truncated input)", (long long)mm->declared,
                (long long)mm->n);
  return COAL_SUCCESS;
}

void coal_mm_free(coal_mm *mm) {
  free(mm->ri), free(mm->ci), free(mm->v);
  mm->ri = mm->ci = NULL;
  mm->v = NULL;
  mm->n = mm->cap = 0;
}

coal_status coal_mm_parse(coal_ctx ctx, const char *name, const char *buf, size_t len,
                          coal_dtype dtype, coal_mm *mm) {
  memset(mm, 0, sizeof *mm);
  mm_cursor c = {ctx, name ? name : "<buffer>", buf, buf ? len : 0, 0, 0, NULL, NULL};
  coal_status st = parse_banner(&c, mm);
  if (!st) st = parse_size(&c, mm);
  if (!st) {
    mm->size_line = c.line;
    /* first reservation: what the size line promises, capped by the input size so that a
     * huge declared count costs nothing up front; storage grows with the entries found */
    int64_t want = mm->declared;
    if (mm->format == COAL_MM_COORDINATE && mm->symmetry != COAL_MM_GENERAL) want *= 2;
    int64_t most = (int64_t)((c.len - c.pos) / 4) + 16;
    st = reserve(&c, mm, want < most ? want : most);
  }
  if (!st)
    st = mm->format == COAL_MM_COORDINATE ? parse_coordinate(&c, mm, dtype)
                                          : parse_array(&c, mm, dtype);
  mm->last_line = c.line + 1;
  if (st) coal_mm_free(mm);
  return st;
}
