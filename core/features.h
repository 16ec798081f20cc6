/* core/features.h: the integer and extremal sums behind gs_features_t, and the one function that
 * turns them into the struct, shared by the host pass (core/features.c) and the device pass
 * (spmv/features_kernels.cu), so that both give the same doubles bit for bit. Every field here
 * is order-independent (counts, exact sums, maxima, minima, flags): any reduction order of any
 * number of threads gives the same values. Internal. */
#ifndef GS_CORE_FEATURES_H
#define GS_CORE_FEATURES_H

#include <stdint.h>

#include "gpusolve/matrix.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gs_features_raw {
  gs_idx_t m, n;
  gs_off_t nnz;
  gs_symmetry_t symmetry;   /* as stored */
  gs_off_t row_max, row_min; /* row_min: 0 for m = 0 */
  int64_t empty_rows;
  uint64_t sumsq_hi, sumsq_lo; /* sum over rows of len^2, exactly (128 bits) */
  int64_t diagonals;           /* distinct j - i */
  /* square matrices only (the rest zero otherwise) */
  int structurally_symmetric, diagonal_full, diagonal_positive;
  int finite;  /* no stored value is NaN or +-Inf */
  double amax; /* max |a| over the finite stored values */
  double dmax; /* max |a_ij - a_ji| over the off-diagonal stored entries (mirror 0 if absent) */
} gs_features_raw_t;

/** f from r: the counts copied; density, row_mean, row_std and asymmetry formed from them by
 *  fixed expressions (row_std from the exact sum of squares: see core/features.c). */
void gs_features_finish(const gs_features_raw_t *r, gs_features_t *f);

/** gs_csr_features for a matrix whose rows the caller knows to be sorted (gs_matrix_create's
 *  copy, sorted by construction): skips the pass that checks it. */
gs_status_t gs_csr_features_sorted(const gs_csr_t *A, gs_features_t *f);

/** (hi, lo) += v * v, 128-bit, for v >= 0. */
static inline void gs_sumsq_add(uint64_t *hi, uint64_t *lo, uint64_t v)
{
  /* v < 2^63: split in 32-bit halves, v^2 = a^2 2^64 + 2ab 2^32 + b^2 */
  const uint64_t a = v >> 32, b = v & 0xffffffffu;
  const uint64_t ab = a * b; /* < 2^63 */
  uint64_t l = b * b, h = a * a + (ab >> 31);
  const uint64_t mid = ab << 33;
  l += mid;
  if (l < mid) ++h;
  *lo += l;
  if (*lo < l) ++h;
  *hi += h;
}

#ifdef __cplusplus
}
#endif
#endif
