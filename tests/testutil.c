/* tests/testutil.c: shared helpers of the CUnit suites. */
#define _POSIX_C_SOURCE 200809L
#include "tests/testutil.h"

#include <CUnit/Basic.h>
#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *const gs_test_matrix_names[] = {
  "2dcyl1", "494_bus", "Dubcova1", "Si2", "add32", "as-caida20071105", "bayer10", "bcsstk13",
  "bcsstk16", "cage10", "crystm01", "delaunay_n15", "email-Enron", "fidapex6", "fs_183_1",
  "illc1033", "lp_e226", "memplus", "msc04515", "nos7", "orsreg_1", "sherman5", "well1850",
  "west0479", "wiki-Vote", "zenios", NULL};

static const char *g_suite = "suite"; /* names this process's temporary folder */

int gs_test_main(const char *suite, CU_TestInfo *tests, int needs_gpu)
{
  g_suite = suite;
  if (needs_gpu && gs_device_count() == 0) {
    printf("%s: no CUDA device available: suite skipped\n", suite);
    return 77;
  }
  printf("%s: seed %llu (set GS_TEST_SEED to repeat)\n", suite,
         (unsigned long long)gs_test_seed());
  /* GS_TEST_ONLY=TEXT runs the tests whose name contains TEXT (e.g. one test under a sanitizer) */
  const char *only = getenv("GS_TEST_ONLY");
  if (only && *only) {
    int k = 0;
    for (int i = 0; tests[i].pName; ++i)
      if (strstr(tests[i].pName, only)) tests[k++] = tests[i];
    tests[k].pName = NULL;
    tests[k].pTestFunc = NULL;
    printf("%s: GS_TEST_ONLY=%s: %d test(s)\n", suite, only, k);
  }
  if (CU_initialize_registry() != CUE_SUCCESS) return 1;
  CU_SuiteInfo suites[] = {{suite, NULL, NULL, NULL, NULL, tests}, CU_SUITE_INFO_NULL};
  if (CU_register_suites(suites) != CUE_SUCCESS) {
    CU_cleanup_registry();
    return 1;
  }
  CU_basic_set_mode(CU_BRM_VERBOSE);
  CU_basic_run_tests();
  unsigned fails = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
  unsigned run = CU_get_number_of_tests_run();
  CU_cleanup_registry();
  return (fails == 0 && run > 0) ? 0 : 1;
}

uint64_t gs_test_seed(void)
{
  static uint64_t seed;
  static int have;
  if (!have) {
    const char *s = getenv("GS_TEST_SEED");
    if (s && *s) {
      seed = strtoull(s, NULL, 10);
    } else {
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      seed = (uint64_t)ts.tv_sec * 1000003u ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
    }
    have = 1;
  }
  return seed;
}

uint64_t gs_test_next(uint64_t *s)
{
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double gs_test_uniform(uint64_t *s) { return (double)(gs_test_next(s) >> 11) * 0x1.0p-53; }

const char *gs_test_matrix_dir(void)
{
  const char *d = getenv("GS_MATRIX_DIR");
  return d && *d ? d : GS_DEFAULT_MATRIX_DIR;
}

const char *gs_test_matrix(const char *name)
{
  static char buf[4096];
  snprintf(buf, sizeof buf, "%s/%s.mtx", gs_test_matrix_dir(), name);
  return buf;
}

const char *gs_test_data(const char *rel)
{
  static char buf[4096];
  snprintf(buf, sizeof buf, "%s/%s", GS_TEST_DATA, rel);
  return buf;
}

int gs_test_quick(void)
{
  const char *q = getenv("GS_TEST_QUICK");
  return q && *q && strcmp(q, "0") != 0;
}

static void read_all(const char *path, char *buf, size_t sz)
{
  if (!buf || sz == 0) return;
  buf[0] = '\0';
  FILE *f = fopen(path, "rb");
  if (!f) return;
  size_t n = fread(buf, 1, sz - 1, f);
  buf[n] = '\0';
  fclose(f);
}

/* ---- this process's temporary folder -------------------------------------------------------- */

static char g_tmpdir[4096];

/* Removes a folder and everything under it (the CLI's selection cache makes subfolders). */
static void remove_tree(const char *dir, int depth)
{
  DIR *d = opendir(dir);
  if (d) {
    char p[8192];
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
      snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      struct stat sb;
      if (depth < 8 && lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        chmod(p, 0700); /* a test may have made it read-only */
        remove_tree(p, depth + 1);
      } else {
        unlink(p);
      }
    }
    closedir(d);
  }
  rmdir(dir);
}

static void remove_tmpdir(void)
{
  if (!g_tmpdir[0]) return;
  remove_tree(g_tmpdir, 0);
  g_tmpdir[0] = '\0';
}

const char *gs_test_tmpdir(void)
{
  if (g_tmpdir[0]) return g_tmpdir;
  const char *base = getenv("TMPDIR");
  if (!base || !*base) base = "/tmp";
  int n = snprintf(g_tmpdir, sizeof g_tmpdir, "%s/gs_%s_XXXXXX", base, g_suite);
  if (n < 0 || (size_t)n >= sizeof g_tmpdir || !mkdtemp(g_tmpdir)) {
    fprintf(stderr, "  cannot create a temporary folder under %s\n", base);
    g_tmpdir[0] = '\0';
    return "/nonexistent/gs_test_tmpdir"; /* every use then fails visibly */
  }
  atexit(remove_tmpdir);
  return g_tmpdir;
}

const char *gs_test_tmpfile(const char *name)
{
  static char buf[4608];
  snprintf(buf, sizeof buf, "%s/%s", gs_test_tmpdir(), name);
  return buf;
}

int gs_test_cli(const char *args, char *out, size_t outsz, char *err, size_t errsz)
{
  return gs_test_cli_under("", args, out, outsz, err, errsz);
}

int gs_test_cli_under(const char *prefix, const char *args, char *out, size_t outsz, char *err,
                      size_t errsz)
{
  char o[4608], e[4608];
  snprintf(o, sizeof o, "%s/cli_outXXXXXX", gs_test_tmpdir());
  snprintf(e, sizeof e, "%s/cli_errXXXXXX", gs_test_tmpdir());
  int fo = mkstemp(o), fe = mkstemp(e);
  if (fo >= 0) close(fo);
  if (fe >= 0) close(fe);
  if (fo < 0 || fe < 0) {
    if (fo >= 0) unlink(o);
    if (fe >= 0) unlink(e);
    return -1;
  }
  /* the CLI's selection cache goes to this process's folder, never to the user's */
  char cache[4608];
  snprintf(cache, sizeof cache, "%s/xdg-cache", gs_test_tmpdir());
  setenv("XDG_CACHE_HOME", cache, 1);
  size_t len = strlen(prefix) + strlen(GS_CLI) + strlen(args) + strlen(o) + strlen(e) + 32;
  char *cmd = malloc(len);
  if (!cmd) return -1;
  snprintf(cmd, len, "%s '%s' %s >%s 2>%s </dev/null", prefix, GS_CLI, args, o, e);
  int rc = system(cmd);
  free(cmd);
  read_all(o, out, outsz);
  read_all(e, err, errsz);
  unlink(o);
  unlink(e);
  if (rc == -1 || !WIFEXITED(rc)) return -1;
  return WEXITSTATUS(rc);
}

gs_csr_t *gs_test_csr_from_dense(int m, int n, const double *a)
{
  gs_coo_t *C = NULL;
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_coo_create(&C, m, n, 4) == GS_SUCCESS);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      if (a[i * n + j] != 0.0) CU_ASSERT_FATAL(gs_coo_push(C, i, j, a[i * n + j]) == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
  gs_coo_destroy(&C);
  return A;
}

gs_csr_t *gs_test_random_csr(uint64_t *state, gs_idx_t m, gs_idx_t n, double density)
{
  gs_coo_t *C = NULL;
  gs_csr_t *A = NULL;
  if (gs_coo_create(&C, m, n, 16) != GS_SUCCESS) return NULL;
  for (gs_idx_t i = 0; i < m; ++i)
    for (gs_idx_t j = 0; j < n; ++j)
      if (gs_test_uniform(state) < density)
        if (gs_coo_push(C, i, j, 2.0 * gs_test_uniform(state) - 1.0) != GS_SUCCESS) goto out;
  gs_coo_to_csr(&A, C);
out:
  gs_coo_destroy(&C);
  return A;
}

gs_csr_t *gs_test_csr_from_lengths(uint64_t *state, const int *len, gs_idx_t m, gs_idx_t n)
{
  int64_t total = 0;
  for (gs_idx_t i = 0; i < m; ++i) total += len[i];
  gs_coo_t *C = NULL;
  gs_csr_t *A = NULL;
  CU_ASSERT_FATAL(gs_coo_create(&C, m, n, total > 0 ? total : 1) == GS_SUCCESS);
  for (gs_idx_t i = 0; i < m; ++i)
    for (int k = 0; k < len[i]; ++k) {
      const gs_idx_t j = len[i] >= n ? k % n : (gs_idx_t)(((int64_t)k * n) / len[i]);
      CU_ASSERT_FATAL(gs_coo_push(C, i, j, 2.0 * gs_test_uniform(state) - 1.0) == GS_SUCCESS);
    }
  CU_ASSERT_FATAL(gs_coo_to_csr(&A, C) == GS_SUCCESS);
  gs_coo_destroy(&C);
  return A;
}

double gs_test_rel_err(const double *a, const double *b, size_t n)
{
  double num = 0.0, den = 0.0;
  for (size_t i = 0; i < n; ++i) {
    double d = fabs(a[i] - b[i]);
    if (!(d <= num)) num = d; /* NaN propagates */
    if (fabs(b[i]) > den) den = fabs(b[i]);
  }
  return num / (den > 1e-300 ? den : 1e-300);
}

/* ---- comparing sparse products -------------------------------------------------------------
 *
 * Why the bound holds (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., Lemma 3.1
 * and section 3.1). Any implementation of y_i = alpha * sum_j a_ij x_j + beta * y_in_i evaluates
 * each term through at most k_i + 2 roundings, whatever the summation order (sequential, a tree
 * over warp lanes, segmented reductions with carries between warps, atomics per chunk):
 *   - one for a_ij * x_j and one for the factor alpha (applied to the product, to x_j or to a
 *     partial sum: always one multiplication on the term's path; an FMA only removes roundings);
 *   - at most k_i for the additions: k_i + 1 terms (the k_i products and beta * y_in_i) combined
 *     two at a time take k_i additions, and a term takes part in at most all of them.
 * beta * y_in_i takes one multiplication and at most k_i additions. Each rounding is a factor
 * (1 + d), |d| <= u = 2^-53, and a product of n such factors is 1 + t, |t| <= gamma_n =
 * n u / (1 - n u) (Lemma 3.1), so
 *     |y_out_i - y_i| <= gamma_{k_i+2}(u) * M_i,   M_i = |alpha| (|op(A)| |x|)_i + |beta| |y_in_i|.
 * The reference is computed the same way in long double (u_ref = LDBL_EPSILON / 2: 2^-64 on
 * x86-64, so its error is 2^-11 of the double one; where long double is double it is as large),
 * |ref_i - y_i| <= gamma_{k_i+2}(u_ref) M_i, and the triangle inequality gives the sum of both.
 * Underflow: a product that underflows errs by at most DBL_TRUE_MIN / 2 in absolute terms
 * (additions are exact then), at most two per term: (k_i + 1)(1 + |alpha|) DBL_TRUE_MIN.
 * C = GS_TEST_SPMV_C = 2: the bound above is rigorous with C = 1 up to second-order terms (M_i
 * and |y_out_i - ref_i| are themselves evaluated in long double); 2 absorbs those and any layout
 * whose terms see up to 2 (k_i + 2) roundings (e.g. beta applied in a pass of its own and a long
 * row's partial sums added to y one atomic per chunk), while a wrong index, a dropped or
 * doubled entry, or a missing alpha or beta still exceeds it by orders of magnitude. */

static double gamma_k(double k, long double u)
{
  long double ku = (long double)k * u;
  return ku < 1.0L ? (double)(ku / (1.0L - ku)) : INFINITY;
}

gs_test_spmv_cmp_t gs_test_spmv_compare(const gs_csr_t *A, gs_op_t op, double alpha,
                                        const double *x, double beta, const double *y_in,
                                        const double *y_out)
{
  return gs_test_spmv_compare_u(A, op, alpha, x, beta, y_in, y_out, 0.0);
}

/* Mixed precision (u_v > 0): the product computed is that of A~ = A + E, |E| <= u_v |A|, whose
 * exact value differs from the reference's by at most u_v |alpha| (|op(A)| |x|)_i = u_v times
 * the alpha part of M_i, and whose rounding is bounded as above with M~_i <= (1 + u_v) M_i.
 *
 * Float precision (gs_test_spmv_compare_float): the reference is the product of the values
 * rounded to float, A_f = fl32(A) (exactly what the kernels read: the layouts round to nearest
 * once, as (float) does), with the float x, alpha, beta and y_in the kernels read, so the only
 * difference is the float arithmetic, and the argument above holds with u = u_f = 2^-24.
 * Written out for the usual evaluation y_i = fl(fl(alpha * s) + fl(beta * y_in_i)),
 * s = fl(sum_j a_ij x_j) over the k = k_i entries of row i:
 *   s:          a sum of k rounded products, |s - sum a x| <= gamma_k(u_f) (|A_f| |x|)_i
 *               (Higham (3.5): each product 1 rounding, at most k - 1 additions on its path);
 *   alpha * s:  one rounding more, gamma_{k+1}(u_f) |alpha| (|A_f| |x|)_i in all, as
 *               (1 + t_k)(1 + d) is 1 + t_{k+1} (Lemma 3.3);
 *   beta * y:   one rounding, gamma_1(u_f) |beta y_in_i|;
 *   the sum:    one rounding of both: gamma_{k+2}(u_f) |alpha| (|A_f| |x|)_i +
 *               gamma_2(u_f) |beta y_in_i| <= gamma_{k+2}(u_f) M_i.
 * Other orders keep the bound, as for double above: beta * y_in_i added first (the scale pass
 * of op T, atomics, coo's carries, hyb's two passes) puts it through up to k additions,
 * gamma_{k+1}(u_f) |beta y_in_i|; alpha applied to x_j (op T: alpha x_i once per row) or to
 * each chunk's partial sum is still one multiplication on a term's path; a tree of partial
 * sums (shuffles, s0 + s1, chunks) has at most k additions on any path; an FMA drops a
 * rounding. So |y_out_i - y_i| <= gamma_{k+2}(u_f) M_i with M_i of A_f. The long double
 * reference adds gamma_{k+2}(u_ref) M_i. Underflow: a float product or sum that underflows
 * (gradually, or flushed to zero) errs by less than FLT_MIN, at most k + 2 times a term, each
 * scaled by at most 1 + |alpha|: (k + 2)(1 + |alpha|) FLT_MIN. C = GS_TEST_SPMV_C as above. */
static gs_test_spmv_cmp_t compare_core(const gs_csr_t *A, gs_op_t op, double alpha,
                                       const double *x, double beta, const double *y_in,
                                       const double *y_out, double u_v, int float_product);

gs_test_spmv_cmp_t gs_test_spmv_compare_u(const gs_csr_t *A, gs_op_t op, double alpha,
                                          const double *x, double beta, const double *y_in,
                                          const double *y_out, double u_v)
{
  return compare_core(A, op, alpha, x, beta, y_in, y_out, u_v, 0);
}

/* A float vector of n entries widened into a fresh double array (NULL for a NULL vector;
 * *fail set when the allocation fails). */
static double *widen(const float *v, size_t n, int *fail)
{
  if (!v) return NULL;
  double *d = malloc((n + 1) * sizeof *d);
  if (!d) {
    *fail = 1;
    return NULL;
  }
  for (size_t i = 0; i < n; ++i) d[i] = v[i];
  return d;
}

gs_test_spmv_cmp_t gs_test_spmv_compare_float(const gs_csr_t *A, gs_op_t op, float alpha,
                                              const float *x, float beta, const float *y_in,
                                              const float *y_out)
{
  gs_test_spmv_cmp_t r = {INFINITY, -1, 0.0, 0.0, 0.0, 0};
  if (!A || (op != GS_OP_N && op != GS_OP_T)) return r;
  const size_t in = (size_t)(op == GS_OP_N ? A->n : A->m), out = (size_t)(op == GS_OP_N ? A->m
                                                                                        : A->n);
  int fail = 0;
  double *xd = widen(x, in, &fail), *yi = widen(y_in, out, &fail), *yo = widen(y_out, out, &fail);
  if (!fail) r = compare_core(A, op, alpha, xd, beta, yi, yo, 0.0, 1);
  free(xd);
  free(yi);
  free(yo);
  return r;
}

/* u_v: unit roundoff of values rounded before a double product (0: none); float_product: the
 * product of the values rounded to float, computed in float (the bound above with u_f). */
static gs_test_spmv_cmp_t compare_core(const gs_csr_t *A, gs_op_t op, double alpha,
                                       const double *x, double beta, const double *y_in,
                                       const double *y_out, double u_v, int float_product)
{
  gs_test_spmv_cmp_t r = {0.0, -1, 0.0, 0.0, 0.0, 0};
  const int trans = op == GS_OP_T;
  if (!A || (!trans && op != GS_OP_N)) {
    r.ratio = INFINITY;
    return r;
  }
  const gs_idx_t len = trans ? A->n : A->m;
  if (len <= 0) return r;
  long double *ref = malloc((size_t)len * sizeof *ref), *mag = malloc((size_t)len * sizeof *mag);
  long double *amag = calloc((size_t)len, sizeof *amag); /* |alpha| (|op(A)| |x|)_i */
  int64_t *cnt = calloc((size_t)len, sizeof *cnt);
  if (!ref || !mag || !amag || !cnt || !y_out || (beta != 0.0 && !y_in) ||
      (A->nnz > 0 && alpha != 0.0 && !x)) {
    free(ref);
    free(mag);
    free(amag);
    free(cnt);
    r.ratio = INFINITY;
    return r;
  }
  for (gs_idx_t i = 0; i < len; ++i) {
    ref[i] = beta == 0.0 ? 0.0L : (long double)beta * y_in[i];
    mag[i] = fabsl(ref[i]);
  }
  for (gs_idx_t i = 0; i < A->m && alpha != 0.0; ++i) /* alpha = 0: A and x unread (BLAS) */
    for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) {
      gs_idx_t out = trans ? A->col[p] : i, in = trans ? i : A->col[p];
      const double a = float_product ? (double)(float)A->val[p] : A->val[p];
      long double t = (long double)alpha * a * x[in];
      ref[out] += t;
      mag[out] += fabsl(t);
      amag[out] += fabsl(t);
      cnt[out]++;
    }
  /* the arithmetic's unit roundoff and the absolute error of an underflowing term */
  const long double u = float_product ? (long double)GS_PRECISION_FLOAT_U : 0x1p-53L;
  const long double u_ref = LDBL_EPSILON / 2.0L;
  r.ratio = 0.0;
  for (gs_idx_t i = 0; i < len; ++i) {
    double k = (double)cnt[i], ratio;
    long double g = (long double)gamma_k(k + 2, u) + gamma_k(k + 2, u_ref);
    long double tiny = float_product ? (k + 2) * (1.0L + fabs(alpha)) * FLT_MIN
                                     : (k + 1) * (1.0L + fabs(alpha)) * DBL_TRUE_MIN;
    long double bound =
        GS_TEST_SPMV_C * (g * (1.0L + u_v) * mag[i] + (long double)u_v * amag[i] + tiny);
    if (!isfinite(ref[i]) || !isfinite(mag[i])) {
      /* non-finite input: the same NaN or the same infinity passes, anything else fails */
      int same = (isnan(ref[i]) && isnan(y_out[i])) || (long double)y_out[i] == ref[i];
      ratio = same ? 0.0 : INFINITY;
    } else if (!isfinite(y_out[i])) {
      ratio = INFINITY;
    } else {
      ratio = (double)(fabsl((long double)y_out[i] - ref[i]) / bound);
    }
    if (ratio > r.ratio || r.index < 0) {
      r.ratio = ratio;
      r.index = i;
      r.got = y_out[i];
      r.want = (double)ref[i];
      r.bound = (double)bound;
      r.terms = cnt[i];
    }
  }
  free(ref);
  free(mag);
  free(amag);
  free(cnt);
  return r;
}

int gs_test_spmv_ok_u(const gs_csr_t *A, gs_op_t op, double alpha, const double *x,
                      double beta, const double *y_in, const double *y_out, double u_v,
                      const char *label)
{
  gs_test_spmv_cmp_t r = gs_test_spmv_compare_u(A, op, alpha, x, beta, y_in, y_out, u_v);
  if (r.ratio <= 1.0) return 1;
  fprintf(stderr,
          "\n  %s: op %c alpha %g beta %g u_v %g (%lld x %lld): y[%lld] = %.17g, reference %.17g, "
          "|error| %.3g > bound %.3g (ratio %.3g, %lld terms)\n",
          label ? label : "", op == GS_OP_T ? 'T' : 'N', alpha, beta, u_v,
          A ? (long long)A->m : -1LL, A ? (long long)A->n : -1LL, (long long)r.index, r.got,
          r.want, fabs(r.got - r.want), r.bound, r.ratio, (long long)r.terms);
  return 0;
}

int gs_test_spmv_ok_float(const gs_csr_t *A, gs_op_t op, float alpha, const float *x,
                          float beta, const float *y_in, const float *y_out, const char *label)
{
  gs_test_spmv_cmp_t r = gs_test_spmv_compare_float(A, op, alpha, x, beta, y_in, y_out);
  if (r.ratio <= 1.0) return 1;
  fprintf(stderr,
          "\n  %s: float product, op %c alpha %g beta %g (%lld x %lld): y[%lld] = %.9g, "
          "reference %.17g, |error| %.3g > bound %.3g (ratio %.3g, %lld terms)\n",
          label ? label : "", op == GS_OP_T ? 'T' : 'N', alpha, beta, A ? (long long)A->m : -1LL,
          A ? (long long)A->n : -1LL, (long long)r.index, r.got, r.want, fabs(r.got - r.want),
          r.bound, r.ratio, (long long)r.terms);
  return 0;
}

int gs_test_spmv_ok(const gs_csr_t *A, gs_op_t op, double alpha, const double *x, double beta,
                    const double *y_in, const double *y_out, const char *label_fmt, ...)
{
  gs_test_spmv_cmp_t r = gs_test_spmv_compare(A, op, alpha, x, beta, y_in, y_out);
  if (r.ratio <= 1.0) return 1;
  char label[512] = "";
  if (label_fmt) {
    va_list ap;
    va_start(ap, label_fmt);
    vsnprintf(label, sizeof label, label_fmt, ap);
    va_end(ap);
  }
  fprintf(stderr,
          "\n  %s: op %c alpha %g beta %g (%lld x %lld, nnz %lld): y[%lld] = %.17g, reference "
          "%.17g, |error| %.3g > bound %.3g (ratio %.3g, %lld terms)\n",
          label, op == GS_OP_T ? 'T' : 'N', alpha, beta, A ? (long long)A->m : -1LL,
          A ? (long long)A->n : -1LL, A ? (long long)A->nnz : -1LL, (long long)r.index, r.got,
          r.want, fabs(r.got - r.want), r.bound, r.ratio, (long long)r.terms);
  return 0;
}

/* ---- the backend registry and the real matrices --------------------------------------------- */

double gs_test_backend_option_default(const char *name, const char *key, double fallback)
{
  int i = gs_spmv_backend_find(name);
  if (i < 0) return fallback;
  gs_spmv_option_info_t info;
  for (int k = 0; gs_spmv_backend_option(i, k, &info); ++k)
    if (info.key && strcmp(info.key, key) == 0) return info.def;
  return fallback;
}

int gs_test_have_matrices(void)
{
  struct stat st;
  const char *dir = gs_test_matrix_dir();
  if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) return 1;
  printf("\n  skipped: matrix folder %s not found (set GS_MATRIX_DIR)\n", dir);
  return 0;
}

int gs_test_have_matrix(const char *name)
{
  static char told[64][64]; /* names already reported: one line per matrix and run */
  static int ntold;
  char path[4200];
  if (!gs_test_have_matrices()) return 0;
  snprintf(path, sizeof path, "%s/%s.mtx", gs_test_matrix_dir(), name);
  if (access(path, R_OK) == 0) return 1;
  for (int k = 0; k < ntold; ++k)
    if (!strcmp(told[k], name)) return 0;
  if (ntold < 64) snprintf(told[ntold++], sizeof told[0], "%s", name);
  printf("\n  skipped: %s.mtx is not in %s (point GS_MATRIX_DIR at the full set)\n", name,
         gs_test_matrix_dir());
  return 0;
}

/* ---- batches (test_batch_host, test_batch) ---------------------------------------------------- */

gs_csr_t *gs_test_empty_rows(gs_csr_t *A, int every)
{
  gs_coo_t *C = NULL;
  gs_csr_t *B = NULL;
  if (!A || gs_coo_create(&C, A->m, A->n, A->nnz + 1) != GS_SUCCESS) goto out;
  for (gs_idx_t i = 0; i < A->m; ++i)
    if (i % every != 1)
      for (gs_off_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k)
        if (gs_coo_push(C, i, A->col[k], A->val[k]) != GS_SUCCESS) goto out;
  gs_coo_to_csr(&B, C);
out:
  gs_coo_destroy(&C);
  gs_csr_destroy(&A);
  return B;
}

gs_csr_t *gs_test_two_wide_rows(uint64_t *s, gs_idx_t n, gs_off_t nnz)
{
  gs_csr_t *A = NULL;
  if (nnz < 0 || nnz > n || gs_csr_create(&A, 2, n, nnz) != GS_SUCCESS) return NULL;
  const gs_off_t a = (nnz + 1) / 2, b = nnz / 2;
  const gs_idx_t last_odd = (n - 1) % 2 ? n - 1 : n - 2;
  A->row_ptr[0] = 0;
  A->row_ptr[1] = a;
  A->row_ptr[2] = nnz;
  for (gs_off_t k = 0; k < a; ++k) A->col[k] = (gs_idx_t)(2 * k);
  for (gs_off_t k = 0; k < b; ++k) A->col[a + k] = (gs_idx_t)(last_odd - 2 * (b - 1 - k));
  for (gs_off_t k = 0; k < nnz; ++k) A->val[k] = 2.0 * gs_test_uniform(s) - 1.0;
  if (gs_csr_validate(A) != GS_SUCCESS) gs_csr_destroy(&A);
  return A;
}

gs_csr_t *gs_test_long_row(uint64_t *s, gs_idx_t n)
{
  gs_csr_t *A = gs_test_random_csr(s, n, n, 2.0 / n), *B = NULL;
  gs_coo_t *C = NULL;
  if (!A || gs_coo_create(&C, n, n, A->nnz + n) != GS_SUCCESS) goto out;
  for (gs_idx_t i = 0; i < n; ++i)
    if (i != 3)
      for (gs_off_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k)
        if (gs_coo_push(C, i, A->col[k], A->val[k]) != GS_SUCCESS) goto out;
  for (gs_idx_t j = 0; j < n; ++j)
    if (gs_coo_push(C, 3, j, 2.0 * gs_test_uniform(s) - 1.0) != GS_SUCCESS) goto out;
  gs_coo_to_csr(&B, C);
out:
  gs_coo_destroy(&C);
  gs_csr_destroy(&A);
  return B;
}

int gs_test_batch_mixed(uint64_t *s, gs_csr_t **A, int max)
{
  double one = 3.0;
  int c = 0;
  if (max < 13) return 0;
  A[c++] = gs_test_csr_from_dense(1, 1, &one);                        /* 1x1 */
  A[c++] = gs_test_empty_rows(gs_test_random_csr(s, 9, 9, 0.4), 3);   /* empty rows */
  A[c++] = gs_test_random_csr(s, 3, 7, 0.5);                          /* wide */
  A[c++] = gs_test_random_csr(s, 7, 3, 0.5);                          /* tall */
  A[c++] = gs_test_random_csr(s, 4, 4, 0.0);                          /* nnz = 0 */
  A[c++] = gs_test_random_csr(s, 5, 4000, 0.002);                     /* x beyond shared memory */
  A[c++] = gs_test_long_row(s, 80);                                   /* one long row */
  for (int k = 0; k < 6; ++k) {
    gs_idx_t m = 1 + (gs_idx_t)(gs_test_uniform(s) * 40), n = 1 + (gs_idx_t)(gs_test_uniform(s) * 40);
    A[c++] = gs_test_random_csr(s, m, n, 0.05 + 0.5 * gs_test_uniform(s));
  }
  for (int i = c - 1; i > 0; --i) { /* shuffle */
    int j = (int)(gs_test_uniform(s) * (i + 1));
    gs_csr_t *t = A[i];
    A[i] = A[j];
    A[j] = t;
  }
  for (int i = 0; i < c; ++i)
    if (!A[i]) return 0;
  return c;
}

/* ---- AMG levels ------------------------------------------------------------------------------ */

static void *amg_to_device(gs_context_t *ctx, const void *h, size_t bytes)
{
  void *p = NULL;
  CU_ASSERT_FATAL(gs_dmalloc(ctx, &p, bytes, "test buffer") == GS_SUCCESS);
  CU_ASSERT_FATAL(gs_copy_to_device(ctx, p, h, bytes) == GS_SUCCESS);
  return p;
}

void gs_test_amg_upload(gs_context_t *ctx, const gs_csr_t *H, gs_amg_dcsr_t *D)
{
  memset(D, 0, sizeof *D);
  CU_ASSERT_FATAL(H->nnz <= INT32_MAX);
  D->m = H->m;
  D->n = H->n;
  D->nnz = H->nnz;
  int32_t *rp = malloc(((size_t)H->m + 1) * sizeof *rp);
  CU_ASSERT_FATAL(rp != NULL);
  for (gs_idx_t i = 0; i <= H->m; ++i) rp[i] = (int32_t)H->row_ptr[i];
  D->rp = amg_to_device(ctx, rp, ((size_t)H->m + 1) * sizeof *rp);
  D->col = amg_to_device(ctx, H->col, (size_t)H->nnz * sizeof *H->col);
  D->val = amg_to_device(ctx, H->val, (size_t)H->nnz * sizeof *H->val);
  free(rp);
}

gs_csr_t *gs_test_amg_download(gs_context_t *ctx, const gs_amg_dcsr_t *D)
{
  gs_csr_t *H = NULL;
  CU_ASSERT_FATAL(gs_csr_create(&H, D->m, D->n, D->nnz) == GS_SUCCESS);
  int32_t *rp = malloc(((size_t)D->m + 1) * sizeof *rp);
  CU_ASSERT_FATAL(rp != NULL);
  CU_ASSERT_FATAL(gs_copy_to_host(ctx, rp, D->rp, ((size_t)D->m + 1) * sizeof *rp) ==
                  GS_SUCCESS);
  for (gs_idx_t i = 0; i <= D->m; ++i) H->row_ptr[i] = rp[i];
  free(rp);
  CU_ASSERT_FATAL(gs_copy_to_host(ctx, H->col, D->col, (size_t)D->nnz * sizeof *H->col) ==
                  GS_SUCCESS);
  CU_ASSERT_FATAL(gs_copy_to_host(ctx, H->val, D->val, (size_t)D->nnz * sizeof *H->val) ==
                  GS_SUCCESS);
  return H;
}

int gs_test_cli_fmt(char *out, size_t outsz, char *err, size_t errsz, const char *fmt, ...)
{
  char args[16384];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  return gs_test_cli(args, out, outsz, err, errsz);
}

int gs_test_one_line_error(const char *err)
{
  const size_t n = strlen(err);
  return n > 10 && strncmp(err, "gpusolve: ", 10) == 0 && err[n - 1] == '\n' &&
         strchr(err, '\n') == err + n - 1;
}

pid_t gs_test_fifo_feed(const char *fifo, const char *src)
{
  unlink(fifo);
  if (mkfifo(fifo, 0600) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", "exec cat \"$0\" > \"$1\"", src, fifo, (char *)NULL);
    _exit(127);
  }
  return pid;
}

void gs_test_fifo_done(pid_t pid)
{
  int status = 0;
  if (pid > 0) waitpid(pid, &status, 0);
}

void gs_test_swap_entries(gs_csr_t *A, gs_off_t a, gs_off_t b)
{
  const gs_idx_t c = A->col[a];
  const gs_val_t v = A->val[a];
  A->col[a] = A->col[b];
  A->val[a] = A->val[b];
  A->col[b] = c;
  A->val[b] = v;
}

int gs_test_is_permutation(const gs_idx_t *p, gs_idx_t n)
{
  unsigned char *seen = calloc((size_t)n + 1, 1);
  int ok = seen != NULL;
  for (gs_idx_t k = 0; ok && k < n; ++k) {
    if (p[k] < 0 || p[k] >= n || seen[p[k]]) ok = 0;
    else seen[p[k]] = 1;
  }
  free(seen);
  return ok;
}
