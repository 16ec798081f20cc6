/* batch/batch_solve_body.h: one problem of the batched solver (CG, BiCGSTAB, GMRES(m); Jacobi,
 * block-Jacobi, ILU(0)), written once for two includers:
 *   batch_solve_kernels.cu  a thread block per problem (the kernel),
 *   batch_solve_host.c      one thread per problem on the host (gs_batch_host_solve): the same
 *                           code run sequentially, the check of the algorithm without a GPU.
 * C that is also CUDA C++. The includer defines first:
 *   GS_BD_FN                         the qualifiers of the functions below
 *   GS_BD_TID, GS_BD_NT              this thread's index in the block, the block's threads
 *   GS_BD_LANE, GS_BD_WARP, GS_BD_NWARPS
 *   GS_BD_SYNC()                     the block barrier
 *   gs_bd_warp_sum(s)                the sum of s over the warp, in every lane
 *   gs_bd_sum2(a, b, red)            (sum of a, sum of b) over the block, the same in every
 *                                    thread (partials added in one order by all), red: 64 doubles
 *   gs_bd_min(v, redi)               the minimum of v over the block, redi: 32 ints
 *   gs_bd_row_dot(rp, ci, val, x, r, active, W, lane)   row r of A times x, W lanes a row,
 *                                    complete in the group's lane 0
 * Rules the code keeps (the device's): every barrier and every reduction is reached by all
 * threads of the block (all branches around them depend only on values every thread holds
 * equally: the problem's sizes and the reduced scalars); between two barriers a thread writes
 * only entries no other thread reads or writes (rows k = tid, tid + NT, ...: the same map for
 * every vector loop, so a thread may read back its own rows without a barrier; the product,
 * whose groups own other rows, and the preconditioners end with a barrier). Scalars that one
 * thread computes (GMRES's Givens rotations and back substitution) go through memory and a
 * barrier to the others.
 *
 * The steps are gs_solve's (solvers/cg.c, bicgstab.c, gmres.c), in the same order, with the same
 * tests and reasons. GMRES: right preconditioning (w = A M^-1 v_j), Arnoldi by classical
 * Gram-Schmidt with one re-orthogonalization pass (CGS2, as gs_solve: h = V^T w, w -= V h, twice,
 * each pass one multi-dot over the block: two reductions an iteration where modified
 * Gram-Schmidt needs j + 1, and orthogonality to working precision), Givens rotations, the
 * estimate |g_{j+1}| checked every iteration to end the cycle, the true residual b - A x at the
 * end of each cycle deciding convergence and starting the next cycle, breakdown (h_{j+1,j} <=
 * eps ||A M^-1 v_j||: happy when the true residual then meets the tolerance), stagnation (a
 * cycle that does not reduce ||r|| by 1e-12 of it). */
#ifndef GS_BATCH_SOLVE_BODY_H
#define GS_BATCH_SOLVE_BODY_H

#include <float.h>
#include <math.h>
#include <stdint.h>

#include "batch/batch_impl.h"

#define GS_BD_FOR(k, n) for (int32_t k = GS_BD_TID; k < (n); k += GS_BD_NT)
#define GS_BD_GMRES_STAGNATION 1e-12 /* solvers/gmres.c's GMRES_STAGNATION */

/* One problem as the body sees it. */
typedef struct gs_bd_prob {
  const int32_t *rp;  /* row pointers, relative to the problem's first entry */
  const gs_idx_t *ci; /* local columns */
  const double *val;
  int32_t n, nnz;
  int W;              /* lanes per row of the product */
  const double *b;
  double *xout;
  double *vec, *pc, *small; /* its parts (batch_impl.h: gs_batch_slot_t) */
  const int32_t *idx;       /* its preconditioner index arrays */
  gs_batch_slot_t slot;
  double *red;              /* 64 doubles of reduction scratch */
  int *redi;                /* 32 ints */
} gs_bd_prob_t;

/* dst = A src (W lanes a row), then a barrier. src != dst. */
GS_BD_FN void gs_bd_spmv(const gs_bd_prob_t *P, const double *src, double *dst)
{
  const int W = P->W, lane = GS_BD_TID & (W - 1), G = GS_BD_NT / W;
  const int32_t g = GS_BD_TID / W;
  for (int32_t r0 = 0; r0 < P->n; r0 += G) {
    const int32_t r = r0 + g;
    const double s = gs_bd_row_dot(P->rp, P->ci, P->val, src, r, r < P->n, W, lane);
    if (lane == 0 && r < P->n) dst[r] = s;
  }
  GS_BD_SYNC();
}

/* (a1^T b1, a2^T b2) over the problem (a2 NULL: 0). */
GS_BD_FN gs_bd_pair_t gs_bd_dot2(const gs_bd_prob_t *P, const double *a1, const double *b1,
                                 const double *a2, const double *b2)
{
  double s1 = 0.0, s2 = 0.0;
  GS_BD_FOR(k, P->n) {
    s1 += a1[k] * b1[k];
    if (a2) s2 += a2[k] * b2[k];
  }
  return gs_bd_sum2(s1, s2, P->red);
}

GS_BD_FN int gs_bd_converged(double rnorm, double tol_rel)
{
  return rnorm <= tol_rel ? GS_CONVERGED_RTOL : GS_CONVERGED_ATOL;
}

/* ---- preconditioners ------------------------------------------------------------------------
 * Setup returns the first row (of the problem) it failed at, or -1, the same in every thread,
 * with *detail set; apply computes dst = M^-1 src (src == dst allowed) and ends with a barrier.
 * Jacobi's apply is elementwise (a thread's own rows: no barrier needed before it); the others
 * read rows of other threads and begin with one. */

/* Jacobi: d = 1 ./ diag(A), duplicates summed (precond/jacobi.c). */
GS_BD_FN int gs_bd_jacobi_setup(const gs_bd_prob_t *P, double *d)
{
  int bad = INT32_MAX;
  GS_BD_FOR(r, P->n) {
    double a = 0.0;
    for (int32_t k = P->rp[r]; k < P->rp[r + 1]; ++k)
      if (P->ci[k] == r) a += P->val[k];
    d[r] = a != 0.0 ? 1.0 / a : 0.0;
    if (a == 0.0 && r < bad) bad = r;
  }
  bad = gs_bd_min(bad, P->redi);
  return bad == INT32_MAX ? -1 : bad;
}

/* Block-Jacobi, one thread a block: the s x s diagonal block extracted from the CSR (duplicates
 * summed in stored order, gs_bj_extract), then LU with partial pivoting and the pivot rule of
 * gs_bj_lu (GS_BJ_PIVOT_OK on the magnitudes m_ij each entry was computed from); LU row-major,
 * then the s pivots (as doubles), at the block's offset in the preconditioner's data. */
GS_BD_FN int gs_bd_bj_setup(const gs_bd_prob_t *P, double *F)
{
  int bad = INT32_MAX;
  const int32_t *bk = P->idx;
  GS_BD_FOR(bi, P->slot.nb) {
    const int32_t r0 = bk[2 * bi], s = bk[2 * bi + 2] - r0;
    double *B = F + bk[2 * bi + 1];
    double M[GS_BATCH_BJ_MAX_BLOCK * GS_BATCH_BJ_MAX_BLOCK];
    for (int k = 0; k < s * s; ++k) B[k] = 0.0;
    for (int i = 0; i < s; ++i)
      for (int32_t k = P->rp[r0 + i]; k < P->rp[r0 + i + 1]; ++k) {
        const int32_t c = P->ci[k] - r0;
        if (c >= 0 && c < s) B[i * s + c] += P->val[k];
      }
    for (int k = 0; k < s * s; ++k) M[k] = fabs(B[k]);
    int fail = -1;
    for (int k = 0; k < s && fail < 0; ++k) {
      int p = -1;
      double best = -1.0;
      for (int i = k; i < s; ++i) {
        const double a = fabs(B[i * s + k]);
        if (GS_BATCH_BJ_PIVOT_OK(a, M[i * s + k], s) && a > best) {
          best = a;
          p = i;
        }
      }
      B[s * s + k] = (double)(p < 0 ? k : p);
      if (p < 0) {
        fail = k;
        break;
      }
      if (p != k)
        for (int j = 0; j < s; ++j) {
          double t = B[k * s + j];
          B[k * s + j] = B[p * s + j];
          B[p * s + j] = t;
          t = M[k * s + j];
          M[k * s + j] = M[p * s + j];
          M[p * s + j] = t;
        }
      for (int i = k + 1; i < s; ++i) {
        if (!GS_BATCH_BJ_PIVOT_OK(fabs(B[i * s + k]), M[i * s + k], s)) { /* noise: taken as zero */
          B[i * s + k] = 0.0;
          continue;
        }
        const double l = B[i * s + k] / B[k * s + k];
        B[i * s + k] = l;
        for (int j = k + 1; j < s; ++j) {
          B[i * s + j] -= l * B[k * s + j];
          M[i * s + j] += fabs(l) * M[k * s + j];
        }
      }
    }
    if (fail >= 0 && r0 + fail < bad) bad = r0 + fail;
  }
  bad = gs_bd_min(bad, P->redi);
  return bad == INT32_MAX ? -1 : bad;
}

GS_BD_FN void gs_bd_bj_apply(const gs_bd_prob_t *P, const double *F, const double *src,
                             double *dst)
{
  const int32_t *bk = P->idx;
  GS_BD_SYNC(); /* src complete */
  GS_BD_FOR(bi, P->slot.nb) {
    const int32_t r0 = bk[2 * bi], s = bk[2 * bi + 2] - r0;
    const double *B = F + bk[2 * bi + 1];
    double x[GS_BATCH_BJ_MAX_BLOCK];
    for (int i = 0; i < s; ++i) x[i] = src[r0 + i];
    for (int k = 0; k < s; ++k) { /* x <- P x */
      const int p = (int)B[s * s + k];
      if (p != k) {
        const double t = x[k];
        x[k] = x[p];
        x[p] = t;
      }
    }
    for (int i = 1; i < s; ++i) /* x <- L^-1 x */
      for (int j = 0; j < i; ++j) x[i] -= B[i * s + j] * x[j];
    for (int i = s - 1; i >= 0; --i) { /* x <- U^-1 x */
      for (int j = i + 1; j < s; ++j) x[i] -= B[i * s + j] * x[j];
      x[i] /= B[i * s + i];
    }
    for (int i = 0; i < s; ++i) dst[r0 + i] = x[i];
  }
  GS_BD_SYNC();
}

/* ILU(0) on the merged pattern (batch_plan.c), row-by-row IKJ (Saad, Iterative Methods for
 * Sparse Linear Systems, Algorithm 10.4): for each k < i stored in row i, in column order,
 * l_ik = a_ik / u_kk and a_ij -= l_ik u_kj for the j > k stored in both rows. A thread a row,
 * the rows of one level of the lower triangle at a time (they only read rows of earlier levels,
 * final by then). A missing diagonal entry, or a pivot u_ii that is zero or not finite: the
 * first such row. */
GS_BD_FN int gs_bd_ilu_setup(const gs_bd_prob_t *P, double *F)
{
  const int32_t n = P->n;
  const gs_batch_ilu_idx_t I = gs_batch_ilu_layout(n, P->nnz, P->slot.nb, P->slot.nlev_l,
                                                   P->slot.nlev_u);
  const int32_t *lrp = P->idx + I.lrp, *lci = P->idx + I.lci, *ldiag = P->idx + I.ldiag;
  const int32_t *src = P->idx + I.src, *lptr = P->idx + I.lptr, *lrows = P->idx + I.lrows;
  int bad = INT32_MAX;
  GS_BD_FOR(r, n) { /* A's values on the merged pattern, a row's duplicates in stored order */
    for (int32_t q = lrp[r]; q < lrp[r + 1]; ++q) F[q] = 0.0;
    for (int32_t k = P->rp[r]; k < P->rp[r + 1]; ++k) F[src[k]] += P->val[k];
    if (ldiag[r] < 0 && r < bad) bad = r;
  }
  bad = gs_bd_min(bad, P->redi); /* (its barriers also complete F) */
  if (bad != INT32_MAX) return bad;
  for (int32_t lv = 0; lv < P->slot.nlev_l; ++lv) {
    for (int32_t t = lptr[lv] + GS_BD_TID; t < lptr[lv + 1]; t += GS_BD_NT) {
      const int32_t i = lrows[t], end = lrp[i + 1];
      for (int32_t p = lrp[i]; p < ldiag[i]; ++p) {
        const int32_t k = lci[p];
        const double l = F[p] / F[ldiag[k]];
        F[p] = l;
        /* the j > k of row i against row k's upper part, both sorted */
        int32_t a = p + 1, c = ldiag[k] + 1;
        const int32_t kend = lrp[k + 1];
        while (a < end && c < kend) {
          if (lci[a] == lci[c]) F[a++] -= l * F[c++];
          else if (lci[a] < lci[c]) ++a;
          else ++c;
        }
      }
    }
    GS_BD_SYNC();
  }
  GS_BD_FOR(r, n) {
    const double d = F[ldiag[r]];
    if ((d == 0.0 || !isfinite(d)) && r < bad) bad = r;
  }
  bad = gs_bd_min(bad, P->redi);
  return bad == INT32_MAX ? -1 : bad;
}

/* z = U^-1 L^-1 r, level by level (L unit lower, U upper with the pivots), in place allowed:
 * row i reads src[i] before writing dst[i] and only rows of earlier levels besides. */
GS_BD_FN void gs_bd_ilu_apply(const gs_bd_prob_t *P, const double *F, const double *src,
                              double *dst)
{
  const gs_batch_ilu_idx_t I = gs_batch_ilu_layout(P->n, P->nnz, P->slot.nb, P->slot.nlev_l,
                                                   P->slot.nlev_u);
  const int32_t *lrp = P->idx + I.lrp, *lci = P->idx + I.lci, *ldiag = P->idx + I.ldiag;
  const int32_t *lptr = P->idx + I.lptr, *lrows = P->idx + I.lrows;
  const int32_t *uptr = P->idx + I.uptr, *urows = P->idx + I.urows;
  GS_BD_SYNC(); /* src complete */
  for (int32_t lv = 0; lv < P->slot.nlev_l; ++lv) {
    for (int32_t t = lptr[lv] + GS_BD_TID; t < lptr[lv + 1]; t += GS_BD_NT) {
      const int32_t i = lrows[t];
      double s = src[i];
      for (int32_t p = lrp[i]; p < ldiag[i]; ++p) s -= F[p] * dst[lci[p]];
      dst[i] = s;
    }
    GS_BD_SYNC();
  }
  for (int32_t lv = 0; lv < P->slot.nlev_u; ++lv) {
    for (int32_t t = uptr[lv] + GS_BD_TID; t < uptr[lv + 1]; t += GS_BD_NT) {
      const int32_t i = urows[t];
      double s = dst[i];
      for (int32_t p = ldiag[i] + 1; p < lrp[i + 1]; ++p) s -= F[p] * dst[lci[p]];
      dst[i] = s / F[ldiag[i]];
    }
    GS_BD_SYNC();
  }
}

/* The preconditioner's setup: -1, or the failing row with *detail. */
GS_BD_FN int gs_bd_pc_setup(const gs_batch_solve_launch_t *L, const gs_bd_prob_t *P,
                            int *detail)
{
  int bad = -1;
  switch (L->precond) {
  case GS_BATCH_PRECOND_JACOBI:
    bad = gs_bd_jacobi_setup(P, P->pc);
    *detail = GS_BATCH_DETAIL_JACOBI_DIAG;
    break;
  case GS_BATCH_PRECOND_BLOCK_JACOBI:
    bad = gs_bd_bj_setup(P, P->pc);
    *detail = GS_BATCH_DETAIL_BJ_SINGULAR;
    break;
  case GS_BATCH_PRECOND_ILU0: {
    bad = gs_bd_ilu_setup(P, P->pc);
    /* which of the two: a missing diagonal entry is known from the pattern */
    const gs_batch_ilu_idx_t I = gs_batch_ilu_layout(P->n, P->nnz, P->slot.nb, P->slot.nlev_l,
                                                     P->slot.nlev_u);
    *detail = bad >= 0 && P->idx[I.ldiag + bad] < 0 ? GS_BATCH_DETAIL_ILU_DIAG
                                                    : GS_BATCH_DETAIL_ILU_PIVOT;
    break;
  }
  default: break;
  }
  if (bad < 0) *detail = GS_BATCH_DETAIL_NONE;
  GS_BD_SYNC(); /* the data complete before its first use */
  return bad;
}

/* dst = M^-1 src, then a barrier (none: a copy). */
GS_BD_FN void gs_bd_pc_apply(const gs_batch_solve_launch_t *L, const gs_bd_prob_t *P,
                             const double *src, double *dst)
{
  switch (L->precond) {
  case GS_BATCH_PRECOND_JACOBI:
    GS_BD_FOR(k, P->n) dst[k] = P->pc[k] * src[k];
    GS_BD_SYNC();
    break;
  case GS_BATCH_PRECOND_BLOCK_JACOBI: gs_bd_bj_apply(P, P->pc, src, dst); break;
  case GS_BATCH_PRECOND_ILU0: gs_bd_ilu_apply(P, P->pc, src, dst); break;
  default:
    GS_BD_FOR(k, P->n) dst[k] = src[k];
    GS_BD_SYNC();
    break;
  }
}

/* ---- the methods ------------------------------------------------------------------------------
 * Each starts from x (x0 or 0) and r = b - A x0 in vec[n .. 2n), and leaves x, the reason, the
 * iterations and the last checked norm in S. */
typedef struct gs_bd_state {
  int reason, its, detail, bad_row;
  double rnorm, rnorm0;
  double tol_rel, tol;
} gs_bd_state_t;

/* CG (solvers/cg.c). Jacobi is applied inside the vector loop, as before the other
 * preconditioners came (no barrier); block-Jacobi and ILU(0) through gs_bd_pc_apply. */
GS_BD_FN void gs_bd_cg(const gs_batch_solve_launch_t *L, const gs_bd_prob_t *P,
                       gs_bd_state_t *S)
{
  const int32_t n = P->n;
  const int pc = L->precond != GS_BATCH_PRECOND_NONE;
  const int jac = L->precond == GS_BATCH_PRECOND_JACOBI, other = pc && !jac;
  double *x = P->vec, *r = x + n, *pv = x + 2 * (int64_t)n, *q = x + 3 * (int64_t)n;
  double *z = pc ? x + 4 * (int64_t)n : r;
  const double *d = P->pc;
  if (jac) GS_BD_FOR(k, n) z[k] = d[k] * r[k];
  else if (other) gs_bd_pc_apply(L, P, r, z);
  gs_bd_pair_t s = gs_bd_dot2(P, r, r, r, z);
  double rho = s.b;
  S->rnorm = S->rnorm0 = sqrt(s.a);
  GS_BD_FOR(k, n) pv[k] = z[k];
  GS_BD_SYNC();
  int reason = GS_REASON_NONE, its = 0;
  if (!isfinite(S->rnorm)) reason = GS_DIVERGED_NANINF;
  else if (S->rnorm <= S->tol) reason = gs_bd_converged(S->rnorm, S->tol_rel);
  else if (L->maxit <= 0) reason = GS_DIVERGED_MAXIT;
  else if (!isfinite(rho)) reason = GS_DIVERGED_NANINF;
  else if (rho < 0.0) reason = GS_DIVERGED_INDEFINITE;
  else if (rho == 0.0) reason = GS_DIVERGED_BREAKDOWN;
  for (int it = 1; reason == GS_REASON_NONE; ++it) {
    gs_bd_spmv(P, pv, q);                                      /* q <- A p          */
    const double pq = gs_bd_dot2(P, pv, q, NULL, NULL).a;      /* p^T q             */
    its = it - 1;
    if (!isfinite(pq)) { reason = GS_DIVERGED_NANINF; break; }
    if (!(pq > 0.0)) { reason = GS_DIVERGED_INDEFINITE; break; }
    const double alpha = rho / pq;
    if (!isfinite(alpha)) { reason = GS_DIVERGED_NANINF; break; }
    GS_BD_FOR(k, n) {
      x[k] += alpha * pv[k];                                   /* x <- x + alpha p  */
      r[k] -= alpha * q[k];                                    /* r <- r - alpha q  */
      if (jac) z[k] = d[k] * r[k];                             /* z <- M^-1 r       */
    }
    if (other) gs_bd_pc_apply(L, P, r, z);                     /* z <- M^-1 r       */
    s = gs_bd_dot2(P, r, r, r, z);                             /* ||r||^2, r^T z    */
    S->rnorm = sqrt(s.a);
    its = it;
    const double rho_new = pc ? s.b : S->rnorm * S->rnorm;
    if (!isfinite(S->rnorm)) { reason = GS_DIVERGED_NANINF; break; }
    if (S->rnorm <= S->tol) { reason = gs_bd_converged(S->rnorm, S->tol_rel); break; }
    if (!isfinite(rho_new)) { reason = GS_DIVERGED_NANINF; break; }
    if (rho_new < 0.0) { reason = GS_DIVERGED_INDEFINITE; break; }
    if (rho_new == 0.0) { reason = GS_DIVERGED_BREAKDOWN; break; }
    const double beta = rho_new / rho;
    if (!isfinite(beta)) { reason = GS_DIVERGED_NANINF; break; }
    GS_BD_FOR(k, n) pv[k] = z[k] + beta * pv[k];               /* p <- z + beta p   */
    GS_BD_SYNC();
    rho = rho_new;
    if (it >= L->maxit) reason = GS_DIVERGED_MAXIT;
  }
  S->reason = reason;
  S->its = its;
}

/* BiCGSTAB (solvers/bicgstab.c), right preconditioned: a half step that converges counts as an
 * iteration. */
GS_BD_FN void gs_bd_bicgstab(const gs_batch_solve_launch_t *L, const gs_bd_prob_t *P,
                             gs_bd_state_t *S)
{
  const int32_t n = P->n;
  const int pc = L->precond != GS_BATCH_PRECOND_NONE;
  const int jac = L->precond == GS_BATCH_PRECOND_JACOBI, other = pc && !jac;
  double *x = P->vec, *r = x + n, *rh = x + 2 * (int64_t)n, *pv = x + 3 * (int64_t)n;
  double *v = x + 4 * (int64_t)n, *t = x + 5 * (int64_t)n;
  double *ph = pc ? x + 6 * (int64_t)n : pv, *sh = pc ? x + 7 * (int64_t)n : r;
  const double *d = P->pc;
  GS_BD_FOR(k, n) rh[k] = r[k];                                /* r~ <- r0          */
  S->rnorm = S->rnorm0 = sqrt(gs_bd_dot2(P, r, r, NULL, NULL).a);
  int reason = GS_REASON_NONE, its = 0;
  if (!isfinite(S->rnorm)) reason = GS_DIVERGED_NANINF;
  else if (S->rnorm <= S->tol) reason = gs_bd_converged(S->rnorm, S->tol_rel);
  else if (L->maxit <= 0) reason = GS_DIVERGED_MAXIT;
  double rho_prev = 0.0, alpha = 0.0, omega = 0.0;
  for (int it = 1; reason == GS_REASON_NONE; ++it) {
    its = it - 1;
    const double rho = gs_bd_dot2(P, rh, r, NULL, NULL).a;    /* r~^T r            */
    if (!isfinite(rho)) { reason = GS_DIVERGED_NANINF; break; }
    if (rho == 0.0) { reason = GS_DIVERGED_BREAKDOWN; break; }
    if (it == 1) {
      GS_BD_FOR(k, n) pv[k] = r[k];                            /* p <- r            */
    } else {
      if (omega == 0.0) { reason = GS_DIVERGED_BREAKDOWN; break; }
      const double beta = (rho / rho_prev) * (alpha / omega);
      if (!isfinite(beta)) { reason = GS_DIVERGED_NANINF; break; }
      GS_BD_FOR(k, n) pv[k] = r[k] + beta * (pv[k] - omega * v[k]); /* p <- r + b(p - w v) */
    }
    if (jac) GS_BD_FOR(k, n) ph[k] = d[k] * pv[k];             /* p^ <- M^-1 p      */
    if (other) gs_bd_pc_apply(L, P, pv, ph);
    else GS_BD_SYNC();
    gs_bd_spmv(P, ph, v);                                      /* v <- A p^         */
    const double rv = gs_bd_dot2(P, rh, v, NULL, NULL).a;      /* r~^T v            */
    if (!isfinite(rv)) { reason = GS_DIVERGED_NANINF; break; }
    if (rv == 0.0) { reason = GS_DIVERGED_BREAKDOWN; break; }
    alpha = rho / rv;
    if (!isfinite(alpha)) { reason = GS_DIVERGED_NANINF; break; }
    GS_BD_FOR(k, n) {
      r[k] -= alpha * v[k];                                    /* s <- r - alpha v  */
      if (jac) sh[k] = d[k] * r[k];                            /* s^ <- M^-1 s      */
    }
    if (other) gs_bd_pc_apply(L, P, r, sh);
    const double snorm = sqrt(gs_bd_dot2(P, r, r, NULL, NULL).a); /* ||s||          */
    gs_bd_spmv(P, sh, t);                                      /* t <- A s^         */
    const gs_bd_pair_t tt2 = gs_bd_dot2(P, t, r, t, t);        /* t^T s, t^T t      */
    if (snorm <= S->tol) { /* converged at the half step: x <- x + alpha p^ */
      GS_BD_FOR(k, n) x[k] += alpha * ph[k];
      S->rnorm = snorm;
      its = it;
      reason = gs_bd_converged(S->rnorm, S->tol_rel);
      break;
    }
    if (!isfinite(tt2.b)) { reason = GS_DIVERGED_NANINF; break; }
    if (tt2.b == 0.0) { reason = GS_DIVERGED_BREAKDOWN; break; }
    omega = tt2.a / tt2.b;
    if (!isfinite(omega)) { reason = GS_DIVERGED_NANINF; break; }
    GS_BD_FOR(k, n) {
      x[k] += alpha * ph[k] + omega * sh[k];                   /* x += a p^ + w s^  */
      r[k] -= omega * t[k];                                    /* r <- s - omega t  */
    }
    S->rnorm = sqrt(gs_bd_dot2(P, r, r, NULL, NULL).a);        /* ||r||             */
    its = it;
    rho_prev = rho;
    if (!isfinite(S->rnorm)) reason = GS_DIVERGED_NANINF;
    else if (S->rnorm <= S->tol) reason = gs_bd_converged(S->rnorm, S->tol_rel);
    else if (it >= L->maxit) reason = GS_DIVERGED_MAXIT;
  }
  S->reason = reason;
  S->its = its;
}

/* h[i] = sum over the block of the per-thread partial sums of V_i^T w, for i < k: each thread
 * sums its rows for every i, the warps' totals go to part[warp (m + 1) + i], and thread i adds
 * the warps' totals in warp order (every h the same in all threads after the barrier). */
GS_BD_FN void gs_bd_mdot(const gs_bd_prob_t *P, int k, int ldp, const double *V,
                         const double *w, double *part, double *h)
{
  const int32_t n = P->n;
  for (int i = 0; i < k; ++i) {
    const double *vi = V + (int64_t)i * n;
    double s = 0.0;
    GS_BD_FOR(l, n) s += vi[l] * w[l];
    s = gs_bd_warp_sum(s);
    if (GS_BD_LANE == 0) part[GS_BD_WARP * ldp + i] = s;
  }
  GS_BD_SYNC();
  for (int i = GS_BD_TID; i < k; i += GS_BD_NT) {
    double s = 0.0;
    for (int wp = 0; wp < GS_BD_NWARPS; ++wp) s += part[wp * ldp + i];
    h[i] = s;
  }
  GS_BD_SYNC();
}

/* GMRES's stop test of an iteration (gs_solver_check): the estimate, then the limit. */
GS_BD_FN int gs_bd_gmres_check(const gs_batch_solve_launch_t *L, const gs_bd_state_t *S, int it,
                               double rnorm)
{
  if (!isfinite(rnorm)) return GS_DIVERGED_NANINF;
  if (rnorm <= S->tol) return gs_bd_converged(rnorm, S->tol_rel);
  if (it >= L->maxit) return GS_DIVERGED_MAXIT;
  return GS_REASON_NONE;
}

/* GMRES(m) (solvers/gmres.c), right preconditioned. Vectors: x, V = v_0 .. v_m (v_0 holds r
 * first; w = A M^-1 v_j is built in v_{j+1}), z = M^-1 v_j (with a preconditioner). Small
 * arrays (batch_impl.h gs_batch_gmres_small): the rotated columns in R (column j packed at
 * j (j + 1) / 2), the rotations, g, y, the new column h (and h2, the second pass), the warps'
 * partial sums, and scalars thread 0 broadcasts: sc[0] the estimate |g_{j+1}|, sc[1] 1 when the
 * column was not finite, sc[2] 1 for a zero column, sc[3] 1 for h_{j+1,j} ~ 0, sc[4] 1 / h_{j+1,j},
 * sc[5] 1 when y is not finite. */
GS_BD_FN void gs_bd_gmres(const gs_batch_solve_launch_t *L, const gs_bd_prob_t *P,
                          gs_bd_state_t *S)
{
  const int32_t n = P->n;
  const int m = P->slot.restart, ldp = m + 1;
  const int pc = L->precond != GS_BATCH_PRECOND_NONE;
  double *x = P->vec, *V = x + n, *z = pc ? V + (int64_t)(m + 1) * n : NULL;
  double *R = P->small, *cs = R + (int64_t)m * (m + 1) / 2, *sn = cs + m, *g = sn + m;
  double *y = g + m + 1, *h = y + m, *h2 = h + m + 1, *part = h2 + m + 1;
  double *sc = part + (int64_t)GS_BD_NWARPS * ldp;
  int it = 0, reason = GS_REASON_NONE;
  double beta = sqrt(gs_bd_dot2(P, V, V, NULL, NULL).a);       /* beta <- ||r0||    */
  S->rnorm = S->rnorm0 = beta;
  reason = gs_bd_gmres_check(L, S, 0, beta);
  while (reason == GS_REASON_NONE) {
    const double c0 = 1.0 / beta;
    GS_BD_FOR(k, n) V[k] *= c0;                                /* v_0 <- r / beta   */
    GS_BD_SYNC();
    if (GS_BD_TID == 0) {
      g[0] = beta;
      for (int i = 1; i <= m; ++i) g[i] = 0.0;
    }
    int j = 0, lucky = 0, inner = GS_REASON_NONE;
    while (j < m && inner == GS_REASON_NONE && !lucky) {
      double *vj = V + (int64_t)j * n, *w = V + (int64_t)(j + 1) * n;
      const int k = j + 1;
      ++it;
      if (pc) {
        gs_bd_pc_apply(L, P, vj, z);                           /* z <- M^-1 v_j     */
        gs_bd_spmv(P, z, w);                                   /* w <- A z          */
      } else {
        gs_bd_spmv(P, vj, w);                                  /* w <- A v_j        */
      }
      gs_bd_mdot(P, k, ldp, V, w, part, h);                    /* h <- V^T w        */
      GS_BD_FOR(l, n) {                                        /* w <- w - V h      */
        double s = w[l];
        for (int i = 0; i < k; ++i) s -= V[(int64_t)i * n + l] * h[i];
        w[l] = s;
      }
      gs_bd_mdot(P, k, ldp, V, w, part, h2);                   /* h2 <- V^T w       */
      double ss = 0.0;
      GS_BD_FOR(l, n) {                                        /* w <- w - V h2     */
        double s = w[l];
        for (int i = 0; i < k; ++i) s -= V[(int64_t)i * n + l] * h2[i];
        w[l] = s;
        ss += s * s;
      }
      const double hn = sqrt(gs_bd_sum2(ss, 0.0, P->red).a);  /* h_{j+1,j} = ||w|| */
      if (GS_BD_TID == 0) { /* h += h2, the rotations, the estimate */
        double h0 = hn * hn;
        for (int i = 0; i < k; ++i) {
          h[i] += h2[i];
          h0 += h[i] * h[i];
        }
        h0 = sqrt(h0); /* ||A M^-1 v_j|| before orthogonalization */
        sc[1] = !isfinite(h0);
        sc[2] = sc[3] = 0.0;
        if (sc[1] == 0.0) {
          for (int i = 0; i < j; ++i) {
            const double a = h[i], bb = h[i + 1];
            h[i] = cs[i] * a + sn[i] * bb;
            h[i + 1] = -sn[i] * a + cs[i] * bb;
          }
          const double a = h[j], rr = hypot(a, hn);
          if (rr == 0.0) {
            sc[2] = 1.0;
          } else {
            cs[j] = a / rr;
            sn[j] = hn / rr;
            h[j] = rr;
            double *col = R + (int64_t)j * (j + 1) / 2;
            for (int i = 0; i <= j; ++i) col[i] = h[i];
            g[j + 1] = -sn[j] * g[j];
            g[j] = cs[j] * g[j];
            sc[0] = fabs(g[j + 1]);
            sc[3] = hn <= DBL_EPSILON * h0;
            sc[4] = 1.0 / hn;
          }
        }
      }
      GS_BD_SYNC();
      if (sc[1] != 0.0) {
        inner = GS_DIVERGED_NANINF;
        S->detail = GS_BATCH_DETAIL_GMRES_COLUMN;
        break;
      }
      if (sc[2] != 0.0) {
        inner = GS_DIVERGED_BREAKDOWN;
        S->detail = GS_BATCH_DETAIL_GMRES_ZERO;
        break;
      }
      j = k;
      if (sc[3] != 0.0) {
        lucky = 1; /* invariant subspace: w is noise, keep it out */
      } else {
        const double c = sc[4];
        GS_BD_FOR(l, n) w[l] *= c;                             /* v_{j+1} <- w / h  */
      }
      S->rnorm = sc[0];
      inner = gs_bd_gmres_check(L, S, it, sc[0]);
      GS_BD_SYNC(); /* v_{j+1} complete; sc read by all before thread 0 writes it again */
    }

    /* x <- x + M^-1 V y with R y = g over the j columns built */
    if (j > 0) {
      if (GS_BD_TID == 0) {
        int finite = 1;
        for (int i = j - 1; i >= 0; --i) {
          double t = g[i];
          for (int l = i + 1; l < j; ++l) t -= R[(int64_t)l * (l + 1) / 2 + i] * y[l];
          y[i] = t / R[(int64_t)i * (i + 1) / 2 + i];
          finite &= isfinite(y[i]) != 0;
        }
        sc[5] = !finite;
      }
      GS_BD_SYNC();
      if (sc[5] != 0.0) {
        reason = GS_DIVERGED_NANINF;
        S->detail = GS_BATCH_DETAIL_GMRES_LSQ;
        break;
      }
      if (pc) {
        GS_BD_FOR(l, n) {                                      /* z <- V y          */
          double s = 0.0;
          for (int i = 0; i < j; ++i) s += V[(int64_t)i * n + l] * y[i];
          z[l] = s;
        }
        gs_bd_pc_apply(L, P, z, z);                            /* z <- M^-1 z       */
        GS_BD_FOR(l, n) x[l] += z[l];                          /* x <- x + z        */
      } else {
        GS_BD_FOR(l, n) {                                      /* x <- x + V y      */
          double s = x[l];
          for (int i = 0; i < j; ++i) s += V[(int64_t)i * n + l] * y[i];
          x[l] = s;
        }
      }
    }
    GS_BD_SYNC(); /* x complete before the product reads it */

    /* the true residual starts the next cycle */
    gs_bd_spmv(P, x, V);                                       /* v_0 <- A x        */
    GS_BD_FOR(l, n) V[l] = P->b[l] - V[l];                     /* r <- b - A x      */
    const double beta_new = sqrt(gs_bd_dot2(P, V, V, NULL, NULL).a);
    if (!isfinite(beta_new)) {
      reason = GS_DIVERGED_NANINF;
      S->detail = GS_BATCH_DETAIL_TRUE_RESIDUAL;
    } else if (beta_new <= S->tol) {
      reason = gs_bd_converged(beta_new, S->tol_rel);
      S->detail = GS_BATCH_DETAIL_NONE;
    } else if (inner < 0) { /* a refusal of the cycle (converged reasons are positive) */
      reason = inner;
    } else if (lucky) { /* invariant subspace, yet not solved */
      reason = GS_DIVERGED_BREAKDOWN;
      S->detail = GS_BATCH_DETAIL_GMRES_LUCKY;
    } else if (beta - beta_new <= GS_BD_GMRES_STAGNATION * beta) {
      reason = GS_DIVERGED_STAGNATION;
      S->detail = GS_BATCH_DETAIL_GMRES_STAGNANT;
    } else if (it >= L->maxit) {
      reason = GS_DIVERGED_MAXIT;
    }
    beta = beta_new;
  }
  S->reason = reason;
  S->its = it;
}

/* ---- one problem ------------------------------------------------------------------------------ */

/* Solves problem P (or only sets up its preconditioner: L->setup_only) and writes its result
 * (thread 0). */
GS_BD_FN void gs_bd_solve(const gs_batch_solve_launch_t *L, const gs_bd_prob_t *P,
                          gs_batch_result_t *res)
{
  const int32_t n = P->n;
  double *x = P->vec, *r = x + n;
  gs_bd_state_t S;
  S.reason = GS_REASON_NONE;
  S.its = 0;
  S.detail = GS_BATCH_DETAIL_NONE;
  S.bad_row = -1;
  S.rnorm = S.rnorm0 = 0.0;
  if (L->setup_only) {
    S.bad_row = gs_bd_pc_setup(L, P, &S.detail);
    if (GS_BD_TID == 0) {
      gs_batch_result_t o;
      o.bnorm = o.rnorm0 = o.rnorm = o.true_rnorm = 0.0;
      o.reason = S.bad_row >= 0 ? GS_DIVERGED_BREAKDOWN : GS_REASON_NONE;
      o.iterations = 0;
      o.detail = S.detail;
      o.bad_row = S.bad_row;
      *res = o;
    }
    return;
  }

  /* ||b||, the tolerance, x0 and r0 = b - A x0 */
  GS_BD_FOR(k, n) x[k] = L->x0_given ? P->xout[k] : 0.0;
  GS_BD_SYNC();
  if (L->x0_given) gs_bd_spmv(P, x, r);
  GS_BD_FOR(k, n) r[k] = L->x0_given ? P->b[k] - r[k] : P->b[k];
  const double bnorm = sqrt(gs_bd_dot2(P, P->b, P->b, NULL, NULL).a);
  S.tol_rel = L->rtol * bnorm;
  S.tol = fmax(S.tol_rel, L->atol);
  if (!isfinite(bnorm)) {
    S.reason = GS_DIVERGED_NANINF;
  } else if (bnorm == 0.0) { /* b = 0: x = 0 exactly, as gs_solve */
    GS_BD_FOR(k, n) x[k] = 0.0;
    S.reason = GS_CONVERGED_ATOL;
  } else if (L->precond != GS_BATCH_PRECOND_NONE) {
    S.bad_row = gs_bd_pc_setup(L, P, &S.detail);
    if (S.bad_row >= 0) S.reason = GS_DIVERGED_BREAKDOWN; /* no M^-1 for this problem */
  }
  if (S.reason == GS_REASON_NONE) {
    if (L->method == GS_SOLVER_CG) gs_bd_cg(L, P, &S);
    else if (L->method == GS_SOLVER_BICGSTAB) gs_bd_bicgstab(L, P, &S);
    else gs_bd_gmres(L, P, &S);
  }

  /* x out, and the true residual ||b - A x|| (r is free now: GMRES's v_0) */
  GS_BD_SYNC();
  GS_BD_FOR(k, n) P->xout[k] = x[k];
  gs_bd_spmv(P, x, r);
  GS_BD_FOR(k, n) r[k] = P->b[k] - r[k];
  const double true_r = sqrt(gs_bd_dot2(P, r, r, NULL, NULL).a);
  if (GS_BD_TID == 0) {
    gs_batch_result_t o;
    o.bnorm = bnorm;
    o.rnorm0 = S.rnorm0;
    o.rnorm = S.rnorm;
    o.true_rnorm = true_r;
    o.reason = S.reason;
    o.iterations = S.its;
    o.detail = S.detail;
    o.bad_row = S.bad_row;
    *res = o;
  }
}

#endif
