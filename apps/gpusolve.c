/* apps/gpusolve.c: the gpusolve command: git-style subcommands, `solve` by default. */
#include <stdio.h>
#include <string.h>

#include "apps/cli.h"

static const struct {
  const char *name;
  int (*run)(int, char **);
  const char *summary;
} commands[] = {
  {"solve", cmd_solve, "solve Ax = b with a Krylov method and any SpMV format (default)"},
  {"spmv", cmd_spmv, "benchmark SpMV (and its transpose) per format against cuSPARSE"},
  {"info", cmd_info, "size, symmetry, row-length statistics, density of a matrix"},
  {"select", cmd_select, "which SpMV format auto picks: rule, measured choice and the oracle"},
  {"check", cmd_check, "check every format's layout and kernels against plain CSR"},
  {"batch", cmd_batch, "many small matrices at once: batched SpMV benchmark, batched CG/BiCGSTAB"},
  {"gen", cmd_gen,
   "generate synthetic matrices (Laplacians, normal, pareto, random, powerlaw, convdiff)"},
};
#define NCOMMANDS (int)(sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
  fprintf(f, "usage: gpusolve [COMMAND] [ARGS...]\n\n"
             "gpusolve %s: Krylov solvers on NVIDIA GPUs with pluggable SpMV formats.\n\n"
             "Commands:\n", gs_version());
  for (int i = 0; i < NCOMMANDS; ++i) fprintf(f, "  %-7s %s\n", commands[i].name, commands[i].summary);
  fprintf(f, "\nWith no command (or a .mtx file first) gpusolve runs `solve`.\n"
             "`gpusolve COMMAND --help` describes each command.\n"
             "Exit status: 0 success, 1 not converged, 2 bad usage or input, 3 device failure.\n");
}

int main(int argc, char **argv)
{
  if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))) {
    usage(stdout);
    return CLI_OK;
  }
  if (argc >= 2 && !strcmp(argv[1], "--version")) {
    printf("gpusolve %s\n", gs_version());
    return CLI_OK;
  }
  if (argc >= 2)
    for (int i = 0; i < NCOMMANDS; ++i)
      if (!strcmp(argv[1], commands[i].name)) return commands[i].run(argc - 1, argv + 1);
  /* No command: `gpusolve [A.mtx] [options]` is `gpusolve solve ...`. A bare word that is not a
   * command and not a file argument is most likely a typo of a command. */
  if (argc >= 2 && argv[1][0] != '-' && !strchr(argv[1], '.') && !strchr(argv[1], '/'))
    return cli_fail(CLI_BAD_INPUT, "unknown command '%s' (see 'gpusolve --help')", argv[1]);
  argv[0] = (char *)"solve";
  return cmd_solve(argc, argv);
}
