/* spmv/sell_devbuild.cu: the sliced ELLPACK layouts (cuSPARSE's SELL, and SELL-P: Anzt, Tomov &
 * Dongarra, UT-EECS-14-727; sorting window of Kreutzer et al., SIAM J. Sci. Comput. 36(5), 2014)
 * built on the GPU from the shared device CSR, equal byte for byte to gs_sell_build_p's
 * (spmv/sell_build.c). Interface and steps: spmv/sell_devbuild.h.
 *
 * Passes (m rows, nnz entries, S slots, all on ctx's stream):
 *   sell_len_kernel     one thread a row: lengths, longest row, smallest trailing-zero count of
 *                       a row longer than its predecessor (block reductions, one atomic a block)
 *   sell_ascent_kernel  (only for a window that is neither a power of two nor the whole matrix)
 *   sell_key_kernel + cub::DeviceRadixSort::SortPairs (only when some window moves a row): the
 *                       key is (window, row_max - length) on just the bits they need; CUB's radix
 *                       sort is stable, so rows of one window and one length keep their order:
 *                       exactly the host's qsort on (length descending, row ascending)
 *   sell_width_kernel   min(C, 32) lanes a slice: the padded width, C*w slots, the widest slice
 *   cub::DeviceScan::ExclusiveSum of the 64-bit slot counts: the slice offsets
 *   sell_tile_kernel    one thread a slice: 32-bit offsets, and for every tile of SELL_TILE
 *                       slots the slice holding its first slot
 *   sell_fill_kernel    one block a tile, consecutive threads on consecutive slots (coalesced
 *                       writes of the column-major slices): each slot finds its slice by a
 *                       binary search between its tile's first and the next tile's first slice
 *                       (a few steps, cached), then writes its entry or the padding. Every slot
 *                       is written exactly once, balanced whatever the row lengths.
 * Assumptions: nnz <= INT32_MAX (d_row_ptr32), C a power of two, slots <= INT32_MAX before
 * filling (gs_sell_dev_check). */
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <stdint.h>
#include <string.h>

#include "core/error.h"
#include "spmv/common_kernels.h"
#include "spmv/device_util.cuh"
#include "spmv/sell_devbuild.h"

#define SELL_DEV_BLOCK 256
#define SELL_ITEMS 4
#define SELL_TILE (SELL_DEV_BLOCK * SELL_ITEMS) /* slots a block fills at a time */
#define SELL_REDUCE_BLOCKS 1024 /* grid cap of the kernels that end in an atomic a block */

static unsigned sell_reduce_grid(int64_t threads)
{
  const unsigned b = gs_grid_blocks(threads, SELL_DEV_BLOCK);
  return b < SELL_REDUCE_BLOCKS ? b : SELL_REDUCE_BLOCKS;
}

/* ---- small device helpers --------------------------------------------------------------- */

/* v reduced over the block (maximum, or minimum when !MAX), valid in thread 0. Every thread of
 * the block must call it (block-uniform control flow): it uses two barriers. */
template <bool MAX>
static __device__ unsigned long long sell_block_reduce(unsigned long long v)
{
  __shared__ unsigned long long s_part[SELL_DEV_BLOCK / 32];
  for (int off = 16; off > 0; off >>= 1) {
    const unsigned long long o = __shfl_xor_sync(0xffffffffu, v, off);
    v = MAX ? (o > v ? o : v) : (o < v ? o : v);
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads(); /* an earlier call's readers are done with s_part */
  if (lane == 0) s_part[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < (int)(blockDim.x >> 5) ? s_part[lane] : (MAX ? 0ull : ~0ull);
    for (int off = 16; off > 0; off >>= 1) {
      const unsigned long long o = __shfl_xor_sync(0xffffffffu, v, off);
      v = MAX ? (o > v ? o : v) : (o < v ? o : v);
    }
  }
  return v;
}

/* Row lengths and their summary: stat[0] = longest row (atomicMax from 0), stat[1] = smallest
 * trailing-zero count of a row i >= 1 longer than row i - 1 (atomicMin from 32). Sorting in
 * windows of 2^p rows moves a row exactly when such an ascent lies inside a window, i.e. at an
 * i that is not a multiple of 2^p: when stat[1] < p (sell_order's window_sorted, for every
 * power-of-two window at once). Each thread keeps its own maximum and minimum over its rows;
 * one block reduction and one atomic each per block at the end (the grid is capped at
 * SELL_REDUCE_BLOCKS, so the atomics stay few). */
static __global__ void __launch_bounds__(SELL_DEV_BLOCK)
sell_len_kernel(const int32_t *__restrict__ rp, int64_t m, int32_t *__restrict__ len,
                unsigned long long *stat)
{
  unsigned long long lmax = 0, tz = 32;
  GS_GRID_STRIDE(i, m)
  {
    const int32_t b = rp[i], e = rp[i + 1];
    len[i] = e - b;
    lmax = (unsigned long long)(e - b) > lmax ? (unsigned long long)(e - b) : lmax;
    if (i > 0 && e - b > b - rp[i - 1]) {
      const unsigned long long z = (unsigned long long)(__ffsll(i) - 1);
      tz = z < tz ? z : tz;
    }
  }
  lmax = sell_block_reduce<true>(lmax); /* every thread of the block reaches both */
  tz = sell_block_reduce<false>(tz);
  if (threadIdx.x == 0) {
    if (lmax > 0) atomicMax(&stat[0], lmax);
    if (tz < 32) atomicMin(&stat[1], tz);
  }
}

/* flag = 1 when some row i inside a window of sigma rows (i % sigma != 0) is longer than row
 * i - 1: the host's window_sorted fails there and the window is sorted. Only for a window that
 * is neither a power of two nor the whole matrix (sell_len_kernel's summary answers those).
 * Every writer stores the same value. */
static __global__ void sell_ascent_kernel(const int32_t *__restrict__ len, int64_t m,
                                          int64_t sigma, int *flag)
{
  GS_GRID_STRIDE(i, m)
  if (i % sigma != 0 && len[i] > len[i - 1]) *flag = 1;
}

/* Radix-sort keys of the sigma-window order: window number above (row_max - length), so that an
 * ascending sort puts the windows in order and, inside one, longer rows first; vals = row. */
template <typename K>
static __global__ void sell_key_kernel(const int32_t *__restrict__ len, int64_t m, int64_t sigma,
                                       int64_t row_max, int lbits, K *__restrict__ keys,
                                       int32_t *__restrict__ vals)
{
  GS_GRID_STRIDE(i, m)
  {
    keys[i] = ((K)(i / sigma) << lbits) | (K)(row_max - len[i]);
    vals[i] = (int32_t)i;
  }
}

/* The padded width of every slice (sell_widths of the host): g = min(C, 32) lanes a slice take
 * its stored rows r = s*C + lane, + g, ... (row perm[r] of A), a shuffle maximum over the g lanes
 * (g divides 32, so the xor partners stay in the slice's lanes), then cnt[s] = C * w rounded up
 * to a multiple of P, cnt[nslices] = 0 (the exclusive scan's total), and stat[2] = the largest
 * cnt (each thread's maximum, one block reduction and one atomic a block at the end). The loop
 * bound is block-uniform (threads cover nslices * g rounded up to whole blocks), so that every
 * lane of a warp runs the shuffles. */
static __global__ void __launch_bounds__(SELL_DEV_BLOCK)
sell_width_kernel(const int32_t *__restrict__ len, const int32_t *__restrict__ perm, int64_t m,
                  int logC, int logg, int64_t P, int64_t nslices, int64_t *__restrict__ cnt,
                  unsigned long long *stat)
{
  const int64_t C = (int64_t)1 << logC, g = (int64_t)1 << logg;
  const int64_t total = nslices << logg, stride = (int64_t)gridDim.x * blockDim.x;
  unsigned long long cmax = 0;
  if (blockIdx.x == 0 && threadIdx.x == 0) cnt[nslices] = 0;
  for (int64_t base = (int64_t)blockIdx.x * blockDim.x; base < total; base += stride) {
    const int64_t t = base + threadIdx.x, s = t >> logg, lane = t & (g - 1);
    int64_t w = 0;
    if (s < nslices) {
      const int64_t hi = (s + 1) * C < m ? (s + 1) * C : m;
      for (int64_t r = s * C + lane; r < hi; r += g) {
        const int32_t l = len[perm ? (int64_t)perm[r] : r];
        w = l > w ? l : w;
      }
    }
    for (int off = (int)g / 2; off > 0; off >>= 1) {
      const int64_t o = __shfl_xor_sync(0xffffffffu, w, off);
      w = o > w ? o : w;
    }
    if (s < nslices && lane == 0) {
      const int64_t c = C * ((w + P - 1) / P * P);
      cnt[s] = c;
      cmax = (unsigned long long)c > cmax ? (unsigned long long)c : cmax;
    }
  }
  cmax = sell_block_reduce<true>(cmax); /* after the loop: every thread of the block */
  if (threadIdx.x == 0 && cmax > 0) atomicMax(&stat[2], cmax);
}

/* stat[3] = slots (ptr[nslices]), stat[4] = the last slice's slot count: one read-back. */
static __global__ void sell_tail_kernel(const int64_t *ptr, const int64_t *cnt, int64_t nslices,
                                        unsigned long long *stat)
{
  stat[3] = (unsigned long long)ptr[nslices];
  stat[4] = (unsigned long long)cnt[nslices - 1];
}

/* One thread a slice: the 32-bit slice offsets (slots <= INT32_MAX, checked), and tile_slice[t]
 * = the slice holding slot t*SELL_TILE for every tile t starting inside slice s (each tile start
 * lies in exactly one non-empty slice: one writer), tile_slice[ntiles] = the last slice. */
static __global__ void sell_tile_kernel(const int64_t *__restrict__ ptr, int64_t nslices,
                                        int64_t ntiles, int32_t *__restrict__ slice_ptr,
                                        int32_t *__restrict__ tile_slice)
{
  GS_GRID_STRIDE(s, nslices)
  {
    const int64_t lo = ptr[s], hi = ptr[s + 1];
    slice_ptr[s] = (int32_t)lo;
    if (s == nslices - 1) {
      slice_ptr[nslices] = (int32_t)hi;
      tile_slice[ntiles] = (int32_t)s;
    }
    for (int64_t t = (lo + SELL_TILE - 1) / SELL_TILE; t * SELL_TILE < hi; ++t)
      tile_slice[t] = (int32_t)s;
  }
}

/* Every slot of the layout, once: slot q of slice s (ptr[s] <= q < ptr[s+1]) is entry
 * k = (q - ptr[s]) / C of stored row r = s*C + (q - ptr[s]) % C (column-major slice), i.e. of
 * row perm[r] of A; past that row's end, or for a row padding the last slice, column -1 and
 * value 0. Values are written as V: double, or float rounded to nearest (__double2float_rn,
 * the host's (float) cast). Block b takes tiles b, b + grid, ...; the slice of q is the last
 * slice in [tile_slice[tile], tile_slice[tile + 1]] whose offset is <= q. */
template <typename V>
static __global__ void __launch_bounds__(SELL_DEV_BLOCK)
sell_fill_kernel(const int32_t *__restrict__ rp, const int32_t *__restrict__ col,
                 const double *__restrict__ val, const int32_t *__restrict__ perm,
                 const int64_t *__restrict__ ptr, const int32_t *__restrict__ tile_slice,
                 int64_t ntiles, int64_t slots, int64_t m, int logC, int32_t *__restrict__ out_col,
                 V *__restrict__ out_val)
{
  const int64_t C = (int64_t)1 << logC;
  for (int64_t tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
    const int32_t s_lo = tile_slice[tile], s_hi = tile_slice[tile + 1];
#pragma unroll
    for (int j = 0; j < SELL_ITEMS; ++j) {
      const int64_t q = tile * SELL_TILE + j * SELL_DEV_BLOCK + threadIdx.x;
      if (q >= slots) break;
      int32_t lo = s_lo, hi = s_hi; /* ptr[lo] <= q holds throughout */
      while (lo < hi) {
        const int32_t mid = lo + (hi - lo + 1) / 2;
        if (ptr[mid] <= q) lo = mid;
        else hi = mid - 1;
      }
      const int64_t t = q - ptr[lo], r = ((int64_t)lo << logC) + (t & (C - 1)), k = t >> logC;
      int32_t c = -1;
      double v = 0.0;
      if (r < m) {
        const int64_t i = perm ? (int64_t)perm[r] : r;
        const int32_t b = rp[i], e = rp[i + 1];
        if (k < (int64_t)(e - b)) {
          c = col[b + k];
          v = val[b + k];
        }
      }
      out_col[q] = c;
      out_val[q] = (V)v; /* double -> float: round to nearest, as the host's cast */
    }
  }
}

/* ---- host side --------------------------------------------------------------------------- */

static int sell_log2(int64_t v)
{
  int l = 0;
  while (((int64_t)1 << l) < v) ++l;
  return l;
}

static int bit_width(uint64_t v)
{
  int b = 0;
  while (v) {
    ++b;
    v >>= 1;
  }
  return b;
}

static gs_status_t read_stats(gs_context_t *ctx, unsigned long long *h, const unsigned long long *d,
                              int count)
{
  GS_CHECK(GS_CUDA(cudaMemcpyAsync(h, d, (size_t)count * sizeof *h, cudaMemcpyDeviceToHost,
                                   ctx->stream)));
  return GS_CUDA(cudaStreamSynchronize(ctx->stream));
}

gs_status_t gs_sell_dev_lengths(gs_context_t *ctx, const gs_dcsr_t *A, int32_t **d_len,
                                gs_sell_dev_rows_t *rows)
{
  gs_status_t st = GS_SUCCESS;
  unsigned long long *d_stat = NULL, h_stat[2] = {0, 32};
  *d_len = NULL;
  rows->m = A->m;
  rows->row_max = 0;
  rows->min_ascent_tz = 32;
  if (A->m == 0) return GS_SUCCESS;
  { /* one allocation: the lengths, then the two scalars */
    const size_t lb = ((size_t)A->m * sizeof(int32_t) + 255) / 256 * 256;
    GS_TRY(gs_dmalloc_ordered(ctx, (void **)d_len, lb + sizeof h_stat, "SELL row lengths"));
    d_stat = (unsigned long long *)((char *)*d_len + lb);
  }
  GS_TRY(GS_CUDA(cudaMemcpyAsync(d_stat, h_stat, sizeof h_stat, cudaMemcpyHostToDevice,
                                 ctx->stream)));
  sell_len_kernel<<<sell_reduce_grid(A->m), SELL_DEV_BLOCK, 0, ctx->stream>>>(
      A->d_row_ptr32, A->m, *d_len, d_stat);
  GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "sell_len_kernel"));
  GS_TRY(read_stats(ctx, h_stat, d_stat, 2));
  rows->row_max = (gs_off_t)h_stat[0];
  rows->min_ascent_tz = (int)h_stat[1];
cleanup:
  if (st != GS_SUCCESS) { /* the kernel is done with them before they go */
    cudaStreamSynchronize(ctx->stream);
    gs_dfree(ctx, *d_len);
    *d_len = NULL;
  }
  return st;
}

gs_status_t gs_sell_dev_moves(gs_context_t *ctx, const int32_t *d_len,
                              const gs_sell_dev_rows_t *rows, gs_idx_t sigma, int *moves)
{
  gs_status_t st = GS_SUCCESS;
  int *d_flag = NULL, h_flag = 0;
  *moves = 0;
  if (sigma <= 1 || rows->m <= 1 || rows->min_ascent_tz >= 32) return GS_SUCCESS; /* no ascent */
  if (sigma >= rows->m) { /* one window: any ascent moves a row */
    *moves = 1;
    return GS_SUCCESS;
  }
  if ((sigma & (sigma - 1)) == 0) {
    *moves = rows->min_ascent_tz < sell_log2(sigma);
    return GS_SUCCESS;
  }
  GS_TRY(gs_dmalloc_ordered(ctx, (void **)&d_flag, sizeof *d_flag, "SELL window flag"));
  GS_TRY(GS_CUDA(cudaMemsetAsync(d_flag, 0, sizeof *d_flag, ctx->stream)));
  sell_ascent_kernel<<<gs_grid_blocks(rows->m, SELL_DEV_BLOCK), SELL_DEV_BLOCK, 0,
                       ctx->stream>>>(d_len, rows->m, sigma, d_flag);
  GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "sell_ascent_kernel"));
  GS_TRY(GS_CUDA(cudaMemcpyAsync(&h_flag, d_flag, sizeof h_flag, cudaMemcpyDeviceToHost,
                                 ctx->stream)));
  GS_TRY(GS_CUDA(cudaStreamSynchronize(ctx->stream)));
  *moves = h_flag != 0;
cleanup:
  gs_dfree(ctx, d_flag);
  return st;
}

static size_t align256(size_t b) { return (b + 255) / 256 * 256; }

/* *d_perm = the stable sigma-window order (a fresh counted array of m rows). */
template <typename K>
static gs_status_t sell_sort(gs_context_t *ctx, const int32_t *d_len,
                             const gs_sell_dev_rows_t *rows, int64_t sigma, int32_t *d_perm)
{
  gs_status_t st = GS_SUCCESS;
  const int64_t m = rows->m, nwin = (m + sigma - 1) / sigma;
  const int lbits = bit_width((uint64_t)rows->row_max), end_bit = lbits + bit_width((uint64_t)(nwin - 1));
  char *d_scratch = NULL;
  size_t temp = 0;
  GS_TRY(GS_CUDA(cub::DeviceRadixSort::SortPairs(NULL, temp, (const K *)NULL, (K *)NULL,
                                                 (const int32_t *)NULL, (int32_t *)NULL, m, 0,
                                                 end_bit, ctx->stream)));
  {
    const size_t kb = align256((size_t)m * sizeof(K)), vb = align256((size_t)m * sizeof(int32_t));
    GS_TRY(gs_dmalloc_ordered(ctx, (void **)&d_scratch, 2 * kb + vb + temp, "SELL row sort"));
    K *keys = (K *)d_scratch, *keys_out = (K *)(d_scratch + kb);
    int32_t *vals = (int32_t *)(d_scratch + 2 * kb);
    void *d_temp = d_scratch + 2 * kb + vb;
    sell_key_kernel<K><<<gs_grid_blocks(m, SELL_DEV_BLOCK), SELL_DEV_BLOCK, 0, ctx->stream>>>(
        d_len, m, sigma, rows->row_max, lbits, keys, vals);
    GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "sell_key_kernel"));
    GS_TRY(GS_CUDA(cub::DeviceRadixSort::SortPairs(d_temp, temp, keys, keys_out, vals, d_perm, m,
                                                   0, end_bit, ctx->stream)));
  }
cleanup: /* the scratch returns in the stream's order, after the sort */
  gs_dfree(ctx, d_scratch);
  return st;
}

void gs_sell_dev_shape_free(gs_context_t *ctx, gs_sell_dev_shape_t *sh)
{
  if (!sh) return;
  gs_dfree(ctx, sh->d_perm);
  gs_dfree(ctx, sh->d_ptr);
  sh->d_perm = NULL;
  sh->d_ptr = NULL;
  sh->d_stat = NULL;
  sh->pending = 0;
}

gs_status_t gs_sell_dev_shape_async(gs_context_t *ctx, const int32_t *d_len,
                                    const gs_sell_dev_rows_t *rows, gs_idx_t C, gs_idx_t P,
                                    gs_idx_t sigma, int moves, gs_sell_dev_shape_t *sh)
{
  gs_status_t st = GS_SUCCESS;
  const int64_t m = rows->m;
  char *d_scratch = NULL;
  const size_t stat_bytes = 5 * sizeof(unsigned long long);
  memset(sh, 0, sizeof *sh);
  sh->C = C;
  sh->rows_m = m;
  sh->P = P;
  sh->sigma = sigma;
  if (C < 1 || (C & (C - 1)) != 0 || P < 1 || sigma < 1)
    return GS_ERROR(GS_ERR_INTERNAL, "SELL device build: slice size %d (a power of two), "
                    "padding %d, window %d", (int)C, (int)P, (int)sigma);
  const int logC = sell_log2(C), logg = logC < 5 ? logC : 5;
  const int64_t nslices = m == 0 ? 0 : (m - 1) / C + 1;
  sh->nslices = (gs_idx_t)nslices;
  if (nslices == 0) return GS_SUCCESS;
  if (moves && sigma > 1 && m > 1) {
    GS_TRY(gs_dmalloc_ordered(ctx, (void **)&sh->d_perm, (size_t)m * sizeof(int32_t),
                              "SELL row permutation"));
    const int64_t nwin = (m + sigma - 1) / sigma;
    if (bit_width((uint64_t)rows->row_max) + bit_width((uint64_t)(nwin - 1)) <= 32)
      GS_TRY(sell_sort<uint32_t>(ctx, d_len, rows, sigma, sh->d_perm));
    else
      GS_TRY(sell_sort<unsigned long long>(ctx, d_len, rows, sigma, sh->d_perm));
  }
  {
    /* one allocation, owned by sh->d_ptr: the offsets, then the counts, the scalars and the
     * scan's storage (a few bytes a slice, kept until gs_sell_dev_shape_free) */
    size_t temp = 0;
    GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(NULL, temp, (const int64_t *)NULL,
                                                 (int64_t *)NULL, nslices + 1, ctx->stream)));
    const size_t cb = align256(((size_t)nslices + 1) * sizeof(int64_t)),
                 sb = align256(stat_bytes);
    GS_TRY(gs_dmalloc_ordered(ctx, (void **)&sh->d_ptr, 2 * cb + sb + temp, "SELL slice offsets"));
    d_scratch = (char *)sh->d_ptr + cb; /* freed with sh->d_ptr */
    int64_t *d_cnt = (int64_t *)d_scratch;
    unsigned long long *d_stat = (unsigned long long *)(d_scratch + cb);
    GS_TRY(GS_CUDA(cudaMemsetAsync(d_stat, 0, stat_bytes, ctx->stream)));
    sell_width_kernel<<<sell_reduce_grid(nslices << logg), SELL_DEV_BLOCK, 0,
                        ctx->stream>>>(d_len, sh->d_perm, m, logC, logg, P, nslices, d_cnt,
                                       d_stat);
    GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "sell_width_kernel"));
    GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(d_scratch + cb + sb, temp, d_cnt, sh->d_ptr,
                                                 nslices + 1, ctx->stream)));
    sell_tail_kernel<<<1, 1, 0, ctx->stream>>>(sh->d_ptr, d_cnt, nslices, d_stat);
    GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "sell_tail_kernel"));
    sh->d_stat = d_stat;
    sh->pending = 1;
  }
cleanup:
  if (st != GS_SUCCESS) gs_sell_dev_shape_free(ctx, sh); /* freed in the stream's order */
  return st;
}

gs_status_t gs_sell_dev_shape_read(gs_context_t *ctx, gs_sell_dev_shape_t *sh)
{
  unsigned long long h_stat[5] = {0, 0, 0, 0, 0};
  if (!sh->pending) return GS_SUCCESS;
  GS_CHECK(read_stats(ctx, h_stat, sh->d_stat, 5)); /* waits for the stream */
  const int64_t C = sh->C, m = sh->rows_m, nslices = sh->nslices;
  const int64_t slots = (int64_t)h_stat[3], wlast = (int64_t)h_stat[4] / C;
  const int64_t wmax = (int64_t)h_stat[2] / C;
  sh->slots = slots;
  sh->used = slots - (nslices * C - m) * wlast; /* only the last slice has padding rows */
  sh->max_width = (gs_idx_t)(wmax < INT32_MAX ? wmax : INT32_MAX);
  sh->pending = 0;
  return GS_SUCCESS;
}

gs_status_t gs_sell_dev_shape(gs_context_t *ctx, const int32_t *d_len,
                              const gs_sell_dev_rows_t *rows, gs_idx_t C, gs_idx_t P,
                              gs_idx_t sigma, int moves, gs_sell_dev_shape_t *sh)
{
  gs_status_t st = GS_SUCCESS;
  GS_CHECK(gs_sell_dev_shape_async(ctx, d_len, rows, C, P, sigma, moves, sh));
  GS_TRY(gs_sell_dev_shape_read(ctx, sh));
cleanup:
  if (st != GS_SUCCESS) gs_sell_dev_shape_free(ctx, sh);
  return st;
}

gs_status_t gs_sell_dev_check(const gs_sell_dev_shape_t *sh, gs_off_t nnz,
                              const gs_sell_params_t *p)
{
  return gs_sell_check(sh->slots, sh->used, sh->max_width, nnz, p);
}

void gs_sell_dev_free(gs_context_t *ctx, gs_sell_dev_t *L)
{
  if (!L) return;
  gs_dfree(ctx, L->d_slice_ptr);
  gs_dfree(ctx, L->d_col);
  gs_dfree(ctx, L->d_val);
  gs_dfree(ctx, L->d_valf);
  memset(L, 0, sizeof *L);
}

gs_status_t gs_sell_dev_fill(gs_context_t *ctx, const gs_dcsr_t *A, const gs_sell_dev_shape_t *sh,
                             int float_values, gs_sell_dev_t *out)
{
  gs_status_t st = GS_SUCCESS;
  int32_t *d_tiles = NULL;
  const int64_t nslices = sh->nslices, slots = sh->slots;
  const int64_t ntiles = (slots + SELL_TILE - 1) / SELL_TILE;
  memset(out, 0, sizeof *out);
  if (A->wide || slots > INT32_MAX)
    return GS_ERROR(GS_ERR_INTERNAL, "SELL device fill: wide matrix or unchecked slot count");
  GS_TRY(gs_dmalloc_ordered(ctx, (void **)&out->d_slice_ptr, ((size_t)nslices + 1) * sizeof(int32_t),
                            "SELL slice offsets"));
  if (nslices == 0) {
    GS_TRY(GS_CUDA(cudaMemsetAsync(out->d_slice_ptr, 0, sizeof(int32_t), ctx->stream)));
    goto cleanup;
  }
  GS_TRY(gs_dmalloc_ordered(ctx, (void **)&d_tiles, ((size_t)ntiles + 1) * sizeof(int32_t),
                            "SELL tile slices"));
  if (slots > 0) {
    GS_TRY(gs_dmalloc_ordered(ctx, (void **)&out->d_col, (size_t)slots * sizeof(int32_t),
                              "SELL columns"));
    if (float_values)
      GS_TRY(gs_dmalloc_ordered(ctx, (void **)&out->d_valf, (size_t)slots * sizeof(float),
                                "SELL values"));
    else
      GS_TRY(gs_dmalloc_ordered(ctx, (void **)&out->d_val, (size_t)slots * sizeof(double),
                                "SELL values"));
  }
  sell_tile_kernel<<<gs_grid_blocks(nslices, SELL_DEV_BLOCK), SELL_DEV_BLOCK, 0, ctx->stream>>>(
      sh->d_ptr, nslices, ntiles, out->d_slice_ptr, d_tiles);
  GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "sell_tile_kernel"));
  if (slots > 0) {
    const unsigned grid =
        (unsigned)(ntiles < GS_GRID_MAX_BLOCKS ? ntiles : GS_GRID_MAX_BLOCKS);
    const int logC = sell_log2(sh->C);
    if (float_values)
      sell_fill_kernel<float><<<grid, SELL_DEV_BLOCK, 0, ctx->stream>>>(
          A->d_row_ptr32, A->d_col, A->d_val, sh->d_perm, sh->d_ptr, d_tiles, ntiles, slots,
          A->m, logC, out->d_col, out->d_valf);
    else
      sell_fill_kernel<double><<<grid, SELL_DEV_BLOCK, 0, ctx->stream>>>(
          A->d_row_ptr32, A->d_col, A->d_val, sh->d_perm, sh->d_ptr, d_tiles, ntiles, slots,
          A->m, logC, out->d_col, out->d_val);
    GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "sell_fill_kernel"));
  }
  GS_TRY(GS_CUDA(cudaStreamSynchronize(ctx->stream))); /* d_tiles is idle before it is freed */
cleanup:
  if (st != GS_SUCCESS) {
    cudaStreamSynchronize(ctx->stream);
    gs_sell_dev_free(ctx, out);
  }
  gs_dfree(ctx, d_tiles);
  return st;
}

gs_status_t gs_sell_dev_build(gs_context_t *ctx, const gs_dcsr_t *A, const gs_sell_params_t *p,
                              int float_values, gs_sell_dev_shape_t *sh, gs_sell_dev_t *out)
{
  gs_status_t st = GS_SUCCESS;
  int32_t *d_len = NULL;
  gs_sell_dev_rows_t rows;
  int moves = 0;
  memset(sh, 0, sizeof *sh);
  memset(out, 0, sizeof *out);
  GS_TRY(gs_sell_dev_lengths(ctx, A, &d_len, &rows));
  GS_TRY(gs_sell_dev_moves(ctx, d_len, &rows, p->sigma, &moves));
  GS_TRY(gs_sell_dev_shape(ctx, d_len, &rows, p->slice_size, p->pad, p->sigma, moves, sh));
  GS_TRY(gs_sell_dev_check(sh, A->nnz, p));
  GS_TRY(gs_sell_dev_fill(ctx, A, sh, float_values, out));
cleanup:
  if (st != GS_SUCCESS) gs_sell_dev_shape_free(ctx, sh);
  gs_dfree(ctx, d_len); /* every kernel reading it has completed (fill syncs; failures sync) */
  return st;
}
