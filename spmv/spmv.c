/* spmv/spmv.c: the matrix object, the registry queries and the SpMV dispatcher: the one place
 * that calls through a backend's table, after validating its arguments (PETSc's MatMult). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

struct gs_spmv {
  const gs_spmv_ops_t *ops;
  void *data;
  gs_context_t *ctx;
  gs_matrix_t *A;
  char describe[256];
};

/* ---- matrix ------------------------------------------------------------------------------ */

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
  gs_dfree((*A)->d_row_ptr);
  gs_dfree((*A)->d_col);
  gs_dfree((*A)->d_val);
  gs_csr_destroy(&(*A)->h);
  free(*A);
  *A = NULL;
}

const gs_csr_t *gs_matrix_host(const gs_matrix_t *A) { return A ? A->h : NULL; }
const gs_features_t *gs_matrix_features(const gs_matrix_t *A) { return A ? &A->features : NULL; }

gs_status_t gs_upload(gs_context_t *ctx, void **d_dst, const void *h_src, size_t bytes,
                      const char *what)
{
  GS_CHECK(gs_dmalloc(d_dst, bytes, what));
  gs_status_t st = gs_copy_to_device(ctx, *d_dst, h_src, bytes);
  if (st != GS_SUCCESS) {
    gs_dfree(*d_dst);
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
    gs_dfree(A->d_row_ptr);
    gs_dfree(A->d_col);
    gs_dfree(A->d_val);
    A->d_row_ptr = A->d_col = NULL;
    A->d_val = NULL;
  }
  return st;
}

/* ---- registry ---------------------------------------------------------------------------- */

int gs_spmv_backend_count(void) { return gs_spmv_registry_count; }

static const gs_spmv_ops_t *backend(int i)
{
  return (i >= 0 && i < gs_spmv_registry_count) ? gs_spmv_registry[i] : NULL;
}

const char *gs_spmv_backend_name(int i) { return backend(i) ? backend(i)->name : NULL; }
const char *gs_spmv_backend_summary(int i) { return backend(i) ? backend(i)->summary : NULL; }
unsigned gs_spmv_backend_flags(int i) { return backend(i) ? backend(i)->flags : 0u; }

int gs_spmv_backend_find(const char *name)
{
  if (!name) return -1;
  for (int i = 0; i < gs_spmv_registry_count; ++i)
    if (strcmp(gs_spmv_registry[i]->name, name) == 0) return i;
  return -1;
}

static gs_status_t unknown_backend(const char *name)
{
  return GS_ERROR(GS_ERR_INVALID_ARG, "unknown SpMV format '%s' (see 'gpusolve spmv --list')",
                  name ? name : "(null)");
}

void gs_spmv_opts_default(gs_spmv_opts_t *o)
{
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->max_fill = 3.0;
  o->vector_width = 0;
  o->hyb_k = -1;
}

static gs_status_t check_opts(const gs_spmv_opts_t *o)
{
  if (!(o->max_fill >= 1.0))
    return GS_ERROR(GS_ERR_INVALID_ARG, "max_fill must be >= 1, not %g", o->max_fill);
  int w = o->vector_width;
  if (w != 0 && w != 1 && w != 2 && w != 4 && w != 8 && w != 16 && w != 32)
    return GS_ERROR(GS_ERR_INVALID_ARG, "vector width must be 1, 2, 4, 8, 16 or 32, not %d", w);
  if (o->hyb_k < -1) return GS_ERROR(GS_ERR_INVALID_ARG, "hyb K must be >= 0 or -1 (auto)");
  return GS_SUCCESS;
}

/* ---- prepared products ------------------------------------------------------------------- */

gs_status_t gs_spmv_create(gs_spmv_t **out, gs_context_t *ctx, gs_matrix_t *A, const char *name,
                           const gs_spmv_opts_t *opts)
{
  gs_status_t st = GS_SUCCESS;
  gs_spmv_opts_t def;
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_spmv_create: out is NULL");
  *out = NULL;
  if (!ctx || !A) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_spmv_create: NULL argument");
  int i = gs_spmv_backend_find(name);
  if (i < 0) return unknown_backend(name);
  if (!opts) {
    gs_spmv_opts_default(&def);
    opts = &def;
  }
  GS_CHECK(check_opts(opts));
  gs_spmv_t *S = calloc(1, sizeof *S);
  if (!S) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory creating an SpMV");
  S->ops = gs_spmv_registry[i];
  S->ctx = ctx;
  S->A = A;
  GS_TRY(S->ops->prepare(ctx, A, opts, &S->data));
  if (S->ops->describe) S->ops->describe(S->data, S->describe, sizeof S->describe);
  *out = S;
  S = NULL;
cleanup:
  gs_spmv_destroy(&S);
  return st;
}

void gs_spmv_destroy(gs_spmv_t **S)
{
  if (!S || !*S) return;
  if ((*S)->ops && (*S)->data) (*S)->ops->destroy((*S)->data);
  free(*S);
  *S = NULL;
}

int gs_spmv_supports(const gs_spmv_t *S, gs_op_t op)
{
  if (!S) return 0;
  return op == GS_OP_N || (op == GS_OP_T && (S->ops->flags & GS_SPMV_FLAG_TRANSPOSE));
}

gs_status_t gs_spmv_apply(gs_spmv_t *S, gs_op_t op, double alpha, const double *d_x, double beta,
                          double *d_y)
{
  if (!S) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_spmv_apply: S is NULL");
  if (op != GS_OP_N && op != GS_OP_T)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_spmv_apply: op must be GS_OP_N or GS_OP_T");
  if (!gs_spmv_supports(S, op))
    return GS_ERROR(GS_ERR_UNSUPPORTED, "backend '%s' has no transpose apply", S->ops->name);
  const gs_csr_t *h = S->A->h;
  gs_idx_t in = op == GS_OP_N ? h->n : h->m, outn = op == GS_OP_N ? h->m : h->n;
  if ((in > 0 && !d_x) || (outn > 0 && !d_y))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_spmv_apply: x or y is NULL");
  if (d_x && (const void *)d_x == (const void *)d_y)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_spmv_apply: x and y must be different vectors");
  if (!isfinite(alpha) || !isfinite(beta))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_spmv_apply: alpha and beta must be finite");
  if (outn == 0) return GS_SUCCESS;
  return S->ops->apply(S->ctx, S->data, op, alpha, d_x, beta, d_y);
}

gs_status_t gs_spmv_memory(const gs_spmv_t *S, gs_spmv_mem_t *mem)
{
  if (!S || !mem) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_spmv_memory: NULL argument");
  memset(mem, 0, sizeof *mem);
  return S->ops->memory(S->data, mem);
}

const char *gs_spmv_name(const gs_spmv_t *S) { return S ? S->ops->name : ""; }
gs_matrix_t *gs_spmv_matrix(const gs_spmv_t *S) { return S ? S->A : NULL; }
const char *gs_spmv_describe(const gs_spmv_t *S) { return S ? S->describe : ""; }

gs_status_t gs_spmv_host_apply(const char *name, const gs_csr_t *A, const gs_spmv_opts_t *opts,
                               gs_op_t op, double alpha, const double *x, double beta, double *y)
{
  gs_spmv_opts_t def;
  int i = gs_spmv_backend_find(name);
  if (i < 0) return unknown_backend(name);
  if (!A) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_spmv_host_apply: A is NULL");
  if (!opts) {
    gs_spmv_opts_default(&def);
    opts = &def;
  }
  GS_CHECK(check_opts(opts));
  const gs_spmv_ops_t *ops = gs_spmv_registry[i];
  if (op == GS_OP_T && !(ops->flags & GS_SPMV_FLAG_TRANSPOSE))
    return GS_ERROR(GS_ERR_UNSUPPORTED, "backend '%s' has no transpose apply", ops->name);
  if (ops->host_apply) return ops->host_apply(A, opts, op, alpha, x, beta, y);
  return gs_csr_spmv_host(A, op == GS_OP_N ? 'N' : 'T', alpha, x, beta, y);
}
