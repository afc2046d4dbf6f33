/* seqswift: PETSc's sequential vector with a second copy of its entries in coalesce's backend
 * memory (the GPU on the CUDA backend; a separate host buffer on the host backend, so that the
 * bookkeeping below is exercised without a GPU). Built like PETSc's own GPU vectors: VECSEQ,
 * then its operations table is saved and the operations a Krylov solver uses are replaced by
 * coalesce's vector operations on arrays of the context's memory (coalesce_device.h:
 * coal_device_axpbypcz, _pointwise, _dots, _norms).
 *
 * Where the valid entries are is Vec->offloadmask: CPU (host array only), GPU (backend copy
 * only) or BOTH. Every way PETSc reaches the host array goes through the array accessors
 * (VecGetArray and friends call ops->getarray first), which copy the entries back when only the
 * backend copy is current; VecRestoreArray and VecGetArrayWrite mark the host array as the only
 * current copy. The operations we replace run on the backend copy when every vector involved is
 * a seqswift; with any other vector (VECSEQ, a vector of a preconditioner) they call VECSEQ's own
 * operation, which reaches our entries through the accessors. The products of seqaijswift
 * matrices use the backend copies directly (swift_apply_vec), with no copy in or out. */
#include "swift_impl.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <petsc/private/vecimpl.h>
#pragma GCC diagnostic pop

#include <float.h>
#include <math.h>

PETSC_EXTERN PetscErrorCode VecCreate_Seq(Vec);

#define SWIFT_VEC_KEY "coal_swift_vec"

struct swift_vec {
  coal_ctx ctx;
  double *d; /* the backend copy (n entries), allocated at first use */
  PetscInt n;
  struct _VecOps parent; /* VECSEQ's operations */
};

static PetscErrorCode vs_free(void *p) {
  PetscFunctionBegin;
  PetscCall(PetscFree(p));
  PetscFunctionReturn(0);
}

/* Our data of v, or NULL when v is not a seqswift vector. */
static struct swift_vec *vs(Vec v) {
  PetscContainer c = NULL;
  void *p = NULL;
  if (!v || PetscObjectQuery((PetscObject)v, SWIFT_VEC_KEY, (PetscObject *)&c) || !c) return NULL;
  if (PetscContainerGetPointer(c, &p)) return NULL;
  return (struct swift_vec *)p;
}

static PetscScalar *host_array(Vec v) { return *(PetscScalar **)v->data; }

static PetscErrorCode vs_alloc(struct swift_vec *s) {
  PetscFunctionBegin;
  if (!s->d && s->n > 0) {
    void *p = NULL;
    SWIFT_CALL(s->ctx, coal_device_alloc(s->ctx, sizeof(double) * (size_t)s->n, &p));
    s->d = (double *)p;
  }
  PetscFunctionReturn(0);
}

/* Host array current (the entries come back from the backend copy when only it is current). */
static PetscErrorCode vs_to_host(Vec v, struct swift_vec *s) {
  PetscFunctionBegin;
  if (v->offloadmask == PETSC_OFFLOAD_GPU) {
    PetscCall(PetscLogEventBegin(coal_swift_ev.copy_out, 0, 0, 0, 0));
    if (s->n > 0)
      SWIFT_CALL(s->ctx,
                 coal_device_download(s->ctx, host_array(v), s->d, sizeof(double) * (size_t)s->n));
    PetscCall(PetscLogEventEnd(coal_swift_ev.copy_out, 0, 0, 0, 0));
    v->offloadmask = PETSC_OFFLOAD_BOTH;
  }
  PetscFunctionReturn(0);
}

/* Backend copy current. */
static PetscErrorCode vs_to_dev(Vec v, struct swift_vec *s) {
  PetscFunctionBegin;
  PetscCall(vs_alloc(s));
  if (v->offloadmask != PETSC_OFFLOAD_GPU && v->offloadmask != PETSC_OFFLOAD_BOTH) {
    PetscCall(PetscLogEventBegin(coal_swift_ev.copy_in, 0, 0, 0, 0));
    if (s->n > 0)
      SWIFT_CALL(s->ctx,
                 coal_device_upload(s->ctx, s->d, host_array(v), sizeof(double) * (size_t)s->n));
    PetscCall(PetscLogEventEnd(coal_swift_ev.copy_in, 0, 0, 0, 0));
    v->offloadmask = PETSC_OFFLOAD_BOTH;
  }
  PetscFunctionReturn(0);
}

coal_ctx swift_vec_ctx(Vec v) {
  struct swift_vec *s = vs(v);
  return s ? s->ctx : NULL;
}

PetscErrorCode swift_vec_dev_read(Vec v, const double **d) {
  struct swift_vec *s = vs(v);
  PetscFunctionBegin;
  PetscCheck(s, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "not a seqswift vector");
  PetscCall(vs_to_dev(v, s));
  *d = s->d;
  PetscFunctionReturn(0);
}

PetscErrorCode swift_vec_dev_write(Vec v, PetscBool keep, double **d) {
  struct swift_vec *s = vs(v);
  PetscFunctionBegin;
  PetscCheck(s, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "not a seqswift vector");
  if (keep)
    PetscCall(vs_to_dev(v, s));
  else
    PetscCall(vs_alloc(s));
  v->offloadmask = PETSC_OFFLOAD_GPU;
  *d = s->d;
  PetscFunctionReturn(0);
}

/* The data of every vector of one operation when all of them are seqswift (then the operation
 * runs on the backend copies), else 0. */
static int all_ours(int nv, const Vec *v, struct swift_vec **s) {
  for (int i = 0; i < nv; i++)
    if (!(s[i] = vs(v[i]))) return 0;
  return 1;
}

/* ---- read-only operands of another type ------------------------------------------------------
 * A VECSEQ that an operation only reads (the Jacobi diagonal that PCJACOBI makes with
 * MatCreateVecs) gets a backend copy of its own, composed on it and refreshed when its object
 * state (which PETSc raises at every change made through its interface) or its array differs
 * from those of the last upload. */
#define SWIFT_MIRROR_KEY "coal_swift_mirror"
struct swift_mirror {
  Vec owner; /* VECSEQ's duplicate copies composed objects: a copy is not its own mirror */
  coal_ctx ctx;
  double *d;
  PetscObjectState state;
  const PetscScalar *array;
  PetscBool valid;
};

static PetscErrorCode mirror_destroy(void *p) {
  struct swift_mirror *r = (struct swift_mirror *)p;
  PetscFunctionBegin;
  if (r->d && swift_ctx_alive(r->ctx)) coal_device_free(r->ctx, r->d);
  PetscCall(PetscFree(r));
  PetscFunctionReturn(0);
}

static int mirrorable(Vec v, PetscInt n) {
  PetscBool seq = PETSC_FALSE;
  if (PetscObjectTypeCompare((PetscObject)v, VECSEQ, &seq) || !seq) return 0;
  return v->map->n == n;
}

/* every vector ours, or a VECSEQ of the same length (read-only positions only) */
static int usable(int nv, const Vec *v, PetscInt n) {
  for (int i = 0; i < nv; i++)
    if (!vs(v[i]) && !mirrorable(v[i], n)) return 0;
  return 1;
}

/* The backend entries of an operand that is read: ours, or the mirror of a VECSEQ. */
static PetscErrorCode vs_read(Vec v, coal_ctx ctx, const double **d) {
  PetscContainer c = NULL;
  struct swift_mirror *r;
  PetscObjectState state;
  const PetscScalar *a;
  PetscFunctionBegin;
  if (vs(v)) {
    PetscCall(swift_vec_dev_read(v, d));
    PetscFunctionReturn(0);
  }
  PetscInt n = v->map->n;
  PetscCall(PetscObjectQuery((PetscObject)v, SWIFT_MIRROR_KEY, (PetscObject *)&c));
  if (c) {
    PetscCall(PetscContainerGetPointer(c, (void **)&r));
    if (r->owner != v) c = NULL; /* inherited from the vector v was duplicated from */
  }
  if (!c) {
    void *buf = NULL;
    if (n > 0) SWIFT_CALL(ctx, coal_device_alloc(ctx, sizeof(double) * (size_t)n, &buf));
    PetscCall(PetscNew(&r));
    r->owner = v, r->ctx = ctx, r->d = (double *)buf;
    PetscCall(PetscContainerCreate(PETSC_COMM_SELF, &c));
    PetscCall(PetscContainerSetPointer(c, r));
    PetscCall(PetscContainerSetUserDestroy(c, mirror_destroy));
    PetscCall(PetscObjectCompose((PetscObject)v, SWIFT_MIRROR_KEY, (PetscObject)c));
    PetscCall(PetscContainerDestroy(&c));
  }
  PetscCall(PetscObjectStateGet((PetscObject)v, &state));
  PetscCall(VecGetArrayRead(v, &a));
  if (!r->valid || r->state != state || r->array != a) {
    PetscCall(PetscLogEventBegin(coal_swift_ev.copy_in, 0, 0, 0, 0));
    PetscErrorCode ierr = 0;
    coal_status st =
        n > 0 ? coal_device_upload(ctx, r->d, a, sizeof(double) * (size_t)n) : COAL_SUCCESS;
    PetscCall(PetscLogEventEnd(coal_swift_ev.copy_in, 0, 0, 0, 0));
    if (st != COAL_SUCCESS) ierr = coal_petsc_error(ctx, st, "upload");
    r->valid = st == COAL_SUCCESS ? PETSC_TRUE : PETSC_FALSE;
    r->state = state, r->array = a;
    PetscCall(VecRestoreArrayRead(v, &a));
    PetscCall(ierr);
  } else {
    PetscCall(VecRestoreArrayRead(v, &a));
  }
  *d = r->d;
  PetscFunctionReturn(0);
}

static PetscErrorCode vs_done(struct swift_vec *s, double flops) {
  PetscFunctionBegin;
  PetscCall(PetscLogFlops(flops));
  PetscCall(swift_log_sync(s->ctx));
  PetscFunctionReturn(0);
}

/* z = a x + b y + c z + d on the backend copies (x, y may be NULL; c == 0: z not read). */
static PetscErrorCode vs_axpbypcz(Vec z, PetscScalar a, Vec x, PetscScalar b, Vec y, PetscScalar c,
                                  PetscScalar d) {
  struct swift_vec *s = vs(z);
  const double *xd = NULL, *yd = NULL;
  double *zd;
  PetscFunctionBegin;
  if (x) PetscCall(vs_read(x, s->ctx, &xd));
  if (y) PetscCall(vs_read(y, s->ctx, &yd));
  PetscCall(swift_vec_dev_write(z, c != 0.0 ? PETSC_TRUE : PETSC_FALSE, &zd));
  if (s->n > 0) SWIFT_CALL(s->ctx, coal_device_axpbypcz(s->ctx, s->n, a, xd, b, yd, c, zd, d));
  /* flops as VECSEQ counts them: a multiply per coefficient other than 1, an add per extra term */
  int terms = (x ? 1 : 0) + (y ? 1 : 0) + (c != 0.0 ? 1 : 0) + (d != 0.0 ? 1 : 0);
  int mults = (x && a != 1.0) + (y && b != 1.0) + (c != 0.0 && c != 1.0);
  PetscCall(vs_done(s, (double)s->n * (mults + (terms > 1 ? terms - 1 : 0))));
  PetscFunctionReturn(0);
}

/* ---- operations on the backend copies (VECSEQ's when a vector is not ours) ------------------ */

static PetscErrorCode VecAXPY_Swift(Vec y, PetscScalar alpha, Vec x) {
  Vec v[2] = {y, x};
  PetscFunctionBegin;
  if (!usable(2, v, vs(v[0])->n)) return vs(y)->parent.axpy(y, alpha, x);
  if (alpha != 0.0) PetscCall(vs_axpbypcz(y, alpha, x, 0.0, NULL, 1.0, 0.0));
  PetscFunctionReturn(0);
}

static PetscErrorCode VecAYPX_Swift(Vec y, PetscScalar alpha, Vec x) {
  Vec v[2] = {y, x};
  PetscFunctionBegin;
  if (!usable(2, v, vs(v[0])->n)) return vs(y)->parent.aypx(y, alpha, x);
  PetscCall(vs_axpbypcz(y, 1.0, x, 0.0, NULL, alpha, 0.0));
  PetscFunctionReturn(0);
}

static PetscErrorCode VecAXPBY_Swift(Vec y, PetscScalar alpha, PetscScalar beta, Vec x) {
  Vec v[2] = {y, x};
  PetscFunctionBegin;
  if (!usable(2, v, vs(v[0])->n)) return vs(y)->parent.axpby(y, alpha, beta, x);
  PetscCall(vs_axpbypcz(y, alpha, alpha != 0.0 ? x : NULL, 0.0, NULL, beta, 0.0));
  PetscFunctionReturn(0);
}

static PetscErrorCode VecWAXPY_Swift(Vec w, PetscScalar alpha, Vec x, Vec y) {
  Vec v[3] = {w, x, y};
  PetscFunctionBegin;
  if (!usable(3, v, vs(w)->n)) return vs(w)->parent.waxpy(w, alpha, x, y);
  PetscCall(vs_axpbypcz(w, alpha, alpha != 0.0 ? x : NULL, 1.0, y, 0.0, 0.0));
  PetscFunctionReturn(0);
}

static PetscErrorCode VecAXPBYPCZ_Swift(Vec z, PetscScalar alpha, PetscScalar beta,
                                        PetscScalar gamma, Vec x, Vec y) {
  Vec v[3] = {z, x, y};
  PetscFunctionBegin;
  if (!usable(3, v, vs(z)->n)) return vs(z)->parent.axpbypcz(z, alpha, beta, gamma, x, y);
  PetscCall(
      vs_axpbypcz(z, alpha, alpha != 0.0 ? x : NULL, beta, beta != 0.0 ? y : NULL, gamma, 0.0));
  PetscFunctionReturn(0);
}

static PetscErrorCode VecMAXPY_Swift(Vec y, PetscInt nv, const PetscScalar *alpha, Vec *x) {
  struct swift_vec *sy = vs(y);
  PetscFunctionBegin;
  if (!usable((int)nv, x, sy->n)) return sy->parent.maxpy(y, nv, alpha, x);
  /* two vectors per pass: y = a_j x_j + a_j+1 x_j+1 + y */
  for (PetscInt j = 0; j < nv; j += 2) {
    Vec x2 = j + 1 < nv ? x[j + 1] : NULL;
    PetscScalar a2 = j + 1 < nv ? alpha[j + 1] : 0.0;
    if (alpha[j] == 0.0 && a2 == 0.0) continue;
    PetscCall(vs_axpbypcz(y, alpha[j], alpha[j] != 0.0 ? x[j] : NULL, a2, a2 != 0.0 ? x2 : NULL,
                          1.0, 0.0));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode VecScale_Swift(Vec x, PetscScalar alpha) {
  PetscFunctionBegin;
  if (alpha != 1.0) PetscCall(vs_axpbypcz(x, 0.0, NULL, 0.0, NULL, alpha, 0.0));
  PetscFunctionReturn(0);
}

static PetscErrorCode VecSet_Swift(Vec x, PetscScalar alpha) {
  PetscFunctionBegin;
  PetscCall(vs_axpbypcz(x, 0.0, NULL, 0.0, NULL, 0.0, alpha));
  PetscFunctionReturn(0);
}

static PetscErrorCode VecShift_Swift(Vec x, PetscScalar alpha) {
  PetscFunctionBegin;
  if (alpha != 0.0) PetscCall(vs_axpbypcz(x, 0.0, NULL, 0.0, NULL, 1.0, alpha));
  PetscFunctionReturn(0);
}

static PetscErrorCode VecCopy_Swift(Vec x, Vec y) {
  Vec v[2] = {x, y};
  struct swift_vec *s[2];
  PetscFunctionBegin;
  if (x == y) PetscFunctionReturn(0);
  if (!all_ours(2, v, s)) return vs(x)->parent.copy(x, y);
  if (x->offloadmask == PETSC_OFFLOAD_CPU) { /* copy where the entries are: no upload */
    PetscCall(PetscArraycpy(host_array(y), host_array(x), s[0]->n));
    y->offloadmask = PETSC_OFFLOAD_CPU;
    PetscFunctionReturn(0);
  }
  PetscCall(vs_axpbypcz(y, 1.0, x, 0.0, NULL, 0.0, 0.0));
  PetscFunctionReturn(0);
}

static PetscErrorCode VecSwap_Swift(Vec x, Vec y) {
  Vec v[2] = {x, y};
  struct swift_vec *s[2];
  PetscFunctionBegin;
  if (x == y) PetscFunctionReturn(0);
  if (!all_ours(2, v, s)) return vs(x)->parent.swap(x, y);
  PetscCall(vs_to_dev(x, s[0]));
  PetscCall(vs_to_dev(y, s[1]));
  double *t = s[0]->d;
  s[0]->d = s[1]->d, s[1]->d = t;
  x->offloadmask = y->offloadmask = PETSC_OFFLOAD_GPU;
  PetscFunctionReturn(0);
}

static PetscErrorCode vs_pointwise(Vec w, Vec x, Vec y, coal_pointwise_op op) {
  struct swift_vec *s = vs(w);
  const double *xd, *yd;
  double *wd;
  PetscFunctionBegin;
  PetscCall(vs_read(x, s->ctx, &xd));
  PetscCall(vs_read(y, s->ctx, &yd));
  PetscCall(swift_vec_dev_write(w, PETSC_FALSE, &wd));
  if (s->n > 0) SWIFT_CALL(s->ctx, coal_device_pointwise(s->ctx, s->n, op, xd, yd, wd));
  PetscCall(vs_done(s, (double)s->n));
  PetscFunctionReturn(0);
}

static PetscErrorCode VecPointwiseMult_Swift(Vec w, Vec x, Vec y) {
  Vec v[3] = {w, x, y};
  PetscFunctionBegin;
  if (!usable(3, v, vs(w)->n)) return vs(w)->parent.pointwisemult(w, x, y);
  PetscCall(vs_pointwise(w, x, y, COAL_POINTWISE_MULT));
  PetscFunctionReturn(0);
}

static PetscErrorCode VecPointwiseDivide_Swift(Vec w, Vec x, Vec y) {
  Vec v[3] = {w, x, y};
  PetscFunctionBegin;
  if (!usable(3, v, vs(w)->n)) return vs(w)->parent.pointwisedivide(w, x, y);
  PetscCall(vs_pointwise(w, x, y, COAL_POINTWISE_DIV));
  PetscFunctionReturn(0);
}

/* val[j] = x . y[j] on the backend copies (every vector ours). */
#define SWIFT_DOTS_MAX 64
static PetscErrorCode vs_dots(Vec x, PetscInt nv, const Vec *y, PetscScalar *val) {
  struct swift_vec *s = vs(x);
  const double *xd, *yd[SWIFT_DOTS_MAX];
  PetscFunctionBegin;
  PetscCall(vs_read(x, s->ctx, &xd));
  for (PetscInt j0 = 0; j0 < nv; j0 += SWIFT_DOTS_MAX) {
    PetscInt k = nv - j0 < SWIFT_DOTS_MAX ? nv - j0 : SWIFT_DOTS_MAX;
    for (PetscInt j = 0; j < k; j++) PetscCall(vs_read(y[j0 + j], s->ctx, &yd[j]));
    SWIFT_CALL(s->ctx, coal_device_dots(s->ctx, s->n, k, xd, yd, val + j0));
  }
  PetscCall(PetscLogFlops(2.0 * (double)s->n * (double)nv));
  PetscFunctionReturn(0);
}

static PetscErrorCode VecDot_Swift(Vec x, Vec y, PetscScalar *val) {
  Vec v[2] = {x, y};
  PetscFunctionBegin;
  if (!usable(2, v, vs(v[0])->n)) return vs(x)->parent.dot(x, y, val);
  PetscCall(vs_dots(x, 1, &y, val));
  PetscFunctionReturn(0);
}

static PetscErrorCode VecTDot_Swift(Vec x, Vec y, PetscScalar *val) {
  Vec v[2] = {x, y};
  PetscFunctionBegin;
  if (!usable(2, v, vs(v[0])->n)) return vs(x)->parent.tdot(x, y, val);
  PetscCall(vs_dots(x, 1, &y, val));
  PetscFunctionReturn(0);
}

static PetscErrorCode VecMDot_Swift(Vec x, PetscInt nv, const Vec *y, PetscScalar *val) {
  PetscFunctionBegin;
  if (!usable((int)nv, y, vs(x)->n)) return vs(x)->parent.mdot(x, nv, y, val);
  PetscCall(vs_dots(x, nv, y, val));
  PetscFunctionReturn(0);
}

static PetscErrorCode VecMTDot_Swift(Vec x, PetscInt nv, const Vec *y, PetscScalar *val) {
  PetscFunctionBegin;
  if (!usable((int)nv, y, vs(x)->n)) return vs(x)->parent.mtdot(x, nv, y, val);
  PetscCall(vs_dots(x, nv, y, val));
  PetscFunctionReturn(0);
}

/* dp = s . t, nm = t . t */
static PetscErrorCode VecDotNorm2_Swift(Vec s, Vec t, PetscScalar *dp, PetscScalar *nm) {
  Vec v[2] = {s, t};
  PetscScalar val[2];
  PetscFunctionBegin;
  if (!usable(2, v, vs(s)->n)) return vs(s)->parent.dotnorm2(s, t, dp, nm);
  PetscCall(vs_dots(t, 2, v, val));
  *dp = val[0], *nm = val[1];
  PetscFunctionReturn(0);
}

/* The 2-norm from a sum of squares that neither overflows nor underflows: a second pass scaled
 * by 1/max|x| when the first sum is out of range. */
static PetscErrorCode VecNorm_Swift(Vec x, NormType type, PetscReal *val) {
  struct swift_vec *s = vs(x);
  const double *xd;
  double r[3];
  PetscFunctionBegin;
  PetscCall(swift_vec_dev_read(x, &xd));
  SWIFT_CALL(s->ctx, coal_device_norms(s->ctx, s->n, xd, 1.0, r));
  double nrm2 = sqrt(r[1]);
  if (r[2] > 0.0 && r[2] <= DBL_MAX && !(r[1] >= DBL_MIN / DBL_EPSILON && r[1] <= DBL_MAX)) {
    double q[3];
    SWIFT_CALL(s->ctx, coal_device_norms(s->ctx, s->n, xd, 1.0 / r[2], q));
    nrm2 = r[2] * sqrt(q[1]);
  }
  switch (type) {
  case NORM_1: val[0] = r[0]; break;
  case NORM_2:
  case NORM_FROBENIUS: val[0] = nrm2; break;
  case NORM_INFINITY: val[0] = r[2]; break;
  case NORM_1_AND_2: val[0] = r[0], val[1] = nrm2; break;
  default: SETERRQ(PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "unknown norm type %d", (int)type);
  }
  PetscCall(PetscLogFlops(2.0 * (double)s->n));
  PetscFunctionReturn(0);
}

/* ---- host access ----------------------------------------------------------------------------- */

static PetscErrorCode VecGetArray_Swift(Vec v, PetscScalar **a) {
  PetscFunctionBegin;
  PetscCall(vs_to_host(v, vs(v)));
  *a = host_array(v);
  PetscFunctionReturn(0);
}

/* the host array may have been changed: it is now the only current copy */
static PetscErrorCode VecRestoreArray_Swift(Vec v, PetscScalar **a) {
  PetscFunctionBegin;
  (void)a;
  v->offloadmask = PETSC_OFFLOAD_CPU;
  PetscFunctionReturn(0);
}

static PetscErrorCode VecGetArrayRead_Swift(Vec v, const PetscScalar **a) {
  PetscFunctionBegin;
  PetscCall(vs_to_host(v, vs(v)));
  *a = host_array(v);
  PetscFunctionReturn(0);
}

static PetscErrorCode VecRestoreArrayRead_Swift(Vec v, const PetscScalar **a) {
  PetscFunctionBegin;
  (void)v, (void)a;
  PetscFunctionReturn(0);
}

/* The entries are brought back although the caller is to overwrite them: some callers read
 * them anyway (hypre takes the array PCApply_HYPRE has just zeroed as its initial guess). */
static PetscErrorCode VecGetArrayWrite_Swift(Vec v, PetscScalar **a) {
  PetscFunctionBegin;
  PetscCall(vs_to_host(v, vs(v)));
  v->offloadmask = PETSC_OFFLOAD_CPU;
  *a = host_array(v);
  PetscFunctionReturn(0);
}

/* PETSc reaches the array through these when it asks for a memory type (hypre, VecScatter);
 * ours is host memory for them */
static PetscErrorCode VecGetArrayAndMemType_Swift(Vec v, PetscScalar **a, PetscMemType *mt) {
  PetscFunctionBegin;
  PetscCall(VecGetArray_Swift(v, a));
  if (mt) *mt = PETSC_MEMTYPE_HOST;
  PetscFunctionReturn(0);
}

static PetscErrorCode VecRestoreArrayAndMemType_Swift(Vec v, PetscScalar **a) {
  PetscFunctionBegin;
  PetscCall(VecRestoreArray_Swift(v, a));
  PetscFunctionReturn(0);
}

static PetscErrorCode VecGetArrayWriteAndMemType_Swift(Vec v, PetscScalar **a, PetscMemType *mt) {
  PetscFunctionBegin;
  PetscCall(VecGetArrayWrite_Swift(v, a));
  if (mt) *mt = PETSC_MEMTYPE_HOST;
  PetscFunctionReturn(0);
}

static PetscErrorCode VecRestoreArrayWriteAndMemType_Swift(Vec v, PetscScalar **a,
                                                           PetscMemType *mt) {
  PetscFunctionBegin;
  (void)mt;
  PetscCall(VecRestoreArray_Swift(v, a));
  PetscFunctionReturn(0);
}

static PetscErrorCode VecPlaceArray_Swift(Vec v, const PetscScalar *a) {
  struct swift_vec *s = vs(v);
  PetscFunctionBegin;
  PetscCall(vs_to_host(v, s)); /* the stashed array must hold the current entries */
  PetscCall(s->parent.placearray(v, a));
  v->offloadmask = PETSC_OFFLOAD_CPU;
  PetscFunctionReturn(0);
}

static PetscErrorCode VecResetArray_Swift(Vec v) {
  struct swift_vec *s = vs(v);
  PetscFunctionBegin;
  PetscCall(vs_to_host(v, s)); /* the placed array receives the current entries */
  PetscCall(s->parent.resetarray(v));
  v->offloadmask = PETSC_OFFLOAD_CPU;
  PetscFunctionReturn(0);
}

static PetscErrorCode VecReplaceArray_Swift(Vec v, const PetscScalar *a) {
  PetscFunctionBegin;
  PetscCall(vs(v)->parent.replacearray(v, a));
  v->offloadmask = PETSC_OFFLOAD_CPU;
  PetscFunctionReturn(0);
}

/* ---- life cycle ------------------------------------------------------------------------------ */

static PetscErrorCode VecDestroy_Swift(Vec v) {
  struct swift_vec *s = vs(v);
  PetscErrorCode (*destroy)(Vec) = s->parent.destroy;
  PetscFunctionBegin;
  if (s->d && swift_ctx_alive(s->ctx)) coal_device_free(s->ctx, s->d);
  s->d = NULL;
  PetscCall((*destroy)(v));
  PetscFunctionReturn(0);
}

/* As VECSEQ's duplicate (same layout, type, composed objects and functions), except that our
 * data and a page-locking record are not shared with the new vector. */
static PetscErrorCode VecDuplicate_Swift(Vec v, Vec *w) {
  PetscFunctionBegin;
  PetscCall(VecCreate(PetscObjectComm((PetscObject)v), w));
  PetscCall(PetscLayoutReference(v->map, &(*w)->map));
  PetscCall(PetscObjectListDuplicate(((PetscObject)v)->olist, &((PetscObject)*w)->olist));
  PetscCall(PetscFunctionListDuplicate(((PetscObject)v)->qlist, &((PetscObject)*w)->qlist));
  PetscCall(PetscObjectCompose((PetscObject)*w, SWIFT_VEC_KEY, NULL));
  PetscCall(PetscObjectCompose((PetscObject)*w, "coal_swift_pin", NULL));
  PetscCall(VecSetType(*w, VECSEQSWIFT));
  (*w)->stash.ignorenegidx = v->stash.ignorenegidx;
  PetscFunctionReturn(0);
}

PetscErrorCode VecCreate_SeqSwift(Vec v) {
  coal_ctx ctx;
  struct swift_vec *s;
  PetscContainer c;
  PetscFunctionBegin;
  PetscCall(coal_petsc_context(&ctx));
  PetscCall(VecCreate_Seq(v));
  PetscCall(PetscNew(&s));
  s->ctx = ctx;
  s->n = v->map->n;
  s->parent = *v->ops;
  PetscCall(PetscContainerCreate(PETSC_COMM_SELF, &c));
  PetscCall(PetscContainerSetPointer(c, s));
  PetscCall(PetscContainerSetUserDestroy(c, vs_free));
  PetscCall(PetscObjectCompose((PetscObject)v, SWIFT_VEC_KEY, (PetscObject)c));
  PetscCall(PetscContainerDestroy(&c));
  VecOps o = v->ops;
  o->axpy = VecAXPY_Swift;
  o->aypx = VecAYPX_Swift;
  o->axpby = VecAXPBY_Swift;
  o->waxpy = VecWAXPY_Swift;
  o->axpbypcz = VecAXPBYPCZ_Swift;
  o->maxpy = VecMAXPY_Swift;
  o->scale = VecScale_Swift;
  o->set = VecSet_Swift;
  o->shift = VecShift_Swift;
  o->copy = VecCopy_Swift;
  o->swap = VecSwap_Swift;
  o->pointwisemult = VecPointwiseMult_Swift;
  o->pointwisedivide = VecPointwiseDivide_Swift;
  o->dot = o->dot_local = VecDot_Swift;
  o->tdot = o->tdot_local = VecTDot_Swift;
  o->mdot = o->mdot_local = VecMDot_Swift;
  o->mtdot = o->mtdot_local = VecMTDot_Swift;
  o->dotnorm2 = VecDotNorm2_Swift;
  o->norm = o->norm_local = VecNorm_Swift;
  o->getarray = VecGetArray_Swift;
  o->restorearray = VecRestoreArray_Swift;
  o->getarrayread = VecGetArrayRead_Swift;
  o->restorearrayread = VecRestoreArrayRead_Swift;
  o->getarraywrite = VecGetArrayWrite_Swift;
  o->restorearraywrite = VecRestoreArray_Swift;
  o->getarrayandmemtype = VecGetArrayAndMemType_Swift;
  o->restorearrayandmemtype = VecRestoreArrayAndMemType_Swift;
  o->getarraywriteandmemtype = VecGetArrayWriteAndMemType_Swift;
  o->restorearraywriteandmemtype = VecRestoreArrayWriteAndMemType_Swift;
  o->placearray = VecPlaceArray_Swift;
  o->resetarray = VecResetArray_Swift;
  o->replacearray = VecReplaceArray_Swift;
  o->duplicate = VecDuplicate_Swift;
  o->destroy = VecDestroy_Swift;
  v->offloadmask = PETSC_OFFLOAD_CPU;
  PetscCall(PetscObjectChangeTypeName((PetscObject)v, VECSEQSWIFT));
  PetscFunctionReturn(0);
}

/* -vec_type swift: seqswift on one rank; on several, a clear error (the products still run on
 * coalesce with -mat_type swift and PETSc's own vectors). */
PetscErrorCode VecCreate_Swift(Vec v) {
  PetscMPIInt size;
  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)v), &size));
  PetscCheck(size == 1, PetscObjectComm((PetscObject)v), PETSC_ERR_SUP,
             "vector type swift runs on one MPI rank (this communicator has %d): leave out "
             "-vec_type swift; -mat_type swift still runs the products on coalesce",
             (int)size);
  PetscCall(VecSetType(v, VECSEQSWIFT));
  PetscFunctionReturn(0);
}
