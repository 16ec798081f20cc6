/* spmv/sell.h: the sliced ELLPACK (SELL) layout that cuSPARSE's SpMV takes
 * (cusparseCreateSlicedEll, CUSPARSE_SPMV_SELL_ALG1): its host builder from CSR and a host
 * apply of the same layout, so that the layout is tested on machines without a GPU.
 *
 * Layout (cuSPARSE "Sliced Ellpack", zero-based, 32-bit indices). Rows are cut into slices of
 * C = slice_size consecutive rows; the last slice is padded to C rows. Slice s is a dense
 * C x w_s block, w_s = the longest row in the slice, stored column-major: entry k of row
 * i = s*C + r sits at slot slice_ptr[s] + k*C + r, so that the C threads of a slice read C
 * consecutive slots at each step k. Slots past a row's end (and every slot of the padding rows
 * of the last slice) hold column -1 and value 0.0, the padding cuSPARSE requires. Within a row,
 * entries keep the CSR order (columns increasing for a sorted CSR).
 *
 *   slice_ptr[0] = 0, slice_ptr[s+1] = slice_ptr[s] + C * w_s, slots = slice_ptr[nslices].
 *
 * Fill is the padding inside the slices' real rows: sum over slices of (rows of the slice that
 * exist) * w_s, over nnz. It is at most C, reached when each slice holds one long row. The rows
 * that only pad the last slice to C are not counted (else every matrix of fewer than C / 3
 * rows would be refused), though they are stored: slots <= fill * nnz + (C - 1) * w_last. The
 * builder refuses fill over max_fill like every padded format (GS_ERR_FORMAT_FILL), and layouts
 * whose slot count does not fit the 32-bit slice offsets. Internal header. */
#ifndef GS_SPMV_SELL_H
#define GS_SPMV_SELL_H

#include "gpusolve/matrix.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Rows per slice of the cusparse-sell backend: one warp per slice. */
#define GS_SELL_SLICE_SIZE 32

typedef struct gs_sell {
  gs_idx_t m, n;       /* rows, columns */
  gs_off_t nnz;        /* stored entries of the source CSR (explicit zeros included) */
  gs_idx_t slice_size; /* C */
  gs_idx_t nslices;    /* ceil(m / C) */
  gs_idx_t slots;      /* slice_ptr[nslices]: entries plus padding */
  gs_idx_t max_width;  /* widest slice (the longest row) */
  gs_idx_t *slice_ptr; /* nslices + 1: first slot of each slice */
  gs_idx_t *col;       /* slots: column index, -1 in padding; NULL when slots == 0 */
  gs_val_t *val;       /* slots: value, 0.0 in padding; NULL when slots == 0 */
} gs_sell_t;

/**
 * Builds the SELL layout of A with slice_size rows per slice (>= 1).
 * max_fill > 0 refuses (GS_ERR_FORMAT_FILL) when the fill defined above exceeds max_fill;
 * max_fill = 0 disables the guard. A layout with more than 2^31 - 1 slots is refused with
 * GS_ERR_FORMAT_FILL too.
 * *out is NULL on failure.
 */
gs_status_t gs_sell_build(gs_sell_t **out, const gs_csr_t *A, gs_idx_t slice_size,
                          double max_fill);
/** Frees S (NULL-safe) and sets *S = NULL. */
void gs_sell_destroy(gs_sell_t **S);
/** Host apply on the layout: y = alpha*op(S)*x + beta*y (GS_OP_N or GS_OP_T); beta == 0: y is
 *  write-only; alpha == 0: y = beta*y, x (may be NULL) and the layout unread (BLAS, as
 *  gs_csr_spmv_host). The reference for the layout, in the same summation order as
 *  gs_csr_spmv_host. */
gs_status_t gs_sell_spmv_host(const gs_sell_t *S, gs_op_t op, gs_val_t alpha, const gs_val_t *x,
                              gs_val_t beta, gs_val_t *y);

#ifdef __cplusplus
}
#endif
#endif
