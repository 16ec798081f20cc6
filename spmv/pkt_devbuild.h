/* spmv/pkt_devbuild.h: the pkt layout (spmv/pkt.h) built on the GPU from the matrix's shared
 * device CSR (spmv/pkt_devbuild.cu), byte for byte the layout gs_pkt_build builds and
 * pkt_prepare uploads. Included by .cu files only. */
#ifndef GS_SPMV_PKT_DEVBUILD_H
#define GS_SPMV_PKT_DEVBUILD_H

#include "spmv/formats_kernels.h"
#include "spmv/pkt.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The device layout: the arrays pkt_prepare uploads from a gs_pkt_t, and its scalars. */
typedef struct gs_pkt_dev {
  gs_idx_t m, n;
  int64_t nnz;
  gs_idx_t R, W, npackets, max_cols;
  int B, reordered;
  int64_t slots, in_packets, long_moved, window_cols;
  long long *d_ptr; /* npackets + 1 (NULL when npackets = 0) */
  int *d_col0, *d_ncols;
  uint32_t *d_idx;  /* slots (NULL when 0) */
  double *d_val;
  int *d_perm;      /* m, or NULL */
  gs_coo_dev_t rem; /* the remainder */
  int has_rem;
  size_t bytes_n, bytes_t; /* gs_pkt_bytes */
} gs_pkt_dev_t;

/** Builds *D for A under cfg (the checks of gs_pkt_build first). The RCM order, when modelled,
 *  is computed on the device (gs_rcm_dev: gs_csr_rcm's order; on the host where the device
 *  declines, and uploaded); everything else runs on ctx->stream, with two stream syncs (the
 *  candidates' totals, the remainder's column count) besides the ordering's one. On failure frees what it allocated and leaves *D zeroed. */
gs_status_t gs_pkt_dev_build(gs_context_t *ctx, gs_matrix_t *A, const gs_spmv_cfg_t *cfg,
                             gs_pkt_dev_t *D);
/** Frees the arrays of D (through ctx) and zeroes it. */
void gs_pkt_dev_free(gs_context_t *ctx, gs_pkt_dev_t *D);

#ifdef __cplusplus
}
#endif
#endif
