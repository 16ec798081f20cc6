/* batch/batch_cusparse.cu: the vendor baselines of the batched kernels, cuSPARSE's own batched
 * product on strided batches (issue 13: "cuSPARSE's batched SpMV (strided batches) where the
 * patterns are uniform"), one table entry per algorithm:
 *
 *   batch-cusparse    cusparseSpMM, CUSPARSE_SPMM_CSR_ALG1
 *   batch-cusparse2   cusparseSpMM, CUSPARSE_SPMM_CSR_ALG2
 *
 * Why SpMM: cuSPARSE's generic API batches through cusparseCsrSetStridedBatch on the sparse
 * matrix and cusparseDnMatSetStridedBatch on the dense ones; cusparseSpMV has no batched dense
 * vector (there is no cusparseDnVecSetStridedBatch), so cuSPARSE's batched SpMV is cusparseSpMM
 * with one column per problem. Its documentation: every CSR algorithm but CSR_ALG3 supports the
 * batch mode C_i = A_i B_i, at most 65,535 batches a call (larger batches here are cut into
 * chunks of 65,535 problems, one call each, all in one apply).
 *
 * What it reads: a strided batch has one m, n and nnz for all problems (gs_batch_host_uniform;
 * other batches are refused, "patterns differ"), problem i's row pointers at i * offsets stride,
 * its columns and values at i * nnz, each problem's row pointers relative to its own entries.
 * That is the batch's own device layout (batch/batch_build.c: a problem's row pointers count from
 * its first entry), read in place. A shared pattern (gs_batch_create_shared) has one set of row
 * pointers (offsets stride 0, as cuSPARSE allows) but cuSPARSE strides columns and values
 * together, so its columns are repeated once per problem in this entry's own allocation. x and
 * y are the batch's concatenated vectors: n x 1 and m x 1 dense matrices, batch strides n and
 * m, declared in the layout each algorithm is made for (cuSPARSE: ALG1 column-major, ALG2
 * row-major); with one column both layouts are the same memory (column-major ld = rows,
 * row-major ld = 1).
 * Workspace and analysis at prepare, never in apply: per chunk one sparse and two dense
 * descriptors, the workspace cusparseSpMM_bufferSize asks for, and cusparseSpMM_preprocess on
 * it (as spmv/cusparse_kernels.cu does for cusparseSpMV), on a scratch x and y of the chunk's
 * size, freed before prepare returns. Apply re-points the dense descriptors at d_x and d_y
 * (cusparseDnMatSetValues) and calls cusparseSpMM per chunk.
 * beta = 0: the library's contract is that y is then write-only. cuSPARSE's SpMM documentation
 * says only that most algorithms scale C by beta first, so prepare runs one product on a y full
 * of NaN; if NaN comes back, every apply with beta = 0 first zeroes y (and describe says so).
 * Scalars are host doubles: apply sets CUSPARSE_POINTER_MODE_HOST on the context's handle.
 * Byte model (beta = 0): row pointers once per problem (stride 0 reads one set, from cache),
 * columns and values, x and y: N ((m + 1) 4 + 12 nnz + 8 n + 8 m), the batch's floor. */
#include <cuda_runtime.h>
#include <cusparse.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch/batch_impl.h"
#include "core/context_impl.h"
#include "core/error.h"

#define VEND_CHUNK 65535 /* cuSPARSE SpMM's most batches a call */

typedef struct vend_chunk {
  cusparseSpMatDescr_t A;
  cusparseDnMatDescr_t X, Y;
  void *d_work;
  size_t work_bytes;
  int64_t first; /* first problem of the chunk */
  int count;     /* its problems */
} vend_chunk_t;

typedef struct vend_data {
  gs_context_t *ctx;
  cusparseSpMMAlg_t alg;
  cusparseOrder_t order; /* of the one-column dense matrices */
  const char *alg_name;
  int32_t m, n, nnz;
  int empty;          /* m, n or nnz = 0: y = beta y, cuSPARSE not called */
  int zero_y;         /* cuSPARSE read C with beta = 0 (prepare's probe): apply zeroes y first */
  int nchunks;
  vend_chunk_t *ch;
  int32_t *d_ci;      /* shared pattern: the columns repeated per problem */
  size_t ci_bytes, bytes_per_apply;
} vend_data_t;

static void vend_destroy(gs_batch_t *B, void *data)
{
  (void)B;
  vend_data_t *d = (vend_data_t *)data;
  if (!d) return;
  for (int c = 0; d->ch && c < d->nchunks; ++c) {
    vend_chunk_t *k = &d->ch[c];
    if (k->A) cusparseDestroySpMat(k->A);
    if (k->X) cusparseDestroyDnMat(k->X);
    if (k->Y) cusparseDestroyDnMat(k->Y);
    gs_dfree(d->ctx, k->d_work);
  }
  free(d->ch);
  gs_dfree(d->ctx, d->d_ci);
  free(d);
}

/* Descriptors, workspace and preprocessing of chunk k over the scratch vectors sx (k->count n
 * values) and sy (k->count m values). */
static gs_status_t chunk_setup(const gs_batch_t *B, vend_data_t *d, vend_chunk_t *k,
                               const int32_t *ci, double *sx, double *sy)
{
  gs_context_t *ctx = d->ctx;
  const gs_batch_host_t *H = &B->H;
  const int64_t m = d->m, n = d->n, nnz = d->nnz;
  const int64_t rp_stride = H->shared ? 0 : m + 1;
  const double one = 1.0, zero = 0.0;
  /* cuSPARSE's batch setters take non-const descriptors; SpMM never writes A */
  GS_CHECK(GS_CUSPARSE(cusparseCreateCsr(
      &k->A, m, n, nnz, (void *)(B->dev.rp + k->first * rp_stride),
      (void *)(ci + k->first * nnz), (void *)(B->dev.val + k->first * nnz), CUSPARSE_INDEX_32I,
      CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F)));
  GS_CHECK(GS_CUSPARSE(cusparseCsrSetStridedBatch(k->A, k->count, rp_stride, nnz)));
  const int row = d->order == CUSPARSE_ORDER_ROW; /* leading dimension 1, else the rows */
  GS_CHECK(GS_CUSPARSE(cusparseCreateDnMat(&k->X, n, 1, row ? 1 : n, sx, CUDA_R_64F, d->order)));
  GS_CHECK(GS_CUSPARSE(cusparseDnMatSetStridedBatch(k->X, k->count, n)));
  GS_CHECK(GS_CUSPARSE(cusparseCreateDnMat(&k->Y, m, 1, row ? 1 : m, sy, CUDA_R_64F, d->order)));
  GS_CHECK(GS_CUSPARSE(cusparseDnMatSetStridedBatch(k->Y, k->count, m)));
  GS_CHECK(GS_CUSPARSE(cusparseSpMM_bufferSize(ctx->cusparse, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                               CUSPARSE_OPERATION_NON_TRANSPOSE, &one, k->A, k->X,
                                               &zero, k->Y, CUDA_R_64F, d->alg, &k->work_bytes)));
  GS_CHECK(gs_dmalloc(ctx, &k->d_work, k->work_bytes, "cuSPARSE batched SpMM workspace"));
  return GS_CUSPARSE(cusparseSpMM_preprocess(ctx->cusparse, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                             CUSPARSE_OPERATION_NON_TRANSPOSE, &one, k->A, k->X,
                                             &zero, k->Y, CUDA_R_64F, d->alg, k->d_work));
}

/* Whether chunk 0's product with beta = 0 reads y: x = 0 and y full of NaN (every byte 0xff)
 * must give y = 0. Looks at the first few thousand values. */
static gs_status_t probe_beta_zero(vend_data_t *d, double *sx, double *sy)
{
  gs_context_t *ctx = d->ctx;
  vend_chunk_t *k = &d->ch[0];
  const size_t nx = (size_t)k->count * (size_t)d->n, ny = (size_t)k->count * (size_t)d->m;
  const size_t look = ny < 4096 ? ny : 4096;
  const double one = 1.0, zero = 0.0;
  double h[4096];
  GS_CHECK(GS_CUDA(cudaMemsetAsync(sx, 0, nx * sizeof(double), ctx->stream)));
  GS_CHECK(GS_CUDA(cudaMemsetAsync(sy, 0xff, ny * sizeof(double), ctx->stream)));
  GS_CHECK(GS_CUSPARSE(cusparseSpMM(ctx->cusparse, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                    CUSPARSE_OPERATION_NON_TRANSPOSE, &one, k->A, k->X, &zero, k->Y,
                                    CUDA_R_64F, d->alg, k->d_work)));
  GS_CHECK(gs_copy_to_host(ctx, h, sy, look * sizeof(double)));
  d->zero_y = 0;
  for (size_t i = 0; i < look; ++i)
    if (h[i] != 0.0) d->zero_y = 1;
  return GS_SUCCESS;
}

static gs_status_t vend_prepare(gs_batch_t *B, const char *name, cusparseSpMMAlg_t alg,
                                cusparseOrder_t order, const char *alg_name, void **data)
{
  const gs_batch_host_t *H = &B->H;
  gs_context_t *ctx = B->ctx;
  gs_status_t st = GS_SUCCESS;
  int32_t *h_ci = NULL;
  double *d_scratch = NULL;
  *data = NULL;
  GS_CHECK(gs_batch_host_uniform(H, name));
  vend_data_t *d = (vend_data_t *)calloc(1, sizeof *d);
  if (!d) return GS_ERROR(GS_ERR_HOST_MEMORY, "%s: out of host memory", name);
  d->ctx = ctx;
  d->alg = alg;
  d->order = order;
  d->alg_name = alg_name;
  const gs_batch_prob_t *p0 = &H->prob[0];
  d->m = p0->m;
  d->n = p0->n;
  d->nnz = p0->nnz;
  const int64_t N = H->count;
  d->bytes_per_apply = (size_t)N * ((size_t)(d->m + 1) * 4 + (size_t)d->nnz * 12 +
                                    (size_t)d->n * 8 + (size_t)d->m * 8);
  if (d->m == 0 || d->n == 0 || d->nnz == 0) { /* cuSPARSE documents nothing for these */
    d->empty = 1;
    *data = d;
    return GS_SUCCESS;
  }
  const int32_t *ci = B->dev.ci;
  if (H->shared) { /* columns strided with the values: one copy per problem */
    d->ci_bytes = (size_t)N * (size_t)d->nnz * sizeof *h_ci;
    h_ci = (int32_t *)malloc(d->ci_bytes);
    if (!h_ci) GS_FAIL(GS_ERR_HOST_MEMORY, "%s: out of host memory for %lld columns", name,
                       (long long)N * d->nnz);
    for (int64_t i = 0; i < N; ++i) memcpy(h_ci + i * d->nnz, H->ci, (size_t)d->nnz * sizeof *h_ci);
    GS_TRY(gs_dmalloc(ctx, (void **)&d->d_ci, d->ci_bytes, "the strided batch's columns"));
    GS_TRY(gs_copy_to_device(ctx, d->d_ci, h_ci, d->ci_bytes));
    ci = d->d_ci;
  }
  d->nchunks = (int)((N + VEND_CHUNK - 1) / VEND_CHUNK);
  d->ch = (vend_chunk_t *)calloc((size_t)d->nchunks, sizeof *d->ch);
  if (!d->ch) GS_FAIL(GS_ERR_HOST_MEMORY, "%s: out of host memory", name);
  {
    const int64_t most = N < VEND_CHUNK ? N : VEND_CHUNK; /* the largest chunk */
    const size_t sx = (size_t)most * (size_t)d->n, sy = (size_t)most * (size_t)d->m;
    GS_TRY(gs_dmalloc(ctx, (void **)&d_scratch, (sx + sy) * sizeof(double),
                      "cuSPARSE batched SpMM preprocessing vectors"));
    GS_TRY(GS_CUDA(cudaMemsetAsync(d_scratch, 0, (sx + sy) * sizeof(double), ctx->stream)));
    GS_TRY(GS_CUSPARSE(cusparseSetPointerMode(ctx->cusparse, CUSPARSE_POINTER_MODE_HOST)));
    for (int c = 0; c < d->nchunks; ++c) {
      vend_chunk_t *k = &d->ch[c];
      k->first = (int64_t)c * VEND_CHUNK;
      k->count = (int)(N - k->first < VEND_CHUNK ? N - k->first : VEND_CHUNK);
      GS_TRY(chunk_setup(B, d, k, ci, d_scratch, d_scratch + sx));
    }
    GS_TRY(probe_beta_zero(d, d_scratch, d_scratch + sx)); /* synchronizes: scratch idle */
  }
  *data = d;
  d = NULL;
cleanup:
  if (st != GS_SUCCESS) cudaStreamSynchronize(ctx->stream); /* nothing in flight on frees */
  gs_dfree(ctx, d_scratch);
  free(h_ci);
  vend_destroy(B, d);
  return st;
}

static gs_status_t vend_apply(gs_batch_t *B, void *data, double alpha, const double *d_x,
                              double beta, double *d_y)
{
  vend_data_t *d = (vend_data_t *)data;
  gs_context_t *ctx = B->ctx;
  const size_t ny = (size_t)B->H.row_off[B->H.count];
  if (d->empty) return gs_batch_kernel_scale(B, beta, d_y, ny);
  if (beta == 0.0 && d->zero_y)
    GS_CHECK(GS_CUDA(cudaMemsetAsync(d_y, 0, ny * sizeof(double), ctx->stream)));
  GS_CHECK(GS_CUSPARSE(cusparseSetPointerMode(ctx->cusparse, CUSPARSE_POINTER_MODE_HOST)));
  for (int c = 0; c < d->nchunks; ++c) {
    vend_chunk_t *k = &d->ch[c];
    /* cuSPARSE has no const setter for a dense matrix; x is only read */
    GS_CHECK(GS_CUSPARSE(cusparseDnMatSetValues(k->X, (void *)(d_x + k->first * d->n))));
    GS_CHECK(GS_CUSPARSE(cusparseDnMatSetValues(k->Y, d_y + k->first * d->m)));
    GS_CHECK(GS_CUSPARSE(cusparseSpMM(ctx->cusparse, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                      CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, k->A, k->X, &beta,
                                      k->Y, CUDA_R_64F, d->alg, k->d_work)));
  }
  return GS_SUCCESS;
}

static gs_status_t vend_memory(const gs_batch_t *B, const void *data, gs_batch_mem_t *mem)
{
  (void)B;
  const vend_data_t *d = (const vend_data_t *)data;
  size_t work = 0;
  for (int c = 0; d->ch && c < d->nchunks; ++c) work += d->ch[c].work_bytes;
  mem->device_bytes = d->ci_bytes + work;
  mem->bytes_per_apply = d->bytes_per_apply;
  return GS_SUCCESS;
}

static void vend_describe(const void *data, char *buf, size_t len)
{
  const vend_data_t *d = (const vend_data_t *)data;
  if (d->empty) {
    snprintf(buf, len, "no entries: y = beta y");
    return;
  }
  size_t work = 0;
  for (int c = 0; c < d->nchunks; ++c) work += d->ch[c].work_bytes;
  snprintf(buf, len, "cusparseSpMM %s (%s x), strided batches of %d x %d (%d entries), %d "
           "call%s, workspace %zu B%s%s", d->alg_name,
           d->order == CUSPARSE_ORDER_ROW ? "row-major" : "column-major", (int)d->m, (int)d->n,
           (int)d->nnz, d->nchunks,
           d->nchunks == 1 ? "" : "s", work, d->ci_bytes ? ", columns repeated per problem" : "",
           d->zero_y ? ", y zeroed first (this cuSPARSE reads C when beta = 0)" : "");
}

static gs_status_t prepare_alg1(gs_batch_t *B, double max_fill, void **data)
{
  (void)max_fill;
  return vend_prepare(B, "batch-cusparse", CUSPARSE_SPMM_CSR_ALG1, CUSPARSE_ORDER_COL,
                      "CUSPARSE_SPMM_CSR_ALG1", data);
}

static gs_status_t prepare_alg2(gs_batch_t *B, double max_fill, void **data)
{
  (void)max_fill;
  return vend_prepare(B, "batch-cusparse2", CUSPARSE_SPMM_CSR_ALG2, CUSPARSE_ORDER_ROW,
                      "CUSPARSE_SPMM_CSR_ALG2", data);
}

extern "C" const gs_batch_ops_t gs_batch_cusparse_ops = {
    GS_BATCH_OPS_VERSION, "batch-cusparse",
    "vendor baseline: cuSPARSE strided batches, cusparseSpMM CSR_ALG1, one column (uniform batches)",
    GS_BATCH_K_CSR, GS_BATCH_FORMAT_VENDOR, prepare_alg1, vend_apply, vend_memory, vend_describe,
    vend_destroy};

extern "C" const gs_batch_ops_t gs_batch_cusparse2_ops = {
    GS_BATCH_OPS_VERSION, "batch-cusparse2",
    "vendor baseline: cuSPARSE strided batches, cusparseSpMM CSR_ALG2, one column (uniform batches)",
    GS_BATCH_K_CSR, GS_BATCH_FORMAT_VENDOR, prepare_alg2, vend_apply, vend_memory, vend_describe,
    vend_destroy};
