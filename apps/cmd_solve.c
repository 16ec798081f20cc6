/* apps/cmd_solve.c: `gpusolve solve` (the default command): solve A x = b with a Krylov method,
 * or min ||b - Ax|| for a rectangular A (cgnr, lsqr), one SpMV format or every one (--format
 * all, a comparison table), report iterations, residual, error against x = 1 when b = A*1, and
 * times; --monitor prints the residual history, --plot draws it or the comparison, a terminal
 * shows a progress line for long solves. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apps/cli.h"
#include "apps/cli_out.h"
#include "apps/cli_select.h"
#include "apps/cli_spmv.h"
#include "apps/solve_opts.h"
#include "apps/svg.h"

static const char *usage_text =
    "usage: gpusolve solve [A.mtx] [b.mtx] [options]\n"
    "       gpusolve solve --grid NXxNYxNZ [--stencil 7|27] [options]\n"
    "       gpusolve [A.mtx] [b.mtx] [options]\n\n"
    "Solves A x = b with a Krylov method on the GPU, or the least-squares problem\n"
    "min ||b - A x|| for an m x n A (cgnr, lsqr: b has m entries, x has n). Without b,\n"
    "b = A*1 and the error ||x - 1|| / ||1|| is reported too (when m >= n). Without a matrix\n"
    "it solves the built-in 27-point 3D Laplacian on a 64^3 grid; with --grid, the Laplacian\n"
    "of that grid as 'gpusolve gen laplace' makes it, and b = A*1 (the system of --gpus).\n"
    "Stops when ||b - A x|| <= max(rtol ||b||, atol); cgnr when ||A^T r|| <= max(rtol\n"
    "||A^T b||, atol); lsqr on Paige and Saunders' tests with atol = btol = rtol (||r|| <=\n"
    "rtol (||b|| + ||A|| ||x||), or ||A^T r|| <= rtol ||A|| ||r||).\n\n"
    "  --solver NAME     @METHODS@\n"
    "                    (default auto: cg for a symmetric matrix with a positive diagonal,\n"
    "                    bicgstab for another square one, lsqr for a rectangular one; where\n"
    "                    that cg meets negative curvature or that bicgstab breaks down, gmres\n"
    "                    goes on with the same preconditioner within maxit). pipecg is\n"
    "                    pipelined CG (Ghysels and Vanroose): CG's iterates with one\n"
    "                    reduction per iteration, for SPD A and M; less accurate than cg\n"
    "                    on ill-conditioned systems (more iterations, restarts from the\n"
    "                    true residual, or a breakdown: use cg there). bicg, cgnr and lsqr\n"
    "                    use A^T x: formats without a transpose product are refused\n"
    "                    (skipped with --format all); cgnr and lsqr take no\n"
    "                    preconditioner, bicg only a symmetric one (jacobi, ic0)\n"
    "  --format NAME     SpMV format ('gpusolve spmv --list'), auto (default) or all.\n"
    "                    auto: a rule on the matrix's features names a few candidates; the\n"
    "                    solve starts at once with the best one that needs no build of its\n"
    "                    own, and at its checks (CG, BiCGSTAB) estimates the products left\n"
    "                    from the residual's rate: a candidate is prepared and timed only\n"
    "                    when its predicted build is a small share of the SpMV time left,\n"
    "                    and taken when faster. Times cached per matrix, GPU and version.\n"
    "                    all: solve with every format, one row each: prepare ms, SpMV ms,\n"
    "                    solve s, total s (prepare + solve), iterations, relative residual,\n"
    "                    speed-ups over cusparse-csr of the solve and of the total\n"
    "  --no-cache        auto: measure the candidates even when the cache knows the matrix,\n"
    "                    and write nothing ($XDG_CACHE_HOME/gpusolve, else ~/.cache/gpusolve)\n"
    "  --verbose, -v     auto: the features, the rule's row and every candidate's times;\n"
    "                    why the iterations did not run as persistent kernels\n"
    "  --precond NAME    @PRECONDS@\n"
    "                    (default auto; amg: smoothed-aggregation multigrid, set up on the\n"
    "                    GPU: the hierarchy is printed; see docs/amg.md); --list-precond\n"
    "                    lists them with their options. auto: CG starts without one and\n"
    "                    goes on with amg from a check where the residual's rate forecasts\n"
    "                    more time left than twice amg's predicted setup and iterations,\n"
    "                    or more than twice the iterations maxit leaves (--precond-opt\n"
    "                    then sets amg's options); the others run without\n"
    "  --precond-opt KEY=VALUE\n"
    "                    an option of the preconditioner (repeatable), e.g. theta=0.08,\n"
    "                    smoother=chebyshev, cycle=W, format=auto (amg.KEY also accepted);\n"
    "                    a misspelt key or a value out of range is refused\n"
    "  --amg-format NAME the SpMV format of every AMG level (= --precond-opt format=NAME)\n"
    "  --reorder KIND    none (default), rcm, degree or auto: solve P A P^T (b, x0 and x\n"
    "                    permuted on the GPU, x written in the file's numbering) for the\n"
    "                    locality of the product's x reads: rcm (reverse Cuthill-McKee: a\n"
    "                    narrow band), degree (rows by decreasing degree: hubs first, for\n"
    "                    power-law graphs), auto (the candidate with the fewest x cache\n"
    "                    lines, when it saves 30 percent of them and 1000 iterations pay it;\n"
    "                    see docs/reorder.md). The ordering, its ms and the bandwidth before\n"
    "                    and after are printed. Square matrices; not with mixed-refine\n"
    CLI_SPMV_OPT_HELP
    "  --precision P     double (default); mixed: the products read float matrix values\n"
    "                    (double vectors and sums), so x solves the rounded matrix: the\n"
    "                    residual of the double A is reported beside; mixed-refine:\n"
    "                    the iterations on the mixed product, the residual b - Ax and\n"
    "                    the test in double (the accuracy of double): cg as one CG\n"
    "                    with reliable updates (r replaced by b - Ax now and then, see\n"
    "                    --reliable-delta), the other solvers as iterative refinement\n"
    "                    (inner solves to --inner-rtol). Formats with mixed kernels only\n"
    "                    ('mixed' in gpusolve spmv --list --verbose; --format all lists the\n"
    "                    others as unsupported); without --format, csr-vector (auto times\n"
    "                    double products and is refused); square systems (not cgnr, lsqr)\n"
    "                    (float, float vectors too, is for spmv and check: refused here)\n"
    "  --inner-rtol R    mixed-refine: relative tolerance of each inner solve (default 1e-6)\n"
    "  --max-outer N     mixed-refine: limit on refinement steps, or on cg's reliable\n"
    "                    updates (default 100)\n"
    "  --reliable-delta D\n"
    "                    mixed-refine with cg: replace r by b - Ax when ||r|| falls below\n"
    "                    D times its largest value since the last replacement (default\n"
    "                    0.1); 0: cg runs the refinement loop as the other solvers do\n"
    "  --rtol R          relative tolerance, 0..1 (default 1e-8)\n"
    "  --atol A          absolute tolerance, 0..1e300 (default 0; --rtol 0 with --atol 0\n"
    "                    is refused: no solve could stop before --maxit)\n"
    "  --maxit N         iteration limit, 0..2147483647 (default 10000; GMRES: inner\n"
    "                    iterations)\n"
    "  --restart M       GMRES restart length, 1..10000 (default 30)\n"
    "  --check-every K   read the residual norm on the host every K iterations (1..10^6),\n"
    "                    or auto\n"
    "                    (default: about 200 us of GPU work between reads, at most 64;\n"
    "                    256 with persistent iterations; 1 with --monitor). CG, pipecg\n"
    "                    and BiCGSTAB test convergence on the GPU, so K changes no\n"
    "                    result; the others may run K-1 extra iterations\n"
    "  --graphs on|off   CG, pipecg and BiCGSTAB replay each iteration as a CUDA Graph\n"
    "                    (default on; off where the format or preconditioner cannot be\n"
    "                    captured)\n"
    "  --persistent on|off|auto\n"
    "                    CG and BiCGSTAB run the iterations between two checks as one\n"
    "                    cooperative kernel with a CSR product of their own (in place of\n"
    "                    the format's) and jacobi folded in: fastest on small systems.\n"
    "                    on: refused where it cannot serve; auto: where it can and the\n"
    "                    matrix has at most 2^21 entries and no row over 32 steps of the\n"
    "                    kernel's product (2-32 threads a row, 256 for a long row).\n"
    "                    Default: auto with --format auto,\n"
    "                    off when --format names a format or is all (the format you chose\n"
    "                    is the one that multiplies)\n"
    "  --x0 FILE         initial guess (Matrix Market vector; default 0)\n"
    "  -o, --output FILE write the solution x as a Matrix Market vector\n"
    "                    (-o and --plot are checked before any work: a missing folder,\n"
    "                    a folder, a read-only file are refused; a file is replaced only\n"
    "                    when complete, keeping its mode; a link's target is written,\n"
    "                    a device, FIFO or /dev/stdout in place)\n"
    "  --monitor         print the residual norm at every iteration\n"
    "  --json            one JSON document on stdout\n"
    "  --strict          refuse a symmetric file that stores both triangles (default:\n"
    "                    a warning with the counts; every command that reads takes it)\n"
    "  --grid NX[xNY[xNZ]]\n"
    "                    solve the Laplacian of that grid, generated in memory (no file)\n"
    "  --stencil 3|5|7|9|27\n"
    "                    its stencil (default 27; 7 and 27 need NXxNYxNZ)\n"
    "  --gpus LIST       solve across several GPUs (0,1 or a count): see\n"
    "                    'gpusolve solve --gpus 2 --help'\n"
    "  --plot FILE.svg   draw the per-format comparison (solve time with prepare time\n"
    "                    stacked, the total and both speed-ups beside) or, with\n"
    "                    --monitor, the convergence history\n\n"
    "Times: solve = the iteration on the GPU timeline (CUDA events), after a short untimed\n"
    "warm-up solve that takes the CUDA libraries' first-call costs; SpMV and preconditioner\n"
    "times are summed from events around each call; prepare = building the format.\n\n"
    "Exit status: 0 converged, 1 not converged, 2 bad usage or input, 3 no GPU or device\n"
    "failure.\n";

typedef struct history {
  double *it, *rel;
  int n, cap;
} history_t;

typedef struct monitor {
  const char *label; /* format, for the progress line */
  int print;         /* --monitor without --json: one line per check on stdout */
  int progress;      /* stderr is a terminal: live line after about a second */
  double t0, last;
  int drawn;
  history_t *hist;   /* NULL: not kept */
} monitor_t;

typedef struct result {
  const char *format;
  gs_refine_stats_t refine; /* --precision mixed-refine */
  double rel_residual_double; /* --precision mixed: ||b - A x|| / ||b|| with the double A */
  const char *status; /* "ok", "refused" (fill), "unsupported" (no A^T for the method), "fail" */
  const gs_selection_t *sel; /* --format auto: what it chose and why (a copy owned by cmd_solve) */
  char note[256];
  double prepare_ms, error, speedup;
  /* total_s = what running this format costs a user end to end: its prepare (auto: the whole
   * selection at creation) + the solve (auto: its revisions inside) + the shared device CSR's
   * upload when the matrix's creation made it (upload_ms; with --format all, for a format
   * that reads it, and timed apart there when the creation did not upload: alone, a format
   * pays it in its prepare) + the preconditioner's setup when it was made before the solve
   * (the same for every row; an escalation's is inside the solve); speedup_total =
   * cusparse-csr's total / this one's */
  double total_s, speedup_total, setup_ms;
  double upload_ms; /* the device CSR's upload at the matrix's creation (in total_s), one row */
  gs_solve_stats_t stats;
  history_t hist;
} result_t;

static void hist_push(history_t *h, double it, double rel)
{
  if (h->n == h->cap) {
    int cap = h->cap ? 2 * h->cap : 256;
    double *a = realloc(h->it, (size_t)cap * sizeof *a);
    if (a) h->it = a;
    double *b = realloc(h->rel, (size_t)cap * sizeof *b);
    if (b) h->rel = b;
    if (!a || !b) return; /* out of memory: keep what we have */
    h->cap = cap;
  }
  h->it[h->n] = it;
  h->rel[h->n++] = rel;
}

static int monitor_cb(void *user, int it, double rnorm, double rel)
{
  monitor_t *m = user;
  if (m->hist) hist_push(m->hist, it, rel);
  if (m->print) printf("%8d  %.6e  %.6e\n", it, rnorm, rel);
  if (m->progress) {
    double now = cli_now();
    if (now - m->t0 > 1.0 && now - m->last > 0.1) {
      fprintf(stderr, "\r%s: iteration %d, relative residual %.3e, %.1f s ", m->label, it, rel,
              now - m->t0);
      fflush(stderr);
      m->drawn = 1;
      m->last = now;
    }
  }
  return 0;
}

/* Loads a vector of length n from path (b or x0: `dim` names what n counts, "rows" or
 * "columns"); on failure reports and returns 2. */
static int load_vector(const char *what, const char *path, gs_idx_t n, const char *dim,
                       double **out)
{
  gs_idx_t len = 0;
  gs_status_t st = gs_mm_read_vector(path, out, &len);
  if (st != GS_SUCCESS) return cli_fail_status(st);
  if (len != n) {
    free(*out);
    *out = NULL;
    return cli_fail(CLI_BAD_INPUT, "solve: %s (%s) has %d entries, the matrix has %d %s", what,
                    path, (int)len, (int)n, dim);
  }
  return CLI_OK;
}

/* What the method asks of the preconditioner and the format, checked by name before any
 * loading (and again once auto has chosen a method): 0 or the exit status after the message. */
static int check_method(gs_method_t m, const char *pc, const char *format, int all)
{
  if (!strcmp(pc, "auto")) pc = "none"; /* what it starts with; only CG escalates */
  const unsigned fl = gs_method_flags(m);
  const char *name = gs_method_string(m);
  if ((fl & GS_METHOD_LEAST_SQUARES) && strcmp(pc, "none") != 0)
    return cli_fail(CLI_BAD_INPUT, "solve: %s takes no preconditioner (--precond %s): it works "
                    "on A^T A, which the preconditioners of A do not approximate", name, pc);
  if ((fl & GS_METHOD_SYMMETRIC_PC) && !gs_precond_symmetric_at(gs_precond_find(pc)))
    return cli_fail(CLI_BAD_INPUT, "solve: %s applies M^-T too, and preconditioner %s has no "
                    "transpose solve: use jacobi, or ic0 for a symmetric matrix", name, pc);
  int b = all ? -1 : gs_spmv_backend_find(format);
  if ((fl & GS_METHOD_TRANSPOSE) && b >= 0 && !(gs_spmv_backend_flags(b) & GS_SPMV_FLAG_TRANSPOSE))
    return cli_fail(CLI_BAD_INPUT, "solve: %s needs the transpose product A^T x, and format %s "
                    "has none", name, format);
  return CLI_OK;
}

/* --precision: 0 double, 1 mixed (precision=mixed products), 2 mixed-refine */
enum { PREC_DOUBLE = CLI_PREC_DOUBLE, PREC_MIXED = CLI_PREC_MIXED, PREC_REFINE = CLI_PREC_REFINE };
static int g_prec;

/* persist_note: say why the iterations did not run persistent (stats.persistent_note) */
/* Whether --precond auto can escalate a solve by method m (the library's rule: CG; not the
 * inner solves of mixed-refine). */
static int o_escalates(gs_method_t m, int prec)
{
  return m == GS_SOLVER_CG && prec != PREC_REFINE;
}

/* --precond auto: what the escalation did (nothing printed when it did not, unless it could not
 * and --verbose asks). */
static void print_precond_auto(const gs_solve_stats_t *s, int verbose)
{
  if (s->precond_auto_iteration >= 0 && s->precond_auto_limit)
    printf("precond  auto: amg from iteration %d (the forecast passed the iteration limit): "
           "setup %.1f ms, %d levels, operator complexity %.3f\n", s->precond_auto_iteration,
           1e3 * s->precond_auto_setup_s, s->precond_auto_levels, s->precond_auto_complexity);
  else if (s->precond_auto_iteration >= 0)
    printf("precond  auto: amg from iteration %d (forecast %.3f s left without, amg predicted "
           "%.3f s): setup %.1f ms, %d levels, operator complexity %.3f\n",
           s->precond_auto_iteration, s->precond_auto_left_s, s->precond_auto_cost_s,
           1e3 * s->precond_auto_setup_s, s->precond_auto_levels, s->precond_auto_complexity);
  if (s->precond_auto_iteration >= 0 && s->precond_auto_note && *s->precond_auto_note)
    printf("         %s\n", s->precond_auto_note);
  else if (s->precond_auto_iteration < 0 && verbose && s->precond_auto_note && *s->precond_auto_note)
    printf("precond  auto: none throughout (%s)\n", s->precond_auto_note);
}

static void json_precond_auto(cli_json_t *j, const gs_solve_stats_t *s)
{
  json_obj_begin(j, "precond_auto");
  json_bool(j, "escalated", s->precond_auto_iteration >= 0);
  json_int(j, "iteration", s->precond_auto_iteration);
  json_num(j, "setup_ms", 1e3 * s->precond_auto_setup_s);
  json_bool(j, "for_limit", s->precond_auto_limit);
  json_num(j, "forecast_left_s", s->precond_auto_left_s);
  json_num(j, "predicted_cost_s", s->precond_auto_cost_s);
  json_int(j, "levels", s->precond_auto_levels);
  json_num(j, "operator_complexity", s->precond_auto_complexity);
  json_str(j, "note", s->precond_auto_note ? s->precond_auto_note : "");
  json_obj_end(j);
}

/* --solver auto: the method that failed and GMRES after it (nothing when none ran). */
static void print_fallback(const gs_solve_stats_t *s)
{
  if (s->fallback_iteration >= 0)
    printf("fallback %s stopped after %d iterations: %s%s%s%s; %s\n",
           gs_method_string(s->fallback_from), s->fallback_iteration,
           gs_reason_string(s->fallback_reason), *s->fallback_detail ? " (" : "",
           s->fallback_detail, *s->fallback_detail ? ")" : "", s->fallback_note);
  else if (s->fallback_note && *s->fallback_note)
    printf("fallback %s\n", s->fallback_note);
}

static void json_fallback(cli_json_t *j, const gs_solve_stats_t *s)
{
  json_obj_begin(j, "fallback");
  json_bool(j, "ran", s->fallback_iteration >= 0);
  if (s->fallback_iteration >= 0) {
    json_str(j, "from", gs_method_string(s->fallback_from));
    json_int(j, "iteration", s->fallback_iteration);
    json_str(j, "reason", gs_reason_string(s->fallback_reason));
    json_str(j, "detail", s->fallback_detail);
  }
  json_str(j, "note", s->fallback_note ? s->fallback_note : "");
  json_obj_end(j);
}

static void print_single(const result_t *r, int ones, int persist_note)
{
  const gs_solve_stats_t *s = &r->stats;
  const unsigned fl = gs_method_flags(s->method);
  if (g_prec == PREC_REFINE && r->refine.reliable)
    printf("refine   cg with reliable updates: %d iterations on the mixed product, r replaced "
           "by b - Ax %d time%s (%ld double products, %.4f s)\n", r->refine.inner_iterations,
           r->refine.outer, r->refine.outer == 1 ? "" : "s", r->refine.outer_spmv,
           r->refine.seconds_outer_spmv);
  else if (g_prec == PREC_REFINE)
    printf("refine   %d step%s of iterative refinement, %d inner iterations in all (mixed "
           "precision; last inner solve: %s)\n", r->refine.outer, r->refine.outer == 1 ? "" : "s",
           r->refine.inner_iterations, gs_reason_string(r->refine.last_inner_reason));
  printf("result   %s%s%s%s in %d iteration%s", gs_reason_describe(s->reason),
         *s->detail ? " (" : "", s->detail, *s->detail ? ")" : "", s->iterations,
         s->iterations == 1 ? "" : "s");
  if (s->restarts)
    printf(" (%d restart%s from the true residual)", s->restarts, s->restarts == 1 ? "" : "s");
  printf("\n");
  printf("residual ||b - Ax||/||b|| = %.3e", s->rel_residual);
  if (fl & GS_METHOD_LEAST_SQUARES)
    printf(", ||A^T (b - Ax)||/||A^T b|| = %.3e", s->rel_normal_residual);
  if (ones) printf(", error ||x - 1||/||1|| = %.3e", r->error);
  if (g_prec == PREC_MIXED)
    printf(" (of the float-valued matrix; with the double A: %.3e)", r->rel_residual_double);
  if (g_prec == PREC_REFINE) printf(" (double A)");
  printf("\n");
  if (s->method == GS_SOLVER_LSQR)
    printf("estimate ||A||_F ~ %.3e, cond(A) ~ %.3e (LSQR's)\n", s->anorm, s->acond);
  printf("time     solve %.4f s: SpMV %.4f s (%ld products, %.2f us each), precond %.4f s "
         "(%ld), setup %.2f ms, prepare %.2f ms\n",
         s->seconds_total, s->seconds_spmv, s->spmv_count,
         s->spmv_count ? 1e6 * s->seconds_spmv / (double)s->spmv_count : 0.0,
         s->seconds_precond, s->precond_count, 1e3 * s->seconds_setup, r->prepare_ms);
  if (s->method == GS_SOLVER_CG || s->method == GS_SOLVER_PIPECG ||
      s->method == GS_SOLVER_BICGSTAB) {
    const double vec_s = s->seconds_total - s->seconds_spmv - s->seconds_precond;
    printf("loop     %s, %d host check%s",
           s->persistent ? "persistent kernels" : s->graphs ? "CUDA Graphs" : "kernel by kernel",
           s->checks, s->checks == 1 ? "" : "s");
    if (*s->graphs_note) printf(" (graphs off: %s)", s->graphs_note);
    if (persist_note && *s->persistent_note)
      printf(" (not persistent: %s)", s->persistent_note);
    if (s->vector_bytes > 0 && vec_s > 0 && s->iterations > 0)
      printf(", %.2f us per iteration, vector part %.0f GB/s", 1e6 * s->seconds_total /
             s->iterations, 1e-9 * s->vector_bytes / vec_s);
    printf("\n");
  }
}

/* --format auto: what the choice cost, in one line: the selection at creation (the features,
 * the rule, the shared device CSR's upload, the timed candidates and the first format's
 * prepare: the prepare column of a named format) and the revisions inside the solve (candidates
 * built and timed on the side, counted in the solve's time), against the total. */
static void print_choice(const result_t *r)
{
  const gs_selection_t *sel = r->sel;
  printf("choice   %.2f ms: selection %.2f ms at creation (shared CSR upload %.2f ms), "
         "revisions %.2f ms inside the solve (%d format%s tried, %d switch%s); total %.4f s = "
         "prepare %.2f ms + ",
         1e3 * (sel->seconds + sel->progress_s), 1e3 * sel->seconds, 1e3 * sel->shared_csr_s,
         1e3 * sel->progress_s, sel->tried, sel->tried == 1 ? "" : "s", sel->switches,
         sel->switches == 1 ? "" : "es", r->total_s, r->prepare_ms);
  if (r->upload_ms > 0) printf("upload %.2f ms + ", r->upload_ms);
  if (r->setup_ms > 0) printf("precond setup %.2f ms + ", r->setup_ms);
  printf("solve %.4f s\n", r->stats.seconds_total);
}

/* precond auto escalates to AMG only with a forecast of at least 0.1 s left, which a matrix of
 * fewer entries than this rarely reaches (thousands of iterations): its AMG kernels' loading
 * (on the critical path when the matrix reads faster than the CUDA start-up: docs/design.md,
 * "Start-up") is not waited for then, only finished if it has started; an escalation would
 * load them in its setup. */
#define AMG_PRELOAD_NNZ ((gs_off_t)1 << 20)

/* lsq: a least-squares method, whose column rel.res is ||A^T r|| / ||A^T b|| instead of
 * ||r|| / ||b|| (what its convergence is about). */
static void print_table(const result_t *rows, int n, int ones, int lsq)
{
  printf("\n%-15s %10s %10s %10s %10s %10s %7s %10s %10s %8s %8s  %s\n", "format",
         "prepare ms", "SpMV ms", "us/SpMV", "solve s", "total s", "iters",
         lsq ? "rel.A^T r" : "rel.res", ones ? "error" : "-", "solve x", "total x", "stop");
  for (int i = 0; i < n; ++i) {
    const result_t *r = &rows[i];
    if (strcmp(r->status, "ok") != 0) {
      printf("%-15s %s: %s\n", r->format, r->status, r->note);
      continue;
    }
    const gs_solve_stats_t *s = &r->stats;
    char sp[32] = "-", spt[32] = "-", er[32] = "-";
    if (r->speedup > 0) snprintf(sp, sizeof sp, "%.2fx", r->speedup);
    if (r->speedup_total > 0) snprintf(spt, sizeof spt, "%.2fx", r->speedup_total);
    if (ones) snprintf(er, sizeof er, "%.2e", r->error);
    printf("%-15s %10.2f %10.3f %10.2f %10.4f %10.4f %7d %10.2e %10s %8s %8s  %s\n", r->format,
           r->prepare_ms, 1e3 * s->seconds_spmv,
           s->spmv_count ? 1e6 * s->seconds_spmv / (double)s->spmv_count : 0.0,
           s->seconds_total, r->total_s, s->iterations,
           lsq ? s->rel_normal_residual : s->rel_residual, er, sp, spt,
           gs_reason_string(s->reason));
  }
}

static void json_result(cli_json_t *j, const result_t *r, int ones, int with_history)
{
  const gs_solve_stats_t *s = &r->stats;
  json_obj_begin(j, NULL);
  json_str(j, "format", r->sel ? r->sel->chosen_name : r->format);
  if (r->sel) json_str(j, "format_requested", "auto");
  json_str(j, "status", r->status);
  if (strcmp(r->status, "ok") != 0) {
    json_str(j, "note", r->note);
    json_obj_end(j);
    return;
  }
  json_str(j, "method", gs_method_string(s->method)); /* GMRES after a fallback */
  json_num(j, "prepare_ms", r->prepare_ms);
  json_num(j, "upload_ms", r->upload_ms); /* at the matrix's creation, in total_s (one row) */
  {
    const int b = gs_spmv_backend_find(r->sel ? r->sel->chosen_name : r->format);
    json_bool(j, "shared_csr", b >= 0 && (gs_spmv_backend_flags(b) & GS_SPMV_FLAG_SHARED_CSR));
  }
  if (r->sel) cli_selection_json(j, "selection", r->sel);
  json_bool(j, "converged", gs_reason_converged(s->reason));
  json_str(j, "reason", gs_reason_string(s->reason));
  json_str(j, "detail", s->detail);
  json_int(j, "iterations", s->iterations);
  json_int(j, "restarts", s->restarts);
  json_num(j, "rel_residual", s->rel_residual);
  if (g_prec == PREC_MIXED) json_num(j, "rel_residual_double", r->rel_residual_double);
  if (g_prec == PREC_REFINE) {
    json_int(j, "outer_iterations", r->refine.outer);
    json_int(j, "inner_iterations", r->refine.inner_iterations);
    json_str(j, "last_inner_reason", gs_reason_string(r->refine.last_inner_reason));
    json_num(j, "inner_s", r->refine.seconds_inner);
    json_str(j, "refine_scheme", r->refine.reliable ? "reliable" : "loop");
    json_int(j, "outer_spmv", r->refine.outer_spmv);
    json_num(j, "outer_spmv_s", r->refine.seconds_outer_spmv);
  }
  json_num(j, "true_residual_norm", s->true_residual_norm);
  if (gs_method_flags(s->method) & GS_METHOD_LEAST_SQUARES) {
    json_num(j, "normal_residual_norm", s->normal_residual_norm);
    json_num(j, "rel_normal_residual", s->rel_normal_residual);
  }
  if (s->method == GS_SOLVER_LSQR) {
    json_num(j, "anorm_estimate", s->anorm);
    json_num(j, "cond_estimate", s->acond);
  }
  json_num(j, "rnorm0", s->rnorm0);
  json_num(j, "bnorm", s->bnorm);
  json_num(j, "error", ones ? r->error : NAN);
  json_num(j, "solve_s", s->seconds_total);
  json_num(j, "spmv_s", s->seconds_spmv);
  json_int(j, "spmv_count", s->spmv_count);
  json_num(j, "precond_s", s->seconds_precond);
  json_int(j, "precond_count", s->precond_count);
  json_int(j, "graphs", s->graphs);
  json_str(j, "graphs_note", s->graphs_note);
  json_int(j, "persistent", s->persistent);
  json_str(j, "persistent_note", s->persistent_note);
  json_precond_auto(j, s);
  json_fallback(j, s);
  json_int(j, "checks", s->checks);
  json_num(j, "vector_bytes", s->vector_bytes);
  json_num(j, "setup_s", s->seconds_setup);
  json_num(j, "speedup_vs_cusparse_csr", r->speedup > 0 ? r->speedup : NAN);
  json_num(j, "total_s", r->total_s);
  json_num(j, "speedup_total_vs_cusparse_csr", r->speedup_total > 0 ? r->speedup_total : NAN);
  if (r->sel) /* what choosing cost: the selection at creation + its revisions in the solve */
    json_num(j, "choice_ms", 1e3 * (r->sel->seconds + r->sel->progress_s));
  if (with_history) {
    json_arr_begin(j, "history");
    for (int i = 0; i < r->hist.n; ++i) {
      json_arr_begin(j, NULL);
      json_int(j, NULL, (long long)r->hist.it[i]);
      json_num(j, NULL, r->hist.rel[i]);
      json_arr_end(j);
    }
    json_arr_end(j);
  }
  json_obj_end(j);
}

static int write_plot(const char *path, const char *label, const char *method, const char *pc,
                      const result_t *rows, int n, int history)
{
  char title[512];
  int rc;
  const char *slash = strrchr(label, '/');
  if (slash && slash[1]) label = slash + 1; /* the file name is enough in a title */
  if (history) {
    svg_series_t *s = calloc((size_t)n + 1, sizeof *s);
    int k = 0;
    if (!s) return cli_fail(CLI_DEVICE, "out of host memory");
    for (int i = 0; i < n; ++i)
      if (!strcmp(rows[i].status, "ok") && rows[i].hist.n > 0)
        s[k++] = (svg_series_t){rows[i].format, rows[i].hist.it, rows[i].hist.rel, rows[i].hist.n};
    snprintf(title, sizeof title, "%s: %s, precond %s", label, method, pc);
    rc = svg_lines(path, title, "iteration", "||r|| / ||b||", s, k);
    free(s);
  } else {
    svg_bar_t *b = calloc((size_t)n + 1, sizeof *b);
    char(*sp)[64] = calloc((size_t)n + 1, sizeof *sp);
    if (!b || !sp) {
      free(b);
      free(sp);
      return cli_fail(CLI_DEVICE, "out of host memory");
    }
    for (int i = 0; i < n; ++i) {
      b[i].label = rows[i].format;
      if (strcmp(rows[i].status, "ok") != 0) b[i].note = rows[i].status;
      b[i].a = rows[i].stats.seconds_total;
      b[i].b = rows[i].total_s - rows[i].stats.seconds_total; /* the shared upload's share too */
      if (rows[i].speedup > 0 && rows[i].speedup_total > 0) {
        snprintf(sp[i], sizeof sp[i], "(%.2fx solve, %.2fx total)", rows[i].speedup,
                 rows[i].speedup_total);
        b[i].extra = sp[i];
      }
    }
    snprintf(title, sizeof title, "%s: %s, precond %s%s", label, method, pc,
             n > 1 ? " (speed-ups over cusparse-csr)" : "");
    rc = svg_bars(path, title, "seconds", "solve", "prepare (format build + upload)", b, n);
    free(b);
    free(sp);
  }
  return rc == 0 ? CLI_OK : cli_fail(CLI_BAD_INPUT, "solve: --plot: %s", gs_last_error());
}

/* Products of A (or A^T) one iteration of method m costs, for auto's amortisation. */
static double products_per_iteration(gs_method_t m)
{
  switch (m) {
  case GS_SOLVER_CG:
  case GS_SOLVER_PIPECG:
  case GS_SOLVER_GMRES: return 1.0;
  default: return 2.0; /* BiCGSTAB (two A x), BiCG, CGNR, LSQR (A x and A^T y) */
  }
}

/* --format auto: selects a format amortised over maxit iterations of method m, timed as
 * gs_spmv_create_timed times a format (the whole selection counts as its prepare). */
static gs_status_t create_auto(gs_context_t *ctx, gs_matrix_t *A, const char *opts, gs_method_t m,
                               int maxit, int cache, gs_spmv_t **S, double *seconds)
{
  gs_select_opts_t so;
  gs_select_opts_default(&so);
  so.expected_products = (maxit > 0 ? (double)maxit : 1.0) * products_per_iteration(m);
  so.need_transpose = (gs_method_flags(m) & GS_METHOD_TRANSPOSE) != 0;
  so.use_cache = cache;
  so.staged = 1; /* start light, revise at the checks from the products the solve has left */
  const double t0 = cli_now();
  gs_status_t st = gs_spmv_create_auto(S, ctx, A, opts, &so);
  if (st == GS_SUCCESS && (st = gs_context_sync(ctx)) != GS_SUCCESS) gs_spmv_destroy(S);
  *seconds = cli_now() - t0;
  return st;
}

/* ||b - H x|| / ||b|| on the host in double (H the double matrix): what a mixed solve's x
 * leaves of the user's system, whose reported residual is of the float-valued matrix. */
static gs_status_t residual_double(const gs_csr_t *H, const double *b, const double *x,
                                   double *rel)
{
  double *r = malloc(((size_t)H->m + 1) * sizeof *r), rr = 0.0, bb = 0.0;
  *rel = NAN; /* out of host memory: not known, and no reason to fail the solve */
  if (!r) return GS_SUCCESS;
  memcpy(r, b, (size_t)H->m * sizeof *r);
  gs_status_t st = gs_csr_spmv_host(H, GS_OP_N, -1.0, x, 1.0, r);
  for (gs_idx_t i = 0; st == GS_SUCCESS && i < H->m; ++i) {
    rr += r[i] * r[i];
    bb += b[i] * b[i];
  }
  *rel = bb > 0.0 ? sqrt(rr / bb) : sqrt(rr);
  free(r);
  return st;
}

/* --list-precond: the registry's preconditioners, each with its options. */
static int print_precond_list(void)
{
  printf("%-8s %s\n", "auto", "the default: cg starts without a preconditioner and goes on with "
         "amg (its options below) when the residual's rate says it pays; other methods: none");
  for (int i = 0; i < gs_precond_count(); ++i) {
    printf("%-8s %s\n", gs_precond_name_at(i), gs_precond_summary_at(i));
    gs_precond_option_info_t o;
    for (int k = 0; gs_precond_option_at(i, k, &o); ++k)
      printf("         %s.%s=%s%s%s%s  %s\n", gs_precond_name_at(i), o.key, o.def,
             o.values ? "  [" : "", o.values ? o.values : "", o.values ? "]" : "", o.help);
  }
  return CLI_OK;
}

/* The hierarchy of a multilevel preconditioner, as PyAMG prints it (nothing for the others). */
static void print_hierarchy(const gs_precond_t *M)
{
  gs_precond_info_t in;
  if (!M || gs_precond_info(M, &in) != GS_SUCCESS || in.levels == 0) return;
  printf("amg      %d levels, operator complexity %.3f, grid complexity %.3f, %s-cycle, %s; "
         "coarsest: %s\n", in.levels, in.operator_complexity, in.grid_complexity, in.cycle,
         in.smoother, in.coarse);
  printf("         level       rows      nonzeros  P nonzeros  rho(D^-1 A)  format\n");
  for (int l = 0; l < in.levels; ++l)
    printf("         %5d %10d %13lld %11lld  %11.4g  %s\n", l, (int)in.level[l].rows,
           (long long)in.level[l].nnz, (long long)in.level[l].p_nnz, in.level[l].rho,
           in.level[l].format);
  double total = 0;
  for (int k = 0; k < in.phases; ++k) total += in.phase[k].ms;
  printf("         setup %.2f ms:", total);
  for (int k = 0; k < in.phases; ++k)
    printf("%s %s %.2f", k ? "," : "", in.phase[k].name, in.phase[k].ms);
  printf("\n");
}

static void json_hierarchy(cli_json_t *j, const gs_precond_t *M)
{
  gs_precond_info_t in;
  if (!M || gs_precond_info(M, &in) != GS_SUCCESS || in.levels == 0) return;
  json_obj_begin(j, "hierarchy");
  json_num(j, "operator_complexity", in.operator_complexity);
  json_num(j, "grid_complexity", in.grid_complexity);
  json_str(j, "cycle", in.cycle);
  json_str(j, "smoother", in.smoother);
  json_str(j, "coarse", in.coarse);
  json_arr_begin(j, "levels");
  for (int l = 0; l < in.levels; ++l) {
    json_obj_begin(j, NULL);
    json_int(j, "rows", in.level[l].rows);
    json_int(j, "nnz", in.level[l].nnz);
    json_int(j, "p_nnz", in.level[l].p_nnz);
    json_num(j, "rho", in.level[l].rho);
    json_str(j, "format", in.level[l].format);
    json_obj_end(j);
  }
  json_arr_end(j);
  json_obj_begin(j, "setup_ms");
  for (int k = 0; k < in.phases; ++k) json_num(j, in.phase[k].name, in.phase[k].ms);
  json_obj_end(j);
  json_obj_end(j);
}

int cmd_solve(int argc, char **argv)
{
  if (cli_has_opt(argc, argv, "--gpus") || cli_has_opt(argc, argv, "--distributed"))
    return cmd_solve_dist(argc, argv);
  const char *paths[2] = {NULL, NULL}, *format = NULL, *grid = NULL;
  const char *x0_path = NULL, *out_path = NULL, *plot_path = NULL, *v;
  int npaths = 0, json = 0, monitor = 0, rc = CLI_OK, no_cache = 0, verbose = 0;
  long stencil = 27, dims[3] = {0, 0, 0};
  int stencil_given = 0;
  char spmv_opts[1024] = "", inner_opts[1024] = "";
  int list_precond = 0;
  cli_solve_opts_t so; /* method, preconditioner, tolerances, ... (apps/solve_opts.h) */
  cli_solve_opts_init(&so, CLI_SOLVE_ONE);

  static char usage[16384]; /* the help, with the library's methods and preconditioners */
  cli_solve_help(usage, sizeof usage, usage_text, CLI_SOLVE_ONE);
  const cli_switch_t sw[] = {{"--json", NULL, &json},         {"--monitor", NULL, &monitor},
                             {"--no-cache", NULL, &no_cache}, {"--verbose", "-v", &verbose},
                             {"--list-precond", NULL, &list_precond}, {NULL, NULL, NULL}};
  for (int i = 1; i < argc; ++i) {
    int r;
    const char *a = argv[i];
    if ((r = cli_arg_switch(a, usage, sw)) != 0) {
      if (r == 2) return CLI_OK;
    } else if ((r = cli_solve_opt(&so, argc, argv, &i)) != 0) {
      if (r < 0) return CLI_BAD_INPUT;
    } else if ((r = cli_opt(argc, argv, &i, "--format", &v)) != 0) {
      if (r < 0) return CLI_BAD_INPUT;
      format = v;
    } else if ((r = cli_spmv_opt(argc, argv, &i, CLI_SPMV_OPT, spmv_opts, sizeof spmv_opts)) != 0) {
      if (r < 0) return CLI_BAD_INPUT;
    } else if ((r = cli_opt(argc, argv, &i, "--grid", &v)) != 0) {
      if (r < 0) return CLI_BAD_INPUT;
      grid = v;
    } else if ((r = cli_opt(argc, argv, &i, "--stencil", &v)) != 0) {
      if (r < 0 || cli_parse_int("--stencil", v, 1, 27, &stencil)) return CLI_BAD_INPUT;
      stencil_given = 1;
    } else if ((r = cli_opt(argc, argv, &i, "--x0", &v)) != 0) {
      if (r < 0) return CLI_BAD_INPUT;
      x0_path = v;
    } else if ((r = cli_opt(argc, argv, &i, "--output", &v)) != 0 ||
               (r = cli_opt(argc, argv, &i, "-o", &v)) != 0) {
      if (r < 0) return CLI_BAD_INPUT;
      out_path = v;
    } else if ((r = cli_opt(argc, argv, &i, "--plot", &v)) != 0) {
      if (r < 0) return CLI_BAD_INPUT;
      plot_path = v;
    } else if ((rc = cli_arg_positional("solve", a, paths, 2, &npaths,
                                        "too many files ('%s'): give A.mtx and at most b.mtx")) !=
               CLI_OK) {
      return rc;
    }
  }

  /* Names first, so that a typo costs no loading. */
  if (list_precond) return print_precond_list();
  if ((rc = cli_solve_opts_finish(&so)) != CLI_OK) return rc;
  /* the generated system of --grid: as `gen laplace` makes it, b = A*1 as with --gpus */
  if (grid && npaths > 0)
    return cli_fail(CLI_BAD_INPUT, "solve: give a matrix file or --grid, not both");
  if (stencil_given && !grid)
    return cli_fail(CLI_BAD_INPUT, "solve: --stencil goes with --grid (a generated Laplacian)");
  if (grid && (rc = cli_grid_check(grid, stencil, dims)) != CLI_OK) return rc;
  const int method = so.o.method, pc_auto = !strcmp(so.precond, "auto");
  const char *solver = so.solver ? so.solver : "auto", *pc = so.precond;
  const char *pc_opts = so.precond_opts, *precision = so.precision;
  gs_refine_opts_t ropts = so.refine;
  const double rtol = so.o.rtol, atol = so.o.atol;
  const long maxit = so.o.maxit, restart = so.o.restart;
  const long check_every = so.check_every_given ? so.o.check_every : -1; /* -1: automatic */
  const int graphs = so.o.graphs, persistent = so.o.persistent;
  const gs_reorder_kind_t reorder = (gs_reorder_kind_t)so.reorder;
  g_prec = so.prec;
  if (reorder != GS_REORDER_NONE && g_prec == PREC_REFINE) /* gs_solve_refine is not wrapped */
    return cli_fail(CLI_BAD_INPUT, "solve: --reorder %s goes with --precision double or mixed "
                    "(not mixed-refine)", gs_reorder_string(reorder));
  if (cli_spmv_precision(spmv_opts) == GS_PRECISION_FLOAT) /* --spmv-opt [X.]precision=float */
    return cli_fail(CLI_BAD_INPUT, "solve: precision=float is for spmv and check (float "
                    "vectors); solve takes double, mixed or mixed-refine");
  if (g_prec != PREC_DOUBLE && format && !strcmp(format, "auto"))
    return cli_fail(CLI_BAD_INPUT, "solve: --format auto selects among double products; with "
                    "--precision %s name a format (csr-vector, ell, dia, hyb, ...)", precision);
  if (g_prec != PREC_DOUBLE && !format) format = "csr-vector";
  if (g_prec != PREC_DOUBLE) { /* the mixed products' options: the user's, precision=mixed */
    char *dst = g_prec == PREC_MIXED ? spmv_opts : inner_opts;
    const char *base = spmv_opts;
    char tmp[1024];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s%sprecision=mixed", base, *base ? "," : "") >=
        sizeof tmp)
      return cli_fail(CLI_BAD_INPUT, "too many SpMV options (at most %zu characters)",
                      sizeof tmp - 1);
    snprintf(dst, sizeof spmv_opts, "%s", tmp);
  }
  if (g_prec != PREC_DOUBLE && gs_spmv_options_check(spmv_opts) != GS_SUCCESS)
    return cli_fail(CLI_BAD_INPUT, "solve: %s", gs_last_error());
  int nb = gs_spmv_backend_count(), all = format && !strcmp(format, "all");
  if (!format) format = "auto";
  const int is_auto = !strcmp(format, "auto");
  if (!all && !is_auto && gs_spmv_backend_find(format) < 0)
    return cli_fail(CLI_BAD_INPUT, "solve: unknown SpMV format '%s' (see 'gpusolve spmv --list')",
                    format);
  int nsel = all ? nb : 1;
  if (nsel == 0) return cli_fail(CLI_DEVICE, "solve: this build has no SpMV format");
  if (method != GS_SOLVER_AUTO && (rc = check_method((gs_method_t)method, pc, format, all)) != 0)
    return rc;
  /* Output paths before any work: a typo must not cost the whole solve */
  if (out_path && (rc = cli_out_check("solve", "-o", out_path, 1)) != CLI_OK) return rc;
  if (plot_path && (rc = cli_out_check("solve", "--plot", plot_path, 0)) != CLI_OK) return rc;

  gs_csr_t *H = NULL;
  gs_context_t *ctx = NULL;
  gs_matrix_t *A = NULL;
  gs_precond_t *M = NULL;
  gs_spmv_t *S = NULL, *Si = NULL; /* Si: mixed-refine's inner (mixed) product */
  gs_selection_t *sel_copy = NULL;
  gs_reorder_t *R = NULL; /* --reorder: A solved as P A P^T, b and x permuted on the device */
  gs_reorder_info_t rinfo = {0};
  double *h_b = NULL, *h_x0 = NULL, *h_x = NULL, *h_keep = NULL, *d_b = NULL, *d_x = NULL;
  result_t *rows = calloc((size_t)nsel, sizeof *rows);
  gs_status_t st = GS_SUCCESS;
  const char *label = paths[0];
  char grid_label[160];
  if (!rows) return cli_fail(CLI_DEVICE, "out of host memory");

  /* the CUDA start-up and the kernels' loading run while the matrix is read; precond auto's
   * AMG (an escalation) optional: see AMG_PRELOAD_NNZ */
  char preload[1024];
  cli_context_prefetch_opt(cli_preload_list(preload, sizeof preload, format, pc_auto ? NULL : pc),
                           pc_auto ? "amg" : NULL);
  if (grid) {
    rc = cli_grid_laplace(dims, stencil, &H, grid_label, sizeof grid_label);
    label = grid_label;
  } else {
    rc = paths[0] ? cli_load_matrix(paths[0], &H) : cli_default_matrix(&H, &label);
  }
  if (rc) goto done;
  const gs_idx_t nrows = H->m, n = H->n; /* b has nrows entries, x has n */
  /* auto: lsqr for a rectangular matrix; for a square one the features decide, below */
  gs_method_t m0 = method != GS_SOLVER_AUTO ? (gs_method_t)method
                   : nrows != n             ? GS_SOLVER_LSQR
                                            : GS_SOLVER_AUTO;
  if ((gs_method_flags(m0) & GS_METHOD_SQUARE) && nrows != n) {
    rc = cli_fail(CLI_BAD_INPUT, "solve: %s is %d x %d: %s needs a square matrix (cgnr and lsqr "
                  "solve least-squares problems)", label, (int)nrows, (int)n,
                  gs_method_string(m0));
    goto done;
  }
  if (method == GS_SOLVER_AUTO && m0 != GS_SOLVER_AUTO &&
      (rc = check_method(m0, pc, format, all)) != CLI_OK)
    goto done;
  if (reorder != GS_REORDER_NONE && nrows != n) {
    rc = cli_fail(CLI_BAD_INPUT, "solve: %s is %d x %d: --reorder %s renumbers rows and columns "
                  "alike and needs a square matrix", label, (int)nrows, (int)n,
                  gs_reorder_string(reorder));
    goto done;
  }
  int ones = paths[1] == NULL;
  if (paths[1] && (rc = load_vector("b", paths[1], nrows, "rows", &h_b)) != CLI_OK) goto done;
  if (x0_path && (rc = load_vector("x0", x0_path, n, "columns", &h_x0)) != CLI_OK) goto done;
  h_x = malloc(((size_t)n + 1) * sizeof *h_x);
  if (!h_x) {
    rc = cli_fail(CLI_DEVICE, "out of host memory");
    goto done;
  }
  if (ones) { /* b = A * 1 */
    h_b = malloc(((size_t)nrows + 1) * sizeof *h_b);
    for (gs_idx_t i = 0; h_b && i < n; ++i) h_x[i] = 1.0;
    if (!h_b || (st = gs_csr_spmv_host(H, GS_OP_N, 1.0, h_x, 0.0, h_b)) != GS_SUCCESS) {
      rc = h_b ? cli_fail_status(st) : cli_fail(CLI_DEVICE, "out of host memory");
      goto done;
    }
  }

  if ((rc = cli_context_opt(&ctx, H->nnz >= AMG_PRELOAD_NNZ)) != CLI_OK) goto done;
  if (reorder != GS_REORDER_NONE) {
    /* auto's products: up to 1000 iterations of the method (cg's one product for auto) */
    const double its = maxit < 1000 ? (double)maxit : 1000.0;
    const double products = its * products_per_iteration(m0 == GS_SOLVER_AUTO ? GS_SOLVER_CG : m0);
    if ((st = gs_reorder_create(&R, ctx, H, reorder, products)) != GS_SUCCESS ||
        (st = gs_reorder_info(R, &rinfo)) != GS_SUCCESS)
      goto fail;
  }
  /* without a reordering the matrix keeps H itself (no copy); HA is H either way */
  if ((st = R ? gs_matrix_create(&A, ctx, gs_reorder_csr(R)) : gs_matrix_create_take(&A, ctx, &H)) !=
      GS_SUCCESS)
    goto fail;
  const gs_csr_t *HA = H ? H : gs_matrix_host(A);
  const double upload_s = gs_matrix_upload_seconds(A); /* made with A: in no prepare below */
  const gs_features_t *f = gs_matrix_features(A);
  gs_method_t m = method == GS_SOLVER_AUTO ? gs_solve_auto_method(A) : (gs_method_t)method;
  if (m != m0 && (rc = check_method(m, pc, format, all)) != CLI_OK) goto done;
  const int lsq = (gs_method_flags(m) & GS_METHOD_LEAST_SQUARES) != 0;
  const int need_t = (gs_method_flags(m) & GS_METHOD_TRANSPOSE) != 0;
  if (g_prec == PREC_REFINE && lsq) {
    rc = cli_fail(CLI_BAD_INPUT, "solve: --precision mixed-refine refines square systems A x = "
                  "b; %s is a least-squares method", gs_method_string(m));
    goto done;
  }
  /* x = 1 is the solution of b = A*1 when A has full column rank, which needs m >= n */
  const int err_ones = ones && nrows >= n;
  /* "none" needs no object (and a rectangular matrix has no preconditioner of its own) */
  if (strcmp(pc, "none") != 0 && !pc_auto &&
      (st = gs_precond_create_opts(&M, ctx, A, pc, pc_opts)) != GS_SUCCESS)
    goto fail;
  if ((st = gs_dmalloc(ctx, (void **)&d_b, (size_t)nrows * sizeof *d_b, "b")) != GS_SUCCESS ||
      (st = gs_dmalloc(ctx, (void **)&d_x, (size_t)n * sizeof *d_x, "x")) != GS_SUCCESS ||
      (st = gs_copy_to_device(ctx, d_b, h_b, (size_t)nrows * sizeof *h_b)) != GS_SUCCESS)
    goto fail;

  if (!json) {
    printf("matrix   %s: %d x %d, %lld nonzeros%s%s\n", label, (int)nrows, (int)n,
           (long long)HA->nnz, f->numerically_symmetric ? ", symmetric" : "",
           f->diagonal_positive ? ", positive diagonal" : "");
    printf("system   b = %s, x0 = %s\n",
           !ones      ? paths[1]
           : err_ones ? "A*1 (the error against x = 1 is reported)"
                      : "A*1 (a wide A: the minimum-norm solution is not x = 1)",
           x0_path ? x0_path : "0");
    const char *why = method != GS_SOLVER_AUTO ? ""
                      : m == GS_SOLVER_CG      ? " (auto: symmetric, positive diagonal)"
                      : m == GS_SOLVER_LSQR    ? " (auto: rectangular, least squares)"
                                               : " (auto: not symmetric with a positive diagonal)";
    if (pc_auto)
      printf("solver   %s%s, precond auto (%s), rtol %g, atol %g, maxit %ld",
             gs_method_string(m), why,
             o_escalates(m, g_prec) ? "none; amg when the forecast says it pays"
                                    : "none: only cg escalates to amg",
             rtol, atol, maxit);
    else
      printf("solver   %s%s, precond %s (setup %.2f ms), rtol %g, atol %g, maxit %ld",
             gs_method_string(m), why, pc, 1e3 * gs_precond_setup_seconds(M), rtol, atol,
             maxit);
    if (g_prec == PREC_MIXED) printf(", mixed precision (float values)");
    if (g_prec == PREC_REFINE && m == GS_SOLVER_CG && ropts.reliable_delta > 0.0)
      printf(", mixed precision with reliable updates (delta %g)", ropts.reliable_delta);
    else if (g_prec == PREC_REFINE)
      printf(", mixed-precision iterative refinement (inner rtol %g)", ropts.inner_rtol);
    if (m == GS_SOLVER_GMRES) printf(", restart %ld", restart);
    printf("\ndevice   %s\n", gs_context_device_name(ctx));
    if (R)
      printf("reorder  %s%s: %.2f ms, bandwidth %d -> %d, x lines %lld -> %lld%s%s\n",
             gs_reorder_string(rinfo.kind), reorder == GS_REORDER_AUTO ? " (auto)" : "",
             1e3 * rinfo.seconds, (int)rinfo.bandwidth_before, (int)rinfo.bandwidth_after,
             rinfo.lines_before, rinfo.lines_after, *rinfo.note ? "; " : "", rinfo.note);
    print_hierarchy(M);
    if (monitor) printf("# iteration  ||r||  ||r||/||b||\n");
  }

  gs_solve_opts_t o;
  gs_solve_opts_default(&o);
  o.method = m;
  o.rtol = rtol;
  o.atol = atol;
  o.maxit = (int)maxit;
  o.restart = (int)restart;
  /* automatic unless given; with --monitor the library reads every iteration */
  o.check_every = check_every >= 0 ? (int)check_every : 0;
  o.graphs = graphs;
  /* DEFAULT: the library's rule, auto with --format auto (a selected backend) and off with a
   * named one, --format all's rows included (each names its backend) */
  o.persistent = persistent;
  /* --precond auto: CG escalates to amg (not inside mixed-refine's inner solves, each of which
   * would set it up again) */
  o.precond_auto = pc_auto && o_escalates(m, g_prec) ? GS_PRECOND_AUTO_AMG : GS_PRECOND_AUTO_OFF;
  o.precond_auto_opts = pc_opts;
  /* --solver auto: the guess of CG or BiCGSTAB may fail where GMRES cannot (not inside
   * mixed-refine, whose inner solves restart from its own residuals) */
  o.fallback = method == GS_SOLVER_AUTO && g_prec != PREC_REFINE ? GS_FALLBACK_GMRES
                                                                  : GS_FALLBACK_OFF;
  /* The default falls back quietly (a large system runs the loop, as it should): why is news
   * to a user who asked for on or auto, or for the details. */
  const int persist_note = persistent != GS_PERSISTENT_DEFAULT || verbose;
  o.x0_given = h_x0 != NULL;
  monitor_t mon = {0};
  mon.print = monitor && !json;
  /* The progress line on a terminal needs a monitor, which reads the norm every iteration: it
   * is drawn only where that costs nothing new (--monitor, or a --check-every given). */
  mon.progress = isatty(2) && (monitor || check_every > 0);
  if (mon.print || mon.progress || monitor) {
    o.monitor = monitor_cb;
    o.monitor_user = &mon;
  }
  int failures = 0, unconverged = 0, fail_code = CLI_OK, warmed = 0;
  /* all: the matrix's device CSR, shared by the CSR-based formats, is uploaded by the first of
   * them and kept; timed here on its own so that no row's prepare holds it (a user running one
   * such format alone pays it in its prepare: whole-solve comparisons add it to theirs) */
  double shared_csr_s = upload_s; /* the matrix's creation uploaded it, where it could */
  if (all && shared_csr_s == 0.0) {
    gs_spmv_t *T = NULL;
    if (gs_spmv_create_timed(&T, ctx, A, "csr-scalar", NULL, &shared_csr_s) != GS_SUCCESS)
      shared_csr_s = 0.0; /* left to the formats' own prepares to report */
    gs_spmv_destroy(&T);
  }
  const result_t *first_bad = NULL;

  for (int k = 0; k < nsel; ++k) {
    result_t *r = &rows[k];
    r->format = all ? gs_spmv_backend_name(k) : format;
    r->error = NAN;
    double prep_s = 0.0;
    if (is_auto && !all) {
      st = create_auto(ctx, A, spmv_opts, m, o.maxit, !no_cache, &S, &prep_s);
      if (st == GS_SUCCESS && (sel_copy = malloc(sizeof *sel_copy)) != NULL) {
        *sel_copy = *gs_spmv_selection(S);
        r->sel = sel_copy;
        cli_selection_warn(sel_copy);
      }
    } else {
      st = gs_spmv_create_timed(&S, ctx, A, r->format, spmv_opts, &prep_s);
    }
    if (st == GS_SUCCESS && g_prec == PREC_REFINE) { /* and the mixed product of the format */
      double pi = 0.0;
      st = gs_spmv_create_timed(&Si, ctx, A, r->format, inner_opts, &pi);
      prep_s += pi;
      if (st != GS_SUCCESS) gs_spmv_destroy(&S);
    }
    r->prepare_ms = 1e3 * prep_s;
    if (st == GS_ERR_UNSUPPORTED && g_prec != PREC_DOUBLE && all) { /* no mixed kernels */
      r->status = "unsupported";
      snprintf(r->note, sizeof r->note, "%s", gs_last_error());
      continue;
    }
    if (st == GS_SUCCESS) { /* warm-up: first-call costs of the CUDA libraries and of this
                               format's kernels stay out of the timings (GMRES's first solve in
                               a process can take 3x its steady time) */
      gs_solve_opts_t w = o;
      gs_solve_stats_t ws;
      w.monitor = NULL;
      w.x0_given = 0;
      w.maxit = warmed ? 2 : m == GS_SOLVER_GMRES ? 2 * (int)restart + 1 : 3;
      if (need_t && !gs_spmv_supports(S, GS_OP_T)) { /* before any work with this format */
        gs_spmv_destroy(&S);
        if (!all) {
          rc = cli_fail(CLI_BAD_INPUT, "solve: %s needs the transpose product A^T x, and format "
                        "%s has none for this matrix", gs_method_string(m), r->format);
          goto done;
        }
        r->status = "unsupported";
        snprintf(r->note, sizeof r->note, "no transpose product for %s", gs_method_string(m));
        continue;
      }
      st = gs_solve(ctx, &w, S, M, d_b, d_x, &ws);
      if (st == GS_SUCCESS && Si) st = gs_solve(ctx, &w, Si, M, d_b, d_x, &ws);
      warmed = 1;
    }
    if (st == GS_SUCCESS && h_x0)
      st = gs_copy_to_device(ctx, d_x, h_x0, (size_t)n * sizeof *h_x0);
    if (st == GS_SUCCESS) {
      if (mon.print && all) printf("# format %s\n", r->format);
      mon.label = r->format;
      mon.hist = monitor ? &r->hist : NULL;
      mon.t0 = cli_now();
      mon.last = 0.0;
      mon.drawn = 0;
      if (g_prec == PREC_REFINE)
        st = gs_solve_refine(ctx, &o, &ropts, S, Si, M, d_b, d_x, &r->stats, &r->refine);
      else if (R) /* b, x0 and x in the file's numbering, permuted on the device */
        st = gs_solve_reordered(ctx, &o, R, S, M, d_b, d_x, &r->stats);
      else
        st = gs_solve(ctx, &o, S, M, d_b, d_x, &r->stats);
      if (mon.drawn) fputs("\r\033[K", stderr);
      if (r->sel) *sel_copy = *gs_spmv_selection(S); /* a staged selection revised in the solve */
    }
    if (st == GS_SUCCESS) st = gs_copy_to_host(ctx, h_x, d_x, (size_t)n * sizeof *h_x);
    if (st == GS_SUCCESS && g_prec == PREC_MIXED)
      st = residual_double(HA, h_b, h_x, &r->rel_residual_double);
    gs_spmv_destroy(&S);
    gs_spmv_destroy(&Si);
    if (st != GS_SUCCESS) {
      r->status = st == GS_ERR_FORMAT_FILL ? "refused" : "fail";
      snprintf(r->note, sizeof r->note, "%s", gs_last_error());
      if (!all) goto fail; /* one format: its error is the answer */
      if (st != GS_ERR_FORMAT_FILL) {
        failures++;
        if (cli_status_code(st) > fail_code) fail_code = cli_status_code(st);
      }
      continue;
    }
    r->status = "ok";
    if (err_ones) {
      double e = 0.0;
      for (gs_idx_t i = 0; i < n; ++i) e += (h_x[i] - 1.0) * (h_x[i] - 1.0);
      r->error = n > 0 ? sqrt(e / (double)n) : 0.0;
    }
    int conv = gs_reason_converged(r->stats.reason);
    if (!conv && !first_bad) first_bad = r;
    unconverged += !conv;
    if (out_path && !h_keep && (conv || k == nsel - 1)) { /* the first converged x, else the last */
      h_keep = h_x;
      h_x = malloc(((size_t)n + 1) * sizeof *h_x);
      if (!h_x) {
        rc = cli_fail(CLI_DEVICE, "out of host memory");
        goto done;
      }
    }
  }

  /* totals, and the speed-ups of the solve and of the total over cusparse-csr in this run */
  double base = 0.0, base_total = 0.0;
  for (int k = 0; k < nsel; ++k) {
    result_t *r = &rows[k];
    if (strcmp(r->status, "ok") != 0) continue;
    const int b = all ? gs_spmv_backend_find(r->format) : -1;
    const int shared = b >= 0 && (gs_spmv_backend_flags(b) & GS_SPMV_FLAG_SHARED_CSR);
    r->setup_ms = 1e3 * gs_precond_setup_seconds(M);
    if (!all) r->upload_ms = 1e3 * upload_s;
    r->total_s = 1e-3 * (r->prepare_ms + r->setup_ms + r->upload_ms) +
                 (shared ? shared_csr_s : 0.0) + r->stats.seconds_total;
    if (!strcmp(r->format, "cusparse-csr")) {
      base = r->stats.seconds_total;
      base_total = r->total_s;
    }
  }
  for (int k = 0; k < nsel; ++k) {
    result_t *r = &rows[k];
    if (strcmp(r->status, "ok") != 0) continue;
    if (base > 0 && r->stats.seconds_total > 0) r->speedup = base / r->stats.seconds_total;
    if (base_total > 0 && r->total_s > 0) r->speedup_total = base_total / r->total_s;
  }

  if (json) {
    cli_json_t j;
    json_begin(&j, stdout);
    json_str(&j, "command", "solve");
    json_str(&j, "matrix", label);
    json_int(&j, "rows", nrows);
    json_int(&j, "cols", n);
    json_int(&j, "nnz", HA->nnz);
    json_bool(&j, "symmetric", f->numerically_symmetric);
    json_str(&j, "rhs", ones ? "A*ones" : paths[1]);
    json_str(&j, "x0", x0_path);
    json_str(&j, "solver", gs_method_string(m));
    json_str(&j, "solver_requested", solver);
    json_str(&j, "precond", pc);
    json_str(&j, "precision", precision);
    if (g_prec == PREC_REFINE) json_num(&j, "inner_rtol", ropts.inner_rtol);
    json_num(&j, "precond_setup_ms", 1e3 * gs_precond_setup_seconds(M));
    if (*pc_opts) json_str(&j, "precond_options", pc_opts);
    json_hierarchy(&j, M);
    json_num(&j, "rtol", rtol);
    json_num(&j, "atol", atol);
    json_int(&j, "maxit", maxit);
    json_int(&j, "restart", restart);
    json_str(&j, "device", gs_context_device_name(ctx));
    json_str(&j, "reorder_requested", gs_reorder_string(reorder));
    cli_json_reorder(&j, R, &rinfo);
    if (all) json_num(&j, "shared_csr_ms", 1e3 * shared_csr_s);
    json_num(&j, "matrix_upload_ms", 1e3 * upload_s);
    json_arr_begin(&j, "results");
    for (int k = 0; k < nsel; ++k) json_result(&j, &rows[k], err_ones, monitor);
    json_arr_end(&j);
    json_end(&j);
  } else if (all) {
    print_table(rows, nsel, err_ones, lsq);
    printf("shared device CSR upload %.2f ms, before the rows, in no prepare above: read by",
           1e3 * shared_csr_s);
    for (int k = 0; k < nsel; ++k)
      if (gs_spmv_backend_flags(k) & GS_SPMV_FLAG_SHARED_CSR)
        printf(" %s", gs_spmv_backend_name(k));
    printf(" (alone, each pays it in its prepare)\n");
    printf("total s = prepare + solve, plus the shared upload for the formats that read it; "
           "solve x and total x: speed-ups over cusparse-csr\n");
  } else if (rows[0].sel) {
    const gs_selection_t *sel = rows[0].sel;
    printf("format   %s (auto: prepare and selection %.2f ms, of which %.2f ms its own prepare)\n",
           sel->chosen_name, rows[0].prepare_ms, 1e3 * sel->times[sel->chosen].prepare_s);
    printf("         ");
    cli_selection_line(stdout, sel);
    print_choice(&rows[0]);
    if (verbose) cli_selection_details(stdout, sel);
    print_single(&rows[0], err_ones, persist_note);
    print_precond_auto(&rows[0].stats, verbose);
    print_fallback(&rows[0].stats);
  } else {
    printf("format   %s (prepare %.2f ms; total %.4f s with the solve", rows[0].format,
           rows[0].prepare_ms, rows[0].total_s);
    if (rows[0].upload_ms > 0)
      printf(" and the device CSR's upload, %.2f ms at the matrix's creation", rows[0].upload_ms);
    printf(")\n");
    print_single(&rows[0], err_ones, persist_note);
    print_precond_auto(&rows[0].stats, verbose);
    print_fallback(&rows[0].stats);
  }
  fflush(stdout);

  if (out_path && h_keep && (st = gs_mm_write_vector(out_path, h_keep, n)) != GS_SUCCESS) {
    rc = cli_fail_status(st);
    goto done;
  }
  if (plot_path && (rc = write_plot(plot_path, label, gs_method_string(m), pc, rows, nsel,
                                    monitor)) != CLI_OK)
    goto done;
  int solved = 0;
  for (int k = 0; k < nsel; ++k) solved += !strcmp(rows[k].status, "ok");
  if (!solved && !failures) {
    rc = cli_fail(CLI_BAD_INPUT, "solve: no format could run %s on this matrix (first: %s: %s)",
                  gs_method_string(m), rows[0].format, rows[0].note);
  } else if (failures) {
    const result_t *ff = rows;
    while (strcmp(ff->status, "fail") != 0) ++ff;
    rc = cli_fail(fail_code, "solve: %d format%s failed (first: %s: %s)", failures,
                  failures > 1 ? "s" : "", ff->format, ff->note);
  } else if (unconverged) {
    const gs_solve_stats_t *s = &first_bad->stats;
    char why[256];
    snprintf(why, sizeof why, "%s%s%s%s after %d iteration%s, relative residual %.3e",
             gs_reason_describe(s->reason), *s->detail ? " (" : "", s->detail,
             *s->detail ? ")" : "", s->iterations, s->iterations == 1 ? "" : "s",
             s->rel_residual);
    if (all)
      rc = cli_fail(CLI_NOT_CONVERGED, "solve: not converged with %d of %d formats (%s: %s)",
                    unconverged, nsel, first_bad->format, why);
    else
      rc = cli_fail(CLI_NOT_CONVERGED, "solve: not converged: %s", why);
  }
  goto done;
fail:
  rc = cli_fail_status(st);
done:
  for (int k = 0; k < nsel; ++k) {
    free(rows[k].hist.it);
    free(rows[k].hist.rel);
  }
  free(rows);
  free(sel_copy);
  gs_spmv_destroy(&S);
  gs_spmv_destroy(&Si);
  gs_precond_destroy(&M);
  gs_dfree(ctx, d_b);
  gs_dfree(ctx, d_x);
  free(h_b);
  free(h_x0);
  free(h_x);
  free(h_keep);
  gs_matrix_destroy(&A);
  gs_reorder_destroy(&R);
  gs_context_destroy(&ctx);
  gs_csr_destroy(&H);
  return rc;
}
