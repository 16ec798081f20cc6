/* apps/cli_select.h: printing the "auto" format's selection record (gs_selection_t) the same way
 * in `solve`, `spmv` and `select`: text with --verbose, an object in --json, warnings on stderr. */
#ifndef GS_APPS_CLI_SELECT_H
#define GS_APPS_CLI_SELECT_H

#include "apps/cli.h"

/** One line: "auto chose hyb (measured 4 candidates, cache miss, 12.3 ms)". */
void cli_selection_line(FILE *f, const gs_selection_t *sel);
/** The rule row, the candidates with their prepare, SpMV and cost, the exclusions (--verbose). */
void cli_selection_details(FILE *f, const gs_selection_t *sel);
/** The record as a JSON object under `key` (NULL inside an array). */
void cli_selection_json(cli_json_t *j, const char *key, const gs_selection_t *sel);
/** The rule stage alone as a JSON object under `key`. */
void cli_rule_json(cli_json_t *j, const char *key, const gs_select_rule_t *rule);
/** Prints the record's warnings, if any, as "gpusolve: warning: ..." on stderr. */
void cli_selection_warn(const gs_selection_t *sel);
/** "off", "miss", "hit". */
const char *cli_cache_state(gs_select_cache_state_t c);

#endif
