/* io/mm.c: error helpers shared by the Matrix Market reader (io/mm_read.c) and writer.
 *
 * Every fault is reported as "PATH:LINE: cause" (or "PATH: cause" when it is not on a line):
 * GS_ERR_PARSE for the content, GS_ERR_IO for open, read and write failures, GS_ERR_UNSUPPORTED
 * for complex and hermitian files and, in a build without zlib, gzip files. */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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
