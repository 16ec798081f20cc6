/* spmv/features_dev.h: a matrix's features computed on the GPU from its shared device CSR
 * (spmv/features_kernels.cu), equal bit for bit to the host's: gs_csr_features
 * (core/features.c) for gs_features_t, gs_select_features_with (select/rule.c) for
 * gs_select_features_t. Both sides reduce to the order-independent sums of core/features.h and
 * finish them with the same host code; the selection's own fields are formed by
 * gs_select_features_fill below, which the host path calls too. Internal. */
#ifndef GS_SPMV_FEATURES_DEV_H
#define GS_SPMV_FEATURES_DEV_H

#include <stdint.h>
#include <string.h>

#include "gpusolve/select.h"
#include "spmv/spmv_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The features of the device CSR A (rows sorted, as every device CSR is) in one kernel pass
 *  and one small read-back on ctx's stream (synchronized before returning): *g as
 *  gs_csr_features gives them for the host copy (`stored` is the copy's symmetry as stored,
 *  which the device does not know), *f as gs_select_features_with. Either output may be NULL
 *  (not computed). Device memory: (m + n) / 8 bytes and a 2 MiB hash table, freed before
 *  returning. On failure (device memory, a CUDA error) the outputs are zeroed. */
gs_status_t gs_dcsr_select_features(gs_context_t *ctx, const gs_dcsr_t *A, gs_symmetry_t stored,
                                    gs_features_t *g, gs_select_features_t *f);

/** The selection's features of A (gs_select_features_with's, bit for bit): those computed
 *  with its features at gs_matrix_create, else now on the GPU (uploading the shared device CSR
 *  if needed) and kept. Errors as gs_dcsr_select_features; the caller may fall back to the
 *  host (gs_select_features_with). */
gs_status_t gs_matrix_select_features(gs_matrix_t *A, gs_select_features_t *f);
/** 1 when gs_matrix_select_features has them at hand (no pass to run). */
int gs_matrix_select_features_known(const gs_matrix_t *A);

/** The selection's features from the matrix's gs_features_t g, its shape (m rows, nnz), the
 *  SELL-32 slot counts (used: rows padded to their slice's longest; total: C slots a row of
 *  every slice) and the distinct value count: the expressions of the builders' fill guards
 *  (ell_build.c, dia_build.c, sell_build.c). */
static inline void gs_select_features_fill(const gs_features_t *g, gs_idx_t m, gs_off_t nnz,
                                           int64_t sell_used, int64_t sell_total,
                                           gs_off_t distinct, gs_select_features_t *f)
{
  memset(f, 0, sizeof *f);
  f->rows = g->rows;
  f->cols = g->cols;
  f->nnz = g->nnz;
  f->pct_nnz = 100.0 * g->density;
  f->row_mean = g->row_mean;
  f->row_std = g->row_std;
  f->row_max = g->row_max;
  f->diagonals = g->diagonals;
  f->symmetric = g->numerically_symmetric;
  f->ell_slots = (double)m * (double)g->row_max;
  f->dia_slots = (double)g->diagonals * (double)m;
  f->sell_slots = (double)sell_used;
  f->sell_total = (double)sell_total;
  const double nz = nnz > 0 ? (double)nnz : 1.0;
  f->ell_fill = f->ell_slots / nz;
  f->dia_fill = f->dia_slots / nz;
  f->sell_fill = f->sell_slots / nz;
  f->distinct_values = distinct;
}

#ifdef __cplusplus
}
#endif
#endif
