/* bench/persist_bench.c: time per iteration of CG and BiCGSTAB with the kernel-by-kernel loop
 * (CUDA Graphs) and with persistent iterations (opts.persistent), for issue 14's small-system
 * targets (CG <= 15 us, BiCGSTAB <= 25 us an iteration on bcsstk16, cage10, nos7), and of the
 * persistent grid's blocks a multiprocessor (the GS_PERSIST_PER_SM rule, 4) against 2 and 8.
 *
 * usage: persist_bench [--repeat R] [--maxit N] [--marginal K] A.mtx ...
 * b = A * 1, rtol 1e-8, maxit 1000 by default (so that a slow system costs at most that), csr-
 * vector for the loop. Each configuration solves R times (default 7) after one warm-up solve;
 * the figures are solve seconds (CUDA events, stats.seconds_total) / iterations, min and median,
 * and the marginal iteration (see run(); K = 20 by default, 0: not measured).
 * Both methods run on every matrix (CG on a nonsymmetric one stops on a breakdown or at maxit:
 * its time an iteration is still what issue 14 asks for); the preconditioner is none and jacobi. Needs a GPU (exit 77 without one). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/testhooks.h"
#include "gpusolve/io.h"
#include "gpusolve/precond.h"
#include "gpusolve/solver.h"
#include "gpusolve/spmv.h"

#define GS_PER_SM 4 /* GS_PERSIST_PER_SM of solvers/solver_impl.h, for the labels */

static int cmp_double(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* R timed solves (after a warm-up) with options o: the seconds of each in t (sorted), the last
 * stats in *st. */
static int solves(gs_context_t *ctx, gs_spmv_t *S, gs_precond_t *M, const double *d_b,
                  double *d_x, const gs_solve_opts_t *o, int repeat, double *t,
                  gs_solve_stats_t *st)
{
  for (int r = -1; r < repeat; ++r) {
    if (gs_solve(ctx, o, S, M, d_b, d_x, st) != GS_SUCCESS) return 1;
    if (r >= 0) t[r] = st->seconds_total;
  }
  qsort(t, (size_t)repeat, sizeof *t, cmp_double);
  return 0;
}

/* One configuration. The whole solve: R timed solves to rtol 1e-8, min and median of
 * seconds / iterations (the start and the end of the solve included: on a solve of few
 * iterations they weigh). The marginal iteration: rtol 0 with maxit K and 2K, the medians'
 * difference over the iterations' difference (start and end cancel; "-" when a breakdown
 * stopped the longer solve before K more iterations). */
static int run(gs_context_t *ctx, gs_spmv_t *S, gs_precond_t *M, const double *d_b, double *d_x,
               gs_method_t m, int persistent, int per_sm, int repeat, int maxit, int marg,
               const char *name, const char *pc)
{
  gs_solve_opts_t o;
  gs_solve_opts_default(&o);
  o.method = m;
  o.maxit = maxit;
  o.persistent = persistent;
  gs_test_persist_per_sm(ctx, per_sm);
  double *t = calloc((size_t)repeat, sizeof *t), *t2 = calloc((size_t)repeat, sizeof *t2);
  gs_solve_stats_t st, s1, s2;
  int bad = !t || !t2 || solves(ctx, S, M, d_b, d_x, &o, repeat, t, &st);
  const int its = st.iterations;
  double marginal = NAN;
  if (!bad && marg > 0) {
    const double t_min = t[0] / (its > 0 ? its : 1), t_med = t[repeat / 2] / (its > 0 ? its : 1);
    o.rtol = 0.0;
    o.maxit = marg;
    bad = solves(ctx, S, M, d_b, d_x, &o, repeat, t, &s1);
    o.maxit = 2 * marg;
    if (!bad) bad = solves(ctx, S, M, d_b, d_x, &o, repeat, t2, &s2);
    if (!bad && s2.iterations > s1.iterations)
      marginal = 1e6 * (t2[repeat / 2] - t[repeat / 2]) / (s2.iterations - s1.iterations);
    t[0] = t_min * its;
    t[repeat / 2] = t_med * its;
  }
  gs_test_persist_per_sm(ctx, 0);
  if (bad) {
    fprintf(stderr, "persist_bench: %s %s: %s\n", name, gs_method_string(m), gs_last_error());
    free(t);
    free(t2);
    return 1;
  }
  char cfg[32];
  if (persistent) snprintf(cfg, sizeof cfg, "persistent %d/SM", per_sm ? per_sm : GS_PER_SM);
  else snprintf(cfg, sizeof cfg, "loop (graphs)");
  const double d = its > 0 ? its : 1;
  printf("%-14s %-8s %-6s %-17s %5d its  %8.2f us min  %8.2f us median  %8.2f us marginal  %s\n",
         name, gs_method_string(m), pc, cfg, its, 1e6 * t[0] / d, 1e6 * t[repeat / 2] / d,
         marginal, gs_reason_string(st.reason));
  free(t);
  free(t2);
  return 0;
}

int main(int argc, char **argv)
{
  int repeat = 7, maxit = 1000, marg = 20, rc = 0;
  gs_context_t *ctx = NULL;
  if (gs_context_create(&ctx, 0) != GS_SUCCESS) {
    fprintf(stderr, "persist_bench: %s\n", gs_last_error());
    return 77;
  }
  for (int a = 1; a < argc; ++a) {
    if (!strcmp(argv[a], "--repeat") && a + 1 < argc) {
      repeat = atoi(argv[++a]);
      if (repeat < 1) repeat = 1;
      continue;
    }
    if (!strcmp(argv[a], "--maxit") && a + 1 < argc) {
      maxit = atoi(argv[++a]);
      continue;
    }
    if (!strcmp(argv[a], "--marginal") && a + 1 < argc) {
      marg = atoi(argv[++a]);
      continue;
    }
    gs_csr_t *H = NULL;
    gs_matrix_t *A = NULL;
    gs_spmv_t *S = NULL;
    double *h = NULL, *hb = NULL, *d_b = NULL, *d_x = NULL;
    const char *base = strrchr(argv[a], '/') ? strrchr(argv[a], '/') + 1 : argv[a];
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)(strcspn(base, ".")), base);
    if (gs_mm_read_csr(argv[a], &H) != GS_SUCCESS || H->m != H->n) {
      fprintf(stderr, "persist_bench: %s: %s\n", argv[a], H ? "not square" : gs_last_error());
      gs_csr_destroy(&H);
      rc = 1;
      continue;
    }
    const size_t bytes = (size_t)H->n * sizeof(double);
    h = malloc(bytes);
    hb = malloc(bytes);
    for (gs_idx_t i = 0; h && i < H->n; ++i) h[i] = 1.0;
    if (!h || !hb || gs_csr_spmv_host(H, GS_OP_N, 1.0, h, 0.0, hb) != GS_SUCCESS ||
        gs_matrix_create(&A, ctx, H) != GS_SUCCESS ||
        gs_spmv_create(&S, ctx, A, "csr-vector", NULL) != GS_SUCCESS ||
        gs_dmalloc(ctx, (void **)&d_b, bytes, "b") != GS_SUCCESS ||
        gs_dmalloc(ctx, (void **)&d_x, bytes, "x") != GS_SUCCESS ||
        gs_copy_to_device(ctx, d_b, hb, bytes) != GS_SUCCESS) {
      fprintf(stderr, "persist_bench: %s: %s\n", name, gs_last_error());
      rc = 1;
    } else {
      printf("# %s: n %d, %lld entries%s\n", name, (int)H->n, (long long)H->nnz,
             gs_matrix_features(A)->numerically_symmetric
                 ? ""
                 : ", nonsymmetric (CG's time an iteration only)");
      static const char *const pcs[] = {"none", "jacobi"};
      for (int p = 0; p < 2; ++p) {
        gs_precond_t *M = NULL;
        if (p && gs_precond_create(&M, ctx, A, pcs[p]) != GS_SUCCESS) {
          printf("%-14s jacobi: %s\n", name, gs_last_error());
          continue;
        }
        for (int k = 0; k < 2; ++k) {
          const gs_method_t m = k ? GS_SOLVER_BICGSTAB : GS_SOLVER_CG;
          rc |= run(ctx, S, M, d_b, d_x, m, 0, 0, repeat, maxit, marg, name, pcs[p]);
          static const int per_sm[] = {0, 2, 8};
          for (int j = 0; j < 3; ++j)
            if (p == 0 || j == 0)
              rc |= run(ctx, S, M, d_b, d_x, m, GS_PERSISTENT_ON, per_sm[j], repeat, maxit,
                        j == 0 ? marg : 0, name, pcs[p]);
        }
        gs_precond_destroy(&M);
      }
    }
    gs_dfree(ctx, d_b);
    gs_dfree(ctx, d_x);
    gs_spmv_destroy(&S);
    gs_matrix_destroy(&A);
    gs_csr_destroy(&H);
    free(h);
    free(hb);
  }
  gs_context_destroy(&ctx);
  return rc;
}
