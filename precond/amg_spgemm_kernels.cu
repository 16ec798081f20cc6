/* precond/amg_spgemm_kernels.cu: C = A B with our own kernels (issue 34: the Galerkin product
 * without cuSPARSE's SpGEMM, whose first call in a process loads 40-90 ms of modules). Contract:
 * gs_amg_spgemm_own_dev in precond/amg_impl.h; the values equal gs_amg_spgemm_host's bit for bit.
 *
 * Order of the sums. C(i, j) = sum of a_ik b_kj over the entries k of A's row i in their stored
 * (ascending) order, from 0.0, each product and each sum rounded on its own (__dmul_rn,
 * __dadd_rn): the host's loop. A row of B holds a column at most once, so the products of one
 * column are told apart by their A entry, and the position p of a product in the row's
 * expansion (A's entries in order, each followed by its B row) orders them as k does. Every path
 * below sorts the products of a row by the unique key (j, p) (or stably by j alone), then one
 * thread sums each run of equal j in that order. No atomics touch a value: the result is the
 * same on every run.
 *
 * Work division. ub_i = sum over A's row i of the lengths of B's rows (the products of row i,
 * an upper bound of its entries) and its bin, one thread a row; the rows sorted by bin (a 4-bit
 * radix sort, stable: each bin's rows stay in row order, so neighbouring groups share B's rows
 * in cache). Bins:
 *   ub = 0                no work (an empty row)
 *   ub <= 4, 8, 16, 32    G = 4, 8, 16, 32 lanes a row (8, 4, 2 or 1 rows a warp): lane p forms
 *                         product p in registers (A's entry found by a binary search of the
 *                         group's scan of B row lengths, by shuffles), a bitonic sort of the
 *                         64-bit keys (j << 32 | p) by shuffles, each value fetched from its
 *                         lane p, the run heads found by a ballot, each head sums its run by
 *                         shuffles in p order
 *   ub <= 64, 128, 256    a warp a row, 2, 4 or 8 keys a lane in registers, the products in
 *                         shared memory: a bitonic sort in registers and shuffles
 *   ub <= 4096            a block of 256 a row: cub's stable BlockRadixSort of the columns
 *                         (less the row's least, on the bits their span needs) carrying p
 *                         (these two paths place the run heads first, so that each run's end is
 *                         known and its loads issue together: runs of 10-50 products on
 *                         27-point levels made the one-at-a-time walk the cost)
 *   longer                global memory: the products expanded (column, value) in p order, a
 *                         stable segmented sort by column (cub), a block a row sums the runs
 * Every path writes row i's entries, in column order, into a buffer laid out by the scan of ub
 * (entry q of row i at ub_off[i] + q) and its count; the counts scanned give C's row pointers,
 * and one pass copies the entries to C (one pass, against a second symbolic pass that would
 * form every product twice). C's 32-bit row pointers and the int32 lengths of the sort are
 * checked before use; the int64 sums of ub cannot overflow (at most nnz(A) * max row of B,
 * both < 2^31).
 * Memory: ub-space takes 12 bytes a product and the long rows 24 more (keys and values, double
 * buffered for the sort): when that passes the bound (1 GiB by default), the rows are taken in
 * consecutive ranges of at most the bound plus one row (boundaries found on the device by a
 * scan of the rows' bytes), each range's entries copied to a buffer of its own, joined into C
 * at the end. Scratch besides: 34 bytes a row of A (42 with ranges). */
#include <cub/block/block_radix_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "precond/amg_group.cuh"
#include "precond/amg_impl.h"
#include "spmv/common_kernels.h"
#include "spmv/device_util.cuh"

#define GM_THREADS 256
#define GM_WARPS (GM_THREADS / 32)
#define GM_BLOCK_CAP 4096 /* products of a row taken by a block */
#define GM_COPY_LANES 8   /* lanes a row in the copy to C */
#define GM_NONE UINT64_MAX
#define GM_DEFAULT_BOUND ((size_t)1 << 30)

/* Bins (the radix sort's 3-bit keys) and the statistics after them. */
enum {
  GM_BIN_EMPTY,
  GM_BIN_4,
  GM_BIN_8,
  GM_BIN_16,
  GM_BIN_32,
  GM_BIN_64,
  GM_BIN_128,
  GM_BIN_256,
  GM_BIN_BLOCK,
  GM_BIN_LONG,
  GM_NBINS
};
enum { GM_STAT_MAX_UB = GM_NBINS, GM_STAT_LONG_UB, GM_NSTAT };
#define GM_BIN_BITS 4 /* bits of a bin number (the radix sort's key) */

static __host__ __device__ __forceinline__ int gm_bin(int64_t ub)
{
  return ub == 0              ? GM_BIN_EMPTY
         : ub <= 4            ? GM_BIN_4
         : ub <= 8            ? GM_BIN_8
         : ub <= 16           ? GM_BIN_16
         : ub <= 32           ? GM_BIN_32
         : ub <= 64           ? GM_BIN_64
         : ub <= 128          ? GM_BIN_128
         : ub <= 256          ? GM_BIN_256
         : ub <= GM_BLOCK_CAP ? GM_BIN_BLOCK
                              : GM_BIN_LONG;
}

/* Bytes of ub-space (and of the long rows' sort) that a row of ub products takes. */
static __host__ __device__ __forceinline__ int64_t gm_row_bytes(int64_t ub)
{
  return 12 * ub + (gm_bin(ub) == GM_BIN_LONG ? 24 * ub : 0);
}

static size_t gm_round(size_t bytes) { return (bytes + 255) & ~(size_t)255; }

/* The operands and the ub-space of the rows in flight (offsets relative to `base`). */
struct gm_args {
  const int32_t *arp;
  const gs_idx_t *acol;
  const double *aval;
  const int32_t *brp;
  const gs_idx_t *bcol;
  const double *bval;
  const int64_t *ub_off;
  int64_t base;
  int64_t *cnt;
  gs_idx_t *tcol;
  double *tval;
};

/* ---- bounds and bins ------------------------------------------------------------------------- */

/* ub[i], bin[i], rows[i] = i, cnt[i] = 0; ub[m] = 0 (the scan's total). stat[b] += rows of bin b
 * (a ballot a bin, one shared atomic a warp), stat[GM_STAT_MAX_UB] = max ub,
 * stat[GM_STAT_LONG_UB] += the long rows' ub. The row loop's trip count is the same in every
 * thread of a block (the ballots see full warps). */
static __global__ void __launch_bounds__(GM_THREADS)
gm_bound_kernel(gs_idx_t m, const int32_t *__restrict__ arp, const gs_idx_t *__restrict__ acol,
                const int32_t *__restrict__ brp, int64_t *__restrict__ ub, uint8_t *__restrict__ bin,
                int32_t *__restrict__ rows, int64_t *__restrict__ cnt, unsigned long long *stat)
{
  __shared__ unsigned long long s_stat[GM_NSTAT];
  const int lane = threadIdx.x & 31;
  if (threadIdx.x < GM_NSTAT) s_stat[threadIdx.x] = 0;
  if (blockIdx.x == 0 && threadIdx.x == 0) ub[m] = 0;
  __syncthreads();
  unsigned long long umax = 0;
  for (int64_t r0 = (int64_t)blockIdx.x * GM_THREADS; r0 < m;
       r0 += (int64_t)gridDim.x * GM_THREADS) {
    const int64_t i = r0 + threadIdx.x;
    int b = -1;
    if (i < m) {
      int64_t u = 0;
      const int32_t e1 = arp[i + 1];
      for (int32_t e = arp[i]; e < e1; ++e) {
        const gs_idx_t k = acol[e];
        u += brp[k + 1] - brp[k];
      }
      b = gm_bin(u);
      ub[i] = u;
      bin[i] = (uint8_t)b;
      rows[i] = (int32_t)i;
      cnt[i] = 0;
      umax = (unsigned long long)u > umax ? (unsigned long long)u : umax;
      if (b == GM_BIN_LONG) atomicAdd(&s_stat[GM_STAT_LONG_UB], (unsigned long long)u);
    }
#pragma unroll
    for (int q = 0; q < GM_NBINS; ++q) {
      const unsigned bal = __ballot_sync(0xffffffffu, b == q);
      if (lane == 0 && bal) atomicAdd(&s_stat[q], (unsigned long long)__popc(bal));
    }
  }
  for (int o = 16; o > 0; o >>= 1) {
    const unsigned long long x = __shfl_xor_sync(0xffffffffu, umax, o);
    umax = x > umax ? x : umax;
  }
  if (lane == 0 && umax) atomicMax(&s_stat[GM_STAT_MAX_UB], umax);
  __syncthreads();
  if (threadIdx.x < GM_NSTAT && s_stat[threadIdx.x]) {
    if (threadIdx.x == GM_STAT_MAX_UB) atomicMax(&stat[threadIdx.x], s_stat[threadIdx.x]);
    else atomicAdd(&stat[threadIdx.x], s_stat[threadIdx.x]);
  }
}

/* ---- rows of up to 32 products: registers and shuffles ------------------------------------------ */

/* Rows rows[0, nrows), G lanes each (GM_THREADS / G rows a block, a grid-stride loop): lane g
 * of the group forms product g of the row, the group sorts the keys (column << 32 | g) by a
 * bitonic network of shuffles (Batcher 1968), fetches each sorted key's value from its lane g,
 * and each run's first lane sums the run in key order. The shuffles name the group's lanes only
 * (mask), so groups of one warp run independently. */
template <int G>
static __global__ void __launch_bounds__(GM_THREADS)
gm_reg_kernel(int32_t nrows, const int32_t *__restrict__ rows, gm_args p)
{
  const int lane = threadIdx.x & 31, g = lane & (G - 1), first = lane & ~(G - 1);
  const unsigned gbits = G == 32 ? 0xffffffffu : (1u << G) - 1u;
  const unsigned mask = gbits << first;
  const int64_t step = (int64_t)gridDim.x * (GM_THREADS / G);
  for (int64_t r = ((int64_t)blockIdx.x * GM_THREADS + threadIdx.x) / G; r < nrows; r += step) {
    const int32_t row = rows[r];
    const int64_t a0 = p.arp[row], a1 = p.arp[row + 1];
    uint64_t key = GM_NONE;
    double prod = 0.0;
    int32_t done = 0; /* products of the A entries before this chunk */
    for (int64_t c0 = a0; c0 < a1; c0 += G) {
      const int64_t e = c0 + g;
      int32_t len = 0, bs = 0;
      double a = 0.0;
      if (e < a1) {
        const gs_idx_t k = p.acol[e];
        a = p.aval[e];
        bs = p.brp[k];
        len = p.brp[k + 1] - bs;
      }
      int32_t inc = len; /* inclusive scan of the B row lengths over the group */
#pragma unroll
      for (int o = 1; o < G; o <<= 1) {
        const int32_t y = __shfl_up_sync(mask, inc, o, G);
        if (g >= o) inc += y;
      }
      const int32_t total = __shfl_sync(mask, inc, G - 1, G);
      const int32_t loc = g - done; /* this lane's product, counted within the chunk */
      int s = 0;                    /* its A entry: the lanes whose inc <= loc */
#pragma unroll
      for (int h = G / 2; h > 0; h >>= 1) {
        const int32_t v = __shfl_sync(mask, inc, s + h - 1, G);
        if (v <= loc) s += h;
      }
      const int32_t inc_s = __shfl_sync(mask, inc, s, G);
      const int32_t len_s = __shfl_sync(mask, len, s, G);
      const int32_t bs_s = __shfl_sync(mask, bs, s, G);
      const double a_s = __shfl_sync(mask, a, s, G);
      if (loc >= 0 && loc < total) {
        const int32_t kb = bs_s + loc - (inc_s - len_s);
        key = ((uint64_t)(uint32_t)p.bcol[kb] << 32) | (uint32_t)g;
        prod = __dmul_rn(a_s, p.bval[kb]);
      }
      done += total;
    }
    /* ascending bitonic sort of the group's keys (GM_NONE, the padding, sorts last) */
#pragma unroll
    for (int size = 2; size <= G; size <<= 1)
#pragma unroll
      for (int stride = size >> 1; stride > 0; stride >>= 1) {
        const uint64_t o = __shfl_xor_sync(mask, key, stride, G);
        const bool keep_min = ((g & stride) == 0) == ((g & size) == 0);
        key = keep_min ? (o < key ? o : key) : (o > key ? o : key);
      }
    const double v = __shfl_sync(mask, prod, (int)((uint32_t)key & (G - 1)), G);
    const bool valid = key != GM_NONE;
    const uint32_t j = (uint32_t)(key >> 32);
    const uint32_t jprev = __shfl_up_sync(mask, j, 1, G);
    const bool head = valid && (g == 0 || jprev != j);
    const unsigned hm = (__ballot_sync(mask, head) >> first) & gbits;
    const int nv = __popc((__ballot_sync(mask, valid) >> first) & gbits);
    const unsigned later = hm & ~((2u << g) - 1u); /* heads after lane g (none for g = 31) */
    const int run = head ? (later ? __ffs(later) - 1 : nv) - g : 0;
    int longest = run;
#pragma unroll
    for (int o = G / 2; o > 0; o >>= 1) longest = max(longest, __shfl_xor_sync(mask, longest, o, G));
    double sum = 0.0;
    for (int q = 0; q < longest; ++q) { /* the group's trip count: shuffles see every lane */
      const double x = __shfl_sync(mask, v, min(g + q, G - 1), G);
      if (q < run) sum = __dadd_rn(sum, x);
    }
    if (head) {
      const int64_t at = p.ub_off[row] - p.base + __popc(hm & ((1u << g) - 1u));
      p.tcol[at] = (gs_idx_t)j;
      p.tval[at] = sum;
    }
    if (g == 0) p.cnt[row] = __popc(hm);
  }
}

/* ---- rows of up to 4096 products -------------------------------------------------------------- */

/* Stages the A entries c0 .. c0 + G - 1 (< a1) of a row for the group: s_inc = the inclusive
 * scan of their B row lengths, s_bs = the B row starts, s_a = the values. Returns the chunk's
 * products (the caller keeps the row's products below 2^31), after a barrier: the staging is
 * visible. The caller's barrier after its use frees it for the next chunk. */
template <int G>
static __device__ __forceinline__ int32_t gm_stage(int64_t c0, int64_t a1, const gm_args &p,
                                                   int32_t *s_inc, int32_t *s_bs, double *s_a,
                                                   int32_t *wsum)
{
  const int rank = amg_group<G>::rank();
  const int64_t e = c0 + rank;
  int32_t len = 0, bs = 0;
  double a = 0.0;
  if (e < a1) {
    const gs_idx_t k = p.acol[e];
    a = p.aval[e];
    bs = p.brp[k];
    len = p.brp[k + 1] - bs;
  }
  int32_t total = 0;
  const int32_t exc = amg_group<G>::scan(len, &total, wsum);
  s_inc[rank] = exc + len;
  s_bs[rank] = bs;
  s_a[rank] = a;
  amg_group<G>::sync();
  return total;
}

/* The staged entry of product t (< the chunk's total): the number of entries whose inclusive
 * count is <= t; *kb its B entry. */
template <int G>
static __device__ __forceinline__ int gm_find(int32_t t, const int32_t *s_inc,
                                              const int32_t *s_bs, int32_t *kb)
{
  int s = 0;
#pragma unroll
  for (int h = G / 2; h > 0; h >>= 1)
    if (s_inc[s + h - 1] <= t) s += h;
  *kb = s_bs[s] + t - (s == 0 ? 0 : s_inc[s - 1]);
  return s;
}

/* The products t0 + i (i < K) of a staged chunk of `total` (> 0) that fall in [0, total): key[i]
 * = (column << 32 | xbase + i) and prod[i] = the product. The searches are branch-free and all
 * K gathers from B are issued before the first is used, so that their latencies overlap (a
 * gather used at once stalls the warp K times a row). */
template <int G, int K>
static __device__ __forceinline__ void gm_products(int32_t t0, int32_t total, const gm_args &p,
                                                   const int32_t *s_inc, const int32_t *s_bs,
                                                   const double *s_a, double *prod,
                                                   uint64_t *key, uint32_t xbase)
{
  int32_t kb[K];
  int sx[K];
  bool ok[K];
#pragma unroll
  for (int i = 0; i < K; ++i) {
    const int32_t t = t0 + i;
    ok[i] = t >= 0 && t < total;
    sx[i] = gm_find<G>(min(max(t, 0), total - 1), s_inc, s_bs, &kb[i]);
  }
  gs_idx_t bc[K];
  double bv[K];
#pragma unroll
  for (int i = 0; i < K; ++i) {
    bc[i] = ok[i] ? p.bcol[kb[i]] : 0;
    bv[i] = ok[i] ? p.bval[kb[i]] : 0.0;
  }
#pragma unroll
  for (int i = 0; i < K; ++i)
    if (ok[i]) {
      key[i] = ((uint64_t)(uint32_t)bc[i] << 32) | (xbase + (uint32_t)i);
      prod[i] = __dmul_rn(s_a[sx[i]], bv[i]);
    }
}

/* Rows rows[0, nrows) of 32 < ub <= 32 E products (E = 2, 4, 8): a warp a row, GM_WARPS a
 * block. Lane l forms and holds elements x = l E + i (i < E) of the row, key (column << 32 | x)
 * in registers, the product in shared memory by x; a bitonic network sorts the 32 E keys
 * (strides below E inside a lane, the others between lanes by shuffles: 15 shuffle steps
 * whatever E), the sorted keys go to shared memory, and each run's first lane sums the run's
 * values in x order. (A shared-memory bitonic sort of the keys was bound by shared-memory
 * bandwidth, about 1300 accesses a row of 128: R (A P) of a 2D Laplacian of 1.6M rows took
 * 1.03 ms with it, 0.79 ms with this, on an H100.) */
template <int E>
static __global__ void __launch_bounds__(GM_THREADS)
gm_wreg_kernel(int32_t nrows, const int32_t *__restrict__ rows, gm_args p)
{
  __shared__ uint64_t s_key[GM_WARPS][32 * E];
  __shared__ double s_prod[GM_WARPS][32 * E];
  __shared__ int32_t s_inc[GM_WARPS][32], s_bs[GM_WARPS][32];
  __shared__ double s_a[GM_WARPS][32];
  __shared__ int32_t s_hx[GM_WARPS][32 * E + 1];
  const int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
  uint64_t *skey = s_key[w];
  int32_t *hx = s_hx[w];
  double *prod = s_prod[w];
  for (int64_t r = (int64_t)blockIdx.x * GM_WARPS + w; r < nrows;
       r += (int64_t)gridDim.x * GM_WARPS) {
    const int32_t row = rows[r];
    const int64_t a1 = p.arp[row + 1];
    uint64_t key[E];
#pragma unroll
    for (int i = 0; i < E; ++i) key[i] = GM_NONE;
    int32_t n = 0;
    for (int64_t c0 = p.arp[row]; c0 < a1; c0 += 32) {
      const int32_t total = gm_stage<32>(c0, a1, p, s_inc[w], s_bs[w], s_a[w], NULL);
      if (total > 0)
        gm_products<32, E>(lane * E - n, total, p, s_inc[w], s_bs[w], s_a[w], prod + lane * E,
                           key, (uint32_t)(lane * E));
      __syncwarp(); /* the staging is read before the next chunk's */
      n += total;
    }
#pragma unroll
    for (int size = 2; size <= 32 * E; size <<= 1)
#pragma unroll
      for (int stride = size >> 1; stride > 0; stride >>= 1) {
        if (stride >= E) { /* partner x ^ stride: lane ^ (stride / E), the same i */
#pragma unroll
          for (int i = 0; i < E; ++i) {
            const uint64_t o = __shfl_xor_sync(0xffffffffu, key[i], stride / E);
            const int x = lane * E + i;
            const bool keep_min = ((x & size) == 0) == ((x & stride) == 0);
            key[i] = keep_min ? (o < key[i] ? o : key[i]) : (o > key[i] ? o : key[i]);
          }
        } else { /* partner i ^ stride in this lane */
#pragma unroll
          for (int i = 0; i < E; ++i) {
            const int j = i ^ stride;
            if (j > i) {
              const uint64_t u = key[i], v = key[j];
              const bool swap = ((lane * E + i) & size) == 0 ? u > v : u < v;
              key[i] = swap ? v : u;
              key[j] = swap ? u : v;
            }
          }
        }
      }
#pragma unroll
    for (int i = 0; i < E; ++i) skey[lane * E + i] = key[i];
    const uint64_t last = __shfl_up_sync(0xffffffffu, key[E - 1], 1);
    __syncwarp();
    int32_t c = 0;
    bool head[E];
#pragma unroll
    for (int i = 0; i < E; ++i) {
      const uint64_t prev = i > 0 ? key[i - 1] : last;
      head[i] = key[i] != GM_NONE && ((lane == 0 && i == 0) || (prev >> 32) != (key[i] >> 32));
      c += head[i];
    }
    int32_t heads = 0;
    const int32_t before = amg_group<32>::scan(c, &heads, NULL);
    int32_t q = before; /* hx[q] = the place of head q: each run's end, known before its sum */
#pragma unroll
    for (int i = 0; i < E; ++i)
      if (head[i]) hx[q++] = lane * E + i;
    if (lane == 0) hx[heads] = n;
    __syncwarp();
    int64_t at = p.ub_off[row] - p.base + before;
    q = before;
#pragma unroll
    for (int i = 0; i < E; ++i)
      if (head[i]) {
        const int end = hx[++q];
        double v = 0.0;
        for (int u = lane * E + i; u < end; ++u) v = __dadd_rn(v, prod[(uint32_t)skey[u]]);
        p.tcol[at] = (gs_idx_t)(key[i] >> 32);
        p.tval[at++] = v;
      }
    if (lane == 0) p.cnt[row] = heads;
    __syncwarp(); /* skey and prod serve the warp's next row */
  }
}

/* Rows of 256 < ub <= GM_BLOCK_CAP products: a block a row, GM_BLOCK_ITEMS elements a thread
 * (x = thread * GM_BLOCK_ITEMS + i). The products go to shared memory by x, the columns less the
 * row's least column to registers, and cub's BlockRadixSort (stable) sorts them on the bits the
 * row's column span needs, carrying x: equal columns keep x order. The sorted columns and x go to
 * shared memory (over the sort's storage) and each run's first thread sums the run. */
#define GM_BLOCK_ITEMS (GM_BLOCK_CAP / GM_THREADS)
typedef cub::BlockRadixSort<uint32_t, GM_THREADS, GM_BLOCK_ITEMS, int32_t> gm_block_sort;
struct gm_block_smem {
  double prod[GM_BLOCK_CAP];
  union {
    typename gm_block_sort::TempStorage sort;
    struct {
      uint32_t key[GM_BLOCK_CAP];
      int32_t pos[GM_BLOCK_CAP];
    } out;
  } u;
  int32_t hx[GM_BLOCK_CAP + 1]; /* the places of the run heads, then n */
  int32_t inc[GM_THREADS], bs[GM_THREADS], wsum[GM_WARPS];
  uint32_t lo[GM_WARPS], hi[GM_WARPS];
  double a[GM_THREADS];
};

static __global__ void __launch_bounds__(GM_THREADS)
gm_block_kernel(int32_t nrows, const int32_t *__restrict__ rows, gm_args p)
{
  extern __shared__ __align__(16) unsigned char gm_smem[];
  gm_block_smem &S = *reinterpret_cast<gm_block_smem *>(gm_smem);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  for (int64_t r = blockIdx.x; r < nrows; r += gridDim.x) {
    const int32_t row = rows[r];
    const int64_t a1 = p.arp[row + 1];
    uint32_t key[GM_BLOCK_ITEMS];
    int32_t pos[GM_BLOCK_ITEMS];
    uint32_t lo = UINT32_MAX, hi = 0;
#pragma unroll
    for (int i = 0; i < GM_BLOCK_ITEMS; ++i) {
      key[i] = 0;
      pos[i] = tid * GM_BLOCK_ITEMS + i;
    }
    int32_t n = 0;
    for (int64_t c0 = p.arp[row]; c0 < a1; c0 += GM_THREADS) {
      const int32_t total = gm_stage<GM_THREADS>(c0, a1, p, S.inc, S.bs, S.a, S.wsum);
      if (total > 0) { /* two batches of 8: 16 gathers in flight would need 16 more registers */
        uint64_t k8[GM_BLOCK_ITEMS / 2];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int x0 = tid * GM_BLOCK_ITEMS + h * (GM_BLOCK_ITEMS / 2);
#pragma unroll
          for (int i = 0; i < GM_BLOCK_ITEMS / 2; ++i) k8[i] = GM_NONE;
          gm_products<GM_THREADS, GM_BLOCK_ITEMS / 2>(x0 - n, total, p, S.inc, S.bs, S.a,
                                                      S.prod + x0, k8, 0);
#pragma unroll
          for (int i = 0; i < GM_BLOCK_ITEMS / 2; ++i)
            if (k8[i] != GM_NONE) {
              const uint32_t j = (uint32_t)(k8[i] >> 32);
              key[h * (GM_BLOCK_ITEMS / 2) + i] = j;
              lo = j < lo ? j : lo;
              hi = j > hi ? j : hi;
            }
        }
      }
      __syncthreads(); /* the staging is read before the next chunk's */
      n += total;
    }
    for (int o = 16; o > 0; o >>= 1) {
      const uint32_t x = __shfl_xor_sync(0xffffffffu, lo, o), y = __shfl_xor_sync(0xffffffffu, hi, o);
      lo = x < lo ? x : lo;
      hi = y > hi ? y : hi;
    }
    if (lane == 0) {
      S.lo[warp] = lo;
      S.hi[warp] = hi;
    }
    __syncthreads();
    for (int q = 0; q < GM_WARPS; ++q) {
      lo = S.lo[q] < lo ? S.lo[q] : lo;
      hi = S.hi[q] > hi ? S.hi[q] : hi;
    }
    /* bits b with 2^b - 1 > hi - lo: the padding (all ones) sorts after every column */
    const int bits = 32 - __clz((int)(hi - lo + 1u));
#pragma unroll
    for (int i = 0; i < GM_BLOCK_ITEMS; ++i)
      key[i] = tid * GM_BLOCK_ITEMS + i < n ? key[i] - lo : UINT32_MAX;
    gm_block_sort(S.u.sort).Sort(key, pos, 0, bits);
    __syncthreads(); /* the sort's storage becomes S.u.out */
#pragma unroll
    for (int i = 0; i < GM_BLOCK_ITEMS; ++i) {
      S.u.out.key[tid * GM_BLOCK_ITEMS + i] = key[i];
      S.u.out.pos[tid * GM_BLOCK_ITEMS + i] = pos[i];
    }
    __syncthreads();
    int32_t c = 0;
#pragma unroll
    for (int i = 0; i < GM_BLOCK_ITEMS; ++i) {
      const int x = tid * GM_BLOCK_ITEMS + i;
      c += x < n && (x == 0 || S.u.out.key[x - 1] != key[i]);
    }
    int32_t heads = 0;
    const int32_t before = amg_group<GM_THREADS>::scan(c, &heads, S.wsum);
    int32_t q = before; /* S.hx[q] = the place of head q: each run's end, known before its sum */
#pragma unroll
    for (int i = 0; i < GM_BLOCK_ITEMS; ++i) {
      const int x = tid * GM_BLOCK_ITEMS + i;
      if (x < n && (x == 0 || S.u.out.key[x - 1] != key[i])) S.hx[q++] = x;
    }
    if (tid == 0) S.hx[heads] = n;
    __syncthreads();
    int64_t at = p.ub_off[row] - p.base + before;
    q = before;
#pragma unroll
    for (int i = 0; i < GM_BLOCK_ITEMS; ++i) {
      const int x = tid * GM_BLOCK_ITEMS + i;
      if (x < n && (x == 0 || S.u.out.key[x - 1] != key[i])) {
        const int end = S.hx[++q];
        double v = 0.0;
        for (int u = x; u < end; ++u) v = __dadd_rn(v, S.prod[S.u.out.pos[u]]);
        p.tcol[at] = (gs_idx_t)(key[i] + lo);
        p.tval[at++] = v;
      }
    }
    if (tid == 0) p.cnt[row] = heads;
    __syncthreads(); /* S serves the block's next row */
  }
}

/* ---- longer rows: global memory ------------------------------------------------------------------ */

/* glen[g] = the products of long row rows[g], glen[nl] = 0 (the scan's total). */
static __global__ void __launch_bounds__(GM_THREADS)
gm_long_len_kernel(int32_t nl, const int32_t *__restrict__ rows,
                   const int64_t *__restrict__ ub_off, int64_t *__restrict__ glen)
{
  GS_GRID_STRIDE(g, (int64_t)nl + 1)
  glen[g] = g < nl ? ub_off[rows[g] + 1] - ub_off[rows[g]] : 0;
}

/* The products of long row rows[g], a block a row, in p order at goff[g]: column and value. */
static __global__ void __launch_bounds__(GM_THREADS)
gm_long_expand_kernel(int32_t nl, const int32_t *__restrict__ rows,
                      const int64_t *__restrict__ goff, gm_args p, gs_idx_t *__restrict__ kout,
                      double *__restrict__ vout)
{
  __shared__ int32_t s_inc[GM_THREADS], s_bs[GM_THREADS], s_wsum[GM_WARPS];
  __shared__ double s_a[GM_THREADS];
  for (int32_t g = blockIdx.x; g < nl; g += gridDim.x) {
    const int32_t row = rows[g];
    const int64_t a1 = p.arp[row + 1];
    gs_idx_t *kr = kout + goff[g];
    double *vr = vout + goff[g];
    int64_t n = 0;
    for (int64_t c0 = p.arp[row]; c0 < a1; c0 += GM_THREADS) {
      const int32_t total = gm_stage<GM_THREADS>(c0, a1, p, s_inc, s_bs, s_a, s_wsum);
      for (int32_t t = threadIdx.x; t < total; t += GM_THREADS) {
        int32_t kb;
        const int s = gm_find<GM_THREADS>(t, s_inc, s_bs, &kb);
        kr[n + t] = p.bcol[kb];
        vr[n + t] = __dmul_rn(s_a[s], p.bval[kb]);
      }
      __syncthreads();
      n += total;
    }
  }
}

/* The sorted products of long row rows[g] (stable by column: p order within a column), a block
 * a row, 256 a tile: the heads of a tile scanned across the block and placed after those of the
 * tiles before; each head's thread sums its run. */
static __global__ void __launch_bounds__(GM_THREADS)
gm_long_reduce_kernel(int32_t nl, const int32_t *__restrict__ rows,
                      const int64_t *__restrict__ goff, const gs_idx_t *__restrict__ kin,
                      const double *__restrict__ vin, gm_args p)
{
  __shared__ int32_t s_wsum[GM_WARPS];
  for (int32_t g = blockIdx.x; g < nl; g += gridDim.x) {
    const int32_t row = rows[g];
    const int64_t b = goff[g], L = goff[g + 1] - b;
    const gs_idx_t *k = kin + b;
    const double *v = vin + b;
    const int64_t at = p.ub_off[row] - p.base;
    int64_t n = 0;
    for (int64_t s0 = 0; s0 < L; s0 += GM_THREADS) {
      const int64_t s = s0 + threadIdx.x;
      const int h = s < L && (s == 0 || k[s - 1] != k[s]);
      int32_t total = 0;
      const int32_t before = amg_group<GM_THREADS>::scan(h, &total, s_wsum);
      if (h) {
        const gs_idx_t J = k[s];
        double x = 0.0;
        for (int64_t u = s; u < L && k[u] == J; ++u) x = __dadd_rn(x, v[u]);
        p.tcol[at + n + before] = J;
        p.tval[at + n + before] = x;
      }
      n += total;
    }
    if (threadIdx.x == 0) p.cnt[row] = n;
  }
}

/* ---- C from ub-space --------------------------------------------------------------------------- */

/* Rows r0 .. r0 + nr - 1, GM_COPY_LANES lanes a row: rp[i] = running + loc[i - r0] and the row's
 * entries copied from ub-space to dcol / dval at loc[i - r0] (loc: the range's exclusive scan of
 * the counts, nr + 1 entries); rp[r0 + nr] too when `last`. */
static __global__ void __launch_bounds__(GM_THREADS)
gm_copy_kernel(int32_t r0, int32_t nr, int last, int64_t running, const int64_t *__restrict__ loc,
               gm_args p, int32_t *__restrict__ rp, gs_idx_t *__restrict__ dcol,
               double *__restrict__ dval)
{
  if (last && blockIdx.x == 0 && threadIdx.x == 0) rp[r0 + nr] = (int32_t)(running + loc[nr]);
  GS_GRID_STRIDE(x, (int64_t)nr * GM_COPY_LANES)
  {
    const int64_t r = x / GM_COPY_LANES;
    const int l = (int)(x % GM_COPY_LANES);
    const int64_t row = r0 + r, d = loc[r], src = p.ub_off[row] - p.base, c = p.cnt[row];
    if (l == 0) rp[row] = (int32_t)(running + d);
    for (int64_t q = l; q < c; q += GM_COPY_LANES) {
      dcol[d + q] = p.tcol[src + q];
      dval[d + q] = p.tval[src + q];
    }
  }
}

/* ---- the host side ------------------------------------------------------------------------------- */

/* A range of rows taken at once: rows r0 .. r1 - 1, their products `ub` from ub-space offset
 * base, those of their long rows long_ub; their rows of bin b are list[start[b], + count[b]). */
typedef struct gm_range {
  int32_t r0, r1;
  int64_t base, ub, long_ub;
  int32_t start[GM_NBINS], count[GM_NBINS];
} gm_range_t;

/* ---- ranges of rows (only when the intermediate buffers would pass the bound) ---------------- */

/* rb[i] = the bytes of row i (gm_row_bytes), rb[m] = 0 (the scan's total). */
static __global__ void __launch_bounds__(GM_THREADS)
gm_row_bytes_kernel(gs_idx_t m, const int64_t *__restrict__ uo, int64_t *__restrict__ rb)
{
  GS_GRID_STRIDE(i, (int64_t)m + 1)
  rb[i] = i < m ? gm_row_bytes(uo[i + 1] - uo[i]) : 0;
}

/* Each bin's first place in the sorted row list (bin b: list[s[b], s[b + 1])). */
struct gm_starts {
  int64_t s[GM_NBINS + 1];
};
#define GM_TAB (3 + GM_NBINS) /* int64 a boundary in gm_bounds_kernel's table */

/* Boundary c = 0 .. C of the ranges: r = the least row i <= m with boff[i] >= c * step (m for
 * c = C); tab[c] = {r, uo[r], boff[r], then for each bin the place of its first row >= r in the
 * list (its rows are in row order)}. */
static __global__ void __launch_bounds__(GM_THREADS)
gm_bounds_kernel(int64_t C, int64_t step, gs_idx_t m, const int64_t *__restrict__ boff,
                 const int64_t *__restrict__ uo, const int32_t *__restrict__ list, gm_starts gs,
                 int64_t *__restrict__ tab)
{
  GS_GRID_STRIDE(c, C + 1)
  {
    int64_t lo = 0, hi = m;
    if (c == C) lo = m;
    else
      while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (boff[mid] < c * step) lo = mid + 1;
        else hi = mid;
      }
    const int64_t r = lo;
    int64_t *t = tab + c * GM_TAB;
    t[0] = r;
    t[1] = uo[r];
    t[2] = boff[r];
    for (int b = 0; b < GM_NBINS; ++b) {
      lo = gs.s[b];
      hi = gs.s[b + 1];
      while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (list[mid] < r) lo = mid + 1;
        else hi = mid;
      }
      t[3 + b] = lo;
    }
  }
}

/* Splits the rows into consecutive ranges by their bytes (gm_row_bytes): boundaries at the
 * multiples of step = max(bound, total bytes / m) (at most m + 1 of them), so that a range holds
 * at most step bytes plus its last row. All on the device but for the boundaries' table. */
static gs_status_t gm_plan(gs_context_t *ctx, gs_idx_t m, const int64_t *uo, const int32_t *list,
                           const int64_t *gstart, size_t bound, int64_t *rb, void *d_temp,
                           size_t temp, gm_range_t **out, int *nout)
{
  gs_status_t st = GS_SUCCESS;
  cudaStream_t s = ctx->stream;
  int64_t *boff = NULL, *tab = NULL, *h_tab = NULL, bytes = 0;
  gm_range_t *R = NULL;
  int n = 0;
  gm_starts gs;
  for (int b = 0; b <= GM_NBINS; ++b) gs.s[b] = gstart[b];
  gm_row_bytes_kernel<<<gs_grid_blocks((int64_t)m + 1, GM_THREADS), GM_THREADS, 0, s>>>(m, uo, rb);
  GS_TRY(GS_CHECK_LAUNCH(s, "gm_row_bytes_kernel"));
  GS_TRY(gs_dmalloc(ctx, (void **)&boff, ((size_t)m + 1) * sizeof *boff, "AMG product ranges"));
  GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(d_temp, temp, rb, boff, (int64_t)m + 1, s)));
  GS_TRY(gs_copy_to_host(ctx, &bytes, boff + m, sizeof bytes));
  {
    const int64_t per_row = (bytes + m - 1) / m;
    const int64_t step = per_row > (int64_t)bound ? per_row : (int64_t)bound;
    const int64_t C = (bytes + step - 1) / step;
    const size_t tab_bytes = ((size_t)C + 1) * GM_TAB * sizeof(int64_t);
    GS_TRY(gs_dmalloc(ctx, (void **)&tab, tab_bytes, "AMG product range table"));
    gm_bounds_kernel<<<gs_grid_blocks(C + 1, GM_THREADS), GM_THREADS, 0, s>>>(C, step, m, boff, uo,
                                                                              list, gs, tab);
    GS_TRY(GS_CHECK_LAUNCH(s, "gm_bounds_kernel"));
    h_tab = (int64_t *)malloc(tab_bytes);
    R = (gm_range_t *)malloc((size_t)(C > 0 ? C : 1) * sizeof *R);
    if (!h_tab || !R)
      GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory (%lld row ranges)", (long long)C);
    GS_TRY(gs_copy_to_host(ctx, h_tab, tab, tab_bytes));
    for (int64_t c = 0; c < C; ++c) {
      const int64_t *t0 = h_tab + c * GM_TAB, *t1 = t0 + GM_TAB;
      if (t1[0] == t0[0]) continue; /* no row starts in this stretch */
      gm_range_t *g = &R[n++];
      g->r0 = (int32_t)t0[0];
      g->r1 = (int32_t)t1[0];
      g->base = t0[1];
      g->ub = t1[1] - t0[1];
      g->long_ub = (t1[2] - t0[2] - 12 * g->ub) / 24;
      for (int b = 0; b < GM_NBINS; ++b) {
        g->start[b] = (int32_t)t0[3 + b];
        g->count[b] = (int32_t)(t1[3 + b] - t0[3 + b]);
      }
    }
  }
  *out = R;
  *nout = n;
  R = NULL;
cleanup:
  if (st != GS_SUCCESS) cudaStreamSynchronize(s);
  free(R);
  free(h_tab);
  gs_dfree(ctx, tab);
  gs_dfree(ctx, boff);
  return st;
}

/* Launches the kernels of each bin of range R (ub-space of R at p.tcol / p.tval). lbuf: the long
 * rows' buffers (sized for the largest range). */
static gs_status_t gm_run_range(gs_context_t *ctx, const gm_range_t *R, const int32_t *list,
                                gm_args p, char *lbuf, size_t lb_keys, size_t lb_vals,
                                size_t lb_off, size_t lb_temp)
{
  cudaStream_t s = ctx->stream;
  const int32_t *rows;
#define GM_REG(G, BIN)                                                                           \
  if (R->count[BIN] > 0) {                                                                       \
    rows = list + R->start[BIN];                                                                 \
    gm_reg_kernel<G><<<gs_grid_blocks(R->count[BIN], GM_THREADS / (G)), GM_THREADS, 0, s>>>(    \
        R->count[BIN], rows, p);                                                                 \
    GS_CHECK(GS_CHECK_LAUNCH(s, "gm_reg_kernel<" #G ">"));                                       \
  }
  GM_REG(4, GM_BIN_4)
  GM_REG(8, GM_BIN_8)
  GM_REG(16, GM_BIN_16)
  GM_REG(32, GM_BIN_32)
#undef GM_REG
#define GM_WREG(E, BIN)                                                                          \
  if (R->count[BIN] > 0) {                                                                       \
    rows = list + R->start[BIN];                                                                 \
    gm_wreg_kernel<E><<<gs_grid_blocks(R->count[BIN], GM_WARPS), GM_THREADS, 0, s>>>(            \
        R->count[BIN], rows, p);                                                                 \
    GS_CHECK(GS_CHECK_LAUNCH(s, "gm_wreg_kernel<" #E ">"));                                      \
  }
  GM_WREG(2, GM_BIN_64)
  GM_WREG(4, GM_BIN_128)
  GM_WREG(8, GM_BIN_256)
#undef GM_WREG
  if (R->count[GM_BIN_BLOCK] > 0) {
    const int smem = (int)sizeof(gm_block_smem);
    rows = list + R->start[GM_BIN_BLOCK];
    GS_CHECK(GS_CUDA(cudaFuncSetAttribute(gm_block_kernel,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize, smem)));
    gm_block_kernel<<<gs_grid_blocks(R->count[GM_BIN_BLOCK], 1), GM_THREADS, smem, s>>>(
        R->count[GM_BIN_BLOCK], rows, p);
    GS_CHECK(GS_CHECK_LAUNCH(s, "gm_block_kernel"));
  }
  const int32_t nl = R->count[GM_BIN_LONG];
  if (nl > 0) {
    rows = list + R->start[GM_BIN_LONG];
    gs_idx_t *k0 = (gs_idx_t *)lbuf, *k1 = (gs_idx_t *)(lbuf + lb_keys);
    double *v0 = (double *)(lbuf + 2 * lb_keys), *v1 = (double *)(lbuf + 2 * lb_keys + lb_vals);
    int64_t *glen = (int64_t *)(lbuf + 2 * lb_keys + 2 * lb_vals);
    int64_t *goff = (int64_t *)(lbuf + 2 * lb_keys + 2 * lb_vals + lb_off);
    void *temp = lbuf + 2 * lb_keys + 2 * lb_vals + 2 * lb_off;
    size_t tb = lb_temp;
    gm_long_len_kernel<<<gs_grid_blocks((int64_t)nl + 1, GM_THREADS), GM_THREADS, 0, s>>>(
        nl, rows, p.ub_off, glen);
    GS_CHECK(GS_CHECK_LAUNCH(s, "gm_long_len_kernel"));
    GS_CHECK(GS_CUDA(cub::DeviceScan::ExclusiveSum(temp, tb, glen, goff, (int64_t)nl + 1, s)));
    gm_long_expand_kernel<<<gs_grid_blocks(nl, 1), GM_THREADS, 0, s>>>(nl, rows, goff, p, k0,
                                                                       v0);
    GS_CHECK(GS_CHECK_LAUNCH(s, "gm_long_expand_kernel"));
    cub::DoubleBuffer<gs_idx_t> dk(k0, k1);
    cub::DoubleBuffer<double> dv(v0, v1);
    tb = lb_temp;
    GS_CHECK(GS_CUDA(cub::DeviceSegmentedSort::StableSortPairs(
        temp, tb, dk, dv, R->long_ub, (int64_t)nl, goff, goff + 1, s)));
    gm_long_reduce_kernel<<<gs_grid_blocks(nl, 1), GM_THREADS, 0, s>>>(nl, rows, goff,
                                                                       dk.Current(),
                                                                       dv.Current(), p);
    GS_CHECK(GS_CHECK_LAUNCH(s, "gm_long_reduce_kernel"));
  }
  return GS_SUCCESS;
}

/* Temporary bytes of the long rows' scan and sort for nl rows of L products. */
static gs_status_t gm_long_temp(int32_t nl, int64_t L, cudaStream_t s, size_t *bytes)
{
  size_t a = 0, b = 0;
  cub::DoubleBuffer<gs_idx_t> dk(NULL, NULL);
  cub::DoubleBuffer<double> dv(NULL, NULL);
  GS_CHECK(GS_CUDA(cub::DeviceScan::ExclusiveSum(NULL, a, (const int64_t *)NULL, (int64_t *)NULL,
                                                 (int64_t)nl + 1, s)));
  GS_CHECK(GS_CUDA(cub::DeviceSegmentedSort::StableSortPairs(
      NULL, b, dk, dv, L, (int64_t)nl, (const int64_t *)NULL, (const int64_t *)NULL, s)));
  *bytes = a > b ? a : b;
  return GS_SUCCESS;
}

extern "C" gs_status_t gs_amg_spgemm_own_dev(gs_context_t *ctx, const gs_amg_dcsr_t *A,
                                             const gs_amg_dcsr_t *B, gs_amg_dcsr_t *C)
{
  return gs_amg_spgemm_own_dev_bounded(ctx, A, B, C, 0);
}

extern "C" gs_status_t gs_amg_spgemm_own_dev_bounded(gs_context_t *ctx, const gs_amg_dcsr_t *A,
                                                     const gs_amg_dcsr_t *B, gs_amg_dcsr_t *C,
                                                     size_t bound)
{
  gs_status_t st = GS_SUCCESS;
  char *scratch = NULL, *tbuf = NULL, *lbuf = NULL;
  gm_range_t one, *ranges = NULL;
  int nranges = 0;
  void **parts = NULL; /* per range: its columns and values (more than one range) */
  int64_t *part_nnz = NULL;
  gs_amg_dcsr_t out;
  memset(&out, 0, sizeof out);
  if (!ctx || !A || !B || !C)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_spgemm_own_dev: NULL argument");
  if (A->n != B->m)
    return GS_ERROR(GS_ERR_DIMENSION, "gs_amg_spgemm_own_dev: A is %d x %d, B is %d x %d",
                    (int)A->m, (int)A->n, (int)B->m, (int)B->n);
  if (A->m < 0 || A->n < 0 || B->n < 0 || A->nnz < 0 || B->nnz < 0 || A->nnz > INT32_MAX ||
      B->nnz > INT32_MAX || !A->rp || !B->rp || (A->nnz > 0 && (!A->col || !A->val)) ||
      (B->nnz > 0 && (!B->col || !B->val)))
    return GS_ERROR(GS_ERR_INVALID_ARG,
                    "gs_amg_spgemm_own_dev: bad matrix (%d x %d with %lld entries times %d x %d "
                    "with %lld: negative sizes, more than 2^31-1 entries or NULL arrays)",
                    (int)A->m, (int)A->n, (long long)A->nnz, (int)B->m, (int)B->n,
                    (long long)B->nnz);
  memset(C, 0, sizeof *C);
  if (bound == 0) bound = GM_DEFAULT_BOUND;
  if (bound > ((size_t)1 << 50)) bound = (size_t)1 << 50; /* keeps the byte sums in int64 */
  const gs_idx_t m = A->m;
  out.m = m;
  out.n = B->n;
  GS_TRY(gs_dmalloc(ctx, (void **)&out.rp, ((size_t)m + 1) * sizeof(int32_t),
                    "AMG product row pointers"));
  if (m == 0 || A->nnz == 0 || B->nnz == 0) { /* no products */
    GS_TRY(GS_CUDA(cudaMemsetAsync(out.rp, 0, ((size_t)m + 1) * sizeof(int32_t), ctx->stream)));
  } else {
    cudaStream_t s = ctx->stream;
    /* scratch: ub (later the ranges' count scans), ub_off with the statistics after it, the
     * counts (int64), the bins and rows before and after the sort, cub's storage */
    size_t t1 = 0, t2 = 0, t3 = 0, temp = 0;
    GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(NULL, t1, (const int64_t *)NULL,
                                                 (int64_t *)NULL, (int64_t)m + 1, s)));
    GS_TRY(GS_CUDA(cub::DeviceRadixSort::SortPairs(NULL, t2, (const uint8_t *)NULL,
                                                   (uint8_t *)NULL, (const int32_t *)NULL,
                                                   (int32_t *)NULL, (int64_t)m, 0, GM_BIN_BITS, s)));
    GS_TRY(GS_CUDA(cub::DeviceScan::InclusiveSum(NULL, t3, (const int64_t *)NULL,
                                                 (int64_t *)NULL, (int64_t)m, s)));
    temp = t1 > t2 ? t1 : t2;
    temp = t3 > temp ? t3 : temp;
    const size_t b8 = gm_round(((size_t)m + 1) * 8), bo = gm_round(((size_t)m + 1 + GM_NSTAT) * 8);
    const size_t b1 = gm_round((size_t)m), b4 = gm_round((size_t)m * 4);
    GS_TRY(gs_dmalloc(ctx, (void **)&scratch, b8 + bo + b8 + 2 * b1 + 2 * b4 + temp,
                      "AMG product scratch"));
    int64_t *ub = (int64_t *)scratch, *uo = (int64_t *)(scratch + b8);
    int64_t *cnt = (int64_t *)(scratch + b8 + bo);
    uint8_t *bin_in = (uint8_t *)(scratch + 2 * b8 + bo), *bin_out = bin_in + b1;
    int32_t *rows_in = (int32_t *)(scratch + 2 * b8 + bo + 2 * b1), *list = rows_in + b4 / 4;
    void *d_temp = scratch + 2 * b8 + bo + 2 * b1 + 2 * b4;
    unsigned long long *stat = (unsigned long long *)(uo + m + 1);

    GS_TRY(GS_CUDA(cudaMemsetAsync(stat, 0, GM_NSTAT * sizeof *stat, s)));
    gm_bound_kernel<<<gs_grid_blocks(m, GM_THREADS), GM_THREADS, 0, s>>>(
        m, A->rp, A->col, B->rp, ub, bin_in, rows_in, cnt, stat);
    GS_TRY(GS_CHECK_LAUNCH(s, "gm_bound_kernel"));
    size_t tb = temp;
    GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(d_temp, tb, ub, uo, (int64_t)m + 1, s)));
    tb = temp;
    GS_TRY(GS_CUDA(cub::DeviceRadixSort::SortPairs(d_temp, tb, bin_in, bin_out, rows_in, list,
                                                   (int64_t)m, 0, GM_BIN_BITS, s)));
    int64_t h[1 + GM_NSTAT]; /* the total, then the statistics */
    GS_TRY(gs_copy_to_host(ctx, h, uo + m, sizeof h));
    const int64_t total = h[0], max_ub = h[1 + GM_STAT_MAX_UB], long_ub = h[1 + GM_STAT_LONG_UB];
    if (max_ub > INT32_MAX)
      GS_FAIL(GS_ERR_UNSUPPORTED,
              "product of %d x %d and %d x %d: a row has %lld intermediate products "
              "(at most 2^31-1 a row)",
              (int)A->m, (int)A->n, (int)B->m, (int)B->n, (long long)max_ub);
    if (total > INT64_MAX / 64)
      GS_FAIL(GS_ERR_UNSUPPORTED, "product of %d x %d and %d x %d: %lld intermediate products",
              (int)A->m, (int)A->n, (int)B->m, (int)B->n, (long long)total);
    int64_t gstart[GM_NBINS + 1], acc = 0;
    for (int b = 0; b <= GM_NBINS; ++b) {
      gstart[b] = acc;
      if (b < GM_NBINS) acc += h[1 + b];
    }
    /* one range when everything fits the bound (12 total <= bound <= 2^50: no overflow) */
    if (total <= (int64_t)(bound / 12) && long_ub <= ((int64_t)bound - 12 * total) / 24) {
      memset(&one, 0, sizeof one);
      one.r0 = 0;
      one.r1 = m;
      one.ub = total;
      one.long_ub = long_ub;
      for (int b = 0; b < GM_NBINS; ++b) {
        one.start[b] = (int32_t)gstart[b];
        one.count[b] = (int32_t)h[1 + b];
      }
      ranges = &one;
      nranges = 1;
    } else {
      GS_TRY(gm_plan(ctx, m, uo, list, gstart, bound, ub, d_temp, temp, &ranges, &nranges));
      parts = (void **)calloc(2 * (size_t)nranges, sizeof *parts);
      part_nnz = (int64_t *)calloc((size_t)nranges, sizeof *part_nnz);
      if (!parts || !part_nnz)
        GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory (%d row ranges)", nranges);
    }
    /* ub-space and the long rows' buffers, sized for the largest range */
    int64_t max_ub_range = 0, max_long = 0;
    int32_t max_nl = 0;
    size_t lb_temp = 0;
    for (int c = 0; c < nranges; ++c) {
      const gm_range_t *R = &ranges[c];
      max_ub_range = R->ub > max_ub_range ? R->ub : max_ub_range;
      max_long = R->long_ub > max_long ? R->long_ub : max_long;
      max_nl = R->count[GM_BIN_LONG] > max_nl ? R->count[GM_BIN_LONG] : max_nl;
      if (R->count[GM_BIN_LONG] > 0) {
        size_t t = 0;
        GS_TRY(gm_long_temp(R->count[GM_BIN_LONG], R->long_ub, s, &t));
        lb_temp = t > lb_temp ? t : lb_temp;
      }
    }
    const size_t tv = gm_round((size_t)max_ub_range * sizeof(double));
    GS_TRY(gs_dmalloc(ctx, (void **)&tbuf, tv + (size_t)max_ub_range * sizeof(gs_idx_t),
                      "AMG product intermediate rows"));
    const size_t lb_keys = gm_round((size_t)max_long * sizeof(gs_idx_t));
    const size_t lb_vals = gm_round((size_t)max_long * sizeof(double));
    const size_t lb_off = gm_round(((size_t)max_nl + 1) * sizeof(int64_t));
    if (max_nl > 0)
      GS_TRY(gs_dmalloc(ctx, (void **)&lbuf, 2 * lb_keys + 2 * lb_vals + 2 * lb_off + lb_temp,
                        "AMG product long rows"));

    gm_args p;
    p.arp = A->rp;
    p.acol = A->col;
    p.aval = A->val;
    p.brp = B->rp;
    p.bcol = B->col;
    p.bval = B->val;
    p.ub_off = uo;
    p.cnt = cnt;
    p.tval = (double *)tbuf;
    p.tcol = (gs_idx_t *)(tbuf + tv);
    int64_t running = 0;
    int64_t *loc = ub; /* ub is spent once scanned */
    for (int c = 0; c < nranges; ++c) {
      const gm_range_t *R = &ranges[c];
      const int32_t nr = R->r1 - R->r0;
      p.base = R->base;
      GS_TRY(gm_run_range(ctx, R, list, p, lbuf, lb_keys, lb_vals, lb_off, lb_temp));
      GS_TRY(GS_CUDA(cudaMemsetAsync(loc, 0, sizeof *loc, s)));
      tb = temp;
      GS_TRY(GS_CUDA(cub::DeviceScan::InclusiveSum(d_temp, tb, cnt + R->r0, loc + 1,
                                                   (int64_t)nr, s)));
      int64_t nnz = 0;
      GS_TRY(gs_copy_to_host(ctx, &nnz, loc + nr, sizeof nnz));
      if (nnz > (int64_t)INT32_MAX - running)
        GS_FAIL(GS_ERR_UNSUPPORTED,
                "product of %d x %d and %d x %d has more than 2^31-1 entries (a level's "
                "matrix holds at most 2^31-1)",
                (int)A->m, (int)A->n, (int)B->m, (int)B->n);
      gs_idx_t *dcol = NULL;
      double *dval = NULL;
      GS_TRY(gs_dmalloc(ctx, (void **)&dcol, (size_t)nnz * sizeof(gs_idx_t),
                        nranges == 1 ? "AMG product column indices" : "AMG product part"));
      if (nranges == 1) out.col = dcol;
      else parts[2 * c] = dcol;
      GS_TRY(gs_dmalloc(ctx, (void **)&dval, (size_t)nnz * sizeof(double),
                        nranges == 1 ? "AMG product values" : "AMG product part"));
      if (nranges == 1) out.val = dval;
      else parts[2 * c + 1] = dval;
      if (nranges > 1) part_nnz[c] = nnz;
      gm_copy_kernel<<<gs_grid_blocks((int64_t)nr * GM_COPY_LANES, GM_THREADS), GM_THREADS, 0,
                       s>>>(R->r0, nr, c == nranges - 1, running, loc, p, out.rp, dcol, dval);
      GS_TRY(GS_CHECK_LAUNCH(s, "gm_copy_kernel"));
      running += nnz;
    }
    out.nnz = running;
    if (nranges > 1) { /* the ranges' parts joined */
      GS_TRY(gs_dmalloc(ctx, (void **)&out.col, (size_t)running * sizeof(gs_idx_t),
                        "AMG product column indices"));
      GS_TRY(gs_dmalloc(ctx, (void **)&out.val, (size_t)running * sizeof(double),
                        "AMG product values"));
      int64_t at = 0;
      for (int c = 0; c < nranges; ++c) {
        if (part_nnz[c] > 0) {
          GS_TRY(GS_CUDA(cudaMemcpyAsync(out.col + at, parts[2 * c],
                                         (size_t)part_nnz[c] * sizeof(gs_idx_t),
                                         cudaMemcpyDeviceToDevice, s)));
          GS_TRY(GS_CUDA(cudaMemcpyAsync(out.val + at, parts[2 * c + 1],
                                         (size_t)part_nnz[c] * sizeof(double),
                                         cudaMemcpyDeviceToDevice, s)));
        }
        at += part_nnz[c];
      }
    }
  }
  GS_TRY(GS_CUDA(cudaStreamSynchronize(ctx->stream)));
  *C = out;
  memset(&out, 0, sizeof out);
cleanup:
  if (st != GS_SUCCESS) cudaStreamSynchronize(ctx->stream); /* the kernels are done */
  if (parts)
    for (int c = 0; c < 2 * nranges; ++c) gs_dfree(ctx, parts[c]);
  free(parts);
  free(part_nnz);
  if (ranges != &one) free(ranges);
  gs_dfree(ctx, lbuf);
  gs_dfree(ctx, tbuf);
  gs_dfree(ctx, scratch);
  gs_amg_dcsr_free(ctx, &out);
  return st;
}
