/* spmv/features_kernels.cu: the features of a matrix (gs_features_t, gs_select_features_t)
 * computed on the GPU from its shared device CSR, equal bit for bit to the host's
 * (core/features.c, select/rule.c). Interface: spmv/features_dev.h.
 *
 * One kernel, one read-back. Every block takes
 *   - SELL-32 slices, one warp a slice (a lane a row): row lengths' maximum, minimum, empty
 *     rows, the exact 128-bit sum of squared lengths, and the slice's padded width (a warp
 *     maximum) for the SELL slot counts;
 *   - tiles of FEAT_TILE consecutive entries, consecutive threads on consecutive entries: each
 *     entry finds its row by a binary search between the rows of its tile's first and last
 *     entries (found by two warps, 32 row pointers a round), then
 *       occupied diagonals: bit j - i + m - 1 of a bitmap of m + n bits, set with atomicOr;
 *         a diagonal is counted by the thread whose atomicOr set its bit (no popcount pass);
 *       distinct values: the 64-bit patterns go into one open-addressing table of
 *         4 * GS_SELECT_DISTINCT_CAP slots (atomicCAS), counted as they enter; past the cap a
 *         flag stops the inserting (the host's count saturates at CAP + 1 the same way);
 *       symmetry (square only): the mirror (j, i) by a binary search of i in row j, as the
 *         host does (mirror 0 when absent); max |a|, max |a_ij - a_ji|, the diagonal's
 *         presence and sign, non-finite values.
 *   A block-local filter in shared memory (direct-mapped, of diagonals and of values already
 *   sent to the global structures) keeps the atomics off the few hot words of a stencil
 *   (lap27: 27 diagonals and 2 values for 26.5M entries); a miss only costs one more atomic.
 * Every statistic is order-independent (counts, exact sums, maxima, minima, flags), so the
 * result does not depend on the schedule; the host finishes it with the same code as the host
 * pass (gs_features_finish, gs_select_features_fill). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/error.h"
#include "core/features.h"
#include "spmv/common_kernels.h"
#include "spmv/device_util.cuh"
#include "spmv/features_dev.h"
#include "spmv/sell.h"

#define FEAT_BLOCK 256
#define FEAT_WARPS (FEAT_BLOCK / 32)
#define FEAT_ITEMS 8
#define FEAT_TILE (FEAT_BLOCK * FEAT_ITEMS) /* entries a block takes at a time */
#define FEAT_MAX_BLOCKS 2048                /* the reductions end in a few atomics a block */
#define FEAT_DCACHE 2048                    /* shared filter of diagonals (32-bit) */
#define FEAT_VCACHE 512                     /* shared filter of values (64-bit) */
#define FEAT_VCACHE_BITS 9
#define FEAT_SLOTS (4 * GS_SELECT_DISTINCT_CAP) /* the value table: at most a quarter full */
#define FEAT_EMPTY (~0ull)                     /* a free slot (that pattern is flagged apart) */

static_assert(GS_SELL_SLICE_SIZE == 32, "the slot counts take one warp a SELL slice");
static_assert((FEAT_SLOTS & (FEAT_SLOTS - 1)) == 0, "the value table is a power of two");
static_assert((1 << FEAT_VCACHE_BITS) == FEAT_VCACHE, "value filter size");
/* the filters start with slot 0 = 1 and every other slot 0, which matches no key looked up
 * there, provided 0 and 1 hash to different slots */
static_assert((0x9E3779B97F4A7C15ull >> (64 - FEAT_VCACHE_BITS)) != 0, "filter sentinels");

/* The statistics, one 64-bit word each (doubles >= 0 as their bit patterns, which order as
 * unsigned integers do). */
enum {
  S_ROW_MAX, S_ROW_MIN, S_EMPTY, S_SELL_USED, S_SELL_TOTAL, S_AMAX, S_DMAX, S_DIAG_ROWS,
  S_FLAGS, S_DIAGONALS, S_SQ_LO, S_SQ_HI, /* the block-reduced ones, in this order */
  S_DISTINCT, S_OVER, S_ONES, S_COUNT
};
#define FEAT_NRED 10 /* S_ROW_MAX .. S_DIAGONALS; the 128-bit sum apart */
enum { F_NONFINITE = 1, F_PATTERN = 2, F_DIAG_ZERO = 4, F_DIAG_NONPOS = 8 };
enum { OP_SUM, OP_MAX, OP_MIN, OP_OR };
/* how statistic k combines (its loops are unrolled: a constant) */
static __host__ __device__ constexpr int feat_op(int k)
{
  return k == S_ROW_MAX || k == S_AMAX || k == S_DMAX ? OP_MAX
         : k == S_ROW_MIN                             ? OP_MIN
         : k == S_FLAGS                               ? OP_OR
                                                      : OP_SUM;
}

typedef unsigned long long u64;

static __device__ __forceinline__ u64 feat_combine(int op, u64 a, u64 b)
{
  switch (op) {
  case OP_MAX: return a > b ? a : b;
  case OP_MIN: return a < b ? a : b;
  case OP_OR: return a | b;
  default: return a + b;
  }
}

static __device__ __forceinline__ u64 feat_neutral(int op) { return op == OP_MIN ? ~0ull : 0ull; }

/* The largest row i in [lo, hi] with rp[i] <= p (rp[lo] <= p): the row holding entry p. */
template <typename RP>
static __device__ __forceinline__ int64_t feat_row_of(const RP *__restrict__ rp, int64_t p,
                                                      int64_t lo, int64_t hi)
{
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    if ((int64_t)rp[mid] <= p) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/* The same by the 32 lanes of a warp at once (all of them call it, same arguments): each round
 * reads 32 evenly spaced row pointers and keeps the stretch between the last that is <= p and
 * the next, so that a search over m rows takes log32(m) rounds of one load instead of log2(m)
 * dependent loads (the two searches of a tile's bounds, which the whole block waits for). */
template <typename RP>
static __device__ int64_t feat_row_of_warp(const RP *__restrict__ rp, int64_t p, int64_t lo,
                                           int64_t hi)
{
  const int lane = threadIdx.x & 31;
  for (;;) {
    const int64_t step = hi - lo >= 32 ? (hi - lo) / 32 + 1 : 1; /* 32 * step > hi - lo */
    const int64_t idx = lo + lane * step;
    const unsigned ok = __ballot_sync(0xffffffffu, idx <= hi && (int64_t)rp[idx] <= p);
    const int k = 31 - __clz(ok); /* lane 0 always holds (rp[lo] <= p); a prefix of lanes does */
    lo += k * step;
    if (step == 1) return lo;
    hi = lo + step - 1 < hi ? lo + step - 1 : hi;
  }
}

/* Inserts a value pattern into the global table; 1 once the count is known to pass the cap. */
static __device__ int feat_insert(u64 *table, u64 *stat, u64 key)
{
  if (key == FEAT_EMPTY) { /* the free-slot pattern itself (a NaN): a flag of its own */
    stat[S_ONES] = 1;     /* every writer stores the same value */
    return 0;
  }
  u64 h = key ^ (key >> 33); /* a 64-bit finalizer's mixing */
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  unsigned s = (unsigned)h & (FEAT_SLOTS - 1);
  for (unsigned probe = 0; probe < FEAT_SLOTS; ++probe) {
    u64 cur = ((volatile u64 *)table)[s];
    if (cur == key) return 0;
    if (cur == FEAT_EMPTY) {
      cur = atomicCAS(&table[s], FEAT_EMPTY, key);
      if (cur == FEAT_EMPTY) { /* ours: a new value */
        if (atomicAdd(&stat[S_DISTINCT], 1ull) + 1 > (u64)GS_SELECT_DISTINCT_CAP) {
          stat[S_OVER] = 1;
          return 1;
        }
        return 0;
      }
      if (cur == key) return 0;
    }
    s = (s + 1) & (FEAT_SLOTS - 1);
  }
  stat[S_OVER] = 1; /* a full table: far more than the cap */
  return 1;
}

/* v[0 .. FEAT_NRED-1] and the 128-bit (lo, hi) summed over the block, then one atomic each
 * into stat (skipped for a neutral value). Every thread of the block calls it. */
static __device__ void feat_block_reduce(u64 *v, u64 lo, u64 hi, u64 *stat)
{
  __shared__ u64 s_red[FEAT_WARPS][FEAT_NRED + 2];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int round = 0; round < 2; ++round) {
    for (int off = 16; off > 0; off >>= 1) {
#pragma unroll
      for (int k = 0; k < FEAT_NRED; ++k)
        v[k] = feat_combine(feat_op(k), v[k], __shfl_xor_sync(0xffffffffu, v[k], off));
      const u64 olo = __shfl_xor_sync(0xffffffffu, lo, off);
      const u64 ohi = __shfl_xor_sync(0xffffffffu, hi, off);
      const u64 nlo = lo + olo;
      hi = hi + ohi + (nlo < lo ? 1ull : 0ull);
      lo = nlo;
    }
    if (round == 1) break;
    __syncthreads();
    if (lane == 0) {
#pragma unroll
      for (int k = 0; k < FEAT_NRED; ++k) s_red[warp][k] = v[k];
      s_red[warp][FEAT_NRED] = lo;
      s_red[warp][FEAT_NRED + 1] = hi;
    }
    __syncthreads();
    if (warp != 0) return;
    const int have = lane < FEAT_WARPS;
#pragma unroll
    for (int k = 0; k < FEAT_NRED; ++k) v[k] = have ? s_red[lane][k] : feat_neutral(feat_op(k));
    lo = have ? s_red[lane][FEAT_NRED] : 0ull;
    hi = have ? s_red[lane][FEAT_NRED + 1] : 0ull;
  }
  if (lane != 0) return;
#pragma unroll
  for (int k = 0; k < FEAT_NRED; ++k) {
    if (v[k] == feat_neutral(feat_op(k))) continue;
    switch (feat_op(k)) {
    case OP_MAX: atomicMax(&stat[k], v[k]); break;
    case OP_MIN: atomicMin(&stat[k], v[k]); break;
    case OP_OR: atomicOr(&stat[k], v[k]); break;
    default: atomicAdd(&stat[k], v[k]); break;
    }
  }
  if (lo | hi) { /* a 128-bit add as two 64-bit ones, the carry taken from the low word's old value */
    const u64 old = atomicAdd(&stat[S_SQ_LO], lo);
    if (old + lo < old) ++hi;
    if (hi) atomicAdd(&stat[S_SQ_HI], hi);
  }
}

template <typename RP>
static __global__ void __launch_bounds__(FEAT_BLOCK)
feat_kernel(const RP *__restrict__ rp, const gs_idx_t *__restrict__ col,
            const double *__restrict__ val, int64_t m, int64_t nnz, int square, int distinct,
            u64 *stat, u64 *table, unsigned *bitmap)
{
  __shared__ unsigned s_dcache[FEAT_DCACHE];
  __shared__ u64 s_vcache[FEAT_VCACHE];
  __shared__ int64_t s_rows[2];
  for (int k = threadIdx.x; k < FEAT_DCACHE; k += FEAT_BLOCK) s_dcache[k] = k == 0;
  for (int k = threadIdx.x; k < FEAT_VCACHE; k += FEAT_BLOCK) s_vcache[k] = k == 0;
  /* The two caches are read and written by every thread without order: a stale entry only costs
   * one more global atomic. Their accesses are shared-memory atomics all the same, so that the
   * kernel is race-free as compute-sanitizer's racecheck sees it (plain volatile accesses were
   * reported). */
  u64 v[FEAT_NRED];
#pragma unroll
  for (int k = 0; k < FEAT_NRED; ++k) v[k] = feat_neutral(feat_op(k));
  u64 sq_lo = 0, sq_hi = 0;
  double amax = 0.0, dmax = 0.0;
  unsigned flags = 0;

  /* rows: one warp a slice of 32 (the loop bound is the same for the warp's lanes) */
  const int lane = threadIdx.x & 31;
  const int64_t nslices = (m + 31) / 32, warps = (int64_t)gridDim.x * FEAT_WARPS;
  for (int64_t s = (int64_t)blockIdx.x * FEAT_WARPS + (threadIdx.x >> 5); s < nslices;
       s += warps) {
    const int64_t i = s * 32 + lane;
    u64 len = 0;
    if (i < m) {
      len = (u64)((int64_t)rp[i + 1] - (int64_t)rp[i]);
      v[S_ROW_MAX] = len > v[S_ROW_MAX] ? len : v[S_ROW_MAX];
      v[S_ROW_MIN] = len < v[S_ROW_MIN] ? len : v[S_ROW_MIN];
      v[S_EMPTY] += len == 0;
      const u64 lo = len * len, hi = __umul64hi(len, len);
      sq_lo += lo;
      sq_hi += hi + (sq_lo < lo ? 1ull : 0ull);
    }
    u64 w = len;
    for (int off = 16; off > 0; off >>= 1) {
      const u64 o = __shfl_xor_sync(0xffffffffu, w, off);
      w = o > w ? o : w;
    }
    if (lane == 0) {
      const int64_t rows = m - s * 32 < 32 ? m - s * 32 : 32;
      v[S_SELL_USED] += (u64)rows * w;
      v[S_SELL_TOTAL] += 32ull * w;
    }
  }
  __syncthreads(); /* the filters are initialized */

  /* entries: tiles of FEAT_TILE */
  const int64_t ntiles = (nnz + FEAT_TILE - 1) / FEAT_TILE;
  for (int64_t tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
    const int64_t p0 = tile * FEAT_TILE, p1 = p0 + FEAT_TILE < nnz ? p0 + FEAT_TILE : nnz;
    if (threadIdx.x < 64) { /* warp 0: the row of the tile's first entry, warp 1: its last */
      const int64_t r = feat_row_of_warp(rp, threadIdx.x < 32 ? p0 : p1 - 1, 0, m - 1);
      if ((threadIdx.x & 31) == 0) s_rows[threadIdx.x >> 5] = r;
    }
    __syncthreads();
    int64_t lo = s_rows[0];
    const int64_t hi = s_rows[1];
    __syncthreads(); /* read before the next tile writes them */
    int over = !distinct || ((volatile u64 *)stat)[S_OVER] != 0;
#pragma unroll 1
    for (int k = 0; k < FEAT_ITEMS; ++k) {
      const int64_t p = p0 + (int64_t)k * FEAT_BLOCK + threadIdx.x;
      if (p >= p1) break;
      const int64_t i = feat_row_of(rp, p, lo, hi);
      lo = i; /* the next entry of this thread lies in row i or later */
      const int64_t j = col[p];
      const double a = val[p];

      const unsigned d = (unsigned)(j - i + (m - 1)); /* < m + n - 1 <= 2^32 - 3 */
      unsigned *dslot = &s_dcache[d & (FEAT_DCACHE - 1)];
      if (atomicOr(dslot, 0u) != d) {
        const unsigned bit = 1u << (d & 31);
        if (!(atomicOr(&bitmap[d >> 5], bit) & bit)) v[S_DIAGONALS]++;
        atomicExch(dslot, d); /* after the global atomic: a hit means "already set" */
      }
      if (!over) {
        const u64 bits = (u64)__double_as_longlong(a);
        const unsigned vs = (unsigned)((bits * 0x9E3779B97F4A7C15ull) >> (64 - FEAT_VCACHE_BITS));
        unsigned long long *vslot = (unsigned long long *)&s_vcache[vs];
        if ((u64)atomicOr(vslot, 0ull) != bits) {
          over = feat_insert(table, stat, bits);
          atomicExch(vslot, (unsigned long long)bits);
        }
      }
      if (!square) continue;
      const double aa = fabs(a);
      if (!isfinite(a)) flags |= F_NONFINITE;
      else if (aa > amax) amax = aa;
      if (j == i) { /* its own mirror; at most one a row (sorted, no duplicates) */
        v[S_DIAG_ROWS]++;
        if (a == 0.0) flags |= F_DIAG_ZERO;
        if (!(a > 0.0)) flags |= F_DIAG_NONPOS;
        continue;
      }
      int64_t b = rp[j];
      const int64_t e = rp[j + 1];
      int64_t q = e;
      while (b < q) { /* the first position of row j with column >= i */
        const int64_t mid = b + (q - b) / 2;
        if ((int64_t)col[mid] < i) b = mid + 1;
        else q = mid;
      }
      double mirror = 0.0;
      if (b < e && (int64_t)col[b] == i) mirror = val[b];
      else flags |= F_PATTERN;
      const double dv = fabs(a - mirror);
      if (dv > dmax) dmax = dv; /* a NaN never enters (non-finite: asymmetry +Inf anyway) */
    }
  }
  v[S_AMAX] = (u64)__double_as_longlong(amax);
  v[S_DMAX] = (u64)__double_as_longlong(dmax);
  v[S_FLAGS] = flags;
  feat_block_reduce(v, sq_lo, sq_hi, stat);
}

/* ---- host side ------------------------------------------------------------------------------ */

static size_t feat_align(size_t b) { return (b + 255) / 256 * 256; }

gs_status_t gs_dcsr_select_features(gs_context_t *ctx, const gs_dcsr_t *A, gs_symmetry_t stored,
                                    gs_features_t *g, gs_select_features_t *f)
{
  gs_status_t st = GS_SUCCESS;
  char *d_buf = NULL;
  u64 h_stat[S_COUNT];
  if (g) memset(g, 0, sizeof *g);
  if (f) memset(f, 0, sizeof *f);
  if (!ctx || !A)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_dcsr_select_features: NULL argument");
  if (A->m < 0 || A->n < 0 || A->nnz < 0 || (A->nnz > 0 && (!A->d_col || !A->d_val)) ||
      (A->wide ? !A->d_row_ptr64 : !A->d_row_ptr32))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_dcsr_select_features: an incomplete device CSR");
  if (!g && !f) return GS_SUCCESS;
  const int64_t m = A->m, n = A->n, nnz = A->nnz;
  const int want_distinct = f != NULL;
  GS_TRY(gs_context_activate(ctx));
  {
    /* one allocation: the statistics, the bitmap of diagonals, the value table */
    const size_t words = (size_t)((m + n) / 32 + 1);
    const size_t sb = feat_align(sizeof h_stat), bb = feat_align(words * sizeof(unsigned));
    const size_t tb = want_distinct ? (size_t)FEAT_SLOTS * sizeof(u64) : 0;
    GS_TRY(gs_dmalloc(ctx, (void **)&d_buf, sb + bb + tb, "matrix features"));
    u64 *d_stat = (u64 *)d_buf, *d_table = want_distinct ? (u64 *)(d_buf + sb + bb) : NULL;
    unsigned *d_bitmap = (unsigned *)(d_buf + sb);
    memset(h_stat, 0, sizeof h_stat);
    h_stat[S_ROW_MIN] = ~0ull;
    GS_TRY(GS_CUDA(cudaMemcpyAsync(d_stat, h_stat, sizeof h_stat, cudaMemcpyHostToDevice,
                                   ctx->stream)));
    GS_TRY(GS_CUDA(cudaMemsetAsync(d_bitmap, 0, words * sizeof(unsigned), ctx->stream)));
    if (d_table) GS_TRY(GS_CUDA(cudaMemsetAsync(d_table, 0xff, tb, ctx->stream)));
    int64_t blocks = (nnz + FEAT_TILE - 1) / FEAT_TILE;
    const int64_t slice_blocks = ((m + 31) / 32 + FEAT_WARPS - 1) / FEAT_WARPS;
    if (slice_blocks > blocks) blocks = slice_blocks;
    if (blocks > FEAT_MAX_BLOCKS) blocks = FEAT_MAX_BLOCKS;
    if (blocks < 1) blocks = 1;
    const int square = m == n;
    if (A->wide)
      feat_kernel<int64_t><<<(unsigned)blocks, FEAT_BLOCK, 0, ctx->stream>>>(
          A->d_row_ptr64, A->d_col, A->d_val, m, nnz, square, want_distinct, d_stat, d_table,
          d_bitmap);
    else
      feat_kernel<int32_t><<<(unsigned)blocks, FEAT_BLOCK, 0, ctx->stream>>>(
          A->d_row_ptr32, A->d_col, A->d_val, m, nnz, square, want_distinct, d_stat, d_table,
          d_bitmap);
    GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "feat_kernel"));
    GS_TRY(GS_CUDA(cudaMemcpyAsync(h_stat, d_stat, sizeof h_stat, cudaMemcpyDeviceToHost,
                                   ctx->stream)));
    GS_TRY(GS_CUDA(cudaStreamSynchronize(ctx->stream)));
  }
  {
    gs_features_raw_t r;
    gs_features_t gg;
    memset(&r, 0, sizeof r);
    r.m = A->m;
    r.n = A->n;
    r.nnz = A->nnz;
    r.symmetry = stored;
    r.row_max = (gs_off_t)h_stat[S_ROW_MAX];
    r.row_min = m > 0 ? (gs_off_t)h_stat[S_ROW_MIN] : 0;
    r.empty_rows = (int64_t)h_stat[S_EMPTY];
    r.sumsq_lo = h_stat[S_SQ_LO];
    r.sumsq_hi = h_stat[S_SQ_HI];
    r.diagonals = (int64_t)h_stat[S_DIAGONALS];
    if (m == n) {
      const u64 fl = h_stat[S_FLAGS];
      const int all_diag = h_stat[S_DIAG_ROWS] == (u64)n;
      r.structurally_symmetric = !(fl & F_PATTERN);
      r.diagonal_full = all_diag && !(fl & F_DIAG_ZERO);
      r.diagonal_positive = all_diag && !(fl & F_DIAG_NONPOS);
      r.finite = !(fl & F_NONFINITE);
      memcpy(&r.amax, &h_stat[S_AMAX], sizeof r.amax);
      memcpy(&r.dmax, &h_stat[S_DMAX], sizeof r.dmax);
    }
    gs_features_finish(&r, g ? g : &gg); /* in place: every byte written, padding too */
    if (f) {
      u64 dv = h_stat[S_DISTINCT] + (h_stat[S_ONES] ? 1 : 0);
      if (h_stat[S_OVER] || dv > (u64)GS_SELECT_DISTINCT_CAP) dv = GS_SELECT_DISTINCT_CAP + 1;
      gs_select_features_fill(g ? g : &gg, A->m, A->nnz, (int64_t)h_stat[S_SELL_USED],
                              (int64_t)h_stat[S_SELL_TOTAL], (gs_off_t)dv, f);
    }
  }
cleanup:
  if (st != GS_SUCCESS) {
    if (d_buf) cudaStreamSynchronize(ctx->stream); /* the kernel is done with it */
    if (g) memset(g, 0, sizeof *g);
    if (f) memset(f, 0, sizeof *f);
  }
  gs_dfree(ctx, d_buf);
  return st;
}
