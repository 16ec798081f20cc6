/* bench/bccoo_build_bench.c: wall time of the host layout builder of `bcoo` and `bccoo`
 * (spmv/bccoo_build.c) alone, no GPU needed.
 *
 *   bccoo_build_bench [PATH.mtx | laplace N | pareto N] [REPEATS] [--threads LIST]
 *
 * Default: the 27-point Laplacian on an N^3 grid, N = 100 (26.5M entries). Each layout is built
 * REPEATS times (default 5) for each thread count of LIST (comma-separated, "all" the online
 * cores; default "1,all"), after one untimed build; prints the median and the layout's
 * describe line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpusolve.h"
#include "spmv/bccoo.h"

static int cmp_d(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
  gs_csr_t *A = NULL;
  int repeats = 5;
  const char *list = "1,all";
  int argi = 1;
  gs_status_t st;
  if (argi + 1 < argc && !strcmp(argv[argi], "laplace")) {
    const int n = atoi(argv[argi + 1]);
    st = gs_gen_laplace(&A, n, n, n, 27);
    argi += 2;
  } else if (argi + 1 < argc && !strcmp(argv[argi], "pareto")) {
    st = gs_gen_pareto(&A, atoi(argv[argi + 1]), 1.0, 1);
    argi += 2;
  } else if (argi < argc && strstr(argv[argi], ".mtx")) {
    st = gs_mm_read_csr(argv[argi], &A);
    argi += 1;
  } else {
    st = gs_gen_laplace(&A, 100, 100, 100, 27);
  }
  if (st != GS_SUCCESS) {
    fprintf(stderr, "bccoo_build_bench: %s\n", gs_last_error());
    return 2;
  }
  for (; argi < argc; ++argi) {
    if (!strcmp(argv[argi], "--threads") && argi + 1 < argc) list = argv[++argi];
    else repeats = atoi(argv[argi]) > 0 ? atoi(argv[argi]) : repeats;
  }
  printf("matrix: %d x %d, %lld entries\n", (int)A->m, (int)A->n, (long long)A->nnz);
  char buf[1024];
  strncpy(buf, list, sizeof buf - 1);
  buf[sizeof buf - 1] = '\0';
  double *t = malloc((size_t)repeats * sizeof *t);
  for (char *tok = strtok(buf, ","); tok && t; tok = strtok(NULL, ",")) {
    const int nt = !strcmp(tok, "all") ? 0 : atoi(tok);
    for (int compressed = 0; compressed < 2; ++compressed) {
      gs_bccoo_opts_t o = {0, compressed, 1, 1, nt, 0};
      gs_bccoo_t *L = NULL;
      char desc[512];
      if (gs_bccoo_build(&L, A, &o) != GS_SUCCESS) {
        fprintf(stderr, "bccoo_build_bench: %s\n", gs_last_error());
        return 3;
      }
      gs_bccoo_destroy(&L);
      for (int r = 0; r < repeats; ++r) {
        gs_bccoo_build(&L, A, &o);
        t[r] = L->build_seconds;
        if (r + 1 < repeats) gs_bccoo_destroy(&L);
      }
      qsort(t, (size_t)repeats, sizeof *t, cmp_d);
      gs_bccoo_describe(L, desc, sizeof desc);
      printf("%-5s threads=%-3s median %.3f ms (min %.3f): %s\n", compressed ? "bccoo" : "bcoo",
             tok, t[repeats / 2] * 1e3, t[0] * 1e3, desc);
      gs_bccoo_destroy(&L);
    }
  }
  free(t);
  gs_csr_destroy(&A);
  return 0;
}
