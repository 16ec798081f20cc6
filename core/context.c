/* core/context.c: device choice, the stream, the cuBLAS and cuSPARSE handles, host<->device
 * copies, and the conversion of CUDA / cuBLAS / cuSPARSE codes into gs_status_t. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context_impl.h"
#include "core/error.h"
#include "gpusolve/timer.h"

gs_status_t gs_error_cuda(int err, const char *expr, const char *file, int line)
{
  if (err == cudaSuccess) return GS_SUCCESS;
  cudaError_t e = (cudaError_t)err;
  gs_status_t st = e == cudaErrorMemoryAllocation ? GS_ERR_DEVICE_MEMORY : GS_ERR_CUDA;
  return gs_error_set(st, file, line, "CUDA error %s (%s) in %s", cudaGetErrorName(e),
                      cudaGetErrorString(e), expr);
}

gs_status_t gs_error_cublas(int err, const char *expr, const char *file, int line)
{
  if (err == CUBLAS_STATUS_SUCCESS) return GS_SUCCESS;
  cublasStatus_t e = (cublasStatus_t)err;
  gs_status_t st = e == CUBLAS_STATUS_ALLOC_FAILED ? GS_ERR_DEVICE_MEMORY : GS_ERR_CUBLAS;
  return gs_error_set(st, file, line, "cuBLAS error %s (%s) in %s", cublasGetStatusName(e),
                      cublasGetStatusString(e), expr);
}

gs_status_t gs_error_cusparse(int err, const char *expr, const char *file, int line)
{
  if (err == CUSPARSE_STATUS_SUCCESS) return GS_SUCCESS;
  cusparseStatus_t e = (cusparseStatus_t)err;
  gs_status_t st = e == CUSPARSE_STATUS_ALLOC_FAILED ? GS_ERR_DEVICE_MEMORY : GS_ERR_CUSPARSE;
  return gs_error_set(st, file, line, "cuSPARSE error %s (%s) in %s", cusparseGetErrorName(e),
                      cusparseGetErrorString(e), expr);
}

gs_status_t gs_error_launch(void *stream, const char *kernel, const char *file, int line)
{
  cudaError_t e = cudaGetLastError();
#ifdef GS_DEBUG_SYNC
  if (e == cudaSuccess) e = cudaStreamSynchronize((cudaStream_t)stream);
#else
  (void)stream;
#endif
  if (e == cudaSuccess) return GS_SUCCESS;
  return gs_error_set(e == cudaErrorMemoryAllocation ? GS_ERR_DEVICE_MEMORY : GS_ERR_CUDA, file,
                      line, "kernel %s failed: %s (%s)", kernel, cudaGetErrorName(e),
                      cudaGetErrorString(e));
}

/* First use of cuBLAS and cuSPARSE, so that prepare times compare formats and not library start-up
 * (issue 12: cusparse-csr's first prepare in a process took 42.6 ms on an H100, every other
 * format 0.1-6 ms: module loading, not its format build). One cuBLAS dot and a 1x1 product through
 * each cuSPARSE SpMV algorithm the backends use (CSR ALG1/ALG2, COO ALG1/ALG2, sliced ELL). A
 * best-effort optimisation: a step that fails is skipped (cuSPARSE errors are not sticky), and
 * the buffers bypass the counting allocator, which reports the user's memory. */
static void warm_libraries(gs_context_t *c)
{
  static const int32_t h_idx[8] = {0, 1, 0, 0, 0, 2, 0, -1}; /* CSR 0,1 | col 0 | SELL 0,2 | 0,-1 */
  static const double h_val[8] = {1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0};
  int32_t *d_idx = NULL;
  double *d_val = NULL, dot = 0.0;
  void *buf = NULL;
  size_t cap = 0;
  cudaStream_t s = c->stream;
  if (cudaMalloc((void **)&d_idx, sizeof h_idx) != cudaSuccess ||
      cudaMalloc((void **)&d_val, sizeof h_val) != cudaSuccess ||
      cudaMemcpyAsync(d_idx, h_idx, sizeof h_idx, cudaMemcpyHostToDevice, s) != cudaSuccess ||
      cudaMemcpyAsync(d_val, h_val, sizeof h_val, cudaMemcpyHostToDevice, s) != cudaSuccess)
    goto done;
  (void)cublasDdot(c->cublas, 1, d_val + 1, 1, d_val + 3, 1, &dot);
  cusparseSpMatDescr_t mats[3] = {NULL, NULL, NULL};
  cusparseDnVecDescr_t vx = NULL, vy = NULL;
  const cusparseSpMVAlg_t algs[3][2] = {{CUSPARSE_SPMV_CSR_ALG1, CUSPARSE_SPMV_CSR_ALG2},
                                        {CUSPARSE_SPMV_COO_ALG1, CUSPARSE_SPMV_COO_ALG2},
                                        {CUSPARSE_SPMV_SELL_ALG1, CUSPARSE_SPMV_SELL_ALG1}};
  (void)cusparseCreateCsr(&mats[0], 1, 1, 1, d_idx, d_idx + 2, d_val, CUSPARSE_INDEX_32I,
                          CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F);
  (void)cusparseCreateCoo(&mats[1], 1, 1, 1, d_idx + 2, d_idx + 2, d_val, CUSPARSE_INDEX_32I,
                          CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F);
  /* one slice of 2 rows (the second padding), width 1: slice offsets {0, 2}, columns {0, -1} */
  (void)cusparseCreateSlicedEll(&mats[2], 1, 1, 1, 2, 2, d_idx + 4, d_idx + 6, d_val + 4,
                                CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                CUDA_R_64F);
  (void)cusparseCreateDnVec(&vx, 1, d_val + 1, CUDA_R_64F);
  (void)cusparseCreateDnVec(&vy, 1, d_val + 2, CUDA_R_64F);
  const double one = 1.0, zero = 0.0;
  (void)cusparseSetPointerMode(c->cusparse, CUSPARSE_POINTER_MODE_HOST);
  for (int m = 0; m < 3 && vx && vy; ++m)
    for (int a = 0; a < 2 && mats[m]; ++a) {
      size_t need = 0;
      if (cusparseSpMV_bufferSize(c->cusparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mats[m], vx,
                                  &zero, vy, CUDA_R_64F, algs[m][a], &need) !=
          CUSPARSE_STATUS_SUCCESS)
        continue;
      if (need > cap) {
        cudaFree(buf);
        buf = NULL;
        cap = 0;
        if (cudaMalloc(&buf, need) != cudaSuccess) {
          (void)cudaGetLastError();
          continue;
        }
        cap = need;
      }
      (void)cusparseSpMV(c->cusparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mats[m], vx, &zero,
                         vy, CUDA_R_64F, algs[m][a], buf);
    }
  for (int m = 0; m < 3; ++m)
    if (mats[m]) cusparseDestroySpMat(mats[m]);
  if (vx) cusparseDestroyDnVec(vx);
  if (vy) cusparseDestroyDnVec(vy);
done:
  (void)cudaStreamSynchronize(s);
  (void)cudaGetLastError(); /* a failed step leaves no error behind for the caller */
  cudaFree(buf);
  cudaFree(d_idx);
  cudaFree(d_val);
}

double gs_context_warmup_seconds(const gs_context_t *ctx) { return ctx ? ctx->warmup_s : 0.0; }

/* Why there is no device, saying what is missing (issue 35: cudaGetDeviceCount answers "CUDA
 * driver version is insufficient" when there is no driver at all, which reads as "update it").
 * cudaDriverGetVersion gives 0 when no driver (libcuda.so.1) could be loaded. */
gs_status_t gs_context_no_device(void)
{
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  int drv = 0, rt = 0;
  if (cudaDriverGetVersion(&drv) != cudaSuccess) drv = 0;
  if (cudaRuntimeGetVersion(&rt) != cudaSuccess) rt = 0;
  (void)cudaGetLastError();
  if (drv == 0)
    return GS_ERROR(GS_ERR_CUDA, "no CUDA device available: no NVIDIA driver found (libcuda.so.1 "
                    "not loadable): gpusolve needs an NVIDIA GPU and its driver");
  if (e == cudaErrorInsufficientDriver)
    return GS_ERROR(GS_ERR_CUDA, "no CUDA device available: the NVIDIA driver is too old: it "
                    "supports CUDA %d.%d, this gpusolve needs CUDA %d.%d (update the driver)",
                    drv / 1000, drv % 1000 / 10, rt / 1000, rt % 1000 / 10);
  if (e == cudaSuccess || e == cudaErrorNoDevice) {
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    return GS_ERROR(GS_ERR_CUDA, "no CUDA device available: the NVIDIA driver (CUDA %d.%d) sees "
                    "no GPU%s%s%s", drv / 1000, drv % 1000 / 10,
                    vis ? " (CUDA_VISIBLE_DEVICES is '" : "", vis ? vis : "", vis ? "')" : "");
  }
  return GS_ERROR(GS_ERR_CUDA, "no CUDA device available: %s (%s)", cudaGetErrorString(e),
                  cudaGetErrorName(e));
}

int gs_device_count(void)
{
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

/* A context and what its struct (core/context_impl.h) does not hold: whether its stream is the
 * caller's. Every context is allocated here as one of these, the struct first, so that a
 * gs_context_t pointer is its box's. */
typedef struct context_box {
  struct gs_context c;
  int borrowed_stream; /* gs_context_create_on_stream: the caller's stream, never destroyed */
} context_box_t;

static context_box_t *box_of(gs_context_t *c) { return (context_box_t *)c; }

/* A caller's stream is usable: valid, of `device` (where CUDA can say), not being captured. */
static gs_status_t check_user_stream(cudaStream_t s, int device)
{
  cudaError_t e;
  /* the capture first: any other stream query during a capture invalidates it */
  enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
  if ((e = cudaStreamIsCapturing(s, &cs)) != cudaSuccess) {
    (void)cudaGetLastError();
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_context_create_on_stream: not a usable CUDA stream: "
                    "%s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
  }
  if (cs != cudaStreamCaptureStatusNone)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_context_create_on_stream: the stream is being "
                    "captured into a CUDA graph");
#if CUDART_VERSION >= 12080
  int d = -1;
  if ((e = cudaStreamGetDevice(s, &d)) != cudaSuccess) {
    (void)cudaGetLastError();
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_context_create_on_stream: not a usable CUDA stream: "
                    "%s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
  }
  if (d != device)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_context_create_on_stream: the stream belongs to "
                    "device %d, not to device %d", d, device);
#else
  (void)device;
#endif
  return GS_SUCCESS;
}

/* user: the caller's stream (borrow = 1), or none (the context makes its own). */
static gs_status_t context_new(gs_context_t **out, int device, cudaStream_t user, int borrow)
{
  gs_status_t st = GS_SUCCESS;
  context_box_t *box = NULL;
  gs_context_t *c = NULL;
  *out = NULL;
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) return gs_context_no_device();
  if (device < 0 || device >= n)
    return GS_ERROR(GS_ERR_INVALID_ARG, "device %d does not exist (%d device%s visible)", device,
                    n, n == 1 ? "" : "s");
  box = calloc(1, sizeof *box);
  if (!box) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory creating a context");
  c = &box->c;
  c->device = device;
  GS_TRY(gs_memtab_init(&c->mem));
  GS_TRY(GS_CUDA(cudaSetDevice(device)));
  if (borrow) GS_TRY(check_user_stream(user, device));
  struct cudaDeviceProp prop;
  GS_TRY(GS_CUDA(cudaGetDeviceProperties(&prop, device)));
  snprintf(c->name, sizeof c->name, "%s", prop.name);
  c->sm_count = prop.multiProcessorCount;
  c->l2_bytes = (size_t)prop.l2CacheSize;
  /* a stream of the context's own, also for a borrowing context: the warm-up runs (and is
     synchronized) there, without waiting for the caller's queued work */
  GS_TRY(GS_CUDA(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking)));
  GS_TRY(GS_CUBLAS(cublasCreate(&c->cublas)));
  GS_TRY(GS_CUBLAS(cublasSetStream(c->cublas, c->stream)));
  GS_TRY(GS_CUSPARSE(cusparseCreate(&c->cusparse)));
  GS_TRY(GS_CUSPARSE(cusparseSetStream(c->cusparse, c->stream)));
  const double t0 = gs_wall_seconds();
  warm_libraries(c);
  c->warmup_s = gs_wall_seconds() - t0;
  if (borrow) { /* from now on, the caller's stream */
    GS_TRY(GS_CUBLAS(cublasSetStream(c->cublas, user)));
    GS_TRY(GS_CUSPARSE(cusparseSetStream(c->cusparse, user)));
    cudaStream_t own = c->stream;
    c->stream = user;
    box->borrowed_stream = 1;
    (void)cudaStreamDestroy(own); /* idle: warm_libraries synchronized it */
  }
  *out = c;
  c = NULL;
cleanup:
  gs_context_destroy(&c);
  return st;
}

gs_status_t gs_context_create(gs_context_t **out, int device)
{
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_context_create: out is NULL");
  return context_new(out, device, NULL, 0);
}

gs_status_t gs_context_create_on_stream(gs_context_t **out, int device, void *stream)
{
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_context_create_on_stream: out is NULL");
  *out = NULL;
  const cudaStream_t s = (cudaStream_t)stream;
  if (s == NULL || s == cudaStreamLegacy)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_context_create_on_stream: the legacy default stream "
                    "(NULL) cannot be captured into a CUDA graph: pass a created stream, or use "
                    "gs_context_create and order its stream with events");
  if (s == cudaStreamPerThread)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_context_create_on_stream: the per-thread default "
                    "stream is another stream in each thread, and the library queues uploads "
                    "from helper threads: pass a created stream, or use gs_context_create and "
                    "order its stream with events");
  return context_new(out, device, s, 1);
}

void gs_context_destroy(gs_context_t **ctx)
{
  if (!ctx || !*ctx) return;
  gs_context_t *c = *ctx;
  const int borrowed = box_of(c)->borrowed_stream;
  gs_context_activate(c);
  if (c->stream) cudaStreamSynchronize(c->stream);
  if (c->cusparse) cusparseDestroy(c->cusparse);
  if (c->cublas) cublasDestroy(c->cublas);
  if (c->stream && !borrowed) cudaStreamDestroy(c->stream);
  if (c->stage) cudaFreeHost(c->stage);
  gs_memtab_fini(&c->mem);
  free(box_of(c));
  *ctx = NULL;
}

gs_status_t gs_context_activate(const gs_context_t *ctx)
{
  int cur = -1;
  if (cudaGetDevice(&cur) == cudaSuccess && cur == ctx->device) return GS_SUCCESS;
  (void)cudaGetLastError();
  return GS_CUDA(cudaSetDevice(ctx->device));
}

/* One buffer a context, kept between uploads: pinning costs about as much per byte as the copy
 * it speeds up, so a buffer allocated for each upload would give back much of the gain. Grown
 * (never shrunk) to the largest request; the holder flag lends it to one upload at a time, and
 * the pinning itself runs outside the allocator's lock. */
void *gs_context_staging_acquire(gs_context_t *ctx, size_t want, size_t *got)
{
  *got = 0;
  if (!ctx || !want || !ctx->mem.lock_ok) return NULL;
  pthread_mutex_lock(&ctx->mem.lock);
  const int busy = ctx->stage_busy;
  ctx->stage_busy = 1;
  void *buf = ctx->stage;
  size_t have = ctx->stage_bytes;
  pthread_mutex_unlock(&ctx->mem.lock);
  if (busy) return NULL;
  if (have < want) {
    if (buf) cudaFreeHost(buf);
    buf = NULL;
    have = 0;
    if (gs_context_activate(ctx) == GS_SUCCESS &&
        cudaHostAlloc(&buf, want, cudaHostAllocPortable) == cudaSuccess) {
      have = want;
    } else {
      (void)cudaGetLastError();
      buf = NULL;
    }
    pthread_mutex_lock(&ctx->mem.lock);
    ctx->stage = buf;
    ctx->stage_bytes = have;
    if (!buf) ctx->stage_busy = 0;
    pthread_mutex_unlock(&ctx->mem.lock);
  }
  *got = have;
  return buf;
}

gs_status_t gs_context_staging_reserve(gs_context_t *ctx, size_t bytes)
{
  size_t got = 0;
  if (!ctx) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_context_staging_reserve: ctx is NULL");
  if (gs_context_staging_acquire(ctx, bytes, &got)) gs_context_staging_release(ctx);
  return GS_SUCCESS; /* no buffer (pinning failed or in use): the uploads copy from pageable memory */
}

void gs_context_staging_release(gs_context_t *ctx)
{
  if (!ctx || !ctx->mem.lock_ok) return;
  pthread_mutex_lock(&ctx->mem.lock);
  ctx->stage_busy = 0;
  pthread_mutex_unlock(&ctx->mem.lock);
}

int gs_context_device(const gs_context_t *ctx) { return ctx ? ctx->device : -1; }

void *gs_context_stream(const gs_context_t *ctx) { return ctx ? (void *)ctx->stream : NULL; }

const char *gs_context_device_name(const gs_context_t *ctx) { return ctx ? ctx->name : ""; }

gs_status_t gs_context_sync(gs_context_t *ctx)
{
  if (!ctx) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_context_sync: ctx is NULL");
  GS_CHECK(gs_context_activate(ctx));
  return GS_CUDA(cudaStreamSynchronize(ctx->stream));
}

gs_status_t gs_copy_to_device(gs_context_t *ctx, void *d_dst, const void *h_src, size_t bytes)
{
  if (!ctx || (bytes && (!d_dst || !h_src)))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_copy_to_device: NULL argument");
  if (!bytes) return GS_SUCCESS;
  GS_CHECK(gs_context_activate(ctx));
  GS_CHECK(GS_CUDA(cudaMemcpyAsync(d_dst, h_src, bytes, cudaMemcpyHostToDevice, ctx->stream)));
  return GS_CUDA(cudaStreamSynchronize(ctx->stream));
}

gs_status_t gs_copy_to_host(gs_context_t *ctx, void *h_dst, const void *d_src, size_t bytes)
{
  if (!ctx || (bytes && (!h_dst || !d_src)))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_copy_to_host: NULL argument");
  if (!bytes) return GS_SUCCESS;
  GS_CHECK(gs_context_activate(ctx));
  GS_CHECK(GS_CUDA(cudaMemcpyAsync(h_dst, d_src, bytes, cudaMemcpyDeviceToHost, ctx->stream)));
  return GS_CUDA(cudaStreamSynchronize(ctx->stream));
}
