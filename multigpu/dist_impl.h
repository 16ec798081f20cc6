/* multigpu/dist_impl.h: the ranks, their transport and the distributed matrix (not installed).
 *
 * Every call of gpusolve/dist.h runs a function on all ranks at once (gs_dist_run: one host
 * thread per rank, rank 0 on the caller's), each with its own context made current. Ranks meet
 * only through the transport: gs_dist_allreduce (sum of k doubles in device memory, the same
 * bits on every rank), the halo exchange of the matrix's product, and gs_dist_agree (a host
 * vote on a status before the ranks start communicating, so that a rank that failed to set up
 * makes all of them return instead of leaving the others waiting in a collective). */
#ifndef GS_DIST_IMPL_H
#define GS_DIST_IMPL_H

#include <pthread.h>

#include "core/context_impl.h"
#include "multigpu/partition.h"
#include "gpusolve/dist.h"
#include "solvers/solver_impl.h"

#ifdef GS_HAVE_NCCL
#include <nccl.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The host transport's reduction slots: a reduction sums at most this many values. */
#define GS_DIST_RED_MAX 64

/* The all-reduce through peer memory (threads of one process, every pair of GPUs peer-capable):
 * a call of at most GS_DIST_P2P_MAX values (larger reductions take several). One slot per
 * (parity, sending rank) in each rank's buffer, whole cache lines. */
#define GS_DIST_P2P_MAX 64
/* The NCCL transport's all-reduces through peer memory: up to this many values (CG's and
 * pipelined CG's, measured faster that way); longer ones (GMRES's) through NCCL. */
#define GS_DIST_P2P_NCCL_MAX 8
typedef struct gs_dist_slot {
  double v[GS_DIST_P2P_MAX];
  unsigned long long seq;
  unsigned long long pad[7];
} gs_dist_slot_t;

typedef struct gs_dist_rank {
  gs_dist_t *D;
  int rank, device;
  gs_context_t *ctx;
  cudaStream_t comm_stream; /* the halo exchange runs here, beside the local product */
  cudaEvent_t ev_packed, ev_recvd;
#ifdef GS_HAVE_NCCL
  ncclComm_t comm;
#endif
  double *h_red;            /* host transport: pinned staging of this rank's reduction */
  gs_dist_slot_t *d_slots;  /* peer all-reduce: 2 x n slots on this GPU (NULL: not used) */
  gs_dist_slot_t **d_peers; /* the n ranks' d_slots, as this GPU addresses them */
  unsigned long long *d_seq; /* this rank's count of peer all-reduces */
  void *d_ballot;           /* process mode: nranks ballots for gs_dist_agree (device) */
  /* per call of gs_dist_run */
  gs_status_t status;
  int secondary;            /* its failure only reports another rank's (gs_dist_other_failed) */
  char msg[1024];
} gs_dist_rank_t;

struct gs_dist {
  int n;
  int local;                /* process mode (gs_dist_create_rank): this process's rank, the
                               only one of r[] with a context; -1 when all ranks are threads
                               of this process */
  gs_dist_transport_t transport;
  gs_dist_rank_t *r;
  /* a barrier that can be broken: a rank that fails mid-call releases the others with an
   * error instead of leaving them waiting */
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int arrived;
  unsigned long generation;
  int broken;               /* set for the rest of the current gs_dist_run */
  int aborted;              /* communicators aborted: the object is unusable */
  gs_status_t *votes;       /* gs_dist_agree's ballot, n entries */
  double *h_sum;            /* host transport: n * GS_DIST_RED_MAX staged values (pinned) */
  int p2p;                  /* small all-reduces through peer memory (gs_dist_p2p_setup) */
  int *h_abort;             /* mapped pinned flag: a peer all-reduce stops waiting when set */
  int *d_abort;             /* its device address */
  double create_s[3];       /* gs_dist_create's wall time: contexts, NCCL, peer access */
};

/** 1 when rank r runs in this process. */
static inline int gs_dist_is_local(const gs_dist_t *D, int r)
{
  return D->local < 0 || D->local == r;
}
/** A rank of this process (the first). */
static inline int gs_dist_first_local(const gs_dist_t *D) { return D->local < 0 ? 0 : D->local; }

/** Process mode: h[0..k) = the sum (max = 0) or maximum (max = 1) over the ranks of the host
 *  values h, k <= GS_DIST_RED_MAX, through the communicator (synchronous). */
gs_status_t gs_dist_proc_reduce(gs_dist_rank_t *R, double *h, int k, int max);

/** Test hook: nranks ranks without contexts or communicator (device -1), for the suites that
 *  check gs_dist_run, gs_dist_barrier, gs_dist_agree and gs_dist_fail on the host. */
gs_status_t gs_test_dist_threads(gs_dist_t **D, int nranks);
/** Test hook: on = 1 makes the peer transport's setup fail on its last rank (after the other
 *  ranks' buffers were made), for the suites that check auto's fall-back to NCCL; 0: off. */
void gs_test_dist_peer_setup_fail(int on);

/** Runs fn(R, user) on every rank, rank 0 on the calling thread, and joins them. Returns
 *  GS_SUCCESS when all succeeded, else the status of the lowest failing rank with its message
 *  prefixed by "rank r (GPU d): ", set on the calling thread. */
typedef gs_status_t (*gs_dist_rank_fn)(gs_dist_rank_t *R, void *user);
gs_status_t gs_dist_run(gs_dist_t *D, gs_dist_rank_fn fn, void *user);

/** Waits for every rank; nonzero when the barrier was broken (another rank failed). */
int gs_dist_barrier(gs_dist_rank_t *R);
/** Every rank votes its status; returns GS_SUCCESS when all voted it, else a failure (the
 *  lowest failing rank's status, with a message naming it on the ranks that did not fail). */
gs_status_t gs_dist_agree(gs_dist_rank_t *R, gs_status_t mine);
/** What a rank returns when it stops because another rank failed: `st` with "another rank
 *  failed (see its error)", marked so that gs_dist_run reports the rank that failed first. */
gs_status_t gs_dist_other_failed(gs_dist_rank_t *R, gs_status_t st);
/** A rank failed after communication started: breaks the barrier and aborts the
 *  communicators so that no rank waits forever. */
void gs_dist_fail(gs_dist_rank_t *R);

/** In place: d_buf[0..k) = the sum over ranks, asynchronous on R->ctx->stream (NCCL), or
 *  synchronous through the host (host transport). The same bits on every rank. */
gs_status_t gs_dist_allreduce(gs_dist_rank_t *R, double *d_buf, int k);

/* ---- the distributed matrix ------------------------------------------------------------- */

typedef struct gs_dist_part {
  gs_dist_rank_t *R;
  struct gs_dist_matrix *A;
  gs_idx_t row0, rows, nhalo, nsend;
  gs_off_t nnz_diag, nnz_off;
  gs_idx_t *send_off, *recv_off; /* host, nparts + 1 each */
  int neighbours;
  gs_matrix_t *Md, *Mo;          /* diagonal and off-diagonal blocks on the device */
  gs_spmv_t *Sd, *So;            /* So is NULL when nhalo == 0 */
  /* The off-diagonal block keeps only its rows that hold entries (PETSc's compressed rows of
   * MPIAIJ's B): a stencil's halo touches the boundary rows alone, and a product over all
   * local rows would read and write the whole of y for them. So computes d_offy (noff
   * entries), which gs_dist_scatter_add adds into y at d_off_rows. */
  gs_idx_t noff;
  gs_idx_t *d_off_rows;
  double *d_offy;
  gs_idx_t *d_send_idx;
  double *d_send, *d_halo;
  gs_operator_t *op;             /* the shell the solvers see */
  int capturable;
  double *d_x, *d_y;             /* gs_dist_spmv / bench vectors (rows each) */
  size_t bytes;
  /* bench: 0 product, 1 local only, 2 halo only, 3 both products without the exchange */
  int mode;
  /* bench timeline (timing events, else NULL): recorded where the exchange ended (comm
   * stream), and where the local product started and ended (main stream) inside a product */
  cudaEvent_t ev_tx, ev_tl, ev_ls;
  double split_s, prepare_s, warm_s; /* gs_dist_part_info_t's */
  /* The halo through peer memory (ranks that are threads of this process on peer-capable
   * GPUs, D->p2p): each sender writes its entries straight into the receivers' d_halo
   * (cudaMalloc'd: reachable from the peers) and raises its ready flag there; a receiver waits
   * for its senders' flags before the off-diagonal product and then acknowledges, and a sender
   * writes product s only once its receivers acknowledged product s - 1. Flags count products
   * (d_xseq, on the device, so that a CUDA Graph replays them right). No host call sits
   * between the exchange and the local product, as ncclGroupEnd did. */
  int p2p;
  unsigned long long send_mask, recv_mask; /* bit q: sends to q, receives from q */
  unsigned long long *d_flags;   /* 2n: ready[q] (q's entries for product seq arrived) and
                                    ack[q] (q has read my entries of product seq) */
  unsigned long long *d_xseq;    /* products exchanged so far */
  double **d_dst;                /* n: where my entries for q go (q's d_halo + its recv_off[me]) */
  unsigned long long **d_pflags; /* n: every rank's d_flags, as this GPU addresses them */
  gs_idx_t *d_send_off;          /* send_off on the device */
} gs_dist_part_t;

struct gs_dist_matrix {
  gs_dist_t *D;
  gs_idx_t n;
  gs_idx_t *first;       /* nparts + 1 */
  gs_idx_t *perm;        /* reorder: new row k is the caller's row perm[k]; NULL without */
  int perm_on_device;    /* 1 when a GPU computed perm (RCM, gs_reorder_rcm) */
  gs_idx_t bandwidth;
  gs_method_t auto_method; /* what GS_SOLVER_AUTO picks, from the whole matrix's features */
  gs_dist_part_t *p;     /* one per rank */
};

/** y = alpha A_r x + beta y on rank r's part (the shell's apply): exchange, local product,
 *  halo product. */
gs_status_t gs_dist_part_apply(gs_dist_part_t *P, double alpha, const double *d_x, double beta,
                               double *d_y);

/** Copies rank P's entries of a host vector v in the caller's numbering to its device vector
 *  d (to_device = 1) or back (0), synchronously on the rank's stream. Without a reordering the
 *  entries are one run of v, copied straight; with one they go through a host buffer in the
 *  part's order. Ranks touch disjoint entries of v. */
gs_status_t gs_dist_part_copy(const gs_dist_part_t *P, int to_device, double *d, double *v);

/** d_out[i] = d_x[idx[i]], i < n (dist_kernels.cu). */
gs_status_t gs_dist_gather(cudaStream_t stream, gs_idx_t n, const gs_idx_t *idx,
                           const double *d_x, double *d_out);
/** d_y[idx[i]] += d_src[i], i < n, idx without repeats (dist_kernels.cu). */
gs_status_t gs_dist_scatter_add(cudaStream_t stream, gs_idx_t n, const gs_idx_t *idx,
                                const double *d_src, double *d_y);
/** d[0] = sqrt(d[0]) (dist_kernels.cu). */
gs_status_t gs_dist_sqrt(cudaStream_t stream, double *d);
/** The peer all-reduce of d_buf[0..k), k <= GS_DIST_P2P_MAX, by rank me of n (dist_kernels.cu). */
gs_status_t gs_dist_p2p_launch(cudaStream_t stream, double *d_buf, int k, int me, int n,
                               gs_dist_slot_t *const *d_peers, unsigned long long *d_seq,
                               const int *abort);
/** 1 when gs_dist_allreduce of k values sums in rank order (the same bits as a sum in rank
 *  order on the host): through peer memory or the host transport; not NCCL's. */
static inline int gs_dist_allreduce_ordered(const gs_dist_t *D, int k)
{
  return D->transport == GS_DIST_HOST || D->transport == GS_DIST_PEER ||
         (D->p2p && k <= GS_DIST_P2P_NCCL_MAX);
}
/** The peer halo exchange of P, rank me of n (dist_kernels.cu): on the sender's stream, the push
 *  of x's listed entries into the receivers' halos after their acknowledgement of the previous
 *  product, then its ready flags; on the receiver's stream, the wait for its senders' flags
 *  (before the off-diagonal product) and the acknowledgement with the count's step (after it).
 *  Every wait gives up when *abort is raised. */
gs_status_t gs_dist_halo_push(cudaStream_t stream, const gs_dist_part_t *P, const double *d_x,
                              int me, int n, const int *abort);
gs_status_t gs_dist_halo_wait(cudaStream_t stream, const gs_dist_part_t *P, int me, int n,
                              const int *abort);
gs_status_t gs_dist_halo_ack(cudaStream_t stream, const gs_dist_part_t *P, int me, int n);

#ifdef __cplusplus
}
#endif
#endif
