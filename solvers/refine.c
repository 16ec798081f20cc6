/* solvers/refine.c: mixed-precision iterative refinement (gs_solve_refine, gpusolve/solver.h).
 *
 * Method CG (with ropts.reliable_delta > 0, the default) does not come here for its loop: it runs
 * as ONE CG iteration on the mixed product with reliable updates of its residual (Sleijpen and
 * van der Vorst 1996), a gs_solver_t made by solve_reliable below with the double product as
 * its residual operator; the iteration and the replacements are solvers/cg.c's (gs_cg_replace).
 * Restarting CG at each refinement step loses its Krylov space: on lap27 (100^3, H100) the loop
 * below took 236 inner iterations where double CG takes 161, and was slower than double CG.
 *
 * The other methods:
 * Wilkinson's and Moler's (1967) refinement with the correction solved in lower precision:
 * the residual r = b - A x is formed with the double product S, the correction equation
 * A d = r is solved by a Krylov method (a gs_solver_t set up once, solved once per step) on the
 * mixed product S_inner (float values, double vectors: about cond(A) u_f relative error in the
 * operator, u_f = 2^-24) to a loose tolerance, and x += d. Each step multiplies the error by
 * about max(inner_rtol, cond(A) u_f) (Higham, Accuracy and Stability of Numerical Algorithms,
 * 2nd ed., ch. 12; Carson and Higham, SIAM J. Sci. Comput. 40, 2018, with a Krylov inner
 * solver), so the loop reaches the double residual the user asked for while every inner
 * product reads half the value bytes. The stopping test is on the true double residual, never
 * on the inner solves' own.
 *
 * Vector work here is three cuBLAS calls per step in host pointer mode (the context's mode at
 * rest): the residual norm (which waits for the GPU: one synchronization per step), a copy
 * kept to undo a step that made x worse, and x += d. Memory: r, d and the copy (3n). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "gpusolve/timer.h"
#include "solvers/solver_impl.h"
#include "spmv/spmv_impl.h"

void gs_refine_opts_default(gs_refine_opts_t *o)
{
  if (!o) return;
  memset(o, 0, sizeof *o);
  /* Measured on the H100 (CG to 1e-10): lap27 2 steps, 236 inner iterations, 20.5 ms, against
   * 3 steps, 290, 25.1 ms at 1e-4 and 277 at 1e-8; G3_circuit with Jacobi 3016 inner
   * iterations against 3058 at 1e-4 and 4557 at 1e-8. */
  o->inner_rtol = 1e-6;
  o->max_outer = 100;
  o->min_reduction = 0.5;
  o->reliable_delta = 0.1; /* QUDA's default (Clark et al. 2010); measured at 0.1 only (run 110) */
}

typedef struct refine {
  gs_context_t *ctx;
  gs_spmv_t *S;        /* the double product: residuals and the test */
  const double *d_b;
  double *d_r;
  cudaEvent_t ev[2];   /* around an outer product */
  double seconds_spmv; /* outer products */
  long spmv_count;
} refine_t;

/* r = b - A x on the double product, timed; *rn = ||r|| (waits for the GPU). */
static gs_status_t residual(refine_t *R, const double *d_x, gs_idx_t n, double *rn)
{
  cudaStream_t st = R->ctx->stream;
  float ms = 0.0f;
  GS_CHECK(GS_CUDA(cudaMemcpyAsync(R->d_r, R->d_b, (size_t)n * sizeof *R->d_r,
                                   cudaMemcpyDeviceToDevice, st)));
  GS_CHECK(GS_CUDA(cudaEventRecord(R->ev[0], st)));
  GS_CHECK(gs_spmv_apply(R->S, GS_OP_N, -1.0, d_x, 1.0, R->d_r)); /* r <- b - A x */
  GS_CHECK(GS_CUDA(cudaEventRecord(R->ev[1], st)));
  R->spmv_count++;
  GS_CHECK(GS_CUBLAS(cublasDnrm2(R->ctx->cublas, n, R->d_r, 1, rn))); /* host mode: waits */
  GS_CHECK(GS_CUDA(cudaEventElapsedTime(&ms, R->ev[0], R->ev[1])));
  R->seconds_spmv += 1e-3 * ms;
  return GS_SUCCESS;
}

/* The argument checks of gs_solve_refine; *method is opts' method with AUTO resolved. */
static gs_status_t check_args(gs_context_t *ctx, const gs_solve_opts_t *opts,
                              const gs_refine_opts_t *ro, gs_spmv_t *S, gs_spmv_t *Si,
                              const double *d_b, const double *d_x, gs_method_t *method)
{
  if (!ctx || !ro || !S || !Si || !d_b || !d_x)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_solve_refine: NULL argument");
  if ((const double *)d_x == d_b)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_solve_refine: x and b must be different vectors");
  if (gs_spmv_matrix(S) != gs_spmv_matrix(Si))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_solve_refine: the outer and inner products are of "
                    "different matrices");
  if (gs_spmv_context(S) != ctx || gs_spmv_context(Si) != ctx)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_solve_refine: a product was prepared on another "
                    "context than the solve's");
  if (gs_spmv_precision(S) != GS_PRECISION_DOUBLE)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_solve_refine: the outer product (%s) is in %s "
                    "precision: the residual and the test need a double product",
                    gs_spmv_name(S), gs_precision_string(gs_spmv_precision(S)));
  if (!(ro->inner_rtol > 0.0 && ro->inner_rtol < 1.0) || ro->max_outer < 1 ||
      !(ro->min_reduction > 0.0 && ro->min_reduction <= 1.0) ||
      !(ro->reliable_delta >= 0.0 && ro->reliable_delta < 1.0))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_solve_refine: need 0 < inner_rtol < 1 (%g), "
                    "max_outer >= 1 (%d), 0 < min_reduction <= 1 (%g) and 0 <= reliable_delta "
                    "< 1 (%g)", ro->inner_rtol, ro->max_outer, ro->min_reduction,
                    ro->reliable_delta);
  const gs_csr_t *h = gs_matrix_host(gs_spmv_matrix(S));
  if (h->m != h->n)
    return GS_ERROR(GS_ERR_DIMENSION, "gs_solve_refine: A is %d x %d: refinement solves square "
                    "systems", (int)h->m, (int)h->n);
  gs_method_t m = opts ? opts->method : GS_SOLVER_AUTO;
  if (m == GS_SOLVER_AUTO) m = gs_solve_auto_method(gs_spmv_matrix(S));
  if (gs_method_flags(m) & GS_METHOD_LEAST_SQUARES)
    return GS_ERROR(GS_ERR_UNSUPPORTED, "gs_solve_refine: %s is a least-squares method; "
                    "refinement here solves square systems A x = b", gs_method_string(m));
  *method = m;
  return GS_SUCCESS;
}

/* Method CG with reliable updates: one gs_solver_t iterating on S_inner, its residuals on S
 * (gs_solver_use_reliable); gs_solver_solve does the rest (b = 0, ||b|| not finite, x0, the
 * checks, the end's true residual), so the stats are gs_solve's. */
static gs_status_t solve_reliable(gs_context_t *ctx, const gs_solve_opts_t *o,
                                  const gs_refine_opts_t *ro, gs_spmv_t *S, gs_spmv_t *S_inner,
                                  gs_precond_t *M, const double *d_b, double *d_x,
                                  gs_solve_stats_t *stats, gs_refine_stats_t *rstats)
{
  gs_status_t st = GS_SUCCESS;
  gs_operator_t *op = NULL, *op_res = NULL;
  gs_solver_t *s = NULL;
  gs_solve_opts_t io = *o;
  io.method = GS_SOLVER_CG;
  const double t0 = gs_wall_seconds();
  GS_TRY(gs_operator_from_spmv(&op, S_inner));
  GS_TRY(gs_operator_from_spmv(&op_res, S));
  GS_TRY(gs_solver_create(&s, ctx, &io));
  gs_solver_use_reliable(s, op_res, ro->reliable_delta, ro->max_outer);
  GS_TRY(gs_solver_setup(s, op, M));
  const double t_setup = gs_wall_seconds() - t0;
  GS_TRY(gs_solver_solve(s, d_b, d_x, stats));
  stats->seconds_setup += t_setup;
  rstats->reliable = 1;
  rstats->outer = s->rel.updates;
  rstats->inner_iterations = stats->iterations;
  rstats->last_inner_reason = stats->reason;
  rstats->seconds_inner = stats->seconds_total;
  rstats->outer_spmv = s->rel.products;
  rstats->seconds_outer_spmv = s->rel.seconds;
cleanup:
  gs_solver_destroy(&s);
  gs_operator_destroy(&op_res);
  gs_operator_destroy(&op);
  return st;
}

gs_status_t gs_solve_refine(gs_context_t *ctx, const gs_solve_opts_t *opts,
                            const gs_refine_opts_t *ropts, gs_spmv_t *S, gs_spmv_t *S_inner,
                            gs_precond_t *M, const double *d_b, double *d_x,
                            gs_solve_stats_t *stats, gs_refine_stats_t *rstats)
{
  gs_status_t st = GS_SUCCESS;
  gs_solve_stats_t local, in;
  gs_refine_stats_t rlocal;
  gs_refine_opts_t ro;
  gs_solve_opts_t o;
  gs_operator_t *op = NULL;
  gs_solver_t *s = NULL;
  double *d_d = NULL, *d_keep = NULL;
  cudaEvent_t total[2] = {NULL, NULL};
  refine_t R;
  memset(&R, 0, sizeof R);
  if (!stats) stats = &local;
  if (!rstats) rstats = &rlocal;
  memset(stats, 0, sizeof *stats);
  memset(rstats, 0, sizeof *rstats);
  stats->detail = "";
  stats->graphs_note = "";
  stats->persistent_note = "";
  if (ropts) ro = *ropts;
  else gs_refine_opts_default(&ro);
  gs_method_t method = GS_SOLVER_AUTO;
  GS_CHECK(check_args(ctx, opts, &ro, S, S_inner, d_b, d_x, &method));
  if (opts) o = *opts;
  else gs_solve_opts_default(&o);
  const int maxit = o.maxit;
  const double rtol = o.rtol, atol = o.atol;
  const gs_idx_t n = gs_matrix_host(gs_spmv_matrix(S))->n;
  stats->method = method;
  if (n == 0) { /* no unknowns */
    stats->reason = GS_CONVERGED_RTOL;
    return GS_SUCCESS;
  }
  if (method == GS_SOLVER_CG && ro.reliable_delta > 0.0)
    return solve_reliable(ctx, &o, &ro, S, S_inner, M, d_b, d_x, stats, rstats);
  GS_CHECK(gs_context_activate(ctx));
  cudaStream_t strm = ctx->stream;

  /* the inner solver: set up once, solved once per step (no allocation in the loop) */
  const double t0 = gs_wall_seconds();
  gs_solve_opts_t io = o;
  io.method = method;
  io.rtol = ro.inner_rtol;
  io.atol = 0.0;      /* relative to the residual it is given */
  io.x0_given = 0;    /* d = 0 to start */
  io.monitor = NULL;  /* each inner solve has a tolerance of its own */
  io.monitor_user = NULL;
  GS_TRY(gs_operator_from_spmv(&op, S_inner));
  GS_TRY(gs_solver_create(&s, ctx, &io));
  GS_TRY(gs_solver_setup(s, op, M));
  GS_TRY(gs_dmalloc(ctx, (void **)&R.d_r, (size_t)n * sizeof *R.d_r, "the refinement residual"));
  GS_TRY(gs_dmalloc(ctx, (void **)&d_d, (size_t)n * sizeof *d_d, "the refinement correction"));
  GS_TRY(gs_dmalloc(ctx, (void **)&d_keep, (size_t)n * sizeof *d_keep,
                    "the refinement's copy of x"));
  for (int k = 0; k < 2; ++k) {
    GS_TRY(GS_CUDA(cudaEventCreate(&R.ev[k])));
    GS_TRY(GS_CUDA(cudaEventCreate(&total[k])));
  }
  stats->seconds_setup = gs_wall_seconds() - t0;
  stats->seconds_precond_setup = gs_precond_setup_seconds(M);
  R.ctx = ctx;
  R.S = S;
  R.d_b = d_b;

  GS_TRY(GS_CUDA(cudaEventRecord(total[0], strm)));
  if (!o.x0_given) GS_TRY(GS_CUDA(cudaMemsetAsync(d_x, 0, (size_t)n * sizeof *d_x, strm)));
  double bnorm = 0.0, rn = 0.0;
  GS_TRY(GS_CUBLAS(cublasDnrm2(ctx->cublas, n, d_b, 1, &bnorm)));
  stats->bnorm = bnorm;
  if (!isfinite(bnorm)) {
    stats->reason = GS_DIVERGED_NANINF;
    stats->detail = "||b|| is not finite";
  } else if (bnorm == 0.0) { /* b = 0: x = 0 exactly, as gs_solve answers */
    GS_TRY(GS_CUDA(cudaMemsetAsync(d_x, 0, (size_t)n * sizeof *d_x, strm)));
    stats->reason = GS_CONVERGED_ATOL;
  } else {
    const double tol = fmax(rtol * bnorm, atol);
    GS_TRY(residual(&R, d_x, n, &rn));                              /* r <- b - A x0 (double) */
    stats->rnorm0 = rn;
    for (;;) {
      if (!isfinite(rn)) {
        stats->reason = GS_DIVERGED_NANINF;
        stats->detail = "the initial residual b - A x0 is not finite";
        break;
      }
      if (rn <= tol) {
        stats->reason = rn <= rtol * bnorm ? GS_CONVERGED_RTOL : GS_CONVERGED_ATOL;
        break;
      }
      if (rstats->outer >= ro.max_outer || rstats->inner_iterations >= maxit) {
        stats->reason = GS_DIVERGED_MAXIT;
        stats->detail = rstats->outer >= ro.max_outer ? "refinement step limit (max_outer)"
                                                      : "inner iteration limit (maxit)";
        break;
      }
      s->given.maxit = maxit - rstats->inner_iterations; /* the budget left, for this step */
      GS_TRY(gs_solver_solve(s, R.d_r, d_d, &in));       /* A_mixed d = r, to inner_rtol */
      rstats->inner_iterations += in.iterations;
      rstats->last_inner_reason = in.reason;
      rstats->seconds_inner += in.seconds_total;
      gs_solve_stats_add_work(stats, &in);
      GS_TRY(GS_CUDA(cudaMemcpyAsync(d_keep, d_x, (size_t)n * sizeof *d_x,
                                     cudaMemcpyDeviceToDevice, strm)));   /* keep x        */
      const double one = 1.0;
      GS_TRY(GS_CUBLAS(cublasDaxpy(ctx->cublas, n, &one, d_d, 1, d_x, 1))); /* x <- x + d    */
      double rn_new = 0.0;
      GS_TRY(residual(&R, d_x, n, &rn_new));                              /* r <- b - A x  */
      rstats->outer++;
      if (!(rn_new < rn)) { /* worse, or NaN: undo the step, x is the best iterate */
        GS_TRY(GS_CUDA(cudaMemcpyAsync(d_x, d_keep, (size_t)n * sizeof *d_x,
                                       cudaMemcpyDeviceToDevice, strm)));
        stats->reason = isfinite(rn_new) ? GS_DIVERGED_STAGNATION : GS_DIVERGED_NANINF;
        stats->detail = isfinite(rn_new)
                            ? "a refinement step did not reduce the double residual ||b - Ax|| "
                              "(undone): the mixed-precision inner solve no longer resolves the "
                              "correction (cond(A) 2^-24 near 1?)"
                            : "a refinement step made the residual not finite (undone)";
        break;
      }
      const double before = rn;
      rn = rn_new;
      if (rn > tol && rn > ro.min_reduction * before) {
        stats->reason = GS_DIVERGED_STAGNATION;
        stats->detail = "a refinement step reduced the double residual ||b - Ax|| by less than "
                        "min_reduction: the mixed-precision inner solve no longer resolves the "
                        "correction (cond(A) 2^-24 near 1?)";
        break;
      }
    }
  }
  GS_TRY(GS_CUDA(cudaEventRecord(total[1], strm)));
  GS_TRY(GS_CUDA(cudaEventSynchronize(total[1])));
  float ms = 0.0f;
  GS_TRY(GS_CUDA(cudaEventElapsedTime(&ms, total[0], total[1])));
  stats->seconds_total = 1e-3 * ms;
  stats->iterations = rstats->inner_iterations;
  stats->rnorm = stats->true_residual_norm = rn;
  stats->rel_residual = bnorm > 0.0 ? rn / bnorm : rn;
  stats->spmv_count += R.spmv_count;
  stats->seconds_spmv += R.seconds_spmv;
  rstats->outer_spmv = R.spmv_count;
  rstats->seconds_outer_spmv = R.seconds_spmv;

cleanup:
  if (st != GS_SUCCESS) {
    stats->reason = GS_REASON_NONE;
    cudaStreamSynchronize(ctx->stream); /* nothing may still use the vectors */
  }
  for (int k = 0; k < 2; ++k) {
    if (R.ev[k]) cudaEventDestroy(R.ev[k]);
    if (total[k]) cudaEventDestroy(total[k]);
  }
  gs_dfree(ctx, R.d_r);
  gs_dfree(ctx, d_d);
  gs_dfree(ctx, d_keep);
  gs_solver_destroy(&s);
  gs_operator_destroy(&op);
  return st;
}
