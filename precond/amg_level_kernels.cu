/* precond/amg_level_kernels.cu: the small element-wise kernels of AMG's level setup
 * (precond/amg.c): the inverted diagonal with its zero check, and the steps of the power
 * iteration that estimates rho(D^-1 A). One thread an entry, grid-stride; coalesced reads. */
#include <math.h>

#include "core/error.h"
#include "precond/amg_impl.h"

namespace {

const int kThreads = 256;

unsigned blocks_for(gs_idx_t n)
{
  const long b = ((long)n + kThreads - 1) / kThreads;
  return (unsigned)(b < 1 ? 1 : b > 65535L * 8 ? 65535L * 8 : b);
}

__global__ void invert_k(gs_idx_t n, const double *d, double *dinv, int32_t *bad)
{
  for (gs_idx_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const double v = d[i];
    if (v == 0.0 || !isfinite(v)) {
      atomicMin(bad, (int32_t)i);
      dinv[i] = 0.0;
    } else {
      dinv[i] = 1.0 / v;
    }
  }
}

__global__ void start_k(gs_idx_t n, double *v)
{
  for (gs_idx_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    v[i] = 0.5 + (double)gs_amg_hash((uint32_t)i) * (1.0 / 4294967296.0);
}

__global__ void scale_k(gs_idx_t n, const double *dinv, const double *z, double *u)
{
  for (gs_idx_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    u[i] = dinv[i] * z[i];
}

__global__ void normalize_k(gs_idx_t n, const double *u, const double *s2, double *v)
{
  const double s = *s2;
  const double f = (s > 0.0 && isfinite(s)) ? 1.0 / sqrt(s) : 0.0;
  for (gs_idx_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    v[i] = u[i] * f;
}

} // namespace

extern "C" gs_status_t gs_amg_invert_kernel(cudaStream_t stream, gs_idx_t n, const double *d,
                                            double *dinv, int32_t *d_bad)
{
  if (n <= 0) return GS_SUCCESS;
  invert_k<<<blocks_for(n), kThreads, 0, stream>>>(n, d, dinv, d_bad);
  return GS_CHECK_LAUNCH(stream, "amg invert_k");
}

extern "C" gs_status_t gs_amg_start_vector_kernel(cudaStream_t stream, gs_idx_t n, double *v)
{
  if (n <= 0) return GS_SUCCESS;
  start_k<<<blocks_for(n), kThreads, 0, stream>>>(n, v);
  return GS_CHECK_LAUNCH(stream, "amg start_k");
}

extern "C" gs_status_t gs_amg_scale_kernel(cudaStream_t stream, gs_idx_t n, const double *dinv,
                                           const double *z, double *u)
{
  if (n <= 0) return GS_SUCCESS;
  scale_k<<<blocks_for(n), kThreads, 0, stream>>>(n, dinv, z, u);
  return GS_CHECK_LAUNCH(stream, "amg scale_k");
}

extern "C" gs_status_t gs_amg_normalize_kernel(cudaStream_t stream, gs_idx_t n, const double *u,
                                               const double *s2, double *v)
{
  if (n <= 0) return GS_SUCCESS;
  normalize_k<<<blocks_for(n), kThreads, 0, stream>>>(n, u, s2, v);
  return GS_CHECK_LAUNCH(stream, "amg normalize_k");
}
