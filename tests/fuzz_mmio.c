/* libFuzzer target for the Matrix Market parsers (built and run by tests/fuzz.sh).
 *
 * Feeds arbitrary bytes (not NUL-terminated) to both buffer readers; the input's low bits
 * pick the precision and block layout. Besides the sanitizers' checks it traps when an
 * accepted matrix breaks the CSR invariants or when a rejected input's message does not
 * name the input and a line. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "coalesce.h"

#define NAME "fuzz.mtx"

static void check_message(coal_ctx ctx, coal_status st) {
  if (st == COAL_ERR_FORMAT || st == COAL_ERR_UNSUPPORTED || st == COAL_ERR_OVERFLOW) {
    if (!strstr(coal_ctx_last_error(ctx), NAME " line ")) __builtin_trap();
  } else if (st != COAL_SUCCESS && st != COAL_ERR_MEMORY) {
    __builtin_trap(); /* no other code can come from a well-formed call */
  }
}

static void check_matrix(coal_mat A) {
  int64_t m, n, nnz;
  if (coal_mat_size(A, &m, &n, &nnz) != COAL_SUCCESS) __builtin_trap();
  if (m < 0 || n < 0 || nnz < 0 || nnz > m * n) __builtin_trap();
  int64_t rp[65];
  int32_t ci[4096];
  if (m > 64 || nnz > 4096) return;
  if (coal_mat_get_csr(A, rp, ci, NULL) != COAL_SUCCESS) __builtin_trap();
  if (rp[0] != 0 || rp[m] != nnz) __builtin_trap();
  for (int64_t i = 0; i < m; i++)
    for (int64_t p = rp[i]; p < rp[i + 1]; p++)
      if (ci[p] < 0 || ci[p] >= n || (p > rp[i] && ci[p] <= ci[p - 1])) __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  coal_ctx ctx = NULL;
  if (coal_ctx_create(COAL_BACKEND_HOST, &ctx) != COAL_SUCCESS) __builtin_trap();
  const char *buf = (const char *)data;
  unsigned sel = size ? data[size - 1] : 0;
  coal_dtype dtype = (sel & 1) ? COAL_F32 : COAL_F64;
  coal_layout layout = (sel & 2) ? COAL_ROW_MAJOR : COAL_COL_MAJOR;

  coal_mat A = NULL;
  coal_status st = coal_mat_read_mm_buffer(ctx, NAME, buf, size, dtype, &A);
  check_message(ctx, st);
  if ((st == COAL_SUCCESS) != (A != NULL)) __builtin_trap();
  if (A) check_matrix(A);
  coal_mat_destroy(&A);

  coal_bvec X = NULL;
  st = coal_bvec_read_mm_buffer(ctx, NAME, buf, size, dtype, layout, &X);
  check_message(ctx, st);
  if ((st == COAL_SUCCESS) != (X != NULL)) __builtin_trap();
  if (X) {
    int64_t n, k;
    if (coal_bvec_size(X, &n, &k) != COAL_SUCCESS || n < 0 || k < 0) __builtin_trap();
  }
  coal_bvec_destroy(&X);
  coal_ctx_destroy(&ctx);
  return 0;
}
