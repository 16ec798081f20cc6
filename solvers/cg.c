/* solvers/cg.c: preconditioned conjugate gradients (Hestenes and Stiefel 1952; Saad, Iterative
 * Methods for Sparse Linear Systems, 2nd ed., Algorithm 9.1), for symmetric positive definite
 * A and M. Scalars stay on the device: alpha = rho / p^T A p and beta = rho' / rho are formed
 * inside the fused update kernels (vec_kernels.cu), which also refuse the step when
 * p^T A p <= 0 (indefinite A: GS_DIVERGED_INDEFINITE) instead of taking it. */
#include <math.h>

#include "core/error.h"
#include "solvers/solver_impl.h"

enum { R, P, Q, Z, NVEC }; /* work vectors; Z only with a preconditioner */

size_t gs_cg_work(const gs_solver_t *s, size_t *host_doubles)
{
  *host_doubles = 0;
  return s->M ? NVEC : NVEC - 1;
}

/* Reason to stop before the first iteration, from r0 and rho0 = r0^T M^-1 r0. */
static gs_reason_t initial_reason(gs_solver_t *s, gs_reason_t reason)
{
  double rho0 = s->h_s->rho[0];
  if (reason != GS_REASON_NONE) return reason;
  if (!isfinite(rho0)) {
    s->stats->detail = "rho = r^T M^-1 r is not finite";
    return GS_DIVERGED_NANINF;
  }
  if (rho0 < 0.0) { /* M is not positive definite */
    s->stats->detail = gs_solver_halt_detail(GS_HALT_INDEFINITE_PC, GS_WHAT_RHO);
    return GS_DIVERGED_INDEFINITE;
  }
  if (rho0 == 0.0) { /* r0 != 0 but M^-1 r0 orthogonal to it */
    s->stats->detail = gs_solver_halt_detail(GS_HALT_BREAKDOWN, GS_WHAT_RHO);
    return GS_DIVERGED_BREAKDOWN;
  }
  return GS_REASON_NONE;
}

gs_status_t gs_cg_solve(gs_solver_t *s, double *x, double *work, double *h_work)
{
  (void)h_work;
  cudaStream_t stream = s->ctx->stream;
  gs_dscalars_t *S = s->d_s;
  const gs_idx_t n = s->n;
  const int k = s->opts.check_every, maxit = s->opts.maxit, window = s->opts.stagnation_window;
  double *r = work + R * s->ld, *p = work + P * s->ld, *q = work + Q * s->ld;
  double *z = s->M ? work + Z * s->ld : r; /* no preconditioner: z is r itself */

  GS_CHECK(gs_solver_residual(s, s->opts.x0_given ? x : NULL, r));  /* r <- b - A x0        */
  GS_CHECK(s->vec->nrm2(s, n, r, &S->rnorm));                         /* ||r||                */
  if (s->M) GS_CHECK(gs_solver_precond(s, r, z));                   /* z <- M^-1 r          */
  GS_CHECK(s->vec->dot(s, n, r, z, &S->rho[0]));                      /* rho <- r^T z         */
  GS_CHECK(s->vec->copy(s, n, z, p));                                 /* p <- z               */
  GS_CHECK(gs_solver_fetch(s));
  s->stats->rnorm0 = s->h_s->rnorm;
  gs_reason_t reason = initial_reason(s, gs_solver_check(s, 0, s->h_s->rnorm, window));

  /* Memory movement per iteration, in n-vectors of doubles read + written:
   *   q = A p                     SpMV: matrix storage + 2n
   *   p^T q                       2n
   *   x += alpha p, r -= alpha q  6n (x, p, r, q read; x, r written)
   *   ||r||                       1n
   *   z = M^-1 r, r^T z           M^-1 + 2n   (skipped without preconditioner: rho = ||r||^2)
   *   p = z + beta p              3n
   * In all: storage + 14n without a preconditioner, storage + 16n + M^-1 with one (Jacobi
   * 3n: 19n). Host: one copy of the scalar block and one stream sync every k iterations. */
  for (int it = 1; reason == GS_REASON_NONE; ++it) {
    const int c = (it - 1) & 1; /* rho of this iteration in S->rho[c], the next in c ^ 1 */
    GS_CHECK(gs_solver_spmv(s, 1.0, p, 0.0, q));                                /* q <- A p  */
    GS_CHECK(s->vec->dot(s, n, p, q, &S->pq));                                   /* p^T q     */
    GS_CHECK(gs_kernel_cg_update(stream, n, S, c, it - 1, x, r, p, q)); /* x += a p, r -= a q */
    GS_CHECK(s->vec->nrm2(s, n, r, &S->rnorm));                                  /* ||r||     */
    if (s->M) {
      GS_CHECK(gs_solver_precond(s, r, z));                                     /* z <- M^-1 r */
      GS_CHECK(s->vec->dot(s, n, r, z, &S->rho[c ^ 1]));                         /* r^T z     */
    }
    GS_CHECK(gs_kernel_cg_direction(stream, n, S, c, !s->M, it, p, z));   /* p <- z + b p    */
    if (it % k == 0 || it >= maxit) {
      GS_CHECK(gs_solver_fetch(s));
      reason = gs_solver_check(s, it, s->h_s->rnorm, window);
    }
  }
  s->stats->reason = reason;
  return GS_SUCCESS;
}
