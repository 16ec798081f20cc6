/* bench/bench_matrix.h: the matrix argument the device benchmarks share: "lapN" generates the
 * 27-point Laplacian on an N^3 grid, anything else is a Matrix Market file. */
#ifndef GS_BENCH_MATRIX_H
#define GS_BENCH_MATRIX_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpusolve.h"

static inline gs_status_t bench_matrix(const char *what, gs_csr_t **h)
{
  if (!strncmp(what, "lap", 3) && atoi(what + 3) > 0) {
    const int n = atoi(what + 3);
    return gs_gen_laplace(h, n, n, n, 27);
  }
  return gs_mm_read_csr(what, h);
}

/* A context on GPU 0 and the matrix `what` (bench_matrix): 0, or the program's exit status
 * with the cause on stderr (77: no device, the suites' skip status; 1: the matrix). On failure
 * *ctx may hold a context for the caller's cleanup. */
static inline int bench_open(const char *prog, const char *what, gs_context_t **ctx, gs_csr_t **h)
{
  if (gs_context_create(ctx, 0) != GS_SUCCESS) {
    fprintf(stderr, "%s: no device: %s\n", prog, gs_last_error());
    return 77;
  }
  if (bench_matrix(what, h) != GS_SUCCESS) {
    fprintf(stderr, "%s: %s: %s\n", prog, what, gs_last_error());
    return 1;
  }
  return 0;
}

/* The teardown bench_open's callers share: the timing vectors, the matrix and the context. */
static inline void bench_close(gs_context_t **ctx, gs_csr_t **h, gs_matrix_t **A, double *d_x,
                               double *d_y)
{
  gs_dfree(*ctx, d_x);
  gs_dfree(*ctx, d_y);
  gs_matrix_destroy(A);
  gs_csr_destroy(h);
  gs_context_destroy(ctx);
}

#endif
