/* coalesce device arrays: memory of a context's backend, for code that keeps its own data
 * there next to the library's objects (the PETSc plugin's vectors and product workspaces).
 *
 * An array here lives where the context's objects live: device memory on a CUDA context, host
 * memory on a host context. Every function works on both backends, so the caller needs no
 * backend branch of its own. Work is queued on the context's stream in call order; a call
 * that hands a result to the host (download, dots, norms) returns when it is there.
 * coal_bvec_view wraps such an array as a block vector, so that it takes part in coal_spmm and
 * the other block operations of coalesce.h, and coal_bvec_data gives the array of any block.
 * Arrays are of fp64 for the single-vector operations; n counts entries, bytes count bytes.
 */
#ifndef COALESCE_DEVICE_H
#define COALESCE_DEVICE_H

#include "coalesce.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- memory ---------------------------------------------------------------------------- */
/* bytes of the context's memory, zero-filled. bytes == 0 gives a valid (freeable) array. */
coal_status coal_device_alloc(coal_ctx ctx, size_t bytes, void **p);
/* Frees an array of coal_device_alloc (NULL: nothing). */
void coal_device_free(coal_ctx ctx, void *p);
/* Host -> context memory and context memory -> host; both return when the copy is done, so
 * the host side may be reused or read at once. */
coal_status coal_device_upload(coal_ctx ctx, void *dst, const void *src, size_t bytes);
coal_status coal_device_download(coal_ctx ctx, void *dst, const void *src, size_t bytes);
/* Within the context's memory, queued; dst and src do not overlap unless equal (nothing to
 * do then). */
coal_status coal_device_copy(coal_ctx ctx, void *dst, const void *src, size_t bytes);

/* Page-locks an existing host range, so that uploads from it and downloads into it run at the
 * bus speed instead of through the driver's pageable staging. The caller keeps the range alive
 * and unregisters it before it is freed. COAL_ERR_UNSUPPORTED when the range cannot be
 * registered (a host context, a build without CUDA, a range already registered): the copies
 * then go through pageable memory, slower but correct. */
coal_status coal_host_register(coal_ctx ctx, void *p, size_t bytes);
/* Undoes coal_host_register (NULL or a range never registered: nothing). Needs no context, so
 * that it may run after the context is destroyed. */
void coal_host_unregister(void *p);

/* A block object over existing storage in the context's memory (no copy, no ownership): n x k
 * of dtype in layout with leading dimension ld (0: tight), as coal_bvec_create makes it.
 * coal_bvec_destroy frees the object and leaves data alone. */
coal_status coal_bvec_view(coal_ctx ctx, int64_t n, int64_t k, coal_dtype dtype, coal_layout layout,
                           int64_t ld, void *data, coal_bvec *X);

/* ---- residency statistics ------------------------------------------------------------- *
 * What the context's backend moved to keep its matrices' device copies current, counted since
 * the context was created. Only matrix data counts (the CSR, its values and formats built on
 * the host and uploaded), not the arrays above or block vectors. A values-only change
 * (coal_mat_set_values, or PETSc's MatScale on -mat_type swift) costs one values upload of
 * nnz * sizeof(value) bytes at the next product and a rebuild of the formats that hold values;
 * the structure and the structure-only arrays stay on the device. A host context moves nothing:
 * its counters stay zero. */
typedef struct coal_device_stats {
  uint64_t upload_bytes;   /* matrix bytes copied host -> device */
  uint64_t full_uploads;   /* whole CSR uploads (structure and values) */
  uint64_t values_uploads; /* values-only uploads (nnz * sizeof(value) bytes each) */
  uint64_t formats_built;  /* derived device formats (FastLoad, Swift) built or uploaded */
} coal_device_stats;
/* Copies the context's counters into *s. */
coal_status coal_device_stats_get(coal_ctx ctx, coal_device_stats *s);

/* ---- single fp64 vectors of n contiguous entries in the context's memory ------------------ */
/* z = a*x + b*y + c*z + d, entry by entry. x == NULL: no a*x term; y == NULL: no b*y term;
 * c == 0: z is written without being read (NaN in z does not survive). x, y and z may be the
 * same array (each entry is read before it is written). Queued. */
coal_status coal_device_axpbypcz(coal_ctx ctx, int64_t n, double a, const double *x, double b,
                                 const double *y, double c, double *z, double d);
/* w = x .* y (COAL_POINTWISE_MULT) or w = x ./ y with w_i = 0 where y_i == 0
 * (COAL_POINTWISE_DIV, as PETSc's VecPointwiseDivide). w may be x or y. Queued. */
typedef enum { COAL_POINTWISE_MULT = 0, COAL_POINTWISE_DIV = 1 } coal_pointwise_op;
coal_status coal_device_pointwise(coal_ctx ctx, int64_t n, coal_pointwise_op op, const double *x,
                                  const double *y, double *w);
/* out[j] = sum_i x_i * ys[j][i] for j < k: ys is a host array of k vectors of the context's
 * memory, out a host array of k. Sums in double, in index order on the host (another order on
 * the GPU: equal to rounding). Returns when out is on the host. */
coal_status coal_device_dots(coal_ctx ctx, int64_t n, int64_t k, const double *x,
                             const double *const *ys, double *out);
/* out[0] = sum_i |x_i|, out[1] = sum_i (s*x_i)^2, out[2] = max_i |x_i|, NaN when some x_i is
 * NaN (out: a host array of 3). s rescales the sum of squares against overflow and underflow
 * (call again with s = 1/out[2] when the first sum is not usable). Returns when out is on the
 * host. */
coal_status coal_device_norms(coal_ctx ctx, int64_t n, const double *x, double s, double *out);

#ifdef __cplusplus
}
#endif
#endif
