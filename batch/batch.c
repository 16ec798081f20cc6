/* batch/batch.c: the batch object (one device allocation for N matrices), the batched SpMV's
 * validating dispatcher (the only caller of the gs_batch_ops_t table), its host apply and its
 * timing. Kernels: batch/batch_kernels.cu; layouts: batch/batch_build.c; solves:
 * batch/batch_solve.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch/batch_impl.h"
#include "core/context_impl.h"
#include "core/error.h"
#include "gpusolve/bench.h"

struct gs_batch_spmv {
  gs_batch_t *B; /* borrowed */
  const gs_batch_ops_t *ops;
  void *data;
  char desc[200];
};

#define ALIGN 256

static size_t align_up(size_t x) { return (x + ALIGN - 1) / ALIGN * ALIGN; }

/* Uploads the host layout into one allocation: problems | row pointers | columns | values. */
static gs_status_t upload(gs_batch_t *B)
{
  gs_batch_host_t *H = &B->H;
  const size_t b_prob = align_up((size_t)H->count * sizeof *H->prob);
  const size_t b_rp = align_up(H->nrp * sizeof *H->rp);
  const size_t b_ci = align_up(H->nci * sizeof *H->ci);
  const size_t b_val = align_up(H->nval * sizeof *H->val);
  B->d_bytes = b_prob + b_rp + b_ci + b_val;
  GS_CHECK(gs_dmalloc(B->ctx, &B->d_base, B->d_bytes, "the batch's matrices"));
  char *base = (char *)B->d_base;
  B->dev.prob = (const gs_batch_prob_t *)base;
  B->dev.rp = (const int32_t *)(base + b_prob);
  B->dev.ci = (const gs_idx_t *)(base + b_prob + b_rp);
  B->dev.val = (const gs_val_t *)(base + b_prob + b_rp + b_ci);
  B->dev.count = H->count;
  GS_CHECK(gs_copy_to_device(B->ctx, (void *)B->dev.prob, H->prob, (size_t)H->count * sizeof *H->prob));
  if (H->nrp) GS_CHECK(gs_copy_to_device(B->ctx, (void *)B->dev.rp, H->rp, H->nrp * sizeof *H->rp));
  if (H->nci) GS_CHECK(gs_copy_to_device(B->ctx, (void *)B->dev.ci, H->ci, H->nci * sizeof *H->ci));
  if (H->nval)
    GS_CHECK(gs_copy_to_device(B->ctx, (void *)B->dev.val, H->val, H->nval * sizeof *H->val));
  return GS_SUCCESS;
}

static gs_status_t finish_create(gs_batch_t **out, gs_batch_t *B)
{
  gs_status_t st = gs_context_activate(B->ctx);
  if (st == GS_SUCCESS) st = upload(B);
  if (st != GS_SUCCESS) {
    gs_batch_destroy(&B);
    return st;
  }
  gs_batch_host_rowstats(&B->H, &B->st);
  B->sm_count = B->ctx->sm_count;
  *out = B;
  return GS_SUCCESS;
}

gs_status_t gs_batch_create(gs_batch_t **out, gs_context_t *ctx, int count,
                            const gs_csr_t *const *A)
{
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_create: out is NULL");
  *out = NULL;
  if (!ctx || !A) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_create: %s is NULL", ctx ? "A" : "ctx");
  gs_batch_t *B = calloc(1, sizeof *B);
  if (!B) return GS_ERROR(GS_ERR_HOST_MEMORY, "gs_batch_create: out of host memory");
  B->ctx = ctx;
  gs_status_t st = gs_batch_host_build(&B->H, count, A);
  if (st != GS_SUCCESS) {
    free(B);
    return st;
  }
  return finish_create(out, B);
}

gs_status_t gs_batch_create_shared(gs_batch_t **out, gs_context_t *ctx, int count,
                                   const gs_csr_t *pattern, const gs_val_t *values)
{
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_create_shared: out is NULL");
  *out = NULL;
  if (!ctx) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_create_shared: ctx is NULL");
  gs_batch_t *B = calloc(1, sizeof *B);
  if (!B) return GS_ERROR(GS_ERR_HOST_MEMORY, "gs_batch_create_shared: out of host memory");
  B->ctx = ctx;
  gs_status_t st = gs_batch_host_build_shared(&B->H, count, pattern, values);
  if (st != GS_SUCCESS) {
    free(B);
    return st;
  }
  return finish_create(out, B);
}

void gs_batch_destroy(gs_batch_t **B)
{
  if (!B || !*B) return;
  if ((*B)->d_base) gs_dfree((*B)->ctx, (*B)->d_base);
  gs_batch_host_free(&(*B)->H);
  free(*B);
  *B = NULL;
}

int gs_batch_count(const gs_batch_t *B) { return B ? B->H.count : 0; }
const gs_off_t *gs_batch_row_offsets(const gs_batch_t *B) { return B ? B->H.row_off : NULL; }
const gs_off_t *gs_batch_col_offsets(const gs_batch_t *B) { return B ? B->H.col_off : NULL; }
gs_off_t gs_batch_nnz(const gs_batch_t *B) { return B ? B->H.nnz : 0; }
size_t gs_batch_device_bytes(const gs_batch_t *B) { return B ? B->d_bytes : 0; }

gs_status_t gs_batch_problem_csr(const gs_batch_t *B, int i, gs_csr_t **out)
{
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_problem_csr: out is NULL");
  *out = NULL;
  if (!B) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_problem_csr: B is NULL");
  return gs_batch_host_problem(&B->H, i, out);
}

/* ---- the kernel table ------------------------------------------------------------------------ */

int gs_batch_format_count(void) { return gs_batch_nformats; }

const char *gs_batch_format_name(int k)
{
  return k >= 0 && k < gs_batch_nformats ? gs_batch_formats[k]->name : NULL;
}

const char *gs_batch_format_summary(int k)
{
  return k >= 0 && k < gs_batch_nformats ? gs_batch_formats[k]->summary : NULL;
}

unsigned gs_batch_format_flags(int k)
{
  return k >= 0 && k < gs_batch_nformats ? gs_batch_formats[k]->flags : 0u;
}

const char *gs_batch_auto_format(const gs_batch_t *B, const char **why)
{
  if (why) *why = NULL;
  return B ? gs_batch_rule(&B->st, why) : NULL;
}

static const gs_batch_ops_t *find(const char *name)
{
  for (int k = 0; k < gs_batch_nformats; ++k)
    if (!strcmp(gs_batch_formats[k]->name, name)) return gs_batch_formats[k];
  return NULL;
}

static gs_status_t unknown(const char *who, const char *name)
{
  char list[512] = "";
  for (int k = 0; k < gs_batch_nformats; ++k) {
    strncat(list, gs_batch_formats[k]->name, sizeof list - strlen(list) - 1);
    strncat(list, ", ", sizeof list - strlen(list) - 1);
  }
  return GS_ERROR(GS_ERR_INVALID_ARG, "%s: unknown batched kernel '%s' (known: %sauto)", who,
                  name, list);
}

gs_status_t gs_batch_spmv_create(gs_batch_spmv_t **out, gs_batch_t *B, const char *name,
                                 double max_fill)
{
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_spmv_create: out is NULL");
  *out = NULL;
  if (!B || !name)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_spmv_create: %s is NULL", B ? "name" : "B");
  if (!(max_fill > 0.0) || !isfinite(max_fill)) max_fill = GS_BATCH_MAX_FILL_DEFAULT;
  const gs_batch_ops_t *ops = find(strcmp(name, "auto") ? name : gs_batch_rule(&B->st, NULL));
  if (!ops) return unknown("gs_batch_spmv_create", name);
  GS_CHECK(gs_context_activate(B->ctx));
  gs_batch_spmv_t *S = calloc(1, sizeof *S);
  if (!S) return GS_ERROR(GS_ERR_HOST_MEMORY, "gs_batch_spmv_create: out of host memory");
  S->B = B;
  S->ops = ops;
  gs_status_t st = ops->prepare(B, max_fill, &S->data);
  if (st != GS_SUCCESS) {
    free(S);
    return st;
  }
  if (ops->describe) ops->describe(S->data, S->desc, sizeof S->desc);
  *out = S;
  return GS_SUCCESS;
}

void gs_batch_spmv_destroy(gs_batch_spmv_t **S)
{
  if (!S || !*S) return;
  gs_context_activate((*S)->B->ctx);
  (*S)->ops->destroy((*S)->B, (*S)->data);
  free(*S);
  *S = NULL;
}

const char *gs_batch_spmv_name(const gs_batch_spmv_t *S) { return S ? S->ops->name : ""; }
const char *gs_batch_spmv_describe(const gs_batch_spmv_t *S) { return S ? S->desc : ""; }

gs_status_t gs_batch_spmv_memory(const gs_batch_spmv_t *S, gs_batch_mem_t *mem)
{
  if (!S || !mem) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_spmv_memory: NULL argument");
  memset(mem, 0, sizeof *mem);
  GS_CHECK(S->ops->memory(S->B, S->data, mem));
  mem->floor_bytes = gs_batch_floor_bytes(&S->B->H);
  return GS_SUCCESS;
}

/* The checks of y = alpha A x + beta y over a batch: vectors present where they have entries,
 * distinct, scalars finite. */
static gs_status_t check_apply(const char *who, const gs_batch_host_t *H, double alpha,
                               const void *x, double beta, const void *y)
{
  if (!isfinite(alpha) || !isfinite(beta))
    return GS_ERROR(GS_ERR_INVALID_ARG, "%s: alpha %g and beta %g must be finite", who, alpha, beta);
  if (!x && H->col_off[H->count] > 0) return GS_ERROR(GS_ERR_INVALID_ARG, "%s: x is NULL", who);
  if (!y && H->row_off[H->count] > 0) return GS_ERROR(GS_ERR_INVALID_ARG, "%s: y is NULL", who);
  if (x && x == y) return GS_ERROR(GS_ERR_INVALID_ARG, "%s: x and y are the same array", who);
  return GS_SUCCESS;
}

gs_status_t gs_batch_spmv_apply(gs_batch_spmv_t *S, double alpha, const gs_val_t *d_x,
                                double beta, gs_val_t *d_y)
{
  if (!S) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_spmv_apply: S is NULL");
  gs_batch_t *B = S->B;
  GS_CHECK(check_apply("gs_batch_spmv_apply", &B->H, alpha, d_x, beta, d_y));
  const size_t rows = (size_t)B->H.row_off[B->H.count];
  if (rows == 0) return GS_SUCCESS;
  GS_CHECK(gs_context_activate(B->ctx));
  if (alpha == 0.0) return gs_batch_kernel_scale(B, beta, d_y, rows); /* A, x not read */
  return S->ops->apply(B, S->data, alpha, d_x, beta, d_y);
}

gs_status_t gs_batch_host_apply(const gs_batch_t *B, const char *name, double max_fill,
                                double alpha, const gs_val_t *x, double beta, gs_val_t *y)
{
  if (!B || !name) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_host_apply: NULL argument");
  const gs_batch_ops_t *ops = find(strcmp(name, "auto") ? name : gs_batch_rule(&B->st, NULL));
  if (!ops) return unknown("gs_batch_host_apply", name);
  GS_CHECK(check_apply("gs_batch_host_apply", &B->H, alpha, x, beta, y));
  /* a vendor baseline's layout is the batch's CSR read with strides: only uniform batches */
  if (ops->flags & GS_BATCH_FORMAT_VENDOR) GS_CHECK(gs_batch_host_uniform(&B->H, ops->name));
  /* CSR-I's warps per block are the kernel's: gs_batch_block_threads(mean entries) / 32 */
  const int nwarps = gs_batch_block_threads(B->st.mean_nnz) / 32;
  return gs_batch_host_apply_kind(&B->H, ops->kind, nwarps,
                                  max_fill > 0.0 ? max_fill : GS_BATCH_MAX_FILL_DEFAULT, alpha, x,
                                  beta, y);
}

gs_status_t gs_batch_spmv_time(gs_batch_spmv_t *S, const gs_val_t *d_x, gs_val_t *d_y,
                               int warmup, int runs, double *median_s, double *min_s)
{
  if (!S || !median_s || runs < 1 || warmup < 0)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_spmv_time: NULL argument or runs < 1");
  gs_context_t *ctx = S->B->ctx;
  cudaEvent_t ev[2] = {NULL, NULL};
  gs_status_t st = GS_SUCCESS;
  double *t = malloc((size_t)runs * sizeof *t);
  if (!t) return GS_ERROR(GS_ERR_HOST_MEMORY, "gs_batch_spmv_time: out of host memory");
  GS_TRY(gs_context_activate(ctx));
  GS_TRY(GS_CUDA(cudaEventCreate(&ev[0])));
  GS_TRY(GS_CUDA(cudaEventCreate(&ev[1])));
  for (int k = 0; k < warmup; ++k) GS_TRY(gs_batch_spmv_apply(S, 1.0, d_x, 0.0, d_y));
  for (int k = 0; k < runs; ++k) {
    float ms = 0.0f;
    GS_TRY(GS_CUDA(cudaEventRecord(ev[0], ctx->stream)));
    GS_TRY(gs_batch_spmv_apply(S, 1.0, d_x, 0.0, d_y));
    GS_TRY(GS_CUDA(cudaEventRecord(ev[1], ctx->stream)));
    GS_TRY(GS_CUDA(cudaEventSynchronize(ev[1])));
    GS_TRY(GS_CUDA(cudaEventElapsedTime(&ms, ev[0], ev[1])));
    t[k] = ms * 1e-3;
  }
  if (min_s) {
    *min_s = t[0];
    for (int k = 1; k < runs; ++k) *min_s = fmin(*min_s, t[k]);
  }
  *median_s = gs_median(t, runs);
cleanup:
  for (int k = 0; k < 2; ++k)
    if (ev[k]) cudaEventDestroy(ev[k]);
  free(t);
  return st;
}
