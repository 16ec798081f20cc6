/* core/memory.c: the counting device allocator (bytes in use for memory reports) with a
 * failure-injection hook so that tests can make allocation k fail (as CSparse's Tcov does).
 * Sizes of live blocks are kept in a small host hash table keyed by pointer, so freeing needs
 * no device round trip. */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/context_impl.h"
#include "core/testhooks.h"

/* One table per context (struct gs_memtab in core/context_impl.h): contexts on different devices
 * or threads count their own bytes, and a failure injected into one context leaves the others
 * alone. */
typedef gs_memblock_t block_t;

static char g_tomb;
#define TOMB ((void *)&g_tomb)

static size_t slot_of(const void *p, size_t cap)
{
  uint64_t h = (uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull;
  return (size_t)(h >> 17) & (cap - 1);
}

/* Rehash into a table of new_cap slots (power of two); caller holds the lock. */
static int rehash(gs_memtab_t *M, size_t new_cap)
{
  block_t *t = calloc(new_cap, sizeof *t);
  if (!t) return 0;
  size_t used = 0;
  for (size_t k = 0; k < M->cap; ++k) {
    if (M->tab[k].p == NULL || M->tab[k].p == TOMB) continue;
    size_t s = slot_of(M->tab[k].p, new_cap);
    while (t[s].p) s = (s + 1) & (new_cap - 1);
    t[s] = M->tab[k];
    ++used;
  }
  free(M->tab);
  M->tab = t;
  M->cap = new_cap;
  M->used = used;
  return 1;
}

gs_status_t gs_memtab_init(gs_memtab_t *M)
{
  memset(M, 0, sizeof *M);
  if (pthread_mutex_init(&M->lock, NULL) != 0)
    return GS_ERROR(GS_ERR_HOST_MEMORY, "cannot create the allocator's lock");
  M->lock_ok = 1;
  return GS_SUCCESS;
}

void gs_memtab_fini(gs_memtab_t *M)
{
  if (!M->lock_ok) return;
  for (size_t k = 0; k < M->cap; ++k) /* blocks the caller forgot: give them back */
    if (M->tab[k].p && M->tab[k].p != TOMB) cudaFree(M->tab[k].p);
  free(M->tab);
  pthread_mutex_destroy(&M->lock);
  memset(M, 0, sizeof *M);
}

void gs_test_wide_offsets(gs_context_t *ctx, int on)
{
  if (ctx) ctx->test_wide = on != 0;
}

void gs_test_solver_vecops(gs_context_t *ctx, int which)
{
  if (ctx) ctx->test_vecops = which == 1 || which == 2 ? which : 0;
}

void gs_test_persist_per_sm(gs_context_t *ctx, int per_sm)
{
  if (ctx) ctx->test_persist_per_sm = per_sm > 0 ? per_sm : 0;
}

void gs_test_precond_auto(gs_context_t *ctx, int mode)
{
  if (ctx) ctx->test_precond_auto = mode >= 1 && mode <= 3 ? mode : 0;
}

void gs_test_reorder_dev_rcm(gs_context_t *ctx, int mode)
{
  if (ctx) ctx->test_reorder_dev_rcm = mode == 1 || mode == 2 ? mode : 0;
}

void gs_test_dmalloc_fail_after(gs_context_t *ctx, long k)
{
  if (!ctx) return;
  pthread_mutex_lock(&ctx->mem.lock);
  ctx->mem.fail_after = k < 0 ? -1 : k;
  pthread_mutex_unlock(&ctx->mem.lock);
}

/* One counter of ctx's table read under its lock (peak: the high-water mark, else in use). */
static size_t counter(const gs_context_t *ctx, int peak)
{
  if (!ctx) return 0;
  gs_memtab_t *M = (gs_memtab_t *)&ctx->mem;
  pthread_mutex_lock(&M->lock);
  size_t v = peak ? M->peak : M->in_use;
  pthread_mutex_unlock(&M->lock);
  return v;
}

size_t gs_device_bytes_in_use(const gs_context_t *ctx) { return counter(ctx, 0); }
size_t gs_device_bytes_peak(const gs_context_t *ctx) { return counter(ctx, 1); }

/* The device's default memory pool, kept from shrinking (release threshold: all): a layout
 * built after another reuses the pages the earlier one gave back instead of mapping new ones
 * (cudaMalloc of the 100-320 MB a format takes on a 26M-entry matrix dominates its GPU build).
 * The allocation is taken on the context's stream and (gs_dmalloc) the stream synchronized, so
 * the block is usable anywhere at once, as cudaMalloc's; gs_dmalloc_ordered leaves it in the
 * stream's order (the device builds: no stall of their kernel chains); gs_dfree gives it back in the stream's order
 * (cudaFreeAsync), so work on other streams that reads a block must be joined to the context's
 * stream (an event) or synchronized before the block is freed. GS_MEMPOOL=0 in the environment
 * keeps plain cudaMalloc and cudaFree. */
static cudaError_t pool_alloc(gs_context_t *ctx, void **d, size_t bytes, int sync)
{
  gs_memtab_t *M = &ctx->mem;
  if (M->pool == 0) {
    const char *e = getenv("GS_MEMPOOL");
    int dev = 0, ok = !(e && e[0] == '0');
    cudaMemPool_t mp;
    uint64_t keep = UINT64_MAX;
    if (ok && (cudaGetDevice(&dev) != cudaSuccess ||
               cudaDeviceGetDefaultMemPool(&mp, dev) != cudaSuccess ||
               cudaMemPoolSetAttribute(mp, cudaMemPoolAttrReleaseThreshold, &keep) != cudaSuccess))
      ok = 0;
    (void)cudaGetLastError();
    M->pool = ok ? 1 : -1;
  }
  if (M->pool < 0) return cudaMalloc(d, bytes);
  cudaError_t err = cudaMallocAsync(d, bytes, ctx->stream);
  if (err == cudaSuccess && sync) err = cudaStreamSynchronize(ctx->stream);
  if (err != cudaSuccess && *d) {
    cudaFree(*d);
    *d = NULL;
  }
  return err;
}

/* gs_dmalloc (sync = 1) and gs_dmalloc_ordered (sync = 0) */
static gs_status_t dmalloc(gs_context_t *ctx, void **p, size_t bytes, const char *what, int sync)
{
  if (!p) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_dmalloc: p is NULL");
  *p = NULL;
  if (!ctx) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_dmalloc: ctx is NULL");
  if (bytes == 0) return GS_SUCCESS;
  if (!what) what = "a buffer";
  GS_CHECK(gs_context_activate(ctx));
  gs_memtab_t *M = &ctx->mem;

  pthread_mutex_lock(&M->lock);
  int inject = M->fail_after < 0 || (M->fail_after > 0 && --M->fail_after == 0);
  int ok = (M->used + 1) * 2 <= M->cap || rehash(M, M->cap ? M->cap * 2 : 64);
  pthread_mutex_unlock(&M->lock);
  if (inject)
    return GS_ERROR(GS_ERR_DEVICE_MEMORY,
                    "out of device memory allocating %zu bytes for %s (injected failure)",
                    bytes, what);
  if (!ok) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory tracking device memory");

  void *d = NULL;
  cudaError_t err = pool_alloc(ctx, &d, bytes, sync);
  if (err != cudaSuccess) {
    (void)cudaGetLastError(); /* an allocation failure must not poison later launches */
    if (err == cudaErrorMemoryAllocation)
      return GS_ERROR(GS_ERR_DEVICE_MEMORY,
                      "out of device memory allocating %zu bytes for %s (%zu bytes in use by "
                      "gpusolve)", bytes, what, gs_device_bytes_in_use(ctx));
    return gs_error_cuda((int)err, "cudaMalloc", __FILE__, __LINE__);
  }

  pthread_mutex_lock(&M->lock);
  if ((M->used + 1) * 2 > M->cap) rehash(M, M->cap * 2); /* another thread may have filled it */
  size_t s = slot_of(d, M->cap);
  while (M->tab[s].p && M->tab[s].p != TOMB) s = (s + 1) & (M->cap - 1);
  if (M->tab[s].p == NULL) ++M->used;
  M->tab[s].p = d;
  M->tab[s].bytes = bytes;
  M->in_use += bytes;
  if (M->in_use > M->peak) M->peak = M->in_use;
  pthread_mutex_unlock(&M->lock);
  *p = d;
  return GS_SUCCESS;
}

gs_status_t gs_dmalloc(gs_context_t *ctx, void **p, size_t bytes, const char *what)
{
  return dmalloc(ctx, p, bytes, what, 1);
}

gs_status_t gs_dmalloc_ordered(gs_context_t *ctx, void **p, size_t bytes, const char *what)
{
  return dmalloc(ctx, p, bytes, what, 0);
}

void gs_dfree(gs_context_t *ctx, void *p)
{
  if (!p || !ctx) return;
  gs_memtab_t *M = &ctx->mem;
  int found = 0;
  pthread_mutex_lock(&M->lock);
  if (M->cap) {
    size_t s = slot_of(p, M->cap);
    while (M->tab[s].p && M->tab[s].p != p) s = (s + 1) & (M->cap - 1);
    if (M->tab[s].p == p) {
      M->in_use -= M->tab[s].bytes;
      M->tab[s].p = TOMB;
      found = 1;
    }
  }
  pthread_mutex_unlock(&M->lock);
  if (found) { /* a pointer of another context or allocator is not ours to free */
    gs_context_activate(ctx);
    /* A pool block goes back in the stream's order, so the pool lends it to another stream
     * only after the work queued before the free; cudaFree did not wait for that work
     * (test_matrix_device, "freed in stream order"). */
    enum cudaStreamCaptureStatus cap = cudaStreamCaptureStatusActive;
    if (M->pool > 0 && cudaStreamIsCapturing(ctx->stream, &cap) == cudaSuccess &&
        cap == cudaStreamCaptureStatusNone && cudaFreeAsync(p, ctx->stream) == cudaSuccess)
      return;
    (void)cudaGetLastError(); /* a stream being captured would take the free as a graph node */
    cudaFree(p);
  }
}
