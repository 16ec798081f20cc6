/* tests/test_version.c: the version, from project(VERSION) in CMakeLists.txt to the header
 * macros, gs_version() and `gpusolve --version`. Host suite. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "tests/testutil.h"

static char out[1 << 14], err[1 << 14];

static void test_macros_and_library_agree(void)
{
  char want[64];
  snprintf(want, sizeof want, "%d.%d.%d", GS_VERSION_MAJOR, GS_VERSION_MINOR, GS_VERSION_PATCH);
  CU_ASSERT_STRING_EQUAL(GS_VERSION_STRING, want);
  CU_ASSERT_STRING_EQUAL(gs_version(), GS_VERSION_STRING);
  /* the generated header follows project(VERSION) (GS_PROJECT_VERSION is passed by CMake) */
  CU_ASSERT_STRING_EQUAL(gs_version(), GS_PROJECT_VERSION);
  CU_ASSERT_EQUAL(GS_VERSION_NUMBER,
                  GS_VERSION_MAJOR * 10000 + GS_VERSION_MINOR * 100 + GS_VERSION_PATCH);
  CU_ASSERT(GS_VERSION_MINOR < 100 && GS_VERSION_PATCH < 100);
  CU_ASSERT_PTR_EQUAL(gs_version(), gs_version()); /* static storage */
}

static void test_cli_version(void)
{
  char want[64];
  snprintf(want, sizeof want, "gpusolve %s\n", gs_version());
  CU_ASSERT_EQUAL(gs_test_cli("--version", out, sizeof out, err, sizeof err), 0);
  CU_ASSERT_STRING_EQUAL(out, want);
  CU_ASSERT_STRING_EQUAL(err, "");
  /* --help names the version too */
  CU_ASSERT_EQUAL(gs_test_cli("--help", out, sizeof out, err, sizeof err), 0);
  snprintf(want, sizeof want, "gpusolve %s:", gs_version());
  CU_ASSERT(strstr(out, want) != NULL);
}

int main(void)
{
  CU_TestInfo tests[] = {{"macros, gs_version() and project(VERSION) agree",
                          test_macros_and_library_agree},
                         {"gpusolve --version", test_cli_version},
                         CU_TEST_INFO_NULL};
  return gs_test_main("version", tests, 0);
}
