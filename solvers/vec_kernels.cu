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
#include <float.h>
#include <math.h>

#include "core/error.h"
#include "solvers/reduce_device.cuh"
#include "solvers/solver_impl.h"
#include "solvers/step_checks.cuh"
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

/* `done` as given, or (GS_DONE_DEVICE) the iterations the device has counted: the form a
 * captured iteration body uses, since it cannot take the host's iteration number. */
__device__ static int done_of(const gs_dscalars_t *S, int done)
{
  return done >= 0 ? done : S->iter;
}

/* ---- CG -------------------------------------------------------------------------------------- */

/* CG's step length alpha = rho[c] / p^T A p, or a halt (every thread decides the same; the
 * checks are gs_step_cg_alpha's, shared with the persistent kernel). */
__device__ static bool cg_alpha(gs_dscalars_t *S, int c, int done, double *alpha)
{
  int what;
  const int h = gs_step_cg_alpha(S->rho[c], S->pq, &what, alpha);
  if (h) { halt(S, h, what, done); return false; }
  if (first_thread()) S->alpha = *alpha;
  return true;
}

/* CG's direction update ratio beta = rho_new / rho[c] (rho_new = ||r||^2 without a
 * preconditioner, stored then), or a halt. */
__device__ static bool cg_beta(gs_dscalars_t *S, int c, int rho_from_rnorm, int done,
                               double *beta)
{
  const double rho_new = rho_from_rnorm ? S->rnorm * S->rnorm : S->rho[c ^ 1];
  int what;
  const int h = gs_step_cg_beta(rho_new, S->rho[c], &what, beta);
  if (h) { halt(S, h, what, done); return false; }
  if (rho_from_rnorm && first_thread()) S->rho[c ^ 1] = rho_new;
  return true;
}

/* Reliable updates (S->rel_delta > 0 only: gs_solver_use_reliable, gs_cg_replace in cg.c):
 * whether the recurrence residual of this iteration, updated with the mixed product, is to be
 * replaced by the true b - A x before the direction update: when ||r|| has fallen below
 * rel_delta times the largest ||r|| since the last replacement (Sleijpen and van der Vorst 1996,
 * "Reliable updated residuals in hybrid Bi-CG methods", the test of their section 3; the
 * mixed-precision CG of Clark et al. 2010), or meets tol (only the true residual may end the
 * solve). Every thread decides the same. */
__device__ static bool reliable_due(const gs_dscalars_t *S)
{
  const double d = S->rel_delta;
  return d > 0.0 && (S->rnorm <= S->tol || S->rnorm < d * S->rel_max);
}

/* After a direction update that was not due for replacement: rel_max = max(rel_max, ||r||), by
 * thread (0, 0). Another block of the same kernel may still read rel_max in reliable_due and
 * get either value: both give the same answer, since for delta <= 1, ||r|| < delta max(m, ||r||)
 * exactly when ||r|| < delta m. */
__device__ static void reliable_track(gs_dscalars_t *S)
{
  if (S->rel_delta > 0.0 && first_thread() && S->rnorm > S->rel_max) S->rel_max = S->rnorm;
}

static __global__ void __launch_bounds__(GS_VEC_THREADS)
cg_update_kernel(gs_idx_t n, gs_dscalars_t *S, int c, int done, double *__restrict__ x,
                 double *__restrict__ r, const double *__restrict__ p,
                 const double *__restrict__ q)
{
  if (S->halt) return;
  double alpha;
  if (!cg_alpha(S, c, done_of(S, done), &alpha)) return;
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
  if (reliable_due(S)) { /* x and r of this iteration stand; the host replaces r, then p */
    if (first_thread()) S->rel_rho = S->rho[c]; /* beta's denominator, kept (rel_rho) */
    halt(S, GS_HALT_RELIABLE, GS_WHAT_NONE, done_of(S, done) + 1);
    return;
  }
  double beta;
  if (!cg_beta(S, c, rho_from_rnorm, done_of(S, done), &beta)) return;
  GS_GRID_STRIDE(i, n) p[i] = z[i] + beta * p[i]; /* p <- z + beta p */
  reliable_track(S);
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

/* BiCGSTAB's step length alpha = rho[c] / r~^T v, or a halt (every thread decides the same).
 * The checks here, in bicgstab_omega and in bicgstab_p_kernel are step_checks.cuh's, shared
 * with the persistent kernel. */
__device__ static bool bicgstab_alpha(gs_dscalars_t *S, int c, int done, double *alpha)
{
  int what;
  const int h = gs_step_bicgstab_alpha(S->rho[c], S->rv, &what, alpha);
  if (h) { halt(S, h, what, done); return false; }
  if (first_thread()) S->alpha = *alpha;
  return true;
}

/* BiCGSTAB's omega = t^T s / t^T t, or a halt. */
__device__ static bool bicgstab_omega(gs_dscalars_t *S, int done, double *omega)
{
  int what;
  const int h = gs_step_bicgstab_omega(S->ts, S->tt, &what, omega);
  if (h) { halt(S, h, what, done); return false; }
  if (first_thread()) S->omega = *omega;
  return true;
}

static __global__ void __launch_bounds__(GS_VEC_THREADS)
bicgstab_p_kernel(gs_idx_t n, gs_dscalars_t *S, int c, int first, int done,
                  double *__restrict__ p, const double *__restrict__ r,
                  const double *__restrict__ v)
{
  if (S->halt) return;
  done = done_of(S, done);
  const double rho = S->rho[c];
  int what;
  int h = gs_step_rho_nonzero(rho, &what);
  if (h) { halt(S, h, what, done); return; }
  if (first) {
    GS_GRID_STRIDE(i, n) p[i] = r[i]; /* p <- r */
    return;
  }
  const double omega = S->omega;
  double beta;
  h = gs_step_bicgstab_beta(rho, S->rho[c ^ 1], S->alpha, omega, &what, &beta);
  if (h) { halt(S, h, what, done); return; }
  GS_GRID_STRIDE(i, n) p[i] = r[i] + beta * (p[i] - omega * v[i]); /* p <- r + beta(p - omega v) */
}

static __global__ void __launch_bounds__(GS_VEC_THREADS)
bicgstab_s_kernel(gs_idx_t n, gs_dscalars_t *S, int c, int done, double *__restrict__ r,
                  const double *__restrict__ v)
{
  if (S->halt) return;
  double alpha;
  if (!bicgstab_alpha(S, c, done_of(S, done), &alpha)) return;
  GS_GRID_STRIDE(i, n) r[i] -= alpha * v[i]; /* s <- r - alpha v (in r) */
}

static __global__ void __launch_bounds__(GS_VEC_THREADS)
bicgstab_xr_kernel(gs_idx_t n, gs_dscalars_t *S, int done,
                   double *__restrict__ x, double *r, const double *__restrict__ phat,
                   const double *shat, const double *__restrict__ t)
/* shat is r itself without a preconditioner: no __restrict__ on those two */
{
  if (S->halt) return;
  done = done_of(S, done);
  const double alpha = S->alpha;
  if (S->rnorm <= S->tol) { /* converged at the half step: x <- x + alpha phat, r = s */
    /* No halt() here: a block scheduled after block 0 had set S->halt would skip its part of
     * the x update (the early return above), leaving x short of the last step. The half-step
     * flag is set by bicgstab_halfstep_kernel, launched after this kernel. */
    GS_GRID_STRIDE(i, n) x[i] += alpha * phat[i];
    return;
  }
  double omega;
  if (!bicgstab_omega(S, done, &omega)) return;
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

/* Flags the half-step convergence the xr kernel acted on (same test, S->rnorm still ||s||):
 * the iteration that reached it counts as done. */
static __global__ void bicgstab_halfstep_kernel(gs_dscalars_t *S, int done)
{
  if (!S->halt && S->rnorm <= S->tol)
    halt(S, GS_HALT_HALFSTEP, GS_WHAT_NONE, done_of(S, done) + 1);
}

extern "C" gs_status_t gs_kernel_bicgstab_xr(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S,
                                             int done, double *x, double *r, const double *phat,
                                             const double *shat, const double *t)
{
  const unsigned g = gs_grid_blocks(n, GS_VEC_THREADS);
  bicgstab_xr_kernel<<<g, GS_VEC_THREADS, 0, stream>>>(n, S, done, x, r, phat, shat, t);
  GS_CHECK(GS_CHECK_LAUNCH(stream, "bicgstab_xr_kernel"));
  bicgstab_halfstep_kernel<<<1, 1, 0, stream>>>(S, done);
  return GS_CHECK_LAUNCH(stream, "bicgstab_halfstep_kernel");
}

/* ---- BiCG ------------------------------------------------------------------------------------ */

static __global__ void __launch_bounds__(GS_VEC_THREADS)
bicg_p_kernel(gs_idx_t n, gs_dscalars_t *S, int c, int first, int done, double *__restrict__ p,
              double *__restrict__ pt, const double *__restrict__ z,
              const double *__restrict__ zt)
{
  if (S->halt) return;
  const double rho = S->rho[c];
  int what;
  const int h = gs_step_rho_nonzero(rho, &what); /* BiCGSTAB's test of rho, the same breakdown */
  if (h) { halt(S, h, what, done); return; }
  if (first) {
    GS_GRID_STRIDE(i, n) {
      p[i] = z[i];   /* p <- z */
      pt[i] = zt[i]; /* p~ <- z~ */
    }
    return;
  }
  const double beta = rho / S->rho[c ^ 1];
  if (!isfinite(beta)) { halt(S, GS_HALT_NANINF, GS_WHAT_BETA, done); return; }
  GS_GRID_STRIDE(i, n) {
    p[i] = z[i] + beta * p[i];    /* p <- z + beta p */
    pt[i] = zt[i] + beta * pt[i]; /* p~ <- z~ + beta p~ */
  }
}

static __global__ void __launch_bounds__(GS_VEC_THREADS)
bicg_update_kernel(gs_idx_t n, gs_dscalars_t *S, int c, int done, double *__restrict__ x,
                   double *__restrict__ r, double *__restrict__ rt, const double *__restrict__ p,
                   const double *__restrict__ q, const double *__restrict__ qt)
{
  if (S->halt) return;
  const double pq = S->pq;
  if (!isfinite(pq)) { halt(S, GS_HALT_NANINF, GS_WHAT_PTQ, done); return; }
  if (pq == 0.0) { halt(S, GS_HALT_BREAKDOWN, GS_WHAT_PTQ, done); return; }
  const double alpha = S->rho[c] / pq;
  if (!isfinite(alpha)) { halt(S, GS_HALT_NANINF, GS_WHAT_ALPHA, done); return; }
  if (first_thread()) S->alpha = alpha;
  GS_GRID_STRIDE(i, n) {
    x[i] += alpha * p[i];   /* x <- x + alpha p */
    r[i] -= alpha * q[i];   /* r <- r - alpha q */
    rt[i] -= alpha * qt[i]; /* r~ <- r~ - alpha q~ */
  }
}

extern "C" gs_status_t gs_kernel_bicg_p(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S, int c,
                                        int first, int done, double *p, double *pt,
                                        const double *z, const double *zt)
{
  const unsigned g = gs_grid_blocks(n, GS_VEC_THREADS);
  bicg_p_kernel<<<g, GS_VEC_THREADS, 0, stream>>>(n, S, c, first, done, p, pt, z, zt);
  return GS_CHECK_LAUNCH(stream, "bicg_p_kernel");
}

extern "C" gs_status_t gs_kernel_bicg_update(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S,
                                             int c, int done, double *x, double *r, double *rt,
                                             const double *p, const double *q, const double *qt)
{
  const unsigned g = gs_grid_blocks(n, GS_VEC_THREADS);
  bicg_update_kernel<<<g, GS_VEC_THREADS, 0, stream>>>(n, S, c, done, x, r, rt, p, q, qt);
  return GS_CHECK_LAUNCH(stream, "bicg_update_kernel");
}

/* ---- CGNR ------------------------------------------------------------------------------------ */

/* x has n entries, r and w have m: one grid over the longer of the two. */
static __global__ void __launch_bounds__(GS_VEC_THREADS)
cgnr_update_kernel(gs_idx_t n, gs_idx_t m, gs_dscalars_t *S, int c, int done,
                   double *__restrict__ x, double *__restrict__ r, const double *__restrict__ p,
                   const double *__restrict__ w)
{
  if (S->halt) return;
  const double ww = S->pq;
  if (!isfinite(ww)) { halt(S, GS_HALT_NANINF, GS_WHAT_WW, done); return; }
  if (!(ww > 0.0)) { halt(S, GS_HALT_BREAKDOWN, GS_WHAT_WW, done); return; }
  const double alpha = S->rho[c] / ww;
  if (!isfinite(alpha)) { halt(S, GS_HALT_NANINF, GS_WHAT_ALPHA, done); return; }
  if (first_thread()) S->alpha = alpha;
  GS_GRID_STRIDE(i, n > m ? n : m) {
    if (i < n) x[i] += alpha * p[i]; /* x <- x + alpha p */
    if (i < m) r[i] -= alpha * w[i]; /* r <- r - alpha A p */
  }
}

extern "C" gs_status_t gs_kernel_cgnr_update(cudaStream_t stream, gs_idx_t n, gs_idx_t m,
                                             gs_dscalars_t *S, int c, int done, double *x,
                                             double *r, const double *p, const double *w)
{
  const unsigned g = gs_grid_blocks(n > m ? n : m, GS_VEC_THREADS);
  cgnr_update_kernel<<<g, GS_VEC_THREADS, 0, stream>>>(n, m, S, c, done, x, r, p, w);
  return GS_CHECK_LAUNCH(stream, "cgnr_update_kernel");
}

/* ---- LSQR ------------------------------------------------------------------------------------
 * Paige and Saunders (1982), Algorithm LSQR with damp = 0, in the form of SciPy's lsqr.py. The
 * Golub-Kahan vectors are kept unnormalized, U = beta u and V = alfa v, so that each
 * normalization is folded into the update that next reads the vector (no pass of its own):
 *   beta' u' = A v - alfa u    ->  U <- (A V) / alfa - (alfa / beta) U     (lsqr_u_kernel)
 *   alfa' v' = A^T u' - beta' v ->  V <- (A^T U) / beta' - (beta' / alfa) V (lsqr_v_kernel)
 * The scalar recurrences (rotation, estimates, tests) run in one thread (lsqr_step_kernel), the
 * only writer of the rotation's state; lsqr_xw_kernel then reads t1 and t2. */

static __global__ void __launch_bounds__(GS_VEC_THREADS)
lsqr_init_v_kernel(gs_idx_t n, gs_dscalars_t *S, double *__restrict__ V,
                   const double *__restrict__ t)
{
  const double beta = S->ls.beta;
  if (!(beta > 0.0)) { /* r0 = 0 (or NaN): V = 0, so alfa = 0 and the host stops at once */
    GS_GRID_STRIDE(i, n) V[i] = 0.0;
    return;
  }
  GS_GRID_STRIDE(i, n) V[i] = t[i] / beta; /* alfa v <- A^T u, u = U / beta */
}

static __global__ void __launch_bounds__(GS_VEC_THREADS)
lsqr_init_w_kernel(gs_idx_t n, gs_dscalars_t *S, double *__restrict__ w,
                   const double *__restrict__ V)
{
  const double alfa = S->ls.alfa, beta = S->ls.beta;
  if (first_thread()) {
    gs_lsqr_scalars_t *L = &S->ls;
    L->rhobar = alfa;
    L->phibar = beta;
    L->anorm = L->ddnorm = L->acond = L->xxnorm = L->z = L->xnorm = 0.0;
    L->cs2 = -1.0;
    L->sn2 = 0.0;
    L->rnorm = beta;
    L->arnorm = alfa * beta;
    S->rnorm = alfa * beta; /* the monitored norm: ||A^T r0|| */
  }
  const double s = alfa > 0.0 ? 1.0 / alfa : 1.0;
  GS_GRID_STRIDE(i, n) w[i] = s * V[i]; /* w <- v */
}

static __global__ void __launch_bounds__(GS_VEC_THREADS)
lsqr_u_kernel(gs_idx_t m, gs_dscalars_t *S, double *__restrict__ U, const double *__restrict__ t)
{
  if (S->halt) return;
  const double alfa = S->ls.alfa, beta = S->ls.beta;
  /* alfa, beta > 0 here: a zero ends the iteration through a test (or the start) first */
  const double a = 1.0 / alfa, b = alfa / beta;
  GS_GRID_STRIDE(i, m) U[i] = a * t[i] - b * U[i]; /* beta' u' <- A v - alfa u */
}

static __global__ void __launch_bounds__(GS_VEC_THREADS)
lsqr_v_kernel(gs_idx_t n, gs_dscalars_t *S, double *__restrict__ V, const double *__restrict__ t)
{
  if (S->halt) return;
  const double alfa = S->ls.alfa, beta = S->ls.beta_new;
  if (!(beta > 0.0)) return; /* A v = alfa u: v stays (SciPy's lsqr skips the update) */
  const double a = 1.0 / beta, b = beta / alfa;
  GS_GRID_STRIDE(i, n) V[i] = a * t[i] - b * V[i]; /* alfa' v' <- A^T u' - beta' v */
}

static __global__ void lsqr_step_kernel(gs_dscalars_t *S, double tol, double atol, int it)
{
  if (S->halt) return;
  gs_lsqr_scalars_t *L = &S->ls;
  const double eps = DBL_EPSILON;
  const double beta = L->beta_new;
  double alfa = L->alfa;
  if (beta > 0.0) { /* else u, v and alfa stay: the system is solved at this step */
    L->anorm = sqrt(L->anorm * L->anorm + alfa * alfa + beta * beta);
    alfa = L->alfa_new;
  }
  /* the plane rotation that eliminates beta (SciPy's _sym_ortho for rhobar >= 0 > ... cases:
   * rho = hypot(rhobar, beta) > 0 whenever the iteration runs) */
  const double rho = hypot(L->rhobar, beta);
  const double cs = L->rhobar / rho, sn = beta / rho;
  const double theta = sn * alfa, phi = cs * L->phibar, tau = sn * phi;
  const double t1 = phi / rho, t2 = -theta / rho;
  if (!isfinite(rho) || !isfinite(t1) || !isfinite(t2) || !(rho > 0.0)) {
    halt(S, GS_HALT_NANINF, GS_WHAT_LSQR, it - 1);
    return;
  }
  L->alfa = alfa;
  L->beta = beta;
  L->rhobar = -cs * alfa;
  L->phibar = sn * L->phibar;
  L->t1 = t1;
  L->t2 = t2;
  const double dk = L->wnorm / rho; /* ||d_k||, d_k = w / rho */
  L->ddnorm += dk * dk;
  /* ||x|| estimate (Paige and Saunders, section 5.2) */
  const double delta = L->sn2 * rho, gambar = -L->cs2 * rho;
  const double rhs = phi - delta * L->z, zbar = rhs / gambar;
  L->xnorm = sqrt(L->xxnorm + zbar * zbar);
  const double gamma = hypot(gambar, theta);
  L->cs2 = gambar / gamma;
  L->sn2 = theta / gamma;
  L->z = rhs / gamma;
  L->xxnorm += L->z * L->z;
  /* ||A||, cond(A), ||r||, ||A^T r|| and the stopping tests (SciPy's order: the last wins) */
  L->acond = L->anorm * sqrt(L->ddnorm);
  L->rnorm = fabs(L->phibar);
  L->arnorm = alfa * fabs(tau);
  S->rnorm = L->arnorm;
  const double bnorm = S->bnorm, anorm = L->anorm, xnorm = L->xnorm;
  const double test1 = L->rnorm / bnorm;
  const double test2 = L->arnorm / (anorm * L->rnorm + eps);
  const double test3 = 1.0 / (L->acond + eps);
  const double t1n = test1 / (1.0 + anorm * xnorm / bnorm);
  const double rtol = tol + tol * anorm * xnorm / bnorm;
  int istop = 0;
  if (1.0 + test3 <= 1.0) istop = GS_LSQR_ISTOP_COND_EPS;
  if (1.0 + test2 <= 1.0) istop = GS_LSQR_ISTOP_TEST2_EPS;
  if (1.0 + t1n <= 1.0) istop = GS_LSQR_ISTOP_TEST1_EPS;
  if (test2 <= tol) istop = GS_LSQR_ISTOP_TEST2;
  if (L->rnorm <= atol) istop = GS_LSQR_ISTOP_ATOL;
  if (test1 <= rtol) istop = GS_LSQR_ISTOP_TEST1;
  if (istop) halt(S, GS_HALT_LSQR, istop, it); /* this step is taken: done = it */
}

static __global__ void __launch_bounds__(GS_VEC_THREADS)
lsqr_xw_kernel(gs_idx_t n, gs_dscalars_t *S, int it, double *__restrict__ x,
               double *__restrict__ w, const double *__restrict__ V)
{
  if (S->halt && S->halt_done < it) return; /* stopped before this iteration */
  const double t1 = S->ls.t1, t2 = S->ls.t2, alfa = S->ls.alfa;
  const double s = alfa > 0.0 ? 1.0 / alfa : 1.0; /* V = 0 when alfa = 0 */
  GS_GRID_STRIDE(i, n) {
    const double wi = w[i];
    x[i] += t1 * wi;            /* x <- x + (phi / rho) w */
    w[i] = s * V[i] + t2 * wi;  /* w <- v - (theta / rho) w */
  }
}

extern "C" gs_status_t gs_kernel_lsqr_init_v(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S,
                                             double *V, const double *t)
{
  const unsigned g = gs_grid_blocks(n, GS_VEC_THREADS);
  lsqr_init_v_kernel<<<g, GS_VEC_THREADS, 0, stream>>>(n, S, V, t);
  return GS_CHECK_LAUNCH(stream, "lsqr_init_v_kernel");
}

extern "C" gs_status_t gs_kernel_lsqr_init_w(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S,
                                             double *w, const double *V)
{
  const unsigned g = gs_grid_blocks(n, GS_VEC_THREADS);
  lsqr_init_w_kernel<<<g, GS_VEC_THREADS, 0, stream>>>(n, S, w, V);
  return GS_CHECK_LAUNCH(stream, "lsqr_init_w_kernel");
}

extern "C" gs_status_t gs_kernel_lsqr_u(cudaStream_t stream, gs_idx_t m, gs_dscalars_t *S,
                                        double *U, const double *t)
{
  const unsigned g = gs_grid_blocks(m, GS_VEC_THREADS);
  lsqr_u_kernel<<<g, GS_VEC_THREADS, 0, stream>>>(m, S, U, t);
  return GS_CHECK_LAUNCH(stream, "lsqr_u_kernel");
}

extern "C" gs_status_t gs_kernel_lsqr_v(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S,
                                        double *V, const double *t)
{
  const unsigned g = gs_grid_blocks(n, GS_VEC_THREADS);
  lsqr_v_kernel<<<g, GS_VEC_THREADS, 0, stream>>>(n, S, V, t);
  return GS_CHECK_LAUNCH(stream, "lsqr_v_kernel");
}

extern "C" gs_status_t gs_kernel_lsqr_step(cudaStream_t stream, gs_dscalars_t *S, double tol,
                                           double atol, int it)
{
  lsqr_step_kernel<<<1, 1, 0, stream>>>(S, tol, atol, it);
  return GS_CHECK_LAUNCH(stream, "lsqr_step_kernel");
}

extern "C" gs_status_t gs_kernel_lsqr_xw(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S,
                                         int it, double *x, double *w, const double *V)
{
  const unsigned g = gs_grid_blocks(n, GS_VEC_THREADS);
  lsqr_xw_kernel<<<g, GS_VEC_THREADS, 0, stream>>>(n, S, it, x, w, V);
  return GS_CHECK_LAUNCH(stream, "lsqr_xw_kernel");
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

/* ---- the device-side iteration count and convergence test ------------------------------------ */

/* One thread: unless a halt stands, counts the iteration and halts CONVERGED when the monitored
 * norm meets the tolerance, so that the iterations the host launches before its next check do
 * nothing (every update kernel returns on a halt) and the count is the converged one. */
static __global__ void iteration_end_kernel(gs_dscalars_t *S)
{
  if (S->halt) return;
  const int done = ++S->iter;
  if (S->rnorm <= S->tol) {
    S->halt = GS_HALT_CONVERGED;
    S->halt_what = GS_WHAT_NONE;
    S->halt_done = done;
  }
}

extern "C" gs_status_t gs_kernel_iteration_end(cudaStream_t stream, gs_dscalars_t *S)
{
  iteration_end_kernel<<<1, 1, 0, stream>>>(S);
  return GS_CHECK_LAUNCH(stream, "iteration_end_kernel");
}

/* The solve's tolerance from ||b|| on the device (one thread), so that the solve's start needs
 * no round trip before the method's own first one: GS_SOLVE_TOL, the host's expression. */
static __global__ void start_tol_kernel(gs_dscalars_t *S, double rtol, double atol)
{
  S->tol = GS_SOLVE_TOL(rtol, S->bnorm, atol);
}

extern "C" gs_status_t gs_kernel_start_tol(cudaStream_t stream, gs_dscalars_t *S, double rtol,
                                           double atol)
{
  start_tol_kernel<<<1, 1, 0, stream>>>(S, rtol, atol);
  return GS_CHECK_LAUNCH(stream, "start_tol_kernel");
}

/* CG through the vector table with a preconditioner: S->ts = r^T r and S->tt = r^T z came from
 * one reduction (one all-reduce across ranks instead of two); rnorm = sqrt(r^T r), rho[slot] =
 * r^T z. One thread. */
static __global__ void cg_norm_rho_kernel(gs_dscalars_t *S, int slot)
{
  /* after a halt the reduction kernels return at once, but an all-reduce across ranks still
   * sums their stale ts and tt again: keep the norm of the halt */
  if (S->halt) return;
  S->rnorm = sqrt(S->ts);
  S->rho[slot] = S->tt;
}

extern "C" gs_status_t gs_kernel_cg_norm_rho(cudaStream_t stream, gs_dscalars_t *S, int slot)
{
  cg_norm_rho_kernel<<<1, 1, 0, stream>>>(S, slot);
  return GS_CHECK_LAUNCH(stream, "cg_norm_rho_kernel");
}

/* ---- fused single-pass reductions (CG's small-system path) ------------------------------------
 * One kernel computes a vector update and a reduction: each block sums its share in a fixed tree
 * (warp shuffles, then the warps' sums), writes the partial to red[block], and the last block to
 * arrive (a counter after a fence, the CUDA threadFenceReduction pattern) sums red[0..grid) in
 * block order and stores the result. The grid is fixed by n (gs_red_blocks), so the sum is the
 * same in every run whichever block finishes last: deterministic, as cuBLAS's dot is. The counter
 * is reset by the last block, ready for the next kernel on the stream. Saves the second launch
 * of a library reduction and, fused with the update, a pass over the vectors. */

static unsigned red_blocks(gs_idx_t n)
{
  const unsigned g = gs_grid_blocks(n, GS_VEC_THREADS);
  return g < GS_RED_BLOCKS ? g : GS_RED_BLOCKS;
}

__device__ static double block_sum(double v, double *sh)
{
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) sh[warp] = v;
  __syncthreads();
  v = 0.0;
  if (warp == 0) {
    v = lane < GS_VEC_THREADS / 32 ? sh[lane] : 0.0;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  }
  return v; /* valid in thread 0 */
}

/* Every block calls it once with its thread's share; *out = the total (or its square root). */
__device__ static void grid_sum(double v, gs_red_t *red, double *out, bool root)
{
  __shared__ double sh[GS_VEC_THREADS / 32];
  __shared__ bool last;
  v = block_sum(v, sh);
  if (threadIdx.x == 0) {
    red->part[blockIdx.x] = v;
    __threadfence();
    last = atomicAdd(&red->count, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  double a = 0.0;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += GS_VEC_THREADS)
    a += ((volatile double *)red->part)[b];
  __syncthreads(); /* sh reused */
  a = block_sum(a, sh);
  if (threadIdx.x == 0) {
    *out = root ? sqrt(a) : a;
    red->count = 0;
  }
  __syncthreads(); /* sh and last are free again: a second grid_sum may follow (dot2) */
}

static __global__ void __launch_bounds__(GS_VEC_THREADS)
dot_kernel(gs_idx_t n, const gs_dscalars_t *S, gs_red_t *red, const double *__restrict__ x,
           const double *__restrict__ y, double *out, bool root)
{
  if (S->halt) return; /* uniform: read before any block of this kernel could change it */
  double a = 0.0;
  GS_GRID_STRIDE(i, n) a += x[i] * y[i];
  grid_sum(a, red, out, root);
}

extern "C" gs_status_t gs_kernel_dot(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S,
                                     gs_red_t *red, const double *x, const double *y,
                                     double *d_out)
{
  dot_kernel<<<red_blocks(n), GS_VEC_THREADS, 0, stream>>>(n, S, red, x, y, d_out, false);
  return GS_CHECK_LAUNCH(stream, "dot_kernel");
}

extern "C" gs_status_t gs_kernel_nrm2(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S,
                                      gs_red_t *red, const double *x, double *d_out)
{
  dot_kernel<<<red_blocks(n), GS_VEC_THREADS, 0, stream>>>(n, S, red, x, x, d_out, true);
  return GS_CHECK_LAUNCH(stream, "dot_kernel (nrm2)");
}

/* BiCGSTAB's t^T s and t^T t in one pass over t and s: two sums, one after the other through
 * the scratch (the second grid_sum starts once every block has passed the first). */
static __global__ void __launch_bounds__(GS_VEC_THREADS)
dot2_kernel(gs_idx_t n, const gs_dscalars_t *S, gs_red_t *red, const double *__restrict__ t,
            const double *__restrict__ r, double *ts, double *tt)
{
  if (S->halt) return;
  double a = 0.0, b = 0.0;
  GS_GRID_STRIDE(i, n) {
    const double ti = t[i];
    a += ti * r[i];
    b += ti * ti;
  }
  grid_sum(a, red, ts, false);
  grid_sum(b, red + 1, tt, false);
}

extern "C" gs_status_t gs_kernel_dot2(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S,
                                      gs_red_t *red, const double *t, const double *r,
                                      double *d_ts, double *d_tt)
{
  dot2_kernel<<<red_blocks(n), GS_VEC_THREADS, 0, stream>>>(n, S, red, t, r, d_ts, d_tt);
  return GS_CHECK_LAUNCH(stream, "dot2_kernel");
}

/* ---- BiCGSTAB's fused path (one GPU) ------------------------------------------------------------
 * bicgstab_s_kernel's step with ||s|| in the same pass; and bicgstab_xr_kernel's step with the
 * new ||r|| and the next iteration's rho = r~^T r in the same pass, the half-step flag, the
 * iteration count and the convergence test done by the last block to arrive: 5 launches of the
 * plain path in one (xr, half step, ||r||, count and test, the next rho). */

static __global__ void __launch_bounds__(GS_VEC_THREADS)
bicgstab_s_norm_kernel(gs_idx_t n, gs_dscalars_t *S, gs_red_t *red, int c,
                       double *__restrict__ r, const double *__restrict__ v)
{
  if (S->halt) return; /* read before any block of this kernel could write it */
  /* every block takes the same branch (the same scalars); a refusal returns before the sum */
  double alpha;
  if (!bicgstab_alpha(S, c, S->iter, &alpha)) return;
  double a = 0.0;
  GS_GRID_STRIDE(i, n) {
    const double si = r[i] - alpha * v[i]; /* s <- r - alpha v (in r) */
    r[i] = si;
    a += si * si;
  }
  grid_sum(a, red, &S->rnorm, true); /* ||s|| */
}

extern "C" gs_status_t gs_kernel_bicgstab_s_norm(cudaStream_t stream, gs_idx_t n,
                                                 gs_dscalars_t *S, gs_red_t *red, int c,
                                                 double *r, const double *v)
{
  bicgstab_s_norm_kernel<<<red_blocks(n), GS_VEC_THREADS, 0, stream>>>(n, S, red, c, r, v);
  return GS_CHECK_LAUNCH(stream, "bicgstab_s_norm_kernel");
}

static __global__ void __launch_bounds__(GS_VEC_THREADS)
bicgstab_xr_end_kernel(gs_idx_t n, gs_dscalars_t *S, gs_red_t *red, int c_next,
                       double *__restrict__ x, double *r, const double *__restrict__ phat,
                       const double *shat, const double *__restrict__ t,
                       const double *__restrict__ rhat)
/* shat is r itself without a preconditioner: no __restrict__ on those two */
{
  if (S->halt) return; /* every block reads it before the last block can write it */
  const int done = S->iter;
  const double alpha = S->alpha;
  const bool half = S->rnorm <= S->tol; /* ||s||: converged at the half step */
  double v[2] = {0.0, 0.0};
  if (half) {
    GS_GRID_STRIDE(i, n) x[i] += alpha * phat[i]; /* x <- x + alpha phat, r = s */
  } else {
    double omega;
    if (!bicgstab_omega(S, done, &omega)) return;
    GS_GRID_STRIDE(i, n) {
      x[i] += alpha * phat[i] + omega * shat[i]; /* x <- x + alpha phat + omega shat */
      const double ri = r[i] - omega * t[i];     /* r <- s - omega t */
      r[i] = ri;
      v[0] += ri * ri;
      v[1] += rhat[i] * ri;
    }
  }
  /* every block that got here calls it: the branches above are uniform (the same scalars), and
   * the halt is written only by the one thread the sum returns true in, after every block has
   * arrived (so no block of this kernel skips its part of x) */
  double out[2];
  if (!gs_grid_sum<2>(v, red, out)) return;
  if (half) { /* the iteration that reached it counts; r and ||r|| stay s and ||s|| */
    S->halt = GS_HALT_HALFSTEP;
    S->halt_what = GS_WHAT_NONE;
    S->halt_done = done + 1;
    return;
  }
  S->rnorm = sqrt(out[0]);
  S->rho[c_next] = out[1]; /* r~^T r for the next iteration */
  S->iter = done + 1;
  if (S->rnorm <= S->tol) {
    S->halt = GS_HALT_CONVERGED;
    S->halt_what = GS_WHAT_NONE;
    S->halt_done = done + 1;
  }
}

extern "C" gs_status_t gs_kernel_bicgstab_xr_end(cudaStream_t stream, gs_idx_t n,
                                                 gs_dscalars_t *S, gs_red_t *red, int c_next,
                                                 double *x, double *r, const double *phat,
                                                 const double *shat, const double *t,
                                                 const double *rhat)
{
  bicgstab_xr_end_kernel<<<red_blocks(n), GS_VEC_THREADS, 0, stream>>>(n, S, red, c_next, x, r,
                                                                       phat, shat, t, rhat);
  return GS_CHECK_LAUNCH(stream, "bicgstab_xr_end_kernel");
}

/* cg_update_kernel's step, then ||r|| of the updated r into S->rnorm. */
static __global__ void __launch_bounds__(GS_VEC_THREADS)
cg_update_norm_kernel(gs_idx_t n, gs_dscalars_t *S, gs_red_t *red, int c,
                      double *__restrict__ x, double *__restrict__ r,
                      const double *__restrict__ p, const double *__restrict__ q)
{
  if (S->halt) return;
  double alpha;
  if (!cg_alpha(S, c, S->iter, &alpha)) return;
  double a = 0.0;
  GS_GRID_STRIDE(i, n) {
    x[i] += alpha * p[i];
    const double ri = r[i] - alpha * q[i];
    r[i] = ri;
    a += ri * ri;
  }
  grid_sum(a, red, &S->rnorm, true);
}

extern "C" gs_status_t gs_kernel_cg_update_norm(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S,
                                                gs_red_t *red, int c, double *x, double *r,
                                                const double *p, const double *q)
{
  cg_update_norm_kernel<<<red_blocks(n), GS_VEC_THREADS, 0, stream>>>(n, S, red, c, x, r, p, q);
  return GS_CHECK_LAUNCH(stream, "cg_update_norm_kernel");
}

/* cg_direction_kernel's step and iteration_end_kernel's count and test in one launch. Thread
 * (0, 0) alone writes the count and the halt; other blocks read S->iter only for halt(), which
 * thread (0, 0) alone acts on. Every block takes the same path (the same scalars). */
static __global__ void __launch_bounds__(GS_VEC_THREADS)
cg_direction_end_kernel(gs_idx_t n, gs_dscalars_t *S, int c, int rho_from_rnorm,
                        double *__restrict__ p, const double *__restrict__ z)
{
  if (S->halt) return;
  const int done = S->iter;
  const bool replace = reliable_due(S);
  if (replace || S->rnorm <= S->tol) { /* converged, or (reliable updates) the true residual is
                                          due: this iteration counts, no direction yet */
    if (first_thread()) {
      S->iter = done + 1;
      S->rel_rho = S->rho[c]; /* beta's denominator, kept for gs_cg_replace (rel_rho) */
      halt(S, replace ? GS_HALT_RELIABLE : GS_HALT_CONVERGED, GS_WHAT_NONE, done + 1);
    }
    return;
  }
  double beta;
  if (!cg_beta(S, c, rho_from_rnorm, done, &beta)) return;
  GS_GRID_STRIDE(i, n) p[i] = z[i] + beta * p[i];
  if (first_thread()) S->iter = done + 1;
  reliable_track(S);
}

extern "C" gs_status_t gs_kernel_cg_direction_end(cudaStream_t stream, gs_idx_t n,
                                                  gs_dscalars_t *S, int c, int rho_from_rnorm,
                                                  double *p, const double *z)
{
  const unsigned g = gs_grid_blocks(n, GS_VEC_THREADS);
  cg_direction_end_kernel<<<g, GS_VEC_THREADS, 0, stream>>>(n, S, c, rho_from_rnorm, p, z);
  return GS_CHECK_LAUNCH(stream, "cg_direction_end_kernel");
}
