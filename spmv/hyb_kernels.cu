/* spmv/hyb_kernels.cu: the "hyb" backend, hybrid ELL + COO SpMV (Bell & Garland,
 * SC09, section 3.5; CUSP hyb_matrix / spmv_hyb).
 *
 * Work division: the first K entries of every row live in an ELL part and run on
 *   ell_spmv_kernel (one thread per row, ell_kernels.cu), the entries past K live in a COO part
 *   and run on coo_spmv_kernel + coo_update_kernel (persistent warps with segmented reduction,
 *   coo_kernels.cu). This file only chains those launchers; it has no kernel of its own.
 *   K is the paper's histogram rule (the largest K such that at least max(4096, m/3) rows have
 *   K or more entries; gs_hyb_choose_k) or opts->hyb_k when >= 0. HYB never refuses for fill.
 * op = N: the ELL pass computes y = alpha*A_ell*x + beta*y and writes every y[i] (so beta and
 *   the write-only y of beta == 0 are handled there, without a separate scale pass), then the
 *   COO pass adds alpha*A_coo*x into the rows that have a tail.
 * op = T: y = beta*y (gs_launch_scale, common_kernels.cu), then ell_spmv_t_kernel (one thread
 *   per row scattering its K slots) and coo_spmv_t_kernel (one thread per entry) add with
 *   atomicAdd.
 * Memory access and assumptions: those of the two kernels (see their banners).
 *
 * Build: by default (build=device) both parts are built on the GPU from the matrix's shared
 *   device CSR (spmv/bg_devbuild.cu: K from a device row-length histogram through the same
 *   gs_hyb_k_rule, the ELL slab of each row's first K entries, the COO part of the entries past
 *   K); build=host runs gs_hyb_layout_build and uploads it. Both give the same bytes.
 * Precision: precision=mixed and float round both parts once at prepare (gs_hyb_layout_round)
 *   and upload floats; the ELL and COO kernels then run their <float, double> instantiations
 *   (mixed: double x, y and sums) or their <float, float> ones (float: float x, y, sums and
 *   atomics), through the same launchers (hyb_apply_t).
 *
 * Byte model (gs_spmv_mem_t, beta = 0; a = 8 bytes a stored value, 4 in mixed and float
 * precision; v = 8 bytes a vector entry, 4 in float precision):
 *   op = N: (4 + a)*m*K (ELL slots) + v*n (x, read once) + v*m (y written by the ELL pass)
 *           + (8 + a)*coo_nnz + 2v*coo_rows (y read-modified-written per row with a tail)
 *           + 2(4 + v)*warps (COO carries).
 *   op = T: (4 + a)*m*K + (8 + a)*coo_nnz + v*m (x) + v*n (scale pass) + 2v*n (atomic updates,
 *           counted once per column). */
#include <stdio.h>
#include <stdlib.h>

#include "core/error.h"
#include "spmv/bg_devbuild.h"
#include "spmv/common_kernels.h"
#include "spmv/formats_kernels.h"

typedef struct hyb_data {
  gs_ell_dev_t ell;
  gs_coo_dev_t coo;
  int64_t ell_entries; /* real entries in the ELL part */
  size_t vec_bytes;    /* bytes of a vector entry: 8, or 4 in float precision */
} hyb_data_t;

static void hyb_destroy(void *data)
{
  hyb_data_t *D = (hyb_data_t *)data;
  if (!D) return;
  gs_ell_dev_free(&D->ell);
  gs_coo_dev_free(&D->coo);
  free(D);
}

enum { HYB_OPT_K };
static const gs_spmv_option_t hyb_options[] = {
    {"k", "ELL width K; -1: the histogram rule of Bell & Garland, SC09, 3.5", GS_OPTK_INT, -1, -1,
     1e9},
    GS_SPMV_OPTION_END};

static gs_status_t hyb_prepare(gs_context_t *ctx, gs_matrix_t *A, const gs_spmv_cfg_t *cfg,
                               void **data, unsigned *caps)
{
  *caps &= ~(unsigned)GS_SPMV_CAP_DETERMINISTIC_T; /* op T adds into y with atomics */
  gs_status_t st = GS_SUCCESS;
  gs_hyb_layout_t *L = NULL;
  hyb_data_t *D = NULL;
  *data = NULL;
  if (gs_cfg_host_build(cfg)) { /* build=host: the reference builder, then the upload */
    GS_TRY(gs_hyb_layout_build(&L, gs_matrix_host(A), (int)cfg->v[HYB_OPT_K]));
    if (gs_cfg_float_values(cfg)) GS_TRY(gs_hyb_layout_round(L)); /* once, here */
    D = (hyb_data_t *)calloc(1, sizeof *D);
    if (!D) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory preparing hyb");
    D->ell_entries = L->ell->entries;
    D->vec_bytes = cfg->precision == GS_PRECISION_FLOAT ? sizeof(float) : sizeof(gs_val_t);
    GS_TRY(gs_ell_dev_upload(ctx, L->ell, &D->ell));
    GS_TRY(gs_coo_dev_upload(ctx, L->coo, &D->coo));
  } else { /* the same layout built on the GPU from the shared device CSR (bg_devbuild.cu) */
    gs_dcsr_t C;
    gs_idx_t K = 0, max_len = 0;
    const int fv = gs_cfg_float_values(cfg);
    GS_TRY(gs_matrix_device_csr(A, &C));
    GS_TRY(gs_bg_hyb_width(ctx, &C, (int)cfg->v[HYB_OPT_K], &K, &max_len));
    D = (hyb_data_t *)calloc(1, sizeof *D);
    if (!D) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory preparing hyb");
    D->vec_bytes = cfg->precision == GS_PRECISION_FLOAT ? sizeof(float) : sizeof(gs_val_t);
    GS_TRY(gs_bg_ell_build(ctx, &C, K, fv, &D->ell));
    GS_TRY(gs_bg_coo_build(ctx, &C, K, max_len, fv, &D->coo));
    D->ell_entries = (int64_t)C.nnz - D->coo.nnz; /* min(length, K) summed over the rows */
  }
  *data = D;
  D = NULL;
cleanup:
  gs_hyb_layout_destroy(&L);
  hyb_destroy(D);
  return st;
}

template <typename T> /* double, or float in float precision */
static gs_status_t hyb_apply_t(gs_context_t *ctx, void *data, gs_op_t op, T alpha, const T *d_x,
                               T beta, T *d_y)
{
  const hyb_data_t *D = (const hyb_data_t *)data;
  if (op == GS_OP_N) {
    GS_CHECK(gs_ell_dev_apply(ctx, &D->ell, alpha, d_x, beta, d_y));
    return gs_coo_dev_accumulate(ctx, &D->coo, alpha, d_x, d_y);
  }
  GS_CHECK(gs_launch_scale(ctx->stream, D->ell.n, beta, d_y));
  GS_CHECK(gs_ell_dev_accumulate_t(ctx, &D->ell, alpha, d_x, d_y));
  return gs_coo_dev_accumulate_t(ctx, &D->coo, alpha, d_x, d_y);
}

static gs_status_t hyb_apply(gs_context_t *ctx, void *data, gs_op_t op, double alpha,
                             const double *d_x, double beta, double *d_y)
{
  return hyb_apply_t(ctx, data, op, alpha, d_x, beta, d_y);
}

static gs_status_t hyb_apply_f32(gs_context_t *ctx, void *data, gs_op_t op, float alpha,
                                 const float *d_x, float beta, float *d_y)
{
  return hyb_apply_t(ctx, data, op, alpha, d_x, beta, d_y);
}

static gs_status_t hyb_memory(const void *data, gs_spmv_mem_t *mem)
{
  const hyb_data_t *D = (const hyb_data_t *)data;
  const size_t v = D->vec_bytes, i = sizeof(gs_idx_t);
  const size_t m = (size_t)D->ell.m, n = (size_t)D->ell.n;
  const size_t ell = m * (size_t)D->ell.K * (i + D->ell.val_bytes),
               coo = (size_t)D->coo.nnz * (2 * i + D->coo.val_bytes);
  mem->device_bytes = D->ell.bytes + D->coo.bytes;
  mem->bytes_per_apply = ell + n * v + m * v + coo + (size_t)D->coo.rows_touched * 2 * v +
                         (size_t)D->coo.warps * 2 * (i + v);
  mem->bytes_per_apply_t = ell + coo + m * v + n * v + n * 2 * v;
  return GS_SUCCESS;
}

static void hyb_describe(const void *data, char *buf, size_t len)
{
  const hyb_data_t *D = (const hyb_data_t *)data;
  const double total = (double)D->ell_entries + (double)D->coo.nnz;
  const double pe = total > 0 ? 100.0 * (double)D->ell_entries / total : 0.0;
  const double pc = total > 0 ? 100.0 * (double)D->coo.nnz / total : 0.0;
  snprintf(buf, len, "K = %d, ELL %.1f%% / COO %.1f%% of %.0f entries", (int)D->ell.K, pe, pc,
           total);
}

extern "C" const gs_spmv_ops_t gs_spmv_hyb_ops = {
    GS_SPMV_OPS_VERSION,
    "hyb",
    "HYB, ELL for the first K entries per row + COO for the rest, K by histogram "
    "(Bell & Garland, SC09, 3.5)",
    GS_SPMV_FLAG_TRANSPOSE | GS_SPMV_FLAG_HOST_LAYOUT | GS_SPMV_FLAG_MIXED | GS_SPMV_FLAG_FLOAT |
        GS_SPMV_FLAG_SHARED_CSR | GS_SPMV_FLAG_DEVICE_BUILD,
    hyb_options,
    hyb_prepare,
    hyb_apply,
    hyb_memory,
    hyb_destroy,
    gs_hyb_host_apply,
    hyb_describe,
    hyb_apply_f32};
