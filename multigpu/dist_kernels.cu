/* multigpu/dist_kernels.cu: the distributed product's device helpers: packing the entries a rank
 * sends (a gather through its send list), and the square root that turns an all-reduced sum of
 * squares into a norm.
 *
 * scatter_add_kernel: one thread per row of the compressed off-diagonal block, y[idx[i]] += t[i]
 * (rows distinct: no two threads touch one y entry).
 * gather_kernel: one thread per sent entry, a 64-bit grid-stride loop; idx and out coalesced,
 * x read at the listed rows (a halo is mostly a few contiguous runs of rows: boundary planes of
 * a mesh, so the reads are close to coalesced too). */
#include "core/error.h"
#include "multigpu/dist_impl.h"
#include "spmv/common_kernels.h"
#include "spmv/device_util.cuh"

#define GATHER_THREADS 256

static __global__ void __launch_bounds__(GATHER_THREADS)
gather_kernel(gs_idx_t n, const gs_idx_t *__restrict__ idx, const double *__restrict__ x,
              double *__restrict__ out)
{
  GS_GRID_STRIDE(i, n) out[i] = x[idx[i]];
}

static __global__ void __launch_bounds__(GATHER_THREADS)
scatter_add_kernel(gs_idx_t n, const gs_idx_t *__restrict__ idx, const double *__restrict__ src,
                   double *__restrict__ y)
{
  GS_GRID_STRIDE(i, n) y[idx[i]] += src[i];
}

static __global__ void sqrt_kernel(double *d) { d[0] = sqrt(d[0]); }

extern "C" gs_status_t gs_dist_gather(cudaStream_t stream, gs_idx_t n, const gs_idx_t *idx,
                                      const double *d_x, double *d_out)
{
  if (n <= 0) return GS_SUCCESS;
  gather_kernel<<<gs_grid_blocks(n, GATHER_THREADS), GATHER_THREADS, 0, stream>>>(n, idx, d_x,
                                                                                   d_out);
  return GS_CHECK_LAUNCH(stream, "gather_kernel");
}

extern "C" gs_status_t gs_dist_scatter_add(cudaStream_t stream, gs_idx_t n, const gs_idx_t *idx,
                                           const double *d_src, double *d_y)
{
  if (n <= 0) return GS_SUCCESS;
  scatter_add_kernel<<<gs_grid_blocks(n, GATHER_THREADS), GATHER_THREADS, 0, stream>>>(
      n, idx, d_src, d_y);
  return GS_CHECK_LAUNCH(stream, "scatter_add_kernel");
}

extern "C" gs_status_t gs_dist_sqrt(cudaStream_t stream, double *d)
{
  sqrt_kernel<<<1, 1, 0, stream>>>(d);
  return GS_CHECK_LAUNCH(stream, "sqrt_kernel");
}
