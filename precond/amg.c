/* precond/amg.c: smoothed-aggregation algebraic multigrid as a preconditioner (Vanek, Mandel and
 * Brezina 1996; the GPU setup of Bell, Dalton and Olson, SISC 2012; PyAMG's
 * smoothed_aggregation_solver is the reference for the defaults and the hierarchy report).
 *
 * Setup, level by level on the GPU (precond/amg_impl.h has the exact rules): strength of
 * connection, MIS(2) aggregation (of nodes of several unknowns with block=K or k vectors), the
 * tentative prolongator from the near-null space (the constant, or k vectors fitted per
 * aggregate, whose coarse vectors go down to the next level; docs/amg.md),
 * P = (I - omega/rho D^-1 A) T with rho(D^-1 A) from a power iteration, R = P^T and the Galerkin
 * product A_c = R (A P) (cuSPARSE SpGEMM), until the level has at most coarse_size rows or
 * max_levels are made. Each level's matrix becomes a gs_matrix_t over its device CSR, and its
 * products (A, P, R) are gs_spmv_t of the chosen format: the cycle runs through the SpMV vtable.
 * The coarsest level is solved by a dense inverse (Gauss-Jordan on the GPU) or, when it is
 * singular or large, by smoothing sweeps.
 *
 * Apply: one V-cycle (or W-cycle) with pre- and post-smoothing by damped Jacobi, l1-Jacobi or
 * Chebyshev on D^-1 A; the same smoother before and after, so that the cycle is symmetric for a
 * symmetric A (a valid CG preconditioner). It only launches kernels, products and a cuBLAS gemv:
 * capturable into a CUDA Graph when every level's product is. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "gpusolve/select.h"
#include "gpusolve/timer.h"
#include "precond/amg_impl.h"
#include "precond/precond_impl.h"
#include "spmv/spmv_impl.h"

/* Option indices (the table below). */
enum {
  O_THETA, O_SMOOTHER, O_SWEEPS, O_DEGREE, O_WEIGHT, O_OMEGA, O_MAX_LEVELS, O_COARSE_SIZE,
  O_CYCLE, O_FORMAT, O_COARSE, O_COARSE_SWEEPS, O_EIG_STEPS, O_CHEB_RATIO, O_GALERKIN, O_BLOCK,
  O_NEAR_NULL,
  O_COUNT
};
_Static_assert(O_COUNT <= GS_PRECOND_MAX_OPTIONS, "amg: more options than a cfg holds");
enum { SM_JACOBI, SM_L1, SM_CHEB };
enum { COARSE_AUTO, COARSE_DENSE, COARSE_SMOOTH };
enum { GALERKIN_OWN, GALERKIN_CUSPARSE };

static const gs_precond_option_t amg_options[] = {
  /* 0.01: a few of the weakest couplings left out of the aggregates. 0 (PyAMG's default) makes
     aggregates too large on G3_circuit (51 iterations against 26); 0.08 leaves every node of the
     27-point Laplacian isolated (|-1| < 0.08 * 26: no coarsening at all). docs/amg.md */
  {"theta", "strength threshold: |a_ij| >= theta sqrt(|a_ii a_jj|)", GS_PCOPT_REAL, 0.01, 0.0,
   1.0, NULL},
  {"smoother", "pre- and post-smoother", GS_PCOPT_CHOICE, SM_JACOBI, 0, 0,
   "jacobi|l1-jacobi|chebyshev"},
  {"sweeps", "smoothing sweeps before and after the coarse correction", GS_PCOPT_INT, 1, 1, 20,
   NULL},
  {"degree", "Chebyshev polynomial degree (products a sweep)", GS_PCOPT_INT, 2, 1, 10, NULL},
  {"weight", "Jacobi weight (0: 4/3 / rho(D^-1 A) per level)", GS_PCOPT_REAL, 0.0, 0.0, 2.0,
   NULL},
  {"omega", "prolongator smoothing: P = (I - omega/rho D^-1 A) T (0: plain aggregation)",
   GS_PCOPT_REAL, 4.0 / 3.0, 0.0, 2.0, NULL},
  {"max_levels", "most levels of the hierarchy", GS_PCOPT_INT, 10, 1, GS_PRECOND_MAX_LEVELS,
   NULL},
  {"coarse_size", "stop coarsening at this many rows", GS_PCOPT_INT, 1000, 1, 2147483647.0,
   NULL},
  {"cycle", "multigrid cycle", GS_PCOPT_CHOICE, 0, 0, 0, "V|W"},
  {"format", "SpMV format of every level's products (auto: selected per level)",
   GS_PCOPT_FORMAT, 0, 0, 0, "cusparse-csr"},
  {"coarse", "coarsest solve: dense LU when it is small and regular, else sweeps",
   GS_PCOPT_CHOICE, COARSE_AUTO, 0, 0, "auto|dense|smooth"},
  {"coarse_sweeps", "smoothing sweeps on the coarsest level when it is not solved directly",
   GS_PCOPT_INT, 8, 1, 1000, NULL},
  {"eig_steps", "power-iteration steps of the rho(D^-1 A) estimate", GS_PCOPT_INT, 15, 2, 200,
   NULL},
  {"cheb_ratio", "Chebyshev interval [rho / ratio, 1.1 rho] (1.1: safety over the estimate)",
   GS_PCOPT_REAL, 30.0, 1.5, 1e6, NULL},
  /* own: bit-identical to the host reference, no cuSPARSE module load (50-155 ms in the first
     setup of a process); cusparse: its SpGEMM, for comparison */
  {"galerkin", "SpGEMM of the Galerkin products R (A P)", GS_PCOPT_CHOICE, GALERKIN_OWN, 0, 0,
   "own|cusparse"},
  /* nodes of K interleaved unknowns (elasticity: K = 2 or 3): strength and aggregation of the
     finest level on the nodes (block norms), as PyAMG's BSR matrices */
  {"block", "unknowns per node on the finest level, interleaved (aggregates of whole nodes)",
   GS_PCOPT_INT, 1, 1, GS_AMG_BLOCK_MAX, NULL},
  {"near_null", "near-null-space vectors B: a Matrix Market file, n rows, one column a vector "
   "(at most 8; default: the constant)", GS_PCOPT_PATH, 0, 0, 0, NULL},
  {NULL, NULL, GS_PCOPT_REAL, 0, 0, 0, NULL}};

/* Setup phases, timed with a stream synchronization at the end of each. */
enum { PH_UPLOAD, PH_STRENGTH, PH_AGGREGATE, PH_EIGEN, PH_PROLONG, PH_TRANSPOSE, PH_RAP,
       PH_PRODUCTS, PH_SMOOTHER, PH_COARSE, PH_COUNT };
static const char *const phase_name[PH_COUNT] = {
  "upload", "strength", "aggregate", "eigen", "prolongator", "transpose", "rap", "products",
  "smoother", "coarse"};

typedef struct level {
  gs_idx_t n;
  int64_t nnz;
  gs_matrix_t *Am; /* level 0: the caller's (borrowed) */
  const int32_t *rp; /* A's device CSR (borrowed from Am) */
  const gs_idx_t *col;
  const double *val;
  gs_spmv_t *S;
  gs_matrix_t *Pm, *Rm; /* to level + 1 */
  gs_spmv_t *P, *R;
  int64_t p_nnz;
  double *dinv; /* the smoother's inverse diagonal (1/a_ii, or 1/l1 row norm) */
  double rho;   /* estimate of rho(D^-1 A) */
  double w;     /* Jacobi weight */
  double *x, *b; /* level > 0: the cycle's vectors; level 0: b0 holds r when apply has z = r */
  double *r, *d;
} level_t;

typedef struct amg {
  gs_context_t *ctx;
  gs_precond_cfg_t cfg;
  int nlev;
  level_t L[GS_PRECOND_MAX_LEVELS];
  double *inv;          /* the coarsest level's dense inverse (column-major), or NULL */
  double *consts;       /* 1, 0 on the device (cuBLAS in device pointer mode) */
  int coarse_singular;  /* dense LU found it singular: sweeps instead */
  double phase_ms[PH_COUNT];
  unsigned caps;
} amg_t;

static void amg_destroy(void *data)
{
  amg_t *G = data;
  if (!G) return;
  gs_context_t *ctx = G->ctx;
  for (int l = 0; l < GS_PRECOND_MAX_LEVELS; ++l) {
    level_t *L = &G->L[l];
    gs_spmv_destroy(&L->S);
    gs_spmv_destroy(&L->P);
    gs_spmv_destroy(&L->R);
    gs_matrix_destroy(&L->Pm);
    gs_matrix_destroy(&L->Rm);
    if (l > 0) gs_matrix_destroy(&L->Am);
    gs_dfree(ctx, L->dinv);
    gs_dfree(ctx, L->x);
    gs_dfree(ctx, L->b);
    gs_dfree(ctx, L->r);
    gs_dfree(ctx, L->d);
  }
  gs_dfree(ctx, G->inv);
  gs_dfree(ctx, G->consts);
  free(G);
}

/* ---- setup helpers -------------------------------------------------------------------------- */

static gs_status_t dvec(gs_context_t *ctx, double **p, gs_idx_t n, const char *what)
{
  return gs_dmalloc(ctx, (void **)p, (size_t)(n > 0 ? n : 1) * sizeof(double), what);
}

static gs_status_t phase_end(amg_t *G, int ph, double *t0)
{
  GS_CHECK(GS_CUDA(cudaStreamSynchronize(G->ctx->stream)));
  const double t = gs_wall_seconds();
  G->phase_ms[ph] += 1e3 * (t - *t0);
  *t0 = t;
  return GS_SUCCESS;
}

/* The product of a level matrix in the configured format. */
static gs_status_t make_spmv(amg_t *G, gs_matrix_t *A, gs_spmv_t **S)
{
  const char *fmt = G->cfg.s[O_FORMAT];
  if (strcmp(fmt, "auto") == 0) {
    gs_select_opts_t o;
    gs_select_opts_default(&o);
    o.expected_products = 2000; /* a few hundred cycles of a few products */
    return gs_spmv_create_auto(S, G->ctx, A, NULL, &o);
  }
  return gs_spmv_create(S, G->ctx, A, fmt, NULL);
}

/* Wraps a device CSR made by the setup as a matrix and makes its product. The arrays move into
 * the matrix (C is zeroed); its host copy is made only if the format asks for one (cusparse-csr,
 * the default, does not: the level never leaves the GPU). */
static gs_status_t adopt(amg_t *G, gs_amg_dcsr_t *C, gs_matrix_t **Am, gs_spmv_t **S)
{
  gs_status_t st = GS_SUCCESS;
  gs_context_t *ctx = G->ctx;
  double t0 = gs_wall_seconds();
  int32_t *rp = C->rp;
  gs_idx_t *col = C->col;
  double *val = C->val;
  C->rp = NULL;
  C->col = NULL;
  C->val = NULL;
  GS_TRY(gs_matrix_adopt_device(Am, ctx, C->m, C->n, (gs_off_t)C->nnz, &rp, &col, &val));
  GS_TRY(make_spmv(G, *Am, S));
  GS_TRY(phase_end(G, PH_PRODUCTS, &t0));
cleanup:
  gs_amg_dcsr_free(ctx, C);
  return st;
}

/* rho(D^-1 A) by eig_steps of the power iteration in the D inner product (v^T D v = 1 after the
 * first step): z = A v, u = D^-1 z, ||u||_D^2 = u^T z, v = u / ||u||_D. ||D^-1 A v||_D of the
 * last step estimates |lambda_max| from below (exact for an eigenvector); cuBLAS in device
 * pointer mode keeps it asynchronous until the one read at the end. */
static gs_status_t estimate_rho(amg_t *G, level_t *L, double *v, double *z, double *u,
                                double *d_s2, double *rho)
{
  gs_status_t st = GS_SUCCESS;
  gs_context_t *ctx = G->ctx;
  cublasPointerMode_t old = CUBLAS_POINTER_MODE_HOST;
  int saved = 0;
  const int steps = (int)G->cfg.v[O_EIG_STEPS];
  double s2 = 0.0;
  *rho = 0.0;
  if (L->n == 0) return GS_SUCCESS;
  GS_TRY(GS_CUBLAS(cublasGetPointerMode(ctx->cublas, &old)));
  GS_TRY(GS_CUBLAS(cublasSetPointerMode(ctx->cublas, CUBLAS_POINTER_MODE_DEVICE)));
  saved = 1;
  GS_TRY(gs_amg_start_vector_kernel(ctx->stream, L->n, v));
  for (int k = 0; k < steps; ++k) {
    GS_TRY(gs_spmv_apply(L->S, GS_OP_N, 1.0, v, 0.0, z));
    GS_TRY(gs_amg_scale_kernel(ctx->stream, L->n, L->dinv, z, u));
    GS_TRY(GS_CUBLAS(cublasDdot(ctx->cublas, (int)L->n, u, 1, z, 1, d_s2)));
    GS_TRY(gs_amg_normalize_kernel(ctx->stream, L->n, u, d_s2, v));
  }
  GS_TRY(gs_copy_to_host(ctx, &s2, d_s2, sizeof s2));
  /* the first step's s2 belongs to the unnormalized start; steps >= 2 is guaranteed */
  *rho = s2 > 0.0 && isfinite(s2) ? sqrt(s2) : 0.0;
cleanup:
  if (saved) cublasSetPointerMode(ctx->cublas, old);
  return st;
}

/* d = diag(A) and dinv = 1/d with the zero check (the row named 1-based). */
static gs_status_t level_diagonal(amg_t *G, int l, double *d, int32_t *d_bad)
{
  gs_context_t *ctx = G->ctx;
  level_t *L = &G->L[l];
  int32_t bad = INT32_MAX;
  GS_CHECK(gs_amg_diag_dev(ctx, L->n, L->rp, L->col, L->val, d));
  GS_CHECK(gs_copy_to_device(ctx, d_bad, &bad, sizeof bad));
  GS_CHECK(gs_amg_invert_kernel(ctx->stream, L->n, d, L->dinv, d_bad));
  GS_CHECK(gs_copy_to_host(ctx, &bad, d_bad, sizeof bad));
  if (bad != INT32_MAX)
    return GS_ERROR(GS_ERR_INVALID_ARG,
                    "amg: %s diagonal entry in row %d of level %d (1-based): the smoother and the "
                    "prolongator need a nonzero diagonal", l == 0 ? "zero or missing" : "zero",
                    (int)bad + 1, l);
  return GS_SUCCESS;
}

/* The smoother's data of level l: dinv (1/d, or 1/l1 for l1-Jacobi) is there already as 1/d;
 * the weight; the Chebyshev direction vector. */
static gs_status_t level_smoother(amg_t *G, int l, double *d, int32_t *d_bad)
{
  gs_context_t *ctx = G->ctx;
  level_t *L = &G->L[l];
  const int sm = (int)G->cfg.v[O_SMOOTHER];
  L->w = G->cfg.v[O_WEIGHT] > 0 ? G->cfg.v[O_WEIGHT] : L->rho > 0 ? (4.0 / 3.0) / L->rho : 0.0;
  if (sm == SM_L1) {
    int32_t bad = INT32_MAX;
    GS_CHECK(gs_amg_l1_diag_dev(ctx, L->n, L->rp, L->val, d));
    GS_CHECK(gs_copy_to_device(ctx, d_bad, &bad, sizeof bad));
    GS_CHECK(gs_amg_invert_kernel(ctx->stream, L->n, d, L->dinv, d_bad));
    L->w = 1.0; /* the l1 diagonal bounds the row: no damping (Baker et al. 2011) */
  }
  if (sm == SM_CHEB) GS_CHECK(dvec(ctx, &L->d, L->n, "the AMG Chebyshev direction"));
  return GS_SUCCESS;
}

/* A square level of at most INT32_MAX entries (32-bit offsets and cuSPARSE's SpGEMM). */
static gs_status_t level_from_matrix(amg_t *G, gs_matrix_t *A)
{
  gs_dcsr_t dc;
  level_t *L = &G->L[0];
  if (gs_matrix_wide(A))
    return GS_ERROR(GS_ERR_UNSUPPORTED, "amg: a matrix of more than 2^31-1 entries (its setup "
                    "uses 32-bit offsets)");
  GS_CHECK(gs_matrix_device_csr(A, &dc));
  L->Am = A;
  L->n = dc.m;
  L->nnz = (int64_t)dc.nnz;
  L->rp = dc.d_row_ptr32;
  L->col = dc.d_col;
  L->val = dc.d_val;
  return GS_SUCCESS;
}

static void level_bind(level_t *L)
{
  gs_dcsr_t dc;
  (void)gs_matrix_device_csr(L->Am, &dc); /* uploaded already: cannot fail */
  L->n = dc.m;
  L->nnz = (int64_t)dc.nnz;
  L->rp = dc.d_row_ptr32;
  L->col = dc.d_col;
  L->val = dc.d_val;
}

/* The near-null space of this setup: the caller's (gs_precond_set_near_null_space, checked when
 * it was given), or the file of near_null=PATH, or none (k = 0: the constant, as before).
 * *owned is what to free. */
static gs_status_t near_null_space(const gs_precond_cfg_t *cfg, gs_idx_t n, int *k,
                                   const double **B, double **owned)
{
  *k = 0;
  *B = NULL;
  *owned = NULL;
  if (cfg->nns_k > 0) {
    *k = cfg->nns_k;
    *B = cfg->nns;
    return GS_SUCCESS;
  }
  if (cfg->path[0]) {
    GS_CHECK(gs_amg_near_null_read(cfg->path, n, k, owned));
    *B = *owned;
  }
  return GS_SUCCESS;
}

/* Scratch of one setup beyond the levels: what the loop below allocates level by level. */
typedef struct setup_tmp {
  double *B, *Bn;          /* this level's near-null space (n x k) and the next one's */
  int32_t *nptr, *nof;     /* this level's nodes (NULL: one unknown a node) */
  int32_t *cptr;           /* the fit's coarse unknowns per aggregate (naggs + 1) */
  int32_t *aggn;           /* the nodes' aggregates */
  double *da;              /* the amalgamated matrix's diagonal */
  gs_amg_dcsr_t Aa, T;     /* the amalgamated matrix, the tentative prolongator */
} setup_tmp_t;

static void setup_tmp_free(gs_context_t *ctx, setup_tmp_t *w)
{
  gs_dfree(ctx, w->B);
  gs_dfree(ctx, w->Bn);
  gs_dfree(ctx, w->nptr);
  gs_dfree(ctx, w->nof);
  gs_dfree(ctx, w->cptr);
  gs_dfree(ctx, w->aggn);
  gs_dfree(ctx, w->da);
  gs_amg_dcsr_free(ctx, &w->Aa);
  gs_amg_dcsr_free(ctx, &w->T);
  memset(w, 0, sizeof *w);
}

static gs_status_t amg_setup(gs_context_t *ctx, gs_matrix_t *A, const gs_precond_cfg_t *cfg,
                             void **data)
{
  gs_status_t st = GS_SUCCESS;
  amg_t *G = calloc(1, sizeof *G);
  double *d = NULL, *t = NULL, *v = NULL, *z = NULL, *u = NULL, *s2 = NULL, *hB_owned = NULL;
  uint8_t *strong = NULL;
  int32_t *agg = NULL, *d_bad = NULL;
  gs_amg_dcsr_t P = {0}, R = {0}, AP = {0}, Ac = {0};
  setup_tmp_t w;
  memset(&w, 0, sizeof w);
  if (!G) return GS_ERROR(GS_ERR_HOST_MEMORY, "out of host memory setting up AMG");
  G->ctx = ctx;
  G->cfg = *cfg;
  G->cfg.options = NULL;
  double t0 = gs_wall_seconds();
  GS_TRY(level_from_matrix(G, A));
  GS_TRY(phase_end(G, PH_UPLOAD, &t0));
  const gs_idx_t n0 = G->L[0].n;
  const int block = (int)G->cfg.v[O_BLOCK];
  if (n0 % block != 0)
    GS_FAIL(GS_ERR_INVALID_ARG, "amg: block=%d does not divide the order %d (block=K takes K "
            "interleaved unknowns a node)", block, (int)n0);
  int nv = 0; /* near-null-space vectors (0: the constant, without a fit) */
  const double *hB = NULL;
  GS_TRY(near_null_space(cfg, n0, &nv, &hB, &hB_owned));
  if (n0 == 0) { /* nothing to cycle on: gs_precond_apply returns before the table for n = 0 */
    G->nlev = 1;
    G->caps = GS_PRECOND_FLAG_CAPTURABLE | GS_PRECOND_FLAG_SYMMETRIC;
    *data = G;
    G = NULL;
    goto cleanup;
  }
  const int max_levels = (int)G->cfg.v[O_MAX_LEVELS];
  const gs_idx_t coarse_size = (gs_idx_t)G->cfg.v[O_COARSE_SIZE];
  const double omega = G->cfg.v[O_OMEGA];
  /* scratch of the finest size, reused by every level */
  GS_TRY(dvec(ctx, &d, n0, "AMG setup scratch"));
  GS_TRY(dvec(ctx, &t, n0, "AMG setup scratch"));
  GS_TRY(dvec(ctx, &v, n0, "AMG setup scratch"));
  GS_TRY(dvec(ctx, &z, n0, "AMG setup scratch"));
  GS_TRY(dvec(ctx, &u, n0, "AMG setup scratch"));
  GS_TRY(dvec(ctx, &s2, 1, "AMG setup scratch"));
  GS_TRY(gs_dmalloc(ctx, (void **)&d_bad, sizeof *d_bad, "AMG setup scratch"));
  GS_TRY(gs_dmalloc(ctx, (void **)&agg, (size_t)(n0 > 0 ? n0 : 1) * sizeof *agg,
                    "AMG aggregates"));
  GS_TRY(dvec(ctx, &G->consts, 2, "AMG constants"));
  {
    const double c[2] = {1.0, 0.0};
    GS_TRY(gs_copy_to_device(ctx, G->consts, c, sizeof c));
  }
  gs_idx_t nnodes = n0;
  if (block > 1) { /* the finest level's nodes */
    nnodes = n0 / block;
    GS_TRY(gs_dmalloc(ctx, (void **)&w.nptr, ((size_t)nnodes + 1) * sizeof(int32_t),
                      "AMG nodes"));
    GS_TRY(gs_dmalloc(ctx, (void **)&w.nof, (size_t)n0 * sizeof(int32_t), "AMG nodes"));
    GS_TRY(gs_amg_nodes_uniform_dev(ctx, nnodes, block, w.nptr, w.nof));
  }
  if (nv > 0) { /* the near-null space on the device (packed n0 x nv) */
    const size_t bytes = (size_t)n0 * (size_t)nv * sizeof(double);
    GS_TRY(gs_dmalloc(ctx, (void **)&w.B, bytes, "AMG near-null space"));
    GS_TRY(gs_copy_to_device(ctx, w.B, hB, bytes));
    free(hB_owned);
    hB_owned = NULL;
  }
  GS_TRY(make_spmv(G, A, &G->L[0].S));
  GS_TRY(dvec(ctx, &G->L[0].r, n0, "AMG level vectors"));
  GS_TRY(dvec(ctx, &G->L[0].b, n0, "AMG level vectors"));
  GS_TRY(phase_end(G, PH_PRODUCTS, &t0));

  int l = 0;
  for (;; ++l) {
    level_t *L = &G->L[l];
    const gs_amg_dcsr_t Al = {L->n, L->n, L->nnz, (int32_t *)L->rp, (gs_idx_t *)L->col,
                              (double *)L->val};
    GS_TRY(dvec(ctx, &L->dinv, L->n, "the AMG smoother diagonal"));
    GS_TRY(level_diagonal(G, l, d, d_bad));
    GS_TRY(phase_end(G, PH_SMOOTHER, &t0));
    if (l == max_levels - 1 || L->n <= coarse_size) break;
    /* strength and aggregates, of the nodes when the level has them (amg_impl.h, NODES) */
    int32_t naggs = 0;
    int rounds = 0;
    gs_dfree(ctx, strong);
    strong = NULL;
    if (w.nptr) {
      if (!w.aggn) { /* nodes never outnumber the finest level's unknowns */
        GS_TRY(gs_dmalloc(ctx, (void **)&w.aggn, (size_t)n0 * sizeof(int32_t), "AMG aggregates"));
        GS_TRY(dvec(ctx, &w.da, n0, "AMG setup scratch"));
      }
      GS_TRY(gs_amg_amalgamate_dev(ctx, &Al, nnodes, w.nptr, w.nof, &w.Aa));
      GS_TRY(gs_amg_diag_dev(ctx, nnodes, w.Aa.rp, w.Aa.col, w.Aa.val, w.da));
      GS_TRY(gs_dmalloc(ctx, (void **)&strong, (size_t)(w.Aa.nnz > 0 ? w.Aa.nnz : 1),
                        "AMG strength"));
      GS_TRY(gs_amg_strength_dev(ctx, nnodes, w.Aa.rp, w.Aa.col, w.Aa.val, w.da,
                                 G->cfg.v[O_THETA], strong));
      GS_TRY(phase_end(G, PH_STRENGTH, &t0));
      GS_TRY(gs_amg_aggregate_dev(ctx, nnodes, w.Aa.rp, w.Aa.col, strong, w.aggn, &naggs,
                                  &rounds));
      GS_TRY(gs_amg_expand_agg_dev(ctx, L->n, w.nof, w.aggn, agg));
      gs_amg_dcsr_free(ctx, &w.Aa);
      GS_TRY(phase_end(G, PH_AGGREGATE, &t0));
      if (naggs == 0 || naggs >= nnodes) break; /* nothing to coarsen: the last level */
    } else {
      GS_TRY(gs_dmalloc(ctx, (void **)&strong, (size_t)(L->nnz > 0 ? L->nnz : 1),
                        "AMG strength"));
      GS_TRY(gs_amg_strength_dev(ctx, L->n, L->rp, L->col, L->val, d, G->cfg.v[O_THETA],
                                 strong));
      GS_TRY(phase_end(G, PH_STRENGTH, &t0));
      GS_TRY(gs_amg_aggregate_dev(ctx, L->n, L->rp, L->col, strong, agg, &naggs, &rounds));
      GS_TRY(phase_end(G, PH_AGGREGATE, &t0));
      if (naggs == 0 || naggs >= L->n) break; /* nothing to coarsen: this level is the last */
    }
    /* the vectors' fit over the aggregates (amg_impl.h, FIT): T and the coarse vectors */
    int kmax = 1;
    if (w.B) {
      GS_TRY(gs_dmalloc(ctx, (void **)&w.cptr, ((size_t)naggs + 1) * sizeof(int32_t),
                        "AMG coarse nodes"));
      GS_TRY(gs_amg_fit_dev(ctx, L->n, nv, w.B, agg, naggs, &w.T, &w.Bn, w.cptr, &kmax));
      GS_TRY(phase_end(G, PH_PROLONG, &t0));
      if (w.T.n == 0 || w.T.n >= L->n) break; /* as many coarse unknowns: the last level */
    }
    GS_TRY(estimate_rho(G, L, v, z, u, s2, &L->rho));
    GS_TRY(phase_end(G, PH_EIGEN, &t0));
    /* prolongator and restriction */
    const double w_p = L->rho > 0 ? omega / L->rho : 0.0;
    if (w.B) {
      GS_TRY(gs_amg_smooth_tp_dev(ctx, &Al, d, &w.T, w_p, &P));
      gs_amg_dcsr_free(ctx, &w.T);
    } else {
      GS_TRY(gs_amg_tentative_dev(ctx, L->n, agg, naggs, NULL, t));
      GS_TRY(gs_amg_smooth_p_dev(ctx, &Al, d, agg, t, naggs, w_p, &P));
    }
    GS_TRY(phase_end(G, PH_PROLONG, &t0));
    GS_TRY(gs_amg_transpose_dev(ctx, &P, &R));
    GS_TRY(phase_end(G, PH_TRANSPOSE, &t0));
    if (G->cfg.v[O_GALERKIN] == GALERKIN_OWN) {
      GS_TRY(gs_amg_spgemm_own_dev(ctx, &Al, &P, &AP));
      GS_TRY(gs_amg_spgemm_own_dev(ctx, &R, &AP, &Ac));
    } else {
      GS_TRY(gs_amg_spgemm_dev(ctx, &Al, &P, &AP));
      GS_TRY(gs_amg_spgemm_dev(ctx, &R, &AP, &Ac));
    }
    gs_amg_dcsr_free(ctx, &AP);
    if (Ac.nnz > INT32_MAX)
      GS_FAIL(GS_ERR_UNSUPPORTED, "amg: coarse level %d has more than 2^31-1 entries", l + 1);
    GS_TRY(phase_end(G, PH_RAP, &t0));
    L->p_nnz = P.nnz;
    GS_TRY(adopt(G, &P, &L->Pm, &L->P));
    GS_TRY(adopt(G, &R, &L->Rm, &L->R));
    level_t *C = &G->L[l + 1];
    GS_TRY(adopt(G, &Ac, &C->Am, &C->S));
    t0 = gs_wall_seconds();
    level_bind(C);
    GS_TRY(dvec(ctx, &C->x, C->n, "AMG level vectors"));
    GS_TRY(dvec(ctx, &C->b, C->n, "AMG level vectors"));
    GS_TRY(dvec(ctx, &C->r, C->n, "AMG level vectors"));
    /* the coarse level's vectors and nodes: the aggregates' k_J unknowns when some has more
     * than one, else one unknown a node (also every coarse level of the default B) */
    gs_dfree(ctx, w.nptr);
    gs_dfree(ctx, w.nof);
    w.nptr = w.nof = NULL;
    nnodes = C->n;
    if (w.B) {
      gs_dfree(ctx, w.B);
      w.B = w.Bn;
      w.Bn = NULL;
      if (kmax > 1) {
        w.nptr = w.cptr;
        w.cptr = NULL;
        nnodes = naggs;
        GS_TRY(gs_dmalloc(ctx, (void **)&w.nof, (size_t)C->n * sizeof(int32_t), "AMG nodes"));
        GS_TRY(gs_amg_nodes_of_dev(ctx, nnodes, w.nptr, w.nof));
      }
      gs_dfree(ctx, w.cptr);
      w.cptr = NULL;
    }
    GS_TRY(phase_end(G, PH_PRODUCTS, &t0));
    GS_TRY(level_smoother(G, l, d, d_bad));
    GS_TRY(phase_end(G, PH_SMOOTHER, &t0));
  }
  G->nlev = l + 1;
  setup_tmp_free(ctx, &w); /* before the coarse inverse's memory */
  { /* the coarsest level */
    level_t *L = &G->L[l];
    const int mode = (int)G->cfg.v[O_COARSE];
    if (mode != COARSE_SMOOTH && L->n <= GS_AMG_DENSE_MAX) {
      const gs_amg_dcsr_t Al = {L->n, L->n, L->nnz, (int32_t *)L->rp, (gs_idx_t *)L->col,
                                (double *)L->val};
      GS_TRY(gs_amg_dense_inverse_dev(ctx, &Al, &G->inv, &G->coarse_singular));
      if (G->coarse_singular && mode == COARSE_DENSE)
        GS_FAIL(GS_ERR_INVALID_ARG, "amg: the coarsest matrix (%d rows) is singular; "
                "coarse=dense cannot solve it (coarse=auto smooths instead)", (int)L->n);
    } else if (mode == COARSE_DENSE) {
      GS_FAIL(GS_ERR_UNSUPPORTED, "amg: coarse=dense takes at most %d rows, the coarsest level "
              "has %d (raise max_levels or lower coarse_size)", GS_AMG_DENSE_MAX, (int)L->n);
    }
    if (!G->inv) { /* sweeps of the smoother */
      GS_TRY(estimate_rho(G, L, v, z, u, s2, &L->rho));
      GS_TRY(level_smoother(G, l, d, d_bad));
    }
    GS_TRY(phase_end(G, PH_COARSE, &t0));
  }
  /* capabilities: symmetric when A is (the same smoother before and after, R = P^T) */
  {
    unsigned caps = GS_PRECOND_FLAG_CAPTURABLE;
    for (int k = 0; k < G->nlev; ++k) {
      const level_t *L = &G->L[k];
      if (!(gs_spmv_caps(L->S) & GS_SPMV_CAP_CAPTURABLE)) caps &= ~GS_PRECOND_FLAG_CAPTURABLE;
      if (L->P && !(gs_spmv_caps(L->P) & GS_SPMV_CAP_CAPTURABLE))
        caps &= ~GS_PRECOND_FLAG_CAPTURABLE;
      if (L->R && !(gs_spmv_caps(L->R) & GS_SPMV_CAP_CAPTURABLE))
        caps &= ~GS_PRECOND_FLAG_CAPTURABLE;
    }
    if (gs_matrix_features(A)->numerically_symmetric) caps |= GS_PRECOND_FLAG_SYMMETRIC;
    G->caps = caps;
  }
  *data = G;
  G = NULL;
cleanup:
  setup_tmp_free(ctx, &w);
  free(hB_owned);
  gs_amg_dcsr_free(ctx, &P);
  gs_amg_dcsr_free(ctx, &R);
  gs_amg_dcsr_free(ctx, &AP);
  gs_amg_dcsr_free(ctx, &Ac);
  gs_dfree(ctx, d);
  gs_dfree(ctx, t);
  gs_dfree(ctx, v);
  gs_dfree(ctx, z);
  gs_dfree(ctx, u);
  gs_dfree(ctx, s2);
  gs_dfree(ctx, d_bad);
  gs_dfree(ctx, agg);
  gs_dfree(ctx, strong);
  amg_destroy(G);
  return st;
}

/* ---- the cycle ------------------------------------------------------------------------------ */

/* r = b - A x of level L. */
static gs_status_t residual(amg_t *G, level_t *L, const double *b, const double *x)
{
  GS_CHECK(GS_CUDA(cudaMemcpyAsync(L->r, b, (size_t)L->n * sizeof(double),
                                   cudaMemcpyDeviceToDevice, G->ctx->stream)));
  return gs_spmv_apply(L->S, GS_OP_N, -1.0, x, 1.0, L->r);
}

/* `sweeps` sweeps of the level's smoother on A x = b (x = 0 first when x_zero). */
static gs_status_t smooth(amg_t *G, level_t *L, const double *b, double *x, int x_zero,
                          int sweeps)
{
  cudaStream_t s = G->ctx->stream;
  const int sm = (int)G->cfg.v[O_SMOOTHER];
  for (int k = 0; k < sweeps; ++k) {
    const int zero = x_zero && k == 0;
    if (sm != SM_CHEB) {
      if (zero) {
        GS_CHECK(gs_amg_jacobi_kernel(s, L->n, L->w, L->dinv, b, x, 1));
      } else {
        GS_CHECK(residual(G, L, b, x));
        GS_CHECK(gs_amg_jacobi_kernel(s, L->n, L->w, L->dinv, L->r, x, 0));
      }
      continue;
    }
    /* Chebyshev on D^-1 A over [lo, hi] (Saad, Iterative Methods, Algorithm 12.1) */
    const double hi = 1.1 * L->rho, lo = hi / G->cfg.v[O_CHEB_RATIO];
    const double theta = 0.5 * (hi + lo), delta = 0.5 * (hi - lo), sigma = theta / delta;
    double rho_old = 1.0 / sigma;
    const int deg = (int)G->cfg.v[O_DEGREE];
    for (int j = 0; j < deg; ++j) {
      const double *r = b;
      if (!(zero && j == 0)) {
        GS_CHECK(residual(G, L, b, x));
        r = L->r;
      }
      if (j == 0) {
        GS_CHECK(gs_amg_cheb_kernel(s, L->n, 0.0, 1.0 / theta, L->dinv, r, L->d, x, zero ? 2 : 1));
      } else {
        const double rho_new = 1.0 / (2.0 * sigma - rho_old);
        GS_CHECK(gs_amg_cheb_kernel(s, L->n, rho_new * rho_old, 2.0 * rho_new / delta, L->dinv, r,
                                    L->d, x, 0));
        rho_old = rho_new;
      }
    }
  }
  return GS_SUCCESS;
}

static gs_status_t cycle(amg_t *G, int l, const double *b, double *x, int x_zero)
{
  level_t *L = &G->L[l];
  if (l == G->nlev - 1) {
    if (G->inv) {
      const int n = (int)L->n;
      cublasPointerMode_t old = CUBLAS_POINTER_MODE_HOST;
      gs_status_t st = GS_SUCCESS;
      const double *beta = G->consts + 1;
      if (!x_zero) { /* x += A^-1 (b - A x) */
        GS_CHECK(residual(G, L, b, x));
        b = L->r;
        beta = G->consts;
      }
      GS_CHECK(GS_CUBLAS(cublasGetPointerMode(G->ctx->cublas, &old)));
      GS_CHECK(GS_CUBLAS(cublasSetPointerMode(G->ctx->cublas, CUBLAS_POINTER_MODE_DEVICE)));
      st = GS_CUBLAS(cublasDgemv(G->ctx->cublas, CUBLAS_OP_N, n, n, G->consts, G->inv, n, b, 1,
                                 beta, x, 1));
      cublasSetPointerMode(G->ctx->cublas, old);
      return st;
    }
    return smooth(G, L, b, x, x_zero, (int)G->cfg.v[O_COARSE_SWEEPS]);
  }
  const int sweeps = (int)G->cfg.v[O_SWEEPS];
  const int visits = G->cfg.v[O_CYCLE] == 1 ? 2 : 1; /* W: the coarse correction twice */
  level_t *C = &G->L[l + 1];
  GS_CHECK(smooth(G, L, b, x, x_zero, sweeps));
  GS_CHECK(residual(G, L, b, x));
  GS_CHECK(gs_spmv_apply(L->R, GS_OP_N, 1.0, L->r, 0.0, C->b));
  for (int k = 0; k < visits; ++k) GS_CHECK(cycle(G, l + 1, C->b, C->x, k == 0));
  GS_CHECK(gs_spmv_apply(L->P, GS_OP_N, 1.0, C->x, 1.0, x));
  return smooth(G, L, b, x, 0, sweeps);
}

static gs_status_t amg_apply(gs_context_t *ctx, void *data, const double *d_r, double *d_z)
{
  amg_t *G = data;
  if (d_r == d_z) { /* the cycle writes z while it still reads b */
    GS_CHECK(GS_CUDA(cudaMemcpyAsync(G->L[0].b, d_r, (size_t)G->L[0].n * sizeof(double),
                                     cudaMemcpyDeviceToDevice, ctx->stream)));
    d_r = G->L[0].b;
  }
  return cycle(G, 0, d_r, d_z, 1);
}

static gs_status_t amg_smooth(gs_context_t *ctx, void *data, const double *d_b, double *d_x,
                              int x_nonzero, int sweeps)
{
  (void)ctx;
  amg_t *G = data;
  level_t *L = &G->L[0];
  if (G->nlev == 1 && G->inv) /* a one-level hierarchy has no smoother data: the direct solve */
    return cycle(G, 0, d_b, d_x, !x_nonzero);
  return smooth(G, L, d_b, d_x, !x_nonzero, sweeps);
}

static size_t csr_bytes(gs_idx_t n, int64_t nnz)
{
  return ((size_t)n + 1) * sizeof(int32_t) + (size_t)nnz * (sizeof(gs_idx_t) + sizeof(double));
}

/* Device bytes of the hierarchy: the coarse levels' and the transfer operators' CSR, the
 * layouts of formats that keep their own (the CSR-reading ones share the matrix's), the vectors
 * and the dense inverse; the finest matrix is the caller's. */
static size_t amg_bytes(const void *data)
{
  const amg_t *G = data;
  if (!G) return 0;
  size_t b = 0;
  for (int l = 0; l < G->nlev; ++l) {
    const level_t *L = &G->L[l];
    if (l > 0) b += csr_bytes(L->n, L->nnz);
    if (L->Pm) b += csr_bytes(L->n, L->p_nnz) + csr_bytes(G->L[l + 1].n, L->p_nnz);
    const double *vecs[5] = {L->dinv, L->x, L->b, L->r, L->d};
    for (int k = 0; k < 5; ++k)
      if (vecs[k]) b += (size_t)L->n * sizeof(double);
    const gs_spmv_t *S3[3] = {L->S, L->P, L->R};
    for (int k = 0; k < 3; ++k) {
      gs_spmv_mem_t m;
      if (!S3[k] || gs_spmv_memory(S3[k], &m) != GS_SUCCESS) continue;
      const int i = gs_spmv_backend_find(gs_spmv_name(S3[k]));
      if (i >= 0 && !(gs_spmv_backend_flags(i) & GS_SPMV_FLAG_SHARED_CSR)) b += m.device_bytes;
    }
  }
  if (G->inv) b += (size_t)G->L[G->nlev - 1].n * (size_t)G->L[G->nlev - 1].n * sizeof(double);
  return b;
}

static unsigned amg_caps(const void *data) { return ((const amg_t *)data)->caps; }

static void amg_info(const void *data, gs_precond_info_t *out)
{
  const amg_t *G = data;
  double nnz = 0, rows = 0;
  out->levels = G->nlev;
  for (int l = 0; l < G->nlev; ++l) {
    const level_t *L = &G->L[l];
    gs_precond_level_t *o = &out->level[l];
    o->rows = L->n;
    o->nnz = L->nnz;
    o->p_nnz = L->p_nnz;
    o->rho = L->rho;
    snprintf(o->format, sizeof o->format, "%s", L->S ? gs_spmv_name(L->S) : "");
    nnz += (double)L->nnz;
    rows += (double)L->n;
  }
  out->operator_complexity = G->L[0].nnz > 0 ? nnz / (double)G->L[0].nnz : 1.0;
  out->grid_complexity = G->L[0].n > 0 ? rows / (double)G->L[0].n : 1.0;
  out->phases = PH_COUNT;
  for (int k = 0; k < PH_COUNT; ++k) {
    out->phase[k].name = phase_name[k];
    out->phase[k].ms = G->phase_ms[k];
  }
  const int sm = (int)G->cfg.v[O_SMOOTHER];
  const int sweeps = (int)G->cfg.v[O_SWEEPS];
  if (sm == SM_CHEB)
    snprintf(out->smoother, sizeof out->smoother, "chebyshev degree %d, %d sweep%s",
             (int)G->cfg.v[O_DEGREE], sweeps, sweeps == 1 ? "" : "s");
  else if (sm == SM_L1)
    snprintf(out->smoother, sizeof out->smoother, "l1-jacobi, %d sweep%s", sweeps,
             sweeps == 1 ? "" : "s");
  else if (G->cfg.v[O_WEIGHT] > 0)
    snprintf(out->smoother, sizeof out->smoother, "jacobi weight %g, %d sweep%s",
             G->cfg.v[O_WEIGHT], sweeps, sweeps == 1 ? "" : "s");
  else
    snprintf(out->smoother, sizeof out->smoother, "jacobi weight 4/3 / rho, %d sweep%s", sweeps,
             sweeps == 1 ? "" : "s");
  const gs_idx_t nc = G->L[G->nlev - 1].n;
  if (G->inv)
    snprintf(out->coarse, sizeof out->coarse, "dense LU inverse (%d rows)", (int)nc);
  else
    snprintf(out->coarse, sizeof out->coarse, "%d smoothing sweeps (%d rows%s)",
             (int)G->cfg.v[O_COARSE_SWEEPS], (int)nc, G->coarse_singular ? ", singular" : "");
  snprintf(out->cycle, sizeof out->cycle, "%s", G->cfg.v[O_CYCLE] == 1 ? "W" : "V");
}

static gs_status_t amg_setup_plain(gs_context_t *ctx, gs_matrix_t *A, void **data)
{
  gs_precond_cfg_t cfg;
  memset(&cfg, 0, sizeof cfg);
  for (int k = 0; amg_options[k].key; ++k) {
    cfg.v[k] = amg_options[k].def;
    if (amg_options[k].kind == GS_PCOPT_FORMAT)
      snprintf(cfg.s[k], sizeof cfg.s[k], "%s", amg_options[k].choices);
  }
  return amg_setup(ctx, A, &cfg, data);
}

const gs_precond_ops_t gs_precond_amg_ops = {
  GS_PRECOND_OPS_VERSION, "amg",
  "smoothed-aggregation algebraic multigrid, V-cycle, set up on the GPU (options: amg.KEY=VALUE)",
  amg_setup_plain, amg_apply, amg_bytes, amg_destroy,
  0, /* symmetric and capturable per instance (amg_caps): M^T = M only for a symmetric A */
  amg_options, amg_setup, amg_smooth, amg_caps, amg_info};
