/* spmv/ell_build.c: ELLPACK layout builder with CUSP's fill guard, and the host applies (op = N
 * and the scatter of op = T) that run the kernels' arithmetic on it (Bell & Garland,
 * SC09, section 3.2); the host scale pass shared by the format builders. */
#include <stdlib.h>

#include "core/error.h"
#include "spmv/formats.h"

int64_t gs_fmt_pitch(gs_idx_t m)
{
  return ((int64_t)m + GS_FMT_PITCH_ALIGN - 1) / GS_FMT_PITCH_ALIGN * GS_FMT_PITCH_ALIGN;
}

gs_status_t gs_fmt_round_values(float **out, const gs_val_t *val, size_t n, const char *what)
{
  *out = NULL;
  if (n == 0) return GS_SUCCESS;
  float *f = malloc(n * sizeof *f);
  if (!f)
    return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory rounding %zu %s to float", n, what);
  for (size_t k = 0; k < n; ++k) f[k] = (float)val[k]; /* round to nearest, as __double2float_rn */
  *out = f;
  return GS_SUCCESS;
}

void gs_fmt_scale_host(gs_idx_t len, double beta, double *y)
{
  if (beta == 1.0) return;
  for (gs_idx_t i = 0; i < len; ++i) y[i] = beta == 0.0 ? 0.0 : beta * y[i];
}

static gs_idx_t longest_row(const gs_csr_t *A)
{
  gs_idx_t K = 0;
  for (gs_idx_t i = 0; i < A->m; ++i)
    if (gs_fmt_row_len(A, i) > K) K = gs_fmt_row_len(A, i);
  return K;
}

gs_status_t gs_ell_layout_build_k(gs_ell_layout_t **out, const gs_csr_t *A, gs_idx_t K)
{
  gs_status_t st = GS_SUCCESS;
  gs_ell_layout_t *L = NULL;
  if (!out || !A || K < 0) return GS_ERROR(GS_ERR_INVALID_ARG, "ell build: bad argument");
  *out = NULL;
  L = calloc(1, sizeof *L);
  if (!L) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory building ELL");
  L->m = A->m;
  L->n = A->n;
  L->K = K;
  L->pitch = gs_fmt_pitch(A->m);
  size_t slots = (size_t)L->pitch * (size_t)K;
  if (slots > 0) {
    L->col = malloc(slots * sizeof *L->col);
    L->val = malloc(slots * sizeof *L->val);
    if (!L->col || !L->val)
      GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory building ELL (%lld x %d slots)",
              (long long)L->pitch, (int)K); /* the pitch reaches 2^31 for m near 2^31 - 1 */
  }
  for (size_t s = 0; s < slots; ++s) {
    L->col[s] = GS_ELL_PAD;
    L->val[s] = 0.0;
  }
  for (gs_idx_t i = 0; i < A->m; ++i) {
    const gs_off_t p0 = A->row_ptr[i];
    gs_idx_t len = gs_fmt_row_len(A, i);
    if (len > K) len = K;
    for (gs_idx_t k = 0; k < len; ++k) { /* slot (i, k) is column k of the M x K array */
      L->col[(size_t)k * (size_t)L->pitch + (size_t)i] = A->col[p0 + k];
      L->val[(size_t)k * (size_t)L->pitch + (size_t)i] = A->val[p0 + k];
    }
    L->entries += len;
  }
  *out = L;
  L = NULL;
cleanup:
  gs_ell_layout_destroy(&L);
  return st;
}

gs_status_t gs_ell_layout_build(gs_ell_layout_t **out, const gs_csr_t *A, double max_fill)
{
  if (!out || !A) return GS_ERROR(GS_ERR_INVALID_ARG, "ell build: NULL argument");
  *out = NULL;
  gs_idx_t K = longest_row(A);
  GS_CHECK(gs_ell_check_fill(A->m, K, A->nnz, max_fill));
  return gs_ell_layout_build_k(out, A, K);
}

gs_status_t gs_ell_check_fill(gs_idx_t m, gs_idx_t K, gs_off_t nnz, double max_fill)
{
  /* CUSP's guard (csr_to_other.h): refuse before allocating a padded array that would hold
   * mostly zeros; alignment rows (pitch - m) are layout, not fill, and are not counted. */
  double slots = (double)m * (double)K;
  if (slots > max_fill * (double)nnz)
    return GS_ERROR(GS_ERR_FORMAT_FILL,
                    "ell refused: padding to %d entries per row would store %.1fx the nonzeros "
                    "(limit %gx)",
                    (int)K, slots / (double)nnz, max_fill);
  return GS_SUCCESS;
}

void gs_ell_layout_destroy(gs_ell_layout_t **L)
{
  if (!L || !*L) return;
  free((*L)->col);
  free((*L)->val);
  free((*L)->valf);
  free(*L);
  *L = NULL;
}

gs_status_t gs_ell_layout_round(gs_ell_layout_t *L)
{
  if (!L || !L->val) return GS_SUCCESS; /* already rounded, or no slots */
  GS_CHECK(gs_fmt_round_values(&L->valf, L->val, (size_t)L->pitch * (size_t)L->K,
                               "ELL values"));
  free(L->val);
  L->val = NULL;
  return GS_SUCCESS;
}

/* ell_spmv_kernel of ell_kernels.cu, one "thread" (row) after the other. */
void gs_ell_layout_apply_host(const gs_ell_layout_t *L, double alpha, const double *x, double beta,
                              double *y)
{
  for (gs_idx_t row = 0; row < L->m; ++row) {
    double sum = 0.0;
    size_t off = (size_t)row;
    for (gs_idx_t k = 0; k < L->K; ++k, off += (size_t)L->pitch) {
      gs_idx_t c = L->col[off];
      if (c >= 0) sum += gs_fmt_val(L->val, L->valf, off) * x[c];
    }
    y[row] = beta == 0.0 ? alpha * sum : alpha * sum + beta * y[row];
  }
}

/* ell_spmv_t_kernel, one "thread" (row) after the other; the kernel's atomics add in any order. */
void gs_ell_layout_accumulate_t_host(const gs_ell_layout_t *L, double alpha, const double *x,
                                     double *y)
{
  if (L->K == 0) return; /* as gs_ell_dev_accumulate_t: no slots, x unread */
  for (gs_idx_t row = 0; row < L->m; ++row) {
    double ax = alpha * x[row];
    size_t off = (size_t)row;
    for (gs_idx_t k = 0; k < L->K; ++k, off += (size_t)L->pitch) {
      gs_idx_t c = L->col[off];
      if (c >= 0) y[c] += gs_fmt_val(L->val, L->valf, off) * ax;
    }
  }
}

gs_status_t gs_ell_host_apply(const gs_csr_t *A, const gs_spmv_cfg_t *cfg, gs_op_t op,
                              double alpha, const double *x, double beta, double *y)
{
  gs_ell_layout_t *L = NULL;
  if (!A || !cfg || (op != GS_OP_N && op != GS_OP_T))
    return GS_ERROR(GS_ERR_INVALID_ARG, "ell host apply: bad argument");
  const gs_idx_t outn = op == GS_OP_N ? A->m : A->n;
  if ((!x && alpha != 0.0 && A->nnz > 0) || (!y && outn > 0))
    return GS_ERROR(GS_ERR_INVALID_ARG, "ell host apply: NULL argument");
  /* built whatever alpha is: a refusal reads as prepare's */
  GS_CHECK(gs_ell_layout_build(&L, A, cfg->v[0] /* max_fill: ell_options in ell_kernels.cu */));
  if (gs_cfg_float_values(cfg)) {
    gs_status_t st = gs_ell_layout_round(L);
    if (st != GS_SUCCESS) {
      gs_ell_layout_destroy(&L);
      return st;
    }
  }
  if (alpha == 0.0) { /* BLAS: A and x are not read */
    gs_fmt_scale_host(outn, beta, y);
  } else if (op == GS_OP_N) {
    gs_ell_layout_apply_host(L, alpha, x, beta, y);
  } else { /* ell_apply: the scale pass, then the scatter */
    gs_fmt_scale_host(L->n, beta, y);
    gs_ell_layout_accumulate_t_host(L, alpha, x, y);
  }
  gs_ell_layout_destroy(&L);
  return GS_SUCCESS;
}
