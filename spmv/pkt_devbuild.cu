/* spmv/pkt_devbuild.cu: the pkt layout (spmv/pkt.h; Bell & Garland, NVR-2008-004, the packet
 * format) built on the GPU from the matrix's shared device CSR: the same decisions, arrays and
 * counts as the host builder gs_pkt_build (spmv/pkt_build.c), so that build=device and
 * build=host give the same device bytes and the same products.
 *
 * Passes (everything on ctx->stream):
 *  0. the RCM order, when modelled, on the device (gs_rcm_dev, spmv/rcm_devbuild.cu: the
 *     host's gs_csr_rcm order exactly; on the host where the device declines); the renumbered
 *     CSR P A P^T on the device: row lengths gathered, scanned, rows copied with their
 *     columns renumbered, then each row stably sorted by column
 *     (cub::DeviceSegmentedSort::StableSortPairs, as gs_csr_permute_sym's stable merge sort).
 *  1. per candidate (order, R): pkt_shape_kernel, one block a packet, makes the host pass's
 *     decisions for its packet (window, long rows, narrowed window, list length L) and writes
 *     its counts; pkt_totals_kernel sums them. One stream sync reads every candidate's totals;
 *     the host models their bytes (gs_pkt_cost) and picks (gs_pkt_choose), as pick_rows.
 *  2. the chosen candidate again, pkt_shape_kernel now also writing each row's in-packet entry
 *     count, thread and list start (the greedy fill at L); slot offsets scanned; the slots
 *     pre-set to GS_PKT_PAD / 0 (memset) and pkt_fill_kernel writing each kept row's in-window
 *     entries (warp a row, ballot ranks) and marking them.
 *  3. the remainder: unmarked entries, counted per caller row, scanned, scattered in the caller's
 *     numbering (warp a renumbered row, ballot ranks), columns touched counted (a second sync).
 * Memory beyond the layout: the renumbered CSR when RCM is modelled (12 nnz + 4 m bytes, and
 * as much again for the sort), 3 m + nnz bytes of per-row and per-entry scratch, n bytes. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include "core/error.h"
#include "core/order.h" /* gs_csr_rcm, when the device declines */
#include "spmv/bg_devbuild.h" /* gs_coo_dev_plan */
#include "spmv/common_kernels.h"
#include "spmv/device_util.cuh"
#include "spmv/pkt_devbuild.h"
#include "spmv/rcm_devbuild.h"

#define PKB_THREADS 256  /* threads of a build block (any layout's B: slot positions use B) */
#define PKB_WARPS (PKB_THREADS / 32)
#define PKB_CHUNK 4096   /* window buckets counted in shared memory a pass */
#define PKB_SPAN_MAX 16  /* W / g < 16 for g = W / 8 (or 1) */

/* One packet's decisions and counts (the host pass's per-packet values). */
typedef struct pkt_pk {
  long long L, Ek, rem, rem_rows, long_moved;
  int c0, nc, wlo, whi; /* the stored window [c0, c0 + nc); the chosen window [wlo, whi) */
} pkt_pk_t;

/* A candidate's totals (pkt_stats_t of the host). */
typedef struct pkt_tot {
  long long slots, in_packets, rem, rem_rows, long_moved, window_cols, max_cols;
} pkt_tot_t;

/* Block-wide reductions over PKB_THREADS threads through a shared buffer of as many entries;
 * every thread gets the result. */
static __device__ long long blk_max(long long v, long long *red)
{
  red[threadIdx.x] = v;
  __syncthreads();
  for (int s = PKB_THREADS / 2; s > 0; s >>= 1) {
    if ((int)threadIdx.x < s && red[threadIdx.x + s] > red[threadIdx.x])
      red[threadIdx.x] = red[threadIdx.x + s];
    __syncthreads();
  }
  const long long r = red[0];
  __syncthreads();
  return r;
}
static __device__ long long blk_min(long long v, long long *red) { return -blk_max(-v, red); }
static __device__ long long blk_sum(long long v, long long *red)
{
  red[threadIdx.x] = v;
  __syncthreads();
  for (int s = PKB_THREADS / 2; s > 0; s >>= 1) {
    if ((int)threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
    __syncthreads();
  }
  const long long r = red[0];
  __syncthreads();
  return r;
}

/* Threads the greedy fill needs for rows len[0..rows) at lists of at most L entries, counting
 * no further than cap + 1 (the host's threads_needed, stopped once it exceeds cap). */
static __device__ long long pk_threads_needed(const int *len, int rows, long long L, int cap)
{
  long long t = 0, c = 0;
  for (int r = 0; r < rows; ++r) {
    const int l = len[r];
    if (l == 0) continue;
    if (t == 0 || c + l > L) {
      if (++t > cap) return t;
      c = 0;
    }
    c += l;
  }
  return t;
}

/* pkt_shape_kernel: one block of PKB_THREADS a packet (grid-stride over packets, so every
 * thread reaches every barrier), the decisions of the host's pkt_pass for packet p of the
 * renumbered CSR (rp, ci) at R rows a packet, window budget W, B threads a packet:
 *  a. the coarse window: the packet's columns in buckets of g = W / 8; the touched bucket b
 *     whose span = W / g buckets from b hold the most entries (the least such b). The buckets
 *     between the packet's least and greatest are counted PKB_CHUNK at a time in shared memory
 *     (with the span after the chunk), jumping over empty stretches to the next touched bucket;
 *  b. Kadane's run inside [cs, min(cs + W, n)) as the host runs it, in exact integers (the
 *     host's doubles hold integers below 2^53): with S_k the prefix sum of 12 count - colcost,
 *     the run ending at column c starts at the last prefix minimum of S_0..S_c, and the first
 *     c of the greatest positive S_{c+1} - min wins. Per thread a chunk of columns, the chunk
 *     sums and minima combined by thread 0 (256 steps);
 *  c. each row's in-window count (warp a row), the long-row limit, long rows out, the kept
 *     entries' column range (the stored window), the rows left with a remainder;
 *  d. L, the least list length at which B threads take every row: a 256-way search (each
 *     thread runs the greedy fill at one probe) that finds the binary search's answer, the
 *     fill's thread count being non-increasing in L (next-fit stays ahead as L grows);
 *  e. with fill != 0, each row's entry count (0: long or none), thread and list start at L
 *     (thread 0, rows in order: the host's fill loop), into len_g, tr_g, cr_g.
 * Shared memory: max(PKB_CHUNK + PKB_SPAN_MAX, W) + R ints, dynamic. */
static __global__ void __launch_bounds__(PKB_THREADS)
pkt_shape_kernel(int npk, int m, int n, int R, int W, int B, int colcost,
                 const int *__restrict__ rp, const int *__restrict__ ci, pkt_pk_t *pk,
                 int fill, int *len_g, int *tr_g, int *cr_g)
{
  extern __shared__ int psm[];
  __shared__ long long red[PKB_THREADS];
  __shared__ long long tot_s[PKB_THREADS], mnv_s[PKB_THREADS];
  __shared__ int mni_s[PKB_THREADS];
  __shared__ int lo_s;
  const int HW = W > PKB_CHUNK + PKB_SPAN_MAX ? W : PKB_CHUNK + PKB_SPAN_MAX;
  int *hist = psm, *lens = psm + HW;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = W >= 8 ? W / 8 : 1, span = W / g;
  for (int p = blockIdx.x; p < npk; p += gridDim.x) {
    const int r0 = (int)((long long)p * R);
    const int r1 = (int)((long long)r0 + R < m ? (long long)r0 + R : m);
    const int rows = r1 - r0;
    const int q0 = rp[r0], q1 = rp[r1];

    /* a. the coarse window */
    long long bmin = LLONG_MAX, bmax = -1;
    for (int q = q0 + tid; q < q1; q += PKB_THREADS) {
      const long long b = ci[q] / g;
      bmin = b < bmin ? b : bmin;
      bmax = b > bmax ? b : bmax;
    }
    bmin = blk_min(bmin, red);
    bmax = blk_max(bmax, red);
    long long best = -1; /* (sum << 32) | (0x7fffffff - b): most entries, then least b */
    long long B0 = bmin;
    while (bmax >= 0 && B0 <= bmax) {
      for (int k = tid; k < PKB_CHUNK + PKB_SPAN_MAX; k += PKB_THREADS) hist[k] = 0;
      __syncthreads();
      long long next = LLONG_MAX;
      for (int q = q0 + tid; q < q1; q += PKB_THREADS) {
        const long long b = ci[q] / g;
        if (b >= B0 && b < B0 + PKB_CHUNK + span) atomicAdd(hist + (b - B0), 1);
        if (b >= B0 + PKB_CHUNK && b < next) next = b;
      }
      __syncthreads();
      long long mine = -1;
      for (int k = tid; k < PKB_CHUNK; k += PKB_THREADS) {
        if (hist[k] == 0) continue;
        long long sum = 0;
        for (int e = 0; e < span; ++e) sum += hist[k + e];
        const long long key = (sum << 32) | (long long)(0x7fffffff - (B0 + k));
        if (key > mine) mine = key;
      }
      mine = blk_max(mine, red); /* also the barrier before hist is cleared again */
      if (mine > best) best = mine;
      B0 = blk_min(next, red);
      if (B0 == LLONG_MAX) break;
    }
    const long long best_b = best >= 0 ? 0x7fffffff - (best & 0xffffffffLL) : 0;
    const long long cs = best_b * g, ce = cs + W < (long long)n ? cs + W : n;

    /* b. Kadane inside [cs, ce) */
    long long wlo = cs, whi = cs;
    if (bmax >= 0) {
      const int ncol = (int)(ce - cs);
      for (int k = tid; k < ncol; k += PKB_THREADS) hist[k] = 0;
      __syncthreads();
      for (int q = q0 + tid; q < q1; q += PKB_THREADS) {
        const int c = ci[q];
        if (c >= cs && c < ce) atomicAdd(hist + (c - cs), 1);
      }
      __syncthreads();
      const int C = (ncol + PKB_THREADS - 1) / PKB_THREADS;
      const int k0 = tid * C < ncol ? tid * C : ncol, k1 = k0 + C < ncol ? k0 + C : ncol;
      long long s = 0, mnv = LLONG_MAX;
      int mni = -1;
      for (int k = k0; k < k1; ++k) {
        if (s <= mnv) {
          mnv = s;
          mni = k;
        }
        s += (long long)GS_PKT_GAIN * hist[k] - colcost;
      }
      tot_s[tid] = s;
      mnv_s[tid] = mnv;
      mni_s[tid] = mni;
      __syncthreads();
      if (tid == 0) { /* chunk bases (exclusive sums), prefix minima before each chunk */
        long long base = 0, pv = LLONG_MAX;
        int pi = -1;
        for (int t = 0; t < PKB_THREADS; ++t) {
          const long long tt = tot_s[t], cv = mnv_s[t] == LLONG_MAX ? LLONG_MAX : base + mnv_s[t];
          const int ci_ = mni_s[t];
          tot_s[t] = base;
          mnv_s[t] = pv;
          mni_s[t] = pi;
          if (cv != LLONG_MAX && cv <= pv) {
            pv = cv;
            pi = ci_;
          }
          base += tt;
        }
      }
      __syncthreads();
      s = tot_s[tid];
      long long pv = mnv_s[tid], mine = -1;
      int pi = mni_s[tid], mylo = -1;
      for (int k = k0; k < k1; ++k) {
        if (s <= pv) {
          pv = s;
          pi = k;
        }
        s += (long long)GS_PKT_GAIN * hist[k] - colcost;
        const long long v = s - pv;
        if (v > 0) {
          const long long key = (v << 15) | (long long)(0x3fff - k);
          if (key > mine) {
            mine = key;
            mylo = pi;
          }
        }
      }
      const long long top = blk_max(mine, red);
      if (top > 0 && mine == top) lo_s = mylo; /* one owner: the key names its column */
      __syncthreads();
      if (top > 0) {
        wlo = cs + lo_s;
        whi = cs + (0x3fff - (top & 0x7fff)) + 1;
      }
      __syncthreads(); /* lo_s read before a later packet writes it */
    }

    /* c. rows: in-window counts, long rows, the stored window */
    for (int r = warp; r < rows; r += PKB_WARPS) {
      int c = 0;
      for (int q = rp[r0 + r] + lane; q < rp[r0 + r + 1]; q += 32) c += ci[q] >= wlo && ci[q] < whi;
      for (int o = 16; o > 0; o >>= 1) c += __shfl_down_sync(0xffffffffu, c, o);
      if (lane == 0) lens[r] = c;
    }
    __syncthreads();
    long long e = 0;
    for (int r = tid; r < rows; r += PKB_THREADS) e += lens[r];
    const long long E = blk_sum(e, red);
    const long long lim0 = 2 * ((E + B - 1) / B);
    const long long lim = lim0 > GS_PKT_LONG_MIN ? lim0 : GS_PKT_LONG_MIN;
    long long ek = 0, lmv = 0, mx = 0, rr = 0;
    for (int r = tid; r < rows; r += PKB_THREADS) {
      int l = lens[r];
      if (l > lim) {
        lmv += l;
        l = 0;
        lens[r] = 0;
      }
      ek += l;
      mx = l > mx ? l : mx;
      rr += (rp[r0 + r + 1] - rp[r0 + r]) > l;
    }
    const long long Ek = blk_sum(ek, red), longm = blk_sum(lmv, red);
    const long long maxlen = blk_max(mx, red), remr = blk_sum(rr, red); /* barriers: lens final */
    long long clo = LLONG_MAX, chi = -1;
    for (int r = warp; r < rows; r += PKB_WARPS) {
      if (lens[r] == 0) continue;
      for (int q = rp[r0 + r] + lane; q < rp[r0 + r + 1]; q += 32) {
        const long long c = ci[q];
        if (c < wlo || c >= whi) continue;
        clo = c < clo ? c : clo;
        chi = c > chi ? c : chi;
      }
    }
    clo = blk_min(clo, red);
    chi = blk_max(chi, red);

    /* d. L */
    long long L = 0;
    if (Ek > 0) {
      long long a = (Ek + B - 1) / B, b = Ek;
      if (a < maxlen) a = maxlen;
      while (a < b) {
        const long long probe = a + (b - a) * tid / PKB_THREADS;
        const int ok = pk_threads_needed(lens, rows, probe, B) <= B;
        const long long t = blk_min(ok ? tid : PKB_THREADS, red);
        if (t == 0) {
          b = a;
        } else { /* probes before t fail, probe t (or b) holds */
          const long long pf = a + (b - a) * (t - 1) / PKB_THREADS;
          const long long pt = t < PKB_THREADS ? a + (b - a) * t / PKB_THREADS : b;
          a = pf + 1;
          b = pt;
        }
      }
      L = a;
    }

    if (tid == 0) {
      pkt_pk_t o;
      o.L = L;
      o.Ek = Ek;
      o.rem = (long long)(q1 - q0) - Ek;
      o.rem_rows = remr;
      o.long_moved = longm;
      o.c0 = Ek > 0 ? (int)clo : 0;
      o.nc = Ek > 0 ? (int)(chi - clo + 1) : 0;
      o.wlo = (int)wlo;
      o.whi = (int)whi;
      pk[p] = o;
    }
    /* e. the greedy fill at L */
    if (fill) {
      for (int r = tid; r < rows; r += PKB_THREADS) len_g[r0 + r] = lens[r];
      if (tid == 0 && L > 0) {
        long long t = -1, c = 0;
        for (int r = 0; r < rows; ++r) {
          const int l = lens[r];
          if (l == 0) continue;
          if (t < 0 || c + l > L) {
            ++t;
            c = 0;
          }
          tr_g[r0 + r] = (int)t;
          cr_g[r0 + r] = (int)c;
          c += l;
        }
      }
    }
    __syncthreads(); /* lens and hist are the next packet's */
  }
}

/* Sums the packets' counts into one candidate's totals (one block). */
static __global__ void __launch_bounds__(PKB_THREADS)
pkt_totals_kernel(int npk, int B, const pkt_pk_t *__restrict__ pk, pkt_tot_t *tot)
{
  __shared__ long long red[PKB_THREADS];
  long long s = 0, ek = 0, rem = 0, rr = 0, lm = 0, wc = 0, mc = 0;
  for (int p = threadIdx.x; p < npk; p += PKB_THREADS) {
    const pkt_pk_t o = pk[p];
    s += o.L * B;
    ek += o.Ek;
    rem += o.rem;
    rr += o.rem_rows;
    lm += o.long_moved;
    wc += o.nc;
    mc = o.nc > mc ? o.nc : mc;
  }
  pkt_tot_t t;
  t.slots = blk_sum(s, red);
  t.in_packets = blk_sum(ek, red);
  t.rem = blk_sum(rem, red);
  t.rem_rows = blk_sum(rr, red);
  t.long_moved = blk_sum(lm, red);
  t.window_cols = blk_sum(wc, red);
  t.max_cols = blk_max(mc, red);
  if (threadIdx.x == 0) *tot = t;
}

/* The packet arrays of the chosen candidate: slot counts L B (scanned afterwards into slot
 * offsets; entry npk is 0), the stored windows. */
static __global__ void pkt_meta_kernel(int npk, int B, const pkt_pk_t *__restrict__ pk,
                                       long long *ptr, int *col0, int *ncols)
{
  GS_GRID_STRIDE(p, (int64_t)npk + 1)
  {
    if (p == npk) {
      ptr[p] = 0;
      continue;
    }
    ptr[p] = pk[p].L * B;
    col0[p] = pk[p].c0;
    ncols[p] = pk[p].nc;
  }
}

/* pkt_fill_kernel: a block a packet, a warp a row with entries in the packet: the row's
 * in-window entries, in row order, go to its thread's list from its start (slot
 * base + (start + j) B + thread), ranked across the warp by ballot; each is marked in inpk. */
static __global__ void __launch_bounds__(PKB_THREADS)
pkt_fill_kernel(int npk, int m, int R, int B, const int *__restrict__ rp,
                const int *__restrict__ ci, const double *__restrict__ v,
                const pkt_pk_t *__restrict__ pk, const long long *__restrict__ ptr,
                const int *__restrict__ len_g, const int *__restrict__ tr_g,
                const int *__restrict__ cr_g, uint32_t *idx, double *val, unsigned char *inpk)
{
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int p = blockIdx.x; p < npk; p += gridDim.x) {
    const int r0 = (int)((long long)p * R);
    const int r1 = (int)((long long)r0 + R < m ? (long long)r0 + R : m);
    const int wlo = pk[p].wlo, whi = pk[p].whi, c0 = pk[p].c0;
    const long long base = ptr[p];
    for (int r = r0 + warp; r < r1; r += PKB_WARPS) {
      if (len_g[r] == 0) continue;
      const long long t = tr_g[r];
      long long c = cr_g[r];
      const int qe = rp[r + 1];
      for (int qb = rp[r]; qb < qe; qb += 32) {
        const int q = qb + lane;
        const int col = q < qe ? ci[q] : -1;
        const int in = q < qe && col >= wlo && col < whi;
        const unsigned mask = __ballot_sync(0xffffffffu, in);
        if (in) {
          const long long slot = base + (c + __popc(mask & ((1u << lane) - 1u))) * B + t;
          idx[slot] = ((uint32_t)(r - r0) << 16) | (uint32_t)(col - c0);
          val[slot] = v[q];
          inpk[q] = 1;
        }
        c += __popc(mask);
      }
    }
  }
}

/* The remainder's count of caller row i: its renumbered row's entries outside the packet
 * (len_g counts those inside). Entry m is 0 (scanned into row offsets afterwards). */
static __global__ void pkt_remcount_kernel(int m, const int *__restrict__ rp,
                                           const int *__restrict__ len_g,
                                           const int *__restrict__ inv, int *cnt)
{
  GS_GRID_STRIDE(i, (int64_t)m + 1)
  {
    if (i == m) {
      cnt[i] = 0;
      continue;
    }
    const int r = inv ? inv[i] : (int)i;
    cnt[i] = rp[r + 1] - rp[r] - len_g[r];
  }
}

/* The remainder's scatter: a warp a renumbered row r (caller row perm[r]); its unmarked entries
 * in row order to the caller row's offset, ranked by ballot, columns in the caller's numbering;
 * seen marks the columns touched. */
static __global__ void pkt_rem_kernel(int m, const int *__restrict__ rp, const int *__restrict__ ci,
                                      const double *__restrict__ v,
                                      const unsigned char *__restrict__ inpk,
                                      const int *__restrict__ perm, const int *__restrict__ roff,
                                      int *row, int *col, double *val, unsigned char *seen)
{
  const int lane = threadIdx.x & 31;
  const int64_t nw = (int64_t)gridDim.x * (blockDim.x >> 5);
  for (int64_t r = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; r < m; r += nw) {
    const int i = perm ? perm[r] : (int)r;
    long long o = roff[i];
    if (roff[i + 1] == o) continue;
    const int qe = rp[r + 1];
    for (int qb = rp[r]; qb < qe; qb += 32) {
      const int q = qb + lane;
      const int out = q < qe && !inpk[q];
      const unsigned mask = __ballot_sync(0xffffffffu, out);
      if (out) {
        const long long k = o + __popc(mask & ((1u << lane) - 1u));
        const int j = perm ? perm[ci[q]] : ci[q];
        row[k] = i;
        col[k] = j;
        val[k] = v[q];
        seen[j] = 1;
      }
      o += __popc(mask);
    }
  }
}

/* Counts the set bytes of seen[0..n) into *count (block sums, one atomic a block). */
static __global__ void __launch_bounds__(PKB_THREADS)
pkt_count_kernel(int n, const unsigned char *__restrict__ seen, unsigned long long *count)
{
  __shared__ long long red[PKB_THREADS];
  long long c = 0;
  GS_GRID_STRIDE(j, n) c += seen[j];
  c = blk_sum(c, red);
  if (threadIdx.x == 0 && c > 0) atomicAdd(count, (unsigned long long)c);
}

/* ---- the renumbered CSR P A P^T (gs_csr_permute_sym) ---------------------------------------- */

/* inv[perm[k]] = k; len[k] = the length of A's row perm[k] (len[m] = 0, scanned afterwards). */
static __global__ void pkt_perm_lengths_kernel(int m, const int *__restrict__ perm,
                                               const int *__restrict__ rp, int *inv, int *len)
{
  GS_GRID_STRIDE(k, (int64_t)m + 1)
  {
    if (k == m) {
      len[k] = 0;
      continue;
    }
    const int i = perm[k];
    inv[i] = (int)k;
    len[k] = rp[i + 1] - rp[i];
  }
}

/* Row k of the renumbered CSR: A's row perm[k], columns renumbered (a warp a row). */
static __global__ void pkt_perm_copy_kernel(int m, const int *__restrict__ perm,
                                            const int *__restrict__ inv,
                                            const int *__restrict__ rp, const int *__restrict__ ci,
                                            const double *__restrict__ v,
                                            const int *__restrict__ rpn, int *cn, double *vn)
{
  const int lane = threadIdx.x & 31;
  const int64_t nw = (int64_t)gridDim.x * (blockDim.x >> 5);
  for (int64_t k = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; k < m; k += nw) {
    const int i = perm[k], s = rp[i], len = rp[i + 1] - s, d = rpn[k];
    for (int t = lane; t < len; t += 32) {
      cn[d + t] = inv[ci[s + t]];
      vn[d + t] = v[s + t];
    }
  }
}

/* ---- the build ------------------------------------------------------------------------------ */

void gs_pkt_dev_free(gs_context_t *ctx, gs_pkt_dev_t *D)
{
  gs_dfree(ctx, D->d_ptr);
  gs_dfree(ctx, D->d_col0);
  gs_dfree(ctx, D->d_ncols);
  gs_dfree(ctx, D->d_idx);
  gs_dfree(ctx, D->d_val);
  gs_dfree(ctx, D->d_perm);
  if (D->has_rem) gs_coo_dev_free(&D->rem);
  memset(D, 0, sizeof *D);
}

/* Scratch of one build (freed at its end). */
typedef struct pkb {
  int *rpn, *cn, *inv, *len, *tr, *cr, *cnt;
  int *ctmp;
  double *vn, *vtmp;
  void *tmp;
  pkt_pk_t *pk;
  pkt_tot_t *tot;
  unsigned char *inpk, *seen;
  unsigned long long *d_count;
} pkb_t;

static void pkb_free(gs_context_t *ctx, pkb_t *s)
{
  void *all[] = {s->rpn, s->cn, s->inv, s->len, s->tr, s->cr, s->cnt, s->ctmp, s->vn,
                 s->vtmp, s->tmp, s->pk, s->tot, s->inpk, s->seen, s->d_count};
  for (size_t k = 0; k < sizeof all / sizeof all[0]; ++k) gs_dfree(ctx, all[k]);
  memset(s, 0, sizeof *s);
}

/* Shared memory of pkt_shape_kernel at R rows, window W; the opt-in limit set when past 48 KB. */
static gs_status_t shape_smem(const gs_context_t *ctx, gs_idx_t R, gs_idx_t W, size_t *bytes)
{
  const size_t hw = W > PKB_CHUNK + PKB_SPAN_MAX ? (size_t)W : PKB_CHUNK + PKB_SPAN_MAX;
  *bytes = (hw + (size_t)R) * sizeof(int);
  if (*bytes > 48 * 1024)
    GS_CHECK(GS_CUDA(cudaFuncSetAttribute((const void *)pkt_shape_kernel,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          (int)*bytes)));
  (void)ctx;
  return GS_SUCCESS;
}

/* pkt_shape_kernel over every packet of (rp, ci) at R rows, then its totals into *tot. */
static gs_status_t shape_pass(gs_context_t *ctx, gs_idx_t m, gs_idx_t n, gs_idx_t R, gs_idx_t W,
                              int reordered, const int *rp, const int *ci, pkb_t *s,
                              pkt_tot_t *tot, int fill)
{
  const int64_t npk = m == 0 ? 0 : ((int64_t)m - 1) / R + 1;
  const int B = gs_pkt_threads(R);
  size_t smem = 0;
  if (npk == 0) return GS_CUDA(cudaMemsetAsync(tot, 0, sizeof *tot, ctx->stream));
  GS_CHECK(shape_smem(ctx, R, W, &smem));
  const unsigned grid = npk < GS_GRID_MAX_BLOCKS ? (unsigned)npk : GS_GRID_MAX_BLOCKS;
  pkt_shape_kernel<<<grid, PKB_THREADS, smem, ctx->stream>>>(
      (int)npk, m, n, R, W, B, reordered ? 12 : 8, rp, ci, s->pk, fill, s->len, s->tr, s->cr);
  GS_CHECK(GS_CHECK_LAUNCH(ctx->stream, "pkt_shape_kernel"));
  pkt_totals_kernel<<<1, PKB_THREADS, 0, ctx->stream>>>((int)npk, B, s->pk, tot);
  return GS_CHECK_LAUNCH(ctx->stream, "pkt_totals_kernel");
}

extern "C" gs_status_t gs_pkt_dev_build(gs_context_t *ctx, gs_matrix_t *A,
                                        const gs_spmv_cfg_t *cfg, gs_pkt_dev_t *D)
{
  gs_status_t st = GS_SUCCESS;
  pkb_t s;
  gs_dcsr_t a;
  gs_pkt_plan_t pl;
  gs_idx_t *h_perm = NULL;
  pkt_tot_t h_tot[2 * GS_PKT_MAX_CANDIDATES];
  gs_idx_t Rs[GS_PKT_MAX_CANDIDATES];
  double costs[2][GS_PKT_MAX_CANDIDATES];
  size_t tb = 0;
  memset(&s, 0, sizeof s);
  memset(D, 0, sizeof *D);
  GS_TRY(gs_matrix_device_csr(A, &a));
  GS_TRY(gs_pkt_plan(a.m, a.n, a.nnz, cfg, &pl));
  if (a.wide || (a.nnz > 0 && !a.d_row_ptr32))
    GS_FAIL(GS_ERR_UNSUPPORTED, "pkt: the device build needs 32-bit row offsets");
  {
    const gs_idx_t m = a.m, n = a.n, W = pl.W;
    const int nnz = (int)a.nnz;
    const int ncand = gs_pkt_candidates(m, pl.R_fixed, Rs);
    const int64_t npk_max = m == 0 ? 0 : ((int64_t)m - 1) / Rs[0] + 1;
    const int *rp = a.d_row_ptr32, *ci = a.d_col;
    const double *v = a.d_val;
    D->m = m;
    D->n = n;
    D->nnz = a.nnz;
    D->W = W;

    GS_TRY(gs_dmalloc_ordered(ctx, (void **)&s.pk, (size_t)(npk_max > 0 ? npk_max : 1) * sizeof(pkt_pk_t),
                              "pkt build packets"));
    GS_TRY(gs_dmalloc_ordered(ctx, (void **)&s.tot, sizeof(pkt_tot_t) * 2 * GS_PKT_MAX_CANDIDATES,
                              "pkt build totals"));
    GS_TRY(GS_CUDA(cudaMemsetAsync(s.tot, 0, sizeof(pkt_tot_t) * 2 * GS_PKT_MAX_CANDIDATES,
                                   ctx->stream)));
    /* 0. the RCM order and the renumbered CSR */
    if (pl.try_rcm) {
      int ordered = 0;
      GS_TRY(gs_dmalloc_ordered(ctx, (void **)&D->d_perm, (size_t)m * sizeof(int),
                                "pkt row permutation"));
      GS_TRY(gs_rcm_dev(ctx, A, D->d_perm, &ordered, NULL));
      if (!ordered) { /* declined on the device (see rcm_devbuild.h): the host's order */
        const gs_csr_t *H = gs_matrix_host(A);
        if (!H) GS_FAIL(GS_ERR_HOST_MEMORY, "pkt: out of host memory for the matrix's host copy");
        h_perm = (gs_idx_t *)malloc((size_t)m * sizeof *h_perm);
        if (!h_perm) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory ordering rows for pkt");
        GS_TRY(gs_csr_rcm(H, h_perm));
        GS_TRY(GS_CUDA(cudaMemcpyAsync(D->d_perm, h_perm, (size_t)m * sizeof(gs_idx_t),
                                       cudaMemcpyHostToDevice, ctx->stream)));
        GS_TRY(GS_CUDA(cudaStreamSynchronize(ctx->stream)));
      }
      GS_TRY(gs_dmalloc_ordered(ctx, (void **)&s.inv, (size_t)m * sizeof(int),
                                "pkt inverse order"));
      GS_TRY(gs_dmalloc_ordered(ctx, (void **)&s.rpn, ((size_t)m + 1) * sizeof(int),
                                "pkt RCM rows"));
      pkt_perm_lengths_kernel<<<gs_grid_blocks((int64_t)m + 1, 256), 256, 0, ctx->stream>>>(
          m, D->d_perm, rp, s.inv, s.rpn);
      GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "pkt_perm_lengths_kernel"));
      GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(NULL, tb, s.rpn, s.rpn, m + 1, ctx->stream)));
      GS_TRY(gs_dmalloc_ordered(ctx, &s.tmp, tb ? tb : 1, "pkt scan scratch"));
      GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(s.tmp, tb, s.rpn, s.rpn, m + 1, ctx->stream)));
      gs_dfree(ctx, s.tmp);
      s.tmp = NULL;
      if (nnz > 0) {
        GS_TRY(gs_dmalloc_ordered(ctx, (void **)&s.ctmp, (size_t)nnz * sizeof(int),
                                  "pkt RCM columns"));
        GS_TRY(gs_dmalloc_ordered(ctx, (void **)&s.vtmp, (size_t)nnz * sizeof(double),
                                  "pkt RCM values"));
        GS_TRY(gs_dmalloc_ordered(ctx, (void **)&s.cn, (size_t)nnz * sizeof(int),
                                  "pkt RCM columns"));
        GS_TRY(gs_dmalloc_ordered(ctx, (void **)&s.vn, (size_t)nnz * sizeof(double),
                                  "pkt RCM values"));
        pkt_perm_copy_kernel<<<gs_grid_blocks((int64_t)m * 32, 256), 256, 0, ctx->stream>>>(
            m, D->d_perm, s.inv, rp, ci, v, s.rpn, s.ctmp, s.vtmp);
        GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "pkt_perm_copy_kernel"));
        tb = 0;
        GS_TRY(GS_CUDA(cub::DeviceSegmentedSort::StableSortPairs(
            NULL, tb, s.ctmp, s.cn, s.vtmp, s.vn, nnz, m, s.rpn, s.rpn + 1, ctx->stream)));
        GS_TRY(gs_dmalloc_ordered(ctx, &s.tmp, tb ? tb : 1, "pkt sort scratch"));
        GS_TRY(GS_CUDA(cub::DeviceSegmentedSort::StableSortPairs(
            s.tmp, tb, s.ctmp, s.cn, s.vtmp, s.vn, nnz, m, s.rpn, s.rpn + 1, ctx->stream)));
        gs_dfree(ctx, s.tmp);
        gs_dfree(ctx, s.ctmp);
        gs_dfree(ctx, s.vtmp);
        s.tmp = NULL;
        s.ctmp = NULL;
        s.vtmp = NULL;
      }
    }

    /* 1. every candidate's totals, one sync */
    for (int k = 0; pl.try_given && k < ncand; ++k)
      GS_TRY(shape_pass(ctx, m, n, Rs[k], W, 0, rp, ci, &s, s.tot + k, 0));
    for (int k = 0; pl.try_rcm && k < ncand; ++k)
      GS_TRY(shape_pass(ctx, m, n, Rs[k], W, 1, s.rpn, s.cn, &s, s.tot + GS_PKT_MAX_CANDIDATES + k,
                        0));
    GS_TRY(GS_CUDA(cudaMemcpyAsync(h_tot, s.tot, sizeof h_tot, cudaMemcpyDeviceToHost,
                                   ctx->stream)));
    GS_TRY(GS_CUDA(cudaStreamSynchronize(ctx->stream)));
    gs_idx_t R0 = 0, R1 = 0;
    double c0 = INFINITY, c1 = INFINITY;
    for (int o = 0; o < 2; ++o) {
      if (!(o == 0 ? pl.try_given : pl.try_rcm)) continue;
      for (int k = 0; k < ncand; ++k) {
        const pkt_tot_t *t = &h_tot[o * GS_PKT_MAX_CANDIDATES + k];
        const int64_t npk = m == 0 ? 0 : ((int64_t)m - 1) / Rs[k] + 1;
        costs[o][k] = gs_pkt_cost(t->slots, t->window_cols, t->rem, t->rem_rows, m, npk, o);
      }
      if (o == 0) gs_pkt_choose(m, Rs, costs[0], ncand, &R0, &c0);
      else gs_pkt_choose(m, Rs, costs[1], ncand, &R1, &c1);
    }
    const int use_rcm = pl.try_rcm && (!pl.try_given || c1 < c0);
    const gs_idx_t R =
        use_rcm ? R1 : (pl.try_given ? R0 : (pl.R_fixed > 0 ? pl.R_fixed : 64));
    const int *prp = use_rcm ? s.rpn : rp, *pci = use_rcm ? s.cn : ci;
    const double *pv = use_rcm ? s.vn : v;
    if (!use_rcm) {
      gs_dfree(ctx, D->d_perm);
      D->d_perm = NULL;
    }
    D->R = R;
    D->B = gs_pkt_threads(R);
    D->npackets = m == 0 ? 0 : (gs_idx_t)(((int64_t)m - 1) / R + 1);
    D->reordered = use_rcm;
    const int npk = D->npackets, B = D->B;

    /* 2. the chosen candidate: the packets' shapes, the slots */
    GS_TRY(gs_dmalloc_ordered(ctx, (void **)&s.len, ((size_t)m + 1) * sizeof(int),
                              "pkt row counts"));
    GS_TRY(gs_dmalloc_ordered(ctx, (void **)&s.tr, ((size_t)m + 1) * sizeof(int),
                              "pkt row threads"));
    GS_TRY(gs_dmalloc_ordered(ctx, (void **)&s.cr, ((size_t)m + 1) * sizeof(int),
                              "pkt row starts"));
    pkt_tot_t ft;
    GS_TRY(shape_pass(ctx, m, n, R, W, use_rcm, prp, pci, &s, s.tot, 1));
    GS_TRY(GS_CUDA(cudaMemcpyAsync(&ft, s.tot, sizeof ft, cudaMemcpyDeviceToHost, ctx->stream)));
    /* ft is read after the next sync; the chosen candidate's totals are already on the host */
    const pkt_tot_t *ct = &h_tot[(use_rcm ? GS_PKT_MAX_CANDIDATES : 0) + 0];
    {
      int k = 0;
      while (k < ncand - 1 && Rs[k] != R) ++k;
      ct = &h_tot[(use_rcm ? GS_PKT_MAX_CANDIDATES : 0) + k];
    }
    const int known = (use_rcm ? pl.try_rcm : pl.try_given) && ncand > 0;
    if (!known) { /* R not modelled (reorder=1 on a 1 x 1 matrix): read its totals */
      GS_TRY(GS_CUDA(cudaStreamSynchronize(ctx->stream)));
      ct = &ft;
    }
    D->slots = ct->slots;
    D->in_packets = ct->in_packets;
    D->long_moved = ct->long_moved;
    D->window_cols = ct->window_cols;
    D->max_cols = (gs_idx_t)ct->max_cols;
    const int64_t rem = ct->rem, rem_rows = ct->rem_rows;
    if (npk > 0) {
      GS_TRY(gs_dmalloc_ordered(ctx, (void **)&D->d_ptr, ((size_t)npk + 1) * sizeof(long long),
                                "pkt slot offsets"));
      GS_TRY(gs_dmalloc_ordered(ctx, (void **)&D->d_col0, (size_t)npk * sizeof(int),
                                "pkt windows"));
      GS_TRY(gs_dmalloc_ordered(ctx, (void **)&D->d_ncols, (size_t)npk * sizeof(int),
                                "pkt window widths"));
      pkt_meta_kernel<<<gs_grid_blocks((int64_t)npk + 1, 256), 256, 0, ctx->stream>>>(
          npk, B, s.pk, D->d_ptr, D->d_col0, D->d_ncols);
      GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "pkt_meta_kernel"));
      tb = 0;
      GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(NULL, tb, D->d_ptr, D->d_ptr, npk + 1,
                                                   ctx->stream)));
      GS_TRY(gs_dmalloc_ordered(ctx, &s.tmp, tb ? tb : 1, "pkt scan scratch"));
      GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(s.tmp, tb, D->d_ptr, D->d_ptr, npk + 1,
                                                   ctx->stream)));
      gs_dfree(ctx, s.tmp);
      s.tmp = NULL;
    }
    if (nnz > 0) {
      GS_TRY(gs_dmalloc_ordered(ctx, (void **)&s.inpk, (size_t)nnz, "pkt entry marks"));
      GS_TRY(GS_CUDA(cudaMemsetAsync(s.inpk, 0, (size_t)nnz, ctx->stream)));
    }
    if (D->slots > 0) {
      GS_TRY(gs_dmalloc_ordered(ctx, (void **)&D->d_idx, (size_t)D->slots * sizeof(uint32_t),
                                "pkt local indices"));
      GS_TRY(gs_dmalloc_ordered(ctx, (void **)&D->d_val, (size_t)D->slots * sizeof(double),
                                "pkt values"));
      GS_TRY(GS_CUDA(cudaMemsetAsync(D->d_idx, 0xff, (size_t)D->slots * sizeof(uint32_t),
                                     ctx->stream))); /* GS_PKT_PAD */
      GS_TRY(GS_CUDA(cudaMemsetAsync(D->d_val, 0, (size_t)D->slots * sizeof(double),
                                     ctx->stream)));
      const unsigned grid = npk < GS_GRID_MAX_BLOCKS ? (unsigned)npk : GS_GRID_MAX_BLOCKS;
      pkt_fill_kernel<<<grid, PKB_THREADS, 0, ctx->stream>>>(npk, m, R, B, prp, pci, pv, s.pk,
                                                              D->d_ptr, s.len, s.tr, s.cr,
                                                              D->d_idx, D->d_val, s.inpk);
      GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "pkt_fill_kernel"));
    }

    /* 3. the remainder, caller's numbering */
    gs_coo_dev_t *Rm = &D->rem;
    Rm->ctx = ctx;
    Rm->m = m;
    Rm->n = n;
    Rm->nnz = (gs_idx_t)rem;
    Rm->rows_touched = (gs_idx_t)rem_rows;
    D->has_rem = 1; /* freed by gs_coo_dev_free from here on */
    unsigned long long h_count = 0;
    if (rem > 0) {
      GS_TRY(gs_dmalloc_ordered(ctx, (void **)&s.cnt, ((size_t)m + 1) * sizeof(int),
                                "pkt remainder rows"));
      pkt_remcount_kernel<<<gs_grid_blocks((int64_t)m + 1, 256), 256, 0, ctx->stream>>>(
          m, prp, s.len, use_rcm ? s.inv : NULL, s.cnt);
      GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "pkt_remcount_kernel"));
      tb = 0;
      GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(NULL, tb, s.cnt, s.cnt, m + 1, ctx->stream)));
      GS_TRY(gs_dmalloc_ordered(ctx, &s.tmp, tb ? tb : 1, "pkt scan scratch"));
      GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(s.tmp, tb, s.cnt, s.cnt, m + 1, ctx->stream)));
      GS_TRY(gs_dmalloc_ordered(ctx, (void **)&Rm->d_row, (size_t)rem * sizeof(gs_idx_t),
                                "COO rows"));
      GS_TRY(gs_dmalloc_ordered(ctx, (void **)&Rm->d_col, (size_t)rem * sizeof(gs_idx_t),
                                "COO columns"));
      GS_TRY(gs_dmalloc_ordered(ctx, (void **)&Rm->d_val, (size_t)rem * sizeof(gs_val_t),
                                "COO values"));
      GS_TRY(gs_dmalloc_ordered(ctx, (void **)&s.seen, (size_t)n, "pkt remainder columns"));
      GS_TRY(gs_dmalloc_ordered(ctx, (void **)&s.d_count, sizeof *s.d_count,
                                "pkt remainder count"));
      GS_TRY(GS_CUDA(cudaMemsetAsync(s.seen, 0, (size_t)n, ctx->stream)));
      GS_TRY(GS_CUDA(cudaMemsetAsync(s.d_count, 0, sizeof *s.d_count, ctx->stream)));
      pkt_rem_kernel<<<gs_grid_blocks((int64_t)m * 32, 256), 256, 0, ctx->stream>>>(
          m, prp, pci, pv, s.inpk, use_rcm ? D->d_perm : NULL, s.cnt, Rm->d_row, Rm->d_col,
          Rm->d_val, s.seen);
      GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "pkt_rem_kernel"));
      pkt_count_kernel<<<gs_grid_blocks(n, PKB_THREADS), PKB_THREADS, 0, ctx->stream>>>(
          n, s.seen, s.d_count);
      GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "pkt_count_kernel"));
      GS_TRY(GS_CUDA(cudaMemcpyAsync(&h_count, s.d_count, sizeof h_count,
                                     cudaMemcpyDeviceToHost, ctx->stream)));
    }
    GS_TRY(GS_CUDA(cudaStreamSynchronize(ctx->stream))); /* h_count, ft; scratch idle */
    if (ft.slots != D->slots || ft.rem != rem || ft.max_cols != D->max_cols)
      GS_FAIL(GS_ERR_INTERNAL, "pkt: the device build's final pass disagrees with its model "
              "(%lld slots, %lld expected)", (long long)ft.slots, (long long)D->slots);
    Rm->cols_touched = (gs_idx_t)h_count;
    if (rem > 0) {
      GS_TRY(gs_coo_dev_plan(ctx, Rm, 0));
    } else { /* no remainder: nothing held (pkt_prepare's has_rem = 0) */
      memset(Rm, 0, sizeof *Rm);
      D->has_rem = 0;
    }

    /* the byte model, as gs_pkt_bytes computes it from the host layout */
    gs_coo_layout_t rl;
    gs_pkt_t P;
    memset(&rl, 0, sizeof rl);
    memset(&P, 0, sizeof P);
    rl.m = m;
    rl.n = n;
    rl.nnz = (gs_idx_t)rem;
    rl.rows_touched = (gs_idx_t)rem_rows;
    rl.cols_touched = (gs_idx_t)h_count;
    P.m = m;
    P.n = n;
    P.npackets = D->npackets;
    P.slots = D->slots;
    P.window_cols = D->window_cols;
    P.perm = use_rcm ? D->d_perm : NULL; /* only "reordered or not" is read */
    P.rem = &rl;
    gs_pkt_bytes(&P, &D->bytes_n, &D->bytes_t);
  }
cleanup:
  if (st != GS_SUCCESS) {
    cudaStreamSynchronize(ctx->stream); /* no kernel left reading what is freed */
    gs_pkt_dev_free(ctx, D);
  } else {
    cudaStreamSynchronize(ctx->stream);
  }
  pkb_free(ctx, &s);
  free(h_perm);
  return st;
}
