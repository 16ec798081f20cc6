/* gpusolve/context.h: the context (device, stream, cuBLAS and cuSPARSE handles) and device memory. */
#ifndef GPUSOLVE_CONTEXT_H
#define GPUSOLVE_CONTEXT_H

#include <stddef.h>

#include "gpusolve/status.h"

#ifdef __cplusplus
extern "C" {
#endif
/* The library is built with hidden visibility: what this header declares is its public API. */
#if defined(__GNUC__) && !defined(GS_NO_VISIBILITY_PRAGMAS)
#pragma GCC visibility push(default)
#endif

/** Opaque context. Owns one CUDA stream (or borrows the caller's: gs_context_create_on_stream)
 *  and one cuBLAS and one cuSPARSE handle bound to it.
 *  Every object created with a context borrows it: destroy the context last. */
typedef struct gs_context gs_context_t;

/** Number of CUDA devices visible (0 without a GPU or driver; never fails). */
int gs_device_count(void);

/**
 * Creates a context on CUDA device `device` (0 for the first). Without a usable GPU it returns
 * GS_ERR_CUDA with "no CUDA device available: <CUDA's reason>".
 */
gs_status_t gs_context_create(gs_context_t **ctx, int device);
/**
 * A context on device `device` whose work runs on the caller's CUDA stream `stream` (a
 * cudaStream_t, as a void pointer): its cuBLAS and cuSPARSE handles are bound to it, and every
 * product, solve, copy and allocation made through the context is queued there, in order with
 * the caller's own work on the stream, with no event or synchronization between them. The
 * context borrows the stream: gs_context_destroy synchronizes it and leaves it alive, so the
 * stream must outlive the context and everything made with it, and belong to `device`.
 * While a library call runs, nothing else should be queued on the stream from another thread:
 * a solve may capture the stream into a CUDA Graph, which would take that work in (and, for a
 * blocking stream, one created without cudaStreamNonBlocking, CUDA refuses work on the legacy
 * default stream during the capture).
 *
 * Refused with GS_ERR_INVALID_ARG, before any device call: NULL (and cudaStreamLegacy) and
 * cudaStreamPerThread. The legacy default stream cannot be captured into a graph, and the
 * per-thread one is another stream in each thread, while the library queues uploads from helper
 * threads; for either, use gs_context_create and order its stream with events. Also refused: a
 * stream of another device, or one being captured. The first use of cuBLAS and cuSPARSE
 * (gs_context_warmup_seconds) runs on a stream of its own, so creation does not wait for the
 * work already queued on `stream`.
 */
gs_status_t gs_context_create_on_stream(gs_context_t **ctx, int device, void *stream);
/** Destroys the context (NULL-safe) and sets *ctx = NULL. Synchronizes its stream first; a
 *  stream given to gs_context_create_on_stream is not destroyed. */
void gs_context_destroy(gs_context_t **ctx);
/** The context's cudaStream_t, as a void pointer so that this header needs no CUDA headers. */
void *gs_context_stream(const gs_context_t *ctx);
/** Waits until all work queued on the context's stream has finished. */
gs_status_t gs_context_sync(gs_context_t *ctx);
/** Seconds gs_context_create spent on the first use of cuBLAS and cuSPARSE (a dot product and
 *  a 1x1 SpMV through each cuSPARSE algorithm the backends use): library module loading and
 *  initialisation that would otherwise be charged to whichever format is prepared first. */
double gs_context_warmup_seconds(const gs_context_t *ctx);
/**
 * Loads the library's kernels on ctx's device now. CUDA loads each module and kernel on its
 * first use (lazy loading, the default since CUDA 12.2): tenths of a millisecond to several
 * milliseconds each, which would otherwise fall on the first device build of each format, the
 * first AMG setup and the first product of each kernel, inside timed work. Each item of `what`
 * (comma-separated) is run on a small generated matrix: a format name (built on the device and
 * applied, op N and T; "auto" is skipped), "features" (the selection's kernel), a
 * preconditioner name ("amg", "block-jacobi", ...: a setup and one apply), "formats" (every
 * registered format not named before it). NULL: what a default
 * run uses, in that order: the features, the light formats and the rule's usual picks, AMG,
 * then every other format (0.1-0.2 s on an H100). `stop`: NULL, or a flag checked between
 * items: once nonzero, the call returns GS_SUCCESS after the current item. gpusolve runs it on
 * a thread of its own while the matrix file is read. Nothing else may use ctx meanwhile.
 * Leaves no device memory allocated; a format that refuses the small matrix is skipped.
 * GS_ERR_INVALID_ARG for a NULL ctx or an unknown item (before any work).
 */
gs_status_t gs_context_preload(gs_context_t *ctx, const char *what, const volatile int *stop);
/** Device name ("NVIDIA H100 80GB HBM3") of the context; never NULL. */
const char *gs_context_device_name(const gs_context_t *ctx);

/* ---- counting device allocator ---------------------------------------------------------- */

/** Allocates `bytes` of device memory (cudaMalloc) on ctx's device and counts it in ctx.
 *  bytes == 0 gives *p = NULL. `what` names the buffer in the out-of-memory message. */
gs_status_t gs_dmalloc(gs_context_t *ctx, void **p, size_t bytes, const char *what);
/** Frees memory from gs_dmalloc on the same context (NULL-safe; a pointer ctx did not
 *  allocate is left alone). The block returns in the order of ctx's stream (after the work
 *  queued there), so work on another stream that uses it must have finished, or been joined to
 *  ctx's stream by an event, before the call. */
void gs_dfree(gs_context_t *ctx, void *p);
/** Device bytes currently allocated through gs_dmalloc on ctx, and the high-water mark. */
size_t gs_device_bytes_in_use(const gs_context_t *ctx);
size_t gs_device_bytes_peak(const gs_context_t *ctx);
/** The device ordinal of ctx (-1 for NULL). */
int gs_context_device(const gs_context_t *ctx);

/** Copies between host and device on the context's stream and waits for it. */
gs_status_t gs_copy_to_device(gs_context_t *ctx, void *d_dst, const void *h_src, size_t bytes);
gs_status_t gs_copy_to_host(gs_context_t *ctx, void *h_dst, const void *d_src, size_t bytes);

#if defined(__GNUC__) && !defined(GS_NO_VISIBILITY_PRAGMAS)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif
#endif
