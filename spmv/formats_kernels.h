/* spmv/formats_kernels.h: device halves of the COO and ELL layouts and their launchers, shared by
 * the coo, ell and hyb backends (HYB runs the ELL and COO kernels on its two parts). Included by
 * .cu files only; the functions are extern "C" host functions defined in coo_kernels.cu and
 * ell_kernels.cu. Every launcher is asynchronous on ctx->stream, never allocates, and returns
 * the launch status (GS_CHECK_LAUNCH). */
#ifndef GS_SPMV_FORMATS_KERNELS_H
#define GS_SPMV_FORMATS_KERNELS_H

#include "spmv/formats.h"
#include "spmv/spmv_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Threads per block of every kernel of these formats (8 warps). */
#define GS_FMT_BLOCK 256

/** COO on the device: the layout plus the persistent-warp partition and its carry temporaries
 *  (one (row, partial sum) per warp, sized in prepare, written by the main kernel and consumed
 *  by the update kernel of the same apply). */
typedef struct gs_coo_dev {
  gs_context_t *ctx; /* the context of the upload (frees go through it) */
  gs_idx_t m, n, nnz;
  gs_idx_t rows_touched, cols_touched; /* from the layout, for the byte model */
  gs_idx_t warps;           /* persistent warps (gs_coo_partition) */
  int64_t interval;         /* entries per warp, a multiple of 32 */
  gs_idx_t *d_row, *d_col;  /* nnz */
  gs_val_t *d_val;          /* nnz, or NULL in a rounded upload */
  float *d_valf;            /* nnz in a rounded upload (a layout rounded by gs_coo_layout_round) */
  int borrowed;             /* d_col and d_val (when set) are the matrix's shared device CSR
                               arrays (the whole matrix in CSR order, gs_bg_coo_build with
                               skip 0): the matrix owns and outlives them, gs_coo_dev_free
                               leaves them; d_row, d_valf and the carries are always owned */
  size_t val_bytes;         /* bytes of one stored value: 8, or 4 in a rounded upload */
  gs_idx_t *d_carry_row;    /* warps */
  void *d_carry_val;        /* warps doubles: the partial sums in the vector type (double, or
                               float in a float product) */
  size_t bytes;             /* device bytes a product reads: the borrowed arrays counted once
                               here, as csr-vector counts the shared CSR, plus the carries */
  size_t vec_bytes;         /* bytes of a vector entry in the byte model: 8 from the upload, 4
                               when the backend applies it to float vectors (precision=float) */
} gs_coo_dev_t;

/** Uploads L and allocates the carries for the device's occupancy. The values go up in the
 *  layout's precision (valf when it was rounded: the kernels then read floats). On failure
 *  frees what it allocated and leaves *D zeroed. */
gs_status_t gs_coo_dev_upload(gs_context_t *ctx, const gs_coo_layout_t *L, gs_coo_dev_t *D);
void gs_coo_dev_free(gs_coo_dev_t *D);
/** d_y += alpha * A * d_x (main segmented-reduction kernel + carry update kernel). For
 *  d_y = alpha*A*d_x + beta*d_y run gs_launch_scale (common_kernels.h) first. */
gs_status_t gs_coo_dev_accumulate(gs_context_t *ctx, const gs_coo_dev_t *D, double alpha,
                                  const double *d_x, double *d_y);
/** d_y += alpha * A^T * d_x (one thread per entry, atomicAdd). */
gs_status_t gs_coo_dev_accumulate_t(gs_context_t *ctx, const gs_coo_dev_t *D, double alpha,
                                    const double *d_x, double *d_y);

/** ELL on the device: the column-major arrays of gs_ell_layout_t. */
typedef struct gs_ell_dev {
  gs_context_t *ctx; /* the context of the upload (frees go through it) */
  gs_idx_t m, n, K;
  int64_t pitch;
  gs_idx_t *d_col;  /* pitch * K, GS_ELL_PAD in padding slots */
  gs_val_t *d_val;  /* pitch * K, or NULL in a rounded upload */
  float *d_valf;    /* pitch * K in a rounded upload (a layout rounded by gs_ell_layout_round) */
  size_t val_bytes; /* bytes of one stored value: 8, or 4 in a rounded upload */
  size_t bytes;
} gs_ell_dev_t;

/** Uploads L, values in the layout's precision (valf when it was rounded). */
gs_status_t gs_ell_dev_upload(gs_context_t *ctx, const gs_ell_layout_t *L, gs_ell_dev_t *D);
void gs_ell_dev_free(gs_ell_dev_t *D);
/** d_y = alpha * A * d_x + beta * d_y, one thread per row (K = 0 gives d_y = beta * d_y). */
gs_status_t gs_ell_dev_apply(gs_context_t *ctx, const gs_ell_dev_t *D, double alpha,
                             const double *d_x, double beta, double *d_y);
/** d_y += alpha * A^T * d_x, one thread per row scattering its K slots with atomicAdd. */
gs_status_t gs_ell_dev_accumulate_t(gs_context_t *ctx, const gs_ell_dev_t *D, double alpha,
                                    const double *d_x, double *d_y);

#ifdef __cplusplus
}

/* The float-precision launchers (float vectors and arithmetic on a rounded layout) under the
 * double ones' names, so that one template body on the vector type serves both (C++ linkage:
 * .cu files only). */
gs_status_t gs_coo_dev_accumulate(gs_context_t *ctx, const gs_coo_dev_t *D, float alpha,
                                  const float *d_x, float *d_y);
gs_status_t gs_coo_dev_accumulate_t(gs_context_t *ctx, const gs_coo_dev_t *D, float alpha,
                                    const float *d_x, float *d_y);
gs_status_t gs_ell_dev_apply(gs_context_t *ctx, const gs_ell_dev_t *D, float alpha,
                             const float *d_x, float beta, float *d_y);
gs_status_t gs_ell_dev_accumulate_t(gs_context_t *ctx, const gs_ell_dev_t *D, float alpha,
                                    const float *d_x, float *d_y);
#endif
#endif
