/* apps/front/exec.c: the front hands a GPU command to gpusolve-gpu (front.h). execv keeps the
 * process, its streams and its environment, so the command's output, messages and exit status
 * are gpusolve-gpu's own, as if it had been run directly. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "apps/cli.h"
#include "apps/front/front.h"

#ifndef GS_FRONT_LIBEXEC
#define GS_FRONT_LIBEXEC "../libexec/gpusolve"
#endif

int cli_exec_gpu(char **argv)
{
  char dir[PATH_MAX], here[PATH_MAX + 32], installed[PATH_MAX + 64];
  const ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
  if (n <= 0 || n >= (ssize_t)sizeof dir - 1)
    return cli_fail(CLI_DEVICE, "cannot find gpusolve-gpu (/proc/self/exe: %s)",
                    n < 0 ? strerror(errno) : "path too long");
  dir[n] = '\0';
  char *slash = strrchr(dir, '/');
  if (slash) *slash = '\0';
  snprintf(here, sizeof here, "%s/gpusolve-gpu", dir);
  snprintf(installed, sizeof installed, "%s/%s/gpusolve-gpu", dir, GS_FRONT_LIBEXEC);
  const char *const where[2] = {here, installed};
  for (int k = 0; k < 2; ++k) {
    if (access(where[k], X_OK) != 0) continue;
    fflush(NULL); /* nothing is pending; execv would drop it */
    execv(where[k], argv);
    return cli_fail(CLI_DEVICE, "cannot run %s: %s", where[k], strerror(errno));
  }
  return cli_fail(CLI_DEVICE, "cannot find gpusolve-gpu (looked in %s and %s)", here, installed);
}
