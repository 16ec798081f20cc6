/* apps/cmd_solve.c: `gpusolve solve` (placeholder until the solvers land). */
#include "apps/cli.h"

int cmd_solve(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  return cli_fail(CLI_BAD_INPUT, "solve is not available yet in this build");
}
