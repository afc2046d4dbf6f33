/* `coalesce info SPEC...`: what a matrix looks like and what the library does with it. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static void print_fastload(const char *label, const coal_fastload_stats *s, int height) {
  printf("  %-16s H=%d: %lld blocks (one-row %lld, segmented %lld, distinct %lld; partial %lld),"
         " %lld atomics per product, built in %.3f ms\n",
         label, height, (long long)s->nblocks, (long long)s->nblocks_one_row,
         (long long)s->nblocks_segmented, (long long)s->nblocks_distinct,
         (long long)s->nblocks_partial, (long long)s->natomics, s->build_seconds * 1e3);
}

static int info_one(coal_ctx ctx, const cli_spec *sp, coal_dtype dtype, int height) {
  coal_mat A = NULL;
  coal_status st = cli_spec_load(ctx, sp, dtype, &A);
  if (st) return cli_fail(ctx, st, "cannot load '%s'", sp->text);
  if (height > 0 && (st = coal_mat_set_fastload_height(A, height))) {
    cli_fail(ctx, st, "%s: FastLoad height %d", sp->name, height);
    coal_mat_destroy(&A);
    return CLI_FAIL;
  }
  char desc[512];
  cli_spec_describe(sp, desc, sizeof desc);
  int64_t m, n, nnz;
  coal_mat_size(A, &m, &n, &nnz);
  int sym = 0;
  if ((st = coal_mat_is_symmetric(A, &sym))) {
    cli_fail(ctx, st, "%s: symmetry test", sp->name);
    coal_mat_destroy(&A);
    return CLI_FAIL;
  }
  /* row and column statistics from the host CSR arrays */
  cli_csr c;
  if ((st = cli_csr_get(A, &c))) {
    cli_fail(ctx, st, "%s: host copy", sp->name);
    coal_mat_destroy(&A);
    return CLI_FAIL;
  }
  int32_t rmin = 0, rmax = 0;
  int64_t erows = 0, ecols = 0;
  unsigned char *hit = calloc((size_t)(n > 0 ? n : 1), 1);
  if (!hit) {
    coal_mat_destroy(&A);
    return cli_fail(NULL, COAL_ERR_MEMORY, "%s", sp->name);
  }
  for (int64_t i = 0; i < c.nrows; i++) {
    int32_t len = c.rowptr[i + 1] - c.rowptr[i];
    if (i == 0 || len < rmin) rmin = len;
    if (len > rmax) rmax = len;
    if (len == 0) erows++;
  }
  for (int64_t p = 0; p < nnz; p++) hit[c.colind[p]] = 1;
  for (int64_t j = 0; j < n; j++) ecols += !hit[j];
  free(hit);

  printf("%s: %s\n", sp->name, desc);
  printf("  %-16s %lld x %lld, %lld nonzeros, %s\n", "size", (long long)m, (long long)n,
         (long long)nnz, cli_dtype_name(dtype));
  printf("  %-16s %s\n", "symmetric", sym ? "yes" : "no");
  printf("  %-16s min %d, mean %.2f, max %d\n", "row length", rmin,
         m > 0 ? (double)nnz / (double)m : 0.0, rmax);
  printf("  %-16s %lld rows, %lld columns\n", "empty", (long long)erows, (long long)ecols);

  int rc = CLI_OK;
  coal_fastload_stats fs;
  int fl_height = 0;
  for (int t = 0; t < 2; t++) {
    const char *label = t ? "FastLoad gather" : "FastLoad scatter";
    if ((st = coal_mat_fastload_stats(A, t, &fs)) ||
        (st = coal_mat_get_fastload_height(A, &fl_height)))
      rc = cli_fail(ctx, st, "%s: %s", sp->name, label);
    else
      print_fastload(label, &fs, fl_height);
  }
  coal_spmv_kernel k = coal_spmv_select(A);
  printf("  %-16s %s (auto on %s: %s)\n", "kernel", coal_spmv_kernel_name(k),
         coal_backend_name(coal_ctx_backend(ctx)), coal_ctx_device_name(ctx));
  coal_mat_destroy(&A);
  return rc;
}

int cli_info(int argc, char **argv) {
  cli_common c = {COAL_BACKEND_AUTO, COAL_F64};
  int64_t height = 0;
  cli_spec *specs = calloc((size_t)argc, sizeof *specs);
  int ns = 0, rc = CLI_OK;
  if (!specs) return cli_fail(NULL, COAL_ERR_MEMORY, "info");
  for (int i = 1; i < argc; i++) {
    const char *v = NULL;
    int r = cli_parse_common(argc, argv, &i, &c);
    if (r < 0) goto usage;
    if (r > 0) continue;
    if ((r = cli_opt_value(argc, argv, &i, "--height", &v)) != 0) {
      if (r < 0) goto usage;
      if (cli_parse_i64(v, &height) || height < 1 || height > 255) {
        cli_usage_error("--height: '%s' is not an integer in 1..255", v);
        goto usage;
      }
      continue;
    }
    if (argv[i][0] == '-' && argv[i][1] == '-') {
      cli_usage_error("info: unknown option '%s'", argv[i]);
      goto usage;
    }
    if (cli_spec_parse(argv[i], &specs[ns]) != CLI_OK) goto usage;
    ns++;
  }
  if (ns == 0) {
    cli_usage_error("info needs at least one matrix spec");
    goto usage;
  }
  coal_ctx ctx = NULL;
  if (cli_ctx_create(c.backend, &ctx) != CLI_OK) {
    free(specs);
    return CLI_FAIL;
  }
  printf("backend: %s (%s)\n", coal_backend_name(coal_ctx_backend(ctx)), coal_ctx_device_name(ctx));
  for (int s = 0; s < ns; s++) {
    if (info_one(ctx, &specs[s], c.dtype, (int)height) != CLI_OK) rc = CLI_FAIL;
  }
  coal_ctx_destroy(&ctx);
  free(specs);
  return rc;
usage:
  free(specs);
  return CLI_USAGE;
}
