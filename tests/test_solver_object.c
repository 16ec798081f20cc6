/* tests/test_solver_object.c: the seams of issue 8 on the GPU (exit 77 without one):
 *  - contexts: a solve, an SpMV or a preconditioner given another context than the objects
 *    were made on is refused (GS_ERR_INVALID_ARG), where it used to run SpMV and vector work on
 *    two unordered streams and report a wrong "stagnation"; the same solve on its own context
 *    converges;
 *  - the solver object: setup allocates, repeated solves allocate nothing and repeat the
 *    iteration count of gs_solve;
 *  - the operator seam: a transposed view (A^T x = b solved through op T of the backend) and a
 *    matrix-free shell solved by CG;
 *  - per-instance capabilities and the allocator counted per context. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/testhooks.h"
#include "tests/testutil.h"

/* A nonsymmetric diagonally dominant matrix (convection-diffusion-like, seeded) of order n. */
static gs_csr_t *nonsym(uint64_t *rng, gs_idx_t n)
{
  gs_coo_t *C = NULL;
  gs_csr_t *H = NULL;
  CU_ASSERT_FATAL(gs_coo_create(&C, n, n, 5 * (int64_t)n) == GS_SUCCESS);
  for (gs_idx_t i = 0; i < n; ++i) {
    gs_coo_push(C, i, i, 4.0 + gs_test_uniform(rng));
    if (i > 0) gs_coo_push(C, i, i - 1, -1.0 - 0.5 * gs_test_uniform(rng));
    if (i + 1 < n) gs_coo_push(C, i, i + 1, -0.3);
    if (i + 7 < n) gs_coo_push(C, i, i + 7, -0.2 * gs_test_uniform(rng));
  }
  CU_ASSERT_FATAL(gs_coo_to_csr(&H, C) == GS_SUCCESS);
  gs_coo_destroy(&C);
  return H;
}

/* ||b - op(H) x|| / ||b|| on the host. */
static double host_rel_residual(const gs_csr_t *H, gs_op_t op, const double *x, const double *b)
{
  gs_idx_t n = op == GS_OP_N ? H->m : H->n;
  double *r = malloc((size_t)n * sizeof *r);
  CU_ASSERT_FATAL(r != NULL);
  memcpy(r, b, (size_t)n * sizeof *r);
  CU_ASSERT_FATAL(gs_csr_spmv_host(H, op, -1.0, x, 1.0, r) == GS_SUCCESS);
  double num = 0.0, den = 0.0;
  for (gs_idx_t i = 0; i < n; ++i) {
    num += r[i] * r[i];
    den += b[i] * b[i];
  }
  free(r);
  return sqrt(num / den);
}

static double *upload(gs_context_t *c, const double *h, size_t n)
{
  double *d = NULL;
  CU_ASSERT_FATAL(gs_dmalloc(c, (void **)&d, n * sizeof *d, "v") == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_copy_to_device(c, d, h, n * sizeof *d) == GS_SUCCESS);
  return d;
}

static void test_context_mismatch(void)
{
  gs_context_t *c1 = NULL, *c2 = NULL;
  gs_csr_t *H = NULL;
  gs_matrix_t *A = NULL, *A2 = NULL;
  gs_spmv_t *S = NULL, *S_bad = NULL;
  gs_precond_t *M1 = NULL, *M2 = NULL;
  gs_solve_stats_t st;
  CU_ASSERT_FATAL(gs_context_create(&c1, 0) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_context_create(&c2, 0) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_gen_laplace(&H, 40, 40, 40, 7) == GS_SUCCESS);
  const gs_idx_t n = H->m;
  double *ones = malloc((size_t)n * sizeof *ones), *b = malloc((size_t)n * sizeof *b);
  CU_ASSERT_FATAL(ones && b);
  for (gs_idx_t i = 0; i < n; ++i) ones[i] = 1.0;
  CU_ASSERT_FATAL(gs_csr_spmv_host(H, GS_OP_N, 1.0, ones, 0.0, b) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_matrix_create(&A, c1, H) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_spmv_create(&S, c1, A, "csr-vector", NULL) == GS_SUCCESS);
  /* an SpMV or a preconditioner on another context than the matrix's */
  CU_ASSERT_EQUAL(gs_spmv_create(&S_bad, c2, A, "csr-vector", NULL), GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NULL(S_bad);
  CU_ASSERT_EQUAL(gs_precond_create(&M2, c2, A, "jacobi"), GS_ERR_INVALID_ARG);
  CU_ASSERT_FATAL(gs_precond_create(&M1, c1, A, "jacobi") == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_matrix_create(&A2, c2, H) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_precond_create(&M2, c2, A2, "jacobi") == GS_SUCCESS);

  double *d_b = upload(c1, b, (size_t)n), *d_x = NULL;
  CU_ASSERT_FATAL(gs_dmalloc(c1, (void **)&d_x, (size_t)n * sizeof *d_x, "x") == GS_SUCCESS);
  gs_solve_opts_t o;
  gs_solve_opts_default(&o);
  o.method = GS_SOLVER_CG;
  /* the solve's context differs from S's: refused, nothing run */
  CU_ASSERT_EQUAL(gs_solve(c2, &o, S, NULL, d_b, d_x, &st), GS_ERR_INVALID_ARG);
  CU_ASSERT(strstr(gs_last_error(), "context") != NULL);
  CU_ASSERT_EQUAL(st.reason, GS_REASON_NONE);
  /* S and the solve agree, M is another context's */
  CU_ASSERT_EQUAL(gs_solve(c1, &o, S, M2, d_b, d_x, &st), GS_ERR_INVALID_ARG);
  CU_ASSERT(strstr(gs_last_error(), "preconditioner") != NULL);
  /* all on one context: converges */
  CU_ASSERT_EQUAL_FATAL(gs_solve(c1, &o, S, M1, d_b, d_x, &st), GS_SUCCESS);
  CU_ASSERT_EQUAL(st.reason, GS_CONVERGED_RTOL);
  CU_ASSERT(st.rel_residual <= 10 * o.rtol);

  /* the allocator counts per context: c2's allocations are not c1's */
  size_t in1 = gs_device_bytes_in_use(c1), in2 = gs_device_bytes_in_use(c2);
  void *p = NULL;
  CU_ASSERT_FATAL(gs_dmalloc(c2, &p, 4096, "probe") == GS_SUCCESS);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(c2), in2 + 4096);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(c1), in1);
  gs_dfree(c1, p); /* not c1's: left alone, c2 still counts it */
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(c2), in2 + 4096);
  gs_dfree(c2, p);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(c2), in2);
  /* failure injection is per context too */
  gs_test_dmalloc_fail_after(c2, 1);
  CU_ASSERT_EQUAL(gs_dmalloc(c1, &p, 64, "probe"), GS_SUCCESS);
  gs_dfree(c1, p);
  CU_ASSERT_EQUAL(gs_dmalloc(c2, &p, 64, "probe"), GS_ERR_DEVICE_MEMORY);
  gs_test_dmalloc_fail_after(c2, 0);

  gs_dfree(c1, d_b);
  gs_dfree(c1, d_x);
  gs_precond_destroy(&M1);
  gs_precond_destroy(&M2);
  gs_spmv_destroy(&S);
  gs_matrix_destroy(&A);
  gs_matrix_destroy(&A2);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(c1), 0);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(c2), 0);
  gs_csr_destroy(&H);
  free(ones);
  free(b);
  gs_context_destroy(&c1);
  gs_context_destroy(&c2);
}

/* Create / setup / solve twice: the second solve allocates nothing and repeats the first. */
static void test_solver_reuse(void)
{
  static const gs_method_t methods[] = {GS_SOLVER_CG, GS_SOLVER_BICGSTAB, GS_SOLVER_GMRES,
                                        GS_SOLVER_PIPECG};
  gs_context_t *c = NULL;
  gs_csr_t *H = NULL;
  gs_matrix_t *A = NULL;
  gs_spmv_t *S = NULL;
  gs_operator_t *op = NULL;
  CU_ASSERT_FATAL(gs_context_create(&c, 0) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_gen_laplace(&H, 30, 30, 30, 27) == GS_SUCCESS);
  const gs_idx_t n = H->m;
  double *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x);
  CU_ASSERT_FATAL(b && x);
  for (gs_idx_t i = 0; i < n; ++i) b[i] = 1.0 + (double)(i % 13);
  CU_ASSERT_FATAL(gs_matrix_create(&A, c, H) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_spmv_create(&S, c, A, "csr-vector", NULL) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_operator_from_spmv(&op, S) == GS_SUCCESS);
  double *d_b = upload(c, b, (size_t)n), *d_x = NULL;
  CU_ASSERT_FATAL(gs_dmalloc(c, (void **)&d_x, (size_t)n * sizeof *d_x, "x") == GS_SUCCESS);
  for (size_t k = 0; k < sizeof methods / sizeof methods[0]; ++k) {
    gs_solve_opts_t o;
    gs_solve_opts_default(&o);
    o.method = methods[k];
    gs_solver_t *s = NULL;
    gs_solve_stats_t st1, st2, st0;
    CU_ASSERT_FATAL(gs_solve(c, &o, S, NULL, d_b, d_x, &st0) == GS_SUCCESS);
    CU_ASSERT_FATAL(gs_solver_create(&s, c, &o) == GS_SUCCESS);
    CU_ASSERT_EQUAL(gs_solver_solve(s, d_b, d_x, &st1), GS_ERR_INVALID_ARG); /* no setup yet */
    CU_ASSERT_FATAL(gs_solver_setup(s, op, NULL) == GS_SUCCESS);
    CU_ASSERT_EQUAL(gs_solver_method(s), methods[k]);
    const size_t after_setup = gs_device_bytes_in_use(c);
    gs_test_dmalloc_fail_after(c, 1); /* any allocation in a solve would now fail */
    CU_ASSERT_EQUAL(gs_solver_solve(s, d_b, d_x, &st1), GS_SUCCESS);
    CU_ASSERT_EQUAL(gs_solver_solve(s, d_b, d_x, &st2), GS_SUCCESS);
    gs_test_dmalloc_fail_after(c, 0);
    CU_ASSERT_EQUAL(gs_device_bytes_in_use(c), after_setup);
    CU_ASSERT(gs_reason_converged(st1.reason));
    CU_ASSERT_EQUAL(st1.reason, st2.reason);
    CU_ASSERT_EQUAL(st1.iterations, st2.iterations); /* same stream, same data, same kernels */
    CU_ASSERT_EQUAL(st1.iterations, st0.iterations);
    CU_ASSERT_FATAL(gs_copy_to_host(c, x, d_x, (size_t)n * sizeof *x) == GS_SUCCESS);
    CU_ASSERT(host_rel_residual(H, GS_OP_N, x, b) <= 10 * o.rtol);
    gs_solver_destroy(&s);
    CU_ASSERT_PTR_NULL(s);
  }
  gs_solver_destroy(NULL);
  gs_dfree(c, d_b);
  gs_dfree(c, d_x);
  gs_operator_destroy(&op);
  gs_spmv_destroy(&S);
  gs_matrix_destroy(&A);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(c), 0);
  gs_csr_destroy(&H);
  free(b);
  free(x);
  gs_context_destroy(&c);
}

/* A^T x = b through the transposed view, for every backend that has op T on this matrix. */
static void test_transpose_view(void)
{
  uint64_t rng = gs_test_seed();
  gs_context_t *c = NULL;
  gs_matrix_t *A = NULL;
  CU_ASSERT_FATAL(gs_context_create(&c, 0) == GS_SUCCESS);
  gs_csr_t *H = nonsym(&rng, 3000);
  const gs_idx_t n = H->m;
  double *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x);
  CU_ASSERT_FATAL(b && x);
  for (gs_idx_t i = 0; i < n; ++i) b[i] = gs_test_uniform(&rng) - 0.5;
  CU_ASSERT_FATAL(gs_matrix_create(&A, c, H) == GS_SUCCESS);
  double *d_b = upload(c, b, (size_t)n), *d_x = NULL;
  CU_ASSERT_FATAL(gs_dmalloc(c, (void **)&d_x, (size_t)n * sizeof *d_x, "x") == GS_SUCCESS);
  int tried = 0;
  for (int i = 0; i < gs_spmv_backend_count(); ++i) {
    gs_spmv_t *S = NULL;
    gs_operator_t *op = NULL, *opT = NULL;
    if (gs_spmv_create(&S, c, A, gs_spmv_backend_name(i), NULL) != GS_SUCCESS) continue;
    CU_ASSERT_FATAL(gs_operator_from_spmv(&op, S) == GS_SUCCESS);
    gs_status_t st = gs_operator_transpose(&opT, op);
    if (!gs_spmv_supports(S, GS_OP_T)) {
      CU_ASSERT_EQUAL(st, GS_ERR_UNSUPPORTED);
    } else {
      CU_ASSERT_FATAL(st == GS_SUCCESS);
      CU_ASSERT(gs_operator_is_transposed(opT));
      CU_ASSERT_EQUAL(gs_operator_rows(opT), gs_operator_cols(op));
      gs_solve_opts_t o;
      gs_solve_opts_default(&o);
      o.method = GS_SOLVER_BICGSTAB;
      gs_solver_t *s = NULL;
      gs_solve_stats_t ss;
      CU_ASSERT_FATAL(gs_solver_create(&s, c, &o) == GS_SUCCESS);
      CU_ASSERT_FATAL(gs_solver_setup(s, opT, NULL) == GS_SUCCESS);
      CU_ASSERT_EQUAL(gs_solver_solve(s, d_b, d_x, &ss), GS_SUCCESS);
      CU_ASSERT(gs_reason_converged(ss.reason));
      CU_ASSERT_FATAL(gs_copy_to_host(c, x, d_x, (size_t)n * sizeof *x) == GS_SUCCESS);
      double rr = host_rel_residual(H, GS_OP_T, x, b);
      if (!(rr <= 10 * o.rtol))
        fprintf(stderr, "transpose view, %s: ||b - A^T x|| / ||b|| = %.3g\n",
                gs_spmv_backend_name(i), rr);
      CU_ASSERT(rr <= 10 * o.rtol);
      /* and A x = b through the same product is another system: its residual differs */
      CU_ASSERT(host_rel_residual(H, GS_OP_N, x, b) > 1e-6);
      gs_solver_destroy(&s);
      ++tried;
    }
    gs_operator_destroy(&opT);
    gs_operator_destroy(&op);
    gs_spmv_destroy(&S);
  }
  CU_ASSERT(tried >= 3);
  gs_dfree(c, d_b);
  gs_dfree(c, d_x);
  gs_matrix_destroy(&A);
  gs_csr_destroy(&H);
  free(b);
  free(x);
  gs_context_destroy(&c);
}

/* A matrix-free operator: y = alpha A x + beta y through a prepared product the shell owns,
 * counted, so that the test sees the solver call it. */
typedef struct {
  gs_spmv_t *S;
  long calls;
} shell_t;

static gs_status_t shell_apply(void *user, gs_op_t op, double alpha, const double *x, double beta,
                               double *y)
{
  shell_t *sh = user;
  sh->calls++;
  return gs_spmv_apply(sh->S, op, alpha, x, beta, y);
}

static void test_shell_operator(void)
{
  gs_context_t *c = NULL;
  gs_csr_t *H = NULL;
  gs_matrix_t *A = NULL;
  shell_t sh = {NULL, 0};
  gs_operator_t *op = NULL;
  CU_ASSERT_FATAL(gs_context_create(&c, 0) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_gen_laplace(&H, 200, 200, 1, 5) == GS_SUCCESS);
  const gs_idx_t n = H->m;
  double *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x);
  CU_ASSERT_FATAL(b && x);
  for (gs_idx_t i = 0; i < n; ++i) b[i] = (double)(i % 5) - 2.0;
  CU_ASSERT_FATAL(gs_matrix_create(&A, c, H) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_spmv_create(&sh.S, c, A, "csr-scalar", NULL) == GS_SUCCESS);
  CU_ASSERT_EQUAL(gs_operator_create_shell(&op, c, n, n + 1, 0, shell_apply, &sh), GS_SUCCESS);
  gs_solver_t *s = NULL;
  gs_solve_opts_t o;
  gs_solve_opts_default(&o); /* AUTO on a shell: BiCGSTAB (no matrix to look at) */
  CU_ASSERT_FATAL(gs_solver_create(&s, c, &o) == GS_SUCCESS);
  /* n x (n+1): auto picks LSQR for a rectangular operator, which needs A^T: this shell has
   * none; CG needs a square one */
  CU_ASSERT_EQUAL(gs_solver_setup(s, op, NULL), GS_ERR_UNSUPPORTED);
  CU_ASSERT(strstr(gs_last_error(), "lsqr") != NULL && strstr(gs_last_error(), "shell") != NULL);
  gs_solve_opts_t ocg = o;
  ocg.method = GS_SOLVER_CG;
  gs_solver_t *scg = NULL;
  CU_ASSERT_FATAL(gs_solver_create(&scg, c, &ocg) == GS_SUCCESS);
  CU_ASSERT_EQUAL(gs_solver_setup(scg, op, NULL), GS_ERR_DIMENSION);
  gs_solver_destroy(&scg);
  gs_operator_destroy(&op);
  CU_ASSERT_FATAL(gs_operator_create_shell(&op, c, n, n, 0, shell_apply, &sh) == GS_SUCCESS);
  CU_ASSERT_PTR_NULL(gs_operator_matrix(op));
  CU_ASSERT_EQUAL(gs_operator_apply(op, GS_OP_T, 1.0, NULL, 0.0, NULL), GS_ERR_UNSUPPORTED);
  CU_ASSERT_FATAL(gs_solver_setup(s, op, NULL) == GS_SUCCESS);
  CU_ASSERT_EQUAL(gs_solver_method(s), GS_SOLVER_BICGSTAB);
  double *d_b = upload(c, b, (size_t)n), *d_x = NULL;
  CU_ASSERT_FATAL(gs_dmalloc(c, (void **)&d_x, (size_t)n * sizeof *d_x, "x") == GS_SUCCESS);
  gs_solve_stats_t st;
  CU_ASSERT_EQUAL(gs_solver_solve(s, d_b, d_x, &st), GS_SUCCESS);
  CU_ASSERT(gs_reason_converged(st.reason));
  CU_ASSERT_EQUAL(sh.calls, st.spmv_count); /* every product went through the shell */
  CU_ASSERT_FATAL(gs_copy_to_host(c, x, d_x, (size_t)n * sizeof *x) == GS_SUCCESS);
  CU_ASSERT(host_rel_residual(H, GS_OP_N, x, b) <= 10 * o.rtol);
  gs_solver_destroy(&s);
  gs_operator_destroy(&op);
  gs_dfree(c, d_b);
  gs_dfree(c, d_x);
  gs_spmv_destroy(&sh.S);
  gs_matrix_destroy(&A);
  gs_csr_destroy(&H);
  free(b);
  free(x);
  gs_context_destroy(&c);
}

/* Capabilities are per prepared instance and agree with what apply does. */
static void test_capabilities(void)
{
  gs_context_t *c = NULL;
  gs_csr_t *H = NULL;
  gs_matrix_t *A = NULL;
  CU_ASSERT_FATAL(gs_context_create(&c, 0) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_gen_pareto(&H, 20000, 1.0, gs_test_seed()) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_matrix_create(&A, c, H) == GS_SUCCESS);
  double *d_x = NULL, *d_y = NULL;
  size_t len = (size_t)(H->m > H->n ? H->m : H->n);
  CU_ASSERT_FATAL(gs_dmalloc(c, (void **)&d_x, len * sizeof *d_x, "x") == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_dmalloc(c, (void **)&d_y, len * sizeof *d_y, "y") == GS_SUCCESS);
  double *zeros = calloc(len, sizeof *zeros);
  CU_ASSERT_FATAL(zeros != NULL);
  CU_ASSERT_FATAL(gs_copy_to_device(c, d_x, zeros, len * sizeof *d_x) == GS_SUCCESS);
  free(zeros);
  for (int i = 0; i < gs_spmv_backend_count(); ++i) {
    gs_spmv_t *S = NULL;
    const char *name = gs_spmv_backend_name(i);
    if (gs_spmv_create(&S, c, A, name, NULL) != GS_SUCCESS) continue; /* refused: fill */
    unsigned caps = gs_spmv_caps(S);
    CU_ASSERT(caps & GS_SPMV_CAP_CAPTURABLE);
    gs_status_t st = gs_spmv_apply(S, GS_OP_T, 1.0, d_x, 0.0, d_y);
    CU_ASSERT_EQUAL(st, (caps & GS_SPMV_CAP_TRANSPOSE) ? GS_SUCCESS : GS_ERR_UNSUPPORTED);
    CU_ASSERT_EQUAL(gs_spmv_supports(S, GS_OP_T), (caps & GS_SPMV_CAP_TRANSPOSE) != 0);
    if (caps & GS_SPMV_CAP_TRANSPOSE) { /* every op T here with atomics is marked so */
      if (!strcmp(name, "coo") || !strcmp(name, "hyb") || !strcmp(name, "csr-vector"))
        CU_ASSERT(!(caps & GS_SPMV_CAP_DETERMINISTIC_T));
    }
    if (!strcmp(name, "cusparse-csr2") || !strcmp(name, "csr-scalar"))
      CU_ASSERT(caps & GS_SPMV_CAP_DETERMINISTIC);
    gs_spmv_destroy(&S);
  }
  gs_dfree(c, d_x);
  gs_dfree(c, d_y);
  gs_matrix_destroy(&A);
  gs_csr_destroy(&H);
  gs_context_destroy(&c);
}

int main(void)
{
  CU_TestInfo tests[] = {{"context mismatch refused, per-context allocator", test_context_mismatch},
                         {"solver object: setup once, solve twice", test_solver_reuse},
                         {"transposed view: A^T x = b for every backend", test_transpose_view},
                         {"matrix-free shell operator", test_shell_operator},
                         {"per-instance capabilities", test_capabilities},
                         CU_TEST_INFO_NULL};
  return gs_test_main("solver_object", tests, 1);
}
