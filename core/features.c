/* core/features.c: structural features of a matrix (row-length statistics, diagonals, symmetry),
 * the inputs of format selection in 001_2a8c9fc1a323b852.txt (section 4: nnz, mean and
 * standard deviation of row lengths). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "gpusolve/matrix.h"

/* Binary search for column j in row i of a column-sorted CSR; returns position or -1. */
static gs_idx_t find_entry(const gs_csr_t *A, gs_idx_t i, gs_idx_t j)
{
  gs_idx_t lo = A->row_ptr[i], hi = A->row_ptr[i + 1] - 1;
  while (lo <= hi) {
    gs_idx_t mid = lo + (hi - lo) / 2;
    if (A->col[mid] == j) return mid;
    if (A->col[mid] < j) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

gs_status_t gs_csr_features(const gs_csr_t *A, gs_features_t *f)
{
  gs_status_t st = GS_SUCCESS;
  unsigned char *diag_seen = NULL;
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
    gs_idx_t len = A->row_ptr[i + 1] - A->row_ptr[i];
    if (len > f->row_max) f->row_max = len;
    if (len < f->row_min) f->row_min = len;
    if (len == 0) f->empty_rows++;
  }
  f->row_mean = m > 0 ? (double)A->nnz / m : 0.0;
  double ss = 0.0;
  for (gs_idx_t i = 0; i < m; ++i) {
    double d = (A->row_ptr[i + 1] - A->row_ptr[i]) - f->row_mean;
    ss += d * d;
  }
  f->row_std = m > 0 ? sqrt(ss / m) : 0.0;

  /* Occupied diagonals: offsets j - i range over [-(m-1), n-1]. */
  size_t ndiag = (size_t)m + (size_t)n;
  diag_seen = calloc(ndiag ? ndiag : 1, 1);
  if (!diag_seen) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory computing features");
  for (gs_idx_t i = 0; i < m; ++i)
    for (gs_idx_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) {
      size_t d = (size_t)((int64_t)A->col[p] - i + (m - 1));
      if (!diag_seen[d]) {
        diag_seen[d] = 1;
        f->diagonals++;
      }
    }

  if (m != n) goto cleanup; /* the remaining features need a square matrix */
  const gs_csr_t *B = A;
  if (!gs_csr_is_sorted(A)) {
    GS_TRY(gs_csr_transpose(&S, A)); /* transposing twice sorts the rows */
    gs_csr_t *S2 = NULL;
    GS_TRY(gs_csr_transpose(&S2, S));
    gs_csr_destroy(&S);
    S = S2;
    B = S;
  }
  f->structurally_symmetric = 1;
  f->numerically_symmetric = 1;
  f->diagonal_full = 1;
  f->diagonal_positive = 1;
  for (gs_idx_t i = 0; i < n; ++i) {
    gs_idx_t d = find_entry(B, i, i);
    if (d < 0 || B->val[d] == 0.0) f->diagonal_full = 0;
    if (d < 0 || !(B->val[d] > 0.0)) f->diagonal_positive = 0;
    for (gs_idx_t p = B->row_ptr[i]; p < B->row_ptr[i + 1] && f->structurally_symmetric; ++p) {
      gs_idx_t q = find_entry(B, B->col[p], i);
      if (q < 0) {
        f->structurally_symmetric = 0;
        f->numerically_symmetric = 0;
      } else if (B->val[q] != B->val[p]) {
        f->numerically_symmetric = 0;
      }
    }
  }
cleanup:
  free(diag_seen);
  gs_csr_destroy(&S);
  return st;
}
