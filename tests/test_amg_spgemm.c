/* tests/test_amg_spgemm.c: our own device SpGEMM (gs_amg_spgemm_own_dev,
 * precond/amg_spgemm_kernels.cu) against the host reference gs_amg_spgemm_host, BIT FOR BIT:
 * equal shapes and row pointers, memcmp of the columns and of the values (the contract: each
 * sum from 0.0 in the order of A's row, every product and sum rounded on its own).
 *   - random m x k times k x n products, m != n, 2^16 and more columns, row lengths of every
 *     class (empty rows, rows of A whose B rows are all empty), values uniform, small integers
 *     (sums that cancel to explicit zeros, which both keep) or with explicit and negative zeros;
 *   - rows of exactly 0 .. 50000 products, on both sides of each bin's boundary of the kernels
 *     (4, 8, 16, 32 lanes, a warp with 2, 4, 8 keys a lane, a block, the global-memory sort),
 *     few columns (long runs of one column) and many;
 *   - the AMG pair: A P and R (A P) for generated Laplacians and the SPD matrices of
 *     GS_MATRIX_DIR, P from the host setup (gs_amg_*_host), two levels;
 *   - the bounded variant with tiny bounds (a pass a row, a few rows a pass);
 *   - 0 rows, 0 entries, an inner dimension of 0, 0 columns;
 *   - allocation failure k, for every k until success: GS_ERR_DEVICE_MEMORY, C zeroed and the
 *     context's device bytes back to their start;
 *   - refusals: dimensions that disagree, NULL and oversized arguments.
 * Random inputs take the printed seed (GS_TEST_SEED repeats it). Exits 77 without a device. */
#define _POSIX_C_SOURCE 200809L
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
    g_state = gs_test_seed() ^ 0x5e6e11ull;
    g_seeded = 1;
  }
  return &g_state;
}

static int64_t rnd(uint64_t *s, int64_t n) { return (int64_t)(gs_test_next(s) % (uint64_t)n); }

static void *xmalloc(size_t bytes)
{
  void *p = malloc(bytes ? bytes : 1);
  CU_ASSERT_FATAL(p != NULL);
  return p;
}

/* The bins of precond/amg_spgemm_kernels.cu by products a row (upper limits). */
static const int64_t bin_max[] = {0, 4, 8, 16, 32, 64, 128, 256, 4096, INT64_MAX};
#define NBINS 10

/* ---- device copies ----------------------------------------------------------------------------- */

static void *to_dev(const void *h, size_t bytes)
{
  void *p = NULL;
  CU_ASSERT_FATAL(gs_dmalloc(ctx, &p, bytes, "test buffer") == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_copy_to_device(ctx, p, h, bytes) == GS_SUCCESS);
  return p;
}

/* ---- comparisons ----------------------------------------------------------------------------- */

/* n elements of `elem` bytes equal byte for byte; otherwise one line naming the first that
 * differs and 0. */
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

/* D equals H bit for bit. */
static int same_csr(const gs_csr_t *D, const gs_csr_t *H, const char *label)
{
  if (D->m != H->m || D->n != H->n || D->nnz != H->nnz) {
    fprintf(stderr, "  %s: device %d x %d with %lld entries, host %d x %d with %lld\n", label,
            (int)D->m, (int)D->n, (long long)D->nnz, (int)H->m, (int)H->n, (long long)H->nnz);
    return 0;
  }
  return same_bytes(D->row_ptr, H->row_ptr, (size_t)H->m + 1, sizeof *H->row_ptr, 0, label,
                    "row_ptr") &&
         same_bytes(D->col, H->col, (size_t)H->nnz, sizeof *H->col, 0, label, "col") &&
         same_bytes(D->val, H->val, (size_t)H->nnz, sizeof *H->val, 1, label, "val");
}

/* hits[b] = rows of A whose products fall in bin b. */
static void bin_hits(const gs_csr_t *A, const gs_csr_t *B, int64_t *hits)
{
  for (int b = 0; b < NBINS; ++b) hits[b] = 0;
  for (gs_idx_t i = 0; i < A->m; ++i) {
    int64_t u = 0;
    for (int64_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p)
      u += B->row_ptr[A->col[p] + 1] - B->row_ptr[A->col[p]];
    int b = 0;
    while (u > bin_max[b]) ++b;
    ++hits[b];
  }
}

/* C = A B by the device (bounded: `bound`, 0 the default) and by the host, equal bit for bit;
 * the device's C freed and the context's bytes back where they were. *zeros (when not NULL)
 * gets the host result's entries that are exactly 0. Returns 1 when equal. */
static int check_product(const gs_csr_t *A, const gs_csr_t *B, size_t bound, const char *label,
                         int64_t *zeros)
{
  gs_csr_t *H = NULL, *D = NULL;
  gs_amg_dcsr_t dA, dB, dC;
  CU_ASSERT_FATAL(gs_amg_spgemm_host(A, B, &H) == GS_SUCCESS);
  gs_test_amg_upload(ctx, A, &dA);
  gs_test_amg_upload(ctx, B, &dB);
  const size_t base = gs_device_bytes_in_use(ctx);
  const gs_status_t st = gs_amg_spgemm_own_dev_bounded(ctx, &dA, &dB, &dC, bound);
  if (st != GS_SUCCESS) fprintf(stderr, "  %s: %s\n", label, gs_last_error());
  CU_ASSERT_FATAL(st == GS_SUCCESS);
  D = gs_test_amg_download(ctx, &dC);
  const int ok = same_csr(D, H, label);
  CU_ASSERT(ok);
  gs_amg_dcsr_free(ctx, &dC);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
  if (zeros) {
    *zeros = 0;
    for (int64_t p = 0; p < H->nnz; ++p) *zeros += H->val[p] == 0.0;
  }
  gs_amg_dcsr_free(ctx, &dA);
  gs_amg_dcsr_free(ctx, &dB);
  gs_csr_destroy(&H);
  gs_csr_destroy(&D);
  return ok;
}

/* ---- matrices ---------------------------------------------------------------------------------- */

enum { VAL_UNIFORM, VAL_INT, VAL_ZEROS };

static double draw_val(uint64_t *s, int kind)
{
  static const double ints[] = {-2.0, -1.0, 1.0, 2.0};
  if (kind == VAL_INT) return ints[rnd(s, 4)];
  if (kind == VAL_ZEROS) {
    const int64_t c = rnd(s, 10);
    if (c == 0) return 0.0;
    if (c == 1) return -0.0;
    if (c < 5) return ints[rnd(s, 4)];
  }
  return 2.0 * gs_test_uniform(s) - 1.0;
}

static int cmp_idx(const void *a, const void *b)
{
  const gs_idx_t x = *(const gs_idx_t *)a, y = *(const gs_idx_t *)b;
  return (x > y) - (x < y);
}

/* m x n CSR, row i holding len[i] (<= n) distinct random columns among [lo[i], lo[i] + span[i])
 * (lo, span NULL: all columns), sorted, values of `kind`. */
static gs_csr_t *random_csr(uint64_t *s, gs_idx_t m, gs_idx_t n, const int64_t *len,
                            const gs_idx_t *lo, const gs_idx_t *span, int kind)
{
  int64_t nnz = 0;
  for (gs_idx_t i = 0; i < m; ++i) nnz += len[i];
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_csr_create(&A, m, n, nnz) == GS_SUCCESS);
  gs_idx_t *perm = xmalloc((size_t)n * sizeof *perm);
  for (gs_idx_t j = 0; j < n; ++j) perm[j] = j;
  int64_t q = 0;
  A->row_ptr[0] = 0;
  for (gs_idx_t i = 0; i < m; ++i) {
    const gs_idx_t a = lo ? lo[i] : 0, w = span ? span[i] : n;
    CU_ASSERT_FATAL(len[i] <= w && a + w <= n);
    /* partial Fisher-Yates over perm[a, a + w): a permutation of those columns */
    for (int64_t t = 0; t < len[i]; ++t) {
      const int64_t r = a + t + rnd(s, w - t);
      const gs_idx_t x = perm[a + t];
      perm[a + t] = perm[r];
      perm[r] = x;
      A->col[q + t] = perm[a + t];
    }
    qsort(A->col + q, (size_t)len[i], sizeof *A->col, cmp_idx);
    for (int64_t t = 0; t < len[i]; ++t) A->val[q + t] = draw_val(s, kind);
    q += len[i];
    A->row_ptr[i + 1] = q;
  }
  free(perm);
  return A;
}

/* Row lengths: each row takes class c with probability w[c] / sum(w), then a length uniform in
 * [lo[c], hi[c]], capped at cap. */
static void draw_lengths(uint64_t *s, gs_idx_t m, int nc, const int *w, const int64_t *lo,
                         const int64_t *hi, int64_t cap, int64_t *len)
{
  int tot = 0;
  for (int c = 0; c < nc; ++c) tot += w[c];
  for (gs_idx_t i = 0; i < m; ++i) {
    int64_t u = rnd(s, tot);
    int c = 0;
    while (u >= w[c]) u -= w[c++];
    int64_t l = lo[c] + rnd(s, hi[c] - lo[c] + 1);
    len[i] = l < cap ? l : cap;
  }
}

/* ---- tests ------------------------------------------------------------------------------------- */

/* Random products of several shapes and row-length mixes. */
static void test_random(void)
{
  uint64_t *s = rng();
  /* A rows: empty, short, medium, long, very long */
  const int wa[] = {10, 50, 25, 10, 4, 1};
  const int64_t la[] = {0, 1, 7, 41, 301, 1501}, ha[] = {0, 6, 40, 300, 1500, 5000};
  /* B rows: light (mostly 0-4 entries, the register bins) and heavy tails */
  const int wl[] = {15, 80, 5}, wh[] = {10, 60, 20, 8, 2};
  const int64_t ll[] = {0, 1, 5}, hl[] = {0, 4, 12};
  const int64_t lh[] = {0, 1, 5, 31, 201}, hh[] = {0, 4, 30, 200, 3000};
  struct {
    gs_idx_t m, k, n;
    int heavy, kind;
  } cases[] = {
      {3001, 2500, 70001, 0, VAL_UNIFORM}, {2000, 7000, 65600, 1, VAL_UNIFORM},
      {1500, 4000, 300, 0, VAL_INT},       {900, 5000, 40, 1, VAL_INT},
      {4000, 6000, 131073, 0, VAL_ZEROS},  {700, 3000, 2000, 1, VAL_ZEROS},
  };
  int64_t all[NBINS] = {0};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    const gs_idx_t m = cases[c].m, k = cases[c].k, n = cases[c].n;
    int64_t *lenA = xmalloc((size_t)m * sizeof *lenA), *lenB = xmalloc((size_t)k * sizeof *lenB);
    draw_lengths(s, m, 6, wa, la, ha, k, lenA);
    if (cases[c].heavy) draw_lengths(s, k, 5, wh, lh, hh, n, lenB);
    else draw_lengths(s, k, 3, wl, ll, hl, n, lenB);
    gs_csr_t *A = random_csr(s, m, k, lenA, NULL, NULL, cases[c].kind);
    gs_csr_t *B = random_csr(s, k, n, lenB, NULL, NULL, cases[c].kind);
    char label[128];
    snprintf(label, sizeof label, "random %d x %d times %d x %d (%s B, values %d)", (int)m,
             (int)k, (int)k, (int)n, cases[c].heavy ? "heavy" : "light", cases[c].kind);
    int64_t hits[NBINS], zeros = 0;
    bin_hits(A, B, hits);
    for (int b = 0; b < NBINS; ++b) all[b] += hits[b];
    check_product(A, B, 0, label, &zeros);
    if (cases[c].kind != VAL_UNIFORM) CU_ASSERT(zeros > 0); /* cancellations kept */
    gs_csr_destroy(&A);
    gs_csr_destroy(&B);
    free(lenA);
    free(lenB);
  }
  for (int b = 0; b < NBINS; ++b) {
    if (all[b] == 0) fprintf(stderr, "  random: no row of bin %d (up to %lld products)\n", b,
                             (long long)bin_max[b]);
    CU_ASSERT(all[b] > 0);
  }
}

/* Rows of exact product counts around each bin boundary, for B of n columns: B's rows 0..4999
 * hold one entry, 5000..5999 L = min(100, n), 6000..6099 none; a row of t <= 5000 products
 * takes t of the first rows, a longer one t / L of the second, and every row also 0..3 of the
 * empty ones (entries of A that make no product). Three rows of each t, in a shuffled order. */
static void check_boundaries(uint64_t *s, gs_idx_t n)
{
  static const int64_t targets[] = {0,    1,    2,    3,    4,    5,     7,     8,   9,
                                    15,   16,   17,   31,   32,   33,    63,    64,  65,
                                    127,  128,  129,  255,  256,  257,   1000,  4095, 4096,
                                    4097, 5000, 10000, 50000};
  const gs_idx_t nt = (gs_idx_t)(sizeof targets / sizeof targets[0]);
  const gs_idx_t k = 6100, m = 3 * nt, L = n < 100 ? n : 100;
  int64_t *lenB = xmalloc((size_t)k * sizeof *lenB), *lenA = xmalloc((size_t)m * sizeof *lenA);
  int64_t *extra = xmalloc((size_t)m * sizeof *extra);
  for (gs_idx_t r = 0; r < k; ++r) lenB[r] = r < 5000 ? 1 : r < 6000 ? L : 0;
  gs_csr_t *B = random_csr(s, k, n, lenB, NULL, NULL, VAL_UNIFORM);
  int64_t nnz = 0;
  for (gs_idx_t i = 0; i < m; ++i) {
    const int64_t t = targets[(i * 7) % nt];
    lenA[i] = t <= 5000 ? t : t / L;
    extra[i] = rnd(s, 4);
    nnz += lenA[i] + extra[i];
  }
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_csr_create(&A, m, k, nnz) == GS_SUCCESS);
  gs_idx_t *perm = xmalloc((size_t)k * sizeof *perm);
  for (gs_idx_t j = 0; j < k; ++j) perm[j] = j;
  int64_t q = 0;
  for (gs_idx_t i = 0; i < m; ++i) {
    const int64_t t = targets[(i * 7) % nt];
    const gs_idx_t a = t <= 5000 ? 0 : 5000, w = t <= 5000 ? 5000 : 1000;
    int64_t c = 0;
    for (int64_t u = 0; u < lenA[i]; ++u, ++c) { /* partial Fisher-Yates in [a, a + w) */
      const int64_t r = a + u + rnd(s, w - u);
      const gs_idx_t x = perm[a + u];
      perm[a + u] = perm[r];
      perm[r] = x;
      A->col[q + c] = perm[a + u];
    }
    for (int64_t u = 0; u < extra[i]; ++u, ++c) A->col[q + c] = 6000 + (gs_idx_t)(u * 31 + rnd(s, 31));
    qsort(A->col + q, (size_t)c, sizeof *A->col, cmp_idx);
    for (int64_t u = 0; u < c; ++u) A->val[q + u] = draw_val(s, VAL_ZEROS);
    q += c;
    A->row_ptr[i + 1] = q;
  }
  char label[96];
  snprintf(label, sizeof label, "bin boundaries, B with %d columns", (int)n);
  int64_t hits[NBINS];
  bin_hits(A, B, hits);
  for (int b = 0; b < NBINS; ++b) CU_ASSERT(hits[b] > 0);
  check_product(A, B, 0, label, NULL);
  gs_csr_destroy(&A);
  gs_csr_destroy(&B);
  free(perm);
  free(lenA);
  free(lenB);
  free(extra);
}

static void test_boundaries(void)
{
  check_boundaries(rng(), 50);    /* few columns: long runs of one column */
  check_boundaries(rng(), 70000); /* more than 2^16 */
}

/* Cancellation: sums that are exactly 0 and negative zeros. Row 0 of C: 1*1 + 1*(-1) = 0 in
 * column 0 (kept); row 1: (-0.0)*1 and (-0.0)*0.0 alone, which the host sums as
 * 0.0 + (-0.0) = +0.0 (a sum started from the first product would keep -0.0); row 2:
 * (-1)*1 + 0.0*(-1) = -1, (-1)*0.0 = -0.0 alone, 0.0*1; row 3 empty. */
static void test_cancellation(void)
{
  gs_csr_t *A = NULL, *B = NULL;
  CU_ASSERT_FATAL(gs_csr_create(&A, 4, 2, 5) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_csr_create(&B, 2, 3, 4) == GS_SUCCESS);
  const int64_t arp[] = {0, 2, 3, 5, 5};
  const gs_idx_t acol[] = {0, 1, 0, 0, 1};
  const double aval[] = {1.0, 1.0, -0.0, -1.0, 0.0};
  const int64_t brp[] = {0, 2, 4};
  const gs_idx_t bcol[] = {0, 2, 0, 1};
  const double bval[] = {1.0, 0.0, -1.0, 1.0};
  memcpy(A->row_ptr, arp, sizeof arp);
  memcpy(A->col, acol, sizeof acol);
  memcpy(A->val, aval, sizeof aval);
  memcpy(B->row_ptr, brp, sizeof brp);
  memcpy(B->col, bcol, sizeof bcol);
  memcpy(B->val, bval, sizeof bval);
  int64_t zeros = 0;
  check_product(A, B, 0, "cancellation", &zeros);
  CU_ASSERT(zeros >= 3);
  gs_csr_destroy(&A);
  gs_csr_destroy(&B);
}

/* A P and R (A P) of one level: P from the host setup (strength 0.08, aggregates, tentative of
 * ones, smoothed with omega = (4/3) / ||D^-1 A||_inf); returns the host's A_c (NULL when the
 * level has no aggregate). */
static gs_csr_t *check_level(const gs_csr_t *A, const char *name, int level)
{
  const gs_idx_t n = A->m;
  char label[160];
  double *d = xmalloc((size_t)n * sizeof *d), *t = xmalloc((size_t)n * sizeof *t);
  uint8_t *strong = xmalloc((size_t)A->nnz);
  int32_t *agg = xmalloc((size_t)n * sizeof *agg), naggs = 0;
  int rounds = 0;
  gs_csr_t *P = NULL, *R = NULL, *AP = NULL, *Ac = NULL;
  gs_amg_diag_host(A, d);
  gs_amg_strength_host(A, d, 0.08, strong);
  CU_ASSERT_FATAL(gs_amg_aggregate_host(A, strong, agg, &naggs, &rounds) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_amg_tentative_host(n, agg, naggs, NULL, t) == GS_SUCCESS);
  double rho = 0.0;
  for (gs_idx_t i = 0; i < n; ++i) {
    double r = 0.0;
    for (int64_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) r += fabs(A->val[p]);
    if (d[i] != 0.0 && r / fabs(d[i]) > rho) rho = r / fabs(d[i]);
  }
  const double omega = rho > 0.0 ? (4.0 / 3.0) / rho : 1.0;
  if (naggs > 0 && gs_amg_smooth_p_host(A, d, agg, t, naggs, omega, &P) == GS_SUCCESS) {
    snprintf(label, sizeof label, "%s level %d: A P (%d x %d times %d x %d)", name, level,
             (int)A->m, (int)A->n, (int)P->m, (int)P->n);
    check_product(A, P, 0, label, NULL);
    CU_ASSERT_FATAL(gs_amg_spgemm_host(A, P, &AP) == GS_SUCCESS);
    CU_ASSERT_FATAL(gs_csr_transpose(&R, P) == GS_SUCCESS);
    snprintf(label, sizeof label, "%s level %d: R (A P) (%d x %d times %d x %d)", name, level,
             (int)R->m, (int)R->n, (int)AP->m, (int)AP->n);
    check_product(R, AP, 0, label, NULL);
    CU_ASSERT_FATAL(gs_amg_spgemm_host(R, AP, &Ac) == GS_SUCCESS);
  }
  gs_csr_destroy(&P);
  gs_csr_destroy(&R);
  gs_csr_destroy(&AP);
  free(d);
  free(t);
  free(strong);
  free(agg);
  return Ac;
}

/* Levels 0 and 1 from A (the coarse matrices are the host's). */
static void check_levels(const gs_csr_t *A, const char *name)
{
  gs_csr_t *own = NULL;
  for (int level = 0; level < 2 && A && A->m > 1; ++level) {
    gs_csr_t *Ac = check_level(A, name, level);
    gs_csr_destroy(&own);
    A = own = Ac;
  }
  gs_csr_destroy(&own);
}

static void test_amg_pair(void)
{
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_gen_laplace(&A, 300, 300, 1, 5) == GS_SUCCESS);
  check_levels(A, "2D Laplacian 300^2");
  gs_csr_destroy(&A);
  CU_ASSERT_FATAL(gs_gen_laplace(&A, 30, 30, 30, 27) == GS_SUCCESS);
  check_levels(A, "27-point 30^3");
  gs_csr_destroy(&A);
  if (!gs_test_have_matrices()) return;
  char path[4096], line[8192];
  snprintf(path, sizeof path, "%s/MANIFEST.tsv", gs_test_matrix_dir());
  FILE *f = fopen(path, "r");
  if (!f) {
    printf("skipped: %s not found\n", path);
    return;
  }
  int checked = 0;
  if (!fgets(line, sizeof line, f)) line[0] = '\0'; /* header */
  while (fgets(line, sizeof line, f)) {
    char *save = NULL, *name = strtok_r(line, "\t", &save), *cat = strtok_r(NULL, "\t", &save);
    if (!name || !cat || strcmp(cat, "spd") != 0 || !gs_test_have_matrix(name)) continue;
    if (gs_mm_read_csr(gs_test_matrix(name), &A) != GS_SUCCESS) {
      fprintf(stderr, "  cannot read %s: %s\n", name, gs_last_error());
      CU_FAIL("matrix not read");
      continue;
    }
    check_levels(A, name);
    gs_csr_destroy(&A);
    ++checked;
  }
  fclose(f);
  CU_ASSERT(checked >= 1);
}

/* A product with rows of every bin, for the bounded and allocation tests. */
static void mixed_pair(uint64_t *s, gs_csr_t **A, gs_csr_t **B)
{
  const gs_idx_t m = 600, k = 900, n = 70000;
  const int wa[] = {10, 60, 20, 10}, wb[] = {10, 70, 15, 5};
  const int64_t la[] = {0, 1, 6, 60}, ha[] = {0, 5, 40, 400};
  const int64_t lb[] = {0, 1, 3, 30}, hb[] = {0, 2, 20, 120};
  int64_t *lenA = xmalloc((size_t)m * sizeof *lenA), *lenB = xmalloc((size_t)k * sizeof *lenB);
  draw_lengths(s, m, 4, wa, la, ha, k, lenA);
  draw_lengths(s, k, 4, wb, lb, hb, n, lenB);
  for (int i = 0; i < 3; ++i) lenA[i] = 890; /* about 5800 products: the global-memory sort */
  *A = random_csr(s, m, k, lenA, NULL, NULL, VAL_ZEROS);
  *B = random_csr(s, k, n, lenB, NULL, NULL, VAL_INT);
  free(lenA);
  free(lenB);
}

/* The bounded variant: a pass a row (bound 1), a few rows a pass, about a tenth of the product a
 * pass, and everything at once. */
static void test_bounded(void)
{
  uint64_t *s = rng();
  gs_csr_t *A = NULL, *B = NULL;
  mixed_pair(s, &A, &B);
  int64_t hits[NBINS], total = 0;
  bin_hits(A, B, hits);
  for (int b = 1; b < NBINS; ++b) CU_ASSERT(hits[b] > 0);
  for (gs_idx_t i = 0; i < A->m; ++i)
    for (int64_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p)
      total += B->row_ptr[A->col[p] + 1] - B->row_ptr[A->col[p]];
  const size_t bounds[] = {1, 12 * 64, (size_t)total * 36 / 10, (size_t)total * 36, 0};
  for (size_t c = 0; c < sizeof bounds / sizeof bounds[0]; ++c) {
    char label[64];
    snprintf(label, sizeof label, "bound %zu bytes", bounds[c]);
    check_product(A, B, bounds[c], label, NULL);
  }
  gs_csr_destroy(&A);
  gs_csr_destroy(&B);
}

/* 0 rows, 0 entries (in A, in B), an inner dimension of 0, 0 columns. */
static void test_empty(void)
{
  uint64_t *s = rng();
  struct {
    gs_idx_t m, k, n;
    int64_t la, lb; /* entries a row of A, of B */
  } cases[] = {{0, 5, 7, 0, 2}, {3, 4, 5, 0, 2}, {3, 4, 5, 2, 0}, {3, 0, 4, 0, 0},
               {3, 4, 0, 2, 0}, {0, 0, 0, 0, 0}, {1, 1, 1, 1, 1}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    int64_t *lenA = xmalloc(((size_t)cases[c].m + 1) * sizeof *lenA);
    int64_t *lenB = xmalloc(((size_t)cases[c].k + 1) * sizeof *lenB);
    for (gs_idx_t i = 0; i < cases[c].m; ++i) lenA[i] = cases[c].la;
    for (gs_idx_t i = 0; i < cases[c].k; ++i) lenB[i] = cases[c].lb;
    gs_csr_t *A = random_csr(s, cases[c].m, cases[c].k, lenA, NULL, NULL, VAL_UNIFORM);
    gs_csr_t *B = random_csr(s, cases[c].k, cases[c].n, lenB, NULL, NULL, VAL_UNIFORM);
    char label[96];
    snprintf(label, sizeof label, "%d x %d (%lld a row) times %d x %d (%lld a row)",
             (int)cases[c].m, (int)cases[c].k, (long long)cases[c].la, (int)cases[c].k,
             (int)cases[c].n, (long long)cases[c].lb);
    check_product(A, B, 0, label, NULL);
    gs_csr_destroy(&A);
    gs_csr_destroy(&B);
    free(lenA);
    free(lenB);
  }
}

/* Allocation k failing, for every k until the product succeeds, one pass and several: the
 * status is out of device memory, C is zeroed and no device memory stays allocated. */
static void test_allocation_failures(void)
{
  uint64_t *s = rng();
  gs_csr_t *A = NULL, *B = NULL, *H = NULL;
  mixed_pair(s, &A, &B);
  CU_ASSERT_FATAL(gs_amg_spgemm_host(A, B, &H) == GS_SUCCESS);
  gs_amg_dcsr_t dA, dB, dC;
  gs_test_amg_upload(ctx, A, &dA);
  gs_test_amg_upload(ctx, B, &dB);
  const size_t bounds[] = {0, 12 * 4096};
  for (size_t c = 0; c < sizeof bounds / sizeof bounds[0]; ++c) {
    int done = 0;
    for (long k = 1; k <= 4096 && !done; ++k) {
      const size_t base = gs_device_bytes_in_use(ctx);
      gs_test_dmalloc_fail_after(ctx, k);
      const gs_status_t st = gs_amg_spgemm_own_dev_bounded(ctx, &dA, &dB, &dC, bounds[c]);
      gs_test_dmalloc_fail_after(ctx, 0);
      if (st == GS_SUCCESS) {
        done = 1;
        gs_csr_t *D = gs_test_amg_download(ctx, &dC);
        char label[64];
        snprintf(label, sizeof label, "after %ld allocations, bound %zu", k - 1, bounds[c]);
        CU_ASSERT(same_csr(D, H, label));
        gs_csr_destroy(&D);
        gs_amg_dcsr_free(ctx, &dC);
      } else {
        if (st != GS_ERR_DEVICE_MEMORY)
          fprintf(stderr, "  allocation %ld, bound %zu: %s\n", k, bounds[c], gs_last_error());
        CU_ASSERT_EQUAL(st, GS_ERR_DEVICE_MEMORY);
        CU_ASSERT(dC.rp == NULL && dC.col == NULL && dC.val == NULL && dC.nnz == 0);
      }
      CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
    }
    CU_ASSERT(done);
  }
  gs_amg_dcsr_free(ctx, &dA);
  gs_amg_dcsr_free(ctx, &dB);
  gs_csr_destroy(&A);
  gs_csr_destroy(&B);
  gs_csr_destroy(&H);
}

/* Dimensions that disagree, NULL arguments, more entries than 32-bit row pointers hold. */
static void test_refusals(void)
{
  gs_amg_dcsr_t A, B, C;
  memset(&A, 0, sizeof A);
  memset(&B, 0, sizeof B);
  A.m = 3;
  A.n = 4;
  B.m = 5;
  B.n = 2;
  CU_ASSERT_EQUAL(gs_amg_spgemm_own_dev(ctx, &A, &B, &C), GS_ERR_DIMENSION);
  CU_ASSERT(strstr(gs_last_error(), "3 x 4") != NULL);
  B.m = 4;
  CU_ASSERT_EQUAL(gs_amg_spgemm_own_dev(ctx, NULL, &B, &C), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_amg_spgemm_own_dev(ctx, &A, &B, NULL), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_amg_spgemm_own_dev(NULL, &A, &B, &C), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_amg_spgemm_own_dev(ctx, &A, &B, &C), GS_ERR_INVALID_ARG); /* rp NULL */
  A.nnz = (int64_t)INT32_MAX + 1;
  CU_ASSERT_EQUAL(gs_amg_spgemm_own_dev(ctx, &A, &B, &C), GS_ERR_INVALID_ARG);
  A.nnz = -1;
  CU_ASSERT_EQUAL(gs_amg_spgemm_own_dev(ctx, &A, &B, &C), GS_ERR_INVALID_ARG);
}

int main(void)
{
  if (gs_device_count() > 0 && gs_context_create(&ctx, 0) != GS_SUCCESS) {
    fprintf(stderr, "context: %s\n", gs_last_error());
    return 1;
  }
  CU_TestInfo tests[] = {
      {"random products of every row class, bit for bit", test_random},
      {"rows of 0 to 50000 products around each bin boundary", test_boundaries},
      {"cancellation to 0 and negative zeros as the host sums them", test_cancellation},
      {"A P and R (A P) of AMG levels, bit for bit", test_amg_pair},
      {"bounded passes: a row a pass up to one pass", test_bounded},
      {"0 rows, 0 entries, inner dimension 0, 0 columns", test_empty},
      {"allocation failures at every step", test_allocation_failures},
      {"refusals: dimensions, NULL, oversized", test_refusals},
      CU_TEST_INFO_NULL};
  const int rc = gs_test_main("amg_spgemm", tests, 1);
  gs_context_destroy(&ctx);
  return rc;
}
