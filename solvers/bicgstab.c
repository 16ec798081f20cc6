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

typedef struct {
  double *x, *r, *rhat, *p, *v, *t, *phat, *shat;
} bicgstab_vecs_t;

/* Memory movement per iteration, in n-vectors of doubles read + written (vector table / one GPU):
 *   rho = r~^T r                       2n / 0 (in the last pass of the previous iteration)
 *   p = r + beta (p - omega v)         4n
 *   v = A M^-1 p                       SpMV: storage + 2n, M^-1
 *   r~^T v                             2n
 *   s = r - alpha v (in r), ||s||      3n + 1n / 3n (one pass)
 *   t = A M^-1 s                       SpMV: storage + 2n, M^-1
 *   t^T s, t^T t                       4n / 2n (one pass)
 *   x += alpha phat + omega shat,
 *   r = s - omega t                    7n
 *   ||r||, next r~^T r                 1n / 1n (r~, in the same pass as x and r)
 * In all: 2 x storage + 24n through the vector table, 19n on one GPU (+ 4n with separate phat,
 * shat), plus 2 M^-1 (Jacobi 2 x 3n). The half-step and full-step convergence tests run on the
 * device; the host reads the scalar block every k iterations (gs_solver_iterate). */
#define BICGSTAB_VEC_N(pc) ((pc) ? 23.0 : 19.0)

/* The reductions of one iteration: the fused single-launch kernels on one GPU, else the vector
 * table's (which may communicate). */
static gs_status_t red_dot(gs_solver_t *s, const double *x, const double *y, double *d_out)
{
  if (s->vec == &gs_vecops_cuda)
    return gs_kernel_dot(s->ctx->stream, s->n, s->d_s, s->d_red, x, y, d_out);
  return s->vec->dot(s, s->n, x, y, d_out);
}

static gs_status_t red_nrm2(gs_solver_t *s, const double *x, double *d_out)
{
  if (s->vec == &gs_vecops_cuda)
    return gs_kernel_nrm2(s->ctx->stream, s->n, s->d_s, s->d_red, x, d_out);
  return s->vec->nrm2(s, s->n, x, d_out);
}

/* One GPU: 7 launches besides the products and M^-1 (the plain path's 12): rho comes from the
 * previous iteration's last kernel (iteration 1, never replayed from a graph, computes it), the
 * half step's update carries ||s||, and the last kernel does x, r, ||r||, the next rho, the half-
 * step flag, the count and the test. */
static gs_status_t bicgstab_iteration_fused(gs_solver_t *s, const bicgstab_vecs_t *w, int it)
{
  cudaStream_t stream = s->ctx->stream;
  gs_dscalars_t *S = s->d_s;
  const gs_idx_t n = s->n;
  const int c = it & 1;
  if (it == 1) GS_CHECK(red_dot(s, w->rhat, w->r, &S->rho[c]));               /* r~^T r     */
  GS_CHECK(gs_kernel_bicgstab_p(stream, n, S, c, it == 1, GS_DONE_DEVICE, w->p, w->r,
                                w->v));                                          /* p          */
  if (s->M) GS_CHECK(gs_solver_precond(s, w->p, w->phat));                 /* phat <- M^-1 p */
  GS_CHECK(gs_solver_spmv(s, 1.0, w->phat, 0.0, w->v));                       /* v <- A phat */
  GS_CHECK(red_dot(s, w->rhat, w->v, &S->rv));                                /* r~^T v     */
  GS_CHECK(gs_kernel_bicgstab_s_norm(stream, n, S, s->d_red, c, w->r, w->v)); /* s, ||s||   */
  if (s->M) GS_CHECK(gs_solver_precond(s, w->r, w->shat));                 /* shat <- M^-1 s */
  GS_CHECK(gs_solver_spmv(s, 1.0, w->shat, 0.0, w->t));                       /* t <- A shat */
  GS_CHECK(gs_kernel_dot2(stream, n, S, s->d_red, w->t, w->r, &S->ts, &S->tt)); /* ts, tt    */
  return gs_kernel_bicgstab_xr_end(stream, n, S, s->d_red, c ^ 1, w->x, w->r, w->phat,
                                   w->shat, w->t, w->rhat); /* x, r, ||r||, next rho, test */
}

static gs_status_t bicgstab_iteration(gs_solver_t *s, void *user, int it)
{
  const bicgstab_vecs_t *w = (const bicgstab_vecs_t *)user;
  if (s->vec == &gs_vecops_cuda) return bicgstab_iteration_fused(s, w, it);
  /* through the vector table (its reductions may communicate) */
  cudaStream_t stream = s->ctx->stream;
  gs_dscalars_t *S = s->d_s;
  const gs_idx_t n = s->n;
  const int c = it & 1; /* rho of this iteration in S->rho[c], the previous in c ^ 1 */
  GS_CHECK(red_dot(s, w->rhat, w->r, &S->rho[c]));                            /* r~^T r     */
  GS_CHECK(gs_kernel_bicgstab_p(stream, n, S, c, it == 1, GS_DONE_DEVICE, w->p, w->r,
                                w->v));                                          /* p          */
  if (s->M) GS_CHECK(gs_solver_precond(s, w->p, w->phat));                 /* phat <- M^-1 p */
  GS_CHECK(gs_solver_spmv(s, 1.0, w->phat, 0.0, w->v));                       /* v <- A phat */
  GS_CHECK(red_dot(s, w->rhat, w->v, &S->rv));                                /* r~^T v     */
  GS_CHECK(gs_kernel_bicgstab_s(stream, n, S, c, GS_DONE_DEVICE, w->r, w->v)); /* s <- r - a v */
  GS_CHECK(red_nrm2(s, w->r, &S->rnorm));                                      /* ||s||      */
  if (s->M) GS_CHECK(gs_solver_precond(s, w->r, w->shat));                 /* shat <- M^-1 s */
  GS_CHECK(gs_solver_spmv(s, 1.0, w->shat, 0.0, w->t));                       /* t <- A shat */
  GS_CHECK(s->vec->dot(s, n, w->t, w->r, &S->ts));                             /* t^T s      */
  GS_CHECK(s->vec->dot(s, n, w->t, w->t, &S->tt));                             /* t^T t      */
  GS_CHECK(gs_kernel_bicgstab_xr(stream, n, S, GS_DONE_DEVICE, w->x, w->r, w->phat, w->shat,
                                 w->t));                /* x += a phat + w shat, r <- s - w t */
  GS_CHECK(red_nrm2(s, w->r, &S->rnorm));                                      /* ||r||      */
  return gs_kernel_iteration_end(stream, S);                   /* it += 1, ||r|| <= tol? */
}

/* Iterations it .. it + count - 1 as one persistent kernel (s->persist.use); iteration 1's rho
 * first, as in the fused path. */
static gs_status_t bicgstab_iterations(gs_solver_t *s, void *user, int it, int count)
{
  const bicgstab_vecs_t *w = (const bicgstab_vecs_t *)user;
  if (it == 1 && !gs_persist_whole(s))                  /* else the kernel's start forms it */
    GS_CHECK(red_dot(s, w->rhat, w->r, &s->d_s->rho[it & 1]));                  /* r~^T r     */
  return gs_persist_bicgstab(s, it, count, w->x, w->r, w->rhat, w->p, w->v, w->t, w->phat,
                             w->shat);
}

gs_status_t gs_bicgstab_solve(gs_solver_t *s, double *x, double *work, double *h_work)
{
  (void)h_work;
  const size_t ld = s->ld;
  const int window = s->opts.stagnation_window;
  bicgstab_vecs_t w = {x, work + R * ld, work + RHAT * ld, work + P * ld, work + V * ld,
                       work + T * ld, NULL, NULL};
  w.phat = s->M ? work + PHAT * ld : w.p; /* no preconditioner: phat = p, shat = s = r */
  w.shat = s->M ? work + SHAT * ld : w.r;

  gs_reason_t reason = GS_REASON_NONE;
  if (gs_persist_whole(s)) s->persist.start = 1; /* the start below in the kernel's first launch */
  else GS_CHECK(gs_solver_start_shadow(s, x, w.r, w.rhat, window, &reason)); /* r, ||r||, r~ */
  /* Iteration 1 (p = r) runs call by call; graphs from iteration 2. */
  GS_CHECK(gs_solver_iterate_many(s, bicgstab_iteration, bicgstab_iterations, &w, x, 2,
                                  BICGSTAB_VEC_N(s->M != NULL), window, &reason));
  s->stats->reason = reason;
  return GS_SUCCESS;
}
