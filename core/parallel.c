/* core/parallel.c: the library's host threads: their count (gs_mm_set_threads / gs_mm_threads,
 * declared in gpusolve/io.h, where the reader made them public) and the one place threads are
 * started (gs_parallel).
 *
 * Work is handed out in two ways by the callers: fixed shares (t of nt), or a shared counter of
 * parts (so that a thread slowed by other load takes fewer). Both run through gs_parallel, which
 * never fails: a thread that cannot be started has its share run on the calling thread. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/parallel.h"
#include "gpusolve/io.h"

#define GS_MAX_THREADS 1024

int gs_parallel_inline = 0;

static atomic_int g_threads; /* 0: the default (GS_THREADS, else the online cores) */

void gs_mm_set_threads(int n)
{
  atomic_store(&g_threads, n > 0 ? (n > GS_MAX_THREADS ? GS_MAX_THREADS : n) : 0);
}

int gs_mm_threads(void)
{
  int n = atomic_load(&g_threads);
  if (n > 0) return n;
  const char *e = getenv("GS_THREADS");
  if (e && *e) {
    char *end;
    long v = strtol(e, &end, 10);
    if (*end == '\0' && v > 0) return v > GS_MAX_THREADS ? GS_MAX_THREADS : (int)v;
  }
  long c = sysconf(_SC_NPROCESSORS_ONLN);
  if (c < 1) return 1;
  return c > GS_MAX_THREADS ? GS_MAX_THREADS : (int)c;
}

typedef struct gs_worker {
  pthread_t tid;
  void (*fn)(void *, int);
  void *arg;
  int t;
  int started;
} gs_worker;

static void *worker_main(void *p)
{
  gs_worker *w = p;
  w->fn(w->arg, w->t);
  return NULL;
}

void gs_parallel(int nt, void (*fn)(void *arg, int t), void *arg)
{
  if (nt <= 1 || gs_parallel_inline) {
    for (int t = 0; t < nt; ++t) fn(arg, t);
    return;
  }
  gs_worker *w = calloc((size_t)nt, sizeof *w);
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

