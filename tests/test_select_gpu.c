/* tests/test_select_gpu.c: the "auto" format on the GPU. Its product is the chosen backend's bit
 * for bit (auto hands back that backend's prepared product: same ops, same layout); the record
 * says what was measured and why; the cache (in this process's own folder) turns a second
 * selection of the same matrix into a hit with the same choice; a corrupt cache file costs a
 * warning, not the selection; the rule-only path takes the rule's first candidate; a method that
 * needs A^T gets a backend that has it; no device memory is left behind; the context has warmed
 * cuBLAS and cuSPARSE. Matrices are generated fresh (seed printed). Exits 77 without a device. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/testhooks.h"
#include "select/hash.h"
#include "select/select_impl.h"
#include "spmv/features_dev.h"
#include "spmv/spmv_impl.h"
#include "tests/testutil.h"

static gs_context_t *ctx;
static uint64_t g_seed;

/* The test matrices: a PDE stencil, a banded one, a convection-diffusion, scale-free rows. */
static gs_csr_t *matrix(int k, uint64_t seed)
{
  gs_csr_t *A = NULL;
  gs_status_t st = GS_ERR_INTERNAL;
  switch (k) {
  case 0: st = gs_gen_laplace(&A, 40, 40, 40, 27); break;
  case 1: st = gs_gen_laplace(&A, 300, 300, 1, 5); break;
  case 2: st = gs_gen_convdiff(&A, 200, 150, 1, 50.0, GS_FLOW_RANDOM, seed); break;
  case 3: st = gs_gen_powerlaw(&A, 50000, 8.0, 2.3, seed); break;
  case 4: st = gs_gen_random(&A, 3000, 2500, 9, seed); break;
  default: break;
  }
  CU_ASSERT_EQUAL(st, GS_SUCCESS);
  return A;
}
#define NMATRICES 5

/* H on the device with its shared CSR uploaded (a CSR product's first prepare does it and it
 * stays with the matrix); *base: the device bytes in use then, what a test must come back to. */
static gs_matrix_t *on_device(const gs_csr_t *H, size_t *base)
{
  gs_matrix_t *A = NULL;
  gs_spmv_t *D = NULL;
  CU_ASSERT_FATAL(H && gs_matrix_create(&A, ctx, H) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_spmv_create(&D, ctx, A, "csr-vector", NULL) == GS_SUCCESS);
  gs_spmv_destroy(&D);
  *base = gs_device_bytes_in_use(ctx);
  return A;
}

/* y = alpha A x + beta y_in with product S, copied back to the host. */
static void apply(gs_spmv_t *S, gs_op_t op, double alpha, const double *d_x, double beta,
                  const double *h_yin, double *d_y, double *h_y, gs_idx_t ylen)
{
  CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_y, h_yin, (size_t)ylen * sizeof *h_yin) ==
                  GS_SUCCESS);
  CU_ASSERT_FATAL(gs_spmv_apply(S, op, alpha, d_x, beta, d_y) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_copy_to_host(ctx, h_y, d_y, (size_t)ylen * sizeof *h_y) == GS_SUCCESS);
}

static void test_auto_is_the_chosen_backend(void)
{
  char cache[4608];
  snprintf(cache, sizeof cache, "%s/cache-bits", gs_test_tmpdir());
  for (int k = 0; k < NMATRICES; ++k) {
    uint64_t s = g_seed + (uint64_t)k;
    gs_csr_t *H = matrix(k, gs_test_next(&s));
    gs_spmv_t *S = NULL, *D = NULL;
    size_t base = 0;
    gs_matrix_t *A = on_device(H, &base);
    gs_select_opts_t so;
    gs_select_opts_default(&so);
    so.cache_dir = cache;
    gs_status_t st = gs_spmv_create_auto(&S, ctx, A, NULL, &so);
    if (st != GS_SUCCESS) fprintf(stderr, "\n  auto on matrix %d: %s\n", k, gs_last_error());
    CU_ASSERT_FATAL(st == GS_SUCCESS);
    const gs_selection_t *sel = gs_spmv_selection(S);
    CU_ASSERT_FATAL(sel != NULL);
    CU_ASSERT_STRING_EQUAL(gs_spmv_name(S), sel->chosen_name);
    CU_ASSERT(sel->measured && sel->cache == GS_SELECT_CACHE_MISS);
    CU_ASSERT(sel->chosen >= 0 && sel->chosen < sel->ntimes && sel->ntimes == sel->pool.n);
    CU_ASSERT_STRING_EQUAL(sel->warning, "");
    /* the choice is the least cost of the record, each cost prepare + N * t */
    for (int c = 0; c < sel->ntimes; ++c)
      if (sel->times[c].status == GS_SUCCESS) {
        CU_ASSERT(sel->times[c].cost_s == sel->times[c].prepare_s +
                                              sel->expected_products * sel->times[c].spmv_s);
        CU_ASSERT(sel->times[sel->chosen].cost_s <= sel->times[c].cost_s);
      }
    printf("\n    matrix %d: %s (%s)", k, sel->chosen_name, sel->rule.row);
    CU_ASSERT_FATAL(gs_spmv_create(&D, ctx, A, sel->chosen_name, NULL) == GS_SUCCESS);

    /* the same x, alpha, beta and y_in through both: y bit for bit (or, for a backend that is
     * not deterministic, as its caps say, both within the rounding bound) */
    const gs_idx_t m = H->m, n = H->n, len = (m > n ? m : n) + 1;
    double *x = malloc((size_t)len * sizeof *x), *yin = malloc((size_t)len * sizeof *yin);
    double *y1 = malloc((size_t)len * sizeof *y1), *y2 = malloc((size_t)len * sizeof *y2);
    double *d_x = NULL, *d_y = NULL;
    CU_ASSERT_FATAL(x && yin && y1 && y2);
    for (gs_idx_t i = 0; i < len; ++i) {
      x[i] = 2.0 * gs_test_uniform(&s) - 1.0;
      yin[i] = 2.0 * gs_test_uniform(&s) - 1.0;
    }
    CU_ASSERT_FATAL(gs_dmalloc(ctx, (void **)&d_x, (size_t)len * sizeof *d_x, "x") == GS_SUCCESS);
    CU_ASSERT_FATAL(gs_dmalloc(ctx, (void **)&d_y, (size_t)len * sizeof *d_y, "y") == GS_SUCCESS);
    CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_x, x, (size_t)len * sizeof *x) == GS_SUCCESS);
    const double ab[][2] = {{1.0, 0.0}, {-0.75, 1.5}};
    for (int op = 0; op < 2; ++op) {
      const gs_op_t o = op ? GS_OP_T : GS_OP_N;
      if (!gs_spmv_supports(S, o)) continue;
      const unsigned det = o == GS_OP_N ? GS_SPMV_CAP_DETERMINISTIC : GS_SPMV_CAP_DETERMINISTIC_T;
      const gs_idx_t ylen = o == GS_OP_N ? m : n;
      for (int q = 0; q < 2; ++q) {
        apply(S, o, ab[q][0], d_x, ab[q][1], yin, d_y, y1, ylen);
        apply(D, o, ab[q][0], d_x, ab[q][1], yin, d_y, y2, ylen);
        if (gs_spmv_caps(D) & det) {
          CU_ASSERT(memcmp(y1, y2, (size_t)ylen * sizeof *y1) == 0);
        } else {
          CU_ASSERT(gs_test_spmv_ok(H, o, ab[q][0], x, ab[q][1], yin, y1, "auto %d", k));
          CU_ASSERT(gs_test_spmv_ok(H, o, ab[q][0], x, ab[q][1], yin, y2, "direct %d", k));
        }
      }
    }
    gs_dfree(ctx, d_x);
    gs_dfree(ctx, d_y);
    free(x);
    free(yin);
    free(y1);
    free(y2);
    char chosen[GS_SELECT_NAME];
    snprintf(chosen, sizeof chosen, "%s", sel->chosen_name);
    const double chosen_cost = sel->times[sel->chosen].cost_s;
    gs_spmv_destroy(&S);
    gs_spmv_destroy(&D);
    CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base); /* the candidates left nothing behind */

    /* the second selection of the same matrix: a cache hit, the same choice */
    CU_ASSERT_FATAL(gs_spmv_create_auto(&S, ctx, A, NULL, &so) == GS_SUCCESS);
    sel = gs_spmv_selection(S);
    CU_ASSERT_EQUAL(sel->cache, GS_SELECT_CACHE_HIT);
    /* the same choice, or one the first run skipped and this one measured at a lower cost
     * (the bounds tighten as the known bandwidth grows) */
    for (int c = 0; c < sel->ntimes; ++c)
      if (!strcmp(sel->times[c].name, chosen)) {
        CU_ASSERT(sel->times[c].status == GS_SUCCESS && sel->times[c].cost_s == chosen_cost);
        CU_ASSERT(sel->times[sel->chosen].cost_s <= chosen_cost);
      }
    gs_spmv_destroy(&S);
    gs_matrix_destroy(&A);
    gs_csr_destroy(&H);
  }
}

static void test_paths(void)
{
  uint64_t s = g_seed ^ 0x77;
  gs_csr_t *H = matrix(2, gs_test_next(&s));
  gs_matrix_t *A = NULL;
  gs_spmv_t *S = NULL;
  CU_ASSERT_FATAL(H && gs_matrix_create(&A, ctx, H) == GS_SUCCESS);
  char cache[4608];
  snprintf(cache, sizeof cache, "%s/cache-paths", gs_test_tmpdir());
  gs_select_opts_t so;
  gs_select_opts_default(&so);
  so.cache_dir = cache;

  /* gs_spmv_create_auto with the defaults: the user's cache, so here with no cache */
  so.use_cache = 0;
  CU_ASSERT_FATAL(gs_spmv_create_auto(&S, ctx, A, NULL, &so) == GS_SUCCESS);
  CU_ASSERT_EQUAL(gs_spmv_selection(S)->cache, GS_SELECT_CACHE_OFF);
  gs_spmv_destroy(&S);
  so.use_cache = 1;

  /* rule only: the rule's first candidate, nothing timed */
  so.rule_only = 1;
  CU_ASSERT_FATAL(gs_spmv_create_auto(&S, ctx, A, NULL, &so) == GS_SUCCESS);
  const gs_selection_t *sel = gs_spmv_selection(S);
  CU_ASSERT(!sel->measured);
  CU_ASSERT_STRING_EQUAL(sel->chosen_name, sel->rule.names[0]);
  gs_spmv_destroy(&S);
  so.rule_only = 0;

  /* a method with A^T: a backend that has it */
  so.need_transpose = 1;
  CU_ASSERT_FATAL(gs_spmv_create_auto(&S, ctx, A, NULL, &so) == GS_SUCCESS);
  CU_ASSERT(gs_spmv_supports(S, GS_OP_T));
  gs_spmv_destroy(&S);
  so.need_transpose = 0;

  /* a corrupt cache file: a warning, a fresh measurement, then a hit again */
  CU_ASSERT_FATAL(gs_spmv_create_auto(&S, ctx, A, NULL, &so) == GS_SUCCESS);
  char file[1024];
  snprintf(file, sizeof file, "%s", gs_spmv_selection(S)->cache_file);
  gs_spmv_destroy(&S);
  CU_ASSERT_FATAL(file[0] != '\0');
  FILE *f = fopen(file, "w");
  CU_ASSERT_FATAL(f != NULL);
  fputs("gpusolve-select 1\nversion\n", f);
  fclose(f);
  CU_ASSERT_FATAL(gs_spmv_create_auto(&S, ctx, A, NULL, &so) == GS_SUCCESS);
  sel = gs_spmv_selection(S);
  CU_ASSERT(strstr(sel->warning, "corrupt") != NULL);
  CU_ASSERT_EQUAL(sel->cache, GS_SELECT_CACHE_MISS);
  gs_spmv_destroy(&S);
  CU_ASSERT_FATAL(gs_spmv_create_auto(&S, ctx, A, NULL, &so) == GS_SUCCESS);
  CU_ASSERT_EQUAL(gs_spmv_selection(S)->cache, GS_SELECT_CACHE_HIT);
  gs_spmv_destroy(&S);

  /* an unwritable cache folder (under a regular file): a warning, the selection goes on */
  char bad[1100];
  snprintf(bad, sizeof bad, "%s/sub", file);
  so.cache_dir = bad;
  CU_ASSERT_FATAL(gs_spmv_create_auto(&S, ctx, A, NULL, &so) == GS_SUCCESS);
  CU_ASSERT(strlen(gs_spmv_selection(S)->warning) > 0);
  gs_spmv_destroy(&S);

  /* plain backends have no record; bad arguments */
  CU_ASSERT_FATAL(gs_spmv_create(&S, ctx, A, "csr-vector", NULL) == GS_SUCCESS);
  CU_ASSERT_PTR_NULL(gs_spmv_selection(S));
  gs_spmv_destroy(&S);
  so.expected_products = 0.0;
  CU_ASSERT_EQUAL(gs_spmv_create_auto(&S, ctx, A, NULL, &so), GS_ERR_INVALID_ARG);
  so.expected_products = 1000.0;
  CU_ASSERT_EQUAL(gs_spmv_create_auto(&S, ctx, A, "max_fill=x", &so), GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NULL(S);
  gs_matrix_destroy(&A);
  gs_csr_destroy(&H);
  /* the libraries were warmed when the context was made */
  CU_ASSERT(gs_context_warmup_seconds(ctx) > 0.0);
}

/* The staged selection of a solve: it starts with a light backend and measures nothing else; the
 * revisions, given a huge number of products run and left, try every candidate of the pool one
 * per call (or skip it for its byte bound) and
 * end on the fastest measured (within the switching margin), whose product is then S's bit for
 * bit; the generation changes with each switch; a solve through a staged product converges; the
 * second staged selection of the matrix knows the measured times from the cache, at its start
 * (it starts on the cheapest known light format) and at its revisions. */
static void test_staged(void)
{
  char cache[4608];
  snprintf(cache, sizeof cache, "%s/cache-staged", gs_test_tmpdir());
  for (int k = 0; k < NMATRICES - 1; ++k) { /* square matrices */
    uint64_t s = g_seed + 17u * (uint64_t)k;
    gs_csr_t *H = matrix(k, gs_test_next(&s));
    gs_spmv_t *S = NULL, *D = NULL;
    size_t base = 0;
    gs_matrix_t *A = on_device(H, &base);
    gs_select_opts_t so;
    gs_select_opts_default(&so);
    so.cache_dir = cache;
    so.staged = 1;
    CU_ASSERT_FATAL(gs_spmv_create_auto(&S, ctx, A, NULL, &so) == GS_SUCCESS);
    const gs_selection_t *sel = gs_spmv_selection(S);
    CU_ASSERT_FATAL(sel != NULL && sel->staged);
    CU_ASSERT_EQUAL(sel->cache, GS_SELECT_CACHE_MISS); /* keyed at the start, not known yet */
    const int b0 = gs_spmv_backend_find(sel->chosen_name);
    CU_ASSERT(b0 >= 0 && (gs_spmv_backend_flags(b0) & GS_SPMV_FLAG_LIGHT));
    CU_ASSERT_STRING_EQUAL(sel->first_name, sel->chosen_name);
    for (int c = 0; c < sel->ntimes; ++c) {
      CU_ASSERT(sel->times[c].status == GS_SELECT_DEFERRED);
    }
    const unsigned g0 = gs_spmv_generation(S);
    int switched_total = 0;
    for (int call = 0; call <= GS_SELECT_MAX; ++call) { /* one candidate of the pool a call */
      int sw = -1;
      CU_ASSERT_FATAL(gs_spmv_auto_revise(S, 10 + call, 1e9, 1e12, &sw) == GS_SUCCESS);
      CU_ASSERT(sw == 0 || sw == 1);
      switched_total += sw == 1;
      CU_ASSERT_STRING_EQUAL(gs_spmv_name(S), sel->chosen_name);
    }
    CU_ASSERT_EQUAL(sel->switches, switched_total);
    CU_ASSERT_EQUAL(gs_spmv_generation(S) - g0, (unsigned)switched_total);
    /* every candidate measured (or failed to prepare); none faster than the chosen by the margin */
    const double tc = sel->times[sel->chosen].spmv_s;
    CU_ASSERT(sel->times[sel->chosen].status == GS_SUCCESS && tc > 0.0);
    for (int c = 0; c < sel->ntimes; ++c) {
      CU_ASSERT(sel->times[c].status != GS_SELECT_DEFERRED);
      if (sel->times[c].status == GS_SUCCESS) {
        CU_ASSERT(sel->times[c].spmv_s > (1.0 - GS_SELECT_SWITCH_MARGIN) * tc);
      }
    }
    printf("\n    matrix %d: started %s, ended %s after %d switch(es), %d tried", k,
           sel->first_name, sel->chosen_name, sel->switches, sel->tried);
    /* S's product is the chosen backend's */
    CU_ASSERT_FATAL(gs_spmv_create(&D, ctx, A, sel->chosen_name, NULL) == GS_SUCCESS);
    const gs_idx_t n = H->n;
    double *x = malloc((size_t)n * sizeof *x), *y1 = malloc((size_t)n * sizeof *y1);
    double *y2 = malloc((size_t)n * sizeof *y2), *d_x = NULL, *d_y = NULL;
    CU_ASSERT_FATAL(x && y1 && y2);
    for (gs_idx_t i = 0; i < n; ++i) x[i] = 2.0 * gs_test_uniform(&s) - 1.0;
    CU_ASSERT_FATAL(gs_dmalloc(ctx, (void **)&d_x, (size_t)n * sizeof *d_x, "x") == GS_SUCCESS);
    CU_ASSERT_FATAL(gs_dmalloc(ctx, (void **)&d_y, (size_t)n * sizeof *d_y, "y") == GS_SUCCESS);
    CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_x, x, (size_t)n * sizeof *x) == GS_SUCCESS);
    apply(S, GS_OP_N, 1.0, d_x, 0.0, x, d_y, y1, n);
    apply(D, GS_OP_N, 1.0, d_x, 0.0, x, d_y, y2, n);
    if (gs_spmv_caps(D) & GS_SPMV_CAP_DETERMINISTIC) {
      CU_ASSERT(memcmp(y1, y2, (size_t)n * sizeof *y1) == 0);
    } else {
      CU_ASSERT(gs_test_spmv_ok(H, GS_OP_N, 1.0, x, 0.0, x, y1, "staged %d", k));
    }
    gs_spmv_destroy(&D);
    /* a solve through the staged product (fresh, revised by the solver) converges */
    gs_spmv_t *T = NULL;
    CU_ASSERT_FATAL(gs_spmv_create_auto(&T, ctx, A, NULL, &so) == GS_SUCCESS);
    { /* a hit at the start: it runs the format of least prepare plus GS_SELECT_START_PRODUCTS
         products among those the first selection measured (the cache's), light or not */
      const gs_selection_t *t0 = gs_spmv_selection(T);
      CU_ASSERT_EQUAL(t0->cache, GS_SELECT_CACHE_HIT);
      CU_ASSERT_FATAL(t0->chosen >= 0 && t0->times[t0->chosen].status == GS_SUCCESS);
      const double np = fmin(GS_SELECT_START_PRODUCTS, so.expected_products);
      double least = INFINITY;
      const char *cheapest = "";
      for (int c = 0; c < sel->ntimes; ++c) {
        const gs_select_time_t *m = &sel->times[c];
        if (m->status == GS_SUCCESS && m->spmv_s > 0.0 && m->prepare_s + np * m->spmv_s < least) {
          least = m->prepare_s + np * m->spmv_s;
          cheapest = m->name;
        }
      }
      CU_ASSERT_STRING_EQUAL(t0->first_name, cheapest);
      CU_ASSERT_STRING_EQUAL(t0->first_name, gs_spmv_name(T));
      printf(" [hit: started %s]", t0->first_name);
    }
    { /* the first revision that can afford it runs the rule and finds every time in the cache,
         then takes the fastest at once (its prepare is nothing against 1e12 products) */
      int sw = -1;
      CU_ASSERT_FATAL(gs_spmv_auto_revise(T, 10, 1e9, 1e12, &sw) == GS_SUCCESS);
      const gs_selection_t *ts = gs_spmv_selection(T);
      CU_ASSERT_EQUAL(ts->cache, GS_SELECT_CACHE_HIT);
      int skipped = 0; /* what the first one skipped for its bound is not in the cache: it
                          may be tried now, and nothing else */
      for (int d = 0; d < sel->ntimes; ++d) skipped += sel->times[d].status == GS_SELECT_SKIPPED;
      CU_ASSERT(ts->tried <= skipped);
      for (int c = 0; c < ts->ntimes; ++c) /* what the first selection measured is known */
        for (int d = 0; d < sel->ntimes; ++d)
          if (!strcmp(sel->times[d].name, ts->times[c].name) && sel->times[d].status <= 0) {
            CU_ASSERT(ts->times[c].status != GS_SELECT_DEFERRED);
          }
      const double tt = ts->times[ts->chosen].spmv_s;
      for (int c = 0; c < ts->ntimes; ++c)
        if (ts->times[c].status == GS_SUCCESS) {
          CU_ASSERT(ts->times[c].spmv_s > (1.0 - GS_SELECT_SWITCH_MARGIN) * tt);
        }
      CU_ASSERT_STRING_EQUAL(gs_spmv_name(T), ts->chosen_name);
    }
    { /* the next revision, where nothing known beats the running format: a candidate the cache
         does not know is tried only when its byte bound, at the best bandwidth of the known
         (cached) times, is below the running format's time, as on a miss */
      const gs_selection_t *ts = gs_spmv_selection(T);
      const double tcur = ts->times[ts->chosen].spmv_s;
      double bw = 0.0;
      int known[GS_SELECT_MAX];
      for (int c = 0; c < ts->ntimes; ++c) {
        const gs_select_time_t *m = &ts->times[c];
        const double bytes = gs_select_bytes_bound(m->name, &ts->features);
        known[c] = m->status == GS_SUCCESS;
        if (known[c] && m->spmv_s > 0.0 && bytes / m->spmv_s > bw) bw = bytes / m->spmv_s;
      }
      const int tried = ts->tried;
      int sw = -1;
      CU_ASSERT_FATAL(gs_spmv_auto_revise(T, 11, 1e9, 1e12, &sw) == GS_SUCCESS);
      for (int c = 0; c < ts->ntimes; ++c)
        if (!known[c] && ts->times[c].status == GS_SUCCESS) { /* tried in this call */
          const double bound = gs_select_bytes_bound(ts->times[c].name, &ts->features) /
                               (GS_SELECT_BW_SLACK * bw);
          CU_ASSERT(bw > 0.0 && bound < tcur);
          printf(" [hit tried %s: bound %.3g us < %.3g us]", ts->times[c].name, 1e6 * bound,
                 1e6 * tcur);
        }
      CU_ASSERT(ts->tried <= tried + 1);
    }
    if (k == 0 || k == 1) { /* SPD: CG, b = A 1 */
      double *one = malloc((size_t)n * sizeof *one);
      CU_ASSERT_FATAL(one != NULL);
      for (gs_idx_t i = 0; i < n; ++i) one[i] = 1.0;
      CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_x, one, (size_t)n * sizeof *one) == GS_SUCCESS);
      CU_ASSERT_FATAL(gs_spmv_apply(T, GS_OP_N, 1.0, d_x, 0.0, d_y) == GS_SUCCESS);
      gs_solve_opts_t o;
      gs_solve_opts_default(&o);
      o.method = GS_SOLVER_CG;
      o.rtol = 1e-10;
      /* the loop, which multiplies through T and revises it at its checks (the default would
       * take persistent iterations on an auto product: their own CSR product, no revision) */
      o.persistent = GS_PERSISTENT_OFF;
      gs_solve_stats_t st;
      CU_ASSERT_FATAL(gs_solve(ctx, &o, T, NULL, d_y, d_x, &st) == GS_SUCCESS);
      CU_ASSERT_EQUAL(st.persistent, 0);
      CU_ASSERT(gs_reason_converged(st.reason));
      CU_ASSERT(st.rel_residual <= 1e-10);
      CU_ASSERT_STRING_EQUAL(gs_spmv_name(T), gs_spmv_selection(T)->chosen_name);
      free(one);
    }
    gs_spmv_destroy(&T);
    { /* the staged start's time counts as spent: a first revision after only the products
         needed to time the current format runs the rule when the start alone paid for it */
      gs_select_opts_t no = so;
      no.use_cache = 0;
      gs_spmv_t *U = NULL;
      CU_ASSERT_FATAL(gs_spmv_create_auto(&U, ctx, A, NULL, &no) == GS_SUCCESS);
      const gs_selection_t *us = gs_spmv_selection(U);
      const double start = us->seconds;
      CU_ASSERT(start > 0.0);
      int sw = -1;
      CU_ASSERT_FATAL(gs_spmv_auto_revise(U, 8, GS_SELECT_MEASURE_PRODUCTS, 1e12, &sw) ==
                      GS_SUCCESS);
      const double timing = us->progress_s; /* at most the current format's timing and the rule */
      const double feat = GS_SELECT_FEATURE_DEV_S +
                          GS_SELECT_FEATURE_DEV_S_PER_NNZ * (double)H->nnz;
      printf(" [start %.3g ms, first revision %.3g ms, features %s]", 1e3 * start,
             1e3 * timing, us->features_s > 0.0 ? "run" : "not yet");
      if (start > 2.0 * (feat + timing)) {
        CU_ASSERT(us->features_s > 0.0);
      }
      CU_ASSERT(us->times[us->chosen].status == GS_SUCCESS); /* the current format was timed */
      gs_spmv_destroy(&U);
    }
    gs_dfree(ctx, d_x);
    gs_dfree(ctx, d_y);
    free(x);
    free(y1);
    free(y2);
    gs_spmv_destroy(&S);
    CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
    gs_matrix_destroy(&A);
    gs_csr_destroy(&H);
  }
}

/* The cache key's hash on the GPU (from the shared CSR, 32- and 64-bit row pointers) equals the
 * host's, on the suite's matrices and on random ones whose streams end just before, on and
 * just after a hash block's boundary; one changed value or column changes it. */
static void test_hash_dev(void)
{
  const gs_idx_t edge = GS_HASH_BLOCK_WORDS;
  const gs_idx_t rows[] = {1, 31, edge - 2, edge - 1, edge, 2 * edge + 5};
  for (int k = 0; k < NMATRICES + 6; ++k) {
    gs_csr_t *H = NULL;
    const uint64_t seed = g_seed + 101u * (uint64_t)k;
    if (k < NMATRICES) H = matrix(k, seed);
    else { /* row count and entries (per_row * m) around the block edges */
      const gs_idx_t m = rows[k - NMATRICES];
      const gs_idx_t per = m > 100 ? 1 + (gs_idx_t)(seed % 3) : 3;
      CU_ASSERT_FATAL(gs_gen_random(&H, m, m + 7, per, seed) == GS_SUCCESS);
    }
    CU_ASSERT_FATAL(H != NULL);
    const uint64_t want = gs_select_matrix_hash(H);
    for (int wide = 0; wide <= 1; ++wide) {
      gs_matrix_t *A = NULL;
      gs_dcsr_t D;
      uint64_t got = 0;
      const size_t base = gs_device_bytes_in_use(ctx);
      gs_test_wide_offsets(ctx, wide);
      const gs_status_t st = gs_matrix_create(&A, ctx, H);
      gs_test_wide_offsets(ctx, 0);
      CU_ASSERT_FATAL(st == GS_SUCCESS);
      CU_ASSERT_FATAL(gs_matrix_device_csr(A, &D) == GS_SUCCESS);
      CU_ASSERT_EQUAL(D.wide, wide);
      const size_t with_csr = gs_device_bytes_in_use(ctx);
      CU_ASSERT_FATAL(gs_select_matrix_hash_dev(ctx, &D, &got) == GS_SUCCESS);
      CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), with_csr); /* its scratch is freed */
      if (got != want)
        fprintf(stderr, "\n  matrix %d (%d x %d, %lld entries, wide %d): device %016llx, host "
                "%016llx\n", k, (int)H->m, (int)H->n, (long long)H->nnz, wide,
                (unsigned long long)got, (unsigned long long)want);
      CU_ASSERT_EQUAL(got, want);
      gs_matrix_destroy(&A);
      CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
    }
    /* one entry's value, then its column (when another is free in its row), changed */
    if (H->nnz > 0) {
      const gs_off_t e = (gs_off_t)(seed % (uint64_t)H->nnz);
      for (int what = 0; what < 2; ++what) {
        const double v = H->val[e];
        const gs_idx_t c = H->col[e];
        if (what == 0) H->val[e] = v + 1.0;
        else {
          gs_idx_t r = 0;
          while (H->row_ptr[r + 1] <= e) ++r;
          const int last = e + 1 == H->row_ptr[r + 1];
          const gs_idx_t hi = last ? H->n : H->col[e + 1];
          if (c + 1 >= hi) continue; /* no free column after it before the next */
          H->col[e] = c + 1;
        }
        gs_matrix_t *A = NULL;
        gs_dcsr_t D;
        uint64_t got = 0;
        CU_ASSERT_FATAL(gs_matrix_create(&A, ctx, H) == GS_SUCCESS);
        CU_ASSERT_FATAL(gs_matrix_device_csr(A, &D) == GS_SUCCESS);
        CU_ASSERT_FATAL(gs_select_matrix_hash_dev(ctx, &D, &got) == GS_SUCCESS);
        CU_ASSERT_EQUAL(got, gs_select_matrix_hash(H));
        CU_ASSERT_NOT_EQUAL(got, want);
        gs_matrix_destroy(&A);
        H->val[e] = v;
        H->col[e] = c;
      }
    }
    gs_csr_destroy(&H);
  }
}

/* The confident start: a staged selection on the 27-point Laplacian of 55^3 (4.4M entries, two
 * values) starts on what gs_select_confident_start names for its features (bccoo where it is
 * registered), a GPU-built format, and its product is the host's; the same stencil with random
 * values starts on a light format; revisions with many products left never leave the confident
 * start for a candidate slower by the switching margin, and every block is freed. */
static void test_confident(void)
{
  char cache[4608];
  snprintf(cache, sizeof cache, "%s/cache-confident", gs_test_tmpdir());
  for (int random_values = 0; random_values < 2; ++random_values) {
    uint64_t s = g_seed + 101u * (uint64_t)random_values;
    gs_csr_t *H = NULL;
    CU_ASSERT_FATAL(gs_gen_laplace(&H, 55, 55, 55, 27) == GS_SUCCESS);
    CU_ASSERT_FATAL((double)H->nnz >= GS_SELECT_CONFIDENT_NNZ);
    if (random_values)
      for (gs_off_t e = 0; e < H->nnz; ++e) H->val[e] *= 1.0 + gs_test_uniform(&s);
    size_t base = 0;
    gs_matrix_t *A = on_device(H, &base);
    gs_select_features_t f;
    gs_select_rule_t r, pool;
    CU_ASSERT_FATAL(gs_matrix_select_features(A, &f) == GS_SUCCESS);
    CU_ASSERT_FATAL(gs_select_rule(&f, NULL, 0, &r) == GS_SUCCESS);
    CU_ASSERT_FATAL(gs_select_pool(&f, NULL, 0, &r, &pool) == GS_SUCCESS);
    const int k = gs_select_confident_start(&f, &pool, "cusparse-csr");
    if (random_values) CU_ASSERT_EQUAL(k, -1);
    gs_select_opts_t so;
    gs_select_opts_default(&so);
    so.cache_dir = cache; /* a fresh folder: the two-valued run writes what the next reads */
    so.use_cache = !random_values;
    so.staged = 1;
    gs_spmv_t *S = NULL;
    CU_ASSERT_FATAL(gs_spmv_create_auto(&S, ctx, A, NULL, &so) == GS_SUCCESS);
    const gs_selection_t *sel = gs_spmv_selection(S);
    CU_ASSERT_FATAL(sel != NULL && sel->staged);
    const int b0 = gs_spmv_backend_find(sel->first_name);
    CU_ASSERT_FATAL(b0 >= 0);
    if (k >= 0) {
      CU_ASSERT_STRING_EQUAL(sel->first_name, pool.names[k]);
      CU_ASSERT(gs_spmv_backend_flags(b0) & GS_SPMV_FLAG_DEVICE_BUILD);
    } else {
      CU_ASSERT(gs_spmv_backend_flags(b0) & GS_SPMV_FLAG_LIGHT);
    }
    const int bccoo = gs_spmv_backend_find("bccoo") >= 0;
    if (!random_values && bccoo) CU_ASSERT_STRING_EQUAL(sel->first_name, "bccoo");
    for (int call = 0; call <= GS_SELECT_MAX; ++call) {
      int sw = -1;
      CU_ASSERT_FATAL(gs_spmv_auto_revise(S, 10 + call, 1e9, 1e12, &sw) == GS_SUCCESS);
    }
    const double tc = sel->times[sel->chosen].spmv_s;
    CU_ASSERT(sel->times[sel->chosen].status == GS_SUCCESS && tc > 0.0);
    for (int c = 0; c < sel->ntimes; ++c)
      if (sel->times[c].status == GS_SUCCESS)
        CU_ASSERT(sel->times[c].spmv_s > (1.0 - GS_SELECT_SWITCH_MARGIN) * tc);
    printf("\n    %s values: started %s, ended %s, %d tried, %d switch(es)",
           random_values ? "random" : "two", sel->first_name, sel->chosen_name, sel->tried,
           sel->switches);
    /* the product, against the host's */
    const gs_idx_t n = H->n;
    double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    double *d_x = NULL, *d_y = NULL;
    CU_ASSERT_FATAL(x && y);
    for (gs_idx_t i = 0; i < n; ++i) x[i] = 2.0 * gs_test_uniform(&s) - 1.0;
    CU_ASSERT_FATAL(gs_dmalloc(ctx, (void **)&d_x, (size_t)n * sizeof *d_x, "x") == GS_SUCCESS);
    CU_ASSERT_FATAL(gs_dmalloc(ctx, (void **)&d_y, (size_t)n * sizeof *d_y, "y") == GS_SUCCESS);
    CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_x, x, (size_t)n * sizeof *x) == GS_SUCCESS);
    apply(S, GS_OP_N, 1.0, d_x, 0.0, x, d_y, y, n);
    CU_ASSERT(gs_test_spmv_ok(H, GS_OP_N, 1.0, x, 0.0, x, y, "confident start"));
    gs_dfree(ctx, d_x);
    gs_dfree(ctx, d_y);
    free(x);
    free(y);
    gs_spmv_destroy(&S);
    CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
    if (!random_values && bccoo) {
      /* a second run of the same matrix: the cache knows only the confident start's times
       * (the first run never timed a light format), and that is a hit that starts on it with
       * its time known, so no revision times it again */
      CU_ASSERT_FATAL(gs_spmv_create_auto(&S, ctx, A, NULL, &so) == GS_SUCCESS);
      sel = gs_spmv_selection(S);
      CU_ASSERT_FATAL(sel != NULL && sel->staged && sel->chosen >= 0);
      CU_ASSERT_EQUAL(sel->cache, GS_SELECT_CACHE_HIT);
      CU_ASSERT_STRING_EQUAL(sel->first_name, "bccoo");
      CU_ASSERT(sel->times[sel->chosen].status == GS_SUCCESS &&
                sel->times[sel->chosen].spmv_s > 0.0);
      gs_spmv_destroy(&S);
      CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
    }
    gs_matrix_destroy(&A);
    gs_csr_destroy(&H);
  }
}

int main(void)
{
  g_seed = gs_test_seed();
  if (gs_device_count() > 0 && gs_context_create(&ctx, 0) != GS_SUCCESS) {
    fprintf(stderr, "context: %s\n", gs_last_error());
    return 1;
  }
  CU_TestInfo tests[] = {{"auto's y is the chosen backend's, bit for bit; cache hit",
                          test_auto_is_the_chosen_backend},
                         {"rule only, transpose, corrupt cache, unwritable folder", test_paths},
                         {"staged: light start, revisions, switch, cache, solve", test_staged},
                         {"the cache key's hash on the GPU equals the host's", test_hash_dev},
                         {"staged: the confident start (a stencil's value table)", test_confident},
                         CU_TEST_INFO_NULL};
  int rc = gs_test_main("select_gpu", tests, 1);
  gs_context_destroy(&ctx);
  return rc;
}
