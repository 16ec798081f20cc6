/* spmv/merge_build.c: the merge-based SpMV's split on the host (spmv/merge.h): the items per
 * thread, the tile count, the merge-path search, and a sequential emulation of the kernels
 * (spmv/merge_kernels.cu) used as the backend's host apply, so that `gpusolve check` and the
 * host suites exercise the same index arithmetic and the same summation order as the GPU. */
#include <limits.h>
#include <stdlib.h>

#include "core/error.h"
#include "spmv/formats.h"
#include "spmv/merge.h"

int gs_merge_ipt(int requested)
{
  if (requested == 0) return MERGE_IPT_DEFAULT;
  return requested == 5 || requested == 7 || requested == 9 || requested == 15 ? requested : -1;
}

int64_t gs_merge_tiles(gs_idx_t m, int64_t nnz, int ipt)
{
  const int64_t total = (int64_t)m + nnz, tile = (int64_t)MERGE_THREADS * ipt;
  return total > 0 ? (total + tile - 1) / tile : 0;
}

gs_idx_t gs_merge_search_host(const gs_csr_t *A, int64_t d)
{
  /* Split points of diagonal d: i in [max(0, d - nnz), min(d, m)]. Row end i comes before
   * entry d - i - 1 on the path (A[i] <= B[d - i - 1]) exactly when the split lies past i. */
  int64_t lo = d > A->nnz ? d - A->nnz : 0, hi = d < A->m ? d : A->m;
  for (int it = 0; it < MERGE_SEARCH_ITERS && lo < hi; ++it) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (A->row_ptr[mid + 1] <= d - mid - 1) lo = mid + 1;
    else hi = mid;
  }
  return (gs_idx_t)lo;
}

/* The kernel's per-thread search inside a tile: split of local diagonal d over the staged row
 * ends s_end[0..nrows) (entry offsets relative to the tile's first entry) and nnz_t entries. */
static int tile_search(const int *s_end, int nrows, int nnz_t, int d)
{
  int lo = d > nnz_t ? d - nnz_t : 0, hi = d < nrows ? d : nrows;
  for (int it = 0; it < MERGE_SEARCH_ITERS && lo < hi; ++it) {
    const int mid = (lo + hi) >> 1;
    if (s_end[mid] <= d - mid - 1) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* The kernel's block scan: inclusive segmented sums of (key, v) over the threads, keys
 * non-decreasing; per warp a Kogge-Stone scan (step o adds lane l - o's value when its key is
 * the same), then each warp adds the scanned aggregate of the warps before it when that ends in
 * its key. Same combinations in the same order as merge_block_scan. */
static void block_scan(const int *key, double *v, int T)
{
  double old[32];
  const int W = T / 32;
  double wval[MERGE_THREADS / 32];
  int wkey[MERGE_THREADS / 32];
  for (int w = 0; w < W; ++w) {
    const int *k = key + 32 * w;
    double *s = v + 32 * w;
    for (int o = 1; o < 32; o <<= 1) {
      for (int l = 0; l < 32; ++l) old[l] = s[l];
      for (int l = o; l < 32; ++l)
        if (k[l - o] == k[l]) s[l] = old[l - o] + old[l];
    }
    wkey[w] = k[31];
    wval[w] = s[31];
  }
  for (int w = 1; w < W; ++w) {
    int pk = wkey[0];
    double pv = wval[0];
    for (int u = 1; u < w; ++u) {
      pv = wkey[u] == pk ? pv + wval[u] : wval[u];
      pk = wkey[u];
    }
    for (int l = 0; l < 32; ++l)
      if (key[32 * w + l] == pk) v[32 * w + l] = pv + v[32 * w + l];
  }
}

gs_status_t gs_merge_apply_host(const gs_csr_t *A, int ipt, double alpha, const double *x,
                                double beta, double *y)
{
  enum { T = MERGE_THREADS };
  if (ipt <= 0 || gs_merge_ipt(ipt) != ipt)
    return GS_ERROR(GS_ERR_INVALID_ARG, "merge: items per thread must be 5, 7, 9 or 15, not %d",
                    ipt);
  if (alpha == 0.0) { /* the BLAS rule: neither A nor x is read */
    gs_fmt_scale_host(A->m, beta, y);
    return GS_SUCCESS;
  }
  const int tile = T * ipt;
  const int64_t total = (int64_t)A->m + A->nnz, ntiles = gs_merge_tiles(A->m, A->nnz, ipt);
  if (ntiles == 0) return GS_SUCCESS; /* 0 x n */
  gs_status_t st = GS_SUCCESS;
  gs_idx_t *tile_row = malloc(((size_t)ntiles + 1) * sizeof *tile_row);
  double *carry = malloc((size_t)ntiles * sizeof *carry);
  double *s_prod = malloc((size_t)tile * sizeof *s_prod);
  int *s_end = malloc(((size_t)tile + 1) * sizeof *s_end);
  double *sums = malloc((size_t)T * ipt * sizeof *sums);
  int key[T], first[T];
  unsigned ends[T];
  double v[T];
  if (!tile_row || !carry || !s_prod || !s_end || !sums) {
    st = GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory emulating merge");
    goto cleanup;
  }
  for (int64_t b = 0; b <= ntiles; ++b) /* merge_tiles_kernel, at prepare */
    tile_row[b] = gs_merge_search_host(A, b * tile < total ? b * tile : total);
  for (int64_t b = 0; b < ntiles; ++b) {
    const gs_idx_t row_start = tile_row[b], row_end = tile_row[b + 1];
    const int64_t d0 = b * tile, d1 = d0 + tile < total ? d0 + tile : total;
    const int64_t nz_start = d0 - row_start, nz_end = d1 - row_end;
    const int nrows = (int)(row_end - row_start), nnz_t = (int)(nz_end - nz_start);
    const int items = nrows + nnz_t;
    /* staging: the products of the tile's entries and its row ends */
    for (int k = 0; k < nnz_t; ++k)
      s_prod[k] = A->val[nz_start + k] * x[A->col[nz_start + k]];
    for (int k = 0; k < nrows; ++k) s_end[k] = (int)(A->row_ptr[row_start + 1 + k] - nz_start);
    s_end[nrows] = INT_MAX; /* the tile's last row never ends inside it */
    /* each thread: its split point, then its items along the path */
    for (int t = 0; t < T; ++t) {
      const int d = t * ipt < items ? t * ipt : items, dend = d + ipt < items ? d + ipt : items;
      int row = tile_search(s_end, nrows, nnz_t, d), nz = d - row;
      double run = 0.0;
      first[t] = row;
      ends[t] = 0;
      for (int k = 0; k < ipt; ++k) {
        sums[t * ipt + k] = 0.0;
        if (d + k >= dend) continue;
        if (nz < s_end[row]) {
          run += s_prod[nz++];
        } else {
          sums[t * ipt + k] = run;
          run = 0.0;
          ends[t] |= 1u << k;
          ++row;
        }
      }
      key[t] = row;
      v[t] = run;
    }
    block_scan(key, v, T);
    /* row sums: a thread's first row adds the carry of the threads before it (v[t - 1], whose
     * key is that row), staged as the kernel does and written per row */
    for (int t = 0; t < T; ++t) {
      const double carry_in = t > 0 ? v[t - 1] : 0.0;
      int r = first[t], head = 1;
      for (int k = 0; k < ipt; ++k) {
        if (!(ends[t] >> k & 1u)) continue;
        double s = sums[t * ipt + k];
        if (head) s = carry_in + s;
        head = 0;
        s_prod[r++] = s;
      }
    }
    for (int r = 0; r < nrows; ++r) {
      const gs_idx_t R = row_start + r;
      y[R] = beta == 0.0 ? alpha * s_prod[r] : alpha * s_prod[r] + beta * y[R];
    }
    carry[b] = v[T - 1]; /* the tile's part of row row_end, continued in later tiles */
  }
  /* merge_fixup_kernel: the first tile b of each run ending in the same row R < m sums the
   * run's carries as a warp does (lane l takes b + l, b + l + 32, ...; then the butterfly) */
  for (int64_t b = 0; b < ntiles; ++b) {
    const gs_idx_t R = tile_row[b + 1];
    if (R >= A->m || (b > 0 && tile_row[b] == R)) continue;
    double lane[32] = {0.0}, old[32];
    for (int64_t base = b, done = 0; base < ntiles && !done; base += 32)
      for (int l = 0; l < 32; ++l) {
        const int64_t i = base + l;
        if (i < ntiles && tile_row[i + 1] == R) lane[l] += carry[i];
        else done = 1;
      }
    for (int o = 16; o > 0; o >>= 1) {
      for (int l = 0; l < 32; ++l) old[l] = lane[l];
      for (int l = 0; l < 32; ++l) lane[l] = old[l] + old[l ^ o];
    }
    if (lane[0] != 0.0) y[R] += alpha * lane[0];
  }
cleanup:
  free(tile_row);
  free(carry);
  free(s_prod);
  free(s_end);
  free(sums);
  return st;
}
