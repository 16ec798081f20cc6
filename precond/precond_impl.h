/* precond/precond_impl.h: the preconditioner vtable, for backend authors (not installed).
 *
 * Adding a preconditioner: write precond/NAME.c (and NAME_kernels.cu if it has kernels) with
 * one `const gs_precond_ops_t gs_precond_NAME_ops`, and list it in precond/precond.c's table.
 * Only precond/precond.c calls through the table, after validating, so slots may assume:
 *   - setup: ctx and A non-NULL, A square (n >= 0). All device memory is allocated here, through
 *            gs_dmalloc. Faults of the matrix (zero diagonal, zero pivot) are GS_ERR_INVALID_ARG
 *            with the row, 1-based, in the message.
 *   - apply: d_r, d_z of length n > 0, possibly the same vector; asynchronous on ctx->stream,
 *            never allocates, never synchronizes.
 *   - destroy: accepts NULL.
 * Slots are only appended after version 1. Version 2 added `flags`. */
#ifndef GS_PRECOND_IMPL_H
#define GS_PRECOND_IMPL_H

#include "core/context_impl.h"
#include "gpusolve/precond.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GS_PRECOND_OPS_VERSION 2

/* gs_precond_ops_t.flags */
enum {
  GS_PRECOND_FLAG_SYMMETRIC = 1u << 0 /* M^T = M, so M^-T r = M^-1 r: the preconditioner serves
                                         methods that apply M^-T (BiCG) */
};

typedef struct gs_precond_ops {
  int version;
  const char *name;    /* registry and CLI key */
  const char *summary; /* one line for `gpusolve solve --help` */
  gs_status_t (*setup)(gs_context_t *ctx, gs_matrix_t *A, void **data);
  gs_status_t (*apply)(gs_context_t *ctx, void *data, const double *d_r, double *d_z);
  size_t (*device_bytes)(const void *data);
  void (*destroy)(void *data);
  /* ---- version 2 ---- */
  unsigned flags; /* GS_PRECOND_FLAG_* */
} gs_precond_ops_t;

extern const gs_precond_ops_t gs_precond_jacobi_ops;
extern const gs_precond_ops_t gs_precond_ilu0_ops;
extern const gs_precond_ops_t gs_precond_ic0_ops;

/** Jacobi's kernel (precond/jacobi_kernels.cu): z = dinv .* r, asynchronous on stream. */
gs_status_t gs_jacobi_apply_kernel(cudaStream_t stream, gs_idx_t n, const double *d_dinv,
                                   const double *d_r, double *d_z);

/** Jacobi's inverse diagonal on the device (n doubles, owned by M) when M is a Jacobi
 *  preconditioner, else NULL: the persistent solver kernels fold z = D^-1 r into their updates. */
const double *gs_precond_jacobi_dinv(const gs_precond_t *M);
/** The same from Jacobi's own data (precond/jacobi.c). */
const double *gs_jacobi_dinv(const void *data);

#ifdef __cplusplus
}
#endif
#endif
