/* solvers/solver_impl.h: what the Krylov methods share (not installed).
 *
 * Adding a method: write solvers/NAME.c with
 *   size_t gs_NAME_work(const gs_solver_t *s, size_t *host_doubles)   device vectors it needs
 *   gs_status_t gs_NAME_solve(gs_solver_t *s, double *d_x, double *d_work, double *h_work)
 * and list it in solvers/solver.c's method table. solver.c validates the arguments, allocates
 * the workspace once (d_work: that many vectors of s->ld doubles; h_work: pinned host doubles),
 * computes ||b||, runs the method, recomputes the true residual and fills the statistics.
 * A method's loop (PETSc bcgs.c, CUSP cg.inl):
 *   - calls gs_solver_spmv / gs_solver_precond (counted and timed), cuBLAS in device pointer
 *     mode (scalars land in s->d_s, constants s->one/zero/minus_one) and the fused kernels of
 *     vec_kernels.cu, which read their scalars from s->d_s: no host synchronization;
 *   - then gs_solver_fetch (one device-to-host copy of the scalar block, one stream sync) and
 *     gs_solver_check, which decides whether to stop and calls the monitor;
 *   - sets s->stats->reason before it returns. It never prints and never allocates.
 * Kernels that meet a breakdown (p^T A p <= 0, rho = 0, NaN, ...) refuse the step, leave x and
 * r as they were and record a sticky halt code in the scalar block; the host reads it at the
 * next check, so that checking every k iterations stays safe. */
#ifndef GS_SOLVER_IMPL_H
#define GS_SOLVER_IMPL_H

#include "core/context_impl.h"
#include "gpusolve/operator.h"
#include "gpusolve/solver.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Halt codes written by the kernels (gs_dscalars_t.halt). */
enum {
  GS_HALT_NONE = 0,
  GS_HALT_INDEFINITE = 1,    /* CG: p^T A p <= 0 */
  GS_HALT_INDEFINITE_PC = 2, /* CG: r^T z < 0 (indefinite preconditioner) */
  GS_HALT_BREAKDOWN = 3,     /* a zero divisor: rho, r~^T v, t^T t, omega */
  GS_HALT_NANINF = 4,        /* a non-finite scalar */
  GS_HALT_HALFSTEP = 5       /* BiCGSTAB converged at the half step (||s|| <= tol): not a failure */
};

/* Which scalar a kernel refused (gs_dscalars_t.halt_what), for the stop reason's detail. */
enum {
  GS_WHAT_NONE = 0,
  GS_WHAT_PQ,    /* CG: p^T A p */
  GS_WHAT_ALPHA, /* a step length rho / (...) */
  GS_WHAT_RHO,   /* CG: r^T z; BiCGSTAB: r~^T r */
  GS_WHAT_BETA,  /* a direction update ratio */
  GS_WHAT_RV,    /* BiCGSTAB: r~^T v */
  GS_WHAT_TT,    /* BiCGSTAB: t^T t */
  GS_WHAT_OMEGA  /* BiCGSTAB: omega = t^T s / t^T t */
};

/* The device scalars of one solve, copied to the host in one piece at each check. */
typedef struct gs_dscalars {
  double rnorm;    /* ||r|| of the current iterate */
  double bnorm;    /* ||b|| */
  double rho[2];   /* r^T z (CG) or r~^T r (BiCGSTAB), alternating slots: iteration it writes
                      rho[it & 1] and reads rho[(it - 1) & 1] */
  double pq;       /* CG: p^T A p */
  double rv;       /* BiCGSTAB: r~^T v */
  double ts, tt;   /* BiCGSTAB: t^T s, t^T t */
  double alpha;    /* step lengths of the last accepted step */
  double omega;
  double one, zero, minus_one; /* constants for cuBLAS in device pointer mode */
  int halt;        /* GS_HALT_*: sticky, first writer wins in effect (all writers agree) */
  int halt_what;   /* GS_WHAT_*: the scalar that caused it */
  int halt_done;   /* iterations completed when the halt happened */
} gs_dscalars_t;

/* ---- the vector-ops seam ---------------------------------------------------------------------
 * Methods do their vector work through this table, never through cuBLAS directly (hypre's Krylov
 * function table, PETSc's Vec ops). Reductions write their result to device memory (the scalar
 * block), so a method never waits on one; the elementwise ops and the fused updates touch the
 * local n entries only. The single-GPU table (solvers/vecops.c) is cuBLAS plus the fused kernels
 * of vec_kernels.cu; a multi-GPU table adds an all-reduce after each reduction, a mixed-precision
 * one other value types. Vectors have s->n entries unless a length is given. */
typedef struct gs_vecops {
  const char *name;
  /* reductions (communicating): *d_out = x^T y, ||x||_2, h[0..k) = V^T w */
  gs_status_t (*dot)(gs_solver_t *s, const double *x, const double *y, double *d_out);
  gs_status_t (*nrm2)(gs_solver_t *s, const double *x, double *d_out);
  gs_status_t (*mdot)(gs_solver_t *s, int k, const double *V, size_t ld, const double *w,
                      double *d_h);
  /* local */
  gs_status_t (*copy)(gs_solver_t *s, const double *x, double *y);     /* y = x */
  gs_status_t (*zero)(gs_solver_t *s, double *x);                      /* x = 0 */
  gs_status_t (*scale)(gs_solver_t *s, double alpha, double *x);       /* x = alpha x (host) */
  /* y[0..len) += (*d_alpha) x (device scalar) */
  gs_status_t (*axpy)(gs_solver_t *s, size_t len, const double *d_alpha, const double *x,
                      double *y);
  /* w = (*d_alpha) V h + (*d_beta) w, V of k columns with leading dimension ld */
  gs_status_t (*gemv)(gs_solver_t *s, int k, const double *d_alpha, const double *V, size_t ld,
                      const double *h, const double *d_beta, double *w);
} gs_vecops_t;

/** The single-GPU table: cuBLAS in device pointer mode on the context's handle. */
extern const gs_vecops_t gs_vecops_cuda;

/* The solver object (gs_solver_t of include/gpusolve/solver.h): made once by setup (work
 * vectors, pinned scalars, events, cuBLAS mode), used by any number of solves. */
struct gs_solver {
  gs_context_t *ctx;
  gs_solve_opts_t given;    /* as given to gs_solver_create */
  /* ---- set by gs_solver_setup ---- */
  int ready;                /* setup done */
  gs_method_t method;       /* resolved: never AUTO */
  gs_operator_t *A;         /* borrowed */
  gs_precond_t *M;          /* borrowed; NULL for none (or identity): methods then skip it */
  const gs_vecops_t *vec;
  gs_idx_t n;
  size_t ld;                /* stride of the work vectors (n rounded up to 32 doubles) */
  size_t nvec, host_doubles;
  double *d_work, *h_work;  /* nvec vectors of ld doubles; pinned host doubles */
  gs_dscalars_t *d_s;       /* device scalar block */
  gs_dscalars_t *h_s;       /* its pinned host mirror, valid after gs_solver_fetch */
  const double *one, *zero, *minus_one; /* device pointers into d_s */
  cudaEvent_t total[2];     /* the solve on the GPU timeline */
  /* CUDA event pairs around SpMV and preconditioner calls, summed at each fetch */
  cudaEvent_t *events;      /* 2 * ev_cap: a start and an end per timed call */
  unsigned char *ev_kind;   /* 0 SpMV, 1 preconditioner */
  int ev_cap, ev_used, ev_made;
  /* ---- per solve ---- */
  gs_solve_opts_t opts;     /* of the pass running: method resolved, restart <= n; maxit and
                               x0_given change on restarts from the true residual */
  const double *d_b;
  double bnorm, tol;        /* ||b|| and max(rtol ||b||, atol), known after the first fetch */
  gs_solve_stats_t *stats;
  /* stagnation window (CG, BiCGSTAB) */
  double best;
  int best_it;
  int it_base;              /* iterations of earlier passes (restarts from the true residual) */
};

/* ---- shared steps (solvers/solver.c) ------------------------------------------------------ */

/** y = alpha op(A) x + beta y through the operator, counted and timed. */
gs_status_t gs_solver_apply(gs_solver_t *s, gs_op_t op, double alpha, const double *d_x,
                            double beta, double *d_y);
/** y = alpha A x + beta y (gs_solver_apply with GS_OP_N). */
gs_status_t gs_solver_spmv(gs_solver_t *s, double alpha, const double *d_x, double beta,
                           double *d_y);
/** z = M^-1 r (s->M must not be NULL), counted and timed. */
gs_status_t gs_solver_precond(gs_solver_t *s, const double *d_r, double *d_z);
/** r = b - A x; with x == NULL (x = 0), r = b. */
gs_status_t gs_solver_residual(gs_solver_t *s, const double *d_x, double *d_r);
/** Copies the scalar block to s->h_s, waits for the stream, sums the event timings, and takes
 *  ||b|| and the tolerance on first use. The one host synchronization of an iteration. */
gs_status_t gs_solver_fetch(gs_solver_t *s);
/** Decides after a fetch: calls the monitor with (it, rnorm), then returns the reason to stop
 *  (NaN/Inf, converged, a halt code of h_s, monitor, stagnation when `window` is set, iteration
 *  limit) or GS_REASON_NONE to go on. Records iterations and rnorm in the stats. */
gs_reason_t gs_solver_check(gs_solver_t *s, int it, double rnorm, int window);
/** The reason of a halt code, and a phrase naming the scalar ("omega = 0"). */
gs_reason_t gs_solver_halt_reason(int halt);
const char *gs_solver_halt_detail(int halt, int what);

/* ---- methods ------------------------------------------------------------------------------ */

size_t gs_cg_work(const gs_solver_t *s, size_t *host_doubles);
gs_status_t gs_cg_solve(gs_solver_t *s, double *d_x, double *d_work, double *h_work);
size_t gs_bicgstab_work(const gs_solver_t *s, size_t *host_doubles);
gs_status_t gs_bicgstab_solve(gs_solver_t *s, double *d_x, double *d_work, double *h_work);
size_t gs_gmres_work(const gs_solver_t *s, size_t *host_doubles);
gs_status_t gs_gmres_solve(gs_solver_t *s, double *d_x, double *d_work, double *h_work);

/* ---- fused vector kernels (solvers/vec_kernels.cu); all asynchronous on `stream` ------------ */

/* Kernels return immediately when S->halt is set. `it` is the iteration being run; when a
 * kernel halts it records `done` = iterations completed. */

/** CG, after q = A p and pq = p^T q: alpha = rho[c] / pq; x += alpha p; r -= alpha q.
 *  Halts INDEFINITE when pq <= 0, NANINF when alpha is not finite. */
gs_status_t gs_kernel_cg_update(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S, int c,
                                int done, double *x, double *r, const double *p, const double *q);
/** CG, after rho[c ^ 1] = r^T z (or, with no preconditioner, rho_new = rnorm^2, stored):
 *  p = z + (rho[c ^ 1] / rho[c]) p. Halts INDEFINITE_PC when rho_new < 0, BREAKDOWN when
 *  rho_new = 0 (the host tests convergence first), NANINF when not finite. */
gs_status_t gs_kernel_cg_direction(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S, int c,
                                   int rho_from_rnorm, int done, double *p, const double *z);
/** BiCGSTAB, after rho[c] = r~^T r: p = r (first) or p = r + beta (p - omega v) with
 *  beta = (rho[c] / rho[c ^ 1]) (alpha / omega). Halts BREAKDOWN when rho or omega is 0. */
gs_status_t gs_kernel_bicgstab_p(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S, int c,
                                 int first, int done, double *p, const double *r,
                                 const double *v);
/** BiCGSTAB, after rv = r~^T v: alpha = rho[c] / rv; r -= alpha v (r becomes s).
 *  Halts BREAKDOWN when rv = 0, NANINF when alpha is not finite. */
gs_status_t gs_kernel_bicgstab_s(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S, int c,
                                 int done, double *r, const double *v);
/** BiCGSTAB, after rnorm = ||s||, t = A shat, ts, tt: when ||s|| <= tol, x += alpha phat and
 *  halt HALFSTEP (converged); else omega = ts / tt, x += alpha phat + omega shat,
 *  r -= omega t. Halts BREAKDOWN when tt = 0, NANINF when omega is not finite. */
gs_status_t gs_kernel_bicgstab_xr(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S, double tol,
                                  int done_half, int done, double *x, double *r,
                                  const double *phat, const double *shat, const double *t);
/** x = alpha x (alpha from the host). */
gs_status_t gs_kernel_scale(cudaStream_t stream, gs_idx_t n, double alpha, double *x);

#ifdef __cplusplus
}
#endif
#endif
