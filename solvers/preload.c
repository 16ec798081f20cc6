/* solvers/preload.c: gs_context_preload (include/gpusolve/context.h). CUDA loads a module and
 * its kernels on their first use (lazy loading, the default since CUDA 12.2), so the first
 * device build of each format, the first AMG setup and the first product of each kernel carry
 * tenths of a millisecond to several milliseconds of loading each (on an H100: dia's first
 * build 3.6 ms against 1.1 ms after, sellp's 5.8 against 0.7, docs/design.md "Start-up").
 * Here every registered format is built on the device and applied once (op N and T) on a small
 * generated matrix, then AMG is set up and applied once, so that these costs fall here (on a
 * thread of its own while the matrix is read, in gpusolve) instead of on the timed steps. The
 * order puts first what a default run uses first, since a caller may stop the loop early. */
#include <string.h>

#include "core/context_impl.h"
#include "core/error.h"
#include "gpusolve.h"
#include "spmv/features_dev.h"
#include "spmv/spmv_impl.h"

/* What a default run uses first: the selection's features, the light formats and the rule's
 * usual picks, then AMG (the default solve's escalation), then the other formats. */
static const char g_default[] = "features,cusparse-csr,csr-vector,bccoo,sellp,ell,dia,coo,hyb,csr5,"
                                "cusparse-sell,amg,formats";

/* the flag is written by another thread: an atomic load (relaxed: it only cuts the loop short) */
static int stopped(const volatile int *stop) { return stop && __atomic_load_n(stop, __ATOMIC_RELAXED); }

/* Builds format `name` on A and runs op N and op T once (each a status the caller ignores: a
 * format may refuse the matrix or the transpose). */
static void warm_format(gs_context_t *ctx, gs_matrix_t *A, const char *name, double *d_x,
                        double *d_y)
{
  gs_spmv_t *S = NULL;
  if (gs_spmv_create(&S, ctx, A, name, NULL) == GS_SUCCESS) {
    (void)gs_spmv_apply(S, GS_OP_N, 1.0, d_x, 0.0, d_y);
    (void)gs_spmv_apply(S, GS_OP_T, 1.0, d_x, 0.0, d_y);
    (void)gs_context_sync(ctx);
  }
  gs_spmv_destroy(&S);
  gs_clear_error();
}

/* A preconditioner's setup kernels (AMG's: strength, aggregation, prolongators, Galerkin
 * products, dense inverse) and one apply. */
static void warm_precond(gs_context_t *ctx, gs_matrix_t *A, const char *name, double *d_x,
                         double *d_y)
{
  gs_precond_t *M = NULL;
  if (gs_precond_create(&M, ctx, A, name) == GS_SUCCESS) {
    (void)gs_precond_apply(M, d_x, d_y);
    (void)gs_context_sync(ctx);
  }
  gs_precond_destroy(&M);
  gs_clear_error();
}

/* Whether `name` (a format) was warmed by an earlier item of the list. */
static int listed_before(const char *list, size_t upto, const char *name)
{
  const size_t len = strlen(name);
  for (const char *p = list; p < list + upto;) {
    const char *e = strchr(p, ',');
    const size_t n = e && e < list + upto ? (size_t)(e - p) : (size_t)(list + upto - p);
    if (n == len && !strncmp(p, name, n)) return 1;
    if (!e) break;
    p = e + 1;
  }
  return 0;
}

gs_status_t gs_context_preload(gs_context_t *ctx, const char *what, const volatile int *stop)
{
  gs_status_t st = GS_SUCCESS;
  gs_csr_t *H = NULL;
  gs_matrix_t *A = NULL;
  double *d_x = NULL, *d_y = NULL;
  if (!ctx) return GS_ERROR(GS_ERR_INVALID_ARG, "gs_context_preload: ctx is NULL");
  for (const char *p = what && *what ? what : NULL; p;) { /* every item known, before any work */
    const char *e = strchr(p, ',');
    const size_t n = e ? (size_t)(e - p) : strlen(p);
    char item[64];
    if (n == 0 || n >= sizeof item)
      return GS_ERROR(GS_ERR_INVALID_ARG, "gs_context_preload: an empty or overlong item in "
                      "\"%s\"", what);
    memcpy(item, p, n);
    item[n] = '\0';
    if (strcmp(item, "features") && strcmp(item, "formats") && strcmp(item, "auto") &&
        gs_spmv_backend_find(item) < 0 && gs_precond_find(item) < 0)
      return GS_ERROR(GS_ERR_INVALID_ARG, "gs_context_preload: unknown item '%s' (a format "
                      "name, a preconditioner name, features or formats)", item);
    p = e ? e + 1 : NULL; /* after a final comma: an empty item, refused above */
  }
  /* a 2D 5-point Laplacian of 96^2 rows: banded (dia, ell take it), coarsened by AMG to two
   * levels and a dense coarse solve */
  const gs_idx_t side = 96, n = side * side;
  GS_TRY(gs_gen_laplace(&H, side, side, 1, 5));
  GS_TRY(gs_matrix_create(&A, ctx, H));
  GS_TRY(gs_dmalloc(ctx, (void **)&d_x, (size_t)n * sizeof *d_x, "preload x"));
  GS_TRY(gs_dmalloc(ctx, (void **)&d_y, (size_t)n * sizeof *d_y, "preload y"));
  GS_TRY(GS_CUDA(cudaMemsetAsync(d_x, 0, (size_t)n * sizeof *d_x, ctx->stream)));
  const char *list = what ? what : g_default;
  for (const char *p = list; *p && !stopped(stop);) {
    const char *e = strchr(p, ',');
    const size_t n = e ? (size_t)(e - p) : strlen(p);
    char item[64];
    if (n > 0 && n < sizeof item) {
      memcpy(item, p, n);
      item[n] = '\0';
      if (!strcmp(item, "features")) { /* the selection's features kernel */
        gs_dcsr_t D;
        gs_select_features_t f;
        if (gs_matrix_device_csr(A, &D) == GS_SUCCESS)
          (void)gs_dcsr_select_features(ctx, &D, H->symmetry, NULL, &f);
        gs_clear_error();
      } else if (gs_spmv_backend_find(item) < 0 && gs_precond_find(item) >= 0) {
        if (strcmp(item, "none")) warm_precond(ctx, A, item, d_x, d_y);
      } else if (!strcmp(item, "formats")) { /* every registered format not warmed before */
        for (int b = 0; b < gs_spmv_backend_count() && !stopped(stop); ++b) {
          const char *name = gs_spmv_backend_name(b);
          if (strcmp(name, "auto") && !listed_before(list, (size_t)(p - list), name))
            warm_format(ctx, A, name, d_x, d_y);
        }
      } else if (strcmp(item, "auto")) {
        warm_format(ctx, A, item, d_x, d_y);
      }
    }
    p = e ? e + 1 : p + n;
  }
cleanup:
  gs_dfree(ctx, d_x);
  gs_dfree(ctx, d_y);
  gs_matrix_destroy(&A);
  gs_csr_destroy(&H);
  if (st == GS_SUCCESS) st = gs_context_sync(ctx);
  return st;
}
