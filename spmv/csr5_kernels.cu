/* spmv/csr5_kernels.cu: the `csr5` backend, CSR5 SpMV (Liu & Vinter, "CSR5: An Efficient Storage
 * Format for Cross-Platform Sparse Matrix-Vector Multiplication", ICS 2015; "the paper" below),
 * written from the paper; the layout is described in spmv/csr5.h.
 *
 * Conversion (prepare, on the GPU, timed and shown by describe; section 3.2 "CSR5 generation"):
 *  csr5_desc_kernel    a warp per tile, lane l its sigma entries: the row holding its first entry
 *                      by a bounded binary search in row_ptr, then a walk over the rows starting
 *                      inside its range (one step per row start; a run of empty rows is skipped
 *                      by another search) that sets bit_flag; y_offset by a warp scan of the
 *                      lanes' popcounts, seg_offset from a ballot of the lanes with a row start;
 *                      lane 0 writes tile_ptr (dirty bit: the tile's segments are not
 *                      consecutive rows), carry_row and the dirty tile's segment count. One
 *                      more warp does the incomplete tile (its rows, its carry slot).
 *  scans               exclusive prefix sums (reduce per 2048 items, one block over the block
 *                      sums, down-sweep) of the dirty tiles' segment counts (empty_ptr) and of
 *                      the empty-row flags (the empty-row list).
 *  csr5_eoff_kernel    a thread per row starting in a dirty tile: its segment index from the
 *                      descriptor (y_offset + the lane's bits below it) -> empty_offset.
 *  csr5_transpose_kernel  a thread per stored slot: val, col of the full tiles transposed into
 *                      the tile's column-major order (writes coalesced, reads inside one tile).
 *  Three scalars are read back to size the last two arrays and the grids. build=host runs
 *  gs_csr5_build (spmv/csr5_build.c) instead and uploads its arrays: the same bytes.
 * op N, one launch of csr5_spmv_kernel: 128-thread blocks, one task per warp:
 *  - full tile t (section 4, Algorithm 1): the lane's descriptor (words coalesced); sigma loads
 *    of col and val at t W + j 32 + l (coalesced: the transposed storage), issued 8 at a time
 *    through ld.global.nc.L1::no_allocate before the 8 gathers of x; the lane's sequential sum
 *    restarts at each bit_flag: a segment closed inside the lane is a whole row sum and is
 *    written at once, the part before the lane's first flag (its head) goes to the segmented
 *    sum. The segmented sum (the paper's fast segmented sum): the heads are scanned over the
 *    warp with a Kogge-Stone shuffle scan keyed by the number of flagged lanes before each lane,
 *    and a lane's last segment adds the scanned value of lane + seg_offset + 1 (the last lane of
 *    its run). The paper forms that sum as a difference of two plain prefix sums; a difference
 *    loses the small rows next to large ones (cancellation not bounded by the row's own
 *    magnitudes), so the same seg_offset indexes a segmented scan here. Row of segment k:
 *    tile_ptr + c + k, or through empty_offset in a dirty tile (section 3.2). A tile that
 *    begins inside a row (first bit clear) stores that row's part, the scan value of the last
 *    lane of the first run, in carry[t].
 *  - the incomplete tile (the paper's CSR-vector-like tail): a warp per row of
 *    [tail_row0, tail_row1), lanes strided over the row's entries past ntiles W (read from the
 *    shared CSR), butterfly sum; the first row's part goes to carry[ntiles] when the row began
 *    in a full tile.
 *  - the empty rows, 32 a warp from the list: y = beta y (skipped for beta = 1).
 *  csr5_fixup_kernel then (only when some slot carries): a warp per slot; the head of each run of
 *  slots with the same carry_row R sums the run's carries (lanes strided, butterfly) and adds
 *  alpha times the sum to y[R], written before by the tile where R begins. The paper's
 *  calibration adds the carries with atomics; this fixed order makes op N deterministic
 *  (GS_SPMV_CAP_DETERMINISTIC kept). Products and the output update use __dmul_rn / __dadd_rn
 *  (no contraction into FMA), so the host emulation (csr5_build.c) gives the same bits.
 * op T, csr5_spmv_t_kernel after y = beta y (gs_launch_scale): the same tasks without the empty
 *  rows; each lane walks its entries, finds each entry's row from its segment (y_offset - 1 at
 *  the lane's start, +1 at each flag; -1 is the tile's first row) and adds val * alpha x[row] to
 *  y[col] with atomics: not deterministic (GS_SPMV_CAP_DETERMINISTIC_T cleared).
 * Byte model (memory()): 12 nnz (val, col: transposed copy and tail) + 4 ntiles (tile_ptr)
 *  + 128 words ntiles (descriptors) + 4 (tail rows + 1) (row_ptr of the tail) + 4 dirty tiles
 *  + 4 empty_offset + 4 empty rows + 4 (ntiles + 1) (carry_row, fix-up) + 16 carries + 8n (x)
 *  + 8m (y); op T the same matrix arrays + 8m (x) + 3 x 8n (y scaled, then atomics).
 * Assumptions: row_ptr monotone with row_ptr[0] = 0, columns in 0..n-1 (gs_matrix_create);
 *  at most 2^31 - 1 entries (not WIDE: spmv.c refuses wider matrices), so every position and
 *  row fits 31 bits and tile_ptr's bit 31 is free; every search loop is bounded; every shuffle
 *  and ballot runs with all 32 lanes of a warp converged (tasks are warp-uniform: all lanes of a
 *  warp share the task index); no block-wide barrier in the product kernels. */
#include <stdio.h>
#include <stdlib.h>

#include "core/error.h"
#include "spmv/common_kernels.h"
#include "spmv/csr5.h"
#include "spmv/device_util.cuh"
#include "spmv/spmv_impl.h"

#define FULL_MASK 0xffffffffu
#define CSR5_THREADS 128
#define CSR5_CHUNK 8 /* loads in flight per lane before its gathers of x */
#define SCAN_THREADS 256
#define SCAN_ITEMS 8
#define SCAN_TILE (SCAN_THREADS * SCAN_ITEMS)

typedef struct csr5_info {
  int n_dirty, n_cont;
  gs_idx_t tail_row0, tail_row1;
} csr5_info_t;

typedef struct csr5_data {
  gs_context_t *ctx;
  gs_dcsr_t A; /* borrowed shared device CSR (row_ptr and the incomplete tile) */
  int sigma, ybits, words, sigma_auto;
  int64_t ntiles, nnz_full;
  gs_idx_t tail_row0, tail_row1, n_empty;
  int64_t n_dirty, n_cont;
  uint32_t n_eoff;
  uint32_t *d_tile_ptr, *d_desc, *d_empty_ptr;
  int32_t *d_empty_offset, *d_carry_row, *d_empty_rows;
  gs_idx_t *d_col;
  double *d_val;
  double *d_carry; /* ntiles + 1 */
  double prepare_ms;
} csr5_data_t;

struct csr5_args {
  const int32_t *__restrict__ rp;
  const gs_idx_t *__restrict__ col; /* shared CSR: the incomplete tile */
  const double *__restrict__ val;
  const gs_idx_t *__restrict__ col5; /* transposed full tiles */
  const double *__restrict__ val5;
  const uint32_t *__restrict__ tile_ptr;
  const uint32_t *__restrict__ desc;
  const uint32_t *__restrict__ empty_ptr;
  const int32_t *__restrict__ empty_offset;
  const int32_t *__restrict__ empty_rows;
  const double *__restrict__ x;
  double *y;
  double *carry;
  double alpha, beta;
  int sigma, ybits, words;
  int64_t ntiles, nnz_full, tail_rows, empty_chunks;
  gs_idx_t tail_row0, n_empty;
};

/* ---- shared device helpers ------------------------------------------------------------------ */

/* First r in [lo, hi] with rp[r] > p, given rp[hi] > p (bounded: never loops on a corrupt CSR). */
static __device__ __forceinline__ gs_idx_t csr5_upper(const int32_t *__restrict__ rp, gs_idx_t lo,
                                                      gs_idx_t hi, int64_t p)
{
  for (int it = 0; it < CSR5_SEARCH_ITERS && lo < hi; ++it) {
    const gs_idx_t mid = lo + ((hi - lo) >> 1);
    if ((int64_t)rp[mid] > p) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

static __device__ __forceinline__ void csr5_desc_load(const uint32_t *__restrict__ desc,
                                                      int64_t t, int lane, int words, int ybits,
                                                      int sigma, int *yoff, int *soff,
                                                      uint64_t *flags)
{
  const uint32_t *w = desc + t * words * CSR5_OMEGA + lane;
  uint64_t lo = __ldg(&w[0]);
  if (words > 1) lo |= (uint64_t)__ldg(&w[CSR5_OMEGA]) << 32;
  const uint64_t hi = words > 2 ? (uint64_t)__ldg(&w[2 * CSR5_OMEGA]) : 0;
  const int hdr = ybits + CSR5_SEG_BITS;
  const uint64_t mask = sigma == 64 ? ~0ull : (1ull << sigma) - 1;
  *yoff = (int)(lo & ((1ull << ybits) - 1));
  *soff = (int)((lo >> ybits) & (CSR5_OMEGA - 1));
  *flags = ((lo >> hdr) | (hi << (64 - hdr))) & mask;
}

/* y = alpha s + beta y, rounded as the host emulation rounds it; y not read when beta == 0. */
static __device__ __forceinline__ void csr5_store(double *y, gs_idx_t row, double alpha,
                                                  double beta, double s)
{
  y[row] = beta == 0.0 ? __dmul_rn(alpha, s)
                       : __dadd_rn(__dmul_rn(alpha, s), __dmul_rn(beta, y[row]));
}

static __device__ __forceinline__ gs_idx_t csr5_seg_row(const csr5_args &a, gs_idx_t R, int cont,
                                                        bool dirty, uint32_t eptr, int k)
{
  return dirty ? R + a.empty_offset[eptr + (uint32_t)k] : R + cont + k;
}

/* ---- op N ------------------------------------------------------------------------------------ */

/* Tile t as lane `lane` sees it: tile_ptr's first row R and dirty bit, the lane's descriptor
 * (y_offset, seg_offset, bit flags), whether the tile continues a row of the previous one, the
 * tile's empty_offset base, and the lane's column of the transposed val / col_idx. */
struct csr5_tile {
  gs_idx_t R;
  bool dirty;
  int yoff, soff, cont;
  uint64_t flags;
  uint32_t eptr;
  const gs_idx_t *tc;
  const double *tv;
};

static __device__ __forceinline__ csr5_tile csr5_tile_open(const csr5_args &a, int64_t t,
                                                          int lane)
{
  csr5_tile k;
  const uint32_t tp = __ldg(&a.tile_ptr[t]);
  k.R = (gs_idx_t)(tp & CSR5_ROW_MASK);
  k.dirty = (tp & CSR5_DIRTY) != 0;
  csr5_desc_load(a.desc, t, lane, a.words, a.ybits, a.sigma, &k.yoff, &k.soff, &k.flags);
  k.cont = __shfl_sync(FULL_MASK, (int)(k.flags & 1u), 0) ? 0 : 1;
  k.eptr = k.dirty ? __ldg(&a.empty_ptr[t]) : 0u;
  const int64_t base = t * (int64_t)(CSR5_OMEGA * a.sigma);
  k.tc = a.col5 + base + lane;
  k.tv = a.val5 + base + lane;
  return k;
}

static __device__ __forceinline__ void csr5_tile_n(const csr5_args &a, int64_t t, int lane)
{
  const int sigma = a.sigma;
  const csr5_tile k = csr5_tile_open(a, t, lane);
  const gs_idx_t R = k.R;
  const bool dirty = k.dirty;
  const int yoff = k.yoff, soff = k.soff, cont = k.cont;
  const uint64_t flags = k.flags;
  const uint32_t eptr = k.eptr;
  const gs_idx_t *tc = k.tc;
  const double *tv = k.tv;

  /* The lane's sequential sums (section 4.2): segments closed inside the lane are rows. */
  double run = 0.0, head = 0.0;
  bool seen = false;
  int seg = yoff;
  for (int j0 = 0; j0 < sigma; j0 += CSR5_CHUNK) {
    gs_idx_t c[CSR5_CHUNK];
    double v[CSR5_CHUNK];
#pragma unroll
    for (int i = 0; i < CSR5_CHUNK; ++i) {
      const int j = j0 + i;
      c[i] = j < sigma ? ld_stream(&tc[(int64_t)j * CSR5_OMEGA]) : 0;
      v[i] = j < sigma ? ld_stream(&tv[(int64_t)j * CSR5_OMEGA]) : 0.0;
    }
#pragma unroll
    for (int i = 0; i < CSR5_CHUNK; ++i)
      if (j0 + i < sigma) v[i] = __dmul_rn(v[i], __ldg(&a.x[c[i]]));
#pragma unroll
    for (int i = 0; i < CSR5_CHUNK; ++i) {
      const int j = j0 + i;
      if (j >= sigma) break;
      if ((flags >> j) & 1u) {
        if (seen) csr5_store(a.y, csr5_seg_row(a, R, cont, dirty, eptr, seg++), a.alpha, a.beta, run);
        else head = run;
        seen = true;
        run = 0.0;
      }
      run = run + v[i];
    }
  }
  if (!seen) head = run;

  /* The segmented sum of the heads over the warp, keyed by the flagged lanes before each lane
   * (keys are non-decreasing: adding lane l - o's value when its key is l's is exact). */
  const unsigned fm = __ballot_sync(FULL_MASK, flags != 0);
  const int key = __popc(fm & ((1u << lane) - 1u));
  double v = head;
#pragma unroll
  for (int o = 1; o < CSR5_OMEGA; o <<= 1) {
    const double vin = __shfl_up_sync(FULL_MASK, v, o);
    const int kin = __shfl_up_sync(FULL_MASK, key, o);
    if (lane >= o && kin == key) v = vin + v;
  }
  const int src = min(lane + soff + 1, CSR5_OMEGA - 1);
  const double add = __shfl_sync(FULL_MASK, v, src);
  if (seen)
    csr5_store(a.y, csr5_seg_row(a, R, cont, dirty, eptr, seg), a.alpha, a.beta,
               lane < CSR5_OMEGA - 1 ? run + add : run);
  /* A continuation: the first run of lanes (up to the first flagged lane) holds row R's part. */
  if (cont && lane == (fm ? __ffs((int)fm) - 1 : CSR5_OMEGA - 1)) a.carry[t] = v;
}

static __device__ __forceinline__ void csr5_tail_n(const csr5_args &a, gs_idx_t r, int lane)
{
  const int64_t b = a.rp[r], e = a.rp[r + 1];
  if (b == e) return; /* an empty row: the empty-row tasks write it */
  double s = 0.0;
  for (int64_t k = (b > a.nnz_full ? b : a.nnz_full) + lane; k < e; k += CSR5_OMEGA)
    s = s + __dmul_rn(ld_stream(&a.val[k]), __ldg(&a.x[ld_stream(&a.col[k])]));
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) s = s + __shfl_xor_sync(FULL_MASK, s, o);
  if (lane != 0) return;
  if (b < a.nnz_full) a.carry[a.ntiles] = s; /* the row began in a full tile */
  else csr5_store(a.y, r, a.alpha, a.beta, s);
}

static __global__ void __launch_bounds__(CSR5_THREADS) csr5_spmv_kernel(csr5_args a)
{
  const int lane = threadIdx.x & 31;
  const int64_t g = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; /* warp-uniform */
  if (g < a.ntiles) {
    csr5_tile_n(a, g, lane);
    return;
  }
  int64_t i = g - a.ntiles;
  if (i < a.tail_rows) {
    csr5_tail_n(a, a.tail_row0 + (gs_idx_t)i, lane);
    return;
  }
  i -= a.tail_rows;
  if (i < a.empty_chunks) {
    const int64_t k = i * CSR5_OMEGA + lane;
    if (k < a.n_empty) {
      const gs_idx_t r = a.empty_rows[k];
      a.y[r] = a.beta == 0.0 ? 0.0 : __dmul_rn(a.beta, a.y[r]);
    }
  }
}

/* The carries: slot s (tile s, or the incomplete tile at s = ntiles) holds part of row
 * carry_row[s] (-1: none). The head of each run of slots with the same row sums the run. Every
 * lane of a warp has the same s: the loop and the ballot are warp-uniform. */
static __global__ void __launch_bounds__(256)
csr5_fixup_kernel(int64_t slots, const int32_t *__restrict__ carry_row,
                  const double *__restrict__ carry, double alpha, double *__restrict__ y)
{
  const int lane = threadIdx.x & 31;
  const int64_t warps = (int64_t)gridDim.x * (blockDim.x / 32);
  for (int64_t s = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; s < slots; s += warps) {
    const int32_t R = carry_row[s];
    if (R < 0 || (s > 0 && carry_row[s - 1] == R)) continue;
    double sum = 0.0;
    for (int64_t base = s; base < slots; base += 32) {
      const int64_t i = base + lane;
      const bool in = i < slots && carry_row[i] == R;
      if (in) sum += carry[i];
      if (__ballot_sync(FULL_MASK, in) != FULL_MASK) break;
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) sum = sum + __shfl_xor_sync(FULL_MASK, sum, o);
    if (lane == 0 && sum != 0.0) y[R] = __dadd_rn(y[R], __dmul_rn(alpha, sum));
  }
}

/* ---- op T ------------------------------------------------------------------------------------ */

static __device__ __forceinline__ void csr5_tile_t(const csr5_args &a, int64_t t, int lane)
{
  const int sigma = a.sigma;
  const csr5_tile k = csr5_tile_open(a, t, lane);
  const gs_idx_t R = k.R;
  const bool dirty = k.dirty;
  const int yoff = k.yoff, cont = k.cont;
  const uint64_t flags = k.flags;
  const uint32_t eptr = k.eptr;
  const gs_idx_t *tc = k.tc;
  const double *tv = k.tv;
  int seg = yoff - 1; /* segment of the lane's first entries; -1: row R (a continuation) */
  double f = 0.0;
  for (int j0 = 0; j0 < sigma; j0 += CSR5_CHUNK) {
    gs_idx_t c[CSR5_CHUNK];
    double v[CSR5_CHUNK];
#pragma unroll
    for (int i = 0; i < CSR5_CHUNK; ++i) {
      const int j = j0 + i;
      c[i] = j < sigma ? ld_stream(&tc[(int64_t)j * CSR5_OMEGA]) : 0;
      v[i] = j < sigma ? ld_stream(&tv[(int64_t)j * CSR5_OMEGA]) : 0.0;
    }
#pragma unroll
    for (int i = 0; i < CSR5_CHUNK; ++i) {
      const int j = j0 + i;
      if (j >= sigma) break;
      const bool flag = (flags >> j) & 1u;
      if (j == 0 || flag) {
        if (flag) ++seg;
        f = a.alpha * __ldg(&a.x[seg < 0 ? R : csr5_seg_row(a, R, cont, dirty, eptr, seg)]);
      }
      atomicAdd(&a.y[c[i]], v[i] * f);
    }
  }
}

static __device__ __forceinline__ void csr5_tail_t(const csr5_args &a, gs_idx_t r, int lane)
{
  const int64_t b = a.rp[r], e = a.rp[r + 1];
  if (b == e) return;
  const double f = a.alpha * __ldg(&a.x[r]);
  for (int64_t k = (b > a.nnz_full ? b : a.nnz_full) + lane; k < e; k += CSR5_OMEGA)
    atomicAdd(&a.y[ld_stream(&a.col[k])], ld_stream(&a.val[k]) * f);
}

static __global__ void __launch_bounds__(CSR5_THREADS) csr5_spmv_t_kernel(csr5_args a)
{
  const int lane = threadIdx.x & 31;
  const int64_t g = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  if (g < a.ntiles) csr5_tile_t(a, g, lane);
  else if (g - a.ntiles < a.tail_rows) csr5_tail_t(a, a.tail_row0 + (gs_idx_t)(g - a.ntiles), lane);
}

/* ---- conversion kernels (prepare) ------------------------------------------------------------ */

static __global__ void __launch_bounds__(CSR5_THREADS)
csr5_desc_kernel(const int32_t *__restrict__ rp, gs_idx_t m, int64_t nnz, int sigma, int ybits,
                 int words, int64_t ntiles, uint32_t *__restrict__ tile_ptr,
                 uint32_t *__restrict__ desc, int32_t *__restrict__ carry_row,
                 uint32_t *__restrict__ segs, csr5_info_t *info)
{
  const int lane = threadIdx.x & 31;
  const int64_t g = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; /* warp-uniform */
  const int64_t W = (int64_t)CSR5_OMEGA * sigma, nnz_full = ntiles * W;
  if (g < ntiles) {
    const int64_t e0 = g * W + (int64_t)lane * sigma, e_end = e0 + sigma;
    const gs_idx_t r0 = csr5_upper(rp, 0, m, e0) - 1; /* the row holding e0 */
    uint64_t flags = (int64_t)rp[r0] == e0 ? 1u : 0u;
    gs_idx_t r = r0 + 1;
    /* Rows starting inside the lane: at most sigma, plus the step that leaves. */
    for (int it = 0; it <= sigma && r < m; ++it) {
      const int64_t p = rp[r];
      if (p >= e_end) break;
      flags |= 1ull << (p - e0);
      r = rp[r + 1] > p ? r + 1 : csr5_upper(rp, r + 1, m, p); /* skip empty rows at p */
    }
    const int nf = __popcll(flags);
    int incl = nf;
#pragma unroll
    for (int o = 1; o < CSR5_OMEGA; o <<= 1) {
      const int u = __shfl_up_sync(FULL_MASK, incl, o);
      if (lane >= o) incl += u;
    }
    const uint32_t yoff = (uint32_t)(incl - nf);
    const int nseg = __shfl_sync(FULL_MASK, incl, CSR5_OMEGA - 1);
    const unsigned fm = __ballot_sync(FULL_MASK, flags != 0);
    const unsigned above = lane == CSR5_OMEGA - 1 ? 0u : fm >> (lane + 1);
    const uint32_t soff = above ? (uint32_t)(__ffs((int)above) - 1) : (uint32_t)(31 - lane);
    const int hdr = ybits + CSR5_SEG_BITS;
    const uint64_t lo = (uint64_t)yoff | (uint64_t)soff << ybits | flags << hdr;
    uint32_t *w = desc + g * words * CSR5_OMEGA + lane;
    w[0] = (uint32_t)lo;
    if (words > 1) w[CSR5_OMEGA] = (uint32_t)(lo >> 32);
    if (words > 2) w[2 * CSR5_OMEGA] = (uint32_t)(flags >> (64 - hdr));
    const gs_idx_t R = __shfl_sync(FULL_MASK, r0, 0);
    const gs_idx_t Rlast = __shfl_sync(FULL_MASK, r - 1, CSR5_OMEGA - 1);
    const int cont = __shfl_sync(FULL_MASK, (int)(flags & 1u), 0) ? 0 : 1;
    if (lane == 0) {
      const bool dirty = (int64_t)nseg != (int64_t)Rlast - (R + cont) + 1;
      tile_ptr[g] = (uint32_t)R | (dirty ? CSR5_DIRTY : 0u);
      carry_row[g] = cont ? R : -1;
      segs[g] = dirty ? (uint32_t)nseg : 0u;
      if (dirty) atomicAdd(&info->n_dirty, 1);
      if (cont) atomicAdd(&info->n_cont, 1);
    }
  } else if (g == ntiles && lane == 0) { /* the incomplete tile */
    gs_idx_t T0 = m, T1 = m;
    int32_t cr = -1;
    if (nnz_full < nnz) {
      T0 = csr5_upper(rp, 0, m, nnz_full) - 1;
      T1 = csr5_upper(rp, 0, m, nnz - 1);
      if ((int64_t)rp[T0] < nnz_full) cr = T0;
    }
    tile_ptr[ntiles] = (uint32_t)T0;
    carry_row[ntiles] = cr;
    segs[ntiles] = 0u;
    if (cr >= 0) atomicAdd(&info->n_cont, 1);
    info->tail_row0 = T0;
    info->tail_row1 = T1;
  }
}

static __global__ void csr5_empty_flags_kernel(const int32_t *__restrict__ rp, gs_idx_t m,
                                               uint32_t *__restrict__ f)
{
  GS_GRID_STRIDE(r, m) f[r] = rp[r] == rp[r + 1] ? 1u : 0u;
}

static __global__ void csr5_empty_list_kernel(const int32_t *__restrict__ rp, gs_idx_t m,
                                              const uint32_t *__restrict__ pos,
                                              int32_t *__restrict__ list)
{
  GS_GRID_STRIDE(r, m) if (rp[r] == rp[r + 1]) list[pos[r]] = (int32_t)r;
}

static __global__ void csr5_eoff_kernel(const int32_t *__restrict__ rp, gs_idx_t m, int sigma,
                                        int ybits, int words, int64_t nnz_full,
                                        const uint32_t *__restrict__ tile_ptr,
                                        const uint32_t *__restrict__ desc,
                                        const uint32_t *__restrict__ empty_ptr,
                                        int32_t *__restrict__ eoff)
{
  const int64_t W = (int64_t)CSR5_OMEGA * sigma;
  GS_GRID_STRIDE(r, m)
  {
    const int64_t p = rp[r];
    if (p == rp[r + 1] || p >= nnz_full) continue;
    const int64_t t = p / W;
    const uint32_t tp = tile_ptr[t];
    if (!(tp & CSR5_DIRTY)) continue;
    const int64_t loc = p - t * W;
    const int l = (int)(loc / sigma), j = (int)(loc % sigma);
    int yoff, soff;
    uint64_t flags;
    csr5_desc_load(desc, t, l, words, ybits, sigma, &yoff, &soff, &flags);
    const int k = yoff + __popcll(flags & ((1ull << j) - 1));
    eoff[empty_ptr[t] + (uint32_t)k] = (int32_t)(r - (int64_t)(tp & CSR5_ROW_MASK));
  }
}

static __global__ void csr5_transpose_kernel(const gs_idx_t *__restrict__ col,
                                             const double *__restrict__ val, int sigma,
                                             int64_t nnz_full, gs_idx_t *__restrict__ col5,
                                             double *__restrict__ val5)
{
  const int64_t W = (int64_t)CSR5_OMEGA * sigma;
  GS_GRID_STRIDE(i, nnz_full)
  {
    const int64_t t = i / W, rem = i - t * W;
    const int64_t src = t * W + (rem & (CSR5_OMEGA - 1)) * sigma + (rem >> 5);
    col5[i] = col[src];
    val5[i] = val[src];
  }
}

/* ---- exclusive scan of uint32 counts, in place, total at a[N] ------------------------------- */

/* Exclusive scan of v over the block (blockDim.x a multiple of 32, at most 1024); *total gets the
 * block's sum. Every thread calls it (two barriers). */
static __device__ __forceinline__ uint32_t block_excl_scan(uint32_t v, uint32_t *s_warp,
                                                           uint32_t *total)
{
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  uint32_t incl = v;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const uint32_t u = __shfl_up_sync(FULL_MASK, incl, o);
    if (lane >= o) incl += u;
  }
  if (lane == 31) s_warp[warp] = incl;
  __syncthreads();
  if (warp == 0) {
    uint32_t w = lane < nw ? s_warp[lane] : 0u, wi = w;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const uint32_t u = __shfl_up_sync(FULL_MASK, wi, o);
      if (lane >= o) wi += u;
    }
    if (lane < nw) s_warp[lane] = wi - w;
    if (lane == 31) s_warp[32] = wi;
  }
  __syncthreads();
  const uint32_t r = s_warp[warp] + incl - v;
  *total = s_warp[32];
  __syncthreads(); /* s_warp may be reused by the caller's next call */
  return r;
}

static __global__ void __launch_bounds__(SCAN_THREADS)
csr5_scan_reduce_kernel(const uint32_t *__restrict__ a, int64_t N, uint32_t *__restrict__ part)
{
  __shared__ uint32_t s_warp[33];
  const int64_t b0 = (int64_t)blockIdx.x * SCAN_TILE;
  uint32_t s = 0;
  for (int i = threadIdx.x; i < SCAN_TILE; i += SCAN_THREADS)
    if (b0 + i < N) s += a[b0 + i];
  uint32_t total;
  block_excl_scan(s, s_warp, &total);
  if (threadIdx.x == 0) part[blockIdx.x] = total;
}

static __global__ void __launch_bounds__(1024)
csr5_scan_top_kernel(uint32_t *__restrict__ part, int64_t nb, uint32_t *__restrict__ a, int64_t N)
{
  __shared__ uint32_t s_warp[33];
  uint32_t running = 0;
  for (int64_t base = 0; base < nb; base += blockDim.x) {
    const int64_t i = base + threadIdx.x;
    const uint32_t v = i < nb ? part[i] : 0u;
    uint32_t total;
    const uint32_t e = block_excl_scan(v, s_warp, &total);
    if (i < nb) part[i] = running + e;
    running += total;
  }
  if (threadIdx.x == 0) a[N] = running;
}

static __global__ void __launch_bounds__(SCAN_THREADS)
csr5_scan_down_kernel(uint32_t *__restrict__ a, int64_t N, const uint32_t *__restrict__ part)
{
  __shared__ uint32_t s_warp[33];
  const int64_t b0 = (int64_t)blockIdx.x * SCAN_TILE + (int64_t)threadIdx.x * SCAN_ITEMS;
  uint32_t v[SCAN_ITEMS], s = 0;
#pragma unroll
  for (int i = 0; i < SCAN_ITEMS; ++i) {
    v[i] = b0 + i < N ? a[b0 + i] : 0u;
    s += v[i];
  }
  uint32_t total;
  uint32_t run = block_excl_scan(s, s_warp, &total) + part[blockIdx.x];
#pragma unroll
  for (int i = 0; i < SCAN_ITEMS; ++i) {
    if (b0 + i < N) a[b0 + i] = run;
    run += v[i];
  }
}

/* a[0..N) -> its exclusive prefix sums, a[N] = the total; part: ceil(N / SCAN_TILE) words. */
static gs_status_t csr5_scan(cudaStream_t s, uint32_t *a, int64_t N, uint32_t *part)
{
  if (N == 0) return GS_CUDA(cudaMemsetAsync(a, 0, sizeof *a, s));
  const int64_t nb = (N + SCAN_TILE - 1) / SCAN_TILE;
  csr5_scan_reduce_kernel<<<(unsigned)nb, SCAN_THREADS, 0, s>>>(a, N, part);
  GS_CHECK(GS_CHECK_LAUNCH(s, "csr5_scan_reduce_kernel"));
  csr5_scan_top_kernel<<<1, 1024, 0, s>>>(part, nb, a, N);
  GS_CHECK(GS_CHECK_LAUNCH(s, "csr5_scan_top_kernel"));
  csr5_scan_down_kernel<<<(unsigned)nb, SCAN_THREADS, 0, s>>>(a, N, part);
  return GS_CHECK_LAUNCH(s, "csr5_scan_down_kernel");
}

/* ---- backend ---------------------------------------------------------------------------------- */

static void csr5_destroy(void *data)
{
  csr5_data_t *d = (csr5_data_t *)data;
  if (!d) return;
  gs_dfree(d->ctx, d->d_tile_ptr);
  gs_dfree(d->ctx, d->d_desc);
  gs_dfree(d->ctx, d->d_empty_ptr);
  gs_dfree(d->ctx, d->d_empty_offset);
  gs_dfree(d->ctx, d->d_carry_row);
  gs_dfree(d->ctx, d->d_empty_rows);
  gs_dfree(d->ctx, d->d_col);
  gs_dfree(d->ctx, d->d_val);
  gs_dfree(d->ctx, d->d_carry);
  free(d);
}

enum { CSR5_OPT_SIGMA };
static const gs_spmv_option_t csr5_options[] = {
    {"sigma", "tile height, entries per lane (1-64); 0: the paper's rule from the mean row length",
     GS_OPTK_INT, 0, 0, CSR5_SIGMA_MAX},
    GS_SPMV_OPTION_END};

/* Loads every conversion kernel's module before the timed conversion: with CUDA's lazy loading
 * the first launch in a process would otherwise time the module load, a cost of the process. */
static void csr5_preload(void)
{
  cudaFuncAttributes fa;
  (void)cudaFuncGetAttributes(&fa, csr5_desc_kernel);
  (void)cudaFuncGetAttributes(&fa, csr5_empty_flags_kernel);
  (void)cudaFuncGetAttributes(&fa, csr5_empty_list_kernel);
  (void)cudaFuncGetAttributes(&fa, csr5_eoff_kernel);
  (void)cudaFuncGetAttributes(&fa, csr5_transpose_kernel);
  (void)cudaFuncGetAttributes(&fa, csr5_scan_reduce_kernel);
  (void)cudaFuncGetAttributes(&fa, csr5_scan_top_kernel);
  (void)cudaFuncGetAttributes(&fa, csr5_scan_down_kernel);
  (void)cudaGetLastError();
}

/* The conversion on the GPU into d (sizes set, d->A the shared CSR). Temporary buffers are freed
 * here on every path. */
static gs_status_t csr5_convert(gs_context_t *ctx, csr5_data_t *d)
{
  gs_status_t st = GS_SUCCESS;
  cudaStream_t s = ctx->stream;
  const gs_dcsr_t *A = &d->A;
  const int32_t *rp = A->d_row_ptr32;
  const size_t nt = (size_t)d->ntiles;
  const int64_t m = A->m;
  uint32_t *d_flags = NULL, *d_part = NULL;
  csr5_info_t *d_info = NULL, info;
  uint32_t n_empty = 0, n_eoff = 0;
  const int64_t scan_items = (int64_t)(nt > (size_t)m ? nt : (size_t)m);
  const int64_t nb = (scan_items + SCAN_TILE - 1) / SCAN_TILE;

  GS_TRY(gs_dmalloc_ordered(ctx, (void **)&d->d_tile_ptr, (nt + 1) * sizeof(uint32_t),
                            "csr5 tile_ptr"));
  GS_TRY(gs_dmalloc_ordered(ctx, (void **)&d->d_desc, nt * d->words * CSR5_OMEGA * sizeof(uint32_t),
                            "csr5 tile_desc"));
  GS_TRY(gs_dmalloc_ordered(ctx, (void **)&d->d_empty_ptr, (nt + 1) * sizeof(uint32_t),
                            "csr5 empty_ptr"));
  GS_TRY(gs_dmalloc_ordered(ctx, (void **)&d->d_carry_row, (nt + 1) * sizeof(int32_t),
                            "csr5 carry_row"));
  GS_TRY(gs_dmalloc_ordered(ctx, (void **)&d->d_carry, (nt + 1) * sizeof(double), "csr5 carries"));
  GS_TRY(gs_dmalloc_ordered(ctx, (void **)&d->d_col, (size_t)d->nnz_full * sizeof(gs_idx_t),
                            "csr5 columns"));
  GS_TRY(gs_dmalloc_ordered(ctx, (void **)&d->d_val, (size_t)d->nnz_full * sizeof(double),
                            "csr5 values"));
  GS_TRY(gs_dmalloc_ordered(ctx, (void **)&d_flags, ((size_t)m + 1) * sizeof(uint32_t),
                            "csr5 empty-row flags"));
  GS_TRY(gs_dmalloc_ordered(ctx, (void **)&d_part, ((size_t)nb + 1) * sizeof(uint32_t),
                            "csr5 scan partials"));
  GS_TRY(gs_dmalloc_ordered(ctx, (void **)&d_info, sizeof *d_info, "csr5 conversion info"));
  GS_TRY(GS_CUDA(cudaMemsetAsync(d_info, 0, sizeof *d_info, s)));

  /* Descriptors, tile_ptr, carry rows, the dirty tiles' segment counts (into empty_ptr). */
  {
    const int64_t warps = (int64_t)nt + 1;
    const int64_t blocks = (warps * 32 + CSR5_THREADS - 1) / CSR5_THREADS;
    csr5_desc_kernel<<<(unsigned)blocks, CSR5_THREADS, 0, s>>>(
        rp, A->m, (int64_t)A->nnz, d->sigma, d->ybits, d->words, d->ntiles, d->d_tile_ptr,
        d->d_desc, d->d_carry_row, d->d_empty_ptr, d_info);
    GS_TRY(GS_CHECK_LAUNCH(s, "csr5_desc_kernel"));
  }
  GS_TRY(csr5_scan(s, d->d_empty_ptr, (int64_t)nt, d_part));
  if (m > 0) {
    csr5_empty_flags_kernel<<<gs_grid_blocks(m, 256), 256, 0, s>>>(rp, A->m, d_flags);
    GS_TRY(GS_CHECK_LAUNCH(s, "csr5_empty_flags_kernel"));
  }
  GS_TRY(csr5_scan(s, d_flags, m, d_part));
  if (d->nnz_full > 0) {
    csr5_transpose_kernel<<<gs_grid_blocks(d->nnz_full, 256), 256, 0, s>>>(
        A->d_col, A->d_val, d->sigma, d->nnz_full, d->d_col, d->d_val);
    GS_TRY(GS_CHECK_LAUNCH(s, "csr5_transpose_kernel"));
  }
  /* The sizes of the last arrays (each copy synchronizes the stream). */
  GS_TRY(gs_copy_to_host(ctx, &info, d_info, sizeof info));
  GS_TRY(gs_copy_to_host(ctx, &n_empty, d_flags + m, sizeof n_empty));
  GS_TRY(gs_copy_to_host(ctx, &n_eoff, d->d_empty_ptr + nt, sizeof n_eoff));
  d->n_dirty = info.n_dirty;
  d->n_cont = info.n_cont;
  d->tail_row0 = info.tail_row0;
  d->tail_row1 = info.tail_row1;
  d->n_empty = (gs_idx_t)n_empty;
  d->n_eoff = n_eoff;
  if (d->tail_row0 < 0 || d->tail_row1 < d->tail_row0 || d->tail_row1 > A->m ||
      (int64_t)n_empty > m || (int64_t)n_eoff > d->nnz_full)
    GS_FAIL(GS_ERR_INTERNAL, "csr5: inconsistent conversion (rows %d..%d, %u empty, %u offsets)",
            (int)d->tail_row0, (int)d->tail_row1, n_empty, n_eoff);
  GS_TRY(gs_dmalloc_ordered(ctx, (void **)&d->d_empty_rows, (size_t)n_empty * sizeof(int32_t),
                            "csr5 empty rows"));
  GS_TRY(gs_dmalloc_ordered(ctx, (void **)&d->d_empty_offset, (size_t)n_eoff * sizeof(int32_t),
                            "csr5 empty_offset"));
  if (n_empty > 0) {
    csr5_empty_list_kernel<<<gs_grid_blocks(m, 256), 256, 0, s>>>(rp, A->m, d_flags,
                                                                  d->d_empty_rows);
    GS_TRY(GS_CHECK_LAUNCH(s, "csr5_empty_list_kernel"));
  }
  if (n_eoff > 0) {
    csr5_eoff_kernel<<<gs_grid_blocks(m, 256), 256, 0, s>>>(
        rp, A->m, d->sigma, d->ybits, d->words, d->nnz_full, d->d_tile_ptr, d->d_desc,
        d->d_empty_ptr, d->d_empty_offset);
    GS_TRY(GS_CHECK_LAUNCH(s, "csr5_eoff_kernel"));
  }
cleanup:
  gs_dfree(ctx, d_flags);
  gs_dfree(ctx, d_part);
  gs_dfree(ctx, d_info);
  return st;
}

/* csr5_convert for gs_timed_launch (runs once: it builds the layout). */
typedef struct csr5_conv {
  gs_context_t *ctx;
  csr5_data_t *d;
} csr5_conv_t;
static gs_status_t csr5_convert_run(void *arg)
{
  csr5_conv_t *cv = (csr5_conv_t *)arg;
  return csr5_convert(cv->ctx, cv->d);
}

/* build=host, the reference: the layout of gs_csr5_build (spmv/csr5_build.c) on the host CSR,
 * uploaded into d (sizes set, d->A the shared CSR; m > 0). The same arrays as csr5_convert's. */
static gs_status_t csr5_upload_host(gs_context_t *ctx, const gs_csr_t *h, int sigma_req,
                                    csr5_data_t *d)
{
  gs_status_t st = GS_SUCCESS;
  gs_csr5_t *L = NULL;
  const size_t nt = (size_t)d->ntiles;
  GS_TRY(gs_csr5_build(&L, h, sigma_req));
  if (L->sigma != d->sigma || L->ntiles != d->ntiles || L->nnz_full != d->nnz_full)
    GS_FAIL(GS_ERR_INTERNAL, "csr5: host layout of sigma %d, %lld tiles; expected %d, %lld",
            L->sigma, (long long)L->ntiles, d->sigma, (long long)d->ntiles);
  d->tail_row0 = L->tail_row0;
  d->tail_row1 = L->tail_row1;
  d->n_empty = L->n_empty;
  d->n_dirty = L->n_dirty;
  d->n_cont = L->n_cont;
  d->n_eoff = L->empty_ptr[nt];
  GS_TRY(gs_upload(ctx, (void **)&d->d_tile_ptr, L->tile_ptr, (nt + 1) * sizeof(uint32_t),
                   "csr5 tile_ptr"));
  GS_TRY(gs_upload(ctx, (void **)&d->d_desc, L->tile_desc,
                   nt * d->words * CSR5_OMEGA * sizeof(uint32_t), "csr5 tile_desc"));
  GS_TRY(gs_upload(ctx, (void **)&d->d_empty_ptr, L->empty_ptr, (nt + 1) * sizeof(uint32_t),
                   "csr5 empty_ptr"));
  GS_TRY(gs_upload(ctx, (void **)&d->d_carry_row, L->carry_row, (nt + 1) * sizeof(int32_t),
                   "csr5 carry_row"));
  GS_TRY(gs_dmalloc_ordered(ctx, (void **)&d->d_carry, (nt + 1) * sizeof(double), "csr5 carries"));
  GS_TRY(gs_upload(ctx, (void **)&d->d_col, L->col, (size_t)d->nnz_full * sizeof(gs_idx_t),
                   "csr5 columns"));
  GS_TRY(gs_upload(ctx, (void **)&d->d_val, L->val, (size_t)d->nnz_full * sizeof(double),
                   "csr5 values"));
  GS_TRY(gs_upload(ctx, (void **)&d->d_empty_rows, L->empty_rows,
                   (size_t)d->n_empty * sizeof(int32_t), "csr5 empty rows"));
  GS_TRY(gs_upload(ctx, (void **)&d->d_empty_offset, L->empty_offset,
                   (size_t)d->n_eoff * sizeof(int32_t), "csr5 empty_offset"));
cleanup:
  gs_csr5_destroy(&L);
  return st;
}

static gs_status_t csr5_prepare_data(gs_context_t *ctx, gs_matrix_t *A, int sigma_req,
                                     int host_build, csr5_data_t **out)
{
  gs_status_t st = GS_SUCCESS;
  *out = NULL;
  if (sigma_req < 0 || sigma_req > CSR5_SIGMA_MAX)
    return GS_ERROR(GS_ERR_INVALID_ARG, "csr5: sigma must be 0 (automatic) or 1..%d, not %d",
                    CSR5_SIGMA_MAX, sigma_req);
  csr5_data_t *d = (csr5_data_t *)calloc(1, sizeof *d);
  if (!d) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory preparing csr5");
  d->ctx = ctx;
  d->prepare_ms = -1.0;
  GS_TRY(gs_matrix_device_csr(A, &d->A));
  if (d->A.wide || (d->A.m > 0 && !d->A.d_row_ptr32) || d->A.nnz > INT32_MAX)
    GS_FAIL(GS_ERR_UNSUPPORTED,
            "csr5: %lld entries: the layout keeps 32-bit entry offsets (at most 2^31-1)",
            (long long)d->A.nnz);
  d->sigma_auto = sigma_req == 0;
  d->sigma = sigma_req ? sigma_req : gs_csr5_sigma_auto(d->A.m, d->A.nnz);
  d->ybits = gs_csr5_ybits(d->sigma);
  d->words = gs_csr5_words(d->sigma);
  d->ntiles = d->A.nnz / ((int64_t)CSR5_OMEGA * d->sigma);
  d->nnz_full = d->ntiles * CSR5_OMEGA * d->sigma;
  if (d->A.m == 0) { /* nothing to convert, nothing to write */
    *out = d;
    return GS_SUCCESS;
  }
  if (host_build) {
    GS_TRY(csr5_upload_host(ctx, gs_matrix_host(A), sigma_req, d));
    *out = d;
    return GS_SUCCESS;
  }
  csr5_preload();
  {
    csr5_conv_t cv = {ctx, d};
    GS_TRY(gs_timed_launch(ctx->stream, csr5_convert_run, &cv, 0, &d->prepare_ms));
  }
  *out = d;
  d = NULL;
cleanup:
  csr5_destroy(d);
  return st;
}

static gs_status_t csr5_prepare(gs_context_t *ctx, gs_matrix_t *A, const gs_spmv_cfg_t *cfg,
                                void **out, unsigned *caps)
{
  csr5_data_t *d = NULL;
  GS_CHECK(csr5_prepare_data(ctx, A, (int)cfg->v[CSR5_OPT_SIGMA], gs_cfg_host_build(cfg), &d));
  *caps &= ~(unsigned)GS_SPMV_CAP_DETERMINISTIC_T; /* op T adds with atomics */
  *out = d;
  return GS_SUCCESS;
}

static csr5_args csr5_make_args(const csr5_data_t *d, double alpha, const double *x, double beta,
                                double *y)
{
  csr5_args a;
  a.rp = d->A.d_row_ptr32;
  a.col = d->A.d_col;
  a.val = d->A.d_val;
  a.col5 = d->d_col;
  a.val5 = d->d_val;
  a.tile_ptr = d->d_tile_ptr;
  a.desc = d->d_desc;
  a.empty_ptr = d->d_empty_ptr;
  a.empty_offset = d->d_empty_offset;
  a.empty_rows = d->d_empty_rows;
  a.x = x;
  a.y = y;
  a.carry = d->d_carry;
  a.alpha = alpha;
  a.beta = beta;
  a.sigma = d->sigma;
  a.ybits = d->ybits;
  a.words = d->words;
  a.ntiles = d->ntiles;
  a.nnz_full = d->nnz_full;
  a.tail_rows = (int64_t)d->tail_row1 - d->tail_row0;
  a.tail_row0 = d->tail_row0;
  a.n_empty = d->n_empty;
  a.empty_chunks = (d->n_empty + CSR5_OMEGA - 1) / CSR5_OMEGA;
  return a;
}

static gs_status_t csr5_apply(gs_context_t *ctx, void *data, gs_op_t op, double alpha,
                              const double *d_x, double beta, double *d_y)
{
  const csr5_data_t *d = (const csr5_data_t *)data;
  cudaStream_t s = ctx->stream;
  csr5_args a = csr5_make_args(d, alpha, d_x, beta, d_y);
  if (op == GS_OP_T) {
    GS_CHECK(gs_launch_scale(s, d->A.n, beta, d_y));
    const int64_t warps = a.ntiles + a.tail_rows;
    if (warps == 0) return GS_SUCCESS;
    const int64_t blocks = (warps * 32 + CSR5_THREADS - 1) / CSR5_THREADS;
    if (blocks > 0x7fffffff)
      return GS_ERROR(GS_ERR_UNSUPPORTED, "csr5: %lld blocks exceed the grid limit",
                      (long long)blocks);
    csr5_spmv_t_kernel<<<(unsigned)blocks, CSR5_THREADS, 0, s>>>(a);
    return GS_CHECK_LAUNCH(s, "csr5_spmv_t_kernel");
  }
  if (beta == 1.0) a.empty_chunks = 0; /* y = 1 y: nothing to do on empty rows */
  const int64_t warps = a.ntiles + a.tail_rows + a.empty_chunks;
  if (warps == 0) return GS_SUCCESS;
  const int64_t blocks = (warps * 32 + CSR5_THREADS - 1) / CSR5_THREADS;
  if (blocks > 0x7fffffff)
    return GS_ERROR(GS_ERR_UNSUPPORTED, "csr5: %lld blocks exceed the grid limit",
                    (long long)blocks);
  csr5_spmv_kernel<<<(unsigned)blocks, CSR5_THREADS, 0, s>>>(a);
  GS_CHECK(GS_CHECK_LAUNCH(s, "csr5_spmv_kernel"));
  if (d->n_cont == 0) return GS_SUCCESS;
  const int64_t slots = d->ntiles + 1;
  csr5_fixup_kernel<<<gs_grid_blocks(slots * 32, 256), 256, 0, s>>>(slots, d->d_carry_row,
                                                                    d->d_carry, alpha, d_y);
  return GS_CHECK_LAUNCH(s, "csr5_fixup_kernel");
}

/* Matrix-side bytes one product reads (both ops). */
static size_t csr5_matrix_bytes(const csr5_data_t *d)
{
  const size_t nt = (size_t)d->ntiles;
  return (size_t)d->A.nnz * (sizeof(gs_idx_t) + sizeof(double)) + nt * sizeof(uint32_t) +
         nt * d->words * CSR5_OMEGA * sizeof(uint32_t) +
         ((size_t)(d->tail_row1 - d->tail_row0) + 1) * sizeof(int32_t) +
         (size_t)d->n_dirty * sizeof(uint32_t) + (size_t)d->n_eoff * sizeof(int32_t);
}

static gs_status_t csr5_memory(const void *data, gs_spmv_mem_t *mem)
{
  const csr5_data_t *d = (const csr5_data_t *)data;
  const gs_dcsr_t *A = &d->A;
  const size_t nt = (size_t)d->ntiles;
  /* Held: the layout, plus the shared CSR it borrows (row_ptr and the incomplete tile are read
   * by every product, so the CSR must stay resident next to the transposed copy). */
  const size_t own = (nt + 1) * (3 * sizeof(uint32_t) + sizeof(double)) +
                     nt * d->words * CSR5_OMEGA * sizeof(uint32_t) +
                     (size_t)d->n_eoff * sizeof(int32_t) + (size_t)d->n_empty * sizeof(int32_t) +
                     (size_t)d->nnz_full * (sizeof(gs_idx_t) + sizeof(double));
  mem->device_bytes = own + ((size_t)A->m + 1) * sizeof(int32_t) +
                      (size_t)A->nnz * (sizeof(gs_idx_t) + sizeof(double));
  const size_t fix = d->n_cont > 0 ? (nt + 1) * sizeof(int32_t) + 2 * (size_t)d->n_cont * 8 : 0;
  mem->bytes_per_apply = csr5_matrix_bytes(d) + (size_t)d->n_empty * sizeof(int32_t) + fix +
                         (size_t)A->n * sizeof(double) + (size_t)A->m * sizeof(double);
  mem->bytes_per_apply_t = csr5_matrix_bytes(d) + (size_t)A->m * sizeof(double) +
                           3 * (size_t)A->n * sizeof(double);
  return GS_SUCCESS;
}

static void csr5_describe(const void *data, char *buf, size_t len)
{
  const csr5_data_t *d = (const csr5_data_t *)data;
  const int n = snprintf(buf, len,
                         "sigma %d%s, %lld tiles of %d entries + %lld in the last, %lld dirty, "
                         "%lld carries, %d empty rows",
                         d->sigma, d->sigma_auto ? " (auto)" : "", (long long)d->ntiles,
                         CSR5_OMEGA * d->sigma, (long long)(d->A.nnz - d->nnz_full),
                         (long long)d->n_dirty, (long long)d->n_cont, (int)d->n_empty);
  if (d->prepare_ms >= 0.0 && n >= 0 && (size_t)n < len)
    snprintf(buf + n, len - (size_t)n, "; conversion %.3f ms on the GPU", d->prepare_ms);
}

static gs_status_t csr5_host_apply(const gs_csr_t *A, const gs_spmv_cfg_t *cfg, gs_op_t op,
                                   double alpha, const double *x, double beta, double *y)
{
  gs_csr5_t *L = NULL;
  GS_CHECK(gs_csr5_build(&L, A, (int)cfg->v[CSR5_OPT_SIGMA]));
  const gs_status_t st = gs_csr5_apply_host(L, A, op, alpha, x, beta, y);
  gs_csr5_destroy(&L);
  return st;
}

/* ---- for test_csr5_gpu: the device conversion, downloaded --------------------------------- */

template <typename T>
static gs_status_t csr5_download(gs_context_t *ctx, T **h, const T *d, size_t count)
{
  *h = (T *)malloc((count + 1) * sizeof(T));
  if (!*h) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory downloading csr5");
  return gs_copy_to_host(ctx, *h, d, count * sizeof(T));
}

extern "C" gs_status_t gs_csr5_device_layout(gs_context_t *ctx, gs_matrix_t *A, int sigma,
                                             gs_csr5_t **out, double *conversion_ms)
{
  gs_status_t st = GS_SUCCESS;
  csr5_data_t *d = NULL;
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "csr5: out is NULL");
  *out = NULL;
  gs_csr5_t *L = (gs_csr5_t *)calloc(1, sizeof *L);
  if (!L) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory downloading csr5");
  GS_TRY(gs_context_activate(ctx));
  GS_TRY(csr5_prepare_data(ctx, A, sigma, 0, &d));
  {
    const size_t nt = (size_t)d->ntiles;
    L->m = d->A.m;
    L->n = d->A.n;
    L->nnz = d->A.nnz;
    L->sigma = d->sigma;
    L->ybits = d->ybits;
    L->words = d->words;
    L->ntiles = d->ntiles;
    L->nnz_full = d->nnz_full;
    L->tail_row0 = d->tail_row0;
    L->tail_row1 = d->tail_row1;
    L->n_empty = d->n_empty;
    L->n_dirty = d->n_dirty;
    L->n_cont = d->n_cont;
    if (d->A.m == 0) { /* nothing was converted: the host builder's arrays for m = 0 */
      L->tail_row0 = L->tail_row1 = 0;
      GS_TRY(csr5_download(ctx, &L->tile_ptr, (const uint32_t *)NULL, 0));
      GS_TRY(csr5_download(ctx, &L->carry_row, (const int32_t *)NULL, 0));
      GS_TRY(csr5_download(ctx, &L->empty_ptr, (const uint32_t *)NULL, 0));
      L->tile_ptr[0] = 0;
      L->carry_row[0] = -1;
      L->empty_ptr[0] = 0;
    } else {
      GS_TRY(csr5_download(ctx, &L->tile_ptr, d->d_tile_ptr, nt + 1));
      GS_TRY(csr5_download(ctx, &L->carry_row, d->d_carry_row, nt + 1));
      GS_TRY(csr5_download(ctx, &L->empty_ptr, d->d_empty_ptr, nt + 1));
    }
    GS_TRY(csr5_download(ctx, &L->tile_desc, d->d_desc, nt * d->words * CSR5_OMEGA));
    GS_TRY(csr5_download(ctx, &L->empty_offset, d->d_empty_offset, (size_t)d->n_eoff));
    GS_TRY(csr5_download(ctx, &L->empty_rows, d->d_empty_rows, (size_t)d->n_empty));
    GS_TRY(csr5_download(ctx, &L->col, d->d_col, (size_t)d->nnz_full));
    GS_TRY(csr5_download(ctx, &L->val, d->d_val, (size_t)d->nnz_full));
    if (conversion_ms) *conversion_ms = d->prepare_ms;
  }
  *out = L;
  L = NULL;
cleanup:
  csr5_destroy(d);
  gs_csr5_destroy(&L);
  return st;
}

extern "C" const gs_spmv_ops_t gs_spmv_csr5_ops = {
    GS_SPMV_OPS_VERSION, "csr5",
    "CSR5: 32 x sigma tiles of entries stored transposed, bit-flag descriptors, warp segmented "
    "sum, carry fix-up (Liu & Vinter, ICS15); op T by atomics",
    GS_SPMV_FLAG_TRANSPOSE | GS_SPMV_FLAG_HOST_LAYOUT | GS_SPMV_FLAG_SHARED_CSR |
        GS_SPMV_FLAG_DEVICE_BUILD,
    csr5_options,
    csr5_prepare, csr5_apply, csr5_memory, csr5_destroy, csr5_host_apply, csr5_describe};
