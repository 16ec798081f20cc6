/* spmv/bccoo_build.c: the host side of `bcoo` and `bccoo` (spmv/bccoo.h): the choice of K, the
 * value look-up table, the chunk layout built on several threads, the decoder, and the host
 * emulation of the kernels used as the backends' host apply (Aliaga et al., Euro-Par 2020
 * Workshops, sections 2.1-2.3).
 *
 * The build, on gs_mm_threads() threads (fixed shares, io/mm_par.c):
 *  1. padded row pointers (every row to a multiple of K, an empty row to K), one pass over rows;
 *  2. bccoo only: the look-up table. Each thread counts the values of its share of the entries
 *     in a bounded hash table (runs of equal values counted once; when the table fills, every
 *     count drops by the smallest and the zeros leave: the Misra-Gries frequent-items scheme,
 *     so that every value above 1/2048 of a share survives); the tables are merged. When the
 *     matrix has at most 2048 distinct values the merged counts are exact and the 256 largest
 *     are the table; otherwise the merged candidates are counted again exactly and the table
 *     is the 256 largest of those above 1/2048 of the entries (lut_build says why this makes
 *     the table independent of the thread count). The counts only choose the candidates:
 *     whether a chunk may use the table is decided exactly, by looking every one of its values
 *     up in the final table;
 *  3. per chunk (threads over chunk ranges): its thread rows and entries, the smallest and
 *     largest column, whether it holds padding, whether every value is in the table or is a
 *     float exactly: the encoding and the blob size;
 *  4. blob offsets (a prefix sum over the chunks);
 *  5. per chunk again: the blob written.
 * In mixed precision (opts->mixed) every pass reads A's values rounded to float (rounded()),
 * so the table counts, and the chunks test, the values the kernels will read: values that
 * round alike are one table entry, and a chunk not in the table stores floats. */
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "gpusolve/io.h"
#include "gpusolve/timer.h"
#include "io/mm_internal.h" /* gs_mm_parallel: the project's one way of starting threads */
#include "spmv/bccoo.h"
#include "spmv/formats.h"

#define BK_MAX (BCCOO_THREADS * BCCOO_K_MAX)

static uint64_t dbits(double v)
{
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  return u;
}

static double bits_d(uint64_t u)
{
  double v;
  memcpy(&v, &u, sizeof v);
  return v;
}

static uint32_t hash64(uint64_t k, int bits) { return (uint32_t)((k * 0x9e3779b97f4a7c15ull) >> (64 - bits)); }

/* Whether v survives double -> float -> double bit for bit (infinities do; NaN is kept in
 * double, where its payload is sure to survive; finite values beyond float's range never
 * reach the conversion, whose result C leaves undefined). */
static int f32_exact(double v)
{
  if (isnan(v) || (isfinite(v) && fabs(v) > FLT_MAX)) return 0;
  return dbits((double)(float)v) == dbits(v);
}

/* Value v as the layout stores it: rounded to float in mixed precision (to nearest, as
 * __double2float_rn and gs_fmt_round_values), else itself. */
static inline double rounded(double v, int mixed) { return mixed ? (double)(float)v : v; }

static int64_t padded_len(gs_off_t len, int K) { return len == 0 ? K : (len + K - 1) / K * K; }

int gs_bccoo_choose_k(const gs_csr_t *A, int compressed)
{
  static const int ks[] = {1, 2, 4, 8, 16, 32};
  /* Bytes per entry stored (column + value: 16-bit column and 1-byte index is typical of a
   * compressed chunk, 4 + 8 uncompressed) and per thread (its row offset, plus the segmented
   * scan and the chunk's decode). Larger K wins ties: fewer scans. The per-thread weight for
   * bccoo is measured, not bytes: on an H100 (2026-11, op N, median of 100) K = 8 was the
   * fastest or within 2% of the best K <= 8 on every matrix of 1M+ entries (2D 5-point 2000^2
   * 72.3 us against 122.5 at K = 2, G3_circuit 36.4 against 51.3 at K = 2; normal, Pareto and
   * power-law rows within 4%), and on the 27-point Laplacian, whose rows of 27 pad to 32 for
   * K = 8, 16 and 32 alike, K = 32 (one thread a row) takes 47.6 us against 56.4 at K = 16 and
   * 71.5 at K = 8 (run 99), while the 7-point Laplacian's rows of 7 keep K = 8 (23.9 us against
   * 31.2 and 47.1). 12 bytes' worth per thread gives those picks and keeps short rows (1-3
   * entries) at K = 1, 2 or 4, where K = 8 would store mostly padding. bcoo stays at K <= 8
   * (BCOO_K_MAX): its uncompressed K = 32 thread would hold 96 bytes of columns and values.
   * K = 16 or 32 is taken only where it leaves at least BCCOO_MIN_CHUNKS chunks, else most
   * multiprocessors idle (bcsstk16 at K = 32, 38 chunks: 12.3 us against 10.4 at K = 8); the
   * smaller K, measured before, keep the plain model (a small matrix is launch-bound anyway). */
  const double e = compressed ? 3.0 : 12.0, per_thread = compressed ? 12.0 : 4.0 + 2.0;
  const int nk = compressed ? 6 : 4;
  int best = 0;
  double best_cost = INFINITY;
  for (int i = 0; i < nk; ++i) {
    int64_t p = 0;
    for (gs_idx_t r = 0; r < A->m; ++r) p += padded_len(A->row_ptr[r + 1] - A->row_ptr[r], ks[i]);
    const int64_t chunks = (p + (int64_t)BCCOO_THREADS * ks[i] - 1) / ((int64_t)BCCOO_THREADS * ks[i]);
    if (ks[i] > 8 && chunks < BCCOO_MIN_CHUNKS) break; /* larger K: fewer chunks still */
    const double cost = (double)p * e + (double)(p / ks[i]) * per_thread;
    if (cost <= best_cost) {
      best_cost = cost;
      best = ks[i];
    }
  }
  return best;
}

/* ---- the look-up table -------------------------------------------------------------------- */

#define CNT_BITS 12                 /* 4096 slots per counting table */
#define CNT_SLOTS (1 << CNT_BITS)
#define CNT_KEYS (CNT_SLOTS / 2)    /* at most half full */

typedef struct vcount {
  uint64_t key;
  int64_t n; /* 0: empty slot */
} vcount_t;

typedef struct count_table {
  vcount_t slot[CNT_SLOTS];
  int used;
  int shrunk; /* a count_shrink happened: the counts are lower bounds, values may be missing */
} count_table_t;

static void count_insert(count_table_t *T, uint64_t key, int64_t n);

/* Misra-Gries step: every count drops by the smallest one and the zeros leave. */
static void count_shrink(count_table_t *T)
{
  int64_t least = INT64_MAX;
  for (int i = 0; i < CNT_SLOTS; ++i)
    if (T->slot[i].n > 0 && T->slot[i].n < least) least = T->slot[i].n;
  vcount_t keep[CNT_KEYS];
  int nk = 0;
  for (int i = 0; i < CNT_SLOTS; ++i)
    if (T->slot[i].n > least) keep[nk++] = (vcount_t){T->slot[i].key, T->slot[i].n - least};
  memset(T, 0, sizeof *T);
  T->shrunk = 1;
  for (int i = 0; i < nk; ++i) count_insert(T, keep[i].key, keep[i].n);
}

static void count_insert(count_table_t *T, uint64_t key, int64_t n)
{
  for (;;) {
    uint32_t h = hash64(key, CNT_BITS);
    for (;;) {
      vcount_t *s = &T->slot[h];
      if (s->n == 0) break;
      if (s->key == key) {
        s->n += n;
        return;
      }
      h = (h + 1) & (CNT_SLOTS - 1);
    }
    if (T->used < CNT_KEYS) {
      T->slot[h].key = key;
      T->slot[h].n = n;
      T->used++;
      return;
    }
    count_shrink(T); /* full: make room, then insert again */
  }
}

typedef struct lut_job {
  const gs_csr_t *A;
  int nt;
  count_table_t *tables; /* nt */
  /* the exact recount: the candidates in an open-addressing table of 2^cbits slots */
  int cbits;
  const uint64_t *ckey;  /* slot keys */
  const int32_t *cidx;   /* slot -> candidate index + 1, 0: empty */
  int64_t *ccount;       /* nt * ncand exact counts, thread t's at t * ncand */
  size_t ncand;
  int mixed;             /* count the values rounded to float */
} lut_job_t;

static void lut_count_share(void *arg, int t)
{
  lut_job_t *J = arg;
  const int64_t nnz = J->A->nnz, a = nnz * t / J->nt, b = nnz * (t + 1) / J->nt;
  count_table_t *T = &J->tables[t];
  const double *v = J->A->val;
  const int mx = J->mixed;
  int64_t p = a;
  while (p < b) { /* runs of equal values count once */
    const uint64_t key = dbits(rounded(v[p], mx));
    int64_t q = p + 1;
    while (q < b && dbits(rounded(v[q], mx)) == key) ++q;
    count_insert(T, key, q - p);
    p = q;
  }
}

/* The exact count of every candidate in thread t's share (values not among the candidates are
 * skipped): the same sums for any split. */
static void lut_recount_share(void *arg, int t)
{
  lut_job_t *J = arg;
  const int64_t nnz = J->A->nnz, a = nnz * t / J->nt, b = nnz * (t + 1) / J->nt;
  const uint32_t mask = (1u << J->cbits) - 1;
  int64_t *cnt = J->ccount + (size_t)t * J->ncand;
  const double *v = J->A->val;
  const int mx = J->mixed;
  int64_t p = a;
  while (p < b) {
    const uint64_t key = dbits(rounded(v[p], mx));
    int64_t q = p + 1;
    while (q < b && dbits(rounded(v[q], mx)) == key) ++q;
    for (uint32_t h = hash64(key, J->cbits);; h = (h + 1) & mask) {
      if (J->cidx[h] == 0) break;
      if (J->ckey[h] == key) {
        cnt[J->cidx[h] - 1] += q - p;
        break;
      }
    }
    p = q;
  }
}

static int by_key(const void *a, const void *b)
{
  const vcount_t *x = a, *y = b;
  return x->key < y->key ? -1 : x->key > y->key;
}

static int by_count(const void *a, const void *b)
{
  const vcount_t *x = a, *y = b;
  if (x->n != y->n) return x->n > y->n ? -1 : 1;
  return x->key < y->key ? -1 : x->key > y->key; /* ties: deterministic */
}

/* The exact membership table: LUT_SLOTS slots holding (key, index + 1). */
#define LUT_BITS 10
#define LUT_SLOTS (1 << LUT_BITS)
typedef struct lut_index {
  uint64_t key[LUT_SLOTS];
  int idx[LUT_SLOTS]; /* 0: empty, else index + 1 */
} lut_index_t;

static int lut_find(const lut_index_t *X, uint64_t key)
{
  for (uint32_t h = hash64(key, LUT_BITS);; h = (h + 1) & (LUT_SLOTS - 1)) {
    if (X->idx[h] == 0) return -1;
    if (X->key[h] == key) return X->idx[h] - 1;
  }
}

/* L->lut and X from the values of A: the 256 most frequent values, the same table for any
 * number of threads nt (the layout must not depend on the machine that built it).
 *
 * Let D be the number of distinct values of A. Exact case, D <= CNT_KEYS: no share holds more
 * than CNT_KEYS distinct values, so no thread table ever shrinks; the merged counts are the
 * exact counts of all D values, and the table is the top 256 by (count desc, key asc), a
 * function of A alone. Detection for any split: if no table shrank, the merged set is exactly
 * the D values, so "no shrink and merged distinct <= CNT_KEYS" holds iff D <= CNT_KEYS (a
 * shrink needs > CNT_KEYS distinct values in one share, hence D > CNT_KEYS; without a shrink
 * the merged count is D). The two conditions together are therefore a property of A, not of
 * the split, although each alone is not (3000 distinct values shrink one thread's table but
 * not, spread evenly, three threads' tables).
 *
 * Otherwise, D > CNT_KEYS: the merged counts are lower bounds that depend on the split. The
 * candidates are counted again exactly (a second parallel pass), and only values whose exact
 * count c satisfies c * CNT_KEYS > nnz are eligible; the table is the top 256 of those by
 * (exact count desc, key asc). Every eligible value is a candidate for any split: in a share
 * of n_s entries, each shrink takes `least` from each of the CNT_KEYS stored counts (the table
 * is full), so the sum S of the `least`s over the shrinks is at most n_s / CNT_KEYS; a value
 * loses at most S of its count and leaves the table only when all of it is lost, so a value
 * with c_s > n_s / CNT_KEYS in the share is still there at the end. If c * CNT_KEYS > nnz,
 * some share has c_s * CNT_KEYS > n_s (pigeonhole: otherwise summing over the shares gives
 * c * CNT_KEYS <= nnz). So the eligible set and its exact counts are functions of A alone.
 *
 * The counts only choose the table; chunk membership is decided exactly through X. */
static gs_status_t lut_build(gs_bccoo_t *L, const gs_csr_t *A, int nt, lut_index_t *X)
{
  gs_status_t st = GS_SUCCESS;
  lut_job_t J = {A, nt, calloc((size_t)nt, sizeof(count_table_t)), 0, NULL, NULL, NULL, 0,
                 L->mixed};
  vcount_t *all = NULL;
  uint64_t *ckey = NULL;
  int32_t *cidx = NULL;
  if (!J.tables) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory counting values");
  gs_mm_parallel(nt, lut_count_share, &J);
  all = malloc((size_t)nt * CNT_KEYS * sizeof *all);
  if (!all) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory counting values");
  size_t na = 0;
  int shrunk = 0;
  for (int t = 0; t < nt; ++t) {
    shrunk |= J.tables[t].shrunk;
    for (int i = 0; i < CNT_SLOTS; ++i)
      if (J.tables[t].slot[i].n > 0) all[na++] = J.tables[t].slot[i];
  }
  qsort(all, na, sizeof *all, by_key);
  size_t nu = 0;
  for (size_t i = 0; i < na; ++i) {
    if (nu > 0 && all[nu - 1].key == all[i].key) all[nu - 1].n += all[i].n;
    else all[nu++] = all[i];
  }
  if (shrunk || nu > CNT_KEYS) { /* D > CNT_KEYS: recount the candidates exactly */
    int cbits = 1;
    while (((size_t)1 << cbits) < 2 * nu) ++cbits;
    const size_t ns = (size_t)1 << cbits;
    ckey = malloc(ns * sizeof *ckey);
    cidx = calloc(ns, sizeof *cidx);
    J.ccount = calloc((size_t)nt * nu, sizeof *J.ccount);
    if (!ckey || !cidx || !J.ccount) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory counting values");
    for (size_t i = 0; i < nu; ++i) {
      uint32_t h = hash64(all[i].key, cbits);
      while (cidx[h] != 0) h = (h + 1) & (uint32_t)(ns - 1);
      ckey[h] = all[i].key;
      cidx[h] = (int32_t)i + 1;
    }
    J.cbits = cbits;
    J.ckey = ckey;
    J.cidx = cidx;
    J.ncand = nu;
    gs_mm_parallel(nt, lut_recount_share, &J);
    size_t ne = 0;
    for (size_t i = 0; i < nu; ++i) {
      int64_t c = 0;
      for (int t = 0; t < nt; ++t) c += J.ccount[(size_t)t * nu + i];
      if (c * (int64_t)CNT_KEYS > (int64_t)A->nnz) all[ne++] = (vcount_t){all[i].key, c};
    }
    nu = ne;
  }
  qsort(all, nu, sizeof *all, by_count);
  L->lut_size = nu < BCCOO_LUT_SIZE ? (int)nu : BCCOO_LUT_SIZE;
  memset(X, 0, sizeof *X);
  for (int i = 0; i < L->lut_size; ++i) {
    L->lut[i] = bits_d(all[i].key);
    uint32_t h = hash64(all[i].key, LUT_BITS);
    while (X->idx[h] != 0) h = (h + 1) & (LUT_SLOTS - 1);
    X->key[h] = all[i].key;
    X->idx[h] = i + 1;
  }
cleanup:
  free(J.tables);
  free(J.ccount);
  free(ckey);
  free(cidx);
  free(all);
  return st;
}

/* ---- chunks ------------------------------------------------------------------------------- */

typedef struct build_job {
  gs_bccoo_t *L;
  const gs_csr_t *A;
  const int64_t *prow;   /* padded row pointers, m + 1 */
  const lut_index_t *X;  /* NULL: no table */
  int use_f32;
  int mixed;             /* values rounded to float (rounded()) */
  int nt;
  uint8_t *enc;          /* nchunks */
  size_t *size;          /* nchunks: blob bytes (pass 1) */
  atomic_int failed;     /* a row offset over 8 bits (never: a layout bug) */
} build_job_t;

/* Thread rows and entry sources of chunk c: trow[t], and src[t*K + k] = the CSR position of
 * entry k of thread t, -1 for padding. */
static void chunk_map(const build_job_t *J, int64_t c, gs_idx_t *trow, int64_t *src)
{
  const gs_bccoo_t *L = J->L;
  const int K = L->K, BK = BCCOO_THREADS * K;
  const int64_t pos0 = c * BK, P = J->prow[L->m];
  /* the row holding pos0: the last r with prow[r] <= pos0 (the last row for the tail) */
  gs_idx_t lo = 0, hi = L->m - 1;
  while (lo < hi) {
    const gs_idx_t mid = lo + (hi - lo + 1) / 2;
    if (J->prow[mid] <= pos0) lo = mid;
    else hi = mid - 1;
  }
  gs_idx_t r = lo;
  for (int t = 0; t < BCCOO_THREADS; ++t) {
    const int64_t p = pos0 + (int64_t)t * K;
    if (p < P)
      while (J->prow[r + 1] <= p) ++r;
    trow[t] = r;
    const int64_t len = J->A->row_ptr[r + 1] - J->A->row_ptr[r];
    for (int k = 0; k < K; ++k) {
      const int64_t q = p + k - J->prow[r];
      src[t * K + k] = p < P && q < len ? J->A->row_ptr[r] + q : -1;
    }
  }
}

static void pass_encode(void *arg, int t)
{
  build_job_t *J = arg;
  gs_bccoo_t *L = J->L;
  const int K = L->K, BK = BCCOO_THREADS * K;
  const int64_t c0 = L->nchunks * t / J->nt, c1 = L->nchunks * (t + 1) / J->nt;
  gs_idx_t trow[BCCOO_THREADS];
  int64_t src[BK_MAX];
  for (int64_t c = c0; c < c1; ++c) {
    chunk_map(J, c, trow, src);
    const gs_idx_t r0 = trow[0], r1 = trow[BCCOO_THREADS - 1];
    gs_idx_t lo = -1, hi = -1;
    int all_lut = J->X != NULL, all_f32 = J->use_f32;
    for (int e = 0; e < BK; ++e) {
      if (src[e] < 0) continue;
      const gs_idx_t col = J->A->col[src[e]];
      const double v = rounded(J->A->val[src[e]], J->mixed);
      if (lo < 0 || col < lo) lo = col;
      if (col > hi) hi = col;
      if (all_lut && lut_find(J->X, dbits(v)) < 0) all_lut = 0;
      if (all_f32 && !J->mixed && !f32_exact(v)) all_f32 = 0; /* mixed: floats already */
    }
    if (lo < 0) lo = hi = 0;
    if (r1 - r0 > 255 && L->compressed) atomic_store(&J->failed, 1);
    int enc;
    if (L->compressed) {
      const int64_t span = (int64_t)hi - lo;
      /* the all-ones offset is the padding sentinel: 8 bits hold spans up to 254 */
      const int col = span < 255 ? BCCOO_COL_8 : span < 65535 ? BCCOO_COL_16 : BCCOO_COL_32;
      const int val = all_lut ? BCCOO_VAL_LUT : all_f32 ? BCCOO_VAL_F32 : BCCOO_VAL_F64;
      enc = BCCOO_ENC(r0 == r1 ? BCCOO_ROW_NONE : BCCOO_ROW_8, col, val);
    } else {
      enc = BCCOO_ENC(BCCOO_ROW_32, BCCOO_COL_32, J->mixed ? BCCOO_VAL_F32 : BCCOO_VAL_F64);
      lo = 0; /* absolute columns */
    }
    const int64_t end = (c + 1) * BK;
    if (c > 0 && c * BK > J->prow[r0]) enc |= BCCOO_HEAD_SHARED;
    if (c + 1 < L->nchunks && J->prow[r1 + 1] > end) enc |= BCCOO_TAIL_SHARED;
    J->enc[c] = (uint8_t)enc;
    J->size[c] = bccoo_blob_bytes(enc, K);
    L->chunk[c].row = r0;
    L->chunk[c].col = lo;
  }
}

/* Writes the w low bytes of v, little-endian, as element `byte_i / w` of thread t. */
static void put(uint8_t *sec, int P, int t, int byte_i, uint64_t v, int w)
{
  uint8_t *p = sec + bccoo_pos(P, t, byte_i);
  for (int b = 0; b < w; ++b) p[b] = (uint8_t)(v >> (8 * b));
}

static uint64_t get(const uint8_t *sec, int P, int t, int byte_i, int w)
{
  const uint8_t *p = sec + bccoo_pos(P, t, byte_i);
  uint64_t v = 0;
  for (int b = 0; b < w; ++b) v |= (uint64_t)p[b] << (8 * b);
  return v;
}

static void pass_write(void *arg, int t)
{
  build_job_t *J = arg;
  gs_bccoo_t *L = J->L;
  const int K = L->K;
  const int64_t c0 = L->nchunks * t / J->nt, c1 = L->nchunks * (t + 1) / J->nt;
  gs_idx_t trow[BCCOO_THREADS];
  int64_t src[BK_MAX];
  for (int64_t c = c0; c < c1; ++c) {
    chunk_map(J, c, trow, src);
    const int enc = (int)(L->chunk[c].pe & 0xff);
    const int rw = bccoo_row_width(enc), cw = bccoo_col_width(enc), vw = bccoo_val_width(enc);
    const int vk = BCCOO_ENC_VAL(enc);
    uint8_t *rows = L->blob + (L->chunk[c].pe >> 8);
    uint8_t *cols = rows + bccoo_row_bytes(enc), *vals = cols + bccoo_col_bytes(enc, K);
    const gs_idx_t r0 = L->chunk[c].row, c0col = L->chunk[c].col;
    const uint64_t pad = bccoo_col_pad(cw);
    for (int th = 0; th < BCCOO_THREADS; ++th) {
      if (rw > 0) put(rows, rw, th, 0, (uint64_t)(trow[th] - r0), rw);
      for (int k = 0; k < K; ++k) {
        const int64_t s = src[th * K + k];
        put(cols, K * cw, th, k * cw, s < 0 ? pad : (uint64_t)(J->A->col[s] - c0col), cw);
        const double v = s < 0 ? 0.0 : rounded(J->A->val[s], J->mixed);
        uint64_t bits;
        if (vk == BCCOO_VAL_LUT) {
          bits = s < 0 ? 0u : (uint64_t)lut_find(J->X, dbits(v));
        } else if (vk == BCCOO_VAL_F32) {
          const float f = (float)v;
          uint32_t u;
          memcpy(&u, &f, sizeof u);
          bits = u;
        } else {
          bits = dbits(v);
        }
        put(vals, K * vw, th, k * vw, bits, vw);
      }
    }
  }
}

void gs_bccoo_destroy(gs_bccoo_t **L)
{
  if (!L || !*L) return;
  free((*L)->chunk);
  free((*L)->blob);
  free(*L);
  *L = NULL;
}

gs_status_t gs_bccoo_build(gs_bccoo_t **out, const gs_csr_t *A, const gs_bccoo_opts_t *opts)
{
  gs_status_t st = GS_SUCCESS;
  gs_bccoo_t *L = NULL;
  int64_t *prow = NULL;
  lut_index_t *X = NULL;
  build_job_t J;
  memset(&J, 0, sizeof J);
  atomic_init(&J.failed, 0);
  if (!out || !A || !opts) return GS_ERROR(GS_ERR_INVALID_ARG, "bccoo build: NULL argument");
  *out = NULL;
  const int kmax = opts->compressed ? BCCOO_K_MAX : BCOO_K_MAX;
  if (opts->k < 0 || opts->k > kmax || (opts->k & (opts->k - 1)) != 0)
    return GS_ERROR(GS_ERR_INVALID_ARG, "%s build: K must be 0 or a power of two up to %d, not %d",
                    opts->compressed ? "bccoo" : "bcoo", kmax, opts->k);
  const double t0 = gs_wall_seconds();
  L = calloc(1, sizeof *L);
  if (!L) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory building bccoo");
  L->m = A->m;
  L->n = A->n;
  L->nnz = A->nnz;
  L->compressed = opts->compressed != 0;
  L->mixed = opts->mixed != 0;
  L->K = opts->k ? opts->k : gs_bccoo_choose_k(A, L->compressed);
  L->threads = opts->threads > 0 ? opts->threads : gs_mm_threads();
  const int K = L->K, BK = BCCOO_THREADS * K;

  prow = malloc(((size_t)A->m + 1) * sizeof *prow);
  if (!prow) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory building bccoo");
  prow[0] = 0;
  for (gs_idx_t r = 0; r < A->m; ++r)
    prow[r + 1] = prow[r] + padded_len(A->row_ptr[r + 1] - A->row_ptr[r], K);
  L->nchunks = (prow[A->m] + BK - 1) / BK;
  L->padded = L->nchunks * BK;
  /* few chunks: one thread (starting threads would cost more) */
  int nt = L->threads;
  if (L->nchunks < 64 * (int64_t)nt) nt = 1;
  L->threads = nt;
  if (L->nchunks == 0) goto done;

  if (L->compressed && opts->lut && A->nnz > 0) {
    X = malloc(sizeof *X);
    if (!X) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory building the bccoo table");
    GS_TRY(lut_build(L, A, A->nnz < 65536 ? 1 : nt, X));
  }
  L->chunk = calloc((size_t)L->nchunks, sizeof *L->chunk);
  J.enc = malloc((size_t)L->nchunks);
  J.size = malloc((size_t)L->nchunks * sizeof *J.size);
  if (!L->chunk || !J.enc || !J.size)
    GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory for %lld bccoo chunks",
            (long long)L->nchunks);
  J.L = L;
  J.A = A;
  J.prow = prow;
  J.X = X;
  J.use_f32 = L->compressed && (opts->f32 || L->mixed); /* mixed: every value is a float */
  J.mixed = L->mixed;
  J.nt = nt;
  gs_mm_parallel(nt, pass_encode, &J);
  if (atomic_load(&J.failed)) GS_FAIL(GS_ERR_INTERNAL, "bccoo build: a chunk spans more than 256 rows");
  size_t off = 0;
  int lut_used = 0;
  for (int64_t c = 0; c < L->nchunks; ++c) {
    L->chunk[c].pe = ((uint64_t)off << 8) | J.enc[c];
    off += J.size[c]; /* every size is a multiple of 256: blobs stay 16-byte aligned */
    L->kind_count[BCCOO_ENC_KIND(J.enc[c])]++;
    if (J.enc[c] & BCCOO_TAIL_SHARED) L->carries++;
    if (BCCOO_ENC_VAL(J.enc[c]) == BCCOO_VAL_LUT && L->compressed) lut_used = 1;
  }
  if (!lut_used) L->lut_size = 0;
  L->blob_bytes = off;
  L->blob = malloc(off);
  if (!L->blob) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory for %zu bytes of bccoo blobs", off);
  gs_mm_parallel(nt, pass_write, &J);
done:
  L->build_seconds = gs_wall_seconds() - t0;
  *out = L;
  L = NULL;
cleanup:
  free(prow);
  free(X);
  free(J.enc);
  free(J.size);
  gs_bccoo_destroy(&L);
  return st;
}

/* ---- decoding and the host emulation ------------------------------------------------------ */

void gs_bccoo_decode_thread(const gs_bccoo_t *L, int64_t c, int t, gs_idx_t *row, gs_idx_t *col,
                            double *val)
{
  const int K = L->K, enc = (int)(L->chunk[c].pe & 0xff);
  const int rw = bccoo_row_width(enc), cw = bccoo_col_width(enc), vw = bccoo_val_width(enc);
  const uint8_t *rows = L->blob + (L->chunk[c].pe >> 8);
  const uint8_t *cols = rows + bccoo_row_bytes(enc), *vals = cols + bccoo_col_bytes(enc, K);
  *row = L->chunk[c].row + (rw > 0 ? (gs_idx_t)get(rows, rw, t, 0, rw) : 0);
  for (int k = 0; k < K; ++k) {
    const uint64_t co = get(cols, K * cw, t, k * cw, cw), vb = get(vals, K * vw, t, k * vw, vw);
    col[k] = co == bccoo_col_pad(cw) ? -1 : L->chunk[c].col + (gs_idx_t)co;
    if (vw == 1) {
      val[k] = L->lut[vb];
    } else if (vw == 4) {
      const uint32_t u = (uint32_t)vb;
      float f;
      memcpy(&f, &u, sizeof f);
      val[k] = f;
    } else {
      val[k] = bits_d(vb);
    }
  }
}

static void out_row(double *y, gs_idx_t r, double alpha, double s, double beta)
{
  y[r] = beta == 0.0 ? alpha * s : alpha * s + beta * y[r];
}

gs_status_t gs_bccoo_apply_host(const gs_bccoo_t *L, gs_op_t op, double alpha, const double *x,
                                double beta, double *y)
{
  if (!L || (op != GS_OP_N && op != GS_OP_T))
    return GS_ERROR(GS_ERR_INVALID_ARG, "bccoo host apply: bad argument");
  const gs_idx_t ylen = op == GS_OP_N ? L->m : L->n;
  if ((ylen > 0 && !y) || (L->nchunks > 0 && alpha != 0.0 && !x))
    return GS_ERROR(GS_ERR_INVALID_ARG, "bccoo host apply: NULL vector");
  if (alpha == 0.0 || L->nchunks == 0) { /* BLAS: A and x are not read */
    gs_fmt_scale_host(ylen, beta, y);
    return GS_SUCCESS;
  }
  const int K = L->K;
  gs_idx_t trow[BCCOO_THREADS], col[BCCOO_K_MAX];
  double sum[BCCOO_THREADS], val[BCCOO_K_MAX];
  if (op == GS_OP_T) {
    gs_fmt_scale_host(ylen, beta, y);
    for (int64_t c = 0; c < L->nchunks; ++c)
      for (int t = 0; t < BCCOO_THREADS; ++t) {
        gs_idx_t r;
        gs_bccoo_decode_thread(L, c, t, &r, col, val);
        const double f = alpha * x[r];
        if (f == 0.0) continue; /* a zero factor adds nothing (no 0 * Inf), as the kernel */
        for (int k = 0; k < K; ++k)
          if (col[k] >= 0) y[col[k]] += val[k] * f;
      }
    return GS_SUCCESS;
  }
  double *carry = malloc(2 * (size_t)L->nchunks * sizeof *carry);
  if (!carry) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory emulating bccoo");
  for (int64_t c = 0; c < L->nchunks; ++c) {
    const int enc = (int)(L->chunk[c].pe & 0xff);
    for (int t = 0; t < BCCOO_THREADS; ++t) { /* each thread's K products, in order */
      gs_bccoo_decode_thread(L, c, t, &trow[t], col, val);
      double s = 0.0;
      for (int k = 0; k < K; ++k)
        if (col[k] >= 0) s += val[k] * x[col[k]];
      sum[t] = s;
    }
    /* the segmented sum: one value per run of equal rows, given to the run's first thread */
    for (int t = 0; t < BCCOO_THREADS;) {
      int u = t + 1;
      double s = sum[t];
      while (u < BCCOO_THREADS && trow[u] == trow[t]) s += sum[u++];
      const int first = t == 0, last = u == BCCOO_THREADS;
      if (first && (enc & BCCOO_HEAD_SHARED)) carry[2 * c] = s;
      else if (last && (enc & BCCOO_TAIL_SHARED)) carry[2 * c + 1] = s;
      else out_row(y, trow[t], alpha, s, beta);
      t = u;
    }
  }
  /* the fix-up: the chunk where a shared row begins sums its carries in chunk order */
  for (int64_t c = 0; c + 1 < L->nchunks; ++c) {
    const int enc = (int)(L->chunk[c].pe & 0xff);
    const gs_idx_t R = L->chunk[c + 1].row;
    if (!(enc & BCCOO_TAIL_SHARED) || ((enc & BCCOO_HEAD_SHARED) && L->chunk[c].row == R))
      continue;
    double s = carry[2 * c + 1];
    for (int64_t k = c + 1; k < L->nchunks; ++k) {
      s += carry[2 * k];
      if (!(k + 1 < L->nchunks && L->chunk[k + 1].row == R)) break;
    }
    out_row(y, R, alpha, s, beta);
  }
  free(carry);
  return GS_SUCCESS;
}

size_t gs_bccoo_device_bytes(const gs_bccoo_t *L)
{
  return L->blob_bytes + (size_t)L->nchunks * (sizeof(gs_bccoo_chunk_t) + 2 * sizeof(double)) +
         (L->lut_size > 0 ? BCCOO_LUT_SIZE * sizeof(double) : 0);
}

void gs_bccoo_describe(const gs_bccoo_t *L, char *buf, size_t len)
{
  static const char *const rn[] = {"r0", "r8", "r32"}, *const cn[] = {"c8", "c16", "c32"},
                           *const vn[] = {"lut", "f32", "f64"};
  const double per = L->nnz > 0 ? (double)(L->blob_bytes + (size_t)L->nchunks *
                                           sizeof(gs_bccoo_chunk_t)) / (double)L->nnz
                                : 0.0;
  int w = snprintf(buf, len, "K=%d, %lld chunks (%.1f%% padding), %.2f bytes/entry, LUT %d, "
                   "built in %.1f ms on %d threads; chunks:",
                   L->K, (long long)L->nchunks,
                   L->padded > 0 ? 100.0 * (double)(L->padded - L->nnz) / (double)L->padded : 0.0,
                   per, L->lut_size, L->build_seconds * 1e3, L->threads);
  for (int e = 0; e < 64 && w >= 0 && (size_t)w < len; ++e) {
    if (L->kind_count[e] == 0) continue;
    w += snprintf(buf + w, len - (size_t)w, " %s/%s/%s %lld", rn[BCCOO_ENC_ROW(e) % 3],
                  cn[BCCOO_ENC_COL(e) % 3], vn[BCCOO_ENC_VAL(e) % 3], (long long)L->kind_count[e]);
  }
}
