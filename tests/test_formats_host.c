/* tests/test_formats_host.c: the Bell & Garland layouts (coo, ell, dia, hyb) built and applied
 * on the host (op N and T), against the CSR product within its rounding bound (gs_test_spmv_ok): every
 * registered backend through the registry's host apply (a backend added to the registry is
 * checked here without editing this file) and the four layouts through their builders directly;
 * fill refusals, HYB's K rule, and layout details. No GPU needed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spmv/csr_adaptive.h"
#include "spmv/formats.h"
#include "spmv/merge.h"
#include "tests/testutil.h"

static const double g_ab[][2] = {{1.0, 0.0}, {-1.0, 1.0}, {2.5, -0.5}}; /* (alpha, beta) */
#define N_AB (sizeof g_ab / sizeof g_ab[0])
/* The layouts this suite builds directly; the registry part covers every backend. */
static const char *const g_layouts[] = {"coo", "ell", "dia", "hyb"};
#define N_LAYOUTS (sizeof g_layouts / sizeof g_layouts[0])
static uint64_t g_state;

static int is(const char *a, const char *b) { return strcmp(a, b) == 0; }

/* The fill guards' defaults as the registry declares them. */
static double ell_max_fill(void) { return gs_test_backend_option_default("ell", "max_fill", 3.0); }
static double dia_max_fill(void) { return gs_test_backend_option_default("dia", "max_fill", 3.0); }

/* ---- matrices ---------------------------------------------------------------------------- */


/* Builds a CSR from (row, col, val) triples; explicit zeros are kept. */
static gs_csr_t *from_triples(int m, int n, int64_t k, const int *r, const int *c, const double *v)
{
  gs_coo_t *C = NULL;
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_coo_create(&C, m, n, k > 0 ? k : 1) == GS_SUCCESS);
  for (int64_t e = 0; e < k; ++e) CU_ASSERT_FATAL(gs_coo_push(C, r[e], c[e], v[e]) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
  gs_coo_destroy(&C);
  return A;
}

/* 5-point Laplacian on an nx x ny grid, Dirichlet boundaries (4 on the diagonal, -1 off). */
static gs_csr_t *laplace5(int nx, int ny)
{
  gs_coo_t *C = NULL;
  gs_csr_t *A = NULL;
  int n = nx * ny;
  CU_ASSERT_FATAL(gs_coo_create(&C, n, n, 5 * (int64_t)n) == GS_SUCCESS);
  for (int y = 0; y < ny; ++y)
    for (int x = 0; x < nx; ++x) {
      int i = y * nx + x;
      if (y > 0) gs_coo_push(C, i, i - nx, -1.0);
      if (x > 0) gs_coo_push(C, i, i - 1, -1.0);
      gs_coo_push(C, i, i, 4.0);
      if (x < nx - 1) gs_coo_push(C, i, i + 1, -1.0);
      if (y < ny - 1) gs_coo_push(C, i, i + nx, -1.0);
    }
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
  gs_coo_destroy(&C);
  return A;
}

/* m x n, row `big` holds every column (n entries), the others 0..2 random entries. */
static gs_csr_t *one_huge_row(int m, int n, int big)
{
  gs_coo_t *C = NULL;
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_coo_create(&C, m, n, (int64_t)n + 3 * m) == GS_SUCCESS);
  for (int i = 0; i < m; ++i) {
    if (i == big) {
      for (int j = 0; j < n; ++j) gs_coo_push(C, i, j, 2.0 * gs_test_uniform(&g_state) - 1.0);
      continue;
    }
    int len = (int)(gs_test_next(&g_state) % 3);
    for (int k = 0; k < len; ++k)
      gs_coo_push(C, i, (int)(gs_test_next(&g_state) % (uint64_t)n), gs_test_uniform(&g_state));
  }
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
  gs_coo_destroy(&C);
  return A;
}

static gs_idx_t max_row(const gs_csr_t *A)
{
  gs_idx_t K = 0;
  for (gs_idx_t i = 0; i < A->m; ++i)
    if (A->row_ptr[i + 1] - A->row_ptr[i] > K) K = (gs_idx_t)(A->row_ptr[i + 1] - A->row_ptr[i]);
  return K;
}

/* Occupied diagonals, counted independently of the builder. */
static gs_idx_t count_diagonals(const gs_csr_t *A)
{
  if (A->nnz == 0) return 0;
  size_t span = (size_t)A->m + (size_t)A->n;
  unsigned char *seen = calloc(span, 1);
  CU_ASSERT_FATAL(seen != NULL);
  gs_idx_t d = 0;
  for (gs_idx_t i = 0; i < A->m; ++i)
    for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) {
      size_t s = (size_t)(A->col[p] - i + A->m);
      if (!seen[s]) {
        seen[s] = 1;
        ++d;
      }
    }
  free(seen);
  return d;
}

static int ell_refuses(const gs_csr_t *A, double max_fill)
{
  return (double)A->m * max_row(A) > max_fill * (double)A->nnz;
}

static int dia_refuses(const gs_csr_t *A, double max_fill)
{
  return (double)A->m * count_diagonals(A) > max_fill * (double)A->nnz;
}

/* ---- checking ---------------------------------------------------------------------------- */

static double *random_vec(gs_idx_t len)
{
  double *v = malloc(((size_t)len + 1) * sizeof *v);
  CU_ASSERT_FATAL(v != NULL);
  for (gs_idx_t i = 0; i < len; ++i) v[i] = 2.0 * gs_test_uniform(&g_state) - 1.0;
  return v;
}

/* y0 for a product: NaN when beta == 0 (it must never be read), random otherwise. */
static void fill_y(double *y, const double *y0, gs_idx_t len, double beta)
{
  for (gs_idx_t i = 0; i < len; ++i) y[i] = beta == 0.0 ? NAN : y0[i];
}

typedef gs_status_t (*apply_fn)(const void *layout, int variant, gs_op_t op, double alpha,
                                const double *x, double beta, double *y);

/* Runs `fn` (or the registry's host apply of `name` with `options` when fn is NULL) for every
 * (alpha, beta) and the given op, each result checked against the product's rounding bound;
 * returns the status of the first call. */
static gs_status_t compare(const gs_csr_t *A, const char *name, const char *options, apply_fn fn,
                           const void *layout, int variant, gs_op_t op)
{
  gs_idx_t in = op == GS_OP_N ? A->n : A->m, out = op == GS_OP_N ? A->m : A->n;
  double *x = random_vec(in), *y0 = random_vec(out), *y = random_vec(out);
  gs_status_t first = GS_SUCCESS;
  for (size_t k = 0; k < N_AB; ++k) {
    double alpha = g_ab[k][0], beta = g_ab[k][1];
    fill_y(y, y0, out, beta);
    gs_status_t st = fn ? fn(layout, variant, op, alpha, x, beta, y)
                        : gs_spmv_host_apply(name, A, options, op, alpha, x, beta, y);
    if (k == 0) first = st;
    CU_ASSERT_EQUAL(st, first);
    if (st != GS_SUCCESS) continue;
    CU_ASSERT(gs_test_spmv_ok(A, op, alpha, x, beta, y0, y, "%s variant %d%s%s", name, variant,
                              options ? " options " : "", options ? options : ""));
  }
  free(x);
  free(y0);
  free(y);
  return first;
}

/* What the registry's host apply of backend `name` must answer for op N on A: GS_SUCCESS, or
 * GS_ERR_FORMAT_FILL; -1 when either is allowed (a padded format whose guard this suite does
 * not model; a refusal is never a wrong answer). */
static int expected_status(const char *name, unsigned flags, const gs_csr_t *A)
{
  if (is(name, "ell")) return ell_refuses(A, ell_max_fill()) ? GS_ERR_FORMAT_FILL : GS_SUCCESS;
  if (is(name, "dia")) return dia_refuses(A, dia_max_fill()) ? GS_ERR_FORMAT_FILL : GS_SUCCESS;
  if (is(name, "coo") || is(name, "hyb")) return GS_SUCCESS; /* never refuse */
  if (!(flags & GS_SPMV_FLAG_HOST_LAYOUT)) return GS_SUCCESS; /* plain CSR stands in */
  return -1;
}

static gs_status_t coo_fn(const void *L, int warps, gs_op_t op, double alpha, const double *x,
                          double beta, double *y)
{
  return gs_coo_layout_apply_host(L, warps, op, alpha, x, beta, y);
}

static gs_status_t ell_fn(const void *L, int v, gs_op_t op, double alpha, const double *x,
                          double beta, double *y)
{
  (void)v;
  if (op == GS_OP_N) {
    gs_ell_layout_apply_host(L, alpha, x, beta, y);
  } else { /* the kernel's order: y = beta*y (write-only for beta = 0), then the scatter */
    const gs_ell_layout_t *E = L;
    for (gs_idx_t j = 0; j < E->n; ++j) y[j] = beta == 0.0 ? 0.0 : beta * y[j];
    gs_ell_layout_accumulate_t_host(E, alpha, x, y);
  }
  return GS_SUCCESS;
}

static gs_status_t dia_fn(const void *L, int v, gs_op_t op, double alpha, const double *x,
                          double beta, double *y)
{
  (void)v;
  if (op == GS_OP_N) gs_dia_layout_apply_host(L, alpha, x, beta, y);
  else gs_dia_layout_apply_t_host(L, alpha, x, beta, y);
  return GS_SUCCESS;
}

static gs_status_t hyb_fn(const void *L, int warps, gs_op_t op, double alpha, const double *x,
                          double beta, double *y)
{
  return gs_hyb_layout_apply_host(L, warps, op, alpha, x, beta, y);
}

/* Every format through the registry (status as the backend would answer) and through the
 * builders directly with several warp counts and HYB widths. */
static void check_matrix(const gs_csr_t *A)
{
  const double ell_fill = ell_max_fill(), dia_fill = dia_max_fill();
  const int warps[] = {1, 2, 3, 7, 64, GS_COO_HOST_WARPS};
  const int nw = gs_test_quick() ? 3 : (int)(sizeof warps / sizeof warps[0]);

  /* every registered backend, default options: op N, and op T where the backend declares it */
  for (int b = 0; b < gs_spmv_backend_count(); ++b) {
    const char *name = gs_spmv_backend_name(b);
    unsigned flags = gs_spmv_backend_flags(b);
    int expect = expected_status(name, flags, A);
    gs_status_t st = compare(A, name, NULL, NULL, NULL, 0, GS_OP_N);
    if (expect >= 0 ? st != expect : st != GS_SUCCESS && st != GS_ERR_FORMAT_FILL) {
      fprintf(stderr, "\n  %s (%d x %d, nnz %d): op N answered %s\n", name, (int)A->m,
              (int)A->n, (int)A->nnz, gs_status_string(st));
      CU_FAIL("unexpected status of the registry's host apply");
    }
    gs_status_t st_t = compare(A, name, NULL, NULL, NULL, 0, GS_OP_T);
    CU_ASSERT_EQUAL(st_t, (flags & GS_SPMV_FLAG_TRANSPOSE) ? st : GS_ERR_UNSUPPORTED);
  }
  /* options reach the host layouts: forced HYB widths through the option string */
  for (int k = 0; k <= 2; k += 2) {
    char opt[32];
    snprintf(opt, sizeof opt, "hyb.k=%d", k);
    CU_ASSERT_EQUAL(compare(A, "hyb", opt, NULL, NULL, 0, GS_OP_N), GS_SUCCESS);
  }

  /* COO directly, on several partitions */
  gs_coo_layout_t *C = NULL;
  CU_ASSERT_FATAL(gs_coo_layout_build(&C, A) == GS_SUCCESS);
  for (int w = 0; w < nw; ++w) {
    CU_ASSERT_EQUAL(compare(A, "coo-direct", NULL, coo_fn, C, warps[w], GS_OP_N), GS_SUCCESS);
    CU_ASSERT_EQUAL(compare(A, "coo-direct", NULL, coo_fn, C, warps[w], GS_OP_T), GS_SUCCESS);
  }
  gs_coo_layout_destroy(&C);
  CU_ASSERT_PTR_NULL(C);

  /* ELL directly (the unguarded K-builder too, when the array stays small) */
  gs_ell_layout_t *E = NULL;
  gs_status_t st = gs_ell_layout_build(&E, A, ell_fill);
  CU_ASSERT_EQUAL(st, ell_refuses(A, ell_fill) ? GS_ERR_FORMAT_FILL : GS_SUCCESS);
  if (st == GS_SUCCESS) {
    CU_ASSERT_EQUAL(E->entries, A->nnz);
    CU_ASSERT_EQUAL(compare(A, "ell-direct", NULL, ell_fn, E, 0, GS_OP_N), GS_SUCCESS);
    CU_ASSERT_EQUAL(compare(A, "ell-direct", NULL, ell_fn, E, 0, GS_OP_T), GS_SUCCESS);
  } else {
    CU_ASSERT_PTR_NULL(E);
  }
  gs_ell_layout_destroy(&E);
  if ((double)gs_fmt_pitch(A->m) * max_row(A) <= 2e6) {
    CU_ASSERT_FATAL(gs_ell_layout_build_k(&E, A, max_row(A)) == GS_SUCCESS);
    CU_ASSERT_EQUAL(compare(A, "ell-k", NULL, ell_fn, E, 0, GS_OP_N), GS_SUCCESS);
    CU_ASSERT_EQUAL(compare(A, "ell-k", NULL, ell_fn, E, 0, GS_OP_T), GS_SUCCESS);
    gs_ell_layout_destroy(&E);
  }

  /* DIA directly */
  gs_dia_layout_t *D = NULL;
  st = gs_dia_layout_build(&D, A, dia_fill);
  CU_ASSERT_EQUAL(st, dia_refuses(A, dia_fill) ? GS_ERR_FORMAT_FILL : GS_SUCCESS);
  if (st == GS_SUCCESS) {
    CU_ASSERT_EQUAL(D->ndiag, count_diagonals(A));
    for (gs_idx_t d = 1; d < D->ndiag; ++d) CU_ASSERT(D->offsets[d - 1] < D->offsets[d]);
    CU_ASSERT_EQUAL(compare(A, "dia-direct", NULL, dia_fn, D, 0, GS_OP_N), GS_SUCCESS);
    CU_ASSERT_EQUAL(compare(A, "dia-direct", NULL, dia_fn, D, 0, GS_OP_T), GS_SUCCESS);
  }
  gs_dia_layout_destroy(&D);

  /* HYB directly: the rule's K and forced widths, several partitions of the COO part */
  const int ks[] = {-1, 0, 1, 2, 5, 1000000};
  for (size_t k = 0; k < sizeof ks / sizeof ks[0]; ++k) {
    gs_hyb_layout_t *H = NULL;
    gs_idx_t K = ks[k] < 0 ? 0 : (ks[k] < max_row(A) ? ks[k] : max_row(A));
    if ((double)gs_fmt_pitch(A->m) * K > 2e6) continue; /* keep the host arrays small */
    CU_ASSERT_FATAL(gs_hyb_layout_build(&H, A, ks[k]) == GS_SUCCESS);
    CU_ASSERT_EQUAL(H->ell->entries + H->coo->nnz, A->nnz);
    if (ks[k] >= 0) CU_ASSERT_EQUAL(H->ell->K, K);
    for (int w = 0; w < nw; w += 2) {
      CU_ASSERT_EQUAL(compare(A, "hyb-direct", NULL, hyb_fn, H, warps[w], GS_OP_N), GS_SUCCESS);
      CU_ASSERT_EQUAL(compare(A, "hyb-direct", NULL, hyb_fn, H, warps[w], GS_OP_T), GS_SUCCESS);
    }
    gs_hyb_layout_destroy(&H);
  }
}

/* ---- tests ------------------------------------------------------------------------------- */

/* The resolved options of backend `name` with every default, as spmv.c hands them to a slot. */
static gs_spmv_cfg_t default_cfg(const char *name)
{
  gs_spmv_cfg_t cfg;
  memset(&cfg, 0, sizeof cfg);
  int i = gs_spmv_backend_find(name);
  gs_spmv_option_info_t info;
  for (int k = 0; i >= 0 && k < GS_SPMV_MAX_OPTIONS && gs_spmv_backend_option(i, k, &info); ++k)
    cfg.v[k] = info.def;
  return cfg;
}

static void test_registry(void)
{
  /* every backend: found by its name, described, and its options well formed */
  int n = gs_spmv_backend_count();
  CU_ASSERT(n >= (int)N_LAYOUTS);
  for (int i = 0; i < n; ++i) {
    const char *name = gs_spmv_backend_name(i);
    CU_ASSERT_FATAL(name != NULL);
    CU_ASSERT_EQUAL(gs_spmv_backend_find(name), i); /* names are unique */
    CU_ASSERT(strlen(gs_spmv_backend_summary(i)) > 10);
    gs_spmv_option_info_t info;
    for (int k = 0; gs_spmv_backend_option(i, k, &info); ++k) {
      CU_ASSERT(k < GS_SPMV_MAX_OPTIONS);
      CU_ASSERT(info.key != NULL && info.help != NULL);
      CU_ASSERT(info.min <= info.def && info.def <= info.max);
    }
  }
  CU_ASSERT_EQUAL(gs_spmv_backend_find("no-such-format"), -1);
  /* the Bell & Garland layouts of this suite have their own host layout, and their host_apply
   * slots answer op = T themselves too, as the registry flag says (the device backends would) */
  typedef gs_status_t (*slot_fn)(const gs_csr_t *, const gs_spmv_cfg_t *, gs_op_t, double,
                                 const double *, double, double *);
  const slot_fn slots[N_LAYOUTS] = {gs_coo_host_apply, gs_ell_host_apply, gs_dia_host_apply,
                                    gs_hyb_host_apply}; /* in g_layouts' order */
  const double one[] = {1.0};
  gs_csr_t *A = gs_test_csr_from_dense(1, 1, one);
  for (size_t f = 0; f < N_LAYOUTS; ++f) {
    int i = gs_spmv_backend_find(g_layouts[f]);
    CU_ASSERT_FATAL(i >= 0);
    unsigned fl = gs_spmv_backend_flags(i);
    CU_ASSERT(fl & GS_SPMV_FLAG_HOST_LAYOUT);
    gs_spmv_cfg_t cfg = default_cfg(g_layouts[f]);
    double x[1] = {1.0}, y[1] = {NAN}, alpha = 2.0 + (double)f;
    gs_status_t st = slots[f](A, &cfg, GS_OP_T, alpha, x, 0.0, y);
    CU_ASSERT_EQUAL(st, (fl & GS_SPMV_FLAG_TRANSPOSE) ? GS_SUCCESS : GS_ERR_UNSUPPORTED);
    if (st == GS_SUCCESS) CU_ASSERT_DOUBLE_EQUAL(y[0], alpha, 0.0);
    y[0] = NAN;
    CU_ASSERT_EQUAL(slots[f](A, &cfg, GS_OP_N, alpha, x, 0.0, y), GS_SUCCESS);
    CU_ASSERT_DOUBLE_EQUAL(y[0], alpha, 0.0);
  }
  CU_ASSERT(gs_spmv_backend_flags(gs_spmv_backend_find("coo")) & GS_SPMV_FLAG_TRANSPOSE);
  CU_ASSERT(gs_spmv_backend_flags(gs_spmv_backend_find("hyb")) & GS_SPMV_FLAG_TRANSPOSE);
  gs_csr_destroy(&A);
}

static void test_random_shapes(void)
{
  const int shapes[][2] = {{50, 50}, {80, 30}, {30, 90}, {7, 3}, {3, 7}, {1, 40}, {40, 1},
                           {200, 200}, {1500, 1200}};
  const double dens[] = {0.1, 0.2, 0.15, 0.5, 0.5, 0.3, 0.3, 0.02, 0.004};
  int count = gs_test_quick() ? 7 : (int)(sizeof shapes / sizeof shapes[0]);
  for (int s = 0; s < count; ++s) {
    gs_csr_t *A = gs_test_random_csr(&g_state, shapes[s][0], shapes[s][1], dens[s]);
    CU_ASSERT_FATAL(A != NULL);
    check_matrix(A);
    gs_csr_destroy(&A);
  }
  /* banded random matrices, where DIA and ELL both accept */
  for (int s = 0; s < 3; ++s) {
    int m = 60 + 37 * s, n = m + (s - 1) * 11, k = 0;
    int *r = malloc((size_t)m * 5 * sizeof *r), *c = malloc((size_t)m * 5 * sizeof *c);
    double *v = malloc((size_t)m * 5 * sizeof *v);
    CU_ASSERT_FATAL(r && c && v);
    for (int i = 0; i < m; ++i)
      for (int o = -2; o <= 2; ++o)
        if (i + o >= 0 && i + o < n && gs_test_uniform(&g_state) < 0.8) {
          r[k] = i;
          c[k] = i + o;
          v[k++] = 2.0 * gs_test_uniform(&g_state) - 1.0;
        }
    gs_csr_t *A = from_triples(m, n, k, r, c, v);
    CU_ASSERT(!ell_refuses(A, 3.0));
    CU_ASSERT(!dia_refuses(A, 3.0));
    check_matrix(A);
    gs_csr_destroy(&A);
    free(r);
    free(c);
    free(v);
  }
}

static void test_tiny_and_empty(void)
{
  const double one[] = {3.5};
  gs_csr_t *A = gs_test_csr_from_dense(1, 1, one);
  check_matrix(A);
  gs_csr_destroy(&A);

  /* empty rows at the top, in the middle and at the bottom */
  const double a[] = {0, 0, 0, 0, /**/ 1, 0, 2, 0, /**/ 0, 0, 0, 0, /**/ 0, 0, 0, 0,
                      0, 3, 0, 4, /**/ 0, 0, 0, 0};
  A = gs_test_csr_from_dense(6, 4, a);
  check_matrix(A);
  gs_csr_destroy(&A);

  /* nnz = 0 in several shapes (y = beta*y; NaN in y must not survive beta = 0) */
  const int shapes[][2] = {{5, 4}, {4, 5}, {1, 1}, {0, 3}, {3, 0}, {0, 0}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
    gs_csr_t *Z = NULL;
    CU_ASSERT_FATAL(gs_csr_create(&Z, shapes[s][0], shapes[s][1], 0) == GS_SUCCESS);
    check_matrix(Z);
    gs_csr_destroy(&Z);
  }
}

static void test_all_zero_values(void)
{
  gs_csr_t *A = gs_test_random_csr(&g_state, 40, 30, 0.2);
  CU_ASSERT_FATAL(A != NULL);
  for (gs_idx_t p = 0; p < A->nnz; ++p) A->val[p] = 0.0;
  check_matrix(A);
  gs_csr_destroy(&A);
}

static void test_laplacian(void)
{
  gs_csr_t *A = laplace5(20, 15);
  CU_ASSERT(!ell_refuses(A, 3.0));
  CU_ASSERT(!dia_refuses(A, 3.0));
  check_matrix(A);
  gs_dia_layout_t *D = NULL;
  CU_ASSERT_FATAL(gs_dia_layout_build(&D, A, 3.0) == GS_SUCCESS);
  CU_ASSERT_EQUAL(D->ndiag, 5);
  const int32_t off[] = {-20, -1, 0, 1, 20};
  CU_ASSERT(memcmp(D->offsets, off, sizeof off) == 0);
  gs_dia_layout_destroy(&D);
  gs_csr_destroy(&A);

  /* the 27-point stencil of the performance target (100^3 there): 27 diagonals at offsets
   * {-1, 0, 1} + {-nx, 0, nx} + {-nx*ny, 0, nx*ny} */
  CU_ASSERT_FATAL(gs_gen_laplace(&A, 9, 8, 7, 27) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_dia_layout_build(&D, A, 3.0) == GS_SUCCESS);
  CU_ASSERT_EQUAL(D->ndiag, 27);
  for (int k = 0; k < 27; ++k) { /* increasing: dz major, then dy, then dx */
    int dz = k / 9 - 1, dy = (k / 3) % 3 - 1, dx = k % 3 - 1;
    CU_ASSERT_EQUAL(D->offsets[k], dz * 72 + dy * 9 + dx);
  }
  gs_dia_layout_destroy(&D);
  check_matrix(A);
  gs_csr_destroy(&A);

  if (gs_test_quick()) return;
  /* big enough for the HYB rule to pick K: 9604 interior rows of 5 entries >= 4096 -> K = 5 */
  A = laplace5(100, 100);
  CU_ASSERT_EQUAL(gs_hyb_choose_k(A), 5);
  check_matrix(A);
  gs_csr_destroy(&A);
}

static void test_one_huge_row(void)
{
  int n = gs_test_quick() ? 20000 : 100000;
  gs_csr_t *A = one_huge_row(50, n, 7);
  double *x = random_vec(n), *y = random_vec(50);

  CU_ASSERT_EQUAL(gs_spmv_host_apply("ell", A, NULL, GS_OP_N, 1.0, x, 0.0, y),
                  GS_ERR_FORMAT_FILL);
  CU_ASSERT(strstr(gs_last_error(), "ell refused: padding to") != NULL);
  CU_ASSERT(strstr(gs_last_error(), "entries per row would store") != NULL);
  CU_ASSERT(strstr(gs_last_error(), "(limit 3x)") != NULL);
  CU_ASSERT_EQUAL(gs_spmv_host_apply("dia", A, NULL, GS_OP_N, 1.0, x, 0.0, y),
                  GS_ERR_FORMAT_FILL);
  CU_ASSERT(strstr(gs_last_error(), "dia refused:") != NULL);
  CU_ASSERT(strstr(gs_last_error(), "diagonals would store") != NULL);
  CU_ASSERT(strstr(gs_last_error(), "(limit 3x)") != NULL);
  CU_ASSERT_EQUAL(gs_hyb_choose_k(A), 0); /* 50 rows: far below 4096, all COO */
  free(x);
  free(y);
  check_matrix(A); /* coo, hyb work; ell and dia refuse in every path */
  gs_csr_destroy(&A);
}

static void test_hyb_k_rule(void)
{
  int64_t h[64];
  memset(h, 0, sizeof h);
  h[5] = 10000; /* 10000 rows of length 5 + 100 rows of length 50 */
  h[50] = 100;
  CU_ASSERT_EQUAL(gs_hyb_k_rule(10100, h, 50), 5);

  memset(h, 0, sizeof h); /* below the breakeven of 4096 rows: no ELL at all */
  h[10] = 4095;
  CU_ASSERT_EQUAL(gs_hyb_k_rule(4095, h, 10), 0);
  h[10] = 4096;
  CU_ASSERT_EQUAL(gs_hyb_k_rule(4096, h, 10), 10);

  memset(h, 0, sizeof h); /* the m/3 criterion, exactly at and just below */
  h[8] = 10000;
  h[2] = 20000;
  CU_ASSERT_EQUAL(gs_hyb_k_rule(30000, h, 8), 8);
  h[8] = 9999;
  h[2] = 20001;
  CU_ASSERT_EQUAL(gs_hyb_k_rule(30000, h, 8), 2);

  memset(h, 0, sizeof h); /* a staircase: 6000 rows of each length 1..6, m = 36000 */
  for (int L = 1; L <= 6; ++L) h[L] = 6000;
  /* rows >= K: 36000, 30000, 24000, 18000, 12000 (= m/3), 6000 (< m/3) */
  CU_ASSERT_EQUAL(gs_hyb_k_rule(36000, h, 6), 5);

  memset(h, 0, sizeof h);
  CU_ASSERT_EQUAL(gs_hyb_k_rule(0, h, 0), 0);
  h[0] = 9000; /* all rows empty */
  CU_ASSERT_EQUAL(gs_hyb_k_rule(9000, h, 0), 0);

  /* the rule on a real matrix: 6000 rows of 3 entries, every 100th row 40 entries */
  int m = 6000;
  int64_t cap = (int64_t)m * 3 + 60 * 40;
  int *r = malloc((size_t)cap * sizeof *r), *c = malloc((size_t)cap * sizeof *c);
  double *v = malloc((size_t)cap * sizeof *v);
  CU_ASSERT_FATAL(r && c && v);
  int64_t k = 0;
  for (int i = 0; i < m; ++i) {
    int len = i % 100 == 0 ? 40 : 3;
    for (int t = 0; t < len; ++t) {
      r[k] = i;
      c[k] = (i + t * 7) % m;
      v[k++] = 2.0 * gs_test_uniform(&g_state) - 1.0;
    }
  }
  gs_csr_t *A = from_triples(m, m, k, r, c, v);
  free(r);
  free(c);
  free(v);
  CU_ASSERT_EQUAL(gs_hyb_choose_k(A), 3);
  gs_hyb_layout_t *H = NULL;
  CU_ASSERT_FATAL(gs_hyb_layout_build(&H, A, -1) == GS_SUCCESS);
  CU_ASSERT_EQUAL(H->ell->K, 3);
  CU_ASSERT_EQUAL(H->ell->entries, (int64_t)m * 3);
  CU_ASSERT_EQUAL(H->coo->nnz, 60 * 37);
  CU_ASSERT_EQUAL(H->coo->rows_touched, 60);
  for (gs_idx_t e = 1; e < H->coo->nnz; ++e) CU_ASSERT(H->coo->row[e - 1] <= H->coo->row[e]);
  gs_hyb_layout_destroy(&H);
  if (!gs_test_quick()) check_matrix(A);
  gs_csr_destroy(&A);
}

static void test_fill_threshold(void)
{
  double x[4] = {1, 2, 3, 4}, y[4];
  gs_ell_layout_t *E = NULL;
  gs_dia_layout_t *D = NULL;

  /* ELL: rows of lengths 3, 0, 0: 9 slots for 3 entries, exactly 3x: accepted */
  const double a3[] = {1, 2, 3, 0, 0, 0, 0, 0, 0};
  gs_csr_t *A = gs_test_csr_from_dense(3, 3, a3);
  CU_ASSERT_EQUAL(gs_ell_layout_build(&E, A, 3.0), GS_SUCCESS);
  gs_ell_layout_destroy(&E);
  CU_ASSERT_EQUAL(gs_spmv_host_apply("ell", A, NULL, GS_OP_N, 1.0, x, 0.0, y), GS_SUCCESS);
  CU_ASSERT_DOUBLE_EQUAL(y[0], 14.0, 0.0);
  CU_ASSERT_EQUAL(gs_spmv_host_apply("ell", A, "max_fill=2.99", GS_OP_N, 1.0, x, 0.0, y),
                  GS_ERR_FORMAT_FILL);
  CU_ASSERT(strstr(gs_last_error(), "limit 2.99x") != NULL);
  CU_ASSERT_EQUAL(gs_spmv_host_apply("ell", A, "ell.max_fill=2.99", GS_OP_N, 1.0, x, 0.0, y),
                  GS_ERR_FORMAT_FILL);
  /* another backend's qualified key leaves ell's guard at its default */
  CU_ASSERT_EQUAL(gs_spmv_host_apply("ell", A, "dia.max_fill=2.99", GS_OP_N, 1.0, x, 0.0, y),
                  GS_SUCCESS);
  gs_csr_destroy(&A);

  /* ... one more empty row: 12 slots for 3 entries, 4x: refused, nothing allocated */
  const double a4[] = {1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  A = gs_test_csr_from_dense(4, 3, a4);
  CU_ASSERT_EQUAL(gs_ell_layout_build(&E, A, 3.0), GS_ERR_FORMAT_FILL);
  CU_ASSERT_PTR_NULL(E);
  CU_ASSERT_STRING_EQUAL(gs_last_error(), "ell refused: padding to 3 entries per row would "
                                          "store 4.0x the nonzeros (limit 3x)");
  CU_ASSERT_EQUAL(gs_ell_layout_build(&E, A, 4.0), GS_SUCCESS);
  gs_ell_layout_destroy(&E);
  gs_csr_destroy(&A);

  /* DIA: identity + (0,2) on 3x3: 2 diagonals x 3 rows for 4 entries = 1.5x */
  const double d3[] = {1, 0, 5, 0, 2, 0, 0, 0, 3};
  A = gs_test_csr_from_dense(3, 3, d3);
  CU_ASSERT_EQUAL(gs_dia_layout_build(&D, A, 1.5), GS_SUCCESS);
  gs_dia_layout_destroy(&D);
  CU_ASSERT_EQUAL(gs_dia_layout_build(&D, A, 1.49), GS_ERR_FORMAT_FILL);
  CU_ASSERT_PTR_NULL(D);
  CU_ASSERT_STRING_EQUAL(gs_last_error(),
                         "dia refused: 2 diagonals would store 1.5x the nonzeros (limit 1.49x)");
  CU_ASSERT_EQUAL(gs_spmv_host_apply("dia", A, "max_fill=1.49", GS_OP_N, 1.0, x, 0.0, y),
                  GS_ERR_FORMAT_FILL);
  CU_ASSERT_EQUAL(gs_spmv_host_apply("dia", A, "max_fill=1.5", GS_OP_N, 1.0, x, 0.0, y),
                  GS_SUCCESS);
  CU_ASSERT_DOUBLE_EQUAL(y[0], 16.0, 0.0);
  gs_csr_destroy(&A);

  /* the anti-diagonal of 4x4: 4 diagonals for 4 entries, 4x > 3x */
  const double ad[] = {0, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 0};
  A = gs_test_csr_from_dense(4, 4, ad);
  CU_ASSERT_EQUAL(gs_dia_layout_build(&D, A, 3.0), GS_ERR_FORMAT_FILL);
  CU_ASSERT_STRING_EQUAL(gs_last_error(),
                         "dia refused: 4 diagonals would store 4.0x the nonzeros (limit 3x)");
  CU_ASSERT_EQUAL(gs_dia_layout_build(&D, A, 4.0), GS_SUCCESS);
  gs_dia_layout_destroy(&D);
  /* HYB never refuses */
  gs_hyb_layout_t *H = NULL;
  CU_ASSERT_EQUAL(gs_hyb_layout_build(&H, A, 4), GS_SUCCESS);
  gs_hyb_layout_destroy(&H);
  gs_csr_destroy(&A);
}

static void test_ell_layout(void)
{
  CU_ASSERT_EQUAL(gs_fmt_pitch(0), 0);
  CU_ASSERT_EQUAL(gs_fmt_pitch(1), 32);
  CU_ASSERT_EQUAL(gs_fmt_pitch(32), 32);
  CU_ASSERT_EQUAL(gs_fmt_pitch(33), 64);
  CU_ASSERT_EQUAL(gs_fmt_pitch(1000000), 1000000);

  /* [1 0 2 0; 0 0 0 0; 3 4 5 0]: K = 3, pitch 32, slot (i, k) at k*32 + i */
  const double a[] = {1, 0, 2, 0, 0, 0, 0, 0, 3, 4, 5, 0};
  gs_csr_t *A = gs_test_csr_from_dense(3, 4, a);
  gs_ell_layout_t *E = NULL;
  CU_ASSERT_FATAL(gs_ell_layout_build(&E, A, 3.0) == GS_SUCCESS); /* 9 slots, 5 entries */
  CU_ASSERT_EQUAL(E->K, 3);
  CU_ASSERT_EQUAL(E->pitch, 32);
  CU_ASSERT_EQUAL(E->pitch % GS_FMT_PITCH_ALIGN, 0);
  CU_ASSERT_EQUAL(E->entries, 5);
  const int col[3][3] = {{0, 2, GS_ELL_PAD}, {GS_ELL_PAD, GS_ELL_PAD, GS_ELL_PAD}, {0, 1, 2}};
  const double val[3][3] = {{1, 2, 0}, {0, 0, 0}, {3, 4, 5}};
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 3; ++k) {
      CU_ASSERT_EQUAL(E->col[k * 32 + i], col[i][k]);
      CU_ASSERT_DOUBLE_EQUAL(E->val[k * 32 + i], val[i][k], 0.0);
    }
  for (int k = 0; k < 3; ++k) /* alignment rows 3..31 are padding */
    for (int i = 3; i < 32; ++i) {
      CU_ASSERT_EQUAL(E->col[k * 32 + i], GS_ELL_PAD);
      CU_ASSERT_DOUBLE_EQUAL(E->val[k * 32 + i], 0.0, 0.0);
    }
  /* padding never touches x: an Inf in x reaches only the rows that use its column */
  double x[4] = {1, 1, 1, INFINITY}, y[3]; /* no row uses column 3 */
  gs_ell_layout_apply_host(E, 1.0, x, 0.0, y);
  CU_ASSERT(isfinite(y[0]) && isfinite(y[1]) && isfinite(y[2]));
  CU_ASSERT_DOUBLE_EQUAL(y[1], 0.0, 0.0);
  /* ... nor does the transpose's scatter: row 1 is all padding, so x[1] = Inf reaches nothing */
  double xt[3] = {1, INFINITY, 1}, yt[4] = {0, 0, 0, 0};
  gs_ell_layout_accumulate_t_host(E, 1.0, xt, yt);
  for (int j = 0; j < 4; ++j) CU_ASSERT(isfinite(yt[j]));
  CU_ASSERT_DOUBLE_EQUAL(yt[0], 1.0 + 3.0, 0.0);
  CU_ASSERT_DOUBLE_EQUAL(yt[3], 0.0, 0.0);
  gs_ell_layout_destroy(&E);
  gs_ell_layout_destroy(&E); /* NULL-safe */
  gs_ell_layout_destroy(NULL);

  CU_ASSERT_FATAL(gs_ell_layout_build_k(&E, A, 1) == GS_SUCCESS); /* HYB's truncated part */
  CU_ASSERT_EQUAL(E->entries, 2);
  CU_ASSERT_EQUAL(E->col[0], 0);
  CU_ASSERT_EQUAL(E->col[1], GS_ELL_PAD);
  CU_ASSERT_EQUAL(E->col[2], 0);
  gs_ell_layout_destroy(&E);
  gs_csr_destroy(&A);
}

static void test_dia_layout(void)
{
  /* 4 x 5: (0,0)=1 (0,1)=2 (1,0)=3 (1,2)=4 (2,4)=5 (3,3)=6 -> offsets -1, 0, 1, 2 */
  const double a[] = {1, 2, 0, 0, 0, 3, 0, 4, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 6, 0};
  gs_csr_t *A = gs_test_csr_from_dense(4, 5, a);
  gs_dia_layout_t *D = NULL;
  CU_ASSERT_FATAL(gs_dia_layout_build(&D, A, 3.0) == GS_SUCCESS); /* 16 slots, 6 entries */
  CU_ASSERT_EQUAL(D->ndiag, 4);
  CU_ASSERT_EQUAL(D->pitch, 32);
  const int32_t off[] = {-1, 0, 1, 2};
  CU_ASSERT(memcmp(D->offsets, off, sizeof off) == 0);
  /* val[d*32 + i] = A(i, i + off[d]); 0 where absent or out of range */
  const double want[4][4] = {{0, 3, 0, 0}, {1, 0, 0, 6}, {2, 4, 0, 0}, {0, 0, 5, 0}};
  for (int d = 0; d < 4; ++d)
    for (int i = 0; i < 32; ++i)
      CU_ASSERT_DOUBLE_EQUAL(D->val[d * 32 + i], i < 4 ? want[d][i] : 0.0, 0.0);
  CU_ASSERT_EQUAL(D->slots_in_range, 3 + 4 + 4 + 3);
  /* out-of-range slots never read x: Inf at x[0] only reaches rows 0 and 1 */
  double x[5] = {INFINITY, 1, 1, 1, 1}, y[4];
  gs_dia_layout_apply_host(D, 1.0, x, 0.0, y);
  CU_ASSERT(!isfinite(y[0]) && !isfinite(y[1]) && isfinite(y[2]) && isfinite(y[3]));
  gs_dia_layout_destroy(&D);
  CU_ASSERT_PTR_NULL(D);
  gs_csr_destroy(&A);

  /* rectangular, wide and tall, through every path */
  const double w[] = {0, 0, 0, 7, 0, 1, 0, 0, 0, 2}; /* 2 x 5 */
  A = gs_test_csr_from_dense(2, 5, w);
  CU_ASSERT_FATAL(gs_dia_layout_build(&D, A, 3.0) == GS_SUCCESS);
  const int32_t offw[] = {-1, 3};
  CU_ASSERT_EQUAL(D->ndiag, 2);
  CU_ASSERT(memcmp(D->offsets, offw, sizeof offw) == 0);
  gs_dia_layout_destroy(&D);
  check_matrix(A);
  gs_csr_destroy(&A);
  const double t[] = {1, 0, 0, 2, 3, 0, 0, 4, 0, 0}; /* 5 x 2 */
  A = gs_test_csr_from_dense(5, 2, t);
  check_matrix(A);
  gs_csr_destroy(&A);
}

static void test_coo_layout_and_partition(void)
{
  gs_idx_t w;
  int64_t iv;
  gs_coo_partition(0, 100, &w, &iv);
  CU_ASSERT_EQUAL(w, 0);
  gs_coo_partition(1, 100, &w, &iv);
  CU_ASSERT(w == 1 && iv == 32);
  gs_coo_partition(100, 2, &w, &iv); /* 4 chunks on 2 warps */
  CU_ASSERT(w == 2 && iv == 64);
  gs_coo_partition(100, 3, &w, &iv); /* 4 chunks on 3 warps: 2 chunks each, 2 warps suffice */
  CU_ASSERT(w == 2 && iv == 64);
  gs_coo_partition(1000, 1000, &w, &iv);
  CU_ASSERT(w == 32 && iv == 32);
  for (int64_t nnz = 1; nnz < 3000; nnz += 97)
    for (int64_t mw = 1; mw < 200; mw += 13) {
      gs_coo_partition(nnz, mw, &w, &iv);
      CU_ASSERT(iv % 32 == 0 && w >= 1 && w <= mw);
      CU_ASSERT((int64_t)(w - 1) * iv < nnz && nnz <= (int64_t)w * iv); /* all warps busy */
    }

  const double a[] = {0, 1, 2, /**/ 0, 0, 0, /**/ 3, 0, 4};
  gs_csr_t *A = gs_test_csr_from_dense(3, 3, a);
  gs_coo_layout_t *C = NULL;
  CU_ASSERT_FATAL(gs_coo_layout_build(&C, A) == GS_SUCCESS);
  const int row[] = {0, 0, 2, 2}, col[] = {1, 2, 0, 2};
  CU_ASSERT_EQUAL(C->nnz, 4);
  CU_ASSERT(memcmp(C->row, row, sizeof row) == 0);
  CU_ASSERT(memcmp(C->col, col, sizeof col) == 0);
  CU_ASSERT_EQUAL(C->rows_touched, 2);
  CU_ASSERT_EQUAL(C->cols_touched, 3);
  gs_coo_layout_destroy(&C);
  CU_ASSERT_FATAL(gs_coo_layout_build_tail(&C, A, 1) == GS_SUCCESS); /* HYB's tail, K = 1 */
  CU_ASSERT_EQUAL(C->nnz, 2);
  CU_ASSERT(C->row[0] == 0 && C->col[0] == 2 && C->row[1] == 2 && C->col[1] == 2);
  gs_coo_layout_destroy(&C);
  gs_coo_layout_destroy(NULL);
  gs_csr_destroy(&A);

  /* long rows crossing many chunks and warps: rows of 0..200 entries, 1..9 warps */
  int m = 40, n = 300;
  int64_t cap = 0;
  for (int i = 0; i < m; ++i) cap += (i * 37) % 201;
  int *r = malloc((size_t)cap * sizeof *r), *c = malloc((size_t)cap * sizeof *c);
  double *v = malloc((size_t)cap * sizeof *v);
  CU_ASSERT_FATAL(r && c && v);
  int64_t k = 0;
  for (int i = 0; i < m; ++i)
    for (int t = 0; t < (i * 37) % 201; ++t) {
      r[k] = i;
      c[k] = t;
      v[k++] = 2.0 * gs_test_uniform(&g_state) - 1.0;
    }
  A = from_triples(m, n, k, r, c, v);
  free(r);
  free(c);
  free(v);
  CU_ASSERT_FATAL(gs_coo_layout_build(&C, A) == GS_SUCCESS);
  for (int mw = 1; mw <= 9; ++mw)
    CU_ASSERT_EQUAL(compare(A, "coo-long", NULL, coo_fn, C, mw, GS_OP_N), GS_SUCCESS);
  gs_coo_layout_destroy(&C);
  gs_csr_destroy(&A);
}

/* A CSR with the given row lengths: each row a run of consecutive columns from a random start
 * (sorted, distinct), values uniform in [-1, 1). */
static gs_csr_t *csr_from_lengths(gs_idx_t m, gs_idx_t n, const int *len)
{
  int64_t nnz = 0;
  for (gs_idx_t i = 0; i < m; ++i) nnz += len[i];
  gs_csr_t *A = NULL;
  if (gs_csr_create(&A, m, n, nnz) != GS_SUCCESS) return NULL;
  int64_t k = 0;
  A->row_ptr[0] = 0;
  for (gs_idx_t i = 0; i < m; ++i) {
    const int L = len[i] < n ? len[i] : n;
    const int base = L < n ? (int)(gs_test_next(&g_state) % (uint64_t)(n - L + 1)) : 0;
    for (int j = 0; j < L; ++j) {
      A->col[k] = base + j;
      A->val[k++] = 2.0 * gs_test_uniform(&g_state) - 1.0;
    }
    A->row_ptr[i + 1] = k;
  }
  A->nnz = k;
  return A;
}

/* Backend `name`'s host apply with `options` plus precision=mixed on A, against the product of
 * A's values rounded to float (Af) within the double product's own bound: a layout that read
 * the double values, or rounded some other way, is off by about 2^-24 of each entry's product,
 * far past that bound (A's values are random, not floats). Returns the first status. */
static gs_status_t compare_rounded(const gs_csr_t *A, const char *name, const char *options,
                                   gs_op_t op)
{
  gs_csr_t *Af = NULL;
  CU_ASSERT_FATAL(gs_csr_copy(&Af, A) == GS_SUCCESS);
  for (int64_t p = 0; p < Af->nnz; ++p) Af->val[p] = (double)(float)Af->val[p];
  char opts[96];
  snprintf(opts, sizeof opts, "%s,precision=mixed", options);
  const gs_idx_t in = op == GS_OP_N ? A->n : A->m, out = op == GS_OP_N ? A->m : A->n;
  double *x = random_vec(in), *y0 = random_vec(out), *y = random_vec(out);
  gs_status_t first = GS_SUCCESS;
  for (size_t k = 0; k < N_AB; ++k) {
    const double alpha = g_ab[k][0], beta = g_ab[k][1];
    fill_y(y, y0, out, beta);
    const gs_status_t st = gs_spmv_host_apply(name, A, opts, op, alpha, x, beta, y);
    if (k == 0) first = st;
    CU_ASSERT_EQUAL(st, first);
    if (st != GS_SUCCESS) continue;
    CU_ASSERT(gs_test_spmv_ok(Af, op, alpha, x, beta, y0, y, "%s %s on the rounded values",
                              name, opts));
  }
  free(x);
  free(y0);
  free(y);
  gs_csr_destroy(&Af);
  return first;
}

/* Backend `name`'s host apply with `options` plus precision=float on A, for a backend whose
 * host apply computes as its float kernels (hola, bcoo, bccoo: x and y read as floats, every
 * operation rounded to float): within the float product's bound (gs_test_spmv_compare_float,
 * x and y drawn as floats), every result a float, and for (alpha, beta) = (1, 0) outside the
 * bound of double arithmetic on the same rounded values where op(A) x has an entry of at least
 * `long_row` terms (0: not checked), which a float result is (the bound holds double results
 * to about k 2^-53 of the magnitudes; floats are 2^-24 apart). Float and double sums rounded
 * once at the end are both within the float bound: that difference is the GPU suite's to see
 * (the kernels against the float bound), not this one's. Returns the first status. */
/* The most terms of one entry of op(A) x: the longest row (op N) or column (op T). */
static gs_idx_t terms_max(const gs_csr_t *A, gs_op_t op)
{
  if (op == GS_OP_N) return max_row(A);
  gs_idx_t *cnt = calloc((size_t)A->n + 1, sizeof *cnt), best = 0;
  CU_ASSERT_FATAL(cnt != NULL);
  for (gs_off_t p = 0; p < A->nnz; ++p)
    if (++cnt[A->col[p]] > best) best = cnt[A->col[p]];
  free(cnt);
  return best;
}

static gs_status_t compare_float(const gs_csr_t *A, const char *name, const char *options,
                                 gs_op_t op, int long_row)
{
  gs_csr_t *Af = NULL;
  CU_ASSERT_FATAL(gs_csr_copy(&Af, A) == GS_SUCCESS);
  for (int64_t p = 0; p < Af->nnz; ++p) Af->val[p] = (double)(float)Af->val[p];
  char opts[96];
  snprintf(opts, sizeof opts, "%s%sprecision=float", options ? options : "", options ? "," : "");
  const gs_idx_t in = op == GS_OP_N ? A->n : A->m, out = op == GS_OP_N ? A->m : A->n;
  double *x = random_vec(in), *y0 = random_vec(out), *y = random_vec(out);
  float *xf = malloc(((size_t)in + 1) * sizeof *xf), *y0f = malloc(((size_t)out + 1) * sizeof *y0f);
  float *yf = malloc(((size_t)out + 1) * sizeof *yf);
  CU_ASSERT_FATAL(xf && y0f && yf);
  for (gs_idx_t i = 0; i < in; ++i) x[i] = xf[i] = (float)x[i];
  for (gs_idx_t i = 0; i < out; ++i) y0[i] = y0f[i] = (float)y0[i];
  gs_status_t first = GS_SUCCESS;
  for (size_t k = 0; k < N_AB; ++k) {
    const double alpha = g_ab[k][0], beta = g_ab[k][1];
    fill_y(y, y0, out, beta);
    const gs_status_t st = gs_spmv_host_apply(name, A, opts, op, alpha, x, beta, y);
    if (k == 0) first = st;
    CU_ASSERT_EQUAL(st, first);
    if (st != GS_SUCCESS) continue;
    int floats = 1;
    for (gs_idx_t i = 0; i < out; ++i) {
      yf[i] = (float)y[i];
      floats &= (double)yf[i] == y[i];
    }
    CU_ASSERT(floats);
    char label[160];
    snprintf(label, sizeof label, "%s %s, float arithmetic", name, opts);
    CU_ASSERT(gs_test_spmv_ok_float(A, op, (float)alpha, xf, (float)beta, y0f, yf, label));
    if (k == 0 && long_row > 0 && terms_max(A, op) >= long_row)
      CU_ASSERT(gs_test_spmv_compare(Af, op, alpha, x, beta, y0, y).ratio > 1.0);
  }
  free(x);
  free(y0);
  free(y);
  free(xf);
  free(y0f);
  free(yf);
  gs_csr_destroy(&Af);
  return first;
}

/* HOLA's host emulation (the same block / thread split and row bookkeeping as its kernels)
 * on the structures its special cases exist for, at every compiled non-zeros-per-thread, in
 * double and in mixed precision (the emulation on the values rounded once to float), and in
 * float precision (the same on float x and y, every operation rounded to float). */
static void check_hola(gs_csr_t *A, const char *what)
{
  CU_ASSERT_FATAL(A != NULL);
  const int npts[] = {4, 8, 16};
  for (int k = 0; k < 3; ++k) {
    char opt[32];
    snprintf(opt, sizeof opt, "hola.npt=%d", npts[k]);
    if (compare(A, "hola", opt, NULL, NULL, 0, GS_OP_N) != GS_SUCCESS ||
        compare(A, "hola", opt, NULL, NULL, 0, GS_OP_T) != GS_SUCCESS ||
        compare_rounded(A, "hola", opt, GS_OP_N) != GS_SUCCESS ||
        compare_rounded(A, "hola", opt, GS_OP_T) != GS_SUCCESS ||
        compare_float(A, "hola", opt, GS_OP_N, 1000) != GS_SUCCESS ||
        compare_float(A, "hola", opt, GS_OP_T, 1000) != GS_SUCCESS) {
      fprintf(stderr, "\n  hola %s on %s failed\n", opt, what);
      CU_FAIL("hola host apply refused");
    }
  }
  gs_csr_destroy(&A);
}

static void test_hola_structures(void)
{
  const gs_idx_t m = 6000;
  int *len = calloc((size_t)m, sizeof *len);
  CU_ASSERT_FATAL(len != NULL);
  /* one row holding nearly all entries (longer than several blocks), plus one in the last row */
  len[0] = 20000;
  len[m - 1] = 1;
  check_hola(csr_from_lengths(m, 30000, len), "one long row");
  /* all rows empty but one, in the middle */
  memset(len, 0, (size_t)m * sizeof *len);
  len[m / 2] = 5000;
  check_hola(csr_from_lengths(m, 8000, len), "one non-empty row");
  /* runs of 300-5000 empty rows between short rows (block boundaries inside the runs) */
  for (gs_idx_t i = 0; i < m;) {
    int run = 300 + (int)(gs_test_next(&g_state) % 4701);
    for (gs_idx_t j = i; j < m && j < i + run; ++j) len[j] = 0;
    i += run;
    for (int s = 0; s < 40 && i < m; ++s) len[i++] = 1 + (int)(gs_test_next(&g_state) % 3);
  }
  check_hola(csr_from_lengths(m, m, len), "runs of empty rows");
  /* single empty rows scattered among short rows (warps flagged for empty rows) */
  for (gs_idx_t i = 0; i < m; ++i) len[i] = gs_test_uniform(&g_state) < 0.2 ? 0 : 1 + (int)(i % 5);
  check_hola(csr_from_lengths(m, m, len), "scattered empty rows");
  /* 1 to 64 entries per row in a sawtooth */
  for (gs_idx_t i = 0; i < m; ++i) len[i] = 1 + (int)(i % 64);
  check_hola(csr_from_lengths(m, 500, len), "sawtooth 1..64");
  /* long rows of random lengths among short ones (rows shared by several blocks) */
  for (gs_idx_t i = 0; i < m; ++i)
    len[i] = gs_test_uniform(&g_state) < 0.01 ? 3000 + (int)(gs_test_next(&g_state) % 9000)
                                               : (int)(gs_test_next(&g_state) % 9);
  check_hola(csr_from_lengths(m, 12000, len), "long and short rows");
  free(len);
  /* one row, one column */
  int one_row[1] = {7000};
  check_hola(csr_from_lengths(1, 9000, one_row), "1 x 9000");
  int *col_lens = malloc(9000 * sizeof *col_lens);
  CU_ASSERT_FATAL(col_lens != NULL);
  for (int i = 0; i < 9000; ++i) col_lens[i] = 1;
  check_hola(csr_from_lengths(9000, 1, col_lens), "9000 x 1");
  free(col_lens);
}

/* Whether the merge-path search's split point of diagonal d is wrong: (i, j = d - i) must have
 * row ends 0..i-1 and entries 0..j-1 as the first d items of the path (row i-1 ends at or
 * before entry j; entry j-1 lies in a row >= i). */
static int merge_split_bad(const gs_csr_t *A, int64_t d, const char *what)
{
  const gs_idx_t i = gs_merge_search_host(A, d);
  const int64_t j = d - i;
  const int bad = i < 0 || i > A->m || j < 0 || j > A->nnz || (i > 0 && A->row_ptr[i] > j) ||
                  (j > 0 && i < A->m && j - 1 >= A->row_ptr[i + 1]);
  if (bad)
    fprintf(stderr, "\n  merge search on %s: diagonal %lld gave (%d, %lld)\n", what,
            (long long)d, (int)i, (long long)j);
  return bad;
}

/* The merge-based SpMV's host emulation (the kernels' tiles, per-thread splits, block scan and
 * fix-up) at every compiled items-per-thread, and the merge-path search's split points. */
static void check_merge(gs_csr_t *A, const char *what)
{
  CU_ASSERT_FATAL(A != NULL);
  const int64_t total = (int64_t)A->m + A->nnz;
  const int64_t step = total > 20000 ? total / 20000 : 1;
  int bad = 0;
  for (int64_t d = 0; d < total && !bad; d += step) bad = merge_split_bad(A, d, what);
  if (!bad) bad = merge_split_bad(A, total, what);
  CU_ASSERT(!bad);
  const int ipts[] = {5, 7, 9, 15};
  for (int k = 0; k < 4; ++k) {
    char opt[32];
    snprintf(opt, sizeof opt, "merge.ipt=%d", ipts[k]);
    if (compare(A, "merge", opt, NULL, NULL, 0, GS_OP_N) != GS_SUCCESS) {
      fprintf(stderr, "\n  merge %s on %s failed\n", opt, what);
      CU_FAIL("merge host apply refused");
    }
  }
  double x[1] = {1.0}, y[1] = {0.0};
  CU_ASSERT_EQUAL(gs_spmv_host_apply("merge", A, NULL, GS_OP_T, 1.0, x, 0.0, y),
                  GS_ERR_UNSUPPORTED);
  gs_csr_destroy(&A);
}

static void test_merge_structures(void)
{
  const gs_idx_t m = 6000;
  int *len = calloc((size_t)m, sizeof *len);
  CU_ASSERT_FATAL(len != NULL);
  /* one row spanning many tiles (its carries summed by the fix-up), one entry in the last */
  len[0] = 20000;
  len[m - 1] = 1;
  check_merge(csr_from_lengths(m, 30000, len), "one long row");
  /* all rows empty but one, in the middle: tiles of row ends only around it */
  memset(len, 0, (size_t)m * sizeof *len);
  len[m / 2] = 5000;
  check_merge(csr_from_lengths(m, 8000, len), "one non-empty row");
  /* no entries at all: every tile holds row ends only */
  memset(len, 0, (size_t)m * sizeof *len);
  check_merge(csr_from_lengths(m, 10, len), "nnz = 0");
  /* runs of 300-5000 empty rows between short rows */
  for (gs_idx_t i = 0; i < m;) {
    int run = 300 + (int)(gs_test_next(&g_state) % 4701);
    for (gs_idx_t j = i; j < m && j < i + run; ++j) len[j] = 0;
    i += run;
    for (int s = 0; s < 40 && i < m; ++s) len[i++] = 1 + (int)(gs_test_next(&g_state) % 3);
  }
  check_merge(csr_from_lengths(m, m, len), "runs of empty rows");
  /* 1 to 64 entries per row in a sawtooth (rows shared between threads and warps) */
  for (gs_idx_t i = 0; i < m; ++i) len[i] = 1 + (int)(i % 64);
  check_merge(csr_from_lengths(m, 500, len), "sawtooth 1..64");
  /* 300 rows of 100-3000 entries: rows shared by threads of several warps and by tiles */
  for (gs_idx_t i = 0; i < 300; ++i) len[i] = 100 + (int)(gs_test_next(&g_state) % 2901);
  check_merge(csr_from_lengths(300, 4000, len), "rows of 100-3000");
  /* long rows of random lengths among short and empty ones */
  for (gs_idx_t i = 0; i < m; ++i)
    len[i] = gs_test_uniform(&g_state) < 0.01 ? 3000 + (int)(gs_test_next(&g_state) % 9000)
                                               : (int)(gs_test_next(&g_state) % 9);
  check_merge(csr_from_lengths(m, 12000, len), "long and short rows");
  free(len);
  int one[1] = {1}, one_row[1] = {7000};
  check_merge(csr_from_lengths(1, 1, one), "1 x 1");
  check_merge(csr_from_lengths(1, 9000, one_row), "1 x 9000");
  int *col_lens = malloc(9000 * sizeof *col_lens);
  CU_ASSERT_FATAL(col_lens != NULL);
  for (int i = 0; i < 9000; ++i) col_lens[i] = 1;
  check_merge(csr_from_lengths(9000, 1, col_lens), "9000 x 1");
  free(col_lens);
}

/* CSR-Adaptive's row blocks: they partition the rows in order; a block of several rows fits the
 * non-zero budget and the row cap; the chunks of every row longer than ADAPT_LONG cover it in
 * order, ADAPT_LONG entries each; then the host emulation against plain CSR. */
static void check_adaptive(gs_csr_t *A, const char *what)
{
  CU_ASSERT_FATAL(A != NULL);
  gs_adapt_layout_t *L = NULL;
  CU_ASSERT_FATAL(gs_adapt_layout_build(&L, A) == GS_SUCCESS);
  int bad = L->blocks[0] != 0 || L->blocks[L->nblocks] != A->m;
  gs_idx_t k = 0, c = 0, stream = 0, vector = 0;
  for (gs_idx_t b = 0; b < L->nblocks && !bad; ++b) {
    const gs_idx_t r0 = L->blocks[b], r1 = L->blocks[b + 1];
    const gs_off_t cnt = A->row_ptr[r1] - A->row_ptr[r0];
    bad = r1 <= r0;
    if (r1 - r0 > 1) {
      bad = bad || cnt > ADAPT_NNZ || r1 - r0 > ADAPT_ROWS;
      ++stream;
    } else if (cnt <= ADAPT_LONG) {
      ++vector;
    } else { /* VectorL: this row's chunks, in order */
      bad = bad || k >= L->nlong || L->longs[2 * k] != r0 || L->longs[2 * k + 1] != c;
      for (gs_off_t p = A->row_ptr[r0]; p < A->row_ptr[r1] && !bad; p += ADAPT_LONG, ++c)
        bad = c >= L->nchunks || L->chunks[2 * c] != r0 || L->chunks[2 * c + 1] != p;
      ++k;
    }
    /* a block of one row shorter than the budget ends because the next row did not fit */
    if (r1 - r0 == 1 && cnt <= ADAPT_NNZ && r1 < A->m)
      bad = bad || A->row_ptr[r1 + 1] - A->row_ptr[r0] <= ADAPT_NNZ;
  }
  bad = bad || k != L->nlong || c != L->nchunks || L->longs[2 * k] != A->m ||
        L->longs[2 * k + 1] != c || stream != L->stream_blocks || vector != L->vector_blocks;
  if (bad) fprintf(stderr, "\n  csr-adaptive blocks on %s are wrong\n", what);
  CU_ASSERT(!bad);
  gs_adapt_layout_destroy(&L);
  CU_ASSERT_PTR_NULL(L);
  CU_ASSERT_EQUAL(compare(A, "csr-adaptive", NULL, NULL, NULL, 0, GS_OP_N), GS_SUCCESS);
  double x[1] = {1.0}, y[1] = {0.0};
  CU_ASSERT_EQUAL(gs_spmv_host_apply("csr-adaptive", A, NULL, GS_OP_T, 1.0, x, 0.0, y),
                  GS_ERR_UNSUPPORTED);
  gs_csr_destroy(&A);
}

static void test_adaptive_structures(void)
{
  const gs_idx_t m = 6000;
  int *len = calloc((size_t)m, sizeof *len);
  CU_ASSERT_FATAL(len != NULL);
  /* rows at and around the budget and the VectorL threshold, between short rows */
  const int edges[] = {ADAPT_NNZ - 1, ADAPT_NNZ, ADAPT_NNZ + 1, ADAPT_LONG, ADAPT_LONG + 1,
                       2 * ADAPT_LONG, 2 * ADAPT_LONG + 1, 20000};
  for (gs_idx_t i = 0; i < m; ++i) len[i] = (int)(gs_test_next(&g_state) % 9);
  for (size_t e = 0; e < sizeof edges / sizeof *edges; ++e) len[100 + 700 * e] = edges[e];
  check_adaptive(csr_from_lengths(m, 30000, len), "rows around the budget and ADAPT_LONG");
  /* all rows empty but one long one; then none at all */
  memset(len, 0, (size_t)m * sizeof *len);
  len[m / 2] = 9000;
  check_adaptive(csr_from_lengths(m, 10000, len), "one non-empty row");
  memset(len, 0, (size_t)m * sizeof *len);
  check_adaptive(csr_from_lengths(m, 10, len), "nnz = 0");
  /* runs of 300-5000 empty rows between short rows (the row cap) */
  for (gs_idx_t i = 0; i < m;) {
    int run = 300 + (int)(gs_test_next(&g_state) % 4701);
    for (gs_idx_t j = i; j < m && j < i + run; ++j) len[j] = 0;
    i += run;
    for (int s = 0; s < 40 && i < m; ++s) len[i++] = 1 + (int)(gs_test_next(&g_state) % 3);
  }
  check_adaptive(csr_from_lengths(m, m, len), "runs of empty rows");
  /* 1 to 64 entries per row in a sawtooth: every stream group width */
  for (gs_idx_t i = 0; i < m; ++i) len[i] = 1 + (int)(i % 64);
  check_adaptive(csr_from_lengths(m, 500, len), "sawtooth 1..64");
  /* rows of 300-1500: blocks of one to a few rows */
  for (gs_idx_t i = 0; i < 600; ++i) len[i] = 300 + (int)(gs_test_next(&g_state) % 1201);
  check_adaptive(csr_from_lengths(600, 2000, len), "rows of 300-1500");
  free(len);
  int one[1] = {1}, one_row[1] = {70000};
  check_adaptive(csr_from_lengths(1, 1, one), "1 x 1");
  check_adaptive(csr_from_lengths(1, 90000, one_row), "1 x 70000 of 90000");
  int *col_lens = malloc(9000 * sizeof *col_lens);
  CU_ASSERT_FATAL(col_lens != NULL);
  for (int i = 0; i < 9000; ++i) col_lens[i] = 1;
  check_adaptive(csr_from_lengths(9000, 1, col_lens), "9000 x 1");
  free(col_lens);
  CU_ASSERT_EQUAL(gs_adapt_stream_group(1), 32);
  CU_ASSERT_EQUAL(gs_adapt_stream_group(8), 32);
  CU_ASSERT_EQUAL(gs_adapt_stream_group(9), 16);
  CU_ASSERT_EQUAL(gs_adapt_stream_group(256), 1);
  CU_ASSERT_EQUAL(gs_adapt_stream_group(ADAPT_ROWS), 1);
}

/* precision=mixed on the host: every backend flagged GS_SPMV_FLAG_MIXED against the double
 * product with the bound of values rounded to float (gs_test_spmv_compare_u, u_v = 2^-24),
 * and not the double product itself (the rounding happened: values drawn so that most are not
 * floats); every other backend refuses with GS_ERR_UNSUPPORTED naming itself. */
static void test_mixed_precision(void)
{
  const int shapes[][2] = {{300, 300}, {120, 50}, {50, 120}, {1, 1}};
  int mixed = 0, refused = 0;
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
    gs_csr_t *A = gs_test_random_csr(&g_state, shapes[s][0], shapes[s][1], 0.05 + 0.3 * (s == 3));
    CU_ASSERT_FATAL(A != NULL);
    const gs_idx_t lx = (A->m > A->n ? A->m : A->n) + 1;
    double *x = malloc((size_t)lx * sizeof *x), *y0 = malloc((size_t)lx * sizeof *y0);
    double *y = malloc((size_t)lx * sizeof *y), *yd = malloc((size_t)lx * sizeof *yd);
    CU_ASSERT_FATAL(x && y0 && y && yd);
    for (gs_idx_t i = 0; i < lx; ++i) {
      x[i] = 2.0 * gs_test_uniform(&g_state) - 1.0;
      y0[i] = 2.0 * gs_test_uniform(&g_state) - 1.0;
    }
    for (int b = 0; b < gs_spmv_backend_count(); ++b) {
      const char *name = gs_spmv_backend_name(b);
      const int has = (gs_spmv_backend_flags(b) & GS_SPMV_FLAG_MIXED) != 0;
      for (int op = 0; op < 2; ++op) {
        const gs_op_t o = op ? GS_OP_T : GS_OP_N;
        const gs_idx_t len = op ? A->n : A->m;
        for (size_t c = 0; c < N_AB; ++c) {
          memcpy(y, y0, (size_t)len * sizeof *y);
          memcpy(yd, y0, (size_t)len * sizeof *yd);
          gs_status_t st = gs_spmv_host_apply(name, A, "precision=mixed", o, g_ab[c][0], x,
                                              g_ab[c][1], y);
          if (!has) {
            CU_ASSERT_EQUAL(st, GS_ERR_UNSUPPORTED);
            CU_ASSERT(strstr(gs_last_error(), name) != NULL);
            refused += st == GS_ERR_UNSUPPORTED;
            break;
          }
          if (st == GS_ERR_FORMAT_FILL) break; /* ell, dia on scattered entries */
          if (op && !(gs_spmv_backend_flags(b) & GS_SPMV_FLAG_TRANSPOSE)) break;
          CU_ASSERT_EQUAL_FATAL(st, GS_SUCCESS);
          char label[96];
          snprintf(label, sizeof label, "%s mixed, %d x %d", name, (int)A->m, (int)A->n);
          CU_ASSERT(gs_test_spmv_ok_u(A, o, g_ab[c][0], x, g_ab[c][1], y0, y,
                                      GS_PRECISION_MIXED_U, label));
          /* the double layout's product differs somewhere: rounding took place */
          CU_ASSERT_EQUAL_FATAL(gs_spmv_host_apply(name, A, NULL, o, g_ab[c][0], x, g_ab[c][1],
                                                   yd), GS_SUCCESS);
          int differs = 0;
          for (gs_idx_t i = 0; i < len; ++i) differs |= y[i] != yd[i];
          if (A->nnz > 4) CU_ASSERT(differs);
          mixed++;
        }
      }
    }
    free(x);
    free(y0);
    free(y);
    free(yd);
    gs_csr_destroy(&A);
  }
  CU_ASSERT(mixed > 0);
  CU_ASSERT(refused > 0); /* merge, csr5, the cusparse tables ... have no mixed kernels */
  /* the flagged set docs/formats.md lists */
  CU_ASSERT(gs_spmv_backend_flags(gs_spmv_backend_find("csr-vector")) & GS_SPMV_FLAG_MIXED);
  CU_ASSERT(gs_spmv_backend_flags(gs_spmv_backend_find("ell")) & GS_SPMV_FLAG_MIXED);
  CU_ASSERT(gs_spmv_backend_flags(gs_spmv_backend_find("dia")) & GS_SPMV_FLAG_MIXED);
  CU_ASSERT(gs_spmv_backend_flags(gs_spmv_backend_find("hyb")) & GS_SPMV_FLAG_MIXED);
  CU_ASSERT(gs_spmv_backend_flags(gs_spmv_backend_find("sellp")) & GS_SPMV_FLAG_MIXED);
  CU_ASSERT(gs_spmv_backend_flags(gs_spmv_backend_find("bccoo")) & GS_SPMV_FLAG_MIXED);
  CU_ASSERT(gs_spmv_backend_flags(gs_spmv_backend_find("bcoo")) & GS_SPMV_FLAG_MIXED);
  CU_ASSERT(gs_spmv_backend_flags(gs_spmv_backend_find("hola")) & GS_SPMV_FLAG_MIXED);
}

/* The generic key: values, a named backend, unknown ones; names of the enum. */
static void test_precision_option(void)
{
  const double d[] = {0.1, 0.0, 1.0 / 3.0, 2.0};
  gs_csr_t *A = gs_test_csr_from_dense(2, 2, d);
  const double x[] = {1.0, 1.0};
  double y[2], yd[2];
  CU_ASSERT_EQUAL(gs_spmv_options_check("precision=mixed"), GS_SUCCESS);
  CU_ASSERT_EQUAL(gs_spmv_options_check("precision=double,max_fill=4"), GS_SUCCESS);
  CU_ASSERT_EQUAL(gs_spmv_options_check("ell.precision=mixed"), GS_SUCCESS);
  CU_ASSERT_EQUAL(gs_spmv_options_check("precision=float"), GS_SUCCESS);
  CU_ASSERT_EQUAL(gs_spmv_options_check("csr-vector.precision=float"), GS_SUCCESS);
  CU_ASSERT_EQUAL(gs_spmv_options_check("precision=half"), GS_ERR_INVALID_ARG);
  CU_ASSERT(strstr(gs_last_error(), "double, mixed or float") != NULL);
  CU_ASSERT_EQUAL(gs_spmv_options_check("precision="), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_spmv_options_check("nosuch.precision=mixed"), GS_ERR_INVALID_ARG);
  /* a pair naming ell leaves csr-scalar in double: bit for bit the double product */
  CU_ASSERT_EQUAL(gs_spmv_host_apply("csr-scalar", A, "ell.precision=mixed", GS_OP_N, 1.0, x,
                                     0.0, y), GS_SUCCESS);
  CU_ASSERT_EQUAL(gs_spmv_host_apply("csr-scalar", A, NULL, GS_OP_N, 1.0, x, 0.0, yd),
                  GS_SUCCESS);
  CU_ASSERT(y[0] == yd[0] && y[1] == yd[1]);
  CU_ASSERT_EQUAL(gs_spmv_host_apply("csr-scalar", A, "precision=mixed", GS_OP_N, 1.0, x, 0.0,
                                     y), GS_SUCCESS);
  CU_ASSERT_EQUAL(y[0], (double)(float)0.1);           /* one float value, exact sums */
  CU_ASSERT_EQUAL(y[1], (double)(float)(1.0 / 3.0) + 2.0);
  CU_ASSERT_STRING_EQUAL(gs_precision_string(GS_PRECISION_DOUBLE), "double");
  CU_ASSERT_STRING_EQUAL(gs_precision_string(GS_PRECISION_MIXED), "mixed");
  CU_ASSERT_STRING_EQUAL(gs_precision_string((gs_precision_t)7), "unknown");
  CU_ASSERT_EQUAL(gs_precision_find("mixed"), GS_PRECISION_MIXED);
  CU_ASSERT_STRING_EQUAL(gs_precision_string(GS_PRECISION_FLOAT), "float");
  CU_ASSERT_EQUAL(gs_precision_find("float"), GS_PRECISION_FLOAT);
  CU_ASSERT_EQUAL(gs_precision_find("single"), -1);
  CU_ASSERT_EQUAL(gs_spmv_value_type(NULL), GS_VALUE_DOUBLE);
  CU_ASSERT_EQUAL(gs_precision_find(NULL), -1);
  CU_ASSERT_EQUAL(gs_spmv_precision(NULL), GS_PRECISION_DOUBLE);
  gs_csr_destroy(&A);
  /* a finite value beyond the float range is refused in mixed precision (it would become an
   * infinity), naming the entry; double takes it */
  const double big[] = {1.0, 0.0, 0.0, 1e300};
  A = gs_test_csr_from_dense(2, 2, big);
  CU_ASSERT_EQUAL(gs_spmv_host_apply("csr-vector", A, "precision=mixed", GS_OP_N, 1.0, x, 0.0,
                                     y), GS_ERR_UNSUPPORTED);
  CU_ASSERT(strstr(gs_last_error(), "(2, 2)") != NULL && strstr(gs_last_error(), "float range"));
  CU_ASSERT_EQUAL(gs_spmv_host_apply("csr-vector", A, NULL, GS_OP_N, 1.0, x, 0.0, y),
                  GS_SUCCESS);
  CU_ASSERT_EQUAL(y[1], 1e300);
  /* and in float precision, by every float backend, naming the precision */
  for (int b = 0; b < gs_spmv_backend_count(); ++b) {
    if (!(gs_spmv_backend_flags(b) & GS_SPMV_FLAG_FLOAT)) continue;
    CU_ASSERT_EQUAL(gs_spmv_host_apply(gs_spmv_backend_name(b), A, "precision=float", GS_OP_N,
                                       1.0, x, 0.0, y), GS_ERR_UNSUPPORTED);
    CU_ASSERT(strstr(gs_last_error(), "(2, 2)") != NULL &&
              strstr(gs_last_error(), "float precision") != NULL);
  }
  gs_csr_destroy(&A);
}

/* The float product's bound (gs_test_spmv_compare_float) on a host emulation of the float
 * kernels (sequential float sums, float alpha and beta, op T by scatter after y = beta y):
 * within it for every (alpha, beta) and op, rows of 1 to 5000 entries; the same results fail
 * the double arithmetic's bound (the float rounding is real, and only the float bound lets it
 * pass); a row whose largest term is dropped fails it (rows of up to 300 entries: on 5000
 * entries of random sign the worst-case bound, ~1e-3 of the row's magnitudes, may absorb one
 * term). */
static void float_emulate(const gs_csr_t *A, gs_op_t op, float alpha, const float *x, float beta,
                          float *y)
{
  const gs_idx_t len = op == GS_OP_N ? A->m : A->n;
  if (op == GS_OP_N) {
    for (gs_idx_t i = 0; i < A->m; ++i) {
      float s = 0.0f;
      for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p)
        s += (float)A->val[p] * x[A->col[p]];
      y[i] = beta == 0.0f ? alpha * s : alpha * s + beta * y[i];
    }
    return;
  }
  for (gs_idx_t j = 0; j < len; ++j) y[j] = beta == 0.0f ? 0.0f : beta * y[j];
  for (gs_idx_t i = 0; i < A->m; ++i)
    for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p)
      y[A->col[p]] += (float)A->val[p] * (alpha * x[i]);
}

static void test_float_bound(void)
{
  static const int lens[] = {1, 7, 300, 5000};
  for (size_t t = 0; t < sizeof lens / sizeof *lens; ++t) {
    const gs_idx_t m = 40, n = 6000;
    int len[40];
    for (int i = 0; i < m; ++i) len[i] = i == 3 ? lens[t] : 1 + i % 9;
    gs_csr_t *A = gs_test_csr_from_lengths(&g_state, len, m, n);
    float *x = malloc((size_t)n * sizeof *x), *y0 = malloc((size_t)n * sizeof *y0);
    float *y = malloc((size_t)n * sizeof *y);
    double *xd = malloc((size_t)n * sizeof *xd), *y0d = malloc((size_t)n * sizeof *y0d);
    double *yd = malloc((size_t)n * sizeof *yd);
    CU_ASSERT_FATAL(x && y0 && y && xd && y0d && yd);
    /* A_f: the double bound's reference below reads the same values as the float one */
    for (gs_off_t p = 0; p < A->nnz; ++p) A->val[p] = (float)A->val[p];
    for (gs_idx_t i = 0; i < n; ++i) {
      x[i] = (float)(2.0 * gs_test_uniform(&g_state) - 1.0);
      y0[i] = (float)(2.0 * gs_test_uniform(&g_state) - 1.0);
      xd[i] = x[i];
      y0d[i] = y0[i];
    }
    for (int op = 0; op < 2; ++op) {
      const gs_op_t o = op ? GS_OP_T : GS_OP_N;
      const gs_idx_t ylen = op ? n : m;
      for (size_t c = 0; c < N_AB; ++c) {
        const float alpha = (float)g_ab[c][0], beta = (float)g_ab[c][1];
        for (gs_idx_t i = 0; i < ylen; ++i) y[i] = beta == 0.0f ? NAN : y0[i];
        float_emulate(A, o, alpha, x, beta, y);
        char label[64];
        snprintf(label, sizeof label, "host float emulation, row of %d", lens[t]);
        CU_ASSERT(gs_test_spmv_ok_float(A, o, alpha, x, beta, y0, y, label));
        for (gs_idx_t i = 0; i < ylen; ++i) yd[i] = y[i];
        CU_ASSERT(gs_test_spmv_compare(A, o, alpha, xd, beta, y0d, yd).ratio > 1.0);
      }
    }
    if (lens[t] <= 300) { /* row 3 without its largest term */
      for (gs_idx_t i = 0; i < m; ++i) y[i] = y0[i];
      float_emulate(A, GS_OP_N, 1.0f, x, 1.0f, y);
      gs_off_t big = A->row_ptr[3];
      for (gs_off_t p = A->row_ptr[3]; p < A->row_ptr[4]; ++p)
        if (fabs(A->val[p] * x[A->col[p]]) > fabs(A->val[big] * x[A->col[big]])) big = p;
      y[3] -= (float)A->val[big] * x[A->col[big]];
      gs_test_spmv_cmp_t r = gs_test_spmv_compare_float(A, GS_OP_N, 1.0f, x, 1.0f, y0, y);
      CU_ASSERT(r.ratio > 1.0 && r.index == 3);
    }
    free(x);
    free(y0);
    free(y);
    free(xd);
    free(y0d);
    free(yd);
    gs_csr_destroy(&A);
  }
}

/* precision=float on the host: a backend flagged GS_SPMV_FLAG_FLOAT builds the float-valued
 * layout its kernels read (the one of mixed: the host apply sums in double, so it checks the
 * layout, not float arithmetic): within the bound of values rounded to float, bit for bit the
 * mixed layout's product where the backend takes mixed too, and not the double product;
 * except the emulations of float kernels (hola, bcoo, bccoo: x, y and every operation in
 * float), held to the float product's bound (compare_float) and, in double sums, apart from
 * their mixed product; every other backend refuses with GS_ERR_UNSUPPORTED naming itself and
 * the precision. The flagged set is the one docs/formats.md lists. */
static void test_float_precision(void)
{
  const int shapes[][2] = {{300, 300}, {120, 50}, {50, 120}, {1, 1}};
  int taken = 0, refused = 0;
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
    gs_csr_t *A = gs_test_random_csr(&g_state, shapes[s][0], shapes[s][1], 0.05 + 0.3 * (s == 3));
    CU_ASSERT_FATAL(A != NULL);
    const gs_idx_t lx = (A->m > A->n ? A->m : A->n) + 1;
    double *x = malloc((size_t)lx * sizeof *x), *y0 = malloc((size_t)lx * sizeof *y0);
    double *y = malloc((size_t)lx * sizeof *y), *ym = malloc((size_t)lx * sizeof *ym);
    double *yd = malloc((size_t)lx * sizeof *yd);
    CU_ASSERT_FATAL(x && y0 && y && ym && yd);
    for (gs_idx_t i = 0; i < lx; ++i) {
      x[i] = 2.0 * gs_test_uniform(&g_state) - 1.0;
      y0[i] = 2.0 * gs_test_uniform(&g_state) - 1.0;
    }
    for (int b = 0; b < gs_spmv_backend_count(); ++b) {
      const char *name = gs_spmv_backend_name(b);
      const unsigned f = gs_spmv_backend_flags(b);
      const int float_sums = is(name, "hola") || is(name, "bcoo") || is(name, "bccoo");
      for (int op = 0; op < 2; ++op) {
        const gs_op_t o = op ? GS_OP_T : GS_OP_N;
        const gs_idx_t len = op ? A->n : A->m;
        if (float_sums) {
          CU_ASSERT_EQUAL(compare_float(A, name, NULL, o, 0), GS_SUCCESS);
          for (size_t c = 0; c < N_AB; ++c) { /* float arithmetic: not the mixed product */
            memcpy(y, y0, (size_t)len * sizeof *y);
            memcpy(ym, y0, (size_t)len * sizeof *ym);
            CU_ASSERT_EQUAL_FATAL(gs_spmv_host_apply(name, A, "precision=float", o, g_ab[c][0],
                                                     x, g_ab[c][1], y), GS_SUCCESS);
            CU_ASSERT_EQUAL_FATAL(gs_spmv_host_apply(name, A, "precision=mixed", o, g_ab[c][0],
                                                     x, g_ab[c][1], ym), GS_SUCCESS);
            int differs = 0;
            for (gs_idx_t i = 0; i < len; ++i) differs |= y[i] != ym[i];
            if (A->nnz > 4) CU_ASSERT(differs);
            taken++;
          }
          continue;
        }
        for (size_t c = 0; c < N_AB; ++c) {
          memcpy(y, y0, (size_t)len * sizeof *y);
          gs_status_t st = gs_spmv_host_apply(name, A, "precision=float", o, g_ab[c][0], x,
                                              g_ab[c][1], y);
          if (!(f & GS_SPMV_FLAG_FLOAT)) { /* op N: the precision is refused (T may be too) */
            CU_ASSERT_EQUAL(st, GS_ERR_UNSUPPORTED);
            if (op == 0)
              CU_ASSERT(strstr(gs_last_error(), name) != NULL &&
                        strstr(gs_last_error(), "float") != NULL);
            refused += st == GS_ERR_UNSUPPORTED;
            break;
          }
          if (st == GS_ERR_FORMAT_FILL) break; /* ell, dia on scattered entries */
          if (op && !(f & GS_SPMV_FLAG_TRANSPOSE)) break;
          CU_ASSERT_EQUAL_FATAL(st, GS_SUCCESS);
          char label[96];
          snprintf(label, sizeof label, "%s float layout, %d x %d", name, (int)A->m, (int)A->n);
          CU_ASSERT(gs_test_spmv_ok_u(A, o, g_ab[c][0], x, g_ab[c][1], y0, y,
                                      GS_PRECISION_FLOAT_U, label));
          if (f & GS_SPMV_FLAG_MIXED) { /* the same layout as mixed, bit for bit */
            memcpy(ym, y0, (size_t)len * sizeof *ym);
            CU_ASSERT_EQUAL_FATAL(gs_spmv_host_apply(name, A, "precision=mixed", o, g_ab[c][0],
                                                     x, g_ab[c][1], ym), GS_SUCCESS);
            CU_ASSERT(memcmp(y, ym, (size_t)len * sizeof *y) == 0);
          }
          memcpy(yd, y0, (size_t)len * sizeof *yd); /* the values were rounded */
          CU_ASSERT_EQUAL_FATAL(gs_spmv_host_apply(name, A, NULL, o, g_ab[c][0], x, g_ab[c][1],
                                                   yd), GS_SUCCESS);
          int differs = 0;
          for (gs_idx_t i = 0; i < len; ++i) differs |= y[i] != yd[i];
          if (A->nnz > 4) CU_ASSERT(differs);
          taken++;
        }
      }
    }
    free(x);
    free(y0);
    free(y);
    free(ym);
    free(yd);
    gs_csr_destroy(&A);
  }
  CU_ASSERT(taken > 0);
  CU_ASSERT(refused > 0);
  static const char *const flagged[] = {"csr-scalar", "csr-vector", "coo", "ell", "dia", "hyb",
                                        "sellp", "hola", "bcoo", "bccoo", "cusparse-csr"};
  for (size_t k = 0; k < sizeof flagged / sizeof *flagged; ++k)
    if (gs_spmv_backend_find(flagged[k]) >= 0)
      CU_ASSERT(gs_spmv_backend_flags(gs_spmv_backend_find(flagged[k])) & GS_SPMV_FLAG_FLOAT);
  /* those whose kernels stay double-vector (no float slot) */
  static const char *const unflagged[] = {"csr-adaptive", "merge", "csr5", "pkt",
                                          "cusparse-csr2", "cusparse-coo", "cusparse-sell"};
  for (size_t k = 0; k < sizeof unflagged / sizeof *unflagged; ++k)
    if (gs_spmv_backend_find(unflagged[k]) >= 0)
      CU_ASSERT(!(gs_spmv_backend_flags(gs_spmv_backend_find(unflagged[k])) &
                  GS_SPMV_FLAG_FLOAT));
}

int main(void)
{
  g_state = gs_test_seed();
  CU_TestInfo tests[] = {
    {"registry: every backend listed; coo, ell, dia, hyb slots and flags", test_registry},
    {"random matrices of several shapes, every path and backend", test_random_shapes},
    {"1x1, empty rows, nnz = 0", test_tiny_and_empty},
    {"all-zero values", test_all_zero_values},
    {"Laplacians: 5-point 2D, 27-point 3D", test_laplacian},
    {"one row with 100k entries: ell and dia refuse", test_one_huge_row},
    {"HYB K rule on hand-made histograms", test_hyb_k_rule},
    {"fill refusal exactly at and above max_fill", test_fill_threshold},
    {"ELL layout: pitch, column-major, padding", test_ell_layout},
    {"DIA layout: sorted offsets, column-major, rectangular", test_dia_layout},
    {"COO layout and persistent-warp partition", test_coo_layout_and_partition},
    {"HOLA split: long rows, empty-row runs, sawtooth, 1-row and 1-column", test_hola_structures},
    {"merge path: split points; long rows, empty rows, nnz = 0, 1x1, 1-row, 1-column",
     test_merge_structures},
    {"csr-adaptive blocks: budget, row cap, VectorL chunks; empty rows, nnz = 0, 1x1, 1-row",
     test_adaptive_structures},
    {"precision=mixed: host layouts within the float-values bound; refusals", test_mixed_precision},
    {"precision option: values, named backend, names", test_precision_option},
    {"precision=float: host layouts are the float-valued ones; refusals", test_float_precision},
    {"precision=float: the derived bound holds for float sums and catches a dropped entry",
     test_float_bound},
    CU_TEST_INFO_NULL};
  return gs_test_main("formats_host", tests, 0);
}
