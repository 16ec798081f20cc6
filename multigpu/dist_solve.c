/* multigpu/dist_solve.c: the Krylov solvers across the ranks. Every rank runs the single-GPU
 * method (solvers/) on its rows, with two substitutions through the solver's seams: the
 * operator is the rank's part of the distributed product (dist_matrix.c), and the vector table
 * is the single-GPU one plus an all-reduce after each reduction (hypre's ParVector inner
 * product, PETSc's VecDot_MPI). Pipelined CG's three dot products go through one all-reduce
 * (the table's `dots`); CG, BiCGSTAB and GMRES take one per reduction.
 *
 * The ranks stop together because every scalar a stopping test reads is all-reduced (the same
 * bits on every rank) and every rank launches the same iterations between host checks (a fixed
 * check interval, never the wall-clock-grown one of a single GPU). */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "gpusolve/timer.h"
#include "multigpu/dist_impl.h"

/* ---- the reducing vector table ------------------------------------------------------------ */

static gs_dist_rank_t *rank_of(gs_solver_t *s) { return (gs_dist_rank_t *)s->vec_user; }

static gs_status_t d_dot(gs_solver_t *s, gs_idx_t len, const double *x, const double *y,
                         double *d_out)
{
  GS_CHECK(gs_vecops_cuda.dot(s, len, x, y, d_out));
  return gs_dist_allreduce(rank_of(s), d_out, 1);
}

/* ||x|| = sqrt(sum over ranks of x_r^T x_r): a norm cannot be all-reduced, its square can. */
static gs_status_t d_nrm2(gs_solver_t *s, gs_idx_t len, const double *x, double *d_out)
{
  GS_CHECK(gs_vecops_cuda.dot(s, len, x, x, d_out));
  GS_CHECK(gs_dist_allreduce(rank_of(s), d_out, 1));
  return gs_dist_sqrt(s->ctx->stream, d_out);
}

static gs_status_t d_mdot(gs_solver_t *s, int k, const double *V, size_t ld, const double *w,
                          double *d_h)
{
  GS_CHECK(gs_vecops_cuda.mdot(s, k, V, ld, w, d_h));
  return gs_dist_allreduce(rank_of(s), d_h, k);
}

static gs_status_t d_dots(gs_solver_t *s, gs_idx_t len, int k, const double *const *x,
                          const double *const *y, double *d_out)
{
  GS_CHECK(gs_vecops_cuda.dots(s, len, k, x, y, d_out));
  return gs_dist_allreduce(rank_of(s), d_out, k);
}

/* copy, zero, scale, axpy and gemv touch the rank's own entries (or, for GMRES's small
 * vectors, values every rank holds alike): the single-GPU ones */
static gs_status_t d_copy(gs_solver_t *s, gs_idx_t len, const double *x, double *y)
{
  return gs_vecops_cuda.copy(s, len, x, y);
}
static gs_status_t d_zero(gs_solver_t *s, gs_idx_t len, double *x)
{
  return gs_vecops_cuda.zero(s, len, x);
}
static gs_status_t d_scale(gs_solver_t *s, gs_idx_t len, double alpha, double *x)
{
  return gs_vecops_cuda.scale(s, len, alpha, x);
}
static gs_status_t d_axpy(gs_solver_t *s, size_t len, const double *d_alpha, const double *x,
                          double *y)
{
  return gs_vecops_cuda.axpy(s, len, d_alpha, x, y);
}
static gs_status_t d_gemv(gs_solver_t *s, int k, const double *d_alpha, const double *V,
                          size_t ld, const double *h, const double *d_beta, double *w)
{
  return gs_vecops_cuda.gemv(s, k, d_alpha, V, ld, h, d_beta, w);
}

static const gs_vecops_t vecops_dist = {"distributed", d_dot,  d_nrm2, d_mdot, d_copy,
                                        d_zero,        d_scale, d_axpy, d_gemv, d_dots};

/* ---- the solve ---------------------------------------------------------------------------- */

typedef struct {
  gs_dist_matrix_t *A;
  gs_solve_opts_t opts;
  const char *precond;
  const double *b;
  double *x;
  gs_solve_stats_t *stats; /* one per rank */
} solve_job_t;

static gs_status_t solve_rank(gs_dist_rank_t *R, void *user)
{
  solve_job_t *j = (solve_job_t *)user;
  gs_dist_part_t *P = &j->A->p[R->rank];
  gs_context_t *ctx = R->ctx;
  const size_t bytes = (size_t)P->rows * sizeof(double);
  const double t0 = gs_wall_seconds();
  gs_solver_t *s = NULL;
  gs_precond_t *M = NULL;
  double *d_b = NULL, *d_x = NULL;
  gs_solve_opts_t o = j->opts;
  if (R->rank != 0) o.monitor = NULL;
  gs_status_t st = gs_solver_create(&s, ctx, &o);
  if (st == GS_SUCCESS) gs_solver_use_vecops(s, &vecops_dist, R, j->A->n);
  if (st == GS_SUCCESS && strcmp(j->precond, "none") != 0)
    st = gs_precond_create(&M, ctx, P->Md, j->precond);
  if (st == GS_SUCCESS) st = gs_solver_setup(s, P->op, M);
  if (st == GS_SUCCESS) st = gs_dmalloc(ctx, (void **)&d_b, bytes, "b");
  if (st == GS_SUCCESS) st = gs_dmalloc(ctx, (void **)&d_x, bytes, "x");
  if (st == GS_SUCCESS) st = gs_dist_part_copy(P, 1, d_b, (double *)j->b);
  if (st == GS_SUCCESS && o.x0_given) st = gs_dist_part_copy(P, 1, d_x, j->x);
  const double setup_s = gs_wall_seconds() - t0; /* solver, preconditioner, b and x0 in */
  /* everyone set up, or nobody starts: a rank out of memory stops them all here */
  st = gs_dist_agree(R, st);
  gs_solve_stats_t *q = &j->stats[R->rank];
  if (st == GS_SUCCESS) {
    st = gs_solver_solve(s, d_b, d_x, q);
    q->seconds_setup += setup_s;
    if (st != GS_SUCCESS) gs_dist_fail(R);
  }
  if (st == GS_SUCCESS && R->D->local >= 0) { /* the slowest rank's times, on every process */
    double t[3] = {q->seconds_total, q->seconds_spmv, q->seconds_setup};
    st = gs_dist_proc_reduce(R, t, 3, 1);
    q->seconds_total = t[0];
    q->seconds_spmv = t[1];
    q->seconds_setup = t[2];
  }
  if (st == GS_SUCCESS) st = gs_dist_part_copy(P, 0, d_x, j->x);
  gs_dfree(ctx, d_b);
  gs_dfree(ctx, d_x);
  gs_solver_destroy(&s);
  gs_precond_destroy(&M);
  return st;
}

gs_status_t gs_dist_solve(gs_dist_matrix_t *A, const gs_solve_opts_t *opts, const char *precond,
                          const double *b, double *x, gs_solve_stats_t *stats)
{
  if (!A || !b || !x) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_dist_solve: NULL argument");
  if ((const double *)x == b)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_dist_solve: x and b must be different vectors");
  if (!precond) precond = "none";
  if (gs_precond_find(precond) < 0)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_dist_solve: unknown preconditioner '%s'", precond);
  solve_job_t j = {A, {0}, precond, b, x, NULL};
  if (opts) j.opts = *opts;
  else gs_solve_opts_default(&j.opts);
  if (j.opts.method == GS_SOLVER_AUTO) j.opts.method = A->auto_method;
  const gs_method_t m = j.opts.method;
  if (m != GS_SOLVER_CG && m != GS_SOLVER_PIPECG && m != GS_SOLVER_BICGSTAB &&
      m != GS_SOLVER_GMRES)
    return GS_ERROR(GS_ERR_UNSUPPORTED, "gs_dist_solve: %s is not distributed (cg, pipecg, "
                    "bicgstab and gmres are; the others need A^T)", gs_method_string(m));
  if (j.opts.monitor)
    return GS_ERROR(GS_ERR_UNSUPPORTED, "gs_dist_solve: a monitor could stop one rank and not "
                    "the others; read the statistics after the solve instead");
  if (j.opts.check_every == 0) j.opts.check_every = 8; /* the same on every rank */
  j.stats = calloc((size_t)A->D->n, sizeof *j.stats);
  if (!j.stats) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory");
  const gs_status_t st = gs_dist_run(A->D, solve_rank, &j);
  if (stats) {
    *stats = j.stats[gs_dist_first_local(A->D)]; /* the same counts on every rank */
    /* the slowest rank's times */
    for (int r = 1; r < A->D->n; ++r) {
      const gs_solve_stats_t *q = &j.stats[r];
      if (q->seconds_total > stats->seconds_total) stats->seconds_total = q->seconds_total;
      if (q->seconds_spmv > stats->seconds_spmv) stats->seconds_spmv = q->seconds_spmv;
      if (q->seconds_setup > stats->seconds_setup) stats->seconds_setup = q->seconds_setup;
    }
    if (st != GS_SUCCESS) stats->reason = GS_REASON_NONE;
  }
  free(j.stats);
  return st;
}
