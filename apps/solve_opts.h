/* apps/solve_opts.h: the solve options of `solve` (one GPU), `solve --gpus` / `--distributed`
 * (apps/cmd_dist.c) and `batch --solve` (apps/cmd_batch.c), parsed in one place into the
 * library's gs_solve_opts_t: one bound per option, the same one-line message naming the option
 * in every command, the method and preconditioner names checked against the library's lists
 * (gs_method_string, gs_precond_name_at: a new one needs no change here) and the option strings
 * through the library's own checks (docs/cli.md "Solve options"). */
#ifndef GS_APPS_SOLVE_OPTS_H
#define GS_APPS_SOLVE_OPTS_H

#include "gpusolve.h"

/** The command that parses: which options it takes and what its solver runs. */
typedef enum cli_solve_cmd {
  CLI_SOLVE_ONE,  /* solve on one GPU: every option, method and preconditioner; precond auto */
  CLI_SOLVE_DIST, /* --gpus / --distributed: methods without A^T, a preconditioner per rank
                     block (not amg), precond none by default; no --persistent, --precision,
                     --precond-opt */
  CLI_SOLVE_BATCH /* batch --solve METHOD: cg, bicgstab or gmres (--restart), the batched
                     preconditioners (none, jacobi or --jacobi, block-jacobi, ilu0; --precond-opt),
                     --rtol, --atol, --maxit */
} cli_solve_cmd_t;

/* --precision of solve */
enum { CLI_PREC_DOUBLE, CLI_PREC_MIXED, CLI_PREC_REFINE };

/* The bounds (inclusive), one per option for every command. */
#define CLI_RTOL_MAX 1.0       /* a relative tolerance above 1 asks for less than x = 0 gives */
#define CLI_ATOL_MAX 1e300     /* finite */
#define CLI_MAXIT_MAX 2147483647L
#define CLI_RESTART_MAX 10000L /* GMRES(m) keeps m + 1 vectors of n and an (m + 1) x m matrix */
#define CLI_CHECK_EVERY_MAX 1000000L

typedef struct cli_solve_opts {
  cli_solve_cmd_t cmd;
  /* method (resolved by cli_solve_opts_finish; GS_SOLVER_AUTO for auto), rtol, atol, maxit,
   * restart, check_every (0: automatic), graphs, persistent; the rest at the defaults */
  gs_solve_opts_t o;
  const char *solver;       /* the method's name as given (--solver; batch: --solve), or NULL */
  const char *precond;      /* --precond as given, else the command's default ("auto" on one
                               GPU, "none" otherwise); after finish, DIST's "auto" is "none" */
  char precond_opts[1024];  /* --precond-opt values and --amg-format as amg.format=, joined */
  int amg_format_given;
  int check_every_given;    /* --check-every K or auto was given */
  const char *precision;    /* --precision: "double" (default), "mixed", "mixed-refine" */
  int prec;                 /* CLI_PREC_* of it (after finish) */
  gs_refine_opts_t refine;  /* --inner-rtol, --max-outer, --reliable-delta */
  int refine_given;         /* one of them was given (they need mixed-refine) */
  int reorder;              /* --reorder: GS_REORDER_* (default none; batch: none only; --gpus:
                               the partitioner's ordering, gs_dist_matrix_opts_t.reorder) */
  const char *first_given;  /* the first option parsed here (batch: refused without --solve) */
  int jacobi_given;         /* batch: --jacobi was given */
} cli_solve_opts_t;

/** The command's defaults: the library's (gs_solve_opts_default, gs_refine_opts_default). */
void cli_solve_opts_init(cli_solve_opts_t *s, cli_solve_cmd_t cmd);

/** If argv[*i] is a solve option that s->cmd takes, parses it (and its value, advancing *i)
 *  and returns 1; a bad or missing value prints one line and returns -1 (exit status 2); any
 *  other argument returns 0 (the command's own, or unknown to it). */
int cli_solve_opt(cli_solve_opts_t *s, int argc, char **argv, int *i);

/** After the arguments: resolves the method and the preconditioner by name (s->o.method),
 *  checks the preconditioner's options through the library, what goes together (--rtol 0 with
 *  --atol 0, the mixed-refine options, batch's options without --solve), before any loading.
 *  CLI_OK, or the exit status (2) after one line. */
int cli_solve_opts_finish(cli_solve_opts_t *s);

/** The methods s->cmd runs, for help and messages: "cg, bicgstab, ... or auto" (from the
 *  library's list), written into buf. */
const char *cli_solve_method_list(cli_solve_cmd_t cmd, char *buf, size_t len);
/** The preconditioners s->cmd takes (the registry's, auto first on one GPU), likewise. */
const char *cli_solve_precond_list(cli_solve_cmd_t cmd, char *buf, size_t len);

/** Copies a command's help `text` into out with @METHODS@ and @PRECONDS@ replaced by those
 *  lists (wrapped at 90 columns, continuation lines under the list's first word): help that
 *  follows the library. */
const char *cli_solve_help(char *out, size_t len, const char *text, cli_solve_cmd_t cmd);

#endif
