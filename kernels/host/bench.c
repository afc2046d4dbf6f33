/* Benchmark timing on the host backend (the bench sub-table's time entry): a monotonic clock
 * around one call. The host has no other bench entry. */
#include "../bench.h"

#include <time.h>

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

coal_status coal_bench_time_host(coal_ctx ctx, coal_bench_fn fn, void *arg, double *us) {
  (void)ctx;
  const double t0 = now_us();
  COAL_CALL(fn(arg));
  *us = now_us() - t0;
  return COAL_SUCCESS;
}
