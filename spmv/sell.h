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
 * whose slot count does not fit the 32-bit slice offsets.
 *
 * The same builder makes the SELL-P layout of the sellp backend (spmv/sellp.h; Anzt, Tomov &
 * Dongarra, UT-EECS-14-727, with the sorting window of Kreutzer et al.'s SELL-C-sigma): slice
 * widths rounded up to a multiple of P (gs_sell_params_t.pad; w_s above is then the padded
 * width), and the rows sorted by decreasing length inside windows of sigma consecutive rows
 * (stable: rows of equal length keep their order), stored row r holding the original row
 * perm[r]. Columns are never permuted. cuSPARSE's layout is pad = 1, sigma = 1 (perm NULL).
 * Internal header. */
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
  gs_val_t *val;       /* slots: value, 0.0 in padding; NULL when slots == 0 or once rounded */
  float *valf;         /* slots in a mixed layout (gs_sell_round), else NULL */
  gs_idx_t pad;        /* P: every slice width is a multiple of it (1: cuSPARSE's layout) */
  gs_idx_t sigma;      /* sorting window asked for (1: none) */
  gs_idx_t *perm;      /* m: original row of stored row r; NULL when the order is the identity */
  int64_t used;        /* slots of the rows that exist: the fill is used / nnz */
} gs_sell_t;

/** What gs_sell_build_p builds. */
typedef struct gs_sell_params {
  gs_idx_t slice_size; /* C >= 1 */
  gs_idx_t pad;        /* P >= 1 */
  gs_idx_t sigma;      /* >= 1; 1: rows keep their order */
  double max_fill;     /* > 0: refuse a fill over it (GS_ERR_FORMAT_FILL); 0: no guard */
  const char *name;    /* names the layout in messages ("SELL", "SELL-P"); NULL: "SELL" */
} gs_sell_params_t;

/**
 * Builds the SELL layout of A with slice_size rows per slice (>= 1).
 * max_fill > 0 refuses (GS_ERR_FORMAT_FILL) when the fill defined above exceeds max_fill;
 * max_fill = 0 disables the guard. A layout with more than 2^31 - 1 slots is refused with
 * GS_ERR_FORMAT_FILL too.
 * *out is NULL on failure.
 */
gs_status_t gs_sell_build(gs_sell_t **out, const gs_csr_t *A, gs_idx_t slice_size,
                          double max_fill);
/** The general builder (gs_sell_build is C = slice_size, P = 1, sigma = 1): the fill guard and
 *  the 2^31 - 1 slot limit as above, both checked before the slot arrays are allocated; the
 *  refusal messages give the numbers (slots, nonzeros, ratio, limit, longest row, C, P). */
gs_status_t gs_sell_build_p(gs_sell_t **out, const gs_csr_t *A, const gs_sell_params_t *p);
/** gs_sell_build_p's refusals from its counts (slots beyond 32 bits, used slots over max_fill),
 *  shared by the device build. */
gs_status_t gs_sell_check(int64_t slots, int64_t used, gs_idx_t max_width, gs_off_t nnz,
                          const gs_sell_params_t *p);
/** The slot counts gs_sell_build_p would reach with p, without building the layout (its guard
 *  and the slot limit are not applied): *slots all stored slots (may pass 2^31 - 1), *used those
 *  of the rows that exist, *max_width the widest padded slice. GS_ERR_HOST_MEMORY when sorting
 *  needs a workspace it cannot get. */
gs_status_t gs_sell_count(const gs_csr_t *A, const gs_sell_params_t *p, int64_t *slots,
                          int64_t *used, gs_idx_t *max_width);
/** Frees S (NULL-safe) and sets *S = NULL. */
void gs_sell_destroy(gs_sell_t **S);
/** Turns S into a mixed layout (precision=mixed, sellp only): every value rounded once to float
 *  (valf; padding stays 0), the doubles freed. Nothing to do when already rounded or empty.
 *  GS_ERR_HOST_MEMORY. The values must lie within the float range (spmv.c refuses others). */
gs_status_t gs_sell_round(gs_sell_t *S);
/** Host apply on the layout: y = alpha*op(S)*x + beta*y (GS_OP_N or GS_OP_T); beta == 0: y is
 *  write-only; alpha == 0: y = beta*y, x (may be NULL) and the layout unread (BLAS, as
 *  gs_csr_spmv_host). The reference for the layout, in the same summation order as
 *  gs_csr_spmv_host; stored row r is row perm[r] of y (op N) and of x (op T). A rounded layout
 *  reads its float values widened to double (sums stay double). */
gs_status_t gs_sell_spmv_host(const gs_sell_t *S, gs_op_t op, gs_val_t alpha, const gs_val_t *x,
                              gs_val_t beta, gs_val_t *y);

#ifdef __cplusplus
}
#endif
#endif
