/* gpusolve/spmv.h: the matrix object (host CSR plus one shared device copy) and the sparse
 * matrix-vector product through pluggable backends ("csr-vector", "ell", "cusparse-csr", ...). */
#ifndef GPUSOLVE_SPMV_H
#define GPUSOLVE_SPMV_H

#include "gpusolve/context.h"
#include "gpusolve/matrix.h"

#ifdef __cplusplus
extern "C" {
#endif
/* The library is built with hidden visibility: what this header declares is its public API. */
#if defined(__GNUC__) && !defined(GS_NO_VISIBILITY_PRAGMAS)
#pragma GCC visibility push(default)
#endif

/** A matrix ready for the GPU: a private copy of the host CSR (rows sorted), its features, and
 *  one device copy of the CSR, uploaded at creation (else on first use) and shared by every
 *  backend. */
typedef struct gs_matrix gs_matrix_t;

/** Copies `csr` (the caller keeps ownership of it), validates it, uploads it to ctx's device
 *  (the device CSR every format and preconditioner of A reads) and computes A's features there
 *  (gs_matrix_features; one kernel pass instead of a pass on the host). Where the device cannot
 *  (its memory, a CUDA error) the features are computed on the host and the upload is left to
 *  the first format that needs it. Borrows ctx. */
gs_status_t gs_matrix_create(gs_matrix_t **A, gs_context_t *ctx, const gs_csr_t *csr);
/** gs_matrix_create that keeps *csr as A's host copy when its rows are sorted (no copy: *csr
 *  set to NULL, freed with A; read it through gs_matrix_host), else copies and sorts as
 *  gs_matrix_create does and leaves *csr to the caller. For a CSR made only to make the
 *  matrix: it saves a copy of the whole matrix in host memory and its time. */
gs_status_t gs_matrix_create_take(gs_matrix_t **A, gs_context_t *ctx, gs_csr_t **csr);

/** Flags of gs_matrix_create_device. */
enum {
  GS_MATRIX_DEVICE_BORROW = 1u << 0 /* read the caller's arrays in place instead of copying */
};

/**
 * A matrix from a CSR already in device memory of ctx's device (CuPy's or PyTorch's arrays, the
 * output of the caller's kernels): m x n with nnz entries, 0-based; d_row_ptr holds m + 1
 * offsets of row_ptr_bits bits (32: int32_t, 64: int64_t), d_col nnz columns, d_val nnz values
 * (d_col and d_val may be NULL when nnz = 0). Rows must be sorted without duplicates (the
 * canonical CSR of cuSPARSE, CuPy and SciPy's sum_duplicates): the host entry above sorts, this
 * one refuses.
 *
 * Checked on the host before any device call: ctx and out present, sizes not negative,
 * row_ptr_bits 32 or 64 (32 only up to 2^31-1 entries), nnz <= m n, pointers not NULL, flags
 * known. Then the pointers: memory of ctx's device (device or managed, not host), each array
 * inside one allocation where the driver can tell. Then the contents, on the device (one pass,
 * its verdict read back before anything is copied): row pointers from 0 to nnz without a
 * decrease, columns in 0..n-1 and strictly increasing along each row, values finite. Any fault
 * is GS_ERR_INVALID_ARG naming the first bad row and entry ("gs_matrix_create_device: row 7:
 * column 12 outside 0..9 (entry 31)").
 *
 * flags = 0 copies the arrays device to device into A's own shared device CSR: the caller may
 * free or change them once the call returns. GS_MATRIX_DEVICE_BORROW makes A read them in place
 * (no copy, no device memory of A's own, except row pointers of another width than A keeps: 32
 * bits up to 2^31-1 entries, 64 beyond); they must then stay allocated and unchanged until A and
 * every product, preconditioner and solver made from it are destroyed. A never writes them.
 *
 * The work runs on ctx's stream, after what the caller queued there (a context on the caller's
 * own stream, gs_context_create_on_stream, orders it with no further synchronization), and the
 * call returns once the checks are read back and the copies complete. A's host copy
 * (gs_matrix_host) and features (gs_matrix_features) are downloaded from the device on their
 * first use, once; a product whose backend reads neither never downloads them. Borrows ctx.
 */
gs_status_t gs_matrix_create_device(gs_matrix_t **A, gs_context_t *ctx, gs_idx_t m, gs_idx_t n,
                                    gs_off_t nnz, const void *d_row_ptr, int row_ptr_bits,
                                    const gs_idx_t *d_col, const gs_val_t *d_val,
                                    unsigned flags);
void gs_matrix_destroy(gs_matrix_t **A);
/** The matrix's host CSR (owned by A; for a matrix made from device arrays, downloaded on the
 *  first call: NULL when that fails). */
const gs_csr_t *gs_matrix_host(const gs_matrix_t *A);
/** The matrix's features (computed once: at creation, or on the first call for a matrix made
 *  from device arrays). */
const gs_features_t *gs_matrix_features(const gs_matrix_t *A);
/** The context A was created on (borrowed). */
gs_context_t *gs_matrix_context(const gs_matrix_t *A);
/** Wall seconds the upload of A's device CSR took (at gs_matrix_create, or on first use); 0
 *  while it is not uploaded and for a matrix made from device arrays. */
double gs_matrix_upload_seconds(const gs_matrix_t *A);

/* ---- backend options --------------------------------------------------------------------
 * Options are owned by the backends and given as a string of comma-separated key=value pairs:
 *   "max_fill=4"              every backend that declares max_fill (ell, dia, cusparse-sell)
 *   "csr-vector.width=8"      one backend's key
 *   "hyb.k=27,max_fill=5"     several; a later pair overrides an earlier one
 * NULL or "" means every default. An unknown backend, a key no backend declares, a value that is
 * not a number or is out of the key's range is GS_ERR_INVALID_ARG naming the pair. The keys,
 * defaults and ranges are listed by gs_spmv_backend_option (`gpusolve spmv --list --verbose`). */

/** Checks an option string against every registered backend (the same rules gs_spmv_create
 *  applies), so that a caller can reject a typo before preparing anything. */
gs_status_t gs_spmv_options_check(const char *options);

/** Bytes a backend holds on the device and moves per product (the byte model of CUSP's
 *  bytes_per_spmv: matrix data read once, x gathered once per stored entry is NOT assumed;
 *  each backend documents its own model). */
typedef struct gs_spmv_mem {
  size_t device_bytes;       /* bytes held on the device by this backend (shared CSR excluded
                                unless the backend uses it, then counted here) */
  size_t bytes_per_apply;    /* minimum bytes one y = A x moves (beta = 0) */
  size_t bytes_per_apply_t;  /* same for y = A^T x; 0 when unsupported */
} gs_spmv_mem_t;

/** A prepared product: one backend's device layout of one matrix. */
typedef struct gs_spmv gs_spmv_t;

/**
 * Prepares backend `name` for A (builds and uploads its layout, allocates any workspace).
 * Borrows ctx and A: both must outlive the result, and A must have been created on ctx.
 * `options`: NULL, "" or key=value pairs (see above). Returns GS_ERR_INVALID_ARG for an unknown
 * name, a bad option or a context other than A's, GS_ERR_FORMAT_FILL when a padded format
 * refuses the matrix.
 */
gs_status_t gs_spmv_create(gs_spmv_t **S, gs_context_t *ctx, gs_matrix_t *A, const char *name,
                           const char *options);
void gs_spmv_destroy(gs_spmv_t **S);

/**
 * d_y = alpha * op(A) * d_x + beta * d_y, asynchronous on the context's stream; never allocates.
 * d_x and d_y are device pointers of lengths cols and rows (swapped for GS_OP_T) and must not
 * be the same. With beta == 0, d_y is write-only: NaN in it never leaks into the result.
 * GS_ERR_UNSUPPORTED when the backend has no transpose kernel. GS_ERR_INVALID_ARG for a
 * product prepared in float precision (its vectors are float: gs_spmv_apply_float).
 */
gs_status_t gs_spmv_apply(gs_spmv_t *S, gs_op_t op, gs_val_t alpha, const gs_val_t *d_x,
                          gs_val_t beta, gs_val_t *d_y);
/**
 * gs_spmv_apply for a product prepared with precision=float: d_x and d_y are float device
 * vectors and the products, sums and scalings are float (see gs_precision_t). The same checks
 * and rules as gs_spmv_apply (sizes, op supported, x and y present and distinct, alpha and beta
 * finite, alpha == 0: y = beta*y without reading A or x, beta == 0: y write-only).
 * GS_ERR_INVALID_ARG when S was prepared in another precision (its vectors are double).
 */
gs_status_t gs_spmv_apply_float(gs_spmv_t *S, gs_op_t op, float alpha, const float *d_x,
                                float beta, float *d_y);
gs_status_t gs_spmv_memory(const gs_spmv_t *S, gs_spmv_mem_t *mem);
const char *gs_spmv_name(const gs_spmv_t *S);
/** Type of the vectors S's apply takes and of its arithmetic: GS_VALUE_FLOAT for a product
 *  prepared in float precision (gs_spmv_apply_float), GS_VALUE_DOUBLE otherwise (the vectors
 *  are gs_val_t in double and in mixed precision; GS_VALUE_DOUBLE for NULL). */
gs_value_type_t gs_spmv_value_type(const gs_spmv_t *S);

/* ---- precision: the value type chosen at prepare ----------------------------------------
 * Chosen by the generic option `precision` of the option string (not a backend's own key, and
 * no backend may declare one of that name):
 *   "precision=double"  (default) values stored in double
 *   "precision=mixed"   values rounded once to float at prepare and stored in float (half the
 *                       value bytes); x, y, alpha, beta and the accumulation stay double, so
 *                       the product is that of the matrix fl32(A): each value off by at most
 *                       u_f |a|, u_f = 2^-24 (GS_PRECISION_MIXED_U), besides the double
 *                       product's own rounding
 *   "precision=float"   float end to end: the values rounded once to float as in mixed, and
 *                       x, y, alpha, beta, the products, the sums and the atomics in float
 *                       (half the value and vector bytes of double). Applied with
 *                       gs_spmv_apply_float only (gs_spmv_apply refuses it), so solvers,
 *                       operators and auto, which apply double vectors, refuse such a product
 *                       with GS_ERR_UNSUPPORTED; it serves the SpMV benchmark and check. Each
 *                       y_i is within gamma_{k+2}(u_f) (|alpha| (|A_f| |x|)_i + |beta y_i|) of
 *                       the exact product of the rounded values A_f, k the entries of row i
 * "ell.precision=mixed" names one backend, as for its own keys. Only backends flagged
 * GS_SPMV_FLAG_MIXED take mixed and only those flagged GS_SPMV_FLAG_FLOAT take float; for any
 * other gs_spmv_create and gs_spmv_host_apply return GS_ERR_UNSUPPORTED naming the backend:
 * they never run double in its place. A finite value beyond the float range is refused in both
 * (GS_ERR_UNSUPPORTED naming the entry: it would become an infinity). */
typedef enum gs_precision {
  GS_PRECISION_DOUBLE = 0, /* double values (the default) */
  GS_PRECISION_MIXED = 1,  /* float values, double vectors and accumulation */
  GS_PRECISION_FLOAT = 2   /* float values, float vectors and accumulation */
} gs_precision_t;
/** Unit roundoff of the values of a mixed product (float: 2^-24). */
#define GS_PRECISION_MIXED_U 0x1p-24
/** Unit roundoff of the arithmetic of a float product (2^-24), and of its values. */
#define GS_PRECISION_FLOAT_U 0x1p-24
/** "double", "mixed", "float"; "unknown" for other values. */
const char *gs_precision_string(gs_precision_t p);
/** The precision called `name` ("double", "mixed", "float"), or -1. */
int gs_precision_find(const char *name);
/** The precision S was prepared in (GS_PRECISION_DOUBLE for NULL). */
gs_precision_t gs_spmv_precision(const gs_spmv_t *S);
/** The matrix S was prepared for (borrowed by S). */
gs_matrix_t *gs_spmv_matrix(const gs_spmv_t *S);
/** One line about the prepared layout ("K = 27, ELL 99.1% / COO 0.9% of entries"), or "". */
const char *gs_spmv_describe(const gs_spmv_t *S);
/** The context S was prepared on (borrowed). */
gs_context_t *gs_spmv_context(const gs_spmv_t *S);

/** Capabilities of one prepared product, set by its prepare (the same backend may answer
 *  differently for different matrices or library versions). */
enum {
  GS_SPMV_CAP_TRANSPOSE = 1u << 0,       /* op = GS_OP_T is available */
  GS_SPMV_CAP_DETERMINISTIC = 1u << 1,   /* op N gives bit-identical y on every run (no atomics) */
  GS_SPMV_CAP_DETERMINISTIC_T = 1u << 2, /* likewise for op T */
  GS_SPMV_CAP_CAPTURABLE = 1u << 3       /* apply may be captured into a CUDA Graph: it never
                                            allocates, synchronizes or reads back */
};
unsigned gs_spmv_caps(const gs_spmv_t *S);
/** Whether op is supported by the prepared product (GS_SPMV_CAP_TRANSPOSE for GS_OP_T). */
int gs_spmv_supports(const gs_spmv_t *S, gs_op_t op);

/* ---- registry ------------------------------------------------------------------------- */

/** Backend capability flags. */
enum {
  GS_SPMV_FLAG_TRANSPOSE = 1u << 0, /* has an op = T kernel */
  GS_SPMV_FLAG_VENDOR = 1u << 1,    /* vendor library (cuSPARSE) baseline */
  GS_SPMV_FLAG_HOST_LAYOUT = 1u << 2, /* has its own host layout builder + host apply */
  GS_SPMV_FLAG_WIDE = 1u << 3, /* takes matrices of more than 2^31-1 entries (64-bit offsets on
                                  the device); gs_spmv_create refuses such a matrix for any other
                                  backend with GS_ERR_UNSUPPORTED */
  GS_SPMV_FLAG_SHARED_CSR = 1u << 4, /* reads the matrix's shared device CSR, uploaded once per
                                       matrix by the first such prepare and kept with it */
  GS_SPMV_FLAG_LIGHT = 1u << 5, /* prepare builds no layout of its own: on the shared device CSR,
                                  at most O(rows) work on the GPU (the staged "auto" selection
                                  starts a solve with one of these) */
  GS_SPMV_FLAG_MIXED = 1u << 6, /* takes precision=mixed: kernels on float values with double
                                  vectors and accumulation (see gs_precision_t); its host
                                  layout, if any, rounds the same values */
  GS_SPMV_FLAG_FLOAT = 1u << 7, /* takes precision=float: kernels on float values, float
                                  vectors and float accumulation (gs_spmv_apply_float); its host
                                  layout, if any, is the float-valued one of mixed */
  GS_SPMV_FLAG_DEVICE_BUILD = 1u << 8, /* builds its layout on the GPU from the shared device
                                  CSR (the default, option build=device); build=host runs the
                                  host builder instead, the reference for the same layout */
  GS_SPMV_FLAG_HOST_STAGE = 1u << 9, /* its build keeps an O(nnz) stage on the host (pkt's
                                  ordering): the selection predicts its prepare accordingly */
  GS_SPMV_FLAG_NO_HOST = 1u << 10 /* prepare (in double precision, build=device) reads nothing
                                  of the host CSR: a matrix formed on the GPU (AMG's coarse
                                  levels) is never copied to the host for it */
};

/** Number of registered backends; they are indexed 0..count-1 in a fixed order. */
int gs_spmv_backend_count(void);
const char *gs_spmv_backend_name(int i);
const char *gs_spmv_backend_summary(int i);
unsigned gs_spmv_backend_flags(int i);
/** Index of the backend called `name`, or -1. */
int gs_spmv_backend_find(const char *name);

/** One option a backend declares (k = 0, 1, ... until it returns 0). */
typedef struct gs_spmv_option_info {
  const char *key;  /* "max_fill" */
  const char *help; /* one line */
  double def, min, max;
  int integer;      /* 1: integer values only */
} gs_spmv_option_info_t;
int gs_spmv_backend_option(int i, int k, gs_spmv_option_info_t *out);

/**
 * Host check of a backend's own layout: builds it from A on the host and applies it on the host
 * (no GPU needed): y = alpha*op(A)*x + beta*y. Backends without a host layout use plain CSR
 * (with precision=mixed or float, plain CSR on the values rounded to float). With
 * precision=float the layout is the float-valued one the device reads, applied with the double
 * vectors and sums of this call: it checks the layout, not float arithmetic.
 * GS_ERR_FORMAT_FILL / GS_ERR_UNSUPPORTED as the device backend would answer.
 */
gs_status_t gs_spmv_host_apply(const char *name, const gs_csr_t *A, const char *options,
                               gs_op_t op, gs_val_t alpha, const gs_val_t *x, gs_val_t beta,
                               gs_val_t *y);

#if defined(__GNUC__) && !defined(GS_NO_VISIBILITY_PRAGMAS)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif
#endif
