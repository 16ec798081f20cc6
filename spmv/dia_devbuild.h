/* spmv/dia_devbuild.h: the DIA device build as a host layout, for tests/test_devbuild_gpu.c (the
 * build itself runs inside the dia backend's prepare, spmv/dia_kernels.cu). */
#ifndef GS_SPMV_DIA_DEVBUILD_H
#define GS_SPMV_DIA_DEVBUILD_H

#include "spmv/formats.h"
#include "spmv/spmv_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Builds A's DIA layout on the GPU from its shared device CSR, as prepare does with
 *  build=device (the same refusals: GS_ERR_FORMAT_FILL over max_fill, GS_ERR_UNSUPPORTED for
 *  m + n >= 2^31), and downloads it into a host layout shaped as gs_dia_layout_build's: values
 *  in valf (rounded to float) when float_values, else in val. Free with gs_dia_layout_destroy.
 *  Defined in spmv/dia_kernels.cu. */
gs_status_t gs_dia_device_layout(gs_context_t *ctx, gs_matrix_t *A, double max_fill,
                                 int float_values, gs_dia_layout_t **out);

#ifdef __cplusplus
}
#endif
#endif
