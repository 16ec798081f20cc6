/* batch/batch_impl.h: the batch object's fields, its host layout, and the batched kernels' table,
 * for batch/ only (not installed). The public contract is include/gpusolve/batch.h.
 *
 * Adding a batched kernel: a host builder and host apply in batch/batch_build.c (pure C: the
 * layout is then tested by tests/test_batch_host.c without a GPU), its kernel, prepare, apply,
 * memory, describe and destroy in batch/batch_kernels.cu, one gs_batch_ops_t, and one line in
 * gs_batch_formats[] (batch_kernels.cu). Only batch/batch.c calls through the table, after it has
 * validated the arguments, so slots may assume: pointers non-NULL, d_x != d_y, alpha != 0 and
 * alpha, beta finite (batch.c answers alpha == 0 itself), the context's device current. apply is
 * asynchronous on ctx->stream, allocates nothing and never reads y when beta == 0. */
#ifndef GS_BATCH_IMPL_H
#define GS_BATCH_IMPL_H

#include <float.h>
#include <stdint.h>

#include "gpusolve/batch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One problem's place in the batch, the same struct on host and device (56 bytes). Offsets are
 * 64-bit element offsets into the concatenated arrays. */
typedef struct gs_batch_prob {
  int64_t row; /* first entry of y_i (and b_i, r_i): row_off[i] */
  int64_t col; /* first entry of x_i: col_off[i] */
  int64_t rp;  /* first of the m + 1 row pointers in rp[] (relative to `ent`) */
  int64_t ent; /* first column index in ci[] */
  int64_t val; /* first value in val[] */
  int32_t m, n, nnz;
  int32_t maxrow; /* longest row */
} gs_batch_prob_t;

/* The host layout that is uploaded as is (pure host memory; batch_build.c). */
typedef struct gs_batch_host {
  int count;
  int shared;              /* one pattern for all problems: rp, ci hold it once */
  gs_batch_prob_t *prob;   /* count */
  int32_t *rp;             /* row pointers relative to the problem's first entry */
  gs_idx_t *ci;            /* local column indices */
  gs_val_t *val;
  size_t nrp, nci, nval;   /* lengths of rp, ci, val */
  gs_off_t *row_off, *col_off; /* count + 1 */
  gs_off_t nnz;            /* entries of all problems (shared pattern: count * its nnz) */
  gs_idx_t max_m, max_n;
  int32_t max_nnz;
  int square;              /* every problem square */
} gs_batch_host_t;

/** Builds the host layout of count CSR matrices (validated, each of at most 2^31 - 1 entries). */
gs_status_t gs_batch_host_build(gs_batch_host_t *H, int count, const gs_csr_t *const *A);
/** Same for one pattern and count * pattern->nnz values. */
gs_status_t gs_batch_host_build_shared(gs_batch_host_t *H, int count, const gs_csr_t *pattern,
                                       const gs_val_t *values);
void gs_batch_host_free(gs_batch_host_t *H);
/** Problem i as a fresh CSR (the caller destroys it). */
gs_status_t gs_batch_host_problem(const gs_batch_host_t *H, int i, gs_csr_t **out);

/* Row statistics the automatic choice and the launch shapes read. */
typedef struct gs_batch_rowstats {
  double mean_m, mean_nnz, mean_row; /* per problem; mean_row = nnz / rows over the batch */
  double ell_fill;   /* sum_i m_i * maxrow_i / nnz: ELL's padding factor (1 = none) */
  double long_row;   /* max over problems of maxrow_i / mean row length of problem i */
  int idx16;         /* every problem within the 16-bit kernels' limits (gs_batch_prob_fits16) */
} gs_batch_rowstats_t;
void gs_batch_host_rowstats(const gs_batch_host_t *H, gs_batch_rowstats_t *st);
/** The automatic rule (see gs_batch_auto_format). */
const char *gs_batch_rule(const gs_batch_rowstats_t *st, const char **why);

/** GS_SUCCESS when every problem has problem 0's m, n and nnz (a uniform batch: cuSPARSE's
 *  strided batches can read it); else GS_ERR_UNSUPPORTED with a message naming `who` and the
 *  first problem that differs ("patterns differ"). */
gs_status_t gs_batch_host_uniform(const gs_batch_host_t *H, const char *who);

/** The CSR byte floor of y = A x over the batch: 32-bit row pointers and columns, double values,
 *  x read once, y written once. */
size_t gs_batch_floor_bytes(const gs_batch_host_t *H);

/* ---- host layouts of the kernels (batch_build.c) ---------------------------------------------- */

#ifdef __CUDACC__
#define GS_BATCH_HD __host__ __device__
#else
#define GS_BATCH_HD
#endif

/** Threads per row of batch-csr-smart for a problem: the smallest power of two >= its mean row
 *  length nnz / m, clamped to [1, 32] (Anzt et al. section 3.4). Host and device alike. */
static inline GS_BATCH_HD int gs_batch_smart_width(int32_t m, int32_t nnz)
{
  if (m <= 0) return 1;
  const int64_t mean = ((int64_t)nnz + m - 1) / m; /* ceil: the smallest width >= the mean */
  int w = 1;
  while (w < 32 && w < mean) w <<= 1;
  return w;
}

/** batch-csr-warp: problems of at most GS_BATCH_WARP_ROWS rows take one warp each, 8 to a block
 *  of 256 threads, when the batch has at least GS_BATCH_WARP_MIN_PACK problems (fewer leave
 *  blocks to spare: every problem then takes a block, as do the larger ones). */
#define GS_BATCH_WARP_ROWS 128
#define GS_BATCH_WARP_MIN_PACK 1024
#define GS_BATCH_WARP_PER_BLOCK 8

/** batch-csr-warp's schedule: sched[0 .. nlarge) the problems that take a block each, then
 *  nwblocks groups of GS_BATCH_WARP_PER_BLOCK problems that take a warp each (-1 pads the last
 *  group). Both parts in decreasing work (nnz + m, ties by index): the largest blocks start first
 *  (a shorter tail), and the warps of one block get problems of similar work (a block retires
 *  with its slowest warp). Every problem appears once. */
gs_status_t gs_batch_warp_schedule(const gs_batch_host_t *H, int32_t **sched, int32_t *nlarge,
                                   int32_t *nwblocks);

/** batch-csr-stream: every problem once, in decreasing work (nnz + m, ties by index), the order
 *  in which its blocks take them. */
gs_status_t gs_batch_work_order(const gs_batch_host_t *H, int32_t **order);
/** batch-csr-stream's threads per block: the smallest power of two >= half the mean rows per
 *  problem, clamped to [64, 512] (run 105, H100: on 1,000 and 10,000 problems of 10-2,000 rows,
 *  512 threads ran 0.90-0.99x the time of 256 and 0.80-0.84x that of 1024, which holds two
 *  blocks an SM; below 64 the limit of 32 blocks an SM leaves threads idle). */
int gs_batch_stream_threads(double mean_m);

/** batch-coo: local row index of every stored entry (H->nci of them, in ci's order). */
gs_status_t gs_batch_coo_rows(const gs_batch_host_t *H, int32_t **rows);

/** batch-csr-i: for each problem and each of `nwarps` warps, the row holding the warp's first
 *  entry, warp w taking entries [w nnz / nwarps, (w + 1) nnz / nwarps): start[i (nwarps + 1) + w],
 *  start[.. + nwarps] = m. A row r holds entry e when rp[r] <= e < rp[r + 1]; a warp with no
 *  entries gets the row of its end. */
gs_status_t gs_batch_csri_starts(const gs_batch_host_t *H, int nwarps, int32_t **start);

/** batch-ell: each problem padded to its longest row, column-major (entry k of row r at
 *  off[i] + k m_i + r), padding column -1 and value 0 (never read: a padded x entry could be
 *  NaN). Refuses with GS_ERR_FORMAT_FILL when the stored entries exceed max_fill * nnz. */
typedef struct gs_batch_ell {
  int64_t *off;   /* count + 1 */
  int32_t *ci;    /* off[count] */
  gs_val_t *val;  /* off[count] */
} gs_batch_ell_t;
gs_status_t gs_batch_ell_build(const gs_batch_host_t *H, double max_fill, gs_batch_ell_t *E);
void gs_batch_ell_free(gs_batch_ell_t *E);

/** batch-csr-scalar16 and batch-csr-stream16: the batch's row pointers (relative to each
 *  problem's first entry) and local columns as 16-bit unsigned integers, at the same offsets as
 *  H->rp and H->ci (H->nrp and H->nci entries), so that a problem's arrays are reached through
 *  its descriptor as in the 32-bit layout. 10 bytes an entry instead of 12. A problem of more
 *  than GS_BATCH_IDX16_MAX_NNZ entries or GS_BATCH_IDX16_MAX_N columns does not fit: refused
 *  with GS_ERR_UNSUPPORTED naming it. */
#define GS_BATCH_IDX16_MAX_NNZ 65535
#define GS_BATCH_IDX16_MAX_N 65536
/** Whether problem p is within those limits. */
static inline int gs_batch_prob_fits16(const gs_batch_prob_t *p)
{
  return p->nnz <= GS_BATCH_IDX16_MAX_NNZ && p->n <= GS_BATCH_IDX16_MAX_N;
}
gs_status_t gs_batch_idx16_build(const gs_batch_host_t *H, const char *who, uint16_t **rp16,
                                 uint16_t **ci16);

/** Host applies on those layouts: y = alpha A x + beta y per problem (BLAS rules). `kind` is one
 *  of the GS_BATCH_K_* values. */
enum { GS_BATCH_K_CSR = 0, GS_BATCH_K_SMART, GS_BATCH_K_CSRI, GS_BATCH_K_COO, GS_BATCH_K_ELL,
       GS_BATCH_K_CSR16 };
/* (batch-csr-warp sums a row as batch-csr-smart does: W strided partial sums, then their tree:
 *  its host layout is GS_BATCH_K_SMART's.) */
gs_status_t gs_batch_host_apply_kind(const gs_batch_host_t *H, int kind, int nwarps,
                                     double max_fill, double alpha, const gs_val_t *x,
                                     double beta, gs_val_t *y);

/* ---- the batched kernels' table (batch_kernels.cu) ------------------------------------------- */

#define GS_BATCH_OPS_VERSION 2
#define GS_BATCH_MAX_FILL_DEFAULT 3.0

typedef struct gs_batch_ops {
  int version;
  const char *name;
  const char *summary;
  int kind;          /* GS_BATCH_K_*: the host layout its host apply uses */
  unsigned flags;    /* GS_BATCH_FORMAT_* (batch.h): VENDOR for cuSPARSE's baselines, which
                        "auto" never picks and which refuse batches they cannot read */
  gs_status_t (*prepare)(gs_batch_t *B, double max_fill, void **data);
  gs_status_t (*apply)(gs_batch_t *B, void *data, double alpha, const double *d_x, double beta,
                       double *d_y);
  gs_status_t (*memory)(const gs_batch_t *B, const void *data, gs_batch_mem_t *mem);
  void (*describe)(const void *data, char *buf, size_t len);
  void (*destroy)(gs_batch_t *B, void *data); /* accepts NULL data */
} gs_batch_ops_t;

extern const gs_batch_ops_t *const gs_batch_formats[];
extern const int gs_batch_nformats;

/* cuSPARSE's strided batches (batch/batch_cusparse.cu), listed in gs_batch_formats[]. */
extern const gs_batch_ops_t gs_batch_cusparse_ops, gs_batch_cusparse2_ops;

/* The device view of a batch (pointers into its one allocation). */
typedef struct gs_batch_dev {
  const gs_batch_prob_t *prob;
  const int32_t *rp;
  const gs_idx_t *ci;
  const gs_val_t *val;
  int count;
} gs_batch_dev_t;

struct gs_batch {
  gs_context_t *ctx;       /* borrowed */
  gs_batch_host_t H;       /* the host copy of what was uploaded */
  gs_batch_rowstats_t st;
  void *d_base;            /* the one allocation */
  size_t d_bytes;
  gs_batch_dev_t dev;
  int sm_count;
};

/** Threads of a block for `work` items per problem on average: a power of two in [32, 256]. */
int gs_batch_block_threads(double work);

/* Device entry points of batch_kernels.cu / batch_solve_kernels.cu (C linkage). */
/** y = beta y over `len` entries (beta == 0: y = 0, not read). */
gs_status_t gs_batch_kernel_scale(gs_batch_t *B, double beta, double *d_y, size_t len);

/* ---- the batched solver (batch_solve.c, batch_plan.c, batch_solve_kernels.cu, batch_solve_host.c)
 * One body (batch_solve_body.h) runs a problem: on the device a thread block per problem, on the
 * host (gs_batch_host_solve) the same code with one thread, the check of its algorithm without a
 * GPU. A problem's storage is three parts, each in shared memory or in the global workspace
 * (gs_batch_plan_build decides): its vectors, the preconditioner's data, GMRES's small arrays. */

/** Outcome of one problem as the body writes it. */
typedef struct gs_batch_result {
  double bnorm, rnorm0, rnorm, true_rnorm;
  int reason, iterations;
  int detail;   /* GS_BATCH_DETAIL_* */
  int bad_row;  /* the row the detail names, or -1 */
} gs_batch_result_t;

/** Two block sums at once (the body's reductions). */
typedef struct gs_bd_pair {
  double a, b;
} gs_bd_pair_t;

/** A result as the public stats. */
void gs_batch_fill_stats(const gs_batch_result_t *r, gs_batch_stats_t *st);

/** Why a problem stopped beyond its reason (gs_batch_detail_string). */
enum {
  GS_BATCH_DETAIL_NONE = 0,
  GS_BATCH_DETAIL_JACOBI_DIAG,    /* Jacobi: a zero or missing diagonal entry */
  GS_BATCH_DETAIL_BJ_SINGULAR,    /* block-Jacobi: a block singular to working precision */
  GS_BATCH_DETAIL_ILU_DIAG,       /* ILU(0): a missing diagonal entry */
  GS_BATCH_DETAIL_ILU_PIVOT,      /* ILU(0): a zero (or not finite) pivot */
  GS_BATCH_DETAIL_GMRES_COLUMN,   /* GMRES: the new Arnoldi column is not finite */
  GS_BATCH_DETAIL_GMRES_ZERO,     /* GMRES: a zero Hessenberg column */
  GS_BATCH_DETAIL_GMRES_LSQ,      /* GMRES: the least-squares solution is not finite */
  GS_BATCH_DETAIL_GMRES_LUCKY,    /* GMRES: h_{j+1,j} ~ 0 without convergence */
  GS_BATCH_DETAIL_GMRES_STAGNANT, /* GMRES: a restart cycle did not reduce ||b - A x|| */
  GS_BATCH_DETAIL_TRUE_RESIDUAL,  /* GMRES: the true residual is not finite */
  GS_BATCH_NDETAILS
};
/** The static phrase of a detail code ("" for none). */
const char *gs_batch_detail_string(int detail);

/** Block-Jacobi's pivot rule, gs_solve's (precond/block_jacobi.h GS_BJ_PIVOT_OK; the suites
 *  compare the factors with its host factorization): a candidate pivot of magnitude a, computed
 *  from terms of magnitude m, in a block of s rows, is more than rounding noise when
 *  a > 4 s u m, u = 2^-53 (an exact zero never is). */
#define GS_BATCH_BJ_PIVOT_OK(a, m, s) ((a) > 4.0 * (double)(s) * (DBL_EPSILON * 0.5) * (m))

/** Block-Jacobi's partition of a problem's rows (gs_solve's, precond/block_jacobi.h): fixed
 *  blocks of `block` rows (agglomerate 0), or supervariables (runs of consecutive rows with the
 *  same column sequence as stored) cut into pieces of `block` rows and merged greedily in row
 *  order while the merged block stays within `block` rows (agglomerate 1). rp (m + 1, relative),
 *  ci: the problem's pattern; bp receives nb + 1 block starts (m + 1 entries suffice); returns
 *  nb. */
int32_t gs_batch_bj_partition(int32_t m, const int32_t *rp, const gs_idx_t *ci, int block,
                              int agglomerate, int32_t *bp);

/** Where a part lives: >= 0 an offset (doubles) in the global workspace, < 0 shared memory at
 *  offset -1 - v. */
#define GS_BATCH_SHARED(off) (-1 - (int64_t)(off))

/** One problem's storage and preconditioner index (the same struct on host and device). */
typedef struct gs_batch_slot {
  int64_t vec, pc, small; /* its three parts (GS_BATCH_SHARED or a workspace offset) */
  int64_t idx;            /* first int32 of its preconditioner index arrays in the plan's idx */
  int32_t nb;             /* block-Jacobi: blocks; ILU(0): entries of the merged pattern */
  int32_t nlev_l, nlev_u; /* ILU(0): levels of the lower and the upper triangle */
  int32_t restart;        /* GMRES: min(m, n), at least 1 */
} gs_batch_slot_t;

/** What the plan and the body need to know of the solve. */
typedef struct gs_batch_solve_launch {
  int method;          /* GS_SOLVER_CG, GS_SOLVER_BICGSTAB or GS_SOLVER_GMRES */
  int precond;         /* GS_BATCH_PRECOND_* */
  double rtol, atol;
  int maxit, x0_given;
  int restart;         /* GMRES: the option (each problem min(restart, n)) */
  int block, agglomerate; /* block-Jacobi */
  int threads;         /* per block (a multiple of 32; the host body: 32) */
  int setup_only;      /* the preconditioner's setup alone, its data left in the workspace
                          (gs_batch_pc_data) */
  double *d_work;      /* the global workspace */
  const gs_batch_slot_t *d_slot;
  const int32_t *d_idx;
  const int32_t *d_order; /* block b solves problem d_order[b] (NULL: problem b); its results
                             and x land at the problem's own index either way */
} gs_batch_solve_launch_t;

/** Vectors of a problem of n rows (x first; for GMRES the basis v_0 .. v_m follows x). */
static inline GS_BATCH_HD int64_t gs_batch_vec_doubles(int method, int precond, int32_t n,
                                                        int restart)
{
  const int pc = precond != GS_BATCH_PRECOND_NONE;
  const int64_t k = method == GS_SOLVER_CG         ? 4 + pc         /* x r p q [z]          */
                    : method == GS_SOLVER_BICGSTAB ? 6 + 2 * pc     /* x r r~ p v t [p^ s^] */
                                                   : (int64_t)restart + 2 + pc; /* x V [z]  */
  return k * n;
}

/** GMRES's small arrays for restart m and nw warps: R (packed upper triangle, m (m + 1) / 2),
 *  cs, sn (m each), g (m + 1), y (m), h, h2 (m + 1 each), the warps' partial dot products
 *  (nw (m + 1)) and 8 broadcast scalars. */
static inline GS_BATCH_HD int64_t gs_batch_gmres_small(int m, int nw)
{
  const int64_t M = m;
  return M * (M + 1) / 2 + 2 * M + (M + 1) + M + 2 * (M + 1) + (int64_t)nw * (M + 1) + 8;
}

/** ILU(0)'s index arrays of a problem of m rows and nnz stored entries, u entries in its merged
 *  (sorted, duplicates summed) pattern, nl and nu levels: offsets from the problem's idx. */
typedef struct gs_batch_ilu_idx {
  int64_t lrp;   /* m + 1 row pointers of the merged pattern */
  int64_t lci;   /* u columns, sorted in each row */
  int64_t ldiag; /* m: the diagonal's place in lci, -1 when missing */
  int64_t src;   /* nnz: the merged entry each stored entry adds into */
  int64_t lptr;  /* nl + 1: rows of the lower solve's levels in lrows */
  int64_t lrows; /* m */
  int64_t uptr;  /* nu + 1 */
  int64_t urows; /* m */
  int64_t end;
} gs_batch_ilu_idx_t;
static inline GS_BATCH_HD gs_batch_ilu_idx_t gs_batch_ilu_layout(int32_t m, int32_t nnz,
                                                                 int32_t u, int32_t nl,
                                                                 int32_t nu)
{
  gs_batch_ilu_idx_t L;
  L.lrp = 0;
  L.lci = L.lrp + (int64_t)m + 1;
  L.ldiag = L.lci + u;
  L.src = L.ldiag + m;
  L.lptr = L.src + nnz;
  L.lrows = L.lptr + (int64_t)nl + 1;
  L.uptr = L.lrows + m;
  L.urows = L.uptr + (int64_t)nu + 1;
  L.end = L.urows + m;
  return L;
}

/** The storage plan of a solve (pure host: gs_batch_plan_build). */
typedef struct gs_batch_plan {
  gs_batch_slot_t *slot; /* count */
  int32_t *idx;          /* preconditioner index arrays (block-Jacobi: (first row, offset of
                            its factors) per block and one closing pair; ILU(0): as
                            gs_batch_ilu_layout) */
  int64_t nidx;
  int64_t work;          /* global workspace, doubles */
  int64_t smem;          /* shared memory a block needs, doubles (the launch's size) */
  int shared_problems;   /* problems whose vectors are in shared memory */
  int32_t *order;        /* count: the blocks' order (gs_batch_solve_order) */
} gs_batch_plan_t;

/** Shared memory (doubles) a block of the solver may take: 46 KiB, below the 48 KiB a launch
 *  gets without opting in, leaving room for the reduction scratch. */
#define GS_BATCH_SOLVE_SMEM_DOUBLES ((int64_t)(46 * 1024 / 8))

/** The order in which the solver's blocks take the problems: decreasing nnz, ties by more rows,
 *  then by index (a permutation of 0 .. count - 1 in order[], count entries). Largest first: the
 *  blocks of the last wave then hold small problems, not a large one running alone at the end.
 *  GS_ERR_HOST_MEMORY. */
gs_status_t gs_batch_solve_order(const gs_batch_host_t *H, int32_t *order);

/** The solver's benchmark knobs (docs/cli.md "batch"), each -1 when unset or empty (the
 *  default): GS_BATCH_ORDER 0 or 1 (1, the default: largest first, gs_batch_solve_order; 0: block
 *  b takes problem b), GS_BATCH_SMEM_KB 0 .. 46 (the shared-memory budget of a block, KiB;
 *  default gs_batch_kernel_smem_cap's), GS_BATCH_THREADS 64, 128 or 256 (threads a block;
 *  default from the mean rows). gs_batch_knobs_parse takes the three strings (NULL: unset);
 *  another value is GS_ERR_INVALID_ARG naming the variable. */
typedef struct gs_batch_knobs {
  int order, smem_kb, threads;
} gs_batch_knobs_t;
#define GS_BATCH_SMEM_KB_MAX 46
gs_status_t gs_batch_knobs_parse(const char *order, const char *smem_kb, const char *threads,
                                 gs_batch_knobs_t *k);

/** Plans the solve L over H with `cap` doubles of shared memory a block: each problem's vectors
 *  in shared memory when they fit, then GMRES's small arrays and the preconditioner's data in
 *  what is left, the rest in the workspace (pc_global: the preconditioner's data always there).
 *  Builds the preconditioner's index arrays (a shared pattern once). GS_ERR_HOST_MEMORY. */
gs_status_t gs_batch_plan_build(const gs_batch_host_t *H, const gs_batch_solve_launch_t *L,
                                int64_t cap, int pc_global, gs_batch_plan_t *P);
void gs_batch_plan_free(gs_batch_plan_t *P);
/** Doubles of problem i's preconditioner data under plan P. */
int64_t gs_batch_plan_pc_doubles(const gs_batch_plan_t *P, const gs_batch_host_t *H, int precond,
                                 int i);
/* The preconditioner data of every problem, from the workspace `work` laid out by P after a
 * setup-only run, into malloc'd arrays (gs_batch_pc_data, gs_batch_host_pc_data): *data the
 * problems' data one after the other, *off their N + 1 offsets into it, *bad each problem's
 * refused row (res[i].bad_row). On failure nothing is returned. */
gs_status_t gs_batch_pc_extract(const gs_batch_plan_t *P, const gs_batch_host_t *H, int precond,
                                const double *work, const gs_batch_result_t *res, double **data,
                                int64_t **off, int **bad);

/** Checks opts and fills the launch fields they set (not the pointers or threads). */
gs_status_t gs_batch_solve_check_opts(const gs_batch_solve_opts_t *o,
                                      gs_batch_solve_launch_t *L);

/** The default shared-memory budget (doubles) of L's kernel over B's count problems: the largest
 *  of 46, 45, ... 1 KiB at which an SM still holds as many blocks as it would with none, or as
 *  the batch fills (ceil(count / SMs)) when that is fewer. Shared memory is then never what
 *  keeps blocks the batch has from running; a small batch keeps the full 46 KiB. */
gs_status_t gs_batch_kernel_smem_cap(gs_batch_t *B, const gs_batch_solve_launch_t *L,
                                     int64_t *cap);

/** The device solve (batch_solve_kernels.cu): one launch of `count` blocks, `smem` bytes of
 *  dynamic shared memory. Results per problem in d_res. */
gs_status_t gs_batch_kernel_solve(gs_batch_t *B, const gs_batch_solve_launch_t *L, size_t smem,
                                  const double *d_b, double *d_x, gs_batch_result_t *d_res);

/** The same solve on the host (batch_solve_host.c): the kernel's body with one thread per
 *  problem, the plan and the shared/global placement of the device. b, x host arrays in the
 *  batch's layout; stats (count entries) required. */
gs_status_t gs_batch_host_solve(const gs_batch_host_t *H, const gs_batch_solve_opts_t *o,
                                const double *b, double *x, gs_batch_stats_t *stats);

/** Test hook: the preconditioner's setup alone for every problem of B (device) or H (host), its
 *  data copied to *data (malloc'd; problem i's at (*off)[i] .. (*off)[i + 1], doubles: Jacobi
 *  1 / a_ii; block-Jacobi per block its LU row-major then its s pivots; ILU(0) the factors on
 *  the merged pattern, L below the diagonal (unit), U on and above) and (*bad)[i] the row it
 *  failed at or -1 (*off and *bad malloc'd, count + 1 and count entries). */
gs_status_t gs_batch_pc_data(gs_batch_t *B, const gs_batch_solve_opts_t *o, double **data,
                             int64_t **off, int **bad);
gs_status_t gs_batch_host_pc_data(const gs_batch_host_t *H, const gs_batch_solve_opts_t *o,
                                  double **data, int64_t **off, int **bad);

#ifdef __cplusplus
}
#endif
#endif
