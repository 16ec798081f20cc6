/* core/error.h: raising errors with a message, and the check macros for status, CUDA, cuBLAS,
 * cuSPARSE and kernel launches. Internal header (not installed). */
#ifndef GS_CORE_ERROR_H
#define GS_CORE_ERROR_H

#include "gpusolve/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Records a printf-style message for status st at file:line and returns st. */
gs_status_t gs_error_set(gs_status_t st, const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Conversions of library codes (ints, so that this header needs no CUDA headers). */
gs_status_t gs_error_cuda(int err, const char *expr, const char *file, int line);
gs_status_t gs_error_cublas(int err, const char *expr, const char *file, int line);
gs_status_t gs_error_cusparse(int err, const char *expr, const char *file, int line);
/** After a kernel launch: cudaGetLastError(), plus a stream sync under GS_DEBUG_SYNC. */
gs_status_t gs_error_launch(void *stream, const char *kernel, const char *file, int line);

#ifdef __cplusplus
}
#endif

/** Raise: `return GS_ERROR(GS_ERR_DIMENSION, "x has %d entries, A has %d columns", a, b);` */
#define GS_ERROR(st, ...) gs_error_set((st), __FILE__, __LINE__, __VA_ARGS__)

/** Propagate a failed status from a function that allocates nothing. */
#define GS_CHECK(call)                                                                        \
  do {                                                                                        \
    gs_status_t gs_st_ = (call);                                                              \
    if (gs_st_ != GS_SUCCESS) return gs_st_;                                                  \
  } while (0)

/** In a function with `gs_status_t st` and a `cleanup:` label: on failure jump there. */
#define GS_TRY(call)                                                                          \
  do {                                                                                        \
    st = (call);                                                                              \
    if (st != GS_SUCCESS) goto cleanup;                                                       \
  } while (0)

/** Raise inside a function with cleanup: set st with a message and jump. */
#define GS_FAIL(code, ...)                                                                    \
  do {                                                                                        \
    st = GS_ERROR((code), __VA_ARGS__);                                                       \
    goto cleanup;                                                                             \
  } while (0)

/* Wrap library calls; each evaluates to a gs_status_t (GS_SUCCESS when the call succeeded). */
#define GS_CUDA(call) gs_error_cuda((int)(call), #call, __FILE__, __LINE__)
#define GS_CUBLAS(call) gs_error_cublas((int)(call), #call, __FILE__, __LINE__)
#define GS_CUSPARSE(call) gs_error_cusparse((int)(call), #call, __FILE__, __LINE__)
#define GS_CHECK_LAUNCH(stream, name) gs_error_launch((void *)(stream), (name), __FILE__, __LINE__)

#endif
