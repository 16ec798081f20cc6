/* gpusolve/bench.h: preparing and timing SpMV backends one way for every tool (gpusolve spmv and
 * solve, the benchmark programs), so that "prepare ms" and "median us" mean the same everywhere. */
#ifndef GPUSOLVE_BENCH_H
#define GPUSOLVE_BENCH_H

#include "gpusolve/context.h"
#include "gpusolve/spmv.h"

#ifdef __cplusplus
extern "C" {
#endif
/* The library is built with hidden visibility: what this header declares is its public API. */
#if defined(__GNUC__) && !defined(GS_NO_VISIBILITY_PRAGMAS)
#pragma GCC visibility push(default)
#endif

/**
 * gs_spmv_create, then gs_context_sync: *prepare_seconds is the wall time (gs_wall_seconds) of
 * both, so it covers the host-side layout build, the uploads and any kernels the preparation
 * queued on the context's stream; it does not include work queued on that stream before the
 * call (sync the context first if there is any). prepare_seconds may be NULL; when given it is
 * written on failure too (the time until the failure). On failure *S is NULL and the status
 * and gs_last_error() are those of gs_spmv_create (GS_ERR_FORMAT_FILL for a refused layout) or
 * of the sync. Borrows ctx and A as gs_spmv_create does.
 */
gs_status_t gs_spmv_create_timed(gs_spmv_t **S, gs_context_t *ctx, gs_matrix_t *A,
                                 const char *name, const char *options, double *prepare_seconds);

/** How gs_spmv_time runs; start from gs_spmv_time_opts_default(). */
typedef struct gs_spmv_time_opts {
  int warmup;         /* untimed products first (first-call costs, clocks); default 10 */
  int min_runs;       /* timed products: at least this many ...          default 100 */
  double min_seconds; /* ... and for at least this long (wall clock)     default 0.2 */
  double max_seconds; /* but stop once this long has passed and 10 runs are done: default 2 */
  int max_runs;       /* never more (the host array of times has this size): default 20000 */
} gs_spmv_time_opts_t;

void gs_spmv_time_opts_default(gs_spmv_time_opts_t *opts);

/** Times of one product (seconds). */
typedef struct gs_spmv_timing {
  double median_s; /* median of the runs: the middle time, the mean of the two middle ones for
                      an even count */
  double min_s, max_s;
  int runs;        /* timed products */
} gs_spmv_timing_t;

/**
 * Times d_y = op(A) d_x (alpha = 1, beta = 0: d_y is write-only) with the prepared S: `warmup`
 * untimed products, then timed ones until the rule of opts is met: runs continue while
 *   runs < max_runs and (runs < min_runs or elapsed < min_seconds),
 * except that they stop once runs >= 10 and elapsed > max_seconds (elapsed: wall clock since the
 * first timed run). Each run is one gs_spmv_apply between two CUDA events recorded on the
 * context's stream, followed by a wait for the second event: runs never overlap, and one run's
 * time is the GPU time of one product on an idle stream, the launch of its kernels included (as a
 * solver iteration sees it). The events and the host array of times are made before the first
 * product: nothing is allocated on the timed path (gs_spmv_apply never allocates).
 * opts NULL: the defaults. On return the stream is idle and d_y holds op(A) d_x.
 * GS_ERR_UNSUPPORTED for op = T without a transpose kernel (see gs_spmv_supports); an error of
 * any product or event ends the timing with that status (out is then left unchanged), among
 * them GS_ERR_INVALID_ARG for a product prepared in float precision (gs_spmv_time_float).
 */
gs_status_t gs_spmv_time(gs_spmv_t *S, gs_op_t op, const gs_val_t *d_x, gs_val_t *d_y,
                         const gs_spmv_time_opts_t *opts, gs_spmv_timing_t *out);
/** gs_spmv_time for a product prepared with precision=float: the same runs and rule, each run
 *  one gs_spmv_apply_float (alpha 1, beta 0) on the float vectors d_x and d_y. */
gs_status_t gs_spmv_time_float(gs_spmv_t *S, gs_op_t op, const float *d_x, float *d_y,
                               const gs_spmv_time_opts_t *opts, gs_spmv_timing_t *out);

/** Median of values[0..n), sorting them ascending in place: the middle value, or the mean of the
 *  two middle ones for an even n (0 for n <= 0). The statistic every gpusolve timing reports. */
double gs_median(double *values, int n);

/**
 * Device-to-device copy bandwidth of ctx's device in bytes per second, counting bytes read plus
 * bytes written (the measure "effective GB/s" of an SpMV is compared against): the median of 20
 * cudaMemcpyAsync copies of min(256 MiB, a quarter of the free memory) on the context's stream,
 * each between two CUDA events, after 3 untimed ones. The two buffers come from gs_dmalloc and
 * are freed before returning. Synchronizes the context's stream.
 */
gs_status_t gs_device_copy_bandwidth(gs_context_t *ctx, double *bytes_per_second);

#if defined(__GNUC__) && !defined(GS_NO_VISIBILITY_PRAGMAS)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif
#endif
