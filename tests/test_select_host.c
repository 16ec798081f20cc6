/* tests/test_select_host.c: the "auto" format without a GPU: the rule stage (feature vectors in,
 * ranked candidates out: the paper's %nnz bands, their inclusive bounds, the irregular and banded
 * rows, refusals never selected, agreement with bench/select_fit.py on measured features), the
 * measured stage's decision (amortisation, ties, failures), the features (against independent counts), and the selection cache (hit, miss on changed
 * values, miss on another GPU name, corrupt file ignored with a warning, unwritable folder not
 * fatal), each in this process's own folder. */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "select/select_impl.h"
#include "gpusolve/io.h"
#include "gpusolve/spmv.h"
#include "tests/testutil.h"

static double threshold(const char *name)
{
  const char *n;
  double v;
  for (int k = 0; gs_select_threshold(k, &n, &v, NULL); ++k)
    if (!strcmp(n, name)) return v;
  CU_FAIL_FATAL("threshold missing");
  return NAN;
}

static int listed(const gs_select_rule_t *r, const char *name)
{
  for (int k = 0; k < r->n; ++k)
    if (!strcmp(r->names[k], name)) return 1;
  return 0;
}

/* A well-behaved matrix of a million rows: nothing refused, no row but the %nnz bands fires. */
static gs_select_features_t base_features(double pct)
{
  gs_select_features_t f;
  memset(&f, 0, sizeof f);
  f.rows = f.cols = 1000000;
  f.nnz = 20000000;
  f.pct_nnz = pct;
  f.row_mean = 20.0;
  f.row_std = 3.0;
  f.row_max = 30;
  f.diagonals = 5000;
  f.ell_slots = 1.5 * (double)f.nnz; /* under ell_fill and the default max_fill */
  f.dia_slots = 5000.0 * f.rows;      /* far over every fill limit */
  f.sell_slots = f.sell_total = 1.2 * (double)f.nnz;
  f.ell_fill = 1.5;
  f.dia_fill = f.dia_slots / (double)f.nnz;
  f.sell_fill = 1.2;
  f.distinct_values = GS_SELECT_DISTINCT_CAP + 1;
  return f;
}

static const char *first(const gs_select_features_t *f, const char *opts, int need_t)
{
  static gs_select_rule_t r;
  CU_ASSERT_FATAL(gs_select_rule(f, opts, need_t, &r) == GS_SUCCESS);
  return r.n > 0 ? r.names[0] : "";
}

static const char *row_of(const gs_select_features_t *f)
{
  static gs_select_rule_t r;
  CU_ASSERT_FATAL(gs_select_rule(f, NULL, 0, &r) == GS_SUCCESS);
  return r.row;
}

/* The paper's three bands, their upper bounds inclusive (S1 is [0, 0.00035]), each a different
 * row of the table; the irregular and banded rows before them, their bounds inclusive. */
static void test_rule_bands_and_ties(void)
{
  const double s1 = threshold("s1_pct"), s2 = threshold("s2_pct");
  gs_select_features_t f = base_features(0.5 * s1);
  const char *r1 = row_of(&f);
  CU_ASSERT(strstr(r1, "S1") != NULL);
  f = base_features(s1); /* on the bound: still S1 */
  CU_ASSERT_PTR_EQUAL(row_of(&f), r1);
  f = base_features(nextafter(s1, 1.0)); /* just over: S2 */
  const char *r2 = row_of(&f);
  CU_ASSERT(strstr(r2, "S2") != NULL);
  f = base_features(s2);
  CU_ASSERT_PTR_EQUAL(row_of(&f), r2);
  f = base_features(nextafter(s2, 1.0));
  const char *r3 = row_of(&f);
  CU_ASSERT(strstr(r3, "S3") != NULL);
  f = base_features(0.3); /* deep in S3 (the paper's pdb1HYS) */
  CU_ASSERT_PTR_EQUAL(row_of(&f), r3);
  /* the bands' first choices differ (the paper's CSR / HYB / ELL split, re-derived) */
  f = base_features(0.5 * s1);
  char c1[GS_SELECT_NAME];
  snprintf(c1, sizeof c1, "%s", first(&f, NULL, 0));
  f = base_features(s2);
  CU_ASSERT_STRING_NOT_EQUAL(first(&f, NULL, 0), c1);
  /* sigma over the outlier bound overrides the bands (the paper's HLW, IND), on it it does not */
  const double so = threshold("sigma_outlier"), cv = threshold("irregular_cv");
  f = base_features(0.3);
  f.row_mean = 1000.0; /* so that sigma / mu stays under irregular_cv */
  f.row_std = nextafter(so, INFINITY);
  const char *ri = row_of(&f);
  CU_ASSERT(strstr(ri, "irregular") != NULL);
  f.row_std = so;
  CU_ASSERT_PTR_EQUAL(row_of(&f), r3);
  /* sigma over irregular_cv * mu: the same row, on the bound not */
  f = base_features(0.3);
  f.row_std = nextafter(cv * f.row_mean, INFINITY);
  CU_ASSERT_PTR_EQUAL(row_of(&f), ri);
  f.row_std = cv * f.row_mean;
  CU_ASSERT_PTR_EQUAL(row_of(&f), r3);
  /* banded: DIA first while its fill is at most dia_fill (on the bound included), before the
   * irregular row */
  f = base_features(0.3);
  f.dia_slots = threshold("dia_fill") * (double)f.nnz;
  f.dia_fill = threshold("dia_fill");
  f.row_std = 10.0 * cv * f.row_mean;
  CU_ASSERT_STRING_EQUAL(first(&f, NULL, 0), "dia");
  f.dia_fill = nextafter(f.dia_fill, INFINITY);
  f.dia_slots = f.dia_fill * (double)f.nnz;
  CU_ASSERT_PTR_EQUAL(row_of(&f), ri);
}

/* The C rule against bench/select_fit.py's re-implementation, on the feature vectors measured
 * on H100 (tests/data/select_rule_cases.txt, written by `bench/select_fit.py JSON --cases`):
 * the same candidates in the same order, so that the script's fit is the C table's. */
static void test_rule_matches_fit_script(void)
{
  FILE *in = fopen(gs_test_data("select_rule_cases.txt"), "r");
  CU_ASSERT_PTR_NOT_NULL_FATAL(in);
  char line[1024];
  int cases = 0;
  while (fgets(line, sizeof line, in)) {
    if (line[0] == '#' || line[0] == '\n') continue;
    gs_select_features_t f;
    memset(&f, 0, sizeof f);
    char name[128];
    long long rows, cols, nnz, row_max, diagonals, distinct;
    int sym = 0, used = 0;
    CU_ASSERT_FATAL(sscanf(line,
                           "%127s %lld %lld %lld %lg %lg %lg %lld %lld %lg %lg %lg %lld %d :%n",
                           name, &rows, &cols, &nnz, &f.pct_nnz, &f.row_mean, &f.row_std,
                           &row_max, &diagonals, &f.ell_fill, &f.dia_fill, &f.sell_fill,
                           &distinct, &sym, &used) == 14);
    f.rows = (gs_idx_t)rows;
    f.cols = (gs_idx_t)cols;
    f.nnz = (gs_off_t)nnz;
    f.row_max = (gs_off_t)row_max;
    f.diagonals = (gs_idx_t)diagonals;
    f.distinct_values = (gs_off_t)distinct;
    f.symmetric = sym;
    f.ell_slots = f.ell_fill * (double)f.nnz; /* as the script compares them */
    f.dia_slots = f.dia_fill * (double)f.nnz;
    f.sell_slots = f.sell_total = f.sell_fill * (double)f.nnz;
    gs_select_rule_t r;
    CU_ASSERT_FATAL(gs_select_rule(&f, NULL, 0, &r) == GS_SUCCESS);
    char got[512] = "", *want = line + used;
    want += strspn(want, " ");
    want[strcspn(want, "\n")] = '\0';
    for (int k = 0; k < r.n; ++k)
      snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", k ? " " : "", r.names[k]);
    /* the script's list assumes every backend of the data registered; this build may lack one */
    int all_registered = 1;
    char copy[512];
    snprintf(copy, sizeof copy, "%s", want);
    for (char *t = strtok(copy, " "); t; t = strtok(NULL, " "))
      if (gs_spmv_backend_find(t) < 0) all_registered = 0;
    if (all_registered && strcmp(got, want) != 0) {
      CU_FAIL("the C rule and bench/select_fit.py disagree");
      fprintf(stderr, "  %s: C '%s', script '%s'\n", name, got, want);
    }
    ++cases;
  }
  fclose(in);
  CU_ASSERT(cases >= 20);
}

/* Refusals: a padded format whose fill is over its max_fill (default or given) is never a
 * candidate, whatever row fires; random feature vectors drawn fresh each run. */
static void test_rule_never_selects_refusals(void)
{
  uint64_t s = gs_test_seed() ^ 0x5e1ec7;
  const char *opts_list[] = {NULL, "max_fill=1.2", "dia.max_fill=1", "ell.max_fill=10",
                             "cusparse-sell.max_fill=1.05"};
  for (int trial = 0; trial < 4000; ++trial) {
    gs_select_features_t f;
    memset(&f, 0, sizeof f);
    f.rows = f.cols = 1 + (gs_idx_t)(gs_test_uniform(&s) * 2e6);
    f.nnz = 1 + (gs_off_t)(gs_test_uniform(&s) * 30.0 * f.rows);
    f.pct_nnz = 100.0 * (double)f.nnz / ((double)f.rows * f.cols);
    f.row_mean = (double)f.nnz / f.rows;
    f.row_std = gs_test_uniform(&s) * 400.0;
    f.row_max = (gs_off_t)ceil(f.row_mean * (1.0 + 4.0 * gs_test_uniform(&s)));
    f.diagonals = 1 + (gs_idx_t)(gs_test_uniform(&s) * 50);
    f.ell_slots = (double)f.rows * (double)f.row_max;
    f.dia_slots = (double)f.diagonals * (double)f.rows;
    f.sell_slots = f.sell_total = f.ell_slots * (0.5 + 0.5 * gs_test_uniform(&s));
    f.ell_fill = f.ell_slots / (double)f.nnz;
    f.dia_fill = f.dia_slots / (double)f.nnz;
    f.sell_fill = f.sell_slots / (double)f.nnz;
    f.distinct_values = (gs_off_t)(gs_test_uniform(&s) * 1000);
    const char *opts = opts_list[trial % 5];
    gs_select_rule_t r;
    CU_ASSERT_FATAL(gs_select_rule(&f, opts, trial % 7 == 0, &r) == GS_SUCCESS);
    CU_ASSERT(r.n >= 1 && r.n <= (int)threshold("max_candidates"));
    int bad = 0;
    for (int k = 0; k < r.n; ++k) {
      const int b = gs_spmv_backend_find(r.names[k]);
      if (b < 0) bad = 1; /* only registered backends */
      for (int q = 0; q < k; ++q)
        if (!strcmp(r.names[q], r.names[k])) bad = 1; /* no duplicates */
      if (trial % 7 == 0 && !(gs_spmv_backend_flags(b) & GS_SPMV_FLAG_TRANSPOSE)) bad = 1;
      double mf = 0.0;
      const char *key = "max_fill";
      if (!strcmp(r.names[k], "ell") || !strcmp(r.names[k], "dia") ||
          !strcmp(r.names[k], "cusparse-sell")) {
        /* the limit the backend would apply under these options */
        mf = gs_test_backend_option_default(r.names[k], key, 3.0);
        if (opts && !strncmp(opts, "max_fill=", 9)) mf = atof(opts + 9);
        char pre[64];
        snprintf(pre, sizeof pre, "%s.max_fill=", r.names[k]);
        if (opts && !strncmp(opts, pre, strlen(pre))) mf = atof(opts + strlen(pre));
      }
      if (!strcmp(r.names[k], "ell") && f.ell_slots > mf * (double)f.nnz) bad = 1;
      if (!strcmp(r.names[k], "dia") && f.dia_slots > mf * (double)f.nnz) bad = 1;
      if (!strcmp(r.names[k], "cusparse-sell") && f.sell_slots > mf * (double)f.nnz) bad = 1;
    }
    if (bad) {
      CU_FAIL("a candidate that would refuse, repeat or is not registered");
      fprintf(stderr, "  trial %d opts %s: %s\n", trial, opts ? opts : "-", r.names[0]);
      break;
    }
  }
  /* the banded row with DIA refusing: DIA is left out and the next of the row leads */
  gs_select_features_t f = base_features(0.3);
  f.dia_slots = 1.2 * (double)f.nnz;
  f.dia_fill = 1.2;
  gs_select_rule_t r;
  CU_ASSERT_FATAL(gs_select_rule(&f, "dia.max_fill=1.1", 0, &r) == GS_SUCCESS);
  CU_ASSERT(!listed(&r, "dia"));
  CU_ASSERT(strstr(r.excluded, "dia") != NULL);
  CU_ASSERT_STRING_EQUAL(r.names[0], "ell");
  /* ELL over the rule's ell_fill is left out even when max_fill would take it */
  f = base_features(0.3);
  f.ell_fill = threshold("ell_fill") * 1.01;
  f.ell_slots = f.ell_fill * (double)f.nnz;
  CU_ASSERT_FATAL(gs_select_rule(&f, "max_fill=100", 0, &r) == GS_SUCCESS);
  CU_ASSERT(!listed(&r, "ell"));
  /* a wide matrix keeps only backends with 64-bit offsets (csr-vector falls back regardless) */
  f = base_features(0.3);
  f.nnz = (gs_off_t)INT32_MAX + 1;
  if (gs_select_rule(&f, NULL, 0, &r) == GS_SUCCESS)
    for (int k = 0; k < r.n; ++k)
      CU_ASSERT(gs_spmv_backend_flags(gs_spmv_backend_find(r.names[k])) & GS_SPMV_FLAG_WIDE);
  /* bccoo: a candidate only when registered in this build, and then right after the first
   * choice when the values repeat */
  f = base_features(0.3);
  f.distinct_values = 3;
  CU_ASSERT_FATAL(gs_select_rule(&f, NULL, 0, &r) == GS_SUCCESS);
  if (gs_spmv_backend_find("bccoo") >= 0) {
    CU_ASSERT_STRING_EQUAL(r.names[1], "bccoo");
  } else {
    CU_ASSERT(!listed(&r, "bccoo"));
  }
  /* errors */
  CU_ASSERT_EQUAL(gs_select_rule(NULL, NULL, 0, &r), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_select_rule(&f, NULL, 0, NULL), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_select_rule(&f, "max_fill=abc", 0, &r), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_select_rule(&f, "nosuch=1", 0, &r), GS_ERR_INVALID_ARG);
}

/* The measured stage's next candidate: the least prediction, the pool's order among those within
 * GS_SELECT_PRED_TIE of it, only eligible ones; the normal-rows miss (H200, 2026-11-29) as a
 * regression case: bccoo's compressed bound 1% under the rule's hyb took the budget first. */
static void test_next_candidate(void)
{
  uint64_t st = gs_test_seed() ^ 0x6e657874ull;
  enum { N = 12 };
  double pred[N];
  int elig[N];
  for (int rep = 0; rep < 200; ++rep) {
    const int n = 1 + (int)(gs_test_uniform(&st) * N);
    double least = INFINITY;
    int any = 0;
    for (int k = 0; k < n; ++k) {
      pred[k] = 1e-3 + gs_test_uniform(&st) * 1e-2;
      elig[k] = gs_test_uniform(&st) < 0.7;
      if (elig[k]) {
        any = 1;
        if (pred[k] < least) least = pred[k];
      }
    }
    const int c = gs_select_next_candidate(pred, elig, n);
    if (!any) {
      CU_ASSERT_EQUAL(c, -1);
      continue;
    }
    CU_ASSERT_FATAL(c >= 0 && c < n);
    CU_ASSERT(elig[c]);
    CU_ASSERT(pred[c] <= least * (1.0 + GS_SELECT_PRED_TIE));
    for (int k = 0; k < c; ++k) /* nothing earlier qualified */
      CU_ASSERT(!elig[k] || pred[k] > least * (1.0 + GS_SELECT_PRED_TIE));
  }
  /* normal rows: pool cusparse-csr (measured), hyb, ell, csr5, bccoo (byte bounds 129.3,
   * 129.3, 131.1, 128.0 us over 200 products, prepares 0.4, 0.4, 0.5, 1.0 ms) */
  const double p2[5] = {0.0, 0.4e-3 + 200 * 129.3e-6, 0.4e-3 + 200 * 129.3e-6,
                        0.5e-3 + 200 * 131.1e-6, 1.0e-3 + 200 * 126.0e-6};
  const int e2[5] = {0, 1, 1, 1, 1};
  CU_ASSERT_EQUAL(gs_select_next_candidate(p2, e2, 5), 1); /* hyb, not bccoo */
  /* a bound far below the others still goes first (lap27's bccoo: one-byte values) */
  const double p3[3] = {0.0, 0.4e-3 + 200 * 100e-6, 1.4e-3 + 200 * 40e-6};
  const int e3[3] = {0, 1, 1};
  CU_ASSERT_EQUAL(gs_select_next_candidate(p3, e3, 3), 2);
  const double p4[2] = {INFINITY, INFINITY}; /* no prediction: the pool's order */
  const int e4[2] = {0, 1};
  CU_ASSERT_EQUAL(gs_select_next_candidate(p4, e4, 2), 1);
}

/* A solve's revision tries the most promising deferred candidate first and waits for its
 * trigger rather than build a lesser one (the 27-point Laplacian on the H200 built dia, 61.5 us,
 * before bccoo, 41.9 us, whose bound then skips dia); one that cannot pay back what is left
 * gives way to the next; none eligible, none tried. Times in seconds. */
static void test_staged_pick(void)
{
  const double t_cur = 115e-6, remaining = 1000.0;
  /* pool order: dia (prepare 0.8 ms, bound 65 us), then bccoo (1.0 ms, 30 us) */
  const int e[2] = {1, 1};
  const double prep[2] = {0.8e-3, 1.0e-3}, bound[2] = {65e-6, 30e-6};
  /* 0.9 ms spent pays dia's build but not bccoo's: bccoo is the more promising, nothing yet */
  CU_ASSERT_EQUAL(gs_select_staged_pick(2, e, prep, bound, 0.9e-3, 0.0, remaining, t_cur), -1);
  CU_ASSERT_EQUAL(gs_select_staged_pick(2, e, prep, bound, 1.1e-3, 0.0, remaining, t_cur), 1);
  /* what the tries cost already counts: 0.3 ms tried, 1.1 ms spent is not enough */
  CU_ASSERT_EQUAL(gs_select_staged_pick(2, e, prep, bound, 1.1e-3, 0.3e-3, remaining, t_cur), -1);
  /* bccoo measured (not eligible): dia next once paid for */
  const int e1[2] = {1, 0};
  CU_ASSERT_EQUAL(gs_select_staged_pick(2, e1, prep, bound, 1.1e-3, 0.0, remaining, t_cur), 0);
  /* near convergence nothing pays back (5 products left) */
  CU_ASSERT_EQUAL(gs_select_staged_pick(2, e, prep, bound, 1.0, 0.0, 5.0, t_cur), -1);
  /* none eligible */
  const int e0[2] = {0, 0};
  CU_ASSERT_EQUAL(gs_select_staged_pick(2, e0, prep, bound, 1.0, 0.0, remaining, t_cur), -1);
  /* near equals (within GS_SELECT_PRED_TIE) take the pool's order; the first cannot pay back
   * (1000 x 100 us = 100 ms against 98.8 + 12 x 0.1 ms), so the second goes: t_cur 100 us */
  const double pt[2] = {98.8e-3, 97e-3}, bt[2] = {0.0, 0.0};
  CU_ASSERT(pt[0] <= pt[1] * (1.0 + GS_SELECT_PRED_TIE));
  CU_ASSERT_EQUAL(gs_select_staged_pick(2, e, pt, bt, 0.2, 0.0, remaining, 100e-6), 1);
}

/* The features of the 27-point Laplacian on 100^3 (26.5M entries, two values), as the GPU pass
 * gives them. */
static gs_select_features_t lap27_features(void)
{
  gs_select_features_t f;
  memset(&f, 0, sizeof f);
  f.rows = f.cols = 1000000;
  f.nnz = 26463592;
  f.pct_nnz = 100.0 * (double)f.nnz / 1e12;
  f.row_mean = 26.46;
  f.row_std = 2.16;
  f.row_max = 27;
  f.diagonals = 27;
  f.ell_slots = f.dia_slots = 27e6;
  f.sell_slots = f.sell_total = 26.66e6;
  f.ell_fill = f.dia_fill = f.ell_slots / (double)f.nnz;
  f.sell_fill = f.sell_slots / (double)f.nnz;
  f.distinct_values = 2;
  f.symmetric = 1;
  return f;
}

/* The confident start of a solve: bccoo's value table on the 27-point Laplacian's features
 * (a fifth of CSR's bytes), not where the values do not repeat (its float model, 0.44 of CSR's,
 * is above the share), not under GS_SELECT_CONFIDENT_NNZ entries, not from a pool without it;
 * and what it returns is always a format built on the GPU within the share. */
static void test_confident_start(void)
{
  const gs_select_features_t f = lap27_features();
  gs_select_rule_t r, pool;
  CU_ASSERT_FATAL(gs_select_rule(&f, NULL, 0, &r) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_select_pool(&f, NULL, 0, &r, &pool) == GS_SUCCESS);
  const int k = gs_select_confident_start(&f, &pool, "cusparse-csr");
  if (gs_spmv_backend_find("bccoo") < 0) {
    CU_ASSERT_EQUAL(k, -1); /* nothing else reaches the share on these features */
  } else {
    CU_ASSERT_FATAL(k >= 0 && k < pool.n);
    CU_ASSERT_STRING_EQUAL(pool.names[k], "bccoo");
  }
  if (k >= 0) {
    const int b = gs_spmv_backend_find(pool.names[k]);
    CU_ASSERT(gs_spmv_backend_flags(b) & GS_SPMV_FLAG_DEVICE_BUILD);
    CU_ASSERT(!(gs_spmv_backend_flags(b) & GS_SPMV_FLAG_LIGHT));
    CU_ASSERT(gs_select_bytes_bound(pool.names[k], &f) <=
              GS_SELECT_CONFIDENT_BYTES * gs_select_bytes_bound("cusparse-csr", &f));
  }
  /* values that do not repeat: bccoo's model is 5 bytes an entry, over the share */
  gs_select_features_t g = f;
  g.distinct_values = GS_SELECT_DISTINCT_CAP + 1;
  CU_ASSERT_FATAL(gs_select_rule(&g, NULL, 0, &r) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_select_pool(&g, NULL, 0, &r, &pool) == GS_SUCCESS);
  CU_ASSERT_EQUAL(gs_select_confident_start(&g, &pool, "cusparse-csr"), -1);
  /* a smaller matrix of the same kind: a build is too many products there */
  g = f;
  g.nnz = (gs_off_t)(GS_SELECT_CONFIDENT_NNZ - 1.0);
  g.rows = g.cols = (gs_idx_t)(g.nnz / 27);
  CU_ASSERT_FATAL(gs_select_rule(&g, NULL, 0, &r) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_select_pool(&g, NULL, 0, &r, &pool) == GS_SUCCESS);
  CU_ASSERT_EQUAL(gs_select_confident_start(&g, &pool, "cusparse-csr"), -1);
  /* a pool of light formats only; an unknown light format; NULL arguments */
  gs_select_rule_t lights;
  memset(&lights, 0, sizeof lights); /* gs_select_light appends */
  CU_ASSERT_FATAL(gs_select_light(NULL, 0, &lights) == GS_SUCCESS);
  CU_ASSERT_EQUAL(gs_select_confident_start(&f, &lights, "cusparse-csr"), -1);
  CU_ASSERT_EQUAL(gs_select_confident_start(&f, &pool, "no-such-format"), -1);
  CU_ASSERT_EQUAL(gs_select_confident_start(NULL, &pool, "cusparse-csr"), -1);
}

/* prepare + products * t: exact costs of binary fractions, the earlier of equals, failures out. */
static void test_decide(void)
{
  gs_select_time_t t[3];
  memset(t, 0, sizeof t);
  snprintf(t[0].name, sizeof t[0].name, "slow-build");
  t[0].prepare_s = 0.5;   /* a costly layout ... */
  t[0].spmv_s = 0.0625;   /* ... that is fast */
  snprintf(t[1].name, sizeof t[1].name, "cheap-build");
  t[1].prepare_s = 0.0;
  t[1].spmv_s = 0.125;
  snprintf(t[2].name, sizeof t[2].name, "failed");
  t[2].status = GS_ERR_FORMAT_FILL;
  /* break-even at products = 0.5 / (0.125 - 0.0625) = 8 */
  CU_ASSERT_EQUAL(gs_select_decide(t, 3, 4.0, 0.0), 1);
  CU_ASSERT_EQUAL(t[1].cost_s, 0.5);
  CU_ASSERT_EQUAL(t[0].cost_s, 0.75);
  CU_ASSERT(isinf(t[2].cost_s));
  CU_ASSERT_EQUAL(gs_select_decide(t, 3, 8.0, 0.0), 0); /* a tie (1.0 = 1.0): the better-ranked */
  CU_ASSERT_EQUAL(gs_select_decide(t, 3, 16.0, 0.0), 0);
  t[0].status = GS_ERR_CUDA;
  CU_ASSERT_EQUAL(gs_select_decide(t, 3, 16.0, 0.0), 1);
  t[1].status = GS_ERR_CUDA;
  CU_ASSERT_EQUAL(gs_select_decide(t, 3, 16.0, 0.0), -1);
  CU_ASSERT_EQUAL(gs_select_decide(NULL, 3, 16.0, 0.0), -1);
  CU_ASSERT_EQUAL(gs_select_decide(t, 0, 16.0, 0.0), -1);
  /* A^T x products weigh in: a fast op N with a slow op T loses once they count (issue 33:
   * `spmv --transpose` timed op N only and picked csr-scalar, 0.20x cuSPARSE on op T) */
  t[0].status = t[1].status = GS_SUCCESS;
  t[0].prepare_s = t[1].prepare_s = 0.0;
  t[0].spmv_s = 0.0625;
  t[0].spmv_t_s = 0.5;
  t[1].spmv_s = 0.125;
  t[1].spmv_t_s = 0.125;
  CU_ASSERT_EQUAL(gs_select_decide(t, 3, 16.0, 0.0), 0);
  CU_ASSERT_EQUAL(gs_select_decide(t, 3, 16.0, 16.0), 1);
  CU_ASSERT_EQUAL(t[0].cost_s, 16.0 * 0.0625 + 16.0 * 0.5);
  CU_ASSERT_EQUAL(t[1].cost_s, 4.0);
}

/* Features against independent counts: fills from their definitions, distinct values by sorting. */
static int cmp_dbl(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void test_features(void)
{
  uint64_t s = gs_test_seed() ^ 0xfea7;
  for (int trial = 0; trial < 20; ++trial) {
    const gs_idx_t m = 1 + (gs_idx_t)(gs_test_uniform(&s) * 300);
    const gs_idx_t n = 1 + (gs_idx_t)(gs_test_uniform(&s) * 300);
    gs_csr_t *A = gs_test_random_csr(&s, m, n, 0.02 + 0.2 * gs_test_uniform(&s));
    const int K = 1 + (int)(gs_test_uniform(&s) * 40); /* values from a set of K */
    for (gs_off_t p = 0; p < A->nnz; ++p) A->val[p] = (double)(1 + (int)(gs_test_uniform(&s) * K));
    gs_select_features_t f;
    CU_ASSERT_FATAL(gs_select_features(A, &f) == GS_SUCCESS);
    /* independent: longest row, diagonals by marking, slices of 32 */
    gs_off_t rmax = 0;
    int64_t sell = 0;
    char *diag = calloc((size_t)m + n, 1);
    int ndiag = 0;
    for (gs_idx_t i = 0; i < m; ++i) {
      const gs_off_t len = A->row_ptr[i + 1] - A->row_ptr[i];
      if (len > rmax) rmax = len;
      for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p)
        if (!diag[A->col[p] - i + m - 1]++) ndiag++;
    }
    for (gs_idx_t lo = 0; lo < m; lo += 32) {
      gs_off_t w = 0;
      for (gs_idx_t i = lo; i < m && i < lo + 32; ++i)
        if (A->row_ptr[i + 1] - A->row_ptr[i] > w) w = A->row_ptr[i + 1] - A->row_ptr[i];
      sell += (int64_t)((m - lo < 32 ? m - lo : 32)) * w;
    }
    free(diag);
    double *v = malloc(((size_t)A->nnz + 1) * sizeof *v);
    memcpy(v, A->val, (size_t)A->nnz * sizeof *v);
    qsort(v, (size_t)A->nnz, sizeof *v, cmp_dbl);
    gs_off_t distinct = 0;
    for (gs_off_t p = 0; p < A->nnz; ++p) distinct += p == 0 || v[p] != v[p - 1];
    free(v);
    CU_ASSERT_EQUAL(f.row_max, rmax);
    CU_ASSERT_EQUAL(f.diagonals, ndiag);
    CU_ASSERT_EQUAL(f.ell_slots, (double)m * (double)rmax);
    CU_ASSERT_EQUAL(f.dia_slots, (double)ndiag * (double)m);
    CU_ASSERT_EQUAL(f.sell_slots, (double)sell);
    CU_ASSERT_EQUAL(f.distinct_values, distinct);
    CU_ASSERT_DOUBLE_EQUAL(f.pct_nnz, 100.0 * (double)A->nnz / ((double)m * n),
                           1e-15 * f.pct_nnz);
    gs_csr_destroy(&A);
  }
  /* the count stops past its cap */
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_gen_random(&A, 1000, 1000, 80, 7) == GS_SUCCESS); /* 80000 random values */
  gs_select_features_t f;
  CU_ASSERT_FATAL(gs_select_features(A, &f) == GS_SUCCESS);
  CU_ASSERT_EQUAL(f.distinct_values, GS_SELECT_DISTINCT_CAP + 1);
  gs_csr_destroy(&A);
  CU_ASSERT_EQUAL(gs_select_features(NULL, &f), GS_ERR_INVALID_ARG);
}

/* ---- the cache ------------------------------------------------------------------------------- */

static void fill_times(gs_selection_t *sel, const gs_select_rule_t *r, uint64_t *s)
{
  sel->ntimes = r->n;
  for (int c = 0; c < r->n; ++c) {
    snprintf(sel->times[c].name, sizeof sel->times[c].name, "%s", r->names[c]);
    sel->times[c].status = c == 1   ? GS_ERR_FORMAT_FILL
                           : c == 2 ? GS_SELECT_DEFERRED /* a staged selection's unmeasured */
                                    : GS_SUCCESS;
    sel->times[c].prepare_s = 1e-3 * gs_test_uniform(s);
    sel->times[c].spmv_s = 1e-5 * gs_test_uniform(s);
  }
}

/* The staged selection's arithmetic (select/select_impl.h): the products left from the residual's
 * recent rate, the prepare model and the decisions, on random inputs. */
static void test_staged(void)
{
  uint64_t s = gs_test_seed() ^ 0x57a9ed;
  const double eps = DBL_EPSILON;
  for (int trial = 0; trial < 2000; ++trial) {
    const long maxit = 10 + (long)(gs_test_uniform(&s) * 10000);
    const long it = 1 + (long)(gs_test_uniform(&s) * (double)(maxit - 1));
    const long it0 = (long)(gs_test_uniform(&s) * (double)it); /* the window's start, < it */
    const double ppi = 1.0 + (double)(trial % 3);
    const double r0 = pow(10.0, 4.0 * gs_test_uniform(&s) - 2.0);
    const double r = r0 * pow(10.0, -6.0 * gs_test_uniform(&s));
    const double tol = r0 * pow(10.0, -12.0 * gs_test_uniform(&s));
    const double left = (double)(maxit - it) * ppi,
                 got = gs_select_remaining_products(it0, r0, it, r, tol, maxit, ppi);
    CU_ASSERT(got >= 0.0 && got <= left);
    if (r <= tol) {
      CU_ASSERT_EQUAL(got, 0.0);
    } else if (r < r0) {
      /* the same two logarithms; the library forms (a / (b / w)) * ppi, this ((ppi * w) * a) / b
       * with ppi * w exact: three roundings each, within (1 + u)^6 - 1 < 7u relatively */
      const double a = log(r / tol), b = log(r0 / r), w = (double)(it - it0);
      const double want = fmin(left, ((ppi * w) * a) / b);
      CU_ASSERT(fabs(got - want) <= 7.0 * eps * want);
    } else {
      CU_ASSERT_EQUAL(got, left); /* no decrease over the window: as many as the limit allows */
    }
    /* stagnation: the limit; no window: no data */
    if (r0 * 1.5 > tol)
      CU_ASSERT_EQUAL(gs_select_remaining_products(it0, r0, it, r0 * 1.5, tol, maxit, ppi), left);
    CU_ASSERT_EQUAL(gs_select_remaining_products(it, r0, it, r, tol, maxit, ppi), 0.0);
    /* the decisions */
    const double t_cur = 1e-6 * (1.0 + 100.0 * gs_test_uniform(&s));
    const double rem = 1e4 * gs_test_uniform(&s);
    const double prep = 1e-3 * gs_test_uniform(&s);
    const double spent = 1e-2 * gs_test_uniform(&s), tried = 1e-3 * gs_test_uniform(&s);
    const double bound = t_cur * 1.5 * gs_test_uniform(&s);
    CU_ASSERT_EQUAL(gs_select_should_try(spent, tried, prep, rem, t_cur, bound),
                    tried + prep <= spent && bound < t_cur &&
                        rem * (t_cur - bound) > prep + GS_SELECT_MEASURE_PRODUCTS * t_cur);
    const double t_new = t_cur * 2.0 * gs_test_uniform(&s);
    CU_ASSERT_EQUAL(gs_select_worth_switching(prep, t_new, t_cur, rem),
                    t_new > 0.0 && t_new <= (1.0 - GS_SELECT_SWITCH_MARGIN) * t_cur &&
                        rem * (t_cur - t_new) > prep);
    const double inc = 1e-2 * gs_test_uniform(&s), n = 1e3 * gs_test_uniform(&s);
    CU_ASSERT_EQUAL(gs_select_worth_measuring(prep, bound, n, inc), prep + n * bound < inc);
  }
  /* a slower or equal candidate is never taken, even free; no products left: never */
  CU_ASSERT_FALSE(gs_select_worth_switching(0.0, 1e-5, 1e-5, 1e9));
  CU_ASSERT_FALSE(gs_select_worth_switching(0.0, 0.99e-5, 1e-5, 1e9)); /* within the margin */
  CU_ASSERT_TRUE(gs_select_worth_switching(0.0, 0.5e-5, 1e-5, 1.0));
  CU_ASSERT_FALSE(gs_select_worth_switching(0.0, 0.5e-5, 1e-5, 0.0));
  CU_ASSERT_FALSE(gs_select_should_try(1.0, 0.0, 0.0, 0.0, 1e-5, 0.0));
  CU_ASSERT_TRUE(gs_select_worth_measuring(1e9, 1.0, 1.0, INFINITY)); /* nothing measured yet */
  /* the prepare model: light cheaper than built on the GPU, cheaper than built on the host,
   * growing with the entries */
  for (double nnz = 1.0; nnz < 1e10; nnz *= 7.0) {
    const double l = gs_select_prepare_estimate(GS_SPMV_FLAG_LIGHT, nnz, 0.0);
    const double d = gs_select_prepare_estimate(GS_SPMV_FLAG_DEVICE_BUILD, nnz, 0.0);
    const double b = gs_select_prepare_estimate(GS_SPMV_FLAG_HOST_LAYOUT, nnz, 0.0);
    CU_ASSERT(l > 0.0 && l < d && d < b);
    CU_ASSERT(gs_select_prepare_estimate(0, 2.0 * nnz, 0.0) > b);
  }
}

static int in_rule(const gs_select_rule_t *r, const char *name)
{
  for (int c = 0; c < r->n; ++c)
    if (!strcmp(r->names[c], name)) return 1;
  return 0;
}

/* Issue 33's two misses, replayed on the host with their measured figures (H100):
 * 1. the default solve of G3_circuit (7.66M entries, 1.58M rows, 6,599 CG iterations at 65 us
 *    a cusparse-csr product) never tried bccoo: the forecast took the mean rate since iteration
 *    0 (781 products left at iteration 1000 of 6,599) and the try needed a forecast 5x its
 *    prepare. The recent window forecasts the tail, and the spent-time trigger tries a GPU-built
 *    candidate within the first few dozen iterations.
 * 2. `spmv --format auto` on the 27-point Laplacian (26.5M entries, cusparse-csr 135.5 us)
 *    built dia, bccoo and ell on the host (0.8 s) for 100 products: those builds are now skipped
 *    by their predicted prepare, and the pool holds cusparse-csr and csr-vector, which the rule's
 *    cut to four candidates left out. */
static void test_issue33_misses(void)
{
  /* 1: CG's residual drops 4 decades in 100 iterations, then 1e-4 a 6,499 (rate of the tail) */
  const double r0 = 1.0, tol = 1e-8, tail = log(1e4) / 6499.0;
  const long it = 1000, maxit = 100000;
  const double r_at = 1e-4 * exp(-tail * (double)(it - 100));
  const double mean_rate = gs_select_remaining_products(0, r0, it, r_at, tol, maxit, 1.0);
  const long w0 = it - it / 4;
  const double r_w0 = 1e-4 * exp(-tail * (double)(w0 - 100));
  const double recent = gs_select_remaining_products(w0, r_w0, it, r_at, tol, maxit, 1.0);
  CU_ASSERT(mean_rate < 1000.0);                          /* the old forecast: far too short */
  CU_ASSERT(fabs(recent - 5599.0) <= 1e-6 * 5599.0);     /* the tail: 6,599 - 1,000 left */
  const double t_cur = 65e-6, nnz = 7.66e6;
  const double prep = gs_select_prepare_estimate(GS_SPMV_FLAG_DEVICE_BUILD, nnz, 0.0);
  const double bound = t_cur * 0.5; /* bccoo's bytes: under half of CSR's */
  int first = -1;
  for (int k = 1; k <= 200 && first < 0; ++k)
    if (gs_select_should_try((double)k * t_cur, 0.0, prep, 6599.0 - k, t_cur, bound)) first = k;
  CU_ASSERT(first > 0 && first <= 50);
  /* near convergence it stops trying: 10 products left cannot pay a build back */
  CU_ASSERT_FALSE(gs_select_should_try(1.0, 0.0, prep, 10.0, t_cur, bound));

  /* 2: the Laplacian's features: dia, ell, bccoo at the host builders' predicted cost cannot
   * beat 200 cusparse-csr products (op N and T of --runs 100); built on the GPU they can */
  const gs_select_features_t f = lap27_features();
  gs_select_rule_t r, pool;
  CU_ASSERT_FATAL(gs_select_rule(&f, NULL, 1, &r) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_select_pool(&f, NULL, 1, &r, &pool) == GS_SUCCESS);
  int at_cusparse = -1, at_vector = -1, at_dia = -1, at_adaptive = -1;
  for (int c = 0; c < pool.n; ++c) {
    if (!strcmp(pool.names[c], "cusparse-csr")) at_cusparse = c;
    if (!strcmp(pool.names[c], "csr-vector")) at_vector = c;
    if (!strcmp(pool.names[c], "dia")) at_dia = c;
    if (!strcmp(pool.names[c], "csr-adaptive")) at_adaptive = c;
    const int b = gs_spmv_backend_find(pool.names[c]);
    CU_ASSERT(b >= 0 && (gs_spmv_backend_flags(b) & GS_SPMV_FLAG_TRANSPOSE)); /* op T needed */
    if (c > 0 && c < pool.n - 1 && (gs_spmv_backend_flags(b) & GS_SPMV_FLAG_LIGHT) &&
        !in_rule(&r, pool.names[c])) /* the other light ones last */
      CU_ASSERT(gs_spmv_backend_flags(gs_spmv_backend_find(pool.names[c + 1])) &
                GS_SPMV_FLAG_LIGHT);
  }
  /* the baseline first, then the rule's candidates in its order */
  CU_ASSERT(at_cusparse == 0 && at_vector > 0 && at_dia >= 1);
  for (int c = 0; c < r.n; ++c) CU_ASSERT_STRING_EQUAL(pool.names[1 + c], r.names[c]);
  CU_ASSERT_EQUAL(at_adaptive, -1); /* no A^T x */
  CU_ASSERT(r.n <= 4 && pool.n > r.n);
  const double incumbent = 200.0 * 135.5e-6;
  const double bw = (12.0 * (double)f.nnz + 4e6 + 16e6) / 135.5e-6; /* cusparse-csr's */
  const double dia_bound = gs_select_bytes_bound("dia", &f) / (1.3 * bw);
  CU_ASSERT(dia_bound > 0.0 && dia_bound < 135.5e-6);
  CU_ASSERT_FALSE(gs_select_worth_measuring(
      gs_select_prepare_estimate(GS_SPMV_FLAG_HOST_LAYOUT, (double)f.nnz, 0.0), dia_bound,
      200.0 + 2.0 * GS_SELECT_MEASURE_PRODUCTS, incumbent));
  CU_ASSERT_TRUE(gs_select_worth_measuring(
      gs_select_prepare_estimate(GS_SPMV_FLAG_DEVICE_BUILD, (double)f.nnz, 0.0), dia_bound,
      200.0 + 2.0 * GS_SELECT_MEASURE_PRODUCTS, incumbent));
  /* bccoo's value table: the fewest bytes of all */
  CU_ASSERT(gs_select_bytes_bound("bccoo", &f) < gs_select_bytes_bound("dia", &f));
  CU_ASSERT_EQUAL(gs_select_bytes_bound("no-such-format", &f), 0.0);
  /* pkt keeps its ordering on the host: never predicted as a GPU build */
  const unsigned dev = GS_SPMV_FLAG_DEVICE_BUILD;
  const int pkt = gs_spmv_backend_find("pkt");
  if (pkt >= 0)
    CU_ASSERT(gs_select_prepare_estimate(gs_spmv_backend_flags(pkt), (double)f.nnz, 0.0) >
              100.0 * gs_select_prepare_estimate(dev, (double)f.nnz, 0.0));
}

/* The prepare model learned from measured builds: per GPU and version, the larger rate kept, a
 * rate 4x lower replaces it, small matrices teach nothing, another GPU knows nothing. */
static void test_prepare_model(void)
{
  char dir[4608];
  snprintf(dir, sizeof dir, "%s/model-a", gs_test_tmpdir());
  CU_ASSERT_EQUAL(gs_select_model_load(dir, "GPU A", "dia"), 0.0);
  gs_select_model_store(dir, "GPU A", "dia", 2e-3, 2e7);
  CU_ASSERT_EQUAL(gs_select_model_load(dir, "GPU A", "dia"), 2e-3 / 2e7);
  gs_select_model_store(dir, "GPU A", "dia", 3e-3, 2e7); /* slower: kept */
  CU_ASSERT_EQUAL(gs_select_model_load(dir, "GPU A", "dia"), 3e-3 / 2e7);
  gs_select_model_store(dir, "GPU A", "dia", 2.5e-3, 2e7); /* within 4x: the larger stays */
  CU_ASSERT_EQUAL(gs_select_model_load(dir, "GPU A", "dia"), 3e-3 / 2e7);
  gs_select_model_store(dir, "GPU A", "dia", 0.5e-3, 2e7); /* 6x faster: replaces it */
  CU_ASSERT_EQUAL(gs_select_model_load(dir, "GPU A", "dia"), 0.5e-3 / 2e7);
  gs_select_model_store(dir, "GPU A", "ell", 1.0, 1000.0); /* too small to teach */
  CU_ASSERT_EQUAL(gs_select_model_load(dir, "GPU A", "ell"), 0.0);
  gs_select_model_store(dir, "GPU A", "ell", 1e-3, 1e7);
  CU_ASSERT_EQUAL(gs_select_model_load(dir, "GPU A", "dia"), 0.5e-3 / 2e7); /* merged */
  CU_ASSERT_EQUAL(gs_select_model_load(dir, "GPU B", "dia"), 0.0);
  /* the estimate follows what was learned */
  const double nnz = 2e7, learned = gs_select_model_load(dir, "GPU A", "dia");
  CU_ASSERT(gs_select_prepare_estimate(GS_SPMV_FLAG_DEVICE_BUILD, nnz, learned) <
            gs_select_prepare_estimate(GS_SPMV_FLAG_DEVICE_BUILD, nnz, 1e-9));
}

/* Asks the cache for r's formats (every entry deferred), op N only. */
static int load(const char *dir, const gs_select_key_t *k, const gs_select_rule_t *r,
                gs_selection_t *got, int need_t)
{
  memset(got, 0, sizeof *got);
  got->ntimes = r->n;
  for (int c = 0; c < r->n; ++c) {
    snprintf(got->times[c].name, sizeof got->times[c].name, "%s", r->names[c]);
    got->times[c].status = GS_SELECT_DEFERRED;
  }
  return gs_select_cache_load(dir, k, need_t, got);
}

static void test_cache(void)
{
  uint64_t s = gs_test_seed() ^ 0xcac4e;
  char dir[4608];
  snprintf(dir, sizeof dir, "%s/cache-a/gpusolve", gs_test_tmpdir()); /* created by the store */
  gs_csr_t *A = gs_test_random_csr(&s, 200, 200, 0.05);
  gs_select_features_t f;
  gs_select_rule_t r;
  CU_ASSERT_FATAL(gs_select_features(A, &f) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_select_rule(&f, NULL, 0, &r) == GS_SUCCESS);
  gs_select_key_t k;
  memset(&k, 0, sizeof k);
  k.matrix_hash = gs_select_matrix_hash(A);
  snprintf(k.gpu, sizeof k.gpu, "Test GPU A");
  gs_selection_t w, got;
  memset(&w, 0, sizeof w);
  fill_times(&w, &r, &s);

  /* miss on an empty folder, then hit with the same times, bit for bit */
  memset(&got, 0, sizeof got);
  CU_ASSERT_EQUAL(load(dir, &k, &r, &got, 0), 0);
  CU_ASSERT_STRING_EQUAL(got.warning, "");
  gs_select_cache_store(dir, &k, &w);
  CU_ASSERT_STRING_EQUAL(w.warning, "");
  CU_ASSERT(strlen(w.cache_file) > 0 && access(w.cache_file, R_OK) == 0);
  CU_ASSERT_EQUAL(load(dir, &k, &r, &got, 0), r.n - 1); /* all but the deferred one */
  CU_ASSERT_EQUAL(got.ntimes, r.n);
  for (int c = 0; c < r.n; ++c) {
    CU_ASSERT_STRING_EQUAL(got.times[c].name, r.names[c]);
    CU_ASSERT_EQUAL(got.times[c].status, w.times[c].status);
    if (w.times[c].status == GS_SUCCESS) {
      CU_ASSERT_EQUAL(got.times[c].prepare_s, w.times[c].prepare_s); /* %.17g round trip */
      CU_ASSERT_EQUAL(got.times[c].spmv_s, w.times[c].spmv_s);
    }
  }
  CU_ASSERT_STRING_EQUAL(got.warning, "");
  /* op T: no time known, so a caller that needs it measures the format again */
  CU_ASSERT_EQUAL(load(dir, &k, &r, &got, 1), 1); /* only the failed one: no time to need */
  /* one command's op T times merge with another's op N ones: a later store without them
   * keeps them (one cache shared by spmv, select and solve) */
  gs_selection_t wt = w;
  wt.times[0].spmv_t_s = 3e-5;
  gs_select_cache_store(dir, &k, &wt);
  gs_selection_t wn = w;
  wn.ntimes = 1; /* a run that knew only the first format, op N */
  wn.times[0].spmv_s = 2e-5;
  gs_select_cache_store(dir, &k, &wn);
  CU_ASSERT_EQUAL(load(dir, &k, &r, &got, 1), 2);
  CU_ASSERT_EQUAL(got.times[0].spmv_s, 2e-5);
  CU_ASSERT_EQUAL(got.times[0].spmv_t_s, 3e-5);
  CU_ASSERT_EQUAL(load(dir, &k, &r, &got, 0), r.n - 1); /* the others are still there */
  CU_ASSERT_EQUAL(got.times[1].status, w.times[1].status);
  gs_select_cache_store(dir, &k, &w);

  /* one changed value: another matrix, a miss */
  A->val[A->nnz / 2] = nextafter(A->val[A->nnz / 2], 2.0);
  gs_select_key_t k2 = k;
  k2.matrix_hash = gs_select_matrix_hash(A);
  CU_ASSERT(k2.matrix_hash != k.matrix_hash);
  memset(&got, 0, sizeof got);
  CU_ASSERT_EQUAL(load(dir, &k2, &r, &got, 0), 0);
  CU_ASSERT_STRING_EQUAL(got.warning, "");
  /* the value restored: the same key again */
  A->val[A->nnz / 2] = nextafter(A->val[A->nnz / 2], -2.0);
  CU_ASSERT_EQUAL(gs_select_matrix_hash(A), k.matrix_hash);
  { /* a matrix of many hash blocks: the same hash for any thread count; one changed value in
     * the last block, and one in the middle, change it */
    gs_csr_t *B = gs_test_random_csr(&s, 4000, 4000, 0.15); /* 2.4M entries: 28 blocks */
    gs_mm_set_threads(1);
    const uint64_t h1 = gs_select_matrix_hash(B);
    gs_mm_set_threads(5);
    CU_ASSERT_EQUAL(gs_select_matrix_hash(B), h1);
    gs_mm_set_threads(0);
    CU_ASSERT_EQUAL(gs_select_matrix_hash(B), h1);
    const gs_off_t at[2] = {B->nnz - 1, B->nnz / 3};
    for (int q = 0; q < 2; ++q) {
      const gs_val_t v = B->val[at[q]];
      B->val[at[q]] = nextafter(v, 2.0 * v + 1.0);
      CU_ASSERT(gs_select_matrix_hash(B) != h1);
      B->val[at[q]] = v;
    }
    CU_ASSERT_EQUAL(gs_select_matrix_hash(B), h1);
    gs_csr_destroy(&B);
  }
  /* another GPU: a miss */
  k2 = k;
  snprintf(k2.gpu, sizeof k2.gpu, "Test GPU B");
  CU_ASSERT_EQUAL(load(dir, &k2, &r, &got, 0), 0);
  /* other options: a miss */
  k2 = k;
  snprintf(k2.options, sizeof k2.options, "max_fill=4");
  CU_ASSERT_EQUAL(load(dir, &k2, &r, &got, 0), 0);

  /* corrupt files are ignored with a warning naming the file: garbage, and a truncated copy */
  char good[4096] = "";
  FILE *fp = fopen(w.cache_file, "r");
  CU_ASSERT_FATAL(fp != NULL);
  size_t glen = fread(good, 1, sizeof good - 1, fp);
  fclose(fp);
  const char *bad[] = {"not a cache file\n", "", NULL};
  char truncated[4096];
  snprintf(truncated, sizeof truncated, "%.*s", (int)(glen * 2 / 3), good);
  bad[2] = truncated;
  for (int b = 0; b < 3; ++b) {
    fp = fopen(w.cache_file, "w");
    CU_ASSERT_FATAL(fp != NULL);
    fputs(bad[b], fp);
    fclose(fp);
    CU_ASSERT_EQUAL(load(dir, &k, &r, &got, 0), 0);
    CU_ASSERT(strstr(got.warning, "corrupt") != NULL);
    CU_ASSERT(strstr(got.warning, w.cache_file) != NULL);
  }
  /* a new store replaces the corrupt file and hits again */
  gs_selection_t w2 = w;
  w2.warning[0] = '\0';
  gs_select_cache_store(dir, &k, &w2);
  memset(&got, 0, sizeof got);
  CU_ASSERT(load(dir, &k, &r, &got, 0) > 0);

  /* an unwritable folder is not fatal: a warning, no file. A path under a regular file fails
   * even for root; a read-only folder fails for everyone else. */
  char under_file[4700];
  snprintf(under_file, sizeof under_file, "%s/gpusolve", w.cache_file);
  w2.warning[0] = '\0';
  w2.cache_file[0] = '\0';
  gs_select_cache_store(under_file, &k, &w2);
  CU_ASSERT(strlen(w2.warning) > 0);
  CU_ASSERT_STRING_EQUAL(w2.cache_file, "");
  memset(&got, 0, sizeof got);
  CU_ASSERT_EQUAL(load(under_file, &k, &r, &got, 0), 0);
  char ro[4608];
  snprintf(ro, sizeof ro, "%s/cache-ro", gs_test_tmpdir());
  CU_ASSERT_FATAL(mkdir(ro, 0500) == 0);
  w2.warning[0] = '\0';
  gs_select_cache_store(ro, &k, &w2);
  if (geteuid() != 0) CU_ASSERT(strlen(w2.warning) > 0);
  chmod(ro, 0700);
  gs_csr_destroy(&A);
}

static void test_cache_dir(void)
{
  char buf[4096], home[4096];
  const char *old_xdg = getenv("XDG_CACHE_HOME"), *old_home = getenv("HOME");
  char sx[4096] = "", sh[4096] = "";
  if (old_xdg) snprintf(sx, sizeof sx, "%s", old_xdg);
  if (old_home) snprintf(sh, sizeof sh, "%s", old_home);
  setenv("XDG_CACHE_HOME", "/some/cache", 1);
  CU_ASSERT_EQUAL(gs_select_cache_dir(buf, sizeof buf), GS_SUCCESS);
  CU_ASSERT_STRING_EQUAL(buf, "/some/cache/gpusolve");
  setenv("XDG_CACHE_HOME", "relative/cache", 1); /* invalid by the XDG spec: ignored */
  setenv("HOME", "/home/someone", 1);
  CU_ASSERT_EQUAL(gs_select_cache_dir(buf, sizeof buf), GS_SUCCESS);
  CU_ASSERT_STRING_EQUAL(buf, "/home/someone/.cache/gpusolve");
  unsetenv("XDG_CACHE_HOME");
  snprintf(home, sizeof home, "/h");
  setenv("HOME", home, 1);
  CU_ASSERT_EQUAL(gs_select_cache_dir(buf, sizeof buf), GS_SUCCESS);
  CU_ASSERT_STRING_EQUAL(buf, "/h/.cache/gpusolve");
  unsetenv("HOME");
  CU_ASSERT_EQUAL(gs_select_cache_dir(buf, sizeof buf), GS_ERR_INVALID_ARG);
  setenv("HOME", "/h", 1);
  CU_ASSERT_EQUAL(gs_select_cache_dir(buf, 5), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_select_cache_dir(NULL, 5), GS_ERR_INVALID_ARG);
  if (old_xdg) setenv("XDG_CACHE_HOME", sx, 1);
  else unsetenv("XDG_CACHE_HOME");
  if (old_home) setenv("HOME", sh, 1);
  else unsetenv("HOME");
}

static void test_opts_and_args(void)
{
  gs_select_opts_t o;
  gs_select_opts_default(&o);
  CU_ASSERT(o.expected_products > 0 && o.use_cache == 1 && o.runs >= 1 && o.rule_only == 0);
  gs_spmv_t *S = (gs_spmv_t *)&o;
  CU_ASSERT_EQUAL(gs_spmv_create_auto(&S, NULL, NULL, NULL, NULL), GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NULL(S);
  CU_ASSERT_EQUAL(gs_spmv_create_auto(NULL, NULL, NULL, NULL, NULL), GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NULL(gs_spmv_selection(NULL));
}

int main(void)
{
  CU_TestInfo tests[] = {
      {"rule: %nnz bands, inclusive bounds, irregular, banded", test_rule_bands_and_ties},
      {"rule: agrees with bench/select_fit.py on measured features", test_rule_matches_fit_script},
      {"rule: refusals never selected (random features)", test_rule_never_selects_refusals},
      {"decide: amortised cost, ties, failures", test_decide},
      {"next candidate: least prediction, the pool's order among near equals",
       test_next_candidate},
      {"features: against independent counts", test_features},
      {"cache: hit, misses, corrupt file, unwritable folder", test_cache},
      {"staged: products left, prepare model, try and switch decisions", test_staged},
      {"staged: the most promising candidate first, waiting for its trigger", test_staged_pick},
      {"staged: the confident start (bccoo's value table on a stencil)", test_confident_start},
      {"issue 33: the G3_circuit forecast and the Laplacian's pool and skips", test_issue33_misses},
      {"prepare model: learned from measured builds", test_prepare_model},
      {"cache folder: XDG_CACHE_HOME, HOME", test_cache_dir},
      {"options and argument checks", test_opts_and_args},
      CU_TEST_INFO_NULL};
  return gs_test_main("select_host", tests, 0);
}
