/* tests/test_solve_cli.c: `gpusolve solve` as a user runs it, on any machine: --help, usage
 * errors and bad input (exit 2, one line on stderr, before any device work), and the no-device
 * answer (exit 3, "no CUDA device available"), forced with CUDA_VISIBLE_DEVICES="" where a GPU
 * is present. Solving itself is exercised by the GPU suite test_solvers. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/testutil.h"

static char out[1 << 16], err[1 << 14];
static char dir[] = "/tmp/gs_solve_cliXXXXXX";
static char spd[4200], rect[4200], b3[4200], b4[4200], b2col[4200], x0bad[4200];

static void write_file(char *path, size_t size, const char *name, const char *text)
{
  snprintf(path, size, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  CU_ASSERT_FATAL(f != NULL);
  fputs(text, f);
  fclose(f);
}

/* the CLI with printf-formatted arguments, into out and err */
#define run(...) gs_test_cli_fmt(out, sizeof out, err, sizeof err, __VA_ARGS__)

static void setup_files(void)
{
  static int done;
  if (done) return;
  CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
  /* 4 x 4 SPD tridiagonal, 3 x 4 rectangular, vectors of 3 and 4 entries, a 4 x 2 "vector" */
  write_file(spd, sizeof spd, "spd.mtx",
             "%%MatrixMarket matrix coordinate real symmetric\n4 4 7\n"
             "1 1 2\n2 1 -1\n2 2 2\n3 2 -1\n3 3 2\n4 3 -1\n4 4 2\n");
  write_file(rect, sizeof rect, "rect.mtx",
             "%%MatrixMarket matrix coordinate real general\n3 4 3\n1 1 1\n2 2 1\n3 3 1\n");
  write_file(b3, sizeof b3, "b3.mtx", "%%MatrixMarket matrix array real general\n3 1\n1\n2\n3\n");
  write_file(b4, sizeof b4, "b4.mtx",
             "%%MatrixMarket matrix array real general\n4 1\n1\n0\n0\n1\n");
  write_file(b2col, sizeof b2col, "b2col.mtx",
             "%%MatrixMarket matrix array real general\n4 2\n1\n2\n3\n4\n5\n6\n7\n8\n");
  write_file(x0bad, sizeof x0bad, "x0bad.mtx",
             "%%MatrixMarket matrix array real general\n5 1\n0\n0\n0\n0\n0\n");
  done = 1;
}

static void test_help(void)
{
  CU_ASSERT_EQUAL(run("solve --help"), 0);
  CU_ASSERT(strstr(out, "usage: gpusolve solve") != NULL);
  CU_ASSERT(strstr(out, "--precond") != NULL);
  CU_ASSERT(strstr(out, "pipecg") != NULL);
  CU_ASSERT(strstr(out, "Exit status") != NULL);
  /* the persistent iterations' default: on where auto chose the format, off where you named it */
  CU_ASSERT(strstr(out, "--persistent on|off|auto") != NULL);
  CU_ASSERT(strstr(out, "Default: auto with --format") != NULL);
  CU_ASSERT(strstr(out, "off when --format names a format or is all") != NULL);
  CU_ASSERT(strstr(out, "why the iterations did not run as persistent kernels") != NULL);
  CU_ASSERT_EQUAL(err[0], '\0');
  CU_ASSERT_EQUAL(run("solve -h"), 0);
  CU_ASSERT(strstr(out, "usage: gpusolve solve") != NULL);
}

/* Each bad option: exit 2 and one line naming the problem. */
static void test_bad_options(void)
{
  static const struct {
    const char *args, *needle;
  } cases[] = {
    {"solve --bogus", "--bogus"},
    {"--bogus", "--bogus"}, /* the default command is solve */
    {"solve --solver foo", "'foo'"},
    {"solve --solver pipe-cg", "pipecg"}, /* the message lists the names */
    {"solve --precond ilu7", "'ilu7'"},
    {"solve --precond amg --precond-opt thta=0.1", "thta"}, /* misspelt key */
    {"solve --precond amg --precond-opt theta=3", "out of range"},
    {"solve --precond amg --precond-opt smoother=gauss", "jacobi|l1-jacobi|chebyshev"},
    {"solve --precond amg --precond-opt jacobi.theta=0.1", "for 'jacobi'"},
    {"solve --precond amg --precond-opt theta", "KEY=VALUE"},
    {"solve --precond amg --amg-format nosuch", "not an SpMV format"},
    {"solve --precond jacobi --precond-opt theta=0", "no option 'theta'"},
    {"solve --precond none --precond-opt theta=0", "--precond"},
    {"solve --precond-opt thta=0", "thta"}, /* the default auto takes amg's options */
    {"solve --precond auto --precond-opt theta=3", "out of range"},
    {"solve --precond auto --amg-format nosuch", "not an SpMV format"},
    {"solve --precond none --amg-format csr-vector", "--amg-format"},
    {"solve --precond jacobi --amg-format csr-vector", "--amg-format"},
    {"solve --precond amg --gpus 2", "amg"}, /* no distributed setup */
    /* --grid on one GPU, checked as gen laplace and --gpus check it (the same lines) */
    {"solve --grid 10", "--stencil 27 is a 3D stencil, but --grid 10 is 1D"},
    {"solve --gpus 2 --grid 10", "--stencil 27 is a 3D stencil, but --grid 10 is 1D"},
    {"solve --grid 10x10 --stencil 7", "--grid 10x10 is 2D"},
    {"solve --grid 8x8x8 --stencil 4", "invalid value '4' for --stencil"},
    {"solve --gpus 2 --grid 8x8x8 --stencil 4", "invalid value '4' for --stencil"},
    {"solve --grid 0x3x3", "--grid"},
    {"solve --grid 3x4x5x6", "--grid"},
    {"solve --grid 100000x100000x1000", "more than 2^31-1 points"},
    {"solve --grid", "--grid"},
    {"solve --stencil 7", "--stencil goes with --grid"},
    {"solve --gpus 2 --stencil 7", "--stencil goes with --grid"},
    {"solve --grid 8x8x8 a.mtx", "not both"},
    {"solve --gpus 2 --grid 8x8x8 a.mtx", "not both"},
    {"solve --grid 8x8x8 --rtol 0 --atol 0", "cannot converge"},
    {"solve --precond amg --solver bicg", "M^-T"},
    {"solve --format nosuchformat", "'nosuchformat'"},
    {"solve --rtol abc", "--rtol"},
    {"solve --rtol -1", "--rtol"},
    {"solve --atol nan", "--atol"},
    {"solve --maxit -5", "--maxit"},
    {"solve --maxit", "--maxit"},
    {"solve --restart 0", "--restart"},
    {"solve --check-every 0", "--check-every"},
    {"solve --persistent maybe", "'maybe'"},
    {"solve --persistent ON", "'ON'"}, /* values are lowercase, as --graphs's */
    {"solve --persistent", "--persistent"},
    /* each value parses: the next thing refused is the missing matrix */
    {"solve /nonexistent/A.mtx --persistent on", "/nonexistent/A.mtx"},
    {"solve /nonexistent/A.mtx --persistent off", "/nonexistent/A.mtx"},
    {"solve /nonexistent/A.mtx --persistent auto --format csr-vector", "/nonexistent/A.mtx"},
    {"solve --x0", "--x0"},
    {"solve -o", "-o"},
    {"solve --plot", "--plot"},
    /* output paths, checked before anything is read */
    {"solve /nonexistent/A.mtx -o ''", "empty output path"},
    {"solve /nonexistent/A.mtx --output=", "empty output path"},
    {"solve /nonexistent/A.mtx --plot ''", "empty output path"},
    {"solve /nonexistent/A.mtx -o /nonexistent_gs_dir/x.mtx", "/nonexistent_gs_dir does not exist"},
    {"solve /nonexistent/A.mtx --plot /nonexistent_gs_dir/p.svg", "--plot"},
    {"solve /nonexistent/A.mtx -o /", "folder"},
    /* a stop test nothing meets */
    {"solve --rtol 0 --atol 0", "cannot converge"},
    {"solve /nonexistent/A.mtx --rtol 0 --maxit 10", "cannot converge"},
    {"solve a.mtx b.mtx c.mtx", "c.mtx"},
    {"solve /nonexistent/A.mtx", "/nonexistent/A.mtx"},
    /* what a method cannot take, refused by name before loading anything */
    {"solve --solver lsqr --precond jacobi", "no preconditioner"},
    {"solve --solver cgnr --precond ilu0", "no preconditioner"},
    {"solve --solver bicg --precond ilu0", "ilu0"},
    {"solve /nonexistent/A.mtx --solver bicg --precond ilu0", "transpose solve"},
    /* precision: the value, what goes with it, auto */
    {"solve --precision single", "'single'"},
    /* float is a precision of spmv and check only: solve names what it takes */
    {"solve --precision float", "solve takes double, mixed or mixed-refine"},
    {"solve /nonexistent/A.mtx --precision float", "for spmv and check"},
    {"solve --spmv-opt precision=float", "for spmv and check"},
    {"solve --spmv-opt ell.precision=float --format ell", "for spmv and check"},
    {"solve --precision", "--precision"},
    {"solve --inner-rtol 1e-3", "mixed-refine"},
    {"solve --precision mixed-refine --inner-rtol 1", "--inner-rtol"},
    {"solve --precision mixed-refine --max-outer 0", "--max-outer"},
    {"solve --reliable-delta 0.1", "mixed-refine"},
    {"solve --precision mixed-refine --reliable-delta 1", "--reliable-delta"},
    {"solve --precision mixed-refine --reliable-delta -0.1", "--reliable-delta"},
    {"solve --precision mixed-refine --reliable-delta", "--reliable-delta"},
    /* the value parses: the next thing refused is the missing matrix */
    {"solve /nonexistent/A.mtx --precision mixed-refine --reliable-delta 0", "/nonexistent/A.mtx"},
    {"solve --precision mixed --format auto", "auto"},
    {"solve --precision mixed-refine --solver lsqr", "least-squares"},
    {"spmv --precision half", "'half'"},
    {"spmv --precision half", "double, mixed or float"},
    {"spmv --precision mixed --format auto", "auto"},
    {"spmv --precision float --format csr-vector,auto", "--precision float name the formats"},
    {"spmv --spmv-opt precision=quad", "double, mixed or float"},
    {"check x.mtx --precision single", "'single'"},
    {"check x.mtx --precision double,float", "double, mixed or float"},
    {"solve --reorder sideways", "'sideways'"},
    {"solve --reorder sideways", "none, rcm, degree or auto"},
    {"solve --reorder", "--reorder"},
    {"solve --reorder rcm --precision mixed-refine", "mixed-refine"},
    {"solve --gpus 2 --reorder bogus", "'bogus'"},
    {"spmv --reorder xyz", "'xyz'"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    int rc = run("%s", cases[k].args);
    CU_ASSERT_EQUAL(rc, 2);
    CU_ASSERT(gs_test_one_line_error(err));
    CU_ASSERT(strstr(err, cases[k].needle) != NULL);
    if (rc != 2 || !gs_test_one_line_error(err) || !strstr(err, cases[k].needle))
      fprintf(stderr, "  '%s' -> %d: %s\n", cases[k].args, rc, err);
  }
}

/* Bad input files: exit 2 before any device work, so on every machine. */
static void test_bad_input(void)
{
  setup_files();
  static const char *const square_only[] = {"cg", "pipecg", "bicgstab", "gmres", "bicg"};
  for (size_t k = 0; k < sizeof square_only / sizeof square_only[0]; ++k) { /* not square */
    CU_ASSERT_EQUAL(run("solve '%s' --solver %s", rect, square_only[k]), 2);
    CU_ASSERT(gs_test_one_line_error(err));
    CU_ASSERT(strstr(err, "3 x 4") != NULL && strstr(err, "square") != NULL &&
              strstr(err, square_only[k]) != NULL);
  }
  /* a symmetric reordering needs a square matrix (before any device work) */
  CU_ASSERT_EQUAL(run("solve '%s' --solver lsqr --reorder rcm", rect), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT(strstr(err, "3 x 4") != NULL && strstr(err, "--reorder rcm") != NULL);
  /* least squares: b has the rows (3), x0 the columns (4) */
  CU_ASSERT_EQUAL(run("solve '%s' '%s' --solver lsqr", rect, b4), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT(strstr(err, "4 entries") != NULL && strstr(err, "3 rows") != NULL);
  CU_ASSERT_EQUAL(run("solve '%s' '%s' --solver cgnr --x0 '%s'", rect, b3, x0bad), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT(strstr(err, "5 entries") != NULL && strstr(err, "4 columns") != NULL);
  /* auto picks lsqr for a rectangular matrix, which takes no preconditioner */
  CU_ASSERT_EQUAL(run("solve '%s' --precond jacobi", rect), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT(strstr(err, "lsqr") != NULL && strstr(err, "no preconditioner") != NULL);

  CU_ASSERT_EQUAL(run("solve '%s' '%s'", spd, b3), 2); /* b of the wrong length */
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT(strstr(err, "3 entries") != NULL && strstr(err, "4 rows") != NULL);

  CU_ASSERT_EQUAL(run("solve '%s' '%s'", spd, b2col), 2); /* b with two columns */
  CU_ASSERT(gs_test_one_line_error(err));

  CU_ASSERT_EQUAL(run("solve '%s' --x0 '%s'", spd, x0bad), 2); /* x0 of the wrong length */
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT(strstr(err, "x0") != NULL);

  CU_ASSERT_EQUAL(run("solve '%s' '%s/missing_b.mtx'", spd, dir), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT(strstr(err, "missing_b.mtx") != NULL);

  /* a valid system with a bad output path: refused before the device (exit 2 with or without
   * a GPU), nothing made; a read-only file stays as it was */
  CU_ASSERT_EQUAL(run("solve '%s' -o '%s/missing/x.mtx'", spd, dir), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT(strstr(err, "missing") != NULL && strstr(err, "does not exist") != NULL);
  CU_ASSERT_EQUAL(run("solve '%s' --plot '%s'", spd, dir), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT(strstr(err, "--plot") != NULL && strstr(err, "is a folder") != NULL);
  char ro[4300];
  snprintf(ro, sizeof ro, "%s/ro.mtx", dir);
  FILE *f = fopen(ro, "w");
  CU_ASSERT_FATAL(f != NULL);
  fputs("keep\n", f);
  fclose(f);
  CU_ASSERT(chmod(ro, 0444) == 0);
  CU_ASSERT_EQUAL(run("solve '%s' -o '%s'", spd, ro), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT(strstr(err, "read-only") != NULL);
  unlink(ro);
}

/* No device: exit 3 with CUDA's reason. A GPU present is hidden from the child process. */
static void test_no_device(void)
{
  setup_files();
  const char *old = getenv("CUDA_VISIBLE_DEVICES");
  char *saved = old ? strdup(old) : NULL;
  setenv("CUDA_VISIBLE_DEVICES", "", 1);
  int rc = run("solve '%s' '%s'", spd, b4);
  int rc_default = run("solve '%s' --format all --precond jacobi --json", spd);
  /* valid least-squares input reaches the device */
  int rc_lsqr = run("solve '%s' '%s' --solver lsqr", rect, b3);
  int rc_auto = run("solve '%s' '%s' --solver auto", rect, b3);
  int rc_cgnr = run("solve '%s' --solver cgnr --format all", rect);
  int rc_bicg = run("solve '%s' '%s' --solver bicg --precond jacobi", spd, b4);
  int rc_pipecg = run("solve '%s' --solver pipecg --precond ic0", spd);
  int rc_grid = run("solve --grid 6x6x6 --stencil 7 --solver cg"); /* valid: reaches the device */
  if (saved) {
    setenv("CUDA_VISIBLE_DEVICES", saved, 1);
    free(saved);
  } else {
    unsetenv("CUDA_VISIBLE_DEVICES");
  }
  CU_ASSERT_EQUAL(rc, 3);
  CU_ASSERT_EQUAL(rc_default, 3);
  CU_ASSERT_EQUAL(rc_lsqr, 3);
  CU_ASSERT_EQUAL(rc_auto, 3);
  CU_ASSERT_EQUAL(rc_cgnr, 3);
  CU_ASSERT_EQUAL(rc_bicg, 3);
  CU_ASSERT_EQUAL(rc_pipecg, 3);
  CU_ASSERT_EQUAL(rc_grid, 3);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT(strstr(err, "no CUDA device available") != NULL);
  CU_ASSERT_EQUAL(out[0], '\0'); /* nothing on stdout, not even half a JSON document */
}

/* A format without a transpose product is refused by name for the methods that use A^T, before
 * the matrix is read. Every format of this build may have one: then there is nothing to test. */
static void test_no_transpose_format(void)
{
  int tried = 0;
  for (int i = 0; i < gs_spmv_backend_count(); ++i) {
    if (gs_spmv_backend_flags(i) & GS_SPMV_FLAG_TRANSPOSE) continue;
    const char *name = gs_spmv_backend_name(i);
    static const char *const need_t[] = {"bicg", "cgnr", "lsqr"};
    for (int k = 0; k < 3; ++k) {
      CU_ASSERT_EQUAL(run("solve /nonexistent/A.mtx --solver %s --format %s", need_t[k], name), 2);
      CU_ASSERT(gs_test_one_line_error(err));
      CU_ASSERT(strstr(err, name) != NULL && strstr(err, "transpose") != NULL);
    }
    ++tried;
  }
  if (!tried) printf("\n  skipped: every SpMV format of this build has a transpose product ");
}

static void cleanup_files(void)
{
  const char *names[] = {"spd.mtx",   "rect.mtx",  "b3.mtx", "b4.mtx",
                         "b2col.mtx", "x0bad.mtx", "lap.mtx"};
  char p[4200];
  for (size_t k = 0; k < sizeof names / sizeof names[0]; ++k) {
    snprintf(p, sizeof p, "%s/%s", dir, names[k]);
    unlink(p);
  }
  rmdir(dir);
}

/* --list-precond: every preconditioner of the registry, amg with its options and defaults */
static void test_list_precond(void)
{
  CU_ASSERT_EQUAL(run("solve --list-precond"), 0);
  static const char *const want[] = {"none", "jacobi", "ilu0", "ic0", "amg", "amg.theta=0",
                                     "amg.smoother=jacobi", "amg.cycle=V",
                                     "amg.format=cusparse-csr"};
  for (size_t k = 0; k < sizeof want / sizeof want[0]; ++k) {
    if (!strstr(out, want[k])) fprintf(stderr, "  --list-precond lacks '%s'\n", want[k]);
    CU_ASSERT(strstr(out, want[k]) != NULL);
  }
}

/* A number after "key": in a JSON document (NAN when absent). */
static double json_number(const char *doc, const char *key)
{
  char k[64];
  snprintf(k, sizeof k, "\"%s\":", key);
  const char *p = strstr(doc, k);
  return p ? strtod(p + strlen(k), NULL) : NAN;
}

/* solve --grid solves the system that `gen laplace` writes, with b = A*1: the same sizes,
 * iterations and residual as the file (a named format and method: no selection between the
 * runs). Needs a GPU; without one the refusal is exit 3 (test_no_device). */
static void test_grid_is_gen_laplace(void)
{
  if (gs_device_count() == 0) {
    printf("\n  skipped: no GPU (solve --grid on this machine: exit 3, checked above) ");
    return;
  }
  setup_files();
  static char file_out[1 << 16];
  char lap[4300];
  snprintf(lap, sizeof lap, "%s/lap.mtx", dir);
  static const char *const grids[][2] = {{"9x7x5", "7"}, {"6x6x6", "27"}, {"30x20", "5"}};
  for (size_t g = 0; g < sizeof grids / sizeof grids[0]; ++g) {
    CU_ASSERT_EQUAL_FATAL(run("gen laplace --grid %s --stencil %s -o '%s'", grids[g][0],
                              grids[g][1], lap), 0);
    CU_ASSERT_EQUAL(run("solve '%s' --solver cg --precond none --format csr-vector --json", lap),
                    0);
    memcpy(file_out, out, sizeof file_out);
    CU_ASSERT_EQUAL(run("solve --grid %s --stencil %s --solver cg --precond none --format "
                        "csr-vector --json", grids[g][0], grids[g][1]), 0);
    static const char *const keys[] = {"rows", "cols", "nnz", "iterations"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; ++k) {
      const double a = json_number(file_out, keys[k]), b = json_number(out, keys[k]);
      if (!(a == b))
        fprintf(stderr, "\n  --grid %s: %s %g, the file's %g", grids[g][0], keys[k], b, a);
      CU_ASSERT(a == b);
    }
    const double ra = json_number(file_out, "rel_residual"), rb = json_number(out, "rel_residual");
    CU_ASSERT(ra > 0 && ra < 1e-8 && fabs(ra - rb) <= 1e-6 * ra);
    char label[96];
    snprintf(label, sizeof label, "\"matrix\":\"%s-point Laplacian on a ", grids[g][1]);
    CU_ASSERT(strstr(out, label) != NULL);
  }
  unlink(lap);
}

static void test_cleanup(void) { cleanup_files(); }

int main(void)
{
  CU_TestInfo tests[] = {
    {"help", test_help},
    {"bad options exit 2 with one line", test_bad_options},
    {"bad input exits 2 before the device", test_bad_input},
    {"no device exits 3", test_no_device},
    {"a format without A^T is refused for bicg, cgnr, lsqr", test_no_transpose_format},
    {"--list-precond", test_list_precond},
    {"solve --grid: the system of gen laplace", test_grid_is_gen_laplace},
    {"cleanup", test_cleanup},
    CU_TEST_INFO_NULL,
  };
  return gs_test_main("solve_cli", tests, 0);
}
