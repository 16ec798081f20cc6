/* spmv/sell_devbuild.h: the sliced ELLPACK layouts of spmv/sell.h (cuSPARSE's SELL and the
 * SELL-P of spmv/sellp.h) built on the GPU from the matrix's shared device CSR, byte for byte
 * the layout gs_sell_build_p makes on the host: the same stored row order (rows sorted by
 * decreasing length, stable, inside windows of sigma rows; no permutation when no window moves a
 * row), the same slice widths, offsets, padding (column -1, value 0) and the same refusals with
 * the same messages. Pure C interface; the kernels are in spmv/sell_devbuild.cu. Internal.
 *
 * Steps (each asynchronous on ctx's stream except where a scalar is read back):
 *   gs_sell_dev_lengths   row lengths, the longest row and the smallest trailing-zero count of
 *                         a row longer than the row before it (1 read-back)
 *   gs_sell_dev_moves     whether sorting in windows of sigma rows moves a row (from the
 *                         lengths' summary for power-of-two and whole-matrix windows, else 1
 *                         read-back)
 *   gs_sell_dev_shape     the stored order (a stable radix sort when rows move), the slice
 *                         offsets in 64 bits, slots, used, widest slice (1 read-back; or
 *                         gs_sell_dev_shape_async, then gs_sell_dev_shape_read)
 *   gs_sell_dev_check     the host builder's refusals (slot limit, fill guard)
 *   gs_sell_dev_fill      the slot arrays (and the 32-bit slice offsets)
 * gs_sell_dev_build runs them all for one parameter set. */
#ifndef GS_SPMV_SELL_DEVBUILD_H
#define GS_SPMV_SELL_DEVBUILD_H

#include "spmv/sell.h"
#include "spmv/spmv_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Summary of the row lengths (gs_sell_dev_lengths). */
typedef struct gs_sell_dev_rows {
  gs_idx_t m;
  gs_off_t row_max;  /* longest row (0 for m = 0) */
  int min_ascent_tz; /* min over rows i >= 1 with len(i) > len(i-1) of the trailing zero bits of
                        i; 32 when no row is longer than the row before it */
} gs_sell_dev_rows_t;

/** The stored order and slice offsets of one (C, P, sigma) (gs_sell_dev_shape). */
typedef struct gs_sell_dev_shape {
  gs_idx_t C, P, sigma, nslices;
  int64_t rows_m;    /* the matrix's rows */
  int32_t *d_perm;   /* m: original row of stored row r; NULL when the order is the identity */
  int64_t *d_ptr;    /* nslices + 1 slot offsets (64-bit); NULL for nslices = 0 */
  int64_t slots;     /* all stored slots (may pass 2^31 - 1: gs_sell_dev_check refuses) */
  int64_t used;      /* slots of the rows that exist */
  gs_idx_t max_width; /* widest padded slice (clamped to INT32_MAX as the host does) */
  unsigned long long *d_stat; /* the counts on the device, inside d_ptr's block, until read */
  int pending;        /* 1: slots, used and max_width not read back yet (gs_sell_dev_shape_read) */
} gs_sell_dev_shape_t;

/** The device layout (gs_sell_dev_fill): the arrays gs_sell_build_p would upload. */
typedef struct gs_sell_dev {
  int32_t *d_slice_ptr; /* nslices + 1 */
  int32_t *d_col;       /* slots; NULL when slots = 0 */
  double *d_val;        /* slots in double; NULL in float or when slots = 0 */
  float *d_valf;        /* slots rounded to float (float_values); else NULL */
} gs_sell_dev_t;

/** *d_len = a fresh counted array of A's m row lengths (NULL for m = 0), and their summary. */
gs_status_t gs_sell_dev_lengths(gs_context_t *ctx, const gs_dcsr_t *A, int32_t **d_len,
                                gs_sell_dev_rows_t *rows);

/** *moves = whether sorting rows by decreasing length in windows of sigma rows moves any row
 *  (the host's sell_order then keeps a permutation). */
gs_status_t gs_sell_dev_moves(gs_context_t *ctx, const int32_t *d_len,
                              const gs_sell_dev_rows_t *rows, gs_idx_t sigma, int *moves);

/** The stored order and slice offsets for C (a power of two), P and sigma; `moves` from
 *  gs_sell_dev_moves for this sigma. Frees nothing of the caller's; sh's arrays are counted
 *  allocations freed by gs_sell_dev_shape_free (also on failure). */
gs_status_t gs_sell_dev_shape(gs_context_t *ctx, const int32_t *d_len,
                              const gs_sell_dev_rows_t *rows, gs_idx_t C, gs_idx_t P,
                              gs_idx_t sigma, int moves, gs_sell_dev_shape_t *sh);
void gs_sell_dev_shape_free(gs_context_t *ctx, gs_sell_dev_shape_t *sh);
/** gs_sell_dev_shape without its read-back: the order and offsets queued on ctx's stream,
 *  sh->pending = 1 until gs_sell_dev_shape_read, so that several shapes (SELL-P's sorted and
 *  unsorted candidates) are computed back to back and waited for once. */
gs_status_t gs_sell_dev_shape_async(gs_context_t *ctx, const int32_t *d_len,
                                    const gs_sell_dev_rows_t *rows, gs_idx_t C, gs_idx_t P,
                                    gs_idx_t sigma, int moves, gs_sell_dev_shape_t *sh);
/** Reads a pending shape's counts back (waits for the stream): slots, used, max_width. */
gs_status_t gs_sell_dev_shape_read(gs_context_t *ctx, gs_sell_dev_shape_t *sh);

/** The host builder's refusals, in its order and words: more than 2^31 - 1 slots, then fill
 *  over p->max_fill (when > 0). GS_ERR_FORMAT_FILL. */
gs_status_t gs_sell_dev_check(const gs_sell_dev_shape_t *sh, gs_off_t nnz,
                              const gs_sell_params_t *p);

/** The layout's arrays on sh (checked): slice offsets, columns and values (double, or rounded
 *  to float with __double2float_rn when float_values). On failure nothing stays allocated. */
gs_status_t gs_sell_dev_fill(gs_context_t *ctx, const gs_dcsr_t *A, const gs_sell_dev_shape_t *sh,
                             int float_values, gs_sell_dev_t *out);
void gs_sell_dev_free(gs_context_t *ctx, gs_sell_dev_t *L);

/** All the steps for one parameter set p (C a power of two): *sh keeps the order (d_perm) and
 *  the counts; free it with gs_sell_dev_shape_free once the layout no longer needs it. */
gs_status_t gs_sell_dev_build(gs_context_t *ctx, const gs_dcsr_t *A, const gs_sell_params_t *p,
                              int float_values, gs_sell_dev_shape_t *sh, gs_sell_dev_t *out);

#ifdef __cplusplus
}
#endif
#endif
