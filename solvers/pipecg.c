/* solvers/pipecg.c: pipelined preconditioned conjugate gradients (Ghysels and Vanroose, "Hiding
 * global synchronization latency in the preconditioned Conjugate Gradient algorithm", Parallel
 * Computing 40, 2014, Algorithm 4), for symmetric positive definite A and M. In exact
 * arithmetic it computes CG's iterates; it carries A p, M^-1 A p and A M^-1 A p as recurrences
 * (s, q, z) besides u = M^-1 r and w = A u, so that the iteration's dot products r^T u, w^T u
 * (and ||r||^2) are one reduction, taken in the same pass as the vector updates, and nothing
 * waits on a reduction but the one-thread scalar step: with several GPUs, one all-reduce of
 * three values per iteration, which can overlap the next M^-1 and A product (the step needs
 * the sum, the product does not).
 *
 * Attainable accuracy. The recurrences for r, u, w, s, q, z accumulate rounding that CG's
 * (r only) does not, so the recurrence residual drifts further from b - Ax (Cools, Yetkin,
 * Agullo, Giraud and Vanroose, SIAM J. Matrix Anal. Appl. 39, 2018), and the divisor
 * p^T A p = delta - beta gamma / alpha_old is a difference that cancels. Two guards keep the
 * reported outcome honest:
 *  - a scalar the recurrences made unusable (p^T A p <= 0, r^T M^-1 r <= 0) after the pass has
 *    iterated restarts the method from x with the true residual b - Ax (residual replacement
 *    at the breakdown), at most GS_PIPECG_RESTARTS times, and only while the pass that broke
 *    down reduced ||b - Ax|| (an indefinite A breaks down again without progress, and then
 *    stops with the breakdown's reason, as CG would). At the start of a pass every scalar is a
 *    direct dot product (delta = u^T A u), so a breakdown there is final;
 *  - "converged" is gs_solve's promise on the recomputed true residual (solver.c restarts from
 *    it when the recurrence residual met the tolerance and b - Ax did not).
 * On well-conditioned systems the iteration counts are CG's; on ill-conditioned ones more
 * (nos7 with Jacobi: 99 for CG, about 180 here with one restart, in the NumPy model of
 * tests/scipy_iterations.py), and without a preconditioner nos7 (cond ~ 4e9) may break down
 * for good: use cg there. */
#include <math.h>

#include "core/error.h"
#include "solvers/pipecg_kernels.h"
#include "solvers/solver_impl.h"

/* Restarts from the true residual after a breakdown of the recurrences, per call. */
#define GS_PIPECG_RESTARTS 5

/* work vectors; the last three only with a preconditioner */
enum { R, W, NV, Z, SV, P, U, Q, MV, NVEC };

size_t gs_pipecg_work(const gs_solver_t *s, size_t *host_doubles)
{
  *host_doubles = 0;
  return s->M ? NVEC : NVEC - 3;
}

/* gamma = r^T u, delta = w^T u, rr = r^T r (adjacent in the scalar block) through the vector
 * table: one reduction where it has a multi-dot (one all-reduce on several GPUs), else three. */
static gs_status_t reduce3(gs_solver_t *s, const gs_pipecg_vecs_t *v)
{
  double *out = &s->d_s->pipe.gamma;
  const double *x[3] = {v->r, v->w, v->r}, *y[3] = {v->u, v->u, v->r};
  if (s->vec->dots) return s->vec->dots(s, s->n, 3, x, y, out);
  for (int k = 0; k < 3; ++k) GS_CHECK(s->vec->dot(s, s->n, x[k], y[k], out + k));
  return GS_SUCCESS;
}

/* Memory movement per iteration, in n-vectors of doubles read + written:
 *   m = M^-1 w                       M^-1 (skipped without a preconditioner: m = w)
 *   nv = A m                         SpMV: storage + 2n
 *   the update, one pass:            with M: reads nv m w u r z q s p x (10n), writes z q s p x
 *     z q s p x r u w, gamma delta   r u w (8n): 18n; without: reads nv w r z s p x (7n),
 *     rr                             writes z s p x r w (6n): 13n
 *   the scalar step                  one thread, no vector
 * In all on one GPU: storage + 15n without a preconditioner (CG: storage + 13n), storage + 20n
 * + M^-1 with one (CG: 15n + M^-1): pipelined CG pays 2n to 5n more traffic for one reduction
 * phase instead of two (three with M), in 3 launches (4 with M) against CG's 4 (5 with M).
 * Through a vector table without the fused reduction: the update alone, then gamma, delta, rr
 * in one multi-dot pass (3n with M, 2n without) or three dots (5n). VEC_N is the vector kernels'
 * share (SpMV and M^-1 excluded), for the stats. The device counts the iteration and tests
 * convergence; the host reads the scalar block every k iterations (gs_solver_iterate). */
#define PIPECG_VEC_N(pc) ((pc) ? 18.0 : 13.0)

static gs_status_t pipecg_iteration(gs_solver_t *s, void *user, int it)
{
  const gs_pipecg_vecs_t *v = (const gs_pipecg_vecs_t *)user;
  cudaStream_t stream = s->ctx->stream;
  gs_dscalars_t *S = s->d_s;
  (void)it; /* no scalar slot alternates: gamma_old is kept by the step kernel */
  if (s->M) GS_CHECK(gs_solver_precond(s, v->w, v->m));                       /* m <- M^-1 w */
  GS_CHECK(gs_solver_spmv(s, 1.0, v->m, 0.0, v->nv));                          /* n <- A m    */
  if (s->vec == &gs_vecops_cuda) { /* one GPU: the update and its reduction in one pass */
    GS_CHECK(gs_kernel_pipecg_update(stream, s->n, S, s->d_red, s->M != NULL, v));
  } else { /* through the vector table (its reductions may communicate) */
    GS_CHECK(gs_kernel_pipecg_update(stream, s->n, S, NULL, s->M != NULL, v));
    GS_CHECK(reduce3(s, v));                                            /* gamma, delta, rr */
  }
  /* z q s p x r u w updated, gamma delta rr of the new vectors */
  return gs_kernel_pipecg_step(stream, S, 0);       /* it += 1, ||r|| <= tol?; alpha, beta */
}

/* The start of a pass: r = b - A x, u = M^-1 r, w = A u, the recurrences zeroed (the first
 * update takes beta = 0, and 0 times uninitialized memory could be NaN), gamma, delta, rr and
 * the first step; x = 0 when use_x is 0. */
static gs_status_t start_pass(gs_solver_t *s, const gs_pipecg_vecs_t *v, int use_x)
{
  const gs_idx_t n = s->n;
  GS_CHECK(gs_solver_residual(s, use_x ? v->x : NULL, v->r));                  /* r <- b - A x */
  if (s->M) GS_CHECK(gs_solver_precond(s, v->r, v->u));                        /* u <- M^-1 r */
  GS_CHECK(gs_solver_spmv(s, 1.0, v->u, 0.0, v->w));                           /* w <- A u     */
  GS_CHECK(s->vec->zero(s, n, v->z));
  GS_CHECK(s->vec->zero(s, n, v->s));
  GS_CHECK(s->vec->zero(s, n, v->p));
  if (s->M) GS_CHECK(s->vec->zero(s, n, v->q));
  GS_CHECK(reduce3(s, v));                                              /* gamma, delta, rr */
  return gs_kernel_pipecg_step(s->ctx->stream, s->d_s, 1);       /* ||r||, alpha = gamma/delta */
}

/* Whether the reason that ended a pass is a breakdown of the recurrences that a restart from
 * the true residual may cure (not NaN, not the iteration limit, not the monitor). */
static int restartable(gs_reason_t r)
{
  return r == GS_DIVERGED_INDEFINITE || r == GS_DIVERGED_BREAKDOWN;
}

gs_status_t gs_pipecg_solve(gs_solver_t *s, double *x, double *work, double *h_work)
{
  (void)h_work;
  const size_t ld = s->ld;
  const int window = s->opts.stagnation_window;
  gs_pipecg_vecs_t v = {.x = x, .r = work + R * ld, .w = work + W * ld, .nv = work + NV * ld,
                        .z = work + Z * ld, .s = work + SV * ld, .p = work + P * ld};
  if (s->M) {
    v.u = work + U * ld;
    v.q = work + Q * ld;
    v.m = work + MV * ld;
  } else { /* M = I: u is r, m is w, q is s */
    v.u = v.r;
    v.m = v.w;
    v.q = v.s;
  }
  gs_solve_stats_t *st = s->stats;
  gs_reason_t broke = GS_REASON_NONE; /* the breakdown that ended the last pass */
  const char *broke_detail = "";
  double start = 0.0; /* ||b - Ax|| at the start of the last pass */
  for (int pass = 0;; ++pass) {
    GS_CHECK(start_pass(s, &v, pass > 0 || s->opts.x0_given));
    GS_CHECK(gs_solver_fetch(s));
    const double rnorm = s->h_s->rnorm; /* of b - Ax, computed directly */
    if (pass == 0 && s->it_base == 0) st->rnorm0 = rnorm;
    gs_reason_t reason = gs_solver_check(s, 0, rnorm, window);
    if (pass > 0 && reason == GS_REASON_NONE) {
      if (rnorm < start) {
        st->restarts++;
      } else { /* the pass that broke down did not reduce b - Ax: its breakdown stands */
        reason = broke;
        st->detail = broke_detail;
      }
    }
    start = rnorm;
    /* Iteration 1 runs call by call (timed products for the stats); graphs from iteration 2. */
    GS_CHECK(gs_solver_iterate(s, pipecg_iteration, &v, x, 2, PIPECG_VEC_N(s->M != NULL),
                               window, &reason));
    const int took = st->iterations - s->it_base; /* iterations of this pass */
    if (!restartable(reason) || took == 0 || pass == GS_PIPECG_RESTARTS) {
      if (restartable(reason) && took > 0 && s->h_s->halt == GS_HALT_INDEFINITE)
        st->detail = "p^T A p <= 0 from pipelined CG's recurrences: A is indefinite, or they "
                     "lost accuracy (an ill-conditioned A: try cg)";
      st->reason = reason;
      return GS_SUCCESS;
    }
    /* a breakdown of the recurrences: the next pass starts from x with b - Ax */
    broke = reason;
    broke_detail = s->h_s->halt == GS_HALT_INDEFINITE
                       ? "p^T A p <= 0 from pipelined CG's recurrences, and a restart from the "
                         "true residual made no progress: A is indefinite, or the recurrences "
                         "lost accuracy (an ill-conditioned A: try cg)"
                       : st->detail;
    s->opts.maxit -= took;
    s->it_base = st->iterations;
    GS_CHECK(gs_solver_clear_halt(s));
  }
}
