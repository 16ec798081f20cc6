/* batch/batch_solve_host.c: the batched solver's body (batch/batch_solve_body.h) run on the host,
 * one thread per problem: barriers are no-ops, the block's sums are the thread's own, W = 1.
 * The same plan (shared memory or workspace for each part, the preconditioner's index arrays)
 * and the same code as the kernel, so the algorithm, the preconditioners' setup and the plan are
 * checked on machines without a GPU (tests/test_batch_gmres_host.c); what only the device can
 * show (races, the shuffles, W > 1) is the GPU suites' and compute-sanitizer's. The "shared
 * memory" is an arena filled with NaN before every problem, as the device's holds garbage. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "batch/batch_impl.h"
#include "core/error.h"

#define GS_BD_FN static inline
#define GS_BD_TID 0
#define GS_BD_NT 1
#define GS_BD_LANE 0
#define GS_BD_WARP 0
#define GS_BD_NWARPS 1
#define GS_BD_SYNC() ((void)0)

static inline double gs_bd_warp_sum(double s) { return s; }

static inline gs_bd_pair_t gs_bd_sum2(double a, double b, double *red)
{
  (void)red;
  gs_bd_pair_t p;
  p.a = a;
  p.b = b;
  return p;
}

static inline int gs_bd_min(int v, int *redi)
{
  (void)redi;
  return v;
}

static inline double gs_bd_row_dot(const int32_t *rp, const gs_idx_t *ci, const double *val,
                                   const double *x, int32_t r, int active, int W, int lane)
{
  (void)W;
  (void)lane;
  double s = 0.0;
  if (active)
    for (int32_t k = rp[r]; k < rp[r + 1]; ++k) s += val[k] * x[ci[k]];
  return s;
}

#include "batch/batch_solve_body.h"

/* Runs L over every problem of H with plan P: b, x the batch's vectors (NULL in setup_only),
 * res one result a problem, work the plan's workspace. */
static gs_status_t run_all(const gs_batch_host_t *H, const gs_batch_solve_launch_t *L,
                           const gs_batch_plan_t *P, const double *b, double *x,
                           gs_batch_result_t *res, double *work)
{
  double *smem = malloc(((size_t)P->smem + 1) * sizeof *smem);
  if (!smem) return GS_ERROR(GS_ERR_HOST_MEMORY, "batch: out of host memory");
  double red[64];
  int redi[32];
  for (int i = 0; i < H->count; ++i) {
    const gs_batch_prob_t *p = &H->prob[i];
    const gs_batch_slot_t *sl = &P->slot[i];
    for (int64_t k = 0; k <= P->smem; ++k) smem[k] = NAN;
    gs_bd_prob_t Q;
    Q.rp = H->rp + p->rp;
    Q.ci = H->ci + p->ent;
    Q.val = H->val + p->val;
    Q.n = p->m;
    Q.nnz = p->nnz;
    Q.W = 1;
    Q.b = b ? b + p->row : NULL;
    Q.xout = x ? x + p->col : NULL;
    Q.vec = sl->vec < 0 ? smem + (-1 - sl->vec) : work + sl->vec;
    Q.pc = sl->pc < 0 ? smem + (-1 - sl->pc) : work + sl->pc;
    Q.small = sl->small < 0 ? smem + (-1 - sl->small) : work + sl->small;
    Q.idx = P->idx ? P->idx + sl->idx : NULL;
    Q.slot = *sl;
    Q.red = red;
    Q.redi = redi;
    gs_bd_solve(L, &Q, &res[i]);
  }
  free(smem);
  return GS_SUCCESS;
}

/* The plan and the workspace of L over H (the host's one "warp"). */
static gs_status_t host_prepare(const gs_batch_host_t *H, const gs_batch_solve_opts_t *o,
                                int setup_only, gs_batch_solve_launch_t *L, gs_batch_plan_t *P,
                                double **work)
{
  gs_batch_solve_opts_t d;
  if (!o) {
    gs_batch_solve_opts_default(&d);
    o = &d;
  }
  memset(L, 0, sizeof *L);
  GS_CHECK(gs_batch_solve_check_opts(o, L));
  for (int i = 0; i < H->count; ++i)
    if (H->prob[i].m != H->prob[i].n)
      return GS_ERROR(GS_ERR_DIMENSION, "gs_batch_solve: problem %d is %d x %d, not square", i,
                      (int)H->prob[i].m, (int)H->prob[i].n);
  L->threads = 32;
  L->setup_only = setup_only;
  GS_CHECK(gs_batch_plan_build(H, L, GS_BATCH_SOLVE_SMEM_DOUBLES, setup_only, P));
  *work = malloc(((size_t)P->work + 1) * sizeof **work);
  if (!*work) {
    gs_batch_plan_free(P);
    return GS_ERROR(GS_ERR_HOST_MEMORY, "batch: out of host memory for the workspace");
  }
  for (int64_t k = 0; k <= P->work; ++k) (*work)[k] = NAN;
  return GS_SUCCESS;
}

gs_status_t gs_batch_host_solve(const gs_batch_host_t *H, const gs_batch_solve_opts_t *o,
                                const double *b, double *x, gs_batch_stats_t *stats)
{
  if (!H || !stats || (H->row_off[H->count] > 0 && (!b || !x)))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_host_solve: NULL argument");
  gs_batch_solve_launch_t L;
  gs_batch_plan_t P;
  double *work = NULL;
  GS_CHECK(host_prepare(H, o, 0, &L, &P, &work));
  gs_batch_result_t *res = malloc(((size_t)H->count + 1) * sizeof *res);
  gs_status_t st = res ? run_all(H, &L, &P, b, x, res, work)
                       : GS_ERROR(GS_ERR_HOST_MEMORY, "batch: out of host memory");
  for (int i = 0; st == GS_SUCCESS && i < H->count; ++i) gs_batch_fill_stats(&res[i], &stats[i]);
  free(res);
  free(work);
  gs_batch_plan_free(&P);
  return st;
}

gs_status_t gs_batch_host_pc_data(const gs_batch_host_t *H, const gs_batch_solve_opts_t *o,
                                  double **data, int64_t **off, int **bad)
{
  if (!H || !data || !off || !bad)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_host_pc_data: NULL argument");
  *data = NULL;
  *off = NULL;
  *bad = NULL;
  gs_batch_solve_launch_t L;
  gs_batch_plan_t P;
  double *work = NULL;
  GS_CHECK(host_prepare(H, o, 1, &L, &P, &work));
  gs_status_t st = GS_SUCCESS;
  gs_batch_result_t *res = malloc(((size_t)H->count + 1) * sizeof *res);
  if (!res) GS_FAIL(GS_ERR_HOST_MEMORY, "batch: out of host memory");
  GS_TRY(run_all(H, &L, &P, NULL, NULL, res, work));
  GS_TRY(gs_batch_pc_extract(&P, H, L.precond, work, res, data, off, bad));
cleanup:
  free(res);
  free(work);
  gs_batch_plan_free(&P);
  return st;
}
