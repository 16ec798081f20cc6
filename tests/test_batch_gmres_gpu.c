/* tests/test_batch_gmres_gpu.c (GPU): the batched GMRES(m) and the batched preconditioners
 * (Jacobi, block-Jacobi, ILU(0)) with every batched method, on the device:
 *   - every problem against gs_solve on that problem alone (the same method and preconditioner:
 *     jacobi, block-jacobi with the same block and agglomerate, ilu0): the same reason, the count
 *     within 1 where rounding cannot move it (else each within CHAOS_GUARD and no bias, as
 *     tests/test_batch.c), the true residual within gs_solve's 10x contract; and against the
 *     kernel's own body run on the host (gs_batch_host_solve): the same reason and count;
 *   - the first steps (maxit 2) to 1e-5 in the norms;
 *   - the preconditioners' data the kernel set up (gs_batch_pc_data) against the host references
 *     (tests/batch_solve_ref.h: gs_solve's block factorization, a row-order ILU(0));
 *   - problems of 1 row, empty (0 x 0) problems, an empty batch refused at creation, sizes at the
 *     shared-memory limit (the vectors just in, just out), x0 given;
 *   - a singular block, a zero pivot, a missing diagonal: that problem alone stops (breakdown,
 *     the row named), where gs_solve refuses the preconditioner;
 *   - the benchmark knobs (the blocks' order off, budgets of 0 .. 24 KiB, 64 .. 256 threads): the
 *     same matches; a bad value refused;
 *   - the arguments.
 * GS_TEST_QUICK (compute-sanitizer, valgrind) takes small batches. Exits 77 (skipped) without a
 * GPU. Random inputs from the run's seed (GS_TEST_SEED). */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/batch_solve_ref.h"

static gs_context_t *ctx;

#define CHAOS_GUARD 0.6
#define CHAOS_BIAS 0.08
#define FIRST_STEPS_RTOL 1e-5

typedef enum {
  COUNT_WITHIN_1, /* rounding cannot move the count: within 1 on every problem */
  COUNT_ROUNDING, /* it may: each within CHAOS_GUARD, no bias (mean relative difference) */
  COUNT_LOOSE     /* each within CHAOS_GUARD (a few problems of mixed sizes: no bias test) */
} count_rule_t;

static double *dvec(const double *h, size_t n)
{
  void *d = NULL;
  CU_ASSERT_FATAL(gs_dmalloc(ctx, &d, (n ? n : 1) * sizeof(double), "test vector") == GS_SUCCESS);
  if (n && h) CU_ASSERT_FATAL(gs_copy_to_device(ctx, d, h, n * sizeof(double)) == GS_SUCCESS);
  return (double *)d;
}

static const char *pname(int p) { return gs_batch_precond_name((gs_batch_precond_t)p); }

/* gs_solve on problem A alone with the batch's options: GS_SUCCESS and its stats, or the
 * status of the preconditioner's creation when gs_solve refuses it (a singular block, a zero
 * pivot). x0 (NULL: 0) and the solution in x (host). */
static gs_status_t single_solve(gs_csr_t *A, const double *b, const double *x0,
                                const gs_batch_solve_opts_t *o, gs_solve_stats_t *st, double *x)
{
  gs_matrix_t *M = NULL;
  gs_spmv_t *S = NULL;
  gs_precond_t *P = NULL;
  const int pc = o->jacobi ? GS_BATCH_PRECOND_JACOBI : (int)o->precond;
  CU_ASSERT_FATAL(gs_matrix_create(&M, ctx, A) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_spmv_create(&S, ctx, M, "csr-vector", NULL) == GS_SUCCESS);
  gs_status_t pst = GS_SUCCESS;
  if (pc != GS_BATCH_PRECOND_NONE) {
    char popts[64] = "";
    if (pc == GS_BATCH_PRECOND_BLOCK_JACOBI)
      snprintf(popts, sizeof popts, "block=%d,agglomerate=%d", o->block, o->agglomerate);
    pst = gs_precond_create_opts(&P, ctx, M, pname(pc), *popts ? popts : NULL);
  }
  if (pst == GS_SUCCESS) {
    gs_solve_opts_t so;
    gs_solve_opts_default(&so);
    so.method = o->method;
    so.rtol = o->rtol;
    so.atol = o->atol;
    so.maxit = o->maxit;
    so.restart = o->restart;
    so.x0_given = x0 != NULL;
    const size_t n = (size_t)A->m;
    double *db = dvec(b, n), *dx = dvec(x0, n); /* x0 NULL: gs_solve zeroes all n */
    CU_ASSERT_EQUAL_FATAL(gs_solve(ctx, &so, S, P, db, dx, st), GS_SUCCESS);
    if (n) CU_ASSERT_FATAL(gs_copy_to_host(ctx, x, dx, n * sizeof(double)) == GS_SUCCESS);
    gs_dfree(ctx, db);
    gs_dfree(ctx, dx);
  }
  gs_precond_destroy(&P);
  gs_spmv_destroy(&S);
  gs_matrix_destroy(&M);
  return pst;
}

/* |a - b| within rel of the larger, or within abs_floor */
static int norms_agree(double a, double b, double rel, double abs_floor)
{
  return fabs(a - b) <= rel * fmax(fabs(a), fabs(b)) + abs_floor;
}

/* The batch A[0..count) with options o on the device, against gs_solve problem by problem (count
 * by `rule`) and against the host body (the same reason; the count by the same rule). Returns
 * the converged problems. fails[i] (may be NULL): problem i's preconditioner cannot be set up. */
static int compare(gs_csr_t **A, int count, const gs_batch_solve_opts_t *o, count_rule_t rule,
                   uint64_t *s, const char *what, const int *fails)
{
  gs_batch_t *B = NULL;
  CU_ASSERT_EQUAL_FATAL(gs_batch_create(&B, ctx, count, (const gs_csr_t *const *)A), GS_SUCCESS);
  const gs_off_t *ro = gs_batch_row_offsets(B);
  const size_t n = (size_t)ro[count];
  double *b = malloc(n * 8 + 8), *x0 = malloc(n * 8 + 8), *x = malloc(n * 8 + 8);
  double *xh = malloc(n * 8 + 8), *x1 = malloc(n * 8 + 8);
  for (size_t i = 0; i < n; ++i) {
    b[i] = 2.0 * gs_test_uniform(s) - 1.0;
    x0[i] = o->x0_given ? 0.25 * (2.0 * gs_test_uniform(s) - 1.0) : NAN; /* NaN: never read */
  }
  double *db = dvec(b, n), *dx = dvec(x0, n);
  gs_batch_stats_t *st = calloc((size_t)count + 1, sizeof *st);
  gs_batch_stats_t *sh = calloc((size_t)count + 1, sizeof *sh);
  gs_batch_summary_t sum;
  CU_ASSERT_EQUAL_FATAL(gs_batch_solve(B, o, db, dx, st, &sum), GS_SUCCESS);
  CU_ASSERT_FATAL(gs_copy_to_host(ctx, x, dx, n * 8) == GS_SUCCESS);
  memcpy(xh, x0, n * 8);
  CU_ASSERT_EQUAL_FATAL(gs_batch_host_solve(&B->H, o, b, xh, sh), GS_SUCCESS);
  const int first_steps = o->maxit <= 2;
  double rel_sum = 0.0;
  int nrel = 0, conv = 0;
  for (int i = 0; i < count; ++i) {
    if (A[i]->m == 0) { /* an empty problem: b = 0, x = 0 */
      CU_ASSERT(st[i].reason == GS_CONVERGED_ATOL && st[i].iterations == 0);
      CU_ASSERT(sh[i].reason == GS_CONVERGED_ATOL && sh[i].iterations == 0);
      conv += gs_reason_converged(st[i].reason);
      continue;
    }
    gs_solve_stats_t one;
    memset(&one, 0, sizeof one);
    const gs_status_t pst =
        single_solve(A[i], b + ro[i], o->x0_given ? x0 + ro[i] : NULL, o, &one, x1 + ro[i]);
    const int fail = fails && fails[i];
    conv += gs_reason_converged(st[i].reason);
    /* the host body: the same algorithm, summed in another order */
    const int dh = abs(st[i].iterations - sh[i].iterations);
    int okh = st[i].reason == sh[i].reason && st[i].detail_row == sh[i].detail_row &&
              (rule == COUNT_WITHIN_1 || first_steps ? dh <= 1
                                                     : dh <= 1 + (int)(CHAOS_GUARD * sh[i].iterations));
    if (!okh)
      fprintf(stderr, "\n  %s problem %d (n = %d): device %s in %d, host body %s in %d", what, i,
              (int)A[i]->m, gs_reason_string(st[i].reason), st[i].iterations,
              gs_reason_string(sh[i].reason), sh[i].iterations);
    CU_ASSERT(okh);
    if (fail) { /* gs_solve refuses the preconditioner; the batch stops this problem alone */
      CU_ASSERT_EQUAL(pst, GS_ERR_INVALID_ARG);
      CU_ASSERT_EQUAL(st[i].reason, GS_DIVERGED_BREAKDOWN);
      CU_ASSERT(st[i].detail_row >= 0 && st[i].detail && *st[i].detail);
      continue;
    }
    CU_ASSERT_EQUAL_FATAL(pst, GS_SUCCESS);
    const int d = abs(st[i].iterations - one.iterations);
    int ok = st[i].reason == one.reason;
    if (rule == COUNT_WITHIN_1 || first_steps) {
      ok = ok && d <= 1;
    } else {
      ok = ok && d <= 1 + (int)(CHAOS_GUARD * one.iterations);
      if (rule == COUNT_ROUNDING) {
        rel_sum += (double)(st[i].iterations - one.iterations) /
                   (one.iterations > 0 ? one.iterations : 1);
        ++nrel;
      }
    }
    if (first_steps && st[i].reason == GS_DIVERGED_MAXIT && one.reason == GS_DIVERGED_MAXIT) {
      const double fl = 1e-12 * st[i].bnorm;
      ok = ok && norms_agree(st[i].rnorm, one.rnorm, FIRST_STEPS_RTOL, fl) &&
           norms_agree(st[i].true_residual_norm, one.true_residual_norm, FIRST_STEPS_RTOL, fl);
    }
    if (!ok)
      fprintf(stderr, "\n  %s problem %d (n = %d): batch %s in %d (||r|| %.6e, true %.6e), "
              "gs_solve %s in %d (||r|| %.6e, true %.6e)", what, i, (int)A[i]->m,
              gs_reason_string(st[i].reason), st[i].iterations, st[i].rnorm,
              st[i].true_residual_norm, gs_reason_string(one.reason), one.iterations, one.rnorm,
              one.true_residual_norm);
    CU_ASSERT(ok);
    if (gs_reason_converged(st[i].reason)) {
      CU_ASSERT(st[i].true_residual_norm <= 10.0 * fmax(o->rtol * st[i].bnorm, o->atol));
      CU_ASSERT_EQUAL(st[i].detail_row, -1);
    }
  }
  if (nrel > 0) {
    const double mean = rel_sum / nrel;
    if (fabs(mean) > CHAOS_BIAS)
      fprintf(stderr, "\n  %s: counts biased against gs_solve's: mean relative difference %.3f",
              what, mean);
    CU_ASSERT(fabs(mean) <= CHAOS_BIAS);
  }
  CU_ASSERT_EQUAL(sum.converged, conv);
  CU_ASSERT(sum.it_min <= sum.it_median && sum.it_median <= sum.it_max);
  free(st);
  free(sh);
  free(b);
  free(x0);
  free(x);
  free(xh);
  free(x1);
  gs_dfree(ctx, db);
  gs_dfree(ctx, dx);
  gs_batch_destroy(&B);
  return conv;
}

static gs_batch_solve_opts_t opts(int method, int pc, int restart)
{
  gs_batch_solve_opts_t o;
  gs_batch_solve_opts_default(&o);
  o.method = (gs_method_t)method;
  o.precond = (gs_batch_precond_t)pc;
  o.restart = restart;
  return o;
}

/* MATCH_COUNT problems of `kind`: MATCH_LARGE of them (at indices 2, 2 + count / MATCH_LARGE,
 * ...) of 1500 .. 3000 rows, beyond shared memory for every method (CG's 4 vectors fit up to
 * 1472 rows), the others of 1 .. 400 rows (GMRES(30)'s vectors fit up to 184). The large ones sit
 * amid small ones, so the blocks' largest-first order is no identity. Quick: 3 of 1 .. 300.
 * (Each problem is also solved by gs_solve in every compare: 6 cases x 4 preconditioners x 3
 * compares x 12 = 864 calls, 2880 with the 40 problems of 1 .. 3000 this suite had.) */
enum { MATCH_COUNT = 12, MATCH_LARGE = 2 };
static gs_csr_t **match_problems(const char *kind, int quick, uint64_t *s)
{
  gs_csr_t **A = NULL, **G = NULL;
  const int count = quick ? 3 : MATCH_COUNT, large = quick ? 0 : MATCH_LARGE;
  CU_ASSERT_FATAL(gs_batch_gen(&A, kind, count, 1, quick ? 300 : 400, gs_test_next(s)) ==
                  GS_SUCCESS);
  if (large) {
    CU_ASSERT_FATAL(gs_batch_gen(&G, kind, large, 1500, 3000, gs_test_next(s)) == GS_SUCCESS);
    for (int k = 0; k < large; ++k) {
      const int at = 2 + k * (count / large);
      gs_csr_destroy(&A[at]);
      A[at] = G[k];
      G[k] = NULL;
    }
    gs_batch_gen_free(&G, large);
  }
  return A;
}

/* Every method with every preconditioner, sizes 1 .. 3000 (the larger ones in the global
 * workspace), against gs_solve and the host body; then the first two steps; then from x0. */
static void test_match_single(void)
{
  uint64_t s = gs_test_seed() ^ 0x71;
  const int quick = gs_test_quick();
  const struct {
    const char *kind;
    int method, restart;
    count_rule_t rule_none, rule_pc; /* without / with a preconditioner */
  } cases[] = {
      {"laplace", GS_SOLVER_CG, 30, COUNT_WITHIN_1, COUNT_WITHIN_1},
      {"random", GS_SOLVER_GMRES, 30, COUNT_ROUNDING, COUNT_WITHIN_1},
      {"laplace", GS_SOLVER_GMRES, 30, COUNT_ROUNDING, COUNT_ROUNDING},
      {"random", GS_SOLVER_GMRES, 5, COUNT_ROUNDING, COUNT_WITHIN_1},
      {"random", GS_SOLVER_BICGSTAB, 30, COUNT_ROUNDING, COUNT_WITHIN_1},
      {"laplace", GS_SOLVER_BICGSTAB, 30, COUNT_ROUNDING, COUNT_ROUNDING}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    const int count = quick ? 3 : MATCH_COUNT; /* quick: compute-sanitizer runs gs_solve too */
    gs_csr_t **A = match_problems(cases[c].kind, quick, &s);
    for (int pc = 0; pc < 4; ++pc) {
      gs_batch_solve_opts_t o = opts(cases[c].method, pc, cases[c].restart);
      o.block = 2 + (int)(gs_test_uniform(&s) * 7);
      o.agglomerate = (int)(gs_test_uniform(&s) * 2);
      const count_rule_t rule = pc ? cases[c].rule_pc : cases[c].rule_none;
      char what[128];
      snprintf(what, sizeof what, "%s %s(%d) + %s (block %d)", cases[c].kind,
               gs_method_string(o.method), o.restart, pname(pc), o.block);
      const int conv = compare(A, count, &o, rule, &s, what, NULL);
      CU_ASSERT_EQUAL(conv, count);
      o.maxit = 2;
      compare(A, count, &o, rule, &s, what, NULL);
      o.maxit = 10000;
      o.x0_given = 1;
      compare(A, count, &o, rule, &s, what, NULL);
    }
    gs_batch_gen_free(&A, count);
  }
}

/* The kernel's preconditioner data against the host references, on problems with shuffled
 * rows and duplicate entries. */
static void test_pc_data(void)
{
  uint64_t s = gs_test_seed() ^ 0x72;
  const int N = gs_test_quick() ? 6 : 30;
  gs_csr_t **A = calloc((size_t)N, sizeof *A);
  for (int i = 0; i < N; ++i)
    A[i] = ref_make_dd(&s, 1 + (gs_idx_t)(gs_test_uniform(&s) * (i < 3 ? 2 : 1500)), 1 + i % 6,
                       i % 3 == 0, i % 2, i % 2);
  gs_batch_t *B = NULL;
  CU_ASSERT_FATAL(gs_batch_create(&B, ctx, N, (const gs_csr_t *const *)A) == GS_SUCCESS);
  for (int pc = 1; pc < 4; ++pc)
    for (int rep = 0; rep < (pc == GS_BATCH_PRECOND_BLOCK_JACOBI ? 8 : 1); ++rep) {
      gs_batch_solve_opts_t o = opts(GS_SOLVER_GMRES, pc, 30);
      o.block = 1 + rep;
      o.agglomerate = rep % 2;
      double *data = NULL;
      int64_t *off = NULL;
      int *bad = NULL;
      CU_ASSERT_FATAL(gs_batch_pc_data(B, &o, &data, &off, &bad) == GS_SUCCESS);
      for (int i = 0; i < N; ++i) {
        ref_pc_t M;
        ref_pc_setup(&M, A[i], pc, o.block, o.agglomerate);
        CU_ASSERT_EQUAL(bad[i], M.bad);
        const int64_t len = off[i + 1] - off[i];
        const double *d = data + off[i];
        double scale = 0.0;
        for (gs_off_t k = 0; k < A[i]->nnz; ++k) scale = fmax(scale, fabs(A[i]->val[k]));
        int ok = 1;
        if (pc == GS_BATCH_PRECOND_JACOBI) {
          ok = len == A[i]->m;
          for (gs_idx_t r = 0; ok && r < A[i]->m; ++r)
            ok = fabs(d[r] - M.d[r]) <= 1e-15 * fabs(M.d[r]);
        } else if (pc == GS_BATCH_PRECOND_BLOCK_JACOBI) {
          int64_t f = 0;
          const int S = GS_BJ_MAX_BLOCK;
          for (gs_idx_t bk = 0; ok && bk < M.nb; ++bk) {
            const int sz = (int)(M.bp[bk + 1] - M.bp[bk]);
            for (int k = 0; k < sz * sz; ++k) /* (the device contracts a - l b into an fma) */
              ok &= fabs(d[f + k] - M.lu[(size_t)bk * S * S + k]) <=
                    1e-12 * (fabs(M.lu[(size_t)bk * S * S + k]) + scale);
            for (int k = 0; k < sz; ++k) ok &= d[f + sz * sz + k] == (double)M.piv[(size_t)bk * S + k];
            f += (int64_t)sz * sz + sz;
          }
          ok &= f == len;
        } else {
          ok = len == M.F->nnz;
          for (gs_off_t k = 0; ok && k < M.F->nnz; ++k)
            ok = fabs(d[k] - M.F->val[k]) <= 1e-11 * (fabs(M.F->val[k]) + scale);
        }
        if (!ok) fprintf(stderr, "\n  %s problem %d (%d rows): data differ", pname(pc), i, (int)A[i]->m);
        CU_ASSERT(ok);
        ref_pc_free(&M);
      }
      free(data);
      free(off);
      free(bad);
    }
  gs_batch_destroy(&B);
  ref_free_all(A, N);
  free(A);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), 0);
}

/* 1-row and empty problems, an empty batch, sizes at the shared-memory limit. */
static void test_edges(void)
{
  uint64_t s = gs_test_seed() ^ 0x73;
  gs_batch_t *B = NULL;
  CU_ASSERT_EQUAL(gs_batch_create(&B, ctx, 0, NULL), GS_ERR_INVALID_ARG); /* an empty batch */
  CU_ASSERT_PTR_NULL(B);
  for (int m = 0; m < 3; ++m)
    for (int pc = 0; pc < 4; ++pc) {
      gs_batch_solve_opts_t o = opts(m, pc, 12);
      gs_idx_t lim = 1; /* the largest n whose vectors fit in shared memory */
      while (gs_batch_vec_doubles(m, pc, lim + 1, o.restart) <= GS_BATCH_SOLVE_SMEM_DOUBLES) ++lim;
      enum { N = 8 };
      double one = 2.5;
      gs_csr_t *A[N] = {ref_lap(&s, lim - 1), gs_test_csr_from_dense(1, 1, &one), NULL,
                        ref_lap(&s, lim), ref_lap(&s, lim + 1), ref_lap(&s, 1), ref_lap(&s, 2),
                        ref_lap(&s, 3 * lim)};
      CU_ASSERT_FATAL(gs_csr_create(&A[2], 0, 0, 0) == GS_SUCCESS);
      char what[96];
      snprintf(what, sizeof what, "edges %s + %s (shared limit %d)", gs_method_string(o.method),
               pname(pc), (int)lim);
      /* (BiCGSTAB and GMRES(12) on the Laplacians of 1,000 rows and more follow the rounding) */
      const int conv = compare(A, N, &o, m == GS_SOLVER_CG ? COUNT_WITHIN_1 : COUNT_LOOSE, &s,
                               what, NULL);
      CU_ASSERT_EQUAL(conv, N);
      ref_free_all(A, N);
    }
}

/* A singular block, a zero pivot, a missing diagonal: that problem alone stops, named; gs_solve
 * refuses its preconditioner. */
static void test_refusals(void)
{
  uint64_t s = gs_test_seed() ^ 0x74;
  for (int pc = 1; pc < 4; ++pc)
    for (int m = 1; m < 3; ++m) {
      enum { N = 6 };
      gs_csr_t *A[N];
      for (int i = 0; i < N; ++i) A[i] = ref_make_dd(&s, 20 + 40 * i, 3, 0, 0, 0);
      /* problem 2: rows 9 and 10 equal on columns 8..10 (block-Jacobi with fixed blocks of 4:
       * the block of rows 8..11 is singular; ILU(0): row 10's pivot cancels); Jacobi: row 3
       * empty */
      const gs_idx_t n = 20;
      double *full = calloc((size_t)n * n, sizeof *full);
      for (gs_idx_t r = 0; r < n; ++r) full[r * n + r] = 6.0;
      const double blk[4][4] = {{4, 1, 0, 0}, {1, 3, 1, 0}, {1, 3, 1, 0}, {0, 0, 1, 5}};
      for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 4; ++c) full[(8 + r) * n + 8 + c] = blk[r][c];
      if (pc == GS_BATCH_PRECOND_JACOBI) full[3 * n + 3] = 0.0;
      gs_csr_destroy(&A[2]);
      A[2] = gs_test_csr_from_dense(n, n, full);
      free(full);
      int fails[N] = {0, 0, 1, 0, 0, 0};
      if (pc == GS_BATCH_PRECOND_ILU0) { /* problem 4: row 5's diagonal stored at column 6 */
        for (gs_off_t k = A[4]->row_ptr[5]; k < A[4]->row_ptr[6]; ++k)
          if (A[4]->col[k] == 5) A[4]->col[k] = 6;
        fails[4] = 1;
      }
      gs_batch_solve_opts_t o = opts(m, pc, 30);
      o.block = 4;
      o.agglomerate = 0;
      char what[64];
      snprintf(what, sizeof what, "refusal %s + %s", gs_method_string(o.method), pname(pc));
      const int conv = compare(A, N, &o, COUNT_WITHIN_1, &s, what, fails);
      CU_ASSERT_EQUAL(conv, N - 1 - fails[4]);
      ref_free_all(A, N);
    }
}

/* The benchmark knobs (GS_BATCH_ORDER, GS_BATCH_SMEM_KB, GS_BATCH_THREADS): index order, every
 * vector in the workspace, a small budget, other block sizes: each problem still matches
 * gs_solve and the host body at its own index; a bad value is refused naming the variable. The
 * caller's own settings are restored after. */
static void test_knobs(void)
{
  static const char *const names[3] = {"GS_BATCH_ORDER", "GS_BATCH_SMEM_KB", "GS_BATCH_THREADS"};
  char saved[3][32];
  int had[3];
  for (int k = 0; k < 3; ++k) {
    const char *v = getenv(names[k]);
    had[k] = v != NULL;
    snprintf(saved[k], sizeof saved[k], "%s", v ? v : "");
  }
  static const char *const set[][3] = {{"0", NULL, NULL}, {"1", "0", "64"}, {NULL, "8", "128"},
                                       {"0", "24", "256"}};
  uint64_t s = gs_test_seed() ^ 0x76;
  const int quick = gs_test_quick(), count = quick ? 3 : MATCH_COUNT;
  gs_csr_t **A = match_problems("laplace", quick, &s);
  for (size_t c = 0; c < sizeof set / sizeof set[0]; ++c) {
    for (int k = 0; k < 3; ++k) {
      if (set[c][k]) setenv(names[k], set[c][k], 1);
      else unsetenv(names[k]);
    }
    char what[96];
    snprintf(what, sizeof what, "knobs order %s smem %s threads %s", set[c][0] ? set[c][0] : "-",
             set[c][1] ? set[c][1] : "-", set[c][2] ? set[c][2] : "-");
    gs_batch_solve_opts_t o = opts(GS_SOLVER_CG, c % 2 ? GS_BATCH_PRECOND_JACOBI : 0, 30);
    CU_ASSERT_EQUAL(compare(A, count, &o, COUNT_WITHIN_1, &s, what, NULL), count);
  }
  /* a value out of range: refused, named */
  gs_batch_t *B = NULL;
  CU_ASSERT_FATAL(gs_batch_create(&B, ctx, count, (const gs_csr_t *const *)A) == GS_SUCCESS);
  const size_t n = (size_t)gs_batch_row_offsets(B)[count];
  double *db = dvec(NULL, n), *dx = dvec(NULL, n);
  setenv("GS_BATCH_SMEM_KB", "47", 1);
  CU_ASSERT_EQUAL(gs_batch_solve(B, NULL, db, dx, NULL, NULL), GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NOT_NULL(strstr(gs_last_error(), "GS_BATCH_SMEM_KB"));
  for (int k = 0; k < 3; ++k) {
    if (had[k]) setenv(names[k], saved[k], 1);
    else unsetenv(names[k]);
  }
  gs_dfree(ctx, db);
  gs_dfree(ctx, dx);
  gs_batch_destroy(&B);
  gs_batch_gen_free(&A, count);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), 0);
}

static void test_arguments(void)
{
  uint64_t s = gs_test_seed() ^ 0x75;
  gs_csr_t *A[1] = {ref_lap(&s, 4)};
  gs_batch_t *B = NULL;
  CU_ASSERT_FATAL(gs_batch_create(&B, ctx, 1, (const gs_csr_t *const *)A) == GS_SUCCESS);
  double h[4] = {1, 2, 3, 4};
  double *db = dvec(h, 4), *dx = dvec(h, 4);
  gs_batch_solve_opts_t o = opts(GS_SOLVER_LSQR, 0, 30);
  CU_ASSERT_EQUAL(gs_batch_solve(B, &o, db, dx, NULL, NULL), GS_ERR_INVALID_ARG);
  o = opts(GS_SOLVER_GMRES, GS_BATCH_PRECOND_ILU0, 30);
  o.jacobi = 1; /* the deprecated alias contradicts ilu0 */
  CU_ASSERT_EQUAL(gs_batch_solve(B, &o, db, dx, NULL, NULL), GS_ERR_INVALID_ARG);
  o.jacobi = 0;
  o.restart = 0;
  CU_ASSERT_EQUAL(gs_batch_solve(B, &o, db, dx, NULL, NULL), GS_ERR_INVALID_ARG);
  o.restart = 30;
  CU_ASSERT_EQUAL(gs_batch_solve(B, &o, db, db, NULL, NULL), GS_ERR_INVALID_ARG);
  gs_batch_stats_t st;
  gs_batch_summary_t sum;
  CU_ASSERT_EQUAL(gs_batch_solve(B, &o, db, dx, &st, &sum), GS_SUCCESS);
  CU_ASSERT(gs_reason_converged(st.reason) && sum.converged == 1 && sum.shared_problems == 1);
  CU_ASSERT(gs_batch_pc_data(NULL, &o, NULL, NULL, NULL) == GS_ERR_INVALID_ARG);
  gs_dfree(ctx, db);
  gs_dfree(ctx, dx);
  gs_batch_destroy(&B);
  gs_csr_destroy(&A[0]);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), 0);
}

static int setup(void) { return gs_context_create(&ctx, 0) == GS_SUCCESS ? 0 : 1; }

int main(void)
{
  CU_TestInfo tests[] = {
      {"every method and preconditioner against gs_solve and the host body", test_match_single},
      {"preconditioner data against the host references", test_pc_data},
      {"1 row, empty problems, an empty batch, the shared-memory limit", test_edges},
      {"a singular block, a zero pivot, a missing diagonal: named", test_refusals},
      {"the order, the shared-memory budget, the threads (GS_BATCH_*)", test_knobs},
      {"arguments", test_arguments},
      CU_TEST_INFO_NULL};
  if (gs_device_count() > 0 && setup()) {
    fprintf(stderr, "test_batch_gmres_gpu: %s\n", gs_last_error());
    return 1;
  }
  int rc = gs_test_main("batch_gmres_gpu", tests, 1);
  gs_context_destroy(&ctx);
  return rc;
}
