/* apps/cli_spmv.h: the SpMV backend options of the CLI (--max-fill, --vector-width, --spmv-opt)
 * gathered into one option string for gs_spmv_create. */
#ifndef GS_APPS_CLI_SPMV_H
#define GS_APPS_CLI_SPMV_H

#include <stddef.h>

/** Options every subcommand that prepares backends accepts, for its --help. */
#define CLI_SPMV_OPT_HELP                                                                      \
  "  --spmv-opt K=V    a backend option, repeatable: 'max_fill=4', 'csr-vector.width=8',\n"    \
  "                    'hyb.k=27' (list: gpusolve spmv --list --verbose)\n"

/** Recognizes argv[*i] as --max-fill F (max_fill=F), --vector-width W (csr-vector.width=W) or
 *  --spmv-opt K=V and appends the pair to buf (a string of `len` bytes). Returns 0 when the
 *  option is not one of these, 1 when consumed (also its value), -1 after printing an error
 *  (bad value, unknown key, or the string would not fit). `allow` lists the flags this
 *  subcommand takes among "max-fill", "vector-width" and "spmv-opt" (space separated). */
int cli_spmv_opt(int argc, char **argv, int *i, const char *allow, char *buf, size_t len);

#endif
