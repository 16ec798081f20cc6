/* solvers/cg.c: preconditioned conjugate gradients (Hestenes and Stiefel 1952; Saad, Iterative
 * Methods for Sparse Linear Systems, 2nd ed., Algorithm 9.1), for symmetric positive definite
 * A and M. Scalars stay on the device: alpha = rho / p^T A p and beta = rho' / rho are formed
 * inside the fused update kernels (vec_kernels.cu), which also refuse the step when
 * p^T A p <= 0 (indefinite A: GS_DIVERGED_INDEFINITE) instead of taking it.
 * With reliable updates (gs_solver_use_reliable, for gs_solve_refine) the same iteration runs on
 * a mixed-precision product and its residual is replaced by the true one now and then: see
 * gs_cg_replace at the end of the file. */
#include <math.h>
#include <stddef.h>

#include "core/error.h"
#include "solvers/solver_impl.h"

enum { R, P, Q, Z, NVEC }; /* work vectors; Z only with a preconditioner */

/* the two-value reduction of the table path lands in ts and tt */
_Static_assert(offsetof(gs_dscalars_t, tt) == offsetof(gs_dscalars_t, ts) + sizeof(double),
               "ts and tt are adjacent");

size_t gs_cg_work(const gs_solver_t *s, size_t *host_doubles)
{
  *host_doubles = 0;
  return s->M || s->esc.enabled ? NVEC : NVEC - 1; /* z: also for an escalation's M */
}

/* Reason to stop before the first iteration, from r0 and rho0 = r0^T M^-1 r0. */
static gs_reason_t initial_reason(gs_solver_t *s, gs_reason_t reason)
{
  double rho0 = s->h_s->rho[0];
  if (reason != GS_REASON_NONE) return reason;
  if (!isfinite(rho0)) { /* the same detail as the persistent kernel's halt */
    s->stats->detail = gs_solver_halt_detail(GS_HALT_NANINF, GS_WHAT_RHO);
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

/* What one CG iteration needs besides the solver. */
typedef struct {
  double *x, *r, *p, *q, *z;
} cg_vecs_t;

/* Memory movement per iteration, in n-vectors of doubles read + written:
 *   q = A p                     SpMV: matrix storage + 2n
 *   p^T q                       2n
 *   x += alpha p, r -= alpha q  6n (x, p, r, q read; x, r written); ||r|| in the same pass
 *   ||r||                       1n (only through the vector table; fused on one GPU)
 *   z = M^-1 r, r^T z           M^-1 + 2n   (skipped without preconditioner: rho = ||r||^2;
 *                               through the vector table r^T r and r^T z are one reduction of
 *                               2 values, so distributed CG all-reduces twice an iteration
 *                               with a preconditioner as without: p^T q, then those two)
 *   p = z + beta p              3n
 * In all on one GPU: storage + 11n without a preconditioner, storage + 13n + M^-1 with one
 * (Jacobi 3n: 16n); one more n through the vector table. The device counts the iteration and tests convergence (one thread); the host reads
 * the scalar block every k iterations (gs_solver_iterate). */
#define CG_VEC_N(pc) ((pc) ? 13.0 : 11.0)

static gs_status_t cg_iteration(gs_solver_t *s, void *user, int it)
{
  const cg_vecs_t *v = (const cg_vecs_t *)user;
  cudaStream_t stream = s->ctx->stream;
  gs_dscalars_t *S = s->d_s;
  const gs_idx_t n = s->n;
  const int c = (it - 1) & 1; /* rho of this iteration in S->rho[c], the next in c ^ 1 */
  GS_CHECK(gs_solver_spmv(s, 1.0, v->p, 0.0, v->q));                            /* q <- A p  */
  if (s->vec == &gs_vecops_cuda) { /* one GPU: the fused single-pass kernels, 3 launches */
    GS_CHECK(gs_kernel_dot(stream, n, S, s->d_red, v->p, v->q, &S->pq));         /* p^T q     */
    GS_CHECK(gs_kernel_cg_update_norm(stream, n, S, s->d_red, c, v->x, v->r, v->p,
                                      v->q));                /* x += a p, r -= a q, ||r|| */
    if (s->M) {
      GS_CHECK(gs_solver_precond(s, v->r, v->z));                               /* z <- M^-1 r */
      GS_CHECK(gs_kernel_dot(stream, n, S, s->d_red, v->r, v->z, &S->rho[c ^ 1])); /* r^T z  */
    }
    return gs_kernel_cg_direction_end(stream, n, S, c, !s->M, v->p, v->z); /* p, it, test */
  }
  /* through the vector table (its reductions may communicate) */
  GS_CHECK(s->vec->dot(s, n, v->p, v->q, &S->pq));                               /* p^T q     */
  GS_CHECK(gs_kernel_cg_update(stream, n, S, c, GS_DONE_DEVICE, v->x, v->r, v->p,
                               v->q));                                  /* x += a p, r -= a q */
  if (s->M && s->vec->dots) { /* ||r|| and r^T z in one reduction: one all-reduce, not two */
    const double *xs[2] = {v->r, v->r}, *ys[2] = {v->r, v->z};
    GS_CHECK(gs_solver_precond(s, v->r, v->z));                                 /* z <- M^-1 r */
    GS_CHECK(s->vec->dots(s, n, 2, xs, ys, &S->ts));                        /* r^T r, r^T z */
    GS_CHECK(gs_kernel_cg_norm_rho(stream, S, c ^ 1));             /* ||r||, rho <- r^T z */
  } else { /* a table without multi-dot: one reduction each */
    GS_CHECK(s->vec->nrm2(s, n, v->r, &S->rnorm));                               /* ||r||     */
    if (s->M) {
      GS_CHECK(gs_solver_precond(s, v->r, v->z));                               /* z <- M^-1 r */
      GS_CHECK(s->vec->dot(s, n, v->r, v->z, &S->rho[c ^ 1]));                   /* r^T z     */
    }
  }
  GS_CHECK(gs_kernel_cg_direction(stream, n, S, c, !s->M, GS_DONE_DEVICE, v->p,
                                  v->z));                                 /* p <- z + b p    */
  return gs_kernel_iteration_end(stream, S);                   /* it += 1, ||r|| <= tol? */
}

/* Iterations it .. it + count - 1 as one persistent kernel (s->persist.use). */
static gs_status_t cg_iterations(gs_solver_t *s, void *user, int it, int count)
{
  const cg_vecs_t *v = (const cg_vecs_t *)user;
  return gs_persist_cg(s, it, count, v->x, v->r, v->p, v->q, v->z);
}

gs_status_t gs_cg_solve(gs_solver_t *s, double *x, double *work, double *h_work)
{
  (void)h_work;
  gs_dscalars_t *S = s->d_s;
  const gs_idx_t n = s->n;
  const int window = s->opts.stagnation_window;
  cg_vecs_t v = {x, work + R * s->ld, work + P * s->ld, work + Q * s->ld, NULL};
  v.z = s->M ? work + Z * s->ld : v.r; /* no preconditioner: z is r itself */
  gs_reason_t reason = GS_REASON_NONE;
  if (gs_persist_whole(s)) { /* the start below, and its checks, in the kernel's first launch */
    s->persist.start = 1;
    GS_CHECK(gs_solver_iterate_many(s, cg_iteration, cg_iterations, &v, x, 2,
                                    CG_VEC_N(s->M != NULL), window, &reason));
    s->stats->reason = reason;
    return GS_SUCCESS;
  }

  GS_CHECK(gs_solver_residual(s, s->opts.x0_given ? x : NULL, v.r)); /* r <- b - A x0        */
  GS_CHECK(s->vec->nrm2(s, n, v.r, &S->rnorm));                       /* ||r||                */
  if (s->rel.A_res) /* reliable updates: the largest ||r|| so far is the start's (true) one */
    GS_CHECK(GS_CUDA(cudaMemcpyAsync(&S->rel_max, &S->rnorm, sizeof S->rnorm,
                                     cudaMemcpyDeviceToDevice, s->ctx->stream)));
  if (s->M) GS_CHECK(gs_solver_precond(s, v.r, v.z));               /* z <- M^-1 r          */
  GS_CHECK(s->vec->dot(s, n, v.r, v.z, &S->rho[0]));                  /* rho <- r^T z         */
  GS_CHECK(s->vec->copy(s, n, v.z, v.p));                             /* p <- z               */
  GS_CHECK(gs_solver_fetch(s));
  s->stats->rnorm0 = s->rel.last = s->h_s->rnorm;
  reason = initial_reason(s, gs_solver_check(s, 0, s->h_s->rnorm, window));
  /* Iteration 1 runs call by call (timed products for the stats); graphs from iteration 2. */
  GS_CHECK(gs_solver_iterate_many(s, cg_iteration, cg_iterations, &v, x, 2,
                                  CG_VEC_N(s->M != NULL), window, &reason));
  s->stats->reason = reason;
  return GS_SUCCESS;
}

/* ---- reliable updates ------------------------------------------------------------------------
 * Mixed-precision CG with reliable updates (Sleijpen and van der Vorst 1996, "Reliable updated
 * residuals in hybrid Bi-CG methods", Computing 56; the scheme of QUDA's mixed-precision CG,
 * Clark et al. 2010, "Solving lattice QCD systems of equations using mixed precision solvers on
 * GPUs"): ONE CG iteration sequence, cg_iteration above unchanged, whose products q = A p read
 * float matrix values (the operator of setup, a mixed product), with x, r, p, z and all sums in
 * double. The recurrence r <- r - alpha q then drifts from b - A x by (A_f - A)(x - x_j), about
 * u_f ||A|| ||x - x_j|| since the last replacement at x_j (u_f = 2^-24): some cond(A) u_f times
 * the largest ||r|| since then. Before that drift matters, the device's test (reliable_due in
 * vec_kernels.cu) halts the iteration after its x and r updates when ||r|| has fallen below delta
 * times the largest ||r|| since the last replacement, or meets tol; here, at the next check,
 *   r <- b - A x on the double operator A_res; ||r||; that maximum <- ||r||;
 *   z <- M^-1 r; rho <- r^T z;
 *   stop if ||r|| <= max(rtol ||b||, atol) (the true residual alone ends the solve);
 *   else p <- z + (rho / rho_old) p, and the iterations go on.
 * p is kept, so the Krylov space CG has built goes on (a refinement step's new solve starts
 * from nothing: 236 iterations against CG's 161 on lap27); beta comes from the replaced r, as in
 * QUDA; nothing is re-orthogonalized (QUDA also projects r out of p there; not done here). Each
 * replacement costs one double product, one M^-1, two reductions and a host round trip:
 * about log(||r0|| / tol) / log(1 / delta) of them in a solve, 10 for 1e-10 at delta 0.1.
 * The segments converge while cond(A) u_f is well below delta; where the drift dominates, the
 * true residual at each replacement exceeds the one before: after GS_RELIABLE_INCREASES such
 * replacements in a row the solve stops as stagnation (QUDA stops after max_res_increase,
 * default 1, in a row). x is then the last iterate, not the best. */
#define GS_RELIABLE_INCREASES 3
_Static_assert(GS_RELIABLE_INCREASES == 3, "gs_cg_replace's stop detail says 3");

gs_status_t gs_cg_replace(gs_solver_t *s, void *user, int window, int *next_it,
                          gs_reason_t *reason)
{
  const cg_vecs_t *v = (const cg_vecs_t *)user;
  gs_dscalars_t *S = s->d_s;
  cudaStream_t stream = s->ctx->stream;
  const gs_idx_t n = s->n;
  const int done = s->h_s->halt_done; /* the iteration that halted: x and r updated, p not */
  const int c = (done - 1) & 1;       /* its rho in S->rho[c]; the next iteration's in c ^ 1 */
  /* first the halt off (reductions of a vector table may skip their work while one stands),
   * and the device's count of the pass (the kernel-by-kernel path had not counted it) */
  GS_CHECK(gs_solver_clear_halt(s));
  s->h_s->iter = done;
  GS_CHECK(GS_CUDA(cudaMemcpyAsync(&S->iter, &s->h_s->iter, sizeof S->iter,
                                   cudaMemcpyHostToDevice, stream)));
  GS_CHECK(gs_solver_residual(s, v->x, v->r));                  /* r <- b - A x (double A)   */
  GS_CHECK(s->vec->nrm2(s, n, v->r, &S->rnorm));                /* ||r||                     */
  GS_CHECK(GS_CUDA(cudaMemcpyAsync(&S->rel_max, &S->rnorm, sizeof S->rnorm,
                                   cudaMemcpyDeviceToDevice, stream))); /* max ||r|| <- ||r|| */
  if (s->M) {
    GS_CHECK(gs_solver_precond(s, v->r, v->z));                 /* z <- M^-1 r               */
    GS_CHECK(s->vec->dot(s, n, v->r, v->z, &S->rho[c ^ 1]));    /* rho <- r^T z              */
  } /* without M, the direction kernel takes rho = ||r||^2 */
  GS_CHECK(GS_CUDA(cudaEventRecord(s->total[1], stream))); /* the solve's end, if it ends here */
  GS_CHECK(gs_solver_fetch(s));
  const double rn = s->h_s->rnorm;
  s->rel.updates++;
  s->rel.increases = rn > s->rel.last ? s->rel.increases + 1 : 0;
  s->rel.last = rn;
  *next_it = done + 1;
  *reason = gs_solver_check(s, done, rn, window); /* the monitor sees the true norm */
  if (*reason == GS_REASON_NONE && s->rel.increases >= GS_RELIABLE_INCREASES) {
    *reason = GS_DIVERGED_STAGNATION;
    s->stats->detail = "the true residual ||b - Ax|| grew at 3 reliable updates in a row: the "
                       "mixed-precision product no longer resolves the system (cond(A) 2^-24 "
                       "near delta or above)";
  } else if (*reason == GS_REASON_NONE && s->rel.updates >= s->rel.max_updates) {
    *reason = GS_DIVERGED_MAXIT;
    s->stats->detail = "reliable update limit (max_outer)";
  }
  if (*reason != GS_REASON_NONE) { /* r is b - A x of the x returned: run() need not form it */
    s->h_s->true_rnorm = rn;
    s->h_s->true_done = 1;
    return GS_SUCCESS;
  }
  /* rho[c], beta's denominator, as the halted iteration left it (rel_rho): with a cuBLAS
   * vector table the iterations launched after the halt overwrote it with their r^T z, which
   * made beta ~1 (480 iterations against 90 with Jacobi, run 110) */
  GS_CHECK(GS_CUDA(cudaMemcpyAsync(&S->rho[c], &S->rel_rho, sizeof S->rel_rho,
                                   cudaMemcpyDeviceToDevice, stream)));
  return gs_kernel_cg_direction(stream, n, S, c, !s->M, done, v->p, v->z); /* p <- z + beta p */
}
