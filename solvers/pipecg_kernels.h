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

/** Pipelined CG's vector update (Algorithm 4, lines 12-19) with the step S->pipe.alpha, beta:
 *  z = nv + beta z; q = m + beta q; s = w + beta s; p = u + beta p; x += alpha p;
 *  r -= alpha s; u -= alpha q; w -= alpha z. pc = 0 (no preconditioner: u = r, m = w, q = s)
 *  skips the updates of u and q, which are r's and s's. With red (GS_RED_SLOTS slots) the same
 *  pass computes gamma = r^T u, delta = w^T u and rr = r^T r of the new vectors into S->pipe,
 *  one deterministic single-launch reduction (solvers/reduce_device.cuh); red = NULL: the update
 *  alone (the vector table's dots then reduce). Does nothing when a halt stands. */
gs_status_t gs_kernel_pipecg_update(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S,
                                    gs_red_t *red, int pc, const gs_pipecg_vecs_t *v);

/** Pipelined CG's scalar step (one thread), after gamma, delta and rr: S->rnorm = sqrt(rr);
 *  unless `first` (the start of a pass, before any update), counts the iteration (S->iter) and
 *  halts CONVERGED when rnorm <= S->tol, as gs_kernel_iteration_end; then the coefficients of
 *  the next update: beta = gamma / gamma_old (0 when first), p^T A p = delta - beta gamma /
 *  alpha_old (delta when first), alpha = gamma / p^T A p. A scalar it cannot use halts the solve
 *  before that update (done = the iterations counted, 0 when first): NANINF when one is not
 *  finite, INDEFINITE_PC when gamma < 0, BREAKDOWN when gamma = 0, INDEFINITE when
 *  p^T A p <= 0. Does nothing when a halt stands. */
gs_status_t gs_kernel_pipecg_step(cudaStream_t stream, gs_dscalars_t *S, int first);

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
