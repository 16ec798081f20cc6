/* fuzz/mm_read_fuzz.c: libFuzzer target for the Matrix Market reader (scripts/fuzz.sh builds and
 * runs it under AddressSanitizer and UndefinedBehaviorSanitizer).
 *
 * Each input is read from memory as a COO, a CSR and a vector, on one thread and on three
 * "threads" with parts as small as one byte, so that the parallel reader splits even tiny inputs
 * (the shares of the threads run in turn on this thread: ThreadSanitizer is the tool for races).
 * Besides crashes and sanitizer reports, it stops on any disagreement with the reader's
 * contract: a status without a one-line message, a failed read that returns an object, the
 * parallel reader differing from the serial one (status, message or a single bit of the
 * result), or a CSR that gs_csr_validate refuses or that differs from gs_coo_to_csr's, or a
 * strict read (GS_MM_STRICT) or the file's info differing between the two. The memory budget is
 * fixed (gs_mm_memory_limit), so that its refusals do not depend on the machine. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the reader's own headers, not the umbrella: gpusolve/version.h is generated in a CMake
 * build tree, which this clang-only build does not have */
#include "gpusolve/io.h"
#include "gpusolve/matrix.h"
#include "io/mm_internal.h"

#define NAME "fuzz.mtx"

static void fail(const char *what)
{
  fprintf(stderr, "mm_read_fuzz: %s (message: %s)\n", what, gs_last_error());
  abort();
}

static void check_message(gs_status_t st)
{
  if (st == GS_SUCCESS) return;
  const char *m = gs_last_error();
  if (strncmp(m, NAME, strlen(NAME)) != 0) fail("message does not start with the name");
  if (strchr(m, '\n')) fail("message with a newline");
}

static int coo_same(const gs_coo_t *a, const gs_coo_t *b)
{
  if (a->m != b->m || a->n != b->n || a->nnz != b->nnz || a->symmetry != b->symmetry) return 0;
  size_t n = (size_t)a->nnz;
  return n == 0 || (memcmp(a->row, b->row, n * sizeof *a->row) == 0 &&
                    memcmp(a->col, b->col, n * sizeof *a->col) == 0 &&
                    memcmp(a->val, b->val, n * sizeof *a->val) == 0);
}

static int csr_same(const gs_csr_t *a, const gs_csr_t *b)
{
  if (a->m != b->m || a->n != b->n || a->nnz != b->nnz || a->symmetry != b->symmetry) return 0;
  if (memcmp(a->row_ptr, b->row_ptr, ((size_t)a->m + 1) * sizeof *a->row_ptr) != 0) return 0;
  size_t n = (size_t)a->nnz;
  return n == 0 || (memcmp(a->col, b->col, n * sizeof *a->col) == 0 &&
                    memcmp(a->val, b->val, n * sizeof *a->val) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static char msg[1100];
  gs_coo_t *C1 = NULL, *C3 = NULL;
  gs_csr_t *A1 = NULL, *A3 = NULL, *R = NULL;
  gs_val_t *x1 = NULL, *x3 = NULL;
  gs_idx_t n1 = 0, n3 = 0;
  gs_mm_part_min = 1;
  gs_coo_to_csr_min = 1;
  gs_parallel_inline = 1; /* the threads' shares in turn: fast, and the same code paths */
  gs_mm_memory_limit = (int64_t)256 << 20;

  /* COO, serial then parallel */
  gs_mm_set_threads(1);
  gs_status_t s1 = gs_mm_read_coo_mem(NAME, data, size, &C1);
  check_message(s1);
  snprintf(msg, sizeof msg, "%s", gs_last_error());
  if ((s1 == GS_SUCCESS) != (C1 != NULL)) fail("COO status and result disagree");
  gs_mm_set_threads(3);
  gs_status_t s3 = gs_mm_read_coo_mem(NAME, data, size, &C3);
  check_message(s3);
  if (s1 != s3) fail("serial and parallel COO status differ");
  if (s1 != GS_SUCCESS && strcmp(msg, gs_last_error()) != 0) fail("messages differ");
  if (s1 == GS_SUCCESS && !coo_same(C1, C3)) fail("serial and parallel COO differ");

  /* A CSR and a vector take memory in proportion to the declared rows, however few the
   * entries: that is their nature, not a fault, so huge shapes stop here (the COO is read). */
  if (s1 == GS_SUCCESS && ((int64_t)C1->m > ((int64_t)1 << 20) || C1->n > (1 << 20))) goto done;

  /* CSR: serial, parallel, and gs_coo_to_csr of the COO */
  gs_mm_set_threads(1);
  s1 = gs_mm_read_csr_mem(NAME, data, size, &A1);
  check_message(s1);
  gs_mm_set_threads(3);
  s3 = gs_mm_read_csr_mem(NAME, data, size, &A3);
  check_message(s3);
  if (s1 != s3) fail("serial and parallel CSR status differ");
  if (s1 == GS_SUCCESS) {
    if (gs_csr_validate(A1) != GS_SUCCESS || !gs_csr_is_sorted(A1)) fail("invalid CSR");
    if (!csr_same(A1, A3)) fail("serial and parallel CSR differ");
    if (C1 && gs_coo_to_csr(&R, C1) == GS_SUCCESS && !csr_same(A1, R))
      fail("CSR differs from gs_coo_to_csr's");
  }
  gs_csr_destroy(&A1);
  gs_csr_destroy(&A3);

  /* strict: the same outcome, message and info on one and three threads */
  gs_mm_info_t i1, i3;
  memset(&i1, 0, sizeof i1);
  memset(&i3, 0, sizeof i3);
  gs_mm_set_threads(1);
  s1 = gs_mm_read_csr_mem_ex(NAME, data, size, GS_MM_STRICT, &A1, &i1);
  check_message(s1);
  snprintf(msg, sizeof msg, "%s", gs_last_error());
  gs_mm_set_threads(3);
  s3 = gs_mm_read_csr_mem_ex(NAME, data, size, GS_MM_STRICT, &A3, &i3);
  check_message(s3);
  if (s1 != s3) fail("serial and parallel strict status differ");
  if (s1 != GS_SUCCESS && strcmp(msg, gs_last_error()) != 0) fail("strict messages differ");
  if (s1 == GS_SUCCESS && (memcmp(&i1, &i3, sizeof i1) != 0 || !csr_same(A1, A3)))
    fail("serial and parallel strict reads differ");
  if (s1 == GS_SUCCESS && i1.symmetry == GS_SYM_SYMMETRIC && i1.lower > 0 && i1.upper > 0)
    fail("a strict read took both triangles");

  /* vector */
  gs_mm_set_threads(1);
  s1 = gs_mm_read_vector_mem(NAME, data, size, &x1, &n1);
  check_message(s1);
  gs_mm_set_threads(3);
  s3 = gs_mm_read_vector_mem(NAME, data, size, &x3, &n3);
  check_message(s3);
  if (s1 != s3 || n1 != n3) fail("serial and parallel vector differ");
  if (s1 == GS_SUCCESS && n1 > 0 && memcmp(x1, x3, (size_t)n1 * sizeof *x1) != 0)
    fail("serial and parallel vector values differ");

done:
  gs_coo_destroy(&C1);
  gs_coo_destroy(&C3);
  gs_csr_destroy(&A1);
  gs_csr_destroy(&A3);
  gs_csr_destroy(&R);
  free(x1);
  free(x3);
  return 0;
}
