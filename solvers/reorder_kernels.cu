/* solvers/reorder_kernels.cu: a vector permuted by the solve's symmetric reordering
 * (solvers/reorder.c): b and x0 into the reordered numbering, x back out.
 * Work division: one thread per entry k, 64-bit grid-stride loop, 256 threads a block.
 * Memory: perm and one side of the copy are read or written coalesced (entry k), the other side
 * is a gather (P v) or a scatter (P^T v) through perm; each entry is written once, so no
 * atomics. Assumes perm is a permutation of 0..n-1 (gs_reorder_create made it). */
#include "core/error.h"
#include "solvers/reorder_kernels.h"
#include "spmv/common_kernels.h"
#include "spmv/device_util.cuh"

#define PERMUTE_THREADS 256

static __global__ void __launch_bounds__(PERMUTE_THREADS)
permute_gather_kernel(gs_idx_t n, const gs_idx_t *__restrict__ perm,
                      const double *__restrict__ in, double *__restrict__ out)
{
  GS_GRID_STRIDE(k, n) out[k] = in[perm[k]]; /* P v */
}

static __global__ void __launch_bounds__(PERMUTE_THREADS)
permute_scatter_kernel(gs_idx_t n, const gs_idx_t *__restrict__ perm,
                       const double *__restrict__ in, double *__restrict__ out)
{
  GS_GRID_STRIDE(k, n) out[perm[k]] = in[k]; /* P^T v */
}

extern "C" gs_status_t gs_kernel_permute(void *stream, gs_idx_t n, const gs_idx_t *d_perm,
                                         int inverse, const double *d_in, double *d_out)
{
  if (n <= 0) return GS_SUCCESS;
  cudaStream_t s = (cudaStream_t)stream;
  const unsigned g = gs_grid_blocks(n, PERMUTE_THREADS);
  if (inverse)
    permute_scatter_kernel<<<g, PERMUTE_THREADS, 0, s>>>(n, d_perm, d_in, d_out);
  else
    permute_gather_kernel<<<g, PERMUTE_THREADS, 0, s>>>(n, d_perm, d_in, d_out);
  return GS_CHECK_LAUNCH(s, inverse ? "permute_scatter_kernel" : "permute_gather_kernel");
}
