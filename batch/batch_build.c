/* batch/batch_build.c: the host side of batches (pure C, no CUDA): the layout that is uploaded,
 * the extra layouts of the batched kernels (COO row indices, CSR-I warp start rows, per-problem
 * ELL) and host applies on each of them, so that every layout is checked against plain CSR on
 * any machine (tests/test_batch_host.c). The kernels follow Anzt, Collins, Dongarra, Flegar and
 * Quintana-Orti, "Flexible Batched Sparse Matrix-Vector Product on GPUs" (ScalA17), section 3. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "batch/batch_impl.h"
#include "core/error.h"

void gs_batch_host_free(gs_batch_host_t *H)
{
  if (!H) return;
  free(H->prob);
  free(H->rp);
  free(H->ci);
  free(H->val);
  free(H->row_off);
  free(H->col_off);
  memset(H, 0, sizeof *H);
}

/* Sizes, offsets and per-problem lengths; rp/ci/val are allocated by the callers. */
static gs_status_t layout_begin(gs_batch_host_t *H, int count, const gs_csr_t *const *A,
                                const gs_csr_t *pattern)
{
  memset(H, 0, sizeof *H);
  if (count < 1) return GS_ERROR(GS_ERR_INVALID_ARG, "batch: count %d, need at least 1", count);
  H->count = count;
  H->prob = calloc((size_t)count, sizeof *H->prob);
  H->row_off = malloc(((size_t)count + 1) * sizeof *H->row_off);
  H->col_off = malloc(((size_t)count + 1) * sizeof *H->col_off);
  if (!H->prob || !H->row_off || !H->col_off) {
    gs_batch_host_free(H);
    return GS_ERROR(GS_ERR_HOST_MEMORY, "batch: out of host memory for %d problems", count);
  }
  H->square = 1;
  gs_off_t row = 0, col = 0, rp = 0, ent = 0;
  for (int i = 0; i < count; ++i) {
    const gs_csr_t *a = pattern ? pattern : A[i];
    if (!a) {
      gs_batch_host_free(H);
      return GS_ERROR(GS_ERR_INVALID_ARG, "batch: problem %d is NULL", i);
    }
    if (!pattern || i == 0) {
      gs_status_t st = gs_csr_validate(a);
      if (st != GS_SUCCESS) {
        gs_batch_host_free(H);
        return GS_ERROR(st, "batch: problem %d: %s", i, gs_last_error());
      }
      if (a->nnz > INT32_MAX) {
        gs_batch_host_free(H);
        return GS_ERROR(GS_ERR_UNSUPPORTED, "batch: problem %d has %lld entries, a batched "
                        "problem may hold at most 2^31 - 1", i, (long long)a->nnz);
      }
    }
    gs_batch_prob_t *p = &H->prob[i];
    p->m = a->m;
    p->n = a->n;
    p->nnz = (int32_t)a->nnz;
    for (gs_idx_t r = 0; r < a->m; ++r)
      if (a->row_ptr[r + 1] - a->row_ptr[r] > p->maxrow)
        p->maxrow = (int32_t)(a->row_ptr[r + 1] - a->row_ptr[r]);
    p->row = row;
    p->col = col;
    H->row_off[i] = row;
    H->col_off[i] = col;
    /* a shared pattern is stored once: every problem points at it, values apart */
    p->rp = pattern ? 0 : rp;
    p->ent = pattern ? 0 : ent;
    p->val = pattern ? (int64_t)i * a->nnz : ent;
    row += a->m;
    col += a->n;
    if (!pattern || i == 0) {
      rp += (gs_off_t)a->m + 1;
      ent += a->nnz;
    }
    H->nnz += a->nnz;
    if (a->m > H->max_m) H->max_m = a->m;
    if (a->n > H->max_n) H->max_n = a->n;
    if (a->nnz > H->max_nnz) H->max_nnz = (int32_t)a->nnz;
    if (a->m != a->n) H->square = 0;
  }
  H->row_off[count] = row;
  H->col_off[count] = col;
  H->nrp = (size_t)rp;
  H->nci = (size_t)ent;
  H->nval = (size_t)H->nnz;
  H->shared = pattern != NULL;
  H->rp = malloc((H->nrp ? H->nrp : 1) * sizeof *H->rp);
  H->ci = malloc((H->nci ? H->nci : 1) * sizeof *H->ci);
  H->val = malloc((H->nval ? H->nval : 1) * sizeof *H->val);
  if (!H->rp || !H->ci || !H->val) {
    gs_batch_host_free(H);
    return GS_ERROR(GS_ERR_HOST_MEMORY, "batch: out of host memory for %lld entries",
                    (long long)H->nnz);
  }
  return GS_SUCCESS;
}

static void copy_pattern(gs_batch_host_t *H, const gs_batch_prob_t *p, const gs_csr_t *a)
{
  for (gs_idx_t r = 0; r <= a->m; ++r) H->rp[p->rp + r] = (int32_t)a->row_ptr[r];
  if (a->nnz) memcpy(H->ci + p->ent, a->col, (size_t)a->nnz * sizeof *a->col);
}

gs_status_t gs_batch_host_build(gs_batch_host_t *H, int count, const gs_csr_t *const *A)
{
  if (!H || (!A && count > 0)) return GS_ERROR(GS_ERR_INVALID_ARG, "batch: NULL argument");
  GS_CHECK(layout_begin(H, count, A, NULL));
  for (int i = 0; i < count; ++i) {
    copy_pattern(H, &H->prob[i], A[i]);
    if (A[i]->nnz)
      memcpy(H->val + H->prob[i].val, A[i]->val, (size_t)A[i]->nnz * sizeof *H->val);
  }
  return GS_SUCCESS;
}

gs_status_t gs_batch_host_build_shared(gs_batch_host_t *H, int count, const gs_csr_t *pattern,
                                       const gs_val_t *values)
{
  if (!H || !pattern) return GS_ERROR(GS_ERR_INVALID_ARG, "batch: NULL pattern");
  if (!values && pattern->nnz > 0 && count > 0)
    return GS_ERROR(GS_ERR_INVALID_ARG, "batch: NULL values for a shared pattern");
  GS_CHECK(layout_begin(H, count, NULL, pattern));
  copy_pattern(H, &H->prob[0], pattern);
  for (size_t k = 0; k < H->nval; ++k)
    if (!isfinite(values[k])) {
      gs_off_t nz = pattern->nnz;
      gs_batch_host_free(H);
      return GS_ERROR(GS_ERR_INVALID_ARG, "batch: value %lld of problem %lld is not finite",
                      (long long)(k % (size_t)nz), (long long)(k / (size_t)nz));
    }
  if (H->nval) memcpy(H->val, values, H->nval * sizeof *H->val);
  return GS_SUCCESS;
}

gs_status_t gs_batch_host_problem(const gs_batch_host_t *H, int i, gs_csr_t **out)
{
  *out = NULL;
  if (i < 0 || i >= H->count)
    return GS_ERROR(GS_ERR_INVALID_ARG, "batch: problem %d out of range 0..%d", i, H->count - 1);
  const gs_batch_prob_t *p = &H->prob[i];
  gs_csr_t *a;
  GS_CHECK(gs_csr_create(&a, p->m, p->n, p->nnz));
  for (int32_t r = 0; r <= p->m; ++r) a->row_ptr[r] = H->rp[p->rp + r];
  if (p->nnz) {
    memcpy(a->col, H->ci + p->ent, (size_t)p->nnz * sizeof *a->col);
    memcpy(a->val, H->val + p->val, (size_t)p->nnz * sizeof *a->val);
  }
  *out = a;
  return GS_SUCCESS;
}

void gs_batch_host_rowstats(const gs_batch_host_t *H, gs_batch_rowstats_t *st)
{
  memset(st, 0, sizeof *st);
  double padded = 0.0;
  st->idx16 = 1;
  for (int i = 0; i < H->count; ++i) {
    const gs_batch_prob_t *p = &H->prob[i];
    padded += (double)p->m * p->maxrow;
    st->idx16 &= gs_batch_prob_fits16(p);
    if (p->m > 0 && p->nnz > 0) {
      double ratio = p->maxrow / ((double)p->nnz / p->m);
      if (ratio > st->long_row) st->long_row = ratio;
    }
  }
  const double rows = (double)H->row_off[H->count];
  st->mean_m = rows / H->count;
  st->mean_nnz = (double)H->nnz / H->count;
  st->mean_row = rows > 0 ? (double)H->nnz / rows : 0.0;
  st->ell_fill = H->nnz > 0 ? padded / (double)H->nnz : 1.0;
}

/* The automatic choice, from runs 105-106 (H100, bench/batch.sh): batch-csr-stream was the
 * fastest of the batched kernels on every batch of 10-2,000 rows, generated (Laplacians and
 * random, 1,000 / 10,000 / 100,000 problems) and real (the small matrices of the test set,
 * repeated), at 1.01-1.41x the byte floor, where the paper's picks ran 1.4-3.7x: ELL for
 * balanced rows (1.12-1.82x), CSR-I for skewed ones (1.73-3.59x), CSR-smart (csr-warp,
 * 1.41-2.28x). On small problems with balanced rows a thread a row (batch-csr-scalar) leads:
 * 100,000 Laplacians of 10-100 rows 161 us against 195 for batch-csr-stream, 10,000 of 100
 * rows 28.0 against 31.5 (run 108); from a mean of 1,000 rows the two are within 6% either way
 * (stream ahead on 1,000 problems, scalar on 10,000). On small random problems stream leads
 * (295 against 301 us). Where every problem fits 16-bit indices, their 16-bit twins: run 112
 * (H100) measured each faster than its 32-bit kernel on every batch, 1.03-1.17x for scalar16
 * and 1.08-1.14x for stream16 (laplace 10,000 x 10-2,000: scalar16 244.8 us against 286.8;
 * random 10,000: stream16 421.3 against 482.1). */
const char *gs_batch_rule(const gs_batch_rowstats_t *st, const char **why)
{
  /* [scalar or stream][16-bit twin] */
  static const char *const names[2][2] = {{"batch-csr-scalar", "batch-csr-scalar16"},
                                          {"batch-csr-stream", "batch-csr-stream16"}};
  static const char *const whys[2] = {
      "small problems with balanced rows (mean rows <= 128, ELL padding <= 1.25x): a thread a "
      "row, small blocks",
      "chunks of whole rows: coalesced entry loads whatever the row lengths, products summed "
      "from shared memory"};
  const int stream = !(st->mean_m <= 128.0 && st->ell_fill <= 1.25);
  if (why) *why = whys[stream];
  return names[stream][st->idx16 != 0];
}

gs_status_t gs_batch_host_uniform(const gs_batch_host_t *H, const char *who)
{
  const gs_batch_prob_t *p0 = &H->prob[0];
  for (int i = 1; i < H->count; ++i) {
    const gs_batch_prob_t *p = &H->prob[i];
    if (p->m != p0->m || p->n != p0->n || p->nnz != p0->nnz)
      return GS_ERROR(GS_ERR_UNSUPPORTED, "%s: n/a (patterns differ): cuSPARSE's strided batches "
                      "need one m, n and nnz for all problems, and problem %d is %d x %d with %d "
                      "entries, problem 0 %d x %d with %d", who, i, (int)p->m, (int)p->n,
                      (int)p->nnz, (int)p0->m, (int)p0->n, (int)p0->nnz);
  }
  return GS_SUCCESS;
}

size_t gs_batch_floor_bytes(const gs_batch_host_t *H)
{
  return ((size_t)H->row_off[H->count] + (size_t)H->count) * sizeof(int32_t) /* row pointers */
         + (size_t)H->nnz * (sizeof(gs_idx_t) + sizeof(gs_val_t))          /* entries */
         + (size_t)H->col_off[H->count] * sizeof(gs_val_t)                  /* x */
         + (size_t)H->row_off[H->count] * sizeof(gs_val_t);                 /* y */
}

int gs_batch_block_threads(double work)
{
  int t = 32;
  while (t < 256 && t < work) t <<= 1;
  return t;
}

/* ---- kernel layouts ------------------------------------------------------------------------- */

/* A problem and its work (nnz + m), sorted by decreasing work, ties by index. */
typedef struct {
  int64_t work;
  int32_t i;
} work_t;

static int cmp_work_desc(const void *a, const void *b)
{
  const work_t *x = (const work_t *)a, *y = (const work_t *)b;
  if (x->work != y->work) return x->work > y->work ? -1 : 1;
  return (x->i > y->i) - (x->i < y->i);
}

gs_status_t gs_batch_warp_schedule(const gs_batch_host_t *H, int32_t **sched, int32_t *nlarge,
                                   int32_t *nwblocks)
{
  const int n = H->count, pack = H->count >= GS_BATCH_WARP_MIN_PACK;
  work_t *w = malloc(((size_t)n + 1) * sizeof *w);
  if (!w) return GS_ERROR(GS_ERR_HOST_MEMORY, "batch-csr-warp: out of host memory for the schedule");
  int32_t nl = 0, ns = 0;
  for (int32_t i = 0; i < n; ++i) /* the block problems to the front, the warp problems behind */
    if (!(pack && H->prob[i].m <= GS_BATCH_WARP_ROWS)) ++nl;
  for (int32_t i = 0, a = 0, b = nl; i < n; ++i) {
    const int small = pack && H->prob[i].m <= GS_BATCH_WARP_ROWS;
    work_t *t = &w[small ? b++ : a++];
    t->work = (int64_t)H->prob[i].nnz + H->prob[i].m;
    t->i = i;
  }
  ns = n - nl;
  qsort(w, (size_t)nl, sizeof *w, cmp_work_desc);
  qsort(w + nl, (size_t)ns, sizeof *w, cmp_work_desc);
  const int32_t nw = (ns + GS_BATCH_WARP_PER_BLOCK - 1) / GS_BATCH_WARP_PER_BLOCK;
  int32_t *s = malloc(((size_t)nl + (size_t)nw * GS_BATCH_WARP_PER_BLOCK + 1) * sizeof *s);
  if (!s) {
    free(w);
    return GS_ERROR(GS_ERR_HOST_MEMORY, "batch-csr-warp: out of host memory for the schedule");
  }
  for (int32_t k = 0; k < nl; ++k) s[k] = w[k].i;
  for (int32_t k = 0; k < nw * GS_BATCH_WARP_PER_BLOCK; ++k) s[nl + k] = k < ns ? w[nl + k].i : -1;
  free(w);
  *sched = s;
  *nlarge = nl;
  *nwblocks = nw;
  return GS_SUCCESS;
}

gs_status_t gs_batch_work_order(const gs_batch_host_t *H, int32_t **order)
{
  const int n = H->count;
  work_t *w = malloc(((size_t)n + 1) * sizeof *w);
  int32_t *o = malloc(((size_t)n + 1) * sizeof *o);
  if (!w || !o) {
    free(w);
    free(o);
    return GS_ERROR(GS_ERR_HOST_MEMORY, "batch-csr-stream: out of host memory for the order");
  }
  for (int32_t i = 0; i < n; ++i) {
    w[i].work = (int64_t)H->prob[i].nnz + H->prob[i].m;
    w[i].i = i;
  }
  qsort(w, (size_t)n, sizeof *w, cmp_work_desc);
  for (int32_t k = 0; k < n; ++k) o[k] = w[k].i;
  free(w);
  *order = o;
  return GS_SUCCESS;
}

int gs_batch_stream_threads(double mean_m)
{
  int t = 64;
  while (t < 512 && 2.0 * t < mean_m) t <<= 1;
  return t;
}

gs_status_t gs_batch_coo_rows(const gs_batch_host_t *H, int32_t **rows)
{
  int32_t *r = malloc((H->nci ? H->nci : 1) * sizeof *r);
  if (!r) return GS_ERROR(GS_ERR_HOST_MEMORY, "batch-coo: out of host memory for row indices");
  const int np = H->shared ? 1 : H->count; /* a shared pattern has one set of rows */
  for (int i = 0; i < np; ++i) {
    const gs_batch_prob_t *p = &H->prob[i];
    for (int32_t row = 0; row < p->m; ++row)
      for (int32_t k = H->rp[p->rp + row]; k < H->rp[p->rp + row + 1]; ++k) r[p->ent + k] = row;
  }
  *rows = r;
  return GS_SUCCESS;
}

/* The row holding entry e of problem p (rp[r] <= e < rp[r + 1]); m when e == nnz. */
static int32_t row_of(const int32_t *rp, int32_t m, int32_t e)
{
  int32_t lo = 0, hi = m; /* invariant: rp[lo] <= e, and the answer is < hi or == m */
  while (lo < hi) {
    int32_t mid = lo + (hi - lo) / 2;
    if (rp[mid + 1] <= e) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static int32_t warp_first(int32_t nnz, int nwarps, int w)
{
  return (int32_t)((int64_t)nnz * w / nwarps);
}

gs_status_t gs_batch_csri_starts(const gs_batch_host_t *H, int nwarps, int32_t **start)
{
  if (nwarps < 1) return GS_ERROR(GS_ERR_INVALID_ARG, "batch-csr-i: %d warps", nwarps);
  int32_t *s = malloc((size_t)H->count * (nwarps + 1) * sizeof *s);
  if (!s) return GS_ERROR(GS_ERR_HOST_MEMORY, "batch-csr-i: out of host memory for start rows");
  for (int i = 0; i < H->count; ++i) {
    const gs_batch_prob_t *p = &H->prob[i];
    const int32_t *rp = H->rp + p->rp;
    for (int w = 0; w <= nwarps; ++w)
      s[(size_t)i * (nwarps + 1) + w] = w == nwarps ? p->m : row_of(rp, p->m, warp_first(p->nnz, nwarps, w));
  }
  *start = s;
  return GS_SUCCESS;
}

void gs_batch_ell_free(gs_batch_ell_t *E)
{
  if (!E) return;
  free(E->off);
  free(E->ci);
  free(E->val);
  memset(E, 0, sizeof *E);
}

gs_status_t gs_batch_ell_build(const gs_batch_host_t *H, double max_fill, gs_batch_ell_t *E)
{
  memset(E, 0, sizeof *E);
  if (!(max_fill > 0.0)) max_fill = GS_BATCH_MAX_FILL_DEFAULT;
  E->off = malloc(((size_t)H->count + 1) * sizeof *E->off);
  if (!E->off) return GS_ERROR(GS_ERR_HOST_MEMORY, "batch-ell: out of host memory");
  int64_t total = 0;
  for (int i = 0; i < H->count; ++i) {
    E->off[i] = total;
    total += (int64_t)H->prob[i].m * H->prob[i].maxrow;
  }
  E->off[H->count] = total;
  if ((double)total > max_fill * (double)H->nnz && total > 0) {
    gs_batch_ell_free(E);
    return GS_ERROR(GS_ERR_FORMAT_FILL, "batch-ell: padding to each problem's longest row "
                    "stores %lld entries for %lld (%.2fx, over max_fill %g)", (long long)total,
                    (long long)H->nnz, (double)total / (double)(H->nnz ? H->nnz : 1), max_fill);
  }
  E->ci = malloc((total ? (size_t)total : 1) * sizeof *E->ci);
  E->val = malloc((total ? (size_t)total : 1) * sizeof *E->val);
  if (!E->ci || !E->val) {
    gs_batch_ell_free(E);
    return GS_ERROR(GS_ERR_HOST_MEMORY, "batch-ell: out of host memory for %lld entries",
                    (long long)total);
  }
  for (int i = 0; i < H->count; ++i) {
    const gs_batch_prob_t *p = &H->prob[i];
    const int32_t *rp = H->rp + p->rp;
    for (int32_t r = 0; r < p->m; ++r)
      for (int32_t k = 0; k < p->maxrow; ++k) {
        int64_t at = E->off[i] + (int64_t)k * p->m + r, e = (int64_t)rp[r] + k;
        int in = e < rp[r + 1];
        E->ci[at] = in ? H->ci[p->ent + e] : -1;
        E->val[at] = in ? H->val[p->val + e] : 0.0;
      }
  }
  return GS_SUCCESS;
}

gs_status_t gs_batch_idx16_build(const gs_batch_host_t *H, const char *who, uint16_t **rp16,
                                 uint16_t **ci16)
{
  *rp16 = NULL;
  *ci16 = NULL;
  for (int i = 0; i < H->count; ++i) {
    const gs_batch_prob_t *p = &H->prob[i];
    if (!gs_batch_prob_fits16(p))
      return GS_ERROR(GS_ERR_UNSUPPORTED, "%s: problem %d (%d x %d, %d entries) does not fit "
                      "16-bit indices (at most %d entries and %d columns a problem)", who, i,
                      (int)p->m, (int)p->n, (int)p->nnz, GS_BATCH_IDX16_MAX_NNZ,
                      GS_BATCH_IDX16_MAX_N);
  }
  uint16_t *r = malloc((H->nrp ? H->nrp : 1) * sizeof *r);
  uint16_t *c = malloc((H->nci ? H->nci : 1) * sizeof *c);
  if (!r || !c) {
    free(r);
    free(c);
    return GS_ERROR(GS_ERR_HOST_MEMORY, "%s: out of host memory", who);
  }
  /* every stored row pointer is <= its problem's nnz and every column < its n: checked above
   * for each problem, and H->rp, H->ci hold nothing else (a shared pattern once) */
  for (size_t k = 0; k < H->nrp; ++k) r[k] = (uint16_t)H->rp[k];
  for (size_t k = 0; k < H->nci; ++k) c[k] = (uint16_t)H->ci[k];
  *rp16 = r;
  *ci16 = c;
  return GS_SUCCESS;
}

/* ---- host applies ------------------------------------------------------------------------------ */

/* y_i = alpha * (the sums in acc) + beta y_i, never reading y when beta == 0. */
static void finish(double *y, const double *acc, int32_t m, double alpha, double beta)
{
  for (int32_t r = 0; r < m; ++r) y[r] = beta == 0.0 ? alpha * acc[r] : alpha * acc[r] + beta * y[r];
}

gs_status_t gs_batch_host_apply_kind(const gs_batch_host_t *H, int kind, int nwarps,
                                     double max_fill, double alpha, const gs_val_t *x,
                                     double beta, gs_val_t *y)
{
  gs_status_t st = GS_SUCCESS;
  int32_t *rows = NULL, *start = NULL;
  uint16_t *rp16 = NULL, *ci16 = NULL;
  gs_batch_ell_t E = {0};
  double *acc = malloc(((size_t)H->max_m + 1) * sizeof *acc);
  if (!acc) return GS_ERROR(GS_ERR_HOST_MEMORY, "batch: out of host memory");
  if (kind == GS_BATCH_K_CSR16) GS_TRY(gs_batch_idx16_build(H, "the 16-bit kernels", &rp16, &ci16));
  if (kind == GS_BATCH_K_COO) GS_TRY(gs_batch_coo_rows(H, &rows));
  if (kind == GS_BATCH_K_CSRI) GS_TRY(gs_batch_csri_starts(H, nwarps, &start));
  if (kind == GS_BATCH_K_ELL) GS_TRY(gs_batch_ell_build(H, max_fill, &E));
  for (int i = 0; i < H->count; ++i) {
    const gs_batch_prob_t *p = &H->prob[i];
    const int32_t *rp = H->rp + p->rp;
    const gs_idx_t *ci = H->ci + p->ent;
    const gs_val_t *v = H->val + p->val, *xi = x + p->col;
    double *yi = y + p->row;
    for (int32_t r = 0; r < p->m; ++r) acc[r] = 0.0;
    if (alpha == 0.0) { /* A and x not read */
    } else if (kind == GS_BATCH_K_CSR || kind == GS_BATCH_K_SMART) {
      /* CSR-smart's order: W strided partial sums per row, then their tree sum */
      const int W = kind == GS_BATCH_K_SMART ? gs_batch_smart_width(p->m, p->nnz) : 1;
      double part[32];
      for (int32_t r = 0; r < p->m; ++r) {
        for (int l = 0; l < W; ++l) {
          part[l] = 0.0;
          for (int32_t k = rp[r] + l; k < rp[r + 1]; k += W) part[l] += v[k] * xi[ci[k]];
        }
        for (int off = W / 2; off > 0; off /= 2)
          for (int l = 0; l < off; ++l) part[l] += part[l + off];
        acc[r] = part[0];
      }
    } else if (kind == GS_BATCH_K_CSR16) { /* the 16-bit copies, each row left to right */
      const uint16_t *rp_16 = rp16 + p->rp, *ci_16 = ci16 + p->ent;
      for (int32_t r = 0; r < p->m; ++r) {
        double sum = 0.0;
        for (int32_t k = rp_16[r]; k < (int32_t)rp_16[r + 1]; ++k) sum += v[k] * xi[ci_16[k]];
        acc[r] = sum;
      }
    } else if (kind == GS_BATCH_K_COO) {
      const int32_t *ri = rows + p->ent;
      for (int32_t k = 0; k < p->nnz; ++k) acc[ri[k]] += v[k] * xi[ci[k]];
    } else if (kind == GS_BATCH_K_CSRI) {
      /* each warp walks its entry share from its start row, as the kernel's lanes do */
      const int32_t *s = start + (size_t)i * (nwarps + 1);
      for (int w = 0; w < nwarps; ++w) {
        int32_t row = s[w];
        for (int32_t e = warp_first(p->nnz, nwarps, w); e < warp_first(p->nnz, nwarps, w + 1); ++e) {
          while (rp[row + 1] <= e) ++row;
          acc[row] += v[e] * xi[ci[e]];
        }
      }
    } else if (kind == GS_BATCH_K_ELL) {
      for (int32_t k = 0; k < p->maxrow; ++k)
        for (int32_t r = 0; r < p->m; ++r) {
          int64_t at = E.off[i] + (int64_t)k * p->m + r;
          if (E.ci[at] >= 0) acc[r] += E.val[at] * xi[E.ci[at]];
        }
    } else {
      GS_FAIL(GS_ERR_INTERNAL, "batch: unknown host layout %d", kind);
    }
    finish(yi, acc, p->m, alpha, beta);
  }
cleanup:
  free(acc);
  free(rows);
  free(start);
  free(rp16);
  free(ci16);
  gs_batch_ell_free(&E);
  return st;
}
