/* tests/test_cli.c: the gpusolve command line (info, gen, spmv, check) as a user runs it:
 * outputs, exit statuses and one-line errors. Host suite: device-only paths are checked for
 * their no-GPU behaviour here and exercised by the GPU suites elsewhere. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/testutil.h"

static char out[1 << 16], err[1 << 14];

/* Value of "key": in a flat JSON document (numbers only). */
static long long json_ll(const char *doc, const char *key)
{
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\":", key);
  const char *p = strstr(doc, pat);
  return p ? strtoll(p + strlen(pat), NULL, 10) : -1;
}

/* name, rows, cols, nnz_full of the matrix folder's MANIFEST.tsv (data, read from the file). */
static void test_info_matches_manifest(void)
{
  if (!gs_test_have_matrices()) return;
  char path[4096];
  snprintf(path, sizeof path, "%s/MANIFEST.tsv", gs_test_matrix_dir());
  FILE *f = fopen(path, "r");
  CU_ASSERT_FATAL(f != NULL);
  char line[8192];
  int checked = 0;
  CU_ASSERT_FATAL(fgets(line, sizeof line, f) != NULL); /* header */
  while (fgets(line, sizeof line, f)) {
    char *save = NULL, *fld[8];
    int k = 0;
    for (char *t = strtok_r(line, "\t", &save); t && k < 8; t = strtok_r(NULL, "\t", &save))
      fld[k++] = t;
    if (k < 8) continue;
    if (gs_test_quick() && checked >= 3) break;
    if (!gs_test_have_matrix(fld[0])) continue;
    char args[4200];
    snprintf(args, sizeof args, "info '%s' --json", gs_test_matrix(fld[0]));
    int rc = gs_test_cli(args, out, sizeof out, err, sizeof err);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_EQUAL(json_ll(out, "rows"), atoll(fld[4]));
    CU_ASSERT_EQUAL(json_ll(out, "cols"), atoll(fld[5]));
    CU_ASSERT_EQUAL(json_ll(out, "nnz"), atoll(fld[7]));
    if (json_ll(out, "nnz") != atoll(fld[7])) fprintf(stderr, "  %s: %s\n", fld[0], out);
    checked++;
  }
  fclose(f);
  CU_ASSERT(checked >= 3);
}

static void test_info_errors(void)
{
  CU_ASSERT_EQUAL(gs_test_cli("info", out, sizeof out, err, sizeof err), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT_EQUAL(gs_test_cli("info /nonexistent/A.mtx", out, sizeof out, err, sizeof err), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT(strstr(err, "/nonexistent/A.mtx") != NULL);
  CU_ASSERT_EQUAL(gs_test_cli("info --bogus x.mtx", out, sizeof out, err, sizeof err), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT_EQUAL(gs_test_cli("info --help", out, sizeof out, err, sizeof err), 0);
  CU_ASSERT(strstr(out, "usage: gpusolve info") != NULL);
  CU_ASSERT_EQUAL(gs_test_cli("frobnicate", out, sizeof out, err, sizeof err), 2);
  CU_ASSERT(gs_test_one_line_error(err));
}

/* Every file of the malformed corpus: exit 2 and one line on stderr naming the file. */
static void test_info_malformed_corpus(void)
{
  DIR *d = opendir(gs_test_data("bad"));
  CU_ASSERT_FATAL(d != NULL);
  int files = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    /* vector_* files are valid matrices that are malformed only as vectors (test_mm) */
    if (e->d_name[0] == '.' || strncmp(e->d_name, "vector_", 7) == 0) continue;
    char path[4096], args[4200];
    snprintf(path, sizeof path, "%s/%s", gs_test_data("bad"), e->d_name);
    snprintf(args, sizeof args, "info '%s'", path);
    int rc = gs_test_cli(args, out, sizeof out, err, sizeof err);
    if (rc != 2 || !gs_test_one_line_error(err) || !strstr(err, path))
      fprintf(stderr, "  %s: exit %d, stderr: %s", e->d_name, rc, err);
    CU_ASSERT_EQUAL(rc, 2);
    CU_ASSERT(gs_test_one_line_error(err));
    CU_ASSERT(strstr(err, path) != NULL);
    CU_ASSERT_STRING_EQUAL(out, ""); /* no partial output */
    files++;
  }
  closedir(d);
  CU_ASSERT(files >= 25);
}

static void test_gen_and_read_back(void)
{
  char path[4608], args[4800];
  snprintf(path, sizeof path, "%s", gs_test_tmpfile("gen.mtx"));
  snprintf(args, sizeof args, "gen laplace --grid 20x30 --stencil 5 -o %s", path);
  CU_ASSERT_EQUAL(gs_test_cli(args, out, sizeof out, err, sizeof err), 0);
  snprintf(args, sizeof args, "info %s --json", path);
  CU_ASSERT_EQUAL(gs_test_cli(args, out, sizeof out, err, sizeof err), 0);
  CU_ASSERT_EQUAL(json_ll(out, "rows"), 600);
  CU_ASSERT_EQUAL(json_ll(out, "nnz"), 5 * 600 - 2 * 20 - 2 * 30);
  CU_ASSERT(strstr(out, "\"numerically_symmetric\":true") != NULL);
  CU_ASSERT(strstr(out, "\"diagonal_positive\":true") != NULL);
  /* same seed, same output on stdout */
  char a1[1 << 15];
  CU_ASSERT_EQUAL(gs_test_cli("gen random --rows 50 --per-row 3 --seed 7", a1, sizeof a1, err,
                              sizeof err), 0);
  CU_ASSERT_EQUAL(gs_test_cli("gen random --rows 50 --per-row 3 --seed 7", out, sizeof out, err,
                              sizeof err), 0);
  CU_ASSERT_STRING_EQUAL(a1, out);
  CU_ASSERT(strncmp(out, "%%MatrixMarket matrix coordinate real general", 45) == 0);
  CU_ASSERT_EQUAL(gs_test_cli("gen powerlaw --rows 60 --mean 3 --exponent 2.2 --seed 7", a1,
                              sizeof a1, err, sizeof err), 0);
  CU_ASSERT_EQUAL(gs_test_cli("gen powerlaw --rows 60 --mean 3 --exponent 2.2 --seed 7", out,
                              sizeof out, err, sizeof err), 0);
  CU_ASSERT_STRING_EQUAL(a1, out);
  CU_ASSERT(strncmp(out, "%%MatrixMarket matrix coordinate real general", 45) == 0);
  unlink(path);
}

/* gen convdiff: what info reads back is the 5-point pattern, nonsymmetric for P > 0 and
 * symmetric for P = 0, with a positive diagonal (an M-matrix). */
static void test_gen_convdiff(void)
{
  char path[4608], args[4800];
  snprintf(path, sizeof path, "%s", gs_test_tmpfile("convdiff.mtx"));
  snprintf(args, sizeof args, "gen convdiff --grid 20x30 --peclet 40 -o %s", path);
  CU_ASSERT_EQUAL(gs_test_cli(args, out, sizeof out, err, sizeof err), 0);
  snprintf(args, sizeof args, "info %s --json", path);
  CU_ASSERT_EQUAL(gs_test_cli(args, out, sizeof out, err, sizeof err), 0);
  CU_ASSERT_EQUAL(json_ll(out, "rows"), 600);
  CU_ASSERT_EQUAL(json_ll(out, "nnz"), 5 * 600 - 2 * 20 - 2 * 30);
  CU_ASSERT(strstr(out, "\"numerically_symmetric\":false") != NULL);
  CU_ASSERT(strstr(out, "\"structurally_symmetric\":true") != NULL);
  CU_ASSERT(strstr(out, "\"diagonal_positive\":true") != NULL);
  snprintf(args, sizeof args, "gen convdiff --grid 6x5x4 --peclet 0 --field rotate -o %s", path);
  CU_ASSERT_EQUAL(gs_test_cli(args, out, sizeof out, err, sizeof err), 0);
  snprintf(args, sizeof args, "info %s --json", path);
  CU_ASSERT_EQUAL(gs_test_cli(args, out, sizeof out, err, sizeof err), 0);
  CU_ASSERT_EQUAL(json_ll(out, "nnz"), 7 * 120 - 2 * (5 * 4 + 6 * 4 + 6 * 5));
  CU_ASSERT(strstr(out, "\"numerically_symmetric\":true") != NULL);
  /* the random field follows the seed */
  char a1[1 << 15];
  CU_ASSERT_EQUAL(gs_test_cli("gen convdiff --grid 6x5 --field random --seed 3", a1, sizeof a1,
                              err, sizeof err), 0);
  CU_ASSERT_EQUAL(gs_test_cli("gen convdiff --grid 6x5 --field random --seed 3", out,
                              sizeof out, err, sizeof err), 0);
  CU_ASSERT_STRING_EQUAL(a1, out);
  CU_ASSERT_EQUAL(gs_test_cli("gen convdiff --grid 6x5 --field random --seed 4", out,
                              sizeof out, err, sizeof err), 0);
  CU_ASSERT(strcmp(a1, out) != 0);
  /* errors: one line */
  CU_ASSERT_EQUAL(gs_test_cli("gen convdiff", out, sizeof out, err, sizeof err), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT(strstr(err, "--grid") != NULL);
  CU_ASSERT_EQUAL(gs_test_cli("gen convdiff --grid 5x5 --field swirl", out, sizeof out, err,
                              sizeof err), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT(strstr(err, "swirl") != NULL);
  CU_ASSERT_EQUAL(gs_test_cli("gen convdiff --grid 5x5 --peclet -1", out, sizeof out, err,
                              sizeof err), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  unlink(path);
}

/* Whether the file at path reads back as exactly A (sizes, pattern, values bit for bit). */
static int reads_back_as(const char *path, const gs_csr_t *A)
{
  gs_csr_t *R = NULL;
  if (gs_mm_read_csr(path, &R) != GS_SUCCESS) return 0;
  int same = R->m == A->m && R->n == A->n && R->nnz == A->nnz &&
             !memcmp(R->row_ptr, A->row_ptr, ((size_t)A->m + 1) * sizeof *A->row_ptr) &&
             !memcmp(R->col, A->col, (size_t)A->nnz * sizeof *A->col) &&
             !memcmp(R->val, A->val, (size_t)A->nnz * sizeof *A->val);
  gs_csr_destroy(&R);
  return same;
}

/* gen elasticity: the library's matrix in symmetric storage, its rigid-body modes as an n x 3
 * array that reads back as the library's (every value, zeros included), --young / --poisson,
 * stdout; refusals with one line and no file: 1D and 3D grids, no grid, sizes, materials, a .gz
 * or the -o name for --near-null, an unwritable --near-null (-o not made either), options of
 * other kinds. */
static void test_gen_elasticity(void)
{
  char a[4608], b[4608], args[10000];
  snprintf(a, sizeof a, "%s", gs_test_tmpfile("el_A.mtx"));
  snprintf(b, sizeof b, "%s", gs_test_tmpfile("el_B.mtx"));
  unlink(a);
  unlink(b);
  snprintf(args, sizeof args, "gen elasticity --grid 6x5 -o %s --near-null %s", a, b);
  CU_ASSERT_EQUAL(gs_test_cli(args, out, sizeof out, err, sizeof err), 0);
  CU_ASSERT_STRING_EQUAL(out, "");
  gs_csr_t *A = NULL;
  gs_val_t *B = NULL;
  CU_ASSERT_FATAL(gs_gen_elasticity(&A, 6, 5, 1e5, 0.3, &B) == GS_SUCCESS);
  CU_ASSERT(reads_back_as(a, A));
  gs_csr_t *R = NULL;
  CU_ASSERT_FATAL(gs_mm_read_csr(b, &R) == GS_SUCCESS);
  CU_ASSERT(R->m == 60 && R->n == 3 && R->nnz == 180);
  int same = R->nnz == 180;
  for (gs_idx_t i = 0; same && i < R->m; ++i)
    for (gs_off_t p = R->row_ptr[i]; p < R->row_ptr[i + 1]; ++p)
      same = same && R->val[p] == B[(size_t)R->col[p] * 60 + (size_t)i];
  CU_ASSERT(same);
  gs_csr_destroy(&R);
  FILE *f = fopen(b, "r");
  char head[128] = "";
  CU_ASSERT_FATAL(f != NULL);
  CU_ASSERT(fread(head, 1, sizeof head - 1, f) > 0);
  fclose(f);
  CU_ASSERT(strncmp(head, "%%MatrixMarket matrix array real general\n60 3\n", 46) == 0);
  snprintf(args, sizeof args, "info %s --json", a);
  CU_ASSERT_EQUAL(gs_test_cli(args, out, sizeof out, err, sizeof err), 0);
  CU_ASSERT_EQUAL(json_ll(out, "rows"), 60);
  CU_ASSERT_EQUAL(json_ll(out, "nnz"), A->nnz);
  CU_ASSERT(strstr(out, "\"numerically_symmetric\":true") != NULL);
  CU_ASSERT(strstr(out, "\"diagonal_positive\":true") != NULL);
  gs_csr_destroy(&A);
  free(B);
  /* the material, and stdout */
  snprintf(args, sizeof args, "gen elasticity --grid 4x7 --young 2.5e3 --poisson=-0.2 -o %s", a);
  CU_ASSERT_EQUAL(gs_test_cli(args, out, sizeof out, err, sizeof err), 0);
  CU_ASSERT_FATAL(gs_gen_elasticity(&A, 4, 7, 2.5e3, -0.2, NULL) == GS_SUCCESS);
  CU_ASSERT(reads_back_as(a, A));
  gs_csr_destroy(&A);
  CU_ASSERT_EQUAL(gs_test_cli("gen elasticity --grid 3x3", out, sizeof out, err, sizeof err), 0);
  CU_ASSERT(strncmp(out, "%%MatrixMarket matrix coordinate real symmetric\n18 18 ", 54) == 0);
  unlink(a);
  unlink(b);

  static const struct {
    const char *opts, *needle;
  } bad[] = {
    {"--grid 4x4x4", "is 3D; elasticity is 2D"},
    {"--grid 10", "is 1D; elasticity is 2D"},
    {"", "--grid NXxNY is required"},
    {"--grid 0x5", "--grid"},
    {"--grid 40000x40000", "more than 2^31-1 unknowns"},
    {"--grid 5x5 --poisson 0.5", "--poisson"},
    {"--grid 5x5 --poisson -1", "--poisson"},
    {"--grid 5x5 --poisson 0.7", "--poisson"},
    {"--grid 5x5 --young 0", "--young"},
    {"--grid 5x5 --young -3", "--young"},
    {"--grid 5x5 --seed 3", "--seed does not apply to elasticity"},
    {"--grid 5x5 --stencil 5", "--stencil does not apply to elasticity"},
    {"--grid 5x5 --near-null /nonexistent/dir/B.mtx", "/nonexistent/dir/B.mtx"},
    {"--grid 5x5 --near-null B.mtx.gz", "without .gz"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
    snprintf(args, sizeof args, "gen elasticity %s -o %s", bad[k].opts, a);
    const int rc = gs_test_cli(args, out, sizeof out, err, sizeof err);
    const int ok = rc == 2 && gs_test_one_line_error(err) && strstr(err, bad[k].needle) &&
                   access(a, F_OK) != 0;
    CU_ASSERT(ok);
    if (!ok) fprintf(stderr, "\n  '%s' -> %d: %s", args, rc, err);
  }
  snprintf(args, sizeof args, "gen elasticity --grid 5x5 -o %s --near-null %s", a, a);
  CU_ASSERT_EQUAL(gs_test_cli(args, out, sizeof out, err, sizeof err), 2);
  CU_ASSERT(gs_test_one_line_error(err) && strstr(err, "the same file"));
  CU_ASSERT(access(a, F_OK) != 0);
  snprintf(args, sizeof args, "gen laplace --grid 5x5 --stencil 5 --near-null %s", b);
  CU_ASSERT_EQUAL(gs_test_cli(args, out, sizeof out, err, sizeof err), 2);
  CU_ASSERT(gs_test_one_line_error(err) && strstr(err, "--near-null does not apply to laplace"));
  CU_ASSERT(access(b, F_OK) != 0);
}

/* select --rule: the rule stage alone, no GPU; JSON keys matrix, rule, measured, oracle (null for
 * the stages not run), an array for several matrices; a banded matrix's rule is DIA, and with DIA
 * refusing it (dia.max_fill under its fill) DIA is never chosen. */
static void test_select_rule(void)
{
  char p1[4608], p2[4608], args[10000];
  snprintf(p1, sizeof p1, "%s", gs_test_tmpfile("sel_lap.mtx"));
  snprintf(p2, sizeof p2, "%s", gs_test_tmpfile("sel_rand.mtx"));
  snprintf(args, sizeof args, "gen laplace --grid 200x200 --stencil 5 -o %s", p1);
  CU_ASSERT_EQUAL_FATAL(gs_test_cli(args, out, sizeof out, err, sizeof err), 0);
  snprintf(args, sizeof args, "gen random --rows 3000 --per-row 12 --seed 5 -o %s", p2);
  CU_ASSERT_EQUAL_FATAL(gs_test_cli(args, out, sizeof out, err, sizeof err), 0);

  snprintf(args, sizeof args, "select --rule --json %s", p1);
  CU_ASSERT_EQUAL(gs_test_cli(args, out, sizeof out, err, sizeof err), 0);
  CU_ASSERT(out[0] == '{');
  CU_ASSERT(strstr(out, "\"rule\":\"dia\"") != NULL);
  /* info names the same first candidate as select --rule (one rule behind both) */
  char info_args[4700];
  snprintf(info_args, sizeof info_args, "info --json %s", p1);
  CU_ASSERT_EQUAL(gs_test_cli(info_args, out, sizeof out, err, sizeof err), 0);
  CU_ASSERT(strstr(out, "\"auto_rule\":\"dia\"") != NULL);
  snprintf(info_args, sizeof info_args, "info %s", p1);
  CU_ASSERT_EQUAL(gs_test_cli(info_args, out, sizeof out, err, sizeof err), 0);
  CU_ASSERT(strstr(out, "auto format rule       dia") != NULL);
  snprintf(args, sizeof args, "select --rule --json %s", p1);
  CU_ASSERT_EQUAL(gs_test_cli(args, out, sizeof out, err, sizeof err), 0);
  CU_ASSERT(strstr(out, "\"measured\":null") != NULL);
  CU_ASSERT(strstr(out, "\"oracle\":null") != NULL);
  CU_ASSERT(strstr(out, "\"matrix\":") != NULL);
  /* DIA refusing (5 diagonals of 40000 rows store 200000/199200 = 1.004 x nnz > 1): not chosen */
  snprintf(args, sizeof args, "select --rule --json --spmv-opt dia.max_fill=1 %s", p1);
  CU_ASSERT_EQUAL(gs_test_cli(args, out, sizeof out, err, sizeof err), 0);
  CU_ASSERT(strstr(out, "\"rule\":\"dia\"") == NULL);
  CU_ASSERT(strstr(out, "\"dia\"") == NULL); /* not among the candidates either */
  CU_ASSERT(strstr(out, "dia: fill") != NULL); /* the exclusion says why */
  /* several matrices: an array of objects, in order */
  snprintf(args, sizeof args, "select --rule --json %s %s", p1, p2);
  CU_ASSERT_EQUAL(gs_test_cli(args, out, sizeof out, err, sizeof err), 0);
  CU_ASSERT(out[0] == '[');
  const char *a = strstr(out, "sel_lap.mtx"), *b = strstr(out, "sel_rand.mtx");
  CU_ASSERT(a && b && a < b);
  /* text */
  snprintf(args, sizeof args, "select --rule -v %s", p2);
  CU_ASSERT_EQUAL(gs_test_cli(args, out, sizeof out, err, sizeof err), 0);
  CU_ASSERT(strstr(out, "rule     ") != NULL);
  CU_ASSERT(strstr(out, "s1_pct") != NULL); /* the thresholds with -v */
  CU_ASSERT_STRING_EQUAL(err, "");
  /* errors: one line */
  CU_ASSERT_EQUAL(gs_test_cli("select --rule", out, sizeof out, err, sizeof err), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT_EQUAL(gs_test_cli("select --rule /nonexistent/A.mtx", out, sizeof out, err,
                              sizeof err), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT_EQUAL(gs_test_cli("select --rule --bogus x.mtx", out, sizeof out, err, sizeof err),
                  2);
  CU_ASSERT(gs_test_one_line_error(err));
  snprintf(args, sizeof args, "select --rule --spmv-opt max_fill=x %s", p1);
  CU_ASSERT_EQUAL(gs_test_cli(args, out, sizeof out, err, sizeof err), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT_EQUAL(gs_test_cli("select --help", out, sizeof out, err, sizeof err), 0);
  CU_ASSERT(strstr(out, "usage: gpusolve select") != NULL);
  /* without --rule a GPU is needed: on a machine without one, exit 3 and one line */
  if (gs_device_count() == 0) {
    snprintf(args, sizeof args, "select %s", p1);
    CU_ASSERT_EQUAL(gs_test_cli(args, out, sizeof out, err, sizeof err), 3);
    CU_ASSERT(gs_test_one_line_error(err));
  }
  unlink(p1);
  unlink(p2);
}

static void test_gen_errors_leave_no_file(void)
{
  char args[4800], path[4608];
  /* in this process's own folder: runs in parallel (ctest -j, scripts/seeds.sh) never meet */
  snprintf(path, sizeof path, "%s", gs_test_tmpfile("should_not_exist.mtx"));
  unlink(path);
  snprintf(args, sizeof args, "gen laplace --grid 10x10 --stencil 3 -o %s", path);
  CU_ASSERT_EQUAL(gs_test_cli(args, out, sizeof out, err, sizeof err), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT(access(path, F_OK) != 0);
  CU_ASSERT_EQUAL(gs_test_cli("gen laplace --grid 10xq --stencil 5", out, sizeof out, err,
                              sizeof err), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT_EQUAL(gs_test_cli("gen normal --rows 10", out, sizeof out, err, sizeof err), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT_EQUAL(gs_test_cli("gen pareto --rows -5 --k 1", out, sizeof out, err, sizeof err), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT_EQUAL(gs_test_cli("gen cube --rows 5", out, sizeof out, err, sizeof err), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT_EQUAL(gs_test_cli("gen powerlaw --rows 10", out, sizeof out, err, sizeof err), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT_EQUAL(gs_test_cli("gen powerlaw --rows 10 --mean 3 --exponent 2", out, sizeof out,
                              err, sizeof err), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT(strstr(err, "exponent") != NULL);
  CU_ASSERT_EQUAL(gs_test_cli("gen laplace --grid 10 --stencil 3 -o /nonexistent/dir/a.mtx", out,
                              sizeof out, err, sizeof err), 2);
  CU_ASSERT(gs_test_one_line_error(err));
}

static void test_spmv_list_and_errors(void)
{
  CU_ASSERT_EQUAL(gs_test_cli("spmv --list", out, sizeof out, err, sizeof err), 0);
  for (int b = 0; b < gs_spmv_backend_count(); ++b) {
    char want[64];
    snprintf(want, sizeof want, "%s ", gs_spmv_backend_name(b));
    CU_ASSERT(strstr(out, want) != NULL);
  }
  CU_ASSERT(strstr(out, "csr-vector") == strstr(out, "csr-vector ")); /* name first */
  CU_ASSERT_EQUAL(gs_test_cli("spmv --format nosuch", out, sizeof out, err, sizeof err), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT(strstr(err, "nosuch") != NULL);
  CU_ASSERT_EQUAL(gs_test_cli("spmv --runs 0", out, sizeof out, err, sizeof err), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  if (gs_device_count() == 0) {
    CU_ASSERT_EQUAL(gs_test_cli("spmv", out, sizeof out, err, sizeof err), 3);
    CU_ASSERT(gs_test_one_line_error(err));
    CU_ASSERT(strstr(err, "no CUDA device available") != NULL);
  }
}

/* `batch`: the help names every batched kernel and vendor baseline (from the table) and the
 * uniform-batch option; usage errors are one line and exit 2 before any device work. */
static void test_batch_usage(void)
{
  CU_ASSERT_EQUAL(gs_test_cli("batch --help", out, sizeof out, err, sizeof err), 0);
  for (int k = 0; k < gs_batch_format_count(); ++k)
    CU_ASSERT(strstr(out, gs_batch_format_name(k)) != NULL);
  CU_ASSERT(strstr(out, "--shared") != NULL && strstr(out, "n/a (patterns") != NULL);
  CU_ASSERT_EQUAL(gs_test_cli("batch . --shared", out, sizeof out, err, sizeof err), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT(strstr(err, "--shared needs --gen") != NULL);
  CU_ASSERT_EQUAL(gs_test_cli("batch --gen laplace --format nosuch", out, sizeof out, err,
                              sizeof err), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT_EQUAL(gs_test_cli("batch --gen laplace --rows 5:3", out, sizeof out, err, sizeof err),
                  2);
  CU_ASSERT(gs_test_one_line_error(err));
  if (gs_device_count() == 0) {
    CU_ASSERT_EQUAL(gs_test_cli("batch --gen laplace --shared --rows 20 --count 4", out,
                                sizeof out, err, sizeof err), 3);
    CU_ASSERT(gs_test_one_line_error(err));
  }
}

/* `check` lists every registered backend (from the registry, not a list kept here). */
static void test_check_host_layouts(void)
{
  char args[4200];
  CU_ASSERT_EQUAL(gs_test_cli("check", out, sizeof out, err, sizeof err), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  if (!gs_test_have_matrix("west0479")) return;
  snprintf(args, sizeof args, "check '%s' --json", gs_test_matrix("west0479"));
  CU_ASSERT_EQUAL(gs_test_cli(args, out, sizeof out, err, sizeof err),
                  gs_device_count() > 0 ? 0 : 3); /* 3: device kernels not checked */
  CU_ASSERT(strstr(out, "\"results\":[") != NULL);
  CU_ASSERT(strstr(out, "\"host\":\"fail\"") == NULL);
  for (int b = 0; b < gs_spmv_backend_count(); ++b) {
    char want[96];
    snprintf(want, sizeof want, "\"format\":\"%s\"", gs_spmv_backend_name(b));
    CU_ASSERT(strstr(out, want) != NULL);
  }
  if (gs_device_count() == 0) CU_ASSERT(strstr(out, "\"device\":\"fail\"") == NULL);
}

/* `check --precision float`: the float formats pass the float bound (on the host layouts
 * everywhere, on the device where there is one), the others are listed as unsupported; the
 * JSON names the precision and reports the bound ratio. `spmv --list --verbose` marks them. */
static void test_check_float(void)
{
  char args[4200];
  if (!gs_test_have_matrix("west0479")) return;
  snprintf(args, sizeof args, "check '%s' --json --precision float", gs_test_matrix("west0479"));
  CU_ASSERT_EQUAL(gs_test_cli(args, out, sizeof out, err, sizeof err),
                  gs_device_count() > 0 ? 0 : 3); /* 3: device kernels not checked */
  CU_ASSERT(strstr(out, "\"precision\":\"float\"") != NULL);
  CU_ASSERT(strstr(out, "\"max_bound_ratio\"") != NULL);
  CU_ASSERT(strstr(out, "\"host\":\"fail\"") == NULL && strstr(out, "\"device\":\"fail\"") == NULL);
  for (int b = 0; b < gs_spmv_backend_count(); ++b) {
    char want[160];
    const int fl = (gs_spmv_backend_flags(b) & GS_SPMV_FLAG_FLOAT) != 0;
    snprintf(want, sizeof want, "\"format\":\"%s\",\"host\":\"%s", gs_spmv_backend_name(b),
             fl ? "" : "unsupported");
    CU_ASSERT(strstr(out, want) != NULL);
    if (fl) { /* taken (or refused for fill), never unsupported */
      snprintf(want, sizeof want, "\"format\":\"%s\",\"host\":\"unsupported",
               gs_spmv_backend_name(b));
      CU_ASSERT(strstr(out, want) == NULL);
    }
  }
  CU_ASSERT_EQUAL(gs_test_cli("spmv --list --verbose", out, sizeof out, err, sizeof err), 0);
  CU_ASSERT(strstr(out, "float: takes --precision float") != NULL);
}


/* ---- hostile input files (issue 35) --------------------------------------------------------- */

/* A launcher that runs the CLI under an address-space limit of `kib` KiB. */
static const char *ulimit_prefix(long kib)
{
  static char p[128];
  snprintf(p, sizeof p, "sh -c 'ulimit -v %ld && exec \"$0\" \"$@\"'", kib);
  return p;
}

/* Runs `args` under a 1 GiB address-space limit; where the binary itself cannot start so
 * (exit 127: its libraries do not fit), under 4 GiB, still far below what the files ask. */
/* AddressSanitizer reserves terabytes of address space for its shadow memory, so a CLI built
 * with it cannot start under an address-space limit: there the limited runs go without the
 * limit (or are skipped where only the limit makes them a test); the plain build runs them. */
#if defined(__SANITIZE_ADDRESS__)
#define GS_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GS_TEST_ASAN 1
#endif
#endif

static int cli_limited(const char *args)
{
#ifdef GS_TEST_ASAN
  return gs_test_cli(args, out, sizeof out, err, sizeof err);
#endif
  int rc = gs_test_cli_under(ulimit_prefix(1048576), args, out, sizeof out, err, sizeof err);
  if (rc == 127) {
    fprintf(stderr, "  (gpusolve does not start under 1 GiB of address space: 4 GiB)\n");
    rc = gs_test_cli_under(ulimit_prefix(4194304), args, out, sizeof out, err, sizeof err);
  }
  return rc;
}

static int write_bytes(const char *path, const void *t, size_t n)
{
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  size_t w = fwrite(t, 1, n, f);
  return (fclose(f) == 0 && w == n) ? 0 : -1;
}

/* A file declaring 2^31 - 1 rows in 78 bytes exits 2 with the memory it would take, under a
 * 1 GiB address-space limit (not killed, not an allocation failure), for info and select. */
static void test_declared_huge(void)
{
#ifdef GS_TEST_ASAN
  fprintf(stderr, "  (skipped under AddressSanitizer: no address-space limit possible)\n");
  return;
#endif
  char path[4608], args[4800], want[4800];
  snprintf(path, sizeof path, "%s", gs_test_tmpfile("huge.mtx"));
  const char text[] = "%%MatrixMarket matrix coordinate real general\n"
                      "2147483647 2147483647 1\n1 1 1.0\n";
  CU_ASSERT_FATAL(write_bytes(path, text, sizeof text - 1) == 0);
  snprintf(want, sizeof want,
           "gpusolve: %s: declares 2147483647 x 2147483647 with 1 entries: needs 32.0 GiB, more "
           "than the ",
           path);
  const char *cmds[] = {"info '%s'", "info --json '%s'", "select --rule '%s'"};
  for (int k = 0; k < 3; ++k) {
    snprintf(args, sizeof args, cmds[k], path);
    int rc = cli_limited(args);
    if (rc != 2 || strncmp(err, want, strlen(want)) != 0)
      fprintf(stderr, "  %s: exit %d: %s", args, rc, err);
    CU_ASSERT_EQUAL(rc, 2);
    CU_ASSERT(gs_test_one_line_error(err));
    CU_ASSERT(strncmp(err, want, strlen(want)) == 0);
    CU_ASSERT(strstr(err, " available\n") != NULL);
    CU_ASSERT_STRING_EQUAL(out, "");
  }
}

/* No line past 1 MiB: /dev/zero stops at once naming its NUL bytes (under `timeout`, so that a
 * regression fails rather than hangs), a .gz of 4 MB holding a 1 GB line stops under the 1 GiB
 * limit at line 2. The .gz is made by the gzip program (members of 1 MiB, concatenated). */
static void test_line_bound_cli(void)
{
  CU_ASSERT_EQUAL(gs_test_cli_under("timeout 20", "info /dev/zero", out, sizeof out, err,
                                    sizeof err), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT(strstr(err, "gpusolve: /dev/zero:1: NUL bytes") == err);

  if (!gs_mm_has_gzip()) return;
  char x[4608], nl[4608], hd[4608], gz[4608], cmd[48000];
  snprintf(x, sizeof x, "%s", gs_test_tmpfile("x.txt"));
  snprintf(nl, sizeof nl, "%s", gs_test_tmpfile("nl.txt"));
  snprintf(hd, sizeof hd, "%s", gs_test_tmpfile("hd.txt"));
  snprintf(gz, sizeof gz, "%s", gs_test_tmpfile("longline.mtx.gz"));
  const size_t mib = (size_t)1 << 20;
  char *buf = malloc(mib);
  CU_ASSERT_FATAL(buf != NULL);
  memset(buf, 'x', mib);
  const char *banner = "%%MatrixMarket matrix coordinate real general\n";
  CU_ASSERT_FATAL(write_bytes(x, buf, mib) == 0);
  CU_ASSERT_FATAL(write_bytes(nl, "\n", 1) == 0);
  CU_ASSERT_FATAL(write_bytes(hd, banner, strlen(banner)) == 0);
  free(buf);
  snprintf(cmd, sizeof cmd,
           "command -v gzip >/dev/null || exit 3; gzip -9 '%s' '%s' '%s' || exit 1; "
           "cat '%s.gz' > '%s' && i=0 && while [ $i -lt %d ]; do cat '%s.gz'; i=$((i+1)); "
           "done >> '%s' && cat '%s.gz' >> '%s'",
           x, nl, hd, hd, gz, gs_test_quick() ? 64 : 1024, x, gz, nl, gz);
  int rc = system(cmd);
  if (!WIFEXITED(rc) || WEXITSTATUS(rc) != 0) {
    fprintf(stderr, "  (no gzip program: the .gz long-line case is skipped)\n");
    return;
  }
  char args[4800], want[4800];
  snprintf(args, sizeof args, "info '%s'", gz);
  snprintf(want, sizeof want, "gpusolve: %s:2: line longer than 1 MiB\n", gz);
  CU_ASSERT_EQUAL(cli_limited(args), 2);
  CU_ASSERT_STRING_EQUAL(err, want);
  CU_ASSERT_STRING_EQUAL(out, "");
}

/* Refused by file and line, exit 2: duplicates summing to infinity, a skew-symmetric file with
 * both triangles, an integer past 2^53, a byte-order mark, CR line ends. */
static void test_refused_files(void)
{
  const struct {
    const char *file, *cause;
  } cases[] = {
    {"dup_inf.mtx", ":5: entry (1, 1) and the earlier ones at its position sum to +inf"},
    {"skew_both.mtx", ":5: entry (1, 2) lies above the diagonal, entry (2, 1) on line 3"},
    {"int_beyond_2p53.mtx", ":4: integer out of range: '9007199254740993'"},
    {"int_beyond_int64.mtx", ":3: integer out of range: '-99999999999999999999'"},
    {"bom.mtx", ":1: a UTF-8 byte-order mark (EF BB BF)"},
    {"cr_only.mtx", ":1: a CR inside the line: lines ended by a CR alone (classic Mac OS)"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; ++k) {
    char rel[64], args[4800], want[4800];
    snprintf(rel, sizeof rel, "bad/%s", cases[k].file);
    const char *path = gs_test_data(rel);
    snprintf(want, sizeof want, "gpusolve: %s%s", path, cases[k].cause);
    snprintf(args, sizeof args, "info '%s'", path);
    int rc = gs_test_cli(args, out, sizeof out, err, sizeof err);
    if (rc != 2 || strncmp(err, want, strlen(want)) != 0)
      fprintf(stderr, "  %s: exit %d: %s  want %s...\n", cases[k].file, rc, err, want);
    CU_ASSERT_EQUAL(rc, 2);
    CU_ASSERT(gs_test_one_line_error(err));
    CU_ASSERT(strncmp(err, want, strlen(want)) == 0);
  }
}

/* A symmetric file with both triangles: read with ONE warning line naming the counts, refused
 * under --strict by every command that reads a matrix (info, select --rule), still refused
 * after the file (switch order is free). */
static void test_both_triangles_cli(void)
{
  char path[4608], args[4800], want[4800];
  snprintf(path, sizeof path, "%s", gs_test_tmpfile("both.mtx"));
  const char text[] = "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 4\n2 1 -1\n"
                      "1 2 -1.5\n3 2 2\n";
  CU_ASSERT_FATAL(write_bytes(path, text, sizeof text - 1) == 0);
  snprintf(want, sizeof want,
           "gpusolve: warning: %s: symmetric file with entries on both sides of the diagonal "
           "(2 below, 1 above)",
           path);
  const char *ok[] = {"info '%s'", "info --json '%s'", "select --rule '%s'"};
  for (int k = 0; k < 3; ++k) {
    snprintf(args, sizeof args, ok[k], path);
    CU_ASSERT_EQUAL(gs_test_cli(args, out, sizeof out, err, sizeof err), 0);
    CU_ASSERT(strncmp(err, want, strlen(want)) == 0);
    CU_ASSERT(strchr(err, '\n') == err + strlen(err) - 1); /* one line */
    CU_ASSERT(strstr(err, "--strict") != NULL);
  }
  CU_ASSERT(out[0] != '\0'); /* and select's report */
  snprintf(want, sizeof want, "gpusolve: %s:5: entry (1, 2) lies above the diagonal", path);
  const char *strict[] = {"info --strict '%s'", "info '%s' --strict", "select --rule --strict '%s'"};
  for (int k = 0; k < 3; ++k) {
    snprintf(args, sizeof args, strict[k], path);
    CU_ASSERT_EQUAL(gs_test_cli(args, out, sizeof out, err, sizeof err), 2);
    CU_ASSERT(gs_test_one_line_error(err));
    CU_ASSERT(strncmp(err, want, strlen(want)) == 0);
    CU_ASSERT_STRING_EQUAL(out, "");
  }
  /* one triangle: no warning, and --strict reads it */
  snprintf(args, sizeof args, "info --strict '%s'", gs_test_data("ok/sym_lower.mtx"));
  CU_ASSERT_EQUAL(gs_test_cli(args, out, sizeof out, err, sizeof err), 0);
  CU_ASSERT_STRING_EQUAL(err, "");
  CU_ASSERT_EQUAL(gs_test_cli("info --strict", out, sizeof out, err, sizeof err), 2);
  CU_ASSERT(gs_test_one_line_error(err));
}

/* info tells the value field and the entries stored in the file (from its size line). */
static void test_info_field_and_stored(void)
{
  const char *files[] = {"ok/pattern_sym.mtx", "ok/integer.mtx", "ok/sym_lower.mtx"};
  const char *fields[] = {"pattern", "integer", "real"};
  for (int k = 0; k < 3; ++k) {
    const char *path = gs_test_data(files[k]);
    FILE *f = fopen(path, "r");
    CU_ASSERT_FATAL(f != NULL);
    char line[512], banner[512] = "";
    long long m = 0, n = 0, stored = -1;
    while (fgets(line, sizeof line, f)) {
      if (!banner[0]) snprintf(banner, sizeof banner, "%s", line);
      if (line[0] != '%' && sscanf(line, "%lld %lld %lld", &m, &n, &stored) == 3) break;
    }
    fclose(f);
    CU_ASSERT_FATAL(stored >= 0);
    char args[4800], want[512];
    snprintf(args, sizeof args, "info '%s' --json", path);
    CU_ASSERT_EQUAL(gs_test_cli(args, out, sizeof out, err, sizeof err), 0);
    CU_ASSERT_EQUAL(json_ll(out, "stored_entries"), stored);
    snprintf(want, sizeof want, "\"field\":\"%s\"", fields[k]);
    CU_ASSERT(strstr(out, want) != NULL);
    CU_ASSERT(strstr(banner, fields[k]) != NULL); /* the test's own table agrees with the file */
    snprintf(args, sizeof args, "info '%s'", path);
    CU_ASSERT_EQUAL(gs_test_cli(args, out, sizeof out, err, sizeof err), 0);
    snprintf(want, sizeof want, " coordinate %s ", fields[k]);
    CU_ASSERT(strstr(out, want) != NULL);
    snprintf(want, sizeof want, ", %lld entries stored\n", stored);
    CU_ASSERT(strstr(out, want) != NULL);
  }
}

/* A failed write to standard output is not a success (/dev/full). */
static void test_info_stdout_full(void)
{
  if (access("/dev/full", W_OK) != 0) return;
  const char *prefix = "sh -c 'exec \"$0\" \"$@\" >/dev/full'";
  char args[4800];
  snprintf(args, sizeof args, "info '%s'", gs_test_data("ok/sym_lower.mtx"));
  CU_ASSERT_EQUAL(gs_test_cli_under(prefix, args, out, sizeof out, err, sizeof err), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  snprintf(args, sizeof args, "info --json '%s'", gs_test_data("ok/sym_lower.mtx"));
  CU_ASSERT_EQUAL(gs_test_cli_under(prefix, args, out, sizeof out, err, sizeof err), 2);
  CU_ASSERT(gs_test_one_line_error(err));
  CU_ASSERT_EQUAL(gs_test_cli_under(prefix, "info --help", out, sizeof out, err, sizeof err), 2);
  CU_ASSERT(gs_test_one_line_error(err));
}

/* The help of the three commands that solve names the library's methods and preconditioners
 * (a new one shows up without a change to the CLI), and is whole (its last line printed). */
static void test_solve_help_lists(void)
{
  static const struct {
    const char *args, *last;
    int dist, batch;
  } helps[] = {{"solve --help", "Exit status: 0 converged", 0, 0},
               {"solve --gpus 2 --help", "Exit status: 0 converged", 1, 0},
               {"batch --help", "Exit status 1 when a solve", 0, 1}};
  for (size_t h = 0; h < sizeof helps / sizeof helps[0]; ++h) {
    CU_ASSERT_EQUAL_FATAL(gs_test_cli(helps[h].args, out, sizeof out, err, sizeof err), 0);
    CU_ASSERT(strstr(out, helps[h].last) != NULL);
    CU_ASSERT(strstr(out, "@METHODS@") == NULL && strstr(out, "@PRECONDS@") == NULL);
    for (int m = 0; strcmp(gs_method_string((gs_method_t)m), "unknown") != 0; ++m) {
      const int runs = helps[h].batch ? m == GS_SOLVER_CG || m == GS_SOLVER_BICGSTAB
                       : helps[h].dist ? !(gs_method_flags((gs_method_t)m) & GS_METHOD_TRANSPOSE)
                                       : 1;
      if (runs && !strstr(out, gs_method_string((gs_method_t)m)))
        fprintf(stderr, "\n  %s does not name %s", helps[h].args,
                gs_method_string((gs_method_t)m));
      if (runs) CU_ASSERT(strstr(out, gs_method_string((gs_method_t)m)) != NULL);
    }
    for (int i = 0; i < gs_precond_count(); ++i) {
      const char *pc = gs_precond_name_at(i);
      const int takes = helps[h].batch ? !strcmp(pc, "none") || !strcmp(pc, "jacobi")
                        : helps[h].dist ? strcmp(pc, "amg") != 0
                                        : 1;
      if (takes && !strstr(out, pc)) fprintf(stderr, "\n  %s does not name %s", helps[h].args, pc);
      if (takes) CU_ASSERT(strstr(out, pc) != NULL);
    }
  }
}

/* The programs shipped call no test hook: the fault injection of --distributed (the
 * environment variable GS_TEST_FAIL_RANK) is compiled into gpusolve-gpu-testhooks only, the
 * suites' build, which has it where MPI is built. */
static void test_no_test_hooks_shipped(void)
{
  char dir[4096], path[4200];
  snprintf(dir, sizeof dir, "%s", GS_CLI);
  char *slash = strrchr(dir, '/');
  CU_ASSERT_FATAL(slash != NULL);
  *slash = '\0';
  static const struct {
    const char *name;
    int want; /* 1: must hold the hook, 0: must not, -1: need not exist */
  } progs[] = {{"gpusolve", 0}, {"gpusolve-gpu", 0}, {"gpusolve-gpu-testhooks", -1}};
  for (size_t k = 0; k < sizeof progs / sizeof progs[0]; ++k) {
    snprintf(path, sizeof path, "%s/%s", dir, progs[k].name);
    FILE *f = fopen(path, "rb");
    if (!f) {
      CU_ASSERT(progs[k].want < 0);
      continue;
    }
    static char buf[1 << 20];
    const char *needle = "GS_TEST_FAIL_RANK";
    const size_t nl = strlen(needle);
    size_t have = 0, n;
    int found = 0;
    while (!found && (n = fread(buf + have, 1, sizeof buf - have, f)) > 0) {
      have += n;
      for (size_t i = 0; !found && i + nl <= have; ++i) found = !memcmp(buf + i, needle, nl);
      if (have >= nl) { /* keep the tail: a needle across two reads */
        memmove(buf, buf + have - (nl - 1), nl - 1);
        have = nl - 1;
      }
    }
    fclose(f);
    if (progs[k].want == 0 && found) fprintf(stderr, "\n  %s holds a test hook", path);
    CU_ASSERT(progs[k].want == 0 ? !found : found);
  }
}

int main(void)
{
  CU_TestInfo tests[] = {{"info agrees with MANIFEST.tsv", test_info_matches_manifest},
                         {"info errors", test_info_errors},
                         {"info on every malformed file", test_info_malformed_corpus},
                         {"gen writes what info reads", test_gen_and_read_back},
                         {"gen errors leave no file", test_gen_errors_leave_no_file},
                         {"gen convdiff: pattern, symmetry, seed, errors", test_gen_convdiff},
                         {"gen elasticity: matrix, modes, refusals", test_gen_elasticity},
                         {"select --rule: no GPU, JSON keys, refusals", test_select_rule},
                         {"spmv --list and errors", test_spmv_list_and_errors},
                         {"check host layouts", test_check_host_layouts},
                         {"check --precision float", test_check_float},
                         {"batch usage and errors", test_batch_usage},
                         {"declared-huge file: exit 2 within 1 GiB", test_declared_huge},
                         {"line bound: /dev/zero, a 1 GB line in a .gz", test_line_bound_cli},
                         {"refused files: file, line, cause", test_refused_files},
                         {"both triangles: warning, --strict", test_both_triangles_cli},
                         {"info: value field and stored entries", test_info_field_and_stored},
                         {"info to a full stdout exits 2", test_info_stdout_full},
                         {"solve, --gpus, batch: help lists the library's names",
                          test_solve_help_lists},
                         {"the programs shipped call no test hook", test_no_test_hooks_shipped},
                         CU_TEST_INFO_NULL};
  return gs_test_main("cli", tests, 0);
}
