/* gpusolve/status.h: status codes, the thread-local error message, index and value types. */
#ifndef GPUSOLVE_STATUS_H
#define GPUSOLVE_STATUS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Index type of every sparse structure (32-bit in this version). */
typedef int32_t gs_idx_t;
/** Value type of every matrix and vector (double in this version). */
typedef double gs_val_t;

/** Operation applied to a matrix: A (N) or its transpose A^T (T). */
typedef enum gs_op { GS_OP_N = 0, GS_OP_T = 1 } gs_op_t;

/** Result of every fallible library call. 0 is success, errors are negative. */
typedef enum gs_status {
  GS_SUCCESS = 0,
  GS_ERR_INVALID_ARG = -1,   /* a NULL pointer, a negative size, an unknown name */
  GS_ERR_DIMENSION = -2,     /* sizes that disagree */
  GS_ERR_PARSE = -3,         /* malformed input file (message names file and line) */
  GS_ERR_IO = -4,            /* a file could not be opened, read or written */
  GS_ERR_UNSUPPORTED = -5,   /* valid request this build or backend does not do */
  GS_ERR_FORMAT_FILL = -6,   /* a padded format (ELL, DIA) refused: fill over the limit */
  GS_ERR_HOST_MEMORY = -7,   /* out of host memory */
  GS_ERR_DEVICE_MEMORY = -8, /* out of device memory */
  GS_ERR_CUDA = -9,          /* CUDA runtime error, including "no CUDA device" */
  GS_ERR_CUBLAS = -10,       /* cuBLAS error */
  GS_ERR_CUSPARSE = -11,     /* cuSPARSE error */
  GS_ERR_INTERNAL = -12      /* a bug in gpusolve: please report it */
} gs_status_t;

/** Short constant name of a status ("GS_ERR_PARSE"); never NULL. */
const char *gs_status_string(gs_status_t st);

/**
 * Message of the last failed call on this thread: the cause in one line, e.g.
 * "A.mtx:12: column index 0 out of range 1..5". Owned by the library, valid until the next
 * failing call on the same thread. Empty string when nothing failed yet.
 */
const char *gs_last_error(void);

/** Source location inside gpusolve ("core/matrix.c:120") where the last error was raised. */
const char *gs_last_error_location(void);

/** Clears the thread's error message. */
void gs_clear_error(void);

#ifdef __cplusplus
}
#endif
#endif
