/* core/testhooks.h: hooks for the test suites only (not installed, not part of the API). */
#ifndef GS_CORE_TESTHOOKS_H
#define GS_CORE_TESTHOOKS_H

#include "gpusolve/context.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Makes the k-th gs_dmalloc on ctx from now (k >= 1) fail with GS_ERR_DEVICE_MEMORY, as if the
 *  device were full (CSparse's Tcov malloc_count); k = 0 turns injection off. */
void gs_test_dmalloc_fail_after(gs_context_t *ctx, long k);

#ifdef __cplusplus
}
#endif
#endif
