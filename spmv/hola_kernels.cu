/* spmv/hola_kernels.cu: the `hola` backend, HOLA SpMV (op N) and HOLA SpMVT (op T) on the
 * matrix's shared device CSR (Steinberger, Zayer & Seidel, ICS 2017; "the paper" below).
 *
 * Work split (section 3.1, spmv/hola.h): block b takes NPB = NPT * 256 consecutive entries,
 * thread t of it NPT consecutive entries. brs[b], the row of the block's first entry, is the
 * only preprocessing: hola_rowstarts_kernel, Algorithm 2, one thread per row, run at prepare.
 *
 * op N, one block (hola_n_kernel, Algorithm 3):
 *  1. Local rows (Algorithm 4, AssignRowsLocal): the block's rows are brs[b] .. the row of its
 *     last entry, plus the empty rows that follow it up to brs[b + 1] (block 0 also owns the
 *     empty rows before its first entry). One thread per row writes, in shared memory, the
 *     row's local index as the start row of each thread whose first entry lies in the row
 *     (s_start) and sets the bit of the row's last entry in the block in that thread's 32-bit
 *     end-of-row mask (s_bits; a row running past the block gets its bit at the block's last
 *     entry, line 5). An empty row sets the "empty rows" flag of the warp whose entries it sits
 *     between (s_flag, lines 8-9) and clears its slot of the output buffer (section 3.3).
 *  2. Loading (Algorithm 5, LoadAndPremultiply): each warp loads its 32 * NPT entries with
 *     16-byte vector loads (val as double2, col as int2), coalesced; the products val * x[col]
 *     are formed right there ("pre-multiplication"), and only the products are transposed to
 *     the thread-owned order by the register transpose of warp_transpose: a lane-dependent
 *     register rotation, NPT/2 shuffle rounds, a second rotation (Catanzaro, Keller & Garland,
 *     PPoPP 2014, as the paper adapts it). The paper's per-thread sort of the column ids before
 *     the gathers of x is left out (it reports +2% on average).
 *  3. Summation (lines 6-15): each thread adds its NPT products in order; at a set bit it
 *     stores the running sum into the shared output buffer (one plain store per row: the
 *     buffer needs no clearing) and moves to the next row: row + 1, or, in a warp flagged for
 *     empty rows, the row holding the next entry, found by binary search in row_ptr (3.3).
 *  4. Shared rows (lines 17-20, Algorithm 6): what is left after a thread's last bit belongs
 *     to a row that continues in the next thread(s). If more than half of the warp's threads
 *     have no bit at all, the warp runs the conditional segmented reduction (shuffle-down over
 *     runs of bit-less threads) and only run heads add into the buffer; otherwise every thread
 *     with a non-zero leftover adds it with a shared-memory atomic.
 *  5. Output (lines 22-23): the buffer goes to y coalesced (y = alpha*buf + beta*y, y read only
 *     when beta != 0), warps aligned to 32-entry boundaries of y.
 * Special cases (3.3): a block whose entries all lie in one row skips steps 1, 3, 4 and reduces
 * the block (the long-row path). A block with more rows than buffer slots (many empty rows)
 * switches to the paper's alternative: y of its rows is scaled by beta first, sums go straight
 * to y with atomics (no buffer).
 * Rows shared between blocks: the paper adds the first and last row of each block into y with
 * atomics, which needs y zeroed by the row-start kernel before every product (and cannot apply
 * beta). Here each block stores its partial of such a row in a carry slot (two per block) and a
 * small second kernel (hola_fixup_kernel) sums each shared row's carries in block order and
 * writes y[row] = alpha*sum + beta*y[row]. A last-block-done scheme in one launch (threadfence
 * plus an atomic counter per shared row) was tried first and measured 20% slower on Pareto and
 * normal rows on the H100: the fence at the end of nearly every block held its resources.
 * A software-pipelined persistent variant (a grid of resident blocks, each loading its next
 * share's entries and info before working on the current one, and issuing the next gathers of x
 * once its products were transposed) was measured against this one-block-per-share launch on the
 * H100 and lost on most of the set: lap27 186 against 167 us, normal 201 against 194, powerlaw
 * 175 against 170, pareto even, G3_circuit 65 against 71 (its registers cost a resident block
 * per SM at NPT 8, 3 instead of 5). Not kept. The same idea with the next share's entries
 * in shared memory, fetched by the bulk copy engine instead of registers (hola_np_kernel,
 * option hola.pipe), was kept: on banded matrices at NPT 4 it gains 14-20% (lap27 167 -> 144
 * us); see its section for where it loses and why it is off there.
 * Row order for op N (the block's products staged in shared memory, lane = row summing its row
 * and writing y; one barrier, no transpose) was measured too (run 39, H100) and lost: lap27 200
 * against 169 us, small matrices 20-140% slower (a lane's dependent chain of shared loads on
 * a block of few active warps); only lap2d gained (143 against 160). Not kept.
 * Determinism: the shared-memory atomics of step 4 (and the atomics of the many-empty-rows
 * mode) add in a run-dependent order, so op N is not bitwise reproducible, as in the paper.
 *
 * op T (hola_t_kernel, Algorithm 7): the same split and step 1. Instead of transposing values
 * and column ids to the thread-owned order (lines 2-14), each lane keeps its coalesced loads,
 * one entry per lane and load (lane l, step j: entry 32 j + l of its warp's share), and finds
 * the row of each from the owning thread's start row plus the popcount of its end bits below
 * the entry (binary search in row_ptr in a flagged warp); the factor alpha * x[row] is gathered
 * per entry (lanes of one row read one address). The products go to y[col] with atomics (lines
 * 16-17) in the loaded order, so that one atomic instruction covers 32 consecutive entries and
 * neighbouring lanes update neighbouring entries of y; where consecutive entries share a
 * column the warp first sums them (a segmented reduction over equal columns, run only when a
 * ballot finds such a pair). Row order (ROWS, option hola.rows): the products and columns
 * are staged in shared memory instead, and each warp takes 32 consecutive local rows, lane l
 * walking row l, so that on even rows of a stencil or banded matrix one atomic instruction adds
 * the k-th entries of 32 consecutive rows, i.e. 32 nearly consecutive entries of y (lap27: 242
 * -> 185 us, 1.28x cuSPARSE); a warp whose rows are uneven falls back to entry order. y is
 * scaled by beta beforehand (gs_launch_scale). Not deterministic (atomics), as csr-vector's T.
 *
 * Precision (gs_precision_t): every kernel that takes the product's arguments is a template on
 * the value type Val it reads and on the type T of x, y, alpha, beta, the products, sums,
 * shuffles, shared-memory partials, carries and atomics (hola_args<Val, T>). <double, double>:
 * double precision, the shared CSR's values. <float, double>: mixed (prepare rounds the shared
 * values once, on the device, into a float array of this backend's own, gs_dcsr_round_values,
 * as csr-vector does; the shared CSR stays double); values are widened to double as they are
 * loaded (op N's pairs: 8-byte float2 loads in place of 16-byte double2, or 8 bytes of floats a
 * pair from the copy engine's stages, which then hold 8 bytes an entry instead of 12; op T's
 * one value a lane, 4 bytes instead of 8), so everything else stays double and only the value
 * stream halves. <float, float>: float precision on the same float copy, the pairs kept as
 * float2 through the register transpose, the sums, shuffles, partials, carries and atomics in
 * float (4-byte x and y). The fix-up kernel reads no values: its <float, double> instantiation
 * is the double one's code. The double and mixed instantiations compile to the code they had
 * before T was added (same PTX, same registers).
 * Offsets: 32-bit (the backend is not flagged WIDE, spmv.c refuses wider matrices), entry
 * positions inside a block in int, block starts in 64 bits where b * NPB + NPB could pass
 * 2^31 - 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "spmv/common_kernels.h"
#include "spmv/device_util.cuh"
#include "spmv/hola.h"
#include "spmv/spmv_impl.h"

#define HOLA_WARPS (HOLA_THREADS / 32)
/* Resident blocks per SM asked of the compiler for NPT <= 8 (a register cap: 5 blocks of 256
 * threads leave at most 48 registers; uncapped, the 8-entry variant took 52-56, 4 blocks per
 * SM). On the H100, 5 measured 0-7% faster than 6 (40 registers, small spills) and than no cap
 * on the Laplacian, normal and Pareto rows. 16 entries per thread spill under any cap. */
#ifndef HOLA_MIN_BLOCKS
#define HOLA_MIN_BLOCKS 5
#endif
#define FULL_MASK 0xffffffffu
/* The pipelined op N kernel when hola.pipe is automatic: its stages, its non-zeros per thread
 * (when npt is automatic too), and the band test: occupied diagonals at most m / HOLA_PIPE_BAND
 * (hola_prepare). */
#define HOLA_PIPE_AUTO_STAGES 2
#define HOLA_PIPE_NPT 4
#define HOLA_PIPE_BAND 100
/* op N's non-zeros per thread with the automatic thread-owned loads (hola_prepare) */
#define HOLA_DIRECT_NPT 4

/* One work split: NPT entries a thread, and Algorithm 2's row starts and the block info for it.
 * op N and op T may use different splits (hola_prepare). */
typedef struct hola_split {
  int npt;             /* non-zeros per thread: 4, 8 or 16 */
  int64_t nblocks;
  gs_idx_t *d_brs;     /* nblocks + 1: Algorithm 2's block row starts, brs[nblocks] = m */
  int4 *d_info;        /* nblocks: packed per-block bookkeeping (hola_blockinfo_kernel) */
} hola_split_t;

typedef struct hola_data {
  gs_context_t *ctx;
  gs_dcsr_t A;         /* borrowed shared device CSR */
  hola_split_t n;      /* op N's split */
  hola_split_t t;      /* op T's split: its own arrays when t.npt != n.npt, else n's */
  void *d_carry;       /* 2 * n.nblocks partial sums of rows shared between blocks (op N), of
                          the vector type: doubles, or floats in float precision */
  float *d_valf;       /* precision=mixed or float: this backend's float copy of the shared
                          values (nnz), read in place of A.d_val; NULL in double precision */
  size_t vec_bytes;    /* bytes of an entry of x, y and the carries: 8, or 4 in float precision */
  double prepare_ms;   /* the row-start and block-info kernels, for describe */
  int rows;            /* op T adds in row order, lane = row (NPT <= 8) */
  int load;            /* op N, one block a share: 1 thread-owned loads, 0 coalesced (hola_n_fn) */
  int pipe;            /* op N: 0, the one-block-per-share launch; 2 or 3, the pipelined
                          kernel with that many stages (hola_np_kernel) */
  unsigned pgrid;      /* the pipelined kernel's grid */
  const char *pipe_note; /* why not pipelined, when asked for */
} hola_data_t;

/* What every kernel of a product reads, for values stored as Val: double (the shared CSR's), or
 * float (precision=mixed and float: the backend's float copy, hola_data_t.d_valf), and for
 * vectors, scalars and carries of type T: double, or float in float precision. */
template <typename Val, typename T>
struct hola_args {
  const int32_t *__restrict__ rp;
  const gs_idx_t *__restrict__ col;
  const Val *__restrict__ val;
  const gs_idx_t *__restrict__ brs;
  const int4 *__restrict__ info;
  const T *__restrict__ x;
  T *__restrict__ y;
  T *carry;
  T alpha, beta;
  gs_idx_t m;
  int32_t nnz;
  int64_t nblocks;
};

/* ---- Algorithm 2 (AssignRowsGlobal): one thread per row ---------------------------------- */
static __global__ void hola_rowstarts_kernel(gs_idx_t m, const int32_t *__restrict__ rp, int npb,
                                             int64_t nblocks, gs_idx_t *__restrict__ brs)
{
  GS_GRID_STRIDE(i, m) {
    const int64_t a = rp[i], b = rp[i + 1];
    if (a == b) continue;
    for (int64_t blk = (a + npb - 1) / npb; blk <= (b - 1) / npb; ++blk) brs[blk] = (gs_idx_t)i;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) brs[nblocks] = m;
}

/* ---- register helpers -------------------------------------------------------------------- */
/* Two consecutive stored values in one load (16 bytes of doubles, 8 of floats), turned into
 * the pair of T (vec2<T>: double2, or float2 in float precision) the products and the transpose
 * work on: the loads are the only place Val shows. */
template <typename Val> struct val_pair;
template <> struct val_pair<double> { typedef double2 type; };
template <> struct val_pair<float> { typedef float2 type; };
template <typename T> struct vec2;
template <> struct vec2<double> { typedef double2 type; };
template <> struct vec2<float> { typedef float2 type; };
static __device__ __forceinline__ double2 pair2(double a, double b) { return make_double2(a, b); }
static __device__ __forceinline__ float2 pair2(float a, float b) { return make_float2(a, b); }
/* Loaded pair v as a pair of T (the tag's type): widened to double in double and mixed
 * precision, kept in float precision. */
static __device__ __forceinline__ double2 widen(double2 v, double) { return v; }
static __device__ __forceinline__ double2 widen(float2 v, double) { return make_double2(v.x, v.y); }
static __device__ __forceinline__ float2 widen(float2 v, float) { return v; }

static __device__ __forceinline__ double2 sel(bool c, double2 a, double2 b)
{
  return make_double2(c ? a.x : b.x, c ? a.y : b.y);
}
static __device__ __forceinline__ float2 sel(bool c, float2 a, float2 b)
{
  return make_float2(c ? a.x : b.x, c ? a.y : b.y);
}

/* a[j] <- a[(j - r) mod V] for a lane-dependent r in [0, V): log2(V) stages of selects, every
 * register index a compile-time constant (a run-time index would move the array to local
 * memory). */
template <int V, typename P>
static __device__ __forceinline__ void rotate(P (&a)[V], int r)
{
#pragma unroll
  for (int s = 1; s < V; s <<= 1) {
    P t[V];
#pragma unroll
    for (int j = 0; j < V; ++j) t[j] = a[(j - s + V) % V];
#pragma unroll
    for (int j = 0; j < V; ++j) a[j] = sel(r & s, t[j], a[j]);
  }
}

static __device__ __forceinline__ double2 shfl2(double2 v, int src)
{
  return make_double2(__shfl_sync(FULL_MASK, v.x, src), __shfl_sync(FULL_MASK, v.y, src));
}
static __device__ __forceinline__ float2 shfl2(float2 v, int src)
{
  return make_float2(__shfl_sync(FULL_MASK, v.x, src), __shfl_sync(FULL_MASK, v.y, src));
}

/* Algorithm 5, lines 11-25: on entry lane l holds items l + 32*i (i < V) of its warp's chunk
 * (an item is two consecutive entries), on return items l*V + k (k < V). Round j: the receiver
 * t takes item t*V + k, k = (j + t/L) mod V (L = 32/V lanes per row of the V x 32 item
 * matrix), from lane (t mod L)*V + k, whose register (t/L) it needs; so sender s offers
 * register (s - j) mod V in round j (a reversal plus a rotation by s beforehand) and the
 * receiver undoes the rotation by t/L afterwards. */
template <int V, typename P>
static __device__ __forceinline__ void warp_transpose(P (&r)[V], int lane)
{
  if (V == 1) return;
  constexpr int L = 32 / V;
  P s[V];
#pragma unroll
  for (int j = 0; j < V; ++j) s[j] = r[(V - j) % V];
  rotate(s, lane % V); /* s[j] = r[(lane - j) mod V] */
  const int q = lane / L;
#pragma unroll
  for (int j = 0; j < V; ++j) r[j] = shfl2(s[j], (lane % L) * V + (j + q) % V);
  rotate(r, q); /* r[k] = item lane*V + k */
}

/* The row (local index) holding block entry p, for a warp in empty-row mode: the first local
 * row r in [lo_r, hi_r) with rp[lo + r + 1] > bstart + p (rows in between are empty). */
static __device__ __forceinline__ int row_of_entry(const int32_t *__restrict__ rp, gs_idx_t lo,
                                                   int64_t pos, int lo_r, int hi_r)
{
  while (lo_r < hi_r) {
    const int mid = (lo_r + hi_r) >> 1;
    if ((int64_t)rp[lo + mid + 1] > pos) hi_r = mid;
    else lo_r = mid + 1;
  }
  return lo_r;
}

/* A block's partial sum of a row it shares with other blocks, for hola_fixup_kernel (slot 0:
 * the block's first row, begun in an earlier block; slot 1: its last row, continued in a later
 * one). A plain store: the kernel boundary orders it before the fix-up. */
template <typename Val, typename T>
static __device__ __forceinline__ void hola_carry(const hola_args<Val, T> &a, int64_t b, int slot,
                                                  T v)
{
  a.carry[2 * b + slot] = v;
}

/* Rows shared between blocks, one warp per block b: when b's last row R continues into later
 * blocks and begins in b, the warp sums R's partials (b's slot 1, and slot 0 of blocks b+1 .. be:
 * lane l takes blocks b+1+l, b+1+l+32, ..., then a fixed shuffle tree) and lane 0 writes
 * y[R] = alpha*sum + beta*y[R]. The merge-based SpMV's fix-up pass (Merrill & Garland, SC16) in
 * place of the paper's atomics into a zeroed y: a separate launch costs less than the
 * threadfence + counter of a last-block-done scheme (measured on the H100: -20% on Pareto and
 * normal rows), and the sum's order does not depend on block timing. A thread per block summing
 * in a loop took 13 us on Pareto rows (H200, ncu: one row spans hundreds of blocks), 15% of
 * the product. */
template <int NPB, typename Val, typename T>
static __global__ void hola_fixup_kernel(hola_args<Val, T> a)
{
  gs_pdl_wait(); /* launched after the op N kernel (gs_launch_after): its carries and y */
  const int lane = threadIdx.x & 31;
  const int64_t nwarps = (int64_t)gridDim.x * (blockDim.x >> 5);
  for (int64_t b = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; b < a.nblocks - 1;
       b += nwarps) { /* b is the same for the warp's 32 lanes: the branches below are uniform */
    const gs_idx_t R = a.brs[b + 1];
    const int64_t end = (b + 1) * (int64_t)NPB; /* first entry of block b + 1 */
    if ((int64_t)a.rp[R] >= end || (int64_t)a.rp[R] < b * (int64_t)NPB) continue;
    const int64_t be = ((int64_t)a.rp[R + 1] - 1) / NPB;
    T s = T(0);
    for (int64_t k = b + 1 + lane; k <= be; k += 32) s += a.carry[2 * k];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    if (lane == 0) {
      s = a.carry[2 * b + 1] + s;
      a.y[R] = a.beta == T(0) ? a.alpha * s : a.alpha * s + a.beta * a.y[R];
    }
  }
}

/* Loads the warp's items in the coalesced order: item i of lane l is entries
 * e = wbase + 2*(l + 32*i) and e + 1 (block-relative), products val * x[col] (op N) or the
 * values with their columns (op T). Entries at or past cnt are zero (column -1). DIRECT: in the
 * thread-owned order instead, item i of thread t is entries t*2V + 2i and + 1 (what the
 * transpose would give), so no transpose follows: a warp's load touches 2V times the lines of a
 * coalesced one, and its next loads find them in L1 (hola.load, hola_n_kernel). */
template <int V, bool FULL, bool DIRECT = false, typename Val, typename T>
static __device__ __forceinline__ void load_items(const hola_args<Val, T> &a, int64_t bstart,
                                                  int cnt, int wbase, int lane,
                                                  typename vec2<T>::type (&v)[V], int2 (&c)[V])
{
  typedef typename val_pair<Val>::type P;
#pragma unroll
  for (int i = 0; i < V; ++i) {
    const int e = DIRECT ? (wbase + lane * 2 * V) + 2 * i : wbase + 2 * (lane + 32 * i);
    if (FULL || e + 1 < cnt) {
      v[i] = widen(__ldg(reinterpret_cast<const P *>(a.val + bstart + e)), T());
      c[i] = __ldg(reinterpret_cast<const int2 *>(a.col + bstart + e));
    } else {
      v[i] = pair2(e < cnt ? (T)a.val[bstart + e] : T(0), T(0));
      c[i] = make_int2(e < cnt ? a.col[bstart + e] : -1, -1);
    }
  }
}

/* The gathers of x for the loaded entries (column -1: 0), issued as soon as the column ids
 * arrive; multiply() forms the products later, so the gathers stay in flight while the block
 * does its row bookkeeping. */
template <int V, typename Val, typename T>
static __device__ __forceinline__ void gather_x(const hola_args<Val, T> &a, const int2 (&c)[V],
                                                typename vec2<T>::type (&xv)[V])
{
#pragma unroll
  for (int i = 0; i < V; ++i)
    xv[i] = pair2(c[i].x >= 0 ? __ldg(&a.x[c[i].x]) : T(0),
                  c[i].y >= 0 ? __ldg(&a.x[c[i].y]) : T(0));
}

template <int V, typename P>
static __device__ __forceinline__ void multiply(P (&v)[V], const P (&xv)[V])
{
#pragma unroll
  for (int i = 0; i < V; ++i) {
    v[i].x *= xv[i].x;
    v[i].y *= xv[i].y;
  }
}

/* Per-block row bookkeeping shared by op N and op T. */
struct hola_block {
  int64_t bstart; /* first entry */
  int cnt;        /* entries in the block */
  gs_idx_t lo;    /* first local row (global index) */
  gs_idx_t first; /* row of the first entry */
  int nrows;      /* local rows: lo .. lo + nrows - 1 */
  bool cut_begin; /* local row 0 began in an earlier block */
  bool cut_end;   /* local row nrows - 1 continues in a later block */
  bool one_row;   /* every entry of the block lies in row `first` (the long-row path) */
  bool before, after; /* one_row: `first` began before / continues after the block */
};

/* The bookkeeping of block b from brs and row_ptr (two dependent global reads). */
template <int NPB>
static __device__ __forceinline__ hola_block block_rows_slow(const int32_t *__restrict__ rp,
                                                             const gs_idx_t *__restrict__ brs,
                                                             int32_t nnz, int64_t nblocks,
                                                             int64_t b)
{
  hola_block k;
  k.bstart = b * NPB;
  const int64_t bend = min(k.bstart + NPB, (int64_t)nnz);
  k.cnt = (int)(bend - k.bstart);
  k.first = brs[b];
  k.lo = b == 0 ? 0 : k.first; /* block 0 owns the empty rows before its first entry */
  const gs_idx_t hx = brs[b + 1];
  k.cut_end = b + 1 < nblocks && (int64_t)rp[hx] < bend;
  k.nrows = (int)(hx - k.lo) + (k.cut_end ? 1 : 0);
  k.cut_begin = b > 0 && (int64_t)rp[k.first] < k.bstart;
  k.one_row = (int64_t)rp[k.first + 1] >= bend;
  k.before = (int64_t)rp[k.first] < k.bstart;
  k.after = (int64_t)rp[k.first + 1] > bend;
  return k;
}

/* Per-block info packed at prepare from Algorithm 2's row starts (hola_blockinfo_kernel), so
 * that a block starts with one 16-byte read instead of the brs -> row_ptr chain: (lo, nrows,
 * first, flags). Part of the prepare cost, nblocks * 16 bytes. */
enum { HB_CUT_BEGIN = 1, HB_CUT_END = 2, HB_ONE_ROW = 4, HB_BEFORE = 8, HB_AFTER = 16 };

template <int NPB>
static __global__ void hola_blockinfo_kernel(const int32_t *__restrict__ rp,
                                             const gs_idx_t *__restrict__ brs, int32_t nnz,
                                             int64_t nblocks, int4 *__restrict__ info)
{
  GS_GRID_STRIDE(b, nblocks) {
    const hola_block k = block_rows_slow<NPB>(rp, brs, nnz, nblocks, b);
    info[b] = make_int4(k.lo, k.nrows, k.first,
                        (k.cut_begin ? HB_CUT_BEGIN : 0) | (k.cut_end ? HB_CUT_END : 0) |
                            (k.one_row ? HB_ONE_ROW : 0) | (k.before ? HB_BEFORE : 0) |
                            (k.after ? HB_AFTER : 0));
  }
}

template <int NPB, typename Val, typename T>
static __device__ __forceinline__ hola_block block_rows(const hola_args<Val, T> &a, int64_t b)
{
  hola_block k;
  k.bstart = b * NPB;
  k.cnt = (int)(min(k.bstart + NPB, (int64_t)a.nnz) - k.bstart);
  const int4 in = __ldg(&a.info[b]);
  k.lo = in.x;
  k.nrows = in.y;
  k.first = in.z;
  k.cut_begin = in.w & HB_CUT_BEGIN;
  k.cut_end = in.w & HB_CUT_END;
  k.one_row = in.w & HB_ONE_ROW;
  k.before = in.w & HB_BEFORE;
  k.after = in.w & HB_AFTER;
  return k;
}
/* Algorithm 4 (AssignRowsLocal), one thread per local row; `buffer` says whether the output
 * buffer holds the rows (else y of the block's own rows is scaled by beta here). */
template <int NPT, typename Val, typename T>
static __device__ __forceinline__ void assign_rows(const hola_args<Val, T> &a, const hola_block &k,
                                                   int *s_start, unsigned *s_bits, int *s_flag,
                                                   T *s_out, bool buffer, bool op_n)
{
  for (int r = threadIdx.x; r < k.nrows; r += HOLA_THREADS) {
    const gs_idx_t R = k.lo + r;
    const int64_t ra = (int64_t)a.rp[R] - k.bstart, rb = (int64_t)a.rp[R + 1] - k.bstart;
    if (op_n) {
      const bool shared_row = (r == 0 && k.cut_begin) || (r == k.nrows - 1 && k.cut_end);
      if (!buffer && !shared_row) a.y[R] = a.beta == T(0) ? T(0) : a.beta * a.y[R];
    }
    if (ra == rb) { /* empty: the warp whose entries it falls between must skip it */
      if (op_n && buffer) s_out[r] = T(0);
      if (ra > 0 && ra < k.cnt) s_flag[(ra - 1) / (32 * NPT)] = 1;
      continue;
    }
    const int a0 = (int)max(ra, (int64_t)0), b0 = (int)min(rb, (int64_t)k.cnt);
    for (int t = (a0 + NPT - 1) / NPT; t <= (b0 - 1) / NPT; ++t) s_start[t] = r;
    atomicOr(&s_bits[(b0 - 1) / NPT], 1u << ((b0 - 1) % NPT));
  }
}

/* ---- op N --------------------------------------------------------------------------------- */

/* The shared memory of one block's share (op N); sums of T. */
template <int NPT, typename T>
struct hola_n_smem {
  T out[NPT * HOLA_THREADS];      /* the output buffer, a slot per local row */
  int start[HOLA_THREADS];        /* each thread's first local row */
  unsigned bits[HOLA_THREADS];    /* each thread's end-of-row mask */
  int flag[HOLA_WARPS];           /* warps with empty rows between their entries */
  T red[HOLA_WARPS];              /* the long-row path's warp sums */
  T cut[2];                       /* shared rows' partials when the buffer is off */
};

/* Steps 1 and 3-5 of one share b (Algorithm 3, after the loads): v holds the loaded values in
 * the coalesced order and xv the gathered x. Ends without a barrier: a caller that reuses sm
 * for another share synchronizes first. */
template <int NPT, bool DIRECT = false, typename Val, typename T>
static __device__ __forceinline__ void hola_n_share(const hola_args<Val, T> &a, int64_t b,
                                                    const hola_block &k,
                                                    typename vec2<T>::type (&v)[NPT / 2],
                                                    const typename vec2<T>::type (&xv)[NPT / 2],
                                                    hola_n_smem<NPT, T> &sm)
{
  constexpr int NPB = NPT * HOLA_THREADS, V = NPT / 2;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;

  /* Long-row path (3.3): every entry of the block in one row. */
  if (k.one_row) {
    multiply(v, xv);
    T s = T(0);
#pragma unroll
    for (int i = 0; i < V; ++i) s += v[i].x + v[i].y;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(FULL_MASK, s, o);
    if (lane == 0) sm.red[warp] = s;
    for (int r = tid; r < k.nrows; r += HOLA_THREADS) { /* the block's empty rows */
      const gs_idx_t R = k.lo + r;
      if (R != k.first) a.y[R] = a.beta == T(0) ? T(0) : a.beta * a.y[R];
    }
    __syncthreads();
    if (warp == 0) {
      T t = lane < HOLA_WARPS ? sm.red[lane] : T(0);
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) t += __shfl_xor_sync(FULL_MASK, t, o);
      const bool before = k.before, after = k.after;
      if (!before && !after) {
        if (lane == 0)
          a.y[k.first] = a.beta == T(0) ? a.alpha * t : a.alpha * t + a.beta * a.y[k.first];
      } else {
        if (lane == 0) hola_carry(a, b, before ? 0 : 1, t);
      }
    }
    return;
  }

  const bool buffer = k.nrows <= NPB;
  sm.start[tid] = k.nrows; /* threads past the last entry keep an out-of-range row */
  sm.bits[tid] = 0;
  if (tid < HOLA_WARPS) sm.flag[tid] = 0;
  if (tid < 2) sm.cut[tid] = T(0);
  __syncthreads();
  assign_rows<NPT>(a, k, sm.start, sm.bits, sm.flag, sm.out, buffer, true);
  multiply(v, xv);
  if (!DIRECT) warp_transpose(v, lane);
  __syncthreads();

  int row = sm.start[tid];
  const unsigned bits = sm.bits[tid];
  const bool flagged = sm.flag[warp] != 0;
  /* Sink of a row's sum: the buffer, or (many empty rows) y and the two shared-row slots. */
  auto sink = [&](int r, T t, bool plain) {
    if (r >= k.nrows) return;
    if (buffer) {
      if (plain) sm.out[r] = t;
      else atomicAdd(&sm.out[r], t);
    } else if (r == 0 && k.cut_begin) {
      atomicAdd(&sm.cut[0], t);
    } else if (r == k.nrows - 1 && k.cut_end) {
      atomicAdd(&sm.cut[1], t);
    } else {
      atomicAdd(&a.y[k.lo + r], a.alpha * t);
    }
  };

  T t = T(0);
#pragma unroll
  for (int i = 0; i < NPT; ++i) {
    t += (i & 1) ? v[i / 2].y : v[i / 2].x;
    if (bits & (1u << i)) {
      sink(row, t, true);
      t = T(0);
      if (!flagged) ++row;
      else row = row_of_entry(a.rp, k.lo, k.bstart + tid * NPT + i + 1, row + 1, k.nrows);
    }
  }
  __syncthreads(); /* every row's plain store before any addition */

  /* Algorithm 6: conditional warp reduction of the leftovers, or shared atomics. */
  const unsigned nobits = __ballot_sync(FULL_MASK, bits == 0);
  if (__popc(nobits) > 16) {
    const bool head = bits != 0 || lane == 0;
    bool stop = __shfl_down_sync(FULL_MASK, head, 1) || lane == 31;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const T tin = __shfl_down_sync(FULL_MASK, t, o);
      const bool sin = __shfl_down_sync(FULL_MASK, stop, o);
      if (!stop) {
        t += tin;
        stop = sin;
      }
    }
    if (head) sink(row, t, false);
  } else if (t != T(0)) {
    sink(row, t, false);
  }
  __syncthreads();

  /* Output, coalesced and aligned to 32 entries of y; shared rows go through the carries. */
  if (buffer) {
    const int64_t first_row = k.lo + (k.cut_begin ? 1 : 0);
    const int64_t end_row = k.lo + k.nrows - (k.cut_end ? 1 : 0);
    for (int64_t R = (first_row & ~(int64_t)31) + tid; R < end_row; R += HOLA_THREADS) {
      if (R < first_row) continue;
      const T s = sm.out[R - k.lo];
      a.y[R] = a.beta == T(0) ? a.alpha * s : a.alpha * s + a.beta * a.y[R];
    }
  }
  if (tid == 0 && k.cut_begin) hola_carry(a, b, 0, buffer ? sm.out[0] : sm.cut[0]);
  if (tid == 32 && k.cut_end) hola_carry(a, b, 1, buffer ? sm.out[k.nrows - 1] : sm.cut[1]);
}

/* One block per share (the paper's launch). LOAD 0: the coalesced loads and the register
 * transpose (Algorithm 5) under HOLA_MIN_BLOCKS; LOAD 1: the thread-owned loads (load_items'
 * DIRECT), no transpose, under a tighter register cap: 32 registers at 4 non-zeros a thread (8
 * resident blocks, the whole multiprocessor), 40 at 8 (6 blocks; 5 spilled). More warps in
 * flight hide the gathers' latency, which is what bounds short rows; the occupancy gives about
 * half of the gain and dropping the transpose the rest (docs/formats.md, "Thread-owned
 * loads"). */
#define HOLA_MIN_BLOCKS_DIRECT(NPT) ((NPT) == 4 ? 8 : 6)
template <int NPT, int LOAD, typename Val, typename T>
static __global__ void __launch_bounds__(HOLA_THREADS, LOAD == 1  ? HOLA_MIN_BLOCKS_DIRECT(NPT)
                                                       : NPT <= 8 ? HOLA_MIN_BLOCKS
                                                                  : 1)
hola_n_kernel(hola_args<Val, T> a)
{
  constexpr int NPB = NPT * HOLA_THREADS, V = NPT / 2;
  typedef typename vec2<T>::type P2;
  __shared__ hola_n_smem<NPT, T> sm;
  const int lane = threadIdx.x & 31, wbase = (threadIdx.x >> 5) * 32 * NPT;
  const int64_t b = blockIdx.x;
  gs_pdl_trigger(); /* the fix-up kernel may be scheduled once the last wave has started */

  /* The entries first: their loads depend on nothing, so they are in flight while the row
   * bookkeeping waits for the block info and row_ptr (a block's latency chain is its cost). */
  P2 v[V];
  int2 c[V];
  {
    const int64_t bstart = b * NPB;
    const int cnt = (int)min((int64_t)NPB, (int64_t)a.nnz - bstart);
    if (cnt == NPB) load_items<V, true, LOAD == 1>(a, bstart, cnt, wbase, lane, v, c);
    else load_items<V, false, LOAD == 1>(a, bstart, cnt, wbase, lane, v, c);
  }
  P2 xv[V];
  gather_x<V>(a, c, xv);
  hola_n_share<NPT, LOAD == 1>(a, b, block_rows<NPB>(a, b), v, xv, sm);
}

/* ---- op N, pipelined: the shares' entries streamed by the copy engine ----------------------
 * The launch above is latency-bound on regular rows (lap27: 70% of the copy bandwidth against
 * cuSPARSE's 85%): each block's entries are requested only when it starts, and its row
 * bookkeeping, transposes and barriers then run with nothing of the next share in flight. A
 * register-pipelined persistent variant lost (its registers cost resident blocks; banner).
 * Here a persistent grid of resident blocks takes shares b = blockIdx.x + j * gridDim.x, and
 * one thread hands the values and column ids of the shares STAGES - 1 ahead to the bulk copy
 * engine (cp.async.bulk, global to shared, completing on an mbarrier per stage; HOPPER.md:
 * "the bulk copy engine ... two or three shared-memory stages deep ... a persistent grid when
 * the work comes in many small pieces"), so the stream of A's bytes is in flight while the
 * block works, at no register cost. The share's own work is hola_n_share, unchanged. Only whole
 * shares go through the engine (sizes and addresses multiples of 16 bytes: the launcher checks
 * the arrays' alignment); the last, partial share loads from global as above. Streaming only
 * the column ids (the values loaded from global, less shared memory taken from L1) was
 * measured (run 76, H100) and gained nowhere (lap27 185 us against 145): not kept. */
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900 /* sm_90 instructions */
static __device__ __forceinline__ uint32_t smem_addr(const void *p)
{
  return (uint32_t)__cvta_generic_to_shared(p);
}

static __device__ __forceinline__ void mbar_init(uint64_t *bar)
{
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(bar)) : "memory");
}

static __device__ __forceinline__ void mbar_wait(uint64_t *bar, unsigned parity)
{
  unsigned done;
  do {
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done)
                 : "r"(smem_addr(bar)), "r"(parity)
                 : "memory");
  } while (!done);
}

/* One thread: the values and column ids of share b into the stage buffers sv, sc; completion
 * (bytes arrived) on bar. The fence orders the block's earlier ordinary reads of the stage
 * (before the caller's barrier) before the copy engine's writes. */
template <int NPB, typename Val, typename T>
static __device__ __forceinline__ void hola_stage_issue(const hola_args<Val, T> &a, int64_t b,
                                                        Val *sv, gs_idx_t *sc, uint64_t *bar)
{
  const unsigned vbytes = NPB * sizeof(Val), cbytes = NPB * sizeof(gs_idx_t);
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)),
               "r"(vbytes + cbytes)
               : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], "
               "%2, [%3];" ::"r"(smem_addr(sv)),
               "l"(a.val + b * NPB), "r"(vbytes), "r"(smem_addr(bar))
               : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], "
               "%2, [%3];" ::"r"(smem_addr(sc)),
               "l"(a.col + b * NPB), "r"(cbytes), "r"(smem_addr(bar))
               : "memory");
}
#endif

/* Dynamic shared memory of the pipelined kernel: STAGES shares of values (val_bytes each: 8,
 * or 4 in mixed precision) and column ids. */
static size_t hola_pipe_smem(int npt, int stages, size_t val_bytes)
{
  return (size_t)stages * npt * HOLA_THREADS * (val_bytes + sizeof(gs_idx_t));
}

template <int NPT, int STAGES, typename Val, typename T>
static __global__ void __launch_bounds__(HOLA_THREADS) hola_np_kernel(hola_args<Val, T> a)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
  __trap(); /* never launched: hola_pipe_setup checks the binary's target */
#else
  constexpr int NPB = NPT * HOLA_THREADS, V = NPT / 2;
  typedef typename vec2<T>::type P2;
  extern __shared__ __align__(16) unsigned char hola_dyn[];
  Val *s_val = reinterpret_cast<Val *>(hola_dyn);
  gs_idx_t *s_col = reinterpret_cast<gs_idx_t *>(s_val + STAGES * NPB);
  __shared__ __align__(8) uint64_t s_bar[STAGES];
  __shared__ hola_n_smem<NPT, T> sm;
  const int tid = threadIdx.x, lane = tid & 31, wbase = (tid >> 5) * 32 * NPT;
  const int64_t G = gridDim.x, whole = a.nnz / NPB; /* shares [0, whole) are full */
  gs_pdl_trigger(); /* the fix-up kernel's launch overlaps this one */

  if (tid == 0) {
#pragma unroll
    for (int s = 0; s < STAGES; ++s) mbar_init(&s_bar[s]);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (tid == 0) {
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
      const int64_t b = blockIdx.x + s * G;
      if (b < whole)
        hola_stage_issue<NPB>(a, b, s_val + s * NPB, s_col + s * NPB, &s_bar[s]);
    }
  }
  int st = 0;
  unsigned parity = 0;
  for (int64_t b = blockIdx.x; b < a.nblocks; b += G) {
    /* The share STAGES - 1 ahead goes into the stage freed at the end of the last share. */
    if (tid == 0) {
      const int64_t bn = b + (STAGES - 1) * G;
      const int sn = (st + STAGES - 1) % STAGES;
      if (bn < whole)
        hola_stage_issue<NPB>(a, bn, s_val + sn * NPB, s_col + sn * NPB, &s_bar[sn]);
    }
    P2 v[V];
    int2 c[V];
    if (b < whole) {
      mbar_wait(&s_bar[st], parity);
      const Val *sv = s_val + st * NPB;
      const gs_idx_t *sc = s_col + st * NPB;
#pragma unroll
      for (int i = 0; i < V; ++i) {
        const int e = wbase + 2 * (lane + 32 * i);
        v[i] = widen(*reinterpret_cast<const typename val_pair<Val>::type *>(sv + e), T());
        c[i] = *reinterpret_cast<const int2 *>(sc + e);
      }
    } else {
      const int64_t bstart = b * NPB;
      load_items<V, false>(a, bstart, (int)((int64_t)a.nnz - bstart), wbase, lane, v, c);
    }
    P2 xv[V];
    gather_x<V>(a, c, xv);
    hola_n_share<NPT>(a, b, block_rows<NPB>(a, b), v, xv, sm);
    __syncthreads(); /* sm and the stage are free for the next share */
    if (++st == STAGES) {
      st = 0;
      parity ^= 1u;
    }
  }
#endif
}

/* ---- op T --------------------------------------------------------------------------------- */

/* y[c] += p for one entry per lane, the warp's 32 entries consecutive in entry order (lane l
 * holds entry l). Where consecutive entries share a column (a ballot finds any), the warp first
 * sums each run of equal columns with a segmented scan and only the run's last lane adds;
 * otherwise every entry adds its own product. Padding entries (column -1) add nothing. */
template <typename T>
static __device__ __forceinline__ void scatter_one(T *__restrict__ y, int c, T p, int lane)
{
  const int cprev = __shfl_up_sync(FULL_MASK, c, 1);
  const bool starts = lane == 0 || c != cprev;
  if (__all_sync(FULL_MASK, starts)) {
    if (c >= 0 && p != T(0)) atomicAdd(&y[c], p);
    return;
  }
  /* inclusive segmented scan: (a, b) -> b.start ? b : (a.sum + b.sum, a.start) */
  T s = p;
  bool st = starts;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const T in = __shfl_up_sync(FULL_MASK, s, o);
    const bool sin = __shfl_up_sync(FULL_MASK, st, o);
    if (lane >= o && !st) {
      s += in;
      st = sin;
    }
  }
  const int cnext = __shfl_down_sync(FULL_MASK, c, 1);
  const bool ends = lane == 31 || cnext != c;
  if (ends && c >= 0 && s != T(0)) atomicAdd(&y[c], s);
}

/* op T with the warp's entries in the loaded order one per lane (lane l, step j: entry
 * wbase + 32 j + l), 8-byte value and 4-byte column loads: every atomic instruction of a warp
 * covers 32 consecutive entries of the CSR (a stretch of one or two rows), so that a warp's
 * atomics touch few sectors of y: op T is bound by L2 atomic traffic, and loading entry pairs
 * (16-byte loads, as op N does) spread each atomic instruction over 64 entries and measured
 * 1.07-1.41x slower on the H100 (lap27 343 against 243 us). Rows from the same bookkeeping. */
template <int NPT, bool ROWS, typename Val, typename T>
static __global__ void __launch_bounds__(HOLA_THREADS) hola_t_kernel(hola_args<Val, T> a)
{
  constexpr int NPB = NPT * HOLA_THREADS;
  __shared__ int s_start[HOLA_THREADS];
  __shared__ unsigned s_bits[HOLA_THREADS];
  __shared__ int s_flag[HOLA_WARPS];
  __shared__ T s_p[ROWS ? NPB : 1];      /* ROWS: the block's products, in entry order */
  __shared__ int s_c[ROWS ? NPB : 1];    /* and their columns */

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int64_t b = blockIdx.x;
  const int wbase = warp * 32 * NPT;
  const int64_t bstart = b * NPB;
  const int cnt = (int)min((int64_t)NPB, (int64_t)a.nnz - bstart);

  T v[NPT];
  int c[NPT];
#pragma unroll
  for (int j = 0; j < NPT; ++j) {
    const int e = wbase + 32 * j + lane;
    v[j] = e < cnt ? (T)__ldg(&a.val[bstart + e]) : T(0);
    c[j] = e < cnt ? __ldg(&a.col[bstart + e]) : -1;
  }
  const hola_block k = block_rows<NPB>(a, b);
  /* Launched after y = beta y (gs_launch_after): the loads above overlap it; y is touched only
   * from here on. Without that launch this returns at once. */
  gs_pdl_wait();

  if (k.one_row) { /* one row: one factor */
    const T f = a.alpha * __ldg(&a.x[k.first]);
    if (f == T(0)) return;
#pragma unroll
    for (int j = 0; j < NPT; ++j) scatter_one(a.y, c[j], v[j] * f, lane);
    return;
  }

  s_start[tid] = k.nrows;
  s_bits[tid] = 0;
  if (tid < HOLA_WARPS) s_flag[tid] = 0;
  __syncthreads();
  assign_rows<NPT>(a, k, s_start, s_bits, s_flag, (T *)NULL, true, false);
  __syncthreads();

  const bool flagged = s_flag[warp] != 0; /* entries of this warp belong to its own threads */
#pragma unroll
  for (int j = 0; j < NPT; ++j) {
    const int e = wbase + 32 * j + lane;
    T f = T(0);
    if (e < cnt) {
      const int owner = e / NPT, bit = e % NPT;
      const int r = !flagged
                        ? s_start[owner] + __popc(s_bits[owner] & ((1u << bit) - 1u))
                        : row_of_entry(a.rp, k.lo, k.bstart + e, s_start[owner], k.nrows);
      f = a.alpha * __ldg(&a.x[k.lo + r]);
    }
    /* A zero factor adds nothing (and no 0 * Inf), as csr-vector's transpose skips the row. */
    const T p = f == T(0) ? T(0) : v[j] * f;
    if (!ROWS) {
      scatter_one(a.y, c[j], p, lane);
    } else if (e < cnt) {
      s_p[e] = p;
      s_c[e] = c[j];
    }
  }
  if (!ROWS) return;
  __syncthreads();

  /* ROWS: the atomics in row order. Warp w takes local rows 32g .. 32g + 31 for g = w, w + 8,
   * ...; if the group's rows are even enough (longest <= twice the mean, rounded up to whole
   * steps), lane l walks row 32g + l, so that at step k the warp adds the k-th entries of 32
   * consecutive rows: on a stencil or banded matrix 32 consecutive columns, one or two lines of
   * y per atomic instruction (as ell's transpose). Otherwise the warp walks the group's entries
   * (contiguous in the CSR) in entry order, 32 at a time. */
  for (int g = warp; g * 32 < k.nrows; g += HOLA_WARPS) {
    const int r = g * 32 + lane;
    int s0 = 0, s1 = 0; /* the row's entries in this block: [s0, s1) */
    if (r < k.nrows) {
      const gs_idx_t R = k.lo + r;
      s0 = (int)max((int64_t)a.rp[R] - k.bstart, (int64_t)0);
      s1 = (int)min((int64_t)a.rp[R + 1] - k.bstart, (int64_t)cnt);
      s1 = max(s1, s0);
    }
    int len = s1 - s0, longest = len, sum = len, lo = r < k.nrows ? s0 : cnt, hi = s1;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      longest = max(longest, __shfl_xor_sync(FULL_MASK, longest, o));
      sum += __shfl_xor_sync(FULL_MASK, sum, o);
      lo = min(lo, __shfl_xor_sync(FULL_MASK, lo, o));
      hi = max(hi, __shfl_xor_sync(FULL_MASK, hi, o));
    }
    if (longest <= 2 * ((sum + 31) / 32)) {
      for (int i = 0; i < len; ++i) {
        const T p = s_p[s0 + i];
        if (p != T(0)) atomicAdd(&a.y[s_c[s0 + i]], p);
      }
    } else {
      for (int e0 = lo; e0 < hi; e0 += 32) {
        const int e = e0 + lane;
        scatter_one(a.y, e < hi ? s_c[e] : -1, e < hi ? s_p[e] : T(0), lane);
      }
    }
  }
}

/* ---- backend ------------------------------------------------------------------------------ */

/* The compiled pipelined kernels: 4 or 8 non-zeros per thread, 2 or 3 stages. */
template <typename Val, typename T>
static void (*hola_np_fn(int npt, int stages))(hola_args<Val, T>)
{
  typedef void (*fn_t)(hola_args<Val, T>);
  static const fn_t k[2][2] = {{hola_np_kernel<4, 2, Val, T>, hola_np_kernel<4, 3, Val, T>},
                               {hola_np_kernel<8, 2, Val, T>, hola_np_kernel<8, 3, Val, T>}};
  return k[npt == 8][stages == 3];
}

/* The compiled one-block-a-share kernels: 4, 8 or 16 non-zeros per thread, coalesced (load 0)
 * or thread-owned (load 1) loads; 16 entries a thread only coalesced (their registers spill
 * already). */
template <typename Val, typename T>
static void (*hola_n_fn(int npt, int load))(hola_args<Val, T>)
{
  typedef void (*fn_t)(hola_args<Val, T>);
  static const fn_t k[2][2] = {{hola_n_kernel<4, 0, Val, T>, hola_n_kernel<4, 1, Val, T>},
                               {hola_n_kernel<8, 0, Val, T>, hola_n_kernel<8, 1, Val, T>}};
  return npt == 16 ? hola_n_kernel<16, 0, Val, T> : k[npt == 8][load != 0];
}

template <typename Val, typename T>
static gs_status_t hola_launch(cudaStream_t s, const hola_data_t *d, gs_op_t op,
                               const hola_args<Val, T> &args, int after_scale)
{
  if (op == GS_OP_N) {
    const int npt = d->n.npt;
    const unsigned g = (unsigned)d->n.nblocks;
    const unsigned gf = /* a warp per block b < nblocks - 1 (hola_fixup_kernel) */
        gs_grid_blocks(32 * (int64_t)(d->n.nblocks > 1 ? d->n.nblocks - 1 : 1), 256);
    if (d->pipe) {
      hola_np_fn<Val, T>(npt, d->pipe)<<<d->pgrid, HOLA_THREADS,
                                         hola_pipe_smem(npt, d->pipe, sizeof(Val)), s>>>(args);
      GS_CHECK(GS_CHECK_LAUNCH(s, "hola_np_kernel"));
    } else {
      hola_n_fn<Val, T>(npt, d->load)<<<g, HOLA_THREADS, 0, s>>>(args);
      GS_CHECK(GS_CHECK_LAUNCH(s, "hola_n_kernel"));
    }
    if (d->n.nblocks < 2) return GS_SUCCESS; /* no row is shared between blocks */
    /* the fix-up right behind the kernel whose carries it sums (both trigger / wait) */
    const char *fx = "hola_fixup_kernel";
    switch (npt) {
    case 4:
      return gs_launch_after(hola_fixup_kernel<4 * HOLA_THREADS, Val, T>, gf, 256, s, fx, args);
    case 8:
      return gs_launch_after(hola_fixup_kernel<8 * HOLA_THREADS, Val, T>, gf, 256, s, fx, args);
    default:
      return gs_launch_after(hola_fixup_kernel<16 * HOLA_THREADS, Val, T>, gf, 256, s, fx, args);
    }
  }
  const unsigned g = (unsigned)d->t.nblocks;
  void (*k)(hola_args<Val, T>);
  switch (d->t.npt * 2 + (d->rows ? 1 : 0)) {
  case 8: k = hola_t_kernel<4, false, Val, T>; break;
  case 9: k = hola_t_kernel<4, true, Val, T>; break;
  case 16: k = hola_t_kernel<8, false, Val, T>; break;
  case 17: k = hola_t_kernel<8, true, Val, T>; break;
  default: k = hola_t_kernel<16, false, Val, T>; break;
  }
  /* right behind y = beta y (scale_kernel triggers), its loads overlap the scaling; after
   * anything else, an ordinary launch */
  if (after_scale) return gs_launch_after(k, g, HOLA_THREADS, s, "hola_t_kernel", args);
  k<<<g, HOLA_THREADS, 0, s>>>(args);
  return GS_CHECK_LAUNCH(s, "hola_t_kernel");
}

/* The value array the kernels read (the shared double one, or the float copy) and the vector
 * type T (double, or float in float precision) pick the instantiation. */
template <typename Val, typename T>
static gs_status_t hola_apply_values(cudaStream_t s, const hola_data_t *d, const Val *val,
                                     gs_op_t op, T alpha, const T *d_x, T beta, T *d_y)
{
  const hola_split_t *sp = op == GS_OP_T ? &d->t : &d->n;
  hola_args<Val, T> args;
  args.rp = d->A.d_row_ptr32;
  args.col = d->A.d_col;
  args.val = val;
  args.brs = sp->d_brs;
  args.info = sp->d_info;
  args.x = d_x;
  args.y = d_y;
  args.carry = (T *)d->d_carry;
  args.alpha = alpha;
  args.beta = beta;
  args.m = d->A.m;
  args.nnz = (int32_t)d->A.nnz;
  args.nblocks = sp->nblocks;
  if (op == GS_OP_T) {
    GS_CHECK(gs_launch_scale(s, d->A.n, beta, d_y)); /* launches nothing when beta = 1 */
    if (sp->nblocks == 0) return GS_SUCCESS;
    args.beta = T(1);
    return hola_launch(s, d, op, args, beta != T(1) && d->A.n > 0);
  }
  if (sp->nblocks == 0) return gs_launch_scale(s, d->A.m, beta, d_y); /* no entries */
  return hola_launch(s, d, op, args, 0);
}

static gs_status_t hola_apply(gs_context_t *ctx, void *data, gs_op_t op, double alpha,
                              const double *d_x, double beta, double *d_y)
{
  const hola_data_t *d = (const hola_data_t *)data;
  if (d->d_valf) return hola_apply_values(ctx->stream, d, d->d_valf, op, alpha, d_x, beta, d_y);
  return hola_apply_values(ctx->stream, d, d->A.d_val, op, alpha, d_x, beta, d_y);
}

/* precision=float: the float copy of the values, float vectors (spmv.c calls this slot only for
 * a product prepared in float precision, whose prepare made d_valf when nnz > 0; with nnz = 0
 * there are no blocks and only y = beta y runs). */
static gs_status_t hola_apply_f32(gs_context_t *ctx, void *data, gs_op_t op, float alpha,
                                  const float *d_x, float beta, float *d_y)
{
  const hola_data_t *d = (const hola_data_t *)data;
  return hola_apply_values(ctx->stream, d, (const float *)d->d_valf, op, alpha, d_x, beta, d_y);
}

static void hola_destroy(void *data)
{
  hola_data_t *d = (hola_data_t *)data;
  if (!d) return;
  if (d->t.d_brs != d->n.d_brs) {
    gs_dfree(d->ctx, d->t.d_brs);
    gs_dfree(d->ctx, d->t.d_info);
  }
  gs_dfree(d->ctx, d->n.d_brs);
  gs_dfree(d->ctx, d->n.d_info);
  gs_dfree(d->ctx, d->d_carry);
  gs_dfree(d->ctx, d->d_valf);
  free(d);
}

enum { HOLA_OPT_NPT, HOLA_OPT_ROWS, HOLA_OPT_PIPE, HOLA_OPT_PGRID, HOLA_OPT_LOAD };
static const gs_spmv_option_t hola_options[] = {
    {"npt", "non-zeros per thread (4, 8 or 16); 0: from the mean row length (op N: 4 with the "
     "automatic thread-owned loads)", GS_OPTK_POW2, 0, 0, 16},
    {"rows", "op T's atomics in row order, lane = row, where a warp's 32 rows are even (1), in "
     "entry order always (0), 2: row order on matrices of even rows with 8 non-zeros per thread",
     GS_OPTK_INT, 2, 0, 2},
    {"pipe", "op N with the shares' entries streamed by the bulk copy engine into 2 or 3 "
     "shared-memory stages on a persistent grid (2, 3), one block per share (0), 1: automatic "
     "(with hola.load=0, on large banded matrices)",
     GS_OPTK_INT, 1, 0, 3},
    {"pgrid", "blocks of the pipelined grid (0: as many as are resident at once)", GS_OPTK_INT,
     0, 0, 1 << 20},
    {"load", "op N's loads, one block a share: coalesced with the register transpose (0), "
     "thread-owned without it at a tighter register cap (1), 2: automatic (1 on matrices of "
     "2^19 entries or more, at 4 non-zeros per thread)", GS_OPTK_INT, 2, 0, 2},
    GS_SPMV_OPTION_END};

/* The pipelined op N kernel for a split of npt entries a thread and nblocks shares: sets
 * d->pipe (the stages, 0 when not pipelined), d->pgrid and d->pipe_note. A refusal
 * of an explicit request (hola.pipe=2 or 3) is an error; the automatic choice falls back. */
static gs_status_t hola_pipe_setup(gs_context_t *ctx, hola_data_t *d, int npt, int64_t nblocks,
                                   int stages, int explicit_req, int pgrid)
{
  const char *why = NULL;
  d->pipe = 0;
  d->pipe_note = "";
  if (stages == 0 || nblocks < 1) return GS_SUCCESS; /* not asked for, or nothing to stream */
  /* the values the copy engine streams: the shared doubles, or the float copy (mixed, float);
   * the kernel that will run: <double, double>, <float, double> or <float, float> */
  const int mixed = d->d_valf != NULL, fl = d->vec_bytes == sizeof(float);
  const uintptr_t vals = mixed ? (uintptr_t)d->d_valf : (uintptr_t)d->A.d_val;
  if (npt > 8) why = "16 non-zeros per thread";
  else if ((vals | (uintptr_t)d->A.d_col) % 16 != 0)
    why = "the CSR arrays are not 16-byte aligned";
  const size_t sh = hola_pipe_smem(npt, stages, mixed ? sizeof(float) : sizeof(double));
  const void *fn = fl      ? (const void *)hola_np_fn<float, float>(npt, stages)
                  : mixed ? (const void *)hola_np_fn<float, double>(npt, stages)
                          : (const void *)hola_np_fn<double, double>(npt, stages);
  int per_sm = 0;
  if (!why) { /* the copy engine is sm_90's: a build for older targets compiles a trap */
    cudaFuncAttributes fa;
    GS_CHECK(GS_CUDA(cudaFuncGetAttributes(&fa, fn)));
    if (fa.binaryVersion < 90) why = "kernels built for a target older than sm_90";
  }
  if (!why) {
    GS_CHECK(GS_CUDA(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          (int)sh)));
    GS_CHECK(GS_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, HOLA_THREADS,
                                                                     sh)));
    if (per_sm < 1) why = "no block of the pipelined kernel fitting a multiprocessor";
  }
  if (why) {
    d->pipe_note = why;
    return explicit_req ? GS_ERROR(GS_ERR_UNSUPPORTED, "hola.pipe=%d: not with %s", stages, why)
                        : GS_SUCCESS;
  }
  const int64_t want = pgrid > 0 ? pgrid : (int64_t)per_sm * ctx->sm_count;
  d->pgrid = (unsigned)(want < nblocks ? want : nblocks);
  d->pipe = stages;
  return GS_SUCCESS;
}

/* Algorithm 2 (row starts) and the per-block info of one split on the stream. */
static gs_status_t hola_split_launch(cudaStream_t s, const gs_dcsr_t *A, const hola_split_t *sp)
{
  const int npb = sp->npt * HOLA_THREADS;
  hola_rowstarts_kernel<<<gs_grid_blocks(A->m > 0 ? A->m : 1, 256), 256, 0, s>>>(
      A->m, A->d_row_ptr32, npb, sp->nblocks, sp->d_brs);
  GS_CHECK(GS_CHECK_LAUNCH(s, "hola_rowstarts_kernel"));
  if (sp->nblocks == 0) return GS_SUCCESS;
  const unsigned g = gs_grid_blocks(sp->nblocks, 256);
  const int32_t nnz = (int32_t)A->nnz;
  switch (sp->npt) {
  case 4:
    hola_blockinfo_kernel<4 * HOLA_THREADS><<<g, 256, 0, s>>>(A->d_row_ptr32, sp->d_brs, nnz,
                                                              sp->nblocks, sp->d_info);
    break;
  case 8:
    hola_blockinfo_kernel<8 * HOLA_THREADS><<<g, 256, 0, s>>>(A->d_row_ptr32, sp->d_brs, nnz,
                                                              sp->nblocks, sp->d_info);
    break;
  default:
    hola_blockinfo_kernel<16 * HOLA_THREADS><<<g, 256, 0, s>>>(A->d_row_ptr32, sp->d_brs, nnz,
                                                               sp->nblocks, sp->d_info);
  }
  return GS_CHECK_LAUNCH(s, "hola_blockinfo_kernel");
}

static gs_status_t hola_prepare_run(void *data)
{
  const hola_data_t *d = (const hola_data_t *)data;
  GS_CHECK(hola_split_launch(d->ctx->stream, &d->A, &d->n));
  if (d->t.d_brs != d->n.d_brs) GS_CHECK(hola_split_launch(d->ctx->stream, &d->A, &d->t));
  return GS_SUCCESS;
}

/* A split of npt entries a thread, its arrays allocated. */
static gs_status_t hola_split_alloc(gs_context_t *ctx, const gs_dcsr_t *A, int npt,
                                    hola_split_t *sp)
{
  sp->npt = npt;
  sp->nblocks = gs_hola_blocks(A->nnz, npt);
  if (sp->nblocks > 0x7fffffff)
    return GS_ERROR(GS_ERR_UNSUPPORTED, "hola: %lld blocks exceed the grid limit",
                    (long long)sp->nblocks);
  const size_t nb = (size_t)sp->nblocks;
  GS_CHECK(gs_dmalloc(ctx, (void **)&sp->d_brs, (nb + 1) * sizeof(gs_idx_t), "hola row starts"));
  if (nb > 0) GS_CHECK(gs_dmalloc(ctx, (void **)&sp->d_info, nb * sizeof(int4), "hola block info"));
  return GS_SUCCESS;
}

static gs_status_t hola_prepare(gs_context_t *ctx, gs_matrix_t *A, const gs_spmv_cfg_t *cfg,
                                void **out, unsigned *caps)
{
  gs_status_t st = GS_SUCCESS;
  const int req = (int)cfg->v[HOLA_OPT_NPT];
  if (req != 0 && (req < HOLA_NPT_MIN || req > HOLA_NPT_MAX))
    return GS_ERROR(GS_ERR_INVALID_ARG, "hola: npt must be 0, 4, 8 or 16, not %d", req);
  hola_data_t *d = (hola_data_t *)calloc(1, sizeof *d);
  if (!d) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory preparing hola");
  d->ctx = ctx;
  GS_TRY(gs_matrix_device_csr(A, &d->A));
  /* mixed and float: the float copy first, so that the pipelined kernel's checks see what it
   * streams */
  d->vec_bytes = cfg->precision == GS_PRECISION_FLOAT ? sizeof(float) : sizeof(double);
  if (gs_cfg_float_values(cfg)) GS_TRY(gs_dcsr_round_values(ctx, &d->A, &d->d_valf));
  {
    const gs_features_t *f = gs_matrix_features(A);
    const int npt = gs_hola_npt(d->A.nnz, f ? f->row_mean : 0.0, req);
    /* op N on matrices of at least HOLA_SMALL_NNZ entries, automatic (hola.load=2, npt 0):
     * the thread-owned loads at 4 non-zeros per thread, ahead of the coalesced loads and of the
     * pipeline on short and banded rows, within 1% elsewhere (docs/formats.md, "Thread-owned
     * loads"). Below it (latency of a few blocks) the coalesced loads at the rule's npt stay:
     * the small real matrices ran slower thread-owned. op T keeps the rule's split (its row
     * order wants 8). The pipelined op N (hola.pipe=1, automatic) now only when the
     * coalesced loads are asked for (hola.load=0): on large banded matrices (occupied diagonals
     * at most m / HOLA_PIPE_BAND, so that x's gathers stay within a few lines of L1) at 4
     * non-zeros per thread (run 77, H100: lap27 167 -> 144 us, 7-point 128^3 109 -> 94, 5-point
     * 2000^2 150 -> 126). Not on scattered columns: the stages take shared memory from L1, and
     * x's gathers miss (runs 75-76: normal rows 194 -> 265 us, power-law 170 -> 285). */
    const int ld = (int)cfg->v[HOLA_OPT_LOAD];
    const int big = d->A.nnz >= HOLA_SMALL_NNZ;
    int pipe = (int)cfg->v[HOLA_OPT_PIPE];
    const int band = f && big && (double)f->diagonals * HOLA_PIPE_BAND <= (double)d->A.m;
    const int explicit_pipe = pipe >= 2;
    if (ld == 1 && (explicit_pipe || npt > 8))
      GS_FAIL(GS_ERR_UNSUPPORTED, "hola.load=1: not with %s",
              explicit_pipe ? "the pipelined kernel (hola.pipe)" : "16 non-zeros per thread");
    if (pipe == 1) pipe = band && req == 0 && ld == 0 ? HOLA_PIPE_AUTO_STAGES : 0;
    int npt_n = pipe && req == 0 ? HOLA_PIPE_NPT : npt;
    GS_TRY(hola_pipe_setup(ctx, d, npt_n, gs_hola_blocks(d->A.nnz, npt_n), pipe, explicit_pipe,
                           (int)cfg->v[HOLA_OPT_PGRID]));
    if (!d->pipe) npt_n = ld == 2 && big && req == 0 ? HOLA_DIRECT_NPT : npt;
    d->load = !d->pipe && (ld == 1 || (ld == 2 && big && npt_n == HOLA_DIRECT_NPT));
    GS_TRY(hola_split_alloc(ctx, &d->A, npt_n, &d->n));
    if (npt == npt_n) d->t = d->n;
    else GS_TRY(hola_split_alloc(ctx, &d->A, npt, &d->t));
    /* Row-ordered atomics (hola_t_kernel<NPT, true>), measured on the H100 (run 38): lap27
     * 242 -> 185 us; even on normal rows, lap2d and G3_circuit; 2-4% slower on Pareto and
     * power-law rows and 5-20% on the small matrices, where the staging's barrier and shared
     * traffic sit on a launch-bound block's critical path. So by default only with 8 non-zeros
     * per thread (large matrices of mean row length >= 6) and a row-length deviation at most
     * half the mean. */
    const int tr = (int)cfg->v[HOLA_OPT_ROWS];
    d->rows = npt <= 8 && (tr == 1 || (tr == 2 && npt == 8 && f &&
                                       f->row_std <= 0.5 * f->row_mean));
    if (d->n.nblocks > 0)
      GS_TRY(gs_dmalloc(ctx, &d->d_carry, 2 * (size_t)d->n.nblocks * d->vec_bytes,
                        "hola carries"));
    /* Algorithm 2 and the block info, timed with events on the stream: their cost is the
     * backend's own prepare (describe reports it; gs_spmv_create's wall time adds the
     * allocations). Run once untimed first: the first launch of a kernel loads its module
     * (CUDA's lazy loading), a one-time cost of the process, not of the matrix. */
    GS_TRY(gs_timed_launch(ctx->stream, hola_prepare_run, d, 1, &d->prepare_ms));
  }
  /* Shared-memory atomics (op N) and global atomics (op T) add in run-dependent order. */
  *caps &= ~(unsigned)(GS_SPMV_CAP_DETERMINISTIC | GS_SPMV_CAP_DETERMINISTIC_T);
  *out = d;
  d = NULL;
cleanup:
  hola_destroy(d);
  return st;
}

/* Device bytes of a split's row starts and block info. */
static size_t hola_split_bytes(const hola_split_t *sp)
{
  return ((size_t)sp->nblocks + 1) * sizeof(gs_idx_t) + (size_t)sp->nblocks * sizeof(int4);
}

static gs_status_t hola_memory(const void *data, gs_spmv_mem_t *mem)
{
  const hola_data_t *d = (const hola_data_t *)data;
  const gs_dcsr_t *A = &d->A;
  const size_t vec = d->vec_bytes; /* x, y and the carries: 8 bytes, 4 in float precision */
  const size_t extra = hola_split_bytes(&d->n) + (size_t)d->n.nblocks * 2 * vec +
                       (d->t.d_brs != d->n.d_brs ? hola_split_bytes(&d->t) : 0);
  /* The values read: the shared doubles, or (mixed, float) the float copy held besides them. */
  const size_t vbytes = d->d_valf ? sizeof(float) : sizeof(double);
  mem->device_bytes = ((size_t)A->m + 1) * sizeof(int32_t) +
                      (size_t)A->nnz * (sizeof(gs_idx_t) + sizeof(double)) + extra;
  if (d->d_valf) mem->device_bytes += (size_t)A->nnz * sizeof(float);
  /* op N: CSR (values of vbytes) + x + y (entries of vec), and the block info. */
  mem->bytes_per_apply =
      gs_csr_bytes_per_apply_typed(A->m, A->n, A->nnz, sizeof(int32_t), vbytes, vec) +
      (size_t)d->n.nblocks * sizeof(int4);
  /* op T: CSR and x once, y scaled (read + write) then updated by atomics (at least one
   * read-modify-write per entry of y). */
  mem->bytes_per_apply_t = ((size_t)A->m + 1) * sizeof(int32_t) +
                           (size_t)A->nnz * (sizeof(gs_idx_t) + vbytes) +
                           (size_t)A->m * vec + 4 * (size_t)A->n * vec +
                           (size_t)d->t.nblocks * sizeof(int4);
  return GS_SUCCESS;
}

static void hola_describe(const void *data, char *buf, size_t len)
{
  const hola_data_t *d = (const hola_data_t *)data;
  char pn[128];
  if (d->pipe)
    snprintf(pn, sizeof pn,
             "pipelined (values and columns through the copy engine, %d stages, %u blocks)",
             d->pipe, d->pgrid);
  else if (d->pipe_note && *d->pipe_note)
    snprintf(pn, sizeof pn, "a block a share (not pipelined: %s)", d->pipe_note);
  else
    snprintf(pn, sizeof pn, "a block a share");
  if (!d->pipe)
    snprintf(pn + strlen(pn), sizeof pn - strlen(pn), ", %s loads",
             d->load ? "thread-owned" : "coalesced");
  snprintf(buf, len,
           "op N: %d non-zeros per thread, %lld shares of %d threads, %s; op T: %d non-zeros "
           "per thread, atomics in %s order; row starts %.1f us",
           d->n.npt, (long long)d->n.nblocks, HOLA_THREADS, pn, d->t.npt,
           d->rows ? "row" : "entry", d->prepare_ms * 1e3);
}

static gs_status_t hola_host_apply(const gs_csr_t *A, const gs_spmv_cfg_t *cfg, gs_op_t op,
                                   double alpha, const double *x, double beta, double *y)
{
  const int req = (int)cfg->v[HOLA_OPT_NPT];
  if (req != 0 && (req < HOLA_NPT_MIN || req > HOLA_NPT_MAX))
    return GS_ERROR(GS_ERR_INVALID_ARG, "hola: npt must be 0, 4, 8 or 16, not %d", req);
  const double mean = A->m > 0 ? (double)A->nnz / A->m : 0.0;
  return gs_hola_apply_host(A, gs_hola_npt(A->nnz, mean, req), (gs_precision_t)cfg->precision,
                            op, alpha, x, beta, y);
}

extern "C" const gs_spmv_ops_t gs_spmv_hola_ops = {
    GS_SPMV_OPS_VERSION, "hola",
    "HOLA: CSR, equal non-zeros per block and thread, bit-mask rows, register transpose "
    "(Steinberger et al., ICS17); T by atomics",
    GS_SPMV_FLAG_TRANSPOSE | GS_SPMV_FLAG_HOST_LAYOUT | GS_SPMV_FLAG_SHARED_CSR |
        GS_SPMV_FLAG_LIGHT | GS_SPMV_FLAG_MIXED | GS_SPMV_FLAG_FLOAT,
    hola_options, hola_prepare, hola_apply,
    hola_memory, hola_destroy, hola_host_apply, hola_describe, hola_apply_f32};
