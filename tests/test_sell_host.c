/* tests/test_sell_host.c: the sliced ELL layout of cusparse-sell (spmv/sell_build.c) and its
 * host apply against the CSR product within its rounding bound, without a GPU. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spmv/sell.h"
#include "tests/testutil.h"


/* Every structural promise of sell.h, checked against the CSR it came from. */
static void check_layout(const gs_sell_t *S, const gs_csr_t *A, gs_idx_t C)
{
  CU_ASSERT_EQUAL_FATAL(S->m, A->m);
  CU_ASSERT_EQUAL(S->n, A->n);
  CU_ASSERT_EQUAL(S->nnz, A->nnz);
  CU_ASSERT_EQUAL(S->slice_size, C);
  CU_ASSERT_EQUAL_FATAL(S->nslices, (A->m + C - 1) / C);
  CU_ASSERT_EQUAL(S->slice_ptr[0], 0);
  gs_idx_t widest = 0, stored = 0;
  for (gs_idx_t s = 0; s < S->nslices; ++s) {
    gs_idx_t span = S->slice_ptr[s + 1] - S->slice_ptr[s];
    CU_ASSERT_FATAL(span >= 0 && span % C == 0);
    gs_idx_t w = span / C, want = 0;
    for (gs_idx_t i = s * C; i < (s + 1) * C && i < A->m; ++i)
      if (A->row_ptr[i + 1] - A->row_ptr[i] > want)
        want = (gs_idx_t)(A->row_ptr[i + 1] - A->row_ptr[i]);
    CU_ASSERT_EQUAL(w, want); /* the slice is as wide as its longest row, no wider */
    if (w > widest) widest = w;
    for (gs_idx_t r = 0; r < C; ++r) {
      gs_idx_t i = s * C + r;
      gs_idx_t len = i < A->m ? (gs_idx_t)(A->row_ptr[i + 1] - A->row_ptr[i]) : 0;
      for (gs_idx_t k = 0; k < w; ++k) {
        gs_idx_t q = S->slice_ptr[s] + k * C + r;
        if (k < len) { /* entry k of row i, in CSR order */
          CU_ASSERT_EQUAL(S->col[q], A->col[A->row_ptr[i] + k]);
          CU_ASSERT_EQUAL(S->val[q], A->val[A->row_ptr[i] + k]);
          ++stored;
        } else { /* padding, also the rows past m in the last slice */
          CU_ASSERT_EQUAL(S->col[q], -1);
          CU_ASSERT_EQUAL(S->val[q], 0.0);
        }
      }
    }
  }
  CU_ASSERT_EQUAL(S->slots, S->slice_ptr[S->nslices]);
  CU_ASSERT_EQUAL(S->max_width, widest);
  CU_ASSERT_EQUAL(stored, A->nnz);
}

/* y = alpha*op(A)*x + beta*y through the layout, on random x, y, against the product's rounding
 * bound; with beta == 0 the layout's y starts as NaN, which must not leak. */
static void check_apply(const gs_sell_t *S, const gs_csr_t *A, gs_op_t op, double alpha,
                        double beta, uint64_t *rng)
{
  gs_idx_t in = op == GS_OP_N ? A->n : A->m, out = op == GS_OP_N ? A->m : A->n;
  double *x = malloc(((size_t)in + 1) * sizeof *x), *y = malloc(((size_t)out + 1) * sizeof *y);
  double *y0 = malloc(((size_t)out + 1) * sizeof *y0);
  CU_ASSERT_FATAL(x && y && y0);
  for (gs_idx_t j = 0; j < in; ++j) x[j] = 2.0 * gs_test_uniform(rng) - 1.0;
  for (gs_idx_t i = 0; i < out; ++i) {
    y0[i] = gs_test_uniform(rng);
    y[i] = beta == 0.0 ? NAN : y0[i];
  }
  CU_ASSERT_FATAL(gs_sell_spmv_host(S, op, alpha, x, beta, y) ==
                  GS_SUCCESS);
  CU_ASSERT(gs_test_spmv_ok(A, op, alpha, x, beta, y0, y, "sell slice %d", (int)S->slice_size));
  free(x);
  free(y);
  free(y0);
}

static void check_all(const gs_csr_t *A, gs_idx_t C, uint64_t *rng)
{
  static const double coef[] = {0.0, 1.0, -1.0, 2.5};
  gs_sell_t *S = NULL;
  CU_ASSERT_FATAL(gs_sell_build(&S, A, C, 0.0) == GS_SUCCESS);
  check_layout(S, A, C);
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b) {
      check_apply(S, A, GS_OP_N, coef[a], coef[b], rng);
      check_apply(S, A, GS_OP_T, coef[a], coef[b], rng);
    }
  gs_sell_destroy(&S);
  CU_ASSERT_PTR_NULL(S);
}

/* The 4 x 4 example of NVIDIA's CUDALibrarySamples cuSPARSE/spmv_sell, slice size 2: our
 * builder must produce exactly the arrays that sample hands to cusparseCreateSlicedEll. */
static void test_layout_matches_cusparse_sample(void)
{
  const double a[] = {1, 0, 2, 3, 0, 4, 0, 0, 5, 0, 6, 7, 0, 8, 0, 9};
  gs_csr_t *A = gs_test_csr_from_dense(4, 4, a);
  gs_sell_t *S = NULL;
  CU_ASSERT_FATAL(gs_sell_build(&S, A, 2, 0.0) == GS_SUCCESS);
  const gs_idx_t ptr[] = {0, 6, 12}, col[] = {0, 1, 2, -1, 3, -1, 0, 1, 2, 3, 3, -1};
  const double val[] = {1, 4, 2, 0, 3, 0, 5, 8, 6, 9, 7, 0};
  CU_ASSERT_EQUAL(S->nslices, 2);
  CU_ASSERT_EQUAL(S->slots, 12);
  CU_ASSERT_EQUAL(S->max_width, 3);
  CU_ASSERT(memcmp(S->slice_ptr, ptr, sizeof ptr) == 0);
  CU_ASSERT(memcmp(S->col, col, sizeof col) == 0);
  CU_ASSERT(memcmp(S->val, val, sizeof val) == 0);
  const double x[] = {1, 2, 3, 4}, want[] = {19, 8, 51, 52};
  double y[4] = {NAN, NAN, NAN, NAN};
  CU_ASSERT(gs_sell_spmv_host(S, GS_OP_N, 1.0, x, 0.0, y) == GS_SUCCESS);
  for (int i = 0; i < 4; ++i) CU_ASSERT_DOUBLE_EQUAL(y[i], want[i], 0.0);
  gs_sell_destroy(&S);
  gs_csr_destroy(&A);
}

/* 5 x 4 with an empty row and a last slice of one row (padded to the slice size), C = 2. */
static void test_layout_hand_checked(void)
{
  /* [ 0 1 0 2 ]   slice 0: rows 0-1, width 2
     [ 0 3 0 0 ]
     [ 0 0 0 0 ]   slice 1: rows 2-3, width 3 (row 2 empty)
     [ 4 5 6 0 ]
     [ 0 0 0 7 ]   slice 2: row 4 and one padding row, width 1 */
  const double a[] = {0, 1, 0, 2, 0, 3, 0, 0, 0, 0, 0, 0, 4, 5, 6, 0, 0, 0, 0, 7};
  gs_csr_t *A = gs_test_csr_from_dense(5, 4, a);
  gs_sell_t *S = NULL;
  CU_ASSERT_FATAL(gs_sell_build(&S, A, 2, 0.0) == GS_SUCCESS);
  const gs_idx_t ptr[] = {0, 4, 10, 12};
  const gs_idx_t col[] = {1, 1, 3, -1, /**/ -1, 0, -1, 1, -1, 2, /**/ 3, -1};
  const double val[] = {1, 3, 2, 0, /**/ 0, 4, 0, 5, 0, 6, /**/ 7, 0};
  CU_ASSERT_EQUAL(S->nslices, 3);
  CU_ASSERT_EQUAL(S->slots, 12);
  CU_ASSERT_EQUAL(S->max_width, 3);
  CU_ASSERT(memcmp(S->slice_ptr, ptr, sizeof ptr) == 0);
  CU_ASSERT(memcmp(S->col, col, sizeof col) == 0);
  CU_ASSERT(memcmp(S->val, val, sizeof val) == 0);
  check_layout(S, A, 2);

  const double x[] = {1, 10, 100, 1000}, xt[] = {1, 2, 3, 4, 5};
  const double want[] = {2 * (10 + 2000) - 1, 2 * 30 - 1, -1, 2 * (4 + 50 + 600) - 1, 2 * 7000 - 1};
  const double want_t[] = {16, 1 + 6 + 20, 24, 2 + 35}; /* A^T xt */
  double y[5] = {1, 1, 1, 1, 1}, yt[4] = {NAN, NAN, NAN, NAN};
  CU_ASSERT(gs_sell_spmv_host(S, GS_OP_N, 2.0, x, -1.0, y) == GS_SUCCESS);
  for (int i = 0; i < 5; ++i) CU_ASSERT_DOUBLE_EQUAL(y[i], want[i], 0.0);
  CU_ASSERT(gs_sell_spmv_host(S, GS_OP_T, 1.0, xt, 0.0, yt) == GS_SUCCESS);
  for (int j = 0; j < 4; ++j) CU_ASSERT_DOUBLE_EQUAL(yt[j], want_t[j], 0.0);
  CU_ASSERT(gs_sell_spmv_host(S, 'X', 1.0, x, 0.0, y) == GS_ERR_INVALID_ARG);

  /* slice size 1 is CSR padded to nothing; slice size >= m is one ELL block */
  gs_sell_destroy(&S);
  CU_ASSERT_FATAL(gs_sell_build(&S, A, 1, 0.0) == GS_SUCCESS);
  CU_ASSERT_EQUAL(S->slots, A->nnz);
  check_layout(S, A, 1);
  gs_sell_destroy(&S);
  CU_ASSERT_FATAL(gs_sell_build(&S, A, 32, 0.0) == GS_SUCCESS);
  CU_ASSERT_EQUAL(S->nslices, 1);
  CU_ASSERT_EQUAL(S->slots, 32 * 3);
  check_layout(S, A, 32);
  gs_sell_destroy(&S);
  gs_csr_destroy(&A);
}

static void test_random_against_csr(void)
{
  uint64_t rng = gs_test_seed() ^ 0x5e11u;
  static const gs_idx_t sizes[] = {1, 2, 3, 32};
  const int trials = gs_test_quick() ? 6 : 40;
  for (int t = 0; t < trials; ++t) {
    gs_idx_t m = 1 + (gs_idx_t)(gs_test_uniform(&rng) * 150);
    gs_idx_t n = 1 + (gs_idx_t)(gs_test_uniform(&rng) * 150); /* rectangular both ways */
    double density = 0.002 + 0.2 * gs_test_uniform(&rng) * gs_test_uniform(&rng);
    gs_csr_t *A = gs_test_random_csr(&rng, m, n, density);
    CU_ASSERT_FATAL(A != NULL);
    check_all(A, sizes[t % 4], &rng);
    check_all(A, GS_SELL_SLICE_SIZE, &rng);
    gs_csr_destroy(&A);
  }
}

/* Empty rows in runs longer than a slice, so that whole slices have width 0. */
static void test_empty_rows_and_slices(void)
{
  uint64_t rng = gs_test_seed() ^ 0xe3u;
  gs_coo_t *C = NULL;
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_coo_create(&C, 200, 70, 16) == GS_SUCCESS);
  for (gs_idx_t i = 0; i < 200; ++i) {
    if ((i / 40) % 2 == 1 || i % 3 == 0) continue; /* rows 40-79, 120-159 and every third empty */
    for (gs_idx_t j = 0; j < 70; ++j)
      if (gs_test_uniform(&rng) < 0.1)
        CU_ASSERT_FATAL(gs_coo_push(C, i, j, gs_test_uniform(&rng) - 0.5) == GS_SUCCESS);
  }
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
  gs_sell_t *S = NULL;
  CU_ASSERT_FATAL(gs_sell_build(&S, A, 32, 0.0) == GS_SUCCESS);
  /* slice 1 holds rows 32..63 of which 40..63 are empty: still as wide as rows 32..39 need;
     rows 128..159 (slice 4) are all empty: width 0 */
  CU_ASSERT_EQUAL(S->slice_ptr[5] - S->slice_ptr[4], 0);
  gs_sell_destroy(&S);
  check_all(A, 32, &rng);
  check_all(A, 5, &rng);
  gs_csr_destroy(&A);
  gs_coo_destroy(&C);
}

static void test_tiny_and_empty_shapes(void)
{
  uint64_t rng = gs_test_seed() ^ 0x77u;
  gs_sell_t *S = NULL;
  /* 1 x 1 with and without its entry */
  const double one[] = {3.0}, none[] = {0.0};
  gs_csr_t *A = gs_test_csr_from_dense(1, 1, one);
  check_all(A, 32, &rng);
  /* 32 slots for 1 entry, but the 31 rows padding the last slice are no fill: accepted */
  CU_ASSERT_FATAL(gs_sell_build(&S, A, 32, 1.0) == GS_SUCCESS);
  CU_ASSERT_EQUAL(S->slots, 32);
  gs_sell_destroy(&S);
  gs_csr_destroy(&A);
  A = gs_test_csr_from_dense(1, 1, none);
  check_all(A, 32, &rng);
  gs_csr_destroy(&A);

  /* nnz = 0, rectangular: nothing stored, y = beta*y, x never read */
  CU_ASSERT_FATAL(gs_csr_create(&A, 7, 3, 0) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_sell_build(&S, A, 32, 3.0) == GS_SUCCESS);
  CU_ASSERT_EQUAL(S->slots, 0);
  CU_ASSERT_EQUAL(S->nslices, 1);
  CU_ASSERT_PTR_NULL(S->col);
  double y[7] = {1, 2, 3, 4, 5, 6, 7}, yt[3] = {NAN, NAN, NAN};
  CU_ASSERT(gs_sell_spmv_host(S, GS_OP_N, 1.0, NULL, 2.0, y) == GS_SUCCESS);
  for (int i = 0; i < 7; ++i) CU_ASSERT_DOUBLE_EQUAL(y[i], 2.0 * (i + 1), 0.0);
  CU_ASSERT(gs_sell_spmv_host(S, GS_OP_T, 1.0, NULL, 0.0, yt) == GS_SUCCESS);
  for (int j = 0; j < 3; ++j) CU_ASSERT_DOUBLE_EQUAL(yt[j], 0.0, 0.0);
  gs_sell_destroy(&S);
  check_all(A, 4, &rng);
  gs_csr_destroy(&A);

  /* 0 x 0 and 0 x 5: no slices */
  CU_ASSERT_FATAL(gs_csr_create(&A, 0, 5, 0) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_sell_build(&S, A, 32, 3.0) == GS_SUCCESS);
  CU_ASSERT_EQUAL(S->nslices, 0);
  CU_ASSERT_EQUAL(S->slots, 0);
  CU_ASSERT_EQUAL(S->slice_ptr[0], 0);
  double y5[5] = {1, 1, 1, 1, 1};
  CU_ASSERT(gs_sell_spmv_host(S, GS_OP_T, 1.0, NULL, -1.0, y5) == GS_SUCCESS);
  CU_ASSERT_DOUBLE_EQUAL(y5[4], -1.0, 0.0);
  gs_sell_destroy(&S);
  gs_csr_destroy(&A);
  CU_ASSERT_FATAL(gs_csr_create(&A, 0, 0, 0) == GS_SUCCESS);
  check_all(A, 32, &rng);
  gs_csr_destroy(&A);
}

/* One dense row among short ones: its slice is padded to its length, the fill guard refuses
 * it unless told otherwise, and the product is still right. */
static void test_one_long_row(void)
{
  uint64_t rng = gs_test_seed() ^ 0x10u;
  const gs_idx_t m = 100, n = 300;
  gs_coo_t *C = NULL;
  gs_csr_t *A = NULL;
  gs_sell_t *S = NULL;
  CU_ASSERT_FATAL(gs_coo_create(&C, m, n, 512) == GS_SUCCESS);
  for (gs_idx_t j = 0; j < n; ++j)
    CU_ASSERT_FATAL(gs_coo_push(C, 37, j, gs_test_uniform(&rng) + 0.5) == GS_SUCCESS);
  for (gs_idx_t i = 0; i < m; ++i)
    if (i != 37) CU_ASSERT_FATAL(gs_coo_push(C, i, (i * 7) % n, 1.0 + i) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
  /* slice 1 (rows 32..63) is 300 wide: 9600 + 32 + 32 + 4 (rows 96..99) = 9668 slots of
     real rows for 399 entries, 24.2x; 9600 + 3*32 stored */
  gs_clear_error();
  CU_ASSERT(gs_sell_build(&S, A, 32, 3.0) == GS_ERR_FORMAT_FILL);
  CU_ASSERT_PTR_NULL(S);
  CU_ASSERT(strstr(gs_last_error(), "SELL fill refused") != NULL);
  CU_ASSERT(strstr(gs_last_error(), "longest row 300") != NULL);
  CU_ASSERT_FATAL(gs_sell_build(&S, A, 32, 25.0) == GS_SUCCESS);
  CU_ASSERT_EQUAL(S->slots, 32 * 300 + 3 * 32);
  CU_ASSERT_EQUAL(S->max_width, 300);
  gs_sell_destroy(&S);
  check_all(A, 32, &rng);
  check_all(A, 3, &rng);
  gs_csr_destroy(&A);
  gs_coo_destroy(&C);
}

static void test_bad_arguments(void)
{
  const double a[] = {1, 2, 0, 3};
  gs_csr_t *A = gs_test_csr_from_dense(2, 2, a);
  gs_sell_t *S = (gs_sell_t *)1;
  CU_ASSERT(gs_sell_build(NULL, A, 32, 0.0) == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_sell_build(&S, NULL, 32, 0.0) == GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NULL(S);
  CU_ASSERT(gs_sell_build(&S, A, 0, 0.0) == GS_ERR_INVALID_ARG);
  CU_ASSERT(strstr(gs_last_error(), "slice size") != NULL);
  CU_ASSERT(gs_sell_spmv_host(NULL, GS_OP_N, 1.0, NULL, 0.0, NULL) == GS_ERR_INVALID_ARG);
  CU_ASSERT_FATAL(gs_sell_build(&S, A, 32, 0.0) == GS_SUCCESS);
  double y[2];
  CU_ASSERT(gs_sell_spmv_host(S, GS_OP_N, 1.0, NULL, 0.0, y) == GS_ERR_INVALID_ARG);
  gs_sell_destroy(&S);
  gs_sell_destroy(&S); /* NULL-safe */
  gs_sell_destroy(NULL);
  gs_csr_destroy(&A);
}

/* Through the registry: the host check of cusparse-sell is this layout (op N and T), and every
 * other vendor backend (the registry's list, whatever it holds) answers with plain CSR. */
static void test_registry_host_apply(void)
{
  int i = gs_spmv_backend_find("cusparse-sell");
  if (i < 0) return; /* backend not compiled into this tree */
  unsigned f = gs_spmv_backend_flags(i);
  CU_ASSERT(f & GS_SPMV_FLAG_VENDOR);
  CU_ASSERT(f & GS_SPMV_FLAG_HOST_LAYOUT);
  CU_ASSERT(f & GS_SPMV_FLAG_TRANSPOSE);
  CU_ASSERT(gs_test_backend_option_default("cusparse-sell", "max_fill", -1.0) >= 1.0);

  uint64_t rng = gs_test_seed() ^ 0xabcu;
  gs_csr_t *A = gs_test_random_csr(&rng, 90, 61, 0.08);
  CU_ASSERT_FATAL(A != NULL);
  double x[90], y[90], y0[90];
  for (int j = 0; j < 90; ++j) x[j] = gs_test_uniform(&rng);
  for (int r = 0; r < 90; ++r) y[r] = y0[r] = gs_test_uniform(&rng);
  /* random rows vary: keep the guard out of this check */
  CU_ASSERT(gs_spmv_host_apply("cusparse-sell", A, "max_fill=32", GS_OP_N, 1.5, x, -0.5, y) ==
            GS_SUCCESS);
  CU_ASSERT(gs_test_spmv_ok(A, GS_OP_N, 1.5, x, -0.5, y0, y, "cusparse-sell host"));
  for (int r = 0; r < 61; ++r) y[r] = NAN;
  CU_ASSERT(gs_spmv_host_apply("cusparse-sell", A, "cusparse-sell.max_fill=32", GS_OP_T, -2.0,
                               x, 0.0, y) == GS_SUCCESS);
  CU_ASSERT(gs_test_spmv_ok(A, GS_OP_T, -2.0, x, 0.0, NULL, y, "cusparse-sell host"));

  int vendors = 0;
  for (int j = 0; j < gs_spmv_backend_count(); ++j) {
    unsigned fj = gs_spmv_backend_flags(j);
    const char *name = gs_spmv_backend_name(j);
    if (!(fj & GS_SPMV_FLAG_VENDOR)) continue;
    ++vendors;
    CU_ASSERT(strncmp(name, "cusparse-", 9) == 0);
    CU_ASSERT(fj & GS_SPMV_FLAG_TRANSPOSE);
    if (fj & GS_SPMV_FLAG_HOST_LAYOUT) continue;
    for (int r = 0; r < 90; ++r) y[r] = y0[r];
    CU_ASSERT(gs_spmv_host_apply(name, A, NULL, GS_OP_N, 0.5, x, 2.0, y) == GS_SUCCESS);
    CU_ASSERT(gs_test_spmv_ok(A, GS_OP_N, 0.5, x, 2.0, y0, y, "%s host (CSR)", name));
    for (int r = 0; r < 61; ++r) y[r] = NAN;
    CU_ASSERT(gs_spmv_host_apply(name, A, NULL, GS_OP_T, 1.0, x, 0.0, y) == GS_SUCCESS);
    CU_ASSERT(gs_test_spmv_ok(A, GS_OP_T, 1.0, x, 0.0, NULL, y, "%s host (CSR)", name));
  }
  CU_ASSERT(vendors >= 2);
  /* the default fill guard (3x) answers as the device backend would: a full row among
     single entries refuses */
  gs_coo_t *C = NULL;
  gs_csr_t *L = NULL;
  CU_ASSERT_FATAL(gs_coo_create(&C, 64, 61, 128) == GS_SUCCESS);
  for (gs_idx_t i = 0; i < 64; ++i) CU_ASSERT_FATAL(gs_coo_push(C, i, i % 61, 1.0) == GS_SUCCESS);
  for (gs_idx_t j = 0; j < 61; ++j) CU_ASSERT_FATAL(gs_coo_push(C, 5, j, 2.0) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_coo_to_csr(&L, C) == GS_SUCCESS);
  CU_ASSERT(gs_spmv_host_apply("cusparse-sell", L, NULL, GS_OP_N, 1.0, x, 0.0, y) ==
            GS_ERR_FORMAT_FILL);
  gs_csr_destroy(&L);
  gs_coo_destroy(&C);
  gs_csr_destroy(&A);
}

int main(void)
{
  CU_TestInfo tests[] = {
      {"layout matches NVIDIA's spmv_sell sample", test_layout_matches_cusparse_sample},
      {"layout hand-checked (partial last slice)", test_layout_hand_checked},
      {"random rectangular matrices against CSR", test_random_against_csr},
      {"empty rows and empty slices", test_empty_rows_and_slices},
      {"1x1, nnz = 0, zero rows", test_tiny_and_empty_shapes},
      {"one long row and the fill guard", test_one_long_row},
      {"bad arguments", test_bad_arguments},
      {"registry host apply of the cuSPARSE backends", test_registry_host_apply},
      CU_TEST_INFO_NULL};
  return gs_test_main("sell_host", tests, 0);
}
