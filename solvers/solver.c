/* solvers/solver.c: gs_solve and what the methods share: argument checks, the workspace, the
 * device scalar block and its once-per-check fetch, the convergence test and monitor, event
 * timing of SpMV and preconditioner, and the true residual at the end.
 * How to add a method: see solvers/solver_impl.h. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "gpusolve/select.h"
#include "gpusolve/timer.h"
#include "precond/precond_impl.h"
#include "solvers/solver_impl.h"
#include "select/select_impl.h"
#include "spmv/spmv_impl.h"

/* ---- names ----------------------------------------------------------------------------------- */

const char *gs_reason_string(gs_reason_t r)
{
  switch (r) {
  case GS_REASON_NONE: return "none";
  case GS_CONVERGED_RTOL_NORMAL: return "converged_rtol_normal";
  case GS_CONVERGED_RTOL: return "converged_rtol";
  case GS_CONVERGED_ATOL: return "converged_atol";
  case GS_CONVERGED_ATOL_NORMAL: return "converged_atol_normal";
  case GS_DIVERGED_MAXIT: return "diverged_maxit";
  case GS_DIVERGED_BREAKDOWN: return "diverged_breakdown";
  case GS_DIVERGED_INDEFINITE: return "diverged_indefinite";
  case GS_DIVERGED_NANINF: return "diverged_nan_inf";
  case GS_DIVERGED_STAGNATION: return "diverged_stagnation";
  case GS_STOPPED_BY_MONITOR: return "stopped_by_monitor";
  case GS_DIVERGED_DTOL: return "diverged_dtol";
  }
  return "unknown";
}

const char *gs_reason_describe(gs_reason_t r)
{
  switch (r) {
  case GS_REASON_NONE: return "not run";
  case GS_CONVERGED_RTOL_NORMAL: return "converged to a least-squares solution (relative "
                                        "tolerance on ||A^T r||)";
  case GS_CONVERGED_RTOL: return "converged (relative tolerance)";
  case GS_CONVERGED_ATOL: return "converged (absolute tolerance)";
  case GS_CONVERGED_ATOL_NORMAL: return "converged to a least-squares solution (absolute "
                                        "tolerance on ||A^T r||)";
  case GS_DIVERGED_MAXIT: return "iteration limit reached";
  case GS_DIVERGED_BREAKDOWN: return "breakdown";
  case GS_DIVERGED_INDEFINITE: return "indefinite matrix or preconditioner";
  case GS_DIVERGED_NANINF: return "NaN or infinity in the iteration";
  case GS_DIVERGED_STAGNATION: return "stagnation";
  case GS_STOPPED_BY_MONITOR: return "stopped by the monitor";
  case GS_DIVERGED_DTOL: return "divergence (the residual grew far past its start)";
  }
  return "unknown reason";
}

int gs_reason_converged(gs_reason_t r) { return r > 0; }

static const char *const method_names[] = {"cg",   "bicgstab", "gmres", "auto",
                                           "bicg", "cgnr",     "lsqr",  "pipecg"};
#define NMETHODS (int)(sizeof method_names / sizeof method_names[0])

const char *gs_method_string(gs_method_t m)
{
  return ((int)m >= 0 && (int)m < NMETHODS) ? method_names[m] : "unknown";
}

int gs_method_find(const char *name)
{
  if (!name) return -1;
  for (int i = 0; i < NMETHODS; ++i)
    if (strcmp(name, method_names[i]) == 0) return i;
  return -1;
}

void gs_solve_opts_default(gs_solve_opts_t *o)
{
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->method = GS_SOLVER_AUTO;
  o->rtol = 1e-8;
  o->atol = 0.0;
  o->maxit = 10000;
  o->restart = 30;
  o->x0_given = 0;
  o->check_every = 0;
  o->stagnation_window = 0;
  o->timing = 1;
  o->monitor = NULL;
  o->monitor_user = NULL;
  o->graphs = 1;
  o->persistent = GS_PERSISTENT_DEFAULT;
  o->precond_auto = GS_PRECOND_AUTO_OFF;
  o->precond_auto_opts = NULL;
  o->fallback = GS_FALLBACK_AUTO;
}

int gs_solve_persistent_resolve(int requested, int auto_selected)
{
  if (requested != GS_PERSISTENT_DEFAULT) return requested; /* the caller's word wins */
  /* the persistent kernel multiplies with its own CSR product: it may stand in for a backend
   * the library chose, not for one the caller named */
  return auto_selected ? GS_PERSISTENT_AUTO : GS_PERSISTENT_OFF;
}

gs_method_t gs_solve_auto_method(const gs_matrix_t *A)
{
  const gs_csr_t *h = gs_matrix_host(A);
  if (h && h->m != h->n) return GS_SOLVER_LSQR; /* least squares, as MATLAB's backslash */
  const gs_features_t *f = gs_matrix_features(A);
  if (f && f->numerically_symmetric && f->diagonal_positive) return GS_SOLVER_CG;
  return GS_SOLVER_BICGSTAB;
}

/* ---- the method table ------------------------------------------------------------------------ */

typedef struct {
  size_t (*work)(const gs_solver_t *s, size_t *host_doubles);
  gs_status_t (*solve)(gs_solver_t *s, double *d_x, double *d_work, double *h_work);
  unsigned flags; /* GS_METHOD_* */
} method_t;

enum { SQ = GS_METHOD_SQUARE, TR = GS_METHOD_TRANSPOSE, LS = GS_METHOD_LEAST_SQUARES,
       SPC = GS_METHOD_SYMMETRIC_PC };

static const method_t methods[] = {
  [GS_SOLVER_CG] = {gs_cg_work, gs_cg_solve, SQ},
  [GS_SOLVER_BICGSTAB] = {gs_bicgstab_work, gs_bicgstab_solve, SQ},
  [GS_SOLVER_GMRES] = {gs_gmres_work, gs_gmres_solve, SQ},
  [GS_SOLVER_AUTO] = {NULL, NULL, 0},
  [GS_SOLVER_BICG] = {gs_bicg_work, gs_bicg_solve, SQ | TR | SPC},
  [GS_SOLVER_CGNR] = {gs_cgnr_work, gs_cgnr_solve, TR | LS},
  [GS_SOLVER_LSQR] = {gs_lsqr_work, gs_lsqr_solve, TR | LS},
  [GS_SOLVER_PIPECG] = {gs_pipecg_work, gs_pipecg_solve, SQ},
};

unsigned gs_method_flags(gs_method_t m)
{
  return ((int)m >= 0 && (int)m < NMETHODS) ? methods[m].flags : 0u;
}

/* ---- timing ---------------------------------------------------------------------------------- */

/* Sums the recorded event pairs (all complete: the caller has synchronized) and empties the
 * pool. */
static gs_status_t flush_events(gs_solver_t *s)
{
  cudaEvent_t *ev = s->events;
  for (int k = 0; k < s->ev_used; ++k) {
    float ms = 0.0f;
    GS_CHECK(GS_CUDA(cudaEventElapsedTime(&ms, ev[2 * k], ev[2 * k + 1])));
    if (s->ev_kind[k] == 1) s->stats->seconds_precond += 1e-3 * ms;
    else if (s->ev_kind[k] == 2) s->rel.seconds += 1e-3 * ms; /* reliable updates' A_res */
    else s->stats->seconds_spmv += 1e-3 * ms;
  }
  s->ev_used = 0;
  return GS_SUCCESS;
}

/* Starts a timed call: the slot's start event, or -1 when not timing. A full pool (only with a
 * large check_every) is drained first, which waits for the GPU: the one sync timing may add. */
static gs_status_t timed_begin(gs_solver_t *s, int kind, int *slot)
{
  *slot = -1;
  if (!s->opts.timing || !s->events || s->capturing) return GS_SUCCESS;
  cudaEvent_t *ev = s->events;
  if (s->ev_used == s->ev_cap) {
    GS_CHECK(GS_CUDA(cudaEventSynchronize(ev[2 * s->ev_used - 1])));
    GS_CHECK(flush_events(s));
  }
  *slot = s->ev_used++;
  s->ev_kind[*slot] = (unsigned char)kind;
  return GS_CUDA(cudaEventRecord(ev[2 * *slot], s->ctx->stream));
}

static gs_status_t timed_end(gs_solver_t *s, int slot)
{
  if (slot < 0) return GS_SUCCESS;
  cudaEvent_t *ev = s->events;
  return GS_CUDA(cudaEventRecord(ev[2 * slot + 1], s->ctx->stream));
}

/* ---- shared steps ---------------------------------------------------------------------------- */

gs_status_t gs_solver_apply(gs_solver_t *s, gs_op_t op, double alpha, const double *d_x,
                            double beta, double *d_y)
{
  int slot;
  GS_CHECK(timed_begin(s, 0, &slot));
  GS_CHECK(gs_operator_apply(s->A, op, alpha, d_x, beta, d_y));
  s->stats->spmv_count++;
  if (slot >= 0) s->eager_spmv++;
  return timed_end(s, slot);
}

gs_status_t gs_solver_spmv(gs_solver_t *s, double alpha, const double *d_x, double beta,
                           double *d_y)
{
  return gs_solver_apply(s, GS_OP_N, alpha, d_x, beta, d_y);
}

gs_status_t gs_solver_precond(gs_solver_t *s, const double *d_r, double *d_z)
{
  int slot;
  GS_CHECK(timed_begin(s, 1, &slot));
  GS_CHECK(gs_precond_apply(s->M, d_r, d_z));
  s->stats->precond_count++;
  if (slot >= 0) s->eager_precond++;
  return timed_end(s, slot);
}

gs_status_t gs_solver_residual(gs_solver_t *s, const double *d_x, double *d_r)
{
  GS_CHECK(s->vec->copy(s, s->m, s->d_b, d_r));
  if (!d_x) return GS_SUCCESS;
  if (!s->rel.A_res) return gs_solver_spmv(s, -1.0, d_x, 1.0, d_r); /* r <- b - A x */
  /* reliable updates: the double product, timed apart from the iteration's (run() scales the
   * graph-replayed products by the mean of the eager ones, which these would skew) */
  int slot;
  GS_CHECK(timed_begin(s, 2, &slot));
  GS_CHECK(gs_operator_apply(s->rel.A_res, GS_OP_N, -1.0, d_x, 1.0, d_r)); /* r <- b - A x */
  s->stats->spmv_count++;
  s->rel.products++;
  return timed_end(s, slot);
}

gs_status_t gs_solver_start_shadow(gs_solver_t *s, const double *d_x, double *d_r,
                                   double *d_rt, int window, gs_reason_t *reason)
{
  GS_CHECK(gs_solver_residual(s, s->opts.x0_given ? d_x : NULL, d_r)); /* r <- b - A x0 */
  GS_CHECK(s->vec->nrm2(s, s->n, d_r, &s->d_s->rnorm));                 /* ||r||         */
  GS_CHECK(s->vec->copy(s, s->n, d_r, d_rt));                           /* r~ <- r       */
  GS_CHECK(gs_solver_fetch(s));
  s->stats->rnorm0 = s->h_s->rnorm;
  *reason = gs_solver_check(s, 0, s->h_s->rnorm, window);
  return GS_SUCCESS;
}

/* ||b||, the tolerances and the reason b imposes, from the fetched scalar block (run()). */
static void start_known(gs_solver_t *s)
{
  s->start_pending = 0;
  s->bnorm = s->refnorm = s->h_s->bnorm;
  s->tol_rel = s->opts.rtol * s->refnorm;
  s->tol = GS_SOLVE_TOL(s->opts.rtol, s->refnorm, s->opts.atol); /* the device's value too */
  s->stats->bnorm = s->bnorm;
  s->start_reason = GS_REASON_NONE;
  if (!isfinite(s->bnorm)) {
    s->start_reason = GS_DIVERGED_NANINF;
    s->start_detail = "||b|| is not finite";
  } else if (s->bnorm == 0.0) { /* b = 0: x = 0 exactly, as SciPy and PETSc answer */
    s->start_reason = GS_CONVERGED_ATOL;
    s->start_detail = "";
  }
}

gs_status_t gs_solver_fetch(gs_solver_t *s)
{
  GS_CHECK(GS_CUDA(cudaMemcpyAsync(s->h_s, s->d_s, sizeof *s->h_s, cudaMemcpyDeviceToHost,
                                   s->ctx->stream)));
  GS_CHECK(GS_CUDA(cudaStreamSynchronize(s->ctx->stream)));
  if (s->start_pending) start_known(s);
  return flush_events(s);
}

gs_reason_t gs_solver_halt_reason(int halt)
{
  switch (halt) {
  case GS_HALT_INDEFINITE:
  case GS_HALT_INDEFINITE_PC: return GS_DIVERGED_INDEFINITE;
  case GS_HALT_BREAKDOWN: return GS_DIVERGED_BREAKDOWN;
  case GS_HALT_NANINF: return GS_DIVERGED_NANINF;
  default: return GS_REASON_NONE;
  }
}

const char *gs_solver_halt_detail(int halt, int what)
{
  if (halt == GS_HALT_INDEFINITE) return "p^T A p <= 0";
  if (halt == GS_HALT_INDEFINITE_PC)
    return "r^T M^-1 r < 0: the preconditioner is indefinite (ILU(0) of an SPD matrix can be; "
           "for CG take ic0, amg or jacobi)";
  const int nan = halt == GS_HALT_NANINF;
  switch (what) {
  case GS_WHAT_PQ: return nan ? "p^T A p is not finite" : "p^T A p = 0";
  case GS_WHAT_ALPHA: return nan ? "the step length alpha is not finite" : "alpha = 0";
  case GS_WHAT_RHO: return nan ? "rho is not finite" : "rho = 0 (r~^T r or r^T M^-1 r)";
  case GS_WHAT_BETA: return nan ? "the direction update beta is not finite" : "beta = 0";
  case GS_WHAT_RV: return nan ? "r~^T v is not finite" : "r~^T v = 0";
  case GS_WHAT_TT: return nan ? "t^T t is not finite" : "t^T t = 0";
  case GS_WHAT_OMEGA: return nan ? "omega is not finite" : "omega = t^T s / t^T t = 0";
  case GS_WHAT_PTQ: return nan ? "p~^T A p is not finite" : "p~^T A p = 0";
  case GS_WHAT_WW:
    return nan ? "||A p||^2 is not finite" : "A p = 0: the direction is in the null space of A";
  case GS_WHAT_LSQR: return "a plane rotation or step length is not finite";
  default: return "";
  }
}

/* Restarts from the true residual when the recurrence residual has drifted (see gs_solve). */
#define GS_RESIDUAL_RESTARTS 3
#define GS_TRUE_RESIDUAL_SLACK 10.0

static gs_reason_t converged_reason(const gs_solver_t *s, double rnorm)
{
  if (s->flags & GS_METHOD_LEAST_SQUARES) /* the monitored norm is ||A^T r|| */
    return rnorm <= s->tol_rel ? GS_CONVERGED_RTOL_NORMAL : GS_CONVERGED_ATOL_NORMAL;
  return rnorm <= s->tol_rel ? GS_CONVERGED_RTOL : GS_CONVERGED_ATOL;
}

gs_reason_t gs_solver_check(gs_solver_t *s, int it, double rnorm, int window)
{
  gs_solve_stats_t *st = s->stats;
  if (s->start_reason != GS_REASON_NONE) { /* b itself ends the solve (start_known) */
    st->iterations = s->it_base;
    st->detail = s->start_detail;
    return s->start_reason;
  }
  int halt = s->h_s->halt;
  st->iterations = s->it_base + (halt ? s->h_s->halt_done : it);
  st->rnorm = rnorm;
  int stop = 0;
  /* A refused step leaves r unchanged: do not report its norm twice. (The steps that end
   * BiCGSTAB at its half step and LSQR on its tests are taken.) */
  const int converged_halt = halt == GS_HALT_HALFSTEP || halt == GS_HALT_CONVERGED;
  if (s->opts.monitor && (!halt || converged_halt || halt == GS_HALT_LSQR))
    stop = s->opts.monitor(s->opts.monitor_user, st->iterations, rnorm,
                           s->refnorm > 0.0 ? rnorm / s->refnorm : rnorm);
  if (!isfinite(rnorm)) {
    st->detail = "the residual norm is not finite";
    return GS_DIVERGED_NANINF;
  }
  if (rnorm <= s->tol || converged_halt) return converged_reason(s, rnorm);
  if (halt == GS_HALT_LSQR) {
    st->detail = gs_lsqr_detail(s->h_s->halt_what);
    return gs_lsqr_reason(s->h_s->halt_what);
  }
  if (halt) {
    st->detail = gs_solver_halt_detail(halt, s->h_s->halt_what);
    return gs_solver_halt_reason(halt);
  }
  if (stop) return GS_STOPPED_BY_MONITOR;
  if (s->dtol_on && st->rnorm0 > 0.0 && rnorm > GS_FALLBACK_DTOL * st->rnorm0) {
    st->detail = "||r|| > 1e5 ||b - A x0||";
    return GS_DIVERGED_DTOL;
  }
  if (window > 0) {
    if (it == 0 || rnorm < s->best) {
      s->best = rnorm;
      s->best_it = it;
    } else if (it - s->best_it >= window) {
      st->detail = "no smaller residual norm within the stagnation window";
      return GS_DIVERGED_STAGNATION;
    }
  }
  if (it >= s->opts.maxit) return GS_DIVERGED_MAXIT;
  return GS_REASON_NONE;
}

static void graphs_drop(gs_solver_t *s)
{
  for (int k = 0; k < 2; ++k) {
    if (s->graph[k]) cudaGraphExecDestroy(s->graph[k]);
    s->graph[k] = NULL;
    s->graph_spmv[k] = s->graph_precond[k] = 0;
  }
  s->graph_x = NULL;
}

/* ---- the iteration driver (CG, pipelined CG, BiCGSTAB) --------------------------------------- */

/* Captures `body` for iteration `it` into s->graph[it & 1]. A failure (a call that cannot be
 * captured: an allocation, a synchronization, a library that refuses) turns graphs off for the
 * solver with a note; nothing captured has run, so the caller then launches the body itself. */
static gs_status_t graph_capture(gs_solver_t *s, gs_iteration_fn body, void *user, int it)
{
  const int par = it & 1;
  cudaStream_t st = s->ctx->stream;
  gs_solve_stats_t *stats = s->stats;
  const long sc = stats->spmv_count, pc = stats->precond_count;
  cudaGraph_t g = NULL;
  if (cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
    cudaGetLastError();
    s->graph_off = 1;
    s->graph_note = "the stream could not be captured";
    return GS_SUCCESS;
  }
  s->capturing = 1;
  const gs_status_t bst = body(s, user, it);
  s->capturing = 0;
  cudaError_t e = cudaStreamEndCapture(st, &g);
  const long dspmv = stats->spmv_count - sc, dpc = stats->precond_count - pc;
  stats->spmv_count = sc;
  stats->precond_count = pc;
  if (bst == GS_SUCCESS && e == cudaSuccess && g)
    e = cudaGraphInstantiate(&s->graph[par], g, 0);
  if (g) cudaGraphDestroy(g);
  if (bst != GS_SUCCESS || e != cudaSuccess || !s->graph[par]) {
    cudaGetLastError(); /* the capture's error is not the solve's */
    s->graph[par] = NULL;
    graphs_drop(s);
    s->graph_off = 1;
    s->graph_note = "a call of the iteration could not be captured (operator, preconditioner "
                    "or library); kernels launched one by one";
    return GS_SUCCESS;
  }
  s->graph_spmv[par] = dspmv;
  s->graph_precond[par] = dpc;
  return GS_SUCCESS;
}

/* Enqueues iteration `it`: from its graph, or call by call. */
static gs_status_t one_iteration(gs_solver_t *s, gs_iteration_fn body, void *user, int it,
                                 int use_graphs)
{
  const int par = it & 1;
  if (use_graphs && !s->graph_off && !s->graph[par]) GS_CHECK(graph_capture(s, body, user, it));
  if (use_graphs && !s->graph_off && s->graph[par]) {
    GS_CHECK(GS_CUDA(cudaGraphLaunch(s->graph[par], s->ctx->stream)));
    s->stats->spmv_count += s->graph_spmv[par];
    s->stats->precond_count += s->graph_precond[par];
    s->graph_runs++;
    return GS_SUCCESS;
  }
  return body(s, user, it);
}

/* Records the check (it, r) of a pass in h (a smaller it than the last begins a new pass, whose
 * start is (0, r0)). */
static void hist_push(gs_rate_hist_t *h, long it, double r, double r0)
{
  if (h->n > 0 && h->it[h->n - 1] >= it) h->n = 0; /* a new pass */
  if (h->n == 0) { /* the pass's start */
    h->it[0] = 0;
    h->r[0] = r0;
    h->n = 1;
  }
  if (h->n == GS_REVISE_HISTORY) { /* drop the oldest but the start */
    memmove(&h->it[1], &h->it[2], (GS_REVISE_HISTORY - 2) * sizeof h->it[0]);
    memmove(&h->r[1], &h->r[2], (GS_REVISE_HISTORY - 2) * sizeof h->r[0]);
    h->n--;
  }
  h->it[h->n] = it;
  h->r[h->n] = r;
  h->n++;
}

/* The products left by the residual's recent rate: over the last quarter of the pass's
 * iterations (at least GS_REVISE_MIN_IT), from the check points kept in h (the last is it). */
static double hist_left(const gs_solver_t *s, const gs_rate_hist_t *h, long it, double ppi)
{
  long window = it / 4 > GS_REVISE_MIN_IT ? it / 4 : GS_REVISE_MIN_IT;
  int w = 0; /* the latest check point at least `window` iterations back */
  for (int k = 0; k < h->n - 1; ++k)
    if (h->it[k] <= it - window) w = k;
  return gs_select_remaining_products(h->it[w], h->r[w], it, h->r[h->n - 1], s->tol,
                                      s->opts.maxit - s->it_base, ppi);
}

/* At a check (stream idle): the staged "auto" product's revision (select/auto.c) with the products
 * run so far and the products left by the recent rate; a switch of backend drops the graphs
 * holding the old kernels (captured again at the next iteration). */
static gs_status_t auto_revise(gs_solver_t *s, gs_spmv_t *S, int it, const double *d_x)
{
  if (!S) return GS_SUCCESS;
  hist_push(&s->rev, it, s->h_s->rnorm, s->stats->rnorm0);
  if (it < GS_REVISE_MIN_IT) return GS_SUCCESS;
  const double ppi = (double)s->stats->spmv_count / (double)(s->it_base + it);
  const double left = hist_left(s, &s->rev, it, ppi);
  int switched = 0;
  GS_CHECK(gs_spmv_auto_revise(S, (long)(s->it_base + it), (double)s->stats->spmv_count, left,
                               &switched));
  if (switched) {
    gs_operator_refresh_caps(s->A);
    graphs_drop(s);
    s->graph_x = d_x;
  }
  return GS_SUCCESS;
}

/* The escalation's cost model (opts.precond_auto), refitted on an H100 after the kernels' preload
 * (docs/cli.md "Preconditioner auto"): AMG's setup a fixed cost plus a cost a row (aggregation,
 * the coarse levels) and an entry (strength, Galerkin product) of A, within 1.4x above the
 * measured setups from 3 to 38 ms (msc04515 to G3_circuit and the 27-point Laplacian), and its
 * solve as GS_ESC_AMG_ITERATIONS iterations each GS_ESC_CYCLE times a plain one (a V-cycle costs
 * five to eight plain CG iterations on G3_circuit and the Laplacians). */
#define GS_ESC_SETUP_S 5e-3
#define GS_ESC_SETUP_PER_ROW 14e-9
#define GS_ESC_SETUP_PER_NNZ 0.7e-9
#define GS_ESC_AMG_ITERATIONS 50.0
#define GS_ESC_CYCLE 7.0
/* A V-cycle's launch latency: a few kernels a level, whatever the size; on small matrices, whose
 * plain iteration is one persistent-kernel step of a few us, this and not GS_ESC_CYCLE times that
 * step is the cycle's cost. */
#define GS_ESC_CYCLE_FLOOR_S 60e-6
/* The least forecast time left for an escalation, whatever the model predicts: AMG's iteration
 * count is a guess (GS_ESC_AMG_ITERATIONS) that structural matrices miss by 10-25x (msc04515 and
 * bcsstk13 from a nonzero x), and a short solve has little to win against that risk. */
#define GS_ESC_MIN_LEFT_S 0.1
/* The forecast is trusted only once the pass has spent this share of AMG's predicted cost in
 * its iterations (iterations x the shortest iteration time). A Laplacian's CG residual falls as
 * 1/k until k reaches the grid's width and geometrically after, so the rate-based forecast
 * grows with k through that first phase and can pass the bar just before the fast phase: the
 * 7-point 128^3 escalated at iteration 112 of 296 and took 0.065 s where no preconditioner took
 * 0.035. Waiting until the iterations have cost a fifth of AMG bounds what a right escalation
 * loses to a fifth of AMG's cost, while a wrong one costs all of it (docs/cli.md, "The default
 * preconditioner: auto"). */
#define GS_ESC_SPENT 0.2
/* After the escalation: AMG is dropped when its pass forecasts this many times the time left
 * without it (scaled from the escalation's forecast, itself unsure where CG stagnates) */
#define GS_ESC_DROP 4.0
/* A forecast is trusted from GS_ESC_MIN_IT iterations of the pass on, and acted on when two
 * checks in a row agree. */
#define GS_ESC_MIN_IT 32
#define GS_ESC_AGREE 2
/* The escalation for the iteration limit: the forecast needs this many times the iterations
 * left (a margin for CG's irregular rate: a late superlinear phase is not foreseen). */
#define GS_ESC_LIMIT 2

/* The iterations left from ||r|| = r at iteration it by the residual's rate over the last half
 * of the pass (from the check points in h), or, where ||r|| did not fall over that window (CG's
 * residual is not monotone), over the whole pass; 0 when it has not fallen at all (no
 * forecast); capped by the iteration limit. */
static double esc_left(const gs_solver_t *s, const gs_rate_hist_t *h, long it, double r,
                       int stalled_is_limit, long maxit)
{
  int w = 0; /* the latest check point at least it / 2 iterations back */
  for (int k = 0; k < h->n - 1; ++k)
    if (h->it[k] <= it - it / 2) w = k;
  if (!(h->r[w] > r)) w = 0;
  /* no fall over the pass: no forecast for the escalation (unlike the format's forecast: no
   * rate, no iteration limit); for the watch on AMG's pass, the iteration limit */
  if (!(h->r[w] > r) && !stalled_is_limit) return 0.0;
  return gs_select_remaining_products(h->it[w], h->r[w], it, r, s->tol, maxit, 1.0);
}

/* At a check of a pass without a preconditioner: whether the forecast time left exceeds
 * GS_PRECOND_AUTO_MARGIN times AMG's predicted cost. An iteration's time is the shortest
 * measured between two checks (wall clock; the longer intervals hold one-time costs: graph
 * capture, the staged format's revisions). */
static int esc_due(gs_solver_t *s, int it)
{
  const int watching = s->esc.watch && s->M == s->esc.M && s->M;
  if (!watching && (!s->esc.enabled || s->M)) return 0;
  const double now = gs_wall_seconds();
  gs_rate_hist_t *h = &s->esc.hist;
  if (h->n == 0 || s->esc.it_prev >= it) { /* a new pass */
    h->n = 0;
    s->esc.t_it = INFINITY;
    s->esc.agree = 0;
  } else if (now > s->esc.t_prev) {
    const double t = (now - s->esc.t_prev) / (double)(it - s->esc.it_prev);
    if (t < s->esc.t_it) s->esc.t_it = t;
  }
  s->esc.t_prev = now;
  s->esc.it_prev = it;
  /* check points 1/8 of the pass apart (the window of the forecast is half the pass, and
   * checks may come every iteration or two) */
  const long last = h->n > 0 ? h->it[h->n - 1] : 0;
  if (h->n == 0 || it >= last + (last / 8 > 1 ? last / 8 : 1))
    hist_push(h, it, s->h_s->rnorm, s->stats->rnorm0);
  if (it < GS_ESC_MIN_IT || !isfinite(s->esc.t_it)) return 0;
  const double r = s->h_s->rnorm;
  if (watching) { /* AMG's pass against the time left without it, from here */
    const double with = esc_left(s, h, it, r, 1, s->opts.maxit) * s->esc.t_it;
    const double without = s->esc.r_esc > s->tol && r > s->tol
                               ? s->esc.left_s * log(r / s->tol) / log(s->esc.r_esc / s->tol)
                               : 0.0;
    /* escalated for the limit: without AMG the pass was not going to converge */
    int drop = !s->esc.limit && with > GS_ESC_DROP * without;
    if (s->ctx->test_precond_auto) drop = s->ctx->test_precond_auto == 3;
    s->esc.agree = drop ? s->esc.agree + 1 : 0;
    return s->esc.agree >= GS_ESC_AGREE;
  }
  gs_idx_t m = 0, n = 0;
  gs_off_t nnz = 0;
  gs_matrix_dims(gs_operator_matrix(s->A), &m, &n, &nnz);
  s->esc.left_s = esc_left(s, h, it, r, 0, s->opts.maxit) * s->esc.t_it;
  s->esc.r_esc = r;
  s->esc.cost_s = GS_ESC_SETUP_S + GS_ESC_SETUP_PER_ROW * (double)m +
                  GS_ESC_SETUP_PER_NNZ * (double)nnz +
                  GS_ESC_AMG_ITERATIONS * (GS_ESC_CYCLE * s->esc.t_it + GS_ESC_CYCLE_FLOOR_S);
  if (s->ctx->test_precond_auto) s->esc.cost_s = s->ctx->test_precond_auto == 2 ? INFINITY : 0.0;
  double need = GS_PRECOND_AUTO_MARGIN * s->esc.cost_s;
  if (!s->ctx->test_precond_auto) need = fmax(need, GS_ESC_MIN_LEFT_S);
  /* Convergence at stake: the forecast (a residual that did not fall counts) needs more than
   * GS_ESC_LIMIT times the iterations the limit leaves. The pass would end unconverged, so
   * the time floor and the margin do not apply (hook 2, "never", still holds). */
  const long room = s->opts.maxit > it ? s->opts.maxit - it : 0;
  const long cap = it + (long)GS_ESC_LIMIT * room;
  s->esc.limit = room > 0 && s->ctx->test_precond_auto != 2 &&
                 esc_left(s, h, it, r, 1, cap) >= (double)(cap - it);
  /* (the test hooks' cost of 0 or infinity decides this as it decides need) */
  const int spent = (double)it * s->esc.t_it >= GS_ESC_SPENT * s->esc.cost_s;
  s->esc.agree = (s->esc.left_s > need && spent) || s->esc.limit ? s->esc.agree + 1 : 0;
  return s->esc.agree >= GS_ESC_AGREE;
}

/* The pass ended for the escalation: sets AMG up on the operator's matrix (the handles in host
 * pointer mode, as everywhere outside a solve) and readies the next pass from the current x. A
 * setup that fails leaves the solve without a preconditioner (noted), escalating no more. */
/* Readies the next pass from the current x, after a change of preconditioner. */
static gs_status_t next_pass(gs_solver_t *s)
{
  /* the persistent kernels and the captured graphs ran with the previous preconditioner */
  s->persist.use = 0;
  graphs_drop(s);
  s->h_s->true_done = 0;
  s->opts.x0_given = 1;
  s->opts.maxit = s->given.maxit - s->stats->iterations;
  s->it_base = s->stats->iterations;
  return gs_solver_clear_halt(s);
}

/* The pass ended because AMG's pass forecast far more than going on without (the watch after
 * the escalation): the solve goes on without a preconditioner, and so do later solves. */
static gs_status_t drop_amg(gs_solver_t *s)
{
  s->esc.drop = 0;
  s->esc.watch = 0;
  s->M = NULL;
  gs_status_t st = next_pass(s); /* drops the graphs captured with it first */
  gs_precond_destroy(&s->esc.M);
  s->stats->precond_auto_note = "amg dropped: its pass forecast more than twice the time left "
                                "without it; the solve went on without";
  return st;
}

static gs_status_t escalate(gs_solver_t *s)
{
  gs_solve_stats_t *st = s->stats;
  if (s->esc.drop) return drop_amg(s);
  const double t0 = gs_wall_seconds();
  /* Set up, and applied once outside the timings so that the first apply of the pass does not
   * carry the first-call costs of the levels' products (the CLI's warm-up solve does this for a
   * preconditioner given at the start), into CG's z, which the next pass forms anew. */
  GS_CHECK(GS_CUBLAS(cublasSetPointerMode(s->ctx->cublas, CUBLAS_POINTER_MODE_HOST)));
  gs_status_t made = gs_precond_create_opts(&s->esc.M, s->ctx, gs_operator_matrix(s->A), "amg",
                                            s->given.precond_auto_opts);
  if (made == GS_SUCCESS)
    made = gs_precond_apply(s->esc.M, s->d_b, s->d_work + (s->nvec - 1) * s->ld);
  if (made != GS_SUCCESS) gs_precond_destroy(&s->esc.M); /* later solves must not start with it */
  GS_CHECK(GS_CUBLAS(cublasSetPointerMode(s->ctx->cublas, CUBLAS_POINTER_MODE_DEVICE)));
  s->esc.enabled = 0;
  if (made == GS_SUCCESS) {
    GS_CHECK(GS_CUDA(cudaStreamSynchronize(s->ctx->stream)));
    gs_precond_info_t in;
    s->M = s->esc.M;
    st->precond_auto_iteration = st->iterations;
    st->precond_auto_setup_s = gs_wall_seconds() - t0;
    s->esc.watch = 1;
    s->esc.agree = 0;
    st->precond_auto_left_s = s->esc.left_s;
    st->precond_auto_cost_s = s->esc.cost_s;
    st->precond_auto_limit = s->esc.limit;
    if (gs_precond_info(s->M, &in) == GS_SUCCESS) {
      st->precond_auto_levels = in.levels;
      st->precond_auto_complexity = in.operator_complexity;
    }
  } else if (made == GS_ERR_CUDA || made == GS_ERR_INTERNAL) {
    return made; /* a failed device is the solve's failure */
  } else {
    st->precond_auto_note = made == GS_ERR_DEVICE_MEMORY
                                ? "amg's setup ran out of device memory; the solve went on without"
                                : "amg could not be set up on this matrix; the solve went on "
                                  "without";
  }
  return next_pass(s);
}

gs_status_t gs_solver_iterate(gs_solver_t *s, gs_iteration_fn body, void *user,
                              const double *d_x, int first_graph_it, double vec_n, int window,
                              gs_reason_t *reason)
{
  return gs_solver_iterate_many(s, body, NULL, user, d_x, first_graph_it, vec_n, window, reason);
}

gs_status_t gs_solver_iterate_many(gs_solver_t *s, gs_iteration_fn body, gs_iterations_fn many,
                                   void *user, const double *d_x, int first_graph_it,
                                   double vec_n, int window, gs_reason_t *reason)
{
  gs_solve_stats_t *st = s->stats;
  const int persist = many && s->persist.use;
  /* the counters of the persistent kernels, as of the fetch the method has just done */
  s->persist.products_seen = s->h_s->products;
  s->persist.precs_seen = s->h_s->precs;
  const int maxit = s->opts.maxit;
  const int auto_k = s->given.check_every == 0;
  /* Automatic k starts at 1 and grows from the measured iteration time (the kernel-by-kernel
   * loop launches all k iterations whatever happens, so k is kept to GS_CHECK_INTERVAL_S of
   * work). A persistent kernel stops by itself at convergence or a halt, so a long batch wastes
   * nothing: it runs GS_PERSIST_CHECK_MAX iterations between checks from the first one, and a
   * solve of a few dozen iterations pays one host round trip, not the four or five of a
   * growing k (issue 14: the start and end of a short solve). A monitor still sees each. */
  const int persist_k = persist && auto_k && !s->opts.monitor;
  int whole_start = persist && s->persist.start; /* the kernel forms the pass's start */
  int k = persist_k ? GS_PERSIST_CHECK_MAX : auto_k ? 1 : s->given.check_every;
  if (persist_k && window > 0 && window < k) k = window; /* stagnation seen within a window */
  /* Graphs: asked for, an operator that says its apply is capturable; captured for this x. */
  const int want = s->given.graphs != 0;
  if (want && !(gs_operator_caps(s->A) & GS_SPMV_CAP_CAPTURABLE)) {
    s->graph_off = 1;
    s->graph_note = "the operator's product cannot be captured into a CUDA Graph";
  } else if (want && !gs_precond_is_capturable(s->M)) {
    s->graph_off = 1;
    s->graph_note = "the preconditioner's apply cannot be captured into a CUDA Graph";
  }
  if (s->graph_x != d_x) graphs_drop(s);
  s->graph_x = d_x;
  gs_spmv_t *staged = gs_operator_spmv(s->A); /* revised at the checks when staged "auto" */
  if (staged && !(gs_spmv_selection(staged) && gs_spmv_selection(staged)->staged)) staged = NULL;
  if (persist) staged = NULL; /* the persistent kernel does not use the backend */
  GS_CHECK(GS_CUDA(cudaMemsetAsync(&s->d_s->iter, 0, sizeof s->d_s->iter, s->ctx->stream)));
  double t_last = gs_wall_seconds();
  int it = 1;
  while (*reason == GS_REASON_NONE) {
    int todo = maxit - it + 1 < k ? maxit - it + 1 : k;
    if (todo < 1) todo = 1;
    if (persist) {
      GS_CHECK(many(s, user, it, todo));
      it += todo;
      /* the solve's end, if the kernel converges: it forms the true residual itself */
      if (gs_persist_whole(s)) GS_CHECK(GS_CUDA(cudaEventRecord(s->total[1], s->ctx->stream)));
    } else {
      for (int j = 0; j < todo; ++j, ++it)
        GS_CHECK(one_iteration(s, body, user, it, want && it >= first_graph_it));
    }
    GS_CHECK(gs_solver_fetch(s));
    st->checks++;
    if (persist) { /* what the kernels ran since the last check */
      st->spmv_count += s->h_s->products - s->persist.products_seen;
      st->precond_count += s->h_s->precs - s->persist.precs_seen;
      s->persist.products_seen = s->h_s->products;
      s->persist.precs_seen = s->h_s->precs;
    }
    if (whole_start) { /* what the host's start would have known at its check 0 */
      whole_start = 0;
      st->rnorm0 = s->best = s->h_s->rnorm0;
      s->best_it = 0;
    }
    if (s->h_s->halt == GS_HALT_RELIABLE) /* CG's reliable update: r <- b - A x, and on */
      GS_CHECK(gs_cg_replace(s, user, window, &it, reason));
    else
      *reason = gs_solver_check(s, it - 1, s->h_s->rnorm, window);
    double revise_s = 0.0; /* a revision's builds and timings are not the iterations' time */
    if (*reason == GS_REASON_NONE && staged) {
      const double r0 = gs_wall_seconds();
      GS_CHECK(auto_revise(s, staged, it - 1, d_x));
      revise_s = gs_wall_seconds() - r0;
    }
    if (*reason == GS_REASON_NONE && (s->esc.enabled || s->esc.watch) && esc_due(s, it - 1)) {
      s->esc.drop = s->esc.watch;
      *reason = GS_REASON_ESCALATE;
    }
    if (auto_k && !s->opts.monitor && !persist_k) { /* GS_CHECK_INTERVAL_S between checks */
      /* per iteration, without the revision: otherwise the check after a try (timed
       * products, a build) shortens the interval, and the checks fall at other iterations
       * than a solve of a named format's, so precond auto's forecasts (made at the checks)
       * escalate elsewhere */
      const double now = gs_wall_seconds(), per_it = (now - t_last - revise_s) / todo;
      t_last = now;
      const double want_k = per_it > 0.0 ? GS_CHECK_INTERVAL_S / per_it : GS_CHECK_MAX;
      k = want_k >= GS_CHECK_MAX ? GS_CHECK_MAX : want_k <= 1.0 ? 1 : (int)want_k;
    }
  }
  st->graphs = s->graph_runs > 0;
  if (want && s->graph_off && !persist) st->graphs_note = s->graph_note;
  st->persistent = persist;
  st->vector_bytes += vec_n * 8.0 * (double)s->n * (double)(st->iterations - s->it_base);
  return GS_SUCCESS;
}

/* ---- the solver object ------------------------------------------------------------------------ */

static gs_status_t check_opts(const gs_solve_opts_t *o)
{
  if ((int)o->method < GS_SOLVER_CG || (int)o->method >= NMETHODS)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_solve: unknown method %d", (int)o->method);
  if (!(o->rtol >= 0.0) || !(o->atol >= 0.0) || !isfinite(o->rtol) || !isfinite(o->atol))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_solve: tolerances must be finite and >= 0 "
                    "(rtol %g, atol %g)", o->rtol, o->atol);
  if (o->graphs != 0 && o->graphs != 1)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_solve: graphs must be 0 or 1, not %d", o->graphs);
  if (o->persistent != GS_PERSISTENT_OFF && o->persistent != GS_PERSISTENT_ON &&
      o->persistent != GS_PERSISTENT_AUTO && o->persistent != GS_PERSISTENT_DEFAULT)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_solve: persistent must be GS_PERSISTENT_OFF, _ON, "
                    "_AUTO or _DEFAULT (0, 1, 2, 3), not %d", o->persistent);
  if (o->precond_auto != GS_PRECOND_AUTO_OFF && o->precond_auto != GS_PRECOND_AUTO_AMG)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_solve: precond_auto must be GS_PRECOND_AUTO_OFF or "
                    "_AMG (0, 1), not %d", o->precond_auto);
  if (o->precond_auto == GS_PRECOND_AUTO_AMG)
    GS_CHECK(gs_precond_options_check("amg", o->precond_auto_opts));
  if (o->fallback != GS_FALLBACK_AUTO && o->fallback != GS_FALLBACK_OFF &&
      o->fallback != GS_FALLBACK_GMRES)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_solve: fallback must be GS_FALLBACK_AUTO, _OFF or "
                    "_GMRES (0, 1, 2), not %d", o->fallback);
  if (o->maxit < 0 || o->restart < 1 || o->check_every < 0 || o->stagnation_window < 0)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_solve: maxit >= 0, restart >= 1, check_every >= 0 "
                    "and stagnation_window >= 0 needed (%d, %d, %d, %d)", o->maxit, o->restart,
                    o->check_every, o->stagnation_window);
  return GS_SUCCESS;
}

gs_status_t gs_solver_create(gs_solver_t **out, gs_context_t *ctx, const gs_solve_opts_t *opts)
{
  gs_solve_opts_t o;
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_solver_create: out is NULL");
  *out = NULL;
  if (!ctx) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_solver_create: ctx is NULL");
  if (opts) o = *opts;
  else gs_solve_opts_default(&o);
  GS_CHECK(check_opts(&o));
  gs_solver_t *s = calloc(1, sizeof *s);
  if (!s) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory creating a solver");
  s->ctx = ctx;
  s->given = o;
  s->method = o.method;
  *out = s;
  return GS_SUCCESS;
}

/* Frees what setup made (the stream is idle: every solve ends synchronized). */
static void release(gs_solver_t *s)
{
  gs_context_activate(s->ctx);
  graphs_drop(s);
  s->graph_off = 0;
  s->graph_note = "";
  cudaEvent_t *ev = s->events;
  for (int k = 0; k < s->ev_made; ++k) cudaEventDestroy(ev[k]);
  for (int k = 0; k < 2; ++k)
    if (s->total[k]) cudaEventDestroy(s->total[k]);
  free(s->events);
  free(s->ev_kind);
  if (s->h_work) cudaFreeHost(s->h_work);
  if (s->h_s) cudaFreeHost(s->h_s);
  gs_dfree(s->ctx, s->d_work);
  gs_dfree(s->ctx, s->d_s);
  gs_dfree(s->ctx, s->d_red);
  gs_dfree(s->ctx, s->persist.part);
  gs_dfree(s->ctx, s->persist.long_rows);
  memset(&s->persist, 0, sizeof s->persist);
  s->persist_note = "";
  gs_precond_destroy(&s->esc.M);
  s->esc.enabled = 0;
  s->d_red = NULL;
  s->events = NULL;
  s->total[0] = s->total[1] = NULL;
  s->ev_kind = NULL;
  s->ev_made = s->ev_cap = s->ev_used = 0;
  s->h_work = s->d_work = NULL;
  s->h_s = s->d_s = NULL;
  s->ready = 0;
}

void gs_solver_destroy(gs_solver_t **s)
{
  if (!s || !*s) return;
  release(*s);
  free(*s);
  *s = NULL;
}

gs_method_t gs_solver_method(const gs_solver_t *s) { return s ? s->method : GS_SOLVER_AUTO; }

const gs_precond_t *gs_solver_precond_auto(const gs_solver_t *s) { return s ? s->esc.M : NULL; }

void gs_solver_use_reliable(gs_solver_t *s, gs_operator_t *A_res, double delta, int max_updates)
{
  if (!s) return;
  const int on = A_res && delta > 0.0;
  s->rel.A_res = on ? A_res : NULL;
  s->rel.delta = on ? delta : 0.0;
  s->rel.max_updates = max_updates;
}

void gs_solver_use_vecops(gs_solver_t *s, const gs_vecops_t *vec, void *user, gs_idx_t n_global)
{
  if (!s) return;
  s->vec_given = vec;
  s->vec_user = user;
  s->n_global = n_global;
}

/* Why the persistent iterations cannot serve this setup (host facts only), or NULL. */
static const char *persist_why_not(const gs_solver_t *s, const gs_operator_t *A,
                                   const gs_precond_t *M)
{
  gs_spmv_t *S = gs_operator_spmv(A);
  if (s->method != GS_SOLVER_CG && s->method != GS_SOLVER_BICGSTAB)
    return "only cg and bicgstab have them";
  if (s->rel.A_res)
    return "CG with reliable updates (mixed-refine) multiplies with two products, and the "
           "persistent kernel has one of its own";
  if (s->vec != &gs_vecops_cuda)
    return "the solve runs through another vector table than the single-GPU one (distributed)";
  if (!S || gs_operator_is_transposed(A))
    return "the operator is not the product of a matrix (a shell or a transposed view)";
  if (gs_spmv_precision(S) != GS_PRECISION_DOUBLE)
    return "the product is in mixed precision, and the persistent kernel multiplies in double";
  if (gs_matrix_wide(gs_spmv_matrix(S))) return "the matrix has more than 2^31-1 entries";
  if (M && !gs_precond_jacobi_dinv(M)) return "the preconditioner is not jacobi";
  const gs_csr_t *h = gs_matrix_host(gs_spmv_matrix(S));
  if (s->opts.persistent == GS_PERSISTENT_AUTO && h->nnz > GS_PERSIST_AUTO_NNZ)
    return "auto takes them for matrices of at most 2^21 entries";
  if (s->opts.persistent == GS_PERSISTENT_AUTO && h->m > 0) {
    /* The kernel's product gives a row tpr threads, or a whole block (GS_PERSIST_THREADS) from
     * gs_persist_long_min entries on, and the grid waits for its longest row at every barrier:
     * auto leaves a row of more than GS_PERSIST_AUTO_ROW_STEPS steps to the loop's balanced
     * products. With tpr threads only (run 87, H100) the power-law graphs as-caida (657 steps),
     * email-Enron (173) and memplus (144) ran BiCGSTAB 1.6-6x slower than the best format; a
     * block takes their longest rows in 11, 6 and 3 steps. */
    const gs_off_t longest = gs_matrix_features(gs_spmv_matrix(S))->row_max;
    const int tpr = gs_persist_tpr((double)h->nnz / (double)h->m);
    const gs_off_t lanes = longest >= gs_persist_long_min(tpr) ? GS_PERSIST_THREADS : tpr;
    if (longest > (gs_off_t)GS_PERSIST_AUTO_ROW_STEPS * lanes)
      return "auto leaves matrices with rows far longer than a block can take in a few steps "
             "to the loop";
  }
  return NULL;
}

/* opts.persistent: plans the persistent iterations (s->persist.use) or says why not
 * (s->persist_note); GS_PERSISTENT_ON refuses the setup instead. Before the allocations with
 * check_only (host facts), after them with the device's. */
static gs_status_t persist_setup(gs_solver_t *s, gs_operator_t *A, gs_precond_t *M,
                                 int check_only)
{
  if (s->opts.persistent == GS_PERSISTENT_OFF) return GS_SUCCESS;
  const char *why = persist_why_not(s, A, M);
  if (!why && !check_only) {
    gs_dcsr_t dc;
    gs_matrix_t *Am = gs_spmv_matrix(gs_operator_spmv(A));
    GS_CHECK(gs_matrix_device_csr(Am, &dc));
    GS_CHECK(gs_persist_plan(s, &dc, gs_matrix_host(Am), M ? gs_precond_jacobi_dinv(M) : NULL,
                             &why));
  }
  if (why && s->opts.persistent == GS_PERSISTENT_ON)
    return GS_ERROR(GS_ERR_UNSUPPORTED, "gs_solve: persistent iterations were asked for, but %s "
                    "(use auto to fall back)", why);
  s->persist_note = why ? why : "";
  return GS_SUCCESS;
}

gs_status_t gs_solver_setup(gs_solver_t *s, gs_operator_t *A, gs_precond_t *M)
{
  gs_status_t st = GS_SUCCESS;
  if (!s || !A) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_solver_setup: NULL argument");
  if (gs_operator_context(A) != s->ctx)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_solve: the operator (SpMV) was prepared on another "
                    "context than the solve's: pass the context it was created on");
  if (M && gs_precond_context(M) != s->ctx)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_solve: the preconditioner was created on another "
                    "context than the solve's: pass the context it was created on");
  const gs_idx_t m = gs_operator_rows(A), n = gs_operator_cols(A);
  gs_solve_opts_t o = s->given;
  if (o.method == GS_SOLVER_AUTO) {
    gs_matrix_t *Am = gs_operator_matrix(A);
    /* a transposed view of a symmetric matrix is the matrix itself; a shell says nothing but
     * its shape */
    o.method = m != n ? GS_SOLVER_LSQR : Am ? gs_solve_auto_method(Am) : GS_SOLVER_BICGSTAB;
  }
  /* for this operator (s->given keeps DEFAULT: another setup resolves it again); a shell or a
   * transposed view has no product, hence no selection */
  o.persistent = gs_solve_persistent_resolve(
      o.persistent, gs_spmv_selection(gs_operator_spmv(A)) != NULL);
  /* what the method needs, checked before anything runs on the device */
  const unsigned fl = methods[o.method].flags;
  const char *name = gs_method_string(o.method);
  if ((fl & GS_METHOD_SQUARE) && m != n)
    return GS_ERROR(GS_ERR_DIMENSION, "gs_solve: %s needs a square matrix, and A is %d x %d "
                    "(cgnr and lsqr solve least-squares problems)", name, (int)m, (int)n);
  if ((fl & GS_METHOD_TRANSPOSE) && !(gs_operator_caps(A) & GS_SPMV_CAP_TRANSPOSE))
    return GS_ERROR(GS_ERR_UNSUPPORTED, "gs_solve: %s needs products with A^T, and the SpMV "
                    "backend '%s' has no transpose product for this matrix", name,
                    gs_operator_name(A));
  if (M && !gs_precond_is_identity(M)) {
    if (fl & GS_METHOD_LEAST_SQUARES)
      return GS_ERROR(GS_ERR_UNSUPPORTED, "gs_solve: %s takes no preconditioner (given %s): "
                      "it works on A^T A, which the preconditioners of A do not approximate",
                      name, gs_precond_name(M));
    if ((fl & GS_METHOD_SYMMETRIC_PC) && !gs_precond_is_symmetric(M))
      return GS_ERROR(GS_ERR_UNSUPPORTED, "gs_solve: %s applies M^-T as well as M^-1, and "
                      "preconditioner %s is not symmetric (no transpose solve): use jacobi, or "
                      "ic0 for a symmetric matrix", name, gs_precond_name(M));
  }
  if (M && gs_precond_size(M) != n)
    return GS_ERROR(GS_ERR_DIMENSION, "gs_solve: the preconditioner has order %d, the matrix %d",
                    (int)gs_precond_size(M), (int)n);
  if (s->rel.A_res) {
    if (o.method != GS_SOLVER_CG)
      return GS_ERROR(GS_ERR_UNSUPPORTED, "gs_solve: reliable updates are CG's (the method is "
                      "%s)", name);
    if (gs_operator_context(s->rel.A_res) != s->ctx || gs_operator_rows(s->rel.A_res) != m ||
        gs_operator_cols(s->rel.A_res) != n)
      return GS_ERROR(GS_ERR_INVALID_ARG, "gs_solve: the residual operator of the reliable "
                      "updates is not of the operator's size and context");
  }
  GS_CHECK(gs_context_activate(s->ctx));
  release(s);

  const gs_idx_t n_all = s->n_global > 0 ? s->n_global : n; /* GMRES's space is the whole one */
  if (o.restart > n_all) o.restart = n_all > 0 ? n_all : 1;
  /* check_every 0 (automatic) is gs_solver_iterate's to resolve; the loops of the other
   * methods read the norm every iteration then */
  if (o.check_every == 0) o.check_every = 1;
  s->method = o.method;
  s->flags = fl;
  s->opts = o;
  s->A = A;
  s->M = gs_precond_is_identity(M) ? NULL : M;
  s->vec = s->vec_given ? s->vec_given : gs_vecops_for(s->ctx);
  s->m = m;
  s->n = n;
  s->ld = ((size_t)(m > n ? m : n) + 31) / 32 * 32;
  if (m == 0 || n == 0) {
    s->ready = 1;
    return GS_SUCCESS;
  }
  GS_CHECK(persist_setup(s, A, s->M, 1)); /* refused before anything is allocated */
  s->esc.why = o.precond_auto != GS_PRECOND_AUTO_AMG ? ""
               : s->M                            ? "a preconditioner was given"
               : o.method != GS_SOLVER_CG        ? "only CG escalates to amg"
               : !gs_operator_matrix(A)          ? "the operator has no matrix"
               : s->vec_given || s->rel.A_res    ? "not in distributed or reliable-update solves"
                                                 : NULL;
  s->esc.enabled = s->esc.why == NULL;
  if (!s->esc.why) s->esc.why = "";

  /* scalar block, workspace, events */
  s->nvec = methods[o.method].work(s, &s->host_doubles);
  GS_TRY(gs_dmalloc(s->ctx, (void **)&s->d_s, sizeof *s->d_s, "the solver's scalars"));
  GS_TRY(gs_dmalloc(s->ctx, (void **)&s->d_red, GS_RED_SLOTS * sizeof *s->d_red,
                    "the solver's reductions"));
  GS_TRY(GS_CUDA(cudaMemsetAsync(s->d_red, 0, GS_RED_SLOTS * sizeof *s->d_red, s->ctx->stream)));
  GS_TRY(GS_CUDA(cudaMallocHost((void **)&s->h_s, sizeof *s->h_s)));
  GS_TRY(gs_dmalloc(s->ctx, (void **)&s->d_work, s->nvec * s->ld * sizeof(double),
                    "the solver's work vectors"));
  if (s->host_doubles)
    GS_TRY(GS_CUDA(cudaMallocHost((void **)&s->h_work, s->host_doubles * sizeof(double))));
  GS_TRY(GS_CUDA(cudaEventCreate(&s->total[0])));
  GS_TRY(GS_CUDA(cudaEventCreate(&s->total[1])));
  if (o.timing) {
    long cap = 4L * (o.check_every > 0 ? o.check_every : GS_CHECK_MAX) + 8;
    s->ev_cap = (int)(cap < 1024 ? cap : 1024);
    s->events = calloc(2 * (size_t)s->ev_cap, sizeof *s->events);
    s->ev_kind = calloc((size_t)s->ev_cap, 1);
    if (!s->events || !s->ev_kind) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory for timing");
    cudaEvent_t *ev = s->events;
    for (; s->ev_made < 2 * s->ev_cap; ++s->ev_made)
      GS_TRY(GS_CUDA(cudaEventCreate(&ev[s->ev_made])));
  }
  memset(s->h_s, 0, sizeof *s->h_s);
  s->h_s->one = 1.0;
  s->h_s->minus_one = -1.0;
  GS_TRY(GS_CUDA(cudaMemcpyAsync(s->d_s, s->h_s, sizeof *s->h_s, cudaMemcpyHostToDevice,
                                 s->ctx->stream)));
  GS_TRY(GS_CUDA(cudaStreamSynchronize(s->ctx->stream)));
  s->one = &s->d_s->one;
  s->zero = &s->d_s->zero;
  s->minus_one = &s->d_s->minus_one;
  GS_TRY(persist_setup(s, A, s->M, 0));
  s->ready = 1;
cleanup:
  if (st != GS_SUCCESS) release(s);
  return st;
}

/* Whether the recomputed true residual (h_s after the end-of-solve fetch) honours the converged
 * reason, within `slack` times the tolerance: ||b - Ax|| for the square methods, ||A^T (b - Ax)||
 * for CGNR, LSQR's own tests for LSQR. */
static int true_residual_ok(const gs_solver_t *s, double slack)
{
  if (s->method == GS_SOLVER_LSQR) return gs_lsqr_accept(s, slack);
  if (s->flags & GS_METHOD_LEAST_SQUARES) return s->h_s->arnorm <= slack * s->tol;
  return s->h_s->rnorm <= slack * s->tol;
}

/* halt, halt_what, halt_done and true_done are adjacent ints of the scalar block: one memset. */
gs_status_t gs_solver_clear_halt(gs_solver_t *s)
{
  const size_t bytes = offsetof(gs_dscalars_t, true_done) + sizeof s->d_s->true_done -
                       offsetof(gs_dscalars_t, halt);
  s->h_s->halt = s->h_s->halt_what = s->h_s->halt_done = s->h_s->true_done = 0;
  return GS_CUDA(cudaMemsetAsync(&s->d_s->halt, 0, bytes, s->ctx->stream));
}

/* One call of the method, and the pass after an escalation to a preconditioner. */
static gs_status_t method_solve(gs_solver_t *s, double *d_x)
{
  GS_CHECK(methods[s->method].solve(s, d_x, s->d_work, s->h_work));
  const double r0 = s->stats->rnorm0; /* the next pass's start sets its own */
  /* at most twice: escalate() turns the escalation off, and the watch after a drop */
  while (s->stats->reason == GS_REASON_ESCALATE) {
    s->stats->reason = GS_REASON_NONE;
    GS_CHECK(escalate(s));
    GS_CHECK(methods[s->method].solve(s, d_x, s->d_work, s->h_work));
    s->stats->rnorm0 = r0;
  }
  return GS_SUCCESS;
}

/* The iteration and the true-residual passes of one solve (device pointer mode is set). */
static gs_status_t run(gs_solver_t *s, double *d_x)
{
  gs_solve_stats_t *stats = s->stats;
  cudaEvent_t *tot = s->total;
  const int maxit = s->given.maxit;
  const int lsq = (s->flags & GS_METHOD_LEAST_SQUARES) != 0;
  double *t = s->d_work + s->ld; /* work vector 1: A^T b, A^T r (n entries) */
  GS_CHECK(GS_CUDA(cudaEventRecord(tot[0], s->ctx->stream)));
  const int whole = gs_persist_whole(s); /* the kernel forms ||b|| and tol itself */
  if (!whole) GS_CHECK(s->vec->nrm2(s, s->m, s->d_b, &s->d_s->bnorm));
  s->start_reason = GS_REASON_NONE;
  if (!lsq && s->vec == &gs_vecops_cuda) {
    /* The deferred start: the device forms tol from ||b|| and the method begins at once; the
     * host learns ||b|| at the method's first fetch (start_known), whose check returns the
     * reason b imposes, if any, before any iteration: one host round trip less per solve, a
     * tenth of a short solve's start and end (issue 14). */
    if (!whole)
      GS_CHECK(gs_kernel_start_tol(s->ctx->stream, s->d_s, s->opts.rtol, s->opts.atol));
    s->start_pending = 1;
    GS_CHECK(method_solve(s, d_x));
    s->start_pending = 0;
    const gs_reason_t why = s->start_reason;
    s->start_reason = GS_REASON_NONE;
    if (why != GS_REASON_NONE) {
      s->h_s->true_done = 0; /* of x0: x is answered below */
      stats->reason = why;
      stats->detail = s->start_detail;
      stats->iterations = 0;
      if (why == GS_CONVERGED_ATOL) GS_CHECK(s->vec->zero(s, s->n, d_x)); /* b = 0: x = 0 */
    }
  } else {
    s->start_pending = 0;
    if (lsq) { /* ||A^T b||: what CGNR's rtol scales, as in CG on A^T A x = A^T b */
      GS_CHECK(gs_solver_apply(s, GS_OP_T, 1.0, s->d_b, 0.0, t));
      GS_CHECK(s->vec->nrm2(s, s->n, t, &s->d_s->arnorm));
    }
    GS_CHECK(gs_solver_fetch(s));
    s->bnorm = s->h_s->bnorm;
    s->refnorm = lsq ? s->h_s->arnorm : s->bnorm;
    s->tol_rel = s->opts.rtol * s->refnorm;
    s->tol = GS_SOLVE_TOL(s->opts.rtol, s->refnorm, s->opts.atol);
    s->h_s->tol = s->tol; /* for the device-side tests (pinned: copied when the stream gets there) */
    GS_CHECK(GS_CUDA(cudaMemcpyAsync(&s->d_s->tol, &s->h_s->tol, sizeof s->h_s->tol,
                                     cudaMemcpyHostToDevice, s->ctx->stream)));
    stats->bnorm = s->bnorm;
    if (!isfinite(s->bnorm) || !isfinite(s->refnorm)) {
      stats->reason = GS_DIVERGED_NANINF;
      stats->detail = isfinite(s->bnorm) ? "||A^T b|| is not finite" : "||b|| is not finite";
    } else if (s->bnorm == 0.0) { /* b = 0: x = 0 exactly, as SciPy and PETSc answer */
      GS_CHECK(s->vec->zero(s, s->n, d_x));
      stats->reason = GS_CONVERGED_ATOL;
    } else if (s->refnorm == 0.0) { /* A^T b = 0: x = 0, the minimum-norm least-squares solution */
      GS_CHECK(s->vec->zero(s, s->n, d_x));
      stats->reason = GS_CONVERGED_RTOL_NORMAL;
    } else {
      GS_CHECK(method_solve(s, d_x));
    }
  }

  /* The true residual of the returned x. A recurrence residual can drift below the tolerance
   * while b - Ax stays well above it: then the method restarts from x with the true residual,
   * at most GS_RESIDUAL_RESTARTS times and within maxit, so that "converged" means a true
   * residual within GS_TRUE_RESIDUAL_SLACK times the tolerance. The slack leaves the usual
   * rounding gap of ill-conditioned systems alone (CG on nos7, condition ~1e9, ends at a true
   * 1.1-1.9e-8 for rtol 1e-8, as SciPy's does) instead of paying restarts for it.
   * Least squares: the same with ||A^T (b - Ax)|| (and for LSQR ||x||, for its tests). */
  for (int pass = 0;; ++pass) {
    if (s->h_s->true_done) { /* the persistent kernel ended the pass with it (and tot[1]) */
      s->h_s->rnorm = s->h_s->true_rnorm;
    } else {
      GS_CHECK(gs_solver_residual(s, d_x, s->d_work));
      GS_CHECK(s->vec->nrm2(s, s->m, s->d_work, &s->d_s->rnorm));
      if (lsq) {
        GS_CHECK(gs_solver_apply(s, GS_OP_T, 1.0, s->d_work, 0.0, t));     /* A^T (b - Ax) */
        GS_CHECK(s->vec->nrm2(s, s->n, t, &s->d_s->arnorm));
        GS_CHECK(s->vec->nrm2(s, s->n, d_x, &s->d_s->xnorm));
      }
      /* the solve's end, if this pass is the last: its fetch is the solve's last round trip */
      GS_CHECK(GS_CUDA(cudaEventRecord(tot[1], s->ctx->stream)));
      GS_CHECK(gs_solver_fetch(s));
    }
    if (!gs_reason_converged(stats->reason) || true_residual_ok(s, GS_TRUE_RESIDUAL_SLACK) ||
        pass == GS_RESIDUAL_RESTARTS || stats->iterations >= maxit)
      break;
    s->opts.x0_given = 1;
    s->opts.maxit = maxit - stats->iterations;
    s->it_base = stats->iterations;
    stats->restarts++;
    /* The halt code that ended the pass (BiCGSTAB's half step, LSQR's tests) is sticky: left
     * set, every kernel of the next pass would return at once and its first check would
     * report the old stop again, with a wrong count. */
    GS_CHECK(gs_solver_clear_halt(s));
    GS_CHECK(method_solve(s, d_x));
  }
  if (gs_reason_converged(stats->reason) && !true_residual_ok(s, GS_TRUE_RESIDUAL_SLACK)) {
    stats->reason = stats->iterations >= maxit ? GS_DIVERGED_MAXIT : GS_DIVERGED_STAGNATION;
    stats->detail = lsq ? "the recurrence converged but the true A^T (b - Ax) did not"
                        : "the recurrence converged but the true residual b - Ax did not";
  }
  stats->true_residual_norm = s->h_s->rnorm;
  stats->rel_residual = s->bnorm > 0.0 ? stats->true_residual_norm / s->bnorm
                                       : stats->true_residual_norm;
  if (lsq) {
    stats->normal_residual_norm = s->h_s->arnorm;
    stats->rel_normal_residual = s->refnorm > 0.0 ? s->h_s->arnorm / s->refnorm
                                                  : s->h_s->arnorm;
  }
  if (s->method == GS_SOLVER_LSQR) {
    stats->anorm = s->h_s->ls.anorm;
    stats->acond = s->h_s->ls.acond;
  }
  float ms = 0.0f;
  GS_CHECK(GS_CUDA(cudaEventElapsedTime(&ms, tot[0], tot[1])));
  stats->seconds_total = 1e-3 * ms;
  /* Products and preconditioner calls replayed from graphs were not timed one by one: count
   * them at the mean time of those that were. */
  const long own = stats->spmv_count - s->rel.products; /* the reliable updates' stand apart */
  const long gs = own - s->eager_spmv, gp = stats->precond_count - s->eager_precond;
  if (s->graph_runs > 0 && s->eager_spmv > 0 && gs > 0)
    stats->seconds_spmv *= (double)own / (double)s->eager_spmv;
  stats->seconds_spmv += s->rel.seconds;
  if (s->graph_runs > 0 && s->eager_precond > 0 && gp > 0)
    stats->seconds_precond *= (double)stats->precond_count / (double)s->eager_precond;
  return GS_SUCCESS;
}

static gs_status_t solve_once(gs_solver_t *s, const double *d_b, double *d_x,
                             gs_solve_stats_t *stats)
{
  gs_status_t st = GS_SUCCESS;
  gs_solve_stats_t local;
  cublasPointerMode_t old_mode = CUBLAS_POINTER_MODE_HOST;
  int mode_saved = 0;
  if (!stats) stats = &local;
  memset(stats, 0, sizeof *stats);
  stats->detail = stats->precond_auto_note = stats->fallback_detail = stats->fallback_note = "";
  stats->precond_auto_iteration = stats->fallback_iteration = -1;
  if (!s) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_solver_solve: s is NULL");
  if (!s->ready)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_solver_solve: call gs_solver_setup first");
  if ((s->m > 0 && !d_b) || (s->n > 0 && !d_x))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_solve: NULL argument");
  if (s->m > 0 && s->n > 0 && (const double *)d_x == d_b)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_solve: x and b must be different vectors");
  double t0 = gs_wall_seconds();
  stats->method = s->method;
  stats->seconds_precond_setup = gs_precond_setup_seconds(s->M);
  if (s->m == 0 || s->n == 0) { /* nothing to iterate on */
    stats->reason = (s->flags & GS_METHOD_LEAST_SQUARES) ? GS_CONVERGED_RTOL_NORMAL
                                                         : GS_CONVERGED_RTOL;
    if (s->n == 0 && s->m == 0) return GS_SUCCESS;
    GS_CHECK(gs_context_activate(s->ctx));
    if (s->n > 0) { /* m = 0: x = 0, the minimum-norm solution */
      GS_CHECK(GS_CUDA(cudaMemsetAsync(d_x, 0, (size_t)s->n * sizeof *d_x, s->ctx->stream)));
      return GS_CUDA(cudaStreamSynchronize(s->ctx->stream));
    }
    /* n = 0: no unknowns, r = b (the handle is in host pointer mode at rest) */
    double bn = 0.0;
    GS_CHECK(GS_CUBLAS(cublasDnrm2(s->ctx->cublas, s->m, d_b, 1, &bn)));
    stats->bnorm = stats->rnorm0 = stats->rnorm = stats->true_residual_norm = bn;
    stats->rel_residual = bn > 0.0 ? 1.0 : 0.0;
    return GS_SUCCESS;
  }
  GS_CHECK(gs_context_activate(s->ctx));
  /* per-solve state; the resolved options come back from the given ones (a fallback's
   * GMRES counts on from the failed method's iterations, within the same limit) */
  s->opts.x0_given = s->given.x0_given;
  s->opts.maxit = s->given.maxit - s->fb_base;
  s->d_b = d_b;
  s->stats = stats;
  s->it_base = s->fb_base;
  s->best = 0.0;
  s->best_it = 0;
  s->ev_used = 0;
  s->bnorm = s->tol = 0.0;
  s->graph_runs = s->eager_spmv = s->eager_precond = 0;
  stats->graphs_note = "";
  stats->persistent_note = s->persist_note ? s->persist_note : "";
  stats->precond_auto_iteration = -1;
  stats->precond_auto_note = s->esc.why ? s->esc.why : "";
  if (s->esc.M) s->M = s->esc.M; /* an earlier solve escalated: this one starts with it */
  s->esc.hist.n = 0;
  s->esc.watch = s->esc.drop = s->esc.limit = 0; /* the watch is the escalating solve's own */

  /* The pointer-mode rule: the context's handles are in host mode at rest; a solve switches
   * cuBLAS to device mode (scalars stay in the scalar block) and restores the caller's mode on
   * every return. cuSPARSE backends set host mode themselves at each call. */
  /* A fresh scalar block: halt codes are sticky within a solve (a BiCGSTAB half-step
   * convergence, a breakdown) and must not leak into the next one. */
  memset(s->h_s, 0, sizeof *s->h_s);
  s->h_s->one = 1.0;
  s->h_s->minus_one = -1.0;
  s->h_s->rel_delta = s->rel.delta; /* the device's reliable-update test (0: off) */
  s->rel.updates = s->rel.increases = 0;
  s->rel.last = s->rel.seconds = 0.0;
  s->rel.products = 0;
  GS_TRY(GS_CUDA(cudaMemcpyAsync(s->d_s, s->h_s, sizeof *s->h_s, cudaMemcpyHostToDevice,
                                 s->ctx->stream)));
  GS_TRY(GS_CUBLAS(cublasGetPointerMode(s->ctx->cublas, &old_mode)));
  GS_TRY(GS_CUBLAS(cublasSetPointerMode(s->ctx->cublas, CUBLAS_POINTER_MODE_DEVICE)));
  mode_saved = 1;
  if (!s->opts.x0_given && !gs_persist_whole(s)) GS_TRY(s->vec->zero(s, s->n, d_x)); /* or the
                                                                        kernel's start does */
  stats->seconds_setup = gs_wall_seconds() - t0;
  GS_TRY(run(s, d_x));

cleanup:
  if (st != GS_SUCCESS) {
    stats->reason = GS_REASON_NONE;
    cudaStreamSynchronize(s->ctx->stream); /* nothing may still use the workspace */
  }
  if (mode_saved) cublasSetPointerMode(s->ctx->cublas, old_mode);
  s->stats = NULL;
  s->d_b = NULL;
  return st;
}

void gs_solve_stats_add_work(gs_solve_stats_t *to, const gs_solve_stats_t *from)
{
  to->spmv_count += from->spmv_count;
  to->precond_count += from->precond_count;
  to->seconds_spmv += from->seconds_spmv;
  to->seconds_precond += from->seconds_precond;
  to->checks += from->checks;
  to->vector_bytes += from->vector_bytes;
  to->graphs = from->graphs;
  to->graphs_note = from->graphs_note;
  to->persistent = from->persistent;
  to->persistent_note = from->persistent_note;
}

/* ---- opts.fallback: GMRES after a failure of CG or BiCGSTAB that GMRES cannot have ------------ */

/* Whether opts.fallback covers this solver's method and setting (not its outcome). */
static int fallback_on(const gs_solver_t *s)
{
  const int asked = s->given.fallback == GS_FALLBACK_GMRES ||
                    (s->given.fallback == GS_FALLBACK_AUTO && s->given.method == GS_SOLVER_AUTO);
  return asked && !s->vec_given && !s->rel.A_res &&
         (s->method == GS_SOLVER_CG || s->method == GS_SOLVER_BICGSTAB);
}

/* Whether the finished solve in stats falls back (opts.fallback). */
static int fallback_due(const gs_solver_t *s, const gs_solve_stats_t *st)
{
  /* a b that is not finite fails every method alike */
  if (!fallback_on(s) || st->iterations >= s->given.maxit ||
      !isfinite(st->bnorm) || !isfinite(st->rnorm0))
    return 0;
  if (s->method == GS_SOLVER_CG)
    return st->reason == GS_DIVERGED_INDEFINITE || st->reason == GS_DIVERGED_NANINF;
  if (s->method == GS_SOLVER_BICGSTAB)
    return st->reason == GS_DIVERGED_BREAKDOWN || st->reason == GS_DIVERGED_NANINF ||
           st->reason == GS_DIVERGED_DTOL;
  return 0;
}

/* The solver set up again as GMRES (the same operator; the preconditioner the failed solve
 * ended with, an escalation's AMG kept as the solver's own), then solved from x, or from 0
 * where the failed pass left x worse than x0 or not finite. On a setup that fails the solver is
 * set up as it was and the failed solve's stats stand, with a note. */
static gs_status_t fall_back(gs_solver_t *s, const double *d_b, double *d_x,
                             gs_solve_stats_t *stats)
{
  const gs_solve_stats_t first = *stats;
  const gs_solve_opts_t given = s->given;
  const double t0 = gs_wall_seconds();
  gs_precond_t *esc = s->esc.M, *M = esc ? esc : s->M;
  s->esc.M = NULL; /* release() in the setup would destroy it */
  s->given.method = GS_SOLVER_GMRES;
  s->given.persistent = GS_PERSISTENT_OFF;
  s->given.precond_auto = GS_PRECOND_AUTO_OFF;
  gs_status_t st = gs_solver_setup(s, s->A, M);
  const double setup_s = gs_wall_seconds() - t0; /* GMRES's workspace: the switch's cost */
  if (st != GS_SUCCESS) {
    const char *why = st == GS_ERR_DEVICE_MEMORY || st == GS_ERR_HOST_MEMORY
                          ? "no fallback: GMRES's workspace could not be allocated"
                          : "no fallback: GMRES could not be set up";
    gs_clear_error();
    s->given = given;
    st = gs_solver_setup(s, s->A, M);
    s->esc.M = esc;
    if (st != GS_SUCCESS) return st;
    if (esc) s->M = esc;
    stats->fallback_note = why;
    return GS_SUCCESS;
  }
  s->esc.M = esc;
  const int keep_x = isfinite(first.true_residual_norm) &&
                     first.true_residual_norm < first.rnorm0;
  s->given.x0_given = keep_x;
  s->fb_base = first.iterations;
  st = solve_once(s, d_b, d_x, stats);
  s->fb_base = 0;
  /* the solver keeps GMRES (s->method); the caller's options come back for what they say */
  s->given = given;
  s->opts.x0_given = given.x0_given;
  if (st != GS_SUCCESS) return st;
  stats->method = GS_SOLVER_GMRES;
  stats->fallback_iteration = first.iterations;
  stats->fallback_from = first.method;
  stats->fallback_reason = first.reason;
  stats->fallback_detail = first.detail;
  stats->fallback_note = keep_x ? "GMRES went on from the failed method's x"
                                : "GMRES started again from x = 0 (the failed method's x had a "
                                  "larger or non-finite residual)";
  /* both solves: the first pass's start, counts and times summed */
  stats->rnorm0 = first.rnorm0;
  stats->restarts += first.restarts;
  stats->seconds_total += first.seconds_total;
  stats->seconds_setup += first.seconds_setup + setup_s;
  gs_solve_stats_add_work(stats, &first); /* the flags of the method that ran first */
  stats->precond_auto_iteration = first.precond_auto_iteration;
  stats->precond_auto_setup_s = first.precond_auto_setup_s;
  stats->precond_auto_left_s = first.precond_auto_left_s;
  stats->precond_auto_cost_s = first.precond_auto_cost_s;
  stats->precond_auto_levels = first.precond_auto_levels;
  stats->precond_auto_complexity = first.precond_auto_complexity;
  stats->precond_auto_note = first.precond_auto_note;
  stats->precond_auto_limit = first.precond_auto_limit;
  return GS_SUCCESS;
}

gs_status_t gs_solver_solve(gs_solver_t *s, const double *d_b, double *d_x,
                            gs_solve_stats_t *stats)
{
  gs_solve_stats_t local;
  if (!stats) stats = &local;
  if (s) s->dtol_on = s->method == GS_SOLVER_BICGSTAB && fallback_on(s); /* GMRES's turn */
  const gs_status_t st = solve_once(s, d_b, d_x, stats); /* refuses a NULL s */
  if (s) s->dtol_on = 0;
  GS_CHECK(st);
  return fallback_due(s, stats) ? fall_back(s, d_b, d_x, stats) : GS_SUCCESS;
}

/* ---- gs_solve: the one-call convenience ------------------------------------------------------- */

gs_status_t gs_solve(gs_context_t *ctx, const gs_solve_opts_t *opts, gs_spmv_t *S,
                     gs_precond_t *M, const double *d_b, double *d_x, gs_solve_stats_t *stats)
{
  gs_status_t st = GS_SUCCESS;
  gs_operator_t *A = NULL;
  gs_solver_t *s = NULL;
  gs_solve_stats_t local;
  if (!stats) stats = &local;
  memset(stats, 0, sizeof *stats);
  stats->detail = stats->precond_auto_note = stats->fallback_detail = stats->fallback_note = "";
  stats->precond_auto_iteration = stats->fallback_iteration = -1;
  if (!ctx) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_solve: ctx is NULL");
  if (!S || !d_b || !d_x) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_solve: NULL argument");
  double t0 = gs_wall_seconds();
  GS_TRY(gs_operator_from_spmv(&A, S));
  GS_TRY(gs_solver_create(&s, ctx, opts));
  GS_TRY(gs_solver_setup(s, A, M));
  double t_setup = gs_wall_seconds() - t0;
  GS_TRY(gs_solver_solve(s, d_b, d_x, stats));
  stats->seconds_setup += t_setup; /* the convenience call pays the allocation each time */
cleanup:
  gs_solver_destroy(&s);
  gs_operator_destroy(&A);
  return st;
}
