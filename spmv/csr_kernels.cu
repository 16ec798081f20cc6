/* spmv/csr_kernels.cu: the csr-scalar and csr-vector backends on the matrix's shared device CSR.
 *
 * csr-scalar (003_d79f6b9d9c91141b.txt section 3.3, "CSR (scalar)"): one thread per row, each
 *   walking its row; reads of col/val are uncoalesced across a warp, so it suits short rows.
 * csr-vector (003 section 3.3, "CSR (vector)", with CSR-smart's width of
 *   002_9059e082f231be28.txt section 3.4): a group of W threads (2, 4, 8, 16 or 32, a divisor
 *   of the warp) per row; lane k reads entries start+k, start+k+W, ... (coalesced within the
 *   group), partial sums meet through a shuffle reduction inside the group. W is the smallest
 *   power of two >= the mean row length, clamped to [2, 32] (CSR-smart); opts->vector_width
 *   overrides it.
 * Transposes (both): y = beta*y first, then each nonzero scatters alpha*a_ij*x_i into y_j with a
 *   double atomicAdd (sm_60+); correct in any order, not bitwise deterministic.
 * Assumptions: row_ptr monotone, columns in 0..n-1 (validated by gs_matrix_create); with
 *   beta == 0, y is written and never read. */
#include <stdio.h>
#include <stdlib.h>

#include "core/error.h"
#include "spmv/common_kernels.h"
#include "spmv/spmv_impl.h"

#define CSR_BLOCK 256

typedef struct csr_data {
  gs_dcsr_t A;     /* borrowed from the matrix: uploaded once, shared by backends */
  int width;       /* csr-vector threads per row; 1 for csr-scalar */
  int sm_count;
} csr_data_t;

/* ---- kernels ----------------------------------------------------------------------------- */

static __global__ void __launch_bounds__(CSR_BLOCK)
csr_scalar_kernel(gs_idx_t m, const gs_idx_t *__restrict__ rp, const gs_idx_t *__restrict__ col,
                  const double *__restrict__ val, const double *__restrict__ x, double alpha,
                  double beta, double *__restrict__ y)
{
  for (gs_idx_t i = blockIdx.x * blockDim.x + threadIdx.x; i < m; i += gridDim.x * blockDim.x) {
    double s = 0.0;
    for (gs_idx_t p = rp[i]; p < rp[i + 1]; ++p) s += val[p] * __ldg(&x[col[p]]);
    y[i] = beta == 0.0 ? alpha * s : alpha * s + beta * y[i];
  }
}

template <int W>
static __global__ void __launch_bounds__(CSR_BLOCK)
csr_vector_kernel(gs_idx_t m, const gs_idx_t *__restrict__ rp, const gs_idx_t *__restrict__ col,
                  const double *__restrict__ val, const double *__restrict__ x, double alpha,
                  double beta, double *__restrict__ y)
{
  const int lane = threadIdx.x & (W - 1);                          /* lane inside the group */
  const gs_idx_t groups = (gs_idx_t)(gridDim.x * (blockDim.x / W));
  /* All W lanes of a group take the same rows, so whole groups leave the loop together and the
   * shuffle masks below always name active lanes. */
  for (gs_idx_t i = (blockIdx.x * blockDim.x + threadIdx.x) / W; i < m; i += groups) {
    const gs_idx_t start = rp[i], end = rp[i + 1];
    double s = 0.0;
    for (gs_idx_t p = start + lane; p < end; p += W) s += val[p] * __ldg(&x[col[p]]);
    for (int off = W / 2; off > 0; off /= 2) s += __shfl_xor_sync(0xffffffffu, s, off, W);
    if (lane == 0) y[i] = beta == 0.0 ? alpha * s : alpha * s + beta * y[i];
  }
}

/* op = T: a group of W threads per row scatters the row into y with atomics (W = 1: scalar). */
static __global__ void __launch_bounds__(CSR_BLOCK)
csr_transpose_kernel(gs_idx_t m, int W, const gs_idx_t *__restrict__ rp,
                     const gs_idx_t *__restrict__ col, const double *__restrict__ val,
                     const double *__restrict__ x, double alpha, double *__restrict__ y)
{
  const int lane = threadIdx.x % W;
  const gs_idx_t groups = (gs_idx_t)(gridDim.x * (blockDim.x / W));
  for (gs_idx_t i = (blockIdx.x * blockDim.x + threadIdx.x) / W; i < m; i += groups) {
    const double ax = alpha * x[i];
    if (ax == 0.0) continue; /* nothing to add (and no 0*Inf from a zero x entry) */
    for (gs_idx_t p = rp[i] + lane; p < rp[i + 1]; p += W) atomicAdd(&y[col[p]], val[p] * ax);
  }
}

/* ---- launchers ----------------------------------------------------------------------------- */

static int grid_for(gs_idx_t m, int width)
{
  long long threads = (long long)m * width;
  long long blocks = (threads + CSR_BLOCK - 1) / CSR_BLOCK;
  return (int)(blocks < 1 ? 1 : (blocks > 2147483647LL ? 2147483647LL : blocks));
}

static gs_status_t launch_vector(cudaStream_t s, const csr_data_t *d, double alpha,
                                 const double *x, double beta, double *y)
{
  const gs_dcsr_t *A = &d->A;
  const int g = grid_for(A->m, d->width);
#define CSR_VEC(W)                                                                             \
  csr_vector_kernel<W><<<g, CSR_BLOCK, 0, s>>>(A->m, A->d_row_ptr, A->d_col, A->d_val, x,      \
                                               alpha, beta, y)
  switch (d->width) {
  case 2: CSR_VEC(2); break;
  case 4: CSR_VEC(4); break;
  case 8: CSR_VEC(8); break;
  case 16: CSR_VEC(16); break;
  case 32: CSR_VEC(32); break;
  default:
    csr_scalar_kernel<<<g, CSR_BLOCK, 0, s>>>(A->m, A->d_row_ptr, A->d_col, A->d_val, x, alpha,
                                              beta, y);
  }
#undef CSR_VEC
  return GS_CHECK_LAUNCH(s, "csr_vector_kernel");
}

static gs_status_t csr_apply(gs_context_t *ctx, void *data, gs_op_t op, double alpha,
                             const double *d_x, double beta, double *d_y)
{
  const csr_data_t *d = (const csr_data_t *)data;
  cudaStream_t s = ctx->stream;
  if (op == GS_OP_N) return launch_vector(s, d, alpha, d_x, beta, d_y);
  GS_CHECK(gs_launch_scale(s, d->A.n, beta, d_y));
  if (d->A.nnz == 0 || alpha == 0.0) return GS_SUCCESS;
  csr_transpose_kernel<<<grid_for(d->A.m, d->width), CSR_BLOCK, 0, s>>>(
      d->A.m, d->width, d->A.d_row_ptr, d->A.d_col, d->A.d_val, d_x, alpha, d_y);
  return GS_CHECK_LAUNCH(s, "csr_transpose_kernel");
}

/* CSR-smart's rule (002 section 3.4): smallest power of two >= mean row length, in [2, 32]. */
static int smart_width(const gs_csr_t *h)
{
  double mean = h->m > 0 ? (double)h->nnz / h->m : 0.0;
  int w = 2;
  while (w < 32 && w < mean) w *= 2;
  return w;
}

static gs_status_t csr_prepare_common(gs_context_t *ctx, gs_matrix_t *A, int width, void **out)
{
  csr_data_t *d = (csr_data_t *)calloc(1, sizeof *d);
  if (!d) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory preparing CSR");
  gs_status_t st = gs_matrix_device_csr(A, &d->A);
  if (st != GS_SUCCESS) {
    free(d);
    return st;
  }
  d->width = width;
  d->sm_count = ctx->sm_count;
  *out = d;
  return GS_SUCCESS;
}

static gs_status_t csr_scalar_prepare(gs_context_t *ctx, gs_matrix_t *A, const gs_spmv_opts_t *o,
                                      void **out)
{
  (void)o;
  return csr_prepare_common(ctx, A, 1, out);
}

static gs_status_t csr_vector_prepare(gs_context_t *ctx, gs_matrix_t *A, const gs_spmv_opts_t *o,
                                      void **out)
{
  int w = o->vector_width > 0 ? o->vector_width : smart_width(gs_matrix_host(A));
  return csr_prepare_common(ctx, A, w, out);
}

static gs_status_t csr_memory(const void *data, gs_spmv_mem_t *mem)
{
  const csr_data_t *d = (const csr_data_t *)data;
  const gs_dcsr_t *A = &d->A;
  /* The shared CSR is what this backend reads, so it is counted as its device memory. */
  mem->device_bytes = ((size_t)A->m + 1) * sizeof(gs_idx_t) +
                      (size_t)A->nnz * (sizeof(gs_idx_t) + sizeof(double));
  mem->bytes_per_apply = gs_csr_bytes_per_apply(A->m, A->n, A->nnz);
  /* Transpose: CSR read once, x read once, y scaled (read + write) then updated by atomics
   * (at least one read-modify-write of each y entry). */
  mem->bytes_per_apply_t = mem->device_bytes + (size_t)A->m * sizeof(double) +
                           3 * (size_t)A->n * sizeof(double);
  return GS_SUCCESS;
}

static void csr_destroy(void *data) { free(data); }

static void csr_describe(const void *data, char *buf, size_t len)
{
  const csr_data_t *d = (const csr_data_t *)data;
  if (d->width == 1) snprintf(buf, len, "one thread per row");
  else snprintf(buf, len, "%d threads per row", d->width);
}

extern "C" const gs_spmv_ops_t gs_spmv_csr_scalar_ops = {
    GS_SPMV_OPS_VERSION, "csr-scalar",
    "CSR, one thread per row (Bell & Garland 3.3); transpose by atomics",
    GS_SPMV_FLAG_TRANSPOSE, csr_scalar_prepare, csr_apply, csr_memory, csr_destroy, NULL,
    csr_describe};

extern "C" const gs_spmv_ops_t gs_spmv_csr_vector_ops = {
    GS_SPMV_OPS_VERSION, "csr-vector",
    "CSR, 2-32 threads per row chosen from the mean row length (CSR-smart); transpose by atomics",
    GS_SPMV_FLAG_TRANSPOSE, csr_vector_prepare, csr_apply, csr_memory, csr_destroy, NULL,
    csr_describe};
