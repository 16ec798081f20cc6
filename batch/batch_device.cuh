/* batch/batch_device.cuh: device helpers of the batched kernels and the batched solver (CUDA
 * only): x staging, the block's CSR product with W threads per row, the warp segmented sum. */
#ifndef GS_BATCH_DEVICE_CUH
#define GS_BATCH_DEVICE_CUH

#include "batch/batch_impl.h"

#define GS_FULL_MASK 0xffffffffu

/* Anzt et al. section 3.2: a problem's x is read into shared memory first, so the gathers of the
 * product hit shared memory. A problem with more than `cap` columns keeps x in global memory
 * (the fallback; `cap` is what the launch reserved). Uniform per block: every thread returns the
 * same pointer, after a barrier when it staged. */
static __device__ __forceinline__ const double *gs_batch_stage(const double *__restrict__ x,
                                                               int32_t n, double *sx, int32_t cap)
{
  if (n > cap) return x;
  for (int32_t k = threadIdx.x; k < n; k += blockDim.x) sx[k] = x[k];
  __syncthreads();
  return sx;
}

/* sum_k val[k] x[ci[k]] over row r's entries with W threads per row (lane = thread's place in its
 * group): lane l takes entries start + l, start + l + W, ... (coalesced within the group). The
 * result is complete in lane 0 of the group. Every lane of the warp must call it (shuffles). */
static __device__ __forceinline__ double gs_batch_row_dot(const int32_t *__restrict__ rp,
                                                          const gs_idx_t *__restrict__ ci,
                                                          const double *__restrict__ val,
                                                          const double *x, int32_t r, int active,
                                                          int W, int lane)
{
  double sum = 0.0;
  if (active)
    for (uint32_t k = (uint32_t)rp[r] + lane; k < (uint32_t)rp[r + 1]; k += W) sum += val[k] * x[ci[k]];
  for (int off = W >> 1; off > 0; off >>= 1) sum += __shfl_down_sync(GS_FULL_MASK, sum, off, W);
  return sum;
}

/* Warp segmented sum (Anzt et al. section 3.3: "intra-warp atomic collisions are avoided using
 * warp-local segmented scans before each write"): lanes hold (row, v) with rows non-decreasing
 * over the active lanes (a prefix of the warp; inactive lanes hold row -1). An inclusive scan
 * inside each run of equal rows leaves the run's sum in its last lane, which adds it to y[row]
 * with one atomic. */
static __device__ __forceinline__ void gs_batch_seg_add(int32_t row, double v, double *y)
{
  const int lane = threadIdx.x & 31;
  for (int off = 1; off < 32; off <<= 1) {
    const double ov = __shfl_up_sync(GS_FULL_MASK, v, off);
    const int32_t orow = __shfl_up_sync(GS_FULL_MASK, row, off);
    if (lane >= off && orow == row) v += ov;
  }
  const int32_t next = __shfl_down_sync(GS_FULL_MASK, row, 1);
  if (row >= 0 && (lane == 31 || next != row)) atomicAdd(&y[row], v);
}

#endif
