/* FastLoad formats built on the GPU (kernels/cuda/fastload_build.cu) against the host builder
 * (suite "cuda", exit 77 without a GPU).
 *
 * For generated matrices (7- and 27-point Laplacians of several sizes, multiples of 32 or not,
 * power-law, random SPD, tall, wide, empty rows and columns, a dense row, a dense column, 1x1,
 * 0x0, 7x0, 0x7, explicit zeros, no entries, a long row among empty ones) and every shared
 * SuiteSparse matrix, in fp64 and fp32, heights 1, 4, 8 and 32, scatter and gather: the device
 * arrays, downloaded, equal the host builder's (coal_mat_fastload) exactly, and the gather
 * schedule equals the host schedule (coal_fastload_schedule_host); the FastLoad products
 * with the GPU-built format match the host twin (host context, same kernel). Also: the host
 * build switch (COALESCE_FASTLOAD_HOST_BUILD=1) and the benchmark's timed rebuild. */
#include "bench.h"
#include "check.h"
#include "internal.h"

#include <stdint.h>

static uint64_t seed_counter = 5000;
static int nformats = 0, nproducts = 0;

static double tol(coal_dtype dt) { return dt == COAL_F64 ? 1e-12 : 1e-5; }
static const char *dtname(coal_dtype dt) { return dt == COAL_F64 ? "f64" : "f32"; }

typedef struct {
  coal_mat h, d; /* the same matrix on the host and on the CUDA context */
} mat_pair;

static void pair_destroy(mat_pair *M) {
  coal_mat_destroy(&M->h);
  coal_mat_destroy(&M->d);
}

/* Copy of host matrix H on context ctx (same CSR, same dtype). */
static coal_status clone_on(coal_ctx ctx, coal_mat H, coal_mat *out) {
  int64_t m = 0, n = 0, nnz = 0;
  coal_mat_size(H, &m, &n, &nnz);
  coal_dtype dt = coal_mat_dtype(H);
  int64_t *rp = malloc(sizeof(int64_t) * ((size_t)m + 1));
  int32_t *ci = malloc(sizeof(int32_t) * ((size_t)nnz + 1));
  void *v = malloc(coal_dtype_size(dt) * ((size_t)nnz + 1));
  coal_status st = COAL_ERR_MEMORY;
  if (rp && ci && v) {
    st = coal_mat_get_csr(H, rp, ci, v);
    if (st == COAL_SUCCESS) st = coal_mat_create_csr(ctx, m, n, rp, ci, v, dt, out);
  }
  free(rp), free(ci), free(v);
  return st;
}

/* ---- comparison of the formats -------------------------------------------------------------- */
#define SAME_ARRAY(what, a, b, bytes)                                                              \
  do {                                                                                             \
    size_t nb_ = (bytes);                                                                          \
    int same_ = nb_ == 0 || ((a) && (b) && memcmp((a), (b), nb_) == 0);                            \
    CHECK(same_, "%s: %s differs from the host builder", label, what);                             \
    if (!same_) bad++;                                                                             \
  } while (0)

/* Downloads the device format of M->d and compares it with the host builder's. */
static int compare_format(mat_pair *M, int t, const char *label) {
  coal_ctx dc = coal_mat_ctx(M->d);
  coal_fastload *g = NULL;
  int32_t *task = NULL, *pre = NULL, *htask = NULL, *hpre = NULL;
  int32_t ntasks = -1, npre = -1, hntasks = -1, hnpre = -1;
  const coal_fastload *h = NULL;
  int bad = 0;
  CHECK_OK(dc, coal_cuda_fastload_download(M->d, t, &g, &task, &ntasks, &pre, &npre));
  CHECK_OK(dc, coal_mat_fastload(M->d, t, &h));
  if (!g || !h) {
    bad++;
    goto done;
  }
  nformats++;
  CHECK(g->nlanes == h->nlanes && g->nother == h->nother && g->nnz == h->nnz, "%s: sizes differ",
        label);
  CHECK(g->identity_perm == h->identity_perm, "%s: identity_perm %d, host %d", label,
        g->identity_perm, h->identity_perm);
  CHECK(g->nblocks == h->nblocks, "%s: %d blocks, host %d", label, g->nblocks, h->nblocks);
  if (g->nlanes != h->nlanes || g->nnz != h->nnz || g->nblocks != h->nblocks) {
    bad++;
    goto done;
  }
  size_t nl = (size_t)h->nlanes, nb = (size_t)h->nblocks, nz = (size_t)h->nnz;
  size_t es = coal_dtype_size(coal_mat_dtype(M->d));
  SAME_ARRAY("perm", g->perm, h->perm, sizeof(int32_t) * nl);
  SAME_ARRAY("blk_ptr", g->blk_ptr, h->blk_ptr, sizeof(int32_t) * nb);
  SAME_ARRAY("blk_col", g->blk_col, h->blk_col, sizeof(int32_t) * nb);
  SAME_ARRAY("blk_len", g->blk_len, h->blk_len, nb);
  SAME_ARRAY("blk_height", g->blk_height, h->blk_height, nb);
  SAME_ARRAY("blk_class", g->blk_class, h->blk_class, nb);
  SAME_ARRAY("idx", g->idx, h->idx, sizeof(int32_t) * nz);
  SAME_ARRAY("val", g->val, h->val, es * nz);
  if (t == 0) {
    SAME_ARRAY("seg", g->seg, h->seg, nz);
  } else {
    CHECK_OK(dc, coal_fastload_schedule_host(dc, h, &htask, &hntasks, &hpre, &hnpre));
    CHECK(ntasks == hntasks && npre == hnpre, "%s: %d tasks / %d prescale rows, host %d / %d",
          label, ntasks, npre, hntasks, hnpre);
    if (ntasks == hntasks && npre == hnpre) {
      SAME_ARRAY("task", task, htask, sizeof(int32_t) * ((size_t)ntasks + 1));
      SAME_ARRAY("prescale", pre, hpre, sizeof(int32_t) * (size_t)npre);
    } else {
      bad++;
    }
  }
done:
  coal_fastload_free(g);
  free(task), free(pre), free(htask), free(hpre);
  return bad;
}

/* ---- products ---------------------------------------------------------------------------------
 */
static int get_double(coal_bvec v, int64_t n, double *out) {
  coal_dtype dt = coal_bvec_dtype(v);
  void *tmp = malloc(coal_dtype_size(dt) * ((size_t)n + 1));
  if (!tmp) return 0;
  coal_status st = coal_bvec_get_host(v, tmp, COAL_COL_MAJOR, 0);
  for (int64_t i = 0; st == COAL_SUCCESS && i < n; i++)
    out[i] = dt == COAL_F64 ? ((double *)tmp)[i] : ((float *)tmp)[i];
  free(tmp);
  return st == COAL_SUCCESS;
}

/* y = alpha*A*x + beta*y with kernel k on both contexts (beta == 0: y starts as NaN). */
static void compare_product(mat_pair *M, coal_spmv_kernel k, double alpha, double beta,
                            const char *label) {
  coal_ctx hc = coal_mat_ctx(M->h), dc = coal_mat_ctx(M->d);
  coal_dtype dt = coal_mat_dtype(M->h);
  int64_t m = 0, n = 0;
  coal_mat_size(M->h, &m, &n, NULL);
  coal_bvec xh = NULL, xd = NULL, yh = NULL, yd = NULL;
  double *ref = malloc(sizeof(double) * ((size_t)m + 1));
  double *got = malloc(sizeof(double) * ((size_t)m + 1));
  uint64_t sx = seed_counter++, sy = seed_counter++;
  CHECK_OK(hc, coal_bvec_create(hc, n, 1, dt, COAL_COL_MAJOR, 0, &xh));
  CHECK_OK(dc, coal_bvec_create(dc, n, 1, dt, COAL_COL_MAJOR, 0, &xd));
  CHECK_OK(hc, coal_bvec_create(hc, m, 1, dt, COAL_COL_MAJOR, 0, &yh));
  CHECK_OK(dc, coal_bvec_create(dc, m, 1, dt, COAL_COL_MAJOR, 0, &yd));
  if (!xh || !xd || !yh || !yd || !ref || !got) goto done;
  CHECK_OK(hc, coal_bvec_set_random(xh, sx));
  CHECK_OK(dc, coal_bvec_set_random(xd, sx));
  if (beta == 0.0) {
    CHECK_OK(hc, coal_bvec_set_value(yh, NAN));
    CHECK_OK(dc, coal_bvec_set_value(yd, NAN));
  } else {
    CHECK_OK(hc, coal_bvec_set_random(yh, sy));
    CHECK_OK(dc, coal_bvec_set_random(yd, sy));
  }
  CHECK_OK(hc, coal_spmv(M->h, k, alpha, xh, beta, yh));
  CHECK_OK(dc, coal_spmv(M->d, k, alpha, xd, beta, yd));
  nproducts++;
  if (!get_double(yh, m, ref) || !get_double(yd, m, got)) {
    CHECK(0, "%s: download failed: %s", label, coal_ctx_last_error(dc));
    goto done;
  }
  double d = check_rel_diff(got, ref, (size_t)m);
  CHECK(d <= tol(dt), "%s %s alpha=%g beta=%g: GPU-built format vs host twin %.3g", label,
        coal_spmv_kernel_name(k), alpha, beta, d);
done:
  coal_bvec_destroy(&xh), coal_bvec_destroy(&xd), coal_bvec_destroy(&yh), coal_bvec_destroy(&yd);
  free(ref), free(got);
}

/* Every height and both formats: arrays, schedule, products. */
static void check_pair(mat_pair *M, const char *name) {
  static const int hs[] = {1, 4, 8, 32};
  coal_dtype dt = coal_mat_dtype(M->h);
  for (size_t i = 0; i < sizeof hs / sizeof hs[0]; i++) {
    CHECK_OK(coal_mat_ctx(M->h), coal_mat_set_fastload_height(M->h, hs[i]));
    CHECK_OK(coal_mat_ctx(M->d), coal_mat_set_fastload_height(M->d, hs[i]));
    for (int t = 0; t < 2; t++) {
      char label[256];
      snprintf(label, sizeof label, "%s %s H=%d %s", name, dtname(dt), hs[i],
               t ? "gather" : "scatter");
      int bad = compare_format(M, t, label);
      coal_spmv_kernel k = t ? COAL_SPMV_FASTLOAD_T : COAL_SPMV_FASTLOAD;
      compare_product(M, k, -1.5, 0.25, label);
      if (hs[i] == 8) compare_product(M, k, 1.0, 0.0, label);
      if (bad) return; /* one report per matrix is enough */
    }
  }
  CHECK_OK(coal_mat_ctx(M->h), coal_mat_set_fastload_height(M->h, 8));
  CHECK_OK(coal_mat_ctx(M->d), coal_mat_set_fastload_height(M->d, 8));
}

/* The host build switch still gives the same device format; the benchmark's rebuild times. */
static void check_switch_and_timing(mat_pair *M, const char *name) {
  char label[256];
  setenv("COALESCE_FASTLOAD_HOST_BUILD", "1", 1);
  CHECK_OK(coal_mat_ctx(M->h), coal_mat_set_fastload_height(M->h, 5));
  CHECK_OK(coal_mat_ctx(M->d), coal_mat_set_fastload_height(M->d, 5));
  for (int t = 0; t < 2; t++) {
    snprintf(label, sizeof label, "%s (host build switch) %s", name, t ? "gather" : "scatter");
    compare_format(M, t, label);
    compare_product(M, t ? COAL_SPMV_FASTLOAD_T : COAL_SPMV_FASTLOAD, -1.5, 0.25, label);
  }
  unsetenv("COALESCE_FASTLOAD_HOST_BUILD");
  for (int t = 0; t < 2; t++) {
    double ms = -1;
    CHECK_OK(coal_mat_ctx(M->d), coal_cuda_fastload_build_time(M->d, t, &ms));
    CHECK(ms > 0 && isfinite(ms), "%s: build time %g ms", name, ms);
    printf("%s %s: GPU build %.3f ms\n", name, t ? "gather" : "scatter", ms);
    snprintf(label, sizeof label, "%s (timed rebuild) %s", name, t ? "gather" : "scatter");
    compare_format(M, t, label);
    compare_product(M, t ? COAL_SPMV_FASTLOAD_T : COAL_SPMV_FASTLOAD, 1.0, 0.0, label);
  }
  CHECK_OK(coal_mat_ctx(M->h), coal_mat_set_fastload_height(M->h, 8));
  CHECK_OK(coal_mat_ctx(M->d), coal_mat_set_fastload_height(M->d, 8));
}

/* ---- generated matrices ---------------------------------------------------------------------- */
typedef struct {
  int64_t m, n, nnz, cap;
  int32_t *ri, *ci;
  double *v;
} coo;

static void coo_add(coo *c, int64_t i, int64_t j, double v) {
  if (c->nnz == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 256;
    c->ri = realloc(c->ri, sizeof(int32_t) * (size_t)c->cap);
    c->ci = realloc(c->ci, sizeof(int32_t) * (size_t)c->cap);
    c->v = realloc(c->v, sizeof(double) * (size_t)c->cap);
    if (!c->ri || !c->ci || !c->v) abort(); /* test harness only */
  }
  c->ri[c->nnz] = (int32_t)i, c->ci[c->nnz] = (int32_t)j, c->v[c->nnz] = v;
  c->nnz++;
}

/* Uniform integer in [0, n). */
static int64_t rndi(uint64_t seed, uint64_t i, int64_t n) {
  int64_t r = (int64_t)((coal_random_uniform(seed, i) + 1.0) * 0.5 * (double)n);
  return r < n ? r : n - 1;
}

typedef enum {
  G_LAP7_17,
  G_LAP7_32,
  G_LAP7_10_11_13,
  G_LAP27_9,
  G_LAP27_20,
  G_POWERLAW,
  G_SPD,
  G_TALL,
  G_WIDE,
  G_EMPTY_ROWS_COLS,
  G_DENSE_ROW,
  G_DENSE_COL,
  G_ONE,
  G_ZERO,
  G_ROWS_NO_COLS,
  G_COLS_NO_ROWS,
  G_EXPLICIT_ZEROS,
  G_NO_ENTRIES,
  G_LONG_ROW_EMPTIES,
  G_COUNT
} gen_id;

static const char *const gen_names[G_COUNT] = {"laplace3d-7pt-17^3",
                                               "laplace3d-7pt-32^3",
                                               "laplace3d-7pt-10x11x13",
                                               "laplace3d-27pt-9^3",
                                               "laplace3d-27pt-20^3",
                                               "powerlaw-20000",
                                               "random-spd-3000",
                                               "tall-3000x40",
                                               "wide-40x3000",
                                               "empty-rows-cols",
                                               "dense-row-5000",
                                               "dense-col-5000",
                                               "1x1",
                                               "0x0",
                                               "7x0",
                                               "0x7",
                                               "explicit-zeros",
                                               "no-entries-50",
                                               "long-row-among-empty"};

static void build_coo(gen_id id, coo *c) {
  uint64_t s = 303 + (uint64_t)id, k = 0;
  switch (id) {
  case G_TALL:
  case G_WIDE:
    c->m = id == G_TALL ? 3000 : 40, c->n = id == G_TALL ? 40 : 3000;
    for (int64_t i = 0; i < c->m; i++)
      for (int e = 0; e < (id == G_TALL ? 5 : 150); e++, k += 2)
        coo_add(c, i, rndi(s, k, c->n), coal_random_uniform(s, k + 1));
    break;
  case G_EMPTY_ROWS_COLS: /* rows i%3 == 1 and columns j%5 == 2 stay empty */
    c->m = 300, c->n = 200;
    for (int64_t i = 0; i < c->m; i++) {
      if (i % 3 == 1) continue;
      for (int e = 0; e < 4; e++, k += 2) {
        int64_t j = rndi(s, k, c->n);
        if (j % 5 == 2) j = (j + 1) % c->n;
        coo_add(c, i, j, coal_random_uniform(s, k + 1));
      }
    }
    break;
  case G_DENSE_ROW:
  case G_DENSE_COL: /* diagonal plus one full row / column of 5000 entries */
    c->m = c->n = 5000;
    for (int64_t i = 0; i < c->m; i++) coo_add(c, i, i, 2.0 + coal_random_uniform(s, k++));
    for (int64_t j = 0; j < c->n; j++) {
      if (id == G_DENSE_ROW)
        coo_add(c, 1234, j, coal_random_uniform(s, k++));
      else
        coo_add(c, j, 77, coal_random_uniform(s, k++));
    }
    break;
  case G_ONE: c->m = c->n = 1, coo_add(c, 0, 0, 2.5); break;
  case G_ZERO: c->m = c->n = 0; break;
  case G_ROWS_NO_COLS: c->m = 7, c->n = 0; break;
  case G_COLS_NO_ROWS: c->m = 0, c->n = 7; break;
  case G_EXPLICIT_ZEROS: /* tridiagonal, every third stored value 0.0 */
    c->m = c->n = 500;
    for (int64_t i = 0; i < c->m; i++)
      for (int64_t j = i - 1; j <= i + 1; j++)
        if (j >= 0 && j < c->n)
          coo_add(c, i, j, c->nnz % 3 == 0 ? 0.0 : (j == i ? 2.0 : -1.0 + 0.1 * (double)(j % 7)));
    break;
  case G_NO_ENTRIES: c->m = c->n = 50; break;
  case G_LONG_ROW_EMPTIES: /* row 3 has 3000 entries; 1 row in 100 has one */
    c->m = c->n = 10000;
    for (int64_t j = 0; j < 3000; j++) coo_add(c, 3, 3 * j + 1, coal_random_uniform(s, k++));
    for (int64_t i = 0; i < c->m; i += 100, k += 2)
      coo_add(c, i, rndi(s, k, c->n), coal_random_uniform(s, k + 1));
    break;
  default: break;
  }
}

static coal_status make_host(coal_ctx ctx, gen_id id, coal_dtype dt, coal_mat *A) {
  switch (id) {
  case G_LAP7_17: return coal_gen_laplace3d(ctx, 17, 17, 17, 7, dt, A);
  case G_LAP7_32: return coal_gen_laplace3d(ctx, 32, 32, 32, 7, dt, A);
  case G_LAP7_10_11_13: return coal_gen_laplace3d(ctx, 10, 11, 13, 7, dt, A);
  case G_LAP27_9: return coal_gen_laplace3d(ctx, 9, 9, 9, 27, dt, A);
  case G_LAP27_20: return coal_gen_laplace3d(ctx, 20, 20, 20, 27, dt, A);
  case G_POWERLAW: return coal_gen_powerlaw(ctx, 20000, 12.0, 2.5, 7, dt, A);
  case G_SPD: return coal_gen_random_spd(ctx, 3000, 8.0, 11, dt, A);
  default: {
    coo c = {0};
    build_coo(id, &c);
    coal_status st = coal_mat_create_coo(ctx, c.m, c.n, c.nnz, c.ri, c.ci, c.v, dt, A);
    free(c.ri), free(c.ci), free(c.v);
    return st;
  }
  }
}

/* ---- shared matrices ---------------------------------------------------------------------- */
static void check_shared(coal_ctx hc, coal_ctx dc) {
  char **paths;
  int nn = check_list_matrices(&paths, 1);
  if (!paths) return;
  int used = 0;
  for (int i = 0; i < nn; i++) {
    const char *path = paths[i], *name = check_basename(path);
    coal_mat A64 = NULL;
    coal_status st = coal_mat_read_mm(hc, path, COAL_F64, &A64);
    if (st == COAL_ERR_UNSUPPORTED) /* complex values: not handled by this library */
      continue;
    CHECK(st == COAL_SUCCESS, "%s: %s", name, coal_ctx_last_error(hc));
    for (int t = 0; A64 && t < 2; t++) {
      mat_pair M = {NULL, NULL};
      if (t == 0)
        CHECK_OK(hc, clone_on(hc, A64, &M.h));
      else
        CHECK_OK(hc, coal_mat_convert(A64, COAL_F32, &M.h));
      if (M.h) CHECK_OK(dc, clone_on(dc, M.h, &M.d));
      if (M.h && M.d) {
        check_pair(&M, name);
        used += t == 0;
      }
      pair_destroy(&M);
    }
    coal_mat_destroy(&A64);
  }
  check_free_matrices(paths, nn);
  printf("%d shared matrices compared\n", used);
}

int main(void) {
  if (!coal_cuda_available()) {
    printf("no GPU: skipped\n");
    return 77;
  }
  coal_ctx hc = NULL, dc = NULL;
  CHECK_OK(NULL, coal_ctx_create(COAL_BACKEND_HOST, &hc));
  CHECK_OK(NULL, coal_ctx_create(COAL_BACKEND_CUDA, &dc));
  if (!hc || !dc) return check_finish();
  unsetenv("COALESCE_FASTLOAD_HOST_BUILD");
  printf("device: %s\n", coal_ctx_device_name(dc));

  for (int t = 0; t < 2; t++) {
    coal_dtype dt = t ? COAL_F32 : COAL_F64;
    for (int id = 0; id < G_COUNT; id++) {
      mat_pair M = {NULL, NULL};
      CHECK_OK(hc, make_host(hc, (gen_id)id, dt, &M.h));
      if (M.h) CHECK_OK(dc, clone_on(dc, M.h, &M.d));
      if (M.h && M.d) {
        check_pair(&M, gen_names[id]);
        if (id == G_LAP27_20 || id == G_POWERLAW || id == G_DENSE_ROW)
          check_switch_and_timing(&M, gen_names[id]);
      }
      pair_destroy(&M);
    }
  }
  check_shared(hc, dc);
  printf("%d device formats compared, %d products\n", nformats, nproducts);
  coal_ctx_destroy(&dc);
  coal_ctx_destroy(&hc);
  return check_finish();
}
