/* solvers/bicgstab.c: preconditioned BiCGSTAB (van der Vorst 1992; Saad, Iterative Methods for
 * Sparse Linear Systems, 2nd ed., Algorithm 7.7 with right preconditioning as in SciPy and
 * PETSc's bcgs), for general square A. The residual r is updated in place: it holds s after the
 * first half step. When ||s|| already meets the tolerance the second half is not taken
 * (x += alpha phat only) and the iteration counts as done; zero divisors (rho, r~^T v, t^T t,
 * omega) stop with GS_DIVERGED_BREAKDOWN. */
#include "core/error.h"
#include "solvers/solver_impl.h"

enum { R, RHAT, P, V, T, PHAT, SHAT, NVEC }; /* PHAT, SHAT only with a preconditioner */

size_t gs_bicgstab_work(const gs_solver_t *s, size_t *host_doubles)
{
  *host_doubles = 0;
  return s->M ? NVEC : NVEC - 2;
}

gs_status_t gs_bicgstab_solve(gs_solver_t *s, double *x, double *work, double *h_work)
{
  (void)h_work;
  cudaStream_t stream = s->ctx->stream;
  gs_dscalars_t *S = s->d_s;
  const gs_idx_t n = s->n;
  const int k = s->opts.check_every, maxit = s->opts.maxit, window = s->opts.stagnation_window;
  const size_t ld = s->ld;
  double *r = work + R * ld, *rhat = work + RHAT * ld, *p = work + P * ld, *v = work + V * ld;
  double *t = work + T * ld;
  double *phat = s->M ? work + PHAT * ld : p; /* no preconditioner: phat = p, shat = s = r */
  double *shat = s->M ? work + SHAT * ld : r;

  gs_reason_t reason;
  GS_CHECK(gs_solver_start_shadow(s, x, r, rhat, window, &reason)); /* r, ||r||, r~ = r */

  /* Memory movement per iteration, in n-vectors of doubles read + written:
   *   rho = r~^T r                       2n
   *   p = r + beta (p - omega v)         4n
   *   v = A M^-1 p                       SpMV: storage + 2n, M^-1
   *   r~^T v                             2n
   *   s = r - alpha v (in r), ||s||      3n + 1n
   *   t = A M^-1 s                       SpMV: storage + 2n, M^-1
   *   t^T s, t^T t                       4n
   *   x += alpha phat + omega shat,
   *   r = s - omega t                    7n
   *   ||r||                              1n
   * In all: 2 x storage + 28n, plus 2 M^-1 (Jacobi 2 x 3n: 34n). Host: one copy of the scalar
   * block and one stream sync every k iterations; the half-step test runs on the device. */
  for (int it = 1; reason == GS_REASON_NONE; ++it) {
    const int c = it & 1; /* rho of this iteration in S->rho[c], the previous in c ^ 1 */
    GS_CHECK(s->vec->dot(s, n, rhat, r, &S->rho[c]));                         /* r~^T r     */
    GS_CHECK(gs_kernel_bicgstab_p(stream, n, S, c, it == 1, it - 1, p, r, v)); /* p          */
    if (s->M) GS_CHECK(gs_solver_precond(s, p, phat));                       /* phat <- M^-1 p */
    GS_CHECK(gs_solver_spmv(s, 1.0, phat, 0.0, v));                           /* v <- A phat */
    GS_CHECK(s->vec->dot(s, n, rhat, v, &S->rv));                             /* r~^T v     */
    GS_CHECK(gs_kernel_bicgstab_s(stream, n, S, c, it - 1, r, v));          /* s <- r - a v */
    GS_CHECK(s->vec->nrm2(s, n, r, &S->rnorm));                                /* ||s||      */
    if (s->M) GS_CHECK(gs_solver_precond(s, r, shat));                       /* shat <- M^-1 s */
    GS_CHECK(gs_solver_spmv(s, 1.0, shat, 0.0, t));                           /* t <- A shat */
    GS_CHECK(s->vec->dot(s, n, t, r, &S->ts));                                 /* t^T s      */
    GS_CHECK(s->vec->dot(s, n, t, t, &S->tt));                                 /* t^T t      */
    GS_CHECK(gs_kernel_bicgstab_xr(stream, n, S, s->tol, it, it - 1, x, r, phat, shat,
                                   t));                 /* x += a phat + w shat, r <- s - w t */
    GS_CHECK(s->vec->nrm2(s, n, r, &S->rnorm));                                /* ||r||      */
    if (it % k == 0 || it >= maxit) {
      GS_CHECK(gs_solver_fetch(s));
      reason = gs_solver_check(s, it, s->h_s->rnorm, window);
    }
  }
  s->stats->reason = reason;
  return GS_SUCCESS;
}
