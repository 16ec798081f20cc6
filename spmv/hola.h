/* spmv/hola.h: HOLA SpMV and SpMVT on plain CSR (Steinberger, Zayer & Seidel, "Globally
 * Homogeneous, Locally Adaptive Sparse Matrix-Vector Multiplication on the GPU", ICS 2017).
 * What the device kernels (spmv/hola_kernels.cu) and the host emulation (spmv/hola_build.c)
 * share: the work split and the rule that picks the non-zeros per thread. Pure C.
 *
 * The split (section 3.1, "strict non-zero splitting"): block b of HOLA_THREADS threads takes
 * entries [b*NPB, min((b+1)*NPB, nnz)), NPB = NPT * HOLA_THREADS; thread t of the block takes NPT
 * consecutive entries of it. The only preprocessing is Algorithm 2 (AssignRowsGlobal): the row
 * holding each block's first entry, scattered by one thread per row. Here it runs once at prepare
 * (not before every product, as in the paper), because the kernels do not need y zeroed
 * beforehand: see hola_kernels.cu for how rows shared by several blocks are combined. */
#ifndef GS_SPMV_HOLA_H
#define GS_SPMV_HOLA_H

#include "gpusolve/spmv.h"
#include "spmv/options.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HOLA_THREADS 256

/* Non-zeros per thread, a template parameter of the kernels: the compiled variants. */
#define HOLA_NPT_MIN 4
#define HOLA_NPT_MAX 16

/** Below this many entries the automatic rule takes 4 non-zeros per thread whatever the row
 *  lengths (small grids: latency of one block, not bandwidth, sets the time). */
#define HOLA_SMALL_NNZ ((int64_t)1 << 19)

/** The non-zeros per thread for a matrix of nnz entries and mean row length `mean` when the
 *  user asked for `requested` (0: automatic, else 4, 8 or 16). The automatic rule follows the
 *  paper's idea of picking the per-thread share from the mean row length (long rows: more
 *  entries per thread, so that a block covers whole rows and fewer rows are shared between
 *  blocks), plus a size rule; the thresholds were measured on the H100 (docs/formats.md, HOLA). */
int gs_hola_npt(int64_t nnz, double mean, int requested);

/** Number of blocks for nnz entries at npt entries per thread (0 when nnz = 0). */
int64_t gs_hola_blocks(int64_t nnz, int npt);

/** Algorithm 2 on the host: brs[b] = the row holding entry b*NPB for b < nblocks, and
 *  brs[nblocks] = m (brs has nblocks + 1 entries, caller-allocated). */
void gs_hola_block_rows_host(const gs_csr_t *A, int npt, gs_idx_t *brs);

/** y = alpha*op(A)*x + beta*y computed with HOLA's decomposition: the blocks of Algorithm 2, the
 *  per-thread row starts and end-of-row bits of Algorithm 4 (with the empty-row rule of section
 *  3.3), per-thread partial sums in entry order, leftovers combined per row, rows shared between
 *  blocks summed in block order. Same arithmetic split as the kernels, sequential. In mixed and
 *  float precision (prec) A's values are rounded once to float first (gs_fmt_round_values, the
 *  rounding of the device copy) and read widened, as the mixed kernels read them; in float
 *  precision alpha, beta, x and y are read as floats too and every product, sum and scaling is
 *  rounded to float, as the float kernels compute (y holds float values on return). Allocates
 *  (GS_ERR_HOST_MEMORY); A must have at most INT32_MAX entries. */
gs_status_t gs_hola_apply_host(const gs_csr_t *A, int npt, gs_precision_t prec, gs_op_t op,
                               double alpha, const double *x, double beta, double *y);

#ifdef __cplusplus
}
#endif
#endif
