/* core/context_impl.h: the context's fields, for library code (not installed). */
#ifndef GS_CORE_CONTEXT_IMPL_H
#define GS_CORE_CONTEXT_IMPL_H

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusparse.h>

#include "gpusolve/context.h"

struct gs_context {
  int device;
  cudaStream_t stream;
  cublasHandle_t cublas;
  cusparseHandle_t cusparse;
  char name[256];
  int sm_count;
  size_t l2_bytes;
};

#endif
