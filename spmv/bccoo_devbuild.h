/* spmv/bccoo_devbuild.h: the `bcoo` / `bccoo` layout (spmv/bccoo.h) built on the GPU from the
 * matrix's shared device CSR (spmv/bccoo_devbuild.cu), byte for byte the layout of the host
 * builder gs_bccoo_build (spmv/bccoo_build.c), which stays the reference (build=host).
 * Internal header (not installed). */
#ifndef GS_SPMV_BCCOO_DEVBUILD_H
#define GS_SPMV_BCCOO_DEVBUILD_H

#include "spmv/bccoo.h"
#include "spmv/spmv_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Builds the layout of the device CSR A (32-bit row pointers) on ctx's stream. On success *L
 *  (zeroed by the caller) holds every field gs_bccoo_build sets except chunk and blob, which are
 *  NULL: the records and blobs are the fresh counted device buffers *d_chunk (L->nchunks records)
 *  and *d_blob (L->blob_bytes), both NULL when there is no chunk. *host_fallback = 1 (GS_SUCCESS,
 *  nothing allocated) when the value table's candidates do not fit the device's bounded
 *  counting tables (a matrix of more than 2^16 distinct candidate values among its most frequent
 *  ones): the caller builds on the host then. Synchronizes ctx's stream two or three times
 *  (small read-backs: K's padded sizes and the table's candidates, then the chunk encodings'
 *  histogram). GS_ERR_INVALID_ARG for a bad K (the host builder's message), device memory and
 *  CUDA errors otherwise. */
gs_status_t gs_bccoo_build_device(gs_context_t *ctx, const gs_dcsr_t *A,
                                  const gs_bccoo_opts_t *opts, gs_bccoo_t *L,
                                  gs_bccoo_chunk_t **d_chunk, uint8_t **d_blob,
                                  int *host_fallback);

#ifdef __cplusplus
}
#endif
#endif
