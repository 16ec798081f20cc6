/* spmv/rowblock_devbuild.cu: CSR-Stream's row blocks (Greathouse & Daga, "Efficient Sparse
 * Matrix-Vector Multiplication on GPUs Using the CSR Storage Format", SC14, section 4: rows
 * packed into a block while their entries fit the block's shared memory) and CSR-VectorL's
 * long-row chunks (Daga & Greathouse, HiPC 2015), built on the GPU from the shared device CSR,
 * equal to the host's sequential greedy (spmv/rowblock_devbuild.h).
 *
 * The greedy is a chain: the block starting at row s ends at
 *   next(s) = max(s + 1, min(m, s + max_rows, u(s) - 1)),
 * u(s) the first row q > s with row_ptr[q] > row_ptr[s] + budget (the host loop stops at the
 * first row that breaks the row cap or the budget; row_ptr is monotone, so the budget, once
 * broken, stays broken). The blocks are 0, next(0), next(next(0)), ..., m. The budget is
 * relative to each block's start, so a block start is not a function of the row pointer alone
 * (no binary search over multiples of the budget gives them); it is found by pointer doubling
 * instead (Wyllie's list ranking, as used for parallel prefix over linked lists):
 *  rb_next_kernel   a thread per row: next(r) by a binary search over the at most max_rows
 *                   row pointers after r (coalesced, cache-local); marks rows 0 and m.
 *  rb_jump_kernel   round i, J = next^(2^i): every marked row u marks J(u), and J is squared
 *                   into the other buffer (J'(u) = J(J(u))). Before round i the marks hold
 *                   next^k(0) for every k < 2^i; after it, every k < 2^(i+1). A mark made in
 *                   the same round by another thread is read or not: either way only chain
 *                   rows are marked (a marked row's J image is on the chain). The rounds stop
 *                   (a device flag; the launches that remain return at once) once J(0) = m:
 *                   every block start is marked then. At most ceil(log2(nblocks bound))
 *                   rounds (rb_build: m, or fewer from the row cap and the budget).
 *  rb_count_kernel  block-reduced counts: marks (nblocks + 1), one-row blocks, long rows and
 *                   their chunks, read back once (the only synchronization) to size the
 *                   arrays exactly as the host allocates them.
 *  cub::DeviceSelect::Flagged  the marked rows in order -> the block bounds.
 *  cub::DeviceSelect::If, cub::DeviceScan::ExclusiveSum  (only with long rows) the long rows in
 *                   order and their first chunks.
 *  rb_chunks_kernel a thread per chunk: its long row by a binary search over the first chunks,
 *                   (row, first entry) written coalesced; rb_longs_kernel the long-row table.
 * Extra memory while building: 3 x 4(m + 1) bytes (next and the two jump buffers), m + 1 bytes
 * of marks, 16 per long row, CUB's temporary storage; all freed before returning.
 * Index widths: rows in gs_idx_t (m < 2^31), positions in 64 bits, templates on the row-pointer
 * type O (int32_t, or int64_t for a wide matrix: csr-vector and csr-adaptive are WIDE). */
#include <stdio.h>
#include <string.h>

#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "core/error.h"
#include "spmv/common_kernels.h"
#include "spmv/device_util.cuh"
#include "spmv/rowblock_devbuild.h"

#define RB_THREADS 256

/* The counts read back: marks (the chain's rows, m included), blocks of one row, long rows,
 * their chunks. */
typedef struct rb_info {
  unsigned long long marks, single, nlong, nchunks;
} rb_info_t;

/* next(r) for every row (next(m) = m, the chain's end) and the initial marks {0, m}. */
template <typename O>
static __global__ void rb_next_kernel(const O *__restrict__ rp, gs_idx_t m, int64_t budget,
                                      int64_t max_rows, gs_idx_t *__restrict__ next,
                                      uint8_t *__restrict__ mark)
{
  GS_GRID_STRIDE(r, (int64_t)m + 1)
  {
    int64_t e = m;
    if (r < m) {
      const int64_t P = (int64_t)rp[r] + budget;
      const int64_t hi = min(r + max_rows, (int64_t)m);
      int64_t lo = r + 1, top = hi + 1; /* first q in [r + 1, hi] with rp[q] > P; hi + 1: none */
      while (lo < top) {                /* at most log2(max_rows) + 1 steps */
        const int64_t mid = lo + ((top - lo) >> 1);
        if ((int64_t)rp[mid] > P) top = mid;
        else lo = mid + 1;
      }
      e = lo <= hi ? lo - 1 : hi;
      if (e == r) e = r + 1; /* a row over the budget: a block of its own */
    }
    next[r] = (gs_idx_t)e;
    mark[r] = (r == 0 || r == m) ? 1 : 0;
  }
}

/* One doubling round (see the banner): marks the J images of the marked rows and squares J.
 * Returns at once when an earlier round found the chain complete (*done) or when J(0) = m. */
static __global__ void rb_jump_kernel(const gs_idx_t *__restrict__ jin,
                                      gs_idx_t *__restrict__ jout, uint8_t *mark, gs_idx_t m,
                                      int *done)
{
  if (*done) return;
  if (jin[0] >= m) { /* next^(2^i)(0) = m: the marks hold every block start already */
    if (blockIdx.x == 0 && threadIdx.x == 0) *done = 1;
    return;
  }
  GS_GRID_STRIDE(u, (int64_t)m + 1)
  {
    const gs_idx_t v = jin[u];
    if (mark[u]) mark[v] = 1;
    jout[u] = jin[v];
  }
}

/* A block's sum of v into *dst (one atomic per block: integer sums, so the order is free). */
static __device__ __forceinline__ void rb_block_add(unsigned long long v,
                                                    unsigned long long *s_warp,
                                                    unsigned long long *dst)
{
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0) s_warp[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long s = 0;
    for (int w = 0; w < RB_THREADS / 32; ++w) s += s_warp[w];
    if (s) atomicAdd(dst, s);
  }
  __syncthreads();
}

/* The counts of rb_info_t over rows 0..m (launched with RB_THREADS threads a block). */
template <typename O>
static __global__ void __launch_bounds__(RB_THREADS)
rb_count_kernel(const O *__restrict__ rp, gs_idx_t m, const gs_idx_t *__restrict__ next,
                const uint8_t *__restrict__ mark, int64_t long_len, rb_info_t *info)
{
  __shared__ unsigned long long s_warp[RB_THREADS / 32];
  unsigned long long marks = 0, single = 0, nlong = 0, nchunks = 0;
  GS_GRID_STRIDE(r, (int64_t)m + 1)
  {
    if (!mark[r]) continue;
    ++marks;
    if (r < m && next[r] == r + 1) ++single;
  }
  GS_GRID_STRIDE(r, m)
  {
    const int64_t len = (int64_t)rp[r + 1] - (int64_t)rp[r];
    if (len > long_len) {
      ++nlong;
      nchunks += (unsigned long long)((len + long_len - 1) / long_len);
    }
  }
  rb_block_add(marks, s_warp, &info->marks);
  rb_block_add(single, s_warp, &info->single);
  rb_block_add(nlong, s_warp, &info->nlong);
  rb_block_add(nchunks, s_warp, &info->nchunks);
}

/* cub::DeviceSelect::If's predicate: row r is longer than len. */
template <typename O>
struct rb_is_long {
  const O *rp;
  int64_t len;
  __host__ __device__ bool operator()(gs_idx_t r) const
  {
    return (int64_t)rp[r + 1] - (int64_t)rp[r] > len;
  }
};

/* cnt[k] = chunks of long row rows[k] (k < nlong), cnt[nlong] = 0: scanned into first chunks. */
template <typename O>
static __global__ void rb_chunk_count_kernel(const O *__restrict__ rp,
                                             const gs_idx_t *__restrict__ rows, gs_idx_t nlong,
                                             int64_t long_len, int64_t *__restrict__ cnt)
{
  GS_GRID_STRIDE(k, (int64_t)nlong + 1)
  {
    int64_t c = 0;
    if (k < nlong) {
      const gs_idx_t r = rows[k];
      c = ((int64_t)rp[r + 1] - (int64_t)rp[r] + long_len - 1) / long_len;
    }
    cnt[k] = c;
  }
}

/* Chunk c: its long row k (the last with first[k] <= c, a binary search over nlong + 1 first
 * chunks, first[nlong] = nchunks > c), then (row, first entry) at 2c: coalesced writes, in row
 * order as the host's loop writes them. */
template <typename O>
static __global__ void rb_chunks_kernel(const O *__restrict__ rp,
                                        const gs_idx_t *__restrict__ rows,
                                        const int64_t *__restrict__ first, gs_idx_t nlong,
                                        int64_t nchunks, int64_t long_len,
                                        int64_t *__restrict__ chunks)
{
  GS_GRID_STRIDE(c, nchunks)
  {
    int64_t lo = 0, hi = nlong; /* first k in [0, nlong] with first[k] > c, minus one */
    while (lo < hi) {
      const int64_t mid = lo + ((hi - lo) >> 1);
      if (first[mid] > c) hi = mid;
      else lo = mid + 1;
    }
    const int64_t k = lo - 1; /* first[0] = 0 <= c, so k >= 0 */
    const gs_idx_t r = rows[k];
    chunks[2 * c] = r;
    chunks[2 * c + 1] = (int64_t)rp[r] + (c - first[k]) * long_len;
  }
}

/* csr-adaptive's long-row table: (row, first chunk) of each long row, then (m, nchunks). */
static __global__ void rb_longs_kernel(const gs_idx_t *__restrict__ rows,
                                       const int64_t *__restrict__ first, gs_idx_t nlong,
                                       gs_idx_t m, gs_idx_t *__restrict__ longs)
{
  GS_GRID_STRIDE(k, (int64_t)nlong + 1)
  {
    longs[2 * k] = k < nlong ? rows[k] : m;
    longs[2 * k + 1] = (gs_idx_t)first[k]; /* first[nlong] = nchunks */
  }
}

static void rb_free(gs_context_t *ctx, gs_rowblocks_t *out)
{
  gs_dfree(ctx, out->d_blocks);
  gs_dfree(ctx, out->d_chunks);
  gs_dfree(ctx, out->d_longs);
  memset(out, 0, sizeof *out);
}

/* A CUB call's temporary storage: call(NULL, bytes) asks the size, then call(tmp, bytes) runs
 * (at least one byte allocated: a NULL pointer would make the second call a size query too). */
template <typename F>
static gs_status_t rb_cub(gs_context_t *ctx, F call, const char *what)
{
  size_t bytes = 0;
  void *tmp = NULL;
  GS_CHECK(GS_CUDA(call(NULL, bytes)));
  GS_CHECK(gs_dmalloc_ordered(ctx, &tmp, bytes > 0 ? bytes : 1, what));
  const gs_status_t st = GS_CUDA(call(tmp, bytes));
  gs_dfree(ctx, tmp);
  return st;
}

template <typename O>
static gs_status_t rb_build(gs_context_t *ctx, const O *rp, gs_idx_t m, int64_t nnz,
                            int64_t budget, gs_idx_t max_rows, int64_t long_len, int want_longs,
                            const char *who_grid, gs_rowblocks_t *out)
{
  gs_status_t st = GS_SUCCESS;
  cudaStream_t s = ctx->stream;
  const int64_t n1 = (int64_t)m + 1;
  gs_idx_t *d_next = NULL, *d_ja = NULL, *d_jb = NULL, *d_rows = NULL;
  uint8_t *d_mark = NULL;
  int *d_done = NULL;
  int64_t *d_cnt = NULL, *d_first = NULL;
  rb_info_t *d_info = NULL, info;
  int64_t *d_nsel = NULL; /* CUB's count of selected items (not read: the counts are known) */
  const unsigned grid = gs_grid_blocks(n1, RB_THREADS);

  GS_TRY(gs_dmalloc_ordered(ctx, (void **)&d_next, (size_t)n1 * sizeof(gs_idx_t),
                            "row-block next"));
  GS_TRY(gs_dmalloc_ordered(ctx, (void **)&d_mark, (size_t)n1, "row-block marks"));
  GS_TRY(gs_dmalloc_ordered(ctx, (void **)&d_info, sizeof *d_info + sizeof(int),
                            "row-block counts"));
  GS_TRY(gs_dmalloc_ordered(ctx, (void **)&d_nsel, sizeof *d_nsel, "row-block selection count"));
  d_done = (int *)(d_info + 1);
  GS_TRY(GS_CUDA(cudaMemsetAsync(d_info, 0, sizeof *d_info + sizeof(int), s)));
  rb_next_kernel<O><<<grid, RB_THREADS, 0, s>>>(rp, m, budget, (int64_t)max_rows, d_next, d_mark);
  GS_TRY(GS_CHECK_LAUNCH(s, "rb_next_kernel"));

  /* Pointer doubling: next stays intact (rb_count_kernel reads it); J alternates a <-> b. */
  if (m > 1) {
    /* Rounds: 2^rounds >= nblocks. Of two consecutive blocks, the first ended at the row cap
     * or because the second's first row broke the budget (or was over it alone): each such
     * pair holds max_rows rows or more than `budget` entries of its own, so
     * nblocks <= 2 (m / max_rows + nnz / budget + 2) + 1, and nblocks <= m. */
    const int64_t bound_pairs = (int64_t)m / max_rows + nnz / budget + 2;
    const int64_t bound = 2 * bound_pairs + 1 < (int64_t)m ? 2 * bound_pairs + 1 : (int64_t)m;
    int rounds = 0;
    while (rounds < 31 && ((int64_t)1 << rounds) < bound) ++rounds;
    GS_TRY(gs_dmalloc_ordered(ctx, (void **)&d_ja, (size_t)n1 * sizeof(gs_idx_t),
                              "row-block jumps"));
    GS_TRY(gs_dmalloc_ordered(ctx, (void **)&d_jb, (size_t)n1 * sizeof(gs_idx_t),
                              "row-block jumps"));
    const gs_idx_t *jin = d_next;
    for (int i = 0; i < rounds; ++i) {
      gs_idx_t *jout = (i & 1) ? d_jb : d_ja;
      rb_jump_kernel<<<grid, RB_THREADS, 0, s>>>(jin, jout, d_mark, m, d_done);
      GS_TRY(GS_CHECK_LAUNCH(s, "rb_jump_kernel"));
      jin = jout;
    }
  }
  rb_count_kernel<O><<<grid, RB_THREADS, 0, s>>>(rp, m, d_next, d_mark, long_len, d_info);
  GS_TRY(GS_CHECK_LAUNCH(s, "rb_count_kernel"));
  GS_TRY(gs_copy_to_host(ctx, &info, d_info, sizeof info)); /* synchronizes the stream */
  if (info.marks < 1 || info.marks > (unsigned long long)n1 || info.single > info.marks ||
      info.nlong > (unsigned long long)m)
    GS_FAIL(GS_ERR_INTERNAL, "row blocks: inconsistent device build (%llu marks, %llu long rows)",
            info.marks, info.nlong);
  {
    const int64_t nblocks = (int64_t)info.marks - 1, nchunks = (int64_t)info.nchunks;
    if (who_grid && nblocks + nchunks > INT32_MAX)
      GS_FAIL(GS_ERR_UNSUPPORTED, "%s: %lld row blocks and %lld chunks exceed the grid limit",
              who_grid, (long long)nblocks, (long long)nchunks);
    if (nchunks > INT32_MAX)
      GS_FAIL(GS_ERR_UNSUPPORTED, "row blocks: %lld long-row chunks exceed 2^31-1",
              (long long)nchunks);
    out->nblocks = (gs_idx_t)nblocks;
    out->nchunks = (gs_idx_t)nchunks;
    out->nlong = (gs_idx_t)info.nlong;
    out->single_rows = (gs_idx_t)info.single;
  }

  /* The block bounds: the marked rows in order. */
  GS_TRY(gs_dmalloc_ordered(ctx, (void **)&out->d_blocks, ((size_t)out->nblocks + 1) * sizeof(gs_idx_t),
                            "row blocks"));
  GS_TRY(rb_cub(
      ctx,
      [&](void *t, size_t &b) {
        return cub::DeviceSelect::Flagged(t, b, thrust::counting_iterator<gs_idx_t>(0), d_mark,
                                          out->d_blocks, d_nsel, n1, s);
      },
      "row-block selection"));

  if (out->nlong > 0) { /* the long rows in order, their first chunks, the chunks */
    const gs_idx_t nl = out->nlong;
    GS_TRY(gs_dmalloc_ordered(ctx, (void **)&d_rows, (size_t)nl * sizeof(gs_idx_t), "long rows"));
    GS_TRY(gs_dmalloc_ordered(ctx, (void **)&d_cnt, ((size_t)nl + 1) * sizeof(int64_t),
                              "long-row chunk counts"));
    GS_TRY(gs_dmalloc_ordered(ctx, (void **)&d_first, ((size_t)nl + 1) * sizeof(int64_t),
                              "long-row first chunks"));
    rb_is_long<O> pred = {rp, long_len};
    GS_TRY(rb_cub(
        ctx,
        [&](void *t, size_t &b) {
          return cub::DeviceSelect::If(t, b, thrust::counting_iterator<gs_idx_t>(0), d_rows,
                                       d_nsel, (int64_t)m, pred, s);
        },
        "long-row selection"));
    rb_chunk_count_kernel<O><<<gs_grid_blocks((int64_t)nl + 1, RB_THREADS), RB_THREADS, 0, s>>>(
        rp, d_rows, nl, long_len, d_cnt);
    GS_TRY(GS_CHECK_LAUNCH(s, "rb_chunk_count_kernel"));
    GS_TRY(rb_cub(
        ctx,
        [&](void *t, size_t &b) {
          return cub::DeviceScan::ExclusiveSum(t, b, d_cnt, d_first, (int64_t)nl + 1, s);
        },
        "long-row chunk scan"));
    GS_TRY(gs_dmalloc_ordered(ctx, (void **)&out->d_chunks, 2 * (size_t)out->nchunks * sizeof(int64_t),
                              "long-row chunks"));
    rb_chunks_kernel<O><<<gs_grid_blocks(out->nchunks, RB_THREADS), RB_THREADS, 0, s>>>(
        rp, d_rows, d_first, nl, (int64_t)out->nchunks, long_len, out->d_chunks);
    GS_TRY(GS_CHECK_LAUNCH(s, "rb_chunks_kernel"));
    if (want_longs) {
      GS_TRY(gs_dmalloc_ordered(ctx, (void **)&out->d_longs, 2 * ((size_t)nl + 1) * sizeof(gs_idx_t),
                                "long-row table"));
      rb_longs_kernel<<<gs_grid_blocks((int64_t)nl + 1, RB_THREADS), RB_THREADS, 0, s>>>(
          d_rows, d_first, nl, m, out->d_longs);
      GS_TRY(GS_CHECK_LAUNCH(s, "rb_longs_kernel"));
    }
  }
cleanup:
  /* The kernels above may still read these buffers: gs_dfree returns them in the stream's
   * order, after those kernels. */
  gs_dfree(ctx, d_next);
  gs_dfree(ctx, d_ja);
  gs_dfree(ctx, d_jb);
  gs_dfree(ctx, d_mark);
  gs_dfree(ctx, d_info);
  gs_dfree(ctx, d_nsel);
  gs_dfree(ctx, d_rows);
  gs_dfree(ctx, d_cnt);
  gs_dfree(ctx, d_first);
  if (st != GS_SUCCESS) rb_free(ctx, out);
  return st;
}

extern "C" gs_status_t gs_rowblocks_build(gs_context_t *ctx, const gs_dcsr_t *A, int64_t budget,
                                          gs_idx_t max_rows, int64_t long_len, int want_longs,
                                          const char *who_grid, gs_rowblocks_t *out)
{
  memset(out, 0, sizeof *out);
  if (budget < 1 || max_rows < 1 || long_len < budget)
    return GS_ERROR(GS_ERR_INVALID_ARG, "row blocks: budget %lld, %d rows, long rows %lld",
                    (long long)budget, (int)max_rows, (long long)long_len);
  if (A->wide)
    return rb_build(ctx, A->d_row_ptr64, A->m, (int64_t)A->nnz, budget, max_rows, long_len,
                    want_longs, who_grid, out);
  return rb_build(ctx, A->d_row_ptr32, A->m, (int64_t)A->nnz, budget, max_rows, long_len,
                  want_longs, who_grid, out);
}
