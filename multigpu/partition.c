/* multigpu/partition.c: host side of the distributed matrix (interface and model in
 * multigpu/partition.h): work-balanced row blocks, the diag/off split of one block with its halo,
 * the halo exchange lists (reverse Cuthill-McKee is core/order.c). Pure C11, no CUDA.
 *
 * Costs, for matrices of ~10^8 entries: partition O(m + nparts log m); split of one part
 * O(its entries + its rows + span/64), span the range of its halo columns (a bitmap over that
 * range, with a rank per 64-bit word, renumbers the halo: 3 bits of scratch per column of the
 * span, no sort); send lists O(total halo + nparts^2); RCM O(nnz) to build the graph of A + A^T
 * plus O(nnz) per level structure and O(d log d) per vertex of degree d; permute O(nnz) plus the
 * sort of each row that the renumbering leaves out of order. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/parallel.h"
#include "multigpu/partition.h"

/* ---- bits ------------------------------------------------------------------------------------ */

static inline int popcount64(uint64_t x)
{
#if defined(__GNUC__)
  return __builtin_popcountll(x);
#else
  x = x - ((x >> 1) & 0x5555555555555555ull);
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
  return (int)((x * 0x0101010101010101ull) >> 56);
#endif
}

/* Index of the lowest set bit of x != 0. */
static inline int ctz64(uint64_t x)
{
#if defined(__GNUC__)
  return __builtin_ctzll(x);
#else
  return popcount64((x & (~x + 1)) - 1);
#endif
}

/* ---- shared checks --------------------------------------------------------------------------- */

/* first[0] = 0, first[nparts] = m, strictly increasing. */
static gs_status_t check_partition(const gs_idx_t *first, int nparts, gs_idx_t m, const char *fn)
{
  if (first[0] != 0)
    return GS_ERROR(GS_ERR_DIMENSION, "%s: partition starts at row %d, not 0", fn, first[0]);
  if (first[nparts] != m)
    return GS_ERROR(GS_ERR_DIMENSION, "%s: partition ends at row %d, but the matrix has %d rows",
                    fn, first[nparts], m);
  for (int k = 0; k < nparts; ++k)
    if (first[k + 1] <= first[k])
      return GS_ERROR(GS_ERR_DIMENSION,
                      "%s: partition not increasing: part %d is rows [%d, %d) (every part needs "
                      "at least one row)", fn, k, first[k], first[k + 1]);
  return GS_SUCCESS;
}

/* ---- row blocks ------------------------------------------------------------------------------ */

gs_status_t gs_dist_partition_rows(const gs_off_t *row_ptr, gs_idx_t m, int nparts,
                                   gs_idx_t *first)
{
  if (!row_ptr || !first)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_dist_partition_rows: NULL argument");
  if (nparts < 1)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_dist_partition_rows: nparts must be >= 1, not %d",
                    nparts);
  if (m < 0)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_dist_partition_rows: negative row count %d", m);
  if (m < nparts)
    return GS_ERROR(GS_ERR_DIMENSION,
                    "gs_dist_partition_rows: %d rows cannot make %d parts of at least one row",
                    m, nparts);
  for (gs_idx_t i = 0; i < m; ++i)
    if (row_ptr[i + 1] < row_ptr[i])
      return GS_ERROR(GS_ERR_INVALID_ARG, "gs_dist_partition_rows: row_ptr decreases at row %d",
                      i);

  /* W(e) = work of rows [0, e) = entries + rows, strictly increasing in e. first[k] is the least
   * e with W(e) >= k/nparts of the total, kept inside [first[k-1] + 1, m - (nparts - k)] so that
   * every part keeps a row. The target ceil(k T / nparts) = k q + ceil(k r / nparts) for
   * T = q nparts + r, without the overflow of k T. */
  const gs_off_t base = row_ptr[0];
  const gs_off_t total = row_ptr[m] - base + m;
  const gs_off_t q = total / nparts, r = total % nparts;
  first[0] = 0;
  for (int k = 1; k < nparts; ++k) {
    const gs_off_t target = (gs_off_t)k * q + ((gs_off_t)k * r + nparts - 1) / nparts;
    gs_idx_t lo = first[k - 1] + 1, hi = m - (nparts - k);
    while (lo < hi) {
      gs_idx_t mid = lo + (hi - lo) / 2;
      if (row_ptr[mid] - base + mid >= target)
        hi = mid;
      else
        lo = mid + 1;
    }
    first[k] = lo;
  }
  first[nparts] = m;
  return GS_SUCCESS;
}

/* ---- one block ------------------------------------------------------------------------------- */

void gs_dist_block_free(gs_dist_block_t *B)
{
  if (!B) return;
  gs_csr_destroy(&B->diag);
  gs_csr_destroy(&B->off);
  free(B->halo);
  free(B->recv_off);
  free(B->send_idx);
  free(B->send_off);
  memset(B, 0, sizeof *B);
}

gs_off_t gs_dist_split_share_min = (gs_off_t)1 << 20;
#define SPLIT_MAX_THREADS 16

/* gs_dist_split's threads: share t holds rows [i0, i1) and writes its entries from dp and op
 * of the two blocks (set after pass 1). */
typedef struct {
  gs_idx_t i0, i1;
  gs_off_t dnnz, onnz, dp, op;
  gs_idx_t cmin, cmax;
} split_share_t;

typedef struct {
  const gs_csr_t *A;
  gs_csr_t *D, *O;
  uint64_t *bits;       /* halo columns, bit t = column cmin + t (OR-ed atomically: shares meet) */
  const gs_idx_t *rank; /* set bits before each word */
  split_share_t *share;
  gs_idx_t r0, r1, cmin, cmax;
  int pad, nt;
} split_t;

static void split_count(void *arg, int t)
{
  split_t *sp = (split_t *)arg;
  split_share_t *sh = &sp->share[t];
  const gs_csr_t *A = sp->A;
  const gs_idx_t r0 = sp->r0, r1 = sp->r1;
  gs_off_t d = 0, o = 0;
  gs_idx_t cmin = A->n, cmax = -1;
  for (gs_off_t p = A->row_ptr[sh->i0]; p < A->row_ptr[sh->i1]; ++p) {
    const gs_idx_t j = A->col[p];
    if (j >= r0 && j < r1) {
      ++d;
    } else {
      ++o;
      if (j < cmin) cmin = j;
      if (j > cmax) cmax = j;
    }
  }
  sh->dnnz = d, sh->onnz = o, sh->cmin = cmin, sh->cmax = cmax;
}

static void split_fill(void *arg, int t)
{
  split_t *sp = (split_t *)arg;
  const split_share_t *sh = &sp->share[t];
  const gs_csr_t *A = sp->A;
  gs_csr_t *D = sp->D, *O = sp->O;
  const gs_idx_t r0 = sp->r0, r1 = sp->r1, cmin = sp->cmin;
  gs_off_t dp = sh->dp, op = sh->op;
  uint64_t word = 0; /* the bits of word `at`, OR-ed in when the word changes */
  size_t at = 0;
  for (gs_idx_t i = sh->i0; i < sh->i1; ++i) {
    for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) {
      const gs_idx_t j = A->col[p];
      if (j >= r0 && j < r1) {
        D->col[dp] = j - r0;
        D->val[dp++] = A->val[p];
      } else {
        const uint64_t c = (uint64_t)(j - cmin);
        if ((size_t)(c >> 6) != at) {
          if (word) __atomic_fetch_or(&sp->bits[at], word, __ATOMIC_RELAXED);
          at = (size_t)(c >> 6);
          word = 0;
        }
        word |= 1ull << (c & 63);
        O->col[op] = j;
        O->val[op++] = A->val[p];
      }
    }
    D->row_ptr[i - r0 + 1] = dp;
    O->row_ptr[i - r0 + 1] = op;
  }
  if (word) __atomic_fetch_or(&sp->bits[at], word, __ATOMIC_RELAXED);
}

/* Global halo columns to halo indices (the set bits below each). */
static void split_renumber(void *arg, int t)
{
  split_t *sp = (split_t *)arg;
  const split_share_t *sh = &sp->share[t];
  gs_idx_t *col = sp->O->col;
  for (gs_off_t p = sh->op; p < sh->op + sh->onnz; ++p) {
    const uint64_t c = (uint64_t)(col[p] - sp->cmin);
    col[p] = sp->rank[c >> 6] + (gs_idx_t)popcount64(sp->bits[c >> 6] & ((1ull << (c & 63)) - 1));
  }
}

gs_status_t gs_dist_split(const gs_csr_t *A, const gs_idx_t *first, int nparts, int part,
                          gs_dist_block_t *B)
{
  static const char fn[] = "gs_dist_split";
  gs_status_t st = GS_SUCCESS;
  uint64_t *bits = NULL;  /* halo columns, bit t = column cmin + t */
  gs_idx_t *rank = NULL;  /* set bits before each word */
  if (!B) return GS_ERROR(GS_ERR_INVALID_ARG, "%s: B is NULL", fn);
  memset(B, 0, sizeof *B);
  if (!A || !first) return GS_ERROR(GS_ERR_INVALID_ARG, "%s: NULL argument", fn);
  if (nparts < 1)
    return GS_ERROR(GS_ERR_INVALID_ARG, "%s: nparts must be >= 1, not %d", fn, nparts);
  if (part < 0 || part >= nparts)
    return GS_ERROR(GS_ERR_INVALID_ARG, "%s: part %d outside 0..%d", fn, part, nparts - 1);
  if (A->m != A->n)
    return GS_ERROR(GS_ERR_DIMENSION,
                    "%s: the matrix is %d x %d; rows and columns share one partition, so it "
                    "must be square", fn, A->m, A->n);
  GS_CHECK(check_partition(first, nparts, A->m, fn));
  const gs_idx_t r0 = first[part], r1 = first[part + 1], rows = r1 - r0;
  GS_CHECK(gs_csr_check_rows(A, r0, r1, fn));

  /* The rows in nt shares balanced as the parts are (gs_dist_partition_rows), one thread each
   * (the blocks of one process's ranks are split at once: they share its threads). */
  split_t sp = {A, NULL, NULL, NULL, NULL, NULL, r0, r1, A->n, -1, 0, 1};
  const gs_off_t entries = A->row_ptr[r1] - A->row_ptr[r0];
  int nt = gs_mm_threads() / nparts;
  if (nt > SPLIT_MAX_THREADS) nt = SPLIT_MAX_THREADS;
  if ((gs_off_t)nt > entries / gs_dist_split_share_min)
    nt = (int)(entries / gs_dist_split_share_min);
  if (nt > rows) nt = (int)rows;
  if (nt < 1) nt = 1;
  gs_idx_t cut[SPLIT_MAX_THREADS + 1];
  GS_TRY(gs_dist_partition_rows(A->row_ptr + r0, rows, nt, cut));
  sp.nt = nt;
  sp.share = calloc((size_t)nt, sizeof *sp.share);
  if (!sp.share) GS_FAIL(GS_ERR_HOST_MEMORY, "%s: out of host memory", fn);
  for (int t = 0; t < nt; ++t) sp.share[t].i0 = r0 + cut[t], sp.share[t].i1 = r0 + cut[t + 1];

  /* Pass 1: entries of each kind, and the range of the halo columns. */
  gs_parallel(nt, split_count, &sp);
  gs_off_t dnnz = 0, onnz = 0;
  for (int t = 0; t < nt; ++t) {
    sp.share[t].dp = dnnz; /* where the share's entries start */
    sp.share[t].op = onnz;
    dnnz += sp.share[t].dnnz;
    onnz += sp.share[t].onnz;
    if (sp.share[t].cmin < sp.cmin) sp.cmin = sp.share[t].cmin;
    if (sp.share[t].cmax > sp.cmax) sp.cmax = sp.share[t].cmax;
  }
  const gs_idx_t cmin = sp.cmin, cmax = sp.cmax;

  B->part = part;
  B->nparts = nparts;
  B->row0 = r0;
  B->rows = rows;
  GS_TRY(gs_csr_create(&B->diag, rows, rows, dnnz));
  GS_TRY(gs_csr_create(&B->off, rows, 0, onnz));
  B->recv_off = malloc(((size_t)nparts + 1) * sizeof *B->recv_off);
  if (!B->recv_off) GS_FAIL(GS_ERR_HOST_MEMORY, "%s: out of host memory", fn);
  const size_t words = onnz > 0 ? (size_t)(((int64_t)cmax - cmin) / 64 + 1) : 0;
  if (words) {
    bits = calloc(words, sizeof *bits);
    rank = malloc(words * sizeof *rank);
    if (!bits || !rank)
      GS_FAIL(GS_ERR_HOST_MEMORY, "%s: out of host memory for the halo of part %d (%zu words)",
              fn, part, words);
  }

  /* Pass 2: both blocks in A's order within each row; off keeps global columns for now. */
  gs_csr_t *O = B->off;
  sp.D = B->diag;
  sp.O = O;
  sp.bits = bits;
  gs_parallel(nt, split_fill, &sp);

  /* The halo is the set bits in order; a column's halo index is the set bits below it. */
  gs_idx_t nhalo = 0;
  for (size_t w = 0; w < words; ++w) {
    rank[w] = nhalo;
    nhalo += (gs_idx_t)popcount64(bits[w]);
  }
  if (nhalo > 0) {
    B->halo = malloc((size_t)nhalo * sizeof *B->halo);
    if (!B->halo) GS_FAIL(GS_ERR_HOST_MEMORY, "%s: out of host memory for %d halo columns", fn,
                          nhalo);
    gs_idx_t h = 0;
    for (size_t w = 0; w < words; ++w)
      for (uint64_t b = bits[w]; b; b &= b - 1)
        B->halo[h++] = cmin + (gs_idx_t)(w * 64 + (size_t)ctz64(b));
  }
  sp.rank = rank;
  if (onnz > 0) gs_parallel(nt, split_renumber, &sp);
  O->n = nhalo;
  B->nhalo = nhalo;

  /* Owners hold contiguous ranges, so the sorted halo is grouped by owner. */
  gs_idx_t h = 0;
  for (int k = 0; k < nparts; ++k) {
    B->recv_off[k] = h;
    while (h < nhalo && B->halo[h] < first[k + 1]) ++h;
  }
  B->recv_off[nparts] = nhalo;

cleanup:
  free(sp.share);
  free(bits);
  free(rank);
  if (st != GS_SUCCESS) gs_dist_block_free(B);
  return st;
}

/* ---- halo exchange lists --------------------------------------------------------------------- */

/* The blocks are a partition of one matrix, and each halo segment lies in its owner's rows. */
static gs_status_t check_blocks(const gs_dist_block_t *blocks, int nparts)
{
  static const char fn[] = "gs_dist_send_lists";
  gs_idx_t next = 0;
  for (int k = 0; k < nparts; ++k) {
    const gs_dist_block_t *b = &blocks[k];
    if (b->part != k || b->nparts != nparts)
      return GS_ERROR(GS_ERR_INVALID_ARG, "%s: blocks[%d] is part %d of %d, not part %d of %d",
                      fn, k, b->part, b->nparts, k, nparts);
    if (!b->recv_off || (b->nhalo > 0 && !b->halo) || b->nhalo < 0)
      return GS_ERROR(GS_ERR_INVALID_ARG, "%s: block %d has no halo arrays (not split?)", fn, k);
    if (b->row0 != next || b->rows < 1)
      return GS_ERROR(GS_ERR_INVALID_ARG,
                      "%s: block %d holds rows [%d, %d); the blocks must tile the rows from 0 "
                      "(next row %d)", fn, k, b->row0, b->row0 + b->rows, next);
    next = b->row0 + b->rows;
    if (b->recv_off[0] != 0 || b->recv_off[nparts] != b->nhalo)
      return GS_ERROR(GS_ERR_INVALID_ARG, "%s: block %d: recv_off does not span its %d halo "
                      "entries", fn, k, b->nhalo);
    for (int q = 0; q < nparts; ++q)
      if (b->recv_off[q + 1] < b->recv_off[q])
        return GS_ERROR(GS_ERR_INVALID_ARG, "%s: block %d: recv_off decreases at part %d", fn,
                        k, q);
  }
  for (int k = 0; k < nparts; ++k) {
    const gs_dist_block_t *b = &blocks[k];
    for (int q = 0; q < nparts; ++q) {
      const gs_idx_t lo = blocks[q].row0, hi = lo + blocks[q].rows;
      for (gs_idx_t h = b->recv_off[q]; h < b->recv_off[q + 1]; ++h)
        if (b->halo[h] < lo || b->halo[h] >= hi || q == k)
          return GS_ERROR(GS_ERR_INVALID_ARG,
                          "%s: block %d: halo column %d is listed as owned by part %d, which "
                          "holds rows [%d, %d)", fn, k, b->halo[h], q, lo, hi);
    }
  }
  return GS_SUCCESS;
}

gs_status_t gs_dist_send_lists(gs_dist_block_t *blocks, int nparts)
{
  static const char fn[] = "gs_dist_send_lists";
  gs_status_t st = GS_SUCCESS;
  if (!blocks) return GS_ERROR(GS_ERR_INVALID_ARG, "%s: blocks is NULL", fn);
  if (nparts < 1)
    return GS_ERROR(GS_ERR_INVALID_ARG, "%s: nparts must be >= 1, not %d", fn, nparts);
  GS_CHECK(check_blocks(blocks, nparts));

  /* Built aside and swapped in at the end: on failure the blocks are as they were. */
  gs_idx_t **off = calloc((size_t)nparts, sizeof *off);
  gs_idx_t **idx = calloc((size_t)nparts, sizeof *idx);
  if (!off || !idx) GS_FAIL(GS_ERR_HOST_MEMORY, "%s: out of host memory", fn);
  for (int p = 0; p < nparts; ++p) {
    off[p] = malloc(((size_t)nparts + 1) * sizeof *off[p]);
    if (!off[p]) GS_FAIL(GS_ERR_HOST_MEMORY, "%s: out of host memory", fn);
    int64_t n = 0;
    off[p][0] = 0;
    for (int q = 0; q < nparts; ++q) {
      n += blocks[q].recv_off[p + 1] - blocks[q].recv_off[p];
      if (n > INT32_MAX)
        GS_FAIL(GS_ERR_UNSUPPORTED,
                "%s: part %d would send more than 2^31-1 entries (32-bit send lists)", fn, p);
      off[p][q + 1] = (gs_idx_t)n;
    }
    if (n > 0) {
      idx[p] = malloc((size_t)n * sizeof *idx[p]);
      if (!idx[p])
        GS_FAIL(GS_ERR_HOST_MEMORY, "%s: out of host memory for %lld send entries", fn,
                (long long)n);
    }
    const gs_idx_t row0 = blocks[p].row0;
    for (int q = 0; q < nparts; ++q) {
      const gs_dist_block_t *b = &blocks[q];
      gs_idx_t *dst = idx[p] + off[p][q];
      for (gs_idx_t h = b->recv_off[p]; h < b->recv_off[p + 1]; ++h) *dst++ = b->halo[h] - row0;
    }
  }
  for (int p = 0; p < nparts; ++p) {
    free(blocks[p].send_idx);
    free(blocks[p].send_off);
    blocks[p].send_idx = idx[p];
    blocks[p].send_off = off[p];
    blocks[p].nsend = off[p][nparts];
    idx[p] = off[p] = NULL;
  }

cleanup:
  for (int p = 0; p < nparts && off; ++p) free(off[p]);
  for (int p = 0; p < nparts && idx; ++p) free(idx[p]);
  free(off);
  free(idx);
  return st;
}

static int cmp_idx(const void *a, const void *b)
{
  const gs_idx_t x = *(const gs_idx_t *)a, y = *(const gs_idx_t *)b;
  return (x > y) - (x < y);
}

gs_status_t gs_dist_send_list_part(const gs_csr_t *A, const gs_idx_t *first, int nparts,
                                   gs_dist_block_t *B)
{
  static const char fn[] = "gs_dist_send_list_part";
  gs_status_t st = GS_SUCCESS;
  if (!A || !first || !B) return GS_ERROR(GS_ERR_INVALID_ARG, "%s: NULL argument", fn);
  if (nparts < 1 || B->nparts != nparts || B->part < 0 || B->part >= nparts || !B->recv_off)
    return GS_ERROR(GS_ERR_INVALID_ARG, "%s: the block is not a split part of %d", fn, nparts);
  const int p = B->part;
  const gs_idx_t row0 = first[p], hi = first[p + 1];
  if (row0 != B->row0 || hi - row0 != B->rows || first[nparts] != A->m)
    return GS_ERROR(GS_ERR_INVALID_ARG, "%s: the block does not hold rows [%d, %d) of the "
                    "partition", fn, (int)row0, (int)hi);
  gs_idx_t *off = malloc(((size_t)nparts + 1) * sizeof *off);
  int *stamp = malloc(((size_t)B->rows + 1) * sizeof *stamp);
  gs_idx_t *idx = NULL;
  size_t cap = 0;
  int64_t n = 0;
  if (!off || !stamp) GS_FAIL(GS_ERR_HOST_MEMORY, "%s: out of host memory", fn);
  for (gs_idx_t k = 0; k < B->rows; ++k) stamp[k] = -1;
  off[0] = 0;
  /* what part q needs of p's rows: the columns in [row0, hi) of q's rows, ascending (q's halo
   * segment owned by p, in q's halo order, so that q's receive buffer needs no reordering) */
  for (int q = 0; q < nparts; ++q) {
    const int64_t start = n;
    for (gs_idx_t i = first[q]; q != p && i < first[q + 1]; ++i)
      for (gs_off_t e = A->row_ptr[i]; e < A->row_ptr[i + 1]; ++e) {
        const gs_idx_t c = A->col[e];
        if (c < row0 || c >= hi || stamp[c - row0] == q) continue;
        stamp[c - row0] = q;
        if ((size_t)n == cap) {
          const size_t nc = cap ? 2 * cap : 1024;
          gs_idx_t *t = realloc(idx, nc * sizeof *t);
          if (!t) GS_FAIL(GS_ERR_HOST_MEMORY, "%s: out of host memory", fn);
          idx = t;
          cap = nc;
        }
        idx[n++] = c - row0;
      }
    if (n > INT32_MAX)
      GS_FAIL(GS_ERR_UNSUPPORTED,
              "%s: part %d would send more than 2^31-1 entries (32-bit send lists)", fn, p);
    if (n > start) qsort(idx + start, (size_t)(n - start), sizeof *idx, cmp_idx);
    off[q + 1] = (gs_idx_t)n;
  }
  free(B->send_idx);
  free(B->send_off);
  B->send_idx = idx;
  B->send_off = off;
  B->nsend = (gs_idx_t)n;
  idx = NULL;
  off = NULL;
cleanup:
  free(idx);
  free(off);
  free(stamp);
  return st;
}
