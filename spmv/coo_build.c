/* spmv/coo_build.c: COO layout builder and a host emulation of the segmented-reduction kernel
 * (Bell & Garland, SC09, sections 3.4 and 3.7; CUSP coo_flat_spmv) on the same partition. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "spmv/formats.h"

#define WARP 32

void gs_coo_partition(int64_t nnz, int64_t max_warps, gs_idx_t *warps, int64_t *interval)
{
  int64_t chunks = (nnz + WARP - 1) / WARP;
  if (max_warps < 1) max_warps = 1;
  if (nnz <= 0) {
    *warps = 0;
    *interval = WARP;
    return;
  }
  int64_t w = chunks < max_warps ? chunks : max_warps;
  int64_t iv = WARP * ((chunks + w - 1) / w); /* whole chunks per warp: aligned loads */
  *interval = iv;
  *warps = (gs_idx_t)((nnz + iv - 1) / iv);   /* drop warps the rounding left without work */
}

gs_status_t gs_coo_layout_build_tail(gs_coo_layout_t **out, const gs_csr_t *A, gs_idx_t skip)
{
  gs_status_t st = GS_SUCCESS;
  gs_coo_layout_t *L = NULL;
  unsigned char *seen = NULL;
  if (!out || !A || skip < 0) return GS_ERROR(GS_ERR_INVALID_ARG, "coo build: bad argument");
  *out = NULL;
  L = calloc(1, sizeof *L);
  if (!L) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory building COO");
  L->m = A->m;
  L->n = A->n;
  int64_t nnz = 0;
  for (gs_idx_t i = 0; i < A->m; ++i) {
    gs_off_t len = A->row_ptr[i + 1] - A->row_ptr[i];
    if (len > skip) nnz += len - skip;
  }
  L->nnz = (gs_idx_t)nnz;
  if (nnz > 0) {
    L->row = malloc((size_t)nnz * sizeof *L->row);
    L->col = malloc((size_t)nnz * sizeof *L->col);
    L->val = malloc((size_t)nnz * sizeof *L->val);
    seen = calloc((size_t)A->n, 1);
    if (!L->row || !L->col || !L->val || !seen)
      GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory building COO (%lld entries)",
              (long long)nnz);
  }
  int64_t q = 0;
  for (gs_idx_t i = 0; i < A->m; ++i) {
    gs_off_t p0 = A->row_ptr[i] + skip, p1 = A->row_ptr[i + 1];
    if (p0 < p1) ++L->rows_touched;
    for (gs_off_t p = p0; p < p1; ++p, ++q) {
      L->row[q] = i;
      L->col[q] = A->col[p];
      L->val[q] = A->val[p];
      if (!seen[A->col[p]]) {
        seen[A->col[p]] = 1;
        ++L->cols_touched;
      }
    }
  }
  *out = L;
  L = NULL;
cleanup:
  free(seen);
  gs_coo_layout_destroy(&L);
  return st;
}

gs_status_t gs_coo_layout_build(gs_coo_layout_t **out, const gs_csr_t *A)
{
  return gs_coo_layout_build_tail(out, A, 0);
}

void gs_coo_layout_destroy(gs_coo_layout_t **L)
{
  if (!L || !*L) return;
  free((*L)->row);
  free((*L)->col);
  free((*L)->val);
  free((*L)->valf);
  free(*L);
  *L = NULL;
}

gs_idx_t gs_coo_touched_from_features(const gs_features_t *f, gs_idx_t m, gs_idx_t n,
                                      gs_off_t nnz)
{
  if (!f || !f->structurally_symmetric || m != n || f->rows != m || f->cols != n ||
      f->nnz != nnz || f->empty_rows < 0 || f->empty_rows > m)
    return -1;
  return m - f->empty_rows;
}

gs_status_t gs_coo_layout_round(gs_coo_layout_t *L)
{
  if (!L || !L->val) return GS_SUCCESS; /* already rounded, or no entries */
  GS_CHECK(gs_fmt_round_values(&L->valf, L->val, (size_t)L->nnz, "COO values"));
  free(L->val);
  L->val = NULL;
  return GS_SUCCESS;
}

/* The kernel, one warp at a time. Each array of 32 is a warp's registers; every step below is
 * one statement of coo_spmv_kernel in coo_kernels.cu, in the same order, so that the partition,
 * the carries and the order of summation are tested here without a GPU. */
gs_status_t gs_coo_layout_accumulate_host(const gs_coo_layout_t *L, gs_idx_t max_warps,
                                          double alpha, const double *x, double *y)
{
  gs_idx_t warps;
  int64_t interval;
  gs_coo_partition(L->nnz, max_warps, &warps, &interval);
  gs_idx_t *carry_row = malloc((size_t)(warps ? warps : 1) * sizeof *carry_row);
  double *carry_val = malloc((size_t)(warps ? warps : 1) * sizeof *carry_val);
  if (!carry_row || !carry_val) {
    free(carry_row);
    free(carry_val);
    return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory for %d COO carries", (int)warps);
  }
  for (gs_idx_t w = 0; w < warps; ++w) {
    int64_t begin = (int64_t)w * interval, end = begin + interval;
    if (end > L->nnz) end = L->nnz;
    gs_idx_t crow = -1; /* carry: the unfinished row of the previous chunk, its partial sum */
    double cval = 0.0;
    for (int64_t base = begin; base < end; base += WARP) {
      gs_idx_t row[WARP], up_r[WARP];
      double v[WARP], up_v[WARP];
      for (int l = 0; l < WARP; ++l) {
        int64_t n = base + l;
        row[l] = n < end ? L->row[n] : -1;
        v[l] = n < end ? gs_fmt_val(L->val, L->valf, (size_t)n) * x[L->col[n]] : 0.0;
      }
      if (row[0] == crow)
        v[0] += cval;
      else if (crow >= 0)
        y[crow] += alpha * cval; /* the carried row ended with the previous chunk */
      for (int d = 1; d < WARP; d <<= 1) { /* Hillis-Steele segmented inclusive scan */
        memcpy(up_r, row, sizeof row);
        memcpy(up_v, v, sizeof v);
        for (int l = d; l < WARP; ++l)
          if (up_r[l - d] == row[l]) v[l] += up_v[l - d];
      }
      for (int l = 0; l < WARP - 1; ++l) /* a run that ends inside the chunk is complete */
        if (base + l + 1 < end && row[l + 1] != row[l]) y[row[l]] += alpha * v[l];
      int last = (int)(end - 1 - base < WARP - 1 ? end - 1 - base : WARP - 1);
      crow = row[last];
      cval = v[last];
    }
    carry_row[w] = crow;
    carry_val[w] = cval;
  }
  /* update pass: the head of each run of equal carry rows sums the run in warp order */
  for (gs_idx_t w = 0; w < warps; ++w) {
    gs_idx_t r = carry_row[w];
    if (r < 0 || (w > 0 && carry_row[w - 1] == r)) continue;
    double s = 0.0;
    for (gs_idx_t k = w; k < warps && carry_row[k] == r; ++k) s += carry_val[k];
    y[r] += alpha * s;
  }
  free(carry_row);
  free(carry_val);
  return GS_SUCCESS;
}

void gs_coo_layout_accumulate_t_host(const gs_coo_layout_t *L, double alpha, const double *x,
                                     double *y)
{
  for (gs_idx_t k = 0; k < L->nnz; ++k)
    y[L->col[k]] += alpha * gs_fmt_val(L->val, L->valf, (size_t)k) * x[L->row[k]];
}

gs_status_t gs_coo_layout_apply_host(const gs_coo_layout_t *L, gs_idx_t max_warps, gs_op_t op,
                                     double alpha, const double *x, double beta, double *y)
{
  if (!L || (!x && L->nnz > 0) || (!y && (op == GS_OP_N ? L->m : L->n) > 0))
    return GS_ERROR(GS_ERR_INVALID_ARG, "coo host apply: NULL argument");
  if (op == GS_OP_N) {
    gs_fmt_scale_host(L->m, beta, y);
    return gs_coo_layout_accumulate_host(L, max_warps, alpha, x, y);
  } else if (op == GS_OP_T) {
    gs_fmt_scale_host(L->n, beta, y);
    gs_coo_layout_accumulate_t_host(L, alpha, x, y);
  } else {
    return GS_ERROR(GS_ERR_INVALID_ARG, "coo host apply: bad op %d", (int)op);
  }
  return GS_SUCCESS;
}

gs_status_t gs_coo_host_apply(const gs_csr_t *A, const gs_spmv_cfg_t *cfg, gs_op_t op,
                              double alpha, const double *x, double beta, double *y)
{
  gs_coo_layout_t *L = NULL;
  if (!A || !cfg || (op != GS_OP_N && op != GS_OP_T))
    return GS_ERROR(GS_ERR_INVALID_ARG, "coo host apply: bad argument");
  GS_CHECK(gs_coo_layout_build(&L, A)); /* as prepare, whatever alpha is */
  gs_status_t st = GS_SUCCESS;
  if (gs_cfg_float_values(cfg)) st = gs_coo_layout_round(L);
  if (st != GS_SUCCESS) {
    gs_coo_layout_destroy(&L);
    return st;
  }
  const gs_idx_t outn = op == GS_OP_N ? A->m : A->n;
  if (alpha != 0.0)
    st = gs_coo_layout_apply_host(L, GS_COO_HOST_WARPS, op, alpha, x, beta, y);
  else if (!y && outn > 0)
    st = GS_ERROR(GS_ERR_INVALID_ARG, "coo host apply: NULL argument");
  else
    gs_fmt_scale_host(outn, beta, y); /* BLAS: alpha == 0 reads neither A nor x */
  gs_coo_layout_destroy(&L);
  return st;
}
