/* Built when the CUDA backend is not compiled: every CUDA op answers "not compiled". */
#include "backend.h"
#include "../kernels/blas.h"
#include "../kernels/spgemm.h"

int coal_cuda_compiled(void) { return 0; }
int coal_cuda_device_count(void) { return 0; }

coal_status coal_cuda_ctx_init(coal_ctx ctx) {
  (void)ctx;
  return COAL_ERR_NOT_COMPILED;
}
void coal_cuda_ctx_free(coal_ctx ctx) { (void)ctx; }
coal_status coal_cuda_host_register(coal_ctx ctx, void *p, size_t bytes) {
  (void)p, (void)bytes;
  return COAL_ERROR(ctx, COAL_ERR_UNSUPPORTED, "the CUDA backend is not compiled in this build");
}
void coal_cuda_host_unregister(void *p) { (void)p; }

#define NC(ctx)                                                                                    \
  COAL_ERROR((ctx), COAL_ERR_NOT_COMPILED, "the CUDA backend is not compiled in this build")

static coal_status nc_alloc(coal_ctx ctx, size_t b, void **p) {
  (void)b, (void)p;
  return NC(ctx);
}
static void nc_release(coal_ctx ctx, void *p) { (void)ctx, (void)p; }
static coal_status nc_copy(coal_ctx ctx, void *d, const void *s, size_t b) {
  (void)d, (void)s, (void)b;
  return NC(ctx);
}
static coal_status nc_sync(coal_ctx ctx) { return NC(ctx); }
static coal_status nc_prepare(coal_mat A) { return NC(A->ctx); }
/* No device arrays can exist in this build; a struct handed to coal_mat_wrap_device is host
 * memory (coal_calloc). */
static void nc_mat_release(coal_mat A) {
  coal_free(A->dev);
  A->dev = NULL;
}
static coal_status nc_mat_download(coal_mat A, int32_t *rowptr, int32_t *colind, void *values) {
  (void)rowptr, (void)colind, (void)values;
  return NC(A->ctx);
}
static void nc_mat_drop_formats(coal_mat A) { (void)A; }
static coal_status nc_spmv(coal_mat A, double a, const void *x, double b, void *y) {
  (void)a, (void)x, (void)b, (void)y;
  return NC(A->ctx);
}
static coal_status nc_spmm(coal_mat A, double a, coal_bvec X, double b, coal_bvec Y) {
  (void)a, (void)X, (void)b, (void)Y;
  return NC(A->ctx);
}

const coal_backend_ops coal_cuda_ops = {
    .name = "cuda",
    .alloc = nc_alloc,
    .release = nc_release,
    .upload = nc_copy,
    .download = nc_copy,
    .copy = nc_copy,
    .sync = nc_sync,
    .mat_prepare = nc_prepare,
    .mat_release = nc_mat_release,
    .mat_download = nc_mat_download,
    .mat_drop_formats = nc_mat_drop_formats,
    .spmv = {NULL, nc_spmv, nc_spmv, nc_spmv, nc_spmv},
    .spmm = {NULL, nc_spmm, nc_spmm, nc_spmm},
};

static coal_status nc_gram(coal_ctx ctx, int64_t n, int64_t p, int64_t q, const double *X,
                           int64_t ldx, const double *Y, int64_t ldy, double *G, int64_t ldg) {
  (void)n, (void)p, (void)q, (void)X, (void)ldx, (void)Y, (void)ldy, (void)G, (void)ldg;
  return NC(ctx);
}
static coal_status nc_gemm(coal_ctx ctx, int64_t n, int64_t p, int64_t q, double a, const double *X,
                           int64_t ldx, const double *C, int64_t ldc, double beta, double *Y,
                           int64_t ldy) {
  (void)n, (void)p, (void)q, (void)a, (void)X, (void)ldx, (void)C, (void)ldc, (void)beta, (void)Y,
      (void)ldy;
  return NC(ctx);
}
static coal_status nc_dscale(coal_ctx ctx, int64_t n, int64_t k, const double *d, const double *X,
                             int64_t ldx, double *Y, int64_t ldy, double *nrm2) {
  (void)n, (void)k, (void)d, (void)X, (void)ldx, (void)Y, (void)ldy, (void)nrm2;
  return NC(ctx);
}
static coal_status nc_copy_cols(coal_ctx ctx, int64_t n, int64_t q, const double *X, coal_layout lx,
                                int64_t ldx, const int32_t *xc, double *Y, coal_layout ly,
                                int64_t ldy, const int32_t *yc) {
  (void)n, (void)q, (void)X, (void)lx, (void)ldx, (void)xc, (void)Y, (void)ly, (void)ldy, (void)yc;
  return NC(ctx);
}
static coal_status nc_eig_resid(coal_ctx ctx, int64_t n, int64_t q, const double *AX,
                                const double *MX, int64_t ldx, const int32_t *cols,
                                const double *lam, const double *d, double *W, int64_t ldw,
                                double *nrm2) {
  (void)n, (void)q, (void)AX, (void)MX, (void)ldx, (void)cols, (void)lam, (void)d, (void)W,
      (void)ldw, (void)nrm2;
  return NC(ctx);
}
static coal_status nc_cg_dot(coal_ctx ctx, int64_t n, const double *x, const double *y, double *sc,
                             int slot) {
  (void)n, (void)x, (void)y, (void)sc, (void)slot;
  return NC(ctx);
}
static coal_status nc_cg_xr(coal_ctx ctx, int64_t n, double *sc, int par, double *x, double *r,
                            const double *p, const double *q, const double *dinv) {
  (void)n, (void)sc, (void)par, (void)x, (void)r, (void)p, (void)q, (void)dinv;
  return NC(ctx);
}
static coal_status nc_cg_p(coal_ctx ctx, int64_t n, const double *sc, int par, double *p,
                           const double *r, const double *dinv) {
  (void)n, (void)sc, (void)par, (void)p, (void)r, (void)dinv;
  return NC(ctx);
}

static coal_status nc_jacobi(coal_mat A, double *dinv, int64_t *bad) {
  (void)dinv, (void)bad;
  return NC(A->ctx);
}
static coal_status nc_resid_dd(coal_mat A, int64_t k, const double *B, coal_layout lb, int64_t ldb,
                               const double *X, coal_layout lx, int64_t ldx, double *R) {
  (void)k, (void)B, (void)lb, (void)ldb, (void)X, (void)lx, (void)ldx, (void)R;
  return NC(A->ctx);
}
static coal_status nc_bcg_gram(coal_ctx ctx, int64_t n, int64_t s, int64_t m, const double *P,
                               const double *Q, const double *R, const double *dinv, double *S,
                               double *G, double *PP, double *PR) {
  (void)n, (void)s, (void)m, (void)P, (void)Q, (void)R, (void)dinv, (void)S;
  (void)G, (void)PP, (void)PR;
  return NC(ctx);
}
static coal_status nc_bcg_update(coal_ctx ctx, int64_t n, int64_t s, int64_t m, const double *Q,
                                 const double *C, double *R, const double *dinv, double *Z,
                                 double *nrm2, double *QZ, double *RZ) {
  (void)n, (void)s, (void)m, (void)Q, (void)C, (void)R, (void)dinv, (void)Z;
  (void)nrm2, (void)QZ, (void)RZ;
  return NC(ctx);
}
static coal_status nc_bcg_dir(coal_ctx ctx, int64_t n, int64_t p1, int64_t p2, int64_t q,
                              const double *X1, const double *d, const double *C1, const double *X2,
                              const double *C2, double *Y, const double *C3, double *X3) {
  (void)n, (void)p1, (void)p2, (void)q, (void)X1, (void)d, (void)C1, (void)X2, (void)C2, (void)Y;
  (void)C3, (void)X3;
  return NC(ctx);
}

static coal_status nc_vec_axpbypcz(coal_ctx ctx, int64_t n, double a, const double *x, double b,
                                   const double *y, double c, double *z, double d) {
  (void)n, (void)a, (void)x, (void)b, (void)y, (void)c, (void)z, (void)d;
  return NC(ctx);
}
static coal_status nc_vec_pointwise(coal_ctx ctx, int64_t n, int op, const double *x,
                                    const double *y, double *w) {
  (void)n, (void)op, (void)x, (void)y, (void)w;
  return NC(ctx);
}
static coal_status nc_vec_dots(coal_ctx ctx, int64_t n, int64_t k, const double *x,
                               const double *const *ys, double *out) {
  (void)n, (void)k, (void)x, (void)ys, (void)out;
  return NC(ctx);
}
static coal_status nc_vec_norms(coal_ctx ctx, int64_t n, const double *x, double s, double *out) {
  (void)n, (void)x, (void)s, (void)out;
  return NC(ctx);
}

const coal_blas_ops coal_blas_cuda = {
    .gram = nc_gram,
    .gemm = nc_gemm,
    .dscale = nc_dscale,
    .copy_cols = nc_copy_cols,
    .eig_resid = nc_eig_resid,
    .cg_dot = nc_cg_dot,
    .cg_update_xr = nc_cg_xr,
    .cg_update_p = nc_cg_p,
    .jacobi = nc_jacobi,
    .resid_dd = nc_resid_dd,
    .bcg_gram = nc_bcg_gram,
    .bcg_update = nc_bcg_update,
    .bcg_dir = nc_bcg_dir,
    .bcg_spmm_gram = NULL, /* no fused version: the solver calls SpMM and bcg_gram */
    .vec_axpbypcz = nc_vec_axpbypcz,
    .vec_pointwise = nc_vec_pointwise,
    .vec_dots = nc_vec_dots,
    .vec_norms = nc_vec_norms,
};

/* ---- sparse x sparse products (kernels/spgemm.h) ---------------------------------------- */
static coal_status nc_spgemm_symbolic(coal_spgemm p) { return NC(p->ctx); }
static coal_status nc_spgemm_numeric(coal_spgemm p, int download) {
  (void)download;
  return NC(p->ctx);
}
static coal_status nc_spgemm_stats(coal_spgemm p) { return NC(p->ctx); }
static void nc_spgemm_release(coal_spgemm p) { (void)p; }
coal_status coal_spgemm_rows_symbolic(coal_spgemm p) { return NC(p->ctx); }
coal_status coal_spgemm_rows_numeric(coal_spgemm p) { return NC(p->ctx); }
void coal_spgemm_rows_release(coal_spgemm p) { (void)p; }
coal_status coal_spgemm_ptap_symbolic(coal_spgemm p, int *fused) {
  *fused = 0;
  return NC(p->ctx);
}
coal_status coal_spgemm_ptap_numeric(coal_spgemm p) { return NC(p->ctx); }
void coal_spgemm_ptap_release(coal_spgemm p) { (void)p; }
coal_status coal_spgemm_cuda_transpose(coal_mat P, coal_mat *Pt) {
  if (Pt) *Pt = NULL;
  return NC(P->ctx);
}
coal_status coal_spgemm_cuda_transpose_values(coal_mat P, coal_mat Pt) {
  (void)Pt;
  return NC(P->ctx);
}

const coal_spgemm_ops coal_spgemm_cuda = {
    .symbolic = nc_spgemm_symbolic,
    .numeric = nc_spgemm_numeric,
    .tile_stats = nc_spgemm_stats,
    .release = nc_spgemm_release,
};

coal_status coal_spgemm_cuda_download(coal_spgemm p, coal_tile **tc, int32_t **pos) {
  (void)tc, (void)pos;
  return p ? NC(p->ctx) : COAL_ERR_NOT_COMPILED;
}
coal_status coal_tile_cuda_roundtrip(coal_mat A, coal_tile **t, int32_t **rowptr, int32_t **colind,
                                     void **values) {
  (void)t, (void)rowptr, (void)colind, (void)values;
  return A ? NC(A->ctx) : COAL_ERR_NOT_COMPILED;
}

coal_status coal_cusparse_spgemm_create(coal_mat A, coal_mat B, coal_cusparse_spgemm **h) {
  (void)B, (void)h;
  return A ? NC(A->ctx) : COAL_ERR_NOT_COMPILED;
}
coal_status coal_cusparse_spgemm_run(coal_cusparse_spgemm *h) {
  (void)h;
  return COAL_ERR_NOT_COMPILED;
}
coal_status coal_cusparse_spgemm_reuse_setup(coal_cusparse_spgemm *h) {
  (void)h;
  return COAL_ERR_NOT_COMPILED;
}
coal_status coal_cusparse_spgemm_reuse_compute(coal_cusparse_spgemm *h) {
  (void)h;
  return COAL_ERR_NOT_COMPILED;
}
coal_status coal_cusparse_spgemm_result(coal_cusparse_spgemm *h, coal_mat *C, size_t *peak) {
  (void)h, (void)C, (void)peak;
  return COAL_ERR_NOT_COMPILED;
}
void coal_cusparse_spgemm_destroy(coal_cusparse_spgemm *h) { (void)h; }
