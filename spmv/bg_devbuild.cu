/* spmv/bg_devbuild.cu: the ELL, COO and HYB layouts built on the GPU from the shared device CSR
 * (Bell & Garland, SC09, sections 3.2, 3.4, 3.5), byte-identical to the host builders of
 * ell_build.c, coo_build.c and hyb_build.c after gs_ell_dev_upload / gs_coo_dev_upload.
 *
 * Passes (every one a bandwidth-bound transform on ctx->stream, 256 threads a block):
 *   row_stats_kernel   one pass over the row pointers: the longest row and, for HYB's width,
 *                      the row-length histogram (merged above the largest length the rule can
 *                      pick). Reductions run on a grid of 8 blocks per SM (grid-stride), so that
 *                      the per-block atomics into the few global counters stay a few thousand.
 *   ell_slab_kernel    every slot of the pitch x K column-major slab written exactly once, no
 *                      memset: a thread covers one row and a chunk of 8 slots, consecutive
 *                      threads consecutive rows, so a warp's stores are 32 consecutive slots.
 *   tail_count_kernel  + cub::DeviceScan::ExclusiveSum: the row offsets of a row tail (HYB's
 *                      COO part, entries past position K of each row); the plain COO reads the
 *                      CSR's own row pointers instead.
 *   coo_heads_kernel   + cub::DeviceScan::InclusiveScan(max): the COO row array. Each row with
 *                      a tail writes its number at its first entry into a zeroed array; the max
 *                      scan spreads it over the row's entries (rows increase along the array).
 *                      One thread per entry for the scan, so a huge row costs what its entries
 *                      cost, never one thread walking it.
 *   coo_copy_kernel    one thread per COO entry: its column and value (rounded to nearest float
 *                      with __double2float_rn in mixed and float precision, as the host's
 *                      (float) cast), and a 0/1 byte per column it touches.
 *   count_marks_kernel the touched columns (popcounts of the byte flags).
 * Host reads: the longest row (ELL: the fill check before anything is allocated), HYB's
 *   histogram (bins up to ~3x the mean row length), a tail's entry count (to size the arrays),
 *   rows_touched and cols_touched (the byte model); each with one stream sync.
 * Assumes a narrow matrix (d_row_ptr32, nnz <= INT32_MAX: the three backends are not WIDE) whose
 * rows are sorted, as the host CSR they were uploaded from. */
#include <stdlib.h>
#include <string.h>

#include <cub/device/device_scan.cuh>

#include "core/error.h"
#include "spmv/bg_devbuild.h"
#include "spmv/common_kernels.h"
#include "spmv/device_util.cuh"

#define BLOCK GS_FMT_BLOCK
#define FULL_MASK 0xffffffffu
#define HIST_SHARED_BINS 12000 /* shared counters within 48 KiB: no opt-in needed */
#define SLAB_CHUNK 8           /* ELL slots per thread of ell_slab_kernel */

/* hyb_build.c's rule (HYB_BREAKEVEN_ROWS, HYB_RELATIVE_SPEED): the K-th ELL column pays when at
 * least T = max(4096, m/3) rows have K or more entries. Used here only to bound the histogram:
 * at most min(m, nnz / K) rows have K or more entries, so no K > nnz / T (no K >= 1 when
 * m < T) qualifies and the bins above it can be merged. Should the rule change, gs_bg_hyb_width sees K reach the merged bin
 * and counts again exactly, so a stale bound costs time, never a different K. */
#define HYB_RULE_MIN_ROWS 4096
#define HYB_RULE_FRACTION 3

/* ---- device helpers ---------------------------------------------------------------------- */

struct max_op {
  __host__ __device__ __forceinline__ int operator()(int a, int b) const { return a > b ? a : b; }
};

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

/* A CSR value into the layout's value type: exact for double, rounded to nearest for float
 * (the host's (float) cast, gs_fmt_round_values). */
static __device__ __forceinline__ void store_val(double *d, double v) { *d = v; }
static __device__ __forceinline__ void store_val(float *d, double v) { *d = __double2float_rn(v); }

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
 * alignment rows m..pitch-1). Item w is row i = w mod pitch and the slots of chunk w / pitch
 * (SLAB_CHUNK of them): a warp's stores at one k are 32 consecutive slots (coalesced), a wide K
 * spreads over many threads, and every slot is written exactly once. */
template <typename Val>
static __global__ void __launch_bounds__(BLOCK)
ell_slab_kernel(int m, long long pitch, int K, long long items, const int *__restrict__ rp,
                const int *__restrict__ col, const double *__restrict__ val,
                int *__restrict__ ecol, Val *__restrict__ eval)
{
  GS_GRID_STRIDE(w, items) {
    const int64_t i = w % pitch;
    const int k0 = (int)(w / pitch) * SLAB_CHUNK;
    const int k1 = K - k0 < SLAB_CHUNK ? K : k0 + SLAB_CHUNK;
    int64_t p = 0;
    int len = 0;
    if (i < m) {
      p = __ldg(rp + i);
      len = __ldg(rp + i + 1) - (int)p;
    }
    for (int k = k0; k < k1; ++k) {
      const int64_t s = (int64_t)k * pitch + i;
      if (k < len) {
        ecol[s] = __ldg(col + p + k);
        store_val(eval + s, __ldg(val + p + k));
      } else {
        ecol[s] = GS_ELL_PAD;
        eval[s] = Val(0);
      }
    }
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

/* Row heads of the COO row array (section 3.4: entries row-major): a row with entries in the
 * tail (off[i] < off[i+1]) writes its number at its first entry of the zeroed array; the
 * inclusive max scan that follows fills each row's entries with it (rows with entries have
 * distinct, increasing offsets: no two heads collide, and row numbers increase along the
 * array). Counts those rows (rows_touched) into *touched, one atomic per block. */
static __global__ void __launch_bounds__(BLOCK)
coo_heads_kernel(int m, const int *__restrict__ off, int *__restrict__ row, unsigned *touched)
{
  unsigned c = 0;
  GS_GRID_STRIDE(i, m) {
    const int a = __ldg(off + i);
    if (a < __ldg(off + i + 1)) {
      row[a] = (int)i;
      ++c;
    }
  }
  c = block_reduce<false>(c);
  if (threadIdx.x == 0 && c) atomicAdd(touched, c);
}

/* One thread per COO entry q (coo_build.c's loop): its CSR position p (q itself for the whole
 * matrix; row r's start + skip + q's place in r's tail otherwise, off the tail's offsets), its
 * column and value copied (coalesced reads and writes: a row's tail is contiguous on both
 * sides), and its column marked in seen (bytes set to 1, read first so that a column hit again
 * costs no store; concurrent stores write the same value). */
template <typename Val>
static __global__ void __launch_bounds__(BLOCK)
coo_copy_kernel(int nnz, int skip, const int *__restrict__ rp, const int *__restrict__ off,
                const int *__restrict__ row, const int *__restrict__ col,
                const double *__restrict__ val, int *__restrict__ ocol, Val *__restrict__ oval,
                unsigned char *seen)
{
  GS_GRID_STRIDE(q, nnz) {
    int64_t p = q;
    if (skip > 0) {
      const int r = row[q];
      p = (int64_t)__ldg(rp + r) + skip + (q - __ldg(off + r));
    }
    const int c = __ldg(col + p);
    ocol[q] = c;
    store_val(oval + q, __ldg(val + p));
    if (!seen[c]) seen[c] = 1;
  }
}

/* Number of bytes set to 1 in a 0/1 byte array read as `words` 32-bit words (the popcount of
 * a word is its number of 1 bytes); one atomic per block. */
static __global__ void __launch_bounds__(BLOCK)
count_marks_kernel(int64_t words, const unsigned *__restrict__ marks, unsigned *count)
{
  unsigned c = 0;
  GS_GRID_STRIDE(w, words) c += (unsigned)__popc(__ldg(marks + w));
  c = block_reduce<false>(c);
  if (threadIdx.x == 0 && c) atomicAdd(count, c);
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
  GS_TRY(gs_dmalloc(ctx, (void **)&d_scal, sizeof(unsigned), "longest row"));
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
  GS_TRY(gs_dmalloc(ctx, (void **)&d_buf, (bins + 1) * sizeof(unsigned), "HYB row histogram"));
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
  GS_TRY(gs_dmalloc(ctx, (void **)&D->d_col, slots * sizeof(gs_idx_t), "ELL columns"));
  if (rounded)
    GS_TRY(gs_dmalloc(ctx, (void **)&D->d_valf, slots * sizeof(float), "ELL values"));
  else
    GS_TRY(gs_dmalloc(ctx, (void **)&D->d_val, slots * sizeof(gs_val_t), "ELL values"));
  if (slots > 0) {
    const int64_t items = D->pitch * (((int64_t)K + SLAB_CHUNK - 1) / SLAB_CHUNK);
    const unsigned g = gs_grid_blocks(items, BLOCK);
    if (rounded)
      ell_slab_kernel<float><<<g, BLOCK, 0, ctx->stream>>>(
          A->m, D->pitch, K, items, A->d_row_ptr32, A->d_col, A->d_val, D->d_col, D->d_valf);
    else
      ell_slab_kernel<double><<<g, BLOCK, 0, ctx->stream>>>(
          A->m, D->pitch, K, items, A->d_row_ptr32, A->d_col, A->d_val, D->d_col, D->d_val);
    GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "ell_slab_kernel"));
  }
  D->bytes = slots * (sizeof(gs_idx_t) + D->val_bytes);
cleanup:
  if (st != GS_SUCCESS) gs_ell_dev_free(D);
  return st;
}

/* Bytes rounded up to 256, the alignment of the pieces of one work buffer (cudaMalloc's). */
static size_t align256(size_t bytes) { return (bytes + 255) / 256 * 256; }

extern "C" gs_status_t gs_bg_coo_build(gs_context_t *ctx, const gs_dcsr_t *A, gs_idx_t skip,
                                       gs_idx_t max_len, int float_values, gs_coo_dev_t *D)
{
  gs_status_t st = GS_SUCCESS;
  unsigned char *work = NULL; /* one buffer: counters | tail offsets | scan storage | marks */
  memset(D, 0, sizeof *D);
  D->ctx = ctx;
  D->m = A->m;
  D->n = A->n;
  if (A->m > 0 && A->nnz > 0 && !(max_len >= 0 && skip >= max_len)) {
    cudaStream_t s = ctx->stream;
    const int64_t rows1 = (int64_t)A->m + 1;
    const size_t words = ((size_t)A->n + 3) / 4; /* one 0/1 byte per column, whole words */
    size_t scan_off = 0, scan_rows = 0;
    /* CUB's storage for both scans, the row scan sized for all of A's entries (a tail has no
     * more; a scan accepts more storage than it asks for) */
    if (skip > 0)
      GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(NULL, scan_off, (int *)NULL, (int *)NULL,
                                                   rows1, s)));
    GS_TRY(GS_CUDA(cub::DeviceScan::InclusiveScan(NULL, scan_rows, (int *)NULL, (int *)NULL,
                                                  max_op(), (int)A->nnz, s)));
    size_t tmp_bytes = scan_off > scan_rows ? scan_off : scan_rows;
    if (tmp_bytes == 0) tmp_bytes = 1; /* never NULL: NULL storage is CUB's size query */
    const size_t o_off = 256, o_tmp = o_off + (skip > 0 ? align256((size_t)rows1 * sizeof(int)) : 0),
                 o_seen = o_tmp + align256(tmp_bytes), total = o_seen + words * sizeof(unsigned);
    GS_TRY(gs_dmalloc(ctx, (void **)&work, total, "COO build work"));
    unsigned *d_scal = (unsigned *)work; /* rows_touched, cols_touched */
    void *d_tmp = work + o_tmp;
    unsigned *d_seen = (unsigned *)(work + o_seen);
    const int *off = A->d_row_ptr32; /* skip = 0: the tail is the whole CSR */
    int64_t nnz = A->nnz;
    if (skip > 0) { /* the tail's row offsets and entry count */
      int *d_off = (int *)(work + o_off);
      int h_total = 0;
      tail_count_kernel<<<gs_grid_blocks(rows1, BLOCK), BLOCK, 0, s>>>(A->m, A->d_row_ptr32,
                                                                        skip, d_off);
      GS_TRY(GS_CHECK_LAUNCH(s, "tail_count_kernel"));
      GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(d_tmp, tmp_bytes, d_off, d_off, rows1, s)));
      GS_TRY(read_back(ctx, &h_total, d_off + A->m, sizeof h_total));
      off = d_off;
      nnz = h_total;
    }
    D->nnz = (gs_idx_t)nnz;
    if (nnz > 0) {
      unsigned h_scal[2] = {0, 0};
      GS_TRY(gs_dmalloc(ctx, (void **)&D->d_row, (size_t)nnz * sizeof(gs_idx_t), "COO rows"));
      GS_TRY(gs_dmalloc(ctx, (void **)&D->d_col, (size_t)nnz * sizeof(gs_idx_t), "COO columns"));
      if (float_values)
        GS_TRY(gs_dmalloc(ctx, (void **)&D->d_valf, (size_t)nnz * sizeof(float), "COO values"));
      else
        GS_TRY(gs_dmalloc(ctx, (void **)&D->d_val, (size_t)nnz * sizeof(gs_val_t),
                          "COO values"));
      GS_TRY(GS_CUDA(cudaMemsetAsync(D->d_row, 0, (size_t)nnz * sizeof(gs_idx_t), s)));
      GS_TRY(GS_CUDA(cudaMemsetAsync(d_scal, 0, 2 * sizeof(unsigned), s)));
      GS_TRY(GS_CUDA(cudaMemsetAsync(d_seen, 0, words * sizeof(unsigned), s)));
      coo_heads_kernel<<<reduce_blocks(ctx, A->m), BLOCK, 0, s>>>(A->m, off, D->d_row, d_scal);
      GS_TRY(GS_CHECK_LAUNCH(s, "coo_heads_kernel"));
      GS_TRY(GS_CUDA(cub::DeviceScan::InclusiveScan(d_tmp, tmp_bytes, D->d_row, D->d_row,
                                                    max_op(), (int)nnz, s)));
      const unsigned g = gs_grid_blocks(nnz, BLOCK);
      if (float_values)
        coo_copy_kernel<float><<<g, BLOCK, 0, s>>>((int)nnz, skip, A->d_row_ptr32, off,
                                                   D->d_row, A->d_col, A->d_val, D->d_col,
                                                   D->d_valf, (unsigned char *)d_seen);
      else
        coo_copy_kernel<double><<<g, BLOCK, 0, s>>>((int)nnz, skip, A->d_row_ptr32, off,
                                                    D->d_row, A->d_col, A->d_val, D->d_col,
                                                    D->d_val, (unsigned char *)d_seen);
      GS_TRY(GS_CHECK_LAUNCH(s, "coo_copy_kernel"));
      count_marks_kernel<<<reduce_blocks(ctx, (int64_t)words), BLOCK, 0, s>>>(
          (int64_t)words, d_seen, d_scal + 1);
      GS_TRY(GS_CHECK_LAUNCH(s, "count_marks_kernel"));
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
