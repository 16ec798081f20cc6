/* precond/amg_setup_kernels.cu: the device setup phases of smoothed-aggregation AMG (spec and
 * signatures: precond/amg_impl.h; host reference: precond/amg_host.c). A level's matrix is a
 * gs_amg_dcsr_t (32-bit row pointers, sorted rows) in memory of the counted allocator.
 *
 * Work division (256-thread blocks, grid-stride loops on gs_grid_blocks):
 *   diag, strength, l1, isolated flags   one thread a row, walking its entries in order
 *   MIS(2) (Bell, Dalton and Olson, SISC 2012, Algorithm 2 with the tuple of Section 4.1)
 *                                        per round three kernels over the rows: t1 = max of keys
 *                                        over {i} u Ns(i), t2 = max of t1 likewise (each reads
 *                                        the previous kernel's array), the state update; a
 *                                        device counter of nodes left UNDECIDED (warp sums, one
 *                                        atomic a warp) is read back once a round
 *   aggregates                           cub::DeviceScan::ExclusiveSum of the IN flags numbers
 *                                        the roots (rule a); one thread a row for rules b and c
 *                                        (c writes a new array); a second scan numbers rule d's
 *                                        singletons after the roots
 *   tentative                            one thread a row: atomicAdd of B_i^2 (1 for ones: exact
 *                                        integer sums) per aggregate, then t_i = B_i / sqrt(sum)
 *   smoothed P                           one thread a row, two passes: count the distinct
 *                                        aggregates met (O(L^2) over the row, no local arrays),
 *                                        scan, then emit them in increasing order (each next
 *                                        aggregate the smallest above the last, O(L) a column)
 *                                        with __dmul_rn / __dadd_rn in the header's order, so
 *                                        the values equal the host's bit for bit
 *   transpose, product                   cuSPARSE csr2cscEx2 and generic SpGEMM (rows sorted
 *                                        afterwards by cub::DeviceSegmentedSort when cuSPARSE
 *                                        returns any unsorted row)
 *   dense inverse                        scatter to a column-major array, cuSOLVER getrf, the
 *                                        diagonal of U read back (one strided copy), getrs on I
 * Memory access: the row-per-thread kernels read their row's entries contiguously (uncoalesced
 * across a warp: setup work, read once or twice) and gather per-node arrays (d, keys, agg, t)
 * by column, which L1/L2 serve for the banded matrices AMG meets. Scratch is one gs_dmalloc
 * block per function where possible (each allocation synchronizes the stream), freed on every
 * path after the stream is idle.
 * Assumptions: square A (except in SpGEMM and transpose), nnz <= INT32_MAX, sorted rows without
 * duplicates, n < 2^31 (the key's node field). */
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <cusolverDn.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "precond/amg_impl.h"
#include "spmv/common_kernels.h"
#include "spmv/device_util.cuh"

#define AMG_THREADS 256
#define AMG_MAX_ROUNDS 1000 /* MIS(2) rounds before the loop is called a bug (each round
                               decides at least the undecided node of largest key) */

static unsigned amg_blocks(int64_t items) { return gs_grid_blocks(items, AMG_THREADS); }

/* Size rounded up to 256 bytes: the pieces carved out of one scratch block stay aligned. */
static size_t amg_round(size_t bytes) { return (bytes + 255) & ~(size_t)255; }

/* cuSOLVER has no converter in core/error.c: allocation failures are out of device memory,
 * anything else GS_ERR_INTERNAL with cuSOLVER's status number. */
static gs_status_t amg_cusolver(cusolverStatus_t s, const char *expr, int line)
{
  if (s == CUSOLVER_STATUS_SUCCESS) return GS_SUCCESS;
  if (s == CUSOLVER_STATUS_ALLOC_FAILED)
    return gs_error_set(GS_ERR_DEVICE_MEMORY, __FILE__, line,
                        "%s: cuSOLVER could not allocate device memory (status %d)", expr, (int)s);
  return gs_error_set(GS_ERR_INTERNAL, __FILE__, line, "%s failed: cuSOLVER status %d", expr,
                      (int)s);
}
#define AMG_CUSOLVER(call) amg_cusolver((call), #call, __LINE__)

/* Adds each thread's c to *count: a warp sum, one atomic a warp. Every thread of the block calls
 * it (after its grid-stride loop), so the full-mask shuffles see 32 active lanes. */
static __device__ __forceinline__ void amg_count_add(int32_t *count, int32_t c)
{
  for (int off = 16; off > 0; off >>= 1) c += __shfl_down_sync(0xffffffffu, c, off);
  if ((threadIdx.x & 31) == 0 && c != 0) atomicAdd(count, c);
}

/* ---- d, strength, l1 ---------------------------------------------------------------------- */

/* d[i] = a_ii (0 when absent): a binary search of the sorted row. */
static __global__ void __launch_bounds__(AMG_THREADS)
amg_diag_kernel(gs_idx_t n, const int32_t *__restrict__ rp, const gs_idx_t *__restrict__ col,
                const double *__restrict__ val, double *__restrict__ d)
{
  GS_GRID_STRIDE(i, n)
  {
    int32_t lo = rp[i], hi = rp[i + 1];
    const int32_t end = hi;
    while (lo < hi) {
      const int32_t mid = lo + (hi - lo) / 2;
      if (col[mid] < i) lo = mid + 1;
      else hi = mid;
    }
    d[i] = lo < end && col[lo] == i ? val[lo] : 0.0;
  }
}

/* strong[k] = |a_ij| >= theta * sqrt(|d_i| |d_j|), j != i, a_ij != 0: the host's expression,
 * each product rounded on its own (sqrt is correctly rounded in CUDA's double precision). */
static __global__ void __launch_bounds__(AMG_THREADS)
amg_strength_kernel(gs_idx_t n, const int32_t *__restrict__ rp, const gs_idx_t *__restrict__ col,
                    const double *__restrict__ val, const double *__restrict__ d, double theta,
                    uint8_t *__restrict__ strong)
{
  GS_GRID_STRIDE(i, n)
  {
    const double di = fabs(d[i]);
    for (int32_t k = rp[i]; k < rp[i + 1]; ++k) {
      const gs_idx_t j = col[k];
      const double a = val[k];
      uint8_t s = 0;
      if (j != i && a != 0.0) s = fabs(a) >= __dmul_rn(theta, sqrt(__dmul_rn(di, fabs(d[j]))));
      strong[k] = s;
    }
  }
}

/* l1[i] = sum_j |a_ij| in column order. */
static __global__ void __launch_bounds__(AMG_THREADS)
amg_l1_kernel(gs_idx_t n, const int32_t *__restrict__ rp, const double *__restrict__ val,
              double *__restrict__ l1)
{
  GS_GRID_STRIDE(i, n)
  {
    double s = 0.0;
    for (int32_t k = rp[i]; k < rp[i + 1]; ++k) s += fabs(val[k]);
    l1[i] = s;
  }
}

extern "C" void gs_amg_dcsr_free(gs_context_t *ctx, gs_amg_dcsr_t *A)
{
  if (!A) return;
  gs_dfree(ctx, A->rp);
  gs_dfree(ctx, A->col);
  gs_dfree(ctx, A->val);
  memset(A, 0, sizeof *A);
}

extern "C" gs_status_t gs_amg_diag_dev(gs_context_t *ctx, gs_idx_t n, const int32_t *rp,
                                       const gs_idx_t *col, const double *val, double *d_diag)
{
  if (!ctx || n < 0) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_diag_dev: bad arguments");
  if (n == 0) return GS_SUCCESS;
  amg_diag_kernel<<<amg_blocks(n), AMG_THREADS, 0, ctx->stream>>>(n, rp, col, val, d_diag);
  return GS_CHECK_LAUNCH(ctx->stream, "amg_diag_kernel");
}

extern "C" gs_status_t gs_amg_strength_dev(gs_context_t *ctx, gs_idx_t n, const int32_t *rp,
                                           const gs_idx_t *col, const double *val,
                                           const double *d_diag, double theta, uint8_t *d_strong)
{
  if (!ctx || n < 0) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_strength_dev: bad arguments");
  if (n == 0) return GS_SUCCESS;
  amg_strength_kernel<<<amg_blocks(n), AMG_THREADS, 0, ctx->stream>>>(n, rp, col, val, d_diag,
                                                                      theta, d_strong);
  return GS_CHECK_LAUNCH(ctx->stream, "amg_strength_kernel");
}

extern "C" gs_status_t gs_amg_l1_diag_dev(gs_context_t *ctx, gs_idx_t n, const int32_t *rp,
                                          const double *val, double *d_l1)
{
  if (!ctx || n < 0) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_l1_diag_dev: bad arguments");
  if (n == 0) return GS_SUCCESS;
  amg_l1_kernel<<<amg_blocks(n), AMG_THREADS, 0, ctx->stream>>>(n, rp, val, d_l1);
  return GS_CHECK_LAUNCH(ctx->stream, "amg_l1_kernel");
}

/* ---- MIS(2) aggregation --------------------------------------------------------------------- */

/* j is in Ns(i): entry k of row i is strong and off the diagonal. */
#define AMG_NS(k, j, i) (strong[k] && (j) != (i))

/* iso[i] = row i has no strong off-diagonal entry; key[i] = key(UNDECIDED, i), or key(OUT, i)
 * for an isolated node (which takes no part); *count += the non-isolated nodes. */
static __global__ void __launch_bounds__(AMG_THREADS)
amg_init_kernel(gs_idx_t n, const int32_t *__restrict__ rp, const gs_idx_t *__restrict__ col,
                const uint8_t *__restrict__ strong, uint8_t *__restrict__ iso,
                uint64_t *__restrict__ key, int32_t *count)
{
  int32_t c = 0;
  GS_GRID_STRIDE(i, n)
  {
    int any = 0;
    for (int32_t k = rp[i]; k < rp[i + 1] && !any; ++k) any = AMG_NS(k, col[k], i);
    iso[i] = (uint8_t)!any;
    key[i] = gs_amg_key(any ? GS_AMG_UNDECIDED : GS_AMG_OUT, (int32_t)i);
    c += any;
  }
  amg_count_add(count, c);
}

/* out[i] = max of in[j] over j in {i} u Ns(i), j not isolated (0 for an isolated i, never read):
 * t1 from the keys, then t2 from t1. */
static __global__ void __launch_bounds__(AMG_THREADS)
amg_max_kernel(gs_idx_t n, const int32_t *__restrict__ rp, const gs_idx_t *__restrict__ col,
               const uint8_t *__restrict__ strong, const uint8_t *__restrict__ iso,
               const uint64_t *__restrict__ in, uint64_t *__restrict__ out)
{
  GS_GRID_STRIDE(i, n)
  {
    uint64_t m = 0;
    if (!iso[i]) {
      m = in[i];
      for (int32_t k = rp[i]; k < rp[i + 1]; ++k) {
        const gs_idx_t j = col[k];
        if (AMG_NS(k, j, i) && !iso[j]) {
          const uint64_t v = in[j];
          m = v > m ? v : m;
        }
      }
    }
    out[i] = m;
  }
}

/* The state update: an UNDECIDED i becomes IN when t2[i] is its own key, OUT when t2[i] is an
 * IN key; *count += the nodes still UNDECIDED. Each thread writes only its own key. */
static __global__ void __launch_bounds__(AMG_THREADS)
amg_update_kernel(gs_idx_t n, const uint8_t *__restrict__ iso, const uint64_t *__restrict__ t2,
                  uint64_t *__restrict__ key, int32_t *count)
{
  int32_t c = 0;
  GS_GRID_STRIDE(i, n)
  {
    const uint64_t k = key[i];
    if (!iso[i] && (k >> 62) == GS_AMG_UNDECIDED) {
      const uint64_t t = t2[i];
      if (t == k) key[i] = gs_amg_key(GS_AMG_IN, (int32_t)i);
      else if ((t >> 62) == GS_AMG_IN) key[i] = gs_amg_key(GS_AMG_OUT, (int32_t)i);
      else ++c;
    }
  }
  amg_count_add(count, c);
}

/* f[i] = 1 for an IN node, f[n] = 0 (the scan's total lands in pos[n]). */
static __global__ void __launch_bounds__(AMG_THREADS)
amg_in_flag_kernel(gs_idx_t n, const uint8_t *__restrict__ iso, const uint64_t *__restrict__ key,
                   int32_t *__restrict__ f)
{
  GS_GRID_STRIDE(i, (int64_t)n + 1)
  f[i] = i < n && !iso[i] && (key[i] >> 62) == GS_AMG_IN;
}

/* Rules a and b: a root takes its number pos[i]; another non-isolated node the number of the IN
 * neighbour j in Ns(i) of largest key (IN keys differ in their (hash, j) fields only), or -1.
 * stat[1] = the roots. */
static __global__ void __launch_bounds__(AMG_THREADS)
amg_rule_ab_kernel(gs_idx_t n, const int32_t *__restrict__ rp, const gs_idx_t *__restrict__ col,
                   const uint8_t *__restrict__ strong, const uint8_t *__restrict__ iso,
                   const uint64_t *__restrict__ key, const int32_t *__restrict__ pos,
                   int32_t *__restrict__ agg, int32_t *stat)
{
  if (blockIdx.x == 0 && threadIdx.x == 0) stat[1] = pos[n];
  GS_GRID_STRIDE(i, n)
  {
    int32_t a = -1;
    if (!iso[i]) {
      if ((key[i] >> 62) == GS_AMG_IN) {
        a = pos[i];
      } else {
        uint64_t best = 0;
        for (int32_t k = rp[i]; k < rp[i + 1]; ++k) {
          const gs_idx_t j = col[k];
          if (!AMG_NS(k, j, i)) continue;
          const uint64_t kj = key[j];
          if ((kj >> 62) == GS_AMG_IN && kj > best) { /* an IN key is > 0 */
            best = kj;
            a = pos[j];
          }
        }
      }
    }
    agg[i] = a;
  }
}

/* Rule c: a node without an aggregate takes, from the array rule b wrote, that of its neighbour
 * j in Ns(i) with one and the largest key(OUT, j) (key(OUT, 0) is 0: a flag, not a sentinel);
 * writes a new array. f[i] = 1 for a non-isolated node still without one (rule d), f[n] = 0. */
static __global__ void __launch_bounds__(AMG_THREADS)
amg_rule_c_kernel(gs_idx_t n, const int32_t *__restrict__ rp, const gs_idx_t *__restrict__ col,
                  const uint8_t *__restrict__ strong, const uint8_t *__restrict__ iso,
                  const int32_t *__restrict__ agg_b, int32_t *__restrict__ agg_c,
                  int32_t *__restrict__ f)
{
  if (blockIdx.x == 0 && threadIdx.x == 0) f[n] = 0;
  GS_GRID_STRIDE(i, n)
  {
    int32_t a = agg_b[i];
    if (a < 0 && !iso[i]) {
      uint64_t best = 0;
      int found = 0;
      for (int32_t k = rp[i]; k < rp[i + 1]; ++k) {
        const gs_idx_t j = col[k];
        if (!AMG_NS(k, j, i)) continue;
        const int32_t aj = agg_b[j];
        const uint64_t kj = gs_amg_key(GS_AMG_OUT, j);
        if (aj >= 0 && (!found || kj > best)) {
          best = kj;
          a = aj;
          found = 1;
        }
      }
    }
    agg_c[i] = a;
    f[i] = a < 0 && !iso[i];
  }
}

/* Rule d: the nodes still without an aggregate become their own, numbered after the stat[1]
 * roots in node order (pos: the scan of rule c's flags); stat[2] = their count. */
static __global__ void __launch_bounds__(AMG_THREADS)
amg_rule_d_kernel(gs_idx_t n, const uint8_t *__restrict__ iso, const int32_t *__restrict__ agg_c,
                  const int32_t *__restrict__ pos, int32_t *stat, int32_t *__restrict__ agg)
{
  const int32_t roots = stat[1];
  GS_GRID_STRIDE(i, n)
  {
    int32_t a = agg_c[i];
    if (a < 0 && !iso[i]) a = roots + pos[i];
    agg[i] = a;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) stat[2] = pos[n];
}

extern "C" gs_status_t gs_amg_aggregate_dev(gs_context_t *ctx, gs_idx_t n, const int32_t *rp,
                                            const gs_idx_t *col, const uint8_t *d_strong,
                                            int32_t *d_agg, int32_t *naggs, int *rounds)
{
  gs_status_t st = GS_SUCCESS;
  char *scratch = NULL;
  if (!ctx || n < 0 || !naggs || !rounds)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_aggregate_dev: bad arguments");
  *naggs = 0;
  *rounds = 0;
  if (n == 0) return GS_SUCCESS;
  const unsigned grid = amg_blocks(n);
  const uint8_t *strong = d_strong;
  size_t temp = 0;
  GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(NULL, temp, (const int32_t *)NULL,
                                               (int32_t *)NULL, (int64_t)n + 1, ctx->stream)));
  {
    /* one block: keys, t1, t2 (8n each), f, pos (4(n+1) each), rule c's array (4n), the
     * isolated flags (n), stat (4 ints: undecided, roots, singletons), the scan's storage */
    const size_t b8 = amg_round((size_t)n * 8), b4 = amg_round(((size_t)n + 1) * 4);
    const size_t b1 = amg_round((size_t)n), bs = amg_round(4 * sizeof(int32_t));
    GS_TRY(gs_dmalloc(ctx, (void **)&scratch, 3 * b8 + 3 * b4 + b1 + bs + temp,
                      "AMG aggregation scratch"));
    uint64_t *key = (uint64_t *)scratch, *t1 = (uint64_t *)(scratch + b8);
    uint64_t *t2 = (uint64_t *)(scratch + 2 * b8);
    int32_t *f = (int32_t *)(scratch + 3 * b8), *pos = (int32_t *)(scratch + 3 * b8 + b4);
    int32_t *agg_c = (int32_t *)(scratch + 3 * b8 + 2 * b4);
    uint8_t *iso = (uint8_t *)(scratch + 3 * b8 + 3 * b4);
    int32_t *stat = (int32_t *)(scratch + 3 * b8 + 3 * b4 + b1);
    void *d_temp = scratch + 3 * b8 + 3 * b4 + b1 + bs;
    int32_t h_stat[3] = {0, 0, 0};

    GS_TRY(GS_CUDA(cudaMemsetAsync(stat, 0, 4 * sizeof(int32_t), ctx->stream)));
    amg_init_kernel<<<grid, AMG_THREADS, 0, ctx->stream>>>(n, rp, col, strong, iso, key, stat);
    GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "amg_init_kernel"));
    GS_TRY(gs_copy_to_host(ctx, &h_stat[0], stat, sizeof(int32_t)));
    int r = 0;
    while (h_stat[0] > 0) { /* one read-back a round */
      if (r == AMG_MAX_ROUNDS)
        GS_FAIL(GS_ERR_INTERNAL,
                "MIS(2) aggregation: %d nodes still undecided after %d rounds (n = %d)",
                (int)h_stat[0], r, (int)n);
      GS_TRY(GS_CUDA(cudaMemsetAsync(stat, 0, sizeof(int32_t), ctx->stream)));
      amg_max_kernel<<<grid, AMG_THREADS, 0, ctx->stream>>>(n, rp, col, strong, iso, key, t1);
      GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "amg_max_kernel (t1)"));
      amg_max_kernel<<<grid, AMG_THREADS, 0, ctx->stream>>>(n, rp, col, strong, iso, t1, t2);
      GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "amg_max_kernel (t2)"));
      amg_update_kernel<<<grid, AMG_THREADS, 0, ctx->stream>>>(n, iso, t2, key, stat);
      GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "amg_update_kernel"));
      GS_TRY(gs_copy_to_host(ctx, &h_stat[0], stat, sizeof(int32_t)));
      ++r;
    }
    *rounds = r;

    /* a, b: roots numbered by the scan of the IN flags, their neighbours joined */
    amg_in_flag_kernel<<<amg_blocks((int64_t)n + 1), AMG_THREADS, 0, ctx->stream>>>(n, iso, key,
                                                                                    f);
    GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "amg_in_flag_kernel"));
    GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(d_temp, temp, f, pos, (int64_t)n + 1,
                                                 ctx->stream)));
    amg_rule_ab_kernel<<<grid, AMG_THREADS, 0, ctx->stream>>>(n, rp, col, strong, iso, key, pos,
                                                              d_agg, stat);
    GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "amg_rule_ab_kernel"));
    /* c: from b's array into agg_c; d: the rest numbered after the roots, back into d_agg */
    amg_rule_c_kernel<<<grid, AMG_THREADS, 0, ctx->stream>>>(n, rp, col, strong, iso, d_agg,
                                                             agg_c, f);
    GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "amg_rule_c_kernel"));
    GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(d_temp, temp, f, pos, (int64_t)n + 1,
                                                 ctx->stream)));
    amg_rule_d_kernel<<<grid, AMG_THREADS, 0, ctx->stream>>>(n, iso, agg_c, pos, stat, d_agg);
    GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "amg_rule_d_kernel"));
    GS_TRY(gs_copy_to_host(ctx, h_stat, stat, 3 * sizeof(int32_t))); /* synchronizes */
    *naggs = h_stat[1] + h_stat[2];
  }
cleanup:
  if (scratch) cudaStreamSynchronize(ctx->stream); /* the kernels are done with it */
  gs_dfree(ctx, scratch);
  return st;
}

#undef AMG_NS

/* ---- tentative prolongator ------------------------------------------------------------------ */

/* sum[agg[i]] += B_i^2 (1 for B = ones: integer sums, exact in any order). */
static __global__ void __launch_bounds__(AMG_THREADS)
amg_agg_sum_kernel(gs_idx_t n, const int32_t *__restrict__ agg, const double *__restrict__ B,
                   double *sum)
{
  GS_GRID_STRIDE(i, n)
  {
    const int32_t a = agg[i];
    if (a >= 0) atomicAdd(&sum[a], B ? __dmul_rn(B[i], B[i]) : 1.0);
  }
}

/* t_i = B_i / sqrt(sum of the aggregate) (1 / sqrt(size) for ones), 0 for no aggregate or an
 * aggregate whose B is zero. */
static __global__ void __launch_bounds__(AMG_THREADS)
amg_tentative_kernel(gs_idx_t n, const int32_t *__restrict__ agg, const double *__restrict__ B,
                     const double *__restrict__ sum, double *__restrict__ t)
{
  GS_GRID_STRIDE(i, n)
  {
    const int32_t a = agg[i];
    double v = 0.0;
    if (a >= 0) {
      const double s = sum[a];
      if (s > 0.0) v = (B ? B[i] : 1.0) / sqrt(s);
    }
    t[i] = v;
  }
}

extern "C" gs_status_t gs_amg_tentative_dev(gs_context_t *ctx, gs_idx_t n, const int32_t *d_agg,
                                            int32_t naggs, const double *d_B, double *d_t)
{
  gs_status_t st = GS_SUCCESS;
  double *sum = NULL;
  if (!ctx || n < 0 || naggs < 0)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_tentative_dev: bad arguments");
  if (n == 0) return GS_SUCCESS;
  if (naggs > 0) {
    GS_TRY(gs_dmalloc(ctx, (void **)&sum, (size_t)naggs * sizeof(double), "AMG aggregate norms"));
    GS_TRY(GS_CUDA(cudaMemsetAsync(sum, 0, (size_t)naggs * sizeof(double), ctx->stream)));
    amg_agg_sum_kernel<<<amg_blocks(n), AMG_THREADS, 0, ctx->stream>>>(n, d_agg, d_B, sum);
    GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "amg_agg_sum_kernel"));
  }
  amg_tentative_kernel<<<amg_blocks(n), AMG_THREADS, 0, ctx->stream>>>(n, d_agg, d_B, sum, d_t);
  GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "amg_tentative_kernel"));
cleanup:
  if (sum) cudaStreamSynchronize(ctx->stream);
  gs_dfree(ctx, sum);
  return st;
}

/* ---- smoothed prolongator ------------------------------------------------------------------- */

/* cnt[i] = the distinct aggregates met in row i (columns with agg < 0 skipped): an entry counts
 * when no earlier entry of the row has its aggregate. cnt[n] = 0 (the scan's total); *bad = the
 * smallest row with d_i == 0 (atomicMin from n). */
static __global__ void __launch_bounds__(AMG_THREADS)
amg_p_count_kernel(gs_idx_t n, const int32_t *__restrict__ rp, const gs_idx_t *__restrict__ col,
                   const int32_t *__restrict__ agg, const double *__restrict__ d,
                   int32_t *__restrict__ cnt, int32_t *bad)
{
  if (blockIdx.x == 0 && threadIdx.x == 0) cnt[n] = 0;
  GS_GRID_STRIDE(i, n)
  {
    const int32_t b = rp[i], e = rp[i + 1];
    int32_t c = 0;
    for (int32_t k = b; k < e; ++k) {
      const int32_t J = agg[col[k]];
      if (J < 0) continue;
      int seen = 0;
      for (int32_t q = b; q < k && !seen; ++q) seen = agg[col[q]] == J;
      c += !seen;
    }
    cnt[i] = c;
    if (d[i] == 0.0) atomicMin(bad, (int32_t)i);
  }
}

/* Row i of P: its aggregates in increasing order (each the smallest above the previous one),
 * v_J summed in column order from 0, P(i, J) = w_i v_J (+ t_i on the own aggregate), each
 * operation rounded on its own: the host's values bit for bit. */
static __global__ void __launch_bounds__(AMG_THREADS)
amg_p_fill_kernel(gs_idx_t n, const int32_t *__restrict__ rp, const gs_idx_t *__restrict__ col,
                  const double *__restrict__ val, const double *__restrict__ d,
                  const int32_t *__restrict__ agg, const double *__restrict__ t, double omega,
                  const int32_t *__restrict__ prp, gs_idx_t *__restrict__ pcol,
                  double *__restrict__ pval)
{
  GS_GRID_STRIDE(i, n)
  {
    const int32_t b = rp[i], e = rp[i + 1];
    const double w = -omega / d[i];
    const int32_t ai = agg[i];
    const double ti = t[i];
    int32_t prev = -1;
    for (int32_t q = prp[i]; q < prp[i + 1]; ++q) {
      int32_t J = INT32_MAX;
      for (int32_t k = b; k < e; ++k) {
        const int32_t a = agg[col[k]];
        if (a > prev && a < J) J = a;
      }
      double v = 0.0;
      for (int32_t k = b; k < e; ++k) {
        const gs_idx_t j = col[k];
        if (agg[j] == J) v = __dadd_rn(v, __dmul_rn(val[k], t[j]));
      }
      double p = __dmul_rn(w, v);
      if (J == ai) p = __dadd_rn(ti, p);
      pcol[q] = J;
      pval[q] = p;
      prev = J;
    }
  }
}

extern "C" gs_status_t gs_amg_smooth_p_dev(gs_context_t *ctx, const gs_amg_dcsr_t *A,
                                           const double *d_diag, const int32_t *d_agg,
                                           const double *d_t, int32_t naggs, double omega,
                                           gs_amg_dcsr_t *P)
{
  gs_status_t st = GS_SUCCESS;
  char *scratch = NULL;
  gs_amg_dcsr_t out;
  memset(&out, 0, sizeof out);
  if (!ctx || !A || !P || naggs < 0 || A->m != A->n)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_smooth_p_dev: bad arguments");
  memset(P, 0, sizeof *P);
  const gs_idx_t n = A->m;
  out.m = n;
  out.n = naggs;
  GS_TRY(gs_dmalloc(ctx, (void **)&out.rp, ((size_t)n + 1) * sizeof(int32_t),
                    "AMG prolongator row pointers"));
  if (n == 0) {
    GS_TRY(GS_CUDA(cudaMemsetAsync(out.rp, 0, sizeof(int32_t), ctx->stream)));
  } else {
    size_t temp = 0;
    GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(NULL, temp, (const int32_t *)NULL,
                                                 (int32_t *)NULL, (int64_t)n + 1, ctx->stream)));
    const size_t b4 = amg_round(((size_t)n + 1) * 4), bs = amg_round(sizeof(int32_t));
    GS_TRY(gs_dmalloc(ctx, (void **)&scratch, b4 + bs + temp, "AMG prolongator counts"));
    int32_t *cnt = (int32_t *)scratch, *bad = (int32_t *)(scratch + b4);
    const int32_t h_n = n;
    GS_TRY(GS_CUDA(cudaMemcpyAsync(bad, &h_n, sizeof h_n, cudaMemcpyHostToDevice, ctx->stream)));
    amg_p_count_kernel<<<amg_blocks(n), AMG_THREADS, 0, ctx->stream>>>(n, A->rp, A->col, d_agg,
                                                                      d_diag, cnt, bad);
    GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "amg_p_count_kernel"));
    GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(scratch + b4 + bs, temp, cnt, out.rp,
                                                 (int64_t)n + 1, ctx->stream)));
    int32_t h_nnz = 0, h_bad = n;
    GS_TRY(GS_CUDA(cudaMemcpyAsync(&h_nnz, out.rp + n, sizeof h_nnz, cudaMemcpyDeviceToHost,
                                   ctx->stream)));
    GS_TRY(GS_CUDA(cudaMemcpyAsync(&h_bad, bad, sizeof h_bad, cudaMemcpyDeviceToHost,
                                   ctx->stream)));
    GS_TRY(GS_CUDA(cudaStreamSynchronize(ctx->stream)));
    if (h_bad < n)
      GS_FAIL(GS_ERR_INVALID_ARG,
              "AMG smoothed prolongator: row %d has a zero diagonal entry (D^-1 A undefined)",
              (int)h_bad + 1);
    out.nnz = h_nnz;
    GS_TRY(gs_dmalloc(ctx, (void **)&out.col, (size_t)h_nnz * sizeof(gs_idx_t),
                      "AMG prolongator column indices"));
    GS_TRY(gs_dmalloc(ctx, (void **)&out.val, (size_t)h_nnz * sizeof(double),
                      "AMG prolongator values"));
    amg_p_fill_kernel<<<amg_blocks(n), AMG_THREADS, 0, ctx->stream>>>(
        n, A->rp, A->col, A->val, d_diag, d_agg, d_t, omega, out.rp, out.col, out.val);
    GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "amg_p_fill_kernel"));
  }
  GS_TRY(GS_CUDA(cudaStreamSynchronize(ctx->stream)));
  *P = out;
  memset(&out, 0, sizeof out);
cleanup:
  if (st != GS_SUCCESS) cudaStreamSynchronize(ctx->stream);
  gs_dfree(ctx, scratch);
  gs_amg_dcsr_free(ctx, &out);
  return st;
}

/* ---- R = P^T and C = A B (cuSPARSE) --------------------------------------------------------- */

extern "C" gs_status_t gs_amg_transpose_dev(gs_context_t *ctx, const gs_amg_dcsr_t *P,
                                            gs_amg_dcsr_t *R)
{
  gs_status_t st = GS_SUCCESS;
  void *buf = NULL;
  gs_amg_dcsr_t out;
  memset(&out, 0, sizeof out);
  if (!ctx || !P || !R || P->m < 0 || P->n < 0 || P->nnz < 0 || P->nnz > INT32_MAX)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_transpose_dev: bad arguments");
  memset(R, 0, sizeof *R);
  out.m = P->n;
  out.n = P->m;
  out.nnz = P->nnz;
  GS_TRY(gs_dmalloc(ctx, (void **)&out.rp, ((size_t)out.m + 1) * sizeof(int32_t),
                    "AMG restriction row pointers"));
  if (P->nnz == 0 || P->m == 0 || P->n == 0) { /* no entries: cuSPARSE is not asked */
    GS_TRY(GS_CUDA(cudaMemsetAsync(out.rp, 0, ((size_t)out.m + 1) * sizeof(int32_t),
                                   ctx->stream)));
  } else {
    GS_TRY(gs_dmalloc(ctx, (void **)&out.col, (size_t)out.nnz * sizeof(gs_idx_t),
                      "AMG restriction column indices"));
    GS_TRY(gs_dmalloc(ctx, (void **)&out.val, (size_t)out.nnz * sizeof(double),
                      "AMG restriction values"));
    GS_TRY(GS_CUSPARSE(cusparseSetStream(ctx->cusparse, ctx->stream)));
    size_t bytes = 0;
    GS_TRY(GS_CUSPARSE(cusparseCsr2cscEx2_bufferSize(
        ctx->cusparse, P->m, P->n, (int)P->nnz, P->val, P->rp, P->col, out.val, out.rp, out.col,
        CUDA_R_64F, CUSPARSE_ACTION_NUMERIC, CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1,
        &bytes)));
    GS_TRY(gs_dmalloc(ctx, &buf, bytes ? bytes : 256, "cuSPARSE csr2csc buffer"));
    /* ALG1 writes each column's rows in increasing order: R's rows are sorted */
    GS_TRY(GS_CUSPARSE(cusparseCsr2cscEx2(ctx->cusparse, P->m, P->n, (int)P->nnz, P->val, P->rp,
                                          P->col, out.val, out.rp, out.col, CUDA_R_64F,
                                          CUSPARSE_ACTION_NUMERIC, CUSPARSE_INDEX_BASE_ZERO,
                                          CUSPARSE_CSR2CSC_ALG1, buf)));
  }
  GS_TRY(GS_CUDA(cudaStreamSynchronize(ctx->stream)));
  *R = out;
  memset(&out, 0, sizeof out);
cleanup:
  if (st != GS_SUCCESS) cudaStreamSynchronize(ctx->stream);
  gs_dfree(ctx, buf);
  gs_amg_dcsr_free(ctx, &out);
  return st;
}

/* flag = 1 when some row's columns are not strictly increasing. */
static __global__ void __launch_bounds__(AMG_THREADS)
amg_unsorted_kernel(gs_idx_t m, const int32_t *__restrict__ rp, const gs_idx_t *__restrict__ col,
                    int32_t *flag)
{
  GS_GRID_STRIDE(i, m)
  {
    for (int32_t k = rp[i] + 1; k < rp[i + 1]; ++k)
      if (col[k - 1] >= col[k]) {
        *flag = 1;
        break;
      }
  }
}

/* Sorts C's rows by column (values alongside) when some row is not sorted: cuSPARSE documents
 * no order for SpGEMM's output, so it is checked (one kernel, one flag read back) rather than
 * assumed. */
static gs_status_t amg_sort_rows(gs_context_t *ctx, gs_amg_dcsr_t *C)
{
  gs_status_t st = GS_SUCCESS;
  char *scratch = NULL;
  int32_t *flag = NULL, h_flag = 0;
  if (C->nnz == 0 || C->m == 0) return GS_SUCCESS;
  GS_TRY(gs_dmalloc(ctx, (void **)&flag, sizeof *flag, "SpGEMM order flag"));
  GS_TRY(GS_CUDA(cudaMemsetAsync(flag, 0, sizeof *flag, ctx->stream)));
  amg_unsorted_kernel<<<amg_blocks(C->m), AMG_THREADS, 0, ctx->stream>>>(C->m, C->rp, C->col,
                                                                        flag);
  GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "amg_unsorted_kernel"));
  GS_TRY(gs_copy_to_host(ctx, &h_flag, flag, sizeof h_flag));
  if (h_flag) {
    size_t temp = 0;
    const int64_t nnz = C->nnz;
    GS_TRY(GS_CUDA(cub::DeviceSegmentedSort::SortPairs(
        NULL, temp, (const gs_idx_t *)NULL, (gs_idx_t *)NULL, (const double *)NULL,
        (double *)NULL, nnz, (int64_t)C->m, (const int32_t *)C->rp, (const int32_t *)C->rp + 1,
        ctx->stream)));
    const size_t bc = amg_round((size_t)nnz * sizeof(gs_idx_t));
    const size_t bv = amg_round((size_t)nnz * sizeof(double));
    GS_TRY(gs_dmalloc(ctx, (void **)&scratch, bc + bv + temp, "SpGEMM row sort"));
    gs_idx_t *col = (gs_idx_t *)scratch;
    double *val = (double *)(scratch + bc);
    GS_TRY(GS_CUDA(cub::DeviceSegmentedSort::SortPairs(
        scratch + bc + bv, temp, C->col, col, C->val, val, nnz, (int64_t)C->m,
        (const int32_t *)C->rp, (const int32_t *)C->rp + 1, ctx->stream)));
    GS_TRY(GS_CUDA(cudaMemcpyAsync(C->col, col, (size_t)nnz * sizeof(gs_idx_t),
                                   cudaMemcpyDeviceToDevice, ctx->stream)));
    GS_TRY(GS_CUDA(cudaMemcpyAsync(C->val, val, (size_t)nnz * sizeof(double),
                                   cudaMemcpyDeviceToDevice, ctx->stream)));
    GS_TRY(GS_CUDA(cudaStreamSynchronize(ctx->stream)));
  }
cleanup:
  if (st != GS_SUCCESS) cudaStreamSynchronize(ctx->stream);
  gs_dfree(ctx, scratch);
  gs_dfree(ctx, flag);
  return st;
}

extern "C" gs_status_t gs_amg_spgemm_dev(gs_context_t *ctx, const gs_amg_dcsr_t *A,
                                         const gs_amg_dcsr_t *B, gs_amg_dcsr_t *C)
{
  gs_status_t st = GS_SUCCESS;
  cusparseSpMatDescr_t mA = NULL, mB = NULL, mC = NULL;
  cusparseSpGEMMDescr_t sg = NULL;
  cusparsePointerMode_t old_mode = CUSPARSE_POINTER_MODE_HOST;
  int mode_set = 0;
  void *buf1 = NULL, *buf2 = NULL;
  gs_amg_dcsr_t out;
  memset(&out, 0, sizeof out);
  if (!ctx || !A || !B || !C || A->nnz < 0 || B->nnz < 0)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_spgemm_dev: bad arguments");
  if (A->n != B->m)
    return GS_ERROR(GS_ERR_DIMENSION, "gs_amg_spgemm_dev: A is %d x %d, B is %d x %d",
                    (int)A->m, (int)A->n, (int)B->m, (int)B->n);
  memset(C, 0, sizeof *C);
  out.m = A->m;
  out.n = B->n;
  GS_TRY(gs_dmalloc(ctx, (void **)&out.rp, ((size_t)out.m + 1) * sizeof(int32_t),
                    "AMG product row pointers"));
  if (A->nnz == 0 || B->nnz == 0 || out.m == 0 || out.n == 0) { /* no products */
    GS_TRY(GS_CUDA(cudaMemsetAsync(out.rp, 0, ((size_t)out.m + 1) * sizeof(int32_t),
                                   ctx->stream)));
  } else {
    const double one = 1.0, zero = 0.0;
    const cusparseOperation_t opN = CUSPARSE_OPERATION_NON_TRANSPOSE;
    const cusparseSpGEMMAlg_t alg = CUSPARSE_SPGEMM_DEFAULT;
    cusparseHandle_t h = ctx->cusparse;
    GS_TRY(GS_CUSPARSE(cusparseSetStream(h, ctx->stream)));
    GS_TRY(GS_CUSPARSE(cusparseGetPointerMode(h, &old_mode)));
    GS_TRY(GS_CUSPARSE(cusparseSetPointerMode(h, CUSPARSE_POINTER_MODE_HOST)));
    mode_set = 1;
    GS_TRY(GS_CUSPARSE(cusparseCreateCsr(&mA, A->m, A->n, A->nnz, A->rp, A->col, A->val,
                                         CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                         CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F)));
    GS_TRY(GS_CUSPARSE(cusparseCreateCsr(&mB, B->m, B->n, B->nnz, B->rp, B->col, B->val,
                                         CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                         CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F)));
    GS_TRY(GS_CUSPARSE(cusparseCreateCsr(&mC, out.m, out.n, 0, NULL, NULL, NULL,
                                         CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                         CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F)));
    GS_TRY(GS_CUSPARSE(cusparseSpGEMM_createDescr(&sg)));
    size_t s1 = 0, s2 = 0;
    GS_TRY(GS_CUSPARSE(cusparseSpGEMM_workEstimation(h, opN, opN, &one, mA, mB, &zero, mC,
                                                     CUDA_R_64F, alg, sg, &s1, NULL)));
    /* never NULL: a NULL buffer would make the second call a size query again */
    GS_TRY(gs_dmalloc(ctx, &buf1, s1 ? s1 : 256, "cuSPARSE SpGEMM work estimation buffer"));
    GS_TRY(GS_CUSPARSE(cusparseSpGEMM_workEstimation(h, opN, opN, &one, mA, mB, &zero, mC,
                                                     CUDA_R_64F, alg, sg, &s1, buf1)));
    GS_TRY(GS_CUSPARSE(cusparseSpGEMM_compute(h, opN, opN, &one, mA, mB, &zero, mC, CUDA_R_64F,
                                              alg, sg, &s2, NULL)));
    GS_TRY(gs_dmalloc(ctx, &buf2, s2 ? s2 : 256, "cuSPARSE SpGEMM compute buffer"));
    GS_TRY(GS_CUSPARSE(cusparseSpGEMM_compute(h, opN, opN, &one, mA, mB, &zero, mC, CUDA_R_64F,
                                              alg, sg, &s2, buf2)));
    int64_t rows = 0, cols = 0, nnz = 0;
    GS_TRY(GS_CUSPARSE(cusparseSpMatGetSize(mC, &rows, &cols, &nnz)));
    if (nnz > INT32_MAX)
      GS_FAIL(GS_ERR_UNSUPPORTED,
              "AMG product of %lld entries: a level's matrix holds at most 2^31-1",
              (long long)nnz);
    out.nnz = nnz;
    GS_TRY(gs_dmalloc(ctx, (void **)&out.col, (size_t)nnz * sizeof(gs_idx_t),
                      "AMG product column indices"));
    GS_TRY(gs_dmalloc(ctx, (void **)&out.val, (size_t)nnz * sizeof(double),
                      "AMG product values"));
    GS_TRY(GS_CUSPARSE(cusparseCsrSetPointers(mC, out.rp, out.col, out.val)));
    GS_TRY(GS_CUSPARSE(cusparseSpGEMM_copy(h, opN, opN, &one, mA, mB, &zero, mC, CUDA_R_64F,
                                           alg, sg)));
    GS_TRY(amg_sort_rows(ctx, &out));
  }
  GS_TRY(GS_CUDA(cudaStreamSynchronize(ctx->stream)));
  *C = out;
  memset(&out, 0, sizeof out);
cleanup:
  if (st != GS_SUCCESS) cudaStreamSynchronize(ctx->stream);
  if (sg) cusparseSpGEMM_destroyDescr(sg);
  if (mA) cusparseDestroySpMat(mA);
  if (mB) cusparseDestroySpMat(mB);
  if (mC) cusparseDestroySpMat(mC);
  if (mode_set) cusparseSetPointerMode(ctx->cusparse, old_mode);
  gs_dfree(ctx, buf1);
  gs_dfree(ctx, buf2);
  gs_amg_dcsr_free(ctx, &out);
  return st;
}

/* ---- the coarsest level's dense inverse ----------------------------------------------------- */

/* Column-major dense copy of A (zeroed before): a[i + j n] = a_ij, one thread a row. */
static __global__ void __launch_bounds__(AMG_THREADS)
amg_dense_scatter_kernel(gs_idx_t n, const int32_t *__restrict__ rp,
                         const gs_idx_t *__restrict__ col, const double *__restrict__ val,
                         double *__restrict__ a)
{
  GS_GRID_STRIDE(i, n)
  for (int32_t k = rp[i]; k < rp[i + 1]; ++k) a[i + (int64_t)col[k] * n] = val[k];
}

/* a = I (n x n). */
static __global__ void __launch_bounds__(AMG_THREADS)
amg_identity_kernel(int64_t n, double *__restrict__ a)
{
  GS_GRID_STRIDE(k, n * n) a[k] = k % (n + 1) == 0 ? 1.0 : 0.0;
}

extern "C" gs_status_t gs_amg_dense_inverse_dev(gs_context_t *ctx, const gs_amg_dcsr_t *A,
                                                double **d_inv, int *singular)
{
  gs_status_t st = GS_SUCCESS;
  cusolverDnHandle_t h = NULL;
  double *lu = NULL, *work = NULL, *inv = NULL, *udiag = NULL;
  int32_t *ipiv = NULL, *info = NULL;
  if (!ctx || !A || !d_inv || !singular)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_dense_inverse_dev: bad arguments");
  *d_inv = NULL;
  *singular = 0;
  if (A->m != A->n || A->m < 0 || A->m > GS_AMG_DENSE_MAX)
    return GS_ERROR(GS_ERR_INVALID_ARG,
                    "gs_amg_dense_inverse_dev: A is %d x %d (square, at most %d rows)",
                    (int)A->m, (int)A->n, GS_AMG_DENSE_MAX);
  const int n = A->m;
  if (n == 0) return GS_SUCCESS;
  const size_t nn = (size_t)n * (size_t)n;
  int lwork = 0, h_info = 0;
  GS_TRY(gs_dmalloc(ctx, (void **)&lu, nn * sizeof(double), "AMG coarse LU factors"));
  GS_TRY(gs_dmalloc(ctx, (void **)&ipiv, ((size_t)n + 1) * sizeof(int32_t), "AMG coarse pivots"));
  info = ipiv + n;
  GS_TRY(GS_CUDA(cudaMemsetAsync(lu, 0, nn * sizeof(double), ctx->stream)));
  amg_dense_scatter_kernel<<<amg_blocks(n), AMG_THREADS, 0, ctx->stream>>>(n, A->rp, A->col,
                                                                          A->val, lu);
  GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "amg_dense_scatter_kernel"));
  GS_TRY(AMG_CUSOLVER(cusolverDnCreate(&h)));
  GS_TRY(AMG_CUSOLVER(cusolverDnSetStream(h, ctx->stream)));
  GS_TRY(AMG_CUSOLVER(cusolverDnDgetrf_bufferSize(h, n, n, lu, n, &lwork)));
  GS_TRY(gs_dmalloc(ctx, (void **)&work, (size_t)(lwork > 0 ? lwork : 1) * sizeof(double),
                    "cuSOLVER getrf workspace"));
  GS_TRY(AMG_CUSOLVER(cusolverDnDgetrf(h, n, n, lu, n, work, ipiv, info)));
  GS_TRY(gs_copy_to_host(ctx, &h_info, info, sizeof h_info));
  if (h_info < 0) GS_FAIL(GS_ERR_INTERNAL, "cusolverDnDgetrf: argument %d is wrong", -h_info);
  if (h_info > 0) { /* u_ii = 0 exactly at i = info */
    *singular = 1;
    goto cleanup;
  }
  {
    /* min |u_ii| <= n eps max |u_ii| (or a NaN): too close to singular to invert */
    udiag = (double *)malloc((size_t)n * sizeof(double));
    if (!udiag) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory (%d doubles)", n);
    GS_TRY(GS_CUDA(cudaMemcpy2DAsync(udiag, sizeof(double), lu, ((size_t)n + 1) * sizeof(double),
                                     sizeof(double), (size_t)n, cudaMemcpyDeviceToHost,
                                     ctx->stream)));
    GS_TRY(GS_CUDA(cudaStreamSynchronize(ctx->stream)));
    double umin = INFINITY, umax = 0.0;
    int nan = 0;
    for (int i = 0; i < n; ++i) {
      const double u = fabs(udiag[i]);
      if (u != u) nan = 1;
      umin = u < umin ? u : umin;
      umax = u > umax ? u : umax;
    }
    if (nan || !(umin > (double)n * DBL_EPSILON * umax)) {
      *singular = 1;
      goto cleanup;
    }
  }
  GS_TRY(gs_dmalloc(ctx, (void **)&inv, nn * sizeof(double), "AMG coarse inverse"));
  amg_identity_kernel<<<amg_blocks((int64_t)nn), AMG_THREADS, 0, ctx->stream>>>(n, inv);
  GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "amg_identity_kernel"));
  GS_TRY(AMG_CUSOLVER(cusolverDnDgetrs(h, CUBLAS_OP_N, n, n, lu, n, ipiv, inv, n, info)));
  GS_TRY(gs_copy_to_host(ctx, &h_info, info, sizeof h_info)); /* synchronizes */
  if (h_info != 0) GS_FAIL(GS_ERR_INTERNAL, "cusolverDnDgetrs: argument %d is wrong", -h_info);
  *d_inv = inv;
  inv = NULL;
cleanup:
  cudaStreamSynchronize(ctx->stream); /* cuSOLVER and the kernels are done with the buffers */
  if (h) cusolverDnDestroy(h);
  free(udiag);
  gs_dfree(ctx, inv);
  gs_dfree(ctx, work);
  gs_dfree(ctx, ipiv);
  gs_dfree(ctx, lu);
  return st;
}
