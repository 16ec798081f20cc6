/* core/coo_csr.c: COO -> CSR on several threads (the Matrix Market reader's and gs_coo_to_csr's).
 *
 * The result is gs_coo_to_csr's bit for bit (core/matrix.c): rows in order, columns sorted
 * within each row, entries with the same (row, column) summed left to right in the COO's order,
 * explicit zeros kept. gs_coo_to_csr gets there with two stable counting sorts (by column into a
 * transposed copy, then by row); this builds no transposed copy nor any array beside the CSR,
 * so the peak is the COO and the CSR (the counts, then each row's next free slot, live in
 * row_ptr itself):
 *
 *   1. count: thread t counts the entries of its band of rows (every thread scans the row array);
 *   2. offsets (one thread), and row bands of about nnz/nt entries each for steps 3 and 4;
 *   3. scatter: thread t scans the COO in order and places the entries of its band, so each
 *      row holds its entries in COO order (a stable bucket sort by row); row_ptr[i] ends as
 *      the end of row i;
 *   4. per row: columns already increasing are kept as they are (files written by row are),
 *      otherwise a stable merge sort by column; duplicates, now adjacent and in COO order, are
 *      summed left to right. Each band packs its rows to the band's start;
 *   5. one thread closes the gaps that summed duplicates left between bands.
 *
 * The input may come in segments (the reader's parts, never packed into one array) and may
 * hold one triangle of a symmetric or skew-symmetric matrix, each off-diagonal (i, j, v)
 * standing for itself and (j, i, v) or (j, i, -v) right after it: steps 1 and 3 place the
 * mirror as they go, so the expanded COO is never built and the result is that of the expanded
 * COO's.
 *
 * Steps 1 and 3 read the COO once per thread: memory traffic grows with nt, but the reads are
 * sequential and the writes (the costly part) are shared out. Offsets are 64-bit throughout and
 * row_ptr is only ever assigned element by element, so this compiles for a 32- or 64-bit
 * row_ptr alike. */
#define _DEFAULT_SOURCE /* madvise */

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/error.h"
#include "core/coo_csr.h"
#include "core/parallel.h"

int64_t gs_coo_to_csr_min = (int64_t)1 << 16;
/* Rows up to this length are sorted by insertion. */
#define CSR_INSERTION 24

typedef struct csr_job {
  const gs_coo_seg_t *seg; /* the entries, in order */
  int nseg;
  int mirror;       /* 0: as they are; 1: each off-diagonal entry mirrored; -1: mirrored negated */
  gs_csr_t *C;      /* row_ptr[i]: row i's count (1), start (2), next free slot, end (3) */
  int64_t m;
  int nt;
  int64_t *band;    /* nt + 1 row boundaries of steps 3 and 4 */
  int64_t *start;   /* per band: where its first row starts (step 2) */
  int64_t *kept;    /* per band: entries left after summing duplicates */
  int *band_failed; /* per band: a sort buffer could not be allocated */
  int64_t *bad;     /* per band: row and column of the first sum that is not finite, or -1 */
} csr_job;

void gs_advise_huge(void *p, size_t bytes)
{
#if defined(MADV_HUGEPAGE)
  const uintptr_t huge = (uintptr_t)2 << 20;
  if (!p || bytes < 2 * huge) return;
  const uintptr_t b = ((uintptr_t)p + huge - 1) & ~(huge - 1);
  const uintptr_t e = ((uintptr_t)p + bytes) & ~(huge - 1);
  if (e > b) (void)madvise((void *)b, e - b, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

/* ---- stable sort of one row by column ----------------------------------------------------- */

static void insertion_sort(gs_idx_t *c, gs_val_t *v, int64_t n)
{
  for (int64_t i = 1; i < n; ++i) {
    gs_idx_t kc = c[i];
    gs_val_t kv = v[i];
    int64_t j = i;
    for (; j > 0 && c[j - 1] > kc; --j) { /* strictly greater: equal columns keep their order */
      c[j] = c[j - 1];
      v[j] = v[j - 1];
    }
    c[j] = kc;
    v[j] = kv;
  }
}

/* Stable merge sort of n pairs; tc/tv hold at least n/2 pairs. */
static void merge_sort(gs_idx_t *c, gs_val_t *v, int64_t n, gs_idx_t *tc, gs_val_t *tv)
{
  if (n <= CSR_INSERTION) {
    insertion_sort(c, v, n);
    return;
  }
  const int64_t h = n / 2;
  merge_sort(c, v, h, tc, tv);
  merge_sort(c + h, v + h, n - h, tc, tv);
  if (c[h - 1] <= c[h]) return; /* already in order */
  memcpy(tc, c, (size_t)h * sizeof *tc);
  memcpy(tv, v, (size_t)h * sizeof *tv);
  /* Merge the copied left half with the right half in place: the output index never passes
   * the right half's read index. Ties take the left (earlier) pair: stable. */
  int64_t i = 0, j = h, k = 0;
  while (i < h && j < n) {
    if (c[j] < tc[i]) {
      c[k] = c[j];
      v[k++] = v[j++];
    } else {
      c[k] = tc[i];
      v[k++] = tv[i++];
    }
  }
  while (i < h) {
    c[k] = tc[i];
    v[k++] = tv[i++];
  }
}

/* ---- the steps ---------------------------------------------------------------------------- */

/* Counts the entries of rows [lo, lo + span) in one segment (every row when all), mirrors
 * included. Inlined with constant flags: the loops stay branch-light. */
static inline void count_seg(const gs_coo_seg_t *sg, gs_off_t *cnt, int mirror, int all,
                             gs_idx_t lo, uint32_t span)
{
  const gs_idx_t *row = sg->row, *col = sg->col;
  const int64_t n = sg->n;
  for (int64_t k = 0; k < n; ++k) {
    const gs_idx_t i = row[k];
    if (all || (uint32_t)(i - lo) < span) cnt[i]++;
    if (mirror) {
      const gs_idx_t j = col[k];
      if (j != i && (all || (uint32_t)(j - lo) < span)) cnt[j]++;
    }
  }
}

static void step_count(void *arg, int t)
{
  csr_job *J = arg;
  const int64_t m = J->m;
  const int64_t lo = m * t / J->nt, hi = m * (t + 1) / J->nt;
  const uint32_t span = (uint32_t)(hi - lo);
  gs_off_t *cnt = J->C->row_ptr;
  for (int s = 0; s < J->nseg; ++s) {
    if (J->nt == 1 && J->mirror)
      count_seg(&J->seg[s], cnt, 1, 1, 0, 0);
    else if (J->nt == 1)
      count_seg(&J->seg[s], cnt, 0, 1, 0, 0);
    else if (J->mirror)
      count_seg(&J->seg[s], cnt, 1, 0, (gs_idx_t)lo, span);
    else
      count_seg(&J->seg[s], cnt, 0, 0, (gs_idx_t)lo, span);
  }
}

/* Places the entries of rows [lo, lo + span) of one segment at their rows' next free slots, in
 * order, each mirror right after its entry (negated when mirror < 0). */
static inline void scatter_seg(const gs_coo_seg_t *sg, gs_csr_t *C, int mirror, gs_idx_t lo,
                               uint32_t span)
{
  gs_off_t *next = C->row_ptr;
  const gs_idx_t *row = sg->row, *col = sg->col;
  const gs_val_t *val = sg->val;
  gs_idx_t *ccol = C->col;
  gs_val_t *cval = C->val;
  const int64_t n = sg->n;
  for (int64_t k = 0; k < n; ++k) {
    const gs_idx_t i = row[k];
    if ((uint32_t)(i - lo) < span) {
      const gs_off_t q = next[i]++;
      ccol[q] = col[k];
      cval[q] = val[k];
    }
    if (mirror) {
      const gs_idx_t j = col[k];
      if (j != i && (uint32_t)(j - lo) < span) {
        const gs_off_t q = next[j]++;
        ccol[q] = i;
        cval[q] = mirror > 0 ? val[k] : -val[k];
      }
    }
  }
}

static void step_scatter(void *arg, int t)
{
  csr_job *J = arg;
  const int64_t lo = J->band[t], hi = J->band[t + 1];
  if (lo == hi) return;
  const uint32_t span = (uint32_t)(hi - lo);
  for (int s = 0; s < J->nseg; ++s) {
    if (J->mirror > 0)
      scatter_seg(&J->seg[s], J->C, 1, (gs_idx_t)lo, span);
    else if (J->mirror < 0)
      scatter_seg(&J->seg[s], J->C, -1, (gs_idx_t)lo, span);
    else
      scatter_seg(&J->seg[s], J->C, 0, (gs_idx_t)lo, span);
  }
}

static void step_rows(void *arg, int t)
{
  csr_job *J = arg;
  gs_csr_t *C = J->C;
  const int64_t lo = J->band[t], hi = J->band[t + 1];
  gs_idx_t *col = C->col;
  gs_val_t *val = C->val;
  gs_idx_t *tc = NULL;
  gs_val_t *tv = NULL;
  int64_t tcap = 0;
  int64_t next_start = J->start[t]; /* row_ptr[i] holds the end of row i (step 3) */
  int64_t w = next_start;
  const int64_t w0 = w;
  for (int64_t i = lo; i < hi; ++i) {
    const int64_t start = next_start, stop = (int64_t)C->row_ptr[i], n = stop - start;
    next_start = stop;
    int sorted = 1;
    for (int64_t p = start + 1; p < stop; ++p)
      if (col[p] <= col[p - 1]) {
        sorted = 0;
        break;
      }
    C->row_ptr[i] = w; /* row i's new start; its end is read above and never again */
    if (sorted) { /* no duplicates either: move the row down to w as it is */
      if (w != start) {
        memmove(col + w, col + start, (size_t)n * sizeof *col);
        memmove(val + w, val + start, (size_t)n * sizeof *val);
      }
      w += n;
      continue;
    }
    if (n <= CSR_INSERTION) {
      insertion_sort(col + start, val + start, n);
    } else {
      if (tcap < n / 2) {
        free(tc);
        free(tv);
        tcap = n / 2;
        tc = malloc((size_t)tcap * sizeof *tc);
        tv = malloc((size_t)tcap * sizeof *tv);
        if (!tc || !tv) {
          J->band_failed[t] = 1;
          break;
        }
      }
      merge_sort(col + start, val + start, n, tc, tv);
    }
    const int64_t rs = w;
    for (int64_t p = start; p < stop; ++p) {
      if (w > rs && col[w - 1] == col[p]) {
        val[w - 1] += val[p];
        /* finite values only come in: a sum that is not finite stays so, the first is kept */
        if (!isfinite(val[w - 1]) && J->bad[2 * t] < 0) {
          J->bad[2 * t] = i;
          J->bad[2 * t + 1] = col[p];
        }
      } else {
        col[w] = col[p];
        val[w] = val[p];
        ++w;
      }
    }
  }
  free(tc);
  free(tv);
  J->kept[t] = w - w0;
}

/* First row i in [lo, hi] whose offset reaches target (offsets non-decreasing). */
static int64_t first_row_at(const gs_off_t *off, int64_t lo, int64_t hi, int64_t target)
{
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (off[mid] < target)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

gs_status_t gs_coo_to_csr_threads(gs_csr_t **out, const gs_coo_t *A, int nt)
{
  int64_t bad[2];
  return gs_coo_to_csr_threads_checked(out, A, nt, bad);
}

gs_status_t gs_coo_to_csr_threads_checked(gs_csr_t **out, const gs_coo_t *A, int nt, int64_t bad[2])
{
  if (!out || !A || !bad) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_coo_to_csr_threads: NULL argument");
  const gs_coo_seg_t seg = {A->row, A->col, A->val, A->nnz};
  return gs_coo_segs_to_csr(out, A->m, A->n, &seg, 1, GS_SYM_GENERAL, A->symmetry, nt, bad);
}

gs_status_t gs_coo_segs_to_csr(gs_csr_t **out, gs_idx_t m_, gs_idx_t n_, const gs_coo_seg_t *seg,
                               int nseg, gs_symmetry_t mirror, gs_symmetry_t symmetry, int nt,
                               int64_t bad[2])
{
  gs_status_t st = GS_SUCCESS;
  gs_csr_t *C = NULL;
  csr_job J;
  memset(&J, 0, sizeof J);
  if (!out || (!seg && nseg > 0) || nseg < 0 || !bad)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_coo_to_csr_threads: NULL argument");
  *out = NULL;
  bad[0] = bad[1] = -1;
  if (mirror != GS_SYM_GENERAL && m_ != n_)
    return GS_ERROR(GS_ERR_INVALID_ARG,
                    "gs_coo_segs_to_csr: a mirrored triangle of a %d x %d matrix", m_, n_);
  const int64_t m = m_;
  int64_t in = 0; /* entries given */
  for (int s = 0; s < nseg; ++s) in += seg[s].n;

  if (nt < 1 || (mirror != GS_SYM_GENERAL ? 2 * in : in) < gs_coo_to_csr_min) nt = 1;
  if (nt > m && m > 0) nt = (int)m;

  J.seg = seg;
  J.nseg = nseg;
  J.mirror = mirror == GS_SYM_SYMMETRIC ? 1 : mirror == GS_SYM_SKEW ? -1 : 0;
  J.m = m;
  J.nt = nt;
  J.band = malloc(((size_t)nt + 1) * sizeof *J.band);
  J.start = malloc(((size_t)nt + 1) * sizeof *J.start);
  J.kept = calloc((size_t)nt, sizeof *J.kept);
  J.band_failed = calloc((size_t)nt, sizeof *J.band_failed);
  J.bad = malloc(2 * (size_t)nt * sizeof *J.bad);
  if (!J.band || !J.start || !J.kept || !J.band_failed || !J.bad)
    GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory converting COO to CSR");
  for (int t = 0; t < 2 * nt; ++t) J.bad[t] = -1;
  /* the entries' arrays come once they are counted */
  GS_TRY(gs_csr_create(&C, m_, n_, 0));
  gs_advise_huge(C->row_ptr, ((size_t)m + 1) * sizeof *C->row_ptr);
  J.C = C;

  /* 1-2: counts, offsets (row_ptr holds each row's start), bands, the entries' arrays. */
  gs_parallel(nt, step_count, &J);
  int64_t nnz = 0;
  for (int64_t i = 0; i < m; ++i) {
    const int64_t c = (int64_t)C->row_ptr[i];
    C->row_ptr[i] = nnz;
    nnz += c;
  }
  C->row_ptr[m] = nnz;
  J.band[0] = 0;
  for (int t = 1; t < nt; ++t)
    J.band[t] = first_row_at(C->row_ptr, J.band[t - 1], m, nnz / nt * t + (nnz % nt) * t / nt);
  J.band[nt] = m;
  for (int t = 0; t <= nt; ++t) J.start[t] = (int64_t)C->row_ptr[J.band[t]];
  gs_idx_t *col = (uint64_t)nnz <= SIZE_MAX / sizeof(gs_val_t)
                      ? malloc((size_t)(nnz ? nnz : 1) * sizeof *col)
                      : NULL;
  gs_val_t *val = col ? malloc((size_t)(nnz ? nnz : 1) * sizeof *val) : NULL;
  if (!col || !val) {
    free(col);
    free(val);
    GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory for a %d x %d CSR with %lld entries", m_, n_,
            (long long)nnz);
  }
  free(C->col);
  free(C->val);
  C->col = col;
  C->val = val;
  gs_advise_huge(C->col, (size_t)nnz * sizeof *C->col);
  gs_advise_huge(C->val, (size_t)nnz * sizeof *C->val);

  /* 3-4: scatter in COO order, then sort and sum each row. */
  gs_parallel(nt, step_scatter, &J);
  gs_parallel(nt, step_rows, &J);
  for (int t = 0; t < nt; ++t)
    if (J.band_failed[t]) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory sorting a CSR row");
  for (int t = 0; t < nt; ++t) /* bands in row order: the first band's is the first */
    if (J.bad[2 * t] >= 0) {
      bad[0] = J.bad[2 * t];
      bad[1] = J.bad[2 * t + 1];
      break;
    }

  /* 5: close the gaps left by summed duplicates. */
  int64_t w = 0;
  for (int t = 0; t < nt; ++t) {
    const int64_t lo = J.band[t], hi = J.band[t + 1];
    if (lo == hi) continue;
    const int64_t from = (int64_t)C->row_ptr[lo], shift = from - w;
    if (shift > 0) {
      memmove(C->col + w, C->col + from, (size_t)J.kept[t] * sizeof *C->col);
      memmove(C->val + w, C->val + from, (size_t)J.kept[t] * sizeof *C->val);
      for (int64_t i = lo; i < hi; ++i) C->row_ptr[i] = (int64_t)C->row_ptr[i] - shift;
    }
    w += J.kept[t];
  }
  C->row_ptr[m] = w;
  C->nnz = w;
  C->symmetry = symmetry;
  *out = C;
  C = NULL;
cleanup:
  free(J.band);
  free(J.start);
  free(J.kept);
  free(J.band_failed);
  free(J.bad);
  gs_csr_destroy(&C);
  return st;
}
