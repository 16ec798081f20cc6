/* spmv/device_util.cuh: small device helpers shared by the kernels (CUDA only). */
#ifndef GS_SPMV_DEVICE_UTIL_CUH
#define GS_SPMV_DEVICE_UTIL_CUH

#include <stdint.h>

#include "gpusolve/status.h"

/* Grid-stride loop over i = 0 .. n-1 (int64_t i), launched with gs_grid_blocks
 * (spmv/common_kernels.h). The thread number and the stride are formed in 64 bits:
 * blockIdx.x * blockDim.x is an unsigned 32-bit product, and the sum i + stride passes 2^31 for
 * n near 2^31 - 1 (issue 8: a grid of 2^32 threads wrapped to thread 0 and left rows unwritten). */
#define GS_GRID_STRIDE(i, n)                                                                    \
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (int64_t)(n);            \
       i += (int64_t)gridDim.x * blockDim.x)

/* Matrix entries are read once per product: load them through the read-only path without
 * allocating in L1 (ld.global.nc.L1::no_allocate), so that L1 keeps the gathered entries of x,
 * which neighbouring rows reuse. */
static __device__ __forceinline__ double ld_stream(const double *p)
{
  double v;
  asm volatile("ld.global.nc.L1::no_allocate.f64 %0, [%1];" : "=d"(v) : "l"(p));
  return v;
}

static __device__ __forceinline__ gs_idx_t ld_stream(const gs_idx_t *p)
{
  gs_idx_t v;
  asm volatile("ld.global.nc.L1::no_allocate.s32 %0, [%1];" : "=r"(v) : "l"(p));
  return v;
}

#endif
