/* apps/cli.h: what the gpusolve subcommands share: exit codes, error reporting, option
 * parsing helpers, a small JSON writer, matrix loading. The CLI prints; the library never does. */
#ifndef GS_APPS_CLI_H
#define GS_APPS_CLI_H

#include <stdio.h>

#include "gpusolve.h"

/* Exit status of every subcommand (DESIGN.md "The gpusolve CLI"). */
enum {
  CLI_OK = 0,          /* success (solve: converged) */
  CLI_NOT_CONVERGED = 1,
  CLI_BAD_INPUT = 2,   /* bad usage or bad input */
  CLI_DEVICE = 3       /* no GPU, device or runtime failure */
};

/* Subcommands: each parses its own argv (argv[0] is the subcommand name). */
int cmd_info(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_spmv(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_solve(int argc, char **argv);
int cmd_select(int argc, char **argv);
int cmd_batch(int argc, char **argv);
/* solve and spmv with --gpus: the multi-GPU forms (apps/cmd_dist.c) */
int cmd_solve_dist(int argc, char **argv);
int cmd_spmv_dist(int argc, char **argv);
/** --grid NX[xNY[xNZ]] (missing sizes are 1): 0, or the exit status after the message. */
int cli_parse_grid(const char *s, long dims[3]);
/** --grid and --stencil of solve (one GPU, --gpus) and spmv --gpus, checked as `gen laplace`
 *  checks them: a stencil of 3, 5, 7, 9 or 27 points on a grid of at least its dimensions, at
 *  most 2^31-1 points; dims gets the sizes. 0, or the exit status after the message. */
int cli_grid_check(const char *grid, long stencil, long dims[3]);
/** The Laplacian of that grid, as `gen laplace` writes it (gs_gen_laplace); label gets
 *  "27-point Laplacian on a 64x64x64 grid". 0, or the exit status after the message. */
int cli_grid_laplace(const long dims[3], long stencil, gs_csr_t **A, char *label, size_t len);
/** Whether argv holds `name` as an option (`name` or `name=...`). */
int cli_has_opt(int argc, char **argv, const char *name);

/** Prints "gpusolve: <message>" as one line on stderr and returns code; while cli_hold_errors
 *  is set it keeps the message in cli_held_error instead (a job of processes prints one line
 *  for all of them, apps/cli_mpi.c). */
extern int cli_hold_errors;
extern char cli_held_error[512];
int cli_fail(int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/** Exit code for a failed library status: device/runtime failures 3, everything else 2. */
int cli_status_code(gs_status_t st);
/** Reports gs_last_error() for a failed status and returns its exit code. */
int cli_fail_status(gs_status_t st);

/* ---- the arguments every subcommand treats alike ---- */

/** A subcommand's switches without a value: `name` or `alias` (may be NULL) sets *flag = 1.
 *  A list ends with a NULL name. */
typedef struct cli_switch {
  const char *name, *alias;
  int *flag;
} cli_switch_t;
/** --help / -h prints `usage` and returns 2 (the caller returns CLI_OK); a listed switch sets its
 *  flag and returns 1; the switches common to every command that reads a matrix (--strict: sets
 *  cli_strict) return 1; anything else returns 0. `sw` may be NULL. */
int cli_arg_switch(const char *a, const char *usage, const cli_switch_t *sw);
/** --strict: cli_load_matrix refuses a symmetric file with entries on both sides of the
 *  diagonal (without it: one warning line, and the pairs are summed). */
extern int cli_strict;
/** The last branch of an argument loop: an unknown option is an error naming `cmd`; otherwise `a`
 *  is positional argument number *used (of at most npos), or too many, reported with
 *  `too_many` (a format taking `a`). Returns CLI_OK or the exit code after printing. */
int cli_arg_positional(const char *cmd, const char *a, const char **pos, int npos, int *used,
                       const char *too_many);

/** Option parsing: if argv[*i] is `name` (followed by a value) or `name=value`, stores the
 *  value, advances *i past it and returns 1; a missing value is a usage error (returns -1
 *  after printing). Returns 0 when argv[*i] is another option. */
int cli_opt(int argc, char **argv, int *i, const char *name, const char **value);
/** Strict number parsing; print "invalid value 'x' for --opt" and return -1 on failure. */
int cli_parse_int(const char *opt, const char *s, long lo, long hi, long *out);
int cli_parse_double(const char *opt, const char *s, double lo, double hi, double *out);
int cli_parse_u64(const char *opt, const char *s, unsigned long long *out);

/** Loads a Matrix Market file as CSR; on failure reports and returns the exit code (2). A
 *  symmetric file with entries on both sides of the diagonal gets one warning line on stderr
 *  (refused under --strict). */
int cli_load_matrix(const char *path, gs_csr_t **A);
/** cli_load_matrix that also tells what the file held (info may be NULL). */
int cli_load_matrix_info(const char *path, gs_csr_t **A, gs_mm_info_t *info);
/** Default matrices when none is given: 27-point 3D Laplacian on 64^3 (solve's default) */
int cli_default_matrix(gs_csr_t **A, const char **label);
/** Creates the context on device 0; on failure reports and returns 3. After
 *  cli_context_prefetch, takes the context that the prefetch made (or its error). */
int cli_context(gs_context_t **ctx);
/** cli_context, waiting also for the prefetch's optional preload (cli_context_prefetch_opt)
 *  when `optional` is 1; with 0 the optional list is skipped where it has not started (an item
 *  running is finished). */
int cli_context_opt(gs_context_t **ctx, int optional);
/** Starts creating the context on a thread of its own, so that the CUDA start-up (driver,
 *  cuBLAS and cuSPARSE handles: a few hundred ms) and the loading of the kernels the command
 *  will use (gs_context_preload's list `preload`, NULL for its default) overlap the reading of
 *  the matrix. Errors wait for cli_context; nothing happens when the thread cannot start
 *  (cli_context creates). */
void cli_context_prefetch(const char *preload);
/** cli_context_prefetch, then the `optional` list (NULL or "": none) after `preload`, unless
 *  the command takes the context first without asking for it (cli_context_opt). */
void cli_context_prefetch_opt(const char *preload, const char *optional);
/** The preload list of a command that runs `format` (NULL or "auto": the selection's
 *  candidates; "all": every format) and preconditioner `precond` (NULL or "none": none;
 *  "auto": amg, the solve's escalation), into buf. */
const char *cli_preload_list(char *buf, size_t len, const char *format, const char *precond);
/** Joins a prefetch that no cli_context took (a command that failed before it) and destroys
 *  its context: called once before the program returns. */
void cli_context_discard(void);

/** Wall-clock seconds (monotonic): gs_wall_seconds(). */
double cli_now(void);

/* ---- a small JSON writer (one document on stdout) ----------------------------------- */
typedef struct cli_json {
  FILE *f;
  int depth;
  int first[32]; /* at each depth: no member written yet */
} cli_json_t;

void json_begin(cli_json_t *j, FILE *f);            /* starts the top-level object */
void json_end(cli_json_t *j);                       /* closes it, newline */
void json_begin_array(cli_json_t *j, FILE *f);      /* a top-level array instead */
void json_end_array(cli_json_t *j);
void json_key(cli_json_t *j, const char *key);      /* inside an object */
void json_obj_begin(cli_json_t *j, const char *key);/* key may be NULL inside arrays */
void json_obj_end(cli_json_t *j);
void json_arr_begin(cli_json_t *j, const char *key);
void json_arr_end(cli_json_t *j);
void json_str(cli_json_t *j, const char *key, const char *v); /* v NULL -> null */
void json_num(cli_json_t *j, const char *key, double v);      /* non-finite -> null */
/** The reordering's keys of a solve or spmv document: "reorder" (what ran: none when R is
 *  NULL), and with R its time, the bandwidth and x lines before and after, and its note. */
void cli_json_reorder(cli_json_t *j, const gs_reorder_t *R, const gs_reorder_info_t *info);
void json_int(cli_json_t *j, const char *key, long long v);
void json_bool(cli_json_t *j, const char *key, int v);

#endif
