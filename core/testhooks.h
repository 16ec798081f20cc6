/* core/testhooks.h: hooks for the test suites only (not installed, not part of the API). */
#ifndef GS_CORE_TESTHOOKS_H
#define GS_CORE_TESTHOOKS_H

#include "gpusolve/context.h"
#include "gpusolve/spmv.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Makes the k-th gs_dmalloc on ctx from now (k >= 1) fail with GS_ERR_DEVICE_MEMORY, as if the
 *  device were full (CSparse's Tcov malloc_count); k < 0: every one from now, until k = 0 turns
 *  injection off (a device that stays full, for callers that recover from one failure). */
void gs_test_dmalloc_fail_after(gs_context_t *ctx, long k);

/** on = 1: matrices created on ctx from now keep their device row pointers in 64 bits, as a
 *  matrix of more than 2^31-1 entries does (gs_matrix_wide), so that the suites run the wide
 *  kernels, and the refusals of the backends without them, on small matrices. on = 0: off. */
void gs_test_wide_offsets(gs_context_t *ctx, int on);
/** which = 1 or 2: solvers set up on ctx from now use a copy of the single-GPU vector-ops table
 *  (solvers/solver_impl.h) instead of the table itself, so that the methods take the path a
 *  multi-GPU table will take (the table's reductions, not the fused single-GPU kernels): 1 with
 *  the table's optional slots (one multi-dot reduction), 2 without them (plain dots). 0: off. */
void gs_test_solver_vecops(gs_context_t *ctx, int which);
/** per_sm > 0: solvers set up on ctx from now plan their persistent kernels (opts.persistent)
 *  with at most per_sm blocks a multiprocessor, above GS_PERSIST_PER_SM up to the occupancy
 *  limit (more blocks, and grid-stride loops that run fewer rows a thread: the suites cover
 *  both sides); 0: the rule. */
void gs_test_persist_per_sm(gs_context_t *ctx, int per_sm);
/** mode 1: solvers on ctx escalate (opts.precond_auto) at the first check where the forecast
 *  is trusted, as if AMG cost nothing, and never drop it; 2: never, as if it cost infinitely
 *  much; 3: as 1, then drop AMG at the first checks of its pass where the watch's forecast is
 *  trusted; 0: the cost model. The decisions then depend on no clock. */
void gs_test_precond_auto(gs_context_t *ctx, int mode);
/** mode 1: gs_reorder_create on ctx computes RCM (rcm, auto's rcm candidate) on the device
 *  (gs_rcm_dev_csr) at any size, so that small matrices take the device path; 2: always on
 *  the host (gs_csr_rcm); 0: on the device from GS_REORDER_DEV_RCM_MIN_NNZ entries
 *  (solvers/reorder.c). The device's declines and running out of memory still fall back. */
void gs_test_reorder_dev_rcm(gs_context_t *ctx, int mode);
/** Whether A keeps 64-bit device offsets (declared for the library in spmv/spmv_impl.h). */
int gs_matrix_wide(const gs_matrix_t *A);

#ifdef __cplusplus
}
#endif
#endif
