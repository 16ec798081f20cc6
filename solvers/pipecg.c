/* solvers/pipecg.c: pipelined preconditioned conjugate gradients (Ghysels and Vanroose, "Hiding
 * global synchronization latency in the preconditioned Conjugate Gradient algorithm", Parallel
 * Computing 40, 2014, Algorithm 4), for symmetric positive definite A and M. In exact
 * arithmetic it computes CG's iterates; it carries A p, M^-1 A p and A M^-1 A p as recurrences
 * (s, q, z) besides u = M^-1 r and w = A u, so that the iteration's dot products r^T u, w^T u
 * (and ||r||^2) are one reduction, taken in the same pass as the vector updates, and nothing
 * waits on a reduction but the one-thread scalar step: with several GPUs, one all-reduce of
 * three values per iteration (and those of the drift test below), which can overlap the next
 * M^-1 and A product (the step needs the sum, the product does not).
 *
 * Drift and its replacement. The recurrences for s, q, z, u, w accumulate rounding that CG's
 * products do not, amplified by the step coefficients (Cools, Yetkin, Agullo, Giraud and
 * Vanroose, "Analyzing the effect of local rounding error propagation on the maximal attainable
 * accuracy of the pipelined Conjugate Gradient method", SIAM J. Matrix Anal. Appl. 39, 2018):
 * once s is no longer A p to a few digits, the step lengths are no longer CG's and the
 * iteration stalls (msc04515 without a preconditioner, in a NumPy model of this file: 4,535 to
 * 17,748 iterations depending on the summation order of the dot products, CG 4,470). The step
 * kernel keeps Cools et al.'s running bounds on the gaps ||A p - s||, ||A u - w||, ||A q - z||
 * (pipecg_kernels.cu's drift_due), from norms the iteration's one reduction adds; when a bound
 * exceeds GS_PIPECG_DRIFT_TOL of ||s|| or ||w|| it halts the iteration with a request, and here,
 * at the next check, the auxiliary vectors are recomputed by products from r and p (replace
 * below: u = M^-1 r, w = A u, s = A p, q = M^-1 s, z = A q), the bounds reset, and the
 * iterations go on with x, r and p kept (msc04515: 4,538 to 4,551 iterations, two replacements,
 * under each of nine summation orders modelled). Unlike Cools et al.'s Algorithm (and van der
 * Vorst and Ye's for CG), r is not replaced by b - Ax: the recurrence residual stays CG's, whose
 * own distance from b - Ax the end-of-solve check already guards (solver.c), and in the model
 * replacing it too at the same points costs iterations (msc04515 6,594 to 9,335; 494_bus 1,485
 * to 1,552 against 1,363 to 1,382). The criterion is not Cools et al.'s either (a residual gap
 * crossing sqrt(eps) ||r||): that one fires near the tolerance on every system, well-conditioned
 * ones included, where nothing needs repair. Here a Laplacian of the tests keeps its bounds
 * below 1e-5 of the vectors down to rtol 1e-8, and its solve runs as before, one product and one
 * M^-1 an iteration.
 * Cost of the test: no vector traffic on one GPU (the update pass already reads every vector it
 * takes a norm of); its reduction carries 5 values instead of 2 (9 instead of 3 with M^-1), and
 * the kernel holds more registers (96 instead of 64 with M^-1). Through a vector table, one more
 * multi-dot of 3 vectors an iteration (two with M^-1): one more all-reduce on several GPUs. A
 * replacement costs 3 products, 2 M^-1 (none without M), one reduction and a host round trip;
 * segments between two are at least GS_PIPECG_SEGMENT_MIN iterations long. Replacements are not
 * restarts (stats.restarts does not count them); they show in spmv_count.
 *
 * Breakdowns. p^T A p = delta - beta gamma / alpha_old is a difference that cancels, so a
 * scalar the recurrences made unusable (p^T A p <= 0, r^T M^-1 r <= 0) after the pass has
 * iterated restarts the method from x with the true residual b - Ax, at most GS_PIPECG_RESTARTS
 * times, and only while the pass that broke down reduced ||b - Ax|| (an indefinite A breaks
 * down again without progress, and then stops with the breakdown's reason, as CG would). At the
 * start of a pass every scalar is a direct dot product (delta = u^T A u), so a breakdown there
 * is final. "Converged" is gs_solve's promise on the recomputed true residual (solver.c
 * restarts from it when the recurrence residual met the tolerance and b - Ax did not).
 * nos7 (cond ~ 4e9) stays out of reach: rtol 1e-8 is below its attainable accuracy
 * (eps ||A|| ||x|| ~ 2.5e-7 ||b|| for b = A 1), where CG converges in its recurrence residual
 * only, and pipelined CG's recurrences, replaced or not, do not follow CG's there (without a
 * preconditioner they break down; with Jacobi 173 to 359 iterations in the model, CG 99): use
 * cg there. */
#include <math.h>

#include "core/error.h"
#include "solvers/pipecg_kernels.h"
#include "solvers/solver_impl.h"

/* Restarts from the true residual after a breakdown of the recurrences, per call. */
#define GS_PIPECG_RESTARTS 5

/* work vectors; the last three only with a preconditioner; then the device scratch */
enum { R, W, NV, Z, SV, P, U, Q, MV, NVEC };

/* Vectors of ld doubles before the scratch, and the scratch's count of them. */
static size_t vectors(const gs_solver_t *s) { return s->M ? NVEC : NVEC - 3; }
static size_t aux_vectors(const gs_solver_t *s)
{
  const size_t bytes = s->ld * sizeof(double);
  return (sizeof(gs_pipecg_aux_t) + bytes - 1) / bytes;
}

size_t gs_pipecg_work(const gs_solver_t *s, size_t *host_doubles)
{
  *host_doubles = 0;
  return vectors(s) + aux_vectors(s);
}

/* What an iteration needs besides the solver: the vectors and the scratch (device). */
typedef struct {
  gs_pipecg_vecs_t v;
  gs_pipecg_aux_t *X;
} pipe_t;

/* d_out[j] = x[j]^T y[j], j < k <= GS_RED_SLOTS, through the vector table: one reduction where
 * it has a multi-dot (one all-reduce on several GPUs), else k. */
static gs_status_t table_dots(gs_solver_t *s, int k, const double *const *x,
                              const double *const *y, double *d_out)
{
  if (s->vec->dots) return s->vec->dots(s, s->n, k, x, y, d_out);
  for (int j = 0; j < k; ++j) GS_CHECK(s->vec->dot(s, s->n, x[j], y[j], d_out + j));
  return GS_SUCCESS;
}

/* gamma = r^T u, delta = w^T u, rr = r^T r (adjacent in the scalar block). */
static gs_status_t reduce3(gs_solver_t *s, const gs_pipecg_vecs_t *v)
{
  const double *x[3] = {v->r, v->w, v->r}, *y[3] = {v->u, v->u, v->r};
  return table_dots(s, 3, x, y, &s->d_s->pipe.gamma);
}

/* The squared norms of the drift test (gs_pipecg_drift_t.sq) through the vector table: w, p, s,
 * and with a preconditioner u, q, m (without, u is r, q is s, m the previous w). */
static gs_status_t reduce_norms(gs_solver_t *s, const pipe_t *t)
{
  double *sq = t->X->d.sq;
  const double *a[3] = {t->v.w, t->v.p, t->v.s};
  GS_CHECK(table_dots(s, 3, a, a, sq + GS_PIPECG_WW)); /* WW, PP, SS adjacent */
  if (!s->M) return GS_SUCCESS;
  const double *b[3] = {t->v.u, t->v.q, t->v.m};
  return table_dots(s, 3, b, b, sq + GS_PIPECG_UU); /* UU, QQ, MM adjacent */
}

/* Memory movement per iteration, in n-vectors of doubles read + written:
 *   m = M^-1 w                       M^-1 (skipped without a preconditioner: m = w)
 *   nv = A m                         SpMV: storage + 2n
 *   the update, one pass:            with M: reads nv m w u r z q s p x (10n), writes z q s p x
 *     z q s p x r u w, gamma delta   r u w (8n): 18n; without: reads nv w r z s p x (7n),
 *     rr, the drift norms            writes z s p x r w (6n): 13n
 *   the scalar step                  one thread, no vector
 * In all on one GPU: storage + 15n without a preconditioner (CG: storage + 13n), storage + 20n
 * + M^-1 with one (CG: 15n + M^-1): pipelined CG pays 2n to 5n more traffic for one reduction
 * phase instead of two (three with M), in 3 launches (4 with M) against CG's 4 (5 with M).
 * Through a vector table without the fused reduction: the update alone, then gamma, delta, rr
 * in one multi-dot pass (3n with M, 2n without) or three dots (5n), and the drift norms (3n,
 * 6n with M). VEC_N is the vector kernels' share (SpMV and M^-1 excluded), for the stats. The
 * device counts the iteration and tests convergence; the host reads the scalar block every k
 * iterations (gs_solver_iterate). */
#define PIPECG_VEC_N(pc) ((pc) ? 18.0 : 13.0)

static gs_status_t pipecg_iteration(gs_solver_t *s, void *user, int it)
{
  const pipe_t *t = (const pipe_t *)user;
  const gs_pipecg_vecs_t *v = &t->v;
  cudaStream_t stream = s->ctx->stream;
  gs_dscalars_t *S = s->d_s;
  const int pc = s->M != NULL;
  (void)it; /* no scalar slot alternates: gamma_old is kept by the step kernel */
  if (pc) GS_CHECK(gs_solver_precond(s, v->w, v->m));                         /* m <- M^-1 w */
  GS_CHECK(gs_solver_spmv(s, 1.0, v->m, 0.0, v->nv));                          /* n <- A m    */
  if (s->vec == &gs_vecops_cuda) { /* one GPU: the update and its reduction in one pass */
    GS_CHECK(gs_kernel_pipecg_update(stream, s->n, S, t->X, pc, v));
  } else { /* through the vector table (its reductions may communicate) */
    GS_CHECK(gs_kernel_pipecg_update(stream, s->n, S, NULL, pc, v));
    GS_CHECK(reduce3(s, v));                                            /* gamma, delta, rr */
    GS_CHECK(reduce_norms(s, t));                                       /* the drift norms */
  }
  /* z q s p x r u w updated, gamma delta rr of the new vectors */
  return gs_kernel_pipecg_step(stream, S, t->X, pc, GS_PIPECG_STEP_ITERATION); /* it += 1,
                                          ||r|| <= tol?, drift (a replacement?); alpha, beta */
}

/* The start of a pass: r = b - A x, u = M^-1 r, w = A u, the recurrences zeroed (the first
 * update takes beta = 0, and 0 times uninitialized memory could be NaN), gamma, delta, rr and
 * the first step; x = 0 when use_x is 0. */
static gs_status_t start_pass(gs_solver_t *s, const pipe_t *t, int use_x)
{
  const gs_pipecg_vecs_t *v = &t->v;
  const gs_idx_t n = s->n;
  GS_CHECK(gs_solver_residual(s, use_x ? v->x : NULL, v->r));                  /* r <- b - A x */
  if (s->M) GS_CHECK(gs_solver_precond(s, v->r, v->u));                        /* u <- M^-1 r */
  GS_CHECK(gs_solver_spmv(s, 1.0, v->u, 0.0, v->w));                           /* w <- A u     */
  GS_CHECK(s->vec->zero(s, n, v->z));
  GS_CHECK(s->vec->zero(s, n, v->s));
  GS_CHECK(s->vec->zero(s, n, v->p));
  if (s->M) GS_CHECK(s->vec->zero(s, n, v->q));
  GS_CHECK(reduce3(s, v));                                              /* gamma, delta, rr */
  return gs_kernel_pipecg_step(s->ctx->stream, s->d_s, t->X, s->M != NULL,
                               GS_PIPECG_STEP_START);             /* ||r||, alpha = gamma/delta */
}

/* The replacement the drift test asked for (the halt cleared): the auxiliary vectors from r and
 * p by products, gamma, delta, rr of them, and the next step from those. x, r and p stay. */
static gs_status_t replace(gs_solver_t *s, const pipe_t *t)
{
  const gs_pipecg_vecs_t *v = &t->v;
  if (s->M) GS_CHECK(gs_solver_precond(s, v->r, v->u));                        /* u <- M^-1 r */
  GS_CHECK(gs_solver_spmv(s, 1.0, v->u, 0.0, v->w));                           /* w <- A u    */
  GS_CHECK(gs_solver_spmv(s, 1.0, v->p, 0.0, v->s));                           /* s <- A p    */
  if (s->M) GS_CHECK(gs_solver_precond(s, v->s, v->q));                        /* q <- M^-1 s */
  GS_CHECK(gs_solver_spmv(s, 1.0, v->q, 0.0, v->z));                           /* z <- A q    */
  GS_CHECK(reduce3(s, v));                                              /* gamma, delta, rr */
  return gs_kernel_pipecg_step(s->ctx->stream, s->d_s, t->X, s->M != NULL,
                               GS_PIPECG_STEP_REPLACED);
}

/* Whether the check that ended gs_solver_iterate found the drift test's request. */
static int replacement_asked(const gs_solver_t *s, gs_reason_t reason)
{
  return reason == GS_DIVERGED_BREAKDOWN && s->h_s->halt == GS_HALT_BREAKDOWN &&
         s->h_s->halt_what == GS_PIPECG_WHAT_REPLACE;
}

/* Whether the reason that ended a pass is a breakdown of the recurrences that a restart from
 * the true residual may cure (not NaN, not the iteration limit, not the monitor). */
static int restartable(gs_reason_t r)
{
  return r == GS_DIVERGED_INDEFINITE || r == GS_DIVERGED_BREAKDOWN;
}

/* The iterations since it_base are done: the next ones count from there, within maxit. */
static gs_status_t next_segment(gs_solver_t *s)
{
  s->opts.maxit -= s->stats->iterations - s->it_base;
  s->it_base = s->stats->iterations;
  return gs_solver_clear_halt(s);
}

gs_status_t gs_pipecg_solve(gs_solver_t *s, double *x, double *work, double *h_work)
{
  (void)h_work;
  const size_t ld = s->ld;
  const int window = s->opts.stagnation_window;
  pipe_t t = {.v = {.x = x, .r = work + R * ld, .w = work + W * ld, .nv = work + NV * ld,
                    .z = work + Z * ld, .s = work + SV * ld, .p = work + P * ld},
              .X = (gs_pipecg_aux_t *)(work + vectors(s) * ld)};
  gs_pipecg_vecs_t *v = &t.v;
  if (s->M) {
    v->u = work + U * ld;
    v->q = work + Q * ld;
    v->m = work + MV * ld;
  } else { /* M = I: u is r, m is w, q is s */
    v->u = v->r;
    v->m = v->w;
    v->q = v->s;
  }
  /* the reduction's counter at 0, the drift state fresh (the estimate of ||A|| included) */
  GS_CHECK(GS_CUDA(cudaMemsetAsync(t.X, 0, sizeof *t.X, s->ctx->stream)));
  gs_solve_stats_t *st = s->stats;
  gs_reason_t broke = GS_REASON_NONE; /* the breakdown that ended the last pass */
  const char *broke_detail = "";
  double start = 0.0; /* ||b - Ax|| at the start of the last pass */
  for (int pass = 0;; ++pass) {
    GS_CHECK(start_pass(s, &t, pass > 0 || s->opts.x0_given));
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
    const int pass_base = s->it_base;
    /* Segments of iterations, split by the replacements the drift test asks for. Iteration 1
     * of each runs call by call (timed products for the stats); graphs from iteration 2 (the
     * same graphs: the body and x do not change). */
    for (;;) {
      GS_CHECK(gs_solver_iterate(s, pipecg_iteration, &t, x, 2, PIPECG_VEC_N(s->M != NULL),
                                 window, &reason));
      if (!replacement_asked(s, reason)) break;
      GS_CHECK(next_segment(s));
      GS_CHECK(replace(s, &t));
      GS_CHECK(gs_solver_fetch(s));
      /* the monitor sees this iteration here (the request's check did not call it), and the
       * stagnation window starts again (iteration 0 of the segment, as at a restart); a
       * breakdown of the step after the replacement is the pass's, restartable below */
      reason = gs_solver_check(s, 0, s->h_s->rnorm, window);
      if (reason != GS_REASON_NONE) break;
    }
    const int took = st->iterations - pass_base; /* iterations of this pass */
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
    GS_CHECK(next_segment(s));
  }
}
