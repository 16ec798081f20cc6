/* spmv/hyb_build.c: HYB = ELL for the first K entries of each row + COO for the rest, with K
 * from the row-length histogram (Bell & Garland, SC09, section 3.5; CUSP
 * compute_optimal_entries_per_row), and the host apply of both parts. */
#include <stdlib.h>

#include "core/error.h"
#include "spmv/formats.h"

/* The paper's model: a full ELL column is about three times faster than COO, and below about
 * 4096 rows ELL cannot fill the device; so the K-th column pays when at least
 * max(4096, m/3) rows have K or more entries. */
#define HYB_BREAKEVEN_ROWS 4096
#define HYB_RELATIVE_SPEED 3

gs_idx_t gs_hyb_k_rule(gs_idx_t m, const int64_t *hist, gs_idx_t max_len)
{
  int64_t rows = m; /* rows with K or more entries, for K = 1, 2, ...: m minus shorter rows */
  gs_idx_t K = 0;
  for (gs_idx_t len = 0; len < max_len; ++len) {
    rows -= hist[len]; /* now: rows of length > len, i.e. >= K = len + 1 */
    if (rows < HYB_BREAKEVEN_ROWS || HYB_RELATIVE_SPEED * rows < (int64_t)m) break;
    K = len + 1;
  }
  return K;
}

gs_idx_t gs_hyb_choose_k(const gs_csr_t *A)
{
  gs_idx_t max_len = 0;
  for (gs_idx_t i = 0; i < A->m; ++i)
    if (gs_fmt_row_len(A, i) > max_len) max_len = gs_fmt_row_len(A, i);
  int64_t *hist = calloc((size_t)max_len + 1, sizeof *hist);
  if (!hist) return -1;
  for (gs_idx_t i = 0; i < A->m; ++i) ++hist[gs_fmt_row_len(A, i)];
  gs_idx_t K = gs_hyb_k_rule(A->m, hist, max_len);
  free(hist);
  return K;
}

gs_status_t gs_hyb_layout_build(gs_hyb_layout_t **out, const gs_csr_t *A, int hyb_k)
{
  gs_status_t st = GS_SUCCESS;
  gs_hyb_layout_t *L = NULL;
  if (!out || !A) return GS_ERROR(GS_ERR_INVALID_ARG, "hyb build: NULL argument");
  *out = NULL;
  gs_idx_t K;
  if (hyb_k >= 0) {
    gs_idx_t max_len = 0;
    for (gs_idx_t i = 0; i < A->m; ++i)
      if (gs_fmt_row_len(A, i) > max_len) max_len = gs_fmt_row_len(A, i);
    K = hyb_k < max_len ? hyb_k : max_len; /* wider than the longest row is only padding */
  } else {
    K = gs_hyb_choose_k(A);
    if (K < 0) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory choosing the HYB width");
  }
  L = calloc(1, sizeof *L);
  if (!L) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory building HYB");
  GS_TRY(gs_ell_layout_build_k(&L->ell, A, K));
  GS_TRY(gs_coo_layout_build_tail(&L->coo, A, K));
  *out = L;
  L = NULL;
cleanup:
  gs_hyb_layout_destroy(&L);
  return st;
}

void gs_hyb_layout_destroy(gs_hyb_layout_t **L)
{
  if (!L || !*L) return;
  gs_ell_layout_destroy(&(*L)->ell);
  gs_coo_layout_destroy(&(*L)->coo);
  free(*L);
  *L = NULL;
}

gs_status_t gs_hyb_layout_round(gs_hyb_layout_t *L)
{
  if (!L) return GS_SUCCESS;
  GS_CHECK(gs_ell_layout_round(L->ell));
  return gs_coo_layout_round(L->coo);
}

gs_status_t gs_hyb_layout_apply_host(const gs_hyb_layout_t *L, gs_idx_t max_warps, gs_op_t op,
                                     double alpha, const double *x, double beta, double *y)
{
  if (!L || (!x && (L->ell->entries + L->coo->nnz) > 0))
    return GS_ERROR(GS_ERR_INVALID_ARG, "hyb host apply: NULL argument");
  if (op == GS_OP_N) {
    /* the ELL pass writes every y[i] (and handles beta), the COO pass adds the long tails */
    gs_ell_layout_apply_host(L->ell, alpha, x, beta, y);
    return gs_coo_layout_accumulate_host(L->coo, max_warps, alpha, x, y);
  }
  if (op != GS_OP_T) return GS_ERROR(GS_ERR_INVALID_ARG, "hyb host apply: bad op %d", (int)op);
  gs_fmt_scale_host(L->ell->n, beta, y); /* the scale pass of hyb_apply */
  gs_ell_layout_accumulate_t_host(L->ell, alpha, x, y);
  gs_coo_layout_accumulate_t_host(L->coo, alpha, x, y);
  return GS_SUCCESS;
}

gs_status_t gs_hyb_host_apply(const gs_csr_t *A, const gs_spmv_cfg_t *cfg, gs_op_t op,
                              double alpha, const double *x, double beta, double *y)
{
  gs_hyb_layout_t *L = NULL;
  if (!A || !cfg || (op != GS_OP_N && op != GS_OP_T))
    return GS_ERROR(GS_ERR_INVALID_ARG, "hyb host apply: bad argument");
  const gs_idx_t outn = op == GS_OP_N ? A->m : A->n;
  if (!y && outn > 0) return GS_ERROR(GS_ERR_INVALID_ARG, "hyb host apply: NULL argument");
  /* built whatever alpha is, as prepare builds it */
  GS_CHECK(gs_hyb_layout_build(&L, A, (int)cfg->v[0] /* k: hyb_options in hyb_kernels.cu */));
  gs_status_t st = GS_SUCCESS;
  if (gs_cfg_float_values(cfg)) st = gs_hyb_layout_round(L);
  if (st == GS_SUCCESS && alpha == 0.0) /* BLAS: A and x are not read */
    gs_fmt_scale_host(outn, beta, y);
  else if (st == GS_SUCCESS)
    st = gs_hyb_layout_apply_host(L, GS_COO_HOST_WARPS, op, alpha, x, beta, y);
  gs_hyb_layout_destroy(&L);
  return st;
}
