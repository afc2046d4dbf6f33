/* Keys of the entries that the kernels hang on a matrix (the derived-format cache of
 * src/internal.h, coal_mat_format_*). One key per kind of entry; the comment names its type,
 * where it is made and its flags. Adding a kernel with a per-matrix format adds a key here and
 * touches no matrix struct. */
#ifndef COAL_KERNELS_FORMATS_H
#define COAL_KERNELS_FORMATS_H

enum coal_format_key {
  /* host formats, built by the host builders (kernels/host/X_build.c), VALUES */
  COAL_FMT_FASTLOAD = 1, /* coal_fastload, scatter: lanes = columns (kernels/fastload.h) */
  COAL_FMT_FASTLOAD_T,   /* coal_fastload, gather: lanes = rows */
  COAL_FMT_SWIFT,        /* coal_swift (kernels/swift.h) */
  /* settings (an int each, coal_mat_setting), no flags */
  COAL_FMT_FASTLOAD_HEIGHT, /* FastLoad block height limit (coal_mat_set_fastload_height) */
  COAL_FMT_SWIFT_HEIGHT,    /* Swift block height limit (coal_mat_set_swift_height) */
  /* device state of the CUDA kernels (kernels/cuda/cuda_internal.h), DEVICE */
  COAL_FMT_CUDA_FASTLOAD,   /* struct coal_fastload_dev, scatter, DEVICE | VALUES */
  COAL_FMT_CUDA_FASTLOAD_T, /* struct coal_fastload_dev, gather and its schedule, DEVICE | VALUES */
  COAL_FMT_CUDA_SWIFT,      /* struct coal_swift_dev (spmm_swift.cu), DEVICE | VALUES */
  COAL_FMT_CUDA_MERGE,      /* struct coal_merge_dev: merge-path tile starts and carries
                               (spmv_merge.cu, spmm_merge.cu), DEVICE, structure only */
  COAL_FMT_CUDA_LONG_ROWS,  /* struct coal_long_rows_dev: row-split's long-row segment lists
                               (spmm_long.cu), DEVICE, structure only */
};

#endif
