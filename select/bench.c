/* select/bench.c: preparing and timing a backend (gs_spmv_create_timed, gs_spmv_time) and the
 * device's copy bandwidth, the one implementation behind `gpusolve spmv`, `gpusolve solve` and
 * the benchmark programs. Times are CUDA events on the context's stream, as DESIGN.md asks of
 * benchmarks (median of many runs after warm-up). */
#include <cuda_runtime_api.h>
#include <stdlib.h>

#include "core/context_impl.h"
#include "core/error.h"
#include "gpusolve/bench.h"
#include "gpusolve/timer.h"

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double gs_median(double *t, int n)
{
  if (n <= 0 || !t) return 0.0;
  qsort(t, (size_t)n, sizeof *t, cmp_double);
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* Seconds between two recorded events of a stream that has been synchronized. */
static gs_status_t event_seconds(cudaEvent_t e0, cudaEvent_t e1, double *s)
{
  float ms = 0.0f;
  GS_CHECK(GS_CUDA(cudaEventElapsedTime(&ms, e0, e1)));
  *s = 1e-3 * (double)ms;
  return GS_SUCCESS;
}

gs_status_t gs_spmv_create_timed(gs_spmv_t **S, gs_context_t *ctx, gs_matrix_t *A,
                                 const char *name, const char *options, double *prepare_seconds)
{
  double t0 = gs_wall_seconds();
  gs_status_t st = gs_spmv_create(S, ctx, A, name, options);
  if (st == GS_SUCCESS && (st = gs_context_sync(ctx)) != GS_SUCCESS) gs_spmv_destroy(S);
  if (prepare_seconds) *prepare_seconds = gs_wall_seconds() - t0;
  return st;
}

void gs_spmv_time_opts_default(gs_spmv_time_opts_t *opts)
{
  if (!opts) return;
  opts->warmup = 10;
  opts->min_runs = 100;
  opts->min_seconds = 0.2;
  opts->max_seconds = 2.0;
  opts->max_runs = 20000;
}

/* One product y = op(A) x of the timed loop (alpha 1, beta 0) in S's vector type. */
typedef gs_status_t (*apply_fn)(gs_spmv_t *S, gs_op_t op, const void *d_x, void *d_y);

static gs_status_t apply_double(gs_spmv_t *S, gs_op_t op, const void *d_x, void *d_y)
{
  return gs_spmv_apply(S, op, 1.0, (const double *)d_x, 0.0, (double *)d_y);
}

static gs_status_t apply_float(gs_spmv_t *S, gs_op_t op, const void *d_x, void *d_y)
{
  return gs_spmv_apply_float(S, op, 1.0f, (const float *)d_x, 0.0f, (float *)d_y);
}

/* The timing rule of gs_spmv_time (gpusolve/bench.h) for either vector type. */
static gs_status_t time_loop(gs_spmv_t *S, gs_op_t op, const void *d_x, void *d_y,
                             const gs_spmv_time_opts_t *opts, gs_spmv_timing_t *out,
                             apply_fn apply)
{
  gs_status_t st = GS_SUCCESS;
  gs_spmv_time_opts_t o;
  double *t = NULL;
  cudaEvent_t e0 = NULL, e1 = NULL;
  if (!S || !out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_spmv_time: NULL argument");
  if (opts) o = *opts;
  else gs_spmv_time_opts_default(&o);
  if (o.warmup < 0 || o.min_runs < 1 || o.max_runs < o.min_runs || !(o.min_seconds >= 0.0) ||
      !(o.max_seconds >= o.min_seconds))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_spmv_time: need warmup >= 0, 1 <= min_runs <= "
                    "max_runs (%d, %d, %d) and 0 <= min_seconds <= max_seconds (%g, %g)",
                    o.warmup, o.min_runs, o.max_runs, o.min_seconds, o.max_seconds);
  if (op != GS_OP_N && op != GS_OP_T)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_spmv_time: op must be GS_OP_N or GS_OP_T");
  if (!gs_spmv_supports(S, op))
    return GS_ERROR(GS_ERR_UNSUPPORTED, "backend '%s' has no transpose apply", gs_spmv_name(S));
  gs_context_t *ctx = gs_spmv_context(S);
  cudaStream_t s = ctx->stream;
  /* Everything the timed loop needs exists before the first product. */
  if (!(t = malloc((size_t)o.max_runs * sizeof *t)))
    return GS_ERROR(GS_ERR_HOST_MEMORY, "gs_spmv_time: out of host memory (%d times)", o.max_runs);
  GS_TRY(gs_context_activate(ctx));
  GS_TRY(GS_CUDA(cudaEventCreate(&e0)));
  GS_TRY(GS_CUDA(cudaEventCreate(&e1)));
  for (int w = 0; w < o.warmup; ++w) GS_TRY(apply(S, op, d_x, d_y));
  GS_TRY(gs_context_sync(ctx));
  double start = gs_wall_seconds(), elapsed = 0.0;
  int n = 0;
  while (n < o.max_runs && (n < o.min_runs || elapsed < o.min_seconds) &&
         !(n >= 10 && elapsed > o.max_seconds)) {
    GS_TRY(GS_CUDA(cudaEventRecord(e0, s)));
    GS_TRY(apply(S, op, d_x, d_y));
    GS_TRY(GS_CUDA(cudaEventRecord(e1, s)));
    GS_TRY(GS_CUDA(cudaEventSynchronize(e1)));
    GS_TRY(event_seconds(e0, e1, &t[n++]));
    elapsed = gs_wall_seconds() - start;
  }
  out->runs = n;
  out->median_s = gs_median(t, n); /* sorts t */
  out->min_s = t[0];
  out->max_s = t[n - 1];
cleanup:
  if (st != GS_SUCCESS) (void)cudaStreamSynchronize(s); /* nothing of ours left in flight */
  if (e0) cudaEventDestroy(e0);
  if (e1) cudaEventDestroy(e1);
  free(t);
  return st;
}

gs_status_t gs_spmv_time(gs_spmv_t *S, gs_op_t op, const double *d_x, double *d_y,
                         const gs_spmv_time_opts_t *opts, gs_spmv_timing_t *out)
{
  return time_loop(S, op, d_x, d_y, opts, out, apply_double);
}

gs_status_t gs_spmv_time_float(gs_spmv_t *S, gs_op_t op, const float *d_x, float *d_y,
                               const gs_spmv_time_opts_t *opts, gs_spmv_timing_t *out)
{
  return time_loop(S, op, d_x, d_y, opts, out, apply_float);
}

gs_status_t gs_device_copy_bandwidth(gs_context_t *ctx, double *bytes_per_second)
{
  enum { RUNS = 20, WARMUP = 3 };
  gs_status_t st = GS_SUCCESS;
  size_t bytes = (size_t)256 << 20, fr = 0, tot = 0;
  void *a = NULL, *b = NULL;
  cudaEvent_t e0 = NULL, e1 = NULL;
  double t[RUNS];
  if (!ctx || !bytes_per_second)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_device_copy_bandwidth: NULL argument");
  *bytes_per_second = 0.0;
  GS_CHECK(gs_context_activate(ctx));
  if (cudaMemGetInfo(&fr, &tot) == cudaSuccess && fr / 4 < bytes) bytes = fr / 4;
  if (bytes == 0) return GS_ERROR(GS_ERR_DEVICE_MEMORY, "no free device memory to time a copy");
  cudaStream_t s = ctx->stream;
  GS_TRY(gs_dmalloc(ctx, &a, bytes, "copy bandwidth source"));
  GS_TRY(gs_dmalloc(ctx, &b, bytes, "copy bandwidth destination"));
  GS_TRY(GS_CUDA(cudaEventCreate(&e0)));
  GS_TRY(GS_CUDA(cudaEventCreate(&e1)));
  GS_TRY(GS_CUDA(cudaMemsetAsync(a, 0, bytes, s)));
  for (int r = -WARMUP; r < RUNS; ++r) {
    double sec = 0.0;
    GS_TRY(GS_CUDA(cudaEventRecord(e0, s)));
    GS_TRY(GS_CUDA(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, s)));
    GS_TRY(GS_CUDA(cudaEventRecord(e1, s)));
    GS_TRY(GS_CUDA(cudaEventSynchronize(e1)));
    GS_TRY(event_seconds(e0, e1, &sec));
    if (r >= 0) t[r] = sec;
  }
  double med = gs_median(t, RUNS);
  if (med > 0.0) *bytes_per_second = 2.0 * (double)bytes / med;
cleanup:
  (void)cudaStreamSynchronize(s);
  if (e0) cudaEventDestroy(e0);
  if (e1) cudaEventDestroy(e1);
  gs_dfree(ctx, a);
  gs_dfree(ctx, b);
  return st;
}
