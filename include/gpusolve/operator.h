/* gpusolve/operator.h: the linear operator the solvers are written against (hypre's Krylov
 * Matvec, PETSc's Mat, Ginkgo's LinOp): y = alpha op(A) x + beta y, its sizes and capabilities.
 * A prepared SpMV is one, so is its transposed view, so is a user's matrix-free shell; a
 * distributed matrix will be one too. Solvers never touch a CSR or a backend directly. */
#ifndef GPUSOLVE_OPERATOR_H
#define GPUSOLVE_OPERATOR_H

#include "gpusolve/context.h"
#include "gpusolve/spmv.h"

#ifdef __cplusplus
extern "C" {
#endif
/* The library is built with hidden visibility: what this header declares is its public API. */
#if defined(__GNUC__) && !defined(GS_NO_VISIBILITY_PRAGMAS)
#pragma GCC visibility push(default)
#endif

typedef struct gs_operator gs_operator_t;

/** A shell's product: d_y = alpha op(A) d_x + beta d_y on the context's stream, asynchronous,
 *  without allocating (the rules of gs_spmv_apply: d_y write-only when beta == 0; alpha == 0
 *  is handled before the shell is called, so a shell may assume alpha != 0). The arguments are
 *  checked once, by gs_operator_apply, before the shell is called. */
typedef gs_status_t (*gs_operator_apply_fn)(void *user, gs_op_t op, gs_val_t alpha,
                                            const gs_val_t *d_x, gs_val_t beta, gs_val_t *d_y);

/** The operator of a prepared product (borrows S, which must outlive it). Capabilities are S's
 *  (gs_spmv_caps). */
gs_status_t gs_operator_from_spmv(gs_operator_t **A, gs_spmv_t *S);
/** A^T as an operator, without forming it: its op N is A's op T and the other way round.
 *  Borrows A. GS_ERR_UNSUPPORTED when A has no transpose (GS_SPMV_CAP_TRANSPOSE). */
gs_status_t gs_operator_transpose(gs_operator_t **AT, gs_operator_t *A);
/** A matrix-free operator of rows x cols on ctx: `apply` is called with `user`. `caps` are
 *  GS_SPMV_CAP_* (GS_SPMV_CAP_TRANSPOSE when apply takes GS_OP_T). */
gs_status_t gs_operator_create_shell(gs_operator_t **A, gs_context_t *ctx, gs_idx_t rows,
                                     gs_idx_t cols, unsigned caps, gs_operator_apply_fn apply,
                                     void *user);
/** NULL-safe; sets *A = NULL. Never destroys what the operator borrows. */
void gs_operator_destroy(gs_operator_t **A);

/** d_y = alpha op(A) d_x + beta d_y. Validates like gs_spmv_apply (sizes, x != y, finite
 *  scalars, op supported), then dispatches; alpha == 0 gives d_y = beta d_y without reading A
 *  or d_x (BLAS). Asynchronous on the operator's context stream. */
gs_status_t gs_operator_apply(gs_operator_t *A, gs_op_t op, gs_val_t alpha, const gs_val_t *d_x,
                              gs_val_t beta, gs_val_t *d_y);

gs_idx_t gs_operator_rows(const gs_operator_t *A);
gs_idx_t gs_operator_cols(const gs_operator_t *A);
unsigned gs_operator_caps(const gs_operator_t *A);
gs_context_t *gs_operator_context(const gs_operator_t *A);
/** The assembled matrix behind the operator (its features choose GS_SOLVER_AUTO's method and
 *  the preconditioners are built from it), or NULL for a shell. For a transposed view, the
 *  matrix A of A^T. */
gs_matrix_t *gs_operator_matrix(const gs_operator_t *A);
/** 1 for a transposed view. */
int gs_operator_is_transposed(const gs_operator_t *A);
/** What serves the products, for messages: the backend's name of a prepared product ("dia"),
 *  the same for a transposed view of one, "shell" for a matrix-free operator; "" for NULL. */
const char *gs_operator_name(const gs_operator_t *A);

#if defined(__GNUC__) && !defined(GS_NO_VISIBILITY_PRAGMAS)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif
#endif
