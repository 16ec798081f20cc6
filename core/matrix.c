/* core/matrix.c: host COO and CSR containers, conversions, transpose, validation, reference SpMV. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/parallel.h"
#include "gpusolve/matrix.h"
#include "core/coo_csr.h" /* gs_coo_to_csr_threads */

/* ---- COO ---------------------------------------------------------------------------------- */

gs_status_t gs_coo_create(gs_coo_t **out, gs_idx_t m, gs_idx_t n, gs_off_t cap)
{
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_coo_create: out is NULL");
  *out = NULL;
  if (m < 0 || n < 0 || cap < 0)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_coo_create: negative size %d x %d, capacity %lld", m,
                    n, (long long)cap);
  if (cap < 1) cap = 1;
  gs_coo_t *A = calloc(1, sizeof *A);
  if (A) {
    A->row = malloc((size_t)cap * sizeof *A->row);
    A->col = malloc((size_t)cap * sizeof *A->col);
    A->val = malloc((size_t)cap * sizeof *A->val);
  }
  if (!A || !A->row || !A->col || !A->val) {
    gs_coo_destroy(&A);
    return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory for a COO of %lld entries",
                    (long long)cap);
  }
  A->m = m;
  A->n = n;
  A->cap = cap;
  *out = A;
  return GS_SUCCESS;
}

gs_status_t gs_coo_reserve(gs_coo_t *A, gs_off_t need)
{
  if (!A) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_coo_reserve: A is NULL");
  if (need <= A->cap) return GS_SUCCESS;
  gs_off_t cap = A->cap + A->cap / 2 + 1024;
  if (cap < need) cap = need;
  /* Each array is replaced as soon as its realloc succeeds, so a partial failure leaks nothing
   * and leaves A valid at its old capacity. */
  gs_idx_t *r = realloc(A->row, (size_t)cap * sizeof *r);
  if (r) A->row = r;
  gs_idx_t *c = realloc(A->col, (size_t)cap * sizeof *c);
  if (c) A->col = c;
  gs_val_t *v = realloc(A->val, (size_t)cap * sizeof *v);
  if (v) A->val = v;
  if (!r || !c || !v)
    return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory growing a COO to %lld entries",
                    (long long)cap);
  A->cap = cap;
  return GS_SUCCESS;
}

gs_status_t gs_coo_push(gs_coo_t *A, gs_idx_t i, gs_idx_t j, gs_val_t v)
{
  if (!A) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_coo_push: A is NULL");
  if (i < 0 || i >= A->m || j < 0 || j >= A->n)
    return GS_ERROR(GS_ERR_INVALID_ARG, "entry (%d, %d) outside a %d x %d matrix", i, j, A->m,
                    A->n);
  if (A->nnz == A->cap) GS_CHECK(gs_coo_reserve(A, A->nnz + 1));
  A->row[A->nnz] = i;
  A->col[A->nnz] = j;
  A->val[A->nnz] = v;
  A->nnz++;
  return GS_SUCCESS;
}

void gs_coo_destroy(gs_coo_t **A)
{
  if (!A || !*A) return;
  free((*A)->row);
  free((*A)->col);
  free((*A)->val);
  free(*A);
  *A = NULL;
}

/* ---- CSR ---------------------------------------------------------------------------------- */

gs_status_t gs_csr_create(gs_csr_t **out, gs_idx_t m, gs_idx_t n, gs_off_t nnz)
{
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_csr_create: out is NULL");
  *out = NULL;
  if (m < 0 || n < 0 || nnz < 0)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_csr_create: negative size %d x %d with %lld entries",
                    m, n, (long long)nnz);
  gs_csr_t *A = NULL;
  if ((uint64_t)nnz <= SIZE_MAX / sizeof(gs_val_t)) A = calloc(1, sizeof *A);
  if (A) {
    A->row_ptr = calloc((size_t)m + 1, sizeof *A->row_ptr);
    /* Never a zero-byte malloc: callers may index col/val of an nnz = 0 matrix as non-NULL. */
    A->col = malloc((size_t)(nnz ? nnz : 1) * sizeof *A->col);
    A->val = malloc((size_t)(nnz ? nnz : 1) * sizeof *A->val);
  }
  if (!A || !A->row_ptr || !A->col || !A->val) {
    gs_csr_destroy(&A);
    return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory for a %d x %d CSR with %lld entries",
                    m, n, (long long)nnz);
  }
  A->m = m;
  A->n = n;
  A->nnz = nnz;
  *out = A;
  return GS_SUCCESS;
}

void gs_csr_destroy(gs_csr_t **A)
{
  if (!A || !*A) return;
  free((*A)->row_ptr);
  free((*A)->col);
  free((*A)->val);
  free(*A);
  *A = NULL;
}

/* Matrices of this many entries or more are copied and checked on several threads (below, the
 * threads cost more than they save). */
#define CSR_THREADS_MIN ((gs_off_t)1 << 20)

static int csr_threads(const gs_csr_t *A)
{
  if (A->nnz < CSR_THREADS_MIN || A->m < 2) return 1;
  int nt = gs_mm_threads();
  return nt > 64 ? 64 : nt;
}

typedef struct copy_job {
  char *dst[3];
  const char *src[3];
  size_t bytes[3];
  int nt;
} copy_job_t;

static void copy_share(void *arg, int t)
{
  const copy_job_t *J = arg;
  for (int k = 0; k < 3; ++k) {
    const size_t lo = J->bytes[k] / (size_t)J->nt * (size_t)t,
                 hi = t == J->nt - 1 ? J->bytes[k] : J->bytes[k] / (size_t)J->nt * (size_t)(t + 1);
    if (hi > lo) memcpy(J->dst[k] + lo, J->src[k] + lo, hi - lo);
  }
}

gs_status_t gs_csr_copy(gs_csr_t **out, const gs_csr_t *A)
{
  if (!out || !A) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_csr_copy: NULL argument");
  GS_CHECK(gs_csr_create(out, A->m, A->n, A->nnz));
  gs_csr_t *B = *out;
  copy_job_t J = {{(char *)B->row_ptr, (char *)B->col, (char *)B->val},
                  {(const char *)A->row_ptr, (const char *)A->col, (const char *)A->val},
                  {((size_t)A->m + 1) * sizeof *B->row_ptr, (size_t)A->nnz * sizeof *B->col,
                   (size_t)A->nnz * sizeof *B->val},
                  csr_threads(A)};
  /* fresh pages: their faults, not the bytes, are most of a large copy's time */
  for (int k = 0; k < 3 && A->nnz >= CSR_THREADS_MIN; ++k) gs_advise_huge(J.dst[k], J.bytes[k]);
  gs_parallel(J.nt, copy_share, &J);
  B->symmetry = A->symmetry;
  return GS_SUCCESS;
}

/* One COO -> CSR conversion in the library: the Matrix Market reader's (core/coo_csr.c: count,
 * scatter in COO order, stable sort and left-to-right sum of each row), here on one thread. */
gs_status_t gs_coo_to_csr(gs_csr_t **out, const gs_coo_t *A)
{
  if (!out || !A) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_coo_to_csr: NULL argument");
  return gs_coo_to_csr_threads(out, A, 1);
}

gs_status_t gs_csr_to_coo(gs_coo_t **out, const gs_csr_t *A)
{
  if (!out || !A) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_csr_to_coo: NULL argument");
  GS_CHECK(gs_coo_create(out, A->m, A->n, A->nnz));
  gs_coo_t *C = *out;
  for (gs_idx_t i = 0; i < A->m; ++i)
    for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) {
      C->row[p] = i;
      C->col[p] = A->col[p];
      C->val[p] = A->val[p];
    }
  C->nnz = A->nnz;
  C->symmetry = A->symmetry;
  return GS_SUCCESS;
}

gs_status_t gs_csr_transpose(gs_csr_t **out, const gs_csr_t *A)
{
  gs_status_t st = GS_SUCCESS;
  gs_off_t *next = NULL;
  gs_csr_t *T = NULL;
  if (!out || !A) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_csr_transpose: NULL argument");
  *out = NULL;
  GS_TRY(gs_csr_create(&T, A->n, A->m, A->nnz));
  for (gs_off_t p = 0; p < A->nnz; ++p) T->row_ptr[A->col[p] + 1]++;
  for (gs_idx_t j = 0; j < A->n; ++j) T->row_ptr[j + 1] += T->row_ptr[j];
  next = malloc(((size_t)A->n + 1) * sizeof *next);
  if (!next) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory transposing a matrix");
  memcpy(next, T->row_ptr, ((size_t)A->n + 1) * sizeof *next);
  for (gs_idx_t i = 0; i < A->m; ++i) /* rows visited in order: columns of T come out sorted */
    for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) {
      gs_off_t q = next[A->col[p]]++;
      T->col[q] = i;
      T->val[q] = A->val[p];
    }
  T->symmetry = A->symmetry;
  *out = T;
  T = NULL;
cleanup:
  free(next);
  gs_csr_destroy(&T);
  return st;
}

/* The row checks of gs_csr_validate over rows [lo, hi): 0 when every row passes. */
static int rows_bad(const gs_csr_t *A, gs_idx_t lo, gs_idx_t hi)
{
  for (gs_idx_t i = lo; i < hi; ++i) {
    if (A->row_ptr[i + 1] < A->row_ptr[i] || A->row_ptr[i + 1] > A->nnz) return 1;
    for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p)
      if (A->col[p] < 0 || A->col[p] >= A->n || !isfinite(A->val[p])) return 1;
  }
  return 0;
}

/* Whether each row's columns strictly increase over rows [lo, hi): 0 when they do (a "fault"
 * otherwise, as rows_bad's). */
static int rows_unsorted(const gs_csr_t *A, gs_idx_t lo, gs_idx_t hi)
{
  for (gs_idx_t i = lo; i < hi; ++i)
    for (gs_off_t p = A->row_ptr[i] + 1; p < A->row_ptr[i + 1]; ++p)
      if (A->col[p] <= A->col[p - 1]) return 1;
  return 0;
}

typedef struct rows_job {
  const gs_csr_t *A;
  int (*test)(const gs_csr_t *A, gs_idx_t lo, gs_idx_t hi); /* 1: a fault in [lo, hi) */
  int nt;
  int hit[64];
} rows_job_t;

static void rows_share(void *arg, int t)
{
  rows_job_t *J = arg;
  const int64_t m = J->A->m;
  J->hit[t] = J->test(J->A, (gs_idx_t)(m * t / J->nt), (gs_idx_t)(m * (t + 1) / J->nt));
}

/* test over every row, on nt threads (t of nt taking rows m t / nt ..): 1 when any found a
 * fault. */
static int rows_any(const gs_csr_t *A, int (*test)(const gs_csr_t *, gs_idx_t, gs_idx_t), int nt)
{
  if (nt <= 1) return test(A, 0, A->m);
  rows_job_t J = {A, test, nt, {0}};
  gs_parallel(nt, rows_share, &J);
  int hit = 0;
  for (int t = 0; t < nt; ++t) hit |= J.hit[t];
  return hit;
}

gs_status_t gs_csr_validate(const gs_csr_t *A)
{
  /* A large matrix is checked on several threads first (a valid one, the usual case, then
   * costs one pass at the memory's speed); the serial loop below runs only when one of them
   * found a fault, so that the message names the first one, whatever the thread count. */
  const int nt = A ? csr_threads(A) : 1;
  if (nt > 1 && A->row_ptr && A->col && A->val && A->row_ptr[0] == 0 &&
      A->row_ptr[A->m] == A->nnz && !rows_any(A, rows_bad, nt))
    return GS_SUCCESS;
  if (!A) return GS_ERROR(GS_ERR_INVALID_ARG, "matrix is NULL");
  if (A->m < 0 || A->n < 0 || A->nnz < 0)
    return GS_ERROR(GS_ERR_INVALID_ARG, "negative size %d x %d with %lld entries", A->m, A->n,
                    (long long)A->nnz);
  if (!A->row_ptr || (A->nnz > 0 && (!A->col || !A->val)))
    return GS_ERROR(GS_ERR_INVALID_ARG, "matrix arrays are NULL");
  if (A->row_ptr[0] != 0)
    return GS_ERROR(GS_ERR_INVALID_ARG, "row_ptr[0] is %lld, not 0", (long long)A->row_ptr[0]);
  for (gs_idx_t i = 0; i < A->m; ++i) {
    if (A->row_ptr[i + 1] < A->row_ptr[i])
      return GS_ERROR(GS_ERR_INVALID_ARG, "row_ptr decreases at row %d", i);
    if (A->row_ptr[i + 1] > A->nnz)
      return GS_ERROR(GS_ERR_INVALID_ARG, "row_ptr[%d] = %lld exceeds nnz = %lld", i + 1,
                      (long long)A->row_ptr[i + 1], (long long)A->nnz);
    for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) {
      if (A->col[p] < 0 || A->col[p] >= A->n)
        return GS_ERROR(GS_ERR_INVALID_ARG, "row %d: column %d outside 0..%d", i, A->col[p],
                        A->n - 1);
      if (!isfinite(A->val[p]))
        return GS_ERROR(GS_ERR_INVALID_ARG, "row %d, column %d: value is not finite", i,
                        A->col[p]);
    }
  }
  if (A->row_ptr[A->m] != A->nnz)
    return GS_ERROR(GS_ERR_INVALID_ARG, "row_ptr[m] = %lld but nnz = %lld",
                    (long long)A->row_ptr[A->m], (long long)A->nnz);
  return GS_SUCCESS;
}

int gs_csr_is_sorted(const gs_csr_t *A) { return !rows_any(A, rows_unsorted, csr_threads(A)); }

/* y[lo..hi) of gs_csr_spmv_host's op N, each row summed in its own order. */
typedef struct spmv_job {
  const gs_csr_t *A;
  gs_val_t alpha;
  const gs_val_t *x;
  gs_val_t beta;
  gs_val_t *y;
  int nt;
} spmv_job_t;

static void spmv_rows(const spmv_job_t *J, gs_idx_t lo, gs_idx_t hi)
{
  const gs_csr_t *A = J->A;
  for (gs_idx_t i = lo; i < hi; ++i) {
    double s = 0.0;
    for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) s += A->val[p] * J->x[A->col[p]];
    /* beta = 0: y never read */
    J->y[i] = J->beta == 0.0 ? J->alpha * s : J->alpha * s + J->beta * J->y[i];
  }
}

static void spmv_rows_share(void *arg, int t)
{
  const spmv_job_t *J = (const spmv_job_t *)arg;
  const int64_t m = J->A->m;
  spmv_rows(J, (gs_idx_t)(m * t / J->nt), (gs_idx_t)(m * (t + 1) / J->nt));
}

gs_status_t gs_csr_spmv_host(const gs_csr_t *A, gs_op_t op, gs_val_t alpha, const gs_val_t *x,
                             gs_val_t beta, gs_val_t *y)
{
  if (!A || (!y && (op == GS_OP_T ? A->n : A->m) > 0) || (!x && A->nnz > 0 && alpha != 0.0))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_csr_spmv_host: NULL argument");
  if (op != GS_OP_N && op != GS_OP_T)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_csr_spmv_host: op must be GS_OP_N or GS_OP_T");
  if (alpha == 0.0) { /* BLAS: A and x are not read */
    const gs_idx_t len = op == GS_OP_T ? A->n : A->m;
    for (gs_idx_t i = 0; i < len; ++i) y[i] = beta == 0.0 ? 0.0 : beta * y[i];
    return GS_SUCCESS;
  }
  if (op == GS_OP_N) {
    spmv_job_t J = {A, alpha, x, beta, y, csr_threads(A)};
    if (J.nt > 1)
      gs_parallel(J.nt, spmv_rows_share, &J); /* rows apart: the same sums, bit for bit */
    else
      spmv_rows(&J, 0, A->m);
  } else {
    for (gs_idx_t j = 0; j < A->n; ++j) y[j] = beta == 0.0 ? 0.0 : beta * y[j];
    for (gs_idx_t i = 0; i < A->m; ++i) {
      double ax = alpha * x[i];
      for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) y[A->col[p]] += A->val[p] * ax;
    }
  }
  return GS_SUCCESS;
}

const char *gs_symmetry_string(gs_symmetry_t s)
{
  switch (s) {
  case GS_SYM_GENERAL: return "general";
  case GS_SYM_SYMMETRIC: return "symmetric";
  case GS_SYM_SKEW: return "skew-symmetric";
  }
  return "unknown";
}

double gs_spmv_rel_error(const gs_csr_t *A, gs_op_t op, gs_val_t alpha, const gs_val_t *x,
                         gs_val_t beta, const gs_val_t *y_in, const gs_val_t *y_out)
{
  const int trans = op == GS_OP_T;
  if (!A || (op != GS_OP_N && op != GS_OP_T)) return -1.0;
  const gs_idx_t len = trans ? A->n : A->m;
  double *ref = malloc(((size_t)len + 1) * sizeof *ref);
  double *mag = malloc(((size_t)len + 1) * sizeof *mag);
  if (!ref || !mag) {
    free(ref);
    free(mag);
    return -1.0;
  }
  for (gs_idx_t i = 0; i < len; ++i) {
    ref[i] = beta == 0.0 ? 0.0 : beta * y_in[i];
    mag[i] = beta == 0.0 ? 0.0 : fabs(beta * y_in[i]);
  }
  for (gs_idx_t i = 0; i < A->m && alpha != 0.0; ++i) /* alpha = 0: x is not read (BLAS) */
    for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) {
      gs_idx_t out = trans ? A->col[p] : i, in = trans ? i : A->col[p];
      double t = alpha * A->val[p] * x[in];
      ref[out] += t;
      mag[out] += fabs(t);
    }
  double num = 0.0, den = 0.0;
  for (gs_idx_t i = 0; i < len; ++i) {
    if (!isfinite(y_out[i])) {
      num = INFINITY;
      break;
    }
    double d = fabs(y_out[i] - ref[i]);
    if (d > num) num = d;
    if (mag[i] > den) den = mag[i];
  }
  free(ref);
  free(mag);
  if (num == 0.0) return 0.0;
  return num / (den > 0.0 ? den : 1e-300);
}
