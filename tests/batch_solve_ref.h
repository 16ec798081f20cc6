/* tests/batch_solve_ref.h: plain host references for the batched solver's suites
 * (test_batch_gmres_host.c, test_batch_gmres_gpu.c), written here without the library's body:
 *   preconditioners  Jacobi (1 / a_ii, duplicates summed); block-Jacobi through the global
 *                    preconditioner's host reference (gs_bj_partition, gs_bj_extract, gs_bj_lu:
 *                    the same blocks and pivot rule as gs_solve's); ILU(0) row by row in row
 *                    order on the sorted, merged pattern (Saad's Algorithm 10.4, no levels);
 *   methods          CG, BiCGSTAB (right preconditioned) and GMRES(m) with MODIFIED Gram-Schmidt
 *                    (the batch and gs_solve use CGS2: an independent orthogonalization),
 *                    Givens rotations on a dense Hessenberg matrix, and gs_solve's tests.
 * Each takes a square host CSR. Also the suites' problems: diagonally dominant ones with
 * shuffled rows and duplicate entries (ref_make_dd), SPD Laplacians of n rows (ref_lap). */
#ifndef GS_TESTS_BATCH_SOLVE_REF_H
#define GS_TESTS_BATCH_SOLVE_REF_H

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "batch/batch_impl.h"
#include "precond/block_jacobi.h"
#include "tests/testutil.h"

static inline void *ref_alloc(size_t bytes)
{
  void *p = calloc(1, bytes ? bytes : 1);
  CU_ASSERT_FATAL(p != NULL);
  return p;
}

/* An n x n matrix with `per` random off-diagonal entries a row, a diagonal that dominates
 * (sign +-1 when mixed), a duplicate entry in some rows (dup) and each row's entries shuffled
 * (shuffle). */
static gs_csr_t *ref_make_dd(uint64_t *s, gs_idx_t n, int per, int mixed, int dup, int shuffle)
{
  gs_csr_t *A = NULL;
  const gs_off_t cap = (gs_off_t)n * (per + 2) + 1;
  CU_ASSERT_FATAL(gs_csr_create(&A, n, n, cap) == GS_SUCCESS);
  gs_off_t e = 0;
  for (gs_idx_t i = 0; i < n; ++i) {
    const gs_off_t start = e;
    double sum = 0.0;
    for (int k = 0; k < per && n > 1; ++k) {
      gs_idx_t c = (gs_idx_t)(gs_test_uniform(s) * n);
      if (c == i) continue;
      const double v = 2.0 * gs_test_uniform(s) - 1.0;
      A->col[e] = c;
      A->val[e++] = v;
      sum += fabs(v);
    }
    double d = 1.0 + sum + gs_test_uniform(s);
    if (mixed && gs_test_uniform(s) < 0.3) d = -d;
    if (dup && gs_test_uniform(s) < 0.5) { /* the diagonal in two pieces */
      A->col[e] = i;
      A->val[e++] = 0.25 * d;
      d *= 0.75;
    }
    A->col[e] = i;
    A->val[e++] = d;
    if (shuffle)
      for (gs_off_t k = e - 1; k > start; --k)
        gs_test_swap_entries(A, k, start + (gs_off_t)(gs_test_uniform(s) * (double)(k - start + 1)));
    A->row_ptr[i + 1] = e;
  }
  A->nnz = e;
  return A;
}

/* An SPD n x n problem: the 5-point Laplacian on n points of a grid (gs_batch_gen). */
static gs_csr_t *ref_lap(uint64_t *s, gs_idx_t n)
{
  gs_csr_t **G = NULL;
  CU_ASSERT_FATAL(gs_batch_gen(&G, "laplace", 1, n, n, gs_test_next(s)) == GS_SUCCESS);
  gs_csr_t *A = G[0];
  G[0] = NULL;
  gs_batch_gen_free(&G, 1);
  CU_ASSERT_FATAL(A->m == n);
  return A;
}

static void ref_free_all(gs_csr_t **A, int count)
{
  for (int i = 0; i < count; ++i) gs_csr_destroy(&A[i]);
}

/* A sorted, merged copy of A (duplicates summed in stored order). */
static gs_csr_t *ref_merged(const gs_csr_t *A)
{
  gs_csr_t *S = NULL;
  CU_ASSERT_FATAL(gs_csr_create(&S, A->m, A->n, A->nnz) == GS_SUCCESS);
  gs_off_t e = 0;
  S->row_ptr[0] = 0;
  for (gs_idx_t i = 0; i < A->m; ++i) {
    const gs_off_t a = A->row_ptr[i], b = A->row_ptr[i + 1];
    /* insertion sort of the row's (col, value) by column, stable: duplicates in stored order */
    const gs_off_t start = e;
    for (gs_off_t k = a; k < b; ++k) {
      gs_off_t q = e++;
      while (q > start && S->col[q - 1] > A->col[k]) {
        S->col[q] = S->col[q - 1];
        S->val[q] = S->val[q - 1];
        --q;
      }
      S->col[q] = A->col[k];
      S->val[q] = A->val[k];
    }
    /* merge equal columns, summing left to right */
    gs_off_t w = start;
    for (gs_off_t k = start; k < e; ++k) {
      if (k > start && S->col[k] == S->col[w - 1]) {
        S->val[w - 1] += S->val[k];
      } else {
        S->col[w] = S->col[k];
        S->val[w] = S->val[k];
        ++w;
      }
    }
    e = w;
    S->row_ptr[i + 1] = e;
  }
  S->nnz = e;
  return S;
}

typedef struct {
  int kind; /* GS_BATCH_PRECOND_* */
  gs_idx_t n;
  double *d;           /* Jacobi */
  gs_idx_t *bp, nb;    /* block-Jacobi */
  double *lu;          /* nb blocks of GS_BJ_MAX_BLOCK^2 */
  int *piv;            /* nb blocks of GS_BJ_MAX_BLOCK */
  gs_csr_t *F;         /* ILU(0): the factors on the merged pattern */
  int bad;             /* the row the setup failed at, or -1 */
} ref_pc_t;

static void ref_pc_free(ref_pc_t *M)
{
  free(M->d);
  free(M->bp);
  free(M->lu);
  free(M->piv);
  gs_csr_destroy(&M->F);
  memset(M, 0, sizeof *M);
}

/* Sets up M of `kind` for A; M->bad the failing row (Jacobi: a zero diagonal; block-Jacobi: the
 * row of the step without a pivot; ILU(0): a missing diagonal entry or a zero pivot). */
static void ref_pc_setup(ref_pc_t *M, const gs_csr_t *A, int kind, int block, int agglomerate)
{
  memset(M, 0, sizeof *M);
  M->kind = kind;
  M->n = A->m;
  M->bad = -1;
  if (kind == GS_BATCH_PRECOND_JACOBI) {
    M->d = ref_alloc(((size_t)A->m + 1) * sizeof *M->d);
    for (gs_idx_t i = 0; i < A->m; ++i) {
      double a = 0.0;
      for (gs_off_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k)
        if (A->col[k] == i) a += A->val[k];
      if (a == 0.0 && M->bad < 0) M->bad = i;
      M->d[i] = a != 0.0 ? 1.0 / a : 0.0;
    }
  } else if (kind == GS_BATCH_PRECOND_BLOCK_JACOBI) {
    CU_ASSERT_FATAL(gs_bj_partition(A, block, agglomerate, &M->bp, &M->nb) == GS_SUCCESS);
    const int S = GS_BJ_MAX_BLOCK;
    M->lu = ref_alloc(((size_t)M->nb + 1) * S * S * sizeof *M->lu);
    M->piv = ref_alloc(((size_t)M->nb + 1) * S * sizeof *M->piv);
    for (gs_idx_t b = 0; b < M->nb; ++b) {
      const int s = (int)(M->bp[b + 1] - M->bp[b]);
      double *B = M->lu + (size_t)b * S * S;
      gs_bj_extract(A, M->bp[b], s, B);
      const int k = gs_bj_lu(B, s, M->piv + (size_t)b * S, NULL);
      if (k >= 0 && M->bad < 0) M->bad = (int)M->bp[b] + k;
    }
  } else if (kind == GS_BATCH_PRECOND_ILU0) {
    gs_csr_t *F = M->F = ref_merged(A);
    gs_off_t *dg = ref_alloc(((size_t)F->m + 1) * sizeof *dg);
    for (gs_idx_t i = 0; i < F->m; ++i) {
      dg[i] = -1;
      for (gs_off_t k = F->row_ptr[i]; k < F->row_ptr[i + 1]; ++k)
        if (F->col[k] == i) dg[i] = k;
      if (dg[i] < 0 && M->bad < 0) M->bad = i;
    }
    for (gs_idx_t i = 0; M->bad < 0 && i < F->m; ++i) {
      for (gs_off_t p = F->row_ptr[i]; p < dg[i]; ++p) {
        const gs_idx_t k = F->col[p];
        F->val[p] /= F->val[dg[k]];
        for (gs_off_t q = p + 1; q < F->row_ptr[i + 1]; ++q) /* u_kj with j = col q, if stored */
          for (gs_off_t c = dg[k] + 1; c < F->row_ptr[k + 1]; ++c)
            if (F->col[c] == F->col[q]) F->val[q] -= F->val[p] * F->val[c];
      }
      if (F->val[dg[i]] == 0.0 || !isfinite(F->val[dg[i]])) M->bad = i;
    }
    free(dg);
  }
}

/* z = M^-1 r (z != r). */
static void ref_pc_apply(const ref_pc_t *M, const double *r, double *z)
{
  const gs_idx_t n = M->n;
  if (M->kind == GS_BATCH_PRECOND_JACOBI) {
    for (gs_idx_t i = 0; i < n; ++i) z[i] = M->d[i] * r[i];
  } else if (M->kind == GS_BATCH_PRECOND_BLOCK_JACOBI) {
    const int S = GS_BJ_MAX_BLOCK;
    for (gs_idx_t b = 0; b < M->nb; ++b) {
      const int s = (int)(M->bp[b + 1] - M->bp[b]);
      double x[GS_BJ_MAX_BLOCK];
      for (int i = 0; i < s; ++i) x[i] = r[M->bp[b] + i];
      gs_bj_lu_solve(M->lu + (size_t)b * S * S, M->piv + (size_t)b * S, s, x);
      for (int i = 0; i < s; ++i) z[M->bp[b] + i] = x[i];
    }
  } else if (M->kind == GS_BATCH_PRECOND_ILU0) {
    const gs_csr_t *F = M->F;
    for (gs_idx_t i = 0; i < n; ++i) { /* L y = r, L unit lower */
      double s = r[i];
      for (gs_off_t k = F->row_ptr[i]; k < F->row_ptr[i + 1] && F->col[k] < i; ++k)
        s -= F->val[k] * z[F->col[k]];
      z[i] = s;
    }
    for (gs_idx_t i = n - 1; i >= 0; --i) { /* U z = y */
      double s = z[i], d = 0.0;
      for (gs_off_t k = F->row_ptr[i]; k < F->row_ptr[i + 1]; ++k) {
        if (F->col[k] > i) s -= F->val[k] * z[F->col[k]];
        else if (F->col[k] == i) d = F->val[k];
      }
      z[i] = s / d;
    }
  } else {
    memcpy(z, r, (size_t)n * sizeof *z);
  }
}

typedef struct {
  int reason, iterations;
  double rnorm, true_rnorm;
} ref_out_t;

static double ref_dot(const double *a, const double *b, gs_idx_t n)
{
  double s = 0.0;
  for (gs_idx_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

/* r = b - A x */
static void ref_residual(const gs_csr_t *A, const double *b, const double *x, double *r)
{
  for (gs_idx_t i = 0; i < A->m; ++i) {
    double s = 0.0;
    for (gs_off_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k) s += A->val[k] * x[A->col[k]];
    r[i] = b[i] - s;
  }
}

static int ref_conv(double rn, double tol_rel) { return rn <= tol_rel ? GS_CONVERGED_RTOL : GS_CONVERGED_ATOL; }

/* GMRES(m), right preconditioned, modified Gram-Schmidt; x holds x0 on entry. */
static ref_out_t ref_gmres(const gs_csr_t *A, const ref_pc_t *M, const double *b, double *x, int m,
                           double rtol, double atol, int maxit)
{
  const gs_idx_t n = A->m;
  ref_out_t o = {GS_REASON_NONE, 0, 0.0, 0.0};
  if (m > n) m = n > 0 ? n : 1;
  const double bnorm = sqrt(ref_dot(b, b, n)), tol_rel = rtol * bnorm, tol = fmax(tol_rel, atol);
  double *V = ref_alloc((size_t)(m + 1) * n * sizeof *V + 8), *z = ref_alloc((size_t)n * 8 + 8);
  double *w = ref_alloc((size_t)n * 8 + 8), *H = ref_alloc((size_t)(m + 1) * m * 8 + 8);
  double *cs = ref_alloc((size_t)m * 8 + 8), *sn = ref_alloc((size_t)m * 8 + 8);
  double *g = ref_alloc((size_t)(m + 1) * 8 + 8), *y = ref_alloc((size_t)m * 8 + 8);
  if (!isfinite(bnorm)) o.reason = GS_DIVERGED_NANINF;
  if (bnorm == 0.0) {
    for (gs_idx_t i = 0; i < n; ++i) x[i] = 0.0;
    o.reason = GS_CONVERGED_ATOL;
  }
  if (M->bad >= 0 && o.reason == GS_REASON_NONE) o.reason = GS_DIVERGED_BREAKDOWN;
  int it = 0;
  double beta = 0.0;
  if (o.reason == GS_REASON_NONE) {
    ref_residual(A, b, x, V);
    beta = o.rnorm = sqrt(ref_dot(V, V, n));
    o.reason = !isfinite(beta) ? GS_DIVERGED_NANINF
               : beta <= tol   ? ref_conv(beta, tol_rel)
               : maxit <= 0    ? GS_DIVERGED_MAXIT
                               : GS_REASON_NONE;
  }
  while (o.reason == GS_REASON_NONE) {
    for (gs_idx_t i = 0; i < n; ++i) V[i] /= beta;
    g[0] = beta;
    for (int i = 1; i <= m; ++i) g[i] = 0.0;
    int j = 0, lucky = 0, inner = GS_REASON_NONE;
    while (j < m && inner == GS_REASON_NONE && !lucky) {
      ++it;
      ref_pc_apply(M, V + (size_t)j * n, z);
      double *hc = H + (size_t)j * (m + 1);
      for (gs_idx_t i = 0; i < n; ++i) {
        double s = 0.0;
        for (gs_off_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k) s += A->val[k] * z[A->col[k]];
        w[i] = s;
      }
      const double wn0 = sqrt(ref_dot(w, w, n));
      for (int i = 0; i <= j; ++i) { /* modified Gram-Schmidt */
        hc[i] = ref_dot(V + (size_t)i * n, w, n);
        for (gs_idx_t l = 0; l < n; ++l) w[l] -= hc[i] * V[(size_t)i * n + l];
      }
      const double hn = sqrt(ref_dot(w, w, n));
      if (!isfinite(wn0) || !isfinite(hn)) { inner = GS_DIVERGED_NANINF; break; }
      for (int i = 0; i < j; ++i) {
        const double a = hc[i], c = hc[i + 1];
        hc[i] = cs[i] * a + sn[i] * c;
        hc[i + 1] = -sn[i] * a + cs[i] * c;
      }
      const double rr = hypot(hc[j], hn);
      if (rr == 0.0) { inner = GS_DIVERGED_BREAKDOWN; break; }
      cs[j] = hc[j] / rr;
      sn[j] = hn / rr;
      hc[j] = rr;
      g[j + 1] = -sn[j] * g[j];
      g[j] *= cs[j];
      ++j;
      if (hn <= DBL_EPSILON * wn0) lucky = 1;
      else
        for (gs_idx_t l = 0; l < n; ++l) V[(size_t)j * n + l] = w[l] / hn;
      o.rnorm = fabs(g[j]);
      inner = o.rnorm <= tol ? ref_conv(o.rnorm, tol_rel) : it >= maxit ? GS_DIVERGED_MAXIT : 0;
    }
    if (j > 0) {
      for (int i = j - 1; i >= 0; --i) {
        double t = g[i];
        for (int l = i + 1; l < j; ++l) t -= H[(size_t)l * (m + 1) + i] * y[l];
        y[i] = t / H[(size_t)i * (m + 1) + i];
      }
      for (gs_idx_t l = 0; l < n; ++l) {
        double s = 0.0;
        for (int i = 0; i < j; ++i) s += V[(size_t)i * n + l] * y[i];
        w[l] = s;
      }
      ref_pc_apply(M, w, z);
      for (gs_idx_t l = 0; l < n; ++l) x[l] += z[l];
    }
    ref_residual(A, b, x, V);
    const double bn = sqrt(ref_dot(V, V, n));
    if (!isfinite(bn)) o.reason = GS_DIVERGED_NANINF;
    else if (bn <= tol) o.reason = ref_conv(bn, tol_rel);
    else if (inner < 0) o.reason = inner;
    else if (lucky) o.reason = GS_DIVERGED_BREAKDOWN;
    else if (beta - bn <= 1e-12 * beta) o.reason = GS_DIVERGED_STAGNATION;
    else if (it >= maxit) o.reason = GS_DIVERGED_MAXIT;
    beta = bn;
  }
  o.iterations = it;
  ref_residual(A, b, x, w);
  o.true_rnorm = sqrt(ref_dot(w, w, n));
  free(V), free(z), free(w), free(H), free(cs), free(sn), free(g), free(y);
  return o;
}

/* y = A x */
static void ref_spmv(const gs_csr_t *A, const double *x, double *y)
{
  for (gs_idx_t i = 0; i < A->m; ++i) {
    double s = 0.0;
    for (gs_off_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k) s += A->val[k] * x[A->col[k]];
    y[i] = s;
  }
}

/* ||b||, the start's reason (b not finite, b = 0: x = 0, a failed preconditioner) */
static int ref_start(const ref_pc_t *M, const double *b, double *x, gs_idx_t n, double *bnorm)
{
  *bnorm = sqrt(ref_dot(b, b, n));
  if (!isfinite(*bnorm)) return GS_DIVERGED_NANINF;
  if (*bnorm == 0.0) {
    for (gs_idx_t i = 0; i < n; ++i) x[i] = 0.0;
    return GS_CONVERGED_ATOL;
  }
  return M->bad >= 0 ? GS_DIVERGED_BREAKDOWN : GS_REASON_NONE;
}

/* Preconditioned CG (solvers/cg.c's steps and tests); x holds x0. */
static ref_out_t ref_cg(const gs_csr_t *A, const ref_pc_t *M, const double *b, double *x,
                        double rtol, double atol, int maxit)
{
  const gs_idx_t n = A->m;
  ref_out_t o = {GS_REASON_NONE, 0, 0.0, 0.0};
  double *r = ref_alloc((size_t)n * 8 + 8), *z = ref_alloc((size_t)n * 8 + 8);
  double *p = ref_alloc((size_t)n * 8 + 8), *q = ref_alloc((size_t)n * 8 + 8);
  double bnorm;
  o.reason = ref_start(M, b, x, n, &bnorm);
  const double tol_rel = rtol * bnorm, tol = fmax(tol_rel, atol);
  if (o.reason == GS_REASON_NONE) {
    ref_residual(A, b, x, r);
    ref_pc_apply(M, r, z);
    double rho = ref_dot(r, z, n);
    o.rnorm = sqrt(ref_dot(r, r, n));
    memcpy(p, z, (size_t)n * 8);
    o.reason = !isfinite(o.rnorm) ? GS_DIVERGED_NANINF
               : o.rnorm <= tol   ? ref_conv(o.rnorm, tol_rel)
               : maxit <= 0       ? GS_DIVERGED_MAXIT
               : rho < 0.0        ? GS_DIVERGED_INDEFINITE
               : rho == 0.0       ? GS_DIVERGED_BREAKDOWN
                                  : GS_REASON_NONE;
    for (int it = 1; o.reason == GS_REASON_NONE; ++it) {
      ref_spmv(A, p, q);
      const double pq = ref_dot(p, q, n);
      o.iterations = it - 1;
      if (!(pq > 0.0)) { o.reason = isfinite(pq) ? GS_DIVERGED_INDEFINITE : GS_DIVERGED_NANINF; break; }
      const double alpha = rho / pq;
      for (gs_idx_t i = 0; i < n; ++i) {
        x[i] += alpha * p[i];
        r[i] -= alpha * q[i];
      }
      ref_pc_apply(M, r, z);
      o.rnorm = sqrt(ref_dot(r, r, n));
      o.iterations = it;
      const double rho_new = ref_dot(r, z, n);
      if (!isfinite(o.rnorm)) { o.reason = GS_DIVERGED_NANINF; break; }
      if (o.rnorm <= tol) { o.reason = ref_conv(o.rnorm, tol_rel); break; }
      if (rho_new < 0.0) { o.reason = GS_DIVERGED_INDEFINITE; break; }
      if (rho_new == 0.0) { o.reason = GS_DIVERGED_BREAKDOWN; break; }
      const double beta = rho_new / rho;
      for (gs_idx_t i = 0; i < n; ++i) p[i] = z[i] + beta * p[i];
      rho = rho_new;
      if (it >= maxit) o.reason = GS_DIVERGED_MAXIT;
    }
  }
  ref_residual(A, b, x, r);
  o.true_rnorm = sqrt(ref_dot(r, r, n));
  free(r), free(z), free(p), free(q);
  return o;
}

/* Right-preconditioned BiCGSTAB (solvers/bicgstab.c's steps and tests, the half step counted). */
static ref_out_t ref_bicgstab(const gs_csr_t *A, const ref_pc_t *M, const double *b, double *x,
                              double rtol, double atol, int maxit)
{
  const gs_idx_t n = A->m;
  ref_out_t o = {GS_REASON_NONE, 0, 0.0, 0.0};
  double *r = ref_alloc((size_t)n * 8 + 8), *rh = ref_alloc((size_t)n * 8 + 8);
  double *p = ref_alloc((size_t)n * 8 + 8), *v = ref_alloc((size_t)n * 8 + 8);
  double *t = ref_alloc((size_t)n * 8 + 8), *ph = ref_alloc((size_t)n * 8 + 8);
  double *sh = ref_alloc((size_t)n * 8 + 8);
  double bnorm;
  o.reason = ref_start(M, b, x, n, &bnorm);
  const double tol_rel = rtol * bnorm, tol = fmax(tol_rel, atol);
  if (o.reason == GS_REASON_NONE) {
    ref_residual(A, b, x, r);
    memcpy(rh, r, (size_t)n * 8);
    o.rnorm = sqrt(ref_dot(r, r, n));
    o.reason = !isfinite(o.rnorm) ? GS_DIVERGED_NANINF
               : o.rnorm <= tol   ? ref_conv(o.rnorm, tol_rel)
               : maxit <= 0       ? GS_DIVERGED_MAXIT
                                  : GS_REASON_NONE;
    double rho_prev = 0.0, alpha = 0.0, omega = 0.0;
    for (int it = 1; o.reason == GS_REASON_NONE; ++it) {
      o.iterations = it - 1;
      const double rho = ref_dot(rh, r, n);
      if (rho == 0.0) { o.reason = GS_DIVERGED_BREAKDOWN; break; }
      if (it == 1) {
        memcpy(p, r, (size_t)n * 8);
      } else {
        if (omega == 0.0) { o.reason = GS_DIVERGED_BREAKDOWN; break; }
        const double beta = (rho / rho_prev) * (alpha / omega);
        for (gs_idx_t i = 0; i < n; ++i) p[i] = r[i] + beta * (p[i] - omega * v[i]);
      }
      ref_pc_apply(M, p, ph);
      ref_spmv(A, ph, v);
      const double rv = ref_dot(rh, v, n);
      if (rv == 0.0) { o.reason = GS_DIVERGED_BREAKDOWN; break; }
      alpha = rho / rv;
      for (gs_idx_t i = 0; i < n; ++i) r[i] -= alpha * v[i];
      ref_pc_apply(M, r, sh);
      const double snorm = sqrt(ref_dot(r, r, n));
      ref_spmv(A, sh, t);
      if (snorm <= tol) {
        for (gs_idx_t i = 0; i < n; ++i) x[i] += alpha * ph[i];
        o.rnorm = snorm;
        o.iterations = it;
        o.reason = ref_conv(snorm, tol_rel);
        break;
      }
      const double tt = ref_dot(t, t, n);
      if (tt == 0.0) { o.reason = GS_DIVERGED_BREAKDOWN; break; }
      omega = ref_dot(t, r, n) / tt;
      for (gs_idx_t i = 0; i < n; ++i) {
        x[i] += alpha * ph[i] + omega * sh[i];
        r[i] -= omega * t[i];
      }
      o.rnorm = sqrt(ref_dot(r, r, n));
      o.iterations = it;
      rho_prev = rho;
      if (!isfinite(o.rnorm)) o.reason = GS_DIVERGED_NANINF;
      else if (o.rnorm <= tol) o.reason = ref_conv(o.rnorm, tol_rel);
      else if (it >= maxit) o.reason = GS_DIVERGED_MAXIT;
    }
  }
  ref_residual(A, b, x, r);
  o.true_rnorm = sqrt(ref_dot(r, r, n));
  free(r), free(rh), free(p), free(v), free(t), free(ph), free(sh);
  return o;
}

/* The reference of method m (GS_SOLVER_*), from x = x0 (x holds it). */
static ref_out_t ref_solve(int m, const gs_csr_t *A, const ref_pc_t *M, const double *b, double *x,
                           int restart, double rtol, double atol, int maxit)
{
  if (m == GS_SOLVER_CG) return ref_cg(A, M, b, x, rtol, atol, maxit);
  if (m == GS_SOLVER_BICGSTAB) return ref_bicgstab(A, M, b, x, rtol, atol, maxit);
  return ref_gmres(A, M, b, x, restart, rtol, atol, maxit);
}

#endif
