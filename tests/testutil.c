/* tests/testutil.c: shared helpers of the CUnit suites. */
#define _POSIX_C_SOURCE 200809L
#include "tests/testutil.h"

#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *const gs_test_matrix_names[] = {
  "2dcyl1", "494_bus", "Dubcova1", "Si2", "add32", "as-caida20071105", "bayer10", "bcsstk13",
  "bcsstk16", "cage10", "crystm01", "delaunay_n15", "email-Enron", "fidapex6", "fs_183_1",
  "illc1033", "lp_e226", "memplus", "msc04515", "nos7", "orsreg_1", "sherman5", "well1850",
  "west0479", "wiki-Vote", "zenios", NULL};

int gs_test_main(const char *suite, CU_TestInfo *tests, int needs_gpu)
{
  if (needs_gpu && gs_device_count() == 0) {
    printf("%s: no CUDA device available: suite skipped\n", suite);
    return 77;
  }
  printf("%s: seed %llu (set GS_TEST_SEED to repeat)\n", suite,
         (unsigned long long)gs_test_seed());
  if (CU_initialize_registry() != CUE_SUCCESS) return 1;
  CU_SuiteInfo suites[] = {{suite, NULL, NULL, NULL, NULL, tests}, CU_SUITE_INFO_NULL};
  if (CU_register_suites(suites) != CUE_SUCCESS) {
    CU_cleanup_registry();
    return 1;
  }
  CU_basic_set_mode(CU_BRM_VERBOSE);
  CU_basic_run_tests();
  unsigned fails = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
  unsigned run = CU_get_number_of_tests_run();
  CU_cleanup_registry();
  return (fails == 0 && run > 0) ? 0 : 1;
}

uint64_t gs_test_seed(void)
{
  static uint64_t seed;
  static int have;
  if (!have) {
    const char *s = getenv("GS_TEST_SEED");
    if (s && *s) {
      seed = strtoull(s, NULL, 10);
    } else {
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      seed = (uint64_t)ts.tv_sec * 1000003u ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
    }
    have = 1;
  }
  return seed;
}

uint64_t gs_test_next(uint64_t *s)
{
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double gs_test_uniform(uint64_t *s) { return (double)(gs_test_next(s) >> 11) * 0x1.0p-53; }

const char *gs_test_matrix(const char *name)
{
  static char buf[4096];
  snprintf(buf, sizeof buf, "%s/%s.mtx", GS_MATRIX_DIR, name);
  return buf;
}

const char *gs_test_data(const char *rel)
{
  static char buf[4096];
  snprintf(buf, sizeof buf, "%s/%s", GS_TEST_DATA, rel);
  return buf;
}

int gs_test_quick(void)
{
  const char *q = getenv("GS_TEST_QUICK");
  return q && *q && strcmp(q, "0") != 0;
}

static void read_all(const char *path, char *buf, size_t sz)
{
  if (!buf || sz == 0) return;
  buf[0] = '\0';
  FILE *f = fopen(path, "rb");
  if (!f) return;
  size_t n = fread(buf, 1, sz - 1, f);
  buf[n] = '\0';
  fclose(f);
}

int gs_test_cli(const char *args, char *out, size_t outsz, char *err, size_t errsz)
{
  char o[] = "/tmp/gs_cli_outXXXXXX", e[] = "/tmp/gs_cli_errXXXXXX";
  int fo = mkstemp(o), fe = mkstemp(e);
  if (fo < 0 || fe < 0) return -1;
  close(fo);
  close(fe);
  size_t len = strlen(GS_CLI) + strlen(args) + strlen(o) + strlen(e) + 32;
  char *cmd = malloc(len);
  if (!cmd) return -1;
  snprintf(cmd, len, "'%s' %s >%s 2>%s </dev/null", GS_CLI, args, o, e);
  int rc = system(cmd);
  free(cmd);
  read_all(o, out, outsz);
  read_all(e, err, errsz);
  unlink(o);
  unlink(e);
  if (rc == -1 || !WIFEXITED(rc)) return -1;
  return WEXITSTATUS(rc);
}

gs_csr_t *gs_test_csr_from_dense(int m, int n, const double *a)
{
  gs_coo_t *C = NULL;
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_coo_create(&C, m, n, 4) == GS_SUCCESS);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      if (a[i * n + j] != 0.0) CU_ASSERT_FATAL(gs_coo_push(C, i, j, a[i * n + j]) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
  gs_coo_destroy(&C);
  return A;
}

gs_csr_t *gs_test_random_csr(uint64_t *state, gs_idx_t m, gs_idx_t n, double density)
{
  gs_coo_t *C = NULL;
  gs_csr_t *A = NULL;
  if (gs_coo_create(&C, m, n, 16) != GS_SUCCESS) return NULL;
  for (gs_idx_t i = 0; i < m; ++i)
    for (gs_idx_t j = 0; j < n; ++j)
      if (gs_test_uniform(state) < density)
        if (gs_coo_push(C, i, j, 2.0 * gs_test_uniform(state) - 1.0) != GS_SUCCESS) goto out;
  gs_coo_to_csr(&A, C);
out:
  gs_coo_destroy(&C);
  return A;
}

double gs_test_rel_err(const double *a, const double *b, size_t n)
{
  double num = 0.0, den = 0.0;
  for (size_t i = 0; i < n; ++i) {
    double d = fabs(a[i] - b[i]);
    if (!(d <= num)) num = d; /* NaN propagates */
    if (fabs(b[i]) > den) den = fabs(b[i]);
  }
  return num / (den > 1e-300 ? den : 1e-300);
}
