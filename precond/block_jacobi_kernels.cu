/* precond/block_jacobi_kernels.cu: block-Jacobi's batched kernels: every diagonal block inverted
 * in one launch, and z = D_B^-1 r in one launch.
 *
 * Work division: a group of G lanes per block (G = the power of two >= the largest block, 1 ..
 *   32), 32 / G blocks a warp; lane i of a group holds row i of its block. The loops run over
 *   warps, not groups, so that every lane of a warp takes the same trip count and every shuffle
 *   has the full warp (a group past the last block, or lanes past its block's size, shuffle
 *   along and compute nothing).
 * Inversion (gs_bj_factor_launch): each lane gathers the entries of its row that fall inside the
 *   block into its own shared-memory row (duplicates summed in stored order), then into
 *   registers. Gauss-Jordan elimination with partial pivoting, in place: the LU factorization
 *   with the back substitution folded in (Ginkgo's block-Jacobi inverts its blocks the same
 *   way). Each entry carries its magnitude m (precond/block_jacobi.h: the pivot rule). Step k:
 *   the group picks, among the lanes not yet pivoted whose a_k is more than rounding noise, the
 *   one with the largest |a_k| (lowest lane on a tie) by an argmax over shuffles; the pivot lane
 *   scales its row, every other lane eliminates column k with the pivot row (values and
 *   magnitudes) broadcast by shuffles. Rows are never swapped: lane
 *   perm[k] is row k of the permuted inverse, which is written back un-permuted, column-major,
 *   so that the apply reads it unit-stride across the lanes. The pivot rule and the fallback
 *   are precond/block_jacobi.h's, shared with the host reference.
 * Apply (gs_bj_apply_launch): lane i loads r_i of its block, then z_i = sum_j inv(i, j) r_j with
 *   r_j shuffled from lane j. Every lane of a block holds its r_i before any lane passes the
 *   first shuffle, so r and z may be the same vector. Bytes a row: 8 s for the inverse (s its
 *   block's size), 16 for r and z, 12 / s for the block's start and offset.
 * Assumptions: blocks of 1 .. 32 rows, starts in d_bp (nblocks + 1), inverses at d_off[b]. */
#include <stdint.h>

#include "core/error.h"
#include "precond/block_jacobi.h"
#include "spmv/common_kernels.h"
#include "spmv/device_util.cuh"

#define BJ_THREADS 128
#define BJ_FULL 0xffffffffu

/* The blocks of warp w: groups w * (32 / G) + 0 .. 32 / G - 1. */
#define BJ_WARP_LOOP(w, G, nb)                                                                  \
  for (int64_t w = ((int64_t)blockIdx.x * BJ_THREADS + threadIdx.x) >> 5;                       \
       w * (32 / (G)) < (int64_t)(nb); w += ((int64_t)gridDim.x * BJ_THREADS) >> 5)

template <int G, typename RP>
static __global__ void __launch_bounds__(BJ_THREADS)
bj_factor_kernel(gs_idx_t nb, const gs_idx_t *__restrict__ bp, const int64_t *__restrict__ off,
                 const RP *__restrict__ rp, const gs_idx_t *__restrict__ col,
                 const double *__restrict__ val, int fallback, double *__restrict__ inv,
                 unsigned long long *fail)
{
  __shared__ double rows[BJ_THREADS * (G + 1)]; /* one row per lane, padded against conflicts */
  __shared__ unsigned char pivots[BJ_THREADS];   /* G a group: the lane pivoted at each step */
  const int lane = threadIdx.x & 31, gl = lane & (G - 1), grp = lane / G;
  double *myrow = rows + threadIdx.x * (G + 1);
  unsigned char *perm = pivots + (threadIdx.x & ~(G - 1)); /* perm[k]: the pivot of step k */
  BJ_WARP_LOOP(w, G, nb)
  {
    const int64_t b = w * (32 / G) + grp;
    const bool live = b < nb;
    const int64_t r0 = live ? bp[b] : 0;
    const int s = live ? (int)(bp[b + 1] - r0) : 0;
    const bool mine = gl < s; /* this lane holds a row of the block */
    /* gather row r0 + gl restricted to columns r0 .. r0+s-1 */
#pragma unroll
    for (int j = 0; j < G; ++j) myrow[j] = 0.0;
    if (mine)
      for (int64_t e = rp[r0 + gl], end = rp[r0 + gl + 1]; e < end; ++e) {
        const int64_t c = (int64_t)col[e] - r0;
        if (c >= 0 && c < s) myrow[c] += val[e];
      }
    double a[G], m[G]; /* the row and its magnitudes */
    double diag = 0.0;
#pragma unroll
    for (int j = 0; j < G; ++j) {
      a[j] = myrow[j];
      m[j] = fabs(a[j]);
      if (j == gl) diag = a[j];
    }
    int mystep = -1, fail_step = -1;
#pragma unroll
    for (int k = 0; k < G; ++k) {
      /* the pivot: the largest usable |a_k| over the lanes not pivoted yet (-1: none); an
       * unusable one is noise, taken as zero (no update of its row at this step) */
      const bool usable = GS_BJ_PIVOT_OK(fabs(a[k]), m[k], s);
      double v = (mine && mystep < 0 && k < s && usable) ? fabs(a[k]) : -1.0;
      const double f = mystep < 0 && !usable ? 0.0 : a[k];
      int p = gl;
#pragma unroll
      for (int o = G / 2; o > 0; o >>= 1) {
        const double ov = __shfl_xor_sync(BJ_FULL, v, o, G);
        const int op = __shfl_xor_sync(BJ_FULL, p, o, G);
        if (ov > v || (ov == v && op < p)) {
          v = ov;
          p = op;
        }
      }
      if (gl == 0 && k < s) perm[k] = (unsigned char)p;
      if (k < s && fail_step < 0 && v < 0.0) fail_step = k; /* uniform in the group */
      const bool go = k < s && fail_step < 0;
      const double pv = __shfl_sync(BJ_FULL, a[k], p, G); /* every lane shuffles */
      const double d = go ? 1.0 / pv : 0.0;
      if (go && gl == p) { /* the pivot row: a_p <- a_p / a_pk, its column k <- 1 / a_pk */
        mystep = k;
#pragma unroll
        for (int j = 0; j < G; ++j) {
          a[j] = j == k ? d : a[j] * d;
          m[j] *= fabs(d);
        }
      }
#pragma unroll
      for (int j = 0; j < G; ++j) { /* the others: a <- a - f a_p, their column k <- -f d */
        const double apj = __shfl_sync(BJ_FULL, a[j], p, G);
        const double mpj = __shfl_sync(BJ_FULL, m[j], p, G);
        if (go && mine && gl != p) {
          a[j] = j == k ? -f * d : a[j] - f * apj;
          m[j] += fabs(f) * mpj;
        }
      }
    }
    __syncwarp(); /* perm written */
    /* a zero diagonal entry in the group (for the fallback), before any branch on the block */
    const unsigned zeros = __ballot_sync(BJ_FULL, mine && diag == 0.0);
    const unsigned gz = (zeros >> (grp * G % 32)) & (G == 32 ? BJ_FULL : (1u << (G % 32)) - 1u);
    if (live) {
      double *blk = inv + off[b];
      if (fail_step < 0) {
        if (mine) /* this lane is row mystep of the inverse, its column j is column perm[j] */
#pragma unroll
          for (int j = 0; j < G; ++j)
            if (j < s) blk[(int64_t)perm[j] * s + mystep] = a[j];
      } else if (fallback && gz == 0) {
        if (mine)
          for (int j = 0; j < s; ++j) blk[(int64_t)j * s + gl] = j == gl ? 1.0 / diag : 0.0;
        if (gl == 0) atomicAdd(fail + 1, 1ull);
      } else if (gl == 0) {
        const int code = fallback ? 32 + __ffs(gz) - 1 : fail_step;
        atomicMin(fail, (unsigned long long)b * 64ull + (unsigned long long)code);
      }
    }
    __syncwarp(); /* perm read before the next block writes it */
  }
}

template <int G>
static __global__ void __launch_bounds__(BJ_THREADS)
bj_apply_kernel(gs_idx_t nb, const gs_idx_t *__restrict__ bp, const int64_t *__restrict__ off,
                const double *__restrict__ inv, const double *r, double *z)
{
  const int lane = threadIdx.x & 31, gl = lane & (G - 1), grp = lane / G;
  BJ_WARP_LOOP(w, G, nb)
  {
    const int64_t b = w * (32 / G) + grp;
    const bool live = b < nb;
    const int64_t r0 = live ? bp[b] : 0;
    const int s = live ? (int)(bp[b + 1] - r0) : 0;
    const bool mine = gl < s;
    const double rv = mine ? r[r0 + gl] : 0.0;
    const double *blk = live ? inv + off[b] : inv;
    double acc = 0.0;
#pragma unroll
    for (int j = 0; j < G; ++j) {
      const double rj = __shfl_sync(BJ_FULL, rv, j, G);
      if (mine && j < s) acc = fma(blk[(int64_t)j * s + gl], rj, acc);
    }
    if (mine) z[r0 + gl] = acc;
  }
}

extern "C" int gs_bj_group_width(int max_size)
{
  int g = 1;
  while (g < max_size && g < 32) g <<= 1;
  return g;
}

/* Blocks of BJ_THREADS threads for nb blocks in groups of G lanes. */
static unsigned bj_grid(gs_idx_t nb, int G)
{
  const int64_t warps = ((int64_t)nb + 32 / G - 1) / (32 / G);
  return gs_grid_blocks(warps * 32, BJ_THREADS);
}

template <int G, typename RP>
static gs_status_t factor_g(cudaStream_t s, gs_idx_t nb, const gs_idx_t *bp, const int64_t *off,
                            const RP *rp, const gs_idx_t *col, const double *val, int fallback,
                            double *inv, unsigned long long *fail)
{
  bj_factor_kernel<G, RP><<<bj_grid(nb, G), BJ_THREADS, 0, s>>>(nb, bp, off, rp, col, val,
                                                                 fallback, inv, fail);
  return GS_CHECK_LAUNCH(s, "bj_factor_kernel");
}

template <typename RP>
static gs_status_t factor_rp(cudaStream_t s, gs_idx_t nb, int G, const gs_idx_t *bp,
                             const int64_t *off, const RP *rp, const gs_idx_t *col,
                             const double *val, int fallback, double *inv,
                             unsigned long long *fail)
{
  switch (G) {
  case 1: return factor_g<1>(s, nb, bp, off, rp, col, val, fallback, inv, fail);
  case 2: return factor_g<2>(s, nb, bp, off, rp, col, val, fallback, inv, fail);
  case 4: return factor_g<4>(s, nb, bp, off, rp, col, val, fallback, inv, fail);
  case 8: return factor_g<8>(s, nb, bp, off, rp, col, val, fallback, inv, fail);
  case 16: return factor_g<16>(s, nb, bp, off, rp, col, val, fallback, inv, fail);
  default: return factor_g<32>(s, nb, bp, off, rp, col, val, fallback, inv, fail);
  }
}

extern "C" gs_status_t gs_bj_factor_launch(cudaStream_t stream, gs_idx_t nblocks, int max_size,
                                           const gs_idx_t *d_bp, const int64_t *d_off,
                                           const int32_t *d_rp32, const int64_t *d_rp64,
                                           const gs_idx_t *d_col, const double *d_val,
                                           int fallback, double *d_inv,
                                           unsigned long long *d_fail)
{
  if (max_size < 1 || max_size > GS_BJ_MAX_BLOCK)
    return GS_ERROR(GS_ERR_INTERNAL, "gs_bj_factor_launch: blocks of %d rows", max_size);
  if (nblocks <= 0) return GS_SUCCESS;
  const int G = gs_bj_group_width(max_size);
  if (d_rp64)
    return factor_rp<int64_t>(stream, nblocks, G, d_bp, d_off, d_rp64, d_col, d_val, fallback,
                              d_inv, d_fail);
  return factor_rp<int32_t>(stream, nblocks, G, d_bp, d_off, d_rp32, d_col, d_val, fallback,
                            d_inv, d_fail);
}

template <int G>
static gs_status_t apply_g(cudaStream_t s, gs_idx_t nb, const gs_idx_t *bp, const int64_t *off,
                           const double *inv, const double *r, double *z)
{
  bj_apply_kernel<G><<<bj_grid(nb, G), BJ_THREADS, 0, s>>>(nb, bp, off, inv, r, z);
  return GS_CHECK_LAUNCH(s, "bj_apply_kernel");
}

extern "C" gs_status_t gs_bj_apply_launch(cudaStream_t stream, gs_idx_t nblocks, int max_size,
                                          const gs_idx_t *d_bp, const int64_t *d_off,
                                          const double *d_inv, const double *d_r, double *d_z)
{
  if (nblocks <= 0) return GS_SUCCESS;
  switch (gs_bj_group_width(max_size)) {
  case 1: return apply_g<1>(stream, nblocks, d_bp, d_off, d_inv, d_r, d_z);
  case 2: return apply_g<2>(stream, nblocks, d_bp, d_off, d_inv, d_r, d_z);
  case 4: return apply_g<4>(stream, nblocks, d_bp, d_off, d_inv, d_r, d_z);
  case 8: return apply_g<8>(stream, nblocks, d_bp, d_off, d_inv, d_r, d_z);
  case 16: return apply_g<16>(stream, nblocks, d_bp, d_off, d_inv, d_r, d_z);
  default: return apply_g<32>(stream, nblocks, d_bp, d_off, d_inv, d_r, d_z);
  }
}
