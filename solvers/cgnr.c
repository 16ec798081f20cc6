/* solvers/cgnr.c: CG on the normal equations A^T A x = A^T b without forming A^T A, for any
 * m x n A (least squares: x minimizes ||b - Ax||; for a square nonsingular A, A x = b). The
 * iteration is CGLS (Hestenes and Stiefel 1952; Saad, Iterative Methods for Sparse Linear
 * Systems, 2nd ed., Algorithm 8.4 "CGNR"): the residual r = b - Ax (m entries) is the
 * recurrence and z = A^T r is computed from it, which keeps the normal-equations residual
 * closer to A^T (b - Ax) than CG on A^T A would. Products with A^T go through
 * gs_solver_apply(GS_OP_T): any backend with a transpose product serves.
 *
 * The monitored norm is ||z|| = ||A^T r||, and the test CG's on the normal equations:
 * ||A^T r|| <= max(rtol ||A^T b||, atol) (solver.c computes ||A^T b||), so that counts compare
 * with SciPy's cg on A^T A. ||r|| itself need not go to 0 (an inconsistent system); it is
 * reported as the true residual. A p = 0 with p != 0 (possible only by rounding: p lies in the
 * range of A^T) stops with GS_DIVERGED_BREAKDOWN. No preconditioner (solver.c refuses one). */
#include "core/error.h"
#include "solvers/solver_impl.h"

enum { R, Z, P, W, NVEC }; /* R, W: m entries; Z, P: n entries */

size_t gs_cgnr_work(const gs_solver_t *s, size_t *host_doubles)
{
  (void)s;
  *host_doubles = 0;
  return NVEC;
}

gs_status_t gs_cgnr_solve(gs_solver_t *s, double *x, double *work, double *h_work)
{
  (void)h_work;
  cudaStream_t stream = s->ctx->stream;
  gs_dscalars_t *S = s->d_s;
  const gs_idx_t m = s->m, n = s->n;
  const int k = s->opts.check_every, maxit = s->opts.maxit, window = s->opts.stagnation_window;
  const size_t ld = s->ld;
  double *r = work + R * ld, *z = work + Z * ld, *p = work + P * ld, *w = work + W * ld;

  GS_CHECK(gs_solver_residual(s, s->opts.x0_given ? x : NULL, r)); /* r <- b - A x0        */
  GS_CHECK(s->vec->nrm2(s, m, r, &S->res));                         /* ||r0||               */
  GS_CHECK(gs_solver_apply(s, GS_OP_T, 1.0, r, 0.0, z));            /* z <- A^T r           */
  GS_CHECK(s->vec->nrm2(s, n, z, &S->rnorm));                       /* ||z||                */
  GS_CHECK(s->vec->dot(s, n, z, z, &S->rho[0]));                    /* rho <- z^T z         */
  GS_CHECK(s->vec->copy(s, n, z, p));                               /* p <- z               */
  GS_CHECK(gs_solver_fetch(s));
  s->stats->rnorm0 = s->h_s->res;
  gs_reason_t reason = gs_solver_check(s, 0, s->h_s->rnorm, window);

  /* Memory movement per iteration, in vectors of doubles read + written (m of A's rows, n of
   * its columns):
   *   w = A p                          SpMV N: storage + n + m
   *   w^T w                            1m
   *   x += alpha p, r -= alpha w       3n + 3m
   *   z = A^T r                        SpMV T: storage + m + n
   *   ||z||                            1n
   *   p = z + beta p                   3n
   * In all: storage N + storage T + 9n + 6m. Host: one copy of the scalar block and one stream
   * sync every k iterations. */
  for (int it = 1; reason == GS_REASON_NONE; ++it) {
    const int c = (it - 1) & 1; /* rho of this iteration in S->rho[c], the next in c ^ 1 */
    GS_CHECK(gs_solver_apply(s, GS_OP_N, 1.0, p, 0.0, w));              /* w <- A p       */
    GS_CHECK(s->vec->dot(s, m, w, w, &S->pq));                          /* ||A p||^2      */
    GS_CHECK(gs_kernel_cgnr_update(stream, n, m, S, c, it - 1, x, r, p,
                                   w));                        /* x += a p, r -= a A p */
    GS_CHECK(gs_solver_apply(s, GS_OP_T, 1.0, r, 0.0, z));              /* z <- A^T r     */
    GS_CHECK(s->vec->nrm2(s, n, z, &S->rnorm));                         /* ||A^T r||      */
    GS_CHECK(gs_kernel_cg_direction(stream, n, S, c, 1, it, p, z)); /* p <- z + beta p */
    if (it % k == 0 || it >= maxit) {
      GS_CHECK(gs_solver_fetch(s));
      reason = gs_solver_check(s, it, s->h_s->rnorm, window);
    }
  }
  s->stats->reason = reason;
  return GS_SUCCESS;
}
