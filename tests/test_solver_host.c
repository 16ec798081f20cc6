/* tests/test_solver_host.c: what the solver layer decides without a device, on any machine (host
 * suite): the method table (names, ABI values, what each method needs), the stop reasons, which
 * preconditioners serve methods that apply M^-T, the default of the persistent iterations, and
 * argument checks that return before any device work. Solving itself is in the GPU suites
 * test_solvers and test_solver_object. */
#include <stdio.h>
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

/* opts.persistent: the values are ABI (DEFAULT appended, 0 still OFF); the default is DEFAULT,
 * which runs them where the library chose the backend and leaves a named backend alone, while
 * an explicit value always wins; gs_solver_create takes the four values and refuses others
 * by name (a zeroed context: create and destroy never reach the device). */
static void test_persistent_default(void)
{
  CU_ASSERT_EQUAL(GS_PERSISTENT_OFF, 0);
  CU_ASSERT_EQUAL(GS_PERSISTENT_ON, 1);
  CU_ASSERT_EQUAL(GS_PERSISTENT_AUTO, 2);
  CU_ASSERT_EQUAL(GS_PERSISTENT_DEFAULT, 3);
  gs_solve_opts_t o;
  gs_solve_opts_default(&o);
  CU_ASSERT_EQUAL(o.persistent, GS_PERSISTENT_DEFAULT);

  /* requested x backend auto-selected -> effective */
  static const struct {
    int requested, auto_selected, effective;
  } rule[] = {
    {GS_PERSISTENT_DEFAULT, 1, GS_PERSISTENT_AUTO}, /* --format auto: where it serves */
    {GS_PERSISTENT_DEFAULT, 0, GS_PERSISTENT_OFF},  /* a named format (and --format all) */
    {GS_PERSISTENT_OFF, 1, GS_PERSISTENT_OFF},      /* explicit values win either way */
    {GS_PERSISTENT_OFF, 0, GS_PERSISTENT_OFF},
    {GS_PERSISTENT_ON, 1, GS_PERSISTENT_ON},
    {GS_PERSISTENT_ON, 0, GS_PERSISTENT_ON},
    {GS_PERSISTENT_AUTO, 1, GS_PERSISTENT_AUTO},
    {GS_PERSISTENT_AUTO, 0, GS_PERSISTENT_AUTO},
    {7, 1, 7}, /* not resolved: gs_solver_create refuses it */
    {-1, 0, -1},
  };
  for (size_t k = 0; k < sizeof rule / sizeof rule[0]; ++k) {
    const int got = gs_solve_persistent_resolve(rule[k].requested, rule[k].auto_selected);
    CU_ASSERT_EQUAL(got, rule[k].effective);
    if (got != rule[k].effective)
      fprintf(stderr, "\n  resolve(%d, %d) = %d, want %d", rule[k].requested,
              rule[k].auto_selected, got, rule[k].effective);
  }
  CU_ASSERT_EQUAL(gs_solve_persistent_resolve(GS_PERSISTENT_DEFAULT, 2), GS_PERSISTENT_AUTO);

  static gs_context_t fake; /* zeroed: create validates, destroy frees nothing of it */
  for (int v = GS_PERSISTENT_OFF; v <= GS_PERSISTENT_DEFAULT; ++v) {
    gs_solver_t *s = NULL;
    o.persistent = v;
    CU_ASSERT_EQUAL(gs_solver_create(&s, &fake, &o), GS_SUCCESS);
    CU_ASSERT_PTR_NOT_NULL(s);
    gs_solver_destroy(&s);
  }
  static const int bad[] = {-1, 4, 100};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
    gs_solver_t *s = (gs_solver_t *)&s;
    o.persistent = bad[k];
    CU_ASSERT_EQUAL(gs_solver_create(&s, &fake, &o), GS_ERR_INVALID_ARG);
    CU_ASSERT_PTR_NULL(s);
    CU_ASSERT(strstr(gs_last_error(), "persistent") != NULL &&
              strstr(gs_last_error(), "_DEFAULT") != NULL);
  }
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
    {"persistent iterations: ABI values, the default's rule, checks", test_persistent_default},
    {"argument checks before the device", test_arguments},
    {"square methods refuse a rectangular operator", test_rectangular_refused},
    CU_TEST_INFO_NULL,
  };
  return gs_test_main("solver_host", tests, 0);
}
