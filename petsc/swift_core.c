/* The plugin's shared pieces: the process context, errors, log events, registration, and the
 * products on PETSc's host arrays (device workspaces, copies, page-locking). */
#include "swift_impl.h"

#include <string.h>

swift_events coal_swift_ev;
static coal_ctx swift_ctx_g; /* the plugin's one context: PETSc plugins have no other owner */
static PetscBool registered_g;

PetscErrorCode coal_petsc_error(coal_ctx ctx, coal_status st, const char *what) {
  PetscErrorCode code = st == COAL_ERR_MEMORY || st == COAL_ERR_DEVICE_MEMORY ? PETSC_ERR_MEM
                        : st == COAL_ERR_ARG                                  ? PETSC_ERR_ARG_WRONG
                                                                              : PETSC_ERR_LIB;
  SETERRQ(PETSC_COMM_SELF, code, "coalesce: %s (%s) in %s", coal_status_string(st),
          ctx ? coal_ctx_last_error(ctx) : "", what);
}

static PetscErrorCode swift_finalize(void) {
  PetscFunctionBegin;
  if (swift_ctx_g) (void)coal_ctx_destroy(&swift_ctx_g);
  registered_g = PETSC_FALSE;
  PetscFunctionReturn(0);
}

PetscErrorCode coal_petsc_context(coal_ctx *ctx) {
  PetscFunctionBegin;
  if (!swift_ctx_g) {
    char name[16] = "auto";
    coal_backend b = COAL_BACKEND_AUTO;
    PetscCall(PetscOptionsGetString(NULL, NULL, "-mat_swift_backend", name, sizeof name, NULL));
    PetscCheck(coal_backend_parse(name, &b) == COAL_SUCCESS, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG,
               "-mat_swift_backend %s: expected host, cuda or auto", name);
    coal_status st = coal_ctx_create(b, &swift_ctx_g);
    PetscCheck(st == COAL_SUCCESS, PETSC_COMM_SELF, PETSC_ERR_LIB,
               "coalesce: cannot create the %s context: %s", name, coal_status_string(st));
    PetscCall(PetscInfo(NULL, "coalesce context: backend %s on %s\n",
                        coal_backend_name(coal_ctx_backend(swift_ctx_g)),
                        coal_ctx_device_name(swift_ctx_g)));
  }
  *ctx = swift_ctx_g;
  PetscFunctionReturn(0);
}

PetscBool swift_ctx_alive(coal_ctx ctx) {
  return ctx && ctx == swift_ctx_g ? PETSC_TRUE : PETSC_FALSE;
}

PetscErrorCode coal_petsc_register(void) {
  PetscFunctionBegin;
  if (registered_g) PetscFunctionReturn(0);
  registered_g = PETSC_TRUE;
  PetscCall(MatRegister(MATSEQAIJSWIFT, MatCreate_SeqAIJSwift));
  PetscCall(MatRegister(MATMPIAIJSWIFT, MatCreate_MPIAIJSwift));
  /* the root name: a type literally named "swift" would fail PETSc's prefix tests (aij) */
  PetscCall(MatRegisterRootName(MATSWIFT, MATSEQAIJSWIFT, MATMPIAIJSWIFT));
  PetscCall(VecRegister(VECSEQSWIFT, VecCreate_SeqSwift));
  PetscCall(VecRegister(VECSWIFT, VecCreate_Swift));
  PetscCall(PCRegister(PCSWIFTAMG, PCCreate_SwiftAMG));
  PetscCall(PetscLogEventRegister("SwiftCopyIn", MAT_CLASSID, &coal_swift_ev.copy_in));
  PetscCall(PetscLogEventRegister("SwiftCopyOut", MAT_CLASSID, &coal_swift_ev.copy_out));
  PetscCall(PetscLogEventRegister("SwiftSpMV", MAT_CLASSID, &coal_swift_ev.spmv));
  PetscCall(PetscLogEventRegister("SwiftSpMM", MAT_CLASSID, &coal_swift_ev.spmm));
  PetscCall(PetscLogEventRegister("SwiftSpGEMM", MAT_CLASSID, &coal_swift_ev.spgemm));
  PetscCall(PetscLogEventRegister("SwiftBuild", MAT_CLASSID, &coal_swift_ev.build));
  PetscCall(PetscLogEventRegister("SwiftAMGSetup", PC_CLASSID, &coal_swift_ev.amg_setup));
  PetscCall(PetscLogEventRegister("SwiftAMGApply", PC_CLASSID, &coal_swift_ev.amg_apply));
  PetscCall(PetscRegisterFinalize(swift_finalize));
  PetscFunctionReturn(0);
}

/* Called by PetscInitialize for -dll_append .../libcoalesce.so (the name is the file name
 * without "lib" and ".so"). */
PetscErrorCode PetscDLLibraryRegister_coalesce(void) {
  PetscFunctionBegin;
  PetscCall(coal_petsc_register());
  PetscFunctionReturn(0);
}

/* With -log_view the GPU work is waited for inside its event, so that the event times the
 * kernel and not its launch; without logging the copy-out that follows is the only wait. */
PetscErrorCode swift_log_sync(coal_ctx ctx) {
  PetscBool active = PETSC_FALSE;
  PetscFunctionBegin;
  PetscCall(PetscLogIsActive(&active));
  if (active) SWIFT_CALL(ctx, coal_ctx_sync(ctx));
  PetscFunctionReturn(0);
}

PetscErrorCode swift_convert_target(Mat A, MatReuse reuse, Mat *newmat) {
  PetscFunctionBegin;
  if (reuse == MAT_INITIAL_MATRIX)
    PetscCall(MatDuplicate(A, MAT_COPY_VALUES, newmat));
  else if (reuse == MAT_REUSE_MATRIX)
    PetscCall(MatCopy(A, *newmat, SAME_NONZERO_PATTERN));
  PetscFunctionReturn(0);
}

PetscErrorCode swift_republish(Mat B, const char *from, const char *to, PetscBool on) {
  PetscVoidFunction f = NULL;
  PetscFunctionBegin;
  if (on) PetscCall(PetscObjectQueryFunction((PetscObject)B, from, &f));
  PetscCall(PetscObjectComposeFunction((PetscObject)B, to, on ? f : NULL));
  PetscFunctionReturn(0);
}

PetscErrorCode swift_ws_reserve(coal_ctx ctx, swift_ws *w, size_t xbytes, size_t ybytes) {
  PetscFunctionBegin;
  if (coal_ctx_backend(ctx) != COAL_BACKEND_CUDA) PetscFunctionReturn(0);
  if (xbytes > w->xcap) {
    if (w->x) coal_device_free(ctx, w->x);
    w->x = NULL, w->xcap = 0;
    SWIFT_CALL(ctx, coal_device_alloc(ctx, xbytes, &w->x));
    w->xcap = xbytes;
  }
  if (ybytes > w->ycap) {
    if (w->y) coal_device_free(ctx, w->y);
    w->y = NULL, w->ycap = 0;
    SWIFT_CALL(ctx, coal_device_alloc(ctx, ybytes, &w->y));
    w->ycap = ybytes;
  }
  PetscFunctionReturn(0);
}

void swift_ws_free(coal_ctx ctx, swift_ws *w) {
  if (ctx && coal_ctx_backend(ctx) == COAL_BACKEND_CUDA) {
    if (w->x) coal_device_free(ctx, w->x);
    if (w->y) coal_device_free(ctx, w->y);
  }
  memset(w, 0, sizeof *w);
}

/* ---- page-locked vector arrays -------------------------------------------------------------
 * PETSc's vectors here are host arrays, so every product copies x in and y out. From pageable
 * memory the driver stages through its own pinned buffers; registering the array once lets the
 * copy run at the bus speed. The registration is tied to the Vec through a composed container
 * whose destructor unregisters when the Vec is destroyed; a different array later (VecPlaceArray)
 * is not registered and is copied the slow way. */
typedef struct {
  void *ptr;
  size_t bytes;
  PetscBool ok;
} swift_pin_rec;

static PetscErrorCode pin_destroy(void *p) {
  swift_pin_rec *r = (swift_pin_rec *)p;
  PetscFunctionBegin;
  if (r->ok) coal_host_unregister(r->ptr);
  PetscCall(PetscFree(r));
  PetscFunctionReturn(0);
}

#define SWIFT_PIN_MIN_BYTES ((size_t)1 << 20)

PetscErrorCode swift_pin(coal_ctx ctx, Vec v, const void *array, size_t bytes, PetscBool *pinned) {
  static int enabled = -1;
  PetscFunctionBegin;
  *pinned = PETSC_FALSE;
  if (!v || coal_ctx_backend(ctx) != COAL_BACKEND_CUDA || bytes < SWIFT_PIN_MIN_BYTES)
    PetscFunctionReturn(0);
  if (enabled < 0) {
    PetscBool on = PETSC_TRUE;
    PetscCall(PetscOptionsGetBool(NULL, NULL, "-mat_swift_pin", &on, NULL));
    enabled = on ? 1 : 0;
  }
  if (!enabled) PetscFunctionReturn(0);
  PetscContainer c = NULL;
  PetscCall(PetscObjectQuery((PetscObject)v, "coal_swift_pin", (PetscObject *)&c));
  if (c) {
    swift_pin_rec *r;
    PetscCall(PetscContainerGetPointer(c, (void **)&r));
    *pinned = r->ok && r->ptr == array && r->bytes >= bytes ? PETSC_TRUE : PETSC_FALSE;
    PetscFunctionReturn(0);
  }
  swift_pin_rec *r;
  PetscCall(PetscNew(&r));
  r->ptr = (void *)array, r->bytes = bytes;
  r->ok = coal_host_register(ctx, r->ptr, bytes) == COAL_SUCCESS ? PETSC_TRUE : PETSC_FALSE;
  if (!r->ok)
    PetscCall(PetscInfo(v, "coalesce: array not page-locked: %s\n", coal_ctx_last_error(ctx)));
  PetscCall(PetscContainerCreate(PETSC_COMM_SELF, &c));
  PetscCall(PetscContainerSetPointer(c, r));
  PetscCall(PetscContainerSetUserDestroy(c, pin_destroy));
  PetscCall(PetscObjectCompose((PetscObject)v, "coal_swift_pin", (PetscObject)c));
  PetscCall(PetscContainerDestroy(&c));
  *pinned = r->ok;
  PetscFunctionReturn(0);
}

PetscErrorCode swift_apply(coal_mat A, swift_ws *w, const PetscScalar *x, const PetscScalar *y0,
                           PetscScalar *y, Vec vx, Vec vy) {
  coal_ctx ctx = coal_mat_ctx(A);
  int64_t m, n, nnz;
  PetscFunctionBegin;
  SWIFT_CALL(ctx, coal_mat_size(A, &m, &n, &nnz));
  size_t xb = sizeof(PetscScalar) * (size_t)n, yb = sizeof(PetscScalar) * (size_t)m;
  double beta = y0 ? 1.0 : 0.0;
  if (coal_ctx_backend(ctx) != COAL_BACKEND_CUDA) {
    /* AIJ's order: y = A x sums each row from 0 in column order (csr-vector, the host's
     * kernel); y = y0 + A x (alpha = beta = 1) starts each row's sum from y0_i, as
     * MatMultAdd_SeqAIJ does and MatMult_MPIAIJ uses to add the off-diagonal block */
    if (y0 && y0 != y) PetscCall(PetscArraycpy(y, y0, m));
    PetscCall(PetscLogEventBegin(coal_swift_ev.spmv, 0, 0, 0, 0));
    SWIFT_CALL(ctx, coal_spmv_raw(A, COAL_SPMV_AUTO, 1.0, x, beta, y));
    PetscCall(PetscLogEventEnd(coal_swift_ev.spmv, 0, 0, 0, 0));
    PetscCall(PetscLogFlops(2.0 * (double)nnz));
    PetscFunctionReturn(0);
  }
  /* Debian's PETSc has no device support, so its GPU counters do not exist: the copies are
   * timed by the SwiftCopyIn / SwiftCopyOut events and the flops logged as CPU flops. */
  PetscBool pinned;
  PetscCall(swift_ws_reserve(ctx, w, xb, yb));
  PetscCall(swift_pin(ctx, vx, x, xb, &pinned));
  PetscCall(swift_pin(ctx, vy, y, yb, &pinned));
  PetscCall(PetscLogEventBegin(coal_swift_ev.copy_in, 0, 0, 0, 0));
  SWIFT_CALL(ctx, coal_device_upload(ctx, w->x, x, xb));
  if (y0) SWIFT_CALL(ctx, coal_device_upload(ctx, w->y, y0, yb));
  PetscCall(PetscLogEventEnd(coal_swift_ev.copy_in, 0, 0, 0, 0));
  PetscCall(PetscLogEventBegin(coal_swift_ev.spmv, 0, 0, 0, 0));
  SWIFT_CALL(ctx, coal_spmv_raw(A, COAL_SPMV_AUTO, 1.0, w->x, beta, w->y));
  PetscCall(swift_log_sync(ctx));
  PetscCall(PetscLogEventEnd(coal_swift_ev.spmv, 0, 0, 0, 0));
  PetscCall(PetscLogFlops(2.0 * (double)nnz));
  PetscCall(PetscLogEventBegin(coal_swift_ev.copy_out, 0, 0, 0, 0));
  SWIFT_CALL(ctx, coal_device_download(ctx, y, w->y, yb));
  PetscCall(PetscLogEventEnd(coal_swift_ev.copy_out, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

PetscErrorCode swift_block_run(coal_ctx ctx, swift_ws *w, int64_t nx, int64_t ny, PetscInt k,
                               const PetscScalar *X, PetscInt ldx, PetscScalar *Y, PetscInt ldy,
                               PetscBool dev, swift_block_op op, void *user, PetscLogEvent ev,
                               const char *what) {
  coal_bvec bx = NULL, by = NULL;
  coal_status st;
  PetscFunctionBegin;
  if (k == 0) PetscFunctionReturn(0);
  PetscBool copy = !dev && coal_ctx_backend(ctx) == COAL_BACKEND_CUDA ? PETSC_TRUE : PETSC_FALSE;
  size_t xb = sizeof(PetscScalar) * (size_t)nx * (size_t)k;
  size_t yb = sizeof(PetscScalar) * (size_t)ny * (size_t)k;
  if (copy) {
    /* device copies are tight column-major blocks */
    PetscCall(swift_ws_reserve(ctx, w, xb, yb));
    PetscCall(PetscLogEventBegin(coal_swift_ev.copy_in, 0, 0, 0, 0));
    if (ldx == nx) {
      SWIFT_CALL(ctx, coal_device_upload(ctx, w->x, X, xb));
    } else {
      for (PetscInt j = 0; j < k; j++)
        SWIFT_CALL(ctx, coal_device_upload(ctx, (PetscScalar *)w->x + (size_t)j * (size_t)nx,
                                           X + (size_t)j * (size_t)ldx,
                                           sizeof(PetscScalar) * (size_t)nx));
    }
    PetscCall(PetscLogEventEnd(coal_swift_ev.copy_in, 0, 0, 0, 0));
  }
  st = coal_bvec_view(ctx, nx, k, COAL_F64, COAL_COL_MAJOR, copy ? nx : ldx,
                      copy ? w->x : (void *)X, &bx);
  if (st == COAL_SUCCESS)
    st =
        coal_bvec_view(ctx, ny, k, COAL_F64, COAL_COL_MAJOR, copy ? ny : ldy, copy ? w->y : Y, &by);
  /* the views are freed before any error returns */
  PetscErrorCode ierr = 0;
  if (st == COAL_SUCCESS) {
    PetscCall(PetscLogEventBegin(ev, 0, 0, 0, 0));
    st = op(user, bx, by);
    if (st == COAL_SUCCESS) ierr = swift_log_sync(ctx);
    PetscCall(PetscLogEventEnd(ev, 0, 0, 0, 0));
  }
  (void)coal_bvec_destroy(&bx);
  (void)coal_bvec_destroy(&by);
  if (st != COAL_SUCCESS) return coal_petsc_error(ctx, st, what);
  PetscCall(ierr);
  if (copy) {
    PetscCall(PetscLogEventBegin(coal_swift_ev.copy_out, 0, 0, 0, 0));
    if (ldy == ny) {
      SWIFT_CALL(ctx, coal_device_download(ctx, Y, w->y, yb));
    } else {
      for (PetscInt j = 0; j < k; j++)
        SWIFT_CALL(ctx, coal_device_download(ctx, Y + (size_t)j * (size_t)ldy,
                                             (PetscScalar *)w->y + (size_t)j * (size_t)ny,
                                             sizeof(PetscScalar) * (size_t)ny));
    }
    PetscCall(PetscLogEventEnd(coal_swift_ev.copy_out, 0, 0, 0, 0));
  }
  PetscFunctionReturn(0);
}

static coal_status spmm_op(void *A, coal_bvec X, coal_bvec Y) {
  return coal_spmm((coal_mat)A, COAL_SPMM_AUTO, 1.0, X, 0.0, Y);
}

PetscErrorCode swift_apply_block(coal_mat A, swift_ws *w, PetscInt k, const PetscScalar *X,
                                 PetscInt ldx, PetscScalar *Y, PetscInt ldy) {
  coal_ctx ctx = coal_mat_ctx(A);
  int64_t m, n, nnz;
  PetscFunctionBegin;
  SWIFT_CALL(ctx, coal_mat_size(A, &m, &n, &nnz));
  PetscCall(swift_block_run(ctx, w, n, m, k, X, ldx, Y, ldy, PETSC_FALSE, spmm_op, A,
                            coal_swift_ev.spmm, "coal_spmm"));
  PetscCall(PetscLogFlops(2.0 * (double)nnz * (double)k));
  PetscFunctionReturn(0);
}

/* z = A x (+ y) on the backend copies of seqswift vectors: nothing is copied. */
static PetscErrorCode swift_apply_dev(coal_mat A, Vec x, Vec y, Vec z) {
  coal_ctx ctx = coal_mat_ctx(A);
  int64_t m, n, nnz;
  const double *xd;
  double *zd;
  PetscFunctionBegin;
  SWIFT_CALL(ctx, coal_mat_size(A, &m, &n, &nnz));
  PetscCall(swift_vec_dev_read(x, &xd));
  if (y && y != z) { /* z = y first, then z += A x */
    const double *yd;
    PetscCall(swift_vec_dev_read(y, &yd));
    PetscCall(swift_vec_dev_write(z, PETSC_FALSE, &zd));
    if (m > 0) SWIFT_CALL(ctx, coal_device_copy(ctx, zd, yd, sizeof(double) * (size_t)m));
  } else {
    PetscCall(swift_vec_dev_write(z, y ? PETSC_TRUE : PETSC_FALSE, &zd));
  }
  PetscCall(PetscLogEventBegin(coal_swift_ev.spmv, 0, 0, 0, 0));
  /* AIJ's order on the host backend with y (see swift_apply) */
  SWIFT_CALL(ctx, coal_spmv_raw(A, COAL_SPMV_AUTO, 1.0, xd, y ? 1.0 : 0.0, zd));
  PetscCall(swift_log_sync(ctx));
  PetscCall(PetscLogEventEnd(coal_swift_ev.spmv, 0, 0, 0, 0));
  PetscCall(PetscLogFlops(2.0 * (double)nnz));
  PetscFunctionReturn(0);
}

PetscErrorCode swift_apply_vec(coal_mat M, swift_ws *w, Vec x, Vec y, Vec z) {
  const PetscScalar *xa, *ya = NULL;
  PetscScalar *za;
  PetscFunctionBegin;
  /* the backend copies of seqswift vectors when they live where A does (a MatShell may wrap a
   * matrix of another context than the plugin's) */
  coal_ctx c = coal_mat_ctx(M);
  if (x != z && swift_vec_ctx(x) == c && swift_vec_ctx(z) == c && (!y || swift_vec_ctx(y) == c)) {
    PetscCall(swift_apply_dev(M, x, y, z));
    PetscFunctionReturn(0);
  }
  PetscCall(VecGetArrayRead(x, &xa));
  if (y && y == z) {
    PetscCall(VecGetArray(z, &za));
    ya = za;
  } else {
    if (y) PetscCall(VecGetArrayRead(y, &ya));
    PetscCall(VecGetArrayWrite(z, &za));
  }
  PetscErrorCode ierr = swift_apply(M, w, xa, ya, za, x, z);
  if (y && y == z) {
    PetscCall(VecRestoreArray(z, &za));
  } else {
    if (y) PetscCall(VecRestoreArrayRead(y, &ya));
    PetscCall(VecRestoreArrayWrite(z, &za));
  }
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}
