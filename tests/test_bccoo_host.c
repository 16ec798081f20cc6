/* tests/test_bccoo_host.c: the chunk layout of bcoo and bccoo (spmv/bccoo_build.c) without a
 * GPU: the blobs decoded back to the CSR entries exactly (round trip), every encoding choice
 * checked against the chunk's own entries, chunk and row boundaries, the value table at
 * 255/256/257 distinct values, column jumps at the width limits, empty rows at chunk edges,
 * and the host emulation of the kernels against the CSR product within its rounding bound;
 * every layout of check_all again in mixed precision (values rounded once to float: the table
 * of rounded values, no double chunk, bcoo in floats) within the bound of float values; in
 * float precision the same layout and the emulation in float arithmetic. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spmv/bccoo.h"
#include "tests/testutil.h"

#define BT BCCOO_THREADS

static uint64_t g_state;
static int g_seeded;

static uint64_t *rng(void)
{
  if (!g_seeded) {
    g_state = gs_test_seed() ^ 0xbcc00ull;
    g_seeded = 1;
  }
  return &g_state;
}

static uint64_t bits(double v)
{
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  return u;
}

/* ---- matrices ------------------------------------------------------------------------------ */

typedef struct triples {
  int64_t k, cap;
  int *r, *c;
  double *v;
} triples_t;

static void push(triples_t *T, int r, int c, double v)
{
  if (T->k == T->cap) {
    T->cap = T->cap ? 2 * T->cap : 1024;
    T->r = realloc(T->r, (size_t)T->cap * sizeof *T->r);
    T->c = realloc(T->c, (size_t)T->cap * sizeof *T->c);
    T->v = realloc(T->v, (size_t)T->cap * sizeof *T->v);
    CU_ASSERT_FATAL(T->r && T->c && T->v);
  }
  T->r[T->k] = r;
  T->c[T->k] = c;
  T->v[T->k++] = v;
}

/* CSR of the triples (explicit zeros kept); frees them. */
static gs_csr_t *to_csr(triples_t *T, int m, int n)
{
  gs_coo_t *C = NULL;
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_coo_create(&C, m, n, T->k > 0 ? T->k : 1) == GS_SUCCESS);
  for (int64_t e = 0; e < T->k; ++e)
    CU_ASSERT_FATAL(gs_coo_push(C, T->r[e], T->c[e], T->v[e]) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
  gs_coo_destroy(&C);
  free(T->r);
  free(T->c);
  free(T->v);
  memset(T, 0, sizeof *T);
  return A;
}

static double rnd(void) { return 2.0 * gs_test_uniform(rng()) - 1.0; }

/* ---- checks -------------------------------------------------------------------------------- */

static int in_lut(const gs_bccoo_t *L, double v)
{
  for (int i = 0; i < L->lut_size; ++i)
    if (bits(L->lut[i]) == bits(v)) return 1;
  return 0;
}

static int f32_exact(double v)
{
  if (isnan(v) || (isfinite(v) && fabs(v) > 3.4028234663852886e38)) return 0;
  return bits((double)(float)v) == bits(v);
}

/* Value v of A as the layout must give it back: itself, or rounded to float once (mixed). */
static double stored(double v, int mixed) { return mixed ? (double)(float)v : v; }

/* Every structural promise of bccoo.h: the entries decode back to A in order, bit for bit (in
 * mixed precision, A's values rounded to float); padding decodes to column -1; each chunk's
 * encoding is the narrowest its entries allow (the exact rules of the builder, recomputed here
 * from the decoded entries; mixed: never a double). */
static void check_layout(const gs_bccoo_t *L, const gs_csr_t *A, const gs_bccoo_opts_t *o)
{
  const int K = L->K, BK = BT * K;
  CU_ASSERT_EQUAL_FATAL(L->m, A->m);
  CU_ASSERT_EQUAL(L->n, A->n);
  CU_ASSERT_EQUAL(L->nnz, A->nnz);
  CU_ASSERT_EQUAL(L->padded, L->nchunks * BK);
  CU_ASSERT(L->padded >= A->nnz);
  CU_ASSERT_EQUAL(L->nchunks == 0, A->m == 0);
  CU_ASSERT_EQUAL(L->mixed, o->mixed != 0);
  gs_idx_t r = 0, col[BCCOO_K_MAX], prev_row = 0;
  int64_t p = 0, pads = 0, carries = 0;
  size_t off = 0;
  double val[BCCOO_K_MAX];
  for (int64_t c = 0; c < L->nchunks; ++c) {
    const int enc = (int)(L->chunk[c].pe & 0xff);
    CU_ASSERT_EQUAL((size_t)(L->chunk[c].pe >> 8), off); /* contiguous, in chunk order */
    CU_ASSERT_EQUAL(off % 16, 0);
    off += bccoo_blob_bytes(enc, K);
    gs_idx_t trow[BT], lo = -1, hi = -1;
    int all_lut = 1, all_f32 = 1;
    for (int t = 0; t < BT; ++t) {
      gs_bccoo_decode_thread(L, c, t, &trow[t], col, val);
      CU_ASSERT_FATAL(trow[t] >= 0 && trow[t] < A->m);
      CU_ASSERT_FATAL(trow[t] >= prev_row); /* rows never go back */
      CU_ASSERT(trow[t] - prev_row <= 1); /* empty rows are padded: rows never skip */
      prev_row = trow[t];
      for (int k = 0; k < K; ++k) {
        if (col[k] < 0) {
          ++pads;
          /* a padding value is never read: 0.0, or table entry 0 in a table chunk */
          CU_ASSERT_EQUAL(bits(val[k]), bits(BCCOO_ENC_VAL(enc) == BCCOO_VAL_LUT && L->compressed
                                                 ? L->lut[0] : 0.0));
          continue;
        }
        /* the next CSR entry in order */
        while (r < A->m && A->row_ptr[r + 1] <= p) ++r;
        CU_ASSERT_FATAL(p < A->nnz);
        CU_ASSERT_EQUAL_FATAL(trow[t], r);
        CU_ASSERT_EQUAL_FATAL(col[k], A->col[p]);
        CU_ASSERT_FATAL(bits(val[k]) == bits(stored(A->val[p], o->mixed)));
        if (lo < 0 || col[k] < lo) lo = col[k];
        if (col[k] > hi) hi = col[k];
        if (!in_lut(L, val[k])) all_lut = 0;
        if (!f32_exact(val[k])) all_f32 = 0;
        ++p;
      }
    }
    CU_ASSERT_EQUAL(L->chunk[c].row, trow[0]);
    if (lo < 0) lo = hi = 0;
    if (!L->compressed) {
      CU_ASSERT_EQUAL(BCCOO_ENC_KIND(enc), BCCOO_ENC(BCCOO_ROW_32, BCCOO_COL_32,
                                                     o->mixed ? BCCOO_VAL_F32 : BCCOO_VAL_F64));
      CU_ASSERT_EQUAL(L->chunk[c].col, 0);
    } else {
      CU_ASSERT_EQUAL(L->chunk[c].col, lo);
      CU_ASSERT_EQUAL(BCCOO_ENC_ROW(enc), trow[0] == trow[BT - 1] ? BCCOO_ROW_NONE : BCCOO_ROW_8);
      const int64_t span = (int64_t)hi - lo;
      const int want_col = span < 255 ? BCCOO_COL_8 : span < 65535 ? BCCOO_COL_16 : BCCOO_COL_32;
      CU_ASSERT_EQUAL(BCCOO_ENC_COL(enc), want_col);
      const int want_val = o->lut && all_lut && L->lut_size > 0 ? BCCOO_VAL_LUT
                           : (o->f32 || o->mixed) && all_f32 ? BCCOO_VAL_F32 : BCCOO_VAL_F64;
      if (o->mixed) CU_ASSERT(BCCOO_ENC_VAL(enc) != BCCOO_VAL_F64);
      CU_ASSERT_EQUAL(BCCOO_ENC_VAL(enc), want_val);
    }
    /* sharing bits: the first row began before, the last goes on after */
    if (c > 0) {
      gs_idx_t pr, pc[BCCOO_K_MAX];
      double pv[BCCOO_K_MAX];
      gs_bccoo_decode_thread(L, c - 1, BT - 1, &pr, pc, pv);
      CU_ASSERT_EQUAL(!!(enc & BCCOO_HEAD_SHARED), pr == trow[0]);
    } else {
      CU_ASSERT(!(enc & BCCOO_HEAD_SHARED));
    }
    if (c + 1 < L->nchunks) {
      CU_ASSERT_EQUAL(!!(enc & BCCOO_TAIL_SHARED), L->chunk[c + 1].row == trow[BT - 1]);
    } else {
      CU_ASSERT(!(enc & BCCOO_TAIL_SHARED));
    }
    carries += !!(enc & BCCOO_TAIL_SHARED);
  }
  CU_ASSERT_EQUAL(off, L->blob_bytes);
  CU_ASSERT_EQUAL(p, A->nnz); /* every entry came back */
  CU_ASSERT_EQUAL(pads, L->padded - A->nnz);
  CU_ASSERT_EQUAL(carries, L->carries);
  if (L->nchunks > 0) CU_ASSERT_EQUAL(prev_row, A->m - 1);
  int64_t hist = 0;
  for (int e = 0; e < 64; ++e) hist += L->kind_count[e];
  CU_ASSERT_EQUAL(hist, L->nchunks);
  for (int i = 0; o->mixed && i < L->lut_size; ++i) /* the table holds floats */
    CU_ASSERT(bits(L->lut[i]) == bits((double)(float)L->lut[i]));
}

/* y = alpha*op(L)*x + beta*y on the host emulation against the product's rounding bound (a mixed
 * layout: the bound of values rounded to float, u = 2^-24), for both ops and several
 * (alpha, beta); y starts as NaN when beta == 0. */
static void check_apply(const gs_bccoo_t *L, const gs_csr_t *A, const char *label)
{
  static const double ab[][2] = {{1.0, 0.0}, {-1.0, 1.0}, {2.5, -0.5}, {0.0, 2.0}};
  const size_t len = (size_t)(A->m > A->n ? A->m : A->n) + 1;
  double *x = malloc(len * sizeof *x), *y0 = malloc(len * sizeof *y0), *y = malloc(len * sizeof *y);
  CU_ASSERT_FATAL(x && y0 && y);
  for (size_t i = 0; i < len; ++i) {
    x[i] = rnd();
    y0[i] = rnd();
  }
  for (int op = 0; op < 2; ++op)
    for (size_t k = 0; k < sizeof ab / sizeof ab[0]; ++k) {
      const gs_idx_t out = op ? A->n : A->m;
      for (gs_idx_t i = 0; i < out; ++i) y[i] = ab[k][1] == 0.0 ? NAN : y0[i];
      CU_ASSERT_EQUAL(gs_bccoo_apply_host(L, op ? GS_OP_T : GS_OP_N, ab[k][0], x, ab[k][1], y),
                      GS_SUCCESS);
      if (L->mixed) {
        char lab[128];
        snprintf(lab, sizeof lab, "%s K=%d %s mixed", label, L->K,
                 L->compressed ? "bccoo" : "bcoo");
        CU_ASSERT(gs_test_spmv_ok_u(A, op ? GS_OP_T : GS_OP_N, ab[k][0], x, ab[k][1], y0, y,
                                    GS_PRECISION_MIXED_U, lab));
      } else {
        CU_ASSERT(gs_test_spmv_ok(A, op ? GS_OP_T : GS_OP_N, ab[k][0], x, ab[k][1], y0, y,
                                  "%s K=%d %s", label, L->K, L->compressed ? "bccoo" : "bcoo"));
      }
    }
  free(x);
  free(y0);
  free(y);
}

/* Builds A with the options, checks layout and apply; returns the layout (caller frees). */
static gs_bccoo_t *build_check(const gs_csr_t *A, gs_bccoo_opts_t o, const char *label)
{
  gs_bccoo_t *L = NULL;
  CU_ASSERT_FATAL(gs_bccoo_build(&L, A, &o) == GS_SUCCESS);
  CU_ASSERT_FATAL(L != NULL);
  if (o.k) CU_ASSERT_EQUAL(L->K, o.k);
  check_layout(L, A, &o);
  check_apply(L, A, label);
  return L;
}

static void check_all(const gs_csr_t *A, const char *label)
{
  static const int ks[] = {0, 1, 2, 4, 8};
  for (size_t i = 0; i < sizeof ks / sizeof ks[0]; ++i)
    for (int compressed = 0; compressed < 2; ++compressed)
      for (int mixed = 0; mixed < 2; ++mixed) {
        gs_bccoo_opts_t o = {ks[i], compressed, 1, 1, 0, mixed};
        gs_bccoo_t *L = build_check(A, o, label);
        gs_bccoo_destroy(&L);
        CU_ASSERT_PTR_NULL(L);
      }
}

/* The one encoding (sharing bits aside) of every chunk, or -1 when they differ. */
static int only_kind(const gs_bccoo_t *L)
{
  int kind = -1;
  for (int e = 0; e < 64; ++e)
    if (L->kind_count[e] > 0) {
      if (kind >= 0) return -1;
      kind = e;
    }
  return kind;
}

/* Whether every chunk stores its values as `val`. */
static int every_val(const gs_bccoo_t *L, int val)
{
  for (int e = 0; e < 64; ++e)
    if (L->kind_count[e] > 0 && BCCOO_ENC_VAL(e) != val) return 0;
  return 1;
}

static int chunk_kind(const gs_bccoo_t *L, int64_t c) { return BCCOO_ENC_KIND((int)(L->chunk[c].pe & 0xff)); }

/* ---- tests --------------------------------------------------------------------------------- */

static void test_random(void)
{
  const int shapes[][2] = {{50, 50}, {80, 30}, {30, 90}, {1, 40}, {40, 1}, {700, 700},
                           {1500, 1200}};
  const double dens[] = {0.1, 0.2, 0.15, 0.5, 0.3, 0.01, 0.02};
  const int count = gs_test_quick() ? 5 : (int)(sizeof shapes / sizeof shapes[0]);
  for (int s = 0; s < count; ++s) {
    gs_csr_t *A = gs_test_random_csr(rng(), shapes[s][0], shapes[s][1], dens[s]);
    CU_ASSERT_FATAL(A != NULL);
    char label[64];
    snprintf(label, sizeof label, "random %dx%d", shapes[s][0], shapes[s][1]);
    check_all(A, label);
    gs_csr_destroy(&A);
  }
}

/* K = 1: a chunk is 256 entries. Rows of exactly 256 end at chunk ends; rows of 300 cut
 * chunks inside rows; a row of 5 chunks and a bit spans many. */
static void test_chunk_boundaries(void)
{
  const int lens[][4] = {{256, 256, 256, 256}, {300, 300, 300, 300}, {1, 255, 256, 1},
                         {5 * 256 * 8 + 17, 3, 0, 2}};
  for (size_t s = 0; s < sizeof lens / sizeof lens[0]; ++s) {
    triples_t T = {0};
    int n = 0;
    for (int i = 0; i < 4; ++i) n = lens[s][i] > n ? lens[s][i] : n;
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < lens[s][i]; ++j) push(&T, i, j, rnd());
    gs_csr_t *A = to_csr(&T, 4, n);
    char label[64];
    snprintf(label, sizeof label, "row lengths %d %d %d %d", lens[s][0], lens[s][1], lens[s][2],
             lens[s][3]);
    check_all(A, label);
    gs_bccoo_opts_t o = {1, 1, 1, 1, 0, 0};
    gs_bccoo_t *L = build_check(A, o, label);
    if (s == 0) { /* every chunk one whole row: nothing shared, row offsets not stored */
      CU_ASSERT_EQUAL(L->nchunks, 4);
      CU_ASSERT_EQUAL(L->carries, 0);
      for (int64_t c = 0; c < L->nchunks; ++c)
        CU_ASSERT_EQUAL(BCCOO_ENC_ROW(chunk_kind(L, c)), BCCOO_ROW_NONE);
    }
    if (s == 1) CU_ASSERT(L->carries >= 3); /* boundaries inside rows */
    if (s == 3) { /* the long row: 40 chunks of one row, all shared but the first's head */
      CU_ASSERT(L->carries >= 40);
      int64_t one_row = 0;
      for (int64_t c = 0; c < L->nchunks; ++c)
        one_row += BCCOO_ENC_ROW(chunk_kind(L, c)) == BCCOO_ROW_NONE;
      CU_ASSERT(one_row >= 40);
    }
    gs_bccoo_destroy(&L);
    gs_csr_destroy(&A);
  }
}

/* V distinct values over a matrix whose values are spread so that each chunk sees many; V = 257:
 * the rarest value (once, in the first chunk) misses the table, so exactly that chunk stores
 * other values; fallback f32 for float values and f64 for the rest. */
static void test_lut_distinct_values(void)
{
  const int vs[] = {255, 256, 257};
  for (int floaty = 0; floaty < 2; ++floaty)
    for (size_t i = 0; i < 3; ++i) {
      const int V = vs[i];
      triples_t T = {0};
      const int m = 64, n = 2000;
      /* value j: 1 + j/8 (a float) or 1 + j/3 (not one); the last value only once, first */
      for (int r = 0, e = 0; r < m; ++r)
        for (int j = 0; j < 300; ++j, ++e) {
          int id = (e == 0 && V == 257) ? 256 : e % (V == 257 ? 256 : V);
          const double v = floaty ? 1.0 + id / 8.0 : 1.0 + id / 3.0;
          push(&T, r, (j * 7) % n, v);
        }
      gs_csr_t *A = to_csr(&T, m, n);
      gs_bccoo_opts_t o = {2, 1, 1, 1, 0, 0};
      char label[64];
      snprintf(label, sizeof label, "%d distinct values", V);
      gs_bccoo_t *L = build_check(A, o, label);
      CU_ASSERT_EQUAL(L->lut_size, 256 < V ? 256 : V);
      int64_t non_lut = 0;
      for (int64_t c = 0; c < L->nchunks; ++c)
        if (BCCOO_ENC_VAL(chunk_kind(L, c)) != BCCOO_VAL_LUT) {
          ++non_lut;
          CU_ASSERT_EQUAL(c, 0);
          CU_ASSERT_EQUAL(BCCOO_ENC_VAL(chunk_kind(L, c)), floaty ? BCCOO_VAL_F32 : BCCOO_VAL_F64);
        }
      CU_ASSERT_EQUAL(non_lut, V == 257 ? 1 : 0);
      gs_bccoo_destroy(&L);
      /* the table turned off: floats or doubles everywhere */
      o.lut = 0;
      L = build_check(A, o, label);
      CU_ASSERT(every_val(L, floaty ? BCCOO_VAL_F32 : BCCOO_VAL_F64));
      gs_bccoo_destroy(&L);
      o.f32 = 0;
      L = build_check(A, o, label);
      CU_ASSERT(every_val(L, BCCOO_VAL_F64));
      gs_bccoo_destroy(&L);
      gs_csr_destroy(&A);
    }
}

/* One chunk (K = 1): columns base + 0..254 and one at base + J, the chunk's span J. The
 * all-ones offset marks padding, so 8 bits hold J <= 2^8 - 2 and 16 bits J <= 2^16 - 2: jumps
 * of 2^8 - 1 and 2^16 - 1 take the next width, with padding in the chunk (255 entries) or not
 * (256), in one row or two. */
static void test_column_jumps(void)
{
  static const struct {
    int jump, want;
  } jumps[] = {{254, BCCOO_COL_8},     {255, BCCOO_COL_16},   {256, BCCOO_COL_16},
               {65534, BCCOO_COL_16},  {65535, BCCOO_COL_32}, {65536, BCCOO_COL_32}};
  static const int shapes[][2] = {{256, 1}, {255, 1}, {256, 2}}; /* entries, rows */
  struct {
    int jump, entries, rows, want;
  } cases[18];
  int nc = 0;
  for (int s = 0; s < 3; ++s)
    for (int j = 0; j < 6; ++j, ++nc) {
      cases[nc].jump = jumps[j].jump;
      cases[nc].want = jumps[j].want;
      cases[nc].entries = shapes[s][0];
      cases[nc].rows = shapes[s][1];
    }
  for (int i = 0; i < nc; ++i) {
    triples_t T = {0};
    const int base = 1000; /* columns relative to the chunk's smallest */
    const int per_row = cases[i].entries / cases[i].rows;
    for (int e = 0; e < cases[i].entries; ++e) {
      const int r = e / per_row;
      const int c = e == cases[i].entries - 1 ? base + cases[i].jump : base + e;
      push(&T, r, c, 2.0);
    }
    gs_csr_t *A = to_csr(&T, cases[i].rows, base + cases[i].jump + 1);
    gs_bccoo_opts_t o = {1, 1, 1, 1, 0, 0};
    char label[64];
    snprintf(label, sizeof label, "column jump %d, %d entries", cases[i].jump, cases[i].entries);
    gs_bccoo_t *L = build_check(A, o, label);
    CU_ASSERT_EQUAL_FATAL(L->nchunks, 1);
    const int kind = chunk_kind(L, 0);
    CU_ASSERT_EQUAL(BCCOO_ENC_COL(kind), cases[i].want);
    CU_ASSERT_EQUAL(BCCOO_ENC_ROW(kind), cases[i].rows == 1 ? BCCOO_ROW_NONE : BCCOO_ROW_8);
    CU_ASSERT_EQUAL(BCCOO_ENC_VAL(kind), BCCOO_VAL_LUT);
    CU_ASSERT_EQUAL(L->chunk[0].col, base);
    if (BCCOO_ENC_COL(kind) != cases[i].want)
      fprintf(stderr, "\n  %s: column code %d, want %d\n", label, BCCOO_ENC_COL(kind),
              cases[i].want);
    gs_bccoo_destroy(&L);
    gs_csr_destroy(&A);
  }
}

/* K = 1: row 0 fills threads 0..254, rows 1 and 2 are empty (thread 255 of chunk 0, thread 0 of
 * chunk 1), row 3 has 10 entries, rows 4..5 empty at the very end. */
static void test_empty_rows_at_chunk_edges(void)
{
  triples_t T = {0};
  for (int j = 0; j < 255; ++j) push(&T, 0, j, rnd());
  for (int j = 0; j < 10; ++j) push(&T, 3, 2 * j, rnd());
  gs_csr_t *A = to_csr(&T, 6, 300);
  check_all(A, "empty rows at chunk edges");
  gs_bccoo_opts_t o = {1, 1, 1, 1, 0, 0};
  gs_bccoo_t *L = build_check(A, o, "empty rows at chunk edges");
  CU_ASSERT_EQUAL_FATAL(L->nchunks, 2);
  gs_idx_t r, col[BCCOO_K_MAX];
  double val[BCCOO_K_MAX];
  gs_bccoo_decode_thread(L, 0, BT - 1, &r, col, val);
  CU_ASSERT(r == 1 && col[0] == -1);
  gs_bccoo_decode_thread(L, 1, 0, &r, col, val);
  CU_ASSERT(r == 2 && col[0] == -1);
  CU_ASSERT_EQUAL(L->chunk[1].row, 2);
  CU_ASSERT_EQUAL(L->carries, 0);
  gs_bccoo_destroy(&L);
  gs_csr_destroy(&A);

  /* only empty rows: every row one thread of padding, y = beta*y */
  gs_csr_t *Z = NULL;
  CU_ASSERT_FATAL(gs_csr_create(&Z, 700, 5, 0) == GS_SUCCESS);
  check_all(Z, "700 empty rows");
  gs_csr_destroy(&Z);
}

static void test_all_zero_values_and_tiny(void)
{
  triples_t T = {0};
  for (int i = 0; i < 500; ++i)
    for (int j = 0; j < 7; ++j) push(&T, i, (i + 3 * j) % 500, j == 3 ? -0.0 : 0.0);
  gs_csr_t *A = to_csr(&T, 500, 500);
  check_all(A, "explicit zeros");
  gs_bccoo_opts_t o = {0, 1, 1, 1, 0, 0};
  gs_bccoo_t *L = build_check(A, o, "explicit zeros");
  CU_ASSERT_EQUAL(L->lut_size, 2); /* 0 and -0 are distinct bit patterns */
  gs_bccoo_destroy(&L);
  gs_csr_destroy(&A);

  const double one[] = {3.5};
  A = gs_test_csr_from_dense(1, 1, one);
  check_all(A, "1x1");
  L = build_check(A, o, "1x1");
  CU_ASSERT_EQUAL(L->nchunks, 1);
  gs_bccoo_destroy(&L);
  gs_csr_destroy(&A);
  const int shapes[][2] = {{1, 1}, {0, 3}, {3, 0}, {0, 0}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
    CU_ASSERT_FATAL(gs_csr_create(&A, shapes[s][0], shapes[s][1], 0) == GS_SUCCESS);
    check_all(A, "no entries");
    gs_csr_destroy(&A);
  }
}

/* Padding never reads x: an Inf in x reaches only the rows that use its column. */
static void test_padding_never_reads_x(void)
{
  const double a[] = {1, 2, 0, 0, /**/ 0, 0, 0, 0, /**/ 3, 0, 4, 0}; /* column 3 unused */
  gs_csr_t *A = gs_test_csr_from_dense(3, 4, a);
  for (int compressed = 0; compressed < 2; ++compressed)
    for (int k = 1; k <= 8; k *= 2) {
      gs_bccoo_opts_t o = {k, compressed, 1, 1, 0, 0};
      gs_bccoo_t *L = NULL;
      CU_ASSERT_FATAL(gs_bccoo_build(&L, A, &o) == GS_SUCCESS);
      double x[4] = {1, 1, 1, INFINITY}, y[3] = {NAN, NAN, NAN};
      CU_ASSERT(gs_bccoo_apply_host(L, GS_OP_N, 1.0, x, 0.0, y) == GS_SUCCESS);
      CU_ASSERT(y[0] == 3.0 && y[1] == 0.0 && y[2] == 7.0);
      double xt[3] = {1, INFINITY, 1}, yt[4] = {NAN, NAN, NAN, NAN};
      CU_ASSERT(gs_bccoo_apply_host(L, GS_OP_T, 1.0, xt, 0.0, yt) == GS_SUCCESS);
      CU_ASSERT(yt[0] == 4.0 && yt[1] == 2.0 && yt[2] == 4.0 && yt[3] == 0.0);
      gs_bccoo_destroy(&L);
    }
  gs_csr_destroy(&A);
}

/* The 27-point Laplacian: K automatic (gs_bccoo_choose_k, its picks asserted below), two values, every
 * chunk 8-bit rows, 16-bit columns and table indices; bcoo the uncompressed encoding. */
static void test_laplacian(void)
{
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_gen_laplace(&A, 12, 12, 12, 27) == GS_SUCCESS);
  gs_bccoo_opts_t o = {0, 1, 1, 1, 0, 0};
  gs_bccoo_t *L = build_check(A, o, "laplace 12^3");
  CU_ASSERT_EQUAL(L->K, gs_bccoo_choose_k(A, 1));
  CU_ASSERT_EQUAL(L->lut_size, 2);
  for (int64_t c = 0; c < L->nchunks; ++c)
    CU_ASSERT_EQUAL(BCCOO_ENC_VAL(chunk_kind(L, c)), BCCOO_VAL_LUT);
  gs_bccoo_destroy(&L);
  o.compressed = 0;
  L = build_check(A, o, "laplace 12^3");
  CU_ASSERT_EQUAL(only_kind(L), BCCOO_ENC(BCCOO_ROW_32, BCCOO_COL_32, BCCOO_VAL_F64));
  gs_bccoo_destroy(&L);
  gs_csr_destroy(&A);
  CU_ASSERT_FATAL(gs_gen_laplace(&A, 40, 40, 40, 27) == GS_SUCCESS);
  /* rows of 27 pad to 32 at K = 8, 16 and 32 alike: one thread a row, measured fastest
   * (spmv/bccoo_build.c); 64000 rows leave 250 chunks */
  CU_ASSERT_EQUAL(gs_bccoo_choose_k(A, 1), 32);
  CU_ASSERT_EQUAL(gs_bccoo_choose_k(A, 0), 4); /* bcoo: the byte model */
  gs_csr_destroy(&A);
  /* 20^3 (8000 rows): K = 32 would leave 32 chunks, K = 16 63 (< BCCOO_MIN_CHUNKS): K = 8 */
  CU_ASSERT_FATAL(gs_gen_laplace(&A, 20, 20, 20, 27) == GS_SUCCESS);
  CU_ASSERT_EQUAL(gs_bccoo_choose_k(A, 1), 8);
  gs_csr_destroy(&A);
  /* 24^3 (13824 rows): K = 16 leaves 108 chunks, K = 32 54: K = 16 */
  CU_ASSERT_FATAL(gs_gen_laplace(&A, 24, 24, 24, 27) == GS_SUCCESS);
  CU_ASSERT_EQUAL(gs_bccoo_choose_k(A, 1), 16);
  gs_csr_destroy(&A);
  CU_ASSERT_FATAL(gs_gen_laplace(&A, 200, 200, 1, 5) == GS_SUCCESS);
  CU_ASSERT_EQUAL(gs_bccoo_choose_k(A, 1), 8);
  gs_csr_destroy(&A);
  { /* rows of one and two entries: K = 8 would store mostly padding */
    gs_csr_t *D = NULL;
    CU_ASSERT_FATAL(gs_gen_laplace(&D, 300, 1, 1, 3) == GS_SUCCESS); /* tridiagonal: 2-3 */
    CU_ASSERT(gs_bccoo_choose_k(D, 1) <= 4);
    gs_csr_destroy(&D);
  }
}

/* Threads change nothing: the same blobs bit for bit on 1 and 3 threads, in both precisions. */
static void test_threads_same_layout(void)
{
  gs_csr_t *A = gs_test_random_csr(rng(), 2000, 1800, 0.03);
  CU_ASSERT_FATAL(A != NULL);
  for (int v = 0; v < 4; ++v) {
    const int compressed = v & 1, mixed = v >> 1;
    gs_bccoo_opts_t o1 = {1, compressed, 1, 1, 1, mixed}, o3 = {1, compressed, 1, 1, 3, mixed};
    gs_bccoo_t *L1 = NULL, *L3 = NULL;
    CU_ASSERT_FATAL(gs_bccoo_build(&L1, A, &o1) == GS_SUCCESS);
    CU_ASSERT_FATAL(gs_bccoo_build(&L3, A, &o3) == GS_SUCCESS);
    CU_ASSERT_EQUAL(L3->threads, 3);
    CU_ASSERT_EQUAL_FATAL(L1->blob_bytes, L3->blob_bytes);
    CU_ASSERT_EQUAL_FATAL(L1->nchunks, L3->nchunks);
    CU_ASSERT(memcmp(L1->blob, L3->blob, L1->blob_bytes) == 0);
    CU_ASSERT(memcmp(L1->chunk, L3->chunk, (size_t)L1->nchunks * sizeof *L1->chunk) == 0);
    CU_ASSERT_EQUAL(L1->lut_size, L3->lut_size);
    check_layout(L3, A, &o3);
    gs_bccoo_destroy(&L1);
    gs_bccoo_destroy(&L3);
  }
  gs_csr_destroy(&A);
}

/* More distinct values than a thread's counting table holds (4096), plus a few frequent
 * ones: the frequent values are in the table, and the layout is the same bit for bit on 1, 2,
 * 3 and 7 threads (the per-thread Misra-Gries counts depend on the split; the table must not),
 * in both precisions (mixed: the counts are of rounded values). The first half of the rows uses
 * only the frequent values, so its chunks use the table. */
static void test_threads_same_table_many_values(void)
{
  static const double freq[5] = {4.0, -1.0, 0.5, -0.25, 3.0};
  const int m = 2000, n = 2000;
  triples_t T = {0};
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n; ++c)
      if (gs_test_uniform(rng()) < 0.05) {
        /* second half: mostly distinct values, a frequent one now and then */
        const double u = gs_test_uniform(rng());
        const double v = r < m / 2 || u < 0.1 ? freq[(r + c) % 5] : rnd();
        push(&T, r, c, v);
      }
  gs_csr_t *A = to_csr(&T, m, n);
  CU_ASSERT_FATAL(A->nnz > 150000);
  static const int nts[] = {1, 2, 3, 7};
  for (int mixed = 0; mixed < 2; ++mixed) {
  gs_bccoo_t *L[4] = {NULL};
  for (int i = 0; i < 4; ++i) {
    gs_bccoo_opts_t o = {1, 1, 1, 1, nts[i], mixed};
    CU_ASSERT_FATAL(gs_bccoo_build(&L[i], A, &o) == GS_SUCCESS);
    CU_ASSERT_EQUAL(L[i]->threads, nts[i]);
    CU_ASSERT(L[i]->lut_size >= 5);
    for (int f = 0; f < 5; ++f) CU_ASSERT(in_lut(L[i], freq[f]));
    CU_ASSERT(L[i]->kind_count[BCCOO_ENC(BCCOO_ROW_8, BCCOO_COL_16, BCCOO_VAL_LUT)] > 0);
    check_layout(L[i], A, &o);
  }
  for (int i = 1; i < 4; ++i) {
    CU_ASSERT_EQUAL_FATAL(L[0]->blob_bytes, L[i]->blob_bytes);
    CU_ASSERT_EQUAL_FATAL(L[0]->nchunks, L[i]->nchunks);
    CU_ASSERT_EQUAL_FATAL(L[0]->lut_size, L[i]->lut_size);
    CU_ASSERT(memcmp(L[0]->lut, L[i]->lut, (size_t)L[0]->lut_size * sizeof(double)) == 0);
    CU_ASSERT(memcmp(L[0]->blob, L[i]->blob, L[0]->blob_bytes) == 0);
    CU_ASSERT(memcmp(L[0]->chunk, L[i]->chunk, (size_t)L[0]->nchunks * sizeof *L[0]->chunk) == 0);
  }
  for (int i = 0; i < 4; ++i) gs_bccoo_destroy(&L[i]);
  }
  gs_csr_destroy(&A);
}

/* Blob bytes of the value sections: padded entries times the bytes of their encodings. */
static int64_t value_bytes(const gs_bccoo_t *L)
{
  int64_t b = 0;
  for (int64_t c = 0; c < L->nchunks; ++c)
    b += (int64_t)BT * L->K * bccoo_val_width(chunk_kind(L, c));
  return b;
}

/* precision=mixed (gs_bccoo_opts_t.mixed), beyond the layout checks of check_all:
 *  - values that differ only below float's precision are one value once rounded: 500 distinct
 *    doubles that round to 2 floats give a table of 2 and 1-byte indices in every chunk, where
 *    the double layout stores doubles in some chunks;
 *  - random values: bcoo stores exactly 4 bytes a padded entry less, bccoo no double chunk and
 *    fewer device bytes; the product is within the float bound and outside the double one
 *    (rounding took place); the registry's host apply (flag MIXED) is the emulation of the same
 *    layout bit for bit, ops N and T;
 *  - a finite value beyond FLT_MAX is refused naming its entry, by both backends. */
static void test_mixed(void)
{
  triples_t T = {0};
  const int m = 40, n = 300;
  for (int r = 0, e = 0; r < m; ++r)
    for (int j = 0; j < 50; ++j, ++e)
      push(&T, r, (j * 7 + r) % n, (e % 2 ? 1.0 : -3.0) + (double)(e % 500) * 0x1p-40);
  gs_csr_t *A = to_csr(&T, m, n);
  gs_bccoo_opts_t o = {2, 1, 1, 1, 0, 0};
  gs_bccoo_t *D = build_check(A, o, "500 values, 2 floats"), *M = NULL;
  CU_ASSERT(every_val(D, BCCOO_VAL_F64)); /* no chunk whose 512 values are all in the table */
  CU_ASSERT(D->kind_count[BCCOO_ENC(BCCOO_ROW_8, BCCOO_COL_16, BCCOO_VAL_F64)] > 0);
  o.mixed = 1;
  M = build_check(A, o, "500 values, 2 floats");
  CU_ASSERT_EQUAL(M->lut_size, 2);
  CU_ASSERT(every_val(M, BCCOO_VAL_LUT));
  CU_ASSERT((M->lut[0] == 1.0 && M->lut[1] == -3.0) || (M->lut[0] == -3.0 && M->lut[1] == 1.0));
  CU_ASSERT(value_bytes(M) == (int64_t)M->padded);
  CU_ASSERT(M->blob_bytes < D->blob_bytes);
  gs_bccoo_destroy(&D);
  gs_bccoo_destroy(&M);
  o.lut = 0; /* no table: floats (mixed) where the double layout has doubles */
  M = build_check(A, o, "500 values, 2 floats, no table");
  CU_ASSERT(every_val(M, BCCOO_VAL_F32));
  gs_bccoo_destroy(&M);
  gs_csr_destroy(&A);

  A = gs_test_random_csr(rng(), 300, 200, 0.05); /* random values: few are floats */
  CU_ASSERT_FATAL(A != NULL);
  double x[300], y0[300], yd[300], ym[300], yr[300];
  for (int i = 0; i < 300; ++i) {
    x[i] = rnd();
    y0[i] = rnd();
  }
  for (int compressed = 0; compressed < 2; ++compressed) {
    const char *name = compressed ? "bccoo" : "bcoo";
    const int b = gs_spmv_backend_find(name);
    CU_ASSERT_FATAL(b >= 0);
    CU_ASSERT(gs_spmv_backend_flags(b) & GS_SPMV_FLAG_MIXED);
    gs_bccoo_opts_t od = {0, compressed, compressed, compressed, 0, 0}, om = od;
    om.mixed = 1;
    D = build_check(A, od, "random 300x200");
    M = build_check(A, om, "random 300x200");
    CU_ASSERT_EQUAL_FATAL(M->nchunks, D->nchunks);
    CU_ASSERT(M->kind_count[BCCOO_ENC(BCCOO_ROW_8, BCCOO_COL_8, BCCOO_VAL_F64)] == 0);
    if (compressed) {
      CU_ASSERT(gs_bccoo_device_bytes(M) < gs_bccoo_device_bytes(D));
      CU_ASSERT(value_bytes(M) <= 4 * M->padded);
    } else {
      CU_ASSERT_EQUAL(only_kind(M), BCCOO_ENC(BCCOO_ROW_32, BCCOO_COL_32, BCCOO_VAL_F32));
      CU_ASSERT_EQUAL((int64_t)(D->blob_bytes - M->blob_bytes), 4 * D->padded);
    }
    for (int op = 0; op < 2; ++op) {
      const gs_op_t t = op ? GS_OP_T : GS_OP_N;
      const int len = op ? A->n : A->m;
      const double alpha = op ? -2.0 : 1.5, beta = op ? 0.0 : -0.5;
      for (int i = 0; i < len; ++i) {
        yd[i] = ym[i] = y0[i];
        yr[i] = beta == 0.0 ? NAN : y0[i];
      }
      CU_ASSERT_EQUAL_FATAL(gs_bccoo_apply_host(D, t, alpha, x, beta, yd), GS_SUCCESS);
      CU_ASSERT_EQUAL_FATAL(gs_bccoo_apply_host(M, t, alpha, x, beta, ym), GS_SUCCESS);
      CU_ASSERT(gs_test_spmv_ok_u(A, t, alpha, x, beta, y0, ym, GS_PRECISION_MIXED_U, name));
      CU_ASSERT(gs_test_spmv_compare(A, t, alpha, x, beta, y0, ym).ratio > 1.0);
      CU_ASSERT(gs_test_spmv_compare(A, t, alpha, x, beta, y0, yd).ratio <= 1.0);
      CU_ASSERT_EQUAL_FATAL(gs_spmv_host_apply(name, A, "precision=mixed", t, alpha, x, beta, yr),
                            GS_SUCCESS);
      CU_ASSERT(memcmp(yr, ym, (size_t)len * sizeof *yr) == 0);
    }
    gs_bccoo_destroy(&D);
    gs_bccoo_destroy(&M);
  }
  gs_csr_destroy(&A);

  /* beyond the float range: refused in mixed naming the entry, taken in double */
  const double big[] = {1.0, 0.0, 2.0, 0.0, 3e38, 0.0, 0.0, 0.0, 5e38};
  const double xb[] = {1.0, 1.0, 1.0};
  double yb[3];
  A = gs_test_csr_from_dense(3, 3, big);
  for (int compressed = 0; compressed < 2; ++compressed) {
    const char *name = compressed ? "bccoo" : "bcoo";
    for (int op = 0; op < 2; ++op) {
      CU_ASSERT_EQUAL(gs_spmv_host_apply(name, A, "precision=mixed", op ? GS_OP_T : GS_OP_N, 1.0,
                                         xb, 0.0, yb), GS_ERR_UNSUPPORTED);
      CU_ASSERT(strstr(gs_last_error(), "(3, 3)") != NULL);
      CU_ASSERT(strstr(gs_last_error(), "float range") != NULL);
    }
    CU_ASSERT_EQUAL(gs_spmv_host_apply(name, A, NULL, GS_OP_N, 1.0, xb, 0.0, yb), GS_SUCCESS);
    CU_ASSERT_EQUAL(yb[2], 5e38);
  }
  gs_csr_destroy(&A);
}

/* precision=float (gs_bccoo_opts_t.mixed = 2): the layout of mixed byte for byte (records,
 * blobs, table, encodings), flagged fl, with 4 bytes less a carry and half the table's bytes on
 * the device; the emulation computes in float: on float x and y, every result a float, within
 * the float product's bound (gs_test_spmv_compare_float) and outside the double one (the
 * rounding to float took place); the registry's host apply (flag FLOAT) is that emulation bit
 * for bit, ops N and T, every K of both backends; mixed = 3 is refused. */
static void test_float(void)
{
  gs_csr_t *A = gs_test_random_csr(rng(), 300, 200, 0.05);
  CU_ASSERT_FATAL(A != NULL);
  gs_csr_t *Af = NULL;
  CU_ASSERT_FATAL(gs_csr_copy(&Af, A) == GS_SUCCESS);
  for (gs_off_t p = 0; p < Af->nnz; ++p) Af->val[p] = (double)(float)Af->val[p];
  double x[300], y0[300], y[300], yr[300];
  float xf[300], y0f[300], yf[300];
  for (int i = 0; i < 300; ++i) {
    x[i] = xf[i] = (float)rnd();
    y0[i] = y0f[i] = (float)rnd();
  }
  static const int ks[] = {0, 1, 2, 4, 8, 16, 32};
  for (int compressed = 0; compressed < 2; ++compressed)
    for (size_t ik = 0; ik < sizeof ks / sizeof *ks; ++ik) {
      if (!compressed && ks[ik] > BCOO_K_MAX) break;
      const char *name = compressed ? "bccoo" : "bcoo";
      CU_ASSERT(gs_spmv_backend_flags(gs_spmv_backend_find(name)) & GS_SPMV_FLAG_FLOAT);
      gs_bccoo_opts_t om = {ks[ik], compressed, compressed, compressed, 0, 1}, of = om;
      of.mixed = 2;
      gs_bccoo_t *M = NULL, *F = NULL;
      CU_ASSERT_FATAL(gs_bccoo_build(&M, A, &om) == GS_SUCCESS);
      CU_ASSERT_FATAL(gs_bccoo_build(&F, A, &of) == GS_SUCCESS);
      check_layout(F, A, &of);
      CU_ASSERT(F->fl && F->mixed && !M->fl);
      CU_ASSERT_EQUAL_FATAL(F->nchunks, M->nchunks);
      CU_ASSERT_EQUAL_FATAL(F->blob_bytes, M->blob_bytes);
      CU_ASSERT(memcmp(F->blob, M->blob, F->blob_bytes) == 0);
      CU_ASSERT(memcmp(F->chunk, M->chunk, (size_t)F->nchunks * sizeof *F->chunk) == 0);
      CU_ASSERT(F->lut_size == M->lut_size && memcmp(F->lut, M->lut, sizeof F->lut) == 0);
      CU_ASSERT(memcmp(F->kind_count, M->kind_count, sizeof F->kind_count) == 0);
      CU_ASSERT_EQUAL(gs_bccoo_device_bytes(M) - gs_bccoo_device_bytes(F),
                      (size_t)F->nchunks * 2 * 4 + (F->lut_size > 0 ? BCCOO_LUT_SIZE * 4 : 0));
      char opt[64], label[96];
      snprintf(opt, sizeof opt, "%s.k=%d,precision=float", name, ks[ik]);
      snprintf(label, sizeof label, "%s K=%d float emulation", name, F->K);
      for (int op = 0; op < 2; ++op) {
        const gs_op_t t = op ? GS_OP_T : GS_OP_N;
        const int len = op ? A->n : A->m;
        for (int c = 0; c < 3; ++c) {
          const double alpha = c == 0 ? 1.0 : c == 1 ? -1.5 : 2.5, beta = c == 0 ? 0.0 : -0.5;
          for (int i = 0; i < len; ++i) y[i] = yr[i] = beta == 0.0 ? NAN : y0[i];
          CU_ASSERT_EQUAL_FATAL(gs_bccoo_apply_host(F, t, alpha, x, beta, y), GS_SUCCESS);
          int floats = 1;
          for (int i = 0; i < len; ++i) {
            yf[i] = (float)y[i];
            floats &= (double)yf[i] == y[i];
          }
          CU_ASSERT(floats);
          CU_ASSERT(gs_test_spmv_ok_float(A, t, (float)alpha, xf, (float)beta, y0f, yf, label));
          if (c == 0) CU_ASSERT(gs_test_spmv_compare(Af, t, alpha, x, beta, y0, y).ratio > 1.0);
          CU_ASSERT_EQUAL_FATAL(gs_spmv_host_apply(name, A, opt, t, alpha, x, beta, yr),
                                GS_SUCCESS);
          CU_ASSERT(memcmp(yr, y, (size_t)len * sizeof *y) == 0);
        }
      }
      gs_bccoo_destroy(&M);
      gs_bccoo_destroy(&F);
    }
  gs_bccoo_t *L = NULL;
  gs_bccoo_opts_t o = {1, 1, 1, 1, 0, 3};
  CU_ASSERT_EQUAL(gs_bccoo_build(&L, A, &o), GS_ERR_INVALID_ARG);
  CU_ASSERT(strstr(gs_last_error(), "mixed") != NULL);
  CU_ASSERT_PTR_NULL(L);
  gs_csr_destroy(&Af);
  gs_csr_destroy(&A);
}

static void test_registry_and_arguments(void)
{
  const double a[] = {1, 2, 0, 3, 0, 4};
  gs_csr_t *A = gs_test_csr_from_dense(2, 3, a);
  double x[3] = {1, 1, 1}, y[3] = {NAN, NAN, NAN};
  for (int b = 0; b < 2; ++b) {
    const char *name = b ? "bccoo" : "bcoo";
    const int i = gs_spmv_backend_find(name);
    CU_ASSERT_FATAL(i >= 0);
    CU_ASSERT(gs_spmv_backend_flags(i) & GS_SPMV_FLAG_TRANSPOSE);
    CU_ASSERT(gs_spmv_backend_flags(i) & GS_SPMV_FLAG_HOST_LAYOUT);
    char opt[32];
    snprintf(opt, sizeof opt, "%s.k=8", name);
    CU_ASSERT(gs_spmv_host_apply(name, A, opt, GS_OP_N, 1.0, x, 0.0, y) == GS_SUCCESS);
    CU_ASSERT(y[0] == 3.0 && y[1] == 7.0);
    snprintf(opt, sizeof opt, "%s.k=3", name);
    CU_ASSERT(gs_spmv_host_apply(name, A, opt, GS_OP_N, 1.0, x, 0.0, y) == GS_ERR_INVALID_ARG);
    snprintf(opt, sizeof opt, "%s.k=16", name); /* bccoo takes 16 and 32, bcoo up to 8 */
    CU_ASSERT(gs_spmv_host_apply(name, A, opt, GS_OP_N, 1.0, x, 0.0, y) ==
              (b ? GS_SUCCESS : GS_ERR_INVALID_ARG));
    if (b) CU_ASSERT(y[0] == 3.0 && y[1] == 7.0);
    snprintf(opt, sizeof opt, "%s.k=64", name);
    CU_ASSERT(gs_spmv_host_apply(name, A, opt, GS_OP_N, 1.0, x, 0.0, y) == GS_ERR_INVALID_ARG);
  }
  CU_ASSERT(gs_spmv_host_apply("bccoo", A, "bccoo.lut=0,bccoo.f32=0", GS_OP_T, 2.0, x, 0.0, y) ==
            GS_SUCCESS);
  CU_ASSERT(y[0] == 8.0 && y[1] == 4.0 && y[2] == 8.0);
  CU_ASSERT(gs_spmv_host_apply("bcoo", A, "bcoo.lut=1", GS_OP_N, 1.0, x, 0.0, y) ==
            GS_ERR_INVALID_ARG); /* bcoo has no table */
  gs_bccoo_t *L = NULL;
  gs_bccoo_opts_t o = {3, 1, 1, 1, 0, 0};
  CU_ASSERT_EQUAL(gs_bccoo_build(&L, A, &o), GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NULL(L);
  CU_ASSERT_EQUAL(gs_bccoo_build(&L, NULL, &o), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_bccoo_build(NULL, A, &o), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_bccoo_apply_host(NULL, GS_OP_N, 1.0, x, 0.0, y), GS_ERR_INVALID_ARG);
  gs_bccoo_destroy(&L);
  gs_bccoo_destroy(NULL);
  gs_csr_destroy(&A);
}

int main(void)
{
  CU_TestInfo tests[] = {
      {"random matrices: round trip and apply, every K", test_random},
      {"chunk boundaries inside rows, at row ends, a row over many chunks", test_chunk_boundaries},
      {"255 / 256 / 257 distinct values: the table per chunk", test_lut_distinct_values},
      {"column jumps at the 8/16/32-bit limits", test_column_jumps},
      {"empty rows at chunk starts and ends", test_empty_rows_at_chunk_edges},
      {"all-zero values, 1x1, no entries", test_all_zero_values_and_tiny},
      {"padding never reads x", test_padding_never_reads_x},
      {"27-point Laplacian encodings", test_laplacian},
      {"threads give the same layout", test_threads_same_layout},
      {"threads give the same table with many distinct values", test_threads_same_table_many_values},
      {"registry options and bad arguments", test_registry_and_arguments},
      {"precision=mixed: rounded values in the table, no doubles, registry, float range",
       test_mixed},
      {"precision=float: the mixed layout, float table and carries, float arithmetic",
       test_float},
      CU_TEST_INFO_NULL};
  return gs_test_main("bccoo_host", tests, 0);
}
