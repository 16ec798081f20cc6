/* gpusolve/matrix.h: host sparse containers (COO, CSR), conversions, validation, features. */
#ifndef GPUSOLVE_MATRIX_H
#define GPUSOLVE_MATRIX_H

#include "gpusolve/status.h"

#ifdef __cplusplus
extern "C" {
#endif
/* The library is built with hidden visibility: what this header declares is its public API. */
#if defined(__GNUC__) && !defined(GS_NO_VISIBILITY_PRAGMAS)
#pragma GCC visibility push(default)
#endif

/** Symmetry a matrix was stored with (Matrix Market's header). The containers always hold
 *  every entry: symmetric storage is expanded when a file is read. */
typedef enum gs_symmetry {
  GS_SYM_GENERAL = 0,
  GS_SYM_SYMMETRIC = 1,
  GS_SYM_SKEW = 2
} gs_symmetry_t;

/** Host coordinate matrix (0-based). Entries in any order; duplicates allowed. The arrays are
 *  malloc'd (cap entries each), so code that owns a COO may grow them with realloc. */
typedef struct gs_coo {
  gs_idx_t m, n;        /* rows, columns */
  gs_off_t nnz;         /* entries in use */
  gs_off_t cap;         /* entries allocated */
  gs_idx_t *row, *col;  /* size cap */
  gs_val_t *val;        /* size cap */
  gs_symmetry_t symmetry; /* as stored in the source; entries are already expanded */
} gs_coo_t;

/** Host compressed-row matrix (0-based): row_ptr[m+1], col[nnz], val[nnz].
 *  A valid CSR has non-decreasing row_ptr, row_ptr[0] = 0, columns in range; gs_coo_to_csr
 *  produces rows with strictly increasing columns (duplicates summed, explicit zeros kept). */
typedef struct gs_csr {
  gs_idx_t m, n;
  gs_off_t nnz;         /* entries: 64-bit, may exceed 2^31-1 */
  gs_off_t *row_ptr;    /* size m + 1 */
  gs_idx_t *col;        /* size nnz */
  gs_val_t *val;        /* size nnz */
  gs_symmetry_t symmetry; /* as stored in the source */
} gs_csr_t;

/** Allocates an m x n COO with room for cap entries (nnz = 0). */
gs_status_t gs_coo_create(gs_coo_t **A, gs_idx_t m, gs_idx_t n, gs_off_t cap);
/** Makes room for at least `need` entries (grows by half again, or to `need`). */
gs_status_t gs_coo_reserve(gs_coo_t *A, gs_off_t need);
/** Appends one entry, growing the arrays as needed. */
gs_status_t gs_coo_push(gs_coo_t *A, gs_idx_t i, gs_idx_t j, gs_val_t v);
/** Frees A (NULL-safe) and sets *A = NULL. */
void gs_coo_destroy(gs_coo_t **A);

/** Allocates an m x n CSR with room for nnz entries; row_ptr zeroed. */
gs_status_t gs_csr_create(gs_csr_t **A, gs_idx_t m, gs_idx_t n, gs_off_t nnz);
/** Frees A (NULL-safe) and sets *A = NULL. */
void gs_csr_destroy(gs_csr_t **A);
/** Deep copy. */
gs_status_t gs_csr_copy(gs_csr_t **out, const gs_csr_t *A);

/** COO -> CSR: rows in order, columns sorted within each row, duplicates summed, explicit
 *  zeros kept. The COO is not changed. */
gs_status_t gs_coo_to_csr(gs_csr_t **out, const gs_coo_t *A);
/** CSR -> COO (row-major order). */
gs_status_t gs_csr_to_coo(gs_coo_t **out, const gs_csr_t *A);
/** Host transpose: out = A^T, rows sorted. */
gs_status_t gs_csr_transpose(gs_csr_t **out, const gs_csr_t *A);
/** Checks row_ptr monotone and in bounds, columns in range, values finite.
 *  Returns GS_ERR_INVALID_ARG with the first fault in gs_last_error(). */
gs_status_t gs_csr_validate(const gs_csr_t *A);
/** Whether every row's columns are strictly increasing (1) or not (0). */
int gs_csr_is_sorted(const gs_csr_t *A);

/** Reference product on the host: y = alpha*op(A)*x + beta*y. The BLAS rule for the scalars:
 *  with alpha == 0, A and x are not read (y = beta*y, so NaN in x does not reach y); with
 *  beta == 0, y is written and never read. The oracle for every backend. */
gs_status_t gs_csr_spmv_host(const gs_csr_t *A, gs_op_t op, gs_val_t alpha, const gs_val_t *x,
                             gs_val_t beta, gs_val_t *y);

/** Norm-wise relative error of a computed product: y_out against the host reference of
 *  alpha*op(A)*x + beta*y_in (y_in ignored when beta == 0), measured as
 *  max_i |y_out_i - ref_i| / max_i (|alpha| (|op(A)| |x|)_i + |beta| |y_in_i|).
 *  Returns +Inf when y_out holds NaN or Inf, -1 when out of host memory or op is invalid. */
double gs_spmv_rel_error(const gs_csr_t *A, gs_op_t op, gs_val_t alpha, const gs_val_t *x,
                         gs_val_t beta, const gs_val_t *y_in, const gs_val_t *y_out);

/** Relative tolerance of numerical symmetry: A counts as symmetric when
 *  max |a_ij - a_ji| / max |a| <= GS_SYMMETRY_RTOL (see gs_features_t.asymmetry). Matrices
 *  assembled by FEM codes are often stored `general` and symmetric only to rounding (~1e-12
 *  relative); 1e-10 accepts those and still rejects any genuinely nonsymmetric operator. */
#define GS_SYMMETRY_RTOL 1e-10

/** Structural features of a matrix (the inputs of format selection of Sedaghati et
 *  al., PPAA 2015).
 *
 *  Symmetry: `asymmetry` = max over stored entries a_ij of |a_ij - a_ji| / max |a|, where a
 *  mirror a_ji that is not stored counts as 0 and max |a| is over all stored entries. It is 0 for
 *  an exactly symmetric matrix and for an all-zero (or empty) square matrix, lies in [0, 2]
 *  otherwise (2 for a skew-symmetric one), and is +INFINITY when it cannot be measured: a
 *  non-square matrix, or one with a non-finite stored value.
 *  numerically_symmetric = square and asymmetry <= GS_SYMMETRY_RTOL, so the pattern may differ
 *  from its transpose only through entries that are themselves within the tolerance (an explicit
 *  a_ij = 1e-17 whose mirror is absent, an explicit zero); structurally_symmetric stays the
 *  exact pattern test. */
typedef struct gs_features {
  gs_idx_t rows, cols;
  gs_off_t nnz;
  double density;          /* nnz / (rows * cols) */
  double row_mean, row_std;/* mean and population standard deviation of row lengths */
  gs_off_t row_max, row_min;
  gs_idx_t empty_rows;
  gs_idx_t diagonals;      /* occupied diagonals (distinct j - i) */
  int structurally_symmetric; /* square and pattern(A) == pattern(A^T) */
  int numerically_symmetric;  /* square and asymmetry <= GS_SYMMETRY_RTOL (see above) */
  double asymmetry;           /* max |a_ij - a_ji| / max |a|; +INFINITY non-square (see above) */
  int diagonal_full;          /* square, every a_ii present and nonzero */
  int diagonal_positive;      /* square, every a_ii present and > 0 */
  gs_symmetry_t symmetry;     /* as stored */
} gs_features_t;

/** Computes the features of A (O(nnz) time, O(m+n) extra memory). */
gs_status_t gs_csr_features(const gs_csr_t *A, gs_features_t *f);

/** Lowercase name of a stored symmetry: "general", "symmetric", "skew-symmetric". */
const char *gs_symmetry_string(gs_symmetry_t s);

#if defined(__GNUC__) && !defined(GS_NO_VISIBILITY_PRAGMAS)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif
#endif
