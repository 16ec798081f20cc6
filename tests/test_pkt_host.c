/* tests/test_pkt_host.c: the packet layout of the pkt backend (spmv/pkt_build.c) and the host
 * emulation of its kernels, against the CSR product within its rounding bound, without a GPU:
 * the layout's invariants (every entry exactly once, in a packet or in the remainder; local
 * indices inside the packet and its window; the threads' lists), one packet, more packets asked
 * for than rows, a window of one column, empty rows, one long row, rectangular matrices (kept in
 * order; RCM refused), the RCM order, random matrices from the run's seed (GS_TEST_SEED), and
 * the registry's host apply with its options. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "multigpu/partition.h" /* gs_csr_permute_sym: a shuffled Laplacian */
#include "spmv/pkt.h"
#include "tests/testutil.h"

static gs_spmv_cfg_t cfg_of(double window, double rows, double packets, double reorder)
{
  gs_spmv_cfg_t cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.v[PKT_OPT_WINDOW] = window;
  cfg.v[PKT_OPT_ROWS] = rows;
  cfg.v[PKT_OPT_PACKETS] = packets;
  cfg.v[PKT_OPT_REORDER] = reorder;
  return cfg;
}

/* Every structural promise of pkt.h, checked against the CSR it came from: each entry (i, j, v)
 * of A is found exactly once, either in a packet (at new row perm^-1(i), new column perm^-1(j)
 * inside the packet's rows and window) or in the remainder (caller's numbering, rows sorted). */
static void check_layout(const gs_pkt_t *P, const gs_csr_t *A)
{
  CU_ASSERT_EQUAL_FATAL(P->m, A->m);
  CU_ASSERT_EQUAL_FATAL(P->n, A->n);
  CU_ASSERT_EQUAL(P->nnz, A->nnz);
  CU_ASSERT_FATAL(P->R >= 1 && P->R <= GS_PKT_ROWS_MAX);
  CU_ASSERT_FATAL(P->W >= 1 && P->W <= GS_PKT_WINDOW_MAX);
  CU_ASSERT_FATAL(P->B >= 32 && P->B <= GS_PKT_BLOCK && P->B % 32 == 0);
  CU_ASSERT_EQUAL_FATAL(P->npackets, A->m == 0 ? 0 : (A->m - 1) / P->R + 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(P->rem);
  CU_ASSERT_EQUAL(P->rem->m, A->m);
  CU_ASSERT_EQUAL(P->rem->n, A->n);
  if (P->perm) CU_ASSERT_FATAL(A->m == A->n);
  CU_ASSERT_EQUAL(P->reordered, P->perm != NULL);

  /* the permutation is a bijection; inv its inverse */
  const gs_idx_t mx = A->m > A->n ? A->m : A->n;
  gs_idx_t *inv = malloc(((size_t)mx + 1) * sizeof *inv);
  char *seen = calloc((size_t)mx + 1, 1);
  CU_ASSERT_FATAL(inv && seen);
  for (gs_idx_t k = 0; k < mx; ++k) inv[k] = k;
  if (P->perm) {
    for (gs_idx_t k = 0; k < A->m; ++k) {
      CU_ASSERT_FATAL(P->perm[k] >= 0 && P->perm[k] < A->m && !seen[P->perm[k]]);
      seen[P->perm[k]] = 1;
      inv[P->perm[k]] = k;
    }
  }
  /* found[q]: how often entry q of A was met (in a packet or in the remainder) */
  int *found = calloc((size_t)A->nnz + 1, sizeof *found);
  CU_ASSERT_FATAL(found != NULL);

  CU_ASSERT_EQUAL_FATAL(P->slot_ptr[0], 0);
  int64_t in = 0, cols = 0;
  gs_idx_t widest = 0;
  for (gs_idx_t p = 0; p < P->npackets; ++p) {
    const int64_t row0 = (int64_t)p * P->R;
    const int64_t nr = row0 + P->R <= A->m ? P->R : A->m - row0;
    const int64_t span = P->slot_ptr[p + 1] - P->slot_ptr[p];
    CU_ASSERT_FATAL(span >= 0 && span % P->B == 0);
    const int64_t L = span / P->B;
    CU_ASSERT_FATAL(P->ncols[p] >= 0 && P->ncols[p] <= P->W);
    CU_ASSERT_FATAL(P->col0[p] >= 0 && (int64_t)P->col0[p] + P->ncols[p] <= A->n);
    if (P->ncols[p] > widest) widest = P->ncols[p];
    cols += P->ncols[p];
    int lastrow_prev = -1; /* rows ascend from thread to thread (whole rows a thread) */
    int64_t used_min_col = INT64_MAX, used_max_col = -1;
    for (int t = 0; t < P->B; ++t) {
      int ended = 0, first = -1, prev = -1;
      for (int64_t j = 0; j < L; ++j) {
        const int64_t q = P->slot_ptr[p] + j * P->B + t;
        const uint32_t w = P->idx[q];
        if (w == GS_PKT_PAD) {
          CU_ASSERT_EQUAL(P->val[q], 0.0);
          ended = 1;
          continue;
        }
        CU_ASSERT_FATAL(!ended); /* a list ends once: no entry after its padding */
        const int lr = (int)(w >> 16), lc = (int)(w & 0xffffu);
        CU_ASSERT_FATAL(lr < nr && lc < P->ncols[p]);
        CU_ASSERT_FATAL(lr >= prev); /* a thread's rows in order, each in one run */
        if (first < 0) first = lr;
        prev = lr;
        const gs_idx_t row = (gs_idx_t)(row0 + lr), col = P->col0[p] + lc;
        if (col < used_min_col) used_min_col = col;
        if (col > used_max_col) used_max_col = col;
        const gs_idx_t i = P->perm ? P->perm[row] : row, jj = P->perm ? P->perm[col] : col;
        /* the entry (i, jj) of A with this value, not yet found */
        int hit = 0;
        for (gs_off_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k)
          if (A->col[k] == jj && A->val[k] == P->val[q] && found[k] == 0) {
            found[k] = 1;
            hit = 1;
            break;
          }
        CU_ASSERT_FATAL(hit);
        ++in;
      }
      if (first >= 0) {
        CU_ASSERT_FATAL(first > lastrow_prev); /* no row shared by two threads */
        lastrow_prev = prev;
      }
    }
    if (used_max_col >= 0) { /* the window is exactly what the packet uses */
      CU_ASSERT_EQUAL(used_min_col, P->col0[p]);
      CU_ASSERT_EQUAL(used_max_col, (int64_t)P->col0[p] + P->ncols[p] - 1);
    } else {
      CU_ASSERT_EQUAL(P->ncols[p], 0);
      CU_ASSERT_EQUAL(L, 0);
    }
  }
  CU_ASSERT_EQUAL(P->slots, P->slot_ptr[P->npackets]);
  CU_ASSERT_EQUAL(P->in_packets, in);
  CU_ASSERT_EQUAL(P->window_cols, cols);
  CU_ASSERT_EQUAL(P->max_cols, widest);

  /* the remainder: rows non-decreasing (coo's segment rule), every entry of A not in a packet */
  const gs_coo_layout_t *R = P->rem;
  CU_ASSERT_EQUAL(R->nnz, A->nnz - in);
  CU_ASSERT(P->long_moved >= 0 && P->long_moved <= R->nnz);
  gs_idx_t rows_touched = 0, cols_touched = 0;
  memset(seen, 0, (size_t)mx + 1);
  for (gs_idx_t k = 0; k < R->nnz; ++k) {
    CU_ASSERT_FATAL(R->row[k] >= 0 && R->row[k] < A->m && R->col[k] >= 0 && R->col[k] < A->n);
    if (k > 0) CU_ASSERT_FATAL(R->row[k] >= R->row[k - 1]);
    if (k == 0 || R->row[k] != R->row[k - 1]) ++rows_touched;
    if (!seen[R->col[k]]) {
      seen[R->col[k]] = 1;
      ++cols_touched;
    }
    int hit = 0;
    for (gs_off_t q = A->row_ptr[R->row[k]]; q < A->row_ptr[R->row[k] + 1]; ++q)
      if (A->col[q] == R->col[k] && A->val[q] == R->val[k] && found[q] == 0) {
        found[q] = 1;
        hit = 1;
        break;
      }
    CU_ASSERT_FATAL(hit);
  }
  CU_ASSERT_EQUAL(R->rows_touched, rows_touched);
  CU_ASSERT_EQUAL(R->cols_touched, cols_touched);
  for (gs_off_t q = 0; q < A->nnz; ++q) CU_ASSERT_FATAL(found[q] == 1); /* each exactly once */
  free(found);
  free(inv);
  free(seen);
}

/* y = alpha*op(A)*x + beta*y through the kernel emulation, on random x and y, against the
 * product's rounding bound (gs_test_spmv_ok); with beta == 0, y starts as NaN. */
static void check_apply(const gs_pkt_t *P, const gs_csr_t *A, gs_op_t op, double alpha,
                        double beta, uint64_t *rng, const char *what)
{
  gs_idx_t in = op == GS_OP_N ? A->n : A->m, out = op == GS_OP_N ? A->m : A->n;
  double *x = malloc(((size_t)in + 1) * sizeof *x), *y = malloc(((size_t)out + 1) * sizeof *y);
  double *y0 = malloc(((size_t)out + 1) * sizeof *y0);
  CU_ASSERT_FATAL(x && y && y0);
  for (gs_idx_t j = 0; j < in; ++j) x[j] = 2.0 * gs_test_uniform(rng) - 1.0;
  for (gs_idx_t i = 0; i < out; ++i) y0[i] = gs_test_uniform(rng);
  for (gs_idx_t i = 0; i < out; ++i) y[i] = beta == 0.0 ? NAN : y0[i];
  CU_ASSERT_FATAL(gs_pkt_layout_apply_host(P, op, alpha, x, beta, y) == GS_SUCCESS);
  CU_ASSERT(gs_test_spmv_ok(A, op, alpha, x, beta, y0, y, "pkt %s (R %d, W %d, %d packets)",
                            what, (int)P->R, (int)P->W, (int)P->npackets));
  free(x);
  free(y);
  free(y0);
}

/* Builds A under cfg, checks the layout and both products for several (alpha, beta). */
static gs_pkt_t *check_all(const gs_csr_t *A, gs_spmv_cfg_t cfg, uint64_t *rng, const char *what)
{
  static const double coef[][2] = {{1.0, 0.0}, {-1.0, 1.0}, {2.5, -0.5}, {0.0, 2.0}, {0.0, 0.0}};
  gs_pkt_t *P = NULL;
  gs_status_t st = gs_pkt_build(&P, A, &cfg);
  if (st != GS_SUCCESS) fprintf(stderr, "pkt %s: %s\n", what, gs_last_error());
  CU_ASSERT_FATAL(st == GS_SUCCESS);
  check_layout(P, A);
  for (size_t k = 0; k < sizeof coef / sizeof coef[0]; ++k) {
    check_apply(P, A, GS_OP_N, coef[k][0], coef[k][1], rng, what);
    check_apply(P, A, GS_OP_T, coef[k][0], coef[k][1], rng, what);
  }
  return P;
}

static void check_and_free(const gs_csr_t *A, gs_spmv_cfg_t cfg, uint64_t *rng, const char *what)
{
  gs_pkt_t *P = check_all(A, cfg, rng, what);
  gs_pkt_destroy(&P);
  CU_ASSERT_PTR_NULL(P);
}

/* A 2D 5-point Laplacian on an nx x ny grid (square, banded: what RCM and packets suit). */
static gs_csr_t *laplace2d(int nx, int ny)
{
  gs_coo_t *C = NULL;
  gs_csr_t *A = NULL;
  const int n = nx * ny;
  CU_ASSERT_FATAL(gs_coo_create(&C, n, n, 5 * (gs_off_t)n) == GS_SUCCESS);
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      const int r = j * nx + i;
      CU_ASSERT_FATAL(gs_coo_push(C, r, r, 4.0) == GS_SUCCESS);
      if (i > 0) CU_ASSERT_FATAL(gs_coo_push(C, r, r - 1, -1.0) == GS_SUCCESS);
      if (i < nx - 1) CU_ASSERT_FATAL(gs_coo_push(C, r, r + 1, -1.0) == GS_SUCCESS);
      if (j > 0) CU_ASSERT_FATAL(gs_coo_push(C, r, r - nx, -1.0) == GS_SUCCESS);
      if (j < ny - 1) CU_ASSERT_FATAL(gs_coo_push(C, r, r + nx, -1.0) == GS_SUCCESS);
    }
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
  gs_coo_destroy(&C);
  return A;
}

/* ---- tests ------------------------------------------------------------------------------- */

/* 5 x 5 by hand, one packet (R = 8 > m), given order, window 5: every entry in the packet;
 * then window 2: the packet keeps the densest 2 columns, the rest is the remainder. */
static void test_hand_checked(void)
{
  const double a[] = {1, 0, 2, 0, 0, /* */
                      0, 3, 0, 0, 4, /* */
                      0, 0, 0, 0, 0, /* empty row */
                      5, 6, 0, 7, 0, /* */
                      0, 0, 8, 0, 9};
  gs_csr_t *A = gs_test_csr_from_dense(5, 5, a);
  uint64_t rng = gs_test_seed() ^ 0x9a7;
  gs_pkt_t *P = check_all(A, cfg_of(5, 8, 0, GS_PKT_REORDER_NONE), &rng, "hand, one packet");
  CU_ASSERT_EQUAL(P->npackets, 1);
  CU_ASSERT_EQUAL(P->B, 32);
  CU_ASSERT_EQUAL(P->in_packets, 9);
  CU_ASSERT_EQUAL(P->rem->nnz, 0);
  CU_ASSERT_PTR_NULL(P->perm);
  CU_ASSERT_EQUAL(P->col0[0], 0);
  CU_ASSERT_EQUAL(P->ncols[0], 5);
  /* exact: integer sums */
  const double x[] = {1, 10, 100, 1000, 10000};
  const double want[] = {201, 40030, 0, 7065, 90800};
  double y[5] = {NAN, NAN, NAN, NAN, NAN};
  CU_ASSERT(gs_pkt_layout_apply_host(P, GS_OP_N, 1.0, x, 0.0, y) == GS_SUCCESS);
  for (int i = 0; i < 5; ++i) CU_ASSERT_DOUBLE_EQUAL(y[i], want[i], 0.0);
  const double want_t[] = {1 + 5000, 30 + 6000, 2 + 80000, 7000, 40 + 90000};
  double yt[5] = {NAN, NAN, NAN, NAN, NAN};
  CU_ASSERT(gs_pkt_layout_apply_host(P, GS_OP_T, 1.0, x, 0.0, yt) == GS_SUCCESS);
  for (int j = 0; j < 5; ++j) CU_ASSERT_DOUBLE_EQUAL(yt[j], want_t[j], 0.0);
  gs_pkt_destroy(&P);

  /* a window of at most 2 columns: the rest goes to the remainder, the product is the same */
  P = check_all(A, cfg_of(2, 8, 0, GS_PKT_REORDER_NONE), &rng, "hand, window 2");
  CU_ASSERT(P->ncols[0] <= 2);
  CU_ASSERT(P->rem->nnz > 0);
  for (int i = 0; i < 5; ++i) y[i] = NAN;
  CU_ASSERT(gs_pkt_layout_apply_host(P, GS_OP_N, 1.0, x, 0.0, y) == GS_SUCCESS);
  for (int i = 0; i < 5; ++i) CU_ASSERT_DOUBLE_EQUAL(y[i], want[i], 0.0);
  gs_pkt_destroy(&P);
  gs_csr_destroy(&A);
}

/* Random square and rectangular matrices from the run's seed, every option shape. */
static void test_random_against_csr(void)
{
  uint64_t rng = gs_test_seed() ^ 0x9e7a;
  static const int dims[][2] = {{1, 1}, {7, 7}, {64, 64}, {200, 200}, {333, 333},
                                {90, 61}, {61, 90}, {1, 40}, {40, 1}, {500, 500}};
  static const double opts[][4] = {{0, 0, 0, 0}, {0, 0, 0, 1}, {0, 0, 0, 2}, {16, 8, 0, 0},
                                   {1, 1, 0, 2},  {3, 5, 0, 0}, {64, 0, 7, 0}, {0, 1000, 0, 0},
                                   {7, 33, 0, 0}};
  const int quick = gs_test_quick();
  for (size_t d = 0; d < sizeof dims / sizeof dims[0]; ++d) {
    if (quick && dims[d][0] > 300) continue;
    const double density = gs_test_uniform(&rng) * 0.1 + 2.0 / (dims[d][1] + 1);
    gs_csr_t *A = gs_test_random_csr(&rng, dims[d][0], dims[d][1], density);
    CU_ASSERT_FATAL(A != NULL);
    for (size_t o = 0; o < sizeof opts / sizeof opts[0]; ++o) {
      if (opts[o][3] == GS_PKT_REORDER_RCM && A->m != A->n) continue; /* test_rectangular */
      char what[64];
      snprintf(what, sizeof what, "random %dx%d options %zu", dims[d][0], dims[d][1], o);
      check_and_free(A, cfg_of(opts[o][0], opts[o][1], opts[o][2], opts[o][3]), &rng, what);
    }
    gs_csr_destroy(&A);
  }
}

/* The edge cases: one packet holding every row, and more packets asked for than rows
 * (one row a packet); a window of one column (almost everything in the remainder). */
static void test_one_packet_and_more_packets_than_rows(void)
{
  uint64_t rng = gs_test_seed() ^ 0x1a2b;
  gs_csr_t *A = gs_test_random_csr(&rng, 50, 50, 0.15);
  CU_ASSERT_FATAL(A != NULL);
  gs_pkt_t *P = check_all(A, cfg_of(0, 0, 1, GS_PKT_REORDER_AUTO), &rng, "packets=1");
  CU_ASSERT_EQUAL(P->npackets, 1);
  CU_ASSERT_EQUAL(P->R, 50);
  CU_ASSERT_EQUAL(P->in_packets, A->nnz); /* 50 columns fit the default window */
  gs_pkt_destroy(&P);
  P = check_all(A, cfg_of(0, 0, 0, GS_PKT_REORDER_AUTO), &rng, "automatic, small");
  CU_ASSERT_EQUAL(P->npackets, 1); /* 50 rows: one packet of the smallest automatic R */
  gs_pkt_destroy(&P);
  P = check_all(A, cfg_of(0, 0, 1000, GS_PKT_REORDER_NONE), &rng, "packets=1000 > m");
  CU_ASSERT_EQUAL(P->R, 1);
  CU_ASSERT_EQUAL(P->npackets, 50); /* one row a packet: as many packets as there can be */
  gs_pkt_destroy(&P);
  P = check_all(A, cfg_of(1, 0, 1000, GS_PKT_REORDER_RCM), &rng, "one row, one column");
  CU_ASSERT_EQUAL(P->npackets, 50);
  CU_ASSERT(P->max_cols <= 1);
  gs_pkt_destroy(&P);
  P = check_all(A, cfg_of(1, 16384, 0, GS_PKT_REORDER_NONE), &rng, "rows past m, window 1");
  CU_ASSERT_EQUAL(P->npackets, 1);
  gs_pkt_destroy(&P);
  gs_csr_destroy(&A);
}

/* Empty rows (every other row, the first and last too), empty packets, nnz = 0, m = 0. */
static void test_empty_rows_and_shapes(void)
{
  uint64_t rng = gs_test_seed() ^ 0xe3b0;
  gs_csr_t *A = gs_test_empty_rows(gs_test_random_csr(&rng, 300, 300, 0.05), 2);
  CU_ASSERT_FATAL(A != NULL);
  check_and_free(A, cfg_of(0, 0, 0, 0), &rng, "empty rows");
  check_and_free(A, cfg_of(32, 4, 0, 2), &rng, "empty rows, R 4");
  gs_csr_destroy(&A);

  /* rows 0..99 empty, then a block: whole packets without entries */
  gs_coo_t *C = NULL;
  CU_ASSERT_FATAL(gs_coo_create(&C, 200, 200, 400) == GS_SUCCESS);
  for (int i = 150; i < 200; ++i) {
    CU_ASSERT_FATAL(gs_coo_push(C, i, i, 2.0) == GS_SUCCESS);
    CU_ASSERT_FATAL(gs_coo_push(C, i, (i * 7) % 200, 1.0 + i) == GS_SUCCESS);
  }
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
  gs_coo_destroy(&C);
  check_and_free(A, cfg_of(0, 16, 0, 0), &rng, "empty packets");
  gs_csr_destroy(&A);

  static const int shapes[][2] = {{0, 0}, {0, 5}, {5, 0}, {4, 4}, {1, 1}};
  for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; ++k) {
    gs_csr_t *Z = NULL;
    CU_ASSERT_FATAL(gs_csr_create(&Z, shapes[k][0], shapes[k][1], 0) == GS_SUCCESS);
    check_and_free(Z, cfg_of(0, 0, 0, 0), &rng, "nnz = 0");
    gs_csr_destroy(&Z);
  }
}

/* One long row among short ones: it leaves the packet for the remainder (long_moved), and the
 * threads' lists stay short. */
static void test_one_long_row(void)
{
  uint64_t rng = gs_test_seed() ^ 0x10b;
  gs_csr_t *A = gs_test_long_row(&rng, 400);
  CU_ASSERT_FATAL(A != NULL);
  gs_pkt_t *P = check_all(A, cfg_of(0, 128, 0, GS_PKT_REORDER_NONE), &rng, "long row");
  CU_ASSERT(P->long_moved > 0); /* row 3 (full) is past the long-row limit */
  for (gs_idx_t p = 0; p < P->npackets; ++p) /* no list as long as the long row */
    CU_ASSERT((P->slot_ptr[p + 1] - P->slot_ptr[p]) / P->B < 100);
  gs_pkt_destroy(&P);
  check_and_free(A, cfg_of(0, 0, 0, 0), &rng, "long row, automatic");
  check_and_free(A, cfg_of(0, 0, 1000, 0), &rng, "long row, one row a packet");
  gs_csr_destroy(&A);

  /* a single row holding everything (1 x n) and a single full column (n x 1) */
  int len1[1] = {700};
  gs_csr_t *Row = gs_test_csr_from_lengths(&rng, len1, 1, 700);
  check_and_free(Row, cfg_of(0, 0, 0, 0), &rng, "1 x 700 full row");
  check_and_free(Row, cfg_of(100, 0, 0, 0), &rng, "1 x 700 full row, window 100");
  gs_csr_destroy(&Row);
}

/* Rectangular matrices: handled in their given order (windows over their columns); RCM asked
 * for explicitly is refused with GS_ERR_DIMENSION and a message. */
static void test_rectangular(void)
{
  uint64_t rng = gs_test_seed() ^ 0x4ec7;
  static const int dims[][2] = {{120, 30}, {30, 120}, {1000, 3}, {3, 1000}};
  for (size_t d = 0; d < sizeof dims / sizeof dims[0]; ++d) {
    gs_csr_t *A = gs_test_random_csr(&rng, dims[d][0], dims[d][1], 0.1);
    CU_ASSERT_FATAL(A != NULL);
    gs_pkt_t *P = check_all(A, cfg_of(0, 0, 0, GS_PKT_REORDER_AUTO), &rng, "rectangular");
    CU_ASSERT_PTR_NULL(P->perm);
    gs_pkt_destroy(&P);
    check_and_free(A, cfg_of(8, 16, 0, GS_PKT_REORDER_NONE), &rng, "rectangular, small");
    gs_spmv_cfg_t cfg = cfg_of(0, 0, 0, GS_PKT_REORDER_RCM);
    P = (gs_pkt_t *)1;
    CU_ASSERT(gs_pkt_build(&P, A, &cfg) == GS_ERR_DIMENSION);
    CU_ASSERT_PTR_NULL(P);
    CU_ASSERT(strstr(gs_last_error(), "square") != NULL);
    gs_csr_destroy(&A);
  }
}

/* The RCM order on a Laplacian whose rows were shuffled: the given order scatters the columns,
 * RCM brings them back into packets; both give the product. */
static void test_rcm_order(void)
{
  uint64_t rng = gs_test_seed() ^ 0x7c3;
  gs_csr_t *L = laplace2d(40, 40);
  /* a random symmetric permutation of the Laplacian */
  gs_idx_t *perm = malloc(1600 * sizeof *perm);
  CU_ASSERT_FATAL(perm != NULL);
  for (int k = 0; k < 1600; ++k) perm[k] = k;
  for (int k = 1599; k > 0; --k) {
    const int j = (int)(gs_test_next(&rng) % (uint64_t)(k + 1));
    const gs_idx_t t = perm[k];
    perm[k] = perm[j];
    perm[j] = t;
  }
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_csr_permute_sym(L, perm, &A) == GS_SUCCESS);
  gs_pkt_t *G = check_all(A, cfg_of(0, 256, 0, GS_PKT_REORDER_NONE), &rng, "shuffled, given");
  gs_pkt_t *P = check_all(A, cfg_of(0, 256, 0, GS_PKT_REORDER_RCM), &rng, "shuffled, rcm");
  CU_ASSERT_PTR_NOT_NULL(P->perm);
  CU_ASSERT(P->in_packets > G->in_packets); /* RCM gathers the columns of a packet's rows */
  CU_ASSERT(P->in_packets >= A->nnz * 9 / 10);
  gs_pkt_destroy(&G);
  gs_pkt_destroy(&P);
  P = check_all(A, cfg_of(0, 0, 0, GS_PKT_REORDER_AUTO), &rng, "shuffled, automatic");
  CU_ASSERT_PTR_NOT_NULL(P->perm); /* the model prefers RCM here */
  gs_pkt_destroy(&P);
  /* the plain Laplacian in its natural order: every entry in a packet */
  P = check_all(L, cfg_of(0, 0, 0, GS_PKT_REORDER_NONE), &rng, "laplacian 40x40");
  CU_ASSERT_EQUAL(P->in_packets, L->nnz);
  gs_pkt_destroy(&P);
  free(perm);
  gs_csr_destroy(&A);
  gs_csr_destroy(&L);
}

/* Real matrices of the in-repository set (or GS_MATRIX_DIR), automatic options. */
static void test_real_matrices(void)
{
  if (!gs_test_have_matrices()) return;
  uint64_t rng = gs_test_seed() ^ 0x4ea1;
  const int quick = gs_test_quick();
  int done = 0;
  for (int k = 0; gs_test_matrix_names[k] && (!quick || done < 2); ++k) {
    if (!gs_test_have_matrix(gs_test_matrix_names[k])) continue;
    gs_csr_t *A = NULL;
    if (gs_mm_read_csr(gs_test_matrix(gs_test_matrix_names[k]), &A) != GS_SUCCESS) continue;
    if (!quick || A->nnz < 100000) {
      check_and_free(A, cfg_of(0, 0, 0, 0), &rng, gs_test_matrix_names[k]);
      ++done;
    }
    gs_csr_destroy(&A);
  }
}

/* Through the registry: flags, options, the host apply with option strings, refusals. */
static void test_registry(void)
{
  const int b = gs_spmv_backend_find("pkt");
  CU_ASSERT_FATAL(b >= 0);
  const unsigned f = gs_spmv_backend_flags(b);
  CU_ASSERT(f & GS_SPMV_FLAG_TRANSPOSE);
  CU_ASSERT(f & GS_SPMV_FLAG_HOST_LAYOUT);
  CU_ASSERT(!(f & GS_SPMV_FLAG_MIXED));
  CU_ASSERT(!(f & GS_SPMV_FLAG_VENDOR));
  CU_ASSERT_DOUBLE_EQUAL(gs_test_backend_option_default("pkt", "window", -1.0), 0.0, 0.0);
  CU_ASSERT_DOUBLE_EQUAL(gs_test_backend_option_default("pkt", "rows", -1.0), 0.0, 0.0);
  CU_ASSERT_DOUBLE_EQUAL(gs_test_backend_option_default("pkt", "packets", -1.0), 0.0, 0.0);
  CU_ASSERT_DOUBLE_EQUAL(gs_test_backend_option_default("pkt", "reorder", -1.0), 0.0, 0.0);

  uint64_t rng = gs_test_seed() ^ 0xabcd;
  gs_csr_t *A = gs_test_random_csr(&rng, 90, 90, 0.08);
  gs_csr_t *Rc = gs_test_random_csr(&rng, 90, 61, 0.08);
  CU_ASSERT_FATAL(A && Rc);
  double x[90], y[90], y0[90];
  for (int j = 0; j < 90; ++j) x[j] = gs_test_uniform(&rng);
  for (int r = 0; r < 90; ++r) y0[r] = gs_test_uniform(&rng);
  static const char *const opts[] = {"", "pkt.window=8,pkt.rows=4", "pkt.packets=500,pkt.reorder=1",
                                     "pkt.reorder=2,pkt.window=1", "pkt.rows=16384"};
  for (size_t k = 0; k < sizeof opts / sizeof opts[0]; ++k) {
    for (int r = 0; r < 90; ++r) y[r] = y0[r];
    CU_ASSERT(gs_spmv_host_apply("pkt", A, opts[k], GS_OP_N, 1.5, x, -0.5, y) == GS_SUCCESS);
    CU_ASSERT(gs_test_spmv_ok(A, GS_OP_N, 1.5, x, -0.5, y0, y, "pkt host '%s'", opts[k]));
    for (int r = 0; r < 90; ++r) y[r] = NAN;
    CU_ASSERT(gs_spmv_host_apply("pkt", A, opts[k], GS_OP_T, -2.0, x, 0.0, y) == GS_SUCCESS);
    CU_ASSERT(gs_test_spmv_ok(A, GS_OP_T, -2.0, x, 0.0, NULL, y, "pkt host T '%s'", opts[k]));
  }
  for (int r = 0; r < 90; ++r) y[r] = NAN;
  CU_ASSERT(gs_spmv_host_apply("pkt", Rc, "", GS_OP_N, 1.0, x, 0.0, y) == GS_SUCCESS);
  CU_ASSERT(gs_test_spmv_ok(Rc, GS_OP_N, 1.0, x, 0.0, NULL, y, "pkt host rectangular"));
  /* refusals: bad values (the table), rows and packets both, RCM on a rectangular matrix,
   * precision=mixed (pkt is not flagged MIXED); alpha = 0 refuses alike */
  CU_ASSERT(gs_spmv_host_apply("pkt", A, "pkt.window=20000", GS_OP_N, 1.0, x, 0.0, y) ==
            GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_spmv_host_apply("pkt", A, "pkt.reorder=3", GS_OP_N, 1.0, x, 0.0, y) ==
            GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_spmv_host_apply("pkt", A, "pkt.rows=4,pkt.packets=4", GS_OP_N, 1.0, x, 0.0, y) ==
            GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_spmv_host_apply("pkt", Rc, "pkt.reorder=1", GS_OP_N, 1.0, x, 0.0, y) ==
            GS_ERR_DIMENSION);
  CU_ASSERT(gs_spmv_host_apply("pkt", Rc, "pkt.reorder=1", GS_OP_N, 0.0, NULL, 0.0, y) ==
            GS_ERR_DIMENSION);
  CU_ASSERT(gs_spmv_host_apply("pkt", A, "precision=mixed", GS_OP_N, 1.0, x, 0.0, y) ==
            GS_ERR_UNSUPPORTED);
  gs_csr_destroy(&A);
  gs_csr_destroy(&Rc);
}

static void test_bad_arguments(void)
{
  const double a[] = {1, 2, 0, 3};
  gs_csr_t *A = gs_test_csr_from_dense(2, 2, a);
  gs_pkt_t *P = (gs_pkt_t *)1;
  gs_spmv_cfg_t cfg = cfg_of(0, 0, 0, 0);
  CU_ASSERT(gs_pkt_build(&P, NULL, &cfg) == GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NULL(P);
  CU_ASSERT(gs_pkt_build(NULL, A, &cfg) == GS_ERR_INVALID_ARG);
  cfg = cfg_of(2.5, 0, 0, 0);
  CU_ASSERT(gs_pkt_build(&P, A, &cfg) == GS_ERR_INVALID_ARG);
  cfg = cfg_of(0, 3, 3, 0);
  CU_ASSERT(gs_pkt_build(&P, A, &cfg) == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_pkt_layout_apply_host(NULL, GS_OP_N, 1.0, NULL, 0.0, NULL) == GS_ERR_INVALID_ARG);
  cfg = cfg_of(0, 0, 0, 0);
  double y[2];
  CU_ASSERT(gs_pkt_host_apply(A, &cfg, GS_OP_N, 1.0, NULL, 0.0, y) == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_pkt_host_apply(A, &cfg, (gs_op_t)'X', 1.0, a, 0.0, y) == GS_ERR_INVALID_ARG);
  gs_pkt_destroy(NULL);
  gs_csr_destroy(&A);
}

int main(void)
{
  CU_TestInfo tests[] = {
      {"layout hand-checked (one packet, window of 2)", test_hand_checked},
      {"random square and rectangular matrices, every option shape", test_random_against_csr},
      {"one packet; more packets than rows; one-column windows",
       test_one_packet_and_more_packets_than_rows},
      {"empty rows, empty packets, nnz = 0, zero rows", test_empty_rows_and_shapes},
      {"one long row: to the remainder", test_one_long_row},
      {"rectangular: kept in order, RCM refused", test_rectangular},
      {"RCM order on a shuffled Laplacian", test_rcm_order},
      {"real matrices", test_real_matrices},
      {"registry host apply and options", test_registry},
      {"bad arguments", test_bad_arguments},
      CU_TEST_INFO_NULL};
  return gs_test_main("pkt_host", tests, 0);
}
