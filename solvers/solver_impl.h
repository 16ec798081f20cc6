/* solvers/solver_impl.h: what the Krylov methods share (not installed).
 *
 * Adding a method: write solvers/NAME.c with
 *   size_t gs_NAME_work(const gs_solver_t *s, size_t *host_doubles)   device vectors it needs
 *   gs_status_t gs_NAME_solve(gs_solver_t *s, double *d_x, double *d_work, double *h_work)
 * and list it in solvers/solver.c's method table with its GS_METHOD_* flags (square only, uses
 * A^T, least squares, applies M^-T). solver.c validates the arguments against the flags,
 * allocates the workspace once (d_work: that many vectors of s->ld doubles; h_work: pinned host
 * doubles), computes ||b|| (and ||A^T b|| for least squares), runs the method, recomputes the
 * true residual and fills the statistics.
 * Lengths: A is s->m x s->n; x has s->n entries, b and r have s->m (equal for square methods);
 * every work vector has room for either (s->ld >= both).
 * A method's loop (PETSc bcgs.c, CUSP cg.inl):
 *   - calls gs_solver_spmv / gs_solver_precond (counted and timed), cuBLAS in device pointer
 *     mode (scalars land in s->d_s, constants s->one/zero/minus_one) and the fused kernels of
 *     vec_kernels.cu, which read their scalars from s->d_s: no host synchronization;
 *   - then gs_solver_fetch (one device-to-host copy of the scalar block, one stream sync) and
 *     gs_solver_check, which decides whether to stop and calls the monitor;
 *   - sets s->stats->reason before it returns. It never prints and never allocates.
 * Kernels that meet a breakdown (p^T A p <= 0, rho = 0, NaN, ...) refuse the step, leave x and
 * r as they were and record a sticky halt code in the scalar block; the host reads it at the
 * next check, so that checking every k iterations stays safe. */
#ifndef GS_SOLVER_IMPL_H
#define GS_SOLVER_IMPL_H

#include "core/context_impl.h"
#include "gpusolve/operator.h"
#include "gpusolve/solver.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Halt codes written by the kernels (gs_dscalars_t.halt). */
enum {
  GS_HALT_NONE = 0,
  GS_HALT_INDEFINITE = 1,    /* CG: p^T A p <= 0 */
  GS_HALT_INDEFINITE_PC = 2, /* CG: r^T z < 0 (indefinite preconditioner) */
  GS_HALT_BREAKDOWN = 3,     /* a zero divisor: rho, r~^T v, t^T t, omega */
  GS_HALT_NANINF = 4,        /* a non-finite scalar */
  GS_HALT_HALFSTEP = 5,      /* BiCGSTAB converged at the half step (||s|| <= tol): not a failure */
  GS_HALT_LSQR = 6,          /* LSQR's stopping tests ended it: halt_what is its istop (1, 2, 4,
                                5, 6, or GS_LSQR_ISTOP_ATOL); halt_done counts the iteration
                                that met the test, whose x update is taken */
  GS_HALT_CONVERGED = 7,     /* the device's test (gs_kernel_iteration_end): ||r|| <= tol after
                                iteration halt_done; not a failure */
  GS_HALT_RELIABLE = 8       /* CG with reliable updates (S->rel_delta > 0): the recurrence
                                ||r|| of iteration halt_done fell below rel_delta * rel_max, or
                                met tol; x and r are updated, p is not. Not a stop: the host
                                replaces r by b - A x and goes on (gs_cg_replace) */
};

/* `done` argument of the kernels below meaning "the iterations the device counted" (S->iter):
 * what a captured iteration body passes, as it cannot carry the host's iteration number. */
#define GS_DONE_DEVICE (-1)

/* LSQR's istop values (Paige and Saunders 1982, SciPy's lsqr), and ours for ||r|| <= atol. */
enum {
  GS_LSQR_ISTOP_TEST1 = 1,     /* ||r|| <= btol ||b|| + atol ||A|| ||x||: a compatible system */
  GS_LSQR_ISTOP_TEST2 = 2,     /* ||A^T r|| <= atol ||A|| ||r||: a least-squares solution */
  GS_LSQR_ISTOP_TEST1_EPS = 4, /* test 1 with eps for the tolerances */
  GS_LSQR_ISTOP_TEST2_EPS = 5, /* test 2 with eps */
  GS_LSQR_ISTOP_COND_EPS = 6,  /* cond(A) estimate >= 1 / eps */
  GS_LSQR_ISTOP_ATOL = 8       /* ours: ||r|| <= opts.atol */
};

/* Which scalar a kernel refused (gs_dscalars_t.halt_what), for the stop reason's detail. */
enum {
  GS_WHAT_NONE = 0,
  GS_WHAT_PQ,    /* CG: p^T A p */
  GS_WHAT_ALPHA, /* a step length rho / (...) */
  GS_WHAT_RHO,   /* CG: r^T z; BiCGSTAB: r~^T r */
  GS_WHAT_BETA,  /* a direction update ratio */
  GS_WHAT_RV,    /* BiCGSTAB: r~^T v */
  GS_WHAT_TT,    /* BiCGSTAB: t^T t */
  GS_WHAT_OMEGA, /* BiCGSTAB: omega = t^T s / t^T t */
  GS_WHAT_PTQ,   /* BiCG: p~^T A p */
  GS_WHAT_WW,    /* CGNR: ||A p||^2 */
  GS_WHAT_LSQR   /* LSQR: a rotation or step that is not finite */
};

/* LSQR's scalars (Paige and Saunders 1982, with damp = 0): the bidiagonalization's alfa and
 * beta, the plane rotation's state and the estimates of ||A||, cond(A), ||x||, ||r||, ||A^T r||.
 * Only lsqr_step_kernel (one thread) writes them, except the norms the reductions deliver. */
typedef struct gs_lsqr_scalars {
  double alfa, beta;          /* alpha_k = ||V||, beta_k = ||U||: V = alfa v, U = beta u */
  double alfa_new, beta_new;  /* the reductions' results of this iteration, taken by the step */
  double wnorm;               /* ||w|| before the step (for ||d_k|| = ||w|| / rho) */
  double rhobar, phibar;      /* the rotation's state */
  double t1, t2;              /* this step: x += t1 w, w = v + t2 w */
  double anorm, ddnorm, acond;
  double xxnorm, z, cs2, sn2, xnorm; /* the ||x|| estimate */
  double rnorm, arnorm;       /* ||r|| = |phibar|, ||A^T r|| = alfa |tau| */
} gs_lsqr_scalars_t;

/* Pipelined CG's scalars (Ghysels and Vanroose 2014, Algorithm 4; solvers/pipecg.c). gamma,
 * delta, rr are written together by one reduction (three adjacent doubles: one all-reduce of 3
 * values through a multi-GPU vector table); pipecg_step_kernel (one thread) alone writes the
 * rest. */
typedef struct gs_pipecg_scalars {
  double gamma, delta, rr; /* r^T u, w^T u, r^T r of the current vectors (u = M^-1 r, w = A u) */
  double gamma_old;        /* gamma of the step last taken: beta = gamma / gamma_old */
  double alpha, beta;      /* the step the next vector update takes */
} gs_pipecg_scalars_t;

/* The convergence tolerance max(rtol * ||ref||, atol), one expression for the host (solver.c)
 * and the device (start_tol_kernel, the persistent kernels' start), so that all form the same
 * value. */
#define GS_SOLVE_TOL(rtol, refnorm, atol) fmax((rtol) * (refnorm), (atol))

/* The device scalars of one solve, copied to the host in one piece at each check. */
typedef struct gs_dscalars {
  double rnorm;    /* ||r|| of the current iterate */
  double bnorm;    /* ||b|| */
  double rho[2];   /* r^T z (CG) or r~^T r (BiCGSTAB), alternating slots: iteration it writes
                      rho[it & 1] and reads rho[(it - 1) & 1] */
  double pq;       /* CG: p^T A p */
  double rv;       /* BiCGSTAB: r~^T v */
  double ts, tt;   /* BiCGSTAB: t^T s, t^T t */
  double alpha;    /* step lengths of the last accepted step */
  double omega;
  double res;      /* ||b - Ax|| (recurrence) where the monitored norm is ||A^T r|| (CGNR), and
                      the recomputed one at the end of a least-squares solve */
  double arnorm;   /* the recomputed ||A^T (b - Ax)|| at the end of a least-squares solve, and
                      ||A^T b|| before it starts */
  double xnorm;    /* ||x|| at the end of an LSQR solve */
  gs_lsqr_scalars_t ls;
  gs_pipecg_scalars_t pipe;
  double rel_delta; /* CG's reliable updates (gs_solver_use_reliable): the threshold delta of
                       the device's test, 0 when off */
  double rel_max;   /* the largest recurrence ||r|| since the last reliable update (or the
                       start), raised by the direction kernels */
  double rel_rho;   /* rho[c] of the iteration that halted for a reliable update, kept there:
                       the iterations a graph or batch launched after the halt still run their
                       cuBLAS reductions (which do not test the halt), and the next one's
                       r^T z lands in rho[c]; gs_cg_replace restores it for beta */
  double one, zero, minus_one; /* constants for cuBLAS in device pointer mode */
  /* halt, halt_what, halt_done, true_done stay adjacent: a restart pass clears them in one
   * memset */
  int halt;        /* GS_HALT_*: sticky, first writer wins in effect (all writers agree) */
  int halt_what;   /* GS_WHAT_*: the scalar that caused it */
  int halt_done;   /* iterations completed when the halt happened */
  int true_done;   /* 1: true_rnorm is ||b - Ax|| of the x the pass returns (the persistent
                      kernel's end, gs_persist_whole) */
  int iter;        /* iterations of this pass completed on the device (gs_kernel_iteration_end) */
  int products;    /* products and preconditioner applications run inside the persistent */
  int precs;       /* iteration kernels (solvers/persist_kernels.cu), summed over the solve */
  double tol;      /* the convergence tolerance s->tol, for the device-side tests */
  double rnorm0;   /* ||b - A x0|| of the pass, where the persistent kernel forms it */
  double true_rnorm; /* see true_done */
} gs_dscalars_t;

/* Scratch of the fused single-pass reductions (vec_kernels.cu, pipecg_kernels.cu): a partial sum
 * per block and the arrival counter (0 between kernels). The solver holds GS_RED_SLOTS of them:
 * a kernel summing k values in one pass uses the first k (pipelined CG's update: 3). */
#define GS_RED_BLOCKS 1024
#define GS_RED_SLOTS 3
typedef struct gs_red {
  double part[GS_RED_BLOCKS];
  unsigned count;
} gs_red_t;

/* ---- persistent iterations (solvers/persist_kernels.cu) ----------------------------------------
 * opts.persistent: CG and BiCGSTAB run all the iterations between two host checks as one
 * cooperative kernel (grid barriers between the phases), with a CSR product of their own on the
 * matrix's shared device CSR and Jacobi's scaling folded in. Set up by gs_solver_setup when the
 * solve can take it (single-GPU vector table, an operator that is a double-precision product of
 * a matrix of at most 2^31-1 entries, no preconditioner or Jacobi, a device with cooperative
 * launch). */
#define GS_PERSIST_SLOTS 6        /* partial-sum slots: BiCGSTAB's 6 values an iteration */
#define GS_PERSIST_MAX_BLOCKS 1024
#define GS_PERSIST_PER_SM 4       /* blocks an SM at most (fewer blocks make cheaper barriers, more
                                     hide more latency): run 64 on the H100, 2 / 4 / 8 a SM, us
                                     an iteration: lap27 40^3 CG 29.0 / 24.1 / 24.3, BiCGSTAB
                                     57.5 / 46.8 / 46.9; bcsstk16 BiCGSTAB 22.9 / 22.0 / 22.0;
                                     Dubcova1 CG 12.5 / 13.5 / 13.4 (bench/persist_bench) */
/* auto (GS_PERSISTENT_AUTO) takes it up to this many entries: above, a product of the backends
 * costs more than the launches the kernel saves (bench/solve_floor.py --persistent) */
#define GS_PERSIST_AUTO_NNZ (2L << 20)
/* ... and rows of at most this many steps of the kernel's product (row length / threads a row):
 * see persist_why_not in solver.c */
#define GS_PERSIST_AUTO_ROW_STEPS 32
/* A row of at least GS_PERSIST_LONG_STEPS * tpr entries is multiplied by a whole block (256
 * threads) instead of its tpr threads (persist_kernels.cu's spmv_rows) */
#define GS_PERSIST_LONG_STEPS 16
#define GS_PERSIST_THREADS 256 /* threads a block of the persistent kernels (GS_RED_THREADS) */
typedef struct gs_persist {
  int use;                  /* the iterations of this setup run persistent */
  int tpr;                  /* threads a row of the product (gs_persist_tpr) */
  unsigned blocks;          /* the cooperative grid */
  gs_idx_t n;
  const int32_t *row_ptr;   /* the shared device CSR (borrowed from the matrix) */
  const gs_idx_t *col;
  const gs_val_t *val;
  const double *dinv;       /* Jacobi's inverse diagonal (borrowed), or NULL */
  double *part;             /* GS_PERSIST_SLOTS x blocks partial sums (owned) */
  int32_t *long_rows;       /* rows of at least long_min entries (owned), a block each */
  int nlong;
  int32_t long_min;         /* gs_persist_long_min(tpr), INT32_MAX without long rows */
  int products_seen, precs_seen; /* the scalar block's counters at the last fetch */
  int start;                /* the next launch begins a pass (gs_persist_whole): it forms the
                               method's start itself */
} gs_persist_t;

/** Whether the persistent kernel runs the whole pass (s->persist.use, no monitor, which must see
 *  iteration 0 on the host): its first launch forms ||b||, tol, r = b - A x0 (x = 0 when no
 *  guess is given) and the method's other starting vectors and scalars, with the start's checks
 *  as halts of iteration 0, and a launch that converges ends with ||b - Ax|| of its x
 *  (true_done). A short solve is then one launch and one host round trip, not a start, a
 *  launch and an end of their own (issue 14). */
int gs_persist_whole(const gs_solver_t *s);

/** Threads a row for rows of mean length mean_row: a power of two from 2 to 32, about two
 *  entries a thread. */
int gs_persist_tpr(double mean_row);
/** Blocks of the cooperative grid: no more than n * tpr threads need, per_sm a multiprocessor,
 *  GS_PERSIST_MAX_BLOCKS; at least 1. */
unsigned gs_persist_grid(gs_idx_t n, int tpr, int sm_count, int per_sm);
struct gs_dcsr;
/** Plans s->persist for device CSR A and Jacobi's dinv (NULL: none) and allocates its partials;
 *  sets use = 1, or leaves it 0 with *why saying what the device or matrix lacks. */
gs_status_t gs_persist_plan(gs_solver_t *s, const struct gs_dcsr *A, const gs_csr_t *H,
                            const double *dinv, const char **why);
/** Rows of at least this many entries go to a block each in the persistent product (a row of
 *  L < it entries takes L / tpr steps of its tpr threads): GS_PERSIST_LONG_STEPS * tpr. */
int32_t gs_persist_long_min(int tpr);
/** CG's iterations it .. it + count - 1 as one launch (stops early on a halt or convergence,
 *  as the kernel-by-kernel loop does). z is used with Jacobi only. */
gs_status_t gs_persist_cg(gs_solver_t *s, int it, int count, double *x, double *r, double *p,
                          double *q, double *z);
/** BiCGSTAB's iterations it .. it + count - 1 as one launch; rho = r~^T r of iteration it must
 *  be in S->rho[it & 1]. phat and shat are used with Jacobi only. */
gs_status_t gs_persist_bicgstab(gs_solver_t *s, int it, int count, double *x, double *r,
                                double *rhat, double *p, double *v, double *t, double *phat,
                                double *shat);

/* ---- the vector-ops seam ---------------------------------------------------------------------
 * Methods do their vector work through this table, never through cuBLAS directly (hypre's Krylov
 * function table, PETSc's Vec ops). Reductions write their result to device memory (the scalar
 * block), so a method never waits on one; the elementwise ops and the fused updates touch the
 * local n entries only. The single-GPU table (solvers/vecops.c) is cuBLAS plus the fused kernels
 * of vec_kernels.cu; a multi-GPU table adds an all-reduce after each reduction, a mixed-precision
 * one other value types. Vectors have `len` entries (s->n for x-like vectors, s->m for b-like
 * ones: they differ for rectangular A); mdot and gemv work on s->n (GMRES, square).
 * Slots after gemv are optional (NULL: the method falls back to the required ones). */
typedef struct gs_vecops {
  const char *name;
  /* reductions (communicating): *d_out = x^T y, ||x||_2, h[0..k) = V^T w */
  gs_status_t (*dot)(gs_solver_t *s, gs_idx_t len, const double *x, const double *y,
                     double *d_out);
  gs_status_t (*nrm2)(gs_solver_t *s, gs_idx_t len, const double *x, double *d_out);
  gs_status_t (*mdot)(gs_solver_t *s, int k, const double *V, size_t ld, const double *w,
                      double *d_h);
  /* local */
  gs_status_t (*copy)(gs_solver_t *s, gs_idx_t len, const double *x, double *y); /* y = x */
  gs_status_t (*zero)(gs_solver_t *s, gs_idx_t len, double *x);                  /* x = 0 */
  /* x = alpha x (alpha from the host) */
  gs_status_t (*scale)(gs_solver_t *s, gs_idx_t len, double alpha, double *x);
  /* y[0..len) += (*d_alpha) x (device scalar) */
  gs_status_t (*axpy)(gs_solver_t *s, size_t len, const double *d_alpha, const double *x,
                      double *y);
  /* w = (*d_alpha) V h + (*d_beta) w, V of k columns with leading dimension ld */
  gs_status_t (*gemv)(gs_solver_t *s, int k, const double *d_alpha, const double *V, size_t ld,
                      const double *h, const double *d_beta, double *w);
  /* optional: d_out[j] = x[j]^T y[j] for j < k (1 <= k <= GS_RED_SLOTS) as one reduction: one
   * pass where the vectors repeat, one all-reduce of k values on several GPUs (pipelined CG's
   * single reduction phase). NULL: k calls of dot. */
  gs_status_t (*dots)(gs_solver_t *s, gs_idx_t len, int k, const double *const *x,
                      const double *const *y, double *d_out);
} gs_vecops_t;

/** Makes the next gs_solver_setup of s use table `vec` (NULL: the context's own) with `user`
 *  (s->vec_user), for vectors that are one part of a system of order n_global (0: not
 *  distributed). The distributed solver (multigpu/dist_solve.c) sets its reducing table so. */
void gs_solver_use_vecops(gs_solver_t *s, const gs_vecops_t *vec, void *user, gs_idx_t n_global);

/** Makes s a mixed-precision CG with reliable updates (gs_solve_refine; Sleijpen and van der
 *  Vorst 1996): the iterations multiply with the operator of the next gs_solver_setup (the mixed
 *  product), and every residual b - A x (the start, each reliable update, the end) with A_res, a
 *  double product of the same matrix (borrowed; it must outlive the solves). delta in (0, 1) is
 *  the update threshold, max_updates >= 1 a limit on the updates of a solve; A_res NULL or delta
 *  0 turns it off. The next setup refuses it for another method than CG (GS_ERR_UNSUPPORTED)
 *  and runs no persistent iterations (they multiply with a product of their own). No checks
 *  here: gs_solve_refine validates. */
void gs_solver_use_reliable(gs_solver_t *s, gs_operator_t *A_res, double delta, int max_updates);
/** After a check that found the RELIABLE halt (in gs_solver_iterate_many): replaces r by
 *  b - A_res x and goes on, or decides to stop on that true residual (*reason); *next_it is the
 *  iteration to run next. `user` is the iteration body's (CG's vectors). solvers/cg.c. */
gs_status_t gs_cg_replace(gs_solver_t *s, void *user, int window, int *next_it,
                          gs_reason_t *reason);

/** The single-GPU table: cuBLAS in device pointer mode on the context's handle. */
extern const gs_vecops_t gs_vecops_cuda;
/** The table a solver set up on ctx uses: gs_vecops_cuda, or under the test hook
 *  gs_test_solver_vecops (core/testhooks.h) a copy of it at another address, with or without
 *  its optional slots, which sends the methods down the path a multi-GPU table takes. */
const gs_vecops_t *gs_vecops_for(const gs_context_t *ctx);

/* The solver object (gs_solver_t of include/gpusolve/solver.h): made once by setup (work
 * vectors, pinned scalars, events, cuBLAS mode), used by any number of solves. */
/* check points the staged selection's window keeps (solver.c auto_revise) */
#define GS_REVISE_HISTORY 16
/* The residual norms at the recent checks of a pass, from which a forecast of the iterations
 * left takes the recent rate (the pass's start is kept, the oldest others dropped). */
typedef struct gs_rate_hist {
  long it[GS_REVISE_HISTORY];
  double r[GS_REVISE_HISTORY];
  int n;
} gs_rate_hist_t;
/* A pass that ends for the escalation to a preconditioner (opts.precond_auto): internal, never
 * returned (run() sets the preconditioner up and starts the next pass). */
#define GS_REASON_ESCALATE ((gs_reason_t)-1000)
struct gs_solver {
  gs_context_t *ctx;
  gs_solve_opts_t given;    /* as given to gs_solver_create */
  /* ---- set by gs_solver_setup ---- */
  int ready;                /* setup done */
  gs_method_t method;       /* resolved: never AUTO */
  unsigned flags;           /* gs_method_flags(method) */
  gs_operator_t *A;         /* borrowed */
  gs_precond_t *M;          /* borrowed; NULL for none (or identity): methods then skip it */
  const gs_vecops_t *vec;
  const gs_vecops_t *vec_given; /* gs_solver_use_vecops: the table setup takes (NULL: its own) */
  void *vec_user;           /* what that table needs (a distributed rank) */
  gs_idx_t n_global;        /* order of the whole system when the vectors are one rank's part
                               (0: n): GMRES's restart is capped at it */
  gs_idx_t m, n;            /* A is m x n: b and r have m entries, x has n */
  size_t ld;                /* stride of the work vectors (max(m, n) rounded up to 32 doubles) */
  size_t nvec, host_doubles;
  double *d_work, *h_work;  /* nvec vectors of ld doubles; pinned host doubles */
  gs_dscalars_t *d_s;       /* device scalar block */
  gs_red_t *d_red;          /* GS_RED_SLOTS: the fused reductions' scratch (single-GPU table) */
  gs_dscalars_t *h_s;       /* its pinned host mirror, valid after gs_solver_fetch */
  const double *one, *zero, *minus_one; /* device pointers into d_s */
  cudaEvent_t total[2];     /* the solve on the GPU timeline */
  /* CUDA event pairs around SpMV and preconditioner calls, summed at each fetch */
  cudaEvent_t *events;      /* 2 * ev_cap: a start and an end per timed call */
  unsigned char *ev_kind;   /* 0 SpMV, 1 preconditioner, 2 the reliable updates' A_res */
  int ev_cap, ev_used, ev_made;
  /* ---- per solve ---- */
  gs_solve_opts_t opts;     /* of the pass running: method resolved, restart <= n; maxit and
                               x0_given change on restarts from the true residual */
  const double *d_b;
  double bnorm, tol;        /* ||b|| and max(rtol ||b||, atol), known after the first fetch;
                               least squares: tol = max(rtol ||A^T b||, atol) (CGNR's test on
                               the monitored ||A^T r||; LSQR sets atol, its own tests decide) */
  double refnorm;           /* what rtol scales for the monitored norm: ||b||, or ||A^T b|| */
  double tol_rel;           /* the rtol part of tol (rtol * refnorm; LSQR 0): a norm at or below
                               it converged by RTOL, above it by ATOL */
  /* The deferred start (square methods on one GPU): ||b|| and the device's tol are computed
   * before the method runs, and the host learns them at the method's first fetch, which then
   * sets bnorm, tol and the reason b itself imposes (start_reason: ||b|| not finite, or b = 0,
   * where x = 0 is the answer), returned by the method's first gs_solver_check. */
  int start_pending;
  gs_reason_t start_reason;
  const char *start_detail;
  gs_solve_stats_t *stats;
  /* CUDA Graphs of the iteration body (gs_solver_iterate): one per parity of the iteration
   * number (the methods alternate scalar slots), captured on first use for one x; the calls
   * they hold are counted at each replay. */
  cudaGraphExec_t graph[2];
  const double *graph_x;    /* the x the graphs were captured for */
  long graph_spmv[2], graph_precond[2];
  int graph_off;            /* capture failed or is not allowed: launch one by one */
  const char *graph_note;   /* why graphs are off, or "" */
  int capturing;            /* a body is being captured: no event timing */
  long graph_runs;          /* iterations replayed from a graph in this solve */
  long eager_spmv, eager_precond; /* timed calls launched one by one in this solve */
  gs_persist_t persist;     /* persistent iterations (set up by gs_solver_setup) */
  const char *persist_note; /* why they are off when opts.persistent asked for them, or "" */
  /* stagnation window (CG, BiCGSTAB) */
  double best;
  int best_it;
  int it_base;              /* iterations of earlier passes (restarts from the true residual) */
  int fb_base;              /* opts.fallback: the failed method's iterations, which GMRES's
                               solve counts on from (0 outside a fallback) */
  int dtol_on;              /* this solve stops a diverging BiCGSTAB (GS_DIVERGED_DTOL) */
  /* the staged "auto" selection's window: the residual norms at the recent checks of the pass,
   * from which the forecast of the products left takes the recent rate */
  gs_rate_hist_t rev;
  /* opts.precond_auto: CG without a preconditioner escalates to AMG at a check (esc_due) */
  struct {
    int enabled;            /* setup: this operator and method may escalate */
    const char *why;        /* setup: why not, when asked ("" otherwise) */
    gs_precond_t *M;        /* owned: the preconditioner escalated to, kept for later solves */
    gs_rate_hist_t hist;    /* the pass's check points, for the forecast */
    double t_prev;          /* wall clock at the last check */
    long it_prev;           /* its iteration */
    double t_it;            /* the shortest time an iteration measured between two checks */
    int agree;              /* consecutive checks whose forecast said escalate (or drop) */
    double left_s, cost_s;  /* the last forecast (for the stats) */
    int limit;              /* the last check forecast the iteration limit (GS_ESC_LIMIT) */
    /* after the escalation, the watch on AMG's pass: at its checks, the time it forecasts
     * left against the time left without it, scaled from the escalation's forecast (left_s
     * from the residual r_esc to the tolerance) to the current residual; AMG is dropped
     * (a new pass without a preconditioner) when it forecasts GS_ESC_DROP times more */
    int watch;              /* 1: escalated, watching; 0: not (or dropped: no more changes) */
    int drop;               /* the pass ends to drop AMG (escalate() reads it) */
    double r_esc;           /* ||r|| at the escalation */
  } esc;
  /* Reliable updates (gs_solver_use_reliable; CG only): the iteration multiplies with A (a
   * mixed product), the residuals b - A x with A_res (a double product of the same matrix). */
  struct {
    gs_operator_t *A_res;   /* borrowed; NULL: off */
    double delta;           /* the update threshold, in (0, 1); 0: off */
    int max_updates;        /* a limit on the updates of one solve */
    /* per solve (gs_solver_solve resets them) */
    int updates;            /* residual replacements r <- b - A_res x taken */
    int increases;          /* consecutive updates whose ||b - Ax|| exceeded the previous one's */
    double last;            /* ||b - Ax|| at the last update (or the start) */
    long products;          /* products with A_res (counted in stats->spmv_count as well) */
    double seconds;         /* their event time (added to stats->seconds_spmv at the end) */
  } rel;
};

/** The SpMV product behind an operator made by gs_operator_from_spmv, else NULL. */
gs_spmv_t *gs_operator_spmv(const gs_operator_t *A);
/** Takes the caps again from the product (after it changed backend: gs_spmv_take_backend). */
void gs_operator_refresh_caps(gs_operator_t *A);

/* ---- shared steps (solvers/solver.c) ------------------------------------------------------ */

/** y = alpha op(A) x + beta y through the operator, counted and timed. */
gs_status_t gs_solver_apply(gs_solver_t *s, gs_op_t op, double alpha, const double *d_x,
                            double beta, double *d_y);
/** y = alpha A x + beta y (gs_solver_apply with GS_OP_N). */
gs_status_t gs_solver_spmv(gs_solver_t *s, double alpha, const double *d_x, double beta,
                           double *d_y);
/** z = M^-1 r (s->M must not be NULL), counted and timed. */
gs_status_t gs_solver_precond(gs_solver_t *s, const double *d_r, double *d_z);
/** r = b - A x (m entries); with x == NULL (x = 0), r = b. */
gs_status_t gs_solver_residual(gs_solver_t *s, const double *d_x, double *d_r);
/** The start of the two-sided methods (BiCG, BiCGSTAB): r = b - A x0 (x0 = 0 unless given),
 *  ||r|| into the scalar block, the shadow residual r~ = r, one fetch, rnorm0 recorded; returns
 *  the check of iteration 0 in *reason. */
gs_status_t gs_solver_start_shadow(gs_solver_t *s, const double *d_x, double *d_r,
                                   double *d_rt, int window, gs_reason_t *reason);
/** Copies the scalar block to s->h_s, waits for the stream, sums the event timings, and takes
 *  ||b|| and the tolerance on first use. The one host synchronization of an iteration. */
gs_status_t gs_solver_fetch(gs_solver_t *s);
/** Decides after a fetch: calls the monitor with (it, rnorm), then returns the reason to stop
 *  (NaN/Inf, converged, a halt code of h_s, monitor, stagnation when `window` is set, iteration
 *  limit) or GS_REASON_NONE to go on. Records iterations and rnorm in the stats. */
gs_reason_t gs_solver_check(gs_solver_t *s, int it, double rnorm, int window);
/* The work of one solve added to another's stats (products, preconditioner calls, their times,
 * checks, vector bytes), and its graphs and persistent flags with their notes taken: how
 * mixed-refine counts its inner solves and a fallback its failed method. */
void gs_solve_stats_add_work(gs_solve_stats_t *to, const gs_solve_stats_t *from);
/** Clears the halt code (halt, halt_what, halt_done) on the device and in the host mirror, so
 *  that a new pass from the true residual starts unhalted (the code is sticky). */
gs_status_t gs_solver_clear_halt(gs_solver_t *s);
/** The reason of a halt code, and a phrase naming the scalar ("omega = 0"). */
gs_reason_t gs_solver_halt_reason(int halt);
const char *gs_solver_halt_detail(int halt, int what);

/** One iteration of a method, enqueued on the stream: capturable when it calls only the
 *  operator, the preconditioner, the vector table and the kernels of vec_kernels.cu and
 *  pipecg_kernels.cu with GS_DONE_DEVICE and nothing that depends on `it` but its parity (and
 *  it == first_graph_it - 1 or earlier, which never runs from a graph). It ends with
 *  gs_kernel_iteration_end, or a kernel that counts and tests as it does (pipecg_step_kernel). */
typedef gs_status_t (*gs_iteration_fn)(gs_solver_t *s, void *user, int it);
/** Iterations it .. it + count - 1 in one go (a persistent kernel), each ending as the body's. */
typedef gs_status_t (*gs_iterations_fn)(gs_solver_t *s, void *user, int it, int count);

/** The iteration loop of CG, pipelined CG and BiCGSTAB: runs `body` from it = 1 until a check
 *  stops it, with the convergence test on the device (so that a check every k iterations costs
 *  no iterations) and a host check (fetch + gs_solver_check) every opts.check_every iterations,
 *  or, when it is 0 (automatic), every k iterations with k grown from the measured iteration
 *  time to about GS_CHECK_INTERVAL_S of work (at most GS_CHECK_MAX; 1 with a monitor, which sees
 *  every iteration). From iteration first_graph_it on, the body runs as a CUDA Graph when opts.graphs allows and the operator
 *  and preconditioner can be captured; else kernel by kernel. `vec_n` is the method's vector
 *  traffic per iteration in n-vectors of doubles (the count above its loop), for the stats;
 *  d_x the solution vector the body updates (graphs are captured for one x). */
gs_status_t gs_solver_iterate(gs_solver_t *s, gs_iteration_fn body, void *user,
                              const double *d_x, int first_graph_it, double vec_n, int window,
                              gs_reason_t *reason);
/** gs_solver_iterate, but when s->persist.use, the iterations between two checks run as one
 *  call of `many` (no graphs, no per-call timing; the kernel's products and preconditioner
 *  applications are counted from the scalar block at each check). */
gs_status_t gs_solver_iterate_many(gs_solver_t *s, gs_iteration_fn body, gs_iterations_fn many,
                                   void *user, const double *d_x, int first_graph_it,
                                   double vec_n, int window, gs_reason_t *reason);
/* A staged "auto" product (gpusolve/select.h) is revised at the checks from this many
 * iterations on, when the residual's rate says how many products are left. */
#define GS_REVISE_MIN_IT 8

#define GS_CHECK_INTERVAL_S 200e-6
#define GS_CHECK_MAX 64
/* Automatic k of the persistent iterations (they stop on the device; see gs_solver_iterate_many):
 * a host round trip (~10-20 us) every 256 iterations of 8-25 us is under 1% of the time. */
#define GS_PERSIST_CHECK_MAX 256

/* ---- methods ------------------------------------------------------------------------------ */

size_t gs_cg_work(const gs_solver_t *s, size_t *host_doubles);
gs_status_t gs_cg_solve(gs_solver_t *s, double *d_x, double *d_work, double *h_work);
size_t gs_bicgstab_work(const gs_solver_t *s, size_t *host_doubles);
gs_status_t gs_bicgstab_solve(gs_solver_t *s, double *d_x, double *d_work, double *h_work);
size_t gs_gmres_work(const gs_solver_t *s, size_t *host_doubles);
gs_status_t gs_gmres_solve(gs_solver_t *s, double *d_x, double *d_work, double *h_work);
size_t gs_bicg_work(const gs_solver_t *s, size_t *host_doubles);
gs_status_t gs_bicg_solve(gs_solver_t *s, double *d_x, double *d_work, double *h_work);
size_t gs_cgnr_work(const gs_solver_t *s, size_t *host_doubles);
gs_status_t gs_cgnr_solve(gs_solver_t *s, double *d_x, double *d_work, double *h_work);
size_t gs_lsqr_work(const gs_solver_t *s, size_t *host_doubles);
gs_status_t gs_lsqr_solve(gs_solver_t *s, double *d_x, double *d_work, double *h_work);
size_t gs_pipecg_work(const gs_solver_t *s, size_t *host_doubles);
gs_status_t gs_pipecg_solve(gs_solver_t *s, double *d_x, double *d_work, double *h_work);
/** Whether the recomputed ||r|| (h_s->res), ||A^T r|| (h_s->arnorm) and ||x|| (h_s->xnorm) of
 *  LSQR's x meet the test that stopped it within `slack` (the true-residual contract). */
int gs_lsqr_accept(const gs_solver_t *s, double slack);
/** The stop reason of LSQR's istop, and a phrase for the stats' detail. */
gs_reason_t gs_lsqr_reason(int istop);
const char *gs_lsqr_detail(int istop);

/* ---- fused vector kernels (solvers/vec_kernels.cu); all asynchronous on `stream` ------------ */

/* Kernels return immediately when S->halt is set. `it` is the iteration being run; when a
 * kernel halts it records `done` = iterations completed. */

/** CG, after q = A p and pq = p^T q: alpha = rho[c] / pq; x += alpha p; r -= alpha q.
 *  Halts INDEFINITE when pq <= 0, NANINF when alpha is not finite. */
gs_status_t gs_kernel_cg_update(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S, int c,
                                int done, double *x, double *r, const double *p, const double *q);
/** CG through the vector table with a preconditioner, after one reduction put r^T r in S->ts
 *  and r^T z in S->tt: rnorm = sqrt(ts), rho[slot] = tt (one thread). */
gs_status_t gs_kernel_cg_norm_rho(cudaStream_t stream, gs_dscalars_t *S, int slot);
/** CG, after rho[c ^ 1] = r^T z (or, with no preconditioner, rho_new = rnorm^2, stored):
 *  p = z + (rho[c ^ 1] / rho[c]) p. Halts INDEFINITE_PC when rho_new < 0, BREAKDOWN when
 *  rho_new = 0 (the host tests convergence first), NANINF when not finite. (CGNR's loop, which
 *  has no device-side test, relies on every launched iteration being a real one.) With
 *  reliable updates (S->rel_delta > 0) it first halts RELIABLE with done + 1 when ||r|| <= tol
 *  or ||r|| < rel_delta * rel_max, leaving p, and otherwise raises rel_max to ||r||. */
gs_status_t gs_kernel_cg_direction(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S, int c,
                                   int rho_from_rnorm, int done, double *p, const double *z);
/** BiCGSTAB, after rho[c] = r~^T r: p = r (first) or p = r + beta (p - omega v) with
 *  beta = (rho[c] / rho[c ^ 1]) (alpha / omega). Halts BREAKDOWN when rho or omega is 0. */
gs_status_t gs_kernel_bicgstab_p(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S, int c,
                                 int first, int done, double *p, const double *r,
                                 const double *v);
/** BiCGSTAB, after rv = r~^T v: alpha = rho[c] / rv; r -= alpha v (r becomes s).
 *  Halts BREAKDOWN when rv = 0, NANINF when alpha is not finite. */
gs_status_t gs_kernel_bicgstab_s(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S, int c,
                                 int done, double *r, const double *v);
/** BiCGSTAB, after rnorm = ||s||, t = A shat, ts, tt: when ||s|| <= S->tol, x += alpha phat
 *  and halt HALFSTEP with done + 1 iterations (converged); else omega = ts / tt,
 *  x += alpha phat + omega shat, r -= omega t. Halts BREAKDOWN when tt = 0, NANINF when omega
 *  is not finite. */
gs_status_t gs_kernel_bicgstab_xr(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S, int done,
                                  double *x, double *r, const double *phat, const double *shat,
                                  const double *t);
/** BiCGSTAB's fused path on one GPU: gs_kernel_bicgstab_s with ||s|| into S->rnorm in the same
 *  pass (one launch, red: the single-pass scratch). */
gs_status_t gs_kernel_bicgstab_s_norm(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S,
                                      gs_red_t *red, int c, double *r, const double *v);
/** BiCGSTAB's fused path on one GPU: gs_kernel_bicgstab_xr, then in the same pass ||r|| into
 *  S->rnorm and r~^T r into S->rho[c_next] (the next iteration's rho), and, by the last block,
 *  the half-step flag or the count and the convergence test of gs_kernel_iteration_end (red:
 *  two slots of the scratch). Deterministic. */
gs_status_t gs_kernel_bicgstab_xr_end(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S,
                                      gs_red_t *red, int c_next, double *x, double *r,
                                      const double *phat, const double *shat, const double *t,
                                      const double *rhat);
/** BiCG, after rho[c] = r~^T z: p = z, p~ = z~ (first) or p = z + beta p, p~ = z~ + beta p~
 *  with beta = rho[c] / rho[c ^ 1]. Halts BREAKDOWN when rho = 0, NANINF when not finite. */
gs_status_t gs_kernel_bicg_p(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S, int c,
                             int first, int done, double *p, double *pt, const double *z,
                             const double *zt);
/** BiCG, after q = A p, q~ = A^T p~ and pq = p~^T q: alpha = rho[c] / pq; x += alpha p;
 *  r -= alpha q; r~ -= alpha q~. Halts BREAKDOWN when pq = 0, NANINF when alpha is not finite. */
gs_status_t gs_kernel_bicg_update(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S, int c,
                                  int done, double *x, double *r, double *rt, const double *p,
                                  const double *q, const double *qt);
/** CGNR, after w = A p (m entries) and pq = w^T w: alpha = rho[c] / pq; x += alpha p (n
 *  entries); r -= alpha w (m entries). Halts BREAKDOWN when pq = 0 (A p = 0), NANINF when
 *  alpha is not finite. The direction update is gs_kernel_cg_direction's, with rho from
 *  ||z|| = ||A^T r||. */
gs_status_t gs_kernel_cgnr_update(cudaStream_t stream, gs_idx_t n, gs_idx_t m, gs_dscalars_t *S,
                                  int c, int done, double *x, double *r, const double *p,
                                  const double *w);
/** LSQR start, after U = b - A x0, ls.beta = ||U||, t = A^T U: V = t / beta; with
 *  ls.alfa = ||V|| known, gs_kernel_lsqr_init_w sets w = V / alfa and the rotation's state. */
gs_status_t gs_kernel_lsqr_init_v(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S, double *V,
                                  const double *t);
gs_status_t gs_kernel_lsqr_init_w(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S, double *w,
                                  const double *V);
/** LSQR, after t = A V (m entries): U = t / alfa - (alfa / beta) U, i.e. beta u <- A v - alfa u
 *  unnormalized (ls.beta_new = ||U|| next). */
gs_status_t gs_kernel_lsqr_u(cudaStream_t stream, gs_idx_t m, gs_dscalars_t *S, double *U,
                             const double *t);
/** LSQR, after t = A^T U (n entries): when beta_new > 0, V = t / beta_new -
 *  (beta_new / alfa) V, i.e. alfa v <- A^T u - beta v unnormalized (ls.alfa_new = ||V|| next). */
gs_status_t gs_kernel_lsqr_v(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S, double *V,
                             const double *t);
/** LSQR's scalar step (one thread), after ls.alfa_new, ls.beta_new and ls.wnorm: takes the new
 *  alfa and beta, ||A|| and the plane rotation, the step t1, t2, the estimates of cond(A),
 *  ||x||, ||r|| and ||A^T r|| (also S->rnorm, the monitored norm), and the stopping tests with
 *  tolerance `tol` (atol = btol) and `atol` on ||r||: a test met halts GS_HALT_LSQR with
 *  done = it, so that gs_kernel_lsqr_xw still takes this step. A rotation that is not finite
 *  halts NANINF with done = it - 1. */
gs_status_t gs_kernel_lsqr_step(cudaStream_t stream, gs_dscalars_t *S, double tol, double atol,
                                int it);
/** LSQR, after the step: x += t1 w; w = v + t2 w with v = V / alfa. Skipped when a halt of an
 *  earlier iteration than `it` is set. */
gs_status_t gs_kernel_lsqr_xw(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S, int it,
                              double *x, double *w, const double *V);
/** S->tol = fmax(rtol * S->bnorm, atol) (one thread): the deferred start of gs_solver_solve. */
gs_status_t gs_kernel_start_tol(cudaStream_t stream, gs_dscalars_t *S, double rtol, double atol);
/** End of an iteration (one thread): unless halted, S->iter += 1, and a halt CONVERGED when
 *  S->rnorm <= S->tol. */
gs_status_t gs_kernel_iteration_end(cudaStream_t stream, gs_dscalars_t *S);
/** *d_out = x^T y in one launch (deterministic: fixed grid, fixed order); skipped on a halt. */
gs_status_t gs_kernel_dot(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S, gs_red_t *red,
                          const double *x, const double *y, double *d_out);
/** *d_out = ||x|| (the same reduction, square root taken). */
gs_status_t gs_kernel_nrm2(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S, gs_red_t *red,
                           const double *x, double *d_out);
/** *d_ts = t^T r and *d_tt = t^T t in one pass; red must hold two gs_red_t. */
gs_status_t gs_kernel_dot2(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S, gs_red_t *red,
                           const double *t, const double *r, double *d_ts, double *d_tt);
/** gs_kernel_cg_update with done from the device, then S->rnorm = ||r|| of the new r, in one
 *  pass over the vectors. */
gs_status_t gs_kernel_cg_update_norm(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S,
                                     gs_red_t *red, int c, double *x, double *r, const double *p,
                                     const double *q);
/** gs_kernel_cg_direction with done from the device, followed by gs_kernel_iteration_end, in
 *  one launch (the reliable-update test before the direction, as there; the count of the
 *  iteration it halts in includes it). */
gs_status_t gs_kernel_cg_direction_end(cudaStream_t stream, gs_idx_t n, gs_dscalars_t *S, int c,
                                       int rho_from_rnorm, double *p, const double *z);
/** x = alpha x (alpha from the host). */
gs_status_t gs_kernel_scale(cudaStream_t stream, gs_idx_t n, double alpha, double *x);

#ifdef __cplusplus
}
#endif
#endif
