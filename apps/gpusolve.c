/* apps/gpusolve.c: the gpusolve command: git-style subcommands, `solve` by default. Compiled
 * twice (apps/CMakeLists.txt): into gpusolve-gpu, which runs every command, and with
 * GS_CLI_FRONT into the host-only front `gpusolve`, which runs the commands that need no GPU
 * and hands the others to gpusolve-gpu with the same argv (apps/front/front.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "apps/cli.h"
#include "apps/front/front.h"

/* A command's entry: in the front, NULL for a command that always needs gpusolve-gpu. */
#ifdef GS_CLI_FRONT
#define ENTRY(front, gpu) front
#else
#define ENTRY(front, gpu) gpu
#endif

static const struct {
  const char *name;
  int (*run)(int, char **);
  const char *summary;
} commands[] = {
  {"solve", ENTRY(NULL, cmd_solve),
   "solve Ax = b with a Krylov method and any SpMV format (default)"},
  {"spmv", ENTRY(NULL, cmd_spmv), "benchmark SpMV (and its transpose) per format against cuSPARSE"},
  {"info", cmd_info, "size, symmetry, row-length statistics, density of a matrix"},
  {"select", ENTRY(cmd_select_front, cmd_select),
   "which SpMV format auto picks: rule, measured choice and the oracle"},
  {"check", ENTRY(NULL, cmd_check), "check every format's layout and kernels against plain CSR"},
  {"batch", ENTRY(NULL, cmd_batch),
   "many small matrices at once: batched SpMV benchmark, batched CG/BiCGSTAB/GMRES"},
  {"gen", cmd_gen,
   "generate synthetic matrices (Laplacians, normal, pareto, random, powerlaw, convdiff, "
   "elasticity)"},
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

/* Runs a command (argv[0] its name); `all` is the whole command line, for gpusolve-gpu. */
static int run(int (*fn)(int, char **), int argc, char **argv, char **all)
{
#ifdef GS_CLI_FRONT
  const int rc = fn ? fn(argc, argv) : CLI_RUN_ON_GPU;
  return rc == CLI_RUN_ON_GPU ? cli_exec_gpu(all) : rc;
#else
  (void)all;
  return fn(argc, argv);
#endif
}

static int dispatch(int argc, char **argv)
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
      if (!strcmp(argv[1], commands[i].name)) return run(commands[i].run, argc - 1, argv + 1, argv);
  /* No command: `gpusolve [A.mtx] [options]` is `gpusolve solve ...`. A bare word that is not a
   * command and not a file argument is most likely a typo of a command. */
  if (argc >= 2 && argv[1][0] != '-' && !strchr(argv[1], '.') && !strchr(argv[1], '/'))
    return cli_fail(CLI_BAD_INPUT, "unknown command '%s' (see 'gpusolve --help')", argv[1]);
#ifdef GS_CLI_FRONT
  return cli_exec_gpu(argv);
#else
  argv[0] = (char *)"solve";
  return cmd_solve(argc, argv);
#endif
}

int main(int argc, char **argv)
{
  int rc = dispatch(argc, argv);
#ifndef GS_CLI_FRONT
  cli_context_discard(); /* a context prefetched for a command that failed before using it */
#endif
  /* Output is buffered: a write that failed (a full disk, /dev/full) shows at the latest here.
   * A command that succeeded but whose output was lost fails (exit 2). */
  errno = 0;
  const int flushed = fflush(stdout) == 0, err = errno;
  if ((!flushed || ferror(stdout)) && rc == CLI_OK)
    rc = cli_fail(CLI_BAD_INPUT, "cannot write to standard output: %s",
                  err ? strerror(err) : "write error");
  return rc;
}
