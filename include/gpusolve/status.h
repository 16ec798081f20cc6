/* gpusolve/status.h: status codes, the thread-local error message, index and value types. */
#ifndef GPUSOLVE_STATUS_H
#define GPUSOLVE_STATUS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
/* The library is built with hidden visibility: what this header declares is its public API. */
#if defined(__GNUC__) && !defined(GS_NO_VISIBILITY_PRAGMAS)
#pragma GCC visibility push(default)
#endif

/** Row and column index of every sparse structure: 32-bit, so a matrix has at most 2^31-1 rows
 *  and 2^31-1 columns. */
typedef int32_t gs_idx_t;
/** Offset into the entries of a matrix: CSR row pointers and entry counts. 64-bit, so a matrix
 *  may hold more than 2^31-1 entries where memory allows (the backends that take such a matrix
 *  say so, GS_SPMV_FLAG_WIDE in gpusolve/spmv.h; the others refuse it with GS_ERR_UNSUPPORTED). */
typedef int64_t gs_off_t;

/** Value types of matrices and vectors. The entry points take double values and double vectors
 *  (gs_val_t), except gs_spmv_apply_float (gpusolve/spmv.h), which takes the float vectors of a
 *  product prepared with precision=float; the enum is the ABI's word for the type
 *  (gs_spmv_value_type). */
typedef enum gs_value_type {
  GS_VALUE_DOUBLE = 0, /* IEEE binary64 */
  GS_VALUE_FLOAT = 1   /* IEEE binary32: the vectors of a precision=float product */
} gs_value_type_t;
/** The C type of the values and vectors the entry points take: double (GS_VALUE_TYPE). */
typedef double gs_val_t;
#define GS_VALUE_TYPE GS_VALUE_DOUBLE

/** Lowercase name of a value type ("double", "float"); "unknown" for any other value. */
const char *gs_value_type_string(gs_value_type_t t);
/** Bytes of one value of type t (8, 4); 0 for an unknown type. */
size_t gs_value_type_size(gs_value_type_t t);

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

#if defined(__GNUC__) && !defined(GS_NO_VISIBILITY_PRAGMAS)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif
#endif
