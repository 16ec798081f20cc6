/* batch/batch_plan.c: the storage plan of a batched solve (pure C, no device work): where each
 * problem's vectors, preconditioner data and GMRES arrays live (shared memory or the global
 * workspace), and the preconditioner's index arrays the kernel reads:
 *   block-Jacobi  gs_solve's partition (gs_batch_bj_partition, the rule of gs_bj_partition:
 *                 fixed blocks or supervariables merged up to `block` rows), stored as (first row, offset of its factors) per block and
 *                 one closing pair (n, total); a block of s rows keeps s * s + s doubles (its LU
 *                 and its pivots).
 *   ILU(0)        the problem's pattern sorted and merged (duplicates summed into one entry, as
 *                 gs_matrix_create's copy), the diagonal's place per row, and two level
 *                 schedules (Anderson and Saad's level scheduling): the rows of a level of the
 *                 lower triangle depend only on rows of earlier levels, so the kernel factors
 *                 (row-by-row IKJ) and solves a level's rows in parallel with one barrier a level;
 *                 the upper triangle's levels likewise for the backward solve.
 * A shared pattern is planned once; every problem points at it. */
#include <stdlib.h>
#include <string.h>

#include "batch/batch_impl.h"
#include "core/error.h"

void gs_batch_plan_free(gs_batch_plan_t *P)
{
  if (!P) return;
  free(P->slot);
  free(P->idx);
  free(P->order);
  memset(P, 0, sizeof *P);
}

/* A problem's work key: more entries first, then more rows, then the lower index. */
typedef struct {
  int32_t nnz, m, i;
} work_key_t;

static int cmp_work_key(const void *a, const void *b)
{
  const work_key_t *x = a, *y = b;
  if (x->nnz != y->nnz) return x->nnz > y->nnz ? -1 : 1;
  if (x->m != y->m) return x->m > y->m ? -1 : 1;
  return (x->i > y->i) - (x->i < y->i);
}

gs_status_t gs_batch_solve_order(const gs_batch_host_t *H, int32_t *order)
{
  const int N = H->count;
  work_key_t *k = malloc(((size_t)(N > 0 ? N : 1)) * sizeof *k);
  if (!k) return GS_ERROR(GS_ERR_HOST_MEMORY, "batch: out of host memory ordering %d problems", N);
  for (int i = 0; i < N; ++i) {
    k[i].nnz = H->prob[i].nnz;
    k[i].m = H->prob[i].m;
    k[i].i = i;
  }
  qsort(k, (size_t)N, sizeof *k, cmp_work_key);
  for (int i = 0; i < N; ++i) order[i] = k[i].i;
  free(k);
  return GS_SUCCESS;
}

/* One knob: unset or empty -> -1; else an integer in lo .. hi (threads: a power of two). */
static gs_status_t knob(const char *name, const char *v, int lo, int hi, int pow2, int *out)
{
  *out = -1;
  if (!v || !*v) return GS_SUCCESS;
  char *end = NULL;
  const long x = strtol(v, &end, 10);
  if (*end != '\0' || x < lo || x > hi || (pow2 && (x & (x - 1))))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_solve: %s='%s': expected %s", name, v,
                    pow2 ? "64, 128 or 256" : hi == 1 ? "0 or 1" : "0 .. 46 (KiB)");
  *out = (int)x;
  return GS_SUCCESS;
}

gs_status_t gs_batch_knobs_parse(const char *order, const char *smem_kb, const char *threads,
                                 gs_batch_knobs_t *k)
{
  GS_CHECK(knob("GS_BATCH_ORDER", order, 0, 1, 0, &k->order));
  GS_CHECK(knob("GS_BATCH_SMEM_KB", smem_kb, 0, GS_BATCH_SMEM_KB_MAX, 0, &k->smem_kb));
  return knob("GS_BATCH_THREADS", threads, 64, 256, 1, &k->threads);
}

/* A growable int32 array. */
typedef struct {
  int32_t *a;
  int64_t n, cap;
} ivec_t;

static int ivec_room(ivec_t *v, int64_t more)
{
  if (v->n + more <= v->cap) return 1;
  int64_t cap = v->cap ? v->cap : 1024;
  while (cap < v->n + more) cap *= 2;
  int32_t *a = realloc(v->a, (size_t)cap * sizeof *a);
  if (!a) return 0;
  v->a = a;
  v->cap = cap;
  return 1;
}

/* (column, stored position) of a row, sorted by column then position (duplicates summed in
 * stored order). */
typedef struct {
  int32_t col, pos;
} cp_t;

static int cmp_cp(const void *a, const void *b)
{
  const cp_t *x = a, *y = b;
  if (x->col != y->col) return (x->col > y->col) - (x->col < y->col);
  return (x->pos > y->pos) - (x->pos < y->pos);
}

/* Rows of each level: level[r] for r < m, nlev levels -> ptr (nlev + 1), rows (m, ascending in
 * a level). */
static void bucket_levels(int32_t m, const int32_t *level, int32_t nlev, int32_t *ptr,
                          int32_t *rows)
{
  for (int32_t l = 0; l <= nlev; ++l) ptr[l] = 0;
  for (int32_t r = 0; r < m; ++r) ++ptr[level[r] + 1];
  for (int32_t l = 0; l < nlev; ++l) ptr[l + 1] += ptr[l];
  for (int32_t r = 0; r < m; ++r) rows[ptr[level[r]]++] = r;
  for (int32_t l = nlev; l > 0; --l) ptr[l] = ptr[l - 1];
  ptr[0] = 0;
}

/* ILU(0)'s index arrays of problem p (its pattern rp, ci) appended to v; slot gets u and the
 * level counts. */
static gs_status_t ilu_plan(const gs_batch_prob_t *p, const int32_t *rp, const gs_idx_t *ci,
                            ivec_t *v, gs_batch_slot_t *slot)
{
  const int32_t m = p->m, nnz = p->nnz;
  gs_status_t st = GS_SUCCESS;
  cp_t *row = malloc(((size_t)p->maxrow + 1) * sizeof *row);
  int32_t *lrp = malloc(((size_t)m + 1) * sizeof *lrp);
  int32_t *lci = malloc(((size_t)nnz + 1) * sizeof *lci);
  int32_t *src = malloc(((size_t)nnz + 1) * sizeof *src);
  int32_t *ldiag = malloc(((size_t)m + 1) * sizeof *ldiag);
  int32_t *lev = malloc(((size_t)m + 1) * sizeof *lev);
  int32_t *ulev = malloc(((size_t)m + 1) * sizeof *ulev);
  if (!row || !lrp || !lci || !src || !ldiag || !lev || !ulev)
    GS_FAIL(GS_ERR_HOST_MEMORY, "batch: out of host memory planning ILU(0)");
  int32_t u = 0;
  lrp[0] = 0;
  for (int32_t r = 0; r < m; ++r) {
    const int32_t a = rp[r], len = rp[r + 1] - a;
    for (int32_t k = 0; k < len; ++k) {
      row[k].col = ci[a + k];
      row[k].pos = a + k;
    }
    qsort(row, (size_t)len, sizeof *row, cmp_cp);
    ldiag[r] = -1;
    for (int32_t k = 0; k < len; ++k) {
      if (k == 0 || row[k].col != row[k - 1].col) {
        if (row[k].col == r) ldiag[r] = u;
        lci[u++] = row[k].col;
      }
      src[row[k].pos] = u - 1;
    }
    lrp[r + 1] = u;
  }
  /* levels: lower, rows in order (each depends on the rows of its columns below the diagonal);
   * upper, rows in reverse order */
  int32_t nl = 0, nu = 0;
  for (int32_t r = 0; r < m; ++r) {
    int32_t l = 0;
    for (int32_t q = lrp[r]; q < lrp[r + 1] && lci[q] < r; ++q)
      if (lev[lci[q]] + 1 > l) l = lev[lci[q]] + 1;
    lev[r] = l;
    if (l + 1 > nl) nl = l + 1;
  }
  for (int32_t r = m - 1; r >= 0; --r) {
    int32_t l = 0;
    for (int32_t q = lrp[r + 1] - 1; q >= lrp[r] && lci[q] > r; --q)
      if (ulev[lci[q]] + 1 > l) l = ulev[lci[q]] + 1;
    ulev[r] = l;
    if (l + 1 > nu) nu = l + 1;
  }
  const gs_batch_ilu_idx_t I = gs_batch_ilu_layout(m, nnz, u, nl, nu);
  if (!ivec_room(v, I.end)) GS_FAIL(GS_ERR_HOST_MEMORY, "batch: out of host memory planning ILU(0)");
  int32_t *d = v->a + v->n;
  memcpy(d + I.lrp, lrp, ((size_t)m + 1) * sizeof *lrp);
  if (u) memcpy(d + I.lci, lci, (size_t)u * sizeof *lci);
  if (m) memcpy(d + I.ldiag, ldiag, (size_t)m * sizeof *ldiag);
  if (nnz) memcpy(d + I.src, src, (size_t)nnz * sizeof *src);
  bucket_levels(m, lev, nl, d + I.lptr, d + I.lrows);
  bucket_levels(m, ulev, nu, d + I.uptr, d + I.urows);
  slot->idx = v->n;
  slot->nb = u;
  slot->nlev_l = nl;
  slot->nlev_u = nu;
  v->n += I.end;
cleanup:
  free(row);
  free(lrp);
  free(lci);
  free(src);
  free(ldiag);
  free(lev);
  free(ulev);
  return st;
}

/* Whether rows i and j store the same column sequence. */
static int same_row(const int32_t *rp, const gs_idx_t *ci, int32_t i, int32_t j)
{
  const int32_t li = rp[i + 1] - rp[i];
  return li == rp[j + 1] - rp[j] &&
         (li == 0 || memcmp(ci + rp[i], ci + rp[j], (size_t)li * sizeof *ci) == 0);
}

int32_t gs_batch_bj_partition(int32_t m, const int32_t *rp, const gs_idx_t *ci, int block,
                              int agglomerate, int32_t *bp)
{
  int32_t nb = 0;
  bp[0] = 0;
  if (!agglomerate) {
    for (int64_t r = 0; r < m; r += block) bp[++nb] = (int32_t)(r + block < m ? r + block : m);
    return nb;
  }
  int cur = 0; /* rows in the open block */
  for (int32_t r = 0; r < m;) {
    int32_t e = r + 1; /* the piece: rows r .. e-1 of one supervariable, at most `block` */
    while (e < m && e - r < block && same_row(rp, ci, e, e - 1)) ++e;
    const int len = (int)(e - r);
    if (cur > 0 && cur + len <= block) {
      cur += len;
    } else {
      if (cur > 0) bp[++nb] = r;
      cur = len;
    }
    r = e;
  }
  if (m > 0) bp[++nb] = m;
  return nb;
}

/* Block-Jacobi's blocks of problem p appended to v: (first row, offset of its factors) per
 * block and a closing pair (m, total). */
static gs_status_t bj_plan(const gs_batch_prob_t *p, const int32_t *rp, const gs_idx_t *ci,
                           int block, int agglomerate, ivec_t *v, gs_batch_slot_t *slot)
{
  int32_t *bp = malloc(((size_t)p->m + 1) * sizeof *bp);
  if (!bp) return GS_ERROR(GS_ERR_HOST_MEMORY, "batch: out of host memory planning block-Jacobi");
  const int32_t nb = gs_batch_bj_partition(p->m, rp, ci, block, agglomerate, bp);
  if (!ivec_room(v, 2 * ((int64_t)nb + 1))) {
    free(bp);
    return GS_ERROR(GS_ERR_HOST_MEMORY, "batch: out of host memory planning block-Jacobi");
  }
  int32_t *d = v->a + v->n;
  int64_t f = 0; /* at most (block + 1) m doubles: within int32 for m < 2^31 / 9 */
  for (int32_t b = 0; b <= nb; ++b) {
    d[2 * b] = bp[b];
    d[2 * b + 1] = (int32_t)f;
    if (b < nb) {
      const int64_t s = bp[b + 1] - bp[b];
      f += s * s + s;
    }
  }
  free(bp);
  if (f > INT32_MAX)
    return GS_ERROR(GS_ERR_UNSUPPORTED, "batch: block-Jacobi factors of a problem exceed 2^31 "
                    "doubles");
  slot->idx = v->n;
  slot->nb = nb;
  v->n += 2 * ((int64_t)nb + 1);
  return GS_SUCCESS;
}

int64_t gs_batch_plan_pc_doubles(const gs_batch_plan_t *P, const gs_batch_host_t *H, int precond,
                                 int i)
{
  const gs_batch_slot_t *s = &P->slot[i];
  switch (precond) {
  case GS_BATCH_PRECOND_JACOBI: return H->prob[i].n;
  case GS_BATCH_PRECOND_BLOCK_JACOBI: return P->idx[s->idx + 2 * (int64_t)s->nb + 1];
  case GS_BATCH_PRECOND_ILU0: return s->nb;
  default: return 0;
  }
}

gs_status_t gs_batch_plan_build(const gs_batch_host_t *H, const gs_batch_solve_launch_t *L,
                                int64_t cap, int pc_global, gs_batch_plan_t *P)
{
  gs_status_t st = GS_SUCCESS;
  ivec_t v = {NULL, 0, 0};
  memset(P, 0, sizeof *P);
  const int N = H->count;
  P->slot = calloc((size_t)(N > 0 ? N : 1), sizeof *P->slot);
  P->order = malloc((size_t)(N > 0 ? N : 1) * sizeof *P->order);
  if (!P->slot || !P->order)
    GS_FAIL(GS_ERR_HOST_MEMORY, "batch: out of host memory for %d problems", N);
  GS_TRY(gs_batch_solve_order(H, P->order));
  const int nw = L->threads / 32 > 0 ? L->threads / 32 : 1;
  for (int i = 0; i < N; ++i) {
    const gs_batch_prob_t *p = &H->prob[i];
    gs_batch_slot_t *s = &P->slot[i];
    s->restart = L->restart < p->n ? L->restart : p->n;
    if (s->restart < 1) s->restart = 1;
    /* the preconditioner's index: per problem, or once for a shared pattern */
    if (H->shared && i > 0 && L->precond >= GS_BATCH_PRECOND_BLOCK_JACOBI) {
      s->idx = P->slot[0].idx;
      s->nb = P->slot[0].nb;
      s->nlev_l = P->slot[0].nlev_l;
      s->nlev_u = P->slot[0].nlev_u;
    } else if (L->precond == GS_BATCH_PRECOND_BLOCK_JACOBI) {
      GS_TRY(bj_plan(p, H->rp + p->rp, H->ci + p->ent, L->block, L->agglomerate, &v, s));
    } else if (L->precond == GS_BATCH_PRECOND_ILU0) {
      GS_TRY(ilu_plan(p, H->rp + p->rp, H->ci + p->ent, &v, s));
    }
  }
  P->idx = v.a;
  P->nidx = v.n;
  v.a = NULL;
  /* placement: vectors first (every iteration sweeps them), then GMRES's small arrays, then
   * the preconditioner's data, each in shared memory when what is left holds it */
  for (int i = 0; i < N; ++i) {
    const gs_batch_prob_t *p = &H->prob[i];
    gs_batch_slot_t *s = &P->slot[i];
    const int64_t need[3] = {
        gs_batch_vec_doubles(L->method, L->precond, p->n, s->restart),
        L->method == GS_SOLVER_GMRES ? gs_batch_gmres_small(s->restart, nw) : 0,
        gs_batch_plan_pc_doubles(P, H, L->precond, i)};
    int64_t *where[3] = {&s->vec, &s->small, &s->pc};
    int64_t used = 0;
    for (int k = 0; k < 3; ++k) {
      if (need[k] <= cap - used && !(k == 2 && pc_global)) {
        *where[k] = GS_BATCH_SHARED(used);
        used += need[k];
      } else {
        *where[k] = P->work;
        P->work += need[k];
      }
    }
    if (s->vec < 0) ++P->shared_problems;
    if (used > P->smem) P->smem = used;
  }
cleanup:
  free(v.a);
  if (st != GS_SUCCESS) gs_batch_plan_free(P);
  return st;
}

gs_status_t gs_batch_pc_extract(const gs_batch_plan_t *P, const gs_batch_host_t *H, int precond,
                                const double *work, const gs_batch_result_t *res, double **data,
                                int64_t **off, int **bad)
{
  gs_status_t st = GS_SUCCESS;
  const int N = H->count;
  double *d = NULL;
  int64_t *of = malloc(((size_t)N + 1) * sizeof *of);
  int *bd = malloc(((size_t)N + 1) * sizeof *bd);
  if (!of || !bd) GS_FAIL(GS_ERR_HOST_MEMORY, "batch: out of host memory");
  of[0] = 0;
  for (int i = 0; i < N; ++i) of[i + 1] = of[i] + gs_batch_plan_pc_doubles(P, H, precond, i);
  d = malloc(((size_t)of[N] + 1) * sizeof *d);
  if (!d) GS_FAIL(GS_ERR_HOST_MEMORY, "batch: out of host memory");
  for (int i = 0; i < N; ++i) {
    if (of[i + 1] > of[i])
      memcpy(d + of[i], work + P->slot[i].pc, (size_t)(of[i + 1] - of[i]) * sizeof *d);
    bd[i] = res[i].bad_row;
  }
  *data = d;
  *off = of;
  *bad = bd;
  return GS_SUCCESS;
cleanup:
  free(d);
  free(of);
  free(bd);
  return st;
}
