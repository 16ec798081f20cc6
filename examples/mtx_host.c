/* examples/mtx_host.c: the host side of the library, no GPU needed: read A.mtx, print its
 * features and the sum of A * 1 computed by the host reference product. CI runs it against the
 * installed library to check that a program outside this tree builds, links and runs.
 * Build: part of the CMake build (build/examples/mtx_host A.mtx), or examples/ on its own
 * against an installed gpusolve (see examples/CMakeLists.txt). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpusolve.h"

int main(int argc, char **argv)
{
  if (argc != 2) {
    fprintf(stderr, "usage: mtx_host A.mtx\n");
    return 2;
  }
  /* the library linked at run time should be the one the headers describe */
  if (strcmp(gs_version(), GS_VERSION_STRING) != 0) {
    fprintf(stderr, "mtx_host: headers %s, library %s\n", GS_VERSION_STRING, gs_version());
    return 1;
  }
  printf("gpusolve %s\n", gs_version());

  gs_csr_t *A = NULL;
  if (gs_mm_read_csr(argv[1], &A) != GS_SUCCESS) {
    fprintf(stderr, "%s\n", gs_last_error()); /* e.g. "A.mtx:12: row index 0 out of range" */
    return 2;
  }
  gs_features_t f;
  gs_val_t *x = malloc(((size_t)A->n + 1) * sizeof *x), *y = malloc(((size_t)A->m + 1) * sizeof *y);
  int rc = 1;
  if (!x || !y || gs_csr_features(A, &f) != GS_SUCCESS) goto done;
  for (size_t j = 0; j < (size_t)A->n; ++j) x[j] = 1.0;
  if (gs_csr_spmv_host(A, GS_OP_N, 1.0, x, 0.0, y) != GS_SUCCESS) goto done;
  double sum = 0.0;
  for (size_t i = 0; i < (size_t)A->m; ++i) sum += y[i];
  printf("%lld x %lld, %lld nonzeros, %s, sum(A*1) = %.17g\n", (long long)f.rows,
         (long long)f.cols, (long long)f.nnz,
         f.numerically_symmetric ? "symmetric" : "not symmetric", sum);
  rc = 0;
done:
  if (rc != 0) fprintf(stderr, "mtx_host: %s\n", gs_last_error()[0] ? gs_last_error() : "out of memory");
  free(x);
  free(y);
  gs_csr_destroy(&A);
  return rc;
}
