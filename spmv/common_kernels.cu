/* spmv/common_kernels.cu: device helpers shared by several backends.
 *
 * scale_kernel: one thread per entry, a 64-bit grid-stride loop on gs_grid_blocks, coalesced;
 * y is only read when beta != 0. A template on the vector type: double, or float (the float
 * vectors of precision=float, scaled in float).
 * round_to_float_kernel: the same division; reads doubles, writes floats, each once.
 * float_range_kernel: the same division; reads the values once, one atomic per value beyond
 * the float range (none on a matrix that fits). */
#include <float.h>

#include "core/error.h"
#include "spmv/common_kernels.h"
#include "spmv/device_util.cuh"

#define SCALE_THREADS 256

template <typename T> /* double, or float for precision=float */
static __global__ void __launch_bounds__(SCALE_THREADS)
scale_kernel(gs_idx_t n, T beta, T *__restrict__ y)
{
  gs_pdl_trigger(); /* a transpose product launched after it may start its loads (hola) */
  GS_GRID_STRIDE(i, n) y[i] = beta == T(0) ? T(0) : beta * y[i];
}

static __global__ void __launch_bounds__(SCALE_THREADS)
round_to_float_kernel(int64_t n, const double *__restrict__ in, float *__restrict__ out)
{
  GS_GRID_STRIDE(k, n) out[k] = __double2float_rn(in[k]);
}

extern "C" gs_status_t gs_launch_round_to_float(cudaStream_t stream, int64_t n,
                                                const double *d_in, float *d_out)
{
  if (n <= 0) return GS_SUCCESS;
  round_to_float_kernel<<<gs_grid_blocks(n, SCALE_THREADS), SCALE_THREADS, 0, stream>>>(
      n, d_in, d_out);
  return GS_CHECK_LAUNCH(stream, "round_to_float_kernel");
}

/* *first = min(*first, k) over the k whose value is finite and beyond FLT_MAX (NaN and the
 * infinities compare false against DBL_MAX, as isfinite would say) */
static __global__ void __launch_bounds__(SCALE_THREADS)
float_range_kernel(int64_t n, const double *__restrict__ in, unsigned long long *first)
{
  GS_GRID_STRIDE(k, n)
  {
    const double a = fabs(in[k]);
    if (a > (double)FLT_MAX && a <= DBL_MAX) atomicMin(first, (unsigned long long)k);
  }
}

extern "C" gs_status_t gs_launch_float_range(cudaStream_t stream, int64_t n, const double *d_in,
                                             unsigned long long *d_first)
{
  if (n <= 0) return GS_SUCCESS;
  float_range_kernel<<<gs_grid_blocks(n, SCALE_THREADS), SCALE_THREADS, 0, stream>>>(n, d_in,
                                                                                     d_first);
  return GS_CHECK_LAUNCH(stream, "float_range_kernel");
}

extern "C" gs_status_t gs_timed_launch(cudaStream_t stream, gs_status_t (*launch)(void *arg),
                                       void *arg, int warm, double *ms)
{
  *ms = -1.0;
  if (warm) GS_CHECK(launch(arg));
  cudaEvent_t e0 = NULL, e1 = NULL;
  const int timed = cudaEventCreate(&e0) == cudaSuccess && cudaEventCreate(&e1) == cudaSuccess &&
                    cudaEventRecord(e0, stream) == cudaSuccess;
  const gs_status_t st = launch(arg);
  float f = -1.0f;
  if (st == GS_SUCCESS && timed && cudaEventRecord(e1, stream) == cudaSuccess &&
      cudaEventSynchronize(e1) == cudaSuccess && cudaEventElapsedTime(&f, e0, e1) == cudaSuccess)
    *ms = f;
  if (e0) cudaEventDestroy(e0);
  if (e1) cudaEventDestroy(e1);
  if (st == GS_SUCCESS) (void)cudaGetLastError(); /* an event failure only loses the timing */
  return st;
}

template <typename T>
static gs_status_t launch_scale(cudaStream_t stream, gs_idx_t n, T beta, T *d_y)
{
  if (n <= 0 || beta == T(1)) return GS_SUCCESS;
  scale_kernel<T><<<gs_grid_blocks(n, SCALE_THREADS), SCALE_THREADS, 0, stream>>>(n, beta, d_y);
  return GS_CHECK_LAUNCH(stream, "scale_kernel");
}

extern "C" gs_status_t gs_launch_scale(cudaStream_t stream, gs_idx_t n, double beta, double *d_y)
{
  return launch_scale(stream, n, beta, d_y);
}

extern "C" gs_status_t gs_launch_scale_f32(cudaStream_t stream, gs_idx_t n, float beta,
                                           float *d_y)
{
  return launch_scale(stream, n, beta, d_y);
}

extern "C" size_t gs_csr_bytes_per_apply_typed(gs_idx_t m, gs_idx_t n, gs_off_t nnz,
                                               size_t offset_bytes, size_t value_bytes,
                                               size_t vector_bytes)
{
  return ((size_t)m + 1) * offset_bytes + (size_t)nnz * (sizeof(gs_idx_t) + value_bytes) +
         (size_t)n * vector_bytes + (size_t)m * vector_bytes;
}

extern "C" size_t gs_csr_bytes_per_apply(gs_idx_t m, gs_idx_t n, gs_off_t nnz,
                                         size_t offset_bytes)
{
  return gs_csr_bytes_per_apply_typed(m, n, nnz, offset_bytes, sizeof(double), sizeof(double));
}
