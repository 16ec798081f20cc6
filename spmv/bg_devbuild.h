/* spmv/bg_devbuild.h: device builders of the Bell & Garland layouts (ELL, COO, HYB; SC09,
 * sections 3.2, 3.4, 3.5) from the matrix's shared device CSR, shared by the ell, coo and hyb
 * backends (spmv/bg_devbuild.cu). Each builds on the GPU exactly the layout the host builder of
 * spmv/formats.h builds and gs_ell_dev_upload / gs_coo_dev_upload upload: the same arrays byte
 * for byte (order, padding, float rounding), the same counts and the same partition, so that
 * build=device and build=host give the same device bytes and the same products (the whole
 * matrix's COO borrows the CSR's columns and values, equal to the host layout's). Included by
 * .cu files only. Everything runs on ctx->stream; the few scalars the host needs (the longest
 * row, HYB's histogram, COO's entry and touch counts) are read back with a stream sync. Takes
 * only narrow matrices (d_row_ptr32: nnz <= INT32_MAX), as the three backends do. */
#ifndef GS_SPMV_BG_DEVBUILD_H
#define GS_SPMV_BG_DEVBUILD_H

#include "spmv/formats_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The longest row of A (0 for m = 0), read back to the host (one stream sync). */
gs_status_t gs_bg_longest_row(gs_context_t *ctx, const gs_dcsr_t *A, gs_idx_t *max_len);

/** HYB's ELL width as gs_hyb_layout_build chooses it: min(hyb_k, longest row) when hyb_k >= 0,
 *  else gs_hyb_k_rule on A's row-length histogram (built on the device, truncated where the
 *  rule cannot reach, read back: one stream sync). *max_len gets the longest row. */
gs_status_t gs_bg_hyb_width(gs_context_t *ctx, const gs_dcsr_t *A, int hyb_k, gs_idx_t *K,
                            gs_idx_t *max_len);

/** The ELL layout of the first min(K, length) entries of each row into *D, as
 *  gs_ell_layout_build_k then gs_ell_dev_upload make it (values rounded to float when
 *  float_values and there are slots, as gs_ell_layout_round). Asynchronous, no sync. On failure
 *  frees what it allocated and leaves *D zeroed. */
gs_status_t gs_bg_ell_build(gs_context_t *ctx, const gs_dcsr_t *A, gs_idx_t K, int float_values,
                            gs_ell_dev_t *D);

/** The COO layout of the entries of A from position `skip` of each row on into *D, as
 *  gs_coo_layout_build_tail then gs_coo_dev_upload make it (rows_touched, cols_touched, the
 *  persistent-warp partition and the carries included; values rounded to float when
 *  float_values and there are entries). max_len: A's longest row when known, or -1; with
 *  skip >= max_len >= 0 the tail is empty and nothing is read. skip = 0 is
 *  gs_bg_coo_build_shared(ctx, A, -1, float_values, D): A's arrays borrowed. skip > 0 (HYB's
 *  tail) copies columns and values into arrays of its own, syncing the stream once for the
 *  tail's entry count and once at the end (the touch counts). On failure frees what it
 *  allocated and leaves *D zeroed. */
gs_status_t gs_bg_coo_build(gs_context_t *ctx, const gs_dcsr_t *A, gs_idx_t skip,
                            gs_idx_t max_len, int float_values, gs_coo_dev_t *D);

/** The COO layout of all of A's entries on A's own arrays: COO in row-major order is the CSR's
 *  entries in CSR order, so D->d_col = A->d_col and, unless float_values, D->d_val = A->d_val
 *  (D->borrowed: the matrix owning A must outlive D; gs_coo_dev_free leaves them). One pass
 *  writes the row index of every entry (and with float_values the values rounded to float,
 *  D->d_valf, coo's own). touched >= 0: rows_touched = cols_touched = touched, known to the
 *  caller (gs_coo_touched_from_features), and the pass reads only the row pointers; -1: the
 *  pass counts both (the columns through a bitmap, reading col) and one stream sync reads them
 *  back. Byte-identical to gs_coo_layout_build then gs_coo_dev_upload. On failure frees what
 *  it allocated (never the borrowed arrays) and leaves *D zeroed. */
gs_status_t gs_bg_coo_build_shared(gs_context_t *ctx, const gs_dcsr_t *A, gs_idx_t touched,
                                   int float_values, gs_coo_dev_t *D);

/** Defined in coo_kernels.cu: completes a gs_coo_dev_t whose ctx, sizes, counts and arrays are
 *  set: the persistent-warp partition for the device's occupancy of the instantiation that will
 *  run (float values when `rounded`), the carries, val_bytes, bytes and vec_bytes. What it
 *  allocates is freed by gs_coo_dev_free. */
gs_status_t gs_coo_dev_plan(gs_context_t *ctx, gs_coo_dev_t *D, int rounded);

#ifdef __cplusplus
}
#endif
#endif
