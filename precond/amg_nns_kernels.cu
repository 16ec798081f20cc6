/* precond/amg_nns_kernels.cu: the device phases of a near-null space of k vectors over nodes of
 * several unknowns (spec: precond/amg_impl.h, NODES, FIT and SMOOTHED P of a general T; host
 * reference: precond/amg_host.c, which these equal bit for bit).
 *
 * Work division (256-thread blocks, grid-stride loops on gs_grid_blocks):
 *   nodes                one thread an unknown (uniform nodes) or a node (node_of from node_ptr)
 *   amalgamated matrix   one thread a node: a merge of its (at most GS_AMG_BLOCK_MAX) sorted
 *                        rows by node column, cursors in local memory; a count pass, a scan of
 *                        the counts, the fill pass on the same merge (squares summed in the
 *                        host's order with __dmul_rn / __dadd_rn, then sqrt)
 *   fit                  the unknowns sorted by aggregate (cub::DeviceRadixSort of agg + 1, a
 *                        stable sort, so each aggregate's unknowns stay in increasing order);
 *                        one thread an aggregate: modified Gram-Schmidt of its |S_J| x k block
 *                        (gathered from B by row), Q into a scratch of n k values at the
 *                        aggregate's offset, R and the kept columns beside; the kept counts
 *                        scanned into cptr; T's rows (one thread an unknown) and Bc's rows (one
 *                        thread an aggregate) copied out of the scratch
 *   smoothed P           A T by our SpGEMM (gs_amg_spgemm_own_dev), then one thread a row merges
 *                        T's row into A T's: P = w_i (A T)(i, c) (+ t_ic)
 * Memory access: row-per-thread and aggregate-per-thread kernels walk their own entries
 * contiguously and gather B by row (uncoalesced across a warp: setup work, done once a level).
 * Scratch is one gs_dmalloc block per function, freed after the stream is idle.
 * Assumptions: square A with sorted rows and nnz <= INT32_MAX, n < 2^31, k <= GS_AMG_NNS_MAX,
 * nodes of at most GS_AMG_BLOCK_MAX unknowns. */
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/error.h"
#include "precond/amg_impl.h"
#include "spmv/common_kernels.h"
#include "spmv/device_util.cuh"

#define NNS_THREADS 256

static unsigned nns_blocks(int64_t items) { return gs_grid_blocks(items, NNS_THREADS); }

/* Size rounded up to 256 bytes: the pieces carved out of one scratch block stay aligned. */
static size_t nns_round(size_t bytes) { return (bytes + 255) & ~(size_t)255; }

/* ---- nodes ---------------------------------------------------------------------------------- */

static __global__ void __launch_bounds__(NNS_THREADS)
nns_uniform_kernel(gs_idx_t nnodes, int K, int32_t *__restrict__ node_ptr,
                   int32_t *__restrict__ node_of)
{
  const int64_t n = (int64_t)nnodes * K;
  GS_GRID_STRIDE(i, n + 1)
  {
    if (i <= nnodes) node_ptr[i] = (int32_t)(i * K);
    if (i < n) node_of[i] = (int32_t)(i / K);
  }
}

static __global__ void __launch_bounds__(NNS_THREADS)
nns_node_of_kernel(gs_idx_t nnodes, const int32_t *__restrict__ node_ptr,
                   int32_t *__restrict__ node_of)
{
  GS_GRID_STRIDE(I, nnodes)
  {
    for (int32_t i = node_ptr[I]; i < node_ptr[I + 1]; ++i) node_of[i] = (int32_t)I;
  }
}

static __global__ void __launch_bounds__(NNS_THREADS)
nns_expand_kernel(gs_idx_t n, const int32_t *__restrict__ node_of,
                  const int32_t *__restrict__ agg_node, int32_t *__restrict__ agg)
{
  GS_GRID_STRIDE(i, n) { agg[i] = agg_node[node_of[i]]; }
}

extern "C" gs_status_t gs_amg_nodes_uniform_dev(gs_context_t *ctx, gs_idx_t nnodes, int K,
                                                int32_t *d_node_ptr, int32_t *d_node_of)
{
  if (!ctx || nnodes < 0 || K < 1 || !d_node_ptr || (int64_t)nnodes * K > INT32_MAX)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_nodes_uniform_dev: bad arguments");
  nns_uniform_kernel<<<nns_blocks((int64_t)nnodes * K + 1), NNS_THREADS, 0, ctx->stream>>>(
      nnodes, K, d_node_ptr, d_node_of);
  return GS_CHECK_LAUNCH(ctx->stream, "nns_uniform_kernel");
}

extern "C" gs_status_t gs_amg_nodes_of_dev(gs_context_t *ctx, gs_idx_t nnodes,
                                           const int32_t *d_node_ptr, int32_t *d_node_of)
{
  if (!ctx || nnodes < 0 || !d_node_ptr)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_nodes_of_dev: bad arguments");
  if (nnodes == 0) return GS_SUCCESS;
  nns_node_of_kernel<<<nns_blocks(nnodes), NNS_THREADS, 0, ctx->stream>>>(nnodes, d_node_ptr,
                                                                          d_node_of);
  return GS_CHECK_LAUNCH(ctx->stream, "nns_node_of_kernel");
}

extern "C" gs_status_t gs_amg_expand_agg_dev(gs_context_t *ctx, gs_idx_t n,
                                             const int32_t *d_node_of,
                                             const int32_t *d_agg_node, int32_t *d_agg)
{
  if (!ctx || n < 0) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_expand_agg_dev: bad arguments");
  if (n == 0) return GS_SUCCESS;
  nns_expand_kernel<<<nns_blocks(n), NNS_THREADS, 0, ctx->stream>>>(n, d_node_of, d_agg_node,
                                                                    d_agg);
  return GS_CHECK_LAUNCH(ctx->stream, "nns_expand_kernel");
}

/* ---- the amalgamated matrix ----------------------------------------------------------------- */

/* Node I's row of Aa: the merge of its rows by node column (the host's order). Count only
 * (FILL false: returns the entries) or write them from acol/aval on. A node of more than
 * GS_AMG_BLOCK_MAX unknowns sets *bad (the count pass checks; the fill pass never meets one). */
template <bool FILL>
static __device__ int32_t nns_amalg_row(int64_t I, const int32_t *__restrict__ node_ptr,
                                        const int32_t *__restrict__ node_of,
                                        const int32_t *__restrict__ rp,
                                        const gs_idx_t *__restrict__ col,
                                        const double *__restrict__ val, gs_idx_t *acol,
                                        double *aval, int32_t *bad)
{
  int32_t cur[GS_AMG_BLOCK_MAX], end[GS_AMG_BLOCK_MAX];
  const int32_t r0 = node_ptr[I], nr = node_ptr[I + 1] - r0;
  if (nr < 0 || nr > GS_AMG_BLOCK_MAX) {
    if (!FILL) atomicMin(bad, (int32_t)I);
    return 0;
  }
  for (int r = 0; r < nr; ++r) {
    cur[r] = rp[r0 + r];
    end[r] = rp[r0 + r + 1];
  }
  int32_t c = 0;
  for (;;) {
    int32_t J = INT32_MAX;
    for (int r = 0; r < nr; ++r)
      if (cur[r] < end[r]) J = min(J, node_of[col[cur[r]]]);
    if (J == INT32_MAX) break;
    double s = 0.0;
    for (int r = 0; r < nr; ++r)
      for (; cur[r] < end[r] && node_of[col[cur[r]]] == J; ++cur[r])
        if (FILL) s = __dadd_rn(s, __dmul_rn(val[cur[r]], val[cur[r]]));
    if (FILL) {
      acol[c] = J;
      aval[c] = sqrt(s);
    }
    ++c;
  }
  return c;
}

static __global__ void __launch_bounds__(NNS_THREADS)
nns_amalg_count_kernel(gs_idx_t nnodes, const int32_t *__restrict__ node_ptr,
                       const int32_t *__restrict__ node_of, const int32_t *__restrict__ rp,
                       const gs_idx_t *__restrict__ col, int32_t *__restrict__ cnt, int32_t *bad)
{
  GS_GRID_STRIDE(I, nnodes + 1)
  {
    cnt[I] = I < nnodes ? nns_amalg_row<false>(I, node_ptr, node_of, rp, col, NULL, NULL, NULL,
                                               bad)
                        : 0;
  }
}

static __global__ void __launch_bounds__(NNS_THREADS)
nns_amalg_fill_kernel(gs_idx_t nnodes, const int32_t *__restrict__ node_ptr,
                      const int32_t *__restrict__ node_of, const int32_t *__restrict__ rp,
                      const gs_idx_t *__restrict__ col, const double *__restrict__ val,
                      const int32_t *__restrict__ arp, gs_idx_t *__restrict__ acol,
                      double *__restrict__ aval)
{
  GS_GRID_STRIDE(I, nnodes)
  {
    nns_amalg_row<true>(I, node_ptr, node_of, rp, col, val, acol + arp[I], aval + arp[I], NULL);
  }
}

extern "C" gs_status_t gs_amg_amalgamate_dev(gs_context_t *ctx, const gs_amg_dcsr_t *A,
                                             gs_idx_t nnodes, const int32_t *d_node_ptr,
                                             const int32_t *d_node_of, gs_amg_dcsr_t *Aa)
{
  gs_status_t st = GS_SUCCESS;
  char *scratch = NULL;
  gs_amg_dcsr_t out;
  memset(&out, 0, sizeof out);
  if (!ctx || !A || !Aa || nnodes < 0 || A->m != A->n || !d_node_ptr ||
      (A->m > 0 && !d_node_of))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_amalgamate_dev: bad arguments");
  memset(Aa, 0, sizeof *Aa);
  out.m = out.n = nnodes;
  GS_TRY(gs_dmalloc(ctx, (void **)&out.rp, ((size_t)nnodes + 1) * sizeof(int32_t),
                    "AMG amalgamated row pointers"));
  {
    size_t temp = 0;
    GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(NULL, temp, (const int32_t *)NULL,
                                                 (int32_t *)NULL, (int64_t)nnodes + 1,
                                                 ctx->stream)));
    const size_t b4 = nns_round(((size_t)nnodes + 1) * 4), bs = nns_round(sizeof(int32_t));
    GS_TRY(gs_dmalloc(ctx, (void **)&scratch, b4 + bs + temp, "AMG amalgamation scratch"));
    int32_t *cnt = (int32_t *)scratch, *bad = (int32_t *)(scratch + b4);
    void *d_temp = scratch + b4 + bs;
    int32_t h_bad = INT32_MAX, h_nnz = 0;
    GS_TRY(gs_copy_to_device(ctx, bad, &h_bad, sizeof h_bad));
    nns_amalg_count_kernel<<<nns_blocks((int64_t)nnodes + 1), NNS_THREADS, 0, ctx->stream>>>(
        nnodes, d_node_ptr, d_node_of, A->rp, A->col, cnt, bad);
    GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "nns_amalg_count_kernel"));
    GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(d_temp, temp, cnt, out.rp, (int64_t)nnodes + 1,
                                                 ctx->stream)));
    GS_TRY(gs_copy_to_host(ctx, &h_bad, bad, sizeof h_bad));
    if (h_bad != INT32_MAX)
      GS_FAIL(GS_ERR_INVALID_ARG, "gs_amg_amalgamate_dev: node %d has more than %d unknowns",
              (int)h_bad, GS_AMG_BLOCK_MAX);
    GS_TRY(gs_copy_to_host(ctx, &h_nnz, out.rp + nnodes, sizeof h_nnz));
    out.nnz = h_nnz;
    GS_TRY(gs_dmalloc(ctx, (void **)&out.col, (size_t)h_nnz * sizeof(gs_idx_t),
                      "AMG amalgamated column indices"));
    GS_TRY(gs_dmalloc(ctx, (void **)&out.val, (size_t)h_nnz * sizeof(double),
                      "AMG amalgamated values"));
    if (nnodes > 0) {
      nns_amalg_fill_kernel<<<nns_blocks(nnodes), NNS_THREADS, 0, ctx->stream>>>(
          nnodes, d_node_ptr, d_node_of, A->rp, A->col, A->val, out.rp, out.col, out.val);
      GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "nns_amalg_fill_kernel"));
    }
  }
  GS_TRY(GS_CUDA(cudaStreamSynchronize(ctx->stream)));
  *Aa = out;
  memset(&out, 0, sizeof out);
cleanup:
  if (st != GS_SUCCESS) cudaStreamSynchronize(ctx->stream);
  gs_dfree(ctx, scratch);
  gs_amg_dcsr_free(ctx, &out);
  return st;
}

/* ---- fit ------------------------------------------------------------------------------------ */

/* key[i] = agg[i] + 1 (isolated unknowns first), idx[i] = i; cnt[agg[i]] counted. */
static __global__ void __launch_bounds__(NNS_THREADS)
nns_fit_keys_kernel(gs_idx_t n, const int32_t *__restrict__ agg, uint32_t *__restrict__ key,
                    int32_t *__restrict__ idx, int32_t *cnt)
{
  GS_GRID_STRIDE(i, n)
  {
    const int32_t a = agg[i];
    key[i] = (uint32_t)(a + 1);
    idx[i] = (int32_t)i;
    if (a >= 0) atomicAdd(&cnt[a], 1);
  }
}

/* pos[list[x]] = x - niso: each unknown's place in the aggregates' concatenated lists. */
static __global__ void __launch_bounds__(NNS_THREADS)
nns_fit_pos_kernel(gs_idx_t n, int32_t niso, const int32_t *__restrict__ sorted,
                   int32_t *__restrict__ pos)
{
  GS_GRID_STRIDE(x, n)
  {
    if (x >= niso) pos[sorted[x]] = (int32_t)(x - niso);
  }
}

/* One aggregate's modified Gram-Schmidt, as amg_host.c's fit_block: q (column-major, leading
 * dimension m) at the aggregate's offset start[J] k, r (k x k row-major), the kept columns as
 * bits of keep[J], their count in kcnt[J]; nnz64 += m k_J (T's entries). */
static __global__ void __launch_bounds__(NNS_THREADS)
nns_fit_kernel(int32_t naggs, int k, gs_idx_t n, const double *__restrict__ B,
               const int32_t *__restrict__ list, const int32_t *__restrict__ start,
               double *__restrict__ qall, double *__restrict__ rall, uint8_t *__restrict__ keep,
               int32_t *__restrict__ kcnt, unsigned long long *nnz64)
{
  GS_GRID_STRIDE(J, naggs)
  {
    const int32_t s0 = start[J], m = start[J + 1] - s0;
    const int32_t *s = list + s0;
    double *q = qall + (size_t)s0 * (size_t)k;
    double *r = rall + (size_t)J * (size_t)(k * k);
    for (int c = 0; c < k * k; ++c) r[c] = 0.0;
    unsigned bits = 0;
    int kept = 0;
    for (int c = 0; c < k; ++c) {
      double *v = q + (size_t)c * (size_t)m;
      double nrm0 = 0.0;
      for (int32_t i = 0; i < m; ++i) {
        const double b = B[(size_t)c * (size_t)n + (size_t)s[i]];
        v[i] = b;
        nrm0 = __dadd_rn(nrm0, __dmul_rn(b, b));
      }
      nrm0 = sqrt(nrm0);
      const double thr = __dmul_rn(GS_AMG_FIT_TOL, nrm0);
      for (int p = 0; p < c; ++p) {
        const double *qp = q + (size_t)p * (size_t)m;
        double dot = 0.0;
        for (int32_t i = 0; i < m; ++i) dot = __dadd_rn(dot, __dmul_rn(v[i], qp[i]));
        for (int32_t i = 0; i < m; ++i) v[i] = __dsub_rn(v[i], __dmul_rn(dot, qp[i]));
        r[p * k + c] = dot;
      }
      double nrm = 0.0;
      for (int32_t i = 0; i < m; ++i) nrm = __dadd_rn(nrm, __dmul_rn(v[i], v[i]));
      nrm = sqrt(nrm);
      if (nrm > thr) {
        for (int32_t i = 0; i < m; ++i) v[i] = __ddiv_rn(v[i], nrm);
        r[c * k + c] = nrm;
        bits |= 1u << c;
        ++kept;
      } else {
        for (int32_t i = 0; i < m; ++i) v[i] = 0.0;
      }
    }
    keep[J] = (uint8_t)bits;
    kcnt[J] = kept;
    if (kept > 0) atomicAdd(nnz64, (unsigned long long)m * (unsigned long long)kept);
  }
}

/* T's row lengths: len[i] = k_J of i's aggregate (0 isolated); len[n] = 0 for the scan. */
static __global__ void __launch_bounds__(NNS_THREADS)
nns_t_len_kernel(gs_idx_t n, const int32_t *__restrict__ agg, const int32_t *__restrict__ kcnt,
                 int32_t *__restrict__ len)
{
  GS_GRID_STRIDE(i, n + 1)
  {
    const int32_t a = i < n ? agg[i] : -1;
    len[i] = a >= 0 ? kcnt[a] : 0;
  }
}

static __global__ void __launch_bounds__(NNS_THREADS)
nns_t_fill_kernel(gs_idx_t n, int k, const int32_t *__restrict__ agg,
                  const int32_t *__restrict__ pos, const int32_t *__restrict__ start,
                  const int32_t *__restrict__ cptr, const uint8_t *__restrict__ keep,
                  const double *__restrict__ qall, const int32_t *__restrict__ trp,
                  gs_idx_t *__restrict__ tcol, double *__restrict__ tval)
{
  GS_GRID_STRIDE(i, n)
  {
    const int32_t J = agg[i];
    if (J < 0) continue;
    const int32_t s0 = start[J], m = start[J + 1] - s0, p = pos[i] - s0;
    const double *q = qall + (size_t)s0 * (size_t)k;
    const unsigned bits = keep[J];
    int32_t w = trp[i], c2 = cptr[J];
    for (int c = 0; c < k; ++c) {
      if (!(bits >> c & 1u)) continue;
      tcol[w] = c2++;
      tval[w++] = q[(size_t)c * (size_t)m + (size_t)p];
    }
  }
}

static __global__ void __launch_bounds__(NNS_THREADS)
nns_bc_fill_kernel(int32_t naggs, int k, int32_t nc, const int32_t *__restrict__ cptr,
                   const uint8_t *__restrict__ keep, const double *__restrict__ rall,
                   double *__restrict__ bc)
{
  GS_GRID_STRIDE(J, naggs)
  {
    const double *r = rall + (size_t)J * (size_t)(k * k);
    const unsigned bits = keep[J];
    int32_t row = cptr[J];
    for (int c = 0; c < k; ++c) {
      if (!(bits >> c & 1u)) continue;
      for (int j = 0; j < k; ++j) bc[(size_t)j * (size_t)nc + (size_t)row] = r[c * k + j];
      ++row;
    }
  }
}

extern "C" gs_status_t gs_amg_fit_dev(gs_context_t *ctx, gs_idx_t n, int k, const double *d_B,
                                      const int32_t *d_agg, int32_t naggs, gs_amg_dcsr_t *T,
                                      double **d_Bc, int32_t *d_cptr, int *kmax)
{
  gs_status_t st = GS_SUCCESS;
  char *scratch = NULL;
  double *bc = NULL;
  gs_amg_dcsr_t out;
  memset(&out, 0, sizeof out);
  if (!ctx || !T || !d_Bc || !d_cptr || !kmax || n < 0 || naggs < 0 || k < 1 ||
      k > GS_AMG_NNS_MAX || (n > 0 && (!d_B || !d_agg)))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_fit_dev: bad arguments");
  memset(T, 0, sizeof *T);
  *d_Bc = NULL;
  *kmax = 0;
  out.m = n;
  GS_TRY(gs_dmalloc(ctx, (void **)&out.rp, ((size_t)n + 1) * sizeof(int32_t),
                    "AMG tentative row pointers"));
  {
    const int64_t na1 = (int64_t)naggs + 1, n1 = (int64_t)n + 1;
    int bits = 1;
    while (bits < 32 && ((uint64_t)naggs >> bits) != 0) ++bits; /* keys 0 .. naggs */
    size_t t_scan_a = 0, t_scan_n = 0, t_sort = 0, t_max = 0;
    GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(NULL, t_scan_a, (const int32_t *)NULL,
                                                 (int32_t *)NULL, na1, ctx->stream)));
    GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(NULL, t_scan_n, (const int32_t *)NULL,
                                                 (int32_t *)NULL, n1, ctx->stream)));
    GS_TRY(GS_CUDA(cub::DeviceRadixSort::SortPairs(NULL, t_sort, (const uint32_t *)NULL,
                                                   (uint32_t *)NULL, (const int32_t *)NULL,
                                                   (int32_t *)NULL, n1, 0, bits, ctx->stream)));
    GS_TRY(GS_CUDA(cub::DeviceReduce::Max(NULL, t_max, (const int32_t *)NULL, (int32_t *)NULL,
                                          na1, ctx->stream)));
    size_t temp = t_scan_a;
    if (t_scan_n > temp) temp = t_scan_n;
    if (t_sort > temp) temp = t_sort;
    if (t_max > temp) temp = t_max;
    /* one block: keys and indices in and out (n each), pos (n), len (n + 1), the counts and
     * starts (naggs + 1 each), kcnt (naggs + 1), keep (naggs), Q (n k), R (naggs k^2), the
     * counters (nnz64, kmax), the cub storage */
    const size_t bn = nns_round((size_t)(n > 0 ? n : 1) * 4), bn1 = nns_round((size_t)n1 * 4);
    const size_t ba = nns_round((size_t)na1 * 4), bk = nns_round((size_t)na1);
    const size_t bq = nns_round((size_t)(n > 0 ? n : 1) * (size_t)k * sizeof(double));
    const size_t br = nns_round((size_t)na1 * (size_t)(k * k) * sizeof(double));
    const size_t bs = nns_round(2 * sizeof(unsigned long long));
    GS_TRY(gs_dmalloc(ctx, (void **)&scratch, 5 * bn + bn1 + 3 * ba + bk + bq + br + bs + temp,
                      "AMG fit scratch"));
    char *p = scratch;
    uint32_t *key = (uint32_t *)p, *key2 = (uint32_t *)(p + bn);
    int32_t *idx = (int32_t *)(p + 2 * bn), *sorted = (int32_t *)(p + 3 * bn);
    int32_t *pos = (int32_t *)(p + 4 * bn);
    p += 5 * bn;
    int32_t *len = (int32_t *)p;
    p += bn1;
    int32_t *cnt = (int32_t *)p, *start = (int32_t *)(p + ba), *kcnt = (int32_t *)(p + 2 * ba);
    p += 3 * ba;
    uint8_t *keep = (uint8_t *)p;
    p += bk;
    double *qall = (double *)p;
    p += bq;
    double *rall = (double *)p;
    p += br;
    unsigned long long *nnz64 = (unsigned long long *)p;
    int32_t *d_kmax = (int32_t *)(p + sizeof(unsigned long long));
    void *d_temp = p + bs;

    GS_TRY(GS_CUDA(cudaMemsetAsync(cnt, 0, (size_t)na1 * 4, ctx->stream)));
    GS_TRY(GS_CUDA(cudaMemsetAsync(kcnt, 0, (size_t)na1 * 4, ctx->stream)));
    GS_TRY(GS_CUDA(cudaMemsetAsync(nnz64, 0, bs, ctx->stream)));
    if (n > 0) {
      nns_fit_keys_kernel<<<nns_blocks(n), NNS_THREADS, 0, ctx->stream>>>(n, d_agg, key, idx,
                                                                          cnt);
      GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "nns_fit_keys_kernel"));
      GS_TRY(GS_CUDA(cub::DeviceRadixSort::SortPairs(d_temp, temp, key, key2, idx, sorted,
                                                     (int64_t)n, 0, bits, ctx->stream)));
    }
    GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(d_temp, temp, cnt, start, na1, ctx->stream)));
    int32_t h_agged = 0;
    GS_TRY(gs_copy_to_host(ctx, &h_agged, start + naggs, sizeof h_agged));
    const int32_t niso = (int32_t)n - h_agged;
    if (n > 0) {
      nns_fit_pos_kernel<<<nns_blocks(n), NNS_THREADS, 0, ctx->stream>>>(n, niso, sorted, pos);
      GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "nns_fit_pos_kernel"));
    }
    if (naggs > 0) {
      nns_fit_kernel<<<nns_blocks(naggs), NNS_THREADS, 0, ctx->stream>>>(
          naggs, k, n, d_B, sorted + niso, start, qall, rall, keep, kcnt, nnz64);
      GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "nns_fit_kernel"));
    }
    GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(d_temp, temp, kcnt, d_cptr, na1, ctx->stream)));
    GS_TRY(GS_CUDA(cub::DeviceReduce::Max(d_temp, temp, kcnt, d_kmax, na1, ctx->stream)));
    unsigned long long h_nnz = 0;
    int32_t h_nc = 0, h_kmax = 0;
    GS_TRY(gs_copy_to_host(ctx, &h_nnz, nnz64, sizeof h_nnz));
    GS_TRY(gs_copy_to_host(ctx, &h_nc, d_cptr + naggs, sizeof h_nc));
    GS_TRY(gs_copy_to_host(ctx, &h_kmax, d_kmax, sizeof h_kmax));
    if (h_nnz > (unsigned long long)INT32_MAX)
      GS_FAIL(GS_ERR_UNSUPPORTED, "AMG tentative prolongator: %llu entries (more than 2^31-1)",
              h_nnz);
    out.n = h_nc;
    out.nnz = (int64_t)h_nnz;
    *kmax = h_kmax;
    nns_t_len_kernel<<<nns_blocks(n1), NNS_THREADS, 0, ctx->stream>>>(n, d_agg, kcnt, len);
    GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "nns_t_len_kernel"));
    GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(d_temp, temp, len, out.rp, n1, ctx->stream)));
    GS_TRY(gs_dmalloc(ctx, (void **)&out.col, (size_t)h_nnz * sizeof(gs_idx_t),
                      "AMG tentative column indices"));
    GS_TRY(gs_dmalloc(ctx, (void **)&out.val, (size_t)h_nnz * sizeof(double),
                      "AMG tentative values"));
    if (n > 0) {
      nns_t_fill_kernel<<<nns_blocks(n), NNS_THREADS, 0, ctx->stream>>>(
          n, k, d_agg, pos, start, d_cptr, keep, qall, out.rp, out.col, out.val);
      GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "nns_t_fill_kernel"));
    }
    if (h_nc > 0) {
      GS_TRY(gs_dmalloc(ctx, (void **)&bc, (size_t)h_nc * (size_t)k * sizeof(double),
                        "AMG coarse near-null space"));
      nns_bc_fill_kernel<<<nns_blocks(naggs), NNS_THREADS, 0, ctx->stream>>>(naggs, k, h_nc,
                                                                             d_cptr, keep, rall,
                                                                             bc);
      GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "nns_bc_fill_kernel"));
    }
  }
  GS_TRY(GS_CUDA(cudaStreamSynchronize(ctx->stream)));
  *T = out;
  memset(&out, 0, sizeof out);
  *d_Bc = bc;
  bc = NULL;
cleanup:
  if (st != GS_SUCCESS) cudaStreamSynchronize(ctx->stream);
  gs_dfree(ctx, scratch);
  gs_dfree(ctx, bc);
  gs_amg_dcsr_free(ctx, &out);
  return st;
}

/* ---- smoothed P of a general T -------------------------------------------------------------- */

/* Row i: P = w_i (A T) (+ t) in place on A T's values; bad[0] = the least row with d_i = 0,
 * bad[1] = the least row whose T entry is missing from A T (a bug: a_ii is stored). */
static __global__ void __launch_bounds__(NNS_THREADS)
nns_tp_kernel(gs_idx_t n, const double *__restrict__ d, double omega,
              const int32_t *__restrict__ trp, const gs_idx_t *__restrict__ tcol,
              const double *__restrict__ tval, const int32_t *__restrict__ prp,
              const gs_idx_t *__restrict__ pcol, double *__restrict__ pval, int32_t *bad)
{
  GS_GRID_STRIDE(i, n)
  {
    const double di = d[i];
    if (di == 0.0) {
      atomicMin(&bad[0], (int32_t)i);
      continue;
    }
    const double w = -omega / di;
    int32_t t = trp[i];
    const int32_t tend = trp[i + 1];
    for (int32_t q = prp[i]; q < prp[i + 1]; ++q) {
      const double prod = __dmul_rn(w, pval[q]);
      double v = prod;
      if (t < tend && tcol[t] == pcol[q]) v = __dadd_rn(tval[t++], prod);
      pval[q] = v;
    }
    if (t != tend) atomicMin(&bad[1], (int32_t)i);
  }
}

extern "C" gs_status_t gs_amg_smooth_tp_dev(gs_context_t *ctx, const gs_amg_dcsr_t *A,
                                            const double *d_diag, const gs_amg_dcsr_t *T,
                                            double omega, gs_amg_dcsr_t *P)
{
  gs_status_t st = GS_SUCCESS;
  int32_t *bad = NULL;
  gs_amg_dcsr_t out;
  memset(&out, 0, sizeof out);
  if (!ctx || !A || !T || !P || A->m != A->n || T->m != A->n || (A->m > 0 && !d_diag))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_smooth_tp_dev: bad arguments");
  memset(P, 0, sizeof *P);
  GS_TRY(gs_amg_spgemm_own_dev(ctx, A, T, &out));
  if (A->m > 0) {
    const int32_t h_init[2] = {INT32_MAX, INT32_MAX};
    int32_t h_bad[2];
    GS_TRY(gs_dmalloc(ctx, (void **)&bad, sizeof h_init, "AMG prolongator flags"));
    GS_TRY(gs_copy_to_device(ctx, bad, h_init, sizeof h_init));
    nns_tp_kernel<<<nns_blocks(A->m), NNS_THREADS, 0, ctx->stream>>>(
        A->m, d_diag, omega, T->rp, T->col, T->val, out.rp, out.col, out.val, bad);
    GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "nns_tp_kernel"));
    GS_TRY(gs_copy_to_host(ctx, h_bad, bad, sizeof h_bad)); /* synchronizes */
    if (h_bad[0] != INT32_MAX)
      GS_FAIL(GS_ERR_INVALID_ARG,
              "AMG smoothed prolongator: row %d has a zero diagonal entry (D^-1 A undefined)",
              (int)h_bad[0] + 1);
    if (h_bad[1] != INT32_MAX)
      GS_FAIL(GS_ERR_INTERNAL, "AMG smoothed prolongator: row %d of T is not in A T's",
              (int)h_bad[1] + 1);
  }
  *P = out;
  memset(&out, 0, sizeof out);
cleanup:
  if (st != GS_SUCCESS) cudaStreamSynchronize(ctx->stream);
  gs_dfree(ctx, bad);
  gs_amg_dcsr_free(ctx, &out);
  return st;
}
