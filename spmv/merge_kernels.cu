/* spmv/merge_kernels.cu: the `merge` backend, merge-based CSR SpMV (Merrill & Garland,
 * "Merge-based Parallel Sparse Matrix-Vector Multiplication", SC16) on the matrix's shared
 * device CSR; written from the algorithm (spmv/merge.h explains the merge path and its split).
 *
 * Work division: one block of MERGE_THREADS = 128 threads per tile of TILE = 128 * IPT items of
 * the merge path (IPT = 7 by default; 5, 9 and 15 compiled, option merge.ipt; odd, see
 * merge.h), thread t its IPT items. Rows and non-zeros count alike, so a tile does the same
 * work whether it holds one piece of a long row or a thousand empty rows.
 * Prepare (merge_tiles_kernel, timed, shown by describe): the row coordinate of each tile
 * boundary by a bounded binary search along its diagonal in row_ptr, one thread per boundary:
 * ntiles + 1 row indices, the only preprocessing (the paper runs this search before every
 * product; the matrix does not change between ours, so it runs once). On the GPU from the
 * shared CSR; build=host runs the same search on the host (gs_merge_search_host) and uploads.
 * op N, one tile (merge_spmv_kernel):
 *  1. Staging: the tile's non-zeros [nz_start, nz_end) are read coalesced (col, val through
 *     ld.global.nc.L1::no_allocate, IPT independent loads per thread in flight), x gathered,
 *     and the products val * x[col] stored in shared memory; the tile's row ends
 *     row_ptr[row_start + 1 ..] as 32-bit offsets from nz_start next to them (they lie in
 *     [0, TILE]), with a sentinel after the last so that the tile's unfinished row never ends.
 *  2. Per-thread split: each thread finds its start (row, entry) on local diagonal t * IPT by
 *     the same bounded binary search in the staged row ends (at most log2(TILE) + 1 steps).
 *  3. Consumption: the thread walks its IPT items: an entry adds its product to the running
 *     sum; a row end keeps the sum in a register (one per item, indices fixed by the unrolled
 *     loop) and restarts it. What is left at the end is the thread's carry-out, keyed by the
 *     row it is in (a row no thread of the tile has ended yet, or the tile's last row).
 *  4. Carries inside the tile: an inclusive segmented scan of the (row, carry) pairs over the
 *     block (keys are non-decreasing in thread order, so adding the lane o below when its key
 *     is equal is exact): a Kogge-Stone scan per warp with shuffles, the 4 warp aggregates
 *     through shared memory, each warp adding the scanned aggregate of the warps before it.
 *     Thread t's first row end adds the scan value of thread t - 1: the parts of that row the
 *     threads before it held. The paper instead walks each thread's items twice (once for the
 *     carry-outs, once with the carry-in); keeping the row sums in registers walks them once.
 *  5. Output: the row sums go to shared memory (over the products, dead after a barrier) and
 *     the tile's completed rows to y coalesced, y = alpha*sum + beta*y (y not read when
 *     beta == 0). The last thread's scan value is the tile's carry-out for the row at the
 *     tile's end: a plain store to carry[b].
 *  merge_fixup_kernel, next on the stream: a warp per tile; the first tile of each run of tiles
 *  whose carry-out goes to the same row R < m sums the run's carries (lanes strided, then a
 *  butterfly) and adds alpha * sum to y[R], which the tile holding R's row end has written.
 * Determinism: no atomics; every sum is formed in an order fixed by the split, so op N is
 * bitwise reproducible run to run (GS_SPMV_CAP_DETERMINISTIC stays set).
 * op T: none (GS_SPMV_FLAG_TRANSPOSE unset, op T is refused as unsupported). A merge-path
 * transpose still scatters every product into y with atomics; the balanced split is what it
 * would add over csr-vector's transpose, whose row blocks and long-row chunks already balance
 * the scatter, so there is no case for it without a measurement that shows one.
 * Byte model (memory()): the CSR's 4(m+1) (8(m+1) wide) + 12 nnz + 8n (x, ideal cache) + 8m
 * (y), plus the tile rows 4(ntiles + 1) and the carries 8 ntiles written and read back.
 * Index widths: templates on the row-pointer type O (int32_t, or int64_t for a matrix of more
 * than 2^31 - 1 entries: the backend is WIDE); diagonals, nz_start and tile starts are 64-bit
 * (the path has m + nnz items, past 2^31 even for 32-bit offsets); everything inside a tile is
 * a 32-bit offset below TILE + 1.
 * Assumptions: row_ptr monotone with row_ptr[0] = 0, columns in 0..n-1 (gs_matrix_create);
 * every search loop is bounded by MERGE_SEARCH_ITERS even on a corrupt row_ptr; barriers only
 * in code every thread of the block reaches. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/error.h"
#include "spmv/common_kernels.h"
#include "spmv/device_util.cuh"
#include "spmv/merge.h"
#include "spmv/spmv_impl.h"

#define MERGE_WARPS (MERGE_THREADS / 32)
#define FULL_MASK 0xffffffffu

typedef struct merge_data {
  gs_context_t *ctx;
  gs_dcsr_t A;          /* borrowed shared device CSR */
  int ipt;              /* items of the merge path per thread: 5, 7, 9 or 15 */
  int64_t ntiles;       /* blocks of the product kernel */
  gs_idx_t *d_tile_row; /* ntiles + 1: row coordinate of each tile boundary */
  double *d_carry;      /* ntiles: each tile's part of the row it ends in */
  double prepare_ms;    /* the tile search, for describe (-1: not timed) */
} merge_data_t;

/* ---- prepare: tile boundaries -------------------------------------------------------------- */

/* Row coordinate of the split point of diagonal d of the path (merge.h): the smallest i in
 * [max(0, d - nnz), min(d, m)] whose row end does not come before entry d - i - 1. */
template <typename O>
static __device__ __forceinline__ gs_idx_t merge_search(const O *__restrict__ rp, gs_idx_t m,
                                                        int64_t nnz, int64_t d)
{
  int64_t lo = d > nnz ? d - nnz : 0, hi = d < m ? d : (int64_t)m;
  for (int it = 0; it < MERGE_SEARCH_ITERS && lo < hi; ++it) {
    const int64_t mid = lo + ((hi - lo) >> 1);
    if ((int64_t)rp[mid + 1] <= d - mid - 1) lo = mid + 1;
    else hi = mid;
  }
  return (gs_idx_t)lo;
}

template <typename O>
static __global__ void merge_tiles_kernel(const O *__restrict__ rp, gs_idx_t m, int64_t nnz,
                                          int tile, int64_t ntiles,
                                          gs_idx_t *__restrict__ tile_row)
{
  const int64_t total = (int64_t)m + nnz;
  GS_GRID_STRIDE(b, ntiles + 1) tile_row[b] = merge_search(rp, m, nnz, min(b * tile, total));
}

/* ---- op N ----------------------------------------------------------------------------------- */

/* The block's inclusive segmented scan of (key, v), keys non-decreasing over the threads (the
 * host's block_scan in merge_build.c does the same combinations in the same order). Returns the
 * scan value; *prev gets thread t - 1's (0 for thread 0). Every thread of the block calls it:
 * it holds one barrier. */
static __device__ __forceinline__ double merge_block_scan(int key, double v, double *prev,
                                                          int *s_wkey, double *s_wval)
{
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const double vin = __shfl_up_sync(FULL_MASK, v, o);
    const int kin = __shfl_up_sync(FULL_MASK, key, o);
    if (lane >= o && kin == key) v = vin + v;
  }
  if (lane == 31) {
    s_wkey[warp] = key;
    s_wval[warp] = v;
  }
  __syncthreads();
  /* The scanned aggregate of warps 0 .. warp - 1 (at most MERGE_WARPS - 1 steps). */
  int pk = s_wkey[0];
  double pv = s_wval[0];
  for (int u = 1; u < warp; ++u) {
    const int k = s_wkey[u];
    pv = k == pk ? pv + s_wval[u] : s_wval[u];
    pk = k;
  }
  if (warp > 0 && pk == key) v = pv + v;
  const double up = __shfl_up_sync(FULL_MASK, v, 1);
  *prev = lane > 0 ? up : (warp > 0 ? pv : 0.0);
  return v;
}

template <int IPT, typename O>
static __global__ void __launch_bounds__(MERGE_THREADS)
merge_spmv_kernel(const O *__restrict__ rp, const gs_idx_t *__restrict__ col,
                  const double *__restrict__ val, const gs_idx_t *__restrict__ tile_row,
                  int64_t total, const double *__restrict__ x, double alpha, double beta,
                  double *__restrict__ y, double *__restrict__ carry)
{
  constexpr int TILE = MERGE_THREADS * IPT;
  __shared__ double s_prod[TILE]; /* products, then the tile's row sums */
  __shared__ int s_end[TILE + 1]; /* row ends, relative to nz_start; sentinel after the last */
  __shared__ int s_wkey[MERGE_WARPS];
  __shared__ double s_wval[MERGE_WARPS];

  const int tid = threadIdx.x;
  const int64_t b = blockIdx.x;
  const gs_idx_t row_start = tile_row[b], row_end = tile_row[b + 1];
  const int64_t d0 = b * TILE, d1 = min(d0 + TILE, total);
  const int64_t nz_start = d0 - row_start;
  const int nrows = (int)(row_end - row_start);     /* row ends in the tile, <= TILE */
  const int nnz_t = (int)(d1 - row_end - nz_start); /* entries in the tile, <= TILE */
  const int items = nrows + nnz_t;

  /* 1. Staging: all loads of column ids and values first, then the gathers of x. */
  {
    const gs_idx_t *tcol = col + nz_start;
    const double *tval = val + nz_start;
    gs_idx_t c[IPT];
    double a[IPT];
#pragma unroll
    for (int i = 0; i < IPT; ++i) {
      const int k = tid + i * MERGE_THREADS;
      c[i] = k < nnz_t ? ld_stream(&tcol[k]) : 0;
      a[i] = k < nnz_t ? ld_stream(&tval[k]) : 0.0;
    }
#pragma unroll
    for (int i = 0; i < IPT; ++i) {
      const int k = tid + i * MERGE_THREADS;
      if (k < nnz_t) s_prod[k] = a[i] * __ldg(&x[c[i]]);
    }
    const O *trp = rp + row_start + 1;
#pragma unroll
    for (int i = 0; i < IPT; ++i) {
      const int k = tid + i * MERGE_THREADS;
      if (k < nrows) s_end[k] = (int)((int64_t)trp[k] - nz_start);
    }
    if (tid == 0) s_end[nrows] = INT_MAX;
  }
  __syncthreads();

  /* 2. This thread's split point on local diagonal d. */
  const int d = min(tid * IPT, items), dend = min(d + IPT, items);
  int row, nz;
  {
    int lo = max(d - nnz_t, 0), hi = min(d, nrows);
    for (int it = 0; it < MERGE_SEARCH_ITERS && lo < hi; ++it) {
      const int mid = (lo + hi) >> 1;
      if (s_end[mid] <= d - mid - 1) lo = mid + 1;
      else hi = mid;
    }
    row = lo;
    nz = d - lo;
  }
  const int first_row = row;

  /* 3. Consumption: items d .. dend - 1. While row < nrows, nz < s_end[row] <= nnz_t; at
   * row = nrows the sentinel keeps every remaining item an entry, and nz < nnz_t then because
   * the items end with the tile. */
  double sums[IPT];
  unsigned ends = 0;
  double run = 0.0;
#pragma unroll
  for (int k = 0; k < IPT; ++k) {
    sums[k] = 0.0;
    if (d + k < dend) {
      if (nz < s_end[row]) {
        run += s_prod[nz];
        ++nz;
      } else {
        sums[k] = run;
        run = 0.0;
        ends |= 1u << k;
        ++row;
      }
    }
  }

  /* 4. Carries inside the tile (the barrier in the scan also ends every read of s_prod and
   * s_end). */
  double carry_in;
  const double scanned = merge_block_scan(row, run, &carry_in, s_wkey, s_wval);

  /* 5. Row sums into shared memory, then the tile's rows to y. */
  {
    int r = first_row;
    bool head = true;
#pragma unroll
    for (int k = 0; k < IPT; ++k) {
      if (ends & (1u << k)) {
        s_prod[r] = head ? carry_in + sums[k] : sums[k];
        head = false;
        ++r;
      }
    }
  }
  if (tid == MERGE_THREADS - 1) carry[b] = scanned; /* the tile's part of row row_end */
  __syncthreads();
#pragma unroll
  for (int i = 0; i < IPT; ++i) {
    const int k = tid + i * MERGE_THREADS;
    if (k < nrows) {
      const gs_idx_t R = row_start + k;
      y[R] = beta == 0.0 ? alpha * s_prod[k] : alpha * s_prod[k] + beta * y[R];
    }
  }
}

/* Rows shared between tiles: a warp per tile b; the first tile of a run of tiles whose
 * carry-out row (tile_row[b + 1]) is the same R < m adds alpha * (sum of the run's carries) to
 * y[R]. The run is contiguous (tile rows are non-decreasing): lanes take b + l, b + l + 32, ...
 * until a chunk leaves the run, then a butterfly sums the lanes (fixed order: deterministic).
 * Every lane of a warp has the same b, so the loops and ballots are warp-uniform. */
static __global__ void __launch_bounds__(256)
merge_fixup_kernel(gs_idx_t m, int64_t ntiles, const gs_idx_t *__restrict__ tile_row,
                   const double *__restrict__ carry, double alpha, double *__restrict__ y)
{
  const int lane = threadIdx.x & 31;
  const int64_t warps = (int64_t)gridDim.x * (blockDim.x / 32);
  for (int64_t b = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; b < ntiles;
       b += warps) {
    const gs_idx_t R = tile_row[b + 1];
    if (R >= m || (b > 0 && tile_row[b] == R)) continue; /* no row, or not the run's head */
    double s = 0.0;
    for (int64_t base = b; base < ntiles; base += 32) {
      const int64_t i = base + lane;
      const bool in = i < ntiles && tile_row[i + 1] == R;
      if (in) s += carry[i];
      if (__ballot_sync(FULL_MASK, in) != FULL_MASK) break;
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(FULL_MASK, s, o);
    if (lane == 0 && s != 0.0) y[R] += alpha * s;
  }
}

/* ---- backend ---------------------------------------------------------------------------- */

template <typename O>
static gs_status_t merge_launch(cudaStream_t s, const merge_data_t *d, const O *rp, double alpha,
                                const double *x, double beta, double *y)
{
  const gs_dcsr_t *A = &d->A;
  const unsigned g = (unsigned)d->ntiles; /* <= INT32_MAX (prepare) */
  const int64_t total = (int64_t)A->m + A->nnz;
#define MERGE_N(IPT)                                                                          \
  merge_spmv_kernel<IPT, O><<<g, MERGE_THREADS, 0, s>>>(rp, A->d_col, A->d_val, d->d_tile_row, \
                                                        total, x, alpha, beta, y, d->d_carry)
  switch (d->ipt) {
  case 5: MERGE_N(5); break;
  case 9: MERGE_N(9); break;
  case 15: MERGE_N(15); break;
  default: MERGE_N(7); break;
  }
#undef MERGE_N
  GS_CHECK(GS_CHECK_LAUNCH(s, "merge_spmv_kernel"));
  if (d->ntiles < 2) return GS_SUCCESS; /* one tile: no row is shared */
  merge_fixup_kernel<<<gs_grid_blocks(d->ntiles * 32, 256), 256, 0, s>>>(
      A->m, d->ntiles, d->d_tile_row, d->d_carry, alpha, y);
  return GS_CHECK_LAUNCH(s, "merge_fixup_kernel");
}

static gs_status_t merge_apply(gs_context_t *ctx, void *data, gs_op_t op, double alpha,
                               const double *d_x, double beta, double *d_y)
{
  const merge_data_t *d = (const merge_data_t *)data;
  if (op != GS_OP_N) /* spmv.c refuses op T first (no FLAG_TRANSPOSE); never a wrong answer */
    return GS_ERROR(GS_ERR_UNSUPPORTED, "backend 'merge' has no transpose apply");
  if (d->ntiles == 0) return GS_SUCCESS; /* m = 0: nothing to write (spmv.c skips it too) */
  return d->A.wide ? merge_launch(ctx->stream, d, d->A.d_row_ptr64, alpha, d_x, beta, d_y)
                   : merge_launch(ctx->stream, d, d->A.d_row_ptr32, alpha, d_x, beta, d_y);
}

static void merge_destroy(void *data)
{
  merge_data_t *d = (merge_data_t *)data;
  if (!d) return;
  gs_dfree(d->ctx, d->d_tile_row);
  gs_dfree(d->ctx, d->d_carry);
  free(d);
}

enum { MERGE_OPT_IPT };
static const gs_spmv_option_t merge_options[] = {
    {"ipt", "merge-path items per thread (5, 7, 9 or 15); 0: 7", GS_OPTK_INT, 0, 0,
     MERGE_IPT_MAX},
    GS_SPMV_OPTION_END};

static gs_status_t merge_tiles_launch(cudaStream_t s, const merge_data_t *d)
{
  const unsigned g = gs_grid_blocks(d->ntiles + 1, 256);
  const int tile = MERGE_THREADS * d->ipt;
  if (d->A.wide)
    merge_tiles_kernel<<<g, 256, 0, s>>>(d->A.d_row_ptr64, d->A.m, (int64_t)d->A.nnz, tile,
                                         d->ntiles, d->d_tile_row);
  else
    merge_tiles_kernel<<<g, 256, 0, s>>>(d->A.d_row_ptr32, d->A.m, (int64_t)d->A.nnz, tile,
                                         d->ntiles, d->d_tile_row);
  return GS_CHECK_LAUNCH(s, "merge_tiles_kernel");
}

static gs_status_t merge_tiles_run(void *d)
{
  const merge_data_t *m = (const merge_data_t *)d;
  return merge_tiles_launch(m->ctx->stream, m);
}

/* build=host, the reference: the same tile boundaries by gs_merge_search_host on the host CSR,
 * uploaded into d->d_tile_row (allocated by the caller). */
static gs_status_t merge_tiles_host(gs_context_t *ctx, const gs_csr_t *h, merge_data_t *d)
{
  const size_t count = (size_t)d->ntiles + 1;
  const int64_t tile = (int64_t)MERGE_THREADS * d->ipt, total = (int64_t)h->m + h->nnz;
  gs_idx_t *rows = (gs_idx_t *)malloc(count * sizeof *rows);
  if (!rows) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory searching merge tiles");
  for (int64_t b = 0; b <= d->ntiles; ++b)
    rows[b] = gs_merge_search_host(h, b * tile < total ? b * tile : total);
  const gs_status_t st = gs_copy_to_device(ctx, d->d_tile_row, rows, count * sizeof *rows);
  free(rows);
  return st;
}

static gs_status_t merge_prepare(gs_context_t *ctx, gs_matrix_t *A, const gs_spmv_cfg_t *cfg,
                                 void **out, unsigned *caps)
{
  gs_status_t st = GS_SUCCESS;
  const int req = (int)cfg->v[MERGE_OPT_IPT];
  const int ipt = gs_merge_ipt(req);
  (void)caps; /* op N deterministic, capturable: the defaults */
  if (ipt < 0)
    return GS_ERROR(GS_ERR_INVALID_ARG, "merge: ipt must be 0, 5, 7, 9 or 15, not %d", req);
  merge_data_t *d = (merge_data_t *)calloc(1, sizeof *d);
  if (!d) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory preparing merge");
  d->ctx = ctx;
  d->ipt = ipt;
  d->prepare_ms = -1.0;
  GS_TRY(gs_matrix_device_csr(A, &d->A));
  d->ntiles = gs_merge_tiles(d->A.m, d->A.nnz, ipt);
  if (d->ntiles > 0x7fffffff)
    GS_FAIL(GS_ERR_UNSUPPORTED, "merge: %lld tiles exceed the grid limit", (long long)d->ntiles);
  if (d->ntiles > 0) {
    const size_t nt = (size_t)d->ntiles;
    GS_TRY(gs_dmalloc(ctx, (void **)&d->d_tile_row, (nt + 1) * sizeof(gs_idx_t),
                      "merge tile rows"));
    GS_TRY(gs_dmalloc(ctx, (void **)&d->d_carry, nt * sizeof(double), "merge carries"));
    if (gs_cfg_host_build(cfg)) {
      GS_TRY(merge_tiles_host(ctx, gs_matrix_host(A), d));
    } else {
      /* The tile search, timed with events on the stream: the backend's own prepare (describe
       * reports it). Run once untimed first: a kernel's first launch loads its module (CUDA's
       * lazy loading), a cost of the process, not of the matrix. */
      GS_TRY(gs_timed_launch(ctx->stream, merge_tiles_run, d, 1, &d->prepare_ms));
    }
  }
  *out = d;
  d = NULL;
cleanup:
  merge_destroy(d);
  return st;
}

static gs_status_t merge_memory(const void *data, gs_spmv_mem_t *mem)
{
  const merge_data_t *d = (const merge_data_t *)data;
  const gs_dcsr_t *A = &d->A;
  const size_t off = A->wide ? sizeof(int64_t) : sizeof(int32_t);
  const size_t nt = (size_t)d->ntiles;
  const size_t tiles = nt > 0 ? (nt + 1) * sizeof(gs_idx_t) : 0, carries = nt * sizeof(double);
  /* The shared CSR is what this backend reads, so it is counted as its device memory. */
  mem->device_bytes = ((size_t)A->m + 1) * off +
                      (size_t)A->nnz * (sizeof(gs_idx_t) + sizeof(double)) + tiles + carries;
  /* op N: CSR + x + y, the tile rows read once, the carries written and read back. */
  mem->bytes_per_apply = gs_csr_bytes_per_apply(A->m, A->n, A->nnz, off) + tiles + 2 * carries;
  mem->bytes_per_apply_t = 0; /* no op T */
  return GS_SUCCESS;
}

static void merge_describe(const void *data, char *buf, size_t len)
{
  const merge_data_t *d = (const merge_data_t *)data;
  if (d->prepare_ms >= 0.0)
    snprintf(buf, len, "%d items per thread, %lld tiles of %d items; tile search %.1f us", d->ipt,
             (long long)d->ntiles, MERGE_THREADS * d->ipt, d->prepare_ms * 1e3);
  else
    snprintf(buf, len, "%d items per thread, %lld tiles of %d items", d->ipt,
             (long long)d->ntiles, MERGE_THREADS * d->ipt);
}

static gs_status_t merge_host_apply(const gs_csr_t *A, const gs_spmv_cfg_t *cfg, gs_op_t op,
                                    double alpha, const double *x, double beta, double *y)
{
  const int req = (int)cfg->v[MERGE_OPT_IPT];
  const int ipt = gs_merge_ipt(req);
  if (op != GS_OP_N) /* gs_spmv_host_apply refuses op T first (no FLAG_TRANSPOSE) */
    return GS_ERROR(GS_ERR_UNSUPPORTED, "backend 'merge' has no transpose apply");
  if (ipt < 0)
    return GS_ERROR(GS_ERR_INVALID_ARG, "merge: ipt must be 0, 5, 7, 9 or 15, not %d", req);
  return gs_merge_apply_host(A, ipt, alpha, x, beta, y);
}

extern "C" const gs_spmv_ops_t gs_spmv_merge_ops = {
    GS_SPMV_OPS_VERSION, "merge",
    "merge-based CSR: equal shares of rows + non-zeros per thread, 2D merge-path search, "
    "carry fix-up, deterministic (Merrill & Garland, SC16); no op T",
    GS_SPMV_FLAG_HOST_LAYOUT | GS_SPMV_FLAG_WIDE | GS_SPMV_FLAG_SHARED_CSR | GS_SPMV_FLAG_LIGHT |
        GS_SPMV_FLAG_DEVICE_BUILD,
    merge_options,
    merge_prepare, merge_apply, merge_memory, merge_destroy, merge_host_apply, merge_describe};
