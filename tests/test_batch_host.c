/* tests/test_batch_host.c: the batch layout (batch/batch_build.c) and the host applies of every
 * batched kernel's layout against the CSR product of each problem, within the componentwise
 * rounding bound of gs_test_spmv_compare, without a GPU. Batches mix 1x1, empty rows, nnz = 0,
 * rectangular problems, a problem wider than the kernels' shared-memory x (3072 columns) and
 * one long row. Random inputs are drawn fresh from the run's seed (printed; GS_TEST_SEED). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "batch/batch_impl.h"
#include "tests/testutil.h"

#define MAXP 64

typedef struct {
  int count;
  gs_csr_t *A[MAXP];
} batch_in_t;

static void free_in(batch_in_t *b)
{
  for (int i = 0; i < b->count; ++i) gs_csr_destroy(&b->A[i]);
  b->count = 0;
}

static void push(batch_in_t *b, gs_csr_t *A)
{
  CU_ASSERT_PTR_NOT_NULL_FATAL(A);
  CU_ASSERT_FATAL(b->count < MAXP);
  b->A[b->count++] = A;
}

static void mixed(batch_in_t *b, uint64_t *s)
{
  b->count = gs_test_batch_mixed(s, b->A, MAXP);
  CU_ASSERT_FATAL(b->count > 0);
}

static void check_layout(const gs_batch_host_t *H, const batch_in_t *b)
{
  CU_ASSERT_EQUAL_FATAL(H->count, b->count);
  gs_off_t row = 0, col = 0, nnz = 0;
  for (int i = 0; i < b->count; ++i) {
    const gs_batch_prob_t *p = &H->prob[i];
    CU_ASSERT_EQUAL(H->row_off[i], row);
    CU_ASSERT_EQUAL(H->col_off[i], col);
    CU_ASSERT_EQUAL(p->row, row);
    CU_ASSERT_EQUAL(p->col, col);
    CU_ASSERT_EQUAL(p->m, b->A[i]->m);
    CU_ASSERT_EQUAL(p->n, b->A[i]->n);
    CU_ASSERT_EQUAL(p->nnz, b->A[i]->nnz);
    row += p->m;
    col += p->n;
    nnz += p->nnz;
    gs_csr_t *back = NULL;
    CU_ASSERT_FATAL(gs_batch_host_problem(H, i, &back) == GS_SUCCESS);
    CU_ASSERT_EQUAL(back->nnz, b->A[i]->nnz);
    CU_ASSERT(!memcmp(back->row_ptr, b->A[i]->row_ptr, ((size_t)back->m + 1) * sizeof *back->row_ptr));
    if (back->nnz) {
      CU_ASSERT(!memcmp(back->col, b->A[i]->col, (size_t)back->nnz * sizeof *back->col));
      CU_ASSERT(!memcmp(back->val, b->A[i]->val, (size_t)back->nnz * sizeof *back->val));
    }
    gs_csr_destroy(&back);
  }
  CU_ASSERT_EQUAL(H->row_off[b->count], row);
  CU_ASSERT_EQUAL(H->col_off[b->count], col);
  CU_ASSERT_EQUAL(H->nnz, nnz);
}

static const char *kind_name(int kind)
{
  static const char *names[] = {"csr", "csr-smart", "csr-i", "coo", "ell", "csr16"};
  return names[kind];
}

/* Every kind's host apply against each problem's CSR product, for the scalar cases of BLAS
 * (beta = 0 with y full of NaN, alpha = 0 with x full of NaN). */
static void check_products(const gs_batch_host_t *H, uint64_t *s)
{
  static const double ab[][2] = {{1.0, 0.0}, {2.5, -1.0}, {-1.0, 0.5}, {0.0, 2.0}, {0.0, 0.0}};
  const size_t nx = (size_t)H->col_off[H->count], ny = (size_t)H->row_off[H->count];
  double *x = malloc((nx + 1) * sizeof *x), *y0 = malloc((ny + 1) * sizeof *y0);
  double *y = malloc((ny + 1) * sizeof *y);
  CU_ASSERT_FATAL(x && y0 && y);
  int fits16 = 1; /* every problem within the 16-bit kernels' limits */
  for (int i = 0; i < H->count; ++i)
    fits16 &= H->prob[i].nnz <= GS_BATCH_IDX16_MAX_NNZ && H->prob[i].n <= GS_BATCH_IDX16_MAX_N;
  for (int kind = GS_BATCH_K_CSR; kind <= GS_BATCH_K_CSR16; ++kind)
    for (int nw = 1; nw <= (kind == GS_BATCH_K_CSRI ? 8 : 1); nw += (nw < 4 ? 1 : 4))
      for (size_t c = 0; c < sizeof ab / sizeof ab[0]; ++c) {
        const double alpha = ab[c][0], beta = ab[c][1];
        for (size_t k = 0; k < nx; ++k) x[k] = alpha == 0.0 ? NAN : 2.0 * gs_test_uniform(s) - 1.0;
        for (size_t k = 0; k < ny; ++k) y0[k] = beta == 0.0 ? NAN : 2.0 * gs_test_uniform(s) - 1.0;
        memcpy(y, y0, ny * sizeof *y);
        const gs_status_t st = gs_batch_host_apply_kind(H, kind, nw, 1e9, alpha, x, beta, y);
        if (kind == GS_BATCH_K_CSR16 && !fits16) { /* refused, naming the 16-bit limit */
          CU_ASSERT_EQUAL(st, GS_ERR_UNSUPPORTED);
          CU_ASSERT_PTR_NOT_NULL(strstr(gs_last_error(), "16-bit"));
          continue;
        }
        CU_ASSERT_FATAL(st == GS_SUCCESS);
        if (kind == GS_BATCH_K_CSR16 && alpha != 0.0) { /* csr's order on the same entries */
          double *yc = malloc((ny + 1) * sizeof *yc);
          CU_ASSERT_FATAL(yc != NULL);
          memcpy(yc, y0, ny * sizeof *yc);
          CU_ASSERT_FATAL(gs_batch_host_apply_kind(H, GS_BATCH_K_CSR, 1, 1e9, alpha, x, beta, yc) ==
                          GS_SUCCESS);
          CU_ASSERT(!memcmp(y, yc, ny * sizeof *y)); /* bit for bit */
          free(yc);
        }
        for (int i = 0; i < H->count; ++i) {
          const gs_batch_prob_t *p = &H->prob[i];
          gs_csr_t *A = NULL;
          CU_ASSERT_FATAL(gs_batch_host_problem(H, i, &A) == GS_SUCCESS);
          if (alpha == 0.0) { /* A and x are not read: y = beta y exactly */
            for (int32_t r = 0; r < p->m; ++r)
              CU_ASSERT(y[p->row + r] == (beta == 0.0 ? 0.0 : beta * y0[p->row + r]));
          } else {
            CU_ASSERT(gs_test_spmv_ok(A, GS_OP_N, alpha, x + p->col, beta,
                                      beta == 0.0 ? NULL : y0 + p->row, y + p->row,
                                      "%s (%d warps) problem %d (%dx%d)", kind_name(kind), nw, i,
                                      (int)p->m, (int)p->n));
          }
          gs_csr_destroy(&A);
        }
      }
  free(x);
  free(y0);
  free(y);
}

static void test_mixed_layout_and_products(void)
{
  uint64_t s = gs_test_seed() ^ 0x1;
  for (int rep = 0; rep < (gs_test_quick() ? 1 : 5); ++rep) {
    batch_in_t b;
    gs_batch_host_t H;
    mixed(&b, &s);
    CU_ASSERT_FATAL(gs_batch_host_build(&H, b.count, (const gs_csr_t *const *)b.A) == GS_SUCCESS);
    CU_ASSERT_FALSE(H.shared);
    CU_ASSERT_FALSE(H.square);
    CU_ASSERT(H.max_n >= 4000);
    check_layout(&H, &b);
    check_products(&H, &s);
    gs_batch_host_free(&H);
    free_in(&b);
  }
}

static void test_shared_pattern(void)
{
  uint64_t s = gs_test_seed() ^ 0x2;
  const int count = 7;
  gs_csr_t *P = gs_test_empty_rows(gs_test_random_csr(&s, 23, 23, 0.2), 4);
  double *v = malloc((size_t)count * (size_t)(P->nnz ? P->nnz : 1) * sizeof *v);
  CU_ASSERT_FATAL(v != NULL);
  for (gs_off_t k = 0; k < count * P->nnz; ++k) v[k] = 2.0 * gs_test_uniform(&s) - 1.0;
  gs_batch_host_t H;
  CU_ASSERT_FATAL(gs_batch_host_build_shared(&H, count, P, v) == GS_SUCCESS);
  CU_ASSERT(H.shared);
  CU_ASSERT_EQUAL(H.nrp, (size_t)P->m + 1); /* the pattern once */
  CU_ASSERT_EQUAL(H.nci, (size_t)P->nnz);
  CU_ASSERT_EQUAL(H.nval, (size_t)(count * P->nnz));
  CU_ASSERT_EQUAL(H.nnz, count * P->nnz);
  batch_in_t b = {0, {NULL}};
  for (int i = 0; i < count; ++i) {
    gs_csr_t *A;
    CU_ASSERT_FATAL(gs_csr_copy(&A, P) == GS_SUCCESS);
    memcpy(A->val, v + (size_t)i * P->nnz, (size_t)P->nnz * sizeof *v);
    push(&b, A);
  }
  check_layout(&H, &b);
  check_products(&H, &s);
  /* a NaN value is refused, naming the problem */
  v[P->nnz + 1] = NAN;
  gs_batch_host_t G;
  CU_ASSERT_EQUAL(gs_batch_host_build_shared(&G, count, P, v), GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NOT_NULL(strstr(gs_last_error(), "problem 1"));
  gs_batch_host_free(&H);
  free_in(&b);
  free(v);
  gs_csr_destroy(&P);
}

/* CSR-I's start rows hold each warp's first entry: rp[s] <= e < rp[s + 1] (s = m when e = nnz). */
static void test_csri_starts(void)
{
  uint64_t s = gs_test_seed() ^ 0x3;
  batch_in_t b;
  gs_batch_host_t H;
  mixed(&b, &s);
  CU_ASSERT_FATAL(gs_batch_host_build(&H, b.count, (const gs_csr_t *const *)b.A) == GS_SUCCESS);
  for (int nw = 1; nw <= 8; ++nw) {
    int32_t *start = NULL;
    CU_ASSERT_FATAL(gs_batch_csri_starts(&H, nw, &start) == GS_SUCCESS);
    for (int i = 0; i < H.count; ++i) {
      const gs_batch_prob_t *p = &H.prob[i];
      const int32_t *rp = H.rp + p->rp;
      for (int w = 0; w <= nw; ++w) {
        int64_t e = (int64_t)p->nnz * w / nw;
        int32_t r = start[(size_t)i * (nw + 1) + w];
        if (e == p->nnz) {
          CU_ASSERT(w < nw || r == p->m);
          if (w < nw) CU_ASSERT(r == p->m || rp[r + 1] >= e);
        } else {
          CU_ASSERT_FATAL(r >= 0 && r < p->m);
          CU_ASSERT(rp[r] <= e && e < rp[r + 1]);
        }
      }
    }
    free(start);
  }
  gs_batch_host_free(&H);
  free_in(&b);
}

/* ELL pads each problem to its own longest row and refuses a batch whose padding exceeds
 * max_fill; the automatic rule follows the row statistics. */
/* The rule's pick for a batch of these row statistics: `base` where a problem exceeds the 16-bit
 * limits, its 16-bit twin (base16) where every problem fits (these generated batches do). */
static void check_rule(gs_batch_rowstats_t *rs, const char *base)
{
  char twin[64];
  snprintf(twin, sizeof twin, "%s16", base);
  CU_ASSERT_EQUAL(rs->idx16, 1);
  CU_ASSERT_STRING_EQUAL(gs_batch_rule(rs, NULL), twin);
  rs->idx16 = 0;
  CU_ASSERT_STRING_EQUAL(gs_batch_rule(rs, NULL), base);
  rs->idx16 = 1;
}

static void test_ell_fill_and_auto_rule(void)
{
  uint64_t s = gs_test_seed() ^ 0x4;
  batch_in_t b = {0, {NULL}};
  gs_batch_host_t H;
  gs_batch_rowstats_t rs;
  gs_csr_t **L = NULL;
  /* Laplacians of more than 128 rows on average: balanced rows (fill < 1.25), not small -> stream */
  CU_ASSERT_FATAL(gs_batch_gen(&L, "laplace", 20, 200, 300, gs_test_next(&s)) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_batch_host_build(&H, 20, (const gs_csr_t *const *)L) == GS_SUCCESS);
  gs_batch_host_rowstats(&H, &rs);
  CU_ASSERT(rs.ell_fill < 1.25 && rs.mean_m > 128.0);
  check_rule(&rs, "batch-csr-stream");
  gs_batch_ell_t E;
  CU_ASSERT_FATAL(gs_batch_ell_build(&H, 0.0, &E) == GS_SUCCESS);
  for (int i = 0; i < H.count; ++i)
    CU_ASSERT_EQUAL(E.off[i + 1] - E.off[i], (int64_t)H.prob[i].m * H.prob[i].maxrow);
  gs_batch_ell_free(&E);
  gs_batch_host_free(&H);
  gs_batch_gen_free(&L, 20);
  /* one long row: the fill guard refuses, the rule takes stream */
  push(&b, gs_test_long_row(&s, 300));
  CU_ASSERT_FATAL(gs_batch_host_build(&H, b.count, (const gs_csr_t *const *)b.A) == GS_SUCCESS);
  gs_batch_host_rowstats(&H, &rs);
  CU_ASSERT(rs.long_row >= 8.0);
  check_rule(&rs, "batch-csr-stream");
  CU_ASSERT_EQUAL(gs_batch_ell_build(&H, 3.0, &E), GS_ERR_FORMAT_FILL);
  CU_ASSERT_PTR_NOT_NULL(strstr(gs_last_error(), "max_fill"));
  CU_ASSERT_EQUAL(gs_batch_host_apply_kind(&H, GS_BATCH_K_ELL, 1, 3.0, 1.0, NULL, 0.0, NULL),
                  GS_ERR_FORMAT_FILL);
  gs_batch_host_free(&H);
  free_in(&b);
  /* random rows of 2..17 entries: irregular -> stream */
  CU_ASSERT_FATAL(gs_batch_gen(&L, "random", 20, 80, 200, gs_test_next(&s)) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_batch_host_build(&H, 20, (const gs_csr_t *const *)L) == GS_SUCCESS);
  gs_batch_host_rowstats(&H, &rs);
  CU_ASSERT(rs.mean_m > 64.0 && rs.ell_fill > 1.25);
  check_rule(&rs, "batch-csr-stream");
  gs_batch_host_free(&H);
  gs_batch_gen_free(&L, 20);
  /* small Laplacians: balanced rows -> a thread a row */
  CU_ASSERT_FATAL(gs_batch_gen(&L, "laplace", 20, 10, 120, gs_test_next(&s)) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_batch_host_build(&H, 20, (const gs_csr_t *const *)L) == GS_SUCCESS);
  gs_batch_host_rowstats(&H, &rs);
  CU_ASSERT(rs.ell_fill < 1.25 && rs.mean_m <= 128.0);
  check_rule(&rs, "batch-csr-scalar");
  gs_batch_host_free(&H);
  gs_batch_gen_free(&L, 20);
  /* tiny random problems: unbalanced rows -> stream */
  CU_ASSERT_FATAL(gs_batch_gen(&L, "random", 20, 10, 60, gs_test_next(&s)) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_batch_host_build(&H, 20, (const gs_csr_t *const *)L) == GS_SUCCESS);
  gs_batch_host_rowstats(&H, &rs);
  CU_ASSERT(rs.ell_fill > 1.25 && rs.mean_m <= 128.0);
  check_rule(&rs, "batch-csr-stream");
  gs_batch_host_free(&H);
  gs_batch_gen_free(&L, 20);
}

/* batch-csr-warp's schedule: every problem once; without enough problems every one takes a
 * block; with them, problems of <= GS_BATCH_WARP_ROWS rows go 8 to a block after the others,
 * each part in decreasing work, -1 only as the last block's padding. */
static void test_warp_schedule(void)
{
  uint64_t s = gs_test_seed() ^ 0x8;
  for (int rep = 0; rep < 2; ++rep) {
    const int count = rep ? GS_BATCH_WARP_MIN_PACK + 13 : 100;
    gs_csr_t **L = NULL;
    CU_ASSERT_FATAL(gs_batch_gen(&L, "random", count, 1, 400, gs_test_next(&s)) == GS_SUCCESS);
    gs_batch_host_t H;
    CU_ASSERT_FATAL(gs_batch_host_build(&H, count, (const gs_csr_t *const *)L) == GS_SUCCESS);
    int32_t *sched = NULL, nl = -1, nw = -1;
    CU_ASSERT_FATAL(gs_batch_warp_schedule(&H, &sched, &nl, &nw) == GS_SUCCESS);
    const int32_t len = nl + nw * GS_BATCH_WARP_PER_BLOCK;
    int *seen = calloc((size_t)count, sizeof *seen), small = 0;
    for (int i = 0; i < count; ++i) small += H.prob[i].m <= GS_BATCH_WARP_ROWS;
    if (!rep) CU_ASSERT(nl == count && nw == 0);
    if (rep) CU_ASSERT(nl == count - small && nw == (small + 7) / 8);
    for (int32_t k = 0; k < len; ++k) {
      const int32_t i = sched[k];
      if (i < 0) { /* padding: only at the end */
        CU_ASSERT(k >= nl + small);
        continue;
      }
      CU_ASSERT_FATAL(i < count);
      seen[i]++;
      CU_ASSERT_EQUAL(k < nl, !(rep && H.prob[i].m <= GS_BATCH_WARP_ROWS));
      if (k > 0 && k != nl && sched[k - 1] >= 0) { /* decreasing work within each part */
        const gs_batch_prob_t *a = &H.prob[sched[k - 1]], *b = &H.prob[i];
        CU_ASSERT((int64_t)a->nnz + a->m >= (int64_t)b->nnz + b->m);
      }
    }
    for (int i = 0; i < count; ++i) CU_ASSERT_EQUAL(seen[i], 1);
    free(seen);
    free(sched);
    gs_batch_host_free(&H);
    gs_batch_gen_free(&L, count);
  }
}

/* batch-csr-stream's order: a permutation of the problems in decreasing work (nnz + m), ties by
 * index; its block size the power of two >= half the mean rows in [64, 512]. */
static void test_work_order(void)
{
  uint64_t s = gs_test_seed() ^ 0x9;
  const int count = 300;
  gs_csr_t **L = NULL;
  CU_ASSERT_FATAL(gs_batch_gen(&L, "random", count, 1, 50, gs_test_next(&s)) == GS_SUCCESS);
  gs_batch_host_t H;
  CU_ASSERT_FATAL(gs_batch_host_build(&H, count, (const gs_csr_t *const *)L) == GS_SUCCESS);
  int32_t *order = NULL;
  CU_ASSERT_FATAL(gs_batch_work_order(&H, &order) == GS_SUCCESS);
  int *seen = calloc((size_t)count, sizeof *seen);
  for (int k = 0; k < count; ++k) {
    CU_ASSERT_FATAL(order[k] >= 0 && order[k] < count);
    seen[order[k]]++;
    if (k > 0) {
      const gs_batch_prob_t *a = &H.prob[order[k - 1]], *b = &H.prob[order[k]];
      const int64_t wa = (int64_t)a->nnz + a->m, wb = (int64_t)b->nnz + b->m;
      CU_ASSERT(wa > wb || (wa == wb && order[k - 1] < order[k]));
    }
  }
  for (int i = 0; i < count; ++i) CU_ASSERT_EQUAL(seen[i], 1);
  free(seen);
  free(order);
  gs_batch_host_free(&H);
  gs_batch_gen_free(&L, count);
  CU_ASSERT_EQUAL(gs_batch_stream_threads(0.0), 64);
  CU_ASSERT_EQUAL(gs_batch_stream_threads(128.0), 64);
  CU_ASSERT_EQUAL(gs_batch_stream_threads(128.5), 128);
  CU_ASSERT_EQUAL(gs_batch_stream_threads(1000.0), 512);
  CU_ASSERT_EQUAL(gs_batch_stream_threads(1e9), 512);
}

static void test_smart_width(void)
{
  CU_ASSERT_EQUAL(gs_batch_smart_width(0, 0), 1);
  CU_ASSERT_EQUAL(gs_batch_smart_width(10, 0), 1);
  CU_ASSERT_EQUAL(gs_batch_smart_width(10, 10), 1);
  CU_ASSERT_EQUAL(gs_batch_smart_width(10, 11), 2);
  CU_ASSERT_EQUAL(gs_batch_smart_width(10, 50), 8);
  CU_ASSERT_EQUAL(gs_batch_smart_width(1, 1000), 32);
  CU_ASSERT_EQUAL(gs_batch_block_threads(1), 32);
  CU_ASSERT_EQUAL(gs_batch_block_threads(100), 128);
  CU_ASSERT_EQUAL(gs_batch_block_threads(1e6), 256);
}

/* Generators: sizes in range, valid CSR, reproducible from the seed, Laplacians symmetric with a
 * positive diagonal, random ones strictly diagonally dominant. */
static void test_generators(void)
{
  uint64_t s = gs_test_seed() ^ 0x5;
  const uint64_t seed = gs_test_next(&s);
  const char *kinds[] = {"laplace", "random"};
  for (int k = 0; k < 2; ++k) {
    gs_csr_t **A = NULL, **B = NULL;
    CU_ASSERT_FATAL(gs_batch_gen(&A, kinds[k], 30, 10, 200, seed) == GS_SUCCESS);
    CU_ASSERT_FATAL(gs_batch_gen(&B, kinds[k], 30, 10, 200, seed) == GS_SUCCESS);
    int sizes_differ = 0;
    for (int i = 0; i < 30; ++i) {
      CU_ASSERT(A[i]->m >= 10 && A[i]->m <= 200 && A[i]->m == A[i]->n);
      CU_ASSERT(gs_csr_validate(A[i]) == GS_SUCCESS);
      CU_ASSERT(A[i]->nnz == B[i]->nnz && !memcmp(A[i]->val, B[i]->val, (size_t)A[i]->nnz * 8));
      if (i && A[i]->m != A[0]->m) sizes_differ = 1;
      gs_features_t f;
      CU_ASSERT_FATAL(gs_csr_features(A[i], &f) == GS_SUCCESS);
      if (k == 0) CU_ASSERT(f.numerically_symmetric && f.diagonal_positive);
      for (gs_idx_t r = 0; k == 1 && r < A[i]->m; ++r) {
        double d = 0.0, off = 0.0;
        for (gs_off_t e = A[i]->row_ptr[r]; e < A[i]->row_ptr[r + 1]; ++e)
          if (A[i]->col[e] == r) d = fabs(A[i]->val[e]);
          else off += fabs(A[i]->val[e]);
        CU_ASSERT(d > off);
      }
    }
    CU_ASSERT(sizes_differ);
    gs_batch_gen_free(&A, 30);
    gs_batch_gen_free(&B, 30);
  }
  gs_csr_t **A = NULL;
  CU_ASSERT_EQUAL(gs_batch_gen(&A, "pareto", 3, 1, 2, 1), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_batch_gen(&A, "laplace", 0, 1, 2, 1), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_batch_gen(&A, "laplace", 3, 5, 2, 1), GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NULL(A);
}

/* Uniform batches (what cuSPARSE's strided baselines read): gs_batch_gen_shared's pattern and
 * values (reproducible, one size, Laplacian values SPD-shaped, random ones strictly diagonally
 * dominant and different per problem), and gs_batch_host_uniform's verdicts. */
static void test_uniform_batches(void)
{
  uint64_t s = gs_test_seed() ^ 0x7;
  const uint64_t seed = gs_test_next(&s);
  const char *kinds[] = {"laplace", "random"};
  for (int k = 0; k < 2; ++k) {
    gs_csr_t *P = NULL, *Q = NULL;
    double *v = NULL, *w = NULL;
    const int count = 25;
    CU_ASSERT_FATAL(gs_batch_gen_shared(&P, &v, kinds[k], count, 40, 40, seed) == GS_SUCCESS);
    CU_ASSERT_FATAL(gs_batch_gen_shared(&Q, &w, kinds[k], count, 40, 40, seed) == GS_SUCCESS);
    CU_ASSERT(P->m == 40 && P->n == 40 && gs_csr_validate(P) == GS_SUCCESS);
    const size_t nnz = (size_t)P->nnz;
    CU_ASSERT(Q->nnz == P->nnz && !memcmp(v, w, count * nnz * sizeof *v));
    CU_ASSERT(!memcmp(P->val, v, nnz * sizeof *v)); /* the pattern carries problem 0 */
    int differ = 0;
    for (int i = 0; i < count; ++i) {
      const double *vi = v + (size_t)i * nnz;
      differ |= i > 0 && memcmp(vi, v, nnz * sizeof *v) != 0;
      for (gs_idx_t r = 0; r < P->m; ++r) {
        double d = 0.0, off = 0.0;
        for (gs_off_t e = P->row_ptr[r]; e < P->row_ptr[r + 1]; ++e)
          if (P->col[e] == r) d = vi[e];
          else off += fabs(vi[e]);
        CU_ASSERT(k == 0 ? d >= 4.0 && d < 5.0 && off <= 4.0 /* diagonal 4 + d_i */
                         : fabs(d) > off);
      }
    }
    CU_ASSERT(differ);
    gs_batch_host_t H;
    CU_ASSERT_FATAL(gs_batch_host_build_shared(&H, count, P, v) == GS_SUCCESS);
    CU_ASSERT_EQUAL(gs_batch_host_uniform(&H, "x"), GS_SUCCESS);
    gs_batch_host_free(&H);
    free(v);
    free(w);
    gs_csr_destroy(&P);
    gs_csr_destroy(&Q);
  }
  /* equal sizes with different patterns are uniform; another nnz is not, and is named */
  gs_csr_t *A[3] = {gs_test_random_csr(&s, 6, 5, 0.5), NULL, NULL};
  CU_ASSERT_FATAL(gs_csr_copy(&A[1], A[0]) == GS_SUCCESS);
  for (gs_off_t e = 0; e < A[1]->nnz; ++e) A[1]->col[e] = (A[1]->col[e] + 1) % A[1]->n;
  gs_batch_host_t H;
  CU_ASSERT_FATAL(gs_batch_host_build(&H, 2, (const gs_csr_t *const *)A) == GS_SUCCESS);
  CU_ASSERT_EQUAL(gs_batch_host_uniform(&H, "x"), GS_SUCCESS);
  gs_batch_host_free(&H);
  CU_ASSERT_FATAL(gs_csr_create(&A[2], 6, 5, 0) == GS_SUCCESS); /* same size, no entries */
  for (gs_idx_t r = 0; r <= 6; ++r) A[2]->row_ptr[r] = 0;
  CU_ASSERT_FATAL(gs_batch_host_build(&H, 3, (const gs_csr_t *const *)A) == GS_SUCCESS);
  CU_ASSERT_EQUAL(gs_batch_host_uniform(&H, "batch-cusparse"), A[0]->nnz ? GS_ERR_UNSUPPORTED : GS_SUCCESS);
  if (A[0]->nnz) {
    CU_ASSERT_PTR_NOT_NULL(strstr(gs_last_error(), "patterns differ"));
    CU_ASSERT_PTR_NOT_NULL(strstr(gs_last_error(), "problem 2"));
  }
  gs_batch_host_free(&H);
  for (int i = 0; i < 3; ++i) gs_csr_destroy(&A[i]);
  gs_csr_t *P = NULL;
  double *v = NULL;
  CU_ASSERT_EQUAL(gs_batch_gen_shared(&P, &v, "laplace", 0, 4, 4, 1), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_batch_gen_shared(&P, &v, "pareto", 3, 4, 4, 1), GS_ERR_INVALID_ARG);
  CU_ASSERT(P == NULL && v == NULL);
}

/* Every argument is checked, with a message naming the fault; the public entry points refuse
 * without a context before touching a device. */
/* The 16-bit layout at its limits: a problem of 65,535 entries over 65,536 columns fits (its
 * last row pointer and column are 65,535, the largest 16-bit values), one entry or one column
 * more is refused with the problem named; the copies hold the 32-bit values exactly. */
static void test_idx16_limits(void)
{
  uint64_t s = gs_test_seed() ^ 0x16;
  gs_csr_t *A[3] = {gs_test_random_csr(&s, 30, 20, 0.2),
                    gs_test_two_wide_rows(&s, GS_BATCH_IDX16_MAX_N, GS_BATCH_IDX16_MAX_NNZ),
                    gs_test_random_csr(&s, 5, 5, 0.5)};
  CU_ASSERT_FATAL(A[0] && A[1] && A[2]);
  CU_ASSERT_EQUAL(A[1]->row_ptr[2], 65535);
  CU_ASSERT_EQUAL(A[1]->col[A[1]->nnz - 1], 65535);
  gs_batch_host_t H;
  uint16_t *rp16 = NULL, *ci16 = NULL;
  CU_ASSERT_FATAL(gs_batch_host_build(&H, 3, (const gs_csr_t *const *)A) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_batch_idx16_build(&H, "t", &rp16, &ci16) == GS_SUCCESS);
  gs_batch_rowstats_t rs;
  gs_batch_host_rowstats(&H, &rs);
  CU_ASSERT_EQUAL(rs.idx16, 1);
  for (size_t k = 0; k < H.nrp; ++k) CU_ASSERT_EQUAL_FATAL((int32_t)rp16[k], H.rp[k]);
  for (size_t k = 0; k < H.nci; ++k) CU_ASSERT_EQUAL_FATAL((gs_idx_t)ci16[k], H.ci[k]);
  free(rp16);
  free(ci16);
  check_products(&H, &s); /* the 16-bit host apply among the others, bit for bit csr's */
  gs_batch_host_free(&H);
  for (int over = 0; over < 2; ++over) { /* one entry more; one column more */
    gs_csr_destroy(&A[1]);
    A[1] = over ? gs_test_two_wide_rows(&s, GS_BATCH_IDX16_MAX_N + 1, 100)
                : gs_test_two_wide_rows(&s, GS_BATCH_IDX16_MAX_N, GS_BATCH_IDX16_MAX_NNZ + 1);
    CU_ASSERT_FATAL(A[1] != NULL);
    CU_ASSERT_FATAL(gs_batch_host_build(&H, 3, (const gs_csr_t *const *)A) == GS_SUCCESS);
    rp16 = ci16 = (uint16_t *)1;
    CU_ASSERT_EQUAL(gs_batch_idx16_build(&H, "batch-csr-stream16", &rp16, &ci16),
                    GS_ERR_UNSUPPORTED);
    CU_ASSERT_PTR_NULL(rp16);
    CU_ASSERT_PTR_NULL(ci16);
    CU_ASSERT_PTR_NOT_NULL(strstr(gs_last_error(), "batch-csr-stream16: problem 1 "));
    gs_batch_host_rowstats(&H, &rs);
    CU_ASSERT_EQUAL(rs.idx16, 0); /* auto keeps the 32-bit kernels */
    check_products(&H, &s); /* the others still right, the 16-bit one refused */
    gs_batch_host_free(&H);
  }
  for (int i = 0; i < 3; ++i) gs_csr_destroy(&A[i]);
}

static void test_bad_arguments(void)
{
  uint64_t s = gs_test_seed() ^ 0x6;
  gs_batch_host_t H;
  gs_csr_t *A[2] = {gs_test_random_csr(&s, 4, 4, 0.5), NULL};
  CU_ASSERT_EQUAL(gs_batch_host_build(&H, 0, (const gs_csr_t *const *)A), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_batch_host_build(&H, 2, (const gs_csr_t *const *)A), GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NOT_NULL(strstr(gs_last_error(), "problem 1"));
  A[1] = gs_test_random_csr(&s, 4, 4, 0.5);
  A[1]->col[0] = 9; /* out of range */
  CU_ASSERT_EQUAL(gs_batch_host_build(&H, 2, (const gs_csr_t *const *)A), GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NOT_NULL(strstr(gs_last_error(), "problem 1"));
  gs_batch_t *B = (gs_batch_t *)1;
  CU_ASSERT_EQUAL(gs_batch_create(&B, NULL, 2, (const gs_csr_t *const *)A), GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NULL(B);
  CU_ASSERT_EQUAL(gs_batch_create(NULL, NULL, 2, NULL), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_batch_create_shared(&B, NULL, 2, A[0], NULL), GS_ERR_INVALID_ARG);
  gs_batch_spmv_t *S = (gs_batch_spmv_t *)1;
  CU_ASSERT_EQUAL(gs_batch_spmv_create(&S, NULL, "batch-coo", 0.0), GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NULL(S);
  CU_ASSERT_EQUAL(gs_batch_spmv_apply(NULL, 1.0, NULL, 0.0, NULL), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_batch_solve(NULL, NULL, NULL, NULL, NULL, NULL), GS_ERR_INVALID_ARG);
  gs_batch_destroy(NULL);
  gs_batch_destroy(&B);
  gs_batch_spmv_destroy(NULL);
  CU_ASSERT_EQUAL(gs_batch_count(NULL), 0);
  CU_ASSERT_PTR_NULL(gs_batch_format_name(-1));
  CU_ASSERT_PTR_NULL(gs_batch_format_name(gs_batch_format_count()));
  CU_ASSERT_EQUAL(gs_batch_format_count(), 12);
  int vendor = 0;
  for (int k = 0; k < gs_batch_format_count(); ++k) {
    CU_ASSERT(!strncmp(gs_batch_format_name(k), "batch-", 6) && gs_batch_format_summary(k)[0]);
    const int v = (gs_batch_format_flags(k) & GS_BATCH_FORMAT_VENDOR) != 0;
    CU_ASSERT_EQUAL(v, !strncmp(gs_batch_format_name(k), "batch-cusparse", 14));
    vendor += v;
  }
  CU_ASSERT_EQUAL(vendor, 2);
  CU_ASSERT_EQUAL(gs_batch_format_flags(-1), 0u);
  gs_csr_destroy(&A[0]);
  gs_csr_destroy(&A[1]);
}

int main(void)
{
  CU_TestInfo tests[] = {
      {"mixed batch: layout and every kernel's host apply", test_mixed_layout_and_products},
      {"shared pattern: stored once, products", test_shared_pattern},
      {"csr-i start rows", test_csri_starts},
      {"ell fill guard and the auto rule", test_ell_fill_and_auto_rule},
      {"csr-smart width and block threads", test_smart_width},
      {"csr-warp schedule", test_warp_schedule},
      {"csr-stream order and block size", test_work_order},
      {"generators", test_generators},
      {"uniform batches: shared generator, the strided check", test_uniform_batches},
      {"16-bit indices at their limits", test_idx16_limits},
      {"bad arguments", test_bad_arguments},
      CU_TEST_INFO_NULL};
  return gs_test_main("batch_host", tests, 0);
}
