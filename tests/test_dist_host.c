/* tests/test_dist_host.c: the host side of the distributed matrix (multigpu/partition.c): row
 * blocks balanced by work, the diag/off split with its halo, the halo exchange lists (checked by
 * carrying out the exchange and the distributed product), and reverse Cuthill-McKee. No GPU. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "multigpu/partition.h"
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

/* A job of processes builds each part's send lists from the whole matrix
 * (gs_dist_send_list_part): they must be gs_dist_send_lists', entry for entry. */
static void check_send_list_part(const gs_csr_t *A, const gs_idx_t *first, int nparts,
                                 const gs_dist_block_t *blocks)
{
  int same = 1;
  for (int p = 0; p < nparts; ++p) {
    gs_dist_block_t B;
    memset(&B, 0, sizeof B);
    CU_ASSERT_FATAL(gs_dist_split(A, first, nparts, p, &B) == GS_SUCCESS);
    CU_ASSERT_FATAL(gs_dist_send_list_part(A, first, nparts, &B) == GS_SUCCESS);
    same &= B.nsend == blocks[p].nsend;
    for (int q = 0; same && q <= nparts; ++q) same &= B.send_off[q] == blocks[p].send_off[q];
    for (gs_idx_t k = 0; same && k < B.nsend; ++k) same &= B.send_idx[k] == blocks[p].send_idx[k];
    /* a second call replaces the first's lists */
    CU_ASSERT_FATAL(gs_dist_send_list_part(A, first, nparts, &B) == GS_SUCCESS);
    same &= B.nsend == blocks[p].nsend;
    gs_dist_block_free(&B);
  }
  CU_ASSERT(same);
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
  check_send_list_part(A, first, nparts, blocks);
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

/* The split's threads: shares of one entry upwards, 1 to 7 threads per part (shares empty,
 * meeting inside a bitmap word, a thread's rows all diagonal): the same checks as one thread. */
static void test_split_threads(void)
{
  uint64_t rng = gs_test_seed() ^ 0x7417u;
  const gs_off_t saved = gs_dist_split_share_min;
  const int trials = gs_test_quick() ? 3 : 15;
  for (int t = 0; t < trials; ++t) {
    const gs_idx_t m = rand_int(&rng, 1, 300);
    const double density = 0.002 + 0.2 * gs_test_uniform(&rng);
    gs_csr_t *A = gs_test_random_csr(&rng, m, m, density);
    CU_ASSERT_FATAL(A != NULL);
    const int nparts = rand_int(&rng, 1, 4), per = rand_int(&rng, 1, 7);
    gs_dist_split_share_min = rand_int(&rng, 1, 40);
    gs_mm_set_threads(nparts * per);
    check_split_balanced(A, nparts, &rng);
    check_split_random_cuts(A, nparts, &rng);
    gs_csr_destroy(&A);
  }
  gs_mm_set_threads(0);
  gs_dist_split_share_min = saved;
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
  CU_ASSERT(gs_dist_send_list_part(NULL, NULL, 3, B) == GS_ERR_INVALID_ARG);
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
  /* the one-part version: a block of another partition, or parts counted otherwise */
  CU_ASSERT(gs_dist_send_list_part(A, other, 3, &B[1]) == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_dist_send_list_part(A, first, 2, &B[1]) == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_dist_send_list_part(A, first, 3, NULL) == GS_ERR_INVALID_ARG);
  check_sends(B, 3); /* refusals leave the lists as they were */
  for (int p = 0; p < 3; ++p) gs_dist_block_free(&B[p]);
  gs_csr_destroy(&A);
}

/* ---- RCM and the symmetric permutation --------------------------------------------------------- */

/* B(k, l) == A(perm[k], perm[l]) entry for entry (A has no repeated column in a row), B's rows
 * sorted, nothing else in B. */
static void check_permuted(const gs_csr_t *A, const gs_idx_t *perm, const gs_csr_t *B)
{
  const gs_idx_t n = A->m;
  CU_ASSERT_FATAL(B->m == n && B->n == n);
  CU_ASSERT_EQUAL(B->nnz, A->nnz);
  CU_ASSERT(gs_csr_validate(B) == GS_SUCCESS);
  CU_ASSERT(gs_csr_is_sorted(B));
  CU_ASSERT_EQUAL(B->symmetry, A->symmetry);
  double *val = malloc(((size_t)n + 1) * sizeof *val);
  char *have = calloc((size_t)n + 1, 1);
  CU_ASSERT_FATAL(val && have);
  int ok = 1;
  for (gs_idx_t k = 0; k < n; ++k) {
    const gs_idx_t i = perm[k];
    for (gs_off_t a = A->row_ptr[i]; a < A->row_ptr[i + 1]; ++a) {
      have[A->col[a]] = 1;
      val[A->col[a]] = A->val[a];
    }
    if (B->row_ptr[k + 1] - B->row_ptr[k] != A->row_ptr[i + 1] - A->row_ptr[i]) ok = 0;
    for (gs_off_t b = B->row_ptr[k]; b < B->row_ptr[k + 1]; ++b) {
      const gs_idx_t j = perm[B->col[b]];
      if (!have[j] || val[j] != B->val[b]) ok = 0;
      have[j] = 0; /* each entry of A's row used once */
    }
    for (gs_off_t a = A->row_ptr[i]; a < A->row_ptr[i + 1]; ++a) have[A->col[a]] = 0;
  }
  CU_ASSERT(ok);
  free(val);
  free(have);
}

static gs_csr_t *permuted(const gs_csr_t *A, const gs_idx_t *perm)
{
  gs_csr_t *B = NULL;
  CU_ASSERT_FATAL(gs_csr_permute_sym(A, perm, &B) == GS_SUCCESS);
  check_permuted(A, perm, B);
  return B;
}

/* RCM's perm of A: a permutation, the same on a second call. */
static gs_idx_t *rcm_of(const gs_csr_t *A)
{
  gs_idx_t *p = malloc(((size_t)A->m + 1) * sizeof *p), *q = malloc(((size_t)A->m + 1) * sizeof *q);
  CU_ASSERT_FATAL(p && q);
  CU_ASSERT_FATAL(gs_csr_rcm(A, p) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_test_is_permutation(p, A->m));
  CU_ASSERT_FATAL(gs_csr_rcm(A, q) == GS_SUCCESS);
  CU_ASSERT(memcmp(p, q, (size_t)A->m * sizeof *p) == 0);
  free(q);
  return p;
}

/* n x n with entries for offsets j - i in [lo, hi] (values random, never zero). */
static gs_csr_t *band(uint64_t *rng, gs_idx_t n, int lo, int hi)
{
  gs_coo_t *C = NULL;
  CU_ASSERT_FATAL(gs_coo_create(&C, n, n, 16) == GS_SUCCESS);
  for (gs_idx_t i = 0; i < n; ++i)
    for (int d = lo; d <= hi; ++d)
      if (i + d >= 0 && i + d < n)
        CU_ASSERT_FATAL(gs_coo_push(C, i, i + d, 1.0 + gs_test_uniform(rng)) == GS_SUCCESS);
  return csr_of(C);
}

/* A full band of half-width b (the b-th power of a path), scrambled by a random symmetric
 * permutation, comes back to bandwidth exactly b, the least any ordering has. Why, for
 * n >= 2b + 1: the two ends of the path are the only vertices of least degree (b), so the start
 * is an end and the pseudo-peripheral search ends on an end; from an end e, the first level is
 * the b vertices nearest e, whose degrees b+1, ..., 2b differ (n - 1 >= 2b), so ties never reach
 * the scrambled indices; after that, each vertex taken from the queue has exactly one
 * unnumbered neighbour. So CM numbers the path in order from one end, and reversing keeps the
 * bandwidth. The same for the upper band alone: RCM uses the pattern of A + A^T. */
static void test_rcm_band(void)
{
  uint64_t rng = gs_test_seed() ^ 0xba4du;
  const int trials = gs_test_quick() ? 6 : 40;
  for (int t = 0; t < trials; ++t) {
    const int b = 1 + t % 4;
    const gs_idx_t n = rand_int(&rng, 2 * b + 1, 2 * b + (gs_test_quick() ? 60 : 300));
    gs_csr_t *A = t % 3 == 2 ? band(&rng, n, 0, b) : band(&rng, n, -b, b);
    CU_ASSERT_EQUAL(gs_csr_bandwidth(A), b);
    gs_idx_t *q = random_perm(&rng, n);
    gs_csr_t *S = permuted(A, q);
    if (t % 5 == 4) shuffle_rows(&rng, S);
    gs_idx_t *p = rcm_of(S);
    gs_csr_t *R = permuted(S, p);
    CU_ASSERT_EQUAL(gs_csr_bandwidth(R), b);
    CU_ASSERT(gs_csr_bandwidth(R) <= gs_csr_bandwidth(S));
    free(p);
    free(q);
    gs_csr_destroy(&R);
    gs_csr_destroy(&S);
    gs_csr_destroy(&A);
  }
  /* tridiagonal of 2 rows: bandwidth 1 whatever the order */
  gs_csr_t *A = band(&rng, 2, -1, 1);
  gs_idx_t *p = rcm_of(A);
  gs_csr_t *R = permuted(A, p);
  CU_ASSERT_EQUAL(gs_csr_bandwidth(R), 1);
  free(p);
  gs_csr_destroy(&R);
  gs_csr_destroy(&A);
}

/* Label of every vertex's connected component in the graph of A + A^T (union-find). */
static gs_idx_t find(gs_idx_t *up, gs_idx_t v)
{
  while (up[v] != v) v = up[v] = up[up[v]];
  return v;
}

/* Several random connected components (a random tree plus extra edges each) and isolated
 * vertices under scrambled labels: every component is numbered contiguously, inside each run
 * every vertex but the run's last has a neighbour later in the run (it was reached from one in
 * CM order), and the isolated vertices (least degree, so numbered first by CM) come last. */
static void test_rcm_components(void)
{
  uint64_t rng = gs_test_seed() ^ 0xc0c0u;
  const int trials = gs_test_quick() ? 3 : 20;
  for (int t = 0; t < trials; ++t) {
    const int ncomp = rand_int(&rng, 1, 6), niso = rand_int(&rng, 0, 5);
    gs_idx_t sizes[6], n = niso;
    for (int c = 0; c < ncomp; ++c) n += sizes[c] = rand_int(&rng, 2, 40);
    gs_idx_t *label = random_perm(&rng, n); /* scrambled names of the vertices */
    gs_coo_t *C = NULL;
    CU_ASSERT_FATAL(gs_coo_create(&C, n, n, 16) == GS_SUCCESS);
    gs_idx_t base = 0;
    for (int c = 0; c < ncomp; ++c) {
      for (gs_idx_t v = 1; v < sizes[c]; ++v) { /* tree edge to an earlier vertex, one way */
        gs_idx_t u = rand_int(&rng, 0, v - 1);
        CU_ASSERT_FATAL(gs_coo_push(C, label[base + v], label[base + u], 1.0) == GS_SUCCESS);
      }
      for (int e = 0; e < sizes[c] / 2; ++e) {
        gs_idx_t u = base + rand_int(&rng, 0, sizes[c] - 1), v = base + rand_int(&rng, 0, sizes[c] - 1);
        CU_ASSERT_FATAL(gs_coo_push(C, label[u], label[v], -1.0) == GS_SUCCESS);
      }
      base += sizes[c];
    }
    for (gs_idx_t v = base; v < n; ++v) /* isolated, with or without a diagonal entry */
      if (v % 2) CU_ASSERT_FATAL(gs_coo_push(C, label[v], label[v], 2.0) == GS_SUCCESS);
    gs_csr_t *A = csr_of(C);
    gs_idx_t *p = rcm_of(A);

    gs_idx_t *up = malloc((size_t)n * sizeof *up), *pos = malloc((size_t)n * sizeof *pos);
    CU_ASSERT_FATAL(up && pos);
    for (gs_idx_t v = 0; v < n; ++v) up[v] = v;
    for (gs_idx_t i = 0; i < n; ++i)
      for (gs_off_t a = A->row_ptr[i]; a < A->row_ptr[i + 1]; ++a)
        up[find(up, i)] = find(up, A->col[a]);
    for (gs_idx_t k = 0; k < n; ++k) pos[p[k]] = k;
    int reached = 1, iso_last = 1;
    gs_idx_t runs = 0;
    for (gs_idx_t k = 0; k < n; ++k) {
      const gs_idx_t v = p[k];
      const int run_end = k == n - 1 || find(up, p[k + 1]) != find(up, v);
      if (k == 0 || find(up, p[k - 1]) != find(up, v)) ++runs;
      if (run_end) continue;
      int later = 0; /* a neighbour (in A or A^T) after v in its run */
      for (gs_idx_t i = 0; i < n && !later; ++i)
        for (gs_off_t a = A->row_ptr[i]; a < A->row_ptr[i + 1]; ++a) {
          const gs_idx_t j = A->col[a];
          if ((i == v && j != v && pos[j] > k) || (j == v && i != v && pos[i] > k)) later = 1;
        }
      if (!later) reached = 0;
    }
    CU_ASSERT_EQUAL(runs, ncomp + niso); /* one run per component: contiguous */
    for (gs_idx_t v = base; v < n; ++v)
      if (pos[label[v]] < n - niso) iso_last = 0;
    CU_ASSERT(reached);
    CU_ASSERT(iso_last);
    free(up);
    free(pos);
    free(p);
    free(label);
    gs_csr_destroy(&A);
  }
}

/* The perm depends on the pattern of A + A^T and the indices only: A^T, A with its rows'
 * entries shuffled, other values, or the diagonal added give the same perm. */
static void test_rcm_deterministic(void)
{
  uint64_t rng = gs_test_seed() ^ 0xde7u;
  const int trials = gs_test_quick() ? 3 : 20;
  for (int t = 0; t < trials; ++t) {
    const gs_idx_t n = rand_int(&rng, 1, 250);
    gs_csr_t *A = gs_test_random_csr(&rng, n, n, 3.0 / n * gs_test_uniform(&rng));
    CU_ASSERT_FATAL(A != NULL);
    gs_idx_t *p = rcm_of(A);
    gs_csr_t *T = NULL, *S = NULL;
    CU_ASSERT_FATAL(gs_csr_transpose(&T, A) == GS_SUCCESS);
    gs_idx_t *pt = rcm_of(T);
    CU_ASSERT(memcmp(p, pt, (size_t)n * sizeof *p) == 0);
    CU_ASSERT_FATAL(gs_csr_copy(&S, A) == GS_SUCCESS);
    shuffle_rows(&rng, S);
    for (gs_off_t a = 0; a < S->nnz; ++a) S->val[a] = gs_test_uniform(&rng);
    gs_idx_t *ps = rcm_of(S);
    CU_ASSERT(memcmp(p, ps, (size_t)n * sizeof *p) == 0);
    gs_coo_t *C = NULL; /* A + I */
    CU_ASSERT_FATAL(gs_csr_to_coo(&C, A) == GS_SUCCESS);
    for (gs_idx_t i = 0; i < n; ++i) CU_ASSERT_FATAL(gs_coo_push(C, i, i, 1.0) == GS_SUCCESS);
    gs_csr_t *D = csr_of(C);
    gs_idx_t *pd = rcm_of(D);
    CU_ASSERT(memcmp(p, pd, (size_t)n * sizeof *p) == 0);
    free(p);
    free(pt);
    free(ps);
    free(pd);
    gs_csr_destroy(&T);
    gs_csr_destroy(&S);
    gs_csr_destroy(&D);
    gs_csr_destroy(&A);
  }
}

/* BFS distances from r on the dense pattern adj (n x n); returns the number of levels, *size
 * the vertices reached. */
static gs_idx_t ref_levels(const unsigned char *adj, gs_idx_t n, gs_idx_t r, gs_idx_t *dist,
                           gs_idx_t *size)
{
  for (gs_idx_t v = 0; v < n; ++v) dist[v] = -1;
  dist[r] = 0;
  gs_idx_t d = 0, reached = 1;
  for (int grew = 1; grew; ++d) {
    grew = 0;
    for (gs_idx_t v = 0; v < n; ++v)
      if (dist[v] == d)
        for (gs_idx_t u = 0; u < n; ++u)
          if (adj[(size_t)v * n + u] && dist[u] < 0) {
            dist[u] = d + 1;
            ++reached;
            grew = 1;
          }
  }
  *size = reached;
  return d; /* levels 0..d-1 hold vertices */
}

/* partition.h's RCM written out plainly on a dense pattern (small n), to compare perm for
 * perm: pattern of A + A^T without the diagonal; each component from the unnumbered vertex of
 * least (degree, index); George and Liu's search (SPARSPAK FNROOT: move to the least (degree,
 * index) vertex of the last level while that deepens the level structure); neighbours in
 * increasing (degree, index); the whole order reversed. */
static void reference_rcm(const gs_csr_t *A, gs_idx_t *perm)
{
  const gs_idx_t n = A->m;
  unsigned char *adj = calloc((size_t)n * n + 1, 1), *numbered = calloc((size_t)n + 1, 1);
  gs_idx_t *deg = calloc((size_t)n + 1, sizeof *deg), *dist = malloc(((size_t)n + 1) * sizeof *dist);
  CU_ASSERT_FATAL(adj && numbered && deg && dist);
  for (gs_idx_t i = 0; i < n; ++i)
    for (gs_off_t a = A->row_ptr[i]; a < A->row_ptr[i + 1]; ++a)
      if (A->col[a] != i) adj[(size_t)i * n + A->col[a]] = adj[(size_t)A->col[a] * n + i] = 1;
  for (gs_idx_t v = 0; v < n; ++v)
    for (gs_idx_t u = 0; u < n; ++u) deg[v] += adj[(size_t)v * n + u];
#define LESS(u, v) (deg[u] < deg[v] || (deg[u] == deg[v] && (u) < (v)))
  gs_idx_t cnt = 0;
  while (cnt < n) {
    gs_idx_t r = -1, size;
    for (gs_idx_t v = 0; v < n; ++v)
      if (!numbered[v] && (r < 0 || LESS(v, r))) r = v;
    gs_idx_t nlvl = ref_levels(adj, n, r, dist, &size);
    while (nlvl > 1 && nlvl < size) {
      gs_idx_t x = -1;
      for (gs_idx_t v = 0; v < n; ++v)
        if (dist[v] == nlvl - 1 && (x < 0 || LESS(v, x))) x = v;
      const gs_idx_t nl = ref_levels(adj, n, x, dist, &size);
      r = x;
      if (nl <= nlvl) break;
      nlvl = nl;
    }
    gs_idx_t head = cnt;
    perm[cnt++] = r;
    numbered[r] = 1;
    while (head < cnt) {
      const gs_idx_t v = perm[head++];
      for (;;) {
        gs_idx_t best = -1;
        for (gs_idx_t u = 0; u < n; ++u)
          if (adj[(size_t)v * n + u] && !numbered[u] && (best < 0 || LESS(u, best))) best = u;
        if (best < 0) break;
        numbered[best] = 1;
        perm[cnt++] = best;
      }
    }
  }
#undef LESS
  for (gs_idx_t a = 0, b = n - 1; a < b; ++a, --b) {
    gs_idx_t t = perm[a];
    perm[a] = perm[b];
    perm[b] = t;
  }
  free(adj);
  free(numbered);
  free(deg);
  free(dist);
}

/* gs_csr_rcm against the plain reference on random nonsymmetric patterns (some pairs stored
 * both ways, some once, repeated entries), forests (where the start is rarely peripheral, so
 * the search takes several steps) and denser graphs. */
static void test_rcm_reference(void)
{
  uint64_t rng = gs_test_seed() ^ 0x2efu;
  const int trials = gs_test_quick() ? 8 : 60;
  for (int t = 0; t < trials; ++t) {
    const gs_idx_t n = rand_int(&rng, 1, gs_test_quick() ? 50 : 120);
    gs_coo_t *C = NULL;
    CU_ASSERT_FATAL(gs_coo_create(&C, n, n, 16) == GS_SUCCESS);
    if (t % 3 == 0) { /* a forest: each vertex hangs from an earlier one, or starts a tree */
      gs_idx_t *label = random_perm(&rng, n);
      for (gs_idx_t v = 1; v < n; ++v)
        if (gs_test_uniform(&rng) < 0.95)
          CU_ASSERT_FATAL(gs_coo_push(C, label[v], label[rand_int(&rng, 0, v - 1)], 1.0) ==
                          GS_SUCCESS);
      free(label);
    } else {
      const double density = (t % 3 == 1 ? 1.5 : 6.0) / n;
      for (gs_idx_t i = 0; i < n; ++i)
        for (gs_idx_t j = 0; j < n; ++j)
          if (gs_test_uniform(&rng) < density) {
            CU_ASSERT_FATAL(gs_coo_push(C, i, j, 1.0) == GS_SUCCESS);
            if (gs_test_uniform(&rng) < 0.3) /* stored both ways */
              CU_ASSERT_FATAL(gs_coo_push(C, j, i, 1.0) == GS_SUCCESS);
          }
    }
    gs_csr_t *A = csr_of(C);
    gs_idx_t *p = rcm_of(A), *want = malloc(((size_t)n + 1) * sizeof *want);
    CU_ASSERT_FATAL(want != NULL);
    reference_rcm(A, want);
    CU_ASSERT(memcmp(p, want, (size_t)n * sizeof *p) == 0);
    free(p);
    free(want);
    gs_csr_destroy(&A);
  }
}

/* Repeated columns keep their order through the sort of permute_sym (a stable sort): a long
 * row (merge path) and a short one (insertion path), values = position in A's row. */
static void test_permute_stable(void)
{
  uint64_t rng = gs_test_seed() ^ 0x57abu;
  const gs_idx_t n = 40;
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_csr_create(&A, n, n, 60 + 5) == GS_SUCCESS);
  for (int k = 0; k < 60; ++k) { /* row 5: columns 39..0, then 39..20 again */
    A->col[k] = 39 - k % 40;
    A->val[k] = k;
  }
  const gs_idx_t shortc[] = {3, 1, 3, 1, 2};
  for (int k = 0; k < 5; ++k) { /* row 6 */
    A->col[60 + k] = shortc[k];
    A->val[60 + k] = k;
  }
  for (gs_idx_t i = 0; i <= n; ++i) A->row_ptr[i] = i <= 5 ? 0 : i == 6 ? 60 : 65;
  CU_ASSERT_FATAL(gs_csr_validate(A) == GS_SUCCESS);
  for (int t = 0; t < 4; ++t) {
    gs_idx_t *q = random_perm(&rng, n);
    if (t == 0)
      for (gs_idx_t k = 0; k < n; ++k) q[k] = k;
    gs_csr_t *B = NULL;
    CU_ASSERT_FATAL(gs_csr_permute_sym(A, q, &B) == GS_SUCCESS);
    CU_ASSERT_EQUAL(B->nnz, 65);
    int ok = 1;
    for (gs_idx_t k = 0; k < n; ++k) {
      const gs_off_t len = B->row_ptr[k + 1] - B->row_ptr[k];
      if (len != (q[k] == 5 ? 60 : q[k] == 6 ? 5 : 0)) ok = 0;
      for (gs_off_t b = B->row_ptr[k] + 1; b < B->row_ptr[k + 1]; ++b)
        if (B->col[b] < B->col[b - 1] || (B->col[b] == B->col[b - 1] && B->val[b] <= B->val[b - 1]))
          ok = 0;
      for (gs_off_t b = B->row_ptr[k]; b < B->row_ptr[k + 1]; ++b) /* the entry it came from */
        if (A->col[A->row_ptr[q[k]] + (gs_off_t)B->val[b]] != q[B->col[b]]) ok = 0;
    }
    CU_ASSERT(ok);
    gs_csr_destroy(&B);
    free(q);
  }
  gs_csr_destroy(&A);
}

/* permute_sym with random permutations, on sorted and unsorted nonsymmetric matrices; the
 * inverse permutation brings A back. */
static void test_permute_random(void)
{
  uint64_t rng = gs_test_seed() ^ 0x9e3u;
  const int trials = gs_test_quick() ? 4 : 30;
  for (int t = 0; t < trials; ++t) {
    const gs_idx_t n = rand_int(&rng, 1, 200);
    gs_csr_t *A = gs_test_random_csr(&rng, n, n, t % 2 ? 0.02 : 0.3); /* rows > 16: merges */
    CU_ASSERT_FATAL(A != NULL);
    A->symmetry = t % 3 == 0 ? GS_SYM_SYMMETRIC : GS_SYM_GENERAL;
    if (t % 4 == 3) shuffle_rows(&rng, A);
    gs_idx_t *q = random_perm(&rng, n), *inv = malloc(((size_t)n + 1) * sizeof *inv);
    CU_ASSERT_FATAL(inv != NULL);
    for (gs_idx_t k = 0; k < n; ++k) inv[q[k]] = k;
    gs_csr_t *B = permuted(A, q), *back = permuted(B, inv);
    if (gs_csr_is_sorted(A)) { /* P^T (P A P^T) P = A, entry for entry */
      CU_ASSERT(memcmp(back->row_ptr, A->row_ptr, ((size_t)n + 1) * sizeof *A->row_ptr) == 0);
      CU_ASSERT(memcmp(back->col, A->col, (size_t)A->nnz * sizeof *A->col) == 0);
      CU_ASSERT(memcmp(back->val, A->val, (size_t)A->nnz * sizeof *A->val) == 0);
    }
    free(q);
    free(inv);
    gs_csr_destroy(&B);
    gs_csr_destroy(&back);
    gs_csr_destroy(&A);
  }
}

static void test_rcm_refusals(void)
{
  uint64_t rng = gs_test_seed() ^ 0x4efu;
  gs_csr_t *A = gs_test_random_csr(&rng, 6, 6, 0.4), *R = gs_test_random_csr(&rng, 6, 7, 0.4);
  gs_csr_t *B = (gs_csr_t *)&rng, *Z = NULL;
  CU_ASSERT_FATAL(A && R);
  gs_idx_t p[8];
  CU_ASSERT(gs_csr_rcm(R, p) == GS_ERR_DIMENSION);
  CU_ASSERT(gs_csr_rcm(NULL, p) == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_csr_rcm(A, NULL) == GS_ERR_INVALID_ARG);
  const gs_idx_t dup[] = {0, 1, 2, 3, 4, 4}, big[] = {0, 1, 2, 3, 4, 6}, neg[] = {0, 1, 2, 3, -1, 5};
  const gs_idx_t id[] = {0, 1, 2, 3, 4, 5};
  CU_ASSERT(gs_csr_permute_sym(A, dup, &B) == GS_ERR_INVALID_ARG);
  CU_ASSERT(strstr(gs_last_error(), "not a permutation") != NULL);
  CU_ASSERT_PTR_NULL(B);
  B = (gs_csr_t *)&rng;
  CU_ASSERT(gs_csr_permute_sym(A, big, &B) == GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NULL(B);
  CU_ASSERT(gs_csr_permute_sym(A, neg, &B) == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_csr_permute_sym(R, id, &B) == GS_ERR_DIMENSION);
  CU_ASSERT(gs_csr_permute_sym(NULL, id, &B) == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_csr_permute_sym(A, NULL, &B) == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_csr_permute_sym(A, id, NULL) == GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NULL(B);
  /* a malformed matrix: column out of range */
  if (A->nnz > 0) {
    gs_idx_t keep = A->col[0];
    A->col[0] = 6;
    CU_ASSERT(gs_csr_rcm(A, p) == GS_ERR_INVALID_ARG);
    CU_ASSERT(gs_csr_permute_sym(A, id, &B) == GS_ERR_INVALID_ARG);
    A->col[0] = keep;
  }
  /* 0 x 0 and 1 x 1 */
  CU_ASSERT_FATAL(gs_csr_create(&Z, 0, 0, 0) == GS_SUCCESS);
  CU_ASSERT(gs_csr_rcm(Z, p) == GS_SUCCESS);
  CU_ASSERT(gs_csr_permute_sym(Z, p, &B) == GS_SUCCESS);
  CU_ASSERT(B != NULL && B->m == 0 && B->nnz == 0);
  gs_csr_destroy(&B);
  gs_csr_destroy(&Z);
  const double one = 4.0;
  Z = gs_test_csr_from_dense(1, 1, &one);
  p[0] = 7;
  CU_ASSERT(gs_csr_rcm(Z, p) == GS_SUCCESS);
  CU_ASSERT_EQUAL(p[0], 0);
  gs_csr_destroy(&Z);
  gs_csr_destroy(&A);
  gs_csr_destroy(&R);
}

static void test_bandwidth(void)
{
  gs_csr_t *Z = NULL;
  CU_ASSERT_FATAL(gs_csr_create(&Z, 5, 5, 0) == GS_SUCCESS);
  CU_ASSERT_EQUAL(gs_csr_bandwidth(Z), 0);
  gs_csr_destroy(&Z);
  CU_ASSERT_EQUAL(gs_csr_bandwidth(NULL), -1);
  const double d[] = {1, 0, 0, 0, 2, 0, 0, 0, 3};
  gs_csr_t *A = gs_test_csr_from_dense(3, 3, d);
  CU_ASSERT_EQUAL(gs_csr_bandwidth(A), 0);
  gs_csr_destroy(&A);
  const double lower[] = {1, 0, 0, 0, 2, 0, 5, 0, 3}; /* (2, 0): below the diagonal */
  A = gs_test_csr_from_dense(3, 3, lower);
  CU_ASSERT_EQUAL(gs_csr_bandwidth(A), 2);
  gs_csr_destroy(&A);
  const double wide[] = {0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0}; /* 2 x 7, (0, 6) */
  A = gs_test_csr_from_dense(2, 7, wide);
  CU_ASSERT_EQUAL(gs_csr_bandwidth(A), 6);
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
    /* the same after RCM */
    gs_idx_t *p = rcm_of(A);
    gs_csr_t *R = permuted(A, p);
    check_split_balanced(R, 4, &rng);
    free(p);
    gs_csr_destroy(&R);
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
      {"split: threads, shares down to one entry", test_split_threads},
      {"split: unsorted columns", test_split_unsorted},
      {"split: empty rows, no entries", test_split_empty_rows},
      {"split: block diagonal (no halo)", test_split_block_diagonal},
      {"split: 1x1 and 2x2", test_split_tiny},
      {"split and send lists: hand-checked 5x5", test_split_hand_checked},
      {"split: refusals", test_split_refusals},
      {"send lists: refusals", test_send_lists_refusals},
      {"rcm: scrambled band comes back", test_rcm_band},
      {"rcm: disconnected components", test_rcm_components},
      {"rcm: deterministic, pattern only", test_rcm_deterministic},
      {"rcm: the documented algorithm, perm for perm", test_rcm_reference},
      {"permute_sym: repeated columns keep their order", test_permute_stable},
      {"permute_sym: random permutations", test_permute_random},
      {"rcm and permute_sym: refusals", test_rcm_refusals},
      {"bandwidth", test_bandwidth},
      {"real matrices: split, send lists, product, rcm", test_real_matrices},
      CU_TEST_INFO_NULL};
  return gs_test_main("dist_host", tests, 0);
}
