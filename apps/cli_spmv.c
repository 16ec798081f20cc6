/* apps/cli_spmv.c: the SpMV backend options of the CLI, one option string for gs_spmv_create. */
#include "apps/cli_spmv.h"

#include <stdio.h>
#include <string.h>

#include "apps/cli.h"

static int append(char *buf, size_t len, const char *pair)
{
  size_t used = strlen(buf), add = strlen(pair) + (used ? 1 : 0);
  if (used + add + 1 > len)
    return cli_fail(CLI_BAD_INPUT, "too many SpMV options (at most %zu characters)", len - 1);
  snprintf(buf + used, len - used, "%s%s", used ? "," : "", pair);
  return CLI_OK;
}

gs_precision_t cli_spmv_precision(const char *opts)
{
  if (opts && strstr(opts, "precision=float")) return GS_PRECISION_FLOAT;
  if (opts && strstr(opts, "precision=mixed")) return GS_PRECISION_MIXED;
  return GS_PRECISION_DOUBLE;
}

int cli_spmv_opt(int argc, char **argv, int *i, unsigned allow, char *buf, size_t len)
{
  const char *v = NULL;
  char pair[128];
  int r;
  if ((allow & CLI_SPMV_MAX_FILL) && (r = cli_opt(argc, argv, i, "--max-fill", &v)) != 0) {
    double f;
    if (r < 0 || cli_parse_double("--max-fill", v, 1.0, 1e9, &f)) return -1;
    snprintf(pair, sizeof pair, "max_fill=%.17g", f);
  } else if ((allow & CLI_SPMV_VECTOR_WIDTH) &&
             (r = cli_opt(argc, argv, i, "--vector-width", &v)) != 0) {
    long w;
    if (r < 0 || cli_parse_int("--vector-width", v, 0, 32, &w)) return -1;
    if (w & (w - 1)) {
      cli_fail(CLI_BAD_INPUT, "--vector-width must be 0 (automatic), 1, 2, 4, 8, 16 or 32, not %ld", w);
      return -1;
    }
    snprintf(pair, sizeof pair, "csr-vector.width=%ld", w);
  } else if ((allow & CLI_SPMV_PRECISION) && (r = cli_opt(argc, argv, i, "--precision", &v)) != 0) {
    if (r < 0) return -1;
    if (gs_precision_find(v) < 0) {
      cli_fail(CLI_BAD_INPUT, "--precision: expected double, mixed or float, not '%s'", v);
      return -1;
    }
    snprintf(pair, sizeof pair, "precision=%s", v);
  } else if ((allow & CLI_SPMV_OPT) && (r = cli_opt(argc, argv, i, "--spmv-opt", &v)) != 0) {
    if (r < 0) return -1;
    if (gs_spmv_options_check(v) != GS_SUCCESS) {
      cli_fail(CLI_BAD_INPUT, "--spmv-opt: %s", gs_last_error());
      return -1;
    }
    if (strlen(v) >= sizeof pair) {
      cli_fail(CLI_BAD_INPUT, "--spmv-opt '%s' is too long", v);
      return -1;
    }
    snprintf(pair, sizeof pair, "%s", v);
  } else {
    return 0;
  }
  return append(buf, len, pair) == CLI_OK ? 1 : -1;
}
