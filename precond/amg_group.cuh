/* precond/amg_group.cuh: a group of G threads working on one row in the AMG setup kernels (a warp
 * for G = 32, else the whole block of G threads): its rank, its barrier, and an exclusive prefix
 * sum of one int a thread (*total: the group's sum). The block's scan uses `wsum` (G / 32 ints of
 * shared memory) and leaves it free again before it returns. */
#ifndef GS_PRECOND_AMG_GROUP_CUH
#define GS_PRECOND_AMG_GROUP_CUH

#include <stdint.h>

template <int G> struct amg_group {
  static_assert(G % 32 == 0 && G > 32, "a block group is whole warps");
  static __device__ __forceinline__ int rank() { return threadIdx.x; }
  static __device__ __forceinline__ void sync() { __syncthreads(); }
  static __device__ __forceinline__ int32_t scan(int32_t c, int32_t *total, int32_t *wsum)
  {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int32_t x = c;
    for (int o = 1; o < 32; o <<= 1) {
      const int32_t y = __shfl_up_sync(0xffffffffu, x, o);
      if (lane >= o) x += y;
    }
    if (lane == 31) wsum[warp] = x;
    __syncthreads();
    int32_t before = 0, all = 0;
    for (int w = 0; w < G / 32; ++w) {
      const int32_t s = wsum[w];
      before += w < warp ? s : 0;
      all += s;
    }
    __syncthreads();
    *total = all;
    return before + x - c;
  }
};
template <> struct amg_group<32> {
  static __device__ __forceinline__ int rank() { return threadIdx.x & 31; }
  static __device__ __forceinline__ void sync() { __syncwarp(); }
  static __device__ __forceinline__ int32_t scan(int32_t c, int32_t *total, int32_t *wsum)
  {
    (void)wsum;
    const int lane = threadIdx.x & 31;
    int32_t x = c;
    for (int o = 1; o < 32; o <<= 1) {
      const int32_t y = __shfl_up_sync(0xffffffffu, x, o);
      if (lane >= o) x += y;
    }
    *total = __shfl_sync(0xffffffffu, x, 31);
    return x - c;
  }
};

#endif
