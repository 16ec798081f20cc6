/* core/timer.c: gs_wall_seconds, the one monotonic wall clock of the library and its tools. */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "gpusolve/timer.h"

double gs_wall_seconds(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
