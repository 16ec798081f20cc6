/* tests/testutil.h: shared helpers of the CUnit suites (runner, seeds, paths, CLI runs). */
#ifndef GS_TESTUTIL_H
#define GS_TESTUTIL_H

#include <CUnit/CUnit.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gpusolve.h"
#include "precond/amg_impl.h"

/** Runs one suite; returns the process exit code: 0 all passed, 1 failures (or no test run), 77
 *  when the suite needs a GPU and none is present (ctest counts that as skipped).
 *  GS_TEST_ONLY=TEXT keeps the tests whose name contains TEXT (tests[] is filtered in place),
 *  e.g. to run one test under compute-sanitizer. */
int gs_test_main(const char *suite, CU_TestInfo *tests, int needs_gpu);

/** Seed of this run: $GS_TEST_SEED if set, else drawn from the clock; printed once. */
uint64_t gs_test_seed(void);
/** splitmix64 step and a uniform double in [0, 1) from it. */
uint64_t gs_test_next(uint64_t *state);
double gs_test_uniform(uint64_t *state);

/** Folder of the real matrices: $GS_MATRIX_DIR when set, else the CMake cache entry
 *  GS_MATRIX_DIR (by default the small in-repository set, tests/data/matrices). */
const char *gs_test_matrix_dir(void);
/** Path of a real matrix in that folder (static buffer, valid until the next call); tests call
 *  gs_test_have_matrix(name) (or gs_test_have_matrices() for a folder-wide check) first. */
const char *gs_test_matrix(const char *name);
/** Path of a file under tests/data (static buffer). */
const char *gs_test_data(const char *rel);
/** Names of the real matrices (NULL-terminated). */
extern const char *const gs_test_matrix_names[];
/** 1 when GS_TEST_QUICK is set (valgrind runs take the small cases only). */
int gs_test_quick(void);

/** A folder of this process only, created on first use under $TMPDIR (or /tmp) and removed
 *  with its files at exit. Every temporary file of a suite goes there, so suites running at the
 *  same time (ctest -j, a suite beside its valgrind run, scripts/seeds.sh) never share a path. */
const char *gs_test_tmpdir(void);
/** gs_test_tmpdir()/name (static buffer, valid until the next call). */
const char *gs_test_tmpfile(const char *name);

/** Runs the built CLI with `args` (shell words), captures stdout and stderr (truncated to the
 *  buffers) and returns its exit status (-1 when it could not be run). */
int gs_test_cli(const char *args, char *out, size_t outsz, char *err, size_t errsz);
/** gs_test_cli with the arguments formatted from fmt (printf), at most 16 KiB of them. */
int gs_test_cli_fmt(char *out, size_t outsz, char *err, size_t errsz, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/** Whether err is exactly one line, starting "gpusolve: " (the CLI's error convention). */
int gs_test_one_line_error(const char *err);
/** gs_test_cli with the command started through `prefix` (a launcher and its arguments, e.g.
 *  "timeout 120 mpiexec -n 2"; "" for none). */
int gs_test_cli_under(const char *prefix, const char *args, char *out, size_t outsz, char *err,
                      size_t errsz);

/** CSR of a dense row-major m x n array, zeros skipped (asserts fatally on failure). */
gs_csr_t *gs_test_csr_from_dense(int m, int n, const double *a);
/** 1 when p[0..n-1] is a permutation of 0..n-1. */
int gs_test_is_permutation(const gs_idx_t *p, gs_idx_t n);
/** Swaps entries a and b of A (column and value): the tests' row shuffles and reversals. */
void gs_test_swap_entries(gs_csr_t *A, gs_off_t a, gs_off_t b);

/** Random m x n CSR with about `density` of entries filled, values in [-1, 1). */
gs_csr_t *gs_test_random_csr(uint64_t *state, gs_idx_t m, gs_idx_t n, double density);

/** m x n CSR whose row i holds len[i] entries, spread evenly over the columns (k * n / len[i];
 *  k mod n once len[i] >= n, duplicates merged), values in [-1, 1) from `state` (asserts fatally
 *  on failure). */
gs_csr_t *gs_test_csr_from_lengths(uint64_t *state, const int *len, gs_idx_t m, gs_idx_t n);

/** max_i |a_i - b_i| / max(max_i |b_i|, tiny): norm-wise relative difference. For residuals and
 *  solver results only: products y = alpha*op(A)*x + beta*y are compared with gs_test_spmv_ok. */
double gs_test_rel_err(const double *a, const double *b, size_t n);

/* ---- comparing sparse products -------------------------------------------------------------- */

/** Safety factor of the product bound (see gs_test_spmv_compare in testutil.c). */
#define GS_TEST_SPMV_C 2.0

/** Outcome of comparing one computed product against the reference. */
typedef struct gs_test_spmv_cmp {
  double ratio;  /* max_i |y_out_i - ref_i| / bound_i: <= 1 passes; INFINITY when y_out holds a
                    NaN or Inf that the reference does not (or the reference could not be
                    computed); 0 for an empty output */
  int64_t index; /* the i where ratio is reached (-1 for an empty output) */
  double got, want, bound; /* y_out[index], the reference and the bound there */
  int64_t terms; /* k_index: entries of row `index` of op(A) */
} gs_test_spmv_cmp_t;

/**
 * Compares y_out against y = alpha*op(A)*x + beta*y_in, element by element, with the rounding
 * bound of the summation (derivation in testutil.c):
 *   |y_out_i - ref_i| <= C * (gamma_{k_i+2}(u) + gamma_{k_i+2}(u_ref)) * M_i + underflow term,
 *   M_i = |alpha| (|op(A)| |x|)_i + |beta| |y_in_i|,  gamma_k(u) = k u / (1 - k u),
 * k_i the entries of row i of op(A), u = 2^-53, u_ref the unit roundoff of the long double
 * reference, C = GS_TEST_SPMV_C. As in BLAS, y_in is not read when beta == 0 (it may be NULL
 * or hold NaN), and A and x are not read when alpha == 0.
 * Lengths: x has op(A)'s column count, y_in and y_out its row count.
 */
gs_test_spmv_cmp_t gs_test_spmv_compare(const gs_csr_t *A, gs_op_t op, double alpha,
                                        const double *x, double beta, const double *y_in,
                                        const double *y_out);

/**
 * gs_test_spmv_compare for a product whose values were rounded to a unit roundoff u_v before
 * use (u_v = GS_PRECISION_MIXED_U = 2^-24 for precision=mixed; 0 gives gs_test_spmv_compare):
 * the product is exact for values a (1 + d), |d| <= u_v, so the bound gains
 * C * u_v |alpha| (|op(A)| |x|)_i, and its rounding term a factor (1 + u_v) on the magnitudes.
 */
gs_test_spmv_cmp_t gs_test_spmv_compare_u(const gs_csr_t *A, gs_op_t op, double alpha,
                                          const double *x, double beta, const double *y_in,
                                          const double *y_out, double u_v);

/**
 * Compares the float product y_out (precision=float: float values, vectors and arithmetic)
 * against the long double product of A's values rounded to float, A_f, with the float x,
 * alpha, beta and y_in, within the bound derived in testutil.c:
 *   |y_out_i - ref_i| <= C * ((gamma_{k_i+2}(u_f) + gamma_{k_i+2}(u_ref)) * M_i
 *                             + (k_i + 2)(1 + |alpha|) FLT_MIN),
 *   M_i = |alpha| (|op(A_f)| |x|)_i + |beta| |y_in_i|, u_f = 2^-24 (GS_PRECISION_FLOAT_U).
 * y_in is not read when beta == 0 (NULL or NaN allowed). Lengths as gs_test_spmv_compare.
 */
gs_test_spmv_cmp_t gs_test_spmv_compare_float(const gs_csr_t *A, gs_op_t op, float alpha,
                                              const float *x, float beta, const float *y_in,
                                              const float *y_out);
/** gs_test_spmv_compare_float, then 1 within the bound; otherwise one line on stderr (label,
 *  op, alpha, beta, the worst element) and 0. */
int gs_test_spmv_ok_float(const gs_csr_t *A, gs_op_t op, float alpha, const float *x,
                          float beta, const float *y_in, const float *y_out, const char *label);

/** gs_test_spmv_ok with gs_test_spmv_compare_u's bound for values rounded to u_v. */
int gs_test_spmv_ok_u(const gs_csr_t *A, gs_op_t op, double alpha, const double *x,
                      double beta, const double *y_in, const double *y_out, double u_v,
                      const char *label);

/**
 * gs_test_spmv_compare, then 1 when every element is within its bound; otherwise prints one
 * line to stderr (the printf-style label, op, alpha, beta, shape, the worst element with its
 * value, reference, bound and ratio) and returns 0. Use as CU_ASSERT(gs_test_spmv_ok(...)).
 */
int gs_test_spmv_ok(const gs_csr_t *A, gs_op_t op, double alpha, const double *x, double beta,
                    const double *y_in, const double *y_out, const char *label_fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 8, 9)))
#endif
    ;

/* ---- the backend registry and the real matrices --------------------------------------------- */

/** Default value of option `key` of backend `name` as the registry declares it; `fallback` when
 *  the backend does not declare the key. */
double gs_test_backend_option_default(const char *name, const char *key, double fallback);

/** 1 when the folder of real matrices (GS_MATRIX_DIR) exists. Otherwise prints one line
 *  "skipped: matrix folder <path> not found (set GS_MATRIX_DIR)" and returns 0: a test that
 *  needs the real matrices returns early on 0 (CUnit has no skip; the test counts as passed). */
int gs_test_have_matrices(void);
/** 1 when matrix `name` is in the folder. Otherwise prints (once per name) "skipped: NAME.mtx is
 *  not in <folder> (point GS_MATRIX_DIR at the full set)" and returns 0: the in-repository set
 *  is a subset, so a test skips a matrix it does not find instead of failing. */
int gs_test_have_matrix(const char *name);

/* ---- batches --------------------------------------------------------------------------------- */

/** A with the rows i % every == 1 emptied (A is consumed; NULL on failure). */
gs_csr_t *gs_test_empty_rows(gs_csr_t *A, int every);
/** A 2 x n matrix of nnz random entries: row 0 at the even columns from 0, row 1 at the odd
 *  columns ending at the last odd column below n (nnz <= n; NULL on failure). With n = 65536
 *  and nnz = 65535 it is the largest problem the 16-bit batched kernels take: its last row
 *  pointer is 65535 and its last column 65535. */
gs_csr_t *gs_test_two_wide_rows(uint64_t *state, gs_idx_t n, gs_off_t nnz);
/** Sparse n x n random matrix with row 3 full (one long row). */
gs_csr_t *gs_test_long_row(uint64_t *state, gs_idx_t n);
/** The mixed batch in a random order: 1x1, empty rows, wide and tall, nnz = 0, a 5 x 4000
 *  problem (x beyond the kernels' shared memory), one long row, six random ones; fills A[0..]
 *  (max >= 13) and returns the count, 0 on failure. */
int gs_test_batch_mixed(uint64_t *state, gs_csr_t **A, int max);

/* ---- AMG levels ------------------------------------------------------------------------------ */

/** H on the device as an AMG level's matrix (32-bit row pointers; counted on ctx); asserts
 *  (fatal) on failure. Free with gs_amg_dcsr_free. */
void gs_test_amg_upload(gs_context_t *ctx, const gs_csr_t *H, gs_amg_dcsr_t *D);
/** An AMG level's device matrix back on the host (the caller destroys it). */
gs_csr_t *gs_test_amg_download(gs_context_t *ctx, const gs_amg_dcsr_t *D);

/** A FIFO at `fifo` fed with file `src` by a child `cat` (the reader under test sees a pipe):
 *  returns the child's pid, or -1. gs_test_fifo_done waits for it (a reader that stops early
 *  ends the child by SIGPIPE, which is accepted). */
pid_t gs_test_fifo_feed(const char *fifo, const char *src);
void gs_test_fifo_done(pid_t pid);

#endif
