/* spmv/bccoo_devbuild.cu: the `bcoo` / `bccoo` layout (spmv/bccoo.h) built on the GPU from the
 * matrix's shared device CSR, byte for byte what the host builder (spmv/bccoo_build.c, the
 * reference under build=host) writes (Aliaga et al., Euro-Par 2020 Workshops, sections 2.1-2.3).
 *
 * Passes, all on ctx's stream:
 *  1. pad_sums_kernel: the padded entries sum_r pad(len_r, K) for every K = 1 .. 32 at once (one
 *     pass over the row pointers): both the automatic K (the host's cost model, evaluated on the
 *     host from these six sums) and the chunk count of any K come from them.
 *  2. bccoo with a table: the exact counts of the values (vc_count_kernel: a warp merges equal
 *     keys with __match_any_sync, a block counts them in a shared-memory hash table, blocks merge
 *     into one global hash table of 2^17 slots). With at most 2^16 distinct values the counts are
 *     exact and vc_collect_kernel lists the host's candidates: all values when there are at most
 *     2048 (CNT_KEYS) of them, else those counted more than nnz / 2048 times (lut_build's rule:
 *     a function of A alone). Beyond 2^16 distinct values: vc_bucket_kernel counts hashed buckets
 *     (a value's bucket count bounds its count), and vc_count_kernel counts again exactly only
 *     the values of buckets over nnz / 2048: a superset of the eligible values.
 *     Read-back 1 (sync): the six sums and the <= 2048 candidates; the host sorts them by the
 *     host builder's order (count descending, bit pattern ascending), keeps 256, and uploads the
 *     table's membership index (512 slots).
 *  3. plen_kernel + an in-place exclusive scan: the padded row pointers prow (m + 1, 64-bit).
 *  4. chunk_rows_kernel: every chunk's base row (the row holding its first padded position), one
 *     thread per row writing the chunks that start in it.
 *  5. encode_kernel, one block per chunk (persistent blocks): the rows of the 256 threads (binary
 *     search in the chunk's <= 257 staged padded row pointers), the chunk's entries (one range of
 *     A), their smallest and largest column, whether every value is in the table / a float
 *     exactly (block reductions): the encoding byte, base column and blob size; a histogram of
 *     the encodings. An in-place exclusive scan of the sizes gives the blob offsets.
 *     Read-back 2 (sync): the histogram (chunks per encoding: the blob bytes, the carries, the
 *     describe line, whether any chunk uses the table).
 *  6. write_kernel<K>, one block per chunk: thread t writes its row offset, its K column offsets
 *     and K values (table index, float or double bits) in the word layout of bccoo_pos, each word
 *     one aligned store of 1 to 16 bytes (a warp's stores are consecutive), and thread 0 the
 *     chunk's record.
 * Extra device memory during the build: prow (8 (m + 1) bytes), 9 bytes a chunk (encodings and
 * offsets), the CUB scan's scratch, 2 MiB of value table (bccoo with a table) and, only for
 * more than 2^16 distinct values, 4 bytes a bucket (2^16 .. 2^26 buckets, about nnz / 2).
 *
 * Rounding: the host converts with C casts, the device with __double2float_rn (the same
 * round-to-nearest for every non-NaN); NaN payloads are converted by bit operations, as x86 and
 * Arm convert them (quieted, the mantissa's top 23 bits kept). */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cub/device/device_scan.cuh>

#include "core/error.h"
#include "gpusolve/timer.h"
#include "spmv/bccoo_devbuild.h"
#include "spmv/common_kernels.h"
#include "spmv/device_util.cuh"

#define B BCCOO_THREADS
#define FULL_MASK 0xffffffffu
#define EMPTY_KEY 0xffffffffffffffffull /* an empty slot; the value of these bits is counted apart */

#define VC_KEYS 2048          /* the host's CNT_KEYS: eligibility is a count over nnz / VC_KEYS */
#define VC_BITS 17            /* the global value table: 2^17 slots, */
#define VC_SLOTS (1 << VC_BITS)
#define VC_LIMIT (1 << 16)    /* at most half full */
#define VC_PROBES 1024        /* a longer probe chain gives up (the host builds then) */
#define VC_ITEMS 4            /* values a thread loads at once */
#define SH_BITS 10            /* a block's shared table: 2^10 slots, */
#define SH_SLOTS (1 << SH_BITS)
#define SH_PROBES 16          /* a longer chain: the key goes to the global table directly */
#define X_BITS 9              /* the table's membership index: 512 slots for <= 256 values */
#define X_SLOTS (1 << X_BITS)

typedef struct vc_item {
  unsigned long long key, n;
} vc_item_t;

/* Counters and lists read back by the host (one allocation, one copy per read-back). */
typedef struct scratch {
  unsigned long long pad[6];  /* padded entries for K = 1, 2, 4, 8, 16, 32 */
  unsigned long long special; /* the count of the value whose bits are EMPTY_KEY */
  int distinct;               /* distinct values in the global table (+ the special one) */
  int overflow;               /* bit 0: over VC_LIMIT distinct; bit 1: a probe chain too long */
  int nlist;
  int unused;
  vc_item_t list[VC_KEYS];    /* the table's candidates */
  unsigned int hist[256];     /* chunks per encoding byte */
} scratch_t;

/* The table's membership index: idx 0 empty, else the value's table index + 1. */
typedef struct xtab {
  unsigned long long key[X_SLOTS];
  int idx[X_SLOTS];
} xtab_t;

static __host__ __device__ __forceinline__ uint32_t hash_bits(uint64_t k, int bits)
{
  return (uint32_t)((k * 0x9e3779b97f4a7c15ull) >> (64 - bits));
}

/* ---- values as the host converts them ------------------------------------------------------ */

static __device__ __forceinline__ bool nan_bits(uint64_t u)
{
  return (u & 0x7fffffffffffffffull) > 0x7ff0000000000000ull;
}

/* The bits of (double)(float)v: the host builder's rounded() in mixed precision. */
static __device__ __forceinline__ uint64_t round_bits(uint64_t u)
{
  if (nan_bits(u)) return (u & 0xffffffffe0000000ull) | 0x0008000000000000ull;
  return (uint64_t)__double_as_longlong((double)__double2float_rn(__longlong_as_double((long long)u)));
}

/* The bits of (float)v (VAL_F32 chunks; v a float exactly, or rounded in mixed precision). */
static __device__ __forceinline__ uint32_t float_bits(uint64_t u)
{
  if (nan_bits(u))
    return ((uint32_t)(u >> 32) & 0x80000000u) | 0x7fc00000u | ((uint32_t)(u >> 29) & 0x7fffffu);
  return __float_as_uint(__double2float_rn(__longlong_as_double((long long)u)));
}

/* The host's f32_exact: NaN and finite values beyond float's range are not. */
static __device__ __forceinline__ bool f32_exact_bits(uint64_t u)
{
  if (nan_bits(u)) return false;
  const uint64_t a = u & 0x7fffffffffffffffull;
  if (a < 0x7ff0000000000000ull && __longlong_as_double((long long)a) > (double)FLT_MAX)
    return false;
  return round_bits(u) == u;
}

static __device__ __forceinline__ uint64_t dbits(double v)
{
  return (uint64_t)__double_as_longlong(v);
}

/* A value's key: its bits, rounded to float first in mixed precision (the host's rounded()). */
static __device__ __forceinline__ uint64_t key_bits(uint64_t u, int mixed)
{
  return mixed ? round_bits(u) : u;
}

/* ---- 1. padded sizes for every K ----------------------------------------------------------- */

/* One pass over the rows: sum_r pad(len_r, K) (an empty row pads to K) for the six K at once,
 * reduced in the block, then one atomic per K and block. */
static __global__ void __launch_bounds__(B) pad_sums_kernel(const int32_t *__restrict__ rp,
                                                            gs_idx_t m, scratch_t *s)
{
  __shared__ unsigned long long s_sum[B / 32][6];
  unsigned long long acc[6] = {0, 0, 0, 0, 0, 0};
  GS_GRID_STRIDE(r, m)
  {
    const long long len = (long long)rp[r + 1] - rp[r];
#pragma unroll
    for (int i = 0; i < 6; ++i) {
      const long long K = 1ll << i;
      acc[i] += (unsigned long long)(len == 0 ? K : (len + K - 1) / K * K);
    }
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int i = 0; i < 6; ++i) {
    for (int o = 16; o > 0; o >>= 1) acc[i] += __shfl_down_sync(FULL_MASK, acc[i], o);
    if (lane == 0) s_sum[warp][i] = acc[i];
  }
  __syncthreads();
  if (threadIdx.x < 6) {
    unsigned long long t = 0;
    for (int w = 0; w < B / 32; ++w) t += s_sum[w][threadIdx.x];
    if (t) atomicAdd(&s->pad[threadIdx.x], t);
  }
}

/* ---- 2. the value counts ------------------------------------------------------------------- */

struct vc_args {
  const double *__restrict__ val;
  int64_t nnz;
  int mixed;
  const uint32_t *bucket; /* NULL: count every value; else only those of buckets over the bound */
  int hb;                 /* log2 of the buckets */
  unsigned long long *tkey, *tcnt;
  scratch_t *s;
};

static __device__ __forceinline__ bool vc_stopped(const scratch_t *s)
{
  return (*(volatile const int *)&s->overflow & 1) != 0;
}

static __device__ __forceinline__ void vc_bump(scratch_t *s)
{
  if (atomicAdd(&s->distinct, 1) + 1 > VC_LIMIT) atomicOr(&s->overflow, 1);
}

/* n more of key into the global table (open addressing, linear probing, slots never freed, so a
 * key has one slot). Stops adding once the table overflowed (its counts are then discarded). */
static __device__ void vc_add_global(const vc_args &a, unsigned long long key,
                                     unsigned long long n)
{
  if (key == EMPTY_KEY) {
    if (atomicAdd(&a.s->special, n) == 0) vc_bump(a.s);
    return;
  }
  uint32_t h = hash_bits(key, VC_BITS);
  for (int probe = 0; probe < VC_PROBES; ++probe, h = (h + 1) & (VC_SLOTS - 1)) {
    if (vc_stopped(a.s)) return;
    const unsigned long long k = *(volatile unsigned long long *)&a.tkey[h];
    if (k == key) {
      atomicAdd(&a.tcnt[h], n);
      return;
    }
    if (k != EMPTY_KEY) continue;
    const unsigned long long old = atomicCAS(&a.tkey[h], EMPTY_KEY, key);
    if (old == EMPTY_KEY) vc_bump(a.s);
    if (old == EMPTY_KEY || old == key) {
      atomicAdd(&a.tcnt[h], n);
      return;
    }
  }
  atomicOr(&a.s->overflow, 2);
}

/* n more of key into the block's shared table, or the global one when SH_PROBES slots of its
 * probe chain hold other keys (a key counted in both is summed when the block flushes). Every
 * access to a slot's key is an atomicCAS: it claims an empty slot or returns the key there. */
static __device__ void vc_add(const vc_args &a, unsigned long long *s_key, unsigned *s_cnt,
                              unsigned long long key, unsigned n)
{
  if (key != EMPTY_KEY) {
    uint32_t h = hash_bits(key, SH_BITS);
    for (int probe = 0; probe < SH_PROBES; ++probe, h = (h + 1) & (SH_SLOTS - 1)) {
      const unsigned long long old = atomicCAS(&s_key[h], EMPTY_KEY, key);
      if (old == EMPTY_KEY || old == key) {
        atomicAdd(&s_cnt[h], n);
        return;
      }
    }
  }
  vc_add_global(a, key, n);
}

/* The counts of the values (of those in heavy buckets when a.bucket is set). Blocks stride over
 * tiles of VC_ITEMS * B entries; in each warp the lanes holding one key are merged
 * (__match_any_sync) and their leader adds the run's size, so that a matrix of few values (a
 * stencil's) makes few atomics on few addresses; the block's table is flushed at the end. A
 * warp stops early once the global table overflowed (its counts are unused then). */
static __global__ void __launch_bounds__(B) vc_count_kernel(vc_args a)
{
  __shared__ unsigned long long s_key[SH_SLOTS];
  __shared__ unsigned s_cnt[SH_SLOTS];
  for (int i = threadIdx.x; i < SH_SLOTS; i += B) {
    s_key[i] = EMPTY_KEY;
    s_cnt[i] = 0;
  }
  __syncthreads();
  const int lane = threadIdx.x & 31;
  const int64_t tile = (int64_t)VC_ITEMS * B;
  for (int64_t base = (int64_t)blockIdx.x * tile; base < a.nnz; base += (int64_t)gridDim.x * tile) {
    const int stop = lane == 0 ? (int)vc_stopped(a.s) : 0; /* one answer per warp */
    if (__shfl_sync(FULL_MASK, stop, 0)) break;
    unsigned long long key[VC_ITEMS];
    bool have[VC_ITEMS];
#pragma unroll
    for (int j = 0; j < VC_ITEMS; ++j) {
      const int64_t i = base + (int64_t)j * B + threadIdx.x;
      have[j] = i < a.nnz;
      key[j] = have[j] ? dbits(a.val[i]) : 0;
    }
#pragma unroll
    for (int j = 0; j < VC_ITEMS; ++j) {
      bool h = have[j];
      key[j] = key_bits(key[j], a.mixed);
      if (h && a.bucket)
        h = (unsigned long long)a.bucket[hash_bits(key[j], a.hb)] * VC_KEYS >
            (unsigned long long)a.nnz;
      const unsigned act = __ballot_sync(FULL_MASK, h);
      if (h) {
        const unsigned peers = __match_any_sync(act, key[j]);
        if (lane == __ffs(peers) - 1) vc_add(a, s_key, s_cnt, key[j], __popc(peers));
      }
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < SH_SLOTS; i += B)
    if (s_cnt[i] > 0) vc_add_global(a, s_key[i], s_cnt[i]);
}

/* Beyond VC_LIMIT distinct values: counts per hashed bucket (2^hb of them), an upper bound of
 * the count of every value of the bucket. */
static __global__ void __launch_bounds__(B) vc_bucket_kernel(const double *__restrict__ val,
                                                             int64_t nnz, int mixed,
                                                             uint32_t *bucket, int hb)
{
  const int lane = threadIdx.x & 31;
  const int64_t tile = (int64_t)VC_ITEMS * B;
  for (int64_t base = (int64_t)blockIdx.x * tile; base < nnz; base += (int64_t)gridDim.x * tile) {
    unsigned long long key[VC_ITEMS];
    bool have[VC_ITEMS];
#pragma unroll
    for (int j = 0; j < VC_ITEMS; ++j) {
      const int64_t i = base + (int64_t)j * B + threadIdx.x;
      have[j] = i < nnz;
      key[j] = have[j] ? dbits(val[i]) : 0;
    }
#pragma unroll
    for (int j = 0; j < VC_ITEMS; ++j) {
      key[j] = key_bits(key[j], mixed);
      const unsigned act = __ballot_sync(FULL_MASK, have[j]);
      if (have[j]) {
        const unsigned peers = __match_any_sync(act, key[j]);
        if (lane == __ffs(peers) - 1) atomicAdd(&bucket[hash_bits(key[j], hb)], (unsigned)__popc(peers));
      }
    }
  }
}

/* The candidates of the host's table (lut_build): every value when there are at most VC_KEYS
 * distinct ones (and !eligible_only), else the values counted more than nnz / VC_KEYS times.
 * Nothing when the table overflowed. */
static __global__ void __launch_bounds__(B) vc_collect_kernel(const unsigned long long *tkey,
                                                              const unsigned long long *tcnt,
                                                              scratch_t *s, int64_t nnz,
                                                              int eligible_only)
{
  GS_GRID_STRIDE(i, (int64_t)VC_SLOTS + 1)
  {
    if (s->overflow) return;
    unsigned long long key = EMPTY_KEY, n = 0;
    if (i == VC_SLOTS) {
      n = s->special;
    } else {
      key = tkey[i];
      if (key != EMPTY_KEY) n = tcnt[i];
    }
    if (n == 0) continue;
    const bool all = !eligible_only && s->distinct <= VC_KEYS;
    if (all || n * VC_KEYS > (unsigned long long)nnz) {
      const int j = atomicAdd(&s->nlist, 1);
      if (j < VC_KEYS) s->list[j] = vc_item_t{key, n};
    }
  }
}

/* ---- 3-4. padded row pointers, chunks' base rows ------------------------------------------- */

/* prow[r] = pad(len_r, K) for r < m, prow[m] = 0: the input of the in-place exclusive scan. */
static __global__ void __launch_bounds__(B) plen_kernel(const int32_t *__restrict__ rp,
                                                        gs_idx_t m, int K, int64_t *prow)
{
  GS_GRID_STRIDE(r, (int64_t)m + 1)
  {
    if (r == m) {
      prow[r] = 0;
    } else {
      const int64_t len = (int64_t)rp[r + 1] - rp[r];
      prow[r] = len == 0 ? K : (len + K - 1) / K * K;
    }
  }
}

/* Chunk c starts at padded position c * B * K, in the row r with prow[r] <= c*B*K < prow[r+1]:
 * row r writes the base row of every chunk starting in it (rows partition the padded positions,
 * so every chunk gets exactly one writer). */
static __global__ void __launch_bounds__(B) chunk_rows_kernel(const int64_t *__restrict__ prow,
                                                              gs_idx_t m, int64_t BK,
                                                              gs_bccoo_chunk_t *chunk)
{
  GS_GRID_STRIDE(r, m)
  {
    const int64_t p1 = prow[r + 1];
    for (int64_t c = (prow[r] + BK - 1) / BK; c * BK < p1; ++c) chunk[c].row = (int32_t)r;
  }
}

/* ---- 5-6. per chunk: the encoding, then the blob ------------------------------------------- */

struct chunk_args {
  const int32_t *__restrict__ rp;
  const gs_idx_t *__restrict__ col;
  const double *__restrict__ val;
  const int64_t *__restrict__ prow;
  gs_idx_t m;
  int K;
  int64_t nchunks, last; /* last = prow[m] - 1: the last real padded position */
  int compressed, mixed, have_x, use_f32;
  const xtab_t *x;
  gs_bccoo_chunk_t *chunk;
  uint8_t *enc;
  int64_t *off; /* blob sizes (encode), then offsets (after the scan) */
  uint8_t *blob;
  unsigned *hist;
};

/* Stages prow[r0 .. r0 + nr] (nr = min(B, m - r0): a chunk's threads span at most B rows, each
 * row holding >= K padded positions) and returns this thread's row as an offset from r0: the
 * last row whose padded start is <= its first position (clamped to the last real position, so
 * that the tail chunk's padding threads lie in the last row, as the host's row_from). */
static __device__ __forceinline__ int thread_row(const chunk_args &a, int32_t r0, int64_t pos0,
                                                 int64_t *s_prow)
{
  const int nr = min(B, a.m - r0);
  for (int i = threadIdx.x; i <= nr; i += B) s_prow[i] = a.prow[r0 + i];
  __syncthreads();
  int64_t p = pos0 + (int64_t)threadIdx.x * a.K;
  if (p > a.last) p = a.last;
  int lo = 0, hi = nr - 1;
  while (lo < hi) {
    const int mid = lo + (hi - lo + 1) / 2;
    if (s_prow[mid] <= p) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

static __device__ __forceinline__ int x_find(const unsigned long long *key, const int *idx,
                                             unsigned long long k)
{
  for (uint32_t h = hash_bits(k, X_BITS);; h = (h + 1) & (X_SLOTS - 1)) {
    const int i = idx[h];
    if (i == 0) return -1;
    if (key[h] == k) return i - 1;
  }
}

/* The host's pass_encode for chunk c: its entries are the range [ea, eb) of A (the end of row r0
 * from the chunk's first position, the rows between, the start of row r1); the block reduces
 * their smallest and largest column and whether every value is in the table / a float exactly;
 * thread 0 forms the encoding byte, the base column, the blob size and counts the encoding. */
static __global__ void __launch_bounds__(B) encode_kernel(chunk_args a)
{
  __shared__ int64_t s_prow[B + 1];
  __shared__ unsigned long long s_xkey[X_SLOTS];
  __shared__ int s_xidx[X_SLOTS];
  __shared__ int s_r1, s_lo[B / 32], s_hi[B / 32];
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  const bool check_lut = a.compressed && a.have_x;
  const bool check_f32 = a.compressed && a.use_f32 && !a.mixed;
  if (check_lut)
    for (int i = t; i < X_SLOTS; i += B) {
      s_xkey[i] = a.x->key[i];
      s_xidx[i] = a.x->idx[i];
    }
  const int64_t BK = (int64_t)B * a.K;
  for (int64_t c = blockIdx.x; c < a.nchunks; c += gridDim.x) {
    const int32_t r0 = a.chunk[c].row;
    const int64_t pos0 = c * BK, end = pos0 + BK;
    const int my = thread_row(a, r0, pos0, s_prow); /* its barrier also covers the staging */
    if (t == B - 1) s_r1 = my;
    __syncthreads();
    const int d1 = s_r1; /* r1 - r0: the row of thread B - 1 */
    const int32_t r1 = r0 + d1;
    const int64_t len0 = (int64_t)a.rp[r0 + 1] - a.rp[r0], len1 = (int64_t)a.rp[r1 + 1] - a.rp[r1];
    const int64_t ea = a.rp[r0] + min(pos0 - s_prow[0], len0);
    const int64_t eb = a.rp[r1] + min(end - s_prow[d1], len1);
    int lo = INT_MAX, hi = INT_MIN, in_lut = 1, f32 = 1;
    if (a.compressed) {
      for (int64_t s0 = ea; s0 < eb; s0 += 4 * B) {
        gs_idx_t cc[4];
        uint64_t vv[4];
        bool ok[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const int64_t s = s0 + j * B + t;
          ok[j] = s < eb;
          cc[j] = ok[j] ? a.col[s] : 0;
          vv[j] = ok[j] && (check_lut || check_f32) ? dbits(a.val[s]) : 0;
        }
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          if (!ok[j]) continue;
          lo = min(lo, cc[j]);
          hi = max(hi, cc[j]);
          if (check_lut && in_lut) in_lut = x_find(s_xkey, s_xidx, key_bits(vv[j], a.mixed)) >= 0;
          if (check_f32 && f32) f32 = f32_exact_bits(vv[j]);
        }
      }
    }
    lo = __reduce_min_sync(FULL_MASK, lo);
    hi = __reduce_max_sync(FULL_MASK, hi);
    if (lane == 0) {
      s_lo[warp] = lo;
      s_hi[warp] = hi;
    }
    in_lut = __syncthreads_and(in_lut); /* also the barrier after s_lo, s_hi */
    f32 = __syncthreads_and(f32);
    if (t == 0) {
      int enc, base = 0;
      if (a.compressed) {
        for (int w = 1; w < B / 32; ++w) {
          lo = min(lo, s_lo[w]);
          hi = max(hi, s_hi[w]);
        }
        const int64_t span = ea < eb ? (int64_t)hi - lo : 0;
        base = ea < eb ? lo : 0;
        const int ck = span < 255 ? BCCOO_COL_8 : span < 65535 ? BCCOO_COL_16 : BCCOO_COL_32;
        const int vk = a.have_x && in_lut                  ? BCCOO_VAL_LUT
                       : a.use_f32 && (a.mixed || f32)     ? BCCOO_VAL_F32
                                                           : BCCOO_VAL_F64;
        enc = BCCOO_ENC(d1 == 0 ? BCCOO_ROW_NONE : BCCOO_ROW_8, ck, vk);
      } else {
        enc = BCCOO_ENC(BCCOO_ROW_32, BCCOO_COL_32, a.mixed ? BCCOO_VAL_F32 : BCCOO_VAL_F64);
      }
      if (c > 0 && pos0 > s_prow[0]) enc |= BCCOO_HEAD_SHARED;
      if (c + 1 < a.nchunks && s_prow[d1 + 1] > end) enc |= BCCOO_TAIL_SHARED;
      a.chunk[c].col = base;
      a.enc[c] = (uint8_t)enc;
      a.off[c] = (int64_t)bccoo_blob_bytes(enc, a.K);
      atomicAdd(&a.hist[enc], 1u);
    }
    __syncthreads(); /* s_prow, s_r1, s_lo, s_hi are reused by the next chunk */
  }
}

/* Thread t's K fields of w bytes (get(k): field k's bits, w bytes wide) into a section, in
 * bccoo_pos's word layout: word j of W = min(K * w, 16) bytes at (j * B + t) * W, one aligned
 * store each. */
template <int K, int w, class G>
static __device__ __forceinline__ void put_section(uint8_t *sec, int t, const G &get)
{
  constexpr int P = K * w, W = P < 16 ? P : 16, E = W / w;
#pragma unroll
  for (int j = 0; j < P / W; ++j) {
    unsigned long long lo = 0, hi = 0;
#pragma unroll
    for (int e = 0; e < E; ++e) {
      const unsigned long long v = get(j * E + e);
      const int bo = e * w;
      if (bo < 8) lo |= v << (8 * bo);
      else hi |= v << (8 * (bo - 8));
    }
    uint8_t *p = sec + ((size_t)j * B + t) * W;
    if constexpr (W == 1) *p = (uint8_t)lo;
    else if constexpr (W == 2) *(uint16_t *)p = (uint16_t)lo;
    else if constexpr (W == 4) *(uint32_t *)p = (uint32_t)lo;
    else if constexpr (W == 8) *(unsigned long long *)p = lo;
    else *(ulonglong2 *)p = make_ulonglong2(lo, hi);
  }
}

/* Column offsets from the chunk's base column; the all-ones sentinel for padding entries. */
template <int K, int w>
static __device__ __forceinline__ void put_cols(uint8_t *sec, int t, const gs_idx_t *col,
                                                int nreal, int base)
{
  constexpr unsigned long long pad = w == 1 ? 0xffull : w == 2 ? 0xffffull : 0xffffffffull;
  put_section<K, w>(sec, t, [&](int k) -> unsigned long long {
    return k < nreal ? (unsigned long long)(uint32_t)(col[k] - base) : pad;
  });
}

/* Values (padding: bits 0): table indices (w = 1), float bits (4) or double bits (8, rounded to
 * float first in mixed precision, as the host's value_bits). */
template <int K, int w>
static __device__ __forceinline__ void put_vals(uint8_t *sec, int t, const double *val,
                                                int nreal, int mixed,
                                                const unsigned long long *xkey, const int *xidx)
{
  put_section<K, w>(sec, t, [&](int k) -> unsigned long long {
    if (k >= nreal) return 0;
    const uint64_t u = dbits(val[k]);
    if constexpr (w == 1) return (unsigned long long)x_find(xkey, xidx, key_bits(u, mixed));
    else if constexpr (w == 4) return float_bits(u);
    else return key_bits(u, mixed);
  });
}

/* The host's pass_write for chunk c: thread t's row offset, K column offsets and K values at
 * the chunk's blob offset; thread 0 completes the record with (offset << 8) | encoding. */
template <int K>
static __global__ void __launch_bounds__(B) write_kernel(chunk_args a)
{
  __shared__ int64_t s_prow[B + 1];
  __shared__ unsigned long long s_xkey[X_SLOTS];
  __shared__ int s_xidx[X_SLOTS];
  const int t = threadIdx.x;
  if (a.compressed && a.have_x)
    for (int i = t; i < X_SLOTS; i += B) {
      s_xkey[i] = a.x->key[i];
      s_xidx[i] = a.x->idx[i];
    }
  const int64_t BK = (int64_t)B * K;
  for (int64_t c = blockIdx.x; c < a.nchunks; c += gridDim.x) {
    const int32_t r0 = a.chunk[c].row, base = a.chunk[c].col;
    const int enc = a.enc[c];
    const int64_t off = a.off[c], pos0 = c * BK;
    const int my = thread_row(a, r0, pos0, s_prow);
    const int32_t r = r0 + my;
    uint8_t *rows = a.blob + off;
    if (BCCOO_ENC_ROW(enc) == BCCOO_ROW_8) rows[t] = (uint8_t)my;
    else if (BCCOO_ENC_ROW(enc) == BCCOO_ROW_32) ((uint32_t *)rows)[t] = (uint32_t)my;
    /* the thread's entries of row r: those before its first position p are earlier threads' */
    const int64_t p = pos0 + (int64_t)t * K, pr = s_prow[my];
    const int64_t len = (int64_t)a.rp[r + 1] - a.rp[r];
    const int64_t q = min(p - pr, len);
    const int nreal = (int)(min(p + K - pr, len) - q);
    const int64_t s0 = a.rp[r] + q;
    uint8_t *cols = rows + bccoo_row_bytes(enc);
    uint8_t *vals = cols + bccoo_col_bytes(enc, K);
    switch (BCCOO_ENC_COL(enc)) {
    case BCCOO_COL_8: put_cols<K, 1>(cols, t, a.col + s0, nreal, base); break;
    case BCCOO_COL_16: put_cols<K, 2>(cols, t, a.col + s0, nreal, base); break;
    default: put_cols<K, 4>(cols, t, a.col + s0, nreal, base); break;
    }
    switch (BCCOO_ENC_VAL(enc)) {
    case BCCOO_VAL_LUT: put_vals<K, 1>(vals, t, a.val + s0, nreal, a.mixed, s_xkey, s_xidx); break;
    case BCCOO_VAL_F32: put_vals<K, 4>(vals, t, a.val + s0, nreal, a.mixed, s_xkey, s_xidx); break;
    default: put_vals<K, 8>(vals, t, a.val + s0, nreal, a.mixed, s_xkey, s_xidx); break;
    }
    if (t == 0) a.chunk[c].pe = ((uint64_t)off << 8) | (uint64_t)enc;
    __syncthreads(); /* s_prow is reused by the next chunk */
  }
}

/* ---- host side ----------------------------------------------------------------------------- */

/* The host's by_count: count descending, then bit pattern ascending. */
static int by_count(const void *pa, const void *pb)
{
  const vc_item_t *x = (const vc_item_t *)pa, *y = (const vc_item_t *)pb;
  if (x->n != y->n) return x->n > y->n ? -1 : 1;
  return x->key < y->key ? -1 : x->key > y->key;
}

static unsigned grid_for(const gs_context_t *ctx, int64_t items, int per_sm)
{
  const unsigned g = gs_grid_blocks(items, B);
  const unsigned cap = (unsigned)((ctx->sm_count > 0 ? ctx->sm_count : 1) * per_sm);
  return g < cap ? g : cap;
}

/* Bytes rounded up to 256: the pieces carved from one allocation stay aligned. */
static size_t carve(size_t bytes) { return (bytes + 255) / 256 * 256; }

template <int KK>
static gs_status_t launch_write(cudaStream_t s, unsigned grid, const chunk_args &a)
{
  write_kernel<KK><<<grid, B, 0, s>>>(a);
  return GS_CHECK_LAUNCH(s, "bccoo write_kernel");
}

extern "C" gs_status_t gs_bccoo_build_device(gs_context_t *ctx, const gs_dcsr_t *A,
                                             const gs_bccoo_opts_t *opts, gs_bccoo_t *L,
                                             gs_bccoo_chunk_t **d_chunk_out, uint8_t **d_blob_out,
                                             int *host_fallback)
{
  gs_status_t st = GS_SUCCESS;
  scratch_t *h = NULL, *d_s = NULL;
  unsigned long long *d_tkey = NULL, *d_tcnt = NULL;
  uint8_t *d_work1 = NULL, *d_work2 = NULL; /* the temporaries, carved from two allocations */
  uint32_t *d_bucket = NULL;
  xtab_t *d_x = NULL, *hx = NULL;
  int64_t *d_prow = NULL, *d_off = NULL;
  uint8_t *d_enc = NULL, *d_blob = NULL;
  gs_bccoo_chunk_t *d_chunk = NULL;
  void *d_tmp = NULL;
  cudaStream_t s = ctx->stream;
  *d_chunk_out = NULL;
  *d_blob_out = NULL;
  *host_fallback = 0;
  GS_CHECK(gs_bccoo_check_opts(opts));
  if (A->wide || (A->m > 0 && !A->d_row_ptr32))
    return GS_ERROR(GS_ERR_INTERNAL, "bccoo device build: the matrix has 64-bit offsets");
  const double t0 = gs_wall_seconds();
  L->m = A->m;
  L->n = A->n;
  L->nnz = A->nnz;
  L->compressed = opts->compressed != 0;
  L->mixed = opts->mixed != 0;
  L->fl = opts->mixed == 2;
  L->threads = 0; /* no host thread: the describe line says "device build" */
  const int want_lut = L->compressed && opts->lut && A->nnz > 0;
  const int64_t nnz = A->nnz;

  h = (scratch_t *)malloc(sizeof *h);
  hx = (xtab_t *)calloc(1, sizeof *hx);
  if (!h || !hx) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory building bccoo");
  {
    const size_t tab = want_lut ? VC_SLOTS * sizeof(unsigned long long) : 0;
    GS_TRY(gs_dmalloc_ordered(ctx, (void **)&d_work1, carve(sizeof(scratch_t)) + 2 * tab,
                              "bccoo build counters"));
    d_s = (scratch_t *)d_work1;
    if (want_lut) {
      d_tkey = (unsigned long long *)(d_work1 + carve(sizeof(scratch_t)));
      d_tcnt = d_tkey + VC_SLOTS;
    }
  }
  GS_TRY(GS_CUDA(cudaMemsetAsync(d_s, 0, sizeof *d_s, s)));
  if (A->m > 0) {
    pad_sums_kernel<<<grid_for(ctx, A->m, 4), B, 0, s>>>(A->d_row_ptr32, A->m, d_s);
    GS_TRY(GS_CHECK_LAUNCH(s, "bccoo pad_sums_kernel"));
  }
  vc_args va;
  memset(&va, 0, sizeof va);
  if (want_lut) {
    GS_TRY(GS_CUDA(cudaMemsetAsync(d_tkey, 0xff, VC_SLOTS * sizeof *d_tkey, s)));
    GS_TRY(GS_CUDA(cudaMemsetAsync(d_tcnt, 0, VC_SLOTS * sizeof *d_tcnt, s)));
    va.val = A->d_val;
    va.nnz = nnz;
    va.mixed = L->mixed;
    va.tkey = d_tkey;
    va.tcnt = d_tcnt;
    va.s = d_s;
    vc_count_kernel<<<grid_for(ctx, (nnz + VC_ITEMS - 1) / VC_ITEMS, 4), B, 0, s>>>(va);
    GS_TRY(GS_CHECK_LAUNCH(s, "bccoo vc_count_kernel"));
    vc_collect_kernel<<<gs_grid_blocks((int64_t)VC_SLOTS + 1, B), B, 0, s>>>(d_tkey, d_tcnt, d_s,
                                                                            nnz, 0);
    GS_TRY(GS_CHECK_LAUNCH(s, "bccoo vc_collect_kernel"));
  }
  /* read-back 1: the padded sums and the table's candidates */
  GS_TRY(GS_CUDA(cudaMemcpyAsync(h, d_s, offsetof(scratch_t, hist), cudaMemcpyDeviceToHost, s)));
  GS_TRY(GS_CUDA(cudaStreamSynchronize(s)));
  if (want_lut && h->overflow == 1) {
    /* more than VC_LIMIT distinct values: the eligible ones lie in buckets over the bound */
    int hb = 16;
    while (hb < 26 && ((int64_t)1 << hb) < nnz / 8) ++hb;
    GS_TRY(gs_dmalloc_ordered(ctx, (void **)&d_bucket, ((size_t)1 << hb) * sizeof *d_bucket,
                              "bccoo value buckets"));
    GS_TRY(GS_CUDA(cudaMemsetAsync(d_bucket, 0, ((size_t)1 << hb) * sizeof *d_bucket, s)));
    vc_bucket_kernel<<<grid_for(ctx, (nnz + VC_ITEMS - 1) / VC_ITEMS, 8), B, 0, s>>>(
        A->d_val, nnz, L->mixed, d_bucket, hb);
    GS_TRY(GS_CHECK_LAUNCH(s, "bccoo vc_bucket_kernel"));
    GS_TRY(GS_CUDA(cudaMemsetAsync(d_tkey, 0xff, VC_SLOTS * sizeof *d_tkey, s)));
    GS_TRY(GS_CUDA(cudaMemsetAsync(d_tcnt, 0, VC_SLOTS * sizeof *d_tcnt, s)));
    GS_TRY(GS_CUDA(cudaMemsetAsync(&d_s->special, 0,
                                   offsetof(scratch_t, list) - offsetof(scratch_t, special), s)));
    va.bucket = d_bucket;
    va.hb = hb;
    vc_count_kernel<<<grid_for(ctx, (nnz + VC_ITEMS - 1) / VC_ITEMS, 4), B, 0, s>>>(va);
    GS_TRY(GS_CHECK_LAUNCH(s, "bccoo vc_count_kernel"));
    vc_collect_kernel<<<gs_grid_blocks((int64_t)VC_SLOTS + 1, B), B, 0, s>>>(d_tkey, d_tcnt, d_s,
                                                                            nnz, 1);
    GS_TRY(GS_CHECK_LAUNCH(s, "bccoo vc_collect_kernel"));
    GS_TRY(GS_CUDA(cudaMemcpyAsync(&h->special, &d_s->special,
                                   offsetof(scratch_t, hist) - offsetof(scratch_t, special),
                                   cudaMemcpyDeviceToHost, s)));
    GS_TRY(GS_CUDA(cudaStreamSynchronize(s)));
  }
  if (want_lut && h->overflow != 0) { /* the bounded tables do not hold the candidates */
    *host_fallback = 1;
    goto cleanup;
  }

  {
    {
      int64_t pad[6];
      for (int i = 0; i < 6; ++i) pad[i] = (int64_t)h->pad[i];
      L->K = opts->k ? opts->k : gs_bccoo_choose_k_padded(pad, L->compressed);
    }
    const int K = L->K;
    int lk = 0;
    while ((1 << lk) < K) ++lk;
    const int64_t BK = (int64_t)B * K, total = (int64_t)h->pad[lk];
    L->nchunks = (total + BK - 1) / BK;
    L->padded = L->nchunks * BK;
    if (L->nchunks == 0) goto done;

    if (want_lut) { /* the host's table: the first 256 candidates by count, then bits */
      if (h->nlist < 0 || h->nlist > VC_KEYS)
        GS_FAIL(GS_ERR_INTERNAL, "bccoo device build: %d table candidates", h->nlist);
      qsort(h->list, (size_t)h->nlist, sizeof h->list[0], by_count);
      L->lut_size = h->nlist < BCCOO_LUT_SIZE ? h->nlist : BCCOO_LUT_SIZE;
      for (int i = 0; i < L->lut_size; ++i) {
        const unsigned long long k = h->list[i].key;
        memcpy(&L->lut[i], &k, sizeof k);
        uint32_t x = hash_bits(k, X_BITS);
        while (hx->idx[x] != 0) x = (x + 1) & (X_SLOTS - 1);
        hx->key[x] = k;
        hx->idx[x] = i + 1;
      }
    }

    size_t tmp_a = 0, tmp_b = 0;
    GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(NULL, tmp_a, d_prow, (int64_t)A->m + 1, s)));
    GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(NULL, tmp_b, d_off, L->nchunks, s)));
    const size_t tmp_bytes = tmp_a > tmp_b ? tmp_a : tmp_b;
    /* one allocation: the table index, prow, the offsets, the encodings, the scan's scratch */
    const size_t o_prow = carve(sizeof(xtab_t));
    const size_t o_off = o_prow + carve(((size_t)A->m + 1) * sizeof(int64_t));
    const size_t o_enc = o_off + carve((size_t)L->nchunks * sizeof(int64_t));
    const size_t o_tmp = o_enc + carve((size_t)L->nchunks);
    GS_TRY(gs_dmalloc_ordered(ctx, (void **)&d_work2, o_tmp + carve(tmp_bytes),
                              "bccoo build scratch"));
    d_x = (xtab_t *)d_work2;
    d_prow = (int64_t *)(d_work2 + o_prow);
    d_off = (int64_t *)(d_work2 + o_off);
    d_enc = d_work2 + o_enc;
    d_tmp = d_work2 + o_tmp;
    if (want_lut) /* pageable source: the copy is complete when the call returns */
      GS_TRY(GS_CUDA(cudaMemcpyAsync(d_x, hx, sizeof *hx, cudaMemcpyHostToDevice, s)));
    GS_TRY(gs_dmalloc_ordered(ctx, (void **)&d_chunk, (size_t)L->nchunks * sizeof *d_chunk,
                              "bccoo chunk records"));

    plen_kernel<<<gs_grid_blocks((int64_t)A->m + 1, B), B, 0, s>>>(A->d_row_ptr32, A->m, K, d_prow);
    GS_TRY(GS_CHECK_LAUNCH(s, "bccoo plen_kernel"));
    tmp_a = tmp_bytes;
    GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(d_tmp, tmp_a, d_prow, (int64_t)A->m + 1, s)));
    chunk_rows_kernel<<<gs_grid_blocks(A->m, B), B, 0, s>>>(d_prow, A->m, BK, d_chunk);
    GS_TRY(GS_CHECK_LAUNCH(s, "bccoo chunk_rows_kernel"));

    chunk_args ca;
    memset(&ca, 0, sizeof ca);
    ca.rp = A->d_row_ptr32;
    ca.col = A->d_col;
    ca.val = A->d_val;
    ca.prow = d_prow;
    ca.m = A->m;
    ca.K = K;
    ca.nchunks = L->nchunks;
    ca.last = total - 1;
    ca.compressed = L->compressed;
    ca.mixed = L->mixed;
    ca.have_x = want_lut;
    ca.use_f32 = L->compressed && (opts->f32 || L->mixed); /* mixed: every value is a float */
    ca.x = d_x;
    ca.chunk = d_chunk;
    ca.enc = d_enc;
    ca.off = d_off;
    ca.hist = d_s->hist;
    const unsigned cgrid = grid_for(ctx, L->nchunks * B, 8);
    encode_kernel<<<cgrid, B, 0, s>>>(ca);
    GS_TRY(GS_CHECK_LAUNCH(s, "bccoo encode_kernel"));
    tmp_b = tmp_bytes;
    GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(d_tmp, tmp_b, d_off, L->nchunks, s)));
    /* read-back 2: chunks per encoding */
    GS_TRY(GS_CUDA(cudaMemcpyAsync(h->hist, d_s->hist, sizeof h->hist, cudaMemcpyDeviceToHost, s)));
    GS_TRY(GS_CUDA(cudaStreamSynchronize(s)));
    size_t bytes = 0;
    int lut_used = 0;
    for (int e = 0; e < 256; ++e) {
      if (h->hist[e] == 0) continue;
      bytes += (size_t)h->hist[e] * bccoo_blob_bytes(e, K);
      L->kind_count[BCCOO_ENC_KIND(e)] += h->hist[e];
      if (e & BCCOO_TAIL_SHARED) L->carries += h->hist[e];
      if (BCCOO_ENC_VAL(e) == BCCOO_VAL_LUT && L->compressed) lut_used = 1;
    }
    if (!lut_used) L->lut_size = 0;
    L->blob_bytes = bytes;
    GS_TRY(gs_dmalloc_ordered(ctx, (void **)&d_blob, bytes, "bccoo blobs"));
    ca.blob = d_blob;
    switch (K) {
    case 1: GS_TRY(launch_write<1>(s, cgrid, ca)); break;
    case 2: GS_TRY(launch_write<2>(s, cgrid, ca)); break;
    case 4: GS_TRY(launch_write<4>(s, cgrid, ca)); break;
    case 8: GS_TRY(launch_write<8>(s, cgrid, ca)); break;
    case 16: GS_TRY(launch_write<16>(s, cgrid, ca)); break;
    default: GS_TRY(launch_write<32>(s, cgrid, ca)); break;
    }
  }
done:
  L->build_seconds = gs_wall_seconds() - t0;
  *d_chunk_out = d_chunk;
  *d_blob_out = d_blob;
  d_chunk = NULL;
  d_blob = NULL;
cleanup:
  gs_dfree(ctx, d_work1);
  gs_dfree(ctx, d_bucket);
  gs_dfree(ctx, d_work2);
  gs_dfree(ctx, d_chunk);
  gs_dfree(ctx, d_blob);
  free(h);
  free(hx);
  return st;
}
