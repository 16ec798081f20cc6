/* select/hash.h: the matrix hash that keys the selection cache (not installed), one definition
 * for the host (select/auto.c) and the GPU (select/hash_kernels.cu), so that a key computed
 * from the shared device CSR equals the one computed from the host CSR.
 *
 * The matrix is three streams of 64-bit words, one word an entry whatever its storage: the
 * row pointers (as int64: the device's 32-bit ones give the same words), the columns (as
 * uint32) and the values (their bit patterns). Each stream is cut into blocks of
 * GS_HASH_BLOCK_WORDS words, numbered across the streams; in a block, lane j of 32 chains the
 * words j, j + 32, j + 64, ... (a warp reads them coalesced; the host's 32 chains run
 * independently), and the block's hash folds the 32 chains in lane order. The matrix's hash
 * folds its sizes, then the blocks' hashes in order, then splitmix64's finaliser. Not
 * cryptographic: the cache file also records the sizes, GPU and version, and a stale file
 * costs only a wrong guess of times, never a wrong product. */
#ifndef GS_SELECT_HASH_H
#define GS_SELECT_HASH_H
#include <stdint.h>
#include "gpusolve/context.h"
#include "gpusolve/status.h"

#ifdef __CUDACC__
#define GS_HASH_FN static __host__ __device__ __forceinline__
#else
#define GS_HASH_FN static inline
#endif

#define GS_HASH_BLOCK_WORDS 8192
#define GS_HASH_LANES 32

/* one multiply-rotate step of a chain */
GS_HASH_FN uint64_t gs_hash_mix(uint64_t h, uint64_t w)
{
  h ^= w * 0x9E3779B97F4A7C15ull;
  h = (h << 31) | (h >> 33);
  return h * 0xBF58476D1CE4E5B9ull + 0x94D049BB133111EBull;
}

/* lane j's chain of block b starts here */
GS_HASH_FN uint64_t gs_hash_lane_seed(uint64_t b, int j)
{
  return gs_hash_mix(gs_hash_mix(0x626C6F636B686173ull, b), (uint64_t)j);
}

/* the block's hash from its word count and its lanes' chains, in lane order */
GS_HASH_FN uint64_t gs_hash_block_fold(uint64_t words, const uint64_t *lanes)
{
  uint64_t h = gs_hash_mix(0x666F6C64ull, words);
  for (int j = 0; j < GS_HASH_LANES; ++j) h = gs_hash_mix(h, lanes[j]);
  return h;
}

/* The blocks' layout: first[k] = the index of stream k's first block (k = 0 row pointers,
 * 1 columns, 2 values), first[3] = how many blocks in all. */
GS_HASH_FN void gs_hash_layout(int64_t m, int64_t nnz, uint64_t first[4])
{
  const uint64_t w[3] = {(uint64_t)m + 1, (uint64_t)nnz, (uint64_t)nnz};
  first[0] = 0;
  for (int k = 0; k < 3; ++k)
    first[k + 1] = first[k] + (w[k] + GS_HASH_BLOCK_WORDS - 1) / GS_HASH_BLOCK_WORDS;
}

#ifdef __cplusplus
extern "C" {
#endif
struct gs_dcsr;
/** The block hashes of the device CSR D into h_out (host, first[3] entries of
 *  gs_hash_layout), on ctx's stream; waits for it. */
gs_status_t gs_select_hash_dev_blocks(gs_context_t *ctx, const struct gs_dcsr *D,
                                      uint64_t *h_out);
#ifdef __cplusplus
}
#endif
#endif
