/* spmv/sell_build.c: host builder of cuSPARSE's sliced ELLPACK layout from CSR, and its host
 * apply (layout described in spmv/sell.h). Pure C, no CUDA. */
#include <stdint.h>
#include <stdlib.h>

#include "core/error.h"
#include "spmv/formats.h" /* gs_fmt_scale_host, gs_fmt_row_len */
#include "spmv/sell.h"

void gs_sell_destroy(gs_sell_t **S)
{
  if (!S || !*S) return;
  free((*S)->slice_ptr);
  free((*S)->col);
  free((*S)->val);
  free(*S);
  *S = NULL;
}

gs_status_t gs_sell_build(gs_sell_t **out, const gs_csr_t *A, gs_idx_t slice_size,
                          double max_fill)
{
  gs_status_t st = GS_SUCCESS;
  gs_sell_t *S = NULL;
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_sell_build: out is NULL");
  *out = NULL;
  if (!A) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_sell_build: A is NULL");
  if (slice_size < 1)
    return GS_ERROR(GS_ERR_INVALID_ARG, "SELL slice size must be >= 1, not %d", (int)slice_size);
  if (A->m < 0 || A->n < 0 || A->nnz < 0)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_sell_build: negative size");

  const int64_t C = slice_size;
  const gs_idx_t nslices = A->m == 0 ? 0 : (gs_idx_t)(((int64_t)A->m - 1) / C + 1);
  S = calloc(1, sizeof *S);
  if (!S) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory building a SELL layout");
  S->m = A->m;
  S->n = A->n;
  S->nnz = A->nnz;
  S->slice_size = slice_size;
  S->nslices = nslices;
  S->slice_ptr = malloc(((size_t)nslices + 1) * sizeof *S->slice_ptr);
  if (!S->slice_ptr) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory building a SELL layout");

  /* Pass 1: slice widths and offsets, in 64 bits so that an oversized layout is caught. */
  int64_t slots = 0, used = 0; /* used: slots of the rows that exist (no tail padding rows) */
  gs_idx_t max_width = 0;
  S->slice_ptr[0] = 0;
  for (gs_idx_t s = 0; s < nslices; ++s) {
    int64_t lo = (int64_t)s * C, hi = lo + C < A->m ? lo + C : A->m;
    gs_idx_t w = 0;
    for (int64_t i = lo; i < hi; ++i) {
      gs_idx_t len = gs_fmt_row_len(A, (gs_idx_t)i);
      if (len > w) w = len;
    }
    if (w > max_width) max_width = w;
    slots += C * w;
    used += (hi - lo) * w;
    if (slots > INT32_MAX)
      GS_FAIL(GS_ERR_FORMAT_FILL,
              "SELL layout of this matrix needs more than 2^31-1 slots (32-bit slice offsets)");
    S->slice_ptr[s + 1] = (gs_idx_t)slots;
  }
  /* The guard measures padding inside the rows (the cost of uneven row lengths), not the
   * rows that only pad the last slice to C: those would refuse every matrix of few rows. */
  if (max_fill > 0.0 && (double)used > max_fill * (double)A->nnz)
    GS_FAIL(GS_ERR_FORMAT_FILL,
            "SELL fill refused: rows padded to %lld slots for %d nonzeros (%.2fx, limit %.2fx; "
            "longest row %d)",
            (long long)used, (int)A->nnz, (double)used / (double)(A->nnz ? A->nnz : 1),
            max_fill, (int)max_width);
  S->slots = (gs_idx_t)slots;
  S->max_width = max_width;
  if (slots == 0) {
    *out = S;
    return GS_SUCCESS;
  }

  /* Pass 2: padding everywhere, then each row's entries down its slot column. */
  S->col = malloc((size_t)slots * sizeof *S->col);
  S->val = malloc((size_t)slots * sizeof *S->val);
  if (!S->col || !S->val) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory building a SELL layout");
  for (int64_t p = 0; p < slots; ++p) {
    S->col[p] = -1;
    S->val[p] = 0.0;
  }
  for (gs_idx_t i = 0; i < A->m; ++i) {
    int64_t base = (int64_t)S->slice_ptr[i / slice_size] + i % slice_size;
    for (gs_off_t p = A->row_ptr[i], k = 0; p < A->row_ptr[i + 1]; ++p, ++k) {
      S->col[base + k * C] = A->col[p];
      S->val[base + k * C] = A->val[p];
    }
  }
  *out = S;
  S = NULL;
cleanup:
  gs_sell_destroy(&S);
  return st;
}

gs_status_t gs_sell_spmv_host(const gs_sell_t *S, gs_op_t op, gs_val_t alpha, const gs_val_t *x,
                              gs_val_t beta, gs_val_t *y)
{
  if (!S) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_sell_spmv_host: S is NULL");
  const int trans = op == GS_OP_T;
  if (op != GS_OP_N && op != GS_OP_T)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_sell_spmv_host: op must be GS_OP_N or GS_OP_T");
  gs_idx_t in = trans ? S->m : S->n, outn = trans ? S->n : S->m;
  if ((outn > 0 && !y) || (in > 0 && S->slots > 0 && alpha != 0.0 && !x))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_sell_spmv_host: NULL argument");
  if (alpha == 0.0) { /* BLAS, as gs_csr_spmv_host: the layout and x are not read */
    gs_fmt_scale_host(outn, beta, y);
    return GS_SUCCESS;
  }
  const int64_t C = S->slice_size;

  if (!trans) {
    for (gs_idx_t i = 0; i < S->m; ++i) {
      gs_idx_t s = i / S->slice_size;
      int64_t base = (int64_t)S->slice_ptr[s] + i % S->slice_size;
      int64_t w = ((int64_t)S->slice_ptr[s + 1] - S->slice_ptr[s]) / C;
      double sum = 0.0;
      for (int64_t k = 0; k < w; ++k) {
        gs_idx_t c = S->col[base + k * C];
        if (c >= 0) sum += S->val[base + k * C] * x[c];
      }
      y[i] = beta == 0.0 ? alpha * sum : alpha * sum + beta * y[i]; /* beta = 0: y not read */
    }
  } else {
    gs_fmt_scale_host(S->n, beta, y);
    for (gs_idx_t i = 0; i < S->m; ++i) {
      gs_idx_t s = i / S->slice_size;
      int64_t base = (int64_t)S->slice_ptr[s] + i % S->slice_size;
      int64_t w = ((int64_t)S->slice_ptr[s + 1] - S->slice_ptr[s]) / C;
      if (w == 0) continue; /* x may be NULL when nothing is stored */
      double ax = alpha * x[i];
      for (int64_t k = 0; k < w; ++k) {
        gs_idx_t c = S->col[base + k * C];
        if (c >= 0) y[c] += S->val[base + k * C] * ax;
      }
    }
  }
  return GS_SUCCESS;
}
