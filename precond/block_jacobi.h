/* precond/block_jacobi.h: block-Jacobi z = D_B^-1 r (not installed): the host partition into
 * diagonal blocks, the host reference of the block inverses, and the batched kernels.
 *
 * Blocks: consecutive rows r0 .. r0+s-1 (s <= max_block <= GS_BJ_MAX_BLOCK), the diagonal block
 * being A restricted to those rows and columns (duplicates summed, other columns ignored).
 *   agglomerate = 0: fixed blocks of max_block rows (the last one shorter).
 *   agglomerate = 1: supervariable agglomeration (as Ginkgo's block-Jacobi): a supervariable is
 *     a run of consecutive rows with the same column sequence (as stored), cut into pieces of
 *     max_block rows; consecutive pieces are then merged greedily, in row order, while the merged
 *     block stays within max_block rows. A natural block of a block-structured matrix (the nodes
 *     of a FEM system with several unknowns) is thus never split when it fits; on a matrix
 *     without such runs every piece is one row and the blocks are the fixed ones.
 * Pivots: partial pivoting over the candidates that are not rounding noise. With each entry the
 * elimination carries its magnitude m_ij = |b_ij| + sum over the steps of |l_iq| m_qj (the
 * entries of |L||U| as they form: what the value was computed from), and an entry a_ik of the
 * pivot column is usable when |a_ik| > 4 s u m_ik (GS_BJ_PIVOT_OK; u = 2^-53: the rounding of
 * up to 2 s operations on terms of magnitude m, twice). One that is not is a cancellation to zero
 * within the rounding, and is taken as zero: its row is not updated at that step (the noise does
 * not spread as a multiplier; a perturbation of the size of the elimination's own rounding). The
 * pivot is the usable entry of largest magnitude (the lowest row on a tie); a step without one
 * makes the block singular to working precision. The test is relative to the entry's own terms,
 * so it does not change when columns are scaled (rows too, but partial pivoting follows the row
 * scales). The device and the host reference apply the same rule. A singular block is refused (GS_ERR_INVALID_ARG naming its rows and the
 * row of the column with no pivot), or with singular=jacobi replaced by its diagonal's inverse
 * when every diagonal entry of the block is nonzero (refused naming the row otherwise). */
#ifndef GS_PRECOND_BLOCK_JACOBI_H
#define GS_PRECOND_BLOCK_JACOBI_H

#include <stdint.h>

#include "precond/precond_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GS_BJ_MAX_BLOCK 32
#define GS_BJ_DEFAULT_BLOCK 8
/* Whether a candidate pivot of magnitude a, computed from terms of magnitude m, in a block of s
 * rows, is more than rounding noise: a > 4 s u m, u = 2^-53 (0 > 0 fails: an exact zero). */
#define GS_BJ_PIVOT_OK(a, m, s) ((a) > 4.0 * (double)(s) * 0x1p-53 * (m))

extern const gs_precond_ops_t gs_precond_block_jacobi_ops;

/* ---- host (precond/block_jacobi.c) ------------------------------------------------------------ */

/** Partition of A's rows into blocks (see above): *block_ptr (malloc'd, nblocks + 1 entries,
 *  block b = rows block_ptr[b] .. block_ptr[b+1]-1) and *nblocks. A square, 1 <= max_block <=
 *  GS_BJ_MAX_BLOCK. GS_ERR_HOST_MEMORY or GS_ERR_INVALID_ARG (bad max_block). */
gs_status_t gs_bj_partition(const gs_csr_t *A, int max_block, int agglomerate,
                            gs_idx_t **block_ptr, gs_idx_t *nblocks);

/** The s x s diagonal block of A at rows/columns r0 .. r0+s-1 into B (row-major, s*s doubles;
 *  duplicate entries summed in stored order); returns max |b_ij| (0 for an all-zero block). */
double gs_bj_extract(const gs_csr_t *A, gs_idx_t r0, int s, double *B);

/** LU factorization with partial pivoting of the s x s row-major B in place (P B = L U, L unit
 *  lower below the diagonal, U on and above it; piv[k] = the row swapped with row k at step k),
 *  with the pivot rule above. dropped (NULL: not wanted, else s x s, in the rows' final order):
 *  |the noise taken as zero| at its place, 0 elsewhere: L U factors P (B + Delta) with |Delta|
 *  that (the rounding aside). Returns -1, or the first step k without a usable pivot (B is then
 *  partly factorized). */
int gs_bj_lu(double *B, int s, int *piv, double *dropped);

/** x <- U^-1 L^-1 P x with the factors of gs_bj_lu. */
void gs_bj_lu_solve(const double *LU, const int *piv, int s, double *x);

/** Host reference of the preconditioner: z = D_B^-1 r block by block through gs_bj_lu (r and z
 *  may be the same array). fallback = 1: a singular block with a nonzero diagonal is applied as
 *  its diagonal's inverse. Returns -1 when every block is usable, else the first failing block,
 *  with *code = the step with no pivot (0 .. s-1) or, with fallback, 32 + the block's first row
 *  with a zero diagonal. *fallbacks (may be NULL) counts the blocks applied as Jacobi. */
int64_t gs_bj_host_apply(const gs_csr_t *A, const gs_idx_t *block_ptr, gs_idx_t nblocks,
                         int fallback, const double *r, double *z, int *code, int64_t *fallbacks);

/** Rows of the largest block of a partition, and the offsets of the blocks' inverses in one
 *  array (off[b] = sum of s_c^2 over c < b, nblocks + 1 entries, caller's array). */
int gs_bj_max_size(const gs_idx_t *block_ptr, gs_idx_t nblocks);
void gs_bj_offsets(const gs_idx_t *block_ptr, gs_idx_t nblocks, int64_t *off);

/* ---- device (precond/block_jacobi_kernels.cu) ---------------------------------------------- */

/** The kernels' lanes per block for blocks of at most max_size rows: the power of two >= it. */
int gs_bj_group_width(int max_size);

/** Extracts every diagonal block from the device CSR (row pointers 32- or 64-bit: exactly one
 *  of d_rp32 / d_rp64 set), inverts it by Gauss-Jordan elimination with partial pivoting (the
 *  LU factorization carried on to the inverse) in registers, and stores block b's inverse
 *  column-major at d_inv + d_off[b]. max_size: the largest block. d_fail: two counters the
 *  caller set to {UINT64_MAX, 0}: [0] the minimum of 64 b + code over the failing blocks (code as
 *  gs_bj_host_apply's), [1] the blocks replaced by their diagonal (fallback = 1). Asynchronous. */
gs_status_t gs_bj_factor_launch(cudaStream_t stream, gs_idx_t nblocks, int max_size,
                                const gs_idx_t *d_bp, const int64_t *d_off,
                                const int32_t *d_rp32, const int64_t *d_rp64,
                                const gs_idx_t *d_col, const double *d_val, int fallback,
                                double *d_inv, unsigned long long *d_fail);

/** z = D_B^-1 r with the stored inverses: one kernel, r and z may be the same vector.
 *  Asynchronous, allocates nothing. */
gs_status_t gs_bj_apply_launch(cudaStream_t stream, gs_idx_t nblocks, int max_size,
                               const gs_idx_t *d_bp, const int64_t *d_off, const double *d_inv,
                               const double *d_r, double *d_z);

#ifdef __cplusplus
}
#endif
#endif
