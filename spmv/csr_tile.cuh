/* spmv/csr_tile.cuh: device pieces shared by the column-major layout builders that read the
 * shared device CSR (spmv/bg_devbuild.cu: ELL, HYB, COO; spmv/dia_kernels.cu: DIA). CUDA only.
 *
 * Row tiles (ELL and DIA slabs). A warp owns a tile of 32 consecutive rows (lane = row: every
 * slot store of the slab is 32 consecutive rows of one column, 128 or 256 bytes). A thread
 * walking its own row reads col/val with a stride of the row length across the warp (32
 * sectors a load): the tile's entries are staged in shared memory first, with loads where
 * consecutive lanes read consecutive entries:
 *   flat     the tile's whole entry range [rp[i0], rp[i0 + 32]) when it fits the warp's
 *            buffer: lane l loads entries l, l + 32, ... (one 128-byte column line and one
 *            256-byte value line a warp load), GS_TILE_UNROLL loads a lane in flight; entry q
 *            of the range sits at q + q / 32 (a skew of one slot a line, so that rows of a
 *            power-of-two length do not all fall into one bank when lane = row reads them).
 *   pieces   otherwise (long rows): up to `kc` consecutive entries of each row the mask names,
 *            one row a load (lanes = entries of the row), 8 rows' loads in flight; row r's
 *            piece at r * stride (stride odd: lane = row reads hit distinct banks).
 * Values are staged in the layout's type (float rounded with __double2float_rn, the host's
 * (float) cast), so a warp's buffer is W * (4 + sizeof(Val)) bytes.
 *
 * Entry to row (COO fill, DIA's marks): a thread a CSR entry, load-balanced whatever the row
 * lengths. gs_chunk_rows_kernel writes, for each chunk of GS_CHUNK entries, the row holding
 * its first entry (a thread a row); the row of entry q is then found by a binary search of the
 * row offsets between the rows of q's chunk and of the next one (a few steps over ~GS_CHUNK /
 * mean-length rows, read through L1, where the other entries of the chunk read them too). */
#ifndef GS_SPMV_CSR_TILE_CUH
#define GS_SPMV_CSR_TILE_CUH

#include <stdint.h>

#include <cuda_runtime.h>

#define GS_TILE_FULL 0xffffffffu
#define GS_TILE_UNROLL 8   /* flat staging: loads a lane issues before it stores them */
#define GS_TILE_PIECES 8   /* piece staging: rows loaded at once */
#define GS_CHUNK_LOG 10
#define GS_CHUNK (1 << GS_CHUNK_LOG) /* entries a chunk of the entry-to-row map */

/* A CSR value in the layout's type: exact for double, rounded to nearest for float. */
template <typename Val> static __device__ __forceinline__ Val gs_tile_val(double v);
template <> __device__ __forceinline__ double gs_tile_val<double>(double v) { return v; }
template <> __device__ __forceinline__ float gs_tile_val<float>(double v)
{
  return __double2float_rn(v);
}

/* Per-warp slots of the staging buffer for pieces of up to kc entries (kc <= 32): 32 rows at
 * an odd stride <= kc + 1, and the flat range of up to 32 * kc entries with its skew. */
static __host__ __device__ __forceinline__ int gs_tile_slots(int kc) { return 32 * (kc + 1); }
/* The largest flat range that fits those slots: 32 * kc (skewed, its last slot is 33 kc - 2). */
static __host__ __device__ __forceinline__ int gs_tile_cap(int kc) { return 32 * kc; }
/* Stride of the pieces (odd: conflict-free when lane = row reads slot k of its own row). */
static __host__ __device__ __forceinline__ int gs_tile_stride(int kc) { return kc | 1; }
/* Slot of entry q of a flat range. */
static __device__ __forceinline__ int gs_tile_skew(int q) { return q + (q >> 5); }

/* Warps a block of a tile kernel: as many as fit 48 KB of dynamic shared memory (no opt-in),
 * between 1 and 8. */
static inline int gs_tile_warps(int slots, size_t val_bytes)
{
  const size_t per_warp = (size_t)slots * (sizeof(int) + val_bytes);
  size_t w = (48u * 1024u) / per_warp;
  return w < 1 ? 1 : (w > 8 ? 8 : (int)w);
}

/* The warp's buffers in the block's dynamic shared memory: values of every warp first (8-byte
 * aligned), then columns. */
template <typename Val>
static __device__ __forceinline__ void gs_tile_buffers(unsigned char *smem, int slots,
                                                       Val **s_val, int **s_col)
{
  const int warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  *s_val = (Val *)smem + (size_t)warp * slots;
  *s_col = (int *)(smem + (size_t)warps * slots * sizeof(Val)) + (size_t)warp * slots;
}

/* Flat staging: entries a .. a + n - 1 (n <= the cap) to slots gs_tile_skew(q). Every lane
 * calls it; the caller syncs the warp before reading what other lanes staged. */
template <typename Val>
static __device__ __forceinline__ void gs_tile_stage_flat(int64_t a, int n,
                                                          const int *__restrict__ col,
                                                          const double *__restrict__ val,
                                                          int *s_col, Val *s_val)
{
  const int lane = threadIdx.x & 31;
  for (int q0 = lane; q0 < n; q0 += 32 * GS_TILE_UNROLL) {
    int c[GS_TILE_UNROLL];
    double v[GS_TILE_UNROLL];
#pragma unroll
    for (int j = 0; j < GS_TILE_UNROLL; ++j) { /* every load before the first store */
      const int q = q0 + 32 * j;
      c[j] = 0;
      v[j] = 0.0;
      if (q < n) {
        c[j] = __ldg(col + a + q);
        v[j] = __ldg(val + a + q);
      }
    }
#pragma unroll
    for (int j = 0; j < GS_TILE_UNROLL; ++j) {
      const int q = q0 + 32 * j;
      if (q < n) {
        s_col[gs_tile_skew(q)] = c[j];
        s_val[gs_tile_skew(q)] = gs_tile_val<Val>(v[j]);
      }
    }
  }
}

/* Piece staging: for each lane r set in `mask` (warp-uniform), its `cnt` (<= 32) entries from
 * CSR position `start` (both lane r's own values) to slots r * stride + 0 .. cnt - 1. Every lane
 * calls it with the same mask; the caller syncs the warp before and after. */
template <typename Val>
static __device__ __forceinline__ void gs_tile_stage_pieces(unsigned mask, int64_t start, int cnt,
                                                            int stride,
                                                            const int *__restrict__ col,
                                                            const double *__restrict__ val,
                                                            int *s_col, Val *s_val)
{
  const int lane = threadIdx.x & 31;
  while (mask) {
    int row[GS_TILE_PIECES], len[GS_TILE_PIECES], c[GS_TILE_PIECES];
    double v[GS_TILE_PIECES];
#pragma unroll
    for (int j = 0; j < GS_TILE_PIECES; ++j) {
      const int r = mask ? __ffs(mask) - 1 : 0;
      const int have = mask != 0u;
      mask &= mask - 1u; /* stays 0 once empty */
      const int64_t s = __shfl_sync(GS_TILE_FULL, (long long)start, r);
      const int k = __shfl_sync(GS_TILE_FULL, cnt, r);
      row[j] = r;
      len[j] = have ? k : 0;
      c[j] = 0;
      v[j] = 0.0;
      if (lane < len[j]) {
        c[j] = __ldg(col + s + lane);
        v[j] = __ldg(val + s + lane);
      }
    }
#pragma unroll
    for (int j = 0; j < GS_TILE_PIECES; ++j)
      if (lane < len[j]) {
        s_col[row[j] * stride + lane] = c[j];
        s_val[row[j] * stride + lane] = gs_tile_val<Val>(v[j]);
      }
  }
}

/* Grid of a warp-per-tile kernel: one warp a tile up to the grid cap, warp-stride beyond. */
static inline unsigned gs_tile_blocks(int64_t tiles, int warps)
{
  int64_t b = (tiles + warps - 1) / warps;
  if (b < 1) b = 1;
  if (b > 65535 * 16) b = 65535 * 16; /* GS_GRID_MAX_BLOCKS */
  return (unsigned)b;
}

/* ---- entry to row ------------------------------------------------------------------------- */

/* chunk_row[c] = the row holding entry c * GS_CHUNK, for every chunk c of the off[m] entries
 * (off: m + 1 nondecreasing offsets). A thread a row; a row longer than a chunk writes each
 * chunk that starts inside it. */
static __global__ void __launch_bounds__(256)
gs_chunk_rows_kernel(int m, const int *__restrict__ off, int *__restrict__ chunk_row)
{
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < m;
       i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t s = __ldg(off + i), e = __ldg(off + i + 1);
    for (int64_t c = (s + GS_CHUNK - 1) >> GS_CHUNK_LOG; (c << GS_CHUNK_LOG) < e; ++c)
      chunk_row[c] = (int)i;
  }
}

/* Number of chunks of nnz entries. */
static inline int64_t gs_chunk_count(int64_t nnz) { return (nnz + GS_CHUNK - 1) >> GS_CHUNK_LOG; }

/* The row r of entry q (off[r] <= q < off[r + 1]) among the m rows: the largest r with
 * off[r] <= q between the rows of q's chunk and of the next chunk (or the last row). */
static __device__ __forceinline__ int gs_row_of(int64_t q, const int *__restrict__ off,
                                                const int *__restrict__ chunk_row,
                                                int64_t chunks, int m)
{
  const int64_t c = q >> GS_CHUNK_LOG;
  int lo = __ldg(chunk_row + c), hi = c + 1 < chunks ? __ldg(chunk_row + c + 1) : m - 1;
  while (lo < hi) {
    const int mid = lo + (hi - lo + 1) / 2;
    if (__ldg(off + mid) <= q) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

#endif
