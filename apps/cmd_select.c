/* apps/cmd_select.c: `gpusolve select A.mtx...`: what the "auto" format picks for each matrix:
 * the rule stage's choice (features only, no GPU), the measured stage's choice, and the oracle
 * (every registered format timed, the fastest product), with the speed of the rule's and the
 * measured choice as a fraction of the oracle's: the data to re-derive the rule's thresholds
 * from (bench/select.sh). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "apps/cli.h"
#include "apps/cli_select.h"
#include "apps/cli_spmv.h"
#include "apps/front/front.h"

static const char *usage_text =
    "usage: gpusolve select A.mtx... [--rule] [--json] [--no-cache] [--products N]\n"
    "                       [--also-products M] [--verbose]\n\n"
    "For each matrix, which SpMV format the automatic selection (--format auto) picks:\n"
    "  rule      the rule stage: the first of the candidates the matrix's features give\n"
    "            (%nnz, row-length mean, std and max, diagonals, ELL/DIA/SELL fill, distinct\n"
    "            values); needs no GPU\n"
    "  measured  the measured stage: each candidate prepared and timed, the least\n"
    "            prepare + N * t_spmv kept (cached per matrix, GPU and version)\n"
    "  oracle    every format timed: the fastest product of this run\n"
    "and the SpMV speed of the rule's and the measured choice as a fraction of the oracle's.\n\n"
    "  --rule          the rule stage only (no GPU): measured and oracle are null\n"
    "  --products N    products the measured stage amortises prepare over (default 1000)\n"
    "  --also-products M  also the measured stage's choice for M products, from the same\n"
    "                  measured times (e.g. 1000000: prepare amortised away, the SpMV speed)\n"
    "  --no-cache      measure even when the cache knows the matrix, and write nothing\n"
    "  --runs N        timed products per format for the oracle (default 100)\n"
    "  --max-fill F    fill limit of the padded formats (the option max_fill=F)\n"
    CLI_SPMV_OPT_HELP
    "  --json          one object per matrix (an array for several): matrix, rule, measured,\n"
    "                  oracle (format names, null for a stage not run) and the times\n"
    "  --verbose, -v   features, the rule's row, every candidate's times, the thresholds\n";

typedef struct oracle_row {
  const char *name;
  gs_status_t status;
  double prepare_ms, spmv_us;
} oracle_row_t;

/* The median product time of `name` in the oracle table, NAN when it did not run. */
static double time_of(const oracle_row_t *o, int n, const char *name)
{
  for (int k = 0; k < n; ++k)
    if (!strcmp(o[k].name, name) && o[k].status == GS_SUCCESS) return o[k].spmv_us;
  return NAN;
}

static void print_thresholds(void)
{
  const char *name, *help;
  double v;
  printf("thresholds (select/rule.c):\n");
  for (int k = 0; gs_select_threshold(k, &name, &v, &help); ++k)
    printf("  %-15s %-10g %s\n", name, v, help);
}

/* Times every registered format on A: the oracle. */
static int run_oracle(gs_context_t *ctx, gs_matrix_t *A, const char *opts, long runs,
                      oracle_row_t *o, int *best)
{
  gs_status_t st = GS_SUCCESS;
  const gs_csr_t *H = gs_matrix_host(A);
  const size_t len = (size_t)(H->m > H->n ? H->m : H->n) + 1;
  double *h = malloc(len * sizeof *h), *d_x = NULL, *d_y = NULL;
  *best = -1;
  if (!h) return cli_fail(CLI_DEVICE, "out of host memory");
  for (size_t i = 0; i < len; ++i) h[i] = 1.0;
  if ((st = gs_dmalloc(ctx, (void **)&d_x, len * sizeof *d_x, "x")) != GS_SUCCESS ||
      (st = gs_dmalloc(ctx, (void **)&d_y, len * sizeof *d_y, "y")) != GS_SUCCESS ||
      (st = gs_copy_to_device(ctx, d_x, h, len * sizeof *h)) != GS_SUCCESS) {
    free(h);
    gs_dfree(ctx, d_x);
    gs_dfree(ctx, d_y);
    return cli_fail_status(st);
  }
  gs_spmv_time_opts_t to;
  gs_spmv_time_opts_default(&to);
  to.min_runs = (int)runs;
  for (int b = 0; b < gs_spmv_backend_count(); ++b) {
    gs_spmv_t *S = NULL;
    gs_spmv_timing_t tm;
    double prep = 0.0;
    o[b].name = gs_spmv_backend_name(b);
    o[b].status = gs_spmv_create_timed(&S, ctx, A, o[b].name, opts, &prep);
    o[b].prepare_ms = 1e3 * prep;
    if (o[b].status == GS_SUCCESS)
      o[b].status = gs_spmv_time(S, GS_OP_N, d_x, d_y, &to, &tm);
    if (o[b].status == GS_SUCCESS) {
      o[b].spmv_us = 1e6 * tm.median_s;
      if (*best < 0 || o[b].spmv_us < o[*best].spmv_us) *best = b;
    }
    gs_spmv_destroy(&S);
  }
  free(h);
  gs_dfree(ctx, d_x);
  gs_dfree(ctx, d_y);
  return CLI_OK;
}

/* The command line, parsed. */
typedef struct select_args {
  const char **paths;
  int npaths, json, rule_only, no_cache, verbose, help;
  long products, runs, also;
  char opts[1024];
} select_args_t;

/* Parses argv into a (a->paths allocated; free it). Returns CLI_OK (a->help set for --help,
 * printed) or the exit status after the message. */
static int parse(int argc, char **argv, select_args_t *a)
{
  const char *v;
  int rc = CLI_OK;
  memset(a, 0, sizeof *a);
  a->products = 1000;
  a->runs = 100;
  a->paths = calloc((size_t)argc + 1, sizeof *a->paths);
  const cli_switch_t sw[] = {{"--json", NULL, &a->json},         {"--rule", NULL, &a->rule_only},
                             {"--no-cache", NULL, &a->no_cache}, {"--verbose", "-v", &a->verbose},
                             {NULL, NULL, NULL}};
  if (!a->paths) return cli_fail(CLI_DEVICE, "out of host memory");
  for (int i = 1; i < argc; ++i) {
    int r;
    const char *s = argv[i];
    if ((r = cli_arg_switch(s, usage_text, sw)) != 0) {
      if (r == 2) {
        a->help = 1;
        return CLI_OK;
      }
    } else if ((r = cli_opt(argc, argv, &i, "--products", &v)) != 0) {
      if (r < 0 || cli_parse_int("--products", v, 1, 1000000000L, &a->products))
        rc = CLI_BAD_INPUT;
    } else if ((r = cli_opt(argc, argv, &i, "--also-products", &v)) != 0) {
      if (r < 0 || cli_parse_int("--also-products", v, 1, 1000000000L, &a->also))
        rc = CLI_BAD_INPUT;
    } else if ((r = cli_opt(argc, argv, &i, "--runs", &v)) != 0) {
      if (r < 0 || cli_parse_int("--runs", v, 1, 20000, &a->runs)) rc = CLI_BAD_INPUT;
    } else if ((r = cli_spmv_opt(argc, argv, &i, CLI_SPMV_MAX_FILL | CLI_SPMV_OPT, a->opts,
                                 sizeof a->opts)) != 0) {
      if (r < 0) rc = CLI_BAD_INPUT;
    } else {
      rc = cli_arg_positional("select", s, a->paths, argc, &a->npaths, "'%s'");
    }
    if (rc != CLI_OK) return rc;
  }
  if (a->npaths == 0)
    return cli_fail(CLI_BAD_INPUT, "select: no matrix given (usage: gpusolve select A.mtx...)");
  return CLI_OK;
}

/* The measured stage and the oracle on one matrix (H read, its rule known): creates the context
 * on the first call (after the first matrix is read, so that a bad file exits 2 with or without
 * a GPU), fills rec and the oracle rows. */
static int measure(const select_args_t *a, gs_context_t **ctx, gs_csr_t *H, gs_selection_t *rec,
                   oracle_row_t *o, int *best)
{
  int rc;
  if (!*ctx && (rc = cli_context(ctx)) != CLI_OK) return rc;
  gs_matrix_t *A = NULL;
  gs_spmv_t *S = NULL;
  gs_select_opts_t so;
  gs_select_opts_default(&so);
  so.expected_products = (double)a->products;
  so.use_cache = !a->no_cache;
  gs_status_t st;
  rc = CLI_OK;
  if ((st = gs_matrix_create(&A, *ctx, H)) == GS_SUCCESS &&
      (st = gs_spmv_create_auto(&S, *ctx, A, a->opts, &so)) == GS_SUCCESS) {
    *rec = *gs_spmv_selection(S);
    gs_spmv_destroy(&S);
    cli_selection_warn(rec);
    rc = run_oracle(*ctx, A, a->opts, a->runs, o, best);
  }
  gs_matrix_destroy(&A);
  return st != GS_SUCCESS ? cli_fail_status(st) : rc;
}

typedef int (*measure_fn)(const select_args_t *, gs_context_t **, gs_csr_t *, gs_selection_t *,
                          oracle_row_t *, int *);

/* Every matrix in turn: read, the rule, the measured stage and the oracle when `stage` is given
 * (NULL: --rule; the front has no other), the report. */
static int select_all(const select_args_t *a, measure_fn stage, gs_context_t **ctx)
{
  const int rule_only = stage == NULL, json = a->json, verbose = a->verbose;
  const long also = a->also;
  const char *const *paths = a->paths, *opts = a->opts;
  const int npaths = a->npaths;
  int rc = CLI_OK;
  oracle_row_t *o = calloc((size_t)gs_spmv_backend_count() + 1, sizeof *o);
  cli_json_t j;
  int opened = 0;
  if (!o) return cli_fail(CLI_DEVICE, "out of host memory");
  for (int p = 0; p < npaths; ++p) {
    gs_csr_t *H = NULL;
    gs_select_features_t f;
    gs_select_rule_t rule;
    gs_selection_t rec; /* a copy: the record belongs to the product */
    gs_status_t st;
    int best = -1;
    if ((rc = cli_load_matrix(paths[p], &H)) != CLI_OK) goto done;
    if ((st = gs_select_features(H, &f)) != GS_SUCCESS ||
        (st = gs_select_rule(&f, opts, 0, &rule)) != GS_SUCCESS) {
      gs_csr_destroy(&H);
      rc = cli_fail_status(st);
      goto done;
    }
    if (!rule_only && (rc = stage(a, ctx, H, &rec, o, &best)) != CLI_OK) {
      gs_csr_destroy(&H);
      goto done;
    }
    if (p == 0 && verbose && !json) print_thresholds(); /* once the first matrix got through */
    const int nb = gs_spmv_backend_count();
    const char *rule_pick = rule.names[0], *measured = rule_only ? NULL : rec.chosen_name;
    const char *oracle = best >= 0 ? o[best].name : NULL;
    const double t_oracle = best >= 0 ? o[best].spmv_us : NAN;
    const double t_rule = rule_only ? NAN : time_of(o, nb, rule_pick);
    const double t_measured = rule_only ? NAN : time_of(o, nb, measured);
    /* the choice for `also` products: gs_select_decide on the same measured times */
    const char *measured_also = NULL;
    if (!rule_only && also > 0 && rec.measured) {
      gs_select_time_t t[GS_SELECT_MAX];
      memcpy(t, rec.times, sizeof t);
      const int k = gs_select_decide(t, rec.ntimes, (double)also, 0.0);
      if (k >= 0) measured_also = rec.times[k].name;
    }
    const double t_also = measured_also ? time_of(o, nb, measured_also) : NAN;
    if (json) {
      if (npaths > 1 && !opened) {
        json_begin_array(&j, stdout);
        opened = 1;
      }
      if (npaths > 1) json_obj_begin(&j, NULL);
      else json_begin(&j, stdout);
      json_str(&j, "matrix", paths[p]);
      json_str(&j, "rule", rule_pick);
      json_str(&j, "measured", measured);
      json_str(&j, "oracle", oracle);
      json_int(&j, "rows", H->m);
      json_int(&j, "cols", H->n);
      json_int(&j, "nnz", H->nnz);
      json_num(&j, "rule_spmv_us", t_rule);
      json_num(&j, "measured_spmv_us", t_measured);
      json_num(&j, "oracle_spmv_us", t_oracle);
      json_num(&j, "rule_vs_oracle", t_oracle / t_rule);         /* speed fraction, <= 1 */
      json_num(&j, "measured_vs_oracle", t_oracle / t_measured); /* null when not run */
      if (also > 0) {
        json_num(&j, "also_products", (double)also);
        json_str(&j, "measured_also", measured_also);
        json_num(&j, "measured_also_vs_oracle", t_oracle / t_also);
      }
      if (rule_only) {
        gs_selection_t r0;
        memset(&r0, 0, sizeof r0);
        r0.features = f;
        r0.rule = rule;
        r0.chosen = 0;
        snprintf(r0.chosen_name, sizeof r0.chosen_name, "%s", rule_pick);
        cli_selection_json(&j, "selection", &r0);
      } else {
        cli_selection_json(&j, "selection", &rec);
        json_arr_begin(&j, "formats");
        for (int b = 0; b < nb; ++b) {
          json_obj_begin(&j, NULL);
          json_str(&j, "format", o[b].name);
          json_str(&j, "status", o[b].status == GS_SUCCESS ? "ok" : "fail");
          json_num(&j, "prepare_ms", o[b].status == GS_SUCCESS ? o[b].prepare_ms : NAN);
          json_num(&j, "spmv_us", o[b].status == GS_SUCCESS ? o[b].spmv_us : NAN);
          json_obj_end(&j);
        }
        json_arr_end(&j);
      }
      if (npaths > 1) json_obj_end(&j);
      else json_end(&j);
    } else {
      printf("%smatrix   %s: %d x %d, %lld nonzeros\n", p ? "\n" : "", paths[p], (int)H->m,
             (int)H->n, (long long)H->nnz);
      printf("rule     %s  (%s; candidates", rule_pick, rule.row);
      for (int c = 0; c < rule.n; ++c) printf("%s %s", c ? "," : "", rule.names[c]);
      printf(")\n");
      if (verbose && rule.excluded[0]) printf("         excluded: %s\n", rule.excluded);
      if (!rule_only) {
        printf("measured ");
        cli_selection_line(stdout, &rec);
        if (verbose) cli_selection_details(stdout, &rec);
        printf("oracle   %s %.2f us; speed vs oracle: rule %.3f, measured %.3f\n",
               oracle ? oracle : "-", t_oracle, t_oracle / t_rule, t_oracle / t_measured);
        if (measured_also)
          printf("measured for %ld products: %s, speed vs oracle %.3f\n", also, measured_also,
                 t_oracle / t_also);
        for (int b = 0; verbose && b < nb; ++b)
          if (o[b].status == GS_SUCCESS)
            printf("  %-14s prepare %9.3f ms  SpMV %9.3f us\n", o[b].name, o[b].prepare_ms,
                   o[b].spmv_us);
          else
            printf("  %-14s did not run (status %d)\n", o[b].name, (int)o[b].status);
      }
    }
    gs_csr_destroy(&H);
  }
done:
  if (opened) json_end_array(&j);
  free(o);
  return rc;
}

int cmd_select(int argc, char **argv)
{
  select_args_t a;
  int rc = parse(argc, argv, &a);
  if (rc == CLI_OK && !a.help) {
    gs_context_t *ctx = NULL;
    rc = select_all(&a, a.rule_only ? NULL : measure, &ctx);
    gs_context_destroy(&ctx);
  }
  free(a.paths);
  return rc;
}

int cmd_select_front(int argc, char **argv)
{
  select_args_t a;
  int rc = parse(argc, argv, &a);
  if (rc == CLI_OK && !a.help) rc = a.rule_only ? select_all(&a, NULL, NULL) : CLI_RUN_ON_GPU;
  free(a.paths);
  return rc;
}
