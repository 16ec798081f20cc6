/* solvers/persist_kernels.cu: persistent iterations (opts.persistent): CG and BiCGSTAB run as
 * ONE cooperative kernel per host check, the iterations separated by grid-wide barriers
 * (cooperative_groups::this_grid().sync()) instead of kernel boundaries, with a CSR product of
 * their own on the matrix's shared device CSR and Jacobi's scaling folded into the updates.
 *
 * Why: on a small system one iteration is a chain of dependent launches (CG: product, p^T q,
 * update with ||r||, direction; BiCGSTAB: seven plus two products), each a few microseconds of
 * launch and drain, against well under a microsecond of memory traffic (bcsstk16: 3.5 MB a
 * product, L2-resident). A grid barrier among co-resident blocks costs about as much as one
 * block-wide handshake through L2, so CG's three barriers and BiCGSTAB's five replace the
 * launches. This is the persistent-kernel scheme of the multi-block CG sample that ships with
 * the CUDA toolkit (one grid, grid.sync between phases); the phases below are ours and follow
 * the methods of cg.c and bicgstab.c step for step, with the same halt codes: the scalar checks
 * are step_checks.cuh's, the ones the fused update kernels (vec_kernels.cu) make.
 *
 * Grid: co-resident blocks only (cudaLaunchCooperativeKernel refuses more): at most the
 * occupancy limit times the SM count, and no more than the rows need (tpr threads a row).
 * Reductions are deterministic and every block gets the same total: each block writes its
 * partial (gs_block_sum's fixed tree) to part[slot][block], and after the barrier every block
 * sums all partials in block order with the same code, so all blocks take the same branches on
 * the scalars (a uniform halt, never a divergent barrier). Consecutive reductions use different
 * slots, so that no block overwrites a partial another block may still be reading.
 * Vectors written in the kernel are read by other blocks after a barrier: they are read with
 * plain loads, never through the read-only (non-coherent) path; only the matrix and Jacobi's
 * diagonal, constant during the kernel, are __restrict__ const.
 * Deterministic run to run for a fixed device (the grid depends on n, tpr and the SM count). */
#include <cooperative_groups.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/error.h"
#include "solvers/reduce_device.cuh"
#include "solvers/solver_impl.h"
#include "solvers/step_checks.cuh"
#include "spmv/device_util.cuh"
#include "spmv/spmv_impl.h"

namespace cgrp = cooperative_groups;

#define PT GS_RED_THREADS /* threads per block (gs_block_sum's assumption) */
static_assert(PT == GS_PERSIST_THREADS, "the host's long-row rule counts these threads");

/* The matrix as the kernels read it. */
struct pmat {
  gs_idx_t n;
  const int32_t *__restrict__ rp;
  const gs_idx_t *__restrict__ col;
  const double *__restrict__ val;
  const double *__restrict__ dinv; /* Jacobi's 1 / a_ii, or NULL */
  const int32_t *__restrict__ long_rows; /* the rows of at least long_min entries, ascending */
  int nlong;
  int32_t long_min;                /* INT32_MAX when there are none */
};

/* The pass's start inside the first launch (gs_persist_whole). */
struct pstart {
  const double *b; /* NULL: the host formed the start, and forms the true residual at the end */
  double rtol, atol;
  int start;       /* this launch begins the pass */
  int x0;          /* x holds the pass's initial guess; else x = 0 */
};

struct pcg_args {
  pmat A;
  gs_dscalars_t *S;
  double *part;
  pstart w;
  int count; /* iterations to run at most */
  int c;     /* parity: rho of the first iteration in S->rho[c] (cg.c's (it - 1) & 1) */
  double *x, *r, *p, *q, *z; /* z == r without a preconditioner */
};

struct pbicgstab_args {
  pmat A;
  gs_dscalars_t *S;
  double *part;
  pstart w;
  int count;
  int c;     /* bicgstab.c's it & 1: rho = r~^T r of the first iteration in S->rho[c] */
  int first; /* the first iteration is the method's first (p = r) */
  double *x, *r, *rhat, *p, *v, *t, *phat, *shat; /* phat == p, shat == r without one */
};

/* Grid-wide sums of K values: v is each thread's share; out the totals, the same in every
 * block. Slots slot..slot+K-1 of part (gridDim.x doubles each). Holds a grid barrier: every
 * thread of every block calls it. */
template <int K>
__device__ static void grid_total(cgrp::grid_group &g, const double (&v)[K], double *part,
                                  int slot, double (&out)[K])
{
  __shared__ double sh[K][PT / 32];
  __shared__ double res[K];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const double b = gs_block_sum(v[k], sh[k]);
    if (threadIdx.x == 0) part[(size_t)(slot + k) * gridDim.x + blockIdx.x] = b;
  }
  g.sync(); /* a barrier of the block too: sh may be reused below */
#pragma unroll
  for (int k = 0; k < K; ++k) {
    double a = 0.0;
    for (unsigned blk = threadIdx.x; blk < gridDim.x; blk += PT) /* block order */
      a += part[(size_t)(slot + k) * gridDim.x + blk];
    a = gs_block_sum(a, sh[k]);
    if (threadIdx.x == 0) res[k] = a;
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < K; ++k) out[k] = res[k];
  __syncthreads(); /* res is read before the next call writes it */
}

/* y = A xin on this thread's rows: TPR threads a row (a warp takes 32 / TPR consecutive rows a
 * step, the warp's loop uniform so that the shuffles see all lanes), and f(row, y_row) called
 * once per row by the row's first lane. */
template <int TPR, class F>
__device__ static void spmv_rows(const pmat &A, const double *xin, F f)
{
  constexpr int RPW = 32 / TPR;
  const int lane = threadIdx.x & 31, sub = lane / TPR, l = lane % TPR;
  const int64_t warp = ((int64_t)blockIdx.x * PT + threadIdx.x) >> 5;
  const int64_t warps = (int64_t)gridDim.x * (PT / 32);
  for (int64_t row0 = warp * RPW; row0 < A.n; row0 += warps * RPW) {
    const int64_t row = row0 + sub;
    double sum = 0.0;
    bool mine = row < A.n;
    if (mine) {
      const int32_t b0 = A.rp[row], e = A.rp[row + 1];
      mine = e - b0 < A.long_min; /* a long row is a block's, below */
      if (mine)
        for (int32_t k = b0 + l; k < e; k += TPR) sum += A.val[k] * xin[A.col[k]];
    }
#pragma unroll
    for (int o = TPR / 2; o > 0; o >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, o, TPR);
    if (l == 0 && mine) f((gs_idx_t)row, sum);
  }
  /* Rows of at least long_min entries, a block each (blocks b, b + grid, ... of the list: the
   * loop is uniform in the block): a row of L entries takes L / PT steps instead of L / TPR while
   * the grid waits for it at the next barrier. */
  __shared__ double sh_long[PT / 32];
  for (int j = blockIdx.x; j < A.nlong; j += gridDim.x) {
    const int32_t row = A.long_rows[j];
    double sum = 0.0;
    for (int32_t k = A.rp[row] + (int32_t)threadIdx.x, e = A.rp[row + 1]; k < e; k += PT)
      sum += A.val[k] * xin[A.col[k]];
    sum = gs_block_sum(sum, sh_long); /* thread 0 holds the total */
    if (threadIdx.x == 0) f((gs_idx_t)row, sum);
    __syncthreads(); /* sh_long is read before the next row writes it */
  }
}

/* y = A xin, and the grid total of w^T y (every block gets it: a barrier inside). */
template <int TPR>
__device__ static double product_dot(cgrp::grid_group &g, const pmat &A, const double *xin,
                                     double *y, const double *w, double *part, int slot)
{
  double v[1] = {0.0}, t[1];
  spmv_rows<TPR>(A, xin, [&](gs_idx_t i, double yi) {
    y[i] = yi;
    v[0] += w[i] * yi;
  });
  grid_total<1>(g, v, part, slot, t);
  return t[0];
}

/* The start of a pass on this thread's rows: r = b - A x (a guess in x) or x = 0, r = b, and
 * f(i, b_i, r_i) once per row for the method's own starting vectors and sums. x is only read
 * (or only written by its own rows' threads), and r only written. */
template <int TPR, class F>
__device__ static void start_residual(const pmat &A, const pstart &w, double *x, double *r, F f)
{
  if (w.x0) {
    spmv_rows<TPR>(A, x, [&](gs_idx_t i, double ax) {
      const double bi = w.b[i], ri = bi - ax;
      r[i] = ri;
      f(i, bi, ri);
    });
  } else {
    GS_GRID_STRIDE(i, A.n) {
      const double bi = w.b[i];
      x[i] = 0.0;
      r[i] = bi;
      f((gs_idx_t)i, bi, bi);
    }
  }
}

/* The checks the host makes at iteration 0 (solver.c's gs_solver_check), as a halt of 0
 * iterations: a norm that is not finite (NaN in b or x0; the host names it from ||b|| or
 * ||r||), b = 0 (the host answers x = 0) and r0 within the tolerance end the pass. */
__device__ static int start_halt(double bnorm, double rnorm, double tol)
{
  if (!isfinite(bnorm) || !isfinite(rnorm)) return GS_HALT_NANINF;
  if (bnorm == 0.0 || rnorm <= tol) return GS_HALT_CONVERGED;
  return GS_HALT_NONE;
}

/* ||b - Ax|| of the x the pass returns (every thread of the grid calls it: barriers inside),
 * what solver.c's end would compute with the backend's product. */
template <int TPR>
__device__ static double true_residual(cgrp::grid_group &g, const pmat &A, const double *b,
                                       const double *x, double *part)
{
  g.sync(); /* x complete; every block done with the partials of the last sum */
  double v[1] = {0.0}, t[1];
  spmv_rows<TPR>(A, x, [&](gs_idx_t i, double ax) {
    const double ri = b[i] - ax;
    v[0] += ri * ri;
  });
  grid_total<1>(g, v, part, 0, t);
  return sqrt(t[0]);
}

/* What the last thread standing writes back: the scalars of the last iteration, the count and
 * any halt (first thread of the grid; every block holds the same values). */
struct pstate {
  int done, halt, what, hdone, products, precs;
};

/* The whole pass's own scalars (gs_persist_whole): ||b||, tol, ||r0||, the true residual. */
struct pwhole {
  double bnorm, tol, rnorm0, true_rnorm;
  int true_done;
};

__device__ static void write_whole(gs_dscalars_t *S, const pstart &w, const pwhole &wh)
{
  if (!w.b) return;
  if (w.start) {
    S->bnorm = wh.bnorm;
    S->tol = wh.tol;
    S->rnorm0 = wh.rnorm0;
  }
  if (wh.true_done) {
    S->true_rnorm = wh.true_rnorm;
    S->true_done = 1;
  }
}

__device__ static void write_state(gs_dscalars_t *S, const pstate &st)
{
  S->iter = st.done;
  S->products += st.products;
  S->precs += st.precs;
  if (st.halt) {
    S->halt = st.halt;
    S->halt_what = st.what;
    S->halt_done = st.hdone;
  }
}

#define PHALT(code, w, d)                                                                      \
  {                                                                                            \
    st.halt = (code);                                                                          \
    st.what = (w);                                                                             \
    st.hdone = (d);                                                                            \
    break;                                                                                     \
  }

/* ---- CG (cg.c, Saad's Algorithm 9.1): three barriers an iteration ------------------------------
 *   q = A p, p^T q                       | barrier (in the sum)
 *   alpha; x += alpha p, r -= alpha q,
 *   z = D^-1 r, r^T r, r^T z             | barrier (in the sum)
 *   converged? beta; p = z + beta p      | barrier (p complete before the next product) */
template <int TPR>
__global__ void __launch_bounds__(PT) persist_cg_kernel(pcg_args a)
{
  cgrp::grid_group g = cgrp::this_grid();
  gs_dscalars_t *S = a.S;
  if (S->halt) return; /* every block alike: S is written only after the first barrier */
  const gs_idx_t n = a.A.n;
  const double *dinv = a.A.dinv;
  pwhole wh = {0.0, S->tol, 0.0, 0.0, 0};
  const double &tol = wh.tol;
  int c = a.c;
  double rho = S->rho[c], rnorm = S->rnorm, pq = S->pq, alpha = S->alpha;
  pstate st = {S->iter, 0, 0, 0, 0, 0};
  if (a.w.start) do { /* cg.c's start: r = b - A x0, z = M^-1 r, p = z, rho = r^T z | barrier */
      double v3[3] = {0.0, 0.0, 0.0}, t3[3];
      start_residual<TPR>(a.A, a.w, a.x, a.r, [&](gs_idx_t i, double bi, double ri) {
        const double zi = dinv ? dinv[i] * ri : ri;
        if (dinv) a.z[i] = zi;
        a.p[i] = zi;
        v3[0] += bi * bi;
        v3[1] += ri * ri;
        v3[2] += ri * zi;
      });
      if (a.w.x0) st.products++;
      if (dinv) st.precs++;
      grid_total<3>(g, v3, a.part, 3, t3); /* slots 3-5: iteration 1 sums into 0-2 */
      wh.bnorm = sqrt(t3[0]);
      rnorm = wh.rnorm0 = sqrt(t3[1]);
      rho = dinv ? t3[2] : t3[1];
      wh.tol = GS_SOLVE_TOL(a.w.rtol, wh.bnorm, a.w.atol); /* solver.c's start_known's too */
      const int h = start_halt(wh.bnorm, rnorm, tol);
      if (h) PHALT(h, GS_WHAT_NONE, 0)
      /* cg.c's initial_reason: M must be positive definite, and r0 not M-orthogonal to M^-1 r0 */
      int what;
      const int hr = gs_step_cg_rho(rho, &what);
      if (hr) PHALT(hr, what, 0)
    } while (0);
  for (int j = 0; j < a.count && !st.halt; ++j) {
    int h, what; /* a step check's halt code and detail */
    pq = product_dot<TPR>(g, a.A, a.p, a.q, a.p, a.part, 0); /* q = A p, p^T q */
    st.products++;
    /* the check writes alpha only to proceed: on a halt it stays the last step's, written back */
    h = gs_step_cg_alpha(rho, pq, &what, &alpha);
    if (h) PHALT(h, what, st.done)
    double v2[2] = {0.0, 0.0}, t2[2];
    GS_GRID_STRIDE(i, n) {
      a.x[i] += alpha * a.p[i];
      const double ri = a.r[i] - alpha * a.q[i];
      a.r[i] = ri;
      v2[0] += ri * ri;
      if (dinv) {
        const double zi = dinv[i] * ri;
        a.z[i] = zi;
        v2[1] += ri * zi;
      }
    }
    if (dinv) st.precs++;
    grid_total<2>(g, v2, a.part, 1, t2);
    rnorm = sqrt(t2[0]);
    if (rnorm <= tol) { /* converged: this iteration counts, no direction needed */
      st.done++;
      PHALT(GS_HALT_CONVERGED, GS_WHAT_NONE, st.done)
    }
    const double rho_new = dinv ? t2[1] : t2[0];
    double beta;
    h = gs_step_cg_beta(rho_new, rho, &what, &beta);
    if (h) PHALT(h, what, st.done)
    const double *z = dinv ? a.z : a.r;
    GS_GRID_STRIDE(i, n) a.p[i] = z[i] + beta * a.p[i];
    rho = rho_new;
    c ^= 1;
    st.done++;
    g.sync();
  }
  if (a.w.b && st.halt == GS_HALT_CONVERGED) { /* the pass's end: ||b - Ax|| here */
    wh.true_rnorm = true_residual<TPR>(g, a.A, a.w.b, a.x, a.part);
    wh.true_done = 1;
    st.products++;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    S->rnorm = rnorm;
    S->pq = pq;
    S->alpha = alpha;
    S->rho[c] = rho;
    write_whole(S, a.w, wh);
    write_state(S, st);
  }
}

/* ---- BiCGSTAB (bicgstab.c, right preconditioning): five barriers an iteration ----------------
 *   p = r + beta (p - omega v), phat = D^-1 p                 | barrier
 *   v = A phat, r~^T v                                        | barrier (in the sum)
 *   alpha; s = r - alpha v (in r), shat = D^-1 s, ||s||       | barrier (in the sum)
 *   half step converged? t = A shat, t^T s, t^T t             | barrier (in the sum)
 *   omega; x += alpha phat + omega shat, r = s - omega t,
 *   ||r||, r~^T r (the next rho)                              | barrier (in the sum) */
template <int TPR>
__global__ void __launch_bounds__(PT) persist_bicgstab_kernel(pbicgstab_args a)
{
  cgrp::grid_group g = cgrp::this_grid();
  gs_dscalars_t *S = a.S;
  if (S->halt) return;
  const gs_idx_t n = a.A.n;
  const double *dinv = a.A.dinv;
  pwhole wh = {0.0, S->tol, 0.0, 0.0, 0};
  const double &tol = wh.tol;
  int c = a.c, first = a.first;
  double rho = S->rho[c], rho_old = S->rho[c ^ 1], alpha = S->alpha, omega = S->omega;
  double rnorm = S->rnorm, rv = S->rv, ts = S->ts, tt = S->tt;
  pstate st = {S->iter, 0, 0, 0, 0, 0};
  if (a.w.start) do { /* bicgstab.c's start: r = b - A x0, r~ = r, rho = r~^T r | barrier */
      double v2[2] = {0.0, 0.0}, t2[2];
      start_residual<TPR>(a.A, a.w, a.x, a.r, [&](gs_idx_t i, double bi, double ri) {
        a.rhat[i] = ri;
        v2[0] += bi * bi;
        v2[1] += ri * ri;
      });
      if (a.w.x0) st.products++;
      grid_total<2>(g, v2, a.part, 3, t2);
      wh.bnorm = sqrt(t2[0]);
      rnorm = wh.rnorm0 = sqrt(t2[1]);
      rho = t2[1]; /* r~ = r */
      wh.tol = GS_SOLVE_TOL(a.w.rtol, wh.bnorm, a.w.atol);
      const int h = start_halt(wh.bnorm, rnorm, tol);
      if (h) PHALT(h, GS_WHAT_NONE, 0)
    } while (0);
  for (int j = 0; j < a.count && !st.halt; ++j) {
    int h, what; /* a step check's halt code and detail */
    h = gs_step_rho_nonzero(rho, &what);
    if (h) PHALT(h, what, st.done)
    if (first) {
      GS_GRID_STRIDE(i, n) {
        a.p[i] = a.r[i];
        if (dinv) a.phat[i] = dinv[i] * a.r[i];
      }
    } else {
      double beta;
      h = gs_step_bicgstab_beta(rho, rho_old, alpha, omega, &what, &beta);
      if (h) PHALT(h, what, st.done)
      GS_GRID_STRIDE(i, n) {
        const double pi = a.r[i] + beta * (a.p[i] - omega * a.v[i]);
        a.p[i] = pi;
        if (dinv) a.phat[i] = dinv[i] * pi;
      }
    }
    if (dinv) st.precs++;
    first = 0;
    g.sync();
    rv = product_dot<TPR>(g, a.A, a.phat, a.v, a.rhat, a.part, 0); /* v = A phat, r~^T v */
    st.products++;
    /* alpha and omega as in CG: written only to proceed. Straight into them, not through a
     * temporary: with temporaries ptxas (CUDA 13, sm_90) gave this kernel 80 registers instead
     * of 64, fewer blocks an SM, and so another grid and other reduction orders. */
    h = gs_step_bicgstab_alpha(rho, rv, &what, &alpha);
    if (h) PHALT(h, what, st.done)
    double v2[1] = {0.0}, t2[1];
    GS_GRID_STRIDE(i, n) {
      const double si = a.r[i] - alpha * a.v[i];
      a.r[i] = si;
      if (dinv) a.shat[i] = dinv[i] * si;
      v2[0] += si * si;
    }
    if (dinv) st.precs++;
    grid_total<1>(g, v2, a.part, 1, t2);
    rnorm = sqrt(t2[0]);
    if (rnorm <= tol) { /* converged at the half step: x += alpha phat, r = s */
      GS_GRID_STRIDE(i, n) a.x[i] += alpha * a.phat[i];
      PHALT(GS_HALT_HALFSTEP, GS_WHAT_NONE, st.done + 1)
    }
    double v3[2] = {0.0, 0.0}, t3[2];
    spmv_rows<TPR>(a.A, a.shat, [&](gs_idx_t i, double y) {
      a.t[i] = y;
      v3[0] += y * a.r[i];
      v3[1] += y * y;
    });
    st.products++;
    grid_total<2>(g, v3, a.part, 2, t3);
    ts = t3[0];
    tt = t3[1];
    h = gs_step_bicgstab_omega(ts, tt, &what, &omega);
    if (h) PHALT(h, what, st.done)
    double v4[2] = {0.0, 0.0}, t4[2];
    GS_GRID_STRIDE(i, n) {
      a.x[i] += alpha * a.phat[i] + omega * a.shat[i]; /* shat is r (= s) without M: read first */
      const double ri = a.r[i] - omega * a.t[i];
      a.r[i] = ri;
      v4[0] += ri * ri;
      v4[1] += a.rhat[i] * ri;
    }
    grid_total<2>(g, v4, a.part, 4, t4);
    rnorm = sqrt(t4[0]);
    rho_old = rho;
    rho = t4[1];
    c ^= 1;
    st.done++;
    if (rnorm <= tol) PHALT(GS_HALT_CONVERGED, GS_WHAT_NONE, st.done)
  }
  if (a.w.b && (st.halt == GS_HALT_CONVERGED || st.halt == GS_HALT_HALFSTEP)) {
    wh.true_rnorm = true_residual<TPR>(g, a.A, a.w.b, a.x, a.part); /* the pass's end */
    wh.true_done = 1;
    st.products++;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    write_whole(S, a.w, wh);
    S->rnorm = rnorm;
    S->rv = rv;
    S->ts = ts;
    S->tt = tt;
    S->alpha = alpha;
    S->omega = omega;
    S->rho[c] = rho;
    S->rho[c ^ 1] = rho_old;
    write_state(S, st);
  }
}

/* ---- planning and launching -------------------------------------------------------------------- */

template <class Args>
static gs_status_t launch(const void *kernel, const gs_persist_t *P, cudaStream_t stream,
                          Args *args, const char *name)
{
  void *params[] = {args};
  const gs_status_t st =
      GS_CUDA(cudaLaunchCooperativeKernel(kernel, dim3(P->blocks), dim3(PT), params, 0, stream));
  return st != GS_SUCCESS ? st : GS_CHECK_LAUNCH(stream, name);
}

/* The kernel of a method for a threads-a-row count (the compiled ones: 2, 4, 8, 16, 32). */
static const void *cg_kernel_for(int tpr)
{
  switch (tpr) {
  case 2: return (const void *)persist_cg_kernel<2>;
  case 4: return (const void *)persist_cg_kernel<4>;
  case 8: return (const void *)persist_cg_kernel<8>;
  case 16: return (const void *)persist_cg_kernel<16>;
  default: return (const void *)persist_cg_kernel<32>;
  }
}

static const void *bicgstab_kernel_for(int tpr)
{
  switch (tpr) {
  case 2: return (const void *)persist_bicgstab_kernel<2>;
  case 4: return (const void *)persist_bicgstab_kernel<4>;
  case 8: return (const void *)persist_bicgstab_kernel<8>;
  case 16: return (const void *)persist_bicgstab_kernel<16>;
  default: return (const void *)persist_bicgstab_kernel<32>;
  }
}

extern "C" int gs_persist_tpr(double mean_row)
{
  int t = 2;
  while (t < 32 && 2.0 * t < mean_row) t *= 2; /* about two entries a thread */
  return t;
}

extern "C" unsigned gs_persist_grid(gs_idx_t n, int tpr, int sm_count, int per_sm)
{
  const int64_t need = ((int64_t)n * tpr + PT - 1) / PT;
  int64_t g = (int64_t)sm_count * per_sm;
  if (g > need) g = need;
  if (g > GS_PERSIST_MAX_BLOCKS) g = GS_PERSIST_MAX_BLOCKS;
  return g < 1 ? 1u : (unsigned)g;
}

extern "C" int32_t gs_persist_long_min(int tpr) { return GS_PERSIST_LONG_STEPS * tpr; }

extern "C" gs_status_t gs_persist_plan(gs_solver_t *s, const gs_dcsr_t *A, const gs_csr_t *H,
                                       const double *dinv, const char **why)
{
  gs_persist_t *P = &s->persist;
  gs_context_t *ctx = s->ctx;
  *why = NULL;
  int coop = 0;
  GS_CHECK(GS_CUDA(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, ctx->device)));
  if (!coop) {
    *why = "the device cannot launch cooperative kernels";
    return GS_SUCCESS;
  }
  if (A->wide || !A->d_row_ptr32) {
    *why = "the matrix has more than 2^31-1 entries";
    return GS_SUCCESS;
  }
  const int tpr = gs_persist_tpr(A->m > 0 ? (double)A->nnz / (double)A->m : 1.0);
  const void *k1 = cg_kernel_for(tpr), *k2 = bicgstab_kernel_for(tpr);
  int occ1 = 0, occ2 = 0;
  GS_CHECK(GS_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ1, k1, PT, 0)));
  GS_CHECK(GS_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ2, k2, PT, 0)));
  int per_sm = occ1 < occ2 ? occ1 : occ2;
  if (per_sm < 1) {
    *why = "the persistent kernel does not fit on an SM";
    return GS_SUCCESS;
  }
  const int cap = ctx->test_persist_per_sm > 0 ? ctx->test_persist_per_sm : GS_PERSIST_PER_SM;
  if (per_sm > cap) per_sm = cap;
  P->tpr = tpr;
  P->blocks = gs_persist_grid(A->m, tpr, ctx->sm_count, per_sm);
  P->n = A->m;
  P->row_ptr = A->d_row_ptr32;
  P->col = A->d_col;
  P->val = A->d_val;
  P->dinv = dinv;
  GS_CHECK(gs_dmalloc(ctx, (void **)&P->part, (size_t)GS_PERSIST_SLOTS * P->blocks * sizeof(double),
                      "the persistent iterations' partial sums"));
  /* the long rows, a block each in the product (spmv_rows) */
  P->long_min = gs_persist_long_min(tpr);
  P->nlong = 0;
  for (gs_idx_t i = 0; i < H->m; ++i) P->nlong += H->row_ptr[i + 1] - H->row_ptr[i] >= P->long_min;
  if (P->nlong > 0) {
    int32_t *h = (int32_t *)malloc((size_t)P->nlong * sizeof *h);
    if (!h) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory for the long rows' list");
    int j = 0;
    for (gs_idx_t i = 0; i < H->m; ++i)
      if (H->row_ptr[i + 1] - H->row_ptr[i] >= P->long_min) h[j++] = (int32_t)i;
    const gs_status_t st = gs_upload(ctx, (void **)&P->long_rows, h,
                                     (size_t)P->nlong * sizeof *h, "the persistent product's long rows");
    free(h);
    GS_CHECK(st);
  } else {
    P->long_min = INT32_MAX;
  }
  P->use = 1;
  return GS_SUCCESS;
}

static pmat mat_of(const gs_persist_t *P)
{
  pmat A = {P->n, P->row_ptr, P->col, P->val, P->dinv, P->long_rows, P->nlong, P->long_min};
  return A;
}

/* The whole-pass part of a launch; consumes s->persist.start. */
static pstart start_of(gs_solver_t *s)
{
  pstart w = {NULL, s->opts.rtol, s->opts.atol, 0, s->opts.x0_given};
  if (gs_persist_whole(s)) {
    w.b = s->d_b;
    w.start = s->persist.start;
  }
  s->persist.start = 0;
  return w;
}

extern "C" int gs_persist_whole(const gs_solver_t *s)
{
  return s->persist.use && !s->opts.monitor && s->vec == &gs_vecops_cuda;
}

extern "C" gs_status_t gs_persist_cg(gs_solver_t *s, int it, int count, double *x, double *r,
                                     double *p, double *q, double *z)
{
  const gs_persist_t *P = &s->persist;
  pcg_args a = {mat_of(P), s->d_s, P->part, start_of(s), count, (it - 1) & 1, x, r, p, q,
                P->dinv ? z : r};
  return launch(cg_kernel_for(P->tpr), P, s->ctx->stream, &a, "persist_cg_kernel");
}

extern "C" gs_status_t gs_persist_bicgstab(gs_solver_t *s, int it, int count, double *x,
                                           double *r, double *rhat, double *p, double *v,
                                           double *t, double *phat, double *shat)
{
  const gs_persist_t *P = &s->persist;
  pbicgstab_args a = {mat_of(P), s->d_s, P->part, start_of(s), count, it & 1, it == 1, x, r,
                      rhat, p, v, t, P->dinv ? phat : p, P->dinv ? shat : r};
  return launch(bicgstab_kernel_for(P->tpr), P, s->ctx->stream, &a, "persist_bicgstab_kernel");
}
