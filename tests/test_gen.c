/* tests/test_gen.c: the synthetic matrix generators (io/gen.c): Table 2 nonzero counts and the
 * Laplacians' structure (Bell & Garland, SC09), normal-band columns (Figure 7 of Steinberger et
 * al., ICS 2017), Pareto rows (Figure 9 of Bell & Garland), uniform random rows, power-law
 * (scale-free graph) rows and columns, convection-diffusion, 2D elasticity, seeds and errors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/mm_internal.h"
#include "tests/testutil.h"

/* ---- helpers ------------------------------------------------------------------------------ */

/* Structure of a generated CSR: sizes, row_ptr, strictly increasing in-range columns, finite
 * values. One assertion per matrix, so a broken 26M-entry matrix does not print 26M lines. */
static int rows_ok(const gs_csr_t *A, gs_idx_t m, gs_idx_t n)
{
  if (!A || A->m != m || A->n != n || A->nnz < 0) return 0;
  if (A->row_ptr[0] != 0 || A->row_ptr[m] != A->nnz) return 0;
  for (gs_idx_t i = 0; i < m; ++i) {
    const gs_off_t b = A->row_ptr[i], e = A->row_ptr[i + 1];
    if (e < b) return 0;
    for (gs_off_t p = b; p < e; ++p) {
      if (A->col[p] < 0 || A->col[p] >= n) return 0;
      if (p > b && A->col[p] <= A->col[p - 1]) return 0;
      if (!isfinite(A->val[p])) return 0;
    }
  }
  return 1;
}

/* Values of the random generators lie in [-1, 1). */
static int values_in_unit(const gs_csr_t *A)
{
  for (gs_idx_t p = 0; p < A->nnz; ++p)
    if (!(A->val[p] >= -1.0 && A->val[p] < 1.0)) return 0;
  return 1;
}

static int cmp_idx_desc(const void *a, const void *b)
{
  const gs_idx_t x = *(const gs_idx_t *)a, y = *(const gs_idx_t *)b;
  return (x < y) - (x > y);
}

static int same_csr(const gs_csr_t *A, const gs_csr_t *B)
{
  if (A->m != B->m || A->n != B->n || A->nnz != B->nnz) return 0;
  return memcmp(A->row_ptr, B->row_ptr, ((size_t)A->m + 1) * sizeof *A->row_ptr) == 0 &&
         memcmp(A->col, B->col, (size_t)A->nnz * sizeof *A->col) == 0 &&
         memcmp(A->val, B->val, (size_t)A->nnz * sizeof *A->val) == 0;
}

/* Every row has exactly k entries. */
static int rows_have(const gs_csr_t *A, gs_idx_t k)
{
  for (gs_idx_t i = 0; i < A->m; ++i)
    if (A->row_ptr[i + 1] - A->row_ptr[i] != k) return 0;
  return 1;
}

/* Closed-form nonzero count of a Laplacian stencil on nx x ny x nz (Table 2's counts follow). */
static long long laplace_nnz(long long nx, long long ny, long long nz, int stencil)
{
  if (stencil == 9 || stencil == 27) return (3 * nx - 2) * (3 * ny - 2) * (3 * nz - 2);
  const long long N = nx * ny * nz;
  return N + 2 * ((nx - 1) * ny * nz + nx * (ny - 1) * nz + nx * ny * (nz - 1));
}

static gs_csr_t *laplace(gs_idx_t nx, gs_idx_t ny, gs_idx_t nz, int stencil)
{
  gs_csr_t *A = NULL;
  gs_status_t st = gs_gen_laplace(&A, nx, ny, nz, stencil);
  CU_ASSERT_EQUAL(st, GS_SUCCESS);
  if (st != GS_SUCCESS) printf("\n  laplace %d on %dx%dx%d: %s\n", stencil, nx, ny, nz,
                               gs_last_error());
  return A;
}

static void check_laplace_count(gs_idx_t nx, gs_idx_t ny, gs_idx_t nz, int stencil,
                                long long expect)
{
  gs_csr_t *A = laplace(nx, ny, nz, stencil);
  CU_ASSERT_PTR_NOT_NULL_FATAL(A);
  if ((long long)A->nnz != expect)
    printf("\n  %d-point on %d x %d x %d: %lld nonzeros, expected %lld\n", stencil, nx, ny, nz,
           (long long)A->nnz, expect);
  CU_ASSERT_EQUAL((long long)A->nnz, expect);
  CU_ASSERT_EQUAL((long long)A->m, (long long)nx * ny * nz);
  CU_ASSERT(rows_ok(A, A->m, A->m));
  gs_csr_destroy(&A);
}

/* ---- Laplacians --------------------------------------------------------------------------- */

/* Table 2 of Bell & Garland, SC09, exactly; the closed forms on small grids always. */
static void test_laplace_counts(void)
{
  /* the closed forms against hand-counted small cases */
  CU_ASSERT_EQUAL(laplace_nnz(1000000, 1, 1, 3), 2999998);
  CU_ASSERT_EQUAL(laplace_nnz(1000, 1000, 1, 5), 4996000);
  CU_ASSERT_EQUAL(laplace_nnz(100, 100, 100, 7), 6940000);
  CU_ASSERT_EQUAL(laplace_nnz(1000, 1000, 1, 9), 8988004);
  CU_ASSERT_EQUAL(laplace_nnz(100, 100, 100, 27), 26463592);
  CU_ASSERT_EQUAL(laplace_nnz(30, 20, 1, 5), 5 * 30 * 20 - 2 * 30 - 2 * 20);

  check_laplace_count(1, 1, 1, 3, 1);
  check_laplace_count(2, 1, 1, 3, 4);
  check_laplace_count(1000, 1, 1, 3, 3 * 1000 - 2);
  check_laplace_count(30, 20, 1, 5, 5 * 30 * 20 - 2 * 30 - 2 * 20);
  check_laplace_count(1, 7, 1, 5, 3 * 7 - 2);
  check_laplace_count(7, 8, 9, 7, 7 * 7 * 8 * 9 - 2 * (7 * 8 + 8 * 9 + 7 * 9));
  check_laplace_count(5, 6, 1, 7, laplace_nnz(5, 6, 1, 7));
  check_laplace_count(30, 20, 1, 9, (3 * 30 - 2) * (3 * 20 - 2));
  check_laplace_count(7, 8, 9, 27, (3 * 7 - 2) * (3 * 8 - 2) * (3 * 9 - 2));
  check_laplace_count(2, 2, 2, 27, 64); /* every pair of the 8 points is a neighbour */

  if (gs_test_quick()) return; /* valgrind: the big grids take too long */
  check_laplace_count(1000000, 1, 1, 3, 2999998);
  check_laplace_count(1000, 1000, 1, 5, 4996000);
  check_laplace_count(100, 100, 100, 7, 6940000);
  check_laplace_count(1000, 1000, 1, 9, 8988004);
  check_laplace_count(100, 100, 100, 27, 26463592);
}

/* Against a dense brute-force construction: a_ij = stencil - 1 on the diagonal, -1 where grid
 * points i != j are neighbours (axis neighbours for 3/5/7, the full 3^d box for 9/27). */
static void check_laplace_dense(gs_idx_t nx, gs_idx_t ny, gs_idx_t nz, int stencil)
{
  gs_csr_t *A = laplace(nx, ny, nz, stencil);
  CU_ASSERT_PTR_NOT_NULL_FATAL(A);
  const int N = nx * ny * nz;
  const int full = stencil == 9 || stencil == 27;
  double *D = calloc((size_t)N * N, sizeof *D);
  CU_ASSERT_PTR_NOT_NULL_FATAL(D);
  for (int i = 0; i < N; ++i)
    for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) D[(size_t)i * N + A->col[p]] = A->val[p];
  int mismatches = 0;
  for (int i = 0; i < N; ++i) {
    const int xi = i % nx, yi = (i / nx) % ny, zi = i / (nx * ny);
    for (int j = 0; j < N; ++j) {
      const int xj = j % nx, yj = (j / nx) % ny, zj = j / (nx * ny);
      const int dx = abs(xi - xj), dy = abs(yi - yj), dz = abs(zi - zj);
      double expect = 0.0;
      if (i == j)
        expect = stencil - 1;
      else if (full ? (dx <= 1 && dy <= 1 && dz <= 1) : (dx + dy + dz == 1))
        expect = -1.0;
      if (D[(size_t)i * N + j] != expect) ++mismatches;
    }
  }
  CU_ASSERT_EQUAL(mismatches, 0);

  /* Positive definite: a dense Cholesky factorization runs to the end with positive pivots. */
  int pd = 1;
  for (int k = 0; k < N && pd; ++k) {
    double s = D[(size_t)k * N + k];
    for (int t = 0; t < k; ++t) s -= D[(size_t)k * N + t] * D[(size_t)k * N + t];
    if (!(s > 0.0)) {
      pd = 0;
      break;
    }
    const double l = sqrt(s);
    D[(size_t)k * N + k] = l;
    for (int i = k + 1; i < N; ++i) {
      double v = D[(size_t)i * N + k];
      for (int t = 0; t < k; ++t) v -= D[(size_t)i * N + t] * D[(size_t)k * N + t];
      D[(size_t)i * N + k] = v / l;
    }
  }
  CU_ASSERT(pd);
  free(D);
  gs_csr_destroy(&A);
}

static void test_laplace_structure_dense(void)
{
  check_laplace_dense(1, 1, 1, 3);
  check_laplace_dense(9, 1, 1, 3);
  check_laplace_dense(6, 5, 1, 5);
  check_laplace_dense(1, 4, 1, 5);
  check_laplace_dense(6, 5, 1, 9);
  check_laplace_dense(2, 7, 1, 9);
  check_laplace_dense(4, 3, 5, 7);
  check_laplace_dense(4, 3, 5, 27);
  check_laplace_dense(3, 3, 1, 7);  /* a 3D stencil on a flat grid is still SPD */
  check_laplace_dense(1, 2, 3, 27);
}

/* A == A^T exactly, diagonal positive and equal to stencil - 1, off-diagonals -1, weak
 * diagonal dominance everywhere and strict in a boundary row. */
static void test_laplace_symmetric_dominant(void)
{
  const struct { gs_idx_t nx, ny, nz; int stencil; } g[] = {
    {500, 1, 1, 3}, {40, 30, 1, 5}, {40, 30, 1, 9}, {12, 11, 10, 7}, {12, 11, 10, 27}};
  for (size_t c = 0; c < sizeof g / sizeof g[0]; ++c) {
    gs_csr_t *A = laplace(g[c].nx, g[c].ny, g[c].nz, g[c].stencil), *T = NULL;
    CU_ASSERT_PTR_NOT_NULL_FATAL(A);
    CU_ASSERT(rows_ok(A, A->m, A->n));
    CU_ASSERT_EQUAL_FATAL(gs_csr_transpose(&T, A), GS_SUCCESS);
    CU_ASSERT(same_csr(A, T));
    int diag_ok = 1, off_ok = 1, dominant = 1, strict_rows = 0;
    for (gs_idx_t i = 0; i < A->m; ++i) {
      double d = 0.0, off = 0.0;
      int have_diag = 0;
      for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) {
        if (A->col[p] == i) {
          d = A->val[p];
          have_diag = 1;
        } else {
          if (A->val[p] != -1.0) off_ok = 0;
          off += fabs(A->val[p]);
        }
      }
      if (!have_diag || d != g[c].stencil - 1 || !(d > 0.0)) diag_ok = 0;
      if (off > d) dominant = 0;
      if (off < d) ++strict_rows;
    }
    CU_ASSERT(diag_ok);
    CU_ASSERT(off_ok);
    CU_ASSERT(dominant);
    CU_ASSERT(strict_rows > 0);
    /* row 0 is a corner: strictly dominant */
    CU_ASSERT(A->row_ptr[1] - A->row_ptr[0] < g[c].stencil);
    gs_features_t f;
    CU_ASSERT_EQUAL(gs_csr_features(A, &f), GS_SUCCESS);
    CU_ASSERT(f.numerically_symmetric);
    CU_ASSERT(f.diagonal_positive);
    CU_ASSERT_EQUAL(f.diagonals, g[c].stencil); /* "number of occupied matrix diagonals" */
    gs_csr_destroy(&T);
    gs_csr_destroy(&A);
  }
}

/* ---- random generators ---------------------------------------------------------------------- */

static gs_csr_t *gen_normal(gs_idx_t n, gs_idx_t k, double sigma, uint64_t seed)
{
  gs_csr_t *A = NULL;
  gs_status_t st = gs_gen_normal(&A, n, k, sigma, seed);
  CU_ASSERT_EQUAL(st, GS_SUCCESS);
  if (st != GS_SUCCESS) printf("\n  normal %d x %d sigma %g: %s\n", n, k, sigma, gs_last_error());
  return A;
}

static gs_csr_t *gen_random(gs_idx_t m, gs_idx_t n, gs_idx_t k, uint64_t seed)
{
  gs_csr_t *A = NULL;
  gs_status_t st = gs_gen_random(&A, m, n, k, seed);
  CU_ASSERT_EQUAL(st, GS_SUCCESS);
  if (st != GS_SUCCESS) printf("\n  random %d x %d k %d: %s\n", m, n, k, gs_last_error());
  return A;
}

static gs_csr_t *gen_pareto(gs_idx_t n, double k, uint64_t seed)
{
  gs_csr_t *A = NULL;
  gs_status_t st = gs_gen_pareto(&A, n, k, seed);
  CU_ASSERT_EQUAL(st, GS_SUCCESS);
  if (st != GS_SUCCESS) printf("\n  pareto %d k %g: %s\n", n, k, gs_last_error());
  return A;
}

static gs_csr_t *gen_powerlaw(gs_idx_t n, double mean, double exponent, uint64_t seed)
{
  gs_csr_t *A = NULL;
  gs_status_t st = gs_gen_powerlaw(&A, n, mean, exponent, seed);
  CU_ASSERT_EQUAL(st, GS_SUCCESS);
  if (st != GS_SUCCESS)
    printf("\n  powerlaw %d mean %g exponent %g: %s\n", n, mean, exponent, gs_last_error());
  return A;
}

/* K per row (min(K, N)), sorted distinct in-range columns, through every sampling path:
 * the short-row linear set, the hashed set, K near N, K >= N, tiny and huge sigma. */
static void test_normal_rows(void)
{
  uint64_t s = gs_test_seed();
  const struct { gs_idx_t n, k; double sigma; } c[] = {
    {1, 1, 1.0},     {1, 5, 1.0},     {7, 3, 2.0},      {7, 7, 2.0},     {7, 100, 2.0},
    {2000, 22, 100.0}, {2000, 22, 0.0}, {2000, 22, 0.3}, {2000, 22, 3.0}, {2000, 40, 5.0},
    {500, 100, 1e4},  {300, 290, 1e3},  {300, 150, 1.0}, {1000, 8, 1e9},  {1000, 64, 1e300},
    {1000, 999, 50.0}, {2000, 100, 20.0}, {2000, 100, 5.0}, {2000, 64, 2.0}, {2000, 65, 2.0}};
  for (size_t t = 0; t < sizeof c / sizeof c[0]; ++t) {
    gs_csr_t *A = gen_normal(c[t].n, c[t].k, c[t].sigma, gs_test_next(&s));
    CU_ASSERT_PTR_NOT_NULL_FATAL(A);
    const gs_idx_t k = c[t].k < c[t].n ? c[t].k : c[t].n;
    CU_ASSERT(rows_ok(A, c[t].n, c[t].n));
    CU_ASSERT(rows_have(A, k));
    CU_ASSERT_EQUAL(A->nnz, c[t].n * k);
    CU_ASSERT(values_in_unit(A));
    gs_csr_destroy(&A);
  }
}

/* sigma = 0: each row is the band of the K columns nearest its diagonal (contiguous, holding
 * i); a tiny sigma stays within a narrow band too. */
static void test_normal_degenerate_sigma(void)
{
  uint64_t s = gs_test_seed() ^ 0x5a5a;
  gs_csr_t *A = gen_normal(1000, 22, 0.0, gs_test_next(&s));
  CU_ASSERT_PTR_NOT_NULL_FATAL(A);
  int band = 1;
  for (gs_idx_t i = 0; i < A->m; ++i) {
    const gs_idx_t *c = A->col + A->row_ptr[i];
    if (c[21] - c[0] != 21 || c[0] > i || c[21] < i) band = 0;
    if (i >= 11 && i < A->m - 11 && (c[21] - i > 11 || i - c[0] > 11)) band = 0;
    if (i < 11 && c[0] != 0) band = 0;
    if (i >= A->m - 11 && c[21] != A->m - 1) band = 0;
  }
  CU_ASSERT(band);
  gs_csr_destroy(&A);

  A = gen_normal(1000, 22, 0.5, gs_test_next(&s));
  CU_ASSERT_PTR_NOT_NULL_FATAL(A);
  int narrow = 1;
  for (gs_idx_t i = 0; i < A->m; ++i) {
    const gs_idx_t *c = A->col + A->row_ptr[i];
    if (c[21] - c[0] > 40) narrow = 0;
  }
  CU_ASSERT(narrow);
  gs_csr_destroy(&A);
}

/* Rows away from the boundary: the offsets col - i have mean ~0 and sample standard deviation
 * ~sigma (rounding adds 1/12 to the variance and the no-duplicate rule a little, both far
 * inside the loose 5% bound; the sampling error is ~0.3%). */
static void test_normal_distribution(void)
{
  uint64_t s = gs_test_seed() ^ 0x77;
  const double sigmas[] = {10.0, 60.0, 400.0};
  const gs_idx_t n = gs_test_quick() ? 8000 : 40000, k = 8;
  for (size_t t = 0; t < sizeof sigmas / sizeof sigmas[0]; ++t) {
    const double sigma = sigmas[t];
    gs_csr_t *A = gen_normal(n, k, sigma, gs_test_next(&s));
    CU_ASSERT_PTR_NOT_NULL_FATAL(A);
    double sum = 0.0, sum2 = 0.0;
    long long cnt = 0;
    const gs_idx_t margin = (gs_idx_t)(8 * sigma);
    for (gs_idx_t i = margin; i < n - margin; ++i)
      for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) {
        const double d = (double)A->col[p] - i;
        sum += d;
        sum2 += d * d;
        ++cnt;
      }
    CU_ASSERT_FATAL(cnt > 1000);
    const double mean = sum / cnt, sd = sqrt((sum2 - cnt * mean * mean) / (cnt - 1));
    if (fabs(sd / sigma - 1.0) > 0.05 || fabs(mean) > 0.05 * sigma)
      printf("\n  sigma %g: sample mean %g, sample std %g over %lld offsets\n", sigma, mean, sd,
             cnt);
    CU_ASSERT(fabs(sd / sigma - 1.0) < 0.05);
    CU_ASSERT(fabs(mean) < 0.05 * sigma);
    gs_csr_destroy(&A);
  }

  /* sigma far above N: the truncated normal is flat, so columns are ~uniform over [0, N):
   * mean ~ (N-1)/2, std ~ N/sqrt(12). This case would never finish by plain rejection. */
  const double huge[] = {1e7, 1e12};
  for (size_t t = 0; t < 2; ++t) {
    const gs_idx_t m = 1000;
    gs_csr_t *A = gen_normal(m, 10, huge[t], gs_test_next(&s));
    CU_ASSERT_PTR_NOT_NULL_FATAL(A);
    double sum = 0.0, sum2 = 0.0;
    for (gs_idx_t p = 0; p < A->nnz; ++p) {
      sum += A->col[p];
      sum2 += (double)A->col[p] * A->col[p];
    }
    const double mean = sum / A->nnz, sd = sqrt(sum2 / A->nnz - mean * mean);
    CU_ASSERT(fabs(mean - (m - 1) / 2.0) < 0.05 * m);
    CU_ASSERT(fabs(sd - m / sqrt(12.0)) < 0.05 * m);
    gs_csr_destroy(&A);
  }
}

/* The definition itself, by brute force: rounded normal draws (Box-Muller), out-of-range
 * draws and duplicates redrawn until the row has k columns. */
static void reference_normal_row(uint64_t *st, int i, int n, int k, double sigma, int *cols)
{
  int m = 0;
  while (m < k) {
    const double u1 = gs_test_uniform(st), u2 = gs_test_uniform(st);
    const double z = sqrt(-2.0 * log(1.0 - u1)) * cos(6.283185307179586 * u2);
    const double x = floor(i + sigma * z + 0.5);
    if (x < 0.0 || x >= n) continue;
    int dup = 0;
    for (int t = 0; t < m; ++t) dup |= cols[t] == (int)x;
    if (!dup) cols[m++] = (int)x;
  }
}

/* Where duplicates dominate (sigma comparable to or below K) the generator stops redrawing
 * and samples what is left directly; its rows must still follow the definition. Compared
 * with brute force on the standard deviation of col - i and the share of |col - i| >= cut. */
static void test_normal_matches_definition(void)
{
  uint64_t s = gs_test_seed() ^ 0xd1ce;
  const struct { int k; double sigma; int cut; } c[] = {{12, 3.0, 6}, {6, 1.5, 3}, {22, 10.0, 15},
                                                       {40, 12.0, 20}};
  const int n = gs_test_quick() ? 3000 : 20000, margin = 200;
  for (size_t t = 0; t < sizeof c / sizeof c[0]; ++t) {
    gs_csr_t *A = gen_normal(n, c[t].k, c[t].sigma, gs_test_next(&s));
    CU_ASSERT_PTR_NOT_NULL_FATAL(A);
    double g2 = 0.0, r2 = 0.0;
    long long gtail = 0, rtail = 0, cnt = 0;
    int cols[64];
    for (int i = margin; i < n - margin; ++i) {
      for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) {
        const double d = (double)A->col[p] - i;
        g2 += d * d;
        gtail += fabs(d) >= c[t].cut;
      }
      reference_normal_row(&s, i, n, c[t].k, c[t].sigma, cols);
      for (int q = 0; q < c[t].k; ++q) {
        const double d = (double)cols[q] - i;
        r2 += d * d;
        rtail += fabs(d) >= c[t].cut;
      }
      cnt += c[t].k;
    }
    const double gsd = sqrt(g2 / cnt), rsd = sqrt(r2 / cnt);
    const double gt = (double)gtail / cnt, rt = (double)rtail / cnt;
    const int ok = fabs(gsd / rsd - 1.0) < 0.03 && fabs(gt - rt) < 0.02;
    if (!ok)
      printf("\n  k %d sigma %g: std %g vs %g by brute force, share |d| >= %d: %g vs %g\n",
             c[t].k, c[t].sigma, gsd, rsd, c[t].cut, gt, rt);
    CU_ASSERT(ok);
    gs_csr_destroy(&A);
  }
}

static void test_random_rows(void)
{
  uint64_t s = gs_test_seed() ^ 0x1234;
  const struct { gs_idx_t m, n, k; } c[] = {
    {1, 1, 1},   {5, 1, 3},      {1, 10, 10},   {50, 10, 20},   {100, 1000, 7},
    {100, 1000, 32}, {100, 1000, 33}, {100, 1000, 500}, {100, 1000, 501}, {100, 1000, 999},
    {3, 2000000000, 5}, {200, 37, 1}};
  for (size_t t = 0; t < sizeof c / sizeof c[0]; ++t) {
    gs_csr_t *A = gen_random(c[t].m, c[t].n, c[t].k, gs_test_next(&s));
    CU_ASSERT_PTR_NOT_NULL_FATAL(A);
    const gs_idx_t k = c[t].k < c[t].n ? c[t].k : c[t].n;
    CU_ASSERT(rows_ok(A, c[t].m, c[t].n));
    CU_ASSERT(rows_have(A, k));
    CU_ASSERT_EQUAL(A->nnz, c[t].m * k);
    CU_ASSERT(values_in_unit(A));
    gs_csr_destroy(&A);
  }

  /* Uniform columns: every column of a 4000 x 50 matrix with 10 per row is hit ~800 times;
   * a 6-sigma band (800 +- 170) catches a biased sampler. Both sampling paths. */
  const gs_idx_t ks[] = {10, 40};
  for (size_t t = 0; t < 2; ++t) {
    const gs_idx_t m = 4000, n = 50, k = ks[t];
    gs_csr_t *A = gen_random(m, n, k, gs_test_next(&s));
    CU_ASSERT_PTR_NOT_NULL_FATAL(A);
    long long hits[50] = {0};
    for (gs_idx_t p = 0; p < A->nnz; ++p) ++hits[A->col[p]];
    const double expect = (double)m * k / n, sd = sqrt(expect * (1.0 - (double)k / n));
    int uniform = 1;
    for (int j = 0; j < n; ++j)
      if (fabs(hits[j] - expect) > 6.0 * sd + 1.0) uniform = 0;
    CU_ASSERT(uniform);
    gs_csr_destroy(&A);
  }
}

/* Row lengths 32 + delta with P(delta >= j) = (j + 1)^-k, capped at N. */
static void test_pareto_rows(void)
{
  uint64_t s = gs_test_seed() ^ 0xbeef;
  const gs_idx_t n = gs_test_quick() ? 5000 : 30000; /* Figure 9 uses 30K rows */
  const double ks[] = {1.0, 1.5, 2.0, 4.0};
  for (size_t t = 0; t < sizeof ks / sizeof ks[0]; ++t) {
    gs_csr_t *A = gen_pareto(n, ks[t], gs_test_next(&s));
    CU_ASSERT_PTR_NOT_NULL_FATAL(A);
    CU_ASSERT(rows_ok(A, n, n));
    CU_ASSERT(values_in_unit(A));
    int len_ok = 1;
    gs_idx_t at32 = 0, ge34 = 0, maxlen = 0;
    for (gs_idx_t i = 0; i < n; ++i) {
      const gs_idx_t len = (gs_idx_t)(A->row_ptr[i + 1] - A->row_ptr[i]);
      if (len < 32 || len > n) len_ok = 0;
      if (len == 32) ++at32;
      if (len >= 34) ++ge34;
      if (len > maxlen) maxlen = len;
    }
    CU_ASSERT(len_ok);
    /* P(len = 32) = 1 - 2^-k, P(len >= 34) = 3^-k; ~0.7% sampling error at 5000 rows */
    const double p32 = (double)at32 / n, p34 = (double)ge34 / n;
    if (fabs(p32 - (1.0 - pow(2.0, -ks[t]))) > 0.04 || fabs(p34 - pow(3.0, -ks[t])) > 0.04)
      printf("\n  pareto k %g: P(32) %g (expect %g), P(>=34) %g (expect %g)\n", ks[t], p32,
             1.0 - pow(2.0, -ks[t]), p34, pow(3.0, -ks[t]));
    CU_ASSERT(fabs(p32 - (1.0 - pow(2.0, -ks[t]))) < 0.04);
    CU_ASSERT(fabs(p34 - pow(3.0, -ks[t])) < 0.04);
    if (ks[t] == 1.0) CU_ASSERT(maxlen > 200); /* heavy tail: P(max < 200) ~ (1-1/169)^n */
    gs_csr_destroy(&A);
  }

  /* N < 32: every row is full. N = 32: every row has exactly 32. A tiny k makes rows full. */
  gs_csr_t *A = gen_pareto(20, 1.0, gs_test_next(&s));
  CU_ASSERT_PTR_NOT_NULL_FATAL(A);
  CU_ASSERT(rows_ok(A, 20, 20));
  CU_ASSERT(rows_have(A, 20));
  gs_csr_destroy(&A);
  A = gen_pareto(32, 1.0, gs_test_next(&s));
  CU_ASSERT_PTR_NOT_NULL_FATAL(A);
  CU_ASSERT(rows_have(A, 32));
  gs_csr_destroy(&A);
  A = gen_pareto(300, 0.01, gs_test_next(&s));
  CU_ASSERT_PTR_NOT_NULL_FATAL(A);
  CU_ASSERT(rows_ok(A, 300, 300));
  gs_idx_t full = 0;
  for (gs_idx_t i = 0; i < 300; ++i) full += A->row_ptr[i + 1] - A->row_ptr[i] == 300;
  CU_ASSERT(full > 200); /* P(delta >= 268) = 269^-0.01 ~ 0.95 */
  gs_csr_destroy(&A);
}

/* ---- power-law rows and columns ------------------------------------------------------------- */

static gs_idx_t row_len(const gs_csr_t *A, gs_idx_t i)
{
  return (gs_idx_t)(A->row_ptr[i + 1] - A->row_ptr[i]);
}

/* Entries: nnz = sum_i (floor(w_i) + B_i), B_i independent Bernoulli, E nnz = N * mean (the
 * weights sum to it). Each term deviates by at most 1, so Hoeffding's inequality gives
 * P(|nnz - N mean| >= 4 sqrt(N)) <= 2 exp(-2 (4 sqrt(N))^2 / N) = 2 exp(-32) < 1e-13; the
 * weights' own rounding adds far under one entry. */
static int powerlaw_mean_ok(const gs_csr_t *A, double mean)
{
  const double n = (double)A->m, dev = fabs((double)A->nnz - n * mean);
  const int ok = dev <= 4.0 * sqrt(n) + 1e-9 * n * mean + 1.0;
  if (!ok)
    printf("\n  powerlaw %d rows mean %g: %lld entries, %g from N * mean (bound %g)\n", A->m, mean,
           (long long)A->nnz, dev, 4.0 * sqrt(n));
  return ok;
}

/* Every case: sorted distinct columns in range (rows_ok), values in [-1, 1), mean within the
 * Hoeffding bound, no row over N. The cases cover uncapped and capped weights (C > N: full
 * rows), rows drawn by redrawing duplicates (<= N/8 entries) and by the reservoir (> N/8). */
static void test_powerlaw_rows(void)
{
  uint64_t s = gs_test_seed() ^ 0x9a11;
  const struct { gs_idx_t n; double mean, exponent; } c[] = {
    {1, 1.0, 2.5},      {2, 1.0, 2.5},     {10, 0.01, 3.0},   {64, 8.0, 2.05},
    {200, 50.0, 2.1},   {1000, 100.0, 2.5}, {1000, 999.5, 2.5}, {300, 20.0, 2.001},
    {5000, 3.0, 4.0},   {20000, 8.0, 2.5}, {20000, 8.0, 2.1}, {20000, 1.5, 1e6}};
  for (size_t t = 0; t < sizeof c / sizeof c[0]; ++t) {
    gs_csr_t *A = gen_powerlaw(c[t].n, c[t].mean, c[t].exponent, gs_test_next(&s));
    CU_ASSERT_PTR_NOT_NULL_FATAL(A);
    CU_ASSERT(rows_ok(A, c[t].n, c[t].n));
    CU_ASSERT(values_in_unit(A));
    CU_ASSERT(powerlaw_mean_ok(A, c[t].mean));
    gs_csr_destroy(&A);
  }

  /* mean = N: every row full. A huge exponent flattens the weights to the mean: every row has
   * floor(mean) or floor(mean) + 1 entries. */
  gs_csr_t *A = gen_powerlaw(300, 300.0, 2.5, gs_test_next(&s));
  CU_ASSERT_PTR_NOT_NULL_FATAL(A);
  CU_ASSERT(rows_have(A, 300));
  gs_csr_destroy(&A);
  A = gen_powerlaw(5000, 5.5, 1e6, gs_test_next(&s));
  CU_ASSERT_PTR_NOT_NULL_FATAL(A);
  int flat = 1;
  for (gs_idx_t i = 0; i < A->m; ++i) flat &= row_len(A, i) == 5 || row_len(A, i) == 6;
  CU_ASSERT(flat);
  gs_csr_destroy(&A);
}

/* The Zipf law and the heavy tail, on cases whose weights stay under the cap (C <= N), where
 * vertex rank k weighs C k^-beta, beta = 1 / (exponent - 1), C = N mean / sum_k k^-beta:
 *  - a row has floor(w) or floor(w) + 1 entries, so the rows of >= d entries include every
 *    vertex of weight >= d and only vertices of weight > d - 1: their count lies in
 *    [K(d), K(d - 1)], K(x) = #{k : C k^-beta >= x} = floor((C / x)^(1 / beta)) (one row of
 *    slack either way for rounding at the boundary);
 *  - the longest row, rank 1's, has >= floor(C) entries: 70 to 9000 times the mean here;
 *  - popular vertices are popular columns: a non-empty row's first column is drawn with
 *    probability w_j / (N mean) (the first draw of successive sampling), independently of the
 *    other rows, and w_j >= len_j - 1. So the columns T of the 1% longest rows hold at least
 *    X entries, X a sum of R Bernoullis (R non-empty rows) of mean
 *    mu >= R / (N mean) * sum_{j in T} (len_j - 1); Chernoff: P(X <= mu - 6 sqrt(mu)) <=
 *    exp(-18). */
static void test_powerlaw_tail(void)
{
  uint64_t s = gs_test_seed() ^ 0x21af;
  const gs_idx_t n = gs_test_quick() ? 20000 : 200000;
  const double exps[] = {2.1, 2.5, 3.0};
  const double mean = 8.0;
  for (size_t t = 0; t < sizeof exps / sizeof exps[0]; ++t) {
    const double beta = 1.0 / (exps[t] - 1.0);
    double sum = 0.0;
    for (gs_idx_t k = n; k >= 1; --k) sum += pow((double)k, -beta);
    const double C = (double)n * mean / sum;
    CU_ASSERT_FATAL(C <= n); /* no cap: the closed form holds */
    gs_csr_t *A = gen_powerlaw(n, mean, exps[t], gs_test_next(&s));
    CU_ASSERT_PTR_NOT_NULL_FATAL(A);
    CU_ASSERT(rows_ok(A, n, n));
    CU_ASSERT(powerlaw_mean_ok(A, mean));

    gs_idx_t maxlen = 0, nonempty = 0;
    for (gs_idx_t i = 0; i < n; ++i) {
      if (row_len(A, i) > maxlen) maxlen = row_len(A, i);
      nonempty += row_len(A, i) > 0;
    }
    if (maxlen < (gs_idx_t)floor(C))
      printf("\n  exponent %g: longest row %d < C = %g\n", exps[t], maxlen, C);
    CU_ASSERT(maxlen >= (gs_idx_t)floor(C));
    CU_ASSERT(maxlen > 50 * mean); /* C / mean is 71 at the least: exponent 3, N = 20000 */

    const double ds[] = {2, 4, 16, 64, 256, 1024};
    for (size_t q = 0; q < sizeof ds / sizeof ds[0]; ++q) {
      const double d = ds[q];
      const double lo = fmin((double)n, floor(pow(C / d, 1.0 / beta)));
      const double hi = fmin((double)n, floor(pow(C / (d - 1.0), 1.0 / beta)));
      long long cnt = 0;
      for (gs_idx_t i = 0; i < n; ++i) cnt += row_len(A, i) >= d;
      if (!(cnt >= lo - 1 && cnt <= hi + 1))
        printf("\n  exponent %g: %lld rows of >= %g entries, Zipf law says %g..%g\n", exps[t],
               cnt, d, lo, hi);
      CU_ASSERT(cnt >= lo - 1 && cnt <= hi + 1);
    }

    /* the columns of the 1% longest rows */
    gs_idx_t *len = malloc((size_t)n * sizeof *len);
    long long *in = calloc((size_t)n, sizeof *in);
    CU_ASSERT_FATAL(len && in);
    for (gs_idx_t i = 0; i < n; ++i) len[i] = row_len(A, i);
    for (gs_off_t p = 0; p < A->nnz; ++p) ++in[A->col[p]];
    gs_idx_t *sorted = malloc((size_t)n * sizeof *sorted);
    CU_ASSERT_FATAL(sorted != NULL);
    memcpy(sorted, len, (size_t)n * sizeof *len);
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_idx_desc);
    const gs_idx_t cut = sorted[n / 100]; /* rows longer than this are in T */
    double heavy = 0.0;
    long long x = 0;
    for (gs_idx_t j = 0; j < n; ++j)
      if (len[j] > cut) {
        heavy += len[j] - 1;
        x += in[j];
      }
    const double mu = nonempty / ((double)n * mean) * heavy;
    if (!((double)x >= mu - 6.0 * sqrt(mu)))
      printf("\n  exponent %g: the longest rows' columns hold %lld entries, expected >= %g\n",
             exps[t], x, mu - 6.0 * sqrt(mu));
    CU_ASSERT(mu > 36.0);
    CU_ASSERT((double)x >= mu - 6.0 * sqrt(mu));
    free(sorted);
    free(len);
    free(in);
    gs_csr_destroy(&A);
  }
}

/* Same seed, same matrix bit for bit; another seed, another matrix. */
static void test_seeds(void)
{
  uint64_t s = gs_test_seed() ^ 0xfeed;
  const uint64_t a = gs_test_next(&s), b = a + 1;
  gs_csr_t *X = NULL, *Y = NULL, *Z = NULL;

  X = gen_normal(3000, 22, 50.0, a);
  Y = gen_normal(3000, 22, 50.0, a);
  Z = gen_normal(3000, 22, 50.0, b);
  CU_ASSERT_FATAL(X && Y && Z);
  CU_ASSERT(same_csr(X, Y));
  CU_ASSERT(!same_csr(X, Z));
  CU_ASSERT(memcmp(X->col, Z->col, (size_t)X->nnz * sizeof *X->col) != 0);
  gs_csr_destroy(&X);
  gs_csr_destroy(&Y);
  gs_csr_destroy(&Z);

  X = gen_pareto(3000, 1.2, a);
  Y = gen_pareto(3000, 1.2, a);
  Z = gen_pareto(3000, 1.2, b);
  CU_ASSERT_FATAL(X && Y && Z);
  CU_ASSERT(same_csr(X, Y));
  CU_ASSERT(!same_csr(X, Z));
  CU_ASSERT(memcmp(X->row_ptr, Z->row_ptr, 3001 * sizeof *X->row_ptr) != 0);
  gs_csr_destroy(&X);
  gs_csr_destroy(&Y);
  gs_csr_destroy(&Z);

  X = gen_random(500, 800, 30, a);
  Y = gen_random(500, 800, 30, a);
  Z = gen_random(500, 800, 30, b);
  CU_ASSERT_FATAL(X && Y && Z);
  CU_ASSERT(same_csr(X, Y));
  CU_ASSERT(!same_csr(X, Z));
  CU_ASSERT(memcmp(X->col, Z->col, (size_t)X->nnz * sizeof *X->col) != 0);
  gs_csr_destroy(&X);
  gs_csr_destroy(&Y);
  gs_csr_destroy(&Z);

  X = gen_powerlaw(3000, 6.0, 2.3, a);
  Y = gen_powerlaw(3000, 6.0, 2.3, a);
  Z = gen_powerlaw(3000, 6.0, 2.3, b);
  CU_ASSERT_FATAL(X && Y && Z);
  CU_ASSERT(same_csr(X, Y));
  CU_ASSERT(!same_csr(X, Z));
  CU_ASSERT(memcmp(X->row_ptr, Z->row_ptr, 3001 * sizeof *X->row_ptr) != 0);
  gs_csr_destroy(&X);
  gs_csr_destroy(&Y);
  gs_csr_destroy(&Z);

  /* The Laplacian has no seed: two calls agree. */
  X = laplace(9, 8, 7, 27);
  Y = laplace(9, 8, 7, 27);
  CU_ASSERT_FATAL(X && Y);
  CU_ASSERT(same_csr(X, Y));
  gs_csr_destroy(&X);
  gs_csr_destroy(&Y);
}

/* ---- errors --------------------------------------------------------------------------------- */

#define EXPECT_INVALID(call)                                                                  \
  do {                                                                                        \
    gs_csr_t *A_ = (gs_csr_t *)&A_; /* not NULL: the call must reset it */                     \
    gs_clear_error();                                                                         \
    gs_status_t st_ = (call);                                                                 \
    CU_ASSERT_EQUAL(st_, GS_ERR_INVALID_ARG);                                                 \
    CU_ASSERT_PTR_NULL(A_);                                                                   \
    CU_ASSERT(strlen(gs_last_error()) > 0);                                                   \
    if (st_ != GS_ERR_INVALID_ARG) gs_csr_destroy(&A_);                                       \
  } while (0)

static void test_errors(void)
{
  /* sizes */
  EXPECT_INVALID(gs_gen_laplace(&A_, 0, 1, 1, 3));
  EXPECT_INVALID(gs_gen_laplace(&A_, 10, -1, 1, 5));
  EXPECT_INVALID(gs_gen_laplace(&A_, 10, 10, 0, 7));
  /* stencils and grid dimension */
  EXPECT_INVALID(gs_gen_laplace(&A_, 10, 1, 1, 4));
  EXPECT_INVALID(gs_gen_laplace(&A_, 10, 1, 1, 0));
  EXPECT_INVALID(gs_gen_laplace(&A_, 10, 1, 1, 25));
  EXPECT_INVALID(gs_gen_laplace(&A_, 10, 2, 1, 3));
  EXPECT_INVALID(gs_gen_laplace(&A_, 10, 1, 2, 3));
  EXPECT_INVALID(gs_gen_laplace(&A_, 10, 10, 2, 5));
  EXPECT_INVALID(gs_gen_laplace(&A_, 10, 10, 2, 9));
  /* more rows than int32 (more nonzeros than int32 is allowed: 64-bit offsets) */
  EXPECT_INVALID(gs_gen_laplace(&A_, 50000, 50000, 1, 5));
  EXPECT_INVALID(gs_gen_laplace(&A_, 2000, 2000, 2000, 7));
  CU_ASSERT_EQUAL(gs_gen_laplace(NULL, 3, 1, 1, 3), GS_ERR_INVALID_ARG);

  EXPECT_INVALID(gs_gen_normal(&A_, 0, 5, 1.0, 1));
  EXPECT_INVALID(gs_gen_normal(&A_, 10, 0, 1.0, 1));
  EXPECT_INVALID(gs_gen_normal(&A_, 10, -3, 1.0, 1));
  EXPECT_INVALID(gs_gen_normal(&A_, 10, 5, -1.0, 1));
  EXPECT_INVALID(gs_gen_normal(&A_, 10, 5, NAN, 1));
  EXPECT_INVALID(gs_gen_normal(&A_, 10, 5, INFINITY, 1));
  CU_ASSERT_EQUAL(gs_gen_normal(NULL, 10, 5, 1.0, 1), GS_ERR_INVALID_ARG);

  EXPECT_INVALID(gs_gen_pareto(&A_, 0, 1.0, 1));
  EXPECT_INVALID(gs_gen_pareto(&A_, -5, 1.0, 1));
  EXPECT_INVALID(gs_gen_pareto(&A_, 100, 0.0, 1));
  EXPECT_INVALID(gs_gen_pareto(&A_, 100, -1.0, 1));
  EXPECT_INVALID(gs_gen_pareto(&A_, 100, NAN, 1));
  EXPECT_INVALID(gs_gen_pareto(&A_, 100, INFINITY, 1));
  CU_ASSERT_EQUAL(gs_gen_pareto(NULL, 100, 1.0, 1), GS_ERR_INVALID_ARG);

  EXPECT_INVALID(gs_gen_random(&A_, 0, 10, 2, 1));
  EXPECT_INVALID(gs_gen_random(&A_, 10, 0, 2, 1));
  EXPECT_INVALID(gs_gen_random(&A_, 10, 10, 0, 1));
  EXPECT_INVALID(gs_gen_random(&A_, -1, 10, 2, 1));
  CU_ASSERT_EQUAL(gs_gen_random(NULL, 10, 10, 2, 1), GS_ERR_INVALID_ARG);

  EXPECT_INVALID(gs_gen_powerlaw(&A_, 0, 1.0, 2.5, 1));
  EXPECT_INVALID(gs_gen_powerlaw(&A_, -3, 1.0, 2.5, 1));
  EXPECT_INVALID(gs_gen_powerlaw(&A_, 100, 0.0, 2.5, 1));
  EXPECT_INVALID(gs_gen_powerlaw(&A_, 100, -2.0, 2.5, 1));
  EXPECT_INVALID(gs_gen_powerlaw(&A_, 100, 100.5, 2.5, 1)); /* more than N per row */
  EXPECT_INVALID(gs_gen_powerlaw(&A_, 100, NAN, 2.5, 1));
  EXPECT_INVALID(gs_gen_powerlaw(&A_, 100, INFINITY, 2.5, 1));
  EXPECT_INVALID(gs_gen_powerlaw(&A_, 100, 8.0, 2.0, 1)); /* no finite mean at or below 2 */
  EXPECT_INVALID(gs_gen_powerlaw(&A_, 100, 8.0, 1.5, 1));
  EXPECT_INVALID(gs_gen_powerlaw(&A_, 100, 8.0, -3.0, 1));
  EXPECT_INVALID(gs_gen_powerlaw(&A_, 100, 8.0, NAN, 1));
  EXPECT_INVALID(gs_gen_powerlaw(&A_, 100, 8.0, INFINITY, 1));
  CU_ASSERT_EQUAL(gs_gen_powerlaw(NULL, 100, 8.0, 2.5, 1), GS_ERR_INVALID_ARG);

  /* the message names the problem */
  gs_csr_t *A = NULL;
  CU_ASSERT_EQUAL(gs_gen_laplace(&A, 10, 10, 2, 5), GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NOT_NULL(strstr(gs_last_error(), "nz = 1"));
  CU_ASSERT_EQUAL(gs_gen_laplace(&A, 10, 1, 1, 4), GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NOT_NULL(strstr(gs_last_error(), "stencil 4"));
  CU_ASSERT_EQUAL(gs_gen_laplace(&A, 50000, 50000, 1, 5), GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NOT_NULL(strstr(gs_last_error(), "more than 2^31-1 points"));
  CU_ASSERT_EQUAL(gs_gen_powerlaw(&A, 100, 8.0, 2.0, 1), GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NOT_NULL(strstr(gs_last_error(), "exponent 2"));
  CU_ASSERT_EQUAL(gs_gen_powerlaw(&A, 100, 101.0, 2.5, 1), GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NOT_NULL(strstr(gs_last_error(), "mean row length 101"));
  /* 4e18 entries: past 64-bit addressing of the arrays, refused before any allocation (a
   * matrix that is merely too big for this machine's memory is refused by malloc) */
  CU_ASSERT_EQUAL(gs_gen_random(&A, 2000000000, 2000000000, 2000000000, 1), GS_ERR_HOST_MEMORY);
  CU_ASSERT_PTR_NOT_NULL(strstr(gs_last_error(), "4000000000000000000 entries"));
  CU_ASSERT_PTR_NULL(A);
}


/* ---- convection-diffusion ------------------------------------------------------------------ */

static gs_csr_t *convdiff(gs_idx_t nx, gs_idx_t ny, gs_idx_t nz, double pe, gs_flow_t f,
                          uint64_t seed)
{
  gs_csr_t *A = NULL;
  gs_status_t st = gs_gen_convdiff(&A, nx, ny, nz, pe, f, seed);
  if (st != GS_SUCCESS) fprintf(stderr, "  gs_gen_convdiff: %s\n", gs_last_error());
  return A;
}

/* Entry (i, j) of a sorted CSR (0 when absent). */
static double csr_at(const gs_csr_t *A, gs_idx_t i, gs_idx_t j)
{
  for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p)
    if (A->col[p] == j) return A->val[p];
  return 0.0;
}

/* Counts as the axis Laplacian, P = 0 is that Laplacian bit for bit (the diffusion part), the
 * pattern is the Laplacian's for every P. */
static void test_convdiff_counts_and_laplace(void)
{
  const gs_idx_t grids[][3] = {{1, 1, 1}, {7, 1, 1}, {5, 9, 1}, {30, 20, 1}, {4, 5, 6}, {9, 3, 2}};
  for (size_t g = 0; g < sizeof grids / sizeof grids[0]; ++g) {
    const gs_idx_t nx = grids[g][0], ny = grids[g][1], nz = grids[g][2];
    const int stencil = nz > 1 ? 7 : 5;
    gs_csr_t *L = laplace(nx, ny, nz, stencil);
    for (int f = GS_FLOW_PIPE; f <= GS_FLOW_RANDOM; ++f) {
      gs_csr_t *A0 = convdiff(nx, ny, nz, 0.0, (gs_flow_t)f, 3);
      gs_csr_t *A = convdiff(nx, ny, nz, 25.0, (gs_flow_t)f, 3);
      CU_ASSERT_FATAL(L && A0 && A);
      const int64_t N = (int64_t)nx * ny * nz;
      const int64_t want = N + 2 * ((int64_t)(nx - 1) * ny * nz + (int64_t)nx * (ny - 1) * nz +
                                    (int64_t)nx * ny * (nz - 1));
      CU_ASSERT(rows_ok(A, (gs_idx_t)N, (gs_idx_t)N));
      CU_ASSERT_EQUAL(A->nnz, want);
      CU_ASSERT(same_csr(A0, L));
      CU_ASSERT_EQUAL(A0->symmetry, GS_SYM_SYMMETRIC);
      CU_ASSERT_EQUAL(A->symmetry, GS_SYM_GENERAL);
      CU_ASSERT(memcmp(A->row_ptr, L->row_ptr, ((size_t)N + 1) * sizeof *A->row_ptr) == 0);
      CU_ASSERT(memcmp(A->col, L->col, (size_t)A->nnz * sizeof *A->col) == 0);
      /* the diffusion part's row sums are the neighbours the boundary cuts off: 0 inside */
      for (gs_idx_t i = 0; i < A0->m; ++i) {
        double sum = 0.0;
        for (gs_off_t p = A0->row_ptr[i]; p < A0->row_ptr[i + 1]; ++p) sum += A0->val[p];
        const double cut = (nz > 1 ? 7 : 5) - (double)(A0->row_ptr[i + 1] - A0->row_ptr[i]);
        if (sum != cut) {
          CU_FAIL("diffusion row sum is not the number of cut-off neighbours");
          break;
        }
      }
      gs_csr_destroy(&A0);
      gs_csr_destroy(&A);
    }
    gs_csr_destroy(&L);
  }
}

/* M-matrix sign pattern and weak diagonal dominance for random grids, Peclet numbers and
 * fields; nonsymmetric values on a symmetric pattern for P > 0. The row sum
 * a_ii + sum_j a_ij is 0 in exact arithmetic for an interior row; computed in double from at
 * most 7 terms its error is below 7 u sum_j |a_ij| (u = 2^-53, recursive summation), so a row
 * sum must be >= -7u sum|a| and, for an interior row, at most that in magnitude. */
static void test_convdiff_m_matrix(void)
{
  uint64_t s = gs_test_seed() ^ 0xc0d1;
  for (int trial = 0; trial < 12; ++trial) {
    const gs_idx_t nx = 2 + (gs_idx_t)(gs_test_uniform(&s) * 30);
    const gs_idx_t ny = 2 + (gs_idx_t)(gs_test_uniform(&s) * 30);
    const gs_idx_t nz = trial % 3 == 0 ? 2 + (gs_idx_t)(gs_test_uniform(&s) * 8) : 1;
    const double pe = trial == 0 ? 1e-3 : 1000.0 * gs_test_uniform(&s) + 0.1;
    const gs_flow_t f = (gs_flow_t)(trial % 3);
    const uint64_t fseed = gs_test_next(&s);
    gs_csr_t *A = convdiff(nx, ny, nz, pe, f, fseed);
    CU_ASSERT_FATAL(A != NULL);
    const double u = 0x1.0p-53, stencil = nz > 1 ? 7 : 5;
    int signs = 1, dominant = 1, interior_zero = 1;
    double offmax = 0.0;
    for (gs_idx_t i = 0; i < A->m; ++i) {
      double sum = 0.0, abssum = 0.0;
      for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) {
        const double a = A->val[p];
        if (A->col[p] == i ? !(a >= 2.0 * (nz > 1 ? 3 : 2)) : !(a <= -1.0)) signs = 0;
        if (A->col[p] != i && -a > offmax) offmax = -a;
        sum += a;
        abssum += fabs(a);
      }
      if (sum < -7.0 * u * abssum) dominant = 0;
      const int interior = (double)(A->row_ptr[i + 1] - A->row_ptr[i]) == stencil;
      if (interior && fabs(sum) > 7.0 * u * abssum) interior_zero = 0;
    }
    CU_ASSERT(signs);
    CU_ASSERT(dominant);
    CU_ASSERT(interior_zero);
    /* an off-diagonal is -1 - P |v_k| with |v_k| <= 1 (and the axial 1/2 in 3D): -1 - P at
     * most, up to the few roundings of v_k (a product, a quotient, a square root: 4u) */
    CU_ASSERT(offmax <= (1.0 + pe) * (1.0 + 4.0 * u));
    gs_features_t ft;
    CU_ASSERT_FATAL(gs_csr_features(A, &ft) == GS_SUCCESS);
    CU_ASSERT(ft.structurally_symmetric);
    CU_ASSERT(ft.diagonal_positive);
    /* nonsymmetry: some entry differs from its mirror by a relative amount of order
     * P |v| / (2d + sum|c|); every field moves somewhere on these grids (the pipe's annulus holds
     * nodes once the grid has 2 points per axis, 3D adds v_z = 1/2) */
    if (pe >= 1.0) {
      CU_ASSERT(!ft.numerically_symmetric);
      if (ft.numerically_symmetric)
        fprintf(stderr, "  %dx%dx%d P=%g field %s symmetric (asymmetry %g)\n", nx, ny, nz, pe,
                gs_flow_name(f), ft.asymmetry);
    }
    gs_csr_destroy(&A);
  }
  /* P = 0: exactly symmetric */
  gs_csr_t *A = convdiff(17, 13, 1, 0.0, GS_FLOW_RANDOM, 5);
  gs_features_t ft;
  CU_ASSERT_FATAL(A && gs_csr_features(A, &ft) == GS_SUCCESS);
  CU_ASSERT(ft.numerically_symmetric);
  CU_ASSERT_EQUAL(ft.asymmetry, 0.0);
  gs_csr_destroy(&A);
}

/* Upwinding goes the right way: the rotating field on a small grid against entries written from
 * the definition (v = 2 (-(y - 1/2), x - 1/2) at node (x, y) = ((i + 1) h_x, (j + 1) h_y); a
 * positive component puts -1 - c on the neighbour below in that axis). */
static void test_convdiff_upwind_direction(void)
{
  const gs_idx_t nx = 5, ny = 4;
  const double pe = 3.0, hx = 1.0 / (nx + 1), hy = 1.0 / (ny + 1);
  gs_csr_t *A = convdiff(nx, ny, 1, pe, GS_FLOW_ROTATE, 0);
  CU_ASSERT_FATAL(A != NULL);
  int ok = 1;
  for (gs_idx_t j = 0; j < ny; ++j)
    for (gs_idx_t i = 0; i < nx; ++i) {
      const gs_idx_t r = i + nx * j;
      const double c[2] = {pe * -2.0 * ((j + 1) * hy - 0.5), pe * 2.0 * ((i + 1) * hx - 0.5)};
      const gs_idx_t lo[2] = {i > 0 ? r - 1 : -1, j > 0 ? r - nx : -1};
      const gs_idx_t hi[2] = {i < nx - 1 ? r + 1 : -1, j < ny - 1 ? r + nx : -1};
      if (fabs(csr_at(A, r, r) - (4.0 + fabs(c[0]) + fabs(c[1]))) > 1e-14 * (4.0 + 2 * pe))
        ok = 0;
      for (int k = 0; k < 2; ++k) {
        const double want_lo = c[k] > 0 ? -1.0 - c[k] : -1.0;
        const double want_hi = c[k] < 0 ? -1.0 + c[k] : -1.0;
        if (lo[k] >= 0 && fabs(csr_at(A, r, lo[k]) - want_lo) > 1e-14 * (1.0 + pe)) ok = 0;
        if (hi[k] >= 0 && fabs(csr_at(A, r, hi[k]) - want_hi) > 1e-14 * (1.0 + pe)) ok = 0;
      }
    }
  CU_ASSERT(ok);
  gs_csr_destroy(&A);
}

static void test_convdiff_seeds_and_errors(void)
{
  uint64_t s = gs_test_seed() ^ 0xc0d2;
  const uint64_t a = gs_test_next(&s), b = a + 1;
  gs_csr_t *X = convdiff(20, 15, 1, 50.0, GS_FLOW_RANDOM, a);
  gs_csr_t *Y = convdiff(20, 15, 1, 50.0, GS_FLOW_RANDOM, a);
  gs_csr_t *Z = convdiff(20, 15, 1, 50.0, GS_FLOW_RANDOM, b);
  gs_csr_t *P1 = convdiff(20, 15, 1, 50.0, GS_FLOW_PIPE, a);
  gs_csr_t *P2 = convdiff(20, 15, 1, 50.0, GS_FLOW_PIPE, b);
  CU_ASSERT_FATAL(X && Y && Z && P1 && P2);
  CU_ASSERT(same_csr(X, Y));
  CU_ASSERT(!same_csr(X, Z));
  CU_ASSERT(same_csr(P1, P2)); /* only the random field reads the seed */
  gs_csr_destroy(&X);
  gs_csr_destroy(&Y);
  gs_csr_destroy(&Z);
  gs_csr_destroy(&P1);
  gs_csr_destroy(&P2);

  EXPECT_INVALID(gs_gen_convdiff(&A_, 0, 5, 1, 1.0, GS_FLOW_PIPE, 1));
  EXPECT_INVALID(gs_gen_convdiff(&A_, 5, -1, 1, 1.0, GS_FLOW_PIPE, 1));
  EXPECT_INVALID(gs_gen_convdiff(&A_, 5, 5, 0, 1.0, GS_FLOW_PIPE, 1));
  EXPECT_INVALID(gs_gen_convdiff(&A_, 5, 5, 1, -1.0, GS_FLOW_PIPE, 1));
  EXPECT_INVALID(gs_gen_convdiff(&A_, 5, 5, 1, NAN, GS_FLOW_PIPE, 1));
  EXPECT_INVALID(gs_gen_convdiff(&A_, 5, 5, 1, INFINITY, GS_FLOW_PIPE, 1));
  EXPECT_INVALID(gs_gen_convdiff(&A_, 5, 5, 1, 1.0, (gs_flow_t)7, 1));
  EXPECT_INVALID(gs_gen_convdiff(&A_, 50000, 50000, 1, 1.0, GS_FLOW_PIPE, 1));
  CU_ASSERT_EQUAL(gs_gen_convdiff(NULL, 5, 5, 1, 1.0, GS_FLOW_PIPE, 1), GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NULL(gs_flow_name((gs_flow_t)7));
  CU_ASSERT_STRING_EQUAL(gs_flow_name(GS_FLOW_PIPE), "pipe");
}

/* ---- 2D linear elasticity ------------------------------------------------------------------ */

/* The reference: the element matrix from the closed-form integrals of products of the bilinear
 * shape functions' derivatives (each derivative a linear function of x times one of y, so every
 * integral is a product of two exact 1D integrals of linear functions), not the generator's
 * Gauss quadrature, assembled into a dense matrix over every element of the lattice. */

/* int_0^1 f g for f, g linear with the values f0, f1 (g0, g1) at 0 and 1. */
static double int_lin(double f0, double f1, double g0, double g1)
{
  return (2.0 * f0 * g0 + f0 * g1 + f1 * g0 + 2.0 * f1 * g1) / 6.0;
}

/* R[a][b] = int dN_a/dp dN_b/dq over the unit square, p, q in {x (0), y (1)}, corners (0,0),
 * (1,0), (1,1), (0,1): dN/dx is (a linear function of y) times a constant, dN/dy likewise. */
static double q1_integral(int a, int p, int b, int q)
{
  static const int cx[4] = {0, 1, 1, 0}, cy[4] = {0, 0, 1, 1};
  /* N_c = lx(x) ly(y): lx = x (cx = 1) or 1 - x; the values of l and l' at 0 and 1 */
  double fx[2][2], fy[2][2]; /* [0]: the values at 0 and 1 of the x (y) factor, [1]: of its
                              * derivative, for a; then for b below */
  double gx[2][2], gy[2][2];
  for (int s = 0; s < 2; ++s) {
    const int c = s ? b : a;
    double(*X)[2] = s ? gx : fx, (*Y)[2] = s ? gy : fy;
    X[0][0] = cx[c] ? 0.0 : 1.0, X[0][1] = cx[c] ? 1.0 : 0.0;
    X[1][0] = X[1][1] = cx[c] ? 1.0 : -1.0;
    Y[0][0] = cy[c] ? 0.0 : 1.0, Y[0][1] = cy[c] ? 1.0 : 0.0;
    Y[1][0] = Y[1][1] = cy[c] ? 1.0 : -1.0;
  }
  const int dxa = p == 0, dxb = q == 0; /* differentiated in x? */
  return int_lin(fx[dxa][0], fx[dxa][1], gx[dxb][0], gx[dxb][1]) *
         int_lin(fy[!dxa][0], fy[!dxa][1], gy[!dxb][0], gy[!dxb][1]);
}

/* Dense reference of gs_gen_elasticity(nx, ny, E, nu): n x n, row-major, malloc'd. Bilinear form
 * lam div u div v + 2 mu eps(u) : eps(v). */
static double *elasticity_dense(gs_idx_t nx, gs_idx_t ny, double E, double nu)
{
  const double lam = E * nu / ((1.0 + nu) * (1.0 - 2.0 * nu)), mu = E / (2.0 * (1.0 + nu));
  const size_t n = 2 * (size_t)nx * (size_t)ny;
  double K[8][8], *A = calloc(n * n, sizeof *A);
  if (!A) return NULL;
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b) {
      K[2 * a][2 * b] = (lam + 2.0 * mu) * q1_integral(a, 0, b, 0) + mu * q1_integral(a, 1, b, 1);
      K[2 * a + 1][2 * b + 1] =
          mu * q1_integral(a, 0, b, 0) + (lam + 2.0 * mu) * q1_integral(a, 1, b, 1);
      K[2 * a][2 * b + 1] = lam * q1_integral(a, 0, b, 1) + mu * q1_integral(a, 1, b, 0);
      K[2 * a + 1][2 * b] = lam * q1_integral(a, 1, b, 0) + mu * q1_integral(a, 0, b, 1);
    }
  static const int cx[4] = {0, 1, 1, 0}, cy[4] = {0, 0, 1, 1};
  for (gs_idx_t ey = 0; ey <= ny; ++ey)
    for (gs_idx_t ex = 0; ex <= nx; ++ex) {
      long dof[8];
      for (int c = 0; c < 4; ++c) { /* lattice node (ex + cx, ey + cy); the border is fixed */
        const long px = ex + cx[c], py = ey + cy[c];
        const int in = px >= 1 && px <= nx && py >= 1 && py <= ny;
        dof[2 * c] = in ? 2 * ((py - 1) * nx + px - 1) : -1;
        dof[2 * c + 1] = in ? dof[2 * c] + 1 : -1;
      }
      for (int a = 0; a < 8; ++a)
        for (int b = 0; b < 8; ++b)
          if (dof[a] >= 0 && dof[b] >= 0) A[(size_t)dof[a] * n + (size_t)dof[b]] += K[a][b];
    }
  return A;
}

/* Cholesky of a dense SPD copy: 1 when every pivot is positive. */
static int dense_spd(const double *A, size_t n)
{
  double *L = malloc(n * n * sizeof *L);
  int ok = L != NULL;
  if (L) memcpy(L, A, n * n * sizeof *L);
  for (size_t j = 0; ok && j < n; ++j) {
    double d = L[j * n + j];
    for (size_t k = 0; k < j; ++k) d -= L[j * n + k] * L[j * n + k];
    if (!(d > 0.0)) ok = 0;
    d = sqrt(d);
    L[j * n + j] = d;
    for (size_t i = j + 1; ok && i < n; ++i) {
      double s = L[i * n + j];
      for (size_t k = 0; k < j; ++k) s -= L[i * n + k] * L[j * n + k];
      L[i * n + j] = s / d;
    }
  }
  free(L);
  return ok;
}

/* Entry counts for nu != 0 (where only the x-y couplings of a node with itself and its axis
 * neighbours cancel): 2 a node, 2 an ordered pair of axis neighbours, 4 a diagonal pair. */
static int64_t elasticity_nnz(int64_t nx, int64_t ny)
{
  return 2 * nx * ny + 4 * ((nx - 1) * ny + nx * (ny - 1)) + 16 * (nx - 1) * (ny - 1);
}

/* Against the dense reference on small grids (square and not, one node, nu = 0 where two more
 * couplings vanish, negative nu): every stored entry within rounding of the reference, every
 * entry left out below rounding there, symmetric bit for bit, positive definite. */
static void test_elasticity_reference(void)
{
  static const struct {
    gs_idx_t nx, ny;
    double E, nu;
  } cases[] = {{1, 1, 1e5, 0.3}, {2, 1, 1e5, 0.3}, {3, 3, 1e5, 0.3}, {4, 2, 7.5, 0.45},
               {2, 5, 1e5, 0.0}, {5, 4, 3e3, -0.6}, {6, 6, 1e5, 0.3}, {1, 7, 2.0, 0.1}};
  for (size_t t = 0; t < sizeof cases / sizeof cases[0]; ++t) {
    const gs_idx_t nx = cases[t].nx, ny = cases[t].ny;
    const size_t n = 2 * (size_t)nx * (size_t)ny;
    gs_csr_t *A = NULL;
    CU_ASSERT_FATAL(gs_gen_elasticity(&A, nx, ny, cases[t].E, cases[t].nu, NULL) == GS_SUCCESS);
    double *R = elasticity_dense(nx, ny, cases[t].E, cases[t].nu);
    CU_ASSERT_FATAL(R != NULL);
    CU_ASSERT(rows_ok(A, (gs_idx_t)n, (gs_idx_t)n));
    CU_ASSERT_EQUAL(A->symmetry, GS_SYM_SYMMETRIC);
    double rmax = 0.0;
    for (size_t x = 0; x < n * n; ++x) rmax = fmax(rmax, fabs(R[x]));
    const double tol = 1e-13 * rmax; /* a few roundings of sums of up to 4 element entries */
    int values = 1, left_out = 1, symmetric = 1;
    for (gs_idx_t i = 0; i < (gs_idx_t)n; ++i) {
      gs_off_t p = A->row_ptr[i];
      for (gs_idx_t j = 0; j < (gs_idx_t)n; ++j) {
        const double r = R[(size_t)i * n + (size_t)j];
        if (p < A->row_ptr[i + 1] && A->col[p] == j) {
          if (fabs(A->val[p] - r) > tol) values = 0;
          if (A->val[p] != csr_at(A, j, i)) symmetric = 0;
          ++p;
        } else if (fabs(r) > tol) {
          left_out = 0;
        }
      }
    }
    CU_ASSERT(values);
    CU_ASSERT(left_out);
    CU_ASSERT(symmetric);
    if (!values || !left_out || !symmetric)
      fprintf(stderr, "\n  elasticity %dx%d E %g nu %g: values %d left out %d symmetric %d", nx,
              ny, cases[t].E, cases[t].nu, values, left_out, symmetric);
    if (cases[t].nu != 0.0) CU_ASSERT_EQUAL(A->nnz, elasticity_nnz(nx, ny));
    if (cases[t].nu == 0.0) CU_ASSERT(A->nnz < elasticity_nnz(nx, ny)); /* lam = 0 cancels more */
    CU_ASSERT(dense_spd(R, n));
    gs_csr_destroy(&A);
    free(R);
  }
}

/* Random grids and materials (the seed is printed): counts, symmetry, the diagonal in closed form
 * (4 (lam + 3 mu) / 3: four elements' (lam + 2 mu) / 3 + mu / 3), linearity in E, and the
 * rigid-body modes: translations are unit vectors of x and y, the rotation (-y, x) about the
 * centre (its coordinates sum to 0), and A times each mode vanishes to rounding on the rows of
 * nodes without a border neighbour (the unconstrained operator's null space) but not on every
 * row next to the border (the fixed border makes them near-null only). */
static void test_elasticity_modes(void)
{
  uint64_t s = gs_test_seed() ^ 0xe1a5;
  for (int trial = 0; trial < 16; ++trial) {
    const gs_idx_t nx = 1 + (gs_idx_t)(gs_test_uniform(&s) * 40);
    const gs_idx_t ny = 1 + (gs_idx_t)(gs_test_uniform(&s) * 40);
    const double E = pow(10.0, 6.0 * gs_test_uniform(&s));
    double nu = -0.95 + 1.44 * gs_test_uniform(&s);
    if (fabs(nu) < 0.01) nu = 0.2;
    gs_csr_t *A = NULL, *A1 = NULL, *A2 = NULL;
    gs_val_t *B = NULL;
    CU_ASSERT_FATAL(gs_gen_elasticity(&A, nx, ny, E, nu, &B) == GS_SUCCESS);
    CU_ASSERT_FATAL(gs_gen_elasticity(&A1, nx, ny, 1.0, nu, NULL) == GS_SUCCESS);
    CU_ASSERT_FATAL(gs_gen_elasticity(&A2, nx, ny, E, nu, NULL) == GS_SUCCESS);
    CU_ASSERT_FATAL(B != NULL);
    const gs_idx_t n = A->m;
    CU_ASSERT_EQUAL((int64_t)n, 2 * (int64_t)nx * ny);
    CU_ASSERT(rows_ok(A, n, n));
    CU_ASSERT_EQUAL(A->nnz, elasticity_nnz(nx, ny));
    CU_ASSERT(same_csr(A, A2)); /* rbm or not, and again: the same matrix */
    gs_features_t ft;
    CU_ASSERT_FATAL(gs_csr_features(A, &ft) == GS_SUCCESS);
    CU_ASSERT(ft.numerically_symmetric);
    CU_ASSERT_EQUAL(ft.asymmetry, 0.0);
    CU_ASSERT(ft.diagonal_positive);
    const double lam = E * nu / ((1.0 + nu) * (1.0 - 2.0 * nu)), mu = E / (2.0 * (1.0 + nu));
    const double diag = 4.0 * (lam + 3.0 * mu) / 3.0;
    int diag_ok = 1, linear = 1, interior_null = 1, border_moves[3] = {0, 0, 0}, coords = 1;
    double sx = 0.0, sy = 0.0;
    for (gs_idx_t r = 0; r < n; ++r) {
      const gs_idx_t node = r / 2, i = node % nx, j = node / nx;
      if (fabs(csr_at(A, r, r) - diag) > 1e-13 * diag) diag_ok = 0;
      for (gs_off_t p = A->row_ptr[r]; p < A->row_ptr[r + 1]; ++p)
        if (fabs(A->val[p] - E * A1->val[p]) > 1e-13 * diag) linear = 0;
      /* the modes at this unknown */
      const double x = i + 1 - 0.5 * (nx + 1), y = j + 1 - 0.5 * (ny + 1);
      const int c = r % 2;
      if (B[r] != (c == 0) || B[(size_t)n + r] != (c == 1) || B[2 * (size_t)n + r] != (c ? x : -y))
        coords = 0;
      if (c == 0) sx += B[2 * (size_t)n + r + 1], sy -= B[2 * (size_t)n + r];
      const int interior = i >= 1 && i + 1 < nx && j >= 1 && j + 1 < ny;
      for (int k = 0; k < 3; ++k) {
        double ab = 0.0, aab = 0.0;
        for (gs_off_t p = A->row_ptr[r]; p < A->row_ptr[r + 1]; ++p) {
          ab += A->val[p] * B[(size_t)k * n + A->col[p]];
          aab += fabs(A->val[p] * B[(size_t)k * n + A->col[p]]);
        }
        /* the entries' own roundings (quadrature, element sums) and the row's sum */
        if (interior && fabs(ab) > 1e-13 * aab) interior_null = 0;
        if (!interior && fabs(ab) > 1e-3 * diag) border_moves[k] = 1;
      }
    }
    CU_ASSERT(diag_ok);
    CU_ASSERT(linear);
    CU_ASSERT(coords);
    CU_ASSERT(sx == 0.0 && sy == 0.0); /* half-integers, summed exactly */
    CU_ASSERT(interior_null);
    CU_ASSERT(border_moves[0] && border_moves[1]);
    if (!interior_null || !diag_ok || !linear || !coords)
      fprintf(stderr, "\n  elasticity %dx%d E %g nu %g: diag %d linear %d coords %d null %d", nx,
              ny, E, nu, diag_ok, linear, coords, interior_null);
    free(B);
    gs_csr_destroy(&A);
    gs_csr_destroy(&A1);
    gs_csr_destroy(&A2);
  }
}

static void test_elasticity_errors(void)
{
  EXPECT_INVALID(gs_gen_elasticity(&A_, 0, 5, 1e5, 0.3, NULL));
  EXPECT_INVALID(gs_gen_elasticity(&A_, 5, -1, 1e5, 0.3, NULL));
  EXPECT_INVALID(gs_gen_elasticity(&A_, 5, 5, 0.0, 0.3, NULL));
  EXPECT_INVALID(gs_gen_elasticity(&A_, 5, 5, -1.0, 0.3, NULL));
  EXPECT_INVALID(gs_gen_elasticity(&A_, 5, 5, NAN, 0.3, NULL));
  EXPECT_INVALID(gs_gen_elasticity(&A_, 5, 5, INFINITY, 0.3, NULL));
  EXPECT_INVALID(gs_gen_elasticity(&A_, 5, 5, 1e5, 0.5, NULL));
  EXPECT_INVALID(gs_gen_elasticity(&A_, 5, 5, 1e5, -1.0, NULL));
  EXPECT_INVALID(gs_gen_elasticity(&A_, 5, 5, 1e5, NAN, NULL));
  /* 2^31 unknowns: one more than int32 holds (refused before any allocation) */
  EXPECT_INVALID(gs_gen_elasticity(&A_, 32768, 32768, 1e5, 0.3, NULL));
  gs_val_t *B = (gs_val_t *)&B; /* not NULL: every call must reset it */
  CU_ASSERT_EQUAL(gs_gen_elasticity(NULL, 5, 5, 1e5, 0.3, &B), GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NULL(B);
  gs_csr_t *A = NULL;
  B = (gs_val_t *)&B;
  CU_ASSERT_EQUAL(gs_gen_elasticity(&A, 5, 5, 1e5, 0.5, &B), GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NULL(B);
  CU_ASSERT_PTR_NOT_NULL(strstr(gs_last_error(), "Poisson's ratio 0.5"));
  CU_ASSERT_EQUAL(gs_gen_elasticity(&A, 32768, 32768, 1e5, 0.3, NULL), GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NOT_NULL(strstr(gs_last_error(), "more than 2^31-1 unknowns"));
  CU_ASSERT_PTR_NULL(A);
  /* the edges of the ranges are taken: one node (its x-y coupling cancels), nu near -1 */
  CU_ASSERT_EQUAL(gs_gen_elasticity(&A, 1, 1, 1e5, -0.999, &B), GS_SUCCESS);
  CU_ASSERT(A && B && A->m == 2 && A->nnz == 2);
  free(B);
  gs_csr_destroy(&A);
}

/* The threaded fill of gs_gen_laplace (grid lines shared out, each share at its closed-form
 * offset) gives the one-thread matrix bit for bit, for every stencil, on grids with 1, 2 and
 * more points per dimension; and the threaded host product (rows shared out) the one-thread
 * product bit for bit. */
static void laplace_same(gs_idx_t nx, gs_idx_t ny, gs_idx_t nz, int stencil, int nt)
{
  gs_csr_t *A1 = NULL, *At = NULL;
  gs_mm_set_threads(1);
  CU_ASSERT_FATAL(gs_gen_laplace(&A1, nx, ny, nz, stencil) == GS_SUCCESS);
  gs_mm_set_threads(nt);
  CU_ASSERT_FATAL(gs_gen_laplace(&At, nx, ny, nz, stencil) == GS_SUCCESS);
  CU_ASSERT_FATAL(A1->m == At->m && A1->nnz == At->nnz);
  const int same = !memcmp(A1->row_ptr, At->row_ptr, ((size_t)A1->m + 1) * sizeof *A1->row_ptr) &&
                   !memcmp(A1->col, At->col, (size_t)A1->nnz * sizeof *A1->col) &&
                   !memcmp(A1->val, At->val, (size_t)A1->nnz * sizeof *A1->val);
  if (!same) printf("\n  %d x %d x %d, %d-point, %d threads: differs\n", nx, ny, nz, stencil, nt);
  CU_ASSERT(same);
  gs_csr_destroy(&A1);
  gs_csr_destroy(&At);
}

static void test_laplace_threads(void)
{
  uint64_t s = gs_test_seed() ^ 0x7e11;
  const int64_t keep = gs_gen_share_min;
  gs_gen_share_min = 1; /* every grid line may be a share */
  for (int rep = 0; rep < 12; ++rep) {
    const int nt = 2 + (int)(gs_test_uniform(&s) * 7);
    const gs_idx_t a = 1 + (gs_idx_t)(gs_test_uniform(&s) * 9),
                   b = 1 + (gs_idx_t)(gs_test_uniform(&s) * 9),
                   c = 1 + (gs_idx_t)(gs_test_uniform(&s) * 9);
    laplace_same(a, 1, 1, 3, nt);
    laplace_same(a, b, 1, 5, nt);
    laplace_same(a, b, 1, 9, nt);
    laplace_same(a, b, c, 7, nt);
    laplace_same(a, b, c, 27, nt);
  }
  laplace_same(1, 1, 1, 27, 4);
  laplace_same(2, 2, 2, 27, 8);
  laplace_same(3, 1, 5, 7, 64); /* more threads than lines */
  gs_gen_share_min = keep;

  /* the host product on threads (matrices of 2^20 entries or more) */
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_gen_laplace(&A, 37, 41, 29, 27) == GS_SUCCESS);
  CU_ASSERT_FATAL(A->nnz >= ((int64_t)1 << 20));
  const size_t m = (size_t)A->m;
  double *x = malloc(m * sizeof *x), *y0 = malloc(m * sizeof *y0), *y1 = malloc(m * sizeof *y1);
  double *yt = malloc(m * sizeof *yt);
  CU_ASSERT_FATAL(x && y0 && y1 && yt);
  for (size_t i = 0; i < m; ++i) {
    x[i] = gs_test_uniform(&s) - 0.5;
    y0[i] = gs_test_uniform(&s);
  }
  const double cases[2][2] = {{1.0, 0.0}, {-0.5, 2.0}};
  for (int k = 0; k < 2; ++k) {
    memcpy(y1, y0, m * sizeof *y1);
    memcpy(yt, y0, m * sizeof *yt);
    gs_mm_set_threads(1);
    CU_ASSERT(gs_csr_spmv_host(A, GS_OP_N, cases[k][0], x, cases[k][1], y1) == GS_SUCCESS);
    gs_mm_set_threads(2 + (int)(gs_test_uniform(&s) * 7));
    CU_ASSERT(gs_csr_spmv_host(A, GS_OP_N, cases[k][0], x, cases[k][1], yt) == GS_SUCCESS);
    CU_ASSERT(!memcmp(y1, yt, m * sizeof *y1));
    /* and the rows themselves, summed here in the same order */
    size_t bad = 0;
    for (size_t i = 0; i < m; ++i) {
      double a = 0.0;
      for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) a += A->val[p] * x[A->col[p]];
      const double want = cases[k][1] == 0.0 ? cases[k][0] * a : cases[k][0] * a + cases[k][1] * y0[i];
      bad += yt[i] != want;
    }
    CU_ASSERT_EQUAL(bad, 0);
  }
  gs_mm_set_threads(0);
  free(x);
  free(y0);
  free(y1);
  free(yt);
  gs_csr_destroy(&A);
}

int main(void)
{
  CU_TestInfo tests[] = {
    {"laplace nonzero counts (Table 2 of Bell & Garland)", test_laplace_counts},
    {"laplace against a dense construction, SPD", test_laplace_structure_dense},
    {"laplace symmetric, diagonally dominant", test_laplace_symmetric_dominant},
    {"laplace and the host product on threads: one thread's bits", test_laplace_threads},
    {"normal: rows, all sampling paths", test_normal_rows},
    {"normal: sigma 0 and tiny sigma give a band", test_normal_degenerate_sigma},
    {"normal: column offsets have std sigma", test_normal_distribution},
    {"normal: small sigma follows the definition", test_normal_matches_definition},
    {"random: rows and uniform columns", test_random_rows},
    {"pareto: row lengths 32 + Pareto", test_pareto_rows},
    {"powerlaw: rows, mean, both sampling paths", test_powerlaw_rows},
    {"powerlaw: Zipf law, heavy tail, popular columns", test_powerlaw_tail},
    {"seeds: same seed same matrix", test_seeds},
    {"errors", test_errors},
    {"convdiff: counts, P = 0 is the Laplacian", test_convdiff_counts_and_laplace},
    {"convdiff: M-matrix signs, dominance, nonsymmetry", test_convdiff_m_matrix},
    {"convdiff: upwind direction", test_convdiff_upwind_direction},
    {"convdiff: seeds and errors", test_convdiff_seeds_and_errors},
    {"elasticity: against a dense reference, SPD", test_elasticity_reference},
    {"elasticity: random grids, rigid-body modes", test_elasticity_modes},
    {"elasticity: errors", test_elasticity_errors},
    CU_TEST_INFO_NULL};
  return gs_test_main("gen", tests, 0);
}
