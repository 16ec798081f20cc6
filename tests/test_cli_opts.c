/* tests/test_cli_opts.c: the SpMV backend options of the command line (--spmv-opt, --max-fill,
 * --vector-width): listed by `spmv --list --verbose`, rejected before any matrix or device work
 * (so these run without a GPU), and applied by `check` on the host layouts. Host suite. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "tests/testutil.h"

static char out[1 << 16], err[1 << 14];

/* Runs `gpusolve ARGS`; expects exit 2, nothing on stdout and one line "gpusolve: ..." on stderr
 * that contains `needle`. Prints what it got when not. */
static void expect_bad_option(const char *args, const char *needle)
{
  int rc = gs_test_cli(args, out, sizeof out, err, sizeof err);
  size_t n = strlen(err);
  int one_line = n > 10 && !strncmp(err, "gpusolve: ", 10) && strchr(err, '\n') == err + n - 1;
  int ok = rc == 2 && out[0] == '\0' && one_line && strstr(err, needle) != NULL;
  if (!ok)
    fprintf(stderr, "\n  gpusolve %s: exit %d, want 2 and one line naming '%s'; stdout %zu bytes, "
            "stderr: %s", args, rc, needle, strlen(out), err);
  CU_ASSERT(ok);
}

/* The option line of `key` printed under backend `name` by `spmv --list --verbose`. */
static int lists_option(const char *name, const char *key)
{
  char want[128];
  snprintf(want, sizeof want, "--spmv-opt %s.%s=V ", name, key);
  const char *p = strstr(out, want);
  if (!p) fprintf(stderr, "\n  spmv --list --verbose does not show '%s'\n", want);
  return p != NULL && strstr(p, "(default ") != NULL;
}

static void test_list_verbose(void)
{
  CU_ASSERT_EQUAL_FATAL(gs_test_cli("spmv --list --verbose", out, sizeof out, err, sizeof err), 0);
  CU_ASSERT_STRING_EQUAL(err, "");
  CU_ASSERT(lists_option("csr-vector", "width"));
  CU_ASSERT(lists_option("hyb", "k"));
  CU_ASSERT(lists_option("ell", "max_fill"));
  CU_ASSERT(lists_option("dia", "max_fill"));
  if (gs_spmv_backend_find("cusparse-sell") >= 0) CU_ASSERT(lists_option("cusparse-sell", "max_fill"));
  /* plain --list stays one line per format, no options */
  CU_ASSERT_EQUAL_FATAL(gs_test_cli("spmv --list", out, sizeof out, err, sizeof err), 0);
  CU_ASSERT(strstr(out, "--spmv-opt") == NULL);
  int lines = 0;
  for (const char *p = out; (p = strchr(p, '\n')) != NULL; ++p) ++lines;
  CU_ASSERT_EQUAL(lines, gs_spmv_backend_count());
}

/* Each bad option: exit 2 with one line naming it, before the matrix is built or the device
 * opened (no matrix given: spmv would otherwise build its default matrix, then fail with 3). */
static void test_spmv_bad_options(void)
{
  expect_bad_option("spmv --spmv-opt nosuch=1", "nosuch");
  expect_bad_option("spmv --spmv-opt hyb.nosuch=1", "hyb.nosuch=1");
  expect_bad_option("spmv --spmv-opt hyb.k=x", "hyb.k=x");
  expect_bad_option("spmv --spmv-opt csr-vector.width=3", "csr-vector.width=3");
  expect_bad_option("spmv --vector-width 3", "--vector-width");
  expect_bad_option("spmv --max-fill 0.5", "--max-fill");
  expect_bad_option("spmv --spmv-opt nosuch.width=8", "nosuch");
  expect_bad_option("spmv --spmv-opt max_fill", "max_fill");
  expect_bad_option("spmv --spmv-opt", "--spmv-opt");
  /* the option is reported, not the missing file behind it */
  expect_bad_option("spmv /nonexistent/A.mtx --spmv-opt hyb.k=x", "hyb.k=x");
}

static void test_solve_and_check_bad_options(void)
{
  char args[4200];
  const char *m = gs_test_data("ok/layout.mtx");
  expect_bad_option("solve --spmv-opt nosuch=1", "nosuch");
  expect_bad_option("solve --spmv-opt csr-vector.width=3 --format csr-vector", "csr-vector.width=3");
  snprintf(args, sizeof args, "check '%s' --spmv-opt hyb.nosuch=1", m);
  expect_bad_option(args, "hyb.nosuch=1");
  snprintf(args, sizeof args, "check '%s' --max-fill 0.5", m);
  expect_bad_option(args, "--max-fill");
}

/* solve --gpus and spmv --gpus: every bad argument is refused before any device work (so this
 * runs without a GPU), in one line naming it. */
static void test_dist_bad_options(void)
{
  char args[4200];
  expect_bad_option("solve --gpus x", "--gpus");
  expect_bad_option("solve --gpus 0,,1", "--gpus");
  expect_bad_option("solve --gpus 0", "--gpus"); /* a count of 0 */
  expect_bad_option("solve --gpus 65", "--gpus"); /* more ranks than GS_DIST_MAX_RANKS */
  expect_bad_option("solve --gpus 2 --transport pigeon", "pigeon");
  expect_bad_option("solve --gpus 2 --format nosuch", "nosuch");
  expect_bad_option("solve --gpus 2 --off-format nosuch", "nosuch");
  expect_bad_option("solve --gpus 2 --reorder amd", "amd");
  expect_bad_option("solve --gpus 2 --solver lsqr", "lsqr");
  expect_bad_option("solve --gpus 2 --solver nosuch", "nosuch");
  expect_bad_option("solve --gpus 2 --precond bogus", "bogus");
  expect_bad_option("solve --gpus 2 --grid 0x3", "--grid");
  expect_bad_option("solve --gpus 2 --grid 3y4", "--grid");
  expect_bad_option("solve --gpus 2 --grid 3x4x5x6", "--grid");
  expect_bad_option("solve --gpus 2 --stencil 4", "--stencil");
  expect_bad_option("solve --gpus 2 --spmv-opt nosuch=1", "nosuch");
  expect_bad_option("solve --gpus 2 --graphs maybe", "maybe");
  expect_bad_option("spmv --gpus 2", "A.mtx");
  expect_bad_option("spmv --gpus 2 --runs 0", "--runs");
  snprintf(args, sizeof args, "solve --gpus 2 --grid 10 '%s'", gs_test_data("ok/layout.mtx"));
  expect_bad_option(args, "not both");
  snprintf(args, sizeof args, "solve --gpus 2 '%s' '%s' '%s'", gs_test_data("ok/layout.mtx"),
           gs_test_data("ok/layout.mtx"), gs_test_data("ok/layout.mtx"));
  expect_bad_option(args, "too many");
  /* --help under --gpus describes the multi-GPU form and exits 0 */
  CU_ASSERT_EQUAL(gs_test_cli("solve --gpus 2 --help", out, sizeof out, err, sizeof err), 0);
  CU_ASSERT(strstr(out, "--transport") != NULL);
  CU_ASSERT_EQUAL(gs_test_cli("spmv --gpus 2 --help", out, sizeof out, err, sizeof err), 0);
  CU_ASSERT(strstr(out, "overlap") != NULL);
}

/* The solve options' bounds through the three commands that solve (apps/solve_opts.c): each
 * command that takes the option refuses a value past the bound with the same line, and takes
 * the bound itself (then the missing input is the next thing refused); a command that does not
 * take it calls it unknown. No device work, so every machine runs it. */
enum { ONE = 1, DIST = 2, BATCH = 4 };
static const char *const solve_cmd[3] = {"solve /nonexistent/A.mtx",
                                         "solve --gpus 2 /nonexistent/A.mtx",
                                         "batch /nonexistent/dir --solve cg"};

static void test_solve_option_bounds(void)
{
  static const struct {
    const char *opt;
    int takes;
    const char *bad[2], *good[2], *why; /* why: the bound in the message */
  } cases[] = {
    {"--rtol", ONE | DIST | BATCH, {"1.5", "nan"}, {"1", NULL}, "(a number in 0..1)"},
    {"--atol", ONE | DIST | BATCH, {"-1", "1e301"}, {"1e300", NULL}, "(a number in 0..1e+300)"},
    {"--maxit", ONE | DIST | BATCH, {"-1", "2147483648"}, {"2147483647", NULL},
     "(an integer in 0..2147483647)"},
    {"--restart", ONE | DIST | BATCH, {"0", "10001"}, {"10000", NULL}, "(an integer in 1..10000)"},
    {"--check-every", ONE | DIST, {"0", "1000001"}, {"1000000", "auto"},
     "(an integer in 1..1000000)"},
    {"--graphs", ONE | DIST, {"maybe", NULL}, {"off", NULL}, "(on or off)"},
    {"--persistent", ONE, {"ON", NULL}, {"auto", NULL}, "(on, off or auto)"},
  };
  static char args[512], first[1 << 14];
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    for (int k = 0; k < 2 && cases[c].bad[k]; ++k) {
      first[0] = '\0';
      for (int cmd = 0; cmd < 3; ++cmd) {
        snprintf(args, sizeof args, "%s %s '%s'", solve_cmd[cmd], cases[c].opt, cases[c].bad[k]);
        if (!(cases[c].takes & (1 << cmd))) { /* not this command's option */
          if (k == 0) expect_bad_option(args, "unknown option");
          continue;
        }
        char want[256];
        snprintf(want, sizeof want, "invalid value '%s' for %s %s", cases[c].bad[k], cases[c].opt,
                 cases[c].why);
        expect_bad_option(args, want);
        if (!first[0]) snprintf(first, sizeof first, "%s", err);
        else if (strcmp(first, err) != 0)
          fprintf(stderr, "\n  %s: '%s' differs from '%s'", args, err, first);
        CU_ASSERT_STRING_EQUAL(first, err); /* the same line from every command */
      }
    }
    for (int k = 0; k < 2 && cases[c].good[k]; ++k)
      for (int cmd = 0; cmd < 3; ++cmd) {
        if (!(cases[c].takes & (1 << cmd))) continue;
        snprintf(args, sizeof args, "%s %s %s", solve_cmd[cmd], cases[c].opt, cases[c].good[k]);
        expect_bad_option(args, "/nonexistent/"); /* accepted: the input is refused next */
      }
  }
  /* a stop test nothing meets, in every command */
  for (int cmd = 0; cmd < 3; ++cmd) {
    snprintf(args, sizeof args, "%s --rtol 0 --atol 0", solve_cmd[cmd]);
    expect_bad_option(args, "cannot converge");
  }
}

/* Whether the last parenthesised list of msg, "(a, b, c or d)", holds the word `name`. */
static int in_list(const char *msg, const char *name)
{
  const char *p = strrchr(msg, '(');
  if (!p) return 0;
  const size_t n = strlen(name);
  for (++p; *p && *p != ')';) {
    const size_t w = strcspn(p, ",) ");
    if (w == n && !strncmp(p, name, n)) return 1;
    p += w;
    while (*p == ',' || *p == ' ') ++p;
    if (!strncmp(p, "or ", 3)) p += 3;
  }
  return 0;
}

/* Methods and preconditioners come from the library's lists: an unknown name is refused with
 * the names the command takes (exactly those), a known one its solver cannot run with why. */
static void test_solve_names(void)
{
  static char args[512], list[1 << 14];
  static const char *const mopt[3] = {"--solver", "--solver", "--solve"};
  static const char *const base[3] = {"solve /nonexistent/A.mtx",
                                      "solve --gpus 2 /nonexistent/A.mtx",
                                      "batch /nonexistent/dir"};
  for (int cmd = 0; cmd < 3; ++cmd) {
    snprintf(args, sizeof args, "%s %s nosuch", base[cmd], mopt[cmd]);
    expect_bad_option(args, "unknown solver 'nosuch'");
    snprintf(list, sizeof list, "%s", err);
    CU_ASSERT(in_list(list, "cg") && !in_list(list, "nosuch"));
    int listed = 0;
    for (int m = 0; strcmp(gs_method_string((gs_method_t)m), "unknown") != 0; ++m) {
      const char *name = gs_method_string((gs_method_t)m);
      const int runs = cmd == 0 ? 1
                       : cmd == 1 ? !(gs_method_flags((gs_method_t)m) & GS_METHOD_TRANSPOSE)
                                  : m == GS_SOLVER_CG || m == GS_SOLVER_BICGSTAB ||
                                        m == GS_SOLVER_GMRES;
      if (runs != in_list(list, name))
        fprintf(stderr, "\n  %s: method %s runs %d, listed %d", args, name, runs,
                in_list(list, name));
      CU_ASSERT_EQUAL(runs, in_list(list, name));
      listed += runs;
      snprintf(args, sizeof args, "%s %s %s", base[cmd], mopt[cmd], name);
      if (runs) { /* taken: the input is refused next */
        expect_bad_option(args, "/nonexistent/");
      } else {    /* refused by name, saying why */
        expect_bad_option(args, name);
        CU_ASSERT(strstr(err, cmd == 1 ? "not distributed" : "batched solver runs") != NULL);
      }
    }
    CU_ASSERT(listed >= 2);
    /* every preconditioner of the registry: taken exactly when the list names it */
    const char *with = cmd == 2 ? " --solve cg" : "";
    snprintf(args, sizeof args, "%s%s --precond bogus", base[cmd], with);
    expect_bad_option(args, "unknown preconditioner 'bogus'");
    snprintf(list, sizeof list, "%s", err);
    for (int i = 0; i < gs_precond_count(); ++i) {
      const char *pc = gs_precond_name_at(i);
      snprintf(args, sizeof args, "%s%s --precond %s", base[cmd], with, pc);
      const int rc = gs_test_cli(args, out, sizeof out, err, sizeof err);
      const int taken = rc == 2 && strstr(err, "/nonexistent/") != NULL;
      if (!taken) CU_ASSERT(rc == 2 && gs_test_one_line_error(err) && strstr(err, pc) != NULL);
      if (taken != in_list(list, pc))
        fprintf(stderr, "\n  %s: taken %d, listed in '%s'", args, taken, list);
      CU_ASSERT_EQUAL(taken, in_list(list, pc));
    }
  }
  /* batch's solve options need --solve */
  expect_bad_option("batch /nonexistent/dir --rtol 1e-6", "--rtol goes with --solve");
  expect_bad_option("batch /nonexistent/dir --jacobi", "--jacobi goes with --solve");
  expect_bad_option("batch /nonexistent/dir --solve cg --jacobi --precond ilu0", "ilu0");
}

/* The text line of `format` in check's table. */
static const char *check_row(const char *format)
{
  static char line[512];
  size_t n = strlen(format);
  for (const char *p = out; *p;) {
    const char *e = strchr(p, '\n');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len > n && !strncmp(p, format, n) && p[n] == ' ') {
      snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), p);
      return line;
    }
    p += len + (e != NULL);
  }
  return "";
}

/* max_fill=1.0 on a 2 x 2 matrix with an empty slot: the padded layouts refuse it on the host
 * (with or without a GPU); the others pass; a refusal is not a failure (exit 0). */
static void test_check_max_fill(void)
{
  char args[4200];
  const char *m = gs_test_data("ok/layout.mtx");
  snprintf(args, sizeof args, "check '%s' --spmv-opt max_fill=1.0", m);
  CU_ASSERT_EQUAL(gs_test_cli(args, out, sizeof out, err, sizeof err),
                  gs_device_count() > 0 ? 0 : 3); /* 3: device kernels not checked */
  int ell_refused = !strncmp(check_row("ell"), "ell            refused ", 23);
  if (!ell_refused) fprintf(stderr, "\n  check with max_fill=1.0:\n%s%s", out, err);
  CU_ASSERT(ell_refused);
  CU_ASSERT(strstr(check_row("dia"), " refused ") != NULL);
  CU_ASSERT(strstr(check_row("csr-scalar"), " ok ") != NULL);

  /* the same through --max-fill and in JSON */
  snprintf(args, sizeof args, "check '%s' --max-fill 1 --json", m);
  CU_ASSERT_EQUAL(gs_test_cli(args, out, sizeof out, err, sizeof err),
                  gs_device_count() > 0 ? 0 : 3); /* 3: device kernels not checked */
  CU_ASSERT(strstr(out, "\"format\":\"ell\",\"host\":\"refused\"") != NULL);

  /* the default limit (3) takes this matrix */
  snprintf(args, sizeof args, "check '%s'", m);
  CU_ASSERT_EQUAL(gs_test_cli(args, out, sizeof out, err, sizeof err),
                  gs_device_count() > 0 ? 0 : 3); /* 3: device kernels not checked */
  CU_ASSERT(strstr(check_row("ell"), " ok ") != NULL);
}

int main(void)
{
  CU_TestInfo tests[] = {
    {"spmv --list --verbose shows each backend's options", test_list_verbose},
    {"spmv: bad backend options exit 2 before any work", test_spmv_bad_options},
    {"solve, check: bad backend options exit 2", test_solve_and_check_bad_options},
    {"solve --gpus, spmv --gpus: bad arguments exit 2", test_dist_bad_options},
    {"solve options: one bound each, the same line in every command", test_solve_option_bounds},
    {"solve options: methods and preconditioners from the library", test_solve_names},
    {"check --spmv-opt max_fill=1.0: padded host layouts refuse", test_check_max_fill},
    CU_TEST_INFO_NULL,
  };
  return gs_test_main("cli_opts", tests, 0);
}
