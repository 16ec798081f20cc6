/* batch/batch_solve_kernels.cu: the batched solver's kernel, one persistent thread block per
 * problem (batch/batch_solve_body.h holds the algorithm, shared with the host check).
 *
 * Beyond Anzt et al. (ScalA17), whose one-block-per-problem products (section 3.2) this builds
 * on: the block sets up its problem's preconditioner and runs its whole Krylov iteration inside
 * one launch, so every problem stops on its own test after its own number of iterations, with
 * no host synchronization at all until the batch is done. The steps are those of
 * solvers/cg.c, bicgstab.c and gmres.c in the same order, with the same stopping test and
 * refusals (per-problem reasons here), so a problem takes the single solver's iteration count up
 * to rounding. Only the order of the sums differs (one block here, a grid of blocks in
 * gs_solve). For CG that moves no count; for BiCGSTAB it does once the shadow residual r~ = r0 is
 * nearly orthogonal to r (docs/design.md "Batches", bench/bicgstab_rounding.c).
 * Order: block b solves problem L.d_order[b], the largest first (gs_batch_solve_order), so that
 *   the last wave is made of small problems; results and x land at the problem's own index.
 * Memory: the plan (batch/batch_plan.c) puts each problem's vectors, then GMRES's small arrays,
 *   then the preconditioner's data in shared memory when they fit (a budget of at most 46 KiB a
 *   block: gs_batch_kernel_smem_cap, or GS_BATCH_SMEM_KB), the rest in
 *   the problem's slice of a global workspace; the matrix is read from global memory (L2) at
 *   every product. The product is the block's CSR-smart loop (W threads per row from the
 *   problem's mean row length) reading the vector from wherever it lives.
 * Reductions: warp shuffles, then every thread sums the per-warp partials in the same order, so
 *   all threads hold bitwise the same scalars and take the same branches (no divergence at the
 *   barriers).
 * Assumptions: every problem square (gs_batch_solve checks); d_b and d_x do not overlap; blocks
 *   of a multiple of 32 threads, at most 256. */
#include <math.h>

#include "batch/batch_device.cuh"
#include "core/context_impl.h"
#include "core/error.h"

#define GS_BD_FN static __device__ __forceinline__
#define GS_BD_TID ((int)threadIdx.x)
#define GS_BD_NT ((int)blockDim.x)
#define GS_BD_LANE ((int)(threadIdx.x & 31))
#define GS_BD_WARP ((int)(threadIdx.x >> 5))
#define GS_BD_NWARPS ((int)(blockDim.x >> 5))
#define GS_BD_SYNC() __syncthreads()

GS_BD_FN double gs_bd_warp_sum(double s)
{
  for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(GS_FULL_MASK, s, off);
  return s;
}

/* (s1, s2) summed over the block; every thread returns the same values (the per-warp partials
 * are added in one order by all). */
GS_BD_FN gs_bd_pair_t gs_bd_sum2(double s1, double s2, double *red)
{
  s1 = gs_bd_warp_sum(s1);
  s2 = gs_bd_warp_sum(s2);
  __syncthreads(); /* the last call's readers are done with red */
  if (GS_BD_LANE == 0) {
    red[GS_BD_WARP] = s1;
    red[32 + GS_BD_WARP] = s2;
  }
  __syncthreads();
  gs_bd_pair_t p;
  p.a = p.b = 0.0;
  for (int w = 0; w < GS_BD_NWARPS; ++w) {
    p.a += red[w];
    p.b += red[32 + w];
  }
  return p;
}

/* The minimum of v over the block, in every thread. */
GS_BD_FN int gs_bd_min(int v, int *redi)
{
  for (int off = 16; off > 0; off >>= 1) v = min(v, __shfl_xor_sync(GS_FULL_MASK, v, off));
  __syncthreads();
  if (GS_BD_LANE == 0) redi[GS_BD_WARP] = v;
  __syncthreads();
  int m = redi[0];
  for (int w = 1; w < GS_BD_NWARPS; ++w) m = min(m, redi[w]);
  return m;
}

GS_BD_FN double gs_bd_row_dot(const int32_t *rp, const gs_idx_t *ci, const double *val,
                              const double *x, int32_t r, int active, int W, int lane)
{
  return gs_batch_row_dot(rp, ci, val, x, r, active, W, lane);
}

#include "batch/batch_solve_body.h"

/* A part of the problem's storage: shared memory or its slice of the workspace. */
static __device__ __forceinline__ double *part(int64_t off, double *smem, double *work)
{
  return off < 0 ? smem + (-1 - off) : work + off;
}

template <int METHOD, int PC>
static __global__ void __launch_bounds__(256)
batch_solve_kernel(gs_batch_dev_t A, gs_batch_solve_launch_t L, const double *__restrict__ b,
                   double *__restrict__ xout, gs_batch_result_t *res)
{
  extern __shared__ double gs_batch_smem[];
  __shared__ double red[64];
  __shared__ int redi[32];
  const int i = L.d_order ? L.d_order[blockIdx.x] : (int)blockIdx.x; /* the block's problem */
  const gs_batch_prob_t p = A.prob[i];
  const gs_batch_slot_t sl = L.d_slot[i];
  gs_bd_prob_t P;
  P.rp = A.rp + p.rp;
  P.ci = A.ci + p.ent;
  P.val = A.val + p.val;
  P.n = p.m;
  P.nnz = p.nnz;
  P.W = gs_batch_smart_width(p.m, p.nnz);
  P.b = b ? b + p.row : NULL;
  P.xout = xout ? xout + p.col : NULL;
  P.vec = part(sl.vec, gs_batch_smem, L.d_work);
  P.pc = part(sl.pc, gs_batch_smem, L.d_work);
  P.small = part(sl.small, gs_batch_smem, L.d_work);
  P.idx = L.d_idx ? L.d_idx + sl.idx : NULL;
  P.slot = sl;
  P.red = red;
  P.redi = redi;
  L.method = METHOD; /* constants once inlined: each kernel keeps its own method's and */
  L.precond = PC;    /* preconditioner's code only (registers, no dead paths)          */
  gs_bd_solve(&L, &P, res + i);
}

typedef void (*kernel_t)(gs_batch_dev_t, gs_batch_solve_launch_t, const double *, double *,
                         gs_batch_result_t *);

template <int METHOD>
static kernel_t pick_pc(int pc)
{
  switch (pc) {
  case GS_BATCH_PRECOND_JACOBI: return batch_solve_kernel<METHOD, GS_BATCH_PRECOND_JACOBI>;
  case GS_BATCH_PRECOND_BLOCK_JACOBI: return batch_solve_kernel<METHOD, GS_BATCH_PRECOND_BLOCK_JACOBI>;
  case GS_BATCH_PRECOND_ILU0: return batch_solve_kernel<METHOD, GS_BATCH_PRECOND_ILU0>;
  default: return batch_solve_kernel<METHOD, GS_BATCH_PRECOND_NONE>;
  }
}

/* The kernel of a method and a preconditioner (12 of them). */
static kernel_t pick(int method, int pc)
{
  return method == GS_SOLVER_CG         ? pick_pc<GS_SOLVER_CG>(pc)
         : method == GS_SOLVER_BICGSTAB ? pick_pc<GS_SOLVER_BICGSTAB>(pc)
                                        : pick_pc<GS_SOLVER_GMRES>(pc);
}

extern "C" gs_status_t gs_batch_kernel_smem_cap(gs_batch_t *B, const gs_batch_solve_launch_t *L,
                                                int64_t *cap)
{
  const kernel_t fn = pick(L->method, L->precond);
  int free_blocks = 0, at = 0;
  GS_CHECK(GS_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&free_blocks, (const void *)fn,
                                                                 L->threads, 0)));
  const int sms = B->sm_count > 0 ? B->sm_count : 1;
  const int64_t fill = ((int64_t)B->H.count + sms - 1) / sms; /* blocks an SM gets at most */
  const int want = fill < free_blocks ? (int)fill : free_blocks;
  int kb = GS_BATCH_SMEM_KB_MAX;
  for (; kb > 1; --kb) {
    GS_CHECK(GS_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&at, (const void *)fn,
                                                                   L->threads, (size_t)kb * 1024)));
    if (at >= want) break;
  }
  *cap = (int64_t)kb * 1024 / (int64_t)sizeof(double);
  return GS_SUCCESS;
}

extern "C" gs_status_t gs_batch_kernel_solve(gs_batch_t *B, const gs_batch_solve_launch_t *L,
                                             size_t smem, const double *d_b, double *d_x,
                                             gs_batch_result_t *d_res)
{
  cudaStream_t s = B->ctx->stream;
  const unsigned grid = (unsigned)B->H.count;
  const kernel_t fn = pick(L->method, L->precond);
  /* the plan's shared memory against what a launch of this kernel may take */
  cudaFuncAttributes fa;
  GS_CHECK(GS_CUDA(cudaFuncGetAttributes(&fa, (const void *)fn)));
  if (smem > (size_t)fa.maxDynamicSharedSizeBytes)
    return GS_ERROR(GS_ERR_INTERNAL, "batched solver: %zu bytes of shared memory planned, the "
                    "kernel may take %d", smem, fa.maxDynamicSharedSizeBytes);
  if (L->threads > fa.maxThreadsPerBlock)
    return GS_ERROR(GS_ERR_INTERNAL, "batched solver: %d threads a block, the kernel may take %d",
                    L->threads, fa.maxThreadsPerBlock);
  fn<<<grid, L->threads, smem, s>>>(B->dev, *L, d_b, d_x, d_res);
  return GS_CHECK_LAUNCH(s, "batch_solve_kernel");
}
