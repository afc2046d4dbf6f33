/* FastLoad format invariants, checked against an independent reference of the documented
 * format (src/internal.h): the sort, the cutting rule, the zigzag layout, seg, classes, split
 * rows and atomics, on generated lane structures and on every shared matrix. */
#include "check.h"
#include "fastload.h"
#include "internal.h"

/* A compressed-by-lane structure owned by the test, values in double. */
typedef struct {
  int32_t nlanes, nother;
  int32_t *ptr, *idx;
  double *val;
} lanes;

static void lanes_free(lanes *L) {
  free(L->ptr), free(L->idx), free(L->val);
  memset(L, 0, sizeof *L);
}

static uint64_t rng_next(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return *s >> 33;
}

enum { PAT_RANDOM, PAT_SAME, PAT_BAND };

/* Lane l gets counts[l] distinct ascending indices in [0, nother): a random subset, the first
 * counts[l] indices (every lane alike: long runs), or a band (neighbouring lanes share). */
static lanes lanes_make(int32_t nlanes, int32_t nother, const int32_t *counts, int pat,
                        uint64_t seed) {
  lanes L = {nlanes, nother, calloc((size_t)nlanes + 1, sizeof(int32_t)), NULL, NULL};
  for (int32_t l = 0; l < nlanes; l++) L.ptr[l + 1] = L.ptr[l] + counts[l];
  int32_t nnz = L.ptr[nlanes];
  L.idx = malloc(sizeof(int32_t) * ((size_t)nnz + 1));
  L.val = malloc(sizeof(double) * ((size_t)nnz + 1));
  uint64_t s = seed;
  for (int32_t l = 0; l < nlanes; l++) {
    int32_t c = counts[l], q = L.ptr[l];
    if (pat == PAT_SAME) {
      for (int32_t k = 0; k < c; k++) L.idx[q + k] = k;
    } else if (pat == PAT_BAND) {
      int32_t start = (l / 5) % (nother - c + 1);
      for (int32_t k = 0; k < c; k++) L.idx[q + k] = start + k;
    } else { /* selection sampling: c of nother, in order */
      int32_t need = c;
      for (int32_t i = 0; i < nother && need > 0; i++)
        if ((int64_t)(rng_next(&s) % (uint64_t)(nother - i)) < need) L.idx[q + c - need--] = i;
    }
    for (int32_t k = 0; k < c; k++) L.val[q + k] = coal_random_uniform(seed, (uint64_t)(q + k));
  }
  if (nnz > 0) L.val[0] = 0.0; /* an explicit zero */
  return L;
}

/* Test-local transpose (CSR of A -> CSC of A), independent of the library. */
static lanes lanes_transpose(const lanes *A) {
  lanes T = {A->nother, A->nlanes, calloc((size_t)A->nother + 1, sizeof(int32_t)), NULL, NULL};
  int32_t nnz = A->ptr[A->nlanes];
  T.idx = malloc(sizeof(int32_t) * ((size_t)nnz + 1));
  T.val = malloc(sizeof(double) * ((size_t)nnz + 1));
  for (int32_t e = 0; e < nnz; e++) T.ptr[A->idx[e] + 1]++;
  for (int32_t j = 0; j < A->nother; j++) T.ptr[j + 1] += T.ptr[j];
  int32_t *next = malloc(sizeof(int32_t) * ((size_t)A->nother + 1));
  memcpy(next, T.ptr, sizeof(int32_t) * ((size_t)A->nother + 1));
  for (int32_t i = 0; i < A->nlanes; i++)
    for (int32_t e = A->ptr[i]; e < A->ptr[i + 1]; e++) {
      int32_t q = next[A->idx[e]]++;
      T.idx[q] = i;
      T.val[q] = A->val[e];
    }
  free(next);
  return T;
}

static lanes lanes_from_mat(coal_mat A) {
  lanes L = {A->nrows, A->ncols, malloc(sizeof(int32_t) * ((size_t)A->nrows + 1)), NULL, NULL};
  memcpy(L.ptr, A->rowptr, sizeof(int32_t) * ((size_t)A->nrows + 1));
  L.idx = malloc(sizeof(int32_t) * ((size_t)A->nnz + 1));
  L.val = malloc(sizeof(double) * ((size_t)A->nnz + 1));
  memcpy(L.idx, A->colind, sizeof(int32_t) * (size_t)A->nnz);
  for (int64_t e = 0; e < A->nnz; e++)
    L.val[e] = A->dtype == COAL_F64 ? ((double *)A->values)[e] : ((float *)A->values)[e];
  return L;
}

typedef struct {
  int32_t idx;
  double val;
} entry;

static int entry_cmp(const void *a, const void *b) {
  const entry *x = a, *y = b;
  return (x->idx > y->idx) - (x->idx < y->idx);
}

static double fl_val(const coal_fastload *f, coal_dtype dt, int64_t e) {
  return dt == COAL_F64 ? ((const double *)f->val)[e] : ((const float *)f->val)[e];
}

/* Checks f against L (the structure it was built from). */
static void check_format(const coal_fastload *f, const lanes *L, coal_dtype dt, int H, int with_seg,
                         const char *name) {
  int32_t n = L->nlanes, nnz = L->ptr[n];
  CHECK(f->nlanes == n && f->nother == L->nother && f->height_limit == H && f->nnz == nnz,
        "%s H=%d seg=%d: header %d/%d/%d/%lld", name, H, with_seg, f->nlanes, f->nother,
        f->height_limit, (long long)f->nnz);
  if (f->nlanes != n || f->nnz != nnz) return;
  int32_t *cnt = malloc(sizeof(int32_t) * ((size_t)n + 1));
  char *seen = calloc((size_t)n + 1, 1);
  for (int32_t l = 0; l < n; l++) cnt[l] = L->ptr[l + 1] - L->ptr[l];
  /* perm: a permutation, counts descending, stable, identity flag */
  int perm_ok = 1, sorted = 1, stable = 1, ident = 1;
  for (int32_t s = 0; s < n; s++) {
    int32_t p = f->perm[s];
    if (p < 0 || p >= n || seen[p])
      perm_ok = 0;
    else
      seen[p] = 1;
    if (p != s) ident = 0;
  }
  CHECK(perm_ok, "%s: perm is not a permutation", name);
  if (!perm_ok) goto done;
  for (int32_t s = 0; s + 1 < n; s++) {
    int32_t a = cnt[f->perm[s]], b = cnt[f->perm[s + 1]];
    if (a < b) sorted = 0;
    if (a == b && f->perm[s] > f->perm[s + 1]) stable = 0;
  }
  CHECK(sorted, "%s: perm not sorted by count descending", name);
  CHECK(stable, "%s: perm not stable", name);
  CHECK(f->identity_perm == ident, "%s: identity_perm %d, expected %d", name, f->identity_perm,
        ident);

  /* blocks: the documented cutting rule, replayed independently */
  int shape_ok = 1, elem_ok = 1, seg_ok = 1, cls_ok = 1, prefix_ok = 1;
  int64_t b = 0, e = 0, natom = 0;
  char *in_split = calloc((size_t)n + 1, 1);
  for (int32_t s0 = 0; s0 < n && shape_ok; s0 += 32) {
    int32_t gend = s0 + 32 < n ? s0 + 32 : n;
    for (int32_t r0 = 0;;) {
      int32_t len = 0, h = INT32_MAX;
      for (int32_t s = s0; s < gend; s++)
        if (cnt[f->perm[s]] > r0) {
          if (s != s0 + len) prefix_ok = 0;
          len++;
          if (cnt[f->perm[s]] - r0 < h) h = cnt[f->perm[s]] - r0;
        }
      if (len == 0) break;
      if (h > H) h = H;
      if (b >= f->nblocks || f->blk_ptr[b] != e || f->blk_col[b] != s0 || f->blk_len[b] != len ||
          f->blk_height[b] != h) {
        shape_ok = 0;
        break;
      }
      int complete = r0 == 0;
      for (int32_t r = 0; r < h; r++) {
        for (int32_t l = 0; l < len; l++) {
          int32_t lane = f->perm[s0 + l];
          int64_t q = L->ptr[lane] + r0 + r, x = e + (int64_t)r * len + l;
          double want = dt == COAL_F64 ? L->val[q] : (double)(float)L->val[q];
          if (f->idx[x] != L->idx[q] || fl_val(f, dt, x) != want) elem_ok = 0;
          if (r == 0 && cnt[lane] != h) complete = 0;
        }
        if (with_seg) { /* seg recomputed right to left */
          int run = 1;
          for (int32_t l = len - 1; l >= 0; l--) {
            int64_t x = e + (int64_t)r * len + l;
            run = (l + 1 < len && f->idx[x] == f->idx[x + 1]) ? run + 1 : 1;
            if (f->seg[x] != run) seg_ok = 0;
            if (l == 0 || f->idx[x] != f->idx[x - 1]) natom++;
          }
        }
      }
      int cls = len < 32 ? COAL_FL_PARTIAL : 0;
      if (with_seg) {
        int one = h == 1 && len > 1, runs = 0;
        for (int32_t r = 0; r < h; r++)
          for (int32_t l = 1; l < len; l++) {
            int64_t x = e + (int64_t)r * len + l;
            if (f->idx[x] == f->idx[x - 1]) runs = 1;
            if (f->idx[x] != f->idx[e]) one = 0;
          }
        cls |= one ? COAL_FL_ONE_ROW : runs ? COAL_FL_SEGMENTED : COAL_FL_DISTINCT;
      } else if (complete)
        cls |= COAL_FL_COMPLETE;
      else {
        natom += len;
        for (int32_t l = 0; l < len; l++) in_split[f->perm[s0 + l]] = 1;
      }
      if (f->blk_class[b] != cls) cls_ok = 0;
      e += (int64_t)len * h;
      b++;
      r0 += h;
    }
  }
  CHECK(prefix_ok, "%s: active lanes not a prefix", name);
  CHECK(shape_ok && b == f->nblocks && e == nnz, "%s H=%d seg=%d: block %lld shape differs (of %d)",
        name, H, with_seg, (long long)b, f->nblocks);
  if (!shape_ok) goto done_split;
  CHECK(elem_ok, "%s H=%d: element idx/val differ from the zigzag layout", name, H);
  CHECK(cls_ok, "%s H=%d seg=%d: block classes differ", name, H, with_seg);
  CHECK(f->natomics == natom, "%s H=%d seg=%d: natomics %lld, expected %lld", name, H, with_seg,
        (long long)f->natomics, (long long)natom);
  /* generic invariants, independent of the replay */
  {
    int ok = 1;
    for (int32_t k = 0; k < f->nblocks; k++) {
      if (f->blk_len[k] < 1 || f->blk_len[k] > 32 || f->blk_height[k] < 1 || f->blk_height[k] > H)
        ok = 0;
      int64_t next = k + 1 < f->nblocks ? f->blk_ptr[k + 1] : nnz;
      if (next != (int64_t)f->blk_ptr[k] + f->blk_len[k] * f->blk_height[k]) ok = 0;
      if (f->blk_col[k] % 32 || f->blk_col[k] + f->blk_len[k] > n) ok = 0;
    }
    CHECK(ok && (f->nblocks == 0 || f->blk_ptr[0] == 0), "%s: len/height/ptr bounds", name);
  }
  if (with_seg)
    CHECK(f->seg != NULL && seg_ok, "%s H=%d: seg inconsistent with idx", name, H);
  else {
    CHECK(f->seg == NULL, "%s: gather format has seg", name);
    int32_t ns = 0;
    int ok = 1;
    for (int32_t l = 0; l < n; l++)
      if (in_split[l] || cnt[l] == 0) {
        if (ns >= f->nsplit || f->split[ns] != l) ok = 0;
        ns++;
      }
    CHECK(ok && ns == f->nsplit, "%s H=%d: split list (%d) differs from expected (%d)", name, H,
          f->nsplit, ns);
  }
  /* reconstruct every lane's entries from the blocks; compare as sets with values */
  {
    int32_t *fill = calloc((size_t)n + 1, sizeof(int32_t));
    entry *rec = malloc(sizeof(entry) * ((size_t)nnz + 1));
    int ok = 1;
    for (int32_t k = 0; k < f->nblocks; k++)
      for (int32_t r = 0; r < f->blk_height[k]; r++)
        for (int32_t l = 0; l < f->blk_len[k]; l++) {
          int32_t lane = f->perm[f->blk_col[k] + l];
          int64_t x = f->blk_ptr[k] + (int64_t)r * f->blk_len[k] + l;
          if (fill[lane] >= cnt[lane]) {
            ok = 0;
            continue;
          }
          rec[L->ptr[lane] + fill[lane]++] = (entry){f->idx[x], fl_val(f, dt, x)};
        }
    for (int32_t l = 0; l < n && ok; l++) {
      if (fill[l] != cnt[l]) ok = 0;
      qsort(rec + L->ptr[l], (size_t)cnt[l], sizeof(entry), entry_cmp);
      for (int32_t q = L->ptr[l]; q < L->ptr[l + 1]; q++) {
        double want = dt == COAL_F64 ? L->val[q] : (double)(float)L->val[q];
        if (rec[q].idx != L->idx[q] || rec[q].val != want) ok = 0;
      }
    }
    CHECK(ok, "%s H=%d: reconstructed entries differ from the input", name, H);
    free(fill), free(rec);
  }
done_split:
  free(in_split);
done:
  free(cnt), free(seen);
}

static const int heights[] = {1, 2, 4, 8, 32, 255};
#define NH (int)(sizeof heights / sizeof heights[0])

static void check_lanes(coal_ctx ctx, const lanes *L, const char *name) {
  for (int dt = 0; dt < 2; dt++) {
    int32_t nnz = L->ptr[L->nlanes];
    void *v = malloc(8 * ((size_t)nnz + 1));
    for (int32_t e = 0; e < nnz; e++) {
      if (dt == COAL_F64)
        ((double *)v)[e] = L->val[e];
      else
        ((float *)v)[e] = (float)L->val[e];
    }
    for (int h = 0; h < NH; h++)
      for (int seg = 0; seg < 2; seg++) {
        coal_fastload *f = NULL;
        CHECK_OK(ctx, coal_fastload_build_host(ctx, L->nlanes, L->nother, L->ptr, L->idx, v,
                                               (coal_dtype)dt, heights[h], seg, &f));
        if (f) check_format(f, L, (coal_dtype)dt, heights[h], seg, name);
        coal_fastload_free(f);
      }
    free(v);
  }
}

static void test_generated(coal_ctx ctx) {
  enum { N = 600 };
  int32_t c[N];
  uint64_t s = 7;
  struct {
    const char *name;
    int32_t n, nother, pat;
  } cases[] = {
      {"zero lanes", 0, 0, PAT_RANDOM},     {"zero lanes, others", 0, 5, PAT_RANDOM},
      {"1 empty lane", 1, 1, PAT_RANDOM},   {"1x1", 1, 1, PAT_RANDOM},
      {"all empty", 40, 10, PAT_RANDOM},    {"all 33", 64, 100, PAT_RANDOM},
      {"all 33 same", 64, 100, PAT_SAME},   {"random 77", 77, 50, PAT_RANDOM},
      {"descending", 70, 80, PAT_RANDOM},   {"powerlaw", 500, 300, PAT_RANDOM},
      {"dense lane", 90, 200, PAT_RANDOM},  {"band", 200, 60, PAT_BAND},
      {"ones same", 100, 3, PAT_SAME},      {"ones random", 97, 5, PAT_RANDOM},
      {"random band 33", 33, 40, PAT_BAND},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    int32_t n = cases[k].n, m = cases[k].nother;
    for (int32_t l = 0; l < n; l++) {
      switch (k) {
      case 2: c[l] = 0; break;
      case 3: c[l] = 1; break;
      case 4: c[l] = 0; break;
      case 5:
      case 6: c[l] = 33; break;
      case 8: c[l] = (n - l) % (m + 1); break;
      case 9: c[l] = (int32_t)(m / (1 + rng_next(&s) % 97) / (1 + rng_next(&s) % 5)); break;
      case 10: c[l] = l == 17 ? m : (int32_t)(rng_next(&s) % 4); break;
      case 12:
      case 13: c[l] = 1; break;
      default: c[l] = (int32_t)(rng_next(&s) % (uint64_t)(m < 41 ? m + 1 : 41)); break;
      }
    }
    lanes L = lanes_make(n, m, c, cases[k].pat, 100 + k);
    check_lanes(ctx, &L, cases[k].name);
    lanes T = lanes_transpose(&L);
    check_lanes(ctx, &T, cases[k].name);
    lanes_free(&L), lanes_free(&T);
  }
  /* ONE_ROW blocks exist where all lanes of a round share a row */
  {
    for (int32_t l = 0; l < 100; l++) c[l] = 1;
    lanes L = lanes_make(100, 3, c, PAT_SAME, 1);
    coal_fastload *f = NULL;
    CHECK_OK(ctx, coal_fastload_build_host(ctx, 100, 3, L.ptr, L.idx, L.val, COAL_F64, 8, 1, &f));
    CHECK(f && f->nblocks == 4 && f->blk_class[0] == COAL_FL_ONE_ROW &&
              f->blk_class[3] == (COAL_FL_ONE_ROW | COAL_FL_PARTIAL) && f->natomics == 4 &&
              f->identity_perm,
          "one-row blocks");
    coal_fastload_free(f);
    lanes_free(&L);
  }
}

static void test_errors(coal_ctx ctx) {
  int32_t ptr[3] = {0, 2, 1}, idx[2] = {0, 5};
  double v[2] = {1, 2};
  coal_fastload *f = (coal_fastload *)&f;
  CHECK_ERR(ctx, coal_fastload_build_host(ctx, 1, 6, ptr, idx, v, COAL_F64, 0, 1, &f),
            COAL_ERR_ARG);
  CHECK(f == NULL, "output cleared on failure");
  CHECK_ERR(ctx, coal_fastload_build_host(ctx, 1, 6, ptr, idx, v, COAL_F64, 256, 1, &f),
            COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_fastload_build_host(ctx, 2, 6, ptr, idx, v, COAL_F64, 8, 1, &f),
            COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_fastload_build_host(ctx, 1, 5, ptr, idx, v, COAL_F64, 8, 1, &f),
            COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_fastload_build_host(ctx, -1, 5, ptr, idx, v, COAL_F64, 8, 1, &f),
            COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_fastload_build_host(ctx, 1, 6, ptr, idx, v, COAL_F64, 8, 1, NULL),
            COAL_ERR_ARG);
  CHECK(strlen(coal_ctx_last_error(ctx)) > 0, "error message recorded");
  CHECK_OK(ctx, coal_fastload_build_host(ctx, 1, 6, ptr, idx, v, COAL_F64, 255, 1, &f));
  CHECK(f && f->nblocks == 1 && f->blk_height[0] == 2, "height limit 255 accepted");
  coal_fastload_free(f);
  coal_fastload_free(NULL);
}

/* The gather schedule (coal_fastload_schedule_host) against its definition: the tasks split the
 * blocks in order, each inside one 32-lane group and of at most COAL_FLT_TASK_ROUNDS rounds
 * unless it is one block; a lane that a task stores without atomics has its whole row in that
 * one task and in no atomic task; prescale lists exactly the other rows (lanes of atomic tasks
 * and empty rows), original ids in sorted-lane order. R: the lanes (rows) in original order. */
static void check_schedule(coal_ctx ctx, const coal_fastload *f, const lanes *R, const char *name) {
  int32_t *task = NULL, *pre = NULL, nt = -1, np = -1;
  CHECK_OK(ctx, coal_fastload_schedule_host(ctx, f, &task, &nt, &pre, &np));
  if (!task || !pre) {
    free(task), free(pre);
    return;
  }
  const int32_t nl = f->nlanes;
  int32_t *by = calloc((size_t)nl + 1, sizeof(int32_t));     /* storing task + 1, 0 none */
  int32_t *rounds = calloc((size_t)nl + 1, sizeof(int32_t)); /* rounds stored */
  uint8_t *atomic = calloc((size_t)nl + 1, 1);
  int ok = nt >= 0 && task[nt] == f->nblocks && (nt > 0 || f->nblocks == 0);
  int32_t end = 0;
  for (int32_t t = 0; ok && t < nt; t++) {
    const int at = ((uint32_t)task[t] & COAL_FLT_TASK_ATOMIC) != 0;
    const int32_t b0 = (int32_t)((uint32_t)task[t] & ~COAL_FLT_TASK_ATOMIC);
    const int32_t b1 =
        t + 1 < nt ? (int32_t)((uint32_t)task[t + 1] & ~COAL_FLT_TASK_ATOMIC) : task[nt];
    ok &= b0 == end && b1 > b0 && b1 <= f->nblocks;
    if (!ok) break;
    int32_t r = 0;
    for (int32_t b = b0; b < b1; b++) {
      ok &= f->blk_col[b] == f->blk_col[b0];
      r += f->blk_height[b];
      for (int32_t l = f->blk_col[b]; l < f->blk_col[b] + f->blk_len[b]; l++)
        if (at)
          atomic[l] = 1;
        else
          ok &= by[l] == 0 || by[l] == t + 1, by[l] = t + 1, rounds[l] += f->blk_height[b];
    }
    ok &= b1 - b0 == 1 || r <= COAL_FLT_TASK_ROUNDS;
    end = b1;
  }
  int32_t q = 0;
  for (int32_t s = 0; ok && s < nl; s++) {
    const int32_t orig = f->perm[s], cnt = R->ptr[orig + 1] - R->ptr[orig];
    const int whole = by[s] && !atomic[s];
    if (by[s]) ok &= !atomic[s] && rounds[s] == cnt;
    if (!whole) ok &= q < np && pre[q++] == orig;
  }
  ok &= q == np;
  CHECK(ok, "%s: gather schedule (%d tasks, %d pre-scaled rows) breaks its definition", name, nt,
        np);
  free(by), free(rounds), free(atomic), free(task), free(pre);
}

/* Both formats of a library matrix, through coal_mat_fastload, for several heights. */
static void check_matrix(coal_mat A, const char *name, int nh) {
  lanes R = lanes_from_mat(A), C = lanes_transpose(&R);
  for (int h = 0; h < nh; h++) {
    CHECK_OK(A->ctx, coal_mat_set_fastload_height(A, heights[h]));
    const coal_fastload *f = NULL, *ft = NULL;
    CHECK_OK(A->ctx, coal_mat_fastload(A, 0, &f));
    CHECK_OK(A->ctx, coal_mat_fastload(A, 1, &ft));
    if (f) check_format(f, &C, A->dtype, heights[h], 1, name);
    if (ft) check_format(ft, &R, A->dtype, heights[h], 0, name);
    if (ft) check_schedule(A->ctx, ft, &R, name);
    coal_fastload_stats st;
    CHECK_OK(A->ctx, coal_mat_fastload_stats(A, 1, &st));
    CHECK(ft && st.nblocks == ft->nblocks && st.natomics == ft->natomics, "%s: stats", name);
  }
  lanes_free(&R), lanes_free(&C);
}

/* 7-point Laplacian on an n^3 grid, CSR built here (independent of the generators). */
static coal_mat laplace3d(coal_ctx ctx, int32_t n) {
  int64_t N = (int64_t)n * n * n, k = 0;
  int32_t *ri = malloc(sizeof(int32_t) * (size_t)(7 * N)),
          *ci = malloc(sizeof(int32_t) * (size_t)(7 * N));
  double *v = malloc(sizeof(double) * (size_t)(7 * N));
  for (int32_t z = 0; z < n; z++)
    for (int32_t y = 0; y < n; y++)
      for (int32_t x = 0; x < n; x++) {
        int32_t i = (z * n + y) * n + x;
        int32_t nb[7] = {i,
                         x > 0 ? i - 1 : -1,
                         x < n - 1 ? i + 1 : -1,
                         y > 0 ? i - n : -1,
                         y < n - 1 ? i + n : -1,
                         z > 0 ? i - n * n : -1,
                         z < n - 1 ? i + n * n : -1};
        for (int t = 0; t < 7; t++)
          if (nb[t] >= 0) ri[k] = i, ci[k] = nb[t], v[k] = t ? -1.0 : 6.0, k++;
      }
  coal_mat A = NULL;
  CHECK_OK(ctx, coal_mat_create_coo(ctx, N, N, k, ri, ci, v, COAL_F64, &A));
  free(ri), free(ci), free(v);
  return A;
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
      if (A) check_matrix(A, name, dt == COAL_F64 ? 5 : 2);
      coal_mat_destroy(&A);
    }
  }
  check_free_matrices(paths, nf);
}

int main(void) {
  coal_ctx ctx = NULL;
  CHECK_OK(ctx, coal_ctx_create(COAL_BACKEND_HOST, &ctx));
  if (!ctx) return check_finish();
  test_errors(ctx);
  test_generated(ctx);
  coal_mat A = laplace3d(ctx, 20);
  if (A) check_matrix(A, "laplace3d 20", 5);
  coal_mat_destroy(&A);
  test_files(ctx);
  coal_ctx_destroy(&ctx);
  return check_finish();
}
