/* solvers/pipecg_kernels.h: the kernels of pipelined CG (solvers/pipecg_kernels.cu) and the
 * multi-dot reduction of the single-GPU vector table; all asynchronous on `stream`, reading and
 * writing their scalars in the device scalar block (not installed). */
#ifndef GS_SOLVERS_PIPECG_KERNELS_H
#define GS_SOLVERS_PIPECG_KERNELS_H

#include "solvers/solver_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Pipelined CG's vectors (Ghysels and Vanroose 2014, Algorithm 4), each of n entries: x the
 * iterate, r the residual, u = M^-1 r, w = A u, m = M^-1 w, nv = A m, and the recurrences
 * z = A q, q = M^-1 s, s = A p, p the direction. Without a preconditioner u is r, m is w and q
 * is s (the same pointers). */
typedef struct gs_pipecg_vecs {
  double *x, *r, *u, *w, *m, *nv, *z, *q, *s, *p;
} gs_pipecg_vecs_t;

/* The squared norms an iteration's reduction adds for the drift bounds (gs_pipecg_drift_t.sq):
 * w and u of the updated vectors, p, s, q, m of the step just taken. Without a preconditioner
 * only WW, PP, SS are reduced (u is r, q is s, m the previous w). */
enum { GS_PIPECG_WW, GS_PIPECG_PP, GS_PIPECG_SS, GS_PIPECG_UU, GS_PIPECG_QQ, GS_PIPECG_MM,
       GS_PIPECG_NORMS };
/* Values of the fused update's one reduction: gamma, delta (and rr with a preconditioner) and
 * the norms above */
#define GS_PIPECG_SUMS 9

/* The drift of the recurrences s = A p, w = A u, z = A q (solvers/pipecg.c): running bounds on
 * ||A p - s||, ||A u - w||, ||A q - z|| from the local rounding of each update (Cools, Yetkin,
 * Agullo, Giraud and Vanroose, SIAM J. Matrix Anal. Appl. 39, 2018, Section 4), with an estimate
 * of ||A||. Written by the step kernel (one thread), except sq, which the reductions deliver. */
typedef struct gs_pipecg_drift {
  double sq[GS_PIPECG_NORMS]; /* squared norms of the iteration (see the enum above) */
  double g, h, j;             /* the bounds on ||A p - s||, ||A u - w||, ||A q - z|| */
  double anorm;               /* the largest ||w|| / ||u|| seen: ||A|| estimated from below */
  double u_prev, p_prev, q_prev, w_prev; /* ||u||, ||p||, ||q||, ||w|| of the iteration before */
} gs_pipecg_drift_t;

/* Pipelined CG's device scratch, carved from the solver's workspace after the vectors
 * (gs_pipecg_work): the partials of the fused reduction (it sums more values than the solver's
 * GS_RED_SLOTS) and the drift state. All zero at the start of a solve. */
typedef struct gs_pipecg_aux {
  gs_red_t red[GS_PIPECG_SUMS];
  gs_pipecg_drift_t d;
} gs_pipecg_aux_t;

/* The step kernel's modes */
enum {
  GS_PIPECG_STEP_ITERATION = 0, /* the end of an iteration: count, test, drift, next step */
  GS_PIPECG_STEP_START = 1,     /* the start of a pass (beta = 0); drift state reset */
  GS_PIPECG_STEP_REPLACED = 2   /* after a replacement of the auxiliary vectors: the next step
                                   from the recomputed gamma, delta; drift bounds reset */
};

/* The drift test's request for a replacement: halt GS_HALT_BREAKDOWN with this halt_what (no
 * GS_WHAT_* value), which gs_pipecg_solve takes before gs_solver_check's reason reaches the
 * caller. */
#define GS_PIPECG_WHAT_REPLACE 0x100
/* It asks when a bound exceeds this fraction of ||s|| or ||w|| ... */
#define GS_PIPECG_DRIFT_TOL 1e-4
/* ... and the segment since the start or the last replacement has run this many iterations */
#define GS_PIPECG_SEGMENT_MIN 8

/** Pipelined CG's vector update (Algorithm 4, lines 12-19) with the step S->pipe.alpha, beta:
 *  z = nv + beta z; q = m + beta q; s = w + beta s; p = u + beta p; x += alpha p;
 *  r -= alpha s; u -= alpha q; w -= alpha z. pc = 0 (no preconditioner: u = r, m = w, q = s)
 *  skips the updates of u and q, which are r's and s's. With X the same pass computes
 *  gamma = r^T u, delta = w^T u and rr = r^T r of the new vectors into S->pipe and the squared
 *  norms of the drift test into X->d.sq, one deterministic single-launch reduction
 *  (solvers/reduce_device.cuh) on the partials X->red; X = NULL: the update alone (the vector
 *  table's dots then reduce). Does nothing when a halt stands. */
gs_status_t gs_kernel_pipecg_update(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S,
                                    gs_pipecg_aux_t *X, int pc, const gs_pipecg_vecs_t *v);

/** Pipelined CG's scalar step (one thread), after gamma, delta and rr (and, in mode ITERATION,
 *  X->d.sq): S->rnorm = sqrt(rr). Mode ITERATION counts the iteration (S->iter) and halts
 *  CONVERGED when rnorm <= S->tol, as gs_kernel_iteration_end; then advances the drift bounds
 *  and, when one exceeds GS_PIPECG_DRIFT_TOL times ||s|| or ||w|| after at least
 *  GS_PIPECG_SEGMENT_MIN iterations of the segment, halts BREAKDOWN with
 *  GS_PIPECG_WHAT_REPLACE (a request, not a failure). Modes START and REPLACED reset the bounds
 *  instead. Then the coefficients of the next update: beta = gamma / gamma_old (0 in mode
 *  START), p^T A p = delta - beta gamma / alpha_old (delta in mode START), alpha = gamma /
 *  p^T A p. A scalar it cannot use halts the solve before that update (done = the iterations
 *  counted, 0 outside mode ITERATION): NANINF when one is not finite, INDEFINITE_PC when
 *  gamma < 0, BREAKDOWN when gamma = 0, INDEFINITE when p^T A p <= 0. pc as for the update.
 *  Does nothing when a halt stands. */
gs_status_t gs_kernel_pipecg_step(cudaStream_t stream, gs_dscalars_t *S, gs_pipecg_aux_t *X,
                                  int pc, int mode);

/** d_out[j] = x[j]^T y[j] for j < k (1 <= k <= GS_RED_SLOTS) in one pass and one launch,
 *  deterministic (a fixed grid for n, block partials summed in block order); red holds k
 *  slots. Does nothing when a halt stands (as gs_kernel_dot). */
gs_status_t gs_kernel_dots(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S, gs_red_t *red,
                           int k, const double *const *x, const double *const *y,
                           double *d_out);

#ifdef __cplusplus
}
#endif
#endif
