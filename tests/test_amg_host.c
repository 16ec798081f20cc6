/* tests/test_amg_host.c: the host reference of the AMG setup phases (precond/amg_host.c) against
 * the rules of precond/amg_impl.h, recomputed here independently: the diagonal and the strength
 * flags entry by entry; the MIS(2) from its definition on explicit two-hop balls and, on
 * symmetric strength graphs, against the sequential greedy MIS(2) in priority order (the
 * parallel rounds with fixed priorities give the lexicographically first MIS of G^2, Blelloch,
 * Fineman and Shun, SPAA 2012); the aggregates' rules a-d and their properties (partition,
 * non-empty, independence and maximality of the roots, a root within two strong hops); T^T T = I;
 * the smoothed P bit for bit against the header's order of operations and against a long double
 * reference within its rounding bound; SpGEMM and P^T A P against dense long double products;
 * the symmetry of A_c and the coarse image of the constant vector of a pure Neumann Laplacian;
 * error cases. Random matrices come from the printed seed; real ones from the matrix folder. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "precond/amg_impl.h"
#include "tests/testutil.h"

static uint64_t g_state;
static int g_seeded;

static uint64_t *rng(void)
{
  if (!g_seeded) {
    g_state = gs_test_seed() ^ 0xa3a3a3ull;
    g_seeded = 1;
  }
  return &g_state;
}

static double rnd(void) { return 2.0 * gs_test_uniform(rng()) - 1.0; }
static int rndint(int n) { return (int)(gs_test_uniform(rng()) * n); }

/* Unit roundoffs of double and of the long double references, gamma_k = k u / (1 - k u)
 * (Higham, Accuracy and Stability, Lemma 3.1), and the safety factor of testutil's bounds. */
static const double U = DBL_EPSILON / 2;
static const long double UL = LDBL_EPSILON / 2;
#define C_SAFE GS_TEST_SPMV_C

static double gam(double k, double u) { return k * u / (1.0 - k * u); }
static double gam2(double k) { return gam(k, U) + gam(k, (double)UL); }

static uint64_t bits(double v)
{
  uint64_t b;
  memcpy(&b, &v, sizeof b);
  return b;
}

static void *xmalloc(size_t bytes)
{
  void *p = malloc(bytes ? bytes : 1);
  CU_ASSERT_FATAL(p != NULL);
  return p;
}

static void *xcalloc(size_t n, size_t size)
{
  void *p = calloc(n ? n : 1, size);
  CU_ASSERT_FATAL(p != NULL);
  return p;
}

/* ---- matrices ------------------------------------------------------------------------------ */

static gs_coo_t *coo(gs_idx_t m, gs_idx_t n)
{
  gs_coo_t *C = NULL;
  CU_ASSERT_FATAL(gs_coo_create(&C, m, n, 16) == GS_SUCCESS);
  return C;
}

static void push(gs_coo_t *C, gs_idx_t i, gs_idx_t j, double v)
{
  CU_ASSERT_FATAL(gs_coo_push(C, i, j, v) == GS_SUCCESS);
}

static gs_csr_t *csr(gs_coo_t *C)
{
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
  gs_coo_destroy(&C);
  return A;
}

/* Symmetric, diagonally dominant (SPD): random off-diagonals of magnitudes over two decades
 * (so that some connections are strong and some weak), a_ii = sum_j |a_ij| + slack. */
static gs_csr_t *sym_random(gs_idx_t n, double per_row)
{
  gs_coo_t *C = coo(n, n);
  double *row = xcalloc((size_t)n, sizeof *row);
  for (gs_idx_t i = 0; i < n; ++i)
    for (gs_idx_t j = i + 1; j < n; ++j)
      if (gs_test_uniform(rng()) < per_row / n) {
        const double v = rnd() * pow(10.0, 2.0 * gs_test_uniform(rng()) - 1.0);
        push(C, i, j, v);
        push(C, j, i, v);
        row[i] += fabs(v);
        row[j] += fabs(v);
      }
  for (gs_idx_t i = 0; i < n; ++i) push(C, i, i, row[i] + 0.1 + gs_test_uniform(rng()));
  free(row);
  return csr(C);
}

/* Nonsymmetric with a nonzero diagonal: independent values for a_ij and a_ji, so the strength
 * graph is not symmetric. */
static gs_csr_t *nonsym_random(gs_idx_t n, double per_row)
{
  gs_coo_t *C = coo(n, n);
  for (gs_idx_t i = 0; i < n; ++i) {
    double s = 0.0;
    for (gs_idx_t j = 0; j < n; ++j)
      if (j != i && gs_test_uniform(rng()) < per_row / n) {
        const double v = rnd() * pow(10.0, 2.0 * gs_test_uniform(rng()) - 1.0);
        push(C, i, j, v);
        s += fabs(v);
      }
    push(C, i, i, (rndint(2) ? 1 : -1) * (0.5 * s + 0.1));
  }
  return csr(C);
}

/* Graph Laplacian of an nx x ny grid (5-point) with pure Neumann boundaries: a_ii = degree,
 * a_ij = -1, every row sum exactly 0. */
static gs_csr_t *neumann_laplacian(gs_idx_t nx, gs_idx_t ny)
{
  gs_coo_t *C = coo(nx * ny, nx * ny);
  for (gs_idx_t y = 0; y < ny; ++y)
    for (gs_idx_t x = 0; x < nx; ++x) {
      const gs_idx_t i = y * nx + x;
      int deg = 0;
      if (x > 0) push(C, i, i - 1, -1.0), ++deg;
      if (x + 1 < nx) push(C, i, i + 1, -1.0), ++deg;
      if (y > 0) push(C, i, i - nx, -1.0), ++deg;
      if (y + 1 < ny) push(C, i, i + nx, -1.0), ++deg;
      push(C, i, i, (double)deg);
    }
  return csr(C);
}

/* diag(A, B): two blocks with no entry between them. */
static gs_csr_t *block_diag(const gs_csr_t *A, const gs_csr_t *B)
{
  gs_coo_t *C = coo(A->m + B->m, A->n + B->n);
  for (gs_idx_t i = 0; i < A->m; ++i)
    for (gs_off_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k) push(C, i, A->col[k], A->val[k]);
  for (gs_idx_t i = 0; i < B->m; ++i)
    for (gs_off_t k = B->row_ptr[i]; k < B->row_ptr[i + 1]; ++k)
      push(C, A->m + i, A->n + B->col[k], B->val[k]);
  return csr(C);
}

static gs_csr_t *abs_copy(const gs_csr_t *A)
{
  gs_csr_t *B = NULL;
  CU_ASSERT_FATAL(gs_csr_copy(&B, A) == GS_SUCCESS);
  for (gs_off_t k = 0; k < B->nnz; ++k) B->val[k] = fabs(B->val[k]);
  return B;
}

static gs_off_t max_row(const gs_csr_t *A)
{
  gs_off_t m = 0;
  for (gs_idx_t i = 0; i < A->m; ++i)
    if (A->row_ptr[i + 1] - A->row_ptr[i] > m) m = A->row_ptr[i + 1] - A->row_ptr[i];
  return m;
}

static int rows_sorted(const gs_csr_t *A)
{
  for (gs_idx_t i = 0; i < A->m; ++i)
    for (gs_off_t k = A->row_ptr[i]; k + 1 < A->row_ptr[i + 1]; ++k)
      if (A->col[k] >= A->col[k + 1]) return 0;
  return 1;
}

/* Dense row-major long double copy. */
static long double *dense(const gs_csr_t *A, int absval)
{
  long double *D = xcalloc((size_t)A->m * (size_t)A->n, sizeof *D);
  for (gs_idx_t i = 0; i < A->m; ++i)
    for (gs_off_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k)
      D[(size_t)i * A->n + A->col[k]] += absval ? fabsl(A->val[k]) : A->val[k];
  return D;
}

/* ---- strength ------------------------------------------------------------------------------ */

static void check_diag_strength(const gs_csr_t *A, double theta, const double *d,
                                const uint8_t *strong, const char *label)
{
  int bad_d = 0, bad_s = 0;
  for (gs_idx_t i = 0; i < A->m; ++i) {
    double want = 0.0; /* a_ii as a column search finds it */
    for (gs_off_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k)
      if (A->col[k] == i) want = A->val[k];
    bad_d += bits(d[i]) != bits(want);
  }
  for (gs_idx_t i = 0; i < A->m; ++i)
    for (gs_off_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k) {
      const gs_idx_t j = A->col[k];
      const double a = A->val[k];
      /* rule 2: |a_ij| >= theta * sqrt(|d_i| * |d_j|), a_ij != 0, j != i */
      const int want = j != i && a != 0.0 && fabs(a) >= theta * sqrt(fabs(d[i]) * fabs(d[j]));
      bad_s += strong[k] != want;
    }
  if (bad_d || bad_s)
    fprintf(stderr, "%s: %d wrong diagonal values, %d wrong strength flags\n", label, bad_d,
            bad_s);
  CU_ASSERT_EQUAL(bad_d, 0);
  CU_ASSERT_EQUAL(bad_s, 0);
}

/* ---- aggregation --------------------------------------------------------------------------- */

/* The strength graph as the MIS sees it: Ns(i) restricted to non-isolated nodes. */
typedef struct graph {
  gs_idx_t n;
  uint8_t *iso;
  gs_off_t *rp;
  gs_idx_t *adj;
  gs_idx_t *stamp; /* scratch marker of ball() */
  gs_idx_t *buf;   /* scratch list of ball() */
  gs_idx_t cur;
} graph_t;

static graph_t graph_of(const gs_csr_t *A, const uint8_t *strong)
{
  graph_t G = {A->m, NULL, NULL, NULL, NULL, NULL, 0};
  G.iso = xmalloc((size_t)A->m);
  G.rp = xcalloc((size_t)A->m + 1, sizeof *G.rp);
  G.adj = xmalloc((size_t)A->nnz * sizeof *G.adj);
  G.stamp = xmalloc((size_t)A->m * sizeof *G.stamp);
  G.buf = xmalloc((size_t)A->m * sizeof *G.buf);
  for (gs_idx_t i = 0; i < A->m; ++i) {
    int any = 0;
    for (gs_off_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k)
      if (strong[k] && A->col[k] != i) any = 1;
    G.iso[i] = (uint8_t)!any;
    G.stamp[i] = -1;
  }
  gs_off_t q = 0;
  for (gs_idx_t i = 0; i < A->m; ++i) {
    for (gs_off_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k)
      if (strong[k] && A->col[k] != i && !G.iso[A->col[k]]) G.adj[q++] = A->col[k];
    G.rp[i + 1] = q;
  }
  return G;
}

static void graph_free(graph_t *G)
{
  free(G->iso);
  free(G->rp);
  free(G->adj);
  free(G->stamp);
  free(G->buf);
}

/* The nodes within two hops of i (i included): its count, the nodes in G->buf. */
static gs_idx_t ball(graph_t *G, gs_idx_t i)
{
  gs_idx_t cnt = 0;
  const gs_idx_t s = G->cur++;
  G->stamp[i] = s;
  G->buf[cnt++] = i;
  for (gs_off_t k = G->rp[i]; k < G->rp[i + 1]; ++k) {
    const gs_idx_t j = G->adj[k];
    if (G->stamp[j] != s) G->stamp[j] = s, G->buf[cnt++] = j;
    for (gs_off_t l = G->rp[j]; l < G->rp[j + 1]; ++l)
      if (G->stamp[G->adj[l]] != s) G->stamp[G->adj[l]] = s, G->buf[cnt++] = G->adj[l];
  }
  return cnt;
}

static int hops_le2(const graph_t *G, gs_idx_t i, gs_idx_t r)
{
  if (i == r) return 1;
  for (gs_off_t k = G->rp[i]; k < G->rp[i + 1]; ++k) {
    const gs_idx_t j = G->adj[k];
    if (j == r) return 1;
    for (gs_off_t l = G->rp[j]; l < G->rp[j + 1]; ++l)
      if (G->adj[l] == r) return 1;
  }
  return 0;
}

/* MIS(2) from its definition: in a round, an UNDECIDED node is IN when its key is the largest
 * over its two-hop ball, OUT when an IN node is in the ball; decisions are applied together.
 * Returns the rounds; in[i] = 1 for the roots. */
static int mis2_literal(graph_t *G, uint8_t *in)
{
  uint8_t *state = xmalloc((size_t)G->n), *next = xmalloc((size_t)G->n);
  gs_idx_t left = 0;
  int rounds = 0;
  for (gs_idx_t i = 0; i < G->n; ++i) {
    state[i] = G->iso[i] ? GS_AMG_OUT : GS_AMG_UNDECIDED;
    left += !G->iso[i];
  }
  while (left > 0 && rounds <= G->n) {
    ++rounds;
    memcpy(next, state, (size_t)G->n);
    for (gs_idx_t i = 0; i < G->n; ++i) {
      if (state[i] != GS_AMG_UNDECIDED || G->iso[i]) continue;
      const gs_idx_t cnt = ball(G, i);
      uint64_t mx = 0;
      int near_in = 0;
      for (gs_idx_t c = 0; c < cnt; ++c) {
        const gs_idx_t k = G->buf[c];
        const uint64_t key = gs_amg_key(state[k], k);
        if (key > mx) mx = key;
        near_in |= state[k] == GS_AMG_IN;
      }
      if (mx == gs_amg_key(GS_AMG_UNDECIDED, i)) next[i] = GS_AMG_IN, --left;
      else if (near_in) next[i] = GS_AMG_OUT, --left;
    }
    memcpy(state, next, (size_t)G->n);
  }
  CU_ASSERT(left == 0);
  for (gs_idx_t i = 0; i < G->n; ++i) in[i] = state[i] == GS_AMG_IN;
  free(state);
  free(next);
  return rounds;
}

static int by_priority_desc(const void *a, const void *b)
{
  const uint64_t x = gs_amg_key(0, *(const gs_idx_t *)a), y = gs_amg_key(0, *(const gs_idx_t *)b);
  return (x < y) - (x > y);
}

/* Sequential greedy MIS(2): nodes in decreasing priority, each taken when no taken node is
 * within two hops (on a symmetric graph, the same set as the parallel rounds). */
static void mis2_greedy(graph_t *G, uint8_t *in)
{
  gs_idx_t *order = xmalloc((size_t)G->n * sizeof *order), m = 0;
  for (gs_idx_t i = 0; i < G->n; ++i) {
    in[i] = 0;
    if (!G->iso[i]) order[m++] = i;
  }
  qsort(order, (size_t)m, sizeof *order, by_priority_desc);
  for (gs_idx_t p = 0; p < m; ++p) {
    const gs_idx_t i = order[p], cnt = ball(G, i);
    int free_ = 1;
    for (gs_idx_t c = 0; c < cnt && free_; ++c) free_ = !in[G->buf[c]];
    in[i] = (uint8_t)free_;
  }
  free(order);
}

static int strength_symmetric(const gs_csr_t *A, const uint8_t *strong)
{
  gs_csr_t *S = NULL, *St = NULL;
  gs_coo_t *C = coo(A->m, A->n);
  for (gs_idx_t i = 0; i < A->m; ++i)
    for (gs_off_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k)
      if (strong[k]) push(C, i, A->col[k], 1.0);
  S = csr(C);
  CU_ASSERT_FATAL(gs_csr_transpose(&St, S) == GS_SUCCESS);
  int sym = S->nnz == St->nnz &&
            memcmp(S->row_ptr, St->row_ptr, ((size_t)S->m + 1) * sizeof *S->row_ptr) == 0 &&
            memcmp(S->col, St->col, (size_t)S->nnz * sizeof *S->col) == 0;
  gs_csr_destroy(&S);
  gs_csr_destroy(&St);
  return sym;
}

/* Every promise of rules 3a-d, recomputed; returns 1 when the strength graph was symmetric. */
static int check_aggregation(const gs_csr_t *A, const uint8_t *strong, const int32_t *agg,
                             int32_t naggs, int rounds, const char *label)
{
  const gs_idx_t n = A->m;
  graph_t G = graph_of(A, strong);
  uint8_t *in = xmalloc((size_t)n);
  int32_t *want = xmalloc((size_t)n * sizeof *want), *prev = xmalloc((size_t)n * sizeof *prev);
  gs_idx_t *root_of = xmalloc((size_t)(naggs > 0 ? naggs : 1) * sizeof *root_of);
  int64_t *size = xcalloc((size_t)(naggs > 0 ? naggs : 1), sizeof *size);
  const int sym = strength_symmetric(A, strong);

  const int want_rounds = mis2_literal(&G, in);
  CU_ASSERT_EQUAL(rounds, want_rounds);
  if (sym) { /* the parallel MIS(2) is the greedy one in priority order */
    uint8_t *gr = xmalloc((size_t)n);
    mis2_greedy(&G, gr);
    CU_ASSERT(memcmp(gr, in, (size_t)n) == 0);
    free(gr);
  }

  /* rules a-d from their text */
  int32_t nroots = 0;
  for (gs_idx_t i = 0; i < n; ++i) want[i] = in[i] ? nroots++ : -1;
  for (gs_idx_t i = 0; i < n; ++i) {
    if (G.iso[i] || in[i]) continue;
    gs_idx_t best = -1;
    for (gs_off_t k = G.rp[i]; k < G.rp[i + 1]; ++k)
      if (in[G.adj[k]] && (best < 0 || gs_amg_key(2, G.adj[k]) > gs_amg_key(2, best)))
        best = G.adj[k];
    if (best >= 0) want[i] = want[best];
  }
  memcpy(prev, want, (size_t)n * sizeof *prev);
  for (gs_idx_t i = 0; i < n; ++i) {
    if (G.iso[i] || prev[i] >= 0) continue;
    gs_idx_t best = -1;
    for (gs_off_t k = G.rp[i]; k < G.rp[i + 1]; ++k)
      if (prev[G.adj[k]] >= 0 && (best < 0 || gs_amg_key(0, G.adj[k]) > gs_amg_key(0, best)))
        best = G.adj[k];
    if (best >= 0) want[i] = prev[best];
  }
  int32_t nd = nroots;
  for (gs_idx_t i = 0; i < n; ++i)
    if (!G.iso[i] && want[i] < 0) want[i] = nd++;
  CU_ASSERT_EQUAL(naggs, nd);
  CU_ASSERT_EQUAL(nd, nroots); /* an OUT node reaches a root in two hops: rule d never fires */
  int wrong = 0;
  for (gs_idx_t i = 0; i < n; ++i) wrong += agg[i] != want[i];
  CU_ASSERT_EQUAL(wrong, 0);

  /* properties */
  int bad_range = 0, bad_iso = 0, bad_root = 0, bad_far = 0;
  for (gs_idx_t i = 0; i < n; ++i) {
    bad_iso += (agg[i] < 0) != G.iso[i];
    if (agg[i] < -1 || agg[i] >= naggs) {
      ++bad_range;
      continue;
    }
    if (agg[i] >= 0) ++size[agg[i]];
  }
  for (gs_idx_t i = 0, r = 0; i < n; ++i)
    if (in[i]) {
      bad_root += agg[i] != r; /* the roots numbered in node order */
      root_of[r++] = i;
    }
  int empty = 0;
  for (int32_t J = 0; J < naggs; ++J) empty += size[J] == 0;
  for (gs_idx_t i = 0; i < n && !bad_range; ++i)
    if (agg[i] >= 0 && agg[i] < nroots) bad_far += !hops_le2(&G, i, root_of[agg[i]]);
  CU_ASSERT_EQUAL(bad_range, 0);
  CU_ASSERT_EQUAL(bad_iso, 0);
  CU_ASSERT_EQUAL(bad_root, 0);
  CU_ASSERT_EQUAL(empty, 0);
  CU_ASSERT_EQUAL(bad_far, 0);
  if (sym) { /* distance-2 independent and maximal */
    int close = 0, uncovered = 0;
    for (gs_idx_t i = 0; i < n; ++i) {
      if (G.iso[i]) continue;
      const gs_idx_t cnt = ball(&G, i);
      int roots = 0;
      for (gs_idx_t c = 0; c < cnt; ++c) roots += in[G.buf[c]];
      if (in[i] && roots != 1) ++close;
      if (roots == 0) ++uncovered;
    }
    CU_ASSERT_EQUAL(close, 0);
    CU_ASSERT_EQUAL(uncovered, 0);
    if (close || uncovered)
      fprintf(stderr, "%s: %d roots with another within 2 hops, %d nodes uncovered\n", label,
              close, uncovered);
  }
  if (wrong || bad_range || bad_iso || bad_root || empty || bad_far || naggs != nd)
    fprintf(stderr,
            "%s: aggregates: %d differ from the rules, range %d, isolated %d, root numbering "
            "%d, empty %d, far from root %d, naggs %d want %d\n",
            label, wrong, bad_range, bad_iso, bad_root, empty, bad_far, naggs, nd);
  free(in);
  free(want);
  free(prev);
  free(root_of);
  free(size);
  graph_free(&G);
  return sym;
}

/* ---- tentative prolongator ----------------------------------------------------------------- */

/* T^T T = I: column J's squares sum to 1 within gamma_{2m+4} (m its size: the norm's m-term sum,
 * sqrt and division, then this check's own sum of m squares), or the column is zero where B
 * vanishes on the aggregate; each t_i = B_i / ||B_J|| within gamma_{m+2}; B = ones: exactly
 * 1 / sqrt(m). Off-diagonal entries of T^T T are zero by construction (one entry a row). */
static void check_tentative(gs_idx_t n, const int32_t *agg, int32_t naggs, const double *B,
                            const double *t, const char *label)
{
  double *sq = xcalloc((size_t)(naggs > 0 ? naggs : 1), sizeof *sq);
  long double *nb = xcalloc((size_t)(naggs > 0 ? naggs : 1), sizeof *nb);
  int64_t *m = xcalloc((size_t)(naggs > 0 ? naggs : 1), sizeof *m);
  int bad_t = 0, bad_col = 0;
  for (gs_idx_t i = 0; i < n; ++i) {
    if (agg[i] < 0) {
      bad_t += t[i] != 0.0;
      continue;
    }
    const double b = B ? B[i] : 1.0;
    sq[agg[i]] += t[i] * t[i];
    nb[agg[i]] += (long double)b * b;
    ++m[agg[i]];
  }
  for (gs_idx_t i = 0; i < n; ++i) {
    if (agg[i] < 0) continue;
    const int32_t J = agg[i];
    const double b = B ? B[i] : 1.0;
    if (nb[J] == 0.0L) {
      bad_t += t[i] != 0.0;
    } else if (!B) {
      bad_t += bits(t[i]) != bits(1.0 / sqrt((double)m[J]));
    } else {
      const long double want = b / sqrtl(nb[J]);
      bad_t += fabsl(t[i] - want) > C_SAFE * gam2((double)m[J] + 2) * fabsl(want);
    }
  }
  for (int32_t J = 0; J < naggs; ++J) {
    if (nb[J] == 0.0L) {
      bad_col += sq[J] != 0.0;
      continue;
    }
    if (fabs(sq[J] - 1.0) > C_SAFE * gam(2.0 * m[J] + 4, U)) {
      if (!bad_col) fprintf(stderr, "%s: column %d of T: |t|^2 = %.17g\n", label, J, sq[J]);
      ++bad_col;
    }
  }
  CU_ASSERT_EQUAL(bad_t, 0);
  CU_ASSERT_EQUAL(bad_col, 0);
  if (bad_t) fprintf(stderr, "%s: %d wrong tentative values\n", label, bad_t);
  free(sq);
  free(nb);
  free(m);
}

/* ---- smoothed prolongator ------------------------------------------------------------------ */

static double omega_of(const gs_csr_t *A, const double *d)
{
  double rho = 0.0; /* Gershgorin bound of rho(D^-1 A) */
  for (gs_idx_t i = 0; i < A->m; ++i) {
    double s = 0.0;
    for (gs_off_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k) s += fabs(A->val[k]);
    if (s / fabs(d[i]) > rho) rho = s / fabs(d[i]);
  }
  return rho > 0.0 ? (4.0 / 3.0) / rho : 1.0;
}

/* P's shape and pattern; its bits against the header's rule evaluated in the most literal way
 * (for each aggregate J met, a pass over the whole row); its values against
 * (I - omega D^-1 A) T in long double within the bound
 *   |P_ij - ref| <= C (gamma_{m+3}(u) + gamma_{m+3}(u_ref)) (|t_i| [J == agg_i] + |w_i| S_J),
 * S_J = sum_k |a_ik t_k| over the m entries of row i in aggregate J (the m products and sums of
 * v_J, the rounding of w_i, the product and the final sum). */
static void check_smooth_p(const gs_csr_t *A, const double *d, const int32_t *agg,
                           const double *t, int32_t naggs, double omega, const gs_csr_t *P,
                           const char *label)
{
  CU_ASSERT_EQUAL_FATAL(P->m, A->m);
  CU_ASSERT_EQUAL_FATAL(P->n, naggs);
  CU_ASSERT(rows_sorted(P));
  const size_t na = (size_t)(naggs > 0 ? naggs : 1);
  uint8_t *met = xcalloc(na, 1);
  long double *ref = xcalloc(na, sizeof *ref), *mag = xcalloc(na, sizeof *mag);
  int *cnt = xcalloc(na, sizeof *cnt);
  int bad_pattern = 0, bad_bits = 0, bad_val = 0;
  double worst = 0.0;
  for (gs_idx_t i = 0; i < A->m; ++i) {
    const double w = -omega / d[i];
    const long double wl = -(long double)omega / d[i];
    gs_off_t nmet = 0;
    for (gs_off_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k) {
      const int32_t J = agg[A->col[k]];
      if (J < 0) continue;
      if (!met[J]) met[J] = 1, ++nmet;
      ref[J] += (long double)A->val[k] * t[A->col[k]];
      mag[J] += fabsl((long double)A->val[k] * t[A->col[k]]);
      ++cnt[J];
    }
    bad_pattern += P->row_ptr[i + 1] - P->row_ptr[i] != nmet;
    for (gs_off_t p = P->row_ptr[i]; p < P->row_ptr[i + 1]; ++p) {
      const int32_t J = P->col[p];
      if (J < 0 || J >= naggs || !met[J]) {
        ++bad_pattern;
        continue;
      }
      /* the header's rule, literally */
      double v = 0.0;
      for (gs_off_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k)
        if (agg[A->col[k]] == J) {
          const double prod = A->val[k] * t[A->col[k]];
          v = v + prod;
        }
      const double pw = w * v;
      const double want = J == agg[i] ? t[i] + pw : pw;
      bad_bits += bits(P->val[p]) != bits(want);
      /* the long double reference */
      const long double own = J == agg[i] ? (long double)t[i] : 0.0L;
      const long double r = own + wl * ref[J];
      const double bound = C_SAFE * gam2(cnt[J] + 3.0) * (double)(fabsl(own) + fabsl(wl) * mag[J]);
      const double err = (double)fabsl(P->val[p] - r);
      if (err > bound) ++bad_val;
      if (bound > 0 && err / bound > worst) worst = err / bound;
      if (bound == 0 && err > 0) worst = INFINITY;
    }
    for (gs_off_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k) {
      const int32_t J = agg[A->col[k]];
      if (J >= 0) met[J] = 0, ref[J] = 0.0L, mag[J] = 0.0L, cnt[J] = 0;
    }
  }
  CU_ASSERT_EQUAL(bad_pattern, 0);
  CU_ASSERT_EQUAL(bad_bits, 0);
  CU_ASSERT_EQUAL(bad_val, 0);
  if (bad_pattern || bad_bits || bad_val)
    fprintf(stderr, "%s: P: %d pattern faults, %d values off the rule's bits, %d over the "
            "bound (worst ratio %.3g)\n", label, bad_pattern, bad_bits, bad_val, worst);
  free(met);
  free(ref);
  free(mag);
  free(cnt);
}

/* ---- products ------------------------------------------------------------------------------ */

/* C = A B against the dense long double product: C's pattern is exactly the structural product
 * (no entry dropped, cancellations kept), rows sorted, and
 *   |c_ij - ref| <= C (gamma_k(u) + gamma_k(u_ref)) (|A||B|)_ij,  k = A's longest row. */
static void check_product(const gs_csr_t *A, const gs_csr_t *B, const gs_csr_t *C,
                          const char *label)
{
  CU_ASSERT_EQUAL_FATAL(C->m, A->m);
  CU_ASSERT_EQUAL_FATAL(C->n, B->n);
  CU_ASSERT(rows_sorted(C));
  const size_t m = (size_t)A->m, n = (size_t)B->n;
  long double *ref = xcalloc(m * n, sizeof *ref), *mag = xcalloc(m * n, sizeof *mag);
  uint8_t *pat = xcalloc(m * n, 1);
  for (gs_idx_t i = 0; i < A->m; ++i)
    for (gs_off_t ka = A->row_ptr[i]; ka < A->row_ptr[i + 1]; ++ka)
      for (gs_off_t kb = B->row_ptr[A->col[ka]]; kb < B->row_ptr[A->col[ka] + 1]; ++kb) {
        const size_t e = (size_t)i * n + B->col[kb];
        ref[e] += (long double)A->val[ka] * B->val[kb];
        mag[e] += fabsl((long double)A->val[ka] * B->val[kb]);
        pat[e] = 1;
      }
  const double g = gam2((double)max_row(A));
  gs_off_t want_nnz = 0, bad = 0;
  for (size_t e = 0; e < m * n; ++e) want_nnz += pat[e];
  CU_ASSERT_EQUAL(C->nnz, want_nnz);
  for (gs_idx_t i = 0; i < C->m; ++i)
    for (gs_off_t p = C->row_ptr[i]; p < C->row_ptr[i + 1]; ++p) {
      const size_t e = (size_t)i * n + C->col[p];
      if (!pat[e] || fabsl(C->val[p] - ref[e]) > C_SAFE * g * mag[e]) {
        if (!bad)
          fprintf(stderr, "%s: C(%d,%d) = %.17g, want %.17Lg (bound %.3Lg)\n", label, i,
                  C->col[p], C->val[p], ref[e], C_SAFE * g * mag[e]);
        ++bad;
      }
    }
  CU_ASSERT_EQUAL(bad, 0);
  free(ref);
  free(mag);
  free(pat);
}

/* A_c = P^T A P against the dense long double product within
 *   C (gamma_{kA+kR}(u) + gamma(u_ref)) (|P|^T |A| |P|)_IJ
 * (the two sums of the two products: A's and R's longest rows). */
static void check_rap_dense(const gs_csr_t *A, const gs_csr_t *P, const gs_csr_t *Ac,
                            const char *label)
{
  CU_ASSERT_EQUAL_FATAL(Ac->m, P->n);
  CU_ASSERT_EQUAL_FATAL(Ac->n, P->n);
  CU_ASSERT(rows_sorted(Ac));
  gs_csr_t *R = NULL;
  CU_ASSERT_FATAL(gs_csr_transpose(&R, P) == GS_SUCCESS);
  const size_t n = (size_t)A->m, nc = (size_t)P->n;
  long double *Ad = dense(A, 0), *Pd = dense(P, 0), *Aa = dense(A, 1), *Pa = dense(P, 1);
  long double *ref = xcalloc(nc * nc, sizeof *ref), *mag = xcalloc(nc * nc, sizeof *mag);
  for (size_t I = 0; I < nc; ++I)
    for (size_t k = 0; k < n; ++k) {
      if (Pa[k * nc + I] == 0.0L) continue;
      for (size_t l = 0; l < n; ++l) {
        if (Aa[k * n + l] == 0.0L) continue;
        for (size_t J = 0; J < nc; ++J) {
          ref[I * nc + J] += Pd[k * nc + I] * Ad[k * n + l] * Pd[l * nc + J];
          mag[I * nc + J] += Pa[k * nc + I] * Aa[k * n + l] * Pa[l * nc + J];
        }
      }
    }
  const double g = gam2((double)(max_row(A) + max_row(R)));
  long double *got = xcalloc(nc * nc, sizeof *got);
  for (gs_idx_t I = 0; I < Ac->m; ++I)
    for (gs_off_t p = Ac->row_ptr[I]; p < Ac->row_ptr[I + 1]; ++p)
      got[(size_t)I * nc + Ac->col[p]] = Ac->val[p];
  int bad = 0;
  for (size_t e = 0; e < nc * nc; ++e)
    if (fabsl(got[e] - ref[e]) > C_SAFE * g * mag[e]) {
      if (!bad)
        fprintf(stderr, "%s: Ac(%zu,%zu) = %.17Lg, want %.17Lg\n", label, e / nc, e % nc, got[e],
                ref[e]);
      ++bad;
    }
  CU_ASSERT_EQUAL(bad, 0);
  gs_csr_destroy(&R);
  free(Ad);
  free(Pd);
  free(Aa);
  free(Pa);
  free(ref);
  free(mag);
  free(got);
}

/* A symmetric: A_c's pattern is symmetric and |Ac_IJ - Ac_JI| <= 2 C gamma_k M_IJ (1 + gamma_k),
 * M = |P|^T |A| |P| computed by the same products (each of Ac_IJ and Ac_JI lies within
 * C gamma_k M of the same exact value; computed M is below the exact one by at most gamma_k). */
static void check_rap_symmetric(const gs_csr_t *A, const gs_csr_t *P, const gs_csr_t *Ac,
                                const char *label)
{
  gs_csr_t *Aa = abs_copy(A), *Pa = abs_copy(P), *M = NULL, *T = NULL, *R = NULL;
  CU_ASSERT_FATAL(gs_amg_rap_host(Aa, Pa, &M) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_csr_transpose(&T, Ac) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_csr_transpose(&R, P) == GS_SUCCESS);
  CU_ASSERT(rows_sorted(Ac));
  const double k = (double)(max_row(A) + max_row(R)), g = gam(k, U);
  int same = M->nnz == Ac->nnz && T->nnz == Ac->nnz &&
             memcmp(T->row_ptr, Ac->row_ptr, ((size_t)Ac->m + 1) * sizeof *T->row_ptr) == 0 &&
             memcmp(T->col, Ac->col, (size_t)Ac->nnz * sizeof *T->col) == 0 &&
             memcmp(M->col, Ac->col, (size_t)Ac->nnz * sizeof *M->col) == 0;
  CU_ASSERT(same);
  int bad = 0;
  for (gs_off_t p = 0; same && p < Ac->nnz; ++p)
    if (fabs(Ac->val[p] - T->val[p]) > 2.0 * C_SAFE * g * M->val[p] * (1.0 + g)) {
      if (!bad) fprintf(stderr, "%s: Ac not symmetric at entry %lld\n", label, (long long)p);
      ++bad;
    }
  CU_ASSERT_EQUAL(bad, 0);
  gs_csr_destroy(&Aa);
  gs_csr_destroy(&Pa);
  gs_csr_destroy(&M);
  gs_csr_destroy(&T);
  gs_csr_destroy(&R);
}

/* ---- the pipeline on one matrix -------------------------------------------------------------- */

/* Setup phases 1-6 on A with each check; rap_dense compares A_c with the dense product (small
 * matrices). Returns the aggregates (caller frees) when out_agg is set. */
static void pipeline(const gs_csr_t *A, double theta, int rap_dense, const char *label,
                     int32_t **out_agg)
{
  const gs_idx_t n = A->m;
  double *d = xmalloc((size_t)n * sizeof *d), *t = xmalloc((size_t)n * sizeof *t);
  double *B = xmalloc((size_t)n * sizeof *B);
  uint8_t *strong = xmalloc((size_t)A->nnz);
  int32_t *agg = xmalloc((size_t)n * sizeof *agg), *agg2 = xmalloc((size_t)n * sizeof *agg2);
  int32_t naggs = -1, naggs2 = -1;
  int rounds = -1, rounds2 = -1;
  char lab[160];
  snprintf(lab, sizeof lab, "%s theta=%g", label, theta);

  gs_amg_diag_host(A, d);
  gs_amg_strength_host(A, d, theta, strong);
  check_diag_strength(A, theta, d, strong, lab);
  CU_ASSERT_FATAL(gs_amg_aggregate_host(A, strong, agg, &naggs, &rounds) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_amg_aggregate_host(A, strong, agg2, &naggs2, &rounds2) == GS_SUCCESS);
  CU_ASSERT(naggs == naggs2 && rounds == rounds2 &&
            memcmp(agg, agg2, (size_t)n * sizeof *agg) == 0); /* deterministic */
  const int sym = check_aggregation(A, strong, agg, naggs, rounds, lab);

  /* T for B = ones (NULL and explicit, bit-identical) and a random B with a zero aggregate */
  CU_ASSERT_FATAL(gs_amg_tentative_host(n, agg, naggs, NULL, t) == GS_SUCCESS);
  check_tentative(n, agg, naggs, NULL, t, lab);
  for (gs_idx_t i = 0; i < n; ++i) B[i] = 1.0;
  double *t1 = xmalloc((size_t)n * sizeof *t1);
  CU_ASSERT_FATAL(gs_amg_tentative_host(n, agg, naggs, B, t1) == GS_SUCCESS);
  CU_ASSERT(memcmp(t, t1, (size_t)n * sizeof *t) == 0);
  for (gs_idx_t i = 0; i < n; ++i) B[i] = agg[i] == 0 ? 0.0 : rnd();
  CU_ASSERT_FATAL(gs_amg_tentative_host(n, agg, naggs, B, t1) == GS_SUCCESS);
  check_tentative(n, agg, naggs, B, t1, lab);

  int zero_row = -1;
  for (gs_idx_t i = 0; i < n && zero_row < 0; ++i)
    if (d[i] == 0.0) zero_row = i;
  gs_csr_t *P = NULL, *Ac = NULL;
  const double omega = zero_row < 0 ? omega_of(A, d) : 1.0;
  const gs_status_t st = gs_amg_smooth_p_host(A, d, agg, t, naggs, omega, &P);
  if (zero_row >= 0) { /* the first row without a diagonal, named 1-based */
    char want[64];
    snprintf(want, sizeof want, "row %d ", zero_row + 1);
    CU_ASSERT_EQUAL(st, GS_ERR_INVALID_ARG);
    CU_ASSERT_PTR_NULL(P);
    CU_ASSERT_PTR_NOT_NULL(strstr(gs_last_error(), want));
  } else {
    CU_ASSERT_FATAL(st == GS_SUCCESS);
    check_smooth_p(A, d, agg, t, naggs, omega, P, lab);
    /* with a random B too */
    gs_csr_t *P1 = NULL;
    CU_ASSERT_FATAL(gs_amg_smooth_p_host(A, d, agg, t1, naggs, omega, &P1) == GS_SUCCESS);
    check_smooth_p(A, d, agg, t1, naggs, omega, P1, lab);
    gs_csr_destroy(&P1);
    CU_ASSERT_FATAL(gs_amg_rap_host(A, P, &Ac) == GS_SUCCESS);
    if (rap_dense) check_rap_dense(A, P, Ac, lab);
    if (sym && A->symmetry != GS_SYM_GENERAL) check_rap_symmetric(A, P, Ac, lab);
  }
  gs_csr_destroy(&P);
  gs_csr_destroy(&Ac);
  free(d);
  free(t);
  free(t1);
  free(B);
  free(strong);
  free(agg2);
  if (out_agg) *out_agg = agg;
  else free(agg);
}

/* Whether A equals its transpose exactly (values too). */
static int exactly_symmetric(const gs_csr_t *A)
{
  gs_csr_t *T = NULL;
  CU_ASSERT_FATAL(gs_csr_transpose(&T, A) == GS_SUCCESS);
  int s = T->nnz == A->nnz &&
          memcmp(T->row_ptr, A->row_ptr, ((size_t)A->m + 1) * sizeof *T->row_ptr) == 0 &&
          memcmp(T->col, A->col, (size_t)A->nnz * sizeof *T->col) == 0 &&
          memcmp(T->val, A->val, (size_t)A->nnz * sizeof *T->val) == 0;
  gs_csr_destroy(&T);
  return s;
}

/* Marks A symmetric when it is (check_rap_symmetric runs then). */
static void run(gs_csr_t *A, double theta, int rap_dense, const char *label)
{
  A->symmetry = A->m == A->n && exactly_symmetric(A) ? GS_SYM_SYMMETRIC : GS_SYM_GENERAL;
  pipeline(A, theta, rap_dense, label, NULL);
}

/* ---- tests ----------------------------------------------------------------------------------- */

static void test_random(void)
{
  const int reps = gs_test_quick() ? 4 : 12;
  for (int r = 0; r < reps; ++r) {
    const gs_idx_t n = 5 + rndint(gs_test_quick() ? 40 : 70);
    const double per = 1.0 + 8.0 * gs_test_uniform(rng());
    const double theta = r % 3 == 0 ? 0.0 : 0.5 * gs_test_uniform(rng());
    char lab[64];
    gs_csr_t *A = sym_random(n, per);
    snprintf(lab, sizeof lab, "sym random n=%d", n);
    run(A, theta, 1, lab);
    gs_csr_destroy(&A);
    A = nonsym_random(n, per);
    snprintf(lab, sizeof lab, "nonsym random n=%d", n);
    run(A, theta, 1, lab);
    gs_csr_destroy(&A);
  }
  /* larger ones without the dense products */
  const gs_idx_t big = gs_test_quick() ? 600 : 3000;
  gs_csr_t *A = sym_random(big, 6.0);
  run(A, 0.1, 0, "sym random large");
  gs_csr_destroy(&A);
  A = nonsym_random(big, 6.0);
  run(A, 0.1, 0, "nonsym random large");
  gs_csr_destroy(&A);
}

static void test_laplacians(void)
{
  static const struct { int nx, ny, nz, st; } g[] = {
      {50, 1, 1, 3}, {20, 20, 1, 5}, {15, 15, 1, 9}, {8, 8, 8, 7}, {6, 6, 6, 27},
      {64, 64, 1, 5}, {20, 20, 20, 7}, {14, 14, 14, 27}};
  const size_t cnt = gs_test_quick() ? 5 : sizeof g / sizeof g[0];
  for (size_t c = 0; c < cnt; ++c) {
    gs_csr_t *A = NULL;
    CU_ASSERT_FATAL(gs_gen_laplace(&A, g[c].nx, g[c].ny, g[c].nz, g[c].st) == GS_SUCCESS);
    char lab[64];
    snprintf(lab, sizeof lab, "laplace %dx%dx%d/%d", g[c].nx, g[c].ny, g[c].nz, g[c].st);
    run(A, 0.0, A->m <= 100, lab);
    run(A, 0.25, 0, lab);
    gs_csr_destroy(&A);
  }
}

static void test_real_matrices(void)
{
  static const char *names[] = {"494_bus", "nos7", "bcsstk13", "fs_183_1", "west0479",
                                "Si2", "zenios", "orsreg_1", "add32", "as-caida20071105",
                                "wiki-Vote"};
  const size_t cnt = gs_test_quick() ? 5 : sizeof names / sizeof names[0];
  if (!gs_test_have_matrices()) return;
  for (size_t c = 0; c < cnt; ++c) {
    if (!gs_test_have_matrix(names[c])) continue;
    gs_csr_t *A = NULL;
    CU_ASSERT_FATAL(gs_mm_read_csr(gs_test_matrix(names[c]), &A) == GS_SUCCESS);
    run(A, 0.0, 0, names[c]);
    run(A, 0.08, 0, names[c]);
    gs_csr_destroy(&A);
  }
}

/* Pure Neumann graph Laplacian (A 1 = 0 exactly), theta = 0 (no isolated node), B = ones:
 * T c = 1 up to rounding for c_J = sqrt(|J|), P c = 1 - w D^-1 A 1 = 1, so A_c c = 0 but for
 * the roundings, bounded (elementwise, magnitudes in long double) by
 *   |P|^T |A| g + gamma_{kA+kR} |P|^T |A| |P| |c| + gamma_k(u_ref) |A_c| |c|,
 *   g_i = |f_i| + |w_i| (|A| |f|)_i + gamma_{m_i+3} (|t_i| c_i + |w_i| (|A| |T| c)_i),
 * f = T c - 1 (T c up to rounding), the last term of g being P's own rounding (check_smooth_p's
 * bound) applied to c. */
static void test_neumann_constant(void)
{
  const int cases[][2] = {{12, 9}, {30, 30}, {7, 1}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    gs_csr_t *A = neumann_laplacian(cases[c][0], cases[c][1]), *P = NULL, *Ac = NULL, *R = NULL;
    A->symmetry = GS_SYM_SYMMETRIC;
    int32_t *agg = NULL;
    pipeline(A, 0.0, A->m <= 120, "neumann", &agg);
    const gs_idx_t n = A->m;
    double *d = xmalloc((size_t)n * sizeof *d), *t = xmalloc((size_t)n * sizeof *t);
    uint8_t *strong = xmalloc((size_t)A->nnz);
    int32_t naggs = 0;
    int rounds = 0;
    gs_amg_diag_host(A, d);
    gs_amg_strength_host(A, d, 0.0, strong);
    CU_ASSERT_FATAL(gs_amg_aggregate_host(A, strong, agg, &naggs, &rounds) == GS_SUCCESS);
    CU_ASSERT_FATAL(gs_amg_tentative_host(n, agg, naggs, NULL, t) == GS_SUCCESS);
    const double omega = omega_of(A, d);
    CU_ASSERT_FATAL(gs_amg_smooth_p_host(A, d, agg, t, naggs, omega, &P) == GS_SUCCESS);
    CU_ASSERT_FATAL(gs_amg_rap_host(A, P, &Ac) == GS_SUCCESS);
    CU_ASSERT_FATAL(gs_csr_transpose(&R, P) == GS_SUCCESS);
    int64_t *sz = xcalloc((size_t)naggs, sizeof *sz);
    for (gs_idx_t i = 0; i < n; ++i) {
      CU_ASSERT_FATAL(agg[i] >= 0);
      ++sz[agg[i]];
    }
    double *cv = xmalloc((size_t)naggs * sizeof *cv);
    for (int32_t J = 0; J < naggs; ++J) cv[J] = sqrt((double)sz[J]);
    long double *f = xmalloc((size_t)n * sizeof *f), *g = xmalloc((size_t)n * sizeof *g);
    long double *h = xmalloc((size_t)n * sizeof *h), *pc = xmalloc((size_t)n * sizeof *pc);
    for (gs_idx_t i = 0; i < n; ++i) /* |f_i|, with the long double product's own rounding */
      f[i] = fabsl((long double)t[i] * cv[agg[i]] - 1.0L) + UL * t[i] * cv[agg[i]];
    const double gp = gam2((double)max_row(A) + 3);
    for (gs_idx_t i = 0; i < n; ++i) {
      const long double w = fabsl((long double)omega / d[i]);
      long double af = 0.0L, atc = 0.0L;
      for (gs_off_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k) {
        af += fabsl((long double)A->val[k]) * f[A->col[k]];
        atc += fabsl((long double)A->val[k]) * t[A->col[k]] * cv[agg[A->col[k]]];
      }
      g[i] = f[i] + w * af + gp * ((long double)t[i] * cv[agg[i]] + w * atc);
      pc[i] = 0.0L; /* |P| |c| */
      for (gs_off_t p = P->row_ptr[i]; p < P->row_ptr[i + 1]; ++p)
        pc[i] += fabsl((long double)P->val[p]) * cv[P->col[p]];
    }
    for (gs_idx_t i = 0; i < n; ++i) { /* h = |A| g + gamma |A| |P| |c| */
      long double ag = 0.0L, ap = 0.0L;
      for (gs_off_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k) {
        ag += fabsl((long double)A->val[k]) * g[A->col[k]];
        ap += fabsl((long double)A->val[k]) * pc[A->col[k]];
      }
      h[i] = ag + gam((double)(max_row(A) + max_row(R)), U) * ap;
    }
    int bad = 0;
    long double worst = 0.0L;
    for (int32_t I = 0; I < naggs; ++I) {
      long double y = 0.0L, yabs = 0.0L, b = 0.0L;
      for (gs_off_t p = Ac->row_ptr[I]; p < Ac->row_ptr[I + 1]; ++p) {
        y += (long double)Ac->val[p] * cv[Ac->col[p]];
        yabs += fabsl((long double)Ac->val[p]) * cv[Ac->col[p]];
      }
      for (gs_off_t p = R->row_ptr[I]; p < R->row_ptr[I + 1]; ++p)
        b += fabsl((long double)R->val[p]) * h[R->col[p]];
      b = C_SAFE * (b + gam((double)(Ac->row_ptr[I + 1] - Ac->row_ptr[I]), (double)UL) * yabs);
      if (fabsl(y) > b) ++bad;
      if (b > 0 && fabsl(y) / b > worst) worst = fabsl(y) / b;
      /* the bound is far below the scale of A_c: the test says something */
      CU_ASSERT(b < 1e-10L * (yabs > 0 ? yabs : 1.0L));
    }
    if (bad) fprintf(stderr, "neumann %dx%d: A_c c off zero beyond the bound (worst %.3Lg)\n",
                     cases[c][0], cases[c][1], worst);
    CU_ASSERT_EQUAL(bad, 0);
    free(sz);
    free(cv);
    free(f);
    free(g);
    free(h);
    free(pc);
    free(d);
    free(t);
    free(strong);
    free(agg);
    gs_csr_destroy(&P);
    gs_csr_destroy(&Ac);
    gs_csr_destroy(&R);
    gs_csr_destroy(&A);
  }
}

/* Two blocks with no entry between them: no aggregate holds nodes of both. */
static void test_disconnected(void)
{
  for (int r = 0; r < 3; ++r) {
    gs_csr_t *A1 = NULL, *A2 = sym_random(20 + rndint(30), 4.0);
    CU_ASSERT_FATAL(gs_gen_laplace(&A1, 6 + rndint(6), 5, 1, r ? 5 : 9) == GS_SUCCESS);
    gs_csr_t *A = r == 2 ? block_diag(A2, A1) : block_diag(A1, A2);
    const gs_idx_t split = r == 2 ? A2->m : A1->m;
    A->symmetry = GS_SYM_SYMMETRIC;
    int32_t *agg = NULL;
    pipeline(A, r * 0.1, 0, "two blocks", &agg);
    int32_t mx = -1;
    for (gs_idx_t i = 0; i < A->m; ++i)
      if (agg[i] > mx) mx = agg[i];
    int8_t *side = xmalloc((size_t)mx + 1);
    memset(side, -1, (size_t)mx + 1);
    int crossing = 0;
    for (gs_idx_t i = 0; i < A->m; ++i) {
      if (agg[i] < 0) continue;
      const int8_t s = (int8_t)(i >= split);
      if (side[agg[i]] < 0) side[agg[i]] = s;
      else crossing += side[agg[i]] != s;
    }
    CU_ASSERT_EQUAL(crossing, 0);
    free(side);
    free(agg);
    gs_csr_destroy(&A);
    gs_csr_destroy(&A1);
    gs_csr_destroy(&A2);
  }
}

/* Directed strength graphs where rules b and c choose: hub 0 points at k pair nodes, each pair
 * node and its leaf point at each other (pairs never reach each other or the hub). One root per
 * pair: the hub then meets several roots (rule b picks the largest key) or, when every pair is
 * rooted at its leaf, several aggregated neighbours (rule c picks the largest hash). Random
 * node labels vary the hashes. */
static void test_directed_choices(void)
{
  const int want = gs_test_quick() ? 10 : 40;
  int hub_b = 0, hub_c = 0, tries = 0;
  while ((hub_b < want || hub_c < want) && tries++ < 100000) {
    const int k = 2 + rndint(4), n = 2 * k + 1;
    int perm[16] = {0};
    for (int i = 0; i < n; ++i) perm[i] = i;
    for (int i = n - 1; i > 0; --i) {
      const int j = rndint(i + 1), x = perm[i];
      perm[i] = perm[j];
      perm[j] = x;
    }
    gs_coo_t *C = coo(n, n);
    for (int i = 0; i < n; ++i) push(C, perm[i], perm[i], 1.0);
    for (int p = 1; p <= k; ++p) {
      push(C, perm[0], perm[p], -1.0);     /* hub -> pair node */
      push(C, perm[p], perm[k + p], -1.0); /* pair node <-> leaf */
      push(C, perm[k + p], perm[p], -1.0);
    }
    gs_csr_t *A = csr(C);
    double d[16];
    uint8_t *s = xmalloc((size_t)A->nnz), in[16];
    int32_t agg[16], naggs = 0;
    int rounds = 0;
    gs_amg_diag_host(A, d);
    gs_amg_strength_host(A, d, 0.5, s);
    graph_t G = graph_of(A, s);
    mis2_literal(&G, in);
    graph_free(&G);
    int root_nb = 0; /* the hub's root neighbours (pair nodes that are roots) */
    for (int p = 1; p <= k; ++p) root_nb += in[perm[p]];
    const int case_b = !in[perm[0]] && root_nb >= 2, case_c = !in[perm[0]] && root_nb == 0;
    if ((case_b && hub_b < want) || (case_c && hub_c < want)) {
      hub_b += case_b;
      hub_c += case_c;
      CU_ASSERT_FATAL(gs_amg_aggregate_host(A, s, agg, &naggs, &rounds) == GS_SUCCESS);
      check_aggregation(A, s, agg, naggs, rounds, "directed hub");
    }
    free(s);
    gs_csr_destroy(&A);
  }
  CU_ASSERT(hub_b >= want && hub_c >= want);
}

static void test_spgemm(void)
{
  const int reps = gs_test_quick() ? 10 : 40;
  for (int r = 0; r < reps; ++r) {
    const gs_idx_t m = rndint(25), k = rndint(25), n = rndint(25);
    const double da = gs_test_uniform(rng()), db = gs_test_uniform(rng()) * 0.5;
    gs_csr_t *A = gs_test_random_csr(rng(), m, k, da), *B = gs_test_random_csr(rng(), k, n, db);
    CU_ASSERT_FATAL(A && B);
    if (r % 3 == 1) A = gs_test_empty_rows(A, 3);
    CU_ASSERT_FATAL(A != NULL);
    gs_csr_t *C = NULL;
    CU_ASSERT_FATAL(gs_amg_spgemm_host(A, B, &C) == GS_SUCCESS);
    char lab[64];
    snprintf(lab, sizeof lab, "spgemm %dx%d * %dx%d", m, k, k, n);
    check_product(A, B, C, lab);
    gs_csr_destroy(&A);
    gs_csr_destroy(&B);
    gs_csr_destroy(&C);
  }
  /* exact cancellation is kept as an entry, explicit zeros too */
  const double a[] = {1, 1, 0, 2}, b[] = {1, 3, -1, 0};
  gs_csr_t *A = gs_test_csr_from_dense(2, 2, a), *B = gs_test_csr_from_dense(2, 2, b), *C = NULL;
  CU_ASSERT_FATAL(gs_amg_spgemm_host(A, B, &C) == GS_SUCCESS);
  /* [1 1; 0 2] [1 3; -1 0] = [0 3; -2 0]: (0,0) cancels, (1,1) has no term */
  CU_ASSERT_EQUAL(C->nnz, 3);
  CU_ASSERT(C->row_ptr[1] == 2 && C->col[0] == 0 && C->val[0] == 0.0 && C->val[1] == 3.0);
  CU_ASSERT(C->col[2] == 0 && C->val[2] == -2.0);
  gs_csr_destroy(&C);
  gs_csr_destroy(&B);
  CU_ASSERT_EQUAL(gs_amg_spgemm_host(A, NULL, &C), GS_ERR_INVALID_ARG);
  B = gs_test_random_csr(rng(), 3, 2, 0.5);
  CU_ASSERT_EQUAL(gs_amg_spgemm_host(A, B, &C), GS_ERR_DIMENSION);
  CU_ASSERT_PTR_NULL(C);
  CU_ASSERT_EQUAL(gs_amg_rap_host(A, B, &C), GS_ERR_DIMENSION);
  CU_ASSERT_PTR_NULL(C);
  gs_csr_destroy(&A);
  gs_csr_destroy(&B);
}

/* RAP with arbitrary P (not from aggregation): dense comparison; symmetric A gives a symmetric
 * A_c within its bound. */
static void test_rap_random(void)
{
  const int reps = gs_test_quick() ? 6 : 20;
  for (int r = 0; r < reps; ++r) {
    const gs_idx_t n = 1 + rndint(35), nc = 1 + rndint(12);
    gs_csr_t *A = sym_random(n, 3.0), *P = gs_test_random_csr(rng(), n, nc, 0.3), *Ac = NULL;
    A->symmetry = GS_SYM_SYMMETRIC;
    CU_ASSERT_FATAL(P != NULL);
    CU_ASSERT_FATAL(gs_amg_rap_host(A, P, &Ac) == GS_SUCCESS);
    check_rap_dense(A, P, Ac, "rap random");
    check_rap_symmetric(A, P, Ac, "rap random");
    gs_csr_destroy(&A);
    gs_csr_destroy(&P);
    gs_csr_destroy(&Ac);
  }
}

static void test_edge_cases(void)
{
  /* 1x1: an isolated node, no aggregate; P is 1 x 0, A_c 0 x 0 */
  const double one[] = {5.0};
  gs_csr_t *A = gs_test_csr_from_dense(1, 1, one), *P = NULL, *Ac = NULL;
  double d[8], t[8];
  uint8_t strong[64];
  int32_t agg[8], naggs = -1;
  int rounds = -1;
  gs_amg_diag_host(A, d);
  CU_ASSERT_EQUAL(d[0], 5.0);
  gs_amg_strength_host(A, d, 0.0, strong);
  CU_ASSERT_EQUAL(strong[0], 0);
  CU_ASSERT_EQUAL(gs_amg_aggregate_host(A, strong, agg, &naggs, &rounds), GS_SUCCESS);
  CU_ASSERT(agg[0] == -1 && naggs == 0 && rounds == 0);
  t[0] = 7.0;
  CU_ASSERT_EQUAL(gs_amg_tentative_host(1, agg, naggs, NULL, t), GS_SUCCESS);
  CU_ASSERT_EQUAL(t[0], 0.0);
  CU_ASSERT_EQUAL(gs_amg_smooth_p_host(A, d, agg, t, naggs, 1.0, &P), GS_SUCCESS);
  CU_ASSERT(P && P->m == 1 && P->n == 0 && P->nnz == 0);
  CU_ASSERT_EQUAL(gs_amg_rap_host(A, P, &Ac), GS_SUCCESS);
  CU_ASSERT(Ac && Ac->m == 0 && Ac->n == 0 && Ac->nnz == 0);
  gs_csr_destroy(&P);
  gs_csr_destroy(&Ac);
  gs_csr_destroy(&A);

  /* 1x1 zero: smooth_p names row 1 */
  const double zero[] = {0.0};
  gs_coo_t *C = coo(1, 1);
  push(C, 0, 0, zero[0]);
  A = csr(C);
  gs_amg_diag_host(A, d);
  CU_ASSERT_EQUAL(gs_amg_smooth_p_host(A, d, agg, t, 0, 1.0, &P), GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NULL(P);
  CU_ASSERT_PTR_NOT_NULL(strstr(gs_last_error(), "row 1 "));
  gs_csr_destroy(&A);

  /* zero diagonal in row 3 (1-based) of a 4x4 path: GS_ERR_INVALID_ARG naming it; the same
   * with the diagonal entry absent */
  for (int absent = 0; absent < 2; ++absent) {
    C = coo(4, 4);
    for (gs_idx_t i = 0; i < 4; ++i) {
      if (i != 2 || !absent) push(C, i, i, i == 2 ? 0.0 : 2.0);
      if (i > 0) push(C, i, i - 1, -1.0);
      if (i < 3) push(C, i, i + 1, -1.0);
    }
    A = csr(C);
    gs_amg_diag_host(A, d);
    CU_ASSERT_EQUAL(d[2], 0.0);
    gs_amg_strength_host(A, d, 0.0, strong);
    CU_ASSERT_EQUAL(gs_amg_aggregate_host(A, strong, agg, &naggs, &rounds), GS_SUCCESS);
    CU_ASSERT_EQUAL(gs_amg_tentative_host(4, agg, naggs, NULL, t), GS_SUCCESS);
    CU_ASSERT_EQUAL(gs_amg_smooth_p_host(A, d, agg, t, naggs, 0.5, &P), GS_ERR_INVALID_ARG);
    CU_ASSERT_PTR_NULL(P);
    CU_ASSERT_PTR_NOT_NULL(strstr(gs_last_error(), "row 3 "));
    gs_csr_destroy(&A);
  }

  /* empty rows: isolated, never in an aggregate; the rest aggregated as usual */
  A = gs_test_empty_rows(sym_random(40, 5.0), 4);
  CU_ASSERT_FATAL(A != NULL);
  A->symmetry = GS_SYM_GENERAL;
  {
    double dd[40];
    uint8_t *s = xmalloc((size_t)A->nnz);
    int32_t ag[40];
    gs_amg_diag_host(A, dd);
    gs_amg_strength_host(A, dd, 0.0, s);
    CU_ASSERT_FATAL(gs_amg_aggregate_host(A, s, ag, &naggs, &rounds) == GS_SUCCESS);
    check_aggregation(A, s, ag, naggs, rounds, "empty rows");
    for (gs_idx_t i = 1; i < 40; i += 4) CU_ASSERT_EQUAL(ag[i], -1);
    free(s);
  }
  pipeline(A, 0.1, 1, "empty rows", NULL); /* smooth_p refuses row 2 (1-based) */
  gs_csr_destroy(&A);

  /* n = 0 */
  CU_ASSERT_FATAL(gs_csr_create(&A, 0, 0, 0) == GS_SUCCESS);
  CU_ASSERT_EQUAL(gs_amg_aggregate_host(A, strong, agg, &naggs, &rounds), GS_SUCCESS);
  CU_ASSERT(naggs == 0 && rounds == 0);
  CU_ASSERT_EQUAL(gs_amg_smooth_p_host(A, d, agg, t, 0, 1.0, &P), GS_SUCCESS);
  CU_ASSERT(P && P->m == 0 && P->n == 0);
  gs_csr_destroy(&P);

  /* bad arguments */
  CU_ASSERT_EQUAL(gs_amg_aggregate_host(NULL, strong, agg, &naggs, &rounds), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_amg_smooth_p_host(A, d, agg, t, 0, 1.0, NULL), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_amg_smooth_p_host(NULL, d, agg, t, 0, 1.0, &P), GS_ERR_INVALID_ARG);
  CU_ASSERT_PTR_NULL(P);
  CU_ASSERT_EQUAL(gs_amg_rap_host(NULL, A, &Ac), GS_ERR_INVALID_ARG);
  agg[0] = 3;
  CU_ASSERT_EQUAL(gs_amg_tentative_host(1, agg, 2, NULL, t), GS_ERR_INVALID_ARG);
  gs_csr_destroy(&A);
  gs_csr_t *R = gs_test_random_csr(rng(), 3, 4, 0.5);
  CU_ASSERT_EQUAL(gs_amg_aggregate_host(R, strong, agg, &naggs, &rounds), GS_ERR_DIMENSION);
  gs_csr_destroy(&R);
}

int main(void)
{
  CU_TestInfo tests[] = {
      {"random symmetric and nonsymmetric: every phase", test_random},
      {"Laplacians (1D, 2D, 3D stencils): every phase", test_laplacians},
      {"real matrices: every phase", test_real_matrices},
      {"pure Neumann Laplacian: A_c maps the constant's coarse image to ~0",
       test_neumann_constant},
      {"two disconnected blocks: aggregates stay inside", test_disconnected},
      {"directed strength graphs: rules b and c choose among several", test_directed_choices},
      {"SpGEMM against dense products; cancellation kept", test_spgemm},
      {"RAP with random P: dense product and symmetry", test_rap_random},
      {"1x1, zero diagonals, empty rows, n = 0, bad arguments", test_edge_cases},
      CU_TEST_INFO_NULL};
  return gs_test_main("amg_host", tests, 0);
}
