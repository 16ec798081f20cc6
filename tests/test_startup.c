/* tests/test_startup.c: the CLI's two programs (docs/cli.md "Start-up"): the host-only front
 * `gpusolve` (GS_CLI) loads no CUDA library for its host commands and hands the others to
 * gpusolve-gpu with the same answers; a failed write to stdout exits 2; `check` without a GPU
 * exits 3 after the host results unless --host; the no-GPU message says what is missing; `select`
 * reads its matrix before the device. Host suite: runs with or without a GPU. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/testutil.h"

static char out[1 << 16], err[1 << 14], out2[1 << 16], err2[1 << 14];

/* Runs `cmd` (a shell command line, stdin from /dev/null) with stdout and stderr captured unless
 * cmd redirects them itself; returns the exit status (-1: not run or killed). */
static int sh(const char *cmd, char *o, size_t osz, char *e, size_t esz)
{
  char fo[4608], fe[4608], line[16384];
  snprintf(fo, sizeof fo, "%s", gs_test_tmpfile("sh_out"));
  snprintf(fe, sizeof fe, "%s", gs_test_tmpfile("sh_err"));
  snprintf(line, sizeof line, "{ %s ; } >'%s' 2>'%s' </dev/null", cmd, fo, fe);
  const int rc = system(line);
  const char *files[2] = {fo, fe};
  char *bufs[2] = {o, e};
  const size_t sizes[2] = {osz, esz};
  for (int k = 0; k < 2; ++k) {
    FILE *f = fopen(files[k], "rb");
    size_t n = f ? fread(bufs[k], 1, sizes[k] - 1, f) : 0;
    bufs[k][n] = '\0';
    if (f) fclose(f);
    unlink(files[k]);
  }
  return (rc == -1 || !WIFEXITED(rc)) ? -1 : WEXITSTATUS(rc);
}

/* gpusolve-gpu beside the front (static buffer) */
static const char *gpu_binary(void)
{
  static char path[4096];
  snprintf(path, sizeof path, "%s", GS_CLI);
  char *slash = strrchr(path, '/');
  snprintf(slash ? slash + 1 : path, sizeof path - (size_t)(slash ? slash + 1 - path : 0),
           "gpusolve-gpu");
  return path;
}

static int one_line(const char *e)
{
  const size_t n = strlen(e);
  return n > 10 && !strncmp(e, "gpusolve: ", 10) && e[n - 1] == '\n' &&
         strchr(e, '\n') == e + n - 1;
}

/* The libraries the front must never load. */
static const char *const device_libs[] = {"libcudart", "libcublas", "libcusparse", "libcuda.so",
                                          "libnccl", "libmpi", NULL};
static const char *device_lib_in(const char *text)
{
  for (int k = 0; device_libs[k]; ++k)
    if (strstr(text, device_libs[k])) return device_libs[k];
  return NULL;
}

/* The dynamic loader's list of every library a program needs (transitively): the front has none
 * of the CUDA, NCCL or MPI libraries; gpusolve-gpu has them (so the check can see them). */
static void test_front_needs_no_cuda_library(void)
{
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "LD_TRACE_LOADED_OBJECTS=1 '%s'", GS_CLI);
  CU_ASSERT_EQUAL(sh(cmd, out, sizeof out, err, sizeof err), 0);
  CU_ASSERT(strstr(out, "libc.so") != NULL); /* the listing is there */
  const char *lib = device_lib_in(out);
  if (lib) fprintf(stderr, "\n  the front needs %s:\n%s", lib, out);
  CU_ASSERT_PTR_NULL(lib);
  snprintf(cmd, sizeof cmd, "LD_TRACE_LOADED_OBJECTS=1 '%s'", gpu_binary());
  CU_ASSERT_EQUAL(sh(cmd, out, sizeof out, err, sizeof err), 0);
  CU_ASSERT(strstr(out, "libcusparse") != NULL && strstr(out, "libcublas") != NULL);
}

/* Runs the front with `args` under LD_DEBUG=libs (the loader's log into files, concatenated into
 * err after the command's own stderr); returns the exit status. */
static int traced(const char *args)
{
  char cmd[16384], log[4608];
  snprintf(log, sizeof log, "%s", gs_test_tmpfile("ld"));
  snprintf(cmd, sizeof cmd, "rm -f '%s'.*; LD_DEBUG=libs LD_DEBUG_OUTPUT='%s' '%s' %s; rc=$?; "
           "cat '%s'.* >&2; exit $rc", log, log, GS_CLI, args, log);
  const int rc = sh(cmd, out, sizeof out, err, sizeof err);
  CU_ASSERT(strstr(err, "calling init") != NULL); /* the loader's log is there */
  return rc;
}

/* What the loader loads while each host command runs: no CUDA library; a GPU command's --help,
 * handed to gpusolve-gpu, does load them (the control). */
static void test_host_commands_load_no_cuda(void)
{
  char a[8192];
  const char *m = gs_test_data("ok/layout.mtx");
  const char *host[] = {"--version", "--help", "info '%s'", "info --json '%s'",
                        "select --rule '%s'", "select --rule --json -v '%s'", "info --help",
                        "select --help", "gen --help", "gen laplace --grid 6x6 --stencil 5",
                        "info /nonexistent/A.mtx", NULL};
  for (int k = 0; host[k]; ++k) {
    snprintf(a, sizeof a, host[k], m);
    CU_ASSERT_EQUAL(traced(a), strstr(a, "nonexistent") ? 2 : 0);
    const char *lib = device_lib_in(err);
    if (lib) fprintf(stderr, "\n  gpusolve %s loaded %s\n", a, lib);
    CU_ASSERT_PTR_NULL(lib);
  }
  CU_ASSERT_EQUAL(traced("solve --help"), 0);
  CU_ASSERT_PTR_NOT_NULL(device_lib_in(err));
}

/* The front answers exactly as gpusolve-gpu does: exit status, stdout and stderr, for the host
 * commands, their errors, and commands handed over. */
static void test_front_answers_as_gpu_binary(void)
{
  char a[8192], cmd[16384];
  const char *m = gs_test_data("ok/layout.mtx");
  const char *cases[] = {"--version", "--help", "help", "info '%s'", "info --json '%s'", "info",
                         "info '%s' '%s'", "info /nonexistent/A.mtx", "info --bogus",
                         "select --rule '%s'", "select --rule --json '%s' '%s'",
                         "select --rule -v '%s'", "select --products --rule '%s'",
                         "select --rule --spmv-opt nosuch=1 '%s'", "select --rule", "select --help",
                         "select /nonexistent/A.mtx", "gen laplace --grid 5x4 --stencil 5",
                         "gen", "gen nosuch", "gen --help", "solve --help", "check --help",
                         "check --host '%s'", "foo", "--bogus", "/nonexistent/A.mtx", NULL};
  for (int k = 0; cases[k]; ++k) {
    snprintf(a, sizeof a, cases[k], m, m);
    snprintf(cmd, sizeof cmd, "'%s' %s", GS_CLI, a);
    const int rf = sh(cmd, out, sizeof out, err, sizeof err);
    snprintf(cmd, sizeof cmd, "'%s' %s", gpu_binary(), a);
    const int rg = sh(cmd, out2, sizeof out2, err2, sizeof err2);
    const int same = rf == rg && rf >= 0 && !strcmp(out, out2) && !strcmp(err, err2);
    if (!same)
      fprintf(stderr, "\n  gpusolve %s: front exit %d, gpusolve-gpu exit %d\n%s%s--\n%s%s", a, rf,
              rg, out, err, out2, err2);
    CU_ASSERT(same);
  }
}

static int mkdir_p(char *path)
{
  for (char *p = path + 1; *p; ++p)
    if (*p == '/') {
      *p = '\0';
      const int r = mkdir(path, 0755);
      *p = '/';
      if (r != 0 && errno != EEXIST) return -1;
    }
  return mkdir(path, 0755) == 0 || errno == EEXIST ? 0 : -1;
}

/* A front without gpusolve-gpu beside it (a copy in a folder of its own): host commands work, a
 * GPU command says where it looked (exit 3); with gpusolve-gpu at the installed place it names
 * (../libexec/gpusolve/ by default) the command runs there. */
static void test_front_finds_gpu_binary(void)
{
  char dir[4608], front[4700], cmd[16384];
  snprintf(dir, sizeof dir, "%s", gs_test_tmpfile("prefix/bin"));
  CU_ASSERT_FATAL(mkdir_p(dir) == 0);
  snprintf(front, sizeof front, "%s/gpusolve", dir);
  snprintf(cmd, sizeof cmd, "cp '%s' '%s'", GS_CLI, front);
  CU_ASSERT_FATAL(sh(cmd, out, sizeof out, err, sizeof err) == 0);

  snprintf(cmd, sizeof cmd, "'%s' --version", front);
  CU_ASSERT_EQUAL(sh(cmd, out, sizeof out, err, sizeof err), 0);
  CU_ASSERT(!strncmp(out, "gpusolve ", 9));
  snprintf(cmd, sizeof cmd, "'%s' solve --help", front);
  CU_ASSERT_EQUAL(sh(cmd, out, sizeof out, err, sizeof err), 3);
  CU_ASSERT_STRING_EQUAL(out, "");
  CU_ASSERT(one_line(err));
  const char *looked = strstr(err, "cannot find gpusolve-gpu (looked in ");
  CU_ASSERT_PTR_NOT_NULL_FATAL(looked);
  /* "(looked in BESIDE and INSTALLED)": put gpusolve-gpu at INSTALLED */
  const char *and = strstr(looked, " and ");
  CU_ASSERT_PTR_NOT_NULL_FATAL(and);
  char installed[4608];
  snprintf(installed, sizeof installed, "%s", and + 5);
  char *close = strrchr(installed, ')');
  CU_ASSERT_PTR_NOT_NULL_FATAL(close);
  *close = '\0';
  CU_ASSERT(strncmp(installed, dir, strlen(dir)) == 0);
  char folder[4608];
  snprintf(folder, sizeof folder, "%s", installed);
  *strrchr(folder, '/') = '\0';
  CU_ASSERT_FATAL(mkdir_p(folder) == 0);
  CU_ASSERT_FATAL(symlink(gpu_binary(), installed) == 0);
  snprintf(cmd, sizeof cmd, "'%s' solve --help", front);
  CU_ASSERT_EQUAL(sh(cmd, out, sizeof out, err, sizeof err), 0);
  snprintf(cmd, sizeof cmd, "'%s' solve --help", gpu_binary());
  CU_ASSERT_EQUAL(sh(cmd, out2, sizeof out2, err2, sizeof err2), 0);
  CU_ASSERT(out[0] != '\0' && !strcmp(out, out2));
  CU_ASSERT_STRING_EQUAL(err, "");
}

/* Output that cannot be written (/dev/full) fails the command: exit 2, one line, in the front's
 * commands and in gpusolve-gpu's; the same commands to /dev/null exit 0. */
static void test_stdout_write_failure(void)
{
  char a[8192], cmd[16384];
  if (access("/dev/full", W_OK) != 0) {
    fprintf(stderr, "\n  /dev/full not writable here: skipped\n");
    return;
  }
  const char *m = gs_test_data("ok/layout.mtx");
  const char *cases[] = {"--version", "--help", "info '%s'", "info --json '%s'", "info --help",
                         "select --rule '%s'", "select --rule --json '%s'",
                         "gen laplace --grid 6x6 --stencil 5", "solve --help",
                         "check --host '%s'", NULL};
  for (int k = 0; cases[k]; ++k) {
    snprintf(a, sizeof a, cases[k], m);
    snprintf(cmd, sizeof cmd, "'%s' %s >/dev/null", GS_CLI, a);
    CU_ASSERT_EQUAL(sh(cmd, out, sizeof out, err, sizeof err), 0);
    snprintf(cmd, sizeof cmd, "'%s' %s >/dev/full", GS_CLI, a);
    const int rc = sh(cmd, out, sizeof out, err, sizeof err);
    const int ok = rc == 2 && one_line(err) &&
                   (!strncmp(a, "gen ", 4) || /* gen reports the failure its own way */
                    strstr(err, "cannot write to standard output: No space left on device"));
    if (!ok) fprintf(stderr, "\n  gpusolve %s >/dev/full: exit %d, %s", a, rc, err);
    CU_ASSERT(ok);
  }
}

/* check: without a GPU the host results, then exit 3 with the no-GPU line; --host asks for the
 * host layouts alone (exit 0, device "skipped" for every format, with or without a GPU). */
static void test_check_without_gpu(void)
{
  char cmd[16384];
  const char *m = gs_test_data("ok/layout.mtx");
  snprintf(cmd, sizeof cmd, "'%s' check '%s' --host", GS_CLI, m);
  CU_ASSERT_EQUAL(sh(cmd, out, sizeof out, err, sizeof err), 0);
  CU_ASSERT_STRING_EQUAL(err, "");
  CU_ASSERT(strstr(out, "device: not used (--host") != NULL);
  for (int b = 0; b < gs_spmv_backend_count(); ++b) { /* every format's row: device skipped */
    char start[96];
    snprintf(start, sizeof start, "\n%s ", gs_spmv_backend_name(b));
    const char *row = strstr(out, start);
    CU_ASSERT(row && strstr(row + 1, " skipped ") &&
              strchr(row + 1, '\n') > strstr(row + 1, " skipped "));
  }
  snprintf(cmd, sizeof cmd, "'%s' check '%s' --host --json", GS_CLI, m);
  CU_ASSERT_EQUAL(sh(cmd, out, sizeof out, err, sizeof err), 0);
  CU_ASSERT(strstr(out, "\"device\":null") != NULL);
  CU_ASSERT(strstr(out, "\"device\":\"ok\"") == NULL && strstr(out, "device_error") == NULL);

  snprintf(cmd, sizeof cmd, "'%s' check '%s'", GS_CLI, m);
  const int rc = sh(cmd, out, sizeof out, err, sizeof err);
  if (gs_device_count() > 0) {
    CU_ASSERT_EQUAL(rc, 0);
    return;
  }
  CU_ASSERT_EQUAL(rc, 3);
  CU_ASSERT(one_line(err));
  CU_ASSERT(strstr(err, "no CUDA device available: ") != NULL && strstr(err, "--host") != NULL);
  CU_ASSERT(strstr(out, "device: none (device kernels skipped)") != NULL);
  CU_ASSERT(strstr(out, "csr-scalar     ok       skipped") != NULL); /* the host results */
  snprintf(cmd, sizeof cmd, "'%s' check '%s' --json", GS_CLI, m);
  CU_ASSERT_EQUAL(sh(cmd, out, sizeof out, err, sizeof err), 3);
  CU_ASSERT(strstr(out, "\"device\":null,\"device_error\":\"no CUDA device available: ") != NULL);
  CU_ASSERT(strstr(out, "\"results\":[") != NULL && out[strlen(out) - 1] == '\n');
}

/* The no-GPU line says what is missing: no driver (libcuda.so.1 cannot be loaded, checked here
 * on its own), or a driver that sees no GPU (CUDA_VISIBLE_DEVICES set to nothing). */
static void test_no_gpu_message(void)
{
  char cmd[16384];
  void *drv = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  const int have_driver = drv != NULL;
  if (drv) dlclose(drv);
  snprintf(cmd, sizeof cmd, "CUDA_VISIBLE_DEVICES= '%s' solve '%s'", GS_CLI,
           gs_test_data("ok/layout.mtx"));
  CU_ASSERT_EQUAL(sh(cmd, out, sizeof out, err, sizeof err), 3);
  CU_ASSERT(one_line(err));
  CU_ASSERT(strncmp(err, "gpusolve: no CUDA device available: ", 36) == 0);
  if (have_driver) {
    CU_ASSERT(strstr(err, "sees no GPU (CUDA_VISIBLE_DEVICES is '')") != NULL);
  } else {
    CU_ASSERT(strstr(err, "no NVIDIA driver found (libcuda.so.1 not loadable): gpusolve needs an "
                          "NVIDIA GPU and its driver") != NULL);
  }
  CU_ASSERT(strstr(err, "insufficient") == NULL);
  if (!strstr(err, have_driver ? "sees no GPU" : "no NVIDIA driver"))
    fprintf(stderr, "\n  driver %s: %s", have_driver ? "present" : "absent", err);
}

/* select without --rule reads each matrix before the device: a bad file exits 2 as in solve, and
 * a good one without a GPU exits 3 having printed nothing. */
static void test_select_reads_first(void)
{
  char cmd[16384];
  snprintf(cmd, sizeof cmd, "'%s' select /nonexistent/A.mtx", GS_CLI);
  CU_ASSERT_EQUAL(sh(cmd, out, sizeof out, err, sizeof err), 2);
  CU_ASSERT(one_line(err) && strstr(err, "/nonexistent/A.mtx") != NULL);
  snprintf(cmd, sizeof cmd, "CUDA_VISIBLE_DEVICES= '%s' select -v --json '%s' '%s'", GS_CLI,
           gs_test_data("bad/no_banner.mtx"), gs_test_data("ok/layout.mtx"));
  CU_ASSERT_EQUAL(sh(cmd, out, sizeof out, err, sizeof err), 2);
  CU_ASSERT(one_line(err) && strstr(err, "no_banner.mtx") != NULL);
  CU_ASSERT_STRING_EQUAL(out, "");
  snprintf(cmd, sizeof cmd, "CUDA_VISIBLE_DEVICES= '%s' select -v '%s'", GS_CLI,
           gs_test_data("ok/layout.mtx"));
  CU_ASSERT_EQUAL(sh(cmd, out, sizeof out, err, sizeof err), 3);
  CU_ASSERT(one_line(err) && strstr(err, "no CUDA device available") != NULL);
  CU_ASSERT_STRING_EQUAL(out, "");
}

int main(void)
{
  CU_TestInfo tests[] = {
      {"the front needs no CUDA, NCCL or MPI library", test_front_needs_no_cuda_library},
      {"host commands load no CUDA library", test_host_commands_load_no_cuda},
      {"the front answers as gpusolve-gpu", test_front_answers_as_gpu_binary},
      {"the front finds gpusolve-gpu (build tree, installed)", test_front_finds_gpu_binary},
      {"a failed write to stdout exits 2", test_stdout_write_failure},
      {"check without a GPU exits 3 unless --host", test_check_without_gpu},
      {"the no-GPU line says what is missing", test_no_gpu_message},
      {"select reads the matrix before the device", test_select_reads_first},
      CU_TEST_INFO_NULL};
  return gs_test_main("startup", tests, 0);
}
