/* tests/test_sellp_host.c: the SELL-P layout of the sellp backend (spmv/sellp_build.c on the
 * builder of spmv/sell_build.c) and the host emulation of its kernels, against the CSR product
 * within its rounding bound, without a GPU: slices with one long row, m not a multiple of C,
 * empty rows and slices, sorting windows (the last one partial), the permutation, the fill and
 * 32-bit slot refusals, the automatic C, T and sigma, and the registry's host apply; every
 * layout again in mixed precision (values rounded once to float, gs_sell_round) within the
 * bound of float values. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spmv/sellp.h"
#include "tests/testutil.h"

static gs_idx_t row_len(const gs_csr_t *A, gs_idx_t i)
{
  return (gs_idx_t)(A->row_ptr[i + 1] - A->row_ptr[i]);
}

/* Resolved options as spmv.c hands them to the slots: c, t, sigma, max_fill. */
static gs_spmv_cfg_t cfg_of(double c, double t, double sigma, double max_fill)
{
  gs_spmv_cfg_t cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.v[SELLP_OPT_C] = c;
  cfg.v[SELLP_OPT_T] = t;
  cfg.v[SELLP_OPT_SIGMA] = sigma;
  cfg.v[SELLP_OPT_MAX_FILL] = max_fill;
  return cfg;
}

/* Stored value q of S: the double, or the float of a rounded (mixed) layout. */
static double slot_val(const gs_sell_t *S, int64_t q)
{
  return S->val ? S->val[q] : (double)S->valf[q];
}

/* Value a of A as S must hold it: itself, or rounded to float once in a mixed layout. */
static double want_val(const gs_sell_t *S, double a) { return S->valf ? (double)(float)a : a; }

/* Every structural promise of sell.h and sellp.h, checked against the CSR it came from (a
 * mixed layout: the same slots, each value A's rounded to float, the doubles gone). */
static void check_layout(const gs_sell_t *S, const gs_csr_t *A, gs_idx_t C, gs_idx_t P,
                         gs_idx_t sigma)
{
  CU_ASSERT_EQUAL_FATAL(S->m, A->m);
  CU_ASSERT_EQUAL(S->n, A->n);
  CU_ASSERT_EQUAL(S->nnz, A->nnz);
  CU_ASSERT_EQUAL_FATAL(S->slice_size, C);
  CU_ASSERT_EQUAL_FATAL(S->pad, P);
  CU_ASSERT_EQUAL(S->sigma, sigma);
  CU_ASSERT_EQUAL_FATAL(S->nslices, (A->m + C - 1) / C);
  CU_ASSERT_EQUAL(S->slice_ptr[0], 0);
  CU_ASSERT(S->val == NULL || S->valf == NULL); /* one precision at a time */
  if (S->slots > 0) CU_ASSERT(S->val != NULL || S->valf != NULL);

  /* the permutation: a bijection that moves rows only inside their window, longer rows first,
     rows of equal length in their original order; NULL exactly when that order is the identity */
  gs_idx_t *order = malloc(((size_t)A->m + 1) * sizeof *order);
  char *seen = calloc((size_t)A->m + 1, 1);
  CU_ASSERT_FATAL(order && seen);
  int identity = 1;
  for (gs_idx_t r = 0; r < A->m; ++r) {
    order[r] = S->perm ? S->perm[r] : r;
    CU_ASSERT_FATAL(order[r] >= 0 && order[r] < A->m);
    CU_ASSERT_FATAL(!seen[order[r]]);
    seen[order[r]] = 1;
    CU_ASSERT_EQUAL(order[r] / sigma, r / sigma); /* stays in its window */
    if (order[r] != r) identity = 0;
    if (r % sigma != 0) { /* not the first row of a window: sorted after the previous one */
      gs_idx_t a = row_len(A, order[r - 1]), b = row_len(A, order[r]);
      CU_ASSERT(a > b || (a == b && order[r - 1] < order[r]));
    }
  }
  CU_ASSERT_EQUAL(S->perm == NULL, identity);

  gs_idx_t widest = 0;
  int64_t stored = 0, used = 0;
  for (gs_idx_t s = 0; s < S->nslices; ++s) {
    gs_idx_t span = S->slice_ptr[s + 1] - S->slice_ptr[s];
    CU_ASSERT_FATAL(span >= 0 && span % (C * P) == 0); /* width a multiple of P */
    gs_idx_t w = span / C, longest = 0;
    for (gs_idx_t r = s * C; r < (s + 1) * C && r < A->m; ++r)
      if (row_len(A, order[r]) > longest) longest = row_len(A, order[r]);
    CU_ASSERT_EQUAL(w, (longest + P - 1) / P * P); /* the longest row rounded up, no wider */
    if (w > widest) widest = w;
    for (gs_idx_t r = 0; r < C; ++r) {
      gs_idx_t row = s * C + r;
      gs_idx_t len = row < A->m ? row_len(A, order[row]) : 0;
      if (row < A->m) used += w;
      for (gs_idx_t k = 0; k < w; ++k) {
        gs_idx_t q = S->slice_ptr[s] + k * C + r;
        if (k < len) { /* entry k of the original row, in CSR order */
          CU_ASSERT_EQUAL(S->col[q], A->col[A->row_ptr[order[row]] + k]);
          CU_ASSERT_EQUAL(slot_val(S, q), want_val(S, A->val[A->row_ptr[order[row]] + k]));
          ++stored;
        } else { /* padding, also the rows past m in the last slice */
          CU_ASSERT_EQUAL(S->col[q], -1);
          CU_ASSERT_EQUAL(slot_val(S, q), 0.0);
        }
      }
    }
  }
  CU_ASSERT_EQUAL(S->slots, S->slice_ptr[S->nslices]);
  CU_ASSERT_EQUAL(S->max_width, widest);
  CU_ASSERT_EQUAL(S->used, used);
  CU_ASSERT_EQUAL(stored, A->nnz);
  free(order);
  free(seen);
}

/* y = alpha*op(A)*x + beta*y through the kernel emulation and through the plain layout apply,
 * on random x and y, against the product's rounding bound (a mixed layout: the bound of values
 * rounded to float, u = 2^-24); with beta == 0, y starts as NaN. */
static void check_apply(const gs_sell_t *S, const gs_csr_t *A, gs_op_t op, double alpha,
                        double beta, uint64_t *rng)
{
  gs_idx_t in = op == GS_OP_N ? A->n : A->m, out = op == GS_OP_N ? A->m : A->n;
  double *x = malloc(((size_t)in + 1) * sizeof *x), *y = malloc(((size_t)out + 1) * sizeof *y);
  double *y0 = malloc(((size_t)out + 1) * sizeof *y0);
  CU_ASSERT_FATAL(x && y && y0);
  for (gs_idx_t j = 0; j < in; ++j) x[j] = 2.0 * gs_test_uniform(rng) - 1.0;
  for (gs_idx_t i = 0; i < out; ++i) y0[i] = gs_test_uniform(rng);
  for (int path = 0; path < 2; ++path) {
    for (gs_idx_t i = 0; i < out; ++i) y[i] = beta == 0.0 ? NAN : y0[i];
    gs_status_t st = path == 0 ? gs_sellp_layout_apply_host(S, op, alpha, x, beta, y)
                               : gs_sell_spmv_host(S, op, alpha, x, beta, y);
    CU_ASSERT_FATAL(st == GS_SUCCESS);
    if (S->valf) {
      char label[96];
      snprintf(label, sizeof label, "sellp mixed %s C %d P %d sigma %d",
               path == 0 ? "kernel order" : "layout", (int)S->slice_size, (int)S->pad,
               (int)S->sigma);
      CU_ASSERT(gs_test_spmv_ok_u(A, op, alpha, x, beta, y0, y, GS_PRECISION_MIXED_U, label));
    } else {
      CU_ASSERT(gs_test_spmv_ok(A, op, alpha, x, beta, y0, y, "sellp %s C %d P %d sigma %d",
                                path == 0 ? "kernel order" : "layout", (int)S->slice_size,
                                (int)S->pad, (int)S->sigma));
    }
  }
  free(x);
  free(y);
  free(y0);
}

static void check_all(const gs_csr_t *A, gs_idx_t C, gs_idx_t P, gs_idx_t sigma, uint64_t *rng)
{
  static const double coef[][2] = {{1.0, 0.0}, {-1.0, 1.0}, {2.5, -0.5}, {0.0, 2.0}, {0.0, 0.0}};
  gs_sell_t *S = NULL;
  const gs_sell_params_t p = {C, P, sigma, 0.0, "SELL-P"};
  CU_ASSERT_FATAL(gs_sell_build_p(&S, A, &p) == GS_SUCCESS);
  for (int mixed = 0; mixed < 2; ++mixed) { /* the double layout, then the same rounded */
    if (mixed) CU_ASSERT_FATAL(gs_sell_round(S) == GS_SUCCESS);
    check_layout(S, A, C, P, sigma);
    for (size_t k = 0; k < sizeof coef / sizeof coef[0]; ++k) {
      check_apply(S, A, GS_OP_N, coef[k][0], coef[k][1], rng);
      check_apply(S, A, GS_OP_T, coef[k][0], coef[k][1], rng);
    }
  }
  gs_sell_destroy(&S);
  CU_ASSERT_PTR_NULL(S);
}

/* Every (C, T) the kernels take, small enough for the host: one warp a slice, several slices a
 * warp, a group spanning warps with C < 32 (butterfly, then shared memory) and with C >= 32
 * (shared memory only), the largest group of 1024 threads. */
static const gs_idx_t g_shapes[][2] = {{1, 1},  {4, 1},  {32, 1}, {2, 4},   {8, 4},
                                       {1, 32}, {8, 8},  {4, 32}, {64, 2},  {32, 4},
                                       {128, 1}, {256, 4}, {16, 64 / 16}, {32, 32}};
#define N_SHAPES (sizeof g_shapes / sizeof g_shapes[0])

/* ---- tests ------------------------------------------------------------------------------- */

/* 6 x 5, C = 2, T = P = 2, sigma = 4: windows rows 0-3 and 4-5 (partial), slices of 2 rows.
 *   row lengths 1 3 0 2 | 1 2   ->   stored order 1 3 0 2 | 5 4 */
static void test_layout_hand_checked(void)
{
  const double a[] = {1, 0, 0, 0, 0, /* row 0: 1 entry   */
                      0, 2, 3, 0, 4, /* row 1: 3 entries */
                      0, 0, 0, 0, 0, /* row 2: empty     */
                      5, 0, 0, 6, 0, /* row 3: 2 entries */
                      0, 0, 7, 0, 0, /* row 4: 1 entry   */
                      8, 9, 0, 0, 0 /* row 5: 2 entries */};
  gs_csr_t *A = gs_test_csr_from_dense(6, 5, a);
  gs_sell_t *S = NULL;
  const gs_sell_params_t p = {2, 2, 4, 0.0, "SELL-P"};
  CU_ASSERT_FATAL(gs_sell_build_p(&S, A, &p) == GS_SUCCESS);
  const gs_idx_t perm[] = {1, 3, 0, 2, 5, 4};
  /* slice 0 (rows 1, 3): width 3 -> 4; slice 1 (rows 0, 2): 1 -> 2; slice 2 (rows 5, 4): 2 */
  const gs_idx_t ptr[] = {0, 8, 12, 16};
  const gs_idx_t col[] = {1, 0, 2, 3, 4, -1, -1, -1, /**/ 0, -1, -1, -1, /**/ 0, 2, 1, -1};
  const double val[] = {2, 5, 3, 6, 4, 0, 0, 0, /**/ 1, 0, 0, 0, /**/ 8, 7, 9, 0};
  CU_ASSERT_PTR_NOT_NULL_FATAL(S->perm);
  CU_ASSERT(memcmp(S->perm, perm, sizeof perm) == 0);
  CU_ASSERT(memcmp(S->slice_ptr, ptr, sizeof ptr) == 0);
  CU_ASSERT_EQUAL_FATAL(S->slots, 16);
  CU_ASSERT(memcmp(S->col, col, sizeof col) == 0);
  CU_ASSERT(memcmp(S->val, val, sizeof val) == 0);
  CU_ASSERT_EQUAL(S->max_width, 4);
  CU_ASSERT_EQUAL(S->used, 16);
  check_layout(S, A, 2, 2, 4);

  /* exact products: every sum below is an integer */
  const double x[] = {1, 10, 100, 1000, 10000}, xt[] = {1, 2, 3, 4, 5, 6};
  const double want[] = {2 * 1 + 1, 2 * (20 + 300 + 40000) + 1, 1, 2 * (5 + 6000) + 1,
                         2 * 700 + 1, 2 * (8 + 90) + 1};
  const double want_t[] = {1 + 20 + 48, 4 + 54, 6 + 35, 24, 8}; /* A^T xt */
  double y[6], yt[5] = {NAN, NAN, NAN, NAN, NAN};
  for (int path = 0; path < 2; ++path) {
    for (int i = 0; i < 6; ++i) y[i] = 1.0;
    CU_ASSERT(gs_sellp_layout_apply_host(S, GS_OP_N, 2.0, x, 1.0, y) == GS_SUCCESS);
    if (path) CU_ASSERT(gs_sell_spmv_host(S, GS_OP_N, 2.0, x, 1.0, y) == GS_SUCCESS);
    /* path 1 applied twice: y = A x * 2 + (2 A x + 1) */
    for (int i = 0; i < 6; ++i)
      CU_ASSERT_DOUBLE_EQUAL(y[i], path ? 2 * want[i] - 1 : want[i], 0.0);
  }
  CU_ASSERT(gs_sellp_layout_apply_host(S, GS_OP_T, 1.0, xt, 0.0, yt) == GS_SUCCESS);
  for (int j = 0; j < 5; ++j) CU_ASSERT_DOUBLE_EQUAL(yt[j], want_t[j], 0.0);
  gs_sell_destroy(&S);

  /* sigma = 1 and P = 1 is cuSPARSE's layout, byte for byte */
  gs_sell_t *R = NULL;
  const gs_sell_params_t q = {2, 1, 1, 0.0, "SELL-P"};
  CU_ASSERT_FATAL(gs_sell_build_p(&S, A, &q) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_sell_build(&R, A, 2, 0.0) == GS_SUCCESS);
  CU_ASSERT_PTR_NULL(S->perm);
  CU_ASSERT_EQUAL_FATAL(S->slots, R->slots);
  CU_ASSERT(memcmp(S->slice_ptr, R->slice_ptr, 4 * sizeof *S->slice_ptr) == 0);
  CU_ASSERT(memcmp(S->col, R->col, (size_t)S->slots * sizeof *S->col) == 0);
  CU_ASSERT(memcmp(S->val, R->val, (size_t)S->slots * sizeof *S->val) == 0);
  gs_sell_destroy(&S);
  gs_sell_destroy(&R);
  gs_csr_destroy(&A);
}

/* Random rectangular matrices, m rarely a multiple of C, every (C, T) shape and sorting
 * windows of 1, C, a window that is not a multiple of C, and one larger than m. */
static void test_random_against_csr(void)
{
  uint64_t rng = gs_test_seed() ^ 0x5e11b;
  const int trials = gs_test_quick() ? 3 : 14;
  for (int t = 0; t < trials; ++t) {
    gs_idx_t m = 1 + (gs_idx_t)(gs_test_uniform(&rng) * 300);
    gs_idx_t n = 1 + (gs_idx_t)(gs_test_uniform(&rng) * 200);
    double density = 0.002 + 0.3 * gs_test_uniform(&rng) * gs_test_uniform(&rng);
    gs_csr_t *A = gs_test_random_csr(&rng, m, n, density);
    CU_ASSERT_FATAL(A != NULL);
    for (size_t k = 0; k < N_SHAPES; ++k) {
      if (gs_test_quick() && k % 3 != (size_t)t % 3) continue;
      const gs_idx_t C = g_shapes[k][0], P = g_shapes[k][1];
      const gs_idx_t sigmas[] = {1, C, 3 * C + 1, m + 5};
      check_all(A, C, P, sigmas[(k + (size_t)t) % 4], &rng);
    }
    gs_csr_destroy(&A);
  }
}

/* One long row among short ones: its slice is as wide as it (rounded to P), sorting brings it
 * to the front of its window, the fill guard refuses it with the numbers, and the products are
 * right on every shape. */
static void test_one_long_row(void)
{
  uint64_t rng = gs_test_seed() ^ 0x10b;
  const gs_idx_t m = 100, n = 301;
  gs_coo_t *Co = NULL;
  gs_csr_t *A = NULL;
  gs_sell_t *S = NULL;
  CU_ASSERT_FATAL(gs_coo_create(&Co, m, n, 512) == GS_SUCCESS);
  for (gs_idx_t j = 0; j < n; ++j)
    CU_ASSERT_FATAL(gs_coo_push(Co, 37, j, gs_test_uniform(&rng) + 0.5) == GS_SUCCESS);
  for (gs_idx_t i = 0; i < m; ++i)
    if (i != 37) CU_ASSERT_FATAL(gs_coo_push(Co, i, (i * 7) % n, 1.0 + i) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, Co) == GS_SUCCESS);

  /* C = 8, P = 4: slice 4 (rows 32..39) is 304 wide; the others 4 (one entry, rounded up) */
  const gs_sell_params_t p = {8, 4, 1, 3.0, "SELL-P"};
  gs_clear_error();
  CU_ASSERT(gs_sell_build_p(&S, A, &p) == GS_ERR_FORMAT_FILL);
  CU_ASSERT_PTR_NULL(S);
  /* used = 8 * 304 + 92 * 4 = 2800 slots for 400 entries */
  CU_ASSERT_PTR_NOT_NULL(strstr(gs_last_error(), "SELL-P fill refused"));
  CU_ASSERT_PTR_NOT_NULL(strstr(gs_last_error(), "2800 slots for 400 nonzeros"));
  CU_ASSERT_PTR_NOT_NULL(strstr(gs_last_error(), "7.00x, limit 3.00x"));
  CU_ASSERT_PTR_NOT_NULL(strstr(gs_last_error(), "longest row 304"));
  const gs_sell_params_t q = {8, 4, 1, 7.0, "SELL-P"}; /* exactly at the limit: accepted */
  CU_ASSERT_FATAL(gs_sell_build_p(&S, A, &q) == GS_SUCCESS);
  CU_ASSERT_EQUAL(S->slots, 8 * 304 + 12 * 8 * 4); /* 13 slices of 8 rows, 4 of the last pad */
  CU_ASSERT_EQUAL(S->used, 2800);
  CU_ASSERT_EQUAL(S->max_width, 304);
  gs_sell_destroy(&S);

  /* sorted in windows of 16: row 37 leads rows 32..47, so slice 4 holds it */
  const gs_sell_params_t w = {8, 4, 16, 0.0, "SELL-P"};
  CU_ASSERT_FATAL(gs_sell_build_p(&S, A, &w) == GS_SUCCESS);
  CU_ASSERT_PTR_NOT_NULL_FATAL(S->perm);
  CU_ASSERT_EQUAL(S->perm[32], 37);
  CU_ASSERT_EQUAL(S->perm[33], 32); /* the rest of the window keeps its order (equal lengths) */
  CU_ASSERT_EQUAL(S->perm[37], 36);
  CU_ASSERT_EQUAL(S->perm[38], 38);
  CU_ASSERT_EQUAL(S->slice_ptr[5] - S->slice_ptr[4], 8 * 304);
  gs_sell_destroy(&S);
  for (size_t k = 0; k < N_SHAPES; ++k)
    check_all(A, g_shapes[k][0], g_shapes[k][1], k % 2 ? 16 : 1, &rng);

  /* one row of every slice long: the longest slice of a 1x4000 and a 4000x1 */
  gs_csr_t *R = NULL;
  gs_coo_destroy(&Co);
  CU_ASSERT_FATAL(gs_coo_create(&Co, 1, 4000, 4000) == GS_SUCCESS);
  for (gs_idx_t j = 0; j < 4000; j += 3)
    CU_ASSERT_FATAL(gs_coo_push(Co, 0, j, gs_test_uniform(&rng) - 0.5) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_coo_to_csr(&R, Co) == GS_SUCCESS);
  check_all(R, 32, 32, 1, &rng);
  check_all(R, 1, 32, 1, &rng);
  check_all(R, 8, 1, 1, &rng);
  gs_csr_t *Rt = NULL;
  CU_ASSERT_FATAL(gs_csr_transpose(&Rt, R) == GS_SUCCESS);
  check_all(Rt, 32, 1, 64, &rng);
  check_all(Rt, 256, 4, 1, &rng);
  gs_csr_destroy(&Rt);
  gs_csr_destroy(&R);
  gs_csr_destroy(&A);
  gs_coo_destroy(&Co);
}

/* m not a multiple of C: the rows padding the last slice are stored (padding), not counted as
 * fill, and never written by the products (y beyond m is never touched). */
static void test_partial_last_slice(void)
{
  uint64_t rng = gs_test_seed() ^ 0x3a57;
  const gs_idx_t ms[] = {1, 31, 33, 65, 127};
  for (size_t k = 0; k < sizeof ms / sizeof ms[0]; ++k) {
    gs_csr_t *A = gs_test_random_csr(&rng, ms[k], 40, 0.2);
    CU_ASSERT_FATAL(A != NULL);
    gs_sell_t *S = NULL;
    const gs_sell_params_t p = {32, 2, 1, 0.0, "SELL-P"};
    CU_ASSERT_FATAL(gs_sell_build_p(&S, A, &p) == GS_SUCCESS);
    const gs_idx_t last = S->nslices - 1, tail = S->nslices * 32 - ms[k];
    const gs_idx_t wl = (S->slice_ptr[last + 1] - S->slice_ptr[last]) / 32;
    CU_ASSERT_EQUAL(S->slots - S->used, (int64_t)tail * wl);
    /* a guard sentinel after y: the tail rows must not be written */
    double *x = malloc(40 * sizeof *x), *y = malloc(((size_t)ms[k] + 1) * sizeof *y);
    CU_ASSERT_FATAL(x && y);
    for (int j = 0; j < 40; ++j) x[j] = 1.0;
    for (gs_idx_t i = 0; i <= ms[k]; ++i) y[i] = -7.0;
    CU_ASSERT(gs_sellp_layout_apply_host(S, GS_OP_N, 1.0, x, 0.0, y) == GS_SUCCESS);
    CU_ASSERT_DOUBLE_EQUAL(y[ms[k]], -7.0, 0.0);
    free(x);
    free(y);
    gs_sell_destroy(&S);
    check_all(A, 32, 2, 1, &rng);
    check_all(A, 8, 8, 3, &rng);
    gs_csr_destroy(&A);
  }
}

/* Empty rows in runs longer than a slice (whole slices of width 0), nnz = 0, zero rows. */
static void test_empty_rows_and_shapes(void)
{
  uint64_t rng = gs_test_seed() ^ 0xe3b;
  gs_coo_t *Co = NULL;
  gs_csr_t *A = NULL;
  gs_sell_t *S = NULL;
  CU_ASSERT_FATAL(gs_coo_create(&Co, 200, 70, 16) == GS_SUCCESS);
  for (gs_idx_t i = 0; i < 200; ++i) {
    if ((i / 40) % 2 == 1 || i % 3 == 0) continue; /* rows 40-79, 120-159 and every third empty */
    for (gs_idx_t j = 0; j < 70; ++j)
      if (gs_test_uniform(&rng) < 0.1)
        CU_ASSERT_FATAL(gs_coo_push(Co, i, j, gs_test_uniform(&rng) - 0.5) == GS_SUCCESS);
  }
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, Co) == GS_SUCCESS);
  const gs_sell_params_t p = {16, 4, 1, 0.0, "SELL-P"};
  CU_ASSERT_FATAL(gs_sell_build_p(&S, A, &p) == GS_SUCCESS);
  CU_ASSERT_EQUAL(S->slice_ptr[9] - S->slice_ptr[8], 0); /* rows 128..143: all empty */
  gs_sell_destroy(&S);
  for (size_t k = 0; k < N_SHAPES; ++k) check_all(A, g_shapes[k][0], g_shapes[k][1], 1 + k, &rng);
  gs_csr_destroy(&A);
  gs_coo_destroy(&Co);

  /* nnz = 0, rectangular: nothing stored, y = beta*y, x never read */
  CU_ASSERT_FATAL(gs_csr_create(&A, 7, 3, 0) == GS_SUCCESS);
  const gs_sell_params_t q = {4, 8, 4, 3.0, "SELL-P"};
  CU_ASSERT_FATAL(gs_sell_build_p(&S, A, &q) == GS_SUCCESS);
  CU_ASSERT_EQUAL(S->slots, 0);
  CU_ASSERT_EQUAL(S->nslices, 2);
  CU_ASSERT_PTR_NULL(S->perm);
  double y[7] = {1, 2, 3, 4, 5, 6, 7}, yt[3] = {NAN, NAN, NAN};
  CU_ASSERT(gs_sellp_layout_apply_host(S, GS_OP_N, 1.0, NULL, 2.0, y) == GS_SUCCESS);
  for (int i = 0; i < 7; ++i) CU_ASSERT_DOUBLE_EQUAL(y[i], 2.0 * (i + 1), 0.0);
  CU_ASSERT(gs_sellp_layout_apply_host(S, GS_OP_T, 1.0, NULL, 0.0, yt) == GS_SUCCESS);
  for (int j = 0; j < 3; ++j) CU_ASSERT_DOUBLE_EQUAL(yt[j], 0.0, 0.0);
  gs_sell_destroy(&S);
  check_all(A, 32, 1, 1, &rng);
  gs_csr_destroy(&A);

  /* 0 x 5 and 5 x 0: no slices, or slices of width 0 */
  CU_ASSERT_FATAL(gs_csr_create(&A, 0, 5, 0) == GS_SUCCESS);
  check_all(A, 32, 4, 8, &rng);
  gs_csr_destroy(&A);
  CU_ASSERT_FATAL(gs_csr_create(&A, 5, 0, 0) == GS_SUCCESS);
  check_all(A, 2, 2, 8, &rng);
  gs_csr_destroy(&A);
  const double one[] = {3.0};
  A = gs_test_csr_from_dense(1, 1, one);
  check_all(A, 32, 32, 1, &rng);
  gs_csr_destroy(&A);
}

/* Sorting windows: each one sorted by decreasing length, the last partial window too, rows of
 * equal length in their order; no permutation when sorting moves nothing. */
static void test_sigma_windows(void)
{
  uint64_t rng = gs_test_seed() ^ 0x51a;
  const gs_idx_t m = 100, n = 50;
  gs_coo_t *Co = NULL;
  gs_csr_t *A = NULL;
  gs_sell_t *S = NULL;
  /* row i has (i * 37) % 11 entries: lengths repeat and collide inside every window */
  CU_ASSERT_FATAL(gs_coo_create(&Co, m, n, 1024) == GS_SUCCESS);
  for (gs_idx_t i = 0; i < m; ++i)
    for (gs_idx_t k = 0; k < (i * 37) % 11; ++k)
      CU_ASSERT_FATAL(gs_coo_push(Co, i, (i + 3 * k) % n, gs_test_uniform(&rng)) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, Co) == GS_SUCCESS);
  const gs_idx_t sigmas[] = {2, 8, 30, 64, 99, 100, 1000}; /* 30: windows 0-29 .. 90-99 */
  for (size_t k = 0; k < sizeof sigmas / sizeof sigmas[0]; ++k) {
    const gs_sell_params_t p = {4, 2, sigmas[k], 0.0, "SELL-P"};
    CU_ASSERT_FATAL(gs_sell_build_p(&S, A, &p) == GS_SUCCESS);
    check_layout(S, A, 4, 2, sigmas[k]); /* sorted windows, stable ties, in-window moves */
    gs_sell_destroy(&S);
    check_all(A, 4, 2, sigmas[k], &rng);
    check_all(A, 32, 1, sigmas[k], &rng);
  }
  /* the last, partial window of sigma = 30 (rows 90-99) by hand */
  const gs_sell_params_t p30 = {4, 2, 30, 0.0, "SELL-P"};
  CU_ASSERT_FATAL(gs_sell_build_p(&S, A, &p30) == GS_SUCCESS);
  for (gs_idx_t r = 91; r < m; ++r) {
    CU_ASSERT(S->perm[r] >= 90);
    CU_ASSERT(row_len(A, S->perm[r - 1]) >= row_len(A, S->perm[r]));
  }
  CU_ASSERT_EQUAL(S->perm[90], 96); /* (96 * 37) % 11 = 10 entries: the window's longest */
  gs_sell_destroy(&S);
  gs_csr_destroy(&A);
  gs_coo_destroy(&Co);

  /* lengths already non-increasing in every window, or all equal: perm stays NULL */
  CU_ASSERT_FATAL(gs_gen_laplace(&A, 12, 9, 1, 5) == GS_SUCCESS); /* boundary rows are shorter */
  const gs_sell_params_t one = {4, 1, 1, 0.0, "SELL-P"}, big = {4, 1, 1000, 0.0, "SELL-P"};
  CU_ASSERT_FATAL(gs_sell_build_p(&S, A, &one) == GS_SUCCESS);
  CU_ASSERT_PTR_NULL(S->perm);
  gs_sell_destroy(&S);
  CU_ASSERT_FATAL(gs_sell_build_p(&S, A, &big) == GS_SUCCESS);
  CU_ASSERT_PTR_NOT_NULL(S->perm); /* interior rows (5 entries) before boundary ones */
  check_layout(S, A, 4, 1, 1000);
  gs_sell_destroy(&S);
  gs_csr_destroy(&A);
  gs_coo_destroy(&Co);
  CU_ASSERT_FATAL(gs_coo_create(&Co, 40, 40, 80) == GS_SUCCESS);
  for (gs_idx_t i = 0; i < 40; ++i) { /* row i: 2 entries for i < 20, then 1 */
    CU_ASSERT_FATAL(gs_coo_push(Co, i, i, 1.0) == GS_SUCCESS);
    if (i < 20) CU_ASSERT_FATAL(gs_coo_push(Co, i, 39 - i, 2.0) == GS_SUCCESS);
  }
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, Co) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_sell_build_p(&S, A, &big) == GS_SUCCESS);
  CU_ASSERT_PTR_NULL(S->perm); /* already sorted: no indirection */
  gs_sell_destroy(&S);
  gs_csr_destroy(&A);
  gs_coo_destroy(&Co);
}

/* The permutation through a product: row i of A scaled by i + 1 and x = 1, so y[i] names the
 * row it came from; a wrong permutation writes a sum to the wrong place. */
static void test_permutation_in_products(void)
{
  const gs_idx_t m = 70, n = 70;
  gs_coo_t *Co = NULL;
  gs_csr_t *A = NULL;
  gs_sell_t *S = NULL;
  CU_ASSERT_FATAL(gs_coo_create(&Co, m, n, 4096) == GS_SUCCESS);
  for (gs_idx_t i = 0; i < m; ++i) /* lengths 1..8 in a scrambled order */
    for (gs_idx_t k = 0; k <= (i * 5) % 8; ++k)
      CU_ASSERT_FATAL(gs_coo_push(Co, i, (i + k) % n, (double)(i + 1)) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, Co) == GS_SUCCESS);
  double x[70], y[70], xt[70], yt[70];
  for (int j = 0; j < 70; ++j) {
    x[j] = 1.0;
    xt[j] = (double)(j + 1);
  }
  const gs_idx_t shapes[][2] = {{4, 2}, {8, 8}, {64, 2}, {2, 32}};
  for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; ++k) {
    const gs_sell_params_t p = {shapes[k][0], shapes[k][1], 16, 0.0, "SELL-P"};
    CU_ASSERT_FATAL(gs_sell_build_p(&S, A, &p) == GS_SUCCESS);
    CU_ASSERT_PTR_NOT_NULL(S->perm);
    for (int i = 0; i < 70; ++i) y[i] = NAN;
    CU_ASSERT(gs_sellp_layout_apply_host(S, GS_OP_N, 1.0, x, 0.0, y) == GS_SUCCESS);
    for (gs_idx_t i = 0; i < m; ++i) CU_ASSERT_DOUBLE_EQUAL(y[i], (i + 1.0) * (1 + (i * 5) % 8), 0.0);
    /* op T reads x at the original row: column j sums (i + 1)^2 over the rows i holding it */
    double want[70] = {0};
    for (gs_idx_t i = 0; i < m; ++i)
      for (gs_off_t q = A->row_ptr[i]; q < A->row_ptr[i + 1]; ++q)
        want[A->col[q]] += A->val[q] * xt[i];
    for (int j = 0; j < 70; ++j) yt[j] = NAN;
    CU_ASSERT(gs_sellp_layout_apply_host(S, GS_OP_T, 1.0, xt, 0.0, yt) == GS_SUCCESS);
    for (int j = 0; j < 70; ++j) CU_ASSERT_DOUBLE_EQUAL(yt[j], want[j], 0.0); /* integers */
    gs_sell_destroy(&S);
  }
  gs_csr_destroy(&A);
  gs_coo_destroy(&Co);
}

/* A layout of more than 2^31 - 1 slots is refused before its arrays are allocated, with the
 * count: 64 slices of 1024 rows, each holding one row of 32768 entries (2^31 slots, 2^21
 * entries). */
static void test_slot_overflow(void)
{
  const gs_idx_t C = 1024, L = 32768, m = 64 * C;
  gs_csr_t *A = NULL;
  gs_sell_t *S = NULL;
  CU_ASSERT_FATAL(gs_csr_create(&A, m, L, (gs_off_t)64 * L) == GS_SUCCESS);
  A->row_ptr[0] = 0;
  for (gs_idx_t i = 0; i < m; ++i) {
    const int long_row = i % C == 5;
    A->row_ptr[i + 1] = A->row_ptr[i] + (long_row ? L : 0);
    if (long_row)
      for (gs_idx_t k = 0; k < L; ++k) {
        A->col[A->row_ptr[i] + k] = k;
        A->val[A->row_ptr[i] + k] = 1.0;
      }
  }
  int64_t slots = 0, used = 0;
  gs_idx_t widest = 0;
  const gs_sell_params_t p = {C, 1, 1, 0.0, "SELL-P"};
  CU_ASSERT_FATAL(gs_sell_count(A, &p, &slots, &used, &widest) == GS_SUCCESS);
  CU_ASSERT_EQUAL(slots, (int64_t)1 << 31);
  CU_ASSERT_EQUAL(used, (int64_t)1 << 31);
  CU_ASSERT_EQUAL(widest, L);
  gs_clear_error();
  CU_ASSERT(gs_sell_build_p(&S, A, &p) == GS_ERR_FORMAT_FILL);
  CU_ASSERT_PTR_NULL(S);
  CU_ASSERT_PTR_NOT_NULL(strstr(gs_last_error(), "2147483648 slots"));
  CU_ASSERT_PTR_NOT_NULL(strstr(gs_last_error(), "2^31-1"));
  /* through the backend's options, the guards as loose as they go: one thread a row is
     refused for the long rows' chains (32768 steps), 32 threads a row pass that guard (1024
     steps) and meet the slot guard */
  gs_spmv_cfg_t cfg = cfg_of(1024, 1, 1, 1e9);
  CU_ASSERT(gs_sellp_build(&S, A, &cfg) == GS_ERR_FORMAT_FILL);
  CU_ASSERT_PTR_NOT_NULL(strstr(gs_last_error(), "32768 steps"));
  cfg = cfg_of(32, 32, 1, 1e9);
  CU_ASSERT(gs_sellp_choose(A, &cfg, &(gs_sellp_shape_t){0}) == GS_SUCCESS);
  /* sorting does not help here (one long row a slice whatever the window), a smaller slice
     does: C = 2 stores 64 * 2 * 32768 slots */
  cfg = cfg_of(2, 32, 1, 1e9);
  CU_ASSERT_FATAL(gs_sellp_build(&S, A, &cfg) == GS_SUCCESS);
  CU_ASSERT_EQUAL(S->slots, 64 * 2 * L);
  gs_sell_destroy(&S);
  gs_csr_destroy(&A);
}

/* The automatic C, T and sigma, and the refusals of bad combinations. */
static void test_choose(void)
{
  /* T from the mean row length, dropped on matrices whose rows give threads enough */
  CU_ASSERT_EQUAL(gs_sellp_auto_threads(0, 0), 1);
  /* fewer than 2^16 rows: up to 8 threads a row at >= 2 entries a thread */
  CU_ASSERT_EQUAL(gs_sellp_auto_threads(1000, 3999), 1);
  CU_ASSERT_EQUAL(gs_sellp_auto_threads(1000, 4000), 2);
  CU_ASSERT_EQUAL(gs_sellp_auto_threads(1000, 15999), 4);
  CU_ASSERT_EQUAL(gs_sellp_auto_threads(1000, 16000), 8);
  CU_ASSERT_EQUAL(gs_sellp_auto_threads(1000, 63999), 8);
  CU_ASSERT_EQUAL(gs_sellp_auto_threads(65535, 65535 * 40), 8);
  /* from 2^16 rows: >= 8 entries a thread */
  CU_ASSERT_EQUAL(gs_sellp_auto_threads(65536, 65536 * 15), 1);
  CU_ASSERT_EQUAL(gs_sellp_auto_threads(65536, 65536 * 40), 4);
  CU_ASSERT_EQUAL(gs_sellp_auto_threads(1000, 1000000), 32);
  CU_ASSERT_EQUAL(gs_sellp_auto_threads(262144, 262144 * 27), 2);   /* 64^3 27-point */
  CU_ASSERT_EQUAL(gs_sellp_auto_threads(1000000, 1000000 * 27), 1); /* 100^3 27-point */
  CU_ASSERT_EQUAL(gs_sellp_auto_threads(65536, (gs_off_t)65536 * 1000), 8);
  CU_ASSERT_EQUAL(gs_sellp_auto_threads(1 << 20, (gs_off_t)1000 << 20), 1);

  gs_sellp_shape_t sh;
  gs_csr_t *A = NULL;
  gs_spmv_cfg_t cfg = cfg_of(0, 0, 0, 3.0);
  /* 27-point Laplacian 10^3: 21.95 entries a row on average, 1000 rows: T = 8, C = 4 */
  CU_ASSERT_FATAL(gs_gen_laplace(&A, 10, 10, 10, 27) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_sellp_choose(A, &cfg, &sh) == GS_SUCCESS);
  CU_ASSERT_EQUAL(sh.T, 8);
  CU_ASSERT_EQUAL(sh.C, 4);
  gs_csr_destroy(&A);
  /* 5-point 40^2 (mean 4.9, 1600 rows): T = 2, C = 16; 300^2 (90000 rows): T = 1, C = 32 */
  CU_ASSERT_FATAL(gs_gen_laplace(&A, 40, 40, 1, 5) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_sellp_choose(A, &cfg, &sh) == GS_SUCCESS);
  CU_ASSERT(sh.T == 2 && sh.C == 16 && sh.sigma == 1);
  gs_csr_destroy(&A);
  CU_ASSERT_FATAL(gs_gen_laplace(&A, 300, 300, 1, 5) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_sellp_choose(A, &cfg, &sh) == GS_SUCCESS);
  CU_ASSERT(sh.T == 1 && sh.C == 32 && sh.sigma == 1);
  gs_csr_destroy(&A);
  /* dense 40 x 300 (mean 300): T = 32, C = 1; c = 512 given: t shrinks to 2 */
  uint64_t rng = gs_test_seed() ^ 0xc405e;
  A = gs_test_random_csr(&rng, 40, 300, 1.0);
  CU_ASSERT_FATAL(A != NULL);
  CU_ASSERT_FATAL(gs_sellp_choose(A, &cfg, &sh) == GS_SUCCESS);
  CU_ASSERT(sh.T == 32 && sh.C == 1);
  cfg = cfg_of(512, 0, 1, 3.0);
  CU_ASSERT_FATAL(gs_sellp_choose(A, &cfg, &sh) == GS_SUCCESS);
  CU_ASSERT(sh.T == 2 && sh.C == 512 && sh.sigma == 1);
  cfg = cfg_of(0, 4, 7, 3.0); /* t given: c = 32 / t; sigma as given */
  CU_ASSERT_FATAL(gs_sellp_choose(A, &cfg, &sh) == GS_SUCCESS);
  CU_ASSERT(sh.T == 4 && sh.C == 8 && sh.sigma == 7);
  cfg = cfg_of(64, 32, 0, 3.0); /* 2048 threads a slice */
  CU_ASSERT(gs_sellp_choose(A, &cfg, &sh) == GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NOT_NULL(strstr(gs_last_error(), "2048 threads"));
  cfg = cfg_of(3, 0, 0, 3.0);
  CU_ASSERT(gs_sellp_choose(A, &cfg, &sh) == GS_ERR_INVALID_ARG);
  cfg = cfg_of(0, 64, 0, 3.0);
  CU_ASSERT(gs_sellp_choose(A, &cfg, &sh) == GS_ERR_INVALID_ARG);
  gs_csr_destroy(&A);

  /* the longest row sets a floor on T (GS_SELLP_SERIAL_AUTO entries a thread), and a row of
   * more than GS_SELLP_SERIAL_MAX entries a thread is refused with the numbers */
  const gs_idx_t lens[] = {20000, 40000};
  for (int k = 0; k < 2; ++k) {
    gs_coo_t *L = NULL;
    CU_ASSERT_FATAL(gs_coo_create(&L, 64, lens[k], lens[k] + 63) == GS_SUCCESS);
    for (gs_idx_t j = 0; j < lens[k]; ++j) CU_ASSERT_FATAL(gs_coo_push(L, 5, j, 1.0) == GS_SUCCESS);
    for (gs_idx_t i = 0; i < 64; ++i)
      if (i != 5) CU_ASSERT_FATAL(gs_coo_push(L, i, i, 2.0) == GS_SUCCESS);
    CU_ASSERT_FATAL(gs_coo_to_csr(&A, L) == GS_SUCCESS);
    gs_coo_destroy(&L);
    cfg = cfg_of(0, 0, 0, 1e9);
    gs_clear_error();
    const gs_status_t st = gs_sellp_choose(A, &cfg, &sh);
    if (k == 0) { /* 20000 > 256 * 16: T = 32, 625 steps */
      CU_ASSERT_EQUAL(st, GS_SUCCESS);
      CU_ASSERT(sh.T == 32 && sh.C == 1);
    } else { /* 40000 / 32 = 1250 steps > 1024 */
      CU_ASSERT_EQUAL(st, GS_ERR_FORMAT_FILL);
      CU_ASSERT_PTR_NOT_NULL(strstr(gs_last_error(), "longest row has 40000 entries, 1250 steps"));
    }
    cfg = cfg_of(0, 1, 0, 1e9); /* t = 1 given: 20000 steps, refused */
    CU_ASSERT_EQUAL(gs_sellp_choose(A, &cfg, &sh), GS_ERR_FORMAT_FILL);
    gs_csr_destroy(&A);
  }

  /* rows alternating 1 and 12 entries (T = 1 given, C = 32): unsorted every slice is 12
     wide (12 m slots), sorted in windows of 1024 rows half the slices are 1 wide (6.5 m):
     sorting pays, and avoids the refusal of max_fill = 1.5 (12 / 6.5 = 1.85x) */
  gs_coo_t *Co = NULL;
  const gs_idx_t m = 4096;
  CU_ASSERT_FATAL(gs_coo_create(&Co, m, 64, (gs_off_t)m * 7) == GS_SUCCESS);
  for (gs_idx_t i = 0; i < m; ++i)
    for (gs_idx_t k = 0; k < (i % 2 ? 12 : 1); ++k)
      CU_ASSERT_FATAL(gs_coo_push(Co, i, (i + 5 * k) % 64, 1.0) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, Co) == GS_SUCCESS);
  cfg = cfg_of(0, 1, 0, 1.5);
  CU_ASSERT_FATAL(gs_sellp_choose(A, &cfg, &sh) == GS_SUCCESS);
  CU_ASSERT(sh.T == 1 && sh.C == 32 && sh.sigma == 32 * 32);
  gs_sell_t *S = NULL;
  CU_ASSERT_FATAL(gs_sellp_build(&S, A, &cfg) == GS_SUCCESS);
  CU_ASSERT_EQUAL(S->slots, 32 * (64 * 12 + 64 * 1));
  CU_ASSERT_PTR_NOT_NULL(S->perm);
  gs_sell_destroy(&S);
  cfg = cfg_of(0, 1, 1, 1.5); /* sorting turned off: refused */
  CU_ASSERT(gs_sellp_build(&S, A, &cfg) == GS_ERR_FORMAT_FILL);
  CU_ASSERT_PTR_NOT_NULL(strstr(gs_last_error(), "SELL-P fill refused"));
  check_all(A, 32, 1, 1024, &rng);
  gs_csr_destroy(&A);
  gs_coo_destroy(&Co);

  /* rows alternating 1 and 3 entries: sorting saves m slots (3 m -> 2 m), 12 m bytes in double
     against the permutation's 8 m (twice 4 a row): it pays; 8 m in mixed precision (4-byte
     columns and floats): it does not */
  CU_ASSERT_FATAL(gs_coo_create(&Co, m, 64, (gs_off_t)m * 2) == GS_SUCCESS);
  for (gs_idx_t i = 0; i < m; ++i)
    for (gs_idx_t k = 0; k < (i % 2 ? 3 : 1); ++k)
      CU_ASSERT_FATAL(gs_coo_push(Co, i, (i + 5 * k) % 64, 1.0) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, Co) == GS_SUCCESS);
  cfg = cfg_of(0, 0, 0, 3.0);
  CU_ASSERT_FATAL(gs_sellp_choose(A, &cfg, &sh) == GS_SUCCESS);
  CU_ASSERT(sh.T == 1 && sh.C == 32 && sh.sigma == 32 * 32);
  cfg.precision = GS_PRECISION_MIXED;
  CU_ASSERT_FATAL(gs_sellp_choose(A, &cfg, &sh) == GS_SUCCESS);
  CU_ASSERT(sh.T == 1 && sh.C == 32 && sh.sigma == 1);
  gs_csr_destroy(&A);
  gs_coo_destroy(&Co);
}

/* Through the registry: flags, options, the host apply with option strings, and the refusal
 * answered as prepare would answer it. */
static void test_registry(void)
{
  int b = gs_spmv_backend_find("sellp");
  CU_ASSERT_FATAL(b >= 0);
  unsigned f = gs_spmv_backend_flags(b);
  CU_ASSERT(f & GS_SPMV_FLAG_TRANSPOSE);
  CU_ASSERT(f & GS_SPMV_FLAG_HOST_LAYOUT);
  CU_ASSERT(!(f & GS_SPMV_FLAG_VENDOR));
  CU_ASSERT_DOUBLE_EQUAL(gs_test_backend_option_default("sellp", "max_fill", -1.0), 3.0, 0.0);
  CU_ASSERT_DOUBLE_EQUAL(gs_test_backend_option_default("sellp", "c", -1.0), 0.0, 0.0);
  CU_ASSERT_DOUBLE_EQUAL(gs_test_backend_option_default("sellp", "t", -1.0), 0.0, 0.0);
  CU_ASSERT_DOUBLE_EQUAL(gs_test_backend_option_default("sellp", "sigma", -1.0), 0.0, 0.0);

  uint64_t rng = gs_test_seed() ^ 0xabcd;
  gs_csr_t *A = gs_test_random_csr(&rng, 90, 61, 0.08);
  CU_ASSERT_FATAL(A != NULL);
  double x[90], y[90], y0[90];
  for (int j = 0; j < 90; ++j) x[j] = gs_test_uniform(&rng);
  for (int r = 0; r < 90; ++r) y[r] = y0[r] = gs_test_uniform(&rng);
  static const char *const opts[] = {"max_fill=32", "sellp.c=4,sellp.t=8,sellp.sigma=16,max_fill=32",
                                     "sellp.c=64,sellp.t=4,sellp.max_fill=32",
                                     "sellp.c=2,sellp.t=32,sellp.sigma=1,max_fill=32"};
  for (size_t k = 0; k < sizeof opts / sizeof opts[0]; ++k) {
    for (int r = 0; r < 90; ++r) y[r] = y0[r];
    CU_ASSERT(gs_spmv_host_apply("sellp", A, opts[k], GS_OP_N, 1.5, x, -0.5, y) == GS_SUCCESS);
    CU_ASSERT(gs_test_spmv_ok(A, GS_OP_N, 1.5, x, -0.5, y0, y, "sellp host %s", opts[k]));
    for (int r = 0; r < 61; ++r) y[r] = NAN;
    CU_ASSERT(gs_spmv_host_apply("sellp", A, opts[k], GS_OP_T, -2.0, x, 0.0, y) == GS_SUCCESS);
    CU_ASSERT(gs_test_spmv_ok(A, GS_OP_T, -2.0, x, 0.0, NULL, y, "sellp host %s", opts[k]));
  }
  /* bad option values are refused by spmv.c's table check or by the shape check */
  CU_ASSERT(gs_spmv_host_apply("sellp", A, "sellp.c=3", GS_OP_N, 1.0, x, 0.0, y) ==
            GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_spmv_host_apply("sellp", A, "sellp.t=64", GS_OP_N, 1.0, x, 0.0, y) ==
            GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_spmv_host_apply("sellp", A, "sellp.c=1024,sellp.t=2", GS_OP_N, 1.0, x, 0.0, y) ==
            GS_ERR_INVALID_ARG);

  /* a full row among single entries: the default guard refuses, also with alpha = 0 */
  gs_coo_t *Co = NULL;
  gs_csr_t *L = NULL;
  CU_ASSERT_FATAL(gs_coo_create(&Co, 64, 61, 128) == GS_SUCCESS);
  for (gs_idx_t i = 0; i < 64; ++i) CU_ASSERT_FATAL(gs_coo_push(Co, i, i % 61, 1.0) == GS_SUCCESS);
  for (gs_idx_t j = 0; j < 61; ++j) CU_ASSERT_FATAL(gs_coo_push(Co, 5, j, 2.0) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_coo_to_csr(&L, Co) == GS_SUCCESS);
  CU_ASSERT(gs_spmv_host_apply("sellp", L, "sellp.sigma=1", GS_OP_N, 1.0, x, 0.0, y) ==
            GS_ERR_FORMAT_FILL);
  CU_ASSERT(gs_spmv_host_apply("sellp", L, "sellp.sigma=1", GS_OP_N, 0.0, NULL, 0.0, y) ==
            GS_ERR_FORMAT_FILL);
  CU_ASSERT(gs_spmv_host_apply("sellp", L, "sellp.c=1,sellp.t=1", GS_OP_N, 1.0, x, 0.0, y) ==
            GS_SUCCESS); /* C = 1: no padding at all */
  gs_csr_destroy(&L);
  gs_coo_destroy(&Co);
  gs_csr_destroy(&A);
}

/* precision=mixed: gs_sellp_build rounds the layout once (valf holds A's values rounded to
 * nearest float, the doubles are freed, a second gs_sell_round changes nothing); both products
 * stay within the bound of float values, and are not the double layout's product (rounding took
 * place: the double bound fails); the registry's host apply (flag MIXED) is the emulation on that
 * layout bit for bit, for ops N and T; a finite value beyond FLT_MAX is refused naming its entry
 * (an infinity would follow), double takes it. */
static void test_mixed(void)
{
  uint64_t rng = gs_test_seed() ^ 0x313edull;
  gs_csr_t *A = gs_test_random_csr(&rng, 150, 97, 0.1); /* random values: few are floats */
  CU_ASSERT_FATAL(A != NULL);
  gs_spmv_cfg_t cfg = cfg_of(4, 8, 16, 0.0);
  gs_sell_t *D = NULL, *M = NULL;
  CU_ASSERT_FATAL(gs_sellp_build(&D, A, &cfg) == GS_SUCCESS);
  cfg.precision = GS_PRECISION_MIXED;
  CU_ASSERT_FATAL(gs_sellp_build(&M, A, &cfg) == GS_SUCCESS);
  CU_ASSERT_PTR_NULL(D->valf);
  CU_ASSERT_PTR_NULL(M->val);
  CU_ASSERT_PTR_NOT_NULL_FATAL(M->valf);
  check_layout(M, A, 4, 8, 16);
  CU_ASSERT_EQUAL_FATAL(M->slots, D->slots);
  int64_t moved = 0;
  for (int64_t q = 0; q < M->slots; ++q) {
    CU_ASSERT_EQUAL(M->col[q], D->col[q]);
    CU_ASSERT(M->valf[q] == (float)D->val[q]); /* once, to nearest */
    moved += (double)M->valf[q] != D->val[q];
  }
  CU_ASSERT(moved > A->nnz / 2);
  const float *before = M->valf;
  CU_ASSERT_EQUAL(gs_sell_round(M), GS_SUCCESS); /* already rounded: nothing happens */
  CU_ASSERT(M->valf == before && M->val == NULL);

  double x[150], y0[150], ym[150], yd[150], yr[150];
  for (int i = 0; i < 150; ++i) {
    x[i] = 2.0 * gs_test_uniform(&rng) - 1.0;
    y0[i] = 2.0 * gs_test_uniform(&rng) - 1.0;
  }
  int b = gs_spmv_backend_find("sellp");
  CU_ASSERT_FATAL(b >= 0);
  CU_ASSERT(gs_spmv_backend_flags(b) & GS_SPMV_FLAG_MIXED);
  for (int op = 0; op < 2; ++op) {
    const gs_op_t o = op ? GS_OP_T : GS_OP_N;
    const int len = op ? A->n : A->m;
    const double alpha = op ? -2.0 : 1.5, beta = op ? 0.0 : -0.5;
    for (int i = 0; i < len; ++i) {
      ym[i] = yd[i] = y0[i];
      yr[i] = beta == 0.0 ? NAN : y0[i];
    }
    CU_ASSERT_EQUAL_FATAL(gs_sellp_layout_apply_host(M, o, alpha, x, beta, ym), GS_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(gs_sellp_layout_apply_host(D, o, alpha, x, beta, yd), GS_SUCCESS);
    CU_ASSERT(gs_test_spmv_ok_u(A, o, alpha, x, beta, y0, ym, GS_PRECISION_MIXED_U,
                                "sellp mixed layout"));
    CU_ASSERT(gs_test_spmv_ok(A, o, alpha, x, beta, y0, yd, "sellp double layout"));
    /* rounding happened: the mixed product is outside the double product's bound */
    CU_ASSERT(gs_test_spmv_compare(A, o, alpha, x, beta, y0, ym).ratio > 1.0);
    CU_ASSERT_EQUAL_FATAL(gs_spmv_host_apply("sellp", A, "precision=mixed,sellp.c=4,sellp.t=8,"
                                             "sellp.sigma=16,sellp.max_fill=100", o, alpha, x,
                                             beta, yr), GS_SUCCESS);
    CU_ASSERT(memcmp(yr, ym, (size_t)len * sizeof *yr) == 0); /* the same layout and order */
    /* the option naming sellp reaches it; one naming another backend does not */
    for (int i = 0; i < len; ++i) yr[i] = y0[i];
    CU_ASSERT_EQUAL(gs_spmv_host_apply("sellp", A, "sellp.precision=mixed,sellp.c=4,sellp.t=8,"
                                       "sellp.sigma=16,sellp.max_fill=100", o, alpha, x, 1.0, yr),
                    GS_SUCCESS);
    for (int i = 0; i < len; ++i) yr[i] = y0[i];
    CU_ASSERT_EQUAL(gs_spmv_host_apply("sellp", A, "ell.precision=mixed,sellp.c=4,sellp.t=8,"
                                       "sellp.sigma=16,sellp.max_fill=100", o, alpha, x, beta, yr),
                    GS_SUCCESS);
    CU_ASSERT(memcmp(yr, yd, (size_t)len * sizeof *yr) == 0);
  }
  gs_sell_destroy(&M);
  gs_sell_destroy(&D);
  gs_csr_destroy(&A);

  /* beyond the float range: refused in mixed, naming the entry; taken in double */
  const double big[] = {1.0, 0.0, 2.0, 0.0, -1e39, 0.5};
  const double xb[] = {1.0, 1.0, 1.0};
  double yb[2];
  A = gs_test_csr_from_dense(2, 3, big);
  CU_ASSERT_EQUAL(gs_spmv_host_apply("sellp", A, "precision=mixed", GS_OP_N, 1.0, xb, 0.0, yb),
                  GS_ERR_UNSUPPORTED);
  CU_ASSERT(strstr(gs_last_error(), "(2, 2)") != NULL);
  CU_ASSERT(strstr(gs_last_error(), "float range") != NULL);
  CU_ASSERT_EQUAL(gs_spmv_host_apply("sellp", A, "precision=mixed", GS_OP_T, 1.0, xb, 0.0, yb),
                  GS_ERR_UNSUPPORTED);
  CU_ASSERT_EQUAL(gs_spmv_host_apply("sellp", A, NULL, GS_OP_N, 1.0, xb, 0.0, yb), GS_SUCCESS);
  CU_ASSERT_EQUAL(yb[1], -1e39 + 0.5);
  gs_csr_destroy(&A);
}

static void test_bad_arguments(void)
{
  const double a[] = {1, 2, 0, 3};
  gs_csr_t *A = gs_test_csr_from_dense(2, 2, a);
  gs_sell_t *S = (gs_sell_t *)1;
  gs_sell_params_t p = {2, 0, 1, 0.0, "SELL-P"};
  CU_ASSERT(gs_sell_build_p(&S, A, &p) == GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NULL(S);
  p.pad = 2;
  p.sigma = 0;
  CU_ASSERT(gs_sell_build_p(&S, A, &p) == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_sell_build_p(&S, A, NULL) == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_sellp_layout_apply_host(NULL, GS_OP_N, 1.0, NULL, 0.0, NULL) ==
            GS_ERR_INVALID_ARG);
  gs_spmv_cfg_t cfg = cfg_of(0, 0, 0, 3.0);
  double y[2];
  CU_ASSERT(gs_sellp_host_apply(A, &cfg, GS_OP_N, 1.0, NULL, 0.0, y) == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_sellp_host_apply(A, &cfg, (gs_op_t)'X', 1.0, a, 0.0, y) == GS_ERR_INVALID_ARG);
  gs_csr_destroy(&A);
}

int main(void)
{
  CU_TestInfo tests[] = {
      {"layout hand-checked (sorting, P = 2, partial window)", test_layout_hand_checked},
      {"random rectangular matrices, every (C, T), against CSR", test_random_against_csr},
      {"one long row: widths, sorting and the fill guard", test_one_long_row},
      {"m not a multiple of C", test_partial_last_slice},
      {"empty rows, empty slices, nnz = 0, zero rows", test_empty_rows_and_shapes},
      {"sigma windows, the last one partial", test_sigma_windows},
      {"the permutation in op N and op T", test_permutation_in_products},
      {"more than 2^31-1 slots refused", test_slot_overflow},
      {"automatic C, T and sigma", test_choose},
      {"registry host apply and options", test_registry},
      {"precision=mixed: rounded once, float bound, registry, float range", test_mixed},
      {"bad arguments", test_bad_arguments},
      CU_TEST_INFO_NULL};
  return gs_test_main("sellp_host", tests, 0);
}
