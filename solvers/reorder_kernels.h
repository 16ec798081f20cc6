/* solvers/reorder_kernels.h: the permutation of a vector on one GPU (solvers/reorder_kernels.cu),
 * for the symmetric reordering of a solve (solvers/reorder.c); asynchronous on `stream` (not
 * installed). */
#ifndef GS_SOLVERS_REORDER_KERNELS_H
#define GS_SOLVERS_REORDER_KERNELS_H

#include "gpusolve/matrix.h"

#ifdef __cplusplus
extern "C" {
#endif

/** inverse = 0: out[k] = in[perm[k]] (P v, the reordered vector); inverse = 1: out[perm[k]] =
 *  in[k] (P^T v, back to the caller's ordering). perm: n entries, a permutation of 0..n-1;
 *  in and out distinct. */
gs_status_t gs_kernel_permute(void *stream, gs_idx_t n, const gs_idx_t *d_perm, int inverse,
                              const double *d_in, double *d_out);

#ifdef __cplusplus
}
#endif
#endif
