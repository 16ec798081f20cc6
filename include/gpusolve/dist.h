/* gpusolve/dist.h: one system on several GPUs of a node: a row-partitioned matrix whose ranks
 * exchange halos and all-reduce their dot products through NCCL, and the Krylov solvers run
 * across them (PETSc's MPIAIJ + KSP, hypre's ParCSR, Ginkgo's distributed::Matrix).
 *
 * Model: one rank per GPU, all ranks in this process, each driven by its own host thread (the
 * library starts and joins them inside each call; the caller sees ordinary blocking calls); or
 * one rank per process (gs_dist_create_rank, below: `mpirun`).
 * Rank r owns the contiguous rows [row0_r, row0_r + rows_r), balanced by nonzeros, and the same
 * entries of every vector. Its rows are stored as a diagonal block (the columns it owns) and an
 * off-diagonal block (its halo columns, renumbered), each prepared with any SpMV backend of the
 * registry (the off-diagonal block compressed to its rows that hold entries). A product posts the halo exchange (grouped NCCL sends and receives of exactly the
 * entries each neighbour needs), computes the diagonal block's product while it is in flight,
 * then adds the off-diagonal block's.
 *
 * Transports: GS_DIST_PEER (ranks of this process on distinct GPUs that all reach each
 * other's memory: halos pushed and all-reduces summed by kernels through peer memory, no
 * communicator to create), GS_DIST_NCCL (needs a build with NCCL and distinct devices; also
 * the only transport of a job of processes) and GS_DIST_HOST, which stages reductions through
 * host memory and copies halos peer to peer. The host transport is slow and exists so that the
 * distributed code runs, and is tested, with several ranks on one GPU (NCCL refuses two ranks
 * on one device).
 *
 * Errors: a failure on any rank (out of memory on its GPU, a refused format) stops every rank
 * before the iterations start; every call returns the same status, with a message naming the
 * rank and its GPU. A failure after the ranks started communicating aborts the communicators
 * (ncclCommAbort; the peer transport's waits give up) so that no rank waits forever; the
 * gs_dist_t is then unusable (GS_ERR_CUDA from every later call): destroy it and create
 * another. */
#ifndef GPUSOLVE_DIST_H
#define GPUSOLVE_DIST_H

#include "gpusolve/context.h"
#include "gpusolve/matrix.h"
#include "gpusolve/precond.h"
#include "gpusolve/solver.h"

#ifdef __cplusplus
extern "C" {
#endif
/* The library is built with hidden visibility: what this header declares is its public API. */
#if defined(__GNUC__) && !defined(GS_NO_VISIBILITY_PRAGMAS)
#pragma GCC visibility push(default)
#endif

typedef enum gs_dist_transport {
  GS_DIST_AUTO = 0, /* peer where the GPUs are distinct and every pair has peer access, one
                       rank included (NCCL if its setup fails), else NCCL when this build has
                       it and the devices are distinct, else host */
  GS_DIST_NCCL = 1,
  GS_DIST_HOST = 2,
  GS_DIST_PEER = 3  /* ranks that are threads of this process on distinct GPUs, every pair with
                       peer access (NVLink or PCIe): halos and all-reduces through peer memory
                       by our kernels, no NCCL communicator to create (auto's choice there) */
} gs_dist_transport_t;

/** 1 when this build links NCCL. */
int gs_dist_have_nccl(void);
/** "auto", "nccl", "host", "peer"; "" for another value. */
const char *gs_dist_transport_string(gs_dist_transport_t t);
/** The inverse of gs_dist_transport_string; -1 when unknown. */
int gs_dist_transport_find(const char *name);

typedef struct gs_dist gs_dist_t;

/** Creates `nranks` ranks (1 <= nranks <= GS_DIST_MAX_RANKS), rank r on CUDA device
 *  devices[r], each with its own context, and their communicator. A device may repeat only with
 *  the host transport. GS_ERR_INVALID_ARG for bad arguments, GS_ERR_UNSUPPORTED for NCCL asked
 *  of a build without it or with a repeated device, or peer asked of a repeated device or of a
 *  pair of GPUs without peer access (or with GS_DIST_P2P=0 in the environment), GS_ERR_CUDA
 *  for a device that does not exist or a communicator NCCL could not make. */
gs_status_t gs_dist_create(gs_dist_t **D, int nranks, const int *devices, gs_dist_transport_t t);
#define GS_DIST_MAX_RANKS 64
/* ---- one process per GPU ---------------------------------------------------------------------
 * A job may also span several processes (on one node or several), one rank each, as under
 * `mpirun`: every process calls the same functions in the same order with the same arguments
 * (SPMD), and the library needs no MPI: one process makes a gs_dist_id_t, the caller sends its
 * bytes to the others by any means (MPI_Bcast, a file), and each process creates its rank with
 * gs_dist_create_rank (NCCL's ncclCommInitRank underneath). Then:
 *  - gs_dist_matrix_create takes the whole matrix on every process (the same on all: read it
 *    once and broadcast it); each process keeps and prepares its own rows only.
 *  - gs_dist_spmv and gs_dist_solve take whole host vectors and write only this process's
 *    entries of y or x; the others are left as they were (zero them and sum over the processes,
 *    e.g. MPI_Allreduce, to assemble the whole vector).
 *  - gs_dist_matrix_part and gs_dist_context answer for this process's rank only.
 *  - A failure before the ranks start communicating (a refused format, a GPU out of memory
 *    while preparing) is agreed: every process returns the same status and message. A failure
 *    during the iterations aborts this process's communicator, and the others may be left
 *    waiting in a collective: gs_dist_usable then returns 0 and the caller must end the job
 *    (MPI_Abort), as an MPI program does after any fatal error. */

/** The bytes that tie the processes of one job together (an ncclUniqueId). */
typedef struct gs_dist_id {
  unsigned char bytes[128];
} gs_dist_id_t;
/** Makes a fresh id (on one process of the job). GS_ERR_UNSUPPORTED in a build without NCCL,
 *  GS_ERR_CUDA when NCCL cannot make one. */
gs_status_t gs_dist_id_create(gs_dist_id_t *id);
/** Rank `rank` of a job of `nranks` processes (1 <= nranks <= GS_DIST_MAX_RANKS) on CUDA device
 *  `device`, all processes using the same id. Collective: every process of the job calls it.
 *  NCCL transport only. Errors as gs_dist_create. */
gs_status_t gs_dist_create_rank(gs_dist_t **D, int rank, int nranks, int device,
                                const gs_dist_id_t *id);
/** This process's rank in a job of processes; -1 when every rank lives in this process. */
int gs_dist_process_rank(const gs_dist_t *D);
/** 0 when the communicator was aborted after a failure during the iterations (every later call
 *  fails; in a job of processes the others may be waiting: end the job); 1 otherwise. */
int gs_dist_usable(const gs_dist_t *D);
/** 1 when the all-reduces (the Krylov methods' dot products) go through peer memory: the peer
 *  transport, or NCCL's with ranks that are threads of this process, every pair of GPUs with
 *  peer access, and GS_DIST_P2P not set to 0 in the environment at gs_dist_create. */
int gs_dist_peer_allreduce(const gs_dist_t *D);

/** Wall seconds gs_dist_create spent making the GPUs' contexts, NCCL's communicators and the
 *  peer access of the all-reduces (each 0 where not made, e.g. in a job of processes).
 *  GS_ERR_INVALID_ARG for a NULL argument. */
gs_status_t gs_dist_create_times(const gs_dist_t *D, double *contexts_s, double *nccl_s,
                                 double *peer_s);

/** NULL-safe; sets *D = NULL. Destroy the matrices made on D first. */
void gs_dist_destroy(gs_dist_t **D);
int gs_dist_ranks(const gs_dist_t *D);
/** The transport chosen (never AUTO). */
gs_dist_transport_t gs_dist_transport(const gs_dist_t *D);
/** Rank r's context (its device, stream and allocator); NULL when out of range or when rank r
 *  lives in another process. */
gs_context_t *gs_dist_context(const gs_dist_t *D, int r);

typedef struct gs_dist_matrix gs_dist_matrix_t;

/** Options of a distributed matrix (gs_dist_matrix_opts_default gives these defaults). */
typedef struct gs_dist_matrix_opts {
  const char *format;     /* SpMV backend of the diagonal blocks; "auto" (the default): each
                             rank selects for its own block (gs_spmv_create_auto) */
  const char *options;    /* its options string ("") */
  const char *off_format; /* backend of the off-diagonal blocks; NULL: the same as `format`
                             (csr-vector when that is "auto"),
                             falling back to "coo" where that backend refuses the block (the
                             block is mostly empty rows, which padded formats refuse for fill) */
  int reorder;            /* GS_REORDER_* (gpusolve/solver.h): RCM (1) reverse Cuthill-McKee
                             first (smaller halos on a badly numbered mesh), DEGREE (2) rows by
                             decreasing degree, AUTO (3) RCM when it at least halves the
                             bandwidth; vectors stay in the caller's numbering */
  int no_cache;           /* auto: measure each block's candidates even when the selection
                             cache knows the block, and write nothing (default 0: cached) */
} gs_dist_matrix_opts_t;
void gs_dist_matrix_opts_default(gs_dist_matrix_opts_t *o);

/** Partitions the square host matrix A over D's ranks and prepares every part (A is not kept:
 *  it may be freed after the call). GS_ERR_DIMENSION for a non-square A or fewer rows than
 *  ranks; the backend's own refusals otherwise (with the rank in the message). */
gs_status_t gs_dist_matrix_create(gs_dist_matrix_t **A, gs_dist_t *D, const gs_csr_t *csr,
                                  const gs_dist_matrix_opts_t *opts);
/** NULL-safe; sets *A = NULL. */
void gs_dist_matrix_destroy(gs_dist_matrix_t **A);
gs_idx_t gs_dist_matrix_rows(const gs_dist_matrix_t *A);

/** What rank r holds. */
typedef struct gs_dist_part_info {
  gs_idx_t row0, rows;     /* its rows (in the reordered numbering when reorder was asked) */
  gs_off_t nnz_diag, nnz_off;
  gs_idx_t nhalo;          /* entries received per product */
  gs_idx_t off_rows;       /* rows with off-diagonal entries (the block keeps only these) */
  gs_idx_t nsend;          /* entries sent per product */
  int neighbours;          /* ranks it exchanges with */
  const char *diag_format, *off_format; /* backends that serve its blocks ("" for none) */
  size_t device_bytes;     /* device memory of its blocks and buffers */
  double diag_select_s;    /* wall time of the diagonal block's selection (format "auto",
                              its chosen prepare included); 0 for a named format */
  /* wall times of gs_dist_matrix_create on this rank: its block cut from the host matrix; its
   * blocks made on the device (uploads, diag_select_s included, the off-diagonal block, the
   * exchange lists); the first product and all-reduce (NCCL connects peers on first use) */
  double split_s, prepare_s, warm_s;
  int peer_exchange;       /* 1: its halo comes through peer memory (threads of one process on
                              peer-capable GPUs, unless GS_DIST_P2P=0), 0: through NCCL or the
                              host */
} gs_dist_part_info_t;
gs_status_t gs_dist_matrix_part(const gs_dist_matrix_t *A, int r, gs_dist_part_info_t *out);
/** Bandwidth (max |i - j|) of the matrix as the ranks hold it (after any reordering). */
gs_idx_t gs_dist_matrix_bandwidth(const gs_dist_matrix_t *A);

/** y = alpha A x + beta y with host vectors of rows entries, through the distributed product
 *  (scatter, one product on every rank, gather): for checks and small programs. With beta == 0
 *  y is not read. */
gs_status_t gs_dist_spmv(gs_dist_matrix_t *A, double alpha, const double *x, double beta,
                         double *y);

/** Timing of the distributed product, seconds per product (medians over reps, CUDA events
 *  on every rank, the slowest rank's): the whole product, the local (diagonal block) product
 *  alone, the halo exchange alone, and both products (local and off-diagonal) without the
 *  exchange. overlap = (products + halo - product) / min(products, halo), clamped to [0, 1]:
 *  1 when the exchange is hidden entirely behind the local product, 0 when they ran one after
 *  the other (0 also when a product has no exchange). */
typedef struct gs_dist_spmv_timing {
  double product_s, local_s, halo_s, overlap;
  /* a product's timeline (NCCL with an exchange, else 0): when, after the product's start, the
   * exchange ended and the local product started and ended (medians of products run one at a
   * time, the slowest rank's). An exchange that ends after the local product waited for it. */
  double exchange_end_s, local_start_s, local_end_s;
  double products_s; /* the local and off-diagonal products without the exchange */
  long halo_bytes; /* bytes received per product, all ranks together */
  int reps;
} gs_dist_spmv_timing_t;
gs_status_t gs_dist_spmv_bench(gs_dist_matrix_t *A, int reps, gs_dist_spmv_timing_t *t);

/** Solves A x = b across the ranks with host vectors (b and x have rows entries; x is read as
 *  the initial guess when opts->x0_given). Methods: cg, pipecg, bicgstab, gmres and auto (the
 *  others need A^T and are refused). `precond`: "none", "jacobi", or "ilu0" / "ic0" applied to
 *  each rank's diagonal block (block Jacobi: with more than one rank the iteration counts
 *  differ from one GPU's). The stopping tests and reasons are the single-GPU solver's; the
 *  ranks decide together from all-reduced scalars. opts->check_every 0 (automatic) becomes 8
 *  (the ranks must launch the same iterations); a monitor is refused (GS_ERR_UNSUPPORTED: its
 *  verdict on one rank could not stop the others). stats: as gs_solve's (rank 0's counts, the
 *  slowest rank's total, SpMV and set-up times; seconds_setup includes each rank's solver and
 *  preconditioner set-up and its copy of b, and x0 when given). */
gs_status_t gs_dist_solve(gs_dist_matrix_t *A, const gs_solve_opts_t *opts, const char *precond,
                          const double *b, double *x, gs_solve_stats_t *stats);

#if defined(__GNUC__) && !defined(GS_NO_VISIBILITY_PRAGMAS)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif
#endif
