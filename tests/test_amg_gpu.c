/* tests/test_amg_gpu.c: the device setup phases of smoothed-aggregation AMG
 * (precond/amg_setup_kernels.cu) against the host reference (precond/amg_host.c), both per
 * precond/amg_impl.h, and the cycle kernels (precond/amg_cycle_kernels.cu) against a host loop.
 *   - diag, strength, aggregates (with the MIS(2) round count), t (ones), smoothed P, l1
 *     diagonal: bit for bit (memcmp); t with a given B within its rounding bound;
 *   - R = P^T equals gs_csr_transpose of the host P exactly;
 *   - A P and R (A P): the host's pattern, values within 2 gamma_k (|A||B|)_ij of the host's;
 *   - the dense inverse: ||I - A X||_inf within Higham's bound for an inverse by Gauss-Jordan
 *     elimination with partial pivoting (sizes on both of its paths: one block, a kernel a
 *     step); graph Laplacians (zero row sums), a zero column and a NaN report singular;
 *   - a zero diagonal refused with its 1-based row; allocation failures at every step leave no
 *     device memory behind.
 * Matrices: random ones (fresh seed, symmetric and not, isolated rows), rows of every length
 * class of the smoothed P (a thread, a warp, a block, the global-memory sort: 16 / 256 / 4096
 * entries and one past each) and dense-ish ones, generated Laplacians, the SPD matrices of
 * GS_MATRIX_DIR (category "spd" in its MANIFEST.tsv), each through up to three levels. Exits 77
 * without a device. */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/testhooks.h"
#include "precond/amg_impl.h"
#include "tests/testutil.h"

static gs_context_t *ctx;
static uint64_t g_state;
static int g_seeded;

static uint64_t *rng(void)
{
  if (!g_seeded) {
    g_state = gs_test_seed() ^ 0xa39a11ull;
    g_seeded = 1;
  }
  return &g_state;
}

#define U_DBL 0x1p-53 /* unit roundoff of double */

/* gamma_k = k u / (1 - k u) (Higham, Accuracy and Stability, Lemma 3.1). */
static double gam(double k) { return k * U_DBL / (1.0 - k * U_DBL); }

/* ---- device buffers -------------------------------------------------------------------------- */

static void *dalloc(size_t bytes)
{
  void *p = NULL;
  CU_ASSERT_FATAL(gs_dmalloc(ctx, &p, bytes, "test buffer") == GS_SUCCESS);
  return p;
}

static void *to_dev(const void *h, size_t bytes)
{
  void *p = dalloc(bytes);
  CU_ASSERT_FATAL(gs_copy_to_device(ctx, p, h, bytes) == GS_SUCCESS);
  return p;
}

static void to_host(void *h, const void *d, size_t bytes)
{
  CU_ASSERT_FATAL(gs_copy_to_host(ctx, h, d, bytes) == GS_SUCCESS);
}

static void *xmalloc(size_t bytes)
{
  void *p = malloc(bytes ? bytes : 1);
  CU_ASSERT_FATAL(p != NULL);
  return p;
}

#define OK(call, what)                                                                         \
  do {                                                                                         \
    const gs_status_t st_ = (call);                                                            \
    if (st_ != GS_SUCCESS) fprintf(stderr, "  %s: %s: %s\n", label, what, gs_last_error());    \
    CU_ASSERT_FATAL(st_ == GS_SUCCESS);                                                        \
  } while (0)

/* ---- comparisons ----------------------------------------------------------------------------- */

/* n elements of `elem` bytes equal byte for byte; otherwise one line naming the first that
 * differs (its bits, and its value when is_double) and 0. */
static int same_bytes(const void *got, const void *want, size_t n, size_t elem, int is_double,
                      const char *label, const char *what)
{
  if (n == 0 || memcmp(got, want, n * elem) == 0) return 1;
  size_t i = 0;
  const char *a = got, *b = want;
  while (memcmp(a + i * elem, b + i * elem, elem) == 0) ++i;
  if (is_double) {
    double x, y;
    memcpy(&x, a + i * elem, sizeof x);
    memcpy(&y, b + i * elem, sizeof y);
    fprintf(stderr, "  %s: %s[%zu]: device %a, host %a\n", label, what, i, x, y);
  } else {
    long long x = 0, y = 0;
    memcpy(&x, a + i * elem, elem < sizeof x ? elem : sizeof x);
    memcpy(&y, b + i * elem, elem < sizeof y ? elem : sizeof y);
    fprintf(stderr, "  %s: %s[%zu]: device %lld, host %lld\n", label, what, i, x, y);
  }
  return 0;
}

/* Same shape and pattern (row pointers, columns). */
static int same_pattern(const gs_csr_t *D, const gs_csr_t *H, const char *label, const char *what)
{
  if (D->m != H->m || D->n != H->n || D->nnz != H->nnz) {
    fprintf(stderr, "  %s: %s: device %d x %d with %lld entries, host %d x %d with %lld\n",
            label, what, (int)D->m, (int)D->n, (long long)D->nnz, (int)H->m, (int)H->n,
            (long long)H->nnz);
    return 0;
  }
  char w[96];
  snprintf(w, sizeof w, "%s row_ptr", what);
  if (!same_bytes(D->row_ptr, H->row_ptr, (size_t)H->m + 1, sizeof *H->row_ptr, 0, label, w))
    return 0;
  snprintf(w, sizeof w, "%s col", what);
  return same_bytes(D->col, H->col, (size_t)H->nnz, sizeof *H->col, 0, label, w);
}

/* Equal bit for bit. */
static int same_csr(const gs_csr_t *D, const gs_csr_t *H, const char *label, const char *what)
{
  if (!same_pattern(D, H, label, what)) return 0;
  char w[96];
  snprintf(w, sizeof w, "%s val", what);
  return same_bytes(D->val, H->val, (size_t)H->nnz, sizeof *H->val, 1, label, w);
}

/* |D_k - H_k| <= bound[k] for every entry (patterns equal first). */
static int close_csr(const gs_csr_t *D, const gs_csr_t *H, const double *bound, const char *label,
                     const char *what)
{
  if (!same_pattern(D, H, label, what)) return 0;
  double worst = 0.0;
  int64_t at = -1;
  for (int64_t k = 0; k < H->nnz; ++k) {
    const double e = fabs(D->val[k] - H->val[k]);
    if (!(e <= bound[k])) { /* NaN fails too */
      const double r = bound[k] > 0.0 ? e / bound[k] : INFINITY;
      if (at < 0 || !(r <= worst)) {
        worst = r;
        at = k;
      }
    }
  }
  if (at < 0) return 1;
  fprintf(stderr, "  %s: %s entry %lld (column %d): device %.17g, host %.17g, bound %.3g\n",
          label, what, (long long)at, (int)H->col[at], D->val[at], H->val[at], bound[at]);
  return 0;
}

static int cmp_idx(const void *a, const void *b)
{
  const gs_idx_t x = *(const gs_idx_t *)a, y = *(const gs_idx_t *)b;
  return (x > y) - (x < y);
}

/* |A| |B| with the structural pattern of A B (every pair a_ik b_kj, none dropped), sums in long
 * double rounded once to double: each value within u (1 + 2^-60 k) of the exact one. */
static gs_csr_t *absprod(const gs_csr_t *A, const gs_csr_t *B)
{
  const gs_idx_t nc = B->n;
  int64_t *mark = xmalloc((size_t)nc * sizeof *mark);
  long double *acc = xmalloc((size_t)nc * sizeof *acc);
  gs_idx_t *list = xmalloc((size_t)nc * sizeof *list);
  for (gs_idx_t j = 0; j < nc; ++j) mark[j] = -1;
  int64_t total = 0;
  for (gs_idx_t i = 0; i < A->m; ++i)
    for (int64_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) {
      const gs_idx_t k = A->col[p];
      for (int64_t q = B->row_ptr[k]; q < B->row_ptr[k + 1]; ++q)
        if (mark[B->col[q]] != i) {
          mark[B->col[q]] = i;
          ++total;
        }
    }
  gs_csr_t *C = NULL;
  CU_ASSERT_FATAL(gs_csr_create(&C, A->m, nc, total) == GS_SUCCESS);
  for (gs_idx_t j = 0; j < nc; ++j) mark[j] = -1;
  int64_t w = 0;
  for (gs_idx_t i = 0; i < A->m; ++i) {
    int64_t len = 0;
    for (int64_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) {
      const gs_idx_t k = A->col[p];
      const long double a = fabsl((long double)A->val[p]);
      for (int64_t q = B->row_ptr[k]; q < B->row_ptr[k + 1]; ++q) {
        const gs_idx_t j = B->col[q];
        if (mark[j] != i) {
          mark[j] = i;
          acc[j] = 0.0L;
          list[len++] = j;
        }
        acc[j] += a * fabsl((long double)B->val[q]);
      }
    }
    qsort(list, (size_t)len, sizeof *list, cmp_idx);
    for (int64_t t = 0; t < len; ++t) {
      C->col[w] = list[t];
      C->val[w++] = (double)acc[list[t]];
    }
    C->row_ptr[i + 1] = w;
  }
  free(mark);
  free(acc);
  free(list);
  return C;
}

static int64_t max_row(const gs_csr_t *A)
{
  int64_t k = 0;
  for (gs_idx_t i = 0; i < A->m; ++i)
    if (A->row_ptr[i + 1] - A->row_ptr[i] > k) k = A->row_ptr[i + 1] - A->row_ptr[i];
  return k;
}

/* ---- the dense inverse ---------------------------------------------------------------------- */

/* The growth factor assumed in the residual bound: <= 2 for the (weakly) diagonally dominant
 * Laplacians and the column diagonally dominant random matrices, rows permuted or not (Higham,
 * Accuracy and Stability, 2nd ed., Theorem 9.9: partial pivoting undoes the permutation and
 * eliminates as GE without pivoting would); for the Galerkin coarse matrices an assumption
 * (large growth under partial pivoting is not met in practice), and the n^2 factor of the bound
 * leaves orders of magnitude of slack. */
#define GROWTH 2.0

/* X = A^-1 from gs_amg_dense_inverse_dev (Gauss-Jordan elimination with partial pivoting),
 * checked by ||I - A X||_inf <= gamma_{8n} (1 + 2 (n^2 - n) rho) ||A||_inf ||X||_inf: the
 * inverse computed by GJE satisfies |A X - I| <= 8 n u |L||U||X| + O(u^2), L and U the factors
 * of GE with partial pivoting, whose pivots GJE shares (Higham, Accuracy and Stability, 2nd ed.,
 * Section 14.4; gamma_{8n} >= 8 n u, and the O(u^2) term is far inside the slack of the next
 * factor), and || |L||U| ||_inf <= (1 + 2 (n^2 - n) rho) ||A||_inf (Lemma 9.6). The residual is
 * formed in long double. Returns 1 when A was found singular (d_inv NULL, as the header
 * says). */
static int check_inverse(const gs_csr_t *A, const gs_amg_dcsr_t *dA, const char *label)
{
  double *d_inv = NULL;
  int singular = -1;
  const size_t base = gs_device_bytes_in_use(ctx);
  OK(gs_amg_dense_inverse_dev(ctx, dA, &d_inv, &singular), "dense inverse");
  CU_ASSERT(singular == 0 || singular == 1);
  if (singular) {
    CU_ASSERT(d_inv == NULL);
    CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
    return 1;
  }
  const gs_idx_t n = A->m;
  const size_t nn = (size_t)n * (size_t)n;
  CU_ASSERT_FATAL(d_inv != NULL);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base + nn * sizeof(double));
  double *X = xmalloc(nn * sizeof *X);
  long double *res = xmalloc((size_t)n * sizeof *res);
  double *xrow = xmalloc((size_t)n * sizeof *xrow);
  to_host(X, d_inv, nn * sizeof *X);
  gs_dfree(ctx, d_inv);
  double anorm = 0.0, xnorm = 0.0;
  for (gs_idx_t i = 0; i < n; ++i) {
    double s = 0.0;
    for (int64_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) s += fabs(A->val[p]);
    anorm = s > anorm ? s : anorm;
    xrow[i] = 0.0;
    res[i] = 0.0L;
  }
  int finite = 1;
  for (gs_idx_t j = 0; j < n; ++j) {
    const double *x = X + (size_t)j * n; /* column j */
    for (gs_idx_t i = 0; i < n; ++i) {
      xrow[i] += fabs(x[i]);
      finite &= isfinite(x[i]);
      long double s = i == j ? -1.0L : 0.0L;
      for (int64_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p)
        s += (long double)A->val[p] * x[A->col[p]];
      res[i] += fabsl(s);
    }
  }
  long double rnorm = 0.0L;
  for (gs_idx_t i = 0; i < n; ++i) {
    xnorm = xrow[i] > xnorm ? xrow[i] : xnorm;
    rnorm = res[i] > rnorm ? res[i] : rnorm;
  }
  const double dn = (double)n;
  const double bound = gam(8.0 * dn) * (1.0 + 2.0 * (dn * dn - dn) * GROWTH) * anorm * xnorm;
  CU_ASSERT(finite);
  CU_ASSERT((double)rnorm <= bound);
  if (!((double)rnorm <= bound) || !finite)
    fprintf(stderr, "  %s: ||I - A X||_inf = %.3g over the bound %.3g (||A|| %.3g, ||X|| %.3g)\n",
            label, (double)rnorm, bound, anorm, xnorm);
  free(X);
  free(res);
  free(xrow);
  return 0;
}

/* ---- one level of the setup, every phase against the host ----------------------------------- */

#define DENSE_TEST_MAX 600 /* coarse matrices up to this size also get the dense inverse */

/* Aggregates as rule 3 promises, independently of the host: -1 exactly for the isolated nodes
 * (no strong off-diagonal entry), every other node in [0, naggs), every aggregate used. */
static void check_aggregate_rules(const gs_csr_t *A, const uint8_t *strong, const int32_t *agg,
                                  int32_t naggs, const char *label)
{
  uint8_t *used = xmalloc((size_t)naggs + 1);
  memset(used, 0, (size_t)naggs + 1);
  int bad = 0;
  for (gs_idx_t i = 0; i < A->m && !bad; ++i) {
    int iso = 1;
    for (int64_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p)
      if (strong[p] && A->col[p] != i) iso = 0;
    if (iso ? agg[i] != -1 : (agg[i] < 0 || agg[i] >= naggs)) {
      fprintf(stderr, "  %s: node %d (%s) has aggregate %d of %d\n", label, (int)i,
              iso ? "isolated" : "not isolated", (int)agg[i], (int)naggs);
      bad = 1;
    } else if (!iso) {
      used[agg[i]] = 1;
    }
  }
  for (int32_t a = 0; a < naggs && !bad; ++a)
    if (!used[a]) {
      fprintf(stderr, "  %s: aggregate %d of %d is empty\n", label, (int)a, (int)naggs);
      bad = 1;
    }
  CU_ASSERT(!bad);
  free(used);
}

/* t with a given B (not all ones): the aggregate sums of B_j^2 run in another order on the
 * device (atomics), so t_i = B_i / sqrt(s) agrees within the rounding of both sides: each is
 * t (1 + theta)^(-1/2) (1 + d1)(1 + d2) with |theta| <= gamma_k (k the aggregate's size, the
 * squares and sums of nonnegative terms), |d| <= u, i.e. within (gamma_k + 3u) |t| of t. */
static void check_tentative_b(gs_idx_t n, const int32_t *agg, const int32_t *d_agg,
                              int32_t naggs, const char *label)
{
  double *B = xmalloc((size_t)n * sizeof *B), *th = xmalloc((size_t)n * sizeof *th);
  double *td = xmalloc((size_t)n * sizeof *td);
  int64_t *size = xmalloc(((size_t)naggs + 1) * sizeof *size);
  memset(size, 0, ((size_t)naggs + 1) * sizeof *size);
  for (gs_idx_t i = 0; i < n; ++i) {
    B[i] = 2.0 * gs_test_uniform(rng()) - 1.0;
    if (agg[i] == 0) B[i] = 0.0; /* aggregate 0 has B = 0: its t is 0 */
    if (agg[i] >= 0) size[agg[i]]++;
  }
  double *d_B = to_dev(B, (size_t)n * sizeof *B), *d_t = dalloc((size_t)n * sizeof *td);
  OK(gs_amg_tentative_host(n, agg, naggs, B, th), "host tentative (B)");
  OK(gs_amg_tentative_dev(ctx, n, d_agg, naggs, d_B, d_t), "tentative (B)");
  to_host(td, d_t, (size_t)n * sizeof *td);
  int bad = 0;
  for (gs_idx_t i = 0; i < n && !bad; ++i) {
    double bound = 0.0;
    if (agg[i] >= 0) {
      const double e = gam((double)size[agg[i]]) + 3.0 * U_DBL;
      bound = 2.0 * e * fabs(th[i]) / (1.0 - e);
    }
    if (!(fabs(td[i] - th[i]) <= bound) || (agg[i] <= 0 && td[i] != 0.0)) {
      fprintf(stderr, "  %s: t with B, node %d (aggregate %d): device %.17g, host %.17g\n",
              label, (int)i, (int)agg[i], td[i], th[i]);
      bad = 1;
    }
  }
  CU_ASSERT(!bad);
  gs_dfree(ctx, d_B);
  gs_dfree(ctx, d_t);
  free(B);
  free(th);
  free(td);
  free(size);
}

static void check_level(const gs_csr_t *A, double theta, int level, const char *name)
{
  char label[256];
  snprintf(label, sizeof label, "%s level %d (n %d, nnz %lld, theta %g)", name, level, (int)A->m,
           (long long)A->nnz, theta);
  CU_ASSERT_FATAL(A->m == A->n);
  const size_t base = gs_device_bytes_in_use(ctx);
  const gs_idx_t n = A->m;
  const size_t nnz = (size_t)A->nnz;
  gs_amg_dcsr_t dA, dP, dR, dAP, dAc;
  memset(&dP, 0, sizeof dP);
  memset(&dR, 0, sizeof dR);
  memset(&dAP, 0, sizeof dAP);
  memset(&dAc, 0, sizeof dAc);
  gs_test_amg_upload(ctx, A, &dA);

  /* 1. d */
  double *hd = xmalloc((size_t)n * sizeof *hd), *dd = xmalloc((size_t)n * sizeof *dd);
  double *d_d = dalloc((size_t)n * sizeof *dd);
  gs_amg_diag_host(A, hd);
  OK(gs_amg_diag_dev(ctx, n, dA.rp, dA.col, dA.val, d_d), "diag");
  to_host(dd, d_d, (size_t)n * sizeof *dd);
  CU_ASSERT(same_bytes(dd, hd, (size_t)n, sizeof *hd, 1, label, "diag"));

  /* 2. strength */
  uint8_t *hs = xmalloc(nnz), *ds = xmalloc(nnz);
  uint8_t *d_s = dalloc(nnz);
  gs_amg_strength_host(A, hd, theta, hs);
  OK(gs_amg_strength_dev(ctx, n, dA.rp, dA.col, dA.val, d_d, theta, d_s), "strength");
  to_host(ds, d_s, nnz);
  CU_ASSERT(same_bytes(ds, hs, nnz, 1, 0, label, "strong"));

  /* 3. aggregates (the device's from the host's strength, so that one difference is reported
   * once) */
  CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_s, hs, nnz) == GS_SUCCESS);
  int32_t *ha = xmalloc((size_t)n * sizeof *ha), *da = xmalloc((size_t)n * sizeof *da);
  int32_t *d_agg = dalloc((size_t)n * sizeof *da);
  int32_t naggs_h = -1, naggs_d = -2;
  int rounds_h = -1, rounds_d = -2;
  OK(gs_amg_aggregate_host(A, hs, ha, &naggs_h, &rounds_h), "host aggregate");
  OK(gs_amg_aggregate_dev(ctx, n, dA.rp, dA.col, d_s, d_agg, &naggs_d, &rounds_d), "aggregate");
  to_host(da, d_agg, (size_t)n * sizeof *da);
  CU_ASSERT_EQUAL(naggs_d, naggs_h);
  CU_ASSERT_EQUAL(rounds_d, rounds_h);
  if (naggs_d != naggs_h || rounds_d != rounds_h)
    fprintf(stderr, "  %s: aggregates %d (host %d), rounds %d (host %d)\n", label, (int)naggs_d,
            (int)naggs_h, rounds_d, rounds_h);
  CU_ASSERT(same_bytes(da, ha, (size_t)n, sizeof *ha, 0, label, "agg"));
  check_aggregate_rules(A, hs, ha, naggs_h, label);
  CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_agg, ha, (size_t)n * sizeof *ha) == GS_SUCCESS);
  const int32_t naggs = naggs_h;

  /* 4. t, B = ones (bit for bit), and a given B (within rounding) */
  double *ht = xmalloc((size_t)n * sizeof *ht), *dt = xmalloc((size_t)n * sizeof *dt);
  double *d_t = dalloc((size_t)n * sizeof *dt);
  OK(gs_amg_tentative_host(n, ha, naggs, NULL, ht), "host tentative");
  OK(gs_amg_tentative_dev(ctx, n, d_agg, naggs, NULL, d_t), "tentative");
  to_host(dt, d_t, (size_t)n * sizeof *dt);
  CU_ASSERT(same_bytes(dt, ht, (size_t)n, sizeof *ht, 1, label, "t"));
  check_tentative_b(n, ha, d_agg, naggs, label);
  CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_t, ht, (size_t)n * sizeof *ht) == GS_SUCCESS);

  /* 5. l1 diagonal: the same sums in column order */
  double *dl1 = xmalloc((size_t)n * sizeof *dl1), *hl1 = xmalloc((size_t)n * sizeof *hl1);
  double *d_l1 = dalloc((size_t)n * sizeof *dl1);
  for (gs_idx_t i = 0; i < n; ++i) {
    double s = 0.0;
    for (int64_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) s += fabs(A->val[p]);
    hl1[i] = s;
  }
  OK(gs_amg_l1_diag_dev(ctx, n, dA.rp, dA.val, d_l1), "l1 diagonal");
  to_host(dl1, d_l1, (size_t)n * sizeof *dl1);
  CU_ASSERT(same_bytes(dl1, hl1, (size_t)n, sizeof *hl1, 1, label, "l1"));

  /* 6. smoothed P; omega = (4/3) / ||D^-1 A||_inf (rho's upper bound), or the refusal of a
   * zero diagonal by both */
  gs_idx_t zero_row = -1;
  double rho = 0.0;
  for (gs_idx_t i = 0; i < n; ++i) {
    if (hd[i] == 0.0) {
      if (zero_row < 0) zero_row = i;
      continue;
    }
    double s = 0.0;
    for (int64_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) s += fabs(A->val[p]);
    s /= fabs(hd[i]);
    rho = s > rho ? s : rho;
  }
  const double omega = rho > 0.0 ? (4.0 / 3.0) / rho : 1.0;
  gs_csr_t *Ph = NULL, *Pd = NULL, *Rh = NULL, *Rd = NULL, *APh = NULL, *APd = NULL;
  gs_csr_t *Ach = NULL, *Acd = NULL, *M1 = NULL, *absR = NULL;
  double *bound = NULL;
  const gs_status_t sth = gs_amg_smooth_p_host(A, hd, ha, ht, naggs, omega, &Ph);
  const gs_status_t std_ = gs_amg_smooth_p_dev(ctx, &dA, d_d, d_agg, d_t, naggs, omega, &dP);
  if (zero_row >= 0) {
    char want[64];
    snprintf(want, sizeof want, "row %d", (int)zero_row + 1);
    CU_ASSERT_EQUAL(sth, GS_ERR_INVALID_ARG);
    CU_ASSERT_EQUAL(std_, GS_ERR_INVALID_ARG);
    CU_ASSERT(std_ != GS_ERR_INVALID_ARG || strstr(gs_last_error(), want) != NULL);
    if (std_ == GS_ERR_INVALID_ARG && !strstr(gs_last_error(), want))
      fprintf(stderr, "  %s: zero diagonal message \"%s\" lacks \"%s\"\n", label,
              gs_last_error(), want);
    CU_ASSERT(dP.rp == NULL && dP.col == NULL && dP.val == NULL);
    goto done;
  }
  if (sth != GS_SUCCESS || std_ != GS_SUCCESS)
    fprintf(stderr, "  %s: smoothed P: host %d, device %d: %s\n", label, (int)sth, (int)std_,
            gs_last_error());
  CU_ASSERT_FATAL(sth == GS_SUCCESS && std_ == GS_SUCCESS);
  Pd = gs_test_amg_download(ctx, &dP);
  CU_ASSERT(same_csr(Pd, Ph, label, "P"));
  gs_amg_dcsr_free(ctx, &dP); /* the rest runs on the host's P: one difference, one report */
  gs_test_amg_upload(ctx, Ph, &dP);

  /* 7. R = P^T: values moved, exactly the host transpose */
  OK(gs_amg_transpose_dev(ctx, &dP, &dR), "transpose");
  CU_ASSERT_FATAL(gs_csr_transpose(&Rh, Ph) == GS_SUCCESS);
  Rd = gs_test_amg_download(ctx, &dR);
  CU_ASSERT(same_csr(Rd, Rh, label, "R"));

  /* 8. A P: |AP_dev - AP_host| <= 2 gamma_{k_i} (|A||P|)_ij (1 + 4u), k_i = row i's entries of
   * A (the terms of each sum; the factor covers M's own rounding) */
  OK(gs_amg_spgemm_dev(ctx, &dA, &dP, &dAP), "A P");
  OK(gs_amg_spgemm_host(A, Ph, &APh), "host A P");
  APd = gs_test_amg_download(ctx, &dAP);
  M1 = absprod(A, Ph);
  CU_ASSERT(same_pattern(M1, APh, label, "structural A P vs host A P"));
  if (M1->nnz == APh->nnz) {
    bound = xmalloc((size_t)APh->nnz * sizeof *bound);
    for (gs_idx_t i = 0; i < APh->m; ++i) {
      const double g = gam((double)(A->row_ptr[i + 1] - A->row_ptr[i]));
      for (int64_t p = APh->row_ptr[i]; p < APh->row_ptr[i + 1]; ++p)
        bound[p] = 2.0 * g * M1->val[p] * (1.0 + 4.0 * U_DBL);
    }
    CU_ASSERT(close_csr(APd, APh, bound, label, "A P"));
    free(bound);
    bound = NULL;
  }

  /* 9. A_c = R (A P): with K the longest row of A, P and R, each side is within
   * (gamma_K + gamma_K (1 + gamma_K)) (|R||A||P|)_ij of the exact value, whichever way round it
   * associates the two products (Higham Section 3.5) */
  OK(gs_amg_spgemm_dev(ctx, &dR, &dAP, &dAc), "R (A P)");
  OK(gs_amg_rap_host(A, Ph, &Ach), "host RAP");
  Acd = gs_test_amg_download(ctx, &dAc);
  absR = absprod(Rh, M1); /* |R| (|A||P|): absprod takes |.| of both */
  CU_ASSERT(same_pattern(absR, Ach, label, "structural RAP vs host RAP"));
  if (absR->nnz == Ach->nnz) {
    int64_t K = max_row(A);
    K = max_row(Ph) > K ? max_row(Ph) : K;
    K = max_row(Rh) > K ? max_row(Rh) : K;
    const double g = gam((double)K), f = 2.0 * (g + g * (1.0 + g)) * (1.0 + 6.0 * U_DBL);
    bound = xmalloc((size_t)Ach->nnz * sizeof *bound);
    for (int64_t p = 0; p < Ach->nnz; ++p) bound[p] = f * absR->val[p];
    CU_ASSERT(close_csr(Acd, Ach, bound, label, "RAP"));
    free(bound);
    bound = NULL;
  }

  /* 10. the dense inverse of the coarse matrix (when small) */
  if (Ach->m > 0 && Ach->m <= DENSE_TEST_MAX) {
    gs_amg_dcsr_t dAch;
    gs_test_amg_upload(ctx, Ach, &dAch);
    (void)check_inverse(Ach, &dAch, label);
    gs_amg_dcsr_free(ctx, &dAch);
  }

done:
  gs_amg_dcsr_free(ctx, &dA);
  gs_amg_dcsr_free(ctx, &dP);
  gs_amg_dcsr_free(ctx, &dR);
  gs_amg_dcsr_free(ctx, &dAP);
  gs_amg_dcsr_free(ctx, &dAc);
  gs_dfree(ctx, d_d);
  gs_dfree(ctx, d_s);
  gs_dfree(ctx, d_agg);
  gs_dfree(ctx, d_t);
  gs_dfree(ctx, d_l1);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
  free(hd);
  free(dd);
  free(hs);
  free(ds);
  free(ha);
  free(da);
  free(ht);
  free(dt);
  free(dl1);
  free(hl1);
  gs_csr_destroy(&Pd);
  gs_csr_destroy(&Rh);
  gs_csr_destroy(&Rd);
  gs_csr_destroy(&APh);
  gs_csr_destroy(&APd);
  gs_csr_destroy(&Acd);
  gs_csr_destroy(&M1);
  gs_csr_destroy(&absR);
  gs_csr_destroy(&Ph);
  /* the next level from the host's coarse matrix, while it still coarsens */
  if (Ach && level < 2 && Ach->m > 1 && Ach->m < A->m) check_level(Ach, theta, level + 1, name);
  gs_csr_destroy(&Ach);
}

/* ---- matrices ----------------------------------------------------------------------------- */

/* n x n random: row i holds its diagonal d_i = +-(1 + 4U) (0 in a fraction zero_diag of the
 * rows: an explicit zero or no entry), `per_row` entries in [-1, 1) (one in 16 an explicit 0) at
 * random columns (mirrored with the same value when symmetric), and none at all in a fraction
 * `lonely` of the rows (isolated unless a mirror lands there). */
static gs_csr_t *random_matrix(gs_idx_t n, int per_row, int symmetric, double zero_diag,
                               double lonely)
{
  uint64_t *s = rng();
  gs_coo_t *C = NULL;
  CU_ASSERT_FATAL(gs_coo_create(&C, n, n, (gs_off_t)n * (2 * per_row + 1) + 1) == GS_SUCCESS);
  for (gs_idx_t i = 0; i < n; ++i) {
    if (gs_test_uniform(s) < zero_diag) {
      if (gs_test_uniform(s) < 0.5) CU_ASSERT_FATAL(gs_coo_push(C, i, i, 0.0) == GS_SUCCESS);
    } else {
      const double d = (1.0 + 4.0 * gs_test_uniform(s)) * (gs_test_uniform(s) < 0.8 ? 1 : -1);
      CU_ASSERT_FATAL(gs_coo_push(C, i, i, d) == GS_SUCCESS);
    }
    if (gs_test_uniform(s) < lonely) continue;
    for (int k = 0; k < per_row; ++k) {
      const gs_idx_t j = (gs_idx_t)(gs_test_uniform(s) * n);
      if (j == i) continue;
      const double v = gs_test_next(s) % 16 == 0 ? 0.0 : 2.0 * gs_test_uniform(s) - 1.0;
      CU_ASSERT_FATAL(gs_coo_push(C, i, j, v) == GS_SUCCESS);
      if (symmetric) CU_ASSERT_FATAL(gs_coo_push(C, j, i, v) == GS_SUCCESS);
    }
  }
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
  gs_coo_destroy(&C);
  return A;
}

/* The graph Laplacian of an nx x ny grid (zero row sums: singular, ones in its null space). */
static gs_csr_t *graph_laplacian(gs_idx_t nx, gs_idx_t ny)
{
  gs_coo_t *C = NULL;
  const gs_idx_t n = nx * ny;
  CU_ASSERT_FATAL(gs_coo_create(&C, n, n, (gs_off_t)5 * n) == GS_SUCCESS);
  for (gs_idx_t y = 0; y < ny; ++y)
    for (gs_idx_t x = 0; x < nx; ++x) {
      const gs_idx_t i = y * nx + x;
      int deg = 0;
      const gs_idx_t nb[4] = {x > 0 ? i - 1 : -1, x + 1 < nx ? i + 1 : -1, y > 0 ? i - nx : -1,
                              y + 1 < ny ? i + nx : -1};
      for (int k = 0; k < 4; ++k)
        if (nb[k] >= 0) {
          CU_ASSERT_FATAL(gs_coo_push(C, i, nb[k], -1.0) == GS_SUCCESS);
          ++deg;
        }
      CU_ASSERT_FATAL(gs_coo_push(C, i, i, (double)deg) == GS_SUCCESS);
    }
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
  gs_coo_destroy(&C);
  return A;
}

/* n x n, not symmetric, with rows of given lengths at spread places: row (q + 1) n / (nl + 1)
 * holds exactly lens[q] entries (its diagonal and lens[q] - 1 distinct random columns); every
 * other row its diagonal and up to per_row random entries, or the diagonal alone in a fraction
 * `lonely` of the rows (isolated nodes: columns without an aggregate inside the long rows).
 * Diagonals +-(1 + 4U), the rest in [-1, 1), one in 16 an explicit 0. */
static gs_csr_t *long_rows_matrix(gs_idx_t n, const int *lens, int nl, int per_row,
                                  double lonely)
{
  uint64_t *s = rng();
  gs_off_t cap = (gs_off_t)n * (per_row + 1) + 1;
  for (int q = 0; q < nl; ++q) cap += lens[q];
  gs_coo_t *C = NULL;
  CU_ASSERT_FATAL(gs_coo_create(&C, n, n, cap) == GS_SUCCESS);
  gs_idx_t *perm = xmalloc((size_t)n * sizeof *perm);
  int *which = xmalloc((size_t)n * sizeof *which);
  for (gs_idx_t j = 0; j < n; ++j) {
    perm[j] = j;
    which[j] = -1;
  }
  for (int q = 0; q < nl; ++q) {
    CU_ASSERT_FATAL(lens[q] >= 1 && lens[q] <= n);
    which[(int64_t)(q + 1) * n / (nl + 1)] = q;
  }
  for (gs_idx_t i = 0; i < n; ++i) {
    const double d = (1.0 + 4.0 * gs_test_uniform(s)) * (gs_test_uniform(s) < 0.8 ? 1 : -1);
    CU_ASSERT_FATAL(gs_coo_push(C, i, i, d) == GS_SUCCESS);
    if (which[i] >= 0) { /* a partial Fisher-Yates shuffle of perm draws distinct columns */
      for (gs_idx_t q = 0, got = 0; got < lens[which[i]] - 1; ++q) {
        const gs_idx_t r = q + (gs_idx_t)(gs_test_next(s) % (uint64_t)(n - q)), x = perm[q];
        perm[q] = perm[r];
        perm[r] = x;
        if (perm[q] == i) continue;
        const double v = gs_test_next(s) % 16 == 0 ? 0.0 : 2.0 * gs_test_uniform(s) - 1.0;
        CU_ASSERT_FATAL(gs_coo_push(C, i, perm[q], v) == GS_SUCCESS);
        ++got;
      }
    } else if (!(gs_test_uniform(s) < lonely)) {
      for (int k = 0; k < per_row; ++k) {
        const gs_idx_t j = (gs_idx_t)(gs_test_uniform(s) * n);
        if (j == i) continue;
        const double v = gs_test_next(s) % 16 == 0 ? 0.0 : 2.0 * gs_test_uniform(s) - 1.0;
        CU_ASSERT_FATAL(gs_coo_push(C, i, j, v) == GS_SUCCESS);
      }
    }
  }
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
  for (int q = 0; q < nl; ++q) { /* the lengths asked for, exactly */
    const gs_idx_t i = (gs_idx_t)((int64_t)(q + 1) * n / (nl + 1));
    CU_ASSERT_FATAL(A->row_ptr[i + 1] - A->row_ptr[i] == lens[q]);
  }
  gs_coo_destroy(&C);
  free(perm);
  free(which);
  return A;
}

/* n x n, not symmetric, diagonally dominant by rows and by columns: off-diagonal entries in
 * [-1, 1) (every one when per_row is 0, else per_row at random columns, duplicates summed),
 * a_jj = +-(1 + the sums of |a_jk| and |a_kj| over k != j); with `permute` its rows are then
 * shuffled (well conditioned still, and partial pivoting must swap every row back). */
static gs_csr_t *dominant_matrix(gs_idx_t n, int per_row, int permute)
{
  uint64_t *s = rng();
  gs_coo_t *C = NULL;
  gs_csr_t *O = NULL, *A = NULL;
  const gs_off_t off = per_row > 0 ? (gs_off_t)n * per_row : (gs_off_t)n * (n - 1);
  CU_ASSERT_FATAL(gs_coo_create(&C, n, n, off + 1) == GS_SUCCESS);
  for (gs_idx_t i = 0; i < n; ++i)
    for (gs_idx_t k = 0; k < (per_row > 0 ? per_row : n); ++k) {
      const gs_idx_t j = per_row > 0 ? (gs_idx_t)(gs_test_uniform(s) * n) : k;
      if (j != i)
        CU_ASSERT_FATAL(gs_coo_push(C, i, j, 2.0 * gs_test_uniform(s) - 1.0) == GS_SUCCESS);
    }
  CU_ASSERT_FATAL(gs_coo_to_csr(&O, C) == GS_SUCCESS);
  gs_coo_destroy(&C);
  double *sum = xmalloc((size_t)n * sizeof *sum);
  gs_idx_t *row = xmalloc((size_t)n * sizeof *row);
  for (gs_idx_t i = 0; i < n; ++i) {
    sum[i] = 1.0;
    row[i] = i;
  }
  for (gs_idx_t i = 0; i < n; ++i)
    for (int64_t p = O->row_ptr[i]; p < O->row_ptr[i + 1]; ++p) {
      sum[i] += fabs(O->val[p]);
      sum[O->col[p]] += fabs(O->val[p]);
    }
  if (permute)
    for (gs_idx_t i = n - 1; i > 0; --i) {
      const gs_idx_t r = (gs_idx_t)(gs_test_next(s) % (uint64_t)(i + 1)), x = row[i];
      row[i] = row[r];
      row[r] = x;
    }
  CU_ASSERT_FATAL(gs_coo_create(&C, n, n, O->nnz + n) == GS_SUCCESS);
  for (gs_idx_t i = 0; i < n; ++i) {
    const double d = sum[i] * (gs_test_uniform(s) < 0.5 ? -1.0 : 1.0);
    CU_ASSERT_FATAL(gs_coo_push(C, row[i], i, d) == GS_SUCCESS);
    for (int64_t p = O->row_ptr[i]; p < O->row_ptr[i + 1]; ++p)
      CU_ASSERT_FATAL(gs_coo_push(C, row[i], O->col[p], O->val[p]) == GS_SUCCESS);
  }
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
  gs_coo_destroy(&C);
  gs_csr_destroy(&O);
  free(sum);
  free(row);
  return A;
}

static const double g_thetas[] = {0.0, 0.08, 0.25, 0.5};

/* ---- tests -------------------------------------------------------------------------------- */

static void test_random(void)
{
  const int cases = gs_test_quick() ? 8 : 40;
  for (int c = 0; c < cases; ++c) {
    uint64_t *s = rng();
    const gs_idx_t n = c < 3 ? (gs_idx_t)(c + 1) : 1 + (gs_idx_t)(gs_test_next(s) % 1500);
    const int per_row = (int)(gs_test_next(s) % 9);
    const int symmetric = c % 2 == 0;
    const double lonely = c % 3 == 0 ? 0.2 : 0.0;
    const double theta = g_thetas[gs_test_next(s) % 4];
    gs_csr_t *A = random_matrix(n, per_row, symmetric, 0.0, lonely);
    char name[96];
    snprintf(name, sizeof name, "random %d (%s, %d a row)", c,
             symmetric ? "symmetric" : "nonsymmetric", per_row);
    check_level(A, theta, 0, name);
    gs_csr_destroy(&A);
  }
}

/* A zero diagonal: the smoothed P is refused by host and device, naming the first such row. */
static void test_zero_diagonal(void)
{
  for (int c = 0; c < 4; ++c) {
    gs_csr_t *A = random_matrix(50 + 100 * c, 4, c % 2 == 0, 0.05, 0.0);
    const gs_idx_t z = A->m / 3; /* at least one: row z's stored diagonal made an explicit 0 */
    for (int64_t p = A->row_ptr[z]; p < A->row_ptr[z + 1]; ++p)
      if (A->col[p] == z) A->val[p] = 0.0;
    check_level(A, 0.08, 0, "zero diagonal");
    gs_csr_destroy(&A);
  }
}

static void test_laplacians(void)
{
  static const int g[][4] = {{1000, 1, 1, 3}, {40, 30, 1, 5}, {33, 33, 1, 9},
                             {16, 14, 12, 7}, {10, 9, 8, 27}};
  for (size_t c = 0; c < sizeof g / sizeof g[0]; ++c) {
    gs_csr_t *A = NULL;
    CU_ASSERT_FATAL(gs_gen_laplace(&A, g[c][0], g[c][1], g[c][2], g[c][3]) == GS_SUCCESS);
    char name[96];
    snprintf(name, sizeof name, "laplace %dx%dx%d/%d", g[c][0], g[c][1], g[c][2], g[c][3]);
    for (int t = 0; t < 2; ++t) check_level(A, t ? 0.25 : 0.0, 0, name);
    gs_csr_destroy(&A);
  }
}

/* The dense inverse of Laplacians (SPD: never singular) and of graph Laplacians (singular). */
static void test_dense_inverse(void)
{
  const char *label = "dense inverse";
  static const int g[][4] = {{1, 1, 1, 3}, {2, 1, 1, 3}, {200, 1, 1, 3}, {15, 13, 1, 5},
                             {8, 7, 6, 7}, {30, 30, 1, 9}};
  for (size_t c = 0; c < sizeof g / sizeof g[0]; ++c) {
    gs_csr_t *A = NULL;
    gs_amg_dcsr_t dA;
    CU_ASSERT_FATAL(gs_gen_laplace(&A, g[c][0], g[c][1], g[c][2], g[c][3]) == GS_SUCCESS);
    gs_test_amg_upload(ctx, A, &dA);
    CU_ASSERT_EQUAL(check_inverse(A, &dA, label), 0);
    gs_amg_dcsr_free(ctx, &dA);
    gs_csr_destroy(&A);
  }
  static const int s[][2] = {{2, 1}, {100, 1}, {12, 11}, {30, 25}};
  for (size_t c = 0; c < sizeof s / sizeof s[0]; ++c) {
    gs_csr_t *A = graph_laplacian(s[c][0], s[c][1]);
    gs_amg_dcsr_t dA;
    gs_test_amg_upload(ctx, A, &dA);
    const size_t base = gs_device_bytes_in_use(ctx);
    double *d_inv = (double *)(uintptr_t)1;
    int singular = 0;
    OK(gs_amg_dense_inverse_dev(ctx, &dA, &d_inv, &singular), "singular dense inverse");
    CU_ASSERT_EQUAL(singular, 1);
    CU_ASSERT(d_inv == NULL);
    CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
    if (singular != 1) fprintf(stderr, "  graph Laplacian %dx%d not found singular\n", s[c][0],
                               s[c][1]);
    gs_dfree(ctx, singular == 1 ? NULL : d_inv);
    gs_amg_dcsr_free(ctx, &dA);
    gs_csr_destroy(&A);
  }
  /* a random nonsymmetric, diagonally dominant matrix */
  gs_csr_t *A = random_matrix(300, 6, 0, 0.0, 0.0);
  for (gs_idx_t i = 0; i < A->m; ++i) /* |a_ii| > sum of the rest: nonsingular */
    for (int64_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p)
      if (A->col[p] == i) A->val[p] = (A->val[p] < 0 ? -1.0 : 1.0) * 13.0;
  gs_amg_dcsr_t dA;
  gs_test_amg_upload(ctx, A, &dA);
  CU_ASSERT_EQUAL(check_inverse(A, &dA, "dense inverse, random"), 0);
  gs_amg_dcsr_free(ctx, &dA);
  gs_csr_destroy(&A);
}

/* Rows of every length class of the smoothed P's kernels (a thread up to 16 entries, a warp up
 * to 256, a block up to 4096, then the keys sorted in global memory), each boundary and one past
 * it, among short rows and isolated nodes; coarse levels inherit long rows. */
static void test_long_rows(void)
{
  static const int lens[] = {16, 17, 40, 256, 257, 300, 2000, 4096, 4097, 5000, 10000};
  const int nl = (int)(sizeof lens / sizeof lens[0]);
  const int cases = gs_test_quick() ? 2 : 4;
  for (int c = 0; c < cases; ++c) {
    const double theta = c % 2 ? 0.08 : 0.0;
    gs_csr_t *A = long_rows_matrix(12000, lens, nl, 3 + c, c < 2 ? 0.1 : 0.0);
    char name[96];
    snprintf(name, sizeof name, "long rows %d", c);
    check_level(A, theta, 0, name);
    gs_csr_destroy(&A);
  }
}

/* Dense-ish matrices: a sparse random graph whose coarse levels are nearly dense (2-hop
 * neighbourhoods of hundreds of nodes: a hundred or so aggregates, each meeting most others),
 * and rows of ~120 (warp) and ~400-600 entries (block) with few, large aggregates, so that
 * P's rows are long runs of one aggregate. */
static void test_denseish(void)
{
  static const int g[][3] = {{20000, 8, 1}, {2000, 60, 1}, {1500, 300, 1}, {800, 400, 0}};
  for (size_t c = 0; c < sizeof g / sizeof g[0]; ++c) {
    gs_csr_t *A = random_matrix(g[c][0], g[c][1], g[c][2], 0.0, 0.0);
    char name[96];
    snprintf(name, sizeof name, "dense-ish %d (%d a row, %s)", (int)c, g[c][1],
             g[c][2] ? "symmetric" : "nonsymmetric");
    check_level(A, 0.0, 0, name);
    if (!gs_test_quick()) check_level(A, 0.08, 0, name);
    gs_csr_destroy(&A);
  }
}

/* The dense inverse on both of its paths (one block while the matrix fits its shared memory:
 * n <= 168 on an H100; a kernel a step beyond): diagonally dominant random matrices, their rows
 * permuted or not (dense up to 300 rows, 30 entries a row at 1500, whose inverse is still
 * dense), and singular ones: a zero column (an exact zero pivot: the multi-kernel path stops
 * early), a NaN. */
static void test_dense_inverse_random(void)
{
  static const gs_idx_t sizes[] = {1, 2, 33, 300, 1500};
  for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; ++c)
    for (int permute = 0; permute < 2; ++permute) {
      const gs_idx_t n = sizes[c];
      gs_csr_t *A = dominant_matrix(n, n <= 300 ? 0 : 30, permute);
      gs_amg_dcsr_t dA;
      char label[96];
      snprintf(label, sizeof label, "dense inverse, n %d, %s", (int)n,
               permute ? "rows permuted" : "diagonally dominant");
      gs_test_amg_upload(ctx, A, &dA);
      CU_ASSERT_EQUAL(check_inverse(A, &dA, label), 0);
      gs_amg_dcsr_free(ctx, &dA);
      gs_csr_destroy(&A);
    }
  static const gs_idx_t sing[] = {50, 400};
  for (size_t c = 0; c < sizeof sing / sizeof sing[0]; ++c)
    for (int kind = 0; kind < 2; ++kind) {
      gs_csr_t *A = dominant_matrix(sing[c], 0, 1);
      for (int64_t p = 0; p < A->nnz; ++p) {
        if (kind == 0 && A->col[p] == 3) A->val[p] = 0.0; /* column 3 zero */
        if (kind == 1 && p == A->nnz / 2) A->val[p] = NAN;
      }
      gs_amg_dcsr_t dA;
      gs_test_amg_upload(ctx, A, &dA);
      const size_t base = gs_device_bytes_in_use(ctx);
      double *d_inv = (double *)(uintptr_t)1;
      int singular = 0;
      const char *label = kind ? "dense inverse, a NaN" : "dense inverse, a zero column";
      OK(gs_amg_dense_inverse_dev(ctx, &dA, &d_inv, &singular), "singular dense inverse");
      CU_ASSERT_EQUAL(singular, 1);
      CU_ASSERT(d_inv == NULL);
      CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
      if (singular != 1) fprintf(stderr, "  %s (n %d) not found singular\n", label, (int)sing[c]);
      gs_dfree(ctx, singular == 1 ? NULL : d_inv);
      gs_amg_dcsr_free(ctx, &dA);
      gs_csr_destroy(&A);
    }
}

/* The SPD matrices of GS_MATRIX_DIR (category "spd" in MANIFEST.tsv). */
static void test_real_spd(void)
{
  if (!gs_test_have_matrices()) return;
  char path[4096];
  snprintf(path, sizeof path, "%s/MANIFEST.tsv", gs_test_matrix_dir());
  FILE *f = fopen(path, "r");
  if (!f) {
    printf("skipped: %s not found\n", path);
    return;
  }
  char line[8192];
  int checked = 0;
  if (!fgets(line, sizeof line, f)) line[0] = '\0'; /* header */
  while (fgets(line, sizeof line, f)) {
    char *save = NULL, *name = strtok_r(line, "\t", &save), *cat = strtok_r(NULL, "\t", &save);
    if (!name || !cat || strcmp(cat, "spd") != 0 || !gs_test_have_matrix(name)) continue;
    gs_csr_t *A = NULL;
    if (gs_mm_read_csr(gs_test_matrix(name), &A) != GS_SUCCESS) {
      fprintf(stderr, "  cannot read %s: %s\n", name, gs_last_error());
      CU_FAIL("matrix not read");
      continue;
    }
    check_level(A, 0.0, 0, name);
    check_level(A, 0.08, 0, name);
    gs_csr_destroy(&A);
    ++checked;
  }
  fclose(f);
  CU_ASSERT(checked >= 1);
}

/* The cycle kernels against a host loop. Each side rounds the same few operations, the device
 * possibly fused: with M_d = |c1 d| + |c2 dinv r| (Jacobi: |w dinv r|), d is within gamma_3 M_d
 * of the exact value and x within gamma_4 (|x| + M_d); the two sides differ by twice that. The
 * outputs that are write-only start as NaN on the device. */
static void test_cycle_kernels(void)
{
  const char *label = "cycle kernels";
  uint64_t *s = rng();
  const gs_idx_t sizes[] = {1, 31, 1000, 100003};
  for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; ++c) {
    const gs_idx_t n = sizes[c];
    const size_t b = (size_t)n * sizeof(double);
    double *dinv = xmalloc(b), *r = xmalloc(b), *x0 = xmalloc(b), *d0 = xmalloc(b);
    double *x = xmalloc(b), *d = xmalloc(b), *nan = xmalloc(b);
    for (gs_idx_t i = 0; i < n; ++i) {
      dinv[i] = 0.1 + gs_test_uniform(s);
      r[i] = 2.0 * gs_test_uniform(s) - 1.0;
      x0[i] = 2.0 * gs_test_uniform(s) - 1.0;
      d0[i] = 2.0 * gs_test_uniform(s) - 1.0;
      nan[i] = NAN;
    }
    double *d_dinv = to_dev(dinv, b), *d_r = to_dev(r, b), *d_x = dalloc(b), *d_d = dalloc(b);
    const double w = 0.5 + gs_test_uniform(s), c1 = gs_test_uniform(s), c2 = gs_test_uniform(s);
    /* Jacobi x = 0, Jacobi +=, Chebyshev first, Chebyshev next, Chebyshev first from x = 0 */
    for (int v = 0; v < 5; ++v) {
      const int jac = v < 2, fresh = v % 2 == 0, xzero = jac ? fresh : v == 4;
      CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_x, xzero ? nan : x0, b) == GS_SUCCESS);
      CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_d, !jac && fresh ? nan : d0, b) == GS_SUCCESS);
      if (jac) OK(gs_amg_jacobi_kernel(ctx->stream, n, w, d_dinv, d_r, d_x, fresh), "jacobi");
      else OK(gs_amg_cheb_kernel(ctx->stream, n, c1, c2, d_dinv, d_r, d_d, d_x,
                                 xzero ? 2 : fresh), "cheb");
      OK(gs_context_sync(ctx), "sync");
      to_host(x, d_x, b);
      to_host(d, d_d, b);
      int bad = 0;
      for (gs_idx_t i = 0; i < n && !bad; ++i) {
        double xr, dr = d0[i], bx, bd = 0.0;
        if (jac) {
          const double t = w * dinv[i] * r[i];
          xr = fresh ? t : x0[i] + t;
          bx = 2.0 * gam(4.0) * ((fresh ? 0.0 : fabs(x0[i])) + fabs(t));
        } else {
          const double md = (fresh ? 0.0 : fabs(c1 * d0[i])) + fabs(c2 * dinv[i] * r[i]);
          dr = fresh ? c2 * dinv[i] * r[i] : c1 * d0[i] + c2 * dinv[i] * r[i];
          xr = (xzero ? 0.0 : x0[i]) + dr;
          bd = 2.0 * gam(3.0) * md;
          bx = 2.0 * gam(4.0) * ((xzero ? 0.0 : fabs(x0[i])) + md);
        }
        if (!(fabs(x[i] - xr) <= bx) || !(fabs(d[i] - dr) <= bd)) {
          fprintf(stderr, "  %s: variant %d, n %d, i %d: x %.17g (host %.17g), d %.17g "
                  "(host %.17g)\n", label, v, (int)n, (int)i, x[i], xr, d[i], dr);
          bad = 1;
        }
      }
      CU_ASSERT(!bad);
    }
    gs_dfree(ctx, d_dinv);
    gs_dfree(ctx, d_r);
    gs_dfree(ctx, d_x);
    gs_dfree(ctx, d_d);
    free(dinv);
    free(r);
    free(x0);
    free(d0);
    free(x);
    free(d);
    free(nan);
  }
}

/* Allocation k of each phase failing, for every k until the phase succeeds: the status is out
 * of device memory, no output is left and no device memory stays allocated. */
static void test_allocation_failures(void)
{
  const char *label = "allocation failures";
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_gen_laplace(&A, 20, 17, 1, 5) == GS_SUCCESS);
  const gs_idx_t n = A->m;
  gs_amg_dcsr_t dA, dP, dR, dAP;
  gs_test_amg_upload(ctx, A, &dA);
  double *d_d = dalloc((size_t)n * sizeof(double)), *d_t = dalloc((size_t)n * sizeof(double));
  double *d_B = dalloc((size_t)n * sizeof(double));
  uint8_t *d_s = dalloc((size_t)A->nnz);
  int32_t *d_agg = dalloc((size_t)n * sizeof(int32_t)), naggs = 0;
  int rounds = 0;
  OK(gs_amg_diag_dev(ctx, n, dA.rp, dA.col, dA.val, d_d), "diag");
  OK(gs_amg_strength_dev(ctx, n, dA.rp, dA.col, dA.val, d_d, 0.08, d_s), "strength");
  OK(gs_amg_l1_diag_dev(ctx, n, dA.rp, dA.val, d_B), "l1 (B)");
  memset(&dP, 0, sizeof dP);
  for (int phase = 0; phase < 6; ++phase) {
    int done = 0;
    for (long k = 1; k <= 64 && !done; ++k) {
      const size_t base = gs_device_bytes_in_use(ctx);
      double *d_inv = NULL;
      int singular = 0;
      gs_test_dmalloc_fail_after(ctx, k);
      gs_status_t st = GS_ERR_INTERNAL;
      switch (phase) {
      case 0: st = gs_amg_aggregate_dev(ctx, n, dA.rp, dA.col, d_s, d_agg, &naggs, &rounds); break;
      case 1: st = gs_amg_tentative_dev(ctx, n, d_agg, naggs, d_B, d_t); break;
      case 2: st = gs_amg_smooth_p_dev(ctx, &dA, d_d, d_agg, d_t, naggs, 0.5, &dP); break;
      case 3: st = gs_amg_transpose_dev(ctx, &dP, &dR); break;
      case 4: st = gs_amg_spgemm_dev(ctx, &dA, &dP, &dAP); break;
      default: st = gs_amg_dense_inverse_dev(ctx, &dA, &d_inv, &singular); break;
      }
      gs_test_dmalloc_fail_after(ctx, 0);
      if (st == GS_SUCCESS) { /* outputs freed, except P: the phases after it use it */
        done = 1;
        if (phase == 3) gs_amg_dcsr_free(ctx, &dR);
        if (phase == 4) gs_amg_dcsr_free(ctx, &dAP);
        if (phase == 5) {
          CU_ASSERT_EQUAL(singular, 0);
          gs_dfree(ctx, d_inv);
        }
        if (phase != 2) CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
      } else {
        if (st != GS_ERR_DEVICE_MEMORY)
          fprintf(stderr, "  %s: phase %d, allocation %ld: %s\n", label, phase, k,
                  gs_last_error());
        CU_ASSERT_EQUAL(st, GS_ERR_DEVICE_MEMORY);
        CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
        CU_ASSERT(d_inv == NULL);
        if (phase == 2) CU_ASSERT(dP.rp == NULL && dP.col == NULL && dP.val == NULL);
        if (phase == 3) CU_ASSERT(dR.rp == NULL && dR.col == NULL && dR.val == NULL);
        if (phase == 4) CU_ASSERT(dAP.rp == NULL && dAP.col == NULL && dAP.val == NULL);
      }
    }
    CU_ASSERT_FATAL(done);
  }
  gs_amg_dcsr_free(ctx, &dP);
  gs_amg_dcsr_free(ctx, &dA);
  gs_dfree(ctx, d_d);
  gs_dfree(ctx, d_t);
  gs_dfree(ctx, d_B);
  gs_dfree(ctx, d_s);
  gs_dfree(ctx, d_agg);
  gs_csr_destroy(&A);
}

/* ---- near-null space of k vectors, nodes (precond/amg_nns_kernels.cu) ---------------------- */

/* A symmetric, diagonally dominant matrix of n rows (per_row entries a row on average). */
static gs_csr_t *nns_sym(gs_idx_t n, int per_row)
{
  gs_coo_t *C = NULL;
  double *rs = xmalloc((size_t)n * sizeof *rs);
  CU_ASSERT_FATAL(gs_coo_create(&C, n, n, (gs_off_t)n * (per_row + 1)) == GS_SUCCESS);
  for (gs_idx_t i = 0; i < n; ++i) rs[i] = 0.0;
  for (gs_idx_t i = 0; i < n; ++i)
    for (int e = 0; e < per_row / 2; ++e) {
      const gs_idx_t j = (gs_idx_t)(gs_test_next(rng()) % (uint64_t)n);
      if (j == i) continue;
      const double v = -(0.1 + gs_test_uniform(rng()));
      CU_ASSERT_FATAL(gs_coo_push(C, i, j, v) == GS_SUCCESS);
      CU_ASSERT_FATAL(gs_coo_push(C, j, i, v) == GS_SUCCESS);
      rs[i] -= v;
      rs[j] -= v;
    }
  for (gs_idx_t i = 0; i < n; ++i)
    CU_ASSERT_FATAL(gs_coo_push(C, i, i, rs[i] + 0.5 + gs_test_uniform(rng())) == GS_SUCCESS);
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
  gs_coo_destroy(&C);
  free(rs);
  return A;
}

/* One level of the near-null-space setup, each device phase from the host's inputs against the
 * host reference, bit for bit: the nodes (node_of from node_ptr; uniform ones when `uniform`),
 * the amalgamated matrix, the aggregates of the nodes expanded to the unknowns, the fit (T,
 * Bc, cptr, the largest k_J), the smoothed P of T. Returns 0 when the level does not coarsen;
 * else replaces *A, *B (n x k, packed) and the nodes (*nptr, *nn; NULL when one unknown a node)
 * by the next level's (the host's RAP). */
static int nns_level(gs_csr_t **pA, double **pB, int k, int32_t **pnptr, gs_idx_t *pnn,
                     int uniform, double theta, const char *label)
{
  const gs_csr_t *A = *pA;
  const gs_idx_t n = A->m;
  const size_t bn = (size_t)(n > 0 ? n : 1);
  gs_amg_dcsr_t dA;
  gs_test_amg_upload(ctx, A, &dA);
  double *d = xmalloc(bn * sizeof *d), *d_d = dalloc(bn * sizeof(double));
  gs_amg_diag_host(A, d);
  OK(gs_amg_diag_dev(ctx, n, dA.rp, dA.col, dA.val, d_d), "diag");
  int32_t *agg = xmalloc(bn * sizeof *agg), naggs = 0;
  int rounds = 0;
  /* the nodes and their aggregates */
  const int32_t *nptr = *pnptr;
  const gs_idx_t nn = nptr ? *pnn : n;
  {
    gs_csr_t *G = NULL;
    const gs_csr_t *Gh = A;
    if (nptr) {
      int32_t *d_nptr = dalloc(((size_t)nn + 1) * sizeof(int32_t));
      int32_t *d_nof = dalloc(bn * sizeof(int32_t)), *nof = xmalloc(bn * sizeof *nof);
      int32_t *want = xmalloc(bn * sizeof *want);
      for (gs_idx_t I = 0; I < nn; ++I)
        for (int32_t i = nptr[I]; i < nptr[I + 1]; ++i) want[i] = (int32_t)I;
      if (uniform) {
        const int K = (int)(n / nn);
        int32_t *got = xmalloc(((size_t)nn + 1) * sizeof *got);
        OK(gs_amg_nodes_uniform_dev(ctx, nn, K, d_nptr, d_nof), "uniform nodes");
        to_host(got, d_nptr, ((size_t)nn + 1) * sizeof *got);
        CU_ASSERT(same_bytes(got, nptr, (size_t)nn + 1, sizeof *got, 0, label, "node_ptr"));
        free(got);
      } else {
        CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_nptr, nptr, ((size_t)nn + 1) * 4) ==
                        GS_SUCCESS);
        OK(gs_amg_nodes_of_dev(ctx, nn, d_nptr, d_nof), "node_of");
      }
      to_host(nof, d_nof, (size_t)n * sizeof *nof);
      CU_ASSERT(same_bytes(nof, want, (size_t)n, sizeof *nof, 0, label, "node_of"));
      gs_amg_dcsr_t dAa;
      OK(gs_amg_amalgamate_dev(ctx, &dA, nn, d_nptr, d_nof, &dAa), "amalgamate");
      OK(gs_amg_amalgamate_host(A, nn, nptr, &G), "amalgamate (host)");
      gs_csr_t *Da = gs_test_amg_download(ctx, &dAa);
      CU_ASSERT(same_csr(Da, G, label, "amalgamated"));
      gs_csr_destroy(&Da);
      gs_amg_dcsr_free(ctx, &dAa);
      Gh = G;
      /* host aggregates of the nodes, expanded on the device */
      double *dg = xmalloc(((size_t)nn + 1) * sizeof *dg);
      uint8_t *s = xmalloc((size_t)G->nnz + 1);
      int32_t *an = xmalloc(((size_t)nn + 1) * sizeof *an), *d_an = dalloc(((size_t)nn + 1) * 4);
      gs_amg_diag_host(G, dg);
      gs_amg_strength_host(G, dg, theta, s);
      OK(gs_amg_aggregate_host(G, s, an, &naggs, &rounds), "aggregate (host)");
      for (gs_idx_t i = 0; i < n; ++i) want[i] = an[nof[i]];
      CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_an, an, ((size_t)nn + 1) * 4) == GS_SUCCESS);
      int32_t *d_agg = dalloc(bn * sizeof(int32_t));
      OK(gs_amg_expand_agg_dev(ctx, n, d_nof, d_an, d_agg), "expand");
      to_host(agg, d_agg, (size_t)n * sizeof *agg);
      CU_ASSERT(same_bytes(agg, want, (size_t)n, sizeof *agg, 0, label, "expanded aggregates"));
      gs_dfree(ctx, d_agg);
      gs_dfree(ctx, d_an);
      gs_dfree(ctx, d_nptr);
      gs_dfree(ctx, d_nof);
      free(nof);
      free(want);
      free(dg);
      free(s);
      free(an);
    } else {
      uint8_t *s = xmalloc((size_t)A->nnz + 1);
      gs_amg_strength_host(A, d, theta, s);
      OK(gs_amg_aggregate_host(A, s, agg, &naggs, &rounds), "aggregate (host)");
      free(s);
    }
    if (naggs == 0 || naggs >= Gh->m) {
      gs_csr_destroy(&G);
      gs_amg_dcsr_free(ctx, &dA);
      gs_dfree(ctx, d_d);
      free(d);
      free(agg);
      return 0;
    }
    gs_csr_destroy(&G);
  }
  /* fit */
  int32_t *d_agg = to_dev(agg, (size_t)n * sizeof *agg);
  double *d_B = to_dev(*pB, (size_t)n * (size_t)k * sizeof(double)), *d_Bc = NULL;
  int32_t *d_cptr = dalloc(((size_t)naggs + 1) * sizeof(int32_t));
  int32_t *cptr = xmalloc(((size_t)naggs + 1) * sizeof *cptr);
  int32_t *hcptr = xmalloc(((size_t)naggs + 1) * sizeof *hcptr);
  gs_amg_dcsr_t dT, dP;
  int kmax = -1;
  OK(gs_amg_fit_dev(ctx, n, k, d_B, d_agg, naggs, &dT, &d_Bc, d_cptr, &kmax), "fit");
  gs_csr_t *T = NULL, *P = NULL;
  double *Bc = NULL;
  OK(gs_amg_fit_host(n, k, *pB, n, agg, naggs, &T, &Bc, hcptr), "fit (host)");
  to_host(cptr, d_cptr, ((size_t)naggs + 1) * sizeof *cptr);
  CU_ASSERT(same_bytes(cptr, hcptr, (size_t)naggs + 1, sizeof *cptr, 0, label, "cptr"));
  int want_kmax = 0;
  for (int32_t J = 0; J < naggs; ++J)
    if (hcptr[J + 1] - hcptr[J] > want_kmax) want_kmax = hcptr[J + 1] - hcptr[J];
  CU_ASSERT_EQUAL(kmax, want_kmax);
  gs_csr_t *DT = gs_test_amg_download(ctx, &dT);
  CU_ASSERT(same_csr(DT, T, label, "tentative T"));
  gs_csr_destroy(&DT);
  const int32_t nc = hcptr[naggs];
  if (nc > 0) {
    double *got = xmalloc((size_t)nc * (size_t)k * sizeof *got);
    CU_ASSERT_FATAL(d_Bc != NULL);
    to_host(got, d_Bc, (size_t)nc * (size_t)k * sizeof *got);
    CU_ASSERT(same_bytes(got, Bc, (size_t)nc * (size_t)k, sizeof *got, 1, label, "Bc"));
    free(got);
  } else {
    CU_ASSERT(d_Bc == NULL);
  }
  int more = nc > 0 && nc < n;
  if (more) { /* smoothed P of T */
    const double omega = 0.37;
    OK(gs_amg_smooth_tp_dev(ctx, &dA, d_d, &dT, omega, &dP), "smoothed P of T");
    OK(gs_amg_smooth_tp_host(A, d, T, omega, &P), "smoothed P of T (host)");
    gs_csr_t *DP = gs_test_amg_download(ctx, &dP);
    CU_ASSERT(same_csr(DP, P, label, "P of T"));
    gs_csr_destroy(&DP);
    gs_amg_dcsr_free(ctx, &dP);
    gs_csr_t *Ac = NULL;
    OK(gs_amg_rap_host(A, P, &Ac), "rap (host)");
    gs_csr_destroy(pA);
    *pA = Ac;
    free(*pB);
    *pB = Bc;
    Bc = NULL;
    free(*pnptr);
    *pnptr = NULL;
    if (want_kmax > 1) {
      *pnptr = hcptr;
      hcptr = NULL;
      *pnn = naggs;
    }
  }
  fprintf(stderr, "  %s: %d unknowns, %d aggregates, %d coarse unknowns (k_J <= %d)\n", label,
          (int)n, (int)naggs, (int)nc, want_kmax);
  gs_csr_destroy(&T);
  gs_csr_destroy(&P);
  gs_amg_dcsr_free(ctx, &dT);
  gs_amg_dcsr_free(ctx, &dA);
  gs_dfree(ctx, d_d);
  gs_dfree(ctx, d_agg);
  gs_dfree(ctx, d_B);
  gs_dfree(ctx, d_Bc);
  gs_dfree(ctx, d_cptr);
  free(d);
  free(agg);
  free(cptr);
  free(hcptr);
  free(Bc);
  return more;
}

/* Up to four levels of A with B (n x k) over nodes of `block` unknowns. */
static void nns_levels(const gs_csr_t *A0, int block, int k, const double *B0, double theta,
                       const char *name)
{
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_csr_copy(&A, A0) == GS_SUCCESS);
  double *B = xmalloc((size_t)A->m * (size_t)k * sizeof *B);
  memcpy(B, B0, (size_t)A->m * (size_t)k * sizeof *B);
  int32_t *nptr = NULL;
  gs_idx_t nn = A->m;
  if (block > 1) {
    nn = A->m / block;
    nptr = xmalloc(((size_t)nn + 1) * sizeof *nptr);
    for (gs_idx_t I = 0; I <= nn; ++I) nptr[I] = (int32_t)(I * block);
  }
  for (int l = 0; l < 4; ++l) {
    char label[160];
    snprintf(label, sizeof label, "%s k=%d theta=%g level %d", name, k, theta, l);
    if (!nns_level(&A, &B, k, &nptr, &nn, l == 0 && block > 1, theta, label)) break;
  }
  free(B);
  free(nptr);
  gs_csr_destroy(&A);
}

/* Elasticity with its rigid-body modes (and more vectors, and ones), random matrices with
 * random vectors (k = 1 to 8, small aggregates that drop columns), uniform and variable nodes:
 * every phase bit for bit against the host, level after level. */
static void test_nns_phases(void)
{
  for (int c = 0; c < 2; ++c) {
    gs_csr_t *A = NULL;
    double *rbm = NULL;
    const gs_idx_t nx = c ? 40 : 9;
    CU_ASSERT_FATAL(gs_gen_elasticity(&A, nx, nx, 1e5, 0.3, &rbm) == GS_SUCCESS);
    char name[64];
    snprintf(name, sizeof name, "elasticity %dx%d", (int)nx, (int)nx);
    nns_levels(A, 2, 3, rbm, 0.0, name);
    nns_levels(A, 2, 3, rbm, 0.08, name);
    double *B = xmalloc((size_t)A->m * 8 * sizeof *B);
    memcpy(B, rbm, (size_t)A->m * 3 * sizeof *B);
    for (size_t x = (size_t)A->m * 3; x < (size_t)A->m * 8; ++x) B[x] = gs_test_uniform(rng());
    nns_levels(A, 2, 8, B, 0.0, name);
    for (gs_idx_t i = 0; i < A->m; ++i) B[i] = 1.0;
    nns_levels(A, 2, 1, B, 0.0, name);
    nns_levels(A, 1, 3, rbm, 0.0, name); /* unknowns aggregated one by one */
    free(B);
    free(rbm);
    gs_csr_destroy(&A);
  }
  for (int c = 0; c < 8; ++c) {
    const int k = 1 + c, block = 1 + c % 3;
    gs_csr_t *A = nns_sym(600 * block, 4 + 2 * (c % 4));
    double *B = xmalloc((size_t)A->m * (size_t)k * sizeof *B);
    for (size_t x = 0; x < (size_t)A->m * (size_t)k; ++x) B[x] = 2.0 * gs_test_uniform(rng()) - 1.0;
    char name[64];
    snprintf(name, sizeof name, "random %d, block %d", c, block);
    nns_levels(A, block, k, B, c % 2 ? 0.25 : 0.0, name);
    free(B);
    gs_csr_destroy(&A);
  }
  { /* variable nodes, empty ones among them: the amalgamated matrix and node_of */
    gs_csr_t *A = nns_sym(700, 6);
    int32_t *vp = xmalloc(((size_t)A->m + 2) * sizeof *vp);
    gs_idx_t nv = 0;
    vp[0] = 0;
    while (vp[nv] < A->m) {
      int sz = (int)(gs_test_next(rng()) % (GS_AMG_BLOCK_MAX + 1));
      if (vp[nv] + sz > A->m) sz = A->m - vp[nv];
      vp[nv + 1] = vp[nv] + sz;
      ++nv;
    }
    double *B = xmalloc((size_t)A->m * 2 * sizeof *B);
    for (size_t x = 0; x < (size_t)A->m * 2; ++x) B[x] = gs_test_uniform(rng());
    gs_idx_t nn = nv;
    nns_level(&A, &B, 2, &vp, &nn, 0, 0.0, "variable nodes");
    free(vp);
    free(B);
    gs_csr_destroy(&A);
  }
}

/* Allocation k of the fit, the amalgamation and the smoothed P of T fails, for every k: a
 * clean GS_ERR_DEVICE_MEMORY and nothing left allocated. */
static void test_nns_allocation_failures(void)
{
  const char *label = "near-null space allocation failures";
  gs_csr_t *A = NULL;
  double *rbm = NULL;
  CU_ASSERT_FATAL(gs_gen_elasticity(&A, 12, 12, 1e5, 0.3, &rbm) == GS_SUCCESS);
  const gs_idx_t n = A->m, nn = n / 2;
  gs_amg_dcsr_t dA, dAa, dT, dP;
  memset(&dT, 0, sizeof dT);
  gs_test_amg_upload(ctx, A, &dA);
  double *d_d = dalloc((size_t)n * sizeof(double)), *d_B = to_dev(rbm, (size_t)n * 3 * 8);
  int32_t *d_nptr = dalloc(((size_t)nn + 1) * 4), *d_nof = dalloc((size_t)n * 4);
  int32_t *d_agg = dalloc((size_t)n * 4), *d_cptr = NULL;
  OK(gs_amg_diag_dev(ctx, n, dA.rp, dA.col, dA.val, d_d), "diag");
  OK(gs_amg_nodes_uniform_dev(ctx, nn, 2, d_nptr, d_nof), "nodes");
  int32_t *agg = xmalloc((size_t)n * sizeof *agg), naggs = 0;
  for (gs_idx_t i = 0; i < n; ++i) agg[i] = (int32_t)(i / 2 / 9); /* aggregates of 9 nodes */
  naggs = agg[n - 1] + 1;
  CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_agg, agg, (size_t)n * 4) == GS_SUCCESS);
  d_cptr = dalloc(((size_t)naggs + 1) * 4);
  for (int phase = 0; phase < 3; ++phase) {
    int done = 0;
    for (long k = 1; k <= 64 && !done; ++k) {
      const size_t base = gs_device_bytes_in_use(ctx);
      double *d_Bc = NULL;
      int kmax = 0;
      gs_test_dmalloc_fail_after(ctx, k);
      gs_status_t st = GS_ERR_INTERNAL;
      switch (phase) {
      case 0: st = gs_amg_amalgamate_dev(ctx, &dA, nn, d_nptr, d_nof, &dAa); break;
      case 1: st = gs_amg_fit_dev(ctx, n, 3, d_B, d_agg, naggs, &dT, &d_Bc, d_cptr, &kmax); break;
      default: st = gs_amg_smooth_tp_dev(ctx, &dA, d_d, &dT, 0.5, &dP); break;
      }
      gs_test_dmalloc_fail_after(ctx, 0);
      if (st == GS_SUCCESS) {
        done = 1;
        if (phase == 0) gs_amg_dcsr_free(ctx, &dAa);
        if (phase == 1) gs_dfree(ctx, d_Bc); /* T stays: the smoothed P uses it */
        if (phase == 2) gs_amg_dcsr_free(ctx, &dP);
        if (phase != 1) CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
      } else {
        if (st != GS_ERR_DEVICE_MEMORY)
          fprintf(stderr, "  %s: phase %d, allocation %ld: %s\n", label, phase, k,
                  gs_last_error());
        CU_ASSERT_EQUAL(st, GS_ERR_DEVICE_MEMORY);
        CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
        CU_ASSERT(d_Bc == NULL);
      }
    }
    CU_ASSERT_FATAL(done);
  }
  gs_amg_dcsr_free(ctx, &dT);
  gs_amg_dcsr_free(ctx, &dA);
  gs_dfree(ctx, d_d);
  gs_dfree(ctx, d_B);
  gs_dfree(ctx, d_nptr);
  gs_dfree(ctx, d_nof);
  gs_dfree(ctx, d_agg);
  gs_dfree(ctx, d_cptr);
  free(agg);
  free(rbm);
  gs_csr_destroy(&A);
}

/* Sizes that disagree, an oversized dense inverse. */
static void test_refusals(void)
{
  gs_amg_dcsr_t A, B, C;
  memset(&A, 0, sizeof A);
  memset(&B, 0, sizeof B);
  A.m = 3;
  A.n = 4;
  B.m = 5;
  B.n = 2;
  CU_ASSERT_EQUAL(gs_amg_spgemm_dev(ctx, &A, &B, &C), GS_ERR_DIMENSION);
  double *inv = NULL;
  int singular = 0;
  A.m = A.n = GS_AMG_DENSE_MAX + 1;
  CU_ASSERT_EQUAL(gs_amg_dense_inverse_dev(ctx, &A, &inv, &singular), GS_ERR_INVALID_ARG);
  CU_ASSERT(inv == NULL);
}

int main(void)
{
  if (gs_device_count() > 0 && gs_context_create(&ctx, 0) != GS_SUCCESS) {
    fprintf(stderr, "context: %s\n", gs_last_error());
    return 1;
  }
  CU_TestInfo tests[] = {
      {"random matrices: every phase against the host, three levels", test_random},
      {"a zero diagonal refused with its row by host and device", test_zero_diagonal},
      {"Laplacians 1D, 2D, 3D: every phase against the host", test_laplacians},
      {"smoothed P: rows of every length class, boundaries included", test_long_rows},
      {"dense-ish matrices: every phase against the host", test_denseish},
      {"dense inverse: residual bound, singular graph Laplacians", test_dense_inverse},
      {"dense inverse: both paths, sizes 1 to 1500, pivoting, singular", test_dense_inverse_random},
      {"SPD matrices of GS_MATRIX_DIR: every phase against the host", test_real_spd},
      {"Jacobi and Chebyshev kernels against a host loop", test_cycle_kernels},
      {"allocation failures at every step of every phase", test_allocation_failures},
      {"refusals: dimensions, dense size", test_refusals},
      {"near-null space: nodes, amalgamation, fit, P of T against the host", test_nns_phases},
      {"near-null space: allocation failures of its phases", test_nns_allocation_failures},
      CU_TEST_INFO_NULL};
  const int rc = gs_test_main("amg_gpu", tests, 1);
  gs_context_destroy(&ctx);
  return rc;
}
