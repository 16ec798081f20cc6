/* solvers/reduce_device.cuh: the single-launch deterministic grid reduction of the solver kernels
 * (CUDA only), for kernels that sum several values in one pass over the vectors (pipelined CG's
 * update, the multi-dot of the vector table). The scheme of grid_sum in solvers/vec_kernels.cu:
 * each block sums its threads' shares in a fixed tree (warp shuffles, then the warps' sums),
 * thread 0 writes the block's partial to red[k].part[block] and counts its arrival (after a
 * fence, the CUDA threadFenceReduction pattern); the last block to arrive sums the partials in
 * block order and writes the totals. The grid is a function of n alone (gs_red_grid), so the
 * result is the same whichever block arrives last: deterministic, run after run.
 * Assumes: blocks of GS_RED_THREADS threads; at most GS_RED_BLOCKS blocks; red[0..K) with their
 * counters at 0 (left at 0: the last block resets the one it used). */
#ifndef GS_SOLVERS_REDUCE_DEVICE_CUH
#define GS_SOLVERS_REDUCE_DEVICE_CUH

#include "solvers/solver_impl.h"
#include "spmv/common_kernels.h"

#define GS_RED_THREADS 256 /* threads per block of every kernel that uses gs_grid_sum */

/* Blocks for a reducing kernel over n entries: the grid rule, capped at one partial per slot of
 * gs_red_t (the grid-stride loops cover the rest). */
static inline unsigned gs_red_grid(gs_idx_t n)
{
  const unsigned g = gs_grid_blocks(n, GS_RED_THREADS);
  return g < GS_RED_BLOCKS ? g : GS_RED_BLOCKS;
}

/* The sum of v over the block, valid in thread 0. Every thread of the block calls it (it holds a
 * barrier). sh: GS_RED_THREADS / 32 doubles of shared memory that no other call is still reading:
 * two calls in a row take distinct arrays or are separated by a barrier. */
__device__ static inline double gs_block_sum(double v, double *sh)
{
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o); /* within the warp */
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) sh[warp] = v;
  __syncthreads();
  double t = 0.0;
  if (warp == 0) { /* the warps' sums, in warp order */
    t = lane < GS_RED_THREADS / 32 ? sh[lane] : 0.0;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) t += __shfl_xor_sync(0xffffffffu, t, o);
  }
  return t;
}

/* K sums over the grid in one pass: out[k] = the sum over all threads of v[k]. Every thread of
 * every block calls it once, unconditionally (barriers inside; the arrival count must reach
 * gridDim.x, so a kernel that returns early must do so in every block alike, before the call).
 * Uses red[0..K) (partials) and red[0].count. Returns true in the one thread that wrote out
 * (thread 0 of the last block), false elsewhere; the caller returns after it without another
 * barrier. */
template <int K>
__device__ static inline bool gs_grid_sum(const double (&v)[K], gs_red_t *red, double *out)
{
  __shared__ double sh[K][GS_RED_THREADS / 32];
  __shared__ bool last;
  double b[K];
#pragma unroll
  for (int k = 0; k < K; ++k) b[k] = gs_block_sum(v[k], sh[k]); /* distinct arrays: no race */
  if (threadIdx.x == 0) {
#pragma unroll
    for (int k = 0; k < K; ++k) red[k].part[blockIdx.x] = b[k];
    __threadfence(); /* the partials are visible device-wide before the count says so */
    last = atomicAdd(&red[0].count, 1u) == gridDim.x - 1;
  }
  __syncthreads(); /* also: every read of sh above is done before sh is reused below */
  if (!last) return false; /* uniform within the block (shared flag) */
  __threadfence();
  double a[K];
#pragma unroll
  for (int k = 0; k < K; ++k) a[k] = 0.0;
  for (unsigned blk = threadIdx.x; blk < gridDim.x; blk += GS_RED_THREADS) { /* block order */
#pragma unroll
    for (int k = 0; k < K; ++k) a[k] += ((volatile const double *)red[k].part)[blk];
  }
#pragma unroll
  for (int k = 0; k < K; ++k) a[k] = gs_block_sum(a[k], sh[k]);
  if (threadIdx.x != 0) return false;
#pragma unroll
  for (int k = 0; k < K; ++k) out[k] = a[k];
  red[0].count = 0; /* every block has arrived: ready for the next kernel on the stream */
  return true;
}

#endif
