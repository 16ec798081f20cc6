/* spmv/merge.h: merge-based CSR SpMV (Merrill & Garland, "Merge-based Parallel Sparse
 * Matrix-Vector Multiplication", SC16; "the paper" below; summarised, with its flow chart, in
 * section 2 of 000_b60de4b7a06573aa.txt, the HOLA paper). What the device kernels
 * (spmv/merge_kernels.cu) and the host emulation (spmv/merge_build.c) share: the split of the
 * merge path and the search that finds a split point. Pure C.
 *
 * The merge path: CSR SpMV as the merge of two sorted lists, A = the row-end offsets
 * row_ptr[1..m] (m items) and B = the natural numbers 0..nnz-1 (the indices of the
 * non-zeros). Walking the merge, consuming B[j] adds entry j to the running row sum, consuming
 * A[i] ends row i (its sum is complete). The walk takes A[i] before B[j] when A[i] <= B[j] (row
 * i ends before entry j), so an empty row is a row end with nothing before it. The path has
 * m + nnz items (more than 2^31 - 1 for large matrices: diagonals are 64-bit); every item costs
 * about the same, so equal shares of the path are equal work whatever the row lengths.
 *
 * The split: tile b (one thread block of MERGE_THREADS threads) takes diagonals
 * [b * TILE, min((b + 1) * TILE, m + nnz)), TILE = MERGE_THREADS * ipt; thread t of it the ipt
 * items from local diagonal t * ipt. A split point on diagonal d is the (i, j), i + j = d, where
 * the path crosses it: found by a binary search along the diagonal (the paper's merge-path
 * search). Tile boundaries are searched once at prepare (the matrix does not change between
 * products); each thread searches its own start inside the tile in shared memory. */
#ifndef GS_SPMV_MERGE_H
#define GS_SPMV_MERGE_H

#include "gpusolve/spmv.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MERGE_THREADS 128

/* Items of the merge path per thread, a template parameter of the kernel: the compiled
 * variants are 5, 7, 9 and 15 (option merge.ipt), 7 by default. Odd on purpose: a thread reads
 * its products from shared memory at stride IPT doubles, and an odd stride puts the 16 threads
 * of a half-warp (one 64-bit shared access) on 16 different bank pairs, where a stride of 8
 * would put them on 2 (an 8-way conflict at every step of the walk). */
#define MERGE_IPT_DEFAULT 7
#define MERGE_IPT_MAX 15

/** Iterations that bound every merge-path search: a search range of s split points shrinks to
 *  at most s / 2 per iteration, and s <= min(m, nnz) + 1 < 2^63. The loops also stop as soon as
 *  the range is empty, so the bound is never reached on a valid CSR; it keeps a corrupt one from
 *  looping. */
#define MERGE_SEARCH_ITERS 64

/** The items per thread for a requested value (0: MERGE_IPT_DEFAULT); -1 when the request is
 *  not a compiled variant (5, 7, 9 or 15). */
int gs_merge_ipt(int requested);

/** Tiles of MERGE_THREADS * ipt items covering the m + nnz items of the path (0 when both are
 *  0). */
int64_t gs_merge_tiles(gs_idx_t m, int64_t nnz, int ipt);

/** The row coordinate i of the split point of diagonal d (0 <= d <= m + nnz) of A's merge
 *  path; the entry coordinate is d - i. */
gs_idx_t gs_merge_search_host(const gs_csr_t *A, int64_t d);

/** y = alpha*A*x + beta*y with the kernels' decomposition: tile coordinates by the global
 *  search, per-thread starts by the search in the tile's staged row ends, each thread's run of
 *  ipt items, the block's segmented scan of the threads' carry-outs (in the kernel's
 *  combination order), row sums written per tile, and the fix-up of rows shared between tiles
 *  (carries summed in the fix-up kernel's order). Sequential; allocates (GS_ERR_HOST_MEMORY).
 *  ipt is a compiled variant (GS_ERR_INVALID_ARG otherwise). */
gs_status_t gs_merge_apply_host(const gs_csr_t *A, int ipt, double alpha, const double *x,
                                double beta, double *y);

#ifdef __cplusplus
}
#endif
#endif
