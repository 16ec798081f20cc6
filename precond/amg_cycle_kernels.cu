/* precond/amg_cycle_kernels.cu: the elementwise smoother steps of the AMG cycle (declared in
 * precond/amg_impl.h): damped (l1-)Jacobi, x = w dinv .* b or x += w dinv .* r, and one step of
 * the Chebyshev smoother on D^-1 A (Saad, Iterative Methods for Sparse Linear Systems, 2nd ed.,
 * Algorithm 12.1): d = c1 d + c2 dinv .* r, x += d.
 * Work division: one thread per entry, a 64-bit grid-stride loop on gs_grid_blocks, 256 threads a
 * block. Memory: unit-stride coalesced streams (Jacobi: dinv, r read, x read and written;
 * Chebyshev: dinv, r read, d and x read and written). Each entry is read and written by one
 * thread only (so r may be x or d: no __restrict__ there); with x_zero (Jacobi) x, with first
 * (Chebyshev) d, and with first = 2 x too, are write-only, never read (stale NaN cannot leak
 * in). Asynchronous on the
 * caller's stream. */
#include "core/error.h"
#include "precond/amg_impl.h"
#include "spmv/common_kernels.h"
#include "spmv/device_util.cuh"

#define AMG_CYCLE_THREADS 256

static __global__ void __launch_bounds__(AMG_CYCLE_THREADS)
amg_jacobi_kernel(gs_idx_t n, double w, const double *__restrict__ dinv,
                  const double *r, double *x, int x_zero)
{
  if (x_zero) {
    GS_GRID_STRIDE(i, n) x[i] = w * dinv[i] * r[i];
  } else {
    GS_GRID_STRIDE(i, n) x[i] += w * dinv[i] * r[i];
  }
}

static __global__ void __launch_bounds__(AMG_CYCLE_THREADS)
amg_cheb_kernel(gs_idx_t n, double c1, double c2, const double *__restrict__ dinv,
                const double *r, double *d, double *x, int first)
{
  if (first == 2) { /* the first step from x = 0: x is write-only */
    GS_GRID_STRIDE(i, n)
    {
      const double di = c2 * dinv[i] * r[i];
      d[i] = di;
      x[i] = di;
    }
  } else if (first) {
    GS_GRID_STRIDE(i, n)
    {
      const double di = c2 * dinv[i] * r[i];
      d[i] = di;
      x[i] += di;
    }
  } else {
    GS_GRID_STRIDE(i, n)
    {
      const double di = c1 * d[i] + c2 * dinv[i] * r[i];
      d[i] = di;
      x[i] += di;
    }
  }
}

extern "C" gs_status_t gs_amg_jacobi_kernel(cudaStream_t stream, gs_idx_t n, double w,
                                            const double *dinv, const double *r, double *x,
                                            int x_zero)
{
  if (n < 0) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_jacobi_kernel: n = %d", (int)n);
  if (n == 0) return GS_SUCCESS;
  amg_jacobi_kernel<<<gs_grid_blocks(n, AMG_CYCLE_THREADS), AMG_CYCLE_THREADS, 0, stream>>>(
      n, w, dinv, r, x, x_zero);
  return GS_CHECK_LAUNCH(stream, "amg_jacobi_kernel");
}

extern "C" gs_status_t gs_amg_cheb_kernel(cudaStream_t stream, gs_idx_t n, double c1, double c2,
                                          const double *dinv, const double *r, double *d,
                                          double *x, int first)
{
  if (n < 0) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_cheb_kernel: n = %d", (int)n);
  if (n == 0) return GS_SUCCESS;
  amg_cheb_kernel<<<gs_grid_blocks(n, AMG_CYCLE_THREADS), AMG_CYCLE_THREADS, 0, stream>>>(
      n, c1, c2, dinv, r, d, x, first);
  return GS_CHECK_LAUNCH(stream, "amg_cheb_kernel");
}
