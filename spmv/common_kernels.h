/* spmv/common_kernels.h: small device helpers shared by backends (extern "C" launchers). */
#ifndef GS_SPMV_COMMON_KERNELS_H
#define GS_SPMV_COMMON_KERNELS_H

#include <cuda_runtime_api.h>

#include "gpusolve/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** y = beta * y on `stream`; with beta == 0, y = 0 without reading y (NaN never leaks). */
gs_status_t gs_launch_scale(cudaStream_t stream, gs_idx_t n, double beta, double *d_y);

/** Byte model of a plain CSR product (beta = 0): row pointers, column indices and values read
 *  once, x read once (ideal cache reuse), y written once. */
size_t gs_csr_bytes_per_apply(gs_idx_t m, gs_idx_t n, gs_idx_t nnz);

#ifdef __cplusplus
}
#endif
#endif
