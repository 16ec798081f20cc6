/* spmv/dia_kernels.cu: the "dia" backend, diagonal-format SpMV (Bell & Garland,
 * SC09, section 3.1; CUSP dia_spmv.h), op = N and op = T.
 *
 * Layout (spmv/formats.h): val[d*pitch + i] = A(i, i + offsets[d]), stored by ROW i, pitch = m
 * rounded up to 32; slots whose column falls outside 0..n-1 hold 0 and are never used.
 *
 * dia_spmv_kernel<false> (op = N)
 *   Work division: one thread per row, 256 threads (8 warps) per block, a grid-stride loop over
 *   tiles of 256 rows on gs_grid_blocks(m) blocks (one round below 2^28 rows). The loop bound
 *   is the tile's first row, the same for the whole block, so every thread reaches every
 *   barrier.
 *   Memory access: the diagonal offsets are staged in shared memory, 256 at a time, read once
 *   per block instead of once per thread (section 3.1); every thread then reads the same
 *   offset (a broadcast). Values are column-major with the row dimension padded to the pitch
 *   (a multiple of 32): at diagonal d the 32 threads of a warp read 32 consecutive, aligned
 *   values (fully coalesced), and, since consecutive rows meet consecutive columns on a
 *   diagonal, x[row + offset] is read contiguously too (through the read-only path). Slots
 *   whose column falls outside 0..n-1 (at most |offset| rows per diagonal, at the top or
 *   bottom edge) are skipped by a select: their value (0) and x at the clamped column are
 *   loaded unconditionally, in bounds, so the loop has no branch and its loads overlap. The
 *   sum stays in a register across all diagonals; y[row] is written once (read first only
 *   when beta != 0).
 * dia_spmv_kernel<true> (op = T, the same kernel instantiated for the transpose): a gather, no atomics. One thread per output column j (y has n
 *   entries), the same tiles, staging and barriers; on diagonal d column j meets row
 *   i = j - offsets[d], used when 0 <= i < m: y(j) = sum_d val[d*pitch + i] * x(i). Consecutive
 *   threads read consecutive slots of a diagonal (contiguous, shifted by the offset: two
 *   segments per warp) and consecutive entries of x; rows outside 0..m-1 are loaded at the
 *   clamped row and dropped by a select, as for op = N. Each y(j) is summed by one thread in
 *   diagonal order and written once: deterministic, bit for bit.
 *   Synchronization (both): the block syncs after staging a chunk of offsets and again before
 *   the next chunk (or the next tile) overwrites them; threads past the last row (column) stay
 *   in the loop and skip the arithmetic.
 *   Assumptions: offsets sorted and 32-bit; m + n < 2^31 (the builder refuses larger shapes),
 *   so row + offset, in (-m, m + n), and column - offset, in (-n, n + m), fit in 32 bits:
 *   the per-diagonal (hot) arithmetic stays 32-bit, tiles and pointers are 64-bit.
 *
 * Precision: the kernel is a template on the stored value type Val and on the vector type T of
 *   x, y, alpha, beta and the sums: <double, double> in double precision, <float, double> in
 *   mixed (gs_dia_layout_round rounds the built values once and the float layout is uploaded;
 *   each value widens exactly to double before its product), <float, float> in float precision
 *   (the same layout, fmaf and float sums). The host applies read the same float layout.
 *
 * Byte model (gs_spmv_mem_t, beta = 0; a = 8 bytes a stored value, 4 in mixed and float
 * precision; v = 8 bytes a vector entry, 4 in float precision):
 *   a*slots_in_range (values whose column lies inside the
 *   matrix: what the kernels read, explicit zeros inside occupied diagonals included)
 *   + 4*ndiag (offsets) + v*n (x, read once) + v*m (y written once); op = T reads the same
 *   slots, x of m and writes y of n: the same total.
 *
 * Device build (the default; build=host runs spmv/dia_build.c and uploads): the layout is made
 *   from the matrix's shared device CSR, byte for byte the host builder's. Passes, with bytes
 *   for lap27_100 (m = 1M, nnz = 26.46M, 27 diagonals; col 106 MB, val 212 MB; the measured
 *   build is in docs/formats.md):
 *   gs_chunk_rows_kernel (spmv/csr_tile.cuh) the row of every 1024th entry (4 MB);
 *   dia_mark_kernel a thread an entry (its row by a short binary search, L1 hits) stores 1 in
 *   flag[col - row + m - 1], read first so that the few hot flags of a banded matrix are not
 *   stored 26.5M times (col read once: 106 MB); an exclusive scan of the m + n flags
 *   (cub::DeviceScan, 16 MB) numbers the diagonals in increasing offset order, as the host's
 *   loop does, its last value the diagonal count: one 4-byte read-back and a stream sync. Then
 *   the fill guard with the host's message, the two allocations, dia_offsets_kernel (the
 *   offsets and the slots in range, 16 MB) and dia_slab_kernel: a warp a tile of 32 rows, the
 *   tile's entries staged in shared memory by coalesced loads, each lane merging its row with
 *   the sorted offsets and storing every slot of its row once, the value or 0 (reads the CSR,
 *   318 MB, writes ndiag x pitch values, 216 MB). No memset of the slab (the former
 *   build cleared all 216 MB, then scattered each entry with strided column and value reads).
 *   Values rounded to float (__double2float_rn, the host's cast) in mixed and float precision.
 *   One more read-back (the slots in range) at the final sync, which the scratch needs before
 *   it is freed. Scratch: 8 (m + n) bytes of flags and diagonal numbers, 4 bytes a 1024
 *   entries. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cub/device/device_scan.cuh>

#include "core/error.h"
#include "spmv/common_kernels.h"
#include "spmv/csr_tile.cuh"
#include "spmv/dia_devbuild.h"
#include "spmv/device_util.cuh"
#include "spmv/formats_kernels.h"

/* One kernel for both ops (TRANS is a template parameter: each instantiation has the loop of
 * its op and nothing else): o is the output index (row for N, column for T) and k the other
 * index on diagonal d (column o + offset for N, row o - offset for T). */
template <bool TRANS, typename Val, typename T>
static __global__ void __launch_bounds__(GS_FMT_BLOCK)
dia_spmv_kernel(int m, int n, int ndiag, long long pitch, const int *__restrict__ offsets,
                const Val *__restrict__ val, const T *__restrict__ x, T alpha, T beta,
                T *__restrict__ y)
{
  __shared__ int s_off[GS_FMT_BLOCK];
  const int nout = TRANS ? n : m, nin = TRANS ? m : n;
  const int64_t tiles = (int64_t)gridDim.x * blockDim.x;
  for (int64_t first = (int64_t)blockIdx.x * blockDim.x; first < nout; first += tiles) {
    const bool active = first + threadIdx.x < nout;
    const int o = (int)(first + threadIdx.x); /* < nout < 2^31; used only when active */
    T sum = T(0);
    for (int base = 0; base < ndiag; base += GS_FMT_BLOCK) {
      const int chunk = ndiag - base < GS_FMT_BLOCK ? ndiag - base : GS_FMT_BLOCK;
      if ((int)threadIdx.x < chunk) s_off[threadIdx.x] = offsets[base + threadIdx.x];
      __syncthreads(); /* the chunk's offsets are visible to the block */
      if (active) { /* ndiag >= 1 here, so nnz >= 1 and m, n >= 1: the clamp is in range */
        const Val *v = val + (long long)base * pitch + (TRANS ? 0 : o);
#pragma unroll 4
        for (int d = 0; d < chunk; ++d, v += pitch) {
          /* Branch-free so that the unrolled loads issue back to back: the value slot always
           * exists (it holds 0 when the column is outside the matrix), x is read at the index
           * clamped into range, and the select drops such a product (an Inf/NaN of x there
           * never reaches the sum). */
          const int k = TRANS ? o - s_off[d] : o + s_off[d];
          const bool in = (unsigned)k < (unsigned)nin; /* 0 <= k < nin */
          const int kc = k < 0 ? 0 : (k < nin ? k : nin - 1);
          const T a = (T)ld_stream(TRANS ? v + kc : v); /* float widens exactly to double */
          const T xk = __ldg(x + kc);
          sum = in ? gs_fma(a, xk, sum) : sum;
        }
      }
      __syncthreads(); /* every thread is done with s_off before the next chunk is staged */
    }
    if (active) y[o] = beta == T(0) ? alpha * sum : alpha * sum + beta * y[o];
  }
}

/* ---- the backend ------------------------------------------------------------------------- */

typedef struct dia_data {
  gs_context_t *ctx; /* the context it was prepared on (frees go through it) */
  gs_idx_t m, n, ndiag, nnz;
  int64_t pitch;
  int64_t slots_in_range;
  int32_t *d_offsets; /* ndiag */
  gs_val_t *d_val;    /* pitch * ndiag, or NULL in mixed and float precision */
  float *d_valf;      /* pitch * ndiag in mixed and float precision (the rounded layout) */
  size_t val_bytes;   /* bytes of one stored value: 8, or 4 in mixed and float precision */
  size_t vec_bytes;   /* bytes of a vector entry: 8, or 4 in float precision */
  size_t bytes;
} dia_data_t;

static void dia_destroy(void *data)
{
  dia_data_t *D = (dia_data_t *)data;
  if (!D) return;
  gs_dfree(D->ctx, D->d_offsets);
  gs_dfree(D->ctx, D->d_val);
  gs_dfree(D->ctx, D->d_valf);
  free(D);
}

enum { DIA_OPT_MAX_FILL };
static const gs_spmv_option_t dia_options[] = {GS_SPMV_OPTION_MAX_FILL, GS_SPMV_OPTION_END};

/* ---- the device build (banner) ------------------------------------------------------------ */

#define DIA_BUILD_BLOCK 256
#define DIA_REDUCE_BLOCKS 1024 /* grid cap of dia_offsets_kernel (an atomic a block) */

/* flag[col - row + m - 1] = 1 for every entry: the occupied diagonals. A thread an entry (col
 * read once, coalesced), its row from the chunk map (spmv/csr_tile.cuh). The flag is read first:
 * the few flags of a banded matrix take every entry's store otherwise (lap27: 26.5M stores into
 * 27 words); a stale 0 read only repeats a store of the same value. */
static __global__ void __launch_bounds__(DIA_BUILD_BLOCK)
dia_mark_kernel(int64_t nnz, int m, const int32_t *__restrict__ rp,
                const int32_t *__restrict__ chunk_row, int64_t chunks,
                const int32_t *__restrict__ col, int32_t *flag)
{
  GS_GRID_STRIDE(q, nnz) {
    const int r = gs_row_of(q, rp, chunk_row, chunks, m);
    int32_t *f = flag + ((int64_t)__ldg(col + q) - r + m - 1);
    if (!*f) *f = 1;
  }
}

/* v summed over the block, valid in thread 0; every thread of the block calls it. */
static __device__ unsigned long long dia_block_sum(unsigned long long v)
{
  __shared__ unsigned long long s_part[DIA_BUILD_BLOCK / 32];
  for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) s_part[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < (int)(blockDim.x >> 5) ? s_part[lane] : 0ull;
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  }
  return v;
}

/* offsets[diag_of[s]] = s - (m - 1) for every occupied s (increasing offsets), and *in_range +=
 * their slots whose column lies in 0..n-1 (rows i with 0 <= i + offset < n: the host's
 * slots_in_range; a block sum and one atomic a block, grid capped at DIA_REDUCE_BLOCKS). */
static __global__ void __launch_bounds__(DIA_BUILD_BLOCK)
dia_offsets_kernel(const int32_t *__restrict__ flag, const int32_t *__restrict__ diag_of,
                   int64_t m, int64_t n, int32_t *__restrict__ offsets,
                   unsigned long long *in_range)
{
  unsigned long long in = 0;
  GS_GRID_STRIDE(s, m + n - 1)
  if (flag[s]) {
    const int64_t o = s - (m - 1), lo = o < 0 ? -o : 0, hi = n - o < m ? n - o : m;
    offsets[diag_of[s]] = (int32_t)o;
    in += hi > lo ? (unsigned long long)(hi - lo) : 0ull;
  }
  in = dia_block_sum(in);
  if (threadIdx.x == 0 && in > 0) atomicAdd(in_range, in);
}

/* The value slab (gs_dia_layout_build): val[d*pitch + i] = A(i, i + offsets[d]) or 0 (absent,
 * out of range, or an alignment row m..pitch-1), every slot written exactly once: no memset. A
 * warp a tile of 32 rows (spmv/csr_tile.cuh): the tile's entries staged in shared memory by
 * coalesced loads (flat when the tile's range fits 32 * kc entries, always so for ndiag <= 32;
 * else a window of kc = 32 entries a row, refilled for the rows that used theirs up), then lane
 * = row merges its sorted entries with the sorted offsets: at diagonal d the next entry is
 * either on d (its value stored, the entry consumed) or further right (0 stored). Stores are 32
 * consecutive rows of one diagonal; the offsets come 32 at a time, one a lane, by shuffle.
 * Entries of a row have distinct columns (sorted, duplicates summed: gs_matrix's CSR). */
template <typename Val>
static __global__ void __launch_bounds__(256)
dia_slab_kernel(int m, int ndiag, long long pitch, int kc, const int32_t *__restrict__ rp,
                const int32_t *__restrict__ col, const double *__restrict__ val,
                const int32_t *__restrict__ offsets, Val *__restrict__ out)
{
  extern __shared__ __align__(16) unsigned char dia_smem[];
  Val *s_val;
  int *s_col;
  gs_tile_buffers(dia_smem, gs_tile_slots(kc), &s_val, &s_col);
  const int lane = threadIdx.x & 31, cap = gs_tile_cap(kc), stride = gs_tile_stride(kc);
  const int64_t tiles = pitch >> 5; /* the pitch is a multiple of 32: a tile's first row < m */
  for (int64_t t = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; t < tiles;
       t += ((int64_t)gridDim.x * blockDim.x) >> 5) {
    const int64_t i = (t << 5) + lane;
    const int beg = __ldg(rp + (i < m ? i : m));
    const int len = i < m ? __ldg(rp + i + 1) - beg : 0;
    const int a = __shfl_sync(0xffffffffu, beg, 0), b = __shfl_sync(0xffffffffu, beg + len, 31);
    const bool flat = b - a <= cap; /* warp-uniform */
    const int rel = beg - a;
    int win = 0; /* pieces: the row's window holds its entries win .. win + kc - 1 */
    if (flat)
      gs_tile_stage_flat(a, b - a, col, val, s_col, s_val);
    else
      gs_tile_stage_pieces(__ballot_sync(0xffffffffu, len > 0), (int64_t)beg,
                           len < kc ? len : kc, stride, col, val, s_col, s_val);
    __syncwarp();
    int k = 0; /* entries of the row consumed */
    int ck = len > 0 ? s_col[flat ? gs_tile_skew(rel) : lane * stride] : 0;
    for (int d0 = 0; d0 < ndiag; d0 += 32) {
      const int od = d0 + lane < ndiag ? __ldg(offsets + d0 + lane) : 0;
      const int dn = ndiag - d0 < 32 ? ndiag - d0 : 32;
      for (int dd = 0; dd < dn; ++dd) {
        const int64_t target = i + __shfl_sync(0xffffffffu, od, dd);
        if (!flat) { /* refill the windows used up (all lanes agree: ballot) */
          const unsigned need = __ballot_sync(0xffffffffu, k < len && k - win == kc);
          if (need) {
            __syncwarp(); /* the old windows' reads are done */
            if (need >> lane & 1u) win = k;
            const int left = len - win;
            gs_tile_stage_pieces(need, (int64_t)beg + win, left < kc ? left : kc, stride, col,
                                 val, s_col, s_val);
            __syncwarp();
            if (need >> lane & 1u) ck = s_col[lane * stride];
          }
        }
        Val v = Val(0);
        if (k < len && (int64_t)ck == target) {
          v = s_val[flat ? gs_tile_skew(rel + k) : lane * stride + (k - win)];
          ++k;
          if (k < len && (flat || k - win < kc))
            ck = s_col[flat ? gs_tile_skew(rel + k) : lane * stride + (k - win)];
        }
        out[(int64_t)(d0 + dd) * pitch + i] = v;
      }
    }
    __syncwarp(); /* the next tile's staging overwrites the buffer */
  }
}

static size_t dia_align(size_t b) { return (b + 255) / 256 * 256; }

/* D's layout from the shared device CSR (D->m, n, nnz, pitch, val_bytes set by the caller). */
static gs_status_t dia_build_device(gs_context_t *ctx, const gs_dcsr_t *A, double max_fill,
                                    int float_values, dia_data_t *D)
{
  gs_status_t st = GS_SUCCESS;
  char *d_scratch = NULL;
  const int64_t m = A->m, n = A->n, span = m + n - 1, nnz = A->nnz;
  size_t temp = 0;
  if (nnz == 0) return GS_SUCCESS; /* no diagonals (m or n may be 0: span unused) */
  if (A->wide) return GS_ERROR(GS_ERR_INTERNAL, "dia reached with 64-bit offsets");
  {
    cudaStream_t s = ctx->stream;
    /* flags over span + 1 slots (the last one stays 0): the exclusive scan's last value is the
     * number of occupied diagonals */
    GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(NULL, temp, (const int32_t *)NULL,
                                                 (int32_t *)NULL, span + 1, s)));
    const int64_t chunks = gs_chunk_count(nnz);
    const size_t fb = dia_align((size_t)(span + 1) * sizeof(int32_t)),
                 o_flag = 256, o_diag = o_flag + fb, o_chunk = o_diag + fb,
                 o_temp = o_chunk + dia_align((size_t)chunks * sizeof(int32_t));
    GS_TRY(gs_dmalloc_ordered(ctx, (void **)&d_scratch, o_temp + temp, "DIA build scratch"));
    unsigned long long *d_in = (unsigned long long *)d_scratch; /* slots in range */
    int32_t *d_flag = (int32_t *)(d_scratch + o_flag), *d_diag = (int32_t *)(d_scratch + o_diag);
    int32_t *d_chunk = (int32_t *)(d_scratch + o_chunk);
    int32_t h_ndiag = 0;
    unsigned long long h_in = 0;
    /* the counter and the flags in one memset */
    GS_TRY(GS_CUDA(cudaMemsetAsync(d_scratch, 0, o_flag + (size_t)(span + 1) * sizeof(int32_t),
                                   s)));
    gs_chunk_rows_kernel<<<gs_grid_blocks(m, 256), 256, 0, s>>>(A->m, A->d_row_ptr32, d_chunk);
    GS_TRY(GS_CHECK_LAUNCH(s, "gs_chunk_rows_kernel"));
    dia_mark_kernel<<<gs_grid_blocks(nnz, DIA_BUILD_BLOCK), DIA_BUILD_BLOCK, 0, s>>>(
        nnz, A->m, A->d_row_ptr32, d_chunk, chunks, A->d_col, d_flag);
    GS_TRY(GS_CHECK_LAUNCH(s, "dia_mark_kernel"));
    GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(d_scratch + o_temp, temp, d_flag, d_diag,
                                                 span + 1, s)));
    GS_TRY(GS_CUDA(cudaMemcpyAsync(&h_ndiag, d_diag + span, sizeof h_ndiag,
                                   cudaMemcpyDeviceToHost, s)));
    GS_TRY(GS_CUDA(cudaStreamSynchronize(s)));
    D->ndiag = (gs_idx_t)h_ndiag;

    GS_TRY(gs_dia_check_fill(D->ndiag, A->m, A->nnz, max_fill));

    const size_t nval = (size_t)D->pitch * (size_t)D->ndiag;
    GS_TRY(gs_dmalloc_ordered(ctx, (void **)&D->d_offsets, (size_t)D->ndiag * sizeof(int32_t),
                              "DIA offsets"));
    if (float_values)
      GS_TRY(gs_dmalloc_ordered(ctx, (void **)&D->d_valf, nval * sizeof(float), "DIA values"));
    else
      GS_TRY(gs_dmalloc_ordered(ctx, (void **)&D->d_val, nval * sizeof(gs_val_t), "DIA values"));
    const unsigned ogrid = gs_grid_blocks(span, DIA_BUILD_BLOCK);
    dia_offsets_kernel<<<ogrid < DIA_REDUCE_BLOCKS ? ogrid : DIA_REDUCE_BLOCKS, DIA_BUILD_BLOCK,
                         0, s>>>(d_flag, d_diag, m, n, D->d_offsets, d_in);
    GS_TRY(GS_CHECK_LAUNCH(s, "dia_offsets_kernel"));
    /* the slab: pieces of up to kc entries a row (every row has at most ndiag) */
    const int kc = D->ndiag < 32 ? (int)D->ndiag : 32, slots = gs_tile_slots(kc);
    const size_t vb = float_values ? sizeof(float) : sizeof(gs_val_t);
    const int warps = gs_tile_warps(slots, vb);
    const size_t smem = (size_t)warps * (size_t)slots * (sizeof(int) + vb);
    const unsigned grid = gs_tile_blocks(D->pitch / 32, warps);
    if (float_values)
      dia_slab_kernel<float><<<grid, 32 * warps, smem, s>>>(A->m, D->ndiag, D->pitch, kc,
                                                            A->d_row_ptr32, A->d_col, A->d_val,
                                                            D->d_offsets, D->d_valf);
    else
      dia_slab_kernel<double><<<grid, 32 * warps, smem, s>>>(A->m, D->ndiag, D->pitch, kc,
                                                             A->d_row_ptr32, A->d_col, A->d_val,
                                                             D->d_offsets, D->d_val);
    GS_TRY(GS_CHECK_LAUNCH(s, "dia_slab_kernel"));
    /* the byte model's count, and the scratch idle before it goes */
    GS_TRY(GS_CUDA(cudaMemcpyAsync(&h_in, d_in, sizeof h_in, cudaMemcpyDeviceToHost, s)));
    GS_TRY(GS_CUDA(cudaStreamSynchronize(s)));
    D->slots_in_range = (int64_t)h_in;
  }
cleanup:
  if (st != GS_SUCCESS && d_scratch) cudaStreamSynchronize(ctx->stream);
  gs_dfree(ctx, d_scratch);
  return st; /* on failure the caller's dia_destroy frees what D holds */
}

/* For test_devbuild_gpu (spmv/dia_devbuild.h): the device build of A downloaded into a host
 * layout shaped as gs_dia_layout_build's (rounded as gs_dia_layout_round when float_values). */
extern "C" gs_status_t gs_dia_device_layout(gs_context_t *ctx, gs_matrix_t *A, double max_fill,
                                            int float_values, gs_dia_layout_t **out)
{
  gs_status_t st = GS_SUCCESS;
  dia_data_t D;
  gs_dcsr_t csr;
  gs_dia_layout_t *L = NULL;
  memset(&D, 0, sizeof D);
  if (!ctx || !A || !out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_dia_device_layout: NULL argument");
  *out = NULL;
  D.ctx = ctx;
  GS_TRY(gs_matrix_device_csr(A, &csr));
  GS_TRY(gs_dia_check_shape(csr.m, csr.n));
  D.m = csr.m;
  D.n = csr.n;
  D.nnz = (gs_idx_t)csr.nnz;
  D.pitch = gs_fmt_pitch(csr.m);
  GS_TRY(dia_build_device(ctx, &csr, max_fill, float_values, &D));
  L = (gs_dia_layout_t *)calloc(1, sizeof *L);
  if (!L) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory downloading DIA");
  L->m = D.m;
  L->n = D.n;
  L->ndiag = D.ndiag;
  L->pitch = D.pitch;
  L->slots_in_range = D.slots_in_range;
  if (D.ndiag > 0) {
    const size_t nval = (size_t)D.pitch * (size_t)D.ndiag;
    L->offsets = (int32_t *)malloc((size_t)D.ndiag * sizeof *L->offsets);
    if (float_values) L->valf = (float *)malloc(nval * sizeof *L->valf);
    else L->val = (gs_val_t *)malloc(nval * sizeof *L->val);
    if (!L->offsets || (!L->valf && !L->val))
      GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory downloading DIA");
    GS_TRY(gs_copy_to_host(ctx, L->offsets, D.d_offsets, (size_t)D.ndiag * sizeof *L->offsets));
    if (float_values) GS_TRY(gs_copy_to_host(ctx, L->valf, D.d_valf, nval * sizeof *L->valf));
    else GS_TRY(gs_copy_to_host(ctx, L->val, D.d_val, nval * sizeof *L->val));
  }
  *out = L;
  L = NULL;
cleanup:
  gs_dia_layout_destroy(&L);
  gs_dfree(ctx, D.d_offsets);
  gs_dfree(ctx, D.d_val);
  gs_dfree(ctx, D.d_valf);
  return st;
}

/* The host builder (build=host): gs_dia_layout_build on the host CSR, uploaded. */
static gs_status_t dia_build_host(gs_context_t *ctx, gs_matrix_t *A, const gs_spmv_cfg_t *cfg,
                                  dia_data_t *D)
{
  gs_status_t st = GS_SUCCESS;
  gs_dia_layout_t *L = NULL;
  size_t nval = 0;
  GS_TRY(gs_dia_layout_build(&L, gs_matrix_host(A), cfg->v[DIA_OPT_MAX_FILL]));
  if (gs_cfg_float_values(cfg)) GS_TRY(gs_dia_layout_round(L)); /* once, here */
  D->ndiag = L->ndiag;
  D->slots_in_range = L->slots_in_range;
  nval = (size_t)L->pitch * (size_t)L->ndiag;
  GS_TRY(gs_upload(ctx, (void **)&D->d_offsets, L->offsets, (size_t)L->ndiag * sizeof(int32_t),
                   "DIA offsets"));
  if (L->valf)
    GS_TRY(gs_upload(ctx, (void **)&D->d_valf, L->valf, nval * sizeof(float), "DIA values"));
  else
    GS_TRY(gs_upload(ctx, (void **)&D->d_val, L->val, nval * sizeof(gs_val_t), "DIA values"));
cleanup:
  gs_dia_layout_destroy(&L);
  return st;
}

static gs_status_t dia_prepare(gs_context_t *ctx, gs_matrix_t *A, const gs_spmv_cfg_t *cfg,
                               void **data, unsigned *caps)
{
  /* No atomics: op T, a gather, is as deterministic as op N. spmv.c's defaults do not include
   * DETERMINISTIC_T, so it is raised here. */
  *caps |= GS_SPMV_CAP_DETERMINISTIC_T;
  gs_status_t st = GS_SUCCESS;
  dia_data_t *D = NULL;
  gs_dcsr_t csr;
  *data = NULL;
  D = (dia_data_t *)calloc(1, sizeof *D);
  if (!D) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory preparing dia");
  D->ctx = ctx;
  D->val_bytes = gs_cfg_float_values(cfg) ? sizeof(float) : sizeof(gs_val_t);
  D->vec_bytes = cfg->precision == GS_PRECISION_FLOAT ? sizeof(float) : sizeof(gs_val_t);
  if (gs_cfg_host_build(cfg)) {
    GS_TRY(dia_build_host(ctx, A, cfg, D));
    D->m = gs_matrix_host(A)->m;
    D->n = gs_matrix_host(A)->n;
    D->nnz = (gs_idx_t)gs_matrix_host(A)->nnz;
  } else {
    GS_TRY(gs_matrix_device_csr(A, &csr));
    GS_TRY(gs_dia_check_shape(csr.m, csr.n));
    D->m = csr.m;
    D->n = csr.n;
    D->nnz = (gs_idx_t)csr.nnz;
    D->pitch = gs_fmt_pitch(csr.m);
    GS_TRY(dia_build_device(ctx, &csr, cfg->v[DIA_OPT_MAX_FILL], gs_cfg_float_values(cfg), D));
  }
  D->pitch = gs_fmt_pitch(D->m);
  D->bytes = (size_t)D->ndiag * sizeof(int32_t) +
             (size_t)D->pitch * (size_t)D->ndiag * D->val_bytes;
  *data = D;
  D = NULL;
cleanup:
  dia_destroy(D);
  return st;
}

template <typename Val, typename T>
static gs_status_t dia_launch(gs_context_t *ctx, const dia_data_t *D, const Val *val, gs_op_t op,
                              T alpha, const T *d_x, T beta, T *d_y)
{
  if (op == GS_OP_T) {
    if (D->n == 0) return GS_SUCCESS;
    dia_spmv_kernel<true, Val, T><<<gs_grid_blocks(D->n, GS_FMT_BLOCK), GS_FMT_BLOCK, 0,
                                    ctx->stream>>>(D->m, D->n, D->ndiag, D->pitch, D->d_offsets,
                                                   val, d_x, alpha, beta, d_y);
    return GS_CHECK_LAUNCH(ctx->stream, "dia_spmv_kernel<T>");
  }
  if (D->m == 0) return GS_SUCCESS;
  dia_spmv_kernel<false, Val, T><<<gs_grid_blocks(D->m, GS_FMT_BLOCK), GS_FMT_BLOCK, 0,
                                   ctx->stream>>>(D->m, D->n, D->ndiag, D->pitch, D->d_offsets,
                                                  val, d_x, alpha, beta, d_y);
  return GS_CHECK_LAUNCH(ctx->stream, "dia_spmv_kernel<N>");
}

static gs_status_t dia_apply(gs_context_t *ctx, void *data, gs_op_t op, double alpha,
                             const double *d_x, double beta, double *d_y)
{
  const dia_data_t *D = (const dia_data_t *)data;
  if (D->d_valf) return dia_launch(ctx, D, D->d_valf, op, alpha, d_x, beta, d_y);
  return dia_launch(ctx, D, D->d_val, op, alpha, d_x, beta, d_y);
}

/* precision=float: the rounded layout (always uploaded as floats then), float vectors */
static gs_status_t dia_apply_f32(gs_context_t *ctx, void *data, gs_op_t op, float alpha,
                                 const float *d_x, float beta, float *d_y)
{
  const dia_data_t *D = (const dia_data_t *)data;
  return dia_launch(ctx, D, (const float *)D->d_valf, op, alpha, d_x, beta, d_y);
}

static gs_status_t dia_memory(const void *data, gs_spmv_mem_t *mem)
{
  const dia_data_t *D = (const dia_data_t *)data;
  const size_t v = D->vec_bytes; /* vectors; the stored values take D->val_bytes */
  mem->device_bytes = D->bytes;
  mem->bytes_per_apply = (size_t)D->slots_in_range * D->val_bytes + (size_t)D->ndiag * sizeof(int32_t) +
                         (size_t)D->n * v + (size_t)D->m * v;
  mem->bytes_per_apply_t = mem->bytes_per_apply; /* same slots, x of m, y of n (banner) */
  return GS_SUCCESS;
}

static void dia_describe(const void *data, char *buf, size_t len)
{
  const dia_data_t *D = (const dia_data_t *)data;
  double slots = (double)D->ndiag * (double)D->m;
  snprintf(buf, len, "%d diagonals, pitch %lld, %.0f slots for %d entries (fill %.2fx)",
           (int)D->ndiag, (long long)D->pitch, slots, (int)D->nnz,
           D->nnz > 0 ? slots / (double)D->nnz : 1.0);
}

extern "C" const gs_spmv_ops_t gs_spmv_dia_ops = {
    GS_SPMV_OPS_VERSION,
    "dia",
    "DIA, diagonals column-major padded to 32, one thread per row (Bell & Garland, SC09, 3.1); "
    "refuses fill; T by gather",
    GS_SPMV_FLAG_TRANSPOSE | GS_SPMV_FLAG_HOST_LAYOUT | GS_SPMV_FLAG_MIXED | GS_SPMV_FLAG_FLOAT |
        GS_SPMV_FLAG_SHARED_CSR | GS_SPMV_FLAG_DEVICE_BUILD,
    dia_options,
    dia_prepare,
    dia_apply,
    dia_memory,
    dia_destroy,
    gs_dia_host_apply,
    dia_describe,
    dia_apply_f32};
