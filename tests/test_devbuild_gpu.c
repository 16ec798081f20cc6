/* tests/test_devbuild_gpu.c: the ELL, HYB, COO (spmv/bg_devbuild.cu) and DIA (spmv/dia_kernels.cu)
 * device builds against the host builders, byte for byte: every slot of the ELL slab (any K:
 * the longest row, HYB's rule, widths below and above the 32-slot pieces), every COO entry with
 * rows_touched and cols_touched (whole matrix and row tails), the whole matrix's COO borrowing
 * the shared CSR's columns and values (freeing it leaves them; the touch counts given by the
 * features or counted), DIA's offsets, values and slots in
 * range, in double and rounded to float. The cases aim at the paths of the row tiles
 * (spmv/csr_tile.cuh): a tile's entry range exactly at and one past the flat capacity (32 rows
 * of 32), one row of 3000 and of 100k entries (pieces, a window refilled many times), runs of
 * empty rows, 1 row, 1x1, m not a multiple of 32, 2^16+ columns, 90 diagonals (DIA windows
 * refilled), no entries; the entry-to-row map of COO and DIA's marks across chunk boundaries
 * (rows of 1024 +- 1 entries). Refusals (fill) match, and a failed allocation at any step
 * leaks nothing. The conformance suite compares the products of both builds besides.
 * Exits 77 without a device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/testhooks.h"
#include "spmv/bg_devbuild.h"
#include "spmv/dia_devbuild.h"
#include "tests/testutil.h"

static gs_context_t *ctx;

/* Index of the first differing element of two arrays of n elements of `size` bytes, or -1. */
static long long first_diff(const void *a, const void *b, size_t n, size_t size)
{
  if (n == 0 || memcmp(a, b, n * size) == 0) return -1;
  const unsigned char *x = a, *y = b;
  for (size_t i = 0; i < n; ++i)
    if (memcmp(x + i * size, y + i * size, size) != 0) return (long long)i;
  return -1;
}

/* A device array of n elements downloaded and compared with the host's. */
static int same_array(const void *d, const void *h, size_t n, size_t size, const char *what,
                      const char *label)
{
  if (n == 0) return 1;
  void *t = malloc(n * size);
  CU_ASSERT_FATAL(t != NULL);
  CU_ASSERT_FATAL(gs_copy_to_host(ctx, t, d, n * size) == GS_SUCCESS);
  const long long i = first_diff(t, h, n, size);
  free(t);
  if (i >= 0) fprintf(stderr, "  %s: device %s[%lld] differs from the host's\n", label, what, i);
  CU_ASSERT(i < 0);
  return i < 0;
}

static gs_idx_t longest(const gs_csr_t *H)
{
  gs_idx_t k = 0;
  for (gs_idx_t i = 0; i < H->m; ++i)
    if (H->row_ptr[i + 1] - H->row_ptr[i] > k) k = (gs_idx_t)(H->row_ptr[i + 1] - H->row_ptr[i]);
  return k;
}

static void check_ell(const gs_dcsr_t *C, const gs_csr_t *H, gs_idx_t K, int fv, const char *label)
{
  char lab[200];
  snprintf(lab, sizeof lab, "%s ell K=%d %s", label, (int)K, fv ? "float" : "double");
  gs_ell_layout_t *L = NULL;
  gs_ell_dev_t D;
  CU_ASSERT_FATAL(gs_ell_layout_build_k(&L, H, K) == GS_SUCCESS);
  if (fv) CU_ASSERT_FATAL(gs_ell_layout_round(L) == GS_SUCCESS);
  gs_status_t st = gs_bg_ell_build(ctx, C, K, fv, &D);
  if (st != GS_SUCCESS) fprintf(stderr, "  %s: %s\n", lab, gs_last_error());
  CU_ASSERT_FATAL(st == GS_SUCCESS);
  CU_ASSERT_EQUAL(D.pitch, L->pitch);
  CU_ASSERT_EQUAL(D.K, L->K);
  const size_t slots = (size_t)L->pitch * (size_t)K;
  same_array(D.d_col, L->col, slots, sizeof *L->col, "col", lab);
  if (L->valf) {
    CU_ASSERT_PTR_NOT_NULL(D.d_valf);
    if (D.d_valf) same_array(D.d_valf, L->valf, slots, sizeof *L->valf, "valf", lab);
  } else if (slots > 0) {
    CU_ASSERT_PTR_NOT_NULL(D.d_val);
    if (D.d_val) same_array(D.d_val, L->val, slots, sizeof *L->val, "val", lab);
  }
  gs_ell_dev_free(&D);
  gs_ell_layout_destroy(&L);
}

/* The COO build of H's entries from `skip` on against the host builder. skip = 0 is the whole
 * matrix on the shared CSR: its columns (and double values) must be the CSR's own arrays,
 * borrowed (their contents still compared with the host's), and freeing the layout must give
 * back only what it allocated and leave the shared arrays intact. touched >= 0 (skip = 0):
 * the counts given (gs_bg_coo_build_shared, as the coo backend passes the features' count),
 * else counted on the device. */
static void check_coo(const gs_dcsr_t *C, const gs_csr_t *H, gs_idx_t skip, gs_idx_t max_len,
                      gs_idx_t touched, int fv, const char *label)
{
  char lab[200];
  snprintf(lab, sizeof lab, "%s coo skip=%d%s %s", label, (int)skip,
           touched >= 0 ? " (touch counts given)" : "", fv ? "float" : "double");
  gs_coo_layout_t *L = NULL;
  gs_coo_dev_t D;
  const size_t before = gs_device_bytes_in_use(ctx);
  CU_ASSERT_FATAL(gs_coo_layout_build_tail(&L, H, skip) == GS_SUCCESS);
  if (fv) CU_ASSERT_FATAL(gs_coo_layout_round(L) == GS_SUCCESS);
  gs_status_t st = skip == 0 && touched >= 0 ? gs_bg_coo_build_shared(ctx, C, touched, fv, &D)
                                             : gs_bg_coo_build(ctx, C, skip, max_len, fv, &D);
  if (st != GS_SUCCESS) fprintf(stderr, "  %s: %s\n", lab, gs_last_error());
  CU_ASSERT_FATAL(st == GS_SUCCESS);
  CU_ASSERT_EQUAL(D.nnz, L->nnz);
  CU_ASSERT_EQUAL(D.rows_touched, L->rows_touched);
  CU_ASSERT_EQUAL(D.cols_touched, L->cols_touched);
  if (D.nnz != L->nnz || D.rows_touched != L->rows_touched || D.cols_touched != L->cols_touched)
    fprintf(stderr, "  %s: nnz %d/%d rows touched %d/%d columns touched %d/%d (device/host)\n",
            lab, (int)D.nnz, (int)L->nnz, (int)D.rows_touched, (int)L->rows_touched,
            (int)D.cols_touched, (int)L->cols_touched);
  if (skip == 0) { /* on the shared CSR: col borrowed, val too unless rounded */
    CU_ASSERT(D.borrowed);
    CU_ASSERT_PTR_EQUAL(D.d_col, C->d_col);
    if (L->valf) {
      CU_ASSERT_PTR_NULL(D.d_val);
    } else {
      CU_ASSERT_PTR_EQUAL(D.d_val, C->d_val);
    }
  } else {
    CU_ASSERT(!D.borrowed); /* HYB's tail: arrays of its own */
  }
  if (D.nnz == L->nnz) {
    same_array(D.d_row, L->row, (size_t)L->nnz, sizeof *L->row, "row", lab);
    same_array(D.d_col, L->col, (size_t)L->nnz, sizeof *L->col, "col", lab);
    if (L->valf) same_array(D.d_valf, L->valf, (size_t)L->nnz, sizeof *L->valf, "valf", lab);
    else same_array(D.d_val, L->val, (size_t)L->nnz, sizeof *L->val, "val", lab);
  }
  gs_coo_dev_free(&D);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), before); /* what it took, not the shared CSR */
  if (skip == 0) { /* the borrowed arrays are the matrix's still */
    same_array(C->d_col, H->col, (size_t)H->nnz, sizeof *H->col, "shared CSR col after free",
               lab);
    same_array(C->d_val, H->val, (size_t)H->nnz, sizeof *H->val, "shared CSR val after free",
               lab);
  }
  gs_coo_layout_destroy(&L);
}

static void check_dia(gs_matrix_t *A, const gs_csr_t *H, double max_fill, int fv,
                      const char *label)
{
  char lab[200];
  snprintf(lab, sizeof lab, "%s dia %s", label, fv ? "float" : "double");
  gs_dia_layout_t *Lh = NULL, *Ld = NULL;
  gs_status_t sh = gs_dia_layout_build(&Lh, H, max_fill);
  gs_status_t sd = gs_dia_device_layout(ctx, A, max_fill, fv, &Ld);
  CU_ASSERT_EQUAL(sd, sh); /* both build, or both refuse */
  if (sd != sh) fprintf(stderr, "  %s: device %d, host %d (%s)\n", lab, (int)sd, (int)sh,
                        gs_last_error());
  if (sd == GS_SUCCESS && sh == GS_SUCCESS) {
    if (fv) CU_ASSERT_FATAL(gs_dia_layout_round(Lh) == GS_SUCCESS);
    CU_ASSERT_EQUAL(Ld->pitch, Lh->pitch);
    CU_ASSERT_EQUAL(Ld->slots_in_range, Lh->slots_in_range);
    CU_ASSERT_EQUAL_FATAL(Ld->ndiag, Lh->ndiag);
    const size_t nval = (size_t)Lh->pitch * (size_t)Lh->ndiag;
    long long i = first_diff(Ld->offsets, Lh->offsets, (size_t)Lh->ndiag, sizeof *Lh->offsets);
    if (i >= 0) fprintf(stderr, "  %s: offsets[%lld] differs\n", lab, i);
    CU_ASSERT(i < 0);
    if (fv) {
      CU_ASSERT_FATAL(nval == 0 || (Ld->valf && Lh->valf));
      i = first_diff(Ld->valf, Lh->valf, nval, sizeof *Lh->valf);
    } else {
      CU_ASSERT_FATAL(nval == 0 || (Ld->val && Lh->val));
      i = first_diff(Ld->val, Lh->val, nval, sizeof *Lh->val);
    }
    if (i >= 0)
      fprintf(stderr, "  %s: value of diagonal %lld, row %lld differs\n", lab,
              i / (long long)Lh->pitch, i % (long long)Lh->pitch);
    CU_ASSERT(i < 0);
  }
  gs_dia_layout_destroy(&Lh);
  gs_dia_layout_destroy(&Ld);
}

/* Every device build of H against its host builder. dia_fill: DIA's max_fill (0: not built). */
static void check_all(gs_csr_t *H, double dia_fill, const char *label)
{
  gs_matrix_t *A = NULL;
  gs_dcsr_t C;
  const size_t base = gs_device_bytes_in_use(ctx);
  CU_ASSERT_FATAL(gs_matrix_create(&A, ctx, H) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_matrix_device_csr(A, &C) == GS_SUCCESS);
  const gs_idx_t maxlen = longest(H);
  gs_idx_t K = -1, ml = -1, Kh = -1;
  CU_ASSERT(gs_bg_longest_row(ctx, &C, &K) == GS_SUCCESS);
  CU_ASSERT_EQUAL(K, maxlen);
  CU_ASSERT(gs_bg_hyb_width(ctx, &C, -1, &Kh, &ml) == GS_SUCCESS);
  CU_ASSERT_EQUAL(ml, maxlen);
  CU_ASSERT_EQUAL(Kh, gs_hyb_choose_k(H));
  const gs_idx_t widths[] = {maxlen, Kh, 1, 5, 27, 32, 33, 64};
  for (int fv = 0; fv < 2; ++fv) {
    for (size_t w = 0; w < sizeof widths / sizeof *widths; ++w) {
      const gs_idx_t k = widths[w];
      if (k < 0 || k > maxlen || (w > 0 && k == maxlen)) continue;
      if ((double)gs_fmt_pitch(H->m) * (double)k > 6e7) continue; /* keep the slab small */
      check_ell(&C, H, k, fv, label);
    }
    const gs_idx_t skips[] = {0, 1, 3, Kh, maxlen};
    for (size_t s = 0; s < sizeof skips / sizeof *skips; ++s) {
      if (skips[s] < 0 || (s > 0 && skips[s] == 0)) continue;
      check_coo(&C, H, skips[s], s % 2 ? maxlen : -1, -1, fv, label); /* max_len known or not */
    }
    /* the coo backend's path: the touch counts from the features when they tell them */
    const gs_idx_t touched = gs_coo_touched_from_features(gs_matrix_features(A), C.m, C.n, C.nnz);
    if (touched >= 0) check_coo(&C, H, 0, -1, touched, fv, label);
    if (dia_fill > 0) check_dia(A, H, dia_fill, fv, label);
  }
  gs_matrix_destroy(&A);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
}

/* CSR of m x n from a COO filled by `fill` (duplicates summed by gs_coo_to_csr). */
typedef void (*fill_fn)(gs_coo_t *C, gs_idx_t m, gs_idx_t n, uint64_t *s);
static gs_csr_t *build(gs_idx_t m, gs_idx_t n, fill_fn fill, uint64_t *s)
{
  gs_coo_t *C = NULL;
  gs_csr_t *H = NULL;
  CU_ASSERT_FATAL(gs_coo_create(&C, m, n, 1024) == GS_SUCCESS);
  fill(C, m, n, s);
  CU_ASSERT_FATAL(gs_coo_to_csr(&H, C) == GS_SUCCESS);
  gs_coo_destroy(&C);
  return H;
}

static double value(uint64_t *s) { return 2.0 * gs_test_uniform(s) - 1.0; }
static gs_idx_t pick(uint64_t *s, gs_idx_t n) { return (gs_idx_t)(gs_test_uniform(s) * n); }

/* Tile 0: 32 rows of 32 (its range exactly the flat capacity, 1024); tile 1: one entry more;
 * row 100: 3000 entries; rows 130.. : every other one empty. */
static void fill_tiles(gs_coo_t *C, gs_idx_t m, gs_idx_t n, uint64_t *s)
{
  for (gs_idx_t i = 0; i < 64; ++i)
    for (gs_idx_t k = 0; k < 32 + (i == 63); ++k) gs_coo_push(C, i, k * 7 + i, value(s));
  for (gs_idx_t k = 0; k < 3000; ++k) gs_coo_push(C, 100, k, value(s));
  for (gs_idx_t i = 130; i < m; i += 2)
    for (int k = 0; k < 1 + (int)(gs_test_uniform(s) * 6); ++k) gs_coo_push(C, i, pick(s, n), value(s));
}

/* Row lengths 1..64 in a sawtooth, 2^16+ columns at random. */
static void fill_sawtooth(gs_coo_t *C, gs_idx_t m, gs_idx_t n, uint64_t *s)
{
  for (gs_idx_t i = 0; i < m; ++i)
    for (gs_idx_t k = 0; k <= i % 64; ++k) gs_coo_push(C, i, pick(s, n), value(s));
}

/* 90 diagonals (offsets -40..49, those past 20 shifted by 7), a tenth of the entries missing:
 * rows of up to 90 entries, DIA's windows of 32 refilled twice. */
static void fill_band(gs_coo_t *C, gs_idx_t m, gs_idx_t n, uint64_t *s)
{
  for (gs_idx_t i = 0; i < m; ++i)
    for (int d = -40; d < 50; ++d) {
      const gs_idx_t j = i + d + (d > 20 ? 7 : 0);
      if (j >= 0 && j < n && gs_test_uniform(s) >= 0.1) gs_coo_push(C, i, j, value(s));
    }
}

/* Rows of 1023, 1024 and 1025 entries and one of 100k, among short rows and runs of empty rows:
 * the chunks of the entry-to-row map start inside, at and past row ends. */
static void fill_chunks(gs_coo_t *C, gs_idx_t m, gs_idx_t n, uint64_t *s)
{
  const gs_idx_t lens[] = {1023, 1024, 1025, 0, 0, 0, 100000, 0, 1, 1024};
  for (gs_idx_t i = 0; i < m; ++i) {
    gs_idx_t len = i < 10 ? lens[i] : (i % 500 < 300 ? 0 : 1 + (i % 7));
    for (gs_idx_t k = 0; k < len; ++k) gs_coo_push(C, i, (k * 13 + i) % n, value(s));
  }
}

static void test_tile_boundaries(void)
{
  uint64_t s = gs_test_seed() ^ 0xe1b;
  gs_csr_t *H = build(300, 5000, fill_tiles, &s);
  check_all(H, 1e9, "tiles at 1024 and 1025 entries, a row of 3000, empty rows");
  gs_csr_destroy(&H);
}

static void test_sawtooth_wide(void)
{
  uint64_t s = gs_test_seed() ^ 0xe2b;
  gs_csr_t *H = build(997, 70000, fill_sawtooth, &s);
  check_all(H, 0, "sawtooth 1..64, 70000 columns");
  gs_csr_destroy(&H);
}

static void test_band(void)
{
  uint64_t s = gs_test_seed() ^ 0xe3b;
  gs_csr_t *H = build(700, 760, fill_band, &s);
  check_all(H, 3.0, "90 diagonals");
  gs_csr_destroy(&H);
}

static void test_chunks(void)
{
  uint64_t s = gs_test_seed() ^ 0xe4b;
  gs_csr_t *H = build(20000, 131072, fill_chunks, &s);
  check_all(H, 0, "rows of 1023..1025 and 100k entries, empty-row runs");
  gs_csr_destroy(&H);
}

static void test_laplacians(void)
{
  const int st[][4] = {{24, 24, 24, 27}, {33, 31, 1, 5}, {1000, 1, 1, 3}};
  for (int k = 0; k < 3; ++k) {
    gs_csr_t *H = NULL;
    char lab[64];
    CU_ASSERT_FATAL(gs_gen_laplace(&H, st[k][0], st[k][1], st[k][2], st[k][3]) == GS_SUCCESS);
    snprintf(lab, sizeof lab, "Laplacian %dx%dx%d, %d points", st[k][0], st[k][1], st[k][2],
             st[k][3]);
    check_all(H, 3.0, lab);
    gs_csr_destroy(&H);
  }
}

static void test_random(void)
{
  uint64_t s = gs_test_seed() ^ 0xe5b;
  const int shapes[][2] = {{1, 1}, {1, 9}, {31, 7}, {33, 100}, {64, 64}, {1000, 300}, {4500, 70000}};
  for (int k = 0; k < 7; ++k) {
    double density = 0.02 + 0.2 * gs_test_uniform(&s);
    if (density * shapes[k][1] > 60.0) density = 60.0 / shapes[k][1]; /* rows of ~60 at most */
    gs_csr_t *H = gs_test_random_csr(&s, shapes[k][0], shapes[k][1], density);
    char lab[64];
    snprintf(lab, sizeof lab, "random %dx%d", shapes[k][0], shapes[k][1]);
    check_all(H, shapes[k][1] < 1000 ? 1e9 : 0, lab);
    gs_csr_destroy(&H);
  }
}

/* Shapes without entries or rows: nothing read, empty layouts, same as the host's. */
static void test_empty(void)
{
  const double zero[4] = {0, 0, 0, 0};
  const double one[1] = {2.5};
  gs_csr_t *H = gs_test_csr_from_dense(2, 2, zero);
  check_all(H, 3.0, "2x2 of zeros");
  gs_csr_destroy(&H);
  H = gs_test_csr_from_dense(1, 1, one);
  check_all(H, 3.0, "1x1");
  gs_csr_destroy(&H);
}

/* DIA's fill guard: both builds refuse the long row (3000 diagonals for 5288 entries). */
static void test_dia_refusal(void)
{
  uint64_t s = gs_test_seed() ^ 0xe6b;
  gs_csr_t *H = build(300, 5000, fill_tiles, &s);
  gs_matrix_t *A = NULL;
  gs_dia_layout_t *L = NULL;
  const size_t base = gs_device_bytes_in_use(ctx);
  CU_ASSERT_FATAL(gs_matrix_create(&A, ctx, H) == GS_SUCCESS);
  CU_ASSERT(gs_dia_layout_build(&L, H, 3.0) == GS_ERR_FORMAT_FILL);
  CU_ASSERT(gs_dia_device_layout(ctx, A, 3.0, 0, &L) == GS_ERR_FORMAT_FILL);
  CU_ASSERT_PTR_NULL(L);
  CU_ASSERT(strstr(gs_last_error(), "diagonals") != NULL);
  gs_matrix_destroy(&A);
  CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
  gs_csr_destroy(&H);
}

/* Allocation k of a build fails, k = 1, 2, ...: GS_ERR_DEVICE_MEMORY and nothing left. */
static void test_allocation_failures(void)
{
  uint64_t s = gs_test_seed() ^ 0xe7b;
  gs_csr_t *H = build(700, 760, fill_band, &s);
  gs_matrix_t *A = NULL;
  gs_dcsr_t C;
  CU_ASSERT_FATAL(gs_matrix_create(&A, ctx, H) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_matrix_device_csr(A, &C) == GS_SUCCESS);
  const gs_idx_t K = longest(H);
  for (int which = 0; which < 5; ++which) {
    for (long k = 1; k < 32; ++k) {
      const size_t base = gs_device_bytes_in_use(ctx);
      gs_ell_dev_t E;
      gs_coo_dev_t O;
      gs_dia_layout_t *L = NULL;
      gs_status_t st;
      gs_test_dmalloc_fail_after(ctx, k);
      if (which == 0) st = gs_bg_ell_build(ctx, &C, K, 0, &E);
      else if (which == 1) st = gs_bg_coo_build(ctx, &C, 0, -1, 1, &O);
      else if (which == 2) st = gs_bg_coo_build(ctx, &C, 20, K, 0, &O);
      else if (which == 3) /* a count given (any): the path that reads no columns */
        st = gs_bg_coo_build_shared(ctx, &C, 1, 0, &O);
      else st = gs_dia_device_layout(ctx, A, 3.0, 0, &L);
      gs_test_dmalloc_fail_after(ctx, 0);
      if (st == GS_SUCCESS) {
        if (which == 0) gs_ell_dev_free(&E);
        else if (which < 4) gs_coo_dev_free(&O);
        else gs_dia_layout_destroy(&L);
      } else {
        CU_ASSERT_EQUAL(st, GS_ERR_DEVICE_MEMORY);
        CU_ASSERT_PTR_NULL(L);
      }
      /* never below base either: a failed COO build on the shared CSR leaves its arrays */
      CU_ASSERT_EQUAL(gs_device_bytes_in_use(ctx), base);
      if (st == GS_SUCCESS) {
        CU_ASSERT(k > 1); /* every build allocates */
        break;
      }
    }
  }
  /* the shared CSR survived every failed borrowing build */
  same_array(C.d_col, H->col, (size_t)H->nnz, sizeof *H->col, "col", "after the failures");
  same_array(C.d_val, H->val, (size_t)H->nnz, sizeof *H->val, "val", "after the failures");
  gs_matrix_destroy(&A);
  gs_csr_destroy(&H);
}

int main(void)
{
  if (gs_device_count() > 0 && gs_context_create(&ctx, 0) != GS_SUCCESS) {
    fprintf(stderr, "context: %s\n", gs_last_error());
    return 1;
  }
  CU_TestInfo tests[] = {
      {"tile ranges at and past the flat capacity, a long row, empty rows", test_tile_boundaries},
      {"row lengths 1..64, 70000 columns", test_sawtooth_wide},
      {"90 diagonals: DIA windows refilled", test_band},
      {"entry-to-row chunks: rows of 1023..1025 and 100k entries", test_chunks},
      {"Laplacians (27, 5 and 3 points)", test_laplacians},
      {"random matrices, 1x1 to 4500x70000", test_random},
      {"no entries; 1x1", test_empty},
      {"DIA refuses the same fill", test_dia_refusal},
      {"allocation failures", test_allocation_failures},
      CU_TEST_INFO_NULL};
  int rc = gs_test_main("devbuild_gpu", tests, 1);
  gs_context_destroy(&ctx);
  return rc;
}
