/* tests/test_mm.c: Matrix Market reading and writing: symmetric and skew expansion, pattern and
 * integer fields, arrays and vectors, .gz input and output, bit-exact round trips of the real
 * matrices and of random ones, the nonzero counts of the manifest, the malformed corpus in
 * tests/data/bad (one exact message per file), I/O failures, the number parser, and hostile
 * input: the memory budget, the line bound, both triangles, summed duplicates, integer range. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef GS_HAVE_ZLIB /* tests/CMakeLists.txt defines it when the library is built with zlib */
#include <zlib.h>
#endif

#include "io/mm_internal.h"
#include "tests/testutil.h"

/* ---- helpers -------------------------------------------------------------------------------- */

static char g_dir[256];

static void remove_dir(void)
{
  if (!g_dir[0]) return;
  DIR *d = opendir(g_dir);
  if (d) {
    struct dirent *e;
    char p[600];
    while ((e = readdir(d)) != NULL) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      snprintf(p, sizeof p, "%s/%s", g_dir, e->d_name);
      unlink(p);
    }
    closedir(d);
  }
  rmdir(g_dir);
}

/* A path in this run's scratch directory (static buffer). */
static const char *tmp_path(const char *name)
{
  static char buf[600];
  if (!g_dir[0]) {
    snprintf(g_dir, sizeof g_dir, "/tmp/gs_test_mm_XXXXXX");
    if (!mkdtemp(g_dir)) {
      g_dir[0] = '\0';
      return "/nonexistent/gs_test_mm";
    }
    atexit(remove_dir);
  }
  snprintf(buf, sizeof buf, "%s/%s", g_dir, name);
  return buf;
}

/* Files in the scratch directory (to check that nothing partial was left behind). */
static int count_files(void)
{
  int n = 0;
  DIR *d = opendir(g_dir);
  if (!d) return -1;
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) ++n;
  closedir(d);
  return n;
}

static const char *data(const char *rel)
{
  static char buf[4096];
  snprintf(buf, sizeof buf, "%s", gs_test_data(rel));
  return buf;
}

/* Bit-for-bit equality of two CSRs (structure and the bytes of every value). */
static int csr_identical(const gs_csr_t *A, const gs_csr_t *B)
{
  if (!A || !B || A->m != B->m || A->n != B->n || A->nnz != B->nnz) return 0;
  if (memcmp(A->row_ptr, B->row_ptr, ((size_t)A->m + 1) * sizeof *A->row_ptr) != 0) return 0;
  if (A->nnz == 0) return 1;
  return memcmp(A->col, B->col, (size_t)A->nnz * sizeof *A->col) == 0 &&
         memcmp(A->val, B->val, (size_t)A->nnz * sizeof *A->val) == 0;
}

/* Checks A (m x n, nnz stored entries) against a row-major dense array, exactly. */
static void expect_dense(const gs_csr_t *A, int m, int n, int nnz, const double *dense)
{
  CU_ASSERT_FATAL(A != NULL);
  CU_ASSERT_EQUAL_FATAL(A->m, m);
  CU_ASSERT_EQUAL_FATAL(A->n, n);
  CU_ASSERT_EQUAL(A->nnz, nnz);
  CU_ASSERT(gs_csr_validate(A) == GS_SUCCESS);
  double *d = calloc((size_t)m * (size_t)n + 1, sizeof *d);
  CU_ASSERT_FATAL(d != NULL);
  for (int i = 0; i < m; ++i)
    for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) d[i * n + A->col[p]] += A->val[p];
  for (int k = 0; k < m * n; ++k)
    if (d[k] != dense[k]) {
      printf("\n  (%d, %d): %.17g, expected %.17g\n", k / n, k % n, d[k], dense[k]);
      CU_FAIL("entry differs from the hand-expanded matrix");
    }
  free(d);
}

static gs_csr_t *read_csr_ok(const char *path)
{
  gs_csr_t *A = NULL;
  gs_status_t st = gs_mm_read_csr(path, &A);
  if (st != GS_SUCCESS) printf("\n  %s: %s\n", path, gs_last_error());
  CU_ASSERT_EQUAL(st, GS_SUCCESS);
  return A;
}

/* Whether A holds entry (i, j) explicitly. */
static int has_entry(const gs_csr_t *A, int i, int j)
{
  for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p)
    if (A->col[p] == j) return 1;
  return 0;
}

static char *read_whole(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *b = malloc(cap);
  size_t r;
  while (b && (r = fread(b + n, 1, cap - n, f)) > 0) {
    n += r;
    if (n == cap) {
      char *nb = realloc(b, cap *= 2);
      if (!nb) free(b);
      b = nb;
    }
  }
  fclose(f);
  *len = n;
  return b;
}

#ifdef GS_HAVE_ZLIB
static int gzip_file(const char *path, const char *text, size_t len)
{
  gzFile g = gzopen(path, "wb");
  if (!g) return -1;
  int w = gzwrite(g, text, (unsigned)len);
  return (gzclose(g) == Z_OK && w == (int)len) ? 0 : -1;
}
#endif

/* ---- fields and symmetries ------------------------------------------------------------------ */

static void test_symmetric_expansion(void)
{
  const double dense[] = {4, -1, 0, 0.5, -1, 4, -1.5, 0, 0, -1.5, 0, 0, 0.5, 0, 0, 2};
  gs_coo_t *C = NULL;
  CU_ASSERT_FATAL(gs_mm_read_coo(data("ok/sym_lower.mtx"), &C) == GS_SUCCESS);
  CU_ASSERT_EQUAL(C->symmetry, GS_SYM_SYMMETRIC);
  CU_ASSERT_EQUAL(C->nnz, 9); /* 6 stored, 3 of them off the diagonal */
  CU_ASSERT(C->cap >= C->nnz);
  gs_coo_destroy(&C);
  gs_csr_t *L = read_csr_ok(data("ok/sym_lower.mtx"));
  gs_csr_t *U = read_csr_ok(data("ok/sym_upper.mtx"));
  expect_dense(L, 4, 4, 9, dense);
  CU_ASSERT_EQUAL(L->symmetry, GS_SYM_SYMMETRIC);
  CU_ASSERT(csr_identical(L, U)); /* either triangle gives the same matrix */
  gs_csr_destroy(&L);
  gs_csr_destroy(&U);
}

static void test_skew_expansion(void)
{
  const double dense[] = {0, -1.5, 2, 1.5, 0, 0, -2, 0, 0};
  gs_csr_t *A = read_csr_ok(data("ok/skew.mtx"));
  expect_dense(A, 3, 3, 5, dense); /* the explicit zero (3,3) is kept */
  CU_ASSERT(has_entry(A, 2, 2));
  CU_ASSERT_EQUAL(A->symmetry, GS_SYM_SKEW);
  gs_csr_destroy(&A);
}

static void test_pattern_reads_ones(void)
{
  const double dense[] = {1, 0, 0, 1, 0, 1, 0, 0, 1, 0, 0, 0};
  gs_csr_t *A = read_csr_ok(data("ok/pattern.mtx"));
  expect_dense(A, 3, 4, 4, dense);
  gs_csr_destroy(&A);
  const double dsym[] = {0, 1, 0, 1, 0, 1, 0, 1, 1};
  A = read_csr_ok(data("ok/pattern_sym.mtx"));
  expect_dense(A, 3, 3, 5, dsym);
  CU_ASSERT_EQUAL(A->symmetry, GS_SYM_SYMMETRIC);
  gs_csr_destroy(&A);
}

static void test_integer_field(void)
{
  const double dense[] = {7, 3, 0, 0, 0, -12};
  gs_csr_t *A = read_csr_ok(data("ok/integer.mtx"));
  expect_dense(A, 2, 3, 3, dense);
  gs_csr_destroy(&A);
}

static void test_duplicates_summed_zeros_kept(void)
{
  gs_coo_t *C = NULL;
  CU_ASSERT_FATAL(gs_mm_read_coo(data("ok/duplicates.mtx"), &C) == GS_SUCCESS);
  CU_ASSERT_EQUAL(C->nnz, 6); /* the COO keeps every entry as stored */
  gs_coo_destroy(&C);
  const double dense[] = {3.5, 0, 0, 0, 0, 0, 0, 0, 0};
  gs_csr_t *A = read_csr_ok(data("ok/duplicates.mtx"));
  expect_dense(A, 3, 3, 4, dense);
  CU_ASSERT(has_entry(A, 1, 1)); /* explicit zeros */
  CU_ASSERT(has_entry(A, 1, 2));
  CU_ASSERT(has_entry(A, 2, 0)); /* -1 + 1: a summed zero stays an entry */
  gs_csr_destroy(&A);
}

static void test_layout_leniency(void)
{
  /* Mixed-case banner, CRLF, tabs, comments and blank lines before the size line and between
   * entries, no newline at the end. */
  const double dense[] = {1.5, 0, -2.5, 0.25};
  gs_csr_t *A = read_csr_ok(data("ok/layout.mtx"));
  expect_dense(A, 2, 2, 3, dense);
  gs_csr_destroy(&A);
}

static void test_number_syntax(void)
{
  const char *tok[] = {"1e-400", "4.9406564584124654e-324", "+2.5", "-.5", "5.", "1E+2", "-0",
                       "12345678901234567890123"};
  gs_coo_t *C = NULL;
  CU_ASSERT_FATAL(gs_mm_read_coo(data("ok/values.mtx"), &C) == GS_SUCCESS);
  CU_ASSERT_EQUAL_FATAL(C->nnz, 8);
  for (int k = 0; k < 8; ++k) {
    double want = strtod(tok[k], NULL);
    CU_ASSERT(memcmp(&C->val[k], &want, sizeof want) == 0);
  }
  CU_ASSERT(C->val[1] == 0x1p-1074);
  CU_ASSERT(signbit(C->val[6]) && C->val[6] == 0.0);
  gs_coo_destroy(&C);
}

static void test_array_matrices(void)
{
  const double dg[] = {1, 4, 2, 0, 3, 6};
  gs_coo_t *C = NULL;
  CU_ASSERT_FATAL(gs_mm_read_coo(data("ok/array.mtx"), &C) == GS_SUCCESS);
  CU_ASSERT_EQUAL(C->nnz, 6); /* dense: every value, zeros included */
  gs_coo_destroy(&C);
  gs_csr_t *A = read_csr_ok(data("ok/array.mtx"));
  expect_dense(A, 3, 2, 6, dg);
  gs_csr_destroy(&A);
  const double ds[] = {1, 2, 3, 2, 4, 5, 3, 5, 6};
  A = read_csr_ok(data("ok/array_sym.mtx"));
  expect_dense(A, 3, 3, 9, ds);
  gs_csr_destroy(&A);
  const double dk[] = {0, -1, -2, 1, 0, -3, 2, 3, 0};
  A = read_csr_ok(data("ok/array_skew.mtx"));
  expect_dense(A, 3, 3, 6, dk);
  gs_csr_destroy(&A);
}

static void test_empty_matrices(void)
{
  const char *names[] = {"ok/empty_3x3.mtx", "ok/empty_0x0.mtx"};
  for (int k = 0; k < 2; ++k) {
    gs_csr_t *A = read_csr_ok(data(names[k])), *B = NULL;
    CU_ASSERT_FATAL(A != NULL);
    CU_ASSERT_EQUAL(A->nnz, 0);
    CU_ASSERT_EQUAL(A->m, k == 0 ? 3 : 0);
    CU_ASSERT(gs_mm_write_csr(tmp_path("empty.mtx"), A) == GS_SUCCESS);
    B = read_csr_ok(tmp_path("empty.mtx"));
    CU_ASSERT(csr_identical(A, B));
    gs_csr_destroy(&A);
    gs_csr_destroy(&B);
  }
}

/* Lines of the longest length taken (1 MiB), entries across block boundaries, the line number of
 * a fault far into the file, and a line one byte too long refused at its line. */
static void test_long_lines_and_blocks(void)
{
  const size_t comment = GS_MM_LINE_MAX - 1, entries = gs_test_quick() ? 50000 : 200000;
  size_t cap = 2 * comment + entries * 24 + 256, n = 0;
  char *t = malloc(cap);
  CU_ASSERT_FATAL(t != NULL);
  n += (size_t)snprintf(t, cap, "%%%%MatrixMarket matrix coordinate integer general\n%%");
  memset(t + n, 'x', comment);
  n += comment;
  n += (size_t)snprintf(t + n, cap - n, "\n\n1000 1000 %zu\n", entries);
  long line = 4; /* the size line */
  double sum = 0;
  for (size_t k = 0; k < entries; ++k) {
    if (k == entries / 2) { /* a long comment among the entries */
      t[n++] = '%';
      memset(t + n, 'y', comment / 2);
      n += comment / 2;
      t[n++] = '\n';
      ++line;
    }
    int v = (int)(k % 1999) - 999;
    n += (size_t)snprintf(t + n, cap - n, "%zu %zu %d\n", 1 + k % 1000, 1 + (k * 7) % 1000, v);
    sum += v;
    ++line;
  }
  const char *path = tmp_path("long.mtx");
  FILE *f = fopen(path, "wb");
  CU_ASSERT_FATAL(f != NULL);
  CU_ASSERT(fwrite(t, 1, n, f) == n);
  CU_ASSERT(fclose(f) == 0);
  gs_coo_t *C = NULL;
  gs_status_t st = gs_mm_read_coo(path, &C);
  if (st != GS_SUCCESS) printf("\n  %s\n", gs_last_error());
  CU_ASSERT_FATAL(st == GS_SUCCESS);
  CU_ASSERT_EQUAL(C->nnz, (int64_t)entries);
  double got = 0;
  for (int64_t k = 0; k < C->nnz; ++k) got += C->val[k];
  CU_ASSERT(got == sum);
  CU_ASSERT(C->row[entries - 1] == (gs_idx_t)((entries - 1) % 1000));
  gs_coo_destroy(&C);

  /* the same file with the last value spoilt: the message names its line */
  t[n - 2] = 'z';
  f = fopen(path, "wb");
  CU_ASSERT_FATAL(f != NULL);
  CU_ASSERT(fwrite(t, 1, n, f) == n);
  CU_ASSERT(fclose(f) == 0);
  char want[900], tok[32];
  const char *last = t + n - 2;
  while (last[-1] != ' ') --last;
  snprintf(tok, sizeof tok, "%.*s", (int)(t + n - 1 - last), last);
  snprintf(want, sizeof want, "%s:%ld: value '%s' is not a number", path, line, tok);
  CU_ASSERT_EQUAL(gs_mm_read_coo(path, &C), GS_ERR_PARSE);
  if (strcmp(gs_last_error(), want) != 0) printf("\n  got %s\n  want %s\n", gs_last_error(), want);
  CU_ASSERT_STRING_EQUAL(gs_last_error(), want);

  /* the comment among the entries one byte over 1 MiB: refused at its line, before the spoilt
   * value after it, by the serial reader (its buffer), the parallel one and from memory */
  const char *mid = NULL; /* the second one, of 'y's */
  for (size_t k = 0; k + 1 < n && !mid; ++k)
    if (t[k] == '%' && t[k + 1] == 'y') mid = t + k;
  CU_ASSERT_FATAL(mid != NULL);
  size_t at = (size_t)(mid - t), ml = (size_t)((const char *)memchr(mid, '\n', n - at) - mid);
  CU_ASSERT_EQUAL(ml, comment / 2 + 1);
  long mline = 1;
  for (size_t k = 0; k < at; ++k) mline += t[k] == '\n';
  char *u = malloc(n + GS_MM_LINE_MAX);
  CU_ASSERT_FATAL(u != NULL);
  memcpy(u, t, at);
  memset(u + at, 'y', GS_MM_LINE_MAX + 1); /* '%' then GS_MM_LINE_MAX 'y's: one too many */
  u[at] = '%';
  memcpy(u + at + GS_MM_LINE_MAX + 1, mid + ml, n - at - ml);
  const size_t un = at + GS_MM_LINE_MAX + 1 + (n - at - ml);
  f = fopen(path, "wb");
  CU_ASSERT_FATAL(f != NULL);
  CU_ASSERT(fwrite(u, 1, un, f) == un);
  CU_ASSERT(fclose(f) == 0);
  snprintf(want, sizeof want, "%s:%ld: line longer than 1 MiB", path, mline);
  const size_t part_min = gs_mm_part_min;
  gs_mm_part_min = 1 << 16;
  for (int nt = 1; nt <= 3; nt += 2)
    for (int mem = 0; mem < 2; ++mem) {
      gs_mm_set_threads(nt);
      gs_csr_t *A = NULL;
      gs_status_t st = mem ? gs_mm_read_csr_mem(path, u, un, &A) : gs_mm_read_csr(path, &A);
      CU_ASSERT_EQUAL(st, GS_ERR_PARSE);
      if (strcmp(gs_last_error(), want) != 0)
        printf("\n  %d threads%s: got %s\n  want %s\n", nt, mem ? " (memory)" : "",
               gs_last_error(), want);
      CU_ASSERT_STRING_EQUAL(gs_last_error(), want);
      CU_ASSERT_PTR_NULL(A);
    }
  gs_mm_set_threads(0);
  gs_mm_part_min = part_min;
  free(u);
  free(t);
}

/* ---- vectors -------------------------------------------------------------------------------- */

static void test_vectors(void)
{
  gs_val_t *x = NULL;
  gs_idx_t n = -1;
  CU_ASSERT_FATAL(gs_mm_read_vector(data("ok/vector.mtx"), &x, &n) == GS_SUCCESS);
  CU_ASSERT_EQUAL_FATAL(n, 4);
  CU_ASSERT(x[0] == 1.5 && x[1] == -2 && x[2] == 0 && x[3] == 300);
  free(x);
  CU_ASSERT_FATAL(gs_mm_read_vector(data("ok/vector_int.mtx"), &x, &n) == GS_SUCCESS);
  CU_ASSERT_EQUAL_FATAL(n, 3);
  CU_ASSERT(x[0] == 1 && x[1] == -2 && x[2] == 3);
  free(x);
  /* an n x 1 coordinate file: missing entries are zero, duplicates summed */
  CU_ASSERT_FATAL(gs_mm_read_vector(data("ok/vector_coord.mtx"), &x, &n) == GS_SUCCESS);
  CU_ASSERT_EQUAL_FATAL(n, 5);
  CU_ASSERT(x[0] == 3 && x[1] == 2 && x[2] == 0 && x[3] == 0 && x[4] == -1);
  free(x);

  /* a matrix is not a vector */
  x = (gs_val_t *)&n;
  char want[4200];
  snprintf(want, sizeof want, "%s:3: a vector must have one column, this one has 4",
           data("ok/sym_lower.mtx"));
  CU_ASSERT_EQUAL(gs_mm_read_vector(data("ok/sym_lower.mtx"), &x, &n), GS_ERR_PARSE);
  CU_ASSERT_STRING_EQUAL(gs_last_error(), want);
  CU_ASSERT_PTR_NULL(x);

  /* write and read back, bit for bit */
  uint64_t s = gs_test_seed() ^ 0x5eed;
  gs_idx_t len = 1000;
  gs_val_t *v = malloc((size_t)len * sizeof *v);
  CU_ASSERT_FATAL(v != NULL);
  for (gs_idx_t i = 0; i < len; ++i)
    v[i] = (2 * gs_test_uniform(&s) - 1) * pow(10.0, 600 * gs_test_uniform(&s) - 300);
  v[0] = -0.0;
  v[1] = 0x1p-1074;
  CU_ASSERT(gs_mm_write_vector(tmp_path("v.mtx"), v, len) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_mm_read_vector(tmp_path("v.mtx"), &x, &n) == GS_SUCCESS);
  CU_ASSERT_EQUAL(n, len);
  CU_ASSERT(memcmp(x, v, (size_t)len * sizeof *v) == 0);
  free(x);
  /* an empty vector */
  CU_ASSERT(gs_mm_write_vector(tmp_path("v0.mtx"), v, 0) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_mm_read_vector(tmp_path("v0.mtx"), &x, &n) == GS_SUCCESS);
  CU_ASSERT_EQUAL(n, 0);
  free(x);
  /* non-finite values are refused and nothing is written */
  v[3] = INFINITY;
  CU_ASSERT_EQUAL(gs_mm_write_vector(tmp_path("vinf.mtx"), v, len), GS_ERR_INVALID_ARG);
  CU_ASSERT(access(tmp_path("vinf.mtx"), F_OK) != 0);
  free(v);
}

/* ---- gzip ---------------------------------------------------------------------------------- */

/* The build says what it has, and the library agrees: gzip is on exactly when zlib was found. */
static void test_gzip_build(void)
{
#ifdef GS_HAVE_ZLIB
  CU_ASSERT_EQUAL(gs_mm_has_gzip(), 1);
#else
  CU_ASSERT_EQUAL(gs_mm_has_gzip(), 0);
#endif
}

#ifndef GS_HAVE_ZLIB
/* Without zlib: a gzip file is refused by name or by its first bytes, with one line naming the
 * file and the cause, and writing a .gz name creates nothing. */
static void test_gzip(void)
{
  char want[4400]; /* a path of data() or tmp_path() and the cause */
  gs_csr_t *A = NULL;
  const char *gz = data("bad/truncated.mtx.gz"); /* gzip data (cut short, never decompressed) */
  snprintf(want, sizeof want, "%s: gzip-compressed, but %s", gz, GS_MM_NO_ZLIB);
  CU_ASSERT_EQUAL(gs_mm_read_csr(gz, &A), GS_ERR_UNSUPPORTED);
  CU_ASSERT_STRING_EQUAL(gs_last_error(), want);
  CU_ASSERT_PTR_NULL(A);

  size_t len = 0;
  char *bytes = read_whole(gz, &len);
  CU_ASSERT_FATAL(bytes != NULL && len > 2);
  const char *disguised = tmp_path("disguised.mtx");
  FILE *f = fopen(disguised, "wb");
  CU_ASSERT_FATAL(f != NULL);
  CU_ASSERT(fwrite(bytes, 1, len, f) == len);
  fclose(f);
  free(bytes);
  snprintf(want, sizeof want, "%s: gzip-compressed, but %s", disguised, GS_MM_NO_ZLIB);
  CU_ASSERT_EQUAL(gs_mm_read_csr(disguised, &A), GS_ERR_UNSUPPORTED);
  CU_ASSERT_STRING_EQUAL(gs_last_error(), want);
  gs_val_t *x = NULL;
  gs_idx_t n = 0;
  CU_ASSERT_EQUAL(gs_mm_read_vector(disguised, &x, &n), GS_ERR_UNSUPPORTED);
  CU_ASSERT_PTR_NULL(x);

  gs_csr_t *P = read_csr_ok(data("ok/sym_lower.mtx"));
  CU_ASSERT_FATAL(P != NULL);
  const char *out = tmp_path("out.mtx.gz");
  const int before = count_files();
  snprintf(want, sizeof want, "%s: cannot write gzip (.gz): %s", out, GS_MM_NO_ZLIB);
  CU_ASSERT_EQUAL(gs_mm_write_csr(out, P), GS_ERR_UNSUPPORTED);
  CU_ASSERT_STRING_EQUAL(gs_last_error(), want);
  CU_ASSERT(access(out, F_OK) != 0);
  CU_ASSERT_EQUAL(count_files(), before); /* no temporary left either */
  gs_csr_destroy(&P);
}
#else
static void test_gzip(void)
{
  size_t len = 0;
  char *text = read_whole(data("ok/sym_lower.mtx"), &len);
  CU_ASSERT_FATAL(text != NULL);
  gs_csr_t *P = read_csr_ok(data("ok/sym_lower.mtx")), *G = NULL;
  CU_ASSERT_FATAL(gzip_file(tmp_path("small.mtx.gz"), text, len) == 0);
  G = read_csr_ok(tmp_path("small.mtx.gz"));
  CU_ASSERT(csr_identical(P, G));
  CU_ASSERT_EQUAL(G->symmetry, GS_SYM_SYMMETRIC);
  gs_csr_destroy(&G);
  /* gzip data under a plain name is recognised by its magic bytes */
  CU_ASSERT_FATAL(gzip_file(tmp_path("disguised.mtx"), text, len) == 0);
  G = read_csr_ok(tmp_path("disguised.mtx"));
  CU_ASSERT(csr_identical(P, G));
  gs_csr_destroy(&G);
  free(text);

  /* A larger stream cut in half: a clear error, not a short matrix. */
  uint64_t s = gs_test_seed() ^ 0x9e;
  size_t cap = 4000 * 48 + 128, n = 0;
  char *big = malloc(cap);
  CU_ASSERT_FATAL(big != NULL);
  n += (size_t)snprintf(big, cap, "%%%%MatrixMarket matrix coordinate real general\n"
                                  "100 100 4000\n");
  for (int k = 0; k < 4000; ++k)
    n += (size_t)snprintf(big + n, cap - n, "%d %d %.17g\n", 1 + (int)(gs_test_uniform(&s) * 100),
                          1 + (int)(gs_test_uniform(&s) * 100), gs_test_uniform(&s));
  const char *cut = tmp_path("cut.mtx.gz");
  CU_ASSERT_FATAL(gzip_file(cut, big, n) == 0);
  G = read_csr_ok(cut);
  CU_ASSERT(G && G->m == 100);
  gs_csr_destroy(&G);
  struct stat sb;
  CU_ASSERT_FATAL(stat(cut, &sb) == 0);
  CU_ASSERT_FATAL(truncate(cut, sb.st_size / 2) == 0);
  char want[700];
  snprintf(want, sizeof want, "%s: truncated or corrupt gzip data", cut);
  CU_ASSERT_EQUAL(gs_mm_read_csr(cut, &G), GS_ERR_PARSE);
  CU_ASSERT_STRING_EQUAL(gs_last_error(), want);
  CU_ASSERT_PTR_NULL(G);
  free(big);

  /* writing to a .gz name compresses */
  const char *out = tmp_path("out.mtx.gz");
  CU_ASSERT(gs_mm_write_csr(out, P) == GS_SUCCESS);
  unsigned char magic[2] = {0, 0};
  FILE *f = fopen(out, "rb");
  CU_ASSERT_FATAL(f != NULL);
  CU_ASSERT(fread(magic, 1, 2, f) == 2);
  fclose(f);
  CU_ASSERT(magic[0] == 0x1f && magic[1] == 0x8b);
  G = read_csr_ok(out);
  CU_ASSERT(csr_identical(P, G));
  gs_csr_destroy(&G);
  gs_csr_destroy(&P);

  /* a matrix whose decompressed text spans many read blocks */
  const char *many = gs_test_quick() ? "west0479" : "cage10"; /* cage10: 4.4 MB of text */
  if (!gs_test_have_matrix(many)) return;
  P = read_csr_ok(gs_test_matrix(many));
  CU_ASSERT_FATAL(P != NULL);
  CU_ASSERT(gs_mm_write_csr(out, P) == GS_SUCCESS);
  G = read_csr_ok(out);
  CU_ASSERT(csr_identical(P, G));
  gs_csr_destroy(&G);
  gs_csr_destroy(&P);
}
#endif

/* ---- round trips --------------------------------------------------------------------------- */

/* Small matrices for quick (valgrind) runs. */
static int quick_pick(const char *name)
{
  static const char *const small[] = {"494_bus", "fs_183_1", "lp_e226", "west0479", NULL};
  for (int k = 0; small[k]; ++k)
    if (strcmp(name, small[k]) == 0) return 1;
  return 0;
}

static void roundtrip(const gs_csr_t *A, const char *label)
{
  const char *path = tmp_path("rt.mtx");
  gs_csr_t *B = NULL;
  gs_status_t st = gs_mm_write_csr(path, A);
  if (st != GS_SUCCESS) printf("\n  %s: write: %s\n", label, gs_last_error());
  CU_ASSERT_EQUAL_FATAL(st, GS_SUCCESS);
  B = read_csr_ok(path);
  if (!csr_identical(A, B)) {
    printf("\n  %s: differs after a round trip\n", label);
    CU_FAIL("round trip not bit for bit");
  }
  if (B) CU_ASSERT_EQUAL(B->symmetry, GS_SYM_GENERAL);
  gs_csr_destroy(&B);
}

static void test_roundtrip_real_matrices(void)
{
  if (!gs_test_have_matrices()) return;
  int done = 0;
  for (int k = 0; gs_test_matrix_names[k]; ++k) {
    const char *name = gs_test_matrix_names[k];
    if (gs_test_quick() && !quick_pick(name)) continue;
    if (!gs_test_have_matrix(name)) continue;
    gs_csr_t *A = read_csr_ok(gs_test_matrix(name));
    if (!A) continue;
    roundtrip(A, name);
    gs_csr_destroy(&A);
    ++done;
  }
  CU_ASSERT(done >= 4);

  /* the stream writer writes the same file */
  if (!gs_test_have_matrix("west0479")) return;
  gs_csr_t *A = read_csr_ok(gs_test_matrix("west0479")), *B = NULL;
  FILE *f = fopen(tmp_path("stream.mtx"), "wb");
  CU_ASSERT_FATAL(f != NULL && A != NULL);
  CU_ASSERT(gs_mm_write_csr_stream(f, A) == GS_SUCCESS);
  CU_ASSERT(fclose(f) == 0);
  B = read_csr_ok(tmp_path("stream.mtx"));
  CU_ASSERT(csr_identical(A, B));
  gs_csr_destroy(&A);
  gs_csr_destroy(&B);
}

/* A value from a mix of scales and special cases, so that the writer and the number parser see
 * short and long decimals, huge and tiny exponents, subnormals, integers and signed zeros. */
static double draw_value(uint64_t *s)
{
  double u = gs_test_uniform(s), r = 2 * gs_test_uniform(s) - 1;
  if (u < 0.4) return r;
  if (u < 0.6) return r * pow(10.0, 616 * gs_test_uniform(s) - 308);
  if (u < 0.7) return r * 0x1p-1022 * gs_test_uniform(s); /* subnormal */
  if (u < 0.8) return floor(r * 1e6);
  if (u < 0.85) return (u < 0.825) ? 0.0 : -0.0;
  if (u < 0.9) return floor(r * 1000) / 8;
  return r * 1.7976931348623157e308;
}

static void test_roundtrip_random(void)
{
  uint64_t s = gs_test_seed();
  int rounds = gs_test_quick() ? 6 : 40;
  for (int r = 0; r < rounds; ++r) {
    gs_idx_t m = (gs_idx_t)(gs_test_uniform(&s) * 150), n = (gs_idx_t)(gs_test_uniform(&s) * 150);
    if (r == 0) m = 0;
    if (r == 1) n = 1;
    double density = gs_test_uniform(&s) * 0.2;
    gs_coo_t *C = NULL;
    gs_csr_t *A = NULL;
    CU_ASSERT_FATAL(gs_coo_create(&C, m, n, 16) == GS_SUCCESS);
    for (gs_idx_t i = 0; i < m; ++i)
      for (gs_idx_t j = 0; j < n; ++j)
        if (gs_test_uniform(&s) < density)
          CU_ASSERT_FATAL(gs_coo_push(C, i, j, draw_value(&s)) == GS_SUCCESS);
    CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
    char label[64];
    snprintf(label, sizeof label, "random %d x %d (round %d)", m, n, r);
    roundtrip(A, label);
    gs_csr_destroy(&A);
    gs_coo_destroy(&C);
  }
}

/* ---- the manifest's counts ---------------------------------------------------------------- */

/* From the full set's MANIFEST.tsv (GS_MATRIX_DIR): rows, cols, nnz_full (after symmetric expansion) and
 * the stored symmetry. */
static const struct {
  const char *name;
  int rows, cols, nnz_full;
  gs_symmetry_t sym;
} manifest[] = {
  {"2dcyl1", 1784, 1784, 34656, GS_SYM_GENERAL},
  {"494_bus", 494, 494, 1666, GS_SYM_SYMMETRIC},
  {"Dubcova1", 16129, 16129, 253009, GS_SYM_SYMMETRIC},
  {"Si2", 769, 769, 17801, GS_SYM_SYMMETRIC},
  {"add32", 4960, 4960, 23884, GS_SYM_GENERAL},
  {"as-caida20071105", 26475, 26475, 106762, GS_SYM_SYMMETRIC},
  {"bayer10", 13436, 13436, 94926, GS_SYM_GENERAL},
  {"bcsstk13", 2003, 2003, 83883, GS_SYM_SYMMETRIC},
  {"bcsstk16", 4884, 4884, 290378, GS_SYM_SYMMETRIC},
  {"cage10", 11397, 11397, 150645, GS_SYM_GENERAL},
  {"crystm01", 4875, 4875, 105339, GS_SYM_SYMMETRIC},
  {"delaunay_n15", 32768, 32768, 196548, GS_SYM_SYMMETRIC},
  {"email-Enron", 36692, 36692, 367662, GS_SYM_SYMMETRIC},
  {"fidapex6", 1651, 1651, 49533, GS_SYM_GENERAL},
  {"fs_183_1", 183, 183, 1069, GS_SYM_GENERAL},
  {"illc1033", 1033, 320, 4732, GS_SYM_GENERAL},
  {"lp_e226", 223, 472, 2768, GS_SYM_GENERAL},
  {"memplus", 17758, 17758, 126150, GS_SYM_GENERAL},
  {"msc04515", 4515, 4515, 97707, GS_SYM_SYMMETRIC},
  {"nos7", 729, 729, 4617, GS_SYM_SYMMETRIC},
  {"orsreg_1", 2205, 2205, 14133, GS_SYM_GENERAL},
  {"sherman5", 3312, 3312, 20793, GS_SYM_GENERAL},
  {"well1850", 1850, 712, 8758, GS_SYM_GENERAL},
  {"west0479", 479, 479, 1910, GS_SYM_GENERAL},
  {"wiki-Vote", 8297, 8297, 103689, GS_SYM_GENERAL},
  {"zenios", 2873, 2873, 27191, GS_SYM_SYMMETRIC},
};

static void test_manifest_counts(void)
{
  if (!gs_test_have_matrices()) return;
  int n = (int)(sizeof manifest / sizeof *manifest), done = 0;
  for (int k = 0; k < n; ++k) {
    if (gs_test_quick() && !quick_pick(manifest[k].name)) continue;
    if (!gs_test_have_matrix(manifest[k].name)) continue;
    const char *path = gs_test_matrix(manifest[k].name);
    gs_coo_t *C = NULL;
    gs_csr_t *A = NULL;
    gs_status_t st = gs_mm_read_coo(path, &C);
    if (st != GS_SUCCESS) printf("\n  %s: %s\n", manifest[k].name, gs_last_error());
    CU_ASSERT_EQUAL_FATAL(st, GS_SUCCESS);
    if (C->m != manifest[k].rows || C->n != manifest[k].cols || C->nnz != manifest[k].nnz_full ||
        C->symmetry != manifest[k].sym) {
      printf("\n  %s: %d x %d, %lld entries, %s; manifest %d x %d, %d\n", manifest[k].name, C->m,
             C->n, (long long)C->nnz, gs_symmetry_string(C->symmetry), manifest[k].rows,
             manifest[k].cols, manifest[k].nnz_full);
      CU_FAIL("counts differ from MANIFEST.tsv");
    }
    gs_coo_destroy(&C);
    A = read_csr_ok(path); /* no duplicates in these files: the CSR keeps every entry */
    CU_ASSERT(A && A->nnz == manifest[k].nnz_full);
    gs_csr_destroy(&A);
    ++done;
  }
  CU_ASSERT(done >= 4);
}

/* ---- the malformed corpus ------------------------------------------------------------------ */

enum { BOTH, CSR_ONLY, VECTOR_ONLY };

/* Every file of tests/data/bad with its reader(s), status and exact message after the path. */
static const struct {
  const char *file;
  int reader;
  gs_status_t st;
  const char *msg;
} corpus[] = {
  {"empty.mtx", BOTH, GS_ERR_PARSE, ": empty file (no %%MatrixMarket banner)"},
  {"no_banner.mtx", BOTH, GS_ERR_PARSE,
   ":1: missing %%MatrixMarket banner: the first line begins with '3'"},
  {"banner_not_first.mtx", BOTH, GS_ERR_PARSE,
   ":1: missing %%MatrixMarket banner: the first line begins with '%'"},
  {"banner_short.mtx", BOTH, GS_ERR_PARSE,
   ":1: incomplete banner: expected %%MatrixMarket matrix FORMAT FIELD SYMMETRY"},
  {"bad_object.mtx", BOTH, GS_ERR_PARSE,
   ":1: unknown object 'vector' (only 'matrix' is supported)"},
  {"bad_format.mtx", BOTH, GS_ERR_PARSE,
   ":1: unknown format 'sparse' (expected coordinate or array)"},
  {"bad_field.mtx", BOTH, GS_ERR_PARSE,
   ":1: unknown field 'float' (expected real, integer, pattern or complex)"},
  {"bad_symmetry.mtx", BOTH, GS_ERR_PARSE,
   ":1: unknown symmetry 'symmetrical' (expected general, symmetric, skew-symmetric or "
   "hermitian)"},
  {"banner_extra.mtx", BOTH, GS_ERR_PARSE, ":1: unexpected text after the banner: 'extra'"},
  {"complex.mtx", BOTH, GS_ERR_UNSUPPORTED, ":1: complex matrices are not supported"},
  {"hermitian.mtx", BOTH, GS_ERR_UNSUPPORTED, ":1: hermitian matrices are not supported"},
  {"pattern_array.mtx", BOTH, GS_ERR_PARSE,
   ":1: the pattern field cannot be used with the array format"},
  {"pattern_skew.mtx", BOTH, GS_ERR_PARSE, ":1: a pattern matrix cannot be skew-symmetric"},
  {"no_size_line.mtx", BOTH, GS_ERR_PARSE, ": end of file before the size line"},
  {"size_short.mtx", BOTH, GS_ERR_PARSE, ":2: bad size line: expected ROWS COLS ENTRIES"},
  {"size_not_integer.mtx", BOTH, GS_ERR_PARSE,
   ":2: bad size line: 'x' is not a non-negative integer"},
  {"size_negative.mtx", BOTH, GS_ERR_PARSE,
   ":3: bad size line: '-3' is not a non-negative integer"},
  {"size_extra.mtx", BOTH, GS_ERR_PARSE, ":2: unexpected text after the size line: '7'"},
  {"rows_overflow.mtx", BOTH, GS_ERR_PARSE,
   ":2: 3000000000 rows exceed the 32-bit index limit (2147483647)"},
  {"cols_overflow.mtx", BOTH, GS_ERR_PARSE,
   ":2: 99999999999999999999999 columns exceed the 32-bit index limit (2147483647)"},
  /* more than 2^31-1 entries is allowed (64-bit offsets): this file is then truncated */
  {"nnz_overflow.mtx", CSR_ONLY, GS_ERR_PARSE,
   ": expected 3000000000 entries, found 1 at end of file"},
  {"sym_not_square.mtx", BOTH, GS_ERR_PARSE,
   ":2: a symmetric matrix must be square, this one is 3 x 4"},
  {"skew_not_square.mtx", BOTH, GS_ERR_PARSE,
   ":2: a skew-symmetric matrix must be square, this one is 4 x 3"},
  {"too_few.mtx", BOTH, GS_ERR_PARSE, ": expected 4 entries, found 3 at end of file"},
  {"too_many.mtx", BOTH, GS_ERR_PARSE, ":5: more entries than the 2 declared in the size line"},
  {"row_zero.mtx", BOTH, GS_ERR_PARSE, ":4: row index 0 out of range 1..3"},
  {"col_too_big.mtx", BOTH, GS_ERR_PARSE, ":4: column index 4 out of range 1..3"},
  {"row_negative.mtx", BOTH, GS_ERR_PARSE, ":3: row index -1 out of range 1..3"},
  {"col_huge.mtx", BOTH, GS_ERR_PARSE, ":3: column index 99999999999 out of range 1..3"},
  {"missing_col.mtx", BOTH, GS_ERR_PARSE, ":3: missing column index"},
  {"missing_value.mtx", BOTH, GS_ERR_PARSE, ":3: missing value"},
  {"row_not_integer.mtx", BOTH, GS_ERR_PARSE, ":3: row index 'x1' is not an integer"},
  {"col_not_integer.mtx", BOTH, GS_ERR_PARSE, ":3: column index '2.0' is not an integer"},
  {"value_not_number.mtx", BOTH, GS_ERR_PARSE, ":3: value '1.5.2' is not a number"},
  {"value_nan.mtx", BOTH, GS_ERR_PARSE, ":3: value 'nan' is not finite"},
  {"value_inf.mtx", BOTH, GS_ERR_PARSE, ":3: value '-inf' is not finite"},
  {"value_overflow.mtx", BOTH, GS_ERR_PARSE, ":3: value '1e999' is not finite"},
  {"value_nul_byte.mtx", BOTH, GS_ERR_PARSE, ":3: value '3.0?' is not a number"},
  {"value_long_token.mtx", BOTH, GS_ERR_PARSE,
   ":3: value 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...' is not a number"},
  {"trailing_garbage.mtx", BOTH, GS_ERR_PARSE, ":3: unexpected text after the entry: 'extra'"},
  {"pattern_with_value.mtx", BOTH, GS_ERR_PARSE, ":3: unexpected text after the entry: '3.5'"},
  {"integer_fraction.mtx", BOTH, GS_ERR_PARSE,
   ":3: value '2.5' is not an integer (the field is integer)"},
  {"skew_diagonal.mtx", BOTH, GS_ERR_PARSE,
   ":4: nonzero diagonal entry (2, 2) in a skew-symmetric matrix"},
  {"array_too_few.mtx", BOTH, GS_ERR_PARSE, ": expected 6 values, found 5 at end of file"},
  {"array_too_many.mtx", BOTH, GS_ERR_PARSE, ":5: more values than the 2 of a 2 x 1 array"},
  {"array_two_values.mtx", BOTH, GS_ERR_PARSE, ":3: unexpected text after the value: '2'"},
  {"array_size_three.mtx", BOTH, GS_ERR_PARSE, ":2: unexpected text after the size line: '3'"},
  {"vector_two_columns.mtx", VECTOR_ONLY, GS_ERR_PARSE,
   ":2: a vector must have one column, this one has 2"},
  {"truncated.mtx.gz", BOTH, GS_ERR_PARSE, ": truncated or corrupt gzip data"},
  /* hostile or mistaken files, named for what they are (issue 35) */
  {"bom.mtx", BOTH, GS_ERR_PARSE,
   ":1: a UTF-8 byte-order mark (EF BB BF) before %%MatrixMarket: save the file without it"},
  {"utf16.mtx", BOTH, GS_ERR_PARSE,
   ":1: UTF-16 text (byte-order mark FF FE): save the file as ASCII or UTF-8"},
  {"binary_banner.mtx", BOTH, GS_ERR_PARSE,
   ":1: NUL bytes in the first line: binary data, not a Matrix Market text file"},
  {"cr_only.mtx", BOTH, GS_ERR_PARSE,
   ":1: a CR inside the line: lines ended by a CR alone (classic Mac OS) must be converted to "
   "LF"},
  {"dup_inf.mtx", CSR_ONLY, GS_ERR_PARSE,
   ":5: entry (1, 1) and the earlier ones at its position sum to +inf (duplicates are summed: "
   "the sum must be finite)"},
  {"vector_dup_inf.mtx", VECTOR_ONLY, GS_ERR_PARSE,
   ":5: entry (1, 1) and the earlier ones at its position sum to -inf (duplicates are summed: "
   "the sum must be finite)"},
  {"skew_both.mtx", BOTH, GS_ERR_PARSE,
   ":5: entry (1, 2) lies above the diagonal, entry (2, 1) on line 3 below it: a "
   "skew-symmetric file stores one triangle (each entry stands for itself and its negated "
   "mirror)"},
  {"int_beyond_2p53.mtx", BOTH, GS_ERR_PARSE,
   ":4: integer out of range: '9007199254740993' is beyond 2^53 in magnitude (not exact as a "
   "double)"},
  {"int_beyond_int64.mtx", BOTH, GS_ERR_PARSE,
   ":3: integer out of range: '-99999999999999999999' is beyond 2^53 in magnitude (not exact "
   "as a double)"},
};
#define CORPUS_N ((int)(sizeof corpus / sizeof *corpus))

static int check_one(const char *path, int reader, gs_status_t want_st, const char *want)
{
  gs_status_t st;
  int ok = 1;
  if (reader == 0) {
    gs_coo_t *C = (gs_coo_t *)&ok; /* must come back NULL */
    st = gs_mm_read_coo(path, &C);
    ok = C == NULL;
  } else if (reader == 1) {
    gs_csr_t *A = (gs_csr_t *)&ok;
    st = gs_mm_read_csr(path, &A);
    ok = A == NULL;
  } else {
    gs_val_t *x = (gs_val_t *)&ok;
    gs_idx_t n = 7;
    st = gs_mm_read_vector(path, &x, &n);
    ok = x == NULL;
  }
  if (st != want_st || strcmp(gs_last_error(), want) != 0) {
    printf("\n  reader %d: got %s \"%s\"\n  expected %s \"%s\"\n", reader, gs_status_string(st),
           gs_last_error(), gs_status_string(want_st), want);
    ok = 0;
  }
  if (!strchr(gs_last_error(), '\n') && ok) return 1;
  return 0;
}

static void malformed_corpus(void)
{
  char want[4400];
  for (int k = 0; k < CORPUS_N; ++k) {
    char rel[128];
    snprintf(rel, sizeof rel, "bad/%s", corpus[k].file);
    const char *path = data(rel);
    snprintf(want, sizeof want, "%s%s", path, corpus[k].msg);
    gs_status_t want_st = corpus[k].st;
    if (!gs_mm_has_gzip() && gs_mm_ends_with_gz(path)) { /* refused before it is read */
      snprintf(want, sizeof want, "%s: gzip-compressed, but %s", path, GS_MM_NO_ZLIB);
      want_st = GS_ERR_UNSUPPORTED;
    }
    int ok = 1;
    if (corpus[k].reader == BOTH || corpus[k].reader == CSR_ONLY)
      ok &= check_one(path, 1, want_st, want);
    if (corpus[k].reader == BOTH) ok &= check_one(path, 0, want_st, want);
    if (corpus[k].reader == VECTOR_ONLY) ok &= check_one(path, 2, want_st, want);
    if (!ok) {
      printf("  (file %s)\n", corpus[k].file);
      CU_FAIL("malformed file: wrong status or message");
    }
    /* each file its own message */
    for (int j = 0; j < k; ++j) CU_ASSERT(strcmp(corpus[j].msg, corpus[k].msg) != 0);
  }
  CU_ASSERT(CORPUS_N >= 25);

  /* every file of the corpus is in the table */
  DIR *d = opendir(data("bad"));
  CU_ASSERT_FATAL(d != NULL);
  struct dirent *e;
  int files = 0;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    ++files;
    int found = 0;
    for (int k = 0; k < CORPUS_N; ++k) found |= strcmp(corpus[k].file, e->d_name) == 0;
    if (!found) {
      printf("\n  tests/data/bad/%s has no entry in the table\n", e->d_name);
      CU_FAIL("corpus file without an expected message");
    }
  }
  closedir(d);
  CU_ASSERT_EQUAL(files, CORPUS_N);
}

static void test_malformed_corpus(void)
{
  gs_mm_set_threads(1);
  malformed_corpus();
  gs_mm_set_threads(0);
}

/* The same messages from the parallel reader, with every file split into one-byte parts. */
static void test_malformed_corpus_parallel(void)
{
  const size_t part_min = gs_mm_part_min;
  gs_mm_part_min = 1;
  for (int nt = 2; nt <= 4; ++nt) {
    gs_mm_set_threads(nt);
    malformed_corpus();
  }
  gs_mm_set_threads(0);
  gs_mm_part_min = part_min;
}


/* ---- hostile input (issue 35) ----------------------------------------------------------------- */

static int write_file(const char *path, const void *t, size_t n)
{
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  size_t w = fwrite(t, 1, n, f);
  return (fclose(f) == 0 && w == n) ? 0 : -1;
}

/* A FIFO at path fed `text` by `cat` in a child process (a source whose size is unknown: the
 * child execs at once, so that a valgrind run checks no copy of this process); returns the
 * child's pid, -1 when none could be made. The reader may stop early: cat then dies of
 * SIGPIPE, which fifo_done accepts. */
static pid_t fifo_feed(const char *path, const char *text, size_t len)
{
  static char src[700];
  snprintf(src, sizeof src, "%s.src", path);
  if (write_file(src, text, len) != 0) return -1;
  return gs_test_fifo_feed(path, src);
}

/* The reader's price of a CSR (COO 16 bytes an entry, CSR 12, row pointers and counters 16 a
 * row: io/mm_read.c's mm_budget) in its message's words. */
static const char *csr_price(double entries, double rows, char *buf, size_t n)
{
  return gs_mm_format_bytes(entries * 28.0 + (rows + 1) * 16.0, buf, n);
}

/* What a file declares is priced before anything is allocated: a 2^31-row CSR of one entry is
 * refused by name with the bytes it needs, the same file reads as a COO (arrays grow with the
 * entries read), the budget is memory and no fixed cap, and a declared count is bounded by what
 * a plain or gzip file can hold but not for a pipe. */
static void test_memory_budget(void)
{
  const int64_t limit0 = gs_mm_memory_limit;
  char want[1200], need[32], have[32];
  CU_ASSERT(gs_mm_memory_available() > 0);
  gs_mm_memory_limit = (int64_t)1 << 30;
  const char *huge = tmp_path("huge.mtx");
  const char text[] = "%%MatrixMarket matrix coordinate real general\n"
                      "2147483647 2147483647 1\n1 1 1.0\n";
  CU_ASSERT_FATAL(write_file(huge, text, sizeof text - 1) == 0);
  snprintf(want, sizeof want,
           "%s: declares 2147483647 x 2147483647 with 1 entries: needs %s, more than the %s "
           "available",
           huge, csr_price(1, 2147483647.0, need, sizeof need),
           gs_mm_format_bytes((double)gs_mm_memory_limit, have, sizeof have));
  CU_ASSERT_STRING_EQUAL(need, "32.0 GiB");
  for (int nt = 1; nt <= 3; nt += 2) {
    gs_mm_set_threads(nt);
    gs_csr_t *A = NULL;
    CU_ASSERT_EQUAL(gs_mm_read_csr(huge, &A), GS_ERR_HOST_MEMORY);
    CU_ASSERT_STRING_EQUAL(gs_last_error(), want);
    CU_ASSERT_PTR_NULL(A);
    CU_ASSERT_EQUAL(gs_mm_read_csr_mem(huge, text, sizeof text - 1, &A), GS_ERR_HOST_MEMORY);
    CU_ASSERT_STRING_EQUAL(gs_last_error(), want);
  }
  gs_mm_set_threads(0);
  gs_coo_t *C = NULL;
  CU_ASSERT_EQUAL_FATAL(gs_mm_read_coo(huge, &C), GS_SUCCESS);
  CU_ASSERT_EQUAL(C->nnz, 1);
  CU_ASSERT(C->cap <= 64); /* from what the 78-byte file can hold */
  gs_coo_destroy(&C);

  /* a vector of 2^31 - 1 rows: its values and marks, 9 bytes a row */
  const char vtext[] = "%%MatrixMarket matrix coordinate real general\n2147483647 1 1\n1 1 1\n";
  gs_val_t *x = NULL;
  gs_idx_t len = 0;
  CU_ASSERT_EQUAL(gs_mm_read_vector_mem("v.mtx", vtext, sizeof vtext - 1, &x, &len),
                  GS_ERR_HOST_MEMORY);
  CU_ASSERT(strstr(gs_last_error(), "v.mtx: declares 2147483647 x 1 with 1 entries: needs") ==
            gs_last_error());
  CU_ASSERT_PTR_NULL(x);

  /* memory, not a cap: 2^20 rows need 16 MiB of row pointers and counters */
  const char mtext[] = "%%MatrixMarket matrix coordinate real general\n1048576 1048576 1\n"
                       "1048576 1 2.5\n";
  gs_csr_t *A = NULL;
  gs_mm_memory_limit = (int64_t)64 << 20;
  CU_ASSERT_EQUAL(gs_mm_read_csr_mem("m.mtx", mtext, sizeof mtext - 1, &A), GS_SUCCESS);
  CU_ASSERT(A && A->m == 1048576 && A->nnz == 1 && A->val[0] == 2.5);
  gs_csr_destroy(&A);
  gs_mm_memory_limit = (int64_t)8 << 20;
  snprintf(want, sizeof want,
           "m.mtx: declares 1048576 x 1048576 with 1 entries: needs %s, more than the 8.0 MiB "
           "available",
           csr_price(1, 1048576.0, need, sizeof need));
  CU_ASSERT_STRING_EQUAL(need, "16.0 MiB");
  CU_ASSERT_EQUAL(gs_mm_read_csr_mem("m.mtx", mtext, sizeof mtext - 1, &A), GS_ERR_HOST_MEMORY);
  CU_ASSERT_STRING_EQUAL(gs_last_error(), want);

  /* 10^9 entries declared, one there: a plain or gzip file cannot hold them (the count is
   * checked as ever), a pipe might (the declared count is priced) */
  gs_mm_memory_limit = (int64_t)64 << 20;
  const char btext[] = "%%MatrixMarket matrix coordinate real general\n10 10 1000000000\n1 1 1\n";
  const char *big = tmp_path("big.mtx");
  CU_ASSERT_FATAL(write_file(big, btext, sizeof btext - 1) == 0);
  snprintf(want, sizeof want, "%s: expected 1000000000 entries, found 1 at end of file", big);
  CU_ASSERT_EQUAL(gs_mm_read_csr(big, &A), GS_ERR_PARSE);
  CU_ASSERT_STRING_EQUAL(gs_last_error(), want);
#ifdef GS_HAVE_ZLIB
  const char *bgz = tmp_path("big.mtx.gz");
  CU_ASSERT_FATAL(gzip_file(bgz, btext, sizeof btext - 1) == 0);
  snprintf(want, sizeof want, "%s: expected 1000000000 entries, found 1 at end of file", bgz);
  CU_ASSERT_EQUAL(gs_mm_read_csr(bgz, &A), GS_ERR_PARSE);
  CU_ASSERT_STRING_EQUAL(gs_last_error(), want);
#endif
  const char *pipe = tmp_path("big.fifo");
  pid_t pid = fifo_feed(pipe, btext, sizeof btext - 1);
  CU_ASSERT_FATAL(pid > 0);
  snprintf(want, sizeof want,
           "%s: declares 10 x 10 with 1000000000 entries: needs %s, more than the 64.0 MiB "
           "available",
           pipe, csr_price(1e9, 10, need, sizeof need));
  CU_ASSERT_EQUAL(gs_mm_read_csr(pipe, &A), GS_ERR_HOST_MEMORY);
  CU_ASSERT_STRING_EQUAL(gs_last_error(), want);
  gs_test_fifo_done(pid);
  unlink(pipe);
  gs_mm_memory_limit = limit0;
}

#ifdef GS_HAVE_ZLIB
/* A gzip member holding `n` bytes of c (n <= 1 MiB) into *out; returns its size, 0 on failure. */
static size_t gzip_member(char c, size_t n, unsigned char *out, size_t cap)
{
  char *in = malloc(n + 1);
  if (!in) return 0;
  memset(in, c, n);
  z_stream z;
  memset(&z, 0, sizeof z);
  size_t got = 0;
  if (deflateInit2(&z, 9, Z_DEFLATED, 31, 9, Z_DEFAULT_STRATEGY) == Z_OK) {
    z.next_in = (unsigned char *)in;
    z.avail_in = (unsigned)n;
    z.next_out = out;
    z.avail_out = (unsigned)cap;
    if (deflate(&z, Z_FINISH) == Z_STREAM_END) got = cap - z.avail_out;
    deflateEnd(&z);
  }
  free(in);
  return got;
}
#endif

/* Lines are bounded: /dev/zero and a NUL-filled buffer stop at the first MiB naming the NUL
 * bytes, a gzip file with a line of 1 GiB (members of 1 MiB, read one after the other) stops at
 * its first MiB, a long file of CR-ended lines names the CRs, on every reader. */
static void test_line_bound(void)
{
  char want[1200];
  gs_csr_t *A = NULL;
  gs_val_t *x = NULL;
  gs_idx_t len = 0;
  struct stat sb;
  if (stat("/dev/zero", &sb) == 0 && S_ISCHR(sb.st_mode)) {
    snprintf(want, sizeof want,
             "/dev/zero:1: NUL bytes and no line end within 1 MiB: binary data, not a Matrix "
             "Market text file");
    CU_ASSERT_EQUAL(gs_mm_read_csr("/dev/zero", &A), GS_ERR_PARSE);
    CU_ASSERT_STRING_EQUAL(gs_last_error(), want);
    CU_ASSERT_EQUAL(gs_mm_read_vector("/dev/zero", &x, &len), GS_ERR_PARSE);
    CU_ASSERT_STRING_EQUAL(gs_last_error(), want);
  }
  char *zeros = calloc(3u << 20, 1);
  CU_ASSERT_FATAL(zeros != NULL);
  CU_ASSERT_EQUAL(gs_mm_read_csr_mem("z.mtx", zeros, 3u << 20, &A), GS_ERR_PARSE);
  CU_ASSERT_STRING_EQUAL(gs_last_error(), "z.mtx:1: NUL bytes and no line end within 1 MiB: "
                                          "binary data, not a Matrix Market text file");
  free(zeros);

  /* classic Mac OS line ends in a file of more than 1 MiB: one long line with CRs */
  const int64_t entries = 200000;
  size_t cap = (size_t)entries * 24 + 128, n = 0;
  char *t = malloc(cap);
  CU_ASSERT_FATAL(t != NULL);
  n += (size_t)snprintf(t, cap, "%%%%MatrixMarket matrix coordinate real general\r100 100 %lld\r",
                        (long long)entries);
  for (int64_t e = 0; e < entries; ++e)
    n += (size_t)snprintf(t + n, cap - n, "%d %d %d\r", (int)(e % 100) + 1, (int)(e / 2000) + 1,
                          (int)e);
  CU_ASSERT_FATAL(n > GS_MM_LINE_MAX);
  const char *cr = tmp_path("cr.mtx");
  CU_ASSERT_FATAL(write_file(cr, t, n) == 0);
  for (int mem = 0; mem < 2; ++mem) {
    snprintf(want, sizeof want,
             "%s:1: line longer than 1 MiB, with CR characters in it: lines ended by a CR alone "
             "(classic Mac OS) must be converted to LF",
             cr);
    gs_status_t st = mem ? gs_mm_read_csr_mem(cr, t, n, &A) : gs_mm_read_csr(cr, &A);
    CU_ASSERT_EQUAL(st, GS_ERR_PARSE);
    CU_ASSERT_STRING_EQUAL(gs_last_error(), want);
  }
  /* the same with LF after the banner: the CRs of the second line are named */
  t[strlen("%%MatrixMarket matrix coordinate real general")] = '\n';
  CU_ASSERT_FATAL(write_file(cr, t, n) == 0);
  snprintf(want, sizeof want, "%s:2: line longer than 1 MiB, with CR", cr);
  CU_ASSERT_EQUAL(gs_mm_read_csr(cr, &A), GS_ERR_PARSE);
  CU_ASSERT(strncmp(gs_last_error(), want, strlen(want)) == 0);
  free(t);

#ifdef GS_HAVE_ZLIB
  /* 1 GiB of 'x' on line 2 of a gzip file (64 MiB in quick runs) */
  const size_t mib = (size_t)1 << 20, copies = gs_test_quick() ? 64 : 1024;
  unsigned char *mx = malloc(mib), *mb = malloc(4096), *mn = malloc(256);
  CU_ASSERT_FATAL(mx && mb && mn);
  size_t nx = gzip_member('x', mib, mx, mib), nn = gzip_member('\n', 1, mn, 256);
  z_stream z;
  memset(&z, 0, sizeof z);
  const char *banner = "%%MatrixMarket matrix coordinate real general\n";
  size_t nb = 0;
  if (deflateInit2(&z, 9, Z_DEFLATED, 31, 9, Z_DEFAULT_STRATEGY) == Z_OK) {
    z.next_in = (unsigned char *)banner;
    z.avail_in = (unsigned)strlen(banner);
    z.next_out = mb;
    z.avail_out = 4096;
    if (deflate(&z, Z_FINISH) == Z_STREAM_END) nb = 4096 - z.avail_out;
    deflateEnd(&z);
  }
  CU_ASSERT_FATAL(nx > 0 && nn > 0 && nb > 0);
  const char *gz = tmp_path("longline.mtx.gz");
  FILE *f = fopen(gz, "wb");
  CU_ASSERT_FATAL(f != NULL);
  int ok = fwrite(mb, 1, nb, f) == nb;
  for (size_t k = 0; k < copies && ok; ++k) ok = fwrite(mx, 1, nx, f) == nx;
  ok &= fwrite(mn, 1, nn, f) == nn;
  CU_ASSERT(fclose(f) == 0 && ok);
  CU_ASSERT(stat(gz, &sb) == 0 && (size_t)sb.st_size < copies * 4096); /* small on disk */
  snprintf(want, sizeof want, "%s:2: line longer than 1 MiB", gz);
  gs_coo_t *C = NULL;
  CU_ASSERT_EQUAL(gs_mm_read_coo(gz, &C), GS_ERR_PARSE);
  CU_ASSERT_STRING_EQUAL(gs_last_error(), want);
  free(mx);
  free(mb);
  free(mn);
#endif
}

/* A symmetric file with entries on both sides of the diagonal reads as SciPy reads it (each
 * mirrored: the pair summed) with the counts reported, and is refused by a strict read, with
 * the same message from every reader; the info of ok/ files. */
static void test_both_triangles(void)
{
  const char text[] = "%%MatrixMarket matrix coordinate real symmetric\n"
                      "3 3 4\n"
                      "1 1 4\n"
                      "2 1 -1\n"
                      "1 2 -1.5\n"
                      "3 2 2\n";
  const char *path = tmp_path("both.mtx");
  CU_ASSERT_FATAL(write_file(path, text, sizeof text - 1) == 0);
  char want[1200];
  snprintf(want, sizeof want,
           "%s:5: entry (1, 2) lies above the diagonal, entry (2, 1) on line 4 below it: a "
           "symmetric file with entries on both sides (2 below, 1 above) is refused by a strict "
           "read (each entry is mirrored, so pairs would be summed)",
           path);
  const size_t part_min = gs_mm_part_min;
  gs_mm_part_min = 1;
  for (int nt = 1; nt <= 3; nt += 2)
    for (int mem = 0; mem < 2; ++mem) {
      gs_mm_set_threads(nt);
      gs_mm_info_t info;
      memset(&info, 0x55, sizeof info);
      gs_csr_t *A = NULL;
      gs_status_t st = mem ? gs_mm_read_csr_mem_ex(path, text, sizeof text - 1, 0, &A, &info)
                           : gs_mm_read_csr_ex(path, 0, &A, &info);
      CU_ASSERT_EQUAL_FATAL(st, GS_SUCCESS);
      const double dense[] = {4, -2.5, 0, -2.5, 0, 2, 0, 2, 0};
      expect_dense(A, 3, 3, 5, dense);
      CU_ASSERT_EQUAL(info.lower, 2);
      CU_ASSERT_EQUAL(info.upper, 1);
      CU_ASSERT_EQUAL(info.stored, 4);
      CU_ASSERT_EQUAL(info.symmetry, GS_SYM_SYMMETRIC);
      CU_ASSERT_EQUAL(info.field, GS_MM_FIELD_REAL);
      CU_ASSERT_EQUAL(info.array, 0);
      gs_csr_destroy(&A);
      st = mem ? gs_mm_read_csr_mem_ex(path, text, sizeof text - 1, GS_MM_STRICT, &A, &info)
               : gs_mm_read_csr_ex(path, GS_MM_STRICT, &A, &info);
      CU_ASSERT_EQUAL(st, GS_ERR_PARSE);
      CU_ASSERT_STRING_EQUAL(gs_last_error(), want);
      CU_ASSERT_PTR_NULL(A);
    }
  gs_mm_set_threads(0);
  gs_mm_part_min = part_min;

  /* one triangle, either one: no count on the other side, strict reads it */
  gs_mm_info_t info;
  gs_csr_t *A = NULL;
  const char *one[] = {"ok/sym_lower.mtx", "ok/sym_upper.mtx", "ok/skew.mtx"};
  for (int k = 0; k < 3; ++k) {
    CU_ASSERT_EQUAL(gs_mm_read_csr_ex(data(one[k]), GS_MM_STRICT, &A, &info), GS_SUCCESS);
    CU_ASSERT(info.lower == 0 || info.upper == 0);
    CU_ASSERT(info.lower + info.upper > 0);
    gs_csr_destroy(&A);
  }
  /* field, layout and stored count of ok/ files, the count from their size lines */
  const struct {
    const char *file;
    gs_mm_field_t field;
    int array;
  } files[] = {{"ok/integer.mtx", GS_MM_FIELD_INTEGER, 0},
               {"ok/pattern_sym.mtx", GS_MM_FIELD_PATTERN, 0},
               {"ok/duplicates.mtx", GS_MM_FIELD_REAL, 0},
               {"ok/array.mtx", GS_MM_FIELD_REAL, 1}};
  for (int k = 0; k < 4; ++k) {
    size_t n = 0;
    char *raw = read_whole(data(files[k].file), &n), *t = calloc(n + 1, 1);
    CU_ASSERT_FATAL(raw != NULL && t != NULL);
    memcpy(t, raw, n); /* a string for sscanf */
    free(raw);
    const char *p = t;
    while (*p == '%') p = strchr(p, '\n') + 1; /* banner and comments */
    long long m = 0, c = 0, stored = 0;
    CU_ASSERT_FATAL(sscanf(p, "%lld %lld %lld", &m, &c, &stored) >= 2);
    if (files[k].array) stored = m * c;
    free(t);
    CU_ASSERT_EQUAL(gs_mm_read_csr_ex(data(files[k].file), 0, &A, &info), GS_SUCCESS);
    CU_ASSERT_EQUAL(info.field, files[k].field);
    CU_ASSERT_EQUAL(info.array, files[k].array);
    CU_ASSERT_EQUAL(info.stored, stored);
    CU_ASSERT_EQUAL(info.rows, m);
    CU_ASSERT_EQUAL(info.cols, c);
    CU_ASSERT_STRING_EQUAL(gs_mm_field_string(info.field),
                           files[k].field == GS_MM_FIELD_INTEGER   ? "integer"
                           : files[k].field == GS_MM_FIELD_PATTERN ? "pattern"
                                                                   : "real");
    gs_csr_destroy(&A);
  }
  CU_ASSERT_EQUAL(gs_mm_read_csr_ex(data("ok/skew.mtx"), 4u, &A, NULL), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_mm_read_csr_ex(NULL, 0, &A, NULL), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_mm_read_csr_ex(data("ok/skew.mtx"), 0, NULL, NULL), GS_ERR_INVALID_ARG);
}

/* Summed duplicates that are not finite name the entry that made them so: through a mirror of
 * a symmetric file, on every reader; from a pipe (which cannot be read again) by its number. */
static void test_duplicates_not_finite(void)
{
  const char sym[] = "%%MatrixMarket matrix coordinate real symmetric\n"
                     "% 1e308 and its mirror, then the other side\n"
                     "2 2 3\n"
                     "2 1 1e308\n"
                     "2 2 1\n"
                     "1 2 1e308\n";
  const char *path = tmp_path("dupsym.mtx");
  CU_ASSERT_FATAL(write_file(path, sym, sizeof sym - 1) == 0);
  char want[1200];
  snprintf(want, sizeof want,
           "%s:6: entry (1, 2) and the earlier ones at its position sum to +inf (duplicates are "
           "summed: the sum must be finite)",
           path);
  const size_t part_min = gs_mm_part_min;
  const int64_t csr_min = gs_coo_to_csr_min;
  gs_mm_part_min = 1;
  gs_coo_to_csr_min = 1;
  for (int nt = 1; nt <= 4; ++nt)
    for (int mem = 0; mem < 2; ++mem) {
      gs_mm_set_threads(nt);
      gs_csr_t *A = NULL;
      gs_status_t st = mem ? gs_mm_read_csr_mem(path, sym, sizeof sym - 1, &A)
                           : gs_mm_read_csr(path, &A);
      CU_ASSERT_EQUAL(st, GS_ERR_PARSE);
      CU_ASSERT_STRING_EQUAL(gs_last_error(), want);
      CU_ASSERT_PTR_NULL(A);
    }
  gs_mm_set_threads(0);
  gs_mm_part_min = part_min;
  gs_coo_to_csr_min = csr_min;
  /* once not finite, a sum stays so: the entry that made it so is named; the COO is read
   * as is (it sums nothing) */
  const char nan_text[] = "%%MatrixMarket matrix coordinate real general\n1 1 4\n"
                          "1 1 1e308\n1 1 1e308\n1 1 -1e308\n1 1 -1e308\n";
  gs_csr_t *A = NULL;
  CU_ASSERT_EQUAL(gs_mm_read_csr_mem("n.mtx", nan_text, sizeof nan_text - 1, &A), GS_ERR_PARSE);
  CU_ASSERT_STRING_EQUAL(gs_last_error(), "n.mtx:4: entry (1, 1) and the earlier ones at its "
                                          "position sum to +inf (duplicates are summed: the sum "
                                          "must be finite)");
  gs_coo_t *C = NULL;
  CU_ASSERT_EQUAL(gs_mm_read_coo_mem("n.mtx", nan_text, sizeof nan_text - 1, &C), GS_SUCCESS);
  CU_ASSERT(C && C->nnz == 4);
  gs_coo_destroy(&C);
  /* large sums that stay finite are read */
  const char fine[] = "%%MatrixMarket matrix coordinate real general\n1 1 3\n"
                      "1 1 1e308\n1 1 -1e308\n1 1 1e308\n";
  CU_ASSERT_EQUAL(gs_mm_read_csr_mem("f.mtx", fine, sizeof fine - 1, &A), GS_SUCCESS);
  CU_ASSERT(A && A->nnz == 1 && A->val[0] == 1e308);
  gs_csr_destroy(&A);

  const char *pipe = tmp_path("dup.fifo");
  pid_t pid = fifo_feed(pipe, sym, sizeof sym - 1);
  CU_ASSERT_FATAL(pid > 0);
  snprintf(want, sizeof want,
           "%s: entry 3, (1, 2), and the earlier ones at its position sum to +inf (duplicates "
           "are summed: the sum must be finite)",
           pipe);
  CU_ASSERT_EQUAL(gs_mm_read_csr(pipe, &A), GS_ERR_PARSE);
  CU_ASSERT_STRING_EQUAL(gs_last_error(), want);
  gs_test_fifo_done(pid);
  unlink(pipe);
}

/* Integer fields hold what a double holds exactly: up to 2^53 in magnitude, leading zeros and
 * signs allowed; one more is refused on its line. */
static void test_integer_range(void)
{
  const char ok_text[] = "%%MatrixMarket matrix coordinate integer general\n3 1 3\n"
                         "1 1 9007199254740992\n2 1 -9007199254740992\n3 1 +0009007199254740991\n";
  gs_val_t *x = NULL;
  gs_idx_t n = 0;
  CU_ASSERT_EQUAL_FATAL(gs_mm_read_vector_mem("i.mtx", ok_text, sizeof ok_text - 1, &x, &n),
                        GS_SUCCESS);
  CU_ASSERT(n == 3 && x[0] == 9007199254740992.0 && x[1] == -9007199254740992.0 &&
            x[2] == 9007199254740991.0);
  free(x);
  const char *bad[] = {"-9007199254740993", "10000000000000000", "18446744073709551616"};
  for (int k = 0; k < 3; ++k) {
    char t[256], want[256];
    snprintf(t, sizeof t, "%%%%MatrixMarket matrix array integer general\n2 1\n%% c\n5\n%s\n",
             bad[k]);
    snprintf(want, sizeof want,
             "i.mtx:5: integer out of range: '%s' is beyond 2^53 in magnitude (not exact as a "
             "double)",
             bad[k]);
    CU_ASSERT_EQUAL(gs_mm_read_vector_mem("i.mtx", t, strlen(t), &x, &n), GS_ERR_PARSE);
    CU_ASSERT_STRING_EQUAL(gs_last_error(), want);
  }
  /* a real field is not an integer field: 2^53 + 1 there rounds as strtod() does */
  const char real_text[] = "%%MatrixMarket matrix array real general\n1 1\n9007199254740993\n";
  CU_ASSERT_EQUAL(gs_mm_read_vector_mem("r.mtx", real_text, sizeof real_text - 1, &x, &n),
                  GS_SUCCESS);
  CU_ASSERT(x && x[0] == 9007199254740992.0);
  free(x);
}

/* ---- I/O failures and arguments ------------------------------------------------------------- */

static void test_io_errors(void)
{
  char want[4400];
  gs_csr_t *A = NULL;
  const char *missing = data("no_such_file.mtx");
  snprintf(want, sizeof want, "%s: cannot open: No such file or directory", missing);
  CU_ASSERT_EQUAL(gs_mm_read_csr(missing, &A), GS_ERR_IO);
  CU_ASSERT_STRING_EQUAL(gs_last_error(), want);
  const char *dir = data("ok");
  snprintf(want, sizeof want, "%s: cannot open: Is a directory", dir);
  CU_ASSERT_EQUAL(gs_mm_read_csr(dir, &A), GS_ERR_IO);
  CU_ASSERT_STRING_EQUAL(gs_last_error(), want);
  CU_ASSERT_PTR_NULL(A);

  CU_ASSERT_EQUAL(gs_mm_read_csr(NULL, &A), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_mm_read_csr(missing, NULL), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_mm_read_coo(NULL, NULL), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_mm_read_vector(missing, NULL, NULL), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_mm_write_csr(NULL, NULL), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_mm_write_csr_stream(NULL, NULL), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_mm_write_vector(NULL, NULL, 3), GS_ERR_INVALID_ARG);

  /* writing into a directory that does not exist */
  A = read_csr_ok(data("ok/skew.mtx"));
  CU_ASSERT_EQUAL(gs_mm_write_csr("/nonexistent_gs_dir/a.mtx", A), GS_ERR_IO);
  CU_ASSERT(strncmp(gs_last_error(), "/nonexistent_gs_dir/a.mtx: ", 27) == 0);
  /* a matrix with a NaN is refused before anything is written */
  A->val[0] = NAN;
  CU_ASSERT_EQUAL(gs_mm_write_csr(tmp_path("nan.mtx"), A), GS_ERR_INVALID_ARG);
  CU_ASSERT(access(tmp_path("nan.mtx"), F_OK) != 0);
  gs_csr_destroy(&A);
}

/* A write that fails half-way (the file size limit) leaves the old file and no temporary. */
static void test_failed_write_leaves_no_partial_file(void)
{
  gs_csr_t *small = read_csr_ok(data("ok/sym_lower.mtx")), *back = NULL;
  uint64_t s = gs_test_seed() ^ 0xf11e;
  gs_csr_t *big = gs_test_random_csr(&s, 300, 300, 0.3); /* ~27000 entries, ~900 KB */
  CU_ASSERT_FATAL(small && big);
  const char *names[] = {"keep.mtx", "keep.mtx.gz"};
  for (int k = 0; k < (gs_mm_has_gzip() ? 2 : 1); ++k) {
    char path[600];
    snprintf(path, sizeof path, "%s", tmp_path(names[k]));
    CU_ASSERT_FATAL(gs_mm_write_csr(path, small) == GS_SUCCESS);
    int before = count_files();

    struct rlimit old, lim;
    CU_ASSERT_FATAL(getrlimit(RLIMIT_FSIZE, &old) == 0);
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
    lim = old;
    lim.rlim_cur = 64 * 1024; /* compressed, the big matrix is still well over this */
    CU_ASSERT_FATAL(setrlimit(RLIMIT_FSIZE, &lim) == 0);
    gs_status_t st = gs_mm_write_csr(path, big);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, prev);

    CU_ASSERT_EQUAL(st, GS_ERR_IO);
    CU_ASSERT(strncmp(gs_last_error(), path, strlen(path)) == 0);
    CU_ASSERT_EQUAL(count_files(), before);
    back = read_csr_ok(path);
    CU_ASSERT(csr_identical(small, back));
    gs_csr_destroy(&back);
  }
  gs_csr_destroy(&small);
  gs_csr_destroy(&big);
}

/* ---- the parallel reader -------------------------------------------------------------------- */

static int coo_identical(const gs_coo_t *A, const gs_coo_t *B)
{
  if (!A || !B || A->m != B->m || A->n != B->n || A->nnz != B->nnz ||
      A->symmetry != B->symmetry)
    return 0;
  size_t n = (size_t)A->nnz;
  return n == 0 || (memcmp(A->row, B->row, n * sizeof *A->row) == 0 &&
                    memcmp(A->col, B->col, n * sizeof *A->col) == 0 &&
                    memcmp(A->val, B->val, n * sizeof *A->val) == 0);
}

static int write_text(const char *path, const char *t, size_t n)
{
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  size_t w = fwrite(t, 1, n, f);
  return (fclose(f) == 0 && w == n) ? 0 : -1;
}

/* Reads path with 1 thread and with 2..5, parts of one byte (so even small files are split
 * everywhere), from the file (mapped) and from memory: the same COO and CSR bit for bit, the
 * CSR equal to gs_coo_to_csr's, or the same status and message. Returns 1 when all agree. */
static int parallel_agrees(const char *path, const char *label)
{
  size_t len = 0;
  char *text = read_whole(path, &len);
  if (!text) return 0;
  gs_coo_t *C1 = NULL, *C = NULL;
  gs_csr_t *A1 = NULL, *A = NULL, *R = NULL;
  char msg[1100];
  int ok = 1;
  gs_mm_set_threads(1);
  gs_status_t s1 = gs_mm_read_coo(path, &C1);
  snprintf(msg, sizeof msg, "%s", gs_last_error());
  gs_status_t s1c = gs_mm_read_csr(path, &A1);
  char msgc[1100];
  snprintf(msgc, sizeof msgc, "%s", gs_last_error());
  if (s1 == GS_SUCCESS && gs_coo_to_csr(&R, C1) == GS_SUCCESS) {
    /* the reader refuses exactly the CSRs with a sum of duplicates that is not finite */
    int finite = 1;
    for (gs_off_t k = 0; k < R->nnz; ++k) finite &= isfinite(R->val[k]) != 0;
    if (s1c == GS_SUCCESS ? !csr_identical(A1, R) : finite || !strstr(msgc, "sum to")) {
      printf("\n  %s: the CSR on one thread differs from gs_coo_to_csr's: %s\n", label,
             s1c == GS_SUCCESS ? "(read)" : msgc);
      ok = 0;
    }
  }
  const size_t part_min = gs_mm_part_min;
  const int64_t csr_min = gs_coo_to_csr_min;
  gs_mm_part_min = 1;
  gs_coo_to_csr_min = 1;
  for (int nt = 2; nt <= 5 && ok; ++nt) {
    gs_mm_set_threads(nt);
    for (int mem = 0; mem < 2 && ok; ++mem) {
      gs_status_t st = mem ? gs_mm_read_coo_mem(path, text, len, &C) : gs_mm_read_coo(path, &C);
      if (st != s1 || (st != GS_SUCCESS && strcmp(msg, gs_last_error()) != 0) ||
          (st == GS_SUCCESS && !coo_identical(C1, C))) {
        printf("\n  %s, %d threads%s: COO differs: %s\n  serial: %s\n", label, nt,
               mem ? " (memory)" : "", st == GS_SUCCESS ? "(read)" : gs_last_error(),
               s1 == GS_SUCCESS ? "(read)" : msg);
        ok = 0;
      }
      gs_coo_destroy(&C);
      st = mem ? gs_mm_read_csr_mem(path, text, len, &A) : gs_mm_read_csr(path, &A);
      if (st != s1c || (st == GS_SUCCESS && !csr_identical(A1, A)) ||
          (st != GS_SUCCESS && strcmp(msgc, gs_last_error()) != 0)) {
        printf("\n  %s, %d threads%s: CSR differs\n", label, nt, mem ? " (memory)" : "");
        ok = 0;
      }
      gs_csr_destroy(&A);
    }
  }
  gs_mm_part_min = part_min;
  gs_coo_to_csr_min = csr_min;
  gs_mm_set_threads(0);
  gs_coo_destroy(&C1);
  gs_csr_destroy(&A1);
  gs_csr_destroy(&R);
  free(text);
  return ok;
}

static void test_parallel_ok_files(void)
{
  static const char *const names[] = {
    "array.mtx", "array_skew.mtx", "array_sym.mtx", "duplicates.mtx", "empty_0x0.mtx",
    "empty_3x3.mtx", "integer.mtx", "layout.mtx", "pattern.mtx", "pattern_sym.mtx", "skew.mtx",
    "sym_lower.mtx", "sym_upper.mtx", "values.mtx", "vector.mtx", "vector_coord.mtx",
    "vector_int.mtx"};
  for (size_t k = 0; k < sizeof names / sizeof *names; ++k) {
    char rel[64];
    snprintf(rel, sizeof rel, "ok/%s", names[k]);
    CU_ASSERT(parallel_agrees(data(rel), names[k]));
  }
  if (!gs_test_have_matrices()) return;
  const char *real[] = {"west0479", "494_bus", "lp_e226", "fs_183_1"};
  for (int k = 0; k < 4; ++k) CU_ASSERT(parallel_agrees(gs_test_matrix(real[k]), real[k]));
}

/* A random coordinate file as text: any field and symmetry, entries in random order with
 * duplicates, comments, blank lines, CRLF and tabs scattered, maybe no final newline. */
static char *random_mm_text(uint64_t *s, size_t *len, int64_t *entry_line0, int64_t *nentries)
{
  static const char *const fields[] = {"real", "integer", "pattern"};
  static const char *const syms[] = {"general", "symmetric", "skew-symmetric"};
  int field = (int)(gs_test_next(s) % 3), sym = (int)(gs_test_next(s) % 3);
  if (field == 2 && sym == 2) sym = 1; /* pattern cannot be skew */
  int m = 1 + (int)(gs_test_next(s) % 60), n = sym ? m : 1 + (int)(gs_test_next(s) % 60);
  int64_t want = (int64_t)(gs_test_next(s) % 400);
  size_t cap = 256 + (size_t)want * 80, k = 0;
  char *t = malloc(cap);
  if (!t) return NULL;
  k += (size_t)snprintf(t, cap, "%%%%MatrixMarket matrix coordinate %s %s\n%% random\n%d %d %lld\n",
                        fields[field], syms[sym], m, n, (long long)want);
  int64_t line = 4;
  *entry_line0 = line;
  for (int64_t e = 0; e < want; ++e) {
    while (gs_test_uniform(s) < 0.05) { /* comments and blank lines among the entries */
      k += (size_t)snprintf(t + k, cap - k, gs_test_next(s) & 1 ? "%% c\n" : " \t\n");
      ++line;
    }
    int i = 1 + (int)(gs_test_next(s) % (uint64_t)m), j = 1 + (int)(gs_test_next(s) % (uint64_t)n);
    if (sym && i < j) {
      int x = i;
      i = j;
      j = x;
    }
    if (sym == 2 && i == j) { /* skew: no diagonal (a 1 x 1 one gets an explicit zero) */
      if (m == 1) {
        k += (size_t)snprintf(t + k, cap - k, "1 1 0\n");
        ++line;
        continue;
      }
      if (i < m) ++i;
      else --j;
    }
    const char *sep = gs_test_next(s) % 8 ? " " : "\t ";
    k += (size_t)snprintf(t + k, cap - k, "%d%s%d", i, sep, j);
    if (field == 0) k += (size_t)snprintf(t + k, cap - k, " %.17g", draw_value(s));
    if (field == 1) k += (size_t)snprintf(t + k, cap - k, " %d", (int)(gs_test_next(s) % 2001) - 1000);
    k += (size_t)snprintf(t + k, cap - k, gs_test_next(s) % 10 ? "\n" : "\r\n");
    ++line;
  }
  if (k > 0 && gs_test_next(s) % 4 == 0 && t[k - 1] == '\n') --k; /* no final newline */
  *nentries = want;
  *len = k;
  (void)line;
  return t;
}

static void test_parallel_random_files(void)
{
  uint64_t s = gs_test_seed() ^ 0x9a7a11e1;
  int rounds = gs_test_quick() ? 10 : 80;
  for (int r = 0; r < rounds; ++r) {
    size_t len = 0;
    int64_t line0 = 0, want = 0;
    char *t = random_mm_text(&s, &len, &line0, &want);
    CU_ASSERT_FATAL(t != NULL);
    const char *path = tmp_path("par.mtx");
    CU_ASSERT_FATAL(write_text(path, t, len) == 0);
    char label[64];
    snprintf(label, sizeof label, "random file %d", r);
    CU_ASSERT(parallel_agrees(path, label));
    free(t);
  }
}

/* Faults in later parts of a large file: the first in file order is reported, with the line
 * number the serial reader gives. */
static void test_parallel_error_lines(void)
{
  uint64_t s = gs_test_seed() ^ 0xe7707;
  const int64_t entries = gs_test_quick() ? 20000 : 100000;
  size_t cap = (size_t)entries * 40 + 256, n = 0;
  char *t = malloc(cap);
  size_t *at = malloc((size_t)entries * sizeof *at); /* where each entry line starts */
  CU_ASSERT_FATAL(t && at);
  n += (size_t)snprintf(t, cap, "%%%%MatrixMarket matrix coordinate real general\n%% c\n%d %d %lld\n",
                        1000, 1000, (long long)entries);
  for (int64_t e = 0; e < entries; ++e) {
    at[e] = n;
    n += (size_t)snprintf(t + n, cap - n, "%d %d %.17g\n", 1 + (int)(gs_test_next(&s) % 1000),
                          1 + (int)(gs_test_next(&s) % 1000), 2 * gs_test_uniform(&s) - 1);
  }
  const char *path = tmp_path("err.mtx");
  const size_t part_min = gs_mm_part_min;
  gs_mm_part_min = 4096;
  for (int r = 0; r < (gs_test_quick() ? 4 : 12); ++r) {
    /* one or two spoilt entries: a row index 0 (the length is kept) */
    int64_t e1 = (int64_t)(gs_test_next(&s) % (uint64_t)entries);
    int64_t e2 = (int64_t)(gs_test_next(&s) % (uint64_t)entries);
    char save1 = t[at[e1]], save2 = t[at[e2]];
    t[at[e1]] = 'x';
    if (r % 2) t[at[e2]] = '%'; /* the second one a comment: one entry too few after e1 */
    CU_ASSERT_FATAL(write_text(path, t, n) == 0);
    char want[700];
    int64_t first = e1;
    snprintf(want, sizeof want, "%s:%lld: row index 'x", path, (long long)(e1 + 4));
    for (int nt = 1; nt <= 4; ++nt) {
      gs_mm_set_threads(nt);
      gs_coo_t *C = NULL;
      CU_ASSERT_EQUAL(gs_mm_read_coo(path, &C), GS_ERR_PARSE);
      if (strncmp(gs_last_error(), want, strlen(want)) != 0) {
        printf("\n  %d threads: %s\n  want %s...\n", nt, gs_last_error(), want);
        CU_FAIL("wrong first fault");
      }
    }
    (void)first;
    t[at[e1]] = save1;
    t[at[e2]] = save2;
  }
  /* extra entries at the end of a later part, and a fault after them: "more entries" wins */
  n += (size_t)snprintf(t + n, cap - n, "1 1 1\n1 1 zz\n");
  CU_ASSERT_FATAL(write_text(path, t, n) == 0);
  char want[700];
  snprintf(want, sizeof want, "%s:%lld: more entries than the %lld declared in the size line",
           path, (long long)(entries + 4), (long long)entries);
  for (int nt = 1; nt <= 4; ++nt) {
    gs_mm_set_threads(nt);
    gs_coo_t *C = NULL;
    CU_ASSERT_EQUAL(gs_mm_read_coo(path, &C), GS_ERR_PARSE);
    CU_ASSERT_STRING_EQUAL(gs_last_error(), want);
  }
  /* a file cut short */
  n = at[entries - 3];
  CU_ASSERT_FATAL(write_text(path, t, n) == 0);
  snprintf(want, sizeof want, "%s: expected %lld entries, found %lld at end of file", path,
           (long long)entries, (long long)(entries - 3));
  for (int nt = 1; nt <= 4; ++nt) {
    gs_mm_set_threads(nt);
    gs_csr_t *A = NULL;
    CU_ASSERT_EQUAL(gs_mm_read_csr(path, &A), GS_ERR_PARSE);
    CU_ASSERT_STRING_EQUAL(gs_last_error(), want);
  }
  gs_mm_set_threads(0);
  gs_mm_part_min = part_min;
  free(at);
  free(t);
}

/* The threaded COO -> CSR against gs_coo_to_csr on random COOs: unsorted, duplicates (many of
 * one entry, so that the order of summation shows), empty rows, rows long enough for the merge
 * sort, one dense row. */
static void test_parallel_csr_build(void)
{
  uint64_t s = gs_test_seed() ^ 0xc5b;
  const int64_t csr_min = gs_coo_to_csr_min;
  gs_coo_to_csr_min = 1;
  int rounds = gs_test_quick() ? 8 : 40;
  for (int r = 0; r < rounds; ++r) {
    gs_idx_t m = (gs_idx_t)(gs_test_next(&s) % 300), n = 1 + (gs_idx_t)(gs_test_next(&s) % 300);
    int64_t nnz = m ? (int64_t)(gs_test_next(&s) % 5000) : 0;
    gs_coo_t *C = NULL;
    CU_ASSERT_FATAL(gs_coo_create(&C, m, n, nnz) == GS_SUCCESS);
    gs_idx_t dense = m ? (gs_idx_t)(gs_test_next(&s) % (uint64_t)m) : 0;
    for (int64_t k = 0; k < nnz; ++k) {
      uint64_t u = gs_test_next(&s) % 10;
      gs_idx_t i = u < 3 ? dense : (gs_idx_t)(gs_test_next(&s) % (uint64_t)m);
      gs_idx_t j = u == 9 ? 0 : (gs_idx_t)(gs_test_next(&s) % (uint64_t)n);
      C->row[k] = i;
      C->col[k] = j;
      C->val[k] = draw_value(&s);
    }
    C->nnz = nnz;
    gs_csr_t *R = NULL, *A = NULL;
    CU_ASSERT_FATAL(gs_coo_to_csr(&R, C) == GS_SUCCESS);
    for (int nt = 1; nt <= 6; ++nt) {
      CU_ASSERT_FATAL(gs_coo_to_csr_threads(&A, C, nt) == GS_SUCCESS);
      if (!csr_identical(R, A)) {
        printf("\n  %d x %d, %lld entries, %d threads: differs from gs_coo_to_csr\n", m, n,
               (long long)nnz, nt);
        CU_FAIL("threaded CSR build differs");
      }
      gs_csr_destroy(&A);
    }
    gs_csr_destroy(&R);
    gs_coo_destroy(&C);
  }
  gs_coo_to_csr_min = csr_min;
}

static void test_thread_setting(void)
{
  gs_mm_set_threads(3);
  CU_ASSERT_EQUAL(gs_mm_threads(), 3);
  gs_mm_set_threads(0);
  setenv("GS_THREADS", "5", 1);
  CU_ASSERT_EQUAL(gs_mm_threads(), 5);
  setenv("GS_THREADS", "x", 1);
  CU_ASSERT(gs_mm_threads() >= 1);
  setenv("GS_THREADS", "0", 1);
  CU_ASSERT(gs_mm_threads() >= 1);
  unsetenv("GS_THREADS");
  CU_ASSERT_EQUAL(gs_mm_threads(), (int)sysconf(_SC_NPROCESSORS_ONLN));
  gs_mm_set_threads(100000);
  CU_ASSERT_EQUAL(gs_mm_threads(), 1024);
  gs_mm_set_threads(0);
}

/* ---- the number parser ----------------------------------------------------------------------- */

static void test_parse_double_matches_strtod(void)
{
  uint64_t s = gs_test_seed() ^ 0xd0b1e;
  long n = gs_test_quick() ? 20000 : 400000, bad = 0;
  char t[96];
  for (long it = 0; it < n; ++it) {
    double d;
    uint64_t bits = gs_test_next(&s);
    switch (gs_test_next(&s) % 6) {
    case 0: /* any finite double, shortest-exact form */
      memcpy(&d, &bits, sizeof d);
      if (!isfinite(d)) d = 0.5;
      snprintf(t, sizeof t, "%.17g", d);
      break;
    case 1: /* fewer digits, exponent form */
      memcpy(&d, &bits, sizeof d);
      if (!isfinite(d)) d = 0.25;
      snprintf(t, sizeof t, "%.*e", (int)(gs_test_next(&s) % 19), d);
      break;
    case 2: /* uniform in [-1, 1) as most matrix files hold */
      snprintf(t, sizeof t, "%.17g", 2 * gs_test_uniform(&s) - 1);
      break;
    case 3: { /* random digit strings with a point and an exponent somewhere */
      int nd = 1 + (int)(gs_test_next(&s) % 24), k = 0, dot = (int)(gs_test_next(&s) % 26);
      if (gs_test_next(&s) & 1) t[k++] = '-';
      for (int i = 0; i < nd; ++i) {
        if (i == dot) t[k++] = '.';
        t[k++] = (char)('0' + gs_test_next(&s) % 10);
      }
      if (gs_test_next(&s) & 1)
        k += snprintf(t + k, sizeof t - (size_t)k, "e%d", (int)(gs_test_next(&s) % 700) - 350);
      t[k] = '\0';
      break;
    }
    case 4: /* exact binary values printed in full: ties of the rounding */
      d = ldexp((double)(gs_test_next(&s) >> 11), (int)(gs_test_next(&s) % 120) - 60);
      snprintf(t, sizeof t, "%.30g", d);
      break;
    default: /* 19-digit mantissas over the whole exponent range */
      snprintf(t, sizeof t, "%llue%d",
               (unsigned long long)(gs_test_next(&s) % 10000000000000000000ull),
               (int)(gs_test_next(&s) % 660) - 342);
      break;
    }
    double a = 0, b;
    char *eb;
    const char *ea = gs_mm_parse_double(t, &a);
    b = strtod(t, &eb);
    if (memcmp(&a, &b, sizeof a) != 0 || ea != eb) {
      if (bad++ < 5) printf("\n  \"%s\": %.17g, strtod %.17g\n", t, a, b);
    }
  }
  static const char *const edge[] = {
    "0", "-0", "0.0", "1e-400", "2.2250738585072011e-308", "2.2250738585072014e-308",
    "4.9406564584124654e-324", "2.4703282292062328e-324", "1.7976931348623157e308",
    "1.7976931348623158e308", "1.7976931348623159e308", "9007199254740993", "9007199254740992.5",
    "123456789012345678901234", "0.1", "1e23", "1e22", "1e-22", ".5", "5.", "-.5e-3", "+3",
    "1e", "1e+", "0x1p3", "inf", "nan", "-infinity", ".", "-", "9999999999999999999",
    "18446744073709551615", "18446744073709551616", "7.2057594037927933e16", "1.5 ", "2\t"};
  for (size_t k = 0; k < sizeof edge / sizeof *edge; ++k) {
    double a = 0, b;
    char *eb;
    const char *ea = gs_mm_parse_double(edge[k], &a);
    b = strtod(edge[k], &eb);
    if (memcmp(&a, &b, sizeof a) != 0 || ea != eb) {
      ++bad;
      printf("\n  \"%s\": %.17g, strtod %.17g\n", edge[k], a, b);
    }
  }
  CU_ASSERT_EQUAL(bad, 0);
}

int main(void)
{
  CU_TestInfo tests[] = {
    {"symmetric storage is mirrored", test_symmetric_expansion},
    {"skew-symmetric storage is mirrored negated", test_skew_expansion},
    {"pattern entries read as 1.0", test_pattern_reads_ones},
    {"integer field", test_integer_field},
    {"duplicates summed in CSR, explicit zeros kept", test_duplicates_summed_zeros_kept},
    {"comments, blank lines, CRLF, case, no final newline", test_layout_leniency},
    {"number syntax matches strtod", test_number_syntax},
    {"array (dense) matrices", test_array_matrices},
    {"empty matrices", test_empty_matrices},
    {"long lines, block boundaries, far line numbers", test_long_lines_and_blocks},
    {"vectors: array, coordinate, write and read back", test_vectors},
    {"gzip: on exactly when built with zlib", test_gzip_build},
    {"gzip: read, magic bytes, truncated stream, write (without zlib: refused)", test_gzip},
    {"real matrices round trip bit for bit", test_roundtrip_real_matrices},
    {"random matrices round trip bit for bit", test_roundtrip_random},
    {"nonzero counts match MANIFEST.tsv", test_manifest_counts},
    {"malformed corpus: one exact message per file", test_malformed_corpus},
    {"malformed corpus: the same messages on 2-4 threads", test_malformed_corpus_parallel},
    {"parallel reader: ok/ files as on one thread", test_parallel_ok_files},
    {"parallel reader: random files as on one thread", test_parallel_random_files},
    {"parallel reader: first fault in file order, its line", test_parallel_error_lines},
    {"threaded CSR build equals gs_coo_to_csr", test_parallel_csr_build},
    {"thread count: setter, GS_THREADS, default", test_thread_setting},
    {"I/O errors and bad arguments", test_io_errors},
    {"a failed write leaves no partial file", test_failed_write_leaves_no_partial_file},
    {"number parser matches strtod bit for bit", test_parse_double_matches_strtod},
    {"memory budget: declared sizes priced before allocating", test_memory_budget},
    {"line bound: /dev/zero, NUL bytes, CR line ends, a 1 GiB line in a .gz", test_line_bound},
    {"symmetric files with both triangles: counts, strict, info", test_both_triangles},
    {"duplicates summing to a value that is not finite", test_duplicates_not_finite},
    {"integer field range: 2^53", test_integer_range},
    CU_TEST_INFO_NULL,
  };
  return gs_test_main("mm", tests, 0);
}
