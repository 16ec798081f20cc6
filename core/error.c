/* core/error.c: status and value-type names, the thread-local last-error message. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"

static _Thread_local char g_msg[1024];
static _Thread_local char g_loc[256];

const char *gs_status_string(gs_status_t st)
{
  switch (st) {
  case GS_SUCCESS: return "GS_SUCCESS";
  case GS_ERR_INVALID_ARG: return "GS_ERR_INVALID_ARG";
  case GS_ERR_DIMENSION: return "GS_ERR_DIMENSION";
  case GS_ERR_PARSE: return "GS_ERR_PARSE";
  case GS_ERR_IO: return "GS_ERR_IO";
  case GS_ERR_UNSUPPORTED: return "GS_ERR_UNSUPPORTED";
  case GS_ERR_FORMAT_FILL: return "GS_ERR_FORMAT_FILL";
  case GS_ERR_HOST_MEMORY: return "GS_ERR_HOST_MEMORY";
  case GS_ERR_DEVICE_MEMORY: return "GS_ERR_DEVICE_MEMORY";
  case GS_ERR_CUDA: return "GS_ERR_CUDA";
  case GS_ERR_CUBLAS: return "GS_ERR_CUBLAS";
  case GS_ERR_CUSPARSE: return "GS_ERR_CUSPARSE";
  case GS_ERR_INTERNAL: return "GS_ERR_INTERNAL";
  }
  return "GS_ERR_UNKNOWN";
}

const char *gs_value_type_string(gs_value_type_t t)
{
  switch (t) {
  case GS_VALUE_DOUBLE: return "double";
  case GS_VALUE_FLOAT: return "float";
  }
  return "unknown";
}

size_t gs_value_type_size(gs_value_type_t t)
{
  switch (t) {
  case GS_VALUE_DOUBLE: return sizeof(double);
  case GS_VALUE_FLOAT: return sizeof(float);
  }
  return 0;
}

const char *gs_last_error(void) { return g_msg; }
const char *gs_last_error_location(void) { return g_loc; }

void gs_clear_error(void)
{
  g_msg[0] = '\0';
  g_loc[0] = '\0';
}

gs_status_t gs_error_set(gs_status_t st, const char *file, int line, const char *fmt, ...)
{
  va_list ap;
  char tmp[sizeof g_msg];
  /* The message may be built from the previous one (wrapping a cause), so format into tmp. */
  va_start(ap, fmt);
  vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  /* One line: a newline inside a message would break the CLI's one-line error contract. */
  for (char *c = tmp; *c; ++c)
    if (*c == '\n' || *c == '\r') *c = ' ';
  memcpy(g_msg, tmp, sizeof g_msg);
  snprintf(g_loc, sizeof g_loc, "%s:%d", file ? file : "?", line);
  return st;
}
