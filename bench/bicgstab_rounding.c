/* bench/bicgstab_rounding.c: how much BiCGSTAB's iteration count on the batch generator's
 * problems depends on the order of its sums (issue 13: batched and single BiCGSTAB counts).
 *
 *   bicgstab_rounding [KIND [COUNT [RMIN [RMAX [jacobi [SEED]]]]]]
 *
 * KIND laplace (default) or random, COUNT problems (default 200) of RMIN..RMAX rows (default
 * 1..3000) from gs_batch_gen, b uniform in [-1, 1), rtol 1e-8, x0 = 0. Each problem is solved on
 * the host twice with the algorithm of solvers/bicgstab.c (right Jacobi with "jacobi"), in double
 * precision, the two runs differing only in the order of their sums: order 0 adds dot-product
 * terms first to last and a row's products in stored order; order 1 adds dot products as 256
 * strided partial sums and a tree (a GPU block's order) and a row's products last to first.
 * Neither order is more accurate: both are what a GPU may do (gs_solve sums across a grid of
 * blocks, gs_batch_solve inside one block).
 *
 * Printed per batch: how many problems took counts that differ by more than 1, the largest
 * relative difference, the mean and standard deviation of (count_1 - count_0) / count_0, the
 * largest relative difference of ||r|| after 2 iterations (where both runs are still the same
 * computation up to rounding), and the median iteration at which the two residual histories
 * first differ by more than 1e-6 relatively, with the cosine between the shadow residual r~ = r0
 * and r there: once r~^T r is that small against |r~| |r|, rho and r~^T v keep only a few digits
 * and the rest of the run follows the rounding of those two dot products. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpusolve.h"

#define MAXIT 5000

static int order; /* 0 or 1, see above */

static double dot(const double *a, const double *b, gs_idx_t n)
{
  if (order == 0) {
    double s = 0.0;
    for (gs_idx_t i = 0; i < n; ++i) s += a[i] * b[i];
    return s;
  }
  double p[256];
  for (int t = 0; t < 256; ++t) {
    p[t] = 0.0;
    for (gs_idx_t i = t; i < n; i += 256) p[t] += a[i] * b[i];
  }
  for (int w = 128; w > 0; w >>= 1)
    for (int t = 0; t < w; ++t) p[t] += p[t + w];
  return p[0];
}

static void spmv(const gs_csr_t *A, const double *x, double *y)
{
  for (gs_idx_t r = 0; r < A->m; ++r) {
    double s = 0.0;
    if (order == 0)
      for (gs_off_t k = A->row_ptr[r]; k < A->row_ptr[r + 1]; ++k) s += A->val[k] * x[A->col[k]];
    else
      for (gs_off_t k = A->row_ptr[r + 1] - 1; k >= A->row_ptr[r]; --k) s += A->val[k] * x[A->col[k]];
    y[r] = s;
  }
}

/* One solve; hist[it] = ||r_it|| (||s|| for a half-step stop), cosr[it] = cos(r~, r) at the
 * start of iteration it. Returns the iteration count (negative: breakdown). */
static int bicgstab(const gs_csr_t *A, const double *b, int jacobi, double *hist, double *cosr)
{
  const gs_idx_t n = A->m;
  double *w = calloc(9 * (size_t)n + 1, sizeof *w);
  double *x = w, *r = w + n, *rh = w + 2 * n, *p = w + 3 * n, *v = w + 4 * n, *t = w + 5 * n;
  double *ph = jacobi ? w + 6 * n : p, *sh = jacobi ? w + 7 * n : r, *d = w + 8 * n;
  for (gs_idx_t i = 0; i < n; ++i) {
    double a = 0.0;
    for (gs_off_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k)
      if (A->col[k] == i) a += A->val[k];
    d[i] = 1.0 / a;
  }
  memcpy(r, b, (size_t)n * sizeof *r);
  memcpy(rh, b, (size_t)n * sizeof *rh);
  const double tol = 1e-8 * sqrt(dot(b, b, n)), rhn = sqrt(dot(rh, rh, n));
  double rho_prev = 0.0, alpha = 0.0, omega = 0.0;
  int it;
  hist[0] = sqrt(dot(r, r, n));
  for (it = 1; it <= MAXIT; ++it) {
    const double rho = dot(rh, r, n);
    cosr[it] = rho / (rhn * sqrt(dot(r, r, n)));
    if (rho == 0.0 || (it > 1 && omega == 0.0)) {
      it = -it;
      break;
    }
    if (it == 1) memcpy(p, r, (size_t)n * sizeof *p);
    else {
      const double beta = (rho / rho_prev) * (alpha / omega);
      for (gs_idx_t i = 0; i < n; ++i) p[i] = r[i] + beta * (p[i] - omega * v[i]);
    }
    if (jacobi)
      for (gs_idx_t i = 0; i < n; ++i) ph[i] = d[i] * p[i];
    spmv(A, ph, v);
    alpha = rho / dot(rh, v, n);
    for (gs_idx_t i = 0; i < n; ++i) r[i] -= alpha * v[i];
    const double snorm = sqrt(dot(r, r, n));
    if (jacobi)
      for (gs_idx_t i = 0; i < n; ++i) sh[i] = d[i] * r[i];
    spmv(A, sh, t);
    const double ts = dot(t, r, n), tt = dot(t, t, n);
    if (snorm <= tol) {
      hist[it] = snorm;
      break;
    }
    omega = ts / tt;
    for (gs_idx_t i = 0; i < n; ++i) {
      x[i] += alpha * ph[i] + omega * sh[i];
      r[i] -= omega * t[i];
    }
    hist[it] = sqrt(dot(r, r, n));
    rho_prev = rho;
    if (hist[it] <= tol) break;
  }
  free(w);
  return it > MAXIT ? MAXIT : it;
}

static int cmp_int(const void *a, const void *b)
{
  const int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
  const char *kind = argc > 1 ? argv[1] : "laplace";
  const int count = argc > 2 ? atoi(argv[2]) : 200;
  const int rmin = argc > 3 ? atoi(argv[3]) : 1, rmax = argc > 4 ? atoi(argv[4]) : 3000;
  const int jacobi = argc > 5 && !strcmp(argv[5], "jacobi");
  const uint64_t seed = argc > 6 ? strtoull(argv[6], NULL, 10) : 1;
  gs_csr_t **A = NULL;
  if (count < 1 || gs_batch_gen(&A, kind, count, rmin, rmax, seed) != GS_SUCCESS) {
    fprintf(stderr, "bicgstab_rounding: %s\n", count < 1 ? "COUNT must be >= 1" : gs_last_error());
    return 2;
  }
  double *h0 = malloc((MAXIT + 2) * sizeof *h0), *h1 = malloc((MAXIT + 2) * sizeof *h1);
  double *c0 = malloc((MAXIT + 2) * sizeof *c0), *c1 = malloc((MAXIT + 2) * sizeof *c1);
  int *onset = malloc((size_t)count * sizeof *onset), nonset = 0, over1 = 0;
  double maxrel = 0.0, sum = 0.0, sum2 = 0.0, r2 = 0.0, cos_sum = 0.0;
  uint64_t s = seed ^ 0x5eed;
  for (int q = 0; q < count; ++q) {
    const gs_idx_t n = A[q]->m;
    double *b = malloc(((size_t)n + 1) * sizeof *b);
    for (gs_idx_t i = 0; i < n; ++i) { /* splitmix64, as the generator */
      uint64_t z = (s += 0x9E3779B97F4A7C15ull);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      b[i] = 2.0 * (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53 - 1.0;
    }
    order = 0;
    const int k0 = bicgstab(A[q], b, jacobi, h0, c0);
    order = 1;
    const int k1 = bicgstab(A[q], b, jacobi, h1, c1);
    free(b);
    const double rel = (double)(abs(k1) - abs(k0)) / (abs(k0) > 0 ? abs(k0) : 1);
    over1 += abs(abs(k1) - abs(k0)) > 1;
    maxrel = fmax(maxrel, fabs(rel));
    sum += rel;
    sum2 += rel * rel;
    const int m = abs(k0) < abs(k1) ? abs(k0) : abs(k1);
    if (m >= 2) r2 = fmax(r2, fabs(h1[2] - h0[2]) / h0[2]);
    for (int it = 1; it <= m; ++it)
      if (fabs(h1[it] - h0[it]) > 1e-6 * h0[it] && h0[it] > 1e-6 * h0[0]) {
        onset[nonset++] = it;
        cos_sum += fabs(c0[it]);
        break;
      }
  }
  const double mean = sum / count, sd = sqrt(fmax(0.0, sum2 / count - mean * mean));
  qsort(onset, (size_t)nonset, sizeof *onset, cmp_int);
  printf("%s%s, %d problems of %d..%d rows: counts differ by more than 1 on %d, largest "
         "relative difference %.3f, mean %.4f sd %.4f; ||r|| after 2 iterations within %.1e; "
         "histories part on %d problems, median iteration %d, mean |cos(r~, r)| there %.1e\n",
         kind, jacobi ? " + jacobi" : "", count, rmin, rmax, over1, maxrel, mean, sd, r2, nonset,
         nonset ? onset[nonset / 2] : 0, nonset ? cos_sum / nonset : 0.0);
  free(h0);
  free(h1);
  free(c0);
  free(c1);
  free(onset);
  gs_batch_gen_free(&A, count);
  return 0;
}
