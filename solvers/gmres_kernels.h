/* solvers/gmres_kernels.h: the fused Gram-Schmidt kernels of GMRES on one GPU
 * (solvers/gmres_kernels.cu); asynchronous on `stream` (not installed). */
#ifndef GS_SOLVERS_GMRES_KERNELS_H
#define GS_SOLVERS_GMRES_KERNELS_H

#include "solvers/solver_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The first classical Gram-Schmidt subtraction with the normalization of the newest basis
 *  vector folded in. V has k columns (leading dimension ld, n rows); its last column holds u,
 *  the unnormalized newest basis vector, v = c u; h (k entries) = V^T w as computed with u in
 *  place of v. In one pass: V[:, k-1] = c u (normalized in place), then
 *  w -= V[:, 0..k-2] h[0..k-2] + v (c h[k-1]). h is only read (gmres_sub_norm scales its last
 *  entry). */
gs_status_t gs_kernel_gmres_sub_normalize(cudaStream_t stream, gs_idx_t n, int k, double *V,
                                          size_t ld, const double *h, double c, double *w);

/** The second (re-orthogonalization) subtraction with the Hessenberg column completed, in one
 *  pass and one launch: w -= V h2 (V normalized, k columns), h[j] += h2[j] for j < k - 1,
 *  h[k-1] = c h[k-1] + h2[k-1] (the first pass's coefficient of v = c u), and h[k] = ||w|| of
 *  the new w (deterministic: block partials summed in block order by the last block; red holds
 *  one slot). */
gs_status_t gs_kernel_gmres_sub_norm(cudaStream_t stream, gs_idx_t n, int k, const double *V,
                                     size_t ld, const double *h2, double c, double *h, double *w,
                                     gs_red_t *red);

#ifdef __cplusplus
}
#endif
#endif
