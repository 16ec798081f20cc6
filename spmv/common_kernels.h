/* spmv/common_kernels.h: small helpers shared by the kernel files (extern "C" launchers and the
 * one grid-size rule). Pure C: spmv.c and solvers/operator.c include it too. */
#ifndef GS_SPMV_COMMON_KERNELS_H
#define GS_SPMV_COMMON_KERNELS_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#include "gpusolve/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the grid-size rule of every launcher -----------------------------------------------------
 * One rule for every kernel of spmv/, solvers/ and precond/ that covers `threads` work items
 * with a grid-stride loop (GS_GRID_STRIDE in spmv/device_util.cuh): one thread per item, at
 * least one block (the fused solver kernels also update scalars, so they run for n = 0), and at
 * most GS_GRID_MAX_BLOCKS blocks, the loops covering the rest. The cap (65535 * 16, the one
 * solvers/vec_kernels.cu always used) keeps grids far below CUDA's 2^31 - 1 and any grid of
 * blocks up to 1024 threads below 2^30 threads; at 256 threads a block a grid-stride loop
 * runs a second round only past about 2^28 items (the device holds ~2^18 threads at once).
 * Kernels launched with more blocks than this rule gives (one block per row block of
 * csr-vector, say) document their own bound. */
#define GS_GRID_MAX_BLOCKS (65535 * 16)

/** Blocks of `block` threads for `threads` items: ceil(threads / block) clamped to
 *  [1, GS_GRID_MAX_BLOCKS]; the kernel must be a grid-stride loop. */
static inline unsigned gs_grid_blocks(int64_t threads, int block)
{
  int64_t b = threads > 0 ? (threads + block - 1) / block : 1;
  if (b > GS_GRID_MAX_BLOCKS) b = GS_GRID_MAX_BLOCKS;
  return (unsigned)b;
}

/** y = beta * y on `stream`; with beta == 0, y = 0 without reading y (NaN never leaks). */
gs_status_t gs_launch_scale(cudaStream_t stream, gs_idx_t n, double beta, double *d_y);
/** The same on a float vector in float arithmetic (precision=float products). */
gs_status_t gs_launch_scale_f32(cudaStream_t stream, gs_idx_t n, float beta, float *d_y);

/** d_out[k] = (float)d_in[k], k < n, rounded to nearest (__double2float_rn): a mixed-precision
 *  backend's float copy of the values it reads, made once at prepare (gpusolve/spmv.h,
 *  gs_precision_t). Asynchronous on `stream`. */
gs_status_t gs_launch_round_to_float(cudaStream_t stream, int64_t n, const double *d_in,
                                     float *d_out);

/** *d_first = min(*d_first, k) over the k < n whose d_in[k] is finite with |d_in[k]| > FLT_MAX
 *  (the caller sets *d_first to ~0 before). Asynchronous on `stream`. */
gs_status_t gs_launch_float_range(cudaStream_t stream, int64_t n, const double *d_in,
                                  unsigned long long *d_first);

/** A backend's own prepare work timed on `stream`: launch(arg) runs between two events and its
 *  status is returned; *ms gets the elapsed GPU time, or -1 when an event call failed (the
 *  timing is lost, never the work). With `warm`, launch runs once untimed first: a kernel's
 *  first launch loads its module (CUDA's lazy loading), a cost of the process, not of the
 *  matrix; only for work that may run twice. */
gs_status_t gs_timed_launch(cudaStream_t stream, gs_status_t (*launch)(void *arg), void *arg,
                            int warm, double *ms);

/** Byte model of a plain CSR product (beta = 0): row pointers (offset_bytes each: 4, or 8 for a
 *  wide matrix), column indices and values read once, x read once (ideal cache reuse), y
 *  written once. */
size_t gs_csr_bytes_per_apply(gs_idx_t m, gs_idx_t n, gs_off_t nnz, size_t offset_bytes);
/** The same model with value_bytes a stored value and vector_bytes an entry of x and y (8 and 8
 *  in double, 4 and 8 in mixed, 4 and 4 in float precision). */
size_t gs_csr_bytes_per_apply_typed(gs_idx_t m, gs_idx_t n, gs_off_t nnz, size_t offset_bytes,
                                    size_t value_bytes, size_t vector_bytes);

#ifdef __cplusplus
}

/* The float launcher under the double one's name, so that a kernel file's launcher template on
 * the vector type T calls gs_launch_scale(stream, n, beta, y) for either T. */
static inline gs_status_t gs_launch_scale(cudaStream_t stream, gs_idx_t n, float beta,
                                          float *d_y)
{
  return gs_launch_scale_f32(stream, n, beta, d_y);
}
#endif
#endif
