/* spmv/csr_adaptive.h: CSR-Adaptive (Greathouse & Daga, "Efficient Sparse Matrix-Vector
 * Multiplication on GPUs Using the CSR Storage Format", SC14), with the CSR-VectorL extension
 * for very long rows (Daga & Greathouse, "Structural Agnostic SpMV: Adapting CSR-Adaptive for
 * Irregular Matrices", HiPC 2015); as summarised in section 2 of 000_b60de4b7a06573aa.txt (the
 * HOLA paper). What the device kernels (spmv/csr_adaptive_kernels.cu) and the host emulation
 * (spmv/csr_adaptive_build.c) share: the row blocks and the long-row chunks. Pure C.
 *
 * Row blocks (computed once at prepare on the host, one pass over row_ptr): consecutive rows
 * are packed into a block while its entries fit the non-zero budget ADAPT_NNZ (what one block
 * stages in shared memory) and it holds at most ADAPT_ROWS rows (empty rows cost a write of y
 * each). A block of several rows runs CSR-Stream; a block of one row CSR-Vector (that row did
 * not fit with its neighbour, or alone exceeds the budget); a row longer than ADAPT_LONG is cut
 * into chunks of ADAPT_LONG entries, one block each (CSR-VectorL), whose partial sums are added
 * in chunk order by a second kernel (no atomics). */
#ifndef GS_SPMV_CSR_ADAPTIVE_H
#define GS_SPMV_CSR_ADAPTIVE_H

#include "gpusolve/spmv.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ADAPT_THREADS 256
#define ADAPT_NNZ 2048  /* non-zero budget of a CSR-Stream block: 8 entries per thread */
#define ADAPT_ROWS 2048 /* rows of a CSR-Stream block at most */
#define ADAPT_LONG 4096 /* a row longer than this is cut into chunks of this many (VectorL) */

/** The work split of one matrix. Arrays are malloc'ed and owned by the layout. */
typedef struct gs_adapt_layout {
  gs_idx_t m;
  gs_idx_t nblocks;  /* row blocks */
  gs_idx_t *blocks;  /* nblocks + 1 row bounds: block k holds rows blocks[k] .. blocks[k+1]-1 */
  gs_idx_t nchunks;  /* VectorL chunks of the long rows, in row order */
  int64_t *chunks;   /* 2 * nchunks: (row, first entry) of each chunk */
  gs_idx_t nlong;    /* rows longer than ADAPT_LONG */
  gs_idx_t *longs;   /* 2 * (nlong + 1): (row, first chunk) of each, then (m, nchunks) */
  gs_idx_t stream_blocks, vector_blocks; /* row blocks of several rows / of one short row */
} gs_adapt_layout_t;

/** Builds the row blocks and chunks of A (a valid CSR). GS_ERR_HOST_MEMORY, or
 *  GS_ERR_UNSUPPORTED when blocks + chunks exceed the grid limit (INT32_MAX). */
gs_status_t gs_adapt_layout_build(gs_adapt_layout_t **out, const gs_csr_t *A);
void gs_adapt_layout_destroy(gs_adapt_layout_t **L);

/** Threads per row of a CSR-Stream block of `rows` rows: the largest power of two G <= 32
 *  with rows * G <= ADAPT_THREADS (1: one thread per row, CSR-Scalar out of shared memory). */
int gs_adapt_stream_group(gs_idx_t rows);

/** y = alpha*A*x + beta*y with L's split and the kernels' summation order (stream groups,
 *  vector and chunk block reductions, chunk partials summed in order). A is the matrix L was
 *  built from. */
void gs_adapt_apply_host(const gs_csr_t *A, const gs_adapt_layout_t *L, double alpha,
                         const double *x, double beta, double *y);

#ifdef __cplusplus
}
#endif
#endif
