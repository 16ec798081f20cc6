/* spmv/pkt_build.c: the pkt backend's host side: the row order (RCM or the given one), the
 * packets (rows a packet, each packet's column window, the threads' lists), the remainder, and
 * a host apply that runs the kernels' arithmetic on the layout (spmv/pkt.h). Pure C, no CUDA.
 *
 * Choices (each measured by one byte model, pkt_cost, the kernels' banner in full):
 *  - the window of a packet: its entries' new columns are counted in buckets of g = W / 8
 *    columns; the coarse window [b g, b g + W) starts at the touched bucket b whose W / g
 *    buckets hold the most entries (the first such b). Inside it, the run of columns with the
 *    most bytes saved: an entry in a packet moves GS_PKT_GAIN = 12 bytes less than in the
 *    remainder, a staged column costs 8 bytes (12 with the permutation), so the run maximises
 *    12 (entries captured) - 8 (columns) (Kadane). The staged part is then narrowed to the
 *    columns the kept rows really use, [col0, col0 + ncols).
 *  - long rows: a row with more than max(2 ceil(E / B), GS_PKT_LONG_MIN) in-window entries (E
 *    the packet's) would make every thread's list that long; it is left to the remainder.
 *  - the threads' lists: rows go to threads in order, a thread taking rows while its list stays
 *    within L entries; L is the least value for which B threads take every row (binary search:
 *    the count of threads the greedy fill needs only falls as L grows).
 *  - R and the order: unless the options fix them, every R of 64, 128, ..., 4096 (up to the
 *    first that holds all rows in one packet) under the given order and, for a square matrix,
 *    under RCM: the one with the fewest modelled bytes among those that give at least
 *    min(GS_PKT_MIN_PACKETS, ceil(m / 64)) packets (ties: the given order, smaller R). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/order.h" /* gs_csr_rcm, gs_csr_permute_sym */
#include "spmv/pkt.h"

void gs_pkt_destroy(gs_pkt_t **P)
{
  if (!P || !*P) return;
  free((*P)->perm);
  free((*P)->slot_ptr);
  free((*P)->col0);
  free((*P)->ncols);
  free((*P)->idx);
  free((*P)->val);
  gs_coo_layout_destroy(&(*P)->rem);
  free(*P);
  *P = NULL;
}

/* Threads a packet: about GS_PKT_ROWS_A_THREAD rows a thread (so that the greedy fill can even
 * out row lengths; one row a thread is ELL's padding), a whole number of warps, at most
 * GS_PKT_BLOCK. */
int gs_pkt_threads(gs_idx_t R)
{
  int64_t b = ((int64_t)R / GS_PKT_ROWS_A_THREAD + 31) / 32 * 32;
  return b < 32 ? 32 : b < GS_PKT_BLOCK ? (int)b : GS_PKT_BLOCK;
}

/* ---- one pass over the packets: count (P == NULL) or fill ------------------------------- */

typedef struct pkt_stats {
  int64_t slots, in_packets, rem, rem_rows, long_moved, window_cols;
  gs_idx_t max_cols;
} pkt_stats_t;

typedef struct pkt_scratch {
  int64_t nb;          /* buckets */
  int32_t *cnt;        /* nb, zero between packets */
  int64_t *touched;    /* nb */
  int32_t *wcnt;       /* W: entries of each column of the coarse window */
  gs_idx_t *len;       /* R: in-window entries of each row of the packet (0: none or long) */
  unsigned char *kept; /* R: 0 for a long row left to the remainder */
} pkt_scratch_t;

static void scratch_free(pkt_scratch_t *s)
{
  free(s->cnt);
  free(s->touched);
  free(s->wcnt);
  free(s->len);
  free(s->kept);
  memset(s, 0, sizeof *s);
}

static gs_status_t scratch_alloc(pkt_scratch_t *s, gs_idx_t n, gs_idx_t W, gs_idx_t R)
{
  const gs_idx_t g = W >= 8 ? W / 8 : 1;
  memset(s, 0, sizeof *s);
  s->nb = (int64_t)n / g + 1;
  s->cnt = calloc((size_t)s->nb, sizeof *s->cnt);
  s->touched = malloc((size_t)s->nb * sizeof *s->touched);
  s->wcnt = calloc((size_t)W + 1, sizeof *s->wcnt);
  s->len = malloc(((size_t)R + 1) * sizeof *s->len);
  s->kept = malloc((size_t)R + 1);
  if (!s->cnt || !s->touched || !s->wcnt || !s->len || !s->kept) {
    scratch_free(s);
    return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory building the pkt layout");
  }
  return GS_SUCCESS;
}

/* Threads the greedy fill needs for rows len[0..rows) at lists of at most L entries. */
static int64_t threads_needed(const gs_idx_t *len, gs_idx_t rows, int64_t L)
{
  int64_t t = 0, c = 0;
  for (gs_idx_t r = 0; r < rows; ++r) {
    if (len[r] == 0) continue;
    if (t == 0 || c + len[r] > L) {
      ++t;
      c = 0;
    }
    c += len[r];
  }
  return t;
}

/* The window of rows [r0, r1) of Ap, [*lo, *hi) (empty: *lo == *hi): first the coarse start
 * (the bucket rule of the banner), then inside [cs, cs + W) the run of columns that maximises
 * GS_PKT_GAIN * (entries captured) - colcost * (columns staged) (Kadane's maximum subarray;
 * the first best run), colcost = the bytes of staging one x entry. */
static void choose_window(const gs_csr_t *Ap, gs_idx_t r0, gs_idx_t r1, gs_idx_t W,
                          double colcost, pkt_scratch_t *s, int64_t *lo, int64_t *hi)
{
  const gs_idx_t g = W >= 8 ? W / 8 : 1, span = W / g;
  int64_t nt = 0;
  for (gs_off_t q = Ap->row_ptr[r0]; q < Ap->row_ptr[r1]; ++q) {
    const int64_t b = Ap->col[q] / g;
    if (s->cnt[b]++ == 0) s->touched[nt++] = b;
  }
  int64_t best_b = 0, best = -1;
  for (int64_t k = 0; k < nt; ++k) {
    const int64_t b = s->touched[k];
    int64_t sum = 0;
    for (int64_t e = b; e < b + span && e < s->nb; ++e) sum += s->cnt[e];
    if (sum > best || (sum == best && b < best_b)) {
      best = sum;
      best_b = b;
    }
  }
  for (int64_t k = 0; k < nt; ++k) s->cnt[s->touched[k]] = 0;
  const int64_t cs = best_b * g, ce = cs + W < (int64_t)Ap->n ? cs + W : Ap->n;
  *lo = *hi = cs;
  if (nt == 0) return;
  for (gs_off_t q = Ap->row_ptr[r0]; q < Ap->row_ptr[r1]; ++q)
    if (Ap->col[q] >= cs && Ap->col[q] < ce) ++s->wcnt[Ap->col[q] - cs];
  double run = 0.0, top = 0.0;
  int64_t run_lo = cs;
  for (int64_t c = cs; c < ce; ++c) {
    if (run <= 0.0) { /* a run that does not pay is dropped: start afresh here */
      run = 0.0;
      run_lo = c;
    }
    run += GS_PKT_GAIN * s->wcnt[c - cs] - colcost;
    if (run > top) {
      top = run;
      *lo = run_lo;
      *hi = c + 1;
    }
    s->wcnt[c - cs] = 0;
  }
}

/* One pass over every packet of Ap (the renumbered matrix) at R rows a packet and window W.
 * P == NULL: statistics only. Else P->slot_ptr, col0, ncols are written, and when P->idx is
 * allocated the slots too, with inpk[q] = 1 for every entry q of Ap stored in a packet. */
static void pkt_pass(const gs_csr_t *Ap, gs_idx_t R, gs_idx_t W, int B, int reordered,
                     pkt_scratch_t *s, gs_pkt_t *P, unsigned char *inpk, pkt_stats_t *st)
{
  memset(st, 0, sizeof *st);
  const gs_idx_t m = Ap->m;
  const int64_t npk = m == 0 ? 0 : ((int64_t)m - 1) / R + 1;
  if (P) P->slot_ptr[0] = 0;
  for (int64_t p = 0; p < npk; ++p) {
    const gs_idx_t r0 = (gs_idx_t)(p * R), r1 = (gs_idx_t)(r0 + R < (int64_t)m ? r0 + R : m);
    const gs_idx_t rows = r1 - r0;
    int64_t cs, ce; /* the window [cs, ce) */
    choose_window(Ap, r0, r1, W, reordered ? 12.0 : 8.0, s, &cs, &ce);
    int64_t E = 0;
    for (gs_idx_t r = r0; r < r1; ++r) {
      gs_idx_t c = 0;
      for (gs_off_t q = Ap->row_ptr[r]; q < Ap->row_ptr[r + 1]; ++q)
        c += Ap->col[q] >= cs && Ap->col[q] < ce;
      s->len[r - r0] = c;
      s->kept[r - r0] = 1;
      E += c;
    }
    /* long rows out; then the window narrowed to what the kept rows capture */
    const int64_t lim0 = 2 * ((E + B - 1) / B);
    const int64_t lim = lim0 > GS_PKT_LONG_MIN ? lim0 : GS_PKT_LONG_MIN;
    int64_t Ek = 0, lo = INT64_MAX, hi = -1, maxlen = 0;
    for (gs_idx_t r = r0; r < r1; ++r) {
      if (s->len[r - r0] > lim) {
        st->long_moved += s->len[r - r0];
        s->len[r - r0] = 0;
        s->kept[r - r0] = 0;
        continue;
      }
      if (s->len[r - r0] == 0) continue;
      Ek += s->len[r - r0];
      if (s->len[r - r0] > maxlen) maxlen = s->len[r - r0];
      for (gs_off_t q = Ap->row_ptr[r]; q < Ap->row_ptr[r + 1]; ++q) {
        const int64_t c = Ap->col[q];
        if (c < cs || c >= ce) continue;
        if (c < lo) lo = c;
        if (c > hi) hi = c;
      }
    }
    int64_t L = 0;
    if (Ek > 0) { /* the least L at which B threads take every row */
      int64_t a = (Ek + B - 1) / B, b = Ek;
      if (a < maxlen) a = maxlen;
      while (a < b) {
        const int64_t mid = a + (b - a) / 2;
        if (threads_needed(s->len, rows, mid) <= B) b = mid;
        else a = mid + 1;
      }
      L = a;
    }
    const gs_idx_t c0 = Ek > 0 ? (gs_idx_t)lo : 0, nc = Ek > 0 ? (gs_idx_t)(hi - lo + 1) : 0;
    st->in_packets += Ek;
    st->slots += L * B;
    st->window_cols += nc;
    if (nc > st->max_cols) st->max_cols = nc;
    const int64_t all = Ap->row_ptr[r1] - Ap->row_ptr[r0];
    st->rem += all - Ek;
    for (gs_idx_t r = r0; r < r1; ++r)
      if ((Ap->row_ptr[r + 1] - Ap->row_ptr[r]) > s->len[r - r0]) ++st->rem_rows;
    if (!P) continue;
    P->slot_ptr[p + 1] = P->slot_ptr[p] + L * B;
    P->col0[p] = c0;
    P->ncols[p] = nc;
    if (!P->idx || L == 0) continue;
    /* the greedy fill at L: thread t's entry j at slot base + j B + t */
    const int64_t base = P->slot_ptr[p];
    int64_t t = -1, c = 0;
    for (gs_idx_t r = r0; r < r1; ++r) {
      if (s->len[r - r0] == 0) continue;
      if (t < 0 || c + s->len[r - r0] > L) {
        ++t;
        c = 0;
      }
      for (gs_off_t q = Ap->row_ptr[r]; q < Ap->row_ptr[r + 1]; ++q) {
        const int64_t col = Ap->col[q];
        if (col < cs || col >= ce) continue;
        const int64_t slot = base + c * B + t;
        P->idx[slot] = ((uint32_t)(r - r0) << 16) | (uint32_t)(col - c0);
        P->val[slot] = Ap->val[q];
        inpk[q] = 1;
        ++c;
      }
    }
  }
}

/* Bytes one op N product moves under the model of the kernels' banner. */
double gs_pkt_cost(int64_t slots, int64_t window_cols, int64_t rem, int64_t rem_rows,
                   gs_idx_t m, int64_t npk, int reordered)
{
  const double ix = reordered ? 4.0 : 0.0; /* the permutation beside each x and y entry */
  return 12.0 * (double)slots + (8.0 + ix) * (double)window_cols + (8.0 + ix) * (double)m +
         20.0 * (double)npk + 24.0 * (double)rem + 16.0 * (double)rem_rows;
}

static double pkt_cost(const pkt_stats_t *st, gs_idx_t m, int64_t npk, int reordered)
{
  return gs_pkt_cost(st->slots, st->window_cols, st->rem, st->rem_rows, m, npk, reordered);
}

/* ---- the build ----------------------------------------------------------------------------- */

/* The remainder in the caller's numbering: entry q of Ap not in a packet, row by original row. */
static gs_status_t build_remainder(const gs_csr_t *Ap, const gs_idx_t *perm, const gs_idx_t *inv,
                                   const unsigned char *inpk, int64_t count,
                                   gs_coo_layout_t **out)
{
  gs_status_t st = GS_SUCCESS;
  unsigned char *seen = NULL;
  gs_coo_layout_t *L = calloc(1, sizeof *L);
  if (!L) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory building the pkt remainder");
  L->m = Ap->m;
  L->n = Ap->n;
  L->nnz = (gs_idx_t)count;
  if (count > 0) {
    L->row = malloc((size_t)count * sizeof *L->row);
    L->col = malloc((size_t)count * sizeof *L->col);
    L->val = malloc((size_t)count * sizeof *L->val);
    seen = calloc((size_t)Ap->n + 1, 1);
    if (!L->row || !L->col || !L->val || !seen)
      GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory building the pkt remainder (%lld entries)",
              (long long)count);
  }
  int64_t k = 0;
  for (gs_idx_t i = 0; i < Ap->m && count > 0; ++i) {
    const gs_idx_t r = inv ? inv[i] : i; /* caller's row i is new row r */
    int touched = 0;
    for (gs_off_t q = Ap->row_ptr[r]; q < Ap->row_ptr[r + 1]; ++q) {
      if (inpk[q]) continue;
      const gs_idx_t j = perm ? perm[Ap->col[q]] : Ap->col[q];
      L->row[k] = i;
      L->col[k] = j;
      L->val[k] = Ap->val[q];
      ++k;
      touched = 1;
      if (!seen[j]) {
        seen[j] = 1;
        ++L->cols_touched;
      }
    }
    L->rows_touched += touched;
  }
  if (k != count) GS_FAIL(GS_ERR_INTERNAL, "pkt: remainder of %lld entries, %lld expected",
                          (long long)k, (long long)count);
  *out = L;
  L = NULL;
cleanup:
  free(seen);
  gs_coo_layout_destroy(&L);
  return st;
}

/* The best R for Ap and its cost, or the given R: the fewest modelled bytes among the
 * candidates that give at least min(GS_PKT_MIN_PACKETS, ceil(m / 64)) packets (one block a
 * packet: fewer would leave most of the device idle, which the byte model cannot see), else
 * (no candidate does) the smallest R. */
int gs_pkt_candidates(gs_idx_t m, gs_idx_t R_fixed, gs_idx_t *Rs)
{
  const gs_idx_t Rlo = R_fixed > 0 ? R_fixed : GS_PKT_ROWS_AUTO_MIN;
  const gs_idx_t Rhi = R_fixed > 0 ? R_fixed : GS_PKT_ROWS_AUTO_MAX;
  int count = 0;
  for (gs_idx_t R = Rlo; R <= Rhi; R *= 2) {
    Rs[count++] = R;
    if (R >= m || R_fixed > 0) break; /* one packet already: larger R changes nothing */
  }
  return count;
}

void gs_pkt_choose(gs_idx_t m, const gs_idx_t *Rs, const double *costs, int count,
                   gs_idx_t *R_out, double *cost_out)
{
  const int64_t want0 = m == 0 ? 0 : ((int64_t)m - 1) / GS_PKT_ROWS_AUTO_MIN + 1;
  const int64_t want = want0 < GS_PKT_MIN_PACKETS ? want0 : GS_PKT_MIN_PACKETS;
  gs_idx_t best_R = Rs[0];
  double best = INFINITY;
  for (int k = 0; k < count; ++k) {
    const int64_t npk = m == 0 ? 0 : ((int64_t)m - 1) / Rs[k] + 1;
    if (npk >= want && costs[k] < best) {
      best = costs[k];
      best_R = Rs[k];
    }
  }
  *R_out = best_R;
  *cost_out = best < INFINITY ? best : costs[0];
}

/* The best R for Ap and its cost, or the given R: the fewest modelled bytes among the
 * candidates that give at least min(GS_PKT_MIN_PACKETS, ceil(m / 64)) packets (one block a
 * packet: fewer would leave most of the device idle, which the byte model cannot see), else
 * (no candidate does) the smallest R. */
static gs_status_t pick_rows(const gs_csr_t *Ap, gs_idx_t R_fixed, gs_idx_t W, int reordered,
                             gs_idx_t *R_out, double *cost_out)
{
  pkt_scratch_t s;
  pkt_stats_t ps;
  const gs_idx_t m = Ap->m;
  gs_idx_t Rs[GS_PKT_MAX_CANDIDATES];
  double costs[GS_PKT_MAX_CANDIDATES];
  const int count = gs_pkt_candidates(m, R_fixed, Rs);
  GS_CHECK(scratch_alloc(&s, Ap->n, W, Rs[count - 1]));
  for (int k = 0; k < count; ++k) {
    const gs_idx_t R = Rs[k];
    pkt_pass(Ap, R, W, gs_pkt_threads(R), reordered, &s, NULL, NULL, &ps);
    const int64_t npk = m == 0 ? 0 : ((int64_t)m - 1) / R + 1;
    costs[k] = pkt_cost(&ps, m, npk, reordered);
  }
  scratch_free(&s);
  gs_pkt_choose(m, Rs, costs, count, R_out, cost_out);
  return GS_SUCCESS;
}

gs_status_t gs_pkt_plan(gs_idx_t m, gs_idx_t n, int64_t nnz, const gs_spmv_cfg_t *cfg,
                        gs_pkt_plan_t *pl)
{
  if (nnz > INT32_MAX)
    return GS_ERROR(GS_ERR_UNSUPPORTED, "pkt: %lld entries, more than 2^31-1 (32-bit positions "
                    "of the remainder)", (long long)nnz);
  const double w = cfg->v[PKT_OPT_WINDOW], rows = cfg->v[PKT_OPT_ROWS];
  const double packets = cfg->v[PKT_OPT_PACKETS], reorder = cfg->v[PKT_OPT_REORDER];
  if (w < 0 || w > GS_PKT_WINDOW_MAX || w != floor(w) || rows < 0 || rows > GS_PKT_ROWS_MAX ||
      rows != floor(rows) || packets < 0 || packets != floor(packets) || packets > INT32_MAX ||
      (reorder != 0 && reorder != 1 && reorder != 2))
    return GS_ERROR(GS_ERR_INVALID_ARG,
                    "pkt: window must be 0 or 1-%d, rows 0 or 1-%d, packets an integer >= 0, "
                    "reorder 0 (auto), 1 (rcm) or 2 (none) (window = %g, rows = %g, packets = "
                    "%g, reorder = %g)",
                    GS_PKT_WINDOW_MAX, GS_PKT_ROWS_MAX, w, rows, packets, reorder);
  if (rows != 0 && packets != 0)
    return GS_ERROR(GS_ERR_INVALID_ARG, "pkt: give rows (%g) or packets (%g), not both", rows,
                    packets);
  const int square = m == n;
  if (reorder == GS_PKT_REORDER_RCM && !square)
    return GS_ERROR(GS_ERR_DIMENSION,
                    "pkt: reorder=1 (RCM) needs a square matrix, this one is %d x %d (reorder=0 "
                    "or 2 keeps its order)", (int)m, (int)n);
  pl->W = w != 0 ? (gs_idx_t)w : GS_PKT_WINDOW_AUTO;
  pl->R_fixed = (gs_idx_t)rows;
  if (packets != 0) { /* ceil(m / packets), one row a packet when more packets than rows */
    int64_t r = m == 0 ? 1 : ((int64_t)m + (int64_t)packets - 1) / (int64_t)packets;
    if (r > GS_PKT_ROWS_MAX)
      return GS_ERROR(GS_ERR_INVALID_ARG, "pkt: %g packets of %d rows are %lld rows a packet, "
                      "more than %d", packets, (int)m, (long long)r, GS_PKT_ROWS_MAX);
    pl->R_fixed = (gs_idx_t)r;
  }
  pl->try_given = reorder != GS_PKT_REORDER_RCM;
  pl->try_rcm = square && m > 1 && reorder != GS_PKT_REORDER_NONE;
  return GS_SUCCESS;
}

gs_status_t gs_pkt_build(gs_pkt_t **out, const gs_csr_t *A, const gs_spmv_cfg_t *cfg)
{
  gs_status_t st = GS_SUCCESS;
  gs_pkt_t *P = NULL;
  gs_idx_t *rcm = NULL, *inv = NULL;
  gs_csr_t *Ar = NULL;
  unsigned char *inpk = NULL;
  pkt_scratch_t s;
  memset(&s, 0, sizeof s);
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_pkt_build: out is NULL");
  *out = NULL;
  if (!A || !cfg) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_pkt_build: NULL argument");
  if (A->m < 0 || A->n < 0 || A->nnz < 0)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_pkt_build: negative size");
  gs_pkt_plan_t pl;
  GS_CHECK(gs_pkt_plan(A->m, A->n, A->nnz, cfg, &pl));
  const gs_idx_t W = pl.W, R_fixed = pl.R_fixed;

  /* the order: the given one, RCM, or the one the model prefers */
  gs_idx_t R0 = 0, R1 = 0;
  double c0 = INFINITY, c1 = INFINITY;
  const int try_given = pl.try_given, try_rcm = pl.try_rcm;
  if (try_given) GS_TRY(pick_rows(A, R_fixed, W, 0, &R0, &c0));
  if (try_rcm) {
    rcm = malloc((size_t)A->m * sizeof *rcm);
    if (!rcm) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory ordering rows for pkt");
    GS_TRY(gs_csr_rcm(A, rcm));
    GS_TRY(gs_csr_permute_sym(A, rcm, &Ar));
    GS_TRY(pick_rows(Ar, R_fixed, W, 1, &R1, &c1));
  }
  const int use_rcm = try_rcm && (!try_given || c1 < c0);
  const gs_csr_t *Ap = use_rcm ? Ar : A;
  const gs_idx_t R = use_rcm ? R1 : (try_given ? R0 : (R_fixed > 0 ? R_fixed : 64));

  P = calloc(1, sizeof *P);
  if (!P) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory building the pkt layout");
  P->m = A->m;
  P->n = A->n;
  P->nnz = A->nnz;
  P->R = R;
  P->W = W;
  P->B = gs_pkt_threads(R);
  P->npackets = A->m == 0 ? 0 : (gs_idx_t)(((int64_t)A->m - 1) / R + 1);
  P->reordered = use_rcm;
  if (use_rcm) {
    P->perm = rcm;
    rcm = NULL;
    inv = malloc((size_t)A->m * sizeof *inv);
    if (!inv) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory building the pkt layout");
    for (gs_idx_t k = 0; k < A->m; ++k) inv[P->perm[k]] = k;
  }
  P->slot_ptr = malloc(((size_t)P->npackets + 1) * sizeof *P->slot_ptr);
  P->col0 = malloc(((size_t)P->npackets + 1) * sizeof *P->col0);
  P->ncols = malloc(((size_t)P->npackets + 1) * sizeof *P->ncols);
  inpk = calloc((size_t)A->nnz + 1, 1);
  if (!P->slot_ptr || !P->col0 || !P->ncols || !inpk)
    GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory building the pkt layout");
  GS_TRY(scratch_alloc(&s, A->n, W, R));
  pkt_stats_t ps;
  pkt_pass(Ap, R, W, P->B, use_rcm, &s, P, inpk, &ps); /* the packets' shapes and the slot count */
  P->slots = ps.slots;
  if (ps.slots > 0) {
    P->idx = malloc((size_t)ps.slots * sizeof *P->idx);
    P->val = malloc((size_t)ps.slots * sizeof *P->val);
    if (!P->idx || !P->val)
      GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory building the pkt layout (%lld slots)",
              (long long)ps.slots);
    for (int64_t q = 0; q < ps.slots; ++q) {
      P->idx[q] = GS_PKT_PAD;
      P->val[q] = 0.0;
    }
    pkt_pass(Ap, R, W, P->B, use_rcm, &s, P, inpk, &ps); /* the same decisions, now filled */
  }
  P->in_packets = ps.in_packets;
  P->long_moved = ps.long_moved;
  P->window_cols = ps.window_cols;
  P->max_cols = ps.max_cols;
  GS_TRY(build_remainder(Ap, P->perm, inv, inpk, ps.rem, &P->rem));
  *out = P;
  P = NULL;
cleanup:
  scratch_free(&s);
  free(rcm);
  free(inv);
  free(inpk);
  gs_csr_destroy(&Ar);
  gs_pkt_destroy(&P);
  return st;
}

void gs_pkt_bytes(const gs_pkt_t *P, size_t *bytes_n, size_t *bytes_t)
{
  const size_t ix = P->perm ? 4 : 0, np = (size_t)P->npackets;
  const size_t meta = 8 * (np + 1) + 8 * np;           /* slot_ptr, col0 + ncols */
  const size_t slots = 12 * (size_t)P->slots;          /* idx + value */
  const size_t xw = (8 + ix) * (size_t)P->window_cols; /* the staged windows */
  const size_t rows = (8 + ix) * (size_t)P->m;         /* y (op N) or x (op T) by row */
  const gs_coo_layout_t *Rm = P->rem;
  const size_t rem = 16 * (size_t)Rm->nnz;
  /* op N: packets write y once; the remainder (coo's model) gathers x once and updates the
   * rows it touches. op T: the scale pass writes y, each window adds atomically to its columns,
   * the remainder reads x by row and adds once per column it touches. */
  *bytes_n = meta + slots + xw + rows + rem + (Rm->nnz ? 8 * (size_t)P->n : 0) +
             16 * (size_t)Rm->rows_touched;
  *bytes_t = meta + slots + rows + 8 * (size_t)P->n + (16 + ix) * (size_t)P->window_cols + rem +
             (Rm->nnz ? 8 * (size_t)P->m : 0) + 16 * (size_t)Rm->cols_touched;
}

/* ---- the host emulation of the kernels ------------------------------------------------------ */

gs_status_t gs_pkt_layout_apply_host(const gs_pkt_t *P, gs_op_t op, double alpha,
                                     const double *x, double beta, double *y)
{
  if (!P || (op != GS_OP_N && op != GS_OP_T))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_pkt_layout_apply_host: bad argument");
  const gs_idx_t outn = op == GS_OP_N ? P->m : P->n;
  if (alpha == 0.0) { /* BLAS: the layout and x are not read */
    gs_fmt_scale_host(outn, beta, y);
    return GS_SUCCESS;
  }
  const int B = P->B;
  double *sx = malloc(((size_t)P->max_cols + (size_t)P->R + 1) * sizeof *sx);
  if (!sx) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory emulating pkt");
  double *sy = sx + P->max_cols;
  if (op == GS_OP_T) gs_fmt_scale_host(P->n, beta, y);
  for (gs_idx_t p = 0; p < P->npackets; ++p) {
    const int64_t row0 = (int64_t)p * P->R;
    const gs_idx_t nr = (gs_idx_t)(row0 + P->R <= P->m ? P->R : P->m - row0);
    const gs_idx_t c0 = P->col0[p], nc = P->ncols[p];
    const int64_t base = P->slot_ptr[p], L = (P->slot_ptr[p + 1] - base) / B;
    if (op == GS_OP_N) { /* pkt_spmv_kernel */
      for (gs_idx_t k = 0; k < nc; ++k) sx[k] = x[P->perm ? P->perm[c0 + k] : c0 + k];
      for (gs_idx_t r = 0; r < nr; ++r) sy[r] = 0.0;
      for (int t = 0; t < B; ++t) {
        int cur = -1;
        double sum = 0.0;
        for (int64_t j = 0; j < L; ++j) {
          const uint32_t w = P->idx[base + j * B + t];
          if (w == GS_PKT_PAD) break;
          const int lr = (int)(w >> 16), lc = (int)(w & 0xffffu);
          if (lr != cur) {
            if (cur >= 0) sy[cur] = sum;
            cur = lr;
            sum = 0.0;
          }
          sum = fma(P->val[base + j * B + t], sx[lc], sum);
        }
        if (cur >= 0) sy[cur] = sum;
      }
      for (gs_idx_t r = 0; r < nr; ++r) {
        const int64_t i = P->perm ? P->perm[row0 + r] : row0 + r;
        y[i] = beta == 0.0 ? alpha * sy[r] : alpha * sy[r] + beta * y[i];
      }
    } else { /* pkt_spmv_t_kernel: sy holds x by row, sx the column sums */
      if (L == 0) continue; /* nothing stored: x not read (it may be NULL when nnz = 0) */
      for (gs_idx_t r = 0; r < nr; ++r) sy[r] = x[P->perm ? P->perm[row0 + r] : row0 + r];
      for (gs_idx_t k = 0; k < nc; ++k) sx[k] = 0.0;
      for (int t = 0; t < B; ++t)
        for (int64_t j = 0; j < L; ++j) {
          const uint32_t w = P->idx[base + j * B + t];
          if (w == GS_PKT_PAD) break;
          sx[w & 0xffffu] += P->val[base + j * B + t] * sy[w >> 16];
        }
      for (gs_idx_t k = 0; k < nc; ++k) y[P->perm ? P->perm[c0 + k] : c0 + k] += alpha * sx[k];
    }
  }
  free(sx);
  if (op == GS_OP_T) {
    gs_coo_layout_accumulate_t_host(P->rem, alpha, x, y);
    return GS_SUCCESS;
  }
  return gs_coo_layout_accumulate_host(P->rem, GS_COO_HOST_WARPS, alpha, x, y);
}

gs_status_t gs_pkt_host_apply(const gs_csr_t *A, const gs_spmv_cfg_t *cfg, gs_op_t op,
                              double alpha, const double *x, double beta, double *y)
{
  gs_pkt_t *P = NULL;
  if (!A || !cfg || (op != GS_OP_N && op != GS_OP_T))
    return GS_ERROR(GS_ERR_INVALID_ARG, "pkt host apply: bad argument");
  const gs_idx_t outn = op == GS_OP_N ? A->m : A->n;
  if ((!x && alpha != 0.0 && A->nnz > 0) || (!y && outn > 0))
    return GS_ERROR(GS_ERR_INVALID_ARG, "pkt host apply: NULL argument");
  GS_CHECK(gs_pkt_build(&P, A, cfg)); /* built whatever alpha is: a refusal reads as prepare's */
  gs_status_t st = gs_pkt_layout_apply_host(P, op, alpha, x, beta, y);
  gs_pkt_destroy(&P);
  return st;
}
