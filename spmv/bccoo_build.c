/* spmv/bccoo_build.c: the host side of `bcoo` and `bccoo` (spmv/bccoo.h): the choice of K, the
 * value look-up table, the chunk layout built on several threads, the decoder, and the host
 * emulation of the kernels used as the backends' host apply (Aliaga et al., Euro-Par 2020
 * Workshops, sections 2.1-2.3).
 *
 * The build, on gs_mm_threads() threads (fixed shares, io/mm_par.c):
 *  1. padded row pointers (every row to a multiple of K, an empty row to K), one pass over rows;
 *  2. bccoo only: the look-up table. Each thread counts the values of its share of the entries
 *     in a bounded hash table (runs of equal values counted once; when the table fills, every
 *     count drops by the median and the zeros leave: the Misra-Gries frequent-items scheme,
 *     so that every value above 1/2048 of a share survives); the tables are merged. When the
 *     matrix has at most 2048 distinct values the merged counts are exact and the 256 largest
 *     are the table; otherwise the merged candidates are counted again exactly and the table
 *     is the 256 largest of those above 1/2048 of the entries (lut_build says why this makes
 *     the table independent of the thread count, and which candidates it may skip). The
 *     counts only choose the candidates: whether a chunk may use the table is decided exactly,
 *     by looking every one of its values up in the final table;
 *  3. per chunk (threads over chunk ranges): its first and last row and its entries (one range
 *     of A, scanned in place), the smallest and largest column, whether it holds padding,
 *     whether every value is in the table or is a float exactly: the encoding and the blob
 *     size;
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
#include "core/parallel.h" /* gs_parallel: the project's one way of starting threads */
#include "spmv/bccoo.h"
#include "spmv/formats.h"

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

gs_status_t gs_bccoo_check_opts(const gs_bccoo_opts_t *opts)
{
  const int kmax = opts->compressed ? BCCOO_K_MAX : BCOO_K_MAX;
  if (opts->k < 0 || opts->k > kmax || (opts->k & (opts->k - 1)) != 0)
    return GS_ERROR(GS_ERR_INVALID_ARG, "%s build: K must be 0 or a power of two up to %d, not %d",
                    opts->compressed ? "bccoo" : "bcoo", kmax, opts->k);
  if (opts->mixed < 0 || opts->mixed > 2)
    return GS_ERROR(GS_ERR_INVALID_ARG, "bccoo build: mixed must be 0, 1 or 2, not %d",
                    opts->mixed);
  return GS_SUCCESS;
}

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
  int64_t pad[6] = {0}; /* the padded entries for each K, in one pass over the rows */
  for (gs_idx_t r = 0; r < A->m; ++r) {
    const gs_off_t len = A->row_ptr[r + 1] - A->row_ptr[r];
    for (int i = 0; i < 6; ++i) pad[i] += padded_len(len, ks[i]);
  }
  return gs_bccoo_choose_k_padded(pad, compressed);
}

int gs_bccoo_choose_k_padded(const int64_t pad[6], int compressed)
{
  static const int ks[] = {1, 2, 4, 8, 16, 32};
  const double e = compressed ? 3.0 : 12.0, per_thread = compressed ? 12.0 : 4.0 + 2.0;
  const int nk = compressed ? 6 : 4;
  int best = 0;
  double best_cost = INFINITY;
  for (int i = 0; i < nk; ++i) {
    const int64_t p = pad[i];
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

#define CNT_KEYS 2048             /* eligibility: a count above nnz / CNT_KEYS (lut_build) */
#define CNT_CAP (2 * CNT_KEYS)    /* keys per counting table, */
#define CNT_BITS 13               /* in 8192 slots: at most half full */
#define CNT_SLOTS (1 << CNT_BITS)

typedef struct vcount {
  uint64_t key;
  int64_t n;
} vcount_t;

/* The keys and counts lie densely in ent, found through an open-addressing index of slots: a
 * shrink scans and compacts the used entries and clears the 16 KiB index, not every slot. */
typedef struct count_table {
  uint16_t idx[CNT_SLOTS]; /* 0: empty slot, else 1 + the key's entry */
  vcount_t ent[CNT_CAP];   /* used */
  int used;
  int64_t lost; /* the sum of the shrinks' decrements: a value's count in the share exceeds its
                   count here (0 when absent) by at most this; 0: the counts are exact */
  int64_t rank[CNT_CAP];   /* count_shrink's scratch */
} count_table_t;

static void count_clear(count_table_t *T)
{
  memset(T->idx, 0, sizeof T->idx);
  T->used = 0;
}

/* The slot of key, or the empty slot where it goes. */
static uint32_t count_slot(const count_table_t *T, uint64_t key)
{
  uint32_t h = hash64(key, CNT_BITS);
  while (T->idx[h] != 0 && T->ent[T->idx[h] - 1].key != key) h = (h + 1) & (CNT_SLOTS - 1);
  return h;
}

/* The k-th smallest of a[0..n) (from 0), a reordered: Hoare's selection. */
static int64_t select_kth(int64_t *a, int n, int k)
{
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    const int64_t pivot = a[lo + (hi - lo) / 2];
    int i = lo, j = hi;
    while (i <= j) {
      while (a[i] < pivot) ++i;
      while (a[j] > pivot) --j;
      if (i <= j) {
        const int64_t x = a[i];
        a[i++] = a[j];
        a[j--] = x;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return a[k];
  }
  return a[k];
}

/* Misra-Gries step on a full table (CNT_CAP = 2 * CNT_KEYS keys): every count drops by d, the
 * CNT_KEYS-th smallest, and the zeros leave. At least CNT_KEYS + 1 counts are >= d, so a shrink
 * removes at least d * CNT_KEYS of the share's entries, and the decrements of a share of n_s
 * entries sum to at most n_s / CNT_KEYS: the bound lut_build relies on. Dropping the median
 * rather than the smallest count frees half the table each time, where many values counted
 * twice or more (a symmetric matrix's pairs) left the smallest-count step shrinking every few
 * hundred values. */
static void count_shrink(count_table_t *T)
{
  const int n = T->used;
  for (int i = 0; i < n; ++i) T->rank[i] = T->ent[i].n;
  const int64_t d = select_kth(T->rank, n, n / 2 - 1);
  int nk = 0;
  for (int i = 0; i < n; ++i)
    if (T->ent[i].n > d) T->ent[nk++] = (vcount_t){T->ent[i].key, T->ent[i].n - d};
  count_clear(T);
  T->lost += d;
  for (T->used = 0; T->used < nk; ++T->used)
    T->idx[count_slot(T, T->ent[T->used].key)] = (uint16_t)(T->used + 1);
}

static void count_insert(count_table_t *T, uint64_t key, int64_t n)
{
  for (;;) {
    const uint32_t h = count_slot(T, key);
    if (T->idx[h] != 0) {
      T->ent[T->idx[h] - 1].n += n;
      return;
    }
    if (T->used < CNT_CAP) {
      T->ent[T->used++] = (vcount_t){key, n};
      T->idx[h] = (uint16_t)T->used;
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
  const vcount_t *cand;  /* ncand: the candidates by index */
} lut_job_t;

#define RECOUNT_SCAN 8 /* up to this many candidates, each value is compared with all of them */

static void lut_count_share(void *arg, int t)
{
  lut_job_t *J = arg;
  const int64_t nnz = J->A->nnz, a = nnz * t / J->nt, b = nnz * (t + 1) / J->nt;
  count_table_t *T = &J->tables[t];
  count_clear(T); /* here: the thread that uses the table touches it first */
  T->lost = 0;
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
  if (J->ncand <= RECOUNT_SCAN) { /* the usual case after the pruning: no branch per value */
    for (int64_t p = a; p < b; ++p) {
      const uint64_t key = dbits(rounded(v[p], mx));
      for (size_t i = 0; i < J->ncand; ++i) cnt[i] += key == J->cand[i].key;
    }
    return;
  }
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
 * than CNT_KEYS distinct values, so no thread table (CNT_CAP keys) ever shrinks; the merged
 * counts are the
 * exact counts of all D values, and the table is the top 256 by (count desc, key asc), a
 * function of A alone. Detection for any split: if no table shrank, the merged set is exactly
 * the D values, so "no shrink and merged distinct <= CNT_KEYS" holds iff D <= CNT_KEYS (a
 * shrink needs > CNT_CAP distinct values in one share, hence D > CNT_KEYS; without a shrink
 * the merged count is D). The two conditions together are therefore a property of A, not of
 * the split, although each alone is not (5000 distinct values shrink one thread's table but
 * not, spread evenly, three threads' tables).
 *
 * Otherwise, D > CNT_KEYS: after a shrink the merged counts are lower bounds that depend on the
 * split. The candidates are counted again exactly (a second parallel pass), and only values
 * whose exact count c satisfies c * CNT_KEYS > nnz are eligible; the table is the top 256 of
 * those by (exact count desc, key asc). Every eligible value is a candidate for any split: in a share
 * of n_s entries, each shrink lowers the stored counts by d and removes at least d * CNT_KEYS
 * entries' worth (count_shrink), so the sum S of the d's is at most n_s / CNT_KEYS; a value
 * loses at most S of its count and leaves the table only when all of it is lost, so a value
 * with c_s > n_s / CNT_KEYS in the share is still there at the end. If c * CNT_KEYS > nnz,
 * some share has c_s * CNT_KEYS > n_s (pigeonhole: otherwise summing over the shares gives
 * c * CNT_KEYS <= nnz). So the eligible set and its exact counts are functions of A alone.
 *
 * Only the eligible values matter there, so the recount skips the candidates that cannot be
 * eligible: a value's count in share t is at most its count in t's table (0 when absent) plus
 * the table's loss bound (count_table_t.lost, the S above), so a candidate whose merged count
 * plus the sum of the bounds is at most nnz / CNT_KEYS is not eligible. On matrices of mostly
 * distinct values this leaves a handful of the ~CNT_KEYS candidates, and the recount's look-ups
 * mostly miss at the first slot. Without any shrink (bound 0) the merged counts are exact and
 * no recount is needed.
 *
 * The counts only choose the table; chunk membership is decided exactly through X. */
static void heap_down(vcount_t *h, size_t n, size_t i)
{
  for (;;) { /* by_count order: the root is the last of the heap's values */
    size_t w = i;
    const size_t l = 2 * i + 1, r = l + 1;
    if (l < n && by_count(&h[l], &h[w]) > 0) w = l;
    if (r < n && by_count(&h[r], &h[w]) > 0) w = r;
    if (w == i) return;
    const vcount_t x = h[i];
    h[i] = h[w];
    h[w] = x;
    i = w;
  }
}

/* The first k of a[0..n) in by_count order moved to a[0..k) and sorted: a heap of the best k
 * seen so far instead of a sort of all n (n is up to nt * CNT_CAP). Returns min(n, k). */
static size_t top_by_count(vcount_t *a, size_t n, size_t k)
{
  if (n > k) {
    for (size_t i = k / 2; i-- > 0;) heap_down(a, k, i);
    for (size_t i = k; i < n; ++i)
      if (by_count(&a[i], &a[0]) < 0) {
        a[0] = a[i];
        heap_down(a, k, 0);
      }
    n = k;
  }
  qsort(a, n, sizeof *a, by_count);
  return n;
}

static gs_status_t lut_build(gs_bccoo_t *L, const gs_csr_t *A, int nt, lut_index_t *X)
{
  gs_status_t st = GS_SUCCESS;
  lut_job_t J = {A, nt, malloc((size_t)nt * sizeof(count_table_t)), 0, NULL, NULL, NULL, 0,
                 L->mixed, NULL};
  vcount_t *all = NULL;
  uint64_t *ckey = NULL;
  int32_t *cidx = NULL;
  if (!J.tables) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory counting values");
  gs_parallel(nt, lut_count_share, &J);
  all = malloc((size_t)nt * CNT_CAP * sizeof *all);
  if (!all) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory counting values");
  size_t na = 0;
  int64_t bound = 0; /* the sum of the tables' loss bounds */
  for (int t = 0; t < nt; ++t) {
    bound += J.tables[t].lost;
    memcpy(all + na, J.tables[t].ent, (size_t)J.tables[t].used * sizeof *all);
    na += (size_t)J.tables[t].used;
  }
  size_t nu = na; /* one table's keys are distinct: only several need merging */
  if (nt > 1) {
    qsort(all, na, sizeof *all, by_key);
    nu = 0;
    for (size_t i = 0; i < na; ++i) {
      if (nu > 0 && all[nu - 1].key == all[i].key) all[nu - 1].n += all[i].n;
      else all[nu++] = all[i];
    }
  }
  if (bound > 0 || nu > CNT_KEYS) { /* D > CNT_KEYS: only the eligible values, counted exactly */
    size_t ne = 0;
    for (size_t i = 0; i < nu; ++i)
      if ((all[i].n + bound) * (int64_t)CNT_KEYS > (int64_t)A->nnz) all[ne++] = all[i];
    nu = ne;
  }
  if (bound > 0 && nu > 0) { /* the counts are lower bounds: count the candidates again */
    int cbits = 1;
    while (((size_t)1 << cbits) < 4 * nu) ++cbits; /* at most a quarter full: misses are short */
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
    J.cand = all;
    gs_parallel(nt, lut_recount_share, &J);
    size_t ne = 0;
    for (size_t i = 0; i < nu; ++i) {
      int64_t c = 0;
      for (int t = 0; t < nt; ++t) c += J.ccount[(size_t)t * nu + i];
      if (c * (int64_t)CNT_KEYS > (int64_t)A->nnz) all[ne++] = (vcount_t){all[i].key, c};
    }
    nu = ne;
  }
  L->lut_size = (int)top_by_count(all, nu, BCCOO_LUT_SIZE);
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

/* The row holding padded position pos: the last r with prow[r] <= pos (the last row for the
 * tail chunk's padding threads, which lie past prow[m]). */
static gs_idx_t row_of(const build_job_t *J, int64_t pos)
{
  gs_idx_t lo = 0, hi = J->L->m - 1;
  while (lo < hi) {
    const gs_idx_t mid = lo + (hi - lo + 1) / 2;
    if (J->prow[mid] <= pos) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/* row_of(p) searched from row r <= row_of(p) on (a chunk's thread rows only grow). */
static gs_idx_t row_from(const build_job_t *J, gs_idx_t r, int64_t p)
{
  const int64_t last = J->prow[J->L->m] - 1;
  if (p > last) p = last; /* the tail's padding threads: the last row */
  while (J->prow[r + 1] <= p) ++r;
  return r;
}

/* Entries of row r before padded position p, the row's padding not counted. */
static int64_t row_entries_before(const build_job_t *J, gs_idx_t r, int64_t p)
{
  const int64_t len = J->A->row_ptr[r + 1] - J->A->row_ptr[r], q = p - J->prow[r];
  return q < len ? q : len;
}

/* Whether every value of A's entries [a, b) is in the table (runs of equal values looked up
 * once). */
static int values_in_lut(const build_job_t *J, int64_t a, int64_t b)
{
  const double *v = J->A->val;
  uint64_t prev = 0;
  for (int64_t s = a; s < b; ++s) {
    const uint64_t key = dbits(rounded(v[s], J->mixed));
    if ((s == a || key != prev) && lut_find(J->X, key) < 0) return 0;
    prev = key;
  }
  return 1;
}

static int values_f32(const double *v, int64_t a, int64_t b)
{
  for (int64_t s = a; s < b; ++s)
    if (!f32_exact(v[s])) return 0;
  return 1;
}

/* Chunk c's entries are one range of A: the padded positions [c*B*K, (c+1)*B*K) hold, in order,
 * the end of row r0 from its entry pos0 - prow[r0] on, the whole rows between, and the start of
 * row r1 up to the chunk's end, each followed by its padding. So its columns and values are
 * scanned in place, without mapping its B*K padded entries first. */
static void pass_encode(void *arg, int t)
{
  build_job_t *J = arg;
  gs_bccoo_t *L = J->L;
  const int K = L->K, BK = BCCOO_THREADS * K;
  const int64_t c0 = L->nchunks * t / J->nt, c1 = L->nchunks * (t + 1) / J->nt;
  const gs_off_t *rp = J->A->row_ptr;
  const gs_idx_t *colv = J->A->col;
  gs_idx_t r0 = c0 < c1 ? row_of(J, c0 * BK) : 0;
  for (int64_t c = c0; c < c1; ++c) {
    const int64_t pos0 = c * BK, end = pos0 + BK;
    r0 = row_from(J, r0, pos0);
    const gs_idx_t r1 = row_from(J, r0, end - K); /* the row of thread B - 1 */
    const int64_t a = rp[r0] + row_entries_before(J, r0, pos0);
    const int64_t b = rp[r1] + row_entries_before(J, r1, end);
    gs_idx_t lo = 0, hi = 0;
    if (a < b) lo = hi = colv[a];
    for (int64_t s = a + 1; s < b; ++s) {
      lo = colv[s] < lo ? colv[s] : lo;
      hi = colv[s] > hi ? colv[s] : hi;
    }
    if (r1 - r0 > 255 && L->compressed) atomic_store(&J->failed, 1);
    int enc;
    if (L->compressed) {
      const int64_t span = (int64_t)hi - lo;
      /* the all-ones offset is the padding sentinel: 8 bits hold spans up to 254 */
      const int col = span < 255 ? BCCOO_COL_8 : span < 65535 ? BCCOO_COL_16 : BCCOO_COL_32;
      /* mixed: the values are floats already */
      const int val = J->X && values_in_lut(J, a, b)                            ? BCCOO_VAL_LUT
                      : J->use_f32 && (J->mixed || values_f32(J->A->val, a, b)) ? BCCOO_VAL_F32
                                                                                : BCCOO_VAL_F64;
      enc = BCCOO_ENC(r0 == r1 ? BCCOO_ROW_NONE : BCCOO_ROW_8, col, val);
    } else {
      enc = BCCOO_ENC(BCCOO_ROW_32, BCCOO_COL_32, J->mixed ? BCCOO_VAL_F32 : BCCOO_VAL_F64);
      lo = 0; /* absolute columns */
    }
    if (c > 0 && pos0 > J->prow[r0]) enc |= BCCOO_HEAD_SHARED;
    if (c + 1 < L->nchunks && J->prow[r1 + 1] > end) enc |= BCCOO_TAIL_SHARED;
    J->enc[c] = (uint8_t)enc;
    J->size[c] = bccoo_blob_bytes(enc, K);
    L->chunk[c].row = r0;
    L->chunk[c].col = lo;
  }
}

static inline void put_bytes(uint8_t *p, uint64_t v, int w)
{
  for (int b = 0; b < w; ++b) p[b] = (uint8_t)(v >> (8 * b));
}

static inline void put_all(uint8_t *p, const size_t *off, const uint64_t *v, int n, int w)
{
  for (int k = 0; k < n; ++k) put_bytes(p + off[k], v[k], w);
}

/* Writes the w low bytes of v[k], little-endian, at p + off[k] for k < n: one loop per width
 * (w = 1, 2, 4 or 8), where the compiler merges each element's constant-width byte stores. */
static void put_le(uint8_t *p, const size_t *off, const uint64_t *v, int n, int w)
{
  switch (w) {
  case 1: put_all(p, off, v, n, 1); break;
  case 2: put_all(p, off, v, n, 2); break;
  case 4: put_all(p, off, v, n, 4); break;
  default: put_all(p, off, v, n, 8); break;
  }
}

static uint64_t get(const uint8_t *sec, int P, int t, int byte_i, int w)
{
  const uint8_t *p = sec + bccoo_pos(P, t, byte_i);
  uint64_t v = 0;
  for (int b = 0; b < w; ++b) v |= (uint64_t)p[b] << (8 * b);
  return v;
}

/* The last table look-up of a pass (runs of equal values are looked up once). */
typedef struct lut_memo {
  uint64_t key;
  int idx;
} lut_memo_t;

/* bits[k] = what a chunk of value kind vk stores for entry s + k of A, k < n. */
static void value_bits(const build_job_t *J, int64_t s, int n, int vk, lut_memo_t *memo,
                       uint64_t *bits)
{
  const double *val = J->A->val + s;
  for (int k = 0; k < n; ++k) {
    const double v = rounded(val[k], J->mixed);
    if (vk == BCCOO_VAL_LUT) {
      const uint64_t key = dbits(v);
      if (key != memo->key) *memo = (lut_memo_t){key, lut_find(J->X, key)};
      bits[k] = (uint64_t)memo->idx;
    } else if (vk == BCCOO_VAL_F32) {
      const float f = (float)v;
      uint32_t u;
      memcpy(&u, &f, sizeof u);
      bits[k] = u;
    } else {
      bits[k] = dbits(v);
    }
  }
}

static void pass_write(void *arg, int t)
{
  build_job_t *J = arg;
  gs_bccoo_t *L = J->L;
  const int K = L->K;
  const int64_t c0 = L->nchunks * t / J->nt, c1 = L->nchunks * (t + 1) / J->nt;
  const gs_off_t *rp = J->A->row_ptr;
  const gs_idx_t *colv = J->A->col;
  size_t coff[BCCOO_K_MAX], voff[BCCOO_K_MAX];
  uint64_t cbits[BCCOO_K_MAX], vbits[BCCOO_K_MAX], rbits; /* one thread's, staged */
  lut_memo_t memo = {dbits(L->lut[0]), J->X ? lut_find(J->X, dbits(L->lut[0])) : -1};
  for (int64_t c = c0; c < c1; ++c) {
    const int enc = (int)(L->chunk[c].pe & 0xff);
    const int rw = bccoo_row_width(enc), cw = bccoo_col_width(enc), vw = bccoo_val_width(enc);
    const int vk = BCCOO_ENC_VAL(enc);
    uint8_t *rows = L->blob + (L->chunk[c].pe >> 8);
    uint8_t *cols = rows + bccoo_row_bytes(enc), *vals = cols + bccoo_col_bytes(enc, K);
    const gs_idx_t r0 = L->chunk[c].row, c0col = L->chunk[c].col;
    const uint64_t pad = bccoo_col_pad(cw);
    /* entry k of thread th lies at bccoo_pos(K * w, th, k * w) = th * W + that of thread 0 */
    for (int k = 0; k < K; ++k) {
      coff[k] = bccoo_pos(K * cw, 0, k * cw);
      voff[k] = bccoo_pos(K * vw, 0, k * vw);
    }
    const size_t cstep = bccoo_pos(K * cw, 1, 0), vstep = bccoo_pos(K * vw, 1, 0);
    gs_idx_t r = r0;
    for (int th = 0; th < BCCOO_THREADS; ++th) {
      const int64_t p = c * BCCOO_THREADS * K + (int64_t)th * K;
      r = row_from(J, r, p);
      rbits = (uint64_t)(r - r0);
      if (rw > 0) put_le(rows + bccoo_pos(rw, th, 0), coff, &rbits, 1, rw); /* coff[0] = 0 */
      const int64_t q = row_entries_before(J, r, p), s0 = rp[r] + q;
      const int nreal = (int)(row_entries_before(J, r, p + K) - q);
      for (int k = 0; k < nreal; ++k) cbits[k] = (uint64_t)(colv[s0 + k] - c0col);
      value_bits(J, s0, nreal, vk, &memo, vbits);
      for (int k = nreal; k < K; ++k) { /* padding: the sentinel column, value bits 0 */
        cbits[k] = pad;
        vbits[k] = 0;
      }
      put_le(cols + (size_t)th * cstep, coff, cbits, K, cw);
      put_le(vals + (size_t)th * vstep, voff, vbits, K, vw);
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
  GS_CHECK(gs_bccoo_check_opts(opts));
  const double t0 = gs_wall_seconds();
  L = calloc(1, sizeof *L);
  if (!L) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory building bccoo");
  L->m = A->m;
  L->n = A->n;
  L->nnz = A->nnz;
  L->compressed = opts->compressed != 0;
  L->mixed = opts->mixed != 0; /* float (2) has the values of mixed */
  L->fl = opts->mixed == 2;
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
  gs_parallel(nt, pass_encode, &J);
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
  gs_parallel(nt, pass_write, &J);
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

/* v rounded to float when fl (a float layout), else v itself. The emulation's float
 * arithmetic: on float operands a double product is exact and a double sum rounds once more
 * finely, so rounding each double result to float gives the float result of the operation. */
static inline double to_prec(double v, int fl) { return fl ? (double)(float)v : v; }

static void out_row(double *y, gs_idx_t r, double alpha, double s, double beta, int fl)
{
  y[r] = beta == 0.0 ? to_prec(alpha * s, fl)
                     : to_prec(to_prec(alpha * s, fl) + to_prec(beta * y[r], fl), fl);
}

gs_status_t gs_bccoo_apply_host(const gs_bccoo_t *L, gs_op_t op, double alpha, const double *x,
                                double beta, double *y)
{
  if (!L || (op != GS_OP_N && op != GS_OP_T))
    return GS_ERROR(GS_ERR_INVALID_ARG, "bccoo host apply: bad argument");
  const gs_idx_t ylen = op == GS_OP_N ? L->m : L->n;
  if ((ylen > 0 && !y) || (L->nchunks > 0 && alpha != 0.0 && !x))
    return GS_ERROR(GS_ERR_INVALID_ARG, "bccoo host apply: NULL vector");
  const int fl = L->fl;
#define FR(v) to_prec((v), fl)
  alpha = FR(alpha); /* float: the float product's scalars and y */
  beta = FR(beta);
  if (fl)
    for (gs_idx_t i = 0; i < ylen; ++i) y[i] = FR(y[i]);
  if (alpha == 0.0 || L->nchunks == 0) { /* BLAS: A and x are not read */
    gs_fmt_scale_host(ylen, beta, y);
    if (fl)
      for (gs_idx_t i = 0; i < ylen; ++i) y[i] = FR(y[i]);
    return GS_SUCCESS;
  }
  const int K = L->K;
  gs_idx_t trow[BCCOO_THREADS], col[BCCOO_K_MAX];
  double sum[BCCOO_THREADS], val[BCCOO_K_MAX];
  if (op == GS_OP_T) {
    gs_fmt_scale_host(ylen, beta, y);
    if (fl)
      for (gs_idx_t i = 0; i < ylen; ++i) y[i] = FR(y[i]);
    for (int64_t c = 0; c < L->nchunks; ++c)
      for (int t = 0; t < BCCOO_THREADS; ++t) {
        gs_idx_t r;
        gs_bccoo_decode_thread(L, c, t, &r, col, val);
        const double f = FR(alpha * FR(x[r]));
        if (f == 0.0) continue; /* a zero factor adds nothing (no 0 * Inf), as the kernel */
        for (int k = 0; k < K; ++k)
          if (col[k] >= 0) y[col[k]] = FR(y[col[k]] + FR(val[k] * f));
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
        if (col[k] >= 0) s = FR(s + FR(val[k] * FR(x[col[k]])));
      sum[t] = s;
    }
    /* the segmented sum: one value per run of equal rows, given to the run's first thread */
    for (int t = 0; t < BCCOO_THREADS;) {
      int u = t + 1;
      double s = sum[t];
      while (u < BCCOO_THREADS && trow[u] == trow[t]) s = FR(s + sum[u++]);
      const int first = t == 0, last = u == BCCOO_THREADS;
      if (first && (enc & BCCOO_HEAD_SHARED)) carry[2 * c] = s;
      else if (last && (enc & BCCOO_TAIL_SHARED)) carry[2 * c + 1] = s;
      else out_row(y, trow[t], alpha, s, beta, fl);
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
      s = FR(s + carry[2 * k]);
      if (!(k + 1 < L->nchunks && L->chunk[k + 1].row == R)) break;
    }
    out_row(y, R, alpha, s, beta, fl);
  }
#undef FR
  free(carry);
  return GS_SUCCESS;
}

size_t gs_bccoo_device_bytes(const gs_bccoo_t *L)
{
  const size_t v = L->fl ? sizeof(float) : sizeof(double); /* the table's and carries' type */
  return L->blob_bytes + (size_t)L->nchunks * (sizeof(gs_bccoo_chunk_t) + 2 * v) +
         (L->lut_size > 0 ? BCCOO_LUT_SIZE * v : 0);
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
