/* solvers/gmres.c: restarted GMRES(m) with right preconditioning (Saad and Schultz 1986; Saad,
 * Iterative Methods for Sparse Linear Systems, 2nd ed., Algorithm 9.5), for general square A.
 *
 * Arnoldi: w = A M^-1 v_j is orthogonalized against V_j by classical Gram-Schmidt with one
 * re-orthogonalization pass (CGS2: h = V^T w, w -= V h, twice), each pass one gemv pair, which
 * reads V twice per pass instead of j times as modified Gram-Schmidt would. On one GPU the
 * subtractions are the fused kernels of gmres_kernels.cu: the newest basis vector is stored
 * unnormalized (u = h_{j,j-1} v_j, or r for v_0) and normalized in place by the first
 * subtraction pass, which reads it anyway (the product takes the factor as its alpha), and the
 * second subtraction computes ||w|| and adds h2 to h in the same launch; through another
 * vector table the passes are the table's gemv, axpy, nrm2 and scale. The small
 * (m+1) x m Hessenberg least-squares problem is reduced by Givens rotations on the host: the
 * new column's j + 2 entries come back in one copy per iteration, the one host synchronization
 * of the iteration. With right preconditioning the Givens estimate |g_{j+1}| is the norm of the
 * true residual b - A x_j (in exact arithmetic), so the tolerance applies to what users expect.
 * Each cycle ends with x += M^-1 V y and the true residual, which starts the next cycle.
 *
 * Stops: the tolerance on the true residual at the end of a cycle (the estimate only ends the
 * cycle); an invariant subspace (h_{j+1,j} <= eps ||A M^-1 v_j||, where orthogonality is lost)
 * or a singular Hessenberg matrix without convergence: GS_DIVERGED_BREAKDOWN; a cycle that does
 * not reduce ||r||: GS_DIVERGED_STAGNATION (restarted GMRES would repeat it forever). */
#include <float.h>
#include <math.h>

#include "core/error.h"
#include "solvers/gmres_kernels.h"
#include "solvers/solver_impl.h"

/* A cycle that reduces ||r|| by less than this fraction made no progress. */
#define GMRES_STAGNATION 1e-12

static size_t small_doubles(int m) { return 3 * ((size_t)m + 1); } /* h, h2, y on the device */

size_t gs_gmres_work(const gs_solver_t *s, size_t *host_doubles)
{
  size_t m = (size_t)s->opts.restart;
  /* host: column (m + 2), y (m), H ((m + 1) m), cs, sn (m each), g (m + 1) */
  *host_doubles = (m + 2) + m + (m + 1) * m + 2 * m + (m + 1);
  return (m + 1) + (s->M ? 1 : 0) + (small_doubles((int)m) + s->ld - 1) / s->ld;
}

/* Solves the j x j upper triangle R y = g by back substitution. */
static void back_substitute(const double *H, int ldh, int j, const double *g, double *y)
{
  for (int i = j - 1; i >= 0; --i) {
    double t = g[i];
    for (int l = i + 1; l < j; ++l) t -= H[i + (size_t)l * ldh] * y[l];
    y[i] = t / H[i + (size_t)i * ldh];
  }
}

gs_status_t gs_gmres_solve(gs_solver_t *s, double *x, double *work, double *hw)
{
  cudaStream_t stream = s->ctx->stream;
  gs_dscalars_t *S = s->d_s;
  const gs_idx_t n = s->n;
  const int m = s->opts.restart, ldh = m + 1;
  const size_t ld = s->ld;
  double *V = work;                                  /* n x (m + 1), leading dimension ld */
  double *z = s->M ? work + (size_t)(m + 1) * ld : NULL;
  double *d_h = work + (size_t)(m + 1 + (s->M ? 1 : 0)) * ld, *d_h2 = d_h + m + 1;
  double *d_y = d_h2 + m + 1;
  double *col = hw, *y = col + m + 2, *H = y + m, *cs = H + (size_t)(m + 1) * m, *sn = cs + m;
  double *g = sn + m;
  int it = 0;
  /* one GPU: the fused Gram-Schmidt kernels, the basis vector normalized where it is next read */
  const int fused = s->vec == &gs_vecops_cuda;

  GS_CHECK(gs_solver_residual(s, s->opts.x0_given ? x : NULL, V));  /* r <- b - A x0 (in v0) */
  GS_CHECK(s->vec->nrm2(s, n, V, &S->rnorm));                         /* beta <- ||r||        */
  GS_CHECK(gs_solver_fetch(s));
  double beta = s->h_s->rnorm;
  s->stats->rnorm0 = beta;
  gs_reason_t reason = gs_solver_check(s, 0, beta, 0);

  /* Memory movement of inner iteration j (k = j + 1 basis vectors), in n-vectors of doubles,
   * on one GPU (u_j = v_j / c stored, c = 1 / h_{j,j-1}, or 1 / beta for v_0):
   *   w = c A M^-1 u_j                  SpMV: storage + 2n, M^-1
   *   h = V^T w                         gemv T: (k + 1)n
   *   v_j = c u_j, w -= V h             reads k columns and w, writes w and v_j: (k + 3)n
   *   h2 = V^T w                        gemv T: (k + 1)n
   *   w -= V h2, h += h2, ||w||         (k + 2)n, one launch
   * In all storage + 4kn + 9n (+ M^-1) in 5 launches (the product one), where the unfused
   * passes (still those of another vector table: gemv T and N twice, axpy, nrm2, scale) move
   * storage + 4kn + 11n in 8 or more; over a cycle of m = 30 on average storage + 71n (73n).
   * Per cycle besides: x += M^-1 V y ((j + 2)n + M^-1) and the true residual (SpMV + 2n).
   * Host: the new Hessenberg column (j + 2 doubles) and the scalar block, one sync. */
  while (reason == GS_REASON_NONE) {
    double c = 1.0 / beta; /* v0 = c r: scaled here, or (fused) by the first subtraction */
    if (!fused) GS_CHECK(s->vec->scale(s, n, c, V));                    /* v0 <- r / beta */
    g[0] = beta;
    for (int i = 1; i <= m; ++i) g[i] = 0.0;
    int j = 0, lucky = 0;
    gs_reason_t inner = GS_REASON_NONE;
    while (j < m && inner == GS_REASON_NONE && !lucky) {
      double *vj = V + (size_t)j * ld, *w = V + (size_t)(j + 1) * ld;
      const int k = j + 1; /* basis vectors so far */
      ++it;
      /* fused: v_j is stored as u_j = v_j / c, and A M^-1 v_j = c A M^-1 u_j */
      const double scale = fused ? c : 1.0;
      if (s->M) {
        GS_CHECK(gs_solver_precond(s, vj, z));                            /* z <- M^-1 v_j */
        GS_CHECK(gs_solver_spmv(s, scale, z, 0.0, w));                    /* w <- A z      */
      } else {
        GS_CHECK(gs_solver_spmv(s, scale, vj, 0.0, w));                   /* w <- A v_j    */
      }
      GS_CHECK(s->vec->mdot(s, k, V, ld, w, d_h));                        /* h <- V^T w    */
      if (fused) {
        GS_CHECK(gs_kernel_gmres_sub_normalize(stream, n, k, V, ld, d_h, c,
                                               w));               /* v_j <- c u_j, w -= V h  */
        GS_CHECK(s->vec->mdot(s, k, V, ld, w, d_h2));                     /* h2 <- V^T w   */
        GS_CHECK(gs_kernel_gmres_sub_norm(stream, n, k, V, ld, d_h2, c, d_h, w,
                                          s->d_red));        /* w -= V h2, h += h2, ||w|| */
      } else {
        GS_CHECK(s->vec->gemv(s, k, s->minus_one, V, ld, d_h, s->one, w)); /* w <- w - V h */
        GS_CHECK(s->vec->mdot(s, k, V, ld, w, d_h2));                     /* h2 <- V^T w   */
        GS_CHECK(s->vec->gemv(s, k, s->minus_one, V, ld, d_h2, s->one, w)); /* w -= V h2   */
        GS_CHECK(s->vec->axpy(s, (size_t)k, s->one, d_h2, d_h));         /* h <- h + h2   */
        GS_CHECK(s->vec->nrm2(s, n, w, d_h + k));                         /* h_{j+1,j}     */
      }
      GS_CHECK(GS_CUDA(cudaMemcpyAsync(col, d_h, (size_t)(k + 1) * sizeof(double),
                                       cudaMemcpyDeviceToHost, stream)));
      GS_CHECK(gs_solver_fetch(s)); /* waits for the column too */

      /* Givens: old rotations on the new column, then the one that zeroes h_{j+1,j} */
      const double hn = col[k];
      double h0 = hn * hn;
      for (int i = 0; i < k; ++i) h0 += col[i] * col[i];
      h0 = sqrt(h0); /* ||A M^-1 v_j|| before orthogonalization */
      if (!isfinite(h0)) {
        inner = GS_DIVERGED_NANINF;
        s->stats->detail = "the new Arnoldi column is not finite";
        break;
      }
      for (int i = 0; i < k; ++i) H[i + (size_t)j * ldh] = col[i];
      for (int i = 0; i < j; ++i) {
        double a = H[i + (size_t)j * ldh], b = H[i + 1 + (size_t)j * ldh];
        H[i + (size_t)j * ldh] = cs[i] * a + sn[i] * b;
        H[i + 1 + (size_t)j * ldh] = -sn[i] * a + cs[i] * b;
      }
      const double a = H[j + (size_t)j * ldh], rr = hypot(a, hn);
      if (rr == 0.0) { /* a zero column: the Hessenberg matrix is singular */
        inner = GS_DIVERGED_BREAKDOWN;
        s->stats->detail = "a zero Hessenberg column: A M^-1 is singular on the Krylov space";
        break;
      }
      cs[j] = a / rr;
      sn[j] = hn / rr;
      H[j + (size_t)j * ldh] = rr;
      g[j + 1] = -sn[j] * g[j];
      g[j] = cs[j] * g[j];
      j = k;
      if (hn <= DBL_EPSILON * h0) {
        lucky = 1; /* invariant subspace: w is noise, keep it out */
      } else {
        c = 1.0 / hn; /* v_{j+1} = c w: scaled here, or (fused) by the next first subtraction */
        if (!fused) GS_CHECK(s->vec->scale(s, n, c, w));             /* v_{j+1} <- w / h */
      }
      inner = gs_solver_check(s, it, fabs(g[j]), 0);
    }

    /* x <- x + M^-1 V y with R y = g over the j columns built */
    if (j > 0) {
      back_substitute(H, ldh, j, g, y);
      int finite = 1;
      for (int i = 0; i < j; ++i) finite &= isfinite(y[i]) != 0;
      if (!finite) {
        reason = GS_DIVERGED_NANINF;
        s->stats->detail = "the least-squares solution is not finite";
        break;
      }
      GS_CHECK(GS_CUDA(cudaMemcpyAsync(d_y, y, (size_t)j * sizeof(double), cudaMemcpyHostToDevice,
                                       stream)));
      if (s->M) {
        GS_CHECK(s->vec->gemv(s, j, s->one, V, ld, d_y, s->zero, z));     /* z <- V y      */
        GS_CHECK(gs_solver_precond(s, z, z));                             /* z <- M^-1 z   */
        GS_CHECK(s->vec->axpy(s, (size_t)n, s->one, z, x));               /* x <- x + z    */
      } else {
        GS_CHECK(s->vec->gemv(s, j, s->one, V, ld, d_y, s->one, x));      /* x <- x + V y  */
      }
    }

    /* the true residual starts the next cycle */
    GS_CHECK(gs_solver_residual(s, x, V));                                /* r <- b - A x  */
    GS_CHECK(s->vec->nrm2(s, n, V, &S->rnorm));
    GS_CHECK(gs_solver_fetch(s));
    const double beta_new = s->h_s->rnorm;
    if (!isfinite(beta_new)) {
      reason = GS_DIVERGED_NANINF;
      s->stats->detail = "the true residual norm is not finite";
    } else if (beta_new <= s->tol) {
      reason = beta_new <= s->opts.rtol * s->bnorm ? GS_CONVERGED_RTOL : GS_CONVERGED_ATOL;
      s->stats->detail = "";
    } else if (inner != GS_REASON_NONE && !gs_reason_converged(inner)) {
      reason = inner;
    } else if (lucky) { /* invariant subspace, yet not solved */
      reason = GS_DIVERGED_BREAKDOWN;
      s->stats->detail = "h_{j+1,j} ~ 0 without convergence: A singular, or orthogonality lost";
    } else if (beta - beta_new <= GMRES_STAGNATION * beta) {
      reason = GS_DIVERGED_STAGNATION;
      s->stats->detail = "a restart cycle did not reduce ||b - A x||";
    } else if (it >= s->opts.maxit) {
      reason = GS_DIVERGED_MAXIT;
    }
    /* else: not converged (the estimate may have said so): restart from the true residual */
    beta = beta_new;
  }
  s->stats->iterations = s->it_base + it;
  s->stats->reason = reason;
  return GS_SUCCESS;
}
