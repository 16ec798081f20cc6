/* core/order.h: orderings of a host CSR (core/order.c): reverse Cuthill-McKee, P A P^T, the
 * bandwidth, and a row-range check. Internal tier. */
#ifndef GS_CORE_ORDER_H
#define GS_CORE_ORDER_H

#include <stdint.h>

#include "gpusolve/matrix.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Rows [r0, r1) of A: arrays present, row pointers non-decreasing inside [0, nnz] (row_ptr[0]
 *  = 0 and row_ptr[m] = nnz when the range touches the ends), columns in [0, n). Reads only
 *  those rows. GS_ERR_INVALID_ARG naming `fn` and the fault. */
gs_status_t gs_csr_check_rows(const gs_csr_t *A, gs_idx_t r0, gs_idx_t r1, const char *fn);

/** Reverse Cuthill-McKee ordering of the symmetrized pattern of square A (A + A^T; values and
 *  the diagonal ignored): perm[k] = the old index of new row k. Each connected component
 *  starts from a pseudo-peripheral vertex (George and Liu's algorithm, from the unvisited
 *  vertex of least degree), neighbours are visited by increasing degree (ties by index), and
 *  the whole order is reversed. Deterministic, and a function of the pattern of A + A^T and the
 *  indices only (A, A^T, or A with its rows' entries reordered give the same perm). perm has n
 *  entries. Memory O(n + nnz) (the graph of A + A^T). GS_ERR_INVALID_ARG for NULL pointers or
 *  a malformed A (as gs_csr_validate, values not read); GS_ERR_DIMENSION for non-square A;
 *  GS_ERR_HOST_MEMORY. */
gs_status_t gs_csr_rcm(const gs_csr_t *A, gs_idx_t *perm);

/** B = P A P^T for perm as gs_csr_rcm gives it (B's row k is A's row perm[k], column j of A
 *  becomes inv[j]), columns sorted within each row (a stable sort: repeated columns keep
 *  their order), symmetry copied from A. *B is NULL on failure. GS_ERR_INVALID_ARG for NULL
 *  pointers, a malformed A, or perm not a permutation of 0..n-1; GS_ERR_DIMENSION for
 *  non-square A; GS_ERR_HOST_MEMORY. */
gs_status_t gs_csr_permute_sym(const gs_csr_t *A, const gs_idx_t *perm, gs_csr_t **B);

/** Degree ordering for power-law graphs: perm[k] = the old index of new row k, rows sorted by
 *  decreasing degree in A + A^T (row i's entries plus column i's, the diagonal left out),
 *  stable (equal degrees keep their index order), so that the hubs come first and their x
 *  entries share cache lines (the "Sort" of Faldu, Diamond and Grot, "A Closer Look at
 *  Lightweight Graph Reordering", IISWC 2019). O(nnz + n): a counting sort. Errors as
 *  gs_csr_rcm. */
gs_status_t gs_csr_degree_order(const gs_csr_t *A, gs_idx_t *perm);

/** Locality predictor of the product's x gathers: the number of distinct 64-byte lines of x
 *  (8 doubles) that each block of GS_ORDER_LINE_ROWS consecutive rows touches, summed over the
 *  blocks, for A reordered by perm (P A P^T; NULL: A as it is). The lines a warp or a block of
 *  the kernels loads, counted without building P A P^T: O(nnz + n), on gs_mm_threads() threads
 *  from 2^20 entries (whole row blocks a thread, a stamp array each, at most 256 MB of them:
 *  the same count). -1 for NULL A, arrays, a non-square A with perm, or no memory (A is assumed
 *  checked). */
#define GS_ORDER_LINE_ROWS 32
int64_t gs_csr_x_lines(const gs_csr_t *A, const gs_idx_t *perm);

/** Bandwidth max |i - j| over the stored entries (0 for a matrix without entries; -1 for a NULL
 *  matrix or arrays): what RCM reduces. On gs_mm_threads() threads from 2^20 entries. */
gs_idx_t gs_csr_bandwidth(const gs_csr_t *A);

#ifdef __cplusplus
}
#endif
#endif
