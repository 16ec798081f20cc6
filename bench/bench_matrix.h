/* bench/bench_matrix.h: the matrix argument the device benchmarks share: "lapN" generates the
 * 27-point Laplacian on an N^3 grid, anything else is a Matrix Market file. */
#ifndef GS_BENCH_MATRIX_H
#define GS_BENCH_MATRIX_H

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

#endif
