/* Small helpers shared by the format builders. */
#include "internal.h"

#include <string.h>
#include <time.h>

double coal_now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* One counting sort, O(n + max count): positions are handed out from the largest count down,
 * and lanes of equal count keep their original order. */
coal_status coal_sort_by_count_desc(coal_ctx ctx, int32_t n, const int32_t *ptr, int32_t *perm) {
  int32_t maxc = 0;
  for (int32_t l = 0; l < n; l++)
    if (ptr[l + 1] - ptr[l] > maxc) maxc = ptr[l + 1] - ptr[l];
  int32_t *start = NULL; /* start[c]: next sorted position of count c */
  COAL_CALL(coal_calloc(ctx, sizeof(int32_t) * ((size_t)maxc + 1), (void **)&start));
  for (int32_t l = 0; l < n; l++) start[ptr[l + 1] - ptr[l]]++;
  int32_t pos = 0;
  for (int64_t c = maxc; c >= 0; c--) {
    int32_t k = start[c];
    start[c] = pos;
    pos += k;
  }
  for (int32_t l = 0; l < n; l++) perm[start[ptr[l + 1] - ptr[l]]++] = l;
  coal_free(start);
  return COAL_SUCCESS;
}

int coal_cmp_i32(const void *a, const void *b) {
  const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

int coal_name_lookup(const char *const *names, int n, const char *name) {
  if (!name) return -1;
  for (int i = 0; i < n; i++)
    if (!strcmp(name, names[i])) return i;
  return -1;
}
