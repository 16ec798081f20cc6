/* spmv/rcm_devbuild.cu: reverse Cuthill-McKee (E. Cuthill, J. McKee, 1969; George and Liu's
 * pseudo-peripheral root, SPARSPAK's FNROOT) on the GPU, giving exactly the order of the host's
 * gs_csr_rcm (core/order.c), so that pkt's device build and its host build hold the same bytes.
 *
 * Why it is exact. The host numbers one component at a time from a root, in BFS order, each
 * vertex appending its unnumbered neighbours sorted by (degree, index). A vertex of level L + 1
 * is therefore appended by the first vertex of level L (in the order) that neighbours it, so
 * level L + 1 in order is its vertices sorted by (position of that first parent, degree,
 * index). The device builds each level from the one before in one grid-wide phase:
 *   - every vertex of level L + 1 already holds the least position among its level-L parents
 *     (ppos), pushed by atomicMin when each parent was placed in the phase before;
 *   - a parent counts its children (neighbours whose ppos is its own position), a block scan
 *     and a decoupled look-back over the level's chunks give each parent the first position of
 *     its children, and the parent writes them sorted by (degree, index): one thread for up to
 *     RCM_LOCAL children; more are ranked by the grid (each child counts its siblings' smaller
 *     keys) after two more barriers;
 *   - each placed child pushes its own position to its neighbours of level L + 2 (the levels
 *     are known from the root's BFS, the root search's last one).
 * One barrier a level (two more with a parent of many children, one more where a placed child
 * has many neighbours). The root search (George and Liu: from the unnumbered vertex of least
 * (degree, index), move to the least vertex of the last level while that deepens the level
 * structure) is level-synchronous BFS, one barrier a level, vertices claimed by atomicCAS on a
 * BFS stamp: only the level sets matter there, not their order. Everything runs in ONE
 * cooperative kernel (co-resident blocks, cooperative_groups grid barriers), so that the host
 * is not in the loop of the hundreds of levels of a mesh or circuit (G3_circuit: three BFS of
 * 515-523 levels and the numbering's 523). The isolated vertices (degree 0), which the host
 * numbers first as components of their own, are placed before the kernel (a scan); the graph
 * of A + A^T of a general matrix reads A's rows and the rows of a transpose built by a stable
 * radix sort of the entries by column (rows sorted, so each neighbour list is a merge).
 * The final order is the whole CM order reversed. A thread walks a vertex's neighbours, a
 * block those of a vertex of more than RCM_HEAVY (the hubs of power-law and Pareto rows). A
 * graph with a vertex of more than GS_RCM_DEV_DEGREE neighbours is declined, as one of more
 * than GS_RCM_DEV_COMPONENTS components is (rcm_devbuild.h). */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include <cooperative_groups.h>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "core/context_impl.h"
#include "core/error.h"
#include "spmv/common_kernels.h"
#include "spmv/device_util.cuh"
#include "spmv/rcm_devbuild.h"

namespace cgrp = cooperative_groups;

#define RCM_T 256     /* threads a block */
#define RCM_PER_SM 2  /* blocks an SM at most (fewer blocks, cheaper barriers) */
#define RCM_LOCAL 16  /* children one thread sorts (insertion sort in registers) */
#define RCM_HEAVY 64  /* a vertex of more neighbours is walked by a whole block */

typedef unsigned long long u64;

/* The graph: A's rows, and for A + A^T the transpose's rows too (tp NULL: A alone). */
typedef struct rcm_graph {
  int n;
  const int *rp, *ci, *tp, *ti, *deg;
} rcm_graph_t;

/* The kernel's scalars (device memory; rings of slots so that no slot is reset while a thread
 * may still read it, see the loops). */
typedef struct rcm_state {
  u64 minkey[3];  /* BFS: least (degree, index) key of the level being formed */
  u64 start[2];   /* least key among the unnumbered vertices (a component's start) */
  int count[3];   /* BFS: vertices of the level being formed */
  int nbig[3];    /* numbering: parents of the level with more than RCM_LOCAL children */
  int nheavy[3];  /* numbering: placed children of more than RCM_HEAVY neighbours */
  int total[2];   /* numbering: children of the level (written by its last chunk) */
  int isolated;   /* isolated vertices, placed first */
  int declined;   /* 1: too many components; 2: a vertex of too many neighbours; 3: directed */
  int directed;   /* a claim of symmetry found false (rcm_verify_kernel) */
  /* what gs_rcm_dev_stats_t reports (thread 0 of the grid, %globaltimer ns) */
  u64 t_bfs, t_number;
  int bfs_runs, bfs_levels, number_levels, big_levels, components;
} rcm_state_t;

typedef struct rcm_args {
  rcm_graph_t g;
  int *cm, *perm;            /* the CM order; the result (reversed) */
  int *q, *stamp, *lvl, *ppos; /* BFS queue; BFS stamp; level in the root's BFS; first parent */
  unsigned char *placed;
  u64 *flags;                /* look-back: a chunk's (level epoch, inclusive?, count) */
  /* parents of many children (b < nbig): vertex, position, first child's position, children,
     children gathered; and by position P of such a child: its key, its parent's b (else -1) */
  int *big_v, *big_p, *big_base, *big_cnt, *big_fill;
  u64 *keys;
  int *segb;
  int *heavy_u, *heavy_P; /* placed children of many neighbours: their pushes, a block each */
  rcm_state_t *st;
} rcm_args_t;

static __device__ __forceinline__ u64 rcm_now(void)
{
  u64 t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

static __device__ __forceinline__ u64 rcm_key(int deg, int v)
{
  return ((u64)(unsigned)deg << 32) | (unsigned)v;
}

/* f(u) for each neighbour u != v of v in the graph, once each (A's rows and the transpose's are
 * strictly increasing, so the union is a merge). */
template <typename F>
static __device__ __forceinline__ void rcm_for_nbrs(const rcm_graph_t &g, int v, F f)
{
  int a = g.rp[v];
  const int ae = g.rp[v + 1];
  if (!g.tp) {
    for (; a < ae; ++a) {
      const int u = g.ci[a];
      if (u != v) f(u);
    }
    return;
  }
  int b = g.tp[v];
  const int be = g.tp[v + 1];
  while (a < ae || b < be) {
    const int x = a < ae ? g.ci[a] : INT_MAX, y = b < be ? g.ti[b] : INT_MAX;
    int u;
    if (x <= y) {
      u = x;
      ++a;
      b += x == y;
    } else {
      u = y;
      ++b;
    }
    if (u != v) f(u);
  }
}

/* f(u) for each neighbour u != v of v, once each, spread over `lanes` threads (lane = this
 * thread's number among them): A's row strided, then the transpose's row strided without the
 * entries also in A's row (a binary search there). For the vertices of many neighbours. */
template <typename F>
static __device__ __forceinline__ void rcm_for_nbrs_coop(const rcm_graph_t &g, int v, int lane,
                                                         int lanes, F f)
{
  const int r0 = g.rp[v], r1 = g.rp[v + 1];
  for (int e = r0 + lane; e < r1; e += lanes) {
    const int u = g.ci[e];
    if (u != v) f(u);
  }
  if (!g.tp) return;
  for (int e = g.tp[v] + lane; e < g.tp[v + 1]; e += lanes) {
    const int u = g.ti[e];
    if (u == v) continue;
    int lo = r0, hi = r1;
    while (lo < hi) {
      const int mid = lo + (hi - lo) / 2;
      if (g.ci[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    if (lo < r1 && g.ci[lo] == u) continue;
    f(u);
  }
}

/* ---- the graph's preparation (ordinary kernels) ------------------------------------------- */

/* row[e] = the row of entry e (a thread a row). */
static __global__ void rcm_rows_kernel(int n, const int *__restrict__ rp, int *__restrict__ row)
{
  GS_GRID_STRIDE(i, n)
  for (int e = rp[i]; e < rp[i + 1]; ++e) row[e] = (int)i;
}

/* tp[j] = the first position of column j in the sorted columns (j = 0 .. n). */
static __global__ void rcm_tptr_kernel(int n, int nnz, const int *__restrict__ key,
                                       int *__restrict__ tp)
{
  GS_GRID_STRIDE(j, (int64_t)n + 1)
  {
    int lo = 0, hi = nnz;
    while (lo < hi) {
      const int mid = lo + (hi - lo) / 2;
      if (key[mid] < (int)j) lo = mid + 1;
      else hi = mid;
    }
    tp[j] = lo;
  }
}

/* deg[v]; iso[v] = 1 for an isolated vertex (a warp a vertex: hubs have 1e5 neighbours). */
static __global__ void rcm_degree_kernel(rcm_graph_t g, int *__restrict__ deg,
                                         int *__restrict__ iso)
{
  const int lane = threadIdx.x & 31;
  GS_GRID_STRIDE(t, (int64_t)g.n * 32)
  {
    const int v = (int)(t >> 5);
    int d = 0;
    rcm_for_nbrs_coop(g, v, lane, 32, [&](int) { ++d; });
    for (int o = 16; o > 0; o >>= 1) d += __shfl_xor_sync(0xffffffffu, d, o);
    if (lane == 0) {
      deg[v] = d;
      iso[v] = d == 0;
    }
  }
}

/* The isolated vertices in index order (after the exclusive scan pos of iso) into cm[0..z). */
static __global__ void rcm_isolated_kernel(int n, const int *__restrict__ iso,
                                           const int *__restrict__ pos, int *__restrict__ cm,
                                           rcm_state_t *st)
{
  GS_GRID_STRIDE(v, n)
  {
    if (iso[v]) cm[pos[v]] = (int)v;
    if (v == n - 1) st->isolated = pos[v] + iso[v];
  }
}

/* ---- the cooperative kernel ------------------------------------------------------------------ */

typedef cub::BlockScan<int, RCM_T> rcm_scan_t;

typedef struct rcm_smem {
  rcm_scan_t::TempStorage scan;
  int prefix, nh, hsum;
  int hv[RCM_T], hslot[RCM_T]; /* the chunk's vertices of many neighbours, their threads */
  int hcnt[RCM_T];             /* by thread: the children a block counted for its vertex */
  u64 red[RCM_T / 32];
} rcm_smem_t;

/* Minimum of k over the block into *out (thread 0's value after the call is meaningful). */
static __device__ u64 rcm_block_min(u64 k, rcm_smem_t *sm)
{
  for (int o = 16; o > 0; o >>= 1) {
    const u64 t = __shfl_down_sync(0xffffffffu, k, o);
    k = t < k ? t : k;
  }
  if ((threadIdx.x & 31) == 0) sm->red[threadIdx.x >> 5] = k;
  __syncthreads();
  if (threadIdx.x == 0)
    for (int w = 1; w < RCM_T / 32; ++w) k = sm->red[w] < k ? sm->red[w] : k;
  __syncthreads();
  return k;
}

/* Level-synchronous BFS of root's component (stamp id): lvl[] set for it, *nlvl levels,
 * *size vertices, *best the least key of the last level. All threads call it. */
static __device__ void rcm_bfs(const rcm_args_t &a, cgrp::grid_group &grid, rcm_smem_t *sm,
                               int root, int id, int *nlvl, int *size, u64 *best)
{
  const int64_t gt = (int64_t)blockIdx.x * RCM_T + threadIdx.x, T = (int64_t)gridDim.x * RCM_T;
  rcm_state_t *st = a.st;
  const u64 t0 = gt == 0 ? rcm_now() : 0;
  if (gt == 0) {
    a.stamp[root] = id;
    a.lvl[root] = 0;
    a.q[0] = root;
    st->count[0] = 0;
    st->minkey[0] = ~0ull;
  }
  grid.sync();
  int s = 0, e = 1, L = 0;
  u64 lastmin = rcm_key(a.g.deg[root], root);
  for (;;) {
    const int sl = L % 3;
    /* slot (L + 1) % 3 was last read after the barrier before level L - 1's expansion */
    if (gt == 0) {
      st->count[(L + 1) % 3] = 0;
      st->minkey[(L + 1) % 3] = ~0ull;
    }
    auto claim = [&](int u) {
      const int old = ((volatile int *)a.stamp)[u];
      if (old != id && atomicCAS(&a.stamp[u], old, id) == old) {
        a.lvl[u] = L + 1;
        a.q[e + atomicAdd(&st->count[sl], 1)] = u;
        atomicMin(&st->minkey[sl], rcm_key(a.g.deg[u], u));
      }
    };
    /* a chunk of RCM_T vertices a block: each thread walks its own, the block the heavy ones */
    for (int64_t c0 = s + (int64_t)blockIdx.x * RCM_T; c0 < e; c0 += T) {
      const int64_t i = c0 + threadIdx.x;
      const int v = i < e ? a.q[i] : -1;
      if (threadIdx.x == 0) sm->nh = 0;
      __syncthreads();
      if (v >= 0) {
        if (a.g.deg[v] > RCM_HEAVY) sm->hv[atomicAdd(&sm->nh, 1)] = v;
        else rcm_for_nbrs(a.g, v, claim);
      }
      __syncthreads();
      for (int h = 0; h < sm->nh; ++h) rcm_for_nbrs_coop(a.g, sm->hv[h], threadIdx.x, RCM_T, claim);
      __syncthreads(); /* sm->nh is reset by the next chunk */
    }
    grid.sync();
    const int w = ((volatile int *)st->count)[sl];
    if (w == 0) break;
    lastmin = ((volatile u64 *)st->minkey)[sl];
    s = e;
    e += w;
    ++L;
  }
  *nlvl = L + 1;
  *size = e;
  *best = lastmin;
  if (gt == 0) {
    st->t_bfs += rcm_now() - t0;
    ++st->bfs_runs;
    st->bfs_levels += L + 1;
  }
}

/* Pushes position P of vertex u (placed in level L2 - 1) to its neighbours of level L2; a
 * vertex of more than RCM_HEAVY neighbours is listed for a block to push after a barrier. */
static __device__ __forceinline__ void rcm_push(const rcm_args_t &a, int u, int P, int L2)
{
  if (a.g.deg[u] > RCM_HEAVY) {
    const int h = atomicAdd(&a.st->nheavy[(L2 - 2) % 3], 1);
    a.heavy_u[h] = u;
    a.heavy_P[h] = P;
    return;
  }
  rcm_for_nbrs(a.g, u, [&](int w) {
    if (a.lvl[w] == L2) atomicMin(&a.ppos[w], P);
  });
}

/* The look-back of chunk c of a level (epoch ep), by the 32 lanes of warp 0: publishes the
 * chunk's count agg and returns the children of the chunks before it (every lane). Flag word:
 * epoch << 33 | inclusive << 32 | count. A chunk publishes its count (aggregate) before it
 * looks back, so a lane waits only for that, never for another chunk's look-back; each lane
 * reads one predecessor, 32 at a time, and the nearest inclusive one ends the walk (chunk 0
 * publishes an inclusive count at once). */
static __device__ int rcm_lookback(u64 *flags, int c, u64 ep, int agg)
{
  const int lane = threadIdx.x & 31;
  int prefix = 0;
  if (c > 0) {
    if (lane == 0) atomicExch(&flags[c], (ep << 33) | (u64)(unsigned)agg);
    for (int j0 = c - 1;; j0 -= 32) {
      const int j = j0 - lane;
      u64 f = 0;
      if (j >= 0) do {
          f = ((volatile u64 *)flags)[j];
        } while ((f >> 33) != ep);
      const unsigned incl = __ballot_sync(0xffffffffu, j >= 0 && ((f >> 32) & 1u));
      const int stop = incl ? __ffs(incl) - 1 : 31;
      int v = j >= 0 && lane <= stop ? (int)(unsigned)(f & 0xffffffffu) : 0;
      for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
      prefix += v;
      if (incl || j0 < 32) break;
    }
  }
  if (lane == 0) {
    __threadfence();
    atomicExch(&flags[c], (ep << 33) | (1ull << 32) | (u64)(unsigned)(prefix + agg));
  }
  return prefix;
}

/* Numbers root's component from position base (lvl[] from root's BFS). Per level: the
 * parents, a chunk of RCM_T a block, count their children (a parent of more than RCM_HEAVY
 * neighbours counted by the whole block), scan, look back, and each writes up to RCM_LOCAL
 * children itself. A parent of more children or neighbours is listed, and after a barrier the
 * grid gathers each listed parent's children keys into their positions (a block a parent)
 * and, after another, ranks each by counting the smaller keys of its parent's (keys are
 * distinct): O(c^2) for c children, spread over the grid. Placed children of more than
 * RCM_HEAVY neighbours push their positions after a last barrier, a block each. */
static __device__ void rcm_number(const rcm_args_t &a, cgrp::grid_group &grid, rcm_smem_t *sm,
                                  int root, int base, u64 *epoch)
{
  const int64_t gt = (int64_t)blockIdx.x * RCM_T + threadIdx.x, T = (int64_t)gridDim.x * RCM_T;
  rcm_state_t *st = a.st;
  if (gt == 0) {
    a.cm[base] = root;
    a.placed[root] = 1;
    st->nbig[0] = st->nheavy[0] = 0;
  }
  if (blockIdx.x == 0)
    rcm_for_nbrs_coop(a.g, root, threadIdx.x, RCM_T, [&](int w) {
      if (a.lvl[w] == 1) atomicMin(&a.ppos[w], base);
    });
  grid.sync();
  int ls = base, le = base + 1, L = 0;
  while (ls < le) {
    const u64 ep = ++*epoch;
    const int nch = (le - ls + RCM_T - 1) / RCM_T;
    if (gt == 0) { /* slots last read after the barriers of level L - 2 */
      st->nbig[(L + 1) % 3] = 0;
      st->nheavy[(L + 1) % 3] = 0;
    }
    for (int c = blockIdx.x; c < nch; c += gridDim.x) {
      const int p = ls + c * RCM_T + (int)threadIdx.x;
      const int v = p < le ? a.cm[p] : -1;
      const int heavy = v >= 0 && a.g.deg[v] > RCM_HEAVY;
      int cnt = 0;
      if (threadIdx.x == 0) sm->nh = 0;
      __syncthreads();
      if (heavy) {
        const int h = atomicAdd(&sm->nh, 1);
        sm->hv[h] = v;
        sm->hslot[h] = threadIdx.x;
      } else if (v >= 0) {
        rcm_for_nbrs(a.g, v, [&](int u) { cnt += a.ppos[u] == p; });
      }
      __syncthreads();
      for (int h = 0; h < sm->nh; ++h) { /* the heavy parents' counts, by the block */
        const int hp = ls + c * RCM_T + sm->hslot[h];
        int hc = 0;
        rcm_for_nbrs_coop(a.g, sm->hv[h], threadIdx.x, RCM_T,
                          [&](int u) { hc += a.ppos[u] == hp; });
        if (threadIdx.x == 0) sm->hsum = 0;
        __syncthreads();
        for (int o = 16; o > 0; o >>= 1) hc += __shfl_xor_sync(0xffffffffu, hc, o);
        if ((threadIdx.x & 31) == 0 && hc) atomicAdd(&sm->hsum, hc);
        __syncthreads();
        if (threadIdx.x == sm->hslot[h]) cnt = sm->hsum;
        __syncthreads();
      }
      int loc, agg;
      rcm_scan_t(sm->scan).ExclusiveSum(cnt, loc, agg);
      if (threadIdx.x < 32) {
        const int pre = rcm_lookback(a.flags, c, ep, agg);
        if (threadIdx.x == 0) sm->prefix = pre;
      }
      __syncthreads();
      const int first = le + sm->prefix + loc;
      if (cnt > 0 && cnt <= RCM_LOCAL && !heavy) {
        u64 k[RCM_LOCAL] = {0};
        int c2 = 0;
        rcm_for_nbrs(a.g, v, [&](int u) {
          if (a.ppos[u] != p) return;
          const u64 x = rcm_key(a.g.deg[u], u);
          int j = c2++;
          for (; j > 0 && k[j - 1] > x; --j) k[j] = k[j - 1];
          k[j] = x;
        });
        for (int j = 0; j < cnt; ++j) {
          const int u = (int)(unsigned)(k[j] & 0xffffffffu);
          a.cm[first + j] = u;
          a.placed[u] = 1;
          rcm_push(a, u, first + j, L + 2);
        }
      } else if (cnt > 0) {
        const int b = atomicAdd(&st->nbig[L % 3], 1);
        a.big_v[b] = v;
        a.big_p[b] = p;
        a.big_base[b] = first;
        a.big_cnt[b] = cnt;
        a.big_fill[b] = 0;
      }
      if (c == nch - 1 && threadIdx.x == 0) st->total[L & 1] = sm->prefix + agg;
      __syncthreads(); /* sm is reused by the next chunk */
    }
    grid.sync();
    const int total = ((volatile int *)st->total)[L & 1];
    const int nb = ((volatile int *)st->nbig)[L % 3];
    if (nb > 0) {
      for (int b = blockIdx.x; b < nb; b += gridDim.x) { /* gather, a block a parent */
        const int bv = a.big_v[b], bp = a.big_p[b], bbase = a.big_base[b];
        rcm_for_nbrs_coop(a.g, bv, threadIdx.x, RCM_T, [&](int u) {
          if (a.ppos[u] != bp) return;
          const int P = bbase + atomicAdd(&a.big_fill[b], 1);
          a.keys[P] = rcm_key(a.g.deg[u], u);
          a.segb[P] = b;
        });
      }
      grid.sync();
      for (int64_t P = le + gt; P < (int64_t)le + total; P += T) { /* rank and place */
        const int b = a.segb[P];
        if (b < 0) continue;
        const u64 x = a.keys[P];
        const int bbase = a.big_base[b], bcnt = a.big_cnt[b];
        int r = 0;
        for (int j = bbase; j < bbase + bcnt; ++j) r += a.keys[j] < x;
        const int u = (int)(unsigned)(x & 0xffffffffu);
        a.cm[bbase + r] = u;
        a.placed[u] = 1;
        rcm_push(a, u, bbase + r, L + 2);
      }
      if (gt == 0) ++st->big_levels;
      grid.sync();
    }
    const int nh = ((volatile int *)st->nheavy)[L % 3];
    if (nh > 0) { /* the heavy children's pushes, a block each */
      for (int h = blockIdx.x; h < nh; h += gridDim.x) {
        const int u = a.heavy_u[h], P = a.heavy_P[h];
        rcm_for_nbrs_coop(a.g, u, threadIdx.x, RCM_T, [&](int w) {
          if (a.lvl[w] == L + 2) atomicMin(&a.ppos[w], P);
        });
      }
      grid.sync();
    }
    ls = le;
    le += total;
    ++L;
  }
  if (gt == 0) st->number_levels += L;
}

static __global__ void __launch_bounds__(RCM_T) rcm_kernel(rcm_args_t a)
{
  cgrp::grid_group grid = cgrp::this_grid();
  __shared__ rcm_smem_t sm;
  const int n = a.g.n;
  const int64_t gt = (int64_t)blockIdx.x * RCM_T + threadIdx.x, T = (int64_t)gridDim.x * RCM_T;
  rcm_state_t *st = a.st;
  if (gt == 0) st->declined = ((volatile int *)&st->directed)[0] ? 3 : 0;
  grid.sync();
  for (int64_t u = gt; u < n; u += T) {
    a.stamp[u] = 0;
    a.ppos[u] = INT_MAX;
    a.placed[u] = 0;
    a.segb[u] = -1;
    if (a.g.deg[u] > GS_RCM_DEV_DEGREE) atomicExch(&st->declined, 2);
  }
  if (gt == 0) {
    st->start[0] = st->start[1] = ~0ull;
    st->t_bfs = st->t_number = 0;
    st->bfs_runs = st->bfs_levels = st->number_levels = st->big_levels = st->components = 0;
  }
  grid.sync();
  if (((volatile int *)&st->declined)[0]) return;
  const int z = ((volatile int *)&st->isolated)[0];
  for (int64_t k = gt; k < z; k += T) a.placed[a.cm[k]] = 1;
  grid.sync();
  int done = z, id = 0, comps = 0;
  u64 epoch = 0;
  while (done < n) {
    if (++comps > GS_RCM_DEV_COMPONENTS) {
      if (gt == 0) st->declined = 1;
      return;
    }
    /* the component's start: the least (degree, index) among the unnumbered vertices */
    const int cs = comps & 1;
    u64 k = ~0ull;
    for (int64_t u = gt; u < n; u += T)
      if (!a.placed[u]) {
        const u64 x = rcm_key(a.g.deg[u], (int)u);
        k = x < k ? x : k;
      }
    k = rcm_block_min(k, &sm);
    if (threadIdx.x == 0) atomicMin(&st->start[cs], k);
    if (gt == 0) st->start[cs ^ 1] = ~0ull; /* read after the barrier before the last search */
    grid.sync();
    int root = (int)(unsigned)(((volatile u64 *)st->start)[cs] & 0xffffffffu);
    /* George and Liu's pseudo-peripheral root (core/order.c, rcm_root) */
    int nlvl, size, nl;
    u64 best;
    rcm_bfs(a, grid, &sm, root, ++id, &nlvl, &size, &best);
    while (nlvl > 1 && nlvl < size) {
      root = (int)(unsigned)(best & 0xffffffffu);
      rcm_bfs(a, grid, &sm, root, ++id, &nl, &size, &best);
      if (nl <= nlvl) break;
      nlvl = nl;
    }
    const u64 t1 = gt == 0 ? rcm_now() : 0;
    rcm_number(a, grid, &sm, root, done, &epoch);
    if (gt == 0) {
      st->t_number += rcm_now() - t1;
      st->components = comps;
    }
    if (((volatile int *)&st->declined)[0]) return;
    done += size;
  }
  grid.sync();
  for (int64_t k2 = gt; k2 < n; k2 += T) a.perm[k2] = a.cm[n - 1 - k2];
}

/* ---- host side ------------------------------------------------------------------------------ */

/* The graph the kernel walks (rcm_run's mode): A's pattern (structurally symmetric, known), A +
 * A^T (general storage), or A's pattern under a claim of symmetry still to be checked (the
 * transpose is built, compared with A on the device, and the order declined when they differ:
 * the host walks the directed pattern there). */
enum { RCM_GRAPH_A = 0, RCM_GRAPH_A_AT = 1, RCM_GRAPH_CLAIMED = 2 };

/* row v of A against row v of A^T (a warp a row): st->directed = 1 where they differ. */
static __global__ void rcm_verify_kernel(int n, const int *__restrict__ rp,
                                         const int *__restrict__ ci, const int *__restrict__ tp,
                                         const int *__restrict__ ti, rcm_state_t *st)
{
  const int lane = threadIdx.x & 31;
  GS_GRID_STRIDE(t, (int64_t)n * 32)
  {
    const int v = (int)(t >> 5), a = rp[v], len = rp[v + 1] - a, b = tp[v];
    int bad = len != tp[v + 1] - b;
    for (int k = lane; !bad && k < len; k += 32) bad = ci[a + k] != ti[b + k];
    if (bad) atomicExch(&st->directed, 1);
  }
}

/* The order of A (square, 32-bit offsets, n > 0) into d_perm; see gs_rcm_dev. */
static gs_status_t rcm_run(gs_context_t *ctx, const gs_dcsr_t *A, int mode, int *d_perm,
                           int *ordered, gs_rcm_dev_stats_t *stats)
{
  gs_status_t st = GS_SUCCESS;
  const int n = A->m;
  int *row = NULL, *key = NULL, *tp = NULL, *ti = NULL, *deg = NULL, *iso = NULL, *pos = NULL;
  int *cm = NULL, *q = NULL, *stamp = NULL, *lvl = NULL, *ppos = NULL;
  int *big = NULL, *segb = NULL, *heavy = NULL;
  u64 *keys = NULL;
  unsigned char *placed = NULL;
  u64 *flags = NULL;
  rcm_state_t *dst = NULL;
  void *tmp = NULL;
  size_t tb = 0;
  *ordered = 0;
  const int nnz = (int)A->nnz;
  rcm_graph_t g = {n, A->d_row_ptr32, A->d_col, NULL, NULL, NULL};
  int coop = 0, per_sm = 0;
  GS_TRY(GS_CUDA(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, ctx->device)));
  GS_TRY(GS_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, rcm_kernel, RCM_T, 0)));
  if (!coop || per_sm < 1) return GS_SUCCESS; /* declined: the host orders */
  if (per_sm > RCM_PER_SM) per_sm = RCM_PER_SM;
  GS_TRY(gs_dmalloc_ordered(ctx, (void **)&dst, sizeof(rcm_state_t), "RCM state"));
  GS_TRY(GS_CUDA(cudaMemsetAsync(dst, 0, sizeof(rcm_state_t), ctx->stream)));

  if (mode != RCM_GRAPH_A && nnz > 0) { /* the transpose's rows: entries stably sorted by column */
    GS_TRY(gs_dmalloc_ordered(ctx, (void **)&row, (size_t)nnz * sizeof(int), "RCM entry rows"));
    GS_TRY(gs_dmalloc_ordered(ctx, (void **)&key, (size_t)nnz * sizeof(int), "RCM sorted columns"));
    GS_TRY(gs_dmalloc_ordered(ctx, (void **)&ti, (size_t)nnz * sizeof(int),
                              "RCM transpose columns"));
    GS_TRY(gs_dmalloc_ordered(ctx, (void **)&tp, ((size_t)n + 1) * sizeof(int),
                              "RCM transpose rows"));
    rcm_rows_kernel<<<gs_grid_blocks(n, 256), 256, 0, ctx->stream>>>(n, A->d_row_ptr32, row);
    GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "rcm_rows_kernel"));
    int bits = 1;
    while (bits < 32 && (1ll << bits) <= (long long)n) ++bits;
    GS_TRY(GS_CUDA(cub::DeviceRadixSort::SortPairs(NULL, tb, A->d_col, key, row, ti, nnz, 0, bits,
                                                   ctx->stream)));
    GS_TRY(gs_dmalloc_ordered(ctx, &tmp, tb ? tb : 1, "RCM sort scratch"));
    GS_TRY(GS_CUDA(cub::DeviceRadixSort::SortPairs(tmp, tb, A->d_col, key, row, ti, nnz, 0, bits,
                                                   ctx->stream)));
    rcm_tptr_kernel<<<gs_grid_blocks((int64_t)n + 1, 256), 256, 0, ctx->stream>>>(n, nnz, key, tp);
    GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "rcm_tptr_kernel"));
    gs_dfree(ctx, tmp);
    gs_dfree(ctx, row);
    gs_dfree(ctx, key);
    tmp = NULL;
    row = key = NULL;
    g.tp = tp;
    g.ti = ti;
    if (mode == RCM_GRAPH_CLAIMED) { /* A + A^T is A's set when the claim holds, else declined */
      rcm_verify_kernel<<<gs_grid_blocks((int64_t)n * 32, 256), 256, 0, ctx->stream>>>(
          n, A->d_row_ptr32, A->d_col, tp, ti, dst);
      GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "rcm_verify_kernel"));
    }
  }
  GS_TRY(gs_dmalloc_ordered(ctx, (void **)&deg, (size_t)n * sizeof(int), "RCM degrees"));
  GS_TRY(gs_dmalloc_ordered(ctx, (void **)&iso, (size_t)n * sizeof(int), "RCM isolated vertices"));
  GS_TRY(gs_dmalloc_ordered(ctx, (void **)&pos, (size_t)n * sizeof(int), "RCM isolated positions"));
  GS_TRY(gs_dmalloc_ordered(ctx, (void **)&cm, (size_t)n * sizeof(int), "RCM order"));
  rcm_degree_kernel<<<gs_grid_blocks((int64_t)n * 32, 256), 256, 0, ctx->stream>>>(g, deg, iso);
  GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "rcm_degree_kernel"));
  g.deg = deg;
  tb = 0;
  GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(NULL, tb, iso, pos, n, ctx->stream)));
  GS_TRY(gs_dmalloc_ordered(ctx, &tmp, tb ? tb : 1, "RCM scan scratch"));
  GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(tmp, tb, iso, pos, n, ctx->stream)));
  rcm_isolated_kernel<<<gs_grid_blocks(n, 256), 256, 0, ctx->stream>>>(n, iso, pos, cm, dst);
  GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "rcm_isolated_kernel"));
  gs_dfree(ctx, tmp);
  gs_dfree(ctx, iso);
  gs_dfree(ctx, pos);
  tmp = NULL;
  iso = pos = NULL;

  GS_TRY(gs_dmalloc_ordered(ctx, (void **)&q, (size_t)n * sizeof(int), "RCM queue"));
  GS_TRY(gs_dmalloc_ordered(ctx, (void **)&stamp, (size_t)n * sizeof(int), "RCM stamps"));
  GS_TRY(gs_dmalloc_ordered(ctx, (void **)&lvl, (size_t)n * sizeof(int), "RCM levels"));
  GS_TRY(gs_dmalloc_ordered(ctx, (void **)&ppos, (size_t)n * sizeof(int), "RCM parents"));
  GS_TRY(gs_dmalloc_ordered(ctx, (void **)&placed, (size_t)n, "RCM placed marks"));
  {
    const size_t nbig = (size_t)n / (RCM_LOCAL + 1) + 1; /* a level's parents of many children */
    GS_TRY(gs_dmalloc_ordered(ctx, (void **)&big, 5 * nbig * sizeof(int),
                              "RCM parents of many children"));
    GS_TRY(gs_dmalloc_ordered(ctx, (void **)&keys, (size_t)n * sizeof(u64), "RCM children keys"));
    GS_TRY(gs_dmalloc_ordered(ctx, (void **)&segb, (size_t)n * sizeof(int),
                              "RCM children parents"));
    GS_TRY(gs_dmalloc_ordered(ctx, (void **)&heavy, 2 * (size_t)n * sizeof(int),
                              "RCM heavy pushes"));
  }
  {
    const size_t nflags = (size_t)n / RCM_T + 1;
    GS_TRY(gs_dmalloc_ordered(ctx, (void **)&flags, nflags * sizeof(u64), "RCM look-back flags"));
    GS_TRY(GS_CUDA(cudaMemsetAsync(flags, 0, nflags * sizeof(u64), ctx->stream)));
  }
  {
    rcm_args_t args;
    memset(&args, 0, sizeof args);
    args.g = g;
    args.cm = cm;
    args.perm = d_perm;
    args.q = q;
    args.stamp = stamp;
    args.lvl = lvl;
    args.ppos = ppos;
    args.placed = placed;
    args.flags = flags;
    {
      const size_t nbig = (size_t)n / (RCM_LOCAL + 1) + 1;
      args.big_v = big;
      args.big_p = big + nbig;
      args.big_base = big + 2 * nbig;
      args.big_cnt = big + 3 * nbig;
      args.big_fill = big + 4 * nbig;
    }
    args.keys = keys;
    args.segb = segb;
    args.heavy_u = heavy;
    args.heavy_P = heavy + n;
    args.st = dst;
    int64_t blocks = (int64_t)ctx->sm_count * per_sm;
    const int64_t need = ((int64_t)n + RCM_T - 1) / RCM_T;
    if (blocks > need) blocks = need;
    if (blocks < 1) blocks = 1;
    void *params[] = {&args};
    GS_TRY(GS_CUDA(cudaLaunchCooperativeKernel((const void *)rcm_kernel, dim3((unsigned)blocks),
                                               dim3(RCM_T), params, 0, ctx->stream)));
    GS_TRY(GS_CHECK_LAUNCH(ctx->stream, "rcm_kernel"));
    rcm_state_t h;
    GS_TRY(GS_CUDA(cudaMemcpyAsync(&h, dst, sizeof h, cudaMemcpyDeviceToHost, ctx->stream)));
    GS_TRY(GS_CUDA(cudaStreamSynchronize(ctx->stream)));
    *ordered = h.declined == 0;
    if (stats) {
      stats->bfs_ms = 1e-6 * (double)h.t_bfs;
      stats->number_ms = 1e-6 * (double)h.t_number;
      stats->bfs_runs = h.bfs_runs;
      stats->bfs_levels = h.bfs_levels;
      stats->number_levels = h.number_levels;
      stats->big_levels = h.big_levels;
      stats->components = h.components;
      stats->isolated = h.isolated;
      stats->declined = h.declined;
    }
  }
cleanup:
  if (st != GS_SUCCESS) cudaStreamSynchronize(ctx->stream);
  gs_dfree(ctx, tmp);
  gs_dfree(ctx, row);
  gs_dfree(ctx, key);
  gs_dfree(ctx, tp);
  gs_dfree(ctx, ti);
  gs_dfree(ctx, deg);
  gs_dfree(ctx, iso);
  gs_dfree(ctx, pos);
  gs_dfree(ctx, cm);
  gs_dfree(ctx, q);
  gs_dfree(ctx, stamp);
  gs_dfree(ctx, lvl);
  gs_dfree(ctx, ppos);
  gs_dfree(ctx, placed);
  gs_dfree(ctx, flags);
  gs_dfree(ctx, big);
  gs_dfree(ctx, keys);
  gs_dfree(ctx, segb);
  gs_dfree(ctx, heavy);
  gs_dfree(ctx, dst);
  return st;
}

extern "C" gs_status_t gs_rcm_dev(gs_context_t *ctx, gs_matrix_t *M, int *d_perm, int *ordered,
                                  gs_rcm_dev_stats_t *stats)
{
  gs_dcsr_t D;
  *ordered = 0;
  if (stats) memset(stats, 0, sizeof *stats);
  GS_CHECK(gs_matrix_device_csr(M, &D));
  if (D.m != D.n)
    return GS_ERROR(GS_ERR_DIMENSION, "RCM: the matrix is %d x %d, not square", D.m, D.n);
  if (D.wide || (D.nnz > 0 && !D.d_row_ptr32))
    return GS_ERROR(GS_ERR_UNSUPPORTED, "RCM on the device: 64-bit row offsets");
  if (D.m == 0) {
    *ordered = 1;
    return GS_SUCCESS;
  }
  const gs_features_t *f = gs_matrix_features(M);
  const int symmetric = f && f->structurally_symmetric;
  if (!symmetric && gs_matrix_stored_symmetry(M) != GS_SYM_GENERAL)
    return GS_SUCCESS; /* a directed graph: declined, the host orders */
  if (f && f->row_max - 1 > GS_RCM_DEV_DEGREE) { /* a degree the kernel would decline */
    if (stats) stats->declined = 2;
    return GS_SUCCESS;
  }
  return rcm_run(ctx, &D, symmetric ? RCM_GRAPH_A : RCM_GRAPH_A_AT, d_perm, ordered, stats);
}

extern "C" gs_status_t gs_rcm_dev_csr(gs_context_t *ctx, const gs_csr_t *H, gs_idx_t *perm,
                                      int *ordered)
{
  gs_status_t st = GS_SUCCESS;
  int32_t *rp = NULL;
  gs_idx_t *ci = NULL;
  int *d_perm = NULL;
  if (!ctx || !H || !perm || !ordered)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_rcm_dev_csr: NULL argument");
  *ordered = 0;
  if (H->m != H->n)
    return GS_ERROR(GS_ERR_DIMENSION, "RCM: the matrix is %d x %d, not square", H->m, H->n);
  if (H->nnz > INT32_MAX) return GS_SUCCESS; /* declined: 32-bit offsets only */
  if (H->m == 0) {
    *ordered = 1;
    return GS_SUCCESS;
  }
  gs_off_t row_max = 0;
  for (gs_idx_t i = 0; i < H->m; ++i)
    if (H->row_ptr[i + 1] - H->row_ptr[i] > row_max) row_max = H->row_ptr[i + 1] - H->row_ptr[i];
  if (row_max - 1 > GS_RCM_DEV_DEGREE) return GS_SUCCESS; /* declined by the kernel anyway */
  GS_TRY(gs_context_activate(ctx));
  GS_TRY(gs_upload_offsets32(ctx, &rp, H->row_ptr, (size_t)H->m + 1, "RCM row offsets"));
  if (H->nnz > 0)
    GS_TRY(gs_upload(ctx, (void **)&ci, H->col, (size_t)H->nnz * sizeof *ci, "RCM columns"));
  GS_TRY(gs_dmalloc_ordered(ctx, (void **)&d_perm, (size_t)H->m * sizeof(int), "RCM order"));
  {
    gs_dcsr_t D;
    memset(&D, 0, sizeof D);
    D.m = D.n = H->m;
    D.nnz = H->nnz;
    D.d_row_ptr32 = rp;
    D.d_col = ci;
    GS_TRY(rcm_run(ctx, &D, H->symmetry == GS_SYM_GENERAL ? RCM_GRAPH_A_AT : RCM_GRAPH_CLAIMED,
                   d_perm, ordered, NULL));
  }
  if (*ordered)
    GS_TRY(gs_copy_to_host(ctx, perm, d_perm, (size_t)H->m * sizeof *perm));
cleanup:
  gs_dfree(ctx, rp);
  gs_dfree(ctx, ci);
  gs_dfree(ctx, d_perm);
  return st;
}
