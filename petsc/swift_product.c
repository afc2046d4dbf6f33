/* MatProduct for seqaijswift: AB with a dense matrix on SpMM (SLEPc's LOBPCG and KSPMatSolve
 * use it), AB and PtAP with AIJ matrices on coalesce's sparse x sparse product (GAMG's setup
 * uses them). Other products go to AIJ's own implementation. */
#include "swift_impl.h"

typedef enum { SWIFT_PROD_DENSE, SWIFT_PROD_SPGEMM } swift_prod_kind;

typedef struct {
  coal_mat ca, cb, cc; /* copies of the operands and the result (the product object needs
                          operands whose structure outlives it) */
  coal_spgemm prod;
  PetscObjectState sa, sb;   /* operand states the values of cc belong to */
  PetscObjectState nza, nzb; /* operand nonzero states at the symbolic phase */
} swift_prod;

static PetscErrorCode swift_prod_destroy(void *p) {
  swift_prod *d = (swift_prod *)p;
  PetscFunctionBegin;
  (void)coal_spgemm_destroy(&d->prod);
  (void)coal_mat_destroy(&d->cc);
  (void)coal_mat_destroy(&d->cb);
  (void)coal_mat_destroy(&d->ca);
  PetscCall(PetscFree(d));
  PetscFunctionReturn(0);
}

static PetscErrorCode is_seqaij(Mat M, PetscBool *aij) {
  PetscFunctionBegin;
  /* base-type comparison: "seqaij" is a prefix of "seqaijswift" */
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)M, MATSEQAIJ, aij));
  PetscFunctionReturn(0);
}

/* ---- sparse x sparse ------------------------------------------------------------------- */
static PetscErrorCode copy_values_out(Mat C, swift_prod *d) {
  PetscScalar *ca;
  PetscFunctionBegin;
  PetscCall(MatSeqAIJGetArrayWrite(C, &ca));
  coal_status st = coal_mat_get_csr(d->cc, NULL, NULL, ca);
  PetscCall(MatSeqAIJRestoreArrayWrite(C, &ca));
  if (st != COAL_SUCCESS) return coal_petsc_error(coal_mat_ctx(d->cc), st, "coal_mat_get_csr");
  PetscFunctionReturn(0);
}

static PetscErrorCode swift_spgemm_numeric(Mat C) {
  Mat_Product *p = C->product;
  swift_prod *d = (swift_prod *)p->data;
  PetscObjectState sa, sb, nza, nzb;
  PetscFunctionBegin;
  PetscCheck(d, PETSC_COMM_SELF, PETSC_ERR_PLIB, "product data missing");
  PetscCall(PetscObjectStateGet((PetscObject)p->A, &sa));
  PetscCall(PetscObjectStateGet((PetscObject)p->B, &sb));
  PetscCall(MatGetNonzeroState(p->A, &nza));
  PetscCall(MatGetNonzeroState(p->B, &nzb));
  PetscCheck(nza == d->nza && nzb == d->nzb, PETSC_COMM_SELF, PETSC_ERR_ARG_INCOMP,
             "the operands' nonzero structure changed since the symbolic product");
  if (sa != d->sa || sb != d->sb) {
    coal_ctx ctx = coal_mat_ctx(d->cc);
    PetscCall(PetscLogEventBegin(coal_swift_ev.spgemm, C, 0, 0, 0));
    if (sa != d->sa) PetscCall(swift_mat_refresh(p->A, d->ca));
    if (sb != d->sb) PetscCall(swift_mat_refresh(p->B, d->cb));
    SWIFT_CALL(ctx, coal_spgemm_numeric(d->prod));
    SWIFT_CALL(ctx, coal_ctx_sync(ctx));
    PetscCall(PetscLogEventEnd(coal_swift_ev.spgemm, C, 0, 0, 0));
    d->sa = sa, d->sb = sb;
  }
  PetscCall(copy_values_out(C, d));
  PetscCall(MatAssemblyBegin(C, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(C, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

static PetscErrorCode swift_spgemm_symbolic(Mat C) {
  Mat_Product *p = C->product;
  Mat A = p->A, B = p->B;
  coal_ctx ctx;
  swift_prod *d;
  int64_t m, n, nnz, *rp64 = NULL;
  int32_t *cj32 = NULL;
  PetscInt *ri = NULL, *cj = NULL;
  PetscScalar *v = NULL;
  coal_status st;
  PetscFunctionBegin;
  PetscCall(coal_petsc_context(&ctx));
  PetscCall(PetscNew(&d));
  p->data = d;
  p->destroy = swift_prod_destroy;
  PetscCall(PetscLogEventBegin(coal_swift_ev.spgemm, C, 0, 0, 0));
  PetscCall(swift_mat_from_aij(A, ctx, &d->ca));
  PetscCall(swift_mat_from_aij(B, ctx, &d->cb));
  PetscCall(PetscObjectStateGet((PetscObject)A, &d->sa));
  PetscCall(PetscObjectStateGet((PetscObject)B, &d->sb));
  PetscCall(MatGetNonzeroState(A, &d->nza));
  PetscCall(MatGetNonzeroState(B, &d->nzb));
  SWIFT_CALL(ctx,
             coal_spgemm_create(p->type == MATPRODUCT_PtAP ? COAL_PRODUCT_PTAP : COAL_PRODUCT_AB,
                                d->ca, d->cb, &d->prod, &d->cc));
  PetscCall(PetscLogEventEnd(coal_swift_ev.spgemm, C, 0, 0, 0));
  SWIFT_CALL(ctx, coal_mat_size(d->cc, &m, &n, &nnz));
  PetscCall(PetscMalloc4(m + 1, &rp64, nnz, &cj32, m + 1, &ri, nnz, &cj));
  PetscCall(PetscMalloc1(nnz, &v));
  st = coal_mat_get_csr(d->cc, rp64, cj32, v);
  if (st == COAL_SUCCESS) {
    for (int64_t i = 0; i <= m; i++) ri[i] = (PetscInt)rp64[i];
    for (int64_t k = 0; k < nnz; k++) cj[k] = (PetscInt)cj32[k];
  }
  PetscErrorCode ierr = 0;
  if (st == COAL_SUCCESS) {
    /* C becomes a seqaijswift too, so that the coarse levels of a hierarchy run on coalesce */
    ierr = MatSetSizes(C, (PetscInt)m, (PetscInt)n, (PetscInt)m, (PetscInt)n);
    if (!ierr) ierr = MatSetType(C, MATSEQAIJSWIFT);
    if (!ierr) ierr = MatSeqAIJSetPreallocationCSR(C, ri, cj, v);
  }
  PetscCall(PetscFree4(rp64, cj32, ri, cj));
  PetscCall(PetscFree(v));
  if (st != COAL_SUCCESS) return coal_petsc_error(ctx, st, "coal_mat_get_csr");
  PetscCall(ierr);
  PetscCall(MatSetOption(C, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
  C->ops->productnumeric = swift_spgemm_numeric;
  PetscCall(PetscInfo(C, "coalesce %s product: %lld x %lld, %lld nonzeros\n",
                      MatProductTypes[p->type], (long long)m, (long long)n, (long long)nnz));
  PetscFunctionReturn(0);
}

/* ---- sparse x dense ---------------------------------------------------------------------- */
static PetscErrorCode swift_dense_numeric(Mat C) {
  Mat_Product *p = C->product;
  Mat A = p->A, B = p->B;
  coal_mat cm;
  const PetscScalar *b;
  PetscScalar *c;
  PetscInt ldb, ldc;
  PetscFunctionBegin;
  PetscCall(swift_seq_sync(A, &cm));
  PetscCall(MatDenseGetLDA(B, &ldb));
  PetscCall(MatDenseGetLDA(C, &ldc));
  PetscCall(MatDenseGetArrayRead(B, &b));
  PetscCall(MatDenseGetArrayWrite(C, &c));
  PetscErrorCode ierr =
      swift_apply_block(cm, &((Mat_SeqAIJSwift *)A->spptr)->ws, B->cmap->n, b, ldb, c, ldc);
  PetscCall(MatDenseRestoreArrayWrite(C, &c));
  PetscCall(MatDenseRestoreArrayRead(B, &b));
  PetscCall(ierr);
  PetscCall(MatAssemblyBegin(C, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(C, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

static PetscErrorCode swift_dense_symbolic(Mat C) {
  Mat_Product *p = C->product;
  Mat A = p->A, B = p->B;
  PetscBool dense;
  PetscFunctionBegin;
  PetscCall(MatSetSizes(C, A->rmap->n, B->cmap->n, A->rmap->N, B->cmap->N));
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)C, MATSEQDENSE, &dense));
  if (!dense) PetscCall(MatSetType(C, MATSEQDENSE));
  PetscCall(MatSetUp(C));
  C->ops->productsymbolic = swift_dense_symbolic;
  C->ops->productnumeric = swift_dense_numeric;
  PetscFunctionReturn(0);
}

PetscErrorCode swift_product_setfromoptions(Mat C) {
  Mat_Product *p = C->product;
  Mat A = p->A, B = p->B;
  PetscBool aswift, aaij, baij, bdense;
  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQAIJSWIFT, &aswift));
  PetscCall(is_seqaij(A, &aaij));
  PetscCall(is_seqaij(B, &baij));
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)B, MATSEQDENSE, &bdense));
  C->ops->productsymbolic = NULL;
  if (p->type == MATPRODUCT_AB && aswift && bdense) {
    C->ops->productsymbolic = swift_dense_symbolic;
  } else if ((p->type == MATPRODUCT_AB || p->type == MATPRODUCT_PtAP) && aaij && baij) {
    C->ops->productsymbolic = swift_spgemm_symbolic;
  } else if (aswift) {
    /* AIJ's own dispatch for the rest (AtB, ABt, RARt, ...) */
    PetscErrorCode (*f)(Mat) = ((Mat_SeqAIJSwift *)A->spptr)->parent.productsetfromoptions;
    if (f) PetscCall((*f)(C));
  }
  PetscFunctionReturn(0);
}
