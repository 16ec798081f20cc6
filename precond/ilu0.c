/* precond/ilu0.c: incomplete factorizations without fill, through cuSPARSE.
 *
 *   ilu0  A ~ L U on the pattern of A (cusparseDcsrilu02): L unit lower and U upper share one
 *         CSR array; z = U^-1 (L^-1 r) with two SpSV triangular solves.
 *   ic0   A ~ L L^T on the pattern of tril(A) (cusparseDcsric02), A symmetric; L^T is built on
 *         the host once after the factorization and stored as its own upper CSR, so that both
 *         solves run with op = N (SpSV with op = T is slower).
 *
 * cuSPARSE marks csrilu02 / csric02 deprecated (they still ship in CUDA 13); they are used
 * only here, behind the preconditioner table, so that a replacement touches this file alone.
 * The factorizations work on our own device copy of the values; the analysis and factorization
 * buffers are freed after setup, the SpSV buffers stay for the solves. Row numbers in messages
 * are 1-based, as in the Matrix Market file. */
#define DISABLE_CUSPARSE_DEPRECATED /* before cusparse.h: silence the deprecation attributes */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "precond/precond_impl.h"
#include "spmv/spmv_impl.h"

typedef struct {
  int ic;                    /* 0: ilu0, 1: ic0 */
  gs_idx_t n;
  gs_context_t *ctx;         /* frees go through it */
  gs_idx_t nnz_l, nnz_u;     /* ilu0: nnz_u = 0 (U shares L's arrays) */
  int32_t *d_row_l;          /* 32-bit copies of the row pointers: csrilu02 / csric02 take int */
  gs_idx_t *d_col_l;
  double *d_val_l;
  int32_t *d_row_u;
  gs_idx_t *d_col_u;
  double *d_val_u;
  double *d_tmp, *d_dummy;   /* L^-1 r; a placeholder vector for descriptor creation */
  void *d_buf_l, *d_buf_u;   /* SpSV buffers */
  size_t buf_bytes;
  cusparseSpMatDescr_t mat_l, mat_u;
  cusparseDnVecDescr_t vec_in, vec_tmp, vec_out;
  cusparseSpSVDescr_t sv_l, sv_u;
} ilu_t;

static void ilu_destroy(void *data)
{
  ilu_t *F = data;
  if (!F) return;
  if (F->sv_l) cusparseSpSV_destroyDescr(F->sv_l);
  if (F->sv_u) cusparseSpSV_destroyDescr(F->sv_u);
  if (F->mat_l) cusparseDestroySpMat(F->mat_l);
  if (F->mat_u) cusparseDestroySpMat(F->mat_u);
  if (F->vec_in) cusparseDestroyDnVec(F->vec_in);
  if (F->vec_tmp) cusparseDestroyDnVec(F->vec_tmp);
  if (F->vec_out) cusparseDestroyDnVec(F->vec_out);
  gs_dfree(F->ctx, F->d_row_l);
  gs_dfree(F->ctx, F->d_col_l);
  gs_dfree(F->ctx, F->d_val_l);
  gs_dfree(F->ctx, F->d_row_u);
  gs_dfree(F->ctx, F->d_col_u);
  gs_dfree(F->ctx, F->d_val_u);
  gs_dfree(F->ctx, F->d_tmp);
  gs_dfree(F->ctx, F->d_dummy);
  gs_dfree(F->ctx, F->d_buf_l);
  gs_dfree(F->ctx, F->d_buf_u);
  free(F);
}

/* Position of a_ii in row i of a sorted CSR, or -1. */
static gs_off_t diag_pos(const gs_csr_t *A, gs_idx_t i)
{
  gs_off_t lo = A->row_ptr[i], hi = A->row_ptr[i + 1] - 1;
  while (lo <= hi) {
    gs_off_t mid = lo + (hi - lo) / 2;
    if (A->col[mid] == i) return mid;
    if (A->col[mid] < i) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/* The first row without a stored diagonal entry, or -1. */
static gs_idx_t missing_diagonal(const gs_csr_t *A)
{
  for (gs_idx_t i = 0; i < A->m; ++i)
    if (diag_pos(A, i) < 0) return i;
  return -1;
}

/* tril(A) with its values, rows sorted (A sorted). */
static gs_status_t lower_triangle(const gs_csr_t *A, gs_csr_t **out)
{
  gs_off_t nnz = 0;
  for (gs_idx_t i = 0; i < A->m; ++i)
    for (gs_off_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k) nnz += A->col[k] <= i;
  GS_CHECK(gs_csr_create(out, A->m, A->n, nnz));
  gs_csr_t *L = *out;
  gs_off_t e = 0;
  for (gs_idx_t i = 0; i < A->m; ++i) {
    for (gs_off_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k)
      if (A->col[k] <= i) {
        L->col[e] = A->col[k];
        L->val[e++] = A->val[k];
      }
    L->row_ptr[i + 1] = e;
  }
  return GS_SUCCESS;
}

/* The cuSPARSE handle's pointer mode is the context's to keep: set host mode for our calls
 * (the zero-pivot position and alpha are host values) and put the old mode back after. */
typedef struct {
  cusparseHandle_t h;
  cusparsePointerMode_t old;
} pmode_t;

static gs_status_t pmode_host(pmode_t *p, cusparseHandle_t h)
{
  p->h = h;
  GS_CHECK(GS_CUSPARSE(cusparseGetPointerMode(h, &p->old)));
  return GS_CUSPARSE(cusparseSetPointerMode(h, CUSPARSE_POINTER_MODE_HOST));
}

static void pmode_restore(const pmode_t *p)
{
  if (p->h) cusparseSetPointerMode(p->h, p->old);
}

/* Incomplete factorization of the CSR on the device (values overwritten with the factor).
 * A zero pivot, structural or numerical, is an error naming its row. */
static gs_status_t factorize(gs_context_t *ctx, int ic, gs_idx_t n, gs_idx_t nnz,
                             const gs_idx_t *d_row, const gs_idx_t *d_col, double *d_val)
{
  gs_status_t st = GS_SUCCESS;
  const char *who = ic ? "ic0" : "ilu0";
  cusparseHandle_t h = ctx->cusparse;
  cusparseMatDescr_t descr = NULL;
  csrilu02Info_t ilu_info = NULL;
  csric02Info_t ic_info = NULL;
  void *d_buf = NULL;
  int bytes = 0, pos = -1;
  const cusparseSolvePolicy_t policy = CUSPARSE_SOLVE_POLICY_USE_LEVEL;

  GS_TRY(GS_CUSPARSE(cusparseCreateMatDescr(&descr)));
  GS_TRY(GS_CUSPARSE(cusparseSetMatType(descr, CUSPARSE_MATRIX_TYPE_GENERAL)));
  GS_TRY(GS_CUSPARSE(cusparseSetMatIndexBase(descr, CUSPARSE_INDEX_BASE_ZERO)));
  if (ic) {
    GS_TRY(GS_CUSPARSE(cusparseCreateCsric02Info(&ic_info)));
    GS_TRY(GS_CUSPARSE(cusparseDcsric02_bufferSize(h, n, nnz, descr, d_val, d_row, d_col, ic_info,
                                                   &bytes)));
  } else {
    GS_TRY(GS_CUSPARSE(cusparseCreateCsrilu02Info(&ilu_info)));
    GS_TRY(GS_CUSPARSE(cusparseDcsrilu02_bufferSize(h, n, nnz, descr, d_val, d_row, d_col,
                                                    ilu_info, &bytes)));
  }
  GS_TRY(gs_dmalloc(ctx, &d_buf, (size_t)(bytes > 0 ? bytes : 1), "the factorization buffer"));

  /* analysis, then its structural zero pivot */
  cusparseStatus_t zs;
  if (ic) {
    GS_TRY(GS_CUSPARSE(cusparseDcsric02_analysis(h, n, nnz, descr, d_val, d_row, d_col, ic_info,
                                                 policy, d_buf)));
    zs = cusparseXcsric02_zeroPivot(h, ic_info, &pos);
  } else {
    GS_TRY(GS_CUSPARSE(cusparseDcsrilu02_analysis(h, n, nnz, descr, d_val, d_row, d_col,
                                                  ilu_info, policy, d_buf)));
    zs = cusparseXcsrilu02_zeroPivot(h, ilu_info, &pos);
  }
  if (zs == CUSPARSE_STATUS_ZERO_PIVOT)
    GS_FAIL(GS_ERR_INVALID_ARG, "%s: no diagonal entry in row %d (1-based): structural zero pivot",
            who, pos + 1);
  GS_TRY(GS_CUSPARSE(zs));

  /* factorization, then its numerical zero pivot */
  if (ic) {
    GS_TRY(GS_CUSPARSE(cusparseDcsric02(h, n, nnz, descr, d_val, d_row, d_col, ic_info, policy,
                                        d_buf)));
    zs = cusparseXcsric02_zeroPivot(h, ic_info, &pos);
  } else {
    GS_TRY(GS_CUSPARSE(cusparseDcsrilu02(h, n, nnz, descr, d_val, d_row, d_col, ilu_info, policy,
                                         d_buf)));
    zs = cusparseXcsrilu02_zeroPivot(h, ilu_info, &pos);
  }
  if (zs == CUSPARSE_STATUS_ZERO_PIVOT)
    GS_FAIL(GS_ERR_INVALID_ARG, "%s: zero pivot in row %d (1-based): the incomplete "
            "factorization does not exist for this matrix", who, pos + 1);
  GS_TRY(GS_CUSPARSE(zs));
cleanup:
  cudaStreamSynchronize(ctx->stream); /* the buffer may still be in use */
  gs_dfree(ctx, d_buf);
  if (ilu_info) cusparseDestroyCsrilu02Info(ilu_info);
  if (ic_info) cusparseDestroyCsric02Info(ic_info);
  if (descr) cusparseDestroyMatDescr(descr);
  return st;
}

/* The factor's pivots on the host: finite, nonzero, and positive for IC(0). */
static gs_status_t check_pivots(const char *who, int ic, const gs_csr_t *F)
{
  for (gs_idx_t i = 0; i < F->m; ++i) {
    gs_off_t k = diag_pos(F, i);
    double d = k >= 0 ? F->val[k] : 0.0;
    if (ic && !(d > 0.0)) /* sqrt of a negative pivot comes back as NaN */
      return GS_ERROR(GS_ERR_INVALID_ARG,
                      "%s: non-positive pivot in row %d (1-based): the matrix is not positive "
                      "definite enough for IC(0) (try ilu0 or jacobi)", who, (int)i + 1);
    if (!isfinite(d))
      return GS_ERROR(GS_ERR_INVALID_ARG, "%s: the factorization overflowed at row %d (1-based)",
                      who, (int)i + 1);
    if (d == 0.0)
      return GS_ERROR(GS_ERR_INVALID_ARG, "%s: zero pivot in row %d (1-based)", who, (int)i + 1);
  }
  return GS_SUCCESS;
}

static gs_status_t make_triangle(cusparseSpMatDescr_t *mat, gs_idx_t n, gs_idx_t nnz,
                                 gs_idx_t *d_row, gs_idx_t *d_col, double *d_val,
                                 cusparseFillMode_t fill, cusparseDiagType_t diag)
{
  GS_CHECK(GS_CUSPARSE(cusparseCreateCsr(mat, n, n, nnz, d_row, d_col, d_val, CUSPARSE_INDEX_32I,
                                         CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                         CUDA_R_64F)));
  GS_CHECK(GS_CUSPARSE(cusparseSpMatSetAttribute(*mat, CUSPARSE_SPMAT_FILL_MODE, &fill,
                                                 sizeof fill)));
  return GS_CUSPARSE(cusparseSpMatSetAttribute(*mat, CUSPARSE_SPMAT_DIAG_TYPE, &diag,
                                               sizeof diag));
}

/* Buffer and analysis of one triangular solve x -> y. */
static gs_status_t analyse(gs_context_t *ctx, cusparseSpMatDescr_t mat, cusparseDnVecDescr_t x,
                           cusparseDnVecDescr_t y, cusparseSpSVDescr_t *sv, void **d_buf,
                           size_t *total)
{
  const double one = 1.0;
  size_t bytes = 0;
  GS_CHECK(GS_CUSPARSE(cusparseSpSV_createDescr(sv)));
  GS_CHECK(GS_CUSPARSE(cusparseSpSV_bufferSize(ctx->cusparse, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                               &one, mat, x, y, CUDA_R_64F,
                                               CUSPARSE_SPSV_ALG_DEFAULT, *sv, &bytes)));
  GS_CHECK(gs_dmalloc(ctx, d_buf, bytes ? bytes : 1, "a triangular-solve buffer"));
  *total += bytes;
  return GS_CUSPARSE(cusparseSpSV_analysis(ctx->cusparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                                           mat, x, y, CUDA_R_64F, CUSPARSE_SPSV_ALG_DEFAULT, *sv,
                                           *d_buf));
}

static gs_status_t setup(gs_context_t *ctx, gs_matrix_t *A, void **data, int ic)
{
  gs_status_t st = GS_SUCCESS;
  const char *who = ic ? "ic0" : "ilu0";
  const gs_csr_t *h = gs_matrix_host(A);
  gs_csr_t *U = NULL, *own = NULL;
  pmode_t pm = {NULL, CUSPARSE_POINTER_MODE_HOST};
  ilu_t *F = calloc(1, sizeof *F);
  if (!F) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory setting up %s", who);
  F->ic = ic;
  F->ctx = ctx;
  F->n = h->m;
  if (F->n == 0) goto done;
  if (h->nnz > INT32_MAX)
    GS_FAIL(GS_ERR_UNSUPPORTED, "%s: cuSPARSE's incomplete factorizations take 32-bit offsets "
            "and the matrix has %lld entries (over 2^31-1)", who, (long long)h->nnz);

  if (ic && !gs_matrix_features(A)->numerically_symmetric) /* symmetric to rounding is enough */
    GS_FAIL(GS_ERR_INVALID_ARG, "ic0: the matrix is not symmetric (max |a_ij - a_ji| / max |a| = "
            "%.2g > %g; IC(0) factors A = L L^T from the lower triangle); use ilu0 for a "
            "nonsymmetric matrix", gs_matrix_features(A)->asymmetry, GS_SYMMETRY_RTOL);
  gs_idx_t row = missing_diagonal(h);
  if (row >= 0)
    GS_FAIL(GS_ERR_INVALID_ARG, "%s: no diagonal entry in row %d (1-based): an incomplete "
            "factorization without fill needs every diagonal entry stored", who, (int)row + 1);

  /* our own copy of the pattern and values: ilu0 all of A, ic0 its lower triangle */
  if (ic) GS_TRY(lower_triangle(h, &own));
  else GS_TRY(gs_csr_copy(&own, h));
  F->nnz_l = (gs_idx_t)own->nnz; /* <= h->nnz <= INT32_MAX (checked above) */
  GS_TRY(gs_upload_offsets32(ctx, &F->d_row_l, own->row_ptr, (size_t)F->n + 1,
                             "the factor's row pointers"));
  GS_TRY(gs_upload(ctx, (void **)&F->d_col_l, own->col, (size_t)own->nnz * sizeof(gs_idx_t),
                   "the factor's column indices"));
  GS_TRY(gs_upload(ctx, (void **)&F->d_val_l, own->val, (size_t)own->nnz * sizeof(double),
                   "the factor's values"));

  GS_TRY(pmode_host(&pm, ctx->cusparse));
  GS_TRY(factorize(ctx, ic, F->n, F->nnz_l, F->d_row_l, F->d_col_l, F->d_val_l));
  GS_TRY(gs_copy_to_host(ctx, own->val, F->d_val_l, (size_t)own->nnz * sizeof(double)));
  GS_TRY(check_pivots(who, ic, own));

  if (ic) { /* U = L^T as its own CSR */
    GS_TRY(gs_csr_transpose(&U, own));
    F->nnz_u = (gs_idx_t)U->nnz;
    GS_TRY(gs_upload_offsets32(ctx, &F->d_row_u, U->row_ptr, (size_t)F->n + 1,
                               "the transposed factor's row pointers"));
    GS_TRY(gs_upload(ctx, (void **)&F->d_col_u, U->col, (size_t)U->nnz * sizeof(gs_idx_t),
                     "the transposed factor's column indices"));
    GS_TRY(gs_upload(ctx, (void **)&F->d_val_u, U->val, (size_t)U->nnz * sizeof(double),
                     "the transposed factor's values"));
    GS_TRY(make_triangle(&F->mat_l, F->n, F->nnz_l, F->d_row_l, F->d_col_l, F->d_val_l,
                         CUSPARSE_FILL_MODE_LOWER, CUSPARSE_DIAG_TYPE_NON_UNIT));
    GS_TRY(make_triangle(&F->mat_u, F->n, F->nnz_u, F->d_row_u, F->d_col_u, F->d_val_u,
                         CUSPARSE_FILL_MODE_UPPER, CUSPARSE_DIAG_TYPE_NON_UNIT));
  } else { /* L (unit diagonal) and U share the factored array */
    GS_TRY(make_triangle(&F->mat_l, F->n, F->nnz_l, F->d_row_l, F->d_col_l, F->d_val_l,
                         CUSPARSE_FILL_MODE_LOWER, CUSPARSE_DIAG_TYPE_UNIT));
    GS_TRY(make_triangle(&F->mat_u, F->n, F->nnz_l, F->d_row_l, F->d_col_l, F->d_val_l,
                         CUSPARSE_FILL_MODE_UPPER, CUSPARSE_DIAG_TYPE_NON_UNIT));
  }

  /* vector descriptors: their pointers are set at each apply */
  GS_TRY(gs_dmalloc(ctx, (void **)&F->d_tmp, (size_t)F->n * sizeof(double), "the triangular-solve "
                    "intermediate vector"));
  GS_TRY(gs_dmalloc(ctx, (void **)&F->d_dummy, (size_t)F->n * sizeof(double), "a triangular-solve "
                    "placeholder vector"));
  GS_TRY(GS_CUDA(cudaMemsetAsync(F->d_dummy, 0, (size_t)F->n * sizeof(double), ctx->stream)));
  GS_TRY(GS_CUSPARSE(cusparseCreateDnVec(&F->vec_in, F->n, F->d_dummy, CUDA_R_64F)));
  GS_TRY(GS_CUSPARSE(cusparseCreateDnVec(&F->vec_tmp, F->n, F->d_tmp, CUDA_R_64F)));
  GS_TRY(GS_CUSPARSE(cusparseCreateDnVec(&F->vec_out, F->n, F->d_dummy, CUDA_R_64F)));
  GS_TRY(analyse(ctx, F->mat_l, F->vec_in, F->vec_tmp, &F->sv_l, &F->d_buf_l, &F->buf_bytes));
  GS_TRY(analyse(ctx, F->mat_u, F->vec_tmp, F->vec_out, &F->sv_u, &F->d_buf_u, &F->buf_bytes));
  GS_TRY(GS_CUDA(cudaStreamSynchronize(ctx->stream)));
done:
  *data = F;
  F = NULL;
cleanup:
  pmode_restore(&pm);
  gs_csr_destroy(&own);
  gs_csr_destroy(&U);
  ilu_destroy(F);
  return st;
}

static gs_status_t ilu0_setup(gs_context_t *ctx, gs_matrix_t *A, void **data)
{
  return setup(ctx, A, data, 0);
}

static gs_status_t ic0_setup(gs_context_t *ctx, gs_matrix_t *A, void **data)
{
  return setup(ctx, A, data, 1);
}

/* z = U^-1 (L^-1 r): two SpSV solves through d_tmp, so r and z may be the same vector. */
static gs_status_t ilu_apply(gs_context_t *ctx, void *data, const double *d_r, double *d_z)
{
  gs_status_t st = GS_SUCCESS;
  ilu_t *F = data;
  const double one = 1.0;
  pmode_t pm = {NULL, CUSPARSE_POINTER_MODE_HOST};
  if (F->n == 0) return GS_SUCCESS;
  GS_TRY(pmode_host(&pm, ctx->cusparse));
  GS_TRY(GS_CUSPARSE(cusparseDnVecSetValues(F->vec_in, (void *)d_r)));
  GS_TRY(GS_CUSPARSE(cusparseDnVecSetValues(F->vec_out, d_z)));
  GS_TRY(GS_CUSPARSE(cusparseSpSV_solve(ctx->cusparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                                        F->mat_l, F->vec_in, F->vec_tmp, CUDA_R_64F,
                                        CUSPARSE_SPSV_ALG_DEFAULT, F->sv_l)));
  GS_TRY(GS_CUSPARSE(cusparseSpSV_solve(ctx->cusparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                                        F->mat_u, F->vec_tmp, F->vec_out, CUDA_R_64F,
                                        CUSPARSE_SPSV_ALG_DEFAULT, F->sv_u)));
cleanup:
  pmode_restore(&pm);
  return st;
}

static size_t ilu_bytes(const void *data)
{
  const ilu_t *F = data;
  if (!F) return 0;
  size_t idx = sizeof(int32_t), val = sizeof(double); /* 32-bit row pointers and columns */
  return ((size_t)F->n + 1) * idx * (F->ic ? 2 : 1) +
         ((size_t)F->nnz_l + (size_t)F->nnz_u) * (idx + val) + 2 * (size_t)F->n * val +
         F->buf_bytes;
}

const gs_precond_ops_t gs_precond_ilu0_ops = {
  GS_PRECOND_OPS_VERSION, "ilu0", "incomplete LU without fill (cuSPARSE csrilu02 + SpSV)",
  ilu0_setup, ilu_apply, ilu_bytes, ilu_destroy,
  GS_PRECOND_FLAG_CAPTURABLE,
  NULL, NULL, NULL, NULL, NULL}; /* not symmetric: (L U)^-T would need two more triangular
                                  analyses, for op T */

const gs_precond_ops_t gs_precond_ic0_ops = {
  GS_PRECOND_OPS_VERSION, "ic0",
  "incomplete Cholesky without fill, symmetric A (cuSPARSE csric02 + SpSV)",
  ic0_setup, ilu_apply, ilu_bytes, ilu_destroy,
  GS_PRECOND_FLAG_SYMMETRIC | GS_PRECOND_FLAG_CAPTURABLE,
  NULL, NULL, NULL, NULL, NULL}; /* (L L^T)^T = L L^T */
