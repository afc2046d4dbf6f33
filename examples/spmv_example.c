/* y = A*x with coalesce: the smallest complete program, to copy from.
 *
 *   spmv_example              3-D 7-point Laplacian on a 32^3 grid
 *   spmv_example FILE.mtx.gz  a Matrix Market file
 *
 * The backend is picked automatically (COALESCE_BACKEND, else the GPU when there is one).
 * Every call returns a status; on failure the context holds a readable message. */
#include <coalesce.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define TRY(call)                                                                                  \
  do {                                                                                             \
    coal_status st_ = (call);                                                                      \
    if (st_ != COAL_SUCCESS) {                                                                     \
      fprintf(stderr, "%s failed: %s\n", #call, coal_ctx_last_error(ctx));                         \
      goto cleanup;                                                                                \
    }                                                                                              \
  } while (0)

int main(int argc, char **argv) {
  coal_ctx ctx = NULL;
  coal_mat A = NULL;
  coal_bvec x = NULL, y = NULL;
  double *yh = NULL;
  int rc = 1;
  int64_t nrows, ncols, nnz;

  coal_status st = coal_ctx_create(COAL_BACKEND_AUTO, &ctx);
  if (st != COAL_SUCCESS) {
    fprintf(stderr, "no context: %s\n", coal_status_string(st));
    return 1;
  }
  printf("backend %s on %s\n", coal_backend_name(coal_ctx_backend(ctx)), coal_ctx_device_name(ctx));

  if (argc > 1)
    TRY(coal_mat_read_mm(ctx, argv[1], COAL_F64, &A));
  else
    TRY(coal_gen_laplace3d(ctx, 32, 32, 32, 7, COAL_F64, &A));
  TRY(coal_mat_size(A, &nrows, &ncols, &nnz));
  printf("A: %lld x %lld, %lld nonzeros\n", (long long)nrows, (long long)ncols, (long long)nnz);

  TRY(coal_bvec_create(ctx, ncols, 1, COAL_F64, COAL_COL_MAJOR, 0, &x));
  TRY(coal_bvec_create(ctx, nrows, 1, COAL_F64, COAL_COL_MAJOR, 0, &y));
  TRY(coal_bvec_set_value(x, 1.0));
  TRY(coal_spmv(A, COAL_SPMV_AUTO, 1.0, x, 0.0, y)); /* y = 1*A*x + 0*y */

  /* copy y back to the host and print its 2-norm (y is device memory on the cuda backend) */
  yh = malloc(sizeof(double) * (size_t)(nrows > 0 ? nrows : 1));
  if (!yh) goto cleanup;
  TRY(coal_bvec_get_host(y, yh, COAL_COL_MAJOR, 0));
  double s = 0;
  for (int64_t i = 0; i < nrows; i++) s += yh[i] * yh[i];
  printf("kernel %s: ||A*ones||_2 = %.15g\n", coal_spmv_kernel_name(coal_spmv_select(A)), sqrt(s));
  rc = 0;

cleanup:
  free(yh);
  coal_bvec_destroy(&y);
  coal_bvec_destroy(&x);
  coal_mat_destroy(&A);
  coal_ctx_destroy(&ctx);
  return rc;
}
