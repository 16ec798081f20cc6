/* core/order.c: orderings of a host CSR (interface in core/order.h): reverse Cuthill-McKee, the
 * degree ordering, the x-lines locality predictor, the symmetric permutation P A P^T (on
 * threads for large matrices), the bandwidth, and the row-range check they share with the
 * multi-GPU partitioner (multigpu/partition.c) and pkt's reordering (spmv/pkt_build.c). Pure C11.
 * Costs: RCM O(nnz) to build the graph of A + A^T plus O(nnz) per level structure and
 * O(d log d) per vertex of degree d; permute O(nnz) plus the sort of each row that the
 * renumbering leaves out of order. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/order.h"
#include "core/parallel.h"

/* ---- row checks ------------------------------------------------------------------------------ */

/* Rows [r0, r1) of A: arrays present, row pointers non-decreasing inside [0, nnz] (row_ptr[0] = 0
 * and row_ptr[m] = nnz when the range touches the ends), columns in [0, n). Reads only those rows,
 * so that one part's split costs its own entries. */
gs_status_t gs_csr_check_rows(const gs_csr_t *A, gs_idx_t r0, gs_idx_t r1, const char *fn)
{
  if (A->m < 0 || A->n < 0 || A->nnz < 0)
    return GS_ERROR(GS_ERR_INVALID_ARG, "%s: negative size %d x %d with %lld entries", fn, A->m,
                    A->n, (long long)A->nnz);
  if (!A->row_ptr || (A->nnz > 0 && (!A->col || !A->val)))
    return GS_ERROR(GS_ERR_INVALID_ARG, "%s: matrix arrays are NULL", fn);
  if (r0 == 0 && A->row_ptr[0] != 0)
    return GS_ERROR(GS_ERR_INVALID_ARG, "%s: row_ptr[0] is %lld, not 0", fn,
                    (long long)A->row_ptr[0]);
  if (r1 == A->m && A->row_ptr[A->m] != A->nnz)
    return GS_ERROR(GS_ERR_INVALID_ARG, "%s: row_ptr[m] = %lld but nnz = %lld", fn,
                    (long long)A->row_ptr[A->m], (long long)A->nnz);
  if (A->row_ptr[r0] < 0 || A->row_ptr[r0] > A->nnz)
    return GS_ERROR(GS_ERR_INVALID_ARG, "%s: row_ptr[%d] = %lld outside 0..%lld", fn, r0,
                    (long long)A->row_ptr[r0], (long long)A->nnz);
  for (gs_idx_t i = r0; i < r1; ++i) {
    if (A->row_ptr[i + 1] < A->row_ptr[i])
      return GS_ERROR(GS_ERR_INVALID_ARG, "%s: row_ptr decreases at row %d", fn, i);
    if (A->row_ptr[i + 1] > A->nnz)
      return GS_ERROR(GS_ERR_INVALID_ARG, "%s: row_ptr[%d] = %lld exceeds nnz = %lld", fn, i + 1,
                      (long long)A->row_ptr[i + 1], (long long)A->nnz);
  }
  for (gs_idx_t i = r0; i < r1; ++i)
    for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p)
      if (A->col[p] < 0 || A->col[p] >= A->n)
        return GS_ERROR(GS_ERR_INVALID_ARG, "%s: row %d: column %d outside 0..%d", fn, i,
                        A->col[p], A->n - 1);
  return GS_SUCCESS;
}

/* ---- reverse Cuthill-McKee ------------------------------------------------------------------- */

/* Adjacency of the symmetrized pattern without the diagonal, each neighbour once. */
typedef struct rcm_graph {
  gs_idx_t n;
  const gs_off_t *ptr; /* n + 1 */
  const gs_idx_t *adj; /* may hold a vertex itself (a borrowed diagonal): never counted in deg,
                          and already seen when met */
  gs_idx_t *deg;       /* n */
  gs_off_t *own_ptr;   /* what graph_build allocated (NULL where ptr and adj are A's) */
  gs_idx_t *own_adj;
} rcm_graph_t;

static void graph_free(rcm_graph_t *g)
{
  free(g->own_ptr);
  free(g->own_adj);
  free(g->deg);
}

/* The graph of A + A^T without its diagonal, each neighbour once (A already checked). mark: n
 * entries of scratch. Symmetric or skew storage, expanded (both triangles stored) is its own
 * graph: with strictly increasing columns in every row, ptr and adj are A's arrays (the
 * diagonal left in adj, out of deg), else a copy without the diagonal and the repeats. A false
 * claim of symmetry gives another order, still a permutation. */
static gs_status_t graph_build(const gs_csr_t *A, rcm_graph_t *g, gs_idx_t *mark)
{
  const gs_idx_t n = A->m;
  memset(g, 0, sizeof *g);
  g->n = n;
  g->deg = malloc((size_t)n * sizeof *g->deg);
  if (!g->deg) goto oom;
  if (A->symmetry != GS_SYM_GENERAL) {
    int increasing = 1;
    for (gs_idx_t i = 0; i < n; ++i) {
      const gs_off_t b = A->row_ptr[i], e = A->row_ptr[i + 1];
      gs_idx_t d = (gs_idx_t)(e - b);
      for (gs_off_t p = b; p < e; ++p) {
        d -= A->col[p] == i;
        increasing &= p == b || A->col[p] > A->col[p - 1];
      }
      g->deg[i] = d;
    }
    if (increasing) {
      g->ptr = A->row_ptr;
      g->adj = A->col;
      return GS_SUCCESS;
    }
    gs_off_t w = 0;
    for (gs_idx_t i = 0; i < n; ++i) w += A->row_ptr[i + 1] - A->row_ptr[i];
    g->own_ptr = malloc(((size_t)n + 1) * sizeof *g->own_ptr);
    g->own_adj = malloc((size_t)(w > 0 ? w : 1) * sizeof *g->own_adj);
    if (!g->own_ptr || !g->own_adj) goto oom;
    for (gs_idx_t i = 0; i < n; ++i) mark[i] = -1;
    w = 0;
    for (gs_idx_t i = 0; i < n; ++i) { /* without the diagonal, each neighbour once */
      const gs_off_t start = w;
      for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) {
        const gs_idx_t j = A->col[p];
        if (j != i && mark[j] != i) {
          mark[j] = i;
          g->own_adj[w++] = j;
        }
      }
      g->own_ptr[i] = start;
      g->deg[i] = (gs_idx_t)(w - start);
    }
    g->own_ptr[n] = w;
    g->ptr = g->own_ptr;
    g->adj = g->own_adj;
    return GS_SUCCESS;
  }
  gs_off_t *ptr = g->own_ptr = calloc((size_t)n + 1, sizeof *ptr);
  if (!ptr) goto oom;
  for (gs_idx_t i = 0; i < n; ++i)
    for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) {
      const gs_idx_t j = A->col[p];
      if (j != i) {
        ++ptr[i + 1];
        ++ptr[j + 1];
      }
    }
  for (gs_idx_t i = 0; i < n; ++i) ptr[i + 1] += ptr[i];
  gs_idx_t *adj = g->own_adj = malloc((size_t)(ptr[n] > 0 ? ptr[n] : 1) * sizeof *adj);
  if (!adj) goto oom;
  /* ptr[i] as row i's cursor: afterwards ptr[i] is row i's end, shifted back below. */
  for (gs_idx_t i = 0; i < n; ++i)
    for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) {
      const gs_idx_t j = A->col[p];
      if (j != i) {
        adj[ptr[i]++] = j;
        adj[ptr[j]++] = i;
      }
    }
  for (gs_idx_t i = n; i > 0; --i) ptr[i] = ptr[i - 1];
  ptr[0] = 0;
  /* Drop repeated neighbours (a_ij and a_ji both stored, duplicates in A), compacting in place. */
  for (gs_idx_t i = 0; i < n; ++i) mark[i] = -1;
  gs_off_t w = 0, s = 0;
  for (gs_idx_t i = 0; i < n; ++i) {
    const gs_off_t e = ptr[i + 1], start = w;
    for (gs_off_t p = s; p < e; ++p) {
      const gs_idx_t j = adj[p];
      if (mark[j] != i) {
        mark[j] = i;
        adj[w++] = j;
      }
    }
    ptr[i] = start;
    g->deg[i] = (gs_idx_t)(w - start);
    s = e;
  }
  ptr[n] = w;
  if (w > 0) {
    gs_idx_t *shrunk = realloc(adj, (size_t)w * sizeof *adj);
    if (shrunk) g->own_adj = shrunk;
  }
  g->ptr = g->own_ptr;
  g->adj = g->own_adj;
  return GS_SUCCESS;
oom:
  graph_free(g);
  memset(g, 0, sizeof *g);
  return GS_ERROR(GS_ERR_HOST_MEMORY, "gs_csr_rcm: out of host memory for the graph of a %d x %d "
                  "matrix with %lld entries", n, n, (long long)A->nnz);
}

/* Key that orders vertices by degree, then index. */
static inline uint64_t rcm_key(const rcm_graph_t *g, gs_idx_t v)
{
  return ((uint64_t)(uint32_t)g->deg[v] << 32) | (uint32_t)v;
}

static int cmp_u64(const void *a, const void *b)
{
  const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

static void sort_keys(uint64_t *k, gs_idx_t c)
{
  if (c > 16) {
    qsort(k, (size_t)c, sizeof *k, cmp_u64);
    return;
  }
  for (gs_idx_t a = 1; a < c; ++a) {
    const uint64_t t = k[a];
    gs_idx_t b = a;
    for (; b > 0 && k[b - 1] > t; --b) k[b] = k[b - 1];
    k[b] = t;
  }
}

/* Rooted level structure of root's component (SPARSPAK's ROOTLS): ls gets the component in
 * level order, *size its vertex count, *last the position in ls where the last level starts;
 * returns the number of levels. seen (all 0 on entry) is 0 again on return. */
static gs_idx_t rcm_levels(const rcm_graph_t *g, gs_idx_t root, unsigned char *seen,
                           gs_idx_t *ls, gs_idx_t *size, gs_idx_t *last)
{
  gs_idx_t head = 0, tail = 1, nlvl = 0, lstart = 0;
  ls[0] = root;
  seen[root] = 1;
  while (head < tail) {
    const gs_idx_t lend = tail;
    lstart = head;
    ++nlvl;
    for (; head < lend; ++head) {
      const gs_idx_t v = ls[head];
      for (gs_off_t p = g->ptr[v]; p < g->ptr[v + 1]; ++p) {
        const gs_idx_t u = g->adj[p];
        if (!seen[u]) {
          seen[u] = 1;
          ls[tail++] = u;
        }
      }
    }
  }
  for (gs_idx_t k = 0; k < tail; ++k) seen[ls[k]] = 0;
  *size = tail;
  *last = lstart;
  return nlvl;
}

/* George and Liu's pseudo-peripheral vertex (SPARSPAK's FNROOT): from root, repeatedly move to
 * the vertex of least degree (then least index) in the last level while that deepens the level
 * structure. */
static gs_idx_t rcm_root(const rcm_graph_t *g, gs_idx_t root, unsigned char *seen, gs_idx_t *ls)
{
  gs_idx_t size, last;
  gs_idx_t nlvl = rcm_levels(g, root, seen, ls, &size, &last);
  while (nlvl > 1 && nlvl < size) {
    gs_idx_t best = ls[last];
    for (gs_idx_t k = last + 1; k < size; ++k)
      if (rcm_key(g, ls[k]) < rcm_key(g, best)) best = ls[k];
    root = best;
    const gs_idx_t nl = rcm_levels(g, root, seen, ls, &size, &last);
    if (nl <= nlvl) break;
    nlvl = nl;
  }
  return root;
}

/* The arguments of an ordering (A square, well formed; perm present), checked as fn. */
static gs_status_t order_args(const gs_csr_t *A, const gs_idx_t *perm, const char *fn)
{
  if (!A || !perm) return GS_ERROR(GS_ERR_INVALID_ARG, "%s: NULL argument", fn);
  if (A->m != A->n)
    return GS_ERROR(GS_ERR_DIMENSION, "%s: the matrix is %d x %d, not square", fn, A->m, A->n);
  return gs_csr_check_rows(A, 0, A->m, fn);
}

gs_status_t gs_csr_rcm(const gs_csr_t *A, gs_idx_t *perm)
{
  static const char fn[] = "gs_csr_rcm";
  gs_status_t st = GS_SUCCESS;
  GS_CHECK(order_args(A, perm, fn));
  const gs_idx_t n = A->m;
  if (n == 0) return GS_SUCCESS;

  rcm_graph_t g = {0, NULL, NULL, NULL, NULL, NULL};
  gs_idx_t *ls = malloc((size_t)n * sizeof *ls);         /* graph scratch, then level lists */
  gs_idx_t *order = malloc((size_t)n * sizeof *order);   /* vertices by degree, then index */
  unsigned char *numbered = calloc((size_t)n, 1), *seen = calloc((size_t)n, 1);
  gs_idx_t *count = NULL;
  uint64_t *keys = NULL;
  if (!ls || !order || !numbered || !seen)
    GS_FAIL(GS_ERR_HOST_MEMORY, "%s: out of host memory for %d vertices", fn, n);
  GS_TRY(graph_build(A, &g, ls));

  /* Counting sort by degree (stable, so ties stay in index order). */
  gs_idx_t maxdeg = 0;
  for (gs_idx_t v = 0; v < n; ++v)
    if (g.deg[v] > maxdeg) maxdeg = g.deg[v];
  count = calloc((size_t)maxdeg + 2, sizeof *count);
  keys = malloc(((size_t)maxdeg + 1) * sizeof *keys);
  if (!count || !keys) GS_FAIL(GS_ERR_HOST_MEMORY, "%s: out of host memory", fn);
  for (gs_idx_t v = 0; v < n; ++v) ++count[g.deg[v] + 1];
  for (gs_idx_t d = 0; d <= maxdeg; ++d) count[d + 1] += count[d];
  for (gs_idx_t v = 0; v < n; ++v) order[count[g.deg[v]]++] = v;

  /* Cuthill-McKee into perm, one component at a time, then reversed. */
  gs_idx_t done = 0, next = 0;
  while (done < n) {
    while (numbered[order[next]]) ++next;
    const gs_idx_t root = rcm_root(&g, order[next], seen, ls);
    gs_idx_t head = done, tail = done + 1;
    perm[done] = root;
    numbered[root] = 1;
    while (head < tail) {
      const gs_idx_t v = perm[head++];
      gs_idx_t c = 0;
      for (gs_off_t p = g.ptr[v]; p < g.ptr[v + 1]; ++p) {
        const gs_idx_t u = g.adj[p];
        if (!numbered[u]) {
          numbered[u] = 1;
          keys[c++] = rcm_key(&g, u);
        }
      }
      sort_keys(keys, c);
      for (gs_idx_t k = 0; k < c; ++k) perm[tail++] = (gs_idx_t)(uint32_t)keys[k];
    }
    done = tail;
  }
  for (gs_idx_t a = 0, b = n - 1; a < b; ++a, --b) {
    const gs_idx_t t = perm[a];
    perm[a] = perm[b];
    perm[b] = t;
  }

cleanup:
  graph_free(&g);
  free(ls);
  free(order);
  free(numbered);
  free(seen);
  free(count);
  free(keys);
  return st;
}

/* ---- degree ordering and the locality predictor ------------------------------------------- */

gs_status_t gs_csr_degree_order(const gs_csr_t *A, gs_idx_t *perm)
{
  static const char fn[] = "gs_csr_degree_order";
  gs_status_t st = GS_SUCCESS;
  GS_CHECK(order_args(A, perm, fn));
  const gs_idx_t n = A->m;
  if (n == 0) return GS_SUCCESS;
  /* Degrees in 64 bits: a row and its column together may exceed 2^31 entries. */
  int64_t *deg = calloc((size_t)n, sizeof *deg), maxdeg = 0;
  gs_idx_t *count = NULL;
  if (!deg) GS_FAIL(GS_ERR_HOST_MEMORY, "%s: out of host memory for %d vertices", fn, n);
  for (gs_idx_t i = 0; i < n; ++i)
    for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) {
      const gs_idx_t j = A->col[p];
      if (j != i) {
        ++deg[i];
        ++deg[j];
      }
    }
  for (gs_idx_t i = 0; i < n; ++i)
    if (deg[i] > maxdeg) maxdeg = deg[i];
  /* Counting sort on buckets of min(degree, n): a degree above n (repeated entries) shares the
   * top bucket, which keeps the scratch at O(n). Stable: ties in index order. */
  const int64_t nb = (maxdeg < n ? maxdeg : n) + 1;
  count = calloc((size_t)nb + 1, sizeof *count);
  if (!count) GS_FAIL(GS_ERR_HOST_MEMORY, "%s: out of host memory", fn);
  for (gs_idx_t i = 0; i < n; ++i) ++count[nb - 1 - (deg[i] < n ? deg[i] : n) + 1];
  for (int64_t b = 0; b < nb; ++b) count[b + 1] += count[b];
  for (gs_idx_t i = 0; i < n; ++i) perm[count[nb - 1 - (deg[i] < n ? deg[i] : n)]++] = i;

cleanup:
  free(deg);
  free(count);
  return st;
}

/* The passes over every entry (x lines, bandwidth, P A P^T) take threads from this many
 * entries on (gs_mm_threads() of them, at most 64). */
#define ORDER_THREADS_MIN (1L << 20)

static int order_threads(const gs_csr_t *A)
{
  if (A->nnz < ORDER_THREADS_MIN || A->m < 2) return 1;
  const int nt = gs_mm_threads();
  return nt > 64 ? 64 : nt < 1 ? 1 : nt;
}

/* gs_csr_x_lines over whole blocks of rows, a share a thread, each with its own stamps: the
 * blocks are disjoint, so the shares' counts add up to the serial count exactly. */
typedef struct lines_job {
  const gs_csr_t *A;
  const gs_idx_t *perm, *inv; /* NULL, NULL: A's own order */
  size_t nlines;
  int nt;
  int64_t lines[64];
  int oom[64];
} lines_job_t;

static void lines_share(void *arg, int t)
{
  lines_job_t *J = arg;
  const gs_csr_t *A = J->A;
  const int64_t nblocks = ((int64_t)A->m + GS_ORDER_LINE_ROWS - 1) / GS_ORDER_LINE_ROWS;
  const int64_t b0 = nblocks * t / J->nt, b1 = nblocks * (t + 1) / J->nt;
  const int64_t k1 = b1 * GS_ORDER_LINE_ROWS < A->m ? b1 * GS_ORDER_LINE_ROWS : A->m;
  gs_idx_t *stamp = malloc(J->nlines * sizeof *stamp);
  if (!stamp) {
    J->oom[t] = 1;
    return;
  }
  for (size_t l = 0; l < J->nlines; ++l) stamp[l] = -1;
  int64_t lines = 0;
  for (int64_t k = b0 * GS_ORDER_LINE_ROWS; k < k1; ++k) {
    const gs_idx_t i = J->perm ? J->perm[k] : (gs_idx_t)k;
    const gs_idx_t block = (gs_idx_t)(k / GS_ORDER_LINE_ROWS);
    for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) {
      const gs_idx_t l = (J->inv ? J->inv[A->col[p]] : A->col[p]) / 8;
      if (stamp[l] != block) {
        stamp[l] = block;
        ++lines;
      }
    }
  }
  J->lines[t] = lines;
  free(stamp);
}

int64_t gs_csr_x_lines(const gs_csr_t *A, const gs_idx_t *perm)
{
  if (!A || !A->row_ptr || (A->nnz > 0 && !A->col) || A->m < 0 || A->n < 0) return -1;
  if (perm && A->m != A->n) return -1;
  const gs_idx_t n = A->n;
  lines_job_t J;
  memset(&J, 0, sizeof J);
  J.A = A;
  J.perm = perm;
  J.nlines = (size_t)n / 8 + 1;
  J.nt = order_threads(A);
  /* the stamps, a copy a thread: at most 256 MB of them */
  while (J.nt > 1 && (double)J.nt * (double)J.nlines * sizeof(gs_idx_t) > 256e6) --J.nt;
  gs_idx_t *inv = NULL;
  if (perm) {
    inv = malloc(((size_t)n + 1) * sizeof *inv);
    if (!inv) return -1;
    for (gs_idx_t k = 0; k < n; ++k) inv[perm[k]] = k;
    J.inv = inv;
  }
  if (J.nt > 1)
    gs_parallel(J.nt, lines_share, &J);
  else
    lines_share(&J, 0);
  free(inv);
  int64_t lines = 0;
  for (int t = 0; t < J.nt; ++t) {
    if (J.oom[t]) return -1;
    lines += J.lines[t];
  }
  return lines;
}

/* ---- symmetric permutation ------------------------------------------------------------------- */

/* Rows of up to SORT_RUN entries sort in place; longer ones merge through scratch. */
#define SORT_RUN 16

/* Stable sort of one row's (column, value) pairs by column: insertion sort on runs of SORT_RUN,
 * then merges through the scratch tc/tv (len entries each; unused when len <= SORT_RUN). */
static void sort_row(gs_idx_t *c, gs_val_t *v, gs_off_t len, gs_idx_t *tc, gs_val_t *tv)
{
  const gs_off_t run = SORT_RUN;
  for (gs_off_t s = 0; s < len; s += run) {
    const gs_off_t e = s + run < len ? s + run : len;
    for (gs_off_t a = s + 1; a < e; ++a) {
      const gs_idx_t kc = c[a];
      const gs_val_t kv = v[a];
      gs_off_t b = a;
      for (; b > s && c[b - 1] > kc; --b) {
        c[b] = c[b - 1];
        v[b] = v[b - 1];
      }
      c[b] = kc;
      v[b] = kv;
    }
  }
  gs_idx_t *sc = c, *dc = tc;
  gs_val_t *sv = v, *dv = tv;
  for (gs_off_t width = run; width < len; width *= 2) {
    for (gs_off_t lo = 0; lo < len; lo += 2 * width) {
      const gs_off_t mid = lo + width < len ? lo + width : len;
      const gs_off_t hi = lo + 2 * width < len ? lo + 2 * width : len;
      gs_off_t a = lo, b = mid, o = lo;
      while (a < mid && b < hi) {
        if (sc[b] < sc[a]) {
          dc[o] = sc[b];
          dv[o++] = sv[b++];
        } else {
          dc[o] = sc[a];
          dv[o++] = sv[a++];
        }
      }
      for (; a < mid; ++a, ++o) {
        dc[o] = sc[a];
        dv[o] = sv[a];
      }
      for (; b < hi; ++b, ++o) {
        dc[o] = sc[b];
        dv[o] = sv[b];
      }
    }
    gs_idx_t *t = sc;
    sc = dc;
    dc = t;
    gs_val_t *u = sv;
    sv = dv;
    dv = u;
  }
  if (sc != c) {
    memcpy(c, sc, (size_t)len * sizeof *c);
    memcpy(v, sv, (size_t)len * sizeof *v);
  }
}

/* Matrices of at least this many entries are permuted on threads (rows split evenly). */

typedef struct permute_job {
  const gs_csr_t *A;
  const gs_idx_t *perm, *inv;
  gs_csr_t *C; /* row_ptr filled */
  int nt;
  int oom[64];
} permute_job_t;


/* Rows [n t / nt, n (t + 1) / nt) of C = P A P^T: entries moved and renamed, each row sorted by
 * column where the renaming left it out of order (scratch of this share's longest row). */
static void permute_share(void *arg, int t)
{
  permute_job_t *J = arg;
  const gs_csr_t *A = J->A;
  gs_csr_t *C = J->C;
  const int64_t n = C->m;
  const gs_idx_t k0 = (gs_idx_t)(n * t / J->nt), k1 = (gs_idx_t)(n * (t + 1) / J->nt);
  gs_idx_t *tc = NULL;
  gs_val_t *tv = NULL;
  gs_off_t maxlen = 0;
  for (gs_idx_t k = k0; k < k1; ++k)
    if (C->row_ptr[k + 1] - C->row_ptr[k] > maxlen) maxlen = C->row_ptr[k + 1] - C->row_ptr[k];
  for (gs_idx_t k = k0; k < k1; ++k) {
    const gs_off_t s = A->row_ptr[J->perm[k]], len = C->row_ptr[k + 1] - C->row_ptr[k];
    gs_idx_t *c = C->col + C->row_ptr[k];
    gs_val_t *v = C->val + C->row_ptr[k];
    int sorted = 1;
    for (gs_off_t q = 0; q < len; ++q) {
      c[q] = J->inv[A->col[s + q]];
      v[q] = A->val[s + q];
      if (q > 0 && c[q] < c[q - 1]) sorted = 0;
    }
    if (sorted) continue;
    if (len > SORT_RUN && !tc) {
      tc = malloc((size_t)maxlen * sizeof *tc);
      tv = malloc((size_t)maxlen * sizeof *tv);
      if (!tc || !tv) {
        J->oom[t] = 1;
        break;
      }
    }
    sort_row(c, v, len, tc, tv);
  }
  free(tc);
  free(tv);
}

gs_status_t gs_csr_permute_sym(const gs_csr_t *A, const gs_idx_t *perm, gs_csr_t **B)
{
  static const char fn[] = "gs_csr_permute_sym";
  gs_status_t st = GS_SUCCESS;
  gs_idx_t *inv = NULL;
  gs_csr_t *C = NULL;
  if (!B) return GS_ERROR(GS_ERR_INVALID_ARG, "%s: B is NULL", fn);
  *B = NULL;
  if (!A || !perm) return GS_ERROR(GS_ERR_INVALID_ARG, "%s: NULL argument", fn);
  if (A->m != A->n)
    return GS_ERROR(GS_ERR_DIMENSION, "%s: the matrix is %d x %d, not square", fn, A->m, A->n);
  GS_CHECK(gs_csr_check_rows(A, 0, A->m, fn));
  const gs_idx_t n = A->m;

  inv = malloc(((size_t)n + 1) * sizeof *inv);
  if (!inv) GS_FAIL(GS_ERR_HOST_MEMORY, "%s: out of host memory", fn);
  for (gs_idx_t j = 0; j < n; ++j) inv[j] = -1;
  for (gs_idx_t k = 0; k < n; ++k) {
    const gs_idx_t p = perm[k];
    if (p < 0 || p >= n)
      GS_FAIL(GS_ERR_INVALID_ARG, "%s: perm[%d] = %d is outside 0..%d", fn, k, p, n - 1);
    if (inv[p] >= 0)
      GS_FAIL(GS_ERR_INVALID_ARG, "%s: perm is not a permutation: perm[%d] = perm[%d] = %d", fn,
              inv[p], k, p);
    inv[p] = k;
  }

  GS_TRY(gs_csr_create(&C, n, n, A->nnz));
  C->symmetry = A->symmetry;
  for (gs_idx_t k = 0; k < n; ++k)
    C->row_ptr[k + 1] = C->row_ptr[k] + (A->row_ptr[perm[k] + 1] - A->row_ptr[perm[k]]);
  permute_job_t J = {A, perm, inv, C, order_threads(A), {0}};
  if (J.nt > 1)
    gs_parallel(J.nt, permute_share, &J);
  else
    permute_share(&J, 0);
  for (int t = 0; t < J.nt; ++t)
    if (J.oom[t]) GS_FAIL(GS_ERR_HOST_MEMORY, "%s: out of host memory for a row's sort", fn);
  *B = C;
  C = NULL;

cleanup:
  free(inv);
  gs_csr_destroy(&C);
  return st;
}

/* gs_csr_bandwidth over a share of the rows a thread (a maximum: any split gives the same). */
typedef struct band_job {
  const gs_csr_t *A;
  int nt;
  int64_t bw[64];
} band_job_t;

static void band_share(void *arg, int t)
{
  band_job_t *J = arg;
  const gs_csr_t *A = J->A;
  const gs_idx_t i0 = (gs_idx_t)((int64_t)A->m * t / J->nt);
  const gs_idx_t i1 = (gs_idx_t)((int64_t)A->m * (t + 1) / J->nt);
  int64_t bw = 0;
  for (gs_idx_t i = i0; i < i1; ++i)
    for (gs_off_t p = A->row_ptr[i]; p < A->row_ptr[i + 1]; ++p) {
      const int64_t d = (int64_t)i - A->col[p];
      if (d > bw) bw = d;
      if (-d > bw) bw = -d;
    }
  J->bw[t] = bw;
}

gs_idx_t gs_csr_bandwidth(const gs_csr_t *A)
{
  if (!A || !A->row_ptr || (A->nnz > 0 && !A->col)) return -1;
  band_job_t J;
  memset(&J, 0, sizeof J);
  J.A = A;
  J.nt = order_threads(A);
  if (J.nt > 1)
    gs_parallel(J.nt, band_share, &J);
  else
    band_share(&J, 0);
  int64_t bw = 0;
  for (int t = 0; t < J.nt; ++t)
    if (J.bw[t] > bw) bw = J.bw[t];
  return (gs_idx_t)(bw < INT32_MAX ? bw : INT32_MAX);
}
