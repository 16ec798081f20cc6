/* apps/cli_spmv.h: the SpMV backend options of the CLI (--max-fill, --vector-width, --spmv-opt)
 * gathered into one option string for gs_spmv_create. */
#ifndef GS_APPS_CLI_SPMV_H
#define GS_APPS_CLI_SPMV_H

#include <stddef.h>

#include "gpusolve/spmv.h"

/** Options every subcommand that prepares backends accepts, for its --help. */
#define CLI_SPMV_OPT_HELP                                                                      \
  "  --spmv-opt K=V    a backend option, repeatable: 'max_fill=4', 'csr-vector.width=8',\n"    \
  "                    'hyb.k=27' (list: gpusolve spmv --list --verbose)\n"

/** The flags of cli_spmv_opt a subcommand takes (a bit set). */
enum {
  CLI_SPMV_MAX_FILL = 1 << 0,     /* --max-fill F     = max_fill=F */
  CLI_SPMV_VECTOR_WIDTH = 1 << 1, /* --vector-width W = csr-vector.width=W */
  CLI_SPMV_OPT = 1 << 2,          /* --spmv-opt K=V */
  CLI_SPMV_PRECISION = 1 << 3     /* --precision P    = precision=P (double, mixed, float) */
};

/** The line of --help for CLI_SPMV_PRECISION. */
#define CLI_SPMV_PRECISION_HELP                                                                \
  "  --precision P     double (default); mixed: float matrix values with double vectors\n"    \
  "                    and sums (half the value bytes); float: values, x, y and sums in\n"     \
  "                    float (half the value and vector bytes). The formats flagged\n"         \
  "                    'mixed' or 'float' in gpusolve spmv --list --verbose; the others\n"     \
  "                    are refused\n"

/** The precision the option string asks of some backend: GS_PRECISION_FLOAT when a pair sets
 *  precision=float, else GS_PRECISION_MIXED when one sets precision=mixed, else double. */
gs_precision_t cli_spmv_precision(const char *opts);

/** Recognizes argv[*i] as one of the `allow`ed flags and appends its pair to buf (a string of
 *  `len` bytes). Returns 0 when the option is not one of these, 1 when consumed (also its
 *  value), -1 after printing an error (bad value, unknown key, or the string would not fit). */
int cli_spmv_opt(int argc, char **argv, int *i, unsigned allow, char *buf, size_t len);

#endif
