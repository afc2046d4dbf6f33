/* Host SpMM kernels: swift, rowsplit, merge and auto against a plain CSR loop written here,
 * for both dtypes, k in {0, 1, 4, 32, 33, 128}, every layout pair, leading dimensions above
 * the tight value (padding must stay untouched), beta = 0 over NaN and general alpha/beta,
 * on edge cases and every shared matrix; the Swift format's invariants on each matrix and
 * several heights; the front end's argument checks. */
#include "check.h"
#include "internal.h"
#include "spmm.h"
#include "swift.h"

#define CM COAL_COL_MAJOR
#define RM COAL_ROW_MAJOR

static uint64_t seed_counter = 1;

static double tol(coal_dtype dt) { return dt == COAL_F64 ? 1e-14 : 1e-5; }

static double get_val(const void *v, coal_dtype dt, int64_t i) {
  return dt == COAL_F64 ? ((const double *)v)[i] : ((const float *)v)[i];
}
static void set_val(void *v, coal_dtype dt, int64_t i, double x) {
  if (dt == COAL_F64)
    ((double *)v)[i] = x;
  else
    ((float *)v)[i] = (float)x;
}

typedef struct {
  int64_t k;
  coal_layout xl, yl;
  int64_t xpad, ypad; /* leading dimension above the tight value */
  double alpha, beta;
} spmm_case;

static const spmm_case all_cases[] = {
    {0, CM, CM, 0, 0, 1.0, 0.0},     {1, CM, CM, 0, 0, 1.0, 0.0},  {1, RM, CM, 2, 3, -1.5, 0.25},
    {4, RM, RM, 3, 5, -1.5, 0.25},   {4, CM, RM, 0, 0, 1.0, 0.0},  {32, CM, RM, 7, 2, 1.0, 0.0},
    {33, RM, CM, 0, 11, -1.5, 0.25}, {33, CM, CM, 5, 0, 0.5, 1.0}, {128, RM, RM, 1, 3, 1.0, 0.0},
    {128, CM, RM, 0, 0, -1.5, 0.25},
};
#define NCASES ((int)(sizeof all_cases / sizeof all_cases[0]))

static const coal_spmm_kernel kernels[] = {COAL_SPMM_SWIFT, COAL_SPMM_ROWSPLIT, COAL_SPMM_MERGE,
                                           COAL_SPMM_AUTO};
#define NKERNELS ((int)(sizeof kernels / sizeof kernels[0]))

static const double SENTINEL = 12345.0;

static coal_bvec make_block(coal_ctx ctx, int64_t n, int64_t k, coal_dtype dt, coal_layout l,
                            int64_t pad) {
  int64_t tight = l == CM ? n : k;
  coal_bvec X = NULL;
  CHECK_OK(ctx, coal_bvec_create(ctx, n, k, dt, l, (tight > 0 ? tight : 1) + pad, &X));
  return X;
}

static int64_t storage_len(coal_bvec X) {
  return coal_bvec_ld(X) * (coal_bvec_layout(X) == CM ? X->k : X->n);
}
static int is_entry(coal_bvec X, int64_t idx) {
  return X->layout == CM ? idx % X->ld < X->n : idx % X->ld < X->k;
}

/* max |got - ref| / scale over the entries, scale being the entry's summation scale
 * |alpha| sum |a x| + |beta y0| (the bound of any summation order); an entry of scale 0 must
 * match exactly, NaN fails. Cancelling long sums are thus judged fairly, short ones strictly. */
static double entry_rel_diff(const double *got, const double *ref, const double *scale, int64_t n) {
  double worst = 0;
  for (int64_t i = 0; i < n; i++) {
    if (isnan(got[i]) || isnan(ref[i])) return INFINITY;
    double d = fabs(got[i] - ref[i]);
    if (d == 0) continue;
    if (scale[i] == 0) return INFINITY;
    if (d / scale[i] > worst) worst = d / scale[i];
  }
  return worst;
}

/* Runs every kernel on one case; the reference is a plain loop in double. */
static void check_case(coal_mat A, const char *name, const spmm_case *c, unsigned kmask) {
  coal_ctx ctx = A->ctx;
  coal_dtype dt = A->dtype;
  int64_t m = A->nrows, n = A->ncols, k = c->k;
  size_t es = coal_dtype_size(dt);
  void *xh = malloc(es * (size_t)(n * k + 1)), *y0h = malloc(es * (size_t)(m * k + 1));
  void *yh = malloc(es * (size_t)(m * k + 1));
  double *ref = malloc(sizeof(double) * (size_t)(m * k + 1));
  double *got = malloc(sizeof(double) * (size_t)(m * k + 1));
  double *scale = malloc(sizeof(double) * (size_t)(m * k + 1));
  uint64_t sx = seed_counter++, sy = seed_counter++;
  for (int64_t i = 0; i < n * k; i++) set_val(xh, dt, i, coal_random_uniform(sx, (uint64_t)i));
  for (int64_t i = 0; i < m * k; i++)
    set_val(y0h, dt, i, c->beta == 0.0 ? NAN : coal_random_uniform(sy, (uint64_t)i));
  for (int64_t j = 0; j < k; j++)
    for (int64_t i = 0; i < m; i++) {
      double s = 0, sa = 0;
      for (int32_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
        double t = get_val(A->values, dt, p) * get_val(xh, dt, A->colind[p] + j * n);
        s += t, sa += fabs(t);
      }
      double y0 = get_val(y0h, dt, i + j * m);
      ref[i + j * m] = c->beta == 0.0 ? c->alpha * s : c->alpha * s + c->beta * y0;
      scale[i + j * m] = fabs(c->alpha) * sa + (c->beta == 0.0 ? 0.0 : fabs(c->beta * y0));
    }
  coal_bvec X = make_block(ctx, n, k, dt, c->xl, c->xpad);
  coal_bvec Y = make_block(ctx, m, k, dt, c->yl, c->ypad);
  if (X && Y) {
    CHECK_OK(ctx, coal_bvec_set_host(X, xh, CM, 0));
    int64_t ylen = storage_len(Y);
    for (int kk = 0; kk < NKERNELS; kk++) {
      if (!(kmask >> kk & 1u)) continue;
      for (int64_t q = 0; q < ylen; q++) set_val(Y->data, dt, q, SENTINEL);
      CHECK_OK(ctx, coal_bvec_set_host(Y, y0h, CM, 0));
      CHECK_OK(ctx, coal_spmm(A, kernels[kk], c->alpha, X, c->beta, Y));
      int pad_ok = 1;
      for (int64_t q = 0; q < ylen; q++)
        if (!is_entry(Y, q) && get_val(Y->data, dt, q) != SENTINEL) pad_ok = 0;
      CHECK_OK(ctx, coal_bvec_get_host(Y, yh, CM, 0));
      for (int64_t i = 0; i < m * k; i++) got[i] = get_val(yh, dt, i);
      double d = entry_rel_diff(got, ref, scale, m * k);
      CHECK(d <= tol(dt) && pad_ok,
            "%s %s %s k=%lld X %s+%lld Y %s+%lld alpha=%g beta=%g H=%d: diff %.3g, padding %s",
            name, dt == COAL_F64 ? "f64" : "f32", coal_spmm_kernel_name(kernels[kk]), (long long)k,
            c->xl == CM ? "col" : "row", (long long)c->xpad, c->yl == CM ? "col" : "row",
            (long long)c->ypad, c->alpha, c->beta, coal_swift_height(A), d,
            pad_ok ? "kept" : "WRITTEN");
    }
  }
  coal_bvec_destroy(&X), coal_bvec_destroy(&Y);
  free(xh), free(y0h), free(yh), free(ref), free(got), free(scale);
}

/* Swift invariants, checked against the CSC of A built by coal_mat_transpose. */
static void check_swift(coal_mat A, const char *name) {
  const coal_swift *f = NULL;
  CHECK_OK(A->ctx, coal_mat_swift(A, &f));
  coal_mat T = NULL;
  CHECK_OK(A->ctx, coal_mat_transpose(A, &T));
  if (!f || !T) return;
  int32_t n = A->ncols, W = COAL_SWIFT_WARP, H = f->height_limit;
  int64_t nnz = A->nnz;
  const int32_t *cp = T->rowptr, *ri = T->colind;
  size_t es = coal_dtype_size(A->dtype);
  int ok_perm = f->nrows == A->nrows && f->ncols == n, ok_blk = 1, ok_seg = 1, ok_elem = 1,
      ok_irr = 1;
  /* perm: a permutation, counts non-increasing, ties in original order */
  char *mark = calloc((size_t)n + (size_t)nnz + 1, 1), *seen = mark + n;
  int32_t *spos = malloc(sizeof(int32_t) * ((size_t)n + 1));
  int ident = 1;
  for (int32_t s = 0; s < n && ok_perm; s++) {
    int32_t j = f->perm[s];
    if (j < 0 || j >= n || mark[j]) {
      ok_perm = 0;
      break;
    }
    mark[j] = 1, spos[j] = s, ident &= j == s;
    if (s > 0) {
      int32_t cj = cp[j + 1] - cp[j], pj = f->perm[s - 1], cpj = cp[pj + 1] - cp[pj];
      if (cpj < cj || (cpj == cj && pj > j)) ok_perm = 0;
    }
  }
  CHECK(ok_perm && ident == f->identity_perm, "%s: Swift perm not a stable descending sort", name);
  if (!ok_perm) goto done;
  /* regular blocks: full 32-lane groups, rounds bounded by H, maximal per group */
  int64_t expect_reg = 0;
  for (int32_t g = 0; g < n / W; g++)
    expect_reg += (int64_t)W * (cp[f->perm[g * W + W - 1] + 1] - cp[f->perm[g * W + W - 1]]);
  ok_blk = f->blk_ptr[0] == 0 && f->blk_ptr[f->nblocks] == f->nreg && f->nreg == expect_reg &&
           f->nreg + f->nirr == nnz && f->ncta == (f->nblocks + 7) / 8;
  for (int32_t b = 0, r0 = 0; b < f->nblocks && ok_blk; b++) {
    int32_t sz = f->blk_ptr[b + 1] - f->blk_ptr[b], h = sz / W, s0 = f->blk_col[b];
    if (sz % W || h < 1 || h > H || s0 % W || s0 + W > n) {
      ok_blk = 0;
      break;
    }
    if (b > 0 && f->blk_col[b - 1] != s0) r0 = 0; /* new group: rounds start again */
    if (b > 0 && f->blk_col[b - 1] > s0) ok_blk = 0;
    int32_t cta = b / COAL_SWIFT_CTA_BLOCKS, base = f->blk_ptr[cta * COAL_SWIFT_CTA_BLOCKS];
    for (int32_t e = f->blk_ptr[b]; e < f->blk_ptr[b + 1]; e++) {
      int32_t r = (e - f->blk_ptr[b]) / W, l = (e - f->blk_ptr[b]) % W, j = f->perm[s0 + l];
      int32_t row = f->slot_row[base + f->reg_pos[e]];
      int64_t src = (int64_t)cp[j] + r0 + r;
      if (src >= cp[j + 1] || ri[src] != row || seen[src] ||
          memcmp((const char *)f->reg_val + es * (size_t)e, (const char *)T->values + es * src, es))
        ok_elem = 0;
      else
        seen[src] = 1;
    }
    r0 += h;
  }
  CHECK(ok_blk, "%s: Swift regular blocks malformed (H=%d)", name, H);
  /* CTA groups: reg_pos a permutation of the slots, rows sorted, segment runs exact */
  int64_t heads = 0;
  for (int32_t c = 0; c < f->ncta && ok_blk; c++) {
    int32_t b1 = (c + 1) * 8 < f->nblocks ? (c + 1) * 8 : f->nblocks;
    int32_t lo = f->blk_ptr[c * 8], hi = f->blk_ptr[b1];
    char *used = calloc((size_t)(hi - lo) + 1, 1);
    for (int32_t e = lo; e < hi; e++) {
      if (f->reg_pos[e] >= hi - lo || used[f->reg_pos[e]])
        ok_seg = 0;
      else
        used[f->reg_pos[e]] = 1;
    }
    free(used);
    for (int32_t t = lo; t < hi; t++) {
      if (t > lo && f->slot_row[t] < f->slot_row[t - 1]) ok_seg = 0;
      int head = t == lo || f->slot_row[t] != f->slot_row[t - 1];
      int32_t run = 1;
      while (t + run < hi && f->slot_row[t + run] == f->slot_row[t]) run++;
      if (head ? f->slot_seg[t] != run : f->slot_seg[t] != 0) ok_seg = 0;
      heads += head;
    }
  }
  CHECK(ok_seg && heads == f->nsegments, "%s: Swift segment information inconsistent", name);
  /* irregular: residual columns in sorted order, exactly the entries past R_g, sub-blocks of
   * at most 32 entries tiling each column */
  ok_irr = f->irr_ptr[0] == 0 && f->irr_ptr[f->irr_ncols] == f->nirr;
  for (int32_t c = 0, b = 0; c < f->irr_ncols && ok_irr; c++) {
    int32_t j = f->irr_col[c], s = spos[j];
    if (c > 0 && spos[f->irr_col[c - 1]] >= s) ok_irr = 0;
    int32_t last = (s / W) * W + W - 1;
    int32_t R = last < n ? cp[f->perm[last] + 1] - cp[f->perm[last]] : 0;
    int32_t len = f->irr_ptr[c + 1] - f->irr_ptr[c];
    if (len != cp[j + 1] - cp[j] - R || len <= 0) ok_irr = 0;
    for (int32_t t = 0; t < len && ok_irr; t++) {
      int64_t src = (int64_t)cp[j] + R + t, e = f->irr_ptr[c] + t;
      if (ri[src] != f->irr_row[e] || seen[src] ||
          memcmp((const char *)f->irr_val + es * (size_t)e, (const char *)T->values + es * src, es))
        ok_elem = 0;
      else
        seen[src] = 1;
    }
    for (int32_t at = f->irr_ptr[c]; at < f->irr_ptr[c + 1]; b++) {
      if (b >= f->irr_nblk || f->irr_blk_col[b] != j || f->irr_blk_start[b] != at ||
          f->irr_blk_stop[b] - at < 1 || f->irr_blk_stop[b] - at > W ||
          f->irr_blk_stop[b] > f->irr_ptr[c + 1]) {
        ok_irr = 0;
        break;
      }
      at = f->irr_blk_stop[b];
    }
    if (c == f->irr_ncols - 1 && b != f->irr_nblk) ok_irr = 0;
  }
  CHECK(ok_irr, "%s: Swift irregular part malformed", name);
  for (int64_t p = 0; p < nnz; p++) ok_elem &= seen[p];
  CHECK(ok_elem, "%s: Swift format does not hold every nonzero exactly once", name);
done:
  free(mark), free(spos);
  coal_mat_destroy(&T);
}

/* Swift invariants at nheights heights; at the default height the cases in the bit mask
 * `cases` with every kernel (auto, a duplicate of a named kernel, on the first of them), at
 * the other heights (which only change the Swift format) the cases `hcases` with Swift. */
#define ALL_KERNELS 15u
#define SWIFT_ONLY  1u
static void check_mat(coal_mat A, const char *name, unsigned cases, unsigned hcases, int nheights) {
  static const int hs[] = {COAL_SWIFT_DEFAULT_HEIGHT, 1, 3, 32};
  for (int h = 0; h < nheights; h++) {
    CHECK_OK(A->ctx, coal_mat_set_swift_height(A, hs[h]));
    check_swift(A, name);
    unsigned mask = h == 0 ? cases : hcases, kmask = h == 0 ? ALL_KERNELS : SWIFT_ONLY;
    for (int c = 0; c < NCASES; c++)
      if (mask >> c & 1u) {
        check_case(A, name, &all_cases[c], kmask);
        if (h == 0) kmask &= ~8u; /* auto once */
      }
  }
}

typedef struct {
  int32_t *ri, *ci;
  double *v;
  int64_t n, cap;
} coo;

static void coo_add(coo *c, int32_t i, int32_t j, double v) {
  if (c->n == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 256;
    c->ri = realloc(c->ri, sizeof(int32_t) * (size_t)c->cap);
    c->ci = realloc(c->ci, sizeof(int32_t) * (size_t)c->cap);
    c->v = realloc(c->v, sizeof(double) * (size_t)c->cap);
  }
  c->ri[c->n] = i, c->ci[c->n] = j, c->v[c->n] = v, c->n++;
}

/* Builds the matrix in both dtypes, checks it with every height, then frees the triples. */
static void coo_check(coal_ctx ctx, const char *name, int32_t m, int32_t n, coo *c) {
  for (int dt = 0; dt < 2; dt++) {
    coal_mat A = NULL;
    CHECK_OK(ctx, coal_mat_create_coo(ctx, m, n, c->n, c->ri, c->ci, c->v, (coal_dtype)dt, &A));
    if (A) check_mat(A, name, 0x3ffu, 0x4au, 4); /* k = 1, 4, 33 at other heights */
    coal_mat_destroy(&A);
  }
  free(c->ri), free(c->ci), free(c->v);
  memset(c, 0, sizeof *c);
}

static uint64_t rnd(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return *s >> 33;
}

static void test_edge_cases(coal_ctx ctx) {
  coo c = {0};
  uint64_t s = 7;
  coo_check(ctx, "0x0", 0, 0, &c);
  coo_check(ctx, "0x5", 0, 5, &c);
  coo_check(ctx, "5x0", 5, 0, &c);
  coo_check(ctx, "40x40 empty", 40, 40, &c);
  coo_add(&c, 0, 0, 2.5);
  coo_check(ctx, "1x1", 1, 1, &c);
  /* empty rows and columns, explicit zeros */
  for (int k = 0; k < 900; k++) {
    int32_t i = (int32_t)(rnd(&s) % 100), j = (int32_t)(rnd(&s) % 90);
    if (i % 7 == 3 || j % 5 == 2) continue;
    coo_add(&c, i, j, k % 17 == 0 ? 0.0 : coal_random_uniform(11, (uint64_t)k));
  }
  coo_check(ctx, "empty rows/cols", 100, 90, &c);
  /* one dense column (irregular residual split into sub-blocks), one dense row (a segment
   * as long as a CTA group) */
  for (int32_t i = 0; i < 300; i++) coo_add(&c, i, i, 4.0), coo_add(&c, i, 7, -1.0 - i % 5);
  coo_check(ctx, "dense column", 300, 300, &c);
  for (int32_t i = 0; i < 300; i++) coo_add(&c, i, i, 4.0), coo_add(&c, 11, i, 0.5 + i % 3);
  coo_check(ctx, "dense row", 300, 300, &c);
  for (int32_t j = 0; j < 2000; j++) coo_add(&c, 0, j, coal_random_uniform(12, (uint64_t)j));
  coo_check(ctx, "1x2000 dense", 1, 2000, &c);
  for (int32_t i = 0; i < 500; i++) coo_add(&c, i, 0, coal_random_uniform(13, (uint64_t)i));
  coo_check(ctx, "500x1 dense", 500, 1, &c);
  /* rectangular, tall and wide, sizes not multiples of 32 */
  for (int k = 0; k < 2500; k++)
    coo_add(&c, (int32_t)(rnd(&s) % 500), (int32_t)(rnd(&s) % 37),
            coal_random_uniform(14, (uint64_t)k));
  coo_check(ctx, "tall 500x37", 500, 37, &c);
  for (int k = 0; k < 2500; k++)
    coo_add(&c, (int32_t)(rnd(&s) % 37), (int32_t)(rnd(&s) % 500),
            coal_random_uniform(15, (uint64_t)k));
  coo_check(ctx, "wide 37x500", 37, 500, &c);
  /* 64 columns of exactly 5 entries: all regular, nothing irregular */
  for (int32_t j = 0; j < 64; j++)
    for (int32_t t = 0; t < 5; t++)
      coo_add(&c, (j * 13 + t * 29) % 70, j, coal_random_uniform(16, (uint64_t)(j * 5 + t)));
  coo_check(ctx, "equal columns 70x64", 70, 64, &c);
  /* identical rows: long runs of equal rows in every CTA group */
  for (int32_t i = 0; i < 65; i++)
    for (int32_t j = 0; j < 40; j++)
      coo_add(&c, i, j, coal_random_uniform(17, (uint64_t)(i * 40 + j)));
  coo_check(ctx, "dense 65x40", 65, 40, &c);
  /* banded and a 3-D 7-point Laplacian: many CTA groups, short segments */
  for (int32_t i = 0; i < 700; i++)
    for (int32_t j = i - 3; j <= i + 3; j++)
      if (j >= 0 && j < 700) coo_add(&c, i, j, j == i ? 6.0 : -1.0);
  coo_check(ctx, "band 700", 700, 700, &c);
  {
    int32_t g = 9;
    for (int32_t z = 0; z < g; z++)
      for (int32_t y = 0; y < g; y++)
        for (int32_t x = 0; x < g; x++) {
          int32_t i = (z * g + y) * g + x;
          coo_add(&c, i, i, 6.0);
          if (x > 0) coo_add(&c, i, i - 1, -1.0);
          if (x < g - 1) coo_add(&c, i, i + 1, -1.0);
          if (y > 0) coo_add(&c, i, i - g, -1.0);
          if (y < g - 1) coo_add(&c, i, i + g, -1.0);
          if (z > 0) coo_add(&c, i, i - g * g, -1.0);
          if (z < g - 1) coo_add(&c, i, i + g * g, -1.0);
        }
    coo_check(ctx, "laplace3d 9", g * g * g, g * g * g, &c);
  }
  /* power-law graph with hubs and isolated vertices */
  {
    int32_t n = 1200;
    for (int32_t i = 0; i < n; i++) {
      int32_t deg = (int32_t)(500 / (1 + rnd(&s) % 250)) + (i % 13 == 0 ? 0 : 1);
      if (i % 29 == 0) deg = 0;
      for (int32_t k = 0; k < deg; k++) {
        int32_t j = (int32_t)((rnd(&s) % (uint64_t)n) * (rnd(&s) % (uint64_t)n) / (uint64_t)n);
        if (j % 29 == 0) continue;
        coo_add(&c, i, j, coal_random_uniform(18, (uint64_t)k)), coo_add(&c, j, i, 1.0);
      }
    }
    coo_check(ctx, "power-law graph", n, n, &c);
  }
}

/* Front end: names, selection, argument checks, height option, cache invalidation. */
static void test_api(coal_ctx ctx) {
  for (int k = 0; k < COAL_SPMM_NKERNELS; k++) {
    coal_spmm_kernel p = COAL_SPMM_NKERNELS;
    CHECK_OK(ctx, coal_spmm_kernel_parse(coal_spmm_kernel_name((coal_spmm_kernel)k), &p));
    CHECK(p == (coal_spmm_kernel)k, "kernel name round trip %d", k);
  }
  coal_spmm_kernel p;
  CHECK_ERR(ctx, coal_spmm_kernel_parse("csr-vector", &p), COAL_ERR_ARG);
  CHECK(!strcmp(coal_spmm_kernel_name(COAL_SPMM_NKERNELS), "unknown"), "unknown kernel name");

  coo c = {0};
  for (int32_t i = 0; i < 50; i++) coo_add(&c, i, i, 2.0), coo_add(&c, i, (i * 7) % 50, 1.0);
  coal_mat A = NULL, A32 = NULL;
  CHECK_OK(ctx, coal_mat_create_coo(ctx, 50, 50, c.n, c.ri, c.ci, c.v, COAL_F64, &A));
  CHECK_OK(ctx, coal_mat_create_coo(ctx, 50, 50, c.n, c.ri, c.ci, c.v, COAL_F32, &A32));
  free(c.ri), free(c.ci), free(c.v);
  if (!A || !A32) return;
  for (int l = 0; l < 2; l++) {
    coal_spmm_kernel s = coal_spmm_select(A, 32, (coal_layout)l);
    CHECK(s > COAL_SPMM_AUTO && s < COAL_SPMM_NKERNELS, "select gave %d", (int)s);
  }
  coal_bvec X = make_block(ctx, 50, 4, COAL_F64, CM, 0),
            Y = make_block(ctx, 50, 4, COAL_F64, RM, 0);
  coal_bvec Z = make_block(ctx, 49, 4, COAL_F64, CM, 0),
            Y3 = make_block(ctx, 50, 3, COAL_F64, CM, 0);
  coal_bvec F = make_block(ctx, 50, 4, COAL_F32, CM, 0);
  coal_ctx other = NULL;
  CHECK_OK(other, coal_ctx_create(COAL_BACKEND_HOST, &other));
  coal_bvec O = other ? make_block(other, 50, 4, COAL_F64, CM, 0) : NULL;
  CHECK_OK(ctx, coal_bvec_set_random(X, 5));
  CHECK_ERR(ctx, coal_spmm(NULL, COAL_SPMM_AUTO, 1.0, X, 0.0, Y), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_spmm(A, COAL_SPMM_NKERNELS, 1.0, X, 0.0, Y), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_spmm(A, (coal_spmm_kernel)-1, 1.0, X, 0.0, Y), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_spmm(A, COAL_SPMM_AUTO, 1.0, NULL, 0.0, Y), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_spmm(A, COAL_SPMM_AUTO, 1.0, X, 0.0, NULL), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_spmm(A, COAL_SPMM_AUTO, 1.0, Z, 0.0, Y), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_spmm(A, COAL_SPMM_AUTO, 1.0, X, 0.0, Y3), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_spmm(A, COAL_SPMM_AUTO, 1.0, F, 0.0, Y), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_spmm(A32, COAL_SPMM_AUTO, 1.0, X, 0.0, Y), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_spmm(A, COAL_SPMM_SWIFT, 1.0, X, 0.0, X), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_spmm(A, COAL_SPMM_AUTO, 1.0, O, 0.0, Y), COAL_ERR_ARG);
  CHECK_OK(ctx, coal_spmm(A, COAL_SPMM_AUTO, 1.0, X, 0.0, Y));
  /* height option: range, cache drop, values change drops the format too */
  CHECK_ERR(ctx, coal_mat_set_swift_height(A, 0), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_mat_set_swift_height(A, COAL_SWIFT_MAX_HEIGHT + 1), COAL_ERR_ARG);
  CHECK_OK(ctx, coal_spmm(A, COAL_SPMM_SWIFT, 1.0, X, 0.0, Y));
  const coal_swift *sw = (const coal_swift *)coal_mat_format_get(A, COAL_FMT_SWIFT);
  CHECK(sw != NULL && sw->height_limit == COAL_SWIFT_DEFAULT_HEIGHT, "Swift not cached");
  CHECK_OK(ctx, coal_mat_set_swift_height(A, 2));
  CHECK(!coal_mat_format_get(A, COAL_FMT_SWIFT), "height change keeps the old Swift format");
  CHECK_OK(ctx, coal_spmm(A, COAL_SPMM_SWIFT, 1.0, X, 0.0, Y));
  sw = (const coal_swift *)coal_mat_format_get(A, COAL_FMT_SWIFT);
  CHECK(sw != NULL && sw->height_limit == 2, "Swift height not applied");
  double *nv = malloc(sizeof(double) * (size_t)A->nnz);
  for (int64_t q = 0; q < A->nnz; q++) nv[q] = 0.25 * (double)(q % 9) - 1.0;
  CHECK_OK(ctx, coal_mat_set_values(A, nv));
  free(nv);
  CHECK(!coal_mat_format_get(A, COAL_FMT_SWIFT), "set_values keeps the old Swift format");
  check_case(A, "after set_values", &all_cases[3], ALL_KERNELS);
  check_swift(A, "after set_values");
  /* CUDA backend (when a GPU is present): a tiny product through the front end; the kernels are
   * tested in depth by tests/test_spmm_cuda.c */
  if (coal_cuda_available()) {
    coal_ctx g = NULL;
    CHECK_OK(g, coal_ctx_create(COAL_BACKEND_CUDA, &g));
    coal_mat G = NULL;
    int32_t ri[2] = {0, 1}, ci[2] = {1, 0};
    double v[2] = {1.0, 2.0};
    if (g) CHECK_OK(g, coal_mat_create_coo(g, 2, 2, 2, ri, ci, v, COAL_F64, &G));
    coal_bvec GX = g ? make_block(g, 2, 4, COAL_F64, CM, 0) : NULL;
    coal_bvec GY = g ? make_block(g, 2, 4, COAL_F64, RM, 0) : NULL;
    if (G && GX && GY) {
      double xv[8] = {1, 2, 3, 4, 5, 6, 7, 8}, yv[8]; /* column-major 2 x 4 */
      CHECK_OK(g, coal_bvec_set_host(GX, xv, CM, 0));
      CHECK_OK(g, coal_spmm(G, COAL_SPMM_AUTO, 1.0, GX, 0.0, GY));
      CHECK_OK(g, coal_bvec_get_host(GY, yv, CM, 0));
      int ok = 1; /* y(0,j) = x(1,j), y(1,j) = 2 x(0,j) */
      for (int j = 0; j < 4; j++)
        ok &= yv[2 * j] == xv[2 * j + 1] && yv[2 * j + 1] == 2 * xv[2 * j];
      CHECK(ok, "CUDA SpMM of a 2 x 2 permutation-like matrix");
    }
    coal_bvec_destroy(&GX), coal_bvec_destroy(&GY);
    coal_mat_destroy(&G);
    coal_ctx_destroy(&g);
  }
  coal_bvec_destroy(&X), coal_bvec_destroy(&Y), coal_bvec_destroy(&Z), coal_bvec_destroy(&Y3);
  coal_bvec_destroy(&F), coal_bvec_destroy(&O);
  coal_ctx_destroy(&other);
  coal_mat_destroy(&A), coal_mat_destroy(&A32);
}

static void test_files(coal_ctx ctx) {
  char **paths;
  int nf = check_list_matrices(&paths, 1);
  for (int i = 0; i < nf; i++) {
    const char *path = paths[i], *name = check_basename(path);
    for (int dt = 0; dt < 2; dt++) {
      coal_mat A = NULL;
      coal_status st = coal_mat_read_mm(ctx, path, (coal_dtype)dt, &A);
      if (st == COAL_ERR_UNSUPPORTED) break; /* complex */
      CHECK(st == COAL_SUCCESS, "read %s: %s", path, coal_ctx_last_error(ctx));
      if (!A) continue;
      /* every case on small matrices; fewer, and smaller k, as they grow (run time) */
      unsigned cases = A->nnz <= 5000 ? 0x3feu : A->nnz <= 50000 ? 0x4au : 0x0au;
      if (dt == COAL_F64)
        check_mat(A, name, cases, 0x08u, 2);
      else
        check_mat(A, name, A->nnz <= 50000 ? 0x44u : 0x10u, 0, 1);
      coal_mat_destroy(&A);
    }
  }
  check_free_matrices(paths, nf);
}

int main(void) {
  coal_ctx ctx = NULL;
  CHECK_OK(ctx, coal_ctx_create(COAL_BACKEND_HOST, &ctx));
  if (!ctx) return check_finish();
  test_api(ctx);
  test_edge_cases(ctx);
  test_files(ctx);
  coal_ctx_destroy(&ctx);
  return check_finish();
}
