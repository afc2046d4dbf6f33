/* Minimal test harness: counts checks, prints "N passed, N failed" and sets the exit code.
 * A check that cannot fail is not a test: every CHECK compares against an independent
 * reference (host twin, closed form, or a plain loop). */
#ifndef COAL_TEST_CHECK_H
#define COAL_TEST_CHECK_H

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coalesce.h"

static int check_pass_ = 0, check_fail_ = 0;

#define CHECK(cond, ...)                                                                           \
  do {                                                                                             \
    if (cond)                                                                                      \
      check_pass_++;                                                                               \
    else {                                                                                         \
      check_fail_++;                                                                               \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                         \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fputc('\n', stderr);                                                                         \
    }                                                                                              \
  } while (0)

/* Expects COAL_SUCCESS; prints the context's message otherwise. */
#define CHECK_OK(ctx, expr)                                                                        \
  do {                                                                                             \
    coal_status check_st_ = (expr);                                                                \
    CHECK(check_st_ == COAL_SUCCESS, "%s -> %s: %s", #expr, coal_status_string(check_st_),         \
          (ctx) ? coal_ctx_last_error(ctx) : "");                                                  \
  } while (0)

/* Expects a specific failure code. */
#define CHECK_ERR(ctx, expr, code)                                                                 \
  do {                                                                                             \
    coal_status check_st_ = (expr);                                                                \
    CHECK(check_st_ == (code), "%s -> %s, expected %s (%s)", #expr, coal_status_string(check_st_), \
          coal_status_string(code), (ctx) ? coal_ctx_last_error(ctx) : "");                        \
  } while (0)

/* The suite's context: a CUDA one when the file is built with TEST_CUDA (without a GPU: prints
 * "skipped" and returns 77, meson's skip status), else a host one. 0, or the exit status. */
static inline int check_context(coal_ctx *ctx) {
#ifdef TEST_CUDA
  if (!coal_cuda_available()) {
    printf("no GPU: skipped\n");
    return 77;
  }
  const coal_backend be = COAL_BACKEND_CUDA;
#else
  const coal_backend be = COAL_BACKEND_HOST;
#endif
  if (coal_ctx_create(be, ctx) != COAL_SUCCESS) {
    fprintf(stderr, "no %s context\n", coal_backend_name(be));
    return 1;
  }
  return 0;
}

static inline int check_finish(void) {
  printf("%d passed, %d failed\n", check_pass_, check_fail_);
  return check_fail_ ? 1 : 0;
}

/* Folder of the SuiteSparse matrices: $COALESCE_MATRICES, else the configured default. */
static inline const char *check_matrices_dir(void) {
  const char *e = getenv("COALESCE_MATRICES");
#ifdef COAL_TEST_MATRICES
  return (e && *e) ? e : COAL_TEST_MATRICES;
#else
  return (e && *e) ? e : "../shared/matrices";
#endif
}

/* Short name of a path (what follows its last '/'), for messages. */
static inline const char *check_basename(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

static inline int check_path_cmp_(const void *a, const void *b) {
  return strcmp(check_basename(*(char *const *)a), check_basename(*(char *const *)b));
}

/* Full paths of the *.mtx.gz files in check_matrices_dir(), sorted by file name: *paths gets a
 * heap array of n + 1 entries, the last NULL, and n is returned. Two checks: the folder opens
 * (if not, *paths is NULL, 0 is returned and the second check is not made), and it holds at
 * least `min` files (min 1: not empty). Free with check_free_matrices(). */
static inline int check_list_matrices(char ***paths, int min) {
  const char *dir = check_matrices_dir();
  *paths = NULL;
  DIR *d = opendir(dir);
  CHECK(d != NULL, "cannot open the matrix folder %s", dir);
  if (!d) return 0;
  size_t n = 0, cap = 1, dl = strlen(dir);
  char **p = malloc(sizeof(char *) * cap);
  if (!p) abort();
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t l = strlen(e->d_name);
    if (l <= 7 || strcmp(e->d_name + l - 7, ".mtx.gz")) continue;
    if (n + 1 >= cap) {
      cap *= 2;
      p = realloc(p, sizeof(char *) * cap);
      if (!p) abort();
    }
    char *s = malloc(dl + l + 2);
    if (!s) abort();
    memcpy(s, dir, dl);
    s[dl] = '/';
    memcpy(s + dl + 1, e->d_name, l + 1);
    p[n++] = s;
  }
  closedir(d);
  p[n] = NULL;
  if (n > 1) qsort(p, n, sizeof(char *), check_path_cmp_);
  CHECK((int)n >= min, "found %d .mtx.gz files in %s, expected at least %d", (int)n, dir, min);
  *paths = p;
  return (int)n;
}

/* Frees what check_list_matrices() returned (paths may be NULL). */
static inline void check_free_matrices(char **paths, int n) {
  if (!paths) return;
  for (int i = 0; i < n; i++) free(paths[i]);
  free(paths);
}

/* Relative difference ||a - b||_inf / max(||b||_inf, tiny); NaN in either gives +inf. */
static inline double check_rel_diff(const double *a, const double *b, size_t n) {
  double num = 0, den = 0;
  for (size_t i = 0; i < n; i++) {
    if (isnan(a[i]) || isnan(b[i])) return INFINITY;
    double d = fabs(a[i] - b[i]);
    if (d > num) num = d;
    if (fabs(b[i]) > den) den = fabs(b[i]);
  }
  return den > 0 ? num / den : num;
}

#endif
