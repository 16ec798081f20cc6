/* solvers/gmres_kernels.cu: GMRES's Gram-Schmidt on one GPU as one gemv pair per pass with the
 * normalization folded in (issue 14). Classical Gram-Schmidt with re-orthogonalization (CGS2)
 * takes h = V^T w (cuBLAS gemv T), w -= V h, h2 = V^T w, w -= V h2, and then ||w|| and
 * v = w / ||w||. Here the two subtractions are our kernels:
 *   gmres_sub_normalize_kernel  w -= V h, and in the same pass the newest basis vector, stored
 *                               unnormalized as the last column, is scaled by c = 1 / its norm
 *                               (which the host knows: the Hessenberg column it just read) and
 *                               written back: the separate scale pass is gone;
 *   gmres_sub_norm_kernel       w -= V h2 and ||w|| in one pass (the gs_red_t reduction, one
 *                               launch), and h += h2 (k entries): no axpy, no nrm2 launches.
 *
 * Work division: one thread per row, 64-bit grid-stride loops, 256 threads per block; each
 * thread runs over the k columns in order (a fixed summation order per row), reading column l
 * at rows i, i + 1, ... of consecutive threads: coalesced. The coefficients h, h2 (k <= restart
 * + 1 doubles) are read by every thread through the read-only cache. The reducing kernel runs on
 * gs_red_grid(n) blocks; block 0 also adds h2 to h (no thread reads h there).
 * Assumes: V has k >= 1 columns of n entries with leading dimension ld >= n; w is not a column
 * of V[:, 0..k-1] (it is column k); h and h2 are distinct. */
#include <math.h>

#include "core/error.h"
#include "solvers/gmres_kernels.h"
#include "solvers/reduce_device.cuh"
#include "spmv/device_util.cuh"

static __global__ void __launch_bounds__(GS_RED_THREADS)
gmres_sub_normalize_kernel(gs_idx_t n, int k, double *__restrict__ V, size_t ld,
                           const double *__restrict__ h, double c, double *__restrict__ w)
{
  const double hl = c * h[k - 1]; /* v^T w = c (u^T w) */
  double *__restrict__ u = V + (size_t)(k - 1) * ld;
  GS_GRID_STRIDE(i, n) {
    const double vi = c * u[i]; /* v = c u */
    double t = 0.0;
    for (int l = 0; l < k - 1; ++l) t += V[(size_t)l * ld + i] * h[l];
    t += vi * hl;
    u[i] = vi;
    w[i] -= t; /* w <- w - V h */
  }
}

static __global__ void __launch_bounds__(GS_RED_THREADS)
gmres_sub_norm_kernel(gs_idx_t n, int k, const double *__restrict__ V, size_t ld,
                      const double *__restrict__ h2, double c, double *__restrict__ h,
                      double *__restrict__ w, gs_red_t *red)
{
  if (blockIdx.x == 0) /* h <- h + h2, the first coefficient of v taken as c (u^T w) */
    for (int l = threadIdx.x; l < k; l += GS_RED_THREADS)
      h[l] = (l == k - 1 ? c * h[l] : h[l]) + h2[l];
  double a = 0.0;
  GS_GRID_STRIDE(i, n) {
    double t = 0.0;
    for (int l = 0; l < k; ++l) t += V[(size_t)l * ld + i] * h2[l];
    const double wi = w[i] - t; /* w <- w - V h2 */
    w[i] = wi;
    a += wi * wi;
  }
  const double v[1] = {a};
  if (gs_grid_sum<1>(v, red, h + k)) h[k] = sqrt(h[k]); /* h_{j+1,j} = ||w|| */
}

extern "C" gs_status_t gs_kernel_gmres_sub_normalize(cudaStream_t stream, gs_idx_t n, int k,
                                                     double *V, size_t ld, const double *h,
                                                     double c, double *w)
{
  if (k < 1) return GS_ERROR(GS_ERR_INTERNAL, "gs_kernel_gmres_sub_normalize: k = %d", k);
  const unsigned g = gs_grid_blocks(n, GS_RED_THREADS);
  gmres_sub_normalize_kernel<<<g, GS_RED_THREADS, 0, stream>>>(n, k, V, ld, h, c, w);
  return GS_CHECK_LAUNCH(stream, "gmres_sub_normalize_kernel");
}

extern "C" gs_status_t gs_kernel_gmres_sub_norm(cudaStream_t stream, gs_idx_t n, int k,
                                                const double *V, size_t ld, const double *h2,
                                                double c, double *h, double *w, gs_red_t *red)
{
  if (k < 1) return GS_ERROR(GS_ERR_INTERNAL, "gs_kernel_gmres_sub_norm: k = %d", k);
  gmres_sub_norm_kernel<<<gs_red_grid(n), GS_RED_THREADS, 0, stream>>>(n, k, V, ld, h2, c, h, w,
                                                                     red);
  return GS_CHECK_LAUNCH(stream, "gmres_sub_norm_kernel");
}
