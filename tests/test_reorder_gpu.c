/* tests/test_reorder_gpu.c: the reordering inside solves (gs_reorder_create, gs_reorder_vector,
 * gs_solve_reordered; include/gpusolve/solver.h) on the GPU (exit 77 without one):
 *  - gs_reorder_vector: P v is the host gather v[perm[k]] bit for bit, and P^T (P v) = v;
 *  - a 2D Laplacian whose rows were shuffled: CG (none, jacobi, amg), BiCGSTAB (jacobi) and
 *    GMRES (none) on the rcm and degree orderings converge, and x differs from the plain
 *    solve's by at most (||r_1|| + ||r_2||) / lambda_min(A) (both residuals as the solves
 *    recomputed them; lambda_min of the 5-point Dirichlet Laplacian known in closed form),
 *    plus the rounding of that difference; the caller's b and x0 are unchanged;
 *  - refusals (NULL R, aliasing b and x, a product of another order) and allocation failures
 *    at each step, with nothing leaked. */
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
      CU_TEST_INFO_NULL};
  const int rc = gs_test_main("reorder_gpu", tests, 1);
  gs_context_destroy(&ctx);
  return rc;
}
