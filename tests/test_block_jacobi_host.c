/* tests/test_block_jacobi_host.c: block-Jacobi's host side (precond/block_jacobi.c): the
 * partition (fixed blocks; supervariables recomputed here from their definition, and the
 * agglomeration checked against its rules: blocks are whole pieces, at most `block` rows, and
 * greedy: a block and the next one's first piece together exceed `block`); the block extraction
 * against a dense expansion of the CSR (duplicates, unsorted rows, entries outside the block);
 * the LU with partial pivoting against Higham's backward error bound |r - B x| <= gamma_3s
 * P^T |L| |U| |x| (Accuracy and Stability, Theorem 9.4), the residual taken in long double; the
 * pivot threshold on derived cases; the reference apply block by block, in place, and its
 * singular-block outcomes (refusal, Jacobi fallback, zero diagonal); the registry entry and its
 * options, also through the CLI. Random inputs come from the printed seed; real matrices from
 * the matrix folder. */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "precond/block_jacobi.h"
#include "tests/testutil.h"
#include "tests/block_jacobi_test.h"


/* A matrix of natural blocks of the given sizes: block I couples to itself and to random blocks
 * J with |I - J| >= 2 (so that neighbouring natural blocks never share a pattern), every row of
 * a natural block holding the same full column set; values random, the diagonal raised by
 * `shift` (0: none). */
static gs_csr_t *natural(const int *size, int nnat, double coupling, double shift)
{
  int *start = xmalloc(((size_t)nnat + 1) * sizeof *start);
  start[0] = 0;
  for (int I = 0; I < nnat; ++I) start[I + 1] = start[I] + size[I];
  const gs_idx_t n = start[nnat];
  char *edge = xmalloc((size_t)nnat * nnat);
  for (int I = 0; I < nnat; ++I)
    for (int J = 0; J < nnat; ++J)
      edge[I * nnat + J] = I == J || (abs(I - J) >= 2 && gs_test_uniform(rng()) < coupling);
  gs_coo_t *C = NULL;
  CU_ASSERT_FATAL(gs_coo_create(&C, n, n, 16) == GS_SUCCESS);
  for (int I = 0; I < nnat; ++I)
    for (gs_idx_t i = start[I]; i < start[I + 1]; ++i)
      for (int J = 0; J < nnat; ++J)
        if (edge[I * nnat + J])
          for (gs_idx_t j = start[J]; j < start[J + 1]; ++j)
            CU_ASSERT_FATAL(gs_coo_push(C, i, j, rnd() + (i == j ? shift : 0.0)) == GS_SUCCESS);
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
  gs_coo_destroy(&C);
  free(edge);
  free(start);
  return A;
}

/* ---- the partition ------------------------------------------------------------------------- */

/* The pieces of the rule, recomputed here: supervariables (maximal runs of rows storing the
 * same column sequence) cut into max_block rows; piece_end[p] = one past the last row. */
static int pieces(const gs_csr_t *A, int max_block, gs_idx_t *piece_end)
{
  int np = 0;
  gs_idx_t i = 0;
  while (i < A->m) {
    gs_idx_t e = i + 1;
    for (;; ++e) { /* the supervariable i .. e-1 */
      if (e >= A->m) break;
      const gs_off_t l0 = A->row_ptr[i + 1] - A->row_ptr[i];
      if (A->row_ptr[e + 1] - A->row_ptr[e] != l0) break;
      int same = 1;
      for (gs_off_t k = 0; k < l0 && same; ++k)
        same = A->col[A->row_ptr[e] + k] == A->col[A->row_ptr[i] + k];
      if (!same) break;
    }
    for (gs_idx_t p = i; p < e; p += max_block) piece_end[np++] = p + max_block < e ? p + max_block : e;
    i = e;
  }
  return np;
}

/* Checks a partition against the rules of precond/block_jacobi.h; 1 when it holds. */
static int partition_ok(const gs_csr_t *A, int K, int agg, const gs_idx_t *bp, gs_idx_t nb)
{
  const gs_idx_t n = A->m;
  if (bp[0] != 0 || bp[nb] != n || (n > 0) != (nb > 0)) return 0;
  for (gs_idx_t b = 0; b < nb; ++b)
    if (bp[b + 1] - bp[b] < 1 || bp[b + 1] - bp[b] > K) return 0;
  if (!agg) { /* fixed: K rows each, the last one the rest */
    for (gs_idx_t b = 0; b + 1 < nb; ++b)
      if (bp[b + 1] - bp[b] != K) return 0;
    return nb == (n + K - 1) / K;
  }
  gs_idx_t *pe = xmalloc(((size_t)n + 1) * sizeof *pe);
  const int np = pieces(A, K, pe);
  int ok = 1, p = 0;
  for (gs_idx_t b = 0; b < nb && ok; ++b) {
    while (p < np && pe[p] < bp[b + 1]) ++p;
    ok = p < np && pe[p] == bp[b + 1]; /* a block ends where a piece ends */
    if (ok && b + 1 < nb) /* greedy: the next piece did not fit */
      ok = (bp[b + 1] - bp[b]) + (pe[p + 1] - pe[p]) > K;
    ++p;
  }
  free(pe);
  return ok;
}

static void test_partition_fixed(void)
{
  for (int t = 0; t < 40; ++t) {
    const gs_idx_t n = rndint(300);
    const int K = 1 + rndint(GS_BJ_MAX_BLOCK);
    gs_csr_t *A = gs_test_random_csr(rng(), n, n, 0.05);
    gs_idx_t *bp = NULL, nb = -1;
    CU_ASSERT_FATAL(gs_bj_partition(A, K, 0, &bp, &nb) == GS_SUCCESS);
    CU_ASSERT(partition_ok(A, K, 0, bp, nb));
    CU_ASSERT(gs_bj_max_size(bp, nb) == (n < K ? n : K));
    int64_t *off = xmalloc(((size_t)nb + 1) * sizeof *off);
    gs_bj_offsets(bp, nb, off);
    int64_t sq = 0;
    for (gs_idx_t b = 0; b < nb; ++b) sq += (int64_t)(bp[b + 1] - bp[b]) * (bp[b + 1] - bp[b]);
    CU_ASSERT(off[nb] == sq);
    free(off);
    free(bp);
    gs_csr_destroy(&A);
  }
  /* refusals */
  gs_csr_t *A = gs_test_random_csr(rng(), 10, 10, 0.3);
  gs_idx_t *bp = NULL, nb = 0;
  CU_ASSERT(gs_bj_partition(A, 0, 1, &bp, &nb) == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_bj_partition(A, GS_BJ_MAX_BLOCK + 1, 0, &bp, &nb) == GS_ERR_INVALID_ARG);
  CU_ASSERT(bp == NULL);
  gs_csr_destroy(&A);
  for (int g = 1; g <= 32; ++g) { /* the kernels' group: the power of two >= the block */
    const int w = gs_bj_group_width(g);
    CU_ASSERT(w >= g && w < 2 * g + (g == 1) && (w & (w - 1)) == 0);
  }
}

static void test_partition_natural(void)
{
  /* equal natural blocks of t rows: floor(K / t) of them a block when t <= K */
  for (int t = 1; t <= 8; ++t) {
    int size[40];
    for (int I = 0; I < 40; ++I) size[I] = t;
    gs_csr_t *A = natural(size, 40, 0.1, 0.0);
    for (int K = t; K <= GS_BJ_MAX_BLOCK; K += 3) {
      gs_idx_t *bp = NULL, nb = 0;
      CU_ASSERT_FATAL(gs_bj_partition(A, K, 1, &bp, &nb) == GS_SUCCESS);
      const int per = (K / t) * t;
      for (gs_idx_t b = 0; b + 1 < nb; ++b) CU_ASSERT(bp[b + 1] - bp[b] == per);
      CU_ASSERT(nb == (A->m + per - 1) / per);
      CU_ASSERT(partition_ok(A, K, 1, bp, nb));
      free(bp);
    }
    gs_csr_destroy(&A);
  }
  /* random natural sizes (some beyond the block size: cut into pieces) */
  for (int trial = 0; trial < 30; ++trial) {
    int size[60];
    const int nnat = 1 + rndint(60);
    for (int I = 0; I < nnat; ++I) size[I] = 1 + rndint(trial % 3 == 0 ? 40 : 7);
    gs_csr_t *A = natural(size, nnat, 0.15, 0.0);
    const int K = 1 + rndint(GS_BJ_MAX_BLOCK);
    for (int agg = 0; agg <= 1; ++agg) {
      gs_idx_t *bp = NULL, nb = 0;
      CU_ASSERT_FATAL(gs_bj_partition(A, K, agg, &bp, &nb) == GS_SUCCESS);
      if (!partition_ok(A, K, agg, bp, nb))
        fprintf(stderr, "  partition fails its rules: %d natural blocks, block %d, agglomerate %d\n",
                nnat, K, agg);
      CU_ASSERT(partition_ok(A, K, agg, bp, nb));
      /* a natural block that fits is never split */
      if (agg) {
        int r = 0;
        for (int I = 0; I < nnat; ++I) {
          if (size[I] <= K) {
            gs_idx_t b = 0;
            while (bp[b + 1] <= r) ++b;
            CU_ASSERT(bp[b + 1] >= r + size[I]);
          }
          r += size[I];
        }
      }
      free(bp);
    }
    gs_csr_destroy(&A);
  }
  /* a stencil matrix has no supervariables: agglomeration gives the fixed blocks */
  gs_csr_t *L = NULL;
  CU_ASSERT_FATAL(gs_gen_laplace(&L, 17, 13, 1, 5) == GS_SUCCESS);
  for (int K = 1; K <= GS_BJ_MAX_BLOCK; K += 5) {
    gs_idx_t *b0 = NULL, *b1 = NULL, n0 = 0, n1 = 0;
    CU_ASSERT_FATAL(gs_bj_partition(L, K, 0, &b0, &n0) == GS_SUCCESS);
    CU_ASSERT_FATAL(gs_bj_partition(L, K, 1, &b1, &n1) == GS_SUCCESS);
    CU_ASSERT(n0 == n1 && memcmp(b0, b1, ((size_t)n0 + 1) * sizeof *b0) == 0);
    free(b0);
    free(b1);
  }
  gs_csr_destroy(&L);
  /* the empty matrix: no blocks */
  gs_csr_t *E = NULL;
  CU_ASSERT_FATAL(gs_csr_create(&E, 0, 0, 0) == GS_SUCCESS);
  gs_idx_t *bp = NULL, nb = -1;
  CU_ASSERT_FATAL(gs_bj_partition(E, 8, 1, &bp, &nb) == GS_SUCCESS);
  CU_ASSERT(nb == 0 && bp[0] == 0);
  free(bp);
  gs_csr_destroy(&E);
}

/* The rules on the real square matrices, for a few block sizes. */
static void test_partition_real(void)
{
  if (!gs_test_have_matrices()) return;
  const int quick = gs_test_quick();
  for (int k = 0; gs_test_matrix_names[k]; ++k) {
    const char *name = gs_test_matrix_names[k];
    if (!gs_test_have_matrix(name)) continue;
    gs_csr_t *A = NULL;
    CU_ASSERT_FATAL(gs_mm_read_csr(gs_test_matrix(name), &A) == GS_SUCCESS);
    if (A->m == A->n && (!quick || A->nnz < 30000)) {
      static const int Ks[] = {1, 4, 8, 13, 32};
      for (size_t q = 0; q < sizeof Ks / sizeof Ks[0]; ++q)
        for (int agg = 0; agg <= 1; ++agg) {
          gs_idx_t *bp = NULL, nb = 0;
          CU_ASSERT_FATAL(gs_bj_partition(A, Ks[q], agg, &bp, &nb) == GS_SUCCESS);
          if (!partition_ok(A, Ks[q], agg, bp, nb))
            fprintf(stderr, "  %s: block %d, agglomerate %d breaks the rules\n", name, Ks[q], agg);
          CU_ASSERT(partition_ok(A, Ks[q], agg, bp, nb));
          if (agg && Ks[q] == 8)
            fprintf(stderr, "  %-18s block 8: %d blocks of mean %.2f rows (fixed: %d)\n", name,
                    (int)nb, nb ? (double)A->m / nb : 0.0, (int)((A->m + 7) / 8));
          free(bp);
        }
    }
    gs_csr_destroy(&A);
  }
}

/* ---- extraction ---------------------------------------------------------------------------- */

/* A CSR with unsorted rows and duplicate entries: each row's entries in random order, a third of
 * them stored twice (split in two values). */
static gs_csr_t *messy(gs_idx_t n, double density)
{
  gs_csr_t *S = gs_test_random_csr(rng(), n, n, density);
  gs_off_t extra = 0;
  for (gs_off_t k = 0; k < S->nnz; ++k) extra += k % 3 == 0;
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_csr_create(&A, n, n, S->nnz + extra) == GS_SUCCESS);
  gs_off_t w = 0;
  for (gs_idx_t i = 0; i < n; ++i) {
    const gs_off_t r0 = w;
    for (gs_off_t k = S->row_ptr[i]; k < S->row_ptr[i + 1]; ++k) {
      if (k % 3 == 0) {
        const double part = rnd();
        A->col[w] = S->col[k];
        A->val[w++] = part;
        A->col[w] = S->col[k];
        A->val[w++] = S->val[k] - part;
      } else {
        A->col[w] = S->col[k];
        A->val[w++] = S->val[k];
      }
    }
    for (gs_off_t k = w - 1; k > r0; --k) /* shuffle the row */
      gs_test_swap_entries(A, k, r0 + rndint((int)(k - r0 + 1)));
    A->row_ptr[i + 1] = w;
  }
  gs_csr_destroy(&S);
  return A;
}

static void test_extract(void)
{
  for (int t = 0; t < 20; ++t) {
    const gs_idx_t n = 1 + rndint(120);
    gs_csr_t *A = messy(n, 0.2);
    double *dense = xmalloc((size_t)n * n * sizeof *dense);
    memset(dense, 0, (size_t)n * n * sizeof *dense);
    for (gs_idx_t i = 0; i < n; ++i) /* stored order, as the extraction sums */
      for (gs_off_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k)
        dense[(size_t)i * n + A->col[k]] += A->val[k];
    double B[GS_BJ_MAX_BLOCK * GS_BJ_MAX_BLOCK];
    for (int q = 0; q < 10; ++q) {
      const int s = 1 + rndint(n < GS_BJ_MAX_BLOCK ? n : GS_BJ_MAX_BLOCK);
      const gs_idx_t r0 = rndint(n - s + 1);
      const double m = gs_bj_extract(A, r0, s, B);
      double mref = 0.0;
      int same = 1;
      for (int i = 0; i < s; ++i)
        for (int j = 0; j < s; ++j) {
          const double want = dense[(size_t)(r0 + i) * n + r0 + j];
          same = same && B[i * s + j] == want;
          mref = fmax(mref, fabs(want));
        }
      CU_ASSERT(same);
      CU_ASSERT(m == mref);
    }
    free(dense);
    gs_csr_destroy(&A);
  }
}

/* ---- LU ------------------------------------------------------------------------------------ */

/* max_i |r - B x|_i / bound_i with Higham's bound gamma_3s (P^T |L| |U| |x|)_i, plus
 * (P^T |Delta| |x|)_i for the noise the factorization took as zero (L U = P (B + Delta) + E,
 * |E| <= gamma_3s |L||U| for the solve too); residual in long double, 0 / 0 counts as 0. */
static double lu_ratio(const double *B, const double *LU, const double *drop, const int *piv,
                       int s, const double *r, const double *x)
{
  int idx[GS_BJ_MAX_BLOCK];
  for (int i = 0; i < s; ++i) idx[i] = i;
  for (int k = 0; k < s; ++k) { /* row k of LU is row idx[k] of B */
    const int t = idx[k];
    idx[k] = idx[piv[k]];
    idx[piv[k]] = t;
  }
  double worst = 0.0;
  for (int k = 0; k < s; ++k) {
    long double w = 0.0L; /* (|L| |U| |x|)_k */
    for (int j = 0; j < s; ++j) {
      long double ux = 0.0L;
      for (int m = j; m < s; ++m) ux += fabsl((long double)LU[j * s + m]) * fabsl((long double)x[m]);
      const long double l = j < k ? fabsl((long double)LU[k * s + j]) : j == k ? 1.0L : 0.0L;
      w += l * ux;
    }
    long double dx = 0.0L;
    for (int j = 0; j < s; ++j) dx += (long double)drop[k * s + j] * fabsl((long double)x[j]);
    const int i = idx[k];
    long double res = r[i];
    for (int j = 0; j < s; ++j) res -= (long double)B[i * s + j] * x[j];
    const double bound = gam(3.0 * s) * (double)w + (double)dx * (1 + gam(3.0 * s)) +
                         4 * DBL_TRUE_MIN;
    const double q = (double)fabsl(res) / bound;
    if (q > worst) worst = q;
  }
  return worst;
}

static void test_lu_backward(void)
{
  double B[GS_BJ_MAX_BLOCK * GS_BJ_MAX_BLOCK], LU[GS_BJ_MAX_BLOCK * GS_BJ_MAX_BLOCK];
  double D[GS_BJ_MAX_BLOCK * GS_BJ_MAX_BLOCK], r[GS_BJ_MAX_BLOCK], x[GS_BJ_MAX_BLOCK];
  int piv[GS_BJ_MAX_BLOCK], dropped = 0;
  double worst = 0.0;
  for (int t = 0; t < 600; ++t) {
    const int s = 1 + t % GS_BJ_MAX_BLOCK;
    const int kind = (t / GS_BJ_MAX_BLOCK) % 3; /* 0 random, 1 rows graded over 1e12, 2 dominant */
    for (int i = 0; i < s; ++i) {
      const double scale = kind == 1 ? pow(10.0, 12.0 * rnd()) : 1.0;
      for (int j = 0; j < s; ++j) B[i * s + j] = scale * (rnd() + (kind == 2 && i == j ? s : 0));
      r[i] = rnd();
    }
    memcpy(LU, B, (size_t)s * s * sizeof *B);
    const int k = gs_bj_lu(LU, s, piv, D);
    if (k >= 0) { /* only rows graded over 24 orders may leave noise (the pivots follow the
                     row scales, not the values) */
      fprintf(stderr, "  random block of %d rows (kind %d) refused at step %d\n", s, kind, k);
      CU_ASSERT(kind == 1);
      continue;
    }
    for (int i = 0; i < s; ++i) { /* partial pivoting: |l_ij| <= 1 */
      for (int j = 0; j < i; ++j) CU_ASSERT(fabs(LU[i * s + j]) <= 1.0);
      x[i] = r[i];
    }
    gs_bj_lu_solve(LU, piv, s, x);
    for (int q = 0; q < s * s; ++q) dropped += D[q] != 0.0;
    const double q = lu_ratio(B, LU, D, piv, s, r, x);
    if (q > worst) worst = q;
    CU_ASSERT(q <= 1.0);
  }
  fprintf(stderr, "  LU residuals: at most %.3g of Higham's bound (%d entries dropped as noise)\n",
          worst, dropped);
}

/* The pivot rule scales with the columns: B D (D powers of two over 2^+-300, exact) takes the
 * pivots of B, drops the same noise, and its factors are B's scaled. (Not with the rows: partial
 * pivoting then follows the row scales.) */
static void test_lu_scaling(void)
{
  double B[GS_BJ_MAX_BLOCK * GS_BJ_MAX_BLOCK], C[GS_BJ_MAX_BLOCK * GS_BJ_MAX_BLOCK];
  int pb[GS_BJ_MAX_BLOCK], pc[GS_BJ_MAX_BLOCK];
  for (int t = 0; t < 200; ++t) {
    const int s = 1 + t % GS_BJ_MAX_BLOCK;
    int ec[GS_BJ_MAX_BLOCK];
    for (int j = 0; j < s; ++j) ec[j] = rndint(601) - 300;
    for (int i = 0; i < s; ++i)
      for (int j = 0; j < s; ++j) {
        B[i * s + j] = rnd() + (i == j ? 0.5 * s : 0.0);
        C[i * s + j] = ldexp(B[i * s + j], ec[j]);
      }
    CU_ASSERT_FATAL(gs_bj_lu(B, s, pb, NULL) == -1);
    CU_ASSERT_FATAL(gs_bj_lu(C, s, pc, NULL) == -1);
    CU_ASSERT(memcmp(pb, pc, (size_t)s * sizeof *pb) == 0);
    int same = 1;
    for (int i = 0; i < s; ++i)
      for (int j = 0; j < s; ++j) /* L unscaled, U scaled by its column */
        same = same && C[i * s + j] == (j < i ? B[i * s + j] : ldexp(B[i * s + j], ec[j]));
    CU_ASSERT(same);
  }
}

static void test_lu_singular(void)
{
  double B[GS_BJ_MAX_BLOCK * GS_BJ_MAX_BLOCK];
  int piv[GS_BJ_MAX_BLOCK];
  /* a zero row and column k: exactly zero under elimination, so step k finds no pivot */
  for (int s = 1; s <= GS_BJ_MAX_BLOCK; ++s) {
    const int k = rndint(s);
    for (int i = 0; i < s; ++i)
      for (int j = 0; j < s; ++j) B[i * s + j] = i == k || j == k ? 0.0 : rnd() + (i == j ? s : 0);
    CU_ASSERT(gs_bj_lu(B, s, piv, NULL) == k);
  }
  /* all zero: step 0 */
  memset(B, 0, sizeof B);
  CU_ASSERT(gs_bj_lu(B, 5, piv, NULL) == 0);
  /* [1 2; 2 4]: pivot 2, multiplier 1/2, u_11 = 2 - 4/2 = 0 exactly */
  const double r1[4] = {1, 2, 2, 4};
  memcpy(B, r1, sizeof r1);
  CU_ASSERT(gs_bj_lu(B, 2, piv, NULL) == 1);
  CU_ASSERT(piv[0] == 1);
  /* [1 1; 1 1+e]: u_11 = (1 + e) - 1 = e from terms of magnitude m = 2 + e. Usable when
   * e > 4 * 2 u m = 2^-49 (1 + e/2): e = 2^-49 is refused (singular to working precision),
   * e = 2^-40 accepted; both in any scale */
  const double e1 = 0x1p-49, e2 = 0x1p-40;
  for (int sc = -600; sc <= 600; sc += 300) {
    const double b1[4] = {ldexp(1, sc), ldexp(1, sc), ldexp(1, sc), ldexp(1 + e1, sc)};
    const double b2[4] = {ldexp(1, sc), ldexp(1, sc), ldexp(1, sc), ldexp(1 + e2, sc)};
    memcpy(B, b1, sizeof b1);
    CU_ASSERT(gs_bj_lu(B, 2, piv, NULL) == 1);
    memcpy(B, b2, sizeof b2);
    CU_ASSERT(gs_bj_lu(B, 2, piv, NULL) == -1);
    CU_ASSERT(B[3] == ldexp(e2, sc));
  }
}

/* ---- the reference apply ------------------------------------------------------------------- */

static void test_host_apply(void)
{
  for (int t = 0; t < 20; ++t) {
    int size[50];
    const int nnat = 1 + rndint(50);
    for (int I = 0; I < nnat; ++I) size[I] = 1 + rndint(6);
    gs_csr_t *A = natural(size, nnat, 0.1, 8.0);
    const gs_idx_t n = A->m;
    const int K = 1 + rndint(GS_BJ_MAX_BLOCK);
    gs_idx_t *bp = NULL, nb = 0;
    CU_ASSERT_FATAL(gs_bj_partition(A, K, t % 2, &bp, &nb) == GS_SUCCESS);
    double *r = xmalloc((size_t)n * sizeof *r), *z = xmalloc((size_t)n * sizeof *z);
    double *zz = xmalloc((size_t)n * sizeof *zz);
    for (gs_idx_t i = 0; i < n; ++i) r[i] = rnd();
    int code = 0;
    int64_t fb = -1;
    CU_ASSERT(gs_bj_host_apply(A, bp, nb, 0, r, z, &code, &fb) == -1);
    CU_ASSERT(fb == 0 && code == -1);
    /* block by block: the Higham bound on each block's residual */
    double B[GS_BJ_MAX_BLOCK * GS_BJ_MAX_BLOCK], LU[GS_BJ_MAX_BLOCK * GS_BJ_MAX_BLOCK];
    double D[GS_BJ_MAX_BLOCK * GS_BJ_MAX_BLOCK];
    int piv[GS_BJ_MAX_BLOCK];
    for (gs_idx_t b = 0; b < nb; ++b) {
      const int s = (int)(bp[b + 1] - bp[b]);
      gs_bj_extract(A, bp[b], s, B);
      memcpy(LU, B, (size_t)s * s * sizeof *B);
      CU_ASSERT_FATAL(gs_bj_lu(LU, s, piv, D) == -1);
      CU_ASSERT(lu_ratio(B, LU, D, piv, s, r + bp[b], z + bp[b]) <= 1.0);
    }
    /* in place: the same z */
    memcpy(zz, r, (size_t)n * sizeof *zz);
    CU_ASSERT(gs_bj_host_apply(A, bp, nb, 0, zz, zz, &code, NULL) == -1);
    CU_ASSERT(memcmp(zz, z, (size_t)n * sizeof *z) == 0);
    free(r);
    free(z);
    free(zz);
    free(bp);
    gs_csr_destroy(&A);
  }
}

/* Singular blocks: refused with the block and the step; with the fallback, applied as Jacobi
 * (z_i = r_i / a_ii) and counted, or refused naming a zero diagonal. */
static void test_host_singular(void)
{
  /* blocks of 4 rows of a 12 x 12 matrix; block 1 (rows 4-7) gets [1 2; 2 4]-like rows 4, 5,
   * with 4 x 4 coupling 2 to itself (rows 4 and 5 proportional): no pivot at step 1 */
  double a[144] = {0};
  for (int i = 0; i < 12; ++i) a[i * 12 + i] = 4.0 + i;
  a[4 * 12 + 5] = 2.0;
  a[5 * 12 + 4] = 2.0;
  a[4 * 12 + 4] = 1.0;
  a[5 * 12 + 5] = 4.0;
  gs_csr_t *A = gs_test_csr_from_dense(12, 12, a);
  gs_idx_t *bp = NULL, nb = 0;
  CU_ASSERT_FATAL(gs_bj_partition(A, 4, 0, &bp, &nb) == GS_SUCCESS);
  CU_ASSERT_FATAL(nb == 3);
  double r[12], z[12];
  for (int i = 0; i < 12; ++i) r[i] = rnd();
  int code = 0;
  int64_t fb = 0;
  CU_ASSERT(gs_bj_host_apply(A, bp, nb, 0, r, z, &code, &fb) == 1);
  CU_ASSERT(code == 1); /* rows 4, 5: [1 2; 2 4], pivot row 5, then u = 2 - 4/2... = 0 */
  CU_ASSERT(gs_bj_host_apply(A, bp, nb, 1, r, z, &code, &fb) == -1);
  CU_ASSERT(fb == 1);
  for (int i = 4; i < 8; ++i) CU_ASSERT(z[i] == r[i] * (1.0 / a[i * 12 + i]));
  for (int i = 0; i < 4; ++i) CU_ASSERT(fabs(z[i] * a[i * 12 + i] - r[i]) <= 4 * U * fabs(r[i]));
  gs_csr_destroy(&A);
  /* a zero row and column (row 6): no pivot, and the fallback has no diagonal either */
  a[4 * 12 + 5] = a[5 * 12 + 4] = 0.0;
  a[4 * 12 + 4] = 1.0;
  a[5 * 12 + 5] = 1.0;
  a[6 * 12 + 6] = 0.0;
  A = gs_test_csr_from_dense(12, 12, a);
  CU_ASSERT(gs_bj_host_apply(A, bp, nb, 0, r, z, &code, &fb) == 1);
  CU_ASSERT(code == 2);
  CU_ASSERT(gs_bj_host_apply(A, bp, nb, 1, r, z, &code, &fb) == 1);
  CU_ASSERT(code == 32 + 2);
  free(bp);
  gs_csr_destroy(&A);
}

/* ---- registry and options ------------------------------------------------------------------ */

static void test_registry(void)
{
  const int i = gs_precond_find("block-jacobi");
  CU_ASSERT_FATAL(i >= 0);
  CU_ASSERT_STRING_EQUAL(gs_precond_name_at(i), "block-jacobi");
  CU_ASSERT(gs_precond_summary_at(i) != NULL);
  CU_ASSERT(!gs_precond_symmetric_at(i)); /* per instance: only for a symmetric A */
  gs_precond_option_info_t o;
  CU_ASSERT_FATAL(gs_precond_option_at(i, 0, &o));
  CU_ASSERT_STRING_EQUAL(o.key, "block");
  CU_ASSERT(atoi(o.def) == GS_BJ_DEFAULT_BLOCK);
  CU_ASSERT_FATAL(gs_precond_option_at(i, 1, &o));
  CU_ASSERT_STRING_EQUAL(o.key, "agglomerate");
  CU_ASSERT_FATAL(gs_precond_option_at(i, 2, &o));
  CU_ASSERT_STRING_EQUAL(o.key, "singular");
  CU_ASSERT_STRING_EQUAL(o.def, "error");
  CU_ASSERT(!gs_precond_option_at(i, 3, &o));
  CU_ASSERT(gs_precond_options_check("block-jacobi", "block=16,agglomerate=0,singular=jacobi") ==
            GS_SUCCESS);
  CU_ASSERT(gs_precond_options_check("block-jacobi", "block-jacobi.block=1") == GS_SUCCESS);
  CU_ASSERT(gs_precond_options_check("block-jacobi", "block=32") == GS_SUCCESS);
  CU_ASSERT(gs_precond_options_check("block-jacobi", "block=33") == GS_ERR_INVALID_ARG);
  CU_ASSERT(strstr(gs_last_error(), "block") != NULL);
  CU_ASSERT(gs_precond_options_check("block-jacobi", "block=0") == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_precond_options_check("block-jacobi", "block=4.5") == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_precond_options_check("block-jacobi", "agglomerate=2") == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_precond_options_check("block-jacobi", "singular=ignore") == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_precond_options_check("block-jacobi", "theta=0.1") == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_precond_options_check("block-jacobi", "amg.block=4") == GS_ERR_INVALID_ARG);
  CU_ASSERT(gs_precond_options_check("jacobi", "block=4") == GS_ERR_INVALID_ARG);
  /* the CLI refuses a bad option before it reads the matrix: one line, exit 2 */
  char out[4096], err[4096];
  const int rc = gs_test_cli_fmt(out, sizeof out, err, sizeof err,
                                 "solve %s --precond block-jacobi --precond-opt block=40",
                                 gs_test_data("matrices/nos7.mtx"));
  CU_ASSERT(rc == 2);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT(strstr(err, "block") != NULL);
  CU_ASSERT(out[0] == '\0');
}

int main(void)
{
  CU_TestInfo tests[] = {{"partition_fixed", test_partition_fixed},
                         {"partition_natural", test_partition_natural},
                         {"partition_real", test_partition_real},
                         {"extract", test_extract},
                         {"lu_backward", test_lu_backward},
                         {"lu_scaling", test_lu_scaling},
                         {"lu_singular", test_lu_singular},
                         {"host_apply", test_host_apply},
                         {"host_singular", test_host_singular},
                         {"registry", test_registry},
                         CU_TEST_INFO_NULL};
  return gs_test_main("block_jacobi_host", tests, 0);
}
