/* spmv/csr_adaptive_kernels.cu: the `csr-adaptive` backend, CSR-Adaptive (Greathouse & Daga,
 * SC14) with CSR-VectorL (Daga & Greathouse, HiPC 2015) on the matrix's shared device CSR;
 * spmv/csr_adaptive.h describes the row blocks.
 *
 * Work division: one block of ADAPT_THREADS = 256 threads per row block, then one per VectorL
 * chunk (grid = row blocks + chunks, <= INT32_MAX, checked by the builder); the block's kind is
 * read from its bounds, so every branch below is uniform across the block.
 *  CSR-Stream (a block of several rows, at most ADAPT_NNZ = 2048 entries and ADAPT_ROWS rows):
 *    the block's entries are read coalesced (every thread issues its 8 column and value loads
 *    before its gathers of x, through ld.global.nc.L1::no_allocate) and their products
 *    val * x[col] staged in shared memory, as the paper does; then G threads per row (the
 *    largest power of two <= 32 with rows * G <= 256; G = 1 is the paper's CSR-Scalar out of
 *    shared memory) each sum a strided part of the row and meet in a shuffle butterfly; the
 *    group's first thread writes y = alpha*sum + beta*y (y not read when beta == 0).
 *  CSR-Vector (a block of one row of at most ADAPT_LONG = 4096 entries): every thread sums a
 *    strided part of the row from global memory in two accumulators (each entry is used once:
 *    no staging), warp butterflies, the 8 warp sums added in order by thread 0, which writes y.
 *  CSR-VectorL (a row longer than ADAPT_LONG): its own row block does nothing; each chunk of
 *    ADAPT_LONG entries is a block reducing like CSR-Vector into partial[c] (a plain store).
 *    adapt_fixup_kernel, next on the stream, gives each long row a warp that sums its chunks'
 *    partials (lane-strided, then a butterfly) and writes y. The HiPC paper adds the chunks
 *    with atomics; the second kernel keeps the sum order fixed.
 * Prepare: the row blocks, chunks and long-row table are built on the GPU from the shared CSR
 *   (spmv/rowblock_devbuild.cu: the host greedy's chain of block starts by pointer doubling,
 *   one synchronization); build=host runs gs_adapt_layout_build and uploads: the same tables.
 * Determinism: no atomics anywhere; op N is bitwise reproducible run to run.
 * op T: none (GS_SPMV_FLAG_TRANSPOSE unset): it would scatter with atomics exactly as
 *   csr-vector's transpose does over the same kind of row blocks.
 * Compared with csr-vector's default row-block path (which took CSR-Stream's staging idea): that
 * stages columns and values and gathers x in the reduction, one row per thread where it can
 * (neighbouring threads read neighbouring x on stencils), 128 threads and 2048 entries a block,
 * and adds chunks of long rows with atomics; here the paper's staging of products, 256 threads,
 * CSR-Vector for single rows and deterministic VectorL. docs/formats.md compares them.
 * Byte model (memory()): the CSR's 4(m+1) (8(m+1) wide) + 12 nnz + 8n + 8m, plus the block
 *   bounds 4(blocks + 1), the chunk table 16 chunks, the long-row table 8(long + 1) and the
 *   partials 16 chunks (written, read back).
 * Index widths: templates on the row-pointer type O (int32_t, or int64_t for a matrix of more
 *   than 2^31 - 1 entries: the backend is WIDE); positions inside a block are int (< 4096).
 * Assumptions: row_ptr monotone, columns in 0..n-1 (gs_matrix_create); the block table built
 *   by gs_adapt_layout_build from the same row_ptr. */
#include <stdio.h>
#include <stdlib.h>

#include "core/error.h"
#include "gpusolve/timer.h"
#include "spmv/common_kernels.h"
#include "spmv/csr_adaptive.h"
#include "spmv/device_util.cuh"
#include "spmv/rowblock_devbuild.h"
#include "spmv/spmv_impl.h"

#define ADAPT_WARPS (ADAPT_THREADS / 32)
#define ADAPT_IPT (ADAPT_NNZ / ADAPT_THREADS) /* staged entries per thread */
#define FULL_MASK 0xffffffffu

typedef struct adapt_data {
  gs_context_t *ctx;
  gs_dcsr_t A;          /* borrowed shared device CSR */
  gs_idx_t nblocks, nchunks, nlong, stream_blocks, vector_blocks;
  gs_idx_t *d_blocks;   /* nblocks + 1 row bounds */
  int64_t *d_chunks;    /* 2 * nchunks: (row, first entry) */
  gs_idx_t *d_longs;    /* 2 * (nlong + 1): (row, first chunk), then (m, nchunks) */
  double *d_partial;    /* nchunks: each chunk's sum */
  double build_ms;      /* the block build (wall time, GPU or host), for describe */
} adapt_data_t;

struct adapt_args {
  const gs_idx_t *__restrict__ col;
  const double *__restrict__ val;
  const gs_idx_t *__restrict__ blocks;
  const int64_t *__restrict__ chunks;
  const double *__restrict__ x;
  double *__restrict__ y;
  double *__restrict__ partial;
  double alpha, beta;
  gs_idx_t nblocks;
};

/* The block's sum of val * x[col] over entries [e0, e0 + cnt): thread t takes t, t + 2T, ...
 * and t + T, t + 3T, ... in two accumulators (two loads in flight), then warp butterflies and
 * thread 0 adds the warp sums in order (the host's block_sum does the same). Every thread of the
 * block calls it (one barrier); the result is valid in thread 0. */
static __device__ __forceinline__ double adapt_block_sum(const adapt_args &a, int64_t e0, int cnt,
                                                         double *s_warp)
{
  const int tid = threadIdx.x;
  const gs_idx_t *c = a.col + e0;
  const double *v = a.val + e0;
  double s0 = 0.0, s1 = 0.0;
  int p = tid;
  for (; p + ADAPT_THREADS < cnt; p += 2 * ADAPT_THREADS) {
    s0 += ld_stream(&v[p]) * __ldg(&a.x[ld_stream(&c[p])]);
    s1 += ld_stream(&v[p + ADAPT_THREADS]) * __ldg(&a.x[ld_stream(&c[p + ADAPT_THREADS])]);
  }
  if (p < cnt) s0 += ld_stream(&v[p]) * __ldg(&a.x[ld_stream(&c[p])]);
  double s = s0 + s1;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(FULL_MASK, s, o);
  if ((tid & 31) == 0) s_warp[tid >> 5] = s;
  __syncthreads();
  double t = 0.0;
  if (tid == 0)
    for (int w = 0; w < ADAPT_WARPS; ++w) t += s_warp[w];
  return t;
}

template <typename O>
static __global__ void __launch_bounds__(ADAPT_THREADS)
adapt_kernel(const O *__restrict__ rp, adapt_args a)
{
  __shared__ double s_prod[ADAPT_NNZ];
  __shared__ double s_warp[ADAPT_WARPS];
  const int tid = threadIdx.x;

  if ((gs_idx_t)blockIdx.x >= a.nblocks) { /* a VectorL chunk */
    const int64_t c = (int64_t)blockIdx.x - a.nblocks;
    const gs_idx_t row = (gs_idx_t)a.chunks[2 * c];
    const int64_t start = a.chunks[2 * c + 1];
    const int cnt = (int)(min(start + ADAPT_LONG, (int64_t)rp[row + 1]) - start);
    const double s = adapt_block_sum(a, start, cnt, s_warp);
    if (tid == 0) a.partial[c] = s;
    return;
  }
  const gs_idx_t r0 = a.blocks[blockIdx.x], r1 = a.blocks[blockIdx.x + 1];
  const gs_idx_t nrows = r1 - r0;
  const int64_t base = (int64_t)rp[r0];
  const int64_t cnt64 = (int64_t)rp[r1] - base;

  if (nrows == 1) { /* CSR-Vector; a longer row is left to its VectorL chunks */
    if (cnt64 > ADAPT_LONG) return;
    const double s = adapt_block_sum(a, base, (int)cnt64, s_warp);
    if (tid == 0) a.y[r0] = a.beta == 0.0 ? a.alpha * s : a.alpha * s + a.beta * a.y[r0];
    return;
  }

  /* CSR-Stream: stage the products (cnt <= ADAPT_NNZ by the builder) */
  const int cnt = (int)cnt64;
  {
    const gs_idx_t *c = a.col + base;
    const double *v = a.val + base;
    gs_idx_t ci[ADAPT_IPT];
    double vi[ADAPT_IPT];
#pragma unroll
    for (int i = 0; i < ADAPT_IPT; ++i) {
      const int k = tid + i * ADAPT_THREADS;
      ci[i] = k < cnt ? ld_stream(&c[k]) : 0;
      vi[i] = k < cnt ? ld_stream(&v[k]) : 0.0;
    }
#pragma unroll
    for (int i = 0; i < ADAPT_IPT; ++i) {
      const int k = tid + i * ADAPT_THREADS;
      if (k < cnt) s_prod[k] = vi[i] * __ldg(&a.x[ci[i]]);
    }
  }
  __syncthreads();
  int G = 1; /* gs_adapt_stream_group */
  while (G < 32 && nrows * (2 * G) <= ADAPT_THREADS) G *= 2;
  const int lane = tid & (G - 1);
  /* The G lanes of a group take the same rows and leave the loop together; other groups of
   * the warp may leave earlier, so the shuffles name only this group's lanes. */
  const unsigned mask = G == 32 ? FULL_MASK : ((1u << G) - 1u) << ((tid & 31) & ~(G - 1));
  for (gs_idx_t r = tid / G; r < nrows; r += ADAPT_THREADS / G) {
    const int lo = (int)((int64_t)rp[r0 + r] - base), hi = (int)((int64_t)rp[r0 + r + 1] - base);
    double t = 0.0;
    for (int k = lo + lane; k < hi; k += G) t += s_prod[k];
    for (int off = G / 2; off > 0; off /= 2) t += __shfl_xor_sync(mask, t, off, G);
    if (lane == 0) {
      const gs_idx_t R = r0 + r;
      a.y[R] = a.beta == 0.0 ? a.alpha * t : a.alpha * t + a.beta * a.y[R];
    }
  }
}

/* VectorL's second step: a warp per long row k sums the partials of its chunks
 * [longs[2k+1], longs[2k+3]) (lane l takes chunks l, l + 32, ...; then a butterfly: a fixed
 * order) and writes y of the row. Every lane of a warp has the same k: warp-uniform loops. */
static __global__ void __launch_bounds__(256)
adapt_fixup_kernel(gs_idx_t nlong, const gs_idx_t *__restrict__ longs,
                   const double *__restrict__ partial, double alpha, double beta,
                   double *__restrict__ y)
{
  const int lane = threadIdx.x & 31;
  const int64_t warps = (int64_t)gridDim.x * (blockDim.x / 32);
  for (int64_t k = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; k < nlong;
       k += warps) {
    const gs_idx_t R = longs[2 * k], c0 = longs[2 * k + 1], c1 = longs[2 * k + 3];
    double s = 0.0;
    for (int64_t c = (int64_t)c0 + lane; c < c1; c += 32) s += partial[c];
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(FULL_MASK, s, o);
    if (lane == 0) y[R] = beta == 0.0 ? alpha * s : alpha * s + beta * y[R];
  }
}

/* ---- backend ---------------------------------------------------------------------------- */

static gs_status_t adapt_apply(gs_context_t *ctx, void *data, gs_op_t op, double alpha,
                               const double *d_x, double beta, double *d_y)
{
  const adapt_data_t *d = (const adapt_data_t *)data;
  cudaStream_t s = ctx->stream;
  if (op != GS_OP_N) /* spmv.c refuses op T first (no FLAG_TRANSPOSE); never a wrong answer */
    return GS_ERROR(GS_ERR_UNSUPPORTED, "backend 'csr-adaptive' has no transpose apply");
  const unsigned g = (unsigned)d->nblocks + (unsigned)d->nchunks; /* <= INT32_MAX (builder) */
  if (g == 0) return GS_SUCCESS; /* m = 0 */
  adapt_args a;
  a.col = d->A.d_col;
  a.val = d->A.d_val;
  a.blocks = d->d_blocks;
  a.chunks = d->d_chunks;
  a.x = d_x;
  a.y = d_y;
  a.partial = d->d_partial;
  a.alpha = alpha;
  a.beta = beta;
  a.nblocks = d->nblocks;
  if (d->A.wide) adapt_kernel<int64_t><<<g, ADAPT_THREADS, 0, s>>>(d->A.d_row_ptr64, a);
  else adapt_kernel<int32_t><<<g, ADAPT_THREADS, 0, s>>>(d->A.d_row_ptr32, a);
  GS_CHECK(GS_CHECK_LAUNCH(s, "adapt_kernel"));
  if (d->nlong == 0) return GS_SUCCESS;
  adapt_fixup_kernel<<<gs_grid_blocks((int64_t)d->nlong * 32, 256), 256, 0, s>>>(
      d->nlong, d->d_longs, d->d_partial, alpha, beta, d_y);
  return GS_CHECK_LAUNCH(s, "adapt_fixup_kernel");
}

static void adapt_destroy(void *data)
{
  adapt_data_t *d = (adapt_data_t *)data;
  if (!d) return;
  gs_dfree(d->ctx, d->d_blocks);
  gs_dfree(d->ctx, d->d_chunks);
  gs_dfree(d->ctx, d->d_longs);
  gs_dfree(d->ctx, d->d_partial);
  free(d);
}

/* The host's split (build=host, the reference): gs_adapt_layout_build on the host CSR,
 * uploaded. */
static gs_status_t adapt_blocks_host(gs_context_t *ctx, gs_matrix_t *A, adapt_data_t *d)
{
  gs_status_t st = GS_SUCCESS;
  gs_adapt_layout_t *L = NULL;
  GS_TRY(gs_adapt_layout_build(&L, gs_matrix_host(A)));
  d->nblocks = L->nblocks;
  d->nchunks = L->nchunks;
  d->nlong = L->nlong;
  d->stream_blocks = L->stream_blocks;
  d->vector_blocks = L->vector_blocks;
  GS_TRY(gs_upload(ctx, (void **)&d->d_blocks, L->blocks,
                   ((size_t)L->nblocks + 1) * sizeof *L->blocks, "csr-adaptive row blocks"));
  if (L->nchunks > 0) {
    GS_TRY(gs_upload(ctx, (void **)&d->d_chunks, L->chunks,
                     2 * (size_t)L->nchunks * sizeof *L->chunks, "csr-adaptive chunks"));
    GS_TRY(gs_upload(ctx, (void **)&d->d_longs, L->longs,
                     2 * ((size_t)L->nlong + 1) * sizeof *L->longs, "csr-adaptive long rows"));
  }
cleanup:
  gs_adapt_layout_destroy(&L);
  return st;
}

/* The same split built on the GPU from the shared device CSR (spmv/rowblock_devbuild.cu):
 * block_end's greedy (budget ADAPT_NNZ, at most ADAPT_ROWS rows), VectorL chunks of the rows
 * longer than ADAPT_LONG (each a block of one row: it exceeds the budget) and the long-row
 * table; the grid check and its message as the host builder's. */
static gs_status_t adapt_blocks_device(gs_context_t *ctx, adapt_data_t *d)
{
  gs_rowblocks_t rb;
  GS_CHECK(gs_rowblocks_build(ctx, &d->A, ADAPT_NNZ, ADAPT_ROWS, ADAPT_LONG, 1, "csr-adaptive",
                              &rb));
  d->nblocks = rb.nblocks;
  d->d_blocks = rb.d_blocks;
  d->nchunks = rb.nchunks;
  d->d_chunks = rb.d_chunks;
  d->nlong = rb.nlong;
  d->d_longs = rb.d_longs;
  d->stream_blocks = rb.nblocks - rb.single_rows;
  d->vector_blocks = rb.single_rows - rb.nlong;
  return GS_SUCCESS;
}

static gs_status_t adapt_prepare(gs_context_t *ctx, gs_matrix_t *A, const gs_spmv_cfg_t *cfg,
                                 void **out, unsigned *caps)
{
  gs_status_t st = GS_SUCCESS;
  (void)caps; /* op N deterministic, capturable: the defaults */
  adapt_data_t *d = (adapt_data_t *)calloc(1, sizeof *d);
  if (!d) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory preparing csr-adaptive");
  d->ctx = ctx;
  GS_TRY(gs_matrix_device_csr(A, &d->A));
  {
    const double t0 = gs_wall_seconds();
    GS_TRY(gs_cfg_host_build(cfg) ? adapt_blocks_host(ctx, A, d) : adapt_blocks_device(ctx, d));
    d->build_ms = 1e3 * (gs_wall_seconds() - t0);
  }
  if (d->nchunks > 0)
    GS_TRY(gs_dmalloc(ctx, (void **)&d->d_partial, (size_t)d->nchunks * sizeof(double),
                      "csr-adaptive partials"));
  *out = d;
  d = NULL;
cleanup:
  adapt_destroy(d);
  return st;
}

static gs_status_t adapt_memory(const void *data, gs_spmv_mem_t *mem)
{
  const adapt_data_t *d = (const adapt_data_t *)data;
  const gs_dcsr_t *A = &d->A;
  const size_t off = A->wide ? sizeof(int64_t) : sizeof(int32_t);
  const size_t nc = (size_t)d->nchunks;
  const size_t tables = ((size_t)d->nblocks + 1) * sizeof(gs_idx_t) + 2 * nc * sizeof(int64_t) +
                        (nc > 0 ? 2 * ((size_t)d->nlong + 1) * sizeof(gs_idx_t) : 0);
  /* The shared CSR is what this backend reads, so it is counted as its device memory. */
  mem->device_bytes = ((size_t)A->m + 1) * off +
                      (size_t)A->nnz * (sizeof(gs_idx_t) + sizeof(double)) + tables +
                      nc * sizeof(double);
  /* op N: CSR + x + y, the tables read once, the partials written and read back. */
  mem->bytes_per_apply = gs_csr_bytes_per_apply(A->m, A->n, A->nnz, off) + tables +
                         2 * nc * sizeof(double);
  mem->bytes_per_apply_t = 0; /* no op T */
  return GS_SUCCESS;
}

static void adapt_describe(const void *data, char *buf, size_t len)
{
  const adapt_data_t *d = (const adapt_data_t *)data;
  snprintf(buf, len,
           "%d stream blocks, %d vector rows, %d long rows in %d chunks; blocks built in %.2f ms",
           d->stream_blocks, d->vector_blocks, d->nlong, d->nchunks, d->build_ms);
}

static gs_status_t adapt_host_apply(const gs_csr_t *A, const gs_spmv_cfg_t *cfg, gs_op_t op,
                                    double alpha, const double *x, double beta, double *y)
{
  gs_adapt_layout_t *L = NULL;
  (void)cfg;
  if (op != GS_OP_N) /* gs_spmv_host_apply refuses op T first (no FLAG_TRANSPOSE) */
    return GS_ERROR(GS_ERR_UNSUPPORTED, "backend 'csr-adaptive' has no transpose apply");
  GS_CHECK(gs_adapt_layout_build(&L, A));
  gs_adapt_apply_host(A, L, alpha, x, beta, y);
  gs_adapt_layout_destroy(&L);
  return GS_SUCCESS;
}

extern "C" const gs_spmv_ops_t gs_spmv_csr_adaptive_ops = {
    GS_SPMV_OPS_VERSION, "csr-adaptive",
    "CSR-Adaptive: row blocks by non-zero budget, CSR-Stream/Vector/VectorL (Greathouse & Daga, "
    "SC14; HiPC15), deterministic; no op T",
    GS_SPMV_FLAG_HOST_LAYOUT | GS_SPMV_FLAG_WIDE | GS_SPMV_FLAG_SHARED_CSR |
        GS_SPMV_FLAG_DEVICE_BUILD,
    NULL, adapt_prepare, adapt_apply, adapt_memory, adapt_destroy, adapt_host_apply,
    adapt_describe};
