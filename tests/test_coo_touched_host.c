/* tests/test_coo_touched_host.c: gs_coo_touched_from_features (spmv/coo_build.c), the coo
 * backend's shortcut that takes rows_touched and cols_touched of the whole matrix's COO from the
 * features instead of a pass over the columns: on structurally symmetric matrices (with runs of
 * empty rows and columns) it equals the host layout's two counts; it refuses (-1) patterns that
 * are not symmetric, rectangular shapes, features of another matrix and NULL. No GPU needed. */
#include <stdio.h>
#include <stdlib.h>

#include "spmv/formats.h"
#include "tests/testutil.h"

static uint64_t g_state;

/* An m x m matrix whose pattern is symmetric: random pairs (i, j) and (j, i) with different
 * values (numerically unsymmetric), a diagonal entry in some rows, and every index in
 * [gap0, gap1) left without entries (empty rows and columns). */
static gs_csr_t *symmetric_pattern(gs_idx_t m, int pairs, gs_idx_t gap0, gs_idx_t gap1)
{
  gs_coo_t *C = NULL;
  gs_csr_t *H = NULL;
  CU_ASSERT_FATAL(gs_coo_create(&C, m, m, 2 * pairs + m) == GS_SUCCESS);
  for (int k = 0; k < pairs; ++k) {
    const gs_idx_t i = (gs_idx_t)(gs_test_uniform(&g_state) * m);
    const gs_idx_t j = (gs_idx_t)(gs_test_uniform(&g_state) * m);
    if ((i >= gap0 && i < gap1) || (j >= gap0 && j < gap1)) continue;
    CU_ASSERT_FATAL(gs_coo_push(C, i, j, 1.0 + gs_test_uniform(&g_state)) == GS_SUCCESS);
    if (i != j) CU_ASSERT_FATAL(gs_coo_push(C, j, i, -2.0) == GS_SUCCESS);
  }
  for (gs_idx_t i = 0; i < m; i += 3)
    if (i < gap0 || i >= gap1) CU_ASSERT_FATAL(gs_coo_push(C, i, i, 4.0) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_coo_to_csr(&H, C) == GS_SUCCESS);
  gs_coo_destroy(&C);
  return H;
}

/* The shortcut against the host layout's counts: equal when it answers, and it answers exactly
 * when the features say the pattern is symmetric. */
static void check(const gs_csr_t *H, int expect_known, const char *label)
{
  gs_features_t f;
  gs_coo_layout_t *L = NULL;
  CU_ASSERT_FATAL(gs_csr_features(H, &f) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_coo_layout_build(&L, H) == GS_SUCCESS);
  const gs_idx_t t = gs_coo_touched_from_features(&f, H->m, H->n, H->nnz);
  CU_ASSERT_EQUAL(t >= 0, expect_known);
  if (t >= 0) {
    CU_ASSERT_EQUAL(t, L->rows_touched);
    CU_ASSERT_EQUAL(t, L->cols_touched);
    if (t != L->rows_touched || t != L->cols_touched)
      fprintf(stderr, "  %s: shortcut %d, host rows %d, columns %d touched\n", label, (int)t,
              (int)L->rows_touched, (int)L->cols_touched);
  }
  /* features of another shape or count are never taken */
  CU_ASSERT_EQUAL(gs_coo_touched_from_features(&f, H->m + 1, H->n + 1, H->nnz), -1);
  CU_ASSERT_EQUAL(gs_coo_touched_from_features(&f, H->m, H->n, H->nnz + 1), -1);
  CU_ASSERT_EQUAL(gs_coo_touched_from_features(NULL, H->m, H->n, H->nnz), -1);
  gs_coo_layout_destroy(&L);
}

static void test_symmetric_patterns(void)
{
  const int cases[][4] = {{1, 1, 0, 0},      {50, 40, 10, 20},   {300, 200, 0, 100},
                          {1000, 3000, 500, 900}, {2000, 50, 0, 0}, {777, 5000, 700, 777}};
  for (size_t k = 0; k < sizeof cases / sizeof *cases; ++k) {
    char lab[96];
    gs_csr_t *H = symmetric_pattern(cases[k][0], cases[k][1], cases[k][2], cases[k][3]);
    snprintf(lab, sizeof lab, "symmetric pattern %d, empty %d..%d", cases[k][0], cases[k][2],
             cases[k][3]);
    check(H, 1, lab);
    gs_csr_destroy(&H);
  }
  gs_csr_t *H = NULL;
  CU_ASSERT_FATAL(gs_gen_laplace(&H, 9, 8, 7, 27) == GS_SUCCESS);
  check(H, 1, "27-point Laplacian");
  gs_csr_destroy(&H);
}

/* Not symmetric: square random matrices (a column without entries beside a non-empty row of
 * the same index is what the shortcut would miss), rectangular ones, a triangle. */
static void test_refused(void)
{
  const int shapes[][2] = {{40, 40}, {500, 500}, {30, 70}, {70, 30}};
  for (size_t k = 0; k < sizeof shapes / sizeof *shapes; ++k) {
    gs_csr_t *H = gs_test_random_csr(&g_state, shapes[k][0], shapes[k][1], 0.05);
    gs_features_t f;
    CU_ASSERT_FATAL(gs_csr_features(H, &f) == GS_SUCCESS);
    if (!f.structurally_symmetric) check(H, 0, "random");
    gs_csr_destroy(&H);
  }
  const double tri[9] = {1, 0, 0, 2, 3, 0, 0, 4, 5};
  gs_csr_t *H = gs_test_csr_from_dense(3, 3, tri);
  check(H, 0, "lower triangle");
  gs_csr_destroy(&H);
}

int main(void)
{
  g_state = gs_test_seed();
  CU_TestInfo tests[] = {
      {"symmetric patterns: the host layout's touch counts", test_symmetric_patterns},
      {"unsymmetric, rectangular, foreign features: refused", test_refused},
      CU_TEST_INFO_NULL};
  return gs_test_main("coo_touched_host", tests, 0);
}
