/* Core objects: contexts and backend choice, error messages, matrix creation and the matrix
 * operations. Everything after the context tests runs once per backend (host, then cuda when
 * a GPU answers); results are compared with dense references computed here. */
#include "core_util.h"
#include "internal.h"

static void test_context(void) {
  const char *saved = getenv("COALESCE_BACKEND");
  char *saved_copy = saved ? strdup(saved) : NULL;
  coal_ctx ctx = NULL;
  CHECK_OK(NULL, coal_ctx_create(COAL_BACKEND_HOST, &ctx));
  CHECK(ctx && coal_ctx_backend(ctx) == COAL_BACKEND_HOST, "explicit host");
  CHECK(ctx && strlen(coal_ctx_device_name(ctx)) > 0, "device name");
  CHECK(ctx && strcmp(coal_ctx_last_error(ctx), "") == 0, "fresh context has no error");
  CHECK_OK(ctx, coal_ctx_sync(ctx));
  CHECK_OK(NULL, coal_ctx_destroy(&ctx));
  CHECK(ctx == NULL, "destroy clears the handle");
  CHECK_OK(NULL, coal_ctx_destroy(&ctx)); /* destroying NULL is fine */
  CHECK_ERR(NULL, coal_ctx_create(COAL_BACKEND_HOST, NULL), COAL_ERR_ARG);
  CHECK_ERR(NULL, coal_ctx_create((coal_backend)9, &ctx), COAL_ERR_ARG);
  CHECK(ctx == NULL, "no context on failure");

  /* AUTO honours COALESCE_BACKEND */
  setenv("COALESCE_BACKEND", "host", 1);
  CHECK_OK(NULL, coal_ctx_create(COAL_BACKEND_AUTO, &ctx));
  CHECK(ctx && coal_ctx_backend(ctx) == COAL_BACKEND_HOST, "env host");
  coal_ctx_destroy(&ctx);
  setenv("COALESCE_BACKEND", "cuda", 1);
  coal_status st = coal_ctx_create(COAL_BACKEND_AUTO, &ctx);
  check_cuda_answer(st, ctx, "COALESCE_BACKEND=cuda");
  coal_ctx_destroy(&ctx);
  setenv("COALESCE_BACKEND", "auto", 1);
  CHECK_OK(NULL, coal_ctx_create(COAL_BACKEND_AUTO, &ctx));
  CHECK(ctx && coal_ctx_backend(ctx) ==
                   (coal_cuda_available() ? COAL_BACKEND_CUDA : COAL_BACKEND_HOST),
        "env auto");
  coal_ctx_destroy(&ctx);
  setenv("COALESCE_BACKEND", "gpu-please", 1);
  CHECK_ERR(NULL, coal_ctx_create(COAL_BACKEND_AUTO, &ctx), COAL_ERR_ARG);
  CHECK(ctx == NULL, "unknown env value: no context");
  /* an explicit backend ignores the variable */
  CHECK_OK(NULL, coal_ctx_create(COAL_BACKEND_HOST, &ctx));
  coal_ctx_destroy(&ctx);
  unsetenv("COALESCE_BACKEND");
  CHECK_OK(NULL, coal_ctx_create(COAL_BACKEND_AUTO, &ctx));
  CHECK(ctx && coal_ctx_backend(ctx) ==
                   (coal_cuda_available() ? COAL_BACKEND_CUDA : COAL_BACKEND_HOST),
        "no env: cuda iff a GPU answers");
  coal_ctx_destroy(&ctx);
  st = coal_ctx_create(COAL_BACKEND_CUDA, &ctx);
  check_cuda_answer(st, ctx, "explicit cuda");
  CHECK(coal_cuda_compiled() || !coal_cuda_available(), "available implies compiled");
  coal_ctx_destroy(&ctx);
  if (saved_copy) setenv("COALESCE_BACKEND", saved_copy, 1);
  free(saved_copy);

  /* names and parsers */
  coal_backend b = COAL_BACKEND_AUTO;
  CHECK(coal_backend_parse("cuda", &b) == COAL_SUCCESS && b == COAL_BACKEND_CUDA, "parse cuda");
  CHECK(coal_backend_parse("host", &b) == COAL_SUCCESS && b == COAL_BACKEND_HOST, "parse host");
  CHECK(coal_backend_parse("auto", &b) == COAL_SUCCESS && b == COAL_BACKEND_AUTO, "parse auto");
  CHECK(coal_backend_parse("Host", &b) == COAL_ERR_ARG, "parse is case-sensitive");
  CHECK(coal_backend_parse(NULL, &b) == COAL_ERR_ARG, "parse NULL");
  for (int i = 0; i < 3; i++)
    CHECK(coal_backend_parse(coal_backend_name((coal_backend)i), &b) == COAL_SUCCESS &&
              b == (coal_backend)i,
          "backend name round trip %d", i);
  for (int k = 0; k < COAL_SPMV_NKERNELS; k++) {
    coal_spmv_kernel kk = COAL_SPMV_NKERNELS;
    CHECK(coal_spmv_kernel_parse(coal_spmv_kernel_name((coal_spmv_kernel)k), &kk) == COAL_SUCCESS &&
              kk == (coal_spmv_kernel)k,
          "kernel name round trip %d", k);
  }
  coal_spmv_kernel kk;
  CHECK(coal_spmv_kernel_parse("fast", &kk) == COAL_ERR_ARG, "unknown kernel name");
  for (int s = 0; s <= COAL_ERR_STATE; s++)
    for (int t = s + 1; t <= COAL_ERR_STATE; t++)
      CHECK(strcmp(coal_status_string((coal_status)s), coal_status_string((coal_status)t)) != 0,
            "status strings %d and %d are equal", s, t);
}

/* A failing call leaves "status: message [file:line func]" on the context. */
static void test_error_messages(coal_ctx ctx) {
  int64_t rp[3] = {0, 2, 1};
  int32_t ci[2] = {0, 1};
  double v[2] = {1, 2};
  coal_mat A = NULL;
  CHECK_ERR(ctx, coal_mat_create_csr(ctx, 2, 2, rp, ci, v, COAL_F64, &A), COAL_ERR_ARG);
  const char *msg = coal_ctx_last_error(ctx);
  CHECK(strlen(msg) > 0, "no message after a failure");
  CHECK(strncmp(msg, coal_status_string(COAL_ERR_ARG), strlen(coal_status_string(COAL_ERR_ARG))) ==
            0,
        "message does not start with the status: %s", msg);
  const char *br = strrchr(msg, '[');
  int ok = br != NULL && strchr(br, ']') != NULL;
  if (ok) {
    const char *colon = strchr(br, ':');
    ok = colon && colon > br + 1 && colon[1] >= '0' && colon[1] <= '9' && strstr(br, ".c:") != NULL;
  }
  CHECK(ok, "message lacks a [file:line] bracket: %s", msg);
  /* a later, different failure replaces it */
  char first[1024];
  snprintf(first, sizeof first, "%s", msg);
  coal_bvec X = (coal_bvec)(uintptr_t)1;
  CHECK_ERR(ctx, coal_bvec_create(ctx, 4, 2, COAL_F64, COAL_COL_MAJOR, 3, &X), COAL_ERR_ARG);
  CHECK(strcmp(coal_ctx_last_error(ctx), first) != 0 && strchr(coal_ctx_last_error(ctx), '['),
        "message not replaced: %s", coal_ctx_last_error(ctx));
  CHECK(X == NULL, "no block on failure");
}

/* ---- matrices ----------------------------------------------------------------------------- */

static void test_create(coal_ctx ctx) {
  /* unsorted columns, a duplicate, an empty row */
  int64_t rp[5] = {0, 3, 3, 6, 7};
  int32_t ci[7] = {2, 0, 1, 3, 1, 3, 0};
  double v[7] = {1, 2, 3, 4, 5, 6, 7};
  float vf[7] = {1, 2, 3, 4, 5, 6, 7};
  const int64_t rp_want[5] = {0, 3, 3, 5, 6};
  const int32_t ci_want[6] = {0, 1, 2, 1, 3, 0};
  const double v_want[6] = {2, 3, 1, 5, 10, 7};
  for (int dt = 0; dt < 2; dt++) {
    coal_mat A = NULL;
    CHECK_OK(ctx, coal_mat_create_csr(ctx, 4, 4, rp, ci, dt ? (void *)vf : (void *)v,
                                      (coal_dtype)dt, &A));
    if (!A) continue;
    int64_t n, m, nnz, grp[5];
    int32_t gci[6];
    double gv[6];
    float gvf[6];
    CHECK_OK(ctx, coal_mat_size(A, &n, &m, &nnz));
    CHECK(n == 4 && m == 4 && nnz == 6, "size %lld x %lld, %lld", (long long)n, (long long)m,
          (long long)nnz);
    CHECK(coal_mat_dtype(A) == (coal_dtype)dt && coal_mat_ctx(A) == ctx, "dtype / ctx");
    CHECK_OK(ctx, coal_mat_get_csr(A, grp, gci, dt ? (void *)gvf : (void *)gv));
    int ok = !memcmp(grp, rp_want, sizeof grp) && !memcmp(gci, ci_want, sizeof gci);
    for (int p = 0; p < 6; p++) ok &= (dt ? (double)gvf[p] : gv[p]) == v_want[p];
    CHECK(ok, "create_csr dt %d: not sorted / duplicates not summed", dt);
    CHECK_OK(ctx, coal_mat_get_csr(A, NULL, NULL, NULL));
    coal_mat_destroy(&A);
  }
  /* COO of the same matrix */
  int32_t ri[7] = {0, 0, 0, 2, 2, 2, 3};
  coal_mat A = NULL;
  CHECK_OK(ctx, coal_mat_create_coo(ctx, 4, 4, 7, ri, ci, v, COAL_F64, &A));
  if (A) {
    int64_t grp[5];
    int32_t gci[6];
    double gv[6];
    CHECK_OK(ctx, coal_mat_get_csr(A, grp, gci, gv));
    CHECK(!memcmp(grp, rp_want, sizeof grp) && !memcmp(gci, ci_want, sizeof gci) &&
              !memcmp(gv, v_want, sizeof gv),
          "create_coo: not sorted / duplicates not summed");
  }
  coal_mat_destroy(&A);
  /* larger random COO in shuffled order against a dense sum */
  enum { RN = 37, RM = 23 };
  int32_t rri[2 * RN * RM], rci[2 * RN * RM];
  double rv[2 * RN * RM], dref[RN * RM];
  int64_t rnnz = rand_coo(RN, RM, 0.2, rri, rci, rv, dref);
  CHECK_OK(ctx, coal_mat_create_coo(ctx, RN, RM, rnnz, rri, rci, rv, COAL_F64, &A));
  if (A) {
    int canon = 0;
    double *d = mat_dense(ctx, A, &canon);
    CHECK(canon && max_abs_diff(d, dref, RN * RM) < 1e-14, "random COO differs from dense");
    free(d);
  }
  coal_mat_destroy(&A);

  /* errors */
  coal_mat B = (coal_mat)(uintptr_t)1;
  int64_t bad_rp[5] = {0, 3, 2, 6, 7};
  CHECK_ERR(ctx, coal_mat_create_csr(ctx, 4, 4, bad_rp, ci, v, COAL_F64, &B), COAL_ERR_ARG);
  CHECK(B == NULL, "output cleared on failure");
  int64_t bad_rp0[5] = {1, 3, 3, 6, 7};
  CHECK_ERR(ctx, coal_mat_create_csr(ctx, 4, 4, bad_rp0, ci, v, COAL_F64, &B), COAL_ERR_ARG);
  int32_t ci_hi[7] = {2, 0, 1, 4, 1, 3, 0}, ci_neg[7] = {2, 0, 1, 3, 1, -1, 0};
  CHECK_ERR(ctx, coal_mat_create_csr(ctx, 4, 4, rp, ci_hi, v, COAL_F64, &B), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_mat_create_csr(ctx, 4, 4, rp, ci_neg, v, COAL_F64, &B), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_mat_create_csr(ctx, 4, 4, NULL, ci, v, COAL_F64, &B), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_mat_create_csr(ctx, 4, 4, rp, NULL, v, COAL_F64, &B), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_mat_create_csr(ctx, 4, 4, rp, ci, NULL, COAL_F64, &B), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_mat_create_csr(ctx, 4, 4, rp, ci, v, COAL_F64, NULL), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_mat_create_csr(ctx, 4, 4, rp, ci, v, (coal_dtype)5, &B), COAL_ERR_ARG);
  CHECK_ERR(NULL, coal_mat_create_csr(NULL, 4, 4, rp, ci, v, COAL_F64, &B), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_mat_create_csr(ctx, -1, 4, rp, ci, v, COAL_F64, &B), COAL_ERR_ARG);
  int64_t rp1[1] = {0};
  CHECK_ERR(ctx, coal_mat_create_csr(ctx, INT64_C(1) << 31, 4, rp1, ci, v, COAL_F64, &B),
            COAL_ERR_OVERFLOW);
  CHECK_ERR(ctx, coal_mat_create_csr(ctx, 0, INT64_C(3000000000), rp1, ci, v, COAL_F64, &B),
            COAL_ERR_OVERFLOW);
  int64_t rp_big[2] = {0, INT64_C(1) << 32};
  CHECK_ERR(ctx, coal_mat_create_csr(ctx, 1, 4, rp_big, ci, v, COAL_F64, &B), COAL_ERR_OVERFLOW);
  int32_t ri_hi[7] = {0, 0, 0, 2, 4, 2, 3};
  CHECK_ERR(ctx, coal_mat_create_coo(ctx, 4, 4, 7, ri_hi, ci, v, COAL_F64, &B), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_mat_create_coo(ctx, 4, 4, 7, ri, ci_hi, v, COAL_F64, &B), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_mat_create_coo(ctx, 4, 4, 7, NULL, ci, v, COAL_F64, &B), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_mat_create_coo(ctx, 4, 4, -1, ri, ci, v, COAL_F64, &B), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_mat_create_coo(ctx, INT64_C(1) << 31, 4, 0, NULL, NULL, NULL, COAL_F64, &B),
            COAL_ERR_OVERFLOW);
  CHECK_ERR(ctx, coal_mat_create_coo(ctx, 4, 4, 7, ri, ci, v, COAL_F64, NULL), COAL_ERR_ARG);
  /* empty shapes are fine */
  CHECK_OK(ctx, coal_mat_create_coo(ctx, 3, 5, 0, NULL, NULL, NULL, COAL_F32, &B));
  int64_t n = -1, m = -1, nnz = -1;
  if (B) CHECK_OK(ctx, coal_mat_size(B, &n, &m, &nnz));
  CHECK(n == 3 && m == 5 && nnz == 0, "empty 3 x 5");
  coal_mat_destroy(&B);
  CHECK_OK(ctx, coal_mat_create_csr(ctx, 0, 0, rp1, NULL, NULL, COAL_F64, &B));
  coal_mat_destroy(&B);
  CHECK_OK(ctx, coal_mat_destroy(NULL));
  CHECK_ERR(NULL, coal_mat_size(NULL, &n, &m, &nnz), COAL_ERR_ARG);
  CHECK_ERR(NULL, coal_mat_get_csr(NULL, NULL, NULL, NULL), COAL_ERR_ARG);
}

/* Transpose, permutation, conversion and symmetry against dense references. */
static void test_mat_ops(coal_ctx ctx) {
  enum { N = 11, M = 7 };
  int32_t ri[2 * N * N], ci[2 * N * N];
  double v[2 * N * N], d[N * N];
  coal_mat A = NULL, T = NULL, TT = NULL;
  int64_t nnz = rand_coo(N, M, 0.3, ri, ci, v, d);
  CHECK_OK(ctx, coal_mat_create_coo(ctx, N, M, nnz, ri, ci, v, COAL_F64, &A));
  CHECK_OK(ctx, coal_mat_transpose(A, &T));
  if (A && T) {
    int64_t n, m, tn;
    CHECK_OK(ctx, coal_mat_size(T, &n, &m, &tn));
    CHECK(n == M && m == N, "transpose size %lld x %lld", (long long)n, (long long)m);
    int canon = 0;
    double *dt = mat_dense(ctx, T, &canon), *da = mat_dense(ctx, A, NULL);
    int ok = canon;
    for (int i = 0; i < N; i++)
      for (int j = 0; j < M; j++) ok &= dt[j * N + i] == da[i * M + j];
    CHECK(ok, "transpose differs from the dense transpose");
    free(dt), free(da);
    CHECK_OK(ctx, coal_mat_transpose(T, &TT));
    CHECK(TT && same_csr(A, TT), "transpose twice is not the identity");
    /* get_csr round trip: the arrays of a canonical matrix recreate it exactly */
    int64_t rp[N + 1];
    int32_t cs[2 * N * N];
    double vs[2 * N * N];
    coal_mat R = NULL;
    CHECK_OK(ctx, coal_mat_get_csr(A, rp, cs, vs));
    CHECK_OK(ctx, coal_mat_create_csr(ctx, N, M, rp, cs, vs, COAL_F64, &R));
    CHECK(R && same_csr(A, R), "get_csr / create_csr round trip differs");
    coal_mat_destroy(&R);
  }
  int sym = -1;
  CHECK_OK(ctx, coal_mat_is_symmetric(A, &sym));
  CHECK(sym == 0, "rectangular matrix reported symmetric");
  coal_mat_destroy(&A), coal_mat_destroy(&T), coal_mat_destroy(&TT);

  /* square: permutation, symmetry, conversion */
  nnz = rand_coo(N, N, 0.35, ri, ci, v, d);
  CHECK_OK(ctx, coal_mat_create_coo(ctx, N, N, nnz, ri, ci, v, COAL_F64, &A));
  int32_t perm[N];
  for (int i = 0; i < N; i++) perm[i] = i;
  for (int i = N - 1; i > 0; i--) {
    int s = rndi(i + 1), t = perm[i];
    perm[i] = perm[s], perm[s] = t;
  }
  coal_mat P = NULL;
  CHECK_OK(ctx, coal_mat_permute(A, perm, &P));
  if (P) {
    int canon = 0;
    double *dp = mat_dense(ctx, P, &canon);
    int ok = canon;
    for (int i = 0; i < N; i++)
      for (int j = 0; j < N; j++) ok &= fabs(dp[i * N + j] - d[perm[i] * N + perm[j]]) < 1e-14;
    CHECK(ok, "P A P^T differs from the dense reference");
    free(dp);
  }
  coal_mat_destroy(&P);
  int32_t dup[N], oob[N];
  memcpy(dup, perm, sizeof dup), memcpy(oob, perm, sizeof oob);
  dup[3] = dup[5];
  oob[2] = N;
  CHECK_ERR(ctx, coal_mat_permute(A, dup, &P), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_mat_permute(A, oob, &P), COAL_ERR_ARG);
  oob[2] = -1;
  CHECK_ERR(ctx, coal_mat_permute(A, oob, &P), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_mat_permute(A, NULL, &P), COAL_ERR_ARG);
  CHECK(P == NULL, "no matrix from a failed permutation");

  CHECK_OK(ctx, coal_mat_is_symmetric(A, &sym));
  CHECK(sym == 0, "random matrix reported symmetric");
  /* S = A + A^T is symmetric; a value or pattern change breaks it */
  {
    int32_t sr[4 * N * N + 2], sc[4 * N * N + 2];
    double sv[4 * N * N + 2];
    for (int64_t e = 0; e < nnz; e++) {
      sr[e] = ri[e], sc[e] = ci[e], sv[e] = v[e];
      sr[nnz + e] = ci[e], sc[nnz + e] = ri[e], sv[nnz + e] = v[e];
    }
    coal_mat S = NULL, G = NULL;
    CHECK_OK(ctx, coal_mat_create_coo(ctx, N, N, 2 * nnz, sr, sc, sv, COAL_F64, &S));
    CHECK_OK(ctx, coal_mat_is_symmetric(S, &sym));
    CHECK(sym == 1, "A + A^T not reported symmetric");
    sr[2 * nnz] = 0, sc[2 * nnz] = N - 1, sv[2 * nnz] = 0.5; /* one side only */
    CHECK_OK(ctx, coal_mat_create_coo(ctx, N, N, 2 * nnz + 1, sr, sc, sv, COAL_F64, &G));
    CHECK_OK(ctx, coal_mat_is_symmetric(G, &sym));
    CHECK(sym == 0, "one-sided entry not detected");
    coal_mat_destroy(&G);
    /* pattern asymmetry: 3 x 3 with (0,1) but no (1,0) */
    int32_t pr[4] = {0, 1, 2, 0}, pc[4] = {0, 1, 2, 1};
    double pv[4] = {1, 1, 1, 0};
    CHECK_OK(ctx, coal_mat_create_coo(ctx, 3, 3, 4, pr, pc, pv, COAL_F64, &G));
    CHECK_OK(ctx, coal_mat_is_symmetric(G, &sym));
    CHECK(sym == 0, "pattern asymmetry not detected");
    CHECK_ERR(NULL, coal_mat_is_symmetric(S, NULL), COAL_ERR_ARG);
    coal_mat_destroy(&S), coal_mat_destroy(&G);
  }

  /* conversion both ways */
  coal_mat F32 = NULL, F64 = NULL;
  CHECK_OK(ctx, coal_mat_convert(A, COAL_F32, &F32));
  if (F32) {
    CHECK(coal_mat_dtype(F32) == COAL_F32, "convert dtype");
    double *df = mat_dense(ctx, F32, NULL), *da = mat_dense(ctx, A, NULL);
    int ok = 1;
    for (int q = 0; q < N * N; q++) ok &= df[q] == (double)(float)da[q];
    CHECK(ok, "f64 -> f32 values are not the rounded ones");
    CHECK_OK(ctx, coal_mat_convert(F32, COAL_F64, &F64));
    if (F64) {
      double *db = mat_dense(ctx, F64, NULL);
      CHECK(coal_mat_dtype(F64) == COAL_F64 && max_abs_diff(db, df, N * N) == 0,
            "f32 -> f64 not exact");
      free(db);
    }
    free(df), free(da);
  }
  coal_mat_destroy(&F32), coal_mat_destroy(&F64);
  CHECK_ERR(ctx, coal_mat_convert(A, (coal_dtype)4, &F32), COAL_ERR_ARG);
  CHECK_ERR(NULL, coal_mat_convert(A, COAL_F32, NULL), COAL_ERR_ARG);
  coal_mat_destroy(&A);

  /* permute needs a square matrix */
  nnz = rand_coo(N, M, 0.3, ri, ci, v, d);
  CHECK_OK(ctx, coal_mat_create_coo(ctx, N, M, nnz, ri, ci, v, COAL_F64, &A));
  CHECK_ERR(ctx, coal_mat_permute(A, perm, &P), COAL_ERR_ARG);
  coal_mat_destroy(&A);
}

/* Host residency of ordinary matrices (device-only ones: test_device_only_cuda.c). */
static void test_mat_host(coal_ctx ctx) {
  enum { N = 9, M = 13 };
  int32_t ri[2 * N * M], ci[2 * N * M];
  double v[2 * N * M], d[N * M];
  coal_mat A = NULL;
  int64_t nnz = rand_coo(N, M, 0.3, ri, ci, v, d);
  CHECK_OK(ctx, coal_mat_create_coo(ctx, N, M, nnz, ri, ci, v, COAL_F64, &A));
  if (!A) return;
  int32_t *rp = A->rowptr, *cs = A->colind;
  void *vs = A->values;
  double *before = mat_dense(ctx, A, NULL);
  CHECK_OK(ctx, coal_mat_host(A));
  CHECK(A->rowptr == rp && A->colind == cs && A->values == vs && (A->valid & COAL_MEM_HOST),
        "coal_mat_host on a host-resident matrix is not a no-op");
  /* after a product (the device copy on CUDA) the host copy is still current */
  coal_bvec x = NULL, y = NULL;
  CHECK_OK(ctx, coal_bvec_create(ctx, M, 1, COAL_F64, COAL_COL_MAJOR, 0, &x));
  CHECK_OK(ctx, coal_bvec_create(ctx, N, 1, COAL_F64, COAL_COL_MAJOR, 0, &y));
  if (x && y) {
    CHECK_OK(ctx, coal_bvec_set_random(x, 5));
    CHECK_OK(ctx, coal_spmv(A, COAL_SPMV_AUTO, 1.0, x, 0.0, y));
  }
  CHECK_OK(ctx, coal_mat_host(A));
  CHECK(A->rowptr == rp && (A->valid & COAL_MEM_HOST), "host copy lost after a product");
  double *after = mat_dense(ctx, A, NULL);
  CHECK(before && after && memcmp(before, after, sizeof(double) * N * M) == 0,
        "values changed by coal_mat_host");
  free(after);
  /* longest row: the status path and the cached value agree with a plain loop */
  int32_t mx = -2, ref = 0;
  for (int i = 0; i < N; i++) {
    int c = 0;
    for (int j = 0; j < M; j++) c += d[i * M + j] != 0.0;
    if (c > ref) ref = c;
  }
  CHECK_OK(ctx, coal_mat_max_row_len_compute(A, &mx));
  CHECK(mx == ref && coal_mat_max_row_len(A) == ref, "longest row %d, expected %d", mx, ref);
  /* no device copy written by a kernel on a host context: a no-op there */
  uint64_t state = A->state;
  coal_mat_device_values_changed(A);
  if (coal_ctx_backend(ctx) == COAL_BACKEND_HOST)
    CHECK(A->valid == COAL_MEM_HOST && A->state == state,
          "device_values_changed on a host matrix changed it");
  coal_mat_device_values_changed(NULL);
  CHECK_OK(ctx, coal_mat_host(A)); /* CUDA: downloads the (unchanged) device values */
  after = mat_dense(ctx, A, NULL);
  CHECK(before && after && memcmp(before, after, sizeof(double) * N * M) == 0,
        "values differ after device_values_changed and coal_mat_host");
  free(after);
  /* a new FastLoad height keeps the values and the host copy */
  CHECK_OK(ctx, coal_mat_set_fastload_height(A, 3));
  CHECK(A->rowptr == rp && (A->valid & COAL_MEM_HOST), "FastLoad height dropped the host copy");
  if (x && y) {
    double *y1 = malloc(sizeof(double) * N), *y2 = malloc(sizeof(double) * N);
    CHECK_OK(ctx, coal_spmv(A, COAL_SPMV_FASTLOAD, 1.0, x, 0.0, y));
    CHECK_OK(ctx, coal_bvec_get_host(y, y1, COAL_COL_MAJOR, 0));
    CHECK_OK(ctx, coal_spmv(A, COAL_SPMV_CSR_VECTOR, 1.0, x, 0.0, y));
    CHECK_OK(ctx, coal_bvec_get_host(y, y2, COAL_COL_MAJOR, 0));
    double e = 0;
    for (int i = 0; i < N; i++) e = fmax(e, fabs(y1[i] - y2[i]));
    CHECK(e <= 1e-13, "FastLoad after a height change differs by %g", e);
    free(y1), free(y2);
  }
  free(before);
  coal_bvec_destroy(&x), coal_bvec_destroy(&y);
  coal_mat_destroy(&A);
  /* argument errors */
  CHECK_ERR(NULL, coal_mat_host(NULL), COAL_ERR_ARG);
  coal_mat W = (coal_mat)1;
  CHECK_ERR(ctx, coal_mat_wrap_device(ctx, 4, 4, 0, COAL_F64, NULL, &W), COAL_ERR_ARG);
  CHECK(W == NULL, "failed wrap_device leaves a handle");
  CHECK_ERR(NULL, coal_mat_wrap_device(NULL, 4, 4, 0, COAL_F64, NULL, &W), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_mat_wrap_device(ctx, 4, 4, 0, COAL_F64, NULL, NULL), COAL_ERR_ARG);
}

/* The derived-format cache (coal_mat_format_*): entries found by key, replaced (the old data
 * freed), dropped by key, by flag (VALUES on a values change, DEVICE with the device copy) and
 * all at destruction, each freed exactly once; settings default until set. Counted frees. */
static int cache_frees[8];
static void cache_free(coal_ctx ctx, void *p) {
  (void)ctx;
  cache_frees[*(int *)p]++;
  free(p);
}
static int *cache_item(int id) {
  int *p = malloc(sizeof *p);
  if (p) *p = id;
  return p;
}

static void test_format_cache(coal_ctx ctx) {
  enum { KA = 101, KB = 102, KC = 103, KS = 104 };
  int32_t ri[3] = {0, 1, 2}, ci[3] = {0, 1, 2};
  double v[3] = {1, 2, 3};
  coal_mat A = NULL;
  CHECK_OK(ctx, coal_mat_create_coo(ctx, 3, 3, 3, ri, ci, v, COAL_F64, &A));
  if (!A) return;
  memset(cache_frees, 0, sizeof cache_frees);
  CHECK(coal_mat_format_get(A, KA) == NULL, "empty cache answers an entry");
  int *a = cache_item(0), *b = cache_item(1), *c = cache_item(2), *a2 = cache_item(3);
  CHECK_OK(ctx, coal_mat_format_put(A, KA, COAL_FORMAT_VALUES, a, cache_free));
  CHECK_OK(ctx, coal_mat_format_put(A, KB, COAL_FORMAT_DEVICE, b, cache_free));
  CHECK_OK(ctx, coal_mat_format_put(A, KC, 0, c, cache_free));
  CHECK(coal_mat_format_get(A, KA) == a && coal_mat_format_get(A, KB) == b &&
            coal_mat_format_get(A, KC) == c,
        "entries not found by key");
  CHECK_OK(ctx, coal_mat_format_put(A, KA, COAL_FORMAT_VALUES, a2, cache_free));
  CHECK(coal_mat_format_get(A, KA) == a2 && cache_frees[0] == 1, "replacing did not free the old");
  /* new values: the VALUES entry goes, the others stay */
  CHECK_OK(ctx, coal_mat_set_values(A, v));
  CHECK(!coal_mat_format_get(A, KA) && cache_frees[3] == 1 && coal_mat_format_get(A, KB) == b &&
            coal_mat_format_get(A, KC) == c,
        "set_values: VALUES entry kept or others dropped");
  coal_mat_format_drop(A, COAL_FORMAT_DEVICE);
  CHECK(!coal_mat_format_get(A, KB) && cache_frees[1] == 1 && coal_mat_format_get(A, KC) == c,
        "drop by DEVICE");
  coal_mat_format_drop_key(A, KB); /* absent: nothing */
  CHECK(coal_mat_setting(A, KS, 7) == 7, "unset setting is not the default");
  CHECK_OK(ctx, coal_mat_setting_set(A, KS, 3));
  CHECK_OK(ctx, coal_mat_setting_set(A, KS, 4));
  CHECK(coal_mat_setting(A, KS, 7) == 4, "setting not kept");
  coal_mat_destroy(&A); /* frees c and the setting */
  CHECK(cache_frees[0] == 1 && cache_frees[1] == 1 && cache_frees[2] == 1 && cache_frees[3] == 1,
        "an entry freed %d/%d/%d/%d times", cache_frees[0], cache_frees[1], cache_frees[2],
        cache_frees[3]);
}

/* Values-only refresh (coal_device_stats_get): after coal_mat_set_values the device keeps the
 * structure, so the next product uploads nnz * sizeof(value) bytes and nothing else, the
 * formats that hold values are rebuilt, and the products see the new values (against a dense
 * reference). A host context moves nothing: its counters stay zero. */
static void test_refresh_stats(coal_ctx ctx) {
  enum { N = 23, M = 17 };
  const int cuda = coal_ctx_backend(ctx) == COAL_BACKEND_CUDA;
  coal_device_stats s0, s1;
  CHECK_ERR(NULL, coal_device_stats_get(NULL, &s0), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_device_stats_get(ctx, NULL), COAL_ERR_ARG);
  for (int dti = 0; dti < 2; dti++) {
    const coal_dtype dt = (coal_dtype)dti;
    const size_t es = dt == COAL_F64 ? 8 : 4;
    int32_t ri[2 * N * M], ci[2 * N * M];
    double v[2 * N * M], d[N * M], xh[M], yh[N];
    const int64_t nnz = rand_coo(N, M, 0.3, ri, ci, v, d);
    coal_mat A = NULL;
    coal_bvec x = NULL, y = NULL;
    CHECK_OK(ctx, coal_mat_create_coo(ctx, N, M, nnz, ri, ci, v, dt, &A));
    CHECK_OK(ctx, coal_bvec_create(ctx, M, 1, dt, COAL_COL_MAJOR, 0, &x));
    CHECK_OK(ctx, coal_bvec_create(ctx, N, 1, dt, COAL_COL_MAJOR, 0, &y));
    if (!A || !x || !y) {
      coal_mat_destroy(&A), coal_bvec_destroy(&x), coal_bvec_destroy(&y);
      continue;
    }
    CHECK_OK(ctx, coal_bvec_set_random(x, 11));
    for (int j = 0; j < M; j++)
      xh[j] = dt == COAL_F64 ? coal_random_uniform(11, (uint64_t)j)
                             : (double)(float)coal_random_uniform(11, (uint64_t)j);
    const coal_spmv_kernel kernels[] = {COAL_SPMV_CSR_VECTOR, COAL_SPMV_FASTLOAD_T};
    double scale = 1.0;
    for (int round = 0; round < 3; round++) {
      if (round > 0) { /* new values, same structure: A <- 2 A */
        double *nv = malloc(sizeof(double) * (size_t)(nnz + 1));
        CHECK_OK(ctx, coal_mat_get_csr(A, NULL, NULL, nv));
        for (int64_t p = 0; p < A->nnz; p++)
          if (dt == COAL_F32)
            ((float *)nv)[p] *= 2.0f;
          else
            nv[p] *= 2.0;
        struct coal_mat_cuda *dev = A->dev;
        CHECK_OK(ctx, coal_device_stats_get(ctx, &s0));
        CHECK_OK(ctx, coal_mat_set_values(A, nv));
        CHECK(A->dev == dev && A->valid == COAL_MEM_HOST, "set_values dropped the device copy");
        free(nv);
        scale *= 2.0;
      } else {
        CHECK_OK(ctx, coal_device_stats_get(ctx, &s0));
      }
      for (int kq = 0; kq < 2; kq++) {
        CHECK_OK(ctx, coal_bvec_set_value(y, NAN));
        CHECK_OK(ctx, coal_spmv(A, kernels[kq], 1.0, x, 0.0, y));
        double raw[N];
        CHECK_OK(ctx, coal_bvec_get_host(y, raw, COAL_COL_MAJOR, 0));
        for (int i = 0; i < N; i++) yh[i] = dt == COAL_F64 ? raw[i] : ((float *)raw)[i];
        double err = 0, ref = 0;
        for (int i = 0; i < N; i++) {
          double r = 0, a = 0;
          for (int j = 0; j < M; j++)
            r += scale * d[i * M + j] * xh[j], a += fabs(scale * d[i * M + j] * xh[j]);
          err = fmax(err, fabs(yh[i] - r)), ref = fmax(ref, a);
        }
        CHECK(err <= (dt == COAL_F64 ? 1e-12 : 1e-5) * fmax(ref, 1.0),
              "%s dtype %d round %d: product differs by %g", coal_spmv_kernel_name(kernels[kq]),
              dti, round, err);
      }
      CHECK_OK(ctx, coal_device_stats_get(ctx, &s1));
      const uint64_t full = s1.full_uploads - s0.full_uploads;
      const uint64_t vals = s1.values_uploads - s0.values_uploads;
      const uint64_t bytes = s1.upload_bytes - s0.upload_bytes;
      const uint64_t built = s1.formats_built - s0.formats_built;
      /* A->nnz: the COO triples' duplicates are summed into one entry */
      const uint64_t want_bytes = !cuda        ? 0
                                  : round == 0 ? 4 * (uint64_t)(N + 1) + (4 + es) * (uint64_t)A->nnz
                                               : es * (uint64_t)A->nnz;
      if (getenv("COALESCE_FASTLOAD_HOST_BUILD")) /* the format is uploaded too */
        CHECK(bytes >= want_bytes, "dtype %d round %d: %llu bytes uploaded, expected at least %llu",
              dti, round, (unsigned long long)bytes, (unsigned long long)want_bytes);
      else
        CHECK(bytes == want_bytes, "dtype %d round %d: %llu bytes uploaded, expected %llu", dti,
              round, (unsigned long long)bytes, (unsigned long long)want_bytes);
      CHECK(full == (uint64_t)(cuda && round == 0) && vals == (uint64_t)(cuda && round > 0) &&
                built == (uint64_t)cuda,
            "dtype %d round %d: %llu full uploads, %llu values uploads, %llu formats built", dti,
            round, (unsigned long long)full, (unsigned long long)vals, (unsigned long long)built);
    }
    /* nothing changed: a product moves nothing */
    CHECK_OK(ctx, coal_device_stats_get(ctx, &s0));
    CHECK_OK(ctx, coal_spmv(A, COAL_SPMV_FASTLOAD_T, 1.0, x, 0.0, y));
    CHECK_OK(ctx, coal_device_stats_get(ctx, &s1));
    CHECK(!memcmp(&s0, &s1, sizeof s0), "a product without a change moved data");
    if (!cuda)
      CHECK(s1.upload_bytes == 0 && s1.full_uploads == 0 && s1.values_uploads == 0 &&
                s1.formats_built == 0,
            "host context counted uploads");
    coal_mat_destroy(&A), coal_bvec_destroy(&x), coal_bvec_destroy(&y);
  }
}

/* Segments of the long rows (row-split SpMM's CTAs per long row): every row longer than the
 * threshold, in order, cut into segments of at most seg entries, against a plain loop over the
 * row offsets; none above the longest row; bad arguments refused. */
static void test_long_rows(coal_ctx ctx) {
  coal_mat A = NULL;
  CHECK_OK(ctx, coal_gen_powerlaw(ctx, 3000, 8.0, 2.2, 3, COAL_F64, &A));
  if (!A) return;
  int64_t *rp = malloc(sizeof(int64_t) * ((size_t)A->nrows + 1));
  CHECK_OK(ctx, coal_mat_get_csr(A, rp, NULL, NULL));
  int32_t mx = 0;
  CHECK_OK(ctx, coal_mat_max_row_len_compute(A, &mx));
  const int32_t thr[] = {0, 8, 31, mx - 1, mx}, seg[] = {1, 7, 1024};
  for (int t = 0; t < 5; t++)
    for (int q = 0; q < 3; q++) {
      int32_t *out = NULL, n = -1, want = 0, bad = 0;
      CHECK_OK(ctx, coal_mat_long_row_segments(A, thr[t], seg[q], &out, &n));
      for (int32_t i = 0; i < A->nrows; i++) {
        const int32_t len = (int32_t)(rp[i + 1] - rp[i]);
        if (len <= thr[t]) continue;
        for (int32_t s = 0; s * seg[q] < len; s++, want++)
          if (want >= n || out[want] != i || out[n + want] != s) bad++;
      }
      CHECK(n == want && !bad && (n > 0) == (out != NULL),
            "long rows > %d in segments of %d: %d segments (want %d), %d wrong", thr[t], seg[q], n,
            want, bad);
      free(out);
    }
  int32_t *out = (int32_t *)1, n = 5;
  CHECK_ERR(ctx, coal_mat_long_row_segments(A, 4, 0, &out, &n), COAL_ERR_ARG);
  CHECK(out == NULL && n == 0, "refused request left output");
  CHECK_ERR(ctx, coal_mat_long_row_segments(A, -1, 4, &out, &n), COAL_ERR_ARG);
  free(rp);
  coal_mat_destroy(&A);
}

/* Grid-line stride of generated orderings: nx on the 7-point (the +nx neighbour is the least
 * offset >= COAL_LINE_MIN), nx - 1 on the 27-point, none on unstructured matrices; cached.
 * Plane stride: nx*ny on both (the 27-point's by the midpoint of its block above), none where
 * no offset reaches twice the line. */
static void test_line_stride(coal_ctx ctx) {
  const struct {
    int kind;
    int64_t nx, ny, nz;
    int32_t want, plane;
  } g[] = {{7, 12, 10, 6, 12, 120}, {27, 9, 8, 7, 8, 72}, {27, 20, 20, 5, 19, 400},
           {7, 40, 3, 3, 40, 120},  {7, 5, 5, 5, 25, 0}, /* +nx = 5 < COAL_LINE_MIN: the next
                                                            offset, nx*ny */
           {7, 4, 1, 1, 0, 0},      {7, 0, 4, 4, 0, 0},   {7, 30, 30, 1, 30, 0}};
  for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
    coal_mat A = NULL;
    CHECK_OK(ctx, coal_gen_laplace3d(ctx, g[i].nx, g[i].ny, g[i].nz, g[i].kind, COAL_F64, &A));
    if (!A) continue;
    int32_t s = -2, again = -2, p = -2;
    CHECK_OK(ctx, coal_mat_line_stride_compute(A, &s));
    CHECK_OK(ctx, coal_mat_line_stride_compute(A, &again));
    CHECK_OK(ctx, coal_mat_plane_stride_compute(A, &p));
    CHECK(s == g[i].want && again == s && A->line_stride == s && p == g[i].plane,
          "%d-point %lldx%lldx%lld: line stride %d (again %d), plane %d, expected %d, %d",
          g[i].kind, (long long)g[i].nx, (long long)g[i].ny, (long long)g[i].nz, s, again, p,
          g[i].want, g[i].plane);
    coal_mat_destroy(&A);
  }
  coal_mat A = NULL;
  CHECK_OK(ctx, coal_gen_powerlaw(ctx, 3000, 12.0, 2.5, 5, COAL_F64, &A));
  int32_t s = -2;
  int32_t p = -2;
  if (A) CHECK_OK(ctx, coal_mat_line_stride_compute(A, &s));
  if (A) CHECK_OK(ctx, coal_mat_plane_stride_compute(A, &p));
  CHECK(s == 0 && p == 0, "power-law: line stride %d, plane %d, expected none", s, p);
  coal_mat_destroy(&A);
  CHECK_OK(ctx, coal_gen_random_spd(ctx, 3000, 8.0, 5, COAL_F64, &A));
  s = -2;
  if (A) CHECK_OK(ctx, coal_mat_line_stride_compute(A, &s));
  CHECK(s == 0, "random SPD: line stride %d, expected none", s);
  coal_mat_destroy(&A);
}

int main(void) {
  test_context();
  const coal_backend backends[2] = {COAL_BACKEND_HOST, COAL_BACKEND_CUDA};
  for (int b = 0; b < 2; b++) {
    if (backends[b] == COAL_BACKEND_CUDA && !coal_cuda_available()) {
      printf("cuda backend not available: skipped\n");
      continue;
    }
    coal_ctx ctx = NULL;
    coal_status st = coal_ctx_create(backends[b], &ctx);
    CHECK(st == COAL_SUCCESS, "%s context: %s", coal_backend_name(backends[b]),
          coal_status_string(st));
    if (!ctx) continue;
    printf("backend %s (%s)\n", coal_backend_name(backends[b]), coal_ctx_device_name(ctx));
    test_error_messages(ctx);
    test_create(ctx);
    test_mat_ops(ctx);
    test_mat_host(ctx);
    test_line_stride(ctx);
    test_long_rows(ctx);
    test_refresh_stats(ctx);
    test_format_cache(ctx);
    coal_ctx_destroy(&ctx);
  }
  return check_finish();
}
