/* tests/test_reorder_host.c: the orderings of core/order.c (RCM, degree), the x-lines predictor,
 * P A P^T, and the library's reorder entry points that need no device (names, refusals). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "core/order.h"
#include "core/parallel.h"
#include "gpusolve.h"
#include "tests/testutil.h"

/* Degree of v in A + A^T without the diagonal, counted as gs_csr_degree_order does. */
static void degrees(const gs_csr_t *A, int64_t *deg)
{
  memset(deg, 0, (size_t)A->m * sizeof *deg);
  for (gs_idx_t i = 0; i < A->m; ++i)
    for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p)
      if (A->col[p] != i) {
        ++deg[i];
        ++deg[A->col[p]];
      }
}

/* B = P A P^T holds exactly A's entries moved: B(k, l) = A(perm[k], perm[l]), compared as dense
 * (the matrices here are small and without repeated entries). */
static int moved_exactly(const gs_csr_t *A, const gs_csr_t *B, const gs_idx_t *perm)
{
  const gs_idx_t n = A->m;
  double *da = calloc((size_t)n * n, sizeof *da), *db = calloc((size_t)n * n, sizeof *db);
  int ok = da && db && B->m == n && B->n == n && B->nnz == A->nnz && gs_csr_is_sorted(B);
  for (gs_idx_t i = 0; ok && i < n; ++i)
    for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p)
      da[(size_t)i * n + A->col[p]] = A->val[p];
  for (gs_idx_t k = 0; ok && k < n; ++k)
    for (gs_off_t p = B->row_ptr[k]; p < B->row_ptr[k + 1]; ++p)
      db[(size_t)k * n + B->col[p]] = B->val[p];
  for (gs_idx_t k = 0; ok && k < n; ++k)
    for (gs_idx_t l = 0; ok && l < n; ++l)
      if (db[(size_t)k * n + l] != da[(size_t)perm[k] * n + perm[l]]) ok = 0;
  free(da);
  free(db);
  return ok;
}

static void test_orderings_are_permutations(void)
{
  uint64_t s = gs_test_seed();
  for (int trial = 0; trial < 20; ++trial) {
    const gs_idx_t n = 1 + (gs_idx_t)(gs_test_next(&s) % 60);
    gs_csr_t *A = gs_test_random_csr(&s, n, n, 0.1), *B = NULL;
    CU_ASSERT_FATAL(A != NULL);
    gs_idx_t *p = malloc(((size_t)n + 1) * sizeof *p);
    CU_ASSERT_FATAL(p != NULL);
    CU_ASSERT(gs_csr_rcm(A, p) == GS_SUCCESS);
    CU_ASSERT(gs_test_is_permutation(p, n));
    CU_ASSERT(gs_csr_permute_sym(A, p, &B) == GS_SUCCESS);
    CU_ASSERT(B && moved_exactly(A, B, p));
    gs_csr_destroy(&B);
    CU_ASSERT(gs_csr_degree_order(A, p) == GS_SUCCESS);
    CU_ASSERT(gs_test_is_permutation(p, n));
    CU_ASSERT(gs_csr_permute_sym(A, p, &B) == GS_SUCCESS);
    CU_ASSERT(B && moved_exactly(A, B, p));
    gs_csr_destroy(&B);
    free(p);
    gs_csr_destroy(&A);
  }
}

/* A symmetric matrix stored with both triangles (symmetry SYMMETRIC) is ordered from its own
 * pattern (A's arrays when every row's columns increase, else a copy); the order must be the
 * general path's (the graph of A + A^T), on random patterns with empty rows, missing diagonals
 * and several components, rows sorted and reversed. */
static void test_rcm_symmetric_storage(void)
{
  uint64_t s = gs_test_seed();
  for (int trial = 0; trial < 40; ++trial) {
    const gs_idx_t n = 1 + (gs_idx_t)(gs_test_next(&s) % 80);
    const double density = 0.01 + 0.1 * gs_test_uniform(&s);
    unsigned char *d = calloc((size_t)n * n, 1);
    CU_ASSERT_FATAL(d != NULL);
    int64_t nnz = 0;
    for (gs_idx_t i = 0; i < n; ++i)
      for (gs_idx_t j = 0; j <= i; ++j)
        if (gs_test_uniform(&s) < density) {
          d[(size_t)i * n + j] = d[(size_t)j * n + i] = 1;
          nnz += i == j ? 1 : 2;
        }
    gs_csr_t *A = NULL;
    CU_ASSERT_FATAL(gs_csr_create(&A, n, n, nnz) == GS_SUCCESS);
    int64_t q = 0;
    for (gs_idx_t i = 0; i < n; ++i) {
      for (gs_idx_t j = 0; j < n; ++j)
        if (d[(size_t)i * n + j]) {
          A->col[q] = j;
          A->val[q++] = 1.0 + (double)(i + j);
        }
      A->row_ptr[i + 1] = q;
    }
    if (trial % 2) /* rows in decreasing column order: the copy, not A's own arrays */
      for (gs_idx_t i = 0; i < n; ++i)
        for (gs_off_t a = A->row_ptr[i], b = A->row_ptr[i + 1] - 1; a < b; ++a, --b)
          gs_test_swap_entries(A, a, b);
    gs_idx_t *p1 = malloc((size_t)n * sizeof *p1), *p2 = malloc((size_t)n * sizeof *p2);
    CU_ASSERT_FATAL(p1 && p2);
    A->symmetry = GS_SYM_SYMMETRIC;
    CU_ASSERT(gs_csr_rcm(A, p1) == GS_SUCCESS);
    A->symmetry = GS_SYM_GENERAL;
    CU_ASSERT(gs_csr_rcm(A, p2) == GS_SUCCESS);
    CU_ASSERT(gs_test_is_permutation(p1, n));
    if (memcmp(p1, p2, (size_t)n * sizeof *p1) != 0) {
      CU_FAIL("rcm of symmetric storage differs from the general path");
      printf("\n    n %d, density %.3f, trial %d\n", n, density, trial);
    }
    free(p1);
    free(p2);
    free(d);
    gs_csr_destroy(&A);
  }
}

/* Degrees non-increasing along the order, ties in increasing index (stable). */
static void test_degree_order_monotone_stable(void)
{
  uint64_t s = gs_test_seed();
  for (int trial = 0; trial < 20; ++trial) {
    const gs_idx_t n = 2 + (gs_idx_t)(gs_test_next(&s) % 200);
    gs_csr_t *A = gs_test_random_csr(&s, n, n, 0.05);
    CU_ASSERT_FATAL(A != NULL);
    gs_idx_t *p = malloc((size_t)n * sizeof *p);
    int64_t *deg = malloc((size_t)n * sizeof *deg);
    CU_ASSERT_FATAL(p && deg);
    degrees(A, deg);
    CU_ASSERT_FATAL(gs_csr_degree_order(A, p) == GS_SUCCESS);
    int ok = 1;
    for (gs_idx_t k = 1; k < n; ++k) {
      if (deg[p[k]] > deg[p[k - 1]]) ok = 0;
      if (deg[p[k]] == deg[p[k - 1]] && p[k] < p[k - 1]) ok = 0;
    }
    CU_ASSERT(ok);
    free(p);
    free(deg);
    gs_csr_destroy(&A);
  }
}

/* A hub (row 5 of a star) comes first. */
static void test_degree_order_hub_first(void)
{
  const int n = 8;
  double a[64] = {0};
  for (int i = 0; i < n; ++i) {
    a[i * n + i] = 4.0;
    a[5 * n + i] = a[i * n + 5] = -1.0;
  }
  a[5 * n + 5] = 4.0;
  a[1 * n + 2] = a[2 * n + 1] = -1.0; /* rows 1 and 2 have degree 4, the others 2 */
  gs_csr_t *A = gs_test_csr_from_dense(n, n, a);
  gs_idx_t p[8];
  CU_ASSERT_FATAL(A && gs_csr_degree_order(A, p) == GS_SUCCESS);
  const gs_idx_t want[8] = {5, 1, 2, 0, 3, 4, 6, 7};
  CU_ASSERT(memcmp(p, want, sizeof want) == 0);
  gs_csr_destroy(&A);
}

/* A banded matrix with its rows and columns shuffled: RCM brings the bandwidth back to at most
 * the band's (a path graph's RCM is the path), never above the shuffled one's. */
static void test_rcm_bandwidth_on_shuffled_band(void)
{
  uint64_t s = gs_test_seed();
  for (int trial = 0; trial < 10; ++trial) {
    const gs_idx_t n = 50 + (gs_idx_t)(gs_test_next(&s) % 400);
    const int band = 1 + (int)(gs_test_next(&s) % 4);
    gs_coo_t *C = NULL;
    gs_csr_t *A = NULL, *S = NULL, *B = NULL;
    gs_idx_t *sh = malloc((size_t)n * sizeof *sh), *p = malloc((size_t)n * sizeof *p);
    CU_ASSERT_FATAL(sh && p && gs_coo_create(&C, n, n, 0) == GS_SUCCESS);
    for (gs_idx_t i = 0; i < n; ++i)
      for (gs_idx_t j = i - band; j <= i + band; ++j)
        if (j >= 0 && j < n) CU_ASSERT(gs_coo_push(C, i, j, i == j ? 4.0 : -1.0) == GS_SUCCESS);
    CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
    for (gs_idx_t i = 0; i < n; ++i) sh[i] = i; /* Fisher-Yates */
    for (gs_idx_t i = n - 1; i > 0; --i) {
      const gs_idx_t j = (gs_idx_t)(gs_test_next(&s) % (uint64_t)(i + 1)), t = sh[i];
      sh[i] = sh[j];
      sh[j] = t;
    }
    CU_ASSERT_FATAL(gs_csr_permute_sym(A, sh, &S) == GS_SUCCESS);
    CU_ASSERT_FATAL(gs_csr_rcm(S, p) == GS_SUCCESS);
    CU_ASSERT_FATAL(gs_csr_permute_sym(S, p, &B) == GS_SUCCESS);
    const gs_idx_t bw_s = gs_csr_bandwidth(S), bw_b = gs_csr_bandwidth(B);
    if (bw_b > 2 * band || bw_b > bw_s)
      printf("\n  n %d band %d: shuffled %d, rcm %d\n", (int)n, band, (int)bw_s, (int)bw_b);
    CU_ASSERT(bw_b <= bw_s);
    CU_ASSERT(bw_b <= 2 * band); /* a level structure of the band spans at most 2 band */
    /* and the predictor sees the locality come back */
    CU_ASSERT(gs_csr_x_lines(S, p) < gs_csr_x_lines(S, NULL));
    CU_ASSERT(gs_csr_x_lines(S, p) == gs_csr_x_lines(B, NULL));
    free(sh);
    free(p);
    gs_coo_destroy(&C);
    gs_csr_destroy(&A);
    gs_csr_destroy(&S);
    gs_csr_destroy(&B);
  }
}

static int cmp_idx(const void *a, const void *b)
{
  const gs_idx_t x = *(const gs_idx_t *)a, y = *(const gs_idx_t *)b;
  return (x > y) - (x < y);
}

/* The passes over every entry take threads past 2^20 entries: x lines (in A's order and a
 * random one) and the bandwidth on 1, 3 and 8 threads against a reference written here (each
 * row block's lines sorted and counted; the largest |i - j|), on a random matrix of 2^20+
 * entries whose row lengths vary (so the shares differ in work). */
static void test_threaded_passes(void)
{
  uint64_t s = gs_test_seed() ^ 0x51;
  const gs_idx_t n = 70000 + (gs_idx_t)(gs_test_next(&s) % 5000);
  gs_coo_t *C = NULL;
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_coo_create(&C, n, n, 0) == GS_SUCCESS);
  for (gs_idx_t i = 0; i < n; ++i) {
    const int len = 1 + (int)(gs_test_next(&s) % 32);
    for (int k = 0; k < len; ++k) {
      /* half near the diagonal, half anywhere */
      const gs_idx_t j = k % 2 ? (gs_idx_t)(gs_test_next(&s) % (uint64_t)n)
                               : (i + (gs_idx_t)(gs_test_next(&s) % 64)) % n;
      CU_ASSERT_FATAL(gs_coo_push(C, i, j, 1.0) == GS_SUCCESS);
    }
  }
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
  gs_coo_destroy(&C);
  CU_ASSERT_FATAL(A->nnz >= (1 << 20));
  gs_idx_t *p = malloc((size_t)n * sizeof *p), *inv = malloc((size_t)n * sizeof *inv);
  gs_idx_t *ids = malloc((size_t)A->nnz * sizeof *ids);
  CU_ASSERT_FATAL(p && inv && ids);
  for (gs_idx_t i = 0; i < n; ++i) p[i] = i;
  for (gs_idx_t i = n - 1; i > 0; --i) {
    const gs_idx_t j = (gs_idx_t)(gs_test_next(&s) % (uint64_t)(i + 1)), t = p[i];
    p[i] = p[j];
    p[j] = t;
  }
  for (gs_idx_t k = 0; k < n; ++k) inv[p[k]] = k;
  int64_t want[2] = {0, 0}, bw = 0;
  for (int o = 0; o < 2; ++o) /* the reference: each block's line ids, sorted, counted */
    for (gs_idx_t b0 = 0; b0 < n; b0 += GS_ORDER_LINE_ROWS) {
      size_t c = 0;
      for (gs_idx_t k = b0; k < n && k < b0 + GS_ORDER_LINE_ROWS; ++k) {
        const gs_idx_t i = o ? p[k] : k;
        for (int64_t q = A->row_ptr[i]; q < A->row_ptr[i + 1]; ++q)
          ids[c++] = (o ? inv[A->col[q]] : A->col[q]) / 8;
      }
      qsort(ids, c, sizeof *ids, cmp_idx);
      for (size_t q = 0; q < c; ++q) want[o] += q == 0 || ids[q] != ids[q - 1];
    }
  for (gs_idx_t i = 0; i < n; ++i)
    for (int64_t q = A->row_ptr[i]; q < A->row_ptr[i + 1]; ++q) {
      const int64_t d = (int64_t)i - A->col[q];
      bw = d > bw ? d : -d > bw ? -d : bw;
    }
  const int saved = gs_mm_threads(), counts[] = {1, 3, 8};
  for (int t = 0; t < 3; ++t) {
    gs_mm_set_threads(counts[t]);
    CU_ASSERT_EQUAL(gs_csr_x_lines(A, NULL), want[0]);
    CU_ASSERT_EQUAL(gs_csr_x_lines(A, p), want[1]);
    CU_ASSERT_EQUAL(gs_csr_bandwidth(A), bw);
  }
  gs_mm_set_threads(saved);
  free(p);
  free(inv);
  free(ids);
  gs_csr_destroy(&A);
}

/* The predictor by hand: one row block, columns 0, 1, 9, 17 -> lines 0, 0, 1, 2: 3 lines. */
static void test_x_lines_hand_checked(void)
{
  const int n = 20;
  double *a = calloc((size_t)n * n, sizeof *a);
  CU_ASSERT_FATAL(a != NULL);
  a[0] = a[1] = a[9] = a[17] = 1.0;
  a[1 * n + 2] = 1.0; /* row 1: line 0 again, same block: nothing new */
  gs_csr_t *A = gs_test_csr_from_dense(n, n, a);
  CU_ASSERT_FATAL(A != NULL);
  CU_ASSERT_EQUAL(gs_csr_x_lines(A, NULL), 3);
  gs_idx_t p[20];
  for (int k = 0; k < n; ++k) p[k] = n - 1 - k; /* reversed: row 0 is new row 19 */
  /* new columns 19, 18, 10, 2 -> lines 2, 2, 1, 0 (row block 0); row 1 -> new 18, col 17: line 2 */
  CU_ASSERT_EQUAL(gs_csr_x_lines(A, p), 3);
  CU_ASSERT_EQUAL(gs_csr_x_lines(NULL, NULL), -1);
  gs_csr_destroy(&A);
  free(a);
}

/* A matrix past the threading threshold: P A P^T on threads equals the one-share result. */
static void test_permute_threads_match(void)
{
  uint64_t s = gs_test_seed();
  const gs_idx_t n = 12000; /* 2^21 entries: past the threshold; the generator visits n^2 */
  gs_csr_t *A = gs_test_random_csr(&s, n, n, (double)(1 << 21) / ((double)n * n)), *B = NULL;
  gs_csr_t *C = NULL;
  gs_idx_t *p = malloc((size_t)n * sizeof *p);
  CU_ASSERT_FATAL(A && p && gs_csr_degree_order(A, p) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_csr_permute_sym(A, p, &B) == GS_SUCCESS);
  gs_parallel_inline = 1;
  const gs_status_t st = gs_csr_permute_sym(A, p, &C);
  gs_parallel_inline = 0;
  CU_ASSERT_FATAL(st == GS_SUCCESS);
  CU_ASSERT(B->nnz == A->nnz && gs_csr_is_sorted(B));
  CU_ASSERT(memcmp(B->row_ptr, C->row_ptr, ((size_t)n + 1) * sizeof *B->row_ptr) == 0);
  CU_ASSERT(memcmp(B->col, C->col, (size_t)B->nnz * sizeof *B->col) == 0);
  CU_ASSERT(memcmp(B->val, C->val, (size_t)B->nnz * sizeof *B->val) == 0);
  /* row k of B is row p[k] of A: lengths and sums of values agree */
  int ok = 1;
  for (gs_idx_t k = 0; ok && k < n; ++k) {
    double sa = 0.0, sb = 0.0;
    for (gs_off_t q = A->row_ptr[p[k]]; q < A->row_ptr[p[k] + 1]; ++q) sa += A->val[q];
    for (gs_off_t q = B->row_ptr[k]; q < B->row_ptr[k + 1]; ++q) sb += B->val[q];
    if (B->row_ptr[k + 1] - B->row_ptr[k] != A->row_ptr[p[k] + 1] - A->row_ptr[p[k]] ||
        fabs(sa - sb) > 1e-12 * (1.0 + fabs(sa)))
      ok = 0;
  }
  CU_ASSERT(ok);
  free(p);
  gs_csr_destroy(&A);
  gs_csr_destroy(&B);
  gs_csr_destroy(&C);
}

static void test_refusals(void)
{
  gs_csr_t *R = NULL, *B = NULL;
  gs_idx_t p[4] = {0, 1, 2, 3};
  CU_ASSERT_FATAL(gs_csr_create(&R, 3, 4, 0) == GS_SUCCESS);
  CU_ASSERT_EQUAL(gs_csr_degree_order(R, p), GS_ERR_DIMENSION);
  CU_ASSERT_EQUAL(gs_csr_degree_order(NULL, p), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_csr_x_lines(R, p), -1); /* a perm needs a square matrix */
  CU_ASSERT_EQUAL(gs_csr_x_lines(R, NULL), 0);
  gs_csr_destroy(&R);
  double a[9] = {1, 0, 2, 0, 1, 0, 3, 0, 1};
  gs_csr_t *A = gs_test_csr_from_dense(3, 3, a);
  CU_ASSERT_FATAL(A != NULL);
  const gs_idx_t dup[3] = {0, 0, 2}, out[3] = {0, 1, 3};
  CU_ASSERT_EQUAL(gs_csr_permute_sym(A, dup, &B), GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NULL(B);
  CU_ASSERT_EQUAL(gs_csr_permute_sym(A, out, &B), GS_ERR_INVALID_ARG);
  A->col[0] = 7; /* malformed */
  CU_ASSERT_EQUAL(gs_csr_degree_order(A, p), GS_ERR_INVALID_ARG);
  gs_csr_destroy(&A);
  /* empty matrix: nothing to order */
  gs_csr_t *E = NULL;
  CU_ASSERT_FATAL(gs_csr_create(&E, 0, 0, 0) == GS_SUCCESS);
  CU_ASSERT_EQUAL(gs_csr_degree_order(E, p), GS_SUCCESS);
  gs_csr_destroy(&E);
}

/* The library's names and the refusals that come before any device work. */
static void test_library_names_and_refusals(void)
{
  CU_ASSERT_STRING_EQUAL(gs_reorder_string(GS_REORDER_NONE), "none");
  CU_ASSERT_STRING_EQUAL(gs_reorder_string(GS_REORDER_RCM), "rcm");
  CU_ASSERT_STRING_EQUAL(gs_reorder_string(GS_REORDER_DEGREE), "degree");
  CU_ASSERT_STRING_EQUAL(gs_reorder_string(GS_REORDER_AUTO), "auto");
  CU_ASSERT_STRING_EQUAL(gs_reorder_string((gs_reorder_kind_t)9), "unknown");
  for (int k = 0; k < 4; ++k) CU_ASSERT_EQUAL(gs_reorder_find(gs_reorder_string(k)), k);
  CU_ASSERT_EQUAL(gs_reorder_find("RCM"), -1);
  CU_ASSERT_EQUAL(gs_reorder_find(NULL), -1);
  gs_reorder_t *R = (gs_reorder_t *)1;
  double a[4] = {1, 0, 0, 1};
  gs_csr_t *A = gs_test_csr_from_dense(2, 2, a);
  CU_ASSERT_FATAL(A != NULL);
  /* no context: refused before anything */
  CU_ASSERT_EQUAL(gs_reorder_create(&R, NULL, A, GS_REORDER_RCM, 0.0), GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NULL(R);
  CU_ASSERT_EQUAL(gs_reorder_create(NULL, NULL, A, GS_REORDER_RCM, 0.0), GS_ERR_INVALID_ARG);
  gs_reorder_info_t info;
  CU_ASSERT_EQUAL(gs_reorder_info(NULL, &info), GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NULL(gs_reorder_csr(NULL));
  CU_ASSERT_PTR_NULL(gs_reorder_perm(NULL));
  CU_ASSERT_EQUAL(gs_solve_reordered(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
                  GS_ERR_INVALID_ARG);
  gs_reorder_destroy(NULL);
  R = NULL;
  gs_reorder_destroy(&R);
  gs_csr_destroy(&A);
}

int main(void)
{
  CU_TestInfo tests[] = {
    {"orderings are permutations, P A P^T moves A's entries", test_orderings_are_permutations},
    {"degree order: non-increasing, stable", test_degree_order_monotone_stable},
    {"degree order: the hub first", test_degree_order_hub_first},
    {"rcm on a shuffled band", test_rcm_bandwidth_on_shuffled_band},
    {"rcm of symmetric storage: one pass, the general path's order", test_rcm_symmetric_storage},
    {"x lines by hand", test_x_lines_hand_checked},
    {"x lines and bandwidth on 1, 3 and 8 threads against a reference", test_threaded_passes},
    {"P A P^T on threads", test_permute_threads_match},
    {"refusals", test_refusals},
    {"library names and refusals", test_library_names_and_refusals},
    CU_TEST_INFO_NULL};
  return gs_test_main("reorder_host", tests, 0);
}
