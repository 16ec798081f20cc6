/* apps/solve_opts.c: one parser for the solve options of solve, solve --gpus and batch --solve
 * (apps/solve_opts.h): the options each command takes, their bounds, and the names checked
 * against the library's lists. */
#include "apps/solve_opts.h"

#include <stdio.h>
#include <string.h>

#include "apps/cli.h"

/* What each command takes. */
enum {
  T_METHOD = 1u << 0,   /* --solver NAME (batch: --solve NAME) */
  T_PRECOND = 1u << 1,  /* --precond NAME */
  T_PC_OPTS = 1u << 2,  /* --precond-opt KEY=VALUE, --amg-format NAME */
  T_TOL = 1u << 3,      /* --rtol, --atol, --maxit */
  T_RESTART = 1u << 4,  /* --restart */
  T_CHECK = 1u << 5,    /* --check-every */
  T_GRAPHS = 1u << 6,   /* --graphs */
  T_PERSIST = 1u << 7,  /* --persistent */
  T_PREC = 1u << 8,     /* --precision, --inner-rtol, --max-outer, --reliable-delta */
  T_JACOBI = 1u << 9,   /* --jacobi (= --precond jacobi) */
  T_REORDER = 1u << 10  /* --reorder none|rcm|degree|auto */
};
static const unsigned takes[] = {
  [CLI_SOLVE_ONE] = T_METHOD | T_PRECOND | T_PC_OPTS | T_TOL | T_RESTART | T_CHECK | T_GRAPHS |
                    T_PERSIST | T_PREC | T_REORDER,
  [CLI_SOLVE_DIST] = T_METHOD | T_PRECOND | T_TOL | T_RESTART | T_CHECK | T_GRAPHS | T_REORDER,
  [CLI_SOLVE_BATCH] = T_METHOD | T_PRECOND | T_PC_OPTS | T_TOL | T_RESTART | T_JACOBI | T_REORDER,
};
static const char *const cmd_name[] = {"solve", "solve", "batch"};

static const char *method_opt(cli_solve_cmd_t cmd)
{
  return cmd == CLI_SOLVE_BATCH ? "--solve" : "--solver";
}

/* Whether cmd's solver runs method m: --gpus every method without A^T (gs_dist_solve), the
 * batched solver cg, bicgstab and gmres (gs_batch_solve). */
static int method_ok(cli_solve_cmd_t cmd, int m)
{
  switch (cmd) {
  case CLI_SOLVE_DIST: return !(gs_method_flags((gs_method_t)m) & GS_METHOD_TRANSPOSE);
  case CLI_SOLVE_BATCH:
    return m == GS_SOLVER_CG || m == GS_SOLVER_BICGSTAB || m == GS_SOLVER_GMRES;
  default: return 1;
  }
}

/* Whether cmd takes the registry's preconditioner `name`: --gpus one on each rank's block (amg
 * has no distributed setup), the batched solver those it has (gs_batch_precond_find). */
static int precond_ok(cli_solve_cmd_t cmd, const char *name)
{
  switch (cmd) {
  case CLI_SOLVE_DIST: return strcmp(name, "amg") != 0;
  case CLI_SOLVE_BATCH: return gs_batch_precond_find(name) >= 0;
  default: return 1;
  }
}

/* Appends "a, b, c or d" style items: call with k = 0, 1, ... and last set on the final one. */
static void list_add(char *buf, size_t len, int k, int last, const char *item)
{
  const size_t used = strlen(buf);
  if (used + 1 >= len) return;
  snprintf(buf + used, len - used, "%s%s", k == 0 ? "" : last ? " or " : ", ", item);
}

const char *cli_solve_method_list(cli_solve_cmd_t cmd, char *buf, size_t len)
{
  const char *names[64];
  int n = 0;
  /* the library's methods in its order, auto last */
  for (int m = 0; n < 63 && strcmp(gs_method_string((gs_method_t)m), "unknown") != 0; ++m)
    if (m != GS_SOLVER_AUTO && method_ok(cmd, m)) names[n++] = gs_method_string((gs_method_t)m);
  if (method_ok(cmd, GS_SOLVER_AUTO)) names[n++] = "auto";
  if (len) buf[0] = '\0';
  for (int k = 0; k < n; ++k) list_add(buf, len, k, k == n - 1, names[k]);
  return buf;
}

const char *cli_solve_precond_list(cli_solve_cmd_t cmd, char *buf, size_t len)
{
  const int np = gs_precond_count();
  int n = 0, total = cmd == CLI_SOLVE_BATCH ? 0 : 1; /* auto: one GPU's default, none with --gpus */
  for (int i = 0; i < np; ++i) total += precond_ok(cmd, gs_precond_name_at(i));
  if (len) buf[0] = '\0';
  if (cmd != CLI_SOLVE_BATCH) {
    list_add(buf, len, n, n == total - 1, "auto");
    ++n;
  }
  for (int i = 0; i < np; ++i) {
    if (!precond_ok(cmd, gs_precond_name_at(i))) continue;
    list_add(buf, len, n, n == total - 1, gs_precond_name_at(i));
    ++n;
  }
  return buf;
}

const char *cli_solve_help(char *out, size_t len, const char *text, cli_solve_cmd_t cmd)
{
  char methods[512], preconds[512];
  cli_solve_method_list(cmd, methods, sizeof methods);
  cli_solve_precond_list(cmd, preconds, sizeof preconds);
  size_t n = 0, col = 0;
  if (!len) return out;
  for (const char *p = text; *p && n + 1 < len;) {
    const char *item = !strncmp(p, "@METHODS@", 9) ? methods
                       : !strncmp(p, "@PRECONDS@", 10) ? preconds : NULL;
    if (!item) {
      col = *p == '\n' ? 0 : col + 1;
      out[n++] = *p++;
      continue;
    }
    p += item == methods ? 9 : 10;
    /* the list's words, wrapped at column 90 under the column where the list starts */
    const size_t indent = col < 40 ? col : 20;
    for (const char *w = item; *w && n + 1 < len;) {
      const size_t wl = strcspn(w, " ");
      if (col + wl > 90 && col > indent) {
        n += (size_t)snprintf(out + n, len - n, "\n%*s", (int)indent, "");
        col = indent;
      }
      for (size_t k = 0; k < wl && n + 1 < len; ++k, ++col) out[n++] = w[k];
      w += wl;
      if (*w == ' ' && n + 1 < len) {
        out[n++] = ' ';
        ++col;
        ++w;
      }
    }
    if (n >= len) n = len - 1;
  }
  out[n < len ? n : len - 1] = '\0';
  return out;
}

void cli_solve_opts_init(cli_solve_opts_t *s, cli_solve_cmd_t cmd)
{
  memset(s, 0, sizeof *s);
  s->cmd = cmd;
  gs_solve_opts_default(&s->o);
  gs_refine_opts_default(&s->refine);
  s->precond = cmd == CLI_SOLVE_ONE ? "auto" : "none";
  s->precision = "double";
}

/* A bad value: its line, and -1 for cli_solve_opt's caller. */
#define BAD(...) (cli_fail(CLI_BAD_INPUT, __VA_ARGS__), -1)

static int on_off(const char *opt, const char *v, int *out)
{
  if (!strcmp(v, "on")) *out = 1;
  else if (!strcmp(v, "off")) *out = 0;
  else return BAD("invalid value '%s' for %s (on or off)", v, opt);
  return 0;
}

int cli_solve_opt(cli_solve_opts_t *s, int argc, char **argv, int *i)
{
  const unsigned t = takes[s->cmd];
  const char *a = argv[*i], *v = NULL;
  long l = 0;
  int r = 0;
  if ((t & T_JACOBI) && !strcmp(a, "--jacobi")) {
    s->precond = "jacobi";
    s->jacobi_given = 1;
    if (!s->first_given) s->first_given = a;
    return 1;
  }
  /* the option argv[*i] names when the command takes it: 1 (value in v), 0, or -1 (no value) */
#define OPT(mask, name) ((t & (mask)) && (r = cli_opt(argc, argv, i, (name), &v)) != 0)
  if (OPT(T_METHOD, method_opt(s->cmd))) {
    if (r > 0) s->solver = v;
    return r;
  }
  if (OPT(T_PRECOND, "--precond")) {
    if (r > 0) s->precond = v;
  } else if (OPT(T_PC_OPTS, "--precond-opt") ||
             (s->cmd != CLI_SOLVE_BATCH && OPT(T_PC_OPTS, "--amg-format"))) {
    if (r < 0) return -1;
    const int fmt = !strncmp(a, "--amg-format", 12);
    const size_t used = strlen(s->precond_opts), room = sizeof s->precond_opts - used;
    if ((size_t)snprintf(s->precond_opts + used, room, "%s%s%s", used ? "," : "",
                         fmt ? "amg.format=" : "", v) >= room)
      return BAD("too many preconditioner options (at most %zu characters)",
                 sizeof s->precond_opts - 1);
    s->amg_format_given |= fmt;
  } else if (OPT(T_TOL, "--rtol")) {
    if (r > 0 && cli_parse_double("--rtol", v, 0.0, CLI_RTOL_MAX, &s->o.rtol)) r = -1;
  } else if (OPT(T_TOL, "--atol")) {
    if (r > 0 && cli_parse_double("--atol", v, 0.0, CLI_ATOL_MAX, &s->o.atol)) r = -1;
  } else if (OPT(T_TOL, "--maxit")) {
    if (r > 0 && cli_parse_int("--maxit", v, 0, CLI_MAXIT_MAX, &l)) r = -1;
    s->o.maxit = (int)l;
  } else if (OPT(T_RESTART, "--restart")) {
    if (r > 0 && cli_parse_int("--restart", v, 1, CLI_RESTART_MAX, &l)) r = -1;
    s->o.restart = (int)l;
  } else if (OPT(T_CHECK, "--check-every")) {
    if (r > 0 && strcmp(v, "auto") != 0 &&
        cli_parse_int("--check-every", v, 1, CLI_CHECK_EVERY_MAX, &l))
      r = -1;
    s->o.check_every = (int)l; /* 0: auto */
    s->check_every_given = 1;
  } else if (OPT(T_GRAPHS, "--graphs")) {
    if (r > 0 && on_off("--graphs", v, &s->o.graphs)) r = -1;
  } else if (OPT(T_PERSIST, "--persistent")) {
    if (r < 0) return -1;
    if (!strcmp(v, "on")) s->o.persistent = GS_PERSISTENT_ON;
    else if (!strcmp(v, "off")) s->o.persistent = GS_PERSISTENT_OFF;
    else if (!strcmp(v, "auto")) s->o.persistent = GS_PERSISTENT_AUTO;
    else return BAD("invalid value '%s' for --persistent (on, off or auto)", v);
  } else if (OPT(T_PREC, "--precision")) {
    if (r < 0) return -1;
    if (!strcmp(v, "float")) /* a precision of the products, but not of a solve */
      return BAD("solve: --precision float is for spmv and check (float vectors); solve takes "
                 "double, mixed or mixed-refine");
    if (strcmp(v, "double") && strcmp(v, "mixed") && strcmp(v, "mixed-refine"))
      return BAD("invalid value '%s' for --precision (double, mixed or mixed-refine)", v);
    s->precision = v;
  } else if (OPT(T_REORDER, "--reorder")) {
    if (r < 0) return -1;
    const int k = gs_reorder_find(v);
    if (k < 0) return BAD("invalid value '%s' for --reorder (none, rcm, degree or auto)", v);
    s->reorder = k;
  } else if (OPT(T_PREC, "--inner-rtol")) {
    if (r > 0 && cli_parse_double("--inner-rtol", v, 1e-300, 0.999, &s->refine.inner_rtol))
      r = -1;
    s->refine_given = 1;
  } else if (OPT(T_PREC, "--max-outer")) {
    if (r > 0 && cli_parse_int("--max-outer", v, 1, 1000000, &l)) r = -1;
    s->refine.max_outer = (int)l;
    s->refine_given = 1;
  } else if (OPT(T_PREC, "--reliable-delta")) {
    if (r > 0 && cli_parse_double("--reliable-delta", v, 0.0, 0.999, &s->refine.reliable_delta))
      r = -1;
    s->refine_given = 1;
  }
#undef OPT
  if (r > 0 && !s->first_given) s->first_given = a; /* batch: refused without --solve */
  return r;
}

int cli_solve_opts_finish(cli_solve_opts_t *s)
{
  const char *cmd = cmd_name[s->cmd], *mopt = method_opt(s->cmd);
  char list[512];
  if (s->cmd == CLI_SOLVE_BATCH && !s->solver) { /* no solve: its options would do nothing */
    if (s->first_given) {
      char opt[64];
      snprintf(opt, sizeof opt, "%.*s", (int)strcspn(s->first_given, "="), s->first_given);
      return cli_fail(CLI_BAD_INPUT, "batch: %s goes with --solve METHOD (%s)", opt,
                      cli_solve_method_list(s->cmd, list, sizeof list));
    }
    return CLI_OK;
  }

  /* the method, by the library's name */
  const char *m_name = s->solver ? s->solver : "auto";
  const int m = gs_method_find(m_name);
  if (m < 0)
    return cli_fail(CLI_BAD_INPUT, "%s: unknown solver '%s' for %s (%s)", cmd, m_name, mopt,
                    cli_solve_method_list(s->cmd, list, sizeof list));
  if (!method_ok(s->cmd, m)) {
    cli_solve_method_list(s->cmd, list, sizeof list);
    if (s->cmd == CLI_SOLVE_DIST)
      return cli_fail(CLI_BAD_INPUT, "solve: %s %s is not distributed: it needs A^T x (with "
                      "--gpus: %s)", mopt, m_name, list);
    return cli_fail(CLI_BAD_INPUT, "%s: %s %s: the batched solver runs %s", cmd, mopt, m_name,
                    list);
  }
  s->o.method = (gs_method_t)m;

  /* batch's --jacobi is --precond jacobi: another --precond contradicts it */
  if (s->jacobi_given && strcmp(s->precond, "jacobi") != 0)
    return cli_fail(CLI_BAD_INPUT, "%s: --jacobi (--precond jacobi) contradicts --precond %s", cmd,
                    s->precond);

  /* the preconditioner: auto (one GPU; none with --gpus) or one of the registry's */
  const int pc_auto = !strcmp(s->precond, "auto") && s->cmd != CLI_SOLVE_BATCH;
  if (!pc_auto && gs_precond_find(s->precond) < 0)
    return cli_fail(CLI_BAD_INPUT, "%s: unknown preconditioner '%s' for --precond (%s)", cmd,
                    s->precond, cli_solve_precond_list(s->cmd, list, sizeof list));
  if (!pc_auto && !precond_ok(s->cmd, s->precond)) {
    cli_solve_precond_list(s->cmd, list, sizeof list);
    if (s->cmd == CLI_SOLVE_DIST)
      return cli_fail(CLI_BAD_INPUT, "solve: --precond %s has no distributed setup yet: with "
                      "--gpus take %s (on each rank's block), or solve on one GPU", s->precond,
                      list);
    return cli_fail(CLI_BAD_INPUT, "%s: --precond %s: the batched solver takes %s", cmd,
                    s->precond, list);
  }
  if (pc_auto && s->cmd == CLI_SOLVE_DIST) s->precond = "none"; /* one GPU escalates, not --gpus */

  /* its options, checked by the library (auto: amg's, for an escalation) */
  if (*s->precond_opts && !strcmp(s->precond, "none"))
    return cli_fail(CLI_BAD_INPUT, "%s: --precond-opt and --amg-format set options of a "
                    "preconditioner: name one with --precond", cmd);
  if (s->amg_format_given && strcmp(s->precond, "amg") != 0 && !pc_auto)
    return cli_fail(CLI_BAD_INPUT, "%s: --amg-format goes with --precond amg (or auto)", cmd);
  if (*s->precond_opts &&
      gs_precond_options_check(pc_auto ? "amg" : s->precond, s->precond_opts) != GS_SUCCESS)
    return cli_fail(CLI_BAD_INPUT, "%s: %s", cmd, gs_last_error());

  /* precision and the refinement's options */
  s->prec = !strcmp(s->precision, "mixed") ? CLI_PREC_MIXED
            : !strcmp(s->precision, "mixed-refine") ? CLI_PREC_REFINE : CLI_PREC_DOUBLE;
  if (s->refine_given && s->prec != CLI_PREC_REFINE)
    return cli_fail(CLI_BAD_INPUT, "%s: --inner-rtol, --max-outer and --reliable-delta go with "
                    "--precision mixed-refine", cmd);
  if (s->prec == CLI_PREC_REFINE && m != GS_SOLVER_AUTO &&
      (gs_method_flags((gs_method_t)m) & GS_METHOD_LEAST_SQUARES))
    return cli_fail(CLI_BAD_INPUT, "%s: --precision mixed-refine refines square systems A x = "
                    "b; %s is a least-squares method", cmd, m_name);

  /* the batched solver's systems are small and solved as given: no ordering to apply */
  if (s->cmd == CLI_SOLVE_BATCH && s->reorder != GS_REORDER_NONE)
    return cli_fail(CLI_BAD_INPUT, "batch: --reorder %s: the batched solver solves each "
                    "system as given (--reorder none)",
                    gs_reorder_string((gs_reorder_kind_t)s->reorder));

  /* A stop test that nothing meets: every solve would run to --maxit and report failure (the
   * library allows it, for fixed-count runs such as bench/persist_bench and --steady) */
  if (s->o.rtol == 0.0 && s->o.atol == 0.0)
    return cli_fail(CLI_BAD_INPUT, "%s: a solve with --rtol 0 and --atol 0 cannot converge (it "
                    "stops only at --maxit, as not converged); give a positive --rtol or --atol",
                    cmd);
  return CLI_OK;
}
