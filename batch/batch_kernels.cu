/* batch/batch_kernels.cu: the batched SpMV kernels of Anzt, Collins, Dongarra, Flegar and
 * Quintana-Orti, "Flexible Batched Sparse Matrix-Vector Product on GPUs" (ScalA17), and their
 * gs_batch_ops_t tables.
 *
 * Work division (section 3.2): one thread block per problem (grid = N blocks), every kernel but
 *   batch-csr-warp's packed warps (below); a block's problem's x is first copied into shared
 *   memory when it has at most GS_BATCH_XCAP columns (else read from global memory), so the
 *   product's gathers hit shared memory.
 *   batch-csr-scalar  a thread per row (section 3.4, CSR-scalar)
 *   batch-csr-vector  a warp per row, shuffle reduction (section 3.4, CSR-vector)
 *   batch-csr-smart   W threads per row, W = the smallest power of two >= the problem's mean row
 *                     length (<= 32), computed per problem inside the kernel (section 3.4)
 *   batch-csr-i       warp w of the block takes entries [w nnz / nw, (w + 1) nnz / nw) of its
 *                     problem (balanced whatever the rows), starting at a row precomputed once
 *                     at prepare (section 3.5); lanes find their rows by walking the row pointers
 *   batch-coo         warps take 32-entry chunks, the row of each entry is stored (section 3.3)
 *   batch-ell         a thread per row over the problem's padded, column-major ELL (section 3.6)
 *   batch-csr-scalar16, batch-csr-stream16
 *                     batch-csr-scalar and batch-csr-stream (below) reading 16-bit copies of the
 *                     row pointers and columns (gs_batch_idx16_build), for batches whose every
 *                     problem has at most 65,535 entries and 65,536 columns (others refused):
 *                     10 bytes an entry instead of 12, 2 a row pointer instead of 4
 *   batch-csr-warp    ours, beyond the paper's one block per problem: in batches of many
 *                     problems, each of at most GS_BATCH_WARP_ROWS rows takes ONE warp, eight to
 *                     a block (no barrier, x through the read-only path); larger problems keep a
 *                     block (x staged). Either way a warp works in tiles of 32 rows: one
 *                     coalesced load brings the tile's 33 row pointers into the lanes, so rows
 *                     find their bounds by shuffles instead of a dependent load each; W lanes a
 *                     row (CSR-smart's width), two rows per group at once (two independent load
 *                     chains in flight), the tile's 32 sums gathered into lanes by shuffles and
 *                     stored with one coalesced write. The schedule (which problem runs where,
 *                     largest first) is built at prepare (gs_batch_warp_schedule).
 * The entry-parallel kernels (csr-i, coo) meet rows split between lanes and warps with a warp
 * segmented sum and one atomic per run of a row; their sums go to a shared-memory copy of y when
 * the problem has at most GS_BATCH_YCAP rows (shared atomics; y written once at the end), else
 * straight to y in global memory after y = beta y.
 * Launch shape: threads per block = a power of two in [32, 256] from the batch's mean work per
 *   problem (rows, rows x W, or entries), fixed at prepare; batch-csr-warp 256 (8 warps).
 * Assumptions: the batch's CSR is valid (checked at gs_batch_create), rows sorted by position in
 *   row pointers; with beta == 0 y is written and never read; x and y do not overlap.
 * Byte models (gs_batch_mem_t.bytes_per_apply, beta = 0): CSR kinds 4 (m + 1) + 12 nnz + 8 n +
 *   8 m (the 16-bit kinds 2 (m + 1) + 10 nnz + 8 n + 8 m); csr-i adds 4 (nw + 1) per problem, csr-warp its schedule (4 bytes a problem); coo
 *   16 nnz + 8 n + 8 m; ell 12 padded + 8 n + 8 m. */
#include <stdio.h>
#include <stdlib.h>

#include "batch/batch_device.cuh"
#include "core/context_impl.h"
#include "core/error.h"
#include "spmv/common_kernels.h"
#include "spmv/device_util.cuh"

#define GS_BATCH_XCAP 3072 /* doubles of x staged per block (24 KiB) */
#define GS_BATCH_YCAP 2048 /* doubles of y accumulated per block by csr-i and coo (16 KiB) */

enum { MODE_SCALAR = 0, MODE_VECTOR = 1, MODE_SMART = 2, MODE_WARP = 3, MODE_STREAM = 4 };
/* kind GS_BATCH_K_CSR16 runs MODE_SCALAR or MODE_STREAM on the 16-bit index copies */

typedef struct batch_data {
  gs_context_t *ctx;
  int kind;        /* GS_BATCH_K_* */
  int mode;        /* csr kernels: MODE_* */
  int threads;     /* per block */
  int nwarps;      /* csr-i: warps per block, the start table's width - 1 */
  int32_t xcap, ycap; /* doubles of shared memory reserved for x and for y */
  void *d_extra;   /* one allocation for the kernel's own layout */
  size_t extra_bytes;
  const int32_t *d_rows;  /* coo: row of each entry */
  const int32_t *d_start; /* csr-i: start rows */
  const int32_t *d_sched; /* csr-warp: the schedule (gs_batch_warp_schedule); csr-stream: the
                             problems in decreasing work (gs_batch_work_order) */
  const uint16_t *d_rp16, *d_ci16; /* kind GS_BATCH_K_CSR16: gs_batch_idx16_build's arrays */
  int32_t nlarge, nwblocks; /* csr-warp: problems run by a block, blocks of warp problems */
  const int64_t *d_eoff;  /* ell: per-problem offsets */
  const int32_t *d_eci;
  const double *d_eval;
  size_t bytes_per_apply;
  double fill;     /* ell: padded / nnz */
} batch_data_t;

/* ---- kernels -------------------------------------------------------------------------------- */

template <int MODE>
static __global__ void __launch_bounds__(256)
batch_csr_kernel(gs_batch_dev_t A, int32_t xcap, double alpha, const double *__restrict__ x,
                 double beta, double *__restrict__ y)
{
  extern __shared__ double gs_batch_smem[];
  const gs_batch_prob_t p = A.prob[blockIdx.x];
  const double *xs = gs_batch_stage(x + p.col, p.n, gs_batch_smem, xcap);
  const int32_t *rp = A.rp + p.rp;
  const gs_idx_t *ci = A.ci + p.ent;
  const double *val = A.val + p.val;
  double *yi = y + p.row;
  const int W = MODE == MODE_SCALAR ? 1 : MODE == MODE_VECTOR ? 32 : gs_batch_smart_width(p.m, p.nnz);
  const int lane = threadIdx.x & (W - 1), G = blockDim.x / W;
  const int32_t g = threadIdx.x / W;
  for (int32_t r0 = 0; r0 < p.m; r0 += G) { /* uniform bound: whole warps reach the shuffles */
    const int32_t r = r0 + g;
    const double sum = gs_batch_row_dot(rp, ci, val, xs, r, r < p.m, W, lane);
    if (lane == 0 && r < p.m) yi[r] = beta == 0.0 ? alpha * sum : alpha * sum + beta * yi[r];
  }
}

/* batch-csr-warp: one warp's tiles of 32 rows of a problem, tiles t0 = tile0, tile0 + tstep, ...
 * (warp-uniform bounds: every lane reaches every shuffle). STAGED: x is in shared memory, else
 * it is read through the read-only path (__ldg; x carries no __restrict__ here, so that a
 * shared-memory x is never loaded as global). W lanes per row, R = 32 / W rows per pass, two
 * passes at once. */
template <bool STAGED>
static __device__ __forceinline__ void warp_tiles(const int32_t *__restrict__ rp,
                                                  const gs_idx_t *__restrict__ ci,
                                                  const double *__restrict__ val,
                                                  const double *x, int32_t m, int W,
                                                  int32_t tile0, int32_t tstep, double alpha,
                                                  double beta, double *__restrict__ y)
{
  const int lane = threadIdx.x & 31, R = 32 / W, g = lane / W, gl = lane & (W - 1);
  for (int32_t t0 = tile0; t0 < m; t0 += tstep) {
    const int rows = m - t0 < 32 ? (int)(m - t0) : 32;
    /* lane l holds the start of row t0 + l (lane `rows` the tile's end, when rows < 32) */
    const int32_t mine = lane <= rows ? rp[t0 + lane] : 0;
    const int32_t last = rp[t0 + rows];
    double out = 0.0; /* lane l: the sum of row t0 + l */
    for (int p = 0; p < rows; p += 2 * R) {
      const int ra = p + g, rb = p + R + g; /* this group's two rows in the tile */
      const int32_t sa = __shfl_sync(GS_FULL_MASK, mine, ra & 31);
      const int32_t na = __shfl_sync(GS_FULL_MASK, mine, (ra + 1) & 31);
      const int32_t sb = __shfl_sync(GS_FULL_MASK, mine, rb & 31);
      const int32_t nb = __shfl_sync(GS_FULL_MASK, mine, (rb + 1) & 31);
      /* rows past the tile get empty ranges; row 31's end is the tile's end */
      uint32_t ka = 0, ea = 0, kb = 0, eb = 0;
      if (ra < rows) {
        ka = (uint32_t)sa + gl;
        ea = (uint32_t)(ra + 1 < 32 ? na : last);
      }
      if (rb < rows) {
        kb = (uint32_t)sb + gl;
        eb = (uint32_t)(rb + 1 < 32 ? nb : last);
      }
      double a = 0.0, b = 0.0;
      while (ka < ea || kb < eb) { /* each turn moves ka or kb W entries on: bounded */
        /* both rows' entries first, then both gathers: four, then two, loads in flight */
        const bool pa = ka < ea, pb = kb < eb;
        const double va = pa ? __ldg(&val[ka]) : 0.0, vb = pb ? __ldg(&val[kb]) : 0.0;
        const gs_idx_t ca = pa ? __ldg(&ci[ka]) : 0, cb = pb ? __ldg(&ci[kb]) : 0;
        const double xa = pa ? (STAGED ? x[ca] : __ldg(&x[ca])) : 0.0;
        const double xb = pb ? (STAGED ? x[cb] : __ldg(&x[cb])) : 0.0;
        if (pa) a += va * xa;
        if (pb) b += vb * xb;
        ka += pa ? W : 0;
        kb += pb ? W : 0;
      }
      for (int off = W >> 1; off > 0; off >>= 1) {
        a += __shfl_down_sync(GS_FULL_MASK, a, off, W);
        b += __shfl_down_sync(GS_FULL_MASK, b, off, W);
      }
      /* row p + j (j < R) is in lane j W of a, row p + R + j in lane j W of b */
      const int ja = lane - p, jb = lane - p - R;
      const double va = __shfl_sync(GS_FULL_MASK, a, (ja & (R - 1)) * W);
      const double vb = __shfl_sync(GS_FULL_MASK, b, (jb & (R - 1)) * W);
      if (ja >= 0 && ja < R) out = va;
      else if (jb >= 0 && jb < R) out = vb;
    }
    if (lane < rows) {
      const int64_t r = (int64_t)t0 + lane;
      y[r] = beta == 0.0 ? alpha * out : alpha * out + beta * y[r];
    }
  }
}

/* batch-csr-warp: blocks [0, nlarge) run problem sched[block] with all their warps (x staged when
 * it fits: the only barrier, uniform per block); the other blocks run up to 8 problems, one per
 * warp, sched[nlarge + 8 (block - nlarge) + warp], -1 for none (no barrier at all). 256
 * threads. */
static __global__ void __launch_bounds__(256)
batch_warp_kernel(gs_batch_dev_t A, const int32_t *__restrict__ sched, int32_t nlarge,
                  int32_t xcap, double alpha, const double *__restrict__ x, double beta,
                  double *__restrict__ y)
{
  extern __shared__ double gs_batch_smem[];
  const int warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  const int large = (int32_t)blockIdx.x < nlarge;
  const int32_t pid = large ? sched[blockIdx.x]
                            : sched[nlarge + ((int64_t)blockIdx.x - nlarge) * GS_BATCH_WARP_PER_BLOCK + warp];
  if (pid < 0) return; /* an empty warp slot of the last block: warp-uniform, no barrier follows */
  const gs_batch_prob_t p = A.prob[pid];
  const int32_t *rp = A.rp + p.rp;
  const gs_idx_t *ci = A.ci + p.ent;
  const double *val = A.val + p.val;
  const int W = gs_batch_smart_width(p.m, p.nnz);
  if (!large) {
    warp_tiles<false>(rp, ci, val, x + p.col, p.m, W, 0, 32, alpha, beta, y + p.row);
    return;
  }
  const double *xs = gs_batch_stage(x + p.col, p.n, gs_batch_smem, xcap); /* block-uniform */
  if (p.n <= xcap) /* gs_batch_smem itself, so that the gathers compile to shared loads */
    warp_tiles<true>(rp, ci, val, gs_batch_smem, p.m, W, 32 * warp, 32 * nw, alpha, beta, y + p.row);
  else
    warp_tiles<false>(rp, ci, val, xs, p.m, W, 32 * warp, 32 * nw, alpha, beta, y + p.row);
}

/* batch-csr-stream (ours: CSR-stream of Greathouse and Daga's CSR-adaptive, SC14, inside one
 * block per problem): the block walks its problem in chunks of whole rows, at most T rows and
 * at most GS_BATCH_STREAM_E T entries each. A chunk's entries are loaded by all T threads at
 * consecutive addresses (coalesced, E loads in flight per thread whatever the row lengths) and
 * their products val * x[col] stored in shared memory; then thread t sums row r0 + t from
 * there, left to right. A row longer than a chunk (CSR-vectorL) takes the whole block: strided
 * partial sums and a tree in shared memory. The chunk's row count comes from one barrier
 * (__syncthreads_count over "row r0 + t ends inside the chunk", true on a prefix of the
 * threads since row pointers do not decrease). Blocks run the problems in decreasing work
 * (order[], built at prepare), so the largest start first and the small ones fill the tail. */
#define GS_BATCH_STREAM_E 8

template <int T, bool STAGED, typename RI, typename CI>
static __device__ __forceinline__ void stream_rows(const RI *__restrict__ rp,
                                                   const CI *__restrict__ ci,
                                                   const double *__restrict__ val,
                                                   const double *x, int32_t m, double *buf,
                                                   double alpha, double beta,
                                                   double *__restrict__ y)
{
  constexpr int32_t CAP = GS_BATCH_STREAM_E * T;
  const int t = threadIdx.x;
  for (int32_t r0 = 0; r0 < m;) { /* block-uniform: r0 and every count below are */
    const int32_t base = rp[r0], r = r0 + t;
    const int32_t rs = r < m ? rp[r] : 0, re = r < m ? rp[r + 1] : 0;
    const int nrows = __syncthreads_count(r < m && re - base <= CAP);
    if (nrows == 0) { /* row r0 alone holds more than CAP entries */
      const int32_t end = rp[r0 + 1];
      double s = 0.0;
      for (int32_t k = base + t; k < end; k += T) s += val[k] * (STAGED ? x[ci[k]] : __ldg(&x[ci[k]]));
      buf[t] = s;
      __syncthreads();
      for (int h = T / 2; h > 0; h >>= 1) {
        if (t < h) buf[t] += buf[t + h];
        __syncthreads();
      }
      if (t == 0) y[r0] = beta == 0.0 ? alpha * buf[0] : alpha * buf[0] + beta * y[r0];
      __syncthreads(); /* buf is the next chunk's */
      r0 += 1;
      continue;
    }
    const int32_t cnt = rp[r0 + nrows] - base;
    double v[GS_BATCH_STREAM_E];
    int32_t c[GS_BATCH_STREAM_E];
#pragma unroll
    for (int j = 0; j < GS_BATCH_STREAM_E; ++j) { /* every load first: E in flight */
      const int32_t k = t + j * T;
      v[j] = k < cnt ? val[base + k] : 0.0;
      c[j] = k < cnt ? ci[base + k] : 0;
    }
#pragma unroll
    for (int j = 0; j < GS_BATCH_STREAM_E; ++j) {
      const int32_t k = t + j * T;
      if (k < cnt) buf[k] = v[j] * (STAGED ? x[c[j]] : __ldg(&x[c[j]]));
    }
    __syncthreads();
    if (t < nrows) {
      double s = 0.0;
      for (int32_t k = rs - base; k < re - base; ++k) s += buf[k];
      y[r] = beta == 0.0 ? alpha * s : alpha * s + beta * y[r];
    }
    __syncthreads(); /* buf is the next chunk's */
    r0 += nrows;
  }
}

/* IDX16 (batch-csr-stream16): the row pointers and columns from the 16-bit copies rp16, ci16
 * (gs_batch_idx16_build: same offsets as the batch's 32-bit arrays) instead of A.rp, A.ci. */
template <int T, bool IDX16>
static __global__ void __launch_bounds__(T)
batch_stream_kernel(gs_batch_dev_t A, const uint16_t *__restrict__ rp16,
                    const uint16_t *__restrict__ ci16, const int32_t *__restrict__ order,
                    int32_t xcap, double alpha, const double *__restrict__ x, double beta,
                    double *__restrict__ y)
{
  extern __shared__ double gs_batch_smem[];
  const gs_batch_prob_t p = A.prob[order[blockIdx.x]];
  const double *val = A.val + p.val;
  double *buf = gs_batch_smem + xcap;
  if (p.n <= xcap) gs_batch_stage(x + p.col, p.n, gs_batch_smem, xcap); /* block-uniform */
  if (IDX16) {
    const uint16_t *rp = rp16 + p.rp, *ci = ci16 + p.ent;
    if (p.n <= xcap)
      stream_rows<T, true>(rp, ci, val, gs_batch_smem, p.m, buf, alpha, beta, y + p.row);
    else
      stream_rows<T, false>(rp, ci, val, x + p.col, p.m, buf, alpha, beta, y + p.row);
  } else {
    const int32_t *rp = A.rp + p.rp;
    const gs_idx_t *ci = A.ci + p.ent;
    if (p.n <= xcap)
      stream_rows<T, true>(rp, ci, val, gs_batch_smem, p.m, buf, alpha, beta, y + p.row);
    else
      stream_rows<T, false>(rp, ci, val, x + p.col, p.m, buf, alpha, beta, y + p.row);
  }
}

/* batch-csr-scalar16: batch-csr-scalar (a thread per row, each row left to right) on the 16-bit
 * copies of the row pointers and columns. */
static __global__ void __launch_bounds__(256)
batch_scalar16_kernel(gs_batch_dev_t A, const uint16_t *__restrict__ rp16,
                      const uint16_t *__restrict__ ci16, int32_t xcap, double alpha,
                      const double *__restrict__ x, double beta, double *__restrict__ y)
{
  extern __shared__ double gs_batch_smem[];
  const gs_batch_prob_t p = A.prob[blockIdx.x];
  const double *xs = gs_batch_stage(x + p.col, p.n, gs_batch_smem, xcap);
  const uint16_t *rp = rp16 + p.rp, *ci = ci16 + p.ent;
  const double *val = A.val + p.val;
  double *yi = y + p.row;
  for (int32_t r = threadIdx.x; r < p.m; r += blockDim.x) {
    const int32_t e = rp[r + 1];
    double sum = 0.0;
    for (int32_t k = rp[r]; k < e; ++k) sum += val[k] * xs[ci[k]];
    yi[r] = beta == 0.0 ? alpha * sum : alpha * sum + beta * yi[r];
  }
}

/* Where csr-i and coo add their sums: shared y (zeroed) when the problem fits, else global y
 * scaled by beta first. Returns the array and the factor the sums are added with. */
static __device__ __forceinline__ double *acc_begin(const gs_batch_prob_t &p, double *sy,
                                                    int32_t ycap, double alpha, double beta,
                                                    double *yi, double *factor)
{
  if (p.m <= ycap) {
    for (int32_t r = threadIdx.x; r < p.m; r += blockDim.x) sy[r] = 0.0;
    *factor = 1.0;
  } else {
    for (int32_t r = threadIdx.x; r < p.m; r += blockDim.x) yi[r] = beta == 0.0 ? 0.0 : beta * yi[r];
    *factor = alpha;
  }
  __syncthreads();
  return p.m <= ycap ? sy : yi;
}

static __device__ __forceinline__ void acc_end(const gs_batch_prob_t &p, const double *sy,
                                               int32_t ycap, double alpha, double beta, double *yi)
{
  if (p.m > ycap) return;
  __syncthreads();
  for (int32_t r = threadIdx.x; r < p.m; r += blockDim.x)
    yi[r] = beta == 0.0 ? alpha * sy[r] : alpha * sy[r] + beta * yi[r];
}

static __global__ void __launch_bounds__(256)
batch_coo_kernel(gs_batch_dev_t A, const int32_t *__restrict__ rows, int32_t xcap, int32_t ycap,
                 double alpha, const double *__restrict__ x, double beta, double *__restrict__ y)
{
  extern __shared__ double gs_batch_smem[];
  const gs_batch_prob_t p = A.prob[blockIdx.x];
  double *yi = y + p.row, f;
  double *acc = acc_begin(p, gs_batch_smem + xcap, ycap, alpha, beta, yi, &f);
  const double *xs = gs_batch_stage(x + p.col, p.n, gs_batch_smem, xcap);
  const int32_t *ri = rows + p.ent;
  const gs_idx_t *ci = A.ci + p.ent;
  const double *val = A.val + p.val;
  const int lane = threadIdx.x & 31, nw = blockDim.x >> 5;
  for (int64_t base = (int64_t)(threadIdx.x >> 5) * 32; base < p.nnz; base += (int64_t)nw * 32) {
    const int64_t e = base + lane;
    const int in = e < p.nnz;
    gs_batch_seg_add(in ? ri[e] : -1, in ? f * val[e] * xs[ci[e]] : 0.0, acc);
  }
  acc_end(p, acc, ycap, alpha, beta, yi);
}

static __global__ void __launch_bounds__(256)
batch_csri_kernel(gs_batch_dev_t A, const int32_t *__restrict__ start, int32_t xcap,
                  int32_t ycap, double alpha, const double *__restrict__ x, double beta,
                  double *__restrict__ y)
{
  extern __shared__ double gs_batch_smem[];
  const gs_batch_prob_t p = A.prob[blockIdx.x];
  double *yi = y + p.row, f;
  double *acc = acc_begin(p, gs_batch_smem + xcap, ycap, alpha, beta, yi, &f);
  const double *xs = gs_batch_stage(x + p.col, p.n, gs_batch_smem, xcap);
  const int32_t *rp = A.rp + p.rp;
  const gs_idx_t *ci = A.ci + p.ent;
  const double *val = A.val + p.val;
  const int lane = threadIdx.x & 31, nw = blockDim.x >> 5, w = threadIdx.x >> 5;
  const int64_t e0 = (int64_t)p.nnz * w / nw, e1 = (int64_t)p.nnz * (w + 1) / nw;
  int32_t row = start[(int64_t)blockIdx.x * (nw + 1) + w];
  for (int64_t base = e0; base < e1; base += 32) {
    const int64_t e = base + lane;
    const int in = e < e1;
    if (in)
      while (rp[row + 1] <= e) ++row; /* monotone per lane: rows passed once */
    gs_batch_seg_add(in ? row : -1, in ? f * val[e] * xs[ci[e]] : 0.0, acc);
  }
  acc_end(p, acc, ycap, alpha, beta, yi);
}

static __global__ void __launch_bounds__(256)
batch_ell_kernel(gs_batch_dev_t A, const int64_t *__restrict__ eoff, const int32_t *__restrict__ eci,
                 const double *__restrict__ evl, int32_t xcap, double alpha,
                 const double *__restrict__ x, double beta, double *__restrict__ y)
{
  extern __shared__ double gs_batch_smem[];
  const gs_batch_prob_t p = A.prob[blockIdx.x];
  const double *xs = gs_batch_stage(x + p.col, p.n, gs_batch_smem, xcap);
  const int32_t *c = eci + eoff[blockIdx.x];
  const double *v = evl + eoff[blockIdx.x];
  double *yi = y + p.row;
  for (int32_t r = threadIdx.x; r < p.m; r += blockDim.x) {
    double sum = 0.0;
    for (int32_t k = 0; k < p.maxrow; ++k) {
      const int64_t at = (int64_t)k * p.m + r; /* column-major: coalesced across the rows */
      const int32_t col = c[at];
      if (col >= 0) sum += v[at] * xs[col]; /* padding never reads x */
    }
    yi[r] = beta == 0.0 ? alpha * sum : alpha * sum + beta * yi[r];
  }
}

static __global__ void batch_scale_kernel(double beta, double *y, size_t len)
{
  GS_GRID_STRIDE(i, len) y[i] = beta == 0.0 ? 0.0 : beta * y[i];
}

extern "C" gs_status_t gs_batch_kernel_scale(gs_batch_t *B, double beta, double *d_y, size_t len)
{
  if (len == 0) return GS_SUCCESS;
  cudaStream_t s = B->ctx->stream;
  batch_scale_kernel<<<gs_grid_blocks((int64_t)len, 256), 256, 0, s>>>(beta, d_y, len);
  return GS_CHECK_LAUNCH(s, "batch_scale_kernel");
}

/* ---- prepare / apply / memory / describe / destroy ----------------------------------------- */

static void destroy(gs_batch_t *B, void *data)
{
  (void)B;
  batch_data_t *d = (batch_data_t *)data;
  if (!d) return;
  gs_dfree(d->ctx, d->d_extra);
  free(d);
}

/* Packs host arrays into the one allocation of the kernel's layout (each 256-byte aligned). */
static gs_status_t upload_extra(batch_data_t *d, int n, const void *const *src,
                                const size_t *bytes, void **dst)
{
  size_t total = 0, at[4];
  for (int k = 0; k < n; ++k) {
    at[k] = total;
    total += (bytes[k] + 255) / 256 * 256;
  }
  d->extra_bytes = total;
  GS_CHECK(gs_dmalloc(d->ctx, &d->d_extra, total, "a batched kernel's layout"));
  for (int k = 0; k < n; ++k) {
    dst[k] = (char *)d->d_extra + at[k];
    if (bytes[k]) GS_CHECK(gs_copy_to_device(d->ctx, dst[k], src[k], bytes[k]));
  }
  return GS_SUCCESS;
}

/* batch-csr-stream's shared memory (x and one chunk's products) may pass the 48 KiB a launch
 * gets without asking: raise the kernel's limit to what this batch needs. */
template <bool IDX16>
static gs_status_t stream_smem_limit(int threads, size_t bytes)
{
  const void *fn = threads == 64    ? (const void *)batch_stream_kernel<64, IDX16>
                   : threads == 128 ? (const void *)batch_stream_kernel<128, IDX16>
                   : threads == 256 ? (const void *)batch_stream_kernel<256, IDX16>
                                    : (const void *)batch_stream_kernel<512, IDX16>;
  return GS_CUDA(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
}

static gs_status_t prepare_kind(gs_batch_t *B, int kind, int mode, double max_fill, void **data)
{
  const gs_batch_host_t *H = &B->H;
  const gs_batch_rowstats_t *rs = &B->st;
  gs_status_t st = GS_SUCCESS;
  int32_t *rows = NULL, *start = NULL, *sched = NULL;
  uint16_t *rp16 = NULL, *ci16 = NULL;
  gs_batch_ell_t E = {NULL, NULL, NULL};
  batch_data_t *d = (batch_data_t *)calloc(1, sizeof *d);
  if (!d) return GS_ERROR(GS_ERR_HOST_MEMORY, "batch: out of host memory");
  d->ctx = B->ctx;
  d->kind = kind;
  d->mode = mode;
  d->xcap = H->max_n < GS_BATCH_XCAP ? H->max_n : GS_BATCH_XCAP;
  const size_t vec = ((size_t)H->row_off[H->count] + (size_t)H->col_off[H->count]) * 8;
  double work = rs->mean_m;
  switch (kind) {
  case GS_BATCH_K_CSR:
  case GS_BATCH_K_SMART:
  case GS_BATCH_K_CSR16:
    work = rs->mean_m * (mode == MODE_VECTOR ? 32 : mode == MODE_SMART ? fmax(1.0, fmin(32.0, rs->mean_row)) : 1);
    d->bytes_per_apply = gs_batch_floor_bytes(H);
    if (kind == GS_BATCH_K_CSR16) { /* 2 bytes a row pointer and a column instead of 4 */
      GS_TRY(gs_batch_idx16_build(H, mode == MODE_STREAM ? "batch-csr-stream16" : "batch-csr-scalar16",
                                  &rp16, &ci16));
      if (mode == MODE_STREAM) GS_TRY(gs_batch_work_order(H, &sched));
      const void *src[3] = {rp16, ci16, sched};
      size_t bytes[3] = {H->nrp * sizeof *rp16, H->nci * sizeof *ci16,
                         sched ? (size_t)H->count * sizeof *sched : 0};
      void *dst[3];
      GS_TRY(upload_extra(d, 3, src, bytes, dst));
      d->d_rp16 = (const uint16_t *)dst[0];
      d->d_ci16 = (const uint16_t *)dst[1];
      d->d_sched = (const int32_t *)dst[2];
      d->bytes_per_apply -= ((size_t)H->row_off[H->count] + (size_t)H->count) *
                                (sizeof(int32_t) - sizeof(uint16_t)) +
                            (size_t)H->nnz * (sizeof(gs_idx_t) - sizeof(uint16_t));
      d->bytes_per_apply += bytes[2];
    } else if (mode == MODE_STREAM) {
      GS_TRY(gs_batch_work_order(H, &sched));
      const void *src[1] = {sched};
      size_t bytes[1] = {(size_t)H->count * sizeof *sched};
      void *dst[1];
      GS_TRY(upload_extra(d, 1, src, bytes, dst));
      d->d_sched = (const int32_t *)dst[0];
      d->bytes_per_apply += bytes[0];
    }
    if (mode == MODE_STREAM) {
      d->threads = gs_batch_stream_threads(rs->mean_m);
      d->ycap = GS_BATCH_STREAM_E * d->threads; /* the chunk's products */
      const size_t smem = ((size_t)d->xcap + d->ycap) * sizeof(double);
      GS_TRY(kind == GS_BATCH_K_CSR16 ? stream_smem_limit<true>(d->threads, smem)
                                      : stream_smem_limit<false>(d->threads, smem));
    }
    if (mode == MODE_WARP) {
      GS_TRY(gs_batch_warp_schedule(H, &sched, &d->nlarge, &d->nwblocks));
      int32_t xn = 0; /* x is staged for the block problems only */
      for (int32_t k = 0; k < d->nlarge; ++k)
        if (H->prob[sched[k]].n > xn) xn = H->prob[sched[k]].n;
      d->xcap = xn < GS_BATCH_XCAP ? xn : GS_BATCH_XCAP;
      const void *src[1] = {sched};
      size_t bytes[1] = {((size_t)d->nlarge + (size_t)d->nwblocks * GS_BATCH_WARP_PER_BLOCK) *
                         sizeof *sched};
      void *dst[1];
      GS_TRY(upload_extra(d, 1, src, bytes, dst));
      d->d_sched = (const int32_t *)dst[0];
      d->bytes_per_apply += bytes[0];
    }
    break;
  case GS_BATCH_K_COO: {
    work = rs->mean_nnz / 4; /* a lane per entry: a few entries per lane in all */
    d->ycap = H->max_m < GS_BATCH_YCAP ? H->max_m : GS_BATCH_YCAP;
    GS_TRY(gs_batch_coo_rows(H, &rows));
    const void *src[1] = {rows};
    size_t bytes[1] = {H->nci * sizeof *rows};
    void *dst[1];
    GS_TRY(upload_extra(d, 1, src, bytes, dst));
    d->d_rows = (const int32_t *)dst[0];
    d->bytes_per_apply = (size_t)H->nnz * 16 + vec;
    break;
  }
  case GS_BATCH_K_CSRI: {
    d->ycap = H->max_m < GS_BATCH_YCAP ? H->max_m : GS_BATCH_YCAP;
    d->nwarps = gs_batch_block_threads(rs->mean_nnz) / 32; /* as gs_batch_host_apply */
    GS_TRY(gs_batch_csri_starts(H, d->nwarps, &start));
    const void *src[1] = {start};
    size_t bytes[1] = {(size_t)H->count * (d->nwarps + 1) * sizeof *start};
    void *dst[1];
    GS_TRY(upload_extra(d, 1, src, bytes, dst));
    d->d_start = (const int32_t *)dst[0];
    d->bytes_per_apply = gs_batch_floor_bytes(H) + bytes[0];
    break;
  }
  case GS_BATCH_K_ELL: {
    GS_TRY(gs_batch_ell_build(H, max_fill, &E));
    const int64_t padded = E.off[H->count];
    const void *src[3] = {E.off, E.ci, E.val};
    size_t bytes[3] = {((size_t)H->count + 1) * 8, (size_t)padded * 4, (size_t)padded * 8};
    void *dst[3];
    GS_TRY(upload_extra(d, 3, src, bytes, dst));
    d->d_eoff = (const int64_t *)dst[0];
    d->d_eci = (const int32_t *)dst[1];
    d->d_eval = (const double *)dst[2];
    d->fill = H->nnz ? (double)padded / (double)H->nnz : 1.0;
    d->bytes_per_apply = (size_t)padded * 12 + vec;
    break;
  }
  default: GS_FAIL(GS_ERR_INTERNAL, "batch: unknown kernel kind %d", kind);
  }
  if (mode == MODE_WARP) d->threads = 32 * GS_BATCH_WARP_PER_BLOCK; /* the kernel's indexing */
  else if (mode == MODE_STREAM) ; /* set above */
  else if (kind != GS_BATCH_K_CSRI) d->threads = gs_batch_block_threads(work);
  else d->threads = d->nwarps * 32;
  *data = d;
  d = NULL;
cleanup:
  free(rows);
  free(start);
  free(sched);
  free(rp16);
  free(ci16);
  gs_batch_ell_free(&E);
  destroy(B, d);
  return st;
}

static gs_status_t apply(gs_batch_t *B, void *data, double alpha, const double *x, double beta,
                         double *y)
{
  const batch_data_t *d = (const batch_data_t *)data;
  cudaStream_t s = B->ctx->stream;
  const unsigned grid = (unsigned)B->H.count, t = (unsigned)d->threads;
  const size_t smem = ((size_t)d->xcap + d->ycap) * sizeof(double);
  switch (d->kind) {
  case GS_BATCH_K_CSR:
  case GS_BATCH_K_SMART:
  case GS_BATCH_K_CSR16:
    if (d->mode == MODE_WARP) {
      const unsigned blocks = (unsigned)(d->nlarge + d->nwblocks);
      batch_warp_kernel<<<blocks, t, smem, s>>>(B->dev, d->d_sched, d->nlarge, d->xcap, alpha, x,
                                                beta, y);
      return GS_CHECK_LAUNCH(s, "batch_warp_kernel");
    }
    if (d->mode == MODE_STREAM) {
#define STREAM_LAUNCH(TT, I16)                                                                  \
  batch_stream_kernel<TT, I16><<<grid, t, smem, s>>>(B->dev, d->d_rp16, d->d_ci16, d->d_sched,  \
                                                     d->xcap, alpha, x, beta, y)
      const bool i16 = d->kind == GS_BATCH_K_CSR16;
      if (t == 64) i16 ? STREAM_LAUNCH(64, true) : STREAM_LAUNCH(64, false);
      else if (t == 128) i16 ? STREAM_LAUNCH(128, true) : STREAM_LAUNCH(128, false);
      else if (t == 256) i16 ? STREAM_LAUNCH(256, true) : STREAM_LAUNCH(256, false);
      else i16 ? STREAM_LAUNCH(512, true) : STREAM_LAUNCH(512, false);
#undef STREAM_LAUNCH
      return GS_CHECK_LAUNCH(s, "batch_stream_kernel");
    }
    if (d->kind == GS_BATCH_K_CSR16) {
      batch_scalar16_kernel<<<grid, t, smem, s>>>(B->dev, d->d_rp16, d->d_ci16, d->xcap, alpha, x,
                                                  beta, y);
      return GS_CHECK_LAUNCH(s, "batch_scalar16_kernel");
    }
    if (d->mode == MODE_SCALAR)
      batch_csr_kernel<MODE_SCALAR><<<grid, t, smem, s>>>(B->dev, d->xcap, alpha, x, beta, y);
    else if (d->mode == MODE_VECTOR)
      batch_csr_kernel<MODE_VECTOR><<<grid, t, smem, s>>>(B->dev, d->xcap, alpha, x, beta, y);
    else
      batch_csr_kernel<MODE_SMART><<<grid, t, smem, s>>>(B->dev, d->xcap, alpha, x, beta, y);
    return GS_CHECK_LAUNCH(s, "batch_csr_kernel");
  case GS_BATCH_K_COO:
    batch_coo_kernel<<<grid, t, smem, s>>>(B->dev, d->d_rows, d->xcap, d->ycap, alpha, x, beta, y);
    return GS_CHECK_LAUNCH(s, "batch_coo_kernel");
  case GS_BATCH_K_CSRI:
    batch_csri_kernel<<<grid, t, smem, s>>>(B->dev, d->d_start, d->xcap, d->ycap, alpha, x, beta, y);
    return GS_CHECK_LAUNCH(s, "batch_csri_kernel");
  case GS_BATCH_K_ELL:
    batch_ell_kernel<<<grid, t, smem, s>>>(B->dev, d->d_eoff, d->d_eci, d->d_eval, d->xcap, alpha,
                                           x, beta, y);
    return GS_CHECK_LAUNCH(s, "batch_ell_kernel");
  default: return GS_ERROR(GS_ERR_INTERNAL, "batch: unknown kernel kind %d", d->kind);
  }
}

static gs_status_t memory(const gs_batch_t *B, const void *data, gs_batch_mem_t *mem)
{
  (void)B;
  const batch_data_t *d = (const batch_data_t *)data;
  mem->device_bytes = d->extra_bytes;
  mem->bytes_per_apply = d->bytes_per_apply;
  return GS_SUCCESS;
}

static void describe(const void *data, char *buf, size_t len)
{
  const batch_data_t *d = (const batch_data_t *)data;
  int k = snprintf(buf, len, "%d threads per block, x in shared memory up to %d columns",
                   d->threads, (int)d->xcap);
  if (k < 0 || (size_t)k >= len) return;
  if (d->mode == MODE_STREAM)
    k += snprintf(buf + k, len - k, ", chunks of up to %d rows and %d entries, largest problems first",
                  d->threads, (int)d->ycap);
  else if (d->ycap) k += snprintf(buf + k, len - k, ", y up to %d rows", (int)d->ycap);
  if (k < 0 || (size_t)k >= len) return;
  if (d->kind == GS_BATCH_K_CSRI) snprintf(buf + k, len - k, ", %d warps of equal entries", d->nwarps);
  if (d->kind == GS_BATCH_K_CSR16) snprintf(buf + k, len - k, ", 16-bit row pointers and columns");
  if (d->mode == MODE_WARP)
    snprintf(buf + k, len - k, "; %d problems a block, %d blocks of up to %d one-warp problems",
             (int)d->nlarge, (int)d->nwblocks, GS_BATCH_WARP_PER_BLOCK);
  if (d->kind == GS_BATCH_K_ELL) snprintf(buf + k, len - k, ", ELL fill %.2fx", d->fill);
}

#define PREPARE(fn, kind, mode)                                                                 \
  static gs_status_t fn(gs_batch_t *B, double max_fill, void **data)                            \
  {                                                                                             \
    return prepare_kind(B, kind, mode, max_fill, data);                                         \
  }
PREPARE(prepare_scalar, GS_BATCH_K_CSR, MODE_SCALAR)
PREPARE(prepare_vector, GS_BATCH_K_CSR, MODE_VECTOR)
PREPARE(prepare_smart, GS_BATCH_K_SMART, MODE_SMART)
PREPARE(prepare_csri, GS_BATCH_K_CSRI, 0)
PREPARE(prepare_coo, GS_BATCH_K_COO, 0)
PREPARE(prepare_ell, GS_BATCH_K_ELL, 0)
PREPARE(prepare_warp, GS_BATCH_K_SMART, MODE_WARP)
PREPARE(prepare_stream, GS_BATCH_K_CSR, MODE_STREAM)
PREPARE(prepare_scalar16, GS_BATCH_K_CSR16, MODE_SCALAR)
PREPARE(prepare_stream16, GS_BATCH_K_CSR16, MODE_STREAM)

#define OPS(var, name, summary, kind, prep)                                                     \
  static const gs_batch_ops_t var = {GS_BATCH_OPS_VERSION, name, summary, kind, 0u, prep, apply, \
                                     memory, describe, destroy};
OPS(ops_scalar, "batch-csr-scalar", "a thread per row (ScalA17 3.4, CSR-scalar)", GS_BATCH_K_CSR,
    prepare_scalar)
OPS(ops_vector, "batch-csr-vector", "a warp per row (ScalA17 3.4, CSR-vector)", GS_BATCH_K_CSR,
    prepare_vector)
OPS(ops_smart, "batch-csr-smart", "threads per row from each problem's mean row length (3.4)",
    GS_BATCH_K_SMART, prepare_smart)
OPS(ops_csri, "batch-csr-i", "equal entry shares per warp, precomputed start rows (3.5)",
    GS_BATCH_K_CSRI, prepare_csri)
OPS(ops_coo, "batch-coo", "entry-parallel COO, warp segmented sums (3.3)", GS_BATCH_K_COO,
    prepare_coo)
OPS(ops_ell, "batch-ell", "per-problem ELL, a thread per row, column-major (3.6)", GS_BATCH_K_ELL,
    prepare_ell)
OPS(ops_warp, "batch-csr-warp",
    "small problems a warp each (8 a block), large a block; 32-row tiles, shuffled row bounds",
    GS_BATCH_K_SMART, prepare_warp)

OPS(ops_stream, "batch-csr-stream",
    "chunks of whole rows: coalesced entry loads, products in shared memory, a thread sums a row",
    GS_BATCH_K_CSR, prepare_stream)

OPS(ops_scalar16, "batch-csr-scalar16",
    "batch-csr-scalar on 16-bit row pointers and columns (problems of <= 65,535 entries)",
    GS_BATCH_K_CSR16, prepare_scalar16)
OPS(ops_stream16, "batch-csr-stream16",
    "batch-csr-stream on 16-bit row pointers and columns (problems of <= 65,535 entries)",
    GS_BATCH_K_CSR16, prepare_stream16)

/* Our kernels first, then the vendor baselines (batch/batch_cusparse.cu). */
extern "C" const gs_batch_ops_t *const gs_batch_formats[] = {
    &ops_scalar, &ops_vector, &ops_smart, &ops_csri, &ops_coo, &ops_ell, &ops_warp, &ops_stream,
    &ops_scalar16, &ops_stream16, &gs_batch_cusparse_ops, &gs_batch_cusparse2_ops};
extern "C" const int gs_batch_nformats = (int)(sizeof gs_batch_formats / sizeof gs_batch_formats[0]);
