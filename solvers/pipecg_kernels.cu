/* solvers/pipecg_kernels.cu: pipelined CG (Ghysels and Vanroose, "Hiding global synchronization
 * latency in the preconditioned Conjugate Gradient algorithm", Parallel Computing 40, 2014,
 * Algorithm 4) in two kernels per iteration besides the product and the preconditioner:
 *   pipecg_update_kernel  the eight vector recurrences of lines 12-19 and, in the same pass, the
 *                         three dot products of lines 3-4 (and ||r||^2) of the next iteration
 *                         with the squared norms of the drift test (solvers/pipecg.c): the
 *                         iteration's one global reduction, 5 values (9 with M^-1);
 *   pipecg_step_kernel    one thread: the iteration count and convergence test, the drift
 *                         bounds and their replacement test, then the scalar recurrence
 *                         (line 8) with its breakdown checks.
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
 * writes them, and only the reduction's last thread writes gamma, delta, rr and the norms.
 * Halts: the update kernels return at once, in every block alike, when S->halt is set (they never
 * set it, so the test is uniform); the step kernel is the only one here that halts.
 * Assumes: S in device memory; vectors of n entries, distinct except the aliases above; the
 * update's partials (gs_pipecg_aux_t.red) with their counter at 0. */
#include <float.h>
#include <math.h>

#include "core/error.h"
#include "solvers/pipecg_kernels.h"
#include "solvers/reduce_device.cuh"
#include "spmv/device_util.cuh"

/* ---- the update with its reduction ----------------------------------------------------------- */

/* PC: with a preconditioner (u, m, q their own vectors). RED: also the reduction: gamma, delta,
 * the norms of the drift test, and rr with PC (without, rr is gamma). */
template <bool PC, bool RED>
static __global__ void __launch_bounds__(GS_RED_THREADS)
pipecg_update_kernel(gs_idx_t n, gs_dscalars_t *S, gs_pipecg_aux_t *X, gs_pipecg_vecs_t v)
{
  if (S->halt) return; /* uniform: no block of this kernel writes the halt */
  const double alpha = S->pipe.alpha, beta = S->pipe.beta;
  /* sums: gamma, delta, ||w||^2, ||p||^2, ||s||^2, and with PC rr, ||u||^2, ||q||^2, ||m||^2 */
  constexpr int K = PC ? 9 : 5;
  static_assert(K <= GS_PIPECG_SUMS, "gs_pipecg_aux_t.red holds the partials");
  double t[K];
#pragma unroll
  for (int k = 0; k < K; ++k) t[k] = 0.0;
  GS_GRID_STRIDE(i, n) {
    /* loads */
    const double wi = v.w[i], ri = v.r[i];
    const double zi = v.nv[i] + beta * v.z[i]; /* z <- n + beta z     (z = A q) */
    const double si = wi + beta * v.s[i];      /* s <- w + beta s     (s = A p) */
    double ui = ri, qi = si, mi = wi;
    if (PC) {
      ui = v.u[i];
      mi = v.m[i];
      qi = mi + beta * v.q[i];                 /* q <- m + beta q     (q = M^-1 s) */
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
    if constexpr (RED) {
      t[0] += rn * un; /* gamma = r^T u */
      t[1] += wn * un; /* delta = w^T u */
      t[2] += wn * wn;
      t[3] += pi * pi;
      t[4] += si * si;
      if constexpr (PC) {
        t[5] += rn * rn;
        t[6] += un * un;
        t[7] += qi * qi;
        t[8] += mi * mi;
      }
    }
  }
  if constexpr (RED) {
    double tot[K];
    if (!gs_grid_sum<K>(t, X->red, tot)) return; /* the one thread that holds the totals */
    gs_pipecg_drift_t *D = &X->d;
    S->pipe.gamma = tot[0];
    S->pipe.delta = tot[1];
    D->sq[GS_PIPECG_WW] = tot[2];
    D->sq[GS_PIPECG_PP] = tot[3];
    D->sq[GS_PIPECG_SS] = tot[4];
    if constexpr (!PC) {
      S->pipe.rr = tot[0]; /* u = r */
    } else {
      S->pipe.rr = tot[5];
      D->sq[GS_PIPECG_UU] = tot[6];
      D->sq[GS_PIPECG_QQ] = tot[7];
      D->sq[GS_PIPECG_MM] = tot[8];
    }
  }
}

extern "C" gs_status_t gs_kernel_pipecg_update(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S,
                                               gs_pipecg_aux_t *X, int pc,
                                               const gs_pipecg_vecs_t *v)
{
  const unsigned g = X ? gs_red_grid(n) : gs_grid_blocks(n, GS_RED_THREADS);
  if (pc && X) pipecg_update_kernel<true, true><<<g, GS_RED_THREADS, 0, stream>>>(n, S, X, *v);
  else if (pc) pipecg_update_kernel<true, false><<<g, GS_RED_THREADS, 0, stream>>>(n, S, X, *v);
  else if (X) pipecg_update_kernel<false, true><<<g, GS_RED_THREADS, 0, stream>>>(n, S, X, *v);
  else pipecg_update_kernel<false, false><<<g, GS_RED_THREADS, 0, stream>>>(n, S, X, *v);
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

/* One thread, mode ITERATION: advances the bounds on the gaps g = A p - s, h = A u - w,
 * j = A q - z over the update just taken (alpha, beta) and says whether one has outgrown its
 * vector. The gaps obey (Cools et al. 2018, Section 4; xi the rounding of each vector update)
 *   j_i     = (A m_i - n_i) + beta j_{i-1} + A xi_q - xi_z
 *   g_i     = h_i + beta g_{i-1} + A xi_p - xi_s
 *   h_{i+1} = h_i - alpha j_i + A xi_u - xi_w
 * and each ||xi|| is at most eps times the norms the update adds, so with a ~ ||A|| (and
 * ||A v|| <= a ||v|| for the products) the bounds grow as
 *   J = |beta| J + eps a (3 ||m|| + 4 |beta| ||q_old||)   (the product n = A m: eps a ||m||)
 *   G = H + |beta| G + 2 eps a (||u_old|| + 2 |beta| ||p_old||)
 *   H = H + |alpha| J + 2 eps a (||u_old|| + 2 |alpha| ||q||)
 * a is the largest ||w|| / ||u|| seen (w stands for A u): an estimate from below that the
 * Krylov vectors soon bring near ||A||, and it needs no matrix (an operator may be a shell).
 * Without M^-1, u is r, q is s and m is the w before the update. */
__device__ static bool drift_due(const gs_pipecg_scalars_t *P, gs_pipecg_drift_t *D, int pc,
                                 int done)
{
  const double e = DBL_EPSILON;
  const double al = fabs(P->alpha), bt = fabs(P->beta); /* the step the update took */
  const double w = sqrt(D->sq[GS_PIPECG_WW]), p = sqrt(D->sq[GS_PIPECG_PP]);
  const double s = sqrt(D->sq[GS_PIPECG_SS]);
  const double u = pc ? sqrt(D->sq[GS_PIPECG_UU]) : sqrt(P->rr);
  const double q = pc ? sqrt(D->sq[GS_PIPECG_QQ]) : s;
  const double m = pc ? sqrt(D->sq[GS_PIPECG_MM]) : D->w_prev;
  if (u > 0.0 && w / u > D->anorm) D->anorm = w / u; /* false for NaN: the estimate stays */
  const double a = D->anorm;
  D->j = bt * D->j + e * a * (3.0 * m + 4.0 * bt * D->q_prev);
  D->g = D->h + bt * D->g + 2.0 * e * a * (D->u_prev + 2.0 * bt * D->p_prev); /* h_i: before */
  D->h = D->h + al * D->j + 2.0 * e * a * (D->u_prev + 2.0 * al * q);
  D->u_prev = u;
  D->p_prev = p;
  D->q_prev = q;
  D->w_prev = w;
  return done >= GS_PIPECG_SEGMENT_MIN && s > 0.0 && w > 0.0 &&
         (D->g > GS_PIPECG_DRIFT_TOL * s || D->h > GS_PIPECG_DRIFT_TOL * w);
}

/* One thread. Algorithm 4, line 8: beta = gamma / gamma_old and alpha = gamma / (delta - beta
 * gamma / alpha_old), where the divisor is p^T A p of the next direction in exact arithmetic
 * (p = u + beta p_old, with (A p_old)^T u = -beta p_old^T A p_old); at the start of a pass
 * beta = 0 and the divisor is delta = u^T A u itself. After a replacement the formula is the
 * same, with gamma and delta of the recomputed u and w (as Cools et al.'s Algorithm). */
static __global__ void pipecg_step_kernel(gs_dscalars_t *S, gs_pipecg_aux_t *X, int pc, int mode)
{
  if (S->halt) return;
  gs_pipecg_scalars_t *P = &S->pipe;
  gs_pipecg_drift_t *D = &X->d;
  int done = 0;
  S->rnorm = sqrt(P->rr);
  if (mode == GS_PIPECG_STEP_ITERATION) { /* gs_kernel_iteration_end's count and test */
    done = ++S->iter;
    if (S->rnorm <= S->tol) {
      step_halt(S, GS_HALT_CONVERGED, GS_WHAT_NONE, done);
      return;
    }
    if (drift_due(P, D, pc, S->iter)) { /* the host replaces s, q, z, u, w and goes on */
      step_halt(S, GS_HALT_BREAKDOWN, GS_PIPECG_WHAT_REPLACE, done);
      return;
    }
  } else { /* the vectors were formed by products: no gap but their rounding */
    D->g = D->h = D->j = 0.0;
    if (mode == GS_PIPECG_STEP_START) D->u_prev = D->p_prev = D->q_prev = D->w_prev = 0.0;
  }
  const double gamma = P->gamma, delta = P->delta;
  if (!isfinite(gamma)) { step_halt(S, GS_HALT_NANINF, GS_WHAT_RHO, done); return; }
  if (gamma < 0.0) { step_halt(S, GS_HALT_INDEFINITE_PC, GS_WHAT_RHO, done); return; }
  if (gamma == 0.0) { step_halt(S, GS_HALT_BREAKDOWN, GS_WHAT_RHO, done); return; }
  double beta = 0.0, pq = delta;
  if (mode != GS_PIPECG_STEP_START) {
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

extern "C" gs_status_t gs_kernel_pipecg_step(cudaStream_t stream, gs_dscalars_t *S,
                                             gs_pipecg_aux_t *X, int pc, int mode)
{
  pipecg_step_kernel<<<1, 1, 0, stream>>>(S, X, pc, mode);
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
