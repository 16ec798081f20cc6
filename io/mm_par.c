/* io/mm_par.c: the reader's part size and its release of mapped pages (its threads are
 * core/parallel.c's). */
#define _DEFAULT_SOURCE /* madvise */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gpusolve/io.h"
#include "io/mm_internal.h"

size_t gs_mm_part_min = (size_t)1 << 20;

void gs_mm_advise_done(const void *p, size_t bytes)
{
#if defined(MADV_DONTNEED)
  long ps = sysconf(_SC_PAGESIZE);
  if (ps <= 0) return;
  const uintptr_t page = (uintptr_t)ps;
  uintptr_t b = ((uintptr_t)p + page - 1) & ~(page - 1), e = ((uintptr_t)p + bytes) & ~(page - 1);
  if (e > b) (void)madvise((void *)b, e - b, MADV_DONTNEED);
#else
  (void)p;
  (void)bytes;
#endif
}
