/* precond/amg_host.c: host reference of the smoothed-aggregation AMG setup phases (pure C):
 * diagonal, strength of connection, MIS(2) aggregation (Bell, Dalton and Olson, SISC 2012,
 * Algorithm 2 and Section 4.1), tentative and smoothed prolongators (Vanek, Mandel and Brezina
 * 1996), the sparse product and the Galerkin product P^T (A P). Every rule, including the order
 * of each floating-point operation where the GPU must give the same bits, is the one written in
 * precond/amg_impl.h; the device phases (precond/amg_setup_kernels.cu) are tested against these.
 * Products and sums are written as separate statements (`prod = a * b; v = v + prod;`) so that no
 * compiler may fuse them into an fma. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "precond/amg_impl.h"

void gs_amg_diag_host(const gs_csr_t *A, double *d)
{
  if (!A || !d) return;
  for (gs_idx_t i = 0; i < A->m; ++i) {
    d[i] = 0.0;
    for (gs_off_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k)
      if (A->col[k] == i) d[i] = A->val[k];
  }
}

void gs_amg_strength_host(const gs_csr_t *A, const double *d, double theta, uint8_t *strong)
{
  if (!A || !d || !strong) return;
  for (gs_idx_t i = 0; i < A->m; ++i) {
    const double di = fabs(d[i]);
    for (gs_off_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k) {
      const gs_idx_t j = A->col[k];
      const double a = A->val[k];
      int s = 0;
      if (j != i && a != 0.0) {
        /* |a_ij| >= theta * sqrt(|d_i| * |d_j|), in this order (the device's too) */
        const double dd = di * fabs(d[j]);
        const double thr = theta * sqrt(dd);
        s = fabs(a) >= thr;
      }
      strong[k] = (uint8_t)s;
    }
  }
}

/* ---- aggregation -------------------------------------------------------------------------- */

/* The MIS(2) key of node i in state st (amg_impl.h). */
static uint64_t node_key(const uint8_t *state, gs_idx_t i)
{
  return gs_amg_key(state[i], i);
}

gs_status_t gs_amg_aggregate_host(const gs_csr_t *A, const uint8_t *strong, int32_t *agg,
                                  int32_t *naggs, int *rounds)
{
  gs_status_t st = GS_SUCCESS;
  uint8_t *iso = NULL, *state = NULL;
  uint64_t *t1 = NULL, *t2 = NULL;
  int32_t *prev = NULL;
  if (!A || (!strong && A->nnz > 0) || (!agg && A->m > 0) || !naggs || !rounds)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_aggregate_host: NULL argument");
  if (A->m != A->n)
    return GS_ERROR(GS_ERR_DIMENSION, "gs_amg_aggregate_host: A is %d x %d, not square", A->m,
                    A->n);
  *naggs = 0;
  *rounds = 0;
  const gs_idx_t n = A->m;
  const size_t sz = (size_t)(n > 0 ? n : 1);
  iso = malloc(sz);
  state = malloc(sz);
  t1 = malloc(sz * sizeof *t1);
  t2 = malloc(sz * sizeof *t2);
  prev = malloc(sz * sizeof *prev);
  if (!iso || !state || !t1 || !t2 || !prev)
    GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory aggregating %d nodes", n);

  /* Isolated: no strong off-diagonal entry (strong[] is 0 on the diagonal; the column test
   * guards a caller's flags). */
  gs_idx_t undecided = 0;
  for (gs_idx_t i = 0; i < n; ++i) {
    int any = 0;
    for (gs_off_t k = A->row_ptr[i]; k < A->row_ptr[i + 1] && !any; ++k)
      any = strong[k] && A->col[k] != i;
    iso[i] = (uint8_t)!any;
    state[i] = any ? GS_AMG_UNDECIDED : GS_AMG_OUT;
    undecided += any;
  }

  /* MIS(2) rounds: t1 = max key over {i} u Ns(i), t2 = max t1 over the same set (both from the
   * previous step's arrays), then the decisions of every UNDECIDED node at once. Each round
   * decides at least the UNDECIDED node of largest key, so there are at most n rounds. */
  while (undecided > 0) {
    ++*rounds;
    for (gs_idx_t i = 0; i < n; ++i) {
      if (iso[i]) continue;
      uint64_t m = node_key(state, i);
      for (gs_off_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k) {
        const gs_idx_t j = A->col[k];
        if (!strong[k] || j == i || iso[j]) continue;
        const uint64_t kj = node_key(state, j);
        if (kj > m) m = kj;
      }
      t1[i] = m;
    }
    for (gs_idx_t i = 0; i < n; ++i) {
      if (iso[i]) continue;
      uint64_t m = t1[i];
      for (gs_off_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k) {
        const gs_idx_t j = A->col[k];
        if (!strong[k] || j == i || iso[j]) continue;
        if (t1[j] > m) m = t1[j];
      }
      t2[i] = m;
    }
    gs_idx_t decided = 0;
    for (gs_idx_t i = 0; i < n; ++i) {
      if (iso[i] || state[i] != GS_AMG_UNDECIDED) continue;
      if (t2[i] == node_key(state, i)) {
        state[i] = GS_AMG_IN;
        ++decided;
      } else if ((t2[i] >> 62) == GS_AMG_IN) {
        state[i] = GS_AMG_OUT;
        ++decided;
      }
    }
    if (decided == 0) GS_FAIL(GS_ERR_INTERNAL, "MIS(2) round %d decided no node", *rounds);
    undecided -= decided;
  }

  /* a. the roots, numbered in node order */
  int32_t next = 0;
  for (gs_idx_t i = 0; i < n; ++i) agg[i] = state[i] == GS_AMG_IN ? next++ : -1;
  /* b. a root neighbour's aggregate: the root of largest key */
  for (gs_idx_t i = 0; i < n; ++i) {
    if (iso[i] || state[i] == GS_AMG_IN) continue;
    uint64_t best = 0;
    gs_idx_t bj = -1;
    for (gs_off_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k) {
      const gs_idx_t j = A->col[k];
      if (!strong[k] || j == i || state[j] != GS_AMG_IN) continue;
      const uint64_t kj = gs_amg_key(GS_AMG_IN, j);
      if (bj < 0 || kj > best) {
        best = kj;
        bj = j;
      }
    }
    if (bj >= 0) agg[i] = agg[bj];
  }
  /* c. the aggregate (as b left it) of the neighbour of largest rank-0 key that has one */
  memcpy(prev, agg, (size_t)n * sizeof *prev);
  for (gs_idx_t i = 0; i < n; ++i) {
    if (iso[i] || prev[i] >= 0) continue;
    uint64_t best = 0;
    gs_idx_t bj = -1;
    for (gs_off_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k) {
      const gs_idx_t j = A->col[k];
      if (!strong[k] || j == i || prev[j] < 0) continue;
      const uint64_t kj = gs_amg_key(GS_AMG_OUT, j);
      if (bj < 0 || kj > best) {
        best = kj;
        bj = j;
      }
    }
    if (bj >= 0) agg[i] = prev[bj];
  }
  /* d. singletons, after the roots in node order. With the MIS(2) above every OUT node reaches
   * a root in at most two strong hops, so b and c leave none; kept as the header's rule. */
  for (gs_idx_t i = 0; i < n; ++i)
    if (!iso[i] && agg[i] < 0) agg[i] = next++;
  *naggs = next;

cleanup:
  free(iso);
  free(state);
  free(t1);
  free(t2);
  free(prev);
  return st;
}

/* ---- prolongators ------------------------------------------------------------------------- */

gs_status_t gs_amg_tentative_host(gs_idx_t n, const int32_t *agg, int32_t naggs,
                                  const double *B, double *t)
{
  gs_status_t st = GS_SUCCESS;
  double *nrm = NULL;
  if (n < 0 || naggs < 0)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_tentative_host: negative size (n %d, naggs %d)",
                    n, naggs);
  if (n > 0 && (!agg || !t)) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_tentative_host: NULL");
  for (gs_idx_t i = 0; i < n; ++i)
    if (agg[i] >= naggs || agg[i] < -1)
      return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_tentative_host: node %d in aggregate %d of %d",
                      i, agg[i], naggs);
  nrm = calloc((size_t)(naggs > 0 ? naggs : 1), sizeof *nrm);
  if (!nrm) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory for %d aggregate norms", naggs);
  /* ||B restricted to the aggregate||^2, summed in node order (B = ones: the exact count) */
  for (gs_idx_t i = 0; i < n; ++i) {
    if (agg[i] < 0) continue;
    const double b = B ? B[i] : 1.0;
    const double sq = b * b;
    nrm[agg[i]] = nrm[agg[i]] + sq;
  }
  for (int32_t J = 0; J < naggs; ++J) nrm[J] = sqrt(nrm[J]);
  for (gs_idx_t i = 0; i < n; ++i) {
    if (agg[i] < 0 || nrm[agg[i]] == 0.0) {
      t[i] = 0.0; /* isolated, or an aggregate where B vanishes */
      continue;
    }
    const double b = B ? B[i] : 1.0;
    t[i] = b / nrm[agg[i]];
  }

cleanup:
  free(nrm);
  return st;
}

static int cmp_i32(const void *a, const void *b)
{
  const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

gs_status_t gs_amg_smooth_p_host(const gs_csr_t *A, const double *d, const int32_t *agg,
                                 const double *t, int32_t naggs, double omega, gs_csr_t **P)
{
  gs_status_t st = GS_SUCCESS;
  int32_t *mark = NULL, *list = NULL;
  double *acc = NULL;
  gs_csr_t *C = NULL;
  if (!P) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_smooth_p_host: P is NULL");
  *P = NULL;
  if (!A || naggs < 0 || (A->m > 0 && (!d || !agg || !t)))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_smooth_p_host: NULL argument or naggs < 0");
  if (A->m != A->n)
    return GS_ERROR(GS_ERR_DIMENSION, "gs_amg_smooth_p_host: A is %d x %d, not square", A->m,
                    A->n);
  const gs_idx_t n = A->m;
  gs_off_t longest = 0;
  for (gs_idx_t i = 0; i < n; ++i) {
    if (d[i] == 0.0)
      return GS_ERROR(GS_ERR_INVALID_ARG,
                      "smoothed prolongator: zero diagonal in row %lld (1-based): D^-1 A needs "
                      "every a_ii != 0",
                      (long long)i + 1);
    if (agg[i] >= naggs || agg[i] < -1)
      return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_smooth_p_host: node %d in aggregate %d of %d",
                      i, agg[i], naggs);
    const gs_off_t len = A->row_ptr[i + 1] - A->row_ptr[i];
    if (len > longest) longest = len;
  }
  mark = malloc((size_t)(naggs > 0 ? naggs : 1) * sizeof *mark);
  acc = malloc((size_t)(naggs > 0 ? naggs : 1) * sizeof *acc);
  list = malloc((size_t)(longest > 0 ? longest : 1) * sizeof *list);
  if (!mark || !acc || !list)
    GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory smoothing a %d x %d prolongator", n, naggs);

  /* symbolic: the distinct aggregates met in each row */
  for (int32_t J = 0; J < naggs; ++J) mark[J] = -1;
  gs_off_t nnz = 0;
  for (gs_idx_t i = 0; i < n; ++i)
    for (gs_off_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k) {
      const int32_t J = agg[A->col[k]];
      if (J >= 0 && mark[J] != i) {
        mark[J] = i;
        ++nnz;
      }
    }
  GS_TRY(gs_csr_create(&C, n, naggs, nnz));

  /* numeric: v_J accumulated in column order (each product and sum rounded on its own), the
   * columns in increasing J, P(i, J) = w_i * v_J (+ t_i on the own aggregate). v_J starts from
   * +0.0, as the device's sum does. */
  for (int32_t J = 0; J < naggs; ++J) mark[J] = -1;
  gs_off_t q = 0;
  for (gs_idx_t i = 0; i < n; ++i) {
    const double w = -omega / d[i];
    int32_t cnt = 0;
    for (gs_off_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k) {
      const gs_idx_t j = A->col[k];
      const int32_t J = agg[j];
      if (J < 0) continue;
      if (mark[J] != i) {
        mark[J] = i;
        acc[J] = 0.0;
        list[cnt++] = J;
      }
      const double prod = A->val[k] * t[j];
      acc[J] = acc[J] + prod;
    }
    qsort(list, (size_t)cnt, sizeof *list, cmp_i32);
    for (int32_t c = 0; c < cnt; ++c) {
      const int32_t J = list[c];
      const double prod = w * acc[J];
      double v = prod;
      if (J == agg[i]) v = t[i] + prod;
      C->col[q] = J;
      C->val[q++] = v;
    }
    C->row_ptr[i + 1] = q;
  }
  *P = C;
  C = NULL;

cleanup:
  free(mark);
  free(acc);
  free(list);
  gs_csr_destroy(&C);
  return st;
}

/* ---- products ----------------------------------------------------------------------------- */

/* Gustavson's row-by-row product (ACM TOMS 1978) with a dense accumulator and a marker per
 * column of B: a symbolic pass counts each row's distinct columns, the numeric pass sums each
 * entry in increasing k of A's row, then the row's columns are sorted. O(flops + nnz log). */
gs_status_t gs_amg_spgemm_host(const gs_csr_t *A, const gs_csr_t *B, gs_csr_t **C)
{
  gs_status_t st = GS_SUCCESS;
  gs_idx_t *mark = NULL, *list = NULL;
  double *acc = NULL;
  gs_csr_t *R = NULL;
  if (!C) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_spgemm_host: C is NULL");
  *C = NULL;
  if (!A || !B) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_spgemm_host: NULL argument");
  if (A->n != B->m)
    return GS_ERROR(GS_ERR_DIMENSION, "gs_amg_spgemm_host: A is %d x %d, B is %d x %d", A->m,
                    A->n, B->m, B->n);
  const size_t nc = (size_t)(B->n > 0 ? B->n : 1);
  mark = malloc(nc * sizeof *mark);
  list = malloc(nc * sizeof *list);
  acc = malloc(nc * sizeof *acc);
  if (!mark || !list || !acc)
    GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory for the product of %d x %d and %d x %d",
            A->m, A->n, B->m, B->n);

  for (gs_idx_t j = 0; j < B->n; ++j) mark[j] = -1;
  gs_off_t nnz = 0;
  for (gs_idx_t i = 0; i < A->m; ++i)
    for (gs_off_t ka = A->row_ptr[i]; ka < A->row_ptr[i + 1]; ++ka) {
      const gs_idx_t k = A->col[ka];
      for (gs_off_t kb = B->row_ptr[k]; kb < B->row_ptr[k + 1]; ++kb) {
        const gs_idx_t j = B->col[kb];
        if (mark[j] != i) {
          mark[j] = i;
          ++nnz;
        }
      }
    }
  GS_TRY(gs_csr_create(&R, A->m, B->n, nnz));

  for (gs_idx_t j = 0; j < B->n; ++j) mark[j] = -1;
  gs_off_t q = 0;
  for (gs_idx_t i = 0; i < A->m; ++i) {
    gs_idx_t cnt = 0;
    for (gs_off_t ka = A->row_ptr[i]; ka < A->row_ptr[i + 1]; ++ka) {
      const gs_idx_t k = A->col[ka];
      const double a = A->val[ka];
      for (gs_off_t kb = B->row_ptr[k]; kb < B->row_ptr[k + 1]; ++kb) {
        const gs_idx_t j = B->col[kb];
        if (mark[j] != i) {
          mark[j] = i;
          acc[j] = 0.0;
          list[cnt++] = j;
        }
        const double prod = a * B->val[kb];
        acc[j] = acc[j] + prod;
      }
    }
    qsort(list, (size_t)cnt, sizeof *list, cmp_i32);
    for (gs_idx_t c = 0; c < cnt; ++c) {
      R->col[q] = list[c];
      R->val[q++] = acc[list[c]];
    }
    R->row_ptr[i + 1] = q;
  }
  *C = R;
  R = NULL;

cleanup:
  free(mark);
  free(list);
  free(acc);
  gs_csr_destroy(&R);
  return st;
}

gs_status_t gs_amg_rap_host(const gs_csr_t *A, const gs_csr_t *P, gs_csr_t **Ac)
{
  gs_status_t st = GS_SUCCESS;
  gs_csr_t *AP = NULL, *R = NULL;
  if (!Ac) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_rap_host: Ac is NULL");
  *Ac = NULL;
  if (!A || !P) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_rap_host: NULL argument");
  if (A->m != A->n || A->n != P->m)
    return GS_ERROR(GS_ERR_DIMENSION, "gs_amg_rap_host: A is %d x %d, P is %d x %d", A->m, A->n,
                    P->m, P->n);
  GS_TRY(gs_amg_spgemm_host(A, P, &AP));
  GS_TRY(gs_csr_transpose(&R, P));
  GS_TRY(gs_amg_spgemm_host(R, AP, Ac));
  (*Ac)->symmetry = GS_SYM_GENERAL; /* every entry is stored */

cleanup:
  gs_csr_destroy(&AP);
  gs_csr_destroy(&R);
  return st;
}
