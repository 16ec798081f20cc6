/* apps/cli_out.c: output paths of the CLI (see apps/cli_out.h). */
#define _POSIX_C_SOURCE 200809L
#include "apps/cli_out.h"

#include <signal.h>
#include <string.h>

#include "apps/cli.h"
#include "io/outfile.h"

static void on_signal(int sig)
{
  gs_outfile_remove_temps(); /* unlink only: async-signal-safe */
  /* SA_RESETHAND restored the default action and SA_NODEFER lets it through at once */
  raise(sig);
}

void cli_out_signals(void)
{
  static int done;
  static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
  if (done) return;
  done = 1;
  for (size_t k = 0; k < sizeof sigs / sizeof sigs[0]; ++k) {
    struct sigaction old, sa;
    /* ignored (nohup, a background job) or someone's own handler (MPI's): left alone */
    if (sigaction(sigs[k], NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) ||
        old.sa_handler != SIG_DFL)
      continue;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND | SA_NODEFER;
    sigaction(sigs[k], &sa, NULL);
  }
}

int cli_out_check(const char *cmd, const char *opt, const char *path, int matrix)
{
  if (!path || !*path)
    return cli_fail(CLI_BAD_INPUT, "%s: %s \"\": empty output path", cmd, opt);
  gs_status_t st = matrix ? gs_mm_check_output(path) : gs_outfile_check(path);
  if (st != GS_SUCCESS) return cli_fail(CLI_BAD_INPUT, "%s: %s: %s", cmd, opt, gs_last_error());
  cli_out_signals();
  return CLI_OK;
}
