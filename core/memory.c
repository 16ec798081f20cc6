/* core/memory.c: the counting device allocator (bytes in use for memory reports) with a
 * failure-injection hook so that tests can make allocation k fail (as CSparse's Tcov does).
 * Sizes of live blocks are kept in a small host hash table keyed by pointer, so freeing needs
 * no device round trip. */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/error.h"
#include "gpusolve/context.h"

typedef struct {
  void *p;      /* NULL: empty slot; TOMB: deleted */
  size_t bytes;
} block_t;

static char g_tomb;
#define TOMB ((void *)&g_tomb)

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static block_t *g_tab;
static size_t g_cap, g_used; /* slots, slots not empty (live + tombstones) */
static size_t g_in_use, g_peak;
static long g_fail_after;

static size_t slot_of(const void *p, size_t cap)
{
  uint64_t h = (uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull;
  return (size_t)(h >> 17) & (cap - 1);
}

/* Rehash into a table of new_cap slots (power of two); caller holds the lock. */
static int rehash(size_t new_cap)
{
  block_t *t = calloc(new_cap, sizeof *t);
  if (!t) return 0;
  size_t used = 0;
  for (size_t k = 0; k < g_cap; ++k) {
    if (g_tab[k].p == NULL || g_tab[k].p == TOMB) continue;
    size_t s = slot_of(g_tab[k].p, new_cap);
    while (t[s].p) s = (s + 1) & (new_cap - 1);
    t[s] = g_tab[k];
    ++used;
  }
  free(g_tab);
  g_tab = t;
  g_cap = new_cap;
  g_used = used;
  return 1;
}

void gs_dmalloc_fail_after(long k)
{
  pthread_mutex_lock(&g_lock);
  g_fail_after = k > 0 ? k : 0;
  pthread_mutex_unlock(&g_lock);
}

size_t gs_device_bytes_in_use(void)
{
  pthread_mutex_lock(&g_lock);
  size_t v = g_in_use;
  pthread_mutex_unlock(&g_lock);
  return v;
}

size_t gs_device_bytes_peak(void)
{
  pthread_mutex_lock(&g_lock);
  size_t v = g_peak;
  pthread_mutex_unlock(&g_lock);
  return v;
}

gs_status_t gs_dmalloc(void **p, size_t bytes, const char *what)
{
  if (!p) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_dmalloc: p is NULL");
  *p = NULL;
  if (bytes == 0) return GS_SUCCESS;
  if (!what) what = "a buffer";

  pthread_mutex_lock(&g_lock);
  int inject = g_fail_after > 0 && --g_fail_after == 0;
  int ok = (g_used + 1) * 2 <= g_cap || rehash(g_cap ? g_cap * 2 : 64);
  pthread_mutex_unlock(&g_lock);
  if (inject)
    return GS_ERROR(GS_ERR_DEVICE_MEMORY,
                    "out of device memory allocating %zu bytes for %s (injected failure)",
                    bytes, what);
  if (!ok) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory tracking device memory");

  void *d = NULL;
  cudaError_t err = cudaMalloc(&d, bytes);
  if (err != cudaSuccess) {
    (void)cudaGetLastError(); /* an allocation failure must not poison later launches */
    if (err == cudaErrorMemoryAllocation)
      return GS_ERROR(GS_ERR_DEVICE_MEMORY,
                      "out of device memory allocating %zu bytes for %s (%zu bytes in use by "
                      "gpusolve)", bytes, what, gs_device_bytes_in_use());
    return gs_error_cuda((int)err, "cudaMalloc", __FILE__, __LINE__);
  }

  pthread_mutex_lock(&g_lock);
  if ((g_used + 1) * 2 > g_cap) rehash(g_cap * 2); /* another thread may have filled it */
  size_t s = slot_of(d, g_cap);
  while (g_tab[s].p && g_tab[s].p != TOMB) s = (s + 1) & (g_cap - 1);
  if (g_tab[s].p == NULL) ++g_used;
  g_tab[s].p = d;
  g_tab[s].bytes = bytes;
  g_in_use += bytes;
  if (g_in_use > g_peak) g_peak = g_in_use;
  pthread_mutex_unlock(&g_lock);
  *p = d;
  return GS_SUCCESS;
}

void gs_dfree(void *p)
{
  if (!p) return;
  pthread_mutex_lock(&g_lock);
  if (g_cap) {
    size_t s = slot_of(p, g_cap);
    while (g_tab[s].p && g_tab[s].p != p) s = (s + 1) & (g_cap - 1);
    if (g_tab[s].p == p) {
      g_in_use -= g_tab[s].bytes;
      g_tab[s].p = TOMB;
    }
  }
  pthread_mutex_unlock(&g_lock);
  cudaFree(p);
}
