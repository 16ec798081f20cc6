/* spmv/sellp_build.c: the sellp backend's host side: C, T and sigma chosen from the matrix, the
 * SELL-P layout (the shared builder of spmv/sell_build.c), and a host apply that runs the
 * kernels' arithmetic on it (spmv/sellp.h). Pure C, no CUDA. */
#include <math.h>
#include <stdlib.h>

#include "core/error.h"
#include "spmv/formats.h" /* gs_fmt_scale_host, gs_fmt_val */
#include "spmv/sellp.h"

static int is_pow2(double v) { return v >= 1.0 && v == floor(v) && ((long)v & ((long)v - 1)) == 0; }

gs_idx_t gs_sellp_auto_threads(gs_idx_t m, gs_off_t nnz)
{
  const double mean = m > 0 ? (double)nnz / (double)m : 0.0;
  gs_idx_t T = 1;
  while (T < GS_SELLP_T_MAX && 16.0 * T <= mean) T *= 2; /* >= 8 entries a thread */
  /* A matrix of fewer rows than GS_SELLP_THREADS_ENOUGH / 8 cannot fill the device at a few
   * threads a row, and its product is latency-bound: up to 8 threads a row, >= 2 entries a
   * thread, shorten every thread's chain of dependent loads. H100, run 101, op N, us (T = 1
   * or 2 before): Dubcova1 10.1 -> 7.8 at T = 4 (cusparse-sell 9.2), cage10 9.4 -> 7.7-8.2
   * at T = 4 (8.5), crystm01 9.0 -> 7.6 at T = 8 (9.0), bcsstk16 9.4 -> 8.3 at T = 8 (10.5). */
  if ((double)m * 8.0 < GS_SELLP_THREADS_ENOUGH)
    while (T < 8 && 4.0 * T <= mean) T *= 2;
  /* more threads a row only add reduction steps and padding to a multiple of T: drop them
   * while the rows alone still give GS_SELLP_THREADS_ENOUGH threads */
  while (T > 1 && (double)m * (T / 2) >= GS_SELLP_THREADS_ENOUGH) T /= 2;
  return T;
}

gs_status_t gs_sellp_threads(const gs_spmv_cfg_t *cfg, gs_idx_t m, gs_off_t nnz,
                             gs_off_t row_max, gs_sellp_shape_t *out)
{
  const double c = cfg->v[SELLP_OPT_C], t = cfg->v[SELLP_OPT_T], sg = cfg->v[SELLP_OPT_SIGMA];
  if ((c != 0.0 && (!is_pow2(c) || c > GS_SELLP_C_MAX)) ||
      (t != 0.0 && (!is_pow2(t) || t > GS_SELLP_T_MAX)) || sg < 0.0 || sg != floor(sg) ||
      sg > INT32_MAX)
    return GS_ERROR(GS_ERR_INVALID_ARG,
                    "sellp: c must be 0 or a power of two <= %d, t 0 or a power of two <= %d, "
                    "sigma an integer >= 0 (c = %g, t = %g, sigma = %g)",
                    GS_SELLP_C_MAX, GS_SELLP_T_MAX, c, t, sg);
  gs_idx_t T = t != 0.0 ? (gs_idx_t)t : gs_sellp_auto_threads(m, nnz);
  /* SELL-P gives every row of a slice the same T threads, so the longest row is a chain of
   * row_max / T steps for its threads while the rest of the GPU idles (Pareto rows, H100: 11.7
   * ms against cuSPARSE CSR's 91 us at T = 2). The automatic T grows with the longest row, and
   * a row still longer than GS_SELLP_SERIAL_MAX steps a thread is refused, like too much fill:
   * rows that uneven belong to hola, merge or csr-adaptive. */
  if (t == 0.0)
    while (T < GS_SELLP_T_MAX && row_max > (gs_off_t)GS_SELLP_SERIAL_AUTO * T) T *= 2;
  gs_idx_t C = c != 0.0 ? (gs_idx_t)c : (T < 32 ? 32 / T : 1);
  if (t == 0.0)
    while ((int64_t)C * T > GS_SELLP_GROUP_MAX) T /= 2;
  if (row_max > (gs_off_t)GS_SELLP_SERIAL_MAX * T)
    return GS_ERROR(GS_ERR_FORMAT_FILL,
                    "sellp: the longest row has %lld entries, %lld steps for each of its %d "
                    "threads (limit %d): rows this uneven suit hola, merge or csr-adaptive",
                    (long long)row_max, (long long)((row_max + T - 1) / T), (int)T,
                    GS_SELLP_SERIAL_MAX);
  if ((int64_t)C * T > GS_SELLP_GROUP_MAX)
    return GS_ERROR(GS_ERR_INVALID_ARG,
                    "sellp: a slice of c = %d rows at t = %d threads a row is %lld threads, more "
                    "than a block's %d",
                    (int)C, (int)T, (long long)C * T, GS_SELLP_GROUP_MAX);
  out->C = C;
  out->T = T;
  out->sigma = (gs_idx_t)sg; /* 0: automatic, gs_sellp_sort_pays decides */
  return GS_SUCCESS;
}

gs_idx_t gs_sellp_sigma_window(gs_idx_t C, gs_idx_t m)
{
  const int64_t window = (int64_t)GS_SELLP_SIGMA_SLICES * C;
  return (gs_idx_t)(window < m ? window : m);
}

/* Sorting adds the permutation (4 bytes a row, read once a product) and scatters y's writes
 * within a window; it saves 12 bytes a padding slot (8 in mixed precision: a 4-byte column and
 * a float), or brings the fill under max_fill. */
int gs_sellp_sort_pays(const gs_spmv_cfg_t *cfg, gs_idx_t m, gs_off_t nnz, int64_t slots1,
                       int64_t used1, int64_t slotsw, int64_t usedw)
{
  const double max_fill = cfg->v[SELLP_OPT_MAX_FILL];
  const double slot_bytes = gs_cfg_float_values(cfg) ? 8.0 : 12.0;
  const int pays = slot_bytes * (double)(slots1 - slotsw) > 8.0 * (double)m;
  const int rescues = max_fill > 0.0 && (double)used1 > max_fill * (double)nnz &&
                      (double)usedw <= max_fill * (double)nnz;
  return pays || rescues;
}

gs_status_t gs_sellp_choose(const gs_csr_t *A, const gs_spmv_cfg_t *cfg, gs_sellp_shape_t *out)
{
  if (!A || !cfg || !out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_sellp_choose: NULL argument");
  gs_off_t row_max = 0;
  for (gs_idx_t i = 0; i < A->m; ++i)
    if (A->row_ptr[i + 1] - A->row_ptr[i] > row_max) row_max = A->row_ptr[i + 1] - A->row_ptr[i];
  GS_CHECK(gs_sellp_threads(cfg, A->m, A->nnz, row_max, out));
  if (out->sigma != 0) return GS_SUCCESS;
  /* Automatic sigma: sort when it pays. */
  out->sigma = 1;
  if (A->m <= 1) return GS_SUCCESS;
  gs_sell_params_t p = {out->C, out->T, 1, 0.0, "SELL-P"};
  int64_t slots1 = 0, used1 = 0, slotsw = 0, usedw = 0;
  gs_idx_t w1 = 0, ww = 0;
  GS_CHECK(gs_sell_count(A, &p, &slots1, &used1, &w1));
  p.sigma = gs_sellp_sigma_window(out->C, A->m);
  GS_CHECK(gs_sell_count(A, &p, &slotsw, &usedw, &ww));
  if (gs_sellp_sort_pays(cfg, A->m, A->nnz, slots1, used1, slotsw, usedw)) out->sigma = p.sigma;
  return GS_SUCCESS;
}

gs_status_t gs_sellp_build(gs_sell_t **out, const gs_csr_t *A, const gs_spmv_cfg_t *cfg)
{
  gs_sellp_shape_t sh;
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_sellp_build: out is NULL");
  *out = NULL;
  GS_CHECK(gs_sellp_choose(A, cfg, &sh));
  const gs_sell_params_t p = {sh.C, sh.T, sh.sigma, cfg->v[SELLP_OPT_MAX_FILL], "SELL-P"};
  GS_CHECK(gs_sell_build_p(out, A, &p));
  if (gs_cfg_float_values(cfg)) { /* rounded once, here (sellp.h) */
    const gs_status_t st = gs_sell_round(*out);
    if (st != GS_SUCCESS) gs_sell_destroy(out);
    return st;
  }
  return GS_SUCCESS;
}

/* sellp_spmv_kernel of sellp_kernels.cu for one slice, thread after thread: part[tig] is the
 * register sum of thread tig, then the butterfly and the shared-memory pass. */
static void slice_apply(const gs_sell_t *S, int64_t s, double *part, double *tmp, double alpha,
                        const double *x, double beta, double *y)
{
  const int C = (int)S->slice_size, T = (int)S->pad, G = C * T;
  const int64_t p0 = S->slice_ptr[s], iters = ((int64_t)S->slice_ptr[s + 1] - p0) / G;
  for (int tig = 0; tig < G; ++tig) {
    double sum = 0.0;
    for (int64_t j = 0; j < iters; ++j) {
      const int64_t q = p0 + j * G + tig;
      if (S->col[q] >= 0) /* padding: dropped */
        sum = fma(gs_fmt_val(S->val, S->valf, (size_t)q), x[S->col[q]], sum);
    }
    part[tig] = sum;
  }
  /* __shfl_xor_sync over the bits of t inside a warp: lane l gets sum(l) + sum(l ^ off) */
  for (int off = (G < 32 ? G : 32) / 2; off >= C; off /= 2) {
    for (int tig = 0; tig < G; ++tig) tmp[tig] = part[tig] + part[tig ^ off];
    for (int tig = 0; tig < G; ++tig) part[tig] = tmp[tig];
  }
  for (int r = 0; r < C; ++r) {
    const int64_t row = s * C + r;
    if (row >= S->m) break; /* the rows padding the last slice are not written */
    double tot = part[r];
    if (G > 32) { /* one partial a warp (C < 32) or a thread (C >= 32), added in order */
      const int stride = C < 32 ? 32 : C;
      for (int k = 1; k < G / stride; ++k) tot += part[r + k * stride];
    }
    const int64_t i = S->perm ? S->perm[row] : row;
    y[i] = beta == 0.0 ? alpha * tot : alpha * tot + beta * y[i]; /* beta = 0: y not read */
  }
}

gs_status_t gs_sellp_layout_apply_host(const gs_sell_t *S, gs_op_t op, double alpha,
                                       const double *x, double beta, double *y)
{
  if (!S || (op != GS_OP_N && op != GS_OP_T))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_sellp_layout_apply_host: bad argument");
  const gs_idx_t outn = op == GS_OP_N ? S->m : S->n;
  if (alpha == 0.0) { /* BLAS: the layout and x are not read */
    gs_fmt_scale_host(outn, beta, y);
    return GS_SUCCESS;
  }
  if (op == GS_OP_T) { /* sellp_apply: the scale pass, then the scatter */
    gs_fmt_scale_host(S->n, beta, y);
    return gs_sell_spmv_host(S, GS_OP_T, alpha, x, 1.0, y);
  }
  const int G = (int)(S->slice_size * S->pad);
  double *part = malloc(2 * (size_t)G * sizeof *part);
  if (!part) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory emulating sellp");
  for (int64_t s = 0; s < S->nslices; ++s) slice_apply(S, s, part, part + G, alpha, x, beta, y);
  free(part);
  return GS_SUCCESS;
}

gs_status_t gs_sellp_host_apply(const gs_csr_t *A, const gs_spmv_cfg_t *cfg, gs_op_t op,
                                double alpha, const double *x, double beta, double *y)
{
  gs_sell_t *S = NULL;
  if (!A || !cfg || (op != GS_OP_N && op != GS_OP_T))
    return GS_ERROR(GS_ERR_INVALID_ARG, "sellp host apply: bad argument");
  const gs_idx_t outn = op == GS_OP_N ? A->m : A->n;
  if ((!x && alpha != 0.0 && A->nnz > 0) || (!y && outn > 0))
    return GS_ERROR(GS_ERR_INVALID_ARG, "sellp host apply: NULL argument");
  GS_CHECK(gs_sellp_build(&S, A, cfg)); /* built whatever alpha is: a refusal reads as prepare's */
  gs_status_t st = gs_sellp_layout_apply_host(S, op, alpha, x, beta, y);
  gs_sell_destroy(&S);
  return st;
}
