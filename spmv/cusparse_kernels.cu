/* spmv/cusparse_kernels.cu: the vendor baselines, one backend per SpMV algorithm of cuSPARSE's
 * generic API (cusparseSpMV), all with op N and T:
 *
 *   cusparse-csr    CSR        CUSPARSE_SPMV_CSR_ALG1
 *   cusparse-csr2   CSR        CUSPARSE_SPMV_CSR_ALG2   bit-wise deterministic for op N only:
 *                                                      cuSPARSE runs T as CSR_ALG1 (atomics)
 *   cusparse-coo    COO        CUSPARSE_SPMV_COO_ALG1
 *   cusparse-coo2   COO        CUSPARSE_SPMV_COO_ALG2   deterministic for op N, T as COO_ALG1
 *   cusparse-sell   sliced ELL CUSPARSE_SPMV_SELL_ALG1
 *
 * Transpose: all five ran op T correctly on cuSPARSE 12.6 (CUDA 13) on an H100, SELL included.
 * Should an older cuSPARSE answer CUSPARSE_STATUS_NOT_SUPPORTED when prepare sizes the op-T
 * workspace, that product keeps op N only and apply answers GS_ERR_UNSUPPORTED for T (never a
 * wrong answer); the TRANSPOSE flag, static per backend, cannot say so in advance.
 *
 * Work division and memory access are cuSPARSE's own. What this file decides:
 *  - Storage. The CSR backends read the matrix's shared device CSR (gs_matrix_device_csr), no
 *    second copy. COO reads the shared column and value arrays (CSR order is COO's row-major
 *    order) plus its own row-index array, expanded on the device from the shared row pointers
 *    (coo_mark_kernel writes row i at entry rp[i] of every non-empty row into a zeroed array,
 *    and an in-place inclusive max-scan, cub::DeviceScan, carries each row index over its
 *    entries: three bandwidth-bound passes, balanced whatever the row lengths). SELL builds
 *    its own layout (slice 32, column-major within a slice, column -1 in padding), since
 *    cuSPARSE converts nothing into SELL: on the device from the shared CSR by
 *    spmv/sell_devbuild.cu, byte for byte spmv/sell_build.c's; it refuses layouts over
 *    opts->max_fill like every padded format. build=host expands the COO rows and builds the
 *    SELL layout on the host (spmv/sell_build.c) and uploads them, the reference.
 *  - Workspace. Everything is sized and allocated in prepare, never in apply: per supported op
 *    one matrix descriptor, one x and one y dense-vector descriptor of that op's lengths
 *    (x: n, y: m for N; x: m, y: n for T) and one workspace sized by cusparseSpMV_bufferSize
 *    (the size does not depend on alpha and beta), then cusparseSpMV_preprocess on it. Each op
 *    owns its descriptor and workspace: cuSPARSE does not document whether an op-T product may
 *    reuse a workspace preprocessed for op N, and the second one costs little (19 B to 58 KB
 *    seen on matrices up to 2M nonzeros); PETSc keeps cuSpMV[3] per op likewise. Apply only
 *    points the vector descriptors at d_x and d_y (cusparseDnVecSetValues: no allocation) and
 *    calls cusparseSpMV.
 *  - Scalars. alpha and beta are host doubles: apply sets CUSPARSE_POINTER_MODE_HOST on the
 *    context's handle every call, so a pointer mode left by other code never misreads them.
 *    With beta == 0 cuSPARSE does not read y (NaN in y never leaks; checked for every
 *    algorithm and op above).
 *  - Empty products. m, n or nnz == 0 never reach cuSPARSE, which documents nothing for them:
 *    y = beta*y by cudaMemsetAsync (beta == 0) or a small scaling kernel.
 *  - Precision. cusparse-csr also takes precision=float, the baseline of the float kernels in
 *    the same run: prepare rounds the shared CSR's values once into a float copy of its own on
 *    the device (gs_launch_round_to_float, the rounding of the other backends), and the matrix
 *    and vector descriptors, the compute type and the host alpha and beta are CUDA_R_32F /
 *    float. The other tables refuse float (and mixed, which cuSPARSE's SpMV does not take:
 *    its values and vectors share one type).
 *
 * Byte model of memory() (CUSP's bytes_per_spmv, beta = 0): the matrix arrays read once, x read
 * once (n doubles; m for T), y written once (m doubles; n for T):
 *   CSR  (m+1)*4 + nnz*(4+8)      COO  nnz*(4+4+8)      SELL  (slices+1)*4 + slots*(4+8)
 * (cusparse-csr in float precision: (m+1)*4 + nnz*(4+4), x and y 4 bytes an entry.)
 * device_bytes counts the arrays this backend reads, the shared CSR arrays included, plus its
 * workspaces. */
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>
#include <cusparse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "spmv/common_kernels.h"
#include "spmv/device_util.cuh"
#include "spmv/sell.h"
#include "spmv/sell_devbuild.h"
#include "spmv/spmv_impl.h"

typedef enum { CUSP_CSR, CUSP_COO, CUSP_SELL } cusp_format_t;

/* What distinguishes the backends of this file. */
typedef struct cusp_kind {
  cusp_format_t format;
  cusparseSpMVAlg_t alg;
  const char *alg_name;
  int transpose;     /* ask cuSPARSE for op = T with this format and algorithm */
  int deterministic; /* op N bit-identical from run to run (cuSPARSE's documentation) */
} cusp_kind_t;

static const cusp_kind_t kind_csr = {CUSP_CSR, CUSPARSE_SPMV_CSR_ALG1, "CUSPARSE_SPMV_CSR_ALG1", 1, 0};
static const cusp_kind_t kind_csr2 = {CUSP_CSR, CUSPARSE_SPMV_CSR_ALG2, "CUSPARSE_SPMV_CSR_ALG2", 1, 1};
static const cusp_kind_t kind_coo = {CUSP_COO, CUSPARSE_SPMV_COO_ALG1, "CUSPARSE_SPMV_COO_ALG1", 1, 0};
static const cusp_kind_t kind_coo2 = {CUSP_COO, CUSPARSE_SPMV_COO_ALG2, "CUSPARSE_SPMV_COO_ALG2", 1, 1};
static const cusp_kind_t kind_sell = {CUSP_SELL, CUSPARSE_SPMV_SELL_ALG1, "CUSPARSE_SPMV_SELL_ALG1",
                                      1, 1};

/* cusparse-sell's options (gs_spmv_cfg_t order); the others have none. */
enum { SELL_OPT_MAX_FILL };
static const gs_spmv_option_t sell_options[] = {GS_SPMV_OPTION_MAX_FILL, GS_SPMV_OPTION_END};

/* Descriptors and workspace of one op (index 0: N, 1: T). */
typedef struct cusp_op {
  cusparseConstSpMatDescr_t A;
  cusparseDnVecDescr_t x, y; /* values set by apply; x is never written by cuSPARSE */
  void *d_work;
  size_t work_bytes;
} cusp_op_t;

typedef struct cusp_data {
  const cusp_kind_t *kind;
  gs_context_t *ctx; /* the context it was prepared on (frees go through it) */
  cudaDataType vtype; /* values, vectors and compute: CUDA_R_64F, CUDA_R_32F in float precision */
  size_t vsize;       /* bytes of one value or vector entry: 8, or 4 in float precision */
  float *d_valf;      /* float precision: the CSR values rounded to float (nnz), owned */
  gs_idx_t m, n, nnz;
  int empty; /* m, n or nnz == 0: y = beta*y without cuSPARSE */
  int nops;  /* 2 with transpose, else 1 (also when cuSPARSE refused op T) */
  cusp_op_t op[2];
  /* owned device arrays */
  gs_idx_t *d_coo_row;
  gs_idx_t *d_sell_ptr, *d_sell_col;
  gs_val_t *d_sell_val;
  gs_idx_t sell_slots, sell_slices, sell_width;
  size_t matrix_bytes; /* device bytes of the matrix arrays read per product (owned + shared) */
} cusp_data_t;

static cusparseOperation_t cusp_operation(int k)
{
  return k ? CUSPARSE_OPERATION_TRANSPOSE : CUSPARSE_OPERATION_NON_TRANSPOSE;
}

/* ---- destroy ------------------------------------------------------------------------------- */

static void cusp_destroy(void *data)
{
  cusp_data_t *d = (cusp_data_t *)data;
  if (!d) return;
  for (int k = 0; k < 2; ++k) {
    cusp_op_t *o = &d->op[k];
    if (o->A) cusparseDestroySpMat(o->A);
    if (o->x) cusparseDestroyDnVec(o->x);
    if (o->y) cusparseDestroyDnVec(o->y);
    gs_dfree(d->ctx, o->d_work);
  }
  gs_dfree(d->ctx, d->d_valf);
  gs_dfree(d->ctx, d->d_coo_row);
  gs_dfree(d->ctx, d->d_sell_ptr);
  gs_dfree(d->ctx, d->d_sell_col);
  gs_dfree(d->ctx, d->d_sell_val);
  free(d);
}

/* ---- prepare ------------------------------------------------------------------------------- */

/* row[rp[i]] = i for every non-empty row i (row zeroed before): the first entry of each row
 * carries its row index; the max-scan after it fills the rest of the row. */
static __global__ void coo_mark_kernel(const int32_t *__restrict__ rp, int64_t m,
                                       int32_t *__restrict__ row)
{
  GS_GRID_STRIDE(i, m)
  {
    const int32_t b = rp[i];
    if (b < rp[i + 1]) row[b] = (int32_t)i;
  }
}

/* The scan's operator: row indices only grow along the entries. */
struct coo_max_op {
  __device__ __forceinline__ int32_t operator()(int32_t a, int32_t b) const
  {
    return a > b ? a : b;
  }
};

/* d_row = the row of every entry of the shared CSR (nnz >= 1), on the device. */
static gs_status_t coo_rows_device(gs_context_t *ctx, const gs_dcsr_t *csr, int32_t *d_row)
{
  gs_status_t st = GS_SUCCESS;
  void *d_temp = NULL;
  size_t temp = 0;
  const int64_t nnz = csr->nnz;
  GS_TRY(GS_CUDA(cub::DeviceScan::InclusiveScan(NULL, temp, (const int32_t *)NULL,
                                                (int32_t *)NULL, coo_max_op(), nnz,
                                                ctx->stream)));
  GS_TRY(gs_dmalloc_ordered(ctx, &d_temp, temp, "COO row scan"));
  GS_TRY(GS_CUDA(cudaMemsetAsync(d_row, 0, (size_t)nnz * sizeof(int32_t), ctx->stream)));
  coo_mark_kernel<<<gs_grid_blocks(csr->m, 256), 256, 0, ctx->stream>>>(csr->d_row_ptr32,
                                                                        csr->m, d_row);
  GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "coo_mark_kernel"));
  GS_TRY(GS_CUDA(cub::DeviceScan::InclusiveScan(d_temp, temp, d_row, d_row, coo_max_op(), nnz,
                                                ctx->stream))); /* in place */
  GS_TRY(GS_CUDA(cudaStreamSynchronize(ctx->stream))); /* the scan's storage is idle */
cleanup:
  if (st != GS_SUCCESS && d_temp) cudaStreamSynchronize(ctx->stream);
  gs_dfree(ctx, d_temp);
  return st;
}

/* Uploads (build=host) or builds on the device what the format needs beyond the shared CSR and
 * creates one matrix descriptor per op (the descriptors only point at the arrays). */
static gs_status_t cusp_matrix(gs_context_t *ctx, gs_matrix_t *A, const gs_spmv_cfg_t *cfg,
                               cusp_data_t *d)
{
  gs_status_t st = GS_SUCCESS;
  const gs_csr_t *h = NULL; /* read by the host builds only (not for CSR: GS_SPMV_FLAG_NO_HOST) */
  gs_idx_t *h_row = NULL;
  gs_sell_t *S = NULL;
  gs_sell_dev_shape_t sh;
  gs_sell_dev_t L;
  gs_dcsr_t csr;
  const int64_t m = d->m, n = d->n, nnz = d->nnz;
  const int host_build = gs_cfg_host_build(cfg);
  memset(&sh, 0, sizeof sh);
  memset(&L, 0, sizeof L);

  if (d->vtype != CUDA_R_64F && d->kind->format != CUSP_CSR) /* only CSR is flagged float */
    GS_FAIL(GS_ERR_INTERNAL, "%s reached in float precision", d->kind->alg_name);
  switch (d->kind->format) {
  case CUSP_CSR:
    GS_TRY(gs_matrix_device_csr(A, &csr));
    if (csr.wide) /* spmv.c keeps wide matrices from backends not flagged WIDE */
      GS_FAIL(GS_ERR_INTERNAL, "cusparse-csr reached with 64-bit offsets");
    if (d->vtype == CUDA_R_32F) /* float precision: a rounded copy of the shared values */
      GS_TRY(gs_dcsr_round_values(ctx, &csr, &d->d_valf));
    d->matrix_bytes = ((size_t)m + 1) * sizeof(int32_t) +
                      (size_t)nnz * (sizeof(gs_idx_t) + d->vsize);
    for (int k = 0; k < d->nops; ++k)
      GS_TRY(GS_CUSPARSE(cusparseCreateConstCsr(
          &d->op[k].A, m, n, nnz, csr.d_row_ptr32, csr.d_col,
          d->d_valf ? (const void *)d->d_valf : (const void *)csr.d_val, CUSPARSE_INDEX_32I,
          CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, d->vtype)));
    break;
  case CUSP_COO:
    GS_TRY(gs_matrix_device_csr(A, &csr));
    if (host_build) {
      if (!(h = gs_matrix_host(A))) GS_FAIL(GS_ERR_HOST_MEMORY, "no host copy of the matrix");
      h_row = (gs_idx_t *)malloc((size_t)nnz * sizeof *h_row);
      if (!h_row) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory expanding COO row indices");
      for (gs_idx_t i = 0; i < h->m; ++i)
        for (gs_off_t p = h->row_ptr[i]; p < h->row_ptr[i + 1]; ++p) h_row[p] = i;
      GS_TRY(gs_upload(ctx, (void **)&d->d_coo_row, h_row, (size_t)nnz * sizeof *h_row,
                       "COO row indices"));
    } else {
      if (csr.wide) GS_FAIL(GS_ERR_INTERNAL, "cusparse-coo reached with 64-bit offsets");
      GS_TRY(gs_dmalloc_ordered(ctx, (void **)&d->d_coo_row, (size_t)nnz * sizeof(gs_idx_t),
                                "COO row indices"));
      GS_TRY(coo_rows_device(ctx, &csr, d->d_coo_row));
    }
    d->matrix_bytes = (size_t)nnz * (2 * sizeof(gs_idx_t) + sizeof(gs_val_t));
    for (int k = 0; k < d->nops; ++k)
      GS_TRY(GS_CUSPARSE(cusparseCreateConstCoo(&d->op[k].A, m, n, nnz, d->d_coo_row, csr.d_col,
                                                csr.d_val, CUSPARSE_INDEX_32I,
                                                CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F)));
    break;
  case CUSP_SELL:
    if (host_build) {
      if (!(h = gs_matrix_host(A))) GS_FAIL(GS_ERR_HOST_MEMORY, "no host copy of the matrix");
      GS_TRY(gs_sell_build(&S, h, GS_SELL_SLICE_SIZE, cfg->v[SELL_OPT_MAX_FILL]));
      GS_TRY(gs_upload(ctx, (void **)&d->d_sell_ptr, S->slice_ptr,
                       ((size_t)S->nslices + 1) * sizeof(gs_idx_t), "SELL slice offsets"));
      GS_TRY(gs_upload(ctx, (void **)&d->d_sell_col, S->col, (size_t)S->slots * sizeof(gs_idx_t),
                       "SELL column indices"));
      GS_TRY(gs_upload(ctx, (void **)&d->d_sell_val, S->val, (size_t)S->slots * sizeof(gs_val_t),
                       "SELL values"));
      d->sell_slots = S->slots;
      d->sell_slices = S->nslices;
      d->sell_width = S->max_width;
    } else { /* gs_sell_build's layout (C = 32, P = 1, no sorting), on the device */
      const gs_sell_params_t p = {GS_SELL_SLICE_SIZE, 1, 1, cfg->v[SELL_OPT_MAX_FILL], "SELL"};
      GS_TRY(gs_matrix_device_csr(A, &csr));
      if (csr.wide) GS_FAIL(GS_ERR_INTERNAL, "cusparse-sell reached with 64-bit offsets");
      GS_TRY(gs_sell_dev_build(ctx, &csr, &p, 0, &sh, &L));
      d->d_sell_ptr = L.d_slice_ptr;
      d->d_sell_col = L.d_col;
      d->d_sell_val = L.d_val;
      memset(&L, 0, sizeof L); /* d owns them now */
      d->sell_slots = (gs_idx_t)sh.slots;
      d->sell_slices = sh.nslices;
      d->sell_width = sh.max_width;
    }
    d->matrix_bytes = ((size_t)d->sell_slices + 1) * sizeof(gs_idx_t) +
                      (size_t)d->sell_slots * (sizeof(gs_idx_t) + sizeof(gs_val_t));
    for (int k = 0; k < d->nops; ++k)
      GS_TRY(GS_CUSPARSE(cusparseCreateConstSlicedEll(
          &d->op[k].A, m, n, nnz, d->sell_slots, GS_SELL_SLICE_SIZE, d->d_sell_ptr,
          d->d_sell_col, d->d_sell_val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
          CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F)));
    break;
  }
cleanup:
  free(h_row);
  gs_sell_destroy(&S);
  gs_sell_dev_free(ctx, &L);
  gs_sell_dev_shape_free(ctx, &sh);
  return st;
}

static gs_status_t cusp_prepare(gs_context_t *ctx, gs_matrix_t *A, const gs_spmv_cfg_t *cfg,
                                void **data, unsigned *caps, const cusp_kind_t *kind)
{
  gs_status_t st = GS_SUCCESS;
  char *d_scratch = NULL;
  /* host scalars of the compute type (float in float precision) */
  const double one = 1.0, zero = 0.0;
  const float onef = 1.0f, zerof = 0.0f;
  const int fl = cfg->precision == GS_PRECISION_FLOAT;
  const void *p_one = fl ? (const void *)&onef : (const void *)&one;
  const void *p_zero = fl ? (const void *)&zerof : (const void *)&zero;
  gs_idx_t hm = 0, hn = 0;
  gs_off_t hnnz = 0;
  gs_matrix_dims(A, &hm, &hn, &hnnz);
  const size_t len = (size_t)hm + (size_t)hn;
  *data = NULL;
  cusp_data_t *d = (cusp_data_t *)calloc(1, sizeof *d);
  if (!d) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory preparing %s", kind->alg_name);
  d->kind = kind;
  d->ctx = ctx;
  d->vtype = fl ? CUDA_R_32F : CUDA_R_64F;
  d->vsize = fl ? sizeof(float) : sizeof(double);
  d->m = hm;
  d->n = hn;
  d->nnz = hnnz;
  d->nops = kind->transpose ? 2 : 1;
  if (hm == 0 || hn == 0 || hnnz == 0) {
    d->empty = 1;
    *data = d;
    return GS_SUCCESS;
  }
  GS_TRY(cusp_matrix(ctx, A, cfg, d));

  /* Vector descriptors need device arrays of the right lengths while the workspace is sized
   * and the pattern preprocessed: a zeroed scratch of m + n values (of vsize bytes), freed
   * before returning. Apply re-points the descriptors at the caller's vectors before every
   * product. */
  GS_TRY(gs_dmalloc_ordered(ctx, (void **)&d_scratch, len * d->vsize,
                            "SpMV preprocessing vectors"));
  GS_TRY(GS_CUDA(cudaMemsetAsync(d_scratch, 0, len * d->vsize, ctx->stream)));
  GS_TRY(GS_CUSPARSE(cusparseSetPointerMode(ctx->cusparse, CUSPARSE_POINTER_MODE_HOST)));
  for (int k = 0; k < d->nops; ++k) {
    cusp_op_t *o = &d->op[k];
    const gs_idx_t in = k ? d->m : d->n, out = k ? d->n : d->m;
    GS_TRY(GS_CUSPARSE(cusparseCreateDnVec(&o->x, in, d_scratch, d->vtype)));
    GS_TRY(GS_CUSPARSE(cusparseCreateDnVec(&o->y, out, d_scratch + (size_t)in * d->vsize,
                                           d->vtype)));
    cusparseStatus_t cs = cusparseSpMV_bufferSize(ctx->cusparse, cusp_operation(k), p_one,
                                                  o->A, o->x, p_zero, o->y, d->vtype, kind->alg,
                                                  &o->work_bytes);
    if (k == 1 && cs == CUSPARSE_STATUS_NOT_SUPPORTED) { /* this cuSPARSE has no such op T */
      d->nops = 1; /* destroy still frees this op's descriptors */
      break;
    }
    GS_TRY(GS_CUSPARSE(cs));
    GS_TRY(gs_dmalloc_ordered(ctx, &o->d_work, o->work_bytes, "cuSPARSE SpMV workspace"));
#if CUSPARSE_VERSION >= 12300 /* cusparseSpMV_preprocess appeared in cuSPARSE 12.3 (CUDA 12.4) */
    GS_TRY(GS_CUSPARSE(cusparseSpMV_preprocess(ctx->cusparse, cusp_operation(k), p_one, o->A,
                                               o->x, p_zero, o->y, d->vtype, kind->alg,
                                               o->d_work)));
#endif
  }
  GS_TRY(GS_CUDA(cudaStreamSynchronize(ctx->stream))); /* scratch is idle before it is freed */
  if (d->nops < 2) *caps &= ~(unsigned)GS_SPMV_CAP_TRANSPOSE;
  if (!kind->deterministic) *caps &= ~(unsigned)GS_SPMV_CAP_DETERMINISTIC;
  *caps &= ~(unsigned)GS_SPMV_CAP_DETERMINISTIC_T; /* op T: atomics in every algorithm */
  *data = d;
  d = NULL;
cleanup:
  if (st != GS_SUCCESS && d_scratch) cudaStreamSynchronize(ctx->stream);
  gs_dfree(ctx, d_scratch);
  cusp_destroy(d);
  return st;
}

/* One prepare per backend of this file: the table's slot has no room for the kind. */
#define CUSP_PREPARE(k)                                                                        \
  static gs_status_t prepare_##k(gs_context_t *ctx, gs_matrix_t *A, const gs_spmv_cfg_t *cfg, \
                                 void **data, unsigned *caps)                                 \
  {                                                                                            \
    return cusp_prepare(ctx, A, cfg, data, caps, &kind_##k);                                   \
  }
CUSP_PREPARE(csr)
CUSP_PREPARE(csr2)
CUSP_PREPARE(coo)
CUSP_PREPARE(coo2)
CUSP_PREPARE(sell)
#undef CUSP_PREPARE

/* ---- apply, memory, describe --------------------------------------------------------------- */

/* T: double, or float in float precision (the descriptors' type, set at prepare). */
template <typename T>
static gs_status_t cusp_apply_t(gs_context_t *ctx, void *data, gs_op_t op, T alpha, const T *d_x,
                                T beta, T *d_y)
{
  cusp_data_t *d = (cusp_data_t *)data;
  const int k = op == GS_OP_T;
  if (k && d->nops < 2) /* the installed cuSPARSE refused op T in prepare */
    return GS_ERROR(GS_ERR_UNSUPPORTED, "%s of this cuSPARSE has no transpose",
                    d->kind->alg_name);
  if (d->empty) return gs_launch_scale(ctx->stream, k ? d->n : d->m, beta, d_y); /* no entries */
  cusp_op_t *o = &d->op[k];
  GS_CHECK(GS_CUSPARSE(cusparseSetPointerMode(ctx->cusparse, CUSPARSE_POINTER_MODE_HOST)));
  /* cuSPARSE has no const setter for a dense vector; x is only read. */
  GS_CHECK(GS_CUSPARSE(cusparseDnVecSetValues(o->x, (void *)d_x)));
  GS_CHECK(GS_CUSPARSE(cusparseDnVecSetValues(o->y, d_y)));
  return GS_CUSPARSE(cusparseSpMV(ctx->cusparse, cusp_operation(k), &alpha, o->A, o->x, &beta,
                                  o->y, d->vtype, d->kind->alg, o->d_work));
}

static gs_status_t cusp_apply(gs_context_t *ctx, void *data, gs_op_t op, double alpha,
                              const double *d_x, double beta, double *d_y)
{
  return cusp_apply_t(ctx, data, op, alpha, d_x, beta, d_y);
}

static gs_status_t cusp_apply_f32(gs_context_t *ctx, void *data, gs_op_t op, float alpha,
                                  const float *d_x, float beta, float *d_y)
{
  return cusp_apply_t(ctx, data, op, alpha, d_x, beta, d_y);
}

/* matrix_bytes counts what a product reads: for float precision the shared row pointers and
 * columns and the float copy of the values (the shared double values stay the matrix's). */
static gs_status_t cusp_memory(const void *data, gs_spmv_mem_t *mem)
{
  const cusp_data_t *d = (const cusp_data_t *)data;
  const size_t m8 = (size_t)d->m * d->vsize, n8 = (size_t)d->n * d->vsize;
  mem->device_bytes = d->matrix_bytes + d->op[0].work_bytes + d->op[1].work_bytes;
  mem->bytes_per_apply = d->matrix_bytes + (d->empty ? 0 : n8) + m8;
  mem->bytes_per_apply_t = d->nops < 2 ? 0 : d->matrix_bytes + (d->empty ? 0 : m8) + n8;
  return GS_SUCCESS;
}

static void cusp_describe(const void *data, char *buf, size_t len)
{
  const cusp_data_t *d = (const cusp_data_t *)data;
  const cusp_kind_t *kd = d->kind;
  if (d->empty) {
    snprintf(buf, len, "%s: no stored entries, y = beta*y without cuSPARSE", kd->alg_name);
    return;
  }
  char work[96];
  if (d->nops == 2)
    snprintf(work, sizeof work, "workspace %zu B (N) + %zu B (T)", d->op[0].work_bytes,
             d->op[1].work_bytes);
  else
    snprintf(work, sizeof work, "workspace %zu B, no transpose", d->op[0].work_bytes);
  if (kd->format == CUSP_SELL)
    snprintf(buf, len, "%s, slice %d, %d slots for %d nonzeros (%.2fx, longest row %d), %s",
             kd->alg_name, GS_SELL_SLICE_SIZE, (int)d->sell_slots, (int)d->nnz,
             (double)d->sell_slots / (double)d->nnz, (int)d->sell_width, work);
  else
    snprintf(buf, len, "%s on the shared CSR%s, %s", kd->alg_name,
             kd->format == CUSP_COO ? " (+ COO row indices)" : "", work);
}

/* Host check of the SELL layout (the CSR and COO backends use plain CSR, their layout). Built
 * whatever alpha is, so that a refusal reads as prepare's; alpha == 0 then leaves the layout and
 * x unread (gs_sell_spmv_host: y = beta*y). */
static gs_status_t host_apply_sell(const gs_csr_t *A, const gs_spmv_cfg_t *cfg, gs_op_t op,
                                   double alpha, const double *x, double beta, double *y)
{
  gs_sell_t *S = NULL;
  GS_CHECK(gs_sell_build(&S, A, GS_SELL_SLICE_SIZE, cfg->v[SELL_OPT_MAX_FILL]));
  gs_status_t st = gs_sell_spmv_host(S, op, alpha, x, beta, y);
  gs_sell_destroy(&S);
  return st;
}

/* ---- the four tables ------------------------------------------------------------------------ */

extern "C" const gs_spmv_ops_t gs_spmv_cusparse_csr_ops = {
    GS_SPMV_OPS_VERSION, "cusparse-csr", "cuSPARSE SpMV on CSR, CUSPARSE_SPMV_CSR_ALG1 (baseline)",
    GS_SPMV_FLAG_VENDOR | GS_SPMV_FLAG_TRANSPOSE | GS_SPMV_FLAG_SHARED_CSR |
        GS_SPMV_FLAG_LIGHT | GS_SPMV_FLAG_FLOAT | GS_SPMV_FLAG_NO_HOST, NULL,
    prepare_csr, cusp_apply, cusp_memory,
    cusp_destroy, NULL /* host_apply: plain CSR */, cusp_describe, cusp_apply_f32};

extern "C" const gs_spmv_ops_t gs_spmv_cusparse_csr2_ops = {
    GS_SPMV_OPS_VERSION, "cusparse-csr2",
    "cuSPARSE SpMV on CSR, CUSPARSE_SPMV_CSR_ALG2: deterministic for op N (baseline)",
    GS_SPMV_FLAG_VENDOR | GS_SPMV_FLAG_TRANSPOSE | GS_SPMV_FLAG_SHARED_CSR |
        GS_SPMV_FLAG_LIGHT, NULL,
    prepare_csr2, cusp_apply, cusp_memory,
    cusp_destroy, NULL /* host_apply: plain CSR */, cusp_describe};

extern "C" const gs_spmv_ops_t gs_spmv_cusparse_coo_ops = {
    GS_SPMV_OPS_VERSION, "cusparse-coo", "cuSPARSE SpMV on COO, CUSPARSE_SPMV_COO_ALG1 (baseline)",
    GS_SPMV_FLAG_VENDOR | GS_SPMV_FLAG_TRANSPOSE | GS_SPMV_FLAG_SHARED_CSR |
        GS_SPMV_FLAG_DEVICE_BUILD, NULL,
    prepare_coo, cusp_apply, cusp_memory,
    cusp_destroy, NULL /* host_apply: plain CSR (COO in the same order) */, cusp_describe};

extern "C" const gs_spmv_ops_t gs_spmv_cusparse_coo2_ops = {
    GS_SPMV_OPS_VERSION, "cusparse-coo2",
    "cuSPARSE SpMV on COO, CUSPARSE_SPMV_COO_ALG2: deterministic for op N (baseline)",
    GS_SPMV_FLAG_VENDOR | GS_SPMV_FLAG_TRANSPOSE | GS_SPMV_FLAG_SHARED_CSR |
        GS_SPMV_FLAG_DEVICE_BUILD, NULL,
    prepare_coo2, cusp_apply, cusp_memory,
    cusp_destroy, NULL /* host_apply: plain CSR (COO in the same order) */, cusp_describe};

extern "C" const gs_spmv_ops_t gs_spmv_cusparse_sell_ops = {
    GS_SPMV_OPS_VERSION, "cusparse-sell",
    "cuSPARSE SpMV on sliced ELL (slice 32), CUSPARSE_SPMV_SELL_ALG1 (baseline)",
    GS_SPMV_FLAG_VENDOR | GS_SPMV_FLAG_TRANSPOSE | GS_SPMV_FLAG_HOST_LAYOUT |
        GS_SPMV_FLAG_SHARED_CSR | GS_SPMV_FLAG_DEVICE_BUILD, sell_options,
    prepare_sell,
    cusp_apply, cusp_memory, cusp_destroy, host_apply_sell, cusp_describe};
