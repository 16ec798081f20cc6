/* spmv/matrix.c: the matrix object gs_matrix_t (include/gpusolve/spmv.h): a sorted private copy
 * of the host CSR, its features, and the one device CSR every backend of the matrix shares,
 * uploaded on first use. */
#include <stdlib.h>

#include "core/error.h"
#include "spmv/spmv_impl.h"

struct gs_matrix {
  gs_context_t *ctx; /* borrowed */
  gs_csr_t *h;       /* owned host copy, rows sorted */
  gs_features_t features;
  gs_idx_t *d_row_ptr, *d_col;
  gs_val_t *d_val;
  int uploaded;
};

gs_status_t gs_matrix_create(gs_matrix_t **out, gs_context_t *ctx, const gs_csr_t *csr)
{
  gs_status_t st = GS_SUCCESS;
  gs_matrix_t *A = NULL;
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_matrix_create: out is NULL");
  *out = NULL;
  if (!ctx || !csr) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_matrix_create: NULL argument");
  GS_CHECK(gs_csr_validate(csr));
  A = calloc(1, sizeof *A);
  if (!A) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory creating a matrix");
  A->ctx = ctx;
  if (gs_csr_is_sorted(csr)) {
    GS_TRY(gs_csr_copy(&A->h, csr));
  } else { /* sort rows (and sum duplicates) through COO: every backend may assume sorted rows */
    gs_coo_t *C = NULL;
    GS_TRY(gs_csr_to_coo(&C, csr));
    st = gs_coo_to_csr(&A->h, C);
    gs_coo_destroy(&C);
    if (st != GS_SUCCESS) goto cleanup;
  }
  GS_TRY(gs_csr_features(A->h, &A->features));
  *out = A;
  A = NULL;
cleanup:
  gs_matrix_destroy(&A);
  return st;
}

void gs_matrix_destroy(gs_matrix_t **A)
{
  if (!A || !*A) return;
  gs_dfree((*A)->ctx, (*A)->d_row_ptr);
  gs_dfree((*A)->ctx, (*A)->d_col);
  gs_dfree((*A)->ctx, (*A)->d_val);
  gs_csr_destroy(&(*A)->h);
  free(*A);
  *A = NULL;
}

const gs_csr_t *gs_matrix_host(const gs_matrix_t *A) { return A ? A->h : NULL; }
const gs_features_t *gs_matrix_features(const gs_matrix_t *A) { return A ? &A->features : NULL; }
gs_context_t *gs_matrix_context(const gs_matrix_t *A) { return A ? A->ctx : NULL; }

gs_status_t gs_upload(gs_context_t *ctx, void **d_dst, const void *h_src, size_t bytes,
                      const char *what)
{
  GS_CHECK(gs_dmalloc(ctx, d_dst, bytes, what));
  gs_status_t st = gs_copy_to_device(ctx, *d_dst, h_src, bytes);
  if (st != GS_SUCCESS) {
    gs_dfree(ctx, *d_dst);
    *d_dst = NULL;
  }
  return st;
}

gs_status_t gs_matrix_device_csr(gs_matrix_t *A, gs_dcsr_t *out)
{
  gs_status_t st = GS_SUCCESS;
  if (!A || !out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_matrix_device_csr: NULL argument");
  const gs_csr_t *h = A->h;
  if (!A->uploaded) {
    GS_TRY(gs_upload(A->ctx, (void **)&A->d_row_ptr, h->row_ptr,
                     ((size_t)h->m + 1) * sizeof(gs_idx_t), "CSR row pointers"));
    GS_TRY(gs_upload(A->ctx, (void **)&A->d_col, h->col, (size_t)h->nnz * sizeof(gs_idx_t),
                     "CSR column indices"));
    GS_TRY(gs_upload(A->ctx, (void **)&A->d_val, h->val, (size_t)h->nnz * sizeof(gs_val_t),
                     "CSR values"));
    A->uploaded = 1;
  }
  out->m = h->m;
  out->n = h->n;
  out->nnz = h->nnz;
  out->d_row_ptr = A->d_row_ptr;
  out->d_col = A->d_col;
  out->d_val = A->d_val;
cleanup:
  if (st != GS_SUCCESS) {
    gs_dfree(A->ctx, A->d_row_ptr);
    gs_dfree(A->ctx, A->d_col);
    gs_dfree(A->ctx, A->d_val);
    A->d_row_ptr = A->d_col = NULL;
    A->d_val = NULL;
  }
  return st;
}

