/* Device-only matrices (suite "cuda", exit 77 without a GPU): coal_mat_wrap_device,
 * coal_mat_host and coal_mat_device_values_changed.
 *
 * Each matrix (7- and 27-point Laplacians, a power-law matrix with hubs, COO-built ones with
 * empty rows and columns and a long row, one without entries; fp64 and fp32) is made on a
 * CUDA context and uploaded; its device-only twin gets fresh device copies of the device CSR
 * arrays. Against the host-resident original on the same context: SpMV with every kernel and
 * AUTO, SpMM (row-split, merge, AUTO, then Swift), coal_mat_get_csr, transpose, convert,
 * permute, is_symmetric, Matrix Market output, coal_mat_set_values (then the products again),
 * new device values written behind the library's back with coal_mat_device_values_changed (on
 * a twin never downloaded and on one whose host copy exists), CG with Jacobi. Products must not
 * download the host CSR (except Swift, built on the host); outputs are poisoned (NaN) before
 * each product. Twins are also destroyed unused and after products only, and wrap_device's
 * failures must release what they were given: run under compute-sanitizer --leak-check full. */
#include "check.h"
#include "internal.h"
#include "backend.h"

#include <stdint.h>
#include <unistd.h>

#if !COAL_TEST_HAVE_CUDA
int main(void) {
  printf("CUDA backend not compiled: skipped\n");
  return 77;
}
#else
#define COAL_TEST_CUDA_INTERNALS
#include "check_cuda.h"

static const char *dtname(coal_dtype dt) { return dt == COAL_F64 ? "f64" : "f32"; }

static int cu_ok(cudaError_t e, const char *what) {
  CHECK(e == cudaSuccess, "%s: %s", what, cudaGetErrorString(e));
  return e == cudaSuccess;
}

/* Host CSR of a matrix through the public getter. */
typedef struct {
  int64_t nrows, ncols, nnz;
  coal_dtype dt;
  int64_t *rp;
  int32_t *ci;
  void *v;
} csr;

static void csr_free(csr *c) {
  free(c->rp), free(c->ci), free(c->v);
  memset(c, 0, sizeof *c);
}

/* Poisoned buffers first: whatever get_csr leaves unwritten differs from the reference. */
static int csr_get(coal_ctx ctx, coal_mat A, csr *c) {
  memset(c, 0, sizeof *c);
  CHECK_OK(ctx, coal_mat_size(A, &c->nrows, &c->ncols, &c->nnz));
  c->dt = coal_mat_dtype(A);
  size_t es = coal_dtype_size(c->dt);
  c->rp = malloc(sizeof(int64_t) * (size_t)(c->nrows + 1));
  c->ci = malloc(sizeof(int32_t) * (size_t)(c->nnz + 1));
  c->v = malloc(es * (size_t)(c->nnz + 1));
  if (!c->rp || !c->ci || !c->v) return 0;
  memset(c->rp, 0xa5, sizeof(int64_t) * (size_t)(c->nrows + 1));
  memset(c->ci, 0xa5, sizeof(int32_t) * (size_t)(c->nnz + 1));
  memset(c->v, 0xa5, es * (size_t)(c->nnz + 1));
  coal_status st = coal_mat_get_csr(A, c->rp, c->ci, c->v);
  CHECK(st == COAL_SUCCESS, "get_csr: %s (%s)", coal_status_string(st), coal_ctx_last_error(ctx));
  return st == COAL_SUCCESS;
}

static int csr_same(const csr *a, const csr *b) {
  if (a->nrows != b->nrows || a->ncols != b->ncols || a->nnz != b->nnz || a->dt != b->dt) return 0;
  size_t es = coal_dtype_size(a->dt);
  return memcmp(a->rp, b->rp, sizeof(int64_t) * (size_t)(a->nrows + 1)) == 0 &&
         memcmp(a->ci, b->ci, sizeof(int32_t) * (size_t)a->nnz) == 0 &&
         memcmp(a->v, b->v, es * (size_t)a->nnz) == 0;
}

/* Both matrices' CSR, compared exactly. */
static void check_same_csr(coal_ctx ctx, coal_mat A, coal_mat B, const char *what,
                           const char *name) {
  csr a = {0}, b = {0};
  int ok = A && B && csr_get(ctx, A, &a) && csr_get(ctx, B, &b);
  CHECK(ok && csr_same(&a, &b), "%s: %s differs from the original's", name, what);
  csr_free(&a), csr_free(&b);
}

/* Device-only twin of A (a matrix of the CUDA context D): its device CSR copied into fresh
 * device arrays, handed to coal_mat_wrap_device. */
static coal_mat make_twin(coal_ctx D, coal_mat A) {
  const coal_backend_ops *ops = coal_backend(D);
  CHECK_OK(D, ops->mat.prepare(A));
  if (!A->dev) return NULL;
  struct coal_mat_cuda *dev = NULL;
  CHECK_OK(D, coal_calloc(D, sizeof *dev, (void **)&dev));
  if (!dev) return NULL;
  const size_t rb = sizeof(int32_t) * ((size_t)A->nrows + 1), cb = sizeof(int32_t) * (size_t)A->nnz,
               vb = coal_dtype_size(A->dtype) * (size_t)A->nnz;
  CHECK_OK(D, ops->mem.alloc(D, rb, (void **)&dev->rowptr));
  CHECK_OK(D, ops->mem.alloc(D, cb, (void **)&dev->colind));
  CHECK_OK(D, ops->mem.alloc(D, vb, &dev->values));
  CHECK_OK(D, ops->mem.sync(D)); /* the allocations' memsets ran on the library's stream */
  if (dev->rowptr && dev->colind && dev->values) {
    cu_ok(cudaMemcpy(dev->rowptr, A->dev->rowptr, rb, cudaMemcpyDeviceToDevice), "copy rowptr");
    if (cb) cu_ok(cudaMemcpy(dev->colind, A->dev->colind, cb, cudaMemcpyDeviceToDevice), "colind");
    if (vb) cu_ok(cudaMemcpy(dev->values, A->dev->values, vb, cudaMemcpyDeviceToDevice), "values");
  }
  cu_ok(cudaDeviceSynchronize(), "sync after the copies");
  coal_mat T = NULL;
  CHECK_OK(D, coal_mat_wrap_device(D, A->nrows, A->ncols, A->nnz, A->dtype, dev, &T));
  CHECK(T && !T->rowptr && !T->colind && !T->values && T->valid == COAL_MEM_DEVICE &&
            T->max_row_len == -1 && T->dev == dev && T->symmetric == 0 && T->nnz == A->nnz,
        "fresh device-only matrix in an unexpected state");
  return T;
}

/* Largest row sum of |a_ij| (x, y in [-1, 1): bounds every product's scale). */
static double row_abs_max(const csr *c) {
  double m = 0;
  for (int64_t i = 0; i < c->nrows; i++) {
    double s = 0;
    for (int64_t p = c->rp[i]; p < c->rp[i + 1]; p++)
      s += fabs(c->dt == COAL_F64 ? ((double *)c->v)[p] : ((float *)c->v)[p]);
    if (s > m) m = s;
  }
  return m;
}

/* Every entry of two blocks of n x k downloaded into doubles (column-major). */
static int block_get(coal_bvec B, double *out) {
  int64_t n, k;
  coal_bvec_size(B, &n, &k);
  coal_dtype dt = coal_bvec_dtype(B);
  size_t cnt = (size_t)(n * k);
  void *tmp = malloc(coal_dtype_size(dt) * (cnt + 1));
  if (!tmp) return 0;
  coal_status st = coal_bvec_get_host(B, tmp, COAL_COL_MAJOR, 0);
  for (size_t i = 0; st == COAL_SUCCESS && i < cnt; i++)
    out[i] = dt == COAL_F64 ? ((double *)tmp)[i] : ((float *)tmp)[i];
  free(tmp);
  return st == COAL_SUCCESS;
}

/* y_twin against y_orig: bit-equal for the deterministic kernels, within rounding of the
 * product's scale for those with atomics (the summation order may differ between runs). */
static void compare_blocks(coal_bvec Yo, coal_bvec Yt, int exact, double scale, coal_dtype dt,
                           const char *name, const char *what) {
  int64_t n, k;
  coal_bvec_size(Yo, &n, &k);
  size_t cnt = (size_t)(n * k);
  double *a = malloc(sizeof(double) * (cnt + 1)), *b = malloc(sizeof(double) * (cnt + 1));
  int ok = a && b && block_get(Yo, a) && block_get(Yt, b);
  /* wrong or stale data differs by O(scale); atomics in fp32 round partial sums to float */
  double tol = (dt == COAL_F64 ? 1e-12 : 1e-4) * (scale > 1 ? scale : 1), worst = 0;
  for (size_t i = 0; ok && i < cnt; i++) {
    if (isnan(a[i]) || isnan(b[i]) || (exact && a[i] != b[i])) {
      ok = 0;
      worst = INFINITY;
    } else if (fabs(a[i] - b[i]) > worst) {
      worst = fabs(a[i] - b[i]);
    }
  }
  CHECK(ok && worst <= tol, "%s: %s: device-only result differs from the original's by %g", name,
        what, worst);
  free(a), free(b);
}

static const coal_spmv_kernel spmv_kernels[] = {COAL_SPMV_CSR_VECTOR, COAL_SPMV_CSR_MERGE,
                                                COAL_SPMV_FASTLOAD, COAL_SPMV_FASTLOAD_T,
                                                COAL_SPMV_AUTO};
#define NSPMV (int)(sizeof spmv_kernels / sizeof spmv_kernels[0])

/* SpMV with every kernel, y = NaN and beta = 0, then alpha = -1.5, beta = 0.25 over a random y,
 * on the original O and the twin T. */
static void check_spmv(coal_ctx D, coal_mat O, coal_mat T, double scale, const char *name) {
  coal_dtype dt = O->dtype;
  coal_bvec x = NULL, yo = NULL, yt = NULL;
  CHECK_OK(D, coal_bvec_create(D, O->ncols, 1, dt, COAL_COL_MAJOR, 0, &x));
  CHECK_OK(D, coal_bvec_create(D, O->nrows, 1, dt, COAL_COL_MAJOR, 0, &yo));
  CHECK_OK(D, coal_bvec_create(D, O->nrows, 1, dt, COAL_COL_MAJOR, 0, &yt));
  if (!x || !yo || !yt) goto done;
  CHECK_OK(D, coal_bvec_set_random(x, 11));
  for (int kk = 0; kk < NSPMV; kk++) {
    coal_spmv_kernel k = spmv_kernels[kk];
    int exact = k == COAL_SPMV_CSR_VECTOR;
    char what[96];
    snprintf(what, sizeof what, "spmv %s, beta 0", coal_spmv_kernel_name(k));
    CHECK_OK(D, coal_bvec_set_value(yo, NAN));
    CHECK_OK(D, coal_bvec_set_value(yt, NAN));
    CHECK_OK(D, coal_spmv(O, k, 1.0, x, 0.0, yo));
    CHECK_OK(D, coal_spmv(T, k, 1.0, x, 0.0, yt));
    compare_blocks(yo, yt, exact, scale, dt, name, what);
    snprintf(what, sizeof what, "spmv %s, beta 0.25", coal_spmv_kernel_name(k));
    CHECK_OK(D, coal_bvec_set_random(yo, 12));
    CHECK_OK(D, coal_bvec_set_random(yt, 12));
    CHECK_OK(D, coal_spmv(O, k, -1.5, x, 0.25, yo));
    CHECK_OK(D, coal_spmv(T, k, -1.5, x, 0.25, yt));
    compare_blocks(yo, yt, exact, 1.5 * scale + 0.25, dt, name, what);
  }
done:
  coal_bvec_destroy(&x), coal_bvec_destroy(&yo), coal_bvec_destroy(&yt);
}

/* SpMM on both layouts; swift != 0 adds Swift (built on the host: downloads the twin). */
static void check_spmm(coal_ctx D, coal_mat O, coal_mat T, double scale, int swift,
                       const char *name) {
  static const coal_spmm_kernel kern[] = {COAL_SPMM_ROWSPLIT, COAL_SPMM_MERGE, COAL_SPMM_AUTO,
                                          COAL_SPMM_SWIFT};
  const int nk = swift ? 4 : 3;
  const int64_t ks[] = {1, 5};
  coal_dtype dt = O->dtype;
  for (int l = 0; l < 2; l++)
    for (int ik = 0; ik < 2; ik++) {
      coal_layout lay = l ? COAL_ROW_MAJOR : COAL_COL_MAJOR;
      int64_t k = ks[ik];
      coal_bvec X = NULL, Yo = NULL, Yt = NULL;
      CHECK_OK(D, coal_bvec_create(D, O->ncols, k, dt, lay, 0, &X));
      CHECK_OK(D, coal_bvec_create(D, O->nrows, k, dt, lay, 0, &Yo));
      CHECK_OK(D, coal_bvec_create(D, O->nrows, k, dt, lay, 0, &Yt));
      if (X && Yo && Yt) {
        CHECK_OK(D, coal_bvec_set_random(X, 21 + (uint64_t)k));
        for (int i = 0; i < nk; i++) {
          char what[96];
          snprintf(what, sizeof what, "spmm %s, k %lld, %s", coal_spmm_kernel_name(kern[i]),
                   (long long)k, l ? "row-major" : "column-major");
          CHECK_OK(D, coal_bvec_set_value(Yo, NAN));
          CHECK_OK(D, coal_bvec_set_value(Yt, NAN));
          CHECK_OK(D, coal_spmm(O, kern[i], 2.0, X, 0.0, Yo));
          CHECK_OK(D, coal_spmm(T, kern[i], 2.0, X, 0.0, Yt));
          compare_blocks(Yo, Yt, kern[i] == COAL_SPMM_ROWSPLIT, 2.0 * scale, dt, name, what);
        }
      }
      coal_bvec_destroy(&X), coal_bvec_destroy(&Yo), coal_bvec_destroy(&Yt);
    }
}

/* Writes both matrices as Matrix Market files and compares the bytes. */
static void check_write_mm(coal_ctx D, coal_mat O, coal_mat T, const char *name) {
  char po[256], pt[256];
  snprintf(po, sizeof po, "/tmp/coal_devonly_%ld_o.mtx", (long)getpid());
  snprintf(pt, sizeof pt, "/tmp/coal_devonly_%ld_t.mtx", (long)getpid());
  CHECK_OK(D, coal_mat_write_mm(O, po));
  CHECK_OK(D, coal_mat_write_mm(T, pt));
  FILE *fo = fopen(po, "rb"), *ft = fopen(pt, "rb");
  int same = fo && ft;
  while (same) {
    int a = fgetc(fo), b = fgetc(ft);
    if (a != b) same = 0;
    if (a == EOF || b == EOF) break;
  }
  CHECK(same, "%s: Matrix Market output of the device-only matrix differs", name);
  if (fo) fclose(fo);
  if (ft) fclose(ft);
  remove(po), remove(pt);
}

/* New values, deterministic per seed, of the matrix dtype. */
static void *new_values(coal_dtype dt, int64_t nnz, uint64_t seed) {
  void *v = malloc(coal_dtype_size(dt) * (size_t)(nnz + 1));
  for (int64_t p = 0; v && p < nnz; p++) {
    double r = 0.5 + coal_random_uniform(seed, (uint64_t)p);
    if (dt == COAL_F64)
      ((double *)v)[p] = r;
    else
      ((float *)v)[p] = (float)r;
  }
  return v;
}

/* New device values behind the library's back, then coal_mat_device_values_changed; the
 * original gets the same values through coal_mat_set_values. */
static void check_values_changed(coal_ctx D, coal_mat O, coal_mat T, uint64_t seed,
                                 const char *name, const char *when) {
  const size_t vb = coal_dtype_size(O->dtype) * (size_t)O->nnz;
  void *v = new_values(O->dtype, O->nnz, seed);
  if (!v || !T) {
    free(v);
    return;
  }
  char nm[160];
  snprintf(nm, sizeof nm, "%s (%s)", name, when);
  int had_host = T->rowptr != NULL;
  uint64_t state = T->state;
  if (vb) cu_ok(cudaMemcpy(T->dev->values, v, vb, cudaMemcpyHostToDevice), "new device values");
  cu_ok(cudaDeviceSynchronize(), "sync after the new values");
  coal_mat_device_values_changed(T);
  int stale = 0; /* a format that holds values survived */
  const int value_keys[] = {COAL_FMT_FASTLOAD,      COAL_FMT_FASTLOAD_T,      COAL_FMT_SWIFT,
                            COAL_FMT_CUDA_FASTLOAD, COAL_FMT_CUDA_FASTLOAD_T, COAL_FMT_CUDA_SWIFT};
  for (size_t q = 0; q < sizeof value_keys / sizeof value_keys[0]; q++)
    stale |= coal_mat_format_get(T, value_keys[q]) != NULL;
  CHECK(T->valid == COAL_MEM_DEVICE && T->state == state + 1 && !stale &&
            (T->rowptr != NULL) == had_host,
        "%s: state after device_values_changed", nm);
  CHECK_OK(D, coal_mat_set_values(O, v));
  double scale = 0;
  {
    csr c = {0};
    if (csr_get(D, O, &c)) scale = row_abs_max(&c);
    csr_free(&c);
  }
  check_spmv(D, O, T, scale, nm);
  CHECK((T->rowptr != NULL) == had_host, "%s: products downloaded the host CSR", nm);
  check_spmm(D, O, T, scale, 0, nm);
  check_same_csr(D, O, T, "CSR after new device values", nm);
  {
    csr c = {0};
    if (csr_get(D, T, &c))
      CHECK(memcmp(c.v, v, vb) == 0, "%s: get_csr does not see the new device values", nm);
    csr_free(&c);
  }
  CHECK(T->valid == (COAL_MEM_DEVICE | COAL_MEM_HOST), "%s: valid %u after get_csr", nm, T->valid);
  free(v);
}

static void check_matrix(coal_ctx D, coal_mat O, const char *name) {
  if (!O) return;
  printf("%s: %d x %d, %lld nonzeros, %s\n", name, O->nrows, O->ncols, (long long)O->nnz,
         dtname(O->dtype));
  unsetenv("COALESCE_FASTLOAD_HOST_BUILD");
  csr ref = {0};
  if (!csr_get(D, O, &ref)) return;
  const double scale = row_abs_max(&ref);

  /* products: no host download (the longest row for AUTO comes from the row offsets only) */
  coal_mat T = make_twin(D, O);
  if (T) {
    check_spmv(D, O, T, scale, name);
    check_spmm(D, O, T, scale, 0, name);
    CHECK(!T->rowptr && !T->colind && !T->values && T->valid == COAL_MEM_DEVICE,
          "%s: products downloaded the host CSR", name);
    CHECK(T->max_row_len == coal_mat_max_row_len(O), "%s: longest row %d, original %d", name,
          T->max_row_len, coal_mat_max_row_len(O));
    /* the grid-line stride from the downloaded structure, still no host copy kept */
    int32_t lt = -2, lo = -3;
    CHECK_OK(D, coal_mat_line_stride_compute(T, &lt));
    CHECK_OK(O->ctx, coal_mat_line_stride_compute(O, &lo));
    int32_t pt = -2, po = -3;
    CHECK_OK(D, coal_mat_plane_stride_compute(T, &pt));
    CHECK_OK(O->ctx, coal_mat_plane_stride_compute(O, &po));
    CHECK(lt == lo && pt == po && !T->rowptr && !T->colind,
          "%s: line stride %d, plane %d, original %d, %d%s", name, lt, pt, lo, po,
          T->rowptr ? " (host copy kept)" : "");
    CHECK(coal_spmv_select(T) == coal_spmv_select(O) &&
              coal_spmm_select(T, 8, COAL_ROW_MAJOR) == coal_spmm_select(O, 8, COAL_ROW_MAJOR),
          "%s: AUTO picks another kernel for the device-only matrix", name);
    /* Swift is built on the host: the twin's host copy is made on the way */
    check_spmm(D, O, T, scale, 1, name);
    CHECK(O->nrows == 0 || (T->rowptr && (T->valid & COAL_MEM_HOST)),
          "%s: Swift on a device-only matrix left no host copy", name);
    check_same_csr(D, O, T, "CSR after Swift", name);
    /* new values through the public setter: host copy, then a fresh upload */
    void *v = new_values(O->dtype, O->nnz, 31);
    CHECK_OK(D, coal_mat_set_values(O, v));
    CHECK_OK(D, coal_mat_set_values(T, v));
    CHECK(T->valid == COAL_MEM_HOST && T->rowptr, "%s: valid %u after set_values", name, T->valid);
    {
      csr c = {0}, n = {0};
      if (csr_get(D, O, &n) && csr_get(D, T, &c))
        CHECK(csr_same(&c, &n), "%s: CSR after set_values differs", name);
      double s2 = row_abs_max(&n);
      csr_free(&c), csr_free(&n);
      check_spmv(D, O, T, s2, "after set_values");
    }
    free(v);
    coal_mat_destroy(&T);
    CHECK(T == NULL, "destroy clears the handle");
    CHECK_OK(D, coal_mat_set_values(O, ref.v)); /* back to the original values */
  }

  /* set_values on a twin never downloaded: the structure comes from the device */
  T = make_twin(D, O);
  if (T) {
    void *v = new_values(O->dtype, O->nnz, 41);
    CHECK_OK(D, coal_mat_set_values(T, v));
    CHECK_OK(D, coal_mat_set_values(O, v));
    check_same_csr(D, O, T, "CSR after set_values (never downloaded)", name);
    check_spmv(D, O, T, scale * 2 + 1, "set_values (never downloaded)");
    CHECK_OK(D, coal_mat_set_values(O, ref.v));
    free(v);
    coal_mat_destroy(&T);
  }

  /* host CSR on demand: get_csr first, then the operations reading it */
  T = make_twin(D, O);
  if (T) {
    csr c = {0};
    if (csr_get(D, T, &c)) CHECK(csr_same(&c, &ref), "%s: get_csr of the device-only matrix", name);
    csr_free(&c);
    CHECK(T->rowptr && T->valid == (COAL_MEM_HOST | COAL_MEM_DEVICE), "%s: valid %u after get_csr",
          name, T->valid);
    int32_t *rp = T->rowptr;
    CHECK_OK(D, coal_mat_host(T));
    CHECK(T->rowptr == rp, "%s: coal_mat_host on a current copy reallocated it", name);
    coal_mat_destroy(&T);
  }
  T = make_twin(D, O);
  if (T) {
    coal_mat Ot = NULL, Tt = NULL;
    CHECK_OK(D, coal_mat_transpose(O, &Ot));
    CHECK_OK(D, coal_mat_transpose(T, &Tt));
    check_same_csr(D, Ot, Tt, "transpose", name);
    coal_mat_destroy(&Ot), coal_mat_destroy(&Tt);
    coal_mat_destroy(&T);
  }
  T = make_twin(D, O);
  if (T) {
    check_write_mm(D, O, T, name);
    coal_mat_destroy(&T);
  }
  T = make_twin(D, O);
  if (T) {
    coal_mat Oc = NULL, Tc = NULL;
    coal_dtype other = O->dtype == COAL_F64 ? COAL_F32 : COAL_F64;
    CHECK_OK(D, coal_mat_convert(T, other, &Tc));
    CHECK_OK(D, coal_mat_convert(O, other, &Oc));
    check_same_csr(D, Oc, Tc, "convert", name);
    coal_mat_destroy(&Oc), coal_mat_destroy(&Tc);
    coal_mat_destroy(&T);
  }
  T = make_twin(D, O);
  if (T) {
    int so = -1, st = -2;
    CHECK_OK(D, coal_mat_is_symmetric(O, &so));
    CHECK_OK(D, coal_mat_is_symmetric(T, &st));
    CHECK(so == st, "%s: is_symmetric %d, original %d", name, st, so);
    if (O->nrows == O->ncols) {
      int32_t *perm = malloc(sizeof(int32_t) * ((size_t)O->nrows + 1));
      for (int32_t i = 0; perm && i < O->nrows; i++) perm[i] = O->nrows - 1 - i;
      coal_mat Op = NULL, Tp = NULL;
      CHECK_OK(D, coal_mat_permute(O, perm, &Op));
      CHECK_OK(D, coal_mat_permute(T, perm, &Tp));
      check_same_csr(D, Op, Tp, "permute", name);
      coal_mat_destroy(&Op), coal_mat_destroy(&Tp);
      free(perm);
    }
    coal_mat_destroy(&T);
  }

  /* FastLoad statistics build the host format from the downloaded copy */
  T = make_twin(D, O);
  if (T) {
    for (int t = 0; t < 2; t++) {
      coal_fastload_stats so, st;
      memset(&so, 0, sizeof so), memset(&st, 0, sizeof st);
      CHECK_OK(D, coal_mat_fastload_stats(O, t, &so));
      CHECK_OK(D, coal_mat_fastload_stats(T, t, &st));
      CHECK(so.nblocks == st.nblocks && so.natomics == st.natomics,
            "%s: FastLoad statistics differ", name);
    }
    /* the device formats built from the host format (host-build path) */
    setenv("COALESCE_FASTLOAD_HOST_BUILD", "1", 1);
    check_spmv(D, O, T, scale, "host-built FastLoad");
    unsetenv("COALESCE_FASTLOAD_HOST_BUILD");
    coal_mat_destroy(&T);
  }

  /* new device values: on a twin never downloaded (device formats built before), and on one
   * with a host copy (its values only are downloaded again) */
  T = make_twin(D, O);
  if (T) {
    check_spmv(D, O, T, scale, name); /* builds the device FastLoad formats */
    check_values_changed(D, O, T, 51, name, "never downloaded");
    coal_mat_destroy(&T);
    CHECK_OK(D, coal_mat_set_values(O, ref.v));
  }
  T = make_twin(D, O);
  if (T) {
    csr c = {0};
    if (csr_get(D, T, &c)) csr_free(&c);
    check_spmv(D, O, T, scale, name);
    check_values_changed(D, O, T, 61, name, "host copy present");
    /* and again: the host copy is stale a second time */
    check_values_changed(D, O, T, 62, name, "second change");
    coal_mat_destroy(&T);
    CHECK_OK(D, coal_mat_set_values(O, ref.v));
  }

  /* destroyed without use, and after products only (the leak check covers both) */
  T = make_twin(D, O);
  coal_mat_destroy(&T);
  T = make_twin(D, O);
  if (T) {
    check_spmv(D, O, T, scale, name);
    coal_mat_destroy(&T);
  }
  csr_free(&ref);
}

/* CG with Jacobi on a device-only Laplacian: the setup's symmetry and diagonal checks read the
 * host copy; the solve gives the original's solution. */
static void check_solver(coal_ctx D) {
  coal_mat O = NULL;
  CHECK_OK(D, coal_gen_laplace3d(D, 9, 8, 7, 7, COAL_F64, &O));
  if (!O) return;
  coal_mat T = make_twin(D, O);
  int64_t n = O->nrows;
  coal_bvec B = NULL, Xo = NULL, Xt = NULL;
  CHECK_OK(D, coal_bvec_create(D, n, 2, COAL_F64, COAL_COL_MAJOR, 0, &B));
  CHECK_OK(D, coal_bvec_create(D, n, 2, COAL_F64, COAL_COL_MAJOR, 0, &Xo));
  CHECK_OK(D, coal_bvec_create(D, n, 2, COAL_F64, COAL_COL_MAJOR, 0, &Xt));
  if (T && B && Xo && Xt) {
    CHECK_OK(D, coal_bvec_set_random(B, 71));
    for (int m = 0; m < 2; m++) {
      coal_solver So = NULL, St = NULL;
      CHECK_OK(D, coal_solver_create(O, &So));
      CHECK_OK(D, coal_solver_create(T, &St));
      if (So && St) {
        coal_method meth = m ? COAL_METHOD_BLOCKCG : COAL_METHOD_CG;
        CHECK_OK(D, coal_solver_set_method(So, meth));
        CHECK_OK(D, coal_solver_set_method(St, meth));
        CHECK_OK(D, coal_solver_set_pc(So, COAL_PC_JACOBI));
        CHECK_OK(D, coal_solver_set_pc(St, COAL_PC_JACOBI));
        CHECK_OK(D, coal_bvec_set_value(Xo, 0.0));
        CHECK_OK(D, coal_bvec_set_value(Xt, 0.0));
        CHECK_OK(D, coal_solver_solve(So, B, Xo));
        CHECK_OK(D, coal_solver_solve(St, B, Xt));
        coal_solve_info io, it;
        CHECK_OK(D, coal_solver_get_info(St, 0, &it));
        CHECK_OK(D, coal_solver_get_info(So, 0, &io));
        CHECK(it.reason == COAL_SOLVE_CONVERGED, "solver on the device-only matrix: %s",
              coal_solve_reason_name(it.reason));
        CHECK(abs(coal_solver_iterations(So) - coal_solver_iterations(St)) <= 1,
              "%s: %d iterations on the device-only matrix, %d on the original",
              coal_method_name(meth), coal_solver_iterations(St), coal_solver_iterations(So));
        compare_blocks(Xo, Xt, 0, 1e4, COAL_F64, "laplace3d 9x8x7", coal_method_name(meth));
      }
      coal_solver_destroy(&So), coal_solver_destroy(&St);
    }
  }
  coal_bvec_destroy(&B), coal_bvec_destroy(&Xo), coal_bvec_destroy(&Xt);
  coal_mat_destroy(&T), coal_mat_destroy(&O);
}

/* wrap_device's failures release the device copy they were given (leak check). */
static void check_wrap_errors(coal_ctx H, coal_ctx D) {
  coal_mat O = NULL;
  CHECK_OK(D, coal_gen_laplace2d(D, 6, 5, COAL_F64, &O));
  if (!O) return;
  for (int c = 0; c < 4; c++) {
    coal_mat T = make_twin(D, O); /* its device copy is taken from it below */
    if (!T) continue;
    struct coal_mat_cuda *dev = T->dev;
    T->dev = NULL;
    coal_mat_destroy(&T);
    coal_mat W = (coal_mat)1;
    coal_status st;
    if (c == 0)
      st = coal_mat_wrap_device(H, O->nrows, O->ncols, O->nnz, O->dtype, dev, &W);
    else if (c == 1)
      st = coal_mat_wrap_device(D, O->nrows, O->ncols, O->nnz, (coal_dtype)7, dev, &W);
    else if (c == 2)
      st = coal_mat_wrap_device(D, -1, O->ncols, O->nnz, O->dtype, dev, &W);
    else
      st = coal_mat_wrap_device(D, O->nrows, O->ncols, O->nnz, O->dtype, dev, NULL);
    CHECK(st == COAL_ERR_ARG, "wrap_device failure %d: %s", c, coal_status_string(st));
    CHECK(c == 3 || W == NULL, "failed wrap_device %d leaves a handle", c);
  }
  coal_mat_destroy(&O);
}

/* COO matrix with empty rows (every third, and the last ones) and empty columns, a long row
 * and a long column. */
static coal_mat make_holes(coal_ctx D, int32_t nr, int32_t nc, coal_dtype dt) {
  int64_t cap = (int64_t)nr * 6 + nc + nr + 16, nnz = 0;
  int32_t *ri = malloc(sizeof(int32_t) * (size_t)cap), *ci = malloc(sizeof(int32_t) * (size_t)cap);
  double *v = malloc(sizeof(double) * (size_t)cap);
  coal_mat A = NULL;
  if (ri && ci && v) {
    uint64_t k = 0;
    for (int32_t i = 0; i < nr - 3; i++) {
      if (i % 3 == 0) continue;
      for (int t = 0; t < 5; t++) {
        int32_t j = (int32_t)((i * 7 + t * 13) % nc);
        if (j % 4 == 1) continue; /* empty columns */
        ri[nnz] = i, ci[nnz] = j, v[nnz++] = coal_random_uniform(5, k++);
      }
    }
    for (int32_t j = 0; j < nc; j += 2) /* a long row */
      ri[nnz] = 7, ci[nnz] = j, v[nnz++] = coal_random_uniform(6, k++);
    for (int32_t i = 1; i < nr; i += 3) /* a long column */
      ri[nnz] = i, ci[nnz] = 2, v[nnz++] = coal_random_uniform(7, k++);
    CHECK_OK(D, coal_mat_create_coo(D, nr, nc, nnz, ri, ci, v, dt, &A));
  }
  free(ri), free(ci), free(v);
  return A;
}

int main(void) {
  if (!coal_cuda_available()) {
    printf("no GPU: skipped\n");
    return 77;
  }
  coal_ctx H = NULL, D = NULL;
  CHECK_OK(NULL, coal_ctx_create(COAL_BACKEND_HOST, &H));
  CHECK_OK(NULL, coal_ctx_create(COAL_BACKEND_CUDA, &D));
  if (!H || !D) return check_finish();
  printf("device: %s\n", coal_ctx_device_name(D));

  for (int t = 0; t < 2; t++) {
    coal_dtype dt = t ? COAL_F32 : COAL_F64;
    char name[128];
    coal_mat A = NULL;
    snprintf(name, sizeof name, "laplace3d 7-point 10x9x8 %s", dtname(dt));
    CHECK_OK(D, coal_gen_laplace3d(D, 10, 9, 8, 7, dt, &A));
    check_matrix(D, A, name);
    coal_mat_destroy(&A);
    snprintf(name, sizeof name, "laplace3d 27-point 8x8x8 %s", dtname(dt));
    CHECK_OK(D, coal_gen_laplace3d(D, 8, 8, 8, 27, dt, &A));
    check_matrix(D, A, name);
    coal_mat_destroy(&A);
    snprintf(name, sizeof name, "power-law 4000 %s", dtname(dt));
    CHECK_OK(D, coal_gen_powerlaw(D, 4000, 8.0, 2.1, 3, dt, &A));
    check_matrix(D, A, name);
    coal_mat_destroy(&A);
    snprintf(name, sizeof name, "empty rows and columns 301x257 %s", dtname(dt));
    A = make_holes(D, 301, 257, dt);
    check_matrix(D, A, name);
    coal_mat_destroy(&A);
    snprintf(name, sizeof name, "empty rows and columns 64x700 %s", dtname(dt));
    A = make_holes(D, 64, 700, dt);
    check_matrix(D, A, name);
    coal_mat_destroy(&A);
    snprintf(name, sizeof name, "no entries 5x7 %s", dtname(dt));
    CHECK_OK(D, coal_mat_create_coo(D, 5, 7, 0, NULL, NULL, NULL, dt, &A));
    check_matrix(D, A, name);
    coal_mat_destroy(&A);
  }
  check_solver(D);
  check_wrap_errors(H, D);

  coal_ctx_destroy(&D);
  coal_ctx_destroy(&H);
  return check_finish();
}
#endif
