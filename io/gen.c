/* io/gen.c: the papers' synthetic matrices, built directly as CSR (rows counted or known in
 * closed form first, then filled in order; never COO + sort).
 *
 *  - gs_gen_laplace: Laplacian stencils on regular grids, Table 2 of Bell & Garland,
 *    "Implementing SpMV on Throughput-Oriented Processors", SC09 ("Structured Matrices").
 *  - gs_gen_normal: columns normally distributed around the diagonal, Figure 7 of
 *    Steinberger, Zayer & Seidel, "Globally Homogeneous, Locally Adaptive SpMV on the GPU"
 *    (HOLA), ICS 2017: "1M square matrix with 22M non-zeros normal distributed around the
 *    diagonal with increasing distribution variance".
 *  - gs_gen_pareto: rows of 32 + delta entries with delta Pareto distributed, Figure 9 of
 *    Bell & Garland, SC09.
 *  - gs_gen_random: K uniform random distinct columns per row.
 *  - gs_gen_powerlaw: a scale-free graph: Zipf row lengths, columns drawn by popularity.
 *  - gs_gen_convdiff: upwind convection-diffusion on a grid (BentPipe2D-like nonsymmetric PDE).
 *  - gs_gen_elasticity: 2D plane-strain linear elasticity (Q1 elements) and its rigid-body
 *    modes, PyAMG's gallery.linear_elasticity on square grids (the AMG near-null-space tests).
 *
 * Random numbers come from our own xoshiro256** seeded through splitmix64, so a matrix depends
 * only on (arguments, seed) and not on the C library's rand(). The normal generator goes through
 * erfc() and log() of the C math library, whose last-bit differences between platforms could in
 * principle move a rounded column by one on some draw; on one platform the output is bit for bit
 * reproducible.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/coo_csr.h"
#include "core/error.h"
#include "core/parallel.h"
#include "gpusolve/io.h"
#include "io/mm_internal.h"

/* ---- random numbers ----------------------------------------------------------------------- */

typedef struct rng {
  uint64_t s[4];
} rng_t;

static uint64_t splitmix64(uint64_t *x)
{
  uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Different generators (and streams inside one generator) use different salts, so that the
 * same user seed does not give correlated draws across them. */
static void rng_seed(rng_t *r, uint64_t seed, uint64_t salt)
{
  uint64_t x = seed ^ (salt * 0xD1B54A32D192ED03ull);
  for (int k = 0; k < 4; ++k) r->s[k] = splitmix64(&x);
}

static inline uint64_t rotl64(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

/* xoshiro256** (Blackman & Vigna). */
static inline uint64_t rng_next(rng_t *r)
{
  uint64_t *s = r->s;
  const uint64_t out = rotl64(s[1] * 5, 7) * 9;
  const uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl64(s[3], 45);
  return out;
}

/* Uniform in [0, 1) on the 2^-53 grid. */
static inline double rng_uniform(rng_t *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }

/* Uniform in (0, 1]: safe to raise to a negative power. */
static inline double rng_uniform_pos(rng_t *r)
{
  return (double)((rng_next(r) >> 11) + 1) * 0x1.0p-53;
}

/* Uniform integer in [0, n), n >= 1, without modulo bias (Lemire's multiply-and-reject). */
static inline uint32_t rng_below(rng_t *r, uint32_t n)
{
  uint64_t m = (rng_next(r) >> 32) * (uint64_t)n;
  uint32_t lo = (uint32_t)m;
  if (lo < n) {
    const uint32_t t = (uint32_t)(-n) % n;
    while (lo < t) {
      m = (rng_next(r) >> 32) * (uint64_t)n;
      lo = (uint32_t)m;
    }
  }
  return (uint32_t)(m >> 32);
}

/* Values of the random generators: uniform in [-1, 1). */
static inline gs_val_t rng_value(rng_t *r) { return 2.0 * rng_uniform(r) - 1.0; }

/* ---- the standard normal distribution ------------------------------------------------------ */

/* Phi(x), the standard normal CDF. */
static double norm_cdf(double x) { return 0.5 * erfc(-x * 0.70710678118654752440); }

/* Phi^-1(p) for p in (0, 1): P. J. Acklam's rational approximation (relative error below
 * 1.2e-9, far below the rounding of a column index); -inf / +inf at 0 and 1. */
static double norm_quantile(double p)
{
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                             -2.759285104469687e+02, 1.383577518672690e+02,
                             -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                             -1.556989798598866e+02, 6.680131188771972e+01,
                             -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                             -2.400758277161838e+00, -2.549732539343734e+00,
                             4.374664141464968e+00, 2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                             2.445134137142996e+00, 3.754408661907416e+00};
  const double plow = 0.02425, phigh = 1.0 - 0.02425;
  if (!(p > 0.0)) return -INFINITY;
  if (!(p < 1.0)) return INFINITY;
  if (p < plow) {
    const double q = sqrt(-2.0 * log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
  }
  if (p > phigh) {
    const double q = sqrt(-2.0 * log1p(-p));
    return -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
  }
  const double q = p - 0.5, r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
}

/* ---- distinct columns of one row ------------------------------------------------------------ */

/* The columns already drawn for the current row: a linear scan of the row for short rows, an
 * open-addressing hash set (sized per row, so that clearing it costs O(row length)) for long
 * ones. Keys are stored as col + 1 (0 = empty slot). */
enum { COLSET_LINEAR_MAX = 32 };

typedef struct colset {
  uint32_t *slot;    /* cap_alloc entries */
  size_t cap_alloc;
  uint32_t mask;     /* slots of this row - 1 */
  int shift;         /* 32 - log2(slots) */
  int hashed;        /* 0: linear scan of items */
  gs_idx_t *items;   /* the row's columns so far (the CSR's col array) */
  gs_idx_t count;
} colset_t;

/* Starts a row of up to k columns written to items. */
static gs_status_t colset_reset(colset_t *s, gs_idx_t k, gs_idx_t *items)
{
  s->items = items;
  s->count = 0;
  s->hashed = k > COLSET_LINEAR_MAX;
  if (!s->hashed) return GS_SUCCESS;
  size_t cap = 64;
  int bits = 6;
  while (cap < 2 * (size_t)k) {
    cap *= 2;
    ++bits;
  }
  if (cap > s->cap_alloc) {
    uint32_t *p = realloc(s->slot, cap * sizeof *p);
    if (!p)
      return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory for a column set of %zu slots",
                      cap);
    s->slot = p;
    s->cap_alloc = cap;
  }
  memset(s->slot, 0, cap * sizeof *s->slot);
  s->mask = (uint32_t)(cap - 1);
  s->shift = 32 - bits;
  return GS_SUCCESS;
}

static inline uint32_t colset_hash(const colset_t *s, gs_idx_t c)
{
  return ((uint32_t)c * 0x9E3779B1u) >> s->shift;
}

static int colset_has(const colset_t *s, gs_idx_t c)
{
  if (!s->hashed) {
    for (gs_idx_t t = 0; t < s->count; ++t)
      if (s->items[t] == c) return 1;
    return 0;
  }
  const uint32_t key = (uint32_t)c + 1u;
  for (uint32_t h = colset_hash(s, c);; h = (h + 1) & s->mask) {
    if (s->slot[h] == key) return 1;
    if (s->slot[h] == 0) return 0;
  }
}

/* Adds a column known not to be in the set. */
static void colset_add(colset_t *s, gs_idx_t c)
{
  s->items[s->count++] = c;
  if (!s->hashed) return;
  uint32_t h = colset_hash(s, c);
  while (s->slot[h] != 0) h = (h + 1) & s->mask;
  s->slot[h] = (uint32_t)c + 1u;
}

static int cmp_idx(const void *a, const void *b)
{
  const gs_idx_t x = *(const gs_idx_t *)a, y = *(const gs_idx_t *)b;
  return (x > y) - (x < y);
}

/* Sorts one row's columns (insertion sort for the short rows that are the common case). */
static void sort_row(gs_idx_t *c, gs_idx_t len)
{
  if (len > 32) {
    qsort(c, (size_t)len, sizeof *c, cmp_idx);
    return;
  }
  for (gs_idx_t t = 1; t < len; ++t) {
    const gs_idx_t v = c[t];
    gs_idx_t u = t;
    for (; u > 0 && c[u - 1] > v; --u) c[u] = c[u - 1];
    c[u] = v;
  }
}

/* k distinct columns uniform in [0, n), 0 <= k <= n, written sorted to out:
 *  k == n      all columns;
 *  2k > n      selection sampling (Knuth's Algorithm S): one pass over the columns, output
 *              already sorted, O(n) = O(k) work;
 *  otherwise   Floyd's algorithm: exactly k draws, each subset equally likely, then a sort. */
static gs_status_t sample_uniform_row(rng_t *r, gs_idx_t n, gs_idx_t k, gs_idx_t *out,
                                      colset_t *set)
{
  if (k == n) {
    for (gs_idx_t c = 0; c < n; ++c) out[c] = c;
    return GS_SUCCESS;
  }
  if (2 * (int64_t)k > n) {
    gs_idx_t need = k, got = 0;
    for (gs_idx_t c = 0; c < n && need > 0; ++c)
      if ((double)(n - c) * rng_uniform(r) < (double)need) {
        out[got++] = c;
        --need;
      }
    return GS_SUCCESS;
  }
  GS_CHECK(colset_reset(set, k, out));
  for (gs_idx_t j = n - k; j < n; ++j) {
    gs_idx_t t = (gs_idx_t)rng_below(r, (uint32_t)j + 1u);
    if (colset_has(set, t)) t = j; /* j itself cannot be in the set yet */
    colset_add(set, t);
  }
  sort_row(out, k);
  return GS_SUCCESS;
}

/* ---- Laplacian stencils ------------------------------------------------------------------- */

int64_t gs_gen_share_min = (int64_t)1 << 20;

/* gs_gen_laplace's fill, on threads: each takes whole grid lines (the nx rows of one (y, z)),
 * whose entries it knows in closed form, so every share starts at a known offset and the
 * arrays (written once, in full) are first touched by the threads that fill them. */
typedef struct lap_job {
  gs_csr_t *A;
  gs_idx_t nx, ny, nz;
  int full;
  gs_val_t diag;
  int nt;
  int64_t *start; /* nt + 1: thread t's first entry */
  int *bad;       /* thread t wrote other than start[t + 1] - start[t] entries */
} lap_job_t;

/* Entries of the line (y, z): a row has one entry per valid offset, v(d) = 1, 2 or 3 valid
 * offsets in each dimension (1 when the dimension has one point, 2 at its boundary). */
static int64_t lap_line_entries(const lap_job_t *J, gs_idx_t y, gs_idx_t z)
{
  const int64_t nx = J->nx;
  const int vy = J->ny == 1 ? 1 : (y == 0 || y == J->ny - 1) ? 2 : 3;
  const int vz = J->nz == 1 ? 1 : (z == 0 || z == J->nz - 1) ? 2 : 3;
  if (J->full) return (3 * nx - 2) * vy * vz; /* the sum over x of vx(x) vy vz */
  return nx + 2 * (nx - 1) + nx * (vy - 1 + vz - 1); /* the point, x, y and z neighbours */
}

static void lap_fill(void *arg, int t)
{
  lap_job_t *J = (lap_job_t *)arg;
  const gs_idx_t nx = J->nx, ny = J->ny, nz = J->nz;
  const int64_t nlines = (int64_t)ny * nz;
  gs_off_t *rp = J->A->row_ptr;
  gs_idx_t *col = J->A->col;
  gs_val_t *val = J->A->val;
  int64_t p = J->start[t];
  const int64_t end = J->start[t + 1];
  for (int64_t line = nlines * t / J->nt; line < nlines * (t + 1) / J->nt; ++line) {
    const gs_idx_t y = (gs_idx_t)(line % ny), z = (gs_idx_t)(line / ny);
    gs_idx_t row = (gs_idx_t)(line * nx);
    for (gs_idx_t x = 0; x < nx; ++x, ++row) {
      rp[row] = (gs_off_t)p;
      /* Offsets in (dz, dy, dx) lexicographic order are columns in increasing order. */
      for (int dz = -1; dz <= 1; ++dz) {
        if (z + dz < 0 || z + dz >= nz) continue;
        for (int dy = -1; dy <= 1; ++dy) {
          if (y + dy < 0 || y + dy >= ny) continue;
          for (int dx = -1; dx <= 1; ++dx) {
            if (x + dx < 0 || x + dx >= nx) continue;
            const int dist = abs(dx) + abs(dy) + abs(dz);
            if (!J->full && dist > 1) continue;
            if (p >= end) { /* the closed form is wrong: stop before writing past the share */
              J->bad[t] = 1;
              return;
            }
            col[p] = (gs_idx_t)(row + dx + (int64_t)nx * (dy + (int64_t)ny * dz));
            val[p] = dist == 0 ? J->diag : -1.0;
            ++p;
          }
        }
      }
    }
  }
  J->bad[t] = p != end;
}

/* Table 2 of Bell & Garland, SC09: "Laplacian operators discretized as k-point finite
 * difference stencils on regular grids", with the stencil's points giving the occupied
 * diagonals. Grid point (x, y, z) is row x + nx*(y + ny*z); Dirichlet boundaries, so
 * neighbours outside the grid are dropped.
 *   3, 5, 7:  the point and its 2*dim axis neighbours (|dx| + |dy| + |dz| <= 1);
 *   9, 27:    the full 3x3 (2D) or 3x3x3 (3D) neighbourhood (max(|dx|, |dy|, |dz|) <= 1).
 * Off-diagonals are -1 and the diagonal is stencil - 1 (2, 4, 6, 8, 26): every row is weakly
 * diagonally dominant, rows next to the boundary strictly, and the grid graph is connected,
 * so the symmetric matrix is irreducibly diagonally dominant with a positive diagonal, hence
 * positive definite. Nonzeros in closed form:
 *   axis stencils:  N + 2 * sum_d (n_d - 1) * N / n_d
 *   full stencils:  prod_d (3 n_d - 2)
 * which give Table 2's 2,999,998 / 4,996,000 / 6,940,000 / 8,988,004 / 26,463,592. */
gs_status_t gs_gen_laplace(gs_csr_t **out, gs_idx_t nx, gs_idx_t ny, gs_idx_t nz, int stencil)
{
  gs_status_t st = GS_SUCCESS;
  gs_csr_t *A = NULL;
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_gen_laplace: out is NULL");
  *out = NULL;
  if (stencil != 3 && stencil != 5 && stencil != 7 && stencil != 9 && stencil != 27)
    return GS_ERROR(GS_ERR_INVALID_ARG,
                    "gs_gen_laplace: stencil %d is not one of 3 (1D), 5, 9 (2D), 7, 27 (3D)",
                    stencil);
  if (nx <= 0 || ny <= 0 || nz <= 0)
    return GS_ERROR(GS_ERR_INVALID_ARG,
                    "gs_gen_laplace: grid %d x %d x %d: every dimension must be positive", nx,
                    ny, nz);
  if (stencil == 3 && (ny != 1 || nz != 1))
    return GS_ERROR(GS_ERR_INVALID_ARG,
                    "gs_gen_laplace: the 3-point stencil is 1D and needs ny = nz = 1, "
                    "got grid %d x %d x %d",
                    nx, ny, nz);
  if ((stencil == 5 || stencil == 9) && nz != 1)
    return GS_ERROR(GS_ERR_INVALID_ARG,
                    "gs_gen_laplace: the %d-point stencil is 2D and needs nz = 1, "
                    "got grid %d x %d x %d",
                    stencil, nx, ny, nz);

  const int64_t nxy = (int64_t)nx * ny;
  if (nxy > INT32_MAX || nxy * nz > INT32_MAX)
    return GS_ERROR(GS_ERR_INVALID_ARG,
                    "gs_gen_laplace: grid %d x %d x %d has more than 2^31-1 points", nx, ny, nz);
  const int64_t npts = nxy * nz;
  const int full = (stencil == 9 || stencil == 27);
  int64_t nnz;
  if (full)
    nnz = (3 * (int64_t)nx - 2) * (3 * (int64_t)ny - 2) * (3 * (int64_t)nz - 2);
  else
    nnz = npts + 2 * ((int64_t)(nx - 1) * ny * nz + (int64_t)nx * (ny - 1) * nz +
                      (int64_t)nx * ny * (nz - 1));

  GS_TRY(gs_csr_create(&A, (gs_idx_t)npts, (gs_idx_t)npts, (gs_off_t)nnz));
  gs_advise_huge(A->row_ptr, ((size_t)npts + 1) * sizeof *A->row_ptr);
  gs_advise_huge(A->col, (size_t)nnz * sizeof *A->col);
  gs_advise_huge(A->val, (size_t)nnz * sizeof *A->val);
  enum { LAP_MAX_THREADS = 256 };
  int64_t start[LAP_MAX_THREADS + 1];
  int share_bad[LAP_MAX_THREADS] = {0};
  lap_job_t J = {A, nx, ny, nz, full, (gs_val_t)(stencil - 1), 1, start, share_bad};
  const int64_t nlines = (int64_t)ny * nz;
  int64_t nt = gs_mm_threads();
  if (nt > nnz / gs_gen_share_min) nt = nnz / gs_gen_share_min;
  if (nt > nlines) nt = nlines;
  if (nt > LAP_MAX_THREADS) nt = LAP_MAX_THREADS;
  J.nt = nt < 1 ? 1 : (int)nt;
  /* thread t fills lines nlines t / nt ..: its first entry is the count of the lines before */
  int64_t p = 0, line = 0;
  for (int t = 0; t <= J.nt; ++t) {
    for (const int64_t first = nlines * t / J.nt; line < first; ++line)
      p += lap_line_entries(&J, (gs_idx_t)(line % ny), (gs_idx_t)(line / ny));
    start[t] = p;
  }
  int bad = p != nnz;
  if (!bad) gs_parallel(J.nt, lap_fill, &J);
  for (int t = 0; t < J.nt; ++t) bad |= share_bad[t];
  if (bad)
    GS_FAIL(GS_ERR_INTERNAL, "gs_gen_laplace: the lines' counts disagree with %lld nonzeros",
            (long long)nnz);
  A->row_ptr[npts] = (gs_off_t)nnz;
  A->symmetry = GS_SYM_SYMMETRIC; /* every entry is stored; the matrix is symmetric */
  *out = A;
  A = NULL;
cleanup:
  gs_csr_destroy(&A);
  return st;
}

/* ---- normal-distributed columns ------------------------------------------------------------ */

/* Figure 7 of Steinberger et al., ICS 2017 (HOLA): an N x N matrix whose row i has K entries at
 * columns normally distributed around the diagonal; the figure sweeps the variance from a band
 * to no correlation between rows at all.
 *
 * Exact definition. Row i draws c = floor(i + sigma * Z + 1/2), Z ~ N(0, 1), conditioned on
 * c in [0, N) (i.e. the draw is rejected outside the matrix), and a column already in the row
 * is redrawn, until the row has K columns; K >= N takes every column. Columns sorted; values
 * uniform in [-1, 1).
 *
 * How. The conditioning on [0, N) is done by sampling Z from the normal truncated to
 * [(-1/2 - i)/sigma, (N - 1/2 - i)/sigma] by inversion (u uniform between the CDF values of the
 * ends, Z = Phi^-1(u)): the same distribution as rejecting out-of-range draws, but O(1) per
 * draw however large sigma is against N. Duplicates are first simply redrawn. When they become
 * frequent (sigma not large against K), rows of K <= 64 switch to drawing straight from what
 * is left: u is taken uniform over the probability not yet used by the row, and the
 * intervals of the columns already taken are skipped when mapping u back to a column. Every
 * draw then gives a new column from exactly the distribution that redrawing duplicates would
 * give. That continues until the columns left hold under 1e-9 of the row's probability
 * (sigma tiny against K, where floating point could not tell them apart); the rest of the
 * row are then the free columns nearest to i (distance 0, 1, 2, ..., the side of each
 * distance in random order), which is where they would have been drawn anyway. sigma = 0 is
 * that band of the K columns nearest the diagonal. Rows of K > 64 redraw duplicates up to
 * 4K + 32 draws and K/2 + 16 duplicates in a row (a bound a row with sigma >= K reaches with
 * probability below 1e-12), take the nearest band directly when 8 sigma < K (over +-4 sigma
 * wide), and fill what is missing after the bound with the nearest free columns.
 * sigma > 10^6 N draws columns uniformly: the truncated normal is flat to within 1e-12 there,
 * and the CDF values of its two ends would both round to 1/2. */

enum { NORMAL_WALK_MAX = 64 };

/* CDF value at the left edge of column c's interval [c - 1/2, c + 1/2) for row i, and the
 * interval's probability (computed on the tail side, so tiny masses keep their digits). */
static double column_mass(double i, double sigma, gs_idx_t c, double *start)
{
  const double a = ((double)c - 0.5 - i) / sigma, b = ((double)c + 0.5 - i) / sigma;
  if (a >= 0.0) {
    const double qa = 0.5 * erfc(a * 0.70710678118654752440);
    *start = 1.0 - qa;
    return qa - 0.5 * erfc(b * 0.70710678118654752440);
  }
  *start = norm_cdf(a);
  return norm_cdf(b) - *start;
}

/* Continues row i (c[0..*m) already drawn, *m < k <= NORMAL_WALK_MAX) by drawing from the
 * probability left over [lo, hi], the CDF values of the matrix's ends. Leaves c sorted. */
static void normal_walk(rng_t *r, double i, gs_idx_t n, gs_idx_t k, double sigma, double lo,
                        double hi, gs_idx_t *c, gs_idx_t *m_io)
{
  double start[NORMAL_WALK_MAX], mass[NORMAL_WALK_MAX];
  gs_idx_t m = *m_io;
  sort_row(c, m);
  const double total = hi - lo;
  double taken = 0.0;
  for (gs_idx_t j = 0; j < m; ++j) {
    mass[j] = column_mass(i, sigma, c[j], &start[j]);
    taken += mass[j];
  }
  /* Rounding may land a draw on a taken column's edge: a redraw, bounded. */
  for (int misses = 0; m < k && misses < 64;) {
    const double left = total - taken;
    if (!(left > 1e-9 * total)) break;
    double s = lo + left * rng_uniform(r);
    for (gs_idx_t j = 0; j < m && s >= start[j]; ++j) s += mass[j];
    double x = floor(i + sigma * norm_quantile(s) + 0.5);
    if (!(x >= 0.0)) x = 0.0;
    if (x > (double)(n - 1)) x = (double)(n - 1);
    const gs_idx_t col = (gs_idx_t)x;
    gs_idx_t pos = 0;
    while (pos < m && c[pos] < col) ++pos;
    if (pos < m && c[pos] == col) {
      ++misses;
      continue;
    }
    for (gs_idx_t j = m; j > pos; --j) {
      c[j] = c[j - 1];
      start[j] = start[j - 1];
      mass[j] = mass[j - 1];
    }
    c[pos] = col;
    mass[pos] = column_mass(i, sigma, col, &start[pos]);
    taken += mass[pos];
    ++m;
  }
  *m_io = m;
}

gs_status_t gs_gen_normal(gs_csr_t **out, gs_idx_t n, gs_idx_t per_row, double sigma,
                          uint64_t seed)
{
  gs_status_t st = GS_SUCCESS;
  gs_csr_t *A = NULL;
  colset_t set = {0};
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_gen_normal: out is NULL");
  *out = NULL;
  if (n <= 0 || per_row <= 0)
    return GS_ERROR(GS_ERR_INVALID_ARG,
                    "gs_gen_normal: size %d and entries per row %d must be positive", n,
                    per_row);
  if (!(sigma >= 0.0) || !isfinite(sigma))
    return GS_ERROR(GS_ERR_INVALID_ARG,
                    "gs_gen_normal: sigma %g must be finite and non-negative", sigma);
  const gs_idx_t k = per_row < n ? per_row : n;
  const int64_t nnz = (int64_t)n * k;
  GS_TRY(gs_csr_create(&A, n, n, (gs_off_t)nnz));
  rng_t r;
  rng_seed(&r, seed, 1);
  const int short_rows = k <= NORMAL_WALK_MAX;
  const int64_t budget = 4 * (int64_t)k + 32, miss_limit = (int64_t)k / 2 + 16;
  for (gs_idx_t i = 0; i < n; ++i) {
    gs_idx_t *c = A->col + (int64_t)i * k;
    gs_val_t *v = A->val + (int64_t)i * k;
    A->row_ptr[i] = (gs_off_t)((int64_t)i * k);
    if (k == n) {
      for (gs_idx_t t = 0; t < n; ++t) c[t] = t;
    } else {
      GS_TRY(colset_reset(&set, k, c));
      if (sigma > 1e6 * (double)n) {
        for (int64_t draw = 0; draw < budget && set.count < k; ++draw) {
          const gs_idx_t col = (gs_idx_t)rng_below(&r, (uint32_t)n);
          if (!colset_has(&set, col)) colset_add(&set, col);
        }
      } else if (sigma > 0.0 && (short_rows || 8.0 * sigma >= (double)k)) {
        const double lo = norm_cdf((-0.5 - (double)i) / sigma);
        const double hi = norm_cdf(((double)n - 0.5 - (double)i) / sigma);
        int64_t misses = 0, in_a_row = 0;
        int walk = 0;
        for (int64_t draw = 0; set.count < k; ++draw) {
          if (short_rows ? misses > set.count / 2 + 4
                         : (draw >= budget || in_a_row >= miss_limit)) {
            walk = short_rows;
            break;
          }
          const double z = norm_quantile(lo + (hi - lo) * rng_uniform(&r));
          double x = floor((double)i + sigma * z + 0.5);
          if (!(x >= 0.0)) x = 0.0; /* guards the +-inf ends of the quantile */
          if (x > (double)(n - 1)) x = (double)(n - 1);
          const gs_idx_t col = (gs_idx_t)x;
          if (colset_has(&set, col)) {
            ++misses;
            ++in_a_row;
          } else {
            colset_add(&set, col);
            in_a_row = 0;
          }
        }
        if (walk) {
          gs_idx_t m = set.count;
          normal_walk(&r, (double)i, n, k, sigma, lo, hi, c, &m);
          GS_TRY(colset_reset(&set, k, c)); /* the set again, for the nearest-column fill */
          for (gs_idx_t t = 0; t < m; ++t) colset_add(&set, c[t]);
        }
      }
      /* Nearest free columns; terminates because k < n columns are free somewhere. */
      for (int64_t dist = 0; set.count < k; ++dist) {
        const int64_t side = (rng_next(&r) >> 63) ? 1 : -1;
        for (int s = 0; s < 2 && set.count < k; ++s) {
          const int64_t col = (int64_t)i + (s == 0 ? side : -side) * dist;
          if (col < 0 || col >= n) continue;
          if (!colset_has(&set, (gs_idx_t)col)) colset_add(&set, (gs_idx_t)col);
        }
      }
      sort_row(c, k);
    }
    for (gs_idx_t t = 0; t < k; ++t) v[t] = rng_value(&r);
  }
  A->row_ptr[n] = (gs_off_t)nnz;
  *out = A;
  A = NULL;
cleanup:
  free(set.slot);
  gs_csr_destroy(&A);
  return st;
}

/* ---- Pareto row lengths --------------------------------------------------------------------- */

/* Figure 9 of Bell & Garland, SC09: "matrices with 30K rows of 32 + delta nonzeros each,
 * where delta is a random variable drawn from a Pareto distribution. As the Pareto parameter k
 * is increased from 1, the variance in row lengths decreases rapidly."
 *
 * Exact definition. X = U^(-1/k) with U uniform in (0, 1] is Pareto with shape k and scale 1
 * (X >= 1, P(X >= x) = x^-k). delta = floor(X - 1) = floor(X) - 1 >= 0 and the row length is
 *   len = min(N, 32 + delta),   so   P(len >= 32 + j) = (j + 1)^-k,  j = 0, 1, 2, ...
 * The shortest row is one warp (32) and k -> infinity gives the uniform 32-per-row matrix;
 * k = 1 puts half the rows at 32 with an infinite-mean tail (capped at N). Row lengths come
 * from one random stream and columns and values from another, so the lengths can be drawn
 * twice (once to count the nonzeros, once to fill row_ptr) without a temporary array. Each
 * row's columns are distinct and uniform over [0, N), sorted; values uniform in [-1, 1). */
static gs_idx_t pareto_len(rng_t *r, gs_idx_t n, double k)
{
  const double x = pow(rng_uniform_pos(r), -1.0 / k); /* may be +inf for small k */
  const double delta = floor(x - 1.0);
  if (!(delta < (double)n - 32.0)) return n; /* also when n < 32: every row full */
  return 32 + (gs_idx_t)delta;
}

gs_status_t gs_gen_pareto(gs_csr_t **out, gs_idx_t n, double k, uint64_t seed)
{
  gs_status_t st = GS_SUCCESS;
  gs_csr_t *A = NULL;
  colset_t set = {0};
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_gen_pareto: out is NULL");
  *out = NULL;
  if (n <= 0) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_gen_pareto: size %d must be positive", n);
  if (!(k > 0.0) || !isfinite(k))
    return GS_ERROR(GS_ERR_INVALID_ARG,
                    "gs_gen_pareto: Pareto shape k = %g must be finite and positive", k);
  rng_t rl, rc;
  rng_seed(&rl, seed, 2);
  int64_t nnz = 0;
  for (gs_idx_t i = 0; i < n; ++i) nnz += pareto_len(&rl, n, k);
  GS_TRY(gs_csr_create(&A, n, n, (gs_off_t)nnz));
  rng_seed(&rl, seed, 2); /* the same lengths again */
  rng_seed(&rc, seed, 3);
  int64_t p = 0;
  for (gs_idx_t i = 0; i < n; ++i) {
    const gs_idx_t len = pareto_len(&rl, n, k);
    A->row_ptr[i] = (gs_off_t)p;
    GS_TRY(sample_uniform_row(&rc, n, len, A->col + p, &set));
    for (gs_idx_t t = 0; t < len; ++t) A->val[p + t] = rng_value(&rc);
    p += len;
  }
  A->row_ptr[n] = (gs_off_t)p;
  *out = A;
  A = NULL;
cleanup:
  free(set.slot);
  gs_csr_destroy(&A);
  return st;
}

/* ---- uniform random ------------------------------------------------------------------------- */

/* M x N with min(K, N) distinct columns per row, every subset of that size equally likely;
 * columns sorted, values uniform in [-1, 1). */
gs_status_t gs_gen_random(gs_csr_t **out, gs_idx_t m, gs_idx_t n, gs_idx_t per_row,
                          uint64_t seed)
{
  gs_status_t st = GS_SUCCESS;
  gs_csr_t *A = NULL;
  colset_t set = {0};
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_gen_random: out is NULL");
  *out = NULL;
  if (m <= 0 || n <= 0 || per_row <= 0)
    return GS_ERROR(GS_ERR_INVALID_ARG,
                    "gs_gen_random: size %d x %d and entries per row %d must be positive", m, n,
                    per_row);
  const gs_idx_t k = per_row < n ? per_row : n;
  const int64_t nnz = (int64_t)m * k;
  GS_TRY(gs_csr_create(&A, m, n, (gs_off_t)nnz));
  rng_t r;
  rng_seed(&r, seed, 4);
  for (gs_idx_t i = 0; i < m; ++i) {
    const int64_t p = (int64_t)i * k;
    A->row_ptr[i] = (gs_off_t)p;
    GS_TRY(sample_uniform_row(&r, n, k, A->col + p, &set));
    for (gs_idx_t t = 0; t < k; ++t) A->val[p + t] = rng_value(&r);
  }
  A->row_ptr[m] = (gs_off_t)nnz;
  *out = A;
  A = NULL;
cleanup:
  free(set.slot);
  gs_csr_destroy(&A);
  return st;
}

/* ---- power-law (scale-free graph) rows and columns ----------------------------------------- */

/* A directed graph of the Chung-Lu kind (F. Chung & L. Lu, "Connected components in random
 * graphs with given expected degree sequences", Annals of Combinatorics, 2002), whose
 * adjacency matrix has power-law (Zipf) row lengths and power-law column popularity, like the
 * web and social graphs of SpMV studies. CSR kernels that give one thread or one warp a row
 * meet a few rows thousands of times longer than the mean.
 *
 * Exact definition. With exponent gamma > 2 and beta = 1 / (gamma - 1), vertex rank k = 1..N
 * has weight w_k = min(N, C k^-beta), C chosen so that sum_k w_k = N * mean (the cap keeps a
 * row inside the matrix; C is found exactly, see powerlaw_weights). The weights are Zipf's
 * rank-size law: about (C/d)^(1/beta) vertices have weight >= d, so the share of rows of length
 * >= d falls as d^-(gamma-1) and P(length = d) as d^-gamma. A random permutation gives each
 * vertex (row i and column i) its rank, so long rows are scattered over the matrix.
 *  - Row i has floor(w) + B entries, w its vertex's weight and B a Bernoulli of probability
 *    w - floor(w): its expected length is w, the expected total N * mean, and the total
 *    deviates from it by a sum of independent terms in [-1, 1] (Hoeffding's bound).
 *  - Its columns are drawn without replacement with probability proportional to the weights
 *    (successive sampling: each draw picks among the columns not yet in the row, with
 *    probability w_j / sum of their weights), so popular vertices are popular columns too, as
 *    in an undirected scale-free graph; the diagonal may be drawn like any column.
 *  - Columns sorted; values uniform in [-1, 1).
 *
 * How. Draws come from Walker's alias table over the ranks (O(1) each); a column already in the
 * row is redrawn, which is successive sampling exactly. A row of at most N/8 entries redraws
 * little: what it has taken weighs at most the share of the N/8 heaviest ranks, which for
 * exponents above 2 (and after the cap, which only flattens the weights) is below that of the
 * weights 1/k, H(N/8) / H(N) (0.57 at N = 64, under 0.91 for every N < 2^31), so it needs
 * under 1 / (1 - share) < 11 draws per entry. A longer row is drawn by Efraimidis and
 * Spirakis' weighted reservoir (key log(u) / w_j for each column, the largest keys win): the
 * same distribution in O(N) for that row, O(8) per entry. The permutation, the row lengths,
 * the columns and the values come from four random streams. pow() and log() of the C library
 * could differ in the last bit between platforms; on one platform the output is bit for bit
 * reproducible. 2M rows of mean 8 (exponent 2.5) take under a second. */

/* Rank weights w[k-1] = min(n, C k^-beta), sum n * mean (mean <= n). The ranks capped at n are
 * a prefix 1..r (k^-beta decreases), and for a given r, C = (n*mean - r*n) / sum_{k>r} k^-beta;
 * r is the smallest count for which rank r + 1 is then not over the cap. */
static void powerlaw_weights(double *w, gs_idx_t n, double mean, double beta)
{
  if (mean >= (double)n) { /* every row full, without rounding in the way */
    for (gs_idx_t k = 0; k < n; ++k) w[k] = (double)n;
    return;
  }
  double tail = 0.0; /* sum_{k>r} k^-beta, summed smallest first */
  for (gs_idx_t k = n; k >= 1; --k) {
    w[k - 1] = pow((double)k, -beta);
    tail += w[k - 1];
  }
  const double total = (double)n * mean;
  gs_idx_t r = 0;
  double c = total / tail;
  while (r < n && c * w[r] > (double)n) {
    tail -= w[r];
    ++r;
    c = r < n && tail > 0.0 ? (total - (double)r * n) / tail : 0.0;
  }
  for (gs_idx_t k = 0; k < n; ++k) w[k] = k < r ? (double)n : fmin((double)n, c * w[k]);
}

/* Walker's alias table (Vose's construction): draw k uniform in [0, n), take t[k].col with
 * probability t[k].prob, else t[k].alt. One 16-byte slot per draw: a single cache miss in a table
 * far larger than the cache. */
typedef struct alias_slot {
  double prob;
  gs_idx_t col, alt;
} alias_slot_t;

/* The table for weights w[0..n) over ranks; small and large are scratch of n. */
static void alias_build(const double *w, gs_idx_t n, alias_slot_t *t, gs_idx_t *small,
                        gs_idx_t *large)
{
  double sum = 0.0;
  for (gs_idx_t k = 0; k < n; ++k) sum += w[k];
  gs_idx_t ns = 0, nl = 0;
  for (gs_idx_t k = 0; k < n; ++k) {
    t[k] = (alias_slot_t){w[k] * (double)n / sum, k, k};
    if (t[k].prob < 1.0)
      small[ns++] = k;
    else
      large[nl++] = k;
  }
  while (ns > 0 && nl > 0) {
    const gs_idx_t s = small[--ns], l = large[nl - 1];
    t[s].alt = l;
    t[l].prob -= 1.0 - t[s].prob;
    if (t[l].prob < 1.0) {
      --nl;
      small[ns++] = l;
    }
  }
  /* What is left is 1 up to rounding. */
  while (nl > 0) t[large[--nl]].prob = 1.0;
  while (ns > 0) t[small[--ns]].prob = 1.0;
}

/* Draws from the table through a short queue: a draw's slot is prefetched ALIAS_AHEAD draws
 * before it is used, so that the cache misses of successive draws overlap instead of following
 * one another (the table of a 2M-row matrix is 32 MB; waiting on each miss doubled the time). */
enum { ALIAS_AHEAD = 16 };

typedef struct alias_draws {
  const alias_slot_t *table;
  uint32_t n;
  unsigned head;
  uint32_t k[ALIAS_AHEAD];
  double u[ALIAS_AHEAD];
} alias_draws_t;

static inline void alias_refill(alias_draws_t *d, rng_t *r, unsigned at)
{
  d->k[at] = rng_below(r, d->n);
  d->u[at] = rng_uniform(r);
#if defined(__GNUC__)
  __builtin_prefetch(&d->table[d->k[at]]);
#endif
}

static void alias_draws_init(alias_draws_t *d, const alias_slot_t *table, gs_idx_t n, rng_t *r)
{
  d->table = table;
  d->n = (uint32_t)n;
  d->head = 0;
  for (unsigned t = 0; t < ALIAS_AHEAD; ++t) alias_refill(d, r, t);
}

static inline gs_idx_t alias_next(alias_draws_t *d, rng_t *r)
{
  const unsigned h = d->head;
  const alias_slot_t *s = &d->table[d->k[h]];
  const gs_idx_t col = d->u[h] < s->prob ? s->col : s->alt;
  alias_refill(d, r, h);
  d->head = (h + 1) % ALIAS_AHEAD;
  return col;
}

/* A min-heap of (key, column) pairs: the `need` largest keys seen so far. */
typedef struct keyed {
  double key;
  gs_idx_t col;
} keyed_t;

static void heap_sift_down(keyed_t *h, gs_idx_t size, gs_idx_t i)
{
  for (;;) {
    gs_idx_t m = i;
    const gs_idx_t l = 2 * i + 1, r = 2 * i + 2;
    if (l < size && h[l].key < h[m].key) m = l;
    if (r < size && h[r].key < h[m].key) m = r;
    if (m == i) return;
    const keyed_t t = h[i];
    h[i] = h[m];
    h[m] = t;
    i = m;
  }
}

/* Efraimidis & Spirakis: the k columns with the largest keys log(u) / weight, u uniform in
 * (0, 1], are a successive sample of size k (the same distribution as drawing by weight and
 * redrawing duplicates). Written sorted to out, through the marks (n bytes, all 0 on entry and
 * on return): an O(n) pass where a sort of k = O(n) columns would cost more than the draws.
 * heap has room for k entries. */
static void reservoir_row(rng_t *r, gs_idx_t n, gs_idx_t k, const double *wrank,
                          const gs_idx_t *col_rank, gs_idx_t *out, keyed_t *heap,
                          unsigned char *mark)
{
  gs_idx_t size = 0;
  for (gs_idx_t c = 0; c < n; ++c) {
    const double key = log(rng_uniform_pos(r)) / wrank[col_rank[c]];
    if (size < k) {
      heap[size] = (keyed_t){key, c};
      for (gs_idx_t i = size++; i > 0;) { /* sift up */
        const gs_idx_t p = (i - 1) / 2;
        if (heap[p].key <= heap[i].key) break;
        const keyed_t t = heap[p];
        heap[p] = heap[i];
        heap[i] = t;
        i = p;
      }
    } else if (key > heap[0].key) {
      heap[0] = (keyed_t){key, c};
      heap_sift_down(heap, size, 0);
    }
  }
  for (gs_idx_t t = 0; t < size; ++t) mark[heap[t].col] = 1;
  for (gs_idx_t c = 0, t = 0; c < n; ++c)
    if (mark[c]) {
      out[t++] = c;
      mark[c] = 0;
    }
}

gs_status_t gs_gen_powerlaw(gs_csr_t **out, gs_idx_t n, double mean, double exponent,
                            uint64_t seed)
{
  gs_status_t st = GS_SUCCESS;
  gs_csr_t *A = NULL;
  colset_t set = {0};
  double *w = NULL;
  alias_slot_t *table = NULL;
  gs_idx_t *perm = NULL, *rank_of = NULL, *len = NULL;
  keyed_t *heap = NULL;
  unsigned char *mark = NULL;
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_gen_powerlaw: out is NULL");
  *out = NULL;
  if (n <= 0) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_gen_powerlaw: size %d must be positive", n);
  if (!(mean > 0.0) || !(mean <= (double)n))
    return GS_ERROR(GS_ERR_INVALID_ARG,
                    "gs_gen_powerlaw: mean row length %g must be in (0, %d] (the row count)",
                    mean, n);
  if (!(exponent > 2.0) || !isfinite(exponent))
    return GS_ERROR(GS_ERR_INVALID_ARG,
                    "gs_gen_powerlaw: exponent %g must be finite and above 2 (the mean of a "
                    "power law d^-exponent is infinite at 2 and below)",
                    exponent);
  const size_t un = (size_t)n;
  w = malloc(un * sizeof *w);
  table = malloc(un * sizeof *table);
  perm = malloc(un * sizeof *perm);
  rank_of = malloc(un * sizeof *rank_of);
  len = malloc(un * sizeof *len);
  if (!w || !table || !perm || !rank_of || !len)
    GS_FAIL(GS_ERR_HOST_MEMORY, "gs_gen_powerlaw: out of host memory for the tables of %d rows",
            n);
  powerlaw_weights(w, n, mean, 1.0 / (exponent - 1.0));
  /* len and rank_of serve as the alias construction's work lists before they are filled. */
  alias_build(w, n, table, rank_of, len);

  /* perm[k]: the vertex of rank k (Fisher-Yates); rank_of its inverse. */
  rng_t rp, rl, rc, rv;
  rng_seed(&rp, seed, 5);
  for (gs_idx_t k = 0; k < n; ++k) perm[k] = k;
  for (gs_idx_t k = n - 1; k > 0; --k) {
    const gs_idx_t j = (gs_idx_t)rng_below(&rp, (uint32_t)k + 1u);
    const gs_idx_t t = perm[k];
    perm[k] = perm[j];
    perm[j] = t;
  }
  for (gs_idx_t k = 0; k < n; ++k) rank_of[perm[k]] = k;
  for (gs_idx_t k = 0; k < n; ++k) { /* the table's ranks to columns */
    table[k].col = perm[table[k].col];
    table[k].alt = perm[table[k].alt];
  }

  /* Row lengths, rank by rank: floor(w) + Bernoulli(w - floor(w)). */
  rng_seed(&rl, seed, 6);
  int64_t nnz = 0;
  gs_idx_t maxlen = 0;
  for (gs_idx_t k = 0; k < n; ++k) {
    const double f = floor(w[k]);
    gs_idx_t l = (gs_idx_t)f + (rng_uniform(&rl) < w[k] - f);
    if (l > n) l = n;
    len[perm[k]] = l;
    nnz += l;
    if (l > maxlen) maxlen = l;
  }
  GS_TRY(gs_csr_create(&A, n, n, (gs_off_t)nnz));

  rng_seed(&rc, seed, 7);
  rng_seed(&rv, seed, 8);
  alias_draws_t draws;
  alias_draws_init(&draws, table, n, &rc);
  int64_t p = 0;
  for (gs_idx_t i = 0; i < n; ++i) {
    const gs_idx_t l = len[i];
    gs_idx_t *c = A->col + p;
    A->row_ptr[i] = (gs_off_t)p;
    if (l == n) {
      for (gs_idx_t t = 0; t < n; ++t) c[t] = t;
    } else if (l > 0) {
      if ((int64_t)8 * l <= n) {
        GS_TRY(colset_reset(&set, l, c));
        while (set.count < l) {
          const gs_idx_t col = alias_next(&draws, &rc);
          if (!colset_has(&set, col)) colset_add(&set, col);
        }
        sort_row(c, l);
      } else {
        if (!heap) {
          heap = malloc((size_t)maxlen * sizeof *heap);
          mark = calloc(un, 1);
          if (!heap || !mark)
            GS_FAIL(GS_ERR_HOST_MEMORY,
                    "gs_gen_powerlaw: out of host memory for a reservoir of %d columns", maxlen);
        }
        reservoir_row(&rc, n, l, w, rank_of, c, heap, mark);
      }
    }
    for (gs_idx_t t = 0; t < l; ++t) A->val[p + t] = rng_value(&rv);
    p += l;
  }
  A->row_ptr[n] = (gs_off_t)p;
  *out = A;
  A = NULL;
cleanup:
  free(set.slot);
  free(heap);
  free(mark);
  free(w);
  free(table);
  free(perm);
  free(rank_of);
  free(len);
  gs_csr_destroy(&A);
  return st;
}

/* ---- convection-diffusion ------------------------------------------------------------------- */

/* -lap(u) + (P v) . grad(u) on the unit square (cube) with Dirichlet boundaries, nx x ny (x nz)
 * interior nodes, five-point (seven-point) diffusion and first-order upwind convection: the
 * nonsymmetric PDE matrices of the BentPipe2D kind. Scaled by h^2 / eps, the diffusion part is
 * exactly gs_gen_laplace's axis stencil (diagonal 2d, off-diagonals -1) and a velocity component
 * v_k at a node adds c = P v_k to the diagonal and -|c| to the neighbour upstream (i - e_k for
 * c > 0, i + e_k for c < 0): P is the largest cell Peclet number (velocity components are at most
 * 1). Every off-diagonal is <= -1 and every row sum is >= 0, positive on the boundary: an
 * irreducibly diagonally dominant Z-matrix, so a nonsingular M-matrix for every P >= 0
 * (Varga, Matrix Iterative Analysis, Thm. 3.11), which BiCGSTAB and GMRES solve without
 * trouble; P = 0 gives the Laplacian bit for bit.
 *
 * Fields (x, y, z the node's coordinates in (0, 1)):
 *   pipe   the bent pipe: flow turning a quarter circle around the corner (0, 0) inside the
 *          annulus 0.3 < r < 0.9, with a parabolic speed profile across it (1 at mid-radius),
 *          at rest outside (pure diffusion there);
 *   rotate rigid rotation about the centre, v = 2 (-(y - 1/2), x - 1/2);
 *   random a divergence-free field from a stream function of four random Fourier modes
 *          psi = sum a_m sin(pi k_m x) sin(pi l_m y) (a_m in [-1, 1), k_m, l_m in 1..3, from the
 *          seed), scaled by the bound sum |a_m| pi max(k_m, l_m) of its components.
 * In 3D every field also flows along the axis, v_z = 1/2. */
enum { CONVDIFF_MODES = 4 };

typedef struct convdiff_field {
  gs_flow_t kind;
  double a[CONVDIFF_MODES];
  int k[CONVDIFF_MODES], l[CONVDIFF_MODES];
  double scale; /* 1 / bound of the random field's components */
} convdiff_field_t;

static void convdiff_velocity(const convdiff_field_t *f, double x, double y, double v[2])
{
  const double pi = 3.14159265358979323846;
  v[0] = v[1] = 0.0;
  if (f->kind == GS_FLOW_PIPE) {
    const double r0 = 0.3, r1 = 0.9, r = sqrt(x * x + y * y);
    if (r <= r0 || r >= r1) return;
    const double s = 4.0 * (r - r0) * (r1 - r) / ((r1 - r0) * (r1 - r0));
    v[0] = -s * y / r;
    v[1] = s * x / r;
  } else if (f->kind == GS_FLOW_ROTATE) {
    v[0] = -2.0 * (y - 0.5);
    v[1] = 2.0 * (x - 0.5);
  } else {
    for (int m = 0; m < CONVDIFF_MODES; ++m) {
      const double kx = pi * f->k[m], ly = pi * f->l[m];
      v[0] += f->a[m] * ly * sin(kx * x) * cos(ly * y);  /* dpsi/dy */
      v[1] -= f->a[m] * kx * cos(kx * x) * sin(ly * y);  /* -dpsi/dx */
    }
    v[0] *= f->scale;
    v[1] *= f->scale;
  }
}

const char *gs_flow_name(gs_flow_t f)
{
  switch (f) {
  case GS_FLOW_PIPE: return "pipe";
  case GS_FLOW_ROTATE: return "rotate";
  case GS_FLOW_RANDOM: return "random";
  }
  return NULL;
}

gs_status_t gs_gen_convdiff(gs_csr_t **out, gs_idx_t nx, gs_idx_t ny, gs_idx_t nz, double peclet,
                            gs_flow_t flow, uint64_t seed)
{
  gs_status_t st = GS_SUCCESS;
  gs_csr_t *A = NULL;
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_gen_convdiff: out is NULL");
  *out = NULL;
  if (nx <= 0 || ny <= 0 || nz <= 0)
    return GS_ERROR(GS_ERR_INVALID_ARG,
                    "gs_gen_convdiff: grid %d x %d x %d: every dimension must be positive", nx,
                    ny, nz);
  if (!(peclet >= 0.0) || !isfinite(peclet))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_gen_convdiff: Peclet number %g must be finite and "
                    ">= 0", peclet);
  if (!gs_flow_name(flow))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_gen_convdiff: unknown velocity field %d", (int)flow);
  const int64_t nxy = (int64_t)nx * ny;
  if (nxy > INT32_MAX || nxy * nz > INT32_MAX)
    return GS_ERROR(GS_ERR_INVALID_ARG,
                    "gs_gen_convdiff: grid %d x %d x %d has more than 2^31-1 points", nx, ny, nz);
  convdiff_field_t field = {.kind = flow, .scale = 1.0};
  if (flow == GS_FLOW_RANDOM) {
    const double pi = 3.14159265358979323846;
    rng_t r;
    rng_seed(&r, seed, 6);
    double bound = 0.0;
    for (int m = 0; m < CONVDIFF_MODES; ++m) {
      field.a[m] = rng_value(&r);
      field.k[m] = 1 + (int)rng_below(&r, 3);
      field.l[m] = 1 + (int)rng_below(&r, 3);
      bound += fabs(field.a[m]) * pi * (field.k[m] > field.l[m] ? field.k[m] : field.l[m]);
    }
    field.scale = bound > 0.0 ? 1.0 / bound : 0.0;
  }
  const int dims = nz > 1 ? 3 : 2;
  const int64_t npts = nxy * nz;
  const int64_t nnz = npts + 2 * ((int64_t)(nx - 1) * ny * nz + (int64_t)nx * (ny - 1) * nz +
                                  (int64_t)nx * ny * (nz - 1));
  GS_TRY(gs_csr_create(&A, (gs_idx_t)npts, (gs_idx_t)npts, (gs_off_t)nnz));
  const double hx = 1.0 / (nx + 1.0), hy = 1.0 / (ny + 1.0);
  const int64_t stride[3] = {1, nx, nxy};
  int64_t p = 0;
  gs_idx_t row = 0;
  for (gs_idx_t z = 0; z < nz; ++z)
    for (gs_idx_t y = 0; y < ny; ++y)
      for (gs_idx_t x = 0; x < nx; ++x, ++row) {
        const gs_idx_t pos[3] = {x, y, z}, len[3] = {nx, ny, nz};
        double v[3];
        convdiff_velocity(&field, (x + 1) * hx, (y + 1) * hy, v);
        v[2] = dims == 3 ? 0.5 : 0.0;
        double c[3], diag = 2.0 * dims;
        for (int k = 0; k < 3; ++k) {
          c[k] = peclet * v[k];
          diag += fabs(c[k]);
        }
        A->row_ptr[row] = (gs_off_t)p;
        /* Neighbours from the farthest below to the farthest above: increasing columns. */
        for (int s = -3; s <= 3; ++s) {
          const int k = s < 0 ? -s - 1 : s - 1, dir = s < 0 ? -1 : 1;
          if (s != 0 && (pos[k] + dir < 0 || pos[k] + dir >= len[k])) continue;
          if (p >= nnz) GS_FAIL(GS_ERR_INTERNAL, "gs_gen_convdiff: nonzero count exceeded");
          if (s == 0) {
            A->col[p] = row;
            A->val[p] = diag;
          } else {
            const int upstream = (dir < 0 && c[k] > 0.0) || (dir > 0 && c[k] < 0.0);
            A->col[p] = (gs_idx_t)(row + dir * stride[k]);
            A->val[p] = upstream ? -1.0 - fabs(c[k]) : -1.0;
          }
          ++p;
        }
      }
  if (p != nnz)
    GS_FAIL(GS_ERR_INTERNAL, "gs_gen_convdiff: filled %lld nonzeros, expected %lld",
            (long long)p, (long long)nnz);
  A->row_ptr[npts] = (gs_off_t)p;
  A->symmetry = peclet == 0.0 ? GS_SYM_SYMMETRIC : GS_SYM_GENERAL;
  *out = A;
  A = NULL;
cleanup:
  gs_csr_destroy(&A);
  return st;
}

/* ---- 2D linear elasticity ------------------------------------------------------------------ */

/* Plane strain, bilinear (Q1) square elements of side 1, Lame parameters from E and nu. The
 * nodes form an (nx + 2) x (ny + 2) lattice whose border is fixed (Dirichlet: its unknowns are
 * left out); lattice node (px, py), 1 <= px <= nx, 1 <= py <= ny, is node (py - 1) nx + px - 1,
 * its x and y displacements the unknowns 2 node and 2 node + 1. Element (ex, ey), 0 <= ex <= nx,
 * 0 <= ey <= ny, has the corners (ex, ey), (ex + 1, ey), (ex + 1, ey + 1), (ex, ey + 1), local
 * unknowns 2 corner (x) and 2 corner + 1 (y).
 *
 * Every element of the lattice exists (only unknowns are cut at the border), so the coupling of
 * an unknown with one of a neighbour at offset (dx, dy) is the same sum of element entries for
 * every node: a 3 x 3 x 2 x 2 stencil, summed once over the shared elements in (ey, ex) order.
 * Couplings that cancel by symmetry (x with y at the node itself and at its four axis
 * neighbours) leave at most rounding, and are left out (below 1e-12 of the element's largest
 * diagonal), as PyAMG's sums leave exact zeros there that its users drop. The element matrix
 * is made symmetric bit for bit, so A is too. */

/* The element matrix: sum over the 2 x 2 Gauss points (exact for Q1 on a square) of
 * w B^T D B, D of plane strain, the upper triangle computed and mirrored. */
static void q1_element(double E, double nu, double K[8][8])
{
  const double lam = E * nu / ((1.0 + nu) * (1.0 - 2.0 * nu)), mu = E / (2.0 + 2.0 * nu);
  const double D[3][3] = {{lam + 2.0 * mu, lam, 0.0}, {lam, lam + 2.0 * mu, 0.0}, {0.0, 0.0, mu}};
  const double g[2] = {0.5 - 0.5 / sqrt(3.0), 0.5 + 0.5 / sqrt(3.0)};
  for (int a = 0; a < 8; ++a)
    for (int b = 0; b < 8; ++b) K[a][b] = 0.0;
  for (int p = 0; p < 2; ++p)
    for (int q = 0; q < 2; ++q) {
      const double x = g[p], y = g[q];
      /* the bilinear shape functions' gradients at (x, y), corners in element order */
      const double dx[4] = {-(1.0 - y), 1.0 - y, y, -y}, dy[4] = {-(1.0 - x), -x, x, 1.0 - x};
      double Bm[3][8] = {{0}};
      for (int c = 0; c < 4; ++c) {
        Bm[0][2 * c] = dx[c];     /* eps_xx = du/dx */
        Bm[1][2 * c + 1] = dy[c]; /* eps_yy = dv/dy */
        Bm[2][2 * c] = dy[c];     /* gamma_xy = du/dy + dv/dx */
        Bm[2][2 * c + 1] = dx[c];
      }
      for (int a = 0; a < 8; ++a)
        for (int b = a; b < 8; ++b) {
          double s = 0.0;
          for (int r = 0; r < 3; ++r)
            for (int t = 0; t < 3; ++t) s += Bm[r][a] * D[r][t] * Bm[t][b];
          K[a][b] += 0.25 * s; /* weight 1/4 a point on the unit square */
        }
    }
  for (int a = 0; a < 8; ++a)
    for (int b = 0; b < a; ++b) K[a][b] = K[b][a];
}

/* Local corner of lattice node (px, py) in element (ex, ey) (the node one of its corners). */
static int q1_corner(gs_idx_t px, gs_idx_t py, gs_idx_t ex, gs_idx_t ey)
{
  const int cx = (int)(px - ex), cy = (int)(py - ey);
  return cy == 0 ? cx : 3 - cx;
}

gs_status_t gs_gen_elasticity(gs_csr_t **out, gs_idx_t nx, gs_idx_t ny, double E, double nu,
                              gs_val_t **rbm)
{
  gs_status_t st = GS_SUCCESS;
  gs_csr_t *A = NULL;
  gs_val_t *B = NULL;
  if (rbm) *rbm = NULL;
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_gen_elasticity: out is NULL");
  *out = NULL;
  if (nx <= 0 || ny <= 0)
    return GS_ERROR(GS_ERR_INVALID_ARG,
                    "gs_gen_elasticity: grid %d x %d: both sizes must be positive", nx, ny);
  if (!(E > 0.0) || !isfinite(E))
    return GS_ERROR(GS_ERR_INVALID_ARG,
                    "gs_gen_elasticity: Young's modulus %g must be finite and positive", E);
  if (!(nu > -1.0 && nu < 0.5))
    return GS_ERROR(GS_ERR_INVALID_ARG,
                    "gs_gen_elasticity: Poisson's ratio %g must be in (-1, 0.5) (plane strain "
                    "is positive definite there only)", nu);
  const int64_t n = 2 * (int64_t)nx * ny;
  if (n > INT32_MAX)
    return GS_ERROR(GS_ERR_INVALID_ARG,
                    "gs_gen_elasticity: grid %d x %d has more than 2^31-1 unknowns (2 a node)",
                    nx, ny);

  /* the stencil S[dy + 1][dx + 1][c][d]: unknown c of a node with unknown d of the node at
   * (dx, dy), summed over their shared elements; keep[...] where it does not cancel */
  double K[8][8], S[3][3][2][2], kmax = 0.0;
  unsigned char keep[3][3][2][2];
  q1_element(E, nu, K);
  for (int a = 0; a < 8; ++a) kmax = fmax(kmax, fabs(K[a][a]));
  const gs_idx_t px = 1, py = 1; /* any node: the stencil does not depend on it */
  for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx)
      for (int c = 0; c < 2; ++c)
        for (int d = 0; d < 2; ++d) {
          const gs_idx_t qx = px + dx, qy = py + dy;
          double s = 0.0;
          for (gs_idx_t ey = (py > qy ? py : qy) - 1; ey <= (py < qy ? py : qy); ++ey)
            for (gs_idx_t ex = (px > qx ? px : qx) - 1; ex <= (px < qx ? px : qx); ++ex)
              s += K[2 * q1_corner(px, py, ex, ey) + c][2 * q1_corner(qx, qy, ex, ey) + d];
          S[dy + 1][dx + 1][c][d] = s;
          keep[dy + 1][dx + 1][c][d] = fabs(s) > 1e-12 * kmax;
        }

  /* entries: each row keeps the stencil's columns whose node lies inside the grid */
  int64_t nnz = 0;
  for (gs_idx_t j = 0; j < ny; ++j)
    for (gs_idx_t i = 0; i < nx; ++i)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          if (i + dx < 0 || i + dx >= nx || j + dy < 0 || j + dy >= ny) continue;
          for (int c = 0; c < 2; ++c)
            for (int d = 0; d < 2; ++d) nnz += keep[dy + 1][dx + 1][c][d];
        }
  GS_TRY(gs_csr_create(&A, (gs_idx_t)n, (gs_idx_t)n, (gs_off_t)nnz));
  if (rbm) {
    B = malloc((size_t)n * 3 * sizeof *B);
    if (!B)
      GS_FAIL(GS_ERR_HOST_MEMORY,
              "gs_gen_elasticity: out of host memory for the rigid-body modes (%lld x 3)",
              (long long)n);
  }
  int64_t p = 0, row = 0;
  for (gs_idx_t j = 0; j < ny; ++j)
    for (gs_idx_t i = 0; i < nx; ++i)
      for (int c = 0; c < 2; ++c, ++row) {
        A->row_ptr[row] = (gs_off_t)p;
        /* neighbours by (dy, dx), then their x before y: increasing columns */
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) {
            if (i + dx < 0 || i + dx >= nx || j + dy < 0 || j + dy >= ny) continue;
            const int64_t node = (int64_t)(j + dy) * nx + (i + dx);
            for (int d = 0; d < 2; ++d) {
              if (!keep[dy + 1][dx + 1][c][d]) continue;
              if (p >= nnz) GS_FAIL(GS_ERR_INTERNAL, "gs_gen_elasticity: entry count exceeded");
              A->col[p] = (gs_idx_t)(2 * node + d);
              A->val[p++] = S[dy + 1][dx + 1][c][d];
            }
          }
      }
  if (p != nnz)
    GS_FAIL(GS_ERR_INTERNAL, "gs_gen_elasticity: filled %lld entries, expected %lld",
            (long long)p, (long long)nnz);
  A->row_ptr[n] = (gs_off_t)p;
  A->symmetry = GS_SYM_SYMMETRIC; /* every entry stored, A == A^T bit for bit */
  if (B) {
    /* x translation, y translation, rotation (-y, x) about the grid's centre */
    const double cx = 0.5 * ((double)nx + 1.0), cy = 0.5 * ((double)ny + 1.0);
    for (gs_idx_t j = 0; j < ny; ++j)
      for (gs_idx_t i = 0; i < nx; ++i) {
        const size_t u = 2 * ((size_t)j * (size_t)nx + (size_t)i), un = (size_t)n;
        const double x = (double)(i + 1) - cx, y = (double)(j + 1) - cy;
        B[u] = 1.0, B[u + 1] = 0.0;
        B[un + u] = 0.0, B[un + u + 1] = 1.0;
        B[2 * un + u] = -y, B[2 * un + u + 1] = x;
      }
    *rbm = B;
    B = NULL;
  }
  *out = A;
  A = NULL;
cleanup:
  free(B);
  gs_csr_destroy(&A);
  return st;
}
