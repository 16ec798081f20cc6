/* precond/jacobi_kernels.cu: z = dinv .* r.
 * Work division: one thread per entry, a 64-bit grid-stride loop on the shared grid rule
 * (gs_grid_blocks, spmv/common_kernels.h), 256 threads per block; three unit-stride coalesced
 * streams (dinv, r read; z written): 24 bytes per row. r and z may be the same vector (each
 * entry is read before it is written by the same thread). */
#include "core/error.h"
#include "precond/precond_impl.h"
#include "spmv/common_kernels.h"
#include "spmv/device_util.cuh"

#define JACOBI_THREADS 256

static __global__ void __launch_bounds__(JACOBI_THREADS)
jacobi_apply_kernel(gs_idx_t n, const double *__restrict__ dinv, const double *r, double *z)
{
  GS_GRID_STRIDE(i, n) z[i] = dinv[i] * r[i];
}

extern "C" gs_status_t gs_jacobi_apply_kernel(cudaStream_t stream, gs_idx_t n,
                                              const double *d_dinv, const double *d_r,
                                              double *d_z)
{
  jacobi_apply_kernel<<<gs_grid_blocks(n, JACOBI_THREADS), JACOBI_THREADS, 0, stream>>>(
      n, d_dinv, d_r, d_z);
  return GS_CHECK_LAUNCH(stream, "jacobi_apply_kernel");
}
