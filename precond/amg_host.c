/* precond/amg_host.c: host reference of the smoothed-aggregation AMG setup phases (pure C):
 * diagonal, strength of connection, MIS(2) aggregation (Bell, Dalton and Olson, SISC 2012,
 * Algorithm 2 and Section 4.1), tentative and smoothed prolongators (Vanek, Mandel and Brezina
 * 1996), a near-null space of k vectors over nodes of several unknowns (the amalgamated matrix,
 * the fit of the vectors per aggregate, its checks and its file), the sparse product and the
 * Galerkin product P^T (A P). Every rule, including the order of each floating-point operation
 * where the GPU must give the same bits, is the one written in precond/amg_impl.h; the device
 * phases (precond/amg_setup_kernels.cu, amg_nns_kernels.cu) are tested against these.
 * Products and sums are written as separate statements (`prod = a * b; v = v + prod;`) so that no
 * compiler may fuse them into an fma. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "gpusolve/io.h"
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

/* ---- near-null space and nodes (amg_impl.h: NODES, FIT, SMOOTHED P of a general T) -------- */

gs_status_t gs_amg_amalgamate_host(const gs_csr_t *A, gs_idx_t nnodes, const int32_t *node_ptr,
                                   gs_csr_t **Aa)
{
  gs_status_t st = GS_SUCCESS;
  int32_t *node_of = NULL, *mark = NULL;
  gs_csr_t *C = NULL;
  if (!Aa) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_amalgamate_host: Aa is NULL");
  *Aa = NULL;
  if (!A || nnodes < 0 || !node_ptr)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_amalgamate_host: NULL argument or nnodes < 0");
  if (A->m != A->n)
    return GS_ERROR(GS_ERR_DIMENSION, "gs_amg_amalgamate_host: A is %d x %d, not square", A->m,
                    A->n);
  if (node_ptr[0] != 0 || node_ptr[nnodes] != A->m)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_amalgamate_host: the nodes cover %d .. %d, not "
                    "the %d unknowns", node_ptr[0], node_ptr[nnodes], A->m);
  for (gs_idx_t I = 0; I < nnodes; ++I)
    if (node_ptr[I + 1] < node_ptr[I] || node_ptr[I + 1] - node_ptr[I] > GS_AMG_BLOCK_MAX)
      return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_amalgamate_host: node %d has %d unknowns "
                      "(0 to %d)", I, node_ptr[I + 1] - node_ptr[I], GS_AMG_BLOCK_MAX);
  const size_t sz = (size_t)(A->m > 0 ? A->m : 1), sn = (size_t)(nnodes > 0 ? nnodes : 1);
  node_of = malloc(sz * sizeof *node_of);
  mark = malloc(sn * sizeof *mark);
  if (!node_of || !mark) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory amalgamating %d nodes",
                                 nnodes);
  for (gs_idx_t I = 0; I < nnodes; ++I)
    for (int32_t i = node_ptr[I]; i < node_ptr[I + 1]; ++i) node_of[i] = I;
  /* symbolic: the distinct nodes met in the rows of each node */
  for (gs_idx_t J = 0; J < nnodes; ++J) mark[J] = -1;
  gs_off_t nnz = 0;
  for (gs_idx_t I = 0; I < nnodes; ++I)
    for (int32_t i = node_ptr[I]; i < node_ptr[I + 1]; ++i)
      for (gs_off_t q = A->row_ptr[i]; q < A->row_ptr[i + 1]; ++q) {
        const int32_t J = node_of[A->col[q]];
        if (mark[J] != I) {
          mark[J] = I;
          ++nnz;
        }
      }
  GS_TRY(gs_csr_create(&C, nnodes, nnodes, nnz));
  /* numeric: a merge of the node's sorted rows by node column, each block's squares summed
   * over the rows in order, then its entries in column order (the device's order) */
  gs_off_t w = 0;
  gs_off_t cur[GS_AMG_BLOCK_MAX], end[GS_AMG_BLOCK_MAX];
  for (gs_idx_t I = 0; I < nnodes; ++I) {
    const int32_t r0 = node_ptr[I], nr = node_ptr[I + 1] - node_ptr[I];
    for (int r = 0; r < nr; ++r) {
      cur[r] = A->row_ptr[r0 + r];
      end[r] = A->row_ptr[r0 + r + 1];
    }
    for (;;) {
      int32_t J = INT32_MAX;
      for (int r = 0; r < nr; ++r)
        if (cur[r] < end[r] && node_of[A->col[cur[r]]] < J) J = node_of[A->col[cur[r]]];
      if (J == INT32_MAX) break;
      double s = 0.0;
      for (int r = 0; r < nr; ++r)
        for (; cur[r] < end[r] && node_of[A->col[cur[r]]] == J; ++cur[r]) {
          const double prod = A->val[cur[r]] * A->val[cur[r]];
          s = s + prod;
        }
      C->col[w] = J;
      C->val[w++] = sqrt(s);
    }
    C->row_ptr[I + 1] = w;
  }
  *Aa = C;
  C = NULL;

cleanup:
  free(node_of);
  free(mark);
  gs_csr_destroy(&C);
  return st;
}

/* One aggregate's FIT: the m x k block gathered from B at rows s[0 .. m-1] into q (column-major,
 * leading dimension m), factored in place by modified Gram-Schmidt; r (k x k, row-major) gets
 * R_J, keep[c] whether column c stays. Returns k_J. The operations are the device's
 * (amg_fit_kernel), one rounding each. */
static int fit_block(int32_t m, int k, const int32_t *s, const double *B, int64_t ldb, double *q,
                     double *r, uint8_t *keep)
{
  int kept = 0;
  for (int c = 0; c < k * k; ++c) r[c] = 0.0;
  for (int c = 0; c < k; ++c) {
    double *v = q + (size_t)c * (size_t)m;
    double nrm0 = 0.0;
    for (int32_t i = 0; i < m; ++i) {
      v[i] = B[(int64_t)c * ldb + s[i]];
      const double prod = v[i] * v[i];
      nrm0 = nrm0 + prod;
    }
    nrm0 = sqrt(nrm0);
    const double thr = GS_AMG_FIT_TOL * nrm0;
    for (int p = 0; p < c; ++p) {
      const double *qp = q + (size_t)p * (size_t)m;
      double dot = 0.0;
      for (int32_t i = 0; i < m; ++i) {
        const double prod = v[i] * qp[i];
        dot = dot + prod;
      }
      for (int32_t i = 0; i < m; ++i) {
        const double prod = dot * qp[i];
        v[i] = v[i] - prod;
      }
      r[p * k + c] = dot;
    }
    double nrm = 0.0;
    for (int32_t i = 0; i < m; ++i) {
      const double prod = v[i] * v[i];
      nrm = nrm + prod;
    }
    nrm = sqrt(nrm);
    keep[c] = nrm > thr;
    if (keep[c]) {
      for (int32_t i = 0; i < m; ++i) v[i] = v[i] / nrm;
      r[c * k + c] = nrm;
      ++kept;
    } else {
      for (int32_t i = 0; i < m; ++i) v[i] = 0.0;
    }
  }
  return kept;
}

gs_status_t gs_amg_fit_host(gs_idx_t n, int k, const double *B, int64_t ldb, const int32_t *agg,
                            int32_t naggs, gs_csr_t **T, double **Bc, int32_t *cptr)
{
  gs_status_t st = GS_SUCCESS;
  int32_t *start = NULL, *list = NULL, *pos = NULL;
  double *q = NULL, *rs = NULL, *bc = NULL;
  uint8_t *keep = NULL;
  gs_csr_t *C = NULL;
  if (!T || !Bc) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_fit_host: T or Bc is NULL");
  *T = NULL;
  *Bc = NULL;
  if (n < 0 || naggs < 0 || k < 1 || k > GS_AMG_NNS_MAX || ldb < (n > 0 ? n : 1) || !cptr ||
      (n > 0 && (!B || !agg)))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_fit_host: bad arguments (n %d, k %d, ldb %lld, "
                    "naggs %d)", n, k, (long long)ldb, naggs);
  for (gs_idx_t i = 0; i < n; ++i)
    if (agg[i] >= naggs || agg[i] < -1)
      return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_fit_host: node %d in aggregate %d of %d", i,
                      agg[i], naggs);
  const size_t sa = (size_t)naggs + 1, sz = (size_t)(n > 0 ? n : 1);
  start = calloc(sa, sizeof *start);
  list = malloc(sz * sizeof *list);
  pos = malloc(sz * sizeof *pos);
  q = malloc(sz * (size_t)k * sizeof *q);
  rs = malloc(sa * (size_t)(k * k) * sizeof *rs);
  keep = malloc(sa * (size_t)k);
  if (!start || !list || !pos || !q || !rs || !keep)
    GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory fitting %d vectors over %d aggregates", k,
            naggs);
  /* the unknowns of each aggregate in increasing order (a counting sort) */
  for (gs_idx_t i = 0; i < n; ++i)
    if (agg[i] >= 0) ++start[agg[i] + 1];
  for (int32_t J = 0; J < naggs; ++J) start[J + 1] += start[J];
  for (gs_idx_t i = 0; i < n; ++i)
    if (agg[i] >= 0) {
      pos[i] = start[agg[i]]++;
      list[pos[i]] = i;
    }
  for (int32_t J = naggs; J > 0; --J) start[J] = start[J - 1];
  start[0] = 0;
  /* each aggregate's QR: Q into q at the aggregate's offset (column-major within it) */
  cptr[0] = 0;
  for (int32_t J = 0; J < naggs; ++J) {
    const int32_t m = start[J + 1] - start[J];
    const int kj = fit_block(m, k, list + start[J], B, ldb, q + (size_t)start[J] * (size_t)k,
                             rs + (size_t)J * (size_t)(k * k), keep + (size_t)J * (size_t)k);
    cptr[J + 1] = cptr[J] + kj;
  }
  const int32_t nc = cptr[naggs];
  /* T: row i in aggregate J holds its kept q values at columns cptr[J] ... */
  gs_off_t nnz = 0;
  for (gs_idx_t i = 0; i < n; ++i)
    if (agg[i] >= 0) nnz += cptr[agg[i] + 1] - cptr[agg[i]];
  GS_TRY(gs_csr_create(&C, n, nc, nnz));
  gs_off_t w = 0;
  for (gs_idx_t i = 0; i < n; ++i) {
    const int32_t J = agg[i];
    if (J >= 0) {
      const int32_t m = start[J + 1] - start[J], p = pos[i] - start[J];
      const double *qJ = q + (size_t)start[J] * (size_t)k;
      int32_t c2 = cptr[J];
      for (int c = 0; c < k; ++c) {
        if (!keep[(size_t)J * (size_t)k + (size_t)c]) continue;
        C->col[w] = c2++;
        C->val[w++] = qJ[(size_t)c * (size_t)m + (size_t)p];
      }
    }
    C->row_ptr[i + 1] = w;
  }
  /* Bc: the kept rows of each R_J */
  if (nc > 0) {
    bc = malloc((size_t)nc * (size_t)k * sizeof *bc);
    if (!bc) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory for a %d x %d coarse near-null "
                     "space", nc, k);
    for (int32_t J = 0; J < naggs; ++J) {
      const double *r = rs + (size_t)J * (size_t)(k * k);
      int32_t row = cptr[J];
      for (int c = 0; c < k; ++c) {
        if (!keep[(size_t)J * (size_t)k + (size_t)c]) continue;
        for (int j = 0; j < k; ++j) bc[(size_t)j * (size_t)nc + (size_t)row] = r[c * k + j];
        ++row;
      }
    }
  }
  *T = C;
  C = NULL;
  *Bc = bc;
  bc = NULL;

cleanup:
  free(start);
  free(list);
  free(pos);
  free(q);
  free(rs);
  free(keep);
  free(bc);
  gs_csr_destroy(&C);
  return st;
}

gs_status_t gs_amg_smooth_tp_host(const gs_csr_t *A, const double *d, const gs_csr_t *T,
                                  double omega, gs_csr_t **P)
{
  gs_status_t st = GS_SUCCESS;
  gs_csr_t *AT = NULL;
  if (!P) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_smooth_tp_host: P is NULL");
  *P = NULL;
  if (!A || !T || (A->m > 0 && !d))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_smooth_tp_host: NULL argument");
  if (A->m != A->n || T->m != A->n)
    return GS_ERROR(GS_ERR_DIMENSION, "gs_amg_smooth_tp_host: A is %d x %d, T is %d x %d", A->m,
                    A->n, T->m, T->n);
  for (gs_idx_t i = 0; i < A->m; ++i)
    if (d[i] == 0.0)
      return GS_ERROR(GS_ERR_INVALID_ARG,
                      "smoothed prolongator: zero diagonal in row %lld (1-based): D^-1 A needs "
                      "every a_ii != 0",
                      (long long)i + 1);
  GS_TRY(gs_amg_spgemm_host(A, T, &AT));
  for (gs_idx_t i = 0; i < A->m; ++i) {
    const double w = -omega / d[i];
    gs_off_t t = T->row_ptr[i];
    for (gs_off_t q = AT->row_ptr[i]; q < AT->row_ptr[i + 1]; ++q) {
      const double prod = w * AT->val[q];
      double v = prod;
      if (t < T->row_ptr[i + 1] && T->col[t] == AT->col[q]) v = T->val[t++] + prod;
      AT->val[q] = v;
    }
    if (t != T->row_ptr[i + 1]) /* a_ii stored (d_i != 0) puts T's row into A T's */
      GS_FAIL(GS_ERR_INTERNAL, "smoothed prolongator: row %d of T is not in A T's", (int)i);
  }
  *P = AT;
  AT = NULL;

cleanup:
  gs_csr_destroy(&AT);
  return st;
}

gs_status_t gs_amg_near_null_check(gs_idx_t n, int k, const double *B, int64_t ldb,
                                   const char *what)
{
  gs_status_t st = GS_SUCCESS;
  double *q = NULL;
  if (!what) what = "near-null space";
  if (k < 1 || n < 0)
    return GS_ERROR(GS_ERR_INVALID_ARG, "%s: %d vectors of length %d (at least one vector)",
                    what, k, (int)n);
  if (k > GS_AMG_NNS_MAX)
    return GS_ERROR(GS_ERR_UNSUPPORTED, "%s: %d vectors; AMG takes at most %d", what, k,
                    GS_AMG_NNS_MAX);
  if (ldb < (n > 0 ? n : 1) || (n > 0 && !B))
    return GS_ERROR(GS_ERR_INVALID_ARG, "%s: %s (leading dimension %lld, %d rows)", what,
                    B ? "the leading dimension is less than the rows" : "B is NULL",
                    (long long)ldb, (int)n);
  for (int c = 0; c < k; ++c) {
    int zero = 1;
    for (gs_idx_t i = 0; i < n; ++i) {
      const double b = B[(int64_t)c * ldb + i];
      if (!isfinite(b))
        return GS_ERROR(GS_ERR_INVALID_ARG, "%s: vector %d has a value that is not finite in "
                        "row %lld (1-based)", what, c + 1, (long long)i + 1);
      zero = zero && b == 0.0;
    }
    if (zero) return GS_ERROR(GS_ERR_INVALID_ARG, "%s: vector %d is zero", what, c + 1);
  }
  /* rank: modified Gram-Schmidt with a second pass (one pass loses orthogonality in
   * proportion to the condition number; the second restores it) */
  q = malloc((size_t)(n > 0 ? n : 1) * (size_t)k * sizeof *q);
  if (!q) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory checking %s", what);
  for (int c = 0; c < k; ++c) {
    double *v = q + (size_t)c * (size_t)n, nrm0 = 0.0, nrm = 0.0;
    for (gs_idx_t i = 0; i < n; ++i) {
      v[i] = B[(int64_t)c * ldb + i];
      nrm0 += v[i] * v[i];
    }
    nrm0 = sqrt(nrm0);
    for (int pass = 0; pass < 2; ++pass)
      for (int p = 0; p < c; ++p) {
        const double *qp = q + (size_t)p * (size_t)n;
        double dot = 0.0;
        for (gs_idx_t i = 0; i < n; ++i) dot += v[i] * qp[i];
        for (gs_idx_t i = 0; i < n; ++i) v[i] -= dot * qp[i];
      }
    for (gs_idx_t i = 0; i < n; ++i) nrm += v[i] * v[i];
    nrm = sqrt(nrm);
    if (!(nrm > GS_AMG_FIT_TOL * nrm0)) {
      if (c == 1)
        GS_FAIL(GS_ERR_INVALID_ARG, "%s: vector 2 is a multiple of vector 1 (to %g of its "
                "norm): the vectors must be linearly independent", what, GS_AMG_FIT_TOL);
      GS_FAIL(GS_ERR_INVALID_ARG, "%s: vector %d is a combination of vectors 1 to %d (to %g of "
              "its norm): the vectors must be linearly independent", what, c + 1, c,
              GS_AMG_FIT_TOL);
    }
    for (gs_idx_t i = 0; i < n; ++i) v[i] /= nrm;
  }

cleanup:
  free(q);
  return st;
}

gs_status_t gs_amg_near_null_read(const char *path, gs_idx_t n, int *k, double **B)
{
  gs_status_t st = GS_SUCCESS;
  gs_csr_t *C = NULL;
  double *b = NULL;
  char what[320];
  if (!path || !k || !B) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_amg_near_null_read: NULL");
  *k = 0;
  *B = NULL;
  snprintf(what, sizeof what, "amg near_null=%.280s", path);
  GS_TRY(gs_mm_read_csr(path, &C));
  if (C->m != n)
    GS_FAIL(GS_ERR_DIMENSION, "%s: %d rows, the matrix has %d (one row an unknown)", what,
            (int)C->m, (int)n);
  if (C->n < 1 || C->n > GS_AMG_NNS_MAX)
    GS_FAIL(C->n < 1 ? GS_ERR_INVALID_ARG : GS_ERR_UNSUPPORTED, "%s: %d columns (vectors); AMG "
            "takes 1 to %d", what, (int)C->n, GS_AMG_NNS_MAX);
  b = calloc((size_t)(n > 0 ? n : 1) * (size_t)C->n, sizeof *b);
  if (!b) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory for %s", what);
  for (gs_idx_t i = 0; i < n; ++i)
    for (gs_off_t q = C->row_ptr[i]; q < C->row_ptr[i + 1]; ++q)
      b[(size_t)C->col[q] * (size_t)n + (size_t)i] = C->val[q];
  GS_TRY(gs_amg_near_null_check(n, (int)C->n, b, n > 0 ? n : 1, what));
  *k = (int)C->n;
  *B = b;
  b = NULL;

cleanup:
  free(b);
  gs_csr_destroy(&C);
  return st;
}
