/* spmv/csr_kernels.cu: the csr-scalar and csr-vector backends on the matrix's shared device CSR.
 *
 * csr-scalar (Bell & Garland, "Implementing SpMV on Throughput-Oriented Processors", SC09,
 *   section 3.3, "CSR (scalar)"): one thread per row, each walking its row; reads of col/val
 *   are uncoalesced across a warp, so it suits short rows.
 * csr-vector (Bell & Garland, section 3.3, "CSR (vector)", with CSR-smart's width of Anzt et
 *   al., ScalA17, section 3.4): a group of W threads (2, 4, 8, 16 or 32, a divisor
 *   of the warp) per row; lane k reads entries start+k, start+k+W, ... (coalesced within the
 *   group), partial sums meet through a shuffle reduction inside the group. W is the smallest
 *   power of two >= the mean row length, clamped to [2, 32] (CSR-smart); opts->vector_width
 *   overrides it.
 * Transposes (both): y = beta*y first, then each nonzero scatters alpha*a_ij*x_i into y_j with an
 *   atomicAdd (double: sm_60+; float in float precision); correct in any order, not bitwise
 *   deterministic.
 * Grids: the per-row kernels are grid-stride loops over the rows, 64-bit row indices, on
 *   gs_grid_blocks (common_kernels.h); the row-block kernels run one block per row block or chunk
 *   (index widths: the note above the kernels).
 * Precision (gs_precision_t): every kernel is a template on the value type Val it reads and on
 *   the vector type T of x, y, alpha, beta, the sums, the shuffles, the shared-memory partials
 *   and the atomics: <double, double> in double precision (the shared CSR's values), <float,
 *   double> in mixed (prepare rounds the shared values once into a float array of this
 *   backend's own, on the device; each value widens exactly to double before its product: only
 *   the value stream halves, 12 -> 8 bytes an entry with the column index) and <float, float>
 *   in float precision (the same float copy; products, sums, shuffles and float atomicAdd in
 *   float, x and y 4 bytes an entry). One body per algorithm: the instantiations differ in
 *   types only, and the double one is the kernel as it was.
 * Assumptions: row_ptr monotone, columns in 0..n-1 (validated by gs_matrix_create); with
 *   beta == 0, y is written and never read. */
#include <stdio.h>
#include <stdlib.h>

#include "core/error.h"
#include "spmv/common_kernels.h"
#include "spmv/device_util.cuh"
#include "spmv/rowblock_devbuild.h"
#include "spmv/spmv_impl.h"

#define CSR_BLOCK 256

typedef struct csr_data {
  gs_context_t *ctx; /* the context it was prepared on (frees go through it) */
  gs_dcsr_t A;     /* borrowed from the matrix: uploaded once, shared by backends */
  int width;       /* csr-vector threads per row; 1 for csr-scalar */
  gs_idx_t *d_blocks; /* csr-vector blocked path: row bounds of each block (nblocks + 1) */
  gs_idx_t nblocks;   /* 0: plain groups of `width` threads per row */
  int64_t *d_chunks;  /* (row, first entry) of each STREAM_CAP chunk of the long rows */
  gs_idx_t nchunks;
  int sm_count;
  float *d_valf;      /* precision=mixed or float: this backend's float copy of the shared
                         values (nnz), read in place of A.d_val; NULL in double precision */
  size_t vec_bytes;   /* bytes of an entry of x and y: 8, or 4 in float precision */
} csr_data_t;

/* ---- kernels -----------------------------------------------------------------------------
 * Index widths (issue 8). Row loops run in 64 bits, grid-stride over the rows (GS_GRID_STRIDE,
 * or the same arithmetic per group of W threads) on a grid from gs_grid_blocks: the thread
 * number blockIdx.x * blockDim.x + threadIdx.x was an unsigned 32-bit product that wrapped once
 * rows x width reached 2^32 (a 140M-row matrix at width 32 left the rows >= 2^27 unwritten for
 * op N and scattered into wrong entries for op T, with a success status), and a 32-bit
 * row + stride passes 2^31 once m > 2^30. That costs one 64-bit add per row, not per entry.
 * Offsets: every kernel is a template on the row-pointer type O of the shared device CSR
 * (gs_dcsr_t): int32_t when nnz <= 2^31 - 1, int64_t for a wide matrix. Entry positions p are
 * csr_pos<O>::type: unsigned 32 bits for int32_t offsets, so the per-entry (hot) loops keep
 * 32-bit arithmetic (every p read is < row_ptr[m] = nnz <= 2^31 - 1; a loop that steps p past
 * the row's end by up to 128 (p += W, 2W, G, STREAM_THREADS) keeps p unsigned: p < nnz + 128 <
 * 2^32 never wraps, where a signed p would pass INT32_MAX (undefined) for nnz within 128 of it),
 * and signed 64 bits for int64_t offsets. */
template <typename O> struct csr_pos;
template <> struct csr_pos<int32_t> { typedef unsigned type; };
template <> struct csr_pos<int64_t> { typedef long long type; };

template <typename O, typename Val, typename T>
static __global__ void __launch_bounds__(CSR_BLOCK)
csr_scalar_kernel(gs_idx_t m, const O *__restrict__ rp, const gs_idx_t *__restrict__ col,
                  const Val *__restrict__ val, const T *__restrict__ x, T alpha, T beta,
                  T *__restrict__ y)
{
  GS_GRID_STRIDE(i, m) {
    T s = T(0);
    /* ++p stops at rp[i + 1] <= nnz, which O holds: a signed p of type O never overflows.
     * Keep this loop's exact form: a signed induction variable compared with rp[i + 1] each
     * step is what the compiler unrolls (an unsigned 32-bit p made the kernel 1.6x slower on
     * the H100, a hoisted bound 5%). */
    for (O p = rp[i]; p < rp[i + 1]; ++p) s += (T)val[p] * __ldg(&x[col[p]]);
    y[i] = beta == T(0) ? alpha * s : alpha * s + beta * y[i];
  }
}

template <int W, typename O, typename Val, typename T>
static __global__ void __launch_bounds__(CSR_BLOCK)
csr_vector_kernel(gs_idx_t m, const O *__restrict__ rp, const gs_idx_t *__restrict__ col,
                  const Val *__restrict__ val, const T *__restrict__ x, T alpha, T beta,
                  T *__restrict__ y)
{
  typedef typename csr_pos<O>::type P;
  const int lane = threadIdx.x & (W - 1);                          /* lane inside the group */
  const int64_t groups = (int64_t)gridDim.x * (blockDim.x / W);
  /* All W lanes of a group take the same rows and leave the loop together; other groups of the
   * same warp may leave earlier, so the shuffles name only this group's lanes. */
  const unsigned mask = W == 32 ? 0xffffffffu
                                : ((1u << W) - 1u) << ((threadIdx.x & 31) & ~(unsigned)(W - 1));
  for (int64_t i = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / W; i < m; i += groups) {
    const P start = (P)rp[i], end = (P)rp[i + 1];
    /* Two independent partial sums: two loads in flight per lane per step. */
    T s0 = T(0), s1 = T(0);
    P p = start + lane; /* p + 2W < nnz + 64: no wrap (see above) */
    for (; p + W < end; p += 2 * W) {
      s0 += (T)ld_stream(&val[p]) * __ldg(&x[ld_stream(&col[p])]);
      s1 += (T)ld_stream(&val[p + W]) * __ldg(&x[ld_stream(&col[p + W])]);
    }
    if (p < end) s0 += (T)ld_stream(&val[p]) * __ldg(&x[ld_stream(&col[p])]);
    T s = s0 + s1;
    for (int off = W / 2; off > 0; off /= 2) s += __shfl_xor_sync(mask, s, off, W);
    if (lane == 0) y[i] = beta == T(0) ? alpha * s : alpha * s + beta * y[i];
  }
}

/* csr-vector's blocked path (CSR-Adaptive's CSR-Stream, Greathouse & Daga, SC14, over Bell &
 * Garland's CSR vector): prepare cuts the rows into blocks whose entries fit in shared memory
 * (at most STREAM_CAP entries and STREAM_ROWS rows), on the GPU from the shared CSR
 * (spmv/rowblock_devbuild.cu; build=host: the host greedy stream_blocks, the same bounds). A
 * block of STREAM_N_THREADS threads first stages the products val * x of its entries in shared
 * memory: each thread issues all its STREAM_CAP / STREAM_N_THREADS column and value loads
 * (coalesced), then all its gathers of x, so that they are in flight together; then groups of
 * G threads each sum one row's products in entry order, G the largest power of two (<= 32) with
 * rows * G <= threads, so that short rows get one thread each. Mixed precision loads float values and stages double products.
 *   History (measured, same process): an earlier kernel staged columns and values and gathered
 * x in the reduction, a thread a row, so that neighbouring threads gathered neighbouring x (a
 * warp gathering in entry order touches ~6x more cache lines of x on a 27-point stencil); its
 * gathers, one at a time and then eight deep, waited on each other. Staging the products with
 * every load in flight beat it everywhere (H200, run 120; that kernel with eight-deep gathers ->
 * this one, median us): 27-point 100^3 113.6 -> 103.9, Pareto rows 117.5 -> 85.9 (mixed 108.3 ->
 * 80.4), power-law rows 252.9 -> 174.2 (227.1 -> 168.2), 5-point 1000^2 34.0 -> 28.0, bcsstk16
 * 10.5 -> 8.8; equal on cage10 and on the 27-point mixed (89.3, 89.8). 128 threads a block
 * (16 entries each) ran 1.1-1.4x slower than 256.
 * A row longer than STREAM_CAP gets a block of its own that only applies beta to its y entry;
 * the row itself is cut into chunks of STREAM_CAP entries, one block each (csr_chunk_kernel,
 * launched next), whose sums are added to y with atomics: a 100k-entry row left to one block
 * kept Pareto rows at 0.45x cusparse-csr. Such rows are summed in a run-dependent order. */
#define STREAM_THREADS 128   /* op T row blocks and the long-row chunks */
#define STREAM_N_THREADS 256 /* op N row blocks */
#define STREAM_CAP 2048
#define STREAM_ROWS 1024

template <typename O, typename Val, typename T>
static __global__ void __launch_bounds__(STREAM_N_THREADS)
csr_stream_kernel(const O *__restrict__ rp, const gs_idx_t *__restrict__ col,
                  const Val *__restrict__ val, const gs_idx_t *__restrict__ blocks,
                  const T *__restrict__ x, T alpha, T beta, T *__restrict__ y)
{
  constexpr int TH = STREAM_N_THREADS, IPT = STREAM_CAP / TH;
  __shared__ T s_prod[STREAM_CAP]; /* the block's products val * x, in entry order */
  /* One block per row block (nblocks <= m < 2^31, within CUDA's grid limit), r0 + r < r1 <= m;
   * base in O; positions inside the block k < cnt <= STREAM_CAP in 32 bits. */
  const int tid = threadIdx.x;
  const gs_idx_t r0 = blocks[blockIdx.x], r1 = blocks[blockIdx.x + 1];
  const gs_idx_t nrows = r1 - r0;
  const O base = rp[r0];

  if (rp[r1] - base > STREAM_CAP) { /* one long row: its chunks add into y[r0] (csr_chunk_kernel) */
    if (tid == 0) y[r0] = beta == T(0) ? T(0) : beta * y[r0];
    return;
  }
  const int cnt = (int)(rp[r1] - base);
  {
    const gs_idx_t *c = col + base;
    const Val *v = val + base;
    gs_idx_t ci[IPT];
    Val vi[IPT];
#pragma unroll
    for (int i = 0; i < IPT; ++i) { /* every load first: IPT of each in flight */
      const int k = tid + i * TH;
      ci[i] = k < cnt ? ld_stream(&c[k]) : 0;
      vi[i] = k < cnt ? ld_stream(&v[k]) : Val(0);
    }
#pragma unroll
    for (int i = 0; i < IPT; ++i) {
      const int k = tid + i * TH;
      if (k < cnt) s_prod[k] = (T)vi[i] * __ldg(&x[ci[i]]);
    }
  }
  __syncthreads();
  int G = 1; /* threads per row in this block */
  while (G < 32 && nrows * (2 * G) <= TH) G *= 2;
  const int lane = tid & (G - 1);
  const unsigned mask = G == 32 ? 0xffffffffu : ((1u << G) - 1u) << ((tid & 31) & ~(G - 1));
  for (gs_idx_t r = tid / G; r < nrows; r += TH / G) {
    const int lo = (int)(rp[r0 + r] - base), hi = (int)(rp[r0 + r + 1] - base);
    T t = T(0);
    for (int k = lo + lane; k < hi; k += G) t += s_prod[k];
    for (int off = G / 2; off > 0; off /= 2) t += __shfl_xor_sync(mask, t, off, G);
    if (lane == 0) y[r0 + r] = beta == T(0) ? alpha * t : alpha * t + beta * y[r0 + r];
  }
}

/* op = T: a group of W threads per row scatters the row into y with atomics (W = 1: scalar).
 * Rows in 64 bits, entries as csr_pos<O> (see the note on index widths above). */
template <typename O, typename Val, typename T>
static __global__ void __launch_bounds__(CSR_BLOCK)
csr_transpose_kernel(gs_idx_t m, int W, const O *__restrict__ rp,
                     const gs_idx_t *__restrict__ col, const Val *__restrict__ val,
                     const T *__restrict__ x, T alpha, T *__restrict__ y)
{
  typedef typename csr_pos<O>::type P;
  const unsigned lane = threadIdx.x % W;
  const int64_t groups = (int64_t)gridDim.x * (blockDim.x / W);
  for (int64_t i = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / W; i < m; i += groups) {
    const T ax = alpha * x[i];
    if (ax == T(0)) continue; /* nothing to add (and no 0*Inf from a zero x entry) */
    const P end = (P)rp[i + 1];
    for (P p = (P)rp[i] + lane; p < end; p += W) atomicAdd(&y[col[p]], (T)val[p] * ax);
  }
}

/* Chunks of rows longer than STREAM_CAP: chunk c covers entries [start, min(start + CAP, end of
 * row)) of row `row` (chunks[2c], chunks[2c+1], 64-bit). op = N: the block's sum times alpha is
 * added to y[row] (already scaled by beta). op = T: the block scatters alpha*x[row]*a_rj into
 * y[j]. */
template <typename O, typename Val, typename T>
static __global__ void __launch_bounds__(STREAM_THREADS)
csr_chunk_kernel(int transpose, const O *__restrict__ rp, const gs_idx_t *__restrict__ col,
                 const Val *__restrict__ val, const int64_t *__restrict__ chunks,
                 const T *__restrict__ x, T alpha, T *__restrict__ y)
{
  typedef typename csr_pos<O>::type P;
  __shared__ T s_part[STREAM_THREADS / 32];
  const int tid = threadIdx.x;
  /* one block per chunk: 2 * blockIdx.x < 2 * nchunks <= nnz / 1024, no wrap */
  const gs_idx_t row = (gs_idx_t)chunks[2 * blockIdx.x];
  const P start = (P)chunks[2 * blockIdx.x + 1];
  const P stop = (P)min((long long)start + STREAM_CAP, (long long)rp[row + 1]);
  if (transpose) {
    const T ax = alpha * x[row];
    if (ax == T(0)) return;
    for (P p = start + tid; p < stop; p += STREAM_THREADS)
      atomicAdd(&y[col[p]], (T)val[p] * ax);
    return;
  }
  T t = T(0);
  for (P p = start + tid; p < stop; p += STREAM_THREADS)
    t += (T)ld_stream(&val[p]) * __ldg(&x[ld_stream(&col[p])]);
  for (int off = 16; off > 0; off /= 2) t += __shfl_xor_sync(0xffffffffu, t, off);
  if ((tid & 31) == 0) s_part[tid / 32] = t;
  __syncthreads();
  if (tid == 0) {
    T sum = T(0);
    for (int w = 0; w < STREAM_THREADS / 32; ++w) sum += s_part[w];
    atomicAdd(&y[row], alpha * sum);
  }
}

/* op = T on the row blocks: as csr_stream_kernel's work split, without staging (each entry is
 * used once): a long row's block scatters it with all its threads; other blocks scatter each
 * row with a group of G threads. Balances rows that the per-row groups left to one group. */
template <typename O, typename Val, typename T>
static __global__ void __launch_bounds__(STREAM_THREADS)
csr_stream_transpose_kernel(const O *__restrict__ rp, const gs_idx_t *__restrict__ col,
                            const Val *__restrict__ val, const gs_idx_t *__restrict__ blocks,
                            const T *__restrict__ x, T alpha, T *__restrict__ y)
{
  typedef typename csr_pos<O>::type P;
  const int tid = threadIdx.x;
  const gs_idx_t r0 = blocks[blockIdx.x], r1 = blocks[blockIdx.x + 1], nrows = r1 - r0;
  if (rp[r1] - rp[r0] > STREAM_CAP) return; /* a long row: its chunks scatter it */
  int G = 1;
  while (G < STREAM_THREADS && nrows * (2 * G) <= STREAM_THREADS) G *= 2;
  for (gs_idx_t r = tid / G; r < nrows; r += STREAM_THREADS / G) {
    const T ax = alpha * x[r0 + r];
    if (ax == T(0)) continue;
    const P end = (P)rp[r0 + r + 1]; /* p + G < nnz + 128: no wrap */
    for (P p = (P)rp[r0 + r] + tid % G; p < end; p += G)
      atomicAdd(&y[col[p]], (T)val[p] * ax);
  }
}

/* ---- launchers ----------------------------------------------------------------------------- */

template <typename O, typename Val, typename T>
static gs_status_t launch_vector(cudaStream_t s, const csr_data_t *d, const O *rp,
                                 const Val *val, T alpha, const T *x, T beta, T *y)
{
  const gs_dcsr_t *A = &d->A;
  if (d->nblocks > 0) {
    csr_stream_kernel<O, Val, T><<<d->nblocks, STREAM_N_THREADS, 0, s>>>(rp, A->d_col, val,
                                                                        d->d_blocks, x, alpha,
                                                                        beta, y);
    GS_CHECK(GS_CHECK_LAUNCH(s, "csr_stream_kernel"));
    if (d->nchunks == 0) return GS_SUCCESS;
    csr_chunk_kernel<O, Val, T><<<d->nchunks, STREAM_THREADS, 0, s>>>(0, rp, A->d_col, val,
                                                                     d->d_chunks, x, alpha, y);
    return GS_CHECK_LAUNCH(s, "csr_chunk_kernel");
  }
  const unsigned g = gs_grid_blocks((int64_t)A->m * d->width, CSR_BLOCK); /* grid-stride rows */
#define CSR_VEC(W)                                                                             \
  csr_vector_kernel<W, O, Val, T><<<g, CSR_BLOCK, 0, s>>>(A->m, rp, A->d_col, val, x, alpha,  \
                                                          beta, y)
  switch (d->width) {
  case 2: CSR_VEC(2); break;
  case 4: CSR_VEC(4); break;
  case 8: CSR_VEC(8); break;
  case 16: CSR_VEC(16); break;
  case 32: CSR_VEC(32); break;
  default:
    csr_scalar_kernel<O, Val, T><<<g, CSR_BLOCK, 0, s>>>(A->m, rp, A->d_col, val, x, alpha,
                                                         beta, y);
  }
#undef CSR_VEC
  return GS_CHECK_LAUNCH(s, "csr_vector_kernel");
}

template <typename O, typename Val, typename T>
static gs_status_t launch_transpose(cudaStream_t s, const csr_data_t *d, const O *rp,
                                    const Val *val, T alpha, const T *x, T *y)
{
  if (d->nblocks > 0) {
    csr_stream_transpose_kernel<O, Val, T><<<d->nblocks, STREAM_THREADS, 0, s>>>(
        rp, d->A.d_col, val, d->d_blocks, x, alpha, y);
    GS_CHECK(GS_CHECK_LAUNCH(s, "csr_stream_transpose_kernel"));
    if (d->nchunks == 0) return GS_SUCCESS;
    csr_chunk_kernel<O, Val, T><<<d->nchunks, STREAM_THREADS, 0, s>>>(1, rp, d->A.d_col, val,
                                                                     d->d_chunks, x, alpha, y);
    return GS_CHECK_LAUNCH(s, "csr_chunk_kernel");
  }
  csr_transpose_kernel<O, Val, T><<<gs_grid_blocks((int64_t)d->A.m * d->width, CSR_BLOCK),
                                    CSR_BLOCK, 0, s>>>(d->A.m, d->width, rp, d->A.d_col, val, x,
                                                       alpha, y);
  return GS_CHECK_LAUNCH(s, "csr_transpose_kernel");
}

/* The value array the kernels read (the shared double one, or this backend's float copy) and
 * the vector type T (double, or float in float precision) pick the instantiation; the offsets'
 * width the other template argument. */
template <typename Val, typename T>
static gs_status_t csr_apply_values(cudaStream_t s, const csr_data_t *d, const Val *val,
                                    gs_op_t op, T alpha, const T *d_x, T beta, T *d_y)
{
  if (op == GS_OP_N)
    return d->A.wide ? launch_vector(s, d, d->A.d_row_ptr64, val, alpha, d_x, beta, d_y)
                     : launch_vector(s, d, d->A.d_row_ptr32, val, alpha, d_x, beta, d_y);
  GS_CHECK(gs_launch_scale(s, d->A.n, beta, d_y));
  if (d->A.nnz == 0 || alpha == T(0)) return GS_SUCCESS;
  return d->A.wide ? launch_transpose(s, d, d->A.d_row_ptr64, val, alpha, d_x, d_y)
                   : launch_transpose(s, d, d->A.d_row_ptr32, val, alpha, d_x, d_y);
}

static gs_status_t csr_apply(gs_context_t *ctx, void *data, gs_op_t op, double alpha,
                             const double *d_x, double beta, double *d_y)
{
  const csr_data_t *d = (const csr_data_t *)data;
  if (d->d_valf) return csr_apply_values(ctx->stream, d, d->d_valf, op, alpha, d_x, beta, d_y);
  return csr_apply_values(ctx->stream, d, d->A.d_val, op, alpha, d_x, beta, d_y);
}

/* precision=float: the float copy of the values, float vectors (spmv.c calls this slot only for
 * a product prepared in float precision, whose prepare made d_valf when nnz > 0; with nnz = 0
 * no kernel reads a value). */
static gs_status_t csr_apply_f32(gs_context_t *ctx, void *data, gs_op_t op, float alpha,
                                 const float *d_x, float beta, float *d_y)
{
  const csr_data_t *d = (const csr_data_t *)data;
  return csr_apply_values(ctx->stream, d, (const float *)d->d_valf, op, alpha, d_x, beta, d_y);
}

/* CSR-smart's rule (Anzt et al., 3.4): smallest power of two >= mean row length, in [2, 32]. */
static int smart_width(const gs_csr_t *h)
{
  double mean = h->m > 0 ? (double)h->nnz / h->m : 0.0;
  int w = 2;
  while (w < 32 && w < mean) w *= 2;
  return w;
}

/* Row blocks hold at most STREAM_THREADS / G rows, G the power of two with
 * mean * STREAM_THREADS / G <= CAP: the kernel then runs G threads per row and keeps every
 * thread busy (with one row per thread and 27 entries a row, 2048 entries hold only 75 rows,
 * leaving 53 of 128 threads idle); STREAM_ROWS when G = 1. Shared by the host and device
 * builds, from m and nnz only. */
static gs_idx_t stream_max_rows(gs_idx_t m, gs_off_t nnz)
{
  const double mean = m > 0 ? (double)nnz / m : 0.0;
  int G = 1;
  while (G < 32 && mean * STREAM_THREADS / G > STREAM_CAP) G *= 2;
  return G == 1 ? STREAM_ROWS : STREAM_THREADS / G;
}

/* Cuts rows into blocks whose entries fit STREAM_CAP (a longer row is a block of its own), of
 * at most stream_max_rows rows: the host's greedy, the reference of build=host (the default
 * build, spmv/rowblock_devbuild.cu, gives the same bounds on the GPU). Returns the block bounds
 * (malloc'd, nblocks + 1 entries). */
static gs_idx_t *stream_blocks(const gs_csr_t *h, gs_idx_t *nblocks)
{
  const gs_idx_t max_rows = stream_max_rows(h->m, h->nnz);
  size_t cap = 1024, n = 0; /* size_t: doubling a 32-bit cap would overflow past 2^30 blocks */
  gs_idx_t *b = (gs_idx_t *)malloc(cap * sizeof *b);
  if (!b) return NULL;
  b[n++] = 0;
  for (gs_idx_t r = 0; r < h->m;) {
    const gs_idx_t start = r;
    while (r < h->m && r - start < max_rows &&
           h->row_ptr[r + 1] - h->row_ptr[start] <= STREAM_CAP)
      ++r;
    if (r == start) ++r; /* a row longer than STREAM_CAP */
    if (n == cap) {
      gs_idx_t *nb = (gs_idx_t *)realloc(b, (cap *= 2) * sizeof *b);
      if (!nb) {
        free(b);
        return NULL;
      }
      b = nb;
    }
    b[n++] = r;
  }
  *nblocks = (gs_idx_t)(n - 1); /* <= m */
  return b;
}

/* (row, first entry) pairs cutting every row longer than STREAM_CAP into STREAM_CAP chunks
 * (malloc'd, 2 * nchunks entries; never NULL on success, even when there are none). Counts and
 * positions in 64 bits: len + CAP - 1 and p + CAP pass 2^31 - 1 when nnz is near it, and a
 * wide matrix's positions do not fit 32 bits at all. */
static int64_t *long_row_chunks(const gs_csr_t *h, gs_idx_t *nchunks)
{
  int64_t n = 0;
  for (gs_idx_t r = 0; r < h->m; ++r) {
    const gs_off_t len = h->row_ptr[r + 1] - h->row_ptr[r];
    if (len > STREAM_CAP) n += (len + STREAM_CAP - 1) / STREAM_CAP;
  }
  int64_t *c = (int64_t *)malloc((size_t)(2 * n + 1) * sizeof *c);
  if (!c) return NULL;
  int64_t k = 0;
  for (gs_idx_t r = 0; r < h->m; ++r)
    if (h->row_ptr[r + 1] - h->row_ptr[r] > STREAM_CAP)
      for (int64_t p = h->row_ptr[r]; p < h->row_ptr[r + 1]; p += STREAM_CAP) {
        c[k++] = r;
        c[k++] = p;
      }
  *nchunks = (gs_idx_t)n;
  return c;
}

/* Row blocks pay off where neighbouring rows gather neighbouring entries of x (few occupied
 * diagonals, as stencils) or where row lengths vary (blocks balance them); on regular rows with
 * scattered columns the plain CSR-smart groups (Anzt et al., 3.4) were faster on the H100. */
static int want_blocks(const gs_features_t *f)
{
  if (f->rows == 0) return 0;
  if (f->row_std > 0.5 * f->row_mean) return 1;
  return (double)f->diagonals <= 8.0 * ((double)f->row_max + 1.0);
}

static void csr_destroy(void *data);

/* The shared device CSR, and in mixed and float precision a float copy of its values rounded on
 * the device (the shared CSR stays double for the other backends). */
static gs_status_t csr_prepare_common(gs_context_t *ctx, gs_matrix_t *A, int width,
                                      const gs_spmv_cfg_t *cfg, void **out, unsigned *caps)
{
  *caps &= ~(unsigned)GS_SPMV_CAP_DETERMINISTIC_T; /* op T adds into y with atomics */
  gs_status_t st = GS_SUCCESS;
  csr_data_t *d = (csr_data_t *)calloc(1, sizeof *d);
  if (!d) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory preparing CSR");
  d->ctx = ctx;
  d->width = width;
  d->sm_count = ctx->sm_count;
  d->vec_bytes = cfg->precision == GS_PRECISION_FLOAT ? sizeof(float) : sizeof(double);
  GS_TRY(gs_matrix_device_csr(A, &d->A));
  if (gs_cfg_float_values(cfg)) GS_TRY(gs_dcsr_round_values(ctx, &d->A, &d->d_valf));
  *out = d;
  d = NULL;
cleanup:
  csr_destroy(d);
  return st;
}

static gs_status_t csr_scalar_prepare(gs_context_t *ctx, gs_matrix_t *A, const gs_spmv_cfg_t *cfg,
                                      void **out, unsigned *caps)
{
  return csr_prepare_common(ctx, A, 1, cfg, out, caps);
}

/* csr-vector's options (gs_spmv_cfg_t order). */
enum { CSR_OPT_WIDTH };
static const gs_spmv_option_t csr_vector_options[] = {
    {"width", "threads per row (1-32, power of two); 0: row blocks or CSR-smart's rule",
     GS_OPTK_POW2, 0, 0, 32},
    GS_SPMV_OPTION_END};

/* The host's row blocks (build=host, the reference): stream_blocks and long_row_chunks on the
 * host CSR, uploaded. */
static gs_status_t csr_blocks_host(gs_context_t *ctx, const gs_csr_t *h, csr_data_t *d)
{
  gs_idx_t *hb = stream_blocks(h, &d->nblocks);
  int64_t *hc = NULL;
  gs_status_t st;
  if (hb) hc = long_row_chunks(h, &d->nchunks);
  if (!hb || !hc) {
    st = GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory cutting CSR row blocks");
  } else {
    st = gs_upload(ctx, (void **)&d->d_blocks, hb, ((size_t)d->nblocks + 1) * sizeof *hb,
                   "CSR row blocks");
    if (st == GS_SUCCESS)
      st = gs_upload(ctx, (void **)&d->d_chunks, hc, 2 * (size_t)d->nchunks * sizeof *hc,
                     "CSR long-row chunks");
  }
  free(hb);
  free(hc);
  return st;
}

/* The same blocks built on the GPU from the shared device CSR (spmv/rowblock_devbuild.cu):
 * stream_blocks' greedy with its row cap, and chunks of the rows longer than STREAM_CAP. */
static gs_status_t csr_blocks_device(gs_context_t *ctx, csr_data_t *d)
{
  gs_rowblocks_t rb;
  GS_CHECK(gs_rowblocks_build(ctx, &d->A, STREAM_CAP, stream_max_rows(d->A.m, d->A.nnz),
                              STREAM_CAP, 0, NULL, &rb));
  d->nblocks = rb.nblocks;
  d->d_blocks = rb.d_blocks;
  d->nchunks = rb.nchunks;
  d->d_chunks = rb.d_chunks;
  return GS_SUCCESS;
}

static gs_status_t csr_vector_prepare(gs_context_t *ctx, gs_matrix_t *A, const gs_spmv_cfg_t *cfg,
                                      void **out, unsigned *caps)
{
  const gs_csr_t *h = gs_matrix_host(A);
  const int width = (int)cfg->v[CSR_OPT_WIDTH];
  int w = width > 0 ? width : smart_width(h);
  gs_status_t st = csr_prepare_common(ctx, A, w, cfg, out, caps);
  if (st != GS_SUCCESS || width > 0 || !want_blocks(gs_matrix_features(A))) return st;
  csr_data_t *d = (csr_data_t *)*out;
  st = gs_cfg_host_build(cfg) ? csr_blocks_host(ctx, h, d) : csr_blocks_device(ctx, d);
  if (st != GS_SUCCESS) {
    csr_destroy(d);
    *out = NULL;
  } else if (d->nchunks > 0) {
    *caps &= ~(unsigned)GS_SPMV_CAP_DETERMINISTIC; /* chunks of long rows meet by atomics */
  }
  return st;
}

static gs_status_t csr_memory(const void *data, gs_spmv_mem_t *mem)
{
  const csr_data_t *d = (const csr_data_t *)data;
  const gs_dcsr_t *A = &d->A;
  /* The shared CSR is what this backend reads, so it is counted as its device memory. */
  const size_t off = A->wide ? sizeof(int64_t) : sizeof(int32_t), vec = d->vec_bytes;
  /* mixed and float: the float copy is held besides the shared CSR and read instead of its
   * double values (float precision also reads and writes 4-byte vector entries) */
  const size_t val = d->d_valf ? sizeof(float) : sizeof(double);
  mem->device_bytes = ((size_t)A->m + 1) * off +
                      (size_t)A->nnz * (sizeof(gs_idx_t) + sizeof(double)) +
                      (d->d_valf ? (size_t)A->nnz * sizeof(float) : 0);
  mem->bytes_per_apply = gs_csr_bytes_per_apply_typed(A->m, A->n, A->nnz, off, val, vec);
  if (d->nblocks > 0) { /* block bounds and chunks are held and read once per product */
    const size_t extra = ((size_t)d->nblocks + 1) * sizeof(gs_idx_t) +
                         2 * (size_t)d->nchunks * sizeof(int64_t);
    mem->device_bytes += extra;
    mem->bytes_per_apply += extra;
  }
  /* Transpose: CSR read once (values in the precision read), x read once, y scaled (read +
   * write) then updated by atomics (at least one read-modify-write of each y entry). */
  const size_t read = ((size_t)A->m + 1) * off + (size_t)A->nnz * (sizeof(gs_idx_t) + val) +
                      ((size_t)d->nblocks + (d->nblocks > 0)) * sizeof(gs_idx_t) +
                      2 * (size_t)d->nchunks * sizeof(int64_t);
  mem->bytes_per_apply_t = read + (size_t)A->m * vec + 3 * (size_t)A->n * vec;
  return GS_SUCCESS;
}

static void csr_destroy(void *data)
{
  if (data) {
    csr_data_t *d = (csr_data_t *)data;
    gs_dfree(d->ctx, d->d_blocks);
    gs_dfree(d->ctx, d->d_chunks);
    gs_dfree(d->ctx, d->d_valf);
  }
  free(data);
}

static void csr_describe(const void *data, char *buf, size_t len)
{
  const csr_data_t *d = (const csr_data_t *)data;
  if (d->nblocks > 0)
    snprintf(buf, len, "%d row blocks staged in shared memory (%d entries max), %d long-row chunks",
             d->nblocks, STREAM_CAP, d->nchunks);
  else if (d->width == 1) snprintf(buf, len, "one thread per row");
  else snprintf(buf, len, "%d threads per row", d->width);
}

extern "C" const gs_spmv_ops_t gs_spmv_csr_scalar_ops = {
    GS_SPMV_OPS_VERSION, "csr-scalar",
    "CSR, one thread per row (Bell & Garland, SC09, 3.3); transpose by atomics",
    GS_SPMV_FLAG_TRANSPOSE | GS_SPMV_FLAG_WIDE | GS_SPMV_FLAG_SHARED_CSR |
        GS_SPMV_FLAG_LIGHT | GS_SPMV_FLAG_MIXED | GS_SPMV_FLAG_FLOAT, NULL,
    csr_scalar_prepare, csr_apply, csr_memory, csr_destroy, NULL, csr_describe, csr_apply_f32};

extern "C" const gs_spmv_ops_t gs_spmv_csr_vector_ops = {
    GS_SPMV_OPS_VERSION, "csr-vector",
    "CSR vector: row blocks staged in shared memory, 1-32 threads per row; transpose by atomics",
    GS_SPMV_FLAG_TRANSPOSE | GS_SPMV_FLAG_WIDE | GS_SPMV_FLAG_SHARED_CSR |
        GS_SPMV_FLAG_LIGHT | GS_SPMV_FLAG_MIXED | GS_SPMV_FLAG_FLOAT | GS_SPMV_FLAG_DEVICE_BUILD,
    csr_vector_options,
    csr_vector_prepare, csr_apply, csr_memory, csr_destroy, NULL, csr_describe, csr_apply_f32};
