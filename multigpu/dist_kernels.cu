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

/* The all-reduce through peer memory (gs_dist_p2p_allreduce), one warp. Call c of a rank has
 * sequence number seq = c + 1 (the rank's device counter, so a CUDA Graph replays it right) and
 * parity seq & 1. It writes its k values into slot [parity][me] of every rank (its own too),
 * fences them to the system, raises that slot's flag to seq, waits until every rank's flag in
 * its own buffer reaches seq, and sums the slots in rank order: the same bits on every rank.
 * Two parities suffice: a rank can start call c + 2 (rewriting parity c & 1) only after every
 * rank wrote call c + 1, which each does after it has read call c. The wait gives up when the
 * host raises *abort (a rank failed and will not come), leaving d_buf as it was. */
static __global__ void __launch_bounds__(32)
p2p_allreduce_kernel(double *d_buf, int k, int me, int n, gs_dist_slot_t *const *peers,
                     unsigned long long *seq_counter, const volatile int *abort)
{
  const int lane = threadIdx.x;
  const unsigned long long seq = *seq_counter + 1;
  const int par = (int)(seq & 1);
  const double v = lane < k ? d_buf[lane] : 0.0;
  for (int q = 0; q < n; ++q) {
    gs_dist_slot_t *t = peers[q] + (size_t)par * n + me;
    if (lane < k) t->v[lane] = v;
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
  for (int r = lane; r < n; r += 32) {
    const volatile unsigned long long *f = &mine[r].seq;
    for (unsigned spins = 0; *f < seq; ++spins)
      if ((spins & 1023u) == 1023u && *abort) {
        gave_up = 1;
        break;
      }
  }
  if (__any_sync(0xffffffffu, gave_up)) return;
  __threadfence();
  if (lane < k) {
    double a = 0.0;
    for (int r = 0; r < n; ++r) a += ((const volatile double *)mine[r].v)[lane];
    d_buf[lane] = a;
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
