/* core/features.c: structural features of a matrix (row-length statistics, diagonals, symmetry),
 * the inputs of format selection in Sedaghati et al., "Characterizing Dataset Dependence for
 * SpMV on GPUs", PPAA 2015 (section 4: nnz, mean and
 * standard deviation of row lengths). Numerical symmetry is measured, not tested for equality:
 * FEM assemblies stored `general` are symmetric only to rounding (GS_SYMMETRY_RTOL, matrix.h).
 *
 * Exactness. Every pass reduces to order-independent quantities (core/features.h: counts, an
 * exact 128-bit sum of squared row lengths, maxima, minima, flags), from which
 * gs_features_finish forms the doubles by fixed expressions. So the result does not depend on
 * how the entries are split among threads, and the device pass (spmv/features_kernels.cu)
 * gives the same struct bit for bit. The standard deviation in particular is not a floating
 * sum of squared deviations (whose rounding depends on the order) but
 *   var = (m * sum len^2 - nnz^2) / m^2,
 * whose numerator is an exact integer (128 bits; >= 0 by Cauchy-Schwarz): row_std =
 * sqrt((double)num) / m, three roundings of an exact value (relative error ~2^-52). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/features.h"
#include "core/parallel.h"
#include "gpusolve/matrix.h"

__extension__ typedef unsigned __int128 u128_t;

void gs_features_finish(const gs_features_raw_t *r, gs_features_t *f)
{
  const gs_idx_t m = r->m, n = r->n;
  memset(f, 0, sizeof *f);
  f->rows = m;
  f->cols = n;
  f->nnz = r->nnz;
  f->symmetry = r->symmetry;
  f->density = (m > 0 && n > 0) ? (double)r->nnz / ((double)m * (double)n) : 0.0;
  f->row_max = r->row_max;
  f->row_min = m > 0 ? r->row_min : 0;
  f->empty_rows = (gs_idx_t)r->empty_rows;
  f->row_mean = m > 0 ? (double)r->nnz / m : 0.0;
  if (m > 0) {
    const u128_t sumsq = ((u128_t)r->sumsq_hi << 64) | r->sumsq_lo;
    const u128_t nz = (u128_t)(uint64_t)r->nnz;
    if (sumsq <= ~(u128_t)0 / (u128_t)m) { /* always without duplicate entries (< 2^124) */
      const u128_t num = (u128_t)m * sumsq - nz * nz;
      f->row_std = sqrt((double)num) / (double)m;
    } else { /* rows longer than n: not a valid sorted CSR; still deterministic */
      const double v = (double)sumsq / m - f->row_mean * f->row_mean;
      f->row_std = v > 0.0 ? sqrt(v) : 0.0;
    }
  }
  f->diagonals = (gs_idx_t)r->diagonals;
  if (m != n) { /* the remaining features need a square matrix */
    f->asymmetry = INFINITY;
    return;
  }
  f->structurally_symmetric = r->structurally_symmetric;
  f->diagonal_full = r->diagonal_full;
  f->diagonal_positive = r->diagonal_positive;
  f->asymmetry = !r->finite ? INFINITY : r->amax > 0.0 ? r->dmax / r->amax : 0.0;
  f->numerically_symmetric = f->asymmetry <= GS_SYMMETRY_RTOL;
}

/* One share of the pass: rows [r0, r1) of B, its own bitmap of occupied diagonals (bit
 * j - i + m - 1), its own cursors into the rows (square only) and its own partial sums. */
typedef struct feat_share {
  gs_idx_t r0, r1;
  uint64_t *seen;
  uint32_t *cur; /* cur[j]: how far into row j this share's mirror lookups have gone */
  gs_features_raw_t part;
} feat_share_t;

typedef struct feat_job {
  const gs_csr_t *B;
  feat_share_t *sh;
  int square;
} feat_job_t;

static void feat_rows(void *arg, int t)
{
  const feat_job_t *J = arg;
  feat_share_t *s = &J->sh[t];
  /* locals throughout: stores through pointers could alias the matrix's arrays */
  const gs_off_t *restrict rp = J->B->row_ptr;
  const gs_idx_t *restrict col = J->B->col;
  const gs_val_t *restrict val = J->B->val;
  uint64_t *restrict seen = s->seen;
  uint32_t *restrict cur = s->cur;
  const int64_t m = J->B->m;
  const int square = J->square;
  gs_off_t row_max = 0, row_min = INT64_MAX;
  int64_t empty = 0;
  uint64_t sq_hi = 0, sq_lo = 0;
  int pattern = 1, full = 1, positive = 1, finite = 1;
  double amax = 0.0, dmax = 0.0;
  for (gs_idx_t i = s->r0; i < s->r1; ++i) {
    const gs_off_t b = rp[i], e = rp[i + 1], len = e - b;
    row_max = len > row_max ? len : row_max;
    row_min = len < row_min ? len : row_min;
    empty += len == 0;
    gs_sumsq_add(&sq_hi, &sq_lo, (uint64_t)len);
    for (gs_off_t p = b; p < e; ++p) { /* occupied diagonals: a pass of its own (no chains) */
      const uint64_t d = (uint64_t)((int64_t)col[p] - i + (m - 1));
      const uint64_t bit = (uint64_t)1 << (d & 63);
      if (!(seen[d >> 6] & bit)) seen[d >> 6] |= bit; /* mostly set already: no store */
    }
  }
  for (gs_idx_t i = s->r0; square && i < s->r1; ++i) {
    const gs_off_t b = rp[i], e = rp[i + 1];
    int diag = 0;
    for (gs_off_t p = b; p < e; ++p) {
      const gs_idx_t j = col[p];
      const double a = val[p];
      if (!isfinite(a)) finite = 0;
      else if (fabs(a) > amax) amax = fabs(a);
      if (j == i) { /* its own mirror */
        diag = 1;
        if (a == 0.0) full = 0;
        if (!(a > 0.0)) positive = 0;
        continue;
      }
      /* Symmetry, O(nnz + n) a share: its rows come in increasing i, so the lookups of the
       * mirrors (j, i) in any one row j come with increasing i, and cur[j] walks row j
       * forward once. Every stored entry is compared with its mirror (0 when absent), so a
       * pattern difference in either direction is seen. */
      const gs_off_t base = rp[j], end = rp[j + 1];
      gs_off_t q = base + cur[j];
      while (q < end && col[q] < i) ++q;
      cur[j] = (uint32_t)(q - base); /* rows of < 2^32 entries (any without duplicates) */
      double mirror = 0.0;
      if (q < end && col[q] == i) mirror = val[q];
      else pattern = 0;
      const double dv = fabs(a - mirror);
      if (dv > dmax) dmax = dv;
    }
    if (!diag) full = positive = 0;
  }
  gs_features_raw_t *r = &s->part;
  r->row_max = row_max;
  r->row_min = row_min;
  r->empty_rows = empty;
  r->sumsq_hi = sq_hi;
  r->sumsq_lo = sq_lo;
  r->structurally_symmetric = pattern;
  r->diagonal_full = full;
  r->diagonal_positive = positive;
  r->finite = finite;
  r->amax = amax;
  r->dmax = dmax;
}

static int popcount64(uint64_t x)
{
  int c = 0;
  for (; x; x &= x - 1) ++c;
  return c;
}

/* gs_csr_features, with `sorted` 1 when the caller knows A's rows are sorted (no pass to check
 * it), 0 when it does not. */
static gs_status_t csr_features(const gs_csr_t *A, int sorted, gs_features_t *f)
{
  gs_status_t st = GS_SUCCESS;
  gs_csr_t *S = NULL; /* sorted copy, only when A's rows are unsorted */
  feat_share_t *sh = NULL;
  uint64_t *seen = NULL;
  uint32_t *cur = NULL;
  int nt = 1;
  if (!A || !f) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_csr_features: NULL argument");
  memset(f, 0, sizeof *f);
  const gs_idx_t m = A->m, n = A->n;
  const int square = m == n;
  const gs_csr_t *B = A;
  if (square && !sorted && !gs_csr_is_sorted(A)) { /* the mirror searches need sorted rows */
    GS_TRY(gs_csr_transpose(&S, A)); /* transposing twice sorts the rows */
    gs_csr_t *S2 = NULL;
    GS_TRY(gs_csr_transpose(&S2, S));
    gs_csr_destroy(&S);
    S = S2;
    B = S;
  }

  /* Threads for large matrices, each with its own diagonal bitmap (m + n bits) and cursors
   * (4n bytes), so long as these stay small beside the matrix. Shares of about equal entry
   * counts. */
  const size_t words = ((size_t)m + (size_t)n) / 64 + 1, curs = square ? (size_t)n : 0;
  if (A->nnz >= (gs_off_t)1 << 20) nt = gs_mm_threads();
  if (nt > 64) nt = 64;
  if (nt > m) nt = m > 0 ? (int)m : 1;
  const size_t budget = (size_t)A->nnz * 4 > ((size_t)64 << 20) ? (size_t)A->nnz * 4
                                                                 : ((size_t)64 << 20);
  while (nt > 1 && (size_t)nt * (words * sizeof *seen + curs * sizeof *cur) > budget) nt /= 2;
  if (nt < 1) nt = 1;
  sh = calloc((size_t)nt, sizeof *sh);
  seen = calloc((size_t)nt * words, sizeof *seen);
  cur = calloc((size_t)nt * curs + 1, sizeof *cur);
  if (!sh || !seen || !cur) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory computing features");
  for (int t = 0; t < nt; ++t) {
    /* rows from the one holding entry nnz * t / nt: the first i with row_ptr[i+1] > target */
    const gs_off_t target = (gs_off_t)((u128_t)(uint64_t)B->nnz * (unsigned)t / (unsigned)nt);
    gs_idx_t lo = 0, hi = m;
    while (t > 0 && lo < hi) {
      const gs_idx_t mid = lo + (hi - lo) / 2;
      if (B->row_ptr[mid + 1] > target) hi = mid;
      else lo = mid + 1;
    }
    sh[t].r0 = t == 0 ? 0 : lo;
    if (t > 0) sh[t - 1].r1 = sh[t].r0;
    sh[t].seen = seen + (size_t)t * words;
    sh[t].cur = cur + (size_t)t * curs;
  }
  sh[nt - 1].r1 = m;
  feat_job_t J = {B, sh, square};
  if (nt > 1) gs_parallel(nt, feat_rows, &J);
  else feat_rows(&J, 0);

  gs_features_raw_t r;
  memset(&r, 0, sizeof r);
  r.m = m;
  r.n = n;
  r.nnz = A->nnz;
  r.symmetry = A->symmetry;
  r.row_min = INT64_MAX;
  r.structurally_symmetric = r.diagonal_full = r.diagonal_positive = r.finite = square;
  for (int t = 0; t < nt; ++t) {
    const gs_features_raw_t *p = &sh[t].part;
    if (p->row_max > r.row_max) r.row_max = p->row_max;
    if (p->row_min < r.row_min) r.row_min = p->row_min;
    r.empty_rows += p->empty_rows;
    r.sumsq_lo += p->sumsq_lo;
    r.sumsq_hi += p->sumsq_hi + (r.sumsq_lo < p->sumsq_lo);
    if (!square) continue;
    r.structurally_symmetric &= p->structurally_symmetric;
    r.diagonal_full &= p->diagonal_full;
    r.diagonal_positive &= p->diagonal_positive;
    r.finite &= p->finite;
    if (p->amax > r.amax) r.amax = p->amax;
    if (p->dmax > r.dmax) r.dmax = p->dmax;
  }
  for (size_t w = 0; w < words; ++w) {
    uint64_t x = 0;
    for (int t = 0; t < nt; ++t) x |= seen[(size_t)t * words + w];
    r.diagonals += popcount64(x);
  }
  gs_features_finish(&r, f);
cleanup:
  free(cur);
  free(seen);
  free(sh);
  gs_csr_destroy(&S);
  return st;
}

gs_status_t gs_csr_features(const gs_csr_t *A, gs_features_t *f) { return csr_features(A, 0, f); }

gs_status_t gs_csr_features_sorted(const gs_csr_t *A, gs_features_t *f)
{
  return csr_features(A, 1, f);
}
