/* core/coo_csr.h: COO -> CSR on several threads (core/coo_csr.c), bit for bit gs_coo_to_csr's.
 * Internal tier: the reader (io/) and gs_coo_to_csr (core/matrix.c) use it. */
#ifndef GS_CORE_COO_CSR_H
#define GS_CORE_COO_CSR_H

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

#ifdef __cplusplus
}
#endif
#endif
