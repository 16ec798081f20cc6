/* tests/test_rcm_gpu.c: reverse Cuthill-McKee on the device (spmv/rcm_devbuild.cu) against the
 * host's gs_csr_rcm, entry for entry: random general matrices (the graph of A + A^T through the
 * transpose) and symmetric ones (A's own pattern; a false claim of symmetry is declined, a
 * symmetric pattern stored as general takes no transpose), Laplacians (hundreds of levels),
 * isolated vertices and several components, parents of more children than one thread sorts
 * (the grid's ranks: hubs, power-law and Pareto rows), a vertex of too many neighbours
 * (declined, as too many components are), 1x1
 * and no entries, the real matrices of the matrix folder; allocation failures leak nothing.
 * Each case also goes through the host CSR's entry (gs_rcm_dev_csr: --reorder's), which checks
 * a claim of symmetry on the device.
 * Exits 77 without a device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/order.h"
#include "core/testhooks.h"
#include "spmv/rcm_devbuild.h"
#include "tests/testutil.h"

static gs_context_t *ctx;

/* The device order of H (symmetry as stored) against the host's; *declined when the device
 * declined (then nothing is compared). Returns 1 when they agree. */
static int compare(const gs_csr_t *H, const char *label, int *declined)
{
  gs_matrix_t *A = NULL;
  const size_t base = gs_device_bytes_in_use(ctx);
  const gs_idx_t n = H->m;
  gs_idx_t *hp = malloc((size_t)(n > 0 ? n : 1) * sizeof *hp);
  gs_idx_t *dp = malloc((size_t)(n > 0 ? n : 1) * sizeof *dp);
  int *d_perm = NULL, ordered = -1, ok = 1;
  CU_ASSERT_FATAL(hp && dp);
  CU_ASSERT_FATAL(gs_csr_rcm(H, hp) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_matrix_create(&A, ctx, H) == GS_SUCCESS);
  const size_t before = gs_device_bytes_in_use(ctx);
  CU_ASSERT_FATAL(gs_dmalloc(ctx, (void **)&d_perm, (size_t)(n > 0 ? n : 1) * sizeof(int),
                             "perm") == GS_SUCCESS);
  const gs_status_t st = gs_rcm_dev(ctx, A, d_perm, &ordered, NULL);
  CU_ASSERT_EQUAL(st, GS_SUCCESS);
  if (st != GS_SUCCESS) fprintf(stderr, "%s: %s\n", label, gs_last_error());
  CU_ASSERT(ordered == 0 || ordered == 1);
  *declined = ordered == 0;
  if (st == GS_SUCCESS && ordered == 1 && n > 0) {
    CU_ASSERT_FATAL(gs_copy_to_host(ctx, dp, d_perm, (size_t)n * sizeof *dp) == GS_SUCCESS);
    for (gs_idx_t k = 0; k < n; ++k)
      if (dp[k] != hp[k]) {
        fprintf(stderr, "%s: device order differs at %d of %d: %d, host %d\n", label, k, n, dp[k],
                hp[k]);
        ok = 0;
        break;
      }
    CU_ASSERT(ok);
  }
  gs_dfree(ctx, d_perm);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), before); /* the scratch all freed */
  /* the host CSR's entry (--reorder's): the same decision and order, nothing left */
  int ordered_csr = -1;
  for (gs_idx_t k = 0; k < n; ++k) dp[k] = -1;
  CU_ASSERT_EQUAL(gs_rcm_dev_csr(ctx, H, dp, &ordered_csr), GS_SUCCESS);
  CU_ASSERT_EQUAL(ordered_csr, ordered);
  if (ordered_csr == 1 && n > 0 && memcmp(dp, hp, (size_t)n * sizeof *dp) != 0) {
    fprintf(stderr, "%s: the host CSR's device order differs\n", label);
    CU_FAIL("gs_rcm_dev_csr's order");
    ok = 0;
  }
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), before);
  gs_matrix_destroy(&A);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
  free(hp);
  free(dp);
  return ok;
}

static void expect_order(const gs_csr_t *H, const char *label)
{
  int declined = -1;
  compare(H, label, &declined);
  CU_ASSERT_EQUAL(declined, 0);
  if (declined) fprintf(stderr, "%s: declined\n", label);
}

/* The CSR of the COO C, its symmetry set to sym. */
static gs_csr_t *to_csr(gs_coo_t *C, gs_symmetry_t sym)
{
  gs_csr_t *H = NULL;
  CU_ASSERT_FATAL(gs_coo_to_csr(&H, C) == GS_SUCCESS);
  H->symmetry = sym;
  return H;
}

/* Random pattern (symmetric or not) of n vertices, about d neighbours each, with isolated
 * vertices (every `iso`-th, 0: none) and `comps` blocks of vertices with no edge between
 * blocks, each block connected (a chain through its vertices besides the random edges): so
 * the graph has exactly `comps` components besides the isolated vertices. */
static gs_csr_t *random_graph(uint64_t *s, gs_idx_t n, double d, int iso, int comps, int sym)
{
  gs_coo_t *C = NULL;
  CU_ASSERT_FATAL(gs_coo_create(&C, n, n, 1024) == GS_SUCCESS);
  const gs_idx_t bs = (n + comps - 1) / comps;
  for (gs_idx_t i = 0; i < n; ++i) {
    if (iso && i % iso == 0) continue;
    const gs_idx_t b0 = i / bs * bs, b1 = b0 + bs < n ? b0 + bs : n;
    const int k = (int)(gs_test_uniform(s) * 2 * d);
    for (int t = 0; t < k; ++t) {
      const gs_idx_t j = b0 + (gs_idx_t)(gs_test_uniform(s) * (b1 - b0));
      if (iso && j % iso == 0) continue;
      gs_coo_push(C, i, j, 1.0);
      if (sym) gs_coo_push(C, j, i, 1.0);
    }
    if (gs_test_uniform(s) < 0.5) gs_coo_push(C, i, i, 4.0);
    gs_idx_t j = i + 1; /* the chain, to the block's next vertex that is not isolated */
    while (j < b1 && iso && j % iso == 0) ++j;
    if (j < b1) {
      gs_coo_push(C, i, j, 1.0);
      if (sym) gs_coo_push(C, j, i, 1.0);
    }
  }
  gs_csr_t *H = to_csr(C, sym ? GS_SYM_SYMMETRIC : GS_SYM_GENERAL);
  gs_coo_destroy(&C);
  return H;
}

static void test_random(void)
{
  uint64_t s = gs_test_seed() ^ 0x7c3;
  const int sizes[] = {1, 2, 7, 100, 1000, 20000, 150000};
  for (int k = 0; k < 7; ++k)
    for (int sym = 0; sym < 2; ++sym) {
      char lab[96];
      const double d = 1.0 + 6.0 * gs_test_uniform(&s);
      gs_csr_t *H = random_graph(&s, sizes[k], d, 0, 1, sym);
      snprintf(lab, sizeof lab, "random %s n %d, %.1f a row", sym ? "symmetric" : "general",
               sizes[k], d);
      expect_order(H, lab);
      gs_csr_destroy(&H);
    }
}

/* A general pattern stored with a claim of symmetry: the host walks A's directed pattern, the
 * device declines; a symmetric pattern stored as general is A's graph (no transpose built). */
static void test_false_symmetry(void)
{
  uint64_t s = gs_test_seed() ^ 0x7c4;
  gs_csr_t *H = random_graph(&s, 5000, 3.0, 0, 1, 0);
  int declined = -1;
  H->symmetry = GS_SYM_SYMMETRIC;
  compare(H, "general pattern claimed symmetric", &declined);
  CU_ASSERT_EQUAL(declined, 1);
  gs_csr_destroy(&H);
  H = random_graph(&s, 5000, 3.0, 0, 1, 1);
  H->symmetry = GS_SYM_GENERAL;
  expect_order(H, "symmetric pattern stored as general");
  gs_csr_destroy(&H);
}

static void test_laplacians(void)
{
  const int st[][4] = {{40, 40, 40, 27}, {300, 200, 1, 5}, {20000, 1, 1, 3}, {64, 64, 64, 7}};
  for (int k = 0; k < 4; ++k) {
    gs_csr_t *H = NULL;
    char lab[64];
    CU_ASSERT_FATAL(gs_gen_laplace(&H, st[k][0], st[k][1], st[k][2], st[k][3]) == GS_SUCCESS);
    snprintf(lab, sizeof lab, "Laplacian %dx%dx%d, %d points", st[k][0], st[k][1], st[k][2],
             st[k][3]);
    expect_order(H, lab);
    gs_csr_destroy(&H);
  }
}

/* Isolated vertices (numbered first by the host) and up to 64 components; 65 are declined. */
static void test_components(void)
{
  uint64_t s = gs_test_seed() ^ 0x7c5;
  const int comps[] = {1, 2, 17, GS_RCM_DEV_COMPONENTS};
  for (int k = 0; k < 4; ++k)
    for (int sym = 0; sym < 2; ++sym) {
      char lab[96];
      gs_csr_t *H = random_graph(&s, 30000, 4.0, 7, comps[k], sym);
      snprintf(lab, sizeof lab, "%d components and isolated vertices (%s)", comps[k],
               sym ? "symmetric" : "general");
      expect_order(H, lab);
      gs_csr_destroy(&H);
    }
  int declined = -1;
  gs_csr_t *H = random_graph(&s, 30000, 4.0, 0, 2 * GS_RCM_DEV_COMPONENTS + 1, 1);
  compare(H, "129 components", &declined);
  CU_ASSERT_EQUAL(declined, 1);
  gs_csr_destroy(&H);
  const double zero[4] = {0, 0, 0, 0}, one[1] = {2.5};
  H = gs_test_csr_from_dense(2, 2, zero); /* two isolated vertices: nothing for the kernel */
  expect_order(H, "2x2 of zeros");
  gs_csr_destroy(&H);
  H = gs_test_csr_from_dense(1, 1, one);
  expect_order(H, "1x1");
  gs_csr_destroy(&H);
}

/* A hub joined to `leaves` vertices (some also joined to the next, so degrees differ): the
 * hub's children are sorted by one thread (<= 16) or ranked by the grid, its neighbours walked
 * by a thread (<= 64) or its block; a hub of more than GS_RCM_DEV_DEGREE neighbours is
 * declined. */
static void test_hubs(void)
{
  uint64_t s = gs_test_seed() ^ 0x7c6;
  const int leaves[] = {5, 17, 18, 65, 300, 20000, GS_RCM_DEV_DEGREE + 1};
  for (int k = 0; k < 7; ++k)
    for (int sym = 0; sym < 2; ++sym) {
      const gs_idx_t n = leaves[k] + 1;
      gs_coo_t *C = NULL;
      CU_ASSERT_FATAL(gs_coo_create(&C, n, n, 1024) == GS_SUCCESS);
      for (gs_idx_t i = 1; i < n; ++i) {
        gs_coo_push(C, 0, i, 1.0);
        if (sym) gs_coo_push(C, i, 0, 1.0);
        if (gs_test_uniform(&s) < 0.3 && i + 1 < n) { /* some leaves of degree 2 */
          gs_coo_push(C, i, i + 1, 1.0);
          if (sym) gs_coo_push(C, i + 1, i, 1.0);
        }
      }
      gs_csr_t *H = to_csr(C, sym ? GS_SYM_SYMMETRIC : GS_SYM_GENERAL);
      gs_coo_destroy(&C);
      char lab[96];
      snprintf(lab, sizeof lab, "hub of %d leaves (%s)", leaves[k], sym ? "symmetric" : "general");
      int declined = -1;
      compare(H, lab, &declined);
      /* a leaf of degree 1 is the root, the hub its one child, and the other leaves - 1 are
         the hub's children: 16 and 17 straddle a thread's limit, 64 and 65 neighbours a
         block's walk; the last hub's degree is declined */
      CU_ASSERT_EQUAL(declined, leaves[k] > GS_RCM_DEV_DEGREE);
      gs_csr_destroy(&H);
    }
}

/* Many parents of many children in one level: power-law and Pareto rows. */
static void test_irregular(void)
{
  uint64_t s = gs_test_seed() ^ 0x7c8;
  for (int k = 0; k < 2; ++k) {
    gs_csr_t *H = NULL;
    const uint64_t seed = gs_test_next(&s);
    /* hubs of thousands of neighbours (rows of up to N entries for Pareto) */
    if (k == 0) CU_ASSERT_FATAL(gs_gen_powerlaw(&H, 100000, 6.0, 2.5, seed) == GS_SUCCESS);
    if (k == 1) CU_ASSERT_FATAL(gs_gen_pareto(&H, 20000, 1.0, seed) == GS_SUCCESS);
    expect_order(H, k == 0 ? "power-law rows" : "Pareto rows");
    gs_csr_destroy(&H);
  }
}

static void test_real(void)
{
  static const char *names[] = {"2dcyl1", "494_bus", "Dubcova1", "Si2", "add32", "as-caida20071105",
                                "bayer10", "bcsstk13", "bcsstk16", "cage10", "crystm01",
                                "delaunay_n15", "email-Enron", "fidapex6", "fs_183_1", "illc1033",
                                "memplus", "msc04515", "nos7", "orsreg_1", "sherman5", "well1850",
                                "west0479", "wiki-Vote", "zenios", "lp_e226"};
  int seen = 0;
  for (size_t k = 0; k < sizeof names / sizeof *names; ++k) {
    if (!gs_test_have_matrix(names[k])) continue;
    gs_csr_t *H = NULL;
    CU_ASSERT_FATAL(gs_mm_read_csr(gs_test_matrix(names[k]), &H) == GS_SUCCESS);
    if (H->m == H->n) {
      int declined = -1;
      compare(H, names[k], &declined); /* many components may decline: then nothing compared */
      seen += !declined;
    }
    gs_csr_destroy(&H);
  }
  printf("  real matrices ordered on the device: %d\n", seen);
}

/* Allocation k of one ordering fails, k = 1, 2, ...: GS_ERR_DEVICE_MEMORY and nothing left
 * allocated, until the first k that succeeds (and orders). entry 0: the matrix's
 * (gs_rcm_dev), 1: the host CSR's (gs_rcm_dev_csr). */
static void fail_each_allocation(gs_matrix_t *A, const gs_csr_t *H, int entry, int *d_perm,
                                 gs_idx_t *perm)
{
  for (long k = 1; k < 40; ++k) {
    const size_t base = gs_device_bytes_in_use(ctx);
    int ordered = -1;
    gs_test_dmalloc_fail_after(ctx, k);
    const gs_status_t st = entry == 0 ? gs_rcm_dev(ctx, A, d_perm, &ordered, NULL)
                                      : gs_rcm_dev_csr(ctx, H, perm, &ordered);
    gs_test_dmalloc_fail_after(ctx, 0);
    CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
    if (st == GS_SUCCESS) {
      CU_ASSERT(k > 1); /* every ordering allocates */
      CU_ASSERT_EQUAL(ordered, 1);
      return;
    }
    CU_ASSERT_EQUAL(st, GS_ERR_DEVICE_MEMORY);
    CU_ASSERT_EQUAL(ordered, 0);
  }
  CU_FAIL("the ordering failed at every one of 39 allocations");
}

static void test_allocation_failures(void)
{
  uint64_t s = gs_test_seed() ^ 0x7c7;
  for (int sym = 0; sym < 2; ++sym) {
    gs_csr_t *H = random_graph(&s, 3000, 3.0, 5, 2, sym);
    gs_matrix_t *A = NULL;
    int *d_perm = NULL;
    gs_idx_t *perm = malloc((size_t)H->m * sizeof *perm);
    CU_ASSERT_FATAL(perm != NULL);
    CU_ASSERT_FATAL(gs_matrix_create(&A, ctx, H) == GS_SUCCESS);
    CU_ASSERT_FATAL(gs_dmalloc(ctx, (void **)&d_perm, (size_t)H->m * sizeof(int), "perm") ==
                    GS_SUCCESS);
    fail_each_allocation(A, H, 0, d_perm, perm);
    fail_each_allocation(A, H, 1, d_perm, perm);
    gs_dfree(ctx, d_perm);
    gs_matrix_destroy(&A);
    free(perm);
    gs_csr_destroy(&H);
  }
}

int main(void)
{
  if (gs_device_count() > 0 && gs_context_create(&ctx, 0) != GS_SUCCESS) {
    fprintf(stderr, "context: %s\n", gs_last_error());
    return 1;
  }
  CU_TestInfo tests[] = {
      {"random general and symmetric graphs, 1 to 150000 vertices", test_random},
      {"a false claim of symmetry", test_false_symmetry},
      {"Laplacians (27, 5, 3 and 7 points)", test_laplacians},
      {"isolated vertices, components, declined past 64", test_components},
      {"hubs: a thread's, the grid's and too many children", test_hubs},
      {"power-law and Pareto rows", test_irregular},
      {"the real matrices", test_real},
      {"allocation failures", test_allocation_failures},
      CU_TEST_INFO_NULL};
  int rc = gs_test_main("rcm_gpu", tests, 1);
  gs_context_destroy(&ctx);
  return rc;
}
