/* tests/test_matrix_device_host.c: the host-side refusals of gs_matrix_create_device and
 * gs_context_create_on_stream, which must come before any device call (host suite: runs without
 * a GPU). The matrix entry gets a stand-in context (zeroed, device 0) and array pointers that are
 * no device memory: a call that reached the device would fail differently (GS_ERR_CUDA without a
 * GPU, "not ... device memory" with one), so a refusal with the expected message shows that the
 * host check came first. A control case with valid arguments shows that the same stand-ins do
 * reach the device step. The GPU side is tests/test_matrix_device.c. */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <string.h>

#include "core/context_impl.h"
#include "tests/testutil.h"

static struct gs_context stand_in; /* zeroed: device 0, no stream or handles */

/* Pointers that are not device memory (never dereferenced by a correct host check). */
#define FAKE_RP ((const void *)(uintptr_t)0x1000)
#define FAKE_COL ((const gs_idx_t *)(uintptr_t)0x2000)
#define FAKE_VAL ((const gs_val_t *)(uintptr_t)0x3000)

/* A refusal before the device: GS_ERR_INVALID_ARG, a message holding `what`, *out NULL. */
static void refused(gs_status_t st, gs_matrix_t *A, const char *what)
{
  CU_ASSERT_EQUAL(st, GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NULL(A);
  if (!strstr(gs_last_error(), what)) {
    fprintf(stderr, "expected '%s' in: %s\n", what, gs_last_error());
    CU_FAIL("message");
  }
  CU_ASSERT(strstr(gs_last_error(), "gs_matrix_create_device") != NULL);
}

static gs_status_t create(gs_matrix_t **A, gs_context_t *ctx, gs_idx_t m, gs_idx_t n,
                          gs_off_t nnz, const void *rp, int bits, const gs_idx_t *col,
                          const gs_val_t *val, unsigned flags)
{
  *A = (gs_matrix_t *)(uintptr_t)0x1; /* the call must reset it */
  return gs_matrix_create_device(A, ctx, m, n, nnz, rp, bits, col, val, flags);
}

static void test_matrix_arguments(void)
{
  gs_context_t *ctx = &stand_in;
  gs_matrix_t *A = NULL;
  gs_status_t st;
  stand_in.device = 0;

  CU_ASSERT_EQUAL(gs_matrix_create_device(NULL, ctx, 2, 2, 1, FAKE_RP, 32, FAKE_COL, FAKE_VAL,
                                          0), GS_ERR_INVALID_ARG);
  CU_ASSERT(strstr(gs_last_error(), "out is NULL") != NULL);
  st = create(&A, NULL, 2, 2, 1, FAKE_RP, 32, FAKE_COL, FAKE_VAL, 0);
  refused(st, A, "ctx is NULL");

  const gs_idx_t neg_m[] = {-1, 3, 3}, neg_n[] = {3, -2, 3};
  const gs_off_t neg_nnz[] = {1, 1, -5};
  for (int k = 0; k < 3; ++k) {
    st = create(&A, ctx, neg_m[k], neg_n[k], neg_nnz[k], FAKE_RP, 32, FAKE_COL, FAKE_VAL, 0);
    refused(st, A, "negative size");
  }
  const int bad_bits[] = {0, 8, 16, 31, 33, 128, -32};
  for (size_t k = 0; k < sizeof bad_bits / sizeof bad_bits[0]; ++k) {
    st = create(&A, ctx, 3, 3, 2, FAKE_RP, bad_bits[k], FAKE_COL, FAKE_VAL, 0);
    refused(st, A, "row_ptr_bits is");
  }
  st = create(&A, ctx, 3, 3, 2, FAKE_RP, 32, FAKE_COL, FAKE_VAL, 0x4);
  refused(st, A, "unknown flags 0x4");
  st = create(&A, ctx, 2, 3, 7, FAKE_RP, 32, FAKE_COL, FAKE_VAL, 0); /* 7 > 2 x 3 */
  refused(st, A, "do not fit a 2 x 3 matrix");
  st = create(&A, ctx, 0, 5, 1, FAKE_RP, 64, FAKE_COL, FAKE_VAL, 0);
  refused(st, A, "do not fit a 0 x 5 matrix");
  /* more than 2^31-1 entries: only 64-bit row pointers reach them */
  st = create(&A, ctx, 1 << 20, 1 << 20, (gs_off_t)INT32_MAX + 1, FAKE_RP, 32, FAKE_COL,
              FAKE_VAL, 0);
  refused(st, A, "beyond 32-bit row pointers");
  st = create(&A, ctx, 3, 3, 2, NULL, 64, FAKE_COL, FAKE_VAL, 0);
  refused(st, A, "d_row_ptr is NULL");
  st = create(&A, ctx, 3, 3, 2, FAKE_RP, 32, NULL, FAKE_VAL, 0);
  refused(st, A, "d_col or d_val is NULL with 2 entries");
  st = create(&A, ctx, 3, 3, 2, FAKE_RP, 32, FAKE_COL, NULL, GS_MATRIX_DEVICE_BORROW);
  refused(st, A, "d_col or d_val is NULL");

  /* control: valid arguments reach the device step with the same stand-ins, and fail there */
  st = create(&A, ctx, 3, 3, 2, FAKE_RP, 32, FAKE_COL, FAKE_VAL, 0);
  CU_ASSERT_PTR_NULL(A);
  if (gs_device_count() == 0) {
    CU_ASSERT_EQUAL(st, GS_ERR_CUDA); /* the context's device cannot be made current */
  } else {
    CU_ASSERT_EQUAL(st, GS_ERR_INVALID_ARG);
    CU_ASSERT(strstr(gs_last_error(), "d_row_ptr") != NULL);
    CU_ASSERT(strstr(gs_last_error(), "device") != NULL);
  }
  /* nnz = 0 takes NULL entry arrays: the host checks pass, the device step follows */
  st = create(&A, ctx, 3, 3, 0, FAKE_RP, 64, NULL, NULL, 0);
  CU_ASSERT_NOT_EQUAL(st, GS_SUCCESS);
  CU_ASSERT(strstr(gs_last_error(), "NULL") == NULL);
}

static void test_stream_arguments(void)
{
  gs_context_t *ctx = (gs_context_t *)(uintptr_t)0x1;
  CU_ASSERT_EQUAL(gs_context_create_on_stream(NULL, 0, (void *)(uintptr_t)0x1234),
                  GS_ERR_INVALID_ARG);
  CU_ASSERT(strstr(gs_last_error(), "out is NULL") != NULL);
  /* the default streams, refused before the device is asked anything */
  void *const defaults[] = {NULL, (void *)cudaStreamLegacy, (void *)cudaStreamPerThread};
  const char *const why[] = {"legacy default stream", "legacy default stream",
                             "per-thread default stream"};
  for (int k = 0; k < 3; ++k) {
    ctx = (gs_context_t *)(uintptr_t)0x1;
    CU_ASSERT_EQUAL(gs_context_create_on_stream(&ctx, 0, defaults[k]), GS_ERR_INVALID_ARG);
    CU_ASSERT_PTR_NULL(ctx);
    if (!strstr(gs_last_error(), why[k])) {
      fprintf(stderr, "expected '%s' in: %s\n", why[k], gs_last_error());
      CU_FAIL("message");
    }
  }
  /* control (no GPU only: with one, a made-up stream handle must not reach CUDA): a created
     stream's handle goes on to the device step, which finds no device */
  if (gs_device_count() == 0) {
    ctx = (gs_context_t *)(uintptr_t)0x1;
    CU_ASSERT_EQUAL(gs_context_create_on_stream(&ctx, 0, (void *)(uintptr_t)0x1234),
                    GS_ERR_CUDA);
    CU_ASSERT_PTR_NULL(ctx);
    CU_ASSERT(strstr(gs_last_error(), "no CUDA device available") != NULL);
  }
}

int main(void)
{
  CU_TestInfo tests[] = {
      {"gs_matrix_create_device: host refusals before the device", test_matrix_arguments},
      {"gs_context_create_on_stream: host refusals before the device", test_stream_arguments},
      CU_TEST_INFO_NULL};
  return gs_test_main("matrix_device_host", tests, 0);
}
