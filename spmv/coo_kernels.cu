/* spmv/coo_kernels.cu: the "coo" backend, segmented-reduction COO SpMV with persistent warps
 * (Bell & Garland, SC09, sections 3.4 and 3.7; CUSP coo_flat_spmv).
 *
 * coo_spmv_kernel
 *   Work division: one thread per entry. A fixed number of persistent warps (as many as the
 *   device holds at once) each own one contiguous interval of entries, a multiple of 32 long
 *   (gs_coo_partition), and walk it in chunks of 32: lane l forms A(i,j)*x(j) of entry base+l,
 *   then the warp runs a segmented inclusive scan keyed by the row index (Hillis-Steele with
 *   __shfl_up_sync: add the value d lanes up when it has the same row; rows are non-decreasing,
 *   so equal rows d apart enclose one segment). A lane whose successor holds another row owns a
 *   finished row and adds alpha*sum to y. The last lane's (row, sum) is the carry into the next
 *   chunk, kept in registers (the point of persistence, section 3.7): lane 0 of the next chunk
 *   either continues that row or retires it to y. The carry left at the end of the interval is
 *   written to carry_row/carry_val[warp].
 * coo_update_kernel
 *   One thread per warp carry. Carry rows are non-decreasing in warp order, so the first carry
 *   of each run of equal rows sums the run (in order: deterministic) and adds it to y.
 * Memory access: row, col and val are read once, coalesced and 128-byte aligned (intervals are
 *   multiples of 32 entries); x is gathered through the read-only path; y is read-modified-
 *   written once per row by one lane (a row finishes in exactly one place, and a row continued
 *   from an earlier warp reaches y only through the update kernel, which runs after).
 * Assumptions: entries sorted by row (gs_coo_layout_build); y already holds beta*y (the scale
 *   kernel of common_kernels.cu runs first: with beta == 0 it writes zeros without reading
 *   y); warp shuffles on full warps (blockDim is a multiple of 32 and whole warps exit
 *   together).
 * coo_spmv_t_kernel (op = T): one thread per entry, atomicAdd(&y[j], alpha*A(i,j)*x(i)) after
 *   the scale kernel (double atomicAdd: sm_60 and later).
 * Grids: coo_update_kernel and coo_spmv_t_kernel are 64-bit grid-stride loops on
 *   gs_grid_blocks (common_kernels.h); coo_spmv_kernel gets one hardware warp per persistent
 *   warp (their number is the device's resident warps, far below the grid cap).
 *
 * Build: by default (build=device) the layout is the matrix's shared device CSR itself: COO
 *   in row-major order is the CSR's entries in CSR order, so d_col and (in double precision)
 *   d_val borrow the shared CSR's arrays (gs_coo_dev_t.borrowed; the matrix outlives the
 *   backend, as for csr-vector) and spmv/bg_devbuild.cu writes only the 4-byte row index of
 *   each entry, plus in mixed and float precision the values rounded to float in the same
 *   pass (coo's own copy). The touched rows and columns come from the features for a
 *   structurally symmetric matrix (both are the non-empty rows), else are counted in that pass.
 *   build=host runs gs_coo_layout_build and uploads all three arrays. Both give the same bytes,
 *   and gs_coo_dev_plan sizes the partition and carries for either.
 * Memory (memory()'s device_bytes): the arrays a product reads, row + col + values (borrowed
 *   ones counted once, as csr-vector and cusparse-coo count the shared CSR) + the carries: the
 *   same figure for both builds.
 * Precision: the kernels are templates on the stored value type Val and on the vector type T of
 *   x, y, alpha, the scans, the carries and the atomics: <double, double> in double precision,
 *   <float, double> in mixed (the builder rounds the values once, gs_coo_layout_round, and the
 *   float layout is uploaded; hyb's COO part likewise; values widen exactly to double before
 *   their product), <float, float> in float precision (the same layout; products, scans,
 *   carries and float atomicAdd in float). The carry buffer holds warps doubles, room for the
 *   floats of a float product too.
 *
 * Byte model (gs_spmv_mem_t, beta = 0; a = 8 bytes a stored value, 4 in mixed and float
 * precision; v = 8 bytes a vector entry, 4 in float precision):
 *   op = N: (8 + a)*nnz (row, col, val) + v*n (x read once) + v*m (scale pass writes y)
 *           + 2v*rows_touched (y read-modified-written per non-empty row) + 2(4 + v)*warps
 *           (carries written, read back).
 *   op = T: (8 + a)*nnz + v*m (x) + v*n (scale pass) + 2v*cols_touched (atomics, once per
 *           column). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "spmv/bg_devbuild.h"
#include "spmv/common_kernels.h"
#include "spmv/device_util.cuh"
#include "spmv/formats_kernels.h"

#define FULL_MASK 0xffffffffu

template <typename Val, typename T>
static __global__ void __launch_bounds__(GS_FMT_BLOCK)
coo_spmv_kernel(long long nnz, int warps, long long interval, const int *__restrict__ I,
                const int *__restrict__ J, const Val *__restrict__ V, const T *__restrict__ x,
                T alpha, T *y, int *__restrict__ carry_row, T *__restrict__ carry_val)
{
  const int lane = threadIdx.x & 31;
  /* One hardware warp per persistent warp: the launch covers all `warps` (at most the resident
   * warps, gs_coo_dev_upload: far below the grid cap), warp number in 64 bits. */
  const long long warp_id = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  if (warp_id >= warps) return; /* the whole warp leaves: shuffles below see full warps */

  const long long begin = warp_id * interval;
  const long long end = begin + interval < nnz ? begin + interval : nnz;
  int crow = -1; /* carry: the row left unfinished by the previous chunk, and its sum */
  T cval = T(0);

  for (long long base = begin; base < end; base += 32) {
    const long long n = base + lane;
    int row = -1; /* lanes past the end: row -1 never joins a real segment */
    T v = T(0);
    if (n < end) {
      row = __ldg(I + n);
      v = (T)__ldg(V + n) * __ldg(x + __ldg(J + n));
    }
    if (lane == 0) { /* lane 0 is always in range: base < end */
      if (row == crow)
        v += cval;                /* the carried row continues */
      else if (crow >= 0)
        y[crow] += alpha * cval;  /* the carried row ended with the previous chunk */
    }
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) { /* segmented inclusive scan over the 32 lanes */
      const T up_v = __shfl_up_sync(FULL_MASK, v, d);
      const int up_r = __shfl_up_sync(FULL_MASK, row, d);
      if (lane >= d && up_r == row) v += up_v;
    }
    const int next_row = __shfl_down_sync(FULL_MASK, row, 1);
    if (lane < 31 && n + 1 < end && next_row != row) y[row] += alpha * v; /* row finished */
    const int last = end - 1 - base < 31 ? (int)(end - 1 - base) : 31;
    crow = __shfl_sync(FULL_MASK, row, last);
    cval = __shfl_sync(FULL_MASK, v, last);
  }
  if (lane == 0) {
    carry_row[warp_id] = crow;
    carry_val[warp_id] = cval;
  }
}

template <typename T>
static __global__ void __launch_bounds__(GS_FMT_BLOCK)
coo_update_kernel(int warps, const int *__restrict__ carry_row, const T *__restrict__ carry_val,
                  T alpha, T *y)
{
  GS_GRID_STRIDE(w, warps) {
    const int r = carry_row[w];
    if (r < 0 || (w > 0 && carry_row[w - 1] == r)) continue; /* not the head of a run */
    T s = T(0);
    for (int k = (int)w; k < warps && carry_row[k] == r; ++k) s += carry_val[k];
    y[r] += alpha * s;
  }
}

template <typename Val, typename T>
static __global__ void __launch_bounds__(GS_FMT_BLOCK)
coo_spmv_t_kernel(int nnz, const int *__restrict__ I, const int *__restrict__ J,
                  const Val *__restrict__ V, const T *__restrict__ x, T alpha, T *y)
{
  GS_GRID_STRIDE(k, nnz)
    atomicAdd(y + __ldg(J + k), alpha * (T)__ldg(V + k) * __ldg(x + __ldg(I + k)));
}

/* ---- launchers shared with hyb (formats_kernels.h) --------------------------------------- */

extern "C" void gs_coo_dev_free(gs_coo_dev_t *D)
{
  if (!D) return;
  gs_dfree(D->ctx, D->d_row);
  if (!D->borrowed) { /* borrowed: the shared device CSR's, freed with the matrix */
    gs_dfree(D->ctx, D->d_col);
    gs_dfree(D->ctx, D->d_val);
  }
  gs_dfree(D->ctx, D->d_valf);
  gs_dfree(D->ctx, D->d_carry_row);
  gs_dfree(D->ctx, D->d_carry_val);
  memset(D, 0, sizeof *D);
}

extern "C" gs_status_t gs_coo_dev_plan(gs_context_t *ctx, gs_coo_dev_t *D, int rounded)
{
  int blocks_per_sm = 0;
  /* as many persistent warps as are resident at once (CUSP: max_active_blocks * SMs), for the
   * instantiation that will run: <double, double> for a double layout; a rounded layout serves
   * mixed (<float, double>) or float precision (<float, float>), which the layout cannot tell
   * apart, so both are asked and the smaller taken (never more warps than fit at once) */
  GS_CHECK(GS_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &blocks_per_sm, rounded ? (const void *)coo_spmv_kernel<float, double>
                              : (const void *)coo_spmv_kernel<double, double>,
      GS_FMT_BLOCK, 0)));
  if (rounded) {
    int bf = 0;
    GS_CHECK(GS_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &bf, (const void *)coo_spmv_kernel<float, float>, GS_FMT_BLOCK, 0)));
    if (bf < blocks_per_sm) blocks_per_sm = bf;
  }
  if (blocks_per_sm < 1) blocks_per_sm = 1;
  gs_coo_partition(D->nnz, (int64_t)blocks_per_sm * (GS_FMT_BLOCK / 32) * ctx->sm_count,
                   &D->warps, &D->interval);
  if ((int64_t)D->warps * 32 > (int64_t)GS_GRID_MAX_BLOCKS * GS_FMT_BLOCK) /* coo_spmv_kernel */
    return GS_ERROR(GS_ERR_INTERNAL, "COO: %d persistent warps exceed one grid", (int)D->warps);
  GS_CHECK(gs_dmalloc_ordered(ctx, (void **)&D->d_carry_row, (size_t)D->warps * sizeof(gs_idx_t),
                              "COO carry rows"));
  GS_CHECK(gs_dmalloc_ordered(ctx, &D->d_carry_val, (size_t)D->warps * sizeof(gs_val_t),
                              "COO carry values")); /* doubles, or floats in float precision */
          D->val_bytes = rounded ? sizeof(float) : sizeof(gs_val_t);
  D->bytes = (size_t)D->nnz * (2 * sizeof(gs_idx_t) + D->val_bytes) +
             (size_t)D->warps * (sizeof(gs_idx_t) + sizeof(gs_val_t));
  D->vec_bytes = sizeof(gs_val_t); /* a float product's backend sets 4 (gs_coo_dev_t) */
  return GS_SUCCESS;
}

extern "C" gs_status_t gs_coo_dev_upload(gs_context_t *ctx, const gs_coo_layout_t *L,
                                         gs_coo_dev_t *D)
{
  gs_status_t st = GS_SUCCESS;
  size_t nnz = (size_t)L->nnz;
  memset(D, 0, sizeof *D);
  D->ctx = ctx;
  D->m = L->m;
  D->n = L->n;
  D->nnz = L->nnz;
  D->rows_touched = L->rows_touched;
  D->cols_touched = L->cols_touched;
  GS_TRY(gs_upload(ctx, (void **)&D->d_row, L->row, nnz * sizeof(gs_idx_t), "COO rows"));
  GS_TRY(gs_upload(ctx, (void **)&D->d_col, L->col, nnz * sizeof(gs_idx_t), "COO columns"));
  if (L->valf)
    GS_TRY(gs_upload(ctx, (void **)&D->d_valf, L->valf, nnz * sizeof(float), "COO values"));
  else
    GS_TRY(gs_upload(ctx, (void **)&D->d_val, L->val, nnz * sizeof(gs_val_t), "COO values"));
  GS_TRY(gs_coo_dev_plan(ctx, D, L->valf != NULL));
cleanup:
  if (st != GS_SUCCESS) gs_coo_dev_free(D);
  return st;
}

/* One launcher per op for both vector types T; the layout's values (double, or the float ones
 * of a rounded layout) pick Val. A float product's layout is always rounded (d_valf). */
template <typename Val, typename T>
static void launch_coo(const gs_context_t *ctx, const gs_coo_dev_t *D, unsigned grid,
                       const Val *val, T alpha, const T *d_x, T *d_y)
{
  coo_spmv_kernel<Val, T><<<grid, GS_FMT_BLOCK, 0, ctx->stream>>>(
      D->nnz, D->warps, D->interval, D->d_row, D->d_col, val, d_x, alpha, d_y, D->d_carry_row,
      (T *)D->d_carry_val);
}

template <typename T>
static gs_status_t coo_accumulate(gs_context_t *ctx, const gs_coo_dev_t *D, T alpha,
                                  const T *d_x, T *d_y)
{
  if (D->warps == 0) return GS_SUCCESS; /* no entries */
  /* warps <= the resident warps: gs_grid_blocks never caps this grid (checked at upload) */
  const unsigned grid = gs_grid_blocks((int64_t)D->warps * 32, GS_FMT_BLOCK);
  if (D->d_valf) launch_coo(ctx, D, grid, (const float *)D->d_valf, alpha, d_x, d_y);
  else launch_coo(ctx, D, grid, (const double *)D->d_val, alpha, d_x, d_y);
  GS_CHECK(GS_CHECK_LAUNCH(ctx->stream, "coo_spmv_kernel"));
  coo_update_kernel<T><<<gs_grid_blocks(D->warps, GS_FMT_BLOCK), GS_FMT_BLOCK, 0, ctx->stream>>>(
      D->warps, D->d_carry_row, (const T *)D->d_carry_val, alpha, d_y);
  return GS_CHECK_LAUNCH(ctx->stream, "coo_update_kernel");
}

template <typename T>
static gs_status_t coo_accumulate_t(gs_context_t *ctx, const gs_coo_dev_t *D, T alpha,
                                    const T *d_x, T *d_y)
{
  if (D->nnz == 0) return GS_SUCCESS;
  const unsigned g = gs_grid_blocks(D->nnz, GS_FMT_BLOCK);
  if (D->d_valf)
    coo_spmv_t_kernel<float, T><<<g, GS_FMT_BLOCK, 0, ctx->stream>>>(
        D->nnz, D->d_row, D->d_col, D->d_valf, d_x, alpha, d_y);
  else
    coo_spmv_t_kernel<double, T><<<g, GS_FMT_BLOCK, 0, ctx->stream>>>(
        D->nnz, D->d_row, D->d_col, D->d_val, d_x, alpha, d_y);
  return GS_CHECK_LAUNCH(ctx->stream, "coo_spmv_t_kernel");
}

extern "C" gs_status_t gs_coo_dev_accumulate(gs_context_t *ctx, const gs_coo_dev_t *D,
                                             double alpha, const double *d_x, double *d_y)
{
  return coo_accumulate(ctx, D, alpha, d_x, d_y);
}

extern "C" gs_status_t gs_coo_dev_accumulate_t(gs_context_t *ctx, const gs_coo_dev_t *D,
                                               double alpha, const double *d_x, double *d_y)
{
  return coo_accumulate_t(ctx, D, alpha, d_x, d_y);
}

gs_status_t gs_coo_dev_accumulate(gs_context_t *ctx, const gs_coo_dev_t *D, float alpha,
                                  const float *d_x, float *d_y)
{
  return coo_accumulate(ctx, D, alpha, d_x, d_y);
}

gs_status_t gs_coo_dev_accumulate_t(gs_context_t *ctx, const gs_coo_dev_t *D, float alpha,
                                    const float *d_x, float *d_y)
{
  return coo_accumulate_t(ctx, D, alpha, d_x, d_y);
}

/* ---- the backend ------------------------------------------------------------------------- */

static void coo_destroy(void *data)
{
  gs_coo_dev_t *D = (gs_coo_dev_t *)data;
  if (!D) return;
  gs_coo_dev_free(D);
  free(D);
}

static gs_status_t coo_prepare(gs_context_t *ctx, gs_matrix_t *A, const gs_spmv_cfg_t *cfg,
                               void **data, unsigned *caps)
{
  gs_status_t st = GS_SUCCESS;
  gs_coo_layout_t *L = NULL;
  gs_coo_dev_t *D = NULL;
  *caps &= ~(unsigned)GS_SPMV_CAP_DETERMINISTIC_T; /* op T adds into y with atomics */
  *data = NULL;
  if (gs_cfg_host_build(cfg)) { /* build=host: the reference builder, then the upload */
    GS_TRY(gs_coo_layout_build(&L, gs_matrix_host(A)));
    if (gs_cfg_float_values(cfg)) GS_TRY(gs_coo_layout_round(L)); /* once, here */
    D = (gs_coo_dev_t *)calloc(1, sizeof *D);
    if (!D) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory preparing coo");
    GS_TRY(gs_coo_dev_upload(ctx, L, D));
  } else { /* the same layout on the shared device CSR (bg_devbuild.cu): its columns (and
              * double values) borrowed, the row indices written; the touch counts from the
              * features when they tell them (structurally symmetric), else counted there */
    gs_dcsr_t C;
    GS_TRY(gs_matrix_device_csr(A, &C));
    D = (gs_coo_dev_t *)calloc(1, sizeof *D);
    if (!D) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory preparing coo");
    const gs_idx_t touched = gs_coo_touched_from_features(gs_matrix_features(A), C.m, C.n, C.nnz);
    GS_TRY(gs_bg_coo_build_shared(ctx, &C, touched, gs_cfg_float_values(cfg), D));
  }
  if (cfg->precision == GS_PRECISION_FLOAT) D->vec_bytes = sizeof(float);
  *data = D;
  D = NULL;
cleanup:
  gs_coo_layout_destroy(&L);
  coo_destroy(D);
  return st;
}

template <typename T> /* double, or float in float precision */
static gs_status_t coo_apply_t(gs_context_t *ctx, void *data, gs_op_t op, T alpha, const T *d_x,
                               T beta, T *d_y)
{
  const gs_coo_dev_t *D = (const gs_coo_dev_t *)data;
  if (op == GS_OP_N) {
    GS_CHECK(gs_launch_scale(ctx->stream, D->m, beta, d_y));
    return gs_coo_dev_accumulate(ctx, D, alpha, d_x, d_y);
  }
  GS_CHECK(gs_launch_scale(ctx->stream, D->n, beta, d_y));
  return gs_coo_dev_accumulate_t(ctx, D, alpha, d_x, d_y);
}

static gs_status_t coo_apply(gs_context_t *ctx, void *data, gs_op_t op, double alpha,
                             const double *d_x, double beta, double *d_y)
{
  return coo_apply_t(ctx, data, op, alpha, d_x, beta, d_y);
}

static gs_status_t coo_apply_f32(gs_context_t *ctx, void *data, gs_op_t op, float alpha,
                                 const float *d_x, float beta, float *d_y)
{
  return coo_apply_t(ctx, data, op, alpha, d_x, beta, d_y);
}

static gs_status_t coo_memory(const void *data, gs_spmv_mem_t *mem)
{
  const gs_coo_dev_t *D = (const gs_coo_dev_t *)data;
  const size_t entry = 2 * sizeof(gs_idx_t) + D->val_bytes, v = D->vec_bytes;
  mem->device_bytes = D->bytes;
  mem->bytes_per_apply = (size_t)D->nnz * entry + (size_t)D->n * v + (size_t)D->m * v +
                         (size_t)D->rows_touched * 2 * v +
                         (size_t)D->warps * 2 * (sizeof(gs_idx_t) + v);
  mem->bytes_per_apply_t = (size_t)D->nnz * entry + (size_t)D->m * v + (size_t)D->n * v +
                           (size_t)D->cols_touched * 2 * v;
  return GS_SUCCESS;
}

static void coo_describe(const void *data, char *buf, size_t len)
{
  const gs_coo_dev_t *D = (const gs_coo_dev_t *)data;
  /* borrowed: the shared CSR's columns, and its values unless rounded (a float copy of coo's) */
  const char *on = !D->borrowed ? ""
                   : D->d_valf ? "on the shared CSR's columns (+ COO row indices, float values), "
                               : "on the shared CSR (+ COO row indices), ";
  snprintf(buf, len, "%s%d entries, %d persistent warps x %lld entries", on, (int)D->nnz,
           (int)D->warps, (long long)D->interval);
}

extern "C" const gs_spmv_ops_t gs_spmv_coo_ops = {
    GS_SPMV_OPS_VERSION,
    "coo",
    "COO, one thread per entry, warp segmented reduction with persistent warps "
    "(Bell & Garland, SC09, 3.4)",
    GS_SPMV_FLAG_TRANSPOSE | GS_SPMV_FLAG_HOST_LAYOUT | GS_SPMV_FLAG_MIXED | GS_SPMV_FLAG_FLOAT |
        GS_SPMV_FLAG_SHARED_CSR | GS_SPMV_FLAG_DEVICE_BUILD,
    NULL,
    coo_prepare,
    coo_apply,
    coo_memory,
    coo_destroy,
    gs_coo_host_apply,
    coo_describe,
    coo_apply_f32};
