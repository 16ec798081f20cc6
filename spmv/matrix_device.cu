/* spmv/matrix_device.cu: the checks of a CSR handed over in device memory
 * (gs_matrix_create_device) and the conversion of its row pointers between 32 and 64 bits.
 *
 * rp_check_kernel: one thread per row pointer, a grid-stride loop: row_ptr[0] = 0, no decrease,
 * row_ptr[m] = nnz (together: every offset within 0..nnz).
 * entry_check_kernel: one warp per row (as csr-vector), lanes striding over the row's entries,
 * each read once and coalesced: column in range, strictly above its left neighbour in the row,
 * value finite. It returns at once when the row pointers were faulty, so that it never follows
 * an offset out of bounds. Both keep the smallest fault key a thread sees, take the minimum over
 * the warp by shuffles, and issue one atomicMin a warp: a matrix full of faults costs no more
 * atomics than a clean one has warps. */
#include "spmv/common_kernels.h"
#include "spmv/device_util.cuh"
#include "spmv/matrix_device.h"

#define CHECK_THREADS 256

typedef unsigned long long fault_t;

static __device__ __forceinline__ fault_t warp_min(fault_t v)
{
  for (int o = 16; o > 0; o >>= 1) {
    const fault_t w = __shfl_xor_sync(0xffffffffu, v, o);
    v = w < v ? w : v;
  }
  return v;
}

static __device__ __forceinline__ fault_t fault_key(int64_t pos, int kind)
{
  return ((fault_t)pos << 2) | (fault_t)kind;
}

template <typename T>
static __global__ void __launch_bounds__(CHECK_THREADS)
rp_check_kernel(gs_idx_t m, gs_off_t nnz, const T *__restrict__ rp, gs_csr_check_t *res)
{
  fault_t key = GS_CSR_CHECK_NONE;
  GS_GRID_STRIDE(i, (int64_t)m + 1) {
    const int64_t a = (int64_t)rp[i];
    fault_t f = GS_CSR_CHECK_NONE;
    if (i == 0 && a != 0) f = fault_key(0, GS_CSR_RP_FIRST);
    if (f == GS_CSR_CHECK_NONE && i < m && (int64_t)rp[i + 1] < a)
      f = fault_key(i, GS_CSR_RP_DECREASE);
    if (f == GS_CSR_CHECK_NONE && i == m && a != (int64_t)nnz) f = fault_key(i, GS_CSR_RP_LAST);
    key = f < key ? f : key;
  }
  key = warp_min(key);
  if ((threadIdx.x & 31) == 0 && key != GS_CSR_CHECK_NONE) atomicMin(&res->rp_fault, key);
}

template <typename T>
static __global__ void __launch_bounds__(CHECK_THREADS)
entry_check_kernel(gs_idx_t m, gs_idx_t n, const T *__restrict__ rp,
                   const gs_idx_t *__restrict__ col, const gs_val_t *__restrict__ val,
                   gs_csr_check_t *res)
{
  /* the row pointers' verdict is complete (the kernel before on the stream); the same value in
     every thread, so whole warps return and the shuffles below see full warps */
  if (*(volatile fault_t *)&res->rp_fault != GS_CSR_CHECK_NONE) return;
  const int lane = threadIdx.x & 31;
  const int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const int64_t warps = ((int64_t)gridDim.x * blockDim.x) >> 5;
  fault_t key = GS_CSR_CHECK_NONE, row = GS_CSR_CHECK_NONE;
  for (int64_t r = warp; r < m; r += warps) {
    const int64_t s = (int64_t)rp[r], e = (int64_t)rp[r + 1];
    for (int64_t k = s + lane; k < e; k += 32) {
      const gs_idx_t c = col[k];
      fault_t f = GS_CSR_CHECK_NONE;
      if (c < 0 || c >= n)
        f = fault_key(k, GS_CSR_COL_RANGE);
      else if (k > s && c <= col[k - 1])
        f = fault_key(k, GS_CSR_COL_ORDER);
      else if (!isfinite(val[k]))
        f = fault_key(k, GS_CSR_VAL_FINITE);
      if (f != GS_CSR_CHECK_NONE) {
        key = f < key ? f : key;
        row = (fault_t)r < row ? (fault_t)r : row; /* rows ascend with k: the min key's row */
      }
    }
  }
  key = warp_min(key);
  row = warp_min(row);
  if (lane == 0 && key != GS_CSR_CHECK_NONE) {
    atomicMin(&res->entry_fault, key);
    atomicMin(&res->entry_row, row);
  }
}

template <typename T>
static gs_status_t launch_check(cudaStream_t s, gs_idx_t m, gs_idx_t n, gs_off_t nnz,
                                const T *rp, const gs_idx_t *col, const gs_val_t *val,
                                gs_csr_check_t *res)
{
  rp_check_kernel<T><<<gs_grid_blocks((int64_t)m + 1, CHECK_THREADS), CHECK_THREADS, 0, s>>>(
      m, nnz, rp, res);
  GS_CHECK(GS_CHECK_LAUNCH(s, "rp_check_kernel"));
  if (m == 0 || nnz == 0) return GS_SUCCESS; /* no entry to read (row pointers checked above) */
  entry_check_kernel<T><<<gs_grid_blocks((int64_t)m * 32, CHECK_THREADS), CHECK_THREADS, 0, s>>>(
      m, n, rp, col, val, res);
  return GS_CHECK_LAUNCH(s, "entry_check_kernel");
}

extern "C" gs_status_t gs_launch_csr_check(cudaStream_t stream, gs_idx_t m, gs_idx_t n,
                                           gs_off_t nnz, const void *d_rp, int rp_bits,
                                           const gs_idx_t *d_col, const gs_val_t *d_val,
                                           gs_csr_check_t *d_res)
{
  GS_CHECK(GS_CUDA(cudaMemsetAsync(d_res, 0xff, sizeof *d_res, stream)));
  if (rp_bits == 32)
    return launch_check(stream, m, n, nnz, (const int32_t *)d_rp, d_col, d_val, d_res);
  return launch_check(stream, m, n, nnz, (const int64_t *)d_rp, d_col, d_val, d_res);
}

template <typename In, typename Out>
static __global__ void __launch_bounds__(CHECK_THREADS)
offsets_convert_kernel(int64_t count, const In *__restrict__ in, Out *__restrict__ out)
{
  GS_GRID_STRIDE(i, count) out[i] = (Out)in[i];
}

template <typename In, typename Out>
static gs_status_t launch_convert(cudaStream_t s, int64_t count, const void *in, void *out)
{
  offsets_convert_kernel<In, Out><<<gs_grid_blocks(count, CHECK_THREADS), CHECK_THREADS, 0, s>>>(
      count, (const In *)in, (Out *)out);
  return GS_CHECK_LAUNCH(s, "offsets_convert_kernel");
}

extern "C" gs_status_t gs_launch_offsets_convert(cudaStream_t stream, gs_idx_t m,
                                                 const void *d_in, int in_bits, void *d_out,
                                                 int out_bits)
{
  const int64_t count = (int64_t)m + 1;
  if (in_bits == out_bits)
    return GS_CUDA(cudaMemcpyAsync(d_out, d_in, (size_t)count * (in_bits / 8),
                                   cudaMemcpyDeviceToDevice, stream));
  if (in_bits == 64) return launch_convert<int64_t, int32_t>(stream, count, d_in, d_out);
  return launch_convert<int32_t, int64_t>(stream, count, d_in, d_out);
}
