/* bench/upload_bench.c: speed of the shared device CSR's upload (gs_matrix_device_csr: row
 * pointers narrowed to 32 bits, columns, values), against the link's rate in the same run.
 *
 *   upload_bench [PATH.mtx | lapN] [RUNS]
 *
 * PATH.mtx is read; lapN (default lap100) generates the 27-point Laplacian on an N^3 grid
 * (lap100: 26.5M entries, 318 MB uploaded, the issue 33 case). Each run creates a fresh
 * gs_matrix_t on one context (outside the timing), times gs_matrix_device_csr by the wall clock
 * up to a stream synchronisation, and destroys it. The first run is printed apart: it also pins
 * the context's staging buffer (kept for later uploads). Then, for reference, a plain
 * cudaMemcpy of the same bytes from the host arrays (pageable: the old path's rate) and from a
 * pinned buffer (the link's rate). Median of RUNS (default 7). The last line is
 * machine-readable:
 *   upload bytes=B first_gbs=R median_gbs=R pageable_gbs=R pinned_gbs=R fraction=F */
#define _POSIX_C_SOURCE 200809L
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench_matrix.h"
#include "gpusolve.h"
#include "spmv/spmv_impl.h"

static double now(void) { return gs_wall_seconds(); }

static double median(double *t, int n) { return gs_median(t, n); }

static int fail(const char *what)
{
  fprintf(stderr, "upload_bench: %s: %s\n", what, gs_last_error());
  return 1;
}

/* Seconds of one synchronous cudaMemcpy of `bytes` from src to dst (after one untimed copy). */
static double copy_seconds(void *dst, const void *src, size_t bytes, int runs)
{
  double t[64];
  if (runs > 64) runs = 64;
  if (cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice) != cudaSuccess) return -1.0;
  for (int r = 0; r < runs; ++r) {
    const double t0 = now();
    if (cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice) != cudaSuccess) return -1.0;
    t[r] = now() - t0;
  }
  return median(t, runs);
}

int main(int argc, char **argv)
{
  const char *what = argc > 1 ? argv[1] : "lap100";
  int runs = argc > 2 ? atoi(argv[2]) : 7;
  if (runs < 1) runs = 1;
  if (runs > 64) runs = 64;
  gs_context_t *ctx = NULL;
  gs_csr_t *h = NULL;
  int rc = 1;
  void *d = NULL, *pinned = NULL;
  double t[64];

  if ((rc = bench_open("upload_bench", what, &ctx, &h)) != 0) goto done;
  rc = 1;
  const size_t rp_bytes = ((size_t)h->m + 1) * (h->nnz > INT32_MAX ? 8 : 4);
  const size_t bytes = rp_bytes + (size_t)h->nnz * (sizeof(gs_idx_t) + sizeof(gs_val_t));
  printf("matrix %s: %d x %d, %lld entries, %.1f MB to upload\n", what, (int)h->m, (int)h->n,
         (long long)h->nnz, 1e-6 * (double)bytes);

  double first = 0.0;
  for (int r = 0; r <= runs; ++r) { /* run 0: the first upload of the context */
    gs_matrix_t *A = NULL;
    gs_dcsr_t dcsr;
    if (gs_matrix_create(&A, ctx, h) != GS_SUCCESS) {
      rc = fail("gs_matrix_create");
      goto done;
    }
    const double t0 = now();
    if (gs_matrix_device_csr(A, &dcsr) != GS_SUCCESS || gs_context_sync(ctx) != GS_SUCCESS) {
      gs_matrix_destroy(&A);
      rc = fail("gs_matrix_device_csr");
      goto done;
    }
    const double s = now() - t0;
    gs_matrix_destroy(&A);
    if (r == 0)
      first = s;
    else
      t[r - 1] = s;
  }
  const double med = median(t, runs);
  printf("gs_matrix_device_csr  first %8.2f ms  %6.2f GB/s   median of %d %8.2f ms  %6.2f GB/s\n",
         1e3 * first, 1e-9 * (double)bytes / first, runs, 1e3 * med, 1e-9 * (double)bytes / med);

  /* references: the values array alone (the bulk), pageable and pinned */
  const size_t ref = (size_t)h->nnz * sizeof(gs_val_t);
  double pageable = -1.0, link = -1.0;
  if (ref > 0 && cudaMalloc(&d, ref) == cudaSuccess) {
    pageable = copy_seconds(d, h->val, ref, runs);
    if (cudaHostAlloc(&pinned, ref, cudaHostAllocDefault) == cudaSuccess) {
      memcpy(pinned, h->val, ref);
      link = copy_seconds(d, pinned, ref, runs);
    }
  }
  const double pg = pageable > 0 ? 1e-9 * (double)ref / pageable : 0.0;
  const double pn = link > 0 ? 1e-9 * (double)ref / link : 0.0;
  printf("cudaMemcpy of the values (%.1f MB): pageable %6.2f GB/s, pinned %6.2f GB/s\n",
         1e-6 * (double)ref, pg, pn);
  printf("upload bytes=%zu first_gbs=%.3f median_gbs=%.3f pageable_gbs=%.3f pinned_gbs=%.3f "
         "fraction=%.3f\n",
         bytes, 1e-9 * (double)bytes / first, 1e-9 * (double)bytes / med, pg, pn,
         pn > 0 ? 1e-9 * (double)bytes / med / pn : 0.0);
  rc = 0;
done:
  if (pinned) cudaFreeHost(pinned);
  if (d) cudaFree(d);
  gs_csr_destroy(&h);
  gs_context_destroy(&ctx);
  return rc;
}
