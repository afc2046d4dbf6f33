/* CUDA TileSpGEMM against its host twin (suite "cuda", exit 77 without a GPU).
 *
 * For every pair (A, B) the same product is made on a host and a CUDA context:
 *  - steps 1 and 2: the device tile structure of C (tile_ptr, tile_col, tile_nnz, row offsets,
 *    masks) and the tile -> CSR map, downloaded, equal the host's exactly;
 *  - step 3 and the whole product: C's structure exact, values within 1e-13 (relative,
 *    normwise; both sides sum in the same order without FMA, so they should be identical: the
 *    number of differing values is printed), with the dense threshold at 192, 0 and 256;
 *  - C's device copy (handed over by the product) equals C's host CSR;
 *  - numeric-only recomputation after new values of A, B (A != B and A == B), and P^T A P with
 *    an aggregation P, its smoothed version, and new values of A and P; with ROWS, P^T A P is
 *    the fused product (kernels/cuda/spgemm_ptap.cu), checked to be used, to hold at most 2x C
 *    besides C (fp64, C of 64 KB or more), and on shapes that take each of its paths (warp and
 *    CTA tables, bitmap symbolic, empty rows and columns) or its fallback to two products;
 *    fused values within 1e-13 (fp64) and 1e-5 (fp32: the host rounds A*P to float);
 *  - the tile statistics agree with the host's;
 *  - CSR -> tiles on the GPU equals the host builder, tiles -> CSR on the GPU is exact.
 * Pairs: A*A and A*A^T on generated matrices (Laplacians, power-law, random SPD), edge cases
 * (empty, 1x1, full tiles, sizes not multiples of 16, tall and wide, empty tiles of C) and every
 * shared matrix (products above 2e7 intermediate products skipped, as on the host).
 * COALESCE_TEST_QUICK=1: generated and edge cases only, fp64 (for compute-sanitizer). */
#include "check.h"
#include "../kernels/spgemm.h"

static int quick = 0, nproducts = 0, nbitdiff = 0;
/* the algorithm under test: TILE (host twin: the host tiled product, step by step) or ROWS
 * (host twin: Gustavson; C stays on the GPU until the comparison downloads it) */
static coal_spgemm_algo algo = COAL_SPGEMM_TILE;
#define MAX_PRODUCTS 20000000

static double getv(coal_mat M, int64_t p) {
  return M->dtype == COAL_F64 ? ((double *)M->values)[p] : ((float *)M->values)[p];
}

/* A copy of host matrix H on context ctx. */
static coal_mat on_ctx(coal_mat H, coal_ctx ctx) {
  int64_t *rp = malloc(sizeof(int64_t) * ((size_t)H->nrows + 1));
  for (int32_t i = 0; i <= H->nrows; i++) rp[i] = H->rowptr[i];
  coal_mat M = NULL;
  CHECK_OK(ctx,
           coal_mat_create_csr(ctx, H->nrows, H->ncols, rp, H->colind, H->values, H->dtype, &M));
  free(rp);
  return M;
}

/* Values within tol (relative, normwise). */
static void compare_tol(coal_mat got, coal_mat ref, const char *what, double tol) {
  CHECK(got && ref, "%s: missing matrix", what);
  if (!got || !ref) return;
  CHECK_OK(got->ctx, coal_mat_host(got));
  if (!got->rowptr) return;
  int same = got->nrows == ref->nrows && got->ncols == ref->ncols && got->nnz == ref->nnz &&
             !memcmp(got->rowptr, ref->rowptr, sizeof(int32_t) * ((size_t)ref->nrows + 1)) &&
             !memcmp(got->colind, ref->colind, sizeof(int32_t) * (size_t)ref->nnz);
  CHECK(same, "%s: structure differs (%lld against %lld nonzeros)", what, (long long)got->nnz,
        (long long)ref->nnz);
  if (!same) return;
  double num = 0, den = 0;
  int64_t diff = 0;
  for (int64_t p = 0; p < ref->nnz; p++) {
    double a = getv(got, p), b = getv(ref, p);
    if (isnan(a) != isnan(b)) num = INFINITY;
    if (a != b) diff++;
    if (fabs(a - b) > num) num = fabs(a - b);
    if (fabs(b) > den) den = fabs(b);
  }
  double rel = den > 0 ? num / den : num;
  CHECK(rel <= tol, "%s: values differ by %.3g (relative)", what, rel);
  if (diff) {
    nbitdiff++;
    printf("note: %s: %lld of %lld values not bit-identical (max rel %.2g)\n", what,
           (long long)diff, (long long)ref->nnz, rel);
  }
}
static void compare_mats(coal_mat got, coal_mat ref, const char *what) {
  compare_tol(got, ref, what, 1e-13);
}

/* C's device copy, handed over by the product (C is current on the device without an
 * upload), gives y = C x equal to the host loop on C's host CSR. */
static void check_device_copy(coal_mat C, const char *what) {
  coal_ctx ctx = C->ctx;
  CHECK(C->dev != NULL, "%s: C has no device copy after the product", what);
  if (C->nrows == 0 || C->ncols == 0) return;
  size_t es = coal_dtype_size(C->dtype);
  char *x = malloc(es * (size_t)C->ncols), *y = malloc(es * (size_t)C->nrows);
  double *ref = malloc(sizeof(double) * (size_t)C->nrows);
  double scale = 0;
  for (int32_t j = 0; j < C->ncols; j++) {
    double u = coal_random_uniform(9, (uint64_t)j);
    if (C->dtype == COAL_F64)
      ((double *)x)[j] = u;
    else
      ((float *)x)[j] = (float)u;
  }
  memset(y, 0xff, es * (size_t)C->nrows); /* poisoned: NaN */
  /* y = C x first, from the device copy alone (a ROWS product has no host copy yet) */
  coal_bvec X = NULL, Y = NULL;
  CHECK_OK(ctx, coal_bvec_create(ctx, C->ncols, 1, C->dtype, COAL_COL_MAJOR, 0, &X));
  CHECK_OK(ctx, coal_bvec_create(ctx, C->nrows, 1, C->dtype, COAL_COL_MAJOR, 0, &Y));
  if (X && Y) {
    CHECK_OK(ctx, coal_bvec_set_host(X, x, COAL_COL_MAJOR, 0));
    CHECK_OK(ctx, coal_spmv(C, COAL_SPMV_CSR_VECTOR, 1.0, X, 0.0, Y));
    CHECK_OK(ctx, coal_bvec_get_host(Y, y, COAL_COL_MAJOR, 0));
  }
  coal_bvec_destroy(&X), coal_bvec_destroy(&Y);
  CHECK_OK(ctx, coal_mat_host(C));
  if (!C->rowptr) {
    free(x), free(y), free(ref);
    return;
  }
  for (int32_t i = 0; i < C->nrows; i++) {
    double r = 0, a = 0;
    for (int32_t p = C->rowptr[i]; p < C->rowptr[i + 1]; p++) {
      double xv = C->dtype == COAL_F64 ? ((double *)x)[C->colind[p]] : ((float *)x)[C->colind[p]];
      r += getv(C, p) * xv;
      a += fabs(getv(C, p) * xv);
    }
    ref[i] = r;
    if (a > scale) scale = a;
  }
  double d = 0;
  for (int32_t i = 0; i < C->nrows; i++) {
    double yv = C->dtype == COAL_F64 ? ((double *)y)[i] : ((float *)y)[i];
    if (!(fabs(yv - ref[i]) <= d)) d = fabs(yv - ref[i]);
  }
  double tol = C->dtype == COAL_F64 ? 1e-12 : 1e-5;
  CHECK(d <= tol * (scale > 0 ? scale : 1), "%s: y = C x with C's device copy off by %.3g", what,
        d);
  free(x), free(y), free(ref);
}

/* Steps 1 and 2 of the device product pd equal the host product ph's. */
static void check_structure(coal_spgemm ph, coal_spgemm pd, const char *what) {
  coal_tile *t = NULL;
  int32_t *pos = NULL;
  CHECK_OK(pd->ctx, coal_spgemm_download_cuda(pd, &t, &pos));
  if (!t) return;
  const coal_tile *h = ph->tc;
  size_t nt = (size_t)h->ntiles;
  int s1 = t->ntiles == h->ntiles && t->tm == h->tm &&
           !memcmp(t->tile_ptr, h->tile_ptr, sizeof(int32_t) * ((size_t)h->tm + 1)) &&
           !memcmp(t->tile_col, h->tile_col, sizeof(int32_t) * nt);
  CHECK(s1, "%s: step 1 (tile layout of C) differs: %d against %d tiles", what, t->ntiles,
        h->ntiles);
  if (s1) {
    int s2 = t->nnz == h->nnz && !memcmp(t->tile_nnz, h->tile_nnz, sizeof(int32_t) * (nt + 1)) &&
             !memcmp(t->row_ptr, h->row_ptr, 16 * nt) &&
             !memcmp(t->mask, h->mask, sizeof(uint16_t) * 16 * nt);
    CHECK(s2, "%s: step 2 (masks, row offsets, tile nonzeros) differs", what);
    /* rows past the last row of C (last tile row, nrows not a multiple of 16) have no map */
    int pos_ok = 1;
    for (int32_t I = 0; I < h->tm && pos_ok; I++)
      for (int32_t q = h->tile_ptr[I]; q < h->tile_ptr[I + 1]; q++)
        for (int32_t r = 0; r < 16 && 16 * I + r < h->nrows; r++)
          if (pos[(size_t)q * 16 + (size_t)r] != ph->c_pos[(size_t)q * 16 + (size_t)r]) pos_ok = 0;
    CHECK(pos_ok, "%s: tile -> CSR map differs", what);
  }
  coal_tile_free(t);
  coal_free(pos);
}

/* The product A*B on both contexts (Ah/Bh host, Ad/Bd device copies). */
static void check_pair(coal_mat Ah, coal_mat Bh, coal_mat Ad, coal_mat Bd, const char *name) {
  int64_t np = coal_spgemm_products(Ah, Bh);
  if (np > MAX_PRODUCTS) {
    printf("skipped %s: %lld intermediate products\n", name, (long long)np);
    return;
  }
  char what[300];
  coal_spgemm ph = NULL, pd = NULL;
  coal_mat Ch = NULL, Cd = NULL;
  CHECK_OK(Ah->ctx, coal_spgemm_create_algo(COAL_PRODUCT_AB, Ah, Bh, algo, &ph, &Ch));
  CHECK_OK(Ad->ctx, coal_spgemm_create_algo(COAL_PRODUCT_AB, Ad, Bd, algo, &pd, &Cd));
  if (ph && pd && algo == COAL_SPGEMM_ROWS) {
    nproducts++;
    snprintf(what, sizeof what, "%s (%s, rows)", name, Ah->dtype == COAL_F64 ? "f64" : "f32");
    if (Cd) check_device_copy(Cd, what);
    compare_mats(Cd, Ch, what);
    CHECK_OK(Ad->ctx, coal_spgemm_numeric(pd)); /* numeric-only, same values */
    snprintf(what, sizeof what, "%s (%s, rows, numeric again)", name,
             Ah->dtype == COAL_F64 ? "f64" : "f32");
    compare_mats(Cd, Ch, what);
  } else if (ph && pd) {
    nproducts++;
    snprintf(what, sizeof what, "%s (%s)", name, Ah->dtype == COAL_F64 ? "f64" : "f32");
    check_structure(ph, pd, what);
    compare_mats(Cd, Ch, what);
    if (Cd) check_device_copy(Cd, what);
    coal_spgemm_stats sh, sd;
    CHECK_OK(Ah->ctx, coal_spgemm_get_stats(ph, &sh));
    CHECK_OK(Ad->ctx, coal_spgemm_get_stats(pd, &sd));
    CHECK(sh.nnz_c == sd.nnz_c && sh.ntiles_c == sd.ntiles_c && sh.tile_pairs == sd.tile_pairs &&
              sh.empty_tiles_c == sd.empty_tiles_c && sh.dense_tiles_c == sd.dense_tiles_c &&
              sh.products == sd.products,
          "%s: stats differ", what);
    const int thr[2] = {0, 256};
    for (int s = 0; s < 2; s++) {
      CHECK_OK(Ad->ctx, coal_spgemm_set_dense_threshold(pd, thr[s]));
      CHECK_OK(Ad->ctx, coal_spgemm_numeric(pd));
      snprintf(what, sizeof what, "%s (%s, dense above %d)", name,
               Ah->dtype == COAL_F64 ? "f64" : "f32", thr[s]);
      compare_mats(Cd, Ch, what);
    }
  }
  coal_spgemm_destroy(&ph), coal_spgemm_destroy(&pd);
  coal_mat_destroy(&Ch), coal_mat_destroy(&Cd);
}

/* GPU CSR -> tiles of D (device copy of host matrix H) equals the host builder, and the
 * GPU tiles -> CSR gives D's CSR back. */
static void check_conversion(coal_mat H, coal_mat D, const char *name) {
  coal_tile *g = NULL, *h = NULL;
  int32_t *rp = NULL, *ci = NULL;
  void *v = NULL;
  CHECK_OK(D->ctx, coal_tile_roundtrip_cuda(D, &g, &rp, &ci, &v));
  CHECK_OK(H->ctx, coal_tile_build_host(H, &h));
  if (h) CHECK_OK(H->ctx, coal_tile_build_csc(H->ctx, h));
  if (g && h) {
    size_t nt = (size_t)h->ntiles, nz = (size_t)h->nnz, es = coal_dtype_size(H->dtype);
    int same = g->ntiles == h->ntiles && g->nnz == h->nnz &&
               !memcmp(g->tile_ptr, h->tile_ptr, 4 * ((size_t)h->tm + 1)) &&
               !memcmp(g->tile_col, h->tile_col, 4 * nt) &&
               !memcmp(g->tile_nnz, h->tile_nnz, 4 * (nt + 1)) &&
               !memcmp(g->row_ptr, h->row_ptr, 16 * nt) && !memcmp(g->mask, h->mask, 32 * nt) &&
               !memcmp(g->idx, h->idx, nz) && !memcmp(g->val, h->val, es * nz) &&
               !memcmp(g->csr_pos, h->csr_pos, 4 * nz) &&
               !memcmp(g->csc_ptr, h->csc_ptr, 4 * ((size_t)h->tn + 1)) &&
               !memcmp(g->csc_row, h->csc_row, 4 * nt) && !memcmp(g->csc_id, h->csc_id, 4 * nt);
    CHECK(same, "%s: GPU CSR -> tiles differs from the host builder", name);
    CHECK(!memcmp(rp, H->rowptr, 4 * ((size_t)H->nrows + 1)) && !memcmp(ci, H->colind, 4 * nz) &&
              !memcmp(v, H->values, es * nz),
          "%s: GPU tiles -> CSR is not the original CSR", name);
  }
  coal_tile_free(g), coal_tile_free(h);
  coal_free(rp), coal_free(ci), coal_free(v);
}

/* A*A (square) and A*A^T for host matrix H. */
static void check_matrix(coal_mat H, coal_ctx dctx, const char *name) {
  char buf[256];
  coal_mat D = on_ctx(H, dctx), T = NULL, TD = NULL;
  if (!D) return;
  if (algo == COAL_SPGEMM_TILE) check_conversion(H, D, name);
  if (H->nrows == H->ncols) {
    snprintf(buf, sizeof buf, "%s A*A", name);
    check_pair(H, H, D, D, buf);
  }
  CHECK_OK(H->ctx, coal_mat_transpose(H, &T));
  if (T) TD = on_ctx(T, dctx);
  snprintf(buf, sizeof buf, "%s A*A^T", name);
  if (T && TD) check_pair(H, T, D, TD, buf);
  coal_mat_destroy(&D), coal_mat_destroy(&T), coal_mat_destroy(&TD);
}

/* ---- numeric-only and P^T A P ------------------------------------------------------------- */
static void perturb(coal_mat M, uint64_t seed) {
  size_t es = coal_dtype_size(M->dtype);
  void *v = malloc(es * (size_t)(M->nnz + 1));
  for (int64_t p = 0; p < M->nnz; p++) {
    double x = getv(M, p) * (1.0 + 0.25 * coal_random_uniform(seed, (uint64_t)p));
    if (M->dtype == COAL_F64)
      ((double *)v)[p] = x;
    else
      ((float *)v)[p] = (float)x;
  }
  CHECK_OK(M->ctx, coal_mat_set_values(M, v));
  free(v);
}

/* Host and device matrix perturbed alike. */
static void perturb2(coal_mat H, coal_mat D, uint64_t seed) {
  perturb(H, seed);
  perturb(D, seed);
}

/* A product object of each type on both contexts, numeric after new values of its operands.
 * fused: for P^T A P with ROWS, whether the fused product must be used (1), must not (0), or
 * either (-1); the fused product sums in another order and, in single precision, does not
 * round A*P to float as the host twin does: values within 1e-13 (fp64) and 1e-5 (fp32). Its
 * memory besides C must stay within 2x C where max_temp_over_c > 0. */
static void check_ptap_reuse(coal_mat Ah, coal_mat Bh, coal_mat Ad, coal_mat Bd, const char *name,
                             int fused, double max_temp_over_c);
static void check_reuse(coal_product_type type, coal_mat Ah, coal_mat Bh, coal_mat Ad, coal_mat Bd,
                        const char *name) {
  if (type == COAL_PRODUCT_PTAP) {
    check_ptap_reuse(Ah, Bh, Ad, Bd, name, -1, 0.0);
    return;
  }
  coal_spgemm ph = NULL, pd = NULL;
  coal_mat Ch = NULL, Cd = NULL;
  char what[300];
  CHECK_OK(Ah->ctx, coal_spgemm_create_algo(type, Ah, Bh, algo, &ph, &Ch));
  CHECK_OK(Ad->ctx, coal_spgemm_create_algo(type, Ad, Bd, algo, &pd, &Cd));
  if (ph && pd) {
    snprintf(what, sizeof what, "%s created", name);
    compare_mats(Cd, Ch, what);
    for (int round = 0; round < 3; round++) {
      if (round != 1) perturb2(Ah, Ad, 700 + round);
      if (round >= 1 && Bh != Ah) perturb2(Bh, Bd, 800 + round);
      CHECK_OK(Ah->ctx, coal_spgemm_numeric(ph));
      CHECK_OK(Ad->ctx, coal_spgemm_numeric(pd));
      snprintf(what, sizeof what, "%s numeric round %d", name, round);
      compare_mats(Cd, Ch, what);
    }
    nproducts++;
  }
  coal_spgemm_destroy(&ph), coal_spgemm_destroy(&pd);
  coal_mat_destroy(&Ch), coal_mat_destroy(&Cd);
}

static void check_ptap_reuse(coal_mat Ah, coal_mat Bh, coal_mat Ad, coal_mat Bd, const char *name,
                             int fused, double max_temp_over_c) {
  coal_spgemm ph = NULL, pd = NULL;
  coal_mat Ch = NULL, Cd = NULL;
  char what[300];
  const int rows = algo == COAL_SPGEMM_ROWS;
  const double tol = rows && Ah->dtype == COAL_F32 ? 1e-5 : 1e-13;
  CHECK_OK(Ah->ctx, coal_spgemm_create_algo(COAL_PRODUCT_PTAP, Ah, Bh, algo, &ph, &Ch));
  CHECK_OK(Ad->ctx, coal_spgemm_create_algo(COAL_PRODUCT_PTAP, Ad, Bd, algo, &pd, &Cd));
  if (ph && pd) {
    if (rows && fused >= 0)
      CHECK(pd->fused == fused, "%s: fused product %d, expected %d", name, pd->fused, fused);
    snprintf(what, sizeof what, "%s created%s", name, pd->fused ? " (fused)" : "");
    compare_tol(Cd, Ch, what, tol);
    coal_spgemm_stats sd;
    CHECK_OK(Ad->ctx, coal_spgemm_get_stats(pd, &sd));
    if (max_temp_over_c > 0 && sd.c_bytes >= 65536) { /* not on tiny C: fixed workspaces */
      CHECK(sd.temp_bytes <= max_temp_over_c * sd.c_bytes,
            "%s: %zu bytes held besides C, %.2fx C (%zu bytes)", name, sd.temp_bytes,
            (double)sd.temp_bytes / (double)sd.c_bytes, sd.c_bytes);
      printf("%s: %zu bytes besides C = %.2fx C\n", name, sd.temp_bytes,
             (double)sd.temp_bytes / (double)sd.c_bytes);
    }
    if (pd->fused) { /* the two products it stands for */
      coal_spgemm_stats sh;
      CHECK_OK(Ah->ctx, coal_spgemm_get_stats(ph, &sh));
      CHECK(sh.products == sd.products && sh.nnz_c == sd.nnz_c,
            "%s: products %lld, nnz %lld (host %lld, %lld)", name, (long long)sd.products,
            (long long)sd.nnz_c, (long long)sh.products, (long long)sh.nnz_c);
    }
    for (int round = 0; round < 3; round++) {
      if (round != 1) perturb2(Ah, Ad, 700 + round);
      if (round >= 1) perturb2(Bh, Bd, 800 + round);
      CHECK_OK(Ah->ctx, coal_spgemm_numeric(ph));
      CHECK_OK(Ad->ctx, coal_spgemm_numeric(pd));
      snprintf(what, sizeof what, "%s numeric round %d", name, round);
      compare_tol(Cd, Ch, what, tol);
    }
    nproducts++;
  }
  coal_spgemm_destroy(&ph), coal_spgemm_destroy(&pd);
  coal_mat_destroy(&Ch), coal_mat_destroy(&Cd);
}

static coal_mat aggregation(coal_ctx ctx, int nx, int ny, int nz, coal_dtype dt) {
  int n = nx * ny * nz, ax = (nx + 2) / 3, ay = (ny + 2) / 3, az = (nz + 2) / 3;
  int32_t *r = malloc(sizeof(int32_t) * (size_t)n), *c = malloc(sizeof(int32_t) * (size_t)n);
  double *v = malloc(sizeof(double) * (size_t)n);
  for (int z = 0; z < nz; z++)
    for (int y = 0; y < ny; y++)
      for (int x = 0; x < nx; x++) {
        int i = x + nx * (y + ny * z);
        r[i] = i, c[i] = x / 3 + ax * (y / 3 + ay * (z / 3)), v[i] = 1.0;
      }
  coal_mat P = NULL;
  CHECK_OK(ctx, coal_mat_create_coo(ctx, n, ax * ay * az, n, r, c, v, dt, &P));
  free(r), free(c), free(v);
  return P;
}

static void check_products(coal_ctx hc, coal_ctx dc, coal_dtype dt) {
  coal_mat L = NULL, P = NULL, S = NULL, W = NULL, R = NULL;
  int g = quick ? 9 : 24;
  CHECK_OK(hc, coal_gen_laplace3d(hc, g, g, g - 2, 7, dt, &L));
  P = aggregation(hc, g, g, g - 2, dt);
  CHECK_OK(hc, coal_gen_powerlaw(hc, quick ? 2000 : 20000, 6, 2.5, 21, dt, &W));
  CHECK_OK(hc, coal_gen_random_spd(hc, quick ? 2000 : 20000, 8, 22, dt, &R));
  if (!L || !P || !W || !R) goto done;
  CHECK_OK(hc, coal_mat_multiply(L, P, &S)); /* a wider P (unsmoothed L P, for shape only) */
  coal_mat Ld = on_ctx(L, dc), Pd = on_ctx(P, dc), Sd = S ? on_ctx(S, dc) : NULL;
  coal_mat Wd = on_ctx(W, dc), Rd = on_ctx(R, dc);
  if (Ld && Pd && Sd && Wd && Rd) {
    check_reuse(COAL_PRODUCT_AB, W, R, Wd, Rd, "powerlaw * spd");
    check_reuse(COAL_PRODUCT_AB, R, R, Rd, Rd, "spd * spd (A == B)");
    const int rows = algo == COAL_SPGEMM_ROWS;
    /* ROWS: the fused product, within 2x C besides C in fp64 (an fp32 C is 2/3 the size, the
     * pattern of P^T the same: 2.1x on these small grids, 1.8x on lap3d:128) */
    const double lim = rows && dt == COAL_F64 ? 2.0 : 0.0;
    check_ptap_reuse(L, P, Ld, Pd, "PtAP aggregation", rows ? 1 : -1, lim);
    check_ptap_reuse(L, S, Ld, Sd, "PtAP wide prolongator", rows ? 1 : -1, lim);
  }
  coal_mat_destroy(&Ld), coal_mat_destroy(&Pd), coal_mat_destroy(&Sd);
  coal_mat_destroy(&Wd), coal_mat_destroy(&Rd);
done:
  coal_mat_destroy(&L), coal_mat_destroy(&P), coal_mat_destroy(&S);
  coal_mat_destroy(&W), coal_mat_destroy(&R);
}

static coal_mat random_mat(coal_ctx ctx, int m, int n, double d, uint64_t seed, coal_dtype dt);

/* P^T A P shapes that pick each path of the fused GPU product (ROWS) or its fallback to two
 * products: A random n x n (3 entries per row), P with one entry per row in a random column of
 * 1..m-1 and, when `full`, all of column 0 (row 0 of C then has about n * 3 * 2 products and
 * as many entries as P's rows hit distinct columns: the bitmap symbolic and the CTA numeric
 * tables, or the fallback). */
static coal_mat ptap_p(coal_ctx ctx, int n, int m, int full, uint64_t seed, coal_dtype dt) {
  int32_t *r = malloc(sizeof(int32_t) * 2 * (size_t)n),
          *c = malloc(sizeof(int32_t) * 2 * (size_t)n);
  double *v = malloc(sizeof(double) * 2 * (size_t)n);
  int nz = 0;
  for (int i = 0; i < n && m > 0; i++) {
    if (i % 7 == 3) continue; /* empty rows of P */
    int j = m > 1 ? 1 + (int)((coal_random_uniform(seed, (uint64_t)i) * 0.5 + 0.5) * (m - 1)) : 0;
    if (j >= m) j = m - 1;
    r[nz] = i, c[nz] = j, v[nz] = 0.5 + 0.25 * coal_random_uniform(seed + 1, (uint64_t)i), nz++;
    if (full && j != 0) r[nz] = i, c[nz] = 0, v[nz] = 1.0 / (1 + i % 3), nz++;
  }
  coal_mat P = NULL;
  CHECK_OK(ctx, coal_mat_create_coo(ctx, n, m, nz, r, c, v, dt, &P));
  free(r), free(c), free(v);
  return P;
}

static void check_ptap_shapes(coal_ctx hc, coal_ctx dc, coal_dtype dt) {
  struct {
    int n, m, full, fused;
    const char *name;
  } cases[] = {
      {500, 37, 0, 1, "PtAP random, 37 coarse columns (empty ones)"},
      {3000, 1800, 1, 1, "PtAP full column, row 0 of about 1800 entries"},
      {6000, 6000, 1, 1, "PtAP full column, row 0 of about 3500 entries"},
      {6000, 40000, 1, 0, "PtAP full column, row 0 above 4096 entries (two products)"},
      {3000, 400000, 1, 0, "PtAP full column, 400000 coarse columns (two products)"},
      {40, 0, 0, 1, "PtAP with P of no columns"},
      {0, 5, 0, 1, "PtAP of empty A"},
  };
  for (int k = 0; k < (int)(sizeof cases / sizeof cases[0]); k++) {
    const int n = cases[k].n;
    coal_mat A = random_mat(hc, n, n, n ? 3.0 / n : 0.5, 900 + k, dt);
    coal_mat P = ptap_p(hc, n, cases[k].m, cases[k].full, 950 + k, dt);
    coal_mat Ad = A ? on_ctx(A, dc) : NULL, Pd = P ? on_ctx(P, dc) : NULL;
    if (A && P && Ad && Pd) check_ptap_reuse(A, P, Ad, Pd, cases[k].name, cases[k].fused, 0.0);
    coal_mat_destroy(&A), coal_mat_destroy(&P), coal_mat_destroy(&Ad), coal_mat_destroy(&Pd);
  }
}

/* ---- matrices ------------------------------------------------------------------------------- */
static coal_mat random_mat(coal_ctx ctx, int m, int n, double d, uint64_t seed, coal_dtype dt) {
  int cap = (int)((double)m * n * d) + 16, nz = 0;
  int32_t *r = malloc(sizeof(int32_t) * (size_t)cap), *c = malloc(sizeof(int32_t) * (size_t)cap);
  double *v = malloc(sizeof(double) * (size_t)cap);
  uint64_t s = 0;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++)
      if (nz < cap && i % 5 != 1 && coal_random_uniform(seed, s++) * 0.5 + 0.5 < d)
        r[nz] = i, c[nz] = j, v[nz] = coal_random_uniform(seed + 1, (uint64_t)nz), nz++;
  coal_mat M = NULL;
  CHECK_OK(ctx, coal_mat_create_coo(ctx, m, n, nz, r, c, v, dt, &M));
  free(r), free(c), free(v);
  return M;
}

static void check_edges(coal_ctx hc, coal_ctx dc, coal_dtype dt) {
  const int dims[][3] = {{17, 33, 5}, {1, 1, 1},     {40, 16, 70}, {16, 16, 16},
                         {3, 200, 3}, {200, 3, 200}, {47, 31, 29}, {100, 90, 80},
                         {0, 5, 7},   {5, 0, 7},     {5, 7, 0},    {0, 0, 0}};
  const double dens[] = {0.3, 1.0, 0.05, 1.0, 0.5, 0.5, 0.2, 0.1, 0.5, 0.5, 0.5, 0.5};
  for (int c = 0; c < (int)(sizeof dens / sizeof dens[0]); c++) {
    char name[128];
    snprintf(name, sizeof name, "random %dx%d * %dx%d", dims[c][0], dims[c][1], dims[c][1],
             dims[c][2]);
    coal_mat A = random_mat(hc, dims[c][0], dims[c][1], dens[c], 100 + c, dt);
    coal_mat B = random_mat(hc, dims[c][1], dims[c][2], dens[c], 200 + c, dt);
    coal_mat Ad = A ? on_ctx(A, dc) : NULL, Bd = B ? on_ctx(B, dc) : NULL;
    if (A && B && Ad && Bd) check_pair(A, B, Ad, Bd, name);
    coal_mat_destroy(&A), coal_mat_destroy(&B), coal_mat_destroy(&Ad), coal_mat_destroy(&Bd);
  }
  /* empty tiles of C (see test_spgemm_host.c) and a full 16 x 16 tile from two full tiles */
  int32_t ar[3] = {0, 3, 17}, ac[3] = {0, 0, 1}, br[3] = {1, 1, 0}, bc[3] = {2, 18, 17};
  double v[256];
  for (int e = 0; e < 256; e++) v[e] = 1.0 + e * 0.01;
  coal_mat A = NULL, B = NULL, F = NULL;
  CHECK_OK(hc, coal_mat_create_coo(hc, 20, 20, 3, ar, ac, v, dt, &A));
  CHECK_OK(hc, coal_mat_create_coo(hc, 20, 20, 3, br, bc, v, dt, &B));
  int32_t fr[256], fc[256];
  for (int e = 0; e < 256; e++) fr[e] = e / 16, fc[e] = e % 16;
  CHECK_OK(hc, coal_mat_create_coo(hc, 16, 16, 256, fr, fc, v, dt, &F));
  coal_mat Ad = A ? on_ctx(A, dc) : NULL, Bd = B ? on_ctx(B, dc) : NULL;
  coal_mat Fd = F ? on_ctx(F, dc) : NULL;
  if (A && B && Ad && Bd) check_pair(A, B, Ad, Bd, "empty tiles of C");
  if (F && Fd) check_pair(F, F, Fd, Fd, "full tile * full tile");
  /* an arrow (full first row and column, and the diagonal): every row of its square has more
   * than 1024 products, row 0 of it is full (the long rows of the ROWS kernel) */
  {
    const int n = quick ? 1100 : 2500;
    int32_t *r = malloc(sizeof(int32_t) * 3 * n), *c = malloc(sizeof(int32_t) * 3 * n);
    double *w = malloc(sizeof(double) * 3 * n);
    int nz = 0;
    for (int i = 0; i < n; i++) {
      r[nz] = i, c[nz] = i, w[nz] = 4.0 + i * 1e-3, nz++;
      if (i) r[nz] = 0, c[nz] = i, w[nz] = -1.0 / (1 + i % 7), nz++;
      if (i) r[nz] = i, c[nz] = 0, w[nz] = -1.0 / (1 + i % 5), nz++;
    }
    coal_mat W = NULL;
    CHECK_OK(hc, coal_mat_create_coo(hc, n, n, nz, r, c, w, dt, &W));
    coal_mat Wd = W ? on_ctx(W, dc) : NULL;
    if (W && Wd) check_pair(W, W, Wd, Wd, "arrow * arrow");
    coal_mat_destroy(&W), coal_mat_destroy(&Wd);
    free(r), free(c), free(w);
  }
  /* the identity with a full first row: one long row of C over n columns; n picks the ROWS
   * kernel's long-row variant (shared-memory bitmap and dense sums up to 20480 columns, then
   * global sums up to 384000 columns, then global bitmaps too) */
  {
    const int sizes[3] = {3000, 30000, 400000};
    for (int t = 0; t < 3; t++) {
      const int n = sizes[t];
      int32_t *r = malloc(sizeof(int32_t) * 2 * n), *c = malloc(sizeof(int32_t) * 2 * n);
      double *w = malloc(sizeof(double) * 2 * n);
      int nz = 0;
      for (int i = 0; i < n && r && c && w; i++) {
        r[nz] = i, c[nz] = i, w[nz] = 2.0 + i % 5, nz++;
        if (i) r[nz] = 0, c[nz] = i, w[nz] = 1.0 / (1 + i % 9), nz++;
      }
      coal_mat W = NULL;
      if (r && c && w) CHECK_OK(hc, coal_mat_create_coo(hc, n, n, nz, r, c, w, dt, &W));
      coal_mat Wd = W ? on_ctx(W, dc) : NULL;
      char name[64];
      snprintf(name, sizeof name, "full first row, n = %d", n);
      if (W && Wd) check_pair(W, W, Wd, Wd, name);
      coal_mat_destroy(&W), coal_mat_destroy(&Wd);
      free(r), free(c), free(w);
    }
  }
  coal_mat_destroy(&A), coal_mat_destroy(&B), coal_mat_destroy(&F);
  coal_mat_destroy(&Ad), coal_mat_destroy(&Bd), coal_mat_destroy(&Fd);
}

static void check_generated(coal_ctx hc, coal_ctx dc, coal_dtype dt) {
  coal_mat g[5] = {NULL, NULL, NULL, NULL, NULL};
  const char *names[5] = {"laplace3d 7-point", "laplace3d 27-point", "powerlaw", "random spd",
                          "laplace2d"};
  int s = quick ? 1 : 3;
  CHECK_OK(hc, coal_gen_laplace3d(hc, 10 * s, 10 * s, 9 * s, 7, dt, &g[0]));
  CHECK_OK(hc, coal_gen_laplace3d(hc, 6 * s, 7 * s, 6 * s, 27, dt, &g[1]));
  CHECK_OK(hc, coal_gen_powerlaw(hc, 3000 * s, 8, 2.5, 3, dt, &g[2]));
  CHECK_OK(hc, coal_gen_random_spd(hc, 3000 * s, 10, 4, dt, &g[3]));
  CHECK_OK(hc, coal_gen_laplace2d(hc, 37 * s, 29 * s, dt, &g[4]));
  for (int i = 0; i < 5; i++) {
    if (g[i]) check_matrix(g[i], dc, names[i]);
    coal_mat_destroy(&g[i]);
  }
}

static void check_shared(coal_ctx hc, coal_ctx dc) {
  char **paths = NULL;
  int n = check_list_matrices(&paths, 1);
  for (int f = 0; f < n; f++) {
    coal_mat A = NULL;
    coal_status st = coal_mat_read_mm(hc, paths[f], COAL_F64, &A);
    if (st == COAL_ERR_UNSUPPORTED) continue; /* complex */
    CHECK_OK(hc, st);
    if (A) check_matrix(A, dc, check_basename(paths[f]));
    if (A && f % 4 == 0) {
      coal_mat F = NULL;
      CHECK_OK(hc, coal_mat_convert(A, COAL_F32, &F));
      if (F) check_matrix(F, dc, check_basename(paths[f]));
      coal_mat_destroy(&F);
    }
    coal_mat_destroy(&A);
  }
  check_free_matrices(paths, n);
}

int main(void) {
  if (!coal_cuda_available()) {
    printf("no GPU: skipped\n");
    return 77;
  }
  const char *q = getenv("COALESCE_TEST_QUICK");
  quick = q && !strcmp(q, "1");
  coal_ctx hc = NULL, dc = NULL;
  CHECK_OK(NULL, coal_ctx_create(COAL_BACKEND_HOST, &hc));
  CHECK_OK(NULL, coal_ctx_create(COAL_BACKEND_CUDA, &dc));
  if (!hc || !dc) return check_finish();
  printf("device: %s%s\n", coal_ctx_device_name(dc), quick ? " (quick)" : "");
  for (int a = 0; a < 2; a++) {
    algo = a ? COAL_SPGEMM_ROWS : COAL_SPGEMM_TILE;
    printf("algorithm %s\n", a ? "rows" : "tile");
    for (int t = 0; t < (quick ? 1 : 2); t++) {
      coal_dtype dt = t ? COAL_F32 : COAL_F64;
      check_edges(hc, dc, dt);
      check_generated(hc, dc, dt);
      check_products(hc, dc, dt);
      if (algo == COAL_SPGEMM_ROWS) check_ptap_shapes(hc, dc, dt);
    }
    if (!quick) check_shared(hc, dc);
  }
  /* COALESCE_POOL_KEEP_MB, the cache of the context's memory pool (where the products' results
   * live): a bad value is refused when the context is made; with 0 (nothing cached, the pool
   * gives memory back at every wait) products still come out right */
  {
    coal_ctx c0 = NULL;
    setenv("COALESCE_POOL_KEEP_MB", "lots", 1);
    CHECK_ERR(NULL, coal_ctx_create(COAL_BACKEND_CUDA, &c0), COAL_ERR_ARG);
    CHECK(c0 == NULL, "a context despite COALESCE_POOL_KEEP_MB=lots");
    coal_ctx_destroy(&c0);
    setenv("COALESCE_POOL_KEEP_MB", "0", 1);
    CHECK_OK(NULL, coal_ctx_create(COAL_BACKEND_CUDA, &c0));
    unsetenv("COALESCE_POOL_KEEP_MB");
    coal_mat L = NULL;
    CHECK_OK(hc, coal_gen_laplace3d(hc, 12, 11, 10, 7, COAL_F64, &L));
    coal_mat Ld = L && c0 ? on_ctx(L, c0) : NULL;
    algo = COAL_SPGEMM_ROWS;
    for (int rep = 0; rep < 2 && Ld; rep++) check_pair(L, L, Ld, Ld, "pool keeping nothing");
    coal_mat_destroy(&L), coal_mat_destroy(&Ld);
    coal_ctx_destroy(&c0);
  }
  /* operands on different contexts */
  {
    coal_mat A = NULL, Ad = NULL, C = NULL;
    CHECK_OK(hc, coal_gen_laplace2d(hc, 6, 6, COAL_F64, &A));
    if (A) Ad = on_ctx(A, dc);
    if (A && Ad) CHECK_ERR(dc, coal_mat_multiply(Ad, A, &C), COAL_ERR_ARG);
    coal_mat_destroy(&A), coal_mat_destroy(&Ad);
  }
  CHECK_OK(dc, coal_ctx_sync(dc));
  printf("%d products compared, %d with values not bit-identical\n", nproducts, nbitdiff);
  coal_ctx_destroy(&dc);
  coal_ctx_destroy(&hc);
  return check_finish();
}
