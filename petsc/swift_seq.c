/* seqaijswift: PETSc's SeqAIJ with the products on coalesce's kernels. Built the way PETSc's
 * own GPU types are: MatCreate_SeqAIJ, then an in-place conversion that keeps AIJ's operations
 * (MatMult_SeqAIJ and friends are not exported, so they are saved from the ops table) and
 * swaps the products. The coalesce copy of the CSR is rebuilt when the nonzero state changes
 * and its values refreshed when only the object state changed (MatScale, MatAXPY,
 * MatDiagonalScale and array access change values without an assembly). */
#include "swift_impl.h"

PETSC_EXTERN PetscErrorCode MatCreate_SeqAIJ(Mat);

static Mat_SeqAIJSwift *sw(Mat A) { return (Mat_SeqAIJSwift *)A->spptr; }

/* One line naming the backend and kernels of A, to a viewer or (v NULL) to stdout. */
static PetscErrorCode swift_view_line(Mat A, Mat_SeqAIJSwift *s, PetscViewer v) {
  int64_t m, n, nnz;
  coal_ctx ctx = coal_mat_ctx(s->cm);
  char line[512];
  PetscFunctionBegin;
  SWIFT_CALL(ctx, coal_mat_size(s->cm, &m, &n, &nnz));
  PetscCall(PetscSNPrintf(line, sizeof line,
                          "coalesce %s: %lld x %lld, %lld nonzeros; backend %s (%s); SpMV kernel "
                          "%s; SpMM kernel (8 columns) %s\n",
                          ((PetscObject)A)->type_name, (long long)m, (long long)n, (long long)nnz,
                          coal_backend_name(coal_ctx_backend(ctx)), coal_ctx_device_name(ctx),
                          coal_spmv_kernel_name(coal_spmv_select(s->cm)),
                          coal_spmm_kernel_name(coal_spmm_select(s->cm, 8, COAL_COL_MAJOR))));
  if (v)
    PetscCall(PetscViewerASCIIPrintf(v, "%s", line));
  else
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "%s", line));
  PetscFunctionReturn(0);
}

PetscErrorCode swift_mat_from_aij(Mat A, coal_ctx ctx, coal_mat *cm) {
  const PetscInt *ia, *ja;
  const PetscScalar *aa;
  PetscInt nr;
  PetscBool done;
  int64_t *rp = NULL;
  int32_t *cj = NULL;
  coal_status st;
  PetscFunctionBegin;
  PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &nr, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_SUP, "%s: no CSR access",
             ((PetscObject)A)->type_name);
  PetscCall(MatSeqAIJGetArrayRead(A, &aa));
  PetscCall(PetscMalloc1(nr + 1, &rp));
  for (PetscInt i = 0; i <= nr; i++) rp[i] = ia[i];
#if defined(PETSC_USE_64BIT_INDICES)
  PetscCall(PetscMalloc1(ia[nr], &cj));
  for (PetscInt k = 0; k < ia[nr]; k++) cj[k] = (int32_t)ja[k];
#else
  cj = (int32_t *)ja;
#endif
  st = coal_mat_create_csr(ctx, nr, A->cmap->n, rp, cj, aa, COAL_F64, cm);
#if defined(PETSC_USE_64BIT_INDICES)
  PetscCall(PetscFree(cj));
#endif
  PetscCall(PetscFree(rp));
  PetscCall(MatSeqAIJRestoreArrayRead(A, &aa));
  PetscInt nnz_aij = ia[nr];
  PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &nr, &ia, &ja, &done));
  if (st != COAL_SUCCESS) return coal_petsc_error(ctx, st, "coal_mat_create_csr");
  int64_t m, n, nnz;
  SWIFT_CALL(ctx, coal_mat_size(*cm, &m, &n, &nnz));
  /* value refreshes later assume the same entries in the same order: AIJ rows are sorted and
   * unique, so this holds; say so loudly if it ever does not */
  if (nnz != nnz_aij) (void)coal_mat_destroy(cm);
  PetscCheck(nnz == nnz_aij, PETSC_COMM_SELF, PETSC_ERR_PLIB,
             "%s: %lld nonzeros in coalesce's copy, %" PetscInt_FMT " in AIJ",
             ((PetscObject)A)->type_name, (long long)nnz, nnz_aij);
  PetscFunctionReturn(0);
}

PetscErrorCode swift_mat_refresh(Mat A, coal_mat cm) {
  const PetscScalar *aa;
  PetscFunctionBegin;
  PetscCall(MatSeqAIJGetArrayRead(A, &aa));
  coal_status st = coal_mat_set_values(cm, aa);
  PetscCall(MatSeqAIJRestoreArrayRead(A, &aa));
  if (st != COAL_SUCCESS) return coal_petsc_error(coal_mat_ctx(cm), st, "coal_mat_set_values");
  PetscFunctionReturn(0);
}

static PetscErrorCode swift_build(Mat A, Mat_SeqAIJSwift *s) {
  coal_ctx ctx;
  PetscFunctionBegin;
  PetscCall(coal_petsc_context(&ctx));
  PetscCall(PetscLogEventBegin(coal_swift_ev.build, A, 0, 0, 0));
  (void)coal_mat_destroy(&s->cm);
  (void)coal_mat_destroy(&s->cmt);
  PetscCall(swift_mat_from_aij(A, ctx, &s->cm));
  int64_t m, n, nnz;
  SWIFT_CALL(ctx, coal_mat_size(s->cm, &m, &n, &nnz));
  s->ctx = ctx;
  PetscCall(MatGetNonzeroState(A, &s->nzstate));
  PetscCall(PetscObjectStateGet((PetscObject)A, &s->state));
  PetscCall(PetscLogEventEnd(coal_swift_ev.build, A, 0, 0, 0));
  PetscCall(PetscInfo(A, "%s %lld x %lld, %lld nonzeros: coalesce backend %s, SpMV kernel %s\n",
                      ((PetscObject)A)->type_name, (long long)m, (long long)n, (long long)nnz,
                      coal_backend_name(coal_ctx_backend(ctx)),
                      coal_spmv_kernel_name(coal_spmv_select(s->cm))));
  /* AIJ's i-node kernels (rows of identical structure) add each row's products in pairs,
   * sum += (a_1 x_1 + a_2 x_2), which the running sum here does not reproduce bit for bit */
  PetscInt nodes = 0, limit, *sizes;
  PetscCall(MatInodeGetInodeSizes(A, &nodes, &sizes, &limit));
  if (nodes > 0)
    PetscCall(PetscInfo(A,
                        "%s: AIJ would multiply with its i-node kernels (%" PetscInt_FMT
                        " nodes), whose rounding differs from coalesce's row sums\n",
                        ((PetscObject)A)->type_name, nodes));
  if (!s->viewed) {
    PetscBool view = PETSC_FALSE;
    /* global, not under A's prefix: solvers make inner matrices with their own prefixes */
    PetscCall(PetscOptionsGetBool(NULL, NULL, "-mat_swift_view", &view, NULL));
    if (view) PetscCall(swift_view_line(A, s, NULL));
    s->viewed = PETSC_TRUE;
  }
  PetscFunctionReturn(0);
}

PetscErrorCode swift_seq_sync(Mat A, coal_mat *cm) {
  Mat_SeqAIJSwift *s = sw(A);
  PetscObjectState state, nz;
  PetscFunctionBegin;
  PetscCheck(s, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "not a seqaijswift matrix");
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  PetscCall(MatGetNonzeroState(A, &nz));
  if (!s->cm || nz != s->nzstate) {
    PetscCall(swift_build(A, s));
  } else if (state != s->state) {
    PetscCall(swift_mat_refresh(A, s->cm));
    (void)coal_mat_destroy(&s->cmt);
    s->state = state;
  }
  *cm = s->cm;
  PetscFunctionReturn(0);
}

/* A^T as a transposed copy, built at the first transpose product after each change. A itself is
 * not used even when PETSc's symmetry flag is set: the flag survives some value changes
 * (MatDiagonalScale with l != r) and AIJ's own transpose product never relies on it. */
static PetscErrorCode swift_transpose(Mat A, coal_mat *cmt) {
  Mat_SeqAIJSwift *s = sw(A);
  coal_mat cm;
  PetscFunctionBegin;
  PetscCall(swift_seq_sync(A, &cm));
  if (!s->cmt) SWIFT_CALL(s->ctx, coal_mat_transpose(cm, &s->cmt));
  *cmt = s->cmt;
  PetscFunctionReturn(0);
}

/* z = op(A) x (+ y): one body for the four products */
static PetscErrorCode swift_mult_any(Mat A, PetscBool trans, Vec x, Vec y, Vec z) {
  Mat_SeqAIJSwift *s = sw(A);
  coal_mat cm = NULL;
  PetscFunctionBegin;
  if (trans)
    PetscCall(swift_transpose(A, &cm));
  else
    PetscCall(swift_seq_sync(A, &cm));
  PetscCall(swift_apply_vec(cm, &s->ws, x, y, z));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatMult_SeqAIJSwift(Mat A, Vec x, Vec y) {
  PetscFunctionBegin;
  PetscCall(swift_mult_any(A, PETSC_FALSE, x, NULL, y));
  PetscFunctionReturn(0);
}
static PetscErrorCode MatMultAdd_SeqAIJSwift(Mat A, Vec x, Vec y, Vec z) {
  PetscFunctionBegin;
  PetscCall(swift_mult_any(A, PETSC_FALSE, x, y, z));
  PetscFunctionReturn(0);
}
static PetscErrorCode MatMultTranspose_SeqAIJSwift(Mat A, Vec x, Vec y) {
  PetscFunctionBegin;
  PetscCall(swift_mult_any(A, PETSC_TRUE, x, NULL, y));
  PetscFunctionReturn(0);
}
static PetscErrorCode MatMultTransposeAdd_SeqAIJSwift(Mat A, Vec x, Vec y, Vec z) {
  PetscFunctionBegin;
  PetscCall(swift_mult_any(A, PETSC_TRUE, x, y, z));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatView_SeqAIJSwift(Mat A, PetscViewer v) {
  Mat_SeqAIJSwift *s = sw(A);
  PetscBool ascii;
  PetscViewerFormat fmt;
  PetscFunctionBegin;
  PetscCall(s->parent.view(A, v));
  PetscCall(PetscObjectTypeCompare((PetscObject)v, PETSCVIEWERASCII, &ascii));
  if (!ascii) PetscFunctionReturn(0);
  PetscCall(PetscViewerGetFormat(v, &fmt));
  if (fmt != PETSC_VIEWER_ASCII_INFO && fmt != PETSC_VIEWER_ASCII_INFO_DETAIL)
    PetscFunctionReturn(0);
  coal_mat cm;
  PetscCall(swift_seq_sync(A, &cm));
  PetscCall(swift_view_line(A, s, v));
  PetscFunctionReturn(0);
}

static PetscErrorCode swift_compose(Mat B, PetscBool on);

static PetscErrorCode swift_free(Mat A) {
  Mat_SeqAIJSwift *s = sw(A);
  PetscFunctionBegin;
  if (!s) PetscFunctionReturn(0);
  (void)coal_mat_destroy(&s->cmt);
  (void)coal_mat_destroy(&s->cm);
  swift_ws_free(s->ctx, &s->ws);
  PetscCall(PetscFree(A->spptr));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatDestroy_SeqAIJSwift(Mat A) {
  PetscErrorCode (*destroy)(Mat) = sw(A)->parent.destroy;
  PetscFunctionBegin;
  PetscCall(swift_compose(A, PETSC_FALSE));
  PetscCall(swift_free(A));
  PetscCall((*destroy)(A));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatDuplicate_SeqAIJSwift(Mat A, MatDuplicateOption op, Mat *B) {
  PetscFunctionBegin;
  PetscCall(sw(A)->parent.duplicate(A, op, B));
  PetscCall(MatConvert_SeqAIJ_SeqAIJSwift(*B, MATSEQAIJSWIFT, MAT_INPLACE_MATRIX, B));
  PetscFunctionReturn(0);
}

/* seqaijswift -> seqaij in place: AIJ's operations back, our data gone */
static PetscErrorCode MatConvert_SeqAIJSwift_SeqAIJ(Mat A, MatType type, MatReuse reuse,
                                                    Mat *newmat) {
  Mat B;
  PetscFunctionBegin;
  (void)type;
  if (reuse == MAT_REUSE_MATRIX) {
    PetscCall(MatCopy(A, *newmat, SAME_NONZERO_PATTERN));
    PetscFunctionReturn(0);
  }
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, newmat));
  B = *newmat;
  *B->ops = sw(B)->parent;
  PetscCall(swift_compose(B, PETSC_FALSE));
  PetscCall(swift_free(B));
  PetscCall(PetscObjectChangeTypeName((PetscObject)B, MATSEQAIJ));
  PetscFunctionReturn(0);
}

static PetscErrorCode swift_compose(Mat B, PetscBool on) {
  PetscObject o = (PetscObject)B;
  PetscFunctionBegin;
  PetscCall(swift_republish(B, "MatConvert_seqaij_hypre_C", "MatConvert_seqaijswift_hypre_C", on));
  PetscCall(PetscObjectComposeFunction(o, "MatConvert_seqaijswift_seqaij_C",
                                       on ? MatConvert_SeqAIJSwift_SeqAIJ : NULL));
  /* MatConvert(seqaij -> seqaijswift) finds the converter on a matrix of the new type;
   * without it MatTranspose and friends fall back to MatConvert_Basic (17x slower GAMG setup) */
  PetscCall(PetscObjectComposeFunction(o, "MatConvert_seqaij_seqaijswift_C",
                                       on ? MatConvert_SeqAIJ_SeqAIJSwift : NULL));
  const char *const pairs[] = {"MatProductSetFromOptions_seqaijswift_seqaij_C",
                               "MatProductSetFromOptions_seqaij_seqaijswift_C",
                               "MatProductSetFromOptions_seqaijswift_seqdense_C"};
  for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
    PetscCall(PetscObjectComposeFunction(o, pairs[i], on ? swift_product_setfromoptions : NULL));
  PetscFunctionReturn(0);
}

PetscErrorCode MatConvert_SeqAIJ_SeqAIJSwift(Mat A, MatType type, MatReuse reuse, Mat *newmat) {
  Mat B;
  Mat_SeqAIJSwift *s;
  PetscFunctionBegin;
  (void)type;
  PetscCall(swift_convert_target(A, reuse, newmat));
  B = *newmat;
  if (B->spptr) { /* already ours (the duplicate of a seqaijswift is one) */
    PetscBool ours;
    PetscCall(PetscObjectTypeCompare((PetscObject)B, MATSEQAIJSWIFT, &ours));
    PetscCheck(ours, PETSC_COMM_SELF, PETSC_ERR_SUP, "cannot convert a %s to seqaijswift",
               ((PetscObject)B)->type_name);
    PetscFunctionReturn(0);
  }
  PetscCall(PetscNew(&s));
  s->parent = *B->ops;
  B->spptr = s;
  B->ops->mult = MatMult_SeqAIJSwift;
  B->ops->multadd = MatMultAdd_SeqAIJSwift;
  B->ops->multtranspose = MatMultTranspose_SeqAIJSwift;
  B->ops->multtransposeadd = MatMultTransposeAdd_SeqAIJSwift;
  B->ops->destroy = MatDestroy_SeqAIJSwift;
  B->ops->duplicate = MatDuplicate_SeqAIJSwift;
  B->ops->view = MatView_SeqAIJSwift;
  B->ops->productsetfromoptions = swift_product_setfromoptions;
  PetscCall(swift_compose(B, PETSC_TRUE));
  PetscCall(PetscObjectChangeTypeName((PetscObject)B, MATSEQAIJSWIFT));
  PetscFunctionReturn(0);
}

PetscErrorCode MatCreate_SeqAIJSwift(Mat B) {
  PetscFunctionBegin;
  PetscCall(MatCreate_SeqAIJ(B));
  PetscCall(MatConvert_SeqAIJ_SeqAIJSwift(B, MATSEQAIJSWIFT, MAT_INPLACE_MATRIX, &B));
  PetscFunctionReturn(0);
}
