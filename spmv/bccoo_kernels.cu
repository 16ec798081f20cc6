/* spmv/bccoo_kernels.cu: the `bcoo` and `bccoo` backends, balanced COO and balanced compressed
 * COO with a value look-up table (Aliaga, Anzt, Quintana-Ortí, Tomás & Tsai, Euro-Par 2020
 * Workshops; "the paper" below). The layout (spmv/bccoo.h) is built on the host
 * (spmv/bccoo_build.c) and uploaded; both backends run the same kernels, `bcoo` instantiated for
 * its one uncompressed encoding, `bccoo` dispatching per chunk.
 *
 * Work division (section 2.1): one block of B = 256 threads per chunk of B*K entries, thread t
 * its K entries, which lie in one row (rows padded to a multiple of K, empty rows to K zeros;
 * by default a row's entries in a chunk are dealt out over its threads, bccoo.h). Blocks are
 * persistent: G = min(chunks, resident blocks). op T walks the chunks c = blockIdx.x + i * G;
 * op N gives block b the contiguous range [bccoo_block_start(b), bccoo_block_start(b + 1)), so
 * that a row cut by a chunk boundary is carried inside the block (below). Either way the value
 * table is staged in shared memory once per block, not once per chunk.
 *
 * Memory access: each section of a chunk's blob is read with one to four aligned vector loads
 * per thread (1 to 16 bytes each), a warp's load covering consecutive bytes (the word layout of
 * bccoo.h), through the read-only path without L1 allocation (the matrix is read once; L1 keeps
 * x). x is gathered per entry (__ldg); padding entries carry the column sentinel: op T reads
 * nothing for them, op N reads x at the chunk's base column and drops the product (all K
 * gathers issued unconditionally, see visit). y is written once per row, by the first thread
 * of the row's run in the chunk. op N stages the block's next 256 chunk records in shared
 * memory with one coalesced load (not a dependent global load at the top of every chunk) and
 * prefetches the blob of the chunk `prefetch` ahead into L2 (option prefetch, default 1; on
 * Hopper one cp.async.bulk.prefetch by one thread), so that a chunk's stream loads wait on
 * L2, not DRAM.
 *
 * Encodings (section 2.2, Table 1): the encoding byte of a chunk selects, once per chunk (a
 * switch at block level), a device function specialised by template on the row width (0, 1 or
 * 4 bytes per thread), column width (1, 2 or 4 bytes) and value width (1: look-up table index,
 * 4: float, 8: double), so that the per-entry loop has no branch on the format. `bcoo` is the
 * balanced COO of section 2.1 in the same frame: 32-bit rows per thread, 32-bit absolute
 * columns, double values, and no switch. A table of at most 2 values (the 27-point Laplacian's)
 * is read from registers (LUTN = 2), a larger one from shared memory.
 *
 * op N (bccoo_n_kernel): each thread sums its K products in slot order; the block then runs
 * the segmented scan of section 2.1 (Listing 1.2), reworked: one ballot gives the runs of equal
 * rows in the warp (rows never decrease), and the suffix sum shuffles only the sums, for the
 * steps below the warp's longest run (a warp-uniform count, from __reduce_max_sync), after
 * which the first lane of each run holds the run's warp sum; runs that cross warps are closed
 * by the head thread adding the first-run sums of the following warps (in warp order, from
 * shared memory). One barrier per chunk (the warp slots are double-buffered by chunk parity).
 * One thread per row then writes y[row] = alpha*sum + beta*y[row] (y read only when beta != 0).
 * Rows that cross a chunk boundary (bits 6 and 7 of the encoding byte): instead of the paper's
 * atomics into a zeroed y, the running sum goes from the chunk's last row head to the next
 * chunk's thread 0 through a shared slot when both chunks are the block's; a row cut by a block
 * boundary leaves the block's head partial (the row it began in, begun before it) or tail
 * partial (the row it ends in, begun in it). When no block lies inside one row (prepare checks:
 * gs_bccoo_grid_cut), each such row spans one boundary, and the second of its two blocks to
 * finish adds the two partials (an atomic count per boundary); otherwise the last block to
 * finish sums each such row's partials in block order. Either way threadFenceReduction's
 * pattern: counts decide who adds, nobody waits.
 * The sum of a row is thus in chunk order with a fixed association for a given grid: op N is
 * deterministic, and one launch (no fix-up kernel). A chunk of one row (ROW_NONE) runs the same
 * scan (every key equal: a plain reduction). gs_bccoo_apply_host_grid emulates this kernel on
 * the host step by step, on any grid; the host tests run it on several.
 *
 * op T (bccoo_t_kernel): y = beta*y first (gs_launch_scale); each thread forms its factor
 * alpha*x[row] once (all its K entries share the row: a property of the layout), skips a zero
 * factor, and adds v*factor to y[col] with atomics (no combining: a thread's columns are
 * distinct, and equal columns of neighbouring threads are rows apart). Not deterministic.
 *
 * Hang safety (op N): the chunk loop's bound nb comes from blockIdx, gridDim and the chunk
 * count only, so every thread of a block runs the same iterations; the refill barrier sits
 * under i % B == 0 and the chunk barrier at the loop's top level; nothing returns early. The
 * barriers after the loop sit under a.cut, a kernel argument, and under s_last, read from
 * shared memory after a barrier (the same for the block). Shuffles, the ballot and the
 * reduction run with all 32 lanes (the scan's steps under a warp-uniform test). Other loops:
 * over at most WARPS - 1 warps, and in the fix-up over at most G blocks, with no barrier or
 * shuffle inside. No block waits for another (no spin on memory): the count only decides who
 * sums the partials. Registers: 32 (8 blocks an SM) up to K = 4, 40 at K = 8 (n_blocks).
 *
 * Byte model (memory()): op N: the blobs + 16 bytes per chunk record + the table (2 KiB) + x
 * once (8n) + y once (8m) + the block partials (16 per block when a row is cut). op T: the
 * blobs, records and table + 8m (x) + 3 * 8n (y scaled, then updated by atomics), as for CSR's
 * op T.
 *
 * Offsets: chunk numbers and blob offsets in 64 bits; rows and columns 32-bit (the backends are
 * not flagged WIDE). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "spmv/bccoo.h"
#include "spmv/common_kernels.h"
#include "spmv/device_util.cuh"
#include "spmv/spmv_impl.h"

#define B BCCOO_THREADS
#define WARPS (B / 32)
#define FULL_MASK 0xffffffffu
static_assert(B == BCCOO_LUT_SIZE, "one table entry per thread is staged");

typedef struct bccoo_data {
  gs_context_t *ctx;
  gs_idx_t m, n;
  int K, compressed, lut_size, lutn, prefetch;
  int cut;                     /* op N on this grid: BCCOO_CUT_NONE, _PAIR or _ALL */
  double lut01[2];             /* the table's first two values (LUTN = 2) */
  int64_t nchunks, carries;
  size_t blob_bytes, device_bytes;
  unsigned grid;               /* op N and op T: persistent blocks */
  int4 *d_chunk;               /* nchunks records (gs_bccoo_chunk_t) */
  uint8_t *d_blob;
  double *d_lut;               /* BCCOO_LUT_SIZE, or NULL when no chunk uses the table */
  double *d_part;              /* op N: 2 partials per block (head, tail) */
  unsigned *d_done;            /* op N: grid counters (bccoo_args.done); 0 between applies */
  char describe[512];
} bccoo_data_t;

struct bccoo_args {
  const int4 *__restrict__ chunk;
  const uint8_t *__restrict__ blob;
  const double *__restrict__ lut;
  const double *__restrict__ x;
  double *y;
  double *part;    /* op N: block b's head partial at 2b, tail partial at 2b + 1 */
  unsigned *done;  /* op N, G counters, 0 between applies: [k] blocks k and k + 1 finished
                    * (BCCOO_CUT_PAIR), [G - 1] blocks finished (BCCOO_CUT_ALL) */
  double alpha, beta;
  double lut0, lut1; /* op N with LUTN = 2: the table's two values, kernel parameters (constant
                      * bank, uniform registers: none of the 32 a thread has) */
  int64_t nchunks;
  int prefetch;    /* op N: the blob this many chunks ahead is prefetched into L2 (0, 1, 2) */
  int cut;         /* op N: rows cut by block boundaries (gs_bccoo_grid_cut) */
};

/* ---- loads -------------------------------------------------------------------------------- */

/* 32-bit words holding a thread's P bytes of a section. */
template <int P> struct words {
  static constexpr int N = P < 4 ? 1 : P / 4;
};

/* Thread t's P bytes of section `sec` (bccoo_pos: words of min(P, 16) bytes, word j of thread t
 * at (j * B + t) * W), little-endian in w. */
template <int P>
static __device__ __forceinline__ void load_sec(const uint8_t *sec, int t,
                                                uint32_t (&w)[words<P>::N])
{
  if constexpr (P == 1) {
    w[0] = ld_stream_u8(sec + t);
  } else if constexpr (P == 2) {
    w[0] = ld_stream_u16(sec + 2 * t);
  } else if constexpr (P == 4) {
    w[0] = ld_stream_u32(sec + 4 * t);
  } else if constexpr (P == 8) {
    const uint2 v = ld_stream_v2(sec + 8 * t);
    w[0] = v.x;
    w[1] = v.y;
  } else {
#pragma unroll
    for (int j = 0; j < P / 16; ++j) {
      const uint4 v = ld_stream_v4(sec + ((size_t)j * B + t) * 16);
      w[4 * j] = v.x;
      w[4 * j + 1] = v.y;
      w[4 * j + 2] = v.z;
      w[4 * j + 3] = v.w;
    }
  }
}

/* Element i (a compile-time constant after unrolling) of width S bytes from the words. */
template <int S, int N>
static __device__ __forceinline__ uint32_t field(const uint32_t (&w)[N], int i)
{
  if constexpr (S == 4) return w[i];
  else if constexpr (S == 2) return (w[i / 2] >> (16 * (i % 2))) & 0xffffu;
  else return (w[i / 4] >> (8 * (i % 4))) & 0xffu;
}

/* The value table as a chunk's entries read it. lut_t<0>: the 256 entries staged in shared
 * memory, one broadcast shared load per entry. lut_t<2> (op N when the matrix's table holds at
 * most 2 values, as the 27-point Laplacian's): both kernel parameters (uniform registers, not
 * two of the thread's 32), one select per entry, no shared-memory load (the profile's top
 * stall was the wait on shared memory). The builder's
 * indices are below the table size, padding's is 0. */
template <int N> struct lut_t;
template <> struct lut_t<0> {
  const double *p;
  __device__ __forceinline__ double operator()(uint32_t i) const { return p[i]; }
};
template <> struct lut_t<2> {
  double v0, v1;
  __device__ __forceinline__ double operator()(uint32_t i) const { return i ? v1 : v0; }
};

template <int VW, int N, class LUT>
static __device__ __forceinline__ double value(const uint32_t (&w)[N], int i, const LUT &lut)
{
  if constexpr (VW == 8) return __hiloint2double((int)w[2 * i + 1], (int)w[2 * i]);
  else if constexpr (VW == 4) return (double)__uint_as_float(w[i]);
  else return lut(field<1>(w, i));
}

/* One thread's K entries of a chunk, decoded: row offset, then the entries (col absolute)
 * through F. Template widths: no per-entry branch on the format. op N (F::GATHER) first issues
 * all K gathers of x, unconditionally: a padding entry reads x[basecol] (the chunk's smallest
 * column, a valid index: bccoo_apply runs no kernel when x is empty) and its product is not
 * used, so that no Inf or NaN in x reaches a row that does not use its column. Predicated or
 * branched loads let the compiler, at 32 registers, hold the last gather back until the first
 * products were done: one more L1/L2 round trip per chunk on the critical path. op T passes
 * the non-padding entries to f.entry(col, v). */
template <int K, int RW, int CW, int VW, class LUT, class F>
static __device__ __forceinline__ int visit(const uint8_t *blob, int t, int basecol,
                                            const LUT &lut, F &f)
{
  constexpr int PC = K * CW, PV = K * VW;
  constexpr uint32_t pad = CW == 1 ? 0xffu : CW == 2 ? 0xffffu : 0xffffffffu;
  const uint8_t *cols = blob + (size_t)B * RW, *vals = cols + (size_t)B * K * CW;
  uint32_t wc[words<PC>::N], wv[words<PV>::N];
  load_sec<PC>(cols, t, wc);
  load_sec<PV>(vals, t, wv);
  int rowoff = 0;
  if constexpr (RW == 1) rowoff = (int)ld_stream_u8(blob + t);
  else if constexpr (RW == 4) rowoff = (int)ld_stream_u32(blob + 4 * t);
  if constexpr (F::GATHER) {
    double xv[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const uint32_t c = field<CW>(wc, k);
      xv[k] = __ldg(f.x + (basecol + (c != pad ? (int)c : 0)));
    }
#pragma unroll
    for (int k = 0; k < K; ++k)
      if (field<CW>(wc, k) != pad) f.s += value<VW>(wv, k, lut) * xv[k];
  } else {
    f.begin(rowoff);
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const uint32_t c = field<CW>(wc, k);
      if (c != pad) f.entry(basecol + (int)c, value<VW>(wv, k, lut));
    }
  }
  return rowoff;
}

/* op N: the thread's sum of products, in slot order. */
struct sum_op {
  static constexpr bool GATHER = true;
  const double *__restrict__ x;
  double s;
};

/* Per-entry work of op T: v * alpha * x[row] into y[c]; nothing when the factor is zero. */
struct scatter_op {
  static constexpr bool GATHER = false;
  const double *__restrict__ x;
  double *y;
  double alpha, f;
  int baserow;
  __device__ void begin(int rowoff) { f = alpha * __ldg(x + baserow + rowoff); }
  __device__ void entry(int c, double v)
  {
    if (f != 0.0) atomicAdd(y + c, v * f);
  }
};

/* The chunk's encoding picks the specialisation, once per chunk. bcoo has one encoding. */
template <int K, bool COMPRESSED, class LUT, class F>
static __device__ __forceinline__ int visit_chunk(int enc, const uint8_t *blob, int t,
                                                  int basecol, const LUT &lut, F &f)
{
  if constexpr (!COMPRESSED) {
    return visit<K, 4, 4, 8>(blob, t, basecol, lut, f);
  } else {
#define BCCOO_CASE(R, RW, C, CW, V, VW)                                                       \
  case BCCOO_ENC(R, C, V): return visit<K, RW, CW, VW>(blob, t, basecol, lut, f);
#define BCCOO_CASES_V(R, RW, C, CW)                                                           \
  BCCOO_CASE(R, RW, C, CW, BCCOO_VAL_LUT, 1)                                                  \
  BCCOO_CASE(R, RW, C, CW, BCCOO_VAL_F32, 4) BCCOO_CASE(R, RW, C, CW, BCCOO_VAL_F64, 8)
#define BCCOO_CASES_C(R, RW)                                                                  \
  BCCOO_CASES_V(R, RW, BCCOO_COL_8, 1)                                                        \
  BCCOO_CASES_V(R, RW, BCCOO_COL_16, 2) BCCOO_CASES_V(R, RW, BCCOO_COL_32, 4)
    switch (BCCOO_ENC_KIND(enc)) {
      BCCOO_CASES_C(BCCOO_ROW_NONE, 0)
      BCCOO_CASES_C(BCCOO_ROW_8, 1)
    default: return 0; /* the builder writes no other encoding */
    }
#undef BCCOO_CASES_C
#undef BCCOO_CASES_V
#undef BCCOO_CASE
  }
}

struct chunk_rec {
  int row, col, enc;
  const uint8_t *blob;
};

static __device__ __forceinline__ chunk_rec decode_rec(const bccoo_args &a, int4 r)
{
  const uint64_t pe = ((uint64_t)(uint32_t)r.w << 32) | (uint32_t)r.z;
  chunk_rec k;
  k.row = r.x;
  k.col = r.y;
  k.enc = (int)(pe & 0xffu);
  k.blob = a.blob + (pe >> 8);
  return k;
}

static __device__ __forceinline__ chunk_rec read_chunk(const bccoo_args &a, int64_t c)
{
  return decode_rec(a, __ldg(a.chunk + c)); /* one address for the whole block: a broadcast */
}

/* The look-up table to shared memory, once per block (bccoo with a table only). */
template <bool COMPRESSED>
static __device__ __forceinline__ void stage_lut(const bccoo_args &a, double *s_lut)
{
  if (COMPRESSED && a.lut) s_lut[threadIdx.x] = __ldg(a.lut + threadIdx.x);
  __syncthreads();
}

static __device__ __forceinline__ void write_y(const bccoo_args &a, int row, double s)
{
  a.y[row] = a.beta == 0.0 ? a.alpha * s : a.alpha * s + a.beta * a.y[row];
}

/* ---- op N ---------------------------------------------------------------------------------- */

/* Block b of G (b + 1 < G) lies inside one row that began before it and goes on after it: its
 * first chunk continues a row and the next block begins in that row (block_through of the host
 * emulation). r0: the record of the block's first chunk; row1: the next block's first row. */
static __device__ __forceinline__ bool through(int4 r0, int row1)
{
  return (r0.z & BCCOO_HEAD_SHARED) && r0.x == row1;
}

/* Rows cut by a block boundary, summed by the last block to finish (every partial is written
 * and fenced): the block where such a row begins adds its tail partial, then the head partial
 * of each following block in block order while the row goes on through whole blocks. The
 * walk loads U blocks' partials and next records per round trip (a long row crosses many
 * blocks: pareto's longest about 17), each round advancing U blocks or ending the row, so it
 * ends within G / U rounds. Partials bypass L1 (ld.global.cg): other multiprocessors wrote
 * them. Not inlined, with scalar arguments: only the last block runs it, and inlined its
 * registers took part in the allocation of the whole kernel (spills inside the chunk loop). */
static __device__ __noinline__ void fix_cut_rows(const int4 *__restrict__ chunk,
                                                 const double *part, double *y, double alpha,
                                                 double beta, int64_t nchunks)
{
  constexpr int U = 4;
  const int G = (int)gridDim.x;
  for (int b = (int)threadIdx.x; b + 1 < G; b += B) {
    const int4 rb = __ldg(chunk + bccoo_block_start(b, nchunks, G));
    const int4 re = __ldg(chunk + bccoo_block_start(b + 1, nchunks, G));
    double s = __ldcg(part + 2 * b + 1);
    /* a row cut at the boundary (the head bit of chunk e is the tail bit of chunk e - 1) that
     * began in block b */
    if (!(re.z & BCCOO_HEAD_SHARED) || through(rb, re.x)) continue;
    int4 r0 = re; /* the first record of block b2 + u */
    bool open = true;
    for (int b2 = b + 1; open; b2 += U) {
      double p[U];
      int4 rn[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int c = b2 + u;
        p[u] = c < G ? __ldcg(part + 2 * c) : 0.0;
        rn[u] = c + 1 < G ? __ldg(chunk + bccoo_block_start(c + 1, nchunks, G))
                          : make_int4(0, 0, 0, 0);
      }
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (open) {
          s += p[u];
          if (b2 + u + 1 < G && through(r0, rn[u].x)) r0 = rn[u];
          else open = false; /* the row ends in block b2 + u (the last block at the latest) */
        }
    }
    y[re.x] = beta == 0.0 ? alpha * s : alpha * s + beta * y[re.x]; /* write_y */
  }
}

/* BCCOO_CUT_PAIR: row R is cut by the boundary between blocks k and k + 1 and by no other
 * (no block lies inside one row), so its value is block k's tail partial plus block k + 1's
 * head partial (fix_cut_rows' sum for such a row). Each of the two blocks counts itself at the
 * boundary once it has written and fenced its partial; the second adds them. Nobody waits. */
static __device__ void pair_boundary(const bccoo_args &a, int64_t k, int R)
{
  if (atomicAdd(a.done + k, 1u) != 1u) return; /* the other block is not done: it will do it */
  __threadfence();
  write_y(a, R, __ldcg(a.part + 2 * k + 1) + __ldcg(a.part + 2 * k + 2));
  a.done[k] = 0; /* both have counted: ready for the next apply */
}

/* The blob of chunk record r into L2. A hint: nothing waits on it, nothing is returned. On
 * Hopper one bulk prefetch by thread 0 (cp.async.bulk.prefetch.L2: the blob is 16-byte aligned
 * and a multiple of 256 bytes long); before it, one 128-byte line per thread (a blob is at
 * most 25 KiB: 200 lines). The blob's size from the encoding byte: 256 (RW + K (CW + VW)),
 * the widths from nibble tables (row 0/1/4, column 1/2/4, value 1/4/8 bytes). */
template <int K>
static __device__ __forceinline__ void prefetch_blob(const bccoo_args &a, int4 r)
{
  const int enc = r.z & 0xff;
  const int rw = (0x410 >> (4 * BCCOO_ENC_ROW(enc))) & 0xf, cw = 1 << BCCOO_ENC_COL(enc);
  const int vw = (0x841 >> (4 * BCCOO_ENC_VAL(enc))) & 0xf;
  const unsigned size = 256u * (unsigned)(rw + K * (cw + vw));
  const uint8_t *blob = a.blob + ((((uint64_t)(uint32_t)r.w << 32) | (uint32_t)r.z) >> 8);
#if __CUDA_ARCH__ >= 900
  if (threadIdx.x == 0)
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(blob), "r"(size) : "memory");
#else
  const unsigned off = threadIdx.x * 128u;
  if (off < size) asm volatile("prefetch.global.L2 [%0];" ::"l"(blob + off));
#endif
}

/* Blocks an SM for op N, which bounds the registers (64K / (256 * blocks)): 8 (32 registers,
 * full occupancy) up to K = 4; K = 8 holds 8 gathers and up to 64 value bytes a thread in
 * flight, which spilled ~100 bytes at 32 registers: 6 (40 registers). */
template <int K> struct n_blocks {
  static constexpr int value = K >= 8 ? 6 : 8;
};

/* LUTN: 0, the table in shared memory (or none); 2, at most 2 values, kernel parameters. */
template <int K, bool COMPRESSED, int LUTN>
static __global__ void __launch_bounds__(B, n_blocks<K>::value) bccoo_n_kernel(bccoo_args a)
{
  __shared__ double s_lut[COMPRESSED && LUTN == 0 ? BCCOO_LUT_SIZE : 1];
  __shared__ int4 s_rec[B];                    /* the next B records of the block's chunks */
  /* per warp: its first lane's run sum and row, its last lane's row; the open row's sum; all
   * by chunk parity, so that one barrier per chunk suffices (see the loop) */
  __shared__ double s_wsum[2][WARPS];
  __shared__ int s_wfirst[2][WARPS], s_wlast[2][WARPS];
  __shared__ double s_run[2];
  __shared__ int s_last;
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  const int G = (int)gridDim.x, blk = (int)blockIdx.x;
  /* the block's chunks: a contiguous range, the same bounds for every thread of the block.
   * 32-bit chunk numbers (fewer live registers): the backends take at most 2^31 - 1 entries,
   * so at most 2^31 - 1 + 8m padded ones, fewer than 2^31 chunks of 256 K (prepare checks) */
  const int cs = (int)bccoo_block_start(blk, a.nchunks, G);
  const int nb = (int)bccoo_block_start(blk + 1, a.nchunks, G) - cs;
  if (COMPRESSED && LUTN == 0 && a.lut) s_lut[t] = __ldg(a.lut + t); /* seen after barrier A */
  lut_t<LUTN> lut;
  if constexpr (LUTN == 0) lut.p = s_lut;
  else {
    lut.v0 = a.lut0;
    lut.v1 = a.lut1;
  }
  bool from_before = false; /* the row open at the chunk's start began before this block */

  for (int i = 0; i < nb; ++i) {
    const int buf = i & 1;
    if (i % B == 0) { /* block-uniform: the next B records (at i = 0 also the table) */
      if (i + t < nb) s_rec[t] = __ldg(a.chunk + cs + i + t);
      __syncthreads(); /* barrier A */
    }
    const int4 rec = s_rec[i % B];
    const chunk_rec k = decode_rec(a, rec);
    if (i == 0) from_before = (k.enc & BCCOO_HEAD_SHARED) != 0;
    /* block-uniform; a record of the next batch is not loaded yet: no prefetch for it */
    if (a.prefetch > 0 && i + a.prefetch < nb && i % B + a.prefetch < B)
      prefetch_blob<K>(a, s_rec[i % B + a.prefetch]);

    sum_op op{a.x, 0.0};
    const int row = k.row + visit_chunk<K, COMPRESSED>(k.enc, k.blob, t, k.col, lut, op);
    double s = op.s;

    /* The segmented scan of section 2.1 (Listing 1.2), keyed by the row. Rows never decrease,
     * so one ballot gives the runs: a lane ends a run at lane 31 or where the next lane's row
     * differs; end is the last lane of this lane's run. Then the suffix sum over the run,
     * shuffling only the sums, for the steps below the warp's longest run (warp-uniform: 3
     * instead of 5 for the 27-point Laplacian's 7-thread rows at K = 4). Every shuffle, ballot
     * and reduction here is executed by all 32 lanes: the loop over chunks is block-uniform
     * and nothing before it in the body returns or diverges around them. */
    const int rnext = __shfl_down_sync(FULL_MASK, row, 1);
    const unsigned tails = __ballot_sync(FULL_MASK, lane == 31 || rnext != row);
    const int end = lane + __ffs(tails >> lane) - 1;           /* bit 31 is set: end <= 31 */
    const bool wfirst = (((tails << 1) | 1u) >> lane) & 1u;    /* begins a run in the warp */
    const unsigned longest = __reduce_max_sync(FULL_MASK, wfirst ? (unsigned)(end - lane + 1) : 0u);
#pragma unroll
    for (int o = 1; o < 32; o <<= 1)
      if ((unsigned)o < longest) { /* warp-uniform */
        const double s2 = __shfl_down_sync(FULL_MASK, s, o);
        if (lane + o <= end) s += s2;
      }
    if (lane == 0) {
      s_wsum[buf][warp] = s;
      s_wfirst[buf][warp] = row;
    }
    if (lane == 31) s_wlast[buf][warp] = row;
    /* Barrier B, once per chunk, reached by every thread (the loop bound nb is the block's).
     * Parity makes one enough: the slots [buf] written before barrier B of chunk i are read
     * after it and before barrier B of chunk i + 1; they are written again only in chunk i + 2,
     * after that barrier, which no thread passes before all have done their reads of chunk i.
     * s_run[buf] is written after barrier B of chunk i and read after barrier B of chunk
     * i + 1; its next write is after barrier B of chunk i + 2. The refill of s_rec (chunk i,
     * i % B == 0) follows barrier B of chunk i - 1, after every thread's last read of the old
     * batch (its record, and no prefetch reads across the batch end). */
    __syncthreads();
    const int lastrow = s_wlast[buf][WARPS - 1];
    /* a run's first thread in the block; a warp's lane 0 continuing the previous warp's last
     * run is not one */
    if (wfirst && !(lane == 0 && warp > 0 && s_wlast[buf][warp - 1] == row)) {
      if (end == 31) /* the run goes on into the following warps: at most WARPS - 1 */
        for (int w2 = warp + 1; w2 < WARPS; ++w2) {
          if (s_wfirst[buf][w2] != row) break;
          s += s_wsum[buf][w2];
          if (s_wlast[buf][w2] != row) break;
        }
      const bool hs = t == 0 && (k.enc & BCCOO_HEAD_SHARED); /* continues the previous chunk */
      if (hs && i > 0) s = s_run[buf ^ 1] + s;                 /* ... which is this block's */
      /* a block partial is fenced by its writer (at most two threads a block) before the
       * block counts itself after the loop */
      if (row == lastrow && (k.enc & BCCOO_TAIL_SHARED)) { /* goes on in the next chunk */
        if (i + 1 < nb) {
          s_run[buf] = s;
        } else {
          a.part[2 * blk + (hs && from_before ? 0 : 1)] = s; /* head: the block is in the row */
          __threadfence();
        }
      } else if (hs && from_before) {
        a.part[2 * blk] = s; /* a row from an earlier block ends here */
        __threadfence();
      } else {
        write_y(a, row, s);
      }
    }
    from_before = from_before && s_wfirst[buf][0] == lastrow && (k.enc & BCCOO_TAIL_SHARED);
  }

  /* Rows cut by block boundaries (threadFenceReduction's pattern: no block waits for another).
   * a.cut is a kernel argument: every thread of every block takes the same branches and
   * reaches the barriers; s_last is read after a barrier, the same for the whole block. */
  if (a.cut != BCCOO_CUT_NONE) {
    __syncthreads(); /* every partial of the block is written and fenced by its writer */
    if (a.cut == BCCOO_CUT_PAIR) {
      if (t == 0) { /* the boundaries before and after this block, where a row is cut */
        __threadfence();
        if (blk > 0) {
          const int4 r = __ldg(a.chunk + cs);
          if (r.z & BCCOO_HEAD_SHARED) pair_boundary(a, blk - 1, r.x);
        }
        if (blk + 1 < G) {
          const int4 r = __ldg(a.chunk + cs + nb); /* its head bit: our last chunk's tail bit */
          if (r.z & BCCOO_HEAD_SHARED) pair_boundary(a, blk, r.x);
        }
      }
    } else {
      if (t == 0) {
        __threadfence();
        s_last = atomicAdd(a.done + G - 1, 1u) == (unsigned)G - 1u;
        __threadfence();
      }
      __syncthreads();
      if (s_last) { /* block-uniform */
        fix_cut_rows(a.chunk, a.part, a.y, a.alpha, a.beta, a.nchunks);
        if (t == 0) a.done[G - 1] = 0; /* every block has counted: ready for the next apply */
      }
    }
  }
}

/* ---- op T ---------------------------------------------------------------------------------- */
template <int K, bool COMPRESSED>
static __global__ void __launch_bounds__(B) bccoo_t_kernel(bccoo_args a)
{
  __shared__ double s_lut[COMPRESSED ? BCCOO_LUT_SIZE : 1];
  stage_lut<COMPRESSED>(a, s_lut);
  const lut_t<0> lut{s_lut};
  for (int64_t c = blockIdx.x; c < a.nchunks; c += gridDim.x) {
    const chunk_rec k = read_chunk(a, c);
    scatter_op op{a.x, a.y, a.alpha, 0.0, k.row};
    visit_chunk<K, COMPRESSED>(k.enc, k.blob, threadIdx.x, k.col, lut, op);
  }
}

/* ---- backend ------------------------------------------------------------------------------- */

/* The table's place in op N: registers for at most 2 values, else shared memory. */
static int lutn_of(int compressed, int lut_size)
{
  return compressed && lut_size > 0 && lut_size <= 2 ? 2 : 0;
}

/* The kernel of (op, K, compressed, table place). */
static const void *kernel_of(gs_op_t op, int K, int compressed, int lutn)
{
#define BCCOO_PICK(KK)                                                                        \
  if (K == KK) {                                                                              \
    if (op == GS_OP_N)                                                                        \
      return !compressed  ? (const void *)bccoo_n_kernel<KK, false, 0>                        \
             : lutn == 2 ? (const void *)bccoo_n_kernel<KK, true, 2>                          \
                         : (const void *)bccoo_n_kernel<KK, true, 0>;                         \
    return compressed ? (const void *)bccoo_t_kernel<KK, true>                                \
                      : (const void *)bccoo_t_kernel<KK, false>;                              \
  }
  BCCOO_PICK(1)
  BCCOO_PICK(2)
  BCCOO_PICK(4)
  BCCOO_PICK(8)
#undef BCCOO_PICK
  return NULL;
}

static gs_status_t bccoo_apply(gs_context_t *ctx, void *data, gs_op_t op, double alpha,
                               const double *d_x, double beta, double *d_y)
{
  const bccoo_data_t *d = (const bccoo_data_t *)data;
  cudaStream_t s = ctx->stream;
  bccoo_args a;
  a.chunk = d->d_chunk;
  a.blob = d->d_blob;
  a.lut = d->d_lut;
  a.x = d_x;
  a.y = d_y;
  a.part = d->d_part;
  a.done = d->d_done;
  a.alpha = alpha;
  a.beta = beta;
  a.lut0 = d->lut01[0];
  a.lut1 = d->lut01[1];
  a.nchunks = d->nchunks;
  a.prefetch = d->prefetch;
  a.cut = d->cut;
  if (op == GS_OP_T) {
    GS_CHECK(gs_launch_scale(s, d->n, beta, d_y));
    a.beta = 1.0;
  }
  /* no entries (or, for op N, no columns: every entry is padding and x may be empty, which the
   * unconditional gathers must not read): y = beta*y */
  if (d->nchunks == 0 || (op == GS_OP_N && d->n == 0))
    return op == GS_OP_N ? gs_launch_scale(s, d->m, beta, d_y) : GS_SUCCESS;
  void *params[] = {&a};
  GS_CHECK(GS_CUDA(cudaLaunchKernel(kernel_of(op, d->K, d->compressed, op == GS_OP_N ? d->lutn : 0),
                                    dim3(d->grid), dim3(B), params, 0, s)));
  return GS_CHECK_LAUNCH(s, op == GS_OP_N ? "bccoo_n_kernel" : "bccoo_t_kernel");
}

static void bccoo_destroy(void *data)
{
  bccoo_data_t *d = (bccoo_data_t *)data;
  if (!d) return;
  gs_dfree(d->ctx, d->d_chunk);
  gs_dfree(d->ctx, d->d_blob);
  gs_dfree(d->ctx, d->d_lut);
  gs_dfree(d->ctx, d->d_part);
  gs_dfree(d->ctx, d->d_done);
  free(d);
}

/* Options, in table order (cfg->v[]): k, order and prefetch, then bccoo's lut and f32. */
enum { BCCOO_OPT_K, BCCOO_OPT_ORDER, BCCOO_OPT_PREFETCH, BCCOO_OPT_LUT, BCCOO_OPT_F32 };
#define BCCOO_OPTION_K                                                                        \
  {"k", "entries per thread (1, 2, 4 or 8); 0: the fewest bytes for the row lengths",          \
   GS_OPTK_POW2, 0, 0, BCCOO_K_MAX}
#define BCCOO_OPTION_ORDER                                                                    \
  {"order", "0: a row's entries in a chunk dealt out over its threads (a warp gathers "        \
            "neighbouring columns); 1: K consecutive entries per thread (the paper's)",          \
   GS_OPTK_INT, BCCOO_ORDER_ROWT, 0, 1}
#define BCCOO_OPTION_PREFETCH                                                                 \
  {"prefetch", "op N: each block prefetches into L2 the blob of its chunk this many ahead "    \
               "(0: none)",                                                                    \
   GS_OPTK_INT, 1, 0, 2}
static const gs_spmv_option_t bcoo_options[] = {BCCOO_OPTION_K, BCCOO_OPTION_ORDER,
                                                BCCOO_OPTION_PREFETCH, GS_SPMV_OPTION_END};
static const gs_spmv_option_t bccoo_options[] = {
    BCCOO_OPTION_K,
    BCCOO_OPTION_ORDER,
    BCCOO_OPTION_PREFETCH,
    {"lut", "1: a chunk whose values are all in the 256 most frequent stores 1-byte indices",
     GS_OPTK_INT, 1, 0, 1},
    {"f32", "1: a chunk whose values are all floats exactly stores 4 bytes a value (lossless)",
     GS_OPTK_INT, 1, 0, 1},
    GS_SPMV_OPTION_END};

static gs_bccoo_opts_t opts_of(const gs_spmv_cfg_t *cfg, int compressed)
{
  gs_bccoo_opts_t o;
  memset(&o, 0, sizeof o);
  o.k = (int)cfg->v[BCCOO_OPT_K];
  o.order = (int)cfg->v[BCCOO_OPT_ORDER];
  o.compressed = compressed;
  o.lut = compressed && cfg->v[BCCOO_OPT_LUT] != 0.0;
  o.f32 = compressed && cfg->v[BCCOO_OPT_F32] != 0.0;
  return o;
}

static gs_status_t prepare_common(gs_context_t *ctx, gs_matrix_t *A, const gs_spmv_cfg_t *cfg,
                                  void **out, unsigned *caps, int compressed)
{
  gs_status_t st = GS_SUCCESS;
  gs_bccoo_t *L = NULL;
  unsigned *zeros = NULL;
  const gs_bccoo_opts_t o = opts_of(cfg, compressed);
  bccoo_data_t *d = (bccoo_data_t *)calloc(1, sizeof *d);
  if (!d) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory preparing bccoo");
  d->ctx = ctx;
  GS_TRY(gs_bccoo_build(&L, gs_matrix_host(A), &o));
  d->m = L->m;
  d->n = L->n;
  d->K = L->K;
  d->compressed = compressed;
  d->nchunks = L->nchunks;
  d->carries = L->carries;
  d->blob_bytes = L->blob_bytes;
  d->lut_size = L->lut_size;
  d->lutn = lutn_of(compressed, L->lut_size);
  d->lut01[0] = L->lut[0];
  d->lut01[1] = L->lut[1];
  d->prefetch = (int)cfg->v[BCCOO_OPT_PREFETCH];
  if (L->nchunks > 0) {
    GS_TRY(gs_upload(ctx, (void **)&d->d_chunk, L->chunk,
                     (size_t)L->nchunks * sizeof(gs_bccoo_chunk_t), "bccoo chunk records"));
    GS_TRY(gs_upload(ctx, (void **)&d->d_blob, L->blob, L->blob_bytes, "bccoo blobs"));
    if (L->lut_size > 0)
      GS_TRY(gs_upload(ctx, (void **)&d->d_lut, L->lut, sizeof L->lut, "bccoo look-up table"));
    if (L->nchunks > INT32_MAX)
      GS_FAIL(GS_ERR_UNSUPPORTED, "bccoo: %lld chunks, more than the kernels' 32-bit count",
              (long long)L->nchunks);
    /* persistent blocks: as many as are resident at once (the op N kernel, the larger one);
     * op N gives each a contiguous range of chunks, so the grid fixes its summation order */
    int per_sm = 0;
    GS_TRY(GS_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, kernel_of(GS_OP_N, L->K, compressed, d->lutn), B, 0)));
    int64_t g = (int64_t)(per_sm > 0 ? per_sm : 1) * (ctx->sm_count > 0 ? ctx->sm_count : 1);
    if (g > L->nchunks) g = L->nchunks;
    d->grid = (unsigned)g;
    d->cut = gs_bccoo_grid_cut(L, g); /* op N's way for rows cut by block boundaries */
    GS_TRY(gs_dmalloc(ctx, (void **)&d->d_part, 2 * (size_t)g * sizeof(double),
                      "bccoo block partials"));
    zeros = (unsigned *)calloc((size_t)g, sizeof *zeros);
    if (!zeros) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory preparing bccoo");
    GS_TRY(gs_upload(ctx, (void **)&d->d_done, zeros, (size_t)g * sizeof *zeros,
                     "bccoo block counters"));
  }
  d->device_bytes = gs_bccoo_device_bytes(L, d->grid);
  gs_bccoo_describe(L, d->describe, sizeof d->describe);
  {
    const size_t w = strlen(d->describe);
    static const char *const cut[] = {"", ", rows cut at block ends summed in pairs",
                                      ", rows cut at block ends summed by the last block"};
    snprintf(d->describe + w, sizeof d->describe - w, "; %u persistent blocks%s%s", d->grid,
             cut[d->cut], d->lutn == 2 ? ", value table in registers" : "");
  }
  /* op N sums in a fixed order (carries, no atomics); op T adds with atomics. */
  *caps &= ~(unsigned)GS_SPMV_CAP_DETERMINISTIC_T;
  *out = d;
  d = NULL;
cleanup:
  free(zeros);
  gs_bccoo_destroy(&L);
  bccoo_destroy(d);
  return st;
}

static gs_status_t bcoo_prepare(gs_context_t *ctx, gs_matrix_t *A, const gs_spmv_cfg_t *cfg,
                                void **out, unsigned *caps)
{
  return prepare_common(ctx, A, cfg, out, caps, 0);
}

static gs_status_t bccoo_prepare(gs_context_t *ctx, gs_matrix_t *A, const gs_spmv_cfg_t *cfg,
                                 void **out, unsigned *caps)
{
  return prepare_common(ctx, A, cfg, out, caps, 1);
}

static gs_status_t bccoo_memory(const void *data, gs_spmv_mem_t *mem)
{
  const bccoo_data_t *d = (const bccoo_data_t *)data;
  const size_t layout = d->blob_bytes + (size_t)d->nchunks * sizeof(gs_bccoo_chunk_t) +
                        (d->lut_size > 0 ? BCCOO_LUT_SIZE * sizeof(double) : 0);
  mem->device_bytes = d->device_bytes;
  mem->bytes_per_apply = layout + ((size_t)d->n + d->m) * sizeof(double) +
                         (d->cut != BCCOO_CUT_NONE ? (size_t)d->grid * 2 * sizeof(double) : 0);
  mem->bytes_per_apply_t = layout + (size_t)d->m * sizeof(double) + 3 * (size_t)d->n * sizeof(double);
  return GS_SUCCESS;
}

static void bccoo_describe(const void *data, char *buf, size_t len)
{
  snprintf(buf, len, "%s", ((const bccoo_data_t *)data)->describe);
}

static gs_status_t host_apply_common(const gs_csr_t *A, const gs_spmv_cfg_t *cfg, gs_op_t op,
                                     double alpha, const double *x, double beta, double *y,
                                     int compressed)
{
  gs_bccoo_t *L = NULL;
  const gs_bccoo_opts_t o = opts_of(cfg, compressed);
  GS_CHECK(gs_bccoo_build(&L, A, &o)); /* as prepare, whatever alpha is */
  const gs_status_t st = gs_bccoo_apply_host(L, op, alpha, x, beta, y);
  gs_bccoo_destroy(&L);
  return st;
}

static gs_status_t bcoo_host_apply(const gs_csr_t *A, const gs_spmv_cfg_t *cfg, gs_op_t op,
                                   double alpha, const double *x, double beta, double *y)
{
  return host_apply_common(A, cfg, op, alpha, x, beta, y, 0);
}

static gs_status_t bccoo_host_apply(const gs_csr_t *A, const gs_spmv_cfg_t *cfg, gs_op_t op,
                                    double alpha, const double *x, double beta, double *y)
{
  return host_apply_common(A, cfg, op, alpha, x, beta, y, 1);
}

extern "C" const gs_spmv_ops_t gs_spmv_bcoo_ops = {
    GS_SPMV_OPS_VERSION, "bcoo",
    "balanced COO: chunks of 256 x K entries, one row per thread, block segmented scan "
    "(Aliaga et al., Euro-Par 2020 W, 2.1-2.2); T by atomics",
    GS_SPMV_FLAG_TRANSPOSE | GS_SPMV_FLAG_HOST_LAYOUT, bcoo_options, bcoo_prepare, bccoo_apply,
    bccoo_memory, bccoo_destroy, bcoo_host_apply, bccoo_describe};

extern "C" const gs_spmv_ops_t gs_spmv_bccoo_ops = {
    GS_SPMV_OPS_VERSION, "bccoo",
    "balanced compressed COO: per-chunk 8-bit rows, 8/16/32-bit columns, 1-byte value table "
    "indices or float/double values (Aliaga et al., Euro-Par 2020 W, 2.2); T by atomics",
    GS_SPMV_FLAG_TRANSPOSE | GS_SPMV_FLAG_HOST_LAYOUT, bccoo_options, bccoo_prepare,
    bccoo_apply, bccoo_memory, bccoo_destroy, bccoo_host_apply, bccoo_describe};
