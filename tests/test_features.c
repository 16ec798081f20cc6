/* tests/test_features.c: numerical symmetry to a relative tolerance (issue 8, bug 5): the measured
 * asymmetry max |a_ij - a_ji| / max |a|, numerically_symmetric = square and asymmetry <=
 * GS_SYMMETRY_RTOL, what `gpusolve info` prints, and the solver choice that follows from it.
 * The row-length standard deviation from the exact integer formula (core/features.c), the same
 * whatever the row order and the thread count; every feature against a dense reference.
 * Host suite; the gs_solve_auto_method check needs a context, so it runs only with a GPU (without
 * one, the features it reads are checked instead). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/features.h"
#include "tests/testutil.h"

static char out[1 << 16], err[1 << 14];

static gs_features_t features_of(const gs_csr_t *A)
{
  gs_features_t f;
  CU_ASSERT_FATAL(gs_csr_features(A, &f) == GS_SUCCESS);
  return f;
}

/* A random symmetric, diagonally dominant (so SPD) n x n matrix: the shape of an FEM stiffness
 * matrix, exactly symmetric. Off-diagonal magnitudes in [0.5, 1) and diagonals at most about
 * 30 (n <= 200, density <= 0.12), so a relative perturbation rel of the off-diagonals gives an
 * asymmetry between about rel / 240 and rel: 1e-13 stays below GS_SYMMETRY_RTOL, 1e-6 above. */
static gs_csr_t *random_spd(uint64_t *rng, gs_idx_t n, double density)
{
  gs_coo_t *C = NULL;
  gs_csr_t *A = NULL;
  double *rowsum = calloc((size_t)n, sizeof *rowsum);
  CU_ASSERT_FATAL(rowsum != NULL);
  CU_ASSERT_FATAL(gs_coo_create(&C, n, n, 16) == GS_SUCCESS);
  for (gs_idx_t i = 0; i < n; ++i)
    for (gs_idx_t j = i + 1; j < n; ++j)
      if (gs_test_uniform(rng) < density) {
        double v = 0.5 + 0.5 * gs_test_uniform(rng); /* |v| in [0.5, 1): relative */
        if (gs_test_uniform(rng) < 0.5) v = -v;      /* perturbations stay comparable */
        CU_ASSERT_FATAL(gs_coo_push(C, i, j, v) == GS_SUCCESS);
        CU_ASSERT_FATAL(gs_coo_push(C, j, i, v) == GS_SUCCESS);
        rowsum[i] += fabs(v);
        rowsum[j] += fabs(v);
      }
  for (gs_idx_t i = 0; i < n; ++i)
    CU_ASSERT_FATAL(gs_coo_push(C, i, i, rowsum[i] + 1.0) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
  gs_coo_destroy(&C);
  free(rowsum);
  return A;
}

static double max_abs(const gs_csr_t *A)
{
  double m = 0.0;
  for (gs_idx_t p = 0; p < A->nnz; ++p)
    if (fabs(A->val[p]) > m) m = fabs(A->val[p]);
  return m;
}

/* Multiplies about half of the strictly upper entries by (1 + rel * s), |s| in [0.5, 1), at
 * least one of them; the mirrors stay. Returns the asymmetry this makes, computed from the
 * stored values: max |new - old| / max |a| (after the change). */
static double perturb_upper(uint64_t *rng, gs_csr_t *A, double rel)
{
  double dmax = 0.0;
  int done = 0;
  for (int pass = 0; !done && pass < 2; ++pass)
    for (gs_idx_t i = 0; i < A->m; ++i)
      for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) {
        if (A->col[p] <= i || (gs_test_uniform(rng) < 0.5 && pass == 0)) continue;
        double s = 0.5 + 0.5 * gs_test_uniform(rng);
        if (gs_test_uniform(rng) < 0.5) s = -s;
        double old = A->val[p];
        A->val[p] = old * (1.0 + rel * s);
        if (fabs(A->val[p] - old) > dmax) dmax = fabs(A->val[p] - old);
        done = 1;
        if (pass > 0) goto out; /* the fallback pass changes one entry only */
      }
out:
  CU_ASSERT_FATAL(done); /* the matrix has a strictly upper entry */
  return dmax / max_abs(A);
}

static void test_exact_symmetric(void)
{
  uint64_t rng = gs_test_seed() ^ 0x1111;
  gs_idx_t n = 20 + (gs_idx_t)(gs_test_uniform(&rng) * 150);
  gs_csr_t *A = random_spd(&rng, n, 0.05);
  gs_features_t f = features_of(A);
  CU_ASSERT_EQUAL(f.asymmetry, 0.0);
  CU_ASSERT(f.numerically_symmetric);
  CU_ASSERT(f.structurally_symmetric);
  CU_ASSERT(f.diagonal_positive);
  gs_csr_destroy(&A);

  const double a[] = {4, -1, 0, -1, 4, -1, 0, -1, 4}; /* hand-checked tridiagonal */
  A = gs_test_csr_from_dense(3, 3, a);
  f = features_of(A);
  CU_ASSERT_EQUAL(f.asymmetry, 0.0);
  CU_ASSERT(f.numerically_symmetric);
  A->val[1] = -3.0; /* a_01 = -3, a_10 = -1: |(-3) - (-1)| / 4 = 0.5 */
  f = features_of(A);
  CU_ASSERT_DOUBLE_EQUAL(f.asymmetry, 0.5, 1e-15);
  CU_ASSERT(!f.numerically_symmetric);
  CU_ASSERT(f.structurally_symmetric);
  gs_csr_destroy(&A);

  const double s[] = {0, 2, -2, 0}; /* skew-symmetric: the largest asymmetry, 2 */
  A = gs_test_csr_from_dense(2, 2, s);
  f = features_of(A);
  CU_ASSERT_DOUBLE_EQUAL(f.asymmetry, 2.0, 0.0);
  CU_ASSERT(!f.numerically_symmetric);
  gs_csr_destroy(&A);
}

/* Symmetric to rounding (relative 1e-13) counts as symmetric; 1e-6 does not. The measured value
 * matches the perturbation applied, in sorted and unsorted rows alike. */
static void test_near_symmetric(void)
{
  uint64_t rng = gs_test_seed() ^ 0x2222;
  const double rels[] = {1e-13, 1e-6};
  for (int k = 0; k < 2; ++k)
    for (int rep = 0; rep < 5; ++rep) {
      gs_idx_t n = 2 + (gs_idx_t)(gs_test_uniform(&rng) * 200);
      gs_csr_t *A = random_spd(&rng, n, 0.02 + 0.1 * gs_test_uniform(&rng));
      if (A->nnz == n) { /* diagonal only: nothing to perturb, add a coupled pair */
        gs_csr_destroy(&A);
        const double d[] = {3, 1, 1, 3};
        A = gs_test_csr_from_dense(2, 2, d);
      }
      double expected = perturb_upper(&rng, A, rels[k]);
      gs_features_t f = features_of(A);
      CU_ASSERT(expected > 0.0);
      CU_ASSERT(f.asymmetry >= expected / 2 && f.asymmetry <= expected * 2);
      if (!(f.asymmetry >= expected / 2 && f.asymmetry <= expected * 2))
        fprintf(stderr, "  rel %g n %d: asymmetry %g, expected %g\n", rels[k], (int)A->m,
                f.asymmetry, expected);
      CU_ASSERT(f.structurally_symmetric);
      CU_ASSERT_EQUAL(f.numerically_symmetric, k == 0);
      CU_ASSERT(f.diagonal_positive);

      /* the same matrix with one row's entries reversed (unsorted): same answer */
      for (gs_idx_t i = 0; i < A->m; ++i) {
        gs_off_t b = A->row_ptr[i], e = A->row_ptr[i + 1] - 1;
        if (e - b < 1) continue;
        for (; b < e; ++b, --e) {
          gs_idx_t tc = A->col[b];
          A->col[b] = A->col[e];
          A->col[e] = tc;
          double tv = A->val[b];
          A->val[b] = A->val[e];
          A->val[e] = tv;
        }
        break;
      }
      gs_features_t g = features_of(A);
      CU_ASSERT_EQUAL(g.asymmetry, f.asymmetry);
      CU_ASSERT_EQUAL(g.numerically_symmetric, f.numerically_symmetric);
      gs_csr_destroy(&A);
    }
}

/* An explicit entry whose mirror is absent: within the tolerance when tiny (the pattern differs,
 * the values do not), nonsymmetric when large; an explicit zero costs nothing. Both directions
 * (the missing mirror above or below the diagonal). */
static void test_missing_mirror(void)
{
  const double a[] = {4, -1, 0, -1, 4, -1, 0, -1, 4};
  const double vals[] = {1e-17 * 4, 0.5, 0.0};
  for (int lower = 0; lower < 2; ++lower)
    for (int k = 0; k < 3; ++k) {
      double d[9];
      memcpy(d, a, sizeof d);
      gs_csr_t *A = gs_test_csr_from_dense(3, 3, d);
      gs_coo_t *C = NULL;
      gs_csr_t *B = NULL;
      CU_ASSERT_FATAL(gs_csr_to_coo(&C, A) == GS_SUCCESS);
      CU_ASSERT_FATAL(gs_coo_push(C, lower ? 2 : 0, lower ? 0 : 2, vals[k]) == GS_SUCCESS);
      CU_ASSERT_FATAL(gs_coo_to_csr(&B, C) == GS_SUCCESS);
      CU_ASSERT_EQUAL(B->nnz, 8);
      gs_features_t f = features_of(B);
      CU_ASSERT(!f.structurally_symmetric);
      CU_ASSERT_DOUBLE_EQUAL(f.asymmetry, vals[k] / 4.0, 1e-15 * vals[k]);
      CU_ASSERT_EQUAL(f.numerically_symmetric, k != 1);
      gs_coo_destroy(&C);
      gs_csr_destroy(&A);
      gs_csr_destroy(&B);
    }
}

static void test_non_square_and_zero(void)
{
  const double b[] = {2, 0, 1, 0, 3, 0}; /* 2 x 3 */
  gs_csr_t *A = gs_test_csr_from_dense(2, 3, b);
  gs_features_t f = features_of(A);
  CU_ASSERT(isinf(f.asymmetry) && f.asymmetry > 0);
  CU_ASSERT(!f.numerically_symmetric);
  CU_ASSERT(!f.structurally_symmetric);
  gs_csr_destroy(&A);

  /* all zero: no entries at all, and explicit zeros only (one without a mirror) */
  CU_ASSERT_FATAL(gs_csr_create(&A, 4, 4, 0) == GS_SUCCESS);
  f = features_of(A);
  CU_ASSERT_EQUAL(f.asymmetry, 0.0);
  CU_ASSERT(f.numerically_symmetric);
  CU_ASSERT(f.structurally_symmetric);
  gs_csr_destroy(&A);
  gs_coo_t *C = NULL;
  CU_ASSERT_FATAL(gs_coo_create(&C, 3, 3, 4) == GS_SUCCESS);
  CU_ASSERT(gs_coo_push(C, 0, 0, 0.0) == GS_SUCCESS);
  CU_ASSERT(gs_coo_push(C, 0, 2, 0.0) == GS_SUCCESS);
  CU_ASSERT(gs_coo_push(C, 1, 1, 0.0) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
  f = features_of(A);
  CU_ASSERT_EQUAL(f.asymmetry, 0.0);
  CU_ASSERT(f.numerically_symmetric);
  CU_ASSERT(!f.structurally_symmetric);
  gs_coo_destroy(&C);
  gs_csr_destroy(&A);

  /* 0 x 0: square, nothing to compare */
  CU_ASSERT_FATAL(gs_csr_create(&A, 0, 0, 0) == GS_SUCCESS);
  f = features_of(A);
  CU_ASSERT_EQUAL(f.asymmetry, 0.0);
  CU_ASSERT(f.numerically_symmetric);
  gs_csr_destroy(&A);
}

/* Writes A to a new .mtx file in this process's temporary folder; path receives its name. */
static void write_temp(const gs_csr_t *A, char *path, size_t size)
{
  static int count;
  char name[64];
  snprintf(name, sizeof name, "features_%d.mtx", count++);
  CU_ASSERT_FATAL((size_t)snprintf(path, size, "%s", gs_test_tmpfile(name)) < size);
  CU_ASSERT_FATAL(gs_mm_write_csr(path, A) == GS_SUCCESS);
}

static double json_num_of(const char *doc, const char *key)
{
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\":", key);
  const char *p = strstr(doc, pat);
  return p ? strtod(p + strlen(pat), NULL) : -1.0;
}

static void test_cli_info_reports_asymmetry(void)
{
  uint64_t rng = gs_test_seed() ^ 0x3333;
  gs_csr_t *A = random_spd(&rng, 60, 0.1);
  char path[4608], args[4800];

  write_temp(A, path, sizeof path); /* exact */
  snprintf(args, sizeof args, "info %s", path);
  CU_ASSERT_EQUAL(gs_test_cli(args, out, sizeof out, err, sizeof err), 0);
  CU_ASSERT(strstr(out, "symmetric              yes\n") != NULL);
  snprintf(args, sizeof args, "info %s --json", path);
  CU_ASSERT_EQUAL(gs_test_cli(args, out, sizeof out, err, sizeof err), 0);
  CU_ASSERT(strstr(out, "\"asymmetry\":0,") != NULL);
  unlink(path);

  double expected = perturb_upper(&rng, A, 1e-13); /* symmetric to rounding */
  write_temp(A, path, sizeof path);
  snprintf(args, sizeof args, "info %s", path);
  CU_ASSERT_EQUAL(gs_test_cli(args, out, sizeof out, err, sizeof err), 0);
  CU_ASSERT(strstr(out, "symmetric              yes (symmetric to ") != NULL);
  snprintf(args, sizeof args, "info %s --json", path);
  CU_ASSERT_EQUAL(gs_test_cli(args, out, sizeof out, err, sizeof err), 0);
  double a = json_num_of(out, "asymmetry");
  CU_ASSERT(a >= expected / 2 && a <= expected * 2);
  CU_ASSERT(strstr(out, "\"numerically_symmetric\":true") != NULL);
  CU_ASSERT(strstr(out, "\"structurally_symmetric\":true") != NULL);
  unlink(path);

  perturb_upper(&rng, A, 0.5); /* nonsymmetric, same pattern */
  write_temp(A, path, sizeof path);
  snprintf(args, sizeof args, "info %s", path);
  CU_ASSERT_EQUAL(gs_test_cli(args, out, sizeof out, err, sizeof err), 0);
  CU_ASSERT(strstr(out, "symmetric              pattern only (asymmetry ") != NULL);
  unlink(path);
  gs_csr_destroy(&A);

  const double r[] = {1, 2, 0, 3, 4, 5}; /* 2 x 3: no symmetric line, asymmetry null */
  A = gs_test_csr_from_dense(2, 3, r);
  write_temp(A, path, sizeof path);
  snprintf(args, sizeof args, "info %s --json", path);
  CU_ASSERT_EQUAL(gs_test_cli(args, out, sizeof out, err, sizeof err), 0);
  CU_ASSERT(strstr(out, "\"asymmetry\":null") != NULL);
  snprintf(args, sizeof args, "info %s", path);
  CU_ASSERT_EQUAL(gs_test_cli(args, out, sizeof out, err, sizeof err), 0);
  CU_ASSERT(strstr(out, "symmetric   ") == NULL);
  unlink(path);
  gs_csr_destroy(&A);
}

/* A near-symmetric matrix with a positive diagonal gets CG from `--solver auto`. The method is
 * chosen from a gs_matrix_t, which needs a context and so a GPU: without one, the two features
 * gs_solve_auto_method reads are checked instead. */
static void test_auto_method_near_symmetric(void)
{
  uint64_t rng = gs_test_seed() ^ 0x4444;
  gs_csr_t *A = random_spd(&rng, 80, 0.08);
  perturb_upper(&rng, A, 1e-12);
  gs_features_t f = features_of(A);
  CU_ASSERT(f.numerically_symmetric && f.diagonal_positive);
  if (gs_device_count() > 0) {
    gs_context_t *ctx = NULL;
    gs_matrix_t *M = NULL;
    CU_ASSERT_FATAL(gs_context_create(&ctx, 0) == GS_SUCCESS);
    CU_ASSERT_FATAL(gs_matrix_create(&M, ctx, A) == GS_SUCCESS);
    CU_ASSERT_EQUAL(gs_solve_auto_method(M), GS_SOLVER_CG);
    gs_matrix_destroy(&M);
    perturb_upper(&rng, A, 1e-3);
    CU_ASSERT_FATAL(gs_matrix_create(&M, ctx, A) == GS_SUCCESS);
    CU_ASSERT_EQUAL(gs_solve_auto_method(M), GS_SOLVER_BICGSTAB);
    gs_matrix_destroy(&M);
    gs_context_destroy(&ctx);
  }
  gs_csr_destroy(&A);
}

/* ---- exactness: the row statistics from integers (core/features.c) ------------------------ */

/* sqrt(m * sum len^2 - nnz^2) / m with the integers formed here (small enough for 64 bits). */
static double std_of_lengths(const int *len, gs_idx_t m)
{
  uint64_t nz = 0, sq = 0;
  for (gs_idx_t i = 0; i < m; ++i) {
    nz += (uint64_t)len[i];
    sq += (uint64_t)len[i] * (uint64_t)len[i];
  }
  return sqrt((double)((uint64_t)m * sq - nz * nz)) / (double)m;
}

static void test_row_std_exact(void)
{
  uint64_t rng = gs_test_seed() ^ 0x5555;
  /* lengths 1 and 3 alternating: mean 2, standard deviation exactly 1 */
  int len[600];
  for (int i = 0; i < 600; ++i) len[i] = i % 2 ? 3 : 1;
  gs_csr_t *A = gs_test_csr_from_lengths(&rng, len, 600, 50);
  gs_features_t f = features_of(A);
  CU_ASSERT_EQUAL(f.row_mean, 2.0);
  CU_ASSERT_EQUAL(f.row_std, 1.0);
  gs_csr_destroy(&A);
  for (int rep = 0; rep < 20; ++rep) {
    const gs_idx_t m = 1 + (gs_idx_t)(gs_test_uniform(&rng) * 599), n = 1 + rep * 10;
    for (gs_idx_t i = 0; i < m; ++i) /* some empty, some long */
      len[i] = gs_test_uniform(&rng) < 0.2 ? 0 : (int)(gs_test_uniform(&rng) * (rep + 2) * 5);
    A = gs_test_csr_from_lengths(&rng, len, m, n);
    f = features_of(A);
    int lmax = 0, lmin = INT32_MAX, empty = 0;
    double mean = 0.0, ss = 0.0;
    for (gs_idx_t i = 0; i < m; ++i) {
      const int l = (int)(A->row_ptr[i + 1] - A->row_ptr[i]); /* merged at len >= n */
      len[i] = l;
      lmax = l > lmax ? l : lmax;
      lmin = l < lmin ? l : lmin;
      empty += l == 0;
      mean += l;
    }
    mean /= m;
    for (gs_idx_t i = 0; i < m; ++i) ss += (len[i] - mean) * (len[i] - mean);
    CU_ASSERT_EQUAL(f.row_max, lmax);
    CU_ASSERT_EQUAL(f.row_min, lmin);
    CU_ASSERT_EQUAL(f.empty_rows, empty);
    CU_ASSERT_EQUAL(f.row_mean, (double)A->nnz / m);
    CU_ASSERT_EQUAL(f.row_std, std_of_lengths(len, m)); /* the documented formula, exactly */
    CU_ASSERT_DOUBLE_EQUAL(f.row_std, sqrt(ss / m), 1e-12 * (1.0 + sqrt(ss / m)));

    /* the rows in reverse order: the same statistics, bit for bit */
    gs_csr_t *R = NULL;
    CU_ASSERT_FATAL(gs_csr_create(&R, m, A->n, A->nnz) == GS_SUCCESS);
    R->row_ptr[0] = 0;
    for (gs_idx_t i = 0; i < m; ++i) {
      const gs_idx_t src = m - 1 - i;
      const gs_off_t b = A->row_ptr[src], l = A->row_ptr[src + 1] - b;
      memcpy(R->col + R->row_ptr[i], A->col + b, (size_t)l * sizeof *R->col);
      memcpy(R->val + R->row_ptr[i], A->val + b, (size_t)l * sizeof *R->val);
      R->row_ptr[i + 1] = R->row_ptr[i] + l;
    }
    gs_features_t g = features_of(R);
    CU_ASSERT(memcmp(&g.row_mean, &f.row_mean, sizeof f.row_mean) == 0);
    CU_ASSERT(memcmp(&g.row_std, &f.row_std, sizeof f.row_std) == 0);
    CU_ASSERT_EQUAL(g.row_max, f.row_max);
    CU_ASSERT_EQUAL(g.row_min, f.row_min);
    gs_csr_destroy(&R);
    gs_csr_destroy(&A);
  }
}

/* The 128-bit sum of squares and the finishing formula beyond 64 bits. */
static void test_sumsq_wide(void)
{
  uint64_t rng = gs_test_seed() ^ 0x6666;
  __extension__ typedef unsigned __int128 u128;
  uint64_t hi = 0, lo = 0;
  u128 ref = 0;
  for (int k = 0; k < 1000; ++k) {
    const uint64_t v = gs_test_next(&rng) >> (1 + k % 40); /* < 2^63 */
    gs_sumsq_add(&hi, &lo, v);
    ref += (u128)v * v;
  }
  CU_ASSERT_EQUAL(hi, (uint64_t)(ref >> 64));
  CU_ASSERT_EQUAL(lo, (uint64_t)ref);

  /* rows of 2^40, 2^40 and 0 entries: sum len^2 = 2^81, m sum - nnz^2 = 2^81, std = 2^40.5 / 3 */
  gs_features_raw_t r;
  memset(&r, 0, sizeof r);
  r.m = 3;
  r.n = 7;
  r.nnz = (gs_off_t)1 << 41;
  r.row_max = (gs_off_t)1 << 40;
  gs_sumsq_add(&r.sumsq_hi, &r.sumsq_lo, (uint64_t)1 << 40);
  gs_sumsq_add(&r.sumsq_hi, &r.sumsq_lo, (uint64_t)1 << 40);
  CU_ASSERT_EQUAL(r.sumsq_hi, (uint64_t)1 << 17);
  CU_ASSERT_EQUAL(r.sumsq_lo, 0);
  gs_features_t f;
  gs_features_finish(&r, &f);
  CU_ASSERT_EQUAL(f.row_std, sqrt(ldexp(1.0, 81)) / 3.0);
  CU_ASSERT_DOUBLE_EQUAL(f.row_std, ldexp(sqrt(2.0), 40) / 3.0, 1e-15 * ldexp(1.0, 40));
  CU_ASSERT(isinf(f.asymmetry)); /* not square */
}

/* ---- every feature against a dense reference ---------------------------------------------- */

static void dense_check(const gs_csr_t *A, const char *label)
{
  const gs_idx_t m = A->m, n = A->n;
  double *d = calloc((size_t)m * (size_t)n + 1, sizeof *d);
  unsigned char *has = calloc((size_t)m * (size_t)n + 1, 1), *diag = calloc((size_t)(m + n), 1);
  CU_ASSERT_FATAL(d && has && diag);
  for (gs_idx_t i = 0; i < m; ++i)
    for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) {
      d[(size_t)i * n + A->col[p]] = A->val[p];
      has[(size_t)i * n + A->col[p]] = 1;
      diag[A->col[p] - i + m - 1] = 1;
    }
  gs_idx_t ndiag = 0;
  for (gs_idx_t k = 0; k < m + n - 1; ++k) ndiag += diag[k];
  gs_features_t f = features_of(A);
  CU_ASSERT_EQUAL(f.diagonals, ndiag);
  CU_ASSERT_EQUAL(f.nnz, A->nnz);
  if (m == n) {
    double amax = 0.0, dmax = 0.0;
    int pattern = 1, full = 1, pos = 1, finite = 1;
    for (gs_idx_t i = 0; i < n; ++i) {
      full &= has[(size_t)i * n + i] && d[(size_t)i * n + i] != 0.0;
      pos &= has[(size_t)i * n + i] && d[(size_t)i * n + i] > 0.0;
      for (gs_idx_t j = 0; j < n; ++j) {
        if (!has[(size_t)i * n + j]) continue;
        const double a = d[(size_t)i * n + j];
        if (!isfinite(a)) finite = 0;
        else if (fabs(a) > amax) amax = fabs(a);
        pattern &= has[(size_t)j * n + i];
        if (fabs(a - d[(size_t)j * n + i]) > dmax) dmax = fabs(a - d[(size_t)j * n + i]);
      }
    }
    const double asym = !finite ? INFINITY : amax > 0.0 ? dmax / amax : 0.0;
    CU_ASSERT_EQUAL(f.structurally_symmetric, pattern);
    CU_ASSERT_EQUAL(f.diagonal_full, full);
    CU_ASSERT_EQUAL(f.diagonal_positive, pos);
    CU_ASSERT(memcmp(&f.asymmetry, &asym, sizeof asym) == 0);
    if (memcmp(&f.asymmetry, &asym, sizeof asym) != 0 || f.diagonals != ndiag)
      fprintf(stderr, "\n  %s: asymmetry %g (want %g), diagonals %d (want %d)\n", label,
              f.asymmetry, asym, (int)f.diagonals, (int)ndiag);
  }
  free(d);
  free(has);
  free(diag);
}

static void test_dense_reference(void)
{
  uint64_t rng = gs_test_seed() ^ 0x7777;
  char label[64];
  for (int rep = 0; rep < 40; ++rep) {
    const gs_idx_t m = 1 + (gs_idx_t)(gs_test_uniform(&rng) * 120);
    const gs_idx_t n = rep % 2 ? m : 1 + (gs_idx_t)(gs_test_uniform(&rng) * 120);
    gs_csr_t *A = rep % 4 == 1 ? random_spd(&rng, m, 0.05 + 0.1 * gs_test_uniform(&rng))
                               : gs_test_random_csr(&rng, m, n, 0.1 * gs_test_uniform(&rng));
    if (rep % 5 == 0) A = gs_test_empty_rows(A, 3);
    CU_ASSERT_FATAL(A != NULL);
    if (rep % 7 == 3 && A->nnz > 0) A->val[A->nnz / 2] = rep % 2 ? NAN : -INFINITY;
    snprintf(label, sizeof label, "random %d x %d", (int)A->m, (int)A->n);
    dense_check(A, label);
    gs_csr_destroy(&A);
  }
}

/* A matrix of more than 2^20 entries is cut into shares for several threads: any thread count
 * gives the same struct, and the values are the stencil's. */
static void test_threads_same(void)
{
  if (gs_test_quick()) return; /* a 1.7M-entry matrix: too slow under valgrind */
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_gen_laplace(&A, 40, 40, 40, 27) == GS_SUCCESS);
  CU_ASSERT_FATAL(A->nnz >= (gs_off_t)1 << 20);
  gs_off_t p = A->row_ptr[1000];
  while (A->col[p] == 1000) ++p;
  A->val[p] *= 1.0 + 1e-9; /* one asymmetric off-diagonal entry, seen by one share */
  const int saved = gs_mm_threads();
  gs_features_t f[4]; /* filled in place: memcmp sees the padding too, zero */
  const int counts[4] = {1, 2, 3, 7};
  for (int k = 0; k < 4; ++k) {
    gs_mm_set_threads(counts[k]);
    CU_ASSERT_FATAL(gs_csr_features(A, &f[k]) == GS_SUCCESS);
  }
  gs_mm_set_threads(saved);
  for (int k = 1; k < 4; ++k) CU_ASSERT(memcmp(&f[0], &f[k], sizeof f[0]) == 0);
  CU_ASSERT_EQUAL(f[0].diagonals, 27);
  CU_ASSERT_EQUAL(f[0].row_max, 27);
  CU_ASSERT_EQUAL(f[0].row_min, 8);
  CU_ASSERT(f[0].structurally_symmetric && f[0].diagonal_positive);
  CU_ASSERT(f[0].asymmetry > 0.0 && f[0].asymmetry < 1e-9);
  gs_csr_destroy(&A);
}

int main(void)
{
  CU_TestInfo tests[] = {
    {"exact symmetric: asymmetry 0", test_exact_symmetric},
    {"near-symmetric: measured, within tolerance or not", test_near_symmetric},
    {"missing mirror: tiny, large, explicit zero", test_missing_mirror},
    {"non-square and all-zero", test_non_square_and_zero},
    {"gpusolve info reports the asymmetry", test_cli_info_reports_asymmetry},
    {"auto method picks CG when symmetric to rounding", test_auto_method_near_symmetric},
    {"row_std from the exact integer formula, any row order", test_row_std_exact},
    {"128-bit sum of squares", test_sumsq_wide},
    {"every feature against a dense reference", test_dense_reference},
    {"any thread count: the same features", test_threads_same},
    CU_TEST_INFO_NULL};
  return gs_test_main("features", tests, 0);
}
