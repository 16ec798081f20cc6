/* tests/test_dist_host.c: the host side of the distributed matrix (dist/partition.c): row
 * blocks balanced by work, the diag/off split with its halo, the halo exchange lists (checked by
 * carrying out the exchange and the distributed product). No GPU. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dist/partition.h"
#include "tests/testutil.h"

/* ---- helpers --------------------------------------------------------------------------------- */

static gs_idx_t rand_int(uint64_t *rng, gs_idx_t lo, gs_idx_t hi) /* uniform in [lo, hi] */
{
  return lo + (gs_idx_t)(gs_test_uniform(rng) * ((double)hi - lo + 1));
}

/* A random permutation of 0..n-1 (Fisher-Yates). */
static gs_idx_t *random_perm(uint64_t *rng, gs_idx_t n)
{
  gs_idx_t *p = malloc(((size_t)n + 1) * sizeof *p);
  CU_ASSERT_FATAL(p != NULL);
  for (gs_idx_t i = 0; i < n; ++i) p[i] = i;
  for (gs_idx_t i = n - 1; i > 0; --i) {
    gs_idx_t j = rand_int(rng, 0, i), t = p[i];
    p[i] = p[j];
    p[j] = t;
  }
  return p;
}

/* Shuffles the entries within every row of A (columns then out of order). */
static void shuffle_rows(uint64_t *rng, gs_csr_t *A)
{
  for (gs_idx_t i = 0; i < A->m; ++i) {
    gs_off_t s = A->row_ptr[i], len = A->row_ptr[i + 1] - s;
    for (gs_off_t a = len - 1; a > 0; --a) {
      gs_off_t b = (gs_off_t)(gs_test_uniform(rng) * (double)(a + 1));
      gs_idx_t c = A->col[s + a];
      A->col[s + a] = A->col[s + b];
      A->col[s + b] = c;
      double v = A->val[s + a];
      A->val[s + a] = A->val[s + b];
      A->val[s + b] = v;
    }
  }
}

/* CSR of a COO built by the caller (consumed). */
static gs_csr_t *csr_of(gs_coo_t *C)
{
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
  gs_coo_destroy(&C);
  return A;
}

/* ---- partition ------------------------------------------------------------------------------- */

/* The rule of partition.h, by a linear scan: first[k] is the least e with W(e) >= k T / nparts
 * (W(e) nparts >= k T), raised to first[k-1] + 1 and lowered to m - (nparts - k). Totals stay
 * below 2^50 and nparts below 2^12 in these tests, so the products fit 64 bits. */
static void reference_partition(const gs_off_t *rp, gs_idx_t m, int nparts, gs_idx_t *first)
{
  const int64_t T = rp[m] - rp[0] + m;
  gs_idx_t e = 0;
  first[0] = 0;
  for (int k = 1; k < nparts; ++k) {
    while (e < m && (rp[e] - rp[0] + e) * (int64_t)nparts < (int64_t)k * T) ++e;
    gs_idx_t f = e;
    if (f < first[k - 1] + 1) f = first[k - 1] + 1;
    if (f > m - (nparts - k)) f = m - (nparts - k);
    first[k] = f;
  }
  first[nparts] = m;
}

/* Covers 0..m, strictly increasing, every part within total / nparts + its last row's work (so
 * within total / nparts + the largest row's work), and exactly the documented rule. */
static void check_partition(const gs_off_t *rp, gs_idx_t m, int nparts)
{
  gs_idx_t *first = malloc(((size_t)nparts + 1) * sizeof *first);
  gs_idx_t *want = malloc(((size_t)nparts + 1) * sizeof *want);
  CU_ASSERT_FATAL(first && want);
  CU_ASSERT_FATAL(gs_dist_partition_rows(rp, m, nparts, first) == GS_SUCCESS);
  CU_ASSERT_EQUAL(first[0], 0);
  CU_ASSERT_EQUAL(first[nparts], m);
  const int64_t T = rp[m] - rp[0] + m;
  int64_t wmax = 0;
  for (gs_idx_t i = 0; i < m; ++i)
    if (rp[i + 1] - rp[i] + 1 > wmax) wmax = rp[i + 1] - rp[i] + 1;
  int increasing = 1, bounded = 1, bounded_max = 1;
  for (int k = 0; k < nparts; ++k) {
    if (first[k + 1] <= first[k]) {
      increasing = 0;
      continue;
    }
    const int64_t work = rp[first[k + 1]] - rp[first[k]] + (first[k + 1] - first[k]);
    const int64_t wlast = rp[first[k + 1]] - rp[first[k + 1] - 1] + 1;
    if (work * nparts > T + nparts * wlast) bounded = 0;       /* work <= T/nparts + w_last */
    if (work * nparts > T + nparts * (wmax + 1)) bounded_max = 0; /* <= T/nparts + wmax + 1 */
  }
  CU_ASSERT(increasing);
  CU_ASSERT(bounded);
  CU_ASSERT(bounded_max);
  reference_partition(rp, m, nparts, want);
  CU_ASSERT(memcmp(first, want, ((size_t)nparts + 1) * sizeof *first) == 0);
  free(first);
  free(want);
}

/* Row pointers of the lengths len[0..m). */
static gs_off_t *row_ptr_of(const int64_t *len, gs_idx_t m)
{
  gs_off_t *rp = malloc(((size_t)m + 1) * sizeof *rp);
  CU_ASSERT_FATAL(rp != NULL);
  rp[0] = 0;
  for (gs_idx_t i = 0; i < m; ++i) rp[i + 1] = rp[i] + len[i];
  return rp;
}

static void test_partition_random(void)
{
  uint64_t rng = gs_test_seed() ^ 0xd157u;
  const int trials = gs_test_quick() ? 20 : 200;
  for (int t = 0; t < trials; ++t) {
    const gs_idx_t m = rand_int(&rng, 1, 400);
    int64_t *len = malloc((size_t)m * sizeof *len);
    CU_ASSERT_FATAL(len != NULL);
    const int shape = t % 4;
    for (gs_idx_t i = 0; i < m; ++i) {
      if (shape == 0) len[i] = rand_int(&rng, 0, 20);                 /* uniform */
      else if (shape == 1) len[i] = 0;                                /* all empty */
      else if (shape == 2) len[i] = gs_test_uniform(&rng) < 0.1 ? rand_int(&rng, 100, 5000) : 1;
      else len[i] = (int64_t)rand_int(&rng, 0, 1 << 20) << 14;        /* totals beyond 2^31 */
    }
    gs_off_t *rp = row_ptr_of(len, m);
    check_partition(rp, m, 1);
    check_partition(rp, m, m); /* one row each */
    check_partition(rp, m, rand_int(&rng, 1, m < 17 ? m : 17));
    check_partition(rp, m, rand_int(&rng, 1, m));
    if (shape == 1) { /* equal work per row: part sizes differ by at most one */
      const int np = rand_int(&rng, 1, m);
      gs_idx_t *first = malloc(((size_t)np + 1) * sizeof *first);
      CU_ASSERT_FATAL(first && gs_dist_partition_rows(rp, m, np, first) == GS_SUCCESS);
      gs_idx_t lo = m, hi = 0;
      for (int k = 0; k < np; ++k) {
        gs_idx_t r = first[k + 1] - first[k];
        if (r < lo) lo = r;
        if (r > hi) hi = r;
      }
      CU_ASSERT(hi - lo <= 1);
      free(first);
    }
    free(rp);
    free(len);
  }
}

/* One row holding almost all the work: it fills a part of its own; the bound holds for all. */
static void test_partition_skewed(void)
{
  uint64_t rng = gs_test_seed() ^ 0x5ce3u;
  const int trials = gs_test_quick() ? 10 : 100;
  for (int t = 0; t < trials; ++t) {
    const gs_idx_t m = rand_int(&rng, 2, 300), big = rand_int(&rng, 0, m - 1);
    int64_t *len = malloc((size_t)m * sizeof *len);
    CU_ASSERT_FATAL(len != NULL);
    for (gs_idx_t i = 0; i < m; ++i) len[i] = rand_int(&rng, 0, 5);
    len[big] = (int64_t)1 << (20 + t % 30); /* up to 2^49 entries in one row */
    gs_off_t *rp = row_ptr_of(len, m);
    for (int np = 1; np <= 9 && np <= m; ++np) {
      check_partition(rp, m, np);
      gs_idx_t first[10];
      CU_ASSERT_FATAL(gs_dist_partition_rows(rp, m, np, first) == GS_SUCCESS);
      /* the big row outweighs all others together, so it ends its part */
      int k = 0;
      while (first[k + 1] <= big) ++k;
      if (np > 1) CU_ASSERT_EQUAL(first[k + 1], big + 1);
    }
    check_partition(rp, m, m);
    free(rp);
    free(len);
  }
}

static void test_partition_hand_checked(void)
{
  /* row works 1+{3,0,0,5,1,1,0,6} = {4,1,1,6,2,2,1,7}, total 24: targets 8 and 16 of three
     parts; W = 0,4,5,6,12,14,16,17,24: W(4) = 12 >= 8, W(6) = 16 >= 16 */
  const gs_off_t rp[] = {0, 3, 3, 3, 8, 9, 10, 10, 16};
  gs_idx_t first[9];
  CU_ASSERT(gs_dist_partition_rows(rp, 8, 3, first) == GS_SUCCESS);
  CU_ASSERT(first[0] == 0 && first[1] == 4 && first[2] == 6 && first[3] == 8);
  CU_ASSERT(gs_dist_partition_rows(rp, 8, 1, first) == GS_SUCCESS);
  CU_ASSERT(first[0] == 0 && first[1] == 8);
  CU_ASSERT(gs_dist_partition_rows(rp, 8, 8, first) == GS_SUCCESS);
  for (int k = 0; k <= 8; ++k) CU_ASSERT_EQUAL(first[k], k);
  /* row 0 heavy: [0,1) then the rest; with 3 parts the last two parts keep a row each */
  const gs_off_t heavy[] = {0, 100, 100, 101};
  CU_ASSERT(gs_dist_partition_rows(heavy, 3, 2, first) == GS_SUCCESS);
  CU_ASSERT(first[0] == 0 && first[1] == 1 && first[2] == 3);
  /* last row heavy: the earlier parts must still leave it a row of its own */
  const gs_off_t tail[] = {0, 0, 0, 0, 1000};
  CU_ASSERT(gs_dist_partition_rows(tail, 4, 3, first) == GS_SUCCESS);
  CU_ASSERT(first[0] == 0 && first[1] == 2 && first[2] == 3 && first[3] == 4);
}

static void test_partition_refusals(void)
{
  const gs_off_t rp[] = {0, 1, 2, 3};
  gs_idx_t first[8];
  CU_ASSERT(gs_dist_partition_rows(rp, 3, 4, first) == GS_ERR_DIMENSION);
  CU_ASSERT(strstr(gs_last_error(), "3 rows") != NULL);
  CU_ASSERT(gs_dist_partition_rows(rp, 0, 1, first) == GS_ERR_DIMENSION);
  CU_ASSERT(gs_dist_partition_rows(rp, 3, 0, first) == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_dist_partition_rows(rp, 3, -2, first) == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_dist_partition_rows(NULL, 3, 2, first) == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_dist_partition_rows(rp, 3, 2, NULL) == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_dist_partition_rows(rp, -1, 1, first) == GS_ERR_INVALID_ARG);
  const gs_off_t down[] = {0, 5, 4, 6};
  CU_ASSERT(gs_dist_partition_rows(down, 3, 2, first) == GS_ERR_INVALID_ARG);
  CU_ASSERT(strstr(gs_last_error(), "row 1") != NULL);
}

/* ---- split, send lists, exchange ------------------------------------------------------------- */

/* Every promise of gs_dist_block_t for part p of A (before the send lists). */
static void check_block(const gs_csr_t *A, const gs_idx_t *first, int nparts, int p,
                        const gs_dist_block_t *B)
{
  const gs_idx_t r0 = first[p], r1 = first[p + 1], rows = r1 - r0;
  CU_ASSERT_EQUAL(B->part, p);
  CU_ASSERT_EQUAL(B->nparts, nparts);
  CU_ASSERT_EQUAL(B->row0, r0);
  CU_ASSERT_EQUAL_FATAL(B->rows, rows);
  CU_ASSERT_FATAL(B->diag != NULL && B->off != NULL && B->recv_off != NULL);
  const gs_csr_t *D = B->diag, *O = B->off;
  CU_ASSERT(D->m == rows && D->n == rows && O->m == rows && O->n == B->nhalo);
  CU_ASSERT_FATAL(B->nhalo >= 0 && (B->nhalo == 0) == (B->halo == NULL));
  CU_ASSERT(B->nsend == 0 && B->send_idx == NULL && B->send_off == NULL);
  CU_ASSERT(gs_csr_validate(D) == GS_SUCCESS);
  CU_ASSERT(gs_csr_validate(O) == GS_SUCCESS);

  /* halo: ascending, unique, in range, outside the own rows, grouped by owner */
  int halo_ok = 1, groups_ok = 1;
  for (gs_idx_t h = 0; h < B->nhalo; ++h) {
    const gs_idx_t j = B->halo[h];
    if (j < 0 || j >= A->n || (j >= r0 && j < r1) || (h > 0 && j <= B->halo[h - 1])) halo_ok = 0;
  }
  CU_ASSERT(halo_ok);
  CU_ASSERT(B->recv_off[0] == 0 && B->recv_off[nparts] == B->nhalo);
  CU_ASSERT(B->recv_off[p] == B->recv_off[p + 1]);
  for (int q = 0; q < nparts; ++q) {
    if (B->recv_off[q + 1] < B->recv_off[q]) {
      groups_ok = 0;
      continue;
    }
    for (gs_idx_t h = B->recv_off[q]; h < B->recv_off[q + 1]; ++h)
      if (h < 0 || h >= B->nhalo || B->halo[h] < first[q] || B->halo[h] >= first[q + 1])
        groups_ok = 0;
  }
  CU_ASSERT(groups_ok);

  /* diag and off hold exactly the part's rows of A, in A's order within each row: walking a row
     of A, each entry is the next entry of diag (own column) or of off (halo column) */
  int rows_ok = 1;
  char *used = calloc((size_t)B->nhalo + 1, 1);
  CU_ASSERT_FATAL(used != NULL);
  CU_ASSERT(D->row_ptr[0] == 0 && O->row_ptr[0] == 0);
  for (gs_idx_t i = 0; i < rows && rows_ok; ++i) {
    gs_off_t pd = D->row_ptr[i], po = O->row_ptr[i];
    for (gs_off_t a = A->row_ptr[r0 + i]; a < A->row_ptr[r0 + i + 1]; ++a) {
      const gs_idx_t j = A->col[a];
      const double v = A->val[a];
      if (j >= r0 && j < r1) {
        if (pd >= D->row_ptr[i + 1] || D->col[pd] + r0 != j || D->val[pd] != v) rows_ok = 0;
        ++pd;
      } else {
        if (po >= O->row_ptr[i + 1] || O->col[po] < 0 || O->col[po] >= B->nhalo ||
            B->halo[O->col[po]] != j || O->val[po] != v) {
          rows_ok = 0;
          break;
        }
        used[O->col[po++]] = 1;
      }
    }
    if (pd != D->row_ptr[i + 1] || po != O->row_ptr[i + 1]) rows_ok = 0;
  }
  CU_ASSERT(rows_ok);
  CU_ASSERT_EQUAL(D->nnz + O->nnz, A->row_ptr[r1] - A->row_ptr[r0]);
  int all_used = 1; /* the halo is the columns the rows reference, no more */
  for (gs_idx_t h = 0; h < B->nhalo; ++h)
    if (!used[h]) all_used = 0;
  CU_ASSERT(all_used);
  free(used);
}

/* The send lists against the halos: p sends q exactly q's halo segment owned by p, in order. */
static void check_sends(const gs_dist_block_t *blocks, int nparts)
{
  int64_t sends = 0, halos = 0;
  int ok = 1;
  for (int p = 0; p < nparts; ++p) {
    const gs_dist_block_t *b = &blocks[p];
    CU_ASSERT_FATAL(b->send_off != NULL);
    CU_ASSERT((b->nsend == 0) == (b->send_idx == NULL));
    CU_ASSERT(b->send_off[0] == 0 && b->send_off[nparts] == b->nsend);
    CU_ASSERT(b->send_off[p + 1] == b->send_off[p]);
    sends += b->nsend;
    halos += b->nhalo;
    for (int q = 0; q < nparts; ++q) {
      const gs_dist_block_t *c = &blocks[q];
      const gs_idx_t n = b->send_off[q + 1] - b->send_off[q];
      if (n != c->recv_off[p + 1] - c->recv_off[p]) {
        ok = 0;
        continue;
      }
      for (gs_idx_t t = 0; t < n; ++t) {
        const gs_idx_t li = b->send_idx[b->send_off[q] + t];
        if (li < 0 || li >= b->rows || b->row0 + li != c->halo[c->recv_off[p] + t]) ok = 0;
      }
    }
  }
  CU_ASSERT(ok);
  CU_ASSERT_EQUAL(sends, halos);
}

static double gamma_k(int64_t k)
{
  const double ku = (double)k * 0x1p-53;
  return ku / (1.0 - ku);
}

/* The halo exchange as the devices will do it (each part packs x at its send_idx, each part
 * receives into halo order at recv_off), then y_p = diag x_own + off x_halo on every part,
 * against the host product: the same bits for rows whose entries all fall in one block (same
 * summation order), within 2 gamma_k (|A||x|)_i otherwise (each sum is within gamma_k of the
 * exact one, k the row length). */
static void check_product(const gs_csr_t *A, const gs_dist_block_t *blocks, int nparts,
                          uint64_t *rng)
{
  const gs_idx_t n = A->m;
  double *x = malloc(((size_t)n + 1) * sizeof *x), *ref = malloc(((size_t)n + 1) * sizeof *ref);
  double **xh = calloc((size_t)nparts, sizeof *xh);
  CU_ASSERT_FATAL(x && ref && xh);
  for (gs_idx_t j = 0; j < n; ++j) x[j] = 2.0 * gs_test_uniform(rng) - 1.0;
  CU_ASSERT_FATAL(gs_csr_spmv_host(A, GS_OP_N, 1.0, x, 0.0, ref) == GS_SUCCESS);
  for (int q = 0; q < nparts; ++q) {
    xh[q] = malloc(((size_t)blocks[q].nhalo + 1) * sizeof *xh[q]);
    CU_ASSERT_FATAL(xh[q] != NULL);
    for (gs_idx_t h = 0; h < blocks[q].nhalo; ++h) xh[q][h] = NAN; /* every slot must arrive */
  }
  for (int p = 0; p < nparts; ++p) /* p packs and sends */
    for (int q = 0; q < nparts; ++q) {
      const gs_dist_block_t *b = &blocks[p];
      for (gs_idx_t t = b->send_off[q]; t < b->send_off[q + 1]; ++t)
        xh[q][blocks[q].recv_off[p] + (t - b->send_off[q])] = x[b->row0 + b->send_idx[t]];
    }
  int arrived = 1, exact = 1, bounded = 1;
  for (int q = 0; q < nparts; ++q) {
    const gs_dist_block_t *b = &blocks[q];
    for (gs_idx_t h = 0; h < b->nhalo; ++h)
      if (!(xh[q][h] == x[b->halo[h]])) arrived = 0;
    double *y = malloc(((size_t)b->rows + 1) * sizeof *y);
    CU_ASSERT_FATAL(y != NULL);
    CU_ASSERT_FATAL(gs_csr_spmv_host(b->diag, GS_OP_N, 1.0, x + b->row0, 0.0, y) == GS_SUCCESS);
    CU_ASSERT_FATAL(gs_csr_spmv_host(b->off, GS_OP_N, 1.0, xh[q], 1.0, y) == GS_SUCCESS);
    for (gs_idx_t i = 0; i < b->rows; ++i) {
      const gs_idx_t gi = b->row0 + i;
      const int64_t k = A->row_ptr[gi + 1] - A->row_ptr[gi];
      const int64_t kd = b->diag->row_ptr[i + 1] - b->diag->row_ptr[i];
      double mag = 0.0;
      for (gs_off_t a = A->row_ptr[gi]; a < A->row_ptr[gi + 1]; ++a)
        mag += fabs(A->val[a] * x[A->col[a]]);
      if (kd == 0 || kd == k) {
        if (y[i] != ref[gi]) exact = 0;
      } else if (!(fabs(y[i] - ref[gi]) <= 2.0 * gamma_k(k) * mag)) {
        bounded = 0;
      }
    }
    free(y);
  }
  CU_ASSERT(arrived);
  CU_ASSERT(exact);
  CU_ASSERT(bounded);
  for (int q = 0; q < nparts; ++q) free(xh[q]);
  free(xh);
  free(x);
  free(ref);
}

/* Split A under `first` into all parts, check each, build and check the send lists (twice:
 * the second call replaces the first's), run the exchange and the product, free. */
static void check_split(const gs_csr_t *A, const gs_idx_t *first, int nparts, uint64_t *rng)
{
  gs_dist_block_t *blocks = calloc((size_t)nparts, sizeof *blocks);
  CU_ASSERT_FATAL(blocks != NULL);
  for (int p = 0; p < nparts; ++p) {
    CU_ASSERT_FATAL(gs_dist_split(A, first, nparts, p, &blocks[p]) == GS_SUCCESS);
    check_block(A, first, nparts, p, &blocks[p]);
  }
  CU_ASSERT_FATAL(gs_dist_send_lists(blocks, nparts) == GS_SUCCESS);
  check_sends(blocks, nparts);
  CU_ASSERT_FATAL(gs_dist_send_lists(blocks, nparts) == GS_SUCCESS);
  check_sends(blocks, nparts);
  check_product(A, blocks, nparts, rng);
  for (int p = 0; p < nparts; ++p) {
    gs_dist_block_free(&blocks[p]);
    CU_ASSERT(blocks[p].diag == NULL && blocks[p].halo == NULL && blocks[p].send_off == NULL);
  }
  free(blocks);
}

/* Work-balanced partition into nparts (when A has that many rows), then check_split. */
static void check_split_balanced(const gs_csr_t *A, int nparts, uint64_t *rng)
{
  if (nparts > A->m) return;
  gs_idx_t *first = malloc(((size_t)nparts + 1) * sizeof *first);
  CU_ASSERT_FATAL(first != NULL);
  CU_ASSERT_FATAL(gs_dist_partition_rows(A->row_ptr, A->m, nparts, first) == GS_SUCCESS);
  check_split(A, first, nparts, rng);
  free(first);
}

/* A partition with random cut points (not balanced: parts of very different sizes). */
static void check_split_random_cuts(const gs_csr_t *A, int nparts, uint64_t *rng)
{
  if (nparts > A->m) return;
  gs_idx_t *perm = random_perm(rng, A->m - 1); /* the first nparts - 1 of 1..m-1 as cuts */
  gs_idx_t *first = malloc(((size_t)nparts + 1) * sizeof *first);
  CU_ASSERT_FATAL(first != NULL);
  for (int k = 1; k < nparts; ++k) first[k] = perm[k - 1] + 1;
  for (int k = 2; k < nparts; ++k) /* insertion sort of the cuts */
    for (int a = k; a > 1 && first[a - 1] > first[a]; --a) {
      gs_idx_t t = first[a];
      first[a] = first[a - 1];
      first[a - 1] = t;
    }
  first[0] = 0;
  first[nparts] = A->m;
  check_split(A, first, nparts, rng);
  free(first);
  free(perm);
}

static void test_split_random(void)
{
  uint64_t rng = gs_test_seed() ^ 0x5b117u;
  static const int parts[] = {1, 2, 3, 7};
  const int trials = gs_test_quick() ? 4 : 30;
  for (int t = 0; t < trials; ++t) {
    const gs_idx_t m = rand_int(&rng, 1, 200);
    const double density = 0.002 + 0.15 * gs_test_uniform(&rng) * gs_test_uniform(&rng);
    gs_csr_t *A = gs_test_random_csr(&rng, m, m, density);
    CU_ASSERT_FATAL(A != NULL);
    for (int k = 0; k < 4; ++k) {
      check_split_balanced(A, parts[k], &rng);
      check_split_random_cuts(A, parts[k], &rng);
    }
    check_split_balanced(A, m, &rng); /* one row per part */
    gs_csr_destroy(&A);
  }
}

/* Columns out of order within rows (and a repeated column): the blocks keep A's order. */
static void test_split_unsorted(void)
{
  uint64_t rng = gs_test_seed() ^ 0x0b5u;
  const int trials = gs_test_quick() ? 2 : 10;
  for (int t = 0; t < trials; ++t) {
    const gs_idx_t m = rand_int(&rng, 5, 150);
    gs_csr_t *A = gs_test_random_csr(&rng, m, m, 0.1);
    CU_ASSERT_FATAL(A != NULL);
    if (A->nnz > 1) A->col[A->nnz - 1] = A->col[A->nnz - 2]; /* may repeat a column */
    shuffle_rows(&rng, A);
    CU_ASSERT(gs_csr_validate(A) == GS_SUCCESS);
    check_split_balanced(A, 3, &rng);
    check_split_random_cuts(A, 4, &rng);
    gs_csr_destroy(&A);
  }
}

static void test_split_empty_rows(void)
{
  uint64_t rng = gs_test_seed() ^ 0xe3e3u;
  gs_csr_t *A = gs_test_empty_rows(gs_test_random_csr(&rng, 120, 120, 0.05), 3);
  CU_ASSERT_FATAL(A != NULL);
  check_split_balanced(A, 2, &rng);
  check_split_random_cuts(A, 7, &rng);
  gs_csr_destroy(&A);
  /* no entries at all: every block empty, no halo, no sends */
  CU_ASSERT_FATAL(gs_csr_create(&A, 40, 40, 0) == GS_SUCCESS);
  gs_idx_t first[4];
  CU_ASSERT_FATAL(gs_dist_partition_rows(A->row_ptr, 40, 3, first) == GS_SUCCESS);
  CU_ASSERT(first[1] == 14 && first[2] == 27); /* equal work per row: ceil(40 k / 3) */
  check_split(A, first, 3, &rng);
  gs_dist_block_t B;
  CU_ASSERT_FATAL(gs_dist_split(A, first, 3, 1, &B) == GS_SUCCESS);
  CU_ASSERT(B.nhalo == 0 && B.halo == NULL && B.diag->nnz == 0 && B.off->nnz == 0);
  gs_dist_block_free(&B);
  gs_csr_destroy(&A);
}

/* A block diagonal matrix split along its blocks: no part has a halo or sends anything, and
 * the product is exact. Then a partition across the blocks does have halos. */
static void test_split_block_diagonal(void)
{
  uint64_t rng = gs_test_seed() ^ 0xb10cu;
  const int trials = gs_test_quick() ? 2 : 10;
  for (int t = 0; t < trials; ++t) {
    const int nparts = rand_int(&rng, 1, 6);
    gs_idx_t first[7];
    first[0] = 0;
    for (int k = 0; k < nparts; ++k) first[k + 1] = first[k] + rand_int(&rng, 1, 30);
    const gs_idx_t m = first[nparts];
    gs_coo_t *C = NULL;
    CU_ASSERT_FATAL(gs_coo_create(&C, m, m, 16) == GS_SUCCESS);
    for (int k = 0; k < nparts; ++k)
      for (gs_idx_t i = first[k]; i < first[k + 1]; ++i)
        for (gs_idx_t j = first[k]; j < first[k + 1]; ++j)
          if (i == j || gs_test_uniform(&rng) < 0.3)
            CU_ASSERT_FATAL(gs_coo_push(C, i, j, 2.0 * gs_test_uniform(&rng) - 1.0) ==
                            GS_SUCCESS);
    gs_csr_t *A = csr_of(C);
    gs_dist_block_t *blocks = calloc((size_t)nparts, sizeof *blocks);
    CU_ASSERT_FATAL(blocks != NULL);
    for (int p = 0; p < nparts; ++p) {
      CU_ASSERT_FATAL(gs_dist_split(A, first, nparts, p, &blocks[p]) == GS_SUCCESS);
      CU_ASSERT(blocks[p].nhalo == 0 && blocks[p].halo == NULL);
      CU_ASSERT(blocks[p].off->nnz == 0 && blocks[p].off->n == 0);
      for (int q = 0; q <= nparts; ++q) CU_ASSERT_EQUAL(blocks[p].recv_off[q], 0);
    }
    CU_ASSERT_FATAL(gs_dist_send_lists(blocks, nparts) == GS_SUCCESS);
    for (int p = 0; p < nparts; ++p) {
      CU_ASSERT(blocks[p].nsend == 0 && blocks[p].send_idx == NULL);
      for (int q = 0; q <= nparts; ++q) CU_ASSERT_EQUAL(blocks[p].send_off[q], 0);
      gs_dist_block_free(&blocks[p]);
    }
    free(blocks);
    check_split(A, first, nparts, &rng); /* all rows in diag: the product is bit-exact */
    check_split_random_cuts(A, nparts + 1, &rng);
    gs_csr_destroy(&A);
  }
}

static void test_split_tiny(void)
{
  uint64_t rng = gs_test_seed() ^ 0x1u;
  const double three = 3.0, zero = 0.0;
  const gs_idx_t first[] = {0, 1};
  gs_csr_t *A = gs_test_csr_from_dense(1, 1, &three);
  gs_dist_block_t B;
  CU_ASSERT_FATAL(gs_dist_split(A, first, 1, 0, &B) == GS_SUCCESS);
  CU_ASSERT(B.rows == 1 && B.row0 == 0 && B.diag->nnz == 1 && B.diag->val[0] == 3.0);
  CU_ASSERT(B.diag->col[0] == 0 && B.off->m == 1 && B.off->n == 0 && B.off->nnz == 0);
  CU_ASSERT(B.nhalo == 0 && B.halo == NULL && B.recv_off[0] == 0 && B.recv_off[1] == 0);
  CU_ASSERT_FATAL(gs_dist_send_lists(&B, 1) == GS_SUCCESS);
  CU_ASSERT(B.nsend == 0 && B.send_idx == NULL && B.send_off[0] == 0 && B.send_off[1] == 0);
  gs_dist_block_free(&B);
  gs_dist_block_free(&B); /* zeroed: freeing again is harmless */
  gs_dist_block_free(NULL);
  check_split(A, first, 1, &rng);
  gs_csr_destroy(&A);
  A = gs_test_csr_from_dense(1, 1, &zero); /* 1 x 1 without its entry */
  check_split(A, first, 1, &rng);
  gs_csr_destroy(&A);
  /* 2 x 2 anti-diagonal in two parts: each part's only entry is in its halo */
  const double anti[] = {0, 2, 5, 0};
  const gs_idx_t half[] = {0, 1, 2};
  A = gs_test_csr_from_dense(2, 2, anti);
  CU_ASSERT_FATAL(gs_dist_split(A, half, 2, 1, &B) == GS_SUCCESS);
  CU_ASSERT(B.nhalo == 1 && B.halo[0] == 0 && B.recv_off[0] == 0 && B.recv_off[1] == 1 &&
            B.recv_off[2] == 1);
  CU_ASSERT(B.diag->nnz == 0 && B.off->nnz == 1 && B.off->col[0] == 0 && B.off->val[0] == 5.0);
  gs_dist_block_free(&B);
  check_split(A, half, 2, &rng);
  gs_csr_destroy(&A);
}

/* A hand-checked 5 x 5 in parts {0,1}, {2}, {3,4}. */
static void test_split_hand_checked(void)
{
  const double a[] = {1, 0, 2, 0, 3,  /* row 0: halo 2 (part 1), 4 (part 2) */
                      0, 4, 0, 5, 0,  /* row 1: halo 3 (part 2) */
                      6, 0, 7, 0, 0,  /* row 2: halo 0 (part 0) */
                      0, 0, 8, 9, 0,  /* row 3: halo 2 */
                      0, 10, 0, 0, 11};
  const gs_idx_t first[] = {0, 2, 3, 5};
  gs_csr_t *A = gs_test_csr_from_dense(5, 5, a);
  gs_dist_block_t B[3];
  for (int p = 0; p < 3; ++p) CU_ASSERT_FATAL(gs_dist_split(A, first, 3, p, &B[p]) == GS_SUCCESS);
  const gs_idx_t halo0[] = {2, 3, 4}, roff0[] = {0, 0, 1, 3};
  CU_ASSERT_FATAL(B[0].nhalo == 3);
  CU_ASSERT(memcmp(B[0].halo, halo0, sizeof halo0) == 0);
  CU_ASSERT(memcmp(B[0].recv_off, roff0, sizeof roff0) == 0);
  const gs_idx_t ocol0[] = {0, 2, 1}; /* row 0: columns 2, 4; row 1: column 3 */
  CU_ASSERT(B[0].off->nnz == 3 && memcmp(B[0].off->col, ocol0, sizeof ocol0) == 0);
  CU_ASSERT_FATAL(B[1].nhalo == 1 && B[1].halo[0] == 0);
  CU_ASSERT_FATAL(B[2].nhalo == 2 && B[2].halo[0] == 1 && B[2].halo[1] == 2);
  const gs_idx_t roff2[] = {0, 1, 2, 2};
  CU_ASSERT(memcmp(B[2].recv_off, roff2, sizeof roff2) == 0);
  CU_ASSERT_FATAL(gs_dist_send_lists(B, 3) == GS_SUCCESS);
  /* part 0 sends row 0 to part 1 and row 1 to part 2; part 1 sends its row to 0 and 2;
     part 2 sends rows 3, 4 (local 0, 1) to part 0 */
  const gs_idx_t soff0[] = {0, 0, 1, 2}, sidx0[] = {0, 1};
  const gs_idx_t soff1[] = {0, 1, 1, 2}, sidx1[] = {0, 0};
  const gs_idx_t soff2[] = {0, 2, 2, 2}, sidx2[] = {0, 1};
  CU_ASSERT(B[0].nsend == 2 && memcmp(B[0].send_off, soff0, sizeof soff0) == 0 &&
            memcmp(B[0].send_idx, sidx0, sizeof sidx0) == 0);
  CU_ASSERT(B[1].nsend == 2 && memcmp(B[1].send_off, soff1, sizeof soff1) == 0 &&
            memcmp(B[1].send_idx, sidx1, sizeof sidx1) == 0);
  CU_ASSERT(B[2].nsend == 2 && memcmp(B[2].send_off, soff2, sizeof soff2) == 0 &&
            memcmp(B[2].send_idx, sidx2, sizeof sidx2) == 0);
  for (int p = 0; p < 3; ++p) gs_dist_block_free(&B[p]);
  gs_csr_destroy(&A);
}

/* Fills B with junk, as an uninitialized block would be. */
static void junk(gs_dist_block_t *B) { memset(B, 0x5a, sizeof *B); }

static int block_is_empty(const gs_dist_block_t *B)
{
  return B->diag == NULL && B->off == NULL && B->halo == NULL && B->recv_off == NULL &&
         B->send_idx == NULL && B->send_off == NULL && B->nhalo == 0 && B->nsend == 0 &&
         B->rows == 0;
}

static void test_split_refusals(void)
{
  uint64_t rng = gs_test_seed() ^ 0xbadu;
  gs_csr_t *A = gs_test_random_csr(&rng, 10, 10, 0.3), *R = gs_test_random_csr(&rng, 10, 12, 0.3);
  CU_ASSERT_FATAL(A && R);
  const gs_idx_t first[] = {0, 4, 10};
  gs_dist_block_t B;
  junk(&B);
  CU_ASSERT(gs_dist_split(R, first, 2, 0, &B) == GS_ERR_DIMENSION);
  CU_ASSERT(strstr(gs_last_error(), "square") != NULL);
  CU_ASSERT(block_is_empty(&B));
  junk(&B);
  CU_ASSERT(gs_dist_split(NULL, first, 2, 0, &B) == GS_ERR_INVALID_ARG);
  CU_ASSERT(block_is_empty(&B));
  CU_ASSERT(gs_dist_split(A, NULL, 2, 0, &B) == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_dist_split(A, first, 2, 0, NULL) == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_dist_split(A, first, 0, 0, &B) == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_dist_split(A, first, 2, -1, &B) == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_dist_split(A, first, 2, 2, &B) == GS_ERR_INVALID_ARG);
  CU_ASSERT(block_is_empty(&B));
  const gs_idx_t late[] = {1, 4, 10}, short_[] = {0, 4, 9}, flat[] = {0, 4, 4, 10},
                 down[] = {0, 6, 4, 10};
  junk(&B);
  CU_ASSERT(gs_dist_split(A, late, 2, 1, &B) == GS_ERR_DIMENSION);
  CU_ASSERT(block_is_empty(&B));
  CU_ASSERT(gs_dist_split(A, short_, 2, 0, &B) == GS_ERR_DIMENSION);
  CU_ASSERT(gs_dist_split(A, flat, 3, 0, &B) == GS_ERR_DIMENSION); /* an empty part */
  CU_ASSERT(gs_dist_split(A, down, 3, 2, &B) == GS_ERR_DIMENSION);
  CU_ASSERT(block_is_empty(&B));
  /* a column out of range in the part's rows is refused; another part is still split */
  if (A->row_ptr[10] > A->row_ptr[4]) {
    const gs_idx_t keep = A->col[A->row_ptr[4]];
    A->col[A->row_ptr[4]] = 10;
    junk(&B);
    CU_ASSERT(gs_dist_split(A, first, 2, 1, &B) == GS_ERR_INVALID_ARG);
    CU_ASSERT(block_is_empty(&B));
    CU_ASSERT_FATAL(gs_dist_split(A, first, 2, 0, &B) == GS_SUCCESS);
    gs_dist_block_free(&B);
    A->col[A->row_ptr[4]] = keep;
  }
  gs_csr_destroy(&A);
  gs_csr_destroy(&R);
}

static void test_send_lists_refusals(void)
{
  uint64_t rng = gs_test_seed() ^ 0x5e4du;
  gs_csr_t *A = gs_test_random_csr(&rng, 30, 30, 0.2);
  CU_ASSERT_FATAL(A != NULL);
  const gs_idx_t first[] = {0, 10, 20, 30};
  gs_dist_block_t B[3];
  for (int p = 0; p < 3; ++p) CU_ASSERT_FATAL(gs_dist_split(A, first, 3, p, &B[p]) == GS_SUCCESS);
  CU_ASSERT(gs_dist_send_lists(NULL, 3) == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_dist_send_lists(B, 0) == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_dist_send_lists(B, 2) == GS_ERR_INVALID_ARG); /* blocks are parts of 3 */
  gs_dist_block_t t = B[0]; /* out of order */
  B[0] = B[1];
  B[1] = t;
  CU_ASSERT(gs_dist_send_lists(B, 3) == GS_ERR_INVALID_ARG);
  t = B[0];
  B[0] = B[1];
  B[1] = t;
  /* one block of another partition */
  const gs_idx_t other[] = {0, 12, 20, 30};
  gs_dist_block_t saved = B[1];
  CU_ASSERT_FATAL(gs_dist_split(A, other, 3, 1, &B[1]) == GS_SUCCESS);
  CU_ASSERT(gs_dist_send_lists(B, 3) == GS_ERR_INVALID_ARG);
  gs_dist_block_free(&B[1]);
  B[1] = saved;
  for (int p = 0; p < 3; ++p) CU_ASSERT(B[p].send_off == NULL && B[p].send_idx == NULL);
  CU_ASSERT_FATAL(gs_dist_send_lists(B, 3) == GS_SUCCESS);
  check_sends(B, 3);
  for (int p = 0; p < 3; ++p) gs_dist_block_free(&B[p]);
  gs_csr_destroy(&A);
}

/* ---- real matrices --------------------------------------------------------------------------- */

static void test_real_matrices(void)
{
  static const char *const quick[] = {"494_bus", "west0479", "fs_183_1", NULL};
  static const char *const full[] = {"494_bus", "west0479", "fs_183_1", "nos7", "add32",
                                     "orsreg_1", "zenios", "bcsstk13", "Si2", "wiki-Vote",
                                     "as-caida20071105", NULL};
  if (!gs_test_have_matrices()) return;
  uint64_t rng = gs_test_seed() ^ 0x4ea1u;
  const char *const *names = gs_test_quick() ? quick : full;
  for (int k = 0; names[k]; ++k) {
    if (!gs_test_have_matrix(names[k])) continue;
    gs_csr_t *A = NULL;
    CU_ASSERT_FATAL(gs_mm_read_csr(gs_test_matrix(names[k]), &A) == GS_SUCCESS);
    CU_ASSERT_FATAL(A->m == A->n);
    check_partition(A->row_ptr, A->m, 2);
    check_partition(A->row_ptr, A->m, 4);
    check_split_balanced(A, 2, &rng);
    check_split_balanced(A, 4, &rng);
    gs_csr_destroy(&A);
  }
}

int main(void)
{
  CU_TestInfo tests[] = {
      {"partition: random row lengths", test_partition_random},
      {"partition: one huge row", test_partition_skewed},
      {"partition: hand-checked", test_partition_hand_checked},
      {"partition: refusals", test_partition_refusals},
      {"split: random matrices, nparts 1 2 3 7 m", test_split_random},
      {"split: unsorted columns", test_split_unsorted},
      {"split: empty rows, no entries", test_split_empty_rows},
      {"split: block diagonal (no halo)", test_split_block_diagonal},
      {"split: 1x1 and 2x2", test_split_tiny},
      {"split and send lists: hand-checked 5x5", test_split_hand_checked},
      {"split: refusals", test_split_refusals},
      {"send lists: refusals", test_send_lists_refusals},
      {"real matrices: split, send lists, product", test_real_matrices},
      CU_TEST_INFO_NULL};
  return gs_test_main("dist_host", tests, 0);
}
