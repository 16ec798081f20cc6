/* spmv/ell_kernels.cu: the "ell" backend, ELLPACK SpMV (Bell & Garland, SC09, section 3.2;
 * CUSP ell_spmv.h), with its transpose, and the ELL launchers HYB reuses.
 *
 * ell_spmv_kernel (op = N)
 *   Work division: one thread per row, 256 threads (8 warps) per block, a grid-stride loop over
 *   the rows on gs_grid_blocks(m) blocks (one round below 2^28 rows); the row index is 64-bit
 *   (no 32-bit thread-number product), the per-slot loop steps pointers by the 64-bit pitch.
 *   Memory access: the M x K arrays are column-major with the row dimension padded to the
 *   pitch (a multiple of 32), so at step k the 32 threads of a warp read 32 consecutive column
 *   indices (128 bytes) and 32 consecutive values (256 bytes), aligned: fully coalesced. x is
 *   gathered through the read-only path (__ldg); the sum stays in a register and y[row] is
 *   written once (read first only when beta != 0).
 *   Padding: slots past a row's length hold column GS_ELL_PAD (-1) and value 0; for them the
 *   kernel reads x[0] (never out of bounds; n >= 1 whenever K >= 1) and drops the product with
 *   a select, so a NaN/Inf in x cannot leak into rows that do not use it. Loads are
 *   unconditional, so the unrolled iterations issue their loads back to back.
 *   Assumptions: K and pitch as built by gs_ell_layout_build; d_x != d_y.
 * ell_spmv_t_kernel (op = T, and HYB's op = T part): the same work division; thread (row) i
 *   scatters alpha*x(i)*A(i,j) into y(j) with atomicAdd (double atomics: sm_60 and later) over
 *   its K slots, padding skipped without touching y; y must already hold beta*y (the "ell"
 *   backend runs gs_launch_scale first). Slot reads are coalesced as for op = N, x(i) is read
 *   once per row (coalesced), the atomics scatter. Atomics meet in a run-dependent order, so
 *   op = T is not bitwise deterministic (prepare clears GS_SPMV_CAP_DETERMINISTIC_T).
 *
 * Build: by default (build=device) the layout is built on the GPU from the matrix's shared
 *   device CSR (spmv/bg_devbuild.cu: the longest row read back for the fill guard, then one
 *   pass writing every slot of the slab, values rounded there in mixed and float precision);
 *   build=host runs gs_ell_layout_build and uploads it. Both give the same bytes.
 * Precision: both kernels are templates on the stored value type Val and on the vector type T
 *   of x, y, alpha, beta, the sum and the atomics: <double, double> in double precision, <float,
 *   double> in mixed (the builder rounds the values once, gs_ell_layout_round, and the float
 *   layout is uploaded; a value widens exactly to double before its product), <float, float> in
 *   float precision (the same layout; fmaf, float sums and float atomicAdd). The host apply
 *   reads the same float layout.
 *
 * Byte model (gs_spmv_mem_t, beta = 0; a = 8 bytes a stored value, 4 in mixed and float
 * precision; v = 8 bytes a vector entry, 4 in float precision):
 *   op = N: (4 + a)*m*K (every slot of the m real rows: a 4-byte index and a value; the
 *           alignment rows m..pitch-1 are never read) + v*n (x, read once: the cache-resident
 *           ideal) + v*m (y written once).
 *   op = T: (4 + a)*m*K + v*m (x, read once) + v*n (the scale pass writes y) + 2v*n (atomic
 *           read-modify-write, counted once per column, as hyb and coo count theirs). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "spmv/bg_devbuild.h"
#include "spmv/common_kernels.h"
#include "spmv/device_util.cuh"
#include "spmv/formats_kernels.h"

template <typename Val, typename T>
static __global__ void __launch_bounds__(GS_FMT_BLOCK)
ell_spmv_kernel(int m, int K, long long pitch, const int *__restrict__ col,
                const Val *__restrict__ val, const T *__restrict__ x, T alpha, T beta,
                T *__restrict__ y)
{
  GS_GRID_STRIDE(row, m) {
    const int *c = col + row;
    const Val *v = val + row;
    T sum = T(0);
#pragma unroll 4
    for (int k = 0; k < K; ++k, c += pitch, v += pitch) {
      /* Branch-free so that the unrolled loads overlap: a padding slot (column GS_ELL_PAD < 0,
       * value 0) reads x[0] (in bounds, cached) and the select drops the product, so an
       * Inf/NaN in x never leaks through padding. */
      const int j = ld_stream(c);
      const T a = (T)ld_stream(v); /* a float value widens exactly to a double T */
      const T xj = __ldg(x + (j < 0 ? 0 : j));
      sum = j >= 0 ? gs_fma(a, xj, sum) : sum;
    }
    y[row] = beta == T(0) ? alpha * sum : alpha * sum + beta * y[row];
  }
}

template <typename Val, typename T>
static __global__ void __launch_bounds__(GS_FMT_BLOCK)
ell_spmv_t_kernel(int m, int K, long long pitch, const int *__restrict__ col,
                  const Val *__restrict__ val, const T *__restrict__ x, T alpha, T *y)
{
  GS_GRID_STRIDE(row, m) {
    const int *c = col + row;
    const Val *v = val + row;
    const T ax = alpha * __ldg(x + row);
    for (int k = 0; k < K; ++k, c += pitch, v += pitch) {
      const int j = __ldg(c);
      if (j >= 0) atomicAdd(y + j, (T)__ldg(v) * ax);
    }
  }
}

/* ---- launchers shared with hyb (formats_kernels.h) --------------------------------------- */

extern "C" void gs_ell_dev_free(gs_ell_dev_t *D)
{
  if (!D) return;
  gs_dfree(D->ctx, D->d_col);
  gs_dfree(D->ctx, D->d_val);
  gs_dfree(D->ctx, D->d_valf);
  memset(D, 0, sizeof *D);
}

extern "C" gs_status_t gs_ell_dev_upload(gs_context_t *ctx, const gs_ell_layout_t *L,
                                         gs_ell_dev_t *D)
{
  gs_status_t st = GS_SUCCESS;
  size_t slots = (size_t)L->pitch * (size_t)L->K;
  memset(D, 0, sizeof *D);
  D->ctx = ctx;
  D->m = L->m;
  D->n = L->n;
  D->K = L->K;
  D->pitch = L->pitch;
  GS_TRY(gs_upload(ctx, (void **)&D->d_col, L->col, slots * sizeof(gs_idx_t), "ELL columns"));
  D->val_bytes = L->valf ? sizeof(float) : sizeof(gs_val_t);
  if (L->valf)
    GS_TRY(gs_upload(ctx, (void **)&D->d_valf, L->valf, slots * sizeof(float), "ELL values"));
  else
    GS_TRY(gs_upload(ctx, (void **)&D->d_val, L->val, slots * sizeof(gs_val_t), "ELL values"));
  D->bytes = slots * (sizeof(gs_idx_t) + D->val_bytes);
cleanup:
  if (st != GS_SUCCESS) gs_ell_dev_free(D);
  return st;
}

/* Both launchers for both vector types T; the layout's values (double, or the float ones of a
 * rounded layout: always so for a float product) pick Val. */
template <typename T>
static gs_status_t ell_apply_n(gs_context_t *ctx, const gs_ell_dev_t *D, T alpha, const T *d_x,
                               T beta, T *d_y)
{
  if (D->m == 0) return GS_SUCCESS;
  const unsigned g = gs_grid_blocks(D->m, GS_FMT_BLOCK);
  if (D->d_valf)
    ell_spmv_kernel<float, T><<<g, GS_FMT_BLOCK, 0, ctx->stream>>>(
        D->m, D->K, D->pitch, D->d_col, D->d_valf, d_x, alpha, beta, d_y);
  else
    ell_spmv_kernel<double, T><<<g, GS_FMT_BLOCK, 0, ctx->stream>>>(
        D->m, D->K, D->pitch, D->d_col, D->d_val, d_x, alpha, beta, d_y);
  return GS_CHECK_LAUNCH(ctx->stream, "ell_spmv_kernel");
}

template <typename T>
static gs_status_t ell_accumulate_t(gs_context_t *ctx, const gs_ell_dev_t *D, T alpha,
                                    const T *d_x, T *d_y)
{
  if (D->m == 0 || D->K == 0) return GS_SUCCESS;
  const unsigned g = gs_grid_blocks(D->m, GS_FMT_BLOCK);
  if (D->d_valf)
    ell_spmv_t_kernel<float, T><<<g, GS_FMT_BLOCK, 0, ctx->stream>>>(
        D->m, D->K, D->pitch, D->d_col, D->d_valf, d_x, alpha, d_y);
  else
    ell_spmv_t_kernel<double, T><<<g, GS_FMT_BLOCK, 0, ctx->stream>>>(
        D->m, D->K, D->pitch, D->d_col, D->d_val, d_x, alpha, d_y);
  return GS_CHECK_LAUNCH(ctx->stream, "ell_spmv_t_kernel");
}

extern "C" gs_status_t gs_ell_dev_apply(gs_context_t *ctx, const gs_ell_dev_t *D, double alpha,
                                        const double *d_x, double beta, double *d_y)
{
  return ell_apply_n(ctx, D, alpha, d_x, beta, d_y);
}

extern "C" gs_status_t gs_ell_dev_accumulate_t(gs_context_t *ctx, const gs_ell_dev_t *D,
                                               double alpha, const double *d_x, double *d_y)
{
  return ell_accumulate_t(ctx, D, alpha, d_x, d_y);
}

gs_status_t gs_ell_dev_apply(gs_context_t *ctx, const gs_ell_dev_t *D, float alpha,
                             const float *d_x, float beta, float *d_y)
{
  return ell_apply_n(ctx, D, alpha, d_x, beta, d_y);
}

gs_status_t gs_ell_dev_accumulate_t(gs_context_t *ctx, const gs_ell_dev_t *D, float alpha,
                                    const float *d_x, float *d_y)
{
  return ell_accumulate_t(ctx, D, alpha, d_x, d_y);
}

/* ---- the backend ------------------------------------------------------------------------- */

typedef struct ell_data {
  gs_ell_dev_t dev;
  int64_t entries;  /* real entries (nnz) */
  size_t vec_bytes; /* bytes of a vector entry: 8, or 4 in float precision */
} ell_data_t;

static void ell_destroy(void *data)
{
  ell_data_t *D = (ell_data_t *)data;
  if (!D) return;
  gs_ell_dev_free(&D->dev);
  free(D);
}

enum { ELL_OPT_MAX_FILL };
static const gs_spmv_option_t ell_options[] = {GS_SPMV_OPTION_MAX_FILL, GS_SPMV_OPTION_END};

/* gs_ell_layout_build's fill guard (CUSP's, csr_to_other.h) with its message, for the device
 * build: refuse before allocating when the m*K stored slots exceed max_fill * nnz (alignment
 * rows are layout, not fill). */
static gs_status_t ell_prepare(gs_context_t *ctx, gs_matrix_t *A, const gs_spmv_cfg_t *cfg,
                               void **data, unsigned *caps)
{
  *caps &= ~(unsigned)GS_SPMV_CAP_DETERMINISTIC_T; /* op T adds into y with atomics */
  gs_status_t st = GS_SUCCESS;
  gs_ell_layout_t *L = NULL;
  ell_data_t *D = NULL;
  *data = NULL;
  if (gs_cfg_host_build(cfg)) { /* build=host: the reference builder, then the upload */
    GS_TRY(gs_ell_layout_build(&L, gs_matrix_host(A), cfg->v[ELL_OPT_MAX_FILL]));
    if (gs_cfg_float_values(cfg)) GS_TRY(gs_ell_layout_round(L)); /* once, here */
    D = (ell_data_t *)calloc(1, sizeof *D);
    if (!D) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory preparing ell");
    D->entries = L->entries;
    D->vec_bytes = cfg->precision == GS_PRECISION_FLOAT ? sizeof(float) : sizeof(gs_val_t);
    GS_TRY(gs_ell_dev_upload(ctx, L, &D->dev));
  } else { /* the same layout built on the GPU from the shared device CSR (bg_devbuild.cu) */
    gs_dcsr_t C;
    gs_idx_t K = 0;
    GS_TRY(gs_matrix_device_csr(A, &C));
    GS_TRY(gs_bg_longest_row(ctx, &C, &K));
    GS_TRY(gs_ell_check_fill(C.m, K, C.nnz, cfg->v[ELL_OPT_MAX_FILL]));
    D = (ell_data_t *)calloc(1, sizeof *D);
    if (!D) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory preparing ell");
    D->entries = C.nnz; /* K is the longest row: every entry has its slot */
    D->vec_bytes = cfg->precision == GS_PRECISION_FLOAT ? sizeof(float) : sizeof(gs_val_t);
    GS_TRY(gs_bg_ell_build(ctx, &C, K, gs_cfg_float_values(cfg), &D->dev));
  }
  *data = D;
  D = NULL;
cleanup:
  gs_ell_layout_destroy(&L);
  ell_destroy(D);
  return st;
}

template <typename T> /* double, or float in float precision */
static gs_status_t ell_apply_t(gs_context_t *ctx, void *data, gs_op_t op, T alpha, const T *d_x,
                               T beta, T *d_y)
{
  const ell_data_t *D = (const ell_data_t *)data;
  if (op == GS_OP_N) return gs_ell_dev_apply(ctx, &D->dev, alpha, d_x, beta, d_y);
  GS_CHECK(gs_launch_scale(ctx->stream, D->dev.n, beta, d_y)); /* y = beta*y, then scatter */
  return gs_ell_dev_accumulate_t(ctx, &D->dev, alpha, d_x, d_y);
}

static gs_status_t ell_apply(gs_context_t *ctx, void *data, gs_op_t op, double alpha,
                             const double *d_x, double beta, double *d_y)
{
  return ell_apply_t(ctx, data, op, alpha, d_x, beta, d_y);
}

static gs_status_t ell_apply_f32(gs_context_t *ctx, void *data, gs_op_t op, float alpha,
                                 const float *d_x, float beta, float *d_y)
{
  return ell_apply_t(ctx, data, op, alpha, d_x, beta, d_y);
}

static gs_status_t ell_memory(const void *data, gs_spmv_mem_t *mem)
{
  const ell_data_t *D = (const ell_data_t *)data;
  const size_t v = D->vec_bytes, a = D->dev.val_bytes; /* vectors, stored values */
  mem->device_bytes = D->dev.bytes;
  mem->bytes_per_apply = (size_t)D->dev.m * (size_t)D->dev.K * (sizeof(gs_idx_t) + a) +
                         (size_t)D->dev.n * v + (size_t)D->dev.m * v;
  mem->bytes_per_apply_t = (size_t)D->dev.m * (size_t)D->dev.K * (sizeof(gs_idx_t) + a) +
                           (size_t)D->dev.m * v + (size_t)D->dev.n * v + (size_t)D->dev.n * 2 * v;
  return GS_SUCCESS;
}

static void ell_describe(const void *data, char *buf, size_t len)
{
  const ell_data_t *D = (const ell_data_t *)data;
  double slots = (double)D->dev.m * (double)D->dev.K;
  snprintf(buf, len, "K = %d, pitch %lld, %.0f slots for %lld entries (fill %.2fx)",
           (int)D->dev.K, (long long)D->dev.pitch, slots, (long long)D->entries,
           D->entries > 0 ? slots / (double)D->entries : 1.0);
}

extern "C" const gs_spmv_ops_t gs_spmv_ell_ops = {
    GS_SPMV_OPS_VERSION,
    "ell",
    "ELLPACK, column-major padded to 32, one thread per row (Bell & Garland, SC09, 3.2); "
    "refuses fill; T by atomics",
    GS_SPMV_FLAG_TRANSPOSE | GS_SPMV_FLAG_HOST_LAYOUT | GS_SPMV_FLAG_MIXED | GS_SPMV_FLAG_FLOAT |
        GS_SPMV_FLAG_SHARED_CSR | GS_SPMV_FLAG_DEVICE_BUILD,
    ell_options,
    ell_prepare,
    ell_apply,
    ell_memory,
    ell_destroy,
    gs_ell_host_apply,
    ell_describe,
    ell_apply_f32};
