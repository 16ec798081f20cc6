/* solvers/bicg.c: preconditioned BiConjugate Gradients (Fletcher 1976; Barrett et al.,
 * Templates for the Solution of Linear Systems, 1994, Figure 2.8, as SciPy's bicg), for general
 * square A. Beside r it iterates the shadow residual r~ (r~0 = r0) with A^T, through
 * gs_solver_apply(GS_OP_T): any backend with a transpose product serves, nothing is transposed.
 * The shadow system needs M^-T; the preconditioner must be symmetric (jacobi, ic0), which
 * solver.c checks, so that M^-T r~ is gs_precond_apply's M^-1 r~. Zero divisors r~^T M^-1 r and
 * p~^T A p stop with GS_DIVERGED_BREAKDOWN, refused by the kernels before any update. */
#include "core/error.h"
#include "solvers/solver_impl.h"

enum { R, RT, P, PT, Q, QT, Z, ZT, NVEC }; /* Z, ZT only with a preconditioner */

size_t gs_bicg_work(const gs_solver_t *s, size_t *host_doubles)
{
  *host_doubles = 0;
  return s->M ? NVEC : NVEC - 2;
}

gs_status_t gs_bicg_solve(gs_solver_t *s, double *x, double *work, double *h_work)
{
  (void)h_work;
  cudaStream_t stream = s->ctx->stream;
  gs_dscalars_t *S = s->d_s;
  const gs_idx_t n = s->n;
  const int k = s->opts.check_every, maxit = s->opts.maxit, window = s->opts.stagnation_window;
  const size_t ld = s->ld;
  double *r = work + R * ld, *rt = work + RT * ld, *p = work + P * ld, *pt = work + PT * ld;
  double *q = work + Q * ld, *qt = work + QT * ld;
  double *z = s->M ? work + Z * ld : r; /* no preconditioner: z = r, z~ = r~ */
  double *zt = s->M ? work + ZT * ld : rt;

  gs_reason_t reason;
  GS_CHECK(gs_solver_start_shadow(s, x, r, rt, window, &reason)); /* r, ||r||, r~ = r */

  /* Memory movement per iteration, in n-vectors of doubles read + written:
   *   z = M^-1 r, z~ = M^-T r~              2 M^-1 (skipped without preconditioner)
   *   rho = r~^T z                          2n
   *   p = z + beta p, p~ = z~ + beta p~     6n
   *   q = A p, q~ = A^T p~                  SpMV N + SpMV T: 2 x storage + 4n
   *   p~^T q                                2n
   *   x += a p, r -= a q, r~ -= a q~        9n
   *   ||r||                                 1n
   * In all: storage N + storage T + 24n, plus 2 M^-1 (Jacobi 2 x 3n: 30n). Host: one copy of
   * the scalar block and one stream sync every k iterations. */
  for (int it = 1; reason == GS_REASON_NONE; ++it) {
    const int c = it & 1; /* rho of this iteration in S->rho[c], the previous in c ^ 1 */
    if (s->M) {
      GS_CHECK(gs_solver_precond(s, r, z));                             /* z <- M^-1 r    */
      GS_CHECK(gs_solver_precond(s, rt, zt));                   /* z~ <- M^-T r~ = M^-1 r~ */
    }
    GS_CHECK(s->vec->dot(s, n, rt, z, &S->rho[c]));                     /* rho <- r~^T z  */
    GS_CHECK(gs_kernel_bicg_p(stream, n, S, c, it == 1, it - 1, p, pt, z, zt)); /* p, p~ */
    GS_CHECK(gs_solver_apply(s, GS_OP_N, 1.0, p, 0.0, q));              /* q <- A p       */
    GS_CHECK(gs_solver_apply(s, GS_OP_T, 1.0, pt, 0.0, qt));            /* q~ <- A^T p~   */
    GS_CHECK(s->vec->dot(s, n, pt, q, &S->pq));                         /* p~^T q         */
    GS_CHECK(gs_kernel_bicg_update(stream, n, S, c, it - 1, x, r, rt, p, q,
                                   qt));                 /* x += a p, r -= a q, r~ -= a q~ */
    GS_CHECK(s->vec->nrm2(s, n, r, &S->rnorm));                         /* ||r||          */
    if (it % k == 0 || it >= maxit) {
      GS_CHECK(gs_solver_fetch(s));
      reason = gs_solver_check(s, it, s->h_s->rnorm, window);
    }
  }
  s->stats->reason = reason;
  return GS_SUCCESS;
}
