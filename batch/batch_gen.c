/* batch/batch_gen.c: seeded batches of small matrices whose sizes and patterns vary per problem
 * (gs_batch_gen), or that share one pattern with values varied per problem (gs_batch_gen_shared,
 * the uniform batches of cuSPARSE's strided baseline), for `gpusolve batch --gen`, the benchmark
 * and the tests. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "gpusolve/batch.h"

/* splitmix64: a fast, well-mixed stream from one 64-bit seed */
static uint64_t next(uint64_t *s)
{
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static double uniform(uint64_t *s) { return (double)(next(s) >> 11) * 0x1.0p-53; }
static gs_idx_t draw(uint64_t *s, gs_idx_t lo, gs_idx_t hi) /* uniform in [lo, hi] */
{
  return lo + (gs_idx_t)(next(s) % (uint64_t)(hi - lo + 1));
}

/* The 5-point Laplacian on the first k points of a grid nx wide, row-major (a rectangle with a
 * partial last line): a principal submatrix of the grid Laplacian with Dirichlet boundary, so SPD. */
static gs_status_t laplace_k(gs_csr_t **out, gs_idx_t k, gs_idx_t nx)
{
  gs_csr_t *A;
  GS_CHECK(gs_csr_create(&A, k, k, (gs_off_t)5 * k));
  gs_off_t e = 0;
  for (gs_idx_t p = 0; p < k; ++p) {
    const gs_idx_t j = p % nx;
    const gs_idx_t nb[5] = {p - nx, j > 0 ? p - 1 : -1, p, j + 1 < nx ? p + 1 : -1, p + nx};
    for (int t = 0; t < 5; ++t) {
      if (nb[t] < 0 || nb[t] >= k) continue;
      A->col[e] = nb[t];
      A->val[e++] = nb[t] == p ? 4.0 : -1.0;
    }
    A->row_ptr[p + 1] = e;
  }
  A->nnz = e;
  A->symmetry = GS_SYM_SYMMETRIC;
  *out = A;
  return GS_SUCCESS;
}

/* k x k, 1..16 off-diagonal entries per row at distinct random columns, values in [-1, 1), and a
 * diagonal of sign +-1 times (1 + sum |off-diagonal|): strictly diagonally dominant. */
static gs_status_t random_k(gs_csr_t **out, gs_idx_t k, uint64_t *s, unsigned char *mark)
{
  gs_csr_t *A;
  const gs_idx_t most = k - 1 < 16 ? k - 1 : 16;
  GS_CHECK(gs_csr_create(&A, k, k, (gs_off_t)k * (most + 1)));
  gs_off_t e = 0;
  for (gs_idx_t i = 0; i < k; ++i) {
    const gs_idx_t len = most > 0 ? draw(s, 1, most) : 0;
    mark[i] = 1;
    gs_idx_t cols[17];
    int c = 0;
    while (c < len) {
      gs_idx_t j = draw(s, 0, k - 1);
      if (mark[j]) continue;
      mark[j] = 1;
      cols[c++] = j;
    }
    cols[c++] = i;
    for (int a = 1; a < c; ++a) /* sort the few columns */
      for (int b = a; b > 0 && cols[b - 1] > cols[b]; --b) {
        gs_idx_t t = cols[b];
        cols[b] = cols[b - 1];
        cols[b - 1] = t;
      }
    double off = 0.0;
    gs_off_t diag = -1;
    for (int a = 0; a < c; ++a) {
      mark[cols[a]] = 0;
      A->col[e] = cols[a];
      if (cols[a] == i) {
        diag = e;
      } else {
        A->val[e] = 2.0 * uniform(s) - 1.0;
        off += fabs(A->val[e]);
      }
      ++e;
    }
    A->val[diag] = (uniform(s) < 0.5 ? -1.0 : 1.0) * (1.0 + off);
    A->row_ptr[i + 1] = e;
  }
  A->nnz = e;
  *out = A;
  return GS_SUCCESS;
}

void gs_batch_gen_free(gs_csr_t ***A, int count)
{
  if (!A || !*A) return;
  for (int i = 0; i < count; ++i) gs_csr_destroy(&(*A)[i]);
  free(*A);
  *A = NULL;
}

gs_status_t gs_batch_gen(gs_csr_t ***out, const char *kind, int count, gs_idx_t rmin,
                         gs_idx_t rmax, uint64_t seed)
{
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_gen: out is NULL");
  *out = NULL;
  if (!kind) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_gen: kind is NULL");
  const int lap = !strcmp(kind, "laplace");
  if (!lap && strcmp(kind, "random"))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_gen: unknown kind '%s' (laplace, random)", kind);
  if (count < 1 || rmin < 1 || rmax < rmin)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_gen: need count >= 1 and 1 <= rows min <= "
                    "max (%d, %d, %d)", count, (int)rmin, (int)rmax);
  gs_status_t st = GS_SUCCESS;
  uint64_t s = seed;
  gs_csr_t **A = calloc((size_t)count, sizeof *A);
  unsigned char *mark = calloc((size_t)rmax, 1);
  if (!A || !mark) GS_FAIL(GS_ERR_HOST_MEMORY, "gs_batch_gen: out of host memory");
  for (int i = 0; i < count; ++i) {
    const gs_idx_t k = draw(&s, rmin, rmax);
    if (lap) { /* grid width near sqrt(k), varied so that equal sizes get other patterns */
      const gs_idx_t w = (gs_idx_t)ceil(sqrt((double)k));
      GS_TRY(laplace_k(&A[i], k, draw(&s, (w + 1) / 2, w)));
    } else {
      GS_TRY(random_k(&A[i], k, &s, mark));
    }
  }
  *out = A;
  A = NULL;
cleanup:
  gs_batch_gen_free(&A, count);
  free(mark);
  return st;
}

/* Problem i's values on the shared pattern P, in P's entry order: the Laplacian's with the
 * diagonal 4 + d_i (one d_i in [0, 1) per problem: still symmetric and diagonally dominant with
 * a positive diagonal, so SPD); random values in [-1, 1) off the diagonal and a diagonal of sign
 * +-1 times (1 + sum |off-diagonal|), drawn per problem (strictly diagonally dominant). */
static void shared_values(const gs_csr_t *P, int lap, uint64_t *s, gs_val_t *v)
{
  const double shift = lap ? uniform(s) : 0.0;
  for (gs_idx_t r = 0; r < P->m; ++r) {
    double off = 0.0;
    gs_off_t diag = -1;
    for (gs_off_t e = P->row_ptr[r]; e < P->row_ptr[r + 1]; ++e) {
      if (P->col[e] == r) {
        diag = e;
        continue;
      }
      v[e] = lap ? P->val[e] : 2.0 * uniform(s) - 1.0;
      off += fabs(v[e]);
    }
    if (diag >= 0) v[diag] = lap ? P->val[diag] + shift : (uniform(s) < 0.5 ? -1.0 : 1.0) * (1.0 + off);
  }
}

gs_status_t gs_batch_gen_shared(gs_csr_t **pattern, gs_val_t **values, const char *kind,
                                int count, gs_idx_t rmin, gs_idx_t rmax, uint64_t seed)
{
  if (!pattern || !values) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_gen_shared: NULL output");
  *pattern = NULL;
  *values = NULL;
  if (count < 1) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_gen_shared: count %d < 1", count);
  gs_csr_t **one = NULL;
  /* the pattern: the first problem gs_batch_gen draws from this seed */
  GS_CHECK(gs_batch_gen(&one, kind, 1, rmin, rmax, seed));
  gs_csr_t *P = one[0];
  one[0] = NULL;
  gs_batch_gen_free(&one, 1);
  const size_t nnz = (size_t)P->nnz;
  gs_val_t *v = malloc(((size_t)count * nnz + 1) * sizeof *v);
  if (!v) {
    gs_csr_destroy(&P);
    return GS_ERROR(GS_ERR_HOST_MEMORY, "gs_batch_gen_shared: out of host memory for %d x %zu "
                    "values", count, nnz);
  }
  const int lap = !strcmp(kind, "laplace");
  uint64_t s = seed ^ 0x5A4EDull;
  for (int i = 0; i < count; ++i) shared_values(P, lap, &s, v + (size_t)i * nnz);
  if (nnz) memcpy(P->val, v, nnz * sizeof *v); /* the pattern carries problem 0's values */
  *pattern = P;
  *values = v;
  return GS_SUCCESS;
}
