/* apps/cli_select.c: the selection record of the "auto" format, printed one way for every
 * subcommand. */
#include "apps/cli_select.h"

#include <math.h>
#include <string.h>

const char *cli_cache_state(gs_select_cache_state_t c)
{
  return c == GS_SELECT_CACHE_HIT ? "hit" : c == GS_SELECT_CACHE_MISS ? "miss" : "off";
}

void cli_selection_line(FILE *f, const gs_selection_t *sel)
{
  if (sel->staged || sel->first_name[0]) {
    const int b = gs_spmv_backend_find(sel->first_name);
    const int light = b >= 0 && (gs_spmv_backend_flags(b) & GS_SPMV_FLAG_LIGHT);
    fprintf(f, "auto started with %s (staged: %s, cache %s; %.2f ms)", sel->first_name,
            light                               ? "a format without a build of its own"
            : sel->cache == GS_SELECT_CACHE_HIT ? "the cache's least cost"
                                                : "its modelled bytes, a small share of CSR's",
            cli_cache_state(sel->cache), 1e3 * sel->seconds);
    if (sel->remaining_products > 0.0 || sel->tried || sel->switches)
      fprintf(f, "; in the solve: %d format%s tried, %s%s", sel->tried, sel->tried == 1 ? "" : "s",
              sel->switches ? "switched to " : "kept it", sel->switches ? sel->chosen_name : "");
    if (sel->switches) fprintf(f, " after %ld iterations", sel->switch_iteration);
    if (sel->remaining_products > 0.0 || sel->tried || sel->switches)
      fprintf(f, " (%.0f products estimated left at the last revision, revisions %.2f ms)",
              sel->remaining_products, 1e3 * sel->progress_s);
    fputc('\n', f);
  } else if (!sel->measured)
    fprintf(f, "auto chose %s (rule only: %s; %.2f ms)\n", sel->chosen_name, sel->rule.row,
            1e3 * sel->seconds);
  else {
    int measured = 0, skipped = 0;
    for (int c = 0; c < sel->ntimes; ++c) {
      measured += sel->times[c].status == GS_SUCCESS;
      skipped += sel->times[c].status == GS_SELECT_SKIPPED;
    }
    fprintf(f, "auto chose %s (pool of %d: %d timed or cached, %d skipped by their predicted "
            "cost; cache %s; %.0f expected products", sel->chosen_name, sel->ntimes, measured,
            skipped, cli_cache_state(sel->cache), sel->expected_products);
    if (sel->expected_products_t > 0.0) fprintf(f, " + %.0f of A^T x", sel->expected_products_t);
    fprintf(f, "; %.2f ms: features %.2f, measuring %.2f)\n", 1e3 * sel->seconds,
            1e3 * sel->features_s, 1e3 * sel->measuring_s);
  }
}

void cli_selection_details(FILE *f, const gs_selection_t *sel)
{
  const gs_select_features_t *x = &sel->features;
  if (x->nnz == 0 && x->rows == 0 && sel->staged) { /* the solve never afforded the rule */
    fprintf(f, "  features: not computed (the solve ended before a revision could pay for them)"
            "\n");
  } else {
    fprintf(f, "  features: %%nnz %.3g, row length mean %.3g std %.3g max %lld, %d diagonals, "
            "fill ELL %.3g DIA %.3g SELL %.3g, %lld%s distinct values\n", x->pct_nnz, x->row_mean,
            x->row_std, (long long)x->row_max, (int)x->diagonals, x->ell_fill, x->dia_fill,
            x->sell_fill, (long long)x->distinct_values,
            x->distinct_values > GS_SELECT_DISTINCT_CAP ? "+" : "");
  }
  fprintf(f, "  rule: %s\n", sel->rule.row);
  if (sel->rule.excluded[0]) fprintf(f, "  excluded: %s\n", sel->rule.excluded);
  for (int c = 0; c < sel->ntimes; ++c) {
    const gs_select_time_t *t = &sel->times[c];
    if (t->status == GS_SELECT_DEFERRED)
      fprintf(f, "  %c %-14s not measured\n", c == sel->chosen ? '*' : ' ', t->name);
    else if (t->status == GS_SELECT_SKIPPED)
      fprintf(f, "  %c %-14s skipped: predicted prepare + products at its byte bound (%.3f us) "
              "cannot beat the best\n", c == sel->chosen ? '*' : ' ', t->name, 1e6 * t->bound_s);
    else if (t->status != GS_SUCCESS)
      fprintf(f, "  %c %-14s failed (status %d)\n", c == sel->chosen ? '*' : ' ', t->name,
              (int)t->status);
    else if (sel->staged || sel->first_name[0])
      fprintf(f, "  %c %-14s prepare %9.3f ms, SpMV %9.3f us\n", c == sel->chosen ? '*' : ' ',
              t->name, 1e3 * t->prepare_s, 1e6 * t->spmv_s);
    else if (!sel->measured)
      fprintf(f, "  %c %-14s prepare %.3f ms\n", c == sel->chosen ? '*' : ' ', t->name,
              1e3 * t->prepare_s);
    else if (sel->expected_products_t > 0.0)
      fprintf(f, "  %c %-14s prepare %9.3f ms + %.0f x %9.3f us + %.0f x %9.3f us (A^T x) = "
              "%10.3f ms\n", c == sel->chosen ? '*' : ' ', t->name, 1e3 * t->prepare_s,
              sel->expected_products, 1e6 * t->spmv_s, sel->expected_products_t,
              1e6 * t->spmv_t_s, 1e3 * t->cost_s);
    else
      fprintf(f, "  %c %-14s prepare %9.3f ms + %.0f x %9.3f us = %10.3f ms\n",
              c == sel->chosen ? '*' : ' ', t->name, 1e3 * t->prepare_s, sel->expected_products,
              1e6 * t->spmv_s, 1e3 * t->cost_s);
  }
  if (sel->shared_csr_s > 0.0)
    fprintf(f, "  shared device CSR upload %.3f ms, before the candidates, charged to none\n",
            1e3 * sel->shared_csr_s);
  if (sel->cache_file[0]) fprintf(f, "  cache file: %s\n", sel->cache_file);
}

void cli_rule_json(cli_json_t *j, const char *key, const gs_select_rule_t *rule)
{
  json_obj_begin(j, key);
  json_str(j, "row", rule->row);
  json_arr_begin(j, "candidates");
  for (int c = 0; c < rule->n; ++c) json_str(j, NULL, rule->names[c]);
  json_arr_end(j);
  json_str(j, "excluded", rule->excluded);
  json_obj_end(j);
}

void cli_selection_json(cli_json_t *j, const char *key, const gs_selection_t *sel)
{
  const gs_select_features_t *x = &sel->features;
  json_obj_begin(j, key);
  json_str(j, "chosen", sel->chosen_name);
  json_bool(j, "measured", sel->measured);
  json_str(j, "cache", cli_cache_state(sel->cache));
  json_str(j, "cache_file", sel->cache_file[0] ? sel->cache_file : NULL);
  json_num(j, "expected_products", sel->expected_products);
  json_num(j, "seconds", sel->seconds);
  json_num(j, "shared_csr_ms", 1e3 * sel->shared_csr_s); /* charged to no candidate */
  json_num(j, "features_ms", 1e3 * sel->features_s);
  json_num(j, "measuring_ms", 1e3 * sel->measuring_s);
  json_bool(j, "staged", sel->staged || sel->first_name[0]);
  json_str(j, "first", sel->first_name[0] ? sel->first_name : NULL);
  json_int(j, "tried", sel->tried);
  json_int(j, "switches", sel->switches);
  json_int(j, "switch_iteration", sel->switch_iteration);
  json_num(j, "remaining_products", sel->remaining_products > 0.0 ? sel->remaining_products : NAN);
  json_num(j, "revisions_ms", 1e3 * sel->progress_s);
  json_str(j, "warning", sel->warning[0] ? sel->warning : NULL);
  json_obj_begin(j, "features");
  json_num(j, "pct_nnz", x->pct_nnz);
  json_num(j, "row_mean", x->row_mean);
  json_num(j, "row_std", x->row_std);
  json_int(j, "row_max", x->row_max);
  json_int(j, "diagonals", x->diagonals);
  json_num(j, "ell_fill", x->ell_fill);
  json_num(j, "dia_fill", x->dia_fill);
  json_num(j, "sell_fill", x->sell_fill);
  json_int(j, "distinct_values", x->distinct_values);
  json_bool(j, "symmetric", x->symmetric);
  json_obj_end(j);
  cli_rule_json(j, "rule", &sel->rule);
  json_arr_begin(j, "pool"); /* what the selection could measure, in its order */
  for (int c = 0; c < sel->pool.n; ++c) json_str(j, NULL, sel->pool.names[c]);
  json_arr_end(j);
  json_num(j, "expected_products_t", sel->expected_products_t);
  json_arr_begin(j, "candidates");
  for (int c = 0; c < sel->ntimes; ++c) {
    const gs_select_time_t *t = &sel->times[c];
    json_obj_begin(j, NULL);
    json_str(j, "format", t->name);
    json_str(j, "status", t->status == GS_SUCCESS          ? "ok"
                          : t->status == GS_SELECT_DEFERRED ? "not measured"
                          : t->status == GS_SELECT_SKIPPED  ? "skipped"
                                                            : "fail");
    json_num(j, "prepare_ms", t->status == GS_SUCCESS ? 1e3 * t->prepare_s : NAN);
    json_num(j, "spmv_us", t->status == GS_SUCCESS && (sel->measured || sel->staged)
                               ? 1e6 * t->spmv_s : NAN);
    json_num(j, "spmv_t_us", t->status == GS_SUCCESS && t->spmv_t_s > 0.0 ? 1e6 * t->spmv_t_s
                                                                          : NAN);
    json_num(j, "bound_us", t->status == GS_SELECT_SKIPPED ? 1e6 * t->bound_s : NAN);
    json_num(j, "cost_ms", 1e3 * t->cost_s); /* null when not measured */
    json_obj_end(j);
  }
  json_arr_end(j);
  json_obj_end(j);
}

void cli_selection_warn(const gs_selection_t *sel)
{
  if (sel && sel->warning[0]) fprintf(stderr, "gpusolve: warning: %s\n", sel->warning);
}
