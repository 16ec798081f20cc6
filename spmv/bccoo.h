/* spmv/bccoo.h: the chunked layout of the `bcoo` and `bccoo` backends (Aliaga, Anzt,
 * Quintana-Ortí, Tomás & Tsai, "Balanced and Compressed Coordinate Layout for the Sparse
 * Matrix-Vector Product on GPUs", Euro-Par 2020 Workshops; "the paper" below), shared by the
 * host builder and emulation (spmv/bccoo_build.c) and the kernels (spmv/bccoo_kernels.cu): the
 * address arithmetic of a chunk's blob lives here once, so that the host decodes the blobs with
 * the very functions the kernels use. Pure C (the inline helpers are host+device under nvcc).
 *
 * Chunks (section 2.1): every row is padded with explicit zeros to a multiple of K entries (an
 * empty row to K zeros, section 2.2), so that the K entries of one thread lie in one row; the
 * padded entries are cut into chunks of B*K (B = 256 threads, K = 1, 2, 4 or 8), one per block.
 * The last chunk is completed with padding threads in the last row. Padding entries carry the
 * column sentinel of their chunk's column width (all ones), so that the kernels never read x
 * for them (an Inf in x never reaches a row that does not use its column); a column offset is
 * therefore at most 2^8 - 2 in 8 bits and 2^16 - 2 in 16 bits.
 *
 * A chunk's blob (section 2.2, "the B row indexes first; followed by the B*K column indexes; and
 * finally the B*K values"), three sections, each a multiple of 16 bytes long:
 *   rows:    one offset from the chunk's base row per thread: none (ROW_NONE, the chunk is one
 *            row), 1 byte (ROW_8: 8 bits always suffice, since every row has >= 1 thread), or
 *            4 bytes (ROW_32, the uncompressed `bcoo`);
 *   columns: K offsets per thread from the chunk's base column (its smallest column): 1, 2 or 4
 *            bytes (COL_8/16/32; `bcoo` stores absolute columns: base 0, COL_32);
 *   values:  K per thread: a 1-byte index into the matrix's look-up table of its 256 most
 *            frequent values (VAL_LUT, when every value of the chunk is in it), a float (VAL_F32,
 *            beyond the paper: when every value of the chunk is a float exactly) or a double.
 *            In mixed precision (gs_bccoo_opts_t.mixed) every value is first rounded to float,
 *            once, at the build: the table then holds the most frequent rounded values (values
 *            that round alike count as one; kept in double, where a float is exact), chunks
 *            outside it store floats (VAL_F32), and no chunk stores doubles; `bcoo` stores
 *            VAL_F32 instead of VAL_F64 (ROW_32, COL_32, VAL_F32).
 * Within a section, thread t's P = K * width bytes are cut into words of W = min(P, 16) bytes
 * and word j of thread t sits at (j * B + t) * W: one warp's load of word j is 32 consecutive
 * words, so every load is a coalesced, aligned vector load of 1 to 16 bytes.
 *
 * Per chunk a 16-byte record: base row (the row of thread 0), base column, and the blob's byte
 * offset shifted left by 8 with the encoding byte in the low 8 bits (Table 1 of the paper: row
 * in bits 0-1, column in bits 2-3, value in bits 4-5) plus two bits of our own: bit 6, the
 * chunk's first row continues from the previous chunk; bit 7, its last row continues in the
 * next one. Those rows' partial sums go to two carry slots per chunk, summed in chunk order by
 * a fix-up pass (no atomics in op N: deterministic). */
#ifndef GS_SPMV_BCCOO_H
#define GS_SPMV_BCCOO_H

#include <stddef.h>
#include <stdint.h>

#include "gpusolve/spmv.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __CUDACC__
#define BCCOO_HD static __host__ __device__ __forceinline__
#else
#define BCCOO_HD static inline
#endif

#define BCCOO_THREADS 256 /* B: threads per block, entries per chunk B*K */
#define BCCOO_LUT_SIZE 256
#define BCCOO_K_MAX 32     /* bccoo: K = 1, 2, 4, 8, 16 or 32 */
#define BCOO_K_MAX 8       /* bcoo: K = 1, 2, 4 or 8 */
#define BCCOO_MIN_CHUNKS 64 /* the automatic K is 16 or 32 only with at least this many chunks */

/* The encoding byte. */
enum {
  BCCOO_ROW_NONE = 0, BCCOO_ROW_8 = 1, BCCOO_ROW_32 = 2,           /* bits 0-1 */
  BCCOO_COL_8 = 0, BCCOO_COL_16 = 1, BCCOO_COL_32 = 2,             /* bits 2-3 */
  BCCOO_VAL_LUT = 0, BCCOO_VAL_F32 = 1, BCCOO_VAL_F64 = 2,         /* bits 4-5 */
  BCCOO_HEAD_SHARED = 1 << 6, /* the first row began in the previous chunk */
  BCCOO_TAIL_SHARED = 1 << 7  /* the last row goes on in the next chunk */
};
#define BCCOO_ENC(row, col, val) ((row) | ((col) << 2) | ((val) << 4))
#define BCCOO_ENC_ROW(e) ((e) & 3)
#define BCCOO_ENC_COL(e) (((e) >> 2) & 3)
#define BCCOO_ENC_VAL(e) (((e) >> 4) & 3)
#define BCCOO_ENC_KIND(e) ((e) & 63) /* the encoding without the sharing bits */

/** One chunk's record (16 bytes, read by the kernels as one int4). */
typedef struct gs_bccoo_chunk {
  int32_t row;  /* base row: the row of thread 0 */
  int32_t col;  /* base column: the smallest column of the chunk's entries (0 for bcoo) */
  uint64_t pe;  /* (byte offset of the blob << 8) | encoding byte */
} gs_bccoo_chunk_t;

BCCOO_HD int bccoo_row_width(int enc)
{
  return BCCOO_ENC_ROW(enc) == BCCOO_ROW_8 ? 1 : BCCOO_ENC_ROW(enc) == BCCOO_ROW_32 ? 4 : 0;
}
BCCOO_HD int bccoo_col_width(int enc) { return 1 << BCCOO_ENC_COL(enc); }
BCCOO_HD int bccoo_val_width(int enc)
{
  return BCCOO_ENC_VAL(enc) == BCCOO_VAL_LUT ? 1 : BCCOO_ENC_VAL(enc) == BCCOO_VAL_F32 ? 4 : 8;
}
/** The column offset of a padding entry in a chunk of column width w: all ones. */
BCCOO_HD uint32_t bccoo_col_pad(int width)
{
  return width == 1 ? 0xffu : width == 2 ? 0xffffu : 0xffffffffu;
}
/** Byte position of byte i of thread t's P bytes in a section (the word layout above). */
BCCOO_HD size_t bccoo_pos(int P, int t, int i)
{
  const int W = P < 16 ? P : 16;
  return ((size_t)(i / W) * BCCOO_THREADS + (size_t)t) * (size_t)W + (size_t)(i % W);
}
/** Section sizes and the blob size of a chunk of encoding enc, K entries per thread. */
BCCOO_HD size_t bccoo_row_bytes(int enc) { return (size_t)BCCOO_THREADS * bccoo_row_width(enc); }
BCCOO_HD size_t bccoo_col_bytes(int enc, int K)
{
  return (size_t)BCCOO_THREADS * K * bccoo_col_width(enc);
}
BCCOO_HD size_t bccoo_blob_bytes(int enc, int K)
{
  return bccoo_row_bytes(enc) + bccoo_col_bytes(enc, K) +
         (size_t)BCCOO_THREADS * K * bccoo_val_width(enc);
}

/** The host layout. */
typedef struct gs_bccoo {
  gs_idx_t m, n;
  gs_off_t nnz;
  int K;
  int compressed;          /* 0: bcoo (ROW_32, COL_32 absolute, VAL_F64 everywhere; VAL_F32 when
                              mixed) */
  int mixed;               /* values rounded to float at the build (precision=mixed and float) */
  int fl;                  /* precision=float: the layout of mixed; on the device the table and
                              the carries are floats, and the host emulation computes in float */
  int64_t nchunks;
  int64_t padded;          /* stored entries, padding included: nchunks * B * K */
  gs_bccoo_chunk_t *chunk; /* nchunks */
  uint8_t *blob;           /* blob_bytes, every blob 16-byte aligned */
  size_t blob_bytes;
  double lut[BCCOO_LUT_SIZE];
  int lut_size;            /* values in the table (0 when no chunk uses it) */
  int64_t kind_count[64];  /* chunks per encoding (BCCOO_ENC_KIND) */
  int64_t carries;         /* rows shared between chunks */
  double build_seconds;    /* wall time of gs_bccoo_build */
  int threads;             /* host threads it used */
} gs_bccoo_t;

/** Build options (the backends' option values). */
typedef struct gs_bccoo_opts {
  int k;          /* 0: automatic, else 1, 2, 4 or 8 */
  int compressed; /* 0: bcoo */
  int lut;        /* 1: allow VAL_LUT chunks (bccoo only) */
  int f32;        /* 1: allow VAL_F32 chunks (bccoo only) */
  int threads;    /* 0: gs_mm_threads() */
  int mixed;      /* 1: precision=mixed: every value rounded to float once (see the values
                     section above); f32 is then implied. The finite values must lie within
                     the float range (spmv.c refuses others before any build). 2:
                     precision=float, the same layout, with gs_bccoo_t.fl set. */
} gs_bccoo_opts_t;

/** The automatic entries per thread for A: the K of {1, 2, 4, 8} (bcoo) or {1, ..., 32}
 *  (bccoo) of least cost by a simple model (padding of each row to a multiple of K against the
 *  per-thread cost of a row offset and of the segmented scan; for bccoo that weight is fitted
 *  to H100 timings); 16 and 32 only where they leave at least BCCOO_MIN_CHUNKS chunks. */
int gs_bccoo_choose_k(const gs_csr_t *A, int compressed);
/** gs_bccoo_choose_k's choice from the padded entry counts for K = 1, 2, 4, 8, 16, 32 (the
 *  host counts them from the row pointers, the device build in one kernel pass). */
int gs_bccoo_choose_k_padded(const int64_t pad[6], int compressed);
/** The checks of gs_bccoo_build's options (K, the precision), shared by the device build. */
gs_status_t gs_bccoo_check_opts(const gs_bccoo_opts_t *opts);

/** Builds the layout of A. GS_ERR_INVALID_ARG for a bad K, GS_ERR_HOST_MEMORY, and
 *  GS_ERR_UNSUPPORTED when the padded entries or a column offset do not fit the layout. */
gs_status_t gs_bccoo_build(gs_bccoo_t **out, const gs_csr_t *A, const gs_bccoo_opts_t *opts);
void gs_bccoo_destroy(gs_bccoo_t **L);

/** Thread t of chunk c decoded from the blob as the kernels decode it: its row, and its K
 *  entries' columns (-1 for padding) and values (in a mixed layout, the rounded values widened
 *  to double, as the kernels widen them). */
void gs_bccoo_decode_thread(const gs_bccoo_t *L, int64_t c, int t, gs_idx_t *row, gs_idx_t *col,
                            double *val);

/** y = alpha*op(L)*x + beta*y with the kernels' decomposition: per-thread sums of K entries,
 *  per-chunk segment sums written by the first thread of each row, rows shared between chunks
 *  through the carry slots and the fix-up in chunk order (op N); op T scales y by beta, then
 *  adds each entry's product with the thread's factor alpha*x[row] (zero factors skipped).
 *  A float layout (L->fl) computes as the float kernels: alpha, beta, x and y read as floats,
 *  every product, sum and scaling rounded to float (y holds float values on return).
 *  Allocates the carries (GS_ERR_HOST_MEMORY). */
gs_status_t gs_bccoo_apply_host(const gs_bccoo_t *L, gs_op_t op, double alpha, const double *x,
                                double beta, double *y);

/** One line: K, chunks, the encoding histogram, bytes per entry, LUT size, build time. */
void gs_bccoo_describe(const gs_bccoo_t *L, char *buf, size_t len);

/** Bytes of the device layout: blobs, records, LUT, carries (the table and the carries in
 *  doubles, or in floats for a float layout). */
size_t gs_bccoo_device_bytes(const gs_bccoo_t *L);

#ifdef __cplusplus
}
#endif
#endif
