/* spmv/rowblock_devbuild.h: the row blocks of CSR-Stream (Greathouse & Daga, SC14; csr-vector's
 * blocked path and csr-adaptive) and their long-row chunks, built on the GPU from the matrix's
 * shared device CSR. The result equals the host's sequential greedy (csr_kernels.cu's
 * stream_blocks and long_row_chunks, csr_adaptive_build.c's gs_adapt_layout_build) entry for
 * entry; spmv/rowblock_devbuild.cu says how. For backend files (CUDA or C); not installed. */
#ifndef GS_SPMV_ROWBLOCK_DEVBUILD_H
#define GS_SPMV_ROWBLOCK_DEVBUILD_H

#include "spmv/spmv_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The work split of one matrix, in counted device buffers the caller frees with gs_dfree. */
typedef struct gs_rowblocks {
  gs_idx_t nblocks;    /* row blocks */
  gs_idx_t *d_blocks;  /* nblocks + 1 row bounds: block k holds rows d_blocks[k] .. [k+1]-1 */
  gs_idx_t nchunks;    /* chunks of long_len entries of the rows longer than long_len */
  int64_t *d_chunks;   /* 2 * nchunks: (row, first entry) of each, in row order; NULL if none */
  gs_idx_t nlong;      /* rows longer than long_len */
  gs_idx_t *d_longs;   /* with want_longs and nchunks > 0: 2 * (nlong + 1): (row, first
                          chunk) of each long row, then (m, nchunks); NULL otherwise */
  gs_idx_t single_rows; /* blocks of exactly one row (long rows included) */
} gs_rowblocks_t;

/** Cuts A's rows into blocks as the host greedy does: from a block's first row `start`, rows
 *  are added while the block holds at most max_rows rows and its entries fit `budget`
 *  (row_ptr[r + 1] - row_ptr[start] <= budget); a row over the budget is a block alone. Rows
 *  longer than long_len (>= budget) are cut into chunks of long_len entries. With who_grid
 *  non-NULL, more than INT32_MAX blocks + chunks is GS_ERR_UNSUPPORTED with the message of
 *  csr-adaptive's host builder ("<who_grid>: %lld row blocks and %lld chunks exceed the grid
 *  limit"). Runs on ctx's stream; one synchronization (four counts read back). *out is zeroed
 *  on failure, and everything this call allocated is freed. */
gs_status_t gs_rowblocks_build(gs_context_t *ctx, const gs_dcsr_t *A, int64_t budget,
                               gs_idx_t max_rows, int64_t long_len, int want_longs,
                               const char *who_grid, gs_rowblocks_t *out);

#ifdef __cplusplus
}
#endif
#endif
