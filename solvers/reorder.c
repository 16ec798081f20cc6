/* solvers/reorder.c: the symmetric reordering of a solve (gpusolve/solver.h, docs/reorder.md):
 * the ordering chosen (core/order.c: RCM, degree, and auto's predictor; RCM on the GPU from
 * GS_REORDER_DEV_RCM_MIN_NNZ entries, spmv/rcm_devbuild.cu), P A P^T built once on the host,
 * the permutation on the device, and gs_solve wrapped with b and x0 permuted in and x permuted
 * out (solvers/reorder_kernels.cu), so that the caller sees its own numbering. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/order.h"
#include "gpusolve/timer.h"
#include "solvers/reorder_impl.h"
#include "solvers/reorder_kernels.h"
#include "solvers/solver_impl.h"
#include "spmv/rcm_devbuild.h"

/* From this many entries RCM is computed on the GPU (gs_rcm_dev_csr: the host's order, entry
 * for entry): below it the pattern's upload and the kernel's launches cost more than the
 * host's walk. The test hook gs_test_reorder_dev_rcm (core/testhooks.h) moves it. */
#define GS_REORDER_DEV_RCM_MIN_NNZ ((gs_off_t)1 << 20)

struct gs_reorder {
  gs_context_t *ctx;      /* borrowed */
  gs_idx_t n;
  const gs_csr_t *A;      /* the caller's (borrowed), what gs_reorder_csr gives without order */
  gs_csr_t *PA;           /* P A P^T (owned), NULL without order */
  gs_idx_t *perm;         /* host permutation (owned), NULL without order */
  gs_idx_t *d_perm;       /* its device copy */
  gs_reorder_info_t info;
};

static const char *const names[] = {"none", "rcm", "degree", "auto"};

const char *gs_reorder_string(gs_reorder_kind_t k)
{
  return (int)k >= 0 && (int)k < 4 ? names[k] : "unknown";
}

int gs_reorder_find(const char *name)
{
  if (!name) return -1;
  for (int k = 0; k < 4; ++k)
    if (!strcmp(name, names[k])) return k;
  return -1;
}

gs_status_t gs_reorder_rcm(gs_context_t *ctx, const gs_csr_t *A, gs_idx_t *perm, int *on_device)
{
  if (on_device) *on_device = 0;
  const int mode = ctx->test_reorder_dev_rcm;
  if (mode == 1 || (mode == 0 && A->nnz >= GS_REORDER_DEV_RCM_MIN_NNZ)) {
    int dev = 0;
    const gs_status_t st = gs_rcm_dev_csr(ctx, A, perm, &dev);
    if (st == GS_SUCCESS && dev) {
      if (on_device) *on_device = 1;
      return GS_SUCCESS;
    }
    /* out of device memory (it freed what it took): the host's walk needs none, and the
     * create that succeeds through it leaves no error message behind */
    if (st == GS_ERR_DEVICE_MEMORY) gs_clear_error();
    else if (st != GS_SUCCESS) return st;
  }
  return gs_csr_rcm(A, perm);
}

/* One candidate ordering of A into perm (n entries); *on_device (when not NULL) = 1 when the
 * GPU computed it (RCM: gs_reorder_rcm). */
static gs_status_t order(gs_reorder_t *R, const gs_csr_t *A, gs_reorder_kind_t k, gs_idx_t *perm,
                         int *on_device)
{
  if (on_device) *on_device = 0;
  if (k != GS_REORDER_RCM) return gs_csr_degree_order(A, perm);
  return gs_reorder_rcm(R->ctx, A, perm, on_device);
}

/* AUTO: both candidates, the one with fewer x lines into R->perm (or none, with the reason). */
static gs_status_t choose(gs_reorder_t *R, const gs_csr_t *A, double products, double t0,
                          gs_reorder_kind_t *kind)
{
  gs_status_t st = GS_SUCCESS;
  gs_idx_t *other = NULL;
  const int64_t before = R->info.lines_before;
  /* Before paying for the orderings: even a candidate that saved every x line must pay their
   * cost at its floor (GS_REORDER_AUTO_NS_PER_ENTRY, below every measured rate), else the
   * rule below could only decline, after the orderings (0.8 s on the 27-point 100^3). */
  const double floor_s = 2.0 * GS_REORDER_AUTO_NS_PER_ENTRY * 1e-9 * (double)A->nnz;
  if (products > 0.0 &&
      products * (double)before * 64.0 / GS_REORDER_AUTO_BYTES_PER_S <
          GS_REORDER_AUTO_MARGIN * floor_s) {
    R->info.note = "declined: the expected products could not pay the ordering";
    *kind = GS_REORDER_NONE;
    return GS_SUCCESS;
  }
  other = malloc(((size_t)R->n + 1) * sizeof *other);
  if (!other) GS_FAIL(GS_ERR_HOST_MEMORY, "gs_reorder_create: out of host memory");
  GS_TRY(order(R, A, GS_REORDER_RCM, R->perm, NULL));
  GS_TRY(order(R, A, GS_REORDER_DEGREE, other, NULL));
  const int64_t l_rcm = gs_csr_x_lines(A, R->perm), l_deg = gs_csr_x_lines(A, other);
  if (l_rcm < 0 || l_deg < 0) GS_FAIL(GS_ERR_HOST_MEMORY, "gs_reorder_create: out of host memory");
  *kind = GS_REORDER_RCM;
  int64_t best = l_rcm;
  if (l_deg < l_rcm) { /* ties keep rcm: it also narrows the band */
    memcpy(R->perm, other, (size_t)R->n * sizeof *other);
    *kind = GS_REORDER_DEGREE;
    best = l_deg;
  }
  R->info.lines_after = best;
  /* the ordering's cost: what was measured so far, twice (P A P^T costs about the same again) */
  const double cost = 2.0 * (gs_wall_seconds() - t0);
  const double saved = products * (double)(before - best) * 64.0 / GS_REORDER_AUTO_BYTES_PER_S;
  if ((double)best > GS_REORDER_AUTO_RATIO * (double)before) {
    R->info.note = "declined: the best ordering saves too few x lines";
    *kind = GS_REORDER_NONE;
  } else if (products <= 0.0) {
    R->info.note = "declined: no products expected";
    *kind = GS_REORDER_NONE;
  } else if (saved < GS_REORDER_AUTO_MARGIN * cost) {
    R->info.note = "declined: the expected products do not pay the ordering";
    *kind = GS_REORDER_NONE;
  } else {
    R->info.note = "the x lines saved over the expected products pay the ordering";
  }

cleanup:
  free(other);
  return st;
}

gs_status_t gs_reorder_create(gs_reorder_t **out, gs_context_t *ctx, const gs_csr_t *A,
                              gs_reorder_kind_t kind, double products)
{
  static const char fn[] = "gs_reorder_create";
  gs_status_t st = GS_SUCCESS;
  gs_reorder_t *R = NULL;
  if (!out) return GS_ERROR(GS_ERR_INVALID_ARG, "%s: R is NULL", fn);
  *out = NULL;
  if (!ctx || !A) return GS_ERROR(GS_ERR_INVALID_ARG, "%s: NULL argument", fn);
  if ((int)kind < GS_REORDER_NONE || (int)kind > GS_REORDER_AUTO)
    return GS_ERROR(GS_ERR_INVALID_ARG, "%s: unknown ordering %d (none, rcm, degree, auto)", fn,
                    (int)kind);
  if (!(products >= 0.0)) /* NaN too */
    return GS_ERROR(GS_ERR_INVALID_ARG, "%s: expected products %g is negative", fn, products);
  if (A->m != A->n)
    return GS_ERROR(GS_ERR_DIMENSION, "%s: the matrix is %d x %d: a symmetric reordering needs "
                    "a square one", fn, A->m, A->n);
  GS_CHECK(gs_csr_validate(A));
  const double t0 = gs_wall_seconds();
  R = calloc(1, sizeof *R);
  if (!R) return GS_ERROR(GS_ERR_HOST_MEMORY, "%s: out of host memory", fn);
  R->ctx = ctx;
  R->n = A->m;
  R->A = A;
  R->info.requested = kind;
  R->info.kind = GS_REORDER_NONE;
  R->info.note = "";
  R->info.bandwidth_before = R->info.bandwidth_after = gs_csr_bandwidth(A);
  R->info.lines_before = R->info.lines_after = gs_csr_x_lines(A, NULL);
  if (kind == GS_REORDER_NONE || R->n == 0) goto done;

  R->perm = malloc(((size_t)R->n + 1) * sizeof *R->perm);
  if (!R->perm) GS_FAIL(GS_ERR_HOST_MEMORY, "%s: out of host memory for %d rows", fn, R->n);
  if (kind == GS_REORDER_AUTO) {
    GS_TRY(choose(R, A, products, t0, &kind));
  } else {
    int dev = 0;
    GS_TRY(order(R, A, kind, R->perm, &dev));
    if (dev) R->info.note = "ordered on the GPU"; /* auto's note is its reason: not there */
    R->info.lines_after = gs_csr_x_lines(A, R->perm);
  }
  if (kind == GS_REORDER_NONE) {
    free(R->perm);
    R->perm = NULL;
    goto done;
  }
  GS_TRY(gs_csr_permute_sym(A, R->perm, &R->PA));
  GS_TRY(gs_dmalloc(ctx, (void **)&R->d_perm, (size_t)R->n * sizeof *R->d_perm, "permutation"));
  GS_TRY(gs_copy_to_device(ctx, R->d_perm, R->perm, (size_t)R->n * sizeof *R->perm));
  R->info.kind = kind;
  R->info.bandwidth_after = gs_csr_bandwidth(R->PA);
done:
  R->info.seconds = gs_wall_seconds() - t0;
  *out = R;
  R = NULL;

cleanup:
  gs_reorder_destroy(&R);
  return st;
}

const gs_csr_t *gs_reorder_csr(const gs_reorder_t *R)
{
  return !R ? NULL : R->PA ? R->PA : R->A;
}

const gs_idx_t *gs_reorder_perm(const gs_reorder_t *R) { return R ? R->perm : NULL; }

gs_status_t gs_reorder_info(const gs_reorder_t *R, gs_reorder_info_t *info)
{
  if (!R || !info) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_reorder_info: NULL argument");
  *info = R->info;
  return GS_SUCCESS;
}

gs_status_t gs_reorder_vector(gs_reorder_t *R, int inverse, const gs_val_t *d_in, gs_val_t *d_out)
{
  if (!R || (R->n > 0 && (!d_in || !d_out)))
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_reorder_vector: NULL argument");
  if (R->n > 0 && d_in == d_out)
    return GS_ERROR(GS_ERR_INVALID_ARG, "gs_reorder_vector: d_in and d_out are the same vector");
  if (R->n == 0) return GS_SUCCESS;
  if (!R->d_perm) /* no ordering: a device copy on the stream */
    return GS_CUDA(cudaMemcpyAsync(d_out, d_in, (size_t)R->n * sizeof *d_out,
                                   cudaMemcpyDeviceToDevice, R->ctx->stream));
  return gs_kernel_permute(R->ctx->stream, R->n, R->d_perm, inverse != 0, d_in, d_out);
}

gs_status_t gs_solve_reordered(gs_context_t *ctx, const gs_solve_opts_t *opts, gs_reorder_t *R,
                               gs_spmv_t *S, gs_precond_t *M, const gs_val_t *d_b,
                               gs_val_t *d_x, gs_solve_stats_t *stats)
{
  static const char fn[] = "gs_solve_reordered";
  gs_status_t st = GS_SUCCESS;
  double *d_bp = NULL, *d_xp = NULL;
  if (!R || !S) return GS_ERROR(GS_ERR_INVALID_ARG, "%s: NULL argument", fn);
  if (!R->d_perm) return gs_solve(ctx, opts, S, M, d_b, d_x, stats); /* nothing to permute */
  if (!ctx || !d_b || !d_x) return GS_ERROR(GS_ERR_INVALID_ARG, "%s: NULL argument", fn);
  if (d_b == d_x) return GS_ERROR(GS_ERR_INVALID_ARG, "%s: x and b are the same vector", fn);
  if (ctx != R->ctx)
    return GS_ERROR(GS_ERR_INVALID_ARG, "%s: R was made on another context", fn);
  const gs_matrix_t *A = gs_spmv_matrix(S);
  const gs_features_t *f = A ? gs_matrix_features(A) : NULL;
  if (!f || f->rows != R->n || f->cols != R->n)
    return GS_ERROR(GS_ERR_DIMENSION, "%s: the product's matrix is %d x %d, the reordering's "
                    "order is %d", fn, f ? f->rows : -1, f ? f->cols : -1, R->n);
  const size_t bytes = (size_t)R->n * sizeof *d_bp;
  GS_TRY(gs_dmalloc(ctx, (void **)&d_bp, bytes, "reordered b"));
  GS_TRY(gs_dmalloc(ctx, (void **)&d_xp, bytes, "reordered x"));
  GS_TRY(gs_reorder_vector(R, 0, d_b, d_bp));
  if (opts && opts->x0_given) GS_TRY(gs_reorder_vector(R, 0, d_x, d_xp)); /* NULL: from 0 */
  GS_TRY(gs_solve(ctx, opts, S, M, d_bp, d_xp, stats));
  GS_TRY(gs_reorder_vector(R, 1, d_xp, d_x));
  GS_TRY(GS_CUDA(cudaStreamSynchronize(ctx->stream)));

cleanup:
  gs_dfree(ctx, d_bp);
  gs_dfree(ctx, d_xp);
  return st;
}

void gs_reorder_destroy(gs_reorder_t **R)
{
  if (!R || !*R) return;
  gs_dfree((*R)->ctx, (*R)->d_perm);
  gs_csr_destroy(&(*R)->PA);
  free((*R)->perm);
  free(*R);
  *R = NULL;
}
