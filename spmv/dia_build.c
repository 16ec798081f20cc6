/* spmv/dia_build.c: DIA layout builder with CUSP's fill guard, and the host applies (op = N by
 * rows, op = T by output columns, both gathers) that run the kernels' arithmetic on it
 * (Bell & Garland, SC09, section 3.1). */
#include <stdlib.h>

#include "core/error.h"
#include "spmv/formats.h"

gs_status_t gs_dia_check_shape(gs_idx_t m, gs_idx_t n)
{
  /* the kernel forms row + offset in 32 bits: it lies in (-m, m + n) */
  if ((int64_t)m + (int64_t)n >= ((int64_t)1 << 31))
    return GS_ERROR(GS_ERR_UNSUPPORTED, "dia: rows + columns (%lld) must be below 2^31",
                    (long long)m + n);
  return GS_SUCCESS;
}

gs_status_t gs_dia_check_fill(gs_idx_t ndiag, gs_idx_t m, gs_off_t nnz, double max_fill)
{
  /* CUSP's guard: ndiag diagonals of m slots each (pitch alignment is not fill) */
  double slots = (double)ndiag * (double)m;
  if (slots > max_fill * (double)nnz)
    return GS_ERROR(GS_ERR_FORMAT_FILL,
                    "dia refused: %d diagonals would store %.1fx the nonzeros (limit %gx)",
                    (int)ndiag, slots / (double)nnz, max_fill);
  return GS_SUCCESS;
}

gs_status_t gs_dia_layout_build(gs_dia_layout_t **out, const gs_csr_t *A, double max_fill)
{
  gs_status_t st = GS_SUCCESS;
  gs_dia_layout_t *L = NULL;
  int32_t *diag_of = NULL; /* offset + (m - 1) -> diagonal index; -1 unoccupied */
  if (!out || !A) return GS_ERROR(GS_ERR_INVALID_ARG, "dia build: NULL argument");
  *out = NULL;
  GS_CHECK(gs_dia_check_shape(A->m, A->n));
  L = calloc(1, sizeof *L);
  if (!L) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory building DIA");
  L->m = A->m;
  L->n = A->n;
  L->pitch = gs_fmt_pitch(A->m);
  if (A->nnz > 0) {
    size_t span = (size_t)A->m + (size_t)A->n - 1; /* offsets -(m-1) .. n-1 */
    diag_of = malloc(span * sizeof *diag_of);
    if (!diag_of) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory building DIA");
    for (size_t s = 0; s < span; ++s) diag_of[s] = -1;
    for (gs_idx_t i = 0; i < A->m; ++i)
      for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p)
        diag_of[(size_t)((int64_t)A->col[p] - i + A->m - 1)] = 0;
    /* number the occupied diagonals in increasing offset order */
    for (size_t s = 0; s < span; ++s)
      if (diag_of[s] == 0) diag_of[s] = L->ndiag++; /* each s is visited once */

    GS_TRY(gs_dia_check_fill(L->ndiag, A->m, A->nnz, max_fill));

    size_t nval = (size_t)L->pitch * (size_t)L->ndiag;
    L->offsets = malloc((size_t)L->ndiag * sizeof *L->offsets);
    L->val = calloc(nval, sizeof *L->val); /* absent entries and out-of-range slots are 0.0 */
    if (!L->offsets || !L->val)
      GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory building DIA (%d diagonals of %lld)",
              (int)L->ndiag, (long long)L->pitch);
    for (size_t s = 0; s < span; ++s)
      if (diag_of[s] >= 0) L->offsets[diag_of[s]] = (int32_t)((int64_t)s - (A->m - 1));
    for (gs_idx_t i = 0; i < A->m; ++i)
      for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) {
        int32_t d = diag_of[(size_t)((int64_t)A->col[p] - i + A->m - 1)];
        L->val[(size_t)d * (size_t)L->pitch + (size_t)i] = A->val[p];
      }
    for (gs_idx_t d = 0; d < L->ndiag; ++d) { /* rows i with 0 <= i + offset < n */
      int64_t o = L->offsets[d];
      int64_t lo = o < 0 ? -o : 0, hi = (int64_t)A->n - o < A->m ? (int64_t)A->n - o : A->m;
      if (hi > lo) L->slots_in_range += hi - lo;
    }
  }
  *out = L;
  L = NULL;
cleanup:
  free(diag_of);
  gs_dia_layout_destroy(&L);
  return st;
}

void gs_dia_layout_destroy(gs_dia_layout_t **L)
{
  if (!L || !*L) return;
  free((*L)->offsets);
  free((*L)->val);
  free((*L)->valf);
  free(*L);
  *L = NULL;
}

gs_status_t gs_dia_layout_round(gs_dia_layout_t *L)
{
  if (!L || !L->val) return GS_SUCCESS; /* already rounded, or no diagonals */
  GS_CHECK(gs_fmt_round_values(&L->valf, L->val, (size_t)L->pitch * (size_t)L->ndiag,
                               "DIA values"));
  free(L->val);
  L->val = NULL;
  return GS_SUCCESS;
}

/* dia_spmv_kernel of dia_kernels.cu, one "thread" (row) after the other. */
void gs_dia_layout_apply_host(const gs_dia_layout_t *L, double alpha, const double *x,
                              double beta, double *y)
{
  for (gs_idx_t row = 0; row < L->m; ++row) {
    double sum = 0.0;
    for (gs_idx_t d = 0; d < L->ndiag; ++d) {
      int32_t col = row + L->offsets[d];
      if (col >= 0 && col < L->n)
        sum += gs_fmt_val(L->val, L->valf, (size_t)d * (size_t)L->pitch + (size_t)row) *
               x[col];
    }
    y[row] = beta == 0.0 ? alpha * sum : alpha * sum + beta * y[row];
  }
}

/* dia_spmv_t_kernel of dia_kernels.cu, one "thread" (output column) after the other. */
void gs_dia_layout_apply_t_host(const gs_dia_layout_t *L, double alpha, const double *x,
                                double beta, double *y)
{
  for (gs_idx_t j = 0; j < L->n; ++j) {
    double sum = 0.0;
    for (gs_idx_t d = 0; d < L->ndiag; ++d) {
      int32_t i = j - L->offsets[d]; /* in (-n, n + m): 32 bits, as the builder checked */
      if (i >= 0 && i < L->m)
        sum += gs_fmt_val(L->val, L->valf, (size_t)d * (size_t)L->pitch + (size_t)i) * x[i];
    }
    y[j] = beta == 0.0 ? alpha * sum : alpha * sum + beta * y[j];
  }
}

gs_status_t gs_dia_host_apply(const gs_csr_t *A, const gs_spmv_cfg_t *cfg, gs_op_t op,
                              double alpha, const double *x, double beta, double *y)
{
  gs_dia_layout_t *L = NULL;
  if (!A || !cfg || (op != GS_OP_N && op != GS_OP_T))
    return GS_ERROR(GS_ERR_INVALID_ARG, "dia host apply: bad argument");
  const gs_idx_t outn = op == GS_OP_N ? A->m : A->n;
  if ((!x && alpha != 0.0 && A->nnz > 0) || (!y && outn > 0))
    return GS_ERROR(GS_ERR_INVALID_ARG, "dia host apply: NULL argument");
  /* built whatever alpha is: a refusal reads as prepare's */
  GS_CHECK(gs_dia_layout_build(&L, A, cfg->v[0] /* max_fill: dia_options in dia_kernels.cu */));
  if (gs_cfg_float_values(cfg)) {
    gs_status_t st = gs_dia_layout_round(L);
    if (st != GS_SUCCESS) {
      gs_dia_layout_destroy(&L);
      return st;
    }
  }
  if (alpha == 0.0) /* BLAS: A and x are not read */
    gs_fmt_scale_host(outn, beta, y);
  else if (op == GS_OP_N)
    gs_dia_layout_apply_host(L, alpha, x, beta, y);
  else
    gs_dia_layout_apply_t_host(L, alpha, x, beta, y);
  gs_dia_layout_destroy(&L);
  return GS_SUCCESS;
}
