/* spmv/device_util.cuh: small device helpers shared by the SpMV kernels (CUDA only). */
#ifndef GS_SPMV_DEVICE_UTIL_CUH
#define GS_SPMV_DEVICE_UTIL_CUH

#include "gpusolve/status.h"

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
