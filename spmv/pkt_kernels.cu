/* spmv/pkt_kernels.cu: the "pkt" backend, the packet format of Bell & Garland ("Efficient
 * Sparse Matrix-Vector Multiplication on CUDA", NVIDIA Technical Report NVR-2008-004, 2008: the
 * packet format, a partition of the rows into packets whose x sub-vector is staged in shared
 * memory, and a second kernel for the entries outside). The layout is spmv/pkt.h's; the rows
 * are renumbered by reverse Cuthill-McKee where the report uses METIS (issue 15 accepts RCM).
 *
 * pkt_spmv_kernel (op = N)
 *   Work division: one block of B threads a packet (B = R / 4 in whole warps, 32-256); blocks
 *   loop over packets (grid = min(packets, GS_GRID_MAX_BLOCKS)), so every thread of a block
 *   reaches every barrier. For packet p, rows [p R, p R + rows_p) of the new numbering:
 *   1. the block stages x's window, sx[k] = x[perm[col0 + k]] for k < ncols (perm read
 *      coalesced, x gathered once per window column), and zeroes sy[0 .. rows_p);
 *   2. thread t walks its list, slot base + j*B + t for j = 0 .. L - 1 until GS_PKT_PAD,
 *      unpacks (local row, local column) from one 32-bit word, and sums val * sx[col] with
 *      fused multiply-adds in a register; when the local row changes it stores the finished
 *      row's sum in sy[row] (a thread owns whole rows: plain stores, no conflicts);
 *   3. the block writes y[perm[p R + r]] = alpha * sy[r] + beta * y (y not read when beta ==
 *      0), r strided over the block.
 *   Then the remainder (entries outside the packets' windows, and long rows) runs through the
 *   coo backend's kernels (gs_coo_dev_accumulate: segmented reduction, y += alpha * rem * x)
 *   in the caller's numbering, next on the stream.
 *   Memory access: at step j the block reads B consecutive 4-byte words and 8-byte values
 *   (coalesced, ld.global.nc.L1::no_allocate: read once); x and y are touched once per window
 *   column and per row; sx is read in shared memory at the stored local column (bank
 *   conflicts where threads' columns collide).
 *   Determinism: no atomics in the packet kernel; coo's kernels are deterministic too, so op N
 *   is bitwise reproducible.
 * pkt_spmv_t_kernel (op = T)
 *   The same block a packet: sxr[r] = x[perm[p R + r]] staged, column sums syc[0 .. ncols)
 *   zeroed; each thread adds val * sxr[row] into syc[col] with shared-memory atomics (its list
 *   spans several rows, so columns collide across threads); then the block adds alpha * syc[k]
 *   to y[perm[col0 + k]] with global atomics (windows of packets overlap). y must hold beta*y
 *   already (gs_launch_scale runs first); the remainder's scatter (gs_coo_dev_accumulate_t)
 *   follows. Atomics meet in a run-dependent order: op T is not bitwise deterministic.
 * Shared memory: 8 (max ncols + R) bytes a block, dynamic; above 48 KB the kernels are given the
 *   opt-in limit (cudaFuncAttributeMaxDynamicSharedMemorySize) at prepare, which refuses a
 *   layout past the device's limit (GS_ERR_UNSUPPORTED, naming the options that shrink it).
 * Index widths: slot positions and offsets are 64-bit; local rows and columns are 16 bits by
 *   construction (R <= 16384, ncols <= W <= 16384), new row and column indices 32-bit.
 *
 * Byte model (gs_pkt_bytes; beta = 0), slots = every stored slot (padding included):
 *   op N: 12 slots + 16 packets + 8 (packets + 1) (slot offsets, windows) + (8 + 4) window
 *         columns (x staged, through the permutation when reordered: 4 more) + (8 + 4) m (y
 *         written, permutation) + remainder as coo counts it: 16 nnz_r + 8n (x) + 16 rows it
 *         touches (y read-modify-write).
 *   op T: the same arrays + (8 + 4) m (x by row) + 8n (scale pass) + (16 + 4) window columns
 *         (atomic read-modify-write of y) + 16 nnz_r + 8m + 16 columns the remainder touches. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "gpusolve/timer.h"
#include "spmv/common_kernels.h"
#include "spmv/device_util.cuh"
#include "spmv/formats_kernels.h"
#include "spmv/pkt.h"
#include "spmv/pkt_devbuild.h"
#include "spmv/spmv_impl.h"

static __device__ __forceinline__ uint32_t ld_stream_word(const uint32_t *p)
{
  uint32_t v;
  asm volatile("ld.global.nc.L1::no_allocate.u32 %0, [%1];" : "=r"(v) : "l"(p));
  return v;
}

static __global__ void __launch_bounds__(GS_PKT_BLOCK)
pkt_spmv_kernel(int npackets, int m, int R, int max_cols, const long long *__restrict__ ptr,
                const int *__restrict__ col0, const int *__restrict__ ncols,
                const uint32_t *__restrict__ idx, const double *__restrict__ val,
                const int *__restrict__ perm, const double *__restrict__ x, double alpha,
                double beta, double *__restrict__ y)
{
  extern __shared__ double smem[];
  double *sx = smem, *sy = smem + max_cols;
  const int tid = threadIdx.x, B = blockDim.x;
  for (int p = blockIdx.x; p < npackets; p += gridDim.x) {
    const long long row0 = (long long)p * R;
    const int nr = (int)(row0 + R <= m ? R : m - row0);
    const int c0 = __ldg(col0 + p), nc = __ldg(ncols + p);
    for (int k = tid; k < nc; k += B) sx[k] = __ldg(x + (perm ? __ldg(perm + c0 + k) : c0 + k));
    for (int r = tid; r < nr; r += B) sy[r] = 0.0;
    __syncthreads();
    const long long base = __ldg(ptr + p);
    const long long L = (__ldg(ptr + p + 1) - base) / B;
    const uint32_t *w = idx + base + tid;
    const double *v = val + base + tid;
    int cur = -1;
    double sum = 0.0;
    for (long long j = 0; j < L; ++j, w += B, v += B) {
      const uint32_t e = ld_stream_word(w);
      if (e == GS_PKT_PAD) break;
      const int lr = (int)(e >> 16);
      if (lr != cur) {
        if (cur >= 0) sy[cur] = sum;
        cur = lr;
        sum = 0.0;
      }
      sum = fma(ld_stream(v), sx[e & 0xffffu], sum);
    }
    if (cur >= 0) sy[cur] = sum;
    __syncthreads();
    for (int r = tid; r < nr; r += B) {
      const long long i = perm ? (long long)__ldg(perm + row0 + r) : row0 + r;
      y[i] = beta == 0.0 ? alpha * sy[r] : alpha * sy[r] + beta * y[i];
    }
    __syncthreads(); /* sx and sy are the next packet's */
  }
}

static __global__ void __launch_bounds__(GS_PKT_BLOCK)
pkt_spmv_t_kernel(int npackets, int m, int R, int max_cols, const long long *__restrict__ ptr,
                  const int *__restrict__ col0, const int *__restrict__ ncols,
                  const uint32_t *__restrict__ idx, const double *__restrict__ val,
                  const int *__restrict__ perm, const double *__restrict__ x, double alpha,
                  double *y)
{
  extern __shared__ double smem[];
  double *syc = smem, *sxr = smem + max_cols;
  const int tid = threadIdx.x, B = blockDim.x;
  for (int p = blockIdx.x; p < npackets; p += gridDim.x) {
    const long long base = __ldg(ptr + p);
    const long long L = (__ldg(ptr + p + 1) - base) / B;
    if (L == 0) continue; /* uniform across the block: nothing stored, x not read */
    const long long row0 = (long long)p * R;
    const int nr = (int)(row0 + R <= m ? R : m - row0);
    const int c0 = __ldg(col0 + p), nc = __ldg(ncols + p);
    for (int r = tid; r < nr; r += B)
      sxr[r] = __ldg(x + (perm ? (long long)__ldg(perm + row0 + r) : row0 + r));
    for (int k = tid; k < nc; k += B) syc[k] = 0.0;
    __syncthreads();
    const uint32_t *w = idx + base + tid;
    const double *v = val + base + tid;
    for (long long j = 0; j < L; ++j, w += B, v += B) {
      const uint32_t e = ld_stream_word(w);
      if (e == GS_PKT_PAD) break;
      atomicAdd(syc + (e & 0xffffu), ld_stream(v) * sxr[e >> 16]);
    }
    __syncthreads();
    for (int k = tid; k < nc; k += B)
      atomicAdd(y + (perm ? __ldg(perm + c0 + k) : c0 + k), alpha * syc[k]);
    __syncthreads(); /* syc and sxr are the next packet's */
  }
}

/* ---- the backend ------------------------------------------------------------------------- */

typedef struct pkt_data {
  gs_context_t *ctx;
  gs_idx_t m, n;
  int64_t nnz;
  gs_idx_t R, W, npackets, max_cols;
  int B, reordered;
  int64_t slots, in_packets, long_moved, window_cols;
  long long *d_ptr;   /* npackets + 1 slot offsets */
  int *d_col0, *d_ncols;
  uint32_t *d_idx;    /* slots */
  double *d_val;      /* slots */
  int *d_perm;        /* m, or NULL */
  gs_coo_dev_t rem;   /* the remainder (coo's device layout) */
  int has_rem;
  size_t shared;      /* dynamic shared memory a block */
  size_t bytes;       /* device bytes held */
  size_t bytes_n, bytes_t;
  double build_ms;    /* the host's layout build (ordering, packets, remainder) */
  double upload_ms;
} pkt_data_t;

static void pkt_destroy(void *data)
{
  pkt_data_t *d = (pkt_data_t *)data;
  if (!d) return;
  gs_dfree(d->ctx, d->d_ptr);
  gs_dfree(d->ctx, d->d_col0);
  gs_dfree(d->ctx, d->d_ncols);
  gs_dfree(d->ctx, d->d_idx);
  gs_dfree(d->ctx, d->d_val);
  gs_dfree(d->ctx, d->d_perm);
  if (d->has_rem) gs_coo_dev_free(&d->rem);
  free(d);
}

/* In the order of PKT_OPT_* (spmv/pkt.h). */
static const gs_spmv_option_t pkt_options[] = {
    {"window", "x entries staged in shared memory a packet (the column window, 1-16384); 0: 4096",
     GS_OPTK_INT, 0, 0, GS_PKT_WINDOW_MAX},
    {"rows", "rows a packet (1-16384); 0: the one of 64, 128, ..., 4096 with the fewest "
             "modelled bytes that gives >= 264 packets (or from packets)",
     GS_OPTK_INT, 0, 0, GS_PKT_ROWS_MAX},
    {"packets", "packets asked for (rows = ceil(m / packets), one row a packet when more "
                "packets than rows); 0: from rows",
     GS_OPTK_INT, 0, 0, 2147483647.0},
    {"reorder", "row order: 0 RCM when the model moves fewer bytes (square matrices), 1 RCM "
                "(square only), 2 the given order",
     GS_OPTK_INT, 0, 0, 2},
    GS_SPMV_OPTION_END};

/* The dynamic shared memory of a packet block, 8 (widest window + R) bytes; past 48 KB the
 * kernels get the opt-in limit, past the device's limit the layout is refused. */
static gs_status_t pkt_shared(gs_context_t *ctx, pkt_data_t *d)
{
  int optin = 0;
  d->shared = ((size_t)d->max_cols + (size_t)d->R) * sizeof(double);
  GS_CHECK(GS_CUDA(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                          ctx->device)));
  if (d->shared > (size_t)optin)
    return GS_ERROR(GS_ERR_UNSUPPORTED,
                    "pkt: a packet needs %zu bytes of shared memory (window %d + rows %d "
                    "doubles), the device allows %d a block: lower pkt.window or pkt.rows",
                    d->shared, (int)d->max_cols, (int)d->R, optin);
  if (d->shared > 48 * 1024) {
    GS_CHECK(GS_CUDA(cudaFuncSetAttribute((const void *)pkt_spmv_kernel,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          (int)d->shared)));
    GS_CHECK(GS_CUDA(cudaFuncSetAttribute((const void *)pkt_spmv_t_kernel,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          (int)d->shared)));
  }
  return GS_SUCCESS;
}

/* build=device: spmv/pkt_devbuild.cu builds the arrays, d takes them over. */
static gs_status_t pkt_prepare_device(gs_context_t *ctx, gs_matrix_t *A,
                                      const gs_spmv_cfg_t *cfg, pkt_data_t *d)
{
  gs_pkt_dev_t D;
  double t0 = gs_wall_seconds();
  GS_CHECK(gs_pkt_dev_build(ctx, A, cfg, &D));
  d->build_ms = 1e3 * (gs_wall_seconds() - t0);
  d->m = D.m;
  d->n = D.n;
  d->nnz = D.nnz;
  d->R = D.R;
  d->W = D.W;
  d->B = D.B;
  d->npackets = D.npackets;
  d->max_cols = D.max_cols;
  d->reordered = D.reordered;
  d->slots = D.slots;
  d->in_packets = D.in_packets;
  d->long_moved = D.long_moved;
  d->window_cols = D.window_cols;
  d->bytes_n = D.bytes_n;
  d->bytes_t = D.bytes_t;
  d->d_ptr = D.d_ptr;
  d->d_col0 = D.d_col0;
  d->d_ncols = D.d_ncols;
  d->d_idx = D.d_idx;
  d->d_val = D.d_val;
  d->d_perm = D.d_perm;
  d->rem = D.rem;
  d->has_rem = D.has_rem; /* d owns the arrays from here on (pkt_destroy frees them) */
  if (d->npackets > 0)
    d->bytes += ((size_t)d->npackets + 1) * sizeof(int64_t) +
                2 * (size_t)d->npackets * sizeof(gs_idx_t);
  if (d->slots > 0) d->bytes += (size_t)d->slots * (sizeof(uint32_t) + sizeof(double));
  if (d->d_perm) d->bytes += (size_t)d->m * sizeof(gs_idx_t);
  if (d->has_rem) d->bytes += d->rem.bytes;
  GS_CHECK(pkt_shared(ctx, d));
  return GS_SUCCESS;
}

/* build=host: gs_pkt_build on the host CSR, then the arrays uploaded. */
static gs_status_t pkt_prepare_host(gs_context_t *ctx, gs_matrix_t *A, const gs_spmv_cfg_t *cfg,
                                    pkt_data_t *d)
{
  gs_status_t st = GS_SUCCESS;
  gs_pkt_t *P = NULL;
  double t0 = gs_wall_seconds();
  GS_TRY(gs_pkt_build(&P, gs_matrix_host(A), cfg));
  d->build_ms = 1e3 * (gs_wall_seconds() - t0);
  t0 = gs_wall_seconds();
  d->m = P->m;
  d->n = P->n;
  d->nnz = P->nnz;
  d->R = P->R;
  d->W = P->W;
  d->B = P->B;
  d->npackets = P->npackets;
  d->max_cols = P->max_cols;
  d->reordered = P->reordered;
  d->slots = P->slots;
  d->in_packets = P->in_packets;
  d->long_moved = P->long_moved;
  d->window_cols = P->window_cols;
  gs_pkt_bytes(P, &d->bytes_n, &d->bytes_t);

  GS_TRY(pkt_shared(ctx, d));

  if (P->npackets > 0) {
    GS_TRY(gs_upload(ctx, (void **)&d->d_ptr, P->slot_ptr,
                     ((size_t)P->npackets + 1) * sizeof(int64_t), "pkt slot offsets"));
    GS_TRY(gs_upload(ctx, (void **)&d->d_col0, P->col0, (size_t)P->npackets * sizeof(gs_idx_t),
                     "pkt windows"));
    GS_TRY(gs_upload(ctx, (void **)&d->d_ncols, P->ncols,
                     (size_t)P->npackets * sizeof(gs_idx_t), "pkt window widths"));
    d->bytes += ((size_t)P->npackets + 1) * sizeof(int64_t) +
                2 * (size_t)P->npackets * sizeof(gs_idx_t);
  }
  if (P->slots > 0) {
    GS_TRY(gs_upload(ctx, (void **)&d->d_idx, P->idx, (size_t)P->slots * sizeof(uint32_t),
                     "pkt local indices"));
    GS_TRY(gs_upload(ctx, (void **)&d->d_val, P->val, (size_t)P->slots * sizeof(double),
                     "pkt values"));
    d->bytes += (size_t)P->slots * (sizeof(uint32_t) + sizeof(double));
  }
  if (P->perm) {
    GS_TRY(gs_upload(ctx, (void **)&d->d_perm, P->perm, (size_t)P->m * sizeof(gs_idx_t),
                     "pkt row permutation"));
    d->bytes += (size_t)P->m * sizeof(gs_idx_t);
  }
  if (P->rem->nnz > 0) {
    GS_TRY(gs_coo_dev_upload(ctx, P->rem, &d->rem));
    d->has_rem = 1;
    d->bytes += d->rem.bytes;
  }
  d->upload_ms = 1e3 * (gs_wall_seconds() - t0);
cleanup:
  gs_pkt_destroy(&P);
  return st;
}

static gs_status_t pkt_prepare(gs_context_t *ctx, gs_matrix_t *A, const gs_spmv_cfg_t *cfg,
                               void **data, unsigned *caps)
{
  *caps &= ~(unsigned)GS_SPMV_CAP_DETERMINISTIC_T; /* op T adds with atomics */
  *data = NULL;
  pkt_data_t *d = (pkt_data_t *)calloc(1, sizeof *d);
  if (!d) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory preparing pkt");
  d->ctx = ctx;
  const gs_status_t st = gs_cfg_host_build(cfg) ? pkt_prepare_host(ctx, A, cfg, d)
                                                : pkt_prepare_device(ctx, A, cfg, d);
  if (st != GS_SUCCESS) {
    pkt_destroy(d);
    return st;
  }
  *data = d;
  return GS_SUCCESS;
}

static unsigned pkt_grid(gs_idx_t npackets)
{
  return npackets < GS_GRID_MAX_BLOCKS ? (unsigned)(npackets > 0 ? npackets : 1)
                                       : (unsigned)GS_GRID_MAX_BLOCKS;
}

static gs_status_t pkt_apply(gs_context_t *ctx, void *data, gs_op_t op, double alpha,
                             const double *d_x, double beta, double *d_y)
{
  const pkt_data_t *d = (const pkt_data_t *)data;
  if (op == GS_OP_N) {
    if (d->npackets == 0) return GS_SUCCESS; /* m = 0 (spmv.c does not call us then) */
    pkt_spmv_kernel<<<pkt_grid(d->npackets), d->B, d->shared, ctx->stream>>>(
        d->npackets, d->m, d->R, d->max_cols, d->d_ptr, d->d_col0, d->d_ncols, d->d_idx,
        d->d_val, d->d_perm, d_x, alpha, beta, d_y);
    GS_CHECK(GS_CHECK_LAUNCH(ctx->stream, "pkt_spmv_kernel"));
    if (d->has_rem) GS_CHECK(gs_coo_dev_accumulate(ctx, &d->rem, alpha, d_x, d_y));
    return GS_SUCCESS;
  }
  GS_CHECK(gs_launch_scale(ctx->stream, d->n, beta, d_y)); /* y = beta*y, then scatter */
  if (d->slots > 0) {
    pkt_spmv_t_kernel<<<pkt_grid(d->npackets), d->B, d->shared, ctx->stream>>>(
        d->npackets, d->m, d->R, d->max_cols, d->d_ptr, d->d_col0, d->d_ncols, d->d_idx,
        d->d_val, d->d_perm, d_x, alpha, d_y);
    GS_CHECK(GS_CHECK_LAUNCH(ctx->stream, "pkt_spmv_t_kernel"));
  }
  if (d->has_rem) GS_CHECK(gs_coo_dev_accumulate_t(ctx, &d->rem, alpha, d_x, d_y));
  return GS_SUCCESS;
}

static gs_status_t pkt_memory(const void *data, gs_spmv_mem_t *mem)
{
  const pkt_data_t *d = (const pkt_data_t *)data;
  mem->device_bytes = d->bytes;
  mem->bytes_per_apply = d->bytes_n;
  mem->bytes_per_apply_t = d->bytes_t;
  return GS_SUCCESS;
}

static void pkt_describe(const void *data, char *buf, size_t len)
{
  const pkt_data_t *d = (const pkt_data_t *)data;
  const double nnz = d->nnz > 0 ? (double)d->nnz : 1.0;
  snprintf(buf, len,
           "%d packets of %d rows (%d threads), window <= %d columns (widest %d, %.2f staged x "
           "a row), rows %s; %.1f%% of %lld entries in packets, %.1f%% in the COO remainder "
           "(%.1f%% from long rows); %lld slots (%.2fx the packed entries); %.1f bytes an "
           "entry a product; built in %.1f ms (host), uploaded in %.1f ms",
           (int)d->npackets, (int)d->R, d->B, (int)d->W, (int)d->max_cols,
           d->m > 0 ? (double)d->window_cols / (double)d->m : 0.0,
           d->reordered ? "in RCM order" : "in the given order",
           100.0 * (double)d->in_packets / nnz, (long long)d->nnz,
           100.0 * (double)(d->nnz - d->in_packets) / nnz, 100.0 * (double)d->long_moved / nnz,
           (long long)d->slots,
           d->in_packets > 0 ? (double)d->slots / (double)d->in_packets : 1.0,
           (double)d->bytes_n / nnz, d->build_ms, d->upload_ms);
}

extern "C" const gs_spmv_ops_t gs_spmv_pkt_ops = {
    GS_SPMV_OPS_VERSION,
    "pkt",
    "packets: RCM-ordered row blocks whose x window is staged in shared memory, the rest in a "
    "COO remainder (Bell & Garland, NVR-2008-004); T by atomics",
    GS_SPMV_FLAG_TRANSPOSE | GS_SPMV_FLAG_HOST_LAYOUT | GS_SPMV_FLAG_SHARED_CSR |
        GS_SPMV_FLAG_DEVICE_BUILD | GS_SPMV_FLAG_HOST_STAGE,
    pkt_options,
    pkt_prepare,
    pkt_apply,
    pkt_memory,
    pkt_destroy,
    gs_pkt_host_apply,
    pkt_describe};
