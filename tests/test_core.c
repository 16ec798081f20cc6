/* tests/test_core.c: host containers, conversions, transpose, validation, features, errors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/testhooks.h"
#include "tests/testutil.h"


static void test_coo_to_csr_sorts_sums_keeps_zeros(void)
{
  gs_coo_t *C = NULL;
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_coo_create(&C, 3, 4, 1) == GS_SUCCESS);
  /* unsorted, a duplicate at (0,2), an explicit zero at (2,3), an empty row 1 */
  CU_ASSERT(gs_coo_push(C, 2, 3, 0.0) == GS_SUCCESS);
  CU_ASSERT(gs_coo_push(C, 0, 2, 1.5) == GS_SUCCESS);
  CU_ASSERT(gs_coo_push(C, 0, 0, -1.0) == GS_SUCCESS);
  CU_ASSERT(gs_coo_push(C, 2, 0, 4.0) == GS_SUCCESS);
  CU_ASSERT(gs_coo_push(C, 0, 2, 2.0) == GS_SUCCESS);
  CU_ASSERT(gs_coo_push(C, 3, 0, 1.0) == GS_ERR_INVALID_ARG); /* row out of range */
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
  const gs_off_t rp[] = {0, 2, 2, 4};
  const gs_idx_t col[] = {0, 2, 0, 3};
  const double val[] = {-1.0, 3.5, 4.0, 0.0};
  CU_ASSERT_EQUAL(A->nnz, 4);
  CU_ASSERT(memcmp(A->row_ptr, rp, sizeof rp) == 0);
  CU_ASSERT(memcmp(A->col, col, sizeof col) == 0);
  CU_ASSERT(memcmp(A->val, val, sizeof val) == 0);
  CU_ASSERT(gs_csr_validate(A) == GS_SUCCESS);
  CU_ASSERT(gs_csr_is_sorted(A));
  gs_csr_destroy(&A);
  CU_ASSERT_PTR_NULL(A);
  gs_coo_destroy(&C);
  gs_csr_destroy(&A); /* NULL-safe */
  gs_coo_destroy(NULL);
}

static void test_transpose_and_spmv(void)
{
  const double a[] = {1, 0, 2, 0, 3, 0, 0, 0, 0, 4, 5, 6}; /* 4 x 3 */
  gs_csr_t *A = gs_test_csr_from_dense(4, 3, a), *T = NULL, *TT = NULL;
  CU_ASSERT_FATAL(gs_csr_transpose(&T, A) == GS_SUCCESS);
  CU_ASSERT_EQUAL(T->m, 3);
  CU_ASSERT_EQUAL(T->n, 4);
  const gs_off_t rp[] = {0, 2, 4, 6};
  const gs_idx_t col[] = {0, 3, 1, 3, 0, 3};
  const double val[] = {1, 4, 3, 5, 2, 6};
  CU_ASSERT(memcmp(T->row_ptr, rp, sizeof rp) == 0);
  CU_ASSERT(memcmp(T->col, col, sizeof col) == 0);
  CU_ASSERT(memcmp(T->val, val, sizeof val) == 0);
  CU_ASSERT_FATAL(gs_csr_transpose(&TT, T) == GS_SUCCESS);
  CU_ASSERT(memcmp(TT->row_ptr, A->row_ptr, 5 * sizeof *A->row_ptr) == 0);
  CU_ASSERT(memcmp(TT->col, A->col, 6 * sizeof(gs_idx_t)) == 0);

  double x[3] = {1, 2, 3}, y[4] = {NAN, NAN, NAN, NAN}, yt[3] = {1, 1, 1}, xt[4] = {1, 1, 1, 1};
  CU_ASSERT(gs_csr_spmv_host(A, GS_OP_N, 2.0, x, 0.0, y) == GS_SUCCESS); /* NaN in y unread */
  const double ey[] = {14, 12, 0, 64};
  for (int i = 0; i < 4; ++i) CU_ASSERT_DOUBLE_EQUAL(y[i], ey[i], 0.0);
  CU_ASSERT(gs_csr_spmv_host(A, GS_OP_T, 1.0, xt, -1.0, yt) == GS_SUCCESS);
  const double eyt[] = {4, 7, 7}; /* A^T 1 = (5, 8, 8), minus 1 */
  for (int i = 0; i < 3; ++i) CU_ASSERT_DOUBLE_EQUAL(yt[i], eyt[i], 0.0);
  CU_ASSERT(gs_csr_spmv_host(A, (gs_op_t)7, 1.0, x, 0.0, y) == GS_ERR_INVALID_ARG);
  gs_csr_destroy(&A);
  gs_csr_destroy(&T);
  gs_csr_destroy(&TT);
}

static void test_random_transpose_roundtrip(void)
{
  uint64_t s = gs_test_seed();
  for (int t = 0; t < 20; ++t) {
    gs_idx_t m = 1 + (gs_idx_t)(gs_test_uniform(&s) * 60), n = 1 + (gs_idx_t)(gs_test_uniform(&s) * 60);
    gs_csr_t *A = gs_test_random_csr(&s, m, n, 0.1), *T = NULL;
    CU_ASSERT_FATAL(A != NULL);
    CU_ASSERT_FATAL(gs_csr_transpose(&T, A) == GS_SUCCESS);
    /* A x, (A^T) y through the transpose's CSR, and A^T y through op T: each within the
     * rounding bound of the product it stands for */
    double *x = malloc(n * sizeof *x), *y = malloc(m * sizeof *y);
    double *ax = malloc(m * sizeof *ax), *aty = malloc(n * sizeof *aty), *aty2 = malloc(n * sizeof *aty2);
    CU_ASSERT_FATAL(x && y && ax && aty && aty2);
    for (int j = 0; j < n; ++j) x[j] = gs_test_uniform(&s);
    for (int i = 0; i < m; ++i) y[i] = gs_test_uniform(&s);
    CU_ASSERT(gs_csr_spmv_host(A, GS_OP_N, 1.0, x, 0.0, ax) == GS_SUCCESS);
    CU_ASSERT(gs_csr_spmv_host(T, GS_OP_N, 1.0, y, 0.0, aty) == GS_SUCCESS);
    CU_ASSERT(gs_csr_spmv_host(A, GS_OP_T, 1.0, y, 0.0, aty2) == GS_SUCCESS);
    CU_ASSERT(gs_test_spmv_ok(A, GS_OP_N, 1.0, x, 0.0, NULL, ax, "csr N, trial %d", t));
    CU_ASSERT(gs_test_spmv_ok(A, GS_OP_T, 1.0, y, 0.0, NULL, aty, "transpose's csr N, trial %d", t));
    CU_ASSERT(gs_test_spmv_ok(A, GS_OP_T, 1.0, y, 0.0, NULL, aty2, "csr T, trial %d", t));
    free(x); free(y); free(ax); free(aty); free(aty2);
    gs_csr_destroy(&A);
    gs_csr_destroy(&T);
  }
}

static void test_validate_catches_faults(void)
{
  const double a[] = {1, 2, 0, 3};
  gs_csr_t *A = gs_test_csr_from_dense(2, 2, a);
  CU_ASSERT(gs_csr_validate(A) == GS_SUCCESS);
  A->col[1] = 5;
  CU_ASSERT(gs_csr_validate(A) == GS_ERR_INVALID_ARG);
  CU_ASSERT(strstr(gs_last_error(), "column 5") != NULL);
  A->col[1] = 1;
  A->val[2] = INFINITY;
  CU_ASSERT(gs_csr_validate(A) == GS_ERR_INVALID_ARG);
  CU_ASSERT(strstr(gs_last_error(), "not finite") != NULL);
  A->val[2] = 3;
  A->row_ptr[1] = 3;
  A->row_ptr[2] = 2;
  CU_ASSERT(gs_csr_validate(A) == GS_ERR_INVALID_ARG);
  gs_csr_destroy(&A);
  CU_ASSERT(gs_csr_validate(NULL) == GS_ERR_INVALID_ARG);
}

/* A matrix of 2^20+ entries is checked on threads first: a fault anywhere gives the serial
 * message of the first fault (two faults planted, the earlier one reported), whatever the
 * thread count; a valid one passes. */
static void test_validate_threads_first_fault(void)
{
  uint64_t s = gs_test_seed();
  const gs_idx_t m = 300000, per = 4;
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_csr_create(&A, m, m, (gs_off_t)m * per) == GS_SUCCESS);
  for (gs_idx_t i = 0; i <= m; ++i) A->row_ptr[i] = (gs_off_t)i * per;
  for (gs_off_t p = 0; p < A->nnz; ++p) {
    A->col[p] = (gs_idx_t)(p % per) + (gs_idx_t)(p / per) % (m - per);
    A->val[p] = 1.0;
  }
  const int threads[] = {1, 2, 3, 8};
  for (int k = 0; k < 4; ++k) {
    gs_mm_set_threads(threads[k]);
    CU_ASSERT(gs_csr_validate(A) == GS_SUCCESS);
    const gs_off_t p1 = (gs_off_t)(gs_test_uniform(&s) * (double)(A->nnz / 2));
    const gs_off_t p2 = A->nnz / 2 + (gs_off_t)(gs_test_uniform(&s) * (double)(A->nnz / 2 - 1));
    A->col[p2] = m;          /* the later fault */
    A->val[p1] = NAN;        /* the first one */
    char want[128];
    snprintf(want, sizeof want, "row %d, column %d: value is not finite", (int)(p1 / per),
             (int)A->col[p1]);
    CU_ASSERT(gs_csr_validate(A) == GS_ERR_INVALID_ARG);
    CU_ASSERT(strstr(gs_last_error(), want) != NULL);
    A->val[p1] = 1.0;
    A->col[p2] = (gs_idx_t)(p2 % per) + (gs_idx_t)(p2 / per) % (m - per);
  }
  gs_mm_set_threads(0);
  gs_csr_destroy(&A);
}

static void test_features_hand_checked(void)
{
  /* [ 4 -1  0  0 ]
     [-1  4 -1  0 ]
     [ 0 -1  4  0 ]
     [ 0  0  0  0 ]  row 3 empty: diagonal not full */
  const double a[] = {4, -1, 0, 0, -1, 4, -1, 0, 0, -1, 4, 0, 0, 0, 0, 0};
  gs_csr_t *A = gs_test_csr_from_dense(4, 4, a);
  gs_features_t f;
  CU_ASSERT_FATAL(gs_csr_features(A, &f) == GS_SUCCESS);
  CU_ASSERT_EQUAL(f.rows, 4);
  CU_ASSERT_EQUAL(f.nnz, 7);
  CU_ASSERT_DOUBLE_EQUAL(f.density, 7.0 / 16.0, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(f.row_mean, 1.75, 1e-15);
  /* lengths 2,3,2,0: deviations .25,1.25,.25,-1.75 -> var = (0.0625+1.5625+0.0625+3.0625)/4 */
  CU_ASSERT_DOUBLE_EQUAL(f.row_std, sqrt(4.75 / 4.0), 1e-14);
  CU_ASSERT_EQUAL(f.row_max, 3);
  CU_ASSERT_EQUAL(f.row_min, 0);
  CU_ASSERT_EQUAL(f.empty_rows, 1);
  CU_ASSERT_EQUAL(f.diagonals, 3);
  CU_ASSERT(f.structurally_symmetric);
  CU_ASSERT(f.numerically_symmetric);
  CU_ASSERT(!f.diagonal_full);
  A->val[1] = -2.0; /* a_01 != a_10 */
  CU_ASSERT_FATAL(gs_csr_features(A, &f) == GS_SUCCESS);
  CU_ASSERT(f.structurally_symmetric);
  CU_ASSERT(!f.numerically_symmetric);
  gs_csr_destroy(&A);

  const double b[] = {2, 0, 1, 0, 3, 0}; /* 2 x 3: rectangular */
  A = gs_test_csr_from_dense(2, 3, b);
  CU_ASSERT_FATAL(gs_csr_features(A, &f) == GS_SUCCESS);
  CU_ASSERT_EQUAL(f.diagonals, 2); /* offsets 0 and 2 (0,0),(1,1) share offset 0 */
  CU_ASSERT(!f.structurally_symmetric);
  CU_ASSERT(!f.diagonal_full);
  gs_csr_destroy(&A);
}

static void test_errors_and_status_names(void)
{
  gs_csr_t *A = NULL;
  CU_ASSERT(gs_csr_create(&A, -1, 2, 0) == GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NULL(A);
  CU_ASSERT(strlen(gs_last_error()) > 0);
  CU_ASSERT(strstr(gs_last_error_location(), "matrix.c") != NULL);
  CU_ASSERT_STRING_EQUAL(gs_status_string(GS_ERR_PARSE), "GS_ERR_PARSE");
  CU_ASSERT_STRING_EQUAL(gs_status_string(GS_SUCCESS), "GS_SUCCESS");
  gs_clear_error();
  CU_ASSERT_STRING_EQUAL(gs_last_error(), "");
}

static void test_no_device_context_error(void)
{
  gs_context_t *ctx = NULL;
  gs_status_t st = gs_context_create(&ctx, 0);
  if (gs_device_count() == 0) {
    CU_ASSERT_EQUAL(st, GS_ERR_CUDA);
    CU_ASSERT(strncmp(gs_last_error(), "no CUDA device available: ", 26) == 0);
    CU_ASSERT_PTR_NULL(ctx);
  } else {
    CU_ASSERT_EQUAL(st, GS_SUCCESS);
    CU_ASSERT(strlen(gs_context_device_name(ctx)) > 0);
    gs_context_destroy(&ctx);
    CU_ASSERT_PTR_NULL(ctx);
  }
}

/* The counting allocator belongs to a context: without one nothing is allocated or counted;
 * with a device, bytes are counted per context and the failure hook hits the k-th allocation. */
static void test_dmalloc_without_device_or_injection(void)
{
  void *p = (void *)&p;
  CU_ASSERT(gs_dmalloc(NULL, &p, 64, "probe") == GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NULL(p);
  CU_ASSERT(gs_dmalloc(NULL, NULL, 64, "probe") == GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(NULL), 0);
  CU_ASSERT_EQUAL(gs_device_bytes_peak(NULL), 0);
  gs_dfree(NULL, NULL);
  gs_test_dmalloc_fail_after(NULL, 1); /* no context: nothing to arm */
  if (gs_device_count() == 0) return;

  gs_context_t *ctx = NULL, *other = NULL;
  CU_ASSERT_FATAL(gs_context_create(&ctx, 0) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_context_create(&other, 0) == GS_SUCCESS);
  CU_ASSERT(gs_dmalloc(ctx, &p, 0, "empty") == GS_SUCCESS);
  CU_ASSERT_PTR_NULL(p);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), 0);
  CU_ASSERT_FATAL(gs_dmalloc(ctx, &p, 1000, "probe") == GS_SUCCESS);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), 1000);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(other), 0); /* counted where it was allocated */
  gs_dfree(other, p); /* not other's block: left alone */
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), 1000);
  gs_dfree(ctx, p);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), 0);
  CU_ASSERT_EQUAL(gs_device_bytes_peak(ctx), 1000);

  gs_test_dmalloc_fail_after(ctx, 2); /* the second allocation on ctx fails, other's do not */
  void *a = NULL, *b = NULL, *c = NULL;
  CU_ASSERT(gs_dmalloc(ctx, &a, 64, "first") == GS_SUCCESS);
  CU_ASSERT(gs_dmalloc(other, &c, 64, "elsewhere") == GS_SUCCESS);
  CU_ASSERT(gs_dmalloc(ctx, &b, 64, "probe") == GS_ERR_DEVICE_MEMORY);
  CU_ASSERT(strstr(gs_last_error(), "probe") != NULL);
  CU_ASSERT_PTR_NULL(b);
  CU_ASSERT(gs_dmalloc(ctx, &b, 64, "again") == GS_SUCCESS); /* one failure only */
  gs_test_dmalloc_fail_after(ctx, 0);
  gs_dfree(ctx, a);
  gs_dfree(ctx, b);
  gs_dfree(other, c);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), 0);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(other), 0);
  gs_context_destroy(&other);
  gs_context_destroy(&ctx);
}

/* The ABI's type words: the C value type is the enum's, offsets hold more than 2^31 - 1. */
static void test_types(void)
{
  CU_ASSERT_EQUAL(gs_value_type_size(GS_VALUE_TYPE), sizeof(gs_val_t));
  CU_ASSERT_STRING_EQUAL(gs_value_type_string(GS_VALUE_DOUBLE), "double");
  CU_ASSERT_STRING_EQUAL(gs_value_type_string(GS_VALUE_FLOAT), "float");
  CU_ASSERT_EQUAL(gs_value_type_size(GS_VALUE_DOUBLE), 8);
  CU_ASSERT_EQUAL(gs_value_type_size(GS_VALUE_FLOAT), 4);
  CU_ASSERT_STRING_EQUAL(gs_value_type_string((gs_value_type_t)42), "unknown");
  CU_ASSERT_EQUAL(gs_value_type_size((gs_value_type_t)42), 0);
  CU_ASSERT(sizeof(gs_off_t) == 8 && (gs_off_t)INT32_MAX + 1 > 0);
  gs_csr_t *A = NULL; /* an nnz past 32 bits is a size, not an error, up to addressable memory */
  CU_ASSERT_EQUAL(gs_csr_create(&A, 2, 2, (gs_off_t)1 << 62), GS_ERR_HOST_MEMORY);
  CU_ASSERT_PTR_NULL(A);
  CU_ASSERT_EQUAL(gs_csr_create(&A, 2, 2, -1), GS_ERR_INVALID_ARG);
}

int main(void)
{
  CU_TestInfo tests[] = {
    {"coo_to_csr sorts, sums duplicates, keeps zeros", test_coo_to_csr_sorts_sums_keeps_zeros},
    {"transpose and host spmv", test_transpose_and_spmv},
    {"random transpose identities", test_random_transpose_roundtrip},
    {"validate catches faults", test_validate_catches_faults},
    {"validate on threads: the first fault's message", test_validate_threads_first_fault},
    {"features on hand-checked matrices", test_features_hand_checked},
    {"errors and status names", test_errors_and_status_names},
    {"value types and 64-bit offsets", test_types},
    {"context without a device", test_no_device_context_error},
    {"device allocator injection", test_dmalloc_without_device_or_injection},
    CU_TEST_INFO_NULL};
  return gs_test_main("core", tests, 0);
}
