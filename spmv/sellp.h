/* spmv/sellp.h: the sellp backend, native SELL-P (Anzt, Tomov & Dongarra, "Implementing a Sparse
 * Matrix Vector Product for the SELL-C/SELL-C-sigma formats on NVIDIA GPUs", UT-EECS-14-727,
 * 2014; the sorting window sigma of Kreutzer, Hager, Wellein, Fehske & Bishop, "A Unified Sparse
 * Matrix Data Format ... SELL-C-sigma", SIAM J. Sci. Comput. 36(5), 2014). What the host
 * builder and emulation (spmv/sellp_build.c) and the kernels (spmv/sellp_kernels.cu) share.
 * Pure C.
 *
 * Layout: gs_sell_t (spmv/sell.h) built with slice size C, padding multiple P = T (the threads
 * of a row) and sorting window sigma: slice s is a C x w_s block, column-major, w_s the longest
 * row of the slice rounded up to a multiple of T; stored row r is row perm[r] of the matrix
 * (perm NULL: the identity). Thread tig = r + C*t (t = 0..T-1) of the slice's group of G = C*T
 * threads takes slots slice_ptr[s] + j*G + tig, j = 0 .. w_s/T - 1: entries t, t + T, ... of row
 * r, and the group reads G consecutive slots at each step j. The T partial sums of a row are
 * added by a shuffle butterfly inside a warp, then (G > 32) in shared memory in a fixed order:
 * gs_sellp_layout_apply_host runs exactly that arithmetic. */
#ifndef GS_SPMV_SELLP_H
#define GS_SPMV_SELLP_H

#include "spmv/options.h"
#include "spmv/sell.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The backend's options, in table order (cfg->v[]; the table is in sellp_kernels.cu). */
enum { SELLP_OPT_C, SELLP_OPT_T, SELLP_OPT_SIGMA, SELLP_OPT_MAX_FILL };

#define GS_SELLP_C_MAX 1024     /* rows per slice at most */
#define GS_SELLP_T_MAX 32       /* threads per row at most */
/* The automatic T doubles while the longest row exceeds GS_SELLP_SERIAL_AUTO entries a thread;
 * a longest row of more than GS_SELLP_SERIAL_MAX entries a thread is refused (FORMAT_FILL). */
#define GS_SELLP_SERIAL_AUTO 256
#define GS_SELLP_SERIAL_MAX 1024
#define GS_SELLP_GROUP_MAX 1024 /* C * T: a slice's group fits one thread block */
#define GS_SELLP_BLOCK 256      /* threads per block when groups are smaller (several a block) */
#define GS_SELLP_SIGMA_SLICES 32 /* automatic sorting window: 32 slices (sigma = 32 C) */
#define GS_SELLP_THREADS_ENOUGH (1 << 19) /* about twice the threads an H100 holds at once */

/** C, T (= P) and sigma of one layout. */
typedef struct gs_sellp_shape {
  gs_idx_t C, T, sigma;
} gs_sellp_shape_t;

/**
 * Resolves the options against A (each 0: automatic). T: gs_sellp_auto_threads; C: 32 / T, so that a slice is one warp (C given and T automatic: T shrinks until C*T <=
 * 1024). sigma: GS_SELLP_SIGMA_SLICES * C when sorting in that window saves more slot bytes
 * (12 a slot, 8 in mixed and float precision) than twice the permutation's (4 a row), or keeps
 * a matrix within max_fill that the unsorted layout would exceed; else 1 (no sorting).
 * GS_ERR_INVALID_ARG when C*T > 1024, GS_ERR_HOST_MEMORY.
 */
gs_status_t gs_sellp_choose(const gs_csr_t *A, const gs_spmv_cfg_t *cfg, gs_sellp_shape_t *out);
/** The option checks, threads a row T and rows a slice C of gs_sellp_choose from the sizes and
 *  the longest row (host or device count), with its refusals; out->sigma is the option's
 *  (0: automatic). Shared by the host and the device builders. */
gs_status_t gs_sellp_threads(const gs_spmv_cfg_t *cfg, gs_idx_t m, gs_off_t nnz,
                             gs_off_t row_max, gs_sellp_shape_t *out);
/** The window the automatic sigma tries: GS_SELLP_SIGMA_SLICES slices, at most m rows. */
gs_idx_t gs_sellp_sigma_window(gs_idx_t C, gs_idx_t m);
/** Whether sorting within the window pays (fewer bytes) or rescues (fill under max_fill), from
 *  the slots and used slots unsorted (1) and sorted (w). */
int gs_sellp_sort_pays(const gs_spmv_cfg_t *cfg, gs_idx_t m, gs_off_t nnz, int64_t slots1,
                       int64_t used1, int64_t slotsw, int64_t usedw);

/** The automatic T of an m-row matrix with nnz entries: the largest power of two <= 32 that
 *  leaves at least 8 entries a thread on the mean row length (1 below 16 entries a row, 32 from
 *  256 on), or for fewer than GS_SELLP_THREADS_ENOUGH / 8 rows (latency-bound) at least the
 *  largest power of two <= 8 that leaves 2 entries a thread; halved while m * T / 2 still
 *  reaches GS_SELLP_THREADS_ENOUGH threads (a large matrix keeps the device busy with a thread
 *  a row, and pays no padding to a multiple of T). */
gs_idx_t gs_sellp_auto_threads(gs_idx_t m, gs_off_t nnz);

/** gs_sellp_choose, then the layout (gs_sell_build_p, named "SELL-P" in its messages: the
 *  fill guard of cfg's max_fill and the 2^31 - 1 slot limit refuse with GS_ERR_FORMAT_FILL).
 *  cfg->precision mixed or float (gs_cfg_float_values): the layout is rounded once
 *  (gs_sell_round, values in valf), here, for prepare's upload and the host apply alike. */
gs_status_t gs_sellp_build(gs_sell_t **out, const gs_csr_t *A, const gs_spmv_cfg_t *cfg);

/** Threads per block of the kernels for a group of G = C*T threads: G when G >= 256 (one slice
 *  a block), else 256 (256 / G slices a block). */
static inline int gs_sellp_block(gs_idx_t C, gs_idx_t T)
{
  const int G = (int)(C * T);
  return G > GS_SELLP_BLOCK ? G : GS_SELLP_BLOCK;
}

/** y = alpha*op(S)*x + beta*y on a SELL-P layout (T = S->pad, C and T powers of two), as the
 *  kernels compute it: op N with the kernel's per-thread fused multiply-adds, butterfly and
 *  shared-memory order (y not read when beta == 0); op T: y = beta*y, then every stored entry
 *  added into y (the kernel's atomics, in some order). alpha == 0: y = beta*y, x unread.
 *  A rounded layout (valf) is read as the float kernels read it: each value widened to double
 *  before its fused multiply-add. GS_ERR_HOST_MEMORY (the emulated group's partial sums). */
gs_status_t gs_sellp_layout_apply_host(const gs_sell_t *S, gs_op_t op, double alpha,
                                       const double *x, double beta, double *y);

/** The registry's host_apply slot: builds the layout (a refusal reads as prepare's, whatever
 *  alpha is), applies it, frees it. */
gs_status_t gs_sellp_host_apply(const gs_csr_t *A, const gs_spmv_cfg_t *cfg, gs_op_t op,
                                double alpha, const double *x, double beta, double *y);

#ifdef __cplusplus
}
#endif
#endif
