/* solvers/vec_kernels.cu: fused vector updates of the Krylov methods, reading their scalars
 * (rho, p^T A p, alpha, omega, ...) from the device scalar block, so that no host round trip
 * sits between a dot product and the update that uses it (Ginkgo's cg step_1 / step_2).
 *
 * Work division: one thread per vector entry, 64-bit grid-stride loops (GS_GRID_STRIDE,
 * spmv/device_util.cuh) on the shared grid rule (gs_grid_blocks, spmv/common_kernels.h: at
 * least one block, so that thread (0, 0) writes the step's scalars even for n = 0, at most
 * GS_GRID_MAX_BLOCKS), 256 threads per block; every access is unit-stride and coalesced. Each
 * thread recomputes the scalar ratio itself from the block (a broadcast load), so no kernel
 * both writes and reads a scalar another thread needs: thread (0, 0) alone writes results back
 * (alpha, omega, the halt code) for later kernels.
 * Assumes: S points to device memory; vectors of length n, distinct unless stated. */
#include <math.h>

#include "core/error.h"
#include "solvers/solver_impl.h"
#include "spmv/common_kernels.h"
#include "spmv/device_util.cuh"

#define GS_VEC_THREADS 256

/* The first thread records why the step was refused; all threads then return. */
__device__ static void halt(gs_dscalars_t *S, int code, int what, int done)
{
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    S->halt = code;
    S->halt_what = what;
    S->halt_done = done;
  }
}

__device__ static bool first_thread() { return blockIdx.x == 0 && threadIdx.x == 0; }

/* ---- CG -------------------------------------------------------------------------------------- */

static __global__ void __launch_bounds__(GS_VEC_THREADS)
cg_update_kernel(gs_idx_t n, gs_dscalars_t *S, int c, int done, double *__restrict__ x,
                 double *__restrict__ r, const double *__restrict__ p,
                 const double *__restrict__ q)
{
  if (S->halt) return;
  const double pq = S->pq;
  if (!isfinite(pq)) { halt(S, GS_HALT_NANINF, GS_WHAT_PQ, done); return; }
  if (!(pq > 0.0)) { halt(S, GS_HALT_INDEFINITE, GS_WHAT_PQ, done); return; }
  const double alpha = S->rho[c] / pq;
  if (!isfinite(alpha)) { halt(S, GS_HALT_NANINF, GS_WHAT_ALPHA, done); return; }
  if (first_thread()) S->alpha = alpha;
  GS_GRID_STRIDE(i, n) {
    x[i] += alpha * p[i]; /* x <- x + alpha p */
    r[i] -= alpha * q[i]; /* r <- r - alpha q */
  }
}

static __global__ void __launch_bounds__(GS_VEC_THREADS)
cg_direction_kernel(gs_idx_t n, gs_dscalars_t *S, int c, int rho_from_rnorm, int done,
                    double *__restrict__ p, const double *__restrict__ z)
{
  if (S->halt) return;
  const double rho_new = rho_from_rnorm ? S->rnorm * S->rnorm : S->rho[c ^ 1];
  if (!isfinite(rho_new)) { halt(S, GS_HALT_NANINF, GS_WHAT_RHO, done); return; }
  if (rho_new < 0.0) { halt(S, GS_HALT_INDEFINITE_PC, GS_WHAT_RHO, done); return; }
  if (rho_new == 0.0) { halt(S, GS_HALT_BREAKDOWN, GS_WHAT_RHO, done); return; }
  const double beta = rho_new / S->rho[c];
  if (!isfinite(beta)) { halt(S, GS_HALT_NANINF, GS_WHAT_BETA, done); return; }
  if (rho_from_rnorm && first_thread()) S->rho[c ^ 1] = rho_new;
  GS_GRID_STRIDE(i, n) p[i] = z[i] + beta * p[i]; /* p <- z + beta p */
}

extern "C" gs_status_t gs_kernel_cg_update(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S,
                                           int c, int done, double *x, double *r,
                                           const double *p, const double *q)
{
  const unsigned g = gs_grid_blocks(n, GS_VEC_THREADS);
  cg_update_kernel<<<g, GS_VEC_THREADS, 0, stream>>>(n, S, c, done, x, r, p, q);
  return GS_CHECK_LAUNCH(stream, "cg_update_kernel");
}

extern "C" gs_status_t gs_kernel_cg_direction(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S,
                                              int c, int rho_from_rnorm, int done, double *p,
                                              const double *z)
{
  const unsigned g = gs_grid_blocks(n, GS_VEC_THREADS);
  cg_direction_kernel<<<g, GS_VEC_THREADS, 0, stream>>>(n, S, c, rho_from_rnorm, done, p, z);
  return GS_CHECK_LAUNCH(stream, "cg_direction_kernel");
}

/* ---- BiCGSTAB -------------------------------------------------------------------------------- */

static __global__ void __launch_bounds__(GS_VEC_THREADS)
bicgstab_p_kernel(gs_idx_t n, gs_dscalars_t *S, int c, int first, int done,
                  double *__restrict__ p, const double *__restrict__ r,
                  const double *__restrict__ v)
{
  if (S->halt) return;
  const double rho = S->rho[c];
  if (!isfinite(rho)) { halt(S, GS_HALT_NANINF, GS_WHAT_RHO, done); return; }
  if (rho == 0.0) { halt(S, GS_HALT_BREAKDOWN, GS_WHAT_RHO, done); return; }
  if (first) {
    GS_GRID_STRIDE(i, n) p[i] = r[i]; /* p <- r */
    return;
  }
  const double omega = S->omega;
  if (omega == 0.0) { halt(S, GS_HALT_BREAKDOWN, GS_WHAT_OMEGA, done); return; }
  const double beta = (rho / S->rho[c ^ 1]) * (S->alpha / omega);
  if (!isfinite(beta)) { halt(S, GS_HALT_NANINF, GS_WHAT_BETA, done); return; }
  GS_GRID_STRIDE(i, n) p[i] = r[i] + beta * (p[i] - omega * v[i]); /* p <- r + beta(p - omega v) */
}

static __global__ void __launch_bounds__(GS_VEC_THREADS)
bicgstab_s_kernel(gs_idx_t n, gs_dscalars_t *S, int c, int done, double *__restrict__ r,
                  const double *__restrict__ v)
{
  if (S->halt) return;
  const double rv = S->rv;
  if (!isfinite(rv)) { halt(S, GS_HALT_NANINF, GS_WHAT_RV, done); return; }
  if (rv == 0.0) { halt(S, GS_HALT_BREAKDOWN, GS_WHAT_RV, done); return; }
  const double alpha = S->rho[c] / rv;
  if (!isfinite(alpha)) { halt(S, GS_HALT_NANINF, GS_WHAT_ALPHA, done); return; }
  if (first_thread()) S->alpha = alpha;
  GS_GRID_STRIDE(i, n) r[i] -= alpha * v[i]; /* s <- r - alpha v (in r) */
}

static __global__ void __launch_bounds__(GS_VEC_THREADS)
bicgstab_xr_kernel(gs_idx_t n, gs_dscalars_t *S, double tol, int done_half, int done,
                   double *__restrict__ x, double *r, const double *__restrict__ phat,
                   const double *shat, const double *__restrict__ t)
/* shat is r itself without a preconditioner: no __restrict__ on those two */
{
  if (S->halt) return;
  const double alpha = S->alpha;
  if (S->rnorm <= tol) { /* converged at the half step: x <- x + alpha phat, r = s */
    /* No halt() here: a block scheduled after block 0 had set S->halt would skip its part of
     * the x update (the early return above), leaving x short of the last step. The half-step
     * flag is set by bicgstab_halfstep_kernel, launched after this kernel. */
    (void)done_half;
    GS_GRID_STRIDE(i, n) x[i] += alpha * phat[i];
    return;
  }
  const double tt = S->tt;
  if (!isfinite(tt)) { halt(S, GS_HALT_NANINF, GS_WHAT_TT, done); return; }
  if (tt == 0.0) { halt(S, GS_HALT_BREAKDOWN, GS_WHAT_TT, done); return; }
  const double omega = S->ts / tt;
  if (!isfinite(omega)) { halt(S, GS_HALT_NANINF, GS_WHAT_OMEGA, done); return; }
  if (first_thread()) S->omega = omega;
  GS_GRID_STRIDE(i, n) {
    x[i] += alpha * phat[i] + omega * shat[i]; /* x <- x + alpha phat + omega shat */
    r[i] -= omega * t[i];                      /* r <- s - omega t */
  }
}

extern "C" gs_status_t gs_kernel_bicgstab_p(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S,
                                            int c, int first, int done, double *p,
                                            const double *r, const double *v)
{
  const unsigned g = gs_grid_blocks(n, GS_VEC_THREADS);
  bicgstab_p_kernel<<<g, GS_VEC_THREADS, 0, stream>>>(n, S, c, first, done, p, r, v);
  return GS_CHECK_LAUNCH(stream, "bicgstab_p_kernel");
}

extern "C" gs_status_t gs_kernel_bicgstab_s(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S,
                                            int c, int done, double *r, const double *v)
{
  const unsigned g = gs_grid_blocks(n, GS_VEC_THREADS);
  bicgstab_s_kernel<<<g, GS_VEC_THREADS, 0, stream>>>(n, S, c, done, r, v);
  return GS_CHECK_LAUNCH(stream, "bicgstab_s_kernel");
}

/* Flags the half-step convergence the xr kernel acted on (same test, S->rnorm still ||s||). */
static __global__ void bicgstab_halfstep_kernel(gs_dscalars_t *S, double tol, int done_half)
{
  if (!S->halt && S->rnorm <= tol) halt(S, GS_HALT_HALFSTEP, GS_WHAT_NONE, done_half);
}

extern "C" gs_status_t gs_kernel_bicgstab_xr(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S,
                                             double tol, int done_half, int done, double *x,
                                             double *r, const double *phat, const double *shat,
                                             const double *t)
{
  const unsigned g = gs_grid_blocks(n, GS_VEC_THREADS);
  bicgstab_xr_kernel<<<g, GS_VEC_THREADS, 0, stream>>>(n, S, tol, done_half, done, x, r, phat,
                                                       shat, t);
  GS_CHECK(GS_CHECK_LAUNCH(stream, "bicgstab_xr_kernel"));
  bicgstab_halfstep_kernel<<<1, 1, 0, stream>>>(S, tol, done_half);
  return GS_CHECK_LAUNCH(stream, "bicgstab_halfstep_kernel");
}

/* ---- plain ----------------------------------------------------------------------------------- */

static __global__ void __launch_bounds__(GS_VEC_THREADS)
scale_kernel(gs_idx_t n, double alpha, double *__restrict__ x)
{
  GS_GRID_STRIDE(i, n) x[i] *= alpha;
}

extern "C" gs_status_t gs_kernel_scale(cudaStream_t stream, gs_idx_t n, double alpha, double *x)
{
  const unsigned g = gs_grid_blocks(n, GS_VEC_THREADS);
  scale_kernel<<<g, GS_VEC_THREADS, 0, stream>>>(n, alpha, x);
  return GS_CHECK_LAUNCH(stream, "scale_kernel");
}
