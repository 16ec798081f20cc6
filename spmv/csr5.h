/* spmv/csr5.h: the CSR5 layout (Liu & Vinter, "CSR5: An Efficient Storage Format for
 * Cross-Platform Sparse Matrix-Vector Multiplication", ICS 2015; "the paper" below), shared by
 * the host builder and host emulation (spmv/csr5_build.c) and the device conversion and kernels
 * (spmv/csr5_kernels.cu), which must produce the same arrays bit for bit. Pure C.
 *
 * Tiles. The nnz entries, in CSR order, are cut into tiles of W = OMEGA x sigma entries
 * (OMEGA = 32, the warp; sigma from the mean row length, section 3.1 and csr5_sigma below).
 * Entry e of full tile t (t < ntiles = nnz / W, e = t W + l sigma + j) is the j-th entry of lane
 * l: each lane owns sigma consecutive entries. val and col are stored transposed inside the
 * tile, at t W + j OMEGA + l, so that the 32 lanes' j-th loads are one coalesced access. The
 * nnz - ntiles W entries after the last full tile (the incomplete tile) stay in the CSR order of
 * the matrix's shared device CSR and are summed CSR-vector-like (a warp per row), as the paper
 * does with its last tile.
 *
 * Per tile (section 3.2):
 *  tile_ptr[t]   the row holding the tile's first entry (the last row r with row_ptr[r] <= tW),
 *                with bit 31 (CSR5_DIRTY, the paper's sign-bit trick) set when the rows of the
 *                tile's segments are not consecutive because of empty rows: then empty_offset
 *                maps segments to rows. tile_ptr[ntiles] = the row holding entry ntiles W, or m
 *                when there is no incomplete tile.
 *  tile_desc     per lane one packed bit stream of `words` 32-bit words (word k of lane l of
 *                tile t at (t words + k) OMEGA + l: coalesced), low bits first:
 *                  y_offset   ybits = ceil(log2(OMEGA sigma)) bits: row starts (set bit_flag
 *                             bits) in lanes 0 .. l-1 of the tile: the segment index of lane
 *                             l's first row start;
 *                  seg_offset 5 bits: lanes without a row start that follow lane l (the run a
 *                             segment ending lane l continues through; the segmented sum);
 *                  bit_flag   sigma bits: bit j set when entry j of the lane starts a non-empty
 *                             row. Unlike the paper's descriptor the tile's first bit is not
 *                             forced on: a clear first bit says that the tile begins inside a
 *                             row that began in an earlier tile (a continuation).
 *  Segments of a tile are its row starts in order; segment k belongs to row
 *  tile_ptr + c + k (c = 1 for a continuation, else 0) in a clean tile and to
 *  tile_ptr + empty_offset[empty_ptr[t] + k] in a dirty one. The entries before the first row
 *  start (continuation) belong to row tile_ptr and are the tile's carry.
 *  empty_ptr     ntiles + 1: exclusive prefix sum over tiles of (dirty ? segments : 0).
 *  empty_offset  empty_ptr[ntiles]: for each segment of a dirty tile, its row - tile_ptr.
 *  carry_row     ntiles + 1: the row a tile's carry belongs to (tile_ptr, when the tile is a
 *                continuation), -1 otherwise; slot ntiles is the incomplete tile's (its first
 *                row, when that began in a full tile). The fix-up adds each run's carries.
 *  empty_rows    the rows with no entry, ascending: y = beta y there (the bit flags cannot
 *                represent them, section 3.2).
 * Everything is 32-bit: the backend takes at most 2^31 - 1 entries (not WIDE). */
#ifndef GS_SPMV_CSR5_H
#define GS_SPMV_CSR5_H

#include "gpusolve/spmv.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CSR5_OMEGA 32
#define CSR5_SIGMA_MAX 64
#define CSR5_SEG_BITS 5
#define CSR5_DIRTY 0x80000000u
#define CSR5_ROW_MASK 0x7fffffffu
/** Iterations bounding every binary search over row_ptr (m + 1 <= 2^31 entries). */
#define CSR5_SEARCH_ITERS 40

typedef struct gs_csr5 {
  gs_idx_t m, n;
  int64_t nnz;
  int sigma, ybits, words; /* tile height, y_offset bits, descriptor words per lane */
  int64_t ntiles;          /* full tiles: nnz / (OMEGA sigma) */
  int64_t nnz_full;        /* ntiles * OMEGA * sigma: entries stored transposed */
  gs_idx_t tail_row0, tail_row1; /* rows [tail_row0, tail_row1) own entries past nnz_full
                                    (both m when there are none) */
  gs_idx_t n_empty;        /* rows with no entry */
  int64_t n_dirty, n_cont; /* dirty tiles; carry slots in use (carry_row >= 0) */
  uint32_t *tile_ptr;      /* ntiles + 1 */
  uint32_t *tile_desc;     /* ntiles * words * OMEGA */
  uint32_t *empty_ptr;     /* ntiles + 1 */
  int32_t *empty_offset;   /* empty_ptr[ntiles] */
  int32_t *carry_row;      /* ntiles + 1 */
  int32_t *empty_rows;     /* n_empty */
  gs_idx_t *col;           /* nnz_full, transposed inside each tile */
  gs_val_t *val;           /* nnz_full */
} gs_csr5_t;

/** The paper's sigma for a mean row length of nnz / m (integer division, as its reference
 *  implementation for NVIDIA GPUs): 4 up to 4, the mean itself up to 32, 32 up to 256, 6 above
 *  (very long rows: short lanes keep more tiles, and warps, in flight). */
int gs_csr5_sigma_auto(gs_idx_t m, int64_t nnz);
/** y_offset bits for sigma: ceil(log2(OMEGA sigma)). */
int gs_csr5_ybits(int sigma);
/** Descriptor words per lane for sigma: ceil((ybits + 5 + sigma) / 32), 1 to 3. */
int gs_csr5_words(int sigma);

/** Unpacks lane l's descriptor of tile t of L (y_offset, seg_offset, bit_flag). */
void gs_csr5_desc_unpack(const gs_csr5_t *L, int64_t t, int l, int *y_offset, int *seg_offset,
                         uint64_t *flags);

/** Builds the CSR5 layout of A on the host, sigma in 1..CSR5_SIGMA_MAX (0: gs_csr5_sigma_auto).
 *  GS_ERR_UNSUPPORTED for more than 2^31 - 1 entries, GS_ERR_INVALID_ARG for a bad sigma,
 *  GS_ERR_HOST_MEMORY. *out is NULL on failure. */
gs_status_t gs_csr5_build(gs_csr5_t **out, const gs_csr_t *A, int sigma);
/** Frees L (NULL-safe) and sets *L = NULL. */
void gs_csr5_destroy(gs_csr5_t **L);

/** y = alpha op(A) x + beta y on the layout, as the kernels compute it: op N per tile the lanes'
 *  sequential sums, the warp's segmented scan in the kernel's order, row sums and carries, the
 *  incomplete tile per row in the kernel's butterfly order, the empty rows, then the fix-up
 *  (carries of a run in slot order, lanes strided, butterfly); op T y = beta y and one update per
 *  entry. A is the CSR L was built from (its tail entries and row_ptr are read, as the kernels
 *  read the shared CSR). alpha == 0: y = beta y, neither A nor x read. */
gs_status_t gs_csr5_apply_host(const gs_csr5_t *L, const gs_csr_t *A, gs_op_t op, double alpha,
                               const double *x, double beta, double *y);

/** For test_csr5_gpu: runs the backend's GPU conversion of A (sigma as the option: 0 automatic)
 *  and downloads the arrays into a layout shaped as gs_csr5_build's, so that the two can be
 *  compared bit for bit; *conversion_ms (may be NULL) gets the conversion's time, -1 when it
 *  was not timed. Defined in spmv/csr5_kernels.cu. */
gs_status_t gs_csr5_device_layout(gs_context_t *ctx, gs_matrix_t *A, int sigma, gs_csr5_t **out,
                                  double *conversion_ms);

#ifdef __cplusplus
}
#endif
#endif
