/* select/hash_kernels.cu: the selection cache's matrix hash (select/hash.h) on the GPU, from the
 * shared device CSR: one warp a block of GS_HASH_BLOCK_WORDS words, lane j chaining words j,
 * j + 32, ... (consecutive lanes read consecutive entries), lane 0 folding the 32 chains in
 * order. The host folds the blocks' hashes (select/auto.c), so the key equals the host's bit
 * for bit. 26.5M entries (318 MB) take a pass over memory instead of the host's tens of ms. */
#include <stdint.h>

#include "core/context_impl.h"
#include "core/error.h"
#include "select/hash.h"
#include "spmv/spmv_impl.h"

#define HASH_WARPS 8

/* the word of entry i of a stream: row pointers widened to int64, columns as uint32, values'
 * bits */
__device__ __forceinline__ uint64_t hash_word(const int32_t *p, int64_t i)
{
  return (uint64_t)(int64_t)p[i];
}
__device__ __forceinline__ uint64_t hash_word(const int64_t *p, int64_t i)
{
  return (uint64_t)p[i];
}
__device__ __forceinline__ uint64_t hash_word(const uint32_t *p, int64_t i)
{
  return (uint64_t)p[i];
}
__device__ __forceinline__ uint64_t hash_word(const double *p, int64_t i)
{
  return (uint64_t)__double_as_longlong(p[i]);
}

/* blocks first .. first + nblocks - 1 (global numbering) over a stream of `words` words */
template <typename T>
__global__ void __launch_bounds__(HASH_WARPS * 32)
    hash_blocks_kernel(const T *__restrict__ p, int64_t words, uint64_t first, uint64_t nblocks,
                       uint64_t *__restrict__ out)
{
  const uint64_t blk = (uint64_t)blockIdx.x * HASH_WARPS + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (blk >= nblocks) return;
  const int64_t base = (int64_t)blk * GS_HASH_BLOCK_WORDS;
  const int64_t left = words - base;
  const int64_t cnt = left < GS_HASH_BLOCK_WORDS ? left : GS_HASH_BLOCK_WORDS;
  uint64_t h = gs_hash_lane_seed(first + blk, lane);
  int64_t i = lane;
  for (; i + 3 * 32 < cnt; i += 4 * 32) { /* four loads in flight a lane */
    const uint64_t w0 = hash_word(p, base + i), w1 = hash_word(p, base + i + 32),
                   w2 = hash_word(p, base + i + 64), w3 = hash_word(p, base + i + 96);
    h = gs_hash_mix(gs_hash_mix(gs_hash_mix(gs_hash_mix(h, w0), w1), w2), w3);
  }
  for (; i < cnt; i += 32) h = gs_hash_mix(h, hash_word(p, base + i));
  uint64_t lanes[GS_HASH_LANES];
#pragma unroll
  for (int j = 0; j < GS_HASH_LANES; ++j) lanes[j] = __shfl_sync(0xffffffffu, h, j);
  if (lane == 0) out[first + blk] = gs_hash_block_fold((uint64_t)cnt, lanes);
}

template <typename T>
static gs_status_t launch(cudaStream_t s, const T *p, int64_t words, uint64_t first,
                          uint64_t *d_out)
{
  const uint64_t nb = ((uint64_t)words + GS_HASH_BLOCK_WORDS - 1) / GS_HASH_BLOCK_WORDS;
  if (nb == 0) return GS_SUCCESS;
  const uint64_t grid = (nb + HASH_WARPS - 1) / HASH_WARPS;
  if (grid > 0x7fffffffull)
    return GS_ERROR(GS_ERR_UNSUPPORTED, "matrix hash: %llu blocks", (unsigned long long)nb);
  hash_blocks_kernel<T><<<(unsigned)grid, HASH_WARPS * 32, 0, s>>>(p, words, first, nb, d_out);
  return GS_CHECK_LAUNCH(s, "hash_blocks_kernel");
}

extern "C" gs_status_t gs_select_hash_dev_blocks(gs_context_t *ctx, const gs_dcsr_t *D,
                                                 uint64_t *h_out)
{
  gs_status_t st = GS_SUCCESS;
  uint64_t *d_out = NULL;
  if (!ctx || !D || !h_out)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_select_hash_dev_blocks: NULL argument");
  if (D->m < 0 || D->nnz < 0 || (D->nnz > 0 && (!D->d_col || !D->d_val)) ||
      (D->wide ? !D->d_row_ptr64 : !D->d_row_ptr32))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_select_hash_dev_blocks: an incomplete device CSR");
  uint64_t first[4];
  gs_hash_layout(D->m, D->nnz, first);
  GS_TRY(gs_context_activate(ctx));
  GS_TRY(gs_dmalloc(ctx, (void **)&d_out, first[3] * sizeof *d_out, "matrix hash"));
  if (D->wide) GS_TRY(launch(ctx->stream, D->d_row_ptr64, (int64_t)D->m + 1, first[0], d_out));
  else GS_TRY(launch(ctx->stream, D->d_row_ptr32, (int64_t)D->m + 1, first[0], d_out));
  GS_TRY(launch(ctx->stream, (const uint32_t *)D->d_col, D->nnz, first[1], d_out));
  GS_TRY(launch(ctx->stream, D->d_val, D->nnz, first[2], d_out));
  GS_TRY(GS_CUDA(cudaMemcpyAsync(h_out, d_out, first[3] * sizeof *d_out, cudaMemcpyDeviceToHost,
                                 ctx->stream)));
  GS_TRY(GS_CUDA(cudaStreamSynchronize(ctx->stream)));
cleanup:
  if (st != GS_SUCCESS && d_out) cudaStreamSynchronize(ctx->stream);
  gs_dfree(ctx, d_out);
  return st;
}
