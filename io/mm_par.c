/* io/mm_par.c: the thread count of the Matrix Market reader and the one place it starts threads.
 *
 * Work is handed out in two ways by the callers: fixed shares (t of nt) for the CSR build, a
 * shared counter of parts for the parser (so that a thread slowed by other load takes fewer
 * parts). Both run through gs_mm_parallel, which never fails: a thread that cannot be started
 * has its share run on the calling thread. */
#define _DEFAULT_SOURCE /* madvise */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gpusolve/io.h"
#include "io/mm_internal.h"

#define MM_MAX_THREADS 1024

size_t gs_mm_part_min = (size_t)1 << 20;
int gs_mm_inline_threads = 0;

static atomic_int g_threads; /* 0: the default (GS_THREADS, else the online cores) */

void gs_mm_set_threads(int n)
{
  atomic_store(&g_threads, n > 0 ? (n > MM_MAX_THREADS ? MM_MAX_THREADS : n) : 0);
}

int gs_mm_threads(void)
{
  int n = atomic_load(&g_threads);
  if (n > 0) return n;
  const char *e = getenv("GS_THREADS");
  if (e && *e) {
    char *end;
    long v = strtol(e, &end, 10);
    if (*end == '\0' && v > 0) return v > MM_MAX_THREADS ? MM_MAX_THREADS : (int)v;
  }
  long c = sysconf(_SC_NPROCESSORS_ONLN);
  if (c < 1) return 1;
  return c > MM_MAX_THREADS ? MM_MAX_THREADS : (int)c;
}

typedef struct mm_worker {
  pthread_t tid;
  void (*fn)(void *, int);
  void *arg;
  int t;
  int started;
} mm_worker;

static void *worker_main(void *p)
{
  mm_worker *w = p;
  w->fn(w->arg, w->t);
  return NULL;
}

void gs_mm_parallel(int nt, void (*fn)(void *arg, int t), void *arg)
{
  if (nt <= 1 || gs_mm_inline_threads) {
    for (int t = 0; t < nt; ++t) fn(arg, t);
    return;
  }
  mm_worker *w = calloc((size_t)nt, sizeof *w);
  if (!w) { /* no room even for the bookkeeping: every share on this thread */
    for (int t = 0; t < nt; ++t) fn(arg, t);
    return;
  }
  for (int t = 1; t < nt; ++t) {
    w[t].fn = fn;
    w[t].arg = arg;
    w[t].t = t;
    w[t].started = pthread_create(&w[t].tid, NULL, worker_main, &w[t]) == 0;
  }
  fn(arg, 0);
  for (int t = 1; t < nt; ++t)
    if (!w[t].started) fn(arg, t);
  for (int t = 1; t < nt; ++t)
    if (w[t].started) pthread_join(w[t].tid, NULL);
  free(w);
}

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
