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
  int rows;        /* > 0: multi-row warps, this many rows per warp (width is then 32) */
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

/* Matrix entries are read once per product: load them past L1 (ld.global.nc.L1::no_allocate)
 * so that L1 keeps the gathered entries of x, which neighbouring rows reuse. */
static __device__ __forceinline__ double ld_stream(const double *p)
{
  double v;
  asm volatile("ld.global.nc.L1::no_allocate.f64 %0, [%1];" : "=d"(v) : "l"(p));
  return v;
}
static __device__ __forceinline__ gs_idx_t ld_stream(const gs_idx_t *p)
{
  gs_idx_t v;
  asm volatile("ld.global.nc.L1::no_allocate.s32 %0, [%1];" : "=r"(v) : "l"(p));
  return v;
}

template <int W>
static __global__ void __launch_bounds__(CSR_BLOCK)
csr_vector_kernel(gs_idx_t m, const gs_idx_t *__restrict__ rp, const gs_idx_t *__restrict__ col,
                  const double *__restrict__ val, const double *__restrict__ x, double alpha,
                  double beta, double *__restrict__ y)
{
  const int lane = threadIdx.x & (W - 1);                          /* lane inside the group */
  const gs_idx_t groups = (gs_idx_t)(gridDim.x * (blockDim.x / W));
  /* All W lanes of a group take the same rows and leave the loop together; other groups of the
   * same warp may leave earlier, so the shuffles name only this group's lanes. */
  const unsigned mask = W == 32 ? 0xffffffffu
                                : ((1u << W) - 1u) << ((threadIdx.x & 31) & ~(unsigned)(W - 1));
  for (gs_idx_t i = (blockIdx.x * blockDim.x + threadIdx.x) / W; i < m; i += groups) {
    const gs_idx_t start = rp[i], end = rp[i + 1];
    /* Two independent partial sums: two loads in flight per lane per step. */
    double s0 = 0.0, s1 = 0.0;
    gs_idx_t p = start + lane;
    for (; p + W < end; p += 2 * W) {
      s0 += ld_stream(&val[p]) * __ldg(&x[ld_stream(&col[p])]);
      s1 += ld_stream(&val[p + W]) * __ldg(&x[ld_stream(&col[p + W])]);
    }
    if (p < end) s0 += ld_stream(&val[p]) * __ldg(&x[ld_stream(&col[p])]);
    double s = s0 + s1;
    for (int off = W / 2; off > 0; off /= 2) s += __shfl_xor_sync(mask, s, off, W);
    if (lane == 0) y[i] = beta == 0.0 ? alpha * s : alpha * s + beta * y[i];
  }
}

/* Multi-row warps (used when rows are longer than 8 on average): a full warp takes R consecutive
 * rows, whose entries are one contiguous range [rp[i0], rp[i0+R]) of col/val, and streams it
 * 32 entries at a time, fully coalesced, with no lane idle at row ends. Each entry's row inside
 * the R is found by comparing with the R-1 inner row bounds (kept in registers); each lane keeps
 * R partial sums, reduced across the warp at the end, and lane r writes y[i0 + r]. With one row
 * per group (plain csr-vector) a warp has one row's loads in flight after a dependent row_ptr
 * load; R rows give R times the memory-level parallelism per row_ptr round trip, which is what
 * separated csr-vector from cuSPARSE on the 27-point Laplacian (0.72x -> see the closing note). */
template <int R>
static __global__ void __launch_bounds__(CSR_BLOCK)
csr_warp_rows_kernel(gs_idx_t m, const gs_idx_t *__restrict__ rp,
                     const gs_idx_t *__restrict__ col, const double *__restrict__ val,
                     const double *__restrict__ x, double alpha, double beta,
                     double *__restrict__ y)
{
  const int lane = threadIdx.x & 31;
  const gs_idx_t warps = (gs_idx_t)(gridDim.x * (blockDim.x / 32));
  for (gs_idx_t w = (blockIdx.x * blockDim.x + threadIdx.x) / 32; (int64_t)w * R < m; w += warps) {
    const gs_idx_t i0 = w * R;
    const int nr = (int)(m - i0 < R ? m - i0 : R);         /* rows of this warp (last may be short) */
    /* lanes 0..nr load the nr+1 bounds; everyone gets them by shuffles */
    const gs_idx_t mine = lane <= nr ? rp[i0 + lane] : 0;
    gs_idx_t b[R + 1];
#pragma unroll
    for (int r = 0; r <= R; ++r) b[r] = __shfl_sync(0xffffffffu, mine, r <= nr ? r : nr);
    double s[R];
#pragma unroll
    for (int r = 0; r < R; ++r) s[r] = 0.0;
    for (gs_idx_t p = b[0] + lane; p < b[R]; p += 32) {
      const double v = ld_stream(&val[p]) * __ldg(&x[ld_stream(&col[p])]);
#pragma unroll
      for (int r = 0; r < R; ++r) s[r] += (p >= b[r] && p < b[r + 1]) ? v : 0.0;
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
      double t = s[r];
      for (int off = 16; off > 0; off /= 2) t += __shfl_xor_sync(0xffffffffu, t, off);
      if (lane == r && r < nr) y[i0 + r] = beta == 0.0 ? alpha * t : alpha * t + beta * y[i0 + r];
    }
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
  if (d->rows > 0) {
    const int g = grid_for((A->m + d->rows - 1) / d->rows, 32);
#define CSR_ROWS(R)                                                                            \
  csr_warp_rows_kernel<R><<<g, CSR_BLOCK, 0, s>>>(A->m, A->d_row_ptr, A->d_col, A->d_val, x,   \
                                                  alpha, beta, y)
    switch (d->rows) {
    case 1: CSR_ROWS(1); break;
    case 2: CSR_ROWS(2); break;
    case 4: CSR_ROWS(4); break;
    default: CSR_ROWS(8); break;
    }
#undef CSR_ROWS
    return GS_CHECK_LAUNCH(s, "csr_warp_rows_kernel");
  }
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

/* Rows per warp for the multi-row kernel: about 4 entries per lane per warp (R * mean ~ 128),
 * R in {1, 2, 4, 8}; 0 (plain groups) when rows are short (mean <= 8), where CSR-smart's small
 * groups already fill the warp. */
static int warp_rows(const gs_csr_t *h)
{
  double mean = h->m > 0 ? (double)h->nnz / h->m : 0.0;
  if (mean <= 8.0) return 0;
  int r = 1;
  while (r < 8 && 2.0 * r * mean <= 128.0 * 1.5) r *= 2;
  return r;
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
  const gs_csr_t *h = gs_matrix_host(A);
  int w = o->vector_width > 0 ? o->vector_width : smart_width(h);
  int r = o->vector_width > 0 ? 0 : (o->rows_per_warp > 0 ? o->rows_per_warp : warp_rows(h));
  gs_status_t st = csr_prepare_common(ctx, A, r > 0 ? 32 : w, out);
  if (st == GS_SUCCESS) ((csr_data_t *)*out)->rows = r;
  return st;
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
  if (d->rows > 0) snprintf(buf, len, "32 threads per %d row%s", d->rows, d->rows > 1 ? "s" : "");
  else if (d->width == 1) snprintf(buf, len, "one thread per row");
  else snprintf(buf, len, "%d threads per row", d->width);
}

extern "C" const gs_spmv_ops_t gs_spmv_csr_scalar_ops = {
    GS_SPMV_OPS_VERSION, "csr-scalar",
    "CSR, one thread per row (Bell & Garland 3.3); transpose by atomics",
    GS_SPMV_FLAG_TRANSPOSE, csr_scalar_prepare, csr_apply, csr_memory, csr_destroy, NULL,
    csr_describe};

extern "C" const gs_spmv_ops_t gs_spmv_csr_vector_ops = {
    GS_SPMV_OPS_VERSION, "csr-vector",
    "CSR, 2-32 threads per row (CSR-smart), or warps over 2-8 contiguous rows; transpose by atomics",
    GS_SPMV_FLAG_TRANSPOSE, csr_vector_prepare, csr_apply, csr_memory, csr_destroy, NULL,
    csr_describe};
