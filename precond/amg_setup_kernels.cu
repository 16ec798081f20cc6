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
 *   smoothed P                           rows binned by length in one pass that also counts
 *                                        the short ones: up to 16 entries a thread (insertion
 *                                        sort in local memory), up to 256 a warp, up to 4096 a
 *                                        block (bitonic sort of (aggregate, position) keys in
 *                                        shared memory), longer rows' keys sorted in global
 *                                        memory (cub::DeviceSegmentedSort); the count pass,
 *                                        scan, the fill pass on the same sorted order: each run
 *                                        of one aggregate summed in column order by one thread
 *                                        with __dmul_rn / __dadd_rn, so the values equal the
 *                                        host's bit for bit
 *   transpose                            cub::DeviceRadixSort of (column << 32 | row) keys
 *                                        with the values, the column counts scanned
 *   product                              cuSPARSE generic SpGEMM (ALG3 when the default has
 *                                        insufficient resources; rows sorted afterwards by
 *                                        cub::DeviceSegmentedSort when any is unsorted)
 *   dense inverse                        Gauss-Jordan elimination with partial pivoting:
 *                                        one block in shared memory while the matrix fits
 *                                        (n <= 168 on an H100), else one kernel a pivot step
 *                                        (a block a column, chained by programmatic dependent
 *                                        launch); the pivots read back for the singular test
 * Memory access: the row-per-thread kernels read their row's entries contiguously (uncoalesced
 * across a warp: setup work, read once or twice) and gather per-node arrays (d, keys, agg, t)
 * by column, which L1/L2 serve for the banded matrices AMG meets. Scratch is one gs_dmalloc
 * block per function where possible (each allocation synchronizes the stream), freed on every
 * path after the stream is idle.
 * Assumptions: square A (except in SpGEMM and transpose), nnz <= INT32_MAX, sorted rows without
 * duplicates, n < 2^31 (the key's node field). */
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "precond/amg_group.cuh"
#include "precond/amg_impl.h"
#include "spmv/common_kernels.h"
#include "spmv/device_util.cuh"

#define AMG_THREADS 256
#define AMG_MAX_ROUNDS 1000 /* MIS(2) rounds before the loop is called a bug (each round
                               decides at least the undecided node of largest key) */

static unsigned amg_blocks(int64_t items) { return gs_grid_blocks(items, AMG_THREADS); }

/* Size rounded up to 256 bytes: the pieces carved out of one scratch block stay aligned. */
static size_t amg_round(size_t bytes) { return (bytes + 255) & ~(size_t)255; }

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

/* Row i of P needs the aggregates J met in row i of A in increasing order, each with v_J summed
 * in the row's column order: the entries sorted by the key (J, position in the row), which is
 * unique, so any sort gives the one order (stable by position). Rows are binned by their length
 * L in A (one pass that also counts the short rows and finds a zero diagonal):
 *   L <= AMG_P_SHORT   one thread: insertion sort in local memory as the entries arrive
 *   L <= AMG_P_WARP    one warp: bitonic sort of the keys in shared memory
 *   L <= AMG_P_BLOCK   one block: the same in dynamic shared memory
 *   longer             keys in global memory, cub::DeviceSegmentedSort, one block a row
 * Both passes (count, fill) sort the same keys and walk the same sorted order: the head of each
 * run of equal J counts one entry of P; in the fill its thread sums the run in order (position
 * = column order) with __dmul_rn / __dadd_rn, then w_i v_J (+ t_i): the host's values. */
#define AMG_P_SHORT 16
#define AMG_P_WARP 256
#define AMG_P_BLOCK 4096
#define AMG_P_WARPS (AMG_THREADS / 32) /* warps of a block in the warp path, a row each */
#define AMG_P_NONE UINT64_MAX          /* the key of an entry whose column has no aggregate */

/* Counters of the binning pass (stat[]). */
enum { AMG_P_NWARP, AMG_P_NBLOCK, AMG_P_NLONG, AMG_P_LONG_LEN, AMG_P_BAD, AMG_P_NSTAT };

/* key = (J, s): J in the high half (J < 2^31, so a key is never AMG_P_NONE), s the entry's
 * position in the row. */
static __device__ __forceinline__ uint64_t amg_p_key(int32_t J, int32_t s)
{
  return ((uint64_t)(uint32_t)J << 32) | (uint32_t)s;
}
/* The aggregate of a key, -1 for AMG_P_NONE. */
static __device__ __forceinline__ int32_t amg_p_agg(uint64_t key) { return (int32_t)(key >> 32); }
/* Sorted key s starts a run of its aggregate (an entry of P). */
static __device__ __forceinline__ int amg_p_head(const uint64_t *key, int32_t s)
{
  const int32_t J = amg_p_agg(key[s]);
  return J >= 0 && (s == 0 || amg_p_agg(key[s - 1]) != J);
}
/* P(i, J) from v_J, rounded as the host does. */
static __device__ __forceinline__ double amg_p_value(double w, double v, int32_t J, int32_t ai,
                                                     double ti)
{
  double p = __dmul_rn(w, v);
  if (J == ai) p = __dadd_rn(ti, p);
  return p;
}

/* A row of at most AMG_P_SHORT entries by one thread: its (J, a_ik t_col[k]) pairs inserted in
 * order of J, each after those of equal J (stable: runs keep the column order). Returns the
 * number of distinct J; with FILL, writes row i of P from pcol/pval on. */
template <bool FILL>
static __device__ __forceinline__ int32_t
amg_p_short_row(int64_t i, const int32_t *__restrict__ rp, const gs_idx_t *__restrict__ col,
                const double *__restrict__ val, const double *__restrict__ d,
                const int32_t *__restrict__ agg, const double *__restrict__ t, double omega,
                gs_idx_t *__restrict__ pcol, double *__restrict__ pval)
{
  int32_t J[AMG_P_SHORT];
  double v[AMG_P_SHORT];
  int m = 0;
  for (int32_t k = rp[i]; k < rp[i + 1]; ++k) {
    const gs_idx_t j = col[k];
    const int32_t a = agg[j];
    if (a < 0) continue;
    const double prod = FILL ? __dmul_rn(val[k], t[j]) : 0.0;
    int q = m++;
    for (; q > 0 && J[q - 1] > a; --q) {
      J[q] = J[q - 1];
      if (FILL) v[q] = v[q - 1];
    }
    J[q] = a;
    if (FILL) v[q] = prod;
  }
  double w = 0.0, ti = 0.0;
  int32_t ai = -1;
  if (FILL) {
    w = -omega / d[i];
    ai = agg[i];
    ti = t[i];
  }
  int32_t c = 0;
  for (int q = 0; q < m;) {
    const int32_t a = J[q];
    double s = 0.0;
    for (; q < m && J[q] == a; ++q)
      if (FILL) s = __dadd_rn(s, v[q]);
    if (FILL) {
      pcol[c] = a;
      pval[c] = amg_p_value(w, s, a, ai, ti);
    }
    ++c;
  }
  return c;
}

/* Bitonic sort (Batcher 1968) of key[0, P), P a power of 2, ascending, by the G threads of the
 * group: each step compares P/2 disjoint pairs (lo, lo + stride), a barrier between steps. */
template <int G>
static __device__ __forceinline__ void amg_bitonic(uint64_t *key, int P, int rank)
{
  for (int size = 2; size <= P; size <<= 1)
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      for (int q = rank; q < (P >> 1); q += G) {
        const int lo = 2 * q - (q & (stride - 1)), hi = lo + stride;
        const uint64_t a = key[lo], b = key[hi];
        if ((a > b) == ((lo & size) == 0)) { /* out of this subsequence's direction */
          key[lo] = b;
          key[hi] = a;
        }
      }
      amg_group<G>::sync();
    }
}

/* Row `row` (AMG_P_SHORT < L <= cap) by the group: keys (and with FILL the products a_ik t_j,
 * by position) into shared memory, padded with AMG_P_NONE to a power of 2, sorted; each thread
 * takes a contiguous chunk of the sorted keys, the group's scan of its heads gives each head
 * its place in P's row. Count: cnt[row]; fill: row `row` of P. Ends on a barrier (the shared
 * arrays serve the group's next row). */
template <int G, bool FILL>
static __device__ __forceinline__ void
amg_p_group_row(int32_t row, uint64_t *key, double *prod, int *wsum,
                const int32_t *__restrict__ rp, const gs_idx_t *__restrict__ col,
                const double *__restrict__ val, const double *__restrict__ d,
                const int32_t *__restrict__ agg, const double *__restrict__ t, double omega,
                int32_t *__restrict__ cnt, const int32_t *__restrict__ prp,
                gs_idx_t *__restrict__ pcol, double *__restrict__ pval)
{
  const int rank = amg_group<G>::rank();
  const int32_t b = rp[row], L = rp[row + 1] - b;
  int P = 2;
  while (P < L) P <<= 1;
  for (int s = rank; s < P; s += G) {
    uint64_t k = AMG_P_NONE;
    if (s < L) {
      const gs_idx_t j = col[b + s];
      const int32_t a = agg[j];
      if (a >= 0) {
        k = amg_p_key(a, s);
        if (FILL) prod[s] = __dmul_rn(val[b + s], t[j]);
      }
    }
    key[s] = k;
  }
  amg_group<G>::sync();
  amg_bitonic<G>(key, P, rank);
  const int chunk = (P + G - 1) / G;
  const int s0 = min(rank * chunk, P), s1 = min(s0 + chunk, P);
  int c = 0;
  for (int s = s0; s < s1; ++s) c += amg_p_head(key, s);
  int total = 0;
  const int before = amg_group<G>::scan(c, &total, wsum);
  if (!FILL) {
    if (rank == 0) cnt[row] = total;
  } else {
    const double w = -omega / d[row], ti = t[row];
    const int32_t ai = agg[row];
    int32_t q = prp[row] + before;
    for (int s = s0; s < s1; ++s) {
      if (!amg_p_head(key, s)) continue;
      const int32_t J = amg_p_agg(key[s]);
      double v = 0.0;
      for (int u = s; u < P && amg_p_agg(key[u]) == J; ++u)
        v = __dadd_rn(v, prod[(uint32_t)key[u]]);
      pcol[q] = J;
      pval[q++] = amg_p_value(w, v, J, ai, ti);
    }
  }
  amg_group<G>::sync();
}

/* The binning pass, one thread a row: a short row's count into cnt; a warp row's number to the
 * front of `list`, a block row's to its back (warp-aggregated atomics: the loop runs the same
 * trips in every lane of a warp), a longer row to grow with its slot [gbeg, gend) in the key
 * array; stat[AMG_P_BAD] = the least row with d_i == 0 (preset to all ones: unsigned min).
 * cnt[n] = 0 (the scan's total). */
static __global__ void __launch_bounds__(AMG_THREADS)
amg_p_count_kernel(gs_idx_t n, const int32_t *__restrict__ rp, const gs_idx_t *__restrict__ col,
                   const int32_t *__restrict__ agg, const double *__restrict__ d,
                   int32_t *__restrict__ cnt, int32_t *__restrict__ list,
                   int32_t *__restrict__ grow, int32_t *__restrict__ gbeg,
                   int32_t *__restrict__ gend, int32_t *stat)
{
  if (blockIdx.x == 0 && threadIdx.x == 0) cnt[n] = 0;
  const int lane = threadIdx.x & 31;
  const unsigned below = (1u << lane) - 1u;
  for (int64_t r0 = (int64_t)blockIdx.x * blockDim.x; r0 < n;
       r0 += (int64_t)gridDim.x * blockDim.x) {
    const int64_t i = r0 + threadIdx.x;
    int bin = -1;
    if (i < n) {
      const int32_t L = rp[i + 1] - rp[i];
      bin = L <= AMG_P_SHORT ? 0 : L <= AMG_P_WARP ? 1 : L <= AMG_P_BLOCK ? 2 : 3;
      if (bin == 0)
        cnt[i] = amg_p_short_row<false>(i, rp, col, NULL, d, agg, NULL, 0.0, NULL, NULL);
      if (bin == 3) { /* rare: at most nnz / (AMG_P_BLOCK + 1) rows */
        const int32_t g = atomicAdd(&stat[AMG_P_NLONG], 1);
        const int32_t off = atomicAdd(&stat[AMG_P_LONG_LEN], L);
        grow[g] = (int32_t)i;
        gbeg[g] = off;
        gend[g] = off + L;
      }
      if (d[i] == 0.0) atomicMin((unsigned *)&stat[AMG_P_BAD], (unsigned)i);
    }
    const unsigned mw = __ballot_sync(0xffffffffu, bin == 1);
    const unsigned mb = __ballot_sync(0xffffffffu, bin == 2);
    if (mw) {
      const int lead = __ffs(mw) - 1;
      int base = 0;
      if (lane == lead) base = atomicAdd(&stat[AMG_P_NWARP], __popc(mw));
      base = __shfl_sync(0xffffffffu, base, lead);
      if (bin == 1) list[base + __popc(mw & below)] = (int32_t)i;
    }
    if (mb) {
      const int lead = __ffs(mb) - 1;
      int base = 0;
      if (lane == lead) base = atomicAdd(&stat[AMG_P_NBLOCK], __popc(mb));
      base = __shfl_sync(0xffffffffu, base, lead);
      if (bin == 2) list[n - 1 - (base + __popc(mb & below))] = (int32_t)i;
    }
  }
}

/* The fill of the short rows (the others are left to their kernels). */
static __global__ void __launch_bounds__(AMG_THREADS)
amg_p_short_fill_kernel(gs_idx_t n, const int32_t *__restrict__ rp,
                        const gs_idx_t *__restrict__ col, const double *__restrict__ val,
                        const double *__restrict__ d, const int32_t *__restrict__ agg,
                        const double *__restrict__ t, double omega,
                        const int32_t *__restrict__ prp, gs_idx_t *__restrict__ pcol,
                        double *__restrict__ pval)
{
  GS_GRID_STRIDE(i, n)
  {
    if (rp[i + 1] - rp[i] > AMG_P_SHORT) continue;
    const int32_t q = prp[i];
    amg_p_short_row<true>(i, rp, col, val, d, agg, t, omega, pcol + q, pval + q);
  }
}

/* Warp rows list[0, nrows): AMG_P_WARPS warps a block, a row each in turn. */
template <bool FILL>
static __global__ void __launch_bounds__(AMG_THREADS)
amg_p_warp_kernel(int32_t nrows, const int32_t *__restrict__ list,
                  const int32_t *__restrict__ rp, const gs_idx_t *__restrict__ col,
                  const double *__restrict__ val, const double *__restrict__ d,
                  const int32_t *__restrict__ agg, const double *__restrict__ t, double omega,
                  int32_t *__restrict__ cnt, const int32_t *__restrict__ prp,
                  gs_idx_t *__restrict__ pcol, double *__restrict__ pval)
{
  __shared__ uint64_t s_key[AMG_P_WARPS][AMG_P_WARP];
  __shared__ double s_prod[AMG_P_WARPS][FILL ? AMG_P_WARP : 1];
  const int warp = threadIdx.x >> 5;
  for (int64_t r = (int64_t)blockIdx.x * AMG_P_WARPS + warp; r < nrows;
       r += (int64_t)gridDim.x * AMG_P_WARPS)
    amg_p_group_row<32, FILL>(list[r], s_key[warp], s_prod[warp], NULL, rp, col, val, d, agg, t,
                              omega, cnt, prp, pcol, pval);
}

/* Block rows list[n - 1 - r], r < nrows, a block each in turn; keys (and products) in dynamic
 * shared memory (AMG_P_BLOCK of each). */
extern __shared__ __align__(16) unsigned char amg_dyn_smem[];
template <bool FILL>
static __global__ void __launch_bounds__(AMG_THREADS)
amg_p_block_kernel(int32_t nrows, gs_idx_t n, const int32_t *__restrict__ list,
                   const int32_t *__restrict__ rp, const gs_idx_t *__restrict__ col,
                   const double *__restrict__ val, const double *__restrict__ d,
                   const int32_t *__restrict__ agg, const double *__restrict__ t, double omega,
                   int32_t *__restrict__ cnt, const int32_t *__restrict__ prp,
                   gs_idx_t *__restrict__ pcol, double *__restrict__ pval)
{
  __shared__ int s_wsum[AMG_THREADS / 32];
  uint64_t *key = (uint64_t *)amg_dyn_smem;
  double *prod = (double *)(amg_dyn_smem + AMG_P_BLOCK * sizeof(uint64_t));
  for (int64_t r = blockIdx.x; r < nrows; r += gridDim.x)
    amg_p_group_row<AMG_THREADS, FILL>(list[n - 1 - r], key, prod, s_wsum, rp, col, val, d, agg,
                                       t, omega, cnt, prp, pcol, pval);
}

/* Long rows: keys[gbeg[g] + s] = the key of entry s of row grow[g], a block a row. */
static __global__ void __launch_bounds__(AMG_THREADS)
amg_p_long_keys_kernel(int32_t nlong, const int32_t *__restrict__ grow,
                       const int32_t *__restrict__ gbeg, const int32_t *__restrict__ rp,
                       const gs_idx_t *__restrict__ col, const int32_t *__restrict__ agg,
                       uint64_t *__restrict__ keys)
{
  for (int32_t g = blockIdx.x; g < nlong; g += gridDim.x) {
    const int32_t row = grow[g], b = rp[row], L = rp[row + 1] - b;
    uint64_t *k = keys + gbeg[g];
    for (int32_t s = threadIdx.x; s < L; s += blockDim.x) {
      const int32_t a = agg[col[b + s]];
      k[s] = a >= 0 ? amg_p_key(a, s) : AMG_P_NONE;
    }
  }
}

/* Long rows from their sorted keys (global memory), a block a row, AMG_THREADS keys a tile: the
 * heads of a tile scanned across the block and placed after those of the tiles before; with
 * FILL each head's thread sums its run, the products formed again from the row's entries. */
template <bool FILL>
static __global__ void __launch_bounds__(AMG_THREADS)
amg_p_long_kernel(int32_t nlong, const int32_t *__restrict__ grow,
                  const int32_t *__restrict__ gbeg, const uint64_t *__restrict__ keys,
                  const int32_t *__restrict__ rp, const gs_idx_t *__restrict__ col,
                  const double *__restrict__ val, const double *__restrict__ d,
                  const int32_t *__restrict__ agg, const double *__restrict__ t, double omega,
                  int32_t *__restrict__ cnt, const int32_t *__restrict__ prp,
                  gs_idx_t *__restrict__ pcol, double *__restrict__ pval)
{
  __shared__ int s_wsum[AMG_THREADS / 32];
  for (int32_t g = blockIdx.x; g < nlong; g += gridDim.x) {
    const int32_t row = grow[g], b = rp[row], L = rp[row + 1] - b;
    const uint64_t *k = keys + gbeg[g];
    double w = 0.0, ti = 0.0;
    int32_t ai = -1, q0 = 0;
    if (FILL) {
      w = -omega / d[row];
      ti = t[row];
      ai = agg[row];
      q0 = prp[row];
    }
    int32_t done = 0;
    for (int32_t s0 = 0; s0 < L; s0 += AMG_THREADS) {
      const int32_t s = s0 + (int32_t)threadIdx.x;
      const int h = s < L && amg_p_head(k, s);
      int total = 0;
      const int before = amg_group<AMG_THREADS>::scan(h, &total, s_wsum);
      if (FILL && h) {
        const int32_t J = amg_p_agg(k[s]);
        double v = 0.0;
        for (int32_t u = s; u < L && amg_p_agg(k[u]) == J; ++u) {
          const int32_t e = b + (int32_t)(uint32_t)k[u];
          v = __dadd_rn(v, __dmul_rn(val[e], t[col[e]]));
        }
        pcol[q0 + done + before] = J;
        pval[q0 + done + before] = amg_p_value(w, v, J, ai, ti);
      }
      done += total;
    }
    if (!FILL && threadIdx.x == 0) cnt[row] = done;
  }
}

/* The pass of the rows longer than AMG_P_SHORT (counts, or the fill): warp, block and long
 * rows. The long rows' keys are sorted once, before the count, and kept for the fill. */
template <bool FILL>
static gs_status_t amg_p_long_pass(gs_context_t *ctx, const gs_amg_dcsr_t *A,
                                   const double *d_diag, const int32_t *d_agg, const double *d_t,
                                   double omega, const int32_t *h_stat, const int32_t *list,
                                   const int32_t *grow, const int32_t *gbeg,
                                   const uint64_t *keys, int32_t *cnt, const int32_t *prp,
                                   gs_idx_t *pcol, double *pval)
{
  const gs_idx_t n = A->m;
  const int32_t nw = h_stat[AMG_P_NWARP], nb = h_stat[AMG_P_NBLOCK], nl = h_stat[AMG_P_NLONG];
  if (nw > 0) {
    amg_p_warp_kernel<FILL><<<gs_grid_blocks(nw, AMG_P_WARPS), AMG_THREADS, 0, ctx->stream>>>(
        nw, list, A->rp, A->col, A->val, d_diag, d_agg, d_t, omega, cnt, prp, pcol, pval);
    GS_CHECK(GS_CHECK_LAUNCH(ctx->stream, "amg_p_warp_kernel"));
  }
  if (nb > 0) {
    const int smem = AMG_P_BLOCK * (int)(FILL ? 2 * sizeof(double) : sizeof(uint64_t));
    GS_CHECK(GS_CUDA(cudaFuncSetAttribute(amg_p_block_kernel<FILL>,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize, smem)));
    amg_p_block_kernel<FILL><<<gs_grid_blocks(nb, 1), AMG_THREADS, smem, ctx->stream>>>(
        nb, n, list, A->rp, A->col, A->val, d_diag, d_agg, d_t, omega, cnt, prp, pcol, pval);
    GS_CHECK(GS_CHECK_LAUNCH(ctx->stream, "amg_p_block_kernel"));
  }
  if (nl > 0) {
    amg_p_long_kernel<FILL><<<gs_grid_blocks(nl, 1), AMG_THREADS, 0, ctx->stream>>>(
        nl, grow, gbeg, keys, A->rp, A->col, A->val, d_diag, d_agg, d_t, omega, cnt, prp, pcol,
        pval);
    GS_CHECK(GS_CHECK_LAUNCH(ctx->stream, "amg_p_long_kernel"));
  }
  return GS_SUCCESS;
}

extern "C" gs_status_t gs_amg_smooth_p_dev(gs_context_t *ctx, const gs_amg_dcsr_t *A,
                                           const double *d_diag, const int32_t *d_agg,
                                           const double *d_t, int32_t naggs, double omega,
                                           gs_amg_dcsr_t *P)
{
  gs_status_t st = GS_SUCCESS;
  char *scratch = NULL, *kscratch = NULL;
  gs_amg_dcsr_t out;
  memset(&out, 0, sizeof out);
  if (!ctx || !A || !P || naggs < 0 || A->m != A->n || A->nnz < 0 || A->nnz > INT32_MAX)
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
    /* one block: the counts (n + 1), the row list (n), the long rows with their key slots (at
     * most nnz / (AMG_P_BLOCK + 1) rows are longer than AMG_P_BLOCK), the counters, the scan */
    const size_t gcap = (size_t)(A->nnz / (AMG_P_BLOCK + 1)) + 1;
    const size_t b4 = amg_round(((size_t)n + 1) * 4), bl = amg_round((size_t)n * 4);
    const size_t bg = amg_round(gcap * 4), bs = amg_round(AMG_P_NSTAT * sizeof(int32_t));
    GS_TRY(gs_dmalloc(ctx, (void **)&scratch, b4 + bl + 3 * bg + bs + temp,
                      "AMG prolongator counts"));
    int32_t *cnt = (int32_t *)scratch, *list = (int32_t *)(scratch + b4);
    int32_t *grow = (int32_t *)(scratch + b4 + bl), *gbeg = (int32_t *)(scratch + b4 + bl + bg);
    int32_t *gend = (int32_t *)(scratch + b4 + bl + 2 * bg);
    int32_t *stat = (int32_t *)(scratch + b4 + bl + 3 * bg);
    void *d_temp = scratch + b4 + bl + 3 * bg + bs;
    uint64_t *keys = NULL;
    int32_t h_stat[AMG_P_NSTAT];
    GS_TRY(GS_CUDA(cudaMemsetAsync(stat, 0, AMG_P_BAD * sizeof(int32_t), ctx->stream)));
    GS_TRY(GS_CUDA(cudaMemsetAsync(stat + AMG_P_BAD, 0xff, sizeof(int32_t), ctx->stream)));
    amg_p_count_kernel<<<amg_blocks(n), AMG_THREADS, 0, ctx->stream>>>(
        n, A->rp, A->col, d_agg, d_diag, cnt, list, grow, gbeg, gend, stat);
    GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "amg_p_count_kernel"));
    GS_TRY(gs_copy_to_host(ctx, h_stat, stat, sizeof h_stat)); /* synchronizes */
    if ((uint32_t)h_stat[AMG_P_BAD] < (uint32_t)n)
      GS_FAIL(GS_ERR_INVALID_ARG,
              "AMG smoothed prolongator: row %d has a zero diagonal entry (D^-1 A undefined)",
              (int)h_stat[AMG_P_BAD] + 1);
    if (h_stat[AMG_P_NLONG] > 0) { /* the long rows' keys, sorted once for both passes */
      const int64_t len = h_stat[AMG_P_LONG_LEN], segs = h_stat[AMG_P_NLONG];
      size_t stemp = 0;
      GS_TRY(GS_CUDA(cub::DeviceSegmentedSort::SortKeys(
          NULL, stemp, (const uint64_t *)NULL, (uint64_t *)NULL, len, segs,
          (const int32_t *)gbeg, (const int32_t *)gend, ctx->stream)));
      const size_t bk = amg_round((size_t)len * sizeof(uint64_t));
      GS_TRY(gs_dmalloc(ctx, (void **)&kscratch, 2 * bk + stemp, "AMG prolongator long rows"));
      uint64_t *unsorted = (uint64_t *)kscratch;
      keys = (uint64_t *)(kscratch + bk);
      amg_p_long_keys_kernel<<<gs_grid_blocks(segs, 1), AMG_THREADS, 0, ctx->stream>>>(
          (int32_t)segs, grow, gbeg, A->rp, A->col, d_agg, unsorted);
      GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "amg_p_long_keys_kernel"));
      GS_TRY(GS_CUDA(cub::DeviceSegmentedSort::SortKeys(
          kscratch + 2 * bk, stemp, (const uint64_t *)unsorted, keys, len, segs,
          (const int32_t *)gbeg, (const int32_t *)gend, ctx->stream)));
    }
    GS_TRY(amg_p_long_pass<false>(ctx, A, d_diag, d_agg, d_t, omega, h_stat, list, grow, gbeg,
                                  keys, cnt, NULL, NULL, NULL));
    GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(d_temp, temp, cnt, out.rp, (int64_t)n + 1,
                                                 ctx->stream)));
    int32_t h_nnz = 0;
    GS_TRY(gs_copy_to_host(ctx, &h_nnz, out.rp + n, sizeof h_nnz));
    out.nnz = h_nnz;
    GS_TRY(gs_dmalloc(ctx, (void **)&out.col, (size_t)h_nnz * sizeof(gs_idx_t),
                      "AMG prolongator column indices"));
    GS_TRY(gs_dmalloc(ctx, (void **)&out.val, (size_t)h_nnz * sizeof(double),
                      "AMG prolongator values"));
    amg_p_short_fill_kernel<<<amg_blocks(n), AMG_THREADS, 0, ctx->stream>>>(
        n, A->rp, A->col, A->val, d_diag, d_agg, d_t, omega, out.rp, out.col, out.val);
    GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "amg_p_short_fill_kernel"));
    GS_TRY(amg_p_long_pass<true>(ctx, A, d_diag, d_agg, d_t, omega, h_stat, list, grow, gbeg,
                                 keys, NULL, out.rp, out.col, out.val));
  }
  GS_TRY(GS_CUDA(cudaStreamSynchronize(ctx->stream)));
  *P = out;
  memset(&out, 0, sizeof out);
cleanup:
  if (st != GS_SUCCESS) cudaStreamSynchronize(ctx->stream);
  gs_dfree(ctx, kscratch);
  gs_dfree(ctx, scratch);
  gs_amg_dcsr_free(ctx, &out);
  return st;
}

/* ---- R = P^T and C = A B (cuSPARSE) --------------------------------------------------------- */

/* R = P^T without cuSPARSE's csr2csc (33 ms on G3_circuit's prolongators, against ~1 ms
 * here): each entry's key (column << 32 | row) is radix-sorted with its value, so R's rows come
 * out with the rows of P in increasing order (the keys are unique: the order is the one
 * csr2csc gives, and the values are moved, not computed); R's row pointers are the scanned
 * column counts. */
__global__ void tr_keys_k(gs_idx_t m, const int32_t *rp, const gs_idx_t *col, uint64_t *keys,
                          int32_t *counts)
{
  for (gs_idx_t i = blockIdx.x * blockDim.x + threadIdx.x; i < m; i += gridDim.x * blockDim.x)
    for (int32_t k = rp[i]; k < rp[i + 1]; ++k) {
      keys[k] = ((uint64_t)(uint32_t)col[k] << 32) | (uint32_t)i;
      atomicAdd(&counts[col[k]], 1);
    }
}

__global__ void tr_unpack_k(int64_t nnz, const uint64_t *keys, gs_idx_t *out_col)
{
  for (int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; k < nnz;
       k += (int64_t)gridDim.x * blockDim.x)
    out_col[k] = (gs_idx_t)(uint32_t)(keys[k] & 0xffffffffu);
}

extern "C" gs_status_t gs_amg_transpose_dev(gs_context_t *ctx, const gs_amg_dcsr_t *P,
                                            gs_amg_dcsr_t *R)
{
  gs_status_t st = GS_SUCCESS;
  void *tmp = NULL;
  uint64_t *keys = NULL, *keys_out = NULL;
  int32_t *counts = NULL;
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
  if (P->nnz == 0 || P->m == 0 || P->n == 0) {
    GS_TRY(GS_CUDA(cudaMemsetAsync(out.rp, 0, ((size_t)out.m + 1) * sizeof(int32_t),
                                   ctx->stream)));
  } else {
    const size_t nnz = (size_t)P->nnz;
    GS_TRY(gs_dmalloc(ctx, (void **)&out.col, nnz * sizeof(gs_idx_t),
                      "AMG restriction column indices"));
    GS_TRY(gs_dmalloc(ctx, (void **)&out.val, nnz * sizeof(double), "AMG restriction values"));
    GS_TRY(gs_dmalloc(ctx, (void **)&keys, nnz * sizeof(uint64_t), "AMG transpose keys"));
    GS_TRY(gs_dmalloc(ctx, (void **)&keys_out, nnz * sizeof(uint64_t), "AMG transpose keys"));
    GS_TRY(gs_dmalloc(ctx, (void **)&counts, ((size_t)out.m + 1) * sizeof(int32_t),
                      "AMG transpose counts"));
    GS_TRY(GS_CUDA(cudaMemsetAsync(counts, 0, ((size_t)out.m + 1) * sizeof(int32_t),
                                   ctx->stream)));
    const int threads = 256;
    const unsigned blocks_m = (unsigned)((P->m + threads - 1) / threads);
    tr_keys_k<<<blocks_m, threads, 0, ctx->stream>>>(P->m, P->rp, P->col, keys, counts);
    GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "amg tr_keys_k"));
    int end_bit = 32;
    while (end_bit < 64 && ((uint64_t)P->n >> (end_bit - 32)) != 0) ++end_bit;
    size_t tb_sort = 0, tb_scan = 0;
    GS_TRY(GS_CUDA(cub::DeviceRadixSort::SortPairs(NULL, tb_sort, keys, keys_out, P->val,
                                                   out.val, (int)nnz, 0, end_bit, ctx->stream)));
    GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(NULL, tb_scan, counts, out.rp, out.m + 1,
                                                 ctx->stream)));
    const size_t tb = tb_sort > tb_scan ? tb_sort : tb_scan;
    GS_TRY(gs_dmalloc(ctx, &tmp, tb ? tb : 256, "AMG transpose scratch"));
    size_t t1 = tb;
    GS_TRY(GS_CUDA(cub::DeviceRadixSort::SortPairs(tmp, t1, keys, keys_out, P->val, out.val,
                                                   (int)nnz, 0, end_bit, ctx->stream)));
    size_t t2 = tb;
    GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(tmp, t2, counts, out.rp, out.m + 1,
                                                 ctx->stream)));
    const unsigned blocks_k = (unsigned)((nnz + threads - 1) / threads < 65535u * 16
                                             ? (nnz + threads - 1) / threads
                                             : 65535u * 16);
    tr_unpack_k<<<blocks_k, threads, 0, ctx->stream>>>((int64_t)nnz, keys_out, out.col);
    GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "amg tr_unpack_k"));
  }
  GS_TRY(GS_CUDA(cudaStreamSynchronize(ctx->stream)));
  *R = out;
  memset(&out, 0, sizeof out);
cleanup:
  if (st != GS_SUCCESS) cudaStreamSynchronize(ctx->stream);
  gs_dfree(ctx, tmp);
  gs_dfree(ctx, keys);
  gs_dfree(ctx, keys_out);
  gs_dfree(ctx, counts);
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

/* One cuSPARSE SpGEMM C = A B with algorithm `alg` into `out` (rows allocated by the caller).
 * *retry = 1 when cuSPARSE answered CUSPARSE_STATUS_INSUFFICIENT_RESOURCES (the default
 * algorithm's work estimation refuses products with very long intermediate rows: a dense-ish
 * coarse level), so that the caller can try the memory-bounded ALG3. */
static gs_status_t spgemm_alg(gs_context_t *ctx, const gs_amg_dcsr_t *A, const gs_amg_dcsr_t *B,
                              cusparseSpGEMMAlg_t alg, gs_amg_dcsr_t *out, int *retry)
{
  gs_status_t st = GS_SUCCESS;
  cusparseSpMatDescr_t mA = NULL, mB = NULL, mC = NULL;
  cusparseSpGEMMDescr_t sg = NULL;
  void *buf1 = NULL, *buf2 = NULL, *buf3 = NULL;
  const double one = 1.0, zero = 0.0;
  const cusparseOperation_t opN = CUSPARSE_OPERATION_NON_TRANSPOSE;
  cusparseHandle_t h = ctx->cusparse;
  cusparseStatus_t cs;
  *retry = 0;
#define SG_TRY(call)                                                                             \
  do {                                                                                           \
    cs = (call);                                                                                 \
    if (cs == CUSPARSE_STATUS_INSUFFICIENT_RESOURCES && alg == CUSPARSE_SPGEMM_DEFAULT) {        \
      *retry = 1;                                                                                \
      st = GS_ERROR(GS_ERR_CUSPARSE, "cuSPARSE SpGEMM: insufficient resources");                 \
      goto cleanup;                                                                              \
    }                                                                                            \
    GS_TRY(GS_CUSPARSE(cs));                                                                     \
  } while (0)
  GS_TRY(GS_CUSPARSE(cusparseCreateCsr(&mA, A->m, A->n, A->nnz, A->rp, A->col, A->val,
                                       CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                       CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F)));
  GS_TRY(GS_CUSPARSE(cusparseCreateCsr(&mB, B->m, B->n, B->nnz, B->rp, B->col, B->val,
                                       CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                       CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F)));
  GS_TRY(GS_CUSPARSE(cusparseCreateCsr(&mC, out->m, out->n, 0, NULL, NULL, NULL,
                                       CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                       CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F)));
  GS_TRY(GS_CUSPARSE(cusparseSpGEMM_createDescr(&sg)));
  {
    size_t s1 = 0, s2 = 0;
    SG_TRY(cusparseSpGEMM_workEstimation(h, opN, opN, &one, mA, mB, &zero, mC, CUDA_R_64F, alg,
                                         sg, &s1, NULL));
    /* never NULL: a NULL buffer would make the second call a size query again */
    GS_TRY(gs_dmalloc(ctx, &buf1, s1 ? s1 : 256, "cuSPARSE SpGEMM work estimation buffer"));
    SG_TRY(cusparseSpGEMM_workEstimation(h, opN, opN, &one, mA, mB, &zero, mC, CUDA_R_64F, alg,
                                         sg, &s1, buf1));
    if (alg == CUSPARSE_SPGEMM_ALG3) { /* the memory ALG3 needs, for chunks of 20% */
      size_t s3 = 0;
      const float chunk = 0.2f;
      GS_TRY(GS_CUSPARSE(cusparseSpGEMM_estimateMemory(h, opN, opN, &one, mA, mB, &zero, mC,
                                                       CUDA_R_64F, alg, sg, chunk, &s3, NULL,
                                                       NULL)));
      GS_TRY(gs_dmalloc(ctx, &buf3, s3 ? s3 : 256, "cuSPARSE SpGEMM estimation buffer"));
      GS_TRY(GS_CUSPARSE(cusparseSpGEMM_estimateMemory(h, opN, opN, &one, mA, mB, &zero, mC,
                                                       CUDA_R_64F, alg, sg, chunk, &s3, buf3,
                                                       &s2)));
      gs_dfree(ctx, buf3);
      buf3 = NULL;
    } else {
      SG_TRY(cusparseSpGEMM_compute(h, opN, opN, &one, mA, mB, &zero, mC, CUDA_R_64F, alg, sg,
                                    &s2, NULL));
    }
    GS_TRY(gs_dmalloc(ctx, &buf2, s2 ? s2 : 256, "cuSPARSE SpGEMM compute buffer"));
    SG_TRY(cusparseSpGEMM_compute(h, opN, opN, &one, mA, mB, &zero, mC, CUDA_R_64F, alg, sg, &s2,
                                  buf2));
  }
  {
    int64_t rows = 0, cols = 0, nnz = 0;
    GS_TRY(GS_CUSPARSE(cusparseSpMatGetSize(mC, &rows, &cols, &nnz)));
    if (nnz > INT32_MAX)
      GS_FAIL(GS_ERR_UNSUPPORTED,
              "AMG product of %lld entries: a level's matrix holds at most 2^31-1",
              (long long)nnz);
    out->nnz = nnz;
    GS_TRY(gs_dmalloc(ctx, (void **)&out->col, (size_t)(nnz ? nnz : 1) * sizeof(gs_idx_t),
                      "AMG product column indices"));
    GS_TRY(gs_dmalloc(ctx, (void **)&out->val, (size_t)(nnz ? nnz : 1) * sizeof(double),
                      "AMG product values"));
    GS_TRY(GS_CUSPARSE(cusparseCsrSetPointers(mC, out->rp, out->col, out->val)));
    GS_TRY(GS_CUSPARSE(cusparseSpGEMM_copy(h, opN, opN, &one, mA, mB, &zero, mC, CUDA_R_64F,
                                           alg, sg)));
  }
#undef SG_TRY
cleanup:
  if (st != GS_SUCCESS) {
    cudaStreamSynchronize(ctx->stream);
    gs_dfree(ctx, out->col);
    gs_dfree(ctx, out->val);
    out->col = NULL;
    out->val = NULL;
    out->nnz = 0;
  }
  if (sg) cusparseSpGEMM_destroyDescr(sg);
  if (mA) cusparseDestroySpMat(mA);
  if (mB) cusparseDestroySpMat(mB);
  if (mC) cusparseDestroySpMat(mC);
  cudaStreamSynchronize(ctx->stream); /* the buffers may still be read */
  gs_dfree(ctx, buf1);
  gs_dfree(ctx, buf2);
  gs_dfree(ctx, buf3);
  return st;
}

extern "C" gs_status_t gs_amg_spgemm_dev(gs_context_t *ctx, const gs_amg_dcsr_t *A,
                                         const gs_amg_dcsr_t *B, gs_amg_dcsr_t *C)
{
  gs_status_t st = GS_SUCCESS;
  cusparsePointerMode_t old_mode = CUSPARSE_POINTER_MODE_HOST;
  int mode_set = 0;
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
    cusparseHandle_t h = ctx->cusparse;
    int retry = 0;
    GS_TRY(GS_CUSPARSE(cusparseSetStream(h, ctx->stream)));
    GS_TRY(GS_CUSPARSE(cusparseGetPointerMode(h, &old_mode)));
    GS_TRY(GS_CUSPARSE(cusparseSetPointerMode(h, CUSPARSE_POINTER_MODE_HOST)));
    mode_set = 1;
    st = spgemm_alg(ctx, A, B, CUSPARSE_SPGEMM_DEFAULT, &out, &retry);
    if (st != GS_SUCCESS && retry) st = spgemm_alg(ctx, A, B, CUSPARSE_SPGEMM_ALG3, &out, &retry);
    if (st != GS_SUCCESS) goto cleanup;
    GS_TRY(amg_sort_rows(ctx, &out));
  }
  GS_TRY(GS_CUDA(cudaStreamSynchronize(ctx->stream)));
  *C = out;
  memset(&out, 0, sizeof out);
cleanup:
  if (st != GS_SUCCESS) cudaStreamSynchronize(ctx->stream);
  if (mode_set) cusparseSetPointerMode(ctx->cusparse, old_mode);
  gs_amg_dcsr_free(ctx, &out);
  return st;
}

/* ---- the coarsest level's dense inverse ----------------------------------------------------- */

/* Gauss-Jordan elimination with partial pivoting, in place (Higham, Accuracy and Stability of
 * Numerical Algorithms, 2nd ed., Section 14.4): step k picks the pivot row p >= k of largest
 * |m_pk| (the least such p on ties; a NaN counts as infinite, so that it is picked and reported),
 * swaps rows k and p, and with f the swapped column k and r_j = m_pj / piv (the pivot row
 * divided by the pivot) sets
 *     m_kj = r_j,   m_ij = m_ij - f_i r_j (one fma), i != k,       for j != k
 *     m_kk = 1 / piv,   m_ik = -(f_i (1 / piv)), i != k            (column k holds the inverse's)
 * Column k then holds column perm[k] of the inverse (perm: the original row now in row k), so
 * the result is written as inv[:, perm[k]] = m[:, k]. The pivots are GEPP's (the same search over
 * the same rows k..n-1, whose updates are GE's): the header's singular test uses them. Both
 * paths below run exactly these operations, so they give the same bits.
 *   n small enough that the matrix fits the block's shared memory: one block of AMG_GJ_SMALL
 *     threads does every step (argmax reduction, the swapped rows and column k into shared
 *     arrays, the update), barriers between;
 *   larger: one kernel a step, a block a column (column j touched by no other block), chained
 *     by programmatic dependent launch; the block of column k + 1 also finds step k + 1's pivot
 *     and copies that column for it (f, double-buffered: step k reads one half and writes the
 *     other). O(n) launches of O(n^2) work each. */
#define AMG_GJ_SMALL 1024 /* threads of the one-block path (which needs n <= this) */
#define AMG_GJ_THREADS 256

/* A pivot candidate: |value| (NaN as +inf), its row, the value. */
struct amg_piv {
  double mag;
  int32_t row;
  double val;
};

static __device__ __forceinline__ amg_piv amg_piv_none(void)
{
  amg_piv c;
  c.mag = -1.0;
  c.row = INT32_MAX;
  c.val = 0.0;
  return c;
}
static __device__ __forceinline__ amg_piv amg_piv_of(double v, int32_t row)
{
  amg_piv c;
  c.mag = isnan(v) ? INFINITY : fabs(v);
  c.row = row;
  c.val = v;
  return c;
}
/* The larger magnitude, the smaller row on ties: a total order, so any reduction tree gives the
 * serial search's pivot. */
static __device__ __forceinline__ amg_piv amg_piv_max(amg_piv a, amg_piv b)
{
  return b.mag > a.mag || (b.mag == a.mag && b.row < a.row) ? b : a;
}
/* The block's best candidate, in every thread (sh: T / 32 entries of shared memory, free again
 * on return). */
template <int T>
static __device__ __forceinline__ amg_piv amg_piv_reduce(amg_piv c, amg_piv *sh)
{
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int o = 16; o > 0; o >>= 1) {
    amg_piv x;
    x.mag = __shfl_down_sync(0xffffffffu, c.mag, o);
    x.row = __shfl_down_sync(0xffffffffu, c.row, o);
    x.val = __shfl_down_sync(0xffffffffu, c.val, o);
    c = amg_piv_max(c, x);
  }
  if (lane == 0) sh[warp] = c;
  __syncthreads();
  if (warp == 0) {
    c = lane < T / 32 ? sh[lane] : amg_piv_none();
    for (int o = 16; o > 0; o >>= 1) {
      amg_piv x;
      x.mag = __shfl_down_sync(0xffffffffu, c.mag, o);
      x.row = __shfl_down_sync(0xffffffffu, c.row, o);
      x.val = __shfl_down_sync(0xffffffffu, c.val, o);
      c = amg_piv_max(c, x);
    }
    if (lane == 0) sh[0] = c;
  }
  __syncthreads();
  c = sh[0];
  __syncthreads();
  return c;
}

/* Shared memory of the one-block path: m (n^2), f, r, m's old row k (n each), perm (n ints). */
static size_t amg_gj_small_bytes(int n)
{
  return ((size_t)n * n + 3 * (size_t)n) * sizeof(double) + (size_t)n * sizeof(int32_t);
}

/* The whole inversion of an n x n CSR matrix (n <= AMG_GJ_SMALL) by one block in shared memory:
 * pval[k] = step k's pivot; on a zero or NaN pivot *flag = 1 and the block stops (inv not
 * written), else inv (column-major) = A^-1. */
static __global__ void __launch_bounds__(AMG_GJ_SMALL)
amg_gj_small_kernel(int n, const int32_t *__restrict__ rp, const gs_idx_t *__restrict__ col,
                    const double *__restrict__ val, double *__restrict__ inv,
                    double *__restrict__ pval, int32_t *flag)
{
  __shared__ amg_piv s_red[AMG_GJ_SMALL / 32];
  double *m = (double *)amg_dyn_smem;
  double *f = m + (size_t)n * n, *r = f + n, *ak = r + n;
  int32_t *perm = (int32_t *)(ak + n);
  const int tid = threadIdx.x, nn = n * n;
  if (tid == 0) *flag = 0;
  for (int e = tid; e < nn; e += AMG_GJ_SMALL) m[e] = 0.0;
  for (int i = tid; i < n; i += AMG_GJ_SMALL) perm[i] = i;
  __syncthreads();
  for (int i = tid; i < n; i += AMG_GJ_SMALL)
    for (int32_t q = rp[i]; q < rp[i + 1]; ++q) m[i + col[q] * n] = val[q];
  __syncthreads();
  /* this thread's elements in the update: row ib of columns jb, jb + js, ... */
  const int js = AMG_GJ_SMALL / n, ib = tid % n, jb = tid / n;
  int k = 0;
  for (; k < n; ++k) {
    amg_piv c = amg_piv_none();
    for (int i = k + tid; i < n; i += AMG_GJ_SMALL) c = amg_piv_max(c, amg_piv_of(m[i + k * n], i));
    c = amg_piv_reduce<AMG_GJ_SMALL>(c, s_red);
    const int p = c.row;
    const double piv = c.val;
    if (tid == 0) pval[k] = piv;
    if (piv == 0.0 || isnan(piv)) { /* the same c in every thread: the block leaves together */
      if (tid == 0) *flag = 1;
      break;
    }
    for (int j = tid; j < n; j += AMG_GJ_SMALL) {
      r[j] = m[p + j * n] / piv;
      ak[j] = m[k + j * n];
    }
    for (int i = tid; i < n; i += AMG_GJ_SMALL)
      f[i] = i == p ? m[k + k * n] : i == k ? m[p + k * n] : m[i + k * n];
    if (tid == 0) {
      const int32_t x = perm[k];
      perm[k] = perm[p];
      perm[p] = x;
    }
    __syncthreads();
    const double rinv = 1.0 / piv;
    if (jb < js)
      for (int j = jb; j < n; j += js) {
        double *e = m + ib + j * n;
        if (j == k) *e = ib == k ? rinv : __dmul_rn(-f[ib], rinv);
        else if (ib == k) *e = r[j];
        else *e = fma(-f[ib], r[j], ib == p ? ak[j] : *e);
      }
    __syncthreads();
  }
  if (k == n)
    for (int e = tid; e < nn; e += AMG_GJ_SMALL) {
      const int j = e / n, i = e - j * n;
      inv[i + (size_t)perm[j] * n] = m[e];
    }
}

/* Before step 0 of the multi-block path (one block): perm = identity, step 0's pivot (pidx[0],
 * pval[0]; *flag = 1 when it is zero or NaN) and f = column 0. */
static __global__ void __launch_bounds__(AMG_GJ_THREADS)
amg_gj_first_kernel(int n, const double *__restrict__ w, double *__restrict__ f,
                    int32_t *__restrict__ pidx, double *__restrict__ pval,
                    int32_t *__restrict__ perm, int32_t *flag)
{
  __shared__ amg_piv s_red[AMG_GJ_THREADS / 32];
  amg_piv c = amg_piv_none();
  for (int i = threadIdx.x; i < n; i += AMG_GJ_THREADS) {
    const double v = w[i];
    f[i] = v;
    perm[i] = i;
    c = amg_piv_max(c, amg_piv_of(v, i));
  }
  c = amg_piv_reduce<AMG_GJ_THREADS>(c, s_red);
  if (threadIdx.x == 0) {
    pidx[0] = c.row;
    pval[0] = c.val;
    *flag = c.val == 0.0 || isnan(c.val);
  }
  gs_pdl_trigger();
}

/* Step k on the column-major n x n array w, a block a column. f + (k & 1) n: column k before the
 * swap (from the step before); the block of column k + 1 writes that column to the other half
 * and step k + 1's pivot. *flag (a zero or NaN pivot found) stops every later step; a block of
 * this step that already sees it skips too (the result is thrown away). */
static __global__ void __launch_bounds__(AMG_GJ_THREADS)
amg_gj_step_kernel(int n, int k, double *__restrict__ w, double *__restrict__ fbuf,
                   int32_t *__restrict__ pidx, double *__restrict__ pval,
                   int32_t *__restrict__ perm, int32_t *flag)
{
  __shared__ amg_piv s_red[AMG_GJ_THREADS / 32];
  __shared__ int s_stop;
  gs_pdl_wait(); /* the step before has completed and its writes are visible */
  gs_pdl_trigger();
  if (threadIdx.x == 0) s_stop = *(volatile int32_t *)flag;
  __syncthreads();
  if (s_stop) return;
  const int p = pidx[k];
  const double piv = pval[k], rinv = 1.0 / piv;
  const double *f = fbuf + (size_t)(k & 1) * n;
  double *fn = fbuf + (size_t)((k + 1) & 1) * n;
  const double fk = f[k];
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    const int32_t x = perm[k];
    perm[k] = perm[p];
    perm[p] = x;
  }
  for (int b = blockIdx.x; b < n; b += gridDim.x) {
    const int j = (k + 1 + b) % n; /* block 0 (scheduled first) takes column k + 1: the search */
    double *c = w + (size_t)j * n;
    if (j == k) {
      for (int i = threadIdx.x; i < n; i += AMG_GJ_THREADS)
        c[i] = i == k ? rinv : __dmul_rn(-(i == p ? fk : f[i]), rinv);
      continue;
    }
    const double ak = c[k], ap = c[p];
    __syncthreads(); /* every thread has them before rows k and p are written */
    const double r = ap / piv;
    const bool next = j == k + 1;
    amg_piv best = amg_piv_none();
    for (int i = threadIdx.x; i < n; i += AMG_GJ_THREADS) {
      const double v = i == k ? r : fma(-(i == p ? fk : f[i]), r, i == p ? ak : c[i]);
      c[i] = v;
      if (next) {
        fn[i] = v;
        if (i > k) best = amg_piv_max(best, amg_piv_of(v, i));
      }
    }
    if (next) {
      best = amg_piv_reduce<AMG_GJ_THREADS>(best, s_red);
      if (threadIdx.x == 0) {
        pidx[k + 1] = best.row;
        pval[k + 1] = best.val;
        if (best.val == 0.0 || isnan(best.val)) *flag = 1;
      }
    }
  }
}

/* inv[:, perm[j]] = w[:, j]. */
static __global__ void __launch_bounds__(AMG_THREADS)
amg_gj_unscramble_kernel(int n, const double *__restrict__ w, const int32_t *__restrict__ perm,
                         double *__restrict__ inv)
{
  gs_pdl_wait();
  GS_GRID_STRIDE(e, (int64_t)n * n)
  {
    const int64_t j = e / n, i = e - j * n;
    inv[i + (int64_t)perm[j] * n] = w[e];
  }
}


/* Column-major dense copy of A (zeroed before): a[i + j n] = a_ij, one thread a row. */
static __global__ void __launch_bounds__(AMG_THREADS)
amg_dense_scatter_kernel(gs_idx_t n, const int32_t *__restrict__ rp,
                         const gs_idx_t *__restrict__ col, const double *__restrict__ val,
                         double *__restrict__ a)
{
  GS_GRID_STRIDE(i, n)
  for (int32_t k = rp[i]; k < rp[i + 1]; ++k) a[i + (int64_t)col[k] * n] = val[k];
}

extern "C" gs_status_t gs_amg_dense_inverse_dev(gs_context_t *ctx, const gs_amg_dcsr_t *A,
                                                double **d_inv, int *singular)
{
  gs_status_t st = GS_SUCCESS;
  char *scratch = NULL;
  double *inv = NULL, *h_piv = NULL, umin = INFINITY, umax = 0.0;
  int32_t h_flag = 0;
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
  /* the one-block path when the matrix fits the block's shared memory */
  int optin = 0;
  cudaFuncAttributes fa;
  GS_CHECK(GS_CUDA(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                          ctx->device)));
  GS_CHECK(GS_CUDA(cudaFuncGetAttributes(&fa, amg_gj_small_kernel)));
  const size_t small = amg_gj_small_bytes(n);
  const int one_block = n <= AMG_GJ_SMALL && small + fa.sharedSizeBytes <= (size_t)optin;
  /* scratch: the pivots (n) and the flag (read back together), then for the multi-block path
   * pidx and perm (n ints each), f (2n) and the work array (n^2) */
  const size_t bp = amg_round((size_t)n * sizeof(double)), bf = amg_round(sizeof(int32_t));
  const size_t bi = amg_round((size_t)n * sizeof(int32_t));
  const size_t b2 = amg_round(2 * (size_t)n * sizeof(double));
  GS_TRY(gs_dmalloc(ctx, (void **)&scratch,
                    bp + bf + (one_block ? 0 : 2 * bi + b2 + nn * sizeof(double)),
                    "AMG coarse Gauss-Jordan scratch"));
  GS_TRY(gs_dmalloc(ctx, (void **)&inv, nn * sizeof(double), "AMG coarse inverse"));
  h_piv = (double *)malloc(bp + sizeof(int32_t));
  if (!h_piv) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory (%d doubles)", n);
  if (one_block) {
    GS_TRY(GS_CUDA(cudaFuncSetAttribute(amg_gj_small_kernel,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)small)));
    amg_gj_small_kernel<<<1, AMG_GJ_SMALL, small, ctx->stream>>>(
        n, A->rp, A->col, A->val, inv, (double *)scratch, (int32_t *)(scratch + bp));
    GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "amg_gj_small_kernel"));
  } else {
    double *pval = (double *)scratch;
    int32_t *flag = (int32_t *)(scratch + bp), *pidx = (int32_t *)(scratch + bp + bf);
    int32_t *perm = (int32_t *)(scratch + bp + bf + bi);
    double *fbuf = (double *)(scratch + bp + bf + 2 * bi);
    double *w = (double *)(scratch + bp + bf + 2 * bi + b2);
    GS_TRY(GS_CUDA(cudaMemsetAsync(w, 0, nn * sizeof(double), ctx->stream)));
    amg_dense_scatter_kernel<<<amg_blocks(n), AMG_THREADS, 0, ctx->stream>>>(n, A->rp, A->col,
                                                                            A->val, w);
    GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "amg_dense_scatter_kernel"));
    amg_gj_first_kernel<<<1, AMG_GJ_THREADS, 0, ctx->stream>>>(n, w, fbuf, pidx, pval, perm,
                                                               flag);
    GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "amg_gj_first_kernel"));
    const unsigned grid = gs_grid_blocks(n, 1);
    for (int k = 0; k < n; ++k)
      GS_TRY(gs_launch_after(amg_gj_step_kernel, grid, AMG_GJ_THREADS, ctx->stream,
                              "amg_gj_step_kernel", n, k, w, fbuf, pidx, pval, perm, flag));
    GS_TRY(gs_launch_after(amg_gj_unscramble_kernel, amg_blocks((int64_t)nn), AMG_THREADS,
                            ctx->stream, "amg_gj_unscramble_kernel", n, (const double *)w,
                            (const int32_t *)perm, inv));
  }
  /* a zero or NaN pivot (the flag), or min |piv| <= n eps max |piv| (an infinite one
   * included): too close to singular to invert */
  GS_TRY(gs_copy_to_host(ctx, h_piv, scratch, bp + sizeof(int32_t))); /* synchronizes */
  memcpy(&h_flag, (char *)h_piv + bp, sizeof h_flag);
  for (int i = 0; i < n && !h_flag; ++i) {
    const double u = fabs(h_piv[i]);
    umin = u < umin ? u : umin;
    umax = u > umax ? u : umax;
  }
  if (h_flag || !(umin > (double)n * DBL_EPSILON * umax)) {
    *singular = 1;
    goto cleanup;
  }
  *d_inv = inv;
  inv = NULL;
cleanup:
  cudaStreamSynchronize(ctx->stream); /* the kernels are done with the buffers */
  free(h_piv);
  gs_dfree(ctx, inv);
  gs_dfree(ctx, scratch);
  return st;
}
