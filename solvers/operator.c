/* solvers/operator.c: the operator seam (include/gpusolve/operator.h): prepared SpMV, transposed
 * view and matrix-free shell behind one apply, validated here once (PETSc's MatMult). */
#include <math.h>
#include <stdlib.h>

#include "core/context_impl.h"
#include "core/error.h"
#include "gpusolve/operator.h"
#include "spmv/common_kernels.h"
#include "spmv/spmv_impl.h"

typedef enum { OPER_SPMV, OPER_TRANSPOSE, OPER_SHELL } oper_kind_t;

struct gs_operator {
  oper_kind_t kind;
  gs_context_t *ctx;
  gs_idx_t rows, cols;
  unsigned caps;
  gs_spmv_t *S;            /* OPER_SPMV */
  gs_operator_t *inner;    /* OPER_TRANSPOSE */
  gs_operator_apply_fn fn; /* OPER_SHELL */
  void *user;
};

static gs_status_t oper_new(gs_operator_t **out, oper_kind_t kind, gs_context_t *ctx,
                            gs_idx_t rows, gs_idx_t cols, unsigned caps)
{
  gs_operator_t *A = calloc(1, sizeof *A);
  if (!A) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory creating an operator");
  A->kind = kind;
  A->ctx = ctx;
  A->rows = rows;
  A->cols = cols;
  A->caps = caps;
  *out = A;
  return GS_SUCCESS;
}

gs_status_t gs_operator_from_spmv(gs_operator_t **out, gs_spmv_t *S)
{
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_operator_from_spmv: out is NULL");
  *out = NULL;
  if (!S) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_operator_from_spmv: S is NULL");
  /* an operator (and every solver on one) applies double vectors */
  if (gs_spmv_precision(S) == GS_PRECISION_FLOAT)
    return GS_ERROR(GS_ERR_UNSUPPORTED, "gs_operator_from_spmv: %s was prepared in float "
                    "precision (float vectors, for the SpMV benchmark); operators and solvers "
                    "apply double vectors: prepare it in double or mixed precision",
                    gs_spmv_name(S));
  gs_idx_t m = 0, n = 0; /* the dimensions only: no host copy of a matrix made on the device */
  gs_matrix_dims(gs_spmv_matrix(S), &m, &n, NULL);
  GS_CHECK(oper_new(out, OPER_SPMV, gs_spmv_context(S), m, n, gs_spmv_caps(S)));
  (*out)->S = S;
  return GS_SUCCESS;
}

gs_status_t gs_operator_transpose(gs_operator_t **out, gs_operator_t *A)
{
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_operator_transpose: out is NULL");
  *out = NULL;
  if (!A) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_operator_transpose: A is NULL");
  if (!(A->caps & GS_SPMV_CAP_TRANSPOSE))
    return GS_ERROR(GS_ERR_UNSUPPORTED, "gs_operator_transpose: the operator has no transpose "
                    "product");
  /* op N of the view is op T of A: the determinism flags swap with it */
  unsigned c = A->caps & ~(unsigned)(GS_SPMV_CAP_DETERMINISTIC | GS_SPMV_CAP_DETERMINISTIC_T);
  if (A->caps & GS_SPMV_CAP_DETERMINISTIC) c |= GS_SPMV_CAP_DETERMINISTIC_T;
  if (A->caps & GS_SPMV_CAP_DETERMINISTIC_T) c |= GS_SPMV_CAP_DETERMINISTIC;
  GS_CHECK(oper_new(out, OPER_TRANSPOSE, A->ctx, A->cols, A->rows, c));
  (*out)->inner = A;
  return GS_SUCCESS;
}

gs_status_t gs_operator_create_shell(gs_operator_t **out, gs_context_t *ctx, gs_idx_t rows,
                                     gs_idx_t cols, unsigned caps, gs_operator_apply_fn apply,
                                     void *user)
{
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_operator_create_shell: out is NULL");
  *out = NULL;
  if (!ctx || !apply)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_operator_create_shell: NULL ctx or apply");
  if (rows < 0 || cols < 0)
    return GS_ERROR(GS_ERR_DIMENSION, "gs_operator_create_shell: negative size %d x %d",
                    (int)rows, (int)cols);
  GS_CHECK(oper_new(out, OPER_SHELL, ctx, rows, cols, caps));
  (*out)->fn = apply;
  (*out)->user = user;
  return GS_SUCCESS;
}

void gs_operator_destroy(gs_operator_t **A)
{
  if (!A || !*A) return;
  free(*A);
  *A = NULL;
}

/* Dispatch without validation: gs_operator_apply checked sizes, op and scalars, made the device
 * current and took alpha = 0, for every kind at once. */
static gs_status_t dispatch(gs_operator_t *A, gs_op_t op, double alpha, const double *d_x,
                            double beta, double *d_y)
{
  switch (A->kind) {
  case OPER_SPMV: return gs_spmv_dispatch(A->S, op, alpha, d_x, beta, d_y);
  case OPER_TRANSPOSE:
    return dispatch(A->inner, op == GS_OP_N ? GS_OP_T : GS_OP_N, alpha, d_x, beta, d_y);
  case OPER_SHELL: return A->fn(A->user, op, alpha, d_x, beta, d_y);
  }
  return GS_ERROR(GS_ERR_INTERNAL, "operator of unknown kind %d", (int)A->kind);
}

gs_status_t gs_operator_apply(gs_operator_t *A, gs_op_t op, double alpha, const double *d_x,
                              double beta, double *d_y)
{
  gs_idx_t out;
  if (!A) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_operator_apply: A is NULL");
  GS_CHECK(gs_apply_check("gs_operator_apply: the operator", A->rows, A->cols,
                          (A->caps & GS_SPMV_CAP_TRANSPOSE) != 0, op, alpha, d_x, beta, d_y,
                          &out));
  if (out == 0) return GS_SUCCESS;
  GS_CHECK(gs_context_activate(A->ctx));
  if (alpha == 0.0) /* the BLAS rule, for every kind: neither A nor x is read */
    return gs_launch_scale(A->ctx->stream, out, beta, d_y);
  return dispatch(A, op, alpha, d_x, beta, d_y);
}

gs_idx_t gs_operator_rows(const gs_operator_t *A) { return A ? A->rows : 0; }
gs_idx_t gs_operator_cols(const gs_operator_t *A) { return A ? A->cols : 0; }
unsigned gs_operator_caps(const gs_operator_t *A) { return A ? A->caps : 0u; }
gs_context_t *gs_operator_context(const gs_operator_t *A) { return A ? A->ctx : NULL; }
int gs_operator_is_transposed(const gs_operator_t *A) { return A && A->kind == OPER_TRANSPOSE; }

const char *gs_operator_name(const gs_operator_t *A)
{
  if (!A) return "";
  if (A->kind == OPER_SPMV) return gs_spmv_name(A->S);
  if (A->kind == OPER_TRANSPOSE) return gs_operator_name(A->inner);
  return "shell";
}

gs_spmv_t *gs_operator_spmv(const gs_operator_t *A)
{
  return A && A->kind == OPER_SPMV ? A->S : NULL;
}

void gs_operator_refresh_caps(gs_operator_t *A)
{
  if (A && A->kind == OPER_SPMV) A->caps = gs_spmv_caps(A->S);
}

gs_matrix_t *gs_operator_matrix(const gs_operator_t *A)
{
  if (!A) return NULL;
  if (A->kind == OPER_SPMV) return gs_spmv_matrix(A->S);
  if (A->kind == OPER_TRANSPOSE) return gs_operator_matrix(A->inner);
  return NULL;
}
