/* tests/test_solver_host.c: what the solver layer decides without a device, on any machine (host
 * suite): the method table (names, ABI values, what each method needs), the stop reasons, which
 * preconditioners serve methods that apply M^-T, and argument checks that return before any
 * device work. Solving itself is in the GPU suites test_solvers and test_solver_object. */
#include <string.h>

#include "core/context_impl.h"
#include "tests/testutil.h"

/* The enum values are ABI: new methods were appended after GS_SOLVER_AUTO. */
static void test_methods(void)
{
  CU_ASSERT_EQUAL(GS_SOLVER_CG, 0);
  CU_ASSERT_EQUAL(GS_SOLVER_BICGSTAB, 1);
  CU_ASSERT_EQUAL(GS_SOLVER_GMRES, 2);
  CU_ASSERT_EQUAL(GS_SOLVER_AUTO, 3);
  CU_ASSERT_EQUAL(GS_SOLVER_BICG, 4);
  CU_ASSERT_EQUAL(GS_SOLVER_CGNR, 5);
  CU_ASSERT_EQUAL(GS_SOLVER_LSQR, 6);
  CU_ASSERT_EQUAL(GS_SOLVER_PIPECG, 7);
  static const char *const names[] = {"cg",   "bicgstab", "gmres", "auto",
                                      "bicg", "cgnr",     "lsqr",  "pipecg"};
  for (int m = 0; m < 8; ++m) {
    CU_ASSERT_STRING_EQUAL(gs_method_string((gs_method_t)m), names[m]);
    CU_ASSERT_EQUAL(gs_method_find(names[m]), m);
  }
  CU_ASSERT_STRING_EQUAL(gs_method_string((gs_method_t)8), "unknown");
  CU_ASSERT_STRING_EQUAL(gs_method_string((gs_method_t)-1), "unknown");
  CU_ASSERT_EQUAL(gs_method_find("lsmr"), -1);
  CU_ASSERT_EQUAL(gs_method_find(NULL), -1);
  CU_ASSERT_EQUAL(gs_method_find("LSQR"), -1); /* names are lowercase, as the CLI's */
  CU_ASSERT_EQUAL(gs_method_find("pipe-cg"), -1);
  CU_ASSERT_EQUAL(gs_method_find("pipecgrr"), -1);

  const unsigned sq = GS_METHOD_SQUARE, tr = GS_METHOD_TRANSPOSE, ls = GS_METHOD_LEAST_SQUARES,
                 spc = GS_METHOD_SYMMETRIC_PC;
  CU_ASSERT_EQUAL(gs_method_flags(GS_SOLVER_CG), sq);
  CU_ASSERT_EQUAL(gs_method_flags(GS_SOLVER_BICGSTAB), sq);
  CU_ASSERT_EQUAL(gs_method_flags(GS_SOLVER_GMRES), sq);
  CU_ASSERT_EQUAL(gs_method_flags(GS_SOLVER_AUTO), 0u);
  CU_ASSERT_EQUAL(gs_method_flags(GS_SOLVER_BICG), sq | tr | spc);
  CU_ASSERT_EQUAL(gs_method_flags(GS_SOLVER_CGNR), tr | ls);
  CU_ASSERT_EQUAL(gs_method_flags(GS_SOLVER_LSQR), tr | ls);
  CU_ASSERT_EQUAL(gs_method_flags(GS_SOLVER_PIPECG), sq); /* as CG: square, any M */
  CU_ASSERT_EQUAL(gs_method_flags((gs_method_t)8), 0u);
  CU_ASSERT_EQUAL(gs_method_flags((gs_method_t)-1), 0u);
}

/* PETSc's numbers for the least-squares reasons; converged ones are positive. */
static void test_reasons(void)
{
  CU_ASSERT_EQUAL(GS_CONVERGED_RTOL_NORMAL, 1);
  CU_ASSERT_EQUAL(GS_CONVERGED_ATOL_NORMAL, 9);
  CU_ASSERT(gs_reason_converged(GS_CONVERGED_RTOL_NORMAL));
  CU_ASSERT(gs_reason_converged(GS_CONVERGED_ATOL_NORMAL));
  CU_ASSERT_STRING_EQUAL(gs_reason_string(GS_CONVERGED_RTOL_NORMAL), "converged_rtol_normal");
  CU_ASSERT_STRING_EQUAL(gs_reason_string(GS_CONVERGED_ATOL_NORMAL), "converged_atol_normal");
  CU_ASSERT(strstr(gs_reason_describe(GS_CONVERGED_RTOL_NORMAL), "least-squares") != NULL);
  CU_ASSERT(strstr(gs_reason_describe(GS_CONVERGED_ATOL_NORMAL), "A^T r") != NULL);
  CU_ASSERT(!gs_reason_converged(GS_DIVERGED_BREAKDOWN));
}

/* bicg applies M^-T as M^-1: only the symmetric preconditioners serve it. */
static void test_precond_symmetry(void)
{
  CU_ASSERT(gs_precond_symmetric_at(gs_precond_find("none")));
  CU_ASSERT(gs_precond_symmetric_at(gs_precond_find("jacobi")));
  CU_ASSERT(gs_precond_symmetric_at(gs_precond_find("ic0")));
  CU_ASSERT(!gs_precond_symmetric_at(gs_precond_find("ilu0")));
  CU_ASSERT(!gs_precond_symmetric_at(-1));
  CU_ASSERT(!gs_precond_symmetric_at(gs_precond_count()));
  CU_ASSERT(gs_precond_is_symmetric(NULL)); /* no preconditioner: M = I */
}

/* Checks that return before the device is touched: NULL arguments, and options, for the new
 * methods too (a context pointer the library never dereferences on these paths). */
static void test_arguments(void)
{
  gs_solver_t *s = (gs_solver_t *)&s;
  gs_solve_opts_t o;
  gs_solve_stats_t st;
  int not_a_context;
  gs_context_t *fake = (gs_context_t *)&not_a_context;

  CU_ASSERT_EQUAL(gs_solver_create(&s, NULL, NULL), GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NULL(s);
  CU_ASSERT_EQUAL(gs_solver_create(NULL, fake, NULL), GS_ERR_INVALID_ARG);
  gs_solve_opts_default(&o);
  o.method = (gs_method_t)8;
  CU_ASSERT_EQUAL(gs_solver_create(&s, fake, &o), GS_ERR_INVALID_ARG);
  CU_ASSERT(strstr(gs_last_error(), "unknown method 8") != NULL);
  CU_ASSERT_PTR_NULL(s);
  /* the new methods pass the method check: the next check (tolerances) is the one that fails */
  for (int m = GS_SOLVER_BICG; m <= GS_SOLVER_PIPECG; ++m) {
    gs_solve_opts_default(&o);
    o.method = (gs_method_t)m;
    o.rtol = -1.0;
    CU_ASSERT_EQUAL(gs_solver_create(&s, fake, &o), GS_ERR_INVALID_ARG);
    CU_ASSERT(strstr(gs_last_error(), "tolerances") != NULL);
    CU_ASSERT_PTR_NULL(s);
  }
  CU_ASSERT_EQUAL(gs_solver_setup(NULL, NULL, NULL), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_solver_solve(NULL, NULL, NULL, &st), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(st.reason, GS_REASON_NONE);
  CU_ASSERT_EQUAL(gs_solve(NULL, NULL, NULL, NULL, NULL, NULL, &st), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_solver_method(NULL), GS_SOLVER_AUTO);
  gs_solver_destroy(NULL);
  CU_ASSERT_STRING_EQUAL(gs_operator_name(NULL), "");
  CU_ASSERT_EQUAL(gs_operator_rows(NULL), 0);
}

/* The square methods refuse a rectangular operator in setup, before the device is touched: a
 * shell of 5 x 4 on a context that was never made (zeroed: setup returns before using it). */
static gs_status_t never_called(void *user, gs_op_t op, double alpha, const double *x,
                                double beta, double *y)
{
  (void)user, (void)op, (void)alpha, (void)x, (void)beta, (void)y;
  CU_FAIL("a product ran");
  return GS_ERR_INTERNAL;
}

static void test_rectangular_refused(void)
{
  static gs_context_t fake; /* zeroed; setup refuses before it reads any of it */
  gs_operator_t *op = NULL;
  CU_ASSERT_FATAL(gs_operator_create_shell(&op, &fake, 5, 4, 0, never_called, NULL) ==
                  GS_SUCCESS);
  static const gs_method_t square[] = {GS_SOLVER_CG, GS_SOLVER_PIPECG, GS_SOLVER_BICGSTAB,
                                       GS_SOLVER_GMRES};
  for (size_t k = 0; k < sizeof square / sizeof square[0]; ++k) {
    gs_solve_opts_t o;
    gs_solve_opts_default(&o);
    o.method = square[k];
    gs_solver_t *s = NULL;
    CU_ASSERT_FATAL(gs_solver_create(&s, &fake, &o) == GS_SUCCESS);
    CU_ASSERT_EQUAL(gs_solver_setup(s, op, NULL), GS_ERR_DIMENSION);
    CU_ASSERT(strstr(gs_last_error(), "5 x 4") && strstr(gs_last_error(), "square") &&
              strstr(gs_last_error(), gs_method_string(square[k])));
    CU_ASSERT_EQUAL(gs_solver_method(s), square[k]);
    gs_solver_destroy(&s);
    CU_ASSERT_PTR_NULL(s);
  }
  gs_operator_destroy(&op);
}

int main(void)
{
  CU_TestInfo tests[] = {
    {"method names, ABI values and needs", test_methods},
    {"stop reasons of least squares", test_reasons},
    {"symmetric preconditioners", test_precond_symmetry},
    {"argument checks before the device", test_arguments},
    {"square methods refuse a rectangular operator", test_rectangular_refused},
    CU_TEST_INFO_NULL,
  };
  return gs_test_main("solver_host", tests, 0);
}
