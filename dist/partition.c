/* dist/partition.c: host side of the distributed matrix (interface and model in
 * dist/partition.h): work-balanced row blocks, the diag/off split of one block with its halo,
 * the halo exchange lists, and reverse Cuthill-McKee. Pure C11, no CUDA.
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
#include "dist/partition.h"

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

/* Rows [r0, r1) of A: arrays present, row pointers non-decreasing inside [0, nnz] (row_ptr[0] = 0
 * and row_ptr[m] = nnz when the range touches the ends), columns in [0, n). Reads only those rows,
 * so that one part's split costs its own entries. */
static gs_status_t check_rows(const gs_csr_t *A, gs_idx_t r0, gs_idx_t r1, const char *fn)
{
  if (A->m < 0 || A->n < 0 || A->nnz < 0)
    return GS_ERROR(GS_ERR_INVALID_ARG, "%s: negative size %d x %d with %lld entries", fn, A->m,
                    A->n, (long long)A->nnz);
  if (!A->row_ptr || (A->nnz > 0 && (!A->col || !A->val)))
    return GS_ERROR(GS_ERR_INVALID_ARG, "%s: matrix arrays are NULL", fn);
  if (r0 == 0 && A->row_ptr[0] != 0)
    return GS_ERROR(GS_ERR_INVALID_ARG, "%s: row_ptr[0] is %lld, not 0", fn,
                    (long long)A->row_ptr[0]);
  if (r1 == A->m && A->row_ptr[A->m] != A->nnz)
    return GS_ERROR(GS_ERR_INVALID_ARG, "%s: row_ptr[m] = %lld but nnz = %lld", fn,
                    (long long)A->row_ptr[A->m], (long long)A->nnz);
  if (A->row_ptr[r0] < 0 || A->row_ptr[r0] > A->nnz)
    return GS_ERROR(GS_ERR_INVALID_ARG, "%s: row_ptr[%d] = %lld outside 0..%lld", fn, r0,
                    (long long)A->row_ptr[r0], (long long)A->nnz);
  for (gs_idx_t i = r0; i < r1; ++i) {
    if (A->row_ptr[i + 1] < A->row_ptr[i])
      return GS_ERROR(GS_ERR_INVALID_ARG, "%s: row_ptr decreases at row %d", fn, i);
    if (A->row_ptr[i + 1] > A->nnz)
      return GS_ERROR(GS_ERR_INVALID_ARG, "%s: row_ptr[%d] = %lld exceeds nnz = %lld", fn, i + 1,
                      (long long)A->row_ptr[i + 1], (long long)A->nnz);
  }
  for (gs_idx_t i = r0; i < r1; ++i)
    for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p)
      if (A->col[p] < 0 || A->col[p] >= A->n)
        return GS_ERROR(GS_ERR_INVALID_ARG, "%s: row %d: column %d outside 0..%d", fn, i,
                        A->col[p], A->n - 1);
  return GS_SUCCESS;
}

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
  GS_CHECK(check_rows(A, r0, r1, fn));

  /* Pass 1: entries of each kind, and the range of the halo columns. */
  gs_off_t dnnz = 0, onnz = 0;
  gs_idx_t cmin = A->n, cmax = -1;
  for (gs_off_t p = A->row_ptr[r0]; p < A->row_ptr[r1]; ++p) {
    const gs_idx_t j = A->col[p];
    if (j >= r0 && j < r1) {
      ++dnnz;
    } else {
      ++onnz;
      if (j < cmin) cmin = j;
      if (j > cmax) cmax = j;
    }
  }

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
  gs_csr_t *D = B->diag, *O = B->off;
  gs_off_t dp = 0, op = 0;
  for (gs_idx_t i = r0; i < r1; ++i) {
    for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) {
      const gs_idx_t j = A->col[p];
      if (j >= r0 && j < r1) {
        D->col[dp] = j - r0;
        D->val[dp++] = A->val[p];
      } else {
        const uint64_t t = (uint64_t)(j - cmin);
        bits[t >> 6] |= 1ull << (t & 63);
        O->col[op] = j;
        O->val[op++] = A->val[p];
      }
    }
    D->row_ptr[i - r0 + 1] = dp;
    O->row_ptr[i - r0 + 1] = op;
  }

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
  for (gs_off_t p = 0; p < onnz; ++p) {
    const uint64_t t = (uint64_t)(O->col[p] - cmin);
    O->col[p] = rank[t >> 6] + (gs_idx_t)popcount64(bits[t >> 6] & ((1ull << (t & 63)) - 1));
  }
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

/* ---- reverse Cuthill-McKee ------------------------------------------------------------------- */

/* Adjacency of the symmetrized pattern without the diagonal, each neighbour once. */
typedef struct rcm_graph {
  gs_idx_t n;
  gs_off_t *ptr; /* n + 1 */
  gs_idx_t *adj;
  gs_idx_t *deg; /* n */
} rcm_graph_t;

static void graph_free(rcm_graph_t *g)
{
  free(g->ptr);
  free(g->adj);
  free(g->deg);
}

/* The graph of A + A^T without its diagonal, each neighbour once (A already checked). mark: n
 * entries of scratch. */
static gs_status_t graph_build(const gs_csr_t *A, rcm_graph_t *g, gs_idx_t *mark)
{
  const gs_idx_t n = A->m;
  memset(g, 0, sizeof *g);
  g->n = n;
  g->ptr = calloc((size_t)n + 1, sizeof *g->ptr);
  g->deg = malloc((size_t)n * sizeof *g->deg);
  if (!g->ptr || !g->deg) goto oom;
  for (gs_idx_t i = 0; i < n; ++i)
    for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) {
      const gs_idx_t j = A->col[p];
      if (j != i) {
        ++g->ptr[i + 1];
        ++g->ptr[j + 1];
      }
    }
  for (gs_idx_t i = 0; i < n; ++i) g->ptr[i + 1] += g->ptr[i];
  g->adj = malloc((size_t)(g->ptr[n] > 0 ? g->ptr[n] : 1) * sizeof *g->adj);
  if (!g->adj) goto oom;
  /* ptr[i] as row i's cursor: afterwards ptr[i] is row i's end, shifted back below. */
  for (gs_idx_t i = 0; i < n; ++i)
    for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) {
      const gs_idx_t j = A->col[p];
      if (j != i) {
        g->adj[g->ptr[i]++] = j;
        g->adj[g->ptr[j]++] = i;
      }
    }
  for (gs_idx_t i = n; i > 0; --i) g->ptr[i] = g->ptr[i - 1];
  g->ptr[0] = 0;
  /* Drop repeated neighbours (a_ij and a_ji both stored, duplicates in A), compacting in place. */
  for (gs_idx_t i = 0; i < n; ++i) mark[i] = -1;
  gs_off_t w = 0, s = 0;
  for (gs_idx_t i = 0; i < n; ++i) {
    const gs_off_t e = g->ptr[i + 1], start = w;
    for (gs_off_t p = s; p < e; ++p) {
      const gs_idx_t j = g->adj[p];
      if (mark[j] != i) {
        mark[j] = i;
        g->adj[w++] = j;
      }
    }
    g->ptr[i] = start;
    g->deg[i] = (gs_idx_t)(w - start);
    s = e;
  }
  g->ptr[n] = w;
  if (w > 0) {
    gs_idx_t *shrunk = realloc(g->adj, (size_t)w * sizeof *g->adj);
    if (shrunk) g->adj = shrunk;
  }
  return GS_SUCCESS;
oom:
  graph_free(g);
  memset(g, 0, sizeof *g);
  return GS_ERROR(GS_ERR_HOST_MEMORY, "gs_csr_rcm: out of host memory for the graph of a %d x %d "
                  "matrix with %lld entries", n, n, (long long)A->nnz);
}

/* Key that orders vertices by degree, then index. */
static inline uint64_t rcm_key(const rcm_graph_t *g, gs_idx_t v)
{
  return ((uint64_t)(uint32_t)g->deg[v] << 32) | (uint32_t)v;
}

static int cmp_u64(const void *a, const void *b)
{
  const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

static void sort_keys(uint64_t *k, gs_idx_t c)
{
  if (c > 16) {
    qsort(k, (size_t)c, sizeof *k, cmp_u64);
    return;
  }
  for (gs_idx_t a = 1; a < c; ++a) {
    const uint64_t t = k[a];
    gs_idx_t b = a;
    for (; b > 0 && k[b - 1] > t; --b) k[b] = k[b - 1];
    k[b] = t;
  }
}

/* Rooted level structure of root's component (SPARSPAK's ROOTLS): ls gets the component in
 * level order, *size its vertex count, *last the position in ls where the last level starts;
 * returns the number of levels. seen (all 0 on entry) is 0 again on return. */
static gs_idx_t rcm_levels(const rcm_graph_t *g, gs_idx_t root, unsigned char *seen,
                           gs_idx_t *ls, gs_idx_t *size, gs_idx_t *last)
{
  gs_idx_t head = 0, tail = 1, nlvl = 0, lstart = 0;
  ls[0] = root;
  seen[root] = 1;
  while (head < tail) {
    const gs_idx_t lend = tail;
    lstart = head;
    ++nlvl;
    for (; head < lend; ++head) {
      const gs_idx_t v = ls[head];
      for (gs_off_t p = g->ptr[v]; p < g->ptr[v + 1]; ++p) {
        const gs_idx_t u = g->adj[p];
        if (!seen[u]) {
          seen[u] = 1;
          ls[tail++] = u;
        }
      }
    }
  }
  for (gs_idx_t k = 0; k < tail; ++k) seen[ls[k]] = 0;
  *size = tail;
  *last = lstart;
  return nlvl;
}

/* George and Liu's pseudo-peripheral vertex (SPARSPAK's FNROOT): from root, repeatedly move to
 * the vertex of least degree (then least index) in the last level while that deepens the level
 * structure. */
static gs_idx_t rcm_root(const rcm_graph_t *g, gs_idx_t root, unsigned char *seen, gs_idx_t *ls)
{
  gs_idx_t size, last;
  gs_idx_t nlvl = rcm_levels(g, root, seen, ls, &size, &last);
  while (nlvl > 1 && nlvl < size) {
    gs_idx_t best = ls[last];
    for (gs_idx_t k = last + 1; k < size; ++k)
      if (rcm_key(g, ls[k]) < rcm_key(g, best)) best = ls[k];
    root = best;
    const gs_idx_t nl = rcm_levels(g, root, seen, ls, &size, &last);
    if (nl <= nlvl) break;
    nlvl = nl;
  }
  return root;
}

gs_status_t gs_csr_rcm(const gs_csr_t *A, gs_idx_t *perm)
{
  static const char fn[] = "gs_csr_rcm";
  gs_status_t st = GS_SUCCESS;
  if (!A || !perm) return GS_ERROR(GS_ERR_INVALID_ARG, "%s: NULL argument", fn);
  if (A->m != A->n)
    return GS_ERROR(GS_ERR_DIMENSION, "%s: the matrix is %d x %d, not square", fn, A->m, A->n);
  GS_CHECK(check_rows(A, 0, A->m, fn));
  const gs_idx_t n = A->m;
  if (n == 0) return GS_SUCCESS;

  rcm_graph_t g = {0, NULL, NULL, NULL};
  gs_idx_t *ls = malloc((size_t)n * sizeof *ls);         /* graph scratch, then level lists */
  gs_idx_t *order = malloc((size_t)n * sizeof *order);   /* vertices by degree, then index */
  unsigned char *numbered = calloc((size_t)n, 1), *seen = calloc((size_t)n, 1);
  gs_idx_t *count = NULL;
  uint64_t *keys = NULL;
  if (!ls || !order || !numbered || !seen)
    GS_FAIL(GS_ERR_HOST_MEMORY, "%s: out of host memory for %d vertices", fn, n);
  GS_TRY(graph_build(A, &g, ls));

  /* Counting sort by degree (stable, so ties stay in index order). */
  gs_idx_t maxdeg = 0;
  for (gs_idx_t v = 0; v < n; ++v)
    if (g.deg[v] > maxdeg) maxdeg = g.deg[v];
  count = calloc((size_t)maxdeg + 2, sizeof *count);
  keys = malloc(((size_t)maxdeg + 1) * sizeof *keys);
  if (!count || !keys) GS_FAIL(GS_ERR_HOST_MEMORY, "%s: out of host memory", fn);
  for (gs_idx_t v = 0; v < n; ++v) ++count[g.deg[v] + 1];
  for (gs_idx_t d = 0; d <= maxdeg; ++d) count[d + 1] += count[d];
  for (gs_idx_t v = 0; v < n; ++v) order[count[g.deg[v]]++] = v;

  /* Cuthill-McKee into perm, one component at a time, then reversed. */
  gs_idx_t done = 0, next = 0;
  while (done < n) {
    while (numbered[order[next]]) ++next;
    const gs_idx_t root = rcm_root(&g, order[next], seen, ls);
    gs_idx_t head = done, tail = done + 1;
    perm[done] = root;
    numbered[root] = 1;
    while (head < tail) {
      const gs_idx_t v = perm[head++];
      gs_idx_t c = 0;
      for (gs_off_t p = g.ptr[v]; p < g.ptr[v + 1]; ++p) {
        const gs_idx_t u = g.adj[p];
        if (!numbered[u]) {
          numbered[u] = 1;
          keys[c++] = rcm_key(&g, u);
        }
      }
      sort_keys(keys, c);
      for (gs_idx_t k = 0; k < c; ++k) perm[tail++] = (gs_idx_t)(uint32_t)keys[k];
    }
    done = tail;
  }
  for (gs_idx_t a = 0, b = n - 1; a < b; ++a, --b) {
    const gs_idx_t t = perm[a];
    perm[a] = perm[b];
    perm[b] = t;
  }

cleanup:
  graph_free(&g);
  free(ls);
  free(order);
  free(numbered);
  free(seen);
  free(count);
  free(keys);
  return st;
}

/* ---- symmetric permutation ------------------------------------------------------------------- */

/* Rows of up to SORT_RUN entries sort in place; longer ones merge through scratch. */
#define SORT_RUN 16

/* Stable sort of one row's (column, value) pairs by column: insertion sort on runs of SORT_RUN,
 * then merges through the scratch tc/tv (len entries each; unused when len <= SORT_RUN). */
static void sort_row(gs_idx_t *c, gs_val_t *v, gs_off_t len, gs_idx_t *tc, gs_val_t *tv)
{
  const gs_off_t run = SORT_RUN;
  for (gs_off_t s = 0; s < len; s += run) {
    const gs_off_t e = s + run < len ? s + run : len;
    for (gs_off_t a = s + 1; a < e; ++a) {
      const gs_idx_t kc = c[a];
      const gs_val_t kv = v[a];
      gs_off_t b = a;
      for (; b > s && c[b - 1] > kc; --b) {
        c[b] = c[b - 1];
        v[b] = v[b - 1];
      }
      c[b] = kc;
      v[b] = kv;
    }
  }
  gs_idx_t *sc = c, *dc = tc;
  gs_val_t *sv = v, *dv = tv;
  for (gs_off_t width = run; width < len; width *= 2) {
    for (gs_off_t lo = 0; lo < len; lo += 2 * width) {
      const gs_off_t mid = lo + width < len ? lo + width : len;
      const gs_off_t hi = lo + 2 * width < len ? lo + 2 * width : len;
      gs_off_t a = lo, b = mid, o = lo;
      while (a < mid && b < hi) {
        if (sc[b] < sc[a]) {
          dc[o] = sc[b];
          dv[o++] = sv[b++];
        } else {
          dc[o] = sc[a];
          dv[o++] = sv[a++];
        }
      }
      for (; a < mid; ++a, ++o) {
        dc[o] = sc[a];
        dv[o] = sv[a];
      }
      for (; b < hi; ++b, ++o) {
        dc[o] = sc[b];
        dv[o] = sv[b];
      }
    }
    gs_idx_t *t = sc;
    sc = dc;
    dc = t;
    gs_val_t *u = sv;
    sv = dv;
    dv = u;
  }
  if (sc != c) {
    memcpy(c, sc, (size_t)len * sizeof *c);
    memcpy(v, sv, (size_t)len * sizeof *v);
  }
}

gs_status_t gs_csr_permute_sym(const gs_csr_t *A, const gs_idx_t *perm, gs_csr_t **B)
{
  static const char fn[] = "gs_csr_permute_sym";
  gs_status_t st = GS_SUCCESS;
  gs_idx_t *inv = NULL, *tc = NULL;
  gs_val_t *tv = NULL;
  gs_csr_t *C = NULL;
  if (!B) return GS_ERROR(GS_ERR_INVALID_ARG, "%s: B is NULL", fn);
  *B = NULL;
  if (!A || !perm) return GS_ERROR(GS_ERR_INVALID_ARG, "%s: NULL argument", fn);
  if (A->m != A->n)
    return GS_ERROR(GS_ERR_DIMENSION, "%s: the matrix is %d x %d, not square", fn, A->m, A->n);
  GS_CHECK(check_rows(A, 0, A->m, fn));
  const gs_idx_t n = A->m;

  inv = malloc(((size_t)n + 1) * sizeof *inv);
  if (!inv) GS_FAIL(GS_ERR_HOST_MEMORY, "%s: out of host memory", fn);
  for (gs_idx_t j = 0; j < n; ++j) inv[j] = -1;
  for (gs_idx_t k = 0; k < n; ++k) {
    const gs_idx_t p = perm[k];
    if (p < 0 || p >= n)
      GS_FAIL(GS_ERR_INVALID_ARG, "%s: perm[%d] = %d is outside 0..%d", fn, k, p, n - 1);
    if (inv[p] >= 0)
      GS_FAIL(GS_ERR_INVALID_ARG, "%s: perm is not a permutation: perm[%d] = perm[%d] = %d", fn,
              inv[p], k, p);
    inv[p] = k;
  }

  GS_TRY(gs_csr_create(&C, n, n, A->nnz));
  C->symmetry = A->symmetry;
  gs_off_t maxlen = 0;
  for (gs_idx_t k = 0; k < n; ++k) {
    const gs_off_t len = A->row_ptr[perm[k] + 1] - A->row_ptr[perm[k]];
    C->row_ptr[k + 1] = C->row_ptr[k] + len;
    if (len > maxlen) maxlen = len;
  }
  for (gs_idx_t k = 0; k < n; ++k) {
    const gs_off_t s = A->row_ptr[perm[k]], len = A->row_ptr[perm[k] + 1] - s;
    gs_idx_t *c = C->col + C->row_ptr[k];
    gs_val_t *v = C->val + C->row_ptr[k];
    int sorted = 1;
    for (gs_off_t t = 0; t < len; ++t) {
      c[t] = inv[A->col[s + t]];
      v[t] = A->val[s + t];
      if (t > 0 && c[t] < c[t - 1]) sorted = 0;
    }
    if (sorted) continue;
    if (len > SORT_RUN && !tc) {
      tc = malloc((size_t)maxlen * sizeof *tc);
      tv = malloc((size_t)maxlen * sizeof *tv);
      if (!tc || !tv)
        GS_FAIL(GS_ERR_HOST_MEMORY, "%s: out of host memory for a row of %lld entries", fn,
                (long long)maxlen);
    }
    sort_row(c, v, len, tc, tv);
  }
  *B = C;
  C = NULL;

cleanup:
  free(inv);
  free(tc);
  free(tv);
  gs_csr_destroy(&C);
  return st;
}

gs_idx_t gs_csr_bandwidth(const gs_csr_t *A)
{
  if (!A || !A->row_ptr || (A->nnz > 0 && !A->col)) return -1;
  int64_t bw = 0;
  for (gs_idx_t i = 0; i < A->m; ++i)
    for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) {
      const int64_t d = (int64_t)i - A->col[p];
      if (d > bw) bw = d;
      if (-d > bw) bw = -d;
    }
  return (gs_idx_t)(bw < INT32_MAX ? bw : INT32_MAX);
}
