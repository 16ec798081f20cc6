/* gpusolve/context.h: the context (device, stream, cuBLAS and cuSPARSE handles) and device memory. */
#ifndef GPUSOLVE_CONTEXT_H
#define GPUSOLVE_CONTEXT_H

#include "gpusolve/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Opaque context. Owns one CUDA stream and one cuBLAS and one cuSPARSE handle bound to it.
 *  Every object created with a context borrows it: destroy the context last. */
typedef struct gs_context gs_context_t;

/** Number of CUDA devices visible (0 without a GPU or driver; never fails). */
int gs_device_count(void);

/**
 * Creates a context on CUDA device `device` (0 for the first). Without a usable GPU it returns
 * GS_ERR_CUDA with "no CUDA device available: <CUDA's reason>".
 */
gs_status_t gs_context_create(gs_context_t **ctx, int device);
/** Destroys the context (NULL-safe) and sets *ctx = NULL. Synchronizes its stream first. */
void gs_context_destroy(gs_context_t **ctx);
/** The context's cudaStream_t, as a void pointer so that this header needs no CUDA headers. */
void *gs_context_stream(const gs_context_t *ctx);
/** Waits until all work queued on the context's stream has finished. */
gs_status_t gs_context_sync(gs_context_t *ctx);
/** Device name ("NVIDIA H100 80GB HBM3") of the context; never NULL. */
const char *gs_context_device_name(const gs_context_t *ctx);

/* ---- counting device allocator ---------------------------------------------------------- */

/** Allocates `bytes` of device memory (cudaMalloc) and counts it. bytes == 0 gives *p = NULL.
 *  `what` names the buffer in the out-of-memory message. */
gs_status_t gs_dmalloc(void **p, size_t bytes, const char *what);
/** Frees memory from gs_dmalloc (NULL-safe). */
void gs_dfree(void *p);
/** Device bytes currently allocated through gs_dmalloc, and the high-water mark. */
size_t gs_device_bytes_in_use(void);
size_t gs_device_bytes_peak(void);
/** Test hook: make the k-th gs_dmalloc from now (k >= 1) fail with GS_ERR_DEVICE_MEMORY;
 *  k = 0 turns injection off. */
void gs_dmalloc_fail_after(long k);

/** Copies between host and device on the context's stream and waits for it. */
gs_status_t gs_copy_to_device(gs_context_t *ctx, void *d_dst, const void *h_src, size_t bytes);
gs_status_t gs_copy_to_host(gs_context_t *ctx, void *h_dst, const void *d_src, size_t bytes);

#ifdef __cplusplus
}
#endif
#endif
