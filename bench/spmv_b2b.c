/* bench/spmv_b2b.c: a product's time measured two ways in one run, for comparisons with the
 * peers' own timers (issue 37): the median of single products, each between two CUDA events and
 * waited for (gs_spmv_time, what `spmv` and the selection report), and the average of K products
 * queued back to back between two events (what the HOLA and CUSP drivers print), median of R
 * such batches. The second hides each product's launch and the idle gap between products.
 *
 *   spmv_b2b [PATH.mtx | lapN] [FORMAT,FORMAT,...] [K] [R]
 *
 * Default: lap100, cusparse-csr,hola,csr-vector,bccoo, K = 100, R = 15. One line a format:
 *   b2b NAME single_us=S b2b_us=B ratio_single=RS ratio_b2b=RB
 * with the ratios against cusparse-csr's time measured the same way (cusparse / NAME). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "bench/bench_matrix.h"
#include "gpusolve.h"

static int fail(const char *what)
{
  fprintf(stderr, "spmv_b2b: %s: %s\n", what, gs_last_error());
  return 1;
}

/* The median of R batches of K back-to-back products, seconds a product. */
static gs_status_t batches(gs_spmv_t *S, cudaStream_t s, const double *d_x, double *d_y, int K,
                           int R, double *out)
{
  cudaEvent_t e0 = NULL, e1 = NULL;
  double t[64];
  gs_status_t st = GS_SUCCESS;
  if (cudaEventCreate(&e0) != cudaSuccess || cudaEventCreate(&e1) != cudaSuccess) {
    st = GS_ERR_CUDA;
    goto done;
  }
  for (int w = 0; w < 10 && st == GS_SUCCESS; ++w)
    st = gs_spmv_apply(S, GS_OP_N, 1.0, d_x, 0.0, d_y);
  for (int r = 0; r < R && st == GS_SUCCESS; ++r) {
    float ms = 0.0f;
    cudaEventRecord(e0, s);
    for (int k = 0; k < K && st == GS_SUCCESS; ++k)
      st = gs_spmv_apply(S, GS_OP_N, 1.0, d_x, 0.0, d_y);
    cudaEventRecord(e1, s);
    if (cudaEventSynchronize(e1) != cudaSuccess || cudaEventElapsedTime(&ms, e0, e1) != cudaSuccess)
      st = GS_ERR_CUDA;
    t[r] = 1e-3 * ms / K;
  }
  if (st == GS_SUCCESS) *out = gs_median(t, R);
done:
  if (e0) cudaEventDestroy(e0);
  if (e1) cudaEventDestroy(e1);
  return st;
}

int main(int argc, char **argv)
{
  const char *what = argc > 1 ? argv[1] : "lap100";
  const char *list = argc > 2 ? argv[2] : "cusparse-csr,hola,csr-vector,bccoo";
  const int K = argc > 3 && atoi(argv[3]) > 0 ? atoi(argv[3]) : 100;
  int R = argc > 4 && atoi(argv[4]) > 0 ? atoi(argv[4]) : 15;
  if (R > 64) R = 64;
  gs_context_t *ctx = NULL;
  gs_csr_t *h = NULL;
  gs_matrix_t *A = NULL;
  double *d_x = NULL, *d_y = NULL, *x = NULL;
  int rc = 1;
  if ((rc = bench_open("spmv_b2b", what, &ctx, &h)) != 0) goto done;
  rc = 1;
  x = malloc((size_t)(h->n > 0 ? h->n : 1) * sizeof *x);
  if (!x) {
    fprintf(stderr, "spmv_b2b: out of host memory\n");
    goto done;
  }
  for (gs_idx_t i = 0; i < h->n; ++i) x[i] = 1.0;
  if (gs_matrix_create(&A, ctx, h) != GS_SUCCESS ||
      gs_dmalloc(ctx, (void **)&d_x, (size_t)h->n * sizeof *d_x, "x") != GS_SUCCESS ||
      gs_dmalloc(ctx, (void **)&d_y, (size_t)h->m * sizeof *d_y, "y") != GS_SUCCESS ||
      gs_copy_to_device(ctx, d_x, x, (size_t)h->n * sizeof *x) != GS_SUCCESS) {
    rc = fail("setup");
    goto done;
  }
  printf("matrix %s: %d x %d, %lld entries; %s; K = %d, R = %d\n", what, (int)h->m, (int)h->n,
         (long long)h->nnz, gs_context_device_name(ctx), K, R);
  double ref_single = 0.0, ref_b2b = 0.0; /* cusparse-csr's */
  for (int pass = 0; pass < 2; ++pass) {  /* cusparse-csr first, as the reference */
    char names[1024];
    snprintf(names, sizeof names, "%s", pass == 0 ? "cusparse-csr" : list);
    for (char *name = strtok(names, ","); name; name = strtok(NULL, ",")) {
      gs_spmv_t *S = NULL;
      gs_spmv_timing_t t1;
      gs_spmv_time_opts_t o;
      gs_spmv_time_opts_default(&o);
      o.min_runs = 200;
      double b = 0.0;
      if (gs_spmv_create(&S, ctx, A, name, NULL) != GS_SUCCESS ||
          gs_spmv_time(S, GS_OP_N, d_x, d_y, &o, &t1) != GS_SUCCESS ||
          batches(S, (cudaStream_t)gs_context_stream(ctx), d_x, d_y, K, R, &b) != GS_SUCCESS) {
        printf("b2b %s refused: %s\n", name, gs_last_error());
        gs_clear_error();
        gs_spmv_destroy(&S);
        continue;
      }
      gs_spmv_destroy(&S);
      if (pass == 0) {
        ref_single = t1.median_s;
        ref_b2b = b;
        continue;
      }
      printf("b2b %-14s single_us=%.2f b2b_us=%.2f ratio_single=%.3f ratio_b2b=%.3f\n", name,
             1e6 * t1.median_s, 1e6 * b, ref_single / t1.median_s, ref_b2b / b);
    }
  }
  rc = 0;
done:
  free(x);
  bench_close(&ctx, &h, &A, d_x, d_y);
  return rc;
}
