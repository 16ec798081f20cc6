/* gpusolve/precond.h: preconditioners z = M^-1 r for the Krylov solvers ("none", "jacobi",
 * "ilu0", "ic0", "amg", "block-jacobi"), behind a table of backends like the SpMV formats. */
#ifndef GPUSOLVE_PRECOND_H
#define GPUSOLVE_PRECOND_H

#include "gpusolve/context.h"
#include "gpusolve/spmv.h"

#ifdef __cplusplus
extern "C" {
#endif
/* The library is built with hidden visibility: what this header declares is its public API. */
#if defined(__GNUC__) && !defined(GS_NO_VISIBILITY_PRAGMAS)
#pragma GCC visibility push(default)
#endif

/** A preconditioner set up for one matrix (opaque). */
typedef struct gs_precond gs_precond_t;

#define GS_PRECOND_OPT_DEFAULT_LEN 32

/**
 * Sets up preconditioner `name` for the square matrix A:
 *   "none"    identity (z = r)
 *   "jacobi"  z = D^-1 r with D = diag(A)
 *   "ilu0"    incomplete LU with the pattern of A (cuSPARSE csrilu02); z = U^-1 L^-1 r
 *   "ic0"     incomplete Cholesky with the pattern of tril(A) (cuSPARSE csric02), for
 *             symmetric positive definite A; z = L^-T L^-1 r
 *   "amg"     smoothed-aggregation algebraic multigrid, one V-cycle (or W-cycle) a product,
 *             set up on the GPU, every level's product through the SpMV backends; options
 *             through gs_precond_create_opts (docs/amg.md)
 *   "block-jacobi"  z = D_B^-1 r with D_B the diagonal blocks of A (up to `block` rows each,
 *             consecutive rows of one pattern kept together), inverted on the GPU in a batch
 *             (docs/cli.md "Block-Jacobi")
 * All device memory is allocated here (through gs_dmalloc); applying allocates nothing.
 * Synchronizes the context's stream.
 *
 * @param[out] M    the preconditioner; NULL on failure
 * @param[in]  ctx  context (borrowed: must outlive M)
 * @param[in]  A    the matrix (borrowed: must outlive M; ilu0/ic0 factor their own copy of its
 *                  values, jacobi keeps its own inverted diagonal)
 * @param[in]  name one of gs_precond_name_at(0..gs_precond_count()-1)
 * @return GS_ERR_INVALID_ARG for an unknown name, and with a message naming the row (1-based,
 *         as in the Matrix Market file) for a zero or missing diagonal entry (jacobi, ilu0,
 *         ic0) or a zero or non-positive pivot (ilu0, ic0); GS_ERR_DIMENSION for a non-square
 *         A; GS_ERR_UNSUPPORTED for ilu0 / ic0 on a matrix of more than 2^31-1 entries
 *         (cuSPARSE's factorizations take 32-bit offsets); GS_ERR_DEVICE_MEMORY, GS_ERR_CUDA,
 *         GS_ERR_CUSPARSE on device failures.
 */
gs_status_t gs_precond_create(gs_precond_t **M, gs_context_t *ctx, gs_matrix_t *A,
                              const char *name);

/**
 * gs_precond_create with options: "key=value" pairs separated by commas, each key plain
 * ("theta=0.08") or qualified by the preconditioner's name ("amg.theta=0.08"); NULL or "" gives
 * the defaults. Every key and value is checked against the preconditioner's option table
 * (gs_precond_option_at): an unknown key, a key qualified by another name, or a value out of
 * range or not one of the allowed words is GS_ERR_INVALID_ARG naming it.
 */
gs_status_t gs_precond_create_opts(gs_precond_t **M, gs_context_t *ctx, gs_matrix_t *A,
                                   const char *name, const char *options);
/** The option check of gs_precond_create_opts alone (no context, no matrix). */
gs_status_t gs_precond_options_check(const char *name, const char *options);

/**
 * Sets M up again for A (the same order and context as before, typically new values on the
 * same pattern, as hypre's precond_setup): with the options it was created with. On failure M
 * is left empty (applying it is GS_ERR_INVALID_ARG) until a setup succeeds. Synchronizes.
 */
gs_status_t gs_precond_setup(gs_precond_t *M, gs_matrix_t *A);

/** Most near-null-space vectors gs_precond_set_near_null_space takes. */
#define GS_PRECOND_NEAR_NULL_MAX 8

/**
 * The near-null space of an "amg" preconditioner (PyAMG's B): k vectors that A maps to nearly
 * zero (the rigid-body modes of elasticity, the constant of a diffusion problem), from which
 * the setup builds its prolongators (docs/amg.md). They replace the constant vector (and the
 * option near_null=PATH) from the next gs_precond_setup(M, A) on, which is when they take
 * effect; M keeps a copy. k = 0 goes back to the default.
 * @param[in] M   an "amg" preconditioner (others: GS_ERR_UNSUPPORTED)
 * @param[in] k   0, or 1 .. GS_PRECOND_NEAR_NULL_MAX vectors (more: GS_ERR_UNSUPPORTED)
 * @param[in] B   host, n x k column-major (n = gs_precond_size(M)), vector c at B + c * ldb
 * @param[in] ldb leading dimension, >= n
 * @return GS_ERR_INVALID_ARG for ldb < n, a NULL B, a value that is not finite, a zero vector
 *         or vectors that are not linearly independent (the message names the vector, 1-based,
 *         and the row of a bad value). Nothing changes on failure.
 */
gs_status_t gs_precond_set_near_null_space(gs_precond_t *M, int k, const gs_val_t *B,
                                           int64_t ldb);

/**
 * x <- sweeps of M's smoother on A x = b (AMG: the finest level's smoother), from x = 0 when
 * x_nonzero is 0 (x is then write-only). Asynchronous, never allocates. GS_ERR_UNSUPPORTED for a
 * preconditioner without a smoother.
 */
gs_status_t gs_precond_smooth(gs_precond_t *M, const gs_val_t *d_b, gs_val_t *d_x, int x_nonzero,
                              int sweeps);

/** Destroys M (NULL-safe) and sets *M = NULL. */
void gs_precond_destroy(gs_precond_t **M);

/**
 * z = M^-1 r, asynchronous on the context's stream; never allocates, never synchronizes.
 * @param[in]  d_r device vector of length n (rows of A)
 * @param[out] d_z device vector of length n; may be the same as d_r
 */
gs_status_t gs_precond_apply(gs_precond_t *M, const gs_val_t *d_r, gs_val_t *d_z);

/** Registry name of M ("jacobi"), "" for NULL. */
const char *gs_precond_name(const gs_precond_t *M);
/** Order n of M's matrix (0 for NULL). */
gs_idx_t gs_precond_size(const gs_precond_t *M);
/** The context M was created on (borrowed). */
gs_context_t *gs_precond_context(const gs_precond_t *M);
/** Whether M is the identity ("none"): solvers then skip the apply and its copy. */
int gs_precond_is_identity(const gs_precond_t *M);
/** Whether M^T = M ("none", "jacobi", "ic0"; 1 for NULL), so that gs_precond_apply also gives
 *  M^-T r: what methods that apply M^-T (BiCG) need. "ilu0" is not: (L U)^T = U^T L^T. */
int gs_precond_is_symmetric(const gs_precond_t *M);
/** Wall-clock seconds gs_precond_create spent (factorization, analysis, uploads). */
double gs_precond_setup_seconds(const gs_precond_t *M);
/** Device bytes M holds (factors, diagonal, solve buffers). */
size_t gs_precond_device_bytes(const gs_precond_t *M);

/** Whether gs_precond_apply of M may be captured into a CUDA Graph (the solvers capture their
 *  iterations only then). */
int gs_precond_is_capturable(const gs_precond_t *M);

/* ---- what a setup built (a multilevel hierarchy, its setup phases) ---------------------------- */
#define GS_PRECOND_MAX_LEVELS 32
#define GS_PRECOND_MAX_PHASES 16
typedef struct gs_precond_level {
  gs_idx_t rows;
  int64_t nnz;      /* entries of the level's matrix */
  int64_t p_nnz;    /* entries of its prolongator to the next coarser level (0: coarsest) */
  double rho;       /* the estimate of rho(D^-1 A) the smoother and P use (0: not estimated) */
  char format[24];  /* the SpMV format of the level's products */
} gs_precond_level_t;
typedef struct gs_precond_phase {
  const char *name; /* static string */
  double ms;
} gs_precond_phase_t;
typedef struct gs_precond_info {
  int levels;                  /* 0 for single-level preconditioners */
  gs_precond_level_t level[GS_PRECOND_MAX_LEVELS];
  double operator_complexity;  /* sum of the levels' nnz / nnz of the finest */
  double grid_complexity;      /* sum of the levels' rows / rows of the finest */
  int phases;
  gs_precond_phase_t phase[GS_PRECOND_MAX_PHASES];
  char smoother[64];           /* "jacobi, weight 4/3 / rho, 1 sweep" */
  char coarse[64];             /* "dense LU (n = 412)" */
  char cycle[8];               /* "V", "W" */
} gs_precond_info_t;
/** What M's setup built (levels = 0 and no phases for a single-level preconditioner). */
gs_status_t gs_precond_info(const gs_precond_t *M, gs_precond_info_t *out);

/* ---- options of the registry's preconditioners --------------------------------------------- */
typedef struct gs_precond_option_info {
  const char *key;    /* "theta" */
  const char *help;   /* one line */
  char def[GS_PRECOND_OPT_DEFAULT_LEN]; /* the default as text */
  const char *values; /* the allowed words ("jacobi|l1-jacobi|chebyshev"), or NULL for numbers */
} gs_precond_option_info_t;
/** Option k of preconditioner i; 0 when there is none (k past the end). */
int gs_precond_option_at(int i, int k, gs_precond_option_info_t *out);

/** Number of preconditioners, their names and one-line summaries (index 0..count-1). */
int gs_precond_count(void);
const char *gs_precond_name_at(int i);
const char *gs_precond_summary_at(int i);
/** Index of the preconditioner called `name`, or -1. */
int gs_precond_find(const char *name);
/** gs_precond_is_symmetric for preconditioner i of the registry, before creating it (0 for an
 *  index out of range). */
int gs_precond_symmetric_at(int i);

#if defined(__GNUC__) && !defined(GS_NO_VISIBILITY_PRAGMAS)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif
#endif
