/* bench/build_bench.c: each format's prepare (its layout built on the GPU from the shared device
 * CSR, gs_spmv_create_timed) as a number of cusparse-csr products of the same run, first build
 * and median of REPEATS, for issue 33's prepare targets. `spmv --format all` measures one build
 * a format, right after the one before; this separates a format's first build in the process
 * (the memory pool grown to its size) from its later ones (the pool holds the memory).
 *
 *   build_bench [PATH.mtx | lapN] [REPEATS] [FORMAT,FORMAT,...]
 *
 * Default: lap100 (the 27-point Laplacian on a 100^3 grid), 9 repeats, the formats of the
 * issue's targets. The kernels are loaded first (gs_context_preload), as gpusolve does while it
 * reads. REPEATS 0: the first build alone; with BUILD_BENCH_PROFILE set in the environment, no
 * preload and a short reference timing (for a profiler's kernel list). One line a format:
 *   build NAME first_ms=F median_ms=M min_ms=L products_first=PF products_median=PM */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_matrix.h"
#include "gpusolve.h"

static int fail(const char *what)
{
  fprintf(stderr, "build_bench: %s: %s\n", what, gs_last_error());
  return 1;
}

/* d_x[0..n) = 1 */
static gs_status_t ones(gs_context_t *ctx, double *d_x, gs_idx_t n)
{
  double *x = malloc((size_t)(n > 0 ? n : 1) * sizeof *x);
  if (!x) return GS_ERR_HOST_MEMORY;
  for (gs_idx_t i = 0; i < n; ++i) x[i] = 1.0;
  const gs_status_t st = gs_copy_to_device(ctx, d_x, x, (size_t)n * sizeof *x);
  free(x);
  return st;
}

int main(int argc, char **argv)
{
  const char *what = argc > 1 ? argv[1] : "lap100";
  int repeats = argc > 2 ? atoi(argv[2]) : 9;
  const char *list = argc > 3 ? argv[3]
                              : "ell,dia,hyb,sellp,coo,bcoo,cusparse-sell,cusparse-coo,bccoo,csr5,"
                                "csr-vector,csr-adaptive";
  if (repeats < 0) repeats = 0; /* 0: the first build alone (for a profiler) */
  if (repeats > 64) repeats = 64;
  gs_context_t *ctx = NULL;
  gs_csr_t *h = NULL;
  gs_matrix_t *A = NULL;
  gs_spmv_t *S = NULL;
  double *d_x = NULL, *d_y = NULL;
  int rc = 1;
  if ((rc = bench_open("build_bench", what, &ctx, &h)) != 0) goto done;
  rc = 1;
  /* BUILD_BENCH_PROFILE set: no preload and a short reference timing (under a profiler) */
  const int profile = getenv("BUILD_BENCH_PROFILE") != NULL;
  if (!profile && gs_context_preload(ctx, NULL, NULL) != GS_SUCCESS) {
    rc = fail("preload");
    goto done;
  }
  if (gs_matrix_create(&A, ctx, h) != GS_SUCCESS) {
    rc = fail("gs_matrix_create");
    goto done;
  }
  /* the reference product: cusparse-csr, op N, median of the timing helper's runs */
  gs_spmv_timing_t tref;
  gs_spmv_time_opts_t topts;
  gs_spmv_time_opts_default(&topts);
  topts.min_runs = profile ? 1 : 200;
  if (profile) {
    topts.warmup = 1;
    topts.min_seconds = 0.0;
  }
  double prep = 0.0;
  if (gs_spmv_create_timed(&S, ctx, A, "cusparse-csr", NULL, &prep) != GS_SUCCESS ||
      gs_dmalloc(ctx, (void **)&d_x, (size_t)h->n * sizeof *d_x, "x") != GS_SUCCESS ||
      gs_dmalloc(ctx, (void **)&d_y, (size_t)h->m * sizeof *d_y, "y") != GS_SUCCESS ||
      ones(ctx, d_x, h->n) != GS_SUCCESS ||
      gs_spmv_time(S, GS_OP_N, d_x, d_y, &topts, &tref) != GS_SUCCESS) {
    rc = fail("timing cusparse-csr");
    goto done;
  }
  gs_spmv_destroy(&S);
  const double t1 = tref.median_s;
  printf("matrix %s: %d x %d, %lld entries; cusparse-csr product %.2f us (median of %d); %s\n",
         what, (int)h->m, (int)h->n, (long long)h->nnz, 1e6 * t1, tref.runs,
         gs_context_device_name(ctx));
  char names[1024];
  snprintf(names, sizeof names, "%s", list);
  for (char *name = strtok(names, ","); name; name = strtok(NULL, ",")) {
    double t[64];
    int ok = 1;
    for (int r = 0; r <= repeats && ok; ++r) {
      double s = 0.0;
      if (gs_spmv_create_timed(&S, ctx, A, name, NULL, &s) != GS_SUCCESS) {
        printf("build %s refused: %s\n", name, gs_last_error());
        gs_clear_error();
        ok = 0;
      }
      gs_spmv_destroy(&S);
      t[r] = s;
    }
    if (!ok) continue;
    const double first = t[0], med = repeats ? gs_median(t + 1, repeats) : t[0];
    double mn = repeats ? t[1] : t[0];
    for (int r = 2; r <= repeats; ++r)
      if (t[r] < mn) mn = t[r];
    printf("build %-14s first_ms=%.3f median_ms=%.3f min_ms=%.3f products_first=%.2f "
           "products_median=%.2f\n",
           name, 1e3 * first, 1e3 * med, 1e3 * mn, first / t1, med / t1);
  }
  rc = 0;
done:
  gs_spmv_destroy(&S);
  bench_close(&ctx, &h, &A, d_x, d_y);
  return rc;
}
