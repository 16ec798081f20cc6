/* precond/precond.c: the preconditioner registry and dispatcher: the one place that calls
 * through a preconditioner's table, after validating its arguments. "none" lives here: it has
 * no data and copies r to z (the solvers skip it altogether, see gs_precond_is_identity). */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "gpusolve/timer.h"
#include "precond/precond_impl.h"

struct gs_precond {
  const gs_precond_ops_t *ops;
  void *data;
  gs_context_t *ctx;
  gs_idx_t n;
  double setup_seconds;
};

static gs_status_t none_setup(gs_context_t *ctx, gs_matrix_t *A, void **data)
{
  (void)ctx;
  (void)A;
  *data = NULL;
  return GS_SUCCESS;
}

static gs_status_t none_apply(gs_context_t *ctx, void *data, const double *d_r, double *d_z)
{
  (void)data;
  (void)ctx;
  (void)d_r;
  (void)d_z;
  return GS_SUCCESS; /* the copy is done by gs_precond_apply, which knows n */
}

static size_t none_bytes(const void *data)
{
  (void)data;
  return 0;
}

static void none_destroy(void *data) { (void)data; }

static const gs_precond_ops_t none_ops = {
  GS_PRECOND_OPS_VERSION, "none", "no preconditioner (z = r)",
  none_setup, none_apply, none_bytes, none_destroy, GS_PRECOND_FLAG_SYMMETRIC};

static const gs_precond_ops_t *const registry[] = {
  &none_ops, &gs_precond_jacobi_ops, &gs_precond_ilu0_ops, &gs_precond_ic0_ops};
#define NREG (int)(sizeof registry / sizeof registry[0])

int gs_precond_count(void) { return NREG; }
const char *gs_precond_name_at(int i) { return i >= 0 && i < NREG ? registry[i]->name : NULL; }
const char *gs_precond_summary_at(int i)
{
  return i >= 0 && i < NREG ? registry[i]->summary : NULL;
}

/* Flags of a table; tables older than version 2 have none. */
static unsigned ops_flags(const gs_precond_ops_t *ops)
{
  return ops->version >= 2 ? ops->flags : 0u;
}

int gs_precond_symmetric_at(int i)
{
  return i >= 0 && i < NREG && (ops_flags(registry[i]) & GS_PRECOND_FLAG_SYMMETRIC) != 0;
}

int gs_precond_find(const char *name)
{
  if (!name) return -1;
  for (int i = 0; i < NREG; ++i)
    if (strcmp(registry[i]->name, name) == 0) return i;
  return -1;
}

gs_status_t gs_precond_create(gs_precond_t **out, gs_context_t *ctx, gs_matrix_t *A,
                              const char *name)
{
  gs_status_t st = GS_SUCCESS;
  gs_precond_t *M = NULL;
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_precond_create: out is NULL");
  *out = NULL;
  if (!ctx || !A) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_precond_create: NULL argument");
  int i = gs_precond_find(name);
  if (i < 0)
    return GS_ERROR(GS_ERR_INVALID_ARG,
                    "unknown preconditioner '%s' (none, jacobi, ilu0 or ic0)",
                    name ? name : "(null)");
  if (gs_matrix_context(A) != ctx)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_precond_create: the matrix was created on another "
                    "context");
  GS_CHECK(gs_context_activate(ctx));
  const gs_csr_t *h = gs_matrix_host(A);
  if (h->m != h->n)
    return GS_ERROR(GS_ERR_DIMENSION, "preconditioner %s needs a square matrix, not %d x %d",
                    registry[i]->name, (int)h->m, (int)h->n);
  double t0 = gs_wall_seconds();
  M = calloc(1, sizeof *M);
  if (!M) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory creating a preconditioner");
  M->ops = registry[i];
  M->ctx = ctx;
  M->n = h->m;
  GS_TRY(M->ops->setup(ctx, A, &M->data));
  GS_TRY(GS_CUDA(cudaStreamSynchronize(ctx->stream)));
  M->setup_seconds = gs_wall_seconds() - t0;
  *out = M;
  M = NULL;
cleanup:
  gs_precond_destroy(&M);
  return st;
}

void gs_precond_destroy(gs_precond_t **M)
{
  if (!M || !*M) return;
  if ((*M)->ops) {
    if ((*M)->ctx) gs_context_activate((*M)->ctx);
    (*M)->ops->destroy((*M)->data);
  }
  free(*M);
  *M = NULL;
}

gs_status_t gs_precond_apply(gs_precond_t *M, const double *d_r, double *d_z)
{
  if (!M) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_precond_apply: M is NULL");
  if (M->n == 0) return GS_SUCCESS;
  if (!d_r || !d_z) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_precond_apply: r or z is NULL");
  GS_CHECK(gs_context_activate(M->ctx));
  if (M->ops == &none_ops) {
    if (d_r == d_z) return GS_SUCCESS;
    return GS_CUDA(cudaMemcpyAsync(d_z, d_r, (size_t)M->n * sizeof(double),
                                   cudaMemcpyDeviceToDevice, M->ctx->stream));
  }
  return M->ops->apply(M->ctx, M->data, d_r, d_z);
}

const char *gs_precond_name(const gs_precond_t *M) { return M ? M->ops->name : ""; }
gs_idx_t gs_precond_size(const gs_precond_t *M) { return M ? M->n : 0; }
gs_context_t *gs_precond_context(const gs_precond_t *M) { return M ? M->ctx : NULL; }
int gs_precond_is_identity(const gs_precond_t *M) { return !M || M->ops == &none_ops; }
int gs_precond_is_symmetric(const gs_precond_t *M)
{
  return !M || (ops_flags(M->ops) & GS_PRECOND_FLAG_SYMMETRIC) != 0;
}
double gs_precond_setup_seconds(const gs_precond_t *M) { return M ? M->setup_seconds : 0.0; }
const double *gs_precond_jacobi_dinv(const gs_precond_t *M)
{
  return M && M->ops == &gs_precond_jacobi_ops ? gs_jacobi_dinv(M->data) : NULL;
}
size_t gs_precond_device_bytes(const gs_precond_t *M)
{
  return M ? M->ops->device_bytes(M->data) : 0;
}
