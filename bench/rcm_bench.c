/* bench/rcm_bench.c: reverse Cuthill-McKee on the device (gs_rcm_dev, spmv/rcm_devbuild.cu)
 * against the host's gs_csr_rcm on one matrix: wall times (median of REPEATS device runs after
 * one untimed run; the host once), the kernel's own split (root-search BFS, numbering) and
 * level counts, one cusparse-csr product of the same run for scale (its median over 200 runs,
 * CUDA events), and whether the two orders agree entry for entry.
 *
 *   rcm_bench A.mtx[.gz] [REPEATS]
 *
 * Exits 77 without a device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "core/order.h"
#include "gpusolve.h"
#include "spmv/rcm_devbuild.h"

static double now(void) { return gs_wall_seconds(); }

static int cmp_d(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int fail(const char *what)
{
  fprintf(stderr, "rcm_bench: %s: %s\n", what, gs_last_error());
  return 1;
}

/* Median microseconds of one cusparse-csr product y = A x (200 runs after 20, CUDA events). */
static double product_us(gs_context_t *ctx, gs_matrix_t *A, gs_idx_t n)
{
  gs_spmv_t *S = NULL;
  double *x = NULL, *y = NULL, t[200];
  double us = -1.0;
  cudaEvent_t e0, e1;
  if (gs_spmv_create(&S, ctx, A, "cusparse-csr", NULL) != GS_SUCCESS) return -1.0;
  if (gs_dmalloc(ctx, (void **)&x, (size_t)n * sizeof *x, "x") != GS_SUCCESS ||
      gs_dmalloc(ctx, (void **)&y, (size_t)n * sizeof *y, "y") != GS_SUCCESS)
    goto done;
  cudaMemset(x, 0, (size_t)n * sizeof *x);
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  for (int r = 0; r < 220; ++r) {
    cudaEventRecord(e0, (cudaStream_t)gs_context_stream(ctx));
    gs_spmv_apply(S, GS_OP_N, 1.0, x, 0.0, y);
    cudaEventRecord(e1, (cudaStream_t)gs_context_stream(ctx));
    cudaEventSynchronize(e1);
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, e0, e1);
    if (r >= 20) t[r - 20] = 1e3 * (double)ms;
  }
  qsort(t, 200, sizeof *t, cmp_d);
  us = t[100];
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
done:
  gs_dfree(ctx, x);
  gs_dfree(ctx, y);
  gs_spmv_destroy(&S);
  return us;
}

int main(int argc, char **argv)
{
  if (argc < 2) {
    fprintf(stderr, "usage: rcm_bench A.mtx[.gz] [REPEATS]\n");
    return 2;
  }
  int runs = argc > 2 ? atoi(argv[2]) : 7;
  if (runs < 1) runs = 1;
  if (runs > 64) runs = 64;
  gs_context_t *ctx = NULL;
  gs_csr_t *h = NULL;
  gs_matrix_t *A = NULL;
  gs_idx_t *hp = NULL, *dp = NULL;
  int *d_perm = NULL, rc = 1, ordered = 0;
  double t[64];
  gs_rcm_dev_stats_t stats;

  if (gs_context_create(&ctx, 0) != GS_SUCCESS) {
    fprintf(stderr, "rcm_bench: no device: %s\n", gs_last_error());
    return 77;
  }
  if (gs_mm_read_csr(argv[1], &h) != GS_SUCCESS) {
    rc = fail(argv[1]);
    goto done;
  }
  if (h->m != h->n) {
    fprintf(stderr, "rcm_bench: %s is %d x %d, not square\n", argv[1], h->m, h->n);
    goto done;
  }
  hp = malloc((size_t)h->m * sizeof *hp + 1);
  dp = malloc((size_t)h->m * sizeof *dp + 1);
  if (!hp || !dp) {
    fprintf(stderr, "rcm_bench: out of host memory\n");
    goto done;
  }
  if (gs_matrix_create(&A, ctx, h) != GS_SUCCESS) {
    rc = fail("gs_matrix_create");
    goto done;
  }
  if (gs_dmalloc(ctx, (void **)&d_perm, (size_t)h->m * sizeof(int) + 4, "perm") != GS_SUCCESS) {
    rc = fail("perm");
    goto done;
  }
  printf("matrix %s: %d x %d, %lld entries, stored %s\n", argv[1], h->m, h->n,
         (long long)h->nnz, h->symmetry == GS_SYM_GENERAL ? "general" : "symmetric");
  if (gs_rcm_dev(ctx, A, d_perm, &ordered, &stats) != GS_SUCCESS) {
    rc = fail("gs_rcm_dev");
    goto done;
  }
  for (int r = 0; r < runs; ++r) {
    const double t0 = now();
    if (gs_rcm_dev(ctx, A, d_perm, &ordered, &stats) != GS_SUCCESS) {
      rc = fail("gs_rcm_dev");
      goto done;
    }
    t[r] = 1e3 * (now() - t0);
  }
  qsort(t, (size_t)runs, sizeof *t, cmp_d);
  const double t0 = now();
  if (gs_csr_rcm(h, hp) != GS_SUCCESS) {
    rc = fail("gs_csr_rcm");
    goto done;
  }
  const double host_ms = 1e3 * (now() - t0);
  const double prod = product_us(ctx, A, h->m);
  int same = -1;
  if (ordered) {
    cudaMemcpy(dp, d_perm, (size_t)h->m * sizeof *dp, cudaMemcpyDeviceToHost);
    same = 1;
    for (gs_idx_t k = 0; k < h->m; ++k)
      if (dp[k] != hp[k]) {
        same = 0;
        printf("orders differ at %d: device %d, host %d\n", k, dp[k], hp[k]);
        break;
      }
  }
  printf("device %s: median %.2f ms (min %.2f, %d runs) = %.0f products of %.1f us; kernel: "
         "BFS %.2f ms (%d passes, %d levels), numbering %.2f ms (%d levels, %d with many "
         "children), %d components, %d isolated\n",
         ordered ? "ordered"
                 : stats.declined == 1 ? "declined (components)"
                 : stats.declined == 2 ? "declined (degree)"
                 : stats.declined == 3 ? "declined (directed)" : "declined",
         t[runs / 2], t[0], runs, prod > 0 ? 1e3 * t[runs / 2] / prod : -1.0, prod, stats.bfs_ms,
         stats.bfs_runs, stats.bfs_levels, stats.number_ms, stats.number_levels, stats.big_levels,
         stats.components, stats.isolated);
  printf("host gs_csr_rcm: %.2f ms (%.1fx the device); orders %s\n", host_ms,
         host_ms / t[runs / 2], same == 1 ? "identical" : same == 0 ? "DIFFER" : "not compared");
  rc = same == 0 ? 1 : 0;
done:
  gs_dfree(ctx, d_perm);
  gs_matrix_destroy(&A);
  gs_csr_destroy(&h);
  free(hp);
  free(dp);
  gs_context_destroy(&ctx);
  return rc;
}
