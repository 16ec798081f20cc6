/* batch/batch_solve.c: gs_batch_solve, the host side of the batched solver of
 * batch/batch_solve_kernels.cu: checks, the plan (batch/batch_plan.c: where each problem's parts
 * live, the preconditioner's index arrays, the blocks' order), its upload and the workspace, one
 * launch, one copy of the per-problem results, the summary. The shared-memory budget, the order
 * and the threads a block follow the benchmark knobs GS_BATCH_SMEM_KB, GS_BATCH_ORDER and
 * GS_BATCH_THREADS when set (gs_batch_knobs_parse). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "batch/batch_impl.h"
#include "core/context_impl.h"
#include "core/error.h"

static const char *const pc_names[] = {"none", "jacobi", "block-jacobi", "ilu0"};

const char *gs_batch_precond_name(gs_batch_precond_t p)
{
  return (int)p >= 0 && (int)p < 4 ? pc_names[p] : NULL;
}

int gs_batch_precond_find(const char *name)
{
  for (int k = 0; name && k < 4; ++k)
    if (!strcmp(name, pc_names[k])) return k;
  return -1;
}

const char *gs_batch_detail_string(int detail)
{
  static const char *const s[GS_BATCH_NDETAILS] = {
      "",
      "Jacobi: a zero or missing diagonal entry",
      "block-Jacobi: a diagonal block singular to working precision (no usable pivot)",
      "ILU(0): a missing diagonal entry",
      "ILU(0): a zero pivot",
      "the new Arnoldi column is not finite",
      "a zero Hessenberg column: A M^-1 is singular on the Krylov space",
      "the least-squares solution is not finite",
      "h_{j+1,j} ~ 0 without convergence: A singular, or orthogonality lost",
      "a restart cycle did not reduce ||b - A x||",
      "the true residual norm is not finite"};
  return detail >= 0 && detail < GS_BATCH_NDETAILS ? s[detail] : "";
}

void gs_batch_fill_stats(const gs_batch_result_t *r, gs_batch_stats_t *st)
{
  st->reason = (gs_reason_t)r->reason;
  st->iterations = r->iterations;
  st->bnorm = r->bnorm;
  st->rnorm0 = r->rnorm0;
  st->rnorm = r->rnorm;
  st->true_residual_norm = r->true_rnorm;
  st->detail = gs_batch_detail_string(r->detail);
  st->detail_row = r->detail != 0 ? r->bad_row : -1;
}

void gs_batch_solve_opts_default(gs_batch_solve_opts_t *o)
{
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->method = GS_SOLVER_CG;
  o->rtol = 1e-8;
  o->atol = 0.0;
  o->maxit = 10000;
  o->precond = GS_BATCH_PRECOND_NONE;
  o->block = 8; /* gs_solve's block-jacobi default (GS_BJ_DEFAULT_BLOCK) */
  o->agglomerate = 1;
  o->restart = 30;
}

gs_status_t gs_batch_solve_check_opts(const gs_batch_solve_opts_t *o, gs_batch_solve_launch_t *L)
{
  if (o->method != GS_SOLVER_CG && o->method != GS_SOLVER_BICGSTAB &&
      o->method != GS_SOLVER_GMRES)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_solve: method '%s' is not batched (cg, "
                    "bicgstab, gmres)", gs_method_string(o->method));
  if (!(o->rtol >= 0.0) || !(o->atol >= 0.0) || !isfinite(o->rtol) || !isfinite(o->atol))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_solve: tolerances must be finite and >= 0 "
                    "(rtol %g, atol %g)", o->rtol, o->atol);
  if (o->maxit < 0) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_solve: maxit %d < 0", o->maxit);
  if (!gs_batch_precond_name(o->precond))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_solve: preconditioner %d is not batched "
                    "(none, jacobi, block-jacobi, ilu0)", (int)o->precond);
  if (o->jacobi && o->precond != GS_BATCH_PRECOND_NONE && o->precond != GS_BATCH_PRECOND_JACOBI)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_solve: jacobi = 1 (deprecated: precond "
                    "jacobi) contradicts precond %s", gs_batch_precond_name(o->precond));
  const int pc = o->jacobi ? GS_BATCH_PRECOND_JACOBI : (int)o->precond;
  if (pc == GS_BATCH_PRECOND_BLOCK_JACOBI &&
      (o->block < 1 || o->block > GS_BATCH_BJ_MAX_BLOCK || (o->agglomerate != 0 && o->agglomerate != 1)))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_solve: block-jacobi takes block 1 .. %d and "
                    "agglomerate 0 or 1 (block %d, agglomerate %d)", GS_BATCH_BJ_MAX_BLOCK,
                    o->block, o->agglomerate);
  if (o->method == GS_SOLVER_GMRES && o->restart < 1)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_solve: restart %d < 1", o->restart);
  L->method = o->method;
  L->precond = pc;
  L->rtol = o->rtol;
  L->atol = o->atol;
  L->maxit = o->maxit;
  L->x0_given = o->x0_given != 0;
  L->restart = o->method == GS_SOLVER_GMRES ? o->restart : 1;
  L->block = o->block;
  L->agglomerate = o->agglomerate;
  return GS_SUCCESS;
}

static int cmp_int(const void *a, const void *b)
{
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* B, the options and square problems; the vectors when `vectors` (not for gs_batch_pc_data). */
static gs_status_t check(const gs_batch_t *B, const gs_batch_solve_opts_t *o, int vectors,
                         const void *d_b, const void *d_x, gs_batch_solve_launch_t *L)
{
  if (!B) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_solve: B is NULL");
  GS_CHECK(gs_batch_solve_check_opts(o, L));
  for (int i = 0; i < B->H.count; ++i)
    if (B->H.prob[i].m != B->H.prob[i].n)
      return GS_ERROR(GS_ERR_DIMENSION, "gs_batch_solve: problem %d is %d x %d, not square", i,
                      (int)B->H.prob[i].m, (int)B->H.prob[i].n);
  if (!vectors) return GS_SUCCESS;
  if (B->H.row_off[B->H.count] > 0 && (!d_b || !d_x))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_solve: %s is NULL", d_b ? "d_x" : "d_b");
  if (d_b && d_b == d_x) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_solve: d_x aliases d_b");
  return GS_SUCCESS;
}

static gs_status_t upload(gs_context_t *ctx, void **d, const void *h, size_t bytes,
                          const char *what)
{
  GS_CHECK(gs_dmalloc(ctx, d, bytes, what));
  return gs_copy_to_device(ctx, *d, h, bytes);
}

/* The device side of a solve: plan, uploads, one launch, the results in h_res (count). The
 * workspace comes back in *h_work when wanted (setup_only: the preconditioners' data). */
static gs_status_t run(gs_batch_t *B, gs_batch_solve_launch_t *L, const gs_val_t *d_b,
                       gs_val_t *d_x, gs_batch_result_t *h_res, gs_batch_plan_t *P,
                       double **h_work, float *ms)
{
  const int N = B->H.count;
  gs_status_t st = GS_SUCCESS;
  gs_batch_slot_t *d_slot = NULL;
  int32_t *d_idx = NULL, *d_order = NULL;
  gs_batch_result_t *d_res = NULL;
  cudaEvent_t ev[2] = {NULL, NULL};
  L->d_work = NULL;
  /* the benchmark knobs (docs/cli.md "batch"), else the defaults */
  gs_batch_knobs_t K;
  GS_TRY(gs_batch_knobs_parse(getenv("GS_BATCH_ORDER"), getenv("GS_BATCH_SMEM_KB"),
                              getenv("GS_BATCH_THREADS"), &K));
  L->threads = gs_batch_block_threads(B->st.mean_m);
  if (L->threads < 64) L->threads = 64;
  if (K.threads > 0) L->threads = K.threads;
  int64_t cap = (int64_t)K.smem_kb * 1024 / (int64_t)sizeof(double);
  if (K.smem_kb < 0) GS_TRY(gs_batch_kernel_smem_cap(B, L, &cap));
  GS_TRY(gs_batch_plan_build(&B->H, L, cap, L->setup_only, P));
  GS_TRY(gs_dmalloc(B->ctx, (void **)&L->d_work, (size_t)P->work * sizeof(double),
                    "the batched solver's workspace"));
  GS_TRY(upload(B->ctx, (void **)&d_slot, P->slot, (size_t)N * sizeof *d_slot,
                "the batched solver's plan"));
  if (P->nidx > 0)
    GS_TRY(upload(B->ctx, (void **)&d_idx, P->idx, (size_t)P->nidx * sizeof *d_idx,
                  "the batched preconditioner's index"));
  if (K.order != 0)
    GS_TRY(upload(B->ctx, (void **)&d_order, P->order, (size_t)N * sizeof *d_order,
                  "the batched solver's order"));
  GS_TRY(gs_dmalloc(B->ctx, (void **)&d_res, (size_t)N * sizeof *d_res, "batched solver results"));
  L->d_slot = d_slot;
  L->d_idx = d_idx;
  L->d_order = d_order;
  GS_TRY(GS_CUDA(cudaEventCreate(&ev[0])));
  GS_TRY(GS_CUDA(cudaEventCreate(&ev[1])));
  GS_TRY(GS_CUDA(cudaEventRecord(ev[0], B->ctx->stream)));
  GS_TRY(gs_batch_kernel_solve(B, L, (size_t)P->smem * sizeof(double), d_b, d_x, d_res));
  GS_TRY(GS_CUDA(cudaEventRecord(ev[1], B->ctx->stream)));
  GS_TRY(gs_copy_to_host(B->ctx, h_res, d_res, (size_t)N * sizeof *h_res)); /* waits */
  GS_TRY(GS_CUDA(cudaEventElapsedTime(ms, ev[0], ev[1])));
  if (h_work) {
    *h_work = malloc(((size_t)P->work + 1) * sizeof **h_work);
    if (!*h_work) GS_FAIL(GS_ERR_HOST_MEMORY, "gs_batch_solve: out of host memory");
    GS_TRY(gs_copy_to_host(B->ctx, *h_work, L->d_work, (size_t)P->work * sizeof(double)));
  }
cleanup:
  for (int k = 0; k < 2; ++k)
    if (ev[k]) cudaEventDestroy(ev[k]);
  if (st != GS_SUCCESS) cudaStreamSynchronize(B->ctx->stream); /* nothing in flight on frees */
  gs_dfree(B->ctx, L->d_work);
  L->d_work = NULL;
  gs_dfree(B->ctx, d_slot);
  gs_dfree(B->ctx, d_idx);
  gs_dfree(B->ctx, d_order);
  L->d_order = NULL;
  gs_dfree(B->ctx, d_res);
  return st;
}

gs_status_t gs_batch_solve(gs_batch_t *B, const gs_batch_solve_opts_t *opts, const gs_val_t *d_b,
                           gs_val_t *d_x, gs_batch_stats_t *stats, gs_batch_summary_t *summary)
{
  gs_batch_solve_opts_t o;
  gs_batch_solve_launch_t L;
  if (opts) o = *opts;
  else gs_batch_solve_opts_default(&o);
  memset(&L, 0, sizeof L);
  GS_CHECK(check(B, &o, 1, d_b, d_x, &L));
  GS_CHECK(gs_context_activate(B->ctx));
  const int N = B->H.count;
  gs_status_t st = GS_SUCCESS;
  gs_batch_plan_t P;
  memset(&P, 0, sizeof P);
  gs_batch_result_t *h_res = malloc((size_t)N * sizeof *h_res);
  int *its = malloc((size_t)N * sizeof *its);
  float ms = 0.0f;
  if (!h_res || !its) GS_FAIL(GS_ERR_HOST_MEMORY, "gs_batch_solve: out of host memory");
  GS_TRY(run(B, &L, d_b, d_x, h_res, &P, NULL, &ms));
  int conv = 0;
  for (int i = 0; i < N; ++i) {
    if (stats) gs_batch_fill_stats(&h_res[i], &stats[i]);
    conv += gs_reason_converged((gs_reason_t)h_res[i].reason);
    its[i] = h_res[i].iterations;
  }
  if (summary) {
    qsort(its, (size_t)N, sizeof *its, cmp_int);
    summary->converged = conv;
    summary->it_min = its[0];
    summary->it_max = its[N - 1];
    summary->it_median = its[N / 2];
    summary->seconds = ms * 1e-3;
    summary->shared_problems = P.shared_problems;
  }
cleanup:
  gs_batch_plan_free(&P);
  free(h_res);
  free(its);
  return st;
}

gs_status_t gs_batch_pc_data(gs_batch_t *B, const gs_batch_solve_opts_t *opts, double **data,
                             int64_t **off, int **bad)
{
  if (!data || !off || !bad) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_pc_data: NULL argument");
  *data = NULL;
  *off = NULL;
  *bad = NULL;
  gs_batch_solve_opts_t o;
  gs_batch_solve_launch_t L;
  if (opts) o = *opts;
  else gs_batch_solve_opts_default(&o);
  memset(&L, 0, sizeof L);
  GS_CHECK(check(B, &o, 0, NULL, NULL, &L));
  GS_CHECK(gs_context_activate(B->ctx));
  L.setup_only = 1;
  const int N = B->H.count;
  gs_status_t st = GS_SUCCESS;
  gs_batch_plan_t P;
  memset(&P, 0, sizeof P);
  double *work = NULL;
  float ms = 0.0f;
  gs_batch_result_t *res = malloc(((size_t)N + 1) * sizeof *res);
  if (!res) GS_FAIL(GS_ERR_HOST_MEMORY, "gs_batch_pc_data: out of host memory");
  GS_TRY(run(B, &L, NULL, NULL, res, &P, &work, &ms));
  GS_TRY(gs_batch_pc_extract(&P, &B->H, L.precond, work, res, data, off, bad));
cleanup:
  gs_batch_plan_free(&P);
  free(work);
  free(res);
  return st;
}
