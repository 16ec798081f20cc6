/* spmv/spmv_impl.h: the SpMV backend vtable, for backend authors (not installed).
 *
 * Adding a backend: write spmv/NAME_build.c (host layout builder + host apply, pure C, no CUDA)
 * and spmv/NAME_kernels.cu (kernels, launchers, its option table, and one
 * `const gs_spmv_ops_t gs_spmv_NAME_ops` with extern "C" linkage), then add one
 * GS_BACKEND(NAME) line to spmv/backends.def (CMake defines GS_HAVE_<stem> for every
 * spmv/<stem>_kernels.cu present, and spmv/registry.c expands the list). Only spmv/spmv.c calls
 * through the table, after validating arguments, so slots may assume:
 *   - prepare: ctx, A, cfg, data, caps non-NULL; cfg holds validated values of the backend's own
 *     options; the context's device is current.
 *   - apply: sizes match op, d_x != d_y, op is N, or T only when FLAG_TRANSPOSE is set;
 *            must be asynchronous on ctx->stream, never allocate, and never read y when
 *            beta == 0. Zero-sized outputs are handled by spmv.c (apply is not called).
 *   - destroy: accepts NULL.
 * Offsets: a matrix of more than 2^31-1 entries (gs_matrix_wide) reaches prepare only for a
 * backend flagged GS_SPMV_FLAG_WIDE, whose kernels read gs_dcsr_t.d_row_ptr64; every other
 * backend may keep 32-bit entry positions in its layout (spmv.c refuses wide matrices for it).
 * Slots are only appended after version 1 (SQLite's iVersion rule). */
#ifndef GS_SPMV_IMPL_H
#define GS_SPMV_IMPL_H

#include "core/context_impl.h"
#include "gpusolve/spmv.h"
#include "spmv/options.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 3: apply_f32 (precision=float) appended. */
#define GS_SPMV_OPS_VERSION 3

/* ---- per-instance capabilities (gs_spmv_caps) -----------------------------------------------
 * Set by prepare in *caps (spmv.c first fills the backend's static default: FLAG_TRANSPOSE gives
 * CAP_TRANSPOSE; every backend is capturable unless it says otherwise), since some are known only
 * then: cuSPARSE may refuse op T at prepare, csr-vector is deterministic unless it cut long rows
 * into chunks summed with atomics. */

typedef struct gs_spmv_ops {
  int version;
  const char *name;    /* registry and CLI key */
  const char *summary; /* one line for `gpusolve spmv --list` */
  unsigned flags;      /* GS_SPMV_FLAG_* */
  const gs_spmv_option_t *options; /* NULL or a table ended by a NULL key */
  /* Builds the device layout; may lower or raise the capabilities in *caps (GS_SPMV_CAP_*). */
  gs_status_t (*prepare)(gs_context_t *ctx, gs_matrix_t *A, const gs_spmv_cfg_t *cfg,
                         void **data, unsigned *caps);
  gs_status_t (*apply)(gs_context_t *ctx, void *data, gs_op_t op, double alpha, const double *d_x,
                       double beta, double *d_y);
  gs_status_t (*memory)(const void *data, gs_spmv_mem_t *mem);
  /* Accepts NULL. Frees through the context the data was prepared on (keep it in data). */
  void (*destroy)(void *data);
  /* Optional (NULL: plain CSR stands in): build the host layout, apply it on the host. */
  gs_status_t (*host_apply)(const gs_csr_t *A, const gs_spmv_cfg_t *cfg, gs_op_t op,
                            double alpha, const double *x, double beta, double *y);
  /* Optional: one line describing the prepared layout into buf. */
  void (*describe)(const void *data, char *buf, size_t len);
  /* ---- version 3 ---- */
  /* precision=float: apply's contract with float vectors and scalars, float arithmetic. Required
   * with GS_SPMV_FLAG_FLOAT (gs_spmv_create refuses a FLOAT backend without it), NULL otherwise.
   * Every table is a positional initializer in a .cu file (C++): the default member initializer
   * keeps the tables written before this slot NULL there, as C does for omitted trailing
   * members, without -Wmissing-field-initializers warning about them. */
  gs_status_t (*apply_f32)(gs_context_t *ctx, void *data, gs_op_t op, float alpha,
                           const float *d_x, float beta, float *d_y)
#ifdef __cplusplus
      = nullptr
#endif
      ;
} gs_spmv_ops_t;

/** The device CSR shared by all backends of a matrix: uploaded on first call, owned by A.
 *  Row pointers are 32-bit on the device whenever they fit (nnz <= INT32_MAX: half the bytes
 *  of the host's gs_off_t, and cuSPARSE's 32-bit path), 64-bit otherwise (`wide`, see
 *  gs_matrix_wide): exactly one of d_row_ptr32 / d_row_ptr64 is set. */
typedef struct gs_dcsr {
  gs_idx_t m, n;
  gs_off_t nnz;
  int wide;
  const int32_t *d_row_ptr32;
  const int64_t *d_row_ptr64;
  const gs_idx_t *d_col;
  const gs_val_t *d_val;
} gs_dcsr_t;
gs_status_t gs_matrix_device_csr(gs_matrix_t *A, gs_dcsr_t *out);

/** A matrix over a CSR already on the device (32-bit row pointers, sorted rows): takes the
 *  three arrays (set to NULL; freed on failure too) and marks the shared device CSR uploaded.
 *  For AMG's coarse levels, which are formed on the device: its host copy is downloaded only
 *  when something asks for it (gs_matrix_host_ready, gs_matrix_host, the features), so a level
 *  multiplied by a backend flagged GS_SPMV_FLAG_NO_HOST never leaves the GPU. */
gs_status_t gs_matrix_adopt_device(gs_matrix_t **out, gs_context_t *ctx, gs_idx_t m, gs_idx_t n,
                                   gs_off_t nnz, int32_t **d_rp, gs_idx_t **d_col,
                                   gs_val_t **d_val);
/** Makes the host copy of an adopted matrix (a no-op for any other). */
gs_status_t gs_matrix_host_ready(gs_matrix_t *A);
/** Rows, columns and entries of A without touching its host copy. */
void gs_matrix_dims(const gs_matrix_t *A, gs_idx_t *m, gs_idx_t *n, gs_off_t *nnz);

/** *first = the first stored entry of A (CSR order) whose value is finite and beyond FLT_MAX,
 *  or -1 when none: mixed and float precision refuse such a matrix (the value would become an
 *  infinity). One pass over the shared device CSR's values on the GPU when it is uploaded (8
 *  bytes back; the host pass cost 1 ns an entry, 20-25 ms on the 27-point Laplacian of 26.5M
 *  entries, in every mixed prepare), else over the host copy. Synchronizes ctx's stream. */
gs_status_t gs_matrix_float_range_first(gs_matrix_t *A, int64_t *first);
/** The same on a host CSR (NULL: none), in CSR order: the entry, or -1. */
int64_t gs_csr_float_range_first(const gs_csr_t *H);

/** precision=mixed on the shared device CSR (csr-scalar, csr-vector, hola): *d_valf gets a fresh
 *  counted device array of A's nnz values rounded once to float on the device
 *  (gs_launch_round_to_float, asynchronous on ctx's stream), the backend's own copy, read in
 *  place of A->d_val; the shared CSR stays double for the other backends. NULL when nnz = 0.
 *  The caller frees it with gs_dfree. */
gs_status_t gs_dcsr_round_values(gs_context_t *ctx, const gs_dcsr_t *A, float **d_valf);

/** Whether A's device offsets are 64-bit: nnz > INT32_MAX (or the test hook
 *  gs_test_wide_offsets was on for A's context when A was created). gs_spmv_create refuses such
 *  a matrix for a backend without GS_SPMV_FLAG_WIDE, before its prepare is called, so that only
 *  backends flagged WIDE ever see a wide matrix. */
int gs_matrix_wide(const gs_matrix_t *A);

/** The stored symmetry of A (Matrix Market's header) without downloading a device-made
 *  matrix's host copy: GS_SYM_GENERAL for such a matrix. */
gs_symmetry_t gs_matrix_stored_symmetry(const gs_matrix_t *A);

/** Uploads count row pointers (or other entry offsets) into a fresh counted device buffer of
 *  int32_t: the 32-bit copy cuSPARSE's legacy routines and the narrow kernels read. An offset
 *  over INT32_MAX is GS_ERR_UNSUPPORTED naming `what` (a caller refuses wide matrices before). */
gs_status_t gs_upload_offsets32(gs_context_t *ctx, int32_t **d_dst, const gs_off_t *h_src,
                                size_t count, const char *what);

/** The checks of an apply y = alpha op(A) x + beta y of a rows x cols operator, shared by
 *  gs_spmv_apply, gs_spmv_apply_float and gs_operator_apply (`who` names the caller in the
 *  message): op is N or T and supported (`has_t`), x and y present for non-empty sides and
 *  distinct, alpha and beta finite. The vectors are double or float (only compared with NULL
 *  and with each other). *out_len is the length of y. */
gs_status_t gs_apply_check(const char *who, gs_idx_t rows, gs_idx_t cols, int has_t, gs_op_t op,
                           double alpha, const void *d_x, double beta, const void *d_y,
                           gs_idx_t *out_len);

/** The product after gs_apply_check has passed, the context's device is current and alpha != 0:
 *  straight to the backend. gs_spmv_apply ends in it; gs_operator_apply, which has done the
 *  same checks for the operator, calls it so that a solver's product is validated once. A
 *  product prepared in float precision is GS_ERR_INVALID_ARG here too (its vectors are float;
 *  gs_operator_from_spmv refuses it before). */
gs_status_t gs_spmv_dispatch(gs_spmv_t *S, gs_op_t op, double alpha, const double *d_x,
                             double beta, double *d_y);

/** The value option `key` of backend number b takes under the option string `options` (its
 *  default when the string does not set it): *has = 0 when the backend declares no such key.
 *  GS_ERR_INVALID_ARG for a bad string or index. */
gs_status_t gs_spmv_option_resolve(int b, const char *options, const char *key, double *value,
                                   int *has);

/** Hands a selection record (malloc'd) to S, which frees it (select/auto.c). */
struct gs_selection;
void gs_spmv_attach_selection(gs_spmv_t *S, struct gs_selection *sel);
struct gs_selection *gs_spmv_selection_mut(gs_spmv_t *S);

/** Moves the prepared backend of *from (a product of the same matrix and context, capturable
 *  and with A^T x where S is and has) into S, destroying S's own; *from is freed and set to NULL. S keeps its
 *  selection record; its generation changes, which tells a solver that captured S's kernels
 *  into a CUDA Graph to capture again. The stream must be idle (no product of S in flight). */
gs_status_t gs_spmv_take_backend(gs_spmv_t *S, gs_spmv_t **from);
/** Changes each time S takes another backend (0 for a product that never did). */
unsigned gs_spmv_generation(const gs_spmv_t *S);

/** GS_ERR_UNSUPPORTED, naming `who`, when the option string asks some backend for
 *  precision=float: for the callers that apply double vectors through whatever backend the
 *  options reach (auto's timings). GS_ERR_INVALID_ARG for a bad string. */
gs_status_t gs_spmv_options_refuse_float(const char *who, const char *options);

/** Registry (spmv/registry.c). */
extern const gs_spmv_ops_t *const gs_spmv_registry[];
extern const int gs_spmv_registry_count;

/** The most pinned staging bytes an upload asks its context for (gs_context_staging_reserve). */
size_t gs_upload_staging_max(void);

/** Helpers for backends: upload a host array into a fresh counted device buffer (free it with
 *  gs_dfree(ctx, ...)). */
gs_status_t gs_upload(gs_context_t *ctx, void **d_dst, const void *h_src, size_t bytes,
                      const char *what);

#ifdef __cplusplus
}
#endif
#endif
