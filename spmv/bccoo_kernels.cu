/* spmv/bccoo_kernels.cu: the `bcoo` and `bccoo` backends, balanced COO and balanced compressed
 * COO with a value look-up table (Aliaga, Anzt, Quintana-Ortí, Tomás & Tsai, Euro-Par 2020
 * Workshops; "the paper" below). The layout (spmv/bccoo.h) is built on the GPU from the shared
 * device CSR (spmv/bccoo_devbuild.cu), or with build=host by the host builder
 * (spmv/bccoo_build.c, the reference: the same bytes) and uploaded; both backends run the same
 * kernels, `bcoo` instantiated for its one uncompressed encoding, `bccoo` dispatching per chunk.
 *
 * Work division (section 2.1): one block of B = 256 threads per chunk of B*K entries, thread t
 * its K consecutive entries, which lie in one row (rows padded to a multiple of K, empty rows to
 * K zeros). Blocks are persistent: min(chunks, resident blocks) of them walk the chunks
 * c = blockIdx.x + i * gridDim.x, so that the look-up table is staged in shared memory once
 * per block, not once per chunk.
 *
 * Memory access: each section of a chunk's blob is read with one to four aligned vector loads
 * per thread (1 to 16 bytes each), a warp's load covering consecutive bytes (the word layout of
 * bccoo.h), through the read-only path without L1 allocation (the matrix is read once; L1 keeps
 * x). x is gathered per entry (__ldg); padding entries carry the column sentinel and read
 * nothing. y is written once per row, by the first thread of the row's run in the chunk.
 *
 * Encodings (section 2.2, Table 1): the encoding byte of a chunk selects, once per chunk (a
 * switch at block level), a device function specialised by template on the row width (0, 1 or
 * 4 bytes per thread), column width (1, 2 or 4 bytes) and value width (1: look-up table index,
 * 4: float, 8: double), so that the per-entry loop has no branch on the format. `bcoo` is the
 * balanced COO of section 2.1 in the same frame: 32-bit rows per thread, 32-bit absolute
 * columns, double values, and no switch.
 *
 * Precision (precision=mixed, both backends): the builder rounds every value to float once
 * (gs_bccoo_opts_t.mixed), so the chunks store floats (VAL_F32) or table indices, never doubles,
 * and the table holds the most frequent rounded values (a float is exact in its double slot:
 * the table keeps its 2 KiB and its one shared-memory path). bccoo's kernels need nothing more:
 * VAL_F32 is already widened to double before its product, and sums, scans, carries and
 * atomics are double. bcoo's single encoding is a template parameter (UVW, the bytes of a value:
 * 8, or 4 when mixed), so its double instances are the kernels as they were.
 * precision=float: the same layout (gs_bccoo_opts_t.mixed = 2), and the kernels' second
 * template parameter T (the type of bccoo_args<T>'s table, vectors, scalars and carries, and of
 * the sums, scans and atomics) float instead of double: the table is uploaded and staged as
 * floats (1 KiB; its values are floats), VAL_F32 is read as is, sums use fmaf. The double and
 * mixed instances (T = double) compile to the code they had before T was added.
 *
 * op N (bccoo_n_kernel): each thread sums its K products in order; the block then runs the
 * segmented scan of section 2.2 (Listing 1.2): a warp-level Hillis-Steele suffix scan keyed by
 * the row (rows are non-decreasing, so equal rows o lanes apart enclose one run), after which the
 * first lane of each run in a warp holds the run's warp sum; runs that cross warps are closed by
 * the head thread adding the first-run sums of the following warps (in warp order, from shared
 * memory). One thread per row then writes y[row] = alpha*sum + beta*y[row] (y read only when
 * beta != 0). Rows that cross a chunk boundary (bits 6 and 7 of the encoding byte): instead of
 * the paper's atomics into a zeroed y, the chunk's partial goes to one of its two carry slots and
 * bccoo_fixup_kernel (one thread per chunk where such a row starts) sums the row's carries in
 * chunk order and writes y, as the hola backend does. No atomics: op N is deterministic.
 * A chunk of one row (ROW_NONE) runs the same scan (every key equal: a plain reduction).
 *
 * op T (bccoo_t_kernel): y = beta*y first (gs_launch_scale); each thread forms its factor
 * alpha*x[row] once (all its K entries share the row: a property of the layout), skips a zero
 * factor, and adds v*factor to y[col] with atomics (no combining: a thread's columns are
 * distinct, and equal columns of neighbouring threads are rows apart). Not deterministic.
 *
 * Byte model (memory()): op N: the blobs + 16 bytes per chunk record + the table (2 KiB) + x
 * once (8n) + y once (8m) + the carries (16 per shared row). op T: the blobs, records and
 * table + 8m (x) + 3 * 8n (y scaled, then updated by atomics), as for CSR's op T. The blobs
 * weigh what their encodings weigh: 4 bytes a value in VAL_F32 chunks (every non-table chunk
 * in mixed precision), 1 in table chunks. In float precision a table entry, a vector entry
 * and a carry weigh 4 bytes instead of 8.
 *
 * Offsets: chunk numbers and blob offsets in 64 bits; rows and columns 32-bit (the backends are
 * not flagged WIDE). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "spmv/bccoo.h"
#include "spmv/bccoo_devbuild.h"
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
  int K, compressed, lut_size;
  int mixed;                   /* values rounded to float at the build (precision=mixed, float) */
  int fl;                      /* precision=float: float table, carries, vectors and sums */
  int64_t nchunks, carries;
  size_t blob_bytes, device_bytes;
  unsigned grid;               /* persistent blocks */
  int4 *d_chunk;               /* nchunks records (gs_bccoo_chunk_t) */
  uint8_t *d_blob;
  void *d_lut;                 /* BCCOO_LUT_SIZE doubles (floats in float precision), or NULL
                                  when no chunk uses the table */
  void *d_carry;               /* 2 * nchunks doubles (floats in float precision) */
  char describe[512];
} bccoo_data_t;

/* A product's arguments; T is the type of the table, the vectors, the sums and the carries:
 * double (double and mixed precision), or float (precision=float). */
template <typename T>
struct bccoo_args {
  const int4 *__restrict__ chunk;
  const uint8_t *__restrict__ blob;
  const T *__restrict__ lut;
  const T *__restrict__ x;
  T *y;
  T *carry;
  T alpha, beta;
  int64_t nchunks;
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

/* Value i as T (a float layout stores no doubles: its VAL_F64 case is never taken). */
template <int VW, typename T, int N>
static __device__ __forceinline__ T value(const uint32_t (&w)[N], int i, const T *lut)
{
  if constexpr (VW == 8) return (T)__hiloint2double((int)w[2 * i + 1], (int)w[2 * i]);
  else if constexpr (VW == 4) return (T)__uint_as_float(w[i]);
  else return lut[field<1>(w, i)];
}

static __device__ __forceinline__ double fma_t(double a, double b, double c) { return fma(a, b, c); }
static __device__ __forceinline__ float fma_t(float a, float b, float c) { return fmaf(a, b, c); }

/* One thread's K entries of a chunk, decoded: row offset, then the entries through f(col, v)
 * for the non-padding ones (col absolute). Template widths: no per-entry branch on the format. */
template <int K, int RW, int CW, int VW, typename T, class F>
static __device__ __forceinline__ int visit(const uint8_t *blob, int t, int basecol,
                                            const T *lut, F &f)
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
  f.begin(rowoff);
  /* No branch per entry: a padding entry (the column sentinel) is visited at the chunk's base
   * column, a real column, with real = false, and f discards it. A branch around each entry
   * would keep the K gathers of x in K basic blocks, each waiting for the previous sum. */
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const uint32_t c = field<CW>(wc, k);
    const bool real = c != pad;
    f.entry(basecol + (int)(real ? c : 0u), value<VW>(wv, k, lut), real);
  }
  return rowoff;
}

/* Per-entry work of op N: the thread's sum of products, in entry order. */
template <typename T>
struct sum_op {
  const T *__restrict__ x;
  T s;
  __device__ void begin(int) {}
  __device__ void entry(int c, T v, bool real)
  {
    const T t = fma_t(v, __ldg(x + c), s); /* x[c] of a padding entry may be Inf: t unused */
    s = real ? t : s;
  }
};

/* Per-entry work of op T: v * alpha * x[row] into y[c]; nothing when the factor is zero. */
template <typename T>
struct scatter_op {
  const T *__restrict__ x;
  T *y;
  T alpha, f;
  int baserow;
  __device__ void begin(int rowoff) { f = alpha * __ldg(x + baserow + rowoff); }
  __device__ void entry(int c, T v, bool real)
  {
    if (real && f != T(0)) atomicAdd(y + c, v * f);
  }
};

/* The chunk's encoding picks the specialisation, once per chunk. bcoo has one encoding, whose
 * value width UVW (8, or 4 in mixed precision) is a template parameter; bccoo ignores UVW. */
template <int K, bool COMPRESSED, int UVW, typename T, class F>
static __device__ __forceinline__ int visit_chunk(int enc, const uint8_t *blob, int t,
                                                  int basecol, const T *lut, F &f)
{
  if constexpr (!COMPRESSED) {
    return visit<K, 4, 4, UVW>(blob, t, basecol, lut, f);
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

template <typename T>
static __device__ __forceinline__ chunk_rec read_chunk(const bccoo_args<T> &a, int64_t c)
{
  const int4 r = __ldg(a.chunk + c); /* one address for the whole block: a broadcast */
  const uint64_t pe = ((uint64_t)(uint32_t)r.w << 32) | (uint32_t)r.z;
  chunk_rec k;
  k.row = r.x;
  k.col = r.y;
  k.enc = (int)(pe & 0xffu);
  k.blob = a.blob + (pe >> 8);
  return k;
}

/* The look-up table to shared memory, once per block (bccoo with a table only). */
template <bool COMPRESSED, typename T>
static __device__ __forceinline__ void stage_lut(const bccoo_args<T> &a, T *s_lut)
{
  if (COMPRESSED && a.lut) s_lut[threadIdx.x] = __ldg(a.lut + threadIdx.x);
  __syncthreads();
}

template <typename T>
static __device__ __forceinline__ void write_y(const bccoo_args<T> &a, int row, T s)
{
  a.y[row] = a.beta == T(0) ? a.alpha * s : a.alpha * s + a.beta * a.y[row];
}

/* ---- op N ---------------------------------------------------------------------------------- */
template <int K, bool COMPRESSED, int UVW, typename T>
static __global__ void __launch_bounds__(B) bccoo_n_kernel(bccoo_args<T> a)
{
  __shared__ T s_lut[COMPRESSED ? BCCOO_LUT_SIZE : 1];
  __shared__ int s_first_row[WARPS], s_last_row[WARPS];
  __shared__ T s_first_sum[WARPS];
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  stage_lut<COMPRESSED>(a, s_lut);

  for (int64_t c = blockIdx.x; c < a.nchunks; c += gridDim.x) {
    const chunk_rec k = read_chunk(a, c);
    sum_op<T> op{a.x, T(0)};
    const int row = k.row + visit_chunk<K, COMPRESSED, UVW>(k.enc, k.blob, t, k.col,
                                                            (const T *)s_lut, op);
    T s = op.s;
    /* Listing 1.2: suffix scan over the warp keyed by the row */
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const int r2 = __shfl_down_sync(FULL_MASK, row, o);
      const T s2 = __shfl_down_sync(FULL_MASK, s, o);
      if (lane + o < 32 && r2 == row) s += s2;
    }
    const int prev = __shfl_up_sync(FULL_MASK, row, 1);
    if (lane == 0) {
      s_first_row[warp] = row;
      s_first_sum[warp] = s;
    }
    if (lane == 31) s_last_row[warp] = row;
    __syncthreads();
    /* a run's first thread in the block; a warp's lane 0 continuing the previous warp's last
     * run is not one */
    const bool head =
        (lane == 0 || prev != row) && !(lane == 0 && warp > 0 && s_last_row[warp - 1] == row);
    if (head) {
      if (row == s_last_row[warp]) /* the run goes on into the following warps */
        for (int w2 = warp + 1; w2 < WARPS && s_first_row[w2] == row; ++w2) {
          s += s_first_sum[w2];
          if (s_last_row[w2] != row) break;
        }
      if (t == 0 && (k.enc & BCCOO_HEAD_SHARED)) a.carry[2 * c] = s;
      else if (row == s_last_row[WARPS - 1] && (k.enc & BCCOO_TAIL_SHARED)) a.carry[2 * c + 1] = s;
      else write_y(a, row, s);
    }
    __syncthreads(); /* the shared run sums are reused by the next chunk */
  }
}

/* Rows shared between chunks: the chunk where such a row starts sums the row's carries in chunk
 * order (its tail slot, then each following chunk's head slot while the row goes on). */
template <typename T>
static __global__ void __launch_bounds__(256) bccoo_fixup_kernel(bccoo_args<T> a)
{
  GS_GRID_STRIDE(c, a.nchunks - 1) {
    const chunk_rec k = read_chunk(a, c);
    const int R = __ldg(&a.chunk[c + 1].x);
    if (!(k.enc & BCCOO_TAIL_SHARED) || ((k.enc & BCCOO_HEAD_SHARED) && k.row == R)) continue;
    T s = a.carry[2 * c + 1];
    for (int64_t j = c + 1; j < a.nchunks; ++j) {
      s += a.carry[2 * j];
      if (!(j + 1 < a.nchunks && __ldg(&a.chunk[j + 1].x) == R)) break;
    }
    write_y(a, R, s);
  }
}

/* ---- op T ---------------------------------------------------------------------------------- */
template <int K, bool COMPRESSED, int UVW, typename T>
static __global__ void __launch_bounds__(B) bccoo_t_kernel(bccoo_args<T> a)
{
  __shared__ T s_lut[COMPRESSED ? BCCOO_LUT_SIZE : 1];
  stage_lut<COMPRESSED>(a, s_lut);
  for (int64_t c = blockIdx.x; c < a.nchunks; c += gridDim.x) {
    const chunk_rec k = read_chunk(a, c);
    scatter_op<T> op{a.x, a.y, a.alpha, T(0), k.row};
    visit_chunk<K, COMPRESSED, UVW>(k.enc, k.blob, threadIdx.x, k.col, (const T *)s_lut, op);
  }
}

/* ---- backend ------------------------------------------------------------------------------- */

/* The kernel of (op, K, compressed, mixed) for vectors of T: bccoo's kernels read every
 * encoding, mixed or not; bcoo's are instantiated per value width (8 bytes, or 4 when mixed;
 * a float layout is a mixed one). */
template <typename T>
static const void *kernel_of(gs_op_t op, int K, int compressed, int mixed)
{
#define BCCOO_PICK(KK)                                                                        \
  if (K == KK && compressed)                                                                  \
    return op == GS_OP_N ? (const void *)bccoo_n_kernel<KK, true, 8, T>                       \
                         : (const void *)bccoo_t_kernel<KK, true, 8, T>;
#define BCOO_PICK(KK)                                                                         \
  if (K == KK && !compressed) {                                                               \
    if constexpr (sizeof(T) == sizeof(float)) { /* float: the 4-byte values of mixed */       \
      return op == GS_OP_N ? (const void *)bccoo_n_kernel<KK, false, 4, T>                    \
                           : (const void *)bccoo_t_kernel<KK, false, 4, T>;                   \
    } else {                                                                                  \
      if (op == GS_OP_N)                                                                      \
        return mixed ? (const void *)bccoo_n_kernel<KK, false, 4, T>                          \
                     : (const void *)bccoo_n_kernel<KK, false, 8, T>;                         \
      return mixed ? (const void *)bccoo_t_kernel<KK, false, 4, T>                            \
                   : (const void *)bccoo_t_kernel<KK, false, 8, T>;                           \
    }                                                                                         \
  }
  BCCOO_PICK(1)
  BCCOO_PICK(2)
  BCCOO_PICK(4)
  BCCOO_PICK(8)
  BCCOO_PICK(16)
  BCCOO_PICK(32)
  BCOO_PICK(1)
  BCOO_PICK(2)
  BCOO_PICK(4)
  BCOO_PICK(8)
#undef BCOO_PICK
#undef BCCOO_PICK
  return NULL;
}

/* One launcher for both vector types T (double, or float in float precision, whose table and
 * carries prepare made floats). */
template <typename T>
static gs_status_t bccoo_apply_t(gs_context_t *ctx, const bccoo_data_t *d, gs_op_t op, T alpha,
                                 const T *d_x, T beta, T *d_y)
{
  cudaStream_t s = ctx->stream;
  bccoo_args<T> a;
  a.chunk = d->d_chunk;
  a.blob = d->d_blob;
  a.lut = (const T *)d->d_lut;
  a.x = d_x;
  a.y = d_y;
  a.carry = (T *)d->d_carry;
  a.alpha = alpha;
  a.beta = beta;
  a.nchunks = d->nchunks;
  if (op == GS_OP_T) {
    GS_CHECK(gs_launch_scale(s, d->n, beta, d_y));
    a.beta = T(1);
  }
  /* No chunk, or no column (every entry is padding, and x, of length 0, must not be read by
   * the padding entries' gathers): A x = 0 */
  if (d->nchunks == 0 || d->n == 0)
    return op == GS_OP_N ? gs_launch_scale(s, d->m, beta, d_y) : GS_SUCCESS;
  void *params[] = {&a};
  GS_CHECK(GS_CUDA(cudaLaunchKernel(kernel_of<T>(op, d->K, d->compressed, d->mixed),
                                    dim3(d->grid), dim3(B), params, 0, s)));
  GS_CHECK(GS_CHECK_LAUNCH(s, op == GS_OP_N ? "bccoo_n_kernel" : "bccoo_t_kernel"));
  if (op == GS_OP_T || d->carries == 0) return GS_SUCCESS;
  bccoo_fixup_kernel<T><<<gs_grid_blocks(d->nchunks - 1, 256), 256, 0, s>>>(a);
  return GS_CHECK_LAUNCH(s, "bccoo_fixup_kernel");
}

static gs_status_t bccoo_apply(gs_context_t *ctx, void *data, gs_op_t op, double alpha,
                               const double *d_x, double beta, double *d_y)
{
  return bccoo_apply_t(ctx, (const bccoo_data_t *)data, op, alpha, d_x, beta, d_y);
}

/* precision=float (spmv.c calls this slot only for a product prepared in float precision). */
static gs_status_t bccoo_apply_f32(gs_context_t *ctx, void *data, gs_op_t op, float alpha,
                                   const float *d_x, float beta, float *d_y)
{
  return bccoo_apply_t(ctx, (const bccoo_data_t *)data, op, alpha, d_x, beta, d_y);
}

static void bccoo_destroy(void *data)
{
  bccoo_data_t *d = (bccoo_data_t *)data;
  if (!d) return;
  gs_dfree(d->ctx, d->d_chunk);
  gs_dfree(d->ctx, d->d_blob);
  gs_dfree(d->ctx, d->d_lut);
  gs_dfree(d->ctx, d->d_carry);
  free(d);
}

/* Options, in table order (cfg->v[]): k, then bccoo's lut and f32. */
enum { BCCOO_OPT_K, BCCOO_OPT_LUT, BCCOO_OPT_F32 };
static const gs_spmv_option_t bcoo_options[] = {
    {"k", "entries per thread (1, 2, 4 or 8); 0: the fewest bytes for the row lengths",
     GS_OPTK_POW2, 0, 0, BCOO_K_MAX},
    GS_SPMV_OPTION_END};
static const gs_spmv_option_t bccoo_options[] = {
    {"k", "entries per thread (1, 2, 4, 8, 16 or 32); 0: the model's choice for the row lengths",
     GS_OPTK_POW2, 0, 0, BCCOO_K_MAX},
    {"lut", "1: a chunk whose values are all in the 256 most frequent stores 1-byte indices",
     GS_OPTK_INT, 1, 0, 1},
    {"f32", "1: a chunk whose values are all floats exactly stores 4 bytes a value (lossless; "
            "with precision=mixed every value is a float)",
     GS_OPTK_INT, 1, 0, 1},
    GS_SPMV_OPTION_END};

static gs_bccoo_opts_t opts_of(const gs_spmv_cfg_t *cfg, int compressed)
{
  gs_bccoo_opts_t o;
  memset(&o, 0, sizeof o);
  o.k = (int)cfg->v[BCCOO_OPT_K];
  o.compressed = compressed;
  o.lut = compressed && cfg->v[BCCOO_OPT_LUT] != 0.0;
  o.f32 = compressed && cfg->v[BCCOO_OPT_F32] != 0.0;
  /* values rounded at the build: 1 mixed, 2 float (the same layout) */
  o.mixed = cfg->precision == GS_PRECISION_FLOAT ? 2 : cfg->precision == GS_PRECISION_MIXED;
  return o;
}

static gs_status_t prepare_common(gs_context_t *ctx, gs_matrix_t *A, const gs_spmv_cfg_t *cfg,
                                  void **out, unsigned *caps, int compressed)
{
  gs_status_t st = GS_SUCCESS;
  gs_bccoo_t *L = NULL;
  int device_built = 0;
  const gs_bccoo_opts_t o = opts_of(cfg, compressed);
  bccoo_data_t *d = (bccoo_data_t *)calloc(1, sizeof *d);
  if (!d) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory preparing bccoo");
  d->ctx = ctx;
  if (!gs_cfg_host_build(cfg)) { /* the layout built on the GPU (spmv/bccoo_devbuild.cu) */
    gs_dcsr_t dcsr;
    int fallback = 0;
    GS_TRY(gs_matrix_device_csr(A, &dcsr));
    L = (gs_bccoo_t *)calloc(1, sizeof *L);
    if (!L) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory preparing bccoo");
    GS_TRY(gs_bccoo_build_device(ctx, &dcsr, &o, L, (gs_bccoo_chunk_t **)&d->d_chunk,
                                 &d->d_blob, &fallback));
    if (fallback) gs_bccoo_destroy(&L); /* too many candidate values: the host's table */
    else device_built = 1;
  }
  if (!L) GS_TRY(gs_bccoo_build(&L, gs_matrix_host(A), &o));
  d->m = L->m;
  d->n = L->n;
  d->K = L->K;
  d->compressed = compressed;
  d->mixed = L->mixed;
  d->fl = L->fl;
  d->nchunks = L->nchunks;
  d->carries = L->carries;
  d->blob_bytes = L->blob_bytes;
  d->lut_size = L->lut_size;
  d->device_bytes = gs_bccoo_device_bytes(L);
  if (L->nchunks > 0) {
    if (!device_built) {
      GS_TRY(gs_upload(ctx, (void **)&d->d_chunk, L->chunk,
                       (size_t)L->nchunks * sizeof(gs_bccoo_chunk_t), "bccoo chunk records"));
      GS_TRY(gs_upload(ctx, (void **)&d->d_blob, L->blob, L->blob_bytes, "bccoo blobs"));
    }
    const size_t vec = L->fl ? sizeof(float) : sizeof(double); /* table and carries */
    if (L->lut_size > 0 && !L->fl) {
      GS_TRY(gs_upload(ctx, &d->d_lut, L->lut, sizeof L->lut, "bccoo look-up table"));
    } else if (L->lut_size > 0) { /* float: the table's values are floats (rounded at the build) */
      float lutf[BCCOO_LUT_SIZE];
      for (int i = 0; i < BCCOO_LUT_SIZE; ++i) lutf[i] = (float)L->lut[i];
      GS_TRY(gs_upload(ctx, &d->d_lut, lutf, sizeof lutf, "bccoo look-up table"));
    }
    GS_TRY(gs_dmalloc(ctx, &d->d_carry, 2 * (size_t)L->nchunks * vec, "bccoo carries"));
    /* persistent blocks: as many as are resident at once (the op N kernel, the larger one) */
    int per_sm = 0;
    GS_TRY(GS_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm,
        L->fl ? kernel_of<float>(GS_OP_N, L->K, compressed, L->mixed)
              : kernel_of<double>(GS_OP_N, L->K, compressed, L->mixed),
        B, 0)));
    int64_t g = (int64_t)(per_sm > 0 ? per_sm : 1) * (ctx->sm_count > 0 ? ctx->sm_count : 1);
    if (g > L->nchunks) g = L->nchunks;
    d->grid = (unsigned)g;
  }
  gs_bccoo_describe(L, d->describe, sizeof d->describe);
  {
    const size_t w = strlen(d->describe);
    snprintf(d->describe + w, sizeof d->describe - w, "; %u persistent blocks%s", d->grid,
             device_built ? "; built on the device" : "");
  }
  /* op N sums in a fixed order (carries, no atomics); op T adds with atomics. */
  *caps &= ~(unsigned)GS_SPMV_CAP_DETERMINISTIC_T;
  *out = d;
  d = NULL;
cleanup:
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
  /* the table, the vectors and the carries: 8 bytes an entry, 4 in float precision */
  const size_t v = d->fl ? sizeof(float) : sizeof(double);
  const size_t layout = d->blob_bytes + (size_t)d->nchunks * sizeof(gs_bccoo_chunk_t) +
                        (d->lut_size > 0 ? BCCOO_LUT_SIZE * v : 0);
  mem->device_bytes = d->device_bytes;
  mem->bytes_per_apply = layout + ((size_t)d->n + d->m) * v + (size_t)d->carries * 2 * v;
  mem->bytes_per_apply_t = layout + (size_t)d->m * v + 3 * (size_t)d->n * v;
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
    GS_SPMV_FLAG_TRANSPOSE | GS_SPMV_FLAG_HOST_LAYOUT | GS_SPMV_FLAG_MIXED | GS_SPMV_FLAG_FLOAT |
        GS_SPMV_FLAG_SHARED_CSR | GS_SPMV_FLAG_DEVICE_BUILD,
    bcoo_options, bcoo_prepare, bccoo_apply,
    bccoo_memory, bccoo_destroy, bcoo_host_apply, bccoo_describe, bccoo_apply_f32};

extern "C" const gs_spmv_ops_t gs_spmv_bccoo_ops = {
    GS_SPMV_OPS_VERSION, "bccoo",
    "balanced compressed COO: per-chunk 8-bit rows, 8/16/32-bit columns, 1-byte value table "
    "indices or float/double values (Aliaga et al., Euro-Par 2020 W, 2.3); T by atomics",
    GS_SPMV_FLAG_TRANSPOSE | GS_SPMV_FLAG_HOST_LAYOUT | GS_SPMV_FLAG_MIXED | GS_SPMV_FLAG_FLOAT |
        GS_SPMV_FLAG_SHARED_CSR | GS_SPMV_FLAG_DEVICE_BUILD,
    bccoo_options, bccoo_prepare,
    bccoo_apply, bccoo_memory, bccoo_destroy, bccoo_host_apply, bccoo_describe, bccoo_apply_f32};
