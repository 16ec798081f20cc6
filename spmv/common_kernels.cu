/* spmv/common_kernels.cu: device helpers shared by several backends.
 *
 * scale_kernel: one thread per entry, grid-stride, coalesced; y is only read when beta != 0. */
#include "core/error.h"
#include "spmv/common_kernels.h"

static __global__ void __launch_bounds__(256) scale_kernel(gs_idx_t n, double beta, double *__restrict__ y)
{
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    y[i] = beta == 0.0 ? 0.0 : beta * y[i];
}

extern "C" gs_status_t gs_launch_scale(cudaStream_t stream, gs_idx_t n, double beta, double *d_y)
{
  if (n <= 0 || beta == 1.0) return GS_SUCCESS;
  int blocks = (int)((n + 255) / 256);
  if (blocks > 65535) blocks = 65535;
  scale_kernel<<<blocks, 256, 0, stream>>>(n, beta, d_y);
  return GS_CHECK_LAUNCH(stream, "scale_kernel");
}

extern "C" size_t gs_csr_bytes_per_apply(gs_idx_t m, gs_idx_t n, gs_idx_t nnz)
{
  return ((size_t)m + 1) * sizeof(gs_idx_t) + (size_t)nnz * (sizeof(gs_idx_t) + sizeof(double)) +
         (size_t)n * sizeof(double) + (size_t)m * sizeof(double);
}
