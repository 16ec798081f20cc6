/* select/rule.c: the rule stage of the "auto" format: the matrix's features in, a short ranked
 * list of candidate backends out. Pure host code (no GPU), one table.
 *
 * Where it starts. Sedaghati, Ashari, Pouchet, Parthasarathy & Sadayappan, "Characterizing
 * Dataset Dependence for Sparse Matrix-Vector Multiplication on GPUs", PPAA 2015, section 5:
 * on a K40c with cuSPARSE's CSR, ELL and HYB, the fraction of nonzeros %nnz = 100 nnz/(m n)
 * splits 27 matrices into
 *   S1  %nnz <= 0.00035   CSR      (uk-2002, ljournal)
 *   S2  %nnz <= 0.009     HYB      (web graphs, circuits, economics)
 *   S3  %nnz >  0.009     ELL      (FEM, QCD, proteins)
 * right for 23 of 27; the misses all have sigma > 200 (row-length standard deviation), where CSR
 * (or HYB for the one extreme row-length spread, LP) wins. Our backends map onto it as CSR ->
 * csr-vector (and hola, cusparse-csr), HYB -> hyb (and cusparse-sell), ELL -> ell; DIA, which
 * the paper did not study, is placed before all of them for banded matrices, and bccoo's value
 * table (Yan et al.'s yaSpMV, seed 004) is tried where the values repeat.
 *
 * What the table is. RULES is evaluated top to bottom; the first row whose predicate holds gives
 * the ranked list. Then filters remove what would not run: backends not registered in this build
 * (bcoo/bccoo where their tree is not merged), padded formats whose fill exceeds their
 * max_fill (the exact comparison each builder makes, from the same slot counts: a matrix DIA
 * refuses never selects DIA), backends without 64-bit offsets for a wide matrix, backends without
 * a transpose when one is needed, and duplicates; at most T_MAX_CANDIDATES are kept, and
 * csr-vector (which refuses nothing) is appended when nothing is left.
 *
 * THRESHOLDS is the one place of numbers. The %nnz bands and sigma_outlier are the paper's (K40c);
 * the rest, the rows' order and their candidate lists are fitted to bench/data/select-h100.json
 * (H100, 25 matrices, every backend timed: bench/select.sh; refreshed in run 86 once merge, csr5
 * and csr-adaptive had landed) with bench/select_fit.py, which reads this table and prints each
 * row's matrices and its first choice's fraction of the fastest product; the comments at each
 * number and row say what data is behind it (docs/design.md too). On that data the rule alone
 * reaches 0.931 of the fastest product (geomean) and its candidates hold the fastest or one
 * within 3 % on every matrix. tests/data/select_rule_cases.txt keeps the
 * script and this file in agreement (test_select_host).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "gpusolve/io.h"
#include "gpusolve/select.h"
#include "core/parallel.h" /* gs_parallel: the project's one way of starting threads */
#include "select/select_impl.h"
#include "spmv/features_dev.h" /* gs_select_features_fill */
#include "spmv/sell.h"
#include "spmv/spmv_impl.h"

/* ==== THRESHOLDS: every number of the rule, with the data behind it ======================== */
enum {
  T_S1_PCT,          /* S1 upper bound of %nnz, inclusive */
  T_S2_PCT,          /* S2 upper bound of %nnz, inclusive */
  T_SIGMA_OUTLIER,   /* sigma above it: irregular rows whatever the mean */
  T_IRREGULAR_CV,    /* sigma / mu above it: irregular rows */
  T_DIA_FILL,        /* DIA first when its fill is at most this */
  T_ELL_FILL,        /* ELL kept only up to this fill (below its max_fill refusal) */
  T_FEW_VALUES,      /* at most this many distinct values: bccoo's value table is tried */
  T_MAX_CANDIDATES,  /* candidates kept after the filters */
  T_COUNT
};

static const struct {
  const char *name;
  double value;
  const char *help;
} THRESHOLDS[T_COUNT] = {
    /* The paper's bands, kept for the large matrices: on the H100 set every matrix under
     * s2_pct has more than 6 million entries (the small ones all have %nnz > 0.015). */
    [T_S1_PCT] = {"s1_pct", 0.00035, "paper: %nnz <= this is S1 (CSR)"},
    [T_S2_PCT] = {"s2_pct", 0.009, "paper: %nnz <= this is S2 (HYB), above S3"},
    /* H100: the paper's sigma > 200 alone catches only pareto (686); the next sigma down is
     * bcsstk13's 22.8, a regular FEM matrix, so sigma is read relative to mu (below) and this
     * bound stays for rows of a large mean. */
    [T_SIGMA_OUTLIER] = {"sigma_outlier", 200.0,
                         "paper: row-length std above this: irregular rows"},
    /* H100: the six matrices where a COO-like or cuSPARSE CSR product wins by > 10 % over
     * every ELL/SELL/CSR-vector kernel have sigma/mu 3.1 (memplus) .. 15.5 (pareto); every
     * other matrix has at most 1.15 (zenios). 2 is in the gap. */
    [T_IRREGULAR_CV] = {"irregular_cv", 2.0,
                        "H100: row-length std / mean above this: irregular rows (bcoo, cuSPARSE)"},
    /* H100: DIA is the fastest product (or within 3 %) on all five matrices of fill <= 1.25
     * (1.00 .. 1.25); the next fill up is 2.98 (bcsstk16), where DIA is not a candidate. */
    [T_DIA_FILL] = {"dia_fill", 1.5, "H100: DIA leads when it stores at most this x nnz"},
    [T_ELL_FILL] = {"ell_fill", 2.0, "ELL stays a candidate up to this x nnz (byte model)"},
    /* H100: convdiff3d (276 values) is the largest count where bccoo is the fastest; cage10
     * (237) the one below it where it is not (0.77): the table is a candidate, not a choice. */
    [T_FEW_VALUES] = {"few_values", 256.0, "bccoo's value table tried at most this many values"},
    [T_MAX_CANDIDATES] = {"max_candidates", 4.0, "candidates measured (cost of the stage)"},
};
#define T(k) (THRESHOLDS[k].value)

int gs_select_threshold(int k, const char **name, double *value, const char **help)
{
  if (k < 0 || k >= T_COUNT) return 0;
  if (name) *name = THRESHOLDS[k].name;
  if (value) *value = THRESHOLDS[k].value;
  if (help) *help = THRESHOLDS[k].help;
  return 1;
}

/* ==== RULES: first row whose predicate holds ================================================= */
typedef enum pred { P_BANDED, P_IRREGULAR, P_S1, P_S2, P_ANY } pred_t;

/* Each row: the H100 matrices of bench/data/select-h100.json it takes (25 matrices of at least
 * 10000 entries) and its first choice's speed there as a fraction of the fastest format's
 * (bench/select_fit.py prints these). The candidates are the formats within 3 % of the fastest
 * on at least one of them, best first by geomean over the row. */
static const struct {
  pred_t when;
  const char *row;
  const char *names[6]; /* ranked; NULL ends */
} RULES[] = {
    /* 5: convdiff2d/3d, lap27, crystm01, orsreg_1; dia 0.88 .. 1.00; csr-scalar the fastest on
     * orsreg_1, cusparse-sell on crystm01 (run 86) */
    {P_BANDED, "banded: DIA fill <= dia_fill",
     {"dia", "ell", "csr-scalar", "cusparse-sell", NULL}},
    /* 6: pareto, powerlaw, memplus, as-caida, email-Enron, wiki-Vote; bcoo 0.85 .. 1.00,
     * cusparse-csr the fastest on the two large ones, hola on memplus */
    {P_IRREGULAR, "irregular rows: sigma > irregular_cv * mu or sigma > sigma_outlier",
     {"bcoo", "cusparse-csr", "hola", "bccoo", NULL}},
    /* 0 on H100 (convdiff2d is S1 but banded): the paper's CSR, cuSPARSE's first */
    {P_S1, "S1: %nnz <= s1_pct (paper: CSR)",
     {"cusparse-csr", "csr-vector", "hola", "cusparse-sell", NULL}},
    /* 1: normal (22 per row, regular); csr5 the fastest (run 86), hyb 0.97 */
    {P_S2, "S2: %nnz <= s2_pct (paper: HYB)", {"hyb", "ell", "csr5", "cusparse-csr", NULL}},
    /* 13: the small FEM/circuit/graph matrices (14k .. 300k entries, L2-resident on H100);
     * run 86: cusparse-sell fastest on 3, within 12 % on all but Si2 and bcsstk13/16 (0.79 ..
     * 0.81); csr-vector fastest on 5, csr-scalar on 2, csr-adaptive on bcsstk13, bcsstk16 and
     * fidapex6 (it replaced bcoo, the fastest nowhere since csr-adaptive landed). The paper's
     * ELL is 0.81 .. 0.95 where it runs. */
    {P_ANY, "S3: %nnz > s2_pct (paper: ELL; H100: SELL)",
     {"cusparse-sell", "csr-vector", "csr-scalar", "csr-adaptive", NULL}},
};

static int holds(pred_t p, const gs_select_features_t *f)
{
  switch (p) {
  case P_BANDED: return f->nnz > 0 && f->dia_fill <= T(T_DIA_FILL);
  case P_IRREGULAR:
    return f->row_std > T(T_SIGMA_OUTLIER) || f->row_std > T(T_IRREGULAR_CV) * f->row_mean;
  case P_S1: return f->pct_nnz <= T(T_S1_PCT);
  case P_S2: return f->pct_nnz <= T(T_S2_PCT);
  case P_ANY: return 1;
  }
  return 0;
}

/* ---- distinct values ---------------------------------------------------------------------- */

enum { DV_SLOTS = 2 * GS_SELECT_DISTINCT_CAP }; /* a power of two, at most half full */

typedef struct dv_set {
  uint64_t *key;
  unsigned char *used;
  gs_off_t n; /* members; CAP + 1 means "more than the cap" */
} dv_set_t;

/* Inserts bits; 1 when it was new. */
static int dv_insert(dv_set_t *d, uint64_t bits)
{
  size_t s = (size_t)((bits * 0x9E3779B97F4A7C15ull) >> 47) & (DV_SLOTS - 1);
  while (d->used[s] && d->key[s] != bits) s = (s + 1) & (DV_SLOTS - 1);
  if (d->used[s]) return 0;
  d->used[s] = 1;
  d->key[s] = bits;
  d->n++;
  return 1;
}

typedef struct dv_job {
  const gs_csr_t *A;
  dv_set_t *sets;
  int nt;
} dv_job_t;

static void dv_share(void *arg, int t)
{
  dv_job_t *J = arg;
  dv_set_t *d = &J->sets[t];
  const gs_off_t lo = J->A->nnz * t / J->nt, hi = J->A->nnz * (t + 1) / J->nt;
  uint64_t last[2] = {0, 0}; /* the two values seen last: stencils repeat a few values */
  int nlast = 0;
  for (gs_off_t p = lo; p < hi && d->n <= GS_SELECT_DISTINCT_CAP; ++p) {
    uint64_t bits;
    memcpy(&bits, &J->A->val[p], sizeof bits);
    if ((nlast > 0 && bits == last[0]) || (nlast > 1 && bits == last[1])) continue;
    last[1] = last[0];
    last[0] = bits;
    if (nlast < 2) ++nlast;
    dv_insert(d, bits);
  }
}

/* The number of distinct value bit patterns of A, up to GS_SELECT_DISTINCT_CAP (+ 1 beyond), on
 * the reader's threads (gs_mm_threads) for large matrices. */
static gs_status_t count_distinct(const gs_csr_t *A, gs_off_t *out)
{
  gs_status_t st = GS_SUCCESS;
  int nt = A->nnz >= (gs_off_t)1 << 20 ? gs_mm_threads() : 1;
  if (nt < 1) nt = 1;
  if (nt > 64) nt = 64;
  dv_set_t sets[64];
  memset(sets, 0, sizeof sets);
  for (int t = 0; t < nt; ++t) {
    sets[t].key = malloc(DV_SLOTS * sizeof *sets[t].key);
    sets[t].used = calloc(DV_SLOTS, 1);
    if (!sets[t].key || !sets[t].used)
      GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory counting distinct values");
  }
  dv_job_t J = {A, sets, nt};
  gs_parallel(nt, dv_share, &J);
  for (int t = 1; t < nt && sets[0].n <= GS_SELECT_DISTINCT_CAP; ++t) {
    if (sets[t].n > GS_SELECT_DISTINCT_CAP) sets[0].n = GS_SELECT_DISTINCT_CAP + 1;
    for (size_t k = 0; k < DV_SLOTS && sets[0].n <= GS_SELECT_DISTINCT_CAP; ++k)
      if (sets[t].used[k]) dv_insert(&sets[0], sets[t].key[k]);
  }
  *out = sets[0].n > GS_SELECT_DISTINCT_CAP ? GS_SELECT_DISTINCT_CAP + 1 : sets[0].n;
cleanup:
  for (int t = 0; t < nt; ++t) {
    free(sets[t].key);
    free(sets[t].used);
  }
  return st;
}

/* ==== features ============================================================================== */

gs_status_t gs_select_features(const gs_csr_t *A, gs_select_features_t *f)
{
  return gs_select_features_with(A, NULL, f);
}

gs_status_t gs_select_features_with(const gs_csr_t *A, const gs_features_t *known,
                                    gs_select_features_t *f)
{
  gs_features_t g;
  gs_off_t distinct = 0;
  if (!A || !f) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_select_features: NULL argument");
  memset(f, 0, sizeof *f);
  if (known) g = *known; /* the caller's pass over A already gave them */
  else GS_CHECK(gs_csr_features(A, &g));
  /* SELL-32's slots, as sell_build.c counts them: rows padded to their slice's longest */
  const int64_t C = GS_SELL_SLICE_SIZE;
  int64_t used = 0, total = 0;
  for (int64_t lo = 0; lo < A->m; lo += C) {
    const int64_t hi = lo + C < A->m ? lo + C : A->m;
    gs_off_t w = 0;
    for (int64_t i = lo; i < hi; ++i)
      if (A->row_ptr[i + 1] - A->row_ptr[i] > w) w = A->row_ptr[i + 1] - A->row_ptr[i];
    used += (hi - lo) * w;
    total += C * w;
  }
  /* Distinct values (bit patterns), counted up to the cap: each thread counts its share into
   * its own set, and the sets are merged (a union stops at the cap too). */
  GS_CHECK(count_distinct(A, &distinct));
  /* the rest from the builders' own expressions (ell_build.c, dia_build.c, sell_build.c), in
   * the one function the device path (spmv/features_kernels.cu) shares */
  gs_select_features_fill(&g, A->m, A->nnz, used, total, distinct, f);
  return GS_SUCCESS;
}

/* ==== the rule =============================================================================== */

static void note(gs_select_rule_t *r, const char *fmt, const char *name, double a, double b)
{
  size_t used = strlen(r->excluded);
  if (used + 1 >= sizeof r->excluded) return;
  if (used) used += (size_t)snprintf(r->excluded + used, sizeof r->excluded - used, "; ");
  if (used < sizeof r->excluded)
    snprintf(r->excluded + used, sizeof r->excluded - used, fmt, name, a, b);
}

/* 1 when backend `name` (registered as index b) would refuse the matrix described by f. */
static gs_status_t refuses(int b, const char *name, const gs_select_features_t *f,
                           const char *options, int need_t, gs_select_rule_t *r, int *out)
{
  const unsigned fl = gs_spmv_backend_flags(b);
  double max_fill = 0.0;
  int has_fill = 0;
  *out = 1;
  GS_CHECK(gs_spmv_option_resolve(b, options, "max_fill", &max_fill, &has_fill));
  if (need_t && !(fl & GS_SPMV_FLAG_TRANSPOSE)) {
    note(r, "%s: no transpose product", name, 0, 0);
    return GS_SUCCESS;
  }
  if (f->nnz > INT32_MAX && !(fl & GS_SPMV_FLAG_WIDE)) {
    note(r, "%s: more than 2^31-1 entries (%.0f)", name, (double)f->nnz, 0);
    return GS_SUCCESS;
  }
  const double nnz = (double)f->nnz;
  if (!strcmp(name, "ell") && has_fill && f->ell_slots > max_fill * nnz) {
    note(r, "%s: fill %.3g over max_fill %g", name, f->ell_fill, max_fill);
    return GS_SUCCESS;
  }
  if (!strcmp(name, "ell") && f->ell_fill > T(T_ELL_FILL)) {
    note(r, "%s: fill %.3g over ell_fill %g", name, f->ell_fill, T(T_ELL_FILL));
    return GS_SUCCESS;
  }
  if (!strcmp(name, "dia")) {
    if ((int64_t)f->rows + (int64_t)f->cols >= ((int64_t)1 << 31)) {
      note(r, "%s: rows + columns %.0f not below 2^31", name, (double)f->rows + f->cols, 0);
      return GS_SUCCESS;
    }
    if (has_fill && f->nnz > 0 && f->dia_slots > max_fill * nnz) {
      note(r, "%s: fill %.3g over max_fill %g", name, f->dia_fill, max_fill);
      return GS_SUCCESS;
    }
  }
  if (!strcmp(name, "cusparse-sell")) {
    if (f->sell_total > INT32_MAX) {
      note(r, "%s: %.0f slots, more than 2^31-1", name, f->sell_total, 0);
      return GS_SUCCESS;
    }
    if (has_fill && max_fill > 0.0 && f->sell_slots > max_fill * nnz) {
      note(r, "%s: fill %.3g over max_fill %g", name, f->sell_fill, max_fill);
      return GS_SUCCESS;
    }
  }
  *out = 0;
  return GS_SUCCESS;
}

/* Appends `name` to the list when registered, not refused and not there yet. */
static gs_status_t offer(gs_select_rule_t *r, const char *name, const gs_select_features_t *f,
                         const char *options, int need_t)
{
  if ((double)r->n >= T(T_MAX_CANDIDATES) || r->n >= GS_SELECT_MAX) return GS_SUCCESS;
  const int b = gs_spmv_backend_find(name);
  if (b < 0) return GS_SUCCESS; /* not in this build */
  for (int k = 0; k < r->n; ++k)
    if (!strcmp(r->names[k], name)) return GS_SUCCESS;
  int no = 1;
  GS_CHECK(refuses(b, name, f, options, need_t, r, &no));
  if (no) return GS_SUCCESS;
  snprintf(r->names[r->n++], GS_SELECT_NAME, "%s", name);
  return GS_SUCCESS;
}

gs_status_t gs_select_rule(const gs_select_features_t *f, const char *options, int need_transpose,
                           gs_select_rule_t *out)
{
  if (!f || !out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_select_rule: NULL argument");
  memset(out, 0, sizeof *out);
  GS_CHECK(gs_spmv_options_check(options));
  size_t row = 0;
  while (!holds(RULES[row].when, f)) ++row; /* the last row always holds */
  out->row = RULES[row].row;
  for (int k = 0; RULES[row].names[k]; ++k) {
    GS_CHECK(offer(out, RULES[row].names[k], f, options, need_transpose));
    /* the value table right after the row's first choice, where values repeat */
    if (k == 0 && f->nnz > 0 && (double)f->distinct_values <= T(T_FEW_VALUES))
      GS_CHECK(offer(out, "bccoo", f, options, need_transpose));
  }
  if (out->n == 0) {
    GS_CHECK(offer(out, "csr-vector", f, options, need_transpose));
    GS_CHECK(offer(out, "cusparse-csr", f, options, need_transpose));
  }
  if (out->n == 0)
    return GS_ERROR(GS_ERR_UNSUPPORTED, "auto: no registered SpMV format can take this matrix "
                    "(%s)", out->excluded[0] ? out->excluded : "none registered");
  return GS_SUCCESS;
}

/* ==== the pool ================================================================================ */

/* The formats that need no layout of their own, in the order of their whole-solve record on the
 * H100 set (bench/solve_auto.py, 2026-11); other light formats follow in registry order. */
static const char *const LIGHT_ORDER[] = {"cusparse-csr", "csr-vector", "hola", "cusparse-csr2",
                                          "csr-scalar"};

static int in_list(const gs_select_rule_t *r, const char *name)
{
  for (int k = 0; k < r->n; ++k)
    if (!strcmp(r->names[k], name)) return 1;
  return 0;
}

/* Appends backend b to the pool when not there, not refused and room is left. */
static gs_status_t pool_add(gs_select_rule_t *pool, int b, const gs_select_features_t *f,
                            const char *options, int need_t)
{
  const char *name = gs_spmv_backend_name(b);
  if (!name || in_list(pool, name) || pool->n >= GS_SELECT_MAX) return GS_SUCCESS;
  int no = 1;
  GS_CHECK(refuses(b, name, f, options, need_t, pool, &no));
  if (!no) snprintf(pool->names[pool->n++], GS_SELECT_NAME, "%s", name);
  return GS_SUCCESS;
}

gs_status_t gs_select_pool(const gs_select_features_t *f, const char *options, int need_t,
                           const gs_select_rule_t *rule, gs_select_rule_t *pool)
{
  if (!f || !rule || !pool) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_select_pool: NULL argument");
  gs_select_rule_t p;
  memset(&p, 0, sizeof p);
  GS_CHECK(gs_spmv_options_check(options));
  p.row = rule->row;
  snprintf(p.excluded, sizeof p.excluded, "%s", rule->excluded);
  const int nb = gs_spmv_backend_count();
  /* the vendor baseline first: the incumbent every other candidate must beat */
  const int base = gs_spmv_backend_find(LIGHT_ORDER[0]);
  if (base >= 0) GS_CHECK(pool_add(&p, base, f, options, need_t));
  for (int c = 0; c < rule->n; ++c) {
    const int b = gs_spmv_backend_find(rule->names[c]);
    if (b >= 0) GS_CHECK(pool_add(&p, b, f, options, need_t));
  }
  /* the device-built formats the rule did not name, least byte bound first (a stable
   * selection sort over at most the registry) */
  int rest[GS_SELECT_MAX], nr = 0;
  for (int b = 0; b < nb && nr < GS_SELECT_MAX; ++b)
    if ((gs_spmv_backend_flags(b) & GS_SPMV_FLAG_DEVICE_BUILD) &&
        !(gs_spmv_backend_flags(b) & GS_SPMV_FLAG_LIGHT) && !in_list(&p, gs_spmv_backend_name(b)))
      rest[nr++] = b;
  for (int i = 0; i < nr; ++i) {
    int m = i;
    for (int j = i + 1; j < nr; ++j)
      if (gs_select_bytes_bound(gs_spmv_backend_name(rest[j]), f) <
          gs_select_bytes_bound(gs_spmv_backend_name(rest[m]), f))
        m = j;
    const int t = rest[m];
    memmove(&rest[i + 1], &rest[i], (size_t)(m - i) * sizeof *rest);
    rest[i] = t;
    GS_CHECK(pool_add(&p, rest[i], f, options, need_t));
  }
  /* the other light formats last: the same bytes as the baseline, rarely faster than it */
  GS_CHECK(gs_select_light(options, need_t, &p));
  if (p.n == 0)
    return GS_ERROR(GS_ERR_UNSUPPORTED, "auto: no registered SpMV format can take this matrix "
                    "(%s)", p.excluded[0] ? p.excluded : "none registered");
  *pool = p;
  return GS_SUCCESS;
}

gs_status_t gs_select_light(const char *options, int need_t, gs_select_rule_t *list)
{
  static const gs_select_features_t none; /* light formats refuse nothing for fill */
  const int nb = gs_spmv_backend_count();
  for (size_t i = 0; i < sizeof LIGHT_ORDER / sizeof *LIGHT_ORDER; ++i) {
    const int b = gs_spmv_backend_find(LIGHT_ORDER[i]);
    if (b >= 0) GS_CHECK(pool_add(list, b, &none, options, need_t));
  }
  for (int b = 0; b < nb; ++b)
    if (gs_spmv_backend_flags(b) & GS_SPMV_FLAG_LIGHT)
      GS_CHECK(pool_add(list, b, &none, options, need_t));
  return GS_SUCCESS;
}

/* Byte model: the fewest bytes a layout can store an entry in, by format (double values, 32-bit
 * indices): CSR-like 12 (+ 4 a row), COO 16, padded formats 12 (8 for DIA) a stored slot,
 * bccoo 2 (a 1-byte look-up index and a 1-byte column offset) where at most 256 values repeat,
 * else 5 (a float value and a 1-byte offset), pkt 12 (16-bit local row and column, the value).
 * Vectors: x read and y written once. */
double gs_select_bytes_bound(const char *name, const gs_select_features_t *f)
{
  if (!name || !f) return 0.0;
  const double nnz = (double)f->nnz, m = (double)f->rows, vec = 8.0 * ((double)f->rows + f->cols);
  static const char *const csr_like[] = {"csr-scalar", "csr-vector", "csr-adaptive", "hola",
                                         "merge", "csr5", "cusparse-csr", "cusparse-csr2"};
  for (size_t i = 0; i < sizeof csr_like / sizeof *csr_like; ++i)
    if (!strcmp(name, csr_like[i])) return 12.0 * nnz + 4.0 * m + vec;
  if (!strcmp(name, "coo") || !strcmp(name, "cusparse-coo") || !strcmp(name, "cusparse-coo2"))
    return 16.0 * nnz + vec;
  if (!strcmp(name, "bcoo") || !strcmp(name, "hyb")) return 12.0 * nnz + vec;
  if (!strcmp(name, "ell")) return 12.0 * f->ell_slots + vec;
  if (!strcmp(name, "dia")) return 8.0 * f->dia_slots + vec;
  if (!strcmp(name, "sellp") || !strcmp(name, "cusparse-sell")) return 12.0 * f->sell_slots + vec;
  if (!strcmp(name, "bccoo"))
    return ((double)f->distinct_values <= T(T_FEW_VALUES) ? 2.0 : 5.0) * nnz + vec;
  if (!strcmp(name, "pkt")) return 12.0 * nnz + vec;
  return 0.0;
}

int gs_select_confident_start(const gs_select_features_t *f, const gs_select_rule_t *pool,
                              const char *light)
{
  if (!f || !pool || !light || (double)f->nnz < GS_SELECT_CONFIDENT_NNZ) return -1;
  const double base = gs_select_bytes_bound(light, f);
  if (!(base > 0.0)) return -1;
  int pick = -1;
  double least = GS_SELECT_CONFIDENT_BYTES * base;
  for (int k = 0; k < pool->n; ++k) {
    const int b = gs_spmv_backend_find(pool->names[k]);
    if (b < 0) continue;
    const unsigned fl = gs_spmv_backend_flags(b);
    if (!(fl & GS_SPMV_FLAG_DEVICE_BUILD) || (fl & GS_SPMV_FLAG_LIGHT)) continue;
    const double bytes = gs_select_bytes_bound(pool->names[k], f);
    if (bytes > 0.0 && bytes <= least) { /* ties: the earlier in the pool */
      if (pick < 0 || bytes < least) pick = k;
      least = bytes;
    }
  }
  return pick;
}

int gs_select_worth_measuring(double prep_est, double t_bound, double products,
                              double incumbent_cost)
{
  if (!isfinite(incumbent_cost)) return 1; /* nothing measured yet */
  const double b = t_bound > 0.0 ? t_bound : 0.0, n = products > 0.0 ? products : 0.0;
  return (prep_est > 0.0 ? prep_est : 0.0) + n * b < incumbent_cost;
}

int gs_select_next_candidate(const double *pred, const int *eligible, int n)
{
  double least = INFINITY;
  int any = -1;
  for (int k = 0; k < n; ++k)
    if (eligible[k]) {
      if (any < 0) any = k;
      if (pred[k] < least) least = pred[k];
    }
  if (any < 0 || !isfinite(least)) return any; /* no prediction: the pool's order */
  for (int k = 0; k < n; ++k)
    if (eligible[k] && pred[k] <= least * (1.0 + GS_SELECT_PRED_TIE)) return k;
  return any; /* not reached: the least itself qualifies */
}

/* ==== the measured stage's decision ========================================================== */

int gs_select_decide(gs_select_time_t *t, int n, double expected_n, double expected_t)
{
  int best = -1;
  if (!t || n <= 0) return -1;
  for (int k = 0; k < n; ++k) {
    t[k].cost_s = t[k].status == GS_SUCCESS
                      ? t[k].prepare_s + expected_n * t[k].spmv_s + expected_t * t[k].spmv_t_s
                      : INFINITY;
    if (t[k].status == GS_SUCCESS && (best < 0 || t[k].cost_s < t[best].cost_s)) best = k;
  }
  return best;
}

/* ---- the staged selection of a solve ------------------------------------------------------- */

double gs_select_remaining_products(long it_prev, double r_prev, long it, double r, double tol,
                                    long maxit, double products_per_iteration)
{
  if (it <= it_prev || it_prev < 0) return 0.0; /* no window: no data */
  const double ppi = products_per_iteration > 0.0 ? products_per_iteration : 1.0;
  double its = maxit > it ? (double)(maxit - it) : 0.0;
  if (r_prev > 0.0 && r > 0.0 && tol > 0.0 && r < r_prev && isfinite(r_prev)) {
    if (r <= tol) return 0.0;
    /* the recent rate, not the mean since iteration 0: CG's early drop would make a slow
     * tail look short (G3_circuit: 781 products forecast at iteration 1000, 5,600 left) */
    const double rate = log(r_prev / r) / (double)(it - it_prev);
    const double need = log(r / tol) / rate;
    if (need < its) its = need;
  } else if (r > 0.0 && tol > 0.0 && r <= tol) {
    return 0.0;
  }
  return its * ppi;
}

/* Prepare model. Host builds: the largest rates measured on an H100 over the selection set of
 * bench/data/select-h100.json (2026-11, 25 matrices, per entry on matrices of 1M+ entries):
 * hyb 15.9 ns, bccoo 12.5, ell 9.9, dia 6.9 (pkt's are far above: it is never in the rule).
 * Device builds: a few passes over the CSR at the GPU's bandwidth (12 bytes an entry, 0.005 ns
 * at 2.5 TB/s a pass), plus the allocations and the reads of a few scalars; measured on an H100
 * (2026-11-27): bccoo 0.65 ms on G3_circuit (7.7M entries) and 1.4 ms on lap27_100 (26.5M),
 * bcoo 1.4 and 3.2, csr5 0.6 and 1.0: 0.25 ms + 0.08 ns an entry lies within 1.6x of each.
 * The light formats: 0.1-0.6 ms (cuSPARSE's descriptors and buffer; cusparse-csr 0.15 ms). */
#define PREP_LIGHT_S 0.2e-3
#define PREP_LIGHT_PER_NNZ 0.05e-9
#define PREP_DEVICE_S 0.25e-3
#define PREP_DEVICE_PER_NNZ 0.08e-9
#define PREP_FIXED_S 4e-3
#define PREP_PER_NNZ 16e-9

/* Formats whose GPU build keeps an O(nnz) host stage (GS_SPMV_FLAG_HOST_STAGE: pkt's reverse
 * Cuthill-McKee order; H100 machine, 2026-11: 21 ns an entry on the 27-point Laplacian, 145 on
 * the power-law rows, the latter taken). */
#define PREP_HOST_STAGE_PER_NNZ 150e-9

double gs_select_prepare_estimate(unsigned flags, double nnz, double learned_per_nnz)
{
  if (!(nnz > 0.0)) nnz = 0.0;
  const double fixed = (flags & GS_SPMV_FLAG_LIGHT)          ? PREP_LIGHT_S
                       : (flags & GS_SPMV_FLAG_HOST_STAGE)   ? PREP_FIXED_S
                       : (flags & GS_SPMV_FLAG_DEVICE_BUILD) ? PREP_DEVICE_S
                                                             : PREP_FIXED_S;
  /* what this machine measured for the format, when known */
  if (learned_per_nnz > 0.0) return fixed + learned_per_nnz * nnz;
  const double per = (flags & GS_SPMV_FLAG_LIGHT)          ? PREP_LIGHT_PER_NNZ
                     : (flags & GS_SPMV_FLAG_HOST_STAGE)   ? PREP_HOST_STAGE_PER_NNZ
                     : (flags & GS_SPMV_FLAG_DEVICE_BUILD) ? PREP_DEVICE_PER_NNZ
                                                           : PREP_PER_NNZ;
  return fixed + per * nnz;
}

int gs_select_should_try(double spent_s, double tried_s, double prep_est, double remaining,
                         double t_cur, double t_bound)
{
  if (!(remaining > 0.0) || !(t_cur > 0.0)) return 0;
  const double prep = prep_est > 0.0 ? prep_est : 0.0;
  if ((tried_s > 0.0 ? tried_s : 0.0) + prep > spent_s) return 0; /* not yet paid for */
  if (t_bound >= t_cur) return 0; /* its bytes alone make it slower */
  const double best = t_bound > 0.0 ? t_bound : 0.0;
  return remaining * (t_cur - best) > prep + GS_SELECT_MEASURE_PRODUCTS * t_cur;
}

int gs_select_staged_pick(int n, const int *eligible, const double *prep, const double *bound,
                          double spent_s, double tried_s, double remaining, double t_cur)
{
  int elig[GS_SELECT_MAX];
  double pred[GS_SELECT_MAX];
  if (n <= 0 || !eligible || !prep || !bound) return -1;
  if (n > GS_SELECT_MAX) n = GS_SELECT_MAX;
  for (int k = 0; k < n; ++k) {
    elig[k] = eligible[k];
    pred[k] = (prep[k] > 0.0 ? prep[k] : 0.0) +
              (remaining > 0.0 ? remaining : 0.0) * (bound[k] > 0.0 ? bound[k] : 0.0);
  }
  for (;;) {
    const int c = gs_select_next_candidate(pred, elig, n);
    if (c < 0) return -1;
    if ((tried_s > 0.0 ? tried_s : 0.0) + (prep[c] > 0.0 ? prep[c] : 0.0) > spent_s)
      return -1; /* the most promising waits for its turn; no lesser one goes before it */
    if (gs_select_should_try(spent_s, tried_s, prep[c], remaining, t_cur, bound[c])) return c;
    elig[c] = 0; /* it could not pay back what is left: the next may */
  }
}

int gs_select_worth_switching(double prepare_s, double t_new, double t_cur, double remaining)
{
  if (!(t_new > 0.0) || !(t_cur > 0.0) || !(remaining > 0.0)) return 0;
  if (t_new > (1.0 - GS_SELECT_SWITCH_MARGIN) * t_cur) return 0;
  return remaining * (t_cur - t_new) > (prepare_s > 0.0 ? prepare_s : 0.0);
}
