/* spmv/registry.c: every SpMV backend, in the order `gpusolve spmv --list` shows them.
 * A backend is compiled in when its spmv/NAME_kernels.cu exists (CMake defines GS_HAVE_NAME),
 * so that a format under construction never breaks the build of the others. */
#include "spmv/spmv_impl.h"

#define GS_BACKEND(x) extern const gs_spmv_ops_t gs_spmv_##x##_ops;
#include "spmv/backends.def"
#undef GS_BACKEND

const gs_spmv_ops_t *const gs_spmv_registry[] = {
#define GS_BACKEND(x) &gs_spmv_##x##_ops,
#include "spmv/backends.def"
#undef GS_BACKEND
    NULL};

const int gs_spmv_registry_count = (int)(sizeof gs_spmv_registry / sizeof gs_spmv_registry[0]) - 1;
