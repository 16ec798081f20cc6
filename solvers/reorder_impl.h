/* solvers/reorder_impl.h: the library's one way to compute a reverse Cuthill-McKee order of a
 * host CSR, on the GPU where it pays (solvers/reorder.c; not installed). */
#ifndef GS_SOLVERS_REORDER_IMPL_H
#define GS_SOLVERS_REORDER_IMPL_H

#include "gpusolve/context.h"
#include "gpusolve/matrix.h"

#ifdef __cplusplus
extern "C" {
#endif

/** perm (A->m entries) = gs_csr_rcm's order of square A. From GS_REORDER_DEV_RCM_MIN_NNZ
 *  entries (or as ctx's test hook gs_test_reorder_dev_rcm says) ctx's GPU computes it
 *  (gs_rcm_dev_csr, the same order); where the device declines or runs out of memory, the host
 *  does. *on_device (when not NULL) = 1 when the GPU computed it. */
gs_status_t gs_reorder_rcm(gs_context_t *ctx, const gs_csr_t *A, gs_idx_t *perm, int *on_device);

#ifdef __cplusplus
}
#endif
#endif
