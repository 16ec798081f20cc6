/* tests/test_reorder_gpu.c: the reordering inside solves (gs_reorder_create, gs_reorder_vector,
 * gs_solve_reordered; include/gpusolve/solver.h) on the GPU (exit 77 without one):
 *  - gs_reorder_vector: P v is the host gather v[perm[k]] bit for bit, and P^T (P v) = v;
 *  - a 2D Laplacian whose rows were shuffled: CG (none, jacobi, amg), BiCGSTAB (jacobi) and
 *    GMRES (none) on the rcm and degree orderings converge, and x differs from the plain
 *    solve's by at most (||r_1|| + ||r_2||) / lambda_min(A) (both residuals as the solves
 *    recomputed them; lambda_min of the 5-point Dirichlet Laplacian known in closed form),
 *    plus the rounding of that difference; the caller's b and x0 are unchanged;
 *  - refusals (NULL R, aliasing b and x, a product of another order) and allocation failures
 *    at each step, with nothing leaked;
 *  - RCM on the GPU (gs_rcm_dev_csr inside gs_reorder_create): shuffled grids (one of 1.5M
 *    entries through the default threshold, the others through the test hook), a nonsymmetric
 *    pattern in general storage, a false claim of symmetry (the device declines) and auto's rcm
 *    candidate give the host's permutation entry for entry and the same P A P^T; device
 *    allocation failures in it fall back to the host; nothing leaked. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/testhooks.h"
#include "tests/testutil.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static gs_context_t *ctx;
static uint64_t g_state;

/* The nx x ny 5-point Laplacian (diagonal 4, off-diagonals -1) with its rows and columns
 * renumbered by a random permutation q (new index q[i] for old i), so that RCM has work. */
static gs_csr_t *shuffled_laplacian(gs_idx_t nx, gs_idx_t ny)
{
  gs_csr_t *L = NULL;
  CU_ASSERT_FATAL(gs_gen_laplace(&L, nx, ny, 1, 5) == GS_SUCCESS);
  const gs_idx_t n = L->m;
  gs_idx_t *q = malloc((size_t)n * sizeof *q);
  CU_ASSERT_FATAL(q != NULL);
  for (gs_idx_t i = 0; i < n; ++i) q[i] = i;
  for (gs_idx_t i = n - 1; i > 0; --i) { /* Fisher-Yates */
    const gs_idx_t j = (gs_idx_t)(gs_test_next(&g_state) % (uint64_t)(i + 1));
    const gs_idx_t t = q[i];
    q[i] = q[j];
    q[j] = t;
  }
  gs_coo_t *C = NULL;
  CU_ASSERT_FATAL(gs_coo_create(&C, n, n, L->nnz) == GS_SUCCESS);
  for (gs_idx_t i = 0; i < n; ++i)
    for (int64_t p = L->row_ptr[i]; p < L->row_ptr[i + 1]; ++p)
      CU_ASSERT_FATAL(gs_coo_push(C, q[i], q[L->col[p]], L->val[p]) == GS_SUCCESS);
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
  gs_coo_destroy(&C);
  gs_csr_destroy(&L);
  free(q);
  return A;
}

static double *dvec(const double *h, gs_idx_t n)
{
  double *d = NULL;
  CU_ASSERT_FATAL(gs_dmalloc(ctx, (void **)&d, (size_t)n * sizeof *d, "test vector") ==
                  GS_SUCCESS);
  if (h) CU_ASSERT_FATAL(gs_copy_to_device(ctx, d, h, (size_t)n * sizeof *d) == GS_SUCCESS);
  return d;
}

static void download(double *h, const double *d, gs_idx_t n)
{
  CU_ASSERT_FATAL(gs_copy_to_host(ctx, h, d, (size_t)n * sizeof *h) == GS_SUCCESS);
}

static void test_vector(void)
{
  gs_csr_t *A = shuffled_laplacian(23, 17);
  const gs_idx_t n = A->m;
  double *h = malloc((size_t)n * sizeof *h), *g = malloc((size_t)n * sizeof *g);
  CU_ASSERT_FATAL(h && g);
  for (gs_idx_t i = 0; i < n; ++i) h[i] = gs_test_uniform(&g_state) - 0.5;
  const size_t base = gs_device_bytes_in_use(ctx);
  for (int kind = GS_REORDER_NONE; kind <= GS_REORDER_DEGREE; ++kind) {
    gs_reorder_t *R = NULL;
    CU_ASSERT_FATAL(gs_reorder_create(&R, ctx, A, (gs_reorder_kind_t)kind, 0.0) == GS_SUCCESS);
    const gs_idx_t *perm = gs_reorder_perm(R);
    CU_ASSERT(kind == GS_REORDER_NONE ? perm == NULL : perm != NULL);
    double *d_in = dvec(h, n), *d_p = dvec(NULL, n), *d_back = dvec(NULL, n);
    CU_ASSERT(gs_reorder_vector(R, 0, d_in, d_p) == GS_SUCCESS);
    CU_ASSERT(gs_reorder_vector(R, 1, d_p, d_back) == GS_SUCCESS);
    CU_ASSERT(gs_reorder_vector(R, 0, d_in, d_in) == GS_ERR_INVALID_ARG); /* aliasing */
    download(g, d_p, n);
    int bad = 0;
    for (gs_idx_t k = 0; k < n; ++k) bad += g[k] != h[perm ? perm[k] : k];
    download(g, d_back, n);
    for (gs_idx_t k = 0; k < n; ++k) bad += g[k] != h[k];
    CU_ASSERT_EQUAL(bad, 0);
    if (bad) fprintf(stderr, "  %s: %d entries moved wrongly\n",
                     gs_reorder_string((gs_reorder_kind_t)kind), bad);
    gs_dfree(ctx, d_in);
    gs_dfree(ctx, d_p);
    gs_dfree(ctx, d_back);
    gs_reorder_destroy(&R);
    CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
  }
  free(h);
  free(g);
  gs_csr_destroy(&A);
}

typedef struct run {
  gs_solve_stats_t st;
  double *x; /* host */
} run_t;

/* Solves A x = b (b and x0 on the host, the caller's numbering) through ordering `kind`. */
static gs_status_t solve_kind(const gs_csr_t *A, gs_reorder_kind_t kind, gs_method_t method,
                              const char *pc, const double *b, const double *x0, run_t *out)
{
  const gs_idx_t n = A->m;
  gs_reorder_t *R = NULL;
  gs_matrix_t *M = NULL;
  gs_spmv_t *S = NULL;
  gs_precond_t *P = NULL;
  gs_status_t st = gs_reorder_create(&R, ctx, A, kind, 0.0);
  if (st == GS_SUCCESS) st = gs_matrix_create(&M, ctx, gs_reorder_csr(R));
  if (st == GS_SUCCESS) st = gs_spmv_create(&S, ctx, M, "csr-vector", NULL);
  if (st == GS_SUCCESS && strcmp(pc, "none")) st = gs_precond_create(&P, ctx, M, pc);
  double *d_b = dvec(b, n), *d_x = dvec(x0, n);
  if (st == GS_SUCCESS) {
    gs_solve_opts_t o;
    gs_solve_opts_default(&o);
    o.method = method;
    o.rtol = 1e-10;
    o.x0_given = 1;
    st = gs_solve_reordered(ctx, &o, R, S, P, d_b, d_x, &out->st);
  }
  if (st == GS_SUCCESS) {
    double *hb = malloc((size_t)n * sizeof *hb);
    CU_ASSERT_FATAL(hb != NULL);
    download(hb, d_b, n);
    CU_ASSERT(memcmp(hb, b, (size_t)n * sizeof *hb) == 0); /* b untouched */
    free(hb);
    out->x = malloc((size_t)n * sizeof *out->x);
    CU_ASSERT_FATAL(out->x != NULL);
    download(out->x, d_x, n);
  }
  gs_dfree(ctx, d_b);
  gs_dfree(ctx, d_x);
  gs_precond_destroy(&P);
  gs_spmv_destroy(&S);
  gs_matrix_destroy(&M);
  gs_reorder_destroy(&R);
  return st;
}

static void test_solves(void)
{
  const gs_idx_t nx = 40, ny = 31;
  gs_csr_t *A = shuffled_laplacian(nx, ny);
  const gs_idx_t n = A->m;
  /* lambda_min of the Dirichlet 5-point Laplacian: 4 sin^2(pi / (2 (nx+1))) + the same in y */
  const double sx = sin(M_PI / (2.0 * (nx + 1))), sy = sin(M_PI / (2.0 * (ny + 1)));
  const double lmin = 4.0 * (sx * sx + sy * sy);
  double *b = malloc((size_t)n * sizeof *b), *x0 = malloc((size_t)n * sizeof *x0);
  CU_ASSERT_FATAL(b && x0);
  for (gs_idx_t i = 0; i < n; ++i) {
    b[i] = gs_test_uniform(&g_state) - 0.5;
    x0[i] = 0.01 * (gs_test_uniform(&g_state) - 0.5);
  }
  static const struct {
    gs_method_t m;
    const char *pc;
  } cases[] = {{GS_SOLVER_CG, "none"},
               {GS_SOLVER_CG, "jacobi"},
               {GS_SOLVER_CG, "amg"},
               {GS_SOLVER_BICGSTAB, "jacobi"},
               {GS_SOLVER_GMRES, "none"}};
  const size_t base = gs_device_bytes_in_use(ctx);
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    run_t plain = {0};
    CU_ASSERT_FATAL(solve_kind(A, GS_REORDER_NONE, cases[c].m, cases[c].pc, b, x0, &plain) ==
                    GS_SUCCESS);
    CU_ASSERT(gs_reason_converged(plain.st.reason));
    for (int kind = GS_REORDER_RCM; kind <= GS_REORDER_DEGREE; ++kind) {
      run_t r = {0};
      CU_ASSERT_FATAL(solve_kind(A, (gs_reorder_kind_t)kind, cases[c].m, cases[c].pc, b, x0,
                                 &r) == GS_SUCCESS);
      CU_ASSERT(gs_reason_converged(r.st.reason));
      /* ||x - x_plain||_2 <= ||A^-1||_2 (||r|| + ||r_plain||), with ||A^-1||_2 = 1 / lmin.
       * Each residual was recomputed in floating point: componentwise within gamma_6 (|b| +
       * |A| |x|) of the exact one (5 entries a row), so each norm within gamma_6 (||b|| +
       * 8 ||x||) (||A||_2 <= 8); the difference and its norm here add gamma_{n+2} ||x||. */
      const double u = 1.1102230246251565e-16, g6 = 6 * u / (1 - 6 * u);
      double d2 = 0.0, x2 = 0.0, b2 = 0.0;
      for (gs_idx_t i = 0; i < n; ++i) {
        d2 += (r.x[i] - plain.x[i]) * (r.x[i] - plain.x[i]);
        x2 += plain.x[i] * plain.x[i];
        b2 += b[i] * b[i];
      }
      const double slack = 2.0 * g6 * (sqrt(b2) + 8.0 * 2.0 * sqrt(x2)); /* both solves */
      const double bound =
          (r.st.true_residual_norm + plain.st.true_residual_norm + slack) / lmin +
          2.0 * (double)(n + 2) * u * sqrt(x2);
      CU_ASSERT(sqrt(d2) <= bound);
      printf("  %s + %s, %s: %d iterations (plain %d), ||x - x_plain|| %.2e <= %.2e\n",
             gs_method_string(cases[c].m), cases[c].pc,
             gs_reorder_string((gs_reorder_kind_t)kind), r.st.iterations, plain.st.iterations,
             sqrt(d2), bound);
      free(r.x);
    }
    free(plain.x);
    CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
  }
  free(b);
  free(x0);
  gs_csr_destroy(&A);
}

/* AUTO's decline before ordering: below the products at which saving every x line would pay
 * the orderings at their floor rate it declines with that reason and no permutation; above
 * them it orders (and keeps an ordering where, as on a shuffled grid, the lines fall). */
static void test_auto_early(void)
{
  gs_csr_t *A = shuffled_laplacian(60, 50);
  gs_reorder_t *R = NULL;
  gs_reorder_info_t in;
  CU_ASSERT_FATAL(gs_reorder_create(&R, ctx, A, GS_REORDER_NONE, 0.0) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_reorder_info(R, &in) == GS_SUCCESS);
  gs_reorder_destroy(&R);
  const double floor_s = 2.0 * GS_REORDER_AUTO_NS_PER_ENTRY * 1e-9 * (double)A->nnz;
  const double pstar = GS_REORDER_AUTO_MARGIN * floor_s * GS_REORDER_AUTO_BYTES_PER_S /
                       (64.0 * (double)in.lines_before);
  static const char early[] = "declined: the expected products could not pay the ordering";
  CU_ASSERT_FATAL(gs_reorder_create(&R, ctx, A, GS_REORDER_AUTO, 0.5 * pstar) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_reorder_info(R, &in) == GS_SUCCESS);
  CU_ASSERT_EQUAL(in.kind, GS_REORDER_NONE);
  CU_ASSERT_STRING_EQUAL(in.note, early);
  CU_ASSERT_EQUAL(in.lines_after, in.lines_before);
  CU_ASSERT(gs_reorder_perm(R) == NULL);
  CU_ASSERT(gs_reorder_csr(R) == A);
  gs_reorder_destroy(&R);
  CU_ASSERT_FATAL(gs_reorder_create(&R, ctx, A, GS_REORDER_AUTO, 2.0 * pstar) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_reorder_info(R, &in) == GS_SUCCESS);
  CU_ASSERT(strcmp(in.note, early) != 0);
  CU_ASSERT(in.lines_after <= in.lines_before);
  gs_reorder_destroy(&R);
  CU_ASSERT_FATAL(gs_reorder_create(&R, ctx, A, GS_REORDER_AUTO, 1e6 * pstar) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_reorder_info(R, &in) == GS_SUCCESS);
  printf("\n  auto at %.3g products (%.3g at the floor): %s, x lines %lld -> %lld (%s)\n",
         1e6 * pstar, pstar, gs_reorder_string(in.kind), (long long)in.lines_before,
         (long long)in.lines_after, in.note);
  CU_ASSERT(in.kind == GS_REORDER_RCM || in.kind == GS_REORDER_DEGREE);
  CU_ASSERT(in.lines_after <= GS_REORDER_AUTO_RATIO * (double)in.lines_before);
  CU_ASSERT(gs_reorder_perm(R) != NULL);
  gs_reorder_destroy(&R);
  gs_csr_destroy(&A);
}

static void test_refusals_and_faults(void)
{
  gs_csr_t *A = shuffled_laplacian(12, 9), *B = shuffled_laplacian(5, 5);
  const gs_idx_t n = A->m;
  const size_t base = gs_device_bytes_in_use(ctx);
  gs_reorder_t *R = NULL;
  gs_matrix_t *MB = NULL, *MA = NULL;
  gs_spmv_t *SB = NULL, *SA = NULL;
  CU_ASSERT_FATAL(gs_reorder_create(&R, ctx, A, GS_REORDER_RCM, 0.0) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_matrix_create(&MA, ctx, gs_reorder_csr(R)) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_spmv_create(&SA, ctx, MA, "csr-vector", NULL) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_matrix_create(&MB, ctx, B) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_spmv_create(&SB, ctx, MB, "csr-vector", NULL) == GS_SUCCESS);
  double *zeros = calloc((size_t)n, sizeof *zeros);
  CU_ASSERT_FATAL(zeros != NULL);
  double *d_b = dvec(zeros, n), *d_x = dvec(zeros, n);
  free(zeros);
  gs_solve_opts_t o;
  gs_solve_opts_default(&o);
  o.method = GS_SOLVER_CG;
  gs_solve_stats_t st;
  CU_ASSERT_EQUAL(gs_solve_reordered(ctx, &o, NULL, SA, NULL, d_b, d_x, &st), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_solve_reordered(ctx, &o, R, SA, NULL, d_b, d_b, &st), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_solve_reordered(ctx, &o, R, SB, NULL, d_b, d_x, &st), GS_ERR_DIMENSION);
  /* the k-th allocation of a solve fails: a status, nothing of the solve's left */
  for (long k = 1; k <= 8; ++k) {
    const size_t before = gs_device_bytes_in_use(ctx);
    gs_test_dmalloc_fail_after(ctx, k);
    const gs_status_t s = gs_solve_reordered(ctx, &o, R, SA, NULL, d_b, d_x, &st);
    gs_test_dmalloc_fail_after(ctx, 0);
    CU_ASSERT(s == GS_SUCCESS || s == GS_ERR_DEVICE_MEMORY);
    CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), before);
  }
  gs_dfree(ctx, d_b);
  gs_dfree(ctx, d_x);
  gs_spmv_destroy(&SA);
  gs_spmv_destroy(&SB);
  gs_matrix_destroy(&MA);
  gs_matrix_destroy(&MB);
  gs_reorder_destroy(&R);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
  /* the k-th allocation of gs_reorder_create fails */
  for (long k = 1; k <= 4; ++k) {
    gs_reorder_t *Q = NULL;
    gs_test_dmalloc_fail_after(ctx, k);
    const gs_status_t s = gs_reorder_create(&Q, ctx, A, GS_REORDER_DEGREE, 0.0);
    gs_test_dmalloc_fail_after(ctx, 0);
    CU_ASSERT(s == GS_SUCCESS || s == GS_ERR_DEVICE_MEMORY);
    CU_ASSERT((s == GS_SUCCESS) == (Q != NULL));
    gs_reorder_destroy(&Q);
    CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
  }
  gs_csr_destroy(&A);
  gs_csr_destroy(&B);
}

/* A random pattern of n rows that is not symmetric, stored with the claim `symmetry`: the
 * diagonal, a chain i -> i + 1 stored one way only (so that A + A^T is connected) and about d
 * random columns a row. */
static gs_csr_t *directed_pattern(gs_idx_t n, double d, gs_symmetry_t symmetry)
{
  gs_coo_t *C = NULL;
  CU_ASSERT_FATAL(gs_coo_create(&C, n, n, (gs_off_t)((d + 2.0) * n) + 16) == GS_SUCCESS);
  for (gs_idx_t i = 0; i < n; ++i) {
    CU_ASSERT_FATAL(gs_coo_push(C, i, i, 4.0) == GS_SUCCESS);
    if (i + 1 < n) CU_ASSERT_FATAL(gs_coo_push(C, i, i + 1, -1.0) == GS_SUCCESS);
    const int k = (int)(gs_test_uniform(&g_state) * 2.0 * d);
    for (int t = 0; t < k; ++t) {
      const gs_idx_t j = (gs_idx_t)(gs_test_next(&g_state) % (uint64_t)n);
      CU_ASSERT_FATAL(gs_coo_push(C, i, j, -0.5) == GS_SUCCESS);
    }
  }
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
  gs_coo_destroy(&C);
  A->symmetry = symmetry;
  return A;
}

/* Whether two host CSRs hold the same arrays, bit for bit. */
static int same_csr(const gs_csr_t *a, const gs_csr_t *b)
{
  return a->m == b->m && a->n == b->n && a->nnz == b->nnz &&
         !memcmp(a->row_ptr, b->row_ptr, ((size_t)a->m + 1) * sizeof *a->row_ptr) &&
         (a->nnz == 0 || (!memcmp(a->col, b->col, (size_t)a->nnz * sizeof *a->col) &&
                          !memcmp(a->val, b->val, (size_t)a->nnz * sizeof *a->val)));
}

static const char dev_note[] = "ordered on the GPU"; /* gs_reorder_info's note for rcm */

/* gs_reorder_create(kind) of A with the device RCM hook at dev_mode (0: the default threshold,
 * 1: the device at any size) against the hook at 2 (the host only): the same kind, the same
 * permutation entry for entry and the same P A P^T (row offsets, columns, values), and device
 * memory back to its base once both are destroyed. expect_dev (rcm only): 1 the device must
 * have ordered it, 0 it must have declined (the host did). */
static void dev_vs_host(const gs_csr_t *A, gs_reorder_kind_t kind, double products, int dev_mode,
                        int expect_dev, const char *label)
{
  const size_t base = gs_device_bytes_in_use(ctx);
  gs_reorder_t *D = NULL, *H = NULL;
  gs_reorder_info_t di, hi;
  gs_test_reorder_dev_rcm(ctx, dev_mode);
  const gs_status_t sd = gs_reorder_create(&D, ctx, A, kind, products);
  gs_test_reorder_dev_rcm(ctx, 2);
  const gs_status_t sh = gs_reorder_create(&H, ctx, A, kind, products);
  gs_test_reorder_dev_rcm(ctx, 0);
  CU_ASSERT_EQUAL(sd, GS_SUCCESS);
  CU_ASSERT_EQUAL(sh, GS_SUCCESS);
  if (sd != GS_SUCCESS || sh != GS_SUCCESS) {
    fprintf(stderr, "  %s: create %s / %s: %s\n", label, gs_status_string(sd),
            gs_status_string(sh), gs_last_error());
    gs_reorder_destroy(&D);
    gs_reorder_destroy(&H);
    return;
  }
  CU_ASSERT_FATAL(gs_reorder_info(D, &di) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_reorder_info(H, &hi) == GS_SUCCESS);
  CU_ASSERT_EQUAL(di.kind, hi.kind);
  const gs_idx_t *pd = gs_reorder_perm(D), *ph = gs_reorder_perm(H);
  CU_ASSERT((pd == NULL) == (ph == NULL));
  long differ = 0;
  gs_idx_t first = -1;
  if (pd && ph)
    for (gs_idx_t k = 0; k < A->m; ++k)
      if (pd[k] != ph[k]) {
        if (first < 0) first = k;
        ++differ;
      }
  CU_ASSERT_EQUAL(differ, 0);
  const int csr_same = same_csr(gs_reorder_csr(D), gs_reorder_csr(H));
  CU_ASSERT(csr_same);
  CU_ASSERT_EQUAL(di.bandwidth_after, hi.bandwidth_after);
  CU_ASSERT_EQUAL(di.lines_after, hi.lines_after);
  const int on_dev = strcmp(di.note, dev_note) == 0;
  if (kind == GS_REORDER_RCM) {
    CU_ASSERT_STRING_EQUAL(hi.note, "");
    CU_ASSERT_EQUAL(on_dev, expect_dev);
  }
  printf("  %s: n %d, %lld entries, %s storage, %s, hook %d: %s (%.1f ms) vs the host "
         "(%.1f ms): permutations %s (%ld differ, first at %d), P A P^T %s, bandwidth %d -> %d\n",
         label, (int)A->m, (long long)A->nnz, gs_symmetry_string(A->symmetry),
         gs_reorder_string(kind), dev_mode,
         kind != GS_REORDER_RCM ? "auto's candidates" : on_dev ? "device" : "declined, host",
         1e3 * di.seconds, 1e3 * hi.seconds, differ ? "DIFFER" : "equal", differ, (int)first,
         csr_same ? "equal" : "DIFFERS", (int)di.bandwidth_before, (int)di.bandwidth_after);
  gs_reorder_destroy(&D);
  gs_reorder_destroy(&H);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
}

/* RCM on the GPU inside gs_reorder_create gives the host's order (gs_rcm_dev_csr is checked
 * against gs_csr_rcm in test_rcm_gpu; this checks the wiring: the hook, the threshold, the
 * declines and the fallback when the device runs out of memory). */
static void test_rcm_device(void)
{
  static const gs_idx_t grids[][2] = {{23, 17}, {90, 70}, {300, 200}};
  char label[96];
  printf("\n");
  for (int g = 0; g < 3; ++g) {
    gs_csr_t *A = shuffled_laplacian(grids[g][0], grids[g][1]);
    snprintf(label, sizeof label, "shuffled grid %d x %d", (int)grids[g][0], (int)grids[g][1]);
    dev_vs_host(A, GS_REORDER_RCM, 0.0, 1, 1, label);
    if (g == 1) { /* a true claim of symmetry: the device checks it and orders A's own graph */
      A->symmetry = GS_SYM_SYMMETRIC;
      dev_vs_host(A, GS_REORDER_RCM, 0.0, 1, 1, "shuffled grid 90 x 70, claimed symmetric");
      A->symmetry = GS_SYM_GENERAL;
      /* auto's rcm candidate: expected products large enough that auto keeps an ordering */
      dev_vs_host(A, GS_REORDER_AUTO, 1e12, 1, -1, "shuffled grid 90 x 70, auto");
    }
    gs_csr_destroy(&A);
  }
  /* 1.5M entries: over the default threshold (GS_REORDER_DEV_RCM_MIN_NNZ = 2^20 in
   * solvers/reorder.c), no hook */
  gs_csr_t *A = shuffled_laplacian(600, 500);
  CU_ASSERT(A->nnz >= ((gs_off_t)1 << 20));
  dev_vs_host(A, GS_REORDER_RCM, 0.0, 0, 1, "shuffled grid 600 x 500");
  A->symmetry = GS_SYM_SYMMETRIC;
  dev_vs_host(A, GS_REORDER_RCM, 0.0, 0, 1, "shuffled grid 600 x 500, claimed symmetric");
  gs_csr_destroy(&A);
  /* a nonsymmetric pattern in general storage: the graph of A + A^T on both */
  A = directed_pattern(20000, 3.0, GS_SYM_GENERAL);
  dev_vs_host(A, GS_REORDER_RCM, 0.0, 1, 1, "nonsymmetric pattern");
  gs_csr_destroy(&A);
  /* a false claim of symmetry: the device declines, the host walks A's directed pattern (kept
   * small: that walk's root search takes minutes at a million entries) */
  A = directed_pattern(3000, 3.0, GS_SYM_SYMMETRIC);
  dev_vs_host(A, GS_REORDER_RCM, 0.0, 1, 0, "nonsymmetric pattern claimed symmetric");
  gs_csr_destroy(&A);

  /* the device runs out of memory at its k-th allocation, k = 1 (the device RCM's first) up to
   * the first k past them all: the host orders instead and the create succeeds without an
   * error message, or an allocation after the ordering (the permutation's) fails with
   * GS_ERR_DEVICE_MEMORY; nothing leaked either way */
  A = shuffled_laplacian(40, 31);
  gs_reorder_t *H = NULL;
  gs_test_reorder_dev_rcm(ctx, 2);
  CU_ASSERT_FATAL(gs_reorder_create(&H, ctx, A, GS_REORDER_RCM, 0.0) == GS_SUCCESS);
  const size_t base = gs_device_bytes_in_use(ctx);
  gs_test_reorder_dev_rcm(ctx, 1);
  int fell_back = 0, failed = 0, on_dev = 0;
  long k = 1;
  for (; k <= 64 && !on_dev; ++k) {
    gs_reorder_t *Q = NULL;
    gs_reorder_info_t in;
    gs_clear_error();
    gs_test_dmalloc_fail_after(ctx, k);
    const gs_status_t s = gs_reorder_create(&Q, ctx, A, GS_REORDER_RCM, 0.0);
    gs_test_dmalloc_fail_after(ctx, 0);
    CU_ASSERT(s == GS_SUCCESS || s == GS_ERR_DEVICE_MEMORY);
    CU_ASSERT((s == GS_SUCCESS) == (Q != NULL));
    if (s == GS_SUCCESS) {
      CU_ASSERT_FATAL(gs_reorder_info(Q, &in) == GS_SUCCESS);
      const int dev = strcmp(in.note, dev_note) == 0;
      on_dev += dev;
      fell_back += !dev;
      if (!dev) CU_ASSERT_STRING_EQUAL(gs_last_error(), "");
      CU_ASSERT(memcmp(gs_reorder_perm(Q), gs_reorder_perm(H),
                       (size_t)A->m * sizeof *gs_reorder_perm(H)) == 0);
      CU_ASSERT(same_csr(gs_reorder_csr(Q), gs_reorder_csr(H)));
    } else {
      ++failed;
    }
    if (k == 1) CU_ASSERT(s == GS_SUCCESS && fell_back == 1);
    gs_reorder_destroy(&Q);
    CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
  }
  CU_ASSERT(fell_back >= 1 && failed >= 1 && on_dev == 1);
  printf("  allocation k = 1..%ld failing, hook 1: %d fell back to the host, %d failed, "
         "%d ordered on the device\n", k - 1, fell_back, failed, on_dev);
  gs_test_reorder_dev_rcm(ctx, 0);
  gs_reorder_destroy(&H);
  gs_csr_destroy(&A);
}

int main(void)
{
  g_state = gs_test_seed() ^ 0x5e0dull;
  if (gs_device_count() > 0 && gs_context_create(&ctx, 0) != GS_SUCCESS) {
    fprintf(stderr, "context: %s\n", gs_last_error());
    return 1;
  }
  CU_TestInfo tests[] = {
      {"gs_reorder_vector: P v is the gather, P^T P v = v", test_vector},
      {"solves through rcm and degree: x within the residuals' bound of the plain solve",
       test_solves},
      {"auto declines before ordering when no saving could pay it", test_auto_early},
      {"refusals and allocation failures, nothing leaked", test_refusals_and_faults},
      {"rcm on the GPU (hook, threshold, declines, fallback): the host's permutation",
       test_rcm_device},
      CU_TEST_INFO_NULL};
  const int rc = gs_test_main("reorder_gpu", tests, 1);
  gs_context_destroy(&ctx);
  return rc;
}
