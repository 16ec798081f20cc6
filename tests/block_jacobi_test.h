/* tests/block_jacobi_test.h: what the block-Jacobi suites share: the seeded generator (the
 * suite's seed, printed by gs_test_main), the unit roundoff and gamma_k = k u / (1 - k u)
 * (Higham's bound constants), an allocation that fails the test. */
#ifndef GS_TESTS_BLOCK_JACOBI_TEST_H
#define GS_TESTS_BLOCK_JACOBI_TEST_H

#include <float.h>
#include <stdint.h>
#include <stdlib.h>

#include "tests/testutil.h"

static uint64_t g_state;
static int g_seeded;

static inline uint64_t *rng(void)
{
  if (!g_seeded) {
    g_state = gs_test_seed() ^ 0xb10cull;
    g_seeded = 1;
  }
  return &g_state;
}

static inline double rnd(void) { return 2.0 * gs_test_uniform(rng()) - 1.0; }
static inline int rndint(int n) { return (int)(gs_test_uniform(rng()) * n); }

static const double U = DBL_EPSILON / 2;
static inline double gam(double k) { return k * U / (1.0 - k * U); }

static inline void *xmalloc(size_t bytes)
{
  void *p = malloc(bytes ? bytes : 1);
  CU_ASSERT_FATAL(p != NULL);
  return p;
}

#endif
