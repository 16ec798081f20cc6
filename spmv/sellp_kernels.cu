/* spmv/sellp_kernels.cu: the "sellp" backend, native SELL-P (Anzt, Tomov & Dongarra,
 * "Implementing a Sparse Matrix Vector Product for the SELL-C/SELL-C-sigma formats on NVIDIA
 * GPUs", UT-EECS-14-727, 2014: section 3, SELL-P and its kernel with T threads a row; the
 * sorting window sigma of Kreutzer et al., SIAM J. Sci. Comput. 36(5), 2014, section 3). The
 * layout is spmv/sell.h's, built with P = T; spmv/sellp.h says how threads map onto it.
 *
 * sellp_spmv_kernel (op = N)
 *   Work division: a group of G = C*T threads a slice (C rows, T threads a row; C and T powers
 *   of two, G <= 1024). A block is one group (G >= 256) or 256 threads holding 256/G groups;
 *   blocks loop over rounds of slices (gs_grid_blocks: one round below 2^28 threads), the round
 *   uniform across the block so that every thread reaches every barrier and shuffle. Thread
 *   tig = r + C*t of a group sums entries t, t + T, t + 2T, ... of stored row r in a register
 *   (fused multiply-adds), w_s / T of them: the slice width is a multiple of T (SELL-P's
 *   padding), so no thread of a row runs more steps than another and there is no remainder
 *   loop. Reduction of the T partial sums of a row: a shuffle butterfly over the bits of t that
 *   lie inside a warp (offsets min(G, 32)/2 .. C, none when C >= 32); when G > 32 the group
 *   spans warps, each warp's partials go to shared memory and threads tig < C add the G / 32
 *   (C < 32) or T (C >= 32) partials of their row in a fixed order. Thread tig < C writes
 *   y[perm[s*C + r]] = alpha*sum + beta*y (y read only when beta != 0); the rows padding the
 *   last slice (s*C + r >= m) are computed over padding and not written. A group past the last
 *   slice (the last round) loads nothing and takes part in the barriers and shuffles only.
 *   Memory access: at step j the group reads slots slice_ptr[s] + j*G .. + G - 1, G consecutive
 *   column indices and values (with C < 32 a warp holds 32/C steps of one row group, still one
 *   contiguous run): coalesced, through ld.global.nc.L1::no_allocate (read once). x is gathered
 *   through __ldg in the original column numbering; the permutation (4 bytes a row, only when
 *   sorting moved a row) is read once by the writing thread, and y is written at the original
 *   row. Padding slots hold column -1 and value 0: the kernel reads x[0] for them (n >= 1
 *   whenever a slot exists) and drops the product with a select, so a NaN/Inf in x never leaks
 *   through padding. No atomics: op N is bitwise reproducible.
 * sellp_spmv_t_kernel (op = T)
 *   The same threads on the same slots (coalesced), as a flat grid-stride loop (no barriers):
 *   thread tig of slice s scatters alpha*x(perm[s*C + r])*A(row, j) into y(j) with atomicAdd
 *   (double atomics: sm_60 and later) for its w_s / T slots, padding skipped without touching y,
 *   x read only for a slice that stores slots; y must already hold beta*y (sellp_apply runs
 *   gs_launch_scale first). Atomics meet in a run-dependent order: op T is not bitwise
 *   deterministic (prepare clears GS_SPMV_CAP_DETERMINISTIC_T).
 * Assumptions: the layout of gs_sellp_build (slots <= 2^31 - 1, so every slot position and
 *   slice offset fits an int; row indices are formed in 64 bits); d_x != d_y.
 *
 * Precision: both kernels are templates on the stored value type Val and on the vector type T
 *   of x, y, alpha, beta, the partial sums, the shuffles, the shared-memory pass and the
 *   atomics: <double, double> in double precision (the kernels as they were), <float, double>
 *   in mixed (gs_sellp_build rounds the layout once, gs_sell_round, and the float values are
 *   uploaded; a value widens exactly to double before its product), <float, float> in float
 *   precision (the same layout; fmaf, float shuffles, float partials in shared memory (half the
 *   bytes) and float atomicAdd). The host emulation reads the same float layout.
 *
 * Byte model (gs_spmv_mem_t, beta = 0; a = 8 bytes a stored value, 4 in mixed and float
 * precision; v = 8 bytes a vector entry, 4 in float precision), slots = every stored slot, the
 * tail rows of the last slice included (the group reads them):
 *   op N: (4 + a) slots + 4(slices + 1) (slice offsets) + 4m (permutation, when stored) + vn (x,
 *         read once: the cache-resident ideal) + vm (y written once).
 *   op T: (4 + a) slots + 4(slices + 1) + 4m (permutation, when stored) + vm (x, read once) + vn
 *         (the scale pass writes y) + 2vn (atomic read-modify-write, once per column, as ell
 *         counts).
 *
 * Device build (the default; build=host runs gs_sellp_build on the host CSR and uploads): the
 *   layout comes from the matrix's shared device CSR through spmv/sell_devbuild.cu, byte for
 *   byte gs_sellp_build's: C, T and sigma are chosen by sellp_choose_device, gs_sellp_choose's
 *   rules on the longest row read back from the device (sell_len_kernel); an automatic sigma
 *   compares the slot counts of the unsorted and the window-sorted layouts only when sorting
 *   moves a row (known from the same read-back for the power-of-two or whole-matrix window:
 *   otherwise both counts are equal and sigma is 1 without counting). The stable window sort is
 *   a CUB radix sort; then slice widths, a scan, the host's refusals, and one pass that writes
 *   every slot. Sync points: the lengths' summary, each slot count (one, or two with an
 *   automatic sigma whose window moves rows), the end of the fill. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "gpusolve/timer.h"
#include "spmv/common_kernels.h"
#include "spmv/device_util.cuh"
#include "spmv/sell_devbuild.h"
#include "spmv/sellp.h"
#include "spmv/spmv_impl.h"

#define FULL_MASK 0xffffffffu

template <typename Val, typename T>
static __global__ void __launch_bounds__(GS_SELLP_GROUP_MAX)
sellp_spmv_kernel(int64_t nslices, int64_t m, int logC, int logG, const int *__restrict__ ptr,
                  const int *__restrict__ col, const Val *__restrict__ val,
                  const int *__restrict__ perm, const T *__restrict__ x, T alpha, T beta,
                  T *__restrict__ y)
{
  /* blockDim.x partials of type T, only when G > 32. One extern declaration for every
   * instantiation (CUDA allows a single type per extern shared name), aligned for double. */
  extern __shared__ double s_mem[];
  T *s_part = reinterpret_cast<T *>(s_mem);
  const int C = 1 << logC, G = 1 << logG;
  const int tid = threadIdx.x, grp = tid >> logG, tig = tid & (G - 1);
  const int spb = blockDim.x >> logG; /* slices (groups) a block */
  for (int64_t s0 = (int64_t)blockIdx.x * spb; s0 < nslices; s0 += (int64_t)gridDim.x * spb) {
    const int64_t s = s0 + grp;
    T sum = T(0);
    if (s < nslices) {
      const int p0 = __ldg(ptr + s);
      const int iters = (__ldg(ptr + s + 1) - p0) >> logG; /* w_s / T */
      const int *c = col + p0 + tig;
      const Val *v = val + p0 + tig;
#pragma unroll 4
      for (int j = 0; j < iters; ++j, c += G, v += G) {
        /* branch-free so that the unrolled loads overlap (as ell_spmv_kernel) */
        const int k = ld_stream(c);
        const T a = (T)ld_stream(v); /* a float value widens exactly to a double T */
        const T xk = __ldg(x + (k < 0 ? 0 : k));
        sum = k >= 0 ? gs_fma(a, xk, sum) : sum;
      }
    }
    /* the T partials of row r sit at lanes r + C*t: butterfly over the bits of t in the warp */
    for (int off = (G < 32 ? G : 32) >> 1; off >= C; off >>= 1)
      sum += __shfl_xor_sync(FULL_MASK, sum, off);
    if (G > 32) { /* the group spans warps: one partial a warp (C < 32) or a thread (C >= 32) */
      __syncthreads(); /* the previous round's reads of s_part are done */
      s_part[tid] = sum;
      __syncthreads();
      if (tig < C) {
        const int stride = C < 32 ? 32 : C;
        T tot = s_part[tid];
        for (int k = stride; k < G; k += stride) tot += s_part[tid + k];
        sum = tot;
      }
    }
    if (tig < C && s < nslices) {
      const int64_t row = (s << logC) + tig;
      if (row < m) {
        const int64_t i = perm ? (int64_t)__ldg(perm + row) : row;
        y[i] = beta == T(0) ? alpha * sum : alpha * sum + beta * y[i];
      }
    }
  }
}

template <typename Val, typename T>
static __global__ void __launch_bounds__(GS_SELLP_BLOCK)
sellp_spmv_t_kernel(int64_t nslices, int64_t m, int logC, int logG, const int *__restrict__ ptr,
                    const int *__restrict__ col, const Val *__restrict__ val,
                    const int *__restrict__ perm, const T *__restrict__ x, T alpha, T *y)
{
  const int C = 1 << logC, G = 1 << logG;
  GS_GRID_STRIDE(u, nslices << logG) {
    const int64_t s = u >> logG;
    const int tig = (int)(u & (G - 1));
    const int64_t row = (s << logC) + (tig & (C - 1));
    if (row >= m) continue; /* a row padding the last slice */
    const int p0 = __ldg(ptr + s);
    const int iters = (__ldg(ptr + s + 1) - p0) >> logG;
    if (iters == 0) continue;
    const T ax = alpha * __ldg(x + (perm ? (int64_t)__ldg(perm + row) : row));
    const int *c = col + p0 + tig;
    const Val *v = val + p0 + tig;
    for (int j = 0; j < iters; ++j, c += G, v += G) {
      const int k = ld_stream(c);
      if (k >= 0) atomicAdd(y + k, (T)ld_stream(v) * ax);
    }
  }
}

/* ---- the backend ------------------------------------------------------------------------- */

typedef struct sellp_data {
  gs_context_t *ctx;
  gs_idx_t m, n;
  int64_t nnz;
  gs_idx_t C, T, sigma;  /* slice rows, threads a row (= P), sorting window */
  int logC, logG;        /* log2 C, log2 (C*T) */
  gs_idx_t nslices, slots, max_width;
  int64_t used;          /* slots of the real rows (fill = used / nnz) */
  int *d_ptr;            /* nslices + 1 slice offsets */
  int *d_col;            /* slots, -1 in padding */
  double *d_val;         /* slots, 0.0 in padding; NULL in mixed and float precision */
  float *d_valf;         /* slots in mixed and float precision (the rounded layout), else NULL */
  size_t val_bytes;      /* bytes of one stored value: 8, or 4 in mixed and float precision */
  size_t vec_bytes;      /* bytes of a vector entry: 8, or 4 in float precision */
  int *d_perm;           /* m, or NULL when the rows keep their order */
  size_t bytes;          /* device bytes held */
  double build_ms;       /* the host's layout build */
} sellp_data_t;

static void sellp_destroy(void *data)
{
  sellp_data_t *d = (sellp_data_t *)data;
  if (!d) return;
  gs_dfree(d->ctx, d->d_ptr);
  gs_dfree(d->ctx, d->d_col);
  gs_dfree(d->ctx, d->d_val);
  gs_dfree(d->ctx, d->d_valf);
  gs_dfree(d->ctx, d->d_perm);
  free(d);
}

/* In the order of SELLP_OPT_* (spmv/sellp.h). */
static const gs_spmv_option_t sellp_options[] = {
    {"c", "rows per slice (a power of two <= 1024); 0: 32 / t, one warp a slice", GS_OPTK_POW2,
     0, 0, GS_SELLP_C_MAX},
    {"t", "threads per row, also the padding multiple P (power of two <= 32; c * t <= 1024); "
          "0: from the mean row length (>= 8 entries a thread), 1 when the rows give 2^19 threads",
     GS_OPTK_POW2, 0, 0, GS_SELLP_T_MAX},
    {"sigma", "rows sorted by length within windows of sigma rows (1: no sorting); 0: 32 c "
              "when that saves bytes or avoids the fill refusal",
     GS_OPTK_INT, 0, 0, 1e9},
    GS_SPMV_OPTION_MAX_FILL,
    GS_SPMV_OPTION_END};

static int log2i(gs_idx_t v)
{
  int l = 0;
  while ((1 << l) < v) ++l;
  return l;
}

/* gs_sellp_choose (spmv/sellp_build.c) on the device CSR, rule for rule and message for message,
 * with the row lengths' summary of gs_sell_dev_lengths in place of the host's loops and
 * gs_sell_dev_shape in place of gs_sell_count. *sh gets the shape of the chosen (C, T, sigma):
 * its stored order and slice offsets, ready for gs_sell_dev_check and gs_sell_dev_fill. */
static gs_status_t sellp_choose_device(gs_context_t *ctx, const gs_dcsr_t *A,
                                       const gs_spmv_cfg_t *cfg, const int32_t *d_len,
                                       const gs_sell_dev_rows_t *rows, gs_sellp_shape_t *out,
                                       gs_sell_dev_shape_t *sh)
{
  gs_status_t st = GS_SUCCESS;
  gs_sell_dev_shape_t sh1, shw;
  memset(&sh1, 0, sizeof sh1);
  memset(&shw, 0, sizeof shw);
  memset(sh, 0, sizeof *sh);
  int moves = 0;
  GS_CHECK(gs_sellp_threads(cfg, A->m, A->nnz, rows->row_max, out));
  const gs_idx_t C = out->C, T = out->T;
  if (out->sigma != 0) {
    GS_TRY(gs_sell_dev_moves(ctx, d_len, rows, out->sigma, &moves));
    GS_TRY(gs_sell_dev_shape(ctx, d_len, rows, C, T, out->sigma, moves, sh));
    return GS_SUCCESS;
  }
  /* Automatic sigma: sort when it pays (gs_sellp_choose's rule). */
  out->sigma = 1;
  {
    const gs_idx_t sigw = gs_sellp_sigma_window(C, A->m);
    if (A->m > 1) GS_TRY(gs_sell_dev_moves(ctx, d_len, rows, sigw, &moves));
    /* no row moves (or m <= 1): both counts are the unsorted one, which neither pays nor
     * rescues, and sigma stays 1 */
    /* both candidates queued back to back, then one wait (the sort needs no count) */
    GS_TRY(gs_sell_dev_shape_async(ctx, d_len, rows, C, T, 1, 0, &sh1));
    if (moves) GS_TRY(gs_sell_dev_shape_async(ctx, d_len, rows, C, T, sigw, 1, &shw));
    GS_TRY(gs_sell_dev_shape_read(ctx, &sh1));
    if (moves) {
      GS_TRY(gs_sell_dev_shape_read(ctx, &shw));
      if (gs_sellp_sort_pays(cfg, A->m, A->nnz, sh1.slots, sh1.used, shw.slots, shw.used))
        out->sigma = sigw;
    }
    if (out->sigma == 1) {
      *sh = sh1;
      memset(&sh1, 0, sizeof sh1);
    } else {
      *sh = shw;
      memset(&shw, 0, sizeof shw);
    }
  }
cleanup:
  gs_sell_dev_shape_free(ctx, &sh1);
  gs_sell_dev_shape_free(ctx, &shw);
  if (st != GS_SUCCESS) gs_sell_dev_shape_free(ctx, sh);
  return st;
}

/* The layout built on the device (the default): d's arrays, counts and shape. */
static gs_status_t sellp_build_device(gs_context_t *ctx, gs_matrix_t *A, const gs_spmv_cfg_t *cfg,
                                      sellp_data_t *d)
{
  gs_status_t st = GS_SUCCESS;
  gs_dcsr_t csr;
  int32_t *d_len = NULL;
  gs_sell_dev_rows_t rows;
  gs_sell_dev_shape_t sh;
  gs_sell_dev_t L;
  gs_sellp_shape_t shape = {0, 0, 0};
  memset(&sh, 0, sizeof sh);
  memset(&L, 0, sizeof L);
  GS_TRY(gs_matrix_device_csr(A, &csr));
  if (csr.wide) GS_FAIL(GS_ERR_INTERNAL, "sellp reached with 64-bit offsets");
  GS_TRY(gs_sell_dev_lengths(ctx, &csr, &d_len, &rows));
  GS_TRY(sellp_choose_device(ctx, &csr, cfg, d_len, &rows, &shape, &sh));
  {
    const gs_sell_params_t p = {shape.C, shape.T, shape.sigma, cfg->v[SELLP_OPT_MAX_FILL],
                                "SELL-P"};
    GS_TRY(gs_sell_dev_check(&sh, csr.nnz, &p));
  }
  GS_TRY(gs_sell_dev_fill(ctx, &csr, &sh, gs_cfg_float_values(cfg), &L));
  d->m = csr.m;
  d->n = csr.n;
  d->nnz = csr.nnz;
  d->C = shape.C;
  d->T = shape.T;
  d->sigma = shape.sigma;
  d->nslices = sh.nslices;
  d->slots = (gs_idx_t)sh.slots;
  d->max_width = sh.max_width;
  d->used = sh.used;
  d->d_ptr = L.d_slice_ptr;
  d->d_col = L.d_col;
  d->d_val = L.d_val;
  d->d_valf = L.d_valf;
  d->d_perm = sh.d_perm; /* the order moves to d (NULL: rows in order) */
  memset(&L, 0, sizeof L);
  sh.d_perm = NULL;
cleanup:
  gs_sell_dev_free(ctx, &L);
  gs_sell_dev_shape_free(ctx, &sh);
  gs_dfree(ctx, d_len); /* idle: every step above ends in a stream sync */
  return st;
}

/* The host builder (build=host): gs_sellp_build on the host CSR, uploaded. */
static gs_status_t sellp_build_host(gs_context_t *ctx, gs_matrix_t *A, const gs_spmv_cfg_t *cfg,
                                    sellp_data_t *d)
{
  gs_status_t st = GS_SUCCESS;
  gs_sell_t *S = NULL;
  GS_TRY(gs_sellp_build(&S, gs_matrix_host(A), cfg)); /* rounded there in mixed precision */
  d->m = S->m;
  d->n = S->n;
  d->nnz = S->nnz;
  d->C = S->slice_size;
  d->T = S->pad;
  d->sigma = S->sigma;
  d->nslices = S->nslices;
  d->slots = S->slots;
  d->max_width = S->max_width;
  d->used = S->used;
  GS_TRY(gs_upload(ctx, (void **)&d->d_ptr, S->slice_ptr,
                   ((size_t)S->nslices + 1) * sizeof(gs_idx_t), "SELL-P slice offsets"));
  if (S->slots > 0) {
    GS_TRY(gs_upload(ctx, (void **)&d->d_col, S->col, (size_t)S->slots * sizeof(gs_idx_t),
                     "SELL-P columns"));
    if (S->valf)
      GS_TRY(gs_upload(ctx, (void **)&d->d_valf, S->valf, (size_t)S->slots * sizeof(float),
                       "SELL-P values"));
    else
      GS_TRY(gs_upload(ctx, (void **)&d->d_val, S->val, (size_t)S->slots * sizeof(gs_val_t),
                       "SELL-P values"));
  }
  if (S->perm)
    GS_TRY(gs_upload(ctx, (void **)&d->d_perm, S->perm, (size_t)S->m * sizeof(gs_idx_t),
                     "SELL-P row permutation"));
cleanup:
  gs_sell_destroy(&S);
  return st;
}

static gs_status_t sellp_prepare(gs_context_t *ctx, gs_matrix_t *A, const gs_spmv_cfg_t *cfg,
                                 void **data, unsigned *caps)
{
  *caps &= ~(unsigned)GS_SPMV_CAP_DETERMINISTIC_T; /* op T adds into y with atomics */
  gs_status_t st = GS_SUCCESS;
  *data = NULL;
  sellp_data_t *d = (sellp_data_t *)calloc(1, sizeof *d);
  if (!d) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory preparing sellp");
  d->ctx = ctx;
  const double t0 = gs_wall_seconds();
  if (gs_cfg_host_build(cfg))
    GS_TRY(sellp_build_host(ctx, A, cfg, d));
  else
    GS_TRY(sellp_build_device(ctx, A, cfg, d));
  d->build_ms = 1e3 * (gs_wall_seconds() - t0);
  d->logC = log2i(d->C);
  d->logG = log2i(d->C * d->T);
  d->val_bytes = gs_cfg_float_values(cfg) ? sizeof(float) : sizeof(gs_val_t);
  d->vec_bytes = cfg->precision == GS_PRECISION_FLOAT ? sizeof(float) : sizeof(gs_val_t);
  d->bytes = ((size_t)d->nslices + 1) * sizeof(gs_idx_t);
  if (d->slots > 0) d->bytes += (size_t)d->slots * (sizeof(gs_idx_t) + d->val_bytes);
  if (d->d_perm) d->bytes += (size_t)d->m * sizeof(gs_idx_t);
  *data = d;
  d = NULL;
cleanup:
  sellp_destroy(d);
  return st;
}

/* Both ops on the value array the layout holds (Val) with vectors of type T (double, or float in
 * float precision, whose layout is always the rounded one). */
template <typename Val, typename T>
static gs_status_t sellp_launch(gs_context_t *ctx, const sellp_data_t *d, const Val *val,
                                gs_op_t op, T alpha, const T *d_x, T beta, T *d_y)
{
  const int64_t threads = (int64_t)d->nslices << d->logG;
  if (op == GS_OP_N) {
    if (d->nslices == 0) return GS_SUCCESS;
    const int block = gs_sellp_block(d->C, d->T);
    const size_t shared = (d->C * d->T > 32) ? (size_t)block * sizeof(T) : 0;
    const unsigned grid = gs_grid_blocks(threads, block);
    sellp_spmv_kernel<Val, T><<<grid, block, shared, ctx->stream>>>(
        d->nslices, d->m, d->logC, d->logG, d->d_ptr, d->d_col, val, d->d_perm, d_x, alpha, beta,
        d_y);
    return GS_CHECK_LAUNCH(ctx->stream, "sellp_spmv_kernel");
  }
  GS_CHECK(gs_launch_scale(ctx->stream, d->n, beta, d_y)); /* y = beta*y, then scatter */
  if (d->slots == 0) return GS_SUCCESS;
  const unsigned grid = gs_grid_blocks(threads, GS_SELLP_BLOCK);
  sellp_spmv_t_kernel<Val, T><<<grid, GS_SELLP_BLOCK, 0, ctx->stream>>>(
      d->nslices, d->m, d->logC, d->logG, d->d_ptr, d->d_col, val, d->d_perm, d_x, alpha, d_y);
  return GS_CHECK_LAUNCH(ctx->stream, "sellp_spmv_t_kernel");
}

static gs_status_t sellp_apply(gs_context_t *ctx, void *data, gs_op_t op, double alpha,
                               const double *d_x, double beta, double *d_y)
{
  const sellp_data_t *d = (const sellp_data_t *)data;
  if (d->d_valf) return sellp_launch(ctx, d, (const float *)d->d_valf, op, alpha, d_x, beta, d_y);
  return sellp_launch(ctx, d, (const double *)d->d_val, op, alpha, d_x, beta, d_y);
}

static gs_status_t sellp_apply_f32(gs_context_t *ctx, void *data, gs_op_t op, float alpha,
                                   const float *d_x, float beta, float *d_y)
{
  const sellp_data_t *d = (const sellp_data_t *)data;
  return sellp_launch(ctx, d, (const float *)d->d_valf, op, alpha, d_x, beta, d_y);
}

static gs_status_t sellp_memory(const void *data, gs_spmv_mem_t *mem)
{
  const sellp_data_t *d = (const sellp_data_t *)data;
  const size_t v = d->vec_bytes, ix = sizeof(gs_idx_t), a = d->val_bytes; /* vectors, values */
  const size_t layout = (size_t)d->slots * (ix + a) + ((size_t)d->nslices + 1) * ix +
                        (d->d_perm ? (size_t)d->m * ix : 0);
  mem->device_bytes = d->bytes;
  mem->bytes_per_apply = layout + (size_t)d->n * v + (size_t)d->m * v;
  mem->bytes_per_apply_t = layout + (size_t)d->m * v + (size_t)d->n * v + (size_t)d->n * 2 * v;
  return GS_SUCCESS;
}

static void sellp_describe(const void *data, char *buf, size_t len)
{
  const sellp_data_t *d = (const sellp_data_t *)data;
  const double nnz = d->nnz > 0 ? (double)d->nnz : 1.0;
  snprintf(buf, len,
           "C = %d, T = P = %d, sigma = %d (%s), %d slices, %d slots for %lld entries (fill "
           "%.2fx, %.2fx with the last slice's padding rows), widest slice %d, built in %.1f ms",
           (int)d->C, (int)d->T, (int)d->sigma, d->d_perm ? "rows sorted" : "rows in order",
           (int)d->nslices, (int)d->slots, (long long)d->nnz,
           d->nnz > 0 ? (double)d->used / nnz : 1.0, d->nnz > 0 ? (double)d->slots / nnz : 1.0,
           (int)d->max_width, d->build_ms);
}

extern "C" const gs_spmv_ops_t gs_spmv_sellp_ops = {
    GS_SPMV_OPS_VERSION,
    "sellp",
    "SELL-P: slices of C rows padded to a multiple of T, T threads a row, rows sorted in sigma "
    "windows (Anzt, Tomov & Dongarra, UT-EECS-14-727, 3); refuses fill; T by atomics",
    GS_SPMV_FLAG_TRANSPOSE | GS_SPMV_FLAG_HOST_LAYOUT | GS_SPMV_FLAG_MIXED | GS_SPMV_FLAG_FLOAT |
        GS_SPMV_FLAG_SHARED_CSR | GS_SPMV_FLAG_DEVICE_BUILD,
    sellp_options,
    sellp_prepare,
    sellp_apply,
    sellp_memory,
    sellp_destroy,
    gs_sellp_host_apply,
    sellp_describe,
    sellp_apply_f32};
