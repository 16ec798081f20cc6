/* multigpu/dist_kernels.cu: the distributed product's device helpers: packing the entries a rank
 * sends (a gather through its send list), the square root that turns an all-reduced sum of
 * squares into a norm, and the all-reduce of a few values through peer memory.
 *
 * scatter_add_kernel: one thread per row of the compressed off-diagonal block, y[idx[i]] += t[i]
 * (rows distinct: no two threads touch one y entry).
 * gather_kernel: one thread per sent entry, a 64-bit grid-stride loop; idx and out coalesced,
 * x read at the listed rows (a halo is mostly a few contiguous runs of rows: boundary planes of
 * a mesh, so the reads are close to coalesced too). */
#include "core/error.h"
#include "multigpu/dist_impl.h"
#include "spmv/common_kernels.h"
#include "spmv/device_util.cuh"

#define GATHER_THREADS 256

static __global__ void __launch_bounds__(GATHER_THREADS)
gather_kernel(gs_idx_t n, const gs_idx_t *__restrict__ idx, const double *__restrict__ x,
              double *__restrict__ out)
{
  GS_GRID_STRIDE(i, n) out[i] = x[idx[i]];
}

static __global__ void __launch_bounds__(GATHER_THREADS)
scatter_add_kernel(gs_idx_t n, const gs_idx_t *__restrict__ idx, const double *__restrict__ src,
                   double *__restrict__ y)
{
  GS_GRID_STRIDE(i, n) y[idx[i]] += src[i];
}

static __global__ void sqrt_kernel(double *d) { d[0] = sqrt(d[0]); }

extern "C" gs_status_t gs_dist_gather(cudaStream_t stream, gs_idx_t n, const gs_idx_t *idx,
                                      const double *d_x, double *d_out)
{
  if (n <= 0) return GS_SUCCESS;
  gather_kernel<<<gs_grid_blocks(n, GATHER_THREADS), GATHER_THREADS, 0, stream>>>(n, idx, d_x,
                                                                                   d_out);
  return GS_CHECK_LAUNCH(stream, "gather_kernel");
}

extern "C" gs_status_t gs_dist_scatter_add(cudaStream_t stream, gs_idx_t n, const gs_idx_t *idx,
                                           const double *d_src, double *d_y)
{
  if (n <= 0) return GS_SUCCESS;
  scatter_add_kernel<<<gs_grid_blocks(n, GATHER_THREADS), GATHER_THREADS, 0, stream>>>(
      n, idx, d_src, d_y);
  return GS_CHECK_LAUNCH(stream, "scatter_add_kernel");
}

extern "C" gs_status_t gs_dist_sqrt(cudaStream_t stream, double *d)
{
  sqrt_kernel<<<1, 1, 0, stream>>>(d);
  return GS_CHECK_LAUNCH(stream, "sqrt_kernel");
}

/* Waits until *f >= v; 1 when it gave up because the host raised *abort (polled every 1024
 * spins). The peer all-reduce's and the peer exchange's waits. */
static __device__ int spin_until(const volatile unsigned long long *f, unsigned long long v,
                                 const volatile int *abort)
{
  for (unsigned spins = 0; *f < v; ++spins)
    if ((spins & 1023u) == 1023u && *abort) return 1;
  return 0;
}

/* The all-reduce of k <= GS_DIST_P2P_MAX values through peer memory, one warp. Call c of a
 * rank has sequence number seq = c + 1 (the rank's device counter, so a CUDA Graph replays it
 * right) and parity seq & 1. It writes its k values into slot [parity][me] of every rank (its
 * own too), fences them to the system, raises that slot's flag to seq, waits until every
 * rank's flag in its own buffer reaches seq, and sums the slots in rank order: the same bits
 * on every rank. Two parities suffice: a rank can start call c + 2 (rewriting parity c & 1)
 * only after every rank wrote call c + 1, which each does after it has read call c. The wait
 * gives up when the host raises *abort (a rank failed and will not come), leaving d_buf as it
 * was. */
static __global__ void __launch_bounds__(32)
p2p_allreduce_kernel(double *d_buf, int k, int me, int n, gs_dist_slot_t *const *peers,
                     unsigned long long *seq_counter, const volatile int *abort)
{
  const int lane = threadIdx.x;
  const unsigned long long seq = *seq_counter + 1;
  const int par = (int)(seq & 1);
  for (int q = 0; q < n; ++q) {
    gs_dist_slot_t *t = peers[q] + (size_t)par * n + me;
    for (int j = lane; j < k; j += 32) t->v[j] = d_buf[j];
  }
  __threadfence_system();
  __syncwarp();
  for (int q = lane; q < n; q += 32) { /* the release: fenced again by the flag's writer */
    volatile unsigned long long *f = &(peers[q] + (size_t)par * n + me)->seq;
    __threadfence_system();
    *f = seq;
  }
  gs_dist_slot_t *mine = peers[me] + (size_t)par * n;
  int gave_up = 0;
  for (int r = lane; r < n && !gave_up; r += 32) gave_up = spin_until(&mine[r].seq, seq, abort);
  if (__any_sync(0xffffffffu, gave_up)) return;
  __threadfence();
  for (int j = lane; j < k; j += 32) {
    double a = 0.0;
    for (int r = 0; r < n; ++r) a += ((const volatile double *)mine[r].v)[j];
    d_buf[j] = a;
  }
  if (lane == 0) *seq_counter = seq;
}

extern "C" gs_status_t gs_dist_p2p_launch(cudaStream_t stream, double *d_buf, int k, int me,
                                          int n, gs_dist_slot_t *const *d_peers,
                                          unsigned long long *d_seq, const int *abort)
{
  p2p_allreduce_kernel<<<1, 32, 0, stream>>>(d_buf, k, me, n, d_peers, d_seq, abort);
  return GS_CHECK_LAUNCH(stream, "p2p_allreduce_kernel");
}

/* ---- the halo through peer memory (gs_dist_part_t.p2p) --------------------------------------
 * Product seq = *d_xseq + 1. push_kernel: thread 0 of each block waits until every receiver q
 * acknowledged product seq - 1 (ack[q] >= seq - 1 in this rank's flags), then the block writes
 * its share of the sent entries into the receivers' halos (entry k goes to q, the segment of
 * send_off holding k). ready_kernel, after it on the same stream: fences and raises this rank's
 * ready flag (= seq) in each receiver's flags. wait_kernel: waits for ready[q] >= seq of every
 * sender q. ack_kernel, after the off-diagonal product: writes ack = seq into each sender's
 * flags and steps the count. A wait gives up when the host raises *abort (a rank failed). */
#define PUSH_THREADS 256

static __global__ void __launch_bounds__(PUSH_THREADS)
push_kernel(gs_idx_t nsend, const gs_idx_t *__restrict__ idx, const double *__restrict__ x,
            const gs_idx_t *__restrict__ send_off, int n, unsigned long long send_mask,
            double *const *dst, const unsigned long long *flags, const unsigned long long *xseq,
            const volatile int *abort)
{
  __shared__ int gave_up;
  const unsigned long long seq = *xseq + 1;
  if (threadIdx.x == 0) {
    gave_up = 0;
    for (int q = 0; q < n && !gave_up; ++q)
      if ((send_mask >> q) & 1ull)
        gave_up = spin_until((const volatile unsigned long long *)&flags[n + q], seq - 1, abort);
  }
  __syncthreads();
  if (gave_up) return;
  GS_GRID_STRIDE(k, nsend) {
    int q = 0;
    while (send_off[q + 1] <= (gs_idx_t)k) ++q;
    dst[q][k - send_off[q]] = x[idx[k]];
  }
  __threadfence_system(); /* the entries reach the receivers before ready_kernel's flags */
}

static __global__ void ready_kernel(int me, int n, unsigned long long send_mask,
                                    unsigned long long *const *pflags,
                                    const unsigned long long *xseq)
{
  const unsigned long long seq = *xseq + 1;
  __threadfence_system(); /* the pushed entries before the flags */
  for (int q = threadIdx.x; q < n; q += blockDim.x)
    if ((send_mask >> q) & 1ull) ((volatile unsigned long long *)pflags[q])[me] = seq;
}

static __global__ void wait_kernel(int n, unsigned long long recv_mask,
                                   const unsigned long long *flags,
                                   const unsigned long long *xseq, const volatile int *abort)
{
  const unsigned long long seq = *xseq + 1;
  for (int q = threadIdx.x; q < n; q += blockDim.x)
    if ((recv_mask >> q) & 1ull)
      if (spin_until((const volatile unsigned long long *)&flags[q], seq, abort)) break;
  __threadfence();
}

static __global__ void ack_kernel(int me, int n, unsigned long long recv_mask,
                                  unsigned long long *const *pflags, unsigned long long *xseq)
{
  const unsigned long long seq = *xseq + 1;
  for (int q = threadIdx.x; q < n; q += blockDim.x)
    if ((recv_mask >> q) & 1ull) ((volatile unsigned long long *)pflags[q])[n + me] = seq;
  __syncthreads();
  if (threadIdx.x == 0) *xseq = seq;
}

extern "C" gs_status_t gs_dist_halo_push(cudaStream_t stream, const gs_dist_part_t *P,
                                         const double *d_x, int me, int n, const int *abort)
{
  if (P->nsend > 0) {
    push_kernel<<<gs_grid_blocks(P->nsend, PUSH_THREADS), PUSH_THREADS, 0, stream>>>(
        P->nsend, P->d_send_idx, d_x, P->d_send_off, n, P->send_mask, P->d_dst, P->d_flags,
        P->d_xseq, abort);
    GS_CHECK(GS_CHECK_LAUNCH(stream, "push_kernel"));
  }
  ready_kernel<<<1, 32, 0, stream>>>(me, n, P->send_mask, P->d_pflags, P->d_xseq);
  return GS_CHECK_LAUNCH(stream, "ready_kernel");
}

extern "C" gs_status_t gs_dist_halo_wait(cudaStream_t stream, const gs_dist_part_t *P, int me,
                                         int n, const int *abort)
{
  (void)me;
  wait_kernel<<<1, 32, 0, stream>>>(n, P->recv_mask, P->d_flags, P->d_xseq, abort);
  return GS_CHECK_LAUNCH(stream, "wait_kernel");
}

extern "C" gs_status_t gs_dist_halo_ack(cudaStream_t stream, const gs_dist_part_t *P, int me,
                                        int n)
{
  ack_kernel<<<1, 32, 0, stream>>>(me, n, P->recv_mask, P->d_pflags, P->d_xseq);
  return GS_CHECK_LAUNCH(stream, "ack_kernel");
}
