/* spmv/device_util.cuh: small device helpers shared by the kernels (CUDA only). */
#ifndef GS_SPMV_DEVICE_UTIL_CUH
#define GS_SPMV_DEVICE_UTIL_CUH

#include <stdint.h>

#include <cuda_runtime.h>

#include "core/error.h"
#include "gpusolve/status.h"

/* Grid-stride loop over i = 0 .. n-1 (int64_t i), launched with gs_grid_blocks
 * (spmv/common_kernels.h). The thread number and the stride are formed in 64 bits:
 * blockIdx.x * blockDim.x is an unsigned 32-bit product, and the sum i + stride passes 2^31 for
 * n near 2^31 - 1 (issue 8: a grid of 2^32 threads wrapped to thread 0 and left rows unwritten). */
#define GS_GRID_STRIDE(i, n)                                                                    \
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (int64_t)(n);            \
       i += (int64_t)gridDim.x * blockDim.x)

/* Programmatic dependent launch (sm_90; a no-op elsewhere): a kernel launched with the
 * programmatic-stream-serialization attribute (gs_launch_after below) may be
 * scheduled while the kernel before it in the stream still runs, once every block of that
 * kernel has called gs_pdl_trigger() (or exited); it must call gs_pdl_wait(), which returns when
 * that kernel has completed and its writes are visible, before it reads or writes anything that
 * kernel writes. What it hides is the launch and the ramp of the second kernel. */
static __device__ __forceinline__ void gs_pdl_trigger(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
static __device__ __forceinline__ void gs_pdl_wait(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/* Launches kernel<<<grid, block, 0, s>>>(args...) with the programmatic-stream-serialization
 * attribute: the kernel must call gs_pdl_wait() before it touches what the kernel before it
 * writes, and only ever follows a kernel of ours that calls gs_pdl_trigger() and whose own launch
 * waited for everything before it. `name` goes into the launch check's message. */
template <typename... Exp, typename... Act>
static gs_status_t gs_launch_after(void (*kernel)(Exp...), unsigned grid, unsigned block,
                                   cudaStream_t s, const char *name, Act &&...args)
{
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(grid);
  cfg.blockDim = dim3(block);
  cfg.dynamicSmemBytes = 0;
  cfg.stream = s;
  cfg.attrs = at;
  cfg.numAttrs = 1;
  GS_CHECK(GS_CUDA(cudaLaunchKernelEx(&cfg, kernel, static_cast<Act &&>(args)...)));
  return GS_CHECK_LAUNCH(s, name);
}

/* Fused multiply-add in the precision of its arguments: the kernels templated on the vector
 * type T (double, or float for precision=float) call gs_fma(a, x, s) for either. */
static __device__ __forceinline__ double gs_fma(double a, double b, double c)
{
  return fma(a, b, c);
}
static __device__ __forceinline__ float gs_fma(float a, float b, float c) { return fmaf(a, b, c); }

/* Matrix entries are read once per product: load them through the read-only path without
 * allocating in L1 (ld.global.nc.L1::no_allocate), so that L1 keeps the gathered entries of x,
 * which neighbouring rows reuse. One generator for every width: NAME(const PTR *p) returns RET
 * loaded as PTX type TY into a register of constraint C (sub-word loads zero-extend into 32
 * bits). */
#define GS_LD_STREAM(NAME, RET, PTR, TY, C)                                                     \
  static __device__ __forceinline__ RET NAME(const PTR *p)                                      \
  {                                                                                             \
    RET v;                                                                                      \
    asm volatile("ld.global.nc.L1::no_allocate." TY " %0, [%1];" : "=" C(v) : "l"(p));         \
    return v;                                                                                   \
  }
GS_LD_STREAM(ld_stream, double, double, "f64", "d")
GS_LD_STREAM(ld_stream, float, float, "f32", "f")
GS_LD_STREAM(ld_stream, gs_idx_t, gs_idx_t, "s32", "r")
GS_LD_STREAM(ld_stream_u8, uint32_t, uint8_t, "u8", "r")
GS_LD_STREAM(ld_stream_u16, uint32_t, uint8_t, "u16", "r")
GS_LD_STREAM(ld_stream_u32, uint32_t, uint8_t, "u32", "r")
#undef GS_LD_STREAM

/* 8 and 16 bytes in one vector load, by the same path. */
static __device__ __forceinline__ uint2 ld_stream_v2(const uint8_t *p)
{
  uint2 v;
  asm volatile("ld.global.nc.L1::no_allocate.v2.u32 {%0, %1}, [%2];"
               : "=r"(v.x), "=r"(v.y) : "l"(p));
  return v;
}
static __device__ __forceinline__ uint4 ld_stream_v4(const uint8_t *p)
{
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

#endif
