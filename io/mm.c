/* io/mm.c: error helpers shared by the Matrix Market reader (io/mm_read.c) and writer, and the
 * reader's probe of the memory it may still take (its budget).
 *
 * Every fault is reported as "PATH:LINE: cause" (or "PATH: cause" when it is not on a line):
 * GS_ERR_PARSE for the content, GS_ERR_IO for open, read and write failures, GS_ERR_UNSUPPORTED
 * for complex and hermitian files and, in a build without zlib, gzip files. */
#define _DEFAULT_SOURCE /* _SC_AVPHYS_PAGES */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/error.h"
#include "gpusolve/io.h"
#include "io/mm_internal.h"

gs_status_t gs_mm_error(gs_status_t st, const char *file, int srcline, const char *path,
                        int64_t line, const char *fmt, ...)
{
  char cause[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cause, sizeof cause, fmt, ap);
  va_end(ap);
  if (line > 0)
    return gs_error_set(st, file, srcline, "%s:%lld: %s", path, (long long)line, cause);
  return gs_error_set(st, file, srcline, "%s: %s", path, cause);
}

const char *gs_mm_strerror(int e, char *buf, size_t n)
{
  if (strerror_r(e, buf, n) != 0) snprintf(buf, n, "error %d", e);
  return buf;
}

int gs_mm_has_gzip(void)
{
#ifdef GS_HAVE_ZLIB
  return 1;
#else
  return 0;
#endif
}

int gs_mm_ends_with_gz(const char *path)
{
  size_t n = strlen(path);
  return n >= 3 && path[n - 3] == '.' && (path[n - 2] == 'g' || path[n - 2] == 'G') &&
         (path[n - 1] == 'z' || path[n - 1] == 'Z');
}

const char *gs_mm_field_string(gs_mm_field_t field)
{
  switch (field) {
  case GS_MM_FIELD_REAL: return "real";
  case GS_MM_FIELD_INTEGER: return "integer";
  case GS_MM_FIELD_PATTERN: return "pattern";
  }
  return "unknown";
}

/* ---- the memory budget ------------------------------------------------------------------ */

int64_t gs_mm_memory_limit = 0;

/* The first integer of a small text file (a cgroup's memory.max: "max" reads as none), -1. */
static int64_t read_int_file(const char *path)
{
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  char buf[64];
  int64_t v = -1;
  if (fgets(buf, sizeof buf, f)) {
    char *end;
    long long x = strtoll(buf, &end, 10);
    if (end != buf && x >= 0) v = (int64_t)x;
  }
  fclose(f);
  return v;
}

/* MemAvailable of /proc/meminfo (what can be taken without swapping), else the free pages. */
static int64_t machine_available(void)
{
  FILE *f = fopen("/proc/meminfo", "r");
  if (f) {
    char line[256];
    long long kb = -1;
    while (fgets(line, sizeof line, f))
      if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1) break;
    fclose(f);
    if (kb >= 0) return (int64_t)kb * 1024;
  }
  long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  if (pages > 0 && size > 0) return (int64_t)pages * size;
  return INT64_MAX;
}

/* Headroom under a resource limit, given the current use in bytes; INT64_MAX without one. */
static int64_t rlimit_headroom(int resource, int64_t used)
{
  struct rlimit rl;
  if (getrlimit(resource, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return INT64_MAX;
  if ((uint64_t)rl.rlim_cur >= (uint64_t)INT64_MAX) return INT64_MAX;
  return (int64_t)rl.rlim_cur > used ? (int64_t)rl.rlim_cur - used : 0;
}

int64_t gs_mm_memory_available(void)
{
  if (gs_mm_memory_limit > 0) return gs_mm_memory_limit;
  int64_t avail = machine_available();
  /* a cgroup (v2, else v1) limit of this container */
  int64_t max = read_int_file("/sys/fs/cgroup/memory.max"),
          cur = read_int_file("/sys/fs/cgroup/memory.current");
  if (max < 0) {
    max = read_int_file("/sys/fs/cgroup/memory/memory.limit_in_bytes");
    cur = read_int_file("/sys/fs/cgroup/memory/memory.usage_in_bytes");
  }
  if (max > 0 && cur >= 0) {
    int64_t room = max > cur ? max - cur : 0;
    if (room < avail) avail = room;
  }
  /* ulimit -v and -d: what the process has mapped (/proc/self/statm: size ... data, pages) */
  long long size = 0, res, shr, text, lib, dat = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f) {
    if (fscanf(f, "%lld %lld %lld %lld %lld %lld", &size, &res, &shr, &text, &lib, &dat) != 6)
      size = dat = 0;
    fclose(f);
  }
  const long page = sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : 4096;
  int64_t room = rlimit_headroom(RLIMIT_AS, (int64_t)size * page);
  if (room < avail) avail = room;
  room = rlimit_headroom(RLIMIT_DATA, (int64_t)dat * page);
  if (room < avail) avail = room;
  return avail;
}

const char *gs_mm_format_bytes(double bytes, char *buf, size_t n)
{
  const double gib = 1024.0 * 1024.0 * 1024.0;
  if (bytes >= 0.1 * gib)
    snprintf(buf, n, "%.1f GiB", bytes / gib);
  else
    snprintf(buf, n, "%.1f MiB", bytes / (1024.0 * 1024.0));
  return buf;
}
