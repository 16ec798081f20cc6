/* spmv/matrix_device.h: the device-side checks and offset conversions of a CSR handed over in
 * device memory (gs_matrix_create_device, spmv/matrix.c). Pure C declarations of the launchers
 * in spmv/matrix_device.cu. */
#ifndef GS_SPMV_MATRIX_DEVICE_H
#define GS_SPMV_MATRIX_DEVICE_H

#include <cuda_runtime_api.h>

#include "gpusolve/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the checks found, in device memory. Each fault is a key (position << 2 | kind) and the
 * smallest key wins (atomicMin), so the report names the first fault, the same on every run.
 * GS_CSR_CHECK_NONE: no fault of that family. */
#define GS_CSR_CHECK_NONE (~0ull)
enum {
  GS_CSR_RP_FIRST = 0,    /* row_ptr[0] != 0 (position 0) */
  GS_CSR_RP_DECREASE = 1, /* row_ptr[i + 1] < row_ptr[i] (position i) */
  GS_CSR_RP_LAST = 2      /* row_ptr[m] != nnz (position m) */
};
enum {
  GS_CSR_COL_RANGE = 0, /* col[k] outside 0..n-1 (position k) */
  GS_CSR_COL_ORDER = 1, /* col[k] <= col[k-1] within a row: unsorted or duplicate */
  GS_CSR_VAL_FINITE = 2 /* val[k] is NaN or infinite */
};
typedef struct gs_csr_check {
  unsigned long long rp_fault;    /* row pointers: smallest (i << 2 | GS_CSR_RP_*) */
  unsigned long long entry_fault; /* entries: smallest (k << 2 | GS_CSR_COL_* / VAL_*) */
  unsigned long long entry_row;   /* smallest row holding an entry fault: entry_fault's row */
} gs_csr_check_t;

/** Queues the checks of an m x n CSR with nnz entries on `stream`: d_rp holds m + 1 offsets of
 *  rp_bits (32 or 64) bits, d_col and d_val nnz entries (not read when the row pointers are
 *  faulty, so a bad offset never leads to a read out of bounds). *d_res (device memory) is reset
 *  first and holds the outcome once the stream reaches it. */
gs_status_t gs_launch_csr_check(cudaStream_t stream, gs_idx_t m, gs_idx_t n, gs_off_t nnz,
                                const void *d_rp, int rp_bits, const gs_idx_t *d_col,
                                const gs_val_t *d_val, gs_csr_check_t *d_res);

/** d_out[i] = d_in[i] for i <= m, from in_bits to out_bits offsets (32 or 64 each; the values
 *  must fit out_bits: the caller has checked them). Asynchronous on `stream`. */
gs_status_t gs_launch_offsets_convert(cudaStream_t stream, gs_idx_t m, const void *d_in,
                                      int in_bits, void *d_out, int out_bits);

#ifdef __cplusplus
}
#endif
#endif
