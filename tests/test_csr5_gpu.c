/* tests/test_csr5_gpu.c: the csr5 backend on the GPU against its host builder and emulation
 * (spmv/csr5_build.c): the device conversion's arrays (tile_ptr, descriptors, empty_ptr,
 * empty_offset, carry rows, empty-row list, transposed entries) equal the host-built ones bit for
 * bit; op N equals the host emulation bit for bit (products and updates are not contracted into
 * FMAs on either side) and is within the CSR product's rounding bound; op T within the bound;
 * allocation failures at every step of the conversion fail cleanly; describe reports the
 * conversion time. The conformance suite runs csr5 through the common cases besides.
 * Exits 77 without a device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/testhooks.h"
#include "spmv/csr5.h"
#include "tests/testutil.h"

static gs_context_t *ctx;
static uint64_t g_state;
static int g_seeded;

static uint64_t *rng(void)
{
  if (!g_seeded) {
    g_state = gs_test_seed() ^ 0xc5a5d00ull;
    g_seeded = 1;
  }
  return &g_state;
}

static gs_csr_t *from_lengths(const int *len, gs_idx_t m, gs_idx_t n)
{
  return gs_test_csr_from_lengths(rng(), len, m, n);
}

#define SAME(field, count)                                                                     \
  do {                                                                                         \
    const size_t n_ = (size_t)(count);                                                         \
    if (n_ && memcmp(D->field, H->field, n_ * sizeof *H->field) != 0) {                        \
      size_t i_ = 0;                                                                           \
      while (memcmp(&D->field[i_], &H->field[i_], sizeof *H->field) == 0) ++i_;                \
      fprintf(stderr, "  %s sigma %d: device " #field "[%zu] differs from the host's\n", label, \
              H->sigma, i_);                                                                   \
      CU_FAIL(#field " differs");                                                              \
    }                                                                                          \
  } while (0)

/* Device conversion == host builder, bit for bit. */
static void same_layout(gs_matrix_t *A, const gs_csr_t *M, int sigma, const char *label)
{
  gs_csr5_t *H = NULL, *D = NULL;
  double ms = -1.0;
  CU_ASSERT_FATAL(gs_csr5_build(&H, M, sigma) == GS_SUCCESS);
  gs_status_t st = gs_csr5_device_layout(ctx, A, sigma, &D, &ms);
  if (st != GS_SUCCESS) fprintf(stderr, "  %s: device conversion: %s\n", label, gs_last_error());
  CU_ASSERT_FATAL(st == GS_SUCCESS);
  CU_ASSERT_EQUAL(D->sigma, H->sigma);
  CU_ASSERT_EQUAL(D->words, H->words);
  CU_ASSERT_EQUAL(D->ybits, H->ybits);
  CU_ASSERT_EQUAL_FATAL(D->ntiles, H->ntiles);
  CU_ASSERT_EQUAL(D->nnz_full, H->nnz_full);
  CU_ASSERT_EQUAL(D->tail_row0, H->tail_row0);
  CU_ASSERT_EQUAL(D->tail_row1, H->tail_row1);
  CU_ASSERT_EQUAL_FATAL(D->n_empty, H->n_empty);
  CU_ASSERT_EQUAL(D->n_dirty, H->n_dirty);
  CU_ASSERT_EQUAL(D->n_cont, H->n_cont);
  const size_t nt = (size_t)H->ntiles;
  SAME(tile_ptr, nt + 1);
  SAME(tile_desc, nt * H->words * CSR5_OMEGA);
  SAME(empty_ptr, nt + 1);
  if (D->empty_ptr[nt] == H->empty_ptr[nt]) SAME(empty_offset, H->empty_ptr[nt]);
  SAME(carry_row, nt + 1);
  SAME(empty_rows, H->n_empty);
  SAME(col, H->nnz_full);
  SAME(val, H->nnz_full);
  CU_ASSERT(M->m == 0 || ms >= 0.0);
  gs_csr5_destroy(&H);
  gs_csr5_destroy(&D);
}

/* op N against the host emulation (bit for bit) and the bound; op T against the bound. */
static void same_products(gs_matrix_t *A, const gs_csr_t *M, int sigma, const char *label)
{
  static const double cases[][2] = {{1.0, 0.0}, {-1.0, 1.0}, {2.5, -0.5}};
  char opts[64];
  snprintf(opts, sizeof opts, "csr5.sigma=%d", sigma);
  gs_spmv_t *S = NULL;
  CU_ASSERT_FATAL(gs_spmv_create(&S, ctx, A, "csr5", opts) == GS_SUCCESS);
  CU_ASSERT(strstr(gs_spmv_describe(S), "conversion") != NULL || M->m == 0);
  CU_ASSERT(gs_spmv_supports(S, GS_OP_T));
  CU_ASSERT(gs_spmv_caps(S) & GS_SPMV_CAP_DETERMINISTIC);
  CU_ASSERT(!(gs_spmv_caps(S) & GS_SPMV_CAP_DETERMINISTIC_T));
  gs_csr5_t *H = NULL;
  CU_ASSERT_FATAL(gs_csr5_build(&H, M, sigma) == GS_SUCCESS);
  const size_t lx = (size_t)(M->m > M->n ? M->m : M->n) + 1;
  double *x = malloc(lx * sizeof *x), *y0 = malloc(lx * sizeof *y0), *y = malloc(lx * sizeof *y);
  double *yh = malloc(lx * sizeof *yh), *d_x = NULL, *d_y = NULL;
  CU_ASSERT_FATAL(x && y0 && y && yh);
  CU_ASSERT_FATAL(gs_dmalloc(ctx, (void **)&d_x, lx * sizeof *x, "x") == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_dmalloc(ctx, (void **)&d_y, lx * sizeof *y, "y") == GS_SUCCESS);
  for (size_t i = 0; i < lx; ++i) {
    x[i] = 2.0 * gs_test_uniform(rng()) - 1.0;
    y0[i] = gs_test_uniform(rng()) - 0.5;
  }
  CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_x, x, lx * sizeof *x) == GS_SUCCESS);
  for (int op = 0; op < 2; ++op) {
    const gs_idx_t len = op ? M->n : M->m;
    if (len == 0) continue;
    for (int c = 0; c < 3; ++c) {
      const double alpha = cases[c][0], beta = cases[c][1];
      for (gs_idx_t i = 0; i < len; ++i) y[i] = yh[i] = beta == 0.0 ? NAN : y0[i];
      CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_y, y, (size_t)len * sizeof *y) == GS_SUCCESS);
      gs_status_t st = gs_spmv_apply(S, op ? GS_OP_T : GS_OP_N, alpha, d_x, beta, d_y);
      if (st == GS_SUCCESS) st = gs_context_sync(ctx);
      if (st != GS_SUCCESS) fprintf(stderr, "  %s: apply: %s\n", label, gs_last_error());
      CU_ASSERT_FATAL(st == GS_SUCCESS);
      CU_ASSERT_FATAL(gs_copy_to_host(ctx, y, d_y, (size_t)len * sizeof *y) == GS_SUCCESS);
      CU_ASSERT(gs_test_spmv_ok(M, op ? GS_OP_T : GS_OP_N, alpha, x, beta, y0, y,
                                "csr5 gpu %s sigma %d", label, sigma));
      if (op == 0) {
        CU_ASSERT_FATAL(gs_csr5_apply_host(H, M, GS_OP_N, alpha, x, beta, yh) == GS_SUCCESS);
        if (memcmp(y, yh, (size_t)len * sizeof *y) != 0) {
          gs_idx_t i = 0;
          while (memcmp(&y[i], &yh[i], sizeof *y) == 0) ++i;
          fprintf(stderr, "  %s sigma %d: y[%d] = %.17g on the GPU, %.17g emulated\n", label,
                  sigma, (int)i, y[i], yh[i]);
          CU_FAIL("op N differs from the host emulation");
        }
      }
    }
  }
  gs_dfree(ctx, d_x);
  gs_dfree(ctx, d_y);
  free(x);
  free(y0);
  free(y);
  free(yh);
  gs_csr5_destroy(&H);
  gs_spmv_destroy(&S);
}

static void check(const gs_csr_t *H, int sigma, const char *label)
{
  gs_matrix_t *A = NULL;
  const size_t base = gs_device_bytes_in_use(ctx);
  CU_ASSERT_FATAL(gs_matrix_create(&A, ctx, H) == GS_SUCCESS);
  const gs_csr_t *M = gs_matrix_host(A);
  same_layout(A, M, sigma, label);
  same_products(A, M, sigma, label);
  gs_matrix_destroy(&A);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
}

static const int sigmas[] = {0, 1, 3, 4, 7, 16, 17, 27, 32, 48, 64};
#define NSIG ((int)(sizeof sigmas / sizeof sigmas[0]))

static void test_random(void)
{
  const int trials = gs_test_quick() ? 4 : 20;
  for (int t = 0; t < trials; ++t) {
    const gs_idx_t m = 1 + (gs_idx_t)(gs_test_uniform(rng()) * 3000);
    const gs_idx_t n = 1 + (gs_idx_t)(gs_test_uniform(rng()) * 3000);
    const double density = 0.0005 + 0.05 * gs_test_uniform(rng()) * gs_test_uniform(rng());
    gs_csr_t *A = gs_test_random_csr(rng(), m, n, density);
    CU_ASSERT_FATAL(A != NULL);
    check(A, sigmas[t % NSIG], "random");
    gs_csr_destroy(&A);
  }
}

static void test_edge_cases(void)
{
  /* empty rows inside tiles, in runs, leading and trailing */
  {
    const gs_idx_t m = 20000, n = 700;
    int *len = malloc(m * sizeof *len);
    CU_ASSERT_FATAL(len != NULL);
    for (gs_idx_t i = 0; i < m; ++i) {
      len[i] = 1 + (int)(gs_test_uniform(rng()) * 12);
      if (i % 3 == 1 || (i >= 400 && i < 450) || (i >= 5000 && i < 9000) || i < 77 ||
          i > 19900)
        len[i] = 0;
    }
    gs_csr_t *A = from_lengths(len, m, n);
    for (int s = 0; s < NSIG; ++s) check(A, sigmas[s], "empty rows");
    gs_csr_destroy(&A);
    free(len);
  }
  /* rows spanning many tiles among short rows; a row of one tile exactly */
  for (int s = 1; s < NSIG; s += 3) {
    const gs_idx_t m = 3000, n = 40000;
    const int W = CSR5_OMEGA * sigmas[s];
    int *len = malloc(m * sizeof *len);
    CU_ASSERT_FATAL(len != NULL);
    for (gs_idx_t i = 0; i < m; ++i) len[i] = (int)(gs_test_uniform(rng()) * 6);
    len[3] = 37 * W + 11 < n ? 37 * W + 11 : n;
    len[100] = W;
    len[2999] = 5 * W < n ? 5 * W : n;
    gs_csr_t *A = from_lengths(len, m, n);
    check(A, sigmas[s], "long rows");
    gs_csr_destroy(&A);
    free(len);
  }
  /* one row holds every entry; every row empty but one */
  {
    int len1[1] = {100000};
    gs_csr_t *A = from_lengths(len1, 1, 100000);
    check(A, 0, "1 row");
    check(A, 64, "1 row");
    gs_csr_destroy(&A);
    const gs_idx_t m = 50000;
    int *len = calloc(m, sizeof *len);
    CU_ASSERT_FATAL(len != NULL);
    len[31234] = 5000;
    A = from_lengths(len, m, 5000);
    check(A, 0, "all empty but one");
    check(A, 1, "all empty but one");
    gs_csr_destroy(&A);
    free(len);
  }
  /* tiny */
  {
    const double one[] = {3.0};
    gs_csr_t *A = gs_test_csr_from_dense(1, 1, one);
    check(A, 0, "1x1");
    gs_csr_destroy(&A);
    CU_ASSERT_FATAL(gs_csr_create(&A, 7, 3, 0) == GS_SUCCESS);
    check(A, 0, "nnz = 0");
    gs_csr_destroy(&A);
    CU_ASSERT_FATAL(gs_csr_create(&A, 0, 5, 0) == GS_SUCCESS);
    check(A, 0, "0 x 5");
    gs_csr_destroy(&A);
  }
  /* Laplacians (no empty rows, short regular rows) */
  {
    gs_csr_t *A = NULL;
    CU_ASSERT_FATAL(gs_gen_laplace(&A, 40, 40, 40, 27) == GS_SUCCESS);
    check(A, 0, "laplace 27");
    gs_csr_destroy(&A);
  }
}

/* Allocation k of the conversion fails, for every k: a clean GS_ERR_DEVICE_MEMORY, nothing left
 * allocated. On a matrix with empty rows and dirty tiles, so that every array is allocated. */
static void test_allocation_failures(void)
{
  const gs_idx_t m = 3000;
  int *len = malloc(m * sizeof *len);
  CU_ASSERT_FATAL(len != NULL);
  for (gs_idx_t i = 0; i < m; ++i) len[i] = i % 4 == 2 ? 0 : 1 + i % 7;
  gs_csr_t *H = from_lengths(len, m, 100);
  free(len);
  for (long k = 1; k < 64; ++k) {
    gs_matrix_t *A = NULL;
    gs_spmv_t *S = NULL;
    const size_t base = gs_device_bytes_in_use(ctx);
    CU_ASSERT_FATAL(gs_matrix_create(&A, ctx, H) == GS_SUCCESS);
    gs_test_dmalloc_fail_after(ctx, k);
    const gs_status_t st = gs_spmv_create(&S, ctx, A, "csr5", "csr5.sigma=4");
    gs_test_dmalloc_fail_after(ctx, 0);
    if (st != GS_SUCCESS) {
      CU_ASSERT_EQUAL(st, GS_ERR_DEVICE_MEMORY);
      CU_ASSERT_PTR_NULL(S);
    }
    gs_spmv_destroy(&S);
    gs_matrix_destroy(&A);
    CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
    if (st == GS_SUCCESS) break;
  }
  gs_csr_destroy(&H);
}

/* The real matrices of GS_MATRIX_DIR, automatic sigma. */
static void test_real_matrices(void)
{
  if (!gs_test_have_matrices()) return;
  for (int i = 0; gs_test_matrix_names[i]; ++i) {
    const char *name = gs_test_matrix_names[i];
    if (!gs_test_have_matrix(name)) continue;
    gs_csr_t *H = NULL;
    if (gs_mm_read_csr(gs_test_matrix(name), &H) != GS_SUCCESS) {
      fprintf(stderr, "  cannot read %s: %s\n", name, gs_last_error());
      CU_FAIL("matrix not read");
      continue;
    }
    check(H, 0, name);
    gs_csr_destroy(&H);
  }
}

int main(void)
{
  if (gs_device_count() > 0 && gs_context_create(&ctx, 0) != GS_SUCCESS) {
    fprintf(stderr, "context: %s\n", gs_last_error());
    return 1;
  }
  CU_TestInfo tests[] = {
      {"random matrices: device layout and op N bit for bit, op T bound", test_random},
      {"edge cases: empty rows, long rows, one row, all empty but one, tiny", test_edge_cases},
      {"allocation failures during the conversion", test_allocation_failures},
      {"every matrix of GS_MATRIX_DIR", test_real_matrices},
      CU_TEST_INFO_NULL};
  const int rc = gs_test_main("csr5_gpu", tests, 1);
  gs_context_destroy(&ctx);
  return rc;
}
