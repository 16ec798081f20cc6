/* examples/solve_mtx.c: the smallest complete use of the library: read A.mtx, solve A x = A*1
 * with CG (or BiCGSTAB) on the csr-vector format, print what happened.
 * Build: part of the CMake build (build/examples/solve_mtx A.mtx), or examples/ on its own
 * against an installed gpusolve (see examples/CMakeLists.txt). */
#include <stdio.h>
#include <stdlib.h>

#include "gpusolve.h"

int main(int argc, char **argv)
{
  if (argc != 2) {
    fprintf(stderr, "usage: solve_mtx A.mtx\n");
    return 2;
  }
  gs_csr_t *H = NULL;
  gs_context_t *ctx = NULL;
  gs_matrix_t *A = NULL;
  gs_spmv_t *S = NULL;
  double *h_v = NULL, *d_b = NULL, *d_x = NULL;
  int rc = 3;
  gs_status_t st;
  if ((st = gs_mm_read_csr(argv[1], &H)) != GS_SUCCESS) {
    fprintf(stderr, "%s\n", gs_last_error()); /* e.g. "A.mtx:12: row index 0 out of range" */
    return 2;
  }
  const size_t n = (size_t)H->m, bytes = n * sizeof(double);
  if ((st = gs_context_create(&ctx, 0)) != GS_SUCCESS ||     /* stream, cuBLAS, cuSPARSE */
      (st = gs_matrix_create(&A, ctx, H)) != GS_SUCCESS ||   /* host copy + device CSR */
      (st = gs_spmv_create(&S, ctx, A, "csr-vector", NULL)) != GS_SUCCESS ||
      (st = gs_dmalloc(ctx, (void **)&d_b, bytes, "b")) != GS_SUCCESS ||
      (st = gs_dmalloc(ctx, (void **)&d_x, bytes, "x")) != GS_SUCCESS)
    goto done;
  h_v = malloc(bytes ? bytes : 1);
  for (size_t i = 0; i < n; ++i) h_v[i] = 1.0;
  if ((st = gs_copy_to_device(ctx, d_x, h_v, bytes)) != GS_SUCCESS ||
      (st = gs_spmv_apply(S, GS_OP_N, 1.0, d_x, 0.0, d_b)) != GS_SUCCESS) /* b = A * 1 */
    goto done;

  gs_solve_opts_t opts;
  gs_solve_opts_default(&opts);
  opts.method = GS_SOLVER_AUTO; /* CG for symmetric matrices with a positive diagonal */
  opts.rtol = 1e-8;
  gs_solve_stats_t stats;
  if ((st = gs_solve(ctx, &opts, S, NULL, d_b, d_x, &stats)) != GS_SUCCESS) goto done;
  printf("%s: %s after %d iterations, ||b - Ax|| / ||b|| = %.2e, %.3f ms\n",
         gs_method_string(stats.method), gs_reason_describe(stats.reason), stats.iterations,
         stats.rel_residual, 1e3 * stats.seconds_total);
  rc = gs_reason_converged(stats.reason) ? 0 : 1;
done:
  if (st != GS_SUCCESS) fprintf(stderr, "%s\n", gs_last_error());
  free(h_v);
  gs_dfree(ctx, d_b);
  gs_dfree(ctx, d_x);
  gs_spmv_destroy(&S);
  gs_matrix_destroy(&A);
  gs_context_destroy(&ctx);
  gs_csr_destroy(&H);
  return rc;
}
