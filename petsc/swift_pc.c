/* PC type swiftamg: coalesce's smoothed-aggregation AMG (coal_amg) as a PETSc preconditioner,
 * one cycle per PCApply. The operator is the PC's Pmat on one rank: a seqaijswift matrix lends
 * its coalesce copy, any other seqaij matrix is copied once per nonzero pattern (values
 * refreshed in place). Several ranks: as the sub-PC of block Jacobi. A PCSetUp after new values
 * on the same nonzero pattern runs the numeric-only re-setup (coal_amg_resetup: the aggregates
 * and the products' structure of the first setup kept; -pc_swiftamg_reuse false: a full setup
 * every time); a new pattern, matrix or type builds the hierarchy anew. */
#include "swift_impl.h"

#include <petsc/private/pcimpl.h>

typedef struct {
  /* options */
  PetscReal theta;
  PetscInt smoother, degree, coarse_size, max_levels, cycle;
  PetscBool reuse; /* numeric-only re-setup after new values on the same pattern */
  /* the operator */
  Mat pmat;                 /* the Pmat the hierarchy was built for (a reference) */
  PetscObjectState nzstate; /* its nonzero state when own was built */
  coal_mat own;             /* our copy of a seqaij Pmat's CSR (NULL for seqaijswift) */
  coal_mat cm;              /* the matrix the hierarchy is built on (own or the swift copy) */
  coal_amg amg;
  coal_ctx ctx;
  swift_ws ws; /* device copies of host vectors (CUDA backend) */
} PC_SwiftAMG;

static const char *const smoother_names[] = {"chebyshev", "l1-jacobi"};
static const char *const cycle_names[] = {"v", "w"};

static PetscErrorCode PCReset_SwiftAMG(PC pc) {
  PC_SwiftAMG *d = (PC_SwiftAMG *)pc->data;
  PetscFunctionBegin;
  (void)coal_amg_destroy(&d->amg);
  (void)coal_mat_destroy(&d->own);
  swift_ws_free(d->ctx, &d->ws);
  PetscCall(MatDestroy(&d->pmat));
  d->cm = NULL;
  PetscFunctionReturn(0);
}

static PetscErrorCode PCDestroy_SwiftAMG(PC pc) {
  PetscFunctionBegin;
  PetscCall(PCReset_SwiftAMG(pc));
  PetscCall(PetscFree(pc->data));
  PetscFunctionReturn(0);
}

static PetscErrorCode PCSetFromOptions_SwiftAMG(PC pc, PetscOptionItems *PetscOptionsObject) {
  PC_SwiftAMG *d = (PC_SwiftAMG *)pc->data;
  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "coalesce smoothed-aggregation AMG options");
  PetscCall(PetscOptionsReal("-pc_swiftamg_theta", "strength threshold, 0 <= theta < 1", NULL,
                             d->theta, &d->theta, NULL));
  PetscCall(PetscOptionsEList("-pc_swiftamg_smoother", "smoother", NULL, smoother_names, 2,
                              smoother_names[d->smoother], &d->smoother, NULL));
  PetscCall(PetscOptionsInt("-pc_swiftamg_degree", "Chebyshev degree or l1-Jacobi sweeps, 1..16",
                            NULL, d->degree, &d->degree, NULL));
  PetscCall(PetscOptionsInt("-pc_swiftamg_coarse_size", "stop coarsening at this many rows", NULL,
                            d->coarse_size, &d->coarse_size, NULL));
  PetscCall(PetscOptionsInt("-pc_swiftamg_max_levels", "at most this many levels", NULL,
                            d->max_levels, &d->max_levels, NULL));
  PetscCall(PetscOptionsEList("-pc_swiftamg_cycle", "cycle", NULL, cycle_names, 2,
                              cycle_names[d->cycle], &d->cycle, NULL));
  PetscCall(PetscOptionsBool("-pc_swiftamg_reuse",
                             "numeric-only re-setup (aggregates kept) after new values on the "
                             "same nonzero pattern",
                             NULL, d->reuse, &d->reuse, NULL));
  PetscOptionsHeadEnd();
  PetscFunctionReturn(0);
}

/* The coalesce matrix of the Pmat with current values: the swift matrix's own copy, or ours of
 * a seqaij matrix. *fresh: another matrix, type or nonzero pattern, so the hierarchy (and our
 * copy) are made anew; otherwise the same coalesce matrix with refreshed values. */
static PetscErrorCode swiftamg_operator(PC pc, PC_SwiftAMG *d, PetscBool *fresh) {
  Mat A = pc->pmat;
  PetscBool isswift, isaij;
  PetscMPIInt size;
  coal_mat cm;
  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  PetscCheck(size == 1, PetscObjectComm((PetscObject)pc), PETSC_ERR_SUP,
             "PC swiftamg works on one rank's matrix; on %d ranks use -pc_type bjacobi "
             "-sub_pc_type swiftamg",
             (int)size);
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQAIJSWIFT, &isswift));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQAIJ, &isaij));
  PetscCheck(isswift || isaij, PETSC_COMM_SELF, PETSC_ERR_SUP,
             "PC swiftamg needs a seqaij or seqaijswift matrix, not %s",
             ((PetscObject)A)->type_name);
  PetscObjectState nz;
  PetscCall(MatGetNonzeroState(A, &nz));
  if (isswift) PetscCall(swift_seq_sync(A, &cm));
  /* also when A changed type in place: the hierarchy must sit on the matrix used now */
  *fresh = !d->amg || A != d->pmat || nz != d->nzstate || (isswift ? cm != d->cm : !d->own)
               ? PETSC_TRUE
               : PETSC_FALSE;
  if (*fresh) { /* the hierarchy points at its matrix: gone first */
    (void)coal_amg_destroy(&d->amg);
    (void)coal_mat_destroy(&d->own);
  }
  if (!isswift) {
    if (!d->own) {
      coal_ctx ctx;
      PetscCall(coal_petsc_context(&ctx));
      PetscCall(swift_mat_from_aij(A, ctx, &d->own));
    } else {
      PetscCall(swift_mat_refresh(A, d->own));
    }
    cm = d->own;
  }
  if (A != d->pmat) { /* held, so that its address cannot come back as another matrix */
    PetscCall(PetscObjectReference((PetscObject)A));
    PetscCall(MatDestroy(&d->pmat));
    d->pmat = A;
  }
  d->nzstate = nz;
  d->cm = cm, d->ctx = coal_mat_ctx(cm);
  PetscFunctionReturn(0);
}

static PetscErrorCode PCSetUp_SwiftAMG(PC pc) {
  PC_SwiftAMG *d = (PC_SwiftAMG *)pc->data;
  PetscBool fresh;
  PetscFunctionBegin;
  PetscCall(swiftamg_operator(pc, d, &fresh));
  coal_ctx ctx = d->ctx;
  int64_t m, n, nnz;
  SWIFT_CALL(ctx, coal_mat_size(d->cm, &m, &n, &nnz));
  if (fresh) {
    if (m == 0) PetscFunctionReturn(0); /* an empty block of block Jacobi */
    SWIFT_CALL(ctx, coal_amg_create(d->cm, &d->amg));
  }
  /* the library checks the ranges and says what is wrong */
  SWIFT_CALL(ctx, coal_amg_set_theta(d->amg, (double)d->theta));
  SWIFT_CALL(ctx, coal_amg_set_smoother(d->amg, (coal_amg_smoother)d->smoother, (int)d->degree));
  SWIFT_CALL(ctx, coal_amg_set_coarse_size(d->amg, (int64_t)d->coarse_size));
  SWIFT_CALL(ctx, coal_amg_set_max_levels(d->amg, (int)d->max_levels));
  SWIFT_CALL(ctx, coal_amg_set_cycle(d->amg, (coal_amg_cycle)d->cycle));
  SWIFT_CALL(ctx, coal_amg_set_reuse(d->amg, d->reuse ? 1 : 0));
  PetscCall(PetscLogEventBegin(coal_swift_ev.amg_setup, pc, 0, 0, 0));
  /* an unchanged option keeps the hierarchy: new values on it are a numeric-only re-setup
   * (a full setup where there is none yet, reuse is off or an option changed) */
  SWIFT_CALL(ctx, coal_amg_resetup(d->amg));
  PetscCall(PetscLogEventEnd(coal_swift_ev.amg_setup, pc, 0, 0, 0));
  PetscFunctionReturn(0);
}

/* Z = B R for n x k column-major arrays: backend arrays (dev) or PETSc's host arrays. */
static PetscErrorCode swiftamg_cycle(PC_SwiftAMG *d, PetscInt k, const PetscScalar *R, PetscInt ldr,
                                     PetscScalar *Z, PetscInt ldz, PetscBool dev) {
  int64_t n, m, nnz;
  PetscFunctionBegin;
  if (!d->amg) PetscFunctionReturn(0); /* an empty block */
  SWIFT_CALL(d->ctx, coal_mat_size(d->cm, &m, &n, &nnz));
  PetscCall(swift_block_run(d->ctx, &d->ws, n, n, k, R, ldr, Z, ldz, dev, coal_amg_pc_apply, d->amg,
                            coal_swift_ev.amg_apply, "coal_amg_apply"));
  PetscFunctionReturn(0);
}

static PetscErrorCode PCApply_SwiftAMG(PC pc, Vec x, Vec y) {
  PC_SwiftAMG *d = (PC_SwiftAMG *)pc->data;
  PetscInt n;
  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(x, &n));
  if (swift_vec_ctx(x) == d->ctx && swift_vec_ctx(y) == d->ctx) {
    /* seqswift vectors: their backend copies, nothing copied */
    const double *xd;
    double *yd;
    PetscCall(swift_vec_dev_read(x, &xd));
    PetscCall(swift_vec_dev_write(y, PETSC_FALSE, &yd));
    PetscCall(swiftamg_cycle(d, 1, xd, n, yd, n, PETSC_TRUE));
    /* PCApply does not raise y's state; without it a cached norm of y would outlive the write */
    PetscCall(PetscObjectStateIncrease((PetscObject)y));
    PetscFunctionReturn(0);
  }
  const PetscScalar *xa;
  PetscScalar *ya;
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArrayWrite(y, &ya));
  PetscErrorCode ierr = swiftamg_cycle(d, 1, xa, n, ya, n, PETSC_FALSE);
  PetscCall(VecRestoreArrayWrite(y, &ya));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/* KSPMatSolve: one block cycle on all columns of a dense block. */
static PetscErrorCode PCMatApply_SwiftAMG(PC pc, Mat X, Mat Y) {
  PC_SwiftAMG *d = (PC_SwiftAMG *)pc->data;
  const PetscScalar *xa;
  PetscScalar *ya;
  PetscInt k, ldx, ldy;
  PetscFunctionBegin;
  PetscCall(MatGetSize(X, NULL, &k));
  PetscCall(MatDenseGetLDA(X, &ldx));
  PetscCall(MatDenseGetLDA(Y, &ldy));
  if (d->amg) SWIFT_CALL(d->ctx, coal_amg_reserve(d->amg, (int64_t)k));
  PetscCall(MatDenseGetArrayRead(X, &xa));
  PetscCall(MatDenseGetArrayWrite(Y, &ya));
  PetscErrorCode ierr = swiftamg_cycle(d, k, xa, ldx, ya, ldy, PETSC_FALSE);
  PetscCall(MatDenseRestoreArrayWrite(Y, &ya));
  PetscCall(MatDenseRestoreArrayRead(X, &xa));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

static PetscErrorCode PCView_SwiftAMG(PC pc, PetscViewer v) {
  PC_SwiftAMG *d = (PC_SwiftAMG *)pc->data;
  PetscBool ascii;
  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)v, PETSCVIEWERASCII, &ascii));
  if (!ascii) PetscFunctionReturn(0);
  PetscCall(PetscViewerASCIIPrintf(
      v,
      "coalesce smoothed-aggregation AMG: theta %g, smoother %s degree %" PetscInt_FMT
      ", %s-cycle, coarse size %" PetscInt_FMT ", max levels %" PetscInt_FMT "\n",
      (double)d->theta, smoother_names[d->smoother], d->degree, d->cycle ? "W" : "V",
      d->coarse_size, d->max_levels));
  if (!d->amg) PetscFunctionReturn(0);
  coal_amg_info info;
  SWIFT_CALL(d->ctx, coal_amg_get_info(d->amg, &info));
  PetscCall(PetscViewerASCIIPushTab(v));
  PetscCall(PetscViewerASCIIPrintf(
      v,
      "backend %s, %s operator; %d levels, grid complexity %.3f, operator complexity %.3f, "
      "%s %.4g s\n",
      coal_backend_name(coal_ctx_backend(d->ctx)), d->own ? "copied seqaij" : "seqaijswift",
      info.levels, info.grid_complexity, info.operator_complexity,
      info.numeric_only ? "numeric-only re-setup" : "setup", info.setup_seconds));
  for (int l = 0; l < info.levels; l++)
    PetscCall(PetscViewerASCIIPrintf(
        v, "level %d: %lld rows, %lld nonzeros (%.1f per row)%s\n", l, (long long)info.rows[l],
        (long long)info.nnz[l], info.rows[l] ? (double)info.nnz[l] / (double)info.rows[l] : 0.0,
        l == info.levels - 1 ? (info.coarse_direct ? ", dense Cholesky" : ", smoothed") : ""));
  PetscCall(PetscViewerASCIIPopTab(v));
  PetscFunctionReturn(0);
}

PetscErrorCode PCCreate_SwiftAMG(PC pc) {
  PC_SwiftAMG *d;
  PetscFunctionBegin;
  PetscCall(PetscNew(&d));
  d->theta = COAL_AMG_DEFAULT_THETA;
  d->smoother = COAL_AMG_CHEBYSHEV, d->degree = 2;
  d->coarse_size = COAL_AMG_DEFAULT_COARSE, d->max_levels = COAL_AMG_MAX_LEVELS;
  d->cycle = COAL_AMG_V_CYCLE;
  d->reuse = PETSC_TRUE;
  pc->data = d;
  pc->ops->setup = PCSetUp_SwiftAMG;
  pc->ops->apply = PCApply_SwiftAMG;
  pc->ops->matapply = PCMatApply_SwiftAMG;
  pc->ops->setfromoptions = PCSetFromOptions_SwiftAMG;
  pc->ops->view = PCView_SwiftAMG;
  pc->ops->reset = PCReset_SwiftAMG;
  pc->ops->destroy = PCDestroy_SwiftAMG;
  PetscFunctionReturn(0);
}
