/* CSR <-> tile conversion on the GPU, bit-identical to the host builder
 * (kernels/host/tile_build.c).
 *
 * CSR -> tiles, from a matrix's device CSR (rows sorted, columns unique):
 *  1. a CTA per tile row lists its distinct tile columns (colind >> 4 over the tile row's 16
 *     rows, one contiguous CSR range) with the bitmap accumulator of tile_bitmap.cuh: count
 *     pass, scan -> tile_ptr, fill pass -> tile_col (ascending) and each tile's row;
 *  2. a thread per row walks its columns and the tile row's tile list together (both ascend)
 *     and writes the row's mask in each tile it meets (masks start zeroed);
 *  3. a thread per tile: 8-bit row offsets and the tile's count (popcounts), scan -> tile_nnz;
 *  4. a thread per row again: local index, value and CSR position of every entry at
 *     tile_nnz + row offset + rank in the row's run;
 *  5. (B of a product) the tile CSC index: a stable radix sort of the tile columns with the
 *     tile numbers as values (tile rows stay ascending within a column), a binary search per
 *     tile column for csc_ptr.
 * Traffic: colind read three times (steps 1-2 twice for the two passes, 4 once more with the
 * values), per nonzero 1 B index + value + 4 B position written; per tile ~56 B.
 *
 * Tiles -> CSR: row lengths from the masks, scan, then a thread per row copies its entries
 * tile by tile (columns ascend because tile columns do). */
#include "spgemm_tile.cuh"
#include "tile_bitmap.cuh"

#include <cub/device/device_radix_sort.cuh>
#include <string.h>

using namespace coal_spgemm_dev;

namespace {

using namespace coal_tile_bitmap;
constexpr int kTile = COAL_TILE_DIM;

template <bool FILL>
__global__ __launch_bounds__(kThreads) void tcols_kernel(
    int32_t nrows, const int32_t *__restrict__ rowptr, const int32_t *__restrict__ colind,
    int32_t *__restrict__ cnt, unsigned long long *__restrict__ total,
    const int32_t *__restrict__ t_ptr, int32_t *__restrict__ t_col, int32_t *__restrict__ t_row) {
  __shared__ uint32_t bits[kWords];
  __shared__ int32_t red[kWarps];
  const int32_t I = (int32_t)blockIdx.x;
  const int tid = (int)threadIdx.x;
  const int32_t i0 = I * kTile, i1 = i0 + kTile < nrows ? i0 + kTile : nrows;
  const int32_t p0 = rowptr[i0], p1 = rowptr[i1];
  int32_t lo = INT_MAX, hi = -1; /* columns ascend within a row: first and last bound it */
  if (tid < i1 - i0) {
    const int32_t a = rowptr[i0 + tid], b = rowptr[i0 + tid + 1];
    if (a < b) lo = colind[a] / kTile, hi = colind[b - 1] / kTile;
  }
  lo = block_reduce(lo, red, MinOp());
  hi = block_reduce(hi, red, MaxOp());
  const int32_t n = bitmap_collect<FILL>(
      I, lo, hi,
      [&](auto &&mark) {
        for (int32_t p = p0 + tid; p < p1; p += kThreads) mark(colind[p] / kTile);
      },
      bits, red, FILL ? (int64_t)t_ptr[I] : 0, t_col, t_row);
  if (!FILL && tid == 0) {
    cnt[I] = n;
    if (n) atomicAdd(total, (unsigned long long)n);
  }
}

/* Row i's mask in every tile of its tile row that it meets. */
__global__ void tmask_kernel(int32_t nrows, const int32_t *__restrict__ rowptr,
                             const int32_t *__restrict__ colind, const int32_t *__restrict__ t_ptr,
                             const int32_t *__restrict__ t_col, uint16_t *__restrict__ mask) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= nrows) return;
  const int32_t r = (int32_t)(i % kTile);
  int32_t k = t_ptr[i / kTile], cur = -1;
  unsigned m = 0;
  for (int32_t p = rowptr[i]; p < rowptr[i + 1]; p++) {
    const int32_t J = colind[p] / kTile;
    if (J != cur) {
      if (cur >= 0) mask[(size_t)k * kTile + (size_t)r] = (uint16_t)m;
      while (t_col[k] < J) k++; /* J is listed: the walk stays in the tile row */
      cur = J, m = 0;
    }
    m |= 1u << (colind[p] % kTile);
  }
  if (cur >= 0) mask[(size_t)k * kTile + (size_t)r] = (uint16_t)m;
}

/* 8-bit row offsets and nonzero count of every tile. */
__global__ void tcount_kernel(int32_t ntiles, const uint16_t *__restrict__ mask,
                              uint8_t *__restrict__ row_ptr, int32_t *__restrict__ cnt) {
  const int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (q >= ntiles) return;
  int32_t off = 0;
  for (int r = 0; r < kTile; r++) {
    row_ptr[q * kTile + r] = (uint8_t)off;
    off += __popc((unsigned)mask[q * kTile + r]);
  }
  cnt[q] = off;
}

/* Local index, value and CSR position of every entry. */
template <typename T>
__global__ void tfill_kernel(int32_t nrows, const int32_t *__restrict__ rowptr,
                             const int32_t *__restrict__ colind, const T *__restrict__ val,
                             const int32_t *__restrict__ t_ptr, const int32_t *__restrict__ t_col,
                             const int32_t *__restrict__ t_nnz, const uint8_t *__restrict__ row_ptr,
                             uint8_t *__restrict__ idx, T *__restrict__ tval,
                             int32_t *__restrict__ pos) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= nrows) return;
  const int32_t r = (int32_t)(i % kTile);
  int32_t k = t_ptr[i / kTile], cur = -1;
  int64_t e = 0;
  for (int32_t p = rowptr[i]; p < rowptr[i + 1]; p++) {
    const int32_t c = colind[p], J = c / kTile;
    if (J != cur) {
      while (t_col[k] < J) k++;
      cur = J;
      e = (int64_t)t_nnz[k] + row_ptr[(size_t)k * kTile + (size_t)r];
    }
    idx[e] = (uint8_t)((r << 4) | (c % kTile));
    tval[e] = val[p];
    if (pos) pos[e] = p;
    e++;
  }
}

__global__ void iota_kernel(int32_t n, int32_t *__restrict__ v) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] = (int32_t)i;
}

/* csc_ptr[J] = first position of a key >= J in the sorted tile columns; csc_row from t_row. */
__global__ void csc_kernel(int32_t tn, int32_t ntiles, const uint32_t *__restrict__ keys,
                           const int32_t *__restrict__ id, const int32_t *__restrict__ t_row,
                           int32_t *__restrict__ csc_ptr, int32_t *__restrict__ csc_row) {
  const int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (j <= tn) {
    int32_t x = 0, y = ntiles;
    while (x < y) {
      const int32_t mid = x + ((y - x) >> 1);
      if ((int64_t)keys[mid] < j)
        x = mid + 1;
      else
        y = mid;
    }
    csc_ptr[j] = x;
  }
  if (j < ntiles) csc_row[j] = t_row[id[j]];
}

/* Tiles -> CSR: row i's entries, tile by tile. */
template <typename T>
__global__ void to_csr_kernel(int32_t nrows, const int32_t *__restrict__ t_ptr,
                              const int32_t *__restrict__ t_col, const int32_t *__restrict__ t_nnz,
                              const uint8_t *__restrict__ row_ptr,
                              const uint16_t *__restrict__ mask, const uint8_t *__restrict__ idx,
                              const T *__restrict__ tval, const int32_t *__restrict__ rowptr,
                              int32_t *__restrict__ colind, T *__restrict__ val) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= nrows) return;
  const int32_t I = (int32_t)(i / kTile), r = (int32_t)(i % kTile);
  int32_t o = rowptr[i];
  for (int32_t q = t_ptr[I]; q < t_ptr[I + 1]; q++) {
    const size_t qr = (size_t)q * kTile + (size_t)r;
    const int64_t e0 = (int64_t)t_nnz[q] + row_ptr[qr], e1 = e0 + __popc((unsigned)mask[qr]);
    for (int64_t e = e0; e < e1; e++, o++) {
      colind[o] = t_col[q] * kTile + (idx[e] & 15);
      val[o] = tval[e];
    }
  }
}

unsigned grid_of(int64_t work, int64_t per) {
  const int64_t g = (work + per - 1) / per;
  return (unsigned)(g < 1 ? 1 : g);
}

/* Tile CSC index of t (tile rows in t_row). */
coal_status build_csc(coal_ctx ctx, Dev *d, struct coal_tile_dev *t, const int32_t *t_row) {
  cudaStream_t s = coal_stream(ctx);
  const size_t nt = (size_t)t->ntiles;
  int32_t *ids = NULL;
  uint32_t *keys = NULL;
  void *tmp = NULL;
  size_t bytes = 0;
  int bit = 1;
  while (bit < 31 && ((int64_t)1 << bit) <= (int64_t)t->tn) bit++;
  coal_status st;
  COAL_CALL(dalloc_n(ctx, d, (size_t)t->tn + 1, &t->csc_ptr));
  COAL_CALL(dalloc_n(ctx, d, nt, &t->csc_row));
  COAL_CALL(dalloc_n(ctx, d, nt, &t->csc_id));
  COAL_CALL_GOTO(st, dalloc_n(ctx, d, nt, &ids), done);
  COAL_CALL_GOTO(st, dalloc_n(ctx, d, nt, &keys), done);
  if (nt) {
    iota_kernel<<<grid_of((int64_t)nt, COAL_CUDA_CTA), COAL_CUDA_CTA, 0, s>>>(t->ntiles, ids);
    COAL_CALL_GOTO(st, launch_check(ctx), done);
    COAL_CALL_GOTO(st,
                   cuda_call(ctx, cub::DeviceRadixSort::SortPairs(
                                      nullptr, bytes, (const uint32_t *)t->tile_col, keys, ids,
                                      t->csc_id, t->ntiles, 0, bit, s)),
                   done);
    COAL_CALL_GOTO(st, dalloc(ctx, d, bytes, &tmp), done);
    COAL_CALL_GOTO(
        st,
        cuda_call(ctx, cub::DeviceRadixSort::SortPairs(tmp, bytes, (const uint32_t *)t->tile_col,
                                                       keys, ids, t->csc_id, t->ntiles, 0, bit, s)),
        done);
  }
  csc_kernel<<<grid_of((int64_t)t->tn + 1 > (int64_t)nt ? (int64_t)t->tn + 1 : (int64_t)nt,
                       COAL_CUDA_CTA),
               COAL_CUDA_CTA, 0, s>>>(t->tn, t->ntiles, keys, t->csc_id, t_row, t->csc_ptr,
                                      t->csc_row);
  COAL_CALL_GOTO(st, launch_check(ctx), done);
  COAL_CALL_GOTO(st, sync(ctx), done); /* the temporaries are freed next */
done : {
  char *tp = (char *)tmp;
  dfree(d, &tp, bytes);
}
  dfree(d, &ids, nt);
  dfree(d, &keys, nt);
  return st;
}

template <typename T>
coal_status fill(coal_ctx ctx, coal_mat A, const struct coal_mat_cuda *m, struct coal_tile_dev *t) {
  if (A->nrows == 0) return COAL_SUCCESS;
  tfill_kernel<T><<<grid_of(A->nrows, COAL_CUDA_CTA), COAL_CUDA_CTA, 0, coal_stream(ctx)>>>(
      A->nrows, m->rowptr, m->colind, (const T *)m->values, t->tile_ptr, t->tile_col, t->tile_nnz,
      t->row_ptr, t->idx, (T *)t->val, t->csr_pos);
  return launch_check(ctx);
}

} // namespace

coal_status coal_tile_build_cuda(coal_mat A, Dev *d, int with_csc, struct coal_tile_dev *t) {
  coal_ctx ctx = A->ctx;
  cudaStream_t s = coal_stream(ctx);
  COAL_CALL(coal_mat_prepare_cuda(A));
  const struct coal_mat_cuda *m = A->dev;
  const int32_t nrows = A->nrows;
  memset(t, 0, sizeof *t);
  t->nrows = nrows, t->ncols = A->ncols, t->nnz = A->nnz;
  t->tm = coal_tile_count(nrows), t->tn = coal_tile_count(A->ncols);
  const size_t tm1 = (size_t)t->tm + 1, nz = (size_t)A->nnz, es = coal_dtype_size(A->dtype);
  int32_t *cnt = NULL, *t_row = NULL;
  size_t cnt_n = tm1;
  int64_t ntiles = 0;
  coal_status st;
  /* 1. tile layout */
  COAL_CALL(dalloc_n(ctx, d, tm1, &t->tile_ptr));
  COAL_CALL_GOTO(st, dalloc_n(ctx, d, tm1, &cnt), done);
  COAL_CALL_GOTO(st, zero(ctx, cnt, sizeof(int32_t) * tm1), done);
  if (t->tm) {
    tcols_kernel<false><<<(unsigned)t->tm, kThreads, 0, s>>>(nrows, m->rowptr, m->colind, cnt,
                                                             d->d_total, NULL, NULL, NULL);
    COAL_CALL_GOTO(st, launch_check(ctx), done);
  }
  COAL_CALL_GOTO(st, scan(ctx, d, cnt, t->tile_ptr, (int64_t)tm1), done);
  COAL_CALL_GOTO(st, read_total(ctx, d, &ntiles), done);
  dfree(d, &cnt, cnt_n);
  COAL_CHECK(ctx, ntiles < INT32_MAX, COAL_ERR_OVERFLOW, "%lld tiles exceed 2^31-2",
             (long long)ntiles);
  t->ntiles = (int32_t)ntiles;
  {
    const size_t nt = (size_t)ntiles;
    COAL_CALL(dalloc_n(ctx, d, nt, &t->tile_col));
    COAL_CALL_GOTO(st, dalloc_n(ctx, d, nt, &t_row), done);
    if (t->tm) {
      tcols_kernel<true><<<(unsigned)t->tm, kThreads, 0, s>>>(
          nrows, m->rowptr, m->colind, NULL, NULL, t->tile_ptr, t->tile_col, t_row);
      COAL_CALL_GOTO(st, launch_check(ctx), done);
    }
    /* 2-3. masks, row offsets, tile_nnz */
    COAL_CALL_GOTO(st, dalloc_n(ctx, d, kTile * nt, &t->mask), done);
    COAL_CALL_GOTO(st, dalloc_n(ctx, d, kTile * nt, &t->row_ptr), done);
    COAL_CALL_GOTO(st, dalloc_n(ctx, d, nt + 1, &t->tile_nnz), done);
    cnt_n = nt + 1;
    COAL_CALL_GOTO(st, dalloc_n(ctx, d, cnt_n, &cnt), done);
    COAL_CALL_GOTO(st, zero(ctx, t->mask, sizeof(uint16_t) * kTile * nt), done);
    COAL_CALL_GOTO(st, zero(ctx, cnt, sizeof(int32_t) * (nt + 1)), done);
    if (nrows) {
      tmask_kernel<<<grid_of(nrows, COAL_CUDA_CTA), COAL_CUDA_CTA, 0, s>>>(
          nrows, m->rowptr, m->colind, t->tile_ptr, t->tile_col, t->mask);
      COAL_CALL_GOTO(st, launch_check(ctx), done);
    }
    if (nt) {
      tcount_kernel<<<grid_of((int64_t)nt, COAL_CUDA_CTA), COAL_CUDA_CTA, 0, s>>>(
          t->ntiles, t->mask, t->row_ptr, cnt);
      COAL_CALL_GOTO(st, launch_check(ctx), done);
    }
    COAL_CALL_GOTO(st, scan(ctx, d, cnt, t->tile_nnz, (int64_t)nt + 1), done);
    /* 4. entries */
    COAL_CALL_GOTO(st, dalloc_n(ctx, d, nz, &t->idx), done);
    {
      char *v = NULL;
      COAL_CALL_GOTO(st, dalloc_n(ctx, d, es * nz, &v), done);
      t->val = v;
    }
    COAL_CALL_GOTO(st, dalloc_n(ctx, d, nz, &t->csr_pos), done);
    COAL_CALL_GOTO(
        st, A->dtype == COAL_F64 ? fill<double>(ctx, A, m, t) : fill<float>(ctx, A, m, t), done);
    /* 5. CSC index */
    if (with_csc) COAL_CALL_GOTO(st, build_csc(ctx, d, t, t_row), done);
    COAL_CALL_GOTO(st, sync(ctx), done); /* cnt and t_row are freed next */
  }
  st = COAL_SUCCESS;
done:
  dfree(d, &cnt, cnt_n);
  dfree(d, &t_row, (size_t)t->ntiles);
  return st;
}

coal_status coal_tile_to_csr_cuda(coal_ctx ctx, Dev *d, const struct coal_tile_dev *t,
                                  coal_dtype dt, int32_t *rowptr, int32_t *colind, void *val) {
  cudaStream_t s = coal_stream(ctx);
  const size_t n1 = (size_t)t->nrows + 1;
  int32_t *len = NULL;
  coal_status st;
  COAL_CALL(dalloc_n(ctx, d, n1, &len));
  COAL_CALL_GOTO(st, zero(ctx, len, sizeof(int32_t) * n1), done);
  COAL_CALL_GOTO(st, coal_spgemm_row_len_cuda(ctx, t->nrows, t->tile_ptr, t->mask, len), done);
  COAL_CALL_GOTO(st, scan(ctx, d, len, rowptr, (int64_t)n1), done);
  if (t->nrows) {
    if (dt == COAL_F64)
      to_csr_kernel<double><<<grid_of(t->nrows, COAL_CUDA_CTA), COAL_CUDA_CTA, 0, s>>>(
          t->nrows, t->tile_ptr, t->tile_col, t->tile_nnz, t->row_ptr, t->mask, t->idx,
          (const double *)t->val, rowptr, colind, (double *)val);
    else
      to_csr_kernel<float><<<grid_of(t->nrows, COAL_CUDA_CTA), COAL_CUDA_CTA, 0, s>>>(
          t->nrows, t->tile_ptr, t->tile_col, t->tile_nnz, t->row_ptr, t->mask, t->idx,
          (const float *)t->val, rowptr, colind, (float *)val);
    COAL_CALL_GOTO(st, launch_check(ctx), done);
  }
  COAL_CALL_GOTO(st, sync(ctx), done);
done:
  dfree(d, &len, n1);
  return st;
}

void coal_tile_dev_free(struct coal_tile_dev *t) {
  coal_cuda_free(t->tile_ptr), coal_cuda_free(t->tile_col), coal_cuda_free(t->tile_nnz);
  coal_cuda_free(t->row_ptr), coal_cuda_free(t->mask), coal_cuda_free(t->idx);
  coal_cuda_free(t->val), coal_cuda_free(t->csr_pos), coal_cuda_free(t->csc_ptr);
  coal_cuda_free(t->csc_row), coal_cuda_free(t->csc_id);
  memset(t, 0, sizeof *t);
}

/* Test hook (kernels/spgemm.h): GPU tiles of A and the CSR converted back on the GPU. */
coal_status coal_tile_roundtrip_cuda(coal_mat A, coal_tile **out, int32_t **rowptr,
                                     int32_t **colind, void **values) {
  if (!A || !out || !rowptr || !colind || !values) return COAL_ERR_ARG;
  coal_ctx ctx = A->ctx;
  *out = NULL, *rowptr = NULL, *colind = NULL, *values = NULL;
  COAL_CHECK(ctx, ctx->backend == COAL_BACKEND_CUDA, COAL_ERR_ARG, "not a CUDA matrix");
  Dev dv;
  memset(&dv, 0, sizeof dv);
  Dev *d = &dv;
  struct coal_tile_dev t;
  memset(&t, 0, sizeof t);
  coal_tile *h = NULL;
  int32_t *drp = NULL, *dci = NULL, *hrp = NULL, *hci = NULL;
  void *dva = NULL, *hva = NULL;
  const size_t es = coal_dtype_size(A->dtype), nz = (size_t)A->nnz, n1 = (size_t)A->nrows + 1;
  coal_status st;
  COAL_CALL_GOTO(st, dalloc_n(ctx, d, 1, &d->d_total), done);
  COAL_CALL_GOTO(st, zero(ctx, d->d_total, sizeof(unsigned long long)), done);
  COAL_CALL_GOTO(st, coal_tile_build_cuda(A, d, 1, &t), done);
  {
    const size_t nt = (size_t)t.ntiles;
    COAL_CALL_GOTO(st, coal_tile_alloc_layout(ctx, A->nrows, A->ncols, t.ntiles, A->dtype, &h),
                   done);
    h->nnz = t.nnz;
    COAL_CALL_GOTO(st, coal_malloc(ctx, nz, (void **)&h->idx), done);
    COAL_CALL_GOTO(st, coal_malloc(ctx, es * nz, &h->val), done);
    COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * nz, (void **)&h->csr_pos), done);
    COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * ((size_t)t.tn + 1), (void **)&h->csc_ptr),
                   done);
    COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * nt, (void **)&h->csc_row), done);
    COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * nt, (void **)&h->csc_id), done);
    COAL_CALL_GOTO(st, d2h(ctx, h->tile_ptr, t.tile_ptr, sizeof(int32_t) * ((size_t)t.tm + 1)),
                   done);
    COAL_CALL_GOTO(st, d2h(ctx, h->tile_col, t.tile_col, sizeof(int32_t) * nt), done);
    COAL_CALL_GOTO(st, d2h(ctx, h->tile_nnz, t.tile_nnz, sizeof(int32_t) * (nt + 1)), done);
    COAL_CALL_GOTO(st, d2h(ctx, h->row_ptr, t.row_ptr, COAL_TILE_DIM * nt), done);
    COAL_CALL_GOTO(st, d2h(ctx, h->mask, t.mask, sizeof(uint16_t) * COAL_TILE_DIM * nt), done);
    COAL_CALL_GOTO(st, d2h(ctx, h->idx, t.idx, nz), done);
    COAL_CALL_GOTO(st, d2h(ctx, h->val, t.val, es * nz), done);
    COAL_CALL_GOTO(st, d2h(ctx, h->csr_pos, t.csr_pos, sizeof(int32_t) * nz), done);
    COAL_CALL_GOTO(st, d2h(ctx, h->csc_ptr, t.csc_ptr, sizeof(int32_t) * ((size_t)t.tn + 1)), done);
    COAL_CALL_GOTO(st, d2h(ctx, h->csc_row, t.csc_row, sizeof(int32_t) * nt), done);
    COAL_CALL_GOTO(st, d2h(ctx, h->csc_id, t.csc_id, sizeof(int32_t) * nt), done);
  }
  COAL_CALL_GOTO(st, dalloc_n(ctx, d, n1, &drp), done);
  COAL_CALL_GOTO(st, dalloc_n(ctx, d, nz, &dci), done);
  COAL_CALL_GOTO(st, dalloc(ctx, d, es * nz, &dva), done);
  COAL_CALL_GOTO(st, coal_tile_to_csr_cuda(ctx, d, &t, A->dtype, drp, dci, dva), done);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * n1, (void **)&hrp), done);
  COAL_CALL_GOTO(st, coal_malloc(ctx, sizeof(int32_t) * nz, (void **)&hci), done);
  COAL_CALL_GOTO(st, coal_malloc(ctx, es * nz, &hva), done);
  COAL_CALL_GOTO(st, d2h(ctx, hrp, drp, sizeof(int32_t) * n1), done);
  COAL_CALL_GOTO(st, d2h(ctx, hci, dci, sizeof(int32_t) * nz), done);
  COAL_CALL_GOTO(st, d2h(ctx, hva, dva, es * nz), done);
  COAL_CALL_GOTO(st, sync(ctx), done);
  *out = h, *rowptr = hrp, *colind = hci, *values = hva;
  h = NULL, hrp = NULL, hci = NULL, hva = NULL;
done:
  coal_tile_free(h);
  coal_free(hrp), coal_free(hci), coal_free(hva);
  coal_cuda_free(drp), coal_cuda_free(dci), coal_cuda_free(dva), coal_cuda_free(d->d_total);
  coal_cuda_free(d->cub_tmp);
  coal_tile_dev_free(&t);
  return st;
}
