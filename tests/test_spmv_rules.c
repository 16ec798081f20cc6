/* tests/test_spmv_rules.c: rules every SpMV backend keeps on the GPU, each with the test that
 * would have caught the bug of issue 8 that broke it. Backends come from the registry.
 *
 *   index overflow   A diagonal of m = 2^27 + 12345 rows: at 32 threads a row the grid numbers
 *                    m x 32 > 2^32 threads. The 32-bit thread number of csr-vector wrapped there
 *                    and left rows >= 2^27 unwritten (op N) or scattered wrong ones (op T) with a
 *                    success status. Every entry of y is checked exactly (a_ii * x_i is exact
 *                    in double), for every backend, op N and T. Needs 24 GB of free device
 *                    memory (skipped with a printed reason otherwise, and under
 *                    GS_TEST_QUICK=1: about 8 GB of host and device memory and a minute).
 *   alpha = 0        BLAS: A and x are not read. x full of NaN, alpha = 0: the device product
 *                    and gs_spmv_host_apply (x given, and x = NULL) both give y = beta*y
 *                    exactly, 0 for beta = 0 (y then never read: it holds NaN); a padded format
 *                    that refuses the matrix refuses it on the host too, whatever alpha is.
 *   ell/dia op T     the new transposes (ell: scale + atomic scatter; dia: a gather, no atomics)
 *                    against the host reference on banded square and rectangular matrices and a
 *                    random rectangular one, with the componentwise rounding bound of
 *                    gs_test_spmv_ok (tests/testutil.c); host layouts too; dia's op T must be
 *                    bit-for-bit repeatable, as its capabilities say.
 *   2^31 entries     The 27-point Laplacian on 440^3 points (85M rows, 2.25e9 entries, more than
 *                    2^31 - 1): the matrix is wide (64-bit device offsets); csr-scalar and
 *                    csr-vector (row blocks, plain groups of 1 and 32 threads) give every entry
 *                    of y exactly for op N and T (integer x: the sums are exact, and A is
 *                    symmetric, so one reference serves both ops); every backend without
 *                    GS_SPMV_FLAG_WIDE and ilu0 / ic0 refuse it with GS_ERR_UNSUPPORTED. Needs
 *                    32 GB of free device memory and 64 GB of available host memory (skipped
 *                    with a printed reason otherwise, and under GS_TEST_QUICK=1).
 * Exits 77 without a device. */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testutil.h"

static gs_context_t *ctx;

static double gb(size_t bytes) { return (double)bytes / 1e9; }

/* Fills a device vector with NaN (all bytes 0xff) on the context's stream: an entry that a
 * product leaves unwritten stays NaN and fails the exact comparison. */
static void fill_nan_device(double *d, size_t len)
{
  CU_ASSERT_FATAL(cudaMemsetAsync(d, 0xff, len * sizeof *d,
                                  (cudaStream_t)gs_context_stream(ctx)) == cudaSuccess);
}

/* ---- index overflow ------------------------------------------------------------------------- */

#define BIG_M ((gs_idx_t)((1 << 27) + 12345)) /* BIG_M * 32 = 2^32 + 395040 */
#define BIG_FREE_BYTES ((size_t)24000000000ull) /* 24 GB */

static double big_a(int64_t i) { return 1.0 + (double)(i % 7); }
static double big_x(int64_t i) { return (double)(i % 1000) + 0.5; }

/* One backend (with options) on the big diagonal: op N and T, every entry exact. */
static void big_one(gs_matrix_t *A, const char *name, const char *options, const double *d_x,
                    double *d_y, double *h_y)
{
  const gs_idx_t m = BIG_M;
  gs_spmv_t *S = NULL;
  double t0 = gs_wall_seconds();
  gs_status_t st = gs_spmv_create(&S, ctx, A, name, options);
  if (st != GS_SUCCESS) { /* a diagonal has fill 1: no backend may refuse it */
    fprintf(stderr, "\n  %s [%s]: prepare failed on the %d-row diagonal: %s: %s\n", name,
            options ? options : "", (int)m, gs_status_string(st), gs_last_error());
    CU_FAIL("prepare failed on the big diagonal");
    return;
  }
  size_t dev_free = 0, dev_total = 0;
  cudaMemGetInfo(&dev_free, &dev_total);
  printf("\n    %-14s %-20s prepared in %5.1f s; device bytes: %6.2f GB counted by gpusolve, "
         "%6.2f GB in use on the device",
         name, options ? options : "", gs_wall_seconds() - t0, gb(gs_device_bytes_in_use(ctx)),
         gb(dev_total - dev_free));
  for (int op = 0; op < 2; ++op) {
    const gs_op_t o = op ? GS_OP_T : GS_OP_N;
    if (!gs_spmv_supports(S, o)) {
      printf("\n      op T: not offered by this prepared product (skipped)");
      continue;
    }
    fill_nan_device(d_y, (size_t)m);
    st = gs_spmv_apply(S, o, 1.0, d_x, 0.0, d_y);
    if (st == GS_SUCCESS) st = gs_context_sync(ctx);
    if (st != GS_SUCCESS) {
      fprintf(stderr, "\n  %s [%s] op %c: apply failed: %s\n", name, options ? options : "",
              op ? 'T' : 'N', gs_last_error());
      CU_FAIL("apply failed on the big diagonal");
      continue;
    }
    CU_ASSERT_FATAL(gs_copy_to_host(ctx, h_y, d_y, (size_t)m * sizeof *h_y) == GS_SUCCESS);
    int64_t wrong = 0, first = -1;
    for (int64_t i = 0; i < m; ++i)
      if (!(h_y[i] == big_a(i) * big_x(i))) { /* exact: small integers times k + 0.5 */
        if (first < 0) first = i;
        ++wrong;
      }
    CU_ASSERT_EQUAL(wrong, 0);
    if (wrong > 0)
      fprintf(stderr,
              "\n  %s [%s] op %c: %lld of %d entries wrong; first y[%lld] = %.17g, want %.17g%s\n",
              name, options ? options : "", op ? 'T' : 'N', (long long)wrong, (int)m,
              (long long)first, h_y[first], big_a(first) * big_x(first),
              first >= (1 << 27) ? " (a row >= 2^27: the thread number wrapped at 2^32?)" : "");
  }
  gs_spmv_destroy(&S);
}

static void test_index_overflow(void)
{
  const gs_idx_t m = BIG_M;
  if (gs_test_quick()) {
    printf("\n  skipped: GS_TEST_QUICK is set (the %d-row case needs ~8 GB and minutes)\n",
           (int)m);
    return;
  }
  size_t dev_free = 0, dev_total = 0;
  if (cudaMemGetInfo(&dev_free, &dev_total) != cudaSuccess || dev_free < BIG_FREE_BYTES) {
    printf("\n  skipped: %.1f GB free on the device, the %d-row case wants %.0f GB\n",
           gb(dev_free), (int)m, gb(BIG_FREE_BYTES));
    return;
  }
  const size_t base = gs_device_bytes_in_use(ctx);
  gs_csr_t *H = NULL;
  gs_matrix_t *A = NULL;
  double *h_x = NULL, *h_y = NULL, *d_x = NULL, *d_y = NULL;
  double t0 = gs_wall_seconds();
  CU_ASSERT_FATAL(gs_csr_create(&H, m, m, m) == GS_SUCCESS);
  for (gs_idx_t i = 0; i < m; ++i) {
    H->row_ptr[i] = i;
    H->col[i] = i;
    H->val[i] = big_a(i);
  }
  H->row_ptr[m] = m;
  CU_ASSERT_FATAL(gs_matrix_create(&A, ctx, H) == GS_SUCCESS);
  gs_csr_destroy(&H); /* the matrix holds its own copy */
  h_x = malloc((size_t)m * sizeof *h_x);
  h_y = malloc((size_t)m * sizeof *h_y);
  CU_ASSERT_FATAL(h_x && h_y);
  for (int64_t i = 0; i < m; ++i) h_x[i] = big_x(i);
  CU_ASSERT_FATAL(gs_dmalloc(ctx, (void **)&d_x, (size_t)m * sizeof *d_x, "x") == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_dmalloc(ctx, (void **)&d_y, (size_t)m * sizeof *d_y, "y") == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_x, h_x, (size_t)m * sizeof *h_x) == GS_SUCCESS);
  printf("\n    diagonal %d x %d (%d rows x 32 threads = %lld thread numbers > 2^32), "
         "set up in %.1f s",
         (int)m, (int)m, (int)m, (long long)m * 32, gs_wall_seconds() - t0);

  /* Every backend with csr-vector at 32 threads a row (the others ignore the key), then
   * csr-vector at 1 and 8 threads a row and with its automatic choice (row blocks here). */
  for (int b = 0; b < gs_spmv_backend_count(); ++b)
    big_one(A, gs_spmv_backend_name(b), "csr-vector.width=32", d_x, d_y, h_y);
  if (gs_spmv_backend_find("csr-vector") >= 0) {
    big_one(A, "csr-vector", "csr-vector.width=1", d_x, d_y, h_y);
    big_one(A, "csr-vector", "csr-vector.width=8", d_x, d_y, h_y);
    big_one(A, "csr-vector", NULL, d_x, d_y, h_y);
  }
  printf("\n");
  gs_dfree(ctx, d_x);
  gs_dfree(ctx, d_y);
  gs_matrix_destroy(&A);
  free(h_x);
  free(h_y);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base); /* every backend gave back what it took */
}

/* ---- more than 2^31 - 1 entries --------------------------------------------------------------- */

#define WIDE_N 440 /* 440^3 points, 27-point stencil: 2,248,091,128 entries */
#define WIDE_DEV_BYTES ((size_t)32000000000ull)
#define WIDE_HOST_BYTES ((size_t)64000000000ull)

/* MemAvailable of /proc/meminfo in bytes, 0 when unknown. */
static size_t host_available(void)
{
  FILE *f = fopen("/proc/meminfo", "r");
  char line[256];
  unsigned long long kb = 0;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) break;
  if (f) fclose(f);
  return (size_t)kb * 1024;
}

static void test_wide_matrix(void)
{
  if (gs_test_quick()) {
    printf("\n  skipped: GS_TEST_QUICK is set (the 2.25e9-entry case needs ~60 GB, a minute)\n");
    return;
  }
  size_t dev_free = 0, dev_total = 0, host = host_available();
  if (cudaMemGetInfo(&dev_free, &dev_total) != cudaSuccess || dev_free < WIDE_DEV_BYTES ||
      host < WIDE_HOST_BYTES) {
    printf("\n  skipped: %.1f GB free on the device and %.1f GB available on the host, the "
           "2.25e9-entry case wants %.0f and %.0f GB\n",
           gb(dev_free), gb(host), gb(WIDE_DEV_BYTES), gb(WIDE_HOST_BYTES));
    return;
  }
  const size_t base = gs_device_bytes_in_use(ctx);
  gs_csr_t *H = NULL;
  gs_matrix_t *A = NULL;
  gs_spmv_t *S = NULL;
  gs_precond_t *P = NULL;
  double *h_x = NULL, *ref = NULL, *h_y = NULL, *d_x = NULL, *d_y = NULL;
  double t0 = gs_wall_seconds();
  CU_ASSERT_FATAL(gs_gen_laplace(&H, WIDE_N, WIDE_N, WIDE_N, 27) == GS_SUCCESS);
  CU_ASSERT_FATAL(H->nnz > INT32_MAX);
  CU_ASSERT_FATAL(gs_matrix_create(&A, ctx, H) == GS_SUCCESS);
  gs_csr_destroy(&H); /* the matrix holds its own copy */
  const gs_csr_t *M = gs_matrix_host(A);
  const gs_idx_t m = M->m;
  CU_ASSERT(gs_matrix_features(A)->nnz == M->nnz);
  h_x = malloc((size_t)m * sizeof *h_x);
  ref = malloc((size_t)m * sizeof *ref);
  h_y = malloc((size_t)m * sizeof *h_y);
  CU_ASSERT_FATAL(h_x && ref && h_y);
  for (int64_t i = 0; i < m; ++i) h_x[i] = (double)(i % 7) - 3.0;
  /* 2 * (26 x_i - sum of up to 26 neighbours): integers below 2^10, exact in any order */
  CU_ASSERT_FATAL(gs_csr_spmv_host(M, GS_OP_N, 2.0, h_x, 0.0, ref) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_dmalloc(ctx, (void **)&d_x, (size_t)m * sizeof *d_x, "x") == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_dmalloc(ctx, (void **)&d_y, (size_t)m * sizeof *d_y, "y") == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_x, h_x, (size_t)m * sizeof *h_x) == GS_SUCCESS);
  printf("\n    27-point Laplacian %d^3: %d rows, %lld entries (> 2^31 - 1), set up in %.1f s",
         WIDE_N, (int)m, (long long)M->nnz, gs_wall_seconds() - t0);

  const char *wide_cases[][2] = {{"csr-scalar", NULL},
                                 {"csr-vector", NULL}, /* row blocks on a stencil */
                                 {"csr-vector", "csr-vector.width=1"},
                                 {"csr-vector", "csr-vector.width=32"},
                                 {"merge", NULL}, /* a path of m + nnz > 2^31 items */
                                 {"csr-adaptive", NULL}};
  for (size_t c = 0; c < sizeof wide_cases / sizeof wide_cases[0]; ++c) {
    const char *name = wide_cases[c][0], *opt = wide_cases[c][1];
    if (gs_spmv_backend_find(name) < 0) continue;
    t0 = gs_wall_seconds();
    gs_status_t st = gs_spmv_create(&S, ctx, A, name, opt);
    CU_ASSERT_EQUAL(st, GS_SUCCESS);
    if (st != GS_SUCCESS) {
      fprintf(stderr, "\n  %s [%s]: prepare failed: %s\n", name, opt ? opt : "", gs_last_error());
      continue;
    }
    gs_spmv_mem_t mem;
    CU_ASSERT(gs_spmv_memory(S, &mem) == GS_SUCCESS);
    CU_ASSERT(mem.device_bytes >= (size_t)M->nnz * 12 + ((size_t)m + 1) * 8);
    printf("\n    %-11s %-20s prepared in %4.1f s (%s)", name, opt ? opt : "",
           gs_wall_seconds() - t0, gs_spmv_describe(S));
    for (int op = 0; op < 2; ++op) {
      if (op && !gs_spmv_supports(S, GS_OP_T)) continue; /* merge, csr-adaptive: op N only */
      fill_nan_device(d_y, (size_t)m);
      st = gs_spmv_apply(S, op ? GS_OP_T : GS_OP_N, 2.0, d_x, 0.0, d_y);
      if (st == GS_SUCCESS) st = gs_context_sync(ctx);
      CU_ASSERT_EQUAL(st, GS_SUCCESS);
      if (st != GS_SUCCESS) {
        fprintf(stderr, "\n  %s op %c: apply failed: %s\n", name, op ? 'T' : 'N',
                gs_last_error());
        continue;
      }
      CU_ASSERT_FATAL(gs_copy_to_host(ctx, h_y, d_y, (size_t)m * sizeof *h_y) == GS_SUCCESS);
      int64_t wrong = 0, first = -1;
      for (int64_t i = 0; i < m; ++i)
        if (!(h_y[i] == ref[i])) {
          if (first < 0) first = i;
          ++wrong;
        }
      CU_ASSERT_EQUAL(wrong, 0);
      if (wrong > 0)
        fprintf(stderr, "\n  %s [%s] op %c: %lld of %d entries wrong; first y[%lld] = %.17g, "
                "want %.17g\n", name, opt ? opt : "", op ? 'T' : 'N', (long long)wrong, (int)m,
                (long long)first, h_y[first], ref[first]);
    }
    gs_spmv_destroy(&S);
  }
  /* the backends with 32-bit offsets refuse before preparing anything */
  for (int b = 0; b < gs_spmv_backend_count(); ++b) {
    if (gs_spmv_backend_flags(b) & GS_SPMV_FLAG_WIDE) continue;
    CU_ASSERT_EQUAL(gs_spmv_create(&S, ctx, A, gs_spmv_backend_name(b), NULL),
                    GS_ERR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(gs_last_error(), "2^31-1"));
    CU_ASSERT_PTR_NULL(S);
  }
  const char *factors[] = {"ilu0", "ic0"};
  for (int k = 0; k < 2; ++k) {
    CU_ASSERT_EQUAL(gs_precond_create(&P, ctx, A, factors[k]), GS_ERR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(gs_last_error(), "32-bit offsets"));
    CU_ASSERT_PTR_NULL(P);
  }
  printf("\n");
  gs_dfree(ctx, d_x);
  gs_dfree(ctx, d_y);
  gs_matrix_destroy(&A);
  free(h_x);
  free(ref);
  free(h_y);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
}

/* ---- alpha = 0 ------------------------------------------------------------------------------ */

/* Exact comparison of y against beta*y0 (0 for beta == 0); prints the first difference. */
static int is_beta_y(const double *y, const double *y0, double beta, gs_idx_t len,
                     const char *what, const char *name, const char *label, char op)
{
  for (gs_idx_t i = 0; i < len; ++i) {
    const double want = beta == 0.0 ? 0.0 : beta * y0[i];
    if (!(y[i] == want)) {
      fprintf(stderr, "\n  %s %s on %s, op %c, alpha 0, beta %g: y[%d] = %.17g, want %.17g\n",
              what, name, label, op, beta, (int)i, y[i], want);
      return 0;
    }
  }
  return 1;
}

static void alpha_zero_on(const gs_csr_t *H, const char *label)
{
  static const double betas[3] = {0.0, 1.0, -0.5};
  gs_matrix_t *A = NULL;
  const size_t base = gs_device_bytes_in_use(ctx);
  CU_ASSERT_FATAL(gs_matrix_create(&A, ctx, H) == GS_SUCCESS);
  const gs_csr_t *M = gs_matrix_host(A);
  const size_t lx = (size_t)(M->m > M->n ? M->m : M->n) + 1;
  double *x = malloc(lx * sizeof *x), *y0 = malloc(lx * sizeof *y0), *y = malloc(lx * sizeof *y);
  double *d_x = NULL, *d_y = NULL;
  CU_ASSERT_FATAL(x && y0 && y);
  uint64_t s = gs_test_seed() ^ 0xa1fa0ull ^ (uint64_t)M->nnz;
  for (size_t i = 0; i < lx; ++i) {
    x[i] = NAN; /* alpha = 0: x must not be read, so no NaN may reach y */
    y0[i] = 2.0 * gs_test_uniform(&s) - 1.0;
  }
  CU_ASSERT_FATAL(gs_dmalloc(ctx, (void **)&d_x, lx * sizeof *d_x, "x") == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_dmalloc(ctx, (void **)&d_y, lx * sizeof *d_y, "y") == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_x, x, lx * sizeof *x) == GS_SUCCESS);
  for (int b = 0; b < gs_spmv_backend_count(); ++b) {
    const char *name = gs_spmv_backend_name(b);
    const unsigned flags = gs_spmv_backend_flags(b);
    gs_spmv_t *S = NULL;
    gs_status_t st = gs_spmv_create(&S, ctx, A, name, NULL);
    if (st == GS_ERR_FORMAT_FILL) { /* the host refuses too, alpha = 0 or not */
      for (int op = 0; op < 2; ++op) {
        if (op && !(flags & GS_SPMV_FLAG_TRANSPOSE)) continue;
        memcpy(y, y0, lx * sizeof *y);
        gs_status_t hs = gs_spmv_host_apply(name, M, NULL, op ? GS_OP_T : GS_OP_N, 0.0, x, 1.0, y);
        CU_ASSERT_EQUAL(hs, GS_ERR_FORMAT_FILL);
        if (hs != GS_ERR_FORMAT_FILL)
          fprintf(stderr, "\n  %s on %s: prepare refused the fill, the host apply answered %s\n",
                  name, label, gs_status_string(hs));
      }
      continue;
    }
    if (st != GS_SUCCESS) {
      fprintf(stderr, "\n  %s on %s: prepare failed: %s\n", name, label, gs_last_error());
      CU_FAIL("prepare failed");
      continue;
    }
    for (int op = 0; op < 2; ++op) {
      const gs_op_t o = op ? GS_OP_T : GS_OP_N;
      const gs_idx_t len = op ? M->n : M->m;
      const char opc = op ? 'T' : 'N';
      for (int k = 0; k < 3; ++k) {
        const double beta = betas[k];
        if (gs_spmv_supports(S, o)) { /* device */
          for (gs_idx_t i = 0; i < len; ++i) y[i] = beta == 0.0 ? NAN : y0[i];
          CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_y, y, (size_t)len * sizeof *y) == GS_SUCCESS);
          st = gs_spmv_apply(S, o, 0.0, d_x, beta, d_y);
          if (st == GS_SUCCESS) st = gs_context_sync(ctx);
          CU_ASSERT_EQUAL(st, GS_SUCCESS);
          CU_ASSERT_FATAL(gs_copy_to_host(ctx, y, d_y, (size_t)len * sizeof *y) == GS_SUCCESS);
          CU_ASSERT(st != GS_SUCCESS || is_beta_y(y, y0, beta, len, "device", name, label, opc));
        }
        if (op && !(flags & GS_SPMV_FLAG_TRANSPOSE)) continue;
        for (int with_x = 1; with_x >= 0; --with_x) { /* host: NaN x, then x = NULL */
          for (gs_idx_t i = 0; i < len; ++i) y[i] = beta == 0.0 ? NAN : y0[i];
          st = gs_spmv_host_apply(name, M, NULL, o, 0.0, with_x ? x : NULL, beta, y);
          CU_ASSERT_EQUAL(st, GS_SUCCESS);
          if (st != GS_SUCCESS)
            fprintf(stderr, "\n  host %s on %s, op %c, alpha 0%s: %s\n", name, label, opc,
                    with_x ? "" : ", x = NULL", gs_last_error());
          else
            CU_ASSERT(is_beta_y(y, y0, beta, len, with_x ? "host" : "host (x = NULL)", name,
                                label, opc));
        }
      }
    }
    gs_spmv_destroy(&S);
  }
  gs_dfree(ctx, d_x);
  gs_dfree(ctx, d_y);
  gs_matrix_destroy(&A);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
  free(x);
  free(y0);
  free(y);
}

/* m x n, entries on the diagonals j - i in offs (those inside the matrix), each present with
 * probability density, values in [-1, 1). */
static gs_csr_t *banded(uint64_t *s, gs_idx_t m, gs_idx_t n, const int *offs, int noff,
                        double density)
{
  gs_coo_t *C = NULL;
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_coo_create(&C, m, n, 16) == GS_SUCCESS);
  for (gs_idx_t i = 0; i < m; ++i)
    for (int k = 0; k < noff; ++k) {
      const int64_t j = (int64_t)i + offs[k];
      if (j >= 0 && j < n && gs_test_uniform(s) < density)
        CU_ASSERT_FATAL(gs_coo_push(C, i, (gs_idx_t)j, 2.0 * gs_test_uniform(s) - 1.0) ==
                        GS_SUCCESS);
    }
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
  gs_coo_destroy(&C);
  return A;
}

static const int band_offs[] = {-51, -3, -2, -1, 0, 1, 2, 3, 37};
#define NBAND ((int)(sizeof band_offs / sizeof band_offs[0]))

static void test_alpha_zero(void)
{
  uint64_t s = gs_test_seed() + 8;
  gs_csr_t *H = banded(&s, 500, 500, band_offs, NBAND, 0.9); /* ell and dia take it */
  alpha_zero_on(H, "banded 500x500");
  gs_csr_destroy(&H);
  H = gs_test_random_csr(&s, 300, 200, 0.05); /* dia refuses it (fill 40x or so) */
  CU_ASSERT_FATAL(H != NULL);
  alpha_zero_on(H, "random 300x200");
  gs_csr_destroy(&H);
  CU_ASSERT_FATAL(gs_csr_create(&H, 7, 5, 0) == GS_SUCCESS); /* nnz = 0 */
  alpha_zero_on(H, "7x5 without entries");
  gs_csr_destroy(&H);
}

/* ---- ell and dia transposes ----------------------------------------------------------------- */

static void transpose_on(const gs_csr_t *H, const char *label)
{
  static const char *const names[] = {"ell", "dia"};
  static const double cases[3][2] = {{1.0, 0.0}, {-1.0, 1.0}, {2.5, -0.5}};
  /* generous max_fill: the point is the transpose, not the fill guard */
  static const char *const options = "max_fill=1000";
  gs_matrix_t *A = NULL;
  const size_t base = gs_device_bytes_in_use(ctx);
  CU_ASSERT_FATAL(gs_matrix_create(&A, ctx, H) == GS_SUCCESS);
  const gs_csr_t *M = gs_matrix_host(A);
  const size_t lx = (size_t)(M->m > M->n ? M->m : M->n) + 1;
  double *x = malloc(lx * sizeof *x), *y0 = malloc(lx * sizeof *y0), *y = malloc(lx * sizeof *y);
  double *y2 = malloc(lx * sizeof *y2), *d_x = NULL, *d_y = NULL;
  CU_ASSERT_FATAL(x && y0 && y && y2);
  uint64_t s = gs_test_seed() ^ 0x7a5ull ^ (uint64_t)M->nnz;
  for (size_t i = 0; i < lx; ++i) {
    x[i] = 2.0 * gs_test_uniform(&s) - 1.0;
    y0[i] = 2.0 * gs_test_uniform(&s) - 1.0;
  }
  CU_ASSERT_FATAL(gs_dmalloc(ctx, (void **)&d_x, lx * sizeof *d_x, "x") == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_dmalloc(ctx, (void **)&d_y, lx * sizeof *d_y, "y") == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_x, x, lx * sizeof *x) == GS_SUCCESS);
  for (int b = 0; b < 2; ++b) {
    const char *name = names[b];
    if (gs_spmv_backend_find(name) < 0) continue;
    CU_ASSERT(gs_spmv_backend_flags(gs_spmv_backend_find(name)) & GS_SPMV_FLAG_TRANSPOSE);
    gs_spmv_t *S = NULL;
    gs_status_t st = gs_spmv_create(&S, ctx, A, name, options);
    CU_ASSERT_EQUAL(st, GS_SUCCESS);
    if (st != GS_SUCCESS) {
      fprintf(stderr, "\n  %s on %s: prepare failed: %s\n", name, label, gs_last_error());
      continue;
    }
    const unsigned caps = gs_spmv_caps(S);
    CU_ASSERT(gs_spmv_supports(S, GS_OP_T));
    /* ell scatters with atomics, dia gathers: only dia's op T is deterministic */
    CU_ASSERT_EQUAL(!!(caps & GS_SPMV_CAP_DETERMINISTIC_T), b == 1);
    gs_spmv_mem_t mem;
    CU_ASSERT(gs_spmv_memory(S, &mem) == GS_SUCCESS);
    CU_ASSERT(mem.bytes_per_apply_t > 0);
    for (int c = 0; c < 3; ++c) {
      const double alpha = cases[c][0], beta = cases[c][1];
      /* device */
      for (gs_idx_t i = 0; i < M->n; ++i) y[i] = beta == 0.0 ? NAN : y0[i];
      CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_y, y, (size_t)M->n * sizeof *y) == GS_SUCCESS);
      st = gs_spmv_apply(S, GS_OP_T, alpha, d_x, beta, d_y);
      if (st == GS_SUCCESS) st = gs_context_sync(ctx);
      CU_ASSERT_EQUAL(st, GS_SUCCESS);
      if (st != GS_SUCCESS) {
        fprintf(stderr, "\n  %s on %s: op T failed: %s\n", name, label, gs_last_error());
        continue;
      }
      CU_ASSERT_FATAL(gs_copy_to_host(ctx, y, d_y, (size_t)M->n * sizeof *y) == GS_SUCCESS);
      CU_ASSERT(gs_test_spmv_ok(M, GS_OP_T, alpha, x, beta, y0, y, "device %s on %s", name,
                                label));
      if (b == 1) { /* dia: the same inputs give the same bits */
        for (gs_idx_t i = 0; i < M->n; ++i) y2[i] = beta == 0.0 ? NAN : y0[i];
        CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_y, y2, (size_t)M->n * sizeof *y2) ==
                        GS_SUCCESS);
        CU_ASSERT(gs_spmv_apply(S, GS_OP_T, alpha, d_x, beta, d_y) == GS_SUCCESS);
        CU_ASSERT(gs_context_sync(ctx) == GS_SUCCESS);
        CU_ASSERT_FATAL(gs_copy_to_host(ctx, y2, d_y, (size_t)M->n * sizeof *y2) == GS_SUCCESS);
        CU_ASSERT(memcmp(y, y2, (size_t)M->n * sizeof *y) == 0);
      }
      /* host layout */
      for (gs_idx_t i = 0; i < M->n; ++i) y[i] = beta == 0.0 ? NAN : y0[i];
      st = gs_spmv_host_apply(name, M, options, GS_OP_T, alpha, x, beta, y);
      CU_ASSERT_EQUAL(st, GS_SUCCESS);
      if (st == GS_SUCCESS)
        CU_ASSERT(gs_test_spmv_ok(M, GS_OP_T, alpha, x, beta, y0, y, "host %s on %s", name,
                                  label));
    }
    gs_spmv_destroy(&S);
  }
  gs_dfree(ctx, d_x);
  gs_dfree(ctx, d_y);
  gs_matrix_destroy(&A);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
  free(x);
  free(y0);
  free(y);
  free(y2);
}

static void test_ell_dia_transpose(void)
{
  uint64_t s = gs_test_seed() + 9;
  const gs_idx_t shapes[][2] = {{2000, 2000}, {1500, 900}, {900, 1500}};
  for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; ++k) {
    char label[64];
    snprintf(label, sizeof label, "banded %dx%d", (int)shapes[k][0], (int)shapes[k][1]);
    gs_csr_t *H = banded(&s, shapes[k][0], shapes[k][1], band_offs, NBAND, 0.8);
    transpose_on(H, label);
    gs_csr_destroy(&H);
  }
  gs_csr_t *H = gs_test_random_csr(&s, 300, 200, 0.05);
  CU_ASSERT_FATAL(H != NULL);
  transpose_on(H, "random 300x200");
  gs_csr_destroy(&H);
  /* more than 256 diagonals: dia stages its offsets in chunks of 256 */
  H = gs_test_random_csr(&s, 400, 700, 0.03);
  CU_ASSERT_FATAL(H != NULL);
  transpose_on(H, "random 400x700");
  gs_csr_destroy(&H);
}

int main(void)
{
  if (gs_device_count() > 0 && gs_context_create(&ctx, 0) != GS_SUCCESS) {
    fprintf(stderr, "context: %s\n", gs_last_error());
    return 1;
  }
  CU_TestInfo tests[] = {
      {"alpha = 0 reads neither A nor x, device and host", test_alpha_zero},
      {"ell and dia transposes against the host reference", test_ell_dia_transpose},
      {"index overflow: 2^27 + 12345 rows x 32 threads, every backend", test_index_overflow},
      {"more than 2^31 - 1 entries: 64-bit offsets, refusals", test_wide_matrix},
      CU_TEST_INFO_NULL};
  int rc = gs_test_main("spmv_rules", tests, 1);
  gs_context_destroy(&ctx);
  return rc;
}
