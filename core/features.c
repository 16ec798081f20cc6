/* core/features.c: structural features of a matrix (row-length statistics, diagonals, symmetry),
 * the inputs of format selection in Sedaghati et al., "Characterizing Dataset Dependence for
 * SpMV on GPUs", PPAA 2015 (section 4: nnz, mean and
 * standard deviation of row lengths). Numerical symmetry is measured, not tested for equality:
 * FEM assemblies stored `general` are symmetric only to rounding (GS_SYMMETRY_RTOL, matrix.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "gpusolve/matrix.h"

gs_status_t gs_csr_features(const gs_csr_t *A, gs_features_t *f)
{
  gs_status_t st = GS_SUCCESS;
  unsigned char *diag_seen = NULL;
  gs_off_t *cur = NULL;  /* per-row cursor of the symmetry sweep */
  gs_csr_t *S = NULL; /* sorted copy, only when A's rows are unsorted */
  if (!A || !f) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_csr_features: NULL argument");
  memset(f, 0, sizeof *f);
  const gs_idx_t m = A->m, n = A->n;
  f->rows = m;
  f->cols = n;
  f->nnz = A->nnz;
  f->symmetry = A->symmetry;
  f->density = (m > 0 && n > 0) ? (double)A->nnz / ((double)m * (double)n) : 0.0;

  /* Row lengths: mean and population standard deviation (two-pass for accuracy). */
  f->row_min = m > 0 ? INT32_MAX : 0;
  for (gs_idx_t i = 0; i < m; ++i) {
    gs_off_t len = A->row_ptr[i + 1] - A->row_ptr[i];
    if (len > f->row_max) f->row_max = len;
    if (len < f->row_min) f->row_min = len;
    if (len == 0) f->empty_rows++;
  }
  f->row_mean = m > 0 ? (double)A->nnz / m : 0.0;
  double ss = 0.0;
  for (gs_idx_t i = 0; i < m; ++i) {
    double d = (double)(A->row_ptr[i + 1] - A->row_ptr[i]) - f->row_mean;
    ss += d * d;
  }
  f->row_std = m > 0 ? sqrt(ss / m) : 0.0;

  /* Occupied diagonals: offsets j - i range over [-(m-1), n-1]. */
  size_t ndiag = (size_t)m + (size_t)n;
  diag_seen = calloc(ndiag ? ndiag : 1, 1);
  if (!diag_seen) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory computing features");
  for (gs_idx_t i = 0; i < m; ++i)
    for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) {
      size_t d = (size_t)((int64_t)A->col[p] - i + (m - 1));
      if (!diag_seen[d]) {
        diag_seen[d] = 1;
        f->diagonals++;
      }
    }

  if (m != n) { /* the remaining features need a square matrix */
    f->asymmetry = INFINITY;
    goto cleanup;
  }
  const gs_csr_t *B = A;
  if (!gs_csr_is_sorted(A)) {
    GS_TRY(gs_csr_transpose(&S, A)); /* transposing twice sorts the rows */
    gs_csr_t *S2 = NULL;
    GS_TRY(gs_csr_transpose(&S2, S));
    gs_csr_destroy(&S);
    S = S2;
    B = S;
  }

  /* Symmetry in one sweep, O(nnz + n): rows are visited in increasing i, so the lookups of the
   * mirrors (j, i) in any one row j come with increasing i; cur[j] walks row j forward once.
   * Every stored entry is compared with its mirror (0 when absent), so a pattern difference in
   * either direction is seen. */
  cur = malloc((n ? (size_t)n : 1) * sizeof *cur);
  if (!cur) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory computing features");
  for (gs_idx_t j = 0; j < n; ++j) cur[j] = B->row_ptr[j];
  f->structurally_symmetric = 1;
  f->diagonal_full = 1;
  f->diagonal_positive = 1;
  double amax = 0.0, dmax = 0.0;
  int finite = 1;
  for (gs_idx_t i = 0; i < n; ++i) {
    int diag = 0;
    for (gs_off_t p = B->row_ptr[i]; p < B->row_ptr[i + 1]; ++p) {
      const gs_idx_t j = B->col[p];
      const double a = B->val[p];
      if (!isfinite(a)) finite = 0;
      else if (fabs(a) > amax) amax = fabs(a);
      if (j == i) { /* its own mirror */
        diag = 1;
        if (a == 0.0) f->diagonal_full = 0;
        if (!(a > 0.0)) f->diagonal_positive = 0;
        continue;
      }
      gs_off_t q = cur[j];
      const gs_off_t end = B->row_ptr[j + 1];
      while (q < end && B->col[q] < i) ++q;
      cur[j] = q;
      double b = 0.0;
      if (q < end && B->col[q] == i) b = B->val[q];
      else f->structurally_symmetric = 0;
      const double d = fabs(a - b);
      if (d > dmax) dmax = d;
    }
    if (!diag) f->diagonal_full = f->diagonal_positive = 0;
  }
  f->asymmetry = !finite ? INFINITY : amax > 0.0 ? dmax / amax : 0.0;
  f->numerically_symmetric = f->asymmetry <= GS_SYMMETRY_RTOL;
cleanup:
  free(diag_seen);
  free(cur);
  gs_csr_destroy(&S);
  return st;
}
