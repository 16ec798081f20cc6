/* gpusolve/solver.h: Krylov solvers (CG, pipelined CG, BiCGSTAB, GMRES(m), BiCG) for Ax = b and
 * least-squares solvers (CGNR, LSQR) for min ||b - Ax|| on the GPU, written against the SpMV
 * formats (or any operator) and the preconditioners. */
#ifndef GPUSOLVE_SOLVER_H
#define GPUSOLVE_SOLVER_H

#include "gpusolve/context.h"
#include "gpusolve/operator.h"
#include "gpusolve/precond.h"
#include "gpusolve/spmv.h"

#ifdef __cplusplus
extern "C" {
#endif
/* The library is built with hidden visibility: what this header declares is its public API. */
#if defined(__GNUC__) && !defined(GS_NO_VISIBILITY_PRAGMAS)
#pragma GCC visibility push(default)
#endif

/** Krylov method. */
typedef enum gs_method {
  GS_SOLVER_CG = 0,       /* conjugate gradients: symmetric positive definite A and M */
  GS_SOLVER_BICGSTAB = 1, /* van der Vorst's BiCGSTAB: general A */
  GS_SOLVER_GMRES = 2,    /* restarted GMRES(m), right preconditioned: general A */
  GS_SOLVER_AUTO = 3,     /* CG when A is symmetric with a positive diagonal, BiCGSTAB for
                             another square A, LSQR for a rectangular one */
  /* methods that use A^T x: the operator needs GS_SPMV_CAP_TRANSPOSE */
  GS_SOLVER_BICG = 4,     /* BiConjugate Gradients (Fletcher 1976): general square A; a
                             preconditioner must be symmetric (it applies M^-T as M^-1) */
  GS_SOLVER_CGNR = 5,     /* CG on the normal equations A^T A x = A^T b without forming A^T A
                             (CGLS): any m x n A, least squares; no preconditioner */
  GS_SOLVER_LSQR = 6,     /* Paige and Saunders' LSQR (1982): any m x n A, least squares (the
                             minimum-norm solution when A is wide and x0 = 0); no preconditioner */
  GS_SOLVER_PIPECG = 7    /* pipelined CG (Ghysels and Vanroose 2014, Algorithm 4): CG's iterates
                             in exact arithmetic with one global reduction per iteration instead of
                             CG's two to three, for SPD A and M; its recurrences reach a lower
                             accuracy than CG's on ill-conditioned systems (it restarts from the
                             true residual when they break down; never chosen by auto) */
} gs_method_t;

/** What a method asks of the operator and the preconditioner (gs_method_flags). */
enum {
  GS_METHOD_SQUARE = 1u << 0,        /* A must be square (rows == cols) */
  GS_METHOD_TRANSPOSE = 1u << 1,     /* products with A^T: GS_SPMV_CAP_TRANSPOSE needed */
  GS_METHOD_LEAST_SQUARES = 1u << 2, /* minimizes ||b - Ax||: converges on ||A^T (b - Ax)||,
                                        x has cols entries and b rows; no preconditioner */
  GS_METHOD_SYMMETRIC_PC = 1u << 3   /* applies M^-T too: only symmetric preconditioners
                                        (gs_precond_is_symmetric) */
};
/** GS_METHOD_* of method m (0 for GS_SOLVER_AUTO and unknown values). */
unsigned gs_method_flags(gs_method_t m);

/** Why a solve stopped: an outcome, not an error (PETSc's KSPConvergedReason). Converged
 *  reasons are positive, the others negative. */
typedef enum gs_reason {
  GS_REASON_NONE = 0,            /* not run (gs_solve failed with an error status) */
  GS_CONVERGED_RTOL_NORMAL = 1,  /* least squares (CGNR, LSQR): ||A^T r|| <= rtol ||A^T b||
                                    (CGNR), ||A^T r|| <= rtol ||A||_F ||r|| (LSQR) */
  GS_CONVERGED_RTOL = 2,         /* ||r|| <= rtol ||b|| (LSQR: ||r|| <= rtol (||b|| +
                                    ||A||_F ||x||)) */
  GS_CONVERGED_ATOL = 3,         /* ||r|| <= atol (atol > rtol ||b||) */
  GS_CONVERGED_ATOL_NORMAL = 9,  /* least squares: ||A^T r|| <= atol */
  GS_DIVERGED_MAXIT = -3,        /* iteration limit reached */
  GS_DIVERGED_BREAKDOWN = -5,    /* rho = 0, omega = 0, r~^T v = 0 (BiCGSTAB), r^T z = 0 (CG),
                                    a singular Hessenberg matrix (GMRES), r~^T z = 0 or
                                    p~^T A p = 0 (BiCG), A p = 0 (CGNR), cond(A) too large for
                                    double precision (LSQR) */
  GS_DIVERGED_INDEFINITE = -8,   /* CG: p^T A p <= 0, or r^T M^-1 r < 0 (indefinite M) */
  GS_DIVERGED_NANINF = -9,       /* a residual norm or scalar became NaN or infinite */
  GS_DIVERGED_STAGNATION = -10,  /* no progress: a GMRES cycle that did not reduce ||r||, or
                                    no new smallest ||r|| in opts.stagnation_window iterations */
  GS_STOPPED_BY_MONITOR = -11,   /* the monitor callback asked to stop */
  GS_DIVERGED_DTOL = -12         /* ||r|| grew past GS_FALLBACK_DTOL ||b - A x0||: only a
                                    BiCGSTAB that opts.fallback covers stops so (and GMRES
                                    goes on from x = 0) */
} gs_reason_t;

/** Lowercase name of a reason ("converged_rtol", "diverged_indefinite", ...); never NULL. */
const char *gs_reason_string(gs_reason_t r);
/** A few words for people ("indefinite matrix or preconditioner"); never NULL. The stats'
 *  detail says which scalar ("p^T A p <= 0"). */
const char *gs_reason_describe(gs_reason_t r);
/** 1 for the converged reasons, else 0. */
int gs_reason_converged(gs_reason_t r);

/** Name of a method ("cg", "bicgstab", "gmres", "auto", "bicg", "cgnr", "lsqr", "pipecg") and its
 *  inverse (-1 when unknown). */
const char *gs_method_string(gs_method_t m);
int gs_method_find(const char *name);

/**
 * Called by the solver each time it looks at the residual norm (every opts.check_every
 * iterations, and once with iteration 0 for the initial residual), on the calling thread.
 * @param user      opts.monitor_user
 * @param iteration iterations done so far
 * @param rnorm     the monitored residual norm: the recurrence residual (CG, pipelined CG,
 *                  BiCGSTAB, BiCG; the true residual in exact arithmetic), the Givens estimate
 *                  (GMRES); for the least-squares methods ||A^T r||: of the recurrence
 *                  residual (CGNR), LSQR's estimate (LSQR)
 * @param rel       rnorm / ||b|| (rnorm when b = 0); least squares: rnorm / ||A^T b||
 * @return 0 to go on, nonzero to stop (reason GS_STOPPED_BY_MONITOR)
 */
typedef int (*gs_monitor_fn)(void *user, int iteration, double rnorm, double rel);

/** Options of gs_solve; start from gs_solve_opts_default(). */
typedef struct gs_solve_opts {
  gs_method_t method;    /* default GS_SOLVER_AUTO */
  double rtol;           /* relative tolerance, default 1e-8 */
  double atol;           /* absolute tolerance, default 0:
                            stop when ||r|| <= max(rtol ||b||, atol); CGNR when ||A^T r|| <=
                            max(rtol ||A^T b||, atol); LSQR on its own tests with its atol =
                            btol = rtol, or ||r|| <= atol, or ||A^T r|| <= atol (gs_solve) */
  int maxit;             /* iteration limit (GMRES: inner iterations in all), default 10000 */
  int restart;           /* GMRES restart length m, default 30 (capped at n) */
  int x0_given;          /* 1: d_x holds the initial guess; 0 (default): start from x = 0 */
  int check_every;       /* read the residual norm on the host every k iterations; 0 (default):
                            automatic. CG, pipelined CG and BiCGSTAB test convergence on the
                            device, so k > 1 changes no result or count (the up to k - 1
                            iterations launched after convergence do nothing but the
                            products); automatic grows k
                            from the measured iteration time to about 200 us of GPU work
                            between reads (at most 64), or every iteration when a monitor is
                            set (it sees each one); persistent iterations, which stop on the
                            device, read every 256 (or every stagnation_window if smaller).
                            BiCG, CGNR and LSQR
                            take k > 1 literally (up to k - 1 extra iterations; automatic: 1);
                            GMRES checks every iteration */
  int stagnation_window; /* CG, pipelined CG, BiCGSTAB: stop with GS_DIVERGED_STAGNATION when
                            the smallest residual norm seen has not decreased in this many
                            iterations; 0 (default) = off: long plateaus are normal (CG on
                            msc04515 goes 913 iterations without a new minimum, then
                            converges). GMRES stops on a cycle without progress regardless. */
  int timing;            /* 1 (default): time SpMV and preconditioner with CUDA events (no
                            host synchronization added); 0: only the totals */
  gs_monitor_fn monitor; /* optional, NULL by default */
  void *monitor_user;    /* passed to monitor */
  int graphs;            /* 1 (default): CG, pipelined CG and BiCGSTAB replay their iteration
                            as a CUDA Graph when the operator and preconditioner can be
                            captured (stats say whether they did and why not); 0: launch
                            kernel by kernel */
  int persistent;        /* persistent iterations: CG and BiCGSTAB run the iterations between
                            two host checks as ONE cooperative kernel (grid-wide barriers
                            between the steps, about 2x faster an iteration on systems of up
                            to ~1M entries), with a CSR product of their own in double on the
                            matrix's device CSR (whatever backend the operator was made with)
                            and Jacobi folded in.
                            GS_PERSISTENT_DEFAULT (default): AUTO when the operator is a
                            product whose backend was selected automatically (the "auto"
                            format: gs_spmv_create_auto, gs_spmv_create(..., "auto", ...)),
                            else OFF: a backend the caller named is what multiplies, never
                            replaced unasked (gs_solve_persistent_resolve). A shell, a
                            transposed view and a distributed solve resolve to OFF.
                            GS_PERSISTENT_OFF: the loop above.
                            GS_PERSISTENT_ON: refused (GS_ERR_UNSUPPORTED, naming why) by
                            gs_solver_setup for another method, a preconditioner other than
                            jacobi, an operator that is not a double-precision product of a
                            matrix (shell, transposed view, mixed), a distributed solve or a
                            device without cooperative launch.
                            GS_PERSISTENT_AUTO: ON where it can serve, the matrix has at
                            most 2^21 entries and its longest row takes at most 32 steps of
                            the kernel's product (2-32 threads a row from the mean length,
                            256 for a long row), else OFF (the stats say which and why) */
  int precond_auto;      /* GS_PRECOND_AUTO_OFF (default): M is what the caller gave.
                            GS_PRECOND_AUTO_AMG: a CG solve given no preconditioner (M NULL or
                            identity) on one GPU starts without one and, at a check where the
                            residual's recent rate forecasts more time left than
                            GS_PRECOND_AUTO_MARGIN times the predicted cost of algebraic
                            multigrid (its setup plus its iterations), sets up "amg" on the
                            operator's matrix and goes on from the current x with it (a new
                            CG pass: the iterations of both passes are counted). The stats say
                            whether and when; the solver keeps that preconditioner for its
                            later solves. Other methods, a shell operator, reliable updates and
                            distributed solves do not escalate. */
  const char *precond_auto_opts; /* options of that "amg" (gs_precond_create_opts; NULL: its
                            defaults), checked by gs_solver_create */
  int fallback;          /* a method that failed in a way GMRES cannot (GS_FALLBACK_*):
                            CG stopped by GS_DIVERGED_INDEFINITE or GS_DIVERGED_NANINF (the
                            matrix or M was not SPD after all), BiCGSTAB by
                            GS_DIVERGED_BREAKDOWN, GS_DIVERGED_NANINF or GS_DIVERGED_DTOL
                            (checked only when it may fall back). The solve goes on with
                            GMRES(restart) and the same preconditioner, from the failed pass's x
                            when its true residual is below ||b - A x0||, else from x = 0, for
                            the iterations the limit leaves (counted together). The stats say
                            so (fallback_*); the solver keeps GMRES for its later solves.
                            Distributed solves and reliable updates do not fall back.
                            GS_FALLBACK_AUTO (0, default): only when method is GS_SOLVER_AUTO
                            (the automatic choice of CG or BiCGSTAB was a guess);
                            GS_FALLBACK_OFF: never; GS_FALLBACK_GMRES: for any CG or BiCGSTAB
                            solve (what the CLI does for --solver auto, which resolves the
                            method itself). */
} gs_solve_opts_t;

/* gs_solve_opts_t.fallback */
enum { GS_FALLBACK_AUTO = 0, GS_FALLBACK_OFF = 1, GS_FALLBACK_GMRES = 2 };
/* A BiCGSTAB solve that may fall back stops as GS_DIVERGED_DTOL when a checked ||r|| exceeds
 * this many times ||b - A x0|| (PETSc's default divergence tolerance): it is diverging, and
 * the iterations left are GMRES's. */
#define GS_FALLBACK_DTOL 1e5

/* gs_solve_opts_t.precond_auto */
enum { GS_PRECOND_AUTO_OFF = 0, GS_PRECOND_AUTO_AMG = 1 };
/* The escalation's margin: the forecast time left without a preconditioner must exceed this
 * many times AMG's predicted setup and solve. */
#define GS_PRECOND_AUTO_MARGIN 2.0

/* gs_solve_opts_t.persistent. The values are ABI: DEFAULT was appended, so 0 still means OFF
 * (a zero-filled struct keeps the loop; gs_solve_opts_default gives DEFAULT). */
enum {
  GS_PERSISTENT_OFF = 0,
  GS_PERSISTENT_ON = 1,
  GS_PERSISTENT_AUTO = 2,
  GS_PERSISTENT_DEFAULT = 3
};

/** What opts.persistent = `requested` means for an operator whose product's backend was
 *  (auto_selected != 0) or was not selected automatically: DEFAULT becomes AUTO or OFF, the
 *  explicit values stay. gs_solver_setup applies it; callers may use it to know the choice in
 *  advance. Values other than the four are returned as they are (gs_solver_create refuses
 *  them). */
int gs_solve_persistent_resolve(int requested, int auto_selected);

/** Fills the defaults listed above. */
void gs_solve_opts_default(gs_solve_opts_t *opts);

/** What a solve did. */
typedef struct gs_solve_stats {
  gs_method_t method;        /* the method that ran (AUTO resolved) */
  gs_reason_t reason;        /* why it stopped */
  const char *detail;        /* what exactly, e.g. "omega = t^T s / t^T t = 0" or "p^T A p <= 0";
                                "" when the reason says it all (static string, never NULL) */
  int iterations;            /* iterations done (GMRES: inner iterations over all cycles) */
  int restarts;              /* restarts from the true residual b - Ax, taken when the
                                recurrence residual met the tolerance and b - Ax did not;
                                pipelined CG also when its recurrences broke down (p^T A p
                                <= 0, r^T M^-1 r <= 0) after reducing b - Ax */
  double bnorm;              /* ||b|| */
  double rnorm0;             /* ||b - A x0|| */
  double rnorm;              /* last monitored residual norm (see gs_monitor_fn) */
  double true_residual_norm; /* ||b - A x|| recomputed from the returned x */
  double rel_residual;       /* true_residual_norm / ||b|| (true_residual_norm when b = 0) */
  double seconds_total;      /* the solve on the GPU timeline: initial residual to true residual
                                (CUDA events; excludes setup) */
  double seconds_spmv;       /* inside gs_spmv_apply (CUDA events; 0 when opts.timing = 0); with
                                graphs, the replayed products are counted at the mean time of
                                those launched one by one (an estimate) */
  double seconds_precond;    /* inside gs_precond_apply (likewise) */
  double seconds_setup;      /* workspace allocation and initialization (host clock) */
  double seconds_precond_setup; /* gs_precond_setup_seconds(M), copied for reports */
  long spmv_count;           /* products with A and A^T, the final true residual included, and
                                those of the iterations launched after the device-side test
                                stopped the solve but before the host's next check (at most
                                check_every - 1 iterations, which change nothing) */
  long precond_count;        /* preconditioner applications */
  /* least-squares methods (CGNR, LSQR); 0 for the others */
  double normal_residual_norm; /* ||A^T (b - A x)|| recomputed from the returned x: the
                                  optimality measure of least squares (0 at a minimizer) */
  double rel_normal_residual;  /* normal_residual_norm / ||A^T b|| */
  double anorm;              /* LSQR: its estimate of ||A||_F (Paige and Saunders' ANORM) */
  double acond;              /* LSQR: its estimate of cond(A) = ||A||_F ||A^+||_F (ACOND) */
  /* how the iteration ran (CG, pipelined CG, BiCGSTAB) */
  int graphs;                /* 1: the iterations after the first replayed a CUDA Graph */
  const char *graphs_note;   /* why not, when opts.graphs asked for them ("" otherwise) */
  int checks;                /* host reads of the residual norm (fetch + test) */
  int persistent;            /* 1: the iterations ran as persistent kernels (opts.persistent;
                                their products and M^-1 are in the counts, not in the
                                seconds_spmv / seconds_precond timings) */
  const char *persistent_note; /* why not, when opts.persistent asked for them (ON, AUTO, or
                                  DEFAULT resolved to AUTO); "" otherwise */
  double vector_bytes;       /* the vector operations' memory traffic over the solve, from the
                                count above the method's loop (bytes; 0 where not counted);
                                vector_bytes / (seconds_total - seconds_spmv -
                                seconds_precond) is their achieved bandwidth */
  /* opts.precond_auto: what the escalation did (iteration -1 and zeros when it did not) */
  int precond_auto_iteration; /* the iteration after which the solve went on with AMG */
  double precond_auto_setup_s;   /* its setup (host clock; inside seconds_total) */
  double precond_auto_left_s;    /* at that check: the forecast time left without it */
  double precond_auto_cost_s;    /* and the predicted cost with it */
  int precond_auto_levels;       /* the hierarchy it built */
  double precond_auto_complexity; /* its operator complexity */
  const char *precond_auto_note; /* why it did not escalate when asked to, or that AMG was
                                    dropped after it (its pass forecast too slow), or "" (static) */
  int precond_auto_limit;        /* 1: it escalated because the forecast iterations passed
                                    twice what the iteration limit left (convergence at stake,
                                    whatever the time); 0: for time, or not at all */
  /* opts.fallback: what the method that failed did (fallback_iteration -1 when none ran) */
  int fallback_iteration;        /* the iterations of the failed method (GMRES's follow) */
  gs_method_t fallback_from;     /* the method that failed (CG or BiCGSTAB) */
  gs_reason_t fallback_reason;   /* and why (its detail in fallback_detail, static) */
  const char *fallback_detail;
  const char *fallback_note;     /* from which x GMRES went on, or why no fallback ran where
                                    one was due (static; "" otherwise) */
} gs_solve_stats_t;

/* ---- the solver object (PETSc's KSPCreate / KSPSetUp / KSPSolve) -------------------------------
 * create (options) -> setup (operator, preconditioner: work vectors, pinned scalars, events; the
 * only allocation) -> solve (any number of times: no allocation, no setup cost) -> destroy.
 * The solver, the operator and the preconditioner must share one context. */
typedef struct gs_solver gs_solver_t;

/** Creates a solver on ctx with opts (NULL: defaults), validated here. Borrows ctx. */
gs_status_t gs_solver_create(gs_solver_t **s, gs_context_t *ctx, const gs_solve_opts_t *opts);
/**
 * Prepares s to solve with operator A and preconditioner M (NULL for none): resolves
 * GS_SOLVER_AUTO from A's matrix (BiCGSTAB for a square shell, LSQR for a rectangular A) and
 * GS_PERSISTENT_DEFAULT from A's product (gs_solve_persistent_resolve), checks that the
 * method can use A and M (gs_method_flags), allocates the method's work vectors, the pinned
 * scalar block and the timing events. Calling it again with another A or M frees and remakes
 * them (and resolves both again). Borrows A and M: they must outlive the solves. Nothing runs
 * on the device before these checks pass.
 * @return GS_ERR_INVALID_ARG when A or M belongs to another context than s (their streams would
 *         race); GS_ERR_DIMENSION when A is not square for a method that needs it (CG,
 *         pipelined CG, BiCGSTAB, GMRES, BiCG) or M has another order; GS_ERR_UNSUPPORTED
 *         when the method needs A^T (BiCG, CGNR, LSQR) and the operator has no transpose
 *         product (the message names the backend), when a least-squares method (CGNR, LSQR)
 *         is given a preconditioner, or when BiCG is given one that is not symmetric (ilu0);
 *         GS_ERR_DEVICE_MEMORY.
 */
gs_status_t gs_solver_setup(gs_solver_t *s, gs_operator_t *A, gs_precond_t *M);
/**
 * Solves A x = b with the operator and preconditioner of the last setup; the semantics, the
 * stats and the return values are gs_solve's. Allocates nothing. The cuBLAS handle of the
 * context is in device pointer mode during the call and restored on return.
 */
gs_status_t gs_solver_solve(gs_solver_t *s, const gs_val_t *d_b, gs_val_t *d_x,
                            gs_solve_stats_t *stats);
/** The method setup resolved (GS_SOLVER_AUTO before setup). */
gs_method_t gs_solver_method(const gs_solver_t *s);
/** The preconditioner an escalation (opts.precond_auto) set up, owned by s (valid until the
 *  next gs_solver_setup or gs_solver_destroy), or NULL. */
const gs_precond_t *gs_solver_precond_auto(const gs_solver_t *s);
/** NULL-safe; sets *s = NULL. Frees what setup made; never what it borrows. */
void gs_solver_destroy(gs_solver_t **s);

/**
 * Solves A x = b with a Krylov method, or min ||b - Ax|| with a least-squares one: the
 * one-call convenience over gs_solver_create, setup, solve and destroy (a repeated solve should
 * keep a gs_solver_t instead).
 *
 * Convergence: ||r|| <= max(rtol ||b||, atol) on the monitored residual; at the end the true
 * residual b - A x is recomputed and reported (stats.true_residual_norm, rel_residual).
 * A converged reason means the recomputed true residual ||b - Ax|| is within 10 times the
 * tolerance: when the method's recurrence residual met the tolerance but b - Ax is further off,
 * the method restarts from x with the true residual (stats.restarts, at most 3 times, within
 * maxit); a true residual still above 10x the tolerance stops with GS_DIVERGED_STAGNATION.
 *
 * Least squares (CGNR, LSQR; A of m x n, any shape): ||b - Ax|| need not go to 0, so
 * "converged" is about optimality, the normal-equations residual A^T (b - Ax):
 *   CGNR  ||A^T r|| <= max(rtol ||A^T b||, atol) (CG's test on A^T A x = A^T b, as SciPy's cg
 *         on the normal equations): GS_CONVERGED_RTOL_NORMAL / ATOL_NORMAL;
 *   LSQR  Paige and Saunders' tests with their atol = btol = rtol: ||r|| <= rtol (||b|| +
 *         ||A||_F ||x||) (a compatible system: GS_CONVERGED_RTOL) or ||A^T r|| <= rtol ||A||_F
 *         ||r|| (a least-squares solution: GS_CONVERGED_RTOL_NORMAL), their machine-precision
 *         versions (the same reasons, with a detail), ||r|| <= atol or ||A^T r|| <= atol
 *         (the ATOL reasons); no condition limit (SciPy's conlim = 0); cond(A) too large for
 *         double precision stops with GS_DIVERGED_BREAKDOWN.
 * The true ||A^T (b - Ax)|| is recomputed at the end (stats.normal_residual_norm), and the
 * 10x contract above applies to the test that stopped the method.
 * Breakdowns, indefiniteness, NaN, stagnation and the iteration limit are stop reasons in
 * stats.reason, not errors: gs_solve then returns GS_SUCCESS with the last good iterate in d_x.
 *
 * Work vectors are allocated once per call (gs_dmalloc), never inside the iteration loop.
 * ctx must be the context S (and M) were created on: another context's stream would run the
 * products and the vector work unordered (GS_ERR_INVALID_ARG).
 * Scalars stay on the device (cuBLAS device pointer mode, restored on return); the host reads a
 * few device scalars once per check (opts.check_every). On return the context's stream is
 * synchronized. Not thread-safe on one context. The first solve of a process also pays the
 * CUDA libraries' one-time costs (GMRES's first solve measured 3x its steady time on an H100):
 * benchmarks warm up first, as `gpusolve solve` does.
 *
 * @param[in]     ctx   context
 * @param[in]     opts  options, or NULL for the defaults
 * @param[in]     S     the operator: a product prepared for an m x n matrix A
 *                      (gs_spmv_create(&S, ctx, A, ...)), any format (with a transpose
 *                      product for BiCG, CGNR, LSQR); square unless the method is CGNR or
 *                      LSQR; A's features choose GS_SOLVER_AUTO's method
 * @param[in]     M     preconditioner set up for A, or NULL for none
 * @param[in]     d_b   device vector of length m (rows)
 * @param[in,out] d_x   device vector of length n (columns): the initial guess when
 *                      opts.x0_given, the solution on return (must not alias d_b)
 * @param[out]    stats what happened (may be NULL)
 * @return GS_SUCCESS whether or not it converged (see stats.reason); GS_ERR_INVALID_ARG (also a
 *         context other than S's or M's), GS_ERR_DIMENSION (A not square for a square method,
 *         M of another size), GS_ERR_UNSUPPORTED (see gs_solver_setup: no transpose product, a
 *         preconditioner the method cannot use); GS_ERR_DEVICE_MEMORY, GS_ERR_CUDA,
 *         GS_ERR_CUBLAS, GS_ERR_CUSPARSE on device failures.
 */
gs_status_t gs_solve(gs_context_t *ctx, const gs_solve_opts_t *opts, gs_spmv_t *S,
                     gs_precond_t *M, const gs_val_t *d_b, gs_val_t *d_x,
                     gs_solve_stats_t *stats);

/** The method GS_SOLVER_AUTO picks for A: LSQR when A is not square, CG when A is numerically
 *  symmetric with a positive diagonal, BiCGSTAB otherwise. */
gs_method_t gs_solve_auto_method(const gs_matrix_t *A);

/* ---- symmetric reordering (docs/reorder.md) ---------------------------------------------------
 * A x = b solved as (P A P^T)(P x) = P b: the rows and columns of a square A renumbered for the
 * locality of the product's x gathers. The caller builds the product and the preconditioner on
 * the reordered matrix (gs_reorder_csr) with its own backend and options; gs_solve_reordered
 * takes b and x (and x0) in the caller's numbering and permutes them on the device. Residual
 * norms are those of the original system (a permutation keeps 2-norms). */

/** Ordering. The values are ABI. */
typedef enum gs_reorder_kind {
  GS_REORDER_NONE = 0,   /* A as given */
  GS_REORDER_RCM = 1,    /* reverse Cuthill-McKee of A + A^T: a narrow band (meshes, circuits) */
  GS_REORDER_DEGREE = 2, /* rows by decreasing degree, stable: hubs first (power-law graphs) */
  GS_REORDER_AUTO = 3    /* the candidate (rcm, degree) with the fewest x lines, when it saves
                            enough of them and the expected products pay its cost, else none */
} gs_reorder_kind_t;

/** "none", "rcm", "degree", "auto" ("unknown" otherwise), and the inverse (-1 when unknown). */
const char *gs_reorder_string(gs_reorder_kind_t k);
int gs_reorder_find(const char *name);

/** What gs_reorder_create did. */
typedef struct gs_reorder_info {
  gs_reorder_kind_t requested; /* as asked */
  gs_reorder_kind_t kind;      /* as applied (AUTO resolved: NONE when it declined) */
  double seconds;              /* host clock: the orderings computed (auto: every candidate),
                                  P A P^T, the permutation's upload */
  gs_idx_t bandwidth_before, bandwidth_after; /* max |i - j| of A and of the matrix solved */
  long long lines_before, lines_after; /* the x-lines predictor (64-byte lines of x a block of
                                  32 consecutive rows touches, summed) of A and of the matrix
                                  solved; auto: lines_after of the best candidate even when
                                  declined */
  const char *note;            /* auto's reason in a few words (static); rcm: "ordered on the
                                  GPU" when the device computed it; "" otherwise */
} gs_reorder_info_t;

typedef struct gs_reorder gs_reorder_t;

/**
 * Orders square A (host CSR, checked as gs_csr_validate) by `kind` and builds P A P^T (host,
 * columns sorted in each row) and the permutation on ctx's device. AUTO (GS_REORDER_AUTO_*):
 * computes both candidates and keeps the one with the fewest x lines when it saves at least
 * (1 - GS_REORDER_AUTO_RATIO) of A's, and `products` expected products with the matrix
 * (iterations x products per iteration; 0: unknown, AUTO declines) save, at
 * GS_REORDER_AUTO_BYTES_PER_S per line byte, GS_REORDER_AUTO_MARGIN times the ordering's
 * measured cost. Borrows ctx; copies what it needs of A (when kind resolves to NONE,
 * gs_reorder_csr returns A itself: A must then outlive R). GS_ERR_INVALID_ARG (NULL, a
 * malformed A, an unknown kind, negative products), GS_ERR_DIMENSION (non-square A),
 * GS_ERR_HOST_MEMORY, GS_ERR_DEVICE_MEMORY, GS_ERR_CUDA.
 */
gs_status_t gs_reorder_create(gs_reorder_t **R, gs_context_t *ctx, const gs_csr_t *A,
                              gs_reorder_kind_t kind, double products);
/** The matrix to build the product and the preconditioner on: P A P^T, or A (NULL for NULL R). */
const gs_csr_t *gs_reorder_csr(const gs_reorder_t *R);
/** The permutation on the host, perm[k] = the caller's index of new row k; NULL when none. */
const gs_idx_t *gs_reorder_perm(const gs_reorder_t *R);
/** Fills *info (GS_ERR_INVALID_ARG for NULL). */
gs_status_t gs_reorder_info(const gs_reorder_t *R, gs_reorder_info_t *info);
/** d_out = P d_in (inverse 0: into the reordered numbering) or P^T d_in (inverse 1: back),
 *  n entries each, asynchronous on the context's stream; a copy when no ordering applies.
 *  d_in and d_out must not alias (GS_ERR_INVALID_ARG). */
gs_status_t gs_reorder_vector(gs_reorder_t *R, int inverse, const gs_val_t *d_in,
                              gs_val_t *d_out);
/**
 * gs_solve on the reordered system: S (and M, or NULL) built on a matrix of gs_reorder_csr(R)
 * on ctx, d_b and d_x in the caller's numbering (x0 when opts->x0_given). Allocates two
 * vectors of n (freed on return), permutes b (and x0) in, solves, and permutes x out into d_x
 * (d_x is left as it was when gs_solve fails). Stats as gs_solve's: the norms are the original
 * system's. Errors: gs_solve's, GS_ERR_INVALID_ARG for NULL R or aliasing d_b and d_x,
 * GS_ERR_DIMENSION when S's matrix is not R's order, GS_ERR_DEVICE_MEMORY.
 */
gs_status_t gs_solve_reordered(gs_context_t *ctx, const gs_solve_opts_t *opts, gs_reorder_t *R,
                               gs_spmv_t *S, gs_precond_t *M, const gs_val_t *d_b,
                               gs_val_t *d_x, gs_solve_stats_t *stats);
/** NULL-safe; sets *R = NULL. */
void gs_reorder_destroy(gs_reorder_t **R);

/* AUTO's rule (gs_reorder_create): the best candidate keeps at most this fraction of A's x
 * lines, and the lines saved over the expected products, at this many bytes a second (a high
 * rate: the saving is under- rather than overestimated), pay this many times the ordering's
 * measured cost. Before ordering, AUTO declines when saving all of A's lines could not pay
 * the orderings at GS_REORDER_AUTO_NS_PER_ENTRY (a floor, below the rates docs/reorder.md
 * measured). */
#define GS_REORDER_AUTO_RATIO 0.7
#define GS_REORDER_AUTO_BYTES_PER_S 1e13
#define GS_REORDER_AUTO_MARGIN 2.0
#define GS_REORDER_AUTO_NS_PER_ENTRY 2.0

/* ---- mixed-precision iterative refinement ----------------------------------------------------
 * Solves A x = b to double accuracy with the Krylov work done on a mixed-precision product
 * (float values, gs_precision_t), stopping only when the residual b - A x formed with a double
 * product S meets ||b - A x|| <= max(rtol ||b||, atol). Two schemes:
 *  - CG (reliable_delta > 0, the default): ONE CG iteration sequence on the mixed product
 *    S_inner, x, r, p and the sums in double, whose recurrence residual is replaced by the true
 *    b - A x (on S) whenever ||r|| has fallen below reliable_delta times its largest value since
 *    the last replacement, and when it meets the tolerance: reliable updates (Sleijpen and van
 *    der Vorst 1996; the mixed-precision CG of Clark et al. 2010). The direction p is kept
 *    across a replacement, so CG keeps its Krylov space and needs about the iterations of a
 *    double CG, each with a cheaper product.
 *  - the other methods (and CG with reliable_delta = 0): iterative refinement, an outer loop that
 *    forms r = b - A x on S, solves A d = r with opts' method on S_inner to the loose relative
 *    tolerance inner_rtol (a new Krylov solve each step), and takes x += d. Each step reduces
 *    the error by about max(inner_rtol, cond(A) u_f), u_f = 2^-24 (Moler 1967; Higham, Accuracy
 *    and Stability, ch. 12; Carson and Higham 2018).
 * Both converge when cond(A) u_f is well below 1 (reliable updates: below reliable_delta). */

/** Options of the refinement besides gs_solve_opts_t; start from gs_refine_opts_default(). */
typedef struct gs_refine_opts {
  double inner_rtol; /* relative tolerance of each inner solve, in (0, 1); default 1e-6 */
  int max_outer;     /* limit on refinement steps (x += d); default 100 */
  double min_reduction; /* a step that leaves ||b - Ax|| above min_reduction times its value
                           before stops the refinement (GS_DIVERGED_STAGNATION: the inner
                           solves no longer resolve the correction); in (0, 1], default 0.5 */
  double reliable_delta; /* CG: reliable updates, the residual replaced by b - A x when ||r||
                            falls below reliable_delta times its largest value since the last
                            replacement; in (0, 1), default 0.1 (QUDA's default). 0: CG runs the
                            refinement loop as the other methods do. With reliable updates,
                            inner_rtol and min_reduction are not used and max_outer limits the
                            replacements. Not yet measured on a GPU against the loop. */
} gs_refine_opts_t;

/** Fills the defaults listed above. */
void gs_refine_opts_default(gs_refine_opts_t *o);

/** What the refinement did besides gs_solve_stats_t. */
typedef struct gs_refine_stats {
  int outer;                     /* refinement steps taken (x += d), a reverted one included;
                                    reliable updates: residual replacements r <- b - A x */
  int inner_iterations;          /* Krylov iterations of all inner solves (= stats.iterations);
                                    reliable updates: CG's iterations */
  gs_reason_t last_inner_reason; /* why the last inner solve stopped (GS_REASON_NONE: none ran);
                                    reliable updates: why the one iteration stopped */
  double seconds_inner;          /* the inner solves' own seconds_total, summed; reliable
                                    updates: the solve's seconds_total */
  int reliable;                  /* 1: CG with reliable updates ran, 0: the refinement loop */
  long outer_spmv;               /* products with the double S (residuals; also in
                                    stats.spmv_count) */
  double seconds_outer_spmv;     /* their time (CUDA events; also in stats.seconds_spmv) */
} gs_refine_stats_t;

/**
 * Mixed-precision refinement (above). The residuals and the stopping test are on S, which must
 * be a double product (gs_spmv_precision(S) == GS_PRECISION_DOUBLE); S_inner is normally the
 * mixed product of the same matrix (gs_spmv_create with "precision=mixed"), any format; M (or
 * NULL) preconditions the Krylov iterations. opts: the method (AUTO resolved from the matrix;
 * the least-squares methods CGNR and LSQR are GS_ERR_UNSUPPORTED), rtol, atol, maxit (a limit
 * on the Krylov iterations of all steps together), x0_given, check_every, graphs, timing.
 * With reliable updates (method CG, ropts.reliable_delta > 0) the monitor is called as in
 * gs_solve, with the recurrence ||r|| and, at each replacement, the true ||b - A x||;
 * opts.persistent resolves to off (GS_PERSISTENT_ON is GS_ERR_UNSUPPORTED). In the refinement
 * loop the monitor is not called (each inner solve has a tolerance of its own).
 * Stops, as a reason in stats (the function returns GS_SUCCESS):
 *   converged (GS_CONVERGED_RTOL/ATOL): the double ||b - A x|| met the tolerance;
 *   GS_DIVERGED_STAGNATION: the loop: a step reduced ||b - A x|| by less than
 *     ropts.min_reduction (a step that increased it, or made it NaN, is undone: x is the best
 *     iterate); reliable updates: the true ||b - A x|| grew at 3 replacements in a row (x is the
 *     last iterate);
 *   GS_DIVERGED_MAXIT: maxit Krylov iterations, or max_outer steps (replacements);
 *   GS_DIVERGED_NANINF: ||b|| or a residual is not finite;
 *   reliable updates, as CG in gs_solve: GS_DIVERGED_INDEFINITE, GS_DIVERGED_BREAKDOWN.
 * stats: iterations = Krylov iterations in all, true_residual_norm and rel_residual of the
 * returned x on S, spmv_count = products on S and on S_inner (rstats.outer_spmv on S),
 * seconds_total on the GPU timeline from the first residual to the last, seconds_spmv both
 * kinds of products (CUDA events), seconds_setup the inner solver's setup.
 * @return GS_ERR_INVALID_ARG for NULL arguments, aliasing x and b, products of different
 *         matrices or contexts, a mixed S, bad ropts; GS_ERR_DIMENSION for a rectangular
 *         matrix; the errors of gs_solver_create, setup and solve.
 */
gs_status_t gs_solve_refine(gs_context_t *ctx, const gs_solve_opts_t *opts,
                            const gs_refine_opts_t *ropts, gs_spmv_t *S, gs_spmv_t *S_inner,
                            gs_precond_t *M, const gs_val_t *d_b, gs_val_t *d_x,
                            gs_solve_stats_t *stats, gs_refine_stats_t *rstats);

#if defined(__GNUC__) && !defined(GS_NO_VISIBILITY_PRAGMAS)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif
#endif
