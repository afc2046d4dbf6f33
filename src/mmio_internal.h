/* Matrix Market parser shared by the readers in mmio.c (private to src/mmio*.c). */
#ifndef COAL_MMIO_INTERNAL_H
#define COAL_MMIO_INTERNAL_H

#include "internal.h"

#include <stddef.h>
#include <stdint.h>

enum { COAL_MM_COORDINATE = 0, COAL_MM_ARRAY = 1 };
enum { COAL_MM_REAL = 0, COAL_MM_INTEGER = 1, COAL_MM_PATTERN = 2 };
enum { COAL_MM_GENERAL = 0, COAL_MM_SYMMETRIC = 1, COAL_MM_SKEW = 2 };

/* Limits on what a reader may allocate from declared sizes alone (the parser itself only
 * allocates in proportion to the entries it actually finds). Fuzzing builds lower them so
 * that a few header bytes cannot ask for gigabytes. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define COAL_MM_MAX_DIM   100000
#define COAL_MM_MAX_DENSE (1 << 20)
#else
#define COAL_MM_MAX_DIM   INT32_MAX
#define COAL_MM_MAX_DENSE INT64_MAX
#endif

/* Parsed file. Coordinate: n COO triples (0-based) with symmetric / skew-symmetric entries
 * already mirrored (ri, ci, v). Array: the n values in file order (v only; ri, ci NULL),
 * i.e. column-major, lower triangle only for symmetric (diagonal included) and
 * skew-symmetric (diagonal excluded). */
typedef struct coal_mm {
  int format, field, symmetry;
  int64_t nrows, ncols;
  int64_t declared; /* entries on the size line (coordinate) or implied (array) */
  int64_t n, cap;
  int32_t *ri, *ci;
  double *v;
  int64_t size_line; /* line number of the size line */
  int64_t last_line; /* line number just past the end of the input */
} coal_mm;

/* Parses buf[0..len) (no NUL terminator needed). Values must be finite and, for COAL_F32,
 * within single-precision range. Errors name `name` and the line. On failure *mm holds
 * nothing that needs freeing. */
coal_status coal_mm_parse(coal_ctx ctx, const char *name, const char *buf, size_t len,
                          coal_dtype dtype, coal_mm *mm);
void coal_mm_free(coal_mm *mm);

#endif
