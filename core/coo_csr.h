/* core/coo_csr.h: COO -> CSR on several threads (core/coo_csr.c), bit for bit gs_coo_to_csr's.
 * Internal tier: the reader (io/) and gs_coo_to_csr (core/matrix.c) use it. */
#ifndef GS_CORE_COO_CSR_H
#define GS_CORE_COO_CSR_H

#include <stddef.h>
#include <stdint.h>

#include "gpusolve/matrix.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Below this many entries the CSR is built on one thread (starting threads costs more than
 *  it saves; default 65536). Tests lower it. Not thread-safe: set it before reading. */
extern int64_t gs_coo_to_csr_min;

/** gs_coo_to_csr on nt threads, with the same result bit for bit: rows in order, columns
 *  sorted within each row, duplicates summed in the COO's order, explicit zeros kept. */
gs_status_t gs_coo_to_csr_threads(gs_csr_t **out, const gs_coo_t *A, int nt);
/** gs_coo_to_csr_threads that also finds, in bad[0] (row) and bad[1] (column), the first position
 *  in row-major order whose duplicates summed to a value that is not finite ({-1, -1} when
 *  none did). The CSR is built all the same. */
gs_status_t gs_coo_to_csr_threads_checked(gs_csr_t **out, const gs_coo_t *A, int nt, int64_t bad[2]);

/** Asks for transparent huge pages over the 2 MiB pages inside [p, p + bytes) (MADV_HUGEPAGE;
 *  nothing for less than 4 MiB, or where the system has none): a large array about to be
 *  written for the first time then takes a page fault per 2 MiB instead of one per 4 KiB, which
 *  on a fresh array costs more than the writes. */
void gs_advise_huge(void *p, size_t bytes);

/** One stretch of a COO's entries (the reader's parts, never packed together). */
typedef struct gs_coo_seg {
  const gs_idx_t *row, *col;
  const gs_val_t *val;
  int64_t n;
} gs_coo_seg_t;

/** gs_coo_to_csr_threads_checked of the m x n COO holding the entries of seg[0 .. nseg) in
 *  order, or, with mirror GS_SYM_SYMMETRIC (GS_SYM_SKEW), of the COO where each entry (i, j, v)
 *  with i != j is followed by (j, i, v) ((j, i, -v)): the reader's expansion of a stored
 *  triangle, done on the way (m == n). The result's symmetry field is `symmetry`. */
gs_status_t gs_coo_segs_to_csr(gs_csr_t **out, gs_idx_t m, gs_idx_t n, const gs_coo_seg_t *seg,
                               int nseg, gs_symmetry_t mirror, gs_symmetry_t symmetry, int nt,
                               int64_t bad[2]);

#ifdef __cplusplus
}
#endif
#endif
