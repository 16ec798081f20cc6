/* python/bench/overhead_c.c: the C side of python/bench/overhead.py: the steps of one
 * gpusolve.solve(A, b, method, precond, format, rtol) through the C API, timed with the same
 * clock granularity, so that the Python package's overhead is their difference.
 *
 * usage: overhead_c FILE.mtx|lap27:N METHOD PRECOND FORMAT RTOL REPS
 * Reads the matrix (not timed), b = A * 1, creates the context and runs one untimed solve (the
 * libraries' first-use costs), then REPS times: gs_matrix_create, the product (FORMAT or
 * "auto", selected as solve does), the preconditioner, b's upload, gs_solve, x's download, and
 * every destroy. Prints one JSON object: the median and minimum wall seconds of those steps
 * and of gs_solve's own seconds_total, the iterations. Exit 3 without a GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpusolve/io.h"
#include "gpusolve/select.h"
#include "gpusolve/solver.h"
#include "gpusolve/timer.h"

static int cmp(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static gs_status_t one(gs_context_t *ctx, const gs_csr_t *H, const double *h_b, double *h_x,
                       gs_method_t m, const char *pc, const char *format, double rtol,
                       gs_solve_stats_t *st)
{
  gs_matrix_t *A = NULL;
  gs_spmv_t *S = NULL;
  gs_precond_t *M = NULL;
  double *d_b = NULL, *d_x = NULL;
  const size_t bytes_b = (size_t)H->m * sizeof(double), bytes_x = (size_t)H->n * sizeof(double);
  gs_solve_opts_t o;
  gs_solve_opts_default(&o);
  o.method = m;
  o.rtol = rtol;
  gs_status_t rc = gs_matrix_create(&A, ctx, H);
  if (rc == GS_SUCCESS) {
    if (!strcmp(format, "auto")) { /* as gpusolve.solve (and the CLI) select for a solve */
      gs_select_opts_t so;
      gs_select_opts_default(&so);
      so.expected_products = o.maxit * ((m == GS_SOLVER_CG || m == GS_SOLVER_GMRES ||
                                         m == GS_SOLVER_PIPECG) ? 1.0 : 2.0);
      so.staged = 1;
      rc = gs_spmv_create_auto(&S, ctx, A, NULL, &so);
    } else {
      rc = gs_spmv_create(&S, ctx, A, format, NULL);
    }
  }
  if (rc == GS_SUCCESS) rc = gs_context_sync(ctx);
  if (rc == GS_SUCCESS && strcmp(pc, "none") != 0) rc = gs_precond_create_opts(&M, ctx, A, pc, NULL);
  if (rc == GS_SUCCESS) rc = gs_dmalloc(ctx, (void **)&d_b, bytes_b + 8, "b");
  if (rc == GS_SUCCESS) rc = gs_dmalloc(ctx, (void **)&d_x, bytes_x + 8, "x");
  if (rc == GS_SUCCESS) rc = gs_copy_to_device(ctx, d_b, h_b, bytes_b);
  if (rc == GS_SUCCESS) rc = gs_solve(ctx, &o, S, M, d_b, d_x, st);
  if (rc == GS_SUCCESS) rc = gs_copy_to_host(ctx, h_x, d_x, bytes_x);
  gs_dfree(ctx, d_b);
  gs_dfree(ctx, d_x);
  gs_precond_destroy(&M);
  gs_spmv_destroy(&S);
  gs_matrix_destroy(&A);
  return rc;
}

int main(int argc, char **argv)
{
  if (argc != 7) {
    fprintf(stderr, "usage: overhead_c FILE.mtx|lap27:N METHOD PRECOND FORMAT RTOL REPS\n");
    return 2;
  }
  const char *what = argv[1], *pc = argv[3], *format = argv[4];
  const int method = gs_method_find(argv[2]), reps = atoi(argv[6]);
  const double rtol = atof(argv[5]);
  gs_csr_t *H = NULL;
  gs_status_t rc = !strncmp(what, "lap27:", 6)
                       ? gs_gen_laplace(&H, atoi(what + 6), atoi(what + 6), atoi(what + 6), 27)
                       : gs_mm_read_csr(what, &H);
  if (method < 0 || reps < 1 || rc != GS_SUCCESS) {
    fprintf(stderr, "overhead_c: %s\n", rc != GS_SUCCESS ? gs_last_error() : "bad arguments");
    return 2;
  }
  double *h_b = malloc(((size_t)H->m + 1) * sizeof *h_b);
  double *h_x = malloc(((size_t)H->n + 1) * sizeof *h_x);
  double *ones = malloc(((size_t)H->n + 1) * sizeof *ones);
  double *wall = malloc((size_t)reps * sizeof *wall), *gpu = malloc((size_t)reps * sizeof *gpu);
  if (!h_b || !h_x || !ones || !wall || !gpu) return 3;
  for (gs_idx_t i = 0; i < H->n; ++i) ones[i] = 1.0;
  gs_csr_spmv_host(H, GS_OP_N, 1.0, ones, 0.0, h_b);
  gs_context_t *ctx = NULL;
  if (gs_context_create(&ctx, 0) != GS_SUCCESS) {
    fprintf(stderr, "overhead_c: %s\n", gs_last_error());
    return 3;
  }
  gs_solve_stats_t st;
  rc = one(ctx, H, h_b, h_x, (gs_method_t)method, pc, format, rtol, &st); /* warm-up */
  for (int k = 0; k < reps && rc == GS_SUCCESS; ++k) {
    const double t0 = gs_wall_seconds();
    rc = one(ctx, H, h_b, h_x, (gs_method_t)method, pc, format, rtol, &st);
    wall[k] = gs_wall_seconds() - t0;
    gpu[k] = st.seconds_total;
  }
  if (rc != GS_SUCCESS) {
    fprintf(stderr, "overhead_c: %s\n", gs_last_error());
    return 3;
  }
  double wmin = wall[0];
  for (int k = 1; k < reps; ++k) wmin = fmin(wmin, wall[k]);
  qsort(wall, (size_t)reps, sizeof *wall, cmp);
  qsort(gpu, (size_t)reps, sizeof *gpu, cmp);
  printf("{\"wall_median\": %.9g, \"wall_min\": %.9g, \"solve_median\": %.9g, "
         "\"iterations\": %d, \"reason\": \"%s\"}\n",
         wall[reps / 2], wmin, gpu[reps / 2], st.iterations, gs_reason_string(st.reason));
  gs_context_destroy(&ctx);
  gs_csr_destroy(&H);
  free(h_b);
  free(h_x);
  free(ones);
  free(wall);
  free(gpu);
  return 0;
}
