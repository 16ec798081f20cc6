/* tests/test_spmv_conformance.c: every registered SpMV backend through the same cases on the
 * GPU, against the product's rounding bound (gs_test_spmv_ok; CUSP's one-body-every-format
 * test). Backends come from the registry: a new one is tested without editing this file.
 * Exits 77 without a device. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/testhooks.h"
#include "gpusolve/select.h"
#include "tests/testutil.h"

static gs_context_t *ctx;
/* GS_TEST_NO_VENDOR=1 leaves cuSPARSE out: racecheck reports hazards inside cuSPARSE's own
 * csrmv/coomv kernels (shared-memory reuse it synchronizes by other means), which would drown
 * the report on ours. */
static int skip_vendor;
static const double cases[3][2] = {{1.0, 0.0}, {-1.0, 1.0}, {2.5, -0.5}};
/* 1 while test_wide_offsets runs: matrices keep 64-bit device offsets (gs_test_wide_offsets). */
static int wide;
static const char *only; /* GS_TEST_BACKENDS: a comma-separated list to run alone (sanitizer runs) */

/* Whether backend `name` is to run: every one unless GS_TEST_BACKENDS names some. */
static int selected(const char *name)
{
  if (!only || !*only) return 1;
  const size_t len = strlen(name);
  for (const char *p = only; (p = strstr(p, name)) != NULL; p += len)
    if ((p == only || p[-1] == ',') && (p[len] == ',' || p[len] == '\0')) return 1;
  return 0;
}

/* Whether backend b runs in the per-backend loops: selected, and not a vendor one under
 * GS_TEST_NO_VENDOR. */
static int tested(int b)
{
  if (skip_vendor && (gs_spmv_backend_flags(b) & GS_SPMV_FLAG_VENDOR)) return 0;
  return selected(gs_spmv_backend_name(b));
}

/* A product the prepared instance says is deterministic, run again from the same y: the same
 * bits as the first run (y). Returns 1 when they match. */
static int same_bits_again(gs_spmv_t *S, gs_op_t op, double alpha, const double *d_x, double beta,
                           double *d_y, const double *y0, const double *y, gs_idx_t len,
                           const char *name, const char *label)
{
  double *y2 = malloc(((size_t)len + 1) * sizeof *y2);
  CU_ASSERT_FATAL(y2 != NULL);
  for (gs_idx_t i = 0; i < len; ++i) y2[i] = beta == 0.0 ? NAN : y0[i];
  CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_y, y2, (size_t)len * sizeof *y2) == GS_SUCCESS);
  gs_status_t st = gs_spmv_apply(S, op, alpha, d_x, beta, d_y);
  if (st == GS_SUCCESS) st = gs_context_sync(ctx);
  if (st == GS_SUCCESS)
    st = gs_copy_to_host(ctx, y2, d_y, (size_t)len * sizeof *y2);
  const int same = st == GS_SUCCESS && memcmp(y, y2, (size_t)len * sizeof *y) == 0;
  if (!same)
    fprintf(stderr, "  %s on %s: op %c is flagged deterministic but a second run differs%s\n",
            name, label, op == GS_OP_T ? 'T' : 'N', st == GS_SUCCESS ? "" : " (apply failed)");
  free(y2);
  return same;
}

/* A backend that builds its layout on the GPU (GS_SPMV_FLAG_DEVICE_BUILD) against its host
 * builder (build=host, the reference): the same device bytes, and the same bits of op N, and of
 * op T, wherever both products are flagged deterministic (the same layout through the same
 * kernels); otherwise the host bound of conform_one holds for both (checked there). */
static void device_vs_host_build(gs_matrix_t *A, const char *name, const char *options,
                                 const char *label, double *d_x, double *d_y)
{
  const int b = gs_spmv_backend_find(name);
  if (b < 0 || !(gs_spmv_backend_flags(b) & GS_SPMV_FLAG_DEVICE_BUILD) || wide) return;
  const gs_csr_t *M = gs_matrix_host(A);
  char ho[256], dopt[256];
  snprintf(ho, sizeof ho, "%s%sbuild=host", options ? options : "", options ? "," : "");
  snprintf(dopt, sizeof dopt, "%s%sbuild=device", options ? options : "", options ? "," : "");
  gs_spmv_t *Sd = NULL, *Sh = NULL;
  gs_status_t sd = gs_spmv_create(&Sd, ctx, A, name, dopt);
  gs_status_t sh = gs_spmv_create(&Sh, ctx, A, name, ho);
  CU_ASSERT_EQUAL(sd, sh); /* both build, or both refuse (fill) */
  if (sd != sh)
    fprintf(stderr, "  %s %s on %s: device build %d, host build %d (%s)\n", name,
            options ? options : "", label, (int)sd, (int)sh, gs_last_error());
  if (sd == GS_SUCCESS && sh == GS_SUCCESS) {
    gs_spmv_mem_t md, mh;
    CU_ASSERT(gs_spmv_memory(Sd, &md) == GS_SUCCESS && gs_spmv_memory(Sh, &mh) == GS_SUCCESS);
    CU_ASSERT_EQUAL(md.device_bytes, mh.device_bytes);
    size_t len = (size_t)(M->m > M->n ? M->m : M->n) + 1;
    double *yd = malloc(len * sizeof *yd), *yh = malloc(len * sizeof *yh);
    CU_ASSERT_FATAL(yd && yh);
    for (int op = 0; op < 2; ++op) {
      const unsigned det = op ? GS_SPMV_CAP_DETERMINISTIC_T : GS_SPMV_CAP_DETERMINISTIC;
      const gs_op_t o = op ? GS_OP_T : GS_OP_N;
      if (!gs_spmv_supports(Sd, o) || !(gs_spmv_caps(Sd) & det) || !(gs_spmv_caps(Sh) & det))
        continue;
      const size_t n = (size_t)(op ? M->n : M->m);
      if (n == 0) continue;
      CU_ASSERT(gs_spmv_apply(Sd, o, 1.0, d_x, 0.0, d_y) == GS_SUCCESS);
      CU_ASSERT(gs_copy_to_host(ctx, yd, d_y, n * sizeof *yd) == GS_SUCCESS);
      CU_ASSERT(gs_spmv_apply(Sh, o, 1.0, d_x, 0.0, d_y) == GS_SUCCESS);
      CU_ASSERT(gs_copy_to_host(ctx, yh, d_y, n * sizeof *yh) == GS_SUCCESS);
      const int same = memcmp(yd, yh, n * sizeof *yd) == 0;
      CU_ASSERT(same);
      if (!same)
        fprintf(stderr, "  %s %s on %s: op %c of the device-built layout differs from the "
                "host-built one\n", name, options ? options : "", label, op ? 'T' : 'N');
    }
    free(yd);
    free(yh);
  }
  gs_spmv_destroy(&Sd);
  gs_spmv_destroy(&Sh);
}

/* One backend with options on one matrix: every op and alpha/beta case against the host; a
 * product flagged deterministic is run twice and must give the same bits. */
static void conform_one(gs_matrix_t *A, const char *name, const char *options,
                        const char *label, const double *x, const double *y0, double *y,
                        double *d_x, double *d_y)
{
  const gs_csr_t *M = gs_matrix_host(A);
  gs_spmv_t *S = NULL;
  gs_status_t st = gs_spmv_create(&S, ctx, A, name, options);
  if (wide && !(gs_spmv_backend_flags(gs_spmv_backend_find(name)) & GS_SPMV_FLAG_WIDE)) {
    /* a backend with 32-bit offsets refuses a wide matrix before preparing anything */
    CU_ASSERT_EQUAL(st, GS_ERR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(gs_last_error(), "2^31-1"));
    CU_ASSERT_PTR_NULL(S);
    gs_spmv_destroy(&S);
    return;
  }
  if (st == GS_ERR_FORMAT_FILL) return; /* a padded format may refuse; never a wrong answer */
  if (st != GS_SUCCESS) {
    fprintf(stderr, "  %s on %s: prepare failed: %s\n", name, label, gs_last_error());
    CU_FAIL("prepare failed");
    return;
  }
  gs_spmv_mem_t mem;
  CU_ASSERT(gs_spmv_memory(S, &mem) == GS_SUCCESS);
  CU_ASSERT(M->nnz == 0 || mem.device_bytes > 0);
  CU_ASSERT_EQUAL(gs_spmv_value_type(S), GS_VALUE_TYPE); /* vectors are gs_val_t */
  for (int op = 0; op < 2; ++op) {
    gs_idx_t len = op ? M->n : M->m;
    if (op == 1 && !gs_spmv_supports(S, GS_OP_T)) {
      CU_ASSERT(gs_spmv_apply(S, GS_OP_T, 1.0, d_x, 0.0, d_y) == GS_ERR_UNSUPPORTED);
      continue;
    }
    for (int c = 0; c < 3; ++c) {
      double alpha = cases[c][0], beta = cases[c][1];
      for (gs_idx_t i = 0; i < len; ++i) y[i] = beta == 0.0 ? NAN : y0[i];
      CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_y, y, (size_t)len * sizeof *y) == GS_SUCCESS);
      st = gs_spmv_apply(S, op ? GS_OP_T : GS_OP_N, alpha, d_x, beta, d_y);
      if (st == GS_SUCCESS) st = gs_context_sync(ctx);
      CU_ASSERT(st == GS_SUCCESS);
      if (st != GS_SUCCESS) {
        fprintf(stderr, "  %s on %s: apply failed: %s\n", name, label, gs_last_error());
        continue;
      }
      CU_ASSERT_FATAL(gs_copy_to_host(ctx, y, d_y, (size_t)len * sizeof *y) == GS_SUCCESS);
      CU_ASSERT(gs_test_spmv_ok(M, op ? GS_OP_T : GS_OP_N, alpha, x, beta, y0, y, "%s%s%s on %s",
                                name, options ? " " : "", options ? options : "", label));
      if (gs_spmv_caps(S) & (op ? GS_SPMV_CAP_DETERMINISTIC_T : GS_SPMV_CAP_DETERMINISTIC))
        CU_ASSERT(same_bits_again(S, op ? GS_OP_T : GS_OP_N, alpha, d_x, beta, d_y, y0, y, len,
                                  name, label));
    }
  }
  gs_spmv_destroy(&S);
  CU_ASSERT_PTR_NULL(S);
  device_vs_host_build(A, name, options, label, d_x, d_y);
}

/* Runs every backend on H; returns the number of failures (CUnit asserts record each). */
static void conform(const gs_csr_t *H, const char *label)
{
  gs_matrix_t *A = NULL;
  size_t base = gs_device_bytes_in_use(ctx);
  CU_ASSERT_FATAL(gs_matrix_create(&A, ctx, H) == GS_SUCCESS);
  CU_ASSERT_EQUAL(gs_matrix_wide(A), wide);
  const gs_csr_t *M = gs_matrix_host(A);
  size_t lx = (size_t)(M->m > M->n ? M->m : M->n) + 1;
  double *x = malloc(lx * sizeof *x), *y0 = malloc(lx * sizeof *y0), *y = malloc(lx * sizeof *y);
  double *d_x = NULL, *d_y = NULL;
  uint64_t s = gs_test_seed() ^ (uint64_t)M->nnz;
  for (size_t i = 0; i < lx; ++i) {
    x[i] = 2.0 * gs_test_uniform(&s) - 1.0;
    y0[i] = 2.0 * gs_test_uniform(&s) - 1.0;
  }
  CU_ASSERT_FATAL(gs_dmalloc(ctx, (void **)&d_x, lx * sizeof *d_x, "x") == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_dmalloc(ctx, (void **)&d_y, lx * sizeof *d_y, "y") == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_x, x, lx * sizeof *x) == GS_SUCCESS);
  for (int b = 0; b < gs_spmv_backend_count(); ++b) {
    const char *name = gs_spmv_backend_name(b);
    if (!tested(b)) continue;
    conform_one(A, name, NULL, label, x, y0, y, d_x, d_y);
  }
  /* csr-vector picks row blocks or plain groups from the matrix: run both paths everywhere;
   * HYB with forced ELL widths (all COO, and a narrow ELL part). */
  for (int w = 2; w <= 32 && selected("csr-vector"); w *= 4) {
    char o[64];
    snprintf(o, sizeof o, "csr-vector.width=%d", w);
    conform_one(A, "csr-vector", o, label, x, y0, y, d_x, d_y);
  }
  /* balanced (compressed) COO at every K and with the value table and floats off */
  static const char *const bccoo_opts[][2] = {{"bccoo", "bccoo.k=1"}, {"bccoo", "bccoo.k=8"},
                                              {"bccoo", "bccoo.lut=0,bccoo.f32=0"},
                                              {"bcoo", "bcoo.k=2"}};
  for (size_t i = 0; i < sizeof bccoo_opts / sizeof *bccoo_opts; ++i)
    if (gs_spmv_backend_find(bccoo_opts[i][0]) >= 0 && selected(bccoo_opts[i][0]))
      conform_one(A, bccoo_opts[i][0], bccoo_opts[i][1], label, x, y0, y, d_x, d_y);
  /* the merge path's other compiled items-per-thread (tiles of 640, 1152 and 1920 items) */
  static const char *const merge_opts[] = {"merge.ipt=5", "merge.ipt=9", "merge.ipt=15"};
  for (size_t i = 0; i < sizeof merge_opts / sizeof *merge_opts; ++i)
    if (gs_spmv_backend_find("merge") >= 0 && selected("merge"))
      conform_one(A, "merge", merge_opts[i], label, x, y0, y, d_x, d_y);
  /* hola: each compiled non-zeros-per-thread, op T in entry order and in row order (the
   * default takes row order only on large matrices of even rows), and op N's pipelined kernel
   * at each compiled stage count, on a grid of 2 or 3 blocks too, so that a block walks many
   * shares and every stage buffer and mbarrier phase is reused; op N's thread-owned loads
   * (hola.load=1) at both sizes, and the coalesced ones at 4 where large matrices default to
   * thread-owned */
  static const char *const hola_opts[] = {"hola.npt=4,hola.rows=0", "hola.npt=4,hola.rows=1",
                                          "hola.npt=8,hola.rows=0", "hola.npt=8,hola.rows=1",
                                          "hola.npt=16",
                                          "hola.npt=4,hola.pipe=2",
                                          "hola.npt=4,hola.pipe=3,hola.pgrid=2",
                                          "hola.npt=8,hola.pipe=2,hola.pgrid=3",
                                          "hola.npt=8,hola.pipe=3",
                                          "hola.npt=4,hola.load=1", "hola.npt=8,hola.load=1",
                                          "hola.npt=4,hola.load=0,hola.pipe=0"};
  for (size_t i = 0; i < sizeof hola_opts / sizeof *hola_opts; ++i)
    if (gs_spmv_backend_find("hola") >= 0 && selected("hola"))
      conform_one(A, "hola", hola_opts[i], label, x, y0, y, d_x, d_y);
  /* sellp: every reduction path of its kernel (several groups a warp, a warp a slice, a group
   * spanning warps with C < 32 and with C >= 32, 1024 threads, a warp a row), rows sorted and
   * not; a loose guard so that the irregular matrices reach the kernels too */
  static const char *const sellp_opts[] = {
      "sellp.c=32,sellp.t=1,sellp.sigma=1,sellp.max_fill=100",
      "sellp.c=2,sellp.t=4,sellp.sigma=8,sellp.max_fill=100",
      "sellp.c=8,sellp.t=8,sellp.sigma=64,sellp.max_fill=100",
      "sellp.c=64,sellp.t=4,sellp.sigma=1,sellp.max_fill=100",
      "sellp.c=32,sellp.t=32,sellp.sigma=1000,sellp.max_fill=100",
      "sellp.c=1,sellp.t=32,sellp.max_fill=100"};
  for (size_t i = 0; i < sizeof sellp_opts / sizeof *sellp_opts; ++i)
    if (gs_spmv_backend_find("sellp") >= 0 && selected("sellp"))
      conform_one(A, "sellp", sellp_opts[i], label, x, y0, y, d_x, d_y);
  if (gs_spmv_backend_find("hyb") >= 0 && selected("hyb")) {
    conform_one(A, "hyb", "hyb.k=0", label, x, y0, y, d_x, d_y);
    conform_one(A, "hyb", "hyb.k=2", label, x, y0, y, d_x, d_y);
  }
  gs_dfree(ctx, d_x);
  gs_dfree(ctx, d_y);
  gs_matrix_destroy(&A);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base); /* every backend gave back what it took */
  free(x);
  free(y0);
  free(y);
}

static gs_csr_t *from_coo_list(gs_idx_t m, gs_idx_t n, int cnt, const gs_idx_t *r,
                               const gs_idx_t *c, const double *v)
{
  gs_coo_t *C = NULL;
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_coo_create(&C, m, n, cnt) == GS_SUCCESS);
  for (int k = 0; k < cnt; ++k) CU_ASSERT_FATAL(gs_coo_push(C, r[k], c[k], v[k]) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
  gs_coo_destroy(&C);
  return A;
}

static void test_small_shapes(void)
{
  const gs_idx_t r1[] = {0}, c1[] = {0};
  const double v1[] = {3.0};
  gs_csr_t *A = from_coo_list(1, 1, 1, r1, c1, v1);
  conform(A, "1x1");
  gs_csr_destroy(&A);
  CU_ASSERT_FATAL(gs_csr_create(&A, 7, 5, 0) == GS_SUCCESS); /* nnz = 0 */
  conform(A, "7x5 empty");
  gs_csr_destroy(&A);
  const gs_idx_t r2[] = {0, 0, 3, 5}, c2[] = {0, 4, 2, 1};
  const double v2[] = {0.0, 0.0, 0.0, 0.0}; /* all-zero values, empty rows */
  A = from_coo_list(6, 5, 4, r2, c2, v2);
  conform(A, "all-zero values");
  gs_csr_destroy(&A);
}

static void test_random_rectangular(void)
{
  uint64_t s = gs_test_seed();
  const gs_idx_t shapes[][2] = {{300, 200}, {200, 300}, {1000, 1000}, {5000, 37}, {37, 5000}};
  for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; ++k) {
    double density = 0.02 + 0.1 * gs_test_uniform(&s);
    gs_csr_t *A = gs_test_random_csr(&s, shapes[k][0], shapes[k][1], density);
    CU_ASSERT_FATAL(A != NULL);
    char label[64];
    snprintf(label, sizeof label, "random %dx%d", shapes[k][0], shapes[k][1]);
    conform(A, label);
    gs_csr_destroy(&A);
  }
}

static void test_one_long_row(void)
{
  /* 2000 rows of 3 entries and one row holding 100k nonzeros. */
  const gs_idx_t m = 2000, n = 120000;
  uint64_t s = gs_test_seed() + 1;
  gs_coo_t *C = NULL;
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_coo_create(&C, m, n, 110000) == GS_SUCCESS);
  for (gs_idx_t j = 0; j < 100000; ++j) gs_coo_push(C, 17, j, 2.0 * gs_test_uniform(&s) - 1.0);
  for (gs_idx_t i = 0; i < m; ++i)
    for (int k = 0; k < 3; ++k)
      if (i != 17) gs_coo_push(C, i, (gs_idx_t)(gs_test_uniform(&s) * n), 1.0);
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
  conform(A, "one row of 100k");
  gs_coo_destroy(&C);
  gs_csr_destroy(&A);
}

/* ---- row structures that stress how a kernel divides rows among threads, warps, blocks ------- */

/* Random value in [-1, 1). */
static double value(uint64_t *s) { return 2.0 * gs_test_uniform(s) - 1.0; }

/* (a) One row longer than any thread block's share: row 0 of a 1000 x 20000 matrix holds all
 * 20000 columns, the last row one entry, the rows between are empty. */
static gs_csr_t *build_one_row_holds_all(uint64_t *s)
{
  const gs_idx_t m = 1000, n = 20000;
  gs_coo_t *C = NULL;
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_coo_create(&C, m, n, n + 1) == GS_SUCCESS);
  for (gs_idx_t j = 0; j < n; ++j) CU_ASSERT_FATAL(gs_coo_push(C, 0, j, value(s)) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_coo_push(C, m - 1, n / 2, value(s)) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
  gs_coo_destroy(&C);
  return A;
}

/* Row `row` of C gets `len` entries of random values at the consecutive columns start,
 * start + 1, ... (mod n). */
static void push_run(gs_coo_t *C, uint64_t *s, gs_idx_t row, gs_idx_t start, gs_idx_t len,
                     gs_idx_t n)
{
  for (gs_idx_t t = 0; t < len; ++t)
    CU_ASSERT_FATAL(gs_coo_push(C, row, (start + t) % n, value(s)) == GS_SUCCESS);
}

/* (b) Every row empty but one, of `len` entries at random distinct columns. */
static gs_csr_t *build_one_nonempty_row(uint64_t *s, gs_idx_t m, gs_idx_t n, gs_idx_t row,
                                        gs_idx_t len)
{
  gs_coo_t *C = NULL;
  gs_csr_t *A = NULL;
  const gs_idx_t start = (gs_idx_t)(gs_test_uniform(s) * n);
  CU_ASSERT_FATAL(len <= n);
  CU_ASSERT_FATAL(gs_coo_create(&C, m, n, len) == GS_SUCCESS);
  push_run(C, s, row, start, len, n);
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
  gs_coo_destroy(&C);
  return A;
}

/* (c) Short rows (1 to 5 entries) separated by runs of 300 to 5000 empty rows, so that empty
 * stretches start and end at random places against every block and row-block boundary. */
static gs_csr_t *build_empty_runs(uint64_t *s, gs_idx_t m, gs_idx_t n)
{
  gs_coo_t *C = NULL;
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_coo_create(&C, m, n, 1024) == GS_SUCCESS);
  for (gs_idx_t i = (gs_idx_t)(gs_test_uniform(s) * 300); i < m;) {
    const gs_idx_t len = 1 + (gs_idx_t)(gs_test_uniform(s) * 5);
    const gs_idx_t start = (gs_idx_t)(gs_test_uniform(s) * n);
    push_run(C, s, i, start, len, n);
    i += 1 + 300 + (gs_idx_t)(gs_test_uniform(s) * 4701); /* then 300..5000 empty rows */
  }
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
  gs_coo_destroy(&C);
  return A;
}

/* (c') m x n, row i empty with probability 1/4 and in [run, run + len), else (i mod 6) + 1
 * entries at consecutive columns from a random start. */
static gs_csr_t *build_scattered_empty_rows(uint64_t *s, gs_idx_t m, gs_idx_t n, gs_idx_t run,
                                            gs_idx_t len)
{
  gs_coo_t *C = NULL;
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(n >= 6);
  CU_ASSERT_FATAL(gs_coo_create(&C, m, n, (gs_off_t)m * 6) == GS_SUCCESS);
  for (gs_idx_t i = 0; i < m; ++i) {
    if ((i >= run && i < run + len) || gs_test_uniform(s) < 0.25) continue;
    const gs_idx_t cnt = i % 6 + 1, start = (gs_idx_t)(gs_test_uniform(s) * n);
    push_run(C, s, i, start, cnt, n);
  }
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
  gs_coo_destroy(&C);
  return A;
}

/* (d) Row i holds (i mod 64) + 1 entries: a sawtooth of 1 to 64 over many rows, so every row
 * length from one entry to two warps' worth meets every lane and block offset. */
static gs_csr_t *build_sawtooth(uint64_t *s, gs_idx_t m, gs_idx_t n)
{
  gs_coo_t *C = NULL;
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(n >= 64);
  CU_ASSERT_FATAL(gs_coo_create(&C, m, n, (gs_off_t)m * 33) == GS_SUCCESS);
  for (gs_idx_t i = 0; i < m; ++i) {
    const gs_idx_t len = i % 64 + 1, start = (gs_idx_t)(gs_test_uniform(s) * n);
    push_run(C, s, i, start, len, n);
  }
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
  gs_coo_destroy(&C);
  return A;
}

/* (e) A 1 x n row with every `stride`-th column filled (stride 1: dense). */
static gs_csr_t *build_one_row(uint64_t *s, gs_idx_t n, gs_idx_t stride)
{
  gs_coo_t *C = NULL;
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_coo_create(&C, 1, n, n / stride + 1) == GS_SUCCESS);
  for (gs_idx_t j = 0; j < n; j += stride)
    CU_ASSERT_FATAL(gs_coo_push(C, 0, j, value(s)) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
  gs_coo_destroy(&C);
  return A;
}

static void test_row_longer_than_block(void)
{
  uint64_t s = gs_test_seed() ^ 0xa11;
  gs_csr_t *A = build_one_row_holds_all(&s);
  conform(A, "row 0 holds all 20000 columns, one entry in the last row");
  gs_csr_destroy(&A);
}

static void test_one_nonempty_row(void)
{
  uint64_t s = gs_test_seed() ^ 0xb22;
  const gs_idx_t m = 4000, n = 3000;
  const gs_idx_t rows[] = {0, 2047, m - 1}, lens[] = {1, 700};
  for (size_t r = 0; r < sizeof rows / sizeof rows[0]; ++r)
    for (size_t l = 0; l < sizeof lens / sizeof lens[0]; ++l) {
      gs_csr_t *A = build_one_nonempty_row(&s, m, n, rows[r], lens[l]);
      char label[96];
      snprintf(label, sizeof label, "4000x3000, only row %d non-empty (%d entries)", rows[r],
               lens[l]);
      conform(A, label);
      gs_csr_destroy(&A);
    }
}

static void test_empty_row_runs(void)
{
  const uint64_t seed = gs_test_seed();
  uint64_t s = seed ^ 0xc33;
  const gs_idx_t shapes[][2] = {{60000, 2000}, {150000, 40}};
  for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; ++k) {
    gs_csr_t *A = build_empty_runs(&s, shapes[k][0], shapes[k][1]);
    char label[128];
    snprintf(label, sizeof label, "%dx%d, runs of 300-5000 empty rows (seed %llu)",
             shapes[k][0], shapes[k][1], (unsigned long long)seed);
    conform(A, label);
    gs_csr_destroy(&A);
  }
}

static void test_sawtooth_rows(void)
{
  uint64_t s = gs_test_seed() ^ 0xd44;
  const gs_idx_t shapes[][2] = {{20000, 5000}, {3000, 64}};
  for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; ++k) {
    gs_csr_t *A = build_sawtooth(&s, shapes[k][0], shapes[k][1]);
    char label[96];
    snprintf(label, sizeof label, "%dx%d, row lengths 1..64 sawtooth", shapes[k][0],
             shapes[k][1]);
    conform(A, label);
    gs_csr_destroy(&A);
  }
}

/* A 1-row matrix and its transpose, a 1-column matrix: op T of each is op N of the other. */
static void test_one_row_one_column(void)
{
  uint64_t s = gs_test_seed() ^ 0xe55;
  const gs_idx_t strides[] = {1, 7};
  for (size_t k = 0; k < sizeof strides / sizeof strides[0]; ++k) {
    gs_csr_t *R = build_one_row(&s, 5000, strides[k]), *T = NULL;
    CU_ASSERT_FATAL(gs_csr_transpose(&T, R) == GS_SUCCESS);
    CU_ASSERT_FATAL(T->m == 5000 && T->n == 1 && T->nnz == R->nnz);
    char label[96];
    snprintf(label, sizeof label, "1x5000, column stride %d", strides[k]);
    conform(R, label);
    snprintf(label, sizeof label, "5000x1, its transpose (row stride %d)", strides[k]);
    conform(T, label);
    gs_csr_destroy(&T);
    gs_csr_destroy(&R);
  }
}

static void test_row_structures(void)
{
  test_row_longer_than_block();
  test_one_nonempty_row();
  test_empty_row_runs();
  test_sawtooth_rows();
  test_one_row_one_column();
}

/* hola's automatic op N: on a large matrix the thread-owned loads at 4 non-zeros per thread
 * (op T keeping the rule's 8 on the banded one, with row order), on a large banded matrix
 * with the coalesced loads asked for (hola.load=0) the pipeline, on a small one the coalesced
 * loads; an explicit hola.load=1 refused with the pipeline or 16 non-zeros a thread; all agree
 * with the host. */
static void test_hola_auto_variants(void)
{
  if (gs_spmv_backend_find("hola") < 0 || !selected("hola")) return;
  gs_csr_t *H[3] = {NULL, NULL, NULL};
  CU_ASSERT_FATAL(gs_gen_laplace(&H[0], 40, 40, 40, 27) == GS_SUCCESS); /* 1.7M entries */
  CU_ASSERT_FATAL(gs_gen_normal(&H[1], 80000, 22, 1e4, gs_test_seed()) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_gen_laplace(&H[2], 30, 30, 1, 5) == GS_SUCCESS); /* 4.4k entries */
  static const struct {
    int k;
    const char *opts, *has[3], *lacks;
  } cases[] = {
      {0, NULL, {"op N: 4 non-zeros per thread", "thread-owned loads",
                 "op T: 8 non-zeros per thread, atomics in row"}, "pipelined"},
      {0, "hola.load=0", {"op N: 4 non-zeros per thread", "pipelined (values and columns",
                          "op T: 8 non-zeros per thread, atomics in row"}, "thread-owned"},
      {1, NULL, {"op N: 4 non-zeros per thread", "thread-owned loads", NULL}, "pipelined"},
      {1, "hola.npt=8", {"op N: 8 non-zeros per thread", "coalesced loads", NULL}, "pipelined"},
      {2, NULL, {"op N: 4 non-zeros per thread", "coalesced loads", NULL}, "pipelined"},
      {2, "hola.load=1", {"op N: 4 non-zeros per thread", "thread-owned loads", NULL}, NULL}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; ++c) {
    gs_matrix_t *A = NULL;
    gs_spmv_t *S = NULL;
    CU_ASSERT_FATAL(gs_matrix_create(&A, ctx, H[cases[c].k]) == GS_SUCCESS);
    CU_ASSERT_FATAL(gs_spmv_create(&S, ctx, A, "hola", cases[c].opts) == GS_SUCCESS);
    const char *desc = gs_spmv_describe(S);
    for (int i = 0; i < 3; ++i)
      if (cases[c].has[i] && !strstr(desc, cases[c].has[i])) {
        CU_FAIL("hola's describe lacks an expected choice");
        printf("case %zu: '%s' not in '%s'\n", c, cases[c].has[i], desc);
      }
    if (cases[c].lacks) CU_ASSERT_PTR_NULL(strstr(desc, cases[c].lacks));
    gs_spmv_destroy(&S);
    /* thread-owned loads refused where they cannot run */
    static const char *const bad[] = {"hola.load=1,hola.pipe=2", "hola.load=1,hola.npt=16"};
    for (int i = 0; i < 2 && c == 0; ++i) {
      CU_ASSERT_EQUAL(gs_spmv_create(&S, ctx, A, "hola", bad[i]), GS_ERR_UNSUPPORTED);
      CU_ASSERT_PTR_NULL(S);
    }
    gs_matrix_destroy(&A);
  }
  const char *was = only;
  only = "hola"; /* the other backends see this matrix's kind in test_laplacians */
  conform(H[0], "laplace 27-pt 40^3 (hola's thread-owned loads by default)");
  only = was;
  for (int k = 0; k < 3; ++k) gs_csr_destroy(&H[k]);
}

static void test_laplacians(void)
{
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_gen_laplace(&A, 30, 30, 30, 27) == GS_SUCCESS);
  conform(A, "laplace 27-pt 30^3");
  gs_csr_destroy(&A);
  CU_ASSERT_FATAL(gs_gen_laplace(&A, 200, 150, 1, 5) == GS_SUCCESS);
  conform(A, "laplace 5-pt 200x150");
  gs_csr_destroy(&A);
}

/* The 64-bit-offset kernels (what a matrix of more than 2^31-1 entries runs, test_spmv_rules
 * "more than 2^31 entries") on the small cases: every path of csr-scalar and csr-vector (plain
 * groups, row blocks, long-row chunks) with int64 row pointers, and the refusal of every
 * backend without them. */
static void test_wide_offsets(void)
{
  gs_test_wide_offsets(ctx, 1);
  wide = 1;
  test_small_shapes();
  test_random_rectangular();
  test_one_long_row();
  test_laplacians();
  test_row_structures();
  wide = 0;
  gs_test_wide_offsets(ctx, 0);
}

static void test_real_matrices(void)
{
  if (!gs_test_have_matrices()) return;
  for (int k = 0; gs_test_matrix_names[k]; ++k) {
    if (!gs_test_have_matrix(gs_test_matrix_names[k])) continue;
    gs_csr_t *A = NULL;
    gs_status_t st = gs_mm_read_csr(gs_test_matrix(gs_test_matrix_names[k]), &A);
    CU_ASSERT(st == GS_SUCCESS);
    if (st != GS_SUCCESS) {
      fprintf(stderr, "  cannot read %s: %s\n", gs_test_matrix_names[k], gs_last_error());
      continue;
    }
    conform(A, gs_test_matrix_names[k]);
    gs_csr_destroy(&A);
  }
}

/* 3000 x 9000: row 5 holds all 9000 columns, every other row one random entry. */
static gs_csr_t *build_long_row_9000(uint64_t *s)
{
  gs_coo_t *C = NULL;
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_coo_create(&C, 3000, 9000, 9000 + 3000) == GS_SUCCESS);
  for (gs_idx_t j = 0; j < 9000; ++j) gs_coo_push(C, 5, j, 2.0 * gs_test_uniform(s) - 1.0);
  for (gs_idx_t i = 0; i < 3000; ++i)
    if (i != 5) gs_coo_push(C, i, (gs_idx_t)(gs_test_uniform(s) * 9000), gs_test_uniform(s));
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
  gs_coo_destroy(&C);
  return A;
}

static int cmp_double(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The number of distinct values among H's entries (bit patterns aside: -0 and +0 count once). */
static gs_off_t distinct_values(const gs_csr_t *H)
{
  if (H->nnz == 0) return 0;
  double *v = malloc((size_t)H->nnz * sizeof *v);
  CU_ASSERT_FATAL(v != NULL);
  memcpy(v, H->val, (size_t)H->nnz * sizeof *v);
  qsort(v, (size_t)H->nnz, sizeof *v, cmp_double);
  gs_off_t d = 1;
  for (gs_off_t i = 1; i < H->nnz; ++i) d += v[i] != v[i - 1];
  free(v);
  return d;
}

/* Backend `name` prepared in precision `prec` ("mixed", "float") with its own options (or
 * NULL), the option string written to opts. NULL when it is refused: a backend without `flag`
 * must refuse with GS_ERR_UNSUPPORTED naming itself and the precision, preparing nothing; a
 * padded format may refuse for fill. Any other failure is fatal. */
static gs_spmv_t *prepare_in(gs_matrix_t *A, const char *name, const char *options,
                             const char *prec, unsigned flag, const char *label, char *opts,
                             size_t len)
{
  gs_spmv_t *S = NULL;
  snprintf(opts, len, "%s%sprecision=%s", options ? options : "", options ? "," : "", prec);
  const gs_status_t rc = gs_spmv_create(&S, ctx, A, name, opts);
  if (!(gs_spmv_backend_flags(gs_spmv_backend_find(name)) & flag)) {
    CU_ASSERT_EQUAL(rc, GS_ERR_UNSUPPORTED);
    CU_ASSERT(strstr(gs_last_error(), name) != NULL && strstr(gs_last_error(), prec) != NULL);
    CU_ASSERT_PTR_NULL(S);
    return NULL;
  }
  if (rc == GS_ERR_FORMAT_FILL) return NULL;
  if (rc != GS_SUCCESS) fprintf(stderr, "  %s %s on %s: %s\n", name, opts, label, gs_last_error());
  CU_ASSERT_EQUAL_FATAL(rc, GS_SUCCESS);
  return S;
}

/* One backend in mixed precision on A (options: the backend's own, or NULL): ops N and T, three
 * (alpha, beta) with y = NaN for beta = 0, against the double host product within the bound of
 * values rounded to float (gs_test_spmv_compare_u), and against the product of Hf, A's values
 * rounded to float, within the double product's own bound (gpusolve/spmv.h: a mixed product is
 * that of fl32(A); a kernel that read the double values instead is off by ~2^-24 of each term,
 * which the first check alone would let pass); a smaller byte model than its double instance
 * with the same options; "mixed" in its description. A backend without the flag is refused
 * with GS_ERR_UNSUPPORTED naming it, and prepares nothing. */
static void mixed_one(gs_matrix_t *A, const gs_csr_t *Hf, const char *name, const char *options,
                      const char *label, const double *x, const double *y0, double *y,
                      double *d_x, double *d_y)
{
  const gs_csr_t *H = gs_matrix_host(A);
  gs_spmv_t *D = NULL;
  char opts[256];
  gs_spmv_t *S = prepare_in(A, name, options, "mixed", GS_SPMV_FLAG_MIXED, label, opts, sizeof opts);
  if (!S) return;
  CU_ASSERT_EQUAL(gs_spmv_precision(S), GS_PRECISION_MIXED);
  CU_ASSERT_EQUAL(gs_spmv_value_type(S), GS_VALUE_DOUBLE); /* the vectors */
  CU_ASSERT(strstr(gs_spmv_describe(S), "mixed") != NULL);
  gs_spmv_mem_t mm, md;
  CU_ASSERT_FATAL(gs_spmv_create(&D, ctx, A, name, options) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_spmv_memory(S, &mm) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_spmv_memory(D, &md) == GS_SUCCESS);
  if (H->nnz > 0) {
    /* bccoo's double layout stores 1-byte table indices alone when the matrix has at most 256
     * distinct values (its table holds them all): mixed cannot move fewer bytes then. With
     * more, some value is outside the table and its chunk stores doubles (floats in mixed). */
    const int ok = !strcmp(name, "bccoo") && distinct_values(H) <= 256
                       ? mm.bytes_per_apply <= md.bytes_per_apply
                       : mm.bytes_per_apply < md.bytes_per_apply;
    CU_ASSERT(ok);
    if (!ok)
      fprintf(stderr, "  %s %s on %s: %zu bytes a product, %zu in double\n", name, opts, label,
              mm.bytes_per_apply, md.bytes_per_apply);
  }
  gs_spmv_destroy(&D);
  static const double ab[][2] = {{1.0, 0.0}, {-1.0, 1.0}, {2.5, -0.5}};
  for (int op = 0; op < 2; ++op) {
    if (op && !gs_spmv_supports(S, GS_OP_T)) break;
    const gs_idx_t len = op ? H->n : H->m;
    for (size_t c = 0; c < sizeof ab / sizeof ab[0]; ++c) {
      for (gs_idx_t i = 0; i < len; ++i) y[i] = ab[c][1] == 0.0 ? NAN : y0[i];
      CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_y, y, (size_t)len * sizeof *y) == GS_SUCCESS);
      CU_ASSERT_FATAL(gs_spmv_apply(S, op ? GS_OP_T : GS_OP_N, ab[c][0], d_x, ab[c][1], d_y) ==
                      GS_SUCCESS);
      CU_ASSERT_FATAL(gs_copy_to_host(ctx, y, d_y, (size_t)len * sizeof *y) == GS_SUCCESS);
      char lab[384];
      snprintf(lab, sizeof lab, "%s %s on %s", name, opts, label);
      CU_ASSERT(gs_test_spmv_ok_u(H, op ? GS_OP_T : GS_OP_N, ab[c][0], x, ab[c][1], y0, y,
                                  GS_PRECISION_MIXED_U, lab));
      CU_ASSERT(gs_test_spmv_ok(Hf, op ? GS_OP_T : GS_OP_N, ab[c][0], x, ab[c][1], y0, y,
                                "%s, against the rounded values", lab));
    }
  }
  gs_spmv_destroy(&S);
}

/* precision=mixed on the device: every backend (GS_TEST_BACKENDS and GS_TEST_NO_VENDOR
 * honoured) through mixed_one; then the kernel paths the defaults may not reach: sellp's
 * reduction shapes (a group spanning warps with C < 32 and with C >= 32, 1024 threads, rows
 * sorted), bccoo's and bcoo's K and bccoo without its table, hola's non-zeros per thread (op N
 * and op T's entry and row orders; 16 has no row order) and its pipelined op N at both stage
 * counts, on grids of 2 and 3 blocks too (every stage and mbarrier phase reused). */
static void mixed_on(const gs_csr_t *H, const char *label)
{
  gs_matrix_t *A = NULL;
  gs_csr_t *Hf = NULL;
  size_t base = gs_device_bytes_in_use(ctx);
  CU_ASSERT_FATAL(gs_matrix_create(&A, ctx, H) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_csr_copy(&Hf, H) == GS_SUCCESS);
  for (gs_off_t p = 0; p < Hf->nnz; ++p) Hf->val[p] = (double)(float)Hf->val[p];
  const size_t lx = (size_t)(H->m > H->n ? H->m : H->n) + 1;
  double *x = malloc(lx * sizeof *x), *y0 = malloc(lx * sizeof *y0), *y = malloc(lx * sizeof *y);
  double *d_x = NULL, *d_y = NULL;
  uint64_t st = gs_test_seed() ^ 0x9e3779b97f4a7c15ull ^ (uint64_t)H->nnz;
  CU_ASSERT_FATAL(x && y0 && y);
  for (size_t i = 0; i < lx; ++i) {
    x[i] = 2.0 * gs_test_uniform(&st) - 1.0;
    y0[i] = 2.0 * gs_test_uniform(&st) - 1.0;
  }
  CU_ASSERT_FATAL(gs_dmalloc(ctx, (void **)&d_x, lx * sizeof *d_x, "x") == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_dmalloc(ctx, (void **)&d_y, lx * sizeof *d_y, "y") == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_x, x, lx * sizeof *x) == GS_SUCCESS);
  for (int b = 0; b < gs_spmv_backend_count(); ++b) {
    const char *name = gs_spmv_backend_name(b);
    if (!tested(b)) continue;
    mixed_one(A, Hf, name, NULL, label, x, y0, y, d_x, d_y);
  }
  static const char *const variants[][2] = {
      {"sellp", "sellp.c=2,sellp.t=4,sellp.sigma=8,sellp.max_fill=100"},
      {"sellp", "sellp.c=8,sellp.t=8,sellp.sigma=64,sellp.max_fill=100"},
      {"sellp", "sellp.c=64,sellp.t=4,sellp.sigma=1,sellp.max_fill=100"},
      {"sellp", "sellp.c=32,sellp.t=32,sellp.sigma=1000,sellp.max_fill=100"},
      {"bccoo", "bccoo.k=1"},
      {"bccoo", "bccoo.k=8"},
      {"bccoo", "bccoo.lut=0"},
      {"bcoo", "bcoo.k=1"},
      {"bcoo", "bcoo.k=8"},
      {"hola", "hola.npt=4,hola.rows=0"},
      {"hola", "hola.npt=4,hola.rows=1"},
      {"hola", "hola.npt=8,hola.rows=0"},
      {"hola", "hola.npt=8,hola.rows=1"},
      {"hola", "hola.npt=16"},
      {"hola", "hola.npt=4,hola.pipe=2"},
      {"hola", "hola.npt=4,hola.pipe=3,hola.pgrid=2"},
      {"hola", "hola.npt=8,hola.pipe=2,hola.pgrid=3"},
      {"hola", "hola.npt=8,hola.pipe=3"},
      {"hola", "hola.npt=4,hola.load=1"},
      {"hola", "hola.npt=8,hola.load=1"}};
  for (size_t i = 0; i < sizeof variants / sizeof *variants; ++i)
    if (gs_spmv_backend_find(variants[i][0]) >= 0 && selected(variants[i][0]))
      mixed_one(A, Hf, variants[i][0], variants[i][1], label, x, y0, y, d_x, d_y);
  gs_dfree(ctx, d_x);
  gs_dfree(ctx, d_y);
  free(x);
  free(y0);
  free(y);
  gs_csr_destroy(&Hf);
  gs_matrix_destroy(&A);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base); /* every backend gave back what it took */
}

static void test_mixed_precision(void)
{
  uint64_t s = gs_test_seed() ^ 0x5bd1e995u;
  gs_csr_t *A = gs_test_random_csr(&s, 1000, 700, 0.03); /* random values: not floats */
  CU_ASSERT_FATAL(A != NULL);
  mixed_on(A, "random 1000x700");
  gs_csr_destroy(&A);
  CU_ASSERT_FATAL(gs_gen_laplace(&A, 30, 30, 30, 27) == GS_SUCCESS); /* csr-vector row blocks */
  for (gs_off_t p = 0; p < A->nnz; ++p) A->val[p] *= 1.0 + 0.1 * gs_test_uniform(&s);
  mixed_on(A, "laplace 27-pt 30^3, perturbed values");
  gs_csr_destroy(&A);
  /* values that differ below float's precision: 26 and -1 once rounded, so bccoo's mixed
   * layout is all table indices where its double layout stores doubles */
  CU_ASSERT_FATAL(gs_gen_laplace(&A, 24, 24, 24, 27) == GS_SUCCESS);
  for (gs_off_t p = 0; p < A->nnz; ++p) A->val[p] += A->val[p] * 0x1p-40 * gs_test_uniform(&s);
  mixed_on(A, "laplace 27-pt 24^3, values 26 and -1 perturbed by 2^-40");
  gs_csr_destroy(&A);
  A = build_long_row_9000(&s); /* csr-vector's long-row chunks (atomics), hyb's COO tail */
  mixed_on(A, "one row of 9000 entries");
  gs_csr_destroy(&A);
  /* empty rows: single ones between short rows (hola's warps flagged for empty rows, which
   * find a row by search), and a run of 6000 (the block before it owns more rows than its
   * output buffer has slots at any npt: hola's many-empty-rows mode, sums by atomics into y) */
  A = build_scattered_empty_rows(&s, 20000, 3000, 8000, 6000);
  mixed_on(A, "20000x3000, 1-6 entries or empty, rows 8000-13999 empty");
  gs_csr_destroy(&A);
  A = build_empty_runs(&s, 60000, 2000);
  mixed_on(A, "60000x2000, runs of 300-5000 empty rows");
  gs_csr_destroy(&A);
}

/* One backend in float precision on A (options: the backend's own, or NULL): ops N and T,
 * three (alpha, beta) with y = NaN for beta = 0, against the double product of the values
 * rounded to float within the bound of float arithmetic (gs_test_spmv_compare_float); float
 * vectors (GS_VALUE_FLOAT), gs_spmv_apply refused; a smaller byte model than its mixed (or,
 * without mixed, double) instance with the same options: 4-byte vectors; "float" in its
 * description; an operator refused. A backend without the flag is refused with
 * GS_ERR_UNSUPPORTED naming it, and prepares nothing. */
static void float_one(gs_matrix_t *A, const char *name, const char *options, const char *label,
                      const float *x, const float *y0, float *y, float *d_x, float *d_y)
{
  const gs_csr_t *H = gs_matrix_host(A);
  const unsigned flags = gs_spmv_backend_flags(gs_spmv_backend_find(name));
  gs_spmv_t *D = NULL;
  char opts[256], other[256];
  gs_spmv_t *S = prepare_in(A, name, options, "float", GS_SPMV_FLAG_FLOAT, label, opts, sizeof opts);
  if (!S) return;
  CU_ASSERT_EQUAL(gs_spmv_precision(S), GS_PRECISION_FLOAT);
  CU_ASSERT_EQUAL(gs_spmv_value_type(S), GS_VALUE_FLOAT);
  CU_ASSERT(strstr(gs_spmv_describe(S), "float precision") != NULL);
  /* double vectors are refused: the product's are float */
  CU_ASSERT_EQUAL(gs_spmv_apply(S, GS_OP_N, 1.0, (const double *)d_x, 0.0, (double *)d_y),
                  GS_ERR_INVALID_ARG);
  CU_ASSERT(strstr(gs_last_error(), "gs_spmv_apply_float") != NULL);
  gs_operator_t *op = NULL;
  CU_ASSERT_EQUAL(gs_operator_from_spmv(&op, S), GS_ERR_UNSUPPORTED);
  CU_ASSERT_PTR_NULL(op);
  gs_spmv_mem_t mf, mo;
  snprintf(other, sizeof other, "%s%s%s", options ? options : "", options ? "," : "",
           (flags & GS_SPMV_FLAG_MIXED) ? "precision=mixed" : "precision=double");
  CU_ASSERT_FATAL(gs_spmv_create(&D, ctx, A, name, other) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_spmv_memory(S, &mf) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_spmv_memory(D, &mo) == GS_SUCCESS);
  if (H->m + H->n > 0) CU_ASSERT(mf.bytes_per_apply < mo.bytes_per_apply);
  if (H->m + H->n > 0 && gs_spmv_supports(S, GS_OP_T))
    CU_ASSERT(mf.bytes_per_apply_t < mo.bytes_per_apply_t);
  gs_spmv_destroy(&D);
  static const float ab[][2] = {{1.0f, 0.0f}, {-1.0f, 1.0f}, {2.5f, -0.5f}};
  for (int o = 0; o < 2; ++o) {
    if (o && !gs_spmv_supports(S, GS_OP_T)) {
      CU_ASSERT_EQUAL(gs_spmv_apply_float(S, GS_OP_T, 1.0f, d_x, 0.0f, d_y), GS_ERR_UNSUPPORTED);
      break;
    }
    const gs_idx_t len = o ? H->n : H->m;
    for (size_t c = 0; c < sizeof ab / sizeof ab[0]; ++c) {
      for (gs_idx_t i = 0; i < len; ++i) y[i] = ab[c][1] == 0.0f ? NAN : y0[i];
      CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_y, y, (size_t)len * sizeof *y) == GS_SUCCESS);
      gs_status_t rc =
          gs_spmv_apply_float(S, o ? GS_OP_T : GS_OP_N, ab[c][0], d_x, ab[c][1], d_y);
      if (rc == GS_SUCCESS) rc = gs_context_sync(ctx);
      if (rc != GS_SUCCESS) fprintf(stderr, "  %s %s on %s: %s\n", name, opts, label,
                                    gs_last_error());
      CU_ASSERT_FATAL(rc == GS_SUCCESS);
      CU_ASSERT_FATAL(gs_copy_to_host(ctx, y, d_y, (size_t)len * sizeof *y) == GS_SUCCESS);
      char lab[384];
      snprintf(lab, sizeof lab, "%s %s on %s", name, opts, label);
      CU_ASSERT(gs_test_spmv_ok_float(H, o ? GS_OP_T : GS_OP_N, ab[c][0], x, ab[c][1], y0, y,
                                      lab));
    }
  }
  gs_spmv_destroy(&S);
}

/* precision=float on the device: every backend (GS_TEST_BACKENDS and GS_TEST_NO_VENDOR
 * honoured) through float_one, x and y drawn in float from this run's seed; then the kernel
 * paths the defaults may not reach: csr-vector's plain groups of each width next to its row
 * blocks, hyb all COO and with a narrow ELL part, sellp's reduction shapes (a group spanning
 * warps with C < 32 and with C >= 32, 1024 threads, a warp a row, rows sorted), and as in the
 * mixed part bccoo's and bcoo's K (bccoo's 16 and 32 too) and bccoo without its table, hola's
 * non-zeros per thread (op N and op T's entry and row orders; 16 has no row order) and its
 * pipelined op N at both stage counts, on grids of 2 and 3 blocks too. */
static void float_on(const gs_csr_t *H, const char *label)
{
  gs_matrix_t *A = NULL;
  size_t base = gs_device_bytes_in_use(ctx);
  CU_ASSERT_FATAL(gs_matrix_create(&A, ctx, H) == GS_SUCCESS);
  const size_t lx = (size_t)(H->m > H->n ? H->m : H->n) + 1;
  float *x = malloc(lx * sizeof *x), *y0 = malloc(lx * sizeof *y0), *y = malloc(lx * sizeof *y);
  float *d_x = NULL, *d_y = NULL;
  uint64_t st = gs_test_seed() ^ 0x85ebca6bull ^ (uint64_t)H->nnz;
  CU_ASSERT_FATAL(x && y0 && y);
  for (size_t i = 0; i < lx; ++i) {
    x[i] = (float)(2.0 * gs_test_uniform(&st) - 1.0);
    y0[i] = (float)(2.0 * gs_test_uniform(&st) - 1.0);
  }
  CU_ASSERT_FATAL(gs_dmalloc(ctx, (void **)&d_x, lx * sizeof *d_x, "x") == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_dmalloc(ctx, (void **)&d_y, lx * sizeof *d_y, "y") == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_x, x, lx * sizeof *x) == GS_SUCCESS);
  for (int b = 0; b < gs_spmv_backend_count(); ++b) {
    const char *name = gs_spmv_backend_name(b);
    if (!tested(b)) continue;
    float_one(A, name, NULL, label, x, y0, y, d_x, d_y);
  }
  static const char *const variants[][2] = {
      {"csr-vector", "csr-vector.width=1"},
      {"csr-vector", "csr-vector.width=2"},
      {"csr-vector", "csr-vector.width=8"},
      {"csr-vector", "csr-vector.width=32"},
      {"hyb", "hyb.k=0"},
      {"hyb", "hyb.k=2"},
      {"sellp", "sellp.c=32,sellp.t=1,sellp.sigma=1,sellp.max_fill=100"},
      {"sellp", "sellp.c=2,sellp.t=4,sellp.sigma=8,sellp.max_fill=100"},
      {"sellp", "sellp.c=8,sellp.t=8,sellp.sigma=64,sellp.max_fill=100"},
      {"sellp", "sellp.c=64,sellp.t=4,sellp.sigma=1,sellp.max_fill=100"},
      {"sellp", "sellp.c=32,sellp.t=32,sellp.sigma=1000,sellp.max_fill=100"},
      {"sellp", "sellp.c=1,sellp.t=32,sellp.max_fill=100"},
      {"bccoo", "bccoo.k=1"},
      {"bccoo", "bccoo.k=8"},
      {"bccoo", "bccoo.k=16"},
      {"bccoo", "bccoo.k=32"},
      {"bccoo", "bccoo.lut=0"},
      {"bcoo", "bcoo.k=1"},
      {"bcoo", "bcoo.k=8"},
      {"hola", "hola.npt=4,hola.rows=0"},
      {"hola", "hola.npt=4,hola.rows=1"},
      {"hola", "hola.npt=8,hola.rows=0"},
      {"hola", "hola.npt=8,hola.rows=1"},
      {"hola", "hola.npt=16"},
      {"hola", "hola.npt=4,hola.pipe=2"},
      {"hola", "hola.npt=4,hola.pipe=3,hola.pgrid=2"},
      {"hola", "hola.npt=8,hola.pipe=2,hola.pgrid=3"},
      {"hola", "hola.npt=8,hola.pipe=3"},
      {"hola", "hola.npt=4,hola.load=1"},
      {"hola", "hola.npt=8,hola.load=1"}};
  for (size_t i = 0; i < sizeof variants / sizeof *variants; ++i)
    if (gs_spmv_backend_find(variants[i][0]) >= 0 && selected(variants[i][0]))
      float_one(A, variants[i][0], variants[i][1], label, x, y0, y, d_x, d_y);
  gs_dfree(ctx, d_x);
  gs_dfree(ctx, d_y);
  free(x);
  free(y0);
  free(y);
  gs_matrix_destroy(&A);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base); /* every backend gave back what it took */
}

/* The float part, on the matrices of the mixed part (random, stencil row blocks, the 27-point
 * stencil whose rounded values are all bccoo table indices, one long row for csr-vector's
 * chunks and hyb's COO tail, scattered empty rows and runs of them for hola's flagged warps and
 * many-empty-rows mode) plus an empty-row pattern and nnz = 0; then the refusals that need a
 * device: a value beyond the float range, auto, a solve. */
static void test_float_precision(void)
{
  uint64_t s = gs_test_seed() ^ 0xc2b2ae35u;
  gs_csr_t *A = gs_test_random_csr(&s, 1000, 700, 0.03);
  CU_ASSERT_FATAL(A != NULL);
  float_on(A, "random 1000x700");
  gs_csr_destroy(&A);
  CU_ASSERT_FATAL(gs_gen_laplace(&A, 30, 30, 30, 27) == GS_SUCCESS); /* csr-vector row blocks */
  for (gs_off_t p = 0; p < A->nnz; ++p) A->val[p] *= 1.0 + 0.1 * gs_test_uniform(&s);
  float_on(A, "laplace 27-pt 30^3, perturbed values");
  gs_csr_destroy(&A);
  CU_ASSERT_FATAL(gs_gen_laplace(&A, 24, 24, 24, 27) == GS_SUCCESS); /* bccoo: table only */
  for (gs_off_t p = 0; p < A->nnz; ++p) A->val[p] += A->val[p] * 0x1p-40 * gs_test_uniform(&s);
  float_on(A, "laplace 27-pt 24^3, values 26 and -1 perturbed by 2^-40");
  gs_csr_destroy(&A);
  A = build_long_row_9000(&s); /* long-row chunks (atomics), a COO tail */
  float_on(A, "one row of 9000 entries");
  gs_csr_destroy(&A);
  A = build_scattered_empty_rows(&s, 20000, 3000, 8000, 6000);
  float_on(A, "20000x3000, 1-6 entries or empty, rows 8000-13999 empty");
  gs_csr_destroy(&A);
  A = build_empty_runs(&s, 60000, 2000);
  float_on(A, "60000x2000, runs of 300-5000 empty rows");
  gs_csr_destroy(&A);
  A = gs_test_empty_rows(gs_test_random_csr(&s, 500, 500, 0.02), 3);
  CU_ASSERT_FATAL(A != NULL);
  float_on(A, "500x500, every third row empty");
  gs_csr_destroy(&A);
  CU_ASSERT_FATAL(gs_csr_create(&A, 40, 30, 0) == GS_SUCCESS);
  float_on(A, "40x30, nnz = 0");
  gs_csr_destroy(&A);

  /* refusals: a finite value beyond the float range names its entry; auto and a solve apply
   * double vectors */
  const double big[] = {1.0, 0.0, 0.0, 1e300};
  gs_matrix_t *M = NULL;
  gs_spmv_t *S = NULL;
  A = gs_test_csr_from_dense(2, 2, big);
  CU_ASSERT_FATAL(gs_matrix_create(&M, ctx, A) == GS_SUCCESS);
  CU_ASSERT_EQUAL(gs_spmv_create(&S, ctx, M, "csr-vector", "precision=float"),
                  GS_ERR_UNSUPPORTED);
  CU_ASSERT(strstr(gs_last_error(), "(2, 2)") != NULL && strstr(gs_last_error(), "float range"));
  CU_ASSERT_PTR_NULL(S);
  gs_matrix_destroy(&M);
  gs_csr_destroy(&A);
  /* the check runs on the GPU over the shared CSR: the first such entry in CSR order is named
   * wherever the others lie (blocks apart, a negative one), and values at +-FLT_MAX are taken
   * (a matrix holds no infinity or NaN: gs_matrix_create refuses them) */
  A = gs_test_empty_rows(gs_test_random_csr(&s, 3000, 700, 0.01), 5);
  CU_ASSERT_FATAL(A != NULL && A->nnz > 4000);
  {
    const gs_off_t p1 = (gs_off_t)(gs_test_uniform(&s) * (double)(A->nnz - 2000)) + 1000;
    A->val[p1 - 1000] = -(double)FLT_MAX;
    A->val[p1 - 1] = (double)FLT_MAX;
    A->val[p1] = -1e300;
    A->val[A->nnz - 1] = 1e300;
    gs_idx_t r1 = 0;
    while (A->row_ptr[r1 + 1] <= p1) ++r1;
    char want[64];
    snprintf(want, sizeof want, "(%lld, %lld)", (long long)r1 + 1, (long long)A->col[p1] + 1);
    printf("\n    first entry beyond the float range: %lld of %lld, %s", (long long)p1,
           (long long)A->nnz, want);
    CU_ASSERT_FATAL(gs_matrix_create(&M, ctx, A) == GS_SUCCESS);
    CU_ASSERT_EQUAL(gs_spmv_create(&S, ctx, M, "csr-vector", "precision=mixed"),
                    GS_ERR_UNSUPPORTED);
    CU_ASSERT(strstr(gs_last_error(), want) != NULL);
    CU_ASSERT_PTR_NULL(S);
    A->val[p1] = A->val[A->nnz - 1] = 1.0; /* nothing beyond: taken */
    gs_matrix_destroy(&M);
    CU_ASSERT_FATAL(gs_matrix_create(&M, ctx, A) == GS_SUCCESS);
    CU_ASSERT_EQUAL(gs_spmv_create(&S, ctx, M, "csr-vector", "precision=mixed"), GS_SUCCESS);
    gs_spmv_destroy(&S);
    gs_matrix_destroy(&M);
  }
  gs_csr_destroy(&A);
  CU_ASSERT_FATAL(gs_gen_laplace(&A, 20, 20, 1, 5) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_matrix_create(&M, ctx, A) == GS_SUCCESS);
  CU_ASSERT_EQUAL(gs_spmv_create_auto(&S, ctx, M, "precision=float", NULL), GS_ERR_UNSUPPORTED);
  CU_ASSERT(strstr(gs_last_error(), "float") != NULL);
  CU_ASSERT_EQUAL(gs_spmv_create_auto(&S, ctx, M, "ell.precision=float", NULL),
                  GS_ERR_UNSUPPORTED);
  CU_ASSERT_PTR_NULL(S);
  /* the selection is a layer above the dispatcher: "auto" is no backend of gs_spmv_create */
  CU_ASSERT_EQUAL(gs_spmv_create(&S, ctx, M, "auto", NULL), GS_ERR_INVALID_ARG);
  CU_ASSERT(strstr(gs_last_error(), "gs_spmv_create_auto") != NULL);
  CU_ASSERT_PTR_NULL(S);
  CU_ASSERT_FATAL(gs_spmv_create(&S, ctx, M, "csr-vector", "precision=float") == GS_SUCCESS);
  double *d_b = NULL;
  CU_ASSERT_FATAL(gs_dmalloc(ctx, (void **)&d_b, 2 * 400 * sizeof *d_b, "b, x") == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_copy_to_device(ctx, d_b, A->val, 400 * sizeof *d_b) == GS_SUCCESS);
  gs_solve_opts_t so;
  gs_solve_opts_default(&so);
  gs_solve_stats_t stats;
  CU_ASSERT_EQUAL(gs_solve(ctx, &so, S, NULL, d_b, d_b + 400, &stats), GS_ERR_UNSUPPORTED);
  CU_ASSERT(strstr(gs_last_error(), "float") != NULL);
  gs_dfree(ctx, d_b);
  gs_spmv_destroy(&S);
  gs_matrix_destroy(&M);
  gs_csr_destroy(&A);
}

static void test_argument_validation(void)
{
  gs_csr_t *H = NULL;
  gs_matrix_t *A = NULL;
  gs_spmv_t *S = NULL;
  double *d = NULL;
  CU_ASSERT_FATAL(gs_gen_laplace(&H, 10, 1, 1, 3) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_matrix_create(&A, ctx, H) == GS_SUCCESS);
  CU_ASSERT(gs_spmv_create(&S, ctx, A, "no-such-format", NULL) == GS_ERR_INVALID_ARG);
  CU_ASSERT(strstr(gs_last_error(), "no-such-format") != NULL);
  CU_ASSERT_PTR_NULL(S);
  CU_ASSERT_FATAL(gs_spmv_create(&S, ctx, A, "csr-vector", NULL) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_dmalloc(ctx, (void **)&d, 20 * sizeof(double), "v") == GS_SUCCESS);
  CU_ASSERT(gs_spmv_apply(S, GS_OP_N, 1.0, d, 0.0, d) == GS_ERR_INVALID_ARG); /* x == y */
  CU_ASSERT(gs_spmv_apply(S, GS_OP_N, 1.0, NULL, 0.0, d + 10) == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_spmv_apply(S, (gs_op_t)7, 1.0, d, 0.0, d + 10) == GS_ERR_INVALID_ARG);
  /* gs_spmv_apply_float takes float products only */
  float *f = (float *)d;
  CU_ASSERT(gs_spmv_apply_float(S, GS_OP_N, 1.0f, f, 0.0f, f + 10) == GS_ERR_INVALID_ARG);
  CU_ASSERT(strstr(gs_last_error(), "double precision") != NULL);
  gs_spmv_destroy(&S);
  CU_ASSERT_FATAL(gs_spmv_create(&S, ctx, A, "ell", "precision=mixed") == GS_SUCCESS);
  CU_ASSERT(gs_spmv_apply_float(S, GS_OP_N, 1.0f, f, 0.0f, f + 10) == GS_ERR_INVALID_ARG);
  CU_ASSERT(strstr(gs_last_error(), "mixed precision") != NULL);
  gs_spmv_destroy(&S);
  /* and checks as gs_spmv_apply's on a float product */
  CU_ASSERT_FATAL(gs_spmv_create(&S, ctx, A, "csr-vector", "precision=float") == GS_SUCCESS);
  CU_ASSERT(gs_spmv_apply_float(NULL, GS_OP_N, 1.0f, f, 0.0f, f + 10) == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_spmv_apply_float(S, GS_OP_N, 1.0f, f, 0.0f, f) == GS_ERR_INVALID_ARG); /* x==y */
  CU_ASSERT(gs_spmv_apply_float(S, GS_OP_N, 1.0f, NULL, 0.0f, f + 10) == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_spmv_apply_float(S, GS_OP_N, 1.0f, f, 0.0f, NULL) == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_spmv_apply_float(S, (gs_op_t)7, 1.0f, f, 0.0f, f + 10) == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_spmv_apply_float(S, GS_OP_N, NAN, f, 0.0f, f + 10) == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_spmv_apply_float(S, GS_OP_N, 1.0f, f, INFINITY, f + 10) == GS_ERR_INVALID_ARG);
  /* alpha = 0: y = beta y, A and x unread (NaN in x stays out) */
  float h[20];
  for (int i = 0; i < 10; ++i) h[i] = NAN;
  for (int i = 10; i < 20; ++i) h[i] = (float)i;
  CU_ASSERT_FATAL(gs_copy_to_device(ctx, f, h, sizeof h) == GS_SUCCESS);
  CU_ASSERT(gs_spmv_apply_float(S, GS_OP_N, 0.0f, f, 2.0f, f + 10) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_copy_to_host(ctx, h, f, sizeof h) == GS_SUCCESS);
  for (int i = 10; i < 20; ++i) CU_ASSERT_EQUAL(h[i], 2.0f * (float)i);
  CU_ASSERT(gs_spmv_apply_float(S, GS_OP_N, 0.0f, f, 0.0f, f + 10) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_copy_to_host(ctx, h, f, sizeof h) == GS_SUCCESS);
  for (int i = 10; i < 20; ++i) CU_ASSERT_EQUAL(h[i], 0.0f);
  gs_dfree(ctx, d);
  gs_spmv_destroy(&S);
  if (gs_spmv_backend_find("hola") >= 0) { /* the pipelined kernel has no 16-entry variant */
    CU_ASSERT(gs_spmv_create(&S, ctx, A, "hola", "hola.npt=16,hola.pipe=2") ==
              GS_ERR_UNSUPPORTED);
    CU_ASSERT(strstr(gs_last_error(), "hola.pipe=2") != NULL);
    CU_ASSERT_PTR_NULL(S);
  }
  gs_matrix_destroy(&A);
  gs_csr_destroy(&H);
}

/* Allocation k fails for k = 1, 2, ...: every backend must fail cleanly, freeing everything. */
static void test_allocation_failures(void)
{
  gs_csr_t *H = NULL;
  CU_ASSERT_FATAL(gs_gen_laplace(&H, 20, 20, 1, 5) == GS_SUCCESS);
  for (int b = 0; b < gs_spmv_backend_count(); ++b) {
    const char *name = gs_spmv_backend_name(b);
    for (long k = 1; k < 64; ++k) {
      gs_matrix_t *A = NULL;
      gs_spmv_t *S = NULL;
      size_t base = gs_device_bytes_in_use(ctx);
      CU_ASSERT_FATAL(gs_matrix_create(&A, ctx, H) == GS_SUCCESS);
      gs_test_dmalloc_fail_after(ctx, k);
      gs_status_t st = gs_spmv_create(&S, ctx, A, name, NULL);
      gs_test_dmalloc_fail_after(ctx, 0);
      if (st != GS_SUCCESS) {
        CU_ASSERT_EQUAL(st, GS_ERR_DEVICE_MEMORY);
        CU_ASSERT_PTR_NULL(S);
      }
      gs_spmv_destroy(&S);
      gs_matrix_destroy(&A);
      CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
      if (st == GS_SUCCESS) break; /* k exceeded the allocations prepare makes */
    }
  }
  gs_csr_destroy(&H);
}

int main(void)
{
  const char *nv = getenv("GS_TEST_NO_VENDOR");
  skip_vendor = nv && *nv && strcmp(nv, "0") != 0;
  only = getenv("GS_TEST_BACKENDS");
  if (gs_device_count() > 0 && gs_context_create(&ctx, 0) != GS_SUCCESS) {
    fprintf(stderr, "context: %s\n", gs_last_error());
    return 1;
  }
  CU_TestInfo tests[] = {{"small shapes: 1x1, nnz = 0, all-zero values", test_small_shapes},
                         {"random rectangular matrices", test_random_rectangular},
                         {"one row of 100k nonzeros", test_one_long_row},
                         {"Laplacians", test_laplacians},
                         {"hola's automatic op N: thread-owned loads on large matrices",
                          test_hola_auto_variants},
                         {"a row longer than a block's share (20000 in row 0)",
                          test_row_longer_than_block},
                         {"every row empty but one", test_one_nonempty_row},
                         {"runs of 300-5000 empty rows across block boundaries",
                          test_empty_row_runs},
                         {"row lengths 1..64 in a sawtooth", test_sawtooth_rows},
                         {"1-row and 1-column matrices, ops N and T", test_one_row_one_column},
                         {"64-bit offsets: wide kernels and refusals", test_wide_offsets},
                         {"every matrix of GS_MATRIX_DIR", test_real_matrices},
                         {"precision=mixed: bound of float values; refusals",
                          test_mixed_precision},
                         {"precision=float: bound of float arithmetic; refusals",
                          test_float_precision},
                         {"argument validation", test_argument_validation},
                         {"allocation failures", test_allocation_failures},
                         CU_TEST_INFO_NULL};
  int rc = gs_test_main("spmv_conformance", tests, 1);
  gs_context_destroy(&ctx);
  return rc;
}
