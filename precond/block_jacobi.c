/* precond/block_jacobi.c: the block-Jacobi preconditioner z = D_B^-1 r, D_B the diagonal blocks
 * of A (precond/block_jacobi.h: the partition and the pivot rule). The partition is made on the
 * host from the pattern (O(nnz), a row compared with the one before); the blocks are extracted
 * from the device CSR and inverted there in one batched kernel, and applying is one kernel
 * (precond/block_jacobi_kernels.cu). Also the host reference the tests compare against. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "precond/block_jacobi.h"
#include "spmv/spmv_impl.h"

/* ---- the partition ------------------------------------------------------------------------- */

/* Whether rows i and j store the same column sequence. */
static int same_pattern(const gs_csr_t *A, gs_idx_t i, gs_idx_t j)
{
  const gs_off_t li = A->row_ptr[i + 1] - A->row_ptr[i];
  if (li != A->row_ptr[j + 1] - A->row_ptr[j]) return 0;
  return li == 0 ||
         memcmp(A->col + A->row_ptr[i], A->col + A->row_ptr[j], (size_t)li * sizeof *A->col) == 0;
}

gs_status_t gs_bj_partition(const gs_csr_t *A, int max_block, int agglomerate,
                            gs_idx_t **block_ptr, gs_idx_t *nblocks)
{
  *block_ptr = NULL;
  *nblocks = 0;
  if (max_block < 1 || max_block > GS_BJ_MAX_BLOCK)
    return GS_ERROR(GS_ERR_INVALID_ARG, "block-jacobi: block size %d outside 1 .. %d", max_block,
                    GS_BJ_MAX_BLOCK);
  const gs_idx_t n = A->m;
  gs_idx_t *bp = malloc(((size_t)n + 1) * sizeof *bp);
  if (!bp) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory partitioning %d rows", (int)n);
  gs_idx_t nb = 0;
  bp[0] = 0;
  if (!agglomerate) {
    for (int64_t r = 0; r < n; r += max_block)
      bp[++nb] = (gs_idx_t)(r + max_block < n ? r + max_block : n);
  } else {
    int cur = 0; /* rows in the open block */
    gs_idx_t r = 0;
    while (r < n) {
      gs_idx_t e = r + 1; /* the piece: rows r .. e-1 of one supervariable, at most max_block */
      while (e < n && e - r < max_block && same_pattern(A, e, e - 1)) ++e;
      const int len = (int)(e - r);
      if (cur > 0 && cur + len <= max_block) {
        cur += len;
      } else {
        if (cur > 0) bp[++nb] = r;
        cur = len;
      }
      r = e;
    }
    if (n > 0) bp[++nb] = n;
  }
  *block_ptr = bp;
  *nblocks = nb;
  return GS_SUCCESS;
}

int gs_bj_max_size(const gs_idx_t *block_ptr, gs_idx_t nblocks)
{
  int m = 0;
  for (gs_idx_t b = 0; b < nblocks; ++b)
    if (block_ptr[b + 1] - block_ptr[b] > m) m = (int)(block_ptr[b + 1] - block_ptr[b]);
  return m;
}

void gs_bj_offsets(const gs_idx_t *block_ptr, gs_idx_t nblocks, int64_t *off)
{
  off[0] = 0;
  for (gs_idx_t b = 0; b < nblocks; ++b) {
    const int64_t s = block_ptr[b + 1] - block_ptr[b];
    off[b + 1] = off[b] + s * s;
  }
}

/* ---- the host reference -------------------------------------------------------------------- */

double gs_bj_extract(const gs_csr_t *A, gs_idx_t r0, int s, double *B)
{
  memset(B, 0, (size_t)s * s * sizeof *B);
  for (int i = 0; i < s; ++i)
    for (gs_off_t k = A->row_ptr[r0 + i]; k < A->row_ptr[r0 + i + 1]; ++k) {
      const int64_t c = (int64_t)A->col[k] - r0;
      if (c >= 0 && c < s) B[i * s + c] += A->val[k];
    }
  double m = 0.0;
  for (int k = 0; k < s * s; ++k) m = fmax(m, fabs(B[k]));
  return m;
}

int gs_bj_lu(double *B, int s, int *piv, double *dropped)
{
  double M[GS_BJ_MAX_BLOCK * GS_BJ_MAX_BLOCK]; /* the magnitudes m_ij (block_jacobi.h) */
  for (int k = 0; k < s * s; ++k) M[k] = fabs(B[k]);
  if (dropped) memset(dropped, 0, (size_t)s * s * sizeof *dropped);
  for (int k = 0; k < s; ++k) {
    int p = -1;
    double best = -1.0;
    for (int i = k; i < s; ++i) {
      const double a = fabs(B[i * s + k]);
      if (GS_BJ_PIVOT_OK(a, M[i * s + k], s) && a > best) {
        best = a;
        p = i;
      }
    }
    piv[k] = p < 0 ? k : p;
    if (p < 0) return k;
    if (p != k)
      for (int j = 0; j < s; ++j) {
        double t = B[k * s + j];
        B[k * s + j] = B[p * s + j];
        B[p * s + j] = t;
        t = M[k * s + j];
        M[k * s + j] = M[p * s + j];
        M[p * s + j] = t;
        if (dropped) {
          t = dropped[k * s + j];
          dropped[k * s + j] = dropped[p * s + j];
          dropped[p * s + j] = t;
        }
      }
    for (int i = k + 1; i < s; ++i) {
      if (!GS_BJ_PIVOT_OK(fabs(B[i * s + k]), M[i * s + k], s)) { /* noise: taken as zero */
        if (dropped) dropped[i * s + k] = fabs(B[i * s + k]);
        B[i * s + k] = 0.0;
        continue;
      }
      const double l = B[i * s + k] / B[k * s + k];
      B[i * s + k] = l;
      for (int j = k + 1; j < s; ++j) {
        B[i * s + j] -= l * B[k * s + j];
        M[i * s + j] += fabs(l) * M[k * s + j];
      }
    }
  }
  return -1;
}

void gs_bj_lu_solve(const double *LU, const int *piv, int s, double *x)
{
  for (int k = 0; k < s; ++k)
    if (piv[k] != k) {
      const double t = x[k];
      x[k] = x[piv[k]];
      x[piv[k]] = t;
    }
  for (int i = 1; i < s; ++i)      /* x <- L^-1 x */
    for (int j = 0; j < i; ++j) x[i] -= LU[i * s + j] * x[j];
  for (int i = s - 1; i >= 0; --i) { /* x <- U^-1 x */
    for (int j = i + 1; j < s; ++j) x[i] -= LU[i * s + j] * x[j];
    x[i] /= LU[i * s + i];
  }
}

int64_t gs_bj_host_apply(const gs_csr_t *A, const gs_idx_t *block_ptr, gs_idx_t nblocks,
                         int fallback, const double *r, double *z, int *code, int64_t *fallbacks)
{
  double B[GS_BJ_MAX_BLOCK * GS_BJ_MAX_BLOCK], D[GS_BJ_MAX_BLOCK], x[GS_BJ_MAX_BLOCK];
  int piv[GS_BJ_MAX_BLOCK];
  int64_t nfb = 0, failed = -1;
  *code = -1;
  for (gs_idx_t b = 0; b < nblocks && failed < 0; ++b) {
    const gs_idx_t r0 = block_ptr[b];
    const int s = (int)(block_ptr[b + 1] - r0);
    gs_bj_extract(A, r0, s, B);
    for (int i = 0; i < s; ++i) {
      D[i] = B[i * s + i];
      x[i] = r[r0 + i];
    }
    const int k = gs_bj_lu(B, s, piv, NULL);
    if (k < 0) {
      gs_bj_lu_solve(B, piv, s, x);
    } else if (!fallback) {
      failed = b;
      *code = k;
    } else {
      int zero = -1;
      for (int i = 0; i < s && zero < 0; ++i)
        if (D[i] == 0.0) zero = i;
      if (zero >= 0) {
        failed = b;
        *code = 32 + zero;
      } else {
        for (int i = 0; i < s; ++i) x[i] = x[i] * (1.0 / D[i]); /* as the kernel: r * (1/d) */
        ++nfb;
      }
    }
    for (int i = 0; i < s; ++i) z[r0 + i] = x[i];
  }
  if (fallbacks) *fallbacks = nfb;
  return failed;
}

/* ---- the preconditioner -------------------------------------------------------------------- */

typedef struct {
  gs_context_t *ctx; /* frees go through it */
  gs_idx_t n, nblocks;
  int max_size;      /* rows of the largest block: the kernels' group width follows it */
  unsigned caps;
  int64_t fallbacks; /* blocks applied as Jacobi (singular=jacobi) */
  gs_idx_t *d_bp;    /* nblocks + 1 block starts */
  int64_t *d_off;    /* nblocks + 1 offsets of the inverses in d_inv */
  double *d_inv;     /* the blocks' inverses, column-major */
  size_t bytes;
} bj_t;

enum { OPT_BLOCK, OPT_AGGLOMERATE, OPT_SINGULAR };
static const gs_precond_option_t bj_options[] = {
  {"block", "largest diagonal block, in rows", GS_PCOPT_INT, GS_BJ_DEFAULT_BLOCK, 1,
   GS_BJ_MAX_BLOCK, NULL},
  {"agglomerate", "1: blocks from runs of rows with one pattern (supervariables), merged up to "
   "block rows; 0: fixed blocks of block rows", GS_PCOPT_INT, 1, 0, 1, NULL},
  {"singular", "a singular block: error, or jacobi (its diagonal inverted, when nonzero)",
   GS_PCOPT_CHOICE, 0, 0, 0, "error|jacobi"},
  {NULL, NULL, GS_PCOPT_REAL, 0, 0, 0, NULL}};

static void bj_destroy(void *data)
{
  bj_t *J = data;
  if (!J) return;
  gs_dfree(J->ctx, J->d_bp);
  gs_dfree(J->ctx, J->d_off);
  gs_dfree(J->ctx, J->d_inv);
  free(J);
}

static gs_status_t bj_setup_cfg(gs_context_t *ctx, gs_matrix_t *A, const gs_precond_cfg_t *cfg,
                                void **data)
{
  gs_status_t st = GS_SUCCESS;
  gs_idx_t *bp = NULL, nb = 0;
  int64_t *off = NULL;
  unsigned long long *d_fail = NULL;
  const gs_csr_t *h = gs_matrix_host(A);
  bj_t *J = calloc(1, sizeof *J);
  if (!J) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory setting up block-Jacobi");
  J->ctx = ctx;
  J->n = h->m;
  const int fallback = (int)cfg->v[OPT_SINGULAR] == 1;
  GS_TRY(gs_bj_partition(h, (int)cfg->v[OPT_BLOCK], (int)cfg->v[OPT_AGGLOMERATE], &bp, &nb));
  J->nblocks = nb;
  J->max_size = gs_bj_max_size(bp, nb);
  off = malloc(((size_t)nb + 1) * sizeof *off);
  if (!off) GS_FAIL(GS_ERR_HOST_MEMORY, "out of host memory setting up block-Jacobi");
  gs_bj_offsets(bp, nb, off);
  /* the inverse of a symmetric block is symmetric: M^T = M exactly when A's blocks are */
  const gs_features_t *f = gs_matrix_features(A);
  J->caps = GS_PRECOND_FLAG_CAPTURABLE |
            (f && f->numerically_symmetric ? GS_PRECOND_FLAG_SYMMETRIC : 0u);
  if (nb > 0) {
    gs_dcsr_t D;
    GS_TRY(gs_matrix_device_csr(A, &D));
    GS_TRY(gs_upload(ctx, (void **)&J->d_bp, bp, ((size_t)nb + 1) * sizeof *bp,
                     "the block-Jacobi block starts"));
    GS_TRY(gs_upload(ctx, (void **)&J->d_off, off, ((size_t)nb + 1) * sizeof *off,
                     "the block-Jacobi offsets"));
    GS_TRY(gs_dmalloc(ctx, (void **)&J->d_inv, (size_t)off[nb] * sizeof(double),
                      "the block-Jacobi inverses"));
    const unsigned long long init[2] = {ULLONG_MAX, 0};
    unsigned long long res[2];
    GS_TRY(gs_upload(ctx, (void **)&d_fail, init, sizeof init, "the block-Jacobi status"));
    GS_TRY(gs_bj_factor_launch(ctx->stream, nb, J->max_size, J->d_bp, J->d_off, D.d_row_ptr32,
                               D.d_row_ptr64, D.d_col, D.d_val, fallback, J->d_inv, d_fail));
    GS_TRY(gs_copy_to_host(ctx, res, d_fail, sizeof res));
    if (res[0] != ULLONG_MAX) {
      const gs_idx_t b = (gs_idx_t)(res[0] >> 6);
      const int code = (int)(res[0] & 63);
      const long long r0 = (long long)bp[b] + 1, r1 = bp[b + 1];
      if (code < 32)
        GS_FAIL(GS_ERR_INVALID_ARG,
                "block-jacobi: the diagonal block of rows %lld-%lld (1-based; block %lld of %lld) "
                "is singular to working precision: no pivot for row %lld (option "
                "singular=jacobi applies such blocks as Jacobi; or another block size)",
                r0, r1, (long long)b + 1, (long long)nb, r0 + code);
      GS_FAIL(GS_ERR_INVALID_ARG,
              "block-jacobi: the diagonal block of rows %lld-%lld (1-based) is singular and row "
              "%lld has a zero diagonal entry: neither the block nor Jacobi can be inverted",
              r0, r1, r0 + (code - 32));
    }
    J->fallbacks = (int64_t)res[1];
  }
  J->bytes = ((size_t)nb + 1) * (sizeof *bp + sizeof *off) + (size_t)off[nb] * sizeof(double);
  *data = J;
  J = NULL;
cleanup:
  gs_dfree(ctx, d_fail);
  free(bp);
  free(off);
  bj_destroy(J);
  return st;
}

static gs_status_t bj_setup(gs_context_t *ctx, gs_matrix_t *A, void **data)
{
  gs_precond_cfg_t cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.v[OPT_BLOCK] = GS_BJ_DEFAULT_BLOCK;
  cfg.v[OPT_AGGLOMERATE] = 1;
  return bj_setup_cfg(ctx, A, &cfg, data);
}

static gs_status_t bj_apply(gs_context_t *ctx, void *data, const double *d_r, double *d_z)
{
  const bj_t *J = data;
  return gs_bj_apply_launch(ctx->stream, J->nblocks, J->max_size, J->d_bp, J->d_off, J->d_inv,
                            d_r, d_z);
}

static size_t bj_bytes(const void *data) { return data ? ((const bj_t *)data)->bytes : 0; }

static unsigned bj_caps(const void *data) { return ((const bj_t *)data)->caps; }

const gs_precond_ops_t gs_precond_block_jacobi_ops = {
  GS_PRECOND_OPS_VERSION, "block-jacobi",
  "inverses of the diagonal blocks (up to 32 rows, supervariables agglomerated), batched on "
  "the GPU",
  bj_setup, bj_apply, bj_bytes, bj_destroy,
  GS_PRECOND_FLAG_CAPTURABLE, /* symmetric per instance (bj_caps): only for a symmetric A */
  bj_options, bj_setup_cfg, NULL, bj_caps, NULL};
