/* spmv/formats.h: host layouts of the Bell & Garland formats (COO, ELL, DIA, HYB; Bell &
 * Garland, "Implementing SpMV on Throughput-Oriented Processors", SC09, sections 3.1-3.5),
 * their builders from a row-sorted CSR and the host reference applies that run the same layout
 * arithmetic as the kernels. Pure C, no CUDA.
 *
 * Every builder takes a CSR whose rows are sorted (what gs_matrix_host() gives) and copies what
 * it needs: the CSR may be freed afterwards. Layout arrays are malloc'ed and owned by the layout;
 * destroy functions accept NULL and leave the pointer NULL. */
#ifndef GS_SPMV_FORMATS_H
#define GS_SPMV_FORMATS_H

#include "gpusolve/spmv.h"
#include "spmv/options.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Row dimension of the column-major ELL and DIA arrays is padded to a multiple of this, so that
 *  every column starts on a 128-byte boundary (32 indices) and warps load whole segments. */
#define GS_FMT_PITCH_ALIGN 32

/** Pitch (padded row count) of the column-major layouts: m rounded up to GS_FMT_PITCH_ALIGN. */
int64_t gs_fmt_pitch(gs_idx_t m);

/** y = beta*y over len entries, as gs_launch_scale does it on the device: nothing for
 *  beta == 1, zeros written without reading y for beta == 0 (NaN in y never leaks). The host
 *  applies use it for the scale pass of op = T and for the BLAS rule of alpha == 0. */
void gs_fmt_scale_host(gs_idx_t len, double beta, double *y);

/* ---- mixed and float precision (gs_precision_t) -----------------------------------------
 * A layout holds its values in double (`val`) or, after gs_*_layout_round, in float (`valf`,
 * and `val` freed and NULL): each value rounded once to nearest (the same rounding the CUDA
 * conversion makes), then read as a double by the host applies, as the kernels read them. */

/** Value k of a layout whose values are in double v or, when v is NULL, in float f. */
static inline double gs_fmt_val(const gs_val_t *v, const float *f, size_t k)
{
  return v ? v[k] : (double)f[k];
}

/** Rounds n double values into a fresh malloc'd float array (*out; NULL for n = 0). */
gs_status_t gs_fmt_round_values(float **out, const gs_val_t *val, size_t n, const char *what);

/** Length of row i of A in 32 bits. The layouts of this header keep 32-bit entry positions and
 *  only ever see matrices of at most INT32_MAX entries (gs_spmv_create and gs_spmv_host_apply
 *  refuse wider ones for backends without GS_SPMV_FLAG_WIDE), so every row length fits. */
static inline gs_idx_t gs_fmt_row_len(const gs_csr_t *A, gs_idx_t i)
{
  return (gs_idx_t)(A->row_ptr[i + 1] - A->row_ptr[i]);
}

/* ---- COO (section 3.4): one thread per entry, segmented reduction per warp ---------------- */

/** Coordinate layout, entries in row-major order (rows non-decreasing, the kernel's segment
 *  descriptor), columns sorted inside a row. */
typedef struct gs_coo_layout {
  gs_idx_t m, n, nnz;
  gs_idx_t *row, *col; /* nnz each */
  gs_val_t *val;       /* nnz; NULL once rounded to valf */
  float *valf;         /* nnz in a mixed layout (gs_coo_layout_round), else NULL */
  gs_idx_t rows_touched; /* rows with at least one entry (byte model: y updates) */
  gs_idx_t cols_touched; /* columns with at least one entry (byte model of op = T) */
} gs_coo_layout_t;

/** Warp count of the host emulation used by the registry's host_apply (a full H100: 132 SMs x
 *  64 warps); the GPU backend derives its own from the device's occupancy. */
#define GS_COO_HOST_WARPS 8448

/** Work partition of the persistent-warp kernel (section 3.7, CUSP coo_flat_spmv): `nnz`
 *  entries in chunks of 32, at most `max_warps` warps; warp w owns entries
 *  [w*interval, min((w+1)*interval, nnz)), interval a multiple of 32, and every warp < *warps has
 *  work. nnz = 0 gives *warps = 0, *interval = 32. */
void gs_coo_partition(int64_t nnz, int64_t max_warps, gs_idx_t *warps, int64_t *interval);

/** Builds the COO layout of A (all entries). */
gs_status_t gs_coo_layout_build(gs_coo_layout_t **out, const gs_csr_t *A);
/** Builds a COO layout of the entries of A from position `skip` of each row on (HYB's
 *  remainder: skip = K). skip = 0 is gs_coo_layout_build. */
gs_status_t gs_coo_layout_build_tail(gs_coo_layout_t **out, const gs_csr_t *A, gs_idx_t skip);
void gs_coo_layout_destroy(gs_coo_layout_t **L);
/** Turns L into a mixed layout: values rounded to float (valf), the doubles freed. */
gs_status_t gs_coo_layout_round(gs_coo_layout_t *L);
/** rows_touched and cols_touched of the whole matrix's COO layout (gs_coo_layout_build) when
 *  the features f of an m x n matrix of nnz entries tell them without a pass over the columns:
 *  a structurally symmetric matrix (square, pattern(A) = pattern(A^T)) has an entry in column
 *  j exactly when row j has one, so both are m - f->empty_rows. -1 otherwise (not symmetric,
 *  features of another shape, f NULL): the device build then counts them. */
gs_idx_t gs_coo_touched_from_features(const gs_features_t *f, gs_idx_t m, gs_idx_t n,
                                      gs_off_t nnz);

/** y += alpha*L*x exactly as the kernel computes it: the partition of gs_coo_partition for
 *  `max_warps` warps, 32-lane chunks, the shuffle segmented scan, carries between chunks and the
 *  per-warp carry-out fixed up by the update pass. Sums are formed in the kernel's order.
 *  Allocates the carries (GS_ERR_HOST_MEMORY). */
gs_status_t gs_coo_layout_accumulate_host(const gs_coo_layout_t *L, gs_idx_t max_warps,
                                          double alpha, const double *x, double *y);
/** y += alpha*L^T*x, one scatter per entry in storage order (the kernel uses atomics). */
void gs_coo_layout_accumulate_t_host(const gs_coo_layout_t *L, double alpha, const double *x,
                                     double *y);
/** y = alpha*op(L)*x + beta*y: y = beta*y first (y = 0 without reading it when beta == 0), then
 *  the accumulate above. */
gs_status_t gs_coo_layout_apply_host(const gs_coo_layout_t *L, gs_idx_t max_warps, gs_op_t op,
                                     double alpha, const double *x, double beta, double *y);

/* ---- ELL (section 3.2): M x K, column-major, one thread per row --------------------------- */

/** Padding slots hold this (negative) column index and value 0.0: the kernel skips negative
 *  columns without touching x, so padding never reads x out of bounds nor turns an Inf/NaN
 *  of x into a NaN. */
#define GS_ELL_PAD (-1)

/** ELLPACK layout: slot k of row i is at k*pitch + i (column-major, rows padded to pitch).
 *  Rows keep their sorted order; slots past a row's length are GS_ELL_PAD / 0.0, including all
 *  slots of the alignment rows m..pitch-1. */
typedef struct gs_ell_layout {
  gs_idx_t m, n, K;   /* K = stored slots per row */
  int64_t pitch;      /* gs_fmt_pitch(m) */
  gs_idx_t *col;      /* pitch * K */
  gs_val_t *val;      /* pitch * K; NULL once rounded to valf */
  float *valf;        /* pitch * K in a mixed layout (gs_ell_layout_round), else NULL */
  int64_t entries;    /* real (non-padding) slots */
} gs_ell_layout_t;

/** Builds ELL with K = the longest row. Refuses with GS_ERR_FORMAT_FILL when the stored slots
 *  m*K exceed max_fill * nnz (alignment padding to the pitch is not counted), before allocating
 *  the layout; the message gives K, the ratio and the limit. */
gs_status_t gs_ell_layout_build(gs_ell_layout_t **out, const gs_csr_t *A, double max_fill);
/** ELL's fill guard on m rows padded to K for nnz entries (GS_ERR_FORMAT_FILL over
 *  max_fill), shared by the host and the device builders. */
gs_status_t gs_ell_check_fill(gs_idx_t m, gs_idx_t K, gs_off_t nnz, double max_fill);
/** Builds ELL from the first min(K, length) entries of each row, never refusing (HYB's part). */
gs_status_t gs_ell_layout_build_k(gs_ell_layout_t **out, const gs_csr_t *A, gs_idx_t K);
void gs_ell_layout_destroy(gs_ell_layout_t **L);
/** Turns L into a mixed layout: values rounded to float (valf), the doubles freed. */
gs_status_t gs_ell_layout_round(gs_ell_layout_t *L);
/** y = alpha*L*x + beta*y, row by row in the kernel's order (y never read when beta == 0). */
void gs_ell_layout_apply_host(const gs_ell_layout_t *L, double alpha, const double *x, double beta,
                              double *y);
/** y += alpha*L^T*x (ell's and HYB's transpose; the kernel scatters with atomics). x is not
 *  read when K == 0. */
void gs_ell_layout_accumulate_t_host(const gs_ell_layout_t *L, double alpha, const double *x,
                                     double *y);

/* ---- DIA (section 3.1): diagonals, column-major, one thread per row ---------------------- */

/** Diagonal layout: offsets[d] = j - i of the d-th occupied diagonal, strictly increasing;
 *  val[d*pitch + i] = A(i, i + offsets[d]), 0.0 where that entry is absent or its column is
 *  outside 0..n-1 (the kernel skips out-of-range columns, so those slots are never read). */
typedef struct gs_dia_layout {
  gs_idx_t m, n, ndiag;
  int64_t pitch;         /* gs_fmt_pitch(m) */
  int32_t *offsets;      /* ndiag */
  gs_val_t *val;         /* pitch * ndiag; NULL once rounded to valf */
  float *valf;           /* pitch * ndiag in a mixed layout (gs_dia_layout_round), else NULL */
  int64_t slots_in_range; /* slots whose column lies in 0..n-1 (what the kernel reads) */
} gs_dia_layout_t;

/** Builds DIA. Refuses with GS_ERR_FORMAT_FILL when ndiag*m > max_fill * nnz (checked before
 *  the value array is allocated) and with GS_ERR_UNSUPPORTED when m + n >= 2^31 (row + offset
 *  and column - offset must not overflow 32 bits in the kernels). */
gs_status_t gs_dia_layout_build(gs_dia_layout_t **out, const gs_csr_t *A, double max_fill);
/** DIA's refusals, shared by the host and the device builders: rows + columns below 2^31 (the
 *  kernel's 32-bit row + offset), and the fill guard on ndiag diagonals of m slots. */
gs_status_t gs_dia_check_shape(gs_idx_t m, gs_idx_t n);
gs_status_t gs_dia_check_fill(gs_idx_t ndiag, gs_idx_t m, gs_off_t nnz, double max_fill);
void gs_dia_layout_destroy(gs_dia_layout_t **L);
/** Turns L into a mixed layout: values rounded to float (valf), the doubles freed. */
gs_status_t gs_dia_layout_round(gs_dia_layout_t *L);
/** y = alpha*L*x + beta*y, diagonal by diagonal in the kernel's order. */
void gs_dia_layout_apply_host(const gs_dia_layout_t *L, double alpha, const double *x,
                              double beta, double *y);
/** y = alpha*L^T*x + beta*y (y of n entries, x of m), the gather of dia_spmv_t_kernel: output
 *  column j sums val[d*pitch + i] * x[i], i = j - offsets[d], over the diagonals d with
 *  0 <= i < m, in diagonal order (y never read when beta == 0). */
void gs_dia_layout_apply_t_host(const gs_dia_layout_t *L, double alpha, const double *x,
                                double beta, double *y);

/* ---- HYB (section 3.5): ELL for the first K entries of each row, COO for the rest -------- */

typedef struct gs_hyb_layout {
  gs_ell_layout_t *ell; /* m x K */
  gs_coo_layout_t *coo; /* the entries past K, row-major */
} gs_hyb_layout_t;

/** The paper's rule on a row-length histogram: hist[L] = rows of exactly L entries,
 *  L = 0..max_len, m = sum of hist. Returns the largest K such that at least max(4096, m/3)
 *  rows have K or more entries (0 when no K >= 1 qualifies, e.g. m < 4096). */
gs_idx_t gs_hyb_k_rule(gs_idx_t m, const int64_t *hist, gs_idx_t max_len);
/** The rule on A's row lengths (builds the histogram). -1 when out of host memory. */
gs_idx_t gs_hyb_choose_k(const gs_csr_t *A);
/** Builds HYB: K = hyb_k when hyb_k >= 0 (clamped to the longest row), else gs_hyb_choose_k.
 *  Never refuses for fill. */
gs_status_t gs_hyb_layout_build(gs_hyb_layout_t **out, const gs_csr_t *A, int hyb_k);
void gs_hyb_layout_destroy(gs_hyb_layout_t **L);
/** Rounds both parts (gs_ell_layout_round, gs_coo_layout_round). */
gs_status_t gs_hyb_layout_round(gs_hyb_layout_t *L);
/** y = alpha*op(L)*x + beta*y as the kernels do it: op = N: ELL writes y (alpha, beta), then
 *  the COO part accumulates; op = T: y = beta*y, then both parts scatter. */
gs_status_t gs_hyb_layout_apply_host(const gs_hyb_layout_t *L, gs_idx_t max_warps, gs_op_t op,
                                     double alpha, const double *x, double beta, double *y);

/* ---- host_apply slots of the backends' tables (build, apply on the host, free) ------------
 * Every slot follows gs_spmv_apply's rules: it builds the layout first, so that a refusal
 * (GS_ERR_FORMAT_FILL) is reported exactly as prepare would report it, whatever alpha is; then
 * with alpha == 0 (BLAS) it sets y = beta*y without reading x (which may be NULL) or A's values;
 * with beta == 0 it never reads y. ell, dia, coo and hyb all take op = N and op = T, and
 * cfg->precision: with GS_PRECISION_MIXED or GS_PRECISION_FLOAT (gs_cfg_float_values) the layout
 * is rounded (gs_*_layout_round) before it is applied, as prepare rounds it before the upload
 * (float precision's kernels read the same layout with float vectors). */

gs_status_t gs_coo_host_apply(const gs_csr_t *A, const gs_spmv_cfg_t *cfg, gs_op_t op,
                              double alpha, const double *x, double beta, double *y);
gs_status_t gs_ell_host_apply(const gs_csr_t *A, const gs_spmv_cfg_t *cfg, gs_op_t op,
                              double alpha, const double *x, double beta, double *y);
gs_status_t gs_dia_host_apply(const gs_csr_t *A, const gs_spmv_cfg_t *cfg, gs_op_t op,
                              double alpha, const double *x, double beta, double *y);
gs_status_t gs_hyb_host_apply(const gs_csr_t *A, const gs_spmv_cfg_t *cfg, gs_op_t op,
                              double alpha, const double *x, double beta, double *y);

#ifdef __cplusplus
}
#endif
#endif
