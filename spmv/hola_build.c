/* spmv/hola_build.c: HOLA's work split on the host (spmv/hola.h): the automatic non-zeros per
 * thread, Algorithm 2's block row starts, and a sequential emulation of the kernels' row
 * bookkeeping (Algorithm 4 with the empty-row rule) used as the backend's host apply, so that
 * `gpusolve check` and the host suites exercise the same index arithmetic as the GPU. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "spmv/formats.h"
#include "spmv/hola.h"

int gs_hola_npt(int64_t nnz, double mean, int requested)
{
  if (requested == 4 || requested == 8 || requested == 16) return requested;
  /* Measured on the H100 (docs/formats.md): 8 was faster than 4 on the 27-point Laplacian,
   * normal and Pareto rows; 4 keeps very short rows (graphs, mean < 6) from leaving a thread
   * many rows, and wins on small matrices (below HOLA_SMALL_NNZ entries: fewer than about two
   * blocks of 2048 entries per SM), where one block's serial chain is the whole kernel time and
   * halving it beats the extra blocks (wiki-Vote 15.0 against 19.1 us, bcsstk16 11.8 against
   * 12.9, 12 small matrices of 84k-368k entries 0-20% faster, 2 within noise); 16
   * (selectable) lost on every matrix tried. */
  return (mean < 6.0 || nnz < HOLA_SMALL_NNZ) ? 4 : 8;
}

int64_t gs_hola_blocks(int64_t nnz, int npt)
{
  const int64_t npb = (int64_t)npt * HOLA_THREADS;
  return nnz > 0 ? (nnz + npb - 1) / npb : 0;
}

void gs_hola_block_rows_host(const gs_csr_t *A, int npt, gs_idx_t *brs)
{
  const int64_t npb = (int64_t)npt * HOLA_THREADS, nb = gs_hola_blocks(A->nnz, npt);
  for (gs_idx_t i = 0; i < A->m; ++i) {
    const int64_t a = A->row_ptr[i], b = A->row_ptr[i + 1];
    if (a == b) continue;
    for (int64_t blk = (a + npb - 1) / npb; blk <= (b - 1) / npb; ++blk) brs[blk] = i;
  }
  brs[nb] = A->m;
}

/* v rounded to float when fl (precision=float), else v itself. The emulation's float arithmetic:
 * on float operands a double product is exact and a double sum rounds once more finely, so
 * rounding each double result to float gives the float result of the same operation. */
static inline double to_prec(double v, int fl) { return fl ? (double)(float)v : v; }

/* y = beta y (gs_fmt_scale_host), each product rounded to float when fl. */
static void scale_host(gs_idx_t len, double beta, double *y, int fl)
{
  if (fl)
    for (gs_idx_t i = 0; i < len; ++i) y[i] = to_prec(y[i], 1);
  gs_fmt_scale_host(len, beta, y);
  if (fl)
    for (gs_idx_t i = 0; i < len; ++i) y[i] = to_prec(y[i], 1);
}

/* The row (local index, in [lo_r, hi_r]) holding absolute entry pos: the kernels' binary
 * search for warps flagged for empty rows. */
static int row_of_entry(const gs_csr_t *A, gs_idx_t lo, int64_t pos, int lo_r, int hi_r)
{
  while (lo_r < hi_r) {
    const int mid = lo_r + (hi_r - lo_r) / 2;
    if (A->row_ptr[lo + mid + 1] > pos) hi_r = mid;
    else lo_r = mid + 1;
  }
  return lo_r;
}

/* Emulates y = alpha op(A) x + beta y at precision prec; float: alpha, beta, x and y are read
 * as floats and every product, sum and scaling is rounded to float (FR below, to_prec). */
gs_status_t gs_hola_apply_host(const gs_csr_t *A, int npt, gs_precision_t prec, gs_op_t op,
                               double alpha, const double *x, double beta, double *y)
{
  const int T = HOLA_THREADS, fl = prec == GS_PRECISION_FLOAT;
  const int64_t npb = (int64_t)npt * T, nb = gs_hola_blocks(A->nnz, npt);
  const gs_idx_t ylen = op == GS_OP_N ? A->m : A->n;
#define FR(v) to_prec((v), fl)
  alpha = FR(alpha); /* float: the float product's scalars */
  beta = FR(beta);
  if (alpha == 0.0) { /* the BLAS rule: neither A nor x is read */
    scale_host(ylen, beta, y, fl);
    return GS_SUCCESS;
  }
  gs_status_t st = GS_SUCCESS;
  float *valf = NULL; /* mixed, float: the values rounded once; val is then NULL (gs_fmt_val) */
  const gs_val_t *val = prec != GS_PRECISION_DOUBLE ? NULL : A->val;
  gs_idx_t *brs = (gs_idx_t *)malloc(((size_t)nb + 1) * sizeof *brs);
  double *carry = (double *)calloc(2 * (size_t)nb + 1, sizeof *carry);
  gs_idx_t *slot1_row = (gs_idx_t *)malloc(((size_t)nb + 1) * sizeof *slot1_row);
  double *out = (double *)malloc(((size_t)A->m + 1) * sizeof *out); /* nrows <= m per block */
  int start[HOLA_THREADS], lrow[HOLA_THREADS], flag[HOLA_THREADS / 32];
  double left[HOLA_THREADS];
  unsigned bits[HOLA_THREADS];
  if (!brs || !carry || !slot1_row || !out) {
    st = GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory emulating hola");
    goto cleanup;
  }
  if (!val) GS_TRY(gs_fmt_round_values(&valf, A->val, (size_t)A->nnz, "hola values"));
  if (fl) /* float: y as the float vector it stands for (NaN stays NaN: unread when beta = 0) */
    for (gs_idx_t i = 0; i < ylen; ++i) y[i] = FR(y[i]);
  if (op == GS_OP_T || nb == 0) scale_host(ylen, beta, y, fl);
  if (nb == 0) goto cleanup;
  gs_hola_block_rows_host(A, npt, brs);
  for (int64_t b = 0; b < nb; ++b) {
    const int64_t bstart = b * npb, bend = bstart + npb < A->nnz ? bstart + npb : A->nnz;
    const int cnt = (int)(bend - bstart);
    const gs_idx_t first = brs[b], lo = b == 0 ? 0 : first, hx = brs[b + 1];
    const int cut_end = b + 1 < nb && A->row_ptr[hx] < bend;
    const int nrows = (int)(hx - lo) + (cut_end ? 1 : 0);
    const int cut_begin = b > 0 && A->row_ptr[first] < bstart;
    slot1_row[b] = -1;
    if (A->row_ptr[first + 1] >= bend) { /* the long-row path: one row */
      const int before = A->row_ptr[first] < bstart, after = A->row_ptr[first + 1] > bend;
      if (op == GS_OP_T) {
        const double f = FR(alpha * FR(x[first]));
        if (f != 0.0)
          for (int64_t p = bstart; p < bend; ++p)
            y[A->col[p]] = FR(y[A->col[p]] + FR(gs_fmt_val(val, valf, p) * f));
        continue;
      }
      double s = 0.0;
      for (int64_t p = bstart; p < bend; ++p)
        s = FR(s + FR(gs_fmt_val(val, valf, p) * FR(x[A->col[p]])));
      for (int r = 0; r < nrows; ++r)
        if (lo + r != first) y[lo + r] = beta == 0.0 ? 0.0 : FR(beta * y[lo + r]);
      if (!before && !after) {
        y[first] = beta == 0.0 ? FR(alpha * s) : FR(FR(alpha * s) + FR(beta * y[first]));
      } else {
        carry[2 * b + (before ? 0 : 1)] = s;
        if (!before) slot1_row[b] = first;
      }
      continue;
    }
    /* Algorithm 4 */
    for (int t = 0; t < T; ++t) {
      start[t] = nrows;
      bits[t] = 0;
    }
    memset(flag, 0, sizeof flag);
    for (int r = 0; r < nrows; ++r) {
      const int64_t ra = A->row_ptr[lo + r] - bstart, rb = A->row_ptr[lo + r + 1] - bstart;
      if (ra == rb) {
        out[r] = 0.0;
        if (ra > 0 && ra < cnt) flag[(ra - 1) / (32 * npt)] = 1;
        continue;
      }
      const int a0 = ra > 0 ? (int)ra : 0, b0 = rb < cnt ? (int)rb : cnt;
      for (int t = (a0 + npt - 1) / npt; t <= (b0 - 1) / npt; ++t) start[t] = r;
      bits[(b0 - 1) / npt] |= 1u << ((b0 - 1) % npt);
    }
    /* Each thread's entries in order: row ends from the bits (or row_ptr in a flagged warp). */
    for (int t = 0; t < T; ++t) {
      int row = start[t];
      double acc = 0.0;
      for (int i = 0; i < npt; ++i) {
        const int e = t * npt + i;
        if (e >= cnt) break;
        if (op == GS_OP_T) {
          const double f = FR(alpha * FR(x[lo + row]));
          const gs_idx_t c = A->col[bstart + e];
          if (f != 0.0) y[c] = FR(y[c] + FR(gs_fmt_val(val, valf, bstart + e) * f));
        } else {
          acc = FR(acc + FR(gs_fmt_val(val, valf, bstart + e) * FR(x[A->col[bstart + e]])));
        }
        if (bits[t] & (1u << i)) {
          if (op == GS_OP_N) out[row] = acc; /* the plain store of the row's last entry */
          acc = 0.0;
          row = flag[t / 32] ? row_of_entry(A, lo, bstart + e + 1, row + 1, nrows) : row + 1;
        }
      }
      left[t] = acc; /* what continues into the next thread(s), for row `row` */
      lrow[t] = row;
    }
    if (op == GS_OP_T) continue;
    /* Leftovers are added after every row's plain store (the kernel's barrier). */
    for (int t = 0; t < T; ++t)
      if (left[t] != 0.0 && lrow[t] < nrows) out[lrow[t]] = FR(out[lrow[t]] + left[t]);
    for (int r = 0; r < nrows; ++r) {
      if ((r == 0 && cut_begin) || (r == nrows - 1 && cut_end)) continue;
      y[lo + r] = beta == 0.0 ? FR(alpha * out[r]) : FR(FR(alpha * out[r]) + FR(beta * y[lo + r]));
    }
    if (cut_begin) carry[2 * b] = out[0];
    if (cut_end) {
      carry[2 * b + 1] = out[nrows - 1];
      slot1_row[b] = lo + nrows - 1;
    }
  }
  if (op == GS_OP_N)
    for (int64_t b = 0; b < nb; ++b) {
      const gs_idx_t R = slot1_row[b];
      if (R < 0) continue;
      const int64_t be = (A->row_ptr[R + 1] - 1) / npb;
      double s = carry[2 * b + 1];
      for (int64_t k = b + 1; k <= be; ++k) s = FR(s + carry[2 * k]);
      y[R] = beta == 0.0 ? FR(alpha * s) : FR(FR(alpha * s) + FR(beta * y[R]));
    }
#undef FR
cleanup:
  free(valf);
  free(brs);
  free(carry);
  free(slot1_row);
  free(out);
  return st;
}
