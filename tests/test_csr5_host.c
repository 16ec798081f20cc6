/* tests/test_csr5_host.c: the CSR5 layout (spmv/csr5_build.c) without a GPU: every promise of
 * spmv/csr5.h checked against the CSR it came from (bit flags, y_offset, seg_offset, tile_ptr and
 * its dirty bit, the segment-to-row map of clean and dirty tiles, carries, the incomplete tile,
 * the empty-row list, the transposed entries), and the host emulation of the kernels against the
 * CSR product within its rounding bound, on the edge cases of CSR5: tiles with empty rows, rows
 * spanning several tiles, one row holding every entry, every row empty but one, nnz a multiple
 * of the tile size and not, tiny shapes, every descriptor width (sigma 1 to 64). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spmv/csr5.h"
#include "tests/testutil.h"

static uint64_t g_state;
static int g_seeded;

static uint64_t *rng(void)
{
  if (!g_seeded) {
    g_state = gs_test_seed() ^ 0xc5a5ull;
    g_seeded = 1;
  }
  return &g_state;
}

/* ---- matrices ------------------------------------------------------------------------------ */

static gs_csr_t *from_lengths(const int *len, gs_idx_t m, gs_idx_t n)
{
  return gs_test_csr_from_lengths(rng(), len, m, n);
}

/* ---- the layout's promises ----------------------------------------------------------------- */

static void check_layout(const gs_csr5_t *L, const gs_csr_t *A)
{
  const int sigma = L->sigma;
  const int64_t W = (int64_t)CSR5_OMEGA * sigma;
  CU_ASSERT_FATAL(sigma >= 1 && sigma <= CSR5_SIGMA_MAX);
  CU_ASSERT_EQUAL(L->ntiles, A->nnz / W);
  CU_ASSERT_EQUAL(L->nnz_full, L->ntiles * W);
  CU_ASSERT(L->ybits + CSR5_SEG_BITS + sigma <= 32 * L->words);
  CU_ASSERT(L->ybits + CSR5_SEG_BITS + sigma > 32 * (L->words - 1));
  CU_ASSERT((1ll << L->ybits) >= W && (1ll << (L->ybits - 1)) < W);
  /* row starts of non-empty rows, by position */
  unsigned char *start = calloc((size_t)A->nnz + 1, 1);
  gs_idx_t *row = malloc(((size_t)A->nnz + 1) * sizeof *row);
  CU_ASSERT_FATAL(start && row);
  gs_idx_t empties = 0;
  for (gs_idx_t i = 0; i < A->m; ++i) {
    if (A->row_ptr[i] == A->row_ptr[i + 1]) {
      CU_ASSERT_FATAL(empties < L->n_empty);
      CU_ASSERT_EQUAL(L->empty_rows[empties], i);
      ++empties;
      continue;
    }
    start[A->row_ptr[i]] = 1;
    for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k) row[k] = i;
  }
  CU_ASSERT_EQUAL(empties, L->n_empty);
  int64_t dirty = 0, cont = 0;
  uint32_t eptr = 0;
  for (int64_t t = 0; t < L->ntiles; ++t) {
    const int64_t base = t * W;
    const gs_idx_t R = (gs_idx_t)(L->tile_ptr[t] & CSR5_ROW_MASK);
    const int is_dirty = (L->tile_ptr[t] & CSR5_DIRTY) != 0;
    CU_ASSERT_EQUAL_FATAL(R, row[base]);
    CU_ASSERT_EQUAL(L->empty_ptr[t], eptr);
    int seg = 0, y0, s0;
    uint64_t f0;
    gs_csr5_desc_unpack(L, t, 0, &y0, &s0, &f0);
    const int c = !(f0 & 1u);
    CU_ASSERT_EQUAL(c, !start[base]);
    CU_ASSERT_EQUAL(L->carry_row[t], c ? R : -1);
    cont += c;
    unsigned has[CSR5_OMEGA];
    for (int l = 0; l < CSR5_OMEGA; ++l) {
      int yoff, soff;
      uint64_t flags;
      gs_csr5_desc_unpack(L, t, l, &yoff, &soff, &flags);
      CU_ASSERT_EQUAL(yoff, seg); /* row starts in the lanes before */
      has[l] = flags != 0;
      for (int j = 0; j < sigma; ++j) {
        const int64_t e = base + (int64_t)l * sigma + j;
        const int64_t q = base + (int64_t)j * CSR5_OMEGA + l;
        CU_ASSERT_EQUAL((int)(flags >> j & 1u), (int)start[e]);
        CU_ASSERT_EQUAL(L->col[q], A->col[e]); /* transposed storage */
        CU_ASSERT_EQUAL(memcmp(&L->val[q], &A->val[e], sizeof(double)), 0);
        if (!start[e]) continue;
        /* segment seg is the row starting at e: clean tiles count rows, dirty ones map */
        const gs_idx_t got =
            is_dirty ? R + L->empty_offset[L->empty_ptr[t] + (uint32_t)seg] : R + c + seg;
        CU_ASSERT_EQUAL(got, row[e]);
        ++seg;
      }
      if (sigma < 64) CU_ASSERT_EQUAL(flags >> sigma, 0u);
    }
    for (int l = 0; l < CSR5_OMEGA; ++l) {
      int yoff, soff;
      uint64_t flags;
      gs_csr5_desc_unpack(L, t, l, &yoff, &soff, &flags);
      int s = 0;
      while (l + 1 + s < CSR5_OMEGA && !has[l + 1 + s]) ++s;
      CU_ASSERT_EQUAL(soff, s);
    }
    /* dirty exactly when segment k is not row R + c + k for some k */
    const gs_idx_t last = row[base + W - 1];
    CU_ASSERT_EQUAL(is_dirty, (int64_t)seg != (int64_t)last - (R + c) + 1);
    if (is_dirty) {
      ++dirty;
      eptr += (uint32_t)seg;
    }
  }
  CU_ASSERT_EQUAL(L->empty_ptr[L->ntiles], eptr);
  CU_ASSERT_EQUAL(L->n_dirty, dirty);
  /* the incomplete tile */
  if (L->nnz_full < A->nnz) {
    CU_ASSERT_EQUAL(L->tail_row0, row[L->nnz_full]);
    CU_ASSERT_EQUAL(L->tail_row1, row[A->nnz - 1] + 1);
    CU_ASSERT_EQUAL(L->tile_ptr[L->ntiles], (uint32_t)L->tail_row0);
    const int tc = !start[L->nnz_full];
    CU_ASSERT_EQUAL(L->carry_row[L->ntiles], tc ? L->tail_row0 : -1);
    cont += tc;
  } else {
    CU_ASSERT_EQUAL(L->tail_row0, A->m);
    CU_ASSERT_EQUAL(L->tail_row1, A->m);
    CU_ASSERT_EQUAL(L->carry_row[L->ntiles], -1);
  }
  CU_ASSERT_EQUAL(L->n_cont, cont);
  free(start);
  free(row);
}

/* y = alpha op(A) x + beta y through the layout against the CSR product's bound; y starts as
 * NaN when beta == 0 (must not leak). */
static void check_apply(const gs_csr5_t *L, const gs_csr_t *A, gs_op_t op, double alpha,
                        double beta, const char *label)
{
  const gs_idx_t in = op == GS_OP_N ? A->n : A->m, out = op == GS_OP_N ? A->m : A->n;
  double *x = malloc(((size_t)in + 1) * sizeof *x), *y = malloc(((size_t)out + 1) * sizeof *y);
  double *y0 = malloc(((size_t)out + 1) * sizeof *y0);
  CU_ASSERT_FATAL(x && y && y0);
  for (gs_idx_t j = 0; j < in; ++j) x[j] = 2.0 * gs_test_uniform(rng()) - 1.0;
  for (gs_idx_t i = 0; i < out; ++i) {
    y0[i] = gs_test_uniform(rng()) - 0.5;
    y[i] = beta == 0.0 ? NAN : y0[i];
  }
  CU_ASSERT_FATAL(gs_csr5_apply_host(L, A, op, alpha, x, beta, y) == GS_SUCCESS);
  CU_ASSERT(gs_test_spmv_ok(A, op, alpha, x, beta, y0, y, "csr5 sigma %d: %s", L->sigma, label));
  free(x);
  free(y);
  free(y0);
}

static void check_all(const gs_csr_t *A, int sigma, const char *label)
{
  static const double coef[][2] = {{1.0, 0.0}, {-1.0, 1.0}, {2.5, -0.5}, {0.0, 2.0}, {1.0, 1.0}};
  gs_csr5_t *L = NULL;
  CU_ASSERT_FATAL(gs_csr5_build(&L, A, sigma) == GS_SUCCESS);
  check_layout(L, A);
  for (int c = 0; c < 5; ++c) {
    check_apply(L, A, GS_OP_N, coef[c][0], coef[c][1], label);
    check_apply(L, A, GS_OP_T, coef[c][0], coef[c][1], label);
  }
  gs_csr5_destroy(&L);
  CU_ASSERT_PTR_NULL(L);
}

static const int sigmas[] = {1, 3, 4, 7, 16, 17, 26, 27, 32, 48, 59, 60, 64};
#define NSIG ((int)(sizeof sigmas / sizeof sigmas[0]))

/* ---- cases ----------------------------------------------------------------------------------- */

static void test_sigma_rule_and_words(void)
{
  CU_ASSERT_EQUAL(gs_csr5_sigma_auto(0, 0), 4);
  CU_ASSERT_EQUAL(gs_csr5_sigma_auto(100, 400), 4);
  CU_ASSERT_EQUAL(gs_csr5_sigma_auto(100, 599), 5);
  CU_ASSERT_EQUAL(gs_csr5_sigma_auto(100, 3200), 32);
  CU_ASSERT_EQUAL(gs_csr5_sigma_auto(100, 3300), 32);
  CU_ASSERT_EQUAL(gs_csr5_sigma_auto(100, 25600), 32);
  CU_ASSERT_EQUAL(gs_csr5_sigma_auto(100, 25700), 6);
  /* the paper's packing: sigma 16 in one 32-bit word a lane (9 + 5 + 16 bits) */
  CU_ASSERT_EQUAL(gs_csr5_ybits(16), 9);
  CU_ASSERT_EQUAL(gs_csr5_words(16), 1);
  CU_ASSERT_EQUAL(gs_csr5_ybits(1), 5);
  CU_ASSERT_EQUAL(gs_csr5_words(17), 1); /* 10 + 5 + 17 = 32 */
  CU_ASSERT_EQUAL(gs_csr5_words(18), 2);
  CU_ASSERT_EQUAL(gs_csr5_words(64), 3);
}

/* A hand-checked tile: sigma 1 (W = 32), rows 0..3 of lengths 3, 0, 30, 2 (35 entries): one
 * full tile with an empty row (dirty), and an incomplete tile of 3 entries continuing row 2. */
static void test_hand_checked(void)
{
  const int len[] = {3, 0, 30, 2};
  gs_csr_t *A = from_lengths(len, 4, 40);
  gs_csr5_t *L = NULL;
  CU_ASSERT_FATAL(gs_csr5_build(&L, A, 1) == GS_SUCCESS);
  CU_ASSERT_EQUAL(L->ntiles, 1);
  CU_ASSERT_EQUAL(L->nnz_full, 32);
  CU_ASSERT_EQUAL(L->tile_ptr[0], CSR5_DIRTY | 0u); /* row 0, dirty (row 1 is empty) */
  CU_ASSERT_EQUAL(L->empty_ptr[1], 2u);              /* two segments: rows 0 and 2 */
  CU_ASSERT_EQUAL(L->empty_offset[0], 0);
  CU_ASSERT_EQUAL(L->empty_offset[1], 2);
  CU_ASSERT_EQUAL(L->n_empty, 1);
  CU_ASSERT_EQUAL(L->empty_rows[0], 1);
  CU_ASSERT_EQUAL(L->tail_row0, 2); /* entry 32 is row 2's 30th */
  CU_ASSERT_EQUAL(L->tail_row1, 4);
  CU_ASSERT_EQUAL(L->carry_row[0], -1);
  CU_ASSERT_EQUAL(L->carry_row[1], 2);
  CU_ASSERT_EQUAL(L->n_cont, 1);
  int yoff, soff;
  uint64_t flags;
  gs_csr5_desc_unpack(L, 0, 3, &yoff, &soff, &flags); /* entry 3 starts row 2 */
  CU_ASSERT_EQUAL(flags, 1u);
  CU_ASSERT_EQUAL(yoff, 1);
  CU_ASSERT_EQUAL(soff, 28); /* lanes 4..31 start nothing */
  gs_csr5_desc_unpack(L, 0, 1, &yoff, &soff, &flags);
  CU_ASSERT_EQUAL(flags, 0u);
  CU_ASSERT_EQUAL(yoff, 1);
  CU_ASSERT_EQUAL(soff, 1);
  check_all(A, 1, "hand-checked");
  gs_csr5_destroy(&L);
  gs_csr_destroy(&A);
}

static void test_random_rectangular(void)
{
  const int trials = gs_test_quick() ? 4 : 30;
  for (int t = 0; t < trials; ++t) {
    const gs_idx_t m = 1 + (gs_idx_t)(gs_test_uniform(rng()) * 400);
    const gs_idx_t n = 1 + (gs_idx_t)(gs_test_uniform(rng()) * 400);
    const double density = 0.002 + 0.2 * gs_test_uniform(rng()) * gs_test_uniform(rng());
    gs_csr_t *A = gs_test_random_csr(rng(), m, n, density);
    CU_ASSERT_FATAL(A != NULL);
    check_all(A, 0, "random");
    check_all(A, sigmas[t % NSIG], "random");
    gs_csr_destroy(&A);
  }
}

/* Empty rows inside tiles (every third row, runs of 50 and of 700 rows), at tile starts, before
 * the first entry and after the last. */
static void test_empty_rows_in_tiles(void)
{
  const gs_idx_t m = 3000, n = 500;
  int *len = malloc(m * sizeof *len);
  CU_ASSERT_FATAL(len != NULL);
  for (gs_idx_t i = 0; i < m; ++i) {
    len[i] = 1 + (int)(gs_test_uniform(rng()) * 9);
    if (i % 3 == 1 || (i >= 400 && i < 450) || (i >= 1200 && i < 1900) || i < 37 || i > 2950)
      len[i] = 0;
  }
  gs_csr_t *A = from_lengths(len, m, n);
  for (int s = 0; s < NSIG; ++s) check_all(A, sigmas[s], "empty rows");
  check_all(A, 0, "empty rows");
  gs_csr5_t *L = NULL;
  CU_ASSERT_FATAL(gs_csr5_build(&L, A, 4) == GS_SUCCESS);
  CU_ASSERT(L->n_dirty > 0);
  gs_csr5_destroy(&L);
  gs_csr_destroy(&A);
  free(len);
}

/* Rows longer than a tile: one of 20 tiles' worth, one of exactly one tile, one ending exactly
 * at a tile boundary, among short rows (the carries of runs of continuation tiles). */
static void test_rows_spanning_tiles(void)
{
  const gs_idx_t m = 200, n = 5000;
  int len[200];
  for (int s = 0; s < NSIG; ++s) {
    const int W = CSR5_OMEGA * sigmas[s];
    for (gs_idx_t i = 0; i < m; ++i) len[i] = 1 + (int)(gs_test_uniform(rng()) * 5);
    len[10] = 20 * W + 7 > n ? n : 20 * W + 7;
    len[50] = W;
    len[51] = 0;
    len[120] = 3 * W - 1 > n ? n : 3 * W - 1;
    gs_csr_t *A = from_lengths(len, m, n);
    check_all(A, sigmas[s], "long rows");
    gs_csr_destroy(&A);
  }
}

/* One row holds every entry: every tile is a continuation of it but the first. */
static void test_one_row_holds_all(void)
{
  for (int s = 0; s < NSIG; s += 2) {
    const int W = CSR5_OMEGA * sigmas[s];
    int len1[1] = {7 * W + 5};
    gs_csr_t *A = from_lengths(len1, 1, 7 * W + 5);
    check_all(A, sigmas[s], "1 row");
    gs_csr5_t *L = NULL;
    CU_ASSERT_FATAL(gs_csr5_build(&L, A, sigmas[s]) == GS_SUCCESS);
    CU_ASSERT_EQUAL(L->n_cont, 7); /* tiles 1..6 and the incomplete tile */
    gs_csr5_destroy(&L);
    gs_csr_destroy(&A);
    int len[60] = {0};
    len[59] = 4 * W; /* the last row, nnz a multiple of W: no incomplete tile */
    A = from_lengths(len, 60, 4 * W);
    check_all(A, sigmas[s], "last row holds all");
    gs_csr_destroy(&A);
  }
}

/* Every row empty but one, in the middle: the empty-row list does almost all the writing. */
static void test_all_empty_but_one(void)
{
  const gs_idx_t m = 5000;
  int *len = calloc(m, sizeof *len);
  CU_ASSERT_FATAL(len != NULL);
  len[2345] = 300;
  gs_csr_t *A = from_lengths(len, m, 300);
  check_all(A, 0, "all empty but one");
  check_all(A, 1, "all empty but one");
  check_all(A, 64, "all empty but one");
  len[2345] = 1;
  gs_csr_destroy(&A);
  A = from_lengths(len, m, 3);
  check_all(A, 0, "one entry");
  gs_csr_destroy(&A);
  free(len);
}

/* nnz exactly k tiles, one short, one over, for every sigma. */
static void test_nnz_at_tile_multiples(void)
{
  for (int s = 0; s < NSIG; ++s) {
    const int W = CSR5_OMEGA * sigmas[s];
    for (int d = -1; d <= 1; ++d) {
      const int64_t nnz = 3 * (int64_t)W + d;
      const gs_idx_t m = 1 + (gs_idx_t)(nnz / 3);
      int *len = calloc(m, sizeof *len);
      CU_ASSERT_FATAL(len != NULL);
      for (int64_t k = 0; k < nnz; ++k) ++len[k % m]; /* rows of 3 or 4 */
      gs_csr_t *A = from_lengths(len, m, 50);
      CU_ASSERT_EQUAL(A->nnz, nnz);
      gs_csr5_t *L = NULL;
      CU_ASSERT_FATAL(gs_csr5_build(&L, A, sigmas[s]) == GS_SUCCESS);
      CU_ASSERT_EQUAL(L->ntiles, d < 0 ? 2 : 3);
      CU_ASSERT_EQUAL(L->tail_row0 == A->m, d == 0);
      gs_csr5_destroy(&L);
      check_all(A, sigmas[s], "tile multiples");
      gs_csr_destroy(&A);
      free(len);
    }
  }
}

static void test_tiny_shapes(void)
{
  const double one[] = {3.0}, none[] = {0.0};
  gs_csr_t *A = gs_test_csr_from_dense(1, 1, one);
  check_all(A, 0, "1x1");
  check_all(A, 64, "1x1");
  gs_csr_destroy(&A);
  A = gs_test_csr_from_dense(1, 1, none);
  check_all(A, 0, "1x1 empty");
  gs_csr_destroy(&A);
  CU_ASSERT_FATAL(gs_csr_create(&A, 7, 3, 0) == GS_SUCCESS);
  check_all(A, 0, "nnz = 0");
  gs_csr5_t *L = NULL;
  CU_ASSERT_FATAL(gs_csr5_build(&L, A, 0) == GS_SUCCESS);
  CU_ASSERT_EQUAL(L->ntiles, 0);
  CU_ASSERT_EQUAL(L->n_empty, 7);
  gs_csr5_destroy(&L);
  gs_csr_destroy(&A);
  CU_ASSERT_FATAL(gs_csr_create(&A, 0, 5, 0) == GS_SUCCESS);
  check_all(A, 0, "0 x 5");
  gs_csr_destroy(&A);
  CU_ASSERT_FATAL(gs_csr_create(&A, 0, 0, 0) == GS_SUCCESS);
  check_all(A, 0, "0 x 0");
  gs_csr_destroy(&A);
  /* one row, one column */
  const double row[] = {1, 2, 0, 4, 5, 0, 7}, colv[] = {1, 0, 3, 4, 0, 6, 7};
  A = gs_test_csr_from_dense(1, 7, row);
  check_all(A, 1, "1 row");
  gs_csr_destroy(&A);
  A = gs_test_csr_from_dense(7, 1, colv);
  check_all(A, 1, "1 column");
  check_all(A, 0, "1 column");
  gs_csr_destroy(&A);
}

static void test_laplacian(void)
{
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_gen_laplace(&A, 30, 20, 1, 5) == GS_SUCCESS);
  check_all(A, 0, "laplace 5");
  check_all(A, 5, "laplace 5");
  gs_csr_destroy(&A);
  CU_ASSERT_FATAL(gs_gen_laplace(&A, 9, 8, 7, 27) == GS_SUCCESS);
  check_all(A, 0, "laplace 27");
  gs_csr_destroy(&A);
}

static void test_bad_arguments(void)
{
  const double a[] = {1, 2, 0, 3};
  gs_csr_t *A = gs_test_csr_from_dense(2, 2, a);
  gs_csr5_t *L = (gs_csr5_t *)1;
  CU_ASSERT(gs_csr5_build(NULL, A, 0) == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_csr5_build(&L, NULL, 0) == GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NULL(L);
  CU_ASSERT(gs_csr5_build(&L, A, 65) == GS_ERR_INVALID_ARG);
  CU_ASSERT(strstr(gs_last_error(), "sigma") != NULL);
  CU_ASSERT(gs_csr5_build(&L, A, -1) == GS_ERR_INVALID_ARG);
  CU_ASSERT_FATAL(gs_csr5_build(&L, A, 0) == GS_SUCCESS);
  double x[2] = {1, 1}, y[2];
  CU_ASSERT(gs_csr5_apply_host(L, A, (gs_op_t)'X', 1.0, x, 0.0, y) == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_csr5_apply_host(L, A, GS_OP_N, 1.0, NULL, 0.0, y) == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_csr5_apply_host(NULL, A, GS_OP_N, 1.0, x, 0.0, y) == GS_ERR_INVALID_ARG);
  gs_csr5_destroy(&L);
  gs_csr5_destroy(&L);
  gs_csr5_destroy(NULL);
  gs_csr_destroy(&A);
}

/* Through the registry: flags, the option, and the host apply for op N and T. */
static void test_registry(void)
{
  const int b = gs_spmv_backend_find("csr5");
  CU_ASSERT_FATAL(b >= 0);
  const unsigned f = gs_spmv_backend_flags(b);
  CU_ASSERT(f & GS_SPMV_FLAG_TRANSPOSE);
  CU_ASSERT(f & GS_SPMV_FLAG_HOST_LAYOUT);
  CU_ASSERT(!(f & GS_SPMV_FLAG_WIDE));
  CU_ASSERT_EQUAL(gs_test_backend_option_default("csr5", "sigma", -1.0), 0.0);
  gs_csr_t *A = gs_test_random_csr(rng(), 300, 200, 0.05);
  CU_ASSERT_FATAL(A != NULL);
  double x[300], y[300], y0[300];
  for (int j = 0; j < 300; ++j) x[j] = gs_test_uniform(rng());
  for (int i = 0; i < 300; ++i) y[i] = y0[i] = gs_test_uniform(rng());
  CU_ASSERT(gs_spmv_host_apply("csr5", A, "csr5.sigma=3", GS_OP_N, 1.5, x, -0.5, y) ==
            GS_SUCCESS);
  CU_ASSERT(gs_test_spmv_ok(A, GS_OP_N, 1.5, x, -0.5, y0, y, "csr5 registry"));
  for (int i = 0; i < 200; ++i) y[i] = NAN;
  CU_ASSERT(gs_spmv_host_apply("csr5", A, NULL, GS_OP_T, -2.0, x, 0.0, y) == GS_SUCCESS);
  CU_ASSERT(gs_test_spmv_ok(A, GS_OP_T, -2.0, x, 0.0, NULL, y, "csr5 registry T"));
  CU_ASSERT(gs_spmv_host_apply("csr5", A, "csr5.sigma=65", GS_OP_N, 1.0, x, 0.0, y) !=
            GS_SUCCESS);
  gs_csr_destroy(&A);
}

int main(void)
{
  CU_TestInfo tests[] = {
      {"sigma rule and descriptor words", test_sigma_rule_and_words},
      {"hand-checked dirty tile and incomplete tile", test_hand_checked},
      {"random rectangular matrices, every sigma", test_random_rectangular},
      {"tiles with empty rows (runs, at tile starts, leading, trailing)", test_empty_rows_in_tiles},
      {"rows spanning several tiles", test_rows_spanning_tiles},
      {"one row holding every entry", test_one_row_holds_all},
      {"every row empty but one", test_all_empty_but_one},
      {"nnz at, below and above tile multiples", test_nnz_at_tile_multiples},
      {"tiny shapes: 1x1, nnz = 0, 0 x n, 1 row, 1 column", test_tiny_shapes},
      {"Laplacians", test_laplacian},
      {"bad arguments", test_bad_arguments},
      {"registry: flags, option, host apply", test_registry},
      CU_TEST_INFO_NULL};
  return gs_test_main("csr5_host", tests, 0);
}
