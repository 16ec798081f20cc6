/* spmv/bg_devbuild.cu: the ELL, COO and HYB layouts built on the GPU from the shared device CSR
 * (Bell & Garland, SC09, sections 3.2, 3.4, 3.5), byte-identical to the host builders of
 * ell_build.c, coo_build.c and hyb_build.c after gs_ell_dev_upload / gs_coo_dev_upload.
 *
 * Passes (bandwidth-bound transforms on ctx->stream). Bytes are for lap27_100 (27-point
 * Laplacian on 100^3: m = 1M, nnz = 26.46M, K = 27; col 106 MB, val 212 MB, row pointers 4 MB),
 * double values; the measured builds are in docs/formats.md ("Layouts built on the GPU"):
 *   row_stats_kernel   one pass over the row pointers (4 MB, a few us): the longest row and, for
 *                      HYB's width, the row-length histogram (merged above the largest length
 *                      the rule can pick). Reductions run on a grid of 8 blocks per SM
 *                      (grid-stride), so that the per-block atomics stay a few thousand.
 *   ell_slab_kernel    a warp a tile of 32 rows (spmv/csr_tile.cuh): the tile's col/val staged
 *                      in shared memory by coalesced loads, then every slot of the pitch x K
 *                      column-major slab written exactly once (no memset), 32 consecutive
 *                      slots a store. Reads CSR 318 MB, writes 324 MB (the former
 *                      thread-per-row walk read col/val 27 entries apart across a warp: 32
 *                      sectors a load).
 *   gs_chunk_rows_kernel  the row of every 1024th COO entry (reads 4 MB, writes 100 KB).
 *   coo_rows_kernel    the whole matrix's COO (the coo backend; HYB with K = 0): its entries
 *                      are the CSR's in CSR order, so the layout borrows the shared CSR's col
 *                      and val (gs_coo_dev_t.borrowed) and this pass writes only the row of
 *                      each entry, 4 entries a thread (one binary search between the rows of
 *                      its chunk, then a walk; a 16-byte store). Writes 106 MB, reads the row
 *                      pointers (4 MB). In mixed and float precision it also rounds the
 *                      values into coo's own float array (reads 212 MB, writes 106 MB: the
 *                      shared CSR keeps no float copy to borrow). rows_touched and
 *                      cols_touched come from the features when the pattern is symmetric
 *                      (gs_coo_touched_from_features), else are counted here (col read,
 *                      106 MB, into a 1-bit-a-column map). Replaces a fill kernel that copied
 *                      col and val too (318 MB read, 424 MB written, a 404 MB allocation).
 *   tail_count_kernel  + cub::DeviceScan::ExclusiveSum: the row offsets of a row tail (HYB's
 *                      COO part, entries past position K of each row; 8 MB).
 *   coo_fill_kernel    a tail's COO, one thread per entry: its row by a binary search between
 *                      the rows of its chunk (L1 hits), then row, column and value written to
 *                      arrays of its own and its column's bit set; rows_touched and
 *                      cols_touched counted on the way.
 * Host round trips (each a stream sync): the longest row (ELL: the fill check comes before
 * anything is allocated), HYB's histogram, a tail's entry count (to size the arrays), and one
 * 8-byte read of rows_touched and cols_touched where they are counted (the byte model; none
 * for the whole matrix of a symmetric pattern). gs_dmalloc waits for the stream,
 * so every allocation comes before the passes that follow it are queued.
 * Assumes a narrow matrix (d_row_ptr32, nnz <= INT32_MAX: the three backends are not WIDE) whose
 * rows are sorted, as the host CSR they were uploaded from. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cub/device/device_scan.cuh>

#include "core/error.h"
#include "spmv/bg_devbuild.h"
#include "spmv/common_kernels.h"
#include "spmv/csr_tile.cuh"
#include "spmv/device_util.cuh"

#define BLOCK GS_FMT_BLOCK
#define FULL_MASK 0xffffffffu
#define HIST_SHARED_BINS 12000 /* shared counters within 48 KiB: no opt-in needed */

/* hyb_build.c's rule (HYB_BREAKEVEN_ROWS, HYB_RELATIVE_SPEED): the K-th ELL column pays when at
 * least T = max(4096, m/3) rows have K or more entries. Used here only to bound the histogram:
 * at most min(m, nnz / K) rows have K or more entries, so no K > nnz / T (no K >= 1 when
 * m < T) qualifies and the bins above it can be merged. Should the rule change, gs_bg_hyb_width sees K reach the merged bin
 * and counts again exactly, so a stale bound costs time, never a different K. */
#define HYB_RULE_MIN_ROWS 4096
#define HYB_RULE_FRACTION 3

/* ---- device helpers ---------------------------------------------------------------------- */

/* Sum or maximum of one unsigned per thread over the block (blockDim.x == BLOCK); the result is
 * valid in thread 0. Every thread of the block must call it, once per kernel. */
template <bool MAX>
static __device__ unsigned block_reduce(unsigned v)
{
  __shared__ unsigned part[BLOCK / 32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) {
    const unsigned o = __shfl_down_sync(FULL_MASK, v, d);
    v = MAX ? (o > v ? o : v) : v + o;
  }
  if (lane == 0) part[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < BLOCK / 32 ? part[lane] : 0u; /* 0: the identity of both (values are >= 0) */
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) {
      const unsigned o = __shfl_down_sync(FULL_MASK, v, d);
      v = MAX ? (o > v ? o : v) : v + o;
    }
  }
  return v;
}

/* ---- kernels ----------------------------------------------------------------------------- */

/* Row lengths of the CSR (HYB's histogram, section 3.5; ELL's K, section 3.2): *max_len gets the
 * longest row (a block maximum, one atomicMax per block) and, with hist set, hist[b] the rows
 * of length b for b < top and of length >= top for b = top. A warp walks 32 consecutive rows
 * at a time (the trip count is the same for all its lanes: the shuffles and the match see full
 * warps); lanes of equal bin add their count once (__match_any_sync), into a shared copy of the
 * bins when SHARED (top + 1 <= HIST_SHARED_BINS, dynamic shared memory; added to hist at the
 * end, nonzero bins only) or straight into hist. Integer counts: the order of the atomics does
 * not matter. */
template <bool SHARED>
static __global__ void __launch_bounds__(BLOCK)
row_stats_kernel(int m, const int *__restrict__ rp, int top, unsigned *max_len, unsigned *hist)
{
  extern __shared__ unsigned sh_hist[];
  if (SHARED) {
    for (int b = threadIdx.x; b <= top; b += blockDim.x) sh_hist[b] = 0u;
    __syncthreads();
  }
  const int lane = threadIdx.x & 31;
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  unsigned mx = 0;
  for (int64_t base = (int64_t)blockIdx.x * blockDim.x + threadIdx.x - lane; base < m;
       base += stride) {
    const int64_t i = base + lane;
    int len = -1; /* lanes past the last row */
    if (i < m) {
      len = __ldg(rp + i + 1) - __ldg(rp + i);
      if ((unsigned)len > mx) mx = (unsigned)len;
    }
    if (hist) {
      const int bin = len < 0 ? -1 : (len < top ? len : top);
      const unsigned peers = __match_any_sync(FULL_MASK, bin);
      if (bin >= 0 && lane == __ffs(peers) - 1) {
        if (SHARED) atomicAdd(sh_hist + bin, (unsigned)__popc(peers));
        else atomicAdd(hist + bin, (unsigned)__popc(peers));
      }
    }
  }
  mx = block_reduce<true>(mx); /* its __syncthreads also orders the shared counts */
  if (threadIdx.x == 0 && mx > 0) atomicMax(max_len, mx);
  if (SHARED) {
    __syncthreads();
    for (int b = threadIdx.x; b <= top; b += blockDim.x)
      if (sh_hist[b]) atomicAdd(hist + b, sh_hist[b]);
  }
}

/* The ELL slab (section 3.2, gs_ell_layout_build_k): slot k of row i, at k*pitch + i, holds
 * entry k of row i when k < min(length, K), else GS_ELL_PAD and 0 (so do all slots of the
 * alignment rows m..pitch-1). A warp a tile of 32 rows (spmv/csr_tile.cuh): the tile's entries
 * staged in shared memory by coalesced loads (flat when the tile's range fits 32 * kc entries,
 * which every tile of a plain ELL does for K <= 32; else up to kc entries of each row at a time,
 * the first min(length, K) only), then lane = row writes its slots column by column: each store
 * is 32 consecutive slots, every slot written exactly once, no memset. */
template <typename Val>
static __global__ void __launch_bounds__(256)
ell_slab_kernel(int m, long long pitch, int K, int kc, const int *__restrict__ rp,
                const int *__restrict__ col, const double *__restrict__ val,
                int *__restrict__ ecol, Val *__restrict__ eval)
{
  extern __shared__ __align__(16) unsigned char ell_smem[];
  Val *s_val;
  int *s_col;
  gs_tile_buffers(ell_smem, gs_tile_slots(kc), &s_val, &s_col);
  const int lane = threadIdx.x & 31, cap = gs_tile_cap(kc), stride = gs_tile_stride(kc);
  const int64_t tiles = pitch >> 5; /* the pitch is a multiple of 32: a tile's first row < m */
  for (int64_t t = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; t < tiles;
       t += ((int64_t)gridDim.x * blockDim.x) >> 5) {
    const int64_t i = (t << 5) + lane;
    const int beg = __ldg(rp + (i < m ? i : m));
    const int len = i < m ? __ldg(rp + i + 1) - beg : 0;
    const int use = len < K ? len : K;
    const int a = __shfl_sync(FULL_MASK, beg, 0), b = __shfl_sync(FULL_MASK, beg + len, 31);
    if (b - a <= cap) { /* flat: the whole range, entry q of it at gs_tile_skew(q) */
      gs_tile_stage_flat(a, b - a, col, val, s_col, s_val);
      __syncwarp();
      const int rel = beg - a;
      for (int k = 0; k < K; ++k) {
        const int64_t s = (int64_t)k * pitch + i;
        if (k < use) {
          ecol[s] = s_col[gs_tile_skew(rel + k)];
          eval[s] = s_val[gs_tile_skew(rel + k)];
        } else {
          ecol[s] = GS_ELL_PAD;
          eval[s] = Val(0);
        }
      }
    } else { /* pieces: slots k0 .. k0 + kc - 1 of every row at a time */
      for (int k0 = 0; k0 < K; k0 += kc) {
        const int left = use - k0;
        gs_tile_stage_pieces(__ballot_sync(FULL_MASK, left > 0), (int64_t)beg + k0,
                             left < kc ? left : kc, stride, col, val, s_col, s_val);
        __syncwarp();
        const int k1 = K - k0 < kc ? K : k0 + kc;
        for (int k = k0; k < k1; ++k) {
          const int64_t s = (int64_t)k * pitch + i;
          if (k < use) {
            ecol[s] = s_col[lane * stride + (k - k0)];
            eval[s] = s_val[lane * stride + (k - k0)];
          } else {
            ecol[s] = GS_ELL_PAD;
            eval[s] = Val(0);
          }
        }
        __syncwarp(); /* read before the next pieces overwrite them */
      }
    }
    __syncwarp(); /* the next tile's staging overwrites the buffer */
  }
}

/* Entries of each row past position skip (HYB's COO part, section 3.5): cnt[i] =
 * max(length - skip, 0) for i < m and cnt[m] = 0, so that the exclusive scan of the m + 1
 * counts gives the tail's row offsets and its entry count. */
static __global__ void __launch_bounds__(BLOCK)
tail_count_kernel(int m, const int *__restrict__ rp, int skip, int *__restrict__ cnt)
{
  GS_GRID_STRIDE(i, (int64_t)m + 1) {
    int t = 0;
    if (i < m) {
      t = __ldg(rp + i + 1) - __ldg(rp + i) - skip;
      if (t < 0) t = 0;
    }
    cnt[i] = t;
  }
}

/* Sums of two counters over the block (blockDim.x == BLOCK), valid in thread 0. */
static __device__ void block_sum2(unsigned *a, unsigned *b)
{
  __shared__ unsigned part[2][BLOCK / 32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  unsigned x = *a, y = *b;
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) {
    x += __shfl_down_sync(FULL_MASK, x, d);
    y += __shfl_down_sync(FULL_MASK, y, d);
  }
  if (lane == 0) {
    part[0][warp] = x;
    part[1][warp] = y;
  }
  __syncthreads();
  if (warp == 0) {
    x = lane < BLOCK / 32 ? part[0][lane] : 0u;
    y = lane < BLOCK / 32 ? part[1][lane] : 0u;
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) {
      x += __shfl_down_sync(FULL_MASK, x, d);
      y += __shfl_down_sync(FULL_MASK, y, d);
    }
  }
  *a = x;
  *b = y;
}

/* A row tail's COO layout in one pass (coo_build.c's loop; HYB's part, called with skip > 0
 * only: the whole matrix borrows the CSR's arrays, coo_rows_kernel), one thread per COO entry
 * q: its row r (off[r] <= q < off[r+1], off = the tail's offsets) found by gs_row_of, its CSR
 * position p (r's start + skip + q's place in r's tail; the kernel's `q` branch for skip = 0
 * is left from the whole-matrix build, unused), and row, column and value
 * (rounded to nearest float in mixed and float precision, as the host's (float) cast) written.
 * Reads and writes are coalesced: consecutive q are consecutive p within a row. Counts into
 * scal[0] the rows whose first tail entry q is (rows_touched) and into scal[1] the columns whose
 * bit q sets first in the bitmap (cols_touched: the bit is read first, so a column hit again
 * costs no atomic; of racing setters only one sees the bit clear in atomicOr's old value). */
template <typename Val>
static __global__ void __launch_bounds__(BLOCK)
coo_fill_kernel(int64_t nnz, int m, int skip, const int *__restrict__ rp,
                const int *__restrict__ off, const int *__restrict__ chunk_row, int64_t chunks,
                const int *__restrict__ col, const double *__restrict__ val,
                int *__restrict__ orow, int *__restrict__ ocol, Val *__restrict__ oval,
                unsigned *bits, unsigned *scal)
{
  unsigned rows = 0, cols = 0;
  GS_GRID_STRIDE(q, nnz) {
    const int r = gs_row_of(q, off, chunk_row, chunks, m);
    const int o = __ldg(off + r);
    rows += q == o;
    const int64_t p = skip > 0 ? (int64_t)__ldg(rp + r) + skip + (q - o) : q;
    const int c = __ldg(col + p);
    orow[q] = r;
    ocol[q] = c;
    oval[q] = gs_tile_val<Val>(__ldg(val + p));
    unsigned *w = bits + (c >> 5);
    const unsigned bit = 1u << (c & 31);
    if (!(*w & bit) && !(atomicOr(w, bit) & bit)) ++cols;
  }
  block_sum2(&rows, &cols);
  if (threadIdx.x == 0) {
    if (rows) atomicAdd(scal, rows);
    if (cols) atomicAdd(scal + 1, cols);
  }
}

/* Entries a thread of coo_rows_kernel: its rows (and rounded values) stored as one 16-byte
 * vector, 512 consecutive bytes a warp store. */
#define ROWS_GROUP 4

/* The whole matrix's COO on the shared CSR (gs_bg_coo_build_shared): the row of every entry q
 * (rp[r] <= q < rp[r+1]), its column and double value being the CSR's own, borrowed. A thread
 * a group of ROWS_GROUP consecutive entries: the row of the first by gs_row_of, each next one
 * the same row or the next (a new search when the next is empty too, so that a run of empty
 * rows costs one search, not a walk); the group stored as one int4 when whole and `vec` (the
 * output arrays 16-byte aligned), else entry by entry. VALF: the group's values rounded to
 * float too (gs_tile_val, the host's (float) cast: mixed and float precision). COUNT: into
 * scal[0] the entries that start their row (rows_touched) and into scal[1] the columns whose bit
 * the entry sets first in the bitmap (cols_touched, as coo_fill_kernel); only then is col read.
 * Bytes on lap27: row pointers 4 MB (L1/L2), rows 106 MB written; COUNT reads col (106 MB),
 * VALF reads val (212 MB) and writes 106 MB. */
template <bool COUNT, bool VALF>
static __global__ void __launch_bounds__(BLOCK)
coo_rows_kernel(int64_t nnz, int m, const int *__restrict__ rp, const int *__restrict__ chunk_row,
                int64_t chunks, const int *__restrict__ col, const double *__restrict__ val,
                int vec, int *__restrict__ orow, float *__restrict__ ovalf, unsigned *bits,
                unsigned *scal)
{
  unsigned rows = 0, cols = 0;
  GS_GRID_STRIDE(g, (nnz + ROWS_GROUP - 1) / ROWS_GROUP) {
    const int64_t q0 = g * ROWS_GROUP;
    const int cnt = nnz - q0 < ROWS_GROUP ? (int)(nnz - q0) : ROWS_GROUP;
    int r = gs_row_of(q0, rp, chunk_row, chunks, m);
    int beg = __ldg(rp + r), end = __ldg(rp + r + 1);
    int rr[ROWS_GROUP];
    float vf[ROWS_GROUP];
#pragma unroll
    for (int k = 0; k < ROWS_GROUP; ++k) {
      rr[k] = 0;
      vf[k] = 0.0f;
      if (k >= cnt) continue;
      const int64_t q = q0 + k;
      if (q >= end) { /* q < nnz = rp[m]: row r + 1 < m exists */
        ++r;
        beg = end;
        end = __ldg(rp + r + 1);
        if (q >= end) { /* r was empty: search again */
          r = gs_row_of(q, rp, chunk_row, chunks, m);
          beg = __ldg(rp + r);
          end = __ldg(rp + r + 1);
        }
      }
      rr[k] = r;
      if (COUNT) {
        rows += q == beg;
        const int c = __ldg(col + q);
        unsigned *w = bits + (c >> 5);
        const unsigned bit = 1u << (c & 31);
        if (!(*w & bit) && !(atomicOr(w, bit) & bit)) ++cols;
      }
      if (VALF) vf[k] = gs_tile_val<float>(__ldg(val + q));
    }
    if (vec && cnt == ROWS_GROUP) {
      reinterpret_cast<int4 *>(orow)[g] = make_int4(rr[0], rr[1], rr[2], rr[3]);
      if (VALF) reinterpret_cast<float4 *>(ovalf)[g] = make_float4(vf[0], vf[1], vf[2], vf[3]);
    } else {
      for (int k = 0; k < cnt; ++k) {
        orow[q0 + k] = rr[k];
        if (VALF) ovalf[q0 + k] = vf[k];
      }
    }
  }
  if (COUNT) { /* uniform: every thread of the block reaches the block sum */
    block_sum2(&rows, &cols);
    if (threadIdx.x == 0) {
      if (rows) atomicAdd(scal, rows);
      if (cols) atomicAdd(scal + 1, cols);
    }
  }
}

/* ---- host side --------------------------------------------------------------------------- */

/* Grid of a reduction over `items`: one thread per item up to 8 blocks per SM (a full H100),
 * the grid-stride loops covering the rest, so that the per-block atomics stay few. */
static unsigned reduce_blocks(const gs_context_t *ctx, int64_t items)
{
  const unsigned g = gs_grid_blocks(items, BLOCK);
  const unsigned cap = 8u * (unsigned)(ctx->sm_count > 0 ? ctx->sm_count : 1);
  return g < cap ? g : cap;
}

/* Copies `bytes` from the device to the host on ctx's stream and waits for it. */
static gs_status_t read_back(gs_context_t *ctx, void *h_dst, const void *d_src, size_t bytes)
{
  GS_CHECK(GS_CUDA(cudaMemcpyAsync(h_dst, d_src, bytes, cudaMemcpyDeviceToHost, ctx->stream)));
  return GS_CUDA(cudaStreamSynchronize(ctx->stream));
}

/* row_stats_kernel into d_scal[0] (zeroed here) and, with d_hist (top + 1 counters, zeroed
 * here), the histogram merged at top. */
static gs_status_t row_stats(gs_context_t *ctx, const gs_dcsr_t *A, int top, unsigned *d_scal,
                             unsigned *d_hist)
{
  GS_CHECK(GS_CUDA(cudaMemsetAsync(d_scal, 0, sizeof(unsigned), ctx->stream)));
  if (d_hist)
    GS_CHECK(GS_CUDA(cudaMemsetAsync(d_hist, 0, ((size_t)top + 1) * sizeof(unsigned),
                                     ctx->stream)));
  if (A->m == 0) return GS_SUCCESS;
  const unsigned g = reduce_blocks(ctx, A->m);
  if (d_hist && top < HIST_SHARED_BINS)
    row_stats_kernel<true><<<g, BLOCK, ((size_t)top + 1) * sizeof(unsigned), ctx->stream>>>(
        A->m, A->d_row_ptr32, top, d_scal, d_hist);
  else
    row_stats_kernel<false><<<g, BLOCK, 0, ctx->stream>>>(A->m, A->d_row_ptr32, top, d_scal,
                                                          d_hist);
  return GS_CHECK_LAUNCH(ctx->stream, "row_stats_kernel");
}

extern "C" gs_status_t gs_bg_longest_row(gs_context_t *ctx, const gs_dcsr_t *A,
                                         gs_idx_t *max_len)
{
  gs_status_t st = GS_SUCCESS;
  unsigned *d_scal = NULL, h = 0;
  *max_len = 0;
  if (A->m == 0) return GS_SUCCESS;
  GS_TRY(gs_dmalloc_ordered(ctx, (void **)&d_scal, sizeof(unsigned), "longest row"));
  GS_TRY(row_stats(ctx, A, 0, d_scal, NULL));
  GS_TRY(read_back(ctx, &h, d_scal, sizeof h));
  *max_len = (gs_idx_t)h;
cleanup:
  gs_dfree(ctx, d_scal);
  return st;
}

/* The histogram merged at `top`, run through gs_hyb_k_rule (hyb_build.c) on the host: the
 * rule reads hist[len] for len < min(longest row, top) only, all exact counts. */
static gs_status_t hyb_rule_k(gs_context_t *ctx, const gs_dcsr_t *A, int top, gs_idx_t *K,
                              gs_idx_t *max_len)
{
  gs_status_t st = GS_SUCCESS;
  unsigned *d_buf = NULL, *h_hist = NULL, h_max = 0;
  int64_t *hist = NULL;
  const size_t bins = (size_t)top + 1;
  GS_TRY(gs_dmalloc_ordered(ctx, (void **)&d_buf, (bins + 1) * sizeof(unsigned),
                            "HYB row histogram"));
  GS_TRY(row_stats(ctx, A, top, d_buf, d_buf + 1));
  h_hist = (unsigned *)malloc(bins * sizeof *h_hist);
  hist = (int64_t *)malloc(bins * sizeof *hist);
  if (!h_hist || !hist)
    GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory for a HYB histogram of %zu bins", bins);
  GS_TRY(GS_CUDA(cudaMemcpyAsync(h_hist, d_buf + 1, bins * sizeof *h_hist,
                                 cudaMemcpyDeviceToHost, ctx->stream)));
  GS_TRY(read_back(ctx, &h_max, d_buf, sizeof h_max));
  *max_len = (gs_idx_t)h_max;
  {
    const gs_idx_t lim = *max_len < top ? *max_len : top;
    for (gs_idx_t b = 0; b <= lim; ++b) hist[b] = (int64_t)h_hist[b];
    *K = gs_hyb_k_rule(A->m, hist, lim);
  }
cleanup:
  free(h_hist);
  free(hist);
  gs_dfree(ctx, d_buf);
  return st;
}

extern "C" gs_status_t gs_bg_hyb_width(gs_context_t *ctx, const gs_dcsr_t *A, int hyb_k,
                                       gs_idx_t *K, gs_idx_t *max_len)
{
  *K = 0;
  *max_len = 0;
  if (A->m == 0) return GS_SUCCESS;
  if (hyb_k >= 0) {
    GS_CHECK(gs_bg_longest_row(ctx, A, max_len));
    *K = hyb_k < *max_len ? hyb_k : *max_len; /* wider than the longest row is only padding */
    return GS_SUCCESS;
  }
  /* the rule's row threshold T and the largest K it can reach (see HYB_RULE_MIN_ROWS) */
  int64_t T = ((int64_t)A->m + HYB_RULE_FRACTION - 1) / HYB_RULE_FRACTION;
  if (T < HYB_RULE_MIN_ROWS) T = HYB_RULE_MIN_ROWS;
  /* the merged bin: lengths > nnz / T (no K that long has T rows), or all lengths >= 1 when
   * m < T (no K >= 1 has T rows) */
  const int top = (int)((A->m < T ? 0 : (int64_t)A->nnz / T) + 1);
  GS_CHECK(hyb_rule_k(ctx, A, top, K, max_len));
  if (*K >= top && top < *max_len) /* the bound did not hold (the rule changed): count exactly */
    GS_CHECK(hyb_rule_k(ctx, A, *max_len, K, max_len));
  return GS_SUCCESS;
}

extern "C" gs_status_t gs_bg_ell_build(gs_context_t *ctx, const gs_dcsr_t *A, gs_idx_t K,
                                       int float_values, gs_ell_dev_t *D)
{
  gs_status_t st = GS_SUCCESS;
  memset(D, 0, sizeof *D);
  D->ctx = ctx;
  D->m = A->m;
  D->n = A->n;
  D->K = K;
  D->pitch = gs_fmt_pitch(A->m);
  const size_t slots = (size_t)D->pitch * (size_t)K;
  /* gs_ell_layout_round leaves a layout without slots in double */
  const int rounded = float_values && slots > 0;
  D->val_bytes = rounded ? sizeof(float) : sizeof(gs_val_t);
  GS_TRY(gs_dmalloc_ordered(ctx, (void **)&D->d_col, slots * sizeof(gs_idx_t), "ELL columns"));
  if (rounded)
    GS_TRY(gs_dmalloc_ordered(ctx, (void **)&D->d_valf, slots * sizeof(float), "ELL values"));
  else
    GS_TRY(gs_dmalloc_ordered(ctx, (void **)&D->d_val, slots * sizeof(gs_val_t), "ELL values"));
  if (slots > 0) {
    const int kc = K < 32 ? (int)K : 32, nslot = gs_tile_slots(kc);
    const int warps = gs_tile_warps(nslot, D->val_bytes);
    const size_t smem = (size_t)warps * (size_t)nslot * (sizeof(int) + D->val_bytes);
    const unsigned g = gs_tile_blocks(D->pitch / 32, warps);
    if (rounded)
      ell_slab_kernel<float><<<g, 32 * warps, smem, ctx->stream>>>(
          A->m, D->pitch, K, kc, A->d_row_ptr32, A->d_col, A->d_val, D->d_col, D->d_valf);
    else
      ell_slab_kernel<double><<<g, 32 * warps, smem, ctx->stream>>>(
          A->m, D->pitch, K, kc, A->d_row_ptr32, A->d_col, A->d_val, D->d_col, D->d_val);
    GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "ell_slab_kernel"));
  }
  D->bytes = slots * (sizeof(gs_idx_t) + D->val_bytes);
cleanup:
  if (st != GS_SUCCESS) gs_ell_dev_free(D);
  return st;
}

/* Bytes rounded up to 256, the alignment of the pieces of one work buffer (cudaMalloc's). */
static size_t align256(size_t bytes) { return (bytes + 255) / 256 * 256; }

/* The COO arrays of a tail's nnz entries (values in float when float_values). */
static gs_status_t coo_arrays(gs_context_t *ctx, int64_t nnz, int float_values, gs_coo_dev_t *D)
{
  GS_CHECK(gs_dmalloc_ordered(ctx, (void **)&D->d_row, (size_t)nnz * sizeof(gs_idx_t), "COO rows"));
  GS_CHECK(gs_dmalloc_ordered(ctx, (void **)&D->d_col, (size_t)nnz * sizeof(gs_idx_t),
                              "COO columns"));
  if (float_values)
    return gs_dmalloc_ordered(ctx, (void **)&D->d_valf, (size_t)nnz * sizeof(float), "COO values");
  return gs_dmalloc_ordered(ctx, (void **)&D->d_val, (size_t)nnz * sizeof(gs_val_t), "COO values");
}

extern "C" gs_status_t gs_bg_coo_build_shared(gs_context_t *ctx, const gs_dcsr_t *A,
                                              gs_idx_t touched, int float_values,
                                              gs_coo_dev_t *D)
{
  gs_status_t st = GS_SUCCESS;
  unsigned char *work = NULL; /* one buffer: counters | bitmap (counting only) | chunk rows */
  memset(D, 0, sizeof *D);
  D->ctx = ctx;
  D->m = A->m;
  D->n = A->n;
  D->nnz = (gs_idx_t)A->nnz;
  /* gs_coo_layout_round leaves a layout without entries in double */
  const int rounded = float_values && A->nnz > 0;
  D->borrowed = 1; /* from here on gs_coo_dev_free leaves col and val to the matrix */
  D->d_col = const_cast<gs_idx_t *>(A->d_col);
  if (!rounded) D->d_val = const_cast<gs_val_t *>(A->d_val);
  if (A->nnz > 0) {
    cudaStream_t s = ctx->stream;
    const int64_t nnz = A->nnz, chunks = gs_chunk_count(nnz);
    const int count = touched < 0;
    const size_t words = count ? ((size_t)A->n + 31) / 32 : 0; /* one bit per column */
    const size_t o_bits = 256, o_chunk = o_bits + align256(words * sizeof(unsigned)),
                 total = o_chunk + (size_t)chunks * sizeof(int);
    /* allocations first, the carries' too (each waits for the stream): the passes then run
     * back to back */
    GS_TRY(gs_dmalloc_ordered(ctx, (void **)&D->d_row, (size_t)nnz * sizeof(gs_idx_t), "COO rows"));
    if (rounded)
      GS_TRY(gs_dmalloc_ordered(ctx, (void **)&D->d_valf, (size_t)nnz * sizeof(float),
                                "COO values"));
    GS_TRY(gs_dmalloc_ordered(ctx, (void **)&work, total, "COO build work"));
    GS_TRY(gs_coo_dev_plan(ctx, D, rounded));
    unsigned *d_scal = (unsigned *)work; /* rows_touched, cols_touched */
    unsigned *d_bits = (unsigned *)(work + o_bits);
    int *d_chunk = (int *)(work + o_chunk);
    if (count) GS_TRY(GS_CUDA(cudaMemsetAsync(work, 0, o_bits + words * sizeof(unsigned), s)));
    gs_chunk_rows_kernel<<<gs_grid_blocks(A->m, 256), 256, 0, s>>>(A->m, A->d_row_ptr32, d_chunk);
    GS_TRY(GS_CHECK_LAUNCH(s, "gs_chunk_rows_kernel"));
    const int vec = ((uintptr_t)D->d_row & 15) == 0 && ((uintptr_t)D->d_valf & 15) == 0;
    const unsigned g = reduce_blocks(ctx, (nnz + ROWS_GROUP - 1) / ROWS_GROUP);
    const int *rp = A->d_row_ptr32, *col = A->d_col;
    const double *val = A->d_val;
    if (count && rounded)
      coo_rows_kernel<true, true><<<g, BLOCK, 0, s>>>(nnz, A->m, rp, d_chunk, chunks, col, val,
                                                      vec, D->d_row, D->d_valf, d_bits, d_scal);
    else if (count)
      coo_rows_kernel<true, false><<<g, BLOCK, 0, s>>>(nnz, A->m, rp, d_chunk, chunks, col, val,
                                                       vec, D->d_row, NULL, d_bits, d_scal);
    else if (rounded)
      coo_rows_kernel<false, true><<<g, BLOCK, 0, s>>>(nnz, A->m, rp, d_chunk, chunks, col, val,
                                                       vec, D->d_row, D->d_valf, NULL, NULL);
    else
      coo_rows_kernel<false, false><<<g, BLOCK, 0, s>>>(nnz, A->m, rp, d_chunk, chunks, col,
                                                        val, vec, D->d_row, NULL, NULL, NULL);
    GS_TRY(GS_CHECK_LAUNCH(s, "coo_rows_kernel"));
    if (count) {
      unsigned h_scal[2] = {0, 0};
      GS_TRY(read_back(ctx, h_scal, d_scal, sizeof h_scal));
      D->rows_touched = (gs_idx_t)h_scal[0];
      D->cols_touched = (gs_idx_t)h_scal[1];
    } else {
      D->rows_touched = D->cols_touched = touched;
    }
  } else {
    GS_TRY(gs_coo_dev_plan(ctx, D, 0)); /* no entries: no warps, no carries */
  }
cleanup:
  gs_dfree(ctx, work);
  if (st != GS_SUCCESS) gs_coo_dev_free(D);
  return st;
}

extern "C" gs_status_t gs_bg_coo_build(gs_context_t *ctx, const gs_dcsr_t *A, gs_idx_t skip,
                                       gs_idx_t max_len, int float_values, gs_coo_dev_t *D)
{
  if (skip <= 0) return gs_bg_coo_build_shared(ctx, A, -1, float_values, D);
  gs_status_t st = GS_SUCCESS;
  unsigned char *work = NULL; /* one buffer: counters | bitmap | chunk rows | tail offsets | scan */
  memset(D, 0, sizeof *D);
  D->ctx = ctx;
  D->m = A->m;
  D->n = A->n;
  if (A->m > 0 && A->nnz > 0 && !(max_len >= 0 && skip >= max_len)) {
    cudaStream_t s = ctx->stream;
    const int64_t rows1 = (int64_t)A->m + 1;
    const size_t words = ((size_t)A->n + 31) / 32; /* one bit per column */
    size_t scan_bytes = 0;
    GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(NULL, scan_bytes, (int *)NULL, (int *)NULL,
                                                 rows1, s)));
    if (scan_bytes == 0) scan_bytes = 1; /* never NULL: NULL storage is CUB's size query */
    /* the chunk map sized for all of A's entries (a tail has no more) */
    const size_t o_bits = 256, o_chunk = o_bits + align256(words * sizeof(unsigned)),
                 o_off = o_chunk + align256((size_t)gs_chunk_count(A->nnz) * sizeof(int)),
                 o_tmp = o_off + align256((size_t)rows1 * sizeof(int)),
                 total = o_tmp + scan_bytes;
    GS_TRY(gs_dmalloc_ordered(ctx, (void **)&work, total, "COO build work"));
    unsigned *d_scal = (unsigned *)work; /* rows_touched, cols_touched */
    unsigned *d_bits = (unsigned *)(work + o_bits);
    int *d_chunk = (int *)(work + o_chunk);
    int *d_off = (int *)(work + o_off);
    int h_total = 0;
    GS_TRY(GS_CUDA(cudaMemsetAsync(work, 0, o_bits + words * sizeof(unsigned), s)));
    /* the tail's row offsets and entry count, then its arrays (each allocation waits for the
     * stream) */
    tail_count_kernel<<<gs_grid_blocks(rows1, BLOCK), BLOCK, 0, s>>>(A->m, A->d_row_ptr32, skip,
                                                                      d_off);
    GS_TRY(GS_CHECK_LAUNCH(s, "tail_count_kernel"));
    GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(work + o_tmp, scan_bytes, d_off, d_off, rows1,
                                                 s)));
    GS_TRY(read_back(ctx, &h_total, d_off + A->m, sizeof h_total));
    const int64_t nnz = h_total;
    if (nnz > 0) GS_TRY(coo_arrays(ctx, nnz, float_values, D));
    D->nnz = (gs_idx_t)nnz;
    if (nnz > 0) {
      unsigned h_scal[2] = {0, 0};
      const int64_t chunks = gs_chunk_count(nnz);
      gs_chunk_rows_kernel<<<gs_grid_blocks(A->m, 256), 256, 0, s>>>(A->m, d_off, d_chunk);
      GS_TRY(GS_CHECK_LAUNCH(s, "gs_chunk_rows_kernel"));
      const unsigned g = reduce_blocks(ctx, nnz);
      if (float_values)
        coo_fill_kernel<float><<<g, BLOCK, 0, s>>>(nnz, A->m, skip, A->d_row_ptr32, d_off,
                                                   d_chunk, chunks, A->d_col, A->d_val, D->d_row,
                                                   D->d_col, D->d_valf, d_bits, d_scal);
      else
        coo_fill_kernel<double><<<g, BLOCK, 0, s>>>(nnz, A->m, skip, A->d_row_ptr32, d_off,
                                                    d_chunk, chunks, A->d_col, A->d_val,
                                                    D->d_row, D->d_col, D->d_val, d_bits, d_scal);
      GS_TRY(GS_CHECK_LAUNCH(s, "coo_fill_kernel"));
      GS_TRY(read_back(ctx, h_scal, d_scal, sizeof h_scal));
      D->rows_touched = (gs_idx_t)h_scal[0];
      D->cols_touched = (gs_idx_t)h_scal[1];
    }
  }
  /* gs_coo_layout_round leaves a layout without entries in double */
  GS_TRY(gs_coo_dev_plan(ctx, D, float_values && D->nnz > 0));
cleanup:
  gs_dfree(ctx, work);
  if (st != GS_SUCCESS) gs_coo_dev_free(D);
  return st;
}
