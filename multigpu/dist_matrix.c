/* multigpu/dist_matrix.c: the row-partitioned matrix of gpusolve/dist.h: each rank's diagonal and
 * off-diagonal blocks prepared with registry backends, and the product that overlaps the halo
 * exchange with the diagonal block's product (PETSc's MatMult_MPIAIJ: VecScatterBegin, the
 * local product, VecScatterEnd, the off-diagonal product added). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/parallel.h"
#include "multigpu/dist_impl.h"
#include "solvers/reorder_impl.h"
#include "gpusolve/select.h"
#include "gpusolve/timer.h"
#include "spmv/common_kernels.h"
#include "spmv/spmv_impl.h"

void gs_dist_matrix_opts_default(gs_dist_matrix_opts_t *o)
{
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->format = "auto";
  o->options = "";
}

/* ---- the product ------------------------------------------------------------------------ */

static int counts(const gs_idx_t *off, int q) { return (int)(off[q + 1] - off[q]); }

/* The NCCL exchange on the rank's comm stream: pack the entries the neighbours need, grouped
 * sends and receives; ev_recvd marks its end. The caller has recorded ev_packed on the main
 * stream where x is ready (and the previous product stopped reading the receive buffer). */
static gs_status_t exchange_post(gs_dist_part_t *P, const double *d_x)
{
#ifdef GS_HAVE_NCCL
  gs_dist_rank_t *R = P->R;
  const int n = R->D->n;
  GS_CHECK(GS_CUDA(cudaStreamWaitEvent(R->comm_stream, R->ev_packed, 0)));
  if (P->nsend > 0)
    GS_CHECK(gs_dist_gather(R->comm_stream, P->nsend, P->d_send_idx, d_x, P->d_send));
  ncclResult_t e = ncclGroupStart();
  for (int q = 0; q < n && e == ncclSuccess; ++q) {
    const int sc = counts(P->send_off, q), rc = counts(P->recv_off, q);
    if (sc > 0)
      e = ncclSend(P->d_send + P->send_off[q], (size_t)sc, ncclDouble, q, R->comm,
                   R->comm_stream);
    if (rc > 0 && e == ncclSuccess)
      e = ncclRecv(P->d_halo + P->recv_off[q], (size_t)rc, ncclDouble, q, R->comm,
                   R->comm_stream);
  }
  const ncclResult_t e2 = ncclGroupEnd();
  if (e == ncclSuccess) e = e2;
  if (e != ncclSuccess)
    return GS_ERROR(GS_ERR_CUDA, "NCCL halo exchange failed on rank %d: %s", R->rank,
                    ncclGetErrorString(e));
  return GS_CUDA(cudaEventRecord(R->ev_recvd, R->comm_stream));
#else
  (void)P, (void)d_x;
  return GS_ERROR(GS_ERR_INTERNAL, "NCCL exchange in a build without NCCL");
#endif
}

/* The host transport's exchange: synchronous, every rank takes part (even with nothing to
 * send) because it meets the others at the barriers. */
static gs_status_t exchange_host(gs_dist_part_t *P)
{
  gs_dist_rank_t *R = P->R;
  gs_dist_matrix_t *A = P->A;
  const int n = R->D->n;
  GS_CHECK(GS_CUDA(cudaStreamSynchronize(R->ctx->stream))); /* packed */
  if (gs_dist_barrier(R) != 0) return gs_dist_other_failed(R, GS_ERR_CUDA);
  for (int q = 0; q < n; ++q) {
    const int rc = counts(P->recv_off, q);
    if (rc <= 0) continue;
    const gs_dist_part_t *Q = &A->p[q];
    GS_CHECK(GS_CUDA(cudaMemcpyPeerAsync(P->d_halo + P->recv_off[q], R->device,
                                         Q->d_send + Q->send_off[R->rank], Q->R->device,
                                         (size_t)rc * sizeof(double), R->ctx->stream)));
  }
  GS_CHECK(GS_CUDA(cudaStreamSynchronize(R->ctx->stream)));
  /* nobody packs again before every rank has copied what it needs */
  if (gs_dist_barrier(R) != 0) return gs_dist_other_failed(R, GS_ERR_CUDA);
  return GS_SUCCESS;
}

gs_status_t gs_dist_part_apply(gs_dist_part_t *P, double alpha, const double *d_x, double beta,
                               double *d_y)
{
  gs_dist_rank_t *R = P->R;
  cudaStream_t s = R->ctx->stream;
  /* NCCL's or peer memory's exchange runs beside the local product; the host's is synchronous */
  const int async = R->D->transport != GS_DIST_HOST;
  /* mode 1 (bench): the local product alone; 2: the exchange alone; 3: both products, no
   * exchange */
  const int exch = P->mode != 1 && P->mode != 3 && R->D->n > 1 &&
                   (async ? P->nsend + P->nhalo > 0 : 1);
  /* fork: the exchange is posted first on the high-priority comm stream, then the local
   * product fills the other SMs beside it; in a CUDA Graph both are branches. Through peer
   * memory the exchange is two kernels (no host call before the local product's launch);
   * through NCCL the host spends ~25 us in ncclGroupEnd first. The variants tried and their
   * figures: docs/multigpu.md, "The product" and "Four GPUs". */
  if (exch && async) {
    GS_CHECK(GS_CUDA(cudaEventRecord(R->ev_packed, s)));
    if (P->p2p) {
      GS_CHECK(GS_CUDA(cudaStreamWaitEvent(R->comm_stream, R->ev_packed, 0)));
      GS_CHECK(gs_dist_halo_push(R->comm_stream, P, d_x, R->rank, R->D->n, R->D->d_abort));
      GS_CHECK(GS_CUDA(cudaEventRecord(R->ev_recvd, R->comm_stream)));
    } else {
      GS_CHECK(exchange_post(P, d_x));
    }
    if (P->ev_tx) GS_CHECK(GS_CUDA(cudaEventRecord(P->ev_tx, R->comm_stream)));
    if (P->ev_ls) GS_CHECK(GS_CUDA(cudaEventRecord(P->ev_ls, s)));
    if (P->mode != 2) GS_CHECK(gs_spmv_apply(P->Sd, GS_OP_N, alpha, d_x, beta, d_y));
    if (P->ev_tl) GS_CHECK(GS_CUDA(cudaEventRecord(P->ev_tl, s)));
    GS_CHECK(GS_CUDA(cudaStreamWaitEvent(s, R->ev_recvd, 0))); /* join */
    if (P->p2p) GS_CHECK(gs_dist_halo_wait(s, P, R->rank, R->D->n, R->D->d_abort));
  } else {
    if (exch && P->nsend > 0)
      GS_CHECK(gs_dist_gather(s, P->nsend, P->d_send_idx, d_x, P->d_send));
    if (exch) GS_CHECK(exchange_host(P));
    if (P->mode != 2) GS_CHECK(gs_spmv_apply(P->Sd, GS_OP_N, alpha, d_x, beta, d_y));
  }
  if ((P->mode == 0 || P->mode == 3) && P->So) {
    GS_CHECK(gs_spmv_apply(P->So, GS_OP_N, alpha, P->d_halo, 0.0, P->d_offy));
    GS_CHECK(gs_dist_scatter_add(s, P->noff, P->d_off_rows, P->d_offy, d_y));
  }
  if (exch && P->p2p) GS_CHECK(gs_dist_halo_ack(s, P, R->rank, R->D->n)); /* halo read */
  return GS_SUCCESS;
}

static gs_status_t shell_apply(void *user, gs_op_t op, gs_val_t alpha, const gs_val_t *d_x,
                               gs_val_t beta, gs_val_t *d_y)
{
  if (op != GS_OP_N)
    return GS_ERROR(GS_ERR_UNSUPPORTED, "the distributed matrix has no transpose product");
  return gs_dist_part_apply((gs_dist_part_t *)user, alpha, d_x, beta, d_y);
}

/* ---- building ----------------------------------------------------------------------------- */

typedef struct {
  gs_dist_matrix_t *A;
  const gs_csr_t *B;         /* the matrix in the ranks' numbering */
  gs_dist_block_t *blocks;
  const gs_dist_matrix_opts_t *o;
  gs_status_t lists;         /* rank 0's gs_dist_send_lists */
} build_t;

static int is_auto(const char *format) { return !strcmp(format, "auto"); }

/* The diagonal block: the backend named, or "auto": each rank selects for its own block on its
 * own GPU (gs_spmv_create_auto, measuring the candidates for the default number of products),
 * so ranks whose blocks differ may choose differently; gs_dist_matrix_part names the choice. */
static gs_status_t prepare_diag(gs_dist_part_t *P, const gs_dist_matrix_opts_t *o)
{
  gs_context_t *ctx = P->R->ctx;
  if (!is_auto(o->format)) return gs_spmv_create(&P->Sd, ctx, P->Md, o->format, o->options);
  gs_select_opts_t so;
  gs_select_opts_default(&so);
  so.use_cache = !o->no_cache;
  return gs_spmv_create_auto(&P->Sd, ctx, P->Md, o->options, &so);
}

/* The off-diagonal block: off_format, else the diagonal block's backend; under "auto" it keeps
 * csr-vector (the compressed halo rows are few and short: a selection there would cost more than
 * it could win), and coo takes it where the named one refuses its mostly empty rows. */
static gs_status_t prepare_off(gs_dist_part_t *P, const gs_dist_matrix_opts_t *o)
{
  gs_context_t *ctx = P->R->ctx;
  const char *fmt = o->off_format ? o->off_format
                                  : is_auto(o->format) ? "csr-vector" : o->format;
  const char *opt = o->off_format ? "" : o->options;
  gs_status_t st = gs_spmv_create(&P->So, ctx, P->Mo, fmt, opt);
  if (st != GS_SUCCESS && !o->off_format && strcmp(fmt, "coo") != 0 &&
      (st == GS_ERR_FORMAT_FILL || st == GS_ERR_UNSUPPORTED))
    st = gs_spmv_create(&P->So, ctx, P->Mo, "coo", ""); /* mostly empty rows: coo takes them */
  return st;
}

/* The rows of the off-diagonal block that hold entries, as a CSR of their own (noff x nhalo)
 * and the list of their local row numbers. */
static gs_status_t compress_off(const gs_csr_t *O, gs_csr_t **Oc, gs_idx_t **rows, gs_idx_t *noff)
{
  gs_idx_t k = 0;
  for (gs_idx_t i = 0; i < O->m; ++i) k += O->row_ptr[i + 1] > O->row_ptr[i];
  *noff = k;
  *rows = malloc(((size_t)k + 1) * sizeof **rows);
  if (!*rows) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory");
  gs_status_t st = gs_csr_create(Oc, k, O->n, O->nnz);
  if (st != GS_SUCCESS) {
    free(*rows);
    *rows = NULL;
    return st;
  }
  gs_csr_t *C = *Oc;
  k = 0;
  for (gs_idx_t i = 0; i < O->m; ++i) {
    if (O->row_ptr[i + 1] == O->row_ptr[i]) continue;
    (*rows)[k] = i;
    C->row_ptr[k + 1] = O->row_ptr[i + 1] - O->row_ptr[i] + C->row_ptr[k];
    ++k;
  }
  const gs_off_t nnz = O->nnz;
  if (nnz > 0) {
    memcpy(C->col, O->col + O->row_ptr[0], (size_t)nnz * sizeof *C->col);
    memcpy(C->val, O->val + O->row_ptr[0], (size_t)nnz * sizeof *C->val);
  }
  C->nnz = nnz;
  return GS_SUCCESS;
}

/* The peer exchange's flags, count, send offsets and peer tables of P (p2p_link fills the
 * tables once every rank has its halo). */
static gs_status_t p2p_part_alloc(gs_dist_part_t *P, int n)
{
  gs_context_t *ctx = P->R->ctx;
  const size_t fb = 2 * (size_t)n * sizeof *P->d_flags;
  for (int q = 0; q < n; ++q) {
    if (counts(P->send_off, q) > 0) P->send_mask |= 1ull << q;
    if (counts(P->recv_off, q) > 0) P->recv_mask |= 1ull << q;
  }
  /* zeroed on the context's stream and waited for: cudaMemset's legacy stream does not order
   * the non-blocking streams that push, wait and acknowledge */
  GS_CHECK(GS_CUDA(cudaMalloc((void **)&P->d_flags, fb))); /* the peers write into it */
  GS_CHECK(GS_CUDA(cudaMemsetAsync(P->d_flags, 0, fb, ctx->stream)));
  GS_CHECK(gs_dmalloc(ctx, (void **)&P->d_xseq, sizeof *P->d_xseq, "the exchange count"));
  GS_CHECK(GS_CUDA(cudaMemsetAsync(P->d_xseq, 0, sizeof *P->d_xseq, ctx->stream)));
  GS_CHECK(gs_context_sync(ctx));
  GS_CHECK(gs_dmalloc(ctx, (void **)&P->d_send_off, ((size_t)n + 1) * sizeof *P->d_send_off,
                      "the send offsets"));
  GS_CHECK(gs_copy_to_device(ctx, P->d_send_off, P->send_off,
                             ((size_t)n + 1) * sizeof *P->d_send_off));
  GS_CHECK(gs_dmalloc(ctx, (void **)&P->d_dst, (size_t)n * sizeof *P->d_dst, "peer halos"));
  return gs_dmalloc(ctx, (void **)&P->d_pflags, (size_t)n * sizeof *P->d_pflags, "peer flags");
}

/* Rank me's tables: where its entries for q go in q's halo, and every rank's flags (with
 * unified addressing, one address on every GPU; peer access is on, D->p2p). */
static gs_status_t p2p_link(gs_dist_part_t *P, int n)
{
  const gs_dist_part_t *all = P->A->p;
  const int me = P->R->rank;
  double *dst[GS_DIST_MAX_RANKS];
  unsigned long long *fl[GS_DIST_MAX_RANKS];
  for (int q = 0; q < n; ++q) {
    dst[q] = counts(P->send_off, q) > 0 ? all[q].d_halo + all[q].recv_off[me] : NULL;
    fl[q] = all[q].d_flags;
  }
  GS_CHECK(gs_copy_to_device(P->R->ctx, P->d_dst, dst, (size_t)n * sizeof *dst));
  return gs_copy_to_device(P->R->ctx, P->d_pflags, fl, (size_t)n * sizeof *fl);
}

static gs_status_t build_rank(gs_dist_rank_t *R, void *user)
{
  build_t *b = (build_t *)user;
  gs_dist_matrix_t *A = b->A;
  gs_dist_part_t *P = &A->p[R->rank];
  gs_dist_block_t *blk = &b->blocks[R->rank];
  gs_context_t *ctx = R->ctx;
  const int n = R->D->n;
  double t = gs_wall_seconds();
  gs_status_t st = gs_dist_split(b->B, A->first, n, R->rank, blk);
  P->split_s = gs_wall_seconds() - t;
  if (R->D->local >= 0) { /* a process holds its own block only: its lists from the matrix */
    if (st == GS_SUCCESS) st = gs_dist_send_list_part(b->B, A->first, n, blk);
    GS_CHECK(gs_dist_agree(R, st));
  } else {
    GS_CHECK(gs_dist_agree(R, st));
    if (R->rank == 0) b->lists = gs_dist_send_lists(b->blocks, n);
    GS_CHECK(gs_dist_agree(R, R->rank == 0 ? b->lists : GS_SUCCESS));
  }

  P->row0 = blk->row0;
  P->rows = blk->rows;
  P->nhalo = blk->nhalo;
  P->nsend = blk->nsend;
  P->nnz_diag = blk->diag->nnz;
  P->nnz_off = blk->off->nnz;
  P->send_off = malloc((size_t)(n + 1) * sizeof *P->send_off);
  P->recv_off = malloc((size_t)(n + 1) * sizeof *P->recv_off);
  if (!P->send_off || !P->recv_off) st = GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory");
  if (st == GS_SUCCESS) {
    memcpy(P->send_off, blk->send_off, (size_t)(n + 1) * sizeof *P->send_off);
    memcpy(P->recv_off, blk->recv_off, (size_t)(n + 1) * sizeof *P->recv_off);
    for (int q = 0; q < n; ++q) P->neighbours += counts(P->send_off, q) + counts(P->recv_off, q) > 0;
  }
  t = gs_wall_seconds();
  /* the blocks were cut for these matrices: kept as their host copies, not copied */
  if (st == GS_SUCCESS) st = gs_matrix_create_take(&P->Md, ctx, &blk->diag);
  if (st == GS_SUCCESS) st = prepare_diag(P, b->o);
  gs_csr_t *Oc = NULL;
  gs_idx_t *off_rows = NULL;
  if (st == GS_SUCCESS && P->nhalo > 0) st = compress_off(blk->off, &Oc, &off_rows, &P->noff);
  if (st == GS_SUCCESS && P->nhalo > 0) st = gs_matrix_create_take(&P->Mo, ctx, &Oc);
  gs_csr_destroy(&Oc);
  if (st == GS_SUCCESS)
    st = gs_dmalloc(ctx, (void **)&P->d_off_rows, (size_t)P->noff * sizeof *P->d_off_rows,
                    "the off-diagonal block's rows");
  if (st == GS_SUCCESS)
    st = gs_dmalloc(ctx, (void **)&P->d_offy, (size_t)P->noff * sizeof *P->d_offy,
                    "the off-diagonal block's product");
  if (st == GS_SUCCESS && P->noff > 0)
    st = gs_copy_to_device(ctx, P->d_off_rows, off_rows, (size_t)P->noff * sizeof *off_rows);
  free(off_rows);
  if (st == GS_SUCCESS && P->nhalo > 0) st = prepare_off(P, b->o);
  if (st == GS_SUCCESS)
    st = gs_dmalloc(ctx, (void **)&P->d_send_idx, (size_t)P->nsend * sizeof *P->d_send_idx,
                    "the halo send list");
  if (st == GS_SUCCESS)
    st = gs_dmalloc(ctx, (void **)&P->d_send, (size_t)P->nsend * sizeof *P->d_send,
                    "the halo send buffer");
  P->p2p = R->D->p2p && R->D->local < 0 && R->D->transport != GS_DIST_HOST;
  if (st == GS_SUCCESS && P->p2p) /* cudaMalloc: the peers write into it */
    st = GS_CUDA(cudaMalloc((void **)&P->d_halo, ((size_t)P->nhalo + 1) * sizeof *P->d_halo));
  else if (st == GS_SUCCESS)
    st = gs_dmalloc(ctx, (void **)&P->d_halo, (size_t)P->nhalo * sizeof *P->d_halo,
                    "the halo receive buffer");
  if (st == GS_SUCCESS && P->p2p) st = p2p_part_alloc(P, n);
  if (st == GS_SUCCESS && P->nsend > 0)
    st = gs_copy_to_device(ctx, P->d_send_idx, blk->send_idx,
                           (size_t)P->nsend * sizeof *P->d_send_idx);
  if (st == GS_SUCCESS) {
    const unsigned cd = gs_spmv_caps(P->Sd), co = P->So ? gs_spmv_caps(P->So) : ~0u;
    P->capturable = R->D->transport != GS_DIST_HOST && (cd & GS_SPMV_CAP_CAPTURABLE) &&
                    (co & GS_SPMV_CAP_CAPTURABLE);
    st = gs_operator_create_shell(&P->op, ctx, P->rows, P->rows,
                                  P->capturable ? GS_SPMV_CAP_CAPTURABLE : 0u, shell_apply, P);
  }
  if (st == GS_SUCCESS) {
    gs_spmv_mem_t md, mo;
    memset(&mo, 0, sizeof mo);
    st = gs_spmv_memory(P->Sd, &md);
    if (st == GS_SUCCESS && P->So) st = gs_spmv_memory(P->So, &mo);
    P->bytes = md.device_bytes + mo.device_bytes +
               (size_t)P->nsend * (sizeof(gs_idx_t) + sizeof(double)) +
               (size_t)P->nhalo * sizeof(double) +
               (size_t)P->noff * (sizeof(gs_idx_t) + sizeof(double));
  }
  /* the host blocks are not needed once on the device */
  gs_dist_block_free(blk);
  if (st == GS_SUCCESS) st = gs_context_sync(ctx);
  GS_CHECK(gs_dist_agree(R, st)); /* every rank's halo and flags allocated */
  if (P->p2p) st = p2p_link(P, n);
  P->prepare_s = gs_wall_seconds() - t;
  return gs_dist_agree(R, st);
}

static gs_status_t part_vectors(gs_dist_part_t *P);

/* One product of zeros and one all-reduce on every rank, so that NCCL's connections to the
 * peers (made on first use: tens of milliseconds) are made here and not inside the first
 * solve or product the caller times. */
static gs_status_t warm_rank(gs_dist_rank_t *R, void *user)
{
  gs_dist_part_t *P = &((gs_dist_matrix_t *)user)->p[R->rank];
  gs_context_t *ctx = R->ctx;
  const double t = gs_wall_seconds();
  gs_status_t st = part_vectors(P);
  if (st == GS_SUCCESS)
    st = GS_CUDA(cudaMemsetAsync(P->d_x, 0, (size_t)P->rows * sizeof *P->d_x, ctx->stream));
  st = gs_dist_agree(R, st);
  if (st != GS_SUCCESS) return st;
  P->mode = 0;
  st = gs_dist_part_apply(P, 1.0, P->d_x, 0.0, P->d_y);
  if (st == GS_SUCCESS) st = gs_dist_allreduce(R, P->d_y, 1);
  if (st == GS_SUCCESS) st = gs_context_sync(ctx);
  if (st != GS_SUCCESS) gs_dist_fail(R);
  P->warm_s = gs_wall_seconds() - t;
  return st;
}

static void part_free(gs_dist_part_t *P)
{
  if (!P->R) return;
  gs_context_t *ctx = P->R->ctx;
  gs_context_activate(ctx);
  cudaStreamSynchronize(ctx->stream);
  cudaStreamSynchronize(P->R->comm_stream);
  gs_operator_destroy(&P->op);
  gs_spmv_destroy(&P->So);
  gs_spmv_destroy(&P->Sd);
  gs_matrix_destroy(&P->Mo);
  gs_matrix_destroy(&P->Md);
  gs_dfree(ctx, P->d_send_idx);
  gs_dfree(ctx, P->d_send);
  if (P->p2p) {
    cudaFree(P->d_halo);
    cudaFree(P->d_flags);
  } else {
    gs_dfree(ctx, P->d_halo);
  }
  gs_dfree(ctx, P->d_xseq);
  gs_dfree(ctx, P->d_send_off);
  gs_dfree(ctx, P->d_dst);
  gs_dfree(ctx, P->d_pflags);
  gs_dfree(ctx, P->d_off_rows);
  gs_dfree(ctx, P->d_offy);
  gs_dfree(ctx, P->d_x);
  gs_dfree(ctx, P->d_y);
  free(P->send_off);
  free(P->recv_off);
  memset(P, 0, sizeof *P);
}

static void part_free_share(void *arg, int r) { part_free(&((gs_dist_part_t *)arg)[r]); }

void gs_dist_matrix_destroy(gs_dist_matrix_t **Ap)
{
  if (!Ap || !*Ap) return;
  gs_dist_matrix_t *A = *Ap;
  if (A->p) gs_parallel(A->D->n, part_free_share, A->p); /* the ranks' frees at once */
  if (A->D && A->D->n > 0) gs_context_activate(A->D->r[gs_dist_first_local(A->D)].ctx);
  free(A->p);
  free(A->first);
  free(A->perm);
  free(A);
  *Ap = NULL;
}

/* gs_dist_matrix_create's two shares: the ranks' blocks (share 0, the calling thread) and the
 * matrix's bandwidth and features (share 1). Share 1 keeps its message (the message buffer is
 * per thread); share 0's stays on the calling thread. */
typedef struct {
  gs_dist_t *D;
  const gs_csr_t *H;
  build_t *b;
  gs_idx_t bandwidth;
  gs_status_t st_build, st_facts;
  gs_features_t f;
  char facts_error[512];
} facts_t;

static void build_share(void *arg, int t)
{
  facts_t *j = (facts_t *)arg;
  if (t == 0) {
    j->st_build = gs_dist_run(j->D, build_rank, j->b);
    return;
  }
  j->bandwidth = gs_csr_bandwidth(j->H);
  j->st_facts = gs_csr_features(j->H, &j->f);
  if (j->st_facts != GS_SUCCESS)
    snprintf(j->facts_error, sizeof j->facts_error, "%s", gs_last_error());
}

gs_status_t gs_dist_matrix_create(gs_dist_matrix_t **Ap, gs_dist_t *D, const gs_csr_t *csr,
                                  const gs_dist_matrix_opts_t *opts)
{
  gs_status_t st = GS_SUCCESS;
  gs_dist_matrix_opts_t o;
  gs_csr_t *B = NULL;
  gs_dist_block_t *blocks = NULL;
  if (!Ap) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_dist_matrix_create: A is NULL");
  *Ap = NULL;
  if (!D || !csr) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_dist_matrix_create: NULL argument");
  if (opts) o = *opts;
  else gs_dist_matrix_opts_default(&o);
  if (!o.format) o.format = "auto";
  if (!o.options) o.options = "";
  if (!is_auto(o.format) && gs_spmv_backend_find(o.format) < 0)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_dist_matrix_create: '%s' is not a backend of this "
                    "build (name one, or auto)", o.format);
  if (o.off_format && gs_spmv_backend_find(o.off_format) < 0)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_dist_matrix_create: unknown backend '%s' for the "
                    "off-diagonal blocks", o.off_format);
  /* the blocks' products apply the distributed solver's double vectors */
  GS_CHECK(gs_spmv_options_refuse_float("gs_dist_matrix_create", o.options));
  if (csr->m != csr->n)
    return GS_ERROR(GS_ERR_DIMENSION, "gs_dist_matrix_create: the matrix is %d x %d; rows and "
                    "columns share one partition, so it must be square", (int)csr->m,
                    (int)csr->n);
  if (csr->m < D->n)
    return GS_ERROR(GS_ERR_DIMENSION, "gs_dist_matrix_create: %d rows cannot be shared by %d "
                    "ranks (each needs one)", (int)csr->m, D->n);
  GS_CHECK(gs_csr_validate(csr));

  gs_dist_matrix_t *A = calloc(1, sizeof *A);
  if (!A) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory");
  A->D = D;
  A->n = csr->m;
  A->p = calloc((size_t)D->n, sizeof *A->p);
  A->first = malloc((size_t)(D->n + 1) * sizeof *A->first);
  blocks = calloc((size_t)D->n, sizeof *blocks);
  if (!A->p || !A->first || !blocks) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory");
  for (int r = 0; r < D->n; ++r)
    if (gs_dist_is_local(D, r)) A->p[r].R = &D->r[r], A->p[r].A = A;
  const gs_csr_t *H = csr;
  if (o.reorder < GS_REORDER_NONE || o.reorder > GS_REORDER_AUTO)
    GS_FAIL(GS_ERR_INVALID_ARG, "gs_dist_matrix_create: unknown ordering %d (GS_REORDER_*)",
            o.reorder);
  if (o.reorder != GS_REORDER_NONE) {
    A->perm = malloc(((size_t)csr->m + 1) * sizeof *A->perm);
    if (!A->perm) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory");
    if (o.reorder == GS_REORDER_DEGREE)
      GS_TRY(gs_csr_degree_order(csr, A->perm));
    else /* on the first local rank's GPU where it pays: every process gets the host's order */
      GS_TRY(gs_reorder_rcm(D->r[gs_dist_first_local(D)].ctx, csr, A->perm, &A->perm_on_device));
    GS_TRY(gs_csr_permute_sym(csr, A->perm, &B));
    /* auto: RCM where it at least halves the bandwidth (the halos follow it), else none */
    if (o.reorder == GS_REORDER_AUTO &&
        2 * (int64_t)gs_csr_bandwidth(B) > gs_csr_bandwidth(csr)) {
      free(A->perm);
      A->perm = NULL;
      gs_csr_destroy(&B);
    } else {
      H = B;
    }
  }
  GS_TRY(gs_dist_partition_rows(H->row_ptr, H->m, D->n, A->first));
  /* the ranks cut and build their blocks while a thread reads the facts the solve needs later
   * (on one rank of the 145.5M-entry 27-point system they took 0.33 s beside a 0.42 s cut) */
  build_t b = {A, H, blocks, &o, GS_SUCCESS};
  facts_t facts = {D, H, &b, 0, GS_SUCCESS, GS_SUCCESS, {0}, ""};
  gs_parallel(2, build_share, &facts);
  GS_TRY(facts.st_build);
  if (facts.st_facts != GS_SUCCESS) GS_FAIL(facts.st_facts, "%s", facts.facts_error);
  A->bandwidth = facts.bandwidth;
  A->auto_method = facts.f.numerically_symmetric && facts.f.diagonal_positive
                       ? GS_SOLVER_CG
                       : GS_SOLVER_BICGSTAB;
  if (D->n > 1) GS_TRY(gs_dist_run(D, warm_rank, A));
  *Ap = A;
  A = NULL;
cleanup:
  for (int r = 0; blocks && r < D->n; ++r) gs_dist_block_free(&blocks[r]);
  free(blocks);
  gs_csr_destroy(&B);
  gs_dist_matrix_destroy(&A);
  return st;
}

gs_idx_t gs_dist_matrix_rows(const gs_dist_matrix_t *A) { return A ? A->n : 0; }
gs_idx_t gs_dist_matrix_bandwidth(const gs_dist_matrix_t *A) { return A ? A->bandwidth : 0; }

gs_status_t gs_dist_matrix_part(const gs_dist_matrix_t *A, int r, gs_dist_part_info_t *out)
{
  if (!A || !out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_dist_matrix_part: NULL argument");
  if (r < 0 || r >= A->D->n)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_dist_matrix_part: rank %d of %d", r, A->D->n);
  if (!gs_dist_is_local(A->D, r))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_dist_matrix_part: rank %d lives in another process "
                    "(this one is rank %d)", r, A->D->local);
  const gs_dist_part_t *P = &A->p[r];
  memset(out, 0, sizeof *out);
  out->row0 = P->row0;
  out->rows = P->rows;
  out->nnz_diag = P->nnz_diag;
  out->nnz_off = P->nnz_off;
  out->nhalo = P->nhalo;
  out->off_rows = P->noff;
  out->nsend = P->nsend;
  out->neighbours = P->neighbours;
  out->diag_format = P->Sd ? gs_spmv_name(P->Sd) : "";
  out->off_format = P->So ? gs_spmv_name(P->So) : "";
  out->device_bytes = P->bytes;
  const gs_selection_t *sel = P->Sd ? gs_spmv_selection(P->Sd) : NULL;
  out->diag_select_s = sel ? sel->seconds : 0.0;
  out->split_s = P->split_s;
  out->prepare_s = P->prepare_s;
  out->warm_s = P->warm_s;
  out->peer_exchange = P->p2p;
  return GS_SUCCESS;
}

/* ---- host-vector product and its timing ----------------------------------------------------- */

/* The rank's x and y (rows entries each), made on first use and kept with the part. */
static gs_status_t part_vectors(gs_dist_part_t *P)
{
  gs_context_t *ctx = P->R->ctx;
  const size_t bytes = (size_t)P->rows * sizeof(double);
  if (!P->d_x) GS_CHECK(gs_dmalloc(ctx, (void **)&P->d_x, bytes, "a distributed vector"));
  if (!P->d_y) GS_CHECK(gs_dmalloc(ctx, (void **)&P->d_y, bytes, "a distributed vector"));
  return GS_SUCCESS;
}

gs_status_t gs_dist_part_copy(const gs_dist_part_t *P, int to_device, double *d, double *v)
{
  gs_context_t *ctx = P->R->ctx;
  const size_t bytes = (size_t)P->rows * sizeof *v;
  const gs_idx_t *perm = P->A->perm;
  if (!perm) /* the rank's rows are v[row0, row0 + rows): no gather, no host buffer */
    return to_device ? gs_copy_to_device(ctx, d, v + P->row0, bytes)
                     : gs_copy_to_host(ctx, v + P->row0, d, bytes);
  double *h = malloc(bytes + sizeof *h);
  if (!h) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory");
  gs_status_t st = GS_SUCCESS;
  if (to_device) {
    for (gs_idx_t k = 0; k < P->rows; ++k) h[k] = v[perm[P->row0 + k]];
    st = gs_copy_to_device(ctx, d, h, bytes);
  } else {
    st = gs_copy_to_host(ctx, h, d, bytes);
    for (gs_idx_t k = 0; st == GS_SUCCESS && k < P->rows; ++k) v[perm[P->row0 + k]] = h[k];
  }
  free(h);
  return st;
}

typedef struct {
  gs_dist_matrix_t *A;
  double alpha, beta;
  const double *x;
  double *y;
  int reps;
  double *med; /* BENCH_FIGS per rank */
  double halo_bytes; /* process mode: all ranks' received bytes */
} spmv_job_t;

static gs_status_t spmv_rank(gs_dist_rank_t *R, void *user)
{
  spmv_job_t *j = (spmv_job_t *)user;
  gs_dist_part_t *P = &j->A->p[R->rank];
  gs_context_t *ctx = R->ctx;
  gs_status_t st = part_vectors(P);
  if (st == GS_SUCCESS) st = gs_dist_part_copy(P, 1, P->d_x, (double *)j->x);
  if (st == GS_SUCCESS && j->beta != 0.0) st = gs_dist_part_copy(P, 1, P->d_y, j->y);
  st = gs_dist_agree(R, st);
  if (st != GS_SUCCESS) return st;
  P->mode = 0;
  st = j->alpha != 0.0 ? gs_dist_part_apply(P, j->alpha, P->d_x, j->beta, P->d_y)
                       : gs_launch_scale(ctx->stream, P->rows, j->beta, P->d_y);
  if (st == GS_SUCCESS) st = gs_dist_part_copy(P, 0, P->d_y, j->y);
  if (st != GS_SUCCESS) gs_dist_fail(R);
  return st;
}

gs_status_t gs_dist_spmv(gs_dist_matrix_t *A, double alpha, const double *x, double beta,
                         double *y)
{
  if (!A || !x || !y) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_dist_spmv: NULL argument");
  if (x == y) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_dist_spmv: x and y must differ");
  if (!isfinite(alpha) || !isfinite(beta))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_dist_spmv: alpha and beta must be finite");
  spmv_job_t j = {A, alpha, beta, x, y, 0, NULL, 0.0};
  return gs_dist_run(A->D, spmv_rank, &j);
}

static int cmp_double(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median of ms[0..reps) in seconds (sorts ms). */
static double median_s(double *ms, int reps)
{
  qsort(ms, (size_t)reps, sizeof *ms, cmp_double);
  return 1e-3 * ms[reps / 2];
}

/* A rank's figures: the medians of bench modes 0-3 (gs_dist_part_apply's P->mode), then the
 * timeline's */
enum { FIG_PRODUCT, FIG_LOCAL, FIG_HALO, FIG_PRODUCTS, FIG_X_END, FIG_L_END, FIG_L_START,
       BENCH_FIGS };

static gs_status_t bench_rank(gs_dist_rank_t *R, void *user)
{
  spmv_job_t *j = (spmv_job_t *)user;
  gs_dist_part_t *P = &j->A->p[R->rank];
  gs_context_t *ctx = R->ctx;
  const int reps = j->reps;
  const int async = R->D->transport != GS_DIST_HOST;
  double *fig = j->med + BENCH_FIGS * R->rank;
  cudaEvent_t *ev = calloc(2 * (size_t)reps + 3, sizeof *ev);
  double *ms = malloc(4 * (size_t)reps * sizeof *ms);
  int made = 0;
  gs_status_t st = ev && ms ? part_vectors(P) : GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory");
  for (; st == GS_SUCCESS && made < 2 * reps + 3; ++made)
    st = GS_CUDA(cudaEventCreate(&ev[made]));
  if (st == GS_SUCCESS) st = GS_CUDA(cudaMemsetAsync(P->d_x, 0, (size_t)P->rows * 8, ctx->stream));
  st = gs_dist_agree(R, st);
  for (int mode = 0; st == GS_SUCCESS && mode <= FIG_PRODUCTS; ++mode) {
    P->mode = mode;
    for (int w = 0; st == GS_SUCCESS && w < 5; ++w) /* warm-up */
      st = gs_dist_part_apply(P, 1.0, P->d_x, 0.0, P->d_y);
    for (int k = 0; st == GS_SUCCESS && k < reps; ++k) {
      st = GS_CUDA(cudaEventRecord(ev[2 * k], ctx->stream));
      if (st == GS_SUCCESS) st = gs_dist_part_apply(P, 1.0, P->d_x, 0.0, P->d_y);
      if (st == GS_SUCCESS) st = GS_CUDA(cudaEventRecord(ev[2 * k + 1], ctx->stream));
    }
    if (st == GS_SUCCESS) st = GS_CUDA(cudaStreamSynchronize(ctx->stream));
    for (int k = 0; st == GS_SUCCESS && k < reps; ++k) {
      float t = 0.0f;
      st = GS_CUDA(cudaEventElapsedTime(&t, ev[2 * k], ev[2 * k + 1]));
      ms[k] = t;
    }
    if (st == GS_SUCCESS) fig[mode] = median_s(ms, reps); /* FIG_PRODUCT + mode */
  }
  /* the timeline of one product at a time (NCCL or peer, with an exchange): when, after its
   * start, the exchange and the local product ended; an exchange that ends near the local
   * product's end waited for it (no overlap) */
  P->mode = 0;
  const int timeline = async && R->D->n > 1 && P->nsend + P->nhalo > 0;
  if (timeline) P->ev_tx = ev[2 * reps], P->ev_tl = ev[2 * reps + 1], P->ev_ls = ev[2 * reps + 2];
  for (int k = 0; st == GS_SUCCESS && timeline && k < reps; ++k) {
    float a = 0.0f, b = 0.0f, c = 0.0f;
    st = GS_CUDA(cudaEventRecord(ev[0], ctx->stream));
    if (st == GS_SUCCESS) st = gs_dist_part_apply(P, 1.0, P->d_x, 0.0, P->d_y);
    if (st == GS_SUCCESS) st = GS_CUDA(cudaStreamSynchronize(ctx->stream));
    if (st == GS_SUCCESS) st = GS_CUDA(cudaEventElapsedTime(&a, ev[0], P->ev_tx));
    if (st == GS_SUCCESS) st = GS_CUDA(cudaEventElapsedTime(&b, ev[0], P->ev_tl));
    if (st == GS_SUCCESS) st = GS_CUDA(cudaEventElapsedTime(&c, ev[0], P->ev_ls));
    ms[reps + k] = a, ms[2 * reps + k] = b, ms[3 * reps + k] = c;
  }
  P->ev_tx = P->ev_tl = P->ev_ls = NULL;
  if (st == GS_SUCCESS && timeline) {
    fig[FIG_X_END] = median_s(ms + reps, reps);
    fig[FIG_L_END] = median_s(ms + 2 * reps, reps);
    fig[FIG_L_START] = median_s(ms + 3 * reps, reps);
  }
  if (st == GS_SUCCESS && R->D->local >= 0) { /* the slowest rank's times, all ranks' bytes */
    double h = (double)P->nhalo * (double)sizeof(double);
    st = gs_dist_proc_reduce(R, fig, BENCH_FIGS, 1);
    if (st == GS_SUCCESS) st = gs_dist_proc_reduce(R, &h, 1, 0);
    j->halo_bytes = h;
  }
  for (int k = 0; k < made; ++k) cudaEventDestroy(ev[k]);
  free(ev);
  free(ms);
  if (st != GS_SUCCESS) gs_dist_fail(R);
  return st;
}

gs_status_t gs_dist_spmv_bench(gs_dist_matrix_t *A, int reps, gs_dist_spmv_timing_t *t)
{
  if (!A || !t) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_dist_spmv_bench: NULL argument");
  if (reps < 1 || reps > 100000)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_dist_spmv_bench: reps %d (1 to 100000)", reps);
  memset(t, 0, sizeof *t);
  double *med = calloc(BENCH_FIGS * (size_t)A->D->n, sizeof *med);
  if (!med) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory");
  spmv_job_t j = {A, 1.0, 0.0, NULL, NULL, reps, med, 0.0};
  const gs_status_t st = gs_dist_run(A->D, bench_rank, &j);
  if (st == GS_SUCCESS) {
    double *const out[BENCH_FIGS] = {&t->product_s,  &t->local_s,        &t->halo_s,
                                     &t->products_s, &t->exchange_end_s, &t->local_end_s,
                                     &t->local_start_s}; /* in FIG_* order */
    for (int r = 0; r < A->D->n; ++r) { /* process mode: its rank holds the reduced figures */
      if (!gs_dist_is_local(A->D, r)) continue;
      for (int f = 0; f < BENCH_FIGS; ++f) /* the slowest rank's */
        if (med[BENCH_FIGS * r + f] > *out[f]) *out[f] = med[BENCH_FIGS * r + f];
      t->halo_bytes += (long)A->p[r].nhalo * (long)sizeof(double);
    }
    if (A->D->local >= 0) t->halo_bytes = (long)j.halo_bytes;
    /* what the exchange added to both products, against what it costs alone (run 111: the
     * off-diagonal product and its scatter-add, which follow the join, cost ~15 us; leaving
     * them out, as this did before, read 40% overlap as 0%) */
    const double lo = t->products_s < t->halo_s ? t->products_s : t->halo_s;
    double ov = lo > 0.0 && t->halo_bytes > 0 ? (t->products_s + t->halo_s - t->product_s) / lo
                                              : 0.0;
    t->overlap = ov < 0.0 ? 0.0 : ov > 1.0 ? 1.0 : ov;
    t->reps = reps;
  }
  free(med);
  return st;
}
