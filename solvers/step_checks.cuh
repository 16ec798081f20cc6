/* solvers/step_checks.cuh: the scalar step checks of CG and BiCGSTAB on the device (CUDA only),
 * written once for the two places that take those steps: the fused update kernels
 * (solvers/vec_kernels.cu) and the persistent iterations (solvers/persist_kernels.cu). Each
 * function forms one step ratio (alpha, beta, omega) from scalars passed by value, or refuses it
 * with the halt code and GS_WHAT_* detail the host reports (gs_solver_halt_detail), the checks
 * in the order they are tested: a divisor that is not finite, then a sign or a zero, then the
 * ratio itself. They touch no memory: the caller records the halt its own way (vec_kernels.cu's
 * halt() into the scalar block, the persistent kernels' pstate) and keeps its own control flow.
 * Each returns GS_HALT_NONE (0) to proceed, with the ratio in its out-parameter; or the halt
 * code, with the scalar that caused it in *what. Only the out-parameter of the outcome is
 * written. The arithmetic is the callers' own, character for character, so that the two paths
 * agree bit for bit. */
#ifndef GS_SOLVERS_STEP_CHECKS_CUH
#define GS_SOLVERS_STEP_CHECKS_CUH

#include <math.h>

#include "solvers/solver_impl.h"

/* CG's step length alpha = rho / p^T A p (Saad, Algorithm 9.1, line 3). p^T A p <= 0 means A is
 * not positive definite: the step is refused rather than taken (GS_HALT_INDEFINITE). */
__device__ __forceinline__ int gs_step_cg_alpha(double rho, double pq, int *what, double *alpha)
{
  if (!isfinite(pq)) { *what = GS_WHAT_PQ; return GS_HALT_NANINF; }
  if (!(pq > 0.0)) { *what = GS_WHAT_PQ; return GS_HALT_INDEFINITE; }
  const double a = rho / pq;
  if (!isfinite(a)) { *what = GS_WHAT_ALPHA; return GS_HALT_NANINF; }
  *alpha = a;
  return GS_HALT_NONE;
}

/* A divisor that must be finite and nonzero; what_d names it in the halt. */
__device__ __forceinline__ int gs_step_divisor(double d, int what_d, int *what)
{
  if (!isfinite(d)) { *what = what_d; return GS_HALT_NANINF; }
  if (d == 0.0) { *what = what_d; return GS_HALT_BREAKDOWN; }
  return GS_HALT_NONE;
}

/* num / den: den checked by gs_step_divisor, then the ratio finite (what_r names it). */
__device__ __forceinline__ int gs_step_ratio(double num, double den, int what_d, int what_r,
                                             int *what, double *out)
{
  const int h = gs_step_divisor(den, what_d, what);
  if (h) return h;
  const double q = num / den;
  if (!isfinite(q)) { *what = what_r; return GS_HALT_NANINF; }
  *out = q;
  return GS_HALT_NONE;
}

/* CG's rho = r^T M^-1 r, at the start and of each new residual: finite; negative means M is not
 * positive definite (GS_HALT_INDEFINITE_PC); zero short of convergence (the callers test it
 * first) is a breakdown. */
__device__ __forceinline__ int gs_step_cg_rho(double rho, int *what)
{
  if (!isfinite(rho)) { *what = GS_WHAT_RHO; return GS_HALT_NANINF; }
  if (rho < 0.0) { *what = GS_WHAT_RHO; return GS_HALT_INDEFINITE_PC; }
  if (rho == 0.0) { *what = GS_WHAT_RHO; return GS_HALT_BREAKDOWN; }
  return GS_HALT_NONE;
}

/* CG's direction ratio beta = rho_new / rho (Saad, Algorithm 9.1, line 7), rho_new checked by
 * gs_step_cg_rho. */
__device__ __forceinline__ int gs_step_cg_beta(double rho_new, double rho, int *what,
                                               double *beta)
{
  const int h = gs_step_cg_rho(rho_new, what);
  if (h) return h;
  const double b = rho_new / rho;
  if (!isfinite(b)) { *what = GS_WHAT_BETA; return GS_HALT_NANINF; }
  *beta = b;
  return GS_HALT_NONE;
}

/* BiCGSTAB's (and BiCG's) rho = r~^T r at the start of an iteration: it divides the next beta
 * and is the numerator of alpha, so a zero is the method's breakdown (Saad, Algorithm 7.7). No
 * sign test: r~^T r has none in a nonsymmetric method. */
__device__ __forceinline__ int gs_step_rho_nonzero(double rho, int *what)
{
  return gs_step_divisor(rho, GS_WHAT_RHO, what);
}

/* BiCGSTAB's direction ratio beta = (rho / rho_old) (alpha / omega) (Saad, Algorithm 7.7,
 * line 9), grouped as both callers always have. omega = 0 from the previous iteration (t^T s
 * was 0) would divide by zero: a breakdown. */
__device__ __forceinline__ int gs_step_bicgstab_beta(double rho, double rho_old, double alpha,
                                                     double omega, int *what, double *beta)
{
  if (omega == 0.0) { *what = GS_WHAT_OMEGA; return GS_HALT_BREAKDOWN; }
  const double b = (rho / rho_old) * (alpha / omega);
  if (!isfinite(b)) { *what = GS_WHAT_BETA; return GS_HALT_NANINF; }
  *beta = b;
  return GS_HALT_NONE;
}

/* BiCGSTAB's step length alpha = rho / r~^T v (Saad, Algorithm 7.7, line 4). */
__device__ __forceinline__ int gs_step_bicgstab_alpha(double rho, double rv, int *what,
                                                      double *alpha)
{
  return gs_step_ratio(rho, rv, GS_WHAT_RV, GS_WHAT_ALPHA, what, alpha);
}

/* BiCGSTAB's omega = t^T s / t^T t (Saad, Algorithm 7.7, line 6); t^T t = 0 means t = A shat
 * = 0. */
__device__ __forceinline__ int gs_step_bicgstab_omega(double ts, double tt, int *what,
                                                      double *omega)
{
  return gs_step_ratio(ts, tt, GS_WHAT_TT, GS_WHAT_OMEGA, what, omega);
}

#endif
