/* spmv/matrix.c: the matrix object gs_matrix_t (include/gpusolve/spmv.h): a sorted private copy
 * of the host CSR, its features, and the one device CSR every backend of the matrix shares,
 * uploaded at creation to compute the features there (else on first use). */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/features.h"
#include "gpusolve/timer.h"
#include "spmv/common_kernels.h"
#include "spmv/features_dev.h"
#include "spmv/matrix_device.h"
#include "spmv/spmv_impl.h"

struct gs_matrix {
  gs_context_t *ctx; /* borrowed */
  gs_csr_t *h;       /* owned host copy, rows sorted (NULL while host_pending) */
  gs_idx_t m, n;
  gs_off_t nnz;
  int host_pending;     /* made by gs_matrix_adopt_device: h is downloaded on first use */
  gs_features_t features;
  int features_pending; /* computed on first use (gs_matrix_adopt_device's matrices) */
  int wide;             /* 64-bit device row pointers (gs_matrix_wide) */
  int32_t *d_row_ptr32; /* exactly one of the two, once uploaded */
  int64_t *d_row_ptr64;
  gs_idx_t *d_col;
  gs_val_t *d_val;
  int uploaded;
  unsigned borrowed; /* BORROWED_*: device arrays of the caller (gs_matrix_create_device) */
  double upload_s;   /* wall seconds of the shared device CSR's upload (0: not uploaded here) */
  gs_select_features_t select; /* the selection's features, made with `features` on the GPU */
  int select_ready;
};

enum { BORROWED_ROW_PTR = 1u, BORROWED_ENTRIES = 2u }; /* not freed with the matrix */

/* The selection's features of A (and its gs_features_t into *g unless NULL) from its shared
 * device CSR, uploaded here if it was not. A's host copy is there (its stored symmetry). */
static gs_status_t features_on_device(gs_matrix_t *A, gs_features_t *g)
{
  gs_dcsr_t D;
  GS_CHECK(gs_matrix_device_csr(A, &D));
  GS_CHECK(gs_dcsr_select_features(A->ctx, &D, A->h->symmetry, g, &A->select));
  A->select_ready = 1;
  return GS_SUCCESS;
}

/* gs_matrix_create, and gs_matrix_create_take when take is not NULL (csr == *take): a sorted
 * csr is then kept as the host copy instead of copied, and *take set to NULL. */
static gs_status_t matrix_make(gs_matrix_t **out, gs_context_t *ctx, const gs_csr_t *csr,
                               gs_csr_t **take)
{
  gs_status_t st = GS_SUCCESS;
  gs_matrix_t *A = NULL;
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_matrix_create: out is NULL");
  *out = NULL;
  if (!ctx || !csr) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_matrix_create: NULL argument");
  GS_CHECK(gs_csr_validate(csr));
  A = calloc(1, sizeof *A);
  if (!A) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory creating a matrix");
  A->ctx = ctx;
  A->wide = csr->nnz > INT32_MAX || ctx->test_wide;
  const int sorted = gs_csr_is_sorted(csr);
  if (take && sorted) {
    A->h = *take;
    *take = NULL;
  } else if (sorted) {
    GS_TRY(gs_csr_copy(&A->h, csr));
  } else { /* sort rows (and sum duplicates) through COO: every backend may assume sorted rows */
    gs_coo_t *C = NULL;
    GS_TRY(gs_csr_to_coo(&C, csr));
    st = gs_coo_to_csr(&A->h, C);
    gs_coo_destroy(&C);
    if (st != GS_SUCCESS) goto cleanup;
  }
  A->m = A->h->m;
  A->n = A->h->n;
  A->nnz = A->h->nnz;
  /* The features on the GPU, from the shared device CSR uploaded now (every format and
   * preconditioner reads it): one kernel pass instead of the host's pass over the entries
   * (docs/design.md, "Creating a matrix"). The selection's features come with them. Where the
   * device cannot (its memory, a CUDA error), the host pass; the upload is then left to first
   * use. */
  if (features_on_device(A, &A->features) != GS_SUCCESS) {
    gs_clear_error();
    GS_TRY(gs_csr_features_sorted(A->h, &A->features)); /* sorted above: no second check */
  }
  *out = A;
  A = NULL;
cleanup:
  gs_matrix_destroy(&A); /* a taken csr, if it was, goes with it */
  return st;
}

gs_status_t gs_matrix_create(gs_matrix_t **out, gs_context_t *ctx, const gs_csr_t *csr)
{
  return matrix_make(out, ctx, csr, NULL);
}

gs_status_t gs_matrix_create_take(gs_matrix_t **out, gs_context_t *ctx, gs_csr_t **csr)
{
  if (!csr) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_matrix_create_take: csr is NULL");
  return matrix_make(out, ctx, *csr, csr);
}

gs_status_t gs_matrix_adopt_device(gs_matrix_t **out, gs_context_t *ctx, gs_idx_t m, gs_idx_t n,
                                   gs_off_t nnz, int32_t **d_rp, gs_idx_t **d_col,
                                   gs_val_t **d_val)
{
  gs_matrix_t *A = calloc(1, sizeof *A);
  *out = NULL;
  if (!A || nnz > INT32_MAX) {
    gs_dfree(ctx, *d_rp);
    gs_dfree(ctx, *d_col);
    gs_dfree(ctx, *d_val);
    *d_rp = NULL;
    *d_col = NULL;
    *d_val = NULL;
    free(A);
    return A ? GS_ERROR(GS_ERR_INTERNAL, "gs_matrix_adopt_device: 64-bit offsets")
             : GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory creating a matrix");
  }
  A->ctx = ctx;
  A->m = m;
  A->n = n;
  A->nnz = nnz;
  A->d_row_ptr32 = *d_rp;
  A->d_col = *d_col;
  A->d_val = *d_val;
  *d_rp = NULL;
  *d_col = NULL;
  *d_val = NULL;
  A->uploaded = 1;
  A->host_pending = 1;
  A->features_pending = 1;
  *out = A;
  return GS_SUCCESS;
}

/* ---- a matrix from a CSR in device memory (gs_matrix_create_device) -----------------------
 * Host checks first (none touches the device), then the arrays' memory, then one pass of the
 * check kernels (spmv/matrix_device.cu) on the context's stream and its verdict read back, then
 * the copies. The matrix then is as gs_matrix_adopt_device makes it: its shared device CSR in
 * place, its host copy and features made from the device on first use. */

#define WHO "gs_matrix_create_device"

/* cuMemGetAddressRange of the driver API, taken through the runtime's entry point (the library
 * links no libcuda): the bounds of the allocation holding a pointer, so that an array shorter
 * than its sizes say is refused instead of read past its end. NULL where unavailable: the check
 * is then skipped (it can only refuse what would fault; it never refuses a valid array). */
typedef int (*mem_range_fn)(unsigned long long *base, size_t *size, unsigned long long ptr);
static mem_range_fn mem_range;
static pthread_once_t mem_range_once = PTHREAD_ONCE_INIT;

static void mem_range_init(void)
{
#if CUDART_VERSION >= 12050
  void *f = NULL;
  enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &f, 12000, cudaEnableDefault,
                                       &q) == cudaSuccess &&
      q == cudaDriverEntryPointSuccess && f)
    memcpy(&mem_range, &f, sizeof f);
  (void)cudaGetLastError();
#endif
}

/* `bytes` at p are device (or managed) memory of ctx's device, inside one allocation. */
static gs_status_t check_array(const gs_context_t *ctx, const void *p, size_t bytes,
                               const char *what)
{
  struct cudaPointerAttributes a;
  if (!bytes) return GS_SUCCESS;
  memset(&a, 0, sizeof a);
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return GS_ERROR(GS_ERR_INVALID_ARG, WHO ": %s (%p) is not a device pointer", what, p);
  }
  if (a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged)
    return GS_ERROR(GS_ERR_INVALID_ARG, WHO ": %s (%p) is host memory, not memory of device %d",
                    what, p, ctx->device);
  if (a.type == cudaMemoryTypeDevice && a.device != ctx->device)
    return GS_ERROR(GS_ERR_INVALID_ARG, WHO ": %s (%p) is memory of device %d; the context is "
                    "on device %d", what, p, a.device, ctx->device);
  pthread_once(&mem_range_once, mem_range_init);
  unsigned long long base = 0;
  size_t size = 0;
  const unsigned long long at = (unsigned long long)(uintptr_t)p;
  if (mem_range && mem_range(&base, &size, at) == 0 && at >= base && at - base + bytes > size)
    return GS_ERROR(GS_ERR_INVALID_ARG, WHO ": %s (%p) needs %zu bytes, but its allocation ends "
                    "%llu bytes after it", what, p, bytes, base + size - at);
  return GS_SUCCESS;
}

/* Element i of a device array of `bytes`-wide integers, read back for a message. */
static gs_status_t read_int(gs_context_t *ctx, const void *d, int bytes, int64_t i, long long *v)
{
  int32_t v32 = 0;
  int64_t v64 = 0;
  const char *at = (const char *)d + i * bytes;
  GS_CHECK(gs_copy_to_host(ctx, bytes == 4 ? (void *)&v32 : (void *)&v64, at, (size_t)bytes));
  *v = bytes == 4 ? v32 : v64;
  return GS_SUCCESS;
}

/* The message of the first fault the checks found (a status other than success). */
static gs_status_t report_fault(gs_context_t *ctx, const gs_csr_check_t *r, gs_idx_t m,
                                gs_idx_t n, gs_off_t nnz, const void *d_rp, int rp_bits,
                                const gs_idx_t *d_col, const gs_val_t *d_val)
{
  const int rb = rp_bits / 8;
  long long a = 0, b = 0;
  if (r->rp_fault != GS_CSR_CHECK_NONE) {
    const long long i = (long long)(r->rp_fault >> 2);
    switch ((int)(r->rp_fault & 3)) {
    case GS_CSR_RP_FIRST:
      GS_CHECK(read_int(ctx, d_rp, rb, 0, &a));
      return GS_ERROR(GS_ERR_INVALID_ARG, WHO ": d_row_ptr[0] = %lld, not 0 (a 0-based CSR "
                      "starts at 0)", a);
    case GS_CSR_RP_DECREASE:
      GS_CHECK(read_int(ctx, d_rp, rb, i, &a));
      GS_CHECK(read_int(ctx, d_rp, rb, i + 1, &b));
      return GS_ERROR(GS_ERR_INVALID_ARG, WHO ": row pointers decrease at row %lld: "
                      "d_row_ptr[%lld] = %lld, d_row_ptr[%lld] = %lld", i, i, a, i + 1, b);
    default:
      GS_CHECK(read_int(ctx, d_rp, rb, m, &a));
      return GS_ERROR(GS_ERR_INVALID_ARG, WHO ": d_row_ptr[%d] (the last) = %lld, but nnz = "
                      "%lld", m, a, (long long)nnz);
    }
  }
  const long long k = (long long)(r->entry_fault >> 2), row = (long long)r->entry_row;
  GS_CHECK(read_int(ctx, d_col, (int)sizeof *d_col, k, &a));
  switch ((int)(r->entry_fault & 3)) {
  case GS_CSR_COL_RANGE:
    if (n == 0)
      return GS_ERROR(GS_ERR_INVALID_ARG, WHO ": row %lld holds column %lld, but the matrix has "
                      "no columns (entry %lld)", row, a, k);
    return GS_ERROR(GS_ERR_INVALID_ARG, WHO ": row %lld: column %lld outside 0..%d (entry "
                    "%lld)", row, a, n - 1, k);
  case GS_CSR_COL_ORDER:
    GS_CHECK(read_int(ctx, d_col, (int)sizeof *d_col, k - 1, &b));
    return GS_ERROR(GS_ERR_INVALID_ARG, WHO ": row %lld: column %lld after column %lld (entry "
                    "%lld): each row's columns must be strictly increasing (sorted, no "
                    "duplicates)", row, a, b, k);
  default: {
    gs_val_t v = 0.0;
    GS_CHECK(gs_copy_to_host(ctx, &v, d_val + k, sizeof v));
    return GS_ERROR(GS_ERR_INVALID_ARG, WHO ": row %lld, column %lld: value %g is not finite "
                    "(entry %lld)", row, a, v, k);
  }
  }
}

gs_status_t gs_matrix_create_device(gs_matrix_t **out, gs_context_t *ctx, gs_idx_t m, gs_idx_t n,
                                    gs_off_t nnz, const void *d_row_ptr, int row_ptr_bits,
                                    const gs_idx_t *d_col, const gs_val_t *d_val, unsigned flags)
{
  gs_status_t st = GS_SUCCESS;
  gs_matrix_t *A = NULL;
  gs_csr_check_t *d_res = NULL;
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, WHO ": out is NULL");
  *out = NULL;
  if (!ctx) return GS_ERROR(GS_ERR_INVALID_ARG, WHO ": ctx is NULL");
  if (m < 0 || n < 0 || nnz < 0)
    return GS_ERROR(GS_ERR_INVALID_ARG, WHO ": negative size %d x %d with %lld entries", m, n,
                    (long long)nnz);
  if (row_ptr_bits != 32 && row_ptr_bits != 64)
    return GS_ERROR(GS_ERR_INVALID_ARG, WHO ": row_ptr_bits is %d: 32 (int32_t row pointers) or "
                    "64 (int64_t)", row_ptr_bits);
  if (flags & ~(unsigned)GS_MATRIX_DEVICE_BORROW)
    return GS_ERROR(GS_ERR_INVALID_ARG, WHO ": unknown flags 0x%x", flags);
  if (nnz > (int64_t)m * n)
    return GS_ERROR(GS_ERR_INVALID_ARG, WHO ": %lld entries do not fit a %d x %d matrix without "
                    "duplicates", (long long)nnz, m, n);
  if (row_ptr_bits == 32 && nnz > INT32_MAX)
    return GS_ERROR(GS_ERR_INVALID_ARG, WHO ": %lld entries are beyond 32-bit row pointers "
                    "(row_ptr_bits 64)", (long long)nnz);
  if (!d_row_ptr) return GS_ERROR(GS_ERR_INVALID_ARG, WHO ": d_row_ptr is NULL");
  if (nnz > 0 && (!d_col || !d_val))
    return GS_ERROR(GS_ERR_INVALID_ARG, WHO ": d_col or d_val is NULL with %lld entries",
                    (long long)nnz);

  const int wide = nnz > INT32_MAX || ctx->test_wide; /* A's row pointers: 64 or 32 bits */
  const int bits = wide ? 64 : 32;
  const int borrow = (flags & GS_MATRIX_DEVICE_BORROW) != 0;
  const size_t rows1 = (size_t)m + 1;
  GS_CHECK(gs_context_activate(ctx));
  GS_CHECK(check_array(ctx, d_row_ptr, rows1 * (size_t)(row_ptr_bits / 8), "d_row_ptr"));
  GS_CHECK(check_array(ctx, d_col, (size_t)nnz * sizeof *d_col, "d_col"));
  GS_CHECK(check_array(ctx, d_val, (size_t)nnz * sizeof *d_val, "d_val"));
  A = calloc(1, sizeof *A);
  if (!A) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory creating a matrix");
  A->ctx = ctx;
  A->m = m;
  A->n = n;
  A->nnz = nnz;
  A->wide = wide;

  /* every allocation before any work is queued (an allocation waits for the stream) */
  void *rp = NULL;
  GS_TRY(gs_dmalloc(ctx, (void **)&d_res, sizeof *d_res, "CSR check result"));
  if (borrow && row_ptr_bits == bits) {
    rp = (void *)d_row_ptr;
    A->borrowed |= BORROWED_ROW_PTR;
  } else {
    GS_TRY(gs_dmalloc(ctx, &rp, rows1 * (size_t)(bits / 8), "CSR row pointers"));
  }
  if (wide)
    A->d_row_ptr64 = rp;
  else
    A->d_row_ptr32 = rp;
  if (borrow) {
    A->d_col = (gs_idx_t *)d_col; /* never written: the shared CSR is read-only */
    A->d_val = (gs_val_t *)d_val;
    A->borrowed |= BORROWED_ENTRIES;
  } else {
    GS_TRY(gs_dmalloc(ctx, (void **)&A->d_col, (size_t)nnz * sizeof *d_col, "CSR column indices"));
    GS_TRY(gs_dmalloc(ctx, (void **)&A->d_val, (size_t)nnz * sizeof *d_val, "CSR values"));
  }

  /* the verdict first: the copies read nnz entries, which the row pointers must vouch for */
  GS_TRY(gs_launch_csr_check(ctx->stream, m, n, nnz, d_row_ptr, row_ptr_bits, d_col, d_val,
                             d_res));
  gs_csr_check_t r;
  GS_TRY(gs_copy_to_host(ctx, &r, d_res, sizeof r));
  if (r.rp_fault != GS_CSR_CHECK_NONE || r.entry_fault != GS_CSR_CHECK_NONE)
    GS_TRY(report_fault(ctx, &r, m, n, nnz, d_row_ptr, row_ptr_bits, d_col, d_val));
  if (!(A->borrowed & BORROWED_ROW_PTR))
    GS_TRY(gs_launch_offsets_convert(ctx->stream, m, d_row_ptr, row_ptr_bits, rp, bits));
  if (!borrow && nnz > 0) {
    GS_TRY(GS_CUDA(cudaMemcpyAsync(A->d_col, d_col, (size_t)nnz * sizeof *d_col,
                                   cudaMemcpyDeviceToDevice, ctx->stream)));
    GS_TRY(GS_CUDA(cudaMemcpyAsync(A->d_val, d_val, (size_t)nnz * sizeof *d_val,
                                   cudaMemcpyDeviceToDevice, ctx->stream)));
  }
  /* complete before returning: the caller may free or change its arrays then */
  GS_TRY(GS_CUDA(cudaStreamSynchronize(ctx->stream)));
  A->uploaded = 1;
  A->host_pending = 1;
  A->features_pending = 1;
  *out = A;
  A = NULL;
cleanup:
  gs_dfree(ctx, d_res);
  gs_matrix_destroy(&A);
  return st;
}

#undef WHO

/* The host copy of a matrix made on the device (adopted, or gs_matrix_create_device's),
 * downloaded once (pageable copies; 32-bit row pointers widened to gs_off_t), its rows checked
 * sorted. */
gs_status_t gs_matrix_host_ready(gs_matrix_t *A)
{
  gs_status_t st = GS_SUCCESS;
  gs_csr_t *h = NULL;
  int32_t *rp = NULL;
  if (!A) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_matrix_host_ready: A is NULL");
  if (!A->host_pending) return GS_SUCCESS;
  GS_TRY(gs_csr_create(&h, A->m, A->n, A->nnz));
  GS_TRY(gs_context_activate(A->ctx));
  if (A->wide) {
    GS_TRY(gs_copy_to_host(A->ctx, h->row_ptr, A->d_row_ptr64,
                           ((size_t)A->m + 1) * sizeof *h->row_ptr));
  } else {
    rp = malloc(((size_t)A->m + 1) * sizeof *rp);
    if (!rp) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory copying a matrix to the host");
    GS_TRY(gs_copy_to_host(A->ctx, rp, A->d_row_ptr32, ((size_t)A->m + 1) * sizeof *rp));
    for (gs_idx_t i = 0; i <= A->m; ++i) h->row_ptr[i] = rp[i];
  }
  if (A->nnz > 0) {
    GS_TRY(gs_copy_to_host(A->ctx, h->col, A->d_col, (size_t)A->nnz * sizeof *h->col));
    GS_TRY(gs_copy_to_host(A->ctx, h->val, A->d_val, (size_t)A->nnz * sizeof *h->val));
  }
  h->nnz = A->nnz;
  if (!gs_csr_is_sorted(h))
    GS_FAIL(GS_ERR_INTERNAL, "gs_matrix_host_ready: a device CSR with unsorted rows");
  A->h = h;
  h = NULL;
  A->host_pending = 0;
cleanup:
  free(rp);
  gs_csr_destroy(&h);
  return st;
}

void gs_matrix_dims(const gs_matrix_t *A, gs_idx_t *m, gs_idx_t *n, gs_off_t *nnz)
{
  if (m) *m = A ? A->m : 0;
  if (n) *n = A ? A->n : 0;
  if (nnz) *nnz = A ? A->nnz : 0;
}

void gs_matrix_destroy(gs_matrix_t **A)
{
  if (!A || !*A) return;
  if (!((*A)->borrowed & BORROWED_ROW_PTR)) {
    gs_dfree((*A)->ctx, (*A)->d_row_ptr32);
    gs_dfree((*A)->ctx, (*A)->d_row_ptr64);
  }
  if (!((*A)->borrowed & BORROWED_ENTRIES)) {
    gs_dfree((*A)->ctx, (*A)->d_col);
    gs_dfree((*A)->ctx, (*A)->d_val);
  }
  gs_csr_destroy(&(*A)->h);
  free(*A);
  *A = NULL;
}

/* An adopted matrix's host copy is made here on first use: NULL when that fails (the entries
 * that may see such a matrix, gs_spmv_create and gs_spmv_create_auto, call
 * gs_matrix_host_ready first and report the failure). */
const gs_csr_t *gs_matrix_host(const gs_matrix_t *A)
{
  if (!A) return NULL;
  if (A->host_pending && gs_matrix_host_ready((gs_matrix_t *)A) != GS_SUCCESS) return NULL;
  return A->h;
}
/* A matrix made by gs_matrix_adopt_device computes its features on first use: an AMG level's
 * matrices (two transposes of the symmetry test each) mostly never need them. Should that
 * computation fail (host memory), the features stay zero: "not symmetric", no rows. */
const gs_features_t *gs_matrix_features(const gs_matrix_t *A)
{
  if (!A) return NULL;
  if (A->features_pending) {
    gs_matrix_t *W = (gs_matrix_t *)A; /* a cache filled once: logically const */
    W->features_pending = 0;
    if (gs_matrix_host_ready(W) != GS_SUCCESS || gs_csr_features(W->h, &W->features) != GS_SUCCESS)
      memset(&W->features, 0, sizeof W->features);
  }
  return &A->features;
}
gs_context_t *gs_matrix_context(const gs_matrix_t *A) { return A ? A->ctx : NULL; }
double gs_matrix_upload_seconds(const gs_matrix_t *A) { return A ? A->upload_s : 0.0; }

int gs_matrix_select_features_known(const gs_matrix_t *A) { return A && A->select_ready; }

gs_status_t gs_matrix_select_features(gs_matrix_t *A, gs_select_features_t *f)
{
  if (!A->select_ready) {
    GS_CHECK(gs_matrix_host_ready(A)); /* the stored symmetry is the host copy's */
    GS_CHECK(features_on_device(A, NULL));
  }
  *f = A->select;
  return GS_SUCCESS;
}
int gs_matrix_wide(const gs_matrix_t *A) { return A ? A->wide : 0; }
gs_symmetry_t gs_matrix_stored_symmetry(const gs_matrix_t *A)
{
  return A && !A->host_pending && A->h ? A->h->symmetry : GS_SYM_GENERAL;
}

/* ---- uploads through pinned memory --------------------------------------------------------
 * A cudaMemcpy from pageable memory goes through the driver's own small staging buffer one
 * piece after another (about 6 GB/s on an H100: 318 MB of lap27_100's CSR in 51 ms). Here the
 * host fills chunks of the context's pinned buffer (gs_context_staging_acquire) itself, and the
 * DMA engine copies each one while the next is filled: every filling thread owns two chunk-sized
 * slots (double buffering), waits on a slot's event before it refills it, and queues its copies
 * on the context's stream, which runs them one after another at the link's rate. A few threads
 * fill, since one core's memcpy (10-15 GB/s) is slower than a PCIe 5 link or NVLink-C2C. The
 * 32-bit narrowing of the row pointers happens in the fill, so it costs no pass of its own.
 * How many fill: half the cores, at least 4 (where there are), at most STAGE_THREADS; on the
 * H200 machine's 16 cores 8 threads filled at 41 GB/s, 4 at 28, 12 and 16 at 36-38 (the link:
 * 55; docs/formats.md). */
enum {
  STAGE_CHUNK = 4 << 20, /* bytes of one chunk, and of one slot of the pinned buffer */
  STAGE_MIN = 4 << 20,   /* smaller uploads copy from pageable memory: pinning would cost more */
  STAGE_THREADS = 8      /* most filling threads (the caller's included) */
};

typedef struct stage_piece {
  void *d_dst;
  const void *h_src;
  size_t bytes; /* device bytes (a multiple of 4 when narrow) */
  int narrow;   /* h_src holds gs_off_t, d_dst gets int32_t (an offset over INT32_MAX fails) */
  const char *what;
} stage_piece_t;

typedef struct stage_plan {
  gs_context_t *ctx;
  const stage_piece_t *piece;
  int npiece;
  size_t nchunk; /* over all pieces */
  atomic_int failed;
} stage_plan_t;

typedef struct stage_worker {
  stage_plan_t *plan;
  size_t t, T; /* this worker takes chunks t, t + T, t + 2T, ... */
  unsigned char *slot[2];
  cudaEvent_t ev[2];
  cudaError_t err; /* first CUDA failure, with the call's name */
  const char *expr;
  int bad_piece; /* >= 0: an offset of that piece did not fit 32 bits */
  long long bad_value;
  pthread_t thread;
  int spawned;
} stage_worker_t;

/* Fills the worker's chunks and queues their copies. Errors are kept in the worker (the
 * message buffer is thread-local) and raised by the caller's thread; a failure anywhere stops
 * every worker at its next chunk. */
static void *stage_work(void *arg)
{
  stage_worker_t *w = arg;
  stage_plan_t *P = w->plan;
  const cudaStream_t s = P->ctx->stream;
  int used[2] = {0, 0};
  int b = 0;
  w->err = cudaSetDevice(P->ctx->device); /* the current device is per thread */
  w->expr = "cudaSetDevice";
  for (size_t j = w->t; w->err == cudaSuccess && w->bad_piece < 0 && j < P->nchunk;
       j += w->T, b ^= 1) {
    if (atomic_load(&P->failed)) break;
    int p = 0;
    size_t k = j; /* chunk k of piece p */
    for (;; ++p) {
      const size_t c = (P->piece[p].bytes + STAGE_CHUNK - 1) / STAGE_CHUNK;
      if (k < c) break;
      k -= c;
    }
    const stage_piece_t *pc = &P->piece[p];
    const size_t off = k * (size_t)STAGE_CHUNK;
    const size_t len = pc->bytes - off < STAGE_CHUNK ? pc->bytes - off : STAGE_CHUNK;
    if (used[b] && (w->err = cudaEventSynchronize(w->ev[b])) != cudaSuccess) {
      w->expr = "cudaEventSynchronize (upload slot)";
      break;
    }
    if (pc->narrow) {
      const gs_off_t *src = (const gs_off_t *)pc->h_src + off / sizeof(int32_t);
      int32_t *dst = (int32_t *)w->slot[b];
      const size_t cnt = len / sizeof(int32_t);
      for (size_t i = 0; i < cnt; ++i) {
        if (src[i] > INT32_MAX) {
          w->bad_piece = p;
          w->bad_value = (long long)src[i];
          break;
        }
        dst[i] = (int32_t)src[i];
      }
      if (w->bad_piece >= 0) break;
    } else {
      memcpy(w->slot[b], (const unsigned char *)pc->h_src + off, len);
    }
    if ((w->err = cudaMemcpyAsync((unsigned char *)pc->d_dst + off, w->slot[b], len,
                                  cudaMemcpyHostToDevice, s)) != cudaSuccess) {
      w->expr = "cudaMemcpyAsync (upload chunk)";
      break;
    }
    if ((w->err = cudaEventRecord(w->ev[b], s)) != cudaSuccess) {
      w->expr = "cudaEventRecord (upload slot)";
      break;
    }
    used[b] = 1;
  }
  if (w->err != cudaSuccess || w->bad_piece >= 0) atomic_store(&P->failed, 1);
  return NULL;
}

static size_t online_cpus(void)
{
  const long c = sysconf(_SC_NPROCESSORS_ONLN);
  return c > 0 ? (size_t)c : 1;
}

/* the most filling threads on this machine (the header's rule) */
static size_t stage_threads(void)
{
  const size_t cpus = online_cpus(), least = cpus < 4 ? cpus : 4;
  const size_t t = cpus / 2 > least ? cpus / 2 : least;
  return t > STAGE_THREADS ? STAGE_THREADS : t;
}

/* Uploads the pieces (device arrays already allocated) through the context's pinned buffer,
 * and returns once every copy has completed. *staged = 0 (and nothing copied) when the upload
 * is small or no pinned buffer could be had: the caller copies from pageable memory then. */
static gs_status_t stage_upload(gs_context_t *ctx, const stage_piece_t *piece, int npiece,
                                int *staged)
{
  gs_status_t st = GS_SUCCESS;
  stage_worker_t w[STAGE_THREADS];
  stage_plan_t P;
  unsigned char *buf = NULL;
  size_t T = 1, got = 0, total = 0, nchunk = 0;
  *staged = 0;
  memset(w, 0, sizeof w);
  for (int p = 0; p < npiece; ++p) {
    total += piece[p].bytes;
    nchunk += (piece[p].bytes + STAGE_CHUNK - 1) / STAGE_CHUNK;
  }
  if (total < STAGE_MIN) return GS_SUCCESS;
  /* a thread per 4 chunks at least, so that each one overlaps its fills with copies */
  T = nchunk / 4;
  if (T > stage_threads()) T = stage_threads();
  if (T < 1) T = 1;
  const size_t nslot = nchunk < 2 * T ? nchunk : 2 * T;
  GS_CHECK(gs_context_activate(ctx));
  buf = gs_context_staging_acquire(ctx, nslot * (size_t)STAGE_CHUNK, &got);
  if (!buf) return GS_SUCCESS; /* held by another upload, or pinning failed: pageable copies */
  P.ctx = ctx;
  P.piece = piece;
  P.npiece = npiece;
  P.nchunk = nchunk;
  atomic_init(&P.failed, 0);
  for (size_t t = 0; t < T; ++t) {
    w[t].plan = &P;
    w[t].t = t;
    w[t].T = T;
    w[t].bad_piece = -1;
    /* worker t takes slots 2t and 2t+1; with a single chunk (T = 1) only slot 0 exists, and
       only slot 0 is used */
    w[t].slot[0] = buf + 2 * t * (size_t)STAGE_CHUNK;
    w[t].slot[1] = 2 * t + 1 < nslot ? w[t].slot[0] + STAGE_CHUNK : w[t].slot[0];
    for (int b = 0; b < 2; ++b)
      GS_TRY(GS_CUDA(cudaEventCreateWithFlags(&w[t].ev[b], cudaEventDisableTiming)));
  }
  for (size_t t = 1; t < T; ++t) /* a thread that cannot start runs in the caller below */
    w[t].spawned = pthread_create(&w[t].thread, NULL, stage_work, &w[t]) == 0;
  stage_work(&w[0]);
  for (size_t t = 1; t < T; ++t) {
    if (w[t].spawned)
      pthread_join(w[t].thread, NULL);
    else
      stage_work(&w[t]);
  }
  for (size_t t = 0; t < T && st == GS_SUCCESS; ++t) {
    if (w[t].err != cudaSuccess)
      st = gs_error_cuda((int)w[t].err, w[t].expr, __FILE__, __LINE__);
    else if (w[t].bad_piece >= 0)
      st = GS_ERROR(GS_ERR_UNSUPPORTED, "%s: offset %lld does not fit 32 bits",
                    piece[w[t].bad_piece].what, w[t].bad_value);
  }
  *staged = 1;
cleanup:
  { /* every copy out of the buffer completes before it is lent again, on every path */
    const cudaError_t e = cudaStreamSynchronize(ctx->stream);
    if (st == GS_SUCCESS) st = GS_CUDA(e);
  }
  for (size_t t = 0; t < T; ++t)
    for (int b = 0; b < 2; ++b)
      if (w[t].ev[b]) cudaEventDestroy(w[t].ev[b]);
  gs_context_staging_release(ctx);
  return st;
}

size_t gs_upload_staging_max(void) { return 2 * stage_threads() * (size_t)STAGE_CHUNK; }

gs_status_t gs_upload(gs_context_t *ctx, void **d_dst, const void *h_src, size_t bytes,
                      const char *what)
{
  int staged = 0;
  GS_CHECK(gs_dmalloc(ctx, d_dst, bytes, what));
  const stage_piece_t piece = {*d_dst, h_src, bytes, 0, what};
  gs_status_t st = stage_upload(ctx, &piece, 1, &staged);
  if (st == GS_SUCCESS && !staged) st = gs_copy_to_device(ctx, *d_dst, h_src, bytes);
  if (st != GS_SUCCESS) {
    gs_dfree(ctx, *d_dst);
    *d_dst = NULL;
  }
  return st;
}

/* The pageable path of the narrowing: through a bounded host buffer, so that a large matrix does
 * not need a second copy of its row pointers in host memory. */
static gs_status_t narrow_pageable(gs_context_t *ctx, int32_t *d_dst, const gs_off_t *h_src,
                                   size_t count, const char *what)
{
  enum { CHUNK = 1 << 20 };
  gs_status_t st = GS_SUCCESS;
  int32_t *tmp = malloc((count < CHUNK ? (count ? count : 1) : CHUNK) * sizeof *tmp);
  if (!tmp) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory uploading %s", what);
  for (size_t i = 0; i < count; i += CHUNK) {
    const size_t k = count - i < CHUNK ? count - i : CHUNK;
    for (size_t j = 0; j < k; ++j) {
      if (h_src[i + j] > INT32_MAX)
        GS_FAIL(GS_ERR_UNSUPPORTED, "%s: offset %lld does not fit 32 bits", what,
                (long long)h_src[i + j]);
      tmp[j] = (int32_t)h_src[i + j];
    }
    /* synchronous copy: tmp is reused by the next chunk */
    GS_TRY(gs_copy_to_device(ctx, d_dst + i, tmp, k * sizeof *tmp));
  }
cleanup:
  free(tmp);
  return st;
}

gs_status_t gs_upload_offsets32(gs_context_t *ctx, int32_t **d_dst, const gs_off_t *h_src,
                                size_t count, const char *what)
{
  gs_status_t st = GS_SUCCESS;
  int staged = 0;
  *d_dst = NULL;
  GS_CHECK(gs_dmalloc(ctx, (void **)d_dst, (count ? count : 1) * sizeof(int32_t), what));
  const stage_piece_t piece = {*d_dst, h_src, count * sizeof(int32_t), 1, what};
  GS_TRY(stage_upload(ctx, &piece, 1, &staged));
  if (!staged) GS_TRY(narrow_pageable(ctx, *d_dst, h_src, count, what));
cleanup:
  if (st != GS_SUCCESS) {
    gs_dfree(ctx, *d_dst);
    *d_dst = NULL;
  }
  return st;
}

/* The three arrays go through one staged upload, so that the row pointers' chunks and the
 * columns' and values' share the filling threads and the pinned slots. */
gs_status_t gs_matrix_device_csr(gs_matrix_t *A, gs_dcsr_t *out)
{
  gs_status_t st = GS_SUCCESS;
  if (!A || !out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_matrix_device_csr: NULL argument");
  const gs_csr_t *h = A->h; /* NULL only for an adopted matrix, uploaded already */
  if (!A->uploaded) {
    gs_context_t *ctx = A->ctx;
    const double t0 = gs_wall_seconds();
    const size_t rows1 = (size_t)h->m + 1;
    const size_t col_bytes = (size_t)h->nnz * sizeof(gs_idx_t);
    const size_t val_bytes = (size_t)h->nnz * sizeof(gs_val_t);
    int staged = 0;
    if (A->wide)
      GS_TRY(gs_dmalloc(ctx, (void **)&A->d_row_ptr64, rows1 * sizeof(int64_t),
                        "CSR row pointers"));
    else
      GS_TRY(gs_dmalloc(ctx, (void **)&A->d_row_ptr32, rows1 * sizeof(int32_t),
                        "CSR row pointers"));
    GS_TRY(gs_dmalloc(ctx, (void **)&A->d_col, col_bytes, "CSR column indices"));
    GS_TRY(gs_dmalloc(ctx, (void **)&A->d_val, val_bytes, "CSR values"));
    const stage_piece_t piece[3] = {
        {A->wide ? (void *)A->d_row_ptr64 : (void *)A->d_row_ptr32, h->row_ptr,
         rows1 * (A->wide ? sizeof(int64_t) : sizeof(int32_t)), !A->wide, "CSR row pointers"},
        {A->d_col, h->col, col_bytes, 0, "CSR column indices"},
        {A->d_val, h->val, val_bytes, 0, "CSR values"}};
    GS_TRY(stage_upload(ctx, piece, 3, &staged));
    if (!staged) {
      if (A->wide)
        GS_TRY(gs_copy_to_device(ctx, A->d_row_ptr64, h->row_ptr, rows1 * sizeof(int64_t)));
      else
        GS_TRY(narrow_pageable(ctx, A->d_row_ptr32, h->row_ptr, rows1, "CSR row pointers"));
      GS_TRY(gs_copy_to_device(ctx, A->d_col, h->col, col_bytes));
      GS_TRY(gs_copy_to_device(ctx, A->d_val, h->val, val_bytes));
    }
    GS_TRY(gs_context_sync(ctx)); /* arrived: its time (gs_matrix_upload_seconds) */
    A->upload_s = gs_wall_seconds() - t0;
    A->uploaded = 1;
  }
  out->m = A->m;
  out->n = A->n;
  out->nnz = A->nnz;
  out->wide = A->wide;
  out->d_row_ptr32 = A->d_row_ptr32;
  out->d_row_ptr64 = A->d_row_ptr64;
  out->d_col = A->d_col;
  out->d_val = A->d_val;
cleanup:
  if (st != GS_SUCCESS) {
    gs_dfree(A->ctx, A->d_row_ptr32);
    gs_dfree(A->ctx, A->d_row_ptr64);
    gs_dfree(A->ctx, A->d_col);
    gs_dfree(A->ctx, A->d_val);
    A->d_row_ptr32 = NULL;
    A->d_row_ptr64 = NULL;
    A->d_col = NULL;
    A->d_val = NULL;
  }
  return st;
}

int64_t gs_csr_float_range_first(const gs_csr_t *H)
{
  for (gs_off_t p = 0; H && p < H->nnz; ++p)
    if (isfinite(H->val[p]) && fabs(H->val[p]) > FLT_MAX) return (int64_t)p;
  return -1;
}

gs_status_t gs_matrix_float_range_first(gs_matrix_t *A, int64_t *first)
{
  gs_status_t st = GS_SUCCESS;
  unsigned long long *d_first = NULL, h_first = ~0ull;
  *first = -1;
  if (!A->uploaded || A->nnz == 0) { /* the host copy */
    *first = gs_csr_float_range_first(A->h);
    return GS_SUCCESS;
  }
  gs_context_t *ctx = A->ctx;
  GS_TRY(gs_dmalloc_ordered(ctx, (void **)&d_first, sizeof *d_first, "float range flag"));
  GS_TRY(GS_CUDA(cudaMemsetAsync(d_first, 0xff, sizeof *d_first, ctx->stream)));
  GS_TRY(gs_launch_float_range(ctx->stream, (int64_t)A->nnz, A->d_val, d_first));
  GS_TRY(GS_CUDA(cudaMemcpyAsync(&h_first, d_first, sizeof h_first, cudaMemcpyDeviceToHost,
                                 ctx->stream)));
  GS_TRY(GS_CUDA(cudaStreamSynchronize(ctx->stream)));
  if (h_first != ~0ull) *first = (int64_t)h_first;
cleanup:
  gs_dfree(ctx, d_first);
  return st;
}

gs_status_t gs_dcsr_round_values(gs_context_t *ctx, const gs_dcsr_t *A, float **d_valf)
{
  *d_valf = NULL;
  if (A->nnz == 0) return GS_SUCCESS;
  GS_CHECK(gs_dmalloc(ctx, (void **)d_valf, (size_t)A->nnz * sizeof(float), "CSR float values"));
  const gs_status_t st =
      gs_launch_round_to_float(ctx->stream, (int64_t)A->nnz, A->d_val, *d_valf);
  if (st != GS_SUCCESS) {
    gs_dfree(ctx, *d_valf);
    *d_valf = NULL;
  }
  return st;
}
