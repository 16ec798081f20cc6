/* batch/batch_solve.c: gs_batch_solve, the host side of the batched CG / BiCGSTAB of
 * batch/batch_solve_kernels.cu: checks, the workspace of the problems too large for shared
 * memory, one launch, one copy of the per-problem results, the summary. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "batch/batch_impl.h"
#include "core/context_impl.h"
#include "core/error.h"

void gs_batch_solve_opts_default(gs_batch_solve_opts_t *o)
{
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->method = GS_SOLVER_CG;
  o->rtol = 1e-8;
  o->atol = 0.0;
  o->maxit = 10000;
}

static int cmp_int(const void *a, const void *b)
{
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

static gs_status_t check(const gs_batch_t *B, const gs_batch_solve_opts_t *o, const void *d_b,
                         const void *d_x)
{
  if (!B) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_solve: B is NULL");
  if (o->method != GS_SOLVER_CG && o->method != GS_SOLVER_BICGSTAB)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_solve: method '%s' is not batched (cg, bicgstab)",
                    gs_method_string(o->method));
  if (!(o->rtol >= 0.0) || !(o->atol >= 0.0) || !isfinite(o->rtol) || !isfinite(o->atol))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_solve: tolerances must be finite and >= 0 "
                    "(rtol %g, atol %g)", o->rtol, o->atol);
  if (o->maxit < 0) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_solve: maxit %d < 0", o->maxit);
  for (int i = 0; i < B->H.count; ++i)
    if (B->H.prob[i].m != B->H.prob[i].n)
      return GS_ERROR(GS_ERR_DIMENSION, "gs_batch_solve: problem %d is %d x %d, not square", i,
                      (int)B->H.prob[i].m, (int)B->H.prob[i].n);
  if (B->H.row_off[B->H.count] > 0 && (!d_b || !d_x))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_solve: %s is NULL", d_b ? "d_x" : "d_b");
  if (d_b && d_b == d_x) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_batch_solve: d_x aliases d_b");
  return GS_SUCCESS;
}

gs_status_t gs_batch_solve(gs_batch_t *B, const gs_batch_solve_opts_t *opts, const gs_val_t *d_b,
                           gs_val_t *d_x, gs_batch_stats_t *stats, gs_batch_summary_t *summary)
{
  gs_batch_solve_opts_t o;
  if (opts) o = *opts;
  else gs_batch_solve_opts_default(&o);
  GS_CHECK(check(B, &o, d_b, d_x));
  GS_CHECK(gs_context_activate(B->ctx));
  const gs_batch_host_t *H = &B->H;
  const int N = H->count;
  gs_status_t st = GS_SUCCESS;
  gs_batch_solve_launch_t L;
  memset(&L, 0, sizeof L);
  L.method = o.method;
  L.rtol = o.rtol;
  L.atol = o.atol;
  L.maxit = o.maxit;
  L.jacobi = o.jacobi != 0;
  L.x0_given = o.x0_given != 0;
  L.nvec = o.method == GS_SOLVER_CG ? 4 + 2 * L.jacobi : 6 + 3 * L.jacobi;
  L.smem_n = gs_batch_solve_smem_n(L.nvec);
  L.threads = gs_batch_block_threads(B->st.mean_m);
  if (L.threads < 64) L.threads = 64;
  int64_t *h_off = malloc((size_t)N * sizeof *h_off);
  gs_batch_result_t *h_res = malloc((size_t)N * sizeof *h_res);
  int *its = malloc((size_t)N * sizeof *its);
  int64_t *d_off = NULL;
  gs_batch_result_t *d_res = NULL;
  cudaEvent_t ev[2] = {NULL, NULL};
  if (!h_off || !h_res || !its) GS_FAIL(GS_ERR_HOST_MEMORY, "gs_batch_solve: out of host memory");
  /* global vectors only for the problems whose vectors do not fit in shared memory */
  int64_t work = 0;
  int shared = 0;
  for (int i = 0; i < N; ++i) {
    if (H->prob[i].n <= L.smem_n) {
      h_off[i] = -1;
      ++shared;
    } else {
      h_off[i] = work;
      work += (int64_t)L.nvec * H->prob[i].n;
    }
  }
  GS_TRY(gs_dmalloc(B->ctx, (void **)&L.d_work, (size_t)work * sizeof(double),
                    "the batched solver's global vectors"));
  GS_TRY(gs_dmalloc(B->ctx, (void **)&d_off, (size_t)N * sizeof *d_off, "batched solver offsets"));
  GS_TRY(gs_dmalloc(B->ctx, (void **)&d_res, (size_t)N * sizeof *d_res, "batched solver results"));
  GS_TRY(gs_copy_to_device(B->ctx, d_off, h_off, (size_t)N * sizeof *d_off));
  L.d_work_off = d_off;
  GS_TRY(GS_CUDA(cudaEventCreate(&ev[0])));
  GS_TRY(GS_CUDA(cudaEventCreate(&ev[1])));
  GS_TRY(GS_CUDA(cudaEventRecord(ev[0], B->ctx->stream)));
  GS_TRY(gs_batch_kernel_solve(B, &L, d_b, d_x, d_res));
  GS_TRY(GS_CUDA(cudaEventRecord(ev[1], B->ctx->stream)));
  GS_TRY(gs_copy_to_host(B->ctx, h_res, d_res, (size_t)N * sizeof *h_res)); /* waits */
  float ms = 0.0f;
  GS_TRY(GS_CUDA(cudaEventElapsedTime(&ms, ev[0], ev[1])));
  int conv = 0;
  for (int i = 0; i < N; ++i) {
    const gs_batch_result_t *r = &h_res[i];
    if (stats) {
      stats[i].reason = (gs_reason_t)r->reason;
      stats[i].iterations = r->iterations;
      stats[i].bnorm = r->bnorm;
      stats[i].rnorm0 = r->rnorm0;
      stats[i].rnorm = r->rnorm;
      stats[i].true_residual_norm = r->true_rnorm;
    }
    conv += gs_reason_converged((gs_reason_t)r->reason);
    its[i] = r->iterations;
  }
  if (summary) {
    qsort(its, (size_t)N, sizeof *its, cmp_int);
    summary->converged = conv;
    summary->it_min = its[0];
    summary->it_max = its[N - 1];
    summary->it_median = its[N / 2];
    summary->seconds = ms * 1e-3;
    summary->shared_problems = shared;
  }
cleanup:
  for (int k = 0; k < 2; ++k)
    if (ev[k]) cudaEventDestroy(ev[k]);
  if (st != GS_SUCCESS) cudaStreamSynchronize(B->ctx->stream); /* nothing in flight on frees */
  gs_dfree(B->ctx, L.d_work);
  gs_dfree(B->ctx, d_off);
  gs_dfree(B->ctx, d_res);
  free(h_off);
  free(h_res);
  free(its);
  return st;
}
