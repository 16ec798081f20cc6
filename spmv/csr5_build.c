/* spmv/csr5_build.c: the CSR5 layout (spmv/csr5.h) built on the host, and a sequential emulation
 * of the kernels of spmv/csr5_kernels.cu on it: the backend's host apply (`gpusolve check`,
 * test_formats_host) and the reference the device conversion is compared with, bit for bit, by
 * test_csr5_gpu. The builder is written straight from the definitions in csr5.h (row of a
 * position by binary search, row starts from a bitmap), not from the device algorithm, so that
 * the two implementations check each other. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "spmv/csr5.h"
#include "spmv/formats.h"

#define W_OF(sigma) ((int64_t)CSR5_OMEGA * (sigma))

int gs_csr5_sigma_auto(gs_idx_t m, int64_t nnz)
{
  const int64_t r = m > 0 ? nnz / m : 0;
  if (r <= 4) return 4;
  if (r <= 32) return (int)r;
  if (r <= 256) return 32;
  return 6;
}

int gs_csr5_ybits(int sigma)
{
  int b = 0;
  while (((int64_t)1 << b) < W_OF(sigma)) ++b;
  return b;
}

int gs_csr5_words(int sigma)
{
  return (gs_csr5_ybits(sigma) + CSR5_SEG_BITS + sigma + 31) / 32;
}

void gs_csr5_desc_unpack(const gs_csr5_t *L, int64_t t, int l, int *y_offset, int *seg_offset,
                         uint64_t *flags)
{
  const uint32_t *w = L->tile_desc + (size_t)t * L->words * CSR5_OMEGA + l;
  const int hdr = L->ybits + CSR5_SEG_BITS;
  const uint64_t lo = (uint64_t)w[0] | (L->words > 1 ? (uint64_t)w[CSR5_OMEGA] << 32 : 0);
  const uint64_t hi = L->words > 2 ? w[2 * CSR5_OMEGA] : 0;
  const uint64_t mask = L->sigma == 64 ? ~0ull : (1ull << L->sigma) - 1;
  *y_offset = (int)(lo & ((1ull << L->ybits) - 1));
  *seg_offset = (int)((lo >> L->ybits) & (CSR5_OMEGA - 1));
  *flags = ((lo >> hdr) | (hi << (64 - hdr))) & mask;
}

static void desc_pack(gs_csr5_t *L, int64_t t, int l, uint32_t y_offset, uint32_t seg_offset,
                      uint64_t flags)
{
  uint32_t *w = L->tile_desc + (size_t)t * L->words * CSR5_OMEGA + l;
  const int hdr = L->ybits + CSR5_SEG_BITS; /* 10 .. 16 */
  const uint64_t lo = (uint64_t)y_offset | (uint64_t)seg_offset << L->ybits | flags << hdr;
  w[0] = (uint32_t)lo;
  if (L->words > 1) w[CSR5_OMEGA] = (uint32_t)(lo >> 32);
  if (L->words > 2) w[2 * CSR5_OMEGA] = (uint32_t)(flags >> (64 - hdr));
}

/* The row holding entry p < nnz: the last r with row_ptr[r] <= p (empty rows that start at p
 * come before it). */
static gs_idx_t row_of(const gs_csr_t *A, int64_t p)
{
  gs_idx_t lo = 0, hi = A->m; /* first r in [lo, hi] with row_ptr[r] > p; row_ptr[m] > p */
  while (lo < hi) {
    const gs_idx_t mid = lo + (hi - lo) / 2;
    if (A->row_ptr[mid] > p) hi = mid;
    else lo = mid + 1;
  }
  return lo - 1;
}

void gs_csr5_destroy(gs_csr5_t **L)
{
  if (!L || !*L) return;
  gs_csr5_t *p = *L;
  free(p->tile_ptr);
  free(p->tile_desc);
  free(p->empty_ptr);
  free(p->empty_offset);
  free(p->carry_row);
  free(p->empty_rows);
  free(p->col);
  free(p->val);
  free(p);
  *L = NULL;
}

gs_status_t gs_csr5_build(gs_csr5_t **out, const gs_csr_t *A, int sigma)
{
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "csr5: out is NULL");
  *out = NULL;
  if (!A) return GS_ERROR(GS_ERR_INVALID_ARG, "csr5: A is NULL");
  if (A->nnz > INT32_MAX)
    return GS_ERROR(GS_ERR_UNSUPPORTED,
                    "csr5: %lld entries: the layout keeps 32-bit entry offsets (at most 2^31-1)",
                    (long long)A->nnz);
  if (sigma == 0) sigma = gs_csr5_sigma_auto(A->m, A->nnz);
  if (sigma < 1 || sigma > CSR5_SIGMA_MAX)
    return GS_ERROR(GS_ERR_INVALID_ARG, "csr5: sigma must be 0 (automatic) or 1..%d, not %d",
                    CSR5_SIGMA_MAX, sigma);
  gs_status_t st = GS_SUCCESS;
  unsigned char *start = NULL;
  gs_csr5_t *L = calloc(1, sizeof *L);
  if (!L) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory building csr5");
  const int64_t W = W_OF(sigma);
  L->m = A->m;
  L->n = A->n;
  L->nnz = A->nnz;
  L->sigma = sigma;
  L->ybits = gs_csr5_ybits(sigma);
  L->words = gs_csr5_words(sigma);
  L->ntiles = A->nnz / W;
  L->nnz_full = L->ntiles * W;
  const size_t nt = (size_t)L->ntiles;
  L->tile_ptr = malloc((nt + 1) * sizeof *L->tile_ptr);
  L->tile_desc = calloc(nt * L->words * CSR5_OMEGA + 1, sizeof *L->tile_desc);
  L->empty_ptr = malloc((nt + 1) * sizeof *L->empty_ptr);
  L->carry_row = malloc((nt + 1) * sizeof *L->carry_row);
  L->col = malloc(((size_t)L->nnz_full + 1) * sizeof *L->col);
  L->val = malloc(((size_t)L->nnz_full + 1) * sizeof *L->val);
  start = calloc((size_t)L->nnz_full + 1, 1);
  if (!L->tile_ptr || !L->tile_desc || !L->empty_ptr || !L->carry_row || !L->col || !L->val ||
      !start)
    GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory building csr5 (%lld tiles)",
            (long long)L->ntiles);

  /* Row starts (of non-empty rows) inside the full tiles; empty rows. */
  for (gs_idx_t r = 0; r < A->m; ++r) {
    if (A->row_ptr[r] == A->row_ptr[r + 1]) ++L->n_empty;
    else if (A->row_ptr[r] < L->nnz_full) start[A->row_ptr[r]] = 1;
  }
  L->empty_rows = malloc(((size_t)L->n_empty + 1) * sizeof *L->empty_rows);
  if (!L->empty_rows) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory building csr5");
  for (gs_idx_t r = 0, k = 0; r < A->m; ++r)
    if (A->row_ptr[r] == A->row_ptr[r + 1]) L->empty_rows[k++] = r;

  /* Tiles: descriptors, tile_ptr, carries; the transposed entries. */
  uint32_t segs_dirty = 0;
  for (int64_t t = 0; t < L->ntiles; ++t) {
    const int64_t base = t * W;
    const gs_idx_t R = row_of(A, base), Rlast = row_of(A, base + W - 1);
    uint64_t flags[CSR5_OMEGA];
    unsigned lanes_with_start = 0;
    uint32_t nseg = 0;
    for (int l = 0; l < CSR5_OMEGA; ++l) {
      flags[l] = 0;
      for (int j = 0; j < sigma; ++j) {
        const int64_t e = base + (int64_t)l * sigma + j;
        if (start[e]) flags[l] |= 1ull << j;
        L->col[base + (int64_t)j * CSR5_OMEGA + l] = A->col[e];
        L->val[base + (int64_t)j * CSR5_OMEGA + l] = A->val[e];
      }
      if (flags[l]) lanes_with_start |= 1u << l;
    }
    for (int l = 0; l < CSR5_OMEGA; ++l) {
      int s = 0; /* lanes without a row start after l */
      while (l + 1 + s < CSR5_OMEGA && !(lanes_with_start >> (l + 1 + s) & 1u)) ++s;
      desc_pack(L, t, l, nseg, (uint32_t)s, flags[l]);
      for (uint64_t f = flags[l]; f; f &= f - 1) ++nseg;
    }
    const int cont = !(flags[0] & 1u);
    const int dirty = (int64_t)nseg != (int64_t)Rlast - (R + cont) + 1;
    L->tile_ptr[t] = (uint32_t)R | (dirty ? CSR5_DIRTY : 0u);
    L->carry_row[t] = cont ? R : -1;
    L->empty_ptr[t] = segs_dirty;
    if (dirty) {
      segs_dirty += nseg;
      ++L->n_dirty;
    }
    if (cont) ++L->n_cont;
  }
  L->empty_ptr[nt] = segs_dirty;
  L->empty_offset = malloc(((size_t)segs_dirty + 1) * sizeof *L->empty_offset);
  if (!L->empty_offset) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory building csr5");
  for (int64_t t = 0; t < L->ntiles; ++t) {
    if (!(L->tile_ptr[t] & CSR5_DIRTY)) continue;
    const gs_idx_t R = (gs_idx_t)(L->tile_ptr[t] & CSR5_ROW_MASK);
    uint32_t k = L->empty_ptr[t];
    for (int64_t e = t * W; e < (t + 1) * W; ++e)
      if (start[e]) L->empty_offset[k++] = row_of(A, e) - R;
  }

  /* The incomplete tile. */
  if (L->nnz_full < A->nnz) {
    L->tail_row0 = row_of(A, L->nnz_full);
    L->tail_row1 = row_of(A, A->nnz - 1) + 1;
    L->tile_ptr[nt] = (uint32_t)L->tail_row0;
    L->carry_row[nt] = A->row_ptr[L->tail_row0] < L->nnz_full ? L->tail_row0 : -1;
    if (L->carry_row[nt] >= 0) ++L->n_cont;
  } else {
    L->tail_row0 = L->tail_row1 = A->m;
    L->tile_ptr[nt] = (uint32_t)A->m;
    L->carry_row[nt] = -1;
  }
  *out = L;
  L = NULL;
cleanup:
  free(start);
  gs_csr5_destroy(&L);
  return st;
}

/* ---- host emulation of the kernels -------------------------------------------------------- */

static void tile_out(const gs_csr5_t *L, int64_t t, gs_idx_t R, int cont, int dirty, int k,
                       double s, double alpha, double beta, double *y)
{
  const gs_idx_t row = dirty ? R + L->empty_offset[L->empty_ptr[t] + (uint32_t)k] : R + cont + k;
  y[row] = beta == 0.0 ? alpha * s : alpha * s + beta * y[row];
}

/* csr5_tile_n: one warp on full tile t. */
static void tile_n(const gs_csr5_t *L, int64_t t, double alpha, const double *x, double beta,
                   double *y, double *carry)
{
  const int sigma = L->sigma;
  const int64_t base = t * W_OF(sigma);
  const gs_idx_t R = (gs_idx_t)(L->tile_ptr[t] & CSR5_ROW_MASK);
  const int dirty = (L->tile_ptr[t] & CSR5_DIRTY) != 0;
  int yoff[CSR5_OMEGA], soff[CSR5_OMEGA], seg[CSR5_OMEGA], seen[CSR5_OMEGA], key[CSR5_OMEGA];
  uint64_t flags[CSR5_OMEGA];
  double v[CSR5_OMEGA], old[CSR5_OMEGA], tail[CSR5_OMEGA];
  unsigned fm = 0;
  for (int l = 0; l < CSR5_OMEGA; ++l) {
    gs_csr5_desc_unpack(L, t, l, &yoff[l], &soff[l], &flags[l]);
    if (flags[l]) fm |= 1u << l;
  }
  const int cont = !(flags[0] & 1u);
  for (int l = 0; l < CSR5_OMEGA; ++l) { /* each lane's sequential sums */
    double run = 0.0, head = 0.0;
    seen[l] = 0;
    seg[l] = yoff[l];
    for (int j = 0; j < sigma; ++j) {
      if (flags[l] >> j & 1u) {
        if (seen[l]) tile_out(L, t, R, cont, dirty, seg[l]++, run, alpha, beta, y);
        else head = run;
        seen[l] = 1;
        run = 0.0;
      }
      const int64_t q = base + (int64_t)j * CSR5_OMEGA + l;
      run += L->val[q] * x[L->col[q]];
    }
    if (!seen[l]) head = run;
    tail[l] = run;
    v[l] = head;
    key[l] = __builtin_popcount(fm & ((1u << l) - 1u));
  }
  for (int o = 1; o < CSR5_OMEGA; o <<= 1) { /* the keyed Kogge-Stone scan */
    memcpy(old, v, sizeof v);
    for (int l = o; l < CSR5_OMEGA; ++l)
      if (key[l - o] == key[l]) v[l] = old[l - o] + old[l];
  }
  for (int l = 0; l < CSR5_OMEGA; ++l) {
    if (!seen[l]) continue;
    int src = l + soff[l] + 1;
    if (src > CSR5_OMEGA - 1) src = CSR5_OMEGA - 1;
    const double total = l < CSR5_OMEGA - 1 ? tail[l] + v[src] : tail[l];
    tile_out(L, t, R, cont, dirty, seg[l], total, alpha, beta, y);
  }
  if (cont) carry[t] = v[fm ? __builtin_ctz(fm) : CSR5_OMEGA - 1];
}

/* csr5_tail_n: one warp on row r of the incomplete tile, lanes strided, then the butterfly. */
static void tail_n(const gs_csr5_t *L, const gs_csr_t *A, gs_idx_t r, double alpha,
                   const double *x, double beta, double *y, double *carry)
{
  const int64_t b = A->row_ptr[r], e = A->row_ptr[r + 1];
  if (b == e) return;
  double lane[CSR5_OMEGA], old[CSR5_OMEGA];
  const int64_t s = b > L->nnz_full ? b : L->nnz_full;
  for (int l = 0; l < CSR5_OMEGA; ++l) {
    lane[l] = 0.0;
    for (int64_t k = s + l; k < e; k += CSR5_OMEGA) lane[l] += A->val[k] * x[A->col[k]];
  }
  for (int o = 16; o > 0; o >>= 1) {
    memcpy(old, lane, sizeof lane);
    for (int l = 0; l < CSR5_OMEGA; ++l) lane[l] = old[l] + old[l ^ o];
  }
  if (b < L->nnz_full) carry[L->ntiles] = lane[0];
  else y[r] = beta == 0.0 ? alpha * lane[0] : alpha * lane[0] + beta * y[r];
}

/* csr5_fixup_kernel: the head slot of each run of slots carrying the same row sums the run as a
 * warp does (lane l takes slots s + l, s + l + 32, ...; then the butterfly). */
static void fixup(const gs_csr5_t *L, const double *carry, double alpha, double *y)
{
  const int64_t slots = L->ntiles + 1;
  for (int64_t s = 0; s < slots; ++s) {
    const int32_t R = L->carry_row[s];
    if (R < 0 || (s > 0 && L->carry_row[s - 1] == R)) continue;
    double lane[CSR5_OMEGA] = {0.0}, old[CSR5_OMEGA];
    for (int64_t base = s, done = 0; base < slots && !done; base += CSR5_OMEGA)
      for (int l = 0; l < CSR5_OMEGA; ++l) {
        const int64_t i = base + l;
        if (i < slots && L->carry_row[i] == R) lane[l] += carry[i];
        else done = 1;
      }
    for (int o = 16; o > 0; o >>= 1) {
      memcpy(old, lane, sizeof lane);
      for (int l = 0; l < CSR5_OMEGA; ++l) lane[l] = old[l] + old[l ^ o];
    }
    if (lane[0] != 0.0) y[R] += alpha * lane[0];
  }
}

/* op T: y = beta y, then each entry's product scattered to y[col] (the kernel's atomics). */
static void apply_t(const gs_csr5_t *L, const gs_csr_t *A, double alpha, const double *x,
                    double *y)
{
  const int sigma = L->sigma;
  for (int64_t t = 0; t < L->ntiles; ++t) {
    const int64_t base = t * W_OF(sigma);
    const gs_idx_t R = (gs_idx_t)(L->tile_ptr[t] & CSR5_ROW_MASK);
    const int dirty = (L->tile_ptr[t] & CSR5_DIRTY) != 0;
    int y0, s0;
    uint64_t f0;
    gs_csr5_desc_unpack(L, t, 0, &y0, &s0, &f0);
    const int cont = !(f0 & 1u);
    for (int l = 0; l < CSR5_OMEGA; ++l) {
      int yoff, soff;
      uint64_t flags;
      gs_csr5_desc_unpack(L, t, l, &yoff, &soff, &flags);
      int seg = yoff - 1; /* the segment the lane's first entries belong to; -1: row R */
      double f = 0.0;
      for (int j = 0; j < sigma; ++j) {
        if (j == 0 || (flags >> j & 1u)) {
          if (flags >> j & 1u) ++seg;
          const gs_idx_t row =
              seg < 0 ? R
                      : (dirty ? R + L->empty_offset[L->empty_ptr[t] + (uint32_t)seg]
                               : R + cont + seg);
          f = alpha * x[row];
        }
        const int64_t q = base + (int64_t)j * CSR5_OMEGA + l;
        y[L->col[q]] += L->val[q] * f;
      }
    }
  }
  for (gs_idx_t r = L->tail_row0; r < L->tail_row1; ++r) {
    const int64_t b = A->row_ptr[r], e = A->row_ptr[r + 1];
    const double f = alpha * x[r];
    for (int64_t k = b > L->nnz_full ? b : L->nnz_full; k < e; ++k) y[A->col[k]] += A->val[k] * f;
  }
}

gs_status_t gs_csr5_apply_host(const gs_csr5_t *L, const gs_csr_t *A, gs_op_t op, double alpha,
                               const double *x, double beta, double *y)
{
  if (!L || !A || L->m != A->m || L->n != A->n || L->nnz != A->nnz)
    return GS_ERROR(GS_ERR_INVALID_ARG, "csr5: layout and CSR missing or of different shapes");
  if (op != GS_OP_N && op != GS_OP_T)
    return GS_ERROR(GS_ERR_INVALID_ARG, "csr5: op must be N or T, not %d", (int)op);
  const gs_idx_t out = op == GS_OP_N ? L->m : L->n;
  if (out > 0 && !y) return GS_ERROR(GS_ERR_INVALID_ARG, "csr5: y is NULL");
  if (alpha == 0.0) { /* the BLAS rule: neither A nor x is read */
    gs_fmt_scale_host(out, beta, y);
    return GS_SUCCESS;
  }
  if (L->nnz > 0 && !x) return GS_ERROR(GS_ERR_INVALID_ARG, "csr5: x is NULL");
  if (op == GS_OP_T) {
    gs_fmt_scale_host(out, beta, y);
    apply_t(L, A, alpha, x, y);
    return GS_SUCCESS;
  }
  double *carry = calloc((size_t)L->ntiles + 1, sizeof *carry);
  if (!carry) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory emulating csr5");
  for (int64_t t = 0; t < L->ntiles; ++t) tile_n(L, t, alpha, x, beta, y, carry);
  for (gs_idx_t r = L->tail_row0; r < L->tail_row1; ++r)
    tail_n(L, A, r, alpha, x, beta, y, carry);
  for (gs_idx_t k = 0; k < L->n_empty; ++k) {
    const gs_idx_t r = L->empty_rows[k];
    y[r] = beta == 0.0 ? 0.0 : beta * y[r];
  }
  fixup(L, carry, alpha, y);
  free(carry);
  return GS_SUCCESS;
}
