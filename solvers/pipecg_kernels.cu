/* solvers/pipecg_kernels.cu: pipelined CG (Ghysels and Vanroose, "Hiding global synchronization
 * latency in the preconditioned Conjugate Gradient algorithm", Parallel Computing 40, 2014,
 * Algorithm 4) in two kernels per iteration besides the product and the preconditioner:
 *   pipecg_update_kernel  the eight vector recurrences of lines 12-19 and, in the same pass, the
 *                         three dot products of lines 3-4 (and ||r||^2) of the next iteration:
 *                         the iteration's one global reduction;
 *   pipecg_step_kernel    one thread: the iteration count and convergence test, then the scalar
 *                         recurrence (line 8) with its breakdown checks.
 * And dots_kernel, k dot products in one pass: the start of a pass, and the single-GPU vector
 * table's multi-dot.
 *
 * Work division: one thread per vector entry, 64-bit grid-stride loops (GS_GRID_STRIDE), 256
 * threads per block; every access is unit-stride and coalesced. Each entry's loads come before
 * its stores, so the aliases of the unpreconditioned form (u = r, m = w, q = s) cannot change a
 * result. The reducing kernels run on gs_red_grid(n) blocks (at most GS_RED_BLOCKS, one partial
 * each) and sum through gs_grid_sum (solvers/reduce_device.cuh): the last block to arrive adds
 * the block partials in block order, so the sums do not depend on scheduling. Every thread reads
 * alpha and beta from the scalar block (a broadcast load); only the step kernel's one thread
 * writes them, and only the reduction's last thread writes gamma, delta, rr.
 * Halts: the update kernels return at once, in every block alike, when S->halt is set (they never
 * set it, so the test is uniform); the step kernel is the only one here that halts.
 * Assumes: S in device memory; vectors of n entries, distinct except the aliases above. */
#include <math.h>

#include "core/error.h"
#include "solvers/pipecg_kernels.h"
#include "solvers/reduce_device.cuh"
#include "spmv/device_util.cuh"

/* ---- the update with its reduction ----------------------------------------------------------- */

/* PC: with a preconditioner (u, m, q their own vectors). RED: also gamma, delta, rr. */
template <bool PC, bool RED>
static __global__ void __launch_bounds__(GS_RED_THREADS)
pipecg_update_kernel(gs_idx_t n, gs_dscalars_t *S, gs_red_t *red, gs_pipecg_vecs_t v)
{
  if (S->halt) return; /* uniform: no block of this kernel writes the halt */
  const double alpha = S->pipe.alpha, beta = S->pipe.beta;
  double g = 0.0, d = 0.0, rr = 0.0;
  GS_GRID_STRIDE(i, n) {
    /* loads */
    const double wi = v.w[i], ri = v.r[i];
    const double zi = v.nv[i] + beta * v.z[i]; /* z <- n + beta z     (z = A q) */
    const double si = wi + beta * v.s[i];      /* s <- w + beta s     (s = A p) */
    double ui = ri, qi = si;
    if (PC) {
      ui = v.u[i];
      qi = v.m[i] + beta * v.q[i];             /* q <- m + beta q     (q = M^-1 s) */
    }
    const double pi = ui + beta * v.p[i];      /* p <- u + beta p */
    const double xi = v.x[i] + alpha * pi;     /* x <- x + alpha p */
    const double rn = ri - alpha * si;         /* r <- r - alpha s */
    const double wn = wi - alpha * zi;         /* w <- w - alpha z */
    const double un = PC ? ui - alpha * qi : rn; /* u <- u - alpha q */
    /* stores */
    v.z[i] = zi;
    v.s[i] = si;
    v.p[i] = pi;
    v.x[i] = xi;
    v.r[i] = rn;
    v.w[i] = wn;
    if (PC) {
      v.q[i] = qi;
      v.u[i] = un;
    }
    if (RED) {
      g += rn * un; /* gamma = r^T u */
      d += wn * un; /* delta = w^T u */
      if (PC) rr += rn * rn;
    }
  }
  (void)rr;
  if (!RED) return;
  if (PC) {
    const double t[3] = {g, d, rr};
    gs_grid_sum<3>(t, red, &S->pipe.gamma); /* gamma, delta, rr: adjacent */
  } else {
    const double t[2] = {g, d};
    if (gs_grid_sum<2>(t, red, &S->pipe.gamma)) S->pipe.rr = S->pipe.gamma; /* u = r */
  }
}

extern "C" gs_status_t gs_kernel_pipecg_update(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S,
                                               gs_red_t *red, int pc, const gs_pipecg_vecs_t *v)
{
  const unsigned g = red ? gs_red_grid(n) : gs_grid_blocks(n, GS_RED_THREADS);
  if (pc && red) pipecg_update_kernel<true, true><<<g, GS_RED_THREADS, 0, stream>>>(n, S, red, *v);
  else if (pc) pipecg_update_kernel<true, false><<<g, GS_RED_THREADS, 0, stream>>>(n, S, red, *v);
  else if (red) pipecg_update_kernel<false, true><<<g, GS_RED_THREADS, 0, stream>>>(n, S, red, *v);
  else pipecg_update_kernel<false, false><<<g, GS_RED_THREADS, 0, stream>>>(n, S, red, *v);
  return GS_CHECK_LAUNCH(stream, "pipecg_update_kernel");
}

/* ---- the scalar step ------------------------------------------------------------------------- */

/* Records why the next update is refused (one thread: no other writer). */
__device__ static void step_halt(gs_dscalars_t *S, int code, int what, int done)
{
  S->halt = code;
  S->halt_what = what;
  S->halt_done = done;
}

/* One thread. Algorithm 4, line 8: beta = gamma / gamma_old and alpha = gamma / (delta - beta
 * gamma / alpha_old), where the divisor is p^T A p of the next direction in exact arithmetic
 * (p = u + beta p_old, with (A p_old)^T u = -beta p_old^T A p_old); at the start of a pass
 * beta = 0 and the divisor is delta = u^T A u itself. */
static __global__ void pipecg_step_kernel(gs_dscalars_t *S, int first)
{
  if (S->halt) return;
  gs_pipecg_scalars_t *P = &S->pipe;
  int done = 0;
  S->rnorm = sqrt(P->rr);
  if (!first) { /* the end of an iteration: gs_kernel_iteration_end's count and test */
    done = ++S->iter;
    if (S->rnorm <= S->tol) {
      step_halt(S, GS_HALT_CONVERGED, GS_WHAT_NONE, done);
      return;
    }
  }
  const double gamma = P->gamma, delta = P->delta;
  if (!isfinite(gamma)) { step_halt(S, GS_HALT_NANINF, GS_WHAT_RHO, done); return; }
  if (gamma < 0.0) { step_halt(S, GS_HALT_INDEFINITE_PC, GS_WHAT_RHO, done); return; }
  if (gamma == 0.0) { step_halt(S, GS_HALT_BREAKDOWN, GS_WHAT_RHO, done); return; }
  double beta = 0.0, pq = delta;
  if (!first) {
    beta = gamma / P->gamma_old;
    if (!isfinite(beta)) { step_halt(S, GS_HALT_NANINF, GS_WHAT_BETA, done); return; }
    pq = delta - beta * gamma / P->alpha;
  }
  if (!isfinite(pq)) { step_halt(S, GS_HALT_NANINF, GS_WHAT_PQ, done); return; }
  if (!(pq > 0.0)) { step_halt(S, GS_HALT_INDEFINITE, GS_WHAT_PQ, done); return; }
  const double alpha = gamma / pq;
  if (!isfinite(alpha)) { step_halt(S, GS_HALT_NANINF, GS_WHAT_ALPHA, done); return; }
  P->alpha = alpha;
  P->beta = beta;
  P->gamma_old = gamma;
  S->alpha = alpha; /* as CG reports it */
  S->pq = pq;
}

extern "C" gs_status_t gs_kernel_pipecg_step(cudaStream_t stream, gs_dscalars_t *S, int first)
{
  pipecg_step_kernel<<<1, 1, 0, stream>>>(S, first);
  return GS_CHECK_LAUNCH(stream, "pipecg_step_kernel");
}

/* ---- k dot products in one pass -------------------------------------------------------------- */

typedef struct {
  const double *x[GS_RED_SLOTS], *y[GS_RED_SLOTS];
} dots_args_t;
static_assert(GS_RED_SLOTS == 3, "gs_kernel_dots instantiates k = 1, 2, 3");

template <int K>
static __global__ void __launch_bounds__(GS_RED_THREADS)
dots_kernel(gs_idx_t n, const gs_dscalars_t *S, gs_red_t *red, dots_args_t a, double *out)
{
  if (S->halt) return; /* uniform: read before any block of this kernel could change it */
  double t[K];
#pragma unroll
  for (int k = 0; k < K; ++k) t[k] = 0.0;
  GS_GRID_STRIDE(i, n) {
#pragma unroll
    for (int k = 0; k < K; ++k) t[k] += a.x[k][i] * a.y[k][i];
  }
  gs_grid_sum<K>(t, red, out);
}

extern "C" gs_status_t gs_kernel_dots(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S,
                                      gs_red_t *red, int k, const double *const *x,
                                      const double *const *y, double *d_out)
{
  if (k < 1 || k > GS_RED_SLOTS || !x || !y || !d_out)
    return GS_ERROR(GS_ERR_INTERNAL, "gs_kernel_dots: k = %d dot products (1 to %d)", k,
                    GS_RED_SLOTS);
  dots_args_t a;
  for (int j = 0; j < GS_RED_SLOTS; ++j) {
    a.x[j] = j < k ? x[j] : NULL;
    a.y[j] = j < k ? y[j] : NULL;
  }
  const unsigned g = gs_red_grid(n);
  switch (k) {
  case 1: dots_kernel<1><<<g, GS_RED_THREADS, 0, stream>>>(n, S, red, a, d_out); break;
  case 2: dots_kernel<2><<<g, GS_RED_THREADS, 0, stream>>>(n, S, red, a, d_out); break;
  default: dots_kernel<3><<<g, GS_RED_THREADS, 0, stream>>>(n, S, red, a, d_out); break;
  }
  return GS_CHECK_LAUNCH(stream, "dots_kernel");
}
