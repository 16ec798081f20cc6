/* batch/batch_solve_kernels.cu: batched CG and BiCGSTAB, one persistent thread block per problem.
 *
 * Beyond Anzt et al. (ScalA17), whose one-block-per-problem products (section 3.2) this builds
 * on: the block runs a problem's whole Krylov iteration inside one launch, so every problem stops
 * on its own test after its own number of iterations, with no host synchronization at all until
 * the batch is done. The steps are those of solvers/cg.c and solvers/bicgstab.c in the same
 * order, with the same stopping test (||r|| <= max(rtol ||b||, atol) on the recurrence residual,
 * checked every iteration, a BiCGSTAB half step counting as an iteration) and the same
 * refusals (the halt codes of solvers/vec_kernels.cu become per-problem reasons), so a problem
 * takes the single solver's iteration count up to rounding. Only the order of the sums differs
 * (one block here, a grid of blocks in gs_solve). For CG that moves no count; for BiCGSTAB it
 * does once the shadow residual r~ = r0 is nearly orthogonal to r (rho = r~^T r and r~^T v then
 * keep few digits): on larger Laplacians after ~30 iterations, on indefinite nonsymmetric
 * problems after a few, and from there the count is a function of the rounding, in gs_solve as
 * here (docs/design.md "Batches", bench/bicgstab_rounding.c).
 * Memory: a problem of n <= smem_n rows keeps all its vectors (x included) in shared memory, so an
 *   iteration touches global memory only for the matrix; a larger one uses its slice of a global
 *   workspace. The product is the block's CSR-smart loop (W threads per row from the problem's
 *   mean row length) reading the vector from wherever it lives.
 * Reductions: warp shuffles, then every thread sums the per-warp partials in the same order, so
 *   all threads hold bitwise the same scalars and take the same branches (no divergence at the
 *   barriers).
 * Assumptions: every problem square (gs_batch_solve checks); d_b and d_x do not overlap. */
#include <math.h>

#include "batch/batch_device.cuh"
#include "core/context_impl.h"
#include "core/error.h"
#include "solvers/solver_impl.h"

#define SOLVE_SMEM_BYTES (46 * 1024) /* dynamic shared memory for vectors (below the 48 KiB
                                        that needs no opt-in, leaving the reduction scratch) */

extern "C" int32_t gs_batch_solve_smem_n(int nvec)
{
  return (int32_t)(SOLVE_SMEM_BYTES / ((size_t)nvec * sizeof(double)));
}

/* (s1, s2) summed over the block; every thread returns the same values (the per-warp partials
 * are added in one order by all). */
static __device__ double2 block_sum2(double s1, double s2, double *red)
{
  for (int off = 16; off > 0; off >>= 1) {
    s1 += __shfl_xor_sync(GS_FULL_MASK, s1, off);
    s2 += __shfl_xor_sync(GS_FULL_MASK, s2, off);
  }
  const int warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  __syncthreads(); /* the last call's readers are done with red */
  if ((threadIdx.x & 31) == 0) {
    red[warp] = s1;
    red[32 + warp] = s2;
  }
  __syncthreads();
  s1 = s2 = 0.0;
  for (int w = 0; w < nw; ++w) {
    s1 += red[w];
    s2 += red[32 + w];
  }
  return make_double2(s1, s2);
}

/* (a1^T b1, a2^T b2) over the block's problem (a2 NULL: 0). */
static __device__ double2 block_dot2(const double *a1, const double *b1, const double *a2,
                                     const double *b2, int32_t n, double *red)
{
  double s1 = 0.0, s2 = 0.0;
  for (int32_t k = threadIdx.x; k < n; k += blockDim.x) {
    s1 += a1[k] * b1[k];
    if (a2) s2 += a2[k] * b2[k];
  }
  return block_sum2(s1, s2, red);
}

/* dst = A src for the block's problem (W threads per row), then a barrier. */
static __device__ void block_spmv(const int32_t *rp, const gs_idx_t *ci, const double *val,
                                  int32_t n, int W, const double *src, double *dst)
{
  const int lane = threadIdx.x & (W - 1), G = blockDim.x / W;
  const int32_t g = threadIdx.x / W;
  for (int32_t r0 = 0; r0 < n; r0 += G) {
    const int32_t r = r0 + g;
    const double s = gs_batch_row_dot(rp, ci, val, src, r, r < n, W, lane);
    if (lane == 0 && r < n) dst[r] = s;
  }
  __syncthreads();
}

#define FOR_ROWS(k, n) for (int32_t k = threadIdx.x; k < (n); k += blockDim.x)

/* The problem's view: its matrix, its vectors, its tolerance. */
typedef struct prob_ctx {
  const int32_t *rp;
  const gs_idx_t *ci;
  const double *val;
  int32_t n;
  int W;
} prob_ctx_t;

static __device__ gs_reason_t converged(double rnorm, double tol_rel)
{
  return rnorm <= tol_rel ? GS_CONVERGED_RTOL : GS_CONVERGED_ATOL;
}

/* Jacobi: d = 1 ./ diag(A) (duplicates summed, as precond/jacobi.c); returns the number of rows
 * without a nonzero diagonal (the same in every thread). */
static __device__ int jacobi_setup(const prob_ctx_t &P, double *d, double *red)
{
  double bad = 0.0;
  FOR_ROWS(r, P.n) {
    double a = 0.0;
    for (int32_t k = P.rp[r]; k < P.rp[r + 1]; ++k)
      if (P.ci[k] == r) a += P.val[k];
    d[r] = a != 0.0 ? 1.0 / a : 0.0;
    bad += a == 0.0;
  }
  return (int)block_sum2(bad, 0.0, red).x;
}

template <int METHOD>
static __global__ void __launch_bounds__(256)
batch_solve_kernel(gs_batch_dev_t A, gs_batch_solve_launch_t L, const double *__restrict__ b,
                   double *__restrict__ xout, gs_batch_result_t *res)
{
  extern __shared__ double gs_batch_smem[];
  __shared__ double red[64];
  const gs_batch_prob_t p = A.prob[blockIdx.x];
  prob_ctx_t P;
  P.rp = A.rp + p.rp;
  P.ci = A.ci + p.ent;
  P.val = A.val + p.val;
  P.n = p.m;
  P.W = gs_batch_smart_width(p.m, p.nnz);
  const int32_t n = p.m;
  double *base = n <= L.smem_n ? gs_batch_smem : L.d_work + L.d_work_off[blockIdx.x];
  const double *bi = b + p.row;
  double *xg = xout + p.col;
  /* vectors: x r p q [z d] (CG); x r rh p v t [ph sh d] (BiCGSTAB) */
  double *x = base, *r = base + n, *q, *z, *d = NULL, *rh = NULL, *pv, *v = NULL, *t = NULL;
  double *ph, *sh;
  if (METHOD == GS_SOLVER_CG) {
    pv = base + 2 * (size_t)n;
    q = base + 3 * (size_t)n;
    z = L.jacobi ? base + 4 * (size_t)n : r;
    if (L.jacobi) d = base + 5 * (size_t)n;
    ph = sh = NULL;
  } else {
    rh = base + 2 * (size_t)n;
    pv = base + 3 * (size_t)n;
    v = base + 4 * (size_t)n;
    t = base + 5 * (size_t)n;
    ph = L.jacobi ? base + 6 * (size_t)n : pv;
    sh = L.jacobi ? base + 7 * (size_t)n : r;
    if (L.jacobi) d = base + 8 * (size_t)n;
    q = z = NULL;
  }
  int reason = GS_REASON_NONE, its = 0;
  double rnorm = 0.0, rnorm0 = 0.0;

  /* ||b||, the tolerance, x0 and r0 = b - A x0 */
  FOR_ROWS(k, n) x[k] = L.x0_given ? xg[k] : 0.0;
  __syncthreads();
  if (L.x0_given) block_spmv(P.rp, P.ci, P.val, n, P.W, x, r);
  FOR_ROWS(k, n) r[k] = L.x0_given ? bi[k] - r[k] : bi[k];
  const double bnorm = sqrt(block_dot2(bi, bi, NULL, NULL, n, red).x);
  const double tol_rel = L.rtol * bnorm, tol = fmax(tol_rel, L.atol);
  if (!isfinite(bnorm)) {
    reason = GS_DIVERGED_NANINF;
  } else if (bnorm == 0.0) { /* b = 0: x = 0 exactly, as gs_solve */
    FOR_ROWS(k, n) x[k] = 0.0;
    reason = GS_CONVERGED_ATOL;
  } else if (L.jacobi && jacobi_setup(P, d, red) > 0) {
    reason = GS_DIVERGED_BREAKDOWN; /* no Jacobi without a nonzero diagonal */
  }

  if (METHOD == GS_SOLVER_CG && reason == GS_REASON_NONE) {
    if (L.jacobi) FOR_ROWS(k, n) z[k] = d[k] * r[k];
    double2 s = block_dot2(r, r, r, z, n, red);
    double rho = s.y;
    rnorm = rnorm0 = sqrt(s.x);
    FOR_ROWS(k, n) pv[k] = z[k];
    __syncthreads();
    if (!isfinite(rnorm)) reason = GS_DIVERGED_NANINF;
    else if (rnorm <= tol) reason = converged(rnorm, tol_rel);
    else if (L.maxit <= 0) reason = GS_DIVERGED_MAXIT;
    else if (!isfinite(rho)) reason = GS_DIVERGED_NANINF;
    else if (rho < 0.0) reason = GS_DIVERGED_INDEFINITE;
    else if (rho == 0.0) reason = GS_DIVERGED_BREAKDOWN;
    for (int it = 1; reason == GS_REASON_NONE; ++it) {
      block_spmv(P.rp, P.ci, P.val, n, P.W, pv, q);               /* q <- A p              */
      const double pq = block_dot2(pv, q, NULL, NULL, n, red).x;  /* p^T q                 */
      its = it - 1;
      if (!isfinite(pq)) { reason = GS_DIVERGED_NANINF; break; }
      if (!(pq > 0.0)) { reason = GS_DIVERGED_INDEFINITE; break; }
      const double alpha = rho / pq;
      if (!isfinite(alpha)) { reason = GS_DIVERGED_NANINF; break; }
      FOR_ROWS(k, n) {
        x[k] += alpha * pv[k];                                    /* x <- x + alpha p      */
        r[k] -= alpha * q[k];                                     /* r <- r - alpha q      */
        if (L.jacobi) z[k] = d[k] * r[k];                         /* z <- M^-1 r           */
      }
      s = block_dot2(r, r, r, z, n, red);                         /* ||r||^2, r^T z        */
      rnorm = sqrt(s.x);
      its = it;
      const double rho_new = L.jacobi ? s.y : rnorm * rnorm;
      if (!isfinite(rnorm)) { reason = GS_DIVERGED_NANINF; break; }
      if (rnorm <= tol) { reason = converged(rnorm, tol_rel); break; }
      if (!isfinite(rho_new)) { reason = GS_DIVERGED_NANINF; break; }
      if (rho_new < 0.0) { reason = GS_DIVERGED_INDEFINITE; break; }
      if (rho_new == 0.0) { reason = GS_DIVERGED_BREAKDOWN; break; }
      const double beta = rho_new / rho;
      if (!isfinite(beta)) { reason = GS_DIVERGED_NANINF; break; }
      FOR_ROWS(k, n) pv[k] = z[k] + beta * pv[k];                 /* p <- z + beta p       */
      __syncthreads();
      rho = rho_new;
      if (it >= L.maxit) reason = GS_DIVERGED_MAXIT;
    }
  }

  if (METHOD == GS_SOLVER_BICGSTAB && reason == GS_REASON_NONE) {
    FOR_ROWS(k, n) rh[k] = r[k];                                  /* r~ <- r0              */
    rnorm = rnorm0 = sqrt(block_dot2(r, r, NULL, NULL, n, red).x);
    if (!isfinite(rnorm)) reason = GS_DIVERGED_NANINF;
    else if (rnorm <= tol) reason = converged(rnorm, tol_rel);
    else if (L.maxit <= 0) reason = GS_DIVERGED_MAXIT;
    double rho_prev = 0.0, alpha = 0.0, omega = 0.0;
    for (int it = 1; reason == GS_REASON_NONE; ++it) {
      its = it - 1;
      const double rho = block_dot2(rh, r, NULL, NULL, n, red).x; /* r~^T r               */
      if (!isfinite(rho)) { reason = GS_DIVERGED_NANINF; break; }
      if (rho == 0.0) { reason = GS_DIVERGED_BREAKDOWN; break; }
      if (it == 1) {
        FOR_ROWS(k, n) pv[k] = r[k];                              /* p <- r                */
      } else {
        if (omega == 0.0) { reason = GS_DIVERGED_BREAKDOWN; break; }
        const double beta = (rho / rho_prev) * (alpha / omega);
        if (!isfinite(beta)) { reason = GS_DIVERGED_NANINF; break; }
        FOR_ROWS(k, n) pv[k] = r[k] + beta * (pv[k] - omega * v[k]); /* p <- r + b(p - w v) */
      }
      if (L.jacobi) FOR_ROWS(k, n) ph[k] = d[k] * pv[k];          /* phat <- M^-1 p        */
      __syncthreads();
      block_spmv(P.rp, P.ci, P.val, n, P.W, ph, v);               /* v <- A phat           */
      const double rv = block_dot2(rh, v, NULL, NULL, n, red).x;  /* r~^T v                */
      if (!isfinite(rv)) { reason = GS_DIVERGED_NANINF; break; }
      if (rv == 0.0) { reason = GS_DIVERGED_BREAKDOWN; break; }
      alpha = rho / rv;
      if (!isfinite(alpha)) { reason = GS_DIVERGED_NANINF; break; }
      FOR_ROWS(k, n) {
        r[k] -= alpha * v[k];                                     /* s <- r - alpha v      */
        if (L.jacobi) sh[k] = d[k] * r[k];                        /* shat <- M^-1 s        */
      }
      const double snorm = sqrt(block_dot2(r, r, NULL, NULL, n, red).x); /* ||s||          */
      block_spmv(P.rp, P.ci, P.val, n, P.W, sh, t);               /* t <- A shat           */
      const double2 tt2 = block_dot2(t, r, t, t, n, red);         /* t^T s, t^T t          */
      if (snorm <= tol) { /* converged at the half step: x <- x + alpha phat */
        FOR_ROWS(k, n) x[k] += alpha * ph[k];
        rnorm = snorm;
        its = it;
        reason = converged(rnorm, tol_rel);
        break;
      }
      if (!isfinite(tt2.y)) { reason = GS_DIVERGED_NANINF; break; }
      if (tt2.y == 0.0) { reason = GS_DIVERGED_BREAKDOWN; break; }
      omega = tt2.x / tt2.y;
      if (!isfinite(omega)) { reason = GS_DIVERGED_NANINF; break; }
      FOR_ROWS(k, n) {
        x[k] += alpha * ph[k] + omega * sh[k];                    /* x += a phat + w shat  */
        r[k] -= omega * t[k];                                     /* r <- s - omega t      */
      }
      rnorm = sqrt(block_dot2(r, r, NULL, NULL, n, red).x);       /* ||r||                 */
      its = it;
      rho_prev = rho;
      if (!isfinite(rnorm)) reason = GS_DIVERGED_NANINF;
      else if (rnorm <= tol) reason = converged(rnorm, tol_rel);
      else if (it >= L.maxit) reason = GS_DIVERGED_MAXIT;
    }
  }

  /* x out, and the true residual ||b - A x|| (r is free now) */
  __syncthreads();
  FOR_ROWS(k, n) xg[k] = x[k];
  block_spmv(P.rp, P.ci, P.val, n, P.W, x, r);
  FOR_ROWS(k, n) r[k] = bi[k] - r[k];
  const double true_r = sqrt(block_dot2(r, r, NULL, NULL, n, red).x);
  if (threadIdx.x == 0) {
    gs_batch_result_t o;
    o.bnorm = bnorm;
    o.rnorm0 = rnorm0;
    o.rnorm = rnorm;
    o.true_rnorm = true_r;
    o.reason = reason;
    o.iterations = its;
    res[blockIdx.x] = o;
  }
}

extern "C" gs_status_t gs_batch_kernel_solve(gs_batch_t *B, const gs_batch_solve_launch_t *L,
                                             const double *d_b, double *d_x,
                                             gs_batch_result_t *d_res)
{
  cudaStream_t s = B->ctx->stream;
  const int32_t staged = B->H.max_n < L->smem_n ? B->H.max_n : L->smem_n;
  const size_t smem = (size_t)L->nvec * (size_t)staged * sizeof(double);
  const unsigned grid = (unsigned)B->H.count;
  if (L->method == GS_SOLVER_CG)
    batch_solve_kernel<GS_SOLVER_CG><<<grid, L->threads, smem, s>>>(B->dev, *L, d_b, d_x, d_res);
  else
    batch_solve_kernel<GS_SOLVER_BICGSTAB><<<grid, L->threads, smem, s>>>(B->dev, *L, d_b, d_x, d_res);
  return GS_CHECK_LAUNCH(s, "batch_solve_kernel");
}
