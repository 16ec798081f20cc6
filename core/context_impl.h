/* core/context_impl.h: the context's fields, for library code (not installed). */
#ifndef GS_CORE_CONTEXT_IMPL_H
#define GS_CORE_CONTEXT_IMPL_H

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusparse.h>

#include <pthread.h>
#include <stddef.h>

#include "gpusolve/context.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The counting allocator's table of live blocks (core/memory.c), one per context. */
typedef struct gs_memblock {
  void *p; /* NULL: empty slot; a tombstone marks a freed one */
  size_t bytes;
} gs_memblock_t;

typedef struct gs_memtab {
  pthread_mutex_t lock;
  int lock_ok;
  gs_memblock_t *tab;
  size_t cap, used; /* slots, slots not empty (live + tombstones) */
  size_t in_use, peak;
  long fail_after;  /* test hook (core/testhooks.h) */
  int pool;         /* 0: not decided yet, 1: the device's stream-ordered pool, -1: cudaMalloc */
} gs_memtab_t;

gs_status_t gs_memtab_init(gs_memtab_t *M);
/** Frees the table and any block still in it. */
void gs_memtab_fini(gs_memtab_t *M);

/** gs_dmalloc without its stream synchronization: the block is ready in the order of ctx's
 *  stream (cudaMallocAsync), for work on that stream and copies through it (gs_copy_to_device,
 *  gs_copy_to_host) only. The device builds take their layouts and scratch this way: a build is
 *  a chain of kernels on the stream, and a synchronization an allocation stalled it for the
 *  round trip. Blocks used on another stream or by the caller come from gs_dmalloc. */
gs_status_t gs_dmalloc_ordered(gs_context_t *ctx, void **p, size_t bytes, const char *what);

/** Makes ctx's device current on the calling thread (cudaSetDevice only when it differs):
 *  every public entry point that touches the GPU calls it first, so that objects of a context
 *  on device 1 work from a thread whose current device is 0. */
gs_status_t gs_context_activate(const gs_context_t *ctx);

/** Lends ctx's pinned host staging buffer (for chunked host->device uploads, spmv/matrix.c),
 *  grown to at least `want` bytes: *got is its size. NULL when another caller holds it, or when
 *  the pinned allocation fails (the caller copies from pageable memory then). The buffer stays
 *  with the context for the next upload, freed by gs_context_destroy; give it back with
 *  gs_context_staging_release once every copy from it has completed. */
void *gs_context_staging_acquire(gs_context_t *ctx, size_t want, size_t *got);
void gs_context_staging_release(gs_context_t *ctx);
/** Pins ctx's staging buffer ahead of the first upload (at least `bytes`), so that a program
 *  can pay the pinning (about 17 ms for 32 MB on an H100 host) while it does something else,
 *  such as reading the matrix (the CLI). Nothing happens when it is held or large enough. */
gs_status_t gs_context_staging_reserve(gs_context_t *ctx, size_t bytes);
/** The error of a machine without a usable device, saying what is missing (no driver, a driver
 *  too old, no GPU seen): GS_ERR_CUDA with the message set. */
gs_status_t gs_context_no_device(void);

#ifdef __cplusplus
}
#endif

struct gs_context {
  gs_memtab_t mem;
  int device;
  cudaStream_t stream;
  cublasHandle_t cublas;
  cusparseHandle_t cusparse;
  char name[256];
  int sm_count;
  size_t l2_bytes;
  double warmup_s; /* first use of cuBLAS and cuSPARSE, paid at creation (gs_context_create) */
  int test_wide; /* test hook (core/testhooks.h): matrices created on it keep 64-bit offsets */
  int test_vecops; /* test hook (core/testhooks.h): solvers set up on it take the vector table's
                      path (1: with its optional slots, 2: without) */
  int test_persist_per_sm; /* test hook: blocks an SM of the persistent kernels (0: the rule) */
  int test_precond_auto; /* test hook: 1 escalations always pay, 2 never, 3 pay and are
                            dropped (0: the model) */
  int test_reorder_dev_rcm; /* test hook: gs_reorder_create's RCM on the device 1 always, 2
                               never (0: from GS_REORDER_DEV_RCM_MIN_NNZ entries) */
  /* pinned staging buffer of the uploads (gs_context_staging_acquire), guarded by mem.lock */
  void *stage;
  size_t stage_bytes;
  int stage_busy;
};

#endif
