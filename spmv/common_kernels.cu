/* spmv/common_kernels.cu: device helpers shared by several backends.
 *
 * scale_kernel: one thread per entry, a 64-bit grid-stride loop on gs_grid_blocks, coalesced;
 * y is only read when beta != 0. */
#include "core/error.h"
#include "spmv/common_kernels.h"
#include "spmv/device_util.cuh"

#define SCALE_THREADS 256

static __global__ void __launch_bounds__(SCALE_THREADS)
scale_kernel(gs_idx_t n, double beta, double *__restrict__ y)
{
  GS_GRID_STRIDE(i, n) y[i] = beta == 0.0 ? 0.0 : beta * y[i];
}

extern "C" gs_status_t gs_launch_scale(cudaStream_t stream, gs_idx_t n, double beta, double *d_y)
{
  if (n <= 0 || beta == 1.0) return GS_SUCCESS;
  scale_kernel<<<gs_grid_blocks(n, SCALE_THREADS), SCALE_THREADS, 0, stream>>>(n, beta, d_y);
  return GS_CHECK_LAUNCH(stream, "scale_kernel");
}

extern "C" size_t gs_csr_bytes_per_apply(gs_idx_t m, gs_idx_t n, gs_off_t nnz,
                                         size_t offset_bytes)
{
  return ((size_t)m + 1) * offset_bytes + (size_t)nnz * (sizeof(gs_idx_t) + sizeof(double)) +
         (size_t)n * sizeof(double) + (size_t)m * sizeof(double);
}
