/* tests/test_csr_threads.c: gs_csr_copy and gs_csr_is_sorted of a matrix of 2^20+ entries, which
 * run on threads (and copy into huge pages): the same answers at every thread count, a fault
 * found wherever it lies (a share's first or last row, or a random one). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testutil.h"

static const int threads[] = {1, 2, 3, 8};
#define NTHREADS ((int)(sizeof threads / sizeof threads[0]))

/* m x m with rows of 3 to 5 strictly increasing columns (1.2 M entries), random values. */
static gs_csr_t *big(uint64_t *s)
{
  const gs_idx_t m = 300000;
  gs_csr_t *A = NULL;
  if (gs_csr_create(&A, m, m, (gs_off_t)m * 5) != GS_SUCCESS) return NULL;
  gs_off_t p = 0;
  for (gs_idx_t i = 0; i < m; ++i) {
    const int len = i == m - 1 ? 4 : i % 2 ? 3 : 5; /* nnz not a multiple of 3 */
    const gs_idx_t c0 = i < m - 5 ? i : m - 5;
    for (int k = 0; k < len; ++k) {
      A->col[p] = c0 + k;
      A->val[p++] = gs_test_uniform(s) - 0.5;
    }
    A->row_ptr[i + 1] = p;
  }
  A->nnz = p;
  A->symmetry = GS_SYM_SYMMETRIC; /* copied as it is */
  return A;
}

static void test_copy_equal_at_every_thread_count(void)
{
  uint64_t s = gs_test_seed();
  gs_csr_t *A = big(&s);
  CU_ASSERT_FATAL(A != NULL);
  for (int k = 0; k < NTHREADS; ++k) {
    gs_mm_set_threads(threads[k]);
    gs_csr_t *B = NULL;
    CU_ASSERT_FATAL(gs_csr_copy(&B, A) == GS_SUCCESS);
    CU_ASSERT(B->m == A->m && B->n == A->n && B->nnz == A->nnz);
    CU_ASSERT(B->symmetry == GS_SYM_SYMMETRIC);
    CU_ASSERT(B->row_ptr != A->row_ptr && B->col != A->col && B->val != A->val);
    CU_ASSERT(memcmp(B->row_ptr, A->row_ptr, ((size_t)A->m + 1) * sizeof *A->row_ptr) == 0);
    CU_ASSERT(memcmp(B->col, A->col, (size_t)A->nnz * sizeof *A->col) == 0);
    CU_ASSERT(memcmp(B->val, A->val, (size_t)A->nnz * sizeof *A->val) == 0);
    gs_csr_destroy(&B);
  }
  gs_mm_set_threads(0);
  gs_csr_destroy(&A);
}

/* Row r's first two columns swapped (a decrease), or its second made equal to its first (a
 * duplicate); undone by restore. */
static void plant(gs_csr_t *A, gs_idx_t r, int dup, gs_idx_t save[2])
{
  const gs_off_t p = A->row_ptr[r];
  save[0] = A->col[p];
  save[1] = A->col[p + 1];
  A->col[p] = dup ? save[0] : save[1];
  A->col[p + 1] = save[0];
}

static void restore(gs_csr_t *A, gs_idx_t r, const gs_idx_t save[2])
{
  A->col[A->row_ptr[r]] = save[0];
  A->col[A->row_ptr[r] + 1] = save[1];
}

static void test_is_sorted_finds_a_fault_anywhere(void)
{
  uint64_t s = gs_test_seed();
  gs_csr_t *A = big(&s);
  CU_ASSERT_FATAL(A != NULL);
  const int64_t m = A->m;
  for (int k = 0; k < NTHREADS; ++k) {
    const int nt = threads[k];
    gs_mm_set_threads(nt);
    CU_ASSERT(gs_csr_is_sorted(A) == 1);
    /* the first and last rows of the matrix and of share 1 (rows m t / nt ..), a random row */
    const gs_idx_t edge = (gs_idx_t)(nt > 1 ? m / nt : m / 2);
    const gs_idx_t rows[] = {0, (gs_idx_t)(m - 1), edge, edge - 1,
                             (gs_idx_t)(gs_test_uniform(&s) * (double)(m - 1))};
    for (int r = 0; r < (int)(sizeof rows / sizeof rows[0]); ++r)
      for (int dup = 0; dup < 2; ++dup) {
        gs_idx_t save[2];
        plant(A, rows[r], dup, save);
        if (gs_csr_is_sorted(A) != 0)
          fprintf(stderr, "threads %d: row %d (%s) not found\n", nt, (int)rows[r],
                  dup ? "duplicate" : "decrease");
        CU_ASSERT(gs_csr_is_sorted(A) == 0);
        restore(A, rows[r], save);
      }
    CU_ASSERT(gs_csr_is_sorted(A) == 1);
  }
  gs_mm_set_threads(0);
  gs_csr_destroy(&A);
}

/* Small and empty matrices keep the serial path: empty rows, nnz = 0, m = 0. */
static void test_small_and_empty(void)
{
  const double a[] = {1, 0, 2, 0, 0, 0, 0, 3, 4};
  gs_csr_t *A = gs_test_csr_from_dense(3, 3, a), *B = NULL;
  CU_ASSERT_FATAL(A != NULL);
  CU_ASSERT(gs_csr_is_sorted(A) == 1);
  CU_ASSERT_FATAL(gs_csr_copy(&B, A) == GS_SUCCESS);
  CU_ASSERT(B->nnz == 4 && memcmp(B->col, A->col, 4 * sizeof *A->col) == 0);
  gs_csr_destroy(&B);
  gs_csr_destroy(&A);
  CU_ASSERT_FATAL(gs_csr_create(&A, 0, 0, 0) == GS_SUCCESS);
  CU_ASSERT(gs_csr_is_sorted(A) == 1);
  CU_ASSERT_FATAL(gs_csr_copy(&B, A) == GS_SUCCESS);
  CU_ASSERT(B->m == 0 && B->nnz == 0 && B->row_ptr[0] == 0);
  gs_csr_destroy(&B);
  gs_csr_destroy(&A);
  CU_ASSERT(gs_csr_copy(&B, NULL) == GS_ERR_INVALID_ARG);
}

int main(void)
{
  CU_TestInfo tests[] = {
    {"copy on threads equals the source", test_copy_equal_at_every_thread_count},
    {"is_sorted on threads finds a fault anywhere", test_is_sorted_finds_a_fault_anywhere},
    {"small and empty matrices", test_small_and_empty},
    CU_TEST_INFO_NULL};
  return gs_test_main("csr_threads", tests, 0);
}
