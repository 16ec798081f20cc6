/* multigpu/comm.c: the ranks of gpusolve/dist.h and what they share: the thread per rank, a
 * barrier that a failing rank can break, the status vote, the all-reduce (through peer memory,
 * NCCL, or staged through the host), and the communicator's creation and abort. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "gpusolve/timer.h"
#include "core/parallel.h"
#include "multigpu/dist_impl.h"

int gs_dist_have_nccl(void)
{
#ifdef GS_HAVE_NCCL
  return 1;
#else
  return 0;
#endif
}

static const char *const transport_names[] = {"auto", "nccl", "host", "peer"};
#define TRANSPORTS ((int)(sizeof transport_names / sizeof *transport_names))

const char *gs_dist_transport_string(gs_dist_transport_t t)
{
  return (int)t >= 0 && (int)t < TRANSPORTS ? transport_names[t] : "";
}

int gs_dist_transport_find(const char *name)
{
  for (int k = 0; name && k < TRANSPORTS; ++k)
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

/* Frees what p2p_setup made (any part of it); D->p2p = 0 afterwards. */
static void p2p_release(gs_dist_t *D)
{
  for (int r = 0; D->r && r < D->n; ++r) {
    gs_dist_rank_t *R = &D->r[r];
    if (!R->ctx || gs_context_activate(R->ctx) != GS_SUCCESS) continue;
    if (R->d_slots) cudaFree(R->d_slots);
    gs_dfree(R->ctx, R->d_peers);
    gs_dfree(R->ctx, R->d_seq);
    R->d_slots = NULL, R->d_peers = NULL, R->d_seq = NULL;
  }
  if (D->h_abort) cudaFreeHost(D->h_abort);
  D->h_abort = NULL, D->d_abort = NULL;
  D->p2p = 0;
}

/* Rank r's communicator, stream, events and context (gs_parallel's share r). */
static void rank_release(void *arg, int r)
{
  gs_dist_t *D = (gs_dist_t *)arg;
  gs_dist_rank_t *R = &D->r[r];
  if (R->ctx) gs_context_activate(R->ctx);
#ifdef GS_HAVE_NCCL
  if (R->comm) {
    if (D->aborted) ncclCommAbort(R->comm);
    else ncclCommDestroy(R->comm);
  }
#endif
  if (R->d_ballot) gs_dfree(R->ctx, R->d_ballot);
  if (R->ev_packed) cudaEventDestroy(R->ev_packed);
  if (R->ev_recvd) cudaEventDestroy(R->ev_recvd);
  if (R->comm_stream) cudaStreamDestroy(R->comm_stream);
  gs_context_destroy(&R->ctx);
}

void gs_dist_destroy(gs_dist_t **Dp)
{
  if (!Dp || !*Dp) return;
  gs_dist_t *D = *Dp;
  p2p_release(D);
  /* the ranks at once: each frees pinned staging and a context (tenths of a second each) */
  if (D->r) gs_parallel(D->n, rank_release, D);
  if (D->h_sum) cudaFreeHost(D->h_sum);
  free(D->votes);
  free(D->r);
  pthread_cond_destroy(&D->cond);
  pthread_mutex_destroy(&D->lock);
  free(D);
  *Dp = NULL;
}

/* A gs_dist_t of nranks ranks without contexts (device -1), its barrier and ballot. */
static gs_status_t dist_alloc(gs_dist_t **Dp, int nranks, gs_dist_transport_t t, int local)
{
  gs_dist_t *D = calloc(1, sizeof *D);
  if (!D) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory");
  pthread_mutex_init(&D->lock, NULL);
  pthread_cond_init(&D->cond, NULL);
  D->n = nranks;
  D->local = local;
  D->transport = t;
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

/* Rank r's context on `device`, its exchange stream and events. */
static gs_status_t rank_setup(gs_dist_t *D, int r, int device)
{
  gs_dist_rank_t *R = &D->r[r];
  R->device = device;
  GS_CHECK(gs_context_create(&R->ctx, device));
  /* the exchange's stream at the highest priority: its kernels (packing, NCCL's) are then
   * scheduled ahead of the local product's waiting blocks instead of after all of them,
   * which is what lets the local product hide the exchange */
  int least = 0, greatest = 0;
  GS_CHECK(GS_CUDA(cudaSetDevice(device)));
  GS_CHECK(GS_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest)));
  GS_CHECK(GS_CUDA(cudaStreamCreateWithPriority(&R->comm_stream, cudaStreamNonBlocking,
                                                greatest)));
  GS_CHECK(GS_CUDA(cudaEventCreateWithFlags(&R->ev_packed, cudaEventDisableTiming)));
  return GS_CUDA(cudaEventCreateWithFlags(&R->ev_recvd, cudaEventDisableTiming));
}

static gs_status_t rank_setup_run(gs_dist_rank_t *R, void *user)
{
  return rank_setup(R->D, R->rank, ((const int *)user)[R->rank]);
}

/* Checks that `device` exists; r names the rank in the message. */
static gs_status_t device_ok(int r, int device)
{
  const int ndev = gs_device_count();
  if (ndev == 0) return gs_context_no_device();
  if (device < 0 || device >= ndev)
    return GS_ERROR(GS_ERR_CUDA, "gs_dist_create: rank %d asks for GPU %d, and %d %s visible",
                    r, device, ndev, ndev == 1 ? "is" : "are");
  return GS_SUCCESS;
}

static int peer_setup_fail; /* gs_test_dist_peer_setup_fail */
void gs_test_dist_peer_setup_fail(int on) { peer_setup_fail = on; }

static int p2p_off_by_env(void)
{
  const char *e = getenv("GS_DIST_P2P");
  return e && !strcmp(e, "0");
}

/* 1 when every pair of the n devices (distinct) has peer access both ways. */
static int peers_all(int n, const int *devices)
{
  for (int r = 0; r < n; ++r)
    for (int q = 0; q < n; ++q) {
      int can = 0;
      if (q == r) continue;
      if (cudaDeviceCanAccessPeer(&can, devices[r], devices[q]) != cudaSuccess || !can) {
        (void)cudaGetLastError();
        return 0;
      }
    }
  return 1;
}

/* The all-reduce through peer memory, for ranks that are threads of this process on GPUs that
 * reach each other's memory (NVLink or PCIe peer access): one kernel of one warp a call of up
 * to GS_DIST_P2P_MAX values instead of NCCL's collective (CG on 2x H200: 3-16 us an iteration
 * less, docs/multigpu.md). Anything missing (a pair without peer access, an allocation) leaves
 * D->p2p = 0: NCCL's transport then does every all-reduce, and the peer transport cannot be
 * made. GS_DIST_P2P=0 in the environment turns it off (to compare the two). */
static void p2p_setup(gs_dist_t *D)
{
  if (D->n < 2 || D->local >= 0 || p2p_off_by_env()) return;
  gs_status_t st = GS_SUCCESS;
  gs_dist_slot_t *bases[GS_DIST_MAX_RANKS];
  int devices[GS_DIST_MAX_RANKS];
  for (int r = 0; r < D->n; ++r) devices[r] = D->r[r].device;
  if (!peers_all(D->n, devices)) st = GS_ERR_UNSUPPORTED;
  for (int r = 0; r < D->n && st == GS_SUCCESS; ++r) {
    gs_dist_rank_t *R = &D->r[r];
    const size_t bytes = 2 * (size_t)D->n * sizeof *R->d_slots;
    st = gs_context_activate(R->ctx);
    for (int q = 0; q < D->n && st == GS_SUCCESS; ++q) {
      if (q == r) continue;
      const cudaError_t ce = cudaDeviceEnablePeerAccess(D->r[q].device, 0);
      if (ce != cudaSuccess && ce != cudaErrorPeerAccessAlreadyEnabled) st = GS_ERR_CUDA;
      (void)cudaGetLastError();
    }
    /* cudaMalloc, not the context's stream-ordered pool: peer access reaches the former */
    if (st == GS_SUCCESS) st = GS_CUDA(cudaMalloc((void **)&R->d_slots, bytes));
    if (st == GS_SUCCESS && peer_setup_fail && r == D->n - 1) st = GS_ERR_DEVICE_MEMORY;
    if (st == GS_SUCCESS) st = gs_dmalloc(R->ctx, (void **)&R->d_seq, sizeof *R->d_seq, "peer seq");
    if (st == GS_SUCCESS)
      st = gs_dmalloc(R->ctx, (void **)&R->d_peers, (size_t)D->n * sizeof *R->d_peers,
                      "peer table");
    /* on the context's stream and waited for (the legacy stream orders no non-blocking one) */
    if (st == GS_SUCCESS) st = GS_CUDA(cudaMemsetAsync(R->d_slots, 0, bytes, R->ctx->stream));
    if (st == GS_SUCCESS)
      st = GS_CUDA(cudaMemsetAsync(R->d_seq, 0, sizeof *R->d_seq, R->ctx->stream));
    if (st == GS_SUCCESS) st = gs_context_sync(R->ctx);
    if (st == GS_SUCCESS) bases[r] = R->d_slots;
  }
  if (st == GS_SUCCESS &&
      cudaHostAlloc((void **)&D->h_abort, sizeof *D->h_abort,
                    cudaHostAllocMapped | cudaHostAllocPortable) != cudaSuccess)
    st = GS_ERR_CUDA;
  if (st == GS_SUCCESS) {
    *D->h_abort = 0;
    if (cudaHostGetDevicePointer((void **)&D->d_abort, D->h_abort, 0) != cudaSuccess)
      st = GS_ERR_CUDA;
  }
  for (int r = 0; r < D->n && st == GS_SUCCESS; ++r) { /* with UVA, one address everywhere */
    gs_dist_rank_t *R = &D->r[r];
    st = gs_context_activate(R->ctx);
    if (st == GS_SUCCESS)
      st = gs_copy_to_device(R->ctx, R->d_peers, bases, (size_t)D->n * sizeof *bases);
  }
  if (st == GS_SUCCESS) {
    D->p2p = 1;
    return;
  }
  gs_clear_error();
  (void)cudaGetLastError();
  p2p_release(D);
}

int gs_dist_peer_allreduce(const gs_dist_t *D) { return D && D->p2p; }

gs_status_t gs_dist_create_times(const gs_dist_t *D, double *contexts_s, double *nccl_s,
                                 double *peer_s)
{
  if (!D || !contexts_s || !nccl_s || !peer_s)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_dist_create_times: NULL argument");
  *contexts_s = D->create_s[0];
  *nccl_s = D->create_s[1];
  *peer_s = D->create_s[2];
  return GS_SUCCESS;
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
  if ((int)t < 0 || (int)t >= TRANSPORTS)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_dist_create: unknown transport %d", (int)t);
  int repeated = 0;
  for (int r = 0; r < nranks; ++r) {
    GS_CHECK(device_ok(r, devices[r]));
    for (int q = 0; q < r; ++q) repeated |= devices[q] == devices[r];
  }
  /* auto: the peer transport where every pair of distinct GPUs reaches the other's memory (no
   * NCCL communicator: 0.5 s less on 2 GPUs, the same iteration; docs/multigpu.md), and for one
   * rank, which communicates with nobody; else NCCL (with peer memory where some pairs allow
   * it), else the host transport. A peer setup that fails below falls back to NCCL. */
  const int auto_peer = t == GS_DIST_AUTO && !repeated && !p2p_off_by_env() &&
                        peers_all(nranks, devices); /* true for one rank */
  if (auto_peer) t = GS_DIST_PEER;
  else if (t == GS_DIST_AUTO) t = gs_dist_have_nccl() && !repeated ? GS_DIST_NCCL : GS_DIST_HOST;
  if (t == GS_DIST_PEER && (repeated || p2p_off_by_env() || !peers_all(nranks, devices)))
    return GS_ERROR(GS_ERR_UNSUPPORTED, "gs_dist_create: the peer transport takes distinct GPUs "
                    "with peer access between every pair%s",
                    repeated ? ", and a GPU repeats in the list"
                    : p2p_off_by_env() ? ", and GS_DIST_P2P=0 turns it off"
                                       : ", and a pair lacks it");
  if (t == GS_DIST_NCCL && !gs_dist_have_nccl())
    return GS_ERROR(GS_ERR_UNSUPPORTED, "gs_dist_create: this build has no NCCL (configure "
                    "with NCCL installed, or use the host transport)");
  if (t == GS_DIST_NCCL && repeated)
    return GS_ERROR(GS_ERR_UNSUPPORTED, "gs_dist_create: NCCL takes one rank per GPU, and a "
                    "GPU repeats in the list (the host transport allows it)");

  gs_dist_t *D = NULL;
  GS_CHECK(dist_alloc(&D, nranks, t, -1));
  /* The GPUs' contexts at once (a few hundred milliseconds each, one after the other). NCCL's
   * communicators after them: made on a thread beside the contexts, both slowed down and the
   * pair took as long as one after the other (docs/multigpu.md). */
  double t0 = gs_wall_seconds();
  GS_TRY(gs_dist_run(D, rank_setup_run, (void *)devices));
  D->create_s[0] = gs_wall_seconds() - t0;
  if (t == GS_DIST_PEER) {
    t0 = gs_wall_seconds();
    p2p_setup(D);
    D->create_s[2] = gs_wall_seconds() - t0;
    if (!D->p2p && nranks > 1) { /* peer access or its buffers could not be set up (one rank
                                    needs none) */
      if (!auto_peer)
        GS_FAIL(GS_ERR_CUDA, "gs_dist_create: the peer transport's access or buffers could not "
                "be set up on %d GPUs", nranks);
      D->transport = t = gs_dist_have_nccl() ? GS_DIST_NCCL : GS_DIST_HOST; /* auto's fall-back */
    }
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
    t0 = gs_wall_seconds();
    ncclResult_t e = ncclCommInitAll(comms, nranks, devices);
    if (e == ncclSuccess)
      for (int r = 0; r < nranks; ++r) D->r[r].comm = comms[r];
    free(comms);
    D->create_s[1] = gs_wall_seconds() - t0;
    GS_TRY(nccl_status(e, "ncclCommInitAll", 0));
    t0 = gs_wall_seconds();
    p2p_setup(D);
    D->create_s[2] = gs_wall_seconds() - t0;
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
  return dist_alloc(Dp, nranks, GS_DIST_HOST, -1);
}

/* ---- one process per rank ----------------------------------------------------------------- */

/* What a rank tells the others in process mode (gs_dist_agree, gs_dist_run's verdict). */
typedef struct {
  int status, secondary, device, pad;
  char msg[496];
} ballot_t;
#define GS_BALLOT_BYTES 512

gs_status_t gs_dist_id_create(gs_dist_id_t *id)
{
  if (!id) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_dist_id_create: id is NULL");
  memset(id, 0, sizeof *id);
#ifdef GS_HAVE_NCCL
  _Static_assert(sizeof(ncclUniqueId) <= sizeof(gs_dist_id_t), "ncclUniqueId fits the id");
  ncclUniqueId u;
  GS_CHECK(nccl_status(ncclGetUniqueId(&u), "ncclGetUniqueId", 0));
  memcpy(id->bytes, &u, sizeof u);
  return GS_SUCCESS;
#else
  return GS_ERROR(GS_ERR_UNSUPPORTED, "gs_dist_id_create: this build has no NCCL, which a job "
                  "of several processes needs");
#endif
}

gs_status_t gs_dist_create_rank(gs_dist_t **Dp, int rank, int nranks, int device,
                                const gs_dist_id_t *id)
{
  if (!Dp) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_dist_create_rank: D is NULL");
  *Dp = NULL;
  if (!id) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_dist_create_rank: id is NULL");
  if (nranks < 1 || nranks > GS_DIST_MAX_RANKS)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_dist_create_rank: %d ranks (1 to %d)", nranks,
                    GS_DIST_MAX_RANKS);
  if (rank < 0 || rank >= nranks)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_dist_create_rank: rank %d of %d", rank, nranks);
#ifndef GS_HAVE_NCCL
  (void)device;
  return GS_ERROR(GS_ERR_UNSUPPORTED, "gs_dist_create_rank: this build has no NCCL, which a job "
                  "of several processes needs");
#else
  gs_status_t st = GS_SUCCESS;
  GS_CHECK(device_ok(rank, device));
  gs_dist_t *D = NULL;
  GS_CHECK(dist_alloc(&D, nranks, GS_DIST_NCCL, rank));
  gs_dist_rank_t *R = &D->r[rank];
  GS_TRY(rank_setup(D, rank, device));
  GS_TRY(gs_dmalloc(R->ctx, &R->d_ballot, (size_t)nranks * GS_BALLOT_BYTES, "the ranks' ballot"));
  ncclUniqueId u;
  memcpy(&u, id->bytes, sizeof u);
  GS_TRY(nccl_status(ncclCommInitRank(&R->comm, nranks, u, rank), "ncclCommInitRank", rank));
  *Dp = D;
  return GS_SUCCESS;
cleanup:
  gs_dist_destroy(&D);
  return st;
#endif
}

int gs_dist_process_rank(const gs_dist_t *D) { return D ? D->local : -1; }
int gs_dist_usable(const gs_dist_t *D) { return D && !D->aborted; }

/* Process mode: every rank's ballot from every rank's `mine` (an all-gather). */
static gs_status_t proc_ballot(gs_dist_rank_t *R, const ballot_t *mine, ballot_t *all)
{
#ifdef GS_HAVE_NCCL
  _Static_assert(sizeof(ballot_t) == GS_BALLOT_BYTES, "a ballot is 512 bytes");
  cudaStream_t s = R->ctx->stream;
  char *d = (char *)R->d_ballot;
  GS_CHECK(GS_CUDA(cudaMemcpyAsync(d + (size_t)R->rank * GS_BALLOT_BYTES, mine, GS_BALLOT_BYTES,
                                   cudaMemcpyHostToDevice, s)));
  GS_CHECK(nccl_status(ncclAllGather(d + (size_t)R->rank * GS_BALLOT_BYTES, d, GS_BALLOT_BYTES,
                                     ncclChar, R->comm, s),
                       "all-gather of the ranks' status", R->rank));
  GS_CHECK(GS_CUDA(cudaMemcpyAsync(all, d, (size_t)R->D->n * GS_BALLOT_BYTES,
                                   cudaMemcpyDeviceToHost, s)));
  return GS_CUDA(cudaStreamSynchronize(s));
#else
  (void)R, (void)mine, (void)all;
  return GS_ERROR(GS_ERR_INTERNAL, "process mode in a build without NCCL");
#endif
}

gs_status_t gs_dist_proc_reduce(gs_dist_rank_t *R, double *h, int k, int max)
{
#ifdef GS_HAVE_NCCL
  if (k < 1 || k > GS_DIST_RED_MAX || !R->d_ballot)
    return GS_ERROR(GS_ERR_INTERNAL, "gs_dist_proc_reduce of %d values", k);
  cudaStream_t s = R->ctx->stream;
  double *d = (double *)R->d_ballot; /* n * 512 bytes: at least GS_DIST_RED_MAX doubles */
  GS_CHECK(GS_CUDA(cudaMemcpyAsync(d, h, (size_t)k * sizeof *h, cudaMemcpyHostToDevice, s)));
  GS_CHECK(nccl_status(ncclAllReduce(d, d, (size_t)k, ncclDouble, max ? ncclMax : ncclSum,
                                     R->comm, s), "all-reduce", R->rank));
  GS_CHECK(GS_CUDA(cudaMemcpyAsync(h, d, (size_t)k * sizeof *h, cudaMemcpyDeviceToHost, s)));
  return GS_CUDA(cudaStreamSynchronize(s));
#else
  (void)R, (void)h, (void)k, (void)max;
  return GS_ERROR(GS_ERR_INTERNAL, "process mode in a build without NCCL");
#endif
}

/* The lowest rank of all[0..n) that failed on its own account (else the lowest that failed);
 * -1 when none did. */
static int lowest_failed(const gs_status_t *st, const int *secondary, int n)
{
  for (int r = 0; r < n; ++r)
    if (st[r] != GS_SUCCESS && !secondary[r]) return r;
  for (int r = 0; r < n; ++r)
    if (st[r] != GS_SUCCESS) return r;
  return -1;
}

/* gs_dist_run in process mode: the local rank here, then one ballot so that every process
 * returns the same verdict. */
static gs_status_t run_process(gs_dist_t *D, gs_dist_rank_fn fn, void *user)
{
  gs_dist_rank_t *R = &D->r[D->local];
  R->msg[0] = '\0';
  R->secondary = 0;
  R->status = gs_context_activate(R->ctx);
  if (R->status == GS_SUCCESS) R->status = fn(R, user);
  if (R->status != GS_SUCCESS) snprintf(R->msg, sizeof R->msg, "%s", gs_last_error());
  if (D->aborted) /* no ballot through an aborted communicator: this rank's own account */
    return GS_ERROR(R->status != GS_SUCCESS ? R->status : GS_ERR_CUDA, "rank %d (GPU %d): %s",
                    R->rank, R->device, R->status != GS_SUCCESS ? R->msg
                                                                : "the communicator was aborted");
  ballot_t mine;
  memset(&mine, 0, sizeof mine);
  mine.status = (int)R->status;
  mine.secondary = R->secondary;
  mine.device = R->device;
  snprintf(mine.msg, sizeof mine.msg, "%.495s", R->msg);
  ballot_t *all = malloc((size_t)D->n * sizeof *all);
  gs_status_t *st = malloc((size_t)D->n * sizeof *st);
  int *sec = malloc((size_t)D->n * sizeof *sec);
  gs_status_t bs = all && st && sec ? proc_ballot(R, &mine, all)
                                    : GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory");
  gs_status_t ret = GS_SUCCESS;
  if (bs != GS_SUCCESS) { /* could not hear the others: report this rank's own outcome */
    ret = R->status != GS_SUCCESS
              ? GS_ERROR(R->status, "rank %d (GPU %d): %s", R->rank, R->device, R->msg)
              : bs;
  } else {
    for (int r = 0; r < D->n; ++r) st[r] = (gs_status_t)all[r].status, sec[r] = all[r].secondary;
    const int bad = lowest_failed(st, sec, D->n);
    if (bad >= 0)
      ret = GS_ERROR(st[bad], "rank %d (GPU %d): %s", bad, all[bad].device, all[bad].msg);
  }
  free(all);
  free(st);
  free(sec);
  return ret;
}

int gs_dist_ranks(const gs_dist_t *D) { return D ? D->n : 0; }
gs_dist_transport_t gs_dist_transport(const gs_dist_t *D)
{
  return D ? D->transport : GS_DIST_AUTO;
}
gs_context_t *gs_dist_context(const gs_dist_t *D, int r)
{
  return D && r >= 0 && r < D->n && gs_dist_is_local(D, r) ? D->r[r].ctx : NULL;
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
  if (D->local >= 0) return run_process(D, fn, user);
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
  if (D->local >= 0) return -1; /* threads only: a process's ranks meet through NCCL */
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

/* gs_dist_agree in process mode: one all-gather of the votes. */
static gs_status_t agree_process(gs_dist_rank_t *R, gs_status_t mine)
{
  gs_dist_t *D = R->D;
  ballot_t b;
  memset(&b, 0, sizeof b);
  b.status = (int)mine;
  ballot_t *all = malloc((size_t)D->n * sizeof *all);
  gs_status_t st = all ? proc_ballot(R, &b, all) : GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory");
  gs_status_t verdict = GS_SUCCESS;
  for (int r = 0; st == GS_SUCCESS && r < D->n && verdict == GS_SUCCESS; ++r)
    verdict = (gs_status_t)all[r].status;
  free(all);
  if (mine != GS_SUCCESS) return mine; /* its own message stands */
  if (st != GS_SUCCESS) return st;
  if (verdict != GS_SUCCESS) return gs_dist_other_failed(R, verdict);
  return GS_SUCCESS;
}

gs_status_t gs_dist_agree(gs_dist_rank_t *R, gs_status_t mine)
{
  gs_dist_t *D = R->D;
  if (D->local >= 0) return agree_process(R, mine);
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
  /* NCCL's communicators are aborted below; the peer transport's counters are out of step */
  if (D->transport == GS_DIST_NCCL || D->transport == GS_DIST_PEER) D->aborted = 1;
  pthread_mutex_unlock(&D->lock);
  if (D->h_abort) *(volatile int *)D->h_abort = 1; /* peer all-reduces stop waiting */
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

/* The host transport's all-reduce of k <= GS_DIST_RED_MAX values (synchronous). */
static gs_status_t host_allreduce(gs_dist_rank_t *R, double *d_buf, int k)
{
  gs_dist_t *D = R->D;
  cudaStream_t s = R->ctx->stream;
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

gs_status_t gs_dist_allreduce(gs_dist_rank_t *R, double *d_buf, int k)
{
  gs_dist_t *D = R->D;
  if (D->n == 1 || k <= 0) return GS_SUCCESS;
  cudaStream_t s = R->ctx->stream;
  /* through peer memory in calls of up to GS_DIST_P2P_MAX values (GMRES's restart may pass
   * it); NCCL's transport sends only the short ones that way, as measured (CG's) */
  if (D->p2p && (D->transport == GS_DIST_PEER || k <= GS_DIST_P2P_NCCL_MAX)) {
    for (int off = 0; off < k; off += GS_DIST_P2P_MAX) {
      const int c = k - off < GS_DIST_P2P_MAX ? k - off : GS_DIST_P2P_MAX;
      GS_CHECK(gs_dist_p2p_launch(s, d_buf + off, c, R->rank, D->n, R->d_peers, R->d_seq,
                                  D->d_abort));
    }
    return GS_SUCCESS;
  }
#ifdef GS_HAVE_NCCL
  if (D->transport == GS_DIST_NCCL)
    return nccl_status(ncclAllReduce(d_buf, d_buf, (size_t)k, ncclDouble, ncclSum, R->comm, s),
                       "all-reduce", R->rank);
#endif
  if (D->transport != GS_DIST_HOST)
    return GS_ERROR(GS_ERR_INTERNAL, "all-reduce: the %s transport has no peer buffers",
                    gs_dist_transport_string(D->transport));
  for (int off = 0; off < k; off += GS_DIST_RED_MAX)
    GS_CHECK(host_allreduce(R, d_buf + off, k - off < GS_DIST_RED_MAX ? k - off : GS_DIST_RED_MAX));
  return GS_SUCCESS;
}
