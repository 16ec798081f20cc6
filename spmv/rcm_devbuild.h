/* spmv/rcm_devbuild.h: reverse Cuthill-McKee on the GPU from a matrix's shared device CSR
 * (spmv/rcm_devbuild.cu): the order gs_csr_rcm (core/order.h) gives on the host, entry for
 * entry. C and CUDA. */
#ifndef GS_SPMV_RCM_DEVBUILD_H
#define GS_SPMV_RCM_DEVBUILD_H

#include "spmv/spmv_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the device order declines (the caller then orders on the host): more connected
 * components than GS_RCM_DEV_COMPONENTS (each one costs a few grid-wide barriers and a pass
 * over the vertices, isolated vertices aside), or a vertex of more than GS_RCM_DEV_DEGREE
 * neighbours (a parent's c children are ranked by counting, c^2 comparisons). */
#define GS_RCM_DEV_COMPONENTS 64
#define GS_RCM_DEV_DEGREE (1 << 18)

/** What one device ordering did (the kernel's own clock, thread 0's view). */
typedef struct gs_rcm_dev_stats {
  double bfs_ms, number_ms; /* the root searches' BFS; the numbering */
  int bfs_runs, bfs_levels, number_levels; /* BFS passes and their levels; numbered levels */
  int big_levels;  /* levels with a parent of more children than a thread sorts */
  int components, isolated, declined; /* declined: 0; 1 components, 2 a vertex's degree,
                                         3 a false claim of symmetry */
} gs_rcm_dev_stats_t;

/** d_perm (device, m entries) = gs_csr_rcm's order of the square matrix A (32-bit row offsets),
 *  computed on ctx's stream from A's shared device CSR. The graph is A's pattern when it is
 *  structurally symmetric (the features), else A + A^T, as the host's for general storage.
 *  *ordered = 1 when d_perm holds the order; 0 when the device declined it and d_perm holds
 *  nothing: more than GS_RCM_DEV_COMPONENTS components or a vertex of more than
 *  GS_RCM_DEV_DEGREE neighbours (see above), no cooperative launch, or a pattern that is not
 *  symmetric stored with a claim of symmetry (the host then walks the directed pattern of A
 *  alone, whose root search may pass through vertices numbered before). Synchronizes ctx's
 *  stream. stats, when not NULL, gets what the kernel did. GS_ERR_DIMENSION for a non-square
 *  matrix, GS_ERR_UNSUPPORTED for 64-bit offsets, GS_ERR_DEVICE_MEMORY; frees what it
 *  allocated. */
gs_status_t gs_rcm_dev(gs_context_t *ctx, gs_matrix_t *A, int *d_perm, int *ordered,
                       gs_rcm_dev_stats_t *stats);

/** perm (host, A->m entries) = gs_csr_rcm's order of the host CSR A, computed on ctx's device:
 *  A's pattern uploaded (32-bit row offsets and the columns: 4 (m + 1) + 4 nnz bytes), ordered
 *  as by gs_rcm_dev, the order downloaded. The graph is A + A^T for general storage; a claim
 *  of symmetry is checked on the device (A's pattern against its transpose's) and the order
 *  declined where it is false. *ordered as gs_rcm_dev (0 also past 2^31 - 1 entries: perm
 *  untouched, the caller orders on the host). GS_ERR_INVALID_ARG for NULL pointers,
 *  GS_ERR_DIMENSION for a non-square A, GS_ERR_DEVICE_MEMORY. */
gs_status_t gs_rcm_dev_csr(gs_context_t *ctx, const gs_csr_t *A, gs_idx_t *perm, int *ordered);

#ifdef __cplusplus
}
#endif
#endif
