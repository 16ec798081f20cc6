/* solvers/vecops.c: the single-GPU vector-ops table (solvers/solver_impl.h, gs_vecops_t):
 * cuBLAS on the context's handle, in device pointer mode for the whole solve (gs_solver_solve
 * sets it and restores the caller's mode), the copy/zero/scale kernels and the multi-dot of
 * pipecg_kernels.cu. A multi-GPU table wraps the same calls and adds an all-reduce after each
 * of dot, nrm2, mdot and dots (dots: one all-reduce of its k values). */
#include "core/error.h"
#include "solvers/pipecg_kernels.h"
#include "solvers/solver_impl.h"

static gs_status_t cu_dot(gs_solver_t *s, gs_idx_t len, const double *x, const double *y,
                          double *d_out)
{
  return GS_CUBLAS(cublasDdot(s->ctx->cublas, len, x, 1, y, 1, d_out));
}

static gs_status_t cu_nrm2(gs_solver_t *s, gs_idx_t len, const double *x, double *d_out)
{
  return GS_CUBLAS(cublasDnrm2(s->ctx->cublas, len, x, 1, d_out));
}

static gs_status_t cu_mdot(gs_solver_t *s, int k, const double *V, size_t ld, const double *w,
                           double *d_h)
{
  return GS_CUBLAS(cublasDgemv(s->ctx->cublas, CUBLAS_OP_T, s->n, k, s->one, V, (int)ld, w, 1,
                               s->zero, d_h, 1));
}

static gs_status_t cu_copy(gs_solver_t *s, gs_idx_t len, const double *x, double *y)
{
  if (x == y || len == 0) return GS_SUCCESS;
  return GS_CUDA(cudaMemcpyAsync(y, x, (size_t)len * sizeof(double), cudaMemcpyDeviceToDevice,
                                 s->ctx->stream));
}

static gs_status_t cu_zero(gs_solver_t *s, gs_idx_t len, double *x)
{
  if (len == 0) return GS_SUCCESS;
  return GS_CUDA(cudaMemsetAsync(x, 0, (size_t)len * sizeof(double), s->ctx->stream));
}

static gs_status_t cu_scale(gs_solver_t *s, gs_idx_t len, double alpha, double *x)
{
  return gs_kernel_scale(s->ctx->stream, len, alpha, x);
}

static gs_status_t cu_axpy(gs_solver_t *s, size_t len, const double *d_alpha, const double *x,
                           double *y)
{
  return GS_CUBLAS(cublasDaxpy(s->ctx->cublas, (int)len, d_alpha, x, 1, y, 1));
}

static gs_status_t cu_gemv(gs_solver_t *s, int k, const double *d_alpha, const double *V,
                           size_t ld, const double *h, const double *d_beta, double *w)
{
  return GS_CUBLAS(cublasDgemv(s->ctx->cublas, CUBLAS_OP_N, s->n, k, d_alpha, V, (int)ld, h, 1,
                               d_beta, w, 1));
}

static gs_status_t cu_dots(gs_solver_t *s, gs_idx_t len, int k, const double *const *x,
                           const double *const *y, double *d_out)
{
  return gs_kernel_dots(s->ctx->stream, len, s->d_s, s->d_red, k, x, y, d_out);
}

const gs_vecops_t gs_vecops_cuda = {"cuda",   cu_dot,  cu_nrm2,  cu_mdot, cu_copy,
                                    cu_zero,  cu_scale, cu_axpy, cu_gemv, cu_dots};

/* The test hook's copies (gs_test_solver_vecops): the same operations at another address, which
 * the methods do not recognize as the single-GPU table, so they run the generic path. */
static const gs_vecops_t vecops_generic = {"cuda-generic", cu_dot,   cu_nrm2, cu_mdot,
                                           cu_copy,        cu_zero,  cu_scale, cu_axpy,
                                           cu_gemv,        cu_dots};
static const gs_vecops_t vecops_minimal = {"cuda-minimal", cu_dot,   cu_nrm2, cu_mdot,
                                           cu_copy,        cu_zero,  cu_scale, cu_axpy,
                                           cu_gemv,        NULL};

const gs_vecops_t *gs_vecops_for(const gs_context_t *ctx)
{
  if (ctx && ctx->test_vecops == 1) return &vecops_generic;
  if (ctx && ctx->test_vecops == 2) return &vecops_minimal;
  return &gs_vecops_cuda;
}
