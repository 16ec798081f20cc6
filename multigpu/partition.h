/* multigpu/partition.h: host side of the distributed matrix (not installed): contiguous row blocks
 * balanced by work, each block split into its diagonal block (the columns it owns) and its
 * off-diagonal block (the halo columns, renumbered), the halo exchange lists, and the reverse
 * Cuthill-McKee ordering that shrinks halos. Pure host code: no CUDA, testable anywhere.
 *
 * The model is PETSc's MPIAIJ (a "diagonal" A_d and an "off-diagonal" B per rank, with B's
 * columns compacted to the ghost entries; src/mat/impls/aij/mpi/mpiaij.c) and hypre's ParCSR
 * (hypre_ParCSRMatrix: diag, offd, col_map_offd, comm_pkg). Rows and columns share one
 * partition, so the matrix must be square.
 *
 * Halo numbering: part p's halo columns are the global columns outside [first[p], first[p+1])
 * that its rows reference, sorted ascending. Because owners hold contiguous ranges, the halo is
 * grouped by owner in rank order: the entries owned by part q are
 * halo[recv_off[q] .. recv_off[q+1]) (recv_off[p+1] == recv_off[p]). Part q sends part p exactly
 * those entries, in that order, so a receive buffer needs no reordering. */
#ifndef GS_DIST_PARTITION_H
#define GS_DIST_PARTITION_H

#include "gpusolve/matrix.h"
#include "core/order.h" /* gs_csr_rcm, gs_csr_permute_sym, gs_csr_check_rows */

#ifdef __cplusplus
extern "C" {
#endif

/** Splits the m rows of a CSR with row pointer row_ptr into nparts contiguous blocks balanced
 *  by the work w_i = (row_ptr[i+1] - row_ptr[i]) + 1 (its entries plus one for the vector
 *  entries of the row): first[0] = 0, first[nparts] = m, first[k] < first[k+1] (every part
 *  gets at least one row). With W(e) the work of rows [0, e), first[k] is the least e with
 *  W(e) >= k / nparts of the total (found by binary search), moved up to first[k-1] + 1 or down
 *  to m - (nparts - k) where one row per part demands it; so no part exceeds total / nparts +
 *  its last row's work. first has nparts + 1 entries. O(m + nparts log m).
 *  GS_ERR_INVALID_ARG for NULL pointers, nparts < 1, m < 0 or a decreasing row_ptr;
 *  GS_ERR_DIMENSION when m < nparts. */
gs_status_t gs_dist_partition_rows(const gs_off_t *row_ptr, gs_idx_t m, int nparts,
                                   gs_idx_t *first);

/** One part of a square CSR A under the partition `first` (nparts + 1 entries). */
typedef struct gs_dist_block {
  int part, nparts;
  gs_idx_t row0, rows;   /* global rows [row0, row0 + rows) */
  gs_csr_t *diag;        /* rows x rows: the entries with columns in [row0, row0 + rows),
                            columns shifted by -row0, order within a row kept */
  gs_csr_t *off;         /* rows x nhalo: the other entries, column = index into halo */
  gs_idx_t nhalo;
  gs_idx_t *halo;        /* nhalo global columns, ascending (NULL when nhalo == 0) */
  gs_idx_t *recv_off;    /* nparts + 1: halo entries owned by part q are
                            halo[recv_off[q] .. recv_off[q + 1]) */
  /* filled by gs_dist_send_lists */
  gs_idx_t nsend;
  gs_idx_t *send_idx;    /* local row indices (0-based within the part) to send, grouped by
                            destination: to part q, send_idx[send_off[q] .. send_off[q + 1]) in
                            the order of q's halo (NULL when nsend == 0) */
  gs_idx_t *send_off;    /* nparts + 1 */
} gs_dist_block_t;

/** The fewest entries a thread of gs_dist_split takes (default 2^20): a block is split by up to
 *  min(16, gs_mm_threads() / nparts, its entries / this) threads. Tests lower it. */
extern gs_off_t gs_dist_split_share_min;

/** Builds part `part` of A (diag, off, halo, recv_off; the send fields zeroed/NULL).
 *  Explicit zeros are kept. A's columns need not be sorted; each block keeps A's order within
 *  a row. Reads only the part's rows: O(its entries + its rows + span / 64), span the range of
 *  its halo columns, plus O(nparts) to check `first`.
 *  GS_ERR_INVALID_ARG for NULL pointers, nparts < 1, part outside 0..nparts-1, or a fault in
 *  the part's rows (row_ptr decreasing or out of 0..nnz, a column outside 0..n-1);
 *  GS_ERR_DIMENSION for a non-square A or a partition that does not cover its rows
 *  (first[0] != 0, first[nparts] != m, not increasing); GS_ERR_HOST_MEMORY. *B is output
 *  only: what it held before is overwritten, not freed (gs_dist_block_free it first). On
 *  failure *B is left empty (everything freed, pointers NULL). */
gs_status_t gs_dist_split(const gs_csr_t *A, const gs_idx_t *first, int nparts, int part,
                          gs_dist_block_t *B);

/** Fills the send fields of every block from the others' halos: what part p sends part q is
 *  q's halo entries owned by p, as local indices of p. blocks[k].part must be k. Send fields a
 *  block already holds are freed and replaced (so calling it twice is harmless).
 *  GS_ERR_INVALID_ARG for NULL, nparts < 1, or blocks that are not the nparts parts of one
 *  partition in order (part, nparts, rows tiling 0..m from row 0, recv_off spanning the halo,
 *  each halo segment inside its owner's rows); GS_ERR_UNSUPPORTED when a part would send more
 *  than 2^31-1 entries (nsend is 32-bit); GS_ERR_HOST_MEMORY. On failure no block changes. */
gs_status_t gs_dist_send_lists(gs_dist_block_t *blocks, int nparts);

/** The send fields of one split block B (part p of the partition `first`) found from the whole
 *  matrix A instead of the other blocks, for a job of processes where each holds its own block
 *  only: what p sends q is the columns of q's rows that p owns, ascending, as local indices of
 *  p; the same lists as gs_dist_send_lists gives. O(nnz of the other parts + what is sent). A
 *  must be the matrix B was split from (validated by the caller). GS_ERR_INVALID_ARG for NULL
 *  or a block that is not part of `first`; GS_ERR_UNSUPPORTED beyond 2^31-1 entries;
 *  GS_ERR_HOST_MEMORY (then B is unchanged). */
gs_status_t gs_dist_send_list_part(const gs_csr_t *A, const gs_idx_t *first, int nparts,
                                   gs_dist_block_t *B);

/** Frees what the block holds (NULL-safe) and zeroes it. */
void gs_dist_block_free(gs_dist_block_t *B);

#ifdef __cplusplus
}
#endif
#endif
