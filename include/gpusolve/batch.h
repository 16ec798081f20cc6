/* gpusolve/batch.h: batches of many small, independent sparse matrices: one upload, batched SpMV
 * (one thread block per problem, Anzt, Collins, Dongarra, Flegar and Quintana-Orti, "Flexible
 * Batched Sparse Matrix-Vector Product on GPUs", ScalA17) and batched CG / BiCGSTAB / GMRES(m)
 * solves with Jacobi, block-Jacobi or ILU(0) preconditioning, in which every problem converges
 * on its own.
 *
 * Layout (docs/design.md "Batches"). A batch holds N problems; problem i is an m_i x n_i CSR
 * matrix A_i with nnz_i entries (sizes and patterns may all differ). Its vectors live in two
 * concatenated device arrays, with 64-bit offsets:
 *   x = [x_0 | x_1 | ... | x_{N-1}]   x_i = x + col_off[i], n_i entries, col_off[i] = sum_{j<i} n_j
 *   y = [y_0 | y_1 | ... | y_{N-1}]   y_i = y + row_off[i], m_i entries, row_off[i] = sum_{j<i} m_j
 * so x has col_off[N] entries and y row_off[N] (gs_batch_row_offsets, gs_batch_col_offsets).
 * The matrices sit in ONE device allocation: per-problem row pointers (32-bit, relative to the
 * problem's first entry), column indices (32-bit, local to the problem: 0 .. n_i - 1) and values,
 * each problem's arrays reached through 64-bit offsets. A batch made by
 * gs_batch_create_shared stores the pattern (row pointers, columns) once and only the values N
 * times. A problem may have at most 2^31 - 1 entries; the batch as a whole is limited by memory.
 */
#ifndef GPUSOLVE_BATCH_H
#define GPUSOLVE_BATCH_H

#include "gpusolve/context.h"
#include "gpusolve/matrix.h"
#include "gpusolve/solver.h"

#ifdef __cplusplus
extern "C" {
#endif
/* The library is built with hidden visibility: what this header declares is its public API. */
#if defined(__GNUC__) && !defined(GS_NO_VISIBILITY_PRAGMAS)
#pragma GCC visibility push(default)
#endif

/** An uploaded batch of sparse matrices (opaque). */
typedef struct gs_batch gs_batch_t;

/**
 * Copies N host CSR matrices (any sizes, any patterns, rows sorted or not) into one device
 * allocation. The caller keeps the matrices. Borrows ctx (it must outlive the batch).
 * @return GS_ERR_INVALID_ARG for count < 1, a NULL matrix or an invalid CSR (the message names
 *         the problem), GS_ERR_UNSUPPORTED for a problem of more than 2^31 - 1 entries,
 *         GS_ERR_HOST_MEMORY, GS_ERR_DEVICE_MEMORY, GS_ERR_CUDA.
 */
gs_status_t gs_batch_create(gs_batch_t **B, gs_context_t *ctx, int count,
                            const gs_csr_t *const *A);

/**
 * The cheap path for N matrices sharing one pattern: `pattern` gives the sizes, row pointers and
 * columns (its values are ignored), `values` holds count * pattern->nnz values, problem i's in
 * values[i * nnz .. (i + 1) * nnz) in the pattern's entry order. The pattern is stored once.
 */
gs_status_t gs_batch_create_shared(gs_batch_t **B, gs_context_t *ctx, int count,
                                   const gs_csr_t *pattern, const gs_val_t *values);

/** Frees the batch (NULL-safe) and sets *B = NULL. */
void gs_batch_destroy(gs_batch_t **B);

/** Problems in the batch (0 for NULL). */
int gs_batch_count(const gs_batch_t *B);
/** Host arrays of count + 1 offsets (owned by B): where problem i's rows (its y, b) and columns
 *  (its x) start in the concatenated vectors; [count] is the total length. */
const gs_off_t *gs_batch_row_offsets(const gs_batch_t *B);
const gs_off_t *gs_batch_col_offsets(const gs_batch_t *B);
/** Entries of all problems (a shared pattern counts once per problem). */
gs_off_t gs_batch_nnz(const gs_batch_t *B);
/** A fresh host CSR copy of problem i (the caller destroys it); GS_ERR_INVALID_ARG when i is out
 *  of range. */
gs_status_t gs_batch_problem_csr(const gs_batch_t *B, int i, gs_csr_t **out);
/** Device bytes the batch holds (matrices and offsets). */
size_t gs_batch_device_bytes(const gs_batch_t *B);

/* ---- batched SpMV -----------------------------------------------------------------------------
 * Kernels, all one thread block per problem with x staged in shared memory when it fits (x read
 * from global memory for the problems that do not fit): "batch-csr-scalar" (a thread per row),
 * "batch-csr-vector" (a warp per row), "batch-csr-smart" (threads per row = the smallest power of
 * two >= the problem's mean row length, up to 32), "batch-csr-i" (the interleaved, balanced CSR:
 * equal shares of entries per warp, start rows precomputed), "batch-coo" (equal shares of
 * entries, warp segmented reduction), "batch-ell" (padded to each problem's longest row, a
 * thread per row, column-major), and beyond the paper "batch-csr-warp" (in batches of at least
 * 1024 problems, each problem of at most 128 rows takes one warp, 8 to a block, without a
 * barrier; larger ones a block; warps work in 32-row tiles whose row bounds come from one
 * coalesced load and shuffles, W lanes a row as csr-smart, two rows per group at once) and
 * "batch-csr-stream" (CSR-stream of CSR-adaptive inside a block: chunks of whole rows whose
 * entries all threads load at consecutive addresses, products summed a thread a row from shared
 * memory, a row longer than a chunk summed by the whole block; blocks take the problems largest
 * first), and "batch-csr-scalar16" and "batch-csr-stream16", the same two on 16-bit row
 * pointers and columns (10 bytes an entry instead of 12), which take only batches whose every
 * problem has at most 65,535 entries and 65,536 columns (others: GS_ERR_UNSUPPORTED).
 * "auto" picks one of them from the batch's row statistics (gs_batch_auto_format):
 * batch-csr-stream, or batch-csr-scalar for small problems with balanced rows, each as its
 * 16-bit twin where the batch fits it.
 * Vendor baselines in the same table (flag GS_BATCH_FORMAT_VENDOR, never chosen by "auto"):
 * "batch-cusparse" and "batch-cusparse2", cuSPARSE's own strided batches (cusparseSpMM with
 * one column per problem, CUSPARSE_SPMM_CSR_ALG1 and CSR_ALG2, at most 65,535 problems a call).
 * They read only uniform batches, every problem of one m, n and nnz (patterns may differ, e.g.
 * gs_batch_create_shared's); others are refused with GS_ERR_UNSUPPORTED ("patterns differ"). */

/** gs_batch_format_flags: a vendor (cuSPARSE) baseline rather than one of our kernels. */
#define GS_BATCH_FORMAT_VENDOR 1u

/** A batch prepared for one kernel (opaque). */
typedef struct gs_batch_spmv gs_batch_spmv_t;

/** Number of batched kernels, and kernel k's name and one-line summary (NULL out of range). */
int gs_batch_format_count(void);
const char *gs_batch_format_name(int k);
const char *gs_batch_format_summary(int k);
/** Kernel k's GS_BATCH_FORMAT_* flags (0 out of range). */
unsigned gs_batch_format_flags(int k);
/** The kernel "auto" picks for B, and why (a static phrase, may be NULL). */
const char *gs_batch_auto_format(const gs_batch_t *B, const char **why);

/**
 * Prepares kernel `name` (or "auto") for B: builds and uploads what the kernel needs beyond the
 * CSR (row indices, ELL padding, CSR-I start rows). Borrows B. max_fill <= 0 takes the default
 * (3): batch-ell refuses a batch whose padded entries exceed max_fill * nnz with
 * GS_ERR_FORMAT_FILL; the vendor baselines refuse a batch that is not uniform with
 * GS_ERR_UNSUPPORTED. GS_ERR_INVALID_ARG for an unknown name.
 */
gs_status_t gs_batch_spmv_create(gs_batch_spmv_t **S, gs_batch_t *B, const char *name,
                                 double max_fill);
void gs_batch_spmv_destroy(gs_batch_spmv_t **S);
/** The kernel's name (auto resolved). */
const char *gs_batch_spmv_name(const gs_batch_spmv_t *S);
/** One line about the prepared layout, or "". */
const char *gs_batch_spmv_describe(const gs_batch_spmv_t *S);

/** Bytes of a batched product. */
typedef struct gs_batch_mem {
  size_t device_bytes;    /* held by the kernel's own layout (the batch's CSR excluded) */
  size_t bytes_per_apply; /* what one y = A x (beta = 0) reads and writes at least, by the
                             kernel's layout: matrix arrays once, x once, y once */
  size_t floor_bytes;     /* the batch's byte floor, the same for every kernel: CSR arrays
                             (32-bit row pointers and columns, double values) + x + y */
} gs_batch_mem_t;
gs_status_t gs_batch_spmv_memory(const gs_batch_spmv_t *S, gs_batch_mem_t *mem);

/**
 * y_i = alpha A_i x_i + beta y_i for every problem, in one launch, asynchronous on the context's
 * stream, never allocating. d_x holds col_off[N] values, d_y row_off[N] (see the layout above),
 * d_x != d_y. BLAS rules: with beta == 0, y is write-only (NaN in it never leaks); with
 * alpha == 0, A and x are not read. alpha, beta finite.
 */
gs_status_t gs_batch_spmv_apply(gs_batch_spmv_t *S, double alpha, const gs_val_t *d_x,
                                double beta, gs_val_t *d_y);

/**
 * The same product on the host with the kernel's own layout built on the host (the check of
 * that layout without a GPU): x, y host arrays laid out as above. Needs no device work.
 * max_fill as for gs_batch_spmv_create (<= 0: the default), so that a layout the device
 * accepted is checked, not refused.
 */
gs_status_t gs_batch_host_apply(const gs_batch_t *B, const char *name, double max_fill,
                                double alpha, const gs_val_t *x, double beta, gs_val_t *y);

/** Median time of `runs` products y = A x (beta = 0) after `warmup` untimed ones, each between
 *  two CUDA events on the context's stream (seconds); min in *min_s when not NULL. */
gs_status_t gs_batch_spmv_time(gs_batch_spmv_t *S, const gs_val_t *d_x, gs_val_t *d_y,
                               int warmup, int runs, double *median_s, double *min_s);

/* ---- batched solves -------------------------------------------------------------------------- */

/** Preconditioners of the batched solver (gs_batch_solve_opts_t.precond), each set up per
 *  problem inside the solve's launch. */
typedef enum gs_batch_precond {
  GS_BATCH_PRECOND_NONE = 0,
  GS_BATCH_PRECOND_JACOBI = 1,       /* z = D^-1 r (as gs_solve's "jacobi") */
  GS_BATCH_PRECOND_BLOCK_JACOBI = 2, /* diagonal blocks of at most `block` rows, each LU
                                        factorized with partial pivoting (gs_solve's
                                        "block-jacobi": the same partition and pivot rule) */
  GS_BATCH_PRECOND_ILU0 = 3          /* incomplete LU without fill on the problem's pattern
                                        (gs_solve's "ilu0") */
} gs_batch_precond_t;

/** Largest block-Jacobi block of the batched solver (gs_solve's block-jacobi takes 32). */
#define GS_BATCH_BJ_MAX_BLOCK 8

/** Name of a batched preconditioner ("none", "jacobi", "block-jacobi", "ilu0"; NULL out of
 *  range), and the value of a name (-1 when the batched solver has none of that name). */
const char *gs_batch_precond_name(gs_batch_precond_t p);
int gs_batch_precond_find(const char *name);

/** Options of gs_batch_solve; start from gs_batch_solve_opts_default(). The stopping test is
 *  gs_solve's: problem i stops when ||r_i|| <= max(rtol ||b_i||, atol) (CG, BiCGSTAB: the
 *  recurrence residual, checked every iteration; GMRES: the true residual at the end of a
 *  cycle, the Givens estimate ending the cycle, as gs_solve's GMRES). The methods are gs_solve's
 *  step for step, summed in another order: CG takes gs_solve's iteration count (within 1);
 *  BiCGSTAB's count follows the rounding on problems where the shadow residual loses its
 *  significance (docs/design.md "Batches").
 *  0.x: fields are appended at the end (a caller that starts from the defaults keeps working
 *  across versions in source; binaries are rebuilt with the library). */
typedef struct gs_batch_solve_opts {
  gs_method_t method; /* GS_SOLVER_CG (default), GS_SOLVER_BICGSTAB or GS_SOLVER_GMRES */
  double rtol;        /* default 1e-8 */
  double atol;        /* default 0 */
  int maxit;          /* per problem, default 10000 */
  int jacobi;         /* DEPRECATED (kept for existing callers; use precond): 1 means
                         precond = GS_BATCH_PRECOND_JACOBI; with another precond it is refused
                         (GS_ERR_INVALID_ARG); default 0 */
  int x0_given;       /* 1: d_x holds initial guesses; 0 (default): x0 = 0 */
  gs_batch_precond_t precond; /* default GS_BATCH_PRECOND_NONE */
  int block;          /* block-Jacobi: rows of the largest block, 1 .. GS_BATCH_BJ_MAX_BLOCK
                         (default 8, gs_solve's) */
  int agglomerate;    /* block-Jacobi: 1 (default, gs_solve's): blocks from runs of rows with one
                         pattern (supervariables) merged up to `block` rows; 0: fixed blocks */
  int restart;        /* GMRES(m): m, default 30 (gs_solve's); each problem takes min(m, n_i) */
} gs_batch_solve_opts_t;

void gs_batch_solve_opts_default(gs_batch_solve_opts_t *opts);

/** Outcome of one problem. (detail and detail_row are appended fields: a caller's array of
 *  these steps by the new size, so binaries are rebuilt with the library, as for every 0.x
 *  change of a public struct.) */
typedef struct gs_batch_stats {
  gs_reason_t reason;        /* converged (rtol/atol), maxit, breakdown, indefinite, naninf,
                                stagnation (GMRES: a restart cycle without progress) */
  int iterations;
  double bnorm;              /* ||b_i|| */
  double rnorm0;             /* ||b_i - A_i x0_i|| */
  double rnorm;              /* last residual norm checked (GMRES: the Givens estimate) */
  double true_residual_norm; /* ||b_i - A_i x_i|| recomputed at the end */
  const char *detail;        /* why it stopped beyond the reason, a static phrase ("" when there
                                is nothing to add): the preconditioner's refusal, GMRES's cause */
  int detail_row;            /* the row (0-based, of problem i) the detail names: the zero or
                                missing diagonal (Jacobi, ILU(0)), the zero pivot (ILU(0)), the
                                row without a usable pivot (block-Jacobi); else -1 */
} gs_batch_stats_t;

/** The whole solve. */
typedef struct gs_batch_summary {
  int converged;             /* problems with a converged reason */
  int it_min, it_median, it_max;
  double seconds;            /* GPU time of the solve kernels (CUDA events) */
  int shared_problems;       /* problems whose vectors were kept in shared memory */
} gs_batch_summary_t;

/**
 * Solves A_i x_i = b_i for every (square) problem with one persistent thread block per problem:
 * the preconditioner's setup and the whole iteration run inside one kernel launch, each problem
 * stops on its own test (no host synchronization per problem or per iteration); vectors of a
 * problem live in shared memory when they fit, else in a global workspace allocated for the
 * call (docs/design.md "Batches"). Breakdowns and the iteration limit are per-problem reasons,
 * not errors; so is a preconditioner that cannot be set up for a problem (Jacobi: a zero or
 * missing diagonal entry; block-Jacobi: a block singular to working precision; ILU(0): a
 * missing diagonal entry or a zero pivot): that problem stops at once with
 * GS_DIVERGED_BREAKDOWN, its stats naming the cause and the row, the others are solved.
 * d_b, d_x laid out as the batch's vectors (row_off = col_off for square problems), d_x must
 * not alias d_b. Synchronizes the context's stream before returning.
 * @param stats array of gs_batch_count(B) entries, or NULL
 * @param summary may be NULL
 * @return GS_ERR_INVALID_ARG (NULL pointers, bad options, a method other than CG, BiCGSTAB or
 *         GMRES, jacobi = 1 with another precond), GS_ERR_DIMENSION (a non-square problem,
 *         named), GS_ERR_HOST_MEMORY, GS_ERR_DEVICE_MEMORY (the workspace), device errors.
 */
gs_status_t gs_batch_solve(gs_batch_t *B, const gs_batch_solve_opts_t *opts,
                           const gs_val_t *d_b, gs_val_t *d_x, gs_batch_stats_t *stats,
                           gs_batch_summary_t *summary);

/* ---- generators -------------------------------------------------------------------------------
 * count matrices with rows drawn uniformly from [rmin, rmax] (seeded, reproducible):
 *   "laplace": 2D 5-point Laplacians on nx x ny grids, nx * ny the drawn size (nx random near
 *              its square root): SPD, patterns differ with the grid;
 *   "random":  square, nonsymmetric, 1 to 16 off-diagonal entries per row at random columns
 *              plus a dominant diagonal (|a_ii| > sum |a_ij|): nonsingular, irregular rows.
 * *out receives a malloc'd array of count matrices; free with gs_batch_gen_free. */
gs_status_t gs_batch_gen(gs_csr_t ***out, const char *kind, int count, gs_idx_t rmin,
                         gs_idx_t rmax, uint64_t seed);
void gs_batch_gen_free(gs_csr_t ***A, int count);

/** A uniform batch, the input of gs_batch_create_shared: count problems of ONE pattern, the
 *  first problem gs_batch_gen(kind, 1, rmin, rmax, seed) draws (rmin = rmax fixes its size),
 *  with values varied per problem: "laplace" the diagonal 4 + d_i (d_i in [0, 1) per problem:
 *  SPD), "random" new off-diagonal values in [-1, 1) and a diagonal of sign +-1 times
 *  (1 + sum |off-diagonal|) per problem. *pattern (destroy with gs_csr_destroy) carries problem
 *  0's values; *values (free()) holds count * pattern->nnz values, problem i's at i * nnz. */
gs_status_t gs_batch_gen_shared(gs_csr_t **pattern, gs_val_t **values, const char *kind,
                                int count, gs_idx_t rmin, gs_idx_t rmax, uint64_t seed);

#if defined(__GNUC__) && !defined(GS_NO_VISIBILITY_PRAGMAS)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif
#endif
