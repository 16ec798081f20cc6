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
  free((*S)->valf);
  free((*S)->perm);
  free(*S);
  *S = NULL;
}

gs_status_t gs_sell_round(gs_sell_t *S)
{
  if (!S || !S->val) return GS_SUCCESS; /* already rounded, or no slots */
  GS_CHECK(gs_fmt_round_values(&S->valf, S->val, (size_t)S->slots, "SELL values"));
  free(S->val);
  S->val = NULL;
  return GS_SUCCESS;
}

/* ---- the stored row order (sigma windows) ------------------------------------------------- */

typedef struct sell_key {
  gs_idx_t len, row;
} sell_key_t;

/* Longer rows first; equal lengths in their original order (a stable sort). */
static int sell_key_cmp(const void *a, const void *b)
{
  const sell_key_t *p = a, *q = b;
  if (p->len != q->len) return p->len > q->len ? -1 : 1;
  return (p->row > q->row) - (p->row < q->row);
}

/* Whether rows [w0, w1) of A are already longest first (sorting would move none of them). */
static int window_sorted(const gs_csr_t *A, int64_t w0, int64_t w1)
{
  for (int64_t i = w0 + 1; i < w1; ++i)
    if (gs_fmt_row_len(A, (gs_idx_t)i) > gs_fmt_row_len(A, (gs_idx_t)(i - 1))) return 0;
  return 1;
}

/* *perm = the stored order of A's rows for a window of sigma rows (the last window may be
 * partial), or NULL when sigma <= 1 or sorting leaves every row in place (the kernels then skip
 * the indirection). Windows already in order are not sorted (a stencil's rows, a diagonal).
 * GS_ERR_HOST_MEMORY. */
static gs_status_t sell_order(const gs_csr_t *A, gs_idx_t sigma, gs_idx_t **perm)
{
  *perm = NULL;
  if (sigma <= 1 || A->m <= 1) return GS_SUCCESS;
  sell_key_t *key = NULL;
  gs_idx_t *p = NULL;
  for (int64_t w0 = 0; w0 < A->m; w0 += sigma) {
    int64_t w1 = w0 + sigma < A->m ? w0 + sigma : A->m;
    if (window_sorted(A, w0, w1)) continue;
    if (!p) { /* the first window that moves: from here on the order is explicit */
      p = malloc((size_t)A->m * sizeof *p);
      key = malloc((size_t)(sigma < A->m ? sigma : A->m) * sizeof *key);
      if (!p || !key) {
        free(p);
        free(key);
        return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory sorting SELL rows");
      }
      for (gs_idx_t i = 0; i < A->m; ++i) p[i] = i;
    }
    for (int64_t i = w0; i < w1; ++i) {
      key[i - w0].len = gs_fmt_row_len(A, (gs_idx_t)i);
      key[i - w0].row = (gs_idx_t)i;
    }
    qsort(key, (size_t)(w1 - w0), sizeof *key, sell_key_cmp);
    for (int64_t i = w0; i < w1; ++i) p[i] = key[i - w0].row;
  }
  free(key);
  *perm = p;
  return GS_SUCCESS;
}

/* Pass 1: the padded width of every slice of the stored order, in 64 bits (an oversized layout
 * is reported, not wrapped). Stored row r is row perm[r] of A (perm NULL: row r). slice_ptr
 * (nslices + 1 entries, or NULL) gets the offsets while they fit 32 bits. */
static void sell_widths(const gs_csr_t *A, const gs_idx_t *perm, int64_t C, int64_t P,
                        gs_idx_t *slice_ptr, int64_t *slots_out, int64_t *used_out,
                        gs_idx_t *max_width_out)
{
  const int64_t nslices = A->m == 0 ? 0 : ((int64_t)A->m - 1) / C + 1;
  int64_t slots = 0, used = 0; /* used: slots of the rows that exist (no tail padding rows) */
  gs_idx_t max_width = 0;
  if (slice_ptr) slice_ptr[0] = 0;
  for (int64_t s = 0; s < nslices; ++s) {
    int64_t lo = s * C, hi = lo + C < A->m ? lo + C : A->m;
    int64_t w = 0;
    for (int64_t r = lo; r < hi; ++r) {
      gs_idx_t len = gs_fmt_row_len(A, perm ? perm[r] : (gs_idx_t)r);
      if (len > w) w = len;
    }
    w = (w + P - 1) / P * P; /* SELL-P: a multiple of the threads per row */
    if (w > max_width) max_width = (gs_idx_t)(w < INT32_MAX ? w : INT32_MAX);
    slots += C * w;
    used += (hi - lo) * w;
    if (slice_ptr && slots <= INT32_MAX) slice_ptr[s + 1] = (gs_idx_t)slots;
  }
  *slots_out = slots;
  *used_out = used;
  *max_width_out = max_width;
}

static gs_status_t sell_check_params(const gs_csr_t *A, const gs_sell_params_t *p)
{
  const char *name = p->name ? p->name : "SELL";
  if (p->slice_size < 1)
    return GS_ERROR(GS_ERR_INVALID_ARG, "%s slice size must be >= 1, not %d", name,
                    (int)p->slice_size);
  if (p->pad < 1 || p->sigma < 1)
    return GS_ERROR(GS_ERR_INVALID_ARG, "%s: padding multiple and sorting window must be >= 1",
                    name);
  if (A->m < 0 || A->n < 0 || A->nnz < 0)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_sell_build: negative size");
  return GS_SUCCESS;
}

gs_status_t gs_sell_count(const gs_csr_t *A, const gs_sell_params_t *p, int64_t *slots,
                          int64_t *used, gs_idx_t *max_width)
{
  gs_idx_t *perm = NULL;
  if (!A || !p || !slots || !used || !max_width)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_sell_count: NULL argument");
  GS_CHECK(sell_check_params(A, p));
  GS_CHECK(sell_order(A, p->sigma, &perm));
  sell_widths(A, perm, p->slice_size, p->pad, NULL, slots, used, max_width);
  free(perm);
  return GS_SUCCESS;
}

gs_status_t gs_sell_build(gs_sell_t **out, const gs_csr_t *A, gs_idx_t slice_size,
                          double max_fill)
{
  const gs_sell_params_t p = {slice_size, 1, 1, max_fill, "SELL"};
  return gs_sell_build_p(out, A, &p);
}

gs_status_t gs_sell_check(int64_t slots, int64_t used, gs_idx_t max_width, gs_off_t nnz,
                          const gs_sell_params_t *p)
{
  const char *name = p->name ? p->name : "SELL";
  if (slots > INT32_MAX)
    return GS_ERROR(GS_ERR_FORMAT_FILL,
                    "%s layout of this matrix needs %lld slots, more than 2^31-1 slots (32-bit "
                    "slice offsets; slice %d rows, widths a multiple of %d)",
                    name, (long long)slots, (int)p->slice_size, (int)p->pad);
  /* The guard measures padding inside the rows (the cost of uneven row lengths), not the
   * rows that only pad the last slice to C: those would refuse every matrix of few rows. */
  if (p->max_fill > 0.0 && (double)used > p->max_fill * (double)nnz)
    return GS_ERROR(GS_ERR_FORMAT_FILL,
                    "%s fill refused: rows padded to %lld slots for %lld nonzeros (%.2fx, limit "
                    "%.2fx; longest row %d, slice %d rows, widths a multiple of %d, sorting "
                    "window %d)",
                    name, (long long)used, (long long)nnz, (double)used / (double)(nnz ? nnz : 1),
                    p->max_fill, (int)max_width, (int)p->slice_size, (int)p->pad, (int)p->sigma);
  return GS_SUCCESS;
}

gs_status_t gs_sell_build_p(gs_sell_t **out, const gs_csr_t *A, const gs_sell_params_t *p)
{
  gs_status_t st = GS_SUCCESS;
  gs_sell_t *S = NULL;
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_sell_build: out is NULL");
  *out = NULL;
  if (!A || !p) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_sell_build: NULL argument");
  GS_CHECK(sell_check_params(A, p));
  const char *name = p->name ? p->name : "SELL";

  const int64_t C = p->slice_size;
  const gs_idx_t nslices = A->m == 0 ? 0 : (gs_idx_t)(((int64_t)A->m - 1) / C + 1);
  S = calloc(1, sizeof *S);
  if (!S) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory building a %s layout", name);
  S->m = A->m;
  S->n = A->n;
  S->nnz = A->nnz;
  S->slice_size = p->slice_size;
  S->nslices = nslices;
  S->pad = p->pad;
  S->sigma = p->sigma;
  S->slice_ptr = malloc(((size_t)nslices + 1) * sizeof *S->slice_ptr);
  if (!S->slice_ptr) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory building a %s layout", name);
  GS_TRY(sell_order(A, p->sigma, &S->perm));

  int64_t slots = 0, used = 0;
  gs_idx_t max_width = 0;
  sell_widths(A, S->perm, C, p->pad, S->slice_ptr, &slots, &used, &max_width);
  GS_TRY(gs_sell_check(slots, used, max_width, A->nnz, p));
  S->slots = (gs_idx_t)slots;
  S->used = used;
  S->max_width = max_width;
  if (slots == 0) {
    *out = S;
    return GS_SUCCESS;
  }

  /* Pass 2: padding everywhere, then each row's entries down its slot column. */
  S->col = malloc((size_t)slots * sizeof *S->col);
  S->val = malloc((size_t)slots * sizeof *S->val);
  if (!S->col || !S->val)
    GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory building a %s layout (%lld slots)", name,
            (long long)slots);
  for (int64_t q = 0; q < slots; ++q) {
    S->col[q] = -1;
    S->val[q] = 0.0;
  }
  for (gs_idx_t r = 0; r < A->m; ++r) {
    const gs_idx_t i = S->perm ? S->perm[r] : r;
    int64_t base = (int64_t)S->slice_ptr[r / p->slice_size] + r % p->slice_size;
    for (gs_off_t q = A->row_ptr[i], k = 0; q < A->row_ptr[i + 1]; ++q, ++k) {
      S->col[base + k * C] = A->col[q];
      S->val[base + k * C] = A->val[q];
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
    for (gs_idx_t r = 0; r < S->m; ++r) { /* stored row r is row i of A */
      const gs_idx_t i = S->perm ? S->perm[r] : r, s = r / S->slice_size;
      int64_t base = (int64_t)S->slice_ptr[s] + r % S->slice_size;
      int64_t w = ((int64_t)S->slice_ptr[s + 1] - S->slice_ptr[s]) / C;
      double sum = 0.0;
      for (int64_t k = 0; k < w; ++k) {
        gs_idx_t c = S->col[base + k * C];
        if (c >= 0) sum += gs_fmt_val(S->val, S->valf, (size_t)(base + k * C)) * x[c];
      }
      y[i] = beta == 0.0 ? alpha * sum : alpha * sum + beta * y[i]; /* beta = 0: y not read */
    }
  } else {
    gs_fmt_scale_host(S->n, beta, y);
    for (gs_idx_t r = 0; r < S->m; ++r) {
      const gs_idx_t i = S->perm ? S->perm[r] : r, s = r / S->slice_size;
      int64_t base = (int64_t)S->slice_ptr[s] + r % S->slice_size;
      int64_t w = ((int64_t)S->slice_ptr[s + 1] - S->slice_ptr[s]) / C;
      if (w == 0) continue; /* x may be NULL when nothing is stored */
      double ax = alpha * x[i];
      for (int64_t k = 0; k < w; ++k) {
        gs_idx_t c = S->col[base + k * C];
        if (c >= 0) y[c] += gs_fmt_val(S->val, S->valf, (size_t)(base + k * C)) * ax;
      }
    }
  }
  return GS_SUCCESS;
}
