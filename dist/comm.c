/* dist/comm.c: the ranks of gpusolve/dist.h and what they share: the thread per rank, a
 * barrier that a failing rank can break, the status vote, the all-reduce (NCCL, or staged
 * through the host), and the communicator's creation and abort. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "dist/dist_impl.h"

int gs_dist_have_nccl(void)
{
#ifdef GS_HAVE_NCCL
  return 1;
#else
  return 0;
#endif
}

static const char *const transport_names[] = {"auto", "nccl", "host"};

const char *gs_dist_transport_string(gs_dist_transport_t t)
{
  return (int)t >= 0 && (int)t < 3 ? transport_names[t] : "";
}

int gs_dist_transport_find(const char *name)
{
  for (int k = 0; name && k < 3; ++k)
    if (!strcmp(name, transport_names[k])) return k;
  return -1;
}

#ifdef GS_HAVE_NCCL
static gs_status_t nccl_status(ncclResult_t e, const char *what, int rank)
{
  if (e == ncclSuccess) return GS_SUCCESS;
  return GS_ERROR(GS_ERR_CUDA, "NCCL %s failed on rank %d: %s", what, rank,
                  ncclGetErrorString(e));
}
#endif

/* ---- create / destroy ------------------------------------------------------------------- */

void gs_dist_destroy(gs_dist_t **Dp)
{
  if (!Dp || !*Dp) return;
  gs_dist_t *D = *Dp;
  for (int r = 0; D->r && r < D->n; ++r) {
    gs_dist_rank_t *R = &D->r[r];
    if (R->ctx) gs_context_activate(R->ctx);
#ifdef GS_HAVE_NCCL
    if (R->comm) {
      if (D->aborted) ncclCommAbort(R->comm);
      else ncclCommDestroy(R->comm);
    }
#endif
    if (R->ev_packed) cudaEventDestroy(R->ev_packed);
    if (R->ev_recvd) cudaEventDestroy(R->ev_recvd);
    if (R->comm_stream) cudaStreamDestroy(R->comm_stream);
    gs_context_destroy(&R->ctx);
  }
  if (D->h_sum) cudaFreeHost(D->h_sum);
  free(D->votes);
  free(D->r);
  pthread_cond_destroy(&D->cond);
  pthread_mutex_destroy(&D->lock);
  free(D);
  *Dp = NULL;
}

gs_status_t gs_dist_create(gs_dist_t **Dp, int nranks, const int *devices, gs_dist_transport_t t)
{
  gs_status_t st = GS_SUCCESS;
  if (!Dp) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_dist_create: D is NULL");
  *Dp = NULL;
  if (!devices) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_dist_create: devices is NULL");
  if (nranks < 1 || nranks > GS_DIST_MAX_RANKS)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_dist_create: %d ranks (1 to %d)", nranks,
                    GS_DIST_MAX_RANKS);
  if ((int)t < 0 || (int)t > 2)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_dist_create: unknown transport %d", (int)t);
  const int ndev = gs_device_count();
  if (ndev == 0) return GS_ERROR(GS_ERR_CUDA, "no CUDA device available");
  int repeated = 0;
  for (int r = 0; r < nranks; ++r) {
    if (devices[r] < 0 || devices[r] >= ndev)
      return GS_ERROR(GS_ERR_CUDA, "gs_dist_create: rank %d asks for GPU %d, and %d %s visible",
                      r, devices[r], ndev, ndev == 1 ? "is" : "are");
    for (int q = 0; q < r; ++q) repeated |= devices[q] == devices[r];
  }
  if (t == GS_DIST_AUTO) t = gs_dist_have_nccl() && !repeated ? GS_DIST_NCCL : GS_DIST_HOST;
  if (t == GS_DIST_NCCL && !gs_dist_have_nccl())
    return GS_ERROR(GS_ERR_UNSUPPORTED, "gs_dist_create: this build has no NCCL (configure "
                    "with NCCL installed, or use the host transport)");
  if (t == GS_DIST_NCCL && repeated)
    return GS_ERROR(GS_ERR_UNSUPPORTED, "gs_dist_create: NCCL takes one rank per GPU, and a "
                    "GPU repeats in the list (the host transport allows it)");

  gs_dist_t *D = calloc(1, sizeof *D);
  if (!D) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory");
  pthread_mutex_init(&D->lock, NULL);
  pthread_cond_init(&D->cond, NULL);
  D->n = nranks;
  D->transport = t;
  D->r = calloc((size_t)nranks, sizeof *D->r);
  D->votes = calloc((size_t)nranks, sizeof *D->votes);
  if (!D->r || !D->votes) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory");
  for (int r = 0; r < nranks; ++r) {
    gs_dist_rank_t *R = &D->r[r];
    R->D = D;
    R->rank = r;
    R->device = devices[r];
    GS_TRY(gs_context_create(&R->ctx, devices[r]));
    /* the exchange's stream at the highest priority: its kernels (packing, NCCL's) are then
     * scheduled ahead of the local product's waiting blocks instead of after all of them,
     * which is what lets the local product hide the exchange */
    int least = 0, greatest = 0;
    GS_TRY(GS_CUDA(cudaSetDevice(devices[r])));
    GS_TRY(GS_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest)));
    GS_TRY(GS_CUDA(cudaStreamCreateWithPriority(&R->comm_stream, cudaStreamNonBlocking,
                                                greatest)));
    GS_TRY(GS_CUDA(cudaEventCreateWithFlags(&R->ev_packed, cudaEventDisableTiming)));
    GS_TRY(GS_CUDA(cudaEventCreateWithFlags(&R->ev_recvd, cudaEventDisableTiming)));
  }
  if (t == GS_DIST_HOST) {
    GS_TRY(GS_CUDA(cudaMallocHost((void **)&D->h_sum,
                                  (size_t)nranks * GS_DIST_RED_MAX * sizeof *D->h_sum)));
    for (int r = 0; r < nranks; ++r) D->r[r].h_red = D->h_sum + (size_t)r * GS_DIST_RED_MAX;
  }
#ifdef GS_HAVE_NCCL
  if (t == GS_DIST_NCCL) {
    ncclComm_t *comms = calloc((size_t)nranks, sizeof *comms);
    if (!comms) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory");
    ncclResult_t e = ncclCommInitAll(comms, nranks, devices);
    if (e == ncclSuccess)
      for (int r = 0; r < nranks; ++r) D->r[r].comm = comms[r];
    free(comms);
    GS_TRY(nccl_status(e, "ncclCommInitAll", 0));
  }
#endif
  *Dp = D;
  return GS_SUCCESS;
cleanup:
  gs_dist_destroy(&D);
  return st;
}

gs_status_t gs_test_dist_threads(gs_dist_t **Dp, int nranks)
{
  if (!Dp || nranks < 1 || nranks > GS_DIST_MAX_RANKS)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_test_dist_threads: bad arguments");
  gs_dist_t *D = calloc(1, sizeof *D);
  if (!D) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory");
  pthread_mutex_init(&D->lock, NULL);
  pthread_cond_init(&D->cond, NULL);
  D->n = nranks;
  D->transport = GS_DIST_HOST;
  D->r = calloc((size_t)nranks, sizeof *D->r);
  D->votes = calloc((size_t)nranks, sizeof *D->votes);
  if (!D->r || !D->votes) {
    gs_dist_destroy(&D);
    return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory");
  }
  for (int r = 0; r < nranks; ++r) D->r[r].D = D, D->r[r].rank = r, D->r[r].device = -1;
  *Dp = D;
  return GS_SUCCESS;
}

int gs_dist_ranks(const gs_dist_t *D) { return D ? D->n : 0; }
gs_dist_transport_t gs_dist_transport(const gs_dist_t *D)
{
  return D ? D->transport : GS_DIST_AUTO;
}
gs_context_t *gs_dist_context(const gs_dist_t *D, int r)
{
  return D && r >= 0 && r < D->n ? D->r[r].ctx : NULL;
}

/* ---- running on every rank -------------------------------------------------------------- */

typedef struct {
  gs_dist_rank_t *R;
  gs_dist_rank_fn fn;
  void *user;
} run_arg_t;

static void *run_one(void *p)
{
  run_arg_t *a = (run_arg_t *)p;
  gs_dist_rank_t *R = a->R;
  R->msg[0] = '\0';
  R->secondary = 0;
  R->status = R->ctx ? gs_context_activate(R->ctx) : GS_SUCCESS; /* NULL: test hook's ranks */
  if (R->status == GS_SUCCESS) R->status = a->fn(R, a->user);
  if (R->status != GS_SUCCESS) {
    snprintf(R->msg, sizeof R->msg, "%s", gs_last_error());
    /* release any rank waiting at the barrier for this one */
    pthread_mutex_lock(&R->D->lock);
    R->D->broken = 1;
    pthread_cond_broadcast(&R->D->cond);
    pthread_mutex_unlock(&R->D->lock);
  }
  return NULL;
}

gs_status_t gs_dist_run(gs_dist_t *D, gs_dist_rank_fn fn, void *user)
{
  if (D->aborted)
    return GS_ERROR(GS_ERR_CUDA, "the ranks' communicator was aborted after a failure: destroy "
                    "this gs_dist_t and create another");
  run_arg_t *args = calloc((size_t)D->n, sizeof *args);
  pthread_t *th = calloc((size_t)D->n, sizeof *th);
  char *started = calloc((size_t)D->n, 1);
  if (!args || !th || !started) {
    free(args);
    free(th);
    free(started);
    return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory");
  }
  D->arrived = 0;
  D->broken = 0;
  for (int r = 0; r < D->n; ++r) args[r] = (run_arg_t){&D->r[r], fn, user};
  for (int r = 1; r < D->n; ++r) {
    started[r] = pthread_create(&th[r], NULL, run_one, &args[r]) == 0;
    if (!started[r]) { /* run it here after rank 0 would deadlock: fail this rank instead */
      D->r[r].status = GS_ERR_HOST_MEMORY;
      snprintf(D->r[r].msg, sizeof D->r[r].msg, "could not start a host thread for the rank");
      pthread_mutex_lock(&D->lock);
      D->broken = 1;
      pthread_mutex_unlock(&D->lock);
    }
  }
  run_one(&args[0]);
  for (int r = 1; r < D->n; ++r)
    if (started[r]) pthread_join(th[r], NULL);
  free(args);
  free(th);
  free(started);
  if (D->r[0].ctx) gs_context_activate(D->r[0].ctx);
  /* the lowest failing rank whose failure is its own */
  int bad = -1;
  for (int r = 0; r < D->n && bad < 0; ++r)
    if (D->r[r].status != GS_SUCCESS && !D->r[r].secondary) bad = r;
  for (int r = 0; r < D->n && bad < 0; ++r)
    if (D->r[r].status != GS_SUCCESS) bad = r;
  if (bad < 0) return GS_SUCCESS;
  return GS_ERROR(D->r[bad].status, "rank %d (GPU %d): %s", bad, D->r[bad].device,
                  D->r[bad].msg);
}

gs_status_t gs_dist_other_failed(gs_dist_rank_t *R, gs_status_t st)
{
  R->secondary = 1;
  return GS_ERROR(st, "another rank failed (see its error)");
}

int gs_dist_barrier(gs_dist_rank_t *R)
{
  gs_dist_t *D = R->D;
  pthread_mutex_lock(&D->lock);
  if (D->broken) {
    pthread_mutex_unlock(&D->lock);
    return -1;
  }
  const unsigned long gen = D->generation;
  if (++D->arrived == D->n) {
    D->arrived = 0;
    D->generation++;
    pthread_cond_broadcast(&D->cond);
  } else {
    while (gen == D->generation && !D->broken) pthread_cond_wait(&D->cond, &D->lock);
  }
  const int rc = gen == D->generation ? -1 : 0; /* broken before everyone arrived */
  pthread_mutex_unlock(&D->lock);
  return rc;
}

gs_status_t gs_dist_agree(gs_dist_rank_t *R, gs_status_t mine)
{
  gs_dist_t *D = R->D;
  D->votes[R->rank] = mine;
  if (gs_dist_barrier(R) != 0) /* a rank failed outside the vote */
    return mine != GS_SUCCESS ? mine
                              : gs_dist_other_failed(R, GS_ERR_CUDA);
  int bad = -1;
  for (int r = 0; r < D->n && bad < 0; ++r)
    if (D->votes[r] != GS_SUCCESS) bad = r;
  const gs_status_t verdict = bad < 0 ? GS_SUCCESS : D->votes[bad];
  /* second meeting: nobody votes again before everyone has read the ballot */
  const int broken = gs_dist_barrier(R) != 0;
  if (mine != GS_SUCCESS) return mine; /* its own message stands */
  if (verdict != GS_SUCCESS) return gs_dist_other_failed(R, verdict);
  if (broken) return gs_dist_other_failed(R, GS_ERR_CUDA);
  return GS_SUCCESS;
}

void gs_dist_fail(gs_dist_rank_t *R)
{
  gs_dist_t *D = R->D;
  pthread_mutex_lock(&D->lock);
  D->broken = 1;
  pthread_cond_broadcast(&D->cond);
  const int first = !D->aborted;
#ifdef GS_HAVE_NCCL
  if (D->transport == GS_DIST_NCCL) D->aborted = 1;
#endif
  pthread_mutex_unlock(&D->lock);
#ifdef GS_HAVE_NCCL
  /* ranks blocked in a collective whose partner will never come: abort every communicator
   * (NCCL's documented way out; the object is unusable afterwards) */
  if (first && D->transport == GS_DIST_NCCL)
    for (int r = 0; r < D->n; ++r)
      if (D->r[r].comm) ncclCommAbort(D->r[r].comm), D->r[r].comm = NULL;
#else
  (void)first;
#endif
}

/* ---- all-reduce ------------------------------------------------------------------------- */

gs_status_t gs_dist_allreduce(gs_dist_rank_t *R, double *d_buf, int k)
{
  gs_dist_t *D = R->D;
  if (D->n == 1 || k == 0) return GS_SUCCESS;
  cudaStream_t s = R->ctx->stream;
#ifdef GS_HAVE_NCCL
  if (D->transport == GS_DIST_NCCL)
    return nccl_status(ncclAllReduce(d_buf, d_buf, (size_t)k, ncclDouble, ncclSum, R->comm, s),
                       "all-reduce", R->rank);
#endif
  if (k > GS_DIST_RED_MAX)
    return GS_ERROR(GS_ERR_INTERNAL, "host all-reduce of %d values (at most %d)", k,
                    GS_DIST_RED_MAX);
  GS_CHECK(GS_CUDA(cudaMemcpyAsync(R->h_red, d_buf, (size_t)k * sizeof *d_buf,
                                   cudaMemcpyDeviceToHost, s)));
  GS_CHECK(GS_CUDA(cudaStreamSynchronize(s)));
  if (gs_dist_barrier(R) != 0) return gs_dist_other_failed(R, GS_ERR_CUDA);
  /* every rank adds the same values in rank order: the same bits everywhere */
  double sum[GS_DIST_RED_MAX];
  for (int j = 0; j < k; ++j) {
    double a = 0.0;
    for (int r = 0; r < D->n; ++r) a += D->h_sum[(size_t)r * GS_DIST_RED_MAX + j];
    sum[j] = a;
  }
  if (gs_dist_barrier(R) != 0) return gs_dist_other_failed(R, GS_ERR_CUDA);
  memcpy(R->h_red, sum, (size_t)k * sizeof *sum);
  GS_CHECK(GS_CUDA(cudaMemcpyAsync(d_buf, R->h_red, (size_t)k * sizeof *d_buf,
                                   cudaMemcpyHostToDevice, s)));
  return GS_CUDA(cudaStreamSynchronize(s));
}
