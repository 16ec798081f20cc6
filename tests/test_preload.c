/* tests/test_preload.c: gs_context_preload (include/gpusolve/context.h) on the GPU (exit 77
 * without one): the default list, a named list and "formats" succeed and leave no device
 * memory allocated; a stop flag already set returns at once; unknown and empty items and a
 * NULL context are refused before any work; an allocation failure at any of its first
 * allocations is returned or absorbed (a format that cannot be built is skipped) with nothing
 * leaked and the context usable after. */
#include <stdio.h>
#include <string.h>

#include "core/testhooks.h"
#include "tests/testutil.h"

static gs_context_t *ctx;

static void test_preload_lists(void)
{
  const size_t base = gs_device_bytes_in_use(ctx);
  const double t0 = gs_wall_seconds();
  CU_ASSERT_EQUAL(gs_context_preload(ctx, NULL, NULL), GS_SUCCESS);
  printf("  default list %.1f ms\n", 1e3 * (gs_wall_seconds() - t0));
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
  static const char *const ok[] = {"bccoo", "features,amg", "auto,dia,formats", "formats",
                                   "jacobi,block-jacobi,ilu0,none"};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; ++i) {
    CU_ASSERT_EQUAL(gs_context_preload(ctx, ok[i], NULL), GS_SUCCESS);
    CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
  }
  volatile int stop = 1;
  CU_ASSERT_EQUAL(gs_context_preload(ctx, NULL, &stop), GS_SUCCESS);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
  static const char *const bad[] = {"nope", "bccoo,,amg", "bccoo,", ",amg", "AMG"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    CU_ASSERT_EQUAL(gs_context_preload(ctx, bad[i], NULL), GS_ERR_INVALID_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(gs_last_error(), "gs_context_preload"));
  }
  CU_ASSERT_EQUAL(gs_context_preload(NULL, NULL, NULL), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
}

/* The k-th allocation fails, for k = 1 .. 40 (the matrix's, the vectors', then the formats'
 * and AMG's): a status either way, nothing leaked, the preload works after. */
static void test_preload_faults(void)
{
  const size_t base = gs_device_bytes_in_use(ctx);
  for (long k = 1; k <= 40; ++k) {
    gs_test_dmalloc_fail_after(ctx, k);
    const gs_status_t st = gs_context_preload(ctx, NULL, NULL);
    gs_test_dmalloc_fail_after(ctx, 0);
    CU_ASSERT(st == GS_SUCCESS || st == GS_ERR_DEVICE_MEMORY);
    CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
    if (gs_device_bytes_in_use(ctx) != base)
      fprintf(stderr, "  allocation %ld failed: %zu bytes left\n", k,
              gs_device_bytes_in_use(ctx) - base);
  }
  CU_ASSERT_EQUAL(gs_context_preload(ctx, NULL, NULL), GS_SUCCESS);
}

int main(void)
{
  if (gs_device_count() > 0 && gs_context_create(&ctx, 0) != GS_SUCCESS) {
    fprintf(stderr, "context: %s\n", gs_last_error());
    return 1;
  }
  CU_TestInfo tests[] = {{"preload: lists, stop flag, refusals, nothing leaked", test_preload_lists},
                         {"preload: an allocation failure at each of the first 40", test_preload_faults},
                         CU_TEST_INFO_NULL};
  const int rc = gs_test_main("preload", tests, 1);
  gs_context_destroy(&ctx);
  return rc;
}
