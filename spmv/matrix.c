/* spmv/matrix.c: the matrix object gs_matrix_t (include/gpusolve/spmv.h): a sorted private copy
 * of the host CSR, its features, and the one device CSR every backend of the matrix shares,
 * uploaded on first use. */
#include <stdint.h>
#include <stdlib.h>

#include "core/error.h"
#include "spmv/common_kernels.h"
#include "spmv/spmv_impl.h"

struct gs_matrix {
  gs_context_t *ctx; /* borrowed */
  gs_csr_t *h;       /* owned host copy, rows sorted */
  gs_features_t features;
  int wide;             /* 64-bit device row pointers (gs_matrix_wide) */
  int32_t *d_row_ptr32; /* exactly one of the two, once uploaded */
  int64_t *d_row_ptr64;
  gs_idx_t *d_col;
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
  A->wide = csr->nnz > INT32_MAX || ctx->test_wide;
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
  gs_dfree((*A)->ctx, (*A)->d_row_ptr32);
  gs_dfree((*A)->ctx, (*A)->d_row_ptr64);
  gs_dfree((*A)->ctx, (*A)->d_col);
  gs_dfree((*A)->ctx, (*A)->d_val);
  gs_csr_destroy(&(*A)->h);
  free(*A);
  *A = NULL;
}

const gs_csr_t *gs_matrix_host(const gs_matrix_t *A) { return A ? A->h : NULL; }
const gs_features_t *gs_matrix_features(const gs_matrix_t *A) { return A ? &A->features : NULL; }
gs_context_t *gs_matrix_context(const gs_matrix_t *A) { return A ? A->ctx : NULL; }
int gs_matrix_wide(const gs_matrix_t *A) { return A ? A->wide : 0; }

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

/* Narrowed through a bounded host buffer, so that a large matrix does not need a second copy
 * of its row pointers in host memory. */
gs_status_t gs_upload_offsets32(gs_context_t *ctx, int32_t **d_dst, const gs_off_t *h_src,
                                size_t count, const char *what)
{
  enum { CHUNK = 1 << 20 };
  gs_status_t st = GS_SUCCESS;
  int32_t *tmp = NULL;
  *d_dst = NULL;
  for (size_t i = 0; i < count; ++i)
    if (h_src[i] > INT32_MAX)
      return GS_ERROR(GS_ERR_UNSUPPORTED, "%s: offset %lld does not fit 32 bits", what,
                      (long long)h_src[i]);
  GS_CHECK(gs_dmalloc(ctx, (void **)d_dst, (count ? count : 1) * sizeof(int32_t), what));
  tmp = malloc((count < CHUNK ? (count ? count : 1) : CHUNK) * sizeof *tmp);
  if (!tmp) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory uploading %s", what);
  for (size_t i = 0; i < count; i += CHUNK) {
    const size_t k = count - i < CHUNK ? count - i : CHUNK;
    for (size_t j = 0; j < k; ++j) tmp[j] = (int32_t)h_src[i + j];
    /* synchronous copy: tmp is reused by the next chunk */
    GS_TRY(gs_copy_to_device(ctx, *d_dst + i, tmp, k * sizeof *tmp));
  }
cleanup:
  free(tmp);
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
    if (A->wide)
      GS_TRY(gs_upload(A->ctx, (void **)&A->d_row_ptr64, h->row_ptr,
                       ((size_t)h->m + 1) * sizeof(int64_t), "CSR row pointers"));
    else
      GS_TRY(gs_upload_offsets32(A->ctx, &A->d_row_ptr32, h->row_ptr, (size_t)h->m + 1,
                                 "CSR row pointers"));
    GS_TRY(gs_upload(A->ctx, (void **)&A->d_col, h->col, (size_t)h->nnz * sizeof(gs_idx_t),
                     "CSR column indices"));
    GS_TRY(gs_upload(A->ctx, (void **)&A->d_val, h->val, (size_t)h->nnz * sizeof(gs_val_t),
                     "CSR values"));
    A->uploaded = 1;
  }
  out->m = h->m;
  out->n = h->n;
  out->nnz = h->nnz;
  out->wide = A->wide;
  out->d_row_ptr32 = A->d_row_ptr32;
  out->d_row_ptr64 = A->d_row_ptr64;
  out->d_col = A->d_col;
  out->d_val = A->d_val;
cleanup:
  if (st != GS_SUCCESS) {
    gs_dfree(A->ctx, A->d_row_ptr32);
    gs_dfree(A->ctx, A->d_row_ptr64);
    gs_dfree(A->ctx, A->d_col);
    gs_dfree(A->ctx, A->d_val);
    A->d_row_ptr32 = NULL;
    A->d_row_ptr64 = NULL;
    A->d_col = NULL;
    A->d_val = NULL;
  }
  return st;
}

gs_status_t gs_dcsr_round_values(gs_context_t *ctx, const gs_dcsr_t *A, float **d_valf)
{
  *d_valf = NULL;
  if (A->nnz == 0) return GS_SUCCESS;
  GS_CHECK(gs_dmalloc(ctx, (void **)d_valf, (size_t)A->nnz * sizeof(float), "CSR float values"));
  const gs_status_t st =
      gs_launch_round_to_float(ctx->stream, (int64_t)A->nnz, A->d_val, *d_valf);
  if (st != GS_SUCCESS) {
    gs_dfree(ctx, *d_valf);
    *d_valf = NULL;
  }
  return st;
}
