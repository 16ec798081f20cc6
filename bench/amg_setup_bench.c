/* bench/amg_setup_bench.c: AMG's setup, phase by phase, cold (the process's first) and warm
 * (gs_precond_setup again on the same matrix: the CUDA libraries' first-call costs paid), against
 * the fine level's product and one V-cycle in the same run.
 *
 *   amg_setup_bench [PATH.mtx | lapN] [RUNS] [OPTIONS]
 *
 * PATH.mtx is read (lapN: the 27-point Laplacian on an N^3 grid). The matrix's shared CSR is
 * uploaded before the first setup, so no setup holds it. Prints the first setup's phases, then
 * the median over RUNS (default 7) warm setups of the whole and of each phase; the median
 * cusparse-csr product y = A x (CUDA events, after warm-up) and the median V-cycle (z = M^-1 r);
 * and the setup in fine-level products (the "25 SpMV-equivalents" measure). The last line
 * is machine-readable:
 *   amg_setup cold_ms=C warm_ms=W spmv_us=S cycle_us=V warm_spmvs=W/S levels=L op_cx=X */
#define _POSIX_C_SOURCE 200809L
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpusolve.h"
#include "spmv/spmv_impl.h"

static int fail(const char *what)
{
  fprintf(stderr, "amg_setup_bench: %s: %s\n", what, gs_last_error());
  return 1;
}

static double phases_total(const gs_precond_info_t *in)
{
  double t = 0;
  for (int k = 0; k < in->phases; ++k) t += in->phase[k].ms;
  return t;
}

/* Median over `runs` of f, timed by CUDA events on ctx's stream, after 3 untimed runs. */
typedef gs_status_t (*op_fn)(void *u);
static double event_median_us(gs_context_t *ctx, op_fn f, void *u, int runs)
{
  double t[320];
  cudaEvent_t e0, e1;
  if (runs > 320) runs = 320;
  if (cudaEventCreate(&e0) != cudaSuccess || cudaEventCreate(&e1) != cudaSuccess) return -1;
  for (int k = 0; k < 3; ++k)
    if (f(u) != GS_SUCCESS) return -1;
  for (int r = 0; r < runs; ++r) {
    float ms = 0;
    cudaEventRecord(e0, ctx->stream);
    if (f(u) != GS_SUCCESS) return -1;
    cudaEventRecord(e1, ctx->stream);
    if (cudaEventSynchronize(e1) != cudaSuccess || cudaEventElapsedTime(&ms, e0, e1) != cudaSuccess)
      return -1;
    t[r] = 1e3 * ms;
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  return gs_median(t, runs);
}

typedef struct {
  gs_spmv_t *S;
  gs_precond_t *M;
  double *x, *y;
} bench_t;
static gs_status_t do_spmv(void *u)
{
  bench_t *b = u;
  return gs_spmv_apply(b->S, GS_OP_N, 1.0, b->x, 0.0, b->y);
}
static gs_status_t do_cycle(void *u)
{
  bench_t *b = u;
  return gs_precond_apply(b->M, b->x, b->y);
}

int main(int argc, char **argv)
{
  const char *what = argc > 1 ? argv[1] : "lap100";
  int runs = argc > 2 ? atoi(argv[2]) : 7;
  const char *opts = argc > 3 ? argv[3] : NULL;
  if (runs < 1) runs = 1;
  if (runs > 64) runs = 64;
  gs_context_t *ctx = NULL;
  gs_csr_t *h = NULL;
  gs_matrix_t *A = NULL;
  bench_t b = {NULL, NULL, NULL, NULL};
  gs_precond_info_t in, cold;
  double setup[64], ph[GS_PRECOND_MAX_PHASES][64];
  int rc = 1;
  if (gs_device_count() < 1) {
    fprintf(stderr, "amg_setup_bench: no CUDA device\n");
    return 77;
  }
  if (gs_context_create(&ctx, 0) != GS_SUCCESS) return fail("context");
  if (!strncmp(what, "lap", 3) && atoi(what + 3) > 0) {
    const int n = atoi(what + 3);
    if (gs_gen_laplace(&h, n, n, n, 27) != GS_SUCCESS) return fail("generate");
  } else if (gs_mm_read_csr(what, &h) != GS_SUCCESS) {
    return fail(what);
  }
  if (gs_matrix_create(&A, ctx, h) != GS_SUCCESS) return fail("matrix");
  gs_dcsr_t dc;
  if (gs_matrix_device_csr(A, &dc) != GS_SUCCESS) return fail("upload");
  if (gs_spmv_create(&b.S, ctx, A, "cusparse-csr", NULL) != GS_SUCCESS) return fail("spmv");
  if (gs_precond_create_opts(&b.M, ctx, A, "amg", opts) != GS_SUCCESS) return fail("amg");
  if (gs_precond_info(b.M, &cold) != GS_SUCCESS) return fail("info");
  for (int r = 0; r < runs; ++r) {
    if (gs_precond_setup(b.M, A) != GS_SUCCESS) return fail("setup");
    if (gs_precond_info(b.M, &in) != GS_SUCCESS) return fail("info");
    setup[r] = 1e3 * gs_precond_setup_seconds(b.M);
    for (int k = 0; k < in.phases; ++k) ph[k][r] = in.phase[k].ms;
  }
  const size_t bytes = (size_t)h->m * sizeof(double);
  if (gs_dmalloc(ctx, (void **)&b.x, bytes, "x") != GS_SUCCESS ||
      gs_dmalloc(ctx, (void **)&b.y, bytes, "y") != GS_SUCCESS)
    return fail("vectors");
  double *hx = malloc(bytes);
  if (!hx) return fail("host memory");
  for (gs_idx_t i = 0; i < h->m; ++i) hx[i] = (double)(i % 7) - 3.0;
  if (gs_copy_to_device(ctx, b.x, hx, bytes) != GS_SUCCESS) return fail("copy");
  free(hx);
  const double spmv_us = event_median_us(ctx, do_spmv, &b, runs * 5);
  const double cycle_us = event_median_us(ctx, do_cycle, &b, runs * 5);
  const double warm = gs_median(setup, runs);
  printf("matrix %s: %d rows, %lld entries; %d levels, operator complexity %.3f\n", what,
         (int)h->m, (long long)h->nnz, in.levels, in.operator_complexity);
  printf("cold setup %.2f ms:", phases_total(&cold));
  for (int k = 0; k < cold.phases; ++k) printf(" %s %.2f", cold.phase[k].name, cold.phase[k].ms);
  printf("\nwarm setup median of %d: %.2f ms:", runs, warm);
  for (int k = 0; k < in.phases; ++k) printf(" %s %.2f", in.phase[k].name, gs_median(ph[k], runs));
  printf("\ncusparse-csr product %.2f us, V-cycle %.2f us (%.2f products); warm setup = %.1f "
         "products\n", spmv_us, cycle_us, cycle_us / spmv_us, 1e3 * warm / spmv_us);
  printf("amg_setup cold_ms=%.3f warm_ms=%.3f spmv_us=%.3f cycle_us=%.3f warm_spmvs=%.2f "
         "levels=%d op_cx=%.4f\n", phases_total(&cold), warm, spmv_us, cycle_us,
         1e3 * warm / spmv_us, in.levels, in.operator_complexity);
  rc = 0;
  gs_dfree(ctx, b.x);
  gs_dfree(ctx, b.y);
  gs_precond_destroy(&b.M);
  gs_spmv_destroy(&b.S);
  gs_matrix_destroy(&A);
  gs_csr_destroy(&h);
  gs_context_destroy(&ctx);
  return rc;
}
