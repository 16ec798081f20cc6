/* tests/test_features_gpu.c: a matrix's features computed on the GPU (gs_dcsr_select_features,
 * spmv/features_kernels.cu) are the host's bit for bit: gs_features_t against gs_csr_features,
 * gs_select_features_t against gs_select_features_with, compared with memcmp (every field, and
 * the padding both sides zero), on random matrices (seed printed), empty rows, 1 x 1, rectangular
 * ones, non-finite values, distinct value counts below, at and above the cap (with the bit
 * pattern the device's value table keeps for a free slot among them), the 27-point Laplacian,
 * the real matrices of GS_MATRIX_DIR, and 64-bit device row pointers. The selection ("auto")
 * takes the device's features. No device memory is left behind. Exits 77 without a device. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/testhooks.h"
#include "spmv/features_dev.h"
#include "tests/testutil.h"

static gs_context_t *ctx;

/* One line a differing field, for the report of a failed comparison. */
#define DIFF_F(a, b, fld)                                                                     \
  do {                                                                                        \
    if (memcmp(&(a).fld, &(b).fld, sizeof (a).fld))                                           \
      fprintf(stderr, "    %-22s host %.17g device %.17g\n", #fld, (double)(a).fld,          \
              (double)(b).fld);                                                               \
  } while (0)

static void diff_features(const gs_features_t *h, const gs_features_t *d)
{
  DIFF_F(*h, *d, rows);
  DIFF_F(*h, *d, cols);
  DIFF_F(*h, *d, nnz);
  DIFF_F(*h, *d, density);
  DIFF_F(*h, *d, row_mean);
  DIFF_F(*h, *d, row_std);
  DIFF_F(*h, *d, row_max);
  DIFF_F(*h, *d, row_min);
  DIFF_F(*h, *d, empty_rows);
  DIFF_F(*h, *d, diagonals);
  DIFF_F(*h, *d, structurally_symmetric);
  DIFF_F(*h, *d, numerically_symmetric);
  DIFF_F(*h, *d, asymmetry);
  DIFF_F(*h, *d, diagonal_full);
  DIFF_F(*h, *d, diagonal_positive);
  DIFF_F(*h, *d, symmetry);
}

static void diff_select(const gs_select_features_t *h, const gs_select_features_t *d)
{
  DIFF_F(*h, *d, rows);
  DIFF_F(*h, *d, cols);
  DIFF_F(*h, *d, nnz);
  DIFF_F(*h, *d, pct_nnz);
  DIFF_F(*h, *d, row_mean);
  DIFF_F(*h, *d, row_std);
  DIFF_F(*h, *d, row_max);
  DIFF_F(*h, *d, diagonals);
  DIFF_F(*h, *d, ell_fill);
  DIFF_F(*h, *d, dia_fill);
  DIFF_F(*h, *d, sell_fill);
  DIFF_F(*h, *d, ell_slots);
  DIFF_F(*h, *d, dia_slots);
  DIFF_F(*h, *d, sell_slots);
  DIFF_F(*h, *d, sell_total);
  DIFF_F(*h, *d, distinct_values);
  DIFF_F(*h, *d, symmetric);
}

/* H as a matrix on ctx (64-bit device row pointers when wide): the device's features against
 * the host's on the matrix's own host copy (sorted, duplicates summed: what was uploaded), and
 * against H's when H is that copy already. Returns the host's select features in *out. */
static int all_finite(const gs_csr_t *H)
{
  for (gs_off_t p = 0; p < H->nnz; ++p)
    if (!isfinite(H->val[p])) return 0;
  return 1;
}

/* A matrix with non-finite values, which gs_matrix_create refuses but a device CSR made on the
 * GPU (an AMG level, a caller's arrays) may hold: H's arrays uploaded as they are (sorted rows,
 * 32-bit row pointers), the device's features against the host's of H. */
static int compare_raw(const gs_csr_t *H, const char *label, gs_select_features_t *out)
{
  gs_amg_dcsr_t U;
  gs_features_t hg, dg;
  gs_select_features_t hf, df;
  int ok = 1;
  gs_test_amg_upload(ctx, H, &U);
  const gs_dcsr_t D = {H->m, H->n, H->nnz, 0, U.rp, NULL, U.col, U.val};
  CU_ASSERT_FATAL(gs_csr_features(H, &hg) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_select_features_with(H, NULL, &hf) == GS_SUCCESS);
  memset(&dg, 0xa5, sizeof dg);
  memset(&df, 0x5a, sizeof df);
  const gs_status_t st = gs_dcsr_select_features(ctx, &D, H->symmetry, &dg, &df);
  if (st != GS_SUCCESS) fprintf(stderr, "\n  %s: %s\n", label, gs_last_error());
  CU_ASSERT_FATAL(st == GS_SUCCESS);
  if (memcmp(&hg, &dg, sizeof hg) != 0) {
    fprintf(stderr, "\n  %s (raw upload): gs_features_t differs\n", label);
    diff_features(&hg, &dg);
    ok = 0;
  }
  if (memcmp(&hf, &df, sizeof hf) != 0) {
    fprintf(stderr, "\n  %s (raw upload): gs_select_features_t differs\n", label);
    diff_select(&hf, &df);
    ok = 0;
  }
  gs_amg_dcsr_free(ctx, &U);
  if (out) *out = hf;
  return ok;
}

static int compare_as(const gs_csr_t *H, const char *label, int wide, gs_select_features_t *out)
{
  if (!all_finite(H)) return wide ? 1 : compare_raw(H, label, out);
  gs_matrix_t *A = NULL;
  gs_dcsr_t D;
  gs_features_t hg, dg, dg2;
  gs_select_features_t hf, df;
  int ok = 1;
  const size_t base = gs_device_bytes_in_use(ctx);
  gs_test_wide_offsets(ctx, wide);
  gs_status_t st = gs_matrix_create(&A, ctx, H);
  gs_test_wide_offsets(ctx, 0);
  CU_ASSERT_FATAL(st == GS_SUCCESS);
  CU_ASSERT_EQUAL(gs_matrix_wide(A), wide);
  CU_ASSERT_FATAL(gs_matrix_device_csr(A, &D) == GS_SUCCESS);
  CU_ASSERT_EQUAL(D.wide, wide);
  const size_t with_csr = gs_device_bytes_in_use(ctx);
  const gs_csr_t *M = gs_matrix_host(A);
  CU_ASSERT_FATAL(gs_csr_features(M, &hg) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_select_features_with(M, NULL, &hf) == GS_SUCCESS);
  /* stale bytes in the outputs must not survive: the function writes every byte */
  memset(&dg, 0xa5, sizeof dg);
  memset(&df, 0x5a, sizeof df);
  st = gs_dcsr_select_features(ctx, &D, M->symmetry, &dg, &df);
  if (st != GS_SUCCESS) fprintf(stderr, "\n  %s: %s\n", label, gs_last_error());
  CU_ASSERT_FATAL(st == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_dcsr_select_features(ctx, &D, M->symmetry, &dg2, NULL) == GS_SUCCESS);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), with_csr); /* its scratch is freed */
  if (memcmp(&hg, &dg, sizeof hg) != 0) {
    fprintf(stderr, "\n  %s%s: gs_features_t differs\n", label, wide ? " (wide)" : "");
    diff_features(&hg, &dg);
    ok = 0;
  }
  if (memcmp(&hf, &df, sizeof hf) != 0) {
    fprintf(stderr, "\n  %s%s: gs_select_features_t differs\n", label, wide ? " (wide)" : "");
    diff_select(&hf, &df);
    ok = 0;
  }
  CU_ASSERT(memcmp(&dg, &dg2, sizeof dg) == 0); /* without the select part: the same */
  /* the matrix's own features (computed at creation) and those of the caller's H, which may be
   * unsorted: the same values */
  CU_ASSERT(memcmp(gs_matrix_features(A), &hg, sizeof hg) == 0);
  /* made on the GPU at creation, with the selection's, which the matrix keeps */
  gs_select_features_t kf;
  CU_ASSERT(gs_matrix_upload_seconds(A) > 0.0);
  CU_ASSERT(gs_matrix_select_features_known(A));
  CU_ASSERT_FATAL(gs_matrix_select_features(A, &kf) == GS_SUCCESS);
  CU_ASSERT(memcmp(&kf, &hf, sizeof kf) == 0);
  gs_features_t hh;
  CU_ASSERT_FATAL(gs_csr_features(H, &hh) == GS_SUCCESS);
  if (H->nnz == M->nnz && memcmp(&hh, &hg, sizeof hh) != 0) {
    fprintf(stderr, "\n  %s: the caller's CSR's features differ from the sorted copy's\n", label);
    diff_features(&hh, &hg);
    ok = 0;
  }
  gs_matrix_destroy(&A);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
  if (out) *out = hf;
  return ok;
}

/* Both widths of device row pointers. */
static int compare(const gs_csr_t *H, const char *label, gs_select_features_t *out)
{
  const int a = compare_as(H, label, 0, out);
  const int b = compare_as(H, label, 1, NULL);
  return a && b;
}

static gs_csr_t *from_coo(gs_coo_t *C)
{
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
  gs_coo_destroy(&C);
  return A;
}

/* n x n symmetric with a random pattern, a diagonal of sign `diag_sign` (0: some rows without
 * a diagonal), perturbed entries (rel) to be near-symmetric. With rel > 0 and n >= 2 the first
 * pair drawn is perturbed, and the last position (n-2, n-1) is taken when no pair was drawn
 * before it, so that whether A is symmetric depends on rel alone, whatever the seed. */
static gs_csr_t *random_symmetric(uint64_t *s, gs_idx_t n, double density, int diag_sign,
                                  double rel)
{
  gs_coo_t *C = NULL;
  CU_ASSERT_FATAL(gs_coo_create(&C, n, n, 16) == GS_SUCCESS);
  int pairs = 0;
  for (gs_idx_t i = 0; i < n; ++i) {
    for (gs_idx_t j = i + 1; j < n; ++j)
      if (gs_test_uniform(s) < density || (rel > 0.0 && pairs == 0 && j == n - 1 && i == n - 2)) {
        const double v = 2.0 * gs_test_uniform(s) - 1.0;
        const double w = (rel > 0.0 && pairs == 0) || gs_test_uniform(s) < 0.3 ? v * (1.0 + rel) : v;
        ++pairs;
        CU_ASSERT_FATAL(gs_coo_push(C, i, j, v) == GS_SUCCESS);
        CU_ASSERT_FATAL(gs_coo_push(C, j, i, w) == GS_SUCCESS);
      }
    if (diag_sign != 0 || gs_test_uniform(s) < 0.7)
      CU_ASSERT_FATAL(gs_coo_push(C, i, i, (diag_sign < 0 ? -1.0 : 1.0) *
                                              (1.0 + gs_test_uniform(s))) == GS_SUCCESS);
  }
  return from_coo(C);
}

static void test_random(void)
{
  uint64_t s = gs_test_seed() ^ 0xfea1;
  char label[96];
  for (int rep = 0; rep < 24; ++rep) {
    const gs_idx_t m = 1 + (gs_idx_t)(gs_test_uniform(&s) * 400);
    const gs_idx_t n = rep % 3 == 0 ? m : 1 + (gs_idx_t)(gs_test_uniform(&s) * 400);
    const double density = 0.002 + 0.1 * gs_test_uniform(&s);
    gs_csr_t *A = gs_test_random_csr(&s, m, n, density);
    CU_ASSERT_FATAL(A != NULL);
    snprintf(label, sizeof label, "random %d x %d (%lld entries)", (int)m, (int)n,
             (long long)A->nnz);
    CU_ASSERT(compare(A, label, NULL));
    gs_csr_destroy(&A);
  }
  const double rels[] = {0.0, 1e-13, 1e-3};
  for (int rep = 0; rep < 9; ++rep) {
    const gs_idx_t n = 2 + (gs_idx_t)(gs_test_uniform(&s) * 300);
    const int sign = rep % 3 - 1;
    gs_csr_t *A = random_symmetric(&s, n, 0.05, sign, rels[rep % 3]);
    snprintf(label, sizeof label, "symmetric %d (diagonal %d, rel %g)", (int)n, sign,
             rels[rep % 3]);
    gs_select_features_t f;
    CU_ASSERT(compare(A, label, &f));
    CU_ASSERT_EQUAL(f.symmetric, rep % 3 != 2); /* the cases do cover both answers */
    gs_csr_destroy(&A);
  }
  /* larger ones, many blocks and tiles: scattered, power-law rows, a normal band */
  for (int k = 0; k < 3; ++k) {
    gs_csr_t *A = NULL;
    const uint64_t seed = gs_test_next(&s);
    gs_status_t st = k == 0   ? gs_gen_random(&A, 120000, 90000, 9, seed)
                     : k == 1 ? gs_gen_powerlaw(&A, 100000, 8.0, 2.3, seed)
                              : gs_gen_normal(&A, 150000, 12, 1e3, seed);
    CU_ASSERT_FATAL(st == GS_SUCCESS);
    snprintf(label, sizeof label, "generated %d (%d x %d, %lld entries)", k, (int)A->m,
             (int)A->n, (long long)A->nnz);
    CU_ASSERT(compare(A, label, NULL));
    gs_csr_destroy(&A);
  }
}

static void test_shapes(void)
{
  uint64_t s = gs_test_seed() ^ 0xfea2;
  gs_csr_t *A = NULL;
  const double one[] = {-2.5}, zero[] = {0.0};
  A = gs_test_csr_from_dense(1, 1, one);
  CU_ASSERT(compare(A, "1 x 1", NULL));
  gs_csr_destroy(&A);
  A = gs_test_csr_from_dense(1, 1, zero); /* 1 x 1, no entry */
  CU_ASSERT(compare(A, "1 x 1 empty", NULL));
  gs_csr_destroy(&A);
  CU_ASSERT_FATAL(gs_csr_create(&A, 70, 70, 0) == GS_SUCCESS);
  CU_ASSERT(compare(A, "70 x 70 without entries", NULL));
  gs_csr_destroy(&A);
  A = gs_test_empty_rows(gs_test_random_csr(&s, 500, 500, 0.03), 3);
  CU_ASSERT(compare(A, "empty rows (square)", NULL));
  gs_csr_destroy(&A);
  A = gs_test_empty_rows(gs_test_random_csr(&s, 333, 100, 0.05), 2);
  CU_ASSERT(compare(A, "empty rows (tall)", NULL));
  gs_csr_destroy(&A);
  A = gs_test_random_csr(&s, 3, 5000, 0.01); /* wide */
  CU_ASSERT(compare(A, "3 x 5000", NULL));
  gs_csr_destroy(&A);
  A = gs_test_random_csr(&s, 5000, 3, 0.3); /* tall */
  CU_ASSERT(compare(A, "5000 x 3", NULL));
  gs_csr_destroy(&A);
  A = gs_test_long_row(&s, 3000); /* one full row */
  CU_ASSERT(compare(A, "one long row", NULL));
  gs_csr_destroy(&A);
  A = gs_test_two_wide_rows(&s, 70000, 50000);
  CU_ASSERT(compare(A, "two wide rows", NULL));
  gs_csr_destroy(&A);

  /* unsorted rows (the matrix sorts them): the caller's CSR's features equal the copy's */
  A = gs_test_random_csr(&s, 200, 200, 0.05);
  for (gs_idx_t i = 0; i < A->m; i += 2) {
    gs_off_t b = A->row_ptr[i], e = A->row_ptr[i + 1] - 1;
    for (; b < e; ++b, --e) {
      const gs_idx_t c = A->col[b];
      A->col[b] = A->col[e];
      A->col[e] = c;
      const double v = A->val[b];
      A->val[b] = A->val[e];
      A->val[e] = v;
    }
  }
  CU_ASSERT(compare(A, "unsorted rows", NULL));
  gs_csr_destroy(&A);
}

/* NaN, +-Inf, -0.0 and the all-ones NaN pattern (the device table's free-slot key). */
static void test_non_finite(void)
{
  uint64_t s = gs_test_seed() ^ 0xfea3;
  const uint64_t ones = ~0ull;
  double nan_ones;
  memcpy(&nan_ones, &ones, sizeof nan_ones);
  const double specials[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0, nan_ones};
  for (int k = 0; k < 6; ++k) {
    gs_csr_t *A = random_symmetric(&s, 150, 0.05, 1, 0.0);
    const int hits = k < 3 ? 1 : 5;
    for (int h = 0; h < hits; ++h)
      A->val[(gs_off_t)(gs_test_uniform(&s) * (double)A->nnz)] = specials[k];
    char label[64];
    snprintf(label, sizeof label, "special value %d", k);
    gs_select_features_t f;
    CU_ASSERT(compare(A, label, &f));
    gs_features_t g;
    CU_ASSERT_FATAL(gs_csr_features(A, &g) == GS_SUCCESS);
    if (k < 3 || k == 5) CU_ASSERT(isinf(g.asymmetry)); /* non-finite: not measurable */
    gs_csr_destroy(&A);
  }
  /* a rectangular one with NaN: no symmetry features; distinct values still counted */
  gs_csr_t *A = gs_test_random_csr(&s, 40, 90, 0.1);
  A->val[0] = nan_ones;
  A->val[A->nnz - 1] = NAN;
  CU_ASSERT(compare(A, "rectangular with NaN", NULL));
  gs_csr_destroy(&A);
}

/* n x n, entry (i, (i * 7) % n) holding one of `distinct` values (value k + 0.5 for row i with
 * i % distinct = k), the free-slot pattern as one of them when `ones`. */
static gs_csr_t *with_values(gs_idx_t n, gs_idx_t distinct, int ones)
{
  gs_coo_t *C = NULL;
  const uint64_t bits = ~0ull;
  double nan_ones;
  memcpy(&nan_ones, &bits, sizeof nan_ones);
  CU_ASSERT_FATAL(gs_coo_create(&C, n, n, n) == GS_SUCCESS);
  for (gs_idx_t i = 0; i < n; ++i) {
    const gs_idx_t k = i % distinct;
    const double v = ones && k == 0 ? nan_ones : (double)k + 0.5;
    CU_ASSERT_FATAL(gs_coo_push(C, i, (gs_idx_t)(((int64_t)i * 7) % n), v) == GS_SUCCESS);
  }
  return from_coo(C);
}

static void test_distinct_cap(void)
{
  const gs_idx_t cap = GS_SELECT_DISTINCT_CAP;
  struct {
    gs_idx_t n, distinct;
    int ones;
    gs_off_t expect;
  } cases[] = {
      {1000, 7, 0, 7},
      {1000, 7, 1, 7},
      {150000, cap - 1, 0, cap - 1},
      {150000, cap, 0, cap},
      {150000, cap, 1, cap},
      {150000, cap + 1, 0, cap + 1},
      {150000, cap + 1, 1, cap + 1},
      {300000, 300000, 0, cap + 1}, /* every value distinct: far over */
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    gs_csr_t *A = with_values(cases[c].n, cases[c].distinct, cases[c].ones);
    char label[96];
    snprintf(label, sizeof label, "%d distinct values%s", (int)cases[c].distinct,
             cases[c].ones ? " (one the all-ones pattern)" : "");
    gs_select_features_t f;
    CU_ASSERT(compare(A, label, &f));
    CU_ASSERT_EQUAL(f.distinct_values, cases[c].expect);
    gs_csr_destroy(&A);
  }
}

static void test_laplace(void)
{
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_gen_laplace(&A, 48, 48, 48, 27) == GS_SUCCESS);
  gs_select_features_t f;
  CU_ASSERT(compare(A, "lap27 48^3", &f));
  CU_ASSERT_EQUAL(f.distinct_values, 2);
  CU_ASSERT_EQUAL(f.diagonals, 27);
  CU_ASSERT(f.symmetric);
  gs_csr_destroy(&A);
  CU_ASSERT_FATAL(gs_gen_laplace(&A, 300, 300, 1, 5) == GS_SUCCESS);
  CU_ASSERT(compare(A, "lap5 300^2", NULL));
  gs_csr_destroy(&A);
  CU_ASSERT_FATAL(gs_gen_convdiff(&A, 120, 100, 1, 20.0, GS_FLOW_RANDOM, gs_test_seed()) ==
                  GS_SUCCESS);
  CU_ASSERT(compare(A, "convdiff 120 x 100", NULL));
  gs_csr_destroy(&A);
}

static void test_real_matrices(void)
{
  if (!gs_test_have_matrices()) return;
  for (int k = 0; gs_test_matrix_names[k]; ++k) {
    if (!gs_test_have_matrix(gs_test_matrix_names[k])) continue;
    gs_csr_t *A = NULL;
    gs_status_t st = gs_mm_read_csr(gs_test_matrix(gs_test_matrix_names[k]), &A);
    if (st != GS_SUCCESS) fprintf(stderr, "  cannot read %s: %s\n", gs_test_matrix_names[k],
                                  gs_last_error());
    CU_ASSERT_FATAL(st == GS_SUCCESS);
    CU_ASSERT(compare(A, gs_test_matrix_names[k], NULL));
    gs_csr_destroy(&A);
  }
}

/* The selection's record holds the device's features, which are the host's. */
static void test_auto_takes_them(void)
{
  uint64_t s = gs_test_seed() ^ 0xfea4;
  gs_csr_t *H = NULL;
  CU_ASSERT_FATAL(gs_gen_powerlaw(&H, 20000, 6.0, 2.4, gs_test_next(&s)) == GS_SUCCESS);
  gs_matrix_t *A = NULL;
  gs_spmv_t *S = NULL;
  CU_ASSERT_FATAL(gs_matrix_create(&A, ctx, H) == GS_SUCCESS);
  gs_select_opts_t so;
  gs_select_opts_default(&so);
  so.rule_only = 1;
  so.use_cache = 0;
  gs_status_t st = gs_spmv_create_auto(&S, ctx, A, NULL, &so);
  if (st != GS_SUCCESS) fprintf(stderr, "\n  auto: %s\n", gs_last_error());
  CU_ASSERT_FATAL(st == GS_SUCCESS);
  gs_select_features_t hf;
  CU_ASSERT_FATAL(gs_select_features_with(gs_matrix_host(A), NULL, &hf) == GS_SUCCESS);
  const gs_selection_t *sel = gs_spmv_selection(S);
  CU_ASSERT_FATAL(sel != NULL);
  CU_ASSERT(memcmp(&sel->features, &hf, sizeof hf) == 0);
  CU_ASSERT(sel->features_s > 0.0);
  gs_spmv_destroy(&S);
  gs_matrix_destroy(&A);
  gs_csr_destroy(&H);
}

/* A creation that runs out of device memory (in the upload's three arrays, or in the features
 * pass's scratch after it) still makes the matrix, with the host's features; what was not made
 * (the upload, the selection's features) is made on first use. Each of the 4 allocations
 * fails in turn. */
static void test_create_without_memory(void)
{
  uint64_t s = gs_test_seed() ^ 0xc7ea;
  gs_csr_t *H = gs_test_random_csr(&s, 3000, 3000, 0.002);
  gs_features_t hg;
  gs_select_features_t hf, kf;
  CU_ASSERT_FATAL(gs_csr_features(H, &hg) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_select_features_with(H, NULL, &hf) == GS_SUCCESS);
  for (long k = 1; k <= 4; ++k) { /* the upload's 3 arrays, then the pass's scratch */
    gs_matrix_t *A = NULL;
    const size_t base = gs_device_bytes_in_use(ctx);
    gs_test_dmalloc_fail_after(ctx, k);
    const gs_status_t st = gs_matrix_create(&A, ctx, H);
    gs_test_dmalloc_fail_after(ctx, 0);
    CU_ASSERT_FATAL(st == GS_SUCCESS);
    if (gs_matrix_upload_seconds(A) == 0.0) { /* the upload failed: nothing of it is left */
      CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
    }
    CU_ASSERT(!gs_matrix_select_features_known(A));
    CU_ASSERT(memcmp(gs_matrix_features(A), &hg, sizeof hg) == 0);
    CU_ASSERT_FATAL(gs_matrix_select_features(A, &kf) == GS_SUCCESS); /* uploads now */
    CU_ASSERT(gs_matrix_upload_seconds(A) > 0.0);
    CU_ASSERT(memcmp(&kf, &hf, sizeof kf) == 0);
    gs_matrix_destroy(&A);
  }
  gs_csr_destroy(&H);
}

static void test_bad_arguments(void)
{
  gs_features_t g;
  gs_select_features_t f;
  gs_dcsr_t D;
  memset(&D, 0, sizeof D);
  D.m = D.n = 4;
  D.nnz = 3; /* no arrays */
  CU_ASSERT_EQUAL(gs_dcsr_select_features(NULL, &D, GS_SYM_GENERAL, &g, &f),
                  GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_dcsr_select_features(ctx, NULL, GS_SYM_GENERAL, &g, &f),
                  GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_dcsr_select_features(ctx, &D, GS_SYM_GENERAL, &g, &f),
                  GS_ERR_INVALID_ARG);
}

int main(void)
{
  CU_TestInfo tests[] = {
      {"random matrices: device == host, bit for bit", test_random},
      {"shapes: 1 x 1, empty rows, rectangular, unsorted", test_shapes},
      {"non-finite values and special patterns", test_non_finite},
      {"distinct values below, at and above the cap", test_distinct_cap},
      {"Laplacians and convection-diffusion", test_laplace},
      {"real matrices (GS_MATRIX_DIR)", test_real_matrices},
      {"auto's record holds the device's features", test_auto_takes_them},
      {"a creation without device memory: the host's features", test_create_without_memory},
      {"bad arguments", test_bad_arguments},
      CU_TEST_INFO_NULL,
  };
  if (gs_device_count() > 0 && gs_context_create(&ctx, 0) != GS_SUCCESS) {
    fprintf(stderr, "features_gpu: cannot create a context: %s\n", gs_last_error());
    return 1;
  }
  const int rc = gs_test_main("features_gpu", tests, 1);
  gs_context_destroy(&ctx);
  return rc;
}
