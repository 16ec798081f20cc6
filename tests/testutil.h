/* tests/testutil.h: shared helpers of the CUnit suites (runner, seeds, paths, CLI runs). */
#ifndef GS_TESTUTIL_H
#define GS_TESTUTIL_H

#include <CUnit/CUnit.h>
#include <stddef.h>
#include <stdint.h>

#include "gpusolve.h"

/** Runs one suite; returns the process exit code: 0 all passed, 1 failures, 77 when the suite
 *  needs a GPU and none is present (ctest counts that as skipped). */
int gs_test_main(const char *suite, CU_TestInfo *tests, int needs_gpu);

/** Seed of this run: $GS_TEST_SEED if set, else drawn from the clock; printed once. */
uint64_t gs_test_seed(void);
/** splitmix64 step and a uniform double in [0, 1) from it. */
uint64_t gs_test_next(uint64_t *state);
double gs_test_uniform(uint64_t *state);

/** Path of a real matrix in ../shared/matrices (static buffer, valid until the next call). */
const char *gs_test_matrix(const char *name);
/** Path of a file under tests/data (static buffer). */
const char *gs_test_data(const char *rel);
/** Names of the real matrices (NULL-terminated). */
extern const char *const gs_test_matrix_names[];
/** 1 when GS_TEST_QUICK is set (valgrind runs take the small cases only). */
int gs_test_quick(void);

/** Runs the built CLI with `args` (shell words), captures stdout and stderr (truncated to the
 *  buffers) and returns its exit status (-1 when it could not be run). */
int gs_test_cli(const char *args, char *out, size_t outsz, char *err, size_t errsz);

/** CSR of a dense row-major m x n array, zeros skipped (asserts fatally on failure). */
gs_csr_t *gs_test_csr_from_dense(int m, int n, const double *a);

/** Random m x n CSR with about `density` of entries filled, values in [-1, 1). */
gs_csr_t *gs_test_random_csr(uint64_t *state, gs_idx_t m, gs_idx_t n, double density);

/** max_i |a_i - b_i| / max(max_i |b_i|, tiny): norm-wise relative difference. */
double gs_test_rel_err(const double *a, const double *b, size_t n);

#endif
