/* tests/test_cli_mpi.c: `mpiexec -n 2 gpusolve solve|spmv ... --distributed`, one rank per
 * process. Host suite: what it checks depends on the machine, and it says which part ran.
 *  - A build without MPI refuses --distributed with one line (exit 2).
 *  - With MPI, on any machine: a bad argument gives exit 2 and ONE line for the whole job
 *    (rank 0's), nothing on stdout from any rank.
 *  - Without a GPU, or with fewer GPUs than processes: exit 3 and one line saying why.
 *  - With 2 GPUs or more: the product checks out against the host and against one GPU; the
 *    solve converges with the iteration count of `--gpus 0,1` (same partition and method; the
 *    all-reduces may sum in another order, so within 2) and writes the same x to within the
 *    solve's tolerance; a rank whose GPU runs out of memory (GS_TEST_FAIL_RANK) makes every
 *    process exit 3 with one line naming that rank, and nothing hangs (timeout). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testutil.h"

static char out[1 << 16], err[1 << 14];

/* stderr holds exactly one line of gpusolve's ("gpusolve: ..."), first, containing needle. The
 * launcher may add its own report after it (Open MPI's mpiexec does when a process exits
 * with a non-zero status): those lines are not the job's. */
static int one_line(const char *needle)
{
  int ours = 0, found = 0;
  for (const char *p = err; *p;) {
    const char *e = strchr(p, '\n');
    const size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len >= 10 && !strncmp(p, "gpusolve: ", 10)) {
      ++ours;
      char line[2048];
      snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), p);
      found |= strstr(line, needle) != NULL;
    }
    p += len + (e != NULL);
  }
  return ours == 1 && found && !strncmp(err, "gpusolve: ", 10);
}

static void report(const char *what, int rc)
{
  fprintf(stderr, "\n  %s: exit %d\n  stdout: %.2000s\n  stderr: %.2000s\n", what, rc, out, err);
}

#ifndef GS_HAVE_MPI

static void test_no_mpi(void)
{
  int rc = gs_test_cli("solve --distributed --grid 6x6x6", out, sizeof out, err, sizeof err);
  const int ok = rc == 2 && out[0] == '\0' && one_line("MPI");
  if (!ok) report("solve --distributed (no MPI in this build)", rc);
  CU_ASSERT(ok);
  printf("\n  this build has no MPI: checked the refusal only\n");
}

int main(void)
{
  CU_TestInfo tests[] = {{"a build without MPI refuses --distributed", test_no_mpi},
                         CU_TEST_INFO_NULL};
  return gs_test_main("cli_mpi", tests, 0);
}

#else

/* Two processes, killed after 120 s: a hang fails the test instead of stalling the run. Open
 * MPI refuses to start as root (CI and the GPU machines run as root) unless told; MPICH
 * ignores the two variables. */
#define LAUNCH                                                                                     \
  "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout -k 5 120 '" GS_MPIEXEC       \
  "' -n 2"

static int job(const char *env, const char *args)
{
  char prefix[1024];
  snprintf(prefix, sizeof prefix, "%s %s", env, LAUNCH);
  return gs_test_cli_under(prefix, args, out, sizeof out, err, sizeof err);
}

/* job() on gpusolve-gpu-testhooks, the suites' build with the test hooks (GS_TEST_FAIL_RANK;
 * the shipped programs have none), beside GS_CLI: each process is a shell that drops the CLI's
 * path, which gs_test_cli_under puts first, and runs that program with the arguments. */
static int job_hooks(const char *env, const char *args)
{
  char dir[4096], prefix[8192];
  snprintf(dir, sizeof dir, "%s", GS_CLI);
  char *slash = strrchr(dir, '/');
  if (slash) *slash = '\0';
  snprintf(prefix, sizeof prefix,
           "%s %s sh -c 'shift; exec \"$0\" \"$@\"' '%s/gpusolve-gpu-testhooks'", env, LAUNCH,
           dir);
  return gs_test_cli_under(prefix, args, out, sizeof out, err, sizeof err);
}

static void test_bad_arguments(void)
{
  static const struct {
    const char *args, *needle;
  } cases[] = {
      {"solve --distributed --grid 6x6x6 --solver bicg", "bicg"},
    {"solve --distributed --grid 6x6x6 --rtol 2", "for --rtol (a number in 0..1)"},
    {"solve --distributed --grid 6x6 --stencil 27", "2D"},
      {"solve --distributed --gpus 0,1 --grid 6x6x6", "not both"},
      {"solve --distributed --transport host --grid 6x6x6", "host"},
      {"solve --distributed --transport peer --grid 6x6x6", "peer"},
      {"spmv --distributed", "give A.mtx or --grid"},
      {"solve --distributed /nonexistent/A.mtx", "/nonexistent/A.mtx"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    const int rc = job("", cases[k].args);
    const int ok = rc == 2 && out[0] == '\0' && one_line(cases[k].needle);
    if (!ok) report(cases[k].args, rc);
    CU_ASSERT(ok);
  }
}

/* The count after "after " in a result line starting with `who`; -1 when absent. */
static int iterations(const char *text, const char *who)
{
  const char *p = strstr(text, who);
  p = p ? strstr(p, " after ") : NULL;
  return p ? atoi(p + 7) : -1;
}

/* Reads a Matrix Market array of n values written by the CLI; NULL when it cannot. */
static double *read_x(const char *path, gs_idx_t *n)
{
  double *x = NULL;
  return gs_mm_read_vector(path, &x, n) == GS_SUCCESS ? x : NULL;
}

static void test_on_gpus(void)
{
  const int ndev = gs_device_count();
  if (ndev < 2) {
    const int rc = job("", "solve --distributed --grid 6x6x6");
    const int ok = rc == 3 && out[0] == '\0' &&
                   one_line(ndev == 0 ? "no CUDA device available" : "2 processes");
    if (!ok) report("solve --distributed with fewer than 2 GPUs", rc);
    CU_ASSERT(ok);
    printf("\n  %d GPU%s: checked the refusal; the solves need 2\n", ndev, ndev == 1 ? "" : "s");
    return;
  }
  /* the product */
  int rc = job("", "spmv --distributed --grid 20x20x20 --stencil 27 --runs 5");
  int ok = rc == 0 && strstr(out, "ranks    2 (nccl, one per process)") != NULL &&
           strstr(out, "(ok)") != NULL && strstr(err, "gpusolve:") == NULL;
  if (!ok) report("spmv --distributed", rc);
  CU_ASSERT(ok);

  /* the solve, against the same solve with both ranks in one process */
  char args[10240];
  const char *xp = gs_test_tmpfile("x_mpi.mtx");
  char xmpi[4096];
  snprintf(xmpi, sizeof xmpi, "%s", xp);
  const char *sys = "solve --grid 24x24x24 --stencil 27 --solver cg --rtol 1e-10";
  snprintf(args, sizeof args, "%s --distributed -o '%s'", sys, xmpi);
  rc = job("", args);
  const int its_mpi = iterations(out, "2 ranks");
  ok = rc == 0 && its_mpi > 0 && strstr(err, "gpusolve:") == NULL;
  if (!ok) report(args, rc);
  CU_ASSERT(ok);
  char xthr[4096];
  snprintf(xthr, sizeof xthr, "%s", gs_test_tmpfile("x_threads.mtx"));
  snprintf(args, sizeof args, "%s --gpus 0,1 -o '%s'", sys, xthr);
  rc = gs_test_cli(args, out, sizeof out, err, sizeof err);
  const int its_thr = iterations(out, "2 ranks");
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT(its_thr > 0 && abs(its_mpi - its_thr) <= 2);
  if (abs(its_mpi - its_thr) > 2) fprintf(stderr, "\n  iterations %d against %d\n", its_mpi, its_thr);
  gs_idx_t n1 = 0, n2 = 0;
  double *x1 = read_x(xmpi, &n1), *x2 = read_x(xthr, &n2);
  CU_ASSERT_FATAL(x1 && x2 && n1 == n2 && n1 == 24 * 24 * 24);
  /* both solve A x = A*1 to ||r|| <= 1e-10 ||b||: each lies within kappa * 1e-10 of x = 1 (the
   * 27-point Laplacian of 24^3 has kappa below 1e3), so they agree to 2e-7 */
  double d = 0.0;
  for (gs_idx_t i = 0; i < n1; ++i) d = fmax(d, fabs(x1[i] - x2[i]));
  CU_ASSERT(d <= 2e-7);
  if (d > 2e-7) fprintf(stderr, "\n  max |x_mpi - x_threads| = %g\n", d);
  free(x1);
  free(x2);

  /* a rank out of GPU memory while the matrix is prepared: one line, every process exits 3. A
   * named format: its layout's allocation cannot be skipped (under auto the next allocation may
   * be an optional one, e.g. the cache key's scratch on the GPU, whose failure costs only a
   * fallback to the host) */
  for (int bad = 0; bad < 2; ++bad) {
    char env[64], want[32];
    snprintf(env, sizeof env, "GS_TEST_FAIL_RANK=%d", bad);
    snprintf(want, sizeof want, "rank %d", bad);
    rc = job_hooks(env, "solve --distributed --grid 12x12x12 --stencil 27 --format csr-vector");
    ok = rc == 3 && one_line(want) && strstr(err, "memory") != NULL;
    if (!ok) report(env, rc);
    CU_ASSERT(ok);
  }
  printf("\n  %d GPUs: product, solve (%d iterations; %d in one process), injected failure\n",
         ndev, its_mpi, its_thr);
}

int main(void)
{
  CU_TestInfo tests[] = {{"bad arguments: exit 2, one line for the job", test_bad_arguments},
                         {"2 processes on the GPUs there are", test_on_gpus},
                         CU_TEST_INFO_NULL};
  return gs_test_main("cli_mpi", tests, 0);
}
#endif
