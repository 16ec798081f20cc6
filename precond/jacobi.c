/* precond/jacobi.c: the Jacobi (diagonal) preconditioner z = D^-1 r. The diagonal is read from
 * the host CSR, checked and inverted on the host, and uploaded once; applying is one
 * element-wise kernel (precond/jacobi_kernels.cu) reading 3n values. */
#include <stdlib.h>

#include "core/error.h"
#include "precond/precond_impl.h"
#include "spmv/spmv_impl.h"

typedef struct {
  gs_context_t *ctx; /* frees go through it */
  gs_idx_t n;
  double *d_dinv; /* 1 / a_ii */
} jacobi_t;

/* The diagonal of A (0 where absent); returns the first row (0-based) whose diagonal is zero or
 * missing, or -1, and counts such rows. */
static gs_idx_t diagonal(const gs_csr_t *A, double *d, gs_idx_t *bad_rows, int *first_missing)
{
  gs_idx_t first = -1;
  *bad_rows = 0;
  *first_missing = 0;
  for (gs_idx_t i = 0; i < A->m; ++i) {
    int found = 0;
    d[i] = 0.0;
    for (gs_off_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k)
      if (A->col[k] == i) {
        d[i] += A->val[k];
        found = 1;
      }
    if (d[i] == 0.0) {
      if (first < 0) {
        first = i;
        *first_missing = !found;
      }
      ++*bad_rows;
    }
  }
  return first;
}

const double *gs_jacobi_dinv(const void *data)
{
  return data ? ((const jacobi_t *)data)->d_dinv : NULL;
}

static void jacobi_destroy(void *data)
{
  jacobi_t *J = data;
  if (!J) return;
  gs_dfree(J->ctx, J->d_dinv);
  free(J);
}

static gs_status_t jacobi_setup(gs_context_t *ctx, gs_matrix_t *A, void **data)
{
  gs_status_t st = GS_SUCCESS;
  const gs_csr_t *h = gs_matrix_host(A);
  jacobi_t *J = calloc(1, sizeof *J);
  double *d = malloc(((size_t)h->m + 1) * sizeof *d);
  if (!J || !d) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory setting up Jacobi");
  J->ctx = ctx;
  J->n = h->m;
  gs_idx_t bad = 0;
  int missing = 0;
  gs_idx_t row = diagonal(h, d, &bad, &missing);
  if (row >= 0)
    GS_FAIL(GS_ERR_INVALID_ARG,
            "jacobi: %s diagonal entry in row %d (1-based; %d row%s in all): Jacobi needs a "
            "nonzero diagonal", missing ? "no" : "zero", (int)row + 1, (int)bad,
            bad == 1 ? "" : "s");
  for (gs_idx_t i = 0; i < h->m; ++i) d[i] = 1.0 / d[i];
  GS_TRY(gs_upload(ctx, (void **)&J->d_dinv, d, (size_t)h->m * sizeof *d,
                   "the Jacobi inverse diagonal"));
  *data = J;
  J = NULL;
cleanup:
  free(d);
  jacobi_destroy(J);
  return st;
}

static gs_status_t jacobi_apply(gs_context_t *ctx, void *data, const double *d_r, double *d_z)
{
  jacobi_t *J = data;
  return gs_jacobi_apply_kernel(ctx->stream, J->n, J->d_dinv, d_r, d_z);
}

static size_t jacobi_bytes(const void *data)
{
  const jacobi_t *J = data;
  return J ? (size_t)J->n * sizeof(double) : 0;
}

const gs_precond_ops_t gs_precond_jacobi_ops = {
  GS_PRECOND_OPS_VERSION, "jacobi", "diagonal scaling z = D^-1 r (nonzero diagonal needed)",
  jacobi_setup, jacobi_apply, jacobi_bytes, jacobi_destroy,
  GS_PRECOND_FLAG_SYMMETRIC | GS_PRECOND_FLAG_CAPTURABLE,
  NULL, NULL, NULL, NULL, NULL}; /* D^T = D */
