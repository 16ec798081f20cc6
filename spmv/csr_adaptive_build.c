/* spmv/csr_adaptive_build.c: CSR-Adaptive's row blocks and VectorL chunks from row_ptr (one
 * pass, at prepare) and a sequential emulation of the kernels (spmv/csr_adaptive_kernels.cu) on
 * them, the backend's host apply: `gpusolve check` and the host suites run the same split and
 * the same summation order as the GPU. */
#include <stdlib.h>

#include "core/error.h"
#include "spmv/csr_adaptive.h"
#include "spmv/formats.h"

int gs_adapt_stream_group(gs_idx_t rows)
{
  int G = 1;
  while (G < 32 && (int64_t)rows * (2 * G) <= ADAPT_THREADS) G *= 2;
  return G;
}

/* The end of the row block starting at row `start` (< m): the rows that fit the budget and the
 * row cap; a row over the budget alone. At least one row, so every sweep advances. */
static gs_idx_t block_end(const gs_off_t *rp, gs_idx_t m, gs_idx_t start)
{
  gs_idx_t r = start + 1;
  if (rp[start + 1] - rp[start] > ADAPT_NNZ) return r; /* CSR-Vector, or VectorL chunks */
  while (r < m && r - start < ADAPT_ROWS && rp[r + 1] - rp[start] <= ADAPT_NNZ) ++r;
  return r;
}

void gs_adapt_layout_destroy(gs_adapt_layout_t **L)
{
  if (!L || !*L) return;
  free((*L)->blocks);
  free((*L)->chunks);
  free((*L)->longs);
  free(*L);
  *L = NULL;
}

gs_status_t gs_adapt_layout_build(gs_adapt_layout_t **out, const gs_csr_t *A)
{
  gs_status_t st = GS_SUCCESS;
  const gs_off_t *rp = A->row_ptr;
  *out = NULL;
  gs_adapt_layout_t *L = calloc(1, sizeof *L);
  if (!L) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory building csr-adaptive blocks");
  L->m = A->m;
  /* Counts first (64-bit: chunks of a wide matrix), so that every array is allocated once. */
  int64_t nblocks = 0, nchunks = 0, nlong = 0;
  for (gs_idx_t r = 0; r < A->m;) {
    const gs_idx_t start = r;
    r = block_end(rp, A->m, start);
    ++nblocks;
    if (r - start == 1) {
      const gs_off_t len = rp[start + 1] - rp[start];
      if (len > ADAPT_LONG) {
        ++nlong;
        nchunks += (len + ADAPT_LONG - 1) / ADAPT_LONG;
      } else {
        ++L->vector_blocks;
      }
    } else {
      ++L->stream_blocks;
    }
  }
  if (nblocks + nchunks > INT32_MAX)
    GS_FAIL(GS_ERR_UNSUPPORTED,
            "csr-adaptive: %lld row blocks and %lld chunks exceed the grid limit",
            (long long)nblocks, (long long)nchunks);
  L->nblocks = (gs_idx_t)nblocks;
  L->nchunks = (gs_idx_t)nchunks;
  L->nlong = (gs_idx_t)nlong;
  L->blocks = malloc(((size_t)nblocks + 1) * sizeof *L->blocks);
  L->chunks = malloc((2 * (size_t)nchunks + 1) * sizeof *L->chunks);
  L->longs = malloc(2 * ((size_t)nlong + 1) * sizeof *L->longs);
  if (!L->blocks || !L->chunks || !L->longs)
    GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory building csr-adaptive blocks");
  int64_t b = 0, c = 0, k = 0;
  L->blocks[b++] = 0;
  for (gs_idx_t r = 0; r < A->m;) {
    const gs_idx_t start = r;
    r = block_end(rp, A->m, start);
    L->blocks[b++] = r;
    if (r - start == 1 && rp[start + 1] - rp[start] > ADAPT_LONG) {
      L->longs[2 * k] = start;
      L->longs[2 * k + 1] = (gs_idx_t)c;
      ++k;
      for (int64_t p = rp[start]; p < rp[start + 1]; p += ADAPT_LONG) {
        L->chunks[2 * c] = start;
        L->chunks[2 * c + 1] = p;
        ++c;
      }
    }
  }
  L->longs[2 * k] = A->m;
  L->longs[2 * k + 1] = (gs_idx_t)c;
  *out = L;
  L = NULL;
cleanup:
  gs_adapt_layout_destroy(&L);
  return st;
}

/* The butterfly of n lanes (a power of two <= 32): lane 0's value after
 * v[l] += v[l ^ off] for off = n/2 .. 1, as __shfl_xor_sync computes it. */
static double butterfly(double *v, int n)
{
  double old[32];
  for (int off = n / 2; off > 0; off /= 2) {
    for (int l = 0; l < n; ++l) old[l] = v[l];
    for (int l = 0; l < n; ++l) v[l] = old[l] + old[l ^ off];
  }
  return v[0];
}

/* The kernels' block reduction of A's entries [e0, e0 + cnt) times x: thread t sums entries
 * t, t + 2T, ... and t + T, t + 3T, ... in two accumulators, each warp's butterfly, then the
 * warps' sums in order. */
static double block_sum(const gs_csr_t *A, int64_t e0, int64_t cnt, const double *x)
{
  enum { T = ADAPT_THREADS };
  double warp_sum[T / 32], lanes[32];
  for (int w = 0; w < T / 32; ++w) {
    for (int l = 0; l < 32; ++l) {
      const int64_t t = 32 * w + l;
      double s0 = 0.0, s1 = 0.0;
      int64_t p = t;
      for (; p + T < cnt; p += 2 * T) {
        s0 += A->val[e0 + p] * x[A->col[e0 + p]];
        s1 += A->val[e0 + p + T] * x[A->col[e0 + p + T]];
      }
      if (p < cnt) s0 += A->val[e0 + p] * x[A->col[e0 + p]];
      lanes[l] = s0 + s1;
    }
    warp_sum[w] = butterfly(lanes, 32);
  }
  double s = 0.0;
  for (int w = 0; w < T / 32; ++w) s += warp_sum[w];
  return s;
}

void gs_adapt_apply_host(const gs_csr_t *A, const gs_adapt_layout_t *L, double alpha,
                         const double *x, double beta, double *y)
{
  if (alpha == 0.0) { /* the BLAS rule: neither A nor x is read */
    gs_fmt_scale_host(A->m, beta, y);
    return;
  }
  const gs_off_t *rp = A->row_ptr;
  double lanes[32];
  for (gs_idx_t b = 0; b < L->nblocks; ++b) {
    const gs_idx_t r0 = L->blocks[b], r1 = L->blocks[b + 1], nrows = r1 - r0;
    const gs_off_t base = rp[r0], cnt = rp[r1] - base;
    if (nrows == 1) {
      if (cnt > ADAPT_LONG) continue; /* VectorL: the chunks and the fix-up below */
      const double s = block_sum(A, base, cnt, x);
      y[r0] = beta == 0.0 ? alpha * s : alpha * s + beta * y[r0];
      continue;
    }
    /* CSR-Stream: the staged products val * x[col], G lanes per row, each lane a strided
     * sum, then the group's butterfly */
    const int G = gs_adapt_stream_group(nrows);
    for (gs_idx_t r = 0; r < nrows; ++r) {
      const int64_t lo = rp[r0 + r] - base, hi = rp[r0 + r + 1] - base;
      for (int l = 0; l < G; ++l) {
        lanes[l] = 0.0;
        for (int64_t k = lo + l; k < hi; k += G)
          lanes[l] += A->val[base + k] * x[A->col[base + k]];
      }
      const double t = butterfly(lanes, G);
      y[r0 + r] = beta == 0.0 ? alpha * t : alpha * t + beta * y[r0 + r];
    }
  }
  /* VectorL: each chunk's block sum; per long row a warp sums its chunks (lane l takes chunks
   * l, l + 32, ...) and writes y */
  for (gs_idx_t k = 0; k < L->nlong; ++k) {
    const gs_idx_t R = L->longs[2 * k], c0 = L->longs[2 * k + 1], c1 = L->longs[2 * k + 3];
    for (int l = 0; l < 32; ++l) lanes[l] = 0.0;
    for (gs_idx_t c = c0; c < c1; ++c) {
      const int64_t start = L->chunks[2 * c + 1];
      const int64_t end = start + ADAPT_LONG < rp[R + 1] ? start + ADAPT_LONG : rp[R + 1];
      lanes[(c - c0) % 32] += block_sum(A, start, end - start, x);
    }
    const double s = butterfly(lanes, 32);
    y[R] = beta == 0.0 ? alpha * s : alpha * s + beta * y[R];
  }
}
