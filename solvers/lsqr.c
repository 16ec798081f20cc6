/* solvers/lsqr.c: LSQR (Paige and Saunders, ACM TOMS 8(1), 1982: "LSQR: An algorithm for
 * sparse linear equations and sparse least squares"), with damp = 0, for any m x n A: x
 * minimizes ||b - Ax|| (the minimum-norm minimizer from x0 = 0 when A is rank-deficient or
 * wide). Golub-Kahan bidiagonalization with products by A and A^T (gs_solver_apply with
 * GS_OP_N and GS_OP_T: any backend with a transpose product serves), and the QR factorization
 * of the bidiagonal matrix by plane rotations, which updates x and w.
 *
 * Stopping tests, those of the paper and SciPy's lsqr, with its atol = btol = opts.rtol and no
 * condition limit (conlim = 0), evaluated on the device every iteration by lsqr_step_kernel
 * from the paper's estimates (||r|| = |phibar|, ||A^T r|| = alfa |tau|, ||A||_F, cond(A),
 * ||x||):
 *   test 1   ||r|| <= rtol ||b|| + rtol ||A|| ||x||      a compatible system     istop 1
 *   test 2   ||A^T r|| <= rtol ||A|| ||r||               a least-squares solution istop 2
 *   the same with eps for rtol                                                   istop 4, 5
 *   1 / cond(A) <= eps                                   numerically singular   istop 6
 *   ||r|| <= opts.atol (ours; the host also stops on ||A^T r|| <= opts.atol)
 * A test met halts GS_HALT_LSQR with the istop in halt_what, after that iteration's x update;
 * the host maps it to a stop reason (gs_lsqr_reason). The monitored norm is ||A^T r||. */
#include <float.h>
#include <math.h>

#include "core/error.h"
#include "solvers/solver_impl.h"

enum { U, T, V, W, NVEC }; /* U: m entries; V, W: n; T either (A V, then A^T U) */

size_t gs_lsqr_work(const gs_solver_t *s, size_t *host_doubles)
{
  (void)s;
  *host_doubles = 0;
  return NVEC;
}

gs_reason_t gs_lsqr_reason(int istop)
{
  switch (istop) {
  case GS_LSQR_ISTOP_TEST1:
  case GS_LSQR_ISTOP_TEST1_EPS: return GS_CONVERGED_RTOL;
  case GS_LSQR_ISTOP_TEST2:
  case GS_LSQR_ISTOP_TEST2_EPS: return GS_CONVERGED_RTOL_NORMAL;
  case GS_LSQR_ISTOP_ATOL: return GS_CONVERGED_ATOL;
  case GS_LSQR_ISTOP_COND_EPS: return GS_DIVERGED_BREAKDOWN;
  default: return GS_REASON_NONE;
  }
}

const char *gs_lsqr_detail(int istop)
{
  switch (istop) {
  case GS_LSQR_ISTOP_TEST1: return "LSQR test 1: ||r|| <= rtol (||b|| + ||A|| ||x||), a "
                                   "compatible system";
  case GS_LSQR_ISTOP_TEST2: return "LSQR test 2: ||A^T r|| <= rtol ||A|| ||r||, a least-squares "
                                   "solution";
  case GS_LSQR_ISTOP_TEST1_EPS: return "LSQR: Ax - b is small enough for this machine";
  case GS_LSQR_ISTOP_TEST2_EPS: return "LSQR: the least-squares solution is good enough for "
                                       "this machine";
  case GS_LSQR_ISTOP_COND_EPS: return "LSQR: the estimate of cond(A) is too large for this "
                                      "machine (A is numerically rank-deficient)";
  case GS_LSQR_ISTOP_ATOL: return "||r|| <= atol";
  default: return "";
  }
}

int gs_lsqr_accept(const gs_solver_t *s, double slack)
{
  const gs_dscalars_t *h = s->h_s;
  const double rn = h->rnorm, arn = h->arnorm, xn = h->xnorm, an = h->ls.anorm;
  const double tol = fmax(s->opts.rtol, DBL_EPSILON), atol = s->opts.atol;
  if (rn <= slack * (tol * s->bnorm + tol * an * xn)) return 1; /* test 1 */
  if (arn <= slack * tol * an * rn) return 1;                    /* test 2 */
  return atol > 0.0 && (rn <= slack * atol || arn <= slack * atol);
}

gs_status_t gs_lsqr_solve(gs_solver_t *s, double *x, double *work, double *h_work)
{
  (void)h_work;
  cudaStream_t stream = s->ctx->stream;
  gs_dscalars_t *S = s->d_s;
  const gs_idx_t m = s->m, n = s->n;
  const int k = s->opts.check_every, maxit = s->opts.maxit;
  const size_t ld = s->ld;
  double *u = work + U * ld, *t = work + T * ld, *v = work + V * ld, *w = work + W * ld;
  /* the host's own test is ||A^T r|| <= atol; LSQR's tests run in lsqr_step_kernel */
  s->tol = s->opts.atol;
  s->tol_rel = 0.0;

  GS_CHECK(gs_solver_residual(s, s->opts.x0_given ? x : NULL, u)); /* beta u <- b - A x0   */
  GS_CHECK(s->vec->nrm2(s, m, u, &S->ls.beta));                     /* beta                 */
  GS_CHECK(gs_solver_apply(s, GS_OP_T, 1.0, u, 0.0, t));            /* t <- A^T (beta u)    */
  GS_CHECK(gs_kernel_lsqr_init_v(stream, n, S, v, t));              /* alfa v <- A^T u      */
  GS_CHECK(s->vec->nrm2(s, n, v, &S->ls.alfa));                     /* alfa                 */
  GS_CHECK(gs_kernel_lsqr_init_w(stream, n, S, w, v));              /* w <- v, the rotation */
  GS_CHECK(gs_solver_fetch(s));
  s->stats->rnorm0 = s->h_s->ls.beta;
  /* ||A^T r0|| = alfa beta = 0: x0 solves it (beta = 0) or is a least-squares solution */
  gs_reason_t reason = gs_solver_check(s, 0, s->h_s->rnorm, 0);
  if (reason == GS_CONVERGED_RTOL_NORMAL && s->h_s->ls.beta == 0.0) reason = GS_CONVERGED_RTOL;

  /* Memory movement per iteration, in vectors of doubles read + written (m of A's rows, n of
   * its columns):
   *   t = A V                           SpMV N: storage + n + m
   *   U = t / alfa - (alfa / beta) U    3m
   *   ||U||                             1m
   *   t = A^T U                         SpMV T: storage + m + n
   *   V = t / beta - (beta / alfa) V    3n
   *   ||V||, ||w||                      2n
   *   x += t1 w, w = V / alfa + t2 w    5n
   * In all: storage N + storage T + 12n + 6m, and a one-thread kernel for the scalars. Host:
   * one copy of the scalar block and one stream sync every k iterations. */
  for (int it = 1; reason == GS_REASON_NONE; ++it) {
    GS_CHECK(gs_solver_apply(s, GS_OP_N, 1.0, v, 0.0, t));              /* t <- A V       */
    GS_CHECK(gs_kernel_lsqr_u(stream, m, S, u, t));             /* beta u <- A v - alfa u */
    GS_CHECK(s->vec->nrm2(s, m, u, &S->ls.beta_new));                   /* beta'          */
    GS_CHECK(gs_solver_apply(s, GS_OP_T, 1.0, u, 0.0, t));              /* t <- A^T U     */
    GS_CHECK(gs_kernel_lsqr_v(stream, n, S, v, t));           /* alfa v <- A^T u - beta v */
    GS_CHECK(s->vec->nrm2(s, n, v, &S->ls.alfa_new));                   /* alfa'          */
    GS_CHECK(s->vec->nrm2(s, n, w, &S->ls.wnorm));                      /* ||w||          */
    GS_CHECK(gs_kernel_lsqr_step(stream, S, s->opts.rtol, s->opts.atol, it)); /* rotation */
    GS_CHECK(gs_kernel_lsqr_xw(stream, n, S, it, x, w, v));   /* x += t1 w, w = v + t2 w */
    if (it % k == 0 || it >= maxit) {
      GS_CHECK(gs_solver_fetch(s));
      reason = gs_solver_check(s, it, s->h_s->rnorm, 0);
    }
  }
  s->stats->reason = reason;
  return GS_SUCCESS;
}
